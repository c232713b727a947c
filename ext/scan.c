/*
** scan.c -- the parallel Scan (and IN-list Query) page stream, and the
** parallel BatchGetItem.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h> /* malloc_trim */
#endif

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "dd_ext.h"

/* ------------------------------------------------------------------------
** Parallel Scan
**
** With segments=N (N > 1), a Scan runs as N workers, one thread per
** segment (TotalSegments=N), each reading its segment page by page
** through the cache, each with its own kept-alive connection from the
** client's pool.  Pages go through a bounded queue (DD_QUEUE_PER_SEGMENT
** page per segment) to xNext, so memory stays O(segments x page) and rows
** stream to SQLite as pages arrive.  The first error stops every worker
** and fails the statement; closing the cursor early stops them too.
**
** The same machinery runs the Queries of a partition-key IN list
** concurrently: there each unit of work is one partition, and up to
** DD_MAX_IN_WORKERS workers take the partitions in turn.
*/
#define DD_MAX_IN_WORKERS    8
#define DD_QUEUE_PER_SEGMENT 1

typedef struct dd_worker {
  struct dd_pscan *s;
  int iSeg;
  int bStarted;
  pthread_t tid;
} dd_worker;

typedef struct dd_pscan {
  pthread_mutex_t mu;
  pthread_cond_t cv; /* signalled on every queue or state change */
  ddb_page **aQ;     /* ring of pages, each a reference */
  int *aQUnit;       /* the unit each queued page belongs to */
  int nQCap, iHead, nQ;
  int nWorker, nRunning; /* workers started, and still producing */
  int nUnit;             /* Scan segments, or Query partitions */
  const dd_val *aPk;     /* Query: the partition keys (the cursor's) */
  int bStop;             /* the consumer is gone or an error happened */
  int bFailed;
  int nHeld;           /* pages read and not yet taken by xNext: queued, or
                          in a worker's hands waiting for room (<= 2 x
                          nWorker: see dd_pscan_peak) */
  long long nHeldByte; /* their bytes (ddb_page.bytes) */
  ddb_error err;       /* the first error */
  ddb_client *pClient;
  ddb_read rd; /* template: workers copy it (borrowed strings); its limit
               ** sizes each unit's first request only (LIMIT+OFFSET) */
  ddbc_policy pol;
  dd_worker *aW;
} dd_pscan;

/* The most pages (and bytes) one parallel read held at once, process-wide,
** for dynamodb_stats.  Each worker holds at most one page outside the
** queue (it waits for room before reading the next), and the queue holds
** at most DD_QUEUE_PER_SEGMENT x workers: so at most 2 x segments pages,
** plus the one xNext is reading. */
static int dd_peak_pages;
static long long dd_peak_bytes;

/* Note s's pages held now (s->mu held). */
static void dd_pscan_peak(const dd_pscan *s) {
  if(s->nHeld > __atomic_load_n(&dd_peak_pages, __ATOMIC_RELAXED))
    __atomic_store_n(&dd_peak_pages, s->nHeld, __ATOMIC_RELAXED);
  if(s->nHeldByte > __atomic_load_n(&dd_peak_bytes, __ATOMIC_RELAXED))
    __atomic_store_n(&dd_peak_bytes, s->nHeldByte, __ATOMIC_RELAXED);
}

/* See dd_ext.h. */
void dd_scan_peak(int *pnPage, long long *pnByte) {
  *pnPage = __atomic_load_n(&dd_peak_pages, __ATOMIC_RELAXED);
  *pnByte = __atomic_load_n(&dd_peak_bytes, __ATOMIC_RELAXED);
}

/* A worker's cancel hook: has the statement stopped the scan (an error,
** the cursor closed, an interrupt seen by dd_pscan_next)? */
static int dd_worker_stopped(void *pArg) {
  dd_pscan *s = pArg;
  int bStop;
  pthread_mutex_lock(&s->mu);
  bStop = s->bStop;
  pthread_mutex_unlock(&s->mu);
  return bStop;
}

