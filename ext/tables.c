/*
** tables.c -- dynamodb_tables, an eponymous virtual table: the DynamoDB
** tables the current credentials can see, and what each is.
**
**    SELECT name, partition_key, sort_key, billing_mode, ttl_attribute
**      FROM dynamodb_tables;
**    SELECT name FROM dynamodb_tables WHERE region = 'eu-west-1';
**    SELECT indexes FROM dynamodb_tables WHERE name = 'Store';
**
** Columns: name, status, partition_key, sort_key (the key attributes),
** billing_mode (PROVISIONED or PAY_PER_REQUEST), item_count, size_bytes
** (as DescribeTable reports them: DynamoDB refreshes both about every six
** hours), ttl_attribute, ttl_status (DescribeTimeToLive; NULL on a server
** without it), indexes (JSON: [{"name", "kind": "GSI" or "LSI", "keys"
** (every key attribute), "partition" and "sort" (the partition and the
** sort attributes, in order: a GSI may have up to 4 of each), "projection",
** "include"}]: dd_indexes_json), stream (its StreamViewType, NULL without a
** stream); hidden region, endpoint, profile: where to ask and with whose
** credentials (default: the AWS chain, as CREATE VIRTUAL TABLE's).
**
** ListTables gives the names (100 a page, followed to the end); each row
** asks DescribeTable only when a column of it is used, and
** DescribeTimeToLive only when ttl_attribute or ttl_status is (colUsed);
** WHERE name = ? asks for that table alone, with no ListTables.  Every
** text is shown as error text is (dd_shown: an escape sequence, BEL or
** bidi control a server put in a name reaches no terminal).
*/
#include <stdlib.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "dd_ext.h"

enum {
  TB_NAME = 0,
  TB_STATUS,
  TB_PK,
  TB_SK,
  TB_BILLING,
  TB_ITEMS,
  TB_BYTES,
  TB_TTL_ATTR,
  TB_TTL_STATUS,
  TB_INDEXES,
  TB_STREAM,
  TB_REGION, /* hidden: the arguments */
  TB_ENDPOINT,
  TB_PROFILE,
  TB_NCOL
};
/* The columns DescribeTable fills, and those DescribeTimeToLive fills. */
#define TB_DESCRIBED                                                          \
  ((1u << TB_STATUS) | (1u << TB_PK) | (1u << TB_SK) | (1u << TB_BILLING) |   \
   (1u << TB_ITEMS) | (1u << TB_BYTES) | (1u << TB_INDEXES) |                 \
   (1u << TB_STREAM))
#define TB_TTL ((1u << TB_TTL_ATTR) | (1u << TB_TTL_STATUS))

/* idxNum: bit c set for each argument column c (name, region, endpoint,
** profile) given with =, in that order in argv; bits 16 and up: the
** columns used (colUsed), to know which calls a row needs. */
#define TB_USED_SHIFT 16

typedef struct tb_vtab {
  sqlite3_vtab base; /* Base class.  Must be first */
  sqlite3 *db;
  dd_conn *pConn;
} tb_vtab;

typedef struct tb_cursor {
  sqlite3_vtab_cursor base; /* Base class.  Must be first */
  ddb_client *pClient;      /* ddb_client_free() */
  char *azArg[TB_NCOL];     /* the = arguments by column; sqlite3_free() */
  unsigned mUsed;           /* columns used */
  char **azName;            /* table names; ddb_strv_free() */
  int nName, iName;
  ddb_table_desc *pDesc;       /* the current row's, when described */
  char *zTtlAttr, *zTtlStatus; /* free() */
  int bTtlNone;                /* the server has no DescribeTimeToLive */
} tb_cursor;

