/*
** shared_fork.c -- the shared cache tier through the C API (libdyndb) with
** threads and fork(), against a real redis-server (tests/suites/60-redis.sh).
**
**    shared_fork ENDPOINT SHARED_CACHE_URL TABLE N
**
** TABLE holds the items {PK: "P#<i%10>", SK: "S#<iii>", v: "v<i>"} for i
** in 0..N-1 (tests/redis/shared_check.py setup).  Credentials come from
** the environment.  Prints one TAP line per check and exits 1 if any
** failed.
**
**   threads  8 threads read every key, 3 rounds, the process's cache
**            cleared between rounds: every answer right; the 2nd and 3rd
**            rounds make no request to DynamoDB (Redis answers), no
**            Redis error.
**   fork     the parent has pooled connections to Redis (TLS ones too,
**            with rediss://); 4 children and the parent then read every
**            key from Redis at once, 3 rounds each: every answer right
**            in each process, no Redis error, no DynamoDB request.  A
**            child that used the parent's socket would mix answers with
**            it, and one that ended the parent's TLS session would make
**            the parent's next command fail.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dyndb.h"

static const char *table;
static int n_keys;
static dyn_client *client;
static int n_test, n_failed;

static void tap(int ok, const char *what, const char *detail) {
  n_test++;
  if(!ok)
    n_failed++;
  printf("%sok %d - shared: %s\n", ok ? "" : "not ", n_test, what);
  if(!ok && detail)
    printf("#   %s\n", detail);
  fflush(stdout);
}

/* Read every key once; returns the number of wrong answers (detail in
** why). */
static int read_all(char *why, size_t cap) {
  int i, wrong = 0;
  for(i = 0; i < n_keys; i++) {
    char key[64], want[32];
    char *json = NULL;
    dyn_error err;
    snprintf(key, sizeof(key), "{\"PK\":\"P#%d\",\"SK\":\"S#%03d\"}", i % 10,
             i);
    snprintf(want, sizeof(want), "\"v\":\"v%d\"", i);
    if(dyn_get_json(client, table, key, 0, &json, &err) != DYN_OK || !json ||
       !strstr(json, want)) {
      if(!wrong)
        snprintf(why, cap, "key %d: %s", i, json ? json : err.message);
      wrong++;
    }
    dyn_free(json);
  }
  return wrong;
}

static pthread_barrier_t barrier;
static int thread_wrong;

static void *reader(void *arg) {
  char why[300];
  int round, w;
  (void)arg;
  for(round = 0; round < 3; round++) {
    pthread_barrier_wait(&barrier); /* the cache was cleared */
    w = read_all(why, sizeof(why));
    if(w) {
      __atomic_add_fetch(&thread_wrong, w, __ATOMIC_RELAXED);
      fprintf(stderr, "thread: %s\n", why);
    }
    pthread_barrier_wait(&barrier); /* the round is done */
  }
  return NULL;
}

static void test_threads(void) {
  pthread_t th[8];
  dyn_stats s1, s3;
  char detail[300];
  int i, round;
  dyn_cache_clear();
  pthread_barrier_init(&barrier, NULL, 9);
  for(i = 0; i < 8; i++)
    pthread_create(&th[i], NULL, reader, NULL);
  memset(&s1, 0, sizeof(s1));
  for(round = 0; round < 3; round++) {
    dyn_cache_clear();
    pthread_barrier_wait(&barrier);
    pthread_barrier_wait(&barrier);
    if(round == 0)
      dyn_stats_get(&s1);
  }
  for(i = 0; i < 8; i++)
    pthread_join(th[i], NULL);
  dyn_stats_get(&s3);
  tap(thread_wrong == 0, "threads: 8 threads x 3 rounds, every answer right",
      NULL);
  snprintf(detail, sizeof(detail),
           "GetItem requests %llu after round 1, %llu after round 3; shared "
           "hits %llu -> %llu, errors %llu, timeouts %llu",
           (unsigned long long)s1.op_requests[DYN_OP_GET_ITEM],
           (unsigned long long)s3.op_requests[DYN_OP_GET_ITEM],
           (unsigned long long)s1.shared_hits,
           (unsigned long long)s3.shared_hits,
           (unsigned long long)s3.shared_errors,
           (unsigned long long)s3.shared_timeouts);
  tap(s3.op_requests[DYN_OP_GET_ITEM] == s1.op_requests[DYN_OP_GET_ITEM] &&
          s3.shared_hits >= s1.shared_hits + 2 * (uint64_t)n_keys &&
          s3.shared_errors == 0 && s3.shared_timeouts == 0,
      "threads: rounds 2 and 3 answered by Redis, no DynamoDB request",
      detail);
}

