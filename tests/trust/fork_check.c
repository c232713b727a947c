/*
** fork_check.c -- the C API across fork(), for tests/suites/25-trust-fork.sh.
**
**    fork_check conn  ENDPOINT TABLE OUTFILE
**    fork_check locks ENDPOINT TABLE
**
** conn: one client, one GetItem to open its kept-alive connection, then
** fork(); parent and child each issue GETS GetItems of random keys of
** partition F (items k000..k199 whose attribute v is their SK) and a
** PutItem (IF_NOT_EXISTS) every 8th step into partition W, SK
** "<parent|child>-<parent's pid>-<i>".  Every answer must be the item asked for; every
** put reported done is appended to OUTFILE (one SK a line), for the
** suite's boto3 check that it really is written.  Prints one line per
** process: "<role>: gets=N wrong=N errors=N puts=N put_errors=N".
**
** locks: a thread keeps taking the cache's and the client's locks (cached
** GetItems, uncached GetItems) while the main thread forks ROUNDS times;
** each child, under alarm(10), does a cached and an uncached GetItem and
** exits 0 when both answer right.  A child that hangs on a lock held by
** the other thread at fork time dies of SIGALRM.  Prints
** "locks: rounds=N hung=N failed=N".
*/
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dyndb.h"

#define GETS   400
#define ROUNDS 60

static const char *table;

/* A new client on endpoint; cache off (every GetItem goes out) unless
** cached. */
static dyn_client *client(const char *endpoint, int cached) {
  dyn_options o;
  dyn_client *c = NULL;
  dyn_error err;
  dyn_options_init(&o);
  o.endpoint = endpoint;
  o.timeout = 3;
  o.max_retries = 2;
  if(!cached) {
    o.item_ttl = DYN_OFF;
    o.query_ttl = DYN_OFF;
  }
  if(dyn_client_new(&o, &c, &err) != DYN_OK) {
    fprintf(stderr, "client: %s\n", err.message);
    exit(2);
  }
  return c;
}

/* GetItem F/k<n> through c: 1 when the answer is that item, 0 when it is
** another one or none, -1 on an error. */
static int get_one(dyn_client *c, int n, int flags) {
  char key[64], want[16];
  char *json = NULL;
  dyn_error err;
  int ok;
  snprintf(want, sizeof(want), "k%03d", n);
  snprintf(key, sizeof(key), "{\"PK\":\"F\",\"SK\":\"%s\"}", want);
  if(dyn_get_json(c, table, key, flags, &json, &err) != DYN_OK)
    return -1;
  /* the item's v is its SK, and only this item has that value */
  ok = json && strstr(json, "\"v\":\"") &&
       strstr(strstr(json, "\"v\":\""), want) == strstr(json, "\"v\":\"") + 5;
  dyn_free(json);
  return ok;
}

/* PutItem W/<sk> if it does not exist: 0 done, -1 failed. */
static int put_one(dyn_client *c, const char *sk) {
  char json[128];
  dyn_item *it = NULL;
  dyn_error err;
  int rc;
  snprintf(json, sizeof(json), "{\"PK\":\"W\",\"SK\":\"%s\",\"v\":\"%s\"}", sk,
           sk);
  if(dyn_item_from_json(json, 0, &it, &err) != DYN_OK)
    return -1;
  rc = dyn_put_item(c, table, it, DYN_IF_NOT_EXISTS, NULL, &err);
  dyn_item_unref(it);
  return rc == DYN_OK ? 0 : -1;
}

static int run_conn(const char *endpoint, const char *out) {
  dyn_client *c = client(endpoint, 0);
  int i, gets = 0, wrong = 0, errors = 0, puts = 0, put_errors = 0, st = 0;
  const char *role;
  unsigned seed;
  pid_t pid;
  FILE *f;
  int run;

  if(get_one(c, 0, 0) != 1) {
    fprintf(stderr, "conn: the first GetItem failed\n");
    return 2;
  }
  fflush(stdout);
  run = (int)getpid(); /* the puts' SKs are new on every run */
  pid = fork();
  if(pid < 0)
    return 2;
  role = pid == 0 ? "child" : "parent";
  seed = (unsigned)getpid();
  for(i = 0; i < GETS; i++) {
    int r = get_one(c, (int)(rand_r(&seed) % 200), 0);
    gets++;
    wrong += r == 0;
    errors += r < 0;
    if(i % 8 == 0) {
      char sk[32];
      snprintf(sk, sizeof(sk), "%s-%d-%d", role, run, i);
      if(put_one(c, sk) == 0) {
        puts++;
        f = fopen(out, "a");
        if(f) {
          fprintf(f, "%s\n", sk);
          fclose(f);
        }
      } else
        put_errors++;
    }
  }
  printf("%s: gets=%d wrong=%d errors=%d puts=%d put_errors=%d\n", role, gets,
         wrong, errors, puts, put_errors);
  fflush(stdout);
  if(pid == 0)
    _exit(wrong || errors || put_errors ? 1 : 0);
  waitpid(pid, &st, 0);
  dyn_client_free(c);
  return wrong || errors || put_errors || !WIFEXITED(st) ||
                 WEXITSTATUS(st) != 0
             ? 1
             : 0;
}

static volatile int stop;

/* Keep the locks busy: cached GetItems (the cache's lock), uncached ones
** (the client's pool, its credentials, the request log). */
static void *hammer(void *arg) {
  dyn_client **cs = arg;
  int i = 0;
  while(!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
    get_one(cs[i % 8 == 0 ? 1 : 0], i % 200, 0);
    i++;
  }
  return NULL;
}

static int run_locks(const char *endpoint) {
  dyn_client *cs[2];
  pthread_t t[2];
  int r, hung = 0, failed = 0, rounds = 0;
  cs[0] = client(endpoint, 1);
  cs[1] = client(endpoint, 0);
  for(r = 0; r < 200; r++)
    get_one(cs[0], r, 0); /* fill the cache */
  pthread_create(&t[0], NULL, hammer, cs);
  pthread_create(&t[1], NULL, hammer, cs);
  for(r = 0; r < ROUNDS; r++) {
    int st = 0;
    pid_t pid;
    usleep(2000);
    fflush(stdout);
    pid = fork();
    if(pid == 0) {
      alarm(10);
      _exit(get_one(cs[0], r % 200, 0) == 1 && get_one(cs[1], r % 200, 0) == 1
                ? 0
                : 1);
    }
    if(pid < 0)
      break;
    rounds++;
    waitpid(pid, &st, 0);
    if(WIFSIGNALED(st))
      hung++;
    else if(!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      failed++;
  }
  __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
  pthread_join(t[0], NULL);
  pthread_join(t[1], NULL);
  printf("locks: rounds=%d hung=%d failed=%d\n", rounds, hung, failed);
  dyn_client_free(cs[0]);
  dyn_client_free(cs[1]);
  return hung || failed || rounds != ROUNDS ? 1 : 0;
}

int main(int argc, char **argv) {
  if(argc >= 5 && strcmp(argv[1], "conn") == 0) {
    table = argv[3];
    return run_conn(argv[2], argv[4]);
  }
  if(argc >= 4 && strcmp(argv[1], "locks") == 0) {
    table = argv[3];
    return run_locks(argv[2]);
  }
  fprintf(stderr, "usage: fork_check conn ENDPOINT TABLE OUTFILE | "
                  "fork_check locks ENDPOINT TABLE\n");
  return 2;
}
