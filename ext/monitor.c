/*
** monitor.c -- what the process did: dynamodb_stats and dynamodb_log
** (eponymous virtual tables), dynamodb_cache_size() and
** dynamodb_cache_clear(); and what a write tells the user on a terminal
** (a split write's progress line, the hint to batch single-row writes).
**
** dynamodb_stats(name, value): the cache's and the client's counters,
** process-wide:
**
**    SELECT value FROM dynamodb_stats WHERE name = 'item_hits';
**
** dynamodb_log: the process's request log: one row per HTTP request sent to DynamoDB, oldest first,
** the last DDB_LOG_SIZE (4096) kept; with a shared tier, also one row per
** round trip to Redis, its operation shared_get, shared_fill,
** shared_write, shared_timeout or shared_error (items: the entries found
** or stored).
**
**    SELECT operation, index_name, page, items FROM dynamodb_log
**     WHERE seq > 10;
**
** Columns: seq (1, 2, ...), operation ("Query", "GetItem", ...),
** table_name, index_name (NULL for the base table), page (1 for the first
** request of a call, 2, 3, ... for follow-up pages and batch retries),
** http_status, retries, items (items returned, NULL if not known), ms,
** note (NULL, or for a call of a statement or COMMIT whose writes were
** cut into calls that are not atomic together, which: "INSERT call 3 of
** 12, not atomic", see commit_send.c),
** rcu and wcu (the ConsumedCapacity the answer reported), cached (1: a
** Query or Scan page the query cache answered, no request sent; its
** http_status NULL), age_s (a cached page's age in seconds, else NULL),
** stmt (the statement it served: dynamodb_last()'s "stmt"), throttle
** (NULL, or when DynamoDB throttled the request, the last throttling
** answer's reasons, "TableReadKeyRangeThroughputExceeded Orders" or
** "IndexWriteProvisionedThroughputExceeded Orders/ByStatus", joined by
** "; ", or its error type when it gave none).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "../cache/ddb_cache.h"
#include "dd_ext.h"

typedef struct log_cursor {
  sqlite3_vtab_cursor base; /* Base class.  Must be first */
  ddb_log_entry *a;         /* snapshot; sqlite3_free() */
  int n, i;
  int *aPage; /* page number of each entry */
} log_cursor;

/* dynamodb_log and dynamodb_stats are innocuous: reading them touches no
** network and no secret. */
#define DD_LOG_CONFIG SQLITE_VTAB_INNOCUOUS

static int logConnect(sqlite3 *db, void *pAux, int argc,
                      const char *const *argv, sqlite3_vtab **ppVtab,
                      char **pzErr) {
  (void)pAux;
  (void)argc;
  (void)argv;
  (void)pzErr;
  return dd_eponymous_connect(
      db,
      "CREATE TABLE x(seq INTEGER, operation TEXT,"
      " table_name TEXT, index_name TEXT, page "
      "INTEGER, http_status INTEGER, retries "
      "INTEGER, items INTEGER, ms REAL, note TEXT, "
      "rcu REAL, wcu REAL, cached INTEGER, age_s REAL, "
      "stmt INTEGER, throttle TEXT)",
      sizeof(sqlite3_vtab), DD_LOG_CONFIG, ppVtab);
}

static int logDisconnect(sqlite3_vtab *p) {
  sqlite3_free(p);
  return SQLITE_OK;
}

static int logBestIndex(sqlite3_vtab *p, sqlite3_index_info *pInfo) {
  (void)p;
  pInfo->estimatedCost = DDB_LOG_SIZE;
  return SQLITE_OK;
}

static int logOpen(sqlite3_vtab *p, sqlite3_vtab_cursor **ppCur) {
  (void)p;
  return dd_eponymous_open(sizeof(log_cursor), ppCur);
}

static int logClose(sqlite3_vtab_cursor *cur) {
  log_cursor *c = (log_cursor *)cur;
  sqlite3_free(c->a);
  sqlite3_free(c);
  return SQLITE_OK;
}

