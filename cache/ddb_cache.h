/*
** ddb_cache.h -- the path between the front ends (ext/, api/) and client/.
**
** Every read goes through these calls, so that one place decides whether a
** request is answered from memory or sent to DynamoDB; every write goes
** through them too (write.c), so that one place tells the cache what it
** changed.  The functions take the same arguments as their client/
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

/* A shared cache tier (Redis), process-wide (ddbc_shared_open). */
typedef struct ddbc_shared ddbc_shared;
/* A reader of a table's DynamoDB Stream (coherence.c). */
typedef struct ddbc_reader ddbc_reader;

/* How a read may be served. */
typedef struct ddbc_policy {
  int consistent;       /* 1: ConsistentRead=true, never from the cache */
  double item_ttl;      /* seconds an item-cache entry lives; 0: don't cache */
  double query_ttl;     /* seconds a query-cache entry lives; 0: don't cache */
  ddbc_shared *shared;  /* the shared tier behind the process's cache, or
                          NULL (never freed: see ddbc_shared_open) */
  double lease_wait;    /* seconds a reader waits for another's fill of a
                          key it missed in the shared tier (shared_lease_wait;
                          0: no leases; DDBC_LEASE_AUTO: twice the
                          process's DynamoDB round trip) */
  int streams;          /* coherence=streams asked (the front end attaches
                           reader) */
  ddbc_reader *reader;  /* coherence=streams: the table's reader, or NULL */
  double max_staleness; /* with a reader: a read goes to DynamoDB while
                           the reader lags more, or does not follow
                           (seconds; 0: no bound) */
} ddbc_policy;

/* Cache-wide statistics (see dynamodb_stats in docs/cache.md). */
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
  /* the shared tier (Redis), every tier of the process together */
  uint64_t shared_hits;          /* entries served from Redis */
  uint64_t shared_misses;        /* looked up, not there (or too old) */
  uint64_t shared_fills;         /* entries stored in Redis */
  uint64_t shared_auth_failures; /* values that failed authentication */
  uint64_t shared_timeouts;      /* connects and commands past the bound */
  uint64_t shared_errors;        /* refused, closed, not RESP, wrong
                                    type, an error answer (OOM ...) */
  uint64_t shared_skipped;       /* lookups not sent: Redis backing off */
  uint64_t shared_down;          /* tiers backing off now */
  /* leases (lease.c): a fleet's misses of one key read DynamoDB once */
  uint64_t shared_lease_wins;      /* leases taken: this process read */
  uint64_t shared_lease_waits;     /* keys waited for (another held it) */
  uint64_t shared_lease_stale;     /* fills dropped: a write cancelled the
                                      lease, or it ran out */
  uint64_t shared_lease_fallbacks; /* waits that ended without a fill:
                                      DynamoDB read without the lease */
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
/* Drop what the cache holds of DynamoDB table `table` at c's place (its
** endpoint and region), for every principal: its items, its Query and
** Scan pages (reads of its pages in flight then do not fill) and its
** DescribeTable answers.  Returns the number of item and page entries
** dropped. */
size_t ddbc_clear_table(ddb_client *c, const char *table);
/* The cache's clock: monotonic seconds, in steps of a few milliseconds
** (CLOCK_MONOTONIC_COARSE where there is one). */
double ddbc_now(void);

