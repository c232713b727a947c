/*
** functions.c -- the SQL functions of the extension (begins_with,
** dynamodb_refresh, dynamodb_info, dynamodb_calls) and the methods
** xFindFunction, xRename and xShadowName.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "dd_ext.h"

/* ------------------------------------------------------------------------
** SQL functions
*/

/* begins_with(X, P): 1 if X starts with P (as text, or as bytes when either
** is a blob), 0 if not, NULL if either is NULL. */
void dd_begins_with_func(sqlite3_context *ctx, int argc,
                         sqlite3_value **argv) {
  const unsigned char *zX, *zP;
  int nX, nP, bBlob;
  (void)argc;
  if(sqlite3_value_type(argv[0]) == SQLITE_NULL ||
     sqlite3_value_type(argv[1]) == SQLITE_NULL)
    return;
  bBlob = sqlite3_value_type(argv[0]) == SQLITE_BLOB ||
          sqlite3_value_type(argv[1]) == SQLITE_BLOB;
  zX = bBlob ? sqlite3_value_blob(argv[0]) : sqlite3_value_text(argv[0]);
  nX = sqlite3_value_bytes(argv[0]);
  zP = bBlob ? sqlite3_value_blob(argv[1]) : sqlite3_value_text(argv[1]);
  nP = sqlite3_value_bytes(argv[1]);
  sqlite3_result_int(ctx,
                     nP <= nX && (nP == 0 || memcmp(zX, zP, (size_t)nP) == 0));
}

/* See dd_ext.h. */
int dynamodbFindFunction(sqlite3_vtab *pVtab, int nArg, const char *zName,
                         void (**pxFunc)(sqlite3_context *, int,
                                         sqlite3_value **),
                         void **ppArg) {
  (void)pVtab;
  if(nArg == 2 && sqlite3_stricmp(zName, "begins_with") == 0) {
    *pxFunc = dd_begins_with_func;
    *ppArg = NULL;
    return DD_FUNC_BEGINS_WITH;
  }
  return 0;
}

/* Describe p's DynamoDB table again, past the cache's DescribeTable
** (*pd, ddb_table_desc_free).  Returns 0, or -1 with *pzErr (sqlite3_free)
** saying why. */
static int dd_refresh_describe(dd_vtab *p, ddb_table_desc **pd, char **pzErr) {
  ddb_error err;
  ddb_error_clear(&err);
  if(dd_client_make(p, 1)) {
    *pzErr = sqlite3_mprintf("%s", p->base.zErrMsg);
    return -1;
  }
  if(ddbc_describe_table_fresh(p->pClient, p->zTable, pd, &err) == DDB_OK)
    return 0;
  /* (a missing table's message names it, the endpoint and the region) */
  *pzErr = strcmp(err.type, "ResourceNotFoundException") == 0
               ? sqlite3_mprintf(DD_PREFIX "%s", err.message)
               : sqlite3_mprintf(DD_PREFIX "table '%s': %s", p->zTable,
                                 err.message);
  return -1;
}

/* Store d as p's description and make SQLite connect the table anew:
** SQLite declares a vtab's columns only when it connects it, so the
** shadow table is renamed away and back, which makes SQLite read the
** schema again (legacy ALTER: nothing refers to the shadow table, and a
** broken view elsewhere in the file does not stop it).  Returns an SQLite
** code; on error *pzErr (sqlite3_free) may say why. */
static int dd_refresh_store(sqlite3 *db, dd_vtab *p, const ddb_table_desc *d,
                            char **pzErr) {
  char *zSql;
  int rc, bLegacy = 0;
  dd_internal_sql++; /* the statement's own SQL (stmt.c) */
  rc = dd_desc_store(db, p->zDb, p->zVtabName, d, 0, pzErr);
  if(rc == SQLITE_OK) {
    sqlite3_db_config(db, SQLITE_DBCONFIG_LEGACY_ALTER_TABLE, -1, &bLegacy);
    sqlite3_db_config(db, SQLITE_DBCONFIG_LEGACY_ALTER_TABLE, 1, (int *)0);
    zSql = sqlite3_mprintf("ALTER TABLE \"%w\".\"%w_schema\" RENAME TO "
                           "\"%w_schema_refresh\"; ALTER TABLE \"%w\"."
                           "\"%w_schema_refresh\" RENAME TO \"%w_schema\"",
                           p->zDb, p->zVtabName, p->zVtabName, p->zDb,
                           p->zVtabName, p->zVtabName);
    rc = zSql ? sqlite3_exec(db, zSql, 0, 0, pzErr) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    sqlite3_db_config(db, SQLITE_DBCONFIG_LEGACY_ALTER_TABLE, bLegacy,
                      (int *)0);
  }
  dd_internal_sql--;
  return rc;
}

