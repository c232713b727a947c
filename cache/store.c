/*
** store.c -- the cache engine (see store.h for the interface).
**
** Entries live in one hash table (uthash, keyed by the canonical key) and
** on one of two LRU lists, a segmented LRU:
**
**   probation  every new entry starts here, at the head;
**   protected  an entry moves here (to the head) when it is hit.
**
** Eviction takes the probation tail first, and the protected tail only
** when probation is empty.  Protected may hold at most
** DDBC_PROTECTED_SHARE of the budget; past that its tail is demoted to the
** probation head.  So a full-table Scan, whose pages are each read once,
** churns through probation and cannot flush the items a workload keeps
** hitting: those sit in protected.  Within each list the order is plain
** LRU.
**
** Expiry is lazy: a lookup that finds an expired entry drops it and
** misses.  Each fill also looks at DDBC_SWEEP entries at each tail and
** drops those that expired, so dead entries do not wait for the budget to
** push them out.
**
** Invalidation uses generations.  A tag (an item's key, or a partition of
** a table or index) has a generation: the store's counter at its last
** bump, or the epoch for tags never bumped.  Pages remember the generation
** of their tag captured before their request was sent, and are stale once
** it moved; item fills are refused when it moved, so a read that raced
** with a write never overwrites the write's result.  The tag table is
** bounded: past DDBC_MAX_TAGS it is cleared and the epoch moves, which
** makes every page stale at once (rare and safe).
**
** All byte counts are real allocation sizes: the entry with its key and
** tag, plus the item or page it holds (an item shared by several pages is
** counted in each: the budget errs on the safe side).
*/
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

/* uthash doubles its buckets when one chain reaches this length.  Its
** default (10) leaves about 3 entries per bucket: at 20,000 entries a hit
** walks 2.2 entries on average, each one a cache miss.  At 6 the table
** keeps 1.6 to 2.6 buckets per entry (16 bytes each) and a hit walks
** 1.2 to 1.3 entries. */
#undef HASH_BKT_CAPACITY_THRESH
#define HASH_BKT_CAPACITY_THRESH 6U

#include "store.h"

/* What malloc adds to each block, for accounting. */
#define DDBC_MALLOC_OVERHEAD 16

enum { SEG_PROBATION = 0, SEG_PROTECTED = 1 };
enum { KIND_ITEM = 1, KIND_PAGE = 2 };

typedef struct entry {
  UT_hash_handle hh;
  struct entry *prev, *next; /* in list `seg` */
  int seg;
  int kind;
  char *key; /* points just past the struct */
  size_t key_len;
  char *tag; /* pages: two tags, after the key */
  size_t tag_len[2];
  uint64_t gen[2]; /* pages: the tags' generations at fill */
  double filled;   /* when it was stored */
  double expires;  /* filled + the filler's ttl */
  size_t bytes;    /* charged to the budget */
  union {
    ddb_item *item; /* may be NULL: "no such item" */
    ddb_page *page;
  } v;
} entry;

typedef struct tag_entry {
  UT_hash_handle hh;
  uint64_t gen;
  size_t len;
  char key[]; /* the tag */
} tag_entry;

struct ddbc_store {
  pthread_mutex_t lock;
  entry *map;
  entry *head[2], *tail[2];
  size_t seg_bytes[2];
  size_t bytes, bytes_max;
  tag_entry *tags;
  size_t n_tags;
  uint64_t counter; /* last generation handed out */
  uint64_t epoch;   /* generation of tags not in the table */
  int plain_lru;    /* ddbc_store_set_segmented(s, 0): one list only */
  ddbc_store_stats st;
};

/* ------------------------------------------------------------------------
** Lists (lock held)
*/

/* Unlink e from its list. */
static void do_list_unlink(ddbc_store *s, entry *e) {
  if(e->prev)
    e->prev->next = e->next;
  else
    s->head[e->seg] = e->next;
  if(e->next)
    e->next->prev = e->prev;
  else
    s->tail[e->seg] = e->prev;
  e->prev = e->next = NULL;
  s->seg_bytes[e->seg] -= e->bytes;
  assert((s->head[e->seg] && s->tail[e->seg]) ||
         (!s->head[e->seg] && !s->tail[e->seg]));
}

