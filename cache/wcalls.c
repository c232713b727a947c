/*
** wcalls.c -- the calls of one big write, several in flight: a COMMIT (or
** an SQL statement) cut into TransactWriteItems, BatchWriteItem and single
** writes that do not depend on each other (ext/commit.c cuts them: no two
** calls write one item, and a key move's Delete and Put are in one call).
**
** Threads.  Up to plan->n_threads calls run at once (8 by default in
** ext/, the option write_calls), one worker thread each (at most
** DDBC_MAX_THREADS), each taking the next call not taken, in plan order,
** each on a pooled connection of the client.  The caller's thread waits:
** every DDB_CANCEL_POLL_MS it asks its cancel hook and reports progress.
** One call, or one thread, runs on the caller's thread alone.
**
** Failures.  Every call is sent through cache/write.c, which tells the
** cache what it did.  A call that fails stops the calls not yet started
** (they are never sent: NOT_APPLIED); those in flight run to their end.
** An interrupt (the caller's cancel hook) stops them too: each worker's
** cancel hook is a flag the caller's thread sets, so a request in flight
** ends at once and says whether it may have been applied.  The answer is
** what became of every write (plan->state) and of every call, for the
** caller's message; retries (throttling, 5xx, UnprocessedItems) happen
** inside each call with backoff, max_retries as for any call.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache_int.h"

/* What the workers of one plan share. */
typedef struct wc_run {
  ddb_client *c;
  ddbc_wplan *plan;
  int next;   /* the next call to take (atomic) */
  int done;   /* calls finished (atomic) */
  int halt;   /* start no more calls (atomic) */
  int cancel; /* stop the calls in flight: the workers' hook (atomic) */
} wc_run;

/* A worker's cancel hook: has the caller's thread said stop? */
static int wc_cancelled(void *arg) {
  return __atomic_load_n((int *)arg, __ATOMIC_ACQUIRE);
}

/* Set state[] of call k's writes from its outcome r: all applied; or, on
** failure, all possibly applied when its answer was lost, else none
** (single writes and TransactWriteItems are all or nothing). */
static void wc_state(ddbc_wplan *plan, const ddbc_wcall *k, ddb_result r) {
  unsigned char v = r == DDB_OK            ? DDB_WRITE_APPLIED
                    : k->err.maybe_applied ? DDB_WRITE_MAYBE
                                           : DDB_WRITE_NOT_APPLIED;
  memset(plan->state + k->i0, v, (size_t)k->n);
}

/* Send call k of the plan: one BatchWriteItem, one single write
** (PutItem, UpdateItem, DeleteItem: half a TransactWriteItems' cost), or
** one TransactWriteItems.  Fills k->result, k->err and the state of its
** writes. */
static void wc_send(ddb_client *c, ddbc_wplan *plan, ddbc_wcall *k) {
  const ddb_write *w = plan->w + k->i0;
  const ddb_item *was = plan->was ? plan->was[k->i0] : NULL;
  /* the table of the call's first write (a plan across tables): a
  ** BatchWriteItem's and a single write's table */
  const ddb_table_desc *d = w->d ? w->d : plan->d;
  const char *const *key_names = w->d ? w->key_names : plan->key_names;
  int n_key = w->d ? w->n_key : plan->n_key;
  ddbc_policy forget = *plan->pol;
  ddb_result r;
  ddb_error_clear(&k->err);
  ddb_log_note(k->note);
  if(k->batch) {
    r = ddbc_batch_write(c, d, w, (size_t)k->n, key_names, n_key, plan->pol,
                         plan->state + k->i0, &k->err);
  } else if(k->n == 1 && w->kind == DDB_WRITE_PUT &&
            w->cond != DDB_COND_EXISTS) {
    r = ddbc_put_item(c, d, w->item, key_names, n_key, w->cond, w->expect,
                      plan->pol, NULL, &k->err);
  } else if(k->n == 1 && w->kind == DDB_WRITE_UPDATE) {
    r = ddbc_update_item(c, d, w->item, key_names, n_key, w->set, w->remove,
                         w->n_remove, w->cond, was, plan->pol, NULL, &k->err);
  } else if(k->n == 1 && w->kind == DDB_WRITE_DELETE) {
    r = ddbc_delete_item(c, d, w->item, key_names, n_key, w->cond, w->expect,
                         plan->pol, NULL, &k->err);
  } else {
    /* no answer of a TransactWriteItems holds the images: the cache
    ** forgets the items (item_ttl 0) */
    forget.item_ttl = 0;
    r = ddbc_transact_write(c, plan->d, w, k->n, plan->key_names, plan->n_key,
                            NULL, &forget, &k->err);
  }
  ddb_log_note(NULL);
  if(!k->batch)
    wc_state(plan, k, r);
  k->result = r;
  k->ran = 1;
}

