/*
** desc.c -- the stored description: the shadow table NAME_schema that
** xCreate writes and xConnect reads back (no call).
*/
#include <stdlib.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "dd_ext.h"

/*
** The stored description: the shadow table NAME_schema
**
** xCreate asks DynamoDB for the table's description (DescribeTable) and
** keeps what xConnect needs to declare the columns and plan the queries
** in a shadow table of the virtual table, one row per access path:
**
**   k            0: the table itself, then its GSIs and LSIs in the order
**                of the description
**   name         k=0: the DynamoDB table; else the index
**   is_local     1 for an LSI
**   pk, pk_type  partition key attribute and its type (S, N or B); for a
**                multi-attribute key (a GSI's, up to 4), a JSON array of
**                the names and their types in one string ("SN")
**   sk, sk_type  sort key and type, NULL when there is none; the same
**   projection   ALL, KEYS_ONLY or INCLUDE
**   nonkey       INCLUDE's NonKeyAttributes as a JSON array of strings
**   item_count, size_bytes   k=0: DescribeTable's counts (plans, segments)
**
** xConnect reads it back and makes no call and resolves no credentials:
** opening a database file, reading its schema (.schema, PRAGMA
** table_info, sqlite_schema) and DROP TABLE stay offline, whatever the
** file's CREATE VIRTUAL TABLE says.  The client (region, endpoint,
** credentials: a credential_process may run) is made at the table's first
** real read or write (dd_client).  dynamodb_refresh('NAME') describes the
** table again and rewrites the rows.  xShadowName makes the table a
** shadow table: read-only to SQL when SQLITE_DBCONFIG_DEFENSIVE is on.
** Its content comes from the file, like the options, so xConnect checks it
** (types, counts, the table's name) and a damaged one is reported at first
** use, as is a missing one (a table made by an older version).
*/
/* Rows of a stored description at the most: the table, 20 GSIs and 5
** LSIs fit DynamoDB's limits; more is a damaged file. */
#define DD_MAX_PATHS 32
/* NonKeyAttributes of one index at the most (DynamoDB allows 100 over all
** of a table's indexes). */
#define DD_MAX_NONKEY 1000

/* The projection names, as ddb_projection numbers them. */
static const char *const azProj[] = {"ALL", "KEYS_ONLY", "INCLUDE"};

/* Bind the n attributes a (one part of a key) to parameters iName and
** iName + 1 of pStmt: NULLs for none, the name and its type for one, a
** JSON array of the names and their types in one string for several.
** Returns SQLITE_OK or SQLITE_NOMEM. */
static int dd_bind_key_part(sqlite3_stmt *pStmt, int iName,
                            const ddb_keyattr *a, int n) {
  char zTypes[DDB_KEY_ATTRS + 1];
  ddb_buf b;
  size_t nJson;
  char *zJson;
  int i;
  if(n <= 1) {
    sqlite3_bind_text(pStmt, iName, n ? a[0].name : NULL, -1, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, iName + 1, n ? ddb_type_name(a[0].type) : NULL,
                      -1, SQLITE_STATIC);
    return SQLITE_OK;
  }
  ddb_buf_init(&b, 64 * 1024);
  ddb_buf_addc(&b, '[');
  for(i = 0; i < n && i < DDB_KEY_ATTRS; i++) {
    if(i)
      ddb_buf_addc(&b, ',');
    ddb_buf_json_str(&b, a[i].name, strlen(a[i].name));
    zTypes[i] = ddb_type_name(a[i].type)[0];
  }
  zTypes[i] = 0;
  ddb_buf_addc(&b, ']');
  zJson = ddb_buf_take(&b, &nJson);
  if(!zJson)
    return SQLITE_NOMEM;
  sqlite3_bind_text64(pStmt, iName, zJson, nJson, free, SQLITE_UTF8);
  sqlite3_bind_text(pStmt, iName + 1, zTypes, -1, SQLITE_TRANSIENT);
  return SQLITE_OK;
}

