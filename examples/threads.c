/*
** threads.c -- many threads reading the same items through one client:
** the first read of each item goes to DynamoDB, every other one is a hit
** in the process-wide cache.  Then a parallel Scan (one thread per
** segment, inside the library), twice: the second one costs nothing.
**
**    cc threads.c $(pkg-config --cflags --libs dyndb) -pthread -o threads
**    ./threads [TABLE [THREADS [READS]]]   (default Store 8 1000; the
**                                           table of examples/lesson/)
**
** Standard output shows counts only, the same on every run; the time a
** cached read took goes to standard error.
*/
#include <dyndb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 64
#define N_KEYS      6

static const char *const key_sk[N_KEYS][2] = {
    {"CUSTOMER#alice", "PROFILE"},
    {"CUSTOMER#alice", "ORDER#2026-01-05#o-100"},
    {"CUSTOMER#alice", "ORDER#2026-02-10#o-101"},
    {"CUSTOMER#alice", "ORDER#2026-03-01#o-102"},
    {"CUSTOMER#bob", "PROFILE"},
    {"CUSTOMER#bob", "ORDER#2026-02-20#o-200"}};

static const char *table = "Store";
static dyn_client *client; /* one client, shared by every thread */
static dyn_item *keys[N_KEYS];
static long reads_per_thread = 1000;

typedef struct worker {
  pthread_t thread;
  int id;
  long found;      /* items read */
  dyn_code result; /* DYN_OK, or the first error */
  dyn_error err;
} worker;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *work(void *arg) {
  worker *w = arg;
  long i;
  for(i = 0; i < reads_per_thread; i++) {
    dyn_item *item = NULL;
    const dyn_item *key = keys[(i + w->id) % N_KEYS];
    w->result = dyn_get_item(client, table, key, 0, &item, &w->err);
    if(w->result)
      break;
    /* the item is immutable: any thread may read it, no lock needed */
    if(item &&
       dyn_value_equal(dyn_item_get(item, "SK"), dyn_item_get(key, "SK")))
      w->found++;
    dyn_item_unref(item);
  }
  return NULL;
}

/* One parallel Scan; prints its item count and the requests it made. */
static dyn_code scan(int segments, dyn_error *err) {
  dyn_scan s;
  dyn_iter *it = NULL;
  const dyn_item *item;
  dyn_stats a, b;
  dyn_code result;
  int n = 0;

  memset(&s, 0, sizeof(s));
  s.table = table;
  s.segments = segments;
  dyn_stats_get(&a);
  result = dyn_scan_open(client, &s, 0, &it, err);
  if(result)
    return result;
  while((result = dyn_iter_next(it, &item, err)) == DYN_OK && item)
    n++;
  dyn_iter_free(it);
  if(result)
    return result;
  dyn_stats_get(&b);
  printf("parallel Scan, %d segments: %d items, %llu Scan requests, %llu "
         "page hits\n",
         segments, n,
         (unsigned long long)(b.op_requests[DYN_OP_SCAN] -
                              a.op_requests[DYN_OP_SCAN]),
         (unsigned long long)(b.query_hits - a.query_hits));
  return DYN_OK;
}

int main(int argc, char **argv) {
  static worker workers[MAX_THREADS];
  dyn_item *found[N_KEYS] = {NULL};
  dyn_stats a, b;
  dyn_error err;
  dyn_code result;
  int n_threads = 8, i, started = 0;
  long total = 0;
  double t0, t;

  if(argc > 1)
    table = argv[1];
  if(argc > 2)
    n_threads = (int)strtol(argv[2], NULL, 10);
  if(argc > 3)
    reads_per_thread = strtol(argv[3], NULL, 10);
  if(n_threads < 1 || n_threads > MAX_THREADS || reads_per_thread < 1) {
    fprintf(stderr, "usage: threads [TABLE [THREADS (1-%d) [READS]]]\n",
            MAX_THREADS);
    return 2;
  }
  memset(&err, 0, sizeof(err));
  result = dyn_client_new(NULL, &client, &err);
  if(result)
    goto fail;
  for(i = 0; i < N_KEYS; i++) {
    dyn_builder *kb = dyn_builder_new();
    dyn_builder_s(kb, "PK", key_sk[i][0]);
    dyn_builder_s(kb, "SK", key_sk[i][1]);
    result = dyn_builder_finish(kb, &keys[i], &err);
    if(result)
      goto fail;
  }

  /* warm the cache: one BatchGetItem for the 6 items */
  dyn_stats_get(&a);
  result = dyn_batch_get(client, table, (const dyn_item *const *)keys, N_KEYS,
                         0, found, &err);
  if(result)
    goto fail;
  dyn_stats_get(&b);
  for(i = 0; i < N_KEYS; i++)
    total += found[i] != NULL;
  printf("warm-up: %ld of %d items, %llu BatchGetItem request, item misses "
         "+%llu\n",
         total, N_KEYS,
         (unsigned long long)(b.op_requests[DYN_OP_BATCH_GET_ITEM] -
                              a.op_requests[DYN_OP_BATCH_GET_ITEM]),
         (unsigned long long)(b.item_misses - a.item_misses));

  /* every thread reads every item, over and over */
  dyn_stats_get(&a);
  t0 = now();
  for(i = 0; i < n_threads; i++) {
    workers[i].id = i;
    if(pthread_create(&workers[i].thread, NULL, work, &workers[i]))
      break;
    started++;
  }
  for(i = 0; i < started; i++)
    pthread_join(workers[i].thread, NULL);
  t = now() - t0;
  dyn_stats_get(&b);
  if(started < n_threads) {
    fprintf(stderr, "threads: cannot start thread %d\n", started);
    result = DYN_ENOMEM;
    goto done;
  }
  total = 0;
  for(i = 0; i < n_threads; i++) {
    if(workers[i].result) {
      result = workers[i].result;
      err = workers[i].err;
      goto fail;
    }
    total += workers[i].found;
  }
  printf("%d threads x %ld GetItem: %ld items, item hits +%llu, misses "
         "+%llu, requests +%llu\n",
         n_threads, reads_per_thread, total,
         (unsigned long long)(b.item_hits - a.item_hits),
         (unsigned long long)(b.item_misses - a.item_misses),
         (unsigned long long)(b.requests - a.requests));
  fprintf(stderr, "threads: %.2f us per cached read, %.0f reads/s\n",
          t * 1e6 / (double)total, (double)total / t);

  result = scan(4, &err);
  if(!result)
    result = scan(4, &err);

fail:
  if(result)
    fprintf(stderr, "threads: %s: %s\n", dyn_code_name(result), err.message);
done:
  for(i = 0; i < N_KEYS; i++) {
    dyn_item_unref(found[i]);
    dyn_item_unref(keys[i]);
  }
  dyn_client_free(client);
  return result ? 1 : 0;
}