static int logFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                     int argc, sqlite3_value **argv) {
  log_cursor *c = (log_cursor *)cur;
  int i;
  (void)idxNum;
  (void)idxStr;
  (void)argc;
  (void)argv;
  sqlite3_free(c->a);
  c->a =
      sqlite3_malloc64((sizeof(ddb_log_entry) + sizeof(int)) * DDB_LOG_SIZE);
  if(!c->a)
    return SQLITE_NOMEM;
  c->aPage = (int *)(c->a + DDB_LOG_SIZE);
  c->n = ddb_log_read(0, c->a, DDB_LOG_SIZE);
  c->i = 0;
  for(i = 0; i < c->n; i++) {
    int j;
    c->aPage[i] = 1;
    if(!c->a[i].continuation)
      continue;
    /* a follow-up: one more than the latest request of the same kind */
    for(j = i - 1; j >= 0; j--)
      if(strcmp(c->a[j].operation, c->a[i].operation) == 0 &&
         strcmp(c->a[j].table, c->a[i].table) == 0 &&
         strcmp(c->a[j].index, c->a[i].index) == 0) {
        c->aPage[i] = c->aPage[j] + 1;
        break;
      }
  }
  return SQLITE_OK;
}

static int logNext(sqlite3_vtab_cursor *cur) {
  ((log_cursor *)cur)->i++;
  return SQLITE_OK;
}

static int logEof(sqlite3_vtab_cursor *cur) {
  log_cursor *c = (log_cursor *)cur;
  return c->i >= c->n;
}

static int logColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  log_cursor *c = (log_cursor *)cur;
  const ddb_log_entry *e = &c->a[c->i];
  switch(col) {
  case 0: sqlite3_result_int64(ctx, (sqlite3_int64)e->seq); break;
  case 1: sqlite3_result_text(ctx, e->operation, -1, SQLITE_TRANSIENT); break;
  /* names a server told (DescribeTable's index names), as shown */
  case 2: return dd_result_shown(ctx, e->table);
  case 3:
    if(e->index[0])
      return dd_result_shown(ctx, e->index);
    break;
  case 4: sqlite3_result_int(ctx, c->aPage[c->i]); break;
  case 5:
    if(!e->cached)
      sqlite3_result_int(ctx, e->http_status);
    break;
  case 6: sqlite3_result_int(ctx, e->retries); break;
  case 7:
    if(e->items >= 0)
      sqlite3_result_int(ctx, e->items);
    break;
  case 8: sqlite3_result_double(ctx, e->ms); break;
  case 9:
    if(e->note[0])
      sqlite3_result_text(ctx, e->note, -1, SQLITE_TRANSIENT);
    break;
  case 10: sqlite3_result_double(ctx, e->rcu); break;
  case 11: sqlite3_result_double(ctx, e->wcu); break;
  case 12: sqlite3_result_int(ctx, e->cached); break;
  case 13:
    /* the cache's clock ticks in milliseconds */
    if(e->cached)
      sqlite3_result_double(ctx,
                            (double)(long long)(e->age_s * 1000 + 0.5) / 1000);
    break;
  case 14:
    if(e->stmt)
      sqlite3_result_int64(ctx, (sqlite3_int64)e->stmt);
    break;
  default:
    /* DynamoDB's reasons (ARNs' names): as shown */
    if(e->throttle[0])
      return dd_result_shown(ctx, e->throttle);
    break;
  }
  return SQLITE_OK;
}

static int logRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid) {
  log_cursor *c = (log_cursor *)cur;
  *pRowid = (sqlite3_int64)c->a[c->i].seq;
  return SQLITE_OK;
}

static sqlite3_module logModule = {
    0,             /* iVersion */
    0,             /* xCreate: eponymous only */
    logConnect,    /* xConnect */
    logBestIndex,  /* xBestIndex */
    logDisconnect, /* xDisconnect */
    0,             /* xDestroy */
    logOpen,       /* xOpen */
    logClose,      /* xClose */
    logFilter,     /* xFilter */
    logNext,       /* xNext */
    logEof,        /* xEof */
    logColumn,     /* xColumn */
    logRowid,      /* xRowid */
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0 /* xUpdate .. xShadowName: none */
};

