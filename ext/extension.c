/*
** extension.c -- a SQLite virtual table over an Amazon DynamoDB table.
**
** Usage example (sqlite3 shell):
**
**    .load build/dynamodb
**    CREATE VIRTUAL TABLE shop USING dynamodb(
**       table=Store,                        -- default: the vtab's own name
**       region=us-east-1,                   -- default: AWS_REGION, ...
**       endpoint='http://127.0.0.1:8000'    -- default: AWS_ENDPOINT_URL_DYNAMODB
**    );
**    SELECT SK, json_extract(item, '$.email') FROM shop
**     WHERE PK = 'USER#alice' AND SK >= 'ORDER#';
**    EXPLAIN QUERY PLAN SELECT * FROM shop WHERE Type = 'ORDER';
**        -- SCAN shop VIRTUAL TABLE INDEX ...:Query GSI2 (Type = ?)
**
** The table's columns come from DescribeTable, asked by CREATE VIRTUAL
** TABLE and stored in the shadow table NAME_schema (opening the database
** again makes no call: see "The stored description"): one column per key
** attribute of the table and of every GSI and LSI, named exactly as the
** attribute, then `item`, the whole item as plain JSON.  Key columns are
** TEXT for S attributes, NUMERIC for N (INTEGER values when they fit in 64
** bits, else REAL when no digit is lost, else TEXT with every digit) and
** BLOB for B.
**
** WHERE constraints on key columns become the cheapest correct DynamoDB
** call (GetItem, BatchGetItem, Query on the table or an index); anything
** else is a paginated Scan.  SQLite re-checks every constraint (omit=0),
** so a pushed-down condition only ever needs to select a superset of the
** rows, never the exact set.  See the plan table above dynamodbBestIndex
** (plan.c).
**
** Also registered: begins_with(X, P), pushed down to DynamoDB's
** begins_with() when X is a sort key; dynamodb_calls(), a summary of the
** DynamoDB calls since the previous dynamodb_calls() (for tests and for
** seeing what a statement cost); dynamodb_refresh(NAME), which describes
** the table again and stores it.
**
** The module is spread over the files of ext/, in the order SQLite calls
** them: options.c (the parameters of CREATE VIRTUAL TABLE, one table of
** them), schema.c and desc.c (xCreate, xConnect: the columns, the stored
** description), plan.c and plancodec.c (xBestIndex, the plan as idxStr),
** filter.c and keycond.c (xFilter: the key conditions, the calls),
** cursor.c (xNext, xColumn, xRowid), keys.c (the hidden column keys),
** write.c and txn.c (xUpdate, transactions), functions.c (the SQL
** functions), monitor.c (statistics); dd_ext.h declares what they share.
** This file holds the module table and the entry point.
*/
#include <pthread.h>
#include <stdarg.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "dd_ext.h"

/* Every connected vtab of the process, for dynamodb_info(). */
pthread_mutex_t dd_registry_lock = PTHREAD_MUTEX_INITIALIZER;
dd_vtab *dd_registry;

/* ------------------------------------------------------------------------
** Errors
*/

/* Set the vtab's error message (freeing the old one) to DD_PREFIX and a
** printf-style message. */
void dd_error(dd_vtab *p, const char *zFmt, ...) {
  va_list ap;
  char *z;
  va_start(ap, zFmt);
  z = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  sqlite3_free(p->base.zErrMsg);
  p->base.zErrMsg = sqlite3_mprintf(DD_PREFIX "%s", z ? z : "out of memory");
  sqlite3_free(z);
}

/* ------------------------------------------------------------------------
** Interrupts
**
** sqlite3_interrupt() (and the shell's Ctrl-C, which calls it) sets a flag
** that SQLite itself checks only between its own opcodes: a statement
** waiting in xFilter or xNext for DynamoDB (a hung request, a retry
** loop's backoff) would not see it for (max_retries + 1) x timeout.  So
** the client polls a cancel hook while a request waits and between
** slices of every backoff sleep, and the hook asks SQLite.
** sqlite3_is_interrupted() exists from 3.41 on; before it (Debian 12 has
** 3.40) the flag can still be read: preparing " " runs the tokenizer,
** which checks db->u1.isInterrupted at every space token and fails with
** SQLITE_INTERRUPT while it is set (tokenize.c, sqlite3RunParser, 3.40;
** the flag is reset there only when no statement is active, and the hook
** runs inside one).  The hook runs only on the statement's thread (the
** connection's mutex is held, and recursive); worker threads poll a stop
** flag instead, which the statement's thread sets when it sees the
** interrupt (ddbc_stream_next, ddbc_batch_get_parallel). */
int dd_interrupted(void *pDb) {
  sqlite3 *db = pDb;
#if SQLITE_VERSION_NUMBER >= 3041000
  if(sqlite3_libversion_number() >= 3041000)
    return sqlite3_is_interrupted(db);
#endif
  sqlite3_stmt *pStmt = NULL;
  int rc = sqlite3_prepare_v2(db, " ", -1, &pStmt, NULL);
  sqlite3_finalize(pStmt);
  return rc == SQLITE_INTERRUPT;
}