/* Link e at the head of list seg. */
static void do_list_push(ddbc_store *s, entry *e, int seg) {
  e->seg = seg;
  e->prev = NULL;
  e->next = s->head[seg];
  if(s->head[seg])
    s->head[seg]->prev = e;
  s->head[seg] = e;
  if(!s->tail[seg])
    s->tail[seg] = e;
  s->seg_bytes[seg] += e->bytes;
}

/* Remove e from the store and free it, releasing its value. */
static void do_entry_free(ddbc_store *s, entry *e) {
  HASH_DELETE(hh, s->map, e);
  do_list_unlink(s, e);
  s->bytes -= e->bytes;
  s->st.entries--;
  if(e->kind == KIND_ITEM)
    ddb_item_unref(e->v.item);
  else
    ddb_page_unref(e->v.page);
  free(e);
}

/* Demote protected entries past their share, then evict until the store
** is within its budget. */
static void do_enforce_budget(ddbc_store *s) {
  size_t cap = s->bytes_max / 100 * DDBC_PROTECTED_SHARE;
  while(s->seg_bytes[SEG_PROTECTED] > cap && s->tail[SEG_PROTECTED]) {
    entry *e = s->tail[SEG_PROTECTED];
    do_list_unlink(s, e);
    do_list_push(s, e, SEG_PROBATION);
  }
  while(s->bytes > s->bytes_max) {
    entry *e = s->tail[SEG_PROBATION] ? s->tail[SEG_PROBATION]
                                      : s->tail[SEG_PROTECTED];
    if(!e)
      break;
    do_entry_free(s, e);
    s->st.evictions++;
  }
}

/* Drop up to DDBC_SWEEP expired entries from each tail. */
static void do_sweep(ddbc_store *s, double now) {
  int seg, i;
  for(seg = 0; seg < 2; seg++) {
    entry *e = s->tail[seg];
    for(i = 0; e && i < DDBC_SWEEP; i++) {
      entry *prev = e->prev;
      if(e->expires <= now) {
        do_entry_free(s, e);
        s->st.expirations++;
      }
      e = prev;
    }
  }
}

/* ------------------------------------------------------------------------
** Tags (lock held)
*/
/* The generation of tag: its last bump, or the epoch if not remembered. */
static uint64_t do_gen(ddbc_store *s, const char *tag, size_t len) {
  tag_entry *t;
  HASH_FIND(hh, s->tags, tag, len, t);
  return t ? t->gen : s->epoch;
}

/* Move tag to a new generation (remembering it, resetting the table with
** a new epoch when full) and return that generation. */
static uint64_t do_bump(ddbc_store *s, const char *tag, size_t len) {
  tag_entry *t, *tmp;
  HASH_FIND(hh, s->tags, tag, len, t);
  if(!t && s->n_tags >= DDBC_MAX_TAGS) {
    /* forget every tag: the new epoch makes all of them "moved" */
    HASH_ITER(hh, s->tags, t, tmp) {
      HASH_DELETE(hh, s->tags, t);
      free(t);
    }
    s->n_tags = 0;
    s->epoch = ++s->counter;
    t = NULL;
  }
  if(!t) {
    t = malloc(sizeof(*t) + len);
    if(!t) {
      /* cannot remember this tag: move the epoch instead (safe) */
      s->epoch = ++s->counter;
      return s->epoch;
    }
    memcpy(t->key, tag, len);
    t->len = len;
    HASH_ADD(hh, s->tags, key[0], len, t);
    s->n_tags++;
  }
  t->gen = ++s->counter;
  return t->gen;
}

/* ------------------------------------------------------------------------
** Lifecycle
*/
ddbc_store *ddbc_store_create(size_t bytes_max) {
  ddbc_store *s = calloc(1, sizeof(*s));
  if(!s)
    return NULL;
  pthread_mutex_init(&s->lock, NULL);
  s->bytes_max = bytes_max;
  s->counter = s->epoch = 1;
  return s;
}

/* Free every entry (lock held or store private). */
static void do_empty(ddbc_store *s) {
  entry *e, *tmp;
  HASH_ITER(hh, s->map, e, tmp) {
    do_entry_free(s, e);
  }
  assert(s->bytes == 0 && s->st.entries == 0);
}