/* ------------------------------------------------------------------------
** dynamodb_stats
*/
#define STATS_MAX (20 + DDB_OP_COUNT + DD_SHARED_STATS + DD_READER_STATS)
/* coherence=streams: the rows of each reader (the first DD_READERS_STATS):
** state (text), lag_s, records, polls, clears, own_skipped, errors. */
#define DD_READERS_STATS 8
#define DD_READER_STATS  (1 + 7 * DD_READERS_STATS)
/* The shared tier's rows (shared_hits .. shared_lease_fallbacks). */
#define DD_SHARED_STATS 12

typedef struct stats_cursor {
  sqlite3_vtab_cursor base; /* Base class.  Must be first */
  int n, i;
  char azName[STATS_MAX][64];
  char azText[DD_READERS_STATS][200]; /* a reader's state */
  int aText[STATS_MAX];               /* 1 + its azText, or 0: a number */
  double aValue[STATS_MAX];
  int aIsInt[STATS_MAX];
} stats_cursor;

static int statsConnect(sqlite3 *db, void *pAux, int argc,
                        const char *const *argv, sqlite3_vtab **ppVtab,
                        char **pzErr) {
  (void)pAux;
  (void)argc;
  (void)argv;
  (void)pzErr;
  return dd_eponymous_connect(db, "CREATE TABLE x(name TEXT, value)",
                              sizeof(sqlite3_vtab), DD_LOG_CONFIG, ppVtab);
}

static int statsOpen(sqlite3_vtab *p, sqlite3_vtab_cursor **ppCur) {
  (void)p;
  return dd_eponymous_open(sizeof(stats_cursor), ppCur);
}

static int statsClose(sqlite3_vtab_cursor *cur) {
  sqlite3_free(cur);
  return SQLITE_OK;
}

static void stats_add(stats_cursor *c, const char *zName, double v, int bInt) {
  if(c->n >= STATS_MAX)
    return;
  sqlite3_snprintf(sizeof(c->azName[0]), c->azName[c->n], "%s", zName);
  c->aValue[c->n] = v;
  c->aIsInt[c->n] = bInt;
  c->aText[c->n] = 0;
  c->n++;
}

/* coherence=streams: the readers' rows (none without a reader),
** "stream_readers" then for each
** "stream.TABLE.state" ("following", or "fallback-ttl: why") and its
** numbers (the name cut to fit). */
static void stats_readers(stats_cursor *c) {
  ddbc_reader_info a[DD_READERS_STATS];
  int i, n = ddbc_readers_info(a, DD_READERS_STATS);
  char zName[64];
  if(n)
    stats_add(c, "stream_readers", (double)n, 1); /* all of them */
  for(i = 0; i < n && i < DD_READERS_STATS; i++) {
    const ddbc_reader_info *r = &a[i];
#define READER_ROW(zWhat, v, bInt)                                            \
  do {                                                                        \
    sqlite3_snprintf(sizeof(zName), zName, "stream.%.40s.%s", r->table,       \
                     zWhat);                                                  \
    stats_add(c, zName, v, bInt);                                             \
  } while(0)
    READER_ROW("state", 0, 0);
    sqlite3_snprintf(sizeof(c->azText[i]), c->azText[i], "%s%s%s",
                     r->following ? "following" : "fallback-ttl",
                     r->why[0] ? ": " : "", r->why);
    c->aText[c->n - 1] = 1 + i;
    READER_ROW("lag_s", r->lag, 0);
    READER_ROW("records", (double)r->records, 1);
    READER_ROW("polls", (double)r->polls, 1);
    READER_ROW("clears", (double)r->clears, 1);
    READER_ROW("own_skipped", (double)r->own_skipped, 1);
    READER_ROW("errors", (double)r->errors, 1);
#undef READER_ROW
  }
}

