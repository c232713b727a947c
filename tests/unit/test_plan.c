/*
** test_plan.c -- unit tests of ext/, part two: the SQL functions and
** the plans (xBestIndex, the plan codec).  Built as test_ext.c is:
**
** The ext/ objects of the unit-test binary are built with SQLITE_CORE, so
** that sqlite3ext.h leaves the sqlite3_* names alone and they resolve to
** the real libsqlite3 (the binary links -lsqlite3), and with UNITTESTS,
** which makes the helpers marked UNITTEST external (ext/dd_ext.h declares
** them).  No network: nothing here reaches DescribeTable.
*/
#ifndef SQLITE_CORE
#define SQLITE_CORE 1 /* the Makefile passes it to every ext/ file */
#endif
#ifndef UNITTESTS
#define UNITTESTS 1
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ext/multikey.h" /* dd_partition_rows; and dd_ext.h */

#include <cjson/cJSON.h>

#include "../../client/ddb_client_int.h"
#include "ext_fixtures.h"
#include "tap.h"

/* ------------------------------------------------------------------------
** SQL functions
*/

/* t_av(json, i): attribute i of a DynamoDB-JSON item as a column shows it;
** i = -1: the whole item (the `item` column). */
static void t_av_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  cJSON *j = cJSON_Parse((const char *)sqlite3_value_text(argv[0]));
  ddb_item *it = NULL;
  ddb_error err;
  int i = sqlite3_value_int(argv[1]);
  (void)argc;
  if(!j || ddb_item_decode(j, &it, &err) != DDB_OK || i >= (int)it->root.n) {
    sqlite3_result_error(ctx, "t_av: bad item", -1);
  } else {
    dd_result_av(ctx, i < 0 ? &it->root : &it->root.kids[i]);
  }
  ddb_item_unref(it);
  cJSON_Delete(j);
}

static void test_begins_with_func(void) {
  static const struct {
    const char *sql, *want;
  } v[] = {
      {"SELECT begins_with('abc','ab')", "1"},
      {"SELECT begins_with('abc','abc')", "1"},
      {"SELECT begins_with('abc','')", "1"},
      {"SELECT begins_with('','')", "1"},
      {"SELECT begins_with('abc','abcd')", "0"},
      {"SELECT begins_with('abc','b')", "0"},
      {"SELECT begins_with('ABC','ab')", "0"}, /* case-sensitive */
      {"SELECT begins_with('','a')", "0"},
      {"SELECT begins_with(NULL,'a')", "NULL"},
      {"SELECT begins_with('a',NULL)", "NULL"},
      {"SELECT begins_with(NULL,NULL)", "NULL"},
      {"SELECT begins_with(x'0102',x'01')", "1"},
      {"SELECT begins_with(x'0102',x'02')", "0"},
      {"SELECT begins_with(x'0102',x'')", "1"},
      {"SELECT begins_with('abc',x'6162')", "1"},
      {"SELECT begins_with(x'616263','ab')", "1"},
      {"SELECT begins_with(12345,123)", "1"},
      {"SELECT begins_with(1.5,'1.')", "1"},
      {"SELECT begins_with('h\xc3\xa9llo','h\xc3\xa9')", "1"},
      {"SELECT begins_with('h\xc3\xa9llo','h\xc3')", "1"}, /* bytes */
      {"SELECT typeof(begins_with('a','a'))", "integer"},
      {"SELECT begins_with('a')", "ERROR: wrong number of arguments to "
                                  "function begins_with()"},
      /* the calls since the previous dynamodb_calls(): the first one
      ** reports what the tests before sent (the log is the process's) */
      {"SELECT dynamodb_calls() IS NOT NULL", "1"},
      {"SELECT dynamodb_calls()", "(none)"},
      /* key columns and the item column */
      {"SELECT typeof(t_av('{\"a\":{\"N\":\"5\"}}',0))", "integer"},
      {"SELECT t_av('{\"a\":{\"N\":\"-9223372036854775808\"}}',0)",
       "-9223372036854775808"},
      {"SELECT typeof(t_av('{\"a\":{\"N\":\"1.5\"}}',0))", "real"},
      {"SELECT typeof(t_av('{\"a\":{\"N\":\"1E+2\"}}',0))", "real"},
      {"SELECT t_av('{\"a\":{\"N\":\"12345678901234567890\"}}',0) || ''",
       "12345678901234567890"},
      {"SELECT typeof(t_av('{\"a\":{\"N\":\"12345678901234567890\"}}',0))",
       "text"},
      {"SELECT typeof(t_av('{\"a\":{\"S\":\"5\"}}',0))", "text"},
      {"SELECT hex(t_av('{\"a\":{\"B\":\"AAEC\"}}',0))", "000102"},
      {"SELECT typeof(t_av('{\"a\":{\"B\":\"\"}}',0))", "blob"},
      {"SELECT t_av('{\"a\":{\"B\":\"!!!!\"}}',0)",
       "ERROR: dynamodb: malformed base64 in a B value"},
      {"SELECT t_av('{\"a\":{\"BOOL\":true}}',0)", "true"},
      {"SELECT t_av('{\"a\":{\"L\":[{\"N\":\"1\"},{\"NULL\":true}]}}',0)",
       "[1,null]"},
      {"SELECT t_av('{\"a\":{\"S\":\"x\"},\"b\":{\"SS\":[\"y\"]}}',-1)",
       "{\"a\":\"x\",\"b\":[\"y\"]}"},
      {"SELECT json_valid(t_av('{\"a\":{\"M\":{\"q\\\"\":{\"N\":\"2\"}}}}',"
       "-1))",
       "1"},
  };
  sqlite3 *db = open_db();
  size_t i;
  char out[300];
  if(!CHECK(db != NULL))
    return;
  /* with SQLITE_CORE, SQLITE_EXTENSION_INIT2 ignores pApi: NULL is fine */
  CHECK_INT(sqlite3_dynamodb_init(db, NULL, NULL), SQLITE_OK);
  CHECK_INT(sqlite3_create_function(db, "t_av", 2, SQLITE_UTF8, NULL,
                                    t_av_func, NULL, NULL),
            SQLITE_OK);
  for(i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
    sql_text(db, v[i].sql, out, sizeof(out));
    if(!CHECK_STR(out, v[i].want))
      tap_diag("  %s", v[i].sql);
  }
  sqlite3_close(db);
}