/* Take calls in order until none is left or the run halts.  Returns
** NULL (a thread's entry point through wc_thread). */
static void *wc_work(wc_run *run) {
  ddbc_wplan *plan = run->plan;
  for(;;) {
    int i;
    if(__atomic_load_n(&run->halt, __ATOMIC_ACQUIRE))
      break;
    i = __atomic_fetch_add(&run->next, 1, __ATOMIC_ACQ_REL);
    if(i >= plan->n_calls || __atomic_load_n(&run->halt, __ATOMIC_ACQUIRE))
      break; /* none left, or one failed meanwhile: not started */
    wc_send(run->c, plan, &plan->calls[i]);
    if(plan->calls[i].result)
      __atomic_store_n(&run->halt, 1, __ATOMIC_RELEASE);
    __atomic_fetch_add(&run->done, 1, __ATOMIC_ACQ_REL);
  }
  return NULL;
}

/* A worker thread: its cancel hook is the run's cancel flag. */
static void *wc_thread(void *arg) {
  wc_run *run = arg;
  ddb_cancel_thread(wc_cancelled, &run->cancel);
  return wc_work(run);
}

/* Run every call on the caller's thread, in order (its client's cancel
** hook applies to each request), reporting progress between calls. */
static void wc_serial(wc_run *run) {
  ddbc_wplan *plan = run->plan;
  int i;
  for(i = 0; i < plan->n_calls; i++) {
    wc_send(run->c, plan, &plan->calls[i]);
    if(plan->progress)
      plan->progress(plan->ud, i + 1, plan->n_calls);
    if(plan->calls[i].result)
      break;
  }
}

/* See ddb_cache.h. */
ddb_result ddbc_write_calls(ddb_client *c, ddbc_wplan *plan) {
  wc_run run;
  pthread_t *tids = NULL;
  int n_run, n_started = 0, i, n_left;
  ddb_result result = DDB_OK;

  memset(&run, 0, sizeof(run));
  run.c = c;
  run.plan = plan;
  for(i = 0; i < plan->n_calls; i++) {
    memset(plan->state + plan->calls[i].i0, DDB_WRITE_NOT_APPLIED,
           (size_t)plan->calls[i].n);
    plan->calls[i].ran = 0;
    plan->calls[i].result = DDB_OK;
    ddb_error_clear(&plan->calls[i].err);
  }
  n_run = plan->n_threads < plan->n_calls ? plan->n_threads : plan->n_calls;
  if(n_run > DDBC_MAX_THREADS)
    n_run = DDBC_MAX_THREADS;
  if(n_run > 1)
    tids = calloc((size_t)n_run, sizeof(*tids));
  for(i = 0; tids && i < n_run; i++)
    if(pthread_create(&tids[n_started], NULL, wc_thread, &run) == 0)
      n_started++;
  if(n_started == 0) {
    wc_serial(&run);
  } else {
    /* wait, watching the caller's hook (which only this thread may ask)
    ** and telling the caller how far the calls are */
    for(i = 0; i < n_started; i++) {
      for(;;) {
        struct timespec ts;
        ddbc_poll_deadline(&ts);
        if(pthread_timedjoin_np(tids[i], NULL, &ts) == 0)
          break;
        if(!__atomic_load_n(&run.cancel, __ATOMIC_ACQUIRE) && plan->cancel &&
           plan->cancel(plan->ud)) {
          __atomic_store_n(&run.halt, 1, __ATOMIC_RELEASE);
          __atomic_store_n(&run.cancel, 1, __ATOMIC_RELEASE);
        }
        if(plan->progress)
          plan->progress(plan->ud,
                         __atomic_load_n(&run.done, __ATOMIC_ACQUIRE),
                         plan->n_calls);
      }
    }
    if(plan->progress)
      plan->progress(plan->ud, run.done, plan->n_calls);
  }
  free(tids);
  /* the answer: the first call that failed (in plan order) */
  for(i = 0, n_left = 0; i < plan->n_calls; i++)
    if(plan->calls[i].ran && plan->calls[i].result && result == DDB_OK)
      result = plan->calls[i].result;
    else if(!plan->calls[i].ran)
      n_left++;
  if(result == DDB_OK && n_left > 0)
    /* stopped before it started them all, with no call failed: an
    ** interrupt between calls */
    result = DDB_ERR_CANCELLED;
  return result;
}
