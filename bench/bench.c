/*
** bench.c -- the cache benchmark behind `make bench` (bench/run.sh starts
** DynamoDB Local, loads the table and runs this).  It only prints; nothing
** here is a test.
**
**   (a) sql    a join driving LOOKUPS point lookups on the full key of a
**              dynamodb virtual table (cache warm), against the same join
**              on an ordinary SQLite table with the same primary key; the
**              ratio of the two times (goal: <= 2x).
**   (b) hit    the C-level hit path in ns/op: ddbc_store_get_item on one
**              warm key and on random warm keys, and the full ddbc_get_item
**              (key building included).
**   (c) zipf   the item hit ratio of a Zipf(s) workload over KEYS keys with
**              a budget smaller than the key set, with a full Scan of a far
**              larger table between rounds; segmented LRU against plain
**              LRU (the same store with ddbc_store_set_segmented(0)).
**
**   build/bench-cache [--table T] [--keys N] [--lookups N] [--ext PATH]
**                     [--only abcp]      (p: only the vtab join, 20
**                                         times, for a profiler)
**
** (a) and the full path of (b) need AWS_ENDPOINT_URL_DYNAMODB and table T
** with items PK = K#00000.. (N of them), SK = S (bench/load.py).
*/
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cache/ddb_cache.h"
#include "../cache/store.h"

static const char *opt_table = "BenchItems";
static const char *opt_ext = "build/dynamodb";
static long opt_keys = 20000;
static long opt_lookups = 100000;
static const char *opt_only = "abc";

/* Monotonic seconds. */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* xorshift64*: deterministic random numbers. */
static uint64_t rng_state = 0x2545F4914F6CDD1DULL;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ULL;
}

/* A uniform double in [0, 1). */
static double rnd01(void) {
  return (double)(rnd() >> 11) / 9007199254740992.0;
}

/* Exit with a message. */
static void die(const char *what, const char *detail) {
  fprintf(stderr, "bench: %s%s%s\n", what, detail ? ": " : "",
          detail ? detail : "");
  exit(1);
}

/* ------------------------------------------------------------------------
** (a) SQL: vtab join against a native join
*/

