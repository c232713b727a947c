/*
** shared.h -- the shared cache tier: item entries and query pages in
** Redis, behind the process's own cache (shared.c; its connections:
** redis_conn.c).  Internal to cache/: read.c and invalidate.c call these
** from their read, fill and write paths; the front ends
** only open a tier (ddbc_shared_open in ddb_cache.h) and put it in their
** policy.
**
** Names.  An entry's logical key is what cache.c keys it by, less the
** process-local place and principal ids: for items the table and the
** item's key (cache.c's "I" key without its head), for pages the request
** body.  shared.c names it in Redis by an HMAC under a key derived from
** the client's credentials (ddb_client_tier_key), so other credentials
** name other keys, and nothing readable is left in Redis.
**
** Every function is a no-op (or a miss) when Redis cannot answer within
** the tier's timeout; none returns an error.  `now` is the wall clock in
** seconds (ddbc_shared_now: entries are shared between processes and
** machines, so fill times are on the one clock they share).
*/
#ifndef DDBC_SHARED_H
#define DDBC_SHARED_H

#include "ddb_cache.h"

struct ddbc_resp_node;

/* The largest value written to Redis (an entry that encodes larger is
** not shared); a read of a larger one is a miss. */
#define DDBC_SHARED_MAX_VALUE (4u * 1024 * 1024)
/* Keys of one MGET. */
#define DDBC_SHARED_MGET 100
/* Seconds a write whose result is unknown blocks fills of its item (see
** shared.c, "Coherence"). */
#define DDBC_SHARED_TOMBSTONE 10.0

/* u at p, big-endian (8 bytes), as every value's head stores it; and
** back. */
void ddbc_shared_put64(unsigned char *p, uint64_t u);
uint64_t ddbc_shared_get64(const unsigned char *p);

/* CLOCK_REALTIME in seconds. */
double ddbc_shared_now(void);

/* Look up the n items named tails[i][0..lens[i]) (NULL: skipped) of
** table.  hit[i] is set to 1 when Redis held a good entry younger than
** max_age seconds: then found[i] is the item (a new reference) or NULL
** for "no such item", and age[i] its age in seconds (age may be NULL);
** else hit[i] is 0 (Redis held nothing, or failed) or 2 (it held an
** entry not to be taken: too old, a tombstone, not ours) and found[i]
** untouched. */
void ddbc_shared_get_items(ddbc_shared *sh, ddb_client *c, const char *table,
                           char *const *tails, const size_t *lens, size_t n,
                           double max_age, double now, ddb_item **found,
                           unsigned char *hit, double *age);
/* Store what DynamoDB answered for those items (items[i] NULL: no such
** item) for ttl seconds, each only where Redis holds no entry for it
** (SET NX: a write's entry, or a tombstone, is never overwritten by a
** read that may have raced with it). */
void ddbc_shared_fill_items(ddbc_shared *sh, ddb_client *c, const char *table,
                            char *const *tails, const size_t *lens, size_t n,
                            ddb_item *const *items, double ttl, double now);

/* The generation of table's query pages in Redis, as read before a
** request: 0 when unknown (then the page is not stored). */
typedef uint64_t ddbc_shared_gen;
/* Look up the page of the request tail[0..len) of table: 1 on a hit (*out
** a new page, younger than max_age, filled under the table's current
** generation; *age its age in seconds); else 0 (Redis held no page, or
** failed) or 2 (it held one not to be taken: too old, of an older
** generation, not ours), with *gen the generation to fill under. */
int ddbc_shared_get_page(ddbc_shared *sh, ddb_client *c, const char *table,
                         const char *tail, size_t len, double max_age,
                         double now, ddb_page **out, double *age,
                         ddbc_shared_gen *gen);
/* Store page p for ttl seconds under generation gen (0: nothing done). */
void ddbc_shared_fill_page(ddbc_shared *sh, ddb_client *c, const char *table,
                           const char *tail, size_t len, ddbc_shared_gen gen,
                           const ddb_page *p, double ttl, double now);

/* A write through this process of the item named tail[0..len) of table
** completed: its entry becomes item (NULL: no such item) for ttl seconds,
** or, when ttl is 0 (the result is unknown, or not to be cached), a
** tombstone for DDBC_SHARED_TOMBSTONE seconds; and the table's
** generation moves, retiring every query page of the table stored under
** these credentials. */
void ddbc_shared_note_write(ddbc_shared *sh, ddb_client *c, const char *table,
                            const char *tail, size_t len, const ddb_item *item,
                            double ttl, double now);

/* The shared tier's counters, into out's shared_* fields. */
void ddbc_shared_stats_get(ddbc_stats *out);