/* ------------------------------------------------------------------------
** Plans
*/
static void test_plan_str(void) {
  dd_extra noextra;
  static char zPk[] = "PK", zSk[] = "SK", zGpk[] = "GSI1PK";
  ddb_index idx[2];
  dd_column cols[3];
  dd_path paths[2];
  dd_vtab vt;
  dd_plan pl;
  char *z;
  memset(idx, 0, sizeof(idx));
  memset(paths, 0, sizeof(paths));
  memset(&vt, 0, sizeof(vt));
  idx[1].name = "GSI1";
  cols[0].zName = zPk;
  cols[0].type = DDB_S;
  cols[1].zName = zSk;
  cols[1].type = DDB_S;
  cols[2].zName = zGpk;
  cols[2].type = DDB_N;
  paths[0].pIdx = &idx[0];
  paths[0].iPk = 0;
  paths[0].iSk = 1;
  paths[1].pIdx = &idx[1];
  paths[1].iPk = 2;
  paths[1].iSk = 1;
  vt.aCol = cols;
  vt.nCol = 3;
  vt.aPath = paths;
  vt.nPath = 2;

#define PLAN(op_, path_, pkin_, skin_, ...)                                   \
  do {                                                                        \
    static const int kinds_[] = {__VA_ARGS__};                                \
    int q_;                                                                   \
    memset(&pl, 0, sizeof(pl));                                               \
    pl.op = op_;                                                              \
    pl.iPath = path_;                                                         \
    pl.bPkIn = pkin_;                                                         \
    pl.bSkIn = skin_;                                                         \
    for(q_ = 0; q_ < (int)(sizeof(kinds_) / sizeof(kinds_[0])); q_++)         \
      if(kinds_[q_])                                                          \
        pl.aSkKind[pl.nSk++] = kinds_[q_];                                    \
  } while(0)

  memset(&noextra, 0, sizeof(noextra));
  PLAN(DD_OP_SCAN, 0, 0, 0, 0);
  z = dd_plan_str(&vt, &pl, &noextra, 0, 0);
  CHECK_STR(z, "Scan");
  sqlite3_free(z);
  PLAN(DD_OP_GET, 0, 0, 0, DD_SK_EQ);
  z = dd_plan_str(&vt, &pl, &noextra, 0, 0);
  CHECK_STR(z, "GetItem (PK = ? AND SK = ?)");
  sqlite3_free(z);
  PLAN(DD_OP_BATCH, 0, 1, 0, DD_SK_EQ);
  z = dd_plan_str(&vt, &pl, &noextra, 0, 0);
  CHECK_STR(z, "BatchGetItem (PK IN (...) AND SK = ?)");
  sqlite3_free(z);
  PLAN(DD_OP_BATCH, 0, 0, 1, DD_SK_EQ);
  z = dd_plan_str(&vt, &pl, &noextra, 0, 0);
  CHECK_STR(z, "BatchGetItem (PK = ? AND SK IN (...))");
  sqlite3_free(z);
  PLAN(DD_OP_QUERY, 0, 0, 0, 0);
  z = dd_plan_str(&vt, &pl, &noextra, 1, 1);
  CHECK_STR(z, "Query (PK = ?) DESC LIMIT ?");
  sqlite3_free(z);
  PLAN(DD_OP_QUERY, 1, 1, 0, 0);
  z = dd_plan_str(&vt, &pl, &noextra, 0, 0);
  CHECK_STR(z, "Query GSI1 (GSI1PK IN (...))");
  sqlite3_free(z);
  PLAN(DD_OP_QUERY, 0, 0, 0, DD_SK_GT);
  z = dd_plan_str(&vt, &pl, &noextra, 0, 0);
  CHECK_STR(z, "Query (PK = ? AND SK > ?)");
  sqlite3_free(z);
  PLAN(DD_OP_QUERY, 0, 0, 0, DD_SK_LE);
  z = dd_plan_str(&vt, &pl, &noextra, 0, 1);
  CHECK_STR(z, "Query (PK = ? AND SK <= ?) LIMIT ?");
  sqlite3_free(z);
  PLAN(DD_OP_QUERY, 1, 0, 0, DD_SK_GE, DD_SK_LT);
  z = dd_plan_str(&vt, &pl, &noextra, 0, 0);
  CHECK_STR(z, "Query GSI1 (GSI1PK = ? AND SK BETWEEN ? AND ?)");
  sqlite3_free(z);
  PLAN(DD_OP_QUERY, 0, 0, 0, DD_SK_BEGINS);
  z = dd_plan_str(&vt, &pl, &noextra, 0, 0);
  CHECK_STR(z, "Query (PK = ? AND begins_with(SK, ?))");
  sqlite3_free(z);
  PLAN(DD_OP_QUERY, 0, 0, 0, DD_SK_GLOB);
  z = dd_plan_str(&vt, &pl, &noextra, 0, 0);
  CHECK_STR(z, "Query (PK = ? AND begins_with(SK, ?))");
  sqlite3_free(z);
  PLAN(DD_OP_QUERY, 0, 0, 0, DD_SK_LIKE);
  z = dd_plan_str(&vt, &pl, &noextra, 0, 0);
  CHECK_STR(z, "Query (PK = ? AND SK BETWEEN ? AND ?)");
  sqlite3_free(z);
  PLAN(DD_OP_QUERY, 0, 0, 0, DD_SK_BEGINS, DD_SK_GT);
  z = dd_plan_str(&vt, &pl, &noextra, 0, 0);
  CHECK_STR(z, "Query (PK = ? AND SK BETWEEN ? AND ?)");
  sqlite3_free(z);
  PLAN(DD_OP_QUERY, 0, 0, 0, DD_SK_EQ);
  z = dd_plan_str(&vt, &pl, &noextra, 0, 0);
  CHECK_STR(z, "Query (PK = ? AND SK = ?)");
  sqlite3_free(z);

  /* the FILTER / PROJECT / COUNT tail for people */
  {
    dd_extra x;
    memset(&x, 0, sizeof(x));
    x.nFilter = 2;
    x.aFilterCol[0] = 2;
    x.aFilterKind[0] = DD_SK_GE;
    x.aFilterCol[1] = 1;
    x.aFilterKind[1] = DD_SK_BEGINS;
    x.mProj = 7;
    PLAN(DD_OP_QUERY, 0, 0, 0, 0);
    z = dd_plan_str(&vt, &pl, &x, 1, 1);
    CHECK_STR(z, "Query (PK = ?) FILTER (GSI1PK >= ? AND begins_with(SK, ?)) "
                 "PROJECT (PK, SK, GSI1PK) DESC LIMIT ?");
    sqlite3_free(z);
    x.bCount = 1;
    z = dd_plan_str(&vt, &pl, &x, 0, 0);
    CHECK_STR(z, "Query (PK = ?) FILTER (GSI1PK >= ? AND begins_with(SK, ?)) "
                 "COUNT");
    sqlite3_free(z);
  }
  /* the machine half: what xFilter reads, never the text */
  {
    dd_plancode pc;
    dd_extra y;
    char *zIdx;
    memset(&pc, 0, sizeof(pc));
    memcpy(pc.zMagic, DD_PLAN_MAGIC, sizeof(pc.zMagic));
    CHECK(dd_plan_arg(&pc, DD_ARG_PK, DD_SK_EQ, 0) == 1);
    CHECK(dd_plan_arg(&pc, DD_ARG_FILTER, DD_SK_GE, 2) == 2);
    CHECK(dd_plan_arg(&pc, DD_ARG_FILTER, DD_SK_BEGINS, 1) == 3);
    CHECK(dd_plan_arg(&pc, DD_ARG_LIMIT, 0, -1) == 4);
    pc.mProj = 7;
    /* a text that looks like another plan changes nothing */
    zIdx = dd_plan_encode(sqlite3_mprintf("Query COUNT (PK = ?) PROJECT (x) "
                                          "FILTER (nosuch = ?) COUNT"),
                          &pc);
    CHECK(zIdx != NULL);
    CHECK(dd_plan_decode(&vt, zIdx, 4, &y) == 0);
    CHECK(y.nFilter == 2 && y.aFilterCol[0] == 2 &&
          y.aFilterKind[0] == DD_SK_GE && y.aFilterCol[1] == 1 &&
          y.aFilterKind[1] == DD_SK_BEGINS && y.mProj == 7 && !y.bCount);
    CHECK(dd_plan_decode(&vt, zIdx, 3, &y) != 0); /* argc must match */
    sqlite3_free(zIdx);
    pc.aArg[1].col = 99; /* no such column */
    zIdx = dd_plan_encode(sqlite3_mprintf("Scan"), &pc);
    CHECK(dd_plan_decode(&vt, zIdx, 4, &y) != 0);
    sqlite3_free(zIdx);
    pc.aArg[1].col = 2;
    pc.zMagic[0] = 'x'; /* not ours */
    zIdx = dd_plan_encode(sqlite3_mprintf("Scan"), &pc);
    CHECK(dd_plan_decode(&vt, zIdx, 4, &y) != 0);
    sqlite3_free(zIdx);
  }
#undef PLAN

  /* row estimates follow the documented ranking */
  memset(&pl, 0, sizeof(pl));
  CHECK(dd_partition_rows(&pl) == DD_PARTITION_ROWS);
  pl.nSk = 1;
  pl.aSkKind[0] = DD_SK_EQ;
  CHECK(dd_partition_rows(&pl) == 2);
  pl.aSkKind[0] = DD_SK_GT;
  CHECK(dd_partition_rows(&pl) == DD_PARTITION_ROWS / 3);
  pl.aSkKind[0] = DD_SK_BEGINS;
  CHECK(dd_partition_rows(&pl) == DD_PARTITION_ROWS / 5);
  pl.nSk = 2;
  pl.aSkKind[1] = DD_SK_LT;
  CHECK(dd_partition_rows(&pl) == DD_PARTITION_ROWS / 8);
}