/* One process's part of the fork test: 3 rounds from Redis; 0 if all
** right. */
static int fork_rounds(const char *who) {
  dyn_stats a, b;
  char why[300];
  int round, wrong = 0;
  dyn_stats_get(&a);
  for(round = 0; round < 3; round++) {
    dyn_cache_clear();
    wrong += read_all(why, sizeof(why));
  }
  dyn_stats_get(&b);
  if(wrong || b.shared_errors != a.shared_errors ||
     b.shared_timeouts != a.shared_timeouts ||
     b.op_requests[DYN_OP_GET_ITEM] != a.op_requests[DYN_OP_GET_ITEM] ||
     b.shared_hits < a.shared_hits + 3 * (uint64_t)n_keys) {
    fprintf(stderr,
            "%s: %d wrong (%s), shared errors +%llu, timeouts +%llu, "
            "GetItem +%llu, shared hits +%llu\n",
            who, wrong, wrong ? why : "-",
            (unsigned long long)(b.shared_errors - a.shared_errors),
            (unsigned long long)(b.shared_timeouts - a.shared_timeouts),
            (unsigned long long)(b.op_requests[DYN_OP_GET_ITEM] -
                                 a.op_requests[DYN_OP_GET_ITEM]),
            (unsigned long long)(b.shared_hits - a.shared_hits));
    return 1;
  }
  return 0;
}

static void test_fork(void) {
  pid_t kids[4];
  char why[300];
  int i, bad = 0, parent;
  /* warm: the keys are in Redis, connections pooled */
  read_all(why, sizeof(why));
  for(i = 0; i < 4; i++) {
    kids[i] = fork();
    if(kids[i] == 0)
      _exit(fork_rounds("child"));
  }
  parent = fork_rounds("parent");
  for(i = 0; i < 4; i++) {
    int st = 0;
    if(kids[i] < 0 || waitpid(kids[i], &st, 0) != kids[i] || !WIFEXITED(st) ||
       WEXITSTATUS(st) != 0)
      bad++;
  }
  tap(bad == 0, "fork: 4 children read from Redis at once, right answers",
      "a child failed (its line above)");
  tap(parent == 0, "fork: the parent's pooled connections still good",
      "the parent failed (its line above)");
  /* and after the children have exited (closing what they inherited) */
  tap(fork_rounds("parent after") == 0,
      "fork: the parent's connections good after the children exited", NULL);
}

int main(int argc, char **argv) {
  dyn_options o;
  dyn_error err;
  if(argc != 5) {
    fprintf(stderr, "usage: shared_fork ENDPOINT SHARED_CACHE_URL TABLE N\n");
    return 2;
  }
  dyn_options_init(&o);
  o.endpoint = argv[1];
  o.shared_cache = argv[2];
  o.shared_cache_timeout = 1.0; /* a loaded machine: no timeout here */
  table = argv[3];
  n_keys = (int)strtol(argv[4], NULL, 10);
  if(n_keys <= 0)
    n_keys = 10;
  if(dyn_client_new(&o, &client, &err) != DYN_OK) {
    printf("not ok 1 - shared: dyn_client_new: %s\n", err.message);
    return 1;
  }
  test_threads();
  test_fork();
  dyn_client_free(client);
  printf("1..%d\n", n_test);
  return n_failed ? 1 : 0;
}
