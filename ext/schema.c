/*
** schema.c -- xCreate, xConnect, xDisconnect and xDestroy: the
** columns a table declares, its access paths, and its client (dd_client).
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "dd_ext.h"
#include "multikey.h"

/* ------------------------------------------------------------------------
** xConnect / xCreate / xDisconnect
*/

/* Unlink p from the registry and free it with everything it owns (NULL
** is fine). */
static void dd_vtab_free(dd_vtab *p) {
  int i;
  dd_vtab **pp;
  if(!p)
    return;
  pthread_mutex_lock(&dd_registry_lock);
  for(pp = &dd_registry; *pp; pp = &(*pp)->pNextVtab)
    if(*pp == p) {
      *pp = p->pNextVtab;
      break;
    }
  pthread_mutex_unlock(&dd_registry_lock);
  ddbc_reader_detach(p->pol.reader); /* the last one stops its thread */
  dd_txn_free(p);
  sqlite3_free(p->zVtabName);
  sqlite3_free(p->zRegion);
  sqlite3_free(p->zEndpoint);
  sqlite3_free(p->zProfile);
  sqlite3_free(p->zCaBundle);
  sqlite3_free(p->zTable);
  sqlite3_free(p->zDb);
  sqlite3_free(p->zDefer);
  sqlite3_free(p->zSchemaErr);
  sqlite3_free(p->zTtlAttr);
  for(i = 0; i < p->nCol; i++)
    sqlite3_free(p->aCol[i].zName);
  sqlite3_free(p->aCol);
  sqlite3_free(p->aPath);
  ddb_table_desc_free(p->pDesc);
  ddb_client_free(p->pClient);
  sqlite3_free(p->base.zErrMsg);
  sqlite3_free(p);
}

/* The column number of attribute zName, adding it if new. */
static int dd_add_column(dd_vtab *p, const ddb_keyattr *ka) {
  int i;
  for(i = 0; i < p->nCol; i++)
    if(strcmp(p->aCol[i].zName, ka->name) == 0)
      return i;
  p->aCol[p->nCol].zName = sqlite3_mprintf("%s", ka->name);
  p->aCol[p->nCol].type = ka->type;
  if(!p->aCol[p->nCol].zName)
    return -1;
  return p->nCol++;
}

/* Is attribute zName projected into index x? */
static int dd_projected(const ddb_index *x, const char *zName) {
  int i;
  if(x->projection == DDB_PROJ_ALL)
    return 1;
  for(i = 0; i < x->n_nonkey; i++)
    if(strcmp(x->nonkey[i], zName) == 0)
      return 1;
  return 0;
}

