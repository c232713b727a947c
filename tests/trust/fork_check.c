/*
** fork_check.c -- the C API across fork(), for tests/suites/25-trust-fork.sh.
**
**    fork_check conn  ENDPOINT TABLE OUTFILE
**    fork_check locks ENDPOINT TABLE [REDIS_URL]
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
** locks: threads (niced below the main thread, FORK_THREADS of them) keep
** taking every lock a child can take while the main thread forks
** FORK_ROUNDS times (default ROUNDS).  "Dead": a client on a loopback
** port nobody listens on, no retry, so each call is signed (paced,
** metered) and then refused at once, and the thread spends its time in
** the client rather than waiting for a server:
**   sign   GetItems through a dead uncached client (sigv4.c's signing-key
**          cache and its mutex, the client's pool and credentials, the
**          request log);
**   rate   GetItems through a dead client with max_rcu and a meter
**          (rate.c's buckets, meter.c);
**   cold   a new dead client a step, its first GetItem (a signing key
**          derived: the cold path), the client freed (live.c's list);
**   cache  cached GetItems and PutItems on the server (the cache's tables,
**          principals, store and hot keys, a dyn_client's table list);
**   Redis  with REDIS_URL: GetItems through the shared tier, the process's
**          cache cleared every 8 steps (shared.c's registry and pools).
** Before every SCAN_EVERY-th fork the main thread starts a parallel Scan
** (cache/stream.c, 4 workers) and takes its first page.  Each child,
** under alarm(HANG_S or FORK_HANG_S), makes one call of each kind on the
** same clients (sign's, rate's and cold's must be refused, rate's
** counted by the meter; the others must answer right), reads the Scan
** (pages, or the error naming fork()) and frees it, and exits 0.  A child
** that hangs on a lock held by another thread at the fork dies of
** SIGALRM: a hang, counted by the step it was in.  After MAX_HANGS hangs
** the forks stop.  Prints "locks: rounds=N hung=N failed=N" and the steps.
** FORK_NO_SCAN=1 leaves the Scans out; FORK_SCAN_SETTLE_MS=N waits N ms
** after beginning a Scan, so that its worker threads have read their pages
** and wait (under ASan, whose allocator a child forked while a thread
** allocates finds locked: suite 25).
**
** A hang at 1 fork in 60 (issue 28) goes unseen in 400 rounds with a
** probability of (59/60)^400 < 0.2%.
*/
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/dyndb.h"
#include "cache/ddb_cache.h"

#define GETS       400
#define ROUNDS     400
#define HANG_S     5
#define MAX_HANGS  3
#define SCAN_EVERY 8

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

/* An environment variable as a number, or dflt. */
static int env_int(const char *name, int dflt) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : dflt;
}

/* The clients of run_locks, made before its threads start.  "dead": on a
** loopback port nobody listens on, no retry: each call is signed (and
** paced, and metered), then refused at once. */
static struct {
  dyn_client *sign;  /* dead, uncached */
  dyn_client *cache; /* cached */
  dyn_client *redis; /* cached, shared tier; NULL without REDIS_URL */
  ddb_client *rate;  /* dead, max_rcu, a meter */
  ddb_client *scan;  /* the server, for the Scans */
  ddb_meter meter;
  ddb_item *key; /* F/k000, for rate */
  char dead[64]; /* the dead endpoint */
} L;

/* A client on the dead endpoint: uncached, no retry. */
static dyn_client *dead_client(void) {
  dyn_options o;
  dyn_client *c = NULL;
  dyn_error err;
  dyn_options_init(&o);
  o.endpoint = L.dead;
  o.timeout = 3;
  o.max_retries = 0;
  o.item_ttl = DYN_OFF;
  o.query_ttl = DYN_OFF;
  if(dyn_client_new(&o, &c, &err) != DYN_OK) {
    fprintf(stderr, "client: %s\n", err.message);
    _exit(2);
  }
  return c;
}

/* GetItem F/k000 through L.rate (the rate limiter's lock, then the meter,
** then refused): 1 when it failed as it must and the meter counted it. */
static int rate_get(void) {
  ddb_item *out = NULL;
  ddb_error err;
  uint64_t before =
      __atomic_load_n(&L.meter.requests[DDB_OP_GET_ITEM], __ATOMIC_RELAXED);
  ddb_error_clear(&err);
  if(ddb_get_item(L.rate, table, L.key, 0, &out, &err) == DDB_OK) {
    ddb_item_unref(out);
    return 0;
  }
  return __atomic_load_n(&L.meter.requests[DDB_OP_GET_ITEM],
                         __ATOMIC_RELAXED) > before;
}

/* A new client (live.c's list), its first GetItem (its signing key
** derived: the cold path), freed: 1 when the GetItem was refused. */
static int cold_get(int n) {
  dyn_client *c = dead_client();
  int r = get_one(c, n, 0);
  dyn_client_free(c);
  return r == -1;
}

