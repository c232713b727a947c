/*
** stream.c -- a parallel Scan (or the Queries of a partition-key list) as
** one stream of pages.
**
** A Scan of N segments (TotalSegments=N) runs as W <= N workers, one
** thread each, each reading a segment page by page through the cache
** (ddbc_read_page), each with its own kept-alive connection from the
** client's pool.  A worker starts on segment i (its number) and, when a
** segment ends, takes the next segment no worker has taken yet: a worker
** whose segments are short reads more of them, so one long segment does
** not leave the others idle behind it.  Pages go through a bounded queue
** (STREAM_QUEUE_PER_WORKER page per worker) to the consumer, so memory
** stays O(workers x page) and rows reach the caller as pages arrive.  The first error stops every
** worker and is the stream's; freeing the stream early stops them too.
**
** The same machinery runs the Queries of a list of partition keys
** concurrently: there each unit of work is one partition, and the workers
** take the partitions in turn.
**
** Cancelling.  Only the consumer's thread may ask its cancel hook (the
** extension's asks SQLite, whose connection is that thread's): while it
** waits for a page, ddbc_stream_next polls the hook every
** DDB_CANCEL_POLL_MS and, when it says stop, stops the workers.  Each
** worker's own cancel hook (ddb_cancel_thread) is the stream's stop flag,
** so that a request in flight or a backoff sleep ends soon after.
**
** fork().  A stream is on live.c's list (rank DDB_LIVE_STREAM): its mu is
** taken before the fork and released after it.  Its workers are threads
** of the parent: in the child, a stream whose workers were still reading
** fails (ddbc_stream_next says so), and ddbc_stream_free there joins
** nothing; pages in the workers' hands stay unfreed in the child.  Pages
** queued before the fork are the child's to read when every worker had
** finished.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h> /* malloc_trim */
#endif

#include "cache_int.h"

/* Pages queued per worker at the most. */
#define STREAM_QUEUE_PER_WORKER 1

typedef struct stream_worker {
  struct ddbc_stream *s;
  int first; /* its first unit; then the next one not taken (next_unit) */
  int started;
  pthread_t tid;
} stream_worker;

struct ddbc_stream {
  pthread_mutex_t mu;
  pthread_cond_t cv; /* signalled on every queue or state change */
  ddb_page **q;      /* ring of pages, each a reference */
  int *q_unit;       /* the unit each queued page belongs to */
  int q_cap, q_head, q_len;
  int n_workers, n_running; /* workers started, and still producing */
  int n_units;              /* Scan segments, or Query partitions */
  int next_unit;            /* the next unit no worker has taken */
  ddb_av *pks;              /* Query: the partition keys (a copy of the
                               array; the bytes are the caller's); free() */
  int stopping;             /* the consumer is gone or an error happened */
  int failed;
  int n_held;           /* pages read and not yet taken by the consumer:
                           queued, or in a worker's hands waiting for room
                           (<= 2 x n_workers: see do_stream_note_peak) */
  long long held_bytes; /* their bytes (ddb_page.bytes) */
  ddb_error err;        /* the first error */
  ddb_client *client;
  ddb_read rd;     /* template: workers copy it (borrowed strings); its
                   ** limit sizes each unit's first request only
                   ** (LIMIT+OFFSET), or every request (limit_every) */
  int limit_every; /* DDBC_STREAM_LIMIT_EVERY */
  int first_only;  /* DDBC_STREAM_FIRST_PAGE */
  ddbc_policy pol;
  stream_worker *workers; /* free() */
  ddb_live live;          /* live.c's list, for fork() */
};

/* The most pages (and bytes) one stream held at once, process-wide, for
** dynamodb_stats.  Each worker holds at most one page outside the queue
** (it waits for room before reading the next), and the queue holds at
** most STREAM_QUEUE_PER_WORKER x workers: so at most 2 x workers pages,
** plus the one the consumer is reading. */
static int stream_peak_pages;
static long long stream_peak_bytes;

