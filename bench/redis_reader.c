/*
** redis_reader.c -- one reader process of make bench-redis (bench/redis.sh),
** on libdyndb.  Prints one line of numbers; asserts nothing.
**
**   redis_reader fleet ENDPOINT SHARED TABLE NKEYS OFFSET
**       read the keys K#00000 .. of TABLE, NKEYS of them, starting at key
**       OFFSET and wrapping around, 100 a BatchGetItem (dyn_batch_get);
**       prints: requests=<BatchGetItem requests> ms=<wall time>
**       keys=<keys read from DynamoDB> shared_hits=... shared_fills=...
**       lease_wins=... lease_waits=... lease_fallbacks=... lease_stale=...
**       missing=<keys not found>
**   redis_reader latency ENDPOINT SHARED TABLE NKEYS COUNT
**       COUNT GetItems of single keys with the process's cache off (its
**       budget 0): every one is answered by Redis when SHARED is a URL
**       (after a first pass that fills it), or by DynamoDB when SHARED is
**       "off"; prints the mean, median and 99th percentile in
**       microseconds.
**
** SHARED: a redis:// URL, or "off".
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dyndb.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static dyn_item *key_item(int i) {
  char json[64];
  dyn_item *it = NULL;
  snprintf(json, sizeof(json), "{\"PK\":\"K#%05d\",\"SK\":\"S\"}", i);
  dyn_item_from_json(json, 0, &it, NULL);
  return it;
}

static int fleet(dyn_client *c, const char *table, int n, int offset) {
  dyn_item *keys[100], *found[100];
  dyn_stats s0, s1;
  dyn_error err;
  double t0;
  int done, k, missing = 0;
  dyn_stats_get(&s0);
  t0 = now_ms();
  for(done = 0; done < n; done += 100) {
    int m = n - done < 100 ? n - done : 100;
    for(k = 0; k < m; k++)
      keys[k] = key_item((offset + done + k) % n);
    if(dyn_batch_get(c, table, (const dyn_item *const *)keys, (size_t)m, 0,
                     found, &err) != DYN_OK) {
      fprintf(stderr, "redis_reader: %s\n", err.message);
      return 1;
    }
    for(k = 0; k < m; k++) {
      if(!found[k])
        missing++;
      dyn_item_unref(found[k]);
      dyn_item_unref(keys[k]);
    }
  }
  dyn_stats_get(&s1);
  /* keys read from DynamoDB: the process's misses less Redis's hits */
  printf("requests=%llu ms=%.0f keys=%llu shared_hits=%llu shared_fills=%llu "
         "lease_wins=%llu lease_waits=%llu lease_fallbacks=%llu "
         "lease_stale=%llu missing=%d\n",
         (unsigned long long)(s1.op_requests[DYN_OP_BATCH_GET_ITEM] -
                              s0.op_requests[DYN_OP_BATCH_GET_ITEM]),
         now_ms() - t0,
         (unsigned long long)((s1.item_misses - s0.item_misses) -
                              (s1.shared_hits - s0.shared_hits)),
         (unsigned long long)(s1.shared_hits - s0.shared_hits),
         (unsigned long long)(s1.shared_fills - s0.shared_fills),
         (unsigned long long)(s1.shared_lease_wins - s0.shared_lease_wins),
         (unsigned long long)(s1.shared_lease_waits - s0.shared_lease_waits),
         (unsigned long long)(s1.shared_lease_fallbacks -
                              s0.shared_lease_fallbacks),
         (unsigned long long)(s1.shared_lease_stale - s0.shared_lease_stale),
         missing);
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int latency(dyn_client *c, const char *table, int n, int count) {
  double *us = calloc((size_t)count, sizeof(*us)), sum = 0;
  dyn_stats s0, s1;
  int i;
  if(!us)
    return 1;
  dyn_cache_set_budget(0);              /* nothing kept in the process */
  for(i = 0; i < count && i < n; i++) { /* fill Redis (if any) */
    dyn_item *k = key_item(i), *it = NULL;
    dyn_get_item(c, table, k, 0, &it, NULL);
    dyn_item_unref(it);
    dyn_item_unref(k);
  }
  dyn_stats_get(&s0);
  for(i = 0; i < count; i++) {
    dyn_item *k = key_item(i % n), *it = NULL;
    double t0 = now_ms();
    dyn_get_item(c, table, k, 0, &it, NULL);
    us[i] = (now_ms() - t0) * 1000;
    sum += us[i];
    dyn_item_unref(it);
    dyn_item_unref(k);
  }
  dyn_stats_get(&s1);
  qsort(us, (size_t)count, sizeof(*us), cmp_double);
  printf("mean_us=%.0f p50_us=%.0f p99_us=%.0f get_requests=%llu "
         "shared_hits=%llu\n",
         sum / count, us[count / 2], us[(count * 99) / 100],
         (unsigned long long)(s1.op_requests[DYN_OP_GET_ITEM] -
                              s0.op_requests[DYN_OP_GET_ITEM]),
         (unsigned long long)(s1.shared_hits - s0.shared_hits));
  free(us);
  return 0;
}

int main(int argc, char **argv) {
  dyn_options o;
  dyn_client *c = NULL;
  dyn_error err;
  int rc;
  if(argc != 7) {
    fprintf(stderr, "usage: redis_reader fleet|latency ENDPOINT SHARED "
                    "TABLE NKEYS OFFSET|COUNT\n");
    return 2;
  }
  dyn_options_init(&o);
  o.endpoint = argv[2];
  o.shared_cache = argv[3];
  o.shared_cache_timeout = 0.5;  /* a loaded machine: misses, not timeouts */
  if(getenv("BENCH_LEASE_WAIT")) /* -1: no leases */
    o.shared_lease_wait = strtod(getenv("BENCH_LEASE_WAIT"), NULL);
  if(dyn_client_new(&o, &c, &err) != DYN_OK) {
    fprintf(stderr, "redis_reader: %s\n", err.message);
    return 1;
  }
  if(strcmp(argv[1], "fleet") == 0)
    rc = fleet(c, argv[4], (int)strtol(argv[5], NULL, 10),
               (int)strtol(argv[6], NULL, 10));
  else
    rc = latency(c, argv[4], (int)strtol(argv[5], NULL, 10),
                 (int)strtol(argv[6], NULL, 10));
  dyn_client_free(c);
  return rc;
}