/* A worker's error: the first one is the scan's, and every worker stops
** (takes s->mu). */
static void dd_pscan_fail(dd_pscan *s, const ddb_error *err) {
  pthread_mutex_lock(&s->mu);
  if(!s->bFailed) {
    s->bFailed = 1;
    s->err = *err;
  }
  s->bStop = 1;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

/* A worker: read segment w->iSeg to its end, queueing each page. */
static void *dd_worker_main(void *pArg) {
  dd_worker *w = pArg;
  dd_pscan *s = w->s;
  ddb_read rd = s->rd;
  ddb_item *pStart = NULL;
  ddb_lek_guard lek;
  ddb_error err;
  int iUnit = w->iSeg, bStop = 0;
  memset(&lek, 0, sizeof(lek));
  ddb_error_clear(&err);
  ddb_cancel_thread(dd_worker_stopped, s);
  while(iUnit < s->nUnit && !bStop) {
    ddb_page *pg = NULL;
    if(rd.pk_name)
      rd.pk = s->aPk[iUnit].av; /* one partition of the IN list */
    else {
      rd.segment = iUnit; /* one segment of the Scan */
      rd.total_segments = s->nUnit;
    }
    rd.start = pStart;
    rd.limit = pStart ? 0 : s->rd.limit;
    if(ddbc_read_page(s->pClient, &rd, &s->pol, &pg, &err)) {
      dd_pscan_fail(s, &err);
      break;
    }
    if(!pStart)
      ddb_lek_guard_free(&lek); /* a new unit's first page */
    if(ddb_lek_next(&lek, rd.pk_name ? "Query" : "Scan", rd.table,
                    pg->last_key, &err)) {
      ddb_page_unref(pg);
      dd_pscan_fail(s, &err);
      break;
    }
    ddb_item_unref(pStart);
    pStart = ddb_item_ref(pg->last_key);
    pthread_mutex_lock(&s->mu);
    s->nHeld++;
    s->nHeldByte += (long long)pg->bytes;
    dd_pscan_peak(s);
    while(s->nQ == s->nQCap && !s->bStop)
      pthread_cond_wait(&s->cv, &s->mu);
    bStop = s->bStop;
    if(bStop) {
      s->nHeld--;
      s->nHeldByte -= (long long)pg->bytes;
    } else {
      s->aQUnit[(s->iHead + s->nQ) % s->nQCap] = iUnit;
      s->aQ[(s->iHead + s->nQ) % s->nQCap] = pg;
      s->nQ++;
      pg = NULL;
      pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    ddb_page_unref(pg);
    /* give back what this thread's malloc arena holds from decoding the
    ** page (the response text, the parse tree): with N workers, glibc
    ** keeps N arenas, and RSS would grow by several MB per segment */
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    if(!pStart)
      iUnit += s->nWorker; /* this unit is done: the next one */
  }
  ddb_item_unref(pStart);
  ddb_lek_guard_free(&lek);
  pthread_mutex_lock(&s->mu);
  s->nRunning--;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/* Stop the workers, wait for them, and free s (NULL is fine). */
void dd_pscan_free(dd_pscan *s) {
  int i;
  if(!s)
    return;
  pthread_mutex_lock(&s->mu);
  s->bStop = 1;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  for(i = 0; s->aW && i < s->nWorker; i++)
    if(s->aW[i].bStarted)
      pthread_join(s->aW[i].tid, NULL);
  while(s->nQ > 0) {
    ddb_page_unref(s->aQ[s->iHead]);
    s->iHead = (s->iHead + 1) % s->nQCap;
    s->nQ--;
  }
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  sqlite3_free(s->aW);
  sqlite3_free(s->aQ);
  sqlite3_free(s->aQUnit);
  sqlite3_free(s);
}

/* See dd_ext.h. */
int dd_pscan_workers(const dd_pscan *s) {
  return s->nWorker;
}

/* Start nSeg workers on nUnit units of the cursor's read (its rd is the
** template): Scan segments, or the partitions of a Query's IN list.
** Returns an SQLite code; on error the cursor's pScan is freed by
** dd_cursor_reset as usual. */
int dd_pscan_start(dd_cursor *pCur, int nSeg, int nUnit) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  dd_pscan *s = sqlite3_malloc(sizeof(*s));
  int i;
  if(!s)
    return SQLITE_NOMEM;
  memset(s, 0, sizeof(*s));
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  s->nQCap = nSeg * DD_QUEUE_PER_SEGMENT;
  s->aQ = sqlite3_malloc64(sizeof(ddb_page *) * (sqlite3_uint64)s->nQCap);
  s->aQUnit = sqlite3_malloc64(sizeof(int) * (sqlite3_uint64)s->nQCap);
  s->aW = sqlite3_malloc64(sizeof(dd_worker) * (sqlite3_uint64)nSeg);
  s->nWorker = nSeg;
  s->nUnit = nUnit;
  s->aPk = pCur->aPk;
  s->pClient = p->pClient;
  s->rd = pCur->rd;
  s->rd.limit = pCur->nLimit;
  s->pol = p->pol;
  if(pCur->pPath && pCur->pPath->pIdx->name && !pCur->pPath->pIdx->is_local)
    s->pol.consistent = 0; /* a GSI: see dd_next_page */
  pCur->pScan = s;
  if(!s->aQ || !s->aQUnit || !s->aW)
    return SQLITE_NOMEM;
  memset(s->aW, 0, sizeof(dd_worker) * (size_t)nSeg);
  for(i = 0; i < nSeg; i++) {
    s->aW[i].s = s;
    s->aW[i].iSeg = i;
    pthread_mutex_lock(&s->mu);
    s->nRunning++;
    pthread_mutex_unlock(&s->mu);
    if(pthread_create(&s->aW[i].tid, NULL, dd_worker_main, &s->aW[i])) {
      pthread_mutex_lock(&s->mu);
      s->nRunning--;
      s->bStop = 1;
      pthread_mutex_unlock(&s->mu);
      dd_error(p, "cannot start scan worker %d of %d", i + 1, nSeg);
      return SQLITE_ERROR;
    }
    s->aW[i].bStarted = 1;
  }
  return SQLITE_OK;
}

/* The next page from the workers (a reference), or *ppg NULL when every
** segment is done.  Returns SQLITE_OK or the first worker's error. */
int dd_pscan_next(dd_cursor *pCur, ddb_page **ppg) {
  dd_pscan *s = pCur->pScan;
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  *ppg = NULL;
  pthread_mutex_lock(&s->mu);
  while(s->nQ == 0 && s->nRunning > 0 && !s->bFailed) {
    /* wait in slices, to see an interrupt (only this thread may ask) */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += DDB_CANCEL_POLL_MS * 1000000L;
    if(ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    if(pthread_cond_timedwait(&s->cv, &s->mu, &ts) != 0 && s->nQ == 0 &&
       !s->bFailed && dd_interrupted(p->db)) {
      s->bFailed = 1;
      s->bStop = 1;
      ddb_error_set(&s->err, DDB_ERR_CANCELLED, "interrupted: %s stopped",
                    s->rd.pk_name ? "Query" : "Scan");
      pthread_cond_broadcast(&s->cv);
    }
  }
  if(s->bFailed) {
    ddb_error e = s->err;
    pthread_mutex_unlock(&s->mu);
    return dd_cursor_error(pCur, &e);
  }
  if(s->nQ > 0) {
    *ppg = s->aQ[s->iHead];
    s->nHeld--;
    s->nHeldByte -= (long long)(*ppg)->bytes;
    if(s->rd.pk_name)
      pCur->iPk = s->aQUnit[s->iHead]; /* the partition of this page */
    s->iHead = (s->iHead + 1) % s->nQCap;
    s->nQ--;
    pthread_cond_broadcast(&s->cv);
  }
  pCur->nSegDone = s->nWorker - s->nRunning;
  pthread_mutex_unlock(&s->mu);
  return SQLITE_OK;
}

/* BatchGetItem of many keys with several calls in flight: the keys are
** cut into chunks of DD_BATCH_CHUNK (one call each, through the cache)
** and up to DD_BATCH_THREADS threads take the chunks in turn. */
#define DD_BATCH_CHUNK   100
#define DD_BATCH_THREADS 4

typedef struct dd_batch_job {
  dd_vtab *p;
  ddb_item **aKey;
  ddb_item **aFound;
  int nKeys, iFirst, nStride; /* this thread's chunks: iFirst, +nStride.. */
  ddb_error err;
  int bFailed;
  int *pStop; /* shared: set to stop every job (atomic) */
} dd_batch_job;

/* A job thread's cancel hook: has the statement's thread said stop? */
static int dd_batch_stopped(void *pArg) {
  return __atomic_load_n((int *)pArg, __ATOMIC_ACQUIRE);
}

static void *dd_batch_main(void *pArg) {
  dd_batch_job *j = pArg;
  int c;
  for(c = j->iFirst; c * DD_BATCH_CHUNK < j->nKeys; c += j->nStride) {
    int i0 = c * DD_BATCH_CHUNK;
    int n = j->nKeys - i0 < DD_BATCH_CHUNK ? j->nKeys - i0 : DD_BATCH_CHUNK;
    if(ddbc_batch_get(j->p->pClient, j->p->pDesc->name,
                      (const ddb_item *const *)j->aKey + i0, (size_t)n,
                      j->p->azKey, j->p->nKey, &j->p->pol, j->aFound + i0,
                      &j->err)) {
      j->bFailed = 1;
      if(j->err.code == DDB_ERR_CANCELLED)
        __atomic_store_n(j->pStop, 1, __ATOMIC_RELEASE);
      break;
    }
  }
  return NULL;
}

/* A job run by a thread of its own: the hook is the stop flag. */
static void *dd_batch_thread(void *pArg) {
  dd_batch_job *j = pArg;
  ddb_cancel_thread(dd_batch_stopped, j->pStop);
  return dd_batch_main(pArg);
}

/* Look up aKey[0..nKeys) into aFound[] (found items or NULL).  Returns
** DDB_OK, or the first error (then aFound holds nothing). */
ddb_result dd_batch_get_parallel(dd_vtab *p, ddb_item **aKey, int nKeys,
                                 ddb_item **aFound, ddb_error *err) {
  dd_batch_job aJob[DD_BATCH_THREADS];
  pthread_t aTid[DD_BATCH_THREADS];
  int nChunk = (nKeys + DD_BATCH_CHUNK - 1) / DD_BATCH_CHUNK, nThread, i;
  int aStarted[DD_BATCH_THREADS];
  int bStop = 0;
  ddb_result result = DDB_OK;
  nThread = nChunk < DD_BATCH_THREADS ? nChunk : DD_BATCH_THREADS;
  if(nThread <= 1)
    return ddbc_batch_get(p->pClient, p->pDesc->name,
                          (const ddb_item *const *)aKey, (size_t)nKeys,
                          p->azKey, p->nKey, &p->pol, aFound, err);
  for(i = 0; i < nThread; i++) {
    memset(&aJob[i], 0, sizeof(aJob[i]));
    aJob[i].p = p;
    aJob[i].aKey = aKey;
    aJob[i].aFound = aFound;
    aJob[i].nKeys = nKeys;
    aJob[i].iFirst = i;
    aJob[i].nStride = nThread;
    aJob[i].pStop = &bStop;
    aStarted[i] = i > 0 && pthread_create(&aTid[i], NULL, dd_batch_thread,
                                          &aJob[i]) == 0;
  }
  /* this thread takes job 0, and any job whose thread did not start */
  for(i = 0; i < nThread; i++)
    if(i == 0 || !aStarted[i])
      dd_batch_main(&aJob[i]);
  /* then waits for the others, watching for an interrupt (which only this
  ** thread can see) to pass on to them */
  for(i = 1; i < nThread; i++) {
    while(aStarted[i]) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += DDB_CANCEL_POLL_MS * 1000000L;
      if(ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
      }
      if(pthread_timedjoin_np(aTid[i], NULL, &ts) == 0)
        break;
      if(!__atomic_load_n(&bStop, __ATOMIC_ACQUIRE) && dd_interrupted(p->db))
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
      ddb_item_unref(aFound[i]);
      aFound[i] = NULL;
    }
  return result;
}