/* The SQLite result code for a client error. */
int dd_rc(const ddb_error *e) {
  switch(e->code) {
  case DDB_OK: return SQLITE_OK;
  case DDB_ERR_NOMEM: return SQLITE_NOMEM;
  case DDB_ERR_CANCELLED: return SQLITE_INTERRUPT;
  default: return SQLITE_ERROR;
  }
}
/* The connected dynamodb vtab zName of db, or NULL. */
dd_vtab *dd_find(sqlite3 *db, const char *zName) {
  dd_vtab *p;
  pthread_mutex_lock(&dd_registry_lock);
  for(p = dd_registry; p; p = p->pNextVtab)
    if(p->db == db && sqlite3_stricmp(p->zVtabName, zName) == 0)
      break;
  pthread_mutex_unlock(&dd_registry_lock);
  return p;
}

/* ------------------------------------------------------------------------
** The table's configuration (called by xCreate and xConnect, the only
** place SQLite allows it)
*/

/* See dd_ext.h. */
void dd_vtab_config(sqlite3 *db) {
  /* A statement may read (and later write) DynamoDB with the user's
  ** credentials, to the endpoint the file names.  A view or trigger stored
  ** in a database file runs whenever that file is used, and a file can
  ** come from anyone, so the table is DIRECTONLY: SQLite refuses it inside
  ** the schema's views and triggers (after xConnect, which makes no call).
  ** Views over the table are useful for reports, but that is what TEMP
  ** views and triggers are for: only the user's own session creates them,
  ** and they still work:
  **   CREATE TEMP VIEW orders AS SELECT ... FROM shop WHERE ...; */
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  /* an INSERT that finds its key returns SQLITE_CONSTRAINT and SQLite
  ** applies the statement's ON CONFLICT (IGNORE skips the row; REPLACE is
  ** done by xUpdate itself, as an unconditional PutItem) */
  sqlite3_vtab_config(db, SQLITE_VTAB_CONSTRAINT_SUPPORT, 1);
}

/* ------------------------------------------------------------------------
** The module
*/
static sqlite3_module dynamodbModule = {
    3,                    /* iVersion: savepoints, xShadowName */
    dynamodbCreate,       /* xCreate: describes and stores the table */
    dynamodbConnect,      /* xConnect: reads the stored description */
    dynamodbBestIndex,    /* xBestIndex */
    dynamodbDisconnect,   /* xDisconnect */
    dynamodbDestroy,      /* xDestroy: never deletes the DynamoDB table */
    dynamodbOpen,         /* xOpen */
    dynamodbClose,        /* xClose */
    dynamodbFilter,       /* xFilter */
    dynamodbNext,         /* xNext */
    dynamodbEof,          /* xEof */
    dynamodbColumn,       /* xColumn */
    dynamodbRowid,        /* xRowid */
    dd_update,            /* xUpdate: write.c */
    dd_begin,             /* xBegin */
    dd_sync,              /* xSync: COMMIT sends buffered writes */
    dd_commit,            /* xCommit */
    dd_rollback,          /* xRollback */
    dynamodbFindFunction, /* xFindFunction: begins_with */
    dynamodbRename,       /* xRename: renames NAME_schema too */
    dd_savepoint,         /* xSavepoint */
    dd_release,           /* xRelease */
    dd_rollback_to,       /* xRollbackTo */
    dynamodbShadowName    /* xShadowName: NAME_schema */
};

#ifdef _WIN32
__declspec(dllexport)
#endif
    int sqlite3_dynamodb_init(sqlite3 *db, char **pzErrMsg,
                              const sqlite3_api_routines *pApi) {
  int rc;
  SQLITE_EXTENSION_INIT2(pApi);
  (void)pzErrMsg;
  ddbc_pin(); /* the cache outlives the last connection (cache.c) */
  rc = sqlite3_create_module(db, "dynamodb", &dynamodbModule, 0);
  if(rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "begins_with", 2,
                                 SQLITE_UTF8 | SQLITE_DETERMINISTIC |
                                     SQLITE_INNOCUOUS,
                                 0, dd_begins_with_func, 0, 0);
  if(rc == SQLITE_OK)
    rc = dd_register_log(db);
  if(rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "dynamodb_info", 1,
                                 SQLITE_UTF8 | SQLITE_DIRECTONLY, 0,
                                 dd_info_func, 0, 0);
  /* DIRECTONLY: functions that reach DynamoDB with the user's
  ** credentials (dynamodb_info resolves them, dynamodb_refresh calls) are
  ** refused inside the views and triggers of a database file */
  if(rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "dynamodb_refresh", 1,
                                 SQLITE_UTF8 | SQLITE_DIRECTONLY, 0,
                                 dd_refresh_func, 0, 0);
  if(rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "dynamodb_calls", 0,
                                 SQLITE_UTF8 | SQLITE_DIRECTONLY, 0,
                                 dd_calls_func, 0, 0);
  return rc;
}