static int tablesConnect(sqlite3 *db, void *pAux, int argc,
                         const char *const *argv, sqlite3_vtab **ppVtab,
                         char **pzErr) {
  int rc;
  (void)argc;
  (void)argv;
  (void)pzErr;
  /* it reaches DynamoDB with the user's credentials, at an endpoint a
  ** query may name: not from the views and triggers of a database file
  ** (see dd_vtab_config) */
  rc = dd_eponymous_connect(
      db,
      "CREATE TABLE x(name TEXT, status TEXT, partition_key TEXT, "
      "sort_key TEXT, billing_mode TEXT, item_count INTEGER, size_bytes "
      "INTEGER, ttl_attribute TEXT, ttl_status TEXT, indexes TEXT, "
      "stream TEXT, region TEXT HIDDEN, endpoint TEXT HIDDEN, profile "
      "TEXT HIDDEN)",
      sizeof(tb_vtab), SQLITE_VTAB_DIRECTONLY, ppVtab);
  if(rc == SQLITE_OK) {
    ((tb_vtab *)*ppVtab)->db = db;
    ((tb_vtab *)*ppVtab)->pConn = pAux;
  }
  return rc;
}

static int tablesDisconnect(sqlite3_vtab *p) {
  sqlite3_free(p);
  return SQLITE_OK;
}

/* The argument columns, in the order their values reach xFilter. */
static const int aArgCol[] = {TB_NAME, TB_REGION, TB_ENDPOINT, TB_PROFILE};

