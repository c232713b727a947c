/*
** ddb_cache.h -- the read path between ext/ and client/.
**
** Every read the extension makes goes through these calls, so that one
** place decides whether a request is answered from memory or sent to
** DynamoDB.  The functions take the same arguments as their client/
** counterparts plus a ddbc_policy saying how stale an answer may be.
**
** Ownership is as in client/: every item or page handed out is a new
** reference the caller releases with ddb_item_unref()/ddb_page_unref().
*/
#ifndef DDB_CACHE_H
#define DDB_CACHE_H

#include "../client/ddb_client.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a read may be served. */
typedef struct ddbc_policy {
  int consistent;   /* 1: ConsistentRead=true, never from the cache */
  double item_ttl;  /* seconds an item-cache entry lives; 0: don't cache */
  double query_ttl; /* seconds a query-cache entry lives; 0: don't cache */
} ddbc_policy;

/* Cache-wide statistics (see dynamodb_stats in the README). */
typedef struct ddbc_stats {
  uint64_t item_hits, item_misses;
  uint64_t query_hits, query_misses;
  uint64_t evictions;   /* dropped to stay within the byte budget */
  uint64_t expirations; /* dropped because their TTL ran out */
  uint64_t stale;       /* pages dropped because a write of this process
                           changed what they read */
  uint64_t entries;
  uint64_t bytes; /* real allocation sizes */
  uint64_t bytes_max;
} ddbc_stats;

void ddbc_stats_get(ddbc_stats *out);
/* Keep the library holding the cache in memory until the process exits
** (RTLD_NODELETE), so that the cache and the counters outlive the last
** connection: SQLite dlclose()s an extension with the last connection
** that loaded it (Python's close() then connect(), the shell's .open).
** Idempotent and thread-safe; does nothing where the library cannot be
** found (statically linked: nothing to unload). */
void ddbc_pin(void);
/* Set the process-wide byte budget (default 64 MiB), evicting as needed.
** Returns the old budget. */
size_t ddbc_set_budget(size_t bytes);
/* Drop every cached item, page and generation (reads in flight then do
** not fill), and forget the principals seen. */
void ddbc_clear(void);
/* The cache's clock: monotonic seconds, in steps of a few milliseconds
** (CLOCK_MONOTONIC_COARSE where there is one). */
double ddbc_now(void);

/* DescribeTable, reused for 60 s.  *out is owned by the caller
** (ddb_table_desc_free). */
ddb_result ddbc_describe_table(ddb_client *c, const char *table,
                               ddb_table_desc **out, ddb_error *err);
/* DescribeTable asked of DynamoDB whatever is kept, and kept for the next
** 60 s in place of the old answer (dynamodb_refresh). */
ddb_result ddbc_describe_table_fresh(ddb_client *c, const char *table,
                                     ddb_table_desc **out, ddb_error *err);

/* One page of a Query or Scan. */
ddb_result ddbc_read_page(ddb_client *c, const ddb_read *r,
                          const ddbc_policy *pol, ddb_page **out,
                          ddb_error *err);

/* GetItem: *out is the item or NULL when there is none. */
ddb_result ddbc_get_item(ddb_client *c, const char *table, const ddb_item *key,
                         const char *const *key_names, int n_key_names,
                         const ddbc_policy *pol, ddb_item **out,
                         ddb_error *err);

/* The item cache's answer for the key whose attribute values are key[0..n)
** (names set, in the table's key order), without building an item: 1 on
** a hit (*out is a new reference, or NULL for "no such item"), 0 on a
** miss or when pol says not to use the cache (then call ddbc_get_item).
** This is the hot path of a join that drives lookups. */
int ddbc_item_cached(ddb_client *c, const char *table, const ddb_av *key,
                     int n_key, const ddbc_policy *pol, ddb_item **out);