static void test_order_ok(void) {
  static char zPk[] = "PK", zSk[] = "SK";
  ddb_index idx[1];
  dd_column cols[2];
  dd_path paths[1];
  dd_vtab vt;
  dd_plan pl;
  sqlite3_index_info info;
  struct sqlite3_index_orderby ob[3];
  int bDesc = -1;
  memset(idx, 0, sizeof(idx));
  memset(&vt, 0, sizeof(vt));
  memset(&info, 0, sizeof(info));
  cols[0].zName = zPk;
  cols[0].type = DDB_S;
  cols[1].zName = zSk;
  cols[1].type = DDB_N;
  paths[0].pIdx = &idx[0];
  paths[0].iPk = 0;
  paths[0].iSk = 1;
  vt.aCol = cols;
  vt.nCol = 2;
  vt.aPath = paths;
  vt.nPath = 1;
  info.aOrderBy = ob;
  memset(&pl, 0, sizeof(pl));
  pl.op = DD_OP_QUERY;

  info.nOrderBy = 0;
  CHECK_INT(dd_order_ok(&vt, &info, &pl, &bDesc), 1);
  CHECK_INT(bDesc, 0);
  ob[0].iColumn = 1;
  ob[0].desc = 1;
  info.nOrderBy = 1;
  CHECK_INT(dd_order_ok(&vt, &info, &pl, &bDesc), 1);
  CHECK_INT(bDesc, 1);
  ob[0].desc = 0;
  CHECK_INT(dd_order_ok(&vt, &info, &pl, &bDesc), 1);
  CHECK_INT(bDesc, 0);
  /* the partition key is constant within a Query */
  ob[0].iColumn = 0;
  ob[0].desc = 1;
  ob[1].iColumn = 1;
  ob[1].desc = 1;
  info.nOrderBy = 2;
  CHECK_INT(dd_order_ok(&vt, &info, &pl, &bDesc), 1);
  CHECK_INT(bDesc, 1);
  /* mixed directions, or another column (item is column 2) */
  ob[0].iColumn = 1;
  ob[0].desc = 0;
  CHECK_INT(dd_order_ok(&vt, &info, &pl, &bDesc), 0);
  ob[1].iColumn = 2;
  ob[1].desc = 0;
  CHECK_INT(dd_order_ok(&vt, &info, &pl, &bDesc), 0);
  /* several partitions, a Scan or a batch: no order */
  info.nOrderBy = 1;
  pl.bPkIn = 1;
  CHECK_INT(dd_order_ok(&vt, &info, &pl, &bDesc), 0);
  pl.bPkIn = 0;
  pl.op = DD_OP_SCAN;
  CHECK_INT(dd_order_ok(&vt, &info, &pl, &bDesc), 0);
  pl.op = DD_OP_BATCH;
  CHECK_INT(dd_order_ok(&vt, &info, &pl, &bDesc), 0);
  pl.op = DD_OP_GET; /* one row is always in order */
  CHECK_INT(dd_order_ok(&vt, &info, &pl, &bDesc), 1);
}

