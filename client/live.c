/*
** live.c -- the objects whose locks a child of fork() must find whole.
**
** A child of fork() inherits every lock as it was, held perhaps by a
** thread that does not exist in the child, and the data behind it half
** changed.  So every object with such locks (a client and its signing-key
** cache, the rate limiter, the request log, the cache's tables and store,
** the hot keys, the shared tier, a stream, a dyn_client of api/, ext/'s
** registry) puts a ddb_live node on one process-wide list, and one set of
** pthread_atfork handlers takes every node's locks before the fork
** (ops->lock) and releases them after it, in the parent
** (ops->unlock_parent) and in the child (ops->unlock_child, which may also
** forget what the child must not share, e.g. pooled connections).
**
** The lock order.  live_lock comes first of all: nothing holds another
** lock of the list while it adds or removes a node.  The list is kept in
** the order of the nodes' ranks, so prepare cannot deadlock against code
** that nests locks in the same order.  Every mutex of client/, cache/,
** api/ and ext/ that a child can take is on the list, and the handlers
** take them in the order of ddb_live_rank (ddb_client.h), lowest first (a
** node's own locks in the order its ops say).  It is the order of the
** layers, top down: a layer calls the one below it, never the one above,
** so code may hold a lock of an upper layer while it takes a lower one's,
** never the reverse.  Today every lock of one rank is a leaf with respect
** to every other rank's (no code holds it while it takes another rank's):
** the order is what keeps prepare from deadlocking if that ever changes.
** Within a rank the nesting is:
**   DDB_LIVE_COHERENCE  cache/coherence.c's reg_lock, then each reader's
**                    mu (a leaf: no request and no other rank's lock
**                    under it)
**   DDB_LIVE_CACHE   describe.c's desc_lock (its own node; a leaf, never
**                    held while another lock is taken), then cache.c's
**                    seen_lock, then the store's lock (seen_lock is held
**                    while the store's is taken)
**   DDB_LIVE_SHARED  redis_conn.c's reg_lock, then each tier's lock
**                    (ddbc_shared_conn_stats)
**   DDB_LIVE_CLIENT  a client's lock, cred_lock, then the signing-key cache
**                    of its current credentials (sigv4.c); refresh_lock is
**                    not taken (held while credentials are fetched: the
**                    child makes it anew)
**   DDB_LIVE_CREDS   creds_fetch.c's memo_lock, a leaf (taken during a
**                    fetch, under refresh_lock, nothing else held)
** Not on the list, and why: the meter and the counters (atomics only);
** pthread_once (glibc's restarts in a child one that a vanished thread was
** running); refresh_lock (above); libcurl has no share here (no CURLSH:
** each request has its own easy handle, and the child drops the pooled
** ones).  glibc resets its own locks in the child, but for tzset_lock
** (gmtime_r, timegm, localtime_r): the signer reckons X-Amz-Date without
** it (sigv4.c); it is still taken on two error paths (http.c's clock
** refusal, creds.c's expiry message).  A new lock takes a rank
** (ddb_client.h), written here, and its node says which.
*/
#include <pthread.h>

#include "ddb_client.h"

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static ddb_live *live; /* every node added and not removed (live_lock) */

/* Before fork(): take every node's locks, in the list's order (ranks). */
static void live_prepare(void) {
  ddb_live *n;
  pthread_mutex_lock(&live_lock);
  for(n = live; n; n = n->next)
    n->ops->lock(n->obj);
}

/* After fork(), in the parent: release them (any order will do). */
static void live_parent(void) {
  ddb_live *n;
  for(n = live; n; n = n->next)
    n->ops->unlock_parent(n->obj);
  pthread_mutex_unlock(&live_lock);
}

/* After fork(), in the child: release them (and reset what the child
** must not share). */
static void live_child(void) {
  ddb_live *n;
  for(n = live; n; n = n->next)
    if(n->ops->unlock_child)
      n->ops->unlock_child(n->obj);
    else
      n->ops->unlock_parent(n->obj);
  pthread_mutex_unlock(&live_lock);
}

static pthread_once_t live_once = PTHREAD_ONCE_INIT;
/* Install the handlers, once per process (glibc forgets them when the
** library is unloaded). */
static void live_init_once(void) {
  pthread_atfork(live_prepare, live_parent, live_child);
}

/* Put node n (not on the list) for obj on the list, after the nodes of
** its rank and before those of higher ranks; ops must outlive it. */
void ddb_live_add(ddb_live *n, const ddb_live_ops *ops, void *obj) {
  ddb_live **pp;
  pthread_once(&live_once, live_init_once);
  n->ops = ops;
  n->obj = obj;
  pthread_mutex_lock(&live_lock);
  for(pp = &live; *pp && (*pp)->ops->rank <= ops->rank; pp = &(*pp)->next)
    ;
  n->next = *pp;
  *pp = n;
  pthread_mutex_unlock(&live_lock);
}

/* Take node n off the list (a node not on it is left alone). */
void ddb_live_remove(ddb_live *n) {
  ddb_live **pp;
  pthread_mutex_lock(&live_lock);
  for(pp = &live; *pp; pp = &(*pp)->next)
    if(*pp == n) {
      *pp = n->next;
      break;
    }
  pthread_mutex_unlock(&live_lock);
  n->next = NULL;
}
