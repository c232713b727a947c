/*
** warm_instr.c -- bench/warm_instr.sh's driver: warm (cached) lookups of
** the virtual table against a native SQLite table holding the same rows,
** counted in instructions under valgrind --tool=callgrind.
**
**   warm_instr DB EXT N SHAPE...
**
** DB holds, for each SHAPE, the native table n<SHAPE>(PK, SK, item, PRIMARY
** KEY (PK, SK)) WITHOUT ROWID and the driver table drive<SHAPE>(k) of N
** keys in a random order (bench/warm_instr.sh makes them).  Loads the
** extension EXT, makes d<SHAPE> = dynamodb(table=Warm<SHAPE>), warms its
** item cache (one BatchGetItem per 100 keys), then for each selection runs
**   SELECT <sel> FROM drive<SHAPE> JOIN <t> x ON x.PK = drive.k AND x.SK = 'S'
** on t = n<SHAPE> and t = d<SHAPE>: once uncounted, then once with
** callgrind collecting during sqlite3_step only (the statement prepared
** before, reset after), dumped as "<shape> <selection> <native|dynamodb>"
** (CALLGRIND_DUMP_STATS_AT).  Checks that the counted vtab statement sent
** no request and hit the cache N times (dynamodb_stats), else exits 1.
** Without valgrind the client requests do nothing: it runs, unmeasured.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>
#include <valgrind/callgrind.h>

/* The three selections: a name and the result columns. */
static const char *const azSel[3][2] = {
    {"key", "count(*), sum(length(x.SK))"},
    {"item", "count(*), sum(length(x.item))"},
    {"json3", "count(*), sum(length(json_extract(x.item, '$.name')) + "
              "json_extract(x.item, '$.total') + "
              "length(json_extract(x.item, '$.pad')))"}};

/* Print what failed (with db's message) and exit 1. */
static void die(sqlite3 *db, const char *zWhat) {
  fprintf(stderr, "warm_instr: %s: %s\n", zWhat, db ? sqlite3_errmsg(db) : "");
  exit(1);
}

/* Run zSql (no rows wanted); exit on error. */
static void exec(sqlite3 *db, const char *zSql) {
  char *zErr = NULL;
  if(sqlite3_exec(db, zSql, NULL, NULL, &zErr) != SQLITE_OK) {
    fprintf(stderr, "warm_instr: %s: %s\n", zSql, zErr ? zErr : "?");
    exit(1);
  }
}

/* The integer zSql's first row's first column answers. */
static long long one(sqlite3 *db, const char *zSql) {
  sqlite3_stmt *st;
  long long v = 0;
  if(sqlite3_prepare_v2(db, zSql, -1, &st, NULL) != SQLITE_OK)
    die(db, zSql);
  if(sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

/* The counter zName of dynamodb_stats. */
static long long ddstat(sqlite3 *db, const char *zName) {
  char z[128];
  snprintf(z, sizeof(z), "SELECT value FROM dynamodb_stats WHERE name = '%s'",
           zName);
  return one(db, z);
}

/* Run the prepared st to its end; bCount: callgrind collects meanwhile.
** Returns its first column (the row count). */
static long long run(sqlite3 *db, sqlite3_stmt *st, int bCount) {
  long long n = -1;
  int rc;
  if(bCount)
    CALLGRIND_TOGGLE_COLLECT;
  while((rc = sqlite3_step(st)) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  if(bCount)
    CALLGRIND_TOGGLE_COLLECT;
  if(rc != SQLITE_DONE)
    die(db, "step");
  sqlite3_reset(st);
  return n;
}

/* Measure selection s on table zT of shape: uncounted once, counted once,
** dumped under "<shape> <sel> <zKind>". */
static void measure(sqlite3 *db, int shape, int s, const char *zT,
                    const char *zKind, long long nWant) {
  char zSql[512], zName[64];
  sqlite3_stmt *st;
  long long req0, hit0, n;
  snprintf(zSql, sizeof(zSql),
           "SELECT %s FROM drive%d JOIN %s x ON x.PK = drive%d.k AND "
           "x.SK = 'S'",
           azSel[s][1], shape, zT, shape);
  if(sqlite3_prepare_v2(db, zSql, -1, &st, NULL) != SQLITE_OK)
    die(db, zSql);
  run(db, st, 0);
  req0 = ddstat(db, "requests");
  hit0 = ddstat(db, "item_hits");
  CALLGRIND_ZERO_STATS;
  n = run(db, st, 1);
  snprintf(zName, sizeof(zName), "%d %s %s", shape, azSel[s][0], zKind);
  CALLGRIND_DUMP_STATS_AT(zName);
  sqlite3_finalize(st);
  if(n != nWant) {
    fprintf(stderr, "warm_instr: %s: %lld rows, not %lld\n", zName, n, nWant);
    exit(1);
  }
  if(zKind[0] == 'd' && (ddstat(db, "requests") != req0 ||
                         ddstat(db, "item_hits") - hit0 != nWant)) {
    fprintf(stderr, "warm_instr: %s: not every lookup a cache hit\n", zName);
    exit(1);
  }
}

/* The positive number z is, or exit 2 saying which argument was not. */
static long long number(const char *z) {
  char *zEnd = NULL;
  long long v = strtoll(z, &zEnd, 10);
  if(!zEnd || *zEnd || v <= 0 || v > 100000000) {
    fprintf(stderr, "warm_instr: '%s' is not a count (a positive number)\n",
            z);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  sqlite3 *db;
  char *zErr = NULL, z[256];
  long long nKeys;
  int i, s;
  if(argc < 5) {
    fprintf(stderr, "usage: warm_instr DB EXT N SHAPE...\n");
    return 2;
  }
  nKeys = number(argv[3]);
  if(sqlite3_open(argv[1], &db) != SQLITE_OK)
    die(db, argv[1]);
  sqlite3_enable_load_extension(db, 1);
  if(sqlite3_load_extension(db, argv[2], NULL, &zErr) != SQLITE_OK) {
    fprintf(stderr, "warm_instr: load %s: %s\n", argv[2], zErr ? zErr : "?");
    return 1;
  }
  for(i = 4; i < argc; i++) {
    int shape = (int)number(argv[i]);
    snprintf(z, sizeof(z),
             "CREATE VIRTUAL TABLE temp.d%d USING dynamodb(table=Warm%d)",
             shape, shape);
    exec(db, z);
    snprintf(z, sizeof(z),
             "SELECT count(*) FROM d%d WHERE SK = 'S' AND PK IN "
             "(SELECT PK FROM n%d)",
             shape, shape);
    if(one(db, z) != nKeys)
      die(db, "warming the cache did not find every item");
    for(s = 0; s < 3; s++) {
      char zN[16], zD[16];
      snprintf(zN, sizeof(zN), "n%d", shape);
      snprintf(zD, sizeof(zD), "d%d", shape);
      measure(db, shape, s, zN, "native", nKeys);
      measure(db, shape, s, zD, "dynamodb", nKeys);
    }
  }
  sqlite3_close(db);
  return 0;
}