/* segments=auto: at least 8 (the size may be hours old), one per 8 MiB
** beyond, at most 16. */
static void test_auto_segments(void) {
  const long long MiB = 1024 * 1024;
  CHECK_INT(dd_auto_segments(-1), 8);
  CHECK_INT(dd_auto_segments(0), 8); /* unknown, or loaded in the last hours */
  CHECK_INT(dd_auto_segments(8 * MiB - 1), 8);
  CHECK_INT(dd_auto_segments(25 * MiB), 8);
  CHECK_INT(dd_auto_segments(64 * MiB - 1), 8);
  CHECK_INT(dd_auto_segments(64 * MiB), 9);
  CHECK_INT(dd_auto_segments(120 * MiB), 16);
  CHECK_INT(dd_auto_segments(1000000 * MiB), 16);
}

/* segments=auto's TotalSegments: one per MiB of a known size, between one
** and four per worker; an unknown size keeps one per worker. */
static void test_auto_units(void) {
  const long long MiB = 1024 * 1024;
  CHECK_INT(dd_auto_units(-1, 8), 8);
  CHECK_INT(dd_auto_units(0, 8), 8); /* unknown, or loaded in the last hours */
  CHECK_INT(dd_auto_units(MiB, 8), 8);
  CHECK_INT(dd_auto_units(9 * MiB - 1, 8), 8);
  CHECK_INT(dd_auto_units(9 * MiB, 8), 9);
  CHECK_INT(dd_auto_units(25 * MiB, 8), 25);
  CHECK_INT(dd_auto_units(32 * MiB, 8), 32);
  CHECK_INT(dd_auto_units(100 * MiB, 8), 32);
  CHECK_INT(dd_auto_units(1000000 * MiB, 16), 64);
}

