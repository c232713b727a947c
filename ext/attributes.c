/*
** attributes.c -- dynamodb_attributes(vtab [, n]), a table-valued
** function: the attributes of a sample of n items (default 1,000) of the
** DynamoDB table behind the virtual table vtab, the way to learn a table
** whose items have no fixed columns.
**
**    SELECT * FROM dynamodb_attributes('shop');
**    SELECT name, types, present FROM dynamodb_attributes('shop', 50)
**     WHERE present < 50;
**
** One row per attribute name: name, types (the DynamoDB types it has,
** most common first: "S", or "N, S"), present (in how many items of the
** sample), sample (a value of it: the least one of its most common type,
** so that the same items give the same sample; S as text, N as a number,
** B as a blob, anything else as JSON text).  The table's key attributes
** come first, then the others by present, most first, and name.  A name
** is shown as error text is (dd_shown: an escape sequence, BEL or bidi
** control in it, from DescribeTable or an item, reaches no terminal; é
** or 日本 show as they are).
**
** The sample spans the table: a Scan meets a table partition by
** partition, so its first n items are those of the first partitions it
** meets (one tenant of forty), and `present` would say little of the
** others.  So the Scan is cut into segments (at_sample: one a
** AT_PER_SEGMENT items of n, at most AT_SEGMENTS), each asked for its
** share of n (Limit; the first round in parallel, at_first_round), and
** the segments that still have items, in turn, for what the short ones
** lacked, until n items or the table's end.  A table
** DescribeTable says has at most n items is read whole, in one segment:
** one request where a page holds it (a page ends at 1 MB of items).  It
** goes through the cache as every read of the table does; scan=deny does
** not refuse it (it reads n items, not the table).
*/
#include <stdlib.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include <uthash.h>

#include "dd_ext.h"

/* The default sample, and the largest. */
#define AT_DEFAULT_N 1000
#define AT_MAX_N     1000000
/* The sample's Scan segments: one a AT_PER_SEGMENT items, at most
** AT_SEGMENTS (requests in a row: 32 of 32 items for the default 1,000). */
#define AT_PER_SEGMENT 16
#define AT_SEGMENTS    32
/* Attribute names counted at the most (a table whose items have more
** distinct names shows the first ones seen). */
#define AT_MAX_NAMES 10000

enum { AT_NAME = 0, AT_TYPES, AT_PRESENT, AT_SAMPLE, AT_VTAB, AT_N };

/* Types of DynamoDB (ddb_type, DDB_S .. DDB_BS). */
#define AT_NTYPE (DDB_BS + 1)

/* One attribute of the sample. */
typedef struct at_attr {
  UT_hash_handle hh;
  char *zName;       /* malloc() */
  int iKey;          /* 0, 1: the table's partition, sort key; 2: none */
  long long present; /* items that have it */
  long long aType[AT_NTYPE]; /* items that have it of each type */
  ddb_item *aMin[AT_NTYPE];  /* the least value of each type, as an
                                     item of one attribute (a reference) */
} at_attr;

typedef struct at_vtab {
  sqlite3_vtab base; /* Base class.  Must be first */
  sqlite3 *db;
  dd_conn *pConn;
} at_vtab;

typedef struct at_cursor {
  sqlite3_vtab_cursor base; /* Base class.  Must be first */
  at_attr *pMap;            /* by name */
  at_attr **aRow;           /* in row order; sqlite3_free() */
  int nRow, iRow;
  char *zVtab;    /* the argument; sqlite3_free() */
  long long nArg; /* n as given; -1: not given */
} at_cursor;

static int attributesConnect(sqlite3 *db, void *pAux, int argc,
                             const char *const *argv, sqlite3_vtab **ppVtab,
                             char **pzErr) {
  int rc;
  (void)argc;
  (void)argv;
  (void)pzErr;
  /* it reads DynamoDB with the user's credentials: not from the views and
  ** triggers of a database file (see dd_vtab_config) */
  rc = dd_eponymous_connect(db,
                            "CREATE TABLE x(name TEXT, types TEXT, "
                            "present INTEGER, sample, vtab TEXT HIDDEN, "
                            "n INTEGER HIDDEN)",
                            sizeof(at_vtab), SQLITE_VTAB_DIRECTONLY, ppVtab);
  if(rc == SQLITE_OK) {
    ((at_vtab *)*ppVtab)->db = db;
    ((at_vtab *)*ppVtab)->pConn = pAux;
  }
  return rc;
}

