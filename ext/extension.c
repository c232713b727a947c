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
** else is a paginated Scan.  What xBestIndex hands xFilter, and which
** constraints SQLite checks again (the keys' =, N comparisons are
** omitted), is ext/PLAN.md.
**
** Also registered: begins_with(X, P), pushed down to DynamoDB's
** begins_with() when X is a sort key; dynamodb_calls(), the DynamoDB calls
** since the previous dynamodb_calls(), counted (for tests and for seeing
** what a statement cost); dynamodb_last(), the last statement's cost as
** JSON; dynamodb_refresh(NAME), which describes the table again and
** stores it; dynamodb_version(), the version; the tables dynamodb_tables
** (what the credentials can see), dynamodb_attributes(NAME) (a sample's
** attributes), dynamodb_hot (the partition keys read and written most),
** dynamodb_log, dynamodb_stats.
**
** The module is spread over the files of ext/, in the order SQLite calls
** them: options.c (the parameters of CREATE VIRTUAL TABLE, one table of
** them), schema.c and desc.c (xCreate, xConnect: the columns, the stored
** description), plan.c and plancodec.c (xBestIndex, the plan as idxStr),
** multikey.c and multikey.h (the Query of a multi-attribute GSI key),
** filter.c, lookups.c and keycond.c (xFilter: the key conditions, the
** calls), cursor.c (xNext, xColumn, xRowid), pages.c (the pages they
** walk), cursor.h (the read path's own header), keys.c (the hidden column
** keys),
** write.c and row.c (xUpdate: the row built, an item's changes as an
** UpdateItem), import.c (the shell's .import), txn.c (transactions),
** commit.c and commit.h (a COMMIT cut into calls), commit_send.c (the
** calls sent, a failure reported), functions.c (the SQL functions),
** monitor.c (statistics), stmt.c (each statement's cost), tables.c,
** attributes.c and hot.c (the eponymous tables dynamodb_tables,
** dynamodb_attributes, dynamodb_hot); common.c what every one of them
** uses (the API pointer, the error helper, interrupts, the registry, the
** table's sqlite3_vtab_config); dd_ext.h declares what they share;
** dynamodb.map exports this file's entry point and nothing else.  This
** file holds the module table and the entry point, and nothing calls back
** into it: the files of ext/ call each other without a cycle.
*/
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "../api/dyndb.h" /* DYN_VERSION only: the version's one place */
#include "dd_ext.h"

/* dynamodb_version(): the extension's version, DYN_VERSION of
** api/dyndb.h, which is also dyn_version()'s, the packages' and dyndb.pc's
** (`make version` prints it). */
static void dd_version_func(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv) {
  (void)argc;
  (void)argv;
  sqlite3_result_text(ctx, DYN_VERSION, -1, SQLITE_STATIC);
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
    dynamodbUpdate,       /* xUpdate: write.c */
    dynamodbBegin,        /* xBegin */
    dynamodbSync,         /* xSync: COMMIT sends buffered writes */
    dynamodbCommit,       /* xCommit */
    dynamodbRollback,     /* xRollback */
    dynamodbFindFunction, /* xFindFunction: begins_with */
    dynamodbRename,       /* xRename: renames NAME_schema too */
    dynamodbSavepoint,    /* xSavepoint */
    dynamodbRelease,      /* xRelease */
    dynamodbRollbackTo,   /* xRollbackTo */
    dynamodbShadowName    /* xShadowName: NAME_schema */
};

/* ------------------------------------------------------------------------
** The entry point
*/
/* The oldest SQLite the extension runs on, as sqlite3_libversion_number()
** gives it: 3.38.0, the first with sqlite3_vtab_in (an IN list handed to
** xFilter whole: plan.c, multikey.c).  An older one's API table has no
** such slot: a call through it would crash, so loading stops first. */
#define DD_SQLITE_MIN 3038000

/* Is the SQLite of version v (sqlite3_libversion_number()'s form, e.g.
** 3037002 for 3.37.2) new enough?  Returns SQLITE_OK, or SQLITE_ERROR with
** *pzErr (unless pzErr is NULL) a one-line message naming both versions,
** to free with sqlite3_free(). */
UNITTEST int dd_version_check(int v, char **pzErr) {
  if(v >= DD_SQLITE_MIN)
    return SQLITE_OK;
  if(pzErr)
    *pzErr =
        sqlite3_mprintf(DD_PREFIX "SQLite %d.%d.%d is too old: the "
                                  "extension needs %d.%d.0 or later "
                                  "(sqlite3_vtab_in); load it into a "
                                  "newer SQLite",
                        v / 1000000, v / 1000 % 1000, v % 1000,
                        DD_SQLITE_MIN / 1000000, DD_SQLITE_MIN / 1000 % 1000);
  return SQLITE_ERROR;
}

/* Load the extension into db: refuse an older SQLite than DD_SQLITE_MIN
** (*pzErrMsg says so), else register the module, its functions and its
** eponymous tables.  Returns SQLITE_OK or the first error. */
#ifdef _WIN32
__declspec(dllexport)
#endif
    int sqlite3_dynamodb_init(sqlite3 *db, char **pzErrMsg,
                              const sqlite3_api_routines *pApi) {
  dd_conn *pConn;
  int rc;
  SQLITE_EXTENSION_INIT2(pApi);
  rc = dd_version_check(sqlite3_libversion_number(), pzErrMsg);
  if(rc != SQLITE_OK)
    return rc;
  ddbc_pin(); /* the cache outlives the last connection (cache.c) */
  /* the connection's statement state: the module's client data, freed
  ** with the module (when the connection closes) */
  pConn = dd_conn_new(db);
  if(!pConn)
    return SQLITE_NOMEM;
  rc = sqlite3_create_module_v2(db, "dynamodb", &dynamodbModule, pConn,
                                dd_conn_free);
  if(rc == SQLITE_OK)
    rc = dd_register_stmt(db, pConn);
  if(rc == SQLITE_OK)
    rc = dd_register_tables(db, pConn);
  if(rc == SQLITE_OK)
    rc = dd_register_attributes(db, pConn);
  if(rc == SQLITE_OK)
    rc = dd_register_hot(db);
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
  if(rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "dynamodb_version", 0,
                                 SQLITE_UTF8 | SQLITE_DETERMINISTIC |
                                     SQLITE_INNOCUOUS,
                                 0, dd_version_func, 0, 0);
  return rc;
}