/* ------------------------------------------------------------------------
** The shared tier (shared.c, redis_conn.c, resp.c; docs/cache.md "The
** shared tier")
**
** Reads go to the process's cache, then to Redis, then to DynamoDB; a
** miss fills both.  Entries are named and sealed (AES-256-GCM) under keys
** derived from the client's credentials; Redis down, slow or hostile is a
** miss, never an error and never a wait longer than the timeout.
*/
/* The default bound of a connect and of each command, in seconds. */
#define DDBC_SHARED_TIMEOUT 0.02
/* The default lease wait (shared_lease_wait), DDBC_LEASE_AUTO: two
** DynamoDB round trips as this process measures them (a decaying maximum
** of its recent reads of the same kind: GetItem, BatchGetItem, or
** pages), so the holder's read and as much again of slack;
** DDBC_LEASE_WAIT before the process has measured one (a cold holder's
** first read also pays its connection).  docs/cache.md, "Leases". */
#define DDBC_LEASE_AUTO (-1.0)
#define DDBC_LEASE_WAIT 0.25
/* The default lease wait (lease.c): $DYNAMODB_SHARED_CACHE_LEASE_WAIT
** when set to seconds from 0 (0: no leases) to 1, else DDBC_LEASE_AUTO
** ("auto" too). */
double ddbc_lease_wait_default(void);
/* Kinds of reads, each measured apart for DDBC_LEASE_AUTO. */
enum { DDBC_READ_ITEM = 0, DDBC_READ_BATCH = 1, DDBC_READ_PAGE = 2 };
/* The lease wait of pol for a read of kind (DDBC_READ_*), in seconds (0:
** no leases). */
double ddbc_lease_wait_of(const ddbc_policy *pol, int kind);
/* A DynamoDB read of kind (DDBC_READ_*) took `seconds`. */
void ddbc_lease_note_read(int kind, double seconds);

/* The tier of url: redis[s]://[[user][:password]@]host[:port][/db].  url
** NULL: $DYNAMODB_SHARED_CACHE (unset: none); "" or "off": none.  Without
** a password in the URL, the environment's is the AUTH password only when
** the URL names the Redis $DYNAMODB_SHARED_CACHE names (the same scheme,
** host, port, db and user): that URL's password, else
** $DYNAMODB_SHARED_CACHE_PASSWORD; any other Redis gets none (a url can
** come from a database file).  rediss:// trusts the system's CAs and the
** PEM file $DYNAMODB_SHARED_CACHE_CA.  timeout: seconds (0: DDBC_SHARED_TIMEOUT).
** Returns DDB_OK with *out the tier (NULL: none), one per (url, timeout)
** in the process, never freed (at most 16); it connects at its first
** use, not here.  A URL that cannot be honoured is DDB_ERR_CONFIG, its
** message quoting the URL without its password. */
ddb_result ddbc_shared_open(const char *url, double timeout, ddbc_shared **out,
                            ddb_error *err);
/* 1 while sh is backing off after a failure (why, NUL-terminated in
** why[0..cap), says what failed), else 0.  NULL sh: 0. */
int ddbc_shared_status(ddbc_shared *sh, char *why, size_t cap);

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

/* What a warm lookup copies out of the item cache (ddbc_item_view_cached)
** into buffers its caller owns and reuses (free() them when done): the
** packed item (ddb_item_unpack makes the item of it, when it is needed),
** and, when asked, the item's JSON as ddb_item_to_json renders it,
** NUL-terminated, rendered once and kept with the entry (charged to the
** cache's budget, dropped with the entry).  Nothing in it points into the
** cache: an entry may be dropped by another thread the moment the lookup
** returns. */
typedef struct ddbc_item_view {
  int found; /* 0: the cache knows there is no such item */
  unsigned char *packed;
  size_t packed_len, packed_cap;
  char *json; /* NULL unless asked */
  size_t json_len, json_cap;
} ddbc_item_view;
/* ddbc_item_view_cached: also the JSON */
#define DDBC_VIEW_JSON 1

/* ddbc_item_cached without the item: the entry copied into *v (want:
** DDBC_VIEW_JSON or 0).  1 on a hit (counted as one), 0 on a miss (not
** counted: call ddbc_get_item), when pol says not to use the cache, or
** when the buffers cannot grow. */
int ddbc_item_view_cached(ddb_client *c, const char *table, const ddb_av *key,
                          int n_key, const ddbc_policy *pol, int want,
                          ddbc_item_view *v);

/* BatchGetItem over any number of keys; found[i] answers keys[i]. */
ddb_result ddbc_batch_get(ddb_client *c, const char *table,
                          const ddb_item *const *keys, size_t n,
                          const char *const *key_names, int n_key_names,
                          const ddbc_policy *pol, ddb_item **found,
                          ddb_error *err);