/* Run sql (no result rows expected); dies on error. */
static void exec_sql(sqlite3 *db, const char *sql) {
  char *err = NULL;
  if(sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
    die(sql, err);
}

/* Run a one-row query and return its first column as an integer. */
static long long query_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  long long v = -1;
  if(sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
    die(sql, sqlite3_errmsg(db));
  if(sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  else
    die(sql, sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return v;
}

/* Time `sql` `reps` times; returns the fastest run in seconds and its
** first column in *result. */
static double time_query(sqlite3 *db, const char *sql, int reps,
                         long long *result) {
  double best = 1e9;
  int i;
  for(i = 0; i < reps; i++) {
    double t0 = now_s(), t;
    *result = query_int(db, sql);
    t = now_s() - t0;
    if(t < best)
      best = t;
  }
  return best;
}

/* Fill drive(k) with opt_lookups keys: every key of the table in turn, in
** a shuffled order. */
static void make_driver(sqlite3 *db) {
  sqlite3_stmt *st;
  long i;
  long *perm = malloc(sizeof(long) * (size_t)opt_lookups);
  char key[32];
  if(!perm)
    die("out of memory", NULL);
  for(i = 0; i < opt_lookups; i++)
    perm[i] = i % opt_keys;
  for(i = opt_lookups - 1; i > 0; i--) {
    long j = (long)(rnd() % (uint64_t)(i + 1)), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  exec_sql(db, "CREATE TABLE drive(k TEXT); BEGIN");
  if(sqlite3_prepare_v2(db, "INSERT INTO drive VALUES (?)", -1, &st, NULL))
    die("prepare", sqlite3_errmsg(db));
  for(i = 0; i < opt_lookups; i++) {
    snprintf(key, sizeof(key), "K#%05ld", perm[i]);
    sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
    if(sqlite3_step(st) != SQLITE_DONE)
      die("insert", sqlite3_errmsg(db));
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  exec_sql(db, "COMMIT");
  free(perm);
}

/* The value of dynamodb_stats row `name`. */
static long long stat_of(sqlite3 *db, const char *name) {
  char sql[160];
  snprintf(sql, sizeof(sql),
           "SELECT value FROM dynamodb_stats WHERE name = '%s'", name);
  return query_int(db, sql);
}

/* bench_sql(1): warm up, then only the vtab join, 20 times (profiling). */
static void bench_sql(int profile_only) {
  sqlite3 *db;
  char *err = NULL;
  char sql[512];
  long long rv, rn, calls0, calls1, hits0, hits1;
  double tv, tn, t0;
  int q;
  static const struct {
    const char *what, *cols;
  } queries[] = {
      {"key column only", "count(*), sum(length(x.SK))"},
      {"whole item (JSON text)", "count(*), sum(length(x.item))"},
      {"3 json_extract(item)",
       "count(*), sum(length(json_extract(x.item, '$.name')) + "
       "json_extract(x.item, '$.total') + "
       "length(json_extract(x.item, '$.pad')))"},
  };

  printf("\n(a) point lookups through SQL: %ld lookups on %ld keys, "
         "cache warm\n",
         opt_lookups, opt_keys);
  if(sqlite3_open(":memory:", &db) != SQLITE_OK)
    die("sqlite3_open", NULL);
  sqlite3_enable_load_extension(db, 1);
  if(sqlite3_load_extension(db, opt_ext, NULL, &err) != SQLITE_OK)
    die("load extension", err);
  snprintf(
      sql, sizeof(sql),
      "CREATE VIRTUAL TABLE d USING dynamodb(table=%s);"
      "CREATE TABLE n(PK TEXT, SK TEXT, item TEXT, PRIMARY KEY (PK, SK));",
      opt_table);
  exec_sql(db, sql);
  t0 = now_s();
  exec_sql(db, "INSERT INTO n SELECT PK, SK, item FROM d");
  if(query_int(db, "SELECT count(*) FROM n") != opt_keys)
    die("the table does not hold --keys items (run bench/load.py)", NULL);
  printf("    copied the table into the native table n: %.2f s (Scan)\n",
         now_s() - t0);
  make_driver(db);
  /* warm the item cache: one BatchGetItem per 100 keys (an empty cache
  ** first, so that its bytes are the items') */
  query_int(db, "SELECT dynamodb_cache_clear() >= 0");
  t0 = now_s();
  rv = 0;
  for(q = 0; q < opt_keys; q += 100) {
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM d WHERE SK = 'S' AND PK IN "
             "(SELECT PK FROM n ORDER BY PK LIMIT 100 OFFSET %d)",
             q);
    rv += query_int(db, sql);
  }
  printf("    warmed the item cache with %lld items: %.2f s (BatchGetItem)\n",
         rv, now_s() - t0);
  {
    /* cache density: what a cached item costs against its JSON text */
    long long bytes = stat_of(db, "bytes"), entries = stat_of(db, "entries");
    long long json = query_int(db, "SELECT sum(length(item)) FROM n");
    if(entries > 0 && json > 0)
      printf("    cache density: %.0f bytes a cached item (entries %lld), "
             "%.0f bytes of item JSON: %.2fx\n",
             (double)bytes / (double)entries, entries,
             (double)json / (double)opt_keys,
             ((double)bytes / (double)entries) /
                 ((double)json / (double)opt_keys));
  }
  if(profile_only) {
    /* for perf/callgrind: only the cached vtab join, many times */
    t0 = now_s();
    for(q = 0; q < 20; q++)
      query_int(db, "SELECT count(*) FROM drive JOIN d x ON x.PK = drive.k "
                    "AND x.SK = 'S'");
    printf("    20 vtab joins: %.2f s\n", now_s() - t0);
    sqlite3_close(db);
    return;
  }
  printf("    plan: %s\n",
         "SELECT ... FROM drive JOIN d x ON x.PK = drive.k AND x.SK = 'S'");
  printf("    %-24s %12s %12s %10s %8s\n", "selected", "native", "dynamodb",
         "ns/lookup", "ratio");
  for(q = 0; q < (int)(sizeof(queries) / sizeof(queries[0])); q++) {
    char qv[512], qn[512];
    snprintf(qv, sizeof(qv),
             "SELECT %s FROM drive JOIN d x ON x.PK = drive.k AND x.SK = 'S'",
             queries[q].cols);
    snprintf(qn, sizeof(qn),
             "SELECT %s FROM drive JOIN n x ON x.PK = drive.k AND x.SK = 'S'",
             queries[q].cols);
    calls0 = stat_of(db, "requests");
    hits0 = stat_of(db, "item_hits");
    tv = time_query(db, qv, 5, &rv);
    calls1 = stat_of(db, "requests");
    hits1 = stat_of(db, "item_hits");
    tn = time_query(db, qn, 5, &rn);
    if(rv != rn || rv != opt_lookups)
      die("the joins disagree", NULL);
    printf("    %-24s %10.1f ms %10.1f ms %10.0f %7.2fx\n", queries[q].what,
           tn * 1e3, tv * 1e3, tv / (double)opt_lookups * 1e9, tv / tn);
    printf("    %-24s (DynamoDB requests during the 5 timed runs: %lld; "
           "item hits %lld)\n",
           "", calls1 - calls0, hits1 - hits0);
  }
  printf("    native: an ordinary table with PRIMARY KEY (PK, SK); best "
         "of 5 runs each\n");
  sqlite3_close(db);
}

/* ------------------------------------------------------------------------
** (b) the C-level hit path
*/

/* A realistic item: the key attributes and a few small ones. */
static ddb_item *sample_item(long i) {
  char pk[32], total[16];
  ddb_av av[4];
  memset(av, 0, sizeof(av));
  snprintf(pk, sizeof(pk), "K#%05ld", i);
  snprintf(total, sizeof(total), "%ld", i % 1000);
  av[0].type = DDB_S, av[0].name = "PK", av[0].text = pk;
  av[1].type = DDB_S, av[1].name = "SK", av[1].text = "S";
  av[2].type = DDB_S, av[2].name = "name", av[2].text = "a customer name";
  av[3].type = DDB_N, av[3].name = "total", av[3].text = total;
  for(int k = 0; k < 4; k++) {
    av[k].n = (uint32_t)strlen(av[k].text);
    av[k].name_len = (uint32_t)strlen(av[k].name);
  }
  return ddb_item_from_avs(av, 4);
}

/* An item-cache key as cache.c builds them (kind, endpoint, table, key). */
static size_t sample_key(char *buf, size_t cap, long i) {
  return (size_t)snprintf(buf, cap,
                          "I\x1fhttp://127.0.0.1:8000\x1f%s\x1fPK\x1fS\x1f"
                          "K#%05ld\x1eSK\x1fS\x1fS\x1e",
                          opt_table, i);
}

static void bench_hit_path(void) {
  /* packed, as cache.c makes its store */
  static const ddbc_item_codec codec = {ddb_item_packed_size, ddb_item_pack,
                                        ddb_item_unpack};
  ddbc_store *s = ddbc_store_create_packed(64u << 20, &codec);
  char key[128];
  size_t klen;
  long i, n = 5000000, nk = opt_keys;
  double t0, t;
  ddb_item *out;
  uint64_t g;
  char **keys;
  size_t *lens;

  printf("\n(b) the C-level hit path (one thread)\n");
  keys = malloc(sizeof(char *) * (size_t)nk);
  lens = malloc(sizeof(size_t) * (size_t)nk);
  if(!s || !keys || !lens)
    die("out of memory", NULL);
  for(i = 0; i < nk; i++) {
    ddb_item *it = sample_item(i);
    klen = sample_key(key, sizeof(key), i);
    keys[i] = malloc(klen);
    if(!keys[i] || !it)
      die("out of memory", NULL);
    memcpy(keys[i], key, klen);
    lens[i] = klen;
    g = ddbc_store_gen(s, key, klen);
    ddbc_store_fill_item(s, key, klen, it, g, 0, 1e6);
    ddb_item_unref(it);
  }
  /* one warm key */
  t0 = now_s();
  for(i = 0; i < n; i++) {
    if(!ddbc_store_get_item(s, keys[7], lens[7], 1, 1e6, &out))
      die("miss on a warm key", NULL);
    ddb_item_unref(out);
  }
  t = now_s() - t0;
  printf("    ddbc_store_get_item, one warm key:        %6.1f ns/op\n",
         t / (double)n * 1e9);
  /* random warm keys (the hash table and the entries out of L1) */
  {
    long *order = malloc(sizeof(long) * 1000000);
    if(!order)
      die("out of memory", NULL);
    for(i = 0; i < 1000000; i++)
      order[i] = (long)(rnd() % (uint64_t)nk);
    t0 = now_s();
    for(i = 0; i < 1000000; i++) {
      long k = order[i];
      if(!ddbc_store_get_item(s, keys[k], lens[k], 1, 1e6, &out))
        die("miss on a warm key", NULL);
      ddb_item_unref(out);
    }
    t = now_s() - t0;
    printf("    ddbc_store_get_item, %ld random warm keys: %6.1f ns/op\n", nk,
           t / 1e6 * 1e9);
    free(order);
  }
  for(i = 0; i < nk; i++)
    free(keys[i]);
  free(keys);
  free(lens);
  ddbc_store_release(s);

  /* the full path: key building, lookup, reference */
  if(getenv("AWS_ENDPOINT_URL_DYNAMODB")) {
    ddb_config cfg;
    ddb_client *c = NULL;
    ddb_error err;
    ddbc_policy pol = {.item_ttl = 300, .query_ttl = 300};
    const char *names[2] = {"PK", "SK"};
    ddb_av kv[2];
    ddb_item *k;
    long m = 1000000;
    memset(kv, 0, sizeof(kv));
    kv[0].type = DDB_S, kv[0].name = "PK", kv[0].text = "K#00007";
    kv[1].type = DDB_S, kv[1].name = "SK", kv[1].text = "S";
    kv[0].n = 7, kv[1].n = 1, kv[0].name_len = kv[1].name_len = 2;
    k = ddb_item_from_avs(kv, 2);
    if(!k)
      die("out of memory", NULL);
    memset(&cfg, 0, sizeof(cfg));
    cfg.max_retries = -1;
    if(ddb_client_new(&cfg, &c, &err))
      die("ddb_client_new", err.message);
    if(ddbc_get_item(c, opt_table, k, names, 2, &pol, &out, &err))
      die("GetItem", err.message);
    ddb_item_unref(out);
    t0 = now_s();
    for(i = 0; i < m; i++) {
      if(ddbc_get_item(c, opt_table, k, names, 2, &pol, &out, &err))
        die("GetItem", err.message);
      ddb_item_unref(out);
    }
    t = now_s() - t0;
    printf("    ddbc_get_item (full path), warm key:     %6.1f ns/op\n",
           t / (double)m * 1e9);
    /* what the vtab's xFilter calls first: the key's values, no item */
    t0 = now_s();
    for(i = 0; i < m; i++) {
      if(!ddbc_item_cached(c, opt_table, kv, 2, &pol, &out))
        die("ddbc_item_cached missed a warm key", NULL);
      ddb_item_unref(out);
    }
    t = now_s() - t0;
    printf("    ddbc_item_cached (the vtab's hit path):  %6.1f ns/op\n",
           t / (double)m * 1e9);
    ddb_item_unref(k);
    ddb_client_free(c);
  }
}

/* ------------------------------------------------------------------------
** (c) Zipf hit ratio with scans in between
*/

typedef struct zipf {
  double *cdf;
  long n;
} zipf;

/* The CDF of Zipf(s) over ranks 1..n. */
static void zipf_init(zipf *z, long n, double s) {
  double sum = 0;
  long i;
  z->n = n;
  z->cdf = malloc(sizeof(double) * (size_t)n);
  if(!z->cdf)
    die("out of memory", NULL);
  for(i = 0; i < n; i++)
    z->cdf[i] = (sum += 1.0 / pow((double)(i + 1), s));
  for(i = 0; i < n; i++)
    z->cdf[i] /= sum;
}

/* A rank in 0..n-1 drawn from z. */
static long zipf_draw(const zipf *z) {
  double u = rnd01();
  long lo = 0, hi = z->n - 1;
  while(lo < hi) {
    long mid = (lo + hi) / 2;
    if(z->cdf[mid] < u)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

typedef struct zipf_result {
  double hit_ratio; /* item gets after the first round */
  uint64_t evictions;
} zipf_result;

/*
** One run: `rounds` rounds of `per_round` Zipf item gets (a miss is
** followed by a fill, as cache.c does), with a full Scan of `scan_pages`
** pages of `page_bytes` each between rounds when scan_pages > 0.  The
** hit ratio counts rounds 2.. (the first warms the cache).
*/
static zipf_result zipf_run(int segmented, const zipf *z, size_t budget,
                            ddb_item *item, int rounds, long per_round,
                            long scan_pages, size_t page_bytes) {
  ddbc_store *s = ddbc_store_create(budget);
  ddb_page *page = calloc(1, sizeof(*page));
  zipf_result r = {0, 0};
  uint64_t hits = 0, gets = 0;
  char key[96], tag0[64], tag1[64];
  ddbc_tag tags[2];
  double now = 0;
  int round;
  long i;
  if(!s || !page)
    die("out of memory", NULL);
  page->refs = 1;
  page->bytes = page_bytes;
  ddbc_store_set_segmented(s, segmented);
  rng_state = 0x9E3779B97F4A7C15ULL; /* the same draws for every run */
  tags[0].p = tag0;
  tags[0].len = (size_t)snprintf(tag0, sizeof(tag0),
                                 "S\x1f"
                                 "ep\x1f"
                                 "Big");
  tags[1].p = tag1;
  tags[1].len = (size_t)snprintf(tag1, sizeof(tag1),
                                 "T\x1f"
                                 "ep\x1f"
                                 "Big");
  for(round = 0; round < rounds; round++) {
    for(i = 0; i < per_round; i++) {
      long k = zipf_draw(z);
      size_t n = (size_t)snprintf(key, sizeof(key),
                                  "I\x1f"
                                  "ep\x1f"
                                  "Items\x1fPK\x1fS\x1fK#%05ld",
                                  k);
      ddb_item *out;
      now += 1e-5;
      if(ddbc_store_get_item(s, key, n, now, 300, &out)) {
        ddb_item_unref(out);
        hits += round > 0;
      } else {
        uint64_t g = ddbc_store_gen(s, key, n);
        ddbc_store_fill_item(s, key, n, item, g, now, 300);
      }
      gets += round > 0;
    }
    for(i = 0; i < scan_pages; i++) {
      size_t n = (size_t)snprintf(key, sizeof(key),
                                  "Q\x1f"
                                  "ep\x1f"
                                  "Scan Big page %ld",
                                  i);
      ddb_page *out;
      uint64_t gens[2];
      now += 1e-5;
      if(ddbc_store_get_page(s, key, n, now, 300, &out)) {
        ddb_page_unref(out);
        continue;
      }
      gens[0] = ddbc_store_gen(s, tags[0].p, tags[0].len);
      gens[1] = ddbc_store_gen(s, tags[1].p, tags[1].len);
      ddbc_store_fill_page(s, key, n, tags, gens, page, now, 300);
    }
  }
  {
    ddbc_store_stats st;
    const char *why = ddbc_store_check(s);
    if(why)
      die("store invariant", why);
    ddbc_store_stats_get(s, &st);
    r.evictions = st.evictions;
  }
  r.hit_ratio = gets ? (double)hits / (double)gets : 0;
  ddbc_store_release(s);
  ddb_page_unref(page);
  return r;
}

static void bench_zipf(void) {
  const long nkeys = 10000, per_round = 20000;
  const int rounds = 20;
  const double zs = 1.0;
  const size_t item_bytes = 1000, budget = 4u << 20;
  const long scan_pages = 250;
  const size_t page_bytes = 400u << 10; /* < budget / DDBC_MAX_SHARE */
  zipf z;
  ddb_item *item = calloc(1, item_bytes);
  size_t charge;
  long fit;
  int seg;

  if(!item)
    die("out of memory", NULL);
  item->refs = 1;
  item->bytes = item_bytes;
  item->root.type = DDB_M;
  zipf_init(&z, nkeys, zs);
  {
    /* the charge of one item entry, as the store counts it */
    ddbc_store *s = ddbc_store_create(budget);
    ddbc_store_stats st;
    char key[96];
    size_t n = (size_t)snprintf(key, sizeof(key),
                                "I\x1f"
                                "ep\x1f"
                                "Items\x1fPK\x1fS\x1fK#%05d",
                                0);
    ddbc_store_fill_item(s, key, n, item, ddbc_store_gen(s, key, n), 0, 300);
    ddbc_store_stats_get(s, &st);
    charge = (size_t)st.bytes;
    ddbc_store_release(s);
  }
  fit = (long)(budget / charge);
  printf("\n(c) hit ratio of a Zipf workload, s=%.1f over %ld keys\n", zs,
         nkeys);
  printf("    items of %zu bytes (%zu charged each): the key set is %.1f MiB, "
         "the budget %.1f MiB (%ld items, %.0f%% of the keys)\n",
         item_bytes, charge, (double)nkeys * (double)charge / 1048576.0,
         (double)budget / 1048576.0, fit, 100.0 * (double)fit / nkeys);
  printf("    %d rounds of %ld gets; between rounds, when shown, a full Scan "
         "of %ld pages of %zu KiB (%.0f MiB, %.0fx the budget)\n",
         rounds, per_round, scan_pages, page_bytes >> 10,
         (double)scan_pages * (double)page_bytes / 1048576.0,
         (double)scan_pages * (double)page_bytes / (double)budget);
  printf("    best possible (the %ld most popular keys always cached): "
         "%.1f%%\n",
         fit, 100.0 * z.cdf[fit - 1]);
  printf("    %-16s %12s %18s %22s\n", "policy", "no scans",
         "scans in between", "1 MiB pages (over cap)");
  for(seg = 1; seg >= 0; seg--) {
    zipf_result a = zipf_run(seg, &z, budget, item, rounds, per_round, 0, 0);
    zipf_result b = zipf_run(seg, &z, budget, item, rounds, per_round,
                             scan_pages, page_bytes);
    zipf_result c = zipf_run(seg, &z, budget, item, rounds, per_round,
                             scan_pages / 2, 1u << 20);
    printf("    %-16s %11.1f%% %17.1f%% %21.1f%%\n",
           seg ? "segmented LRU" : "plain LRU", 100 * a.hit_ratio,
           100 * b.hit_ratio, 100 * c.hit_ratio);
  }
  printf("    (hit ratio of the item gets after the first round; the same "
         "random draws for every run)\n");
  free(z.cdf);
  ddb_item_unref(item);
}

/* ------------------------------------------------------------------------
** main
*/

/* The value of a --name VALUE argument pair, or dies. */
static const char *arg_value(int argc, char **argv, int *i) {
  if(*i + 1 >= argc)
    die("missing value after", argv[*i]);
  return argv[++*i];
}

/* A positive number from text, or dies. */
static long arg_long(const char *text) {
  char *end;
  long v = strtol(text, &end, 10);
  if(*end || v <= 0)
    die("not a positive number", text);
  return v;
}

int main(int argc, char **argv) {
  int i;
  for(i = 1; i < argc; i++) {
    if(strcmp(argv[i], "--table") == 0)
      opt_table = arg_value(argc, argv, &i);
    else if(strcmp(argv[i], "--keys") == 0)
      opt_keys = arg_long(arg_value(argc, argv, &i));
    else if(strcmp(argv[i], "--lookups") == 0)
      opt_lookups = arg_long(arg_value(argc, argv, &i));
    else if(strcmp(argv[i], "--ext") == 0)
      opt_ext = arg_value(argc, argv, &i);
    else if(strcmp(argv[i], "--only") == 0)
      opt_only = arg_value(argc, argv, &i);
    else
      die("usage: bench-cache [--table T] [--keys N] [--lookups N] "
          "[--ext PATH] [--only abcp]",
          NULL);
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  if(strchr(opt_only, 'a'))
    bench_sql(0);
  if(strchr(opt_only, 'p'))
    bench_sql(1);
  if(strchr(opt_only, 'b'))
    bench_hit_path();
  if(strchr(opt_only, 'c'))
    bench_zipf();
  return 0;
}
