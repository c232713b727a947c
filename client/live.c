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
** The list is kept in the order of the nodes' ranks (ddb_live_rank in
** ddb_client.h, where the lock order is written): prepare takes them in
** that order, so it cannot deadlock against code that nests locks in the
** same order.  live_lock comes first of all: nothing holds another lock of
** the list while it adds or removes a node.
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