/* Note s's pages held now (s->mu held). */
static void do_stream_note_peak(const ddbc_stream *s) {
  if(s->n_held > __atomic_load_n(&stream_peak_pages, __ATOMIC_RELAXED))
    __atomic_store_n(&stream_peak_pages, s->n_held, __ATOMIC_RELAXED);
  if(s->held_bytes > __atomic_load_n(&stream_peak_bytes, __ATOMIC_RELAXED))
    __atomic_store_n(&stream_peak_bytes, s->held_bytes, __ATOMIC_RELAXED);
}

/* See ddb_cache.h. */
void ddbc_stream_peak(int *pages, long long *bytes) {
  *pages = __atomic_load_n(&stream_peak_pages, __ATOMIC_RELAXED);
  *bytes = __atomic_load_n(&stream_peak_bytes, __ATOMIC_RELAXED);
}

/* A worker's cancel hook: has the stream been stopped (an error, the
** consumer gone, a cancel seen by ddbc_stream_next)?  Takes s->mu. */
static int stream_stopped(void *arg) {
  ddbc_stream *s = arg;
  int stopping;
  pthread_mutex_lock(&s->mu);
  stopping = s->stopping;
  pthread_mutex_unlock(&s->mu);
  return stopping;
}

/* A worker's error: the first one is the stream's, and every worker stops
** (takes s->mu). */
static void stream_fail(ddbc_stream *s, const ddb_error *err) {
  pthread_mutex_lock(&s->mu);
  if(!s->failed) {
    s->failed = 1;
    s->err = *err;
  }
  s->stopping = 1;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

/* Point rd at unit of s (a partition of the list, or a segment of the
** Scan), from start (NULL: its first page), its limit the template's on
** the unit's first request (or every request: limit_every). */
static void unit_request(const ddbc_stream *s, ddb_read *rd, int unit,
                         ddb_item *start) {
  if(s->pks)
    rd->pk = s->pks[unit]; /* one partition of the list */
  else {
    rd->segment = unit; /* one segment of the Scan */
    rd->total_segments = s->n_units;
  }
  rd->start = start;
  rd->limit = start && !s->limit_every ? 0 : s->rd.limit;
}

/* Queue page pg of unit on s (taking its reference), waiting for room;
** takes s->mu.  Returns 1 when s is stopping (pg then released), else
** 0. */
static int queue_page(ddbc_stream *s, ddb_page *pg, int unit) {
  int stopping;
  pthread_mutex_lock(&s->mu);
  s->n_held++;
  s->held_bytes += (long long)pg->bytes;
  do_stream_note_peak(s);
  while(s->q_len == s->q_cap && !s->stopping)
    pthread_cond_wait(&s->cv, &s->mu);
  stopping = s->stopping;
  if(stopping) {
    s->n_held--;
    s->held_bytes -= (long long)pg->bytes;
  } else {
    s->q_unit[(s->q_head + s->q_len) % s->q_cap] = unit;
    s->q[(s->q_head + s->q_len) % s->q_cap] = pg;
    s->q_len++;
    pg = NULL;
    pthread_cond_broadcast(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
  ddb_page_unref(pg);
  return stopping;
}

/* The next unit of s no worker has taken (n_units: none left); takes
** s->mu. */
static int take_unit(ddbc_stream *s) {
  int unit;
  pthread_mutex_lock(&s->mu);
  unit = s->next_unit < s->n_units ? s->next_unit++ : s->n_units;
  pthread_mutex_unlock(&s->mu);
  return unit;
}

/* A worker thread: read its units to their ends, queueing each page (a
** unit's request, its page read and its LastEvaluatedKey checked, the
** page queued, the next unit when one ends).  An error stops the stream
** (stream_fail).  Returns NULL. */
static void *stream_worker_main(void *arg) {
  stream_worker *w = arg;
  ddbc_stream *s = w->s;
  ddb_read rd = s->rd;
  ddb_item *start = NULL;
  ddb_lek_guard lek;
  ddb_error err;
  int unit = w->first, stopping = 0;
  memset(&lek, 0, sizeof(lek));
  ddb_error_clear(&err);
  ddb_cancel_thread(stream_stopped, s);
  while(unit < s->n_units && !stopping) {
    ddb_page *pg = NULL;
    unit_request(s, &rd, unit, start);
    if(ddbc_read_page(s->client, &rd, &s->pol, &pg, &err)) {
      stream_fail(s, &err);
      break;
    }
    if(!start)
      ddb_lek_guard_free(&lek); /* a new unit's first page */
    if(ddb_lek_next(&lek, s->client, &rd, pg, &err)) {
      ddb_page_unref(pg);
      stream_fail(s, &err);
      break;
    }
    ddb_item_unref(start);
    start = s->first_only ? NULL : ddb_item_ref(pg->last_key);
    stopping = queue_page(s, pg, unit);
    /* give back what this thread's malloc arena holds from decoding the
    ** page (the response text, the parse tree): with N workers, glibc
    ** keeps N arenas, and RSS would grow by several MB per segment.  Not
    ** under AddressSanitizer: its allocator replaces glibc's, whose arenas
    ** malloc_trim would then walk uninitialised, from several workers at
    ** once (a SEGV in mtrim, 1 run in about 40 of suite 40's Scan) */
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
    malloc_trim(0);
#endif
    if(!start) /* this unit is done: the next one not taken */
      unit = take_unit(s);
  }
  ddb_item_unref(start);
  ddb_lek_guard_free(&lek);
  pthread_mutex_lock(&s->mu);
  s->n_running--;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/* Before fork() (live.c): s->mu taken. */
static void stream_fork_lock(void *obj) {
  ddbc_stream *s = obj;
  pthread_mutex_lock(&s->mu);
}

/* After fork(), in the parent: s->mu released. */
static void stream_fork_parent(void *obj) {
  ddbc_stream *s = obj;
  pthread_mutex_unlock(&s->mu);
}

/* After fork(), in the child: the workers are not this process's.  A
** stream they were still reading fails; none is ever joined here; the
** condition variable is made anew (its waiters were the parent's
** threads: glibc's pthread_cond_destroy would wait for them). */
static void stream_fork_child(void *obj) {
  ddbc_stream *s = obj;
  int i;
  if(s->n_running > 0) {
    s->n_running = 0;
    s->stopping = 1;
    if(!s->failed) {
      s->failed = 1;
      ddb_error_set(&s->err, DDB_ERR_CONFIG,
                    "this %s was started before fork(): its workers are in "
                    "the parent process; start it again in this one",
                    s->rd.pk_name ? "Query" : "Scan");
    }
  }
  for(i = 0; s->workers && i < s->n_workers; i++)
    s->workers[i].started = 0;
  pthread_cond_init(&s->cv, NULL);
  pthread_mutex_unlock(&s->mu);
}

static const ddb_live_ops stream_live_ops = {
    DDB_LIVE_STREAM, stream_fork_lock, stream_fork_parent, stream_fork_child};

/* See ddb_cache.h. */
void ddbc_stream_free(ddbc_stream *s) {
  int i;
  if(!s)
    return;
  pthread_mutex_lock(&s->mu);
  s->stopping = 1;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  for(i = 0; s->workers && i < s->n_workers; i++)
    if(s->workers[i].started)
      pthread_join(s->workers[i].tid, NULL);
  ddb_live_remove(&s->live); /* no fork handler reads s from here on */
  while(s->q_len > 0) {
    ddb_page_unref(s->q[s->q_head]);
    s->q_head = (s->q_head + 1) % s->q_cap;
    s->q_len--;
  }
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  free(s->workers);
  free(s->q);
  free(s->q_unit);
  free(s->pks);
  free(s);
}

/* See ddb_cache.h. */
ddb_result ddbc_stream_start(ddb_client *c, const ddb_read *r,
                             const ddbc_policy *pol, const ddb_av *pks,
                             int n_workers, int n_units, int flags,
                             ddbc_stream **out, ddb_error *err) {
  ddbc_stream *s = calloc(1, sizeof(*s));
  int i;
  *out = NULL;
  if(!s)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  ddb_live_add(&s->live, &stream_live_ops, s);
  s->q_cap = n_workers * STREAM_QUEUE_PER_WORKER;
  s->q = malloc(sizeof(ddb_page *) * (size_t)s->q_cap);
  s->q_unit = malloc(sizeof(int) * (size_t)s->q_cap);
  s->workers = calloc((size_t)n_workers, sizeof(stream_worker));
  s->n_workers = n_workers;
  s->next_unit = n_workers; /* worker i starts on unit i */
  s->n_units = n_units;
  s->client = c;
  s->rd = *r;
  s->limit_every = (flags & DDBC_STREAM_LIMIT_EVERY) != 0;
  s->first_only = (flags & DDBC_STREAM_FIRST_PAGE) != 0;
  s->pol = *pol;
  if(pks) {
    s->pks = malloc(sizeof(ddb_av) * (size_t)n_units);
    if(s->pks)
      memcpy(s->pks, pks, sizeof(ddb_av) * (size_t)n_units);
  }
  if(!s->q || !s->q_unit || !s->workers || (pks && !s->pks)) {
    ddbc_stream_free(s);
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  }
  for(i = 0; i < n_workers; i++) {
    s->workers[i].s = s;
    s->workers[i].first = i;
    pthread_mutex_lock(&s->mu);
    s->n_running++;
    pthread_mutex_unlock(&s->mu);
    if(pthread_create(&s->workers[i].tid, NULL, stream_worker_main,
                      &s->workers[i])) {
      pthread_mutex_lock(&s->mu);
      s->n_running--;
      s->stopping = 1;
      pthread_mutex_unlock(&s->mu);
      ddbc_stream_free(s);
      /* the system's limit on threads, not a request: a setup error */
      return ddb_error_set(err, DDB_ERR_CONFIG,
                           "cannot start scan worker %d of %d", i + 1,
                           n_workers);
    }
    pthread_mutex_lock(&s->mu); /* the fork handlers read it */
    s->workers[i].started = 1;
    pthread_mutex_unlock(&s->mu);
  }
  *out = s;
  return DDB_OK;
}

/* See ddb_cache.h. */
ddb_result ddbc_stream_next(ddbc_stream *s, ddb_cancel_fn cancel, void *ud,
                            ddb_page **out, int *unit, ddb_error *err) {
  *out = NULL;
  pthread_mutex_lock(&s->mu);
  while(s->q_len == 0 && s->n_running > 0 && !s->failed) {
    /* wait in slices, to see a cancel (only this thread may ask) */
    struct timespec ts;
    ddbc_poll_deadline(&ts);
    if(pthread_cond_timedwait(&s->cv, &s->mu, &ts) != 0 && s->q_len == 0 &&
       !s->failed && cancel && cancel(ud)) {
      s->failed = 1;
      s->stopping = 1;
      ddb_error_set(&s->err, DDB_ERR_CANCELLED, "interrupted: %s stopped",
                    s->rd.pk_name ? "Query" : "Scan");
      pthread_cond_broadcast(&s->cv);
    }
  }
  if(s->failed) {
    *err = s->err;
    pthread_mutex_unlock(&s->mu);
    return err->code ? err->code : DDB_ERR_SERVICE;
  }
  if(s->q_len > 0) {
    *out = s->q[s->q_head];
    s->n_held--;
    s->held_bytes -= (long long)(*out)->bytes;
    if(unit)
      *unit = s->q_unit[s->q_head];
    s->q_head = (s->q_head + 1) % s->q_cap;
    s->q_len--;
    pthread_cond_broadcast(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
  return DDB_OK;
}

/* See ddb_cache.h. */
int ddbc_stream_workers(const ddbc_stream *s) {
  return s->n_workers;
}

/* See ddb_cache.h. */
int ddbc_stream_done(ddbc_stream *s) {
  int n;
  pthread_mutex_lock(&s->mu);
  n = s->n_workers - s->n_running;
  pthread_mutex_unlock(&s->mu);
  return n;
}
