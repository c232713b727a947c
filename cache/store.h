/*
** store.h -- the cache engine: a byte-bounded, segmented-LRU, TTL store of
** items and pages, with generation tags for invalidation.  Internal to
** cache/ (cache.c wraps one process-wide store; tests make their own).
**
** Every function takes the time `now` (seconds, any monotonic origin) from
** its caller, so tests control time instead of sleeping.  Functions named
** do_* expect the store's lock held; the others take it.
*/
#ifndef DDBC_STORE_H
#define DDBC_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "../client/ddb_client.h"
#include "ddb_cache.h" /* ddbc_item_view */

typedef struct ddbc_store ddbc_store;

/* A generation tag: any bytes. */
typedef struct ddbc_tag {
  const char *p;
  size_t len;
} ddbc_tag;

typedef struct ddbc_store_stats {
  uint64_t item_hits, item_misses;
  uint64_t query_hits, query_misses;
  uint64_t evictions;   /* entries dropped to stay within the budget */
  uint64_t expirations; /* entries dropped because their TTL ran out */
  uint64_t stale;       /* query entries dropped because a write changed
                           their partition (or an item fill refused) */
  uint64_t entries;
  uint64_t bytes;
  uint64_t bytes_max;
} ddbc_store_stats;

/* How a packed store packs items (ddb_item_packed_size, ddb_item_pack,
** ddb_item_unpack of client/item.c: see ddb_client.h). */
typedef struct ddbc_item_codec {
  size_t (*packed_size)(const ddb_item *it);
  void (*pack)(const ddb_item *it, unsigned char *out);
  ddb_item *(*unpack)(const unsigned char *p, size_t n);
  /* the JSON of a packed item (malloc()ed, NUL-terminated, *len bytes),
  ** NULL when it cannot be had; a NULL to_json: the store keeps no JSON
  ** (ddbc_store_peek_item_view then misses when asked for it) */
  char *(*to_json)(const unsigned char *p, size_t n, size_t *len);
} ddbc_item_codec;

/* The to_json of cache.c's codec: the packed item unpacked, rendered by
** ddb_item_to_json (the item column's JSON, as ext/ renders it). */
char *ddbc_packed_json(const unsigned char *p, size_t n, size_t *len);

/* Create a store holding at most bytes_max bytes, which keeps a reference
** to each item stored (what the tests use).  Returns NULL on OOM. */
ddbc_store *ddbc_store_create(size_t bytes_max);
/* Create a store that keeps each item packed by codec inside its entry
** (one allocation, about a third of the item's ddb_item) and unpacks a new
** item for each hit (what cache.c uses).  Returns NULL on OOM. */
ddbc_store *ddbc_store_create_packed(size_t bytes_max,
                                     const ddbc_item_codec *codec);
/* Free the store and drop every entry (their references are released). */
void ddbc_store_release(ddbc_store *s);
/* Drop every entry; statistics other than entries/bytes are kept. */
void ddbc_store_empty(ddbc_store *s);
/* Drop every entry and move every generation (a new epoch): fills of
** reads in flight are refused, as after a bump of their tags. */
void ddbc_store_forget(ddbc_store *s);
/* Take / release s's lock, for fork(): between the two no other thread is
** inside s, so a child of fork() gets it whole and unlocked. */
void ddbc_store_lock(ddbc_store *s);
void ddbc_store_unlock(ddbc_store *s);
/* Drop every entry whose key match(key, key_len, ctx) says yes to (called
** with the store's lock held: match must not call into s).  Returns how
** many were dropped. */
size_t ddbc_store_drop_if(ddbc_store *s,
                          int (*match)(const char *key, size_t key_len,
                                       void *ctx),
                          void *ctx);
/* Set the byte budget, evicting as needed.  Returns the old budget. */
size_t ddbc_store_set_budget(ddbc_store *s, size_t bytes_max);
void ddbc_store_stats_get(ddbc_store *s, ddbc_store_stats *out);

/* The current generation of tag.  Capture it before sending a request
** whose answer will be stored under that tag. */
uint64_t ddbc_store_gen(ddbc_store *s, const char *tag, size_t tag_len);
/* Invalidate tag: every page stored under it becomes stale, and fills that
** captured an older generation are refused.  Returns the new generation. */
uint64_t ddbc_store_bump(ddbc_store *s, const char *tag, size_t tag_len);