/* ------------------------------------------------------------------------
** lease.c: leases, so that a fleet that misses a key together reads
** DynamoDB for it once (docs/cache.md, "Leases").
**
** A lease is the Redis key of kind DDBC_LEASE_ITEM (an item: the item's
** tail) or DDBC_LEASE_PAGE (a page: the request's tail), named as every
** entry is (ddbc_shared_name), holding a random token for
** ddbc_lease_hold(wait) seconds.  States of a key, in state[]:
**   DDBC_LEASE_NONE   no lease (leases off, Redis failed, or an entry
**                     that is there but not to be taken): read DynamoDB
**                     and fill as without leases
**   DDBC_LEASE_WON    this reader holds the lease: read DynamoDB, then
**                     fill with ddbc_lease_fill_* (compare-and-set on the
**                     token: a write since then has cancelled it, and the
**                     fill is dropped)
**   DDBC_LEASE_LOST   another reader holds it: wait (ddbc_lease_wait_*)
**   DDBC_LEASE_HIT    the entry came while taking or waiting: found[i]
**   DDBC_LEASE_FALLBACK  no fill within the wait: read DynamoDB, fill
**                     nothing
** Every call is bounded: a lease never turns a slow or dead holder, nor a
** slow or down Redis, into an error or a longer wait than `wait` (plus
** the tier's timeout a round trip).
*/
#define DDBC_LEASE_ITEM 'i'
#define DDBC_LEASE_PAGE 'q'
enum {
  DDBC_LEASE_NONE = 0,
  DDBC_LEASE_WON,
  DDBC_LEASE_LOST,
  DDBC_LEASE_HIT,
  DDBC_LEASE_FALLBACK
};
/* A lease's token (hex of 16 random bytes), one per reader's call. */
typedef struct ddbc_lease_token {
  char hex[33];
} ddbc_lease_token;

/* Seconds a lease is held before Redis drops it (its holder died, or is
** slower than that: then its fill is dropped), for a wait of `wait`. */
double ddbc_lease_hold(double wait);

/* Take the leases of the n items tails[i] (NULL: skipped; else each a
** key the tier missed, ddbc_shared_get_items' hit[i] == 0) of table in
** one round trip, under token tok (made here).  state[i] becomes WON,
** LOST, HIT (found[i] the item, a new reference, or NULL for "no such
** item"; age[i] its age), FALLBACK (an entry came that is not to be
** taken), or NONE (Redis failed). */
void ddbc_lease_take_items(ddbc_shared *sh, ddb_client *c, const char *table,
                           char *const *tails, const size_t *lens, size_t n,
                           double wait, double max_age, ddbc_lease_token *tok,
                           unsigned char *state, ddb_item **found,
                           double *age);
/* Wait at most `wait` seconds for the fills of the items whose state is
** LOST, all together (one poll loop of one round trip a poll): each
** becomes HIT, WON (its lease was free again: this reader took it), or
** FALLBACK (none came in time, or Redis failed). */
void ddbc_lease_wait_items(ddbc_shared *sh, ddb_client *c, const char *table,
                           char *const *tails, const size_t *lens, size_t n,
                           double wait, double max_age,
                           const ddbc_lease_token *tok, unsigned char *state,
                           ddb_item **found, double *age);
/* Fill the items whose state is WON with items[i] (DynamoDB's answer;
** NULL: no such item) for ttl seconds, each only while its lease still
** holds tok (else dropped: shared_lease_stale) and Redis holds no entry;
** release is 1 to release the leases without a fill (the read failed). */
void ddbc_lease_fill_items(ddbc_shared *sh, ddb_client *c, const char *table,
                           char *const *tails, const size_t *lens, size_t n,
                           const unsigned char *state, ddb_item *const *items,
                           int release, double ttl,
                           const ddbc_lease_token *tok, double now);

/* The page of the request tail[0..len) of table, which the tier missed
** under generation gen: its lease taken, and when another reader holds
** it, its fill waited for (at most `wait`).  Returns WON, HIT (*out the
** page, *age its age), FALLBACK or NONE. */
int ddbc_lease_page(ddbc_shared *sh, ddb_client *c, const char *table,
                    const char *tail, size_t len, ddbc_shared_gen gen,
                    double wait, double max_age, ddbc_lease_token *tok,
                    ddb_page **out, double *age);