static int attributesDisconnect(sqlite3_vtab *p) {
  sqlite3_free(p);
  return SQLITE_OK;
}

/* idxNum: bit 0, vtab = ? given (argv[0]); bit 1, n = ? given (next).  A
** vtab constraint SQLite cannot give yet (a join's) is no plan; none at
** all is one whose xFilter says what is missing. */
static int attributesBestIndex(sqlite3_vtab *pVtab,
                               sqlite3_index_info *pInfo) {
  int i, iVtab = -1, iN = -1, bUnusable = 0, nArg = 0;
  (void)pVtab;
  for(i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    if(c->op != SQLITE_INDEX_CONSTRAINT_EQ ||
       (c->iColumn != AT_VTAB && c->iColumn != AT_N))
      continue;
    if(!c->usable) {
      bUnusable |= c->iColumn == AT_VTAB;
      continue;
    }
    if(c->iColumn == AT_VTAB && iVtab < 0)
      iVtab = i;
    if(c->iColumn == AT_N && iN < 0)
      iN = i;
  }
  if(iVtab < 0 && bUnusable)
    return SQLITE_CONSTRAINT;
  pInfo->idxNum = 0;
  if(iVtab >= 0) {
    pInfo->aConstraintUsage[iVtab].argvIndex = ++nArg;
    pInfo->aConstraintUsage[iVtab].omit = 1;
    pInfo->idxNum |= 1;
  }
  if(iN >= 0) {
    pInfo->aConstraintUsage[iN].argvIndex = ++nArg;
    pInfo->aConstraintUsage[iN].omit = 1;
    pInfo->idxNum |= 2;
  }
  pInfo->estimatedCost = iVtab >= 0 ? 1000 : 1e12;
  pInfo->estimatedRows = 20;
  return SQLITE_OK;
}

static int attributesOpen(sqlite3_vtab *p, sqlite3_vtab_cursor **ppCur) {
  (void)p;
  return dd_eponymous_open(sizeof(at_cursor), ppCur);
}

/* Free the attributes of the last xFilter. */
static void at_reset(at_cursor *c) {
  at_attr *a, *tmp;
  int t;
  HASH_ITER(hh, c->pMap, a, tmp) {
    HASH_DELETE(hh, c->pMap, a);
    for(t = 0; t < AT_NTYPE; t++)
      ddb_item_unref(a->aMin[t]);
    free(a->zName);
    free(a);
  }
  sqlite3_free(c->aRow);
  c->aRow = NULL;
  c->nRow = c->iRow = 0;
  sqlite3_free(c->zVtab);
  c->zVtab = NULL;
}