/*
** Items.  Key and tag are the same string: the item's canonical key.
**
** ddbc_store_get_item: 1 on a hit (*out is a new reference, or NULL for a
** cached "no such item"; in a packed store a new item, equal to the one
** stored), 0 on a miss (an expired entry is dropped; in a packed store
** also when unpacking ran out of memory).  An
** entry stored max_age seconds ago or earlier is a miss too (the reader's
** own TTL: a reader with a short TTL must not take what a reader with a
** long one stored long ago); it stays for other readers.
** ddbc_store_fill_item: store what a read returned (item may be NULL),
** unless the key's generation moved since `gen` was captured (a write
** completed meanwhile).  Takes its own reference (a packed store: its
** own packed copy).
** ddbc_store_write_item: a write through this process completed with
** this result (NULL: deleted): bump the key's generation and store it.
*/
int ddbc_store_get_item(ddbc_store *s, const char *key, size_t key_len,
                        double now, double max_age, ddb_item **out);
/* As ddbc_store_get_item, with *age (unless NULL) set on a hit to how long
** ago (in now's seconds) the entry was stored: the answer's age. */
int ddbc_store_get_item_age(ddbc_store *s, const char *key, size_t key_len,
                            double now, double max_age, ddb_item **out,
                            double *age);
/* As ddbc_store_get_item_age, but a miss is not counted (the caller goes
** on to a lookup that counts it). */
int ddbc_store_peek_item_age(ddbc_store *s, const char *key, size_t key_len,
                             double now, double max_age, ddb_item **out,
                             double *age);
/* As ddbc_store_peek_item_age, the entry copied into the caller's *v
** (ddb_cache.h) instead of unpacked: its packed item, and with want
** DDBC_VIEW_JSON its JSON, rendered at the entry's first such hit and
** kept in it (the entry grows; its charge too).  A store that does not
** pack (ddbc_store_create) answers 0, as when v's buffers cannot grow. */
int ddbc_store_peek_item_view(ddbc_store *s, const char *key, size_t key_len,
                              double now, double max_age, int want,
                              ddbc_item_view *v, double *age);
void ddbc_store_fill_item(ddbc_store *s, const char *key, size_t key_len,
                          ddb_item *item, uint64_t gen, double now,
                          double ttl);
void ddbc_store_write_item(ddbc_store *s, const char *key, size_t key_len,
                           ddb_item *item, double now, double ttl);
/* The writes of one call completed: bump tags[0..n_tags), then do
** ddbc_store_write_item for keys[i] and items[i] (i < n), all under one
** hold of the lock. */
void ddbc_store_note_writes(ddbc_store *s, const ddbc_tag *tags, size_t n_tags,
                            const ddbc_tag *keys, ddb_item *const *items,
                            size_t n, double now, double ttl);

/*
** Pages of Query/Scan results, keyed by the canonical request and tagged
** with two tags (what the page read: its partition, or the table's scans;
** and the whole table).  A page is a hit only while both tags keep the
** generations captured before its request, and (as for items) younger
** than max_age.  A value larger than
** 1/DDBC_MAX_SHARE of the budget is not stored.
*/
int ddbc_store_get_page(ddbc_store *s, const char *key, size_t key_len,
                        double now, double max_age, ddb_page **out);
/* ddbc_store_get_page, with *age (unless NULL) the page's age on a hit. */
int ddbc_store_get_page_age(ddbc_store *s, const char *key, size_t key_len,
                            double now, double max_age, ddb_page **out,
                            double *age);
void ddbc_store_fill_page(ddbc_store *s, const char *key, size_t key_len,
                          const ddbc_tag tags[2], const uint64_t gens[2],
                          ddb_page *page, double now, double ttl);

/* The largest value stored, as a fraction of the budget. */
#define DDBC_MAX_SHARE 8
/* Fraction (in percent) of the budget the protected segment may hold. */
#define DDBC_PROTECTED_SHARE 80
/* Entries examined at each list tail for expiry on every fill. */
#define DDBC_SWEEP 4
/* Tags remembered before the table is reset with a new epoch. */
#define DDBC_MAX_TAGS 65536

/*
** Hooks for tests and bench/ (not used by cache.c).
**
** ddbc_store_check: verify the store's invariants (both lists well linked
** and holding every entry of the hash exactly once, each segment's byte
** count the sum of its entries' charges, bytes the sum of both, entries
** the count, bytes <= bytes_max).  Returns NULL when they hold, else a
** static string naming the first that does not.
** ddbc_store_order: call fn(key, key_len, charge, ctx) for each entry of
** segment seg (0 probation, 1 protected), from the head (most recently
** used) to the tail; returns how many.
** ddbc_store_set_segmented: 1 (the default) segmented LRU; 0 plain LRU (a
** hit moves the entry to the head of the probation list, which is then
** the only list), to measure what the segments buy.
*/
const char *ddbc_store_check(ddbc_store *s);
size_t ddbc_store_order(ddbc_store *s, int seg,
                        void (*fn)(const char *key, size_t key_len,
                                   size_t charge, void *ctx),
                        void *ctx);
void ddbc_store_set_segmented(ddbc_store *s, int on);

#endif