void ddbc_store_empty(ddbc_store *s) {
  pthread_mutex_lock(&s->lock);
  do_empty(s);
  pthread_mutex_unlock(&s->lock);
}

void ddbc_store_forget(ddbc_store *s) {
  tag_entry *t, *tmp;
  pthread_mutex_lock(&s->lock);
  do_empty(s);
  HASH_ITER(hh, s->tags, t, tmp) {
    HASH_DELETE(hh, s->tags, t);
    free(t);
  }
  s->n_tags = 0;
  s->epoch = ++s->counter;
  pthread_mutex_unlock(&s->lock);
}

/* Take s's lock (ddbc_store_unlock releases it): for fork() only. */
void ddbc_store_lock(ddbc_store *s) {
  pthread_mutex_lock(&s->lock);
}

/* Release the lock ddbc_store_lock took. */
void ddbc_store_unlock(ddbc_store *s) {
  pthread_mutex_unlock(&s->lock);
}

void ddbc_store_release(ddbc_store *s) {
  tag_entry *t, *tmp;
  if(!s)
    return;
  do_empty(s);
  HASH_ITER(hh, s->tags, t, tmp) {
    HASH_DELETE(hh, s->tags, t);
    free(t);
  }
  pthread_mutex_destroy(&s->lock);
  free(s);
}

size_t ddbc_store_set_budget(ddbc_store *s, size_t bytes_max) {
  size_t old;
  pthread_mutex_lock(&s->lock);
  old = s->bytes_max;
  s->bytes_max = bytes_max;
  do_enforce_budget(s);
  pthread_mutex_unlock(&s->lock);
  return old;
}

void ddbc_store_stats_get(ddbc_store *s, ddbc_store_stats *out) {
  pthread_mutex_lock(&s->lock);
  *out = s->st;
  out->bytes = s->bytes;
  out->bytes_max = s->bytes_max;
  pthread_mutex_unlock(&s->lock);
}

uint64_t ddbc_store_gen(ddbc_store *s, const char *tag, size_t tag_len) {
  uint64_t g;
  pthread_mutex_lock(&s->lock);
  g = do_gen(s, tag, tag_len);
  pthread_mutex_unlock(&s->lock);
  return g;
}

uint64_t ddbc_store_bump(ddbc_store *s, const char *tag, size_t tag_len) {
  uint64_t g;
  pthread_mutex_lock(&s->lock);
  g = do_bump(s, tag, tag_len);
  pthread_mutex_unlock(&s->lock);
  return g;
}

/* ------------------------------------------------------------------------
** Lookups and fills
*/

/* Find key; drop it (and miss) when expired.  An entry older than
** max_age (the reader's own TTL; readers with different TTLs share
** entries) is a miss for this reader but stays: its fill replaces it. */
static entry *do_lookup(ddbc_store *s, const char *key, size_t len, double now,
                        double max_age) {
  entry *e;
  HASH_FIND(hh, s->map, key, len, e);
  if(!e)
    return NULL;
  if(e->expires <= now) {
    do_entry_free(s, e);
    s->st.expirations++;
    return NULL;
  }
  if(now - e->filled >= max_age)
    return NULL;
  return e;
}

/* A hit on e: move it to the head of protected (of probation when the
** store is a plain LRU), demoting protected's tail past its share. */
static void do_touch(ddbc_store *s, entry *e) {
  do_list_unlink(s, e);
  do_list_push(s, e, s->plain_lru ? SEG_PROBATION : SEG_PROTECTED);
  if(s->seg_bytes[SEG_PROTECTED] > s->bytes_max / 100 * DDBC_PROTECTED_SHARE)
    do_enforce_budget(s);
}