/* A cached GetItem, and every 16th step a PutItem, through L.cache. */
static void cache_step(int i) {
  if(i % 16 == 0) {
    char json[128];
    dyn_item *it = NULL;
    dyn_error err;
    snprintf(json, sizeof(json),
             "{\"PK\":\"W\",\"SK\":\"locks-%d\",\"v\":\"locks-%d\"}",
             i / 16 % 10, i / 16 % 10);
    if(dyn_item_from_json(json, 0, &it, &err) == DYN_OK)
      dyn_put_item(L.cache, table, it, 0, NULL, &err);
    dyn_item_unref(it);
  } else
    get_one(L.cache, i % 200, 0);
}

/* The threads of run_locks: arg names the kind. */
static void *hammer(void *arg) {
  const char *kind = arg;
  int i = 0;
  /* below the main thread and its children, which then wait less for a
  ** core: more rounds a second (Linux: a thread's own nice value) */
  if(env_int("FORK_NICE", 1))
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
  while(!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
    switch(kind[0]) {
    case 's': get_one(L.sign, i % 200, 0); break;
    case 'r': rate_get(); break;
    case 'o': cold_get(i % 200); break;
    case 'c': cache_step(i); break;
    case 'R':
      if(i % 8 == 0)
        dyn_cache_clear(); /* the next GetItems ask Redis */
      get_one(L.redis, i % 200, 0);
      break;
    }
    i++;
  }
  return NULL;
}

/* A parallel Scan of table (4 segments and workers, 2 items a request,
** uncached), its first page taken: the stream, or NULL. */
static ddbc_stream *scan_start(void) {
  ddb_read rd;
  ddbc_policy pol = {.consistent = 0}; /* nothing cached */
  ddbc_stream *st = NULL;
  ddb_page *pg = NULL;
  ddb_error err;
  memset(&rd, 0, sizeof(rd));
  rd.table = table;
  rd.limit = 2;
  ddb_error_clear(&err);
  if(ddbc_stream_start(L.scan, &rd, &pol, NULL, 4, 4, DDBC_STREAM_LIMIT_EVERY,
                       &st, &err)) {
    fprintf(stderr, "scan: %s\n", err.message);
    return NULL;
  }
  ddbc_stream_next(st, NULL, NULL, &pg, NULL, &err);
  ddb_page_unref(pg);
  return st;
}

/* In the child: read the rest of the Scan st was (pages, or an error that
** names fork()), then free it.  Returns 0, or 1 on another error. */
static int scan_child(ddbc_stream *st) {
  ddb_page *pg = NULL;
  ddb_error err;
  int rc = 0;
  ddb_error_clear(&err);
  while(ddbc_stream_next(st, NULL, NULL, &pg, NULL, &err) == DDB_OK && pg) {
    ddb_page_unref(pg);
    pg = NULL;
  }
  if(err.code && !strstr(err.message, "fork()")) {
    fprintf(stderr, "child: scan: %s\n", err.message);
    rc = 1;
  }
  ddbc_stream_free(st);
  return rc;
}

/* The steps of a child, by number (1..). */
static const char *const steps[] = {"",      "sign",  "rate", "cold",
                                    "cache", "redis", "scan"};
#define N_STEPS 7
static volatile int *step; /* shared with the children: the step begun */

/* The child of round r: one call of each kind, on the clients the threads
** are using; the step that failed (0: none).  *step says which step it is
** in, for the parent to name the one a hung child was stuck in. */
static int child_round(int r, ddbc_stream *st) {
  int k = r % 200;
  if((*step = 1, get_one(L.sign, k, 0)) != -1) /* refused, once signed */
    return 1;
  if((*step = 2, rate_get()) != 1)
    return 2;
  if((*step = 3, cold_get(k)) != 1)
    return 3;
  if((*step = 4, get_one(L.cache, k, 0)) != 1)
    return 4;
  if((*step = 5, L.redis) && get_one(L.redis, k, 0) != 1)
    return 5;
  if((*step = 6, st) && scan_child(st))
    return 6;
  *step = 0;
  return 0;
}

/* A loopback port nobody listens on, held (bound, not listening) by the
** socket returned in *fd so that no one else takes it: connecting to it is
** refused at once. */
static int dead_port(int *fd) {
  struct sockaddr_in a;
  socklen_t n = sizeof(a);
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  *fd = socket(AF_INET, SOCK_STREAM, 0);
  if(*fd < 0 || bind(*fd, (struct sockaddr *)&a, sizeof(a)) ||
     getsockname(*fd, (struct sockaddr *)&a, &n))
    return -1;
  return ntohs(a.sin_port);
}