static int attributesClose(sqlite3_vtab_cursor *cur) {
  at_reset((at_cursor *)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

/* The order of two values of one type for "the least": numbers by value,
** S and B by their bytes (B as base64 text: a stable order), others by
** their JSON text. */
static int at_value_cmp(const ddb_av *a, const ddb_av *b) {
  if(a->type == DDB_N)
    return ddb_number_cmp(a->text, a->n, b->text, b->n);
  if(a->type == DDB_S || a->type == DDB_B) {
    uint32_t n = a->n < b->n ? a->n : b->n;
    int r = memcmp(a->text, b->text, n);
    return r ? r : (a->n < b->n ? -1 : a->n > b->n);
  } else {
    ddb_buf x, y;
    int r;
    ddb_buf_init(&x, 1u << 20);
    ddb_buf_init(&y, 1u << 20);
    ddb_av_to_json(a, &x);
    ddb_av_to_json(b, &y);
    r = x.failed || y.failed || !x.p || !y.p ? 0 : strcmp(x.p, y.p);
    ddb_buf_free(&x);
    ddb_buf_free(&y);
    return r;
  }
}

/* Count attribute av of an item (p: the virtual table, for its keys).
** Returns an SQLite code. */
static int at_count(at_cursor *c, dd_vtab *p, const ddb_av *av) {
  at_attr *a = NULL;
  size_t n = strlen(av->name);
  ddb_type t = av->type;
  HASH_FIND(hh, c->pMap, av->name, n, a);
  if(!a) {
    if(HASH_COUNT(c->pMap) >= AT_MAX_NAMES)
      return SQLITE_OK;
    a = calloc(1, sizeof(*a));
    if(!a || !(a->zName = ddb_strdup(av->name))) {
      free(a);
      return SQLITE_NOMEM;
    }
    a->iKey = 2;
    if(strcmp(a->zName, p->azKey[0]) == 0)
      a->iKey = 0;
    else if(p->nKey == 2 && strcmp(a->zName, p->azKey[1]) == 0)
      a->iKey = 1;
    HASH_ADD_KEYPTR(hh, c->pMap, a->zName, n, a);
  }
  a->present++;
  if(t <= DDB_NONE || t >= AT_NTYPE)
    return SQLITE_OK;
  a->aType[t]++;
  if(!a->aMin[t] || at_value_cmp(av, &a->aMin[t]->root.kids[0]) < 0) {
    const ddb_av *one = av;
    ddb_item *it = ddb_item_from_attrs(&one, 1);
    if(!it)
      return SQLITE_NOMEM;
    ddb_item_unref(a->aMin[t]);
    a->aMin[t] = it;
  }
  return SQLITE_OK;
}

/* qsort order of rows: the table's keys, then present (most first), then
** name. */
static int at_row_cmp(const void *pa, const void *pb) {
  const at_attr *a = *(at_attr *const *)pa, *b = *(at_attr *const *)pb;
  if(a->iKey != b->iKey)
    return a->iKey - b->iKey;
  if(a->present != b->present)
    return a->present > b->present ? -1 : 1;
  return strcmp(a->zName, b->zName);
}

/* The items of page pg counted into c, n - *pGot of them at the most
** (*pGot grows).  Returns an SQLite code. */
static int at_take(at_cursor *c, dd_vtab *p, const ddb_page *pg, long long n,
                   long long *pGot) {
  int rc = SQLITE_OK, i;
  for(i = 0; rc == SQLITE_OK && i < pg->n_items && *pGot < n; i++, (*pGot)++) {
    const ddb_item *it = pg->items[i];
    uint32_t k;
    for(k = 0; rc == SQLITE_OK && k < it->root.n; k++)
      rc = at_count(c, p, &it->root.kids[k]);
  }
  return rc;
}

/* The number of Scan segments of a sample of n items (see the top of
** the file): 1 for a table DescribeTable says has no more than n. */
static int at_segments(const dd_vtab *p, long long n) {
  long long nSeg = n / AT_PER_SEGMENT;
  if(p->pDesc->item_count > 0 && p->pDesc->item_count <= n)
    return 1;
  return nSeg < 1 ? 1 : nSeg > AT_SEGMENTS ? AT_SEGMENTS : (int)nSeg;
}

/* The first round of a sample of nSeg > 1 segments: the first page of
** each, n / nSeg items (Limit), read DD_MAX_IN_WORKERS at a time (a stream of
** first pages: DDBC_STREAM_FIRST_PAGE), counted into c (*pGot); where each
** segment goes on into aStart[s] (NULL: done, aDone[s], *pnLive less).
** Returns an SQLite code, the error set. */
static int at_first_round(at_cursor *c, dd_vtab *p, long long n, int nSeg,
                          ddb_item **aStart, unsigned char *aDone, int *pnLive,
                          long long *pGot) {
  ddbc_stream *pStream = NULL;
  ddb_read rd;
  ddb_error err;
  int rc = SQLITE_OK;
  ddb_error_clear(&err);
  memset(&rd, 0, sizeof(rd));
  rd.table = p->pDesc->name;
  rd.desc = p->pDesc;  /* the keys its LastEvaluatedKey must hold */
  rd.limit = n / nSeg; /* rounded down: never more than n items read */
  if(ddbc_stream_start(p->pClient, &rd, &p->pol, NULL,
                       nSeg < DD_MAX_IN_WORKERS ? nSeg : DD_MAX_IN_WORKERS,
                       nSeg, DDBC_STREAM_FIRST_PAGE, &pStream, &err) == DDB_OK)
    for(;;) {
      ddb_page *pg = NULL;
      int s = -1;
      if(ddbc_stream_next(pStream, NULL, NULL, &pg, &s, &err) != DDB_OK)
        break;
      if(!pg) {
        ddbc_stream_free(pStream);
        return rc;
      }
      if(rc == SQLITE_OK && s >= 0 && s < nSeg) {
        rc = at_take(c, p, pg, n, pGot);
        aStart[s] = ddb_item_ref(pg->last_key);
        aDone[s] = aStart[s] == NULL;
        *pnLive -= aDone[s];
      }
      ddb_page_unref(pg);
    }
  ddbc_stream_free(pStream);
  dd_vtab_error(c->base.pVtab, "dynamodb_attributes: %s", err.message);
  return dd_rc(&err);
}

/* Read the sample: n items of p's table, a share of each of nSeg Scan
** segments (at_segments) in rounds, the first in parallel
** (at_first_round), pages through the cache; a segment is done at its
** end.  Returns an SQLite code, the error set. */
static int at_sample(at_cursor *c, dd_vtab *p, long long n) {
  ddb_item *aStart[AT_SEGMENTS];
  ddb_lek_guard aLek[AT_SEGMENTS];
  unsigned char aDone[AT_SEGMENTS];
  long long got = 0;
  int nSeg = at_segments(p, n), nLive = nSeg, rc = SQLITE_OK, s;
  memset(aStart, 0, sizeof(aStart));
  memset(aLek, 0, sizeof(aLek));
  memset(aDone, 0, sizeof(aDone));
  if(nSeg > 1)
    rc = at_first_round(c, p, n, nSeg, aStart, aDone, &nLive, &got);
  while(rc == SQLITE_OK && got < n && nLive > 0) {
    long long share = (n - got + nLive - 1) / nLive;
    for(s = 0; rc == SQLITE_OK && s < nSeg && got < n; s++) {
      ddb_read rd;
      ddb_page *pg = NULL;
      ddb_error err;
      if(aDone[s])
        continue;
      ddb_error_clear(&err);
      memset(&rd, 0, sizeof(rd));
      rd.table = p->pDesc->name;
      rd.desc = p->pDesc; /* the keys its LastEvaluatedKey must hold */
      rd.limit = share < n - got ? share : n - got;
      rd.start = aStart[s];
      rd.segment = s;
      rd.total_segments = nSeg;
      if(ddbc_read_page(p->pClient, &rd, &p->pol, &pg, &err) ||
         ddb_lek_next(&aLek[s], p->pClient, &rd, pg, &err)) {
        ddb_page_unref(pg);
        dd_vtab_error(c->base.pVtab, "dynamodb_attributes: %s", err.message);
        rc = dd_rc(&err);
        break;
      }
      rc = at_take(c, p, pg, n, &got);
      ddb_item_unref(aStart[s]);
      aStart[s] = ddb_item_ref(pg->last_key);
      ddb_page_unref(pg);
      if(!aStart[s]) {
        aDone[s] = 1;
        nLive--;
      }
    }
  }
  for(s = 0; s < nSeg; s++) {
    ddb_item_unref(aStart[s]);
    ddb_lek_guard_free(&aLek[s]);
  }
  return rc;
}

static int attributesFilter(sqlite3_vtab_cursor *cur, int idxNum,
                            const char *idxStr, int argc,
                            sqlite3_value **argv) {
  at_cursor *c = (at_cursor *)cur;
  at_vtab *v = (at_vtab *)cur->pVtab;
  const char *zName;
  long long n = AT_DEFAULT_N;
  dd_vtab *p;
  at_attr *a, *tmp;
  int rc, i = 0;
  (void)idxStr;
  at_reset(c);
  c->nArg = -1;
  if(!(idxNum & 1) || argc < 1) {
    dd_vtab_error(cur->pVtab,
                  "dynamodb_attributes: name the virtual table, "
                  "e.g. SELECT * FROM dynamodb_attributes('shop')");
    return SQLITE_ERROR;
  }
  zName = (const char *)sqlite3_value_text(argv[0]);
  if((idxNum & 2) && argc > 1) {
    sqlite3_value *pN = argv[1];
    if(sqlite3_value_numeric_type(pN) != SQLITE_INTEGER ||
       (n = sqlite3_value_int64(pN)) < 1 || n > AT_MAX_N) {
      dd_vtab_error(cur->pVtab,
                    "dynamodb_attributes: bad sample size '%s' (expected an "
                    "integer from 1 to %d)",
                    sqlite3_value_text(pN)
                        ? (const char *)sqlite3_value_text(pN)
                        : "NULL",
                    AT_MAX_N);
      return SQLITE_ERROR;
    }
    c->nArg = n;
  }
  p = zName ? dd_find_connected(v->db, zName) : NULL;
  if(!p) {
    dd_vtab_error(cur->pVtab, "dynamodb_attributes: no dynamodb table '%s'",
                  zName ? zName : "");
    return SQLITE_ERROR;
  }
  c->zVtab = sqlite3_mprintf("%s", zName);
  if(!c->zVtab)
    return SQLITE_NOMEM;
  if(dd_client(p)) {
    dd_vtab_error(cur->pVtab, "%s",
                  p->base.zErrMsg + (strncmp(p->base.zErrMsg, DD_PREFIX,
                                             strlen(DD_PREFIX)) == 0
                                         ? strlen(DD_PREFIX)
                                         : 0));
    return SQLITE_ERROR;
  }
  dd_stmt_touch(p->pConn, p->bProgress);
  rc = at_sample(c, p, n);
  if(rc)
    return rc;
  c->nRow = (int)HASH_COUNT(c->pMap);
  c->aRow = sqlite3_malloc64(sizeof(*c->aRow) * (sqlite3_uint64)(c->nRow + 1));
  if(!c->aRow)
    return SQLITE_NOMEM;
  HASH_ITER(hh, c->pMap, a, tmp) {
    c->aRow[i++] = a;
  }
  qsort(c->aRow, (size_t)c->nRow, sizeof(*c->aRow), at_row_cmp);
  return SQLITE_OK;
}

static int attributesNext(sqlite3_vtab_cursor *cur) {
  ((at_cursor *)cur)->iRow++;
  return SQLITE_OK;
}

static int attributesEof(sqlite3_vtab_cursor *cur) {
  at_cursor *c = (at_cursor *)cur;
  return c->iRow >= c->nRow;
}

/* The type of a with the most items (ties: the first in ddb_type order). */
static int at_main_type(const at_attr *a) {
  int t, best = DDB_S;
  for(t = DDB_S; t < AT_NTYPE; t++)
    if(a->aType[t] > a->aType[best])
      best = t;
  return best;
}

static int attributesColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx,
                            int col) {
  at_cursor *c = (at_cursor *)cur;
  const at_attr *a = c->aRow[c->iRow];
  switch(col) {
  case AT_NAME: return dd_result_shown(ctx, a->zName);
  case AT_TYPES: {
    /* by count, most first; ties in ddb_type order */
    sqlite3_str *s = sqlite3_str_new(0);
    int done[AT_NTYPE], t, n = 0;
    memset(done, 0, sizeof(done));
    for(;;) {
      int best = -1;
      for(t = DDB_S; t < AT_NTYPE; t++)
        if(!done[t] && a->aType[t] &&
           (best < 0 || a->aType[t] > a->aType[best]))
          best = t;
      if(best < 0)
        break;
      done[best] = 1;
      sqlite3_str_appendf(s, "%s%s", n++ ? ", " : "",
                          ddb_type_name((ddb_type)best));
    }
    sqlite3_result_text(ctx, sqlite3_str_value(s), -1, SQLITE_TRANSIENT);
    sqlite3_free(sqlite3_str_finish(s));
    break;
  }
  case AT_PRESENT: sqlite3_result_int64(ctx, a->present); break;
  case AT_SAMPLE: {
    const ddb_item *it = a->aMin[at_main_type(a)];
    if(it)
      dd_result_av(ctx, &it->root.kids[0]);
    break;
  }
  case AT_VTAB:
    sqlite3_result_text(ctx, c->zVtab, -1, SQLITE_TRANSIENT);
    break;
  default:
    if(c->nArg >= 0)
      sqlite3_result_int64(ctx, c->nArg);
    break;
  }
  return SQLITE_OK;
}

static int attributesRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid) {
  *pRowid = ((at_cursor *)cur)->iRow;
  return SQLITE_OK;
}

static sqlite3_module attributesModule = {
    0,                 /* iVersion */
    0,                 /* xCreate: eponymous only (a table-valued function) */
    attributesConnect, /* xConnect */
    attributesBestIndex,  /* xBestIndex */
    attributesDisconnect, /* xDisconnect */
    0,                    /* xDestroy */
    attributesOpen,       /* xOpen */
    attributesClose,      /* xClose */
    attributesFilter,     /* xFilter: reads the sample */
    attributesNext,       /* xNext */
    attributesEof,        /* xEof */
    attributesColumn,     /* xColumn */
    attributesRowid,      /* xRowid */
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
int dd_register_attributes(sqlite3 *db, dd_conn *c) {
  return sqlite3_create_module(db, "dynamodb_attributes", &attributesModule,
                               c);
}