/* dynamodb_refresh's answer: "NAME: DynamoDB table T, N indexes (A, B)",
** a new string (sqlite3_free), NULL when out of memory. */
static char *dd_refresh_text(const char *zName, const ddb_table_desc *d) {
  sqlite3_str *s = sqlite3_str_new(0);
  int i;
  char *z, *zShown;
  sqlite3_str_appendf(s, "%s: DynamoDB table %s, %d index%s", zName, d->name,
                      d->n_indexes - 1, d->n_indexes == 2 ? "" : "es");
  for(i = 1; i < d->n_indexes; i++)
    sqlite3_str_appendf(s, "%s%s", i == 1 ? " (" : ", ", d->indexes[i].name);
  sqlite3_str_appendall(s, d->n_indexes > 1 ? ")" : "");
  /* the names are DescribeTable's: shown as error text is */
  z = sqlite3_str_finish(s);
  zShown = z ? dd_shown(z) : NULL;
  sqlite3_free(z);
  return zShown;
}

/* dynamodb_refresh(NAME): ask DynamoDB for the description of the table
** behind the virtual table NAME again (DescribeTable, bypassing the
** process's copy) and store it in NAME_schema, e.g. after a GSI was added
** or removed; also stores one for a table made by an older version of the
** extension, which has none.  The new columns and indexes are used from
** the next statement on.  Returns a line saying what is stored.  It
** reaches the network with the user's credentials, so it is DIRECTONLY. */
void dd_refresh_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  const char *zName = (const char *)sqlite3_value_text(argv[0]);
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  ddb_table_desc *d = NULL;
  char *zErr = NULL, *zText = NULL;
  dd_vtab *p;
  int rc = SQLITE_OK;
  (void)argc;

  if(!zName)
    return;
  /* connect the vtab if no statement has yet (xConnect makes no call) */
  p = dd_find_connected(db, zName);
  if(!p) {
    zErr = sqlite3_mprintf(DD_PREFIX "dynamodb_refresh: no dynamodb table "
                                     "'%s'",
                           zName);
  } else if(!sqlite3_get_autocommit(db)) {
    /* the new description reconnects the table: not under buffered writes */
    zErr = sqlite3_mprintf(DD_PREFIX "dynamodb_refresh: not inside a "
                                     "transaction (run it after COMMIT)");
  } else if(dd_refresh_describe(p, &d, &zErr) == 0) {
    rc = dd_refresh_store(db, p, d, &zErr);
    if(rc) {
      char *z = sqlite3_mprintf(DD_PREFIX "dynamodb_refresh: cannot store "
                                          "the description of '%s': %s",
                                zName, zErr ? zErr : sqlite3_errstr(rc));
      sqlite3_free(zErr);
      zErr = z;
    } else if((zText = dd_refresh_text(zName, d)) != NULL) {
      sqlite3_result_text(ctx, zText, -1, sqlite3_free);
    } else {
      sqlite3_result_error_nomem(ctx);
    }
  }
  if(zErr)
    sqlite3_result_error(ctx, zErr, -1);
  else if(rc == SQLITE_NOMEM)
    sqlite3_result_error_nomem(ctx);
  sqlite3_free(zErr);
  ddb_table_desc_free(d);
}