/* Fill the page p (NULL: release the lease) read under a WON lease, for
** ttl seconds, only while the lease holds tok and the table's generation
** is still gen (else dropped: shared_lease_stale). */
void ddbc_lease_fill_page(ddbc_shared *sh, ddb_client *c, const char *table,
                          const char *tail, size_t len, ddbc_shared_gen gen,
                          const ddb_page *p, double ttl,
                          const ddbc_lease_token *tok, double now);
/* The lease counters into out (shared_lease_*). */
void ddbc_lease_stats(ddbc_stats *out);

/* ------------------------------------------------------------------------
** redis_conn.c: the connections, for shared.c.
**
** ddbc_shared_round_trip: one round trip on sh: cmds, then n replies
** (each of at most max_nodes values) into rp (freed by the caller in
** every case), *ms its time.  Returns 0, or -1 (skipped while the tier
** backs off, timed out or failed: counted and logged; rp then holds
** nothing to read).
** ddbc_shared_log: a row of the request log for the tier (operation op,
** "shared_..."; items -1 when none).
** ddbc_shared_count_error: count an answer of the wrong type, or an
** error answer, on a connection that stays good (shared_errors).
** ddbc_shared_conn_stats: the connections' counters into out
** (shared_timeouts, shared_errors, shared_skipped, shared_down).
*/
struct ddbc_resp_reply;
int ddbc_shared_round_trip(ddbc_shared *sh, const ddb_buf *cmds,
                           struct ddbc_resp_reply *rp, int n, int max_nodes,
                           const char *table, double *ms);
void ddbc_shared_log(const char *op, const char *table, int items, double ms);
void ddbc_shared_count_error(void);
void ddbc_shared_conn_stats(ddbc_stats *out);

/* ------------------------------------------------------------------------
** shared.c's values and names, for lease.c.
**
** ddbc_shared_item_take: the item entry v read under name at now: 1 on a
** hit (*found the item, a new reference, or NULL for "no such item"; *age
** its age), else 0 (too old, a tombstone, not ours).  plain is scratch.
** ddbc_shared_item_value / ddbc_shared_page_value: the sealed value of an
** item entry (NULL: no such item) / of page p under generation gen,
** appended to v.  Return 0 or -1 (too large, out of memory).
** ddbc_shared_page_take: the page entry v read under name under the
** table's generation cur: 1 on a hit (*out, *age), else 0.
** ddbc_shared_gen_name: the Redis key of table's generation, in
** out[0..DDBC_SHARED_NAME_LEN].  ddbc_shared_gen_parse: a generation's
** value (0: not one).  ddbc_shared_count_found: count hits and fills.
*/
int ddbc_shared_item_take(const unsigned char *root, const char *name,
                          const struct ddbc_resp_node *v, double max_age,
                          double now, ddb_buf *plain, ddb_item **found,
                          double *age);
int ddbc_shared_item_value(const unsigned char *root, const char *name,
                           const ddb_item *item, double now, ddb_buf *v);
int ddbc_shared_page_take(const unsigned char *root, const char *name,
                          const struct ddbc_resp_node *v, uint64_t cur,
                          double max_age, double now, ddb_buf *plain,
                          ddb_page **out, double *age);
int ddbc_shared_page_value(const unsigned char *root, const char *name,
                           ddbc_shared_gen gen, const ddb_page *p, double now,
                           ddb_buf *v);
void ddbc_shared_gen_name(const unsigned char *root, const char *table,
                          char *out);
uint64_t ddbc_shared_gen_parse(const struct ddbc_resp_node *v);
void ddbc_shared_count_found(uint64_t hits, uint64_t fills);

/* ------------------------------------------------------------------------
** For tests (tests/unit/test_shared.c): the value format alone.
**
** ddbc_shared_seal: the value stored under the Redis key `name` for a
** plaintext plain[0..n), sealed with AES-256-GCM under the key derived
** from root (ddb_client_tier_key), appended to out.  Returns 0 or -1.
** ddbc_shared_open_value: the plaintext of value v[0..vn) read under
** `name`, appended to out; -1 when it fails authentication (another
** key, another name, a changed byte) or is malformed.
** ddbc_shared_name: the Redis key of kind and tail under root, in
** out[0..DDBC_SHARED_NAME_LEN] (NUL-terminated).
*/
#define DDBC_SHARED_NAME_LEN (6 + 64) /* "ddbc1:" and 64 hex digits */
int ddbc_shared_seal(const unsigned char *root, const char *name,
                     const unsigned char *plain, size_t n, ddb_buf *out);
int ddbc_shared_open_value(const unsigned char *root, const char *name,
                           const unsigned char *v, size_t vn, ddb_buf *out);
void ddbc_shared_name(const unsigned char *root, char kind, const char *tail,
                      size_t len, char *out);

#endif