/* Add the columns declared by columns='name [S|N|B], ...' (after the key
** columns).  A name is bare (up to a space or comma) or quoted with " or
** ' (the quote doubled inside): then it may hold spaces, commas, any
** length.  Returns SQLITE_OK, or an error with *pzErr set. */
static int dd_declare_columns(dd_vtab *p, const char *z, char **pzErr) {
  static const char *const azT[] = {"S", "TEXT", "N", "NUMERIC", "B", "BLOB"};
  static const ddb_type aT[] = {DDB_S, DDB_S, DDB_N, DDB_N, DDB_B, DDB_B};
  while(z && *z) {
    const char *zN, *zT;
    int nN, nT, i;
    ddb_type t = DDB_S;
    char *zName;
    while(*z == ' ' || *z == '\t' || *z == '\n')
      z++;
    zN = z;
    if(*z == '"' || *z == '\'') {
      for(z++; *z && !(*z == *zN && z[1] != *zN); z++)
        if(*z == *zN)
          z++; /* a doubled quote */
      if(*z)
        z++;
    } else {
      while(*z && *z != ',' && *z != ' ' && *z != '\t' && *z != '\n')
        z++;
    }
    nN = (int)(z - zN);
    while(*z == ' ' || *z == '\t' || *z == '\n')
      z++;
    zT = z;
    while(*z && *z != ',' && *z != ' ' && *z != '\t' && *z != '\n')
      z++;
    nT = (int)(z - zT);
    while(*z == ' ' || *z == '\t' || *z == '\n')
      z++;
    if(*z && *z != ',') {
      *pzErr = sqlite3_mprintf(DD_PREFIX "bad column in columns at '%.60s' "
                                         "(expected name [S|N|B], ...)",
                               zN);
      return SQLITE_ERROR;
    }
    if(*z == ',')
      z++;
    if(nT > 0) {
      for(i = 0; i < 6; i++)
        if(sqlite3_strnicmp(zT, azT[i], nT) == 0 && azT[i][nT] == 0)
          break;
      if(i == 6) {
        *pzErr = sqlite3_mprintf(DD_PREFIX "bad type in columns: '%.*s' "
                                           "(expected S, N or B)",
                                 nT, zT);
        return SQLITE_ERROR;
      }
      t = aT[i];
    }
    zName = dd_dequote(zN, nN);
    if(!zName)
      return SQLITE_NOMEM;
    for(i = 0; i < p->nCol; i++)
      if(strcmp(p->aCol[i].zName, zName) == 0)
        break;
    if(i < p->nCol || !*zName || sqlite3_stricmp(zName, "item") == 0 ||
       sqlite3_stricmp(zName, "item_raw") == 0 || p->nCol >= 62) {
      *pzErr =
          sqlite3_mprintf(DD_PREFIX "bad column in columns: '%s' (%s)", zName,
                          !*zName         ? "empty"
                          : i < p->nCol   ? "already a column"
                          : p->nCol >= 62 ? "too many columns"
                                          : "a reserved name");
      sqlite3_free(zName);
      return SQLITE_ERROR;
    }
    p->aCol[p->nCol].zName = zName;
    p->aCol[p->nCol].type = t;
    p->aCol[p->nCol].bAttr = 1;
    p->nCol++;
  }
  return SQLITE_OK;
}

/* Is column c an attribute of the table's primary key? */
int dd_is_table_key(const dd_vtab *p, int c) {
  return c == p->aPath[0].iPk || c == p->aPath[0].iSk;
}

/* The columns of index x's key attributes (added if new) into path pp:
** every partition and sort attribute, in KeySchema order.  Returns
** SQLITE_OK or SQLITE_NOMEM. */
static int dd_path_columns(dd_vtab *p, const ddb_index *x, dd_path *pp) {
  int k, n;
  pp->pIdx = x;
  pp->nPkCol = ddb_key_attrs(x, 0);
  pp->nSkCol = ddb_key_attrs(x, 1);
  pp->mKey = 0;
  for(k = 0; k < 2; k++) {
    const ddb_keyattr *a = k ? x->sks : x->pks;
    int *aCol = k ? pp->aSkCol : pp->aPkCol;
    for(n = 0; n < (k ? pp->nSkCol : pp->nPkCol); n++) {
      if((aCol[n] = dd_add_column(p, &a[n])) < 0)
        return SQLITE_NOMEM;
      if(aCol[n] < 64)
        pp->mKey |= (sqlite3_uint64)1 << aCol[n];
    }
  }
  pp->iPk = pp->aPkCol[0];
  pp->iSk = pp->nSkCol ? pp->aSkCol[0] : -1;
  return SQLITE_OK;
}

/* Index membership of a multi-attribute key (pp's): each partition
** attribute that is not a key of the table shows its value only for an
** item that has every other attribute of the key that is not one either
** (a key of the table is on every item, and its column is never gated:
** dd_membership_ok then asks the WHERE to exclude what the index lacks). */
static void dd_gate_multi(dd_vtab *p, const dd_path *pp) {
  sqlite3_uint64 m = pp->mKey;
  int k;
  for(k = 0; k < p->nCol && k < 64; k++)
    if(dd_is_table_key(p, k))
      m &= ~((sqlite3_uint64)1 << k);
  for(k = 0; k < pp->nPkCol; k++) {
    int c = pp->aPkCol[k];
    if(c < 64 && !dd_is_table_key(p, c))
      p->aCol[c].mGate |= m & ~((sqlite3_uint64)1 << c);
  }
}

