/*
** hot.c -- dynamodb_hot, an eponymous virtual table: the partition keys
** this process sent the most requests for, per table and index (the top
** 100 of cache/hot.c's bounded counter: Space-Saving over 1,024 keys,
** whose requests overcount a key by at most its hidden column error).
**
**    SELECT table_name, index_name, partition_key, requests, rcu
**      FROM dynamodb_hot ORDER BY requests DESC LIMIT 5;
**
** Columns: table_name, index_name (NULL: the table itself),
** partition_key (its value as text: S as it is, N as digits, B in
** base64), requests, items (read or written), rcu, wcu, throttled
** (throttling answers), key_range (those of them whose reasons named this
** key's table or index as a hot key range: DynamoDB's own word that the
** key is hot; cache/hot.c); hidden error.  Reading it makes no call; it is
** direct-only all the same (its keys are data).
*/
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "dd_ext.h"

/* The rows shown at the most. */
#define HOT_TOP 100

typedef struct hot_cursor {
  sqlite3_vtab_cursor base; /* Base class.  Must be first */
  ddbc_hot_row *a;          /* ddbc_hot_free() */
  int n, i;
} hot_cursor;

static int hotConnect(sqlite3 *db, void *pAux, int argc,
                      const char *const *argv, sqlite3_vtab **ppVtab,
                      char **pzErr) {
  (void)pAux;
  (void)argc;
  (void)argv;
  (void)pzErr;
  /* no network, but the partition keys are the user's data (customer
  ** ids, ...): a view or trigger of someone else's database file could
  ** copy them into the file, so it is direct-only (see dd_vtab_config) */
  return dd_eponymous_connect(
      db,
      "CREATE TABLE x(table_name TEXT, index_name TEXT, partition_key "
      "TEXT, requests INTEGER, items INTEGER, rcu REAL, wcu REAL, "
      "throttled INTEGER, key_range INTEGER, error INTEGER HIDDEN)",
      sizeof(sqlite3_vtab), SQLITE_VTAB_DIRECTONLY, ppVtab);
}

static int hotDisconnect(sqlite3_vtab *p) {
  sqlite3_free(p);
  return SQLITE_OK;
}

static int hotBestIndex(sqlite3_vtab *p, sqlite3_index_info *pInfo) {
  (void)p;
  pInfo->estimatedCost = HOT_TOP;
  pInfo->estimatedRows = HOT_TOP;
  return SQLITE_OK;
}

static int hotOpen(sqlite3_vtab *p, sqlite3_vtab_cursor **ppCur) {
  (void)p;
  return dd_eponymous_open(sizeof(hot_cursor), ppCur);
}

static int hotClose(sqlite3_vtab_cursor *cur) {
  hot_cursor *c = (hot_cursor *)cur;
  ddbc_hot_free(c->a, c->n);
  sqlite3_free(c);
  return SQLITE_OK;
}

static int hotFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                     int argc, sqlite3_value **argv) {
  hot_cursor *c = (hot_cursor *)cur;
  (void)idxNum;
  (void)idxStr;
  (void)argc;
  (void)argv;
  ddbc_hot_free(c->a, c->n);
  c->a = NULL;
  c->i = 0;
  c->n = ddbc_hot_top(HOT_TOP, &c->a);
  if(c->n < 0) {
    c->n = 0;
    return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

static int hotNext(sqlite3_vtab_cursor *cur) {
  ((hot_cursor *)cur)->i++;
  return SQLITE_OK;
}

static int hotEof(sqlite3_vtab_cursor *cur) {
  hot_cursor *c = (hot_cursor *)cur;
  return c->i >= c->n;
}

static int hotColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  hot_cursor *c = (hot_cursor *)cur;
  const ddbc_hot_row *r = &c->a[c->i];
  switch(col) {
  /* names a server told (DescribeTable's), as shown */
  case 0: return dd_result_shown(ctx, r->table);
  case 1: return dd_result_shown(ctx, r->index);
  case 2:
    sqlite3_result_text(ctx, r->pk, (int)r->pk_len, SQLITE_TRANSIENT);
    break;
  case 3: sqlite3_result_int64(ctx, (sqlite3_int64)r->requests); break;
  case 4: sqlite3_result_int64(ctx, (sqlite3_int64)r->items); break;
  case 5: sqlite3_result_double(ctx, r->rcu); break;
  case 6: sqlite3_result_double(ctx, r->wcu); break;
  case 7: sqlite3_result_int64(ctx, (sqlite3_int64)r->throttled); break;
  case 8: sqlite3_result_int64(ctx, (sqlite3_int64)r->key_range); break;
  default: sqlite3_result_int64(ctx, (sqlite3_int64)r->error); break;
  }
  return SQLITE_OK;
}

static int hotRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid) {
  *pRowid = ((hot_cursor *)cur)->i;
  return SQLITE_OK;
}

static sqlite3_module hotModule = {
    0,             /* iVersion */
    0,             /* xCreate: eponymous only */
    hotConnect,    /* xConnect */
    hotBestIndex,  /* xBestIndex: always the whole top */
    hotDisconnect, /* xDisconnect */
    0,             /* xDestroy */
    hotOpen,       /* xOpen */
    hotClose,      /* xClose */
    hotFilter,     /* xFilter: a copy of the counters */
    hotNext,       /* xNext */
    hotEof,        /* xEof */
    hotColumn,     /* xColumn */
    hotRowid,      /* xRowid */
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

/* See dd_ext.h. */
int dd_register_hot(sqlite3 *db) {
  return sqlite3_create_module(db, "dynamodb_hot", &hotModule, 0);
}