/* xRename: ALTER TABLE ... RENAME TO renames the stored description
** with the table (no call). */
int dynamodbRename(sqlite3_vtab *pVtab, const char *zNew) {
  dd_vtab *p = (dd_vtab *)pVtab;
  char *zSql, *zName;
  int rc;
  zName = sqlite3_mprintf("%s", zNew);
  zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema WHERE name = "
                         "'%q_schema' AND type = 'table'",
                         p->zDb, p->zVtabName);
  if(!zName || !zSql) {
    sqlite3_free(zName);
    sqlite3_free(zSql);
    return SQLITE_NOMEM;
  }
  dd_internal_sql++; /* the statement's own SQL (stmt.c) */
  {
    sqlite3_stmt *pStmt = NULL;
    int bHas;
    rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0);
    bHas = rc == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW;
    sqlite3_finalize(pStmt);
    sqlite3_free(zSql);
    zSql = NULL;
    if(bHas) /* a table made by an older version has none */
      zSql = sqlite3_mprintf("ALTER TABLE \"%w\".\"%w_schema\" RENAME TO "
                             "\"%w_schema\"",
                             p->zDb, p->zVtabName, zNew);
    else
      rc = SQLITE_OK;
  }
  if(zSql) {
    char *zErr = NULL;
    rc = sqlite3_exec(p->db, zSql, 0, 0, &zErr);
    if(rc)
      dd_error(p, "cannot rename the stored description: %s",
               zErr ? zErr : sqlite3_errstr(rc));
    sqlite3_free(zErr);
    sqlite3_free(zSql);
  }
  dd_internal_sql--;
  if(rc == SQLITE_OK) {
    pthread_mutex_lock(&dd_registry_lock);
    sqlite3_free(p->zVtabName);
    p->zVtabName = zName;
    pthread_mutex_unlock(&dd_registry_lock);
  } else {
    sqlite3_free(zName);
  }
  return rc;
}

/* xShadowName: NAME_schema is the stored description of vtab NAME. */
int dynamodbShadowName(const char *zSuffix) {
  return sqlite3_stricmp(zSuffix, "schema") == 0;
}

/* dynamodb_info(NAME): how the virtual table NAME of this connection is
** set up, as JSON: DynamoDB table, endpoint, region, where the credentials
** came from (never the credentials), scan and consistent_read, and the
** indexes with their partition and sort attributes in order
** (dd_indexes_json).  NULL when
** there is no such virtual table (or it was not used yet since opening
** the database: SQLite connects a virtual table on first use). */
void dd_info_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  const char *zName = (const char *)sqlite3_value_text(argv[0]);
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *azKey[] = {"table", "endpoint", "region", "credentials", "scan"};
  const char *azVal[5];
  dd_vtab *p;
  ddb_buf b;
  char *z, *zIdx;
  size_t n;
  int i;
  (void)argc;
  if(!zName)
    return;
  ddb_buf_init(&b, 2u << 20); /* the indexes: up to 1 MB */
  p = dd_find(db, zName);
  /* the vtabs of db are db's (this thread's) until it disconnects them:
  ** p stays valid after the registry's lock */
  if(p && dd_client(p)) {
    sqlite3_result_error(ctx, p->base.zErrMsg, -1);
    return;
  }
  pthread_mutex_lock(&dd_registry_lock);
  if(p) {
    azVal[0] = p->pDesc->name;
    azVal[1] = ddb_client_endpoint(p->pClient);
    azVal[2] = ddb_client_region(p->pClient);
    azVal[3] = ddb_client_credential_source(p->pClient);
    azVal[4] = p->bScanDeny ? "deny" : "allow";
    for(i = 0; i < 5; i++) {
      ddb_buf_addc(&b, i ? ',' : '{');
      ddb_buf_json_str(&b, azKey[i], strlen(azKey[i]));
      ddb_buf_addc(&b, ':');
      dd_json_shown(&b, azVal[i]); /* the table's name is DescribeTable's */
    }
    ddb_buf_addf(
        &b,
        ",\"consistent_read\":%s,\"segments\":%d,"
        "\"total_segments\":%d,\"table_bytes\":%lld}",
        p->pol.consistent ? "true" : "false", p->nSlice ? 1 : p->nSegments,
        p->nSlice ? p->nSlice : p->nUnits, (long long)p->pDesc->size_bytes);
    zIdx = dd_indexes_json(p->pDesc);
    if(zIdx && !b.failed && b.len > 0) {
      b.len--; /* the closing brace */
      ddb_buf_addf(&b, ",\"indexes\":%s}", zIdx);
      sqlite3_free(zIdx);
    } else {
      b.failed = 1;
    }
  }
  pthread_mutex_unlock(&dd_registry_lock);
  if(!p)
    return;
  z = ddb_buf_take(&b, &n);
  if(!z)
    sqlite3_result_error_nomem(ctx);
  else
    sqlite3_result_text64(ctx, z, n, free, SQLITE_UTF8);
}