/* Snapshot every counter, in a fixed order. */
static int statsFilter(sqlite3_vtab_cursor *cur, int idxNum,
                       const char *idxStr, int argc, sqlite3_value **argv) {
  stats_cursor *c = (stats_cursor *)cur;
  ddbc_stats cs;
  ddb_stats rs;
  int nPeak;
  long long nPeakByte;
  char zName[40];
  int i;
  (void)idxNum;
  (void)idxStr;
  (void)argc;
  (void)argv;
  ddbc_stats_get(&cs);
  ddb_stats_get(&rs);
  c->n = c->i = 0;
  stats_add(c, "item_hits", (double)cs.item_hits, 1);
  stats_add(c, "item_misses", (double)cs.item_misses, 1);
  stats_add(c, "query_hits", (double)cs.query_hits, 1);
  stats_add(c, "query_misses", (double)cs.query_misses, 1);
  stats_add(c, "evictions", (double)cs.evictions, 1);
  stats_add(c, "expirations", (double)cs.expirations, 1);
  stats_add(c, "stale", (double)cs.stale, 1);
  stats_add(c, "entries", (double)cs.entries, 1);
  stats_add(c, "bytes", (double)cs.bytes, 1);
  stats_add(c, "bytes_max", (double)cs.bytes_max, 1);
  stats_add(c, "requests", (double)rs.requests, 1);
  for(i = 0; i < DDB_OP_COUNT; i++) {
    sqlite3_snprintf(sizeof(zName), zName, "requests_%s",
                     ddb_op_name((ddb_op)i));
    stats_add(c, zName, (double)rs.op_requests[i], 1);
  }
  stats_add(c, "retries", (double)rs.retries, 1);
  stats_add(c, "throttles", (double)rs.throttles, 1);
  stats_add(c, "consumed_rcu", rs.consumed_rcu, 0);
  stats_add(c, "consumed_wcu", rs.consumed_wcu, 0);
  stats_add(c, "rate_waits", (double)rs.rate_waits, 1);
  stats_add(c, "rate_wait_s", rs.rate_wait_s, 0);
  ddbc_stream_peak(&nPeak, &nPeakByte);
  stats_add(c, "scan_pages_peak", (double)nPeak, 1);
  stats_add(c, "scan_bytes_peak", (double)nPeakByte, 1);
  stats_add(c, "shared_hits", (double)cs.shared_hits, 1);
  stats_add(c, "shared_misses", (double)cs.shared_misses, 1);
  stats_add(c, "shared_fills", (double)cs.shared_fills, 1);
  stats_add(c, "shared_auth_failures", (double)cs.shared_auth_failures, 1);
  stats_add(c, "shared_timeouts", (double)cs.shared_timeouts, 1);
  stats_add(c, "shared_errors", (double)cs.shared_errors, 1);
  stats_add(c, "shared_skipped", (double)cs.shared_skipped, 1);
  stats_add(c, "shared_down", (double)cs.shared_down, 1);
  stats_add(c, "shared_lease_wins", (double)cs.shared_lease_wins, 1);
  stats_add(c, "shared_lease_waits", (double)cs.shared_lease_waits, 1);
  stats_add(c, "shared_lease_stale", (double)cs.shared_lease_stale, 1);
  stats_add(c, "shared_lease_fallbacks", (double)cs.shared_lease_fallbacks, 1);
  stats_readers(c);
  return SQLITE_OK;
}

static int statsNext(sqlite3_vtab_cursor *cur) {
  ((stats_cursor *)cur)->i++;
  return SQLITE_OK;
}

static int statsEof(sqlite3_vtab_cursor *cur) {
  stats_cursor *c = (stats_cursor *)cur;
  return c->i >= c->n;
}

static int statsColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx,
                       int col) {
  stats_cursor *c = (stats_cursor *)cur;
  if(col == 0)
    sqlite3_result_text(ctx, c->azName[c->i], -1, SQLITE_TRANSIENT);
  else if(c->aText[c->i])
    sqlite3_result_text(ctx, c->azText[c->aText[c->i] - 1], -1,
                        SQLITE_TRANSIENT);
  else if(c->aValue[c->i] < 0 && !c->aIsInt[c->i])
    sqlite3_result_null(ctx); /* a lag not known: not following */
  else if(c->aIsInt[c->i])
    sqlite3_result_int64(ctx, (sqlite3_int64)c->aValue[c->i]);
  else
    sqlite3_result_double(ctx, c->aValue[c->i]);
  return SQLITE_OK;
}

static int statsRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid) {
  *pRowid = ((stats_cursor *)cur)->i;
  return SQLITE_OK;
}