/* ------------------------------------------------------------------------
** Writes through the cache (write.c)
**
** Each call sends the client's write (client/write.c: the same arguments,
** with the table's description d in place of its name, plus pol) and then
** tells the cache what it did, so that a read of this process sees the
** write: the item's entry becomes the item as written and every cached page
** the write could change becomes stale.  The rules, in one place:
**
**   - the image before a write is what the answer's ALL_OLD says (or what
**     the caller read, where an argument takes it), trusted only when the
**     call was not retried: a retry after a lost answer sees what the first
**     attempt left (a DELETE's retry finds nothing).  Not trusted, it is
**     unknown, and every cached page of the table becomes stale;
**   - a write that failed because its condition failed wrote nothing: the
**     cache is not told;
**   - a write that failed otherwise (a timeout, a lost answer, a throttle
**     after all retries) may have been applied: its item's entry is dropped
**     (the next read asks DynamoDB) and every page of the table is stale;
**   - the image after an UPDATE is DynamoDB's answer (ALL_NEW); where the
**     write's answer does not hold it (TransactWriteItems), the entry is
**     dropped.
**
** pol->item_ttl is how long the written item stays cached (0: the entry is
** dropped, nothing cached).  Errors are the client's, in *err.
*/

/* PutItem of item (ddb_put_item), asking for the image it replaced.  With
** old != NULL, *old is that image (a new reference, or NULL when there was
** none), whether or not the cache trusts it. */
ddb_result ddbc_put_item(ddb_client *c, const ddb_table_desc *d,
                         const ddb_item *item, const char *const *key_names,
                         int n_key, ddb_cond cond, const ddb_item *expect,
                         const ddbc_policy *pol, ddb_item **old,
                         ddb_error *err);

/* DeleteItem of the item with key's key attributes (ddb_delete_item;
** expect: DDB_COND_SAME's image).  With old != NULL, *old is the item
** deleted (a new reference, or NULL). */
ddb_result ddbc_delete_item(ddb_client *c, const ddb_table_desc *d,
                            const ddb_item *key, const char *const *key_names,
                            int n_key, ddb_cond cond, const ddb_item *expect,
                            const ddbc_policy *pol, ddb_item **old,
                            ddb_error *err);

/* UpdateItem (ddb_update_item): SET set's attributes, REMOVE remove[], on
** condition cond (DDB_COND_EXISTS, or DDB_COND_SAME: the item is still
** was, the image read).  was: the item before, as the caller
** read it (perhaps from the cache), or NULL when unknown; trusted as the
** image before unless the call was retried.  With updated != NULL,
** *updated is the item after (a new reference). */
ddb_result ddbc_update_item(ddb_client *c, const ddb_table_desc *d,
                            const ddb_item *key, const char *const *key_names,
                            int n_key, const ddb_item *set,
                            const char *const *remove, int n_remove,
                            ddb_cond cond, const ddb_item *was,
                            const ddbc_policy *pol, ddb_item **updated,
                            ddb_error *err);

/* TransactWriteItems of w[0..n) (ddb_transact_write), all or nothing; a
** write with w[i].d set goes to that table (one account and region), and
** its cache entries are that table's.
** was: NULL when the images before are unknown, else was[i] is w[i]'s item
** before as the caller read it (NULL: none).  After success a PUT's item
** and a DELETE's absence are cached, an UPDATE's entry is dropped (the
** answer holds no image).  A failure whose message names
** ConditionalCheckFailed wrote nothing; any other drops every w[i]'s
** entry. */
ddb_result ddbc_transact_write(ddb_client *c, const ddb_table_desc *d,
                               const ddb_write *w, int n,
                               const char *const *key_names, int n_key,
                               const ddb_item *const *was,
                               const ddbc_policy *pol, ddb_error *err);

/* BatchWriteItem of w[0..n) (ddb_batch_write: PUTs and DELETEs without
** conditions, not atomic).  The images before are unknown.  Each write
** DynamoDB applied has its PUT's item or its DELETE's absence cached; on
** error every other write has its entry dropped (it may have been
** applied).  With state != NULL, state[i] says what became of w[i]
** (DDB_WRITE_APPLIED, _MAYBE, _NOT_APPLIED: ddb_batch_write). */
ddb_result ddbc_batch_write(ddb_client *c, const ddb_table_desc *d,
                            const ddb_write *w, size_t n,
                            const char *const *key_names, int n_key,
                            const ddbc_policy *pol, unsigned char *state,
                            ddb_error *err);