/* Insert a new entry for key (replacing any), charged `value_bytes`.
** Returns the entry, or NULL when it would not fit or memory ran out. */
static entry *do_insert(ddbc_store *s, const char *key, size_t key_len,
                        const ddbc_tag *tags, size_t value_bytes, double now,
                        double ttl) {
  entry *e, *old;
  size_t tag_len = tags ? tags[0].len + tags[1].len : 0;
  size_t bytes =
      sizeof(entry) + key_len + tag_len + value_bytes + DDBC_MALLOC_OVERHEAD;
  HASH_FIND(hh, s->map, key, key_len, old);
  if(old)
    do_entry_free(s, old);
  if(ttl <= 0 || bytes > s->bytes_max / DDBC_MAX_SHARE)
    return NULL;
  e = malloc(sizeof(*e) + key_len + tag_len);
  if(!e)
    return NULL;
  memset(e, 0, sizeof(*e));
  e->key = (char *)(e + 1);
  memcpy(e->key, key, key_len);
  e->key_len = key_len;
  e->tag = e->key + key_len;
  if(tags) {
    memcpy(e->tag, tags[0].p, tags[0].len);
    memcpy(e->tag + tags[0].len, tags[1].p, tags[1].len);
    e->tag_len[0] = tags[0].len;
    e->tag_len[1] = tags[1].len;
  }
  e->filled = now;
  e->expires = now + ttl;
  e->bytes = bytes;
  HASH_ADD_KEYPTR(hh, s->map, e->key, key_len, e);
  do_list_push(s, e, SEG_PROBATION);
  s->bytes += bytes;
  s->st.entries++;
  return e;
}

/* Look up an item; count a miss only when count_miss is set. */
static int get_item(ddbc_store *s, const char *key, size_t key_len, double now,
                    double max_age, ddb_item **out, int count_miss) {
  entry *e;
  int hit = 0;
  pthread_mutex_lock(&s->lock);
  e = do_lookup(s, key, key_len, now, max_age);
  if(e && e->kind == KIND_ITEM) {
    *out = ddb_item_ref(e->v.item);
    do_touch(s, e);
    s->st.item_hits++;
    hit = 1;
  } else if(count_miss) {
    s->st.item_misses++;
  }
  pthread_mutex_unlock(&s->lock);
  return hit;
}

int ddbc_store_get_item(ddbc_store *s, const char *key, size_t key_len,
                        double now, double max_age, ddb_item **out) {
  return get_item(s, key, key_len, now, max_age, out, 1);
}

int ddbc_store_peek_item(ddbc_store *s, const char *key, size_t key_len,
                         double now, double max_age, ddb_item **out) {
  return get_item(s, key, key_len, now, max_age, out, 0);
}

/* Store item (NULL: a negative entry) under key, with the lock held; a
** value that does not fit is not stored. */
static void do_put_item(ddbc_store *s, const char *key, size_t key_len,
                        ddb_item *item, double now, double ttl) {
  entry *e =
      do_insert(s, key, key_len, NULL, item ? item->bytes : 0, now, ttl);
  if(e) {
    e->kind = KIND_ITEM;
    e->v.item = ddb_item_ref(item);
    do_enforce_budget(s);
  }
}

void ddbc_store_fill_item(ddbc_store *s, const char *key, size_t key_len,
                          ddb_item *item, uint64_t gen, double now,
                          double ttl) {
  pthread_mutex_lock(&s->lock);
  if(do_gen(s, key, key_len) != gen) {
    s->st.stale++; /* a write completed while this read was in flight */
  } else {
    do_sweep(s, now);
    do_put_item(s, key, key_len, item, now, ttl);
  }
  pthread_mutex_unlock(&s->lock);
}

void ddbc_store_write_item(ddbc_store *s, const char *key, size_t key_len,
                           ddb_item *item, double now, double ttl) {
  pthread_mutex_lock(&s->lock);
  do_bump(s, key, key_len);
  do_put_item(s, key, key_len, item, now, ttl);
  pthread_mutex_unlock(&s->lock);
}

/* Has a write moved either tag of page entry e since it was filled? */
static int do_page_stale(ddbc_store *s, const entry *e) {
  return e->gen[0] != do_gen(s, e->tag, e->tag_len[0]) ||
         e->gen[1] != do_gen(s, e->tag + e->tag_len[0], e->tag_len[1]);
}