/* Make L's clients and key; exits on failure. */
static void locks_clients(const char *endpoint, const char *redis) {
  const char *kjson = "{\"PK\":\"F\",\"SK\":\"k000\"}";
  dyn_options o;
  dyn_error derr;
  ddb_config cfg;
  ddb_error err;
  L.sign = dead_client();
  L.cache = client(endpoint, 1);
  if(redis) {
    dyn_options_init(&o);
    o.endpoint = endpoint;
    o.timeout = 3;
    o.shared_cache = redis;
    o.shared_cache_timeout = 1;
    if(dyn_client_new(&o, &L.redis, &derr) != DYN_OK) {
      fprintf(stderr, "client: %s\n", derr.message);
      exit(2);
    }
  }
  memset(&cfg, 0, sizeof(cfg));
  cfg.endpoint = L.dead;
  cfg.timeout = 3;
  cfg.max_retries = 0;
  cfg.max_rcu = 1e6; /* every request takes the bucket's lock, none waits */
  ddb_error_clear(&err);
  if(ddb_client_new(&cfg, &L.rate, &err) ||
     ddb_item_from_json(kjson, strlen(kjson), NULL, &L.key, &err)) {
    fprintf(stderr, "client: %s\n", err.message);
    exit(2);
  }
  cfg.endpoint = endpoint;
  cfg.max_rcu = 0;
  if(ddb_client_new(&cfg, &L.scan, &err)) {
    fprintf(stderr, "client: %s\n", err.message);
    exit(2);
  }
  ddb_meter_reset(&L.meter, 1);
  ddb_client_set_meter(L.rate, &L.meter);
}

static int run_locks(const char *endpoint, const char *redis) {
  static const char *kinds[] = {"sign", "rate", "cold", "cache", "Redis"};
  int n_threads = redis ? 5 : 4;
  pthread_t t[5];
  int r, hung = 0, failed = 0, rounds = 0, first_step = 0, fd, port, i;
  int hung_at[N_STEPS] = {0};
  int max_rounds = env_int("FORK_ROUNDS", ROUNDS);
  int no_scan = env_int("FORK_NO_SCAN", 0);
  int settle_ms = env_int("FORK_SCAN_SETTLE_MS", 0);
  unsigned hang_s = (unsigned)env_int("FORK_HANG_S", HANG_S);

  step = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE,
              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  port = dead_port(&fd);
  if(step == MAP_FAILED || port < 0) {
    perror("fork_check: mmap or a loopback port");
    return 2;
  }
  snprintf(L.dead, sizeof(L.dead), "http://127.0.0.1:%d", port);
  locks_clients(endpoint, redis);
  n_threads = env_int("FORK_THREADS", n_threads);
  for(r = 0; r < 200; r++) {
    get_one(L.cache, r, 0); /* fill the cache */
    if(L.redis)
      get_one(L.redis, r, 0); /* and Redis */
  }
  for(i = 0; i < n_threads; i++)
    pthread_create(&t[i], NULL, hammer, (void *)kinds[i]);
  for(r = 0; r < max_rounds && hung < MAX_HANGS; r++) {
    int st = 0;
    ddbc_stream *scan = no_scan || r % SCAN_EVERY ? NULL : scan_start();
    pid_t pid;
    if(scan && settle_ms) /* its workers done or waiting, not allocating */
      usleep((useconds_t)settle_ms * 1000);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if(pid == 0) {
      alarm(hang_s);
      _exit(child_round(r, scan));
    }
    if(pid < 0) {
      ddbc_stream_free(scan);
      break;
    }
    rounds++;
    waitpid(pid, &st, 0);
    ddbc_stream_free(scan);
    if(WIFSIGNALED(st)) {
      hung++;
      hung_at[*step >= 0 && *step < N_STEPS ? *step : 0]++;
    } else if(!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      failed++;
      if(!first_step)
        first_step = WEXITSTATUS(st);
    }
  }
  __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
  for(i = 0; i < n_threads; i++)
    pthread_join(t[i], NULL);
  printf("locks: rounds=%d hung=%d failed=%d (%d threads%s)\n", rounds, hung,
         failed, n_threads, redis ? ", Redis" : "");
  for(i = 1; i < N_STEPS; i++)
    if(hung_at[i])
      printf("locks: %d hung in step %s\n", hung_at[i], steps[i]);
  if(first_step)
    printf("locks: the first failed child failed in step %s\n",
           steps[first_step < N_STEPS ? first_step : 0]);
  if(hung >= MAX_HANGS)
    printf("locks: stopped after %d hangs\n", hung);
  dyn_client_free(L.sign);
  dyn_client_free(L.cache);
  dyn_client_free(L.redis);
  ddb_item_unref(L.key);
  ddb_client_free(L.rate);
  ddb_client_free(L.scan);
  close(fd);
  return hung || failed || rounds != max_rounds ? 1 : 0;
}

int main(int argc, char **argv) {
  if(argc >= 5 && strcmp(argv[1], "conn") == 0) {
    table = argv[3];
    return run_conn(argv[2], argv[4]);
  }
  if(argc >= 4 && strcmp(argv[1], "locks") == 0) {
    table = argv[3];
    return run_locks(argv[2], argc >= 5 && argv[4][0] ? argv[4] : NULL);
  }
  fprintf(stderr, "usage: fork_check conn ENDPOINT TABLE OUTFILE | "
                  "fork_check locks ENDPOINT TABLE [REDIS_URL]\n");
  return 2;
}
