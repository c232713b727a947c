/*
** cache_int.h -- declarations shared by the files of cache/ (and its unit
** tests), not part of its interface: ext/ and api/ write through
** cache/write.c (ddbc_put_item ...), never by calling these.
*/
#ifndef DDB_CACHE_INT_H
#define DDB_CACHE_INT_H

#include <time.h>

#include "ddb_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest cache key built (a request body is at most a few KB unless an
** ExclusiveStartKey is huge; larger requests are simply not cached). */
#define DDBC_KEY_MAX (256u * 1024)

struct ddbc_store;

/* ------------------------------------------------------------------------
** cache.c: the process's store, its keys and tags, the principals seen.
**
** ddbc_cache_store: the process-wide store, created on first use (NULL
** only on OOM).  ddbc_pinned: 1 once ddbc_pin made the library
** unloadable (its destructors then free nothing).
*/
struct ddbc_store *ddbc_cache_store(void);
int ddbc_pinned(void);

/* Keys and tags (cache.c's "Keys and tags" names their layout), each
** appended to b: ddbc_scope_head the kind, c's place and (unless
** no_principal) its principal; ddbc_key_head an entry key's head (kind,
** place, principal, table); ddbc_tag_head a tag's head (kind, place,
** table by its name, no principal); ddbc_item_key the I key of `key`
** (its key attributes names[0..n)): 0, or -1 when it cannot be built;
** ddbc_partition_tag the P tag of (table, index, partition value pk).
** ddbc_shared_tail: the part of entry key k (built for c) that the
** shared tier names, what follows kind, place and principal (*len its
** length; points into k). */
void ddbc_scope_head(ddb_buf *b, char kind, ddb_client *c, int no_principal);
void ddbc_key_head(ddb_buf *b, char kind, ddb_client *c, const char *table);
void ddbc_tag_head(ddb_buf *b, char kind, ddb_client *c, const char *table);
int ddbc_item_key(ddb_buf *b, ddb_client *c, const char *table,
                  const ddb_item *key, const char *const *names, int n);
void ddbc_partition_tag(ddb_buf *b, ddb_client *c, const char *table,
                        const char *index, const ddb_av *pk);
const char *ddbc_shared_tail(ddb_client *c, const ddb_buf *k, size_t *len);

/* Principals (cache.c's "Principals", under its seen_lock).
** ddbc_principal_seen_gens: before an item read through c is sent,
** remember c's principal (and table when an ARN: alias.c) and capture
** the generations of the n item keys keys[i][0..lens[i]) (NULL keys
** skipped) into gens, atomically with respect to the other principals'
** writes.  ddbc_drop_other_principals: a write through c of the item
** `key` of table completed: drop the item's entry of every other
** principal seen at c's place and under the table's other forms,
** bumping their generations. */
void ddbc_principal_seen_gens(struct ddbc_store *s, ddb_client *c,
                              const char *table, char *const *keys,
                              const size_t *lens, size_t n, uint64_t *gens);
void ddbc_drop_other_principals(struct ddbc_store *s, ddb_client *c,
                                const char *table, const ddb_item *key,
                                const char *const *names, int n);

/* describe.c: forget the DescribeTable answers of the table whose name
** as a part (ddb_buf_add_part) is part, at place[0..place_len), whoever
** asked (principals of principal_len bytes): dynamodb_cache_clear('t'). */
void ddbc_describe_forget(const char *place, size_t place_len,
                          size_t principal_len, const ddb_buf *part);

/* A write through this process completed (invalidate.c).  key: the item's key
** attributes; old_item: its image before (NULL if there was none), with
** old_known=0 when the old image is unknown; new_item: after (NULL if
** deleted).  Replaces the item's cache entry with new_item (pol->item_ttl
** 0: drops the entry, caches nothing) and makes stale every cached page the
** change could alter (every page of the table when old_known is 0). */
void ddbc_note_write(ddb_client *c, const ddb_table_desc *d,
                     const ddb_item *old_item, int old_known,
                     const ddb_item *new_item, const ddb_item *key,
                     const ddbc_policy *pol);

/* coherence.c: a write through c of the item `key` of table d
** completed (old_item, old_known, new_item as ddbc_note_write's): when the
** table has a stream reader, leave the write's fingerprint, so that its
** stream record does not evict what the write stored. */
void ddbc_coherence_note_write(ddb_client *c, const ddb_table_desc *d,
                               const ddb_item *key, const ddb_item *old_item,
                               int old_known, const ddb_item *new_item);
/* coherence.c: the calling thread begins a write (write.c), for
** ddbc_coherence_note_write's KEYS_ONLY rule. */
void ddbc_coherence_write_begin(void);

/* One write of a call that completed, for ddbc_note_writes: as the
** arguments of ddbc_note_write. */
typedef struct ddbc_write_note {
  const ddb_item *old_item;
  int old_known;
  const ddb_item *new_item;
  const ddb_item *key;
} ddbc_write_note;

/* The writes w[0..n) of one call completed (invalidate.c): what ddbc_note_write
** does for each, with each tag moved once for all of them (the table's,
** the partitions they share) and the store's lock taken once. */
void ddbc_note_writes(ddb_client *c, const ddb_table_desc *d,
                      const ddbc_write_note *w, size_t n,
                      const ddbc_policy *pol);

/* A call to DynamoDB named partition key pk (its table, index: NULL for
** the table itself) and cost what the arguments say: count it among the
** hot keys (hot.c). */
void ddbc_hot_note(const char *table, const char *index, const ddb_av *pk,
                   uint64_t requests, uint64_t items, double rcu, double wcu,
                   uint64_t throttled);

/* alias.c: the table ARNs read through, under cache.c's seen_lock.
** do_alias_note: remember table when it is an ARN (past DDBC_MAX_ARNS,
** forget them all and every entry of s); do_alias_others: the other forms
** of table's name (its name when table is an ARN, then the ARNs of that
** name remembered), at most max, into out (valid while the lock is held);
** returns how many; do_alias_forget: forget them all. */
#define DDBC_ALIAS_MAX 65
void do_alias_note(struct ddbc_store *s, const char *table);
int do_alias_others(const char *table, const char **out, int max);
void do_alias_forget(void);

/* A call that named only partition key pk of table (index: NULL for the
** table) went to DynamoDB, its tally t: when t counts throttling answers
** whose reasons named that table's or index's key range, mark the key
** with them (hot.c; a call of several keys, a batch, is not marked: which
** of its keys was hot the answer does not say). */
void ddbc_hot_mark(const char *table, const char *index, const ddb_av *pk,
                   const ddb_tally *t);

/* A write of table d went to DynamoDB at the cost t says (its tally):
** count its partition among the hot keys, the one item's (one), or each
** of w[0..n)'s, the capacity shared (hot.c). */
void ddbc_hot_writes(const ddb_table_desc *d, const ddb_item *one,
                     const ddb_write *w, size_t n, const ddb_tally *t);

#ifdef __cplusplus
}
#endif
/* *ts = now (CLOCK_REALTIME, as pthread_cond_timedwait and
** pthread_timedjoin_np take it) + DDB_CANCEL_POLL_MS: when a thread that
** waits for workers next looks at its caller's cancel hook (stream.c,
** fanout.c). */
static inline void ddbc_poll_deadline(struct timespec *ts) {
  clock_gettime(CLOCK_REALTIME, ts);
  ts->tv_nsec += DDB_CANCEL_POLL_MS * 1000000L;
  if(ts->tv_nsec >= 1000000000L) {
    ts->tv_sec++;
    ts->tv_nsec -= 1000000000L;
  }
}

#endif /* DDB_CACHE_INT_H */