static sqlite3_module statsModule = {
    0,             /* iVersion */
    0,             /* xCreate: eponymous only */
    statsConnect,  /* xConnect */
    logBestIndex,  /* xBestIndex: always a full scan of a few rows */
    logDisconnect, /* xDisconnect */
    0,             /* xDestroy */
    statsOpen,     /* xOpen */
    statsClose,    /* xClose */
    statsFilter,   /* xFilter */
    statsNext,     /* xNext */
    statsEof,      /* xEof */
    statsColumn,   /* xColumn */
    statsRowid,    /* xRowid */
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0 /* xUpdate .. xShadowName: none */
};

/* dynamodb_cache_size(N): set the process-wide cache budget to N bytes and
** return the old budget; with no argument, return the budget. */
static void cacheSizeFunc(sqlite3_context *ctx, int argc,
                          sqlite3_value **argv) {
  ddbc_stats cs;
  sqlite3_int64 n;
  if(argc == 0) {
    ddbc_stats_get(&cs);
    sqlite3_result_int64(ctx, (sqlite3_int64)cs.bytes_max);
    return;
  }
  if(sqlite3_value_numeric_type(argv[0]) != SQLITE_INTEGER ||
     (n = sqlite3_value_int64(argv[0])) < 0) {
    sqlite3_result_error(ctx,
                         "dynamodb: dynamodb_cache_size() takes a "
                         "number of bytes >= 0",
                         -1);
    return;
  }
  sqlite3_result_int64(ctx, (sqlite3_int64)ddbc_set_budget((size_t)n));
}

/* dynamodb_cache_clear(): drop every cached item and page; returns the
** number of entries dropped.  dynamodb_cache_clear(NAME): only those of
** the DynamoDB table behind the virtual table NAME (at its endpoint and
** region, whoever read them), and its DescribeTable answers. */
static void cacheClearFunc(sqlite3_context *ctx, int argc,
                           sqlite3_value **argv) {
  ddbc_stats cs;
  if(argc == 1) {
    const char *zName = (const char *)sqlite3_value_text(argv[0]);
    sqlite3 *db = sqlite3_context_db_handle(ctx);
    dd_vtab *p = zName ? dd_find_connected(db, zName) : NULL;
    if(!p) {
      char *z = sqlite3_mprintf(DD_PREFIX "dynamodb_cache_clear: no dynamodb "
                                          "table '%s'",
                                zName ? zName : "");
      sqlite3_result_error(ctx, z ? z : DD_PREFIX "out of memory", -1);
      sqlite3_free(z);
      return;
    }
    /* the client names the place (no call: credentials resolve) */
    if(dd_client(p)) {
      sqlite3_result_error(ctx, p->base.zErrMsg, -1);
      return;
    }
    sqlite3_result_int64(
        ctx, (sqlite3_int64)ddbc_clear_table(p->pClient, p->pDesc->name));
    return;
  }
  (void)argv;
  ddbc_stats_get(&cs);
  ddbc_clear();
  sqlite3_result_int64(ctx, (sqlite3_int64)cs.entries);
}

int dd_register_log(sqlite3 *db) {
  int rc = sqlite3_create_module(db, "dynamodb_log", &logModule, 0);
  if(rc == SQLITE_OK)
    rc = sqlite3_create_module(db, "dynamodb_stats", &statsModule, 0);
  if(rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "dynamodb_cache_size", 1,
                                 SQLITE_UTF8 | SQLITE_DIRECTONLY, 0,
                                 cacheSizeFunc, 0, 0);
  if(rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "dynamodb_cache_size", 0,
                                 SQLITE_UTF8 | SQLITE_DIRECTONLY, 0,
                                 cacheSizeFunc, 0, 0);
  if(rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "dynamodb_cache_clear", 0,
                                 SQLITE_UTF8 | SQLITE_DIRECTONLY, 0,
                                 cacheClearFunc, 0, 0);
  if(rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "dynamodb_cache_clear", 1,
                                 SQLITE_UTF8 | SQLITE_DIRECTONLY, 0,
                                 cacheClearFunc, 0, 0);
  return rc;
}