/* The seq of the last request dynamodb_calls() reported. */
static uint64_t dd_calls_seen;

/* dynamodb_calls(): the DynamoDB calls made by this process since the
** previous dynamodb_calls(), counted by operation and index in the order
** each came first, e.g. "Query GSI1 x2, GetItem"; follow-up pages and
** retries of a call are not counted again, nor answers from the cache
** (no call).  "(none)" if there were none.  When the log (the last
** DDB_LOG_SIZE entries) dropped some since, it says how many. */
void dd_calls_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  ddb_log_entry *a;
  int *aCount;
  sqlite3_str *s;
  uint64_t after = __atomic_load_n(&dd_calls_seen, __ATOMIC_RELAXED);
  int i, j, n, nOut = 0;
  (void)argc;
  (void)argv;
  a = sqlite3_malloc64((sizeof(ddb_log_entry) + sizeof(int)) * DDB_LOG_SIZE);
  if(!a) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  aCount = (int *)(a + DDB_LOG_SIZE);
  n = ddb_log_read(after, a, DDB_LOG_SIZE);
  /* aCount[i]: the calls of entry i's kind, on the first entry of that
  ** kind; 0 on the others */
  for(i = 0; i < n; i++) {
    aCount[i] = 0;
    if(a[i].continuation || a[i].cached)
      continue;
    for(j = 0; j < i; j++)
      if(aCount[j] && strcmp(a[j].operation, a[i].operation) == 0 &&
         strcmp(a[j].index, a[i].index) == 0)
        break;
    aCount[j < i ? j : i]++;
  }
  s = sqlite3_str_new(0);
  for(i = 0; i < n; i++) {
    if(!aCount[i])
      continue;
    char *zIndex = dd_shown(a[i].index); /* DescribeTable's name */
    sqlite3_str_appendf(s, "%s%s%s%s", nOut++ ? ", " : "", a[i].operation,
                        a[i].index[0] ? " " : "", zIndex ? zIndex : "?");
    sqlite3_free(zIndex);
    if(aCount[i] > 1)
      sqlite3_str_appendf(s, " x%d", aCount[i]);
  }
  if(nOut == 0)
    sqlite3_str_appendall(s, "(none)");
  if(n > 0 && a[0].seq > after + 1)
    sqlite3_str_appendf(s,
                        "; %llu earlier log entries were dropped (it keeps "
                        "the last %d)",
                        (unsigned long long)(a[0].seq - after - 1),
                        DDB_LOG_SIZE);
  if(n > 0)
    __atomic_store_n(&dd_calls_seen, a[n - 1].seq, __ATOMIC_RELAXED);
  sqlite3_free(a);
  sqlite3_result_text(ctx, sqlite3_str_value(s), -1, SQLITE_TRANSIENT);
  sqlite3_free(sqlite3_str_finish(s));
}