/* ------------------------------------------------------------------------
** The calls of one big write, several in flight (wcalls.c)
**
** The caller cuts its writes into calls that do not depend on each other
** (no two write one item; a key move's Delete and Put in one call), in
** the order it numbers them.  Each call is sent through the calls above,
** so the cache is told exactly what each did.
*/

/* One call of a plan: its writes, how it is sent, and (out) what came of
** it. */
typedef struct ddbc_wcall {
  int i0, n;         /* the plan's writes w[i0 .. i0 + n) */
  int batch;         /* BatchWriteItem (unconditional PUTs and DELETEs, at
                    most 25 a request); else one write as its own call
                    (PutItem, UpdateItem, DeleteItem) or, for more, one
                    TransactWriteItems (at most 100) */
  char note[64];     /* the request log's note for its requests (ddb_log_note);
                    "" for none */
  int ran;           /* out: it was started (else never sent) */
  ddb_result result; /* out: DDB_OK, or its error in err */
  ddb_error err;
} ddbc_wcall;

/* A plan: every write, the calls, and how they run. */
typedef struct ddbc_wplan {
  const ddb_table_desc *d; /* the table of every write without its own
                              (ddb_write.d: a plan across tables; a
                              BatchWriteItem's writes are of one table) */
  const char *const *key_names;
  int n_key;
  const ddb_write *w;         /* the writes, in call order; borrowed */
  const ddb_item *const *was; /* was[i]: the image an UPDATE w[i] was
                                 computed against (NULL: unknown); the
                                 array may be NULL */
  int n;
  ddbc_wcall *calls;
  int n_calls;
  int n_threads;          /* calls in flight at the most (1: in order on
                             the caller's thread) */
  const ddbc_policy *pol; /* the writes' item_ttl */
  ddb_cancel_fn cancel;   /* asked on the caller's thread only; may be
                             NULL */
  void *ud;               /* for cancel and progress */
  void (*progress)(void *ud, int n_done, int n_calls); /* on the caller's
                             thread, while it waits; may be NULL */
  unsigned char *state; /* out: state[i] for w[i]: DDB_WRITE_APPLIED,
                             _MAYBE (its answer lost), _NOT_APPLIED
                             (refused, or never sent) */
} ddbc_wplan;

/* Send plan's calls, up to n_threads at a time, each taken in order.  The
** first call to fail stops the calls not started yet (those in flight run
** to their end), and so does the cancel hook (which also stops those in
** flight: they then say whether they may have been applied).  Returns
** DDB_OK when every call went through; else the error of the first call
** (in plan order) that failed, or DDB_ERR_CANCELLED when the hook stopped
** the plan between calls.  calls[] and state[] say what happened. */
ddb_result ddbc_write_calls(ddb_client *c, ddbc_wplan *plan);

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
/* ddbc_stream_start's flags: r->limit is the Limit of every request;
** each unit's first request only (its page's LastEvaluatedKey says where
** the unit would go on: a sample, ext/attributes.c). */
#define DDBC_STREAM_LIMIT_EVERY 1
#define DDBC_STREAM_FIRST_PAGE  2

/* Start n_workers threads reading n_units units of read r: the segments
** 0 .. n_units-1 of a Scan (TotalSegments = n_units) when pks is NULL,
** else one Query per partition key pks[0 .. n_units) (each in place of
** r->pk).  Worker i reads unit i, then the next unit no worker has taken,
** until none is left.  r->limit sizes
** each unit's first request only (SQL's LIMIT + OFFSET), or, with
** DDBC_STREAM_LIMIT_EVERY in flags, every request of every unit (a page
** size: libdyndb's page_size).  The array pks is copied; r is copied,
** but the strings and values r and pks point to are borrowed and must
** outlive the stream.  Returns DDB_OK with *out (ddbc_stream_free);
** else an error with *out NULL and no thread left running. */
ddb_result ddbc_stream_start(ddb_client *c, const ddb_read *r,
                             const ddbc_policy *pol, const ddb_av *pks,
                             int n_workers, int n_units, int flags,
                             ddbc_stream **out, ddb_error *err);
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