/* keys = ?: the JSON key list becomes distinct table keys, or an error
** naming the key (dd_keys_parse; the calls are in 057_keys.test). */
static void test_keys_parse(void) {
  static char zPk[] = "PK", zSk[] = "SK";
  dd_vtab vt;
  dd_column cols[2];
  dd_path paths[1];
  ddb_index idx[1];
  ddb_item **aKey = NULL;
  int nKey = -1, i;
  sqlite3_value *v;
  memset(&vt, 0, sizeof(vt));
  memset(cols, 0, sizeof(cols));
  memset(paths, 0, sizeof(paths));
  memset(idx, 0, sizeof(idx));
  cols[0].zName = zPk;
  cols[0].type = DDB_S;
  cols[1].zName = zSk;
  cols[1].type = DDB_N;
  paths[0].pIdx = &idx[0];
  paths[0].iPk = 0;
  paths[0].iSk = 1;
  vt.aCol = cols;
  vt.nCol = 2;
  vt.aPath = paths;
  vt.nPath = 1;
  vt.azKey[0] = zPk;
  vt.azKey[1] = zSk;
  vt.nKey = 2;
  vt.db = open_db();
  if(!vt.db) {
    CHECK(0);
    return;
  }
  /* duplicates (1 and 1.0), the object form, a number in text, a key no
  ** item can have (the empty string) left out; sorted */
  v = sqlv(vt.db, "'[[\"b\", 2], [\"a\", 1], [\"a\", 1.0], "
                  "{\"PK\": \"b\", \"SK\": \"2\"}, [\"\", 3], [\"a\", 10]]'");
  CHECK_INT(dd_keys_parse(&vt, v, &aKey, &nKey), SQLITE_OK);
  CHECK_INT(nKey, 3);
  if(nKey == 3) {
    const ddb_av *a0 = ddb_item_get(aKey[0], "PK");
    const ddb_av *s0 = ddb_item_get(aKey[0], "SK");
    const ddb_av *s1 = ddb_item_get(aKey[1], "SK");
    const ddb_av *p2 = ddb_item_get(aKey[2], "PK");
    CHECK(a0 && a0->type == DDB_S && a0->n == 1 && a0->text[0] == 'a');
    CHECK(s0 && s0->type == DDB_N && s0->n == 1 && s0->text[0] == '1');
    CHECK(s1 && s1->n == 2 && memcmp(s1->text, "10", 2) == 0);
    CHECK(p2 && p2->n == 1 && p2->text[0] == 'b');
  }
  for(i = 0; i < nKey; i++)
    ddb_item_unref(aKey[i]);
  sqlite3_free(aKey);
  sqlite3_value_free(v);
  /* NULL: no key, no error */
  v = sqlv(vt.db, "NULL");
  CHECK_INT(dd_keys_parse(&vt, v, &aKey, &nKey), SQLITE_OK);
  CHECK_INT(nKey, 0);
  sqlite3_free(aKey);
  sqlite3_value_free(v);
  /* errors name the key and what is wrong */
  v = sqlv(vt.db, "'[[\"a\", 1], [\"a\"]]'");
  CHECK_INT(dd_keys_parse(&vt, v, &aKey, &nKey), SQLITE_ERROR);
  CHECK(vt.base.zErrMsg &&
        strstr(vt.base.zErrMsg, "key 1 ([\"a\"]) has the wrong shape"));
  sqlite3_value_free(v);
  v = sqlv(vt.db, "'[[\"a\", true]]'");
  CHECK_INT(dd_keys_parse(&vt, v, &aKey, &nKey), SQLITE_ERROR);
  CHECK(vt.base.zErrMsg &&
        strstr(vt.base.zErrMsg, "SK must be a JSON number (N key)"));
  sqlite3_value_free(v);
  v = sqlv(vt.db, "'[[\"a\", 1]'");
  CHECK_INT(dd_keys_parse(&vt, v, &aKey, &nKey), SQLITE_ERROR);
  CHECK(vt.base.zErrMsg &&
        strstr(vt.base.zErrMsg, "keys: not a JSON array of keys"));
  sqlite3_value_free(v);
  sqlite3_free(vt.base.zErrMsg);
  sqlite3_close(vt.db);
}

const tap_test tap_plan_tests[] = {
    {"ext: segments=auto", test_auto_segments},
    {"ext: segments=auto TotalSegments", test_auto_units},
    {"ext: begins_with(), dynamodb_calls() and column values",
     test_begins_with_func},
    {"ext: dd_plan_str and row estimates", test_plan_str},
    {"ext: dd_order_ok", test_order_ok},
    {"ext: dd_keys_parse (keys = ?)", test_keys_parse},
    {NULL, NULL}};