/* BatchGetItem over any number of keys; found[i] answers keys[i]. */
ddb_result ddbc_batch_get(ddb_client *c, const char *table,
                          const ddb_item *const *keys, size_t n,
                          const char *const *key_names, int n_key_names,
                          const ddbc_policy *pol, ddb_item **found,
                          ddb_error *err);

/* A write through this process completed.  key: the item's key
** attributes; old_item: its image before (NULL if there was none), with
** old_known=0 when the old image is unknown; new_item: after (NULL if
** deleted).  Replaces the item's cache entry with new_item and makes stale
** every cached page the change could alter. */
void ddbc_note_write(ddb_client *c, const ddb_table_desc *d,
                     const ddb_item *old_item, int old_known,
                     const ddb_item *new_item, const ddb_item *key,
                     const ddbc_policy *pol);

/* ------------------------------------------------------------------------
** Parallel reads (stream.c, fanout.c)
**
** Both read through the cache, as the calls above do, on threads of their
** own.  Neither knows its caller: the caller's thread is watched with a
** cancel hook (cancel(ud) non-zero: stop; NULL: never), which they ask only
** on the caller's thread, every DDB_CANCEL_POLL_MS while it waits; worker
** threads poll a stop flag instead.
*/

/* A parallel Scan, or the Queries of a list of partition keys, as one
** stream of pages (stream.c). */
typedef struct ddbc_stream ddbc_stream;

/* Start n_workers threads reading n_units units of read r: the segments
** 0 .. n_units-1 of a Scan (TotalSegments = n_units) when pks is NULL,
** else one Query per partition key pks[0 .. n_units) (each in place of
** r->pk).  Worker i reads units i, i + n_workers, ...  r->limit sizes
** each unit's first request only.  The array pks is copied; r is copied,
** but the strings and values r and pks point to are borrowed and must
** outlive the stream.  Returns DDB_OK with *out (ddbc_stream_free);
** else an error with *out NULL and no thread left running. */
ddb_result ddbc_stream_start(ddb_client *c, const ddb_read *r,
                             const ddbc_policy *pol, const ddb_av *pks,
                             int n_workers, int n_units, ddbc_stream **out,
                             ddb_error *err);
/* The next page of s in *out (a new reference, ddb_page_unref), with the
** unit it belongs to in *unit (unit may be NULL); *out NULL when every
** unit is done.  Waits for a worker.  Returns DDB_OK; the first worker's
** error; or DDB_ERR_CANCELLED when cancel(ud) said stop (then the workers
** stop, and every later call returns the same error). */
ddb_result ddbc_stream_next(ddbc_stream *s, ddb_cancel_fn cancel, void *ud,
                            ddb_page **out, int *unit, ddb_error *err);
/* The workers s started. */
int ddbc_stream_workers(const ddbc_stream *s);
/* The workers of s that are done (for a progress line).  Takes s's lock. */
int ddbc_stream_done(ddbc_stream *s);
/* Stop the workers, wait for them, drop the queued pages and free s
** (NULL is fine). */
void ddbc_stream_free(ddbc_stream *s);
/* The most pages, and bytes of pages, one stream held at once in this
** process: read, not yet taken by ddbc_stream_next; never more than
** 2 x its workers. */
void ddbc_stream_peak(int *pages, long long *bytes);

/* BatchGetItem of keys[0..n) with up to 4 calls of 100 keys in flight
** (fanout.c); found[i] answers keys[i] (a new reference, or NULL: no such
** item).  Returns DDB_OK, or the first error (then found[] holds
** nothing). */
ddb_result ddbc_batch_get_parallel(ddb_client *c, const char *table,
                                   const ddb_item *const *keys, size_t n,
                                   const char *const *key_names,
                                   int n_key_names, const ddbc_policy *pol,
                                   ddb_cancel_fn cancel, void *ud,
                                   ddb_item **found, ddb_error *err);

#ifdef __cplusplus
}
#endif
#endif /* DDB_CACHE_H */