int ddbc_store_get_page(ddbc_store *s, const char *key, size_t key_len,
                        double now, double max_age, ddb_page **out) {
  entry *e;
  int hit = 0;
  pthread_mutex_lock(&s->lock);
  e = do_lookup(s, key, key_len, now, max_age);
  if(e && e->kind == KIND_PAGE && do_page_stale(s, e)) {
    do_entry_free(s, e); /* a write changed what it read */
    s->st.stale++;
    e = NULL;
  }
  if(e && e->kind == KIND_PAGE) {
    *out = ddb_page_ref(e->v.page);
    do_touch(s, e);
    s->st.query_hits++;
    hit = 1;
  } else {
    s->st.query_misses++;
  }
  pthread_mutex_unlock(&s->lock);
  return hit;
}

void ddbc_store_fill_page(ddbc_store *s, const char *key, size_t key_len,
                          const ddbc_tag tags[2], const uint64_t gens[2],
                          ddb_page *page, double now, double ttl) {
  entry *e;
  pthread_mutex_lock(&s->lock);
  if(do_gen(s, tags[0].p, tags[0].len) != gens[0] ||
     do_gen(s, tags[1].p, tags[1].len) != gens[1]) {
    s->st.stale++;
  } else {
    do_sweep(s, now);
    e = do_insert(s, key, key_len, tags, page->bytes, now, ttl);
    if(e) {
      e->kind = KIND_PAGE;
      e->gen[0] = gens[0];
      e->gen[1] = gens[1];
      e->v.page = ddb_page_ref(page);
      do_enforce_budget(s);
    }
  }
  pthread_mutex_unlock(&s->lock);
}

/* ------------------------------------------------------------------------
** Hooks for tests and bench/ (see store.h)
*/

/* Walk segment seg from head to tail checking the links; adds the
** entries' charges to *bytes and their number to *n.  Returns NULL or what
** is wrong. */
static const char *do_check_list(ddbc_store *s, int seg, size_t *bytes,
                                 size_t *n) {
  entry *e, *prev = NULL, *found;
  size_t sum = 0;
  for(e = s->head[seg]; e; prev = e, e = e->next) {
    if(e->prev != prev)
      return "a prev link is wrong";
    if(e->seg != seg)
      return "an entry is on the list of another segment";
    HASH_FIND(hh, s->map, e->key, e->key_len, found);
    if(found != e)
      return "a listed entry is not in the hash";
    sum += e->bytes;
    (*n)++;
    if(*n > HASH_COUNT(s->map))
      return "a list is longer than the hash (cycle?)";
  }
  if(s->tail[seg] != prev)
    return "a tail is not the list's last entry";
  if(sum != s->seg_bytes[seg])
    return "a segment's bytes are not the sum of its entries";
  *bytes += sum;
  return NULL;
}

const char *ddbc_store_check(ddbc_store *s) {
  const char *why = NULL;
  size_t bytes = 0, n = 0;
  pthread_mutex_lock(&s->lock);
  why = do_check_list(s, SEG_PROBATION, &bytes, &n);
  if(!why)
    why = do_check_list(s, SEG_PROTECTED, &bytes, &n);
  if(!why && n != HASH_COUNT(s->map))
    why = "the lists do not hold every entry of the hash";
  if(!why && n != s->st.entries)
    why = "entries is not the number of entries";
  if(!why && bytes != s->bytes)
    why = "bytes is not the sum of the entries' charges";
  if(!why && s->bytes > s->bytes_max)
    why = "bytes is above bytes_max";
  if(!why && s->plain_lru && s->head[SEG_PROTECTED])
    why = "a plain LRU store has protected entries";
  pthread_mutex_unlock(&s->lock);
  return why;
}

size_t ddbc_store_order(ddbc_store *s, int seg,
                        void (*fn)(const char *key, size_t key_len,
                                   size_t charge, void *ctx),
                        void *ctx) {
  entry *e;
  size_t n = 0;
  pthread_mutex_lock(&s->lock);
  for(e = s->head[seg & 1]; e; e = e->next, n++)
    fn(e->key, e->key_len, e->bytes, ctx);
  pthread_mutex_unlock(&s->lock);
  return n;
}

void ddbc_store_set_segmented(ddbc_store *s, int on) {
  pthread_mutex_lock(&s->lock);
  s->plain_lru = !on;
  pthread_mutex_unlock(&s->lock);
}
