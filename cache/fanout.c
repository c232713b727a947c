/*
** fanout.c -- BatchGetItem of many keys with several calls in flight.
**
** The keys are cut into chunks of FANOUT_CHUNK (one BatchGetItem each,
** through the cache: ddbc_batch_get) and up to FANOUT_THREADS threads (or
** the number ddbc_batch_get_fanout is given) take the chunks in turn; the
** caller's thread is one of them.  The first error
** is the answer, and no item is returned with it.
**
** Cancelling.  Only the caller's thread may ask its cancel hook: while it
** waits for the other threads it polls the hook every DDB_CANCEL_POLL_MS
** and passes a stop on through a shared flag, which is each other
** thread's own cancel hook (ddb_cancel_thread).  The caller's own calls
** are cancelled by the client's hook (ddb_client_set_cancel), as any call.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache_int.h"

/* Keys of one BatchGetItem (DynamoDB's limit). */
#define FANOUT_CHUNK 100
/* Threads of ddbc_batch_get_parallel, the caller's included (the keys
** column's reads; ddbc_batch_get_fanout takes its own number). */
#define FANOUT_THREADS 4

typedef struct fanout_job {
  ddb_client *client;
  const char *table;
  const ddb_item *const *keys;
  const char *const *key_names;
  int n_key_names;
  const ddbc_policy *pol;
  ddb_item **found;
  int n_keys, first, stride; /* this thread's chunks: first, +stride.. */
  ddb_error err;
  int failed;
  int *stop_flag; /* shared: set to stop every job (atomic) */
} fanout_job;

/* A job thread's cancel hook: has the caller's thread said stop? */
static int fanout_stopped(void *arg) {
  return __atomic_load_n((int *)arg, __ATOMIC_ACQUIRE);
}

/* Run job j's chunks, one BatchGetItem each, until the first error (then
** j->failed and j->err; a cancellation stops the other jobs too).
** Returns NULL. */
static void *fanout_main(void *arg) {
  fanout_job *j = arg;
  int c;
  for(c = j->first; c * FANOUT_CHUNK < j->n_keys; c += j->stride) {
    int i0 = c * FANOUT_CHUNK;
    int n = j->n_keys - i0 < FANOUT_CHUNK ? j->n_keys - i0 : FANOUT_CHUNK;
    if(ddbc_batch_get(j->client, j->table, j->keys + i0, (size_t)n,
                      j->key_names, j->n_key_names, j->pol, j->found + i0,
                      &j->err)) {
      j->failed = 1;
      if(j->err.code == DDB_ERR_CANCELLED)
        __atomic_store_n(j->stop_flag, 1, __ATOMIC_RELEASE);
      break;
    }
  }
  return NULL;
}

/* A job run by a thread of its own: its cancel hook is the stop flag.
** Returns NULL. */
static void *fanout_thread(void *arg) {
  fanout_job *j = arg;
  ddb_cancel_thread(fanout_stopped, j->stop_flag);
  return fanout_main(arg);
}

/* See ddb_cache.h. */
ddb_result ddbc_batch_get_parallel(ddb_client *c, const char *table,
                                   const ddb_item *const *keys, size_t n,
                                   const char *const *key_names,
                                   int n_key_names, const ddbc_policy *pol,
                                   ddb_cancel_fn cancel, void *ud,
                                   ddb_item **found, ddb_error *err) {
  return ddbc_batch_get_fanout(c, table, keys, n, key_names, n_key_names, pol,
                               FANOUT_THREADS, cancel, ud, found, err);
}

/* See ddb_cache.h. */
ddb_result ddbc_batch_get_fanout(ddb_client *c, const char *table,
                                 const ddb_item *const *keys, size_t n,
                                 const char *const *key_names, int n_key_names,
                                 const ddbc_policy *pol, int n_threads,
                                 ddb_cancel_fn cancel, void *ud,
                                 ddb_item **found, ddb_error *err) {
  fanout_job *jobs;
  pthread_t *tids;
  int *started;
  int n_keys = (int)n;
  int chunk = (n_keys + FANOUT_CHUNK - 1) / FANOUT_CHUNK, n_run, i;
  int stopping = 0;
  ddb_result result = DDB_OK;
  if(n_threads > DDBC_MAX_THREADS)
    n_threads = DDBC_MAX_THREADS;
  n_run = chunk < n_threads ? chunk : n_threads;
  if(n_run <= 1)
    return ddbc_batch_get(c, table, keys, n, key_names, n_key_names, pol,
                          found, err);
  jobs = calloc((size_t)n_run, sizeof(*jobs));
  tids = calloc((size_t)n_run, sizeof(*tids));
  started = calloc((size_t)n_run, sizeof(*started));
  if(!jobs || !tids || !started) {
    free(jobs);
    free(tids);
    free(started);
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  }
  for(i = 0; i < n_run; i++) {
    memset(&jobs[i], 0, sizeof(jobs[i]));
    jobs[i].client = c;
    jobs[i].table = table;
    jobs[i].keys = keys;
    jobs[i].key_names = key_names;
    jobs[i].n_key_names = n_key_names;
    jobs[i].pol = pol;
    jobs[i].found = found;
    jobs[i].n_keys = n_keys;
    jobs[i].first = i;
    jobs[i].stride = n_run;
    jobs[i].stop_flag = &stopping;
    started[i] =
        i > 0 && pthread_create(&tids[i], NULL, fanout_thread, &jobs[i]) == 0;
  }
  /* this thread takes job 0, and any job whose thread did not start */
  for(i = 0; i < n_run; i++)
    if(i == 0 || !started[i])
      fanout_main(&jobs[i]);
  /* then waits for the others, watching for a cancel (which only this
  ** thread can ask for) to pass on to them */
  for(i = 1; i < n_run; i++) {
    while(started[i]) {
      struct timespec ts;
      ddbc_poll_deadline(&ts);
      if(pthread_timedjoin_np(tids[i], NULL, &ts) == 0)
        break;
      if(!__atomic_load_n(&stopping, __ATOMIC_ACQUIRE) && cancel && cancel(ud))
        __atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
    }
  }
  for(i = 0; i < n_run; i++)
    if(jobs[i].failed && result == DDB_OK) {
      *err = jobs[i].err;
      result = err->code ? err->code : DDB_ERR_SERVICE;
    }
  if(result)
    for(i = 0; i < n_keys; i++) {
      ddb_item_unref(found[i]);
      found[i] = NULL;
    }
  free(jobs);
  free(tids);
  free(started);
  return result;
}