/* Write d into the shadow table zDb.zName_schema (created when bCreate,
** else emptied, or created if missing).  Returns an SQLite code; on error
** *pzErr is set (sqlite3_free). */
int dd_desc_store(sqlite3 *db, const char *zDb, const char *zName,
                  const ddb_table_desc *d, int bCreate, char **pzErr) {
  sqlite3_stmt *pStmt = NULL;
  char *zSql;
  int rc, i, j;
  ddb_buf b;

  zSql = sqlite3_mprintf(
      "%s \"%w\".\"%w_schema\"(k INTEGER PRIMARY KEY, name TEXT, "
      "is_local INTEGER, pk TEXT, pk_type TEXT, sk TEXT, sk_type TEXT, "
      "projection TEXT, nonkey TEXT, item_count INTEGER, size_bytes "
      "INTEGER);%s%w%s%w%s",
      bCreate ? "CREATE TABLE" : "CREATE TABLE IF NOT EXISTS", zDb, zName,
      bCreate ? "" : "DELETE FROM \"", bCreate ? "" : zDb,
      bCreate ? "" : "\".\"", bCreate ? "" : zName,
      bCreate ? "" : "_schema\";");
  if(!zSql)
    return SQLITE_NOMEM;
  rc = sqlite3_exec(db, zSql, 0, 0, pzErr);
  sqlite3_free(zSql);
  if(rc)
    return rc;
  zSql = sqlite3_mprintf("INSERT INTO \"%w\".\"%w_schema\" VALUES(?1, ?2, "
                         "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                         zDb, zName);
  if(!zSql)
    return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  for(i = 0; rc == SQLITE_OK && i < d->n_indexes; i++) {
    const ddb_index *x = &d->indexes[i];
    char *zNonkey = NULL;
    size_t nNonkey = 0;
    sqlite3_bind_int(pStmt, 1, i);
    sqlite3_bind_text(pStmt, 2, i ? x->name : d->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(pStmt, 3, x->is_local);
    if(dd_bind_key_part(pStmt, 4, x->pks, ddb_key_attrs(x, 0)) ||
       dd_bind_key_part(pStmt, 6, x->sks, ddb_key_attrs(x, 1))) {
      rc = SQLITE_NOMEM;
      break;
    }
    sqlite3_bind_text(pStmt, 8, azProj[x->projection], -1, SQLITE_STATIC);
    if(x->projection == DDB_PROJ_INCLUDE) {
      ddb_buf_init(&b, 16 * 1024 * 1024);
      ddb_buf_addc(&b, '[');
      for(j = 0; j < x->n_nonkey; j++) {
        if(j)
          ddb_buf_addc(&b, ',');
        ddb_buf_json_str(&b, x->nonkey[j], strlen(x->nonkey[j]));
      }
      ddb_buf_addc(&b, ']');
      zNonkey = ddb_buf_take(&b, &nNonkey);
      if(!zNonkey) {
        rc = SQLITE_NOMEM;
        break;
      }
      sqlite3_bind_text64(pStmt, 9, zNonkey, nNonkey, free, SQLITE_UTF8);
    } else {
      sqlite3_bind_null(pStmt, 9);
    }
    sqlite3_bind_int64(pStmt, 10, i ? 0 : d->item_count);
    sqlite3_bind_int64(pStmt, 11, i ? 0 : d->size_bytes);
    sqlite3_step(pStmt);
    rc = sqlite3_reset(pStmt); /* the step's error, if any */
  }
  if(rc && rc != SQLITE_NOMEM)
    *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  sqlite3_finalize(pStmt);
  return rc;
}

/* A copy of column iCol of pStmt (malloc, as ddb_table_desc_free frees),
** or NULL when it is NULL or not text.  *pbNoMem set on OOM. */
static char *dd_col_dup(sqlite3_stmt *pStmt, int iCol, int *pbNoMem) {
  const char *z;
  char *zOut;
  if(sqlite3_column_type(pStmt, iCol) != SQLITE_TEXT)
    return NULL;
  z = (const char *)sqlite3_column_text(pStmt, iCol);
  if(!z)
    return NULL;
  zOut = strdup(z);
  if(!zOut)
    *pbNoMem = 1;
  return zOut;
}

/* The key type named by column iCol of pStmt (S, N or B), or -1. */
static int dd_col_type(sqlite3_stmt *pStmt, int iCol) {
  const char *z = (const char *)sqlite3_column_text(pStmt, iCol);
  if(!z)
    return -1;
  if(strcmp(z, "S") == 0)
    return DDB_S;
  if(strcmp(z, "N") == 0)
    return DDB_N;
  if(strcmp(z, "B") == 0)
    return DDB_B;
  return -1;
}

/* One part of a key (the partition attributes at column iName of pStmt,
** or the sort attributes) into a[] and *pn: a name and its type (S, N or
** B), or a JSON array of 2 to DDB_KEY_ATTRS names and their types in one
** string (dd_bind_key_part); both NULL: none (*pn 0).  Returns
** SQLITE_OK, with *pzWhy set when the row is damaged; SQLITE_NOMEM. */
static int dd_key_part_load(sqlite3 *db, sqlite3_stmt *pStmt, int iName,
                            ddb_keyattr *a, int *pn, const char **pzWhy) {
  const char *zT = (const char *)sqlite3_column_text(pStmt, iName + 1);
  sqlite3_stmt *pJson = NULL;
  int bNoMem = 0, n = 0, rc;
  *pn = 0;
  if(!zT || strlen(zT) <= 1) {
    a[0].name = dd_col_dup(pStmt, iName, &bNoMem);
    if(bNoMem)
      return SQLITE_NOMEM;
    if(!zT && !a[0].name)
      return SQLITE_OK;
    if(!a[0].name || !a[0].name[0]) {
      *pzWhy = "a name is missing";
      return SQLITE_OK;
    }
    if(dd_col_type(pStmt, iName + 1) < 0) {
      *pzWhy = "a key type is not S, N or B";
      return SQLITE_OK;
    }
    a[0].type = (ddb_type)dd_col_type(pStmt, iName + 1);
    *pn = 1;
    return SQLITE_OK;
  }
  rc = sqlite3_prepare_v2(db,
                          "SELECT value FROM json_each(?1) WHERE "
                          "json_type(?1) = 'array' AND type = 'text'",
                          -1, &pJson, 0);
  if(rc == SQLITE_OK)
    sqlite3_bind_value(pJson, 1, sqlite3_column_value(pStmt, iName));
  while(rc == SQLITE_OK && (rc = sqlite3_step(pJson)) == SQLITE_ROW) {
    const char *zType = NULL;
    rc = SQLITE_OK;
    if(n >= DDB_KEY_ATTRS || !zT[n])
      break;
    zType = zT[n] == 'S' ? "S" : zT[n] == 'N' ? "N" : zT[n] == 'B' ? "B" : 0;
    if(!zType)
      break;
    a[n].type = zType[0] == 'S' ? DDB_S : zType[0] == 'N' ? DDB_N : DDB_B;
    if(!(a[n].name = dd_col_dup(pJson, 0, &bNoMem)) || !a[n].name[0])
      break;
    n++;
  }
  sqlite3_finalize(pJson);
  if(bNoMem || rc == SQLITE_NOMEM)
    return SQLITE_NOMEM;
  if(rc != SQLITE_DONE || n < 2 || zT[n])
    *pzWhy = "a multi-attribute key is not names and their types";
  *pn = n;
  return SQLITE_OK;
}

/* Read INCLUDE's attribute names, JSON array zJson, into x.  Returns
** SQLITE_OK, SQLITE_NOMEM, or SQLITE_ERROR when zJson is not an array of
** strings (at most DD_MAX_NONKEY). */
static int dd_nonkey_load(sqlite3 *db, const char *zJson, ddb_index *x) {
  sqlite3_stmt *pStmt = NULL;
  int rc, n = 0;
  if(!zJson)
    return SQLITE_ERROR;
  rc = sqlite3_prepare_v2(db,
                          "SELECT value, type = 'text' FROM json_each(?1) "
                          "WHERE json_type(?1) = 'array'",
                          -1, &pStmt, 0);
  if(rc)
    return rc == SQLITE_NOMEM ? rc : SQLITE_ERROR;
  sqlite3_bind_text(pStmt, 1, zJson, -1, SQLITE_STATIC);
  while((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
    char **a;
    int bNoMem = 0;
    if(!sqlite3_column_int(pStmt, 1) || n >= DD_MAX_NONKEY) {
      rc = SQLITE_ERROR;
      break;
    }
    a = realloc(x->nonkey, sizeof(char *) * (size_t)(n + 1));
    if(!a) {
      rc = SQLITE_NOMEM;
      break;
    }
    x->nonkey = a;
    x->nonkey[n] = dd_col_dup(pStmt, 0, &bNoMem);
    if(!x->nonkey[n]) {
      rc = bNoMem ? SQLITE_NOMEM : SQLITE_ERROR;
      break;
    }
    x->n_nonkey = ++n;
  }
  sqlite3_finalize(pStmt);
  if(rc == SQLITE_DONE)
    return SQLITE_OK;
  return rc == SQLITE_NOMEM ? rc : SQLITE_ERROR;
}

/* Has zDb an ordinary table zName_schema (never a view: a view could run
** anything)?  Returns SQLITE_OK; SQLITE_ERROR with *pzWhy (sqlite3_free)
** saying there is none; SQLITE_NOMEM. */
static int dd_desc_exists(sqlite3 *db, const char *zDb, const char *zName,
                          char **pzWhy) {
  sqlite3_stmt *pStmt = NULL;
  char *zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema WHERE "
                               "type = 'table' AND name = '%q_schema'",
                               zDb, zName);
  int rc;
  if(!zSql)
    return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  if(rc == SQLITE_OK && sqlite3_step(pStmt) != SQLITE_ROW)
    rc = SQLITE_NOTFOUND;
  sqlite3_finalize(pStmt);
  if(rc == SQLITE_OK || rc == SQLITE_NOMEM)
    return rc;
  *pzWhy = sqlite3_mprintf("no stored description (no table %s_schema: "
                           "made by an older version of the extension?)",
                           zName);
  return *pzWhy ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* Row n of the stored description (pStmt's current row) into d: the
** table (n 0) or its n-th index.  Returns SQLITE_OK, with *pzWhy set
** (static text) when the row is damaged; SQLITE_NOMEM.  From its name on,
** the index is d's to free. */
static int dd_desc_row(sqlite3 *db, sqlite3_stmt *pStmt, ddb_table_desc *d,
                       int n, const char **pzWhy) {
  ddb_index *x = &d->indexes[n];
  int bNoMem = 0, t, rc;
  if(n >= DD_MAX_PATHS) {
    *pzWhy = "too many indexes";
    return SQLITE_OK;
  }
  if(sqlite3_column_type(pStmt, 0) != SQLITE_INTEGER ||
     sqlite3_column_int64(pStmt, 0) != n) {
    *pzWhy = "its rows are not numbered 0, 1, ...";
    return SQLITE_OK;
  }
  d->n_indexes = n + 1; /* x is d's to free from here on */
  if(n == 0) {
    d->name = dd_col_dup(pStmt, 1, &bNoMem);
    d->item_count = sqlite3_column_int64(pStmt, 9);
    d->size_bytes = sqlite3_column_int64(pStmt, 10);
    if(d->item_count < 0 || d->size_bytes < 0) {
      *pzWhy = "a negative count";
      return bNoMem ? SQLITE_NOMEM : SQLITE_OK;
    }
  } else {
    x->name = dd_col_dup(pStmt, 1, &bNoMem);
  }
  x->is_local = n > 0 && sqlite3_column_int(pStmt, 2) != 0;
  if(bNoMem)
    return SQLITE_NOMEM;
  if(!(n ? x->name : d->name)) {
    *pzWhy = "a name is missing";
    return SQLITE_OK;
  }
  rc = dd_key_part_load(db, pStmt, 3, x->pks, &x->n_pk, pzWhy);
  if(rc == SQLITE_OK && !*pzWhy)
    rc = dd_key_part_load(db, pStmt, 5, x->sks, &x->n_sk, pzWhy);
  if(rc || *pzWhy)
    return rc;
  if(x->n_pk == 0) {
    *pzWhy = "a name is missing";
    return SQLITE_OK;
  }
  if((n == 0 || x->is_local) && (x->n_pk > 1 || x->n_sk > 1)) {
    *pzWhy = "a table or LSI key of several attributes";
    return SQLITE_OK;
  }
  for(t = 0; t < 3; t++) {
    const char *z = (const char *)sqlite3_column_text(pStmt, 7);
    if(z && strcmp(z, azProj[t]) == 0)
      break;
  }
  if(t == 3 || (n == 0 && t != DDB_PROJ_ALL)) {
    *pzWhy = "a projection is not ALL, KEYS_ONLY or INCLUDE";
    return SQLITE_OK;
  }
  x->projection = (ddb_projection)t;
  if(t != DDB_PROJ_INCLUDE)
    return SQLITE_OK;
  rc = dd_nonkey_load(db, (const char *)sqlite3_column_text(pStmt, 8), x);
  if(rc == SQLITE_NOMEM)
    return rc;
  if(rc)
    *pzWhy = "nonkey is not a JSON array of names";
  return SQLITE_OK;
}

/* Read the stored description of the vtab zDb.zName, which must describe
** DynamoDB table zTable.  SQLITE_OK with *ppDesc (ddb_table_desc_free);
** SQLITE_NOMEM; or SQLITE_ERROR with *pzWhy (sqlite3_free) saying what is
** missing or wrong.  Makes no call: the rows are checked, not trusted. */
int dd_desc_load(sqlite3 *db, const char *zDb, const char *zName,
                 const char *zTable, ddb_table_desc **ppDesc, char **pzWhy) {
  sqlite3_stmt *pStmt = NULL;
  ddb_table_desc *d = NULL;
  char *zSql;
  const char *zWhy = NULL;
  int rc, n = 0;

  *ppDesc = NULL;
  *pzWhy = NULL;
  rc = dd_desc_exists(db, zDb, zName, pzWhy);
  if(rc)
    return rc;
  zSql = sqlite3_mprintf("SELECT k, name, is_local, pk, pk_type, sk, "
                         "sk_type, projection, nonkey, item_count, "
                         "size_bytes FROM \"%w\".\"%w_schema\" ORDER BY k",
                         zDb, zName);
  if(!zSql)
    return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  if(rc) {
    if(rc == SQLITE_NOMEM)
      return rc;
    *pzWhy = sqlite3_mprintf("the stored description is damaged: %s",
                             sqlite3_errmsg(db));
    return *pzWhy ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  d = calloc(1, sizeof(*d));
  if(d)
    d->indexes = calloc(DD_MAX_PATHS, sizeof(ddb_index));
  if(!d || !d->indexes) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  /* one row a path, the table first */
  while(!zWhy && (rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
    rc = dd_desc_row(db, pStmt, d, n, &zWhy);
    if(rc)
      goto fail;
    n++;
  }
  if(!zWhy && rc != SQLITE_DONE) {
    if(rc == SQLITE_NOMEM)
      goto fail;
    zWhy = sqlite3_errmsg(db);
  }
  if(!zWhy && n == 0)
    zWhy = "it has no rows";
  if(!zWhy && strcmp(d->name, zTable) != 0)
    zWhy = "it describes another DynamoDB table";
  if(zWhy) {
    *pzWhy = sqlite3_mprintf("the stored description is damaged (%s)", zWhy);
    rc = *pzWhy ? SQLITE_ERROR : SQLITE_NOMEM;
    goto fail;
  }
  *ppDesc = d;
  d = NULL;
  rc = SQLITE_OK;

fail:
  sqlite3_finalize(pStmt);
  ddb_table_desc_free(d);
  return rc;
}