/* Threads one parallel read or write runs at the most (fanout.c,
** wcalls.c), the caller's included. */
#define DDBC_MAX_THREADS 64

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
/* The same with up to n_threads calls in flight (1 to DDBC_MAX_THREADS):
** a COMMIT's consistent reads of the keys its INSERTs need free. */
ddb_result ddbc_batch_get_fanout(ddb_client *c, const char *table,
                                 const ddb_item *const *keys, size_t n,
                                 const char *const *key_names, int n_key_names,
                                 const ddbc_policy *pol, int n_threads,
                                 ddb_cancel_fn cancel, void *ud,
                                 ddb_item **found, ddb_error *err);

/* ------------------------------------------------------------------------
** coherence=streams (coherence.c, coherence_apply.c; docs/cache.md
** "Following the table's stream")
**
** ddbc_reader_attach: the reader of table at c's place, shared by the
** process (refcounted), started when there is none (its own client made
** from cfg; it first asks DynamoDB whether the table has a stream:
** DDB_ERR_CONFIG naming the table and how to enable one when not).
** ddbc_reader_detach: the last one stops its thread and joins it (NULL
** is fine).  ddbc_reader_info_get: its state now; ddbc_readers_info: the
** first max readers' into out; returns how many readers there are (it may
** be more than max).  ddbc_reader_bypass: 1 when a
** read under pol must go to DynamoDB (pol->max_staleness is set and its
** reader lags more, or is not following: starting, or fallback-ttl).
*/
typedef struct ddbc_reader_info {
  char table[256];
  int following; /* 1: following; 0: fallback-ttl (why says why) */
  double lag;    /* seconds since every shard was last read to its end
                    (-1 when not following) */
  char why[160];
  uint64_t records, polls, clears, own_skipped, errors;
  int shards;
} ddbc_reader_info;
ddb_result ddbc_reader_attach(const ddb_config *cfg, ddb_client *c,
                              const char *table, ddbc_reader **out,
                              ddb_error *err);
void ddbc_reader_detach(ddbc_reader *r);
/* With the shared tier sh (a policy's), the reader becomes one of the
** fleet's: one reader per table per fleet (coherence_fleet.c; docs/cache.md
** "One reader per fleet").  The first tier named wins. */
void ddbc_reader_share(ddbc_reader *r, ddbc_shared *sh);
void ddbc_reader_info_get(ddbc_reader *r, ddbc_reader_info *out);
int ddbc_readers_info(ddbc_reader_info *out, int max);
int ddbc_reader_bypass(const ddbc_policy *pol);

/* ------------------------------------------------------------------------
** Hot keys (hot.c): the partition keys this process sent the most
** requests for, by a bounded counter (Space-Saving, DDBC_HOT_COUNTERS
** keys at once: see hot.c for its error bound).
*/
#define DDBC_HOT_COUNTERS 1024
typedef struct ddbc_hot_row {
  const char *table;
  const char *index; /* NULL: the table itself */
  const char *pk;    /* the partition-key value's text (S as it is, N
                        canonical, B base64), pk_len bytes */
  size_t pk_len;
  char pk_type;       /* 'S', 'N' or 'B' */
  uint64_t requests;  /* requests that named the key (pages, retries
                        not counted), overcounted by at most error */
  uint64_t error;     /* requests counted for the keys it took the counter
                        from */
  uint64_t items;     /* items read or written */
  double rcu, wcu;    /* the capacity they consumed (a BatchGetItem's
                        shared among its keys) */
  uint64_t throttled; /* throttling answers to them */
  uint64_t key_range; /* of those, the ones whose reasons DynamoDB gave
                         named this table's or index's key range (a hot
                         key, by the server's word) */
} ddbc_hot_row;
/* The counters with the most requests, at most max, most first, in *rows
** (ddbc_hot_free; the strings are the rows'): returns their number, or -1
** when out of memory. */
int ddbc_hot_top(int max, ddbc_hot_row **rows);
void ddbc_hot_free(ddbc_hot_row *rows, int n);

#ifdef __cplusplus
}
#endif
#endif /* DDB_CACHE_H */