static int tablesBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo) {
  int i, k, nArg = 0, idxNum = 0;
  int aCons[4] = {-1, -1, -1, -1};
  (void)pVtab;
  for(i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    if(!c->usable || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
      continue;
    for(k = 0; k < 4; k++)
      if(c->iColumn == aArgCol[k] && aCons[k] < 0)
        aCons[k] = i;
  }
  for(k = 0; k < 4; k++) {
    if(aCons[k] < 0)
      continue;
    pInfo->aConstraintUsage[aCons[k]].argvIndex = ++nArg;
    /* region, endpoint and profile show the value asked for; name is
    ** checked again by SQLite (a table named differently is no row) */
    pInfo->aConstraintUsage[aCons[k]].omit = aArgCol[k] != TB_NAME;
    idxNum |= 1 << k;
  }
  idxNum |= (int)((pInfo->colUsed & ((1u << TB_NCOL) - 1)) << TB_USED_SHIFT);
  pInfo->idxNum = idxNum;
  pInfo->estimatedCost = aCons[0] >= 0 ? 10 : 1000;
  pInfo->estimatedRows = aCons[0] >= 0 ? 1 : 100;
  return SQLITE_OK;
}

static int tablesOpen(sqlite3_vtab *p, sqlite3_vtab_cursor **ppCur) {
  (void)p;
  return dd_eponymous_open(sizeof(tb_cursor), ppCur);
}

/* Forget the current row's description. */
static void tb_row_clear(tb_cursor *c) {
  ddb_table_desc_free(c->pDesc);
  free(c->zTtlAttr);
  free(c->zTtlStatus);
  c->pDesc = NULL;
  c->zTtlAttr = c->zTtlStatus = NULL;
}

/* Release everything of the last xFilter. */
static void tb_reset(tb_cursor *c) {
  int i;
  tb_row_clear(c);
  ddb_strv_free(c->azName, c->nName);
  c->azName = NULL;
  c->nName = c->iName = 0;
  for(i = 0; i < TB_NCOL; i++) {
    sqlite3_free(c->azArg[i]);
    c->azArg[i] = NULL;
  }
  ddb_client_free(c->pClient);
  c->pClient = NULL;
}

static int tablesClose(sqlite3_vtab_cursor *cur) {
  tb_reset((tb_cursor *)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

/* Set the cursor's error (its vtab's message) from client error e in
** zWhat (a step, or a table name ListTables told: shown as dd_shown()
** shows it). */
static int tb_error(tb_cursor *c, const char *zWhat, const ddb_error *e) {
  char *zShown = dd_shown(zWhat);
  dd_vtab_error(c->base.pVtab, "dynamodb_tables: %s: %s",
                zShown ? zShown : "?", e->message);
  sqlite3_free(zShown);
  return dd_rc(e);
}

/* Describe the row at iName as the columns used need.  *pbGone: the table
** is no longer there (deleted since the listing, or WHERE name = ? named
** none): the row is skipped.  Returns an SQLite code. */
static int tb_describe(tb_cursor *c, int *pbGone) {
  const char *zName = c->azName[c->iName];
  ddb_error err;
  *pbGone = 0;
  tb_row_clear(c);
  ddb_error_clear(&err);
  if((c->mUsed & TB_DESCRIBED) || c->azArg[TB_NAME]) {
    /* fresh: what DynamoDB says now (and kept for the tables' reads) */
    if(ddbc_describe_table_fresh(c->pClient, zName, &c->pDesc, &err)) {
      if(strcmp(err.type, "ResourceNotFoundException") == 0) {
        *pbGone = 1;
        return SQLITE_OK;
      }
      return tb_error(c, zName, &err);
    }
  }
  if((c->mUsed & TB_TTL) && !c->bTtlNone) {
    ddb_error_clear(&err);
    if(ddb_describe_ttl(c->pClient, zName, &c->zTtlAttr, &c->zTtlStatus,
                        &err)) {
      if(strcmp(err.type, "UnknownOperationException") == 0)
        c->bTtlNone = 1; /* no TTL on this server: NULL */
      else if(strcmp(err.type, "ResourceNotFoundException") == 0)
        *pbGone = 1;
      else
        return tb_error(c, zName, &err);
    }
  }
  return SQLITE_OK;
}

/* Move to the next row that exists from iName on (iName == nName: EOF). */
static int tb_settle(tb_cursor *c) {
  while(c->iName < c->nName) {
    int bGone, rc = tb_describe(c, &bGone);
    if(rc || !bGone)
      return rc;
    c->iName++;
  }
  tb_row_clear(c);
  return SQLITE_OK;
}

/* Names a ListTables page asks for: 100 (DynamoDB's most), or
** $DYNAMODB_LIST_TABLES_LIMIT (1 to 100, read once: for a test to see
** paging without a hundred tables). */
static int tb_page_size(void) {
  static int n = 0;
  if(n == 0) {
    const char *z = getenv("DYNAMODB_LIST_TABLES_LIMIT");
    double d;
    n = z && dd_number(z, &d) == 0 && d >= 1 && d <= 100 ? (int)d : 100;
  }
  return n;
}

/* The most table names listed: DynamoDB's quota is 2,500 tables a region
** (10,000 on request); more is a server that lists for ever, and an error,
** not the memory of the process (each name at most 255 bytes). */
#define TB_NAMES_MAX 100000

/* Every table name, ListTables page by page, into c->azName.  Returns an
** SQLite code (the vtab's error set), past TB_NAMES_MAX names too. */
static int tb_list(tb_cursor *c) {
  char *zStart = NULL;
  int rc = SQLITE_OK, cap = 0;
  do {
    char **az = NULL, *zLast = NULL;
    int n = 0, i;
    ddb_error err;
    ddb_error_clear(&err);
    if(ddb_list_tables(c->pClient, zStart, tb_page_size(), &az, &n, &zLast,
                       &err)) {
      rc = tb_error(c, "ListTables", &err);
      break;
    }
    if(c->nName + n > TB_NAMES_MAX) {
      ddb_strv_free(az, n);
      free(zLast);
      dd_vtab_error(c->base.pVtab,
                    "dynamodb_tables: ListTables named more than %d tables "
                    "(the most a region holds): a broken server?",
                    TB_NAMES_MAX);
      rc = SQLITE_ERROR;
      break;
    }
    if(c->nName + n > cap) {
      char **a;
      cap = (c->nName + n) * 2 + 16;
      a = realloc(c->azName, sizeof(*a) * (size_t)cap);
      if(!a) {
        ddb_strv_free(az, n);
        free(zLast);
        rc = SQLITE_NOMEM;
        break;
      }
      c->azName = a;
    }
    for(i = 0; i < n; i++)
      c->azName[c->nName++] = az[i];
    free(az); /* the names moved */
    free(zStart);
    zStart = zLast;
  } while(zStart);
  free(zStart);
  return rc;
}

static int tablesFilter(sqlite3_vtab_cursor *cur, int idxNum,
                        const char *idxStr, int argc, sqlite3_value **argv) {
  tb_cursor *c = (tb_cursor *)cur;
  tb_vtab *p = (tb_vtab *)cur->pVtab;
  ddb_config cfg;
  ddb_error err;
  int k, i = 0;
  (void)idxStr;
  tb_reset(c);
  c->mUsed = (unsigned)idxNum >> TB_USED_SHIFT;
  for(k = 0; k < 4 && i < argc; k++) {
    const char *z;
    if(!(idxNum & (1 << k)))
      continue;
    z = (const char *)sqlite3_value_text(argv[i++]);
    if(!z)
      return SQLITE_OK; /* = NULL: no row */
    c->azArg[aArgCol[k]] = sqlite3_mprintf("%s", z);
    if(!c->azArg[aArgCol[k]])
      return SQLITE_NOMEM;
  }
  /* the client of these arguments (the AWS chain for the others) */
  memset(&cfg, 0, sizeof(cfg));
  cfg.region = c->azArg[TB_REGION];
  cfg.endpoint = c->azArg[TB_ENDPOINT];
  cfg.profile = c->azArg[TB_PROFILE];
  cfg.max_retries = -1;
  ddb_error_clear(&err);
  if(ddb_client_new(&cfg, &c->pClient, &err))
    return tb_error(c, "cannot make a client", &err);
  ddb_client_set_cancel(c->pClient, dd_interrupted, p->db);
  ddb_client_set_meter(c->pClient, dd_conn_meter(p->pConn));
  dd_stmt_touch(p->pConn, 1);
  if(c->azArg[TB_NAME]) {
    c->azName = calloc(1, sizeof(char *));
    if(!c->azName || !(c->azName[0] = ddb_strdup(c->azArg[TB_NAME])))
      return SQLITE_NOMEM;
    c->nName = 1;
  } else {
    int rc = tb_list(c);
    if(rc)
      return rc;
  }
  return tb_settle(c);
}

static int tablesNext(sqlite3_vtab_cursor *cur) {
  tb_cursor *c = (tb_cursor *)cur;
  c->iName++;
  return tb_settle(c);
}

static int tablesEof(sqlite3_vtab_cursor *cur) {
  tb_cursor *c = (tb_cursor *)cur;
  return c->iName >= c->nName;
}

/* The names of the n attributes a, then of the m attributes a2, into b
** as one JSON array, each as dd_shown() shows it. */
static void tb_names_json(ddb_buf *b, const ddb_keyattr *a, int n,
                          const ddb_keyattr *a2, int m) {
  int i;
  ddb_buf_addc(b, '[');
  for(i = 0; i < n + m; i++) {
    if(i)
      ddb_buf_addc(b, ',');
    dd_json_shown(b, i < n ? a[i].name : a2[i - n].name);
  }
  ddb_buf_addc(b, ']');
}

/* The indexes of d as JSON (see above; dynamodb_info's "indexes" too): a
** new string (sqlite3_free), NULL when out of memory. */
char *dd_indexes_json(const ddb_table_desc *d) {
  ddb_buf b;
  char *z;
  int i, j;
  static const char *const azProj[] = {"ALL", "KEYS_ONLY", "INCLUDE"};
  ddb_buf_init(&b, 1u << 20);
  ddb_buf_addc(&b, '[');
  for(i = 1; i < d->n_indexes; i++) {
    const ddb_index *x = &d->indexes[i];
    int nPk = ddb_key_attrs(x, 0), nSk = ddb_key_attrs(x, 1);
    ddb_buf_adds(&b, i > 1 ? ",{\"name\":" : "{\"name\":");
    dd_json_shown(&b, x->name);
    ddb_buf_adds(&b, x->is_local ? ",\"kind\":\"LSI\",\"keys\":"
                                 : ",\"kind\":\"GSI\",\"keys\":");
    tb_names_json(&b, x->pks, nPk, x->sks, nSk);
    ddb_buf_adds(&b, ",\"partition\":");
    tb_names_json(&b, x->pks, nPk, x->sks, 0);
    ddb_buf_adds(&b, ",\"sort\":");
    tb_names_json(&b, x->sks, nSk, x->pks, 0);
    ddb_buf_addf(&b, ",\"projection\":\"%s\"", azProj[x->projection]);
    if(x->projection == DDB_PROJ_INCLUDE) {
      ddb_buf_adds(&b, ",\"include\":[");
      for(j = 0; j < x->n_nonkey; j++) {
        if(j)
          ddb_buf_addc(&b, ',');
        dd_json_shown(&b, x->nonkey[j]);
      }
      ddb_buf_addc(&b, ']');
    }
    ddb_buf_addc(&b, '}');
  }
  ddb_buf_addc(&b, ']');
  z = b.failed ? NULL : sqlite3_mprintf("%s", b.p);
  ddb_buf_free(&b);
  return z;
}

static int tablesColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx,
                        int col) {
  tb_cursor *c = (tb_cursor *)cur;
  const ddb_table_desc *d = c->pDesc;
  int rc = SQLITE_OK; /* every text, the server's names included, as
                         dd_shown() shows it */
  switch(col) {
  case TB_NAME: rc = dd_result_shown(ctx, c->azName[c->iName]); break;
  case TB_TTL_ATTR: rc = dd_result_shown(ctx, c->zTtlAttr); break;
  case TB_TTL_STATUS: rc = dd_result_shown(ctx, c->zTtlStatus); break;
  case TB_REGION:
    rc = dd_result_shown(ctx, c->azArg[TB_REGION]
                                  ? c->azArg[TB_REGION]
                                  : ddb_client_region(c->pClient));
    break;
  case TB_ENDPOINT:
    rc = dd_result_shown(ctx, c->azArg[TB_ENDPOINT]
                                  ? c->azArg[TB_ENDPOINT]
                                  : ddb_client_endpoint(c->pClient));
    break;
  case TB_PROFILE: rc = dd_result_shown(ctx, c->azArg[TB_PROFILE]); break;
  default:
    if(!d)
      break;
    switch(col) {
    case TB_STATUS: rc = dd_result_shown(ctx, d->status); break;
    case TB_PK: rc = dd_result_shown(ctx, d->indexes[0].pk.name); break;
    case TB_SK: rc = dd_result_shown(ctx, d->indexes[0].sk.name); break;
    case TB_BILLING: rc = dd_result_shown(ctx, d->billing_mode); break;
    case TB_ITEMS:
      if(d->item_count >= 0)
        sqlite3_result_int64(ctx, d->item_count);
      break;
    case TB_BYTES:
      if(d->size_bytes >= 0)
        sqlite3_result_int64(ctx, d->size_bytes);
      break;
    case TB_INDEXES: {
      char *z = dd_indexes_json(d);
      if(!z)
        return SQLITE_NOMEM;
      sqlite3_result_text(ctx, z, -1, sqlite3_free);
      break;
    }
    default: rc = dd_result_shown(ctx, d->stream); break;
    }
  }
  return rc;
}

static int tablesRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid) {
  *pRowid = ((tb_cursor *)cur)->iName;
  return SQLITE_OK;
}

static sqlite3_module tablesModule = {
    0,                /* iVersion */
    0,                /* xCreate: eponymous only */
    tablesConnect,    /* xConnect */
    tablesBestIndex,  /* xBestIndex */
    tablesDisconnect, /* xDisconnect */
    0,                /* xDestroy */
    tablesOpen,       /* xOpen */
    tablesClose,      /* xClose */
    tablesFilter,     /* xFilter: ListTables (or the one name) */
    tablesNext,       /* xNext: DescribeTable, DescribeTimeToLive as needed */
    tablesEof,        /* xEof */
    tablesColumn,     /* xColumn */
    tablesRowid,      /* xRowid */
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
int dd_register_tables(sqlite3 *db, dd_conn *c) {
  return sqlite3_create_module(db, "dynamodb_tables", &tablesModule, c);
}
