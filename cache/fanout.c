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
  ddb_client *pClient;
  const char *zTable;
  const ddb_item *const *aKey;
  const char *const *azKeyName;
  int nKeyName;
  const ddbc_policy *pol;
  ddb_item **aFound;
  int nKeys, iFirst, nStride; /* this thread's chunks: iFirst, +nStride.. */
  ddb_error err;
  int bFailed;
  int *pStop; /* shared: set to stop every job (atomic) */
} fanout_job;

/* A job thread's cancel hook: has the caller's thread said stop? */
static int fanout_stopped(void *pArg) {
  return __atomic_load_n((int *)pArg, __ATOMIC_ACQUIRE);
}

/* Run job j's chunks, one BatchGetItem each, until the first error (then
** j->bFailed and j->err; a cancellation stops the other jobs too).
** Returns NULL. */
static void *fanout_main(void *pArg) {
  fanout_job *j = pArg;
  int c;
  for(c = j->iFirst; c * FANOUT_CHUNK < j->nKeys; c += j->nStride) {
    int i0 = c * FANOUT_CHUNK;
    int n = j->nKeys - i0 < FANOUT_CHUNK ? j->nKeys - i0 : FANOUT_CHUNK;
    if(ddbc_batch_get(j->pClient, j->zTable, j->aKey + i0, (size_t)n,
                      j->azKeyName, j->nKeyName, j->pol, j->aFound + i0,
                      &j->err)) {
      j->bFailed = 1;
      if(j->err.code == DDB_ERR_CANCELLED)
        __atomic_store_n(j->pStop, 1, __ATOMIC_RELEASE);
      break;
    }
  }
  return NULL;
}

/* A job run by a thread of its own: its cancel hook is the stop flag.
** Returns NULL. */
static void *fanout_thread(void *pArg) {
  fanout_job *j = pArg;
  ddb_cancel_thread(fanout_stopped, j->pStop);
  return fanout_main(pArg);
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
  fanout_job *aJob;
  pthread_t *aTid;
  int *aStarted;
  int nKeys = (int)n;
  int nChunk = (nKeys + FANOUT_CHUNK - 1) / FANOUT_CHUNK, nThread, i;
  int bStop = 0;
  ddb_result result = DDB_OK;
  if(n_threads > DDBC_MAX_THREADS)
    n_threads = DDBC_MAX_THREADS;
  nThread = nChunk < n_threads ? nChunk : n_threads;
  if(nThread <= 1)
    return ddbc_batch_get(c, table, keys, n, key_names, n_key_names, pol,
                          found, err);
  aJob = calloc((size_t)nThread, sizeof(*aJob));
  aTid = calloc((size_t)nThread, sizeof(*aTid));
  aStarted = calloc((size_t)nThread, sizeof(*aStarted));
  if(!aJob || !aTid || !aStarted) {
    free(aJob);
    free(aTid);
    free(aStarted);
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  }
  for(i = 0; i < nThread; i++) {
    memset(&aJob[i], 0, sizeof(aJob[i]));
    aJob[i].pClient = c;
    aJob[i].zTable = table;
    aJob[i].aKey = keys;
    aJob[i].azKeyName = key_names;
    aJob[i].nKeyName = n_key_names;
    aJob[i].pol = pol;
    aJob[i].aFound = found;
    aJob[i].nKeys = nKeys;
    aJob[i].iFirst = i;
    aJob[i].nStride = nThread;
    aJob[i].pStop = &bStop;
    aStarted[i] =
        i > 0 && pthread_create(&aTid[i], NULL, fanout_thread, &aJob[i]) == 0;
  }
  /* this thread takes job 0, and any job whose thread did not start */
  for(i = 0; i < nThread; i++)
    if(i == 0 || !aStarted[i])
      fanout_main(&aJob[i]);
  /* then waits for the others, watching for a cancel (which only this
  ** thread can ask for) to pass on to them */
  for(i = 1; i < nThread; i++) {
    while(aStarted[i]) {
      struct timespec ts;
      ddbc_poll_deadline(&ts);
      if(pthread_timedjoin_np(aTid[i], NULL, &ts) == 0)
        break;
      if(!__atomic_load_n(&bStop, __ATOMIC_ACQUIRE) && cancel && cancel(ud))
        __atomic_store_n(&bStop, 1, __ATOMIC_RELEASE);
    }
  }
  for(i = 0; i < nThread; i++)
    if(aJob[i].bFailed && result == DDB_OK) {
      *err = aJob[i].err;
      result = err->code ? err->code : DDB_ERR_SERVICE;
    }
  if(result)
    for(i = 0; i < nKeys; i++) {
      ddb_item_unref(found[i]);
      found[i] = NULL;
    }
  free(aJob);
  free(aTid);
  free(aStarted);
  return result;
}
