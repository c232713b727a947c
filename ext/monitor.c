/*
** log.c -- dynamodb_log, an eponymous virtual table over the process's
** request log: one row per HTTP request sent to DynamoDB, oldest first,
** the last DDB_LOG_SIZE (4096) kept.
**
**    SELECT operation, index_name, page, items FROM dynamodb_log
**     WHERE seq > 10;
**
** Columns: seq (1, 2, ...), operation ("Query", "GetItem", ...),
** table_name, index_name (NULL for the base table), page (1 for the first
** request of a call, 2, 3, ... for follow-up pages and batch retries),
** http_status, retries, items (items returned, NULL if not known), ms.
*/
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "../client/ddb_client.h"
#include "dd_ext.h"

typedef struct log_cursor {
  sqlite3_vtab_cursor base; /* Base class.  Must be first */
  ddb_log_entry *a;         /* snapshot; sqlite3_free() */
  int n, i;
  int *aPage; /* page number of each entry */
} log_cursor;

static int logConnect(sqlite3 *db, void *pAux, int argc,
                      const char *const *argv, sqlite3_vtab **ppVtab,
                      char **pzErr) {
  sqlite3_vtab *p;
  int rc;
  (void)pAux;
  (void)argc;
  (void)argv;
  (void)pzErr;
  rc = sqlite3_declare_vtab(db, "CREATE TABLE x(seq INTEGER, operation TEXT,"
                                " table_name TEXT, index_name TEXT, page "
                                "INTEGER, http_status INTEGER, retries "
                                "INTEGER, items INTEGER, ms REAL)");
  if(rc)
    return rc;
  p = sqlite3_malloc(sizeof(*p));
  if(!p)
    return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  /* reading the log touches no network and no secret */
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  *ppVtab = p;
  return SQLITE_OK;
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
  log_cursor *c = sqlite3_malloc(sizeof(*c));
  (void)p;
  if(!c)
    return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  *ppCur = &c->base;
  return SQLITE_OK;
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
  case 2: sqlite3_result_text(ctx, e->table, -1, SQLITE_TRANSIENT); break;
  case 3:
    if(e->index[0])
      sqlite3_result_text(ctx, e->index, -1, SQLITE_TRANSIENT);
    break;
  case 4: sqlite3_result_int(ctx, c->aPage[c->i]); break;
  case 5: sqlite3_result_int(ctx, e->http_status); break;
  case 6: sqlite3_result_int(ctx, e->retries); break;
  case 7:
    if(e->items >= 0)
      sqlite3_result_int(ctx, e->items);
    break;
  default: sqlite3_result_double(ctx, e->ms); break;
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

int dd_register_log(sqlite3 *db) {
  return sqlite3_create_module(db, "dynamodb_log", &logModule, 0);
}