/* Build columns and access paths from p->pDesc (and columns=, in
** p->zColumns).  Returns SQLITE_OK, SQLITE_NOMEM, or an error with
** p->zSchemaErr set. */
static int dd_build_schema(dd_vtab *p) {
  const ddb_table_desc *d = p->pDesc;
  int i, c;
  size_t nColMax = (size_t)d->n_indexes * 2 * DDB_KEY_ATTRS + 64;
  p->aCol = sqlite3_malloc64(sizeof(dd_column) * nColMax);
  p->aPath = sqlite3_malloc64(sizeof(dd_path) * (sqlite3_uint64)d->n_indexes);
  if(!p->aCol || !p->aPath)
    return SQLITE_NOMEM;
  memset(p->aCol, 0, sizeof(dd_column) * nColMax);
  memset(p->aPath, 0, sizeof(dd_path) * (size_t)d->n_indexes);
  p->nPath = d->n_indexes;
  for(i = 0; i < d->n_indexes; i++) {
    int rc = dd_path_columns(p, &d->indexes[i], &p->aPath[i]);
    if(rc)
      return rc;
  }
  if(p->nCol > 62) { /* plans keep columns in 64-bit masks */
    p->zSchemaErr = sqlite3_mprintf(DD_PREFIX "table '%s' has %d key "
                                              "attributes over its indexes: "
                                              "at most 62 can be columns",
                                    d->name, p->nCol);
    return p->zSchemaErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  p->azKey[0] = d->indexes[0].pk.name;
  p->azKey[1] = d->indexes[0].sk.name;
  p->nKey = d->indexes[0].sk.name ? 2 : 1;
  if(p->zColumns) {
    int rc = dd_declare_columns(p, p->zColumns, &p->zSchemaErr);
    if(rc)
      return rc;
  }
  /* Index membership: an item is in an index only when it has every key
  ** attribute of the index.  A Query on the index cannot see the others,
  ** so the index's partition-key column shows NULL for them (see "Index
  ** membership" above dynamodbBestIndex); the gate is the sort key of
  ** each index the column is the partition key of, unless that sort key
  ** is a key of the table (every item has it).  A multi-attribute key
  ** gates each of its partition attributes by every other attribute of
  ** the key (dd_gate_multi). */
  for(i = 1; i < p->nPath; i++) {
    const dd_path *pp = &p->aPath[i];
    if(dd_path_multi(pp)) {
      dd_gate_multi(p, pp);
      continue;
    }
    if(pp->iSk < 0 || dd_is_table_key(p, pp->iSk) ||
       dd_is_table_key(p, pp->iPk))
      continue;
    p->aCol[pp->iPk].mGate |= (sqlite3_uint64)1 << pp->iSk;
  }
  /* What each path's projection covers: the table's keys, its own keys,
  ** and for ALL/INCLUDE the projected attributes.  `item` is covered only
  ** by ALL (and by the base table). */
  for(i = 0; i < p->nPath; i++) {
    dd_path *pp = &p->aPath[i];
    sqlite3_uint64 m = 0;
    for(c = 0; c <= p->nCol + 2 && c < 64; c++) {
      int bCover;
      if(i == 0 || pp->pIdx->projection == DDB_PROJ_ALL)
        bCover = 1;
      else if(c >= p->nCol)
        bCover = c == DD_COL_KEYS(p); /* item, item_raw: no */
      else
        bCover = c == pp->iPk || c == pp->iSk || c == p->aPath[0].iPk ||
                 c == p->aPath[0].iSk || (pp->mKey >> c & 1) ||
                 dd_projected(pp->pIdx, p->aCol[c].zName);
      if(bCover)
        m |= (sqlite3_uint64)1 << c;
    }
    pp->mCover = m;
  }
  return SQLITE_OK;
}

/* The name of the extra column zBase ("item", "keys", "item_raw") in
** zName[32] (zBase is shorter than 16 bytes): zBase, or, when a key
** attribute has that name (SQLite compares column names without case),
** zBase with '_' appended until no column has it. */
void dd_extra_col_name(dd_vtab *p, const char *zBase, char *zName) {
  size_t n = strlen(zBase);
  int i;
  memcpy(zName, zBase, n + 1);
  for(i = 0; i < p->nCol && n + 1 < 32; i++) {
    if(sqlite3_stricmp(p->aCol[i].zName, zName) == 0) {
      zName[n++] = '_';
      zName[n] = 0;
      i = -1; /* check the new name against every column again */
    }
  }
}

/* The name of a whole-item column: zBase ("item", "item_raw"), or, when
** a key attribute has that name (SQLite compares column names without
** case), zBase with '_' appended until no column has it.  Appends it to
** s, quoted. */
static void dd_item_col_name(dd_vtab *p, sqlite3_str *s, const char *zBase) {
  char zName[32];
  dd_extra_col_name(p, zBase, zName);
  sqlite3_str_appendf(s, "\"%w\"", zName);
}

/* The CREATE TABLE statement declaring the columns.  A column's name is
** its attribute's as dd_shown() shows it: the attribute's own name but
** for what a terminal would act on (an escape sequence, BEL, a bidi
** control: a key attribute's name comes from DescribeTable, that is from
** the server), so that `.schema` and pragma_table_info() show nothing raw;
** é or 日本 are kept.  A column of such a name is named in SQL as shown
** ("P\x1bK"); requests use the attribute's real name (aCol[].zName).
** NULL when out of memory. */
static char *dd_schema_sql(dd_vtab *p) {
  sqlite3_str *s = sqlite3_str_new(0);
  int i;
  sqlite3_str_appendall(s, "CREATE TABLE x(");
  for(i = 0; i < p->nCol; i++) {
    const char *zType = p->aCol[i].type == DDB_S   ? "TEXT"
                        : p->aCol[i].type == DDB_N ? "NUMERIC"
                                                   : "BLOB";
    char *zShown = dd_shown(p->aCol[i].zName);
    if(!zShown) {
      sqlite3_free(sqlite3_str_finish(s));
      return NULL;
    }
    sqlite3_str_appendf(s, "%s\"%w\" %s", i ? ", " : "", zShown, zType);
    sqlite3_free(zShown);
  }
  sqlite3_str_appendall(s, ", ");
  dd_item_col_name(p, s, "item");
  sqlite3_str_appendall(s, " TEXT, ");
  dd_item_col_name(p, s, "keys");
  sqlite3_str_appendall(s, " TEXT HIDDEN, ");
  dd_item_col_name(p, s, "item_raw");
  sqlite3_str_appendall(s, " TEXT HIDDEN)");
  return sqlite3_str_finish(s);
}

/* The Scan segments of segments=auto for a table of nBytes (DescribeTable's
** TableSizeBytes, possibly hours old; unknown: 0). */
UNITTEST int dd_auto_segments(long long nBytes) {
  long long n = nBytes > 0 ? nBytes / DD_SEGMENT_BYTES + 1 : 1;
  if(n < DD_MIN_AUTO_SEGMENTS)
    n = DD_MIN_AUTO_SEGMENTS;
  return n > DD_AUTO_SEGMENTS ? DD_AUTO_SEGMENTS : (int)n;
}

/* The TotalSegments of segments=auto for a table of nBytes (as for
** dd_auto_segments) read by nWorker workers: one per DD_UNIT_BYTES, at
** least nWorker (also when the size is unknown) and at most
** DD_UNITS_PER_WORKER x nWorker. */
UNITTEST int dd_auto_units(long long nBytes, int nWorker) {
  long long n = nBytes > 0 ? nBytes / DD_UNIT_BYTES : 0;
  long long nMax = (long long)nWorker * DD_UNITS_PER_WORKER;
  if(n < nWorker)
    n = nWorker;
  return n > nMax ? (int)nMax : (int)n;
}
/* Set p->zDefer to DD_PREFIX-less text z (which may carry the prefix);
** takes z (sqlite3_free).  Returns SQLITE_OK, or SQLITE_NOMEM. */
static int dd_defer(dd_vtab *p, char *z, int bOptErr) {
  size_t n = strlen(DD_PREFIX);
  if(!z)
    return SQLITE_NOMEM;
  sqlite3_free(p->zDefer);
  p->zDefer = sqlite3_mprintf("%s", strncmp(z, DD_PREFIX, n) == 0 ? z + n : z);
  p->bOptErr = bOptErr;
  sqlite3_free(z);
  return p->zDefer ? SQLITE_OK : SQLITE_NOMEM;
}

/* Make p's client if it has none yet (bAny: even when the table has no
** usable description, for dynamodb_refresh).  Returns an SQLite code, with
** p's error message set on failure. */
int dd_client_make(dd_vtab *p, int bAny) {
  ddb_error err;
  if(p->zDefer && (p->bOptErr || !bAny)) {
    dd_error(p, "%s", p->zDefer);
    return SQLITE_ERROR;
  }
  if(p->pClient)
    return SQLITE_OK;
  ddb_error_clear(&err);
  /* connected, or in xCreate (p->db set): sqlite3_interrupt() also stops
  ** the credential_process that making the client may run */
  p->cfg.cancel = p->db ? dd_interrupted : NULL;
  p->cfg.cancel_ud = p->db;
  if(ddb_client_new(&p->cfg, &p->pClient, &err)) {
    dd_error(p, "table '%s': %s", p->zTable, err.message);
    return dd_rc(&err);
  }
  /* connected, or in xCreate: sqlite3_interrupt() stops this client's
  ** calls */
  if(p->db)
    ddb_client_set_cancel(p->pClient, dd_interrupted, p->db);
  /* its requests are charged to the connection's statement (stmt.c) */
  ddb_client_set_meter(p->pClient, dd_conn_meter(p->pConn));
  /* coherence=streams: the table's reader, shared by the process; no
  ** stream is this table's error (its client goes: asked again next use) */
  if(p->pol.streams && !p->pol.reader &&
     ddbc_reader_attach(&p->cfg, p->pClient, p->zTable, &p->pol.reader,
                        &err)) {
    dd_error(p, "%s", err.message);
    ddb_client_free(p->pClient);
    p->pClient = NULL;
    return dd_rc(&err);
  }
  /* with the shared tier: one reader per fleet */
  ddbc_reader_share(p->pol.reader, p->pol.shared);
  return SQLITE_OK;
}

/* See dd_ext.h. */
int dd_client(dd_vtab *p) {
  return dd_client_make(p, 0);
}

/* Forget p's columns and paths (a description that did not build). */
static void dd_schema_clear(dd_vtab *p) {
  int i;
  for(i = 0; i < p->nCol; i++)
    sqlite3_free(p->aCol[i].zName);
  sqlite3_free(p->aCol);
  sqlite3_free(p->aPath);
  p->aCol = NULL;
  p->aPath = NULL;
  p->nCol = p->nPath = 0;
  ddb_table_desc_free(p->pDesc);
  p->pDesc = NULL;
}

/*
** xCreate and xConnect.  Creating the virtual table creates nothing in
** DynamoDB: the DynamoDB table must exist.  xCreate describes it (with
** the user's credentials: the user is running CREATE VIRTUAL TABLE) and
** stores the description; xConnect reads it back and makes no call.
**
** xConnect runs for whatever a database file holds: the file's options
** are not checked until the table is used, so that a table whose options
** are bad (or that has no stored description) still connects, shows its
** columns and can be dropped; its first read or write reports the error.
*/
/* The options of CREATE VIRTUAL TABLE argv applied to p (opts: their
** values as given, freed by the caller), and the table's names.  Bad
** options are xCreate's error (*pzErr), xConnect's deferred to the first
** use (dd_defer).  Returns an SQLite code. */
static int dd_init_options(dd_vtab *p, int argc, const char *const *argv,
                           dd_opts *opts, char **pzErr, int bCreate) {
  char *zErr = NULL;
  int rc = dd_parse_args(argc, argv, opts, &zErr);
  if(rc == SQLITE_OK)
    rc = dd_options(p, opts, &zErr);
  if(rc != SQLITE_NOMEM) {
    p->zTable = sqlite3_mprintf("%s", opts->zTable ? opts->zTable : argv[2]);
    p->zDb = sqlite3_mprintf("%s", argv[1]);
    if(!p->zTable || !p->zDb)
      rc = SQLITE_NOMEM;
  }
  if(rc == SQLITE_OK || rc == SQLITE_NOMEM) {
    sqlite3_free(zErr);
    return rc;
  }
  if(bCreate) {
    *pzErr = zErr;
    return rc;
  }
  return dd_defer(p, zErr, 1);
}

/* xCreate: describe the DynamoDB table (DescribeTable, with the user's
** credentials) into p->pDesc.  Returns an SQLite code, with *pzErr set
** naming the table on error.  xCreate runs inside sqlite3_step() of the
** CREATE VIRTUAL TABLE statement, never inside sqlite3_prepare(): a
** statement is active, so dd_interrupted() may poll db, and p->db is set
** now for the client made here, so that sqlite3_interrupt() stops its
** credential_process and its DescribeTable as it stops a SELECT's. */
static int dd_init_describe(sqlite3 *db, dd_vtab *p, dd_conn *pConn,
                            char **pzErr) {
  ddb_error err;
  ddb_error_clear(&err);
  p->db = db;
  dd_stmt_touch(pConn, p->bProgress); /* progress=off: no line either */
  if(dd_client(p) == SQLITE_OK &&
     ddbc_describe_table(p->pClient, p->zTable, &p->pDesc, &err) == DDB_OK)
    return SQLITE_OK;
  if(p->base.zErrMsg) {
    *pzErr = p->base.zErrMsg;
    p->base.zErrMsg = NULL;
    return SQLITE_ERROR;
  }
  if(strcmp(err.type, "ResourceNotFoundException") == 0)
    /* the client's message names the table, the endpoint, the region */
    *pzErr = sqlite3_mprintf(DD_PREFIX "%s", err.message);
  else
    *pzErr =
        sqlite3_mprintf(DD_PREFIX "table '%s': %s", p->zTable, err.message);
  return dd_rc(&err);
}

/* xConnect: read the stored description of vtab argv[1].argv[2] into
** p->pDesc (no call); one missing or damaged is deferred to the first
** use, saying how to store it again.  Returns an SQLite code. */
static int dd_init_load(sqlite3 *db, dd_vtab *p, const char *const *argv) {
  char *zErr = NULL;
  int rc;
  dd_internal_sql++;
  rc = dd_desc_load(db, argv[1], argv[2], p->zTable, &p->pDesc, &zErr);
  dd_internal_sql--;
  if(rc != SQLITE_OK && rc != SQLITE_NOMEM)
    rc =
        p->zDefer
            ? SQLITE_OK
            : dd_defer(p,
                       sqlite3_mprintf("table '%s': %s: run SELECT "
                                       "dynamodb_refresh('%s') to describe it "
                                       "again and store it, or DROP TABLE and "
                                       "CREATE it again",
                                       argv[2], zErr, argv[2]),
                       0);
  sqlite3_free(zErr);
  return rc;
}

/* The columns and paths of p's description and columns= (dd_build_schema);
** a description of more columns than a plan can name is damaged.  Bad
** columns= are xCreate's error (*pzErr), a file's deferred to the first
** use (the table then has no columns but item).  Returns an SQLite code. */
static int dd_init_columns(dd_vtab *p, const dd_opts *opts, const char *zName,
                           int bCreate, char **pzErr) {
  int rc, bDescBad;
  if(!p->pDesc)
    return SQLITE_OK;
  p->zColumns = p->bOptErr ? NULL : opts->zColumns;
  rc = dd_build_schema(p);
  p->zColumns = NULL;
  bDescBad = rc == SQLITE_OK && p->nCol > 62 && !bCreate;
  if(bDescBad) {
    p->zSchemaErr = sqlite3_mprintf("table '%s': the stored description "
                                    "is damaged (too many columns)",
                                    zName);
    rc = p->zSchemaErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if(rc && (bCreate || rc == SQLITE_NOMEM)) {
    if(p->zSchemaErr) {
      *pzErr = p->zSchemaErr;
      p->zSchemaErr = NULL;
    }
    return rc;
  }
  if(rc) {
    /* a file's columns= that does not parse: reported at first use */
    rc = dd_defer(p, p->zSchemaErr, !bDescBad);
    p->zSchemaErr = NULL;
    dd_schema_clear(p);
  }
  return rc;
}

/* segments=auto sized by the table's reported size (dd_auto_segments,
** dd_auto_units); a full Scan's TotalSegments at least its workers. */
static void dd_init_segments(dd_vtab *p) {
  if(p->pDesc && p->nSegments == 0) {
    p->nSegments = dd_auto_segments(p->pDesc->size_bytes);
    p->nUnits = dd_auto_units(p->pDesc->size_bytes, p->nSegments);
  }
  if(p->nUnits < p->nSegments)
    p->nUnits = p->nSegments; /* segments=N: N segments, N at a time */
}

/* Declare p's columns to SQLite (without a description: item, keys and
** item_raw alone).  Returns an SQLite code, with *pzErr set on error. */
static int dd_init_declare(sqlite3 *db, dd_vtab *p, char **pzErr) {
  char *zSchema =
      p->pDesc ? dd_schema_sql(p)
               : sqlite3_mprintf("CREATE TABLE x(item TEXT, keys TEXT HIDDEN, "
                                 "item_raw TEXT HIDDEN)");
  int rc;
  if(!zSchema)
    return SQLITE_NOMEM;
  rc = sqlite3_declare_vtab(db, zSchema);
  if(rc)
    *pzErr = sqlite3_mprintf(DD_PREFIX "cannot declare the schema: %s",
                             sqlite3_errmsg(db));
  sqlite3_free(zSchema);
  return rc;
}

/* xCreate: store p's description in argv[1].argv[2]_schema.  Returns an
** SQLite code, with *pzErr set on error. */
static int dd_init_store(sqlite3 *db, dd_vtab *p, const char *const *argv,
                         char **pzErr) {
  char *zErr = NULL;
  int rc;
  dd_internal_sql++;
  rc = dd_desc_store(db, argv[1], argv[2], p->pDesc, 1, &zErr);
  dd_internal_sql--;
  if(rc)
    *pzErr = sqlite3_mprintf(DD_PREFIX "cannot store the description of "
                                       "'%s': %s",
                             argv[2], zErr ? zErr : sqlite3_errstr(rc));
  sqlite3_free(zErr);
  return rc;
}

/* p, connected as vtab zName of db, joins the registry (dd_find), its
** client stopped by db's interrupts.  Returns SQLITE_OK or SQLITE_NOMEM
** (then p is not registered). */
static int dd_init_register(sqlite3 *db, dd_vtab *p, const char *zName) {
  dd_vtab_config(db);
  p->db = db;
  /* from here on, sqlite3_interrupt() and Ctrl-C stop this table's calls
  ** (xConnect's, not before: xConnect may run inside sqlite3_prepare, where
  ** dd_interrupted may not poll; xCreate's since dd_init_describe); a
  ** client made later gets the hook in dd_client_make */
  if(p->pClient)
    ddb_client_set_cancel(p->pClient, dd_interrupted, db);
  p->zVtabName = sqlite3_mprintf("%s", zName);
  if(!p->zVtabName)
    return SQLITE_NOMEM;
  pthread_mutex_lock(&dd_registry_lock);
  p->pNextVtab = dd_registry;
  dd_registry = p;
  pthread_mutex_unlock(&dd_registry_lock);
  return SQLITE_OK;
}

/* xCreate (bCreate) and xConnect: the options, the description (asked or
** read), the columns, declared; stored by xCreate; registered.  Returns
** an SQLite code: SQLITE_OK with *ppVtab the new vtab, else an error in
** *pzErr (xConnect defers what a file's table can wait to say). */
static int dd_init(sqlite3 *db, dd_conn *pConn, int argc,
                   const char *const *argv, sqlite3_vtab **ppVtab,
                   char **pzErr, int bCreate) {
  dd_vtab *p;
  dd_opts opts;
  int rc;

  *ppVtab = NULL;
  p = sqlite3_malloc(sizeof(*p));
  if(!p)
    return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  memset(&opts, 0, sizeof(opts));
  p->pConn = pConn;
  rc = dd_init_options(p, argc, argv, &opts, pzErr, bCreate);
  if(rc == SQLITE_OK)
    rc = bCreate ? dd_init_describe(db, p, pConn, pzErr)
                 : dd_init_load(db, p, argv);
  if(rc == SQLITE_OK)
    rc = dd_init_columns(p, &opts, argv[2], bCreate, pzErr);
  if(rc == SQLITE_OK) {
    dd_init_segments(p);
    rc = dd_init_declare(db, p, pzErr);
  }
  if(rc == SQLITE_OK && bCreate)
    rc = dd_init_store(db, p, argv, pzErr);
  if(rc == SQLITE_OK)
    rc = dd_init_register(db, p, argv[2]);
  dd_opts_free(&opts);
  if(rc) {
    dd_vtab_free(p);
    return rc;
  }
  *ppVtab = &p->base;
  return SQLITE_OK;
}

/* See dd_ext.h. */
int dynamodbCreate(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                   sqlite3_vtab **ppVtab, char **pzErr) {
  return dd_init(db, pAux, argc, argv, ppVtab, pzErr, 1);
}

/* See dd_ext.h. */
int dynamodbConnect(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                    sqlite3_vtab **ppVtab, char **pzErr) {
  return dd_init(db, pAux, argc, argv, ppVtab, pzErr, 0);
}

/* See dd_ext.h. */
int dynamodbDisconnect(sqlite3_vtab *pVtab) {
  dd_vtab_free((dd_vtab *)pVtab);
  return SQLITE_OK;
}

/* xDestroy: DROP TABLE drops the stored description (never the DynamoDB
** table), with no call: it works for a table whose options are bad. */
int dynamodbDestroy(sqlite3_vtab *pVtab) {
  dd_vtab *p = (dd_vtab *)pVtab;
  char *zSql = sqlite3_mprintf("DROP TABLE IF EXISTS \"%w\".\"%w_schema\"",
                               p->zDb, p->zVtabName);
  int rc;
  if(!zSql)
    return SQLITE_NOMEM;
  dd_internal_sql++;
  rc = sqlite3_exec(p->db, zSql, 0, 0, 0);
  dd_internal_sql--;
  sqlite3_free(zSql);
  if(rc == SQLITE_OK)
    dd_vtab_free(p);
  return rc;
}
