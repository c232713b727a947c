/*
** filter.c -- xFilter: the runners of each plan (GetItem, BatchGetItem,
** Query, Scan, keys = ?): its arguments bound, the row checks and the
** FILTERs set, its run started (the lookups by key are in lookups.c).
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "cursor.h" /* and multikey.h, dd_ext.h */

/* The error for a Scan refused by scan=deny, naming what would avoid it. */
static void dd_scan_denied(dd_vtab *p) {
  sqlite3_str *s = sqlite3_str_new(0);
  char *z;
  int i;
  for(i = 0; i < p->nPath; i++) {
    const dd_path *pp = &p->aPath[i];
    sqlite3_str_appendf(s, "%s%s", i ? ", " : "", p->aCol[pp->iPk].zName);
    if(pp->pIdx->name)
      sqlite3_str_appendf(s, " (%s)", pp->pIdx->name);
  }
  z = sqlite3_str_finish(s);
  dd_error(p,
           "full scan of table '%s' denied (scan=deny); constrain a "
           "partition key with = or IN: %s",
           p->pDesc->name, z ? z : "");
  sqlite3_free(z);
}

/* Start the parallel read of the cursor's plan (its rd is the template):
** nWorker threads on nUnit units, the Scan's segments, or the partitions
** aPk of a Query's IN list (cache/stream.c).  Returns an SQLite code, with
** the vtab's message set on error. */
static int dd_stream_start(dd_cursor *pCur, int nWorker, int nUnit) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  ddbc_policy pol = pCur->pol;
  ddb_read rd = pCur->rd;
  ddb_av *aPk = NULL;
  ddb_error err;
  int i;
  ddb_error_clear(&err);
  rd.limit = pCur->nLimit;
  if(pCur->pPath && pCur->pPath->pIdx->name && !pCur->pPath->pIdx->is_local)
    pol.consistent = 0; /* a GSI: see dd_next_page */
  if(pCur->op == DD_OP_QUERY) {
    aPk = sqlite3_malloc64(sizeof(ddb_av) * (sqlite3_uint64)nUnit);
    if(!aPk)
      return SQLITE_NOMEM;
    for(i = 0; i < nUnit; i++)
      aPk[i] = pCur->aPk[i].av;
  }
  if(ddbc_stream_start(p->pClient, &rd, &pol, aPk, nWorker, nUnit, 0,
                       &pCur->pScan, &err)) {
    sqlite3_free(aPk);
    return dd_cursor_error(pCur, &err);
  }
  sqlite3_free(aPk); /* copied */
  return SQLITE_OK;
}

/* ------------------------------------------------------------------------
** Exact N comparisons.  SQLite compares a number of more than 15 digits
** as a double: 18446744073709551617 > '18446744073709551616' is false to
** it, and DynamoDB's order keeps every digit.  So plan.c omits the N
** comparisons it hands xFilter from SQLite's check (ext/PLAN.md, "omit"),
** and xFilter makes each exact: the request says what DynamoDB can (a
** FILTER, the key condition), and a row check (dd_check, applied by
** dynamodbNext) whatever the request alone does not decide.
*/

/* Add the row check "column c <op> *v" to the cursor, v moved (NULL with
** op DD_SK_NONE: the column has a value). */
static void dd_check_add(dd_cursor *pCur, int c, int op, dd_val *v) {
  dd_check *ck = &pCur->aCheck[pCur->nCheck++];
  memset(ck, 0, sizeof(*ck));
  ck->iCol = c;
  ck->op = op;
  if(v) {
    ck->v = *v;
    memset(v, 0, sizeof(*v));
  }
}

/* The N comparison "column c <k> pArg" (k DD_SK_EQ .. DD_SK_LE), made
** exact: iv->bEmpty when no row passes; else, when bSend (a FILTER of
** the plan) and it is one comparison (dd_n_ops: an equality with a REAL
** is two) with a value DynamoDB can hold, *pv set to it, *pk to its
** comparison, and *pbSent = 1; and a row check wherever the request does
** not decide (not sent; a gated column, which shows NULL for some items
** that have it; the open transaction's own writes, which no request
** filters).  Returns an SQLite code. */
static int dd_n_compare(dd_cursor *pCur, dd_interval *iv, int c, int *pk,
                        sqlite3_value *pArg, int bSend, dd_val *pv,
                        int *pbSent) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  const dd_column *col = &p->aCol[c];
  dd_nrange r;
  dd_val *aV[2];
  int aOp[2], cls, rc, n, i;
  *pbSent = 0;
  if(dd_never_true(col, *pk, pArg)) {
    iv->bEmpty = 1;
    return SQLITE_OK;
  }
  rc = dd_n_range(pArg, &r, &cls);
  if(rc)
    return rc;
  if(cls != DD_NB_NUM) {
    /* above or below every number: true of every row with a value */
    if(!dd_is_table_key(p, c))
      dd_check_add(pCur, c, DD_SK_NONE, NULL);
    return SQLITE_OK;
  }
  n = dd_n_ops(*pk, &r, aOp, aV);
  if(bSend && n == 1 && !aV[0]->bOut) {
    if(col->mGate || dd_pending_any(p)) {
      dd_val w;
      rc = dd_val_copy(&w, aV[0]);
      if(rc) {
        dd_nrange_clear(&r);
        return rc;
      }
      dd_check_add(pCur, c, aOp[0], &w);
    }
    *pv = *aV[0];
    memset(aV[0], 0, sizeof(dd_val));
    *pk = aOp[0];
    *pbSent = 1;
  } else {
    for(i = 0; i < n; i++)
      dd_check_add(pCur, c, aOp[i], aV[i]);
  }
  dd_nrange_clear(&r);
  return SQLITE_OK;
}

/* Append filter op with value v (moved into the cursor) on column c. */
static void dd_filter_push(dd_cursor *pCur, int c, ddb_skop op, dd_val *v) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  ddb_filter *f = &pCur->aFilter[pCur->nFilter];
  memset(f, 0, sizeof(*f));
  f->name = p->aCol[c].zName;
  f->op = op;
  pCur->aFv[pCur->nFilter] = *v;
  memset(v, 0, sizeof(*v));
  f->v[0] = pCur->aFv[pCur->nFilter].av;
  pCur->aFilterCol[pCur->nFilter++] = c;
}

/* Append the FilterExpression of `column c LIKE pattern pArg` (c an S
** column) to the cursor's filters: the strings that start with the
** pattern's literal prefix in any ASCII case (SQLite's LIKE), as the
** sort-key path narrows a Query (keycond.c: dd_iv_apply).  A prefix
** without ASCII letters is begins_with(c, prefix), exactly; else the
** range from the prefix in upper case to the successor of the prefix in
** lower case, a superset SQLite narrows, its upper end only while a
** filter slot is spare (*pnSpare).  A NULL pattern matches no row
** (*pbEmpty set); a pattern without a literal prefix (or not UTF-8, or
** longer than a sort key) adds nothing.  Returns an SQLite code. */
static int dd_like_filter(dd_cursor *pCur, int c, sqlite3_value *pArg,
                          int *pnSpare, int *pbEmpty) {
  dd_interval iv;
  int nPrefix = 0, rc;
  if(sqlite3_value_type(pArg) == SQLITE_NULL) {
    *pbEmpty = 1; /* x LIKE NULL is NULL */
    return SQLITE_OK;
  }
  memset(&iv, 0, sizeof(iv));
  rc = dd_iv_apply(&iv, DDB_S, DD_SK_LIKE, pArg, &nPrefix);
  if(rc == SQLITE_OK && !iv.bEmpty) {
    if(iv.prefix.av.type) {
      dd_filter_push(pCur, c, DDB_SK_BEGINS_WITH, &iv.prefix);
    } else if(iv.lo.av.type) {
      dd_filter_push(pCur, c, DDB_SK_GE, &iv.lo);
      if(iv.hi.av.type && *pnSpare > 0) {
        (*pnSpare)--;
        dd_filter_push(pCur, c, DDB_SK_LT, &iv.hi);
      }
    }
  }
  dd_val_clear(&iv.lo);
  dd_val_clear(&iv.hi);
  dd_val_clear(&iv.prefix);
  return rc;
}

/* The FILTER values argv[*piArg ..] of the plan x into the cursor's
** FilterExpression (aFilter, aFv), *piArg moved past them: a value no row
** can match sets iv->bEmpty; one DynamoDB cannot compare is left out (a
** superset: SQLite checks it again, or, for N, a row check).  Returns an
** SQLite code. */
static int dd_filter_values(dd_cursor *pCur, const dd_extra *x,
                            dd_interval *iv, int argc, sqlite3_value **argv,
                            int *piArg) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  int i, rc = SQLITE_OK, nSpare = DD_MAX_FILTER - x->nFilter;
  for(i = 0; i < x->nFilter && *piArg < argc; i++) {
    int c = x->aFilterCol[i], k = x->aFilterKind[i], ok = 0;
    dd_val *v = &pCur->aFv[pCur->nFilter];
    ddb_filter *f = &pCur->aFilter[pCur->nFilter];
    sqlite3_value *pArg = argv[(*piArg)++];
    if(k == DD_SK_LIKE) {
      rc = dd_like_filter(pCur, c, pArg, &nSpare, &iv->bEmpty);
      if(rc)
        return rc;
      continue;
    }
    if(k == DD_SK_BEGINS) {
      const char *z = (const char *)sqlite3_value_text(pArg);
      int n = sqlite3_value_bytes(pArg);
      if(sqlite3_value_type(pArg) == SQLITE_NULL) {
        iv->bEmpty = 1;
        continue;
      }
      if(!z || n == 0 || !dd_utf8_ok((const unsigned char *)z, n))
        continue; /* no narrowing: SQLite checks */
      rc = dd_val_text(v, DDB_S, z, n);
      ok = rc == SQLITE_OK;
    } else if(p->aCol[c].type == DDB_N) {
      rc = dd_n_compare(pCur, iv, c, &k, pArg, 1, v, &ok);
    } else {
      rc = dd_val_from_sql(pArg, p->aCol[c].type, v, &ok);
      /* NULL or a value no row holds: no row; else (an empty attribute
      ** value, a bound DynamoDB cannot take) SQLite checks */
      if(rc == SQLITE_OK && !ok && dd_never_true(&p->aCol[c], k, pArg))
        iv->bEmpty = 1;
    }
    if(rc)
      return rc;
    if(!ok) {
      dd_val_clear(v);
      continue;
    }
    memset(f, 0, sizeof(*f));
    f->name = p->aCol[c].zName;
    f->op = k == DD_SK_BEGINS ? DDB_SK_BEGINS_WITH
            : k == DD_SK_EQ   ? DDB_SK_EQ
            : k == DD_SK_GT   ? DDB_SK_GT
            : k == DD_SK_GE   ? DDB_SK_GE
            : k == DD_SK_LT   ? DDB_SK_LT
                              : DDB_SK_LE;
    f->v[0] = v->av;
    pCur->aFilterCol[pCur->nFilter] = c;
    pCur->nFilter++;
  }
  return SQLITE_OK;
}

/* The CHECK values argv[*piArg ..] of the plan x (comparisons sent
** nowhere), *piArg moved past them: a value no row can match sets
** iv->bEmpty (no call); an N comparison becomes a row check.  Returns an
** SQLite code. */
static int dd_check_values(dd_cursor *pCur, const dd_extra *x, dd_interval *iv,
                           int argc, sqlite3_value **argv, int *piArg) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  int i, rc, bSent;
  for(i = 0; i < x->nCheck && *piArg < argc; i++) {
    int c = x->aCheckCol[i], k = x->aCheckKind[i];
    sqlite3_value *pArg = argv[(*piArg)++];
    dd_val unused;
    if(p->aCol[c].type == DDB_N) {
      rc = dd_n_compare(pCur, iv, c, &k, pArg, 0, &unused, &bSent);
      if(rc)
        return rc;
    } else if(dd_never_true(&p->aCol[c], k, pArg)) {
      iv->bEmpty = 1;
    }
  }
  return SQLITE_OK;
}

/* Does plan x have a CHECK on an N column (a row check the cached
** GetItem path would skip)? */
static int dd_has_n_check(const dd_vtab *p, const dd_extra *x) {
  int i;
  for(i = 0; i < x->nCheck; i++)
    if(p->aCol[x->aCheckCol[i]].type == DDB_N)
      return 1;
  return 0;
}

/* A Query on an N sort key: the exact interval (lo, hi, copies taken
** before dd_iv_finish, moved here) becomes row checks when the key
** condition sent is wider (an open end of a BETWEEN, a bound DynamoDB
** cannot hold), or when the open transaction's writes join the rows (no
** key condition selects those). */
static void dd_interval_checks(dd_cursor *pCur, const dd_interval *iv,
                               dd_val *lo, int loOpen, dd_val *hi,
                               int hiOpen) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  int c = pCur->iSkCol;
  if(!iv->bEmpty && (!iv->bExact || iv->nSlack || dd_pending_any(p))) {
    if(lo->av.type)
      dd_check_add(pCur, c, loOpen ? DD_SK_GT : DD_SK_GE, lo);
    if(hi->av.type)
      dd_check_add(pCur, c, hiOpen ? DD_SK_LT : DD_SK_LE, hi);
  }
  dd_val_clear(lo);
  dd_val_clear(hi);
}

/* Row checks drop rows: the request's Limit no longer counts the rows
** SQLite gets, and a count would count what the checks drop. */
static void dd_checks_settle(dd_cursor *pCur) {
  if(pCur->nCheck == 0 && !pCur->zTtl)
    return;
  pCur->nLimit = 0;
  pCur->bCount = pCur->rd.count_only = 0;
}

/* ttl=hide: the table's TTL attribute (asked once, DescribeTimeToLive)
** and now (Unix seconds) into the cursor and its request.  A server
** without DescribeTimeToLive has no TTL: nothing is hidden.  Returns an
** SQLite code, with p's message set on error. */
static int dd_ttl_start(dd_cursor *pCur) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  if(!p->bTtlHide)
    return SQLITE_OK;
  if(!p->bTtlKnown) {
    char *zAttr = NULL, *zStatus = NULL;
    ddb_error err;
    int rc = SQLITE_OK;
    ddb_error_clear(&err);
    if(ddb_describe_ttl(p->pClient, p->pDesc->name, &zAttr, &zStatus, &err)) {
      if(strcmp(err.type, "UnknownOperationException") != 0) {
        dd_error(p, "ttl=hide: DescribeTimeToLive of '%s': %s", p->pDesc->name,
                 err.message);
        return dd_rc(&err);
      }
    } else if(zAttr && (strcmp(zStatus, "ENABLED") == 0 ||
                        strcmp(zStatus, "ENABLING") == 0)) {
      p->zTtlAttr = sqlite3_mprintf("%s", zAttr);
      if(!p->zTtlAttr)
        rc = SQLITE_NOMEM;
    }
    free(zAttr);
    free(zStatus);
    if(rc)
      return rc;
    p->bTtlKnown = 1;
  }
  if(p->zTtlAttr) {
    pCur->zTtl = p->zTtlAttr;
    pCur->ttlNow = (long long)time(NULL);
    snprintf(pCur->zTtlNow, sizeof(pCur->zTtlNow), "%lld", pCur->ttlNow);
    pCur->rd.ttl_attr = pCur->zTtl;
    pCur->rd.ttl_now = pCur->ttlNow;
  }
  return SQLITE_OK;
}

/* ------------------------------------------------------------------------
** The phases of xFilter
*/

/* One run of xFilter while its phases read the plan's arguments (argv in
** ext/PLAN.md's order) into the cursor's request.  dd_filter_clear frees
** what it holds. */
typedef struct dd_filter {
  dd_cursor *pCur;
  dd_vtab *p;
  dd_path *pp; /* the plan's path */
  int idxNum;
  int argc, iArg; /* argv[iArg] is the next argument */
  sqlite3_value **argv;
  dd_extra x;     /* the machine half of idxStr (dd_plan_decode) */
  dd_interval iv; /* a Query's sort-key condition; iv.bEmpty: no row */
  dd_val *aSkv;   /* sort-key values (=, IN) for Get/BatchGetItem */
  int nSkv;       /* aSkOne or sqlite3_free(), each dd_val_clear() */
  dd_val aSkOne[1];
  int nPrefix;    /* sort-key prefix constraints (LIKE, GLOB, begins) */
  int nOther;     /* the others */
  dd_val lohi[2]; /* a Query's exact N interval (dd_interval_checks) */
  sqlite3_int64 nLim, nOff; /* LIMIT (-1: none) and OFFSET */
} dd_filter;

/* Free what the phases left in f (the cursor keeps what it was given). */
static void dd_filter_clear(dd_filter *f) {
  int i;
  dd_val_clear(&f->iv.lo);
  dd_val_clear(&f->iv.hi);
  dd_val_clear(&f->iv.prefix);
  dd_val_clear(&f->lohi[0]);
  dd_val_clear(&f->lohi[1]);
  for(i = 0; i < f->nSkv; i++)
    dd_val_clear(&f->aSkv[i]);
  if(f->aSkv != f->aSkOne)
    sqlite3_free(f->aSkv);
}

/* The plan keys = ?: the key list argv[0] parsed and read (dd_run_key_list)
** and the first row.  Returns an SQLite code (the cursor at EOF on
** error). */
static int dd_filter_key_list(dd_filter *f) {
  dd_cursor *pCur = f->pCur;
  ddb_item **aKey = NULL;
  int nKey = 0, rc;
  if(f->argc != 1)
    return SQLITE_ERROR;
  pCur->pPath = &f->p->aPath[0];
  pCur->bEof = 0;
  pCur->pKeys = sqlite3_value_dup(f->argv[0]);
  if(!pCur->pKeys)
    return SQLITE_NOMEM;
  rc = dd_keys_parse(f->p, f->argv[0], &aKey, &nKey);
  if(rc == SQLITE_OK)
    rc = dd_run_key_list(pCur, aKey, nKey);
  if(rc == SQLITE_OK && !pCur->bEof) {
    pCur->tStart = ddbc_now();
    rc = dynamodbNext(&pCur->base);
  }
  if(rc)
    pCur->bEof = 1;
  return rc;
}

/* Bind the keys: the partition key's values (an IN list whole) into the
** cursor's aPk; then the sort key's: = or IN values into f->aSkv for a
** GetItem or BatchGetItem, a Query's constraints into f->iv.  No value
** (NULL, one no key can hold) sets f->iv.bEmpty.  Returns an SQLite
** code, with p's message set on error. */
static int dd_filter_bind_keys(dd_filter *f) {
  dd_cursor *pCur = f->pCur;
  dd_vtab *p = f->p;
  dd_path *pp = f->pp;
  int i, rc, nSkEq = 0;
  if(pCur->op == DD_OP_SCAN)
    return SQLITE_OK;
  rc = dd_collect(p, pp->iPk, &pCur->aPk, &pCur->nPk, pCur->aPkOne,
                  f->argv[f->iArg++], (f->idxNum & DD_PK_IN) != 0,
                  DD_MAX_PK_BYTES);
  f->iv.bEmpty |= pCur->nPk == 0; /* PK = NULL, or a value no key holds */
  if(rc || (rc = dd_multi_bind(pCur, f->x.nEq, f->argv, &f->iArg,
                               &f->iv.bEmpty))) /* multikey.c */
    return rc;
  for(i = 0; i < DD_MAX_SK; i++) {
    int k = DD_IDX_SK(f->idxNum, i);
    if(k == DD_SK_NONE || f->iArg >= f->argc)
      break;
    if(pCur->op != DD_OP_QUERY && !(f->idxNum & DD_SK_IN) &&
       p->aCol[pp->iSk].type == DDB_N && dd_n_spans(f->argv[f->iArg])) {
      /* SK = a REAL that stands for several numbers (1.23e22 is also
      ** 12300000000000001048576): a Query of the table for all of them,
      ** not one GetItem (ORDER BY SK is this Query's: dd_order_ok) */
      pCur->op = DD_OP_QUERY;
    }
    if(pCur->op != DD_OP_QUERY) {
      /* the table's sort key, = or IN: gather its values */
      rc = dd_collect(p, pp->iSk, &f->aSkv, &f->nSkv, f->aSkOne,
                      f->argv[f->iArg++], (f->idxNum & DD_SK_IN) != 0,
                      DD_MAX_SK_BYTES);
      if(rc)
        return rc;
      nSkEq = f->nSkv;
      continue;
    }
    if(k != DD_SK_LIKE && k != DD_SK_GLOB && k != DD_SK_BEGINS)
      f->nOther++;
    rc = dd_iv_apply(&f->iv, p->aCol[pCur->iSkCol].type, k, f->argv[f->iArg++],
                     &f->nPrefix);
    if(rc)
      return rc;
  }
  if(pCur->op != DD_OP_QUERY && p->nKey == 2 && nSkEq == 0)
    f->iv.bEmpty = 1;
  return SQLITE_OK;
}

/* Bind the FILTER values (dd_filter_values) into the request.  Returns an
** SQLite code. */
static int dd_filter_bind_filters(dd_filter *f) {
  dd_cursor *pCur = f->pCur;
  int rc = dd_filter_values(pCur, &f->x, &f->iv, f->argc, f->argv, &f->iArg);
  if(rc)
    return rc;
  pCur->rd.filters = pCur->aFilter;
  pCur->rd.n_filters = pCur->nFilter;
  pCur->rd.desc = f->p->pDesc; /* the keys of every LastEvaluatedKey */
  return SQLITE_OK;
}

/* The projection (the plan's columns, and ttl=hide's attribute, which its
** row check reads) and COUNT into the request. */
static void dd_filter_projection(dd_filter *f) {
  dd_cursor *pCur = f->pCur;
  dd_vtab *p = f->p;
  int i;
  for(i = 0; i < p->nCol && i < 64; i++)
    if(f->x.mProj & ((sqlite3_uint64)1 << i))
      pCur->azProj[pCur->nProj++] = p->aCol[i].zName;
  if(pCur->zTtl && pCur->nProj) {
    for(i = 0; i < pCur->nProj && strcmp(pCur->azProj[i], pCur->zTtl); i++)
      ;
    if(i == pCur->nProj)
      pCur->azProj[pCur->nProj++] = pCur->zTtl;
  }
  pCur->rd.proj = pCur->azProj;
  pCur->rd.n_proj = f->x.bCount ? 0 : pCur->nProj;
  pCur->bCount = pCur->rd.count_only = f->x.bCount;
}

/* Read LIMIT and OFFSET (LIMIT 0: no row, no call). */
static void dd_filter_read_limit(dd_filter *f) {
  if(!(f->idxNum & DD_LIMIT))
    return;
  f->nLim = sqlite3_value_int64(f->argv[f->iArg++]);
  f->nOff =
      (f->idxNum & DD_OFFSET) ? sqlite3_value_int64(f->argv[f->iArg++]) : 0;
  if(f->nOff < 0)
    f->nOff = 0;
  if(f->nLim == 0)
    f->iv.bEmpty = 1;
}

/* The request's Limit: LIMIT + OFFSET only when the call selects exactly
** the WHERE's rows; Limit is a 32-bit integer to DynamoDB: n+m beyond it
** (or overflowing) asks for DD_MAX_LIMIT, as good as none.  Then the row
** checks settle it (dd_checks_settle). */
static void dd_filter_limit(dd_filter *f) {
  dd_cursor *pCur = f->pCur;
  sqlite3_int64 nLim = f->nLim, nOff = f->nOff;
  if(nLim >= 0 && f->iv.bExact && !pCur->bFetch && pCur->nFilter == 0)
    pCur->nLimit = nLim > DD_MAX_LIMIT - nOff || nOff > DD_MAX_LIMIT
                       ? DD_MAX_LIMIT
                       : nLim + nOff;
  dd_checks_settle(pCur);
}

/* The Query's Limit for nLim rows (LIMIT + OFFSET; 0: none): nLim when
** the key condition sent selects exactly the WHERE's rows, or more only
** past them in the read's direction (the far end of a BETWEEN sent closed,
** f->iv.nSlack: its items come after every row); nLim + 1 when the near
** end is such an end on the table's own sort key, unique in a partition,
** so that its one item is counted and the rows asked still come in one
** request; else 0 (an index's sort keys repeat: the near end may add any
** number of items).  SQLite stops at its LIMIT; rows it asks for past the
** Limit come unlimited (dd_page_read). */
static sqlite3_int64 dd_query_limit(const dd_filter *f, sqlite3_int64 nLim) {
  const dd_cursor *pCur = f->pCur;
  int bNear =
      (f->idxNum & DD_DESC) ? (f->iv.nSlack >> 1) & 1 : f->iv.nSlack & 1;
  if(nLim <= 0 || !f->iv.bExact)
    return 0;
  /* an N interval's row checks of the transaction's writes (see
  ** dd_interval_checks) drop rows: none then, as before */
  if(pCur->iSkCol >= 0 && f->p->aCol[pCur->iSkCol].type == DDB_N &&
     dd_pending_any(f->p))
    return 0;
  if(!bNear)
    return nLim;
  if(f->pp != &f->p->aPath[0] || nLim >= DD_MAX_LIMIT)
    return 0;
  return nLim + 1;
}

/* A Query's request: its key condition (dd_iv_finish; on an N sort key
** the exact interval's row checks, dd_interval_checks), its order, and
** the Queries of an IN list started at once, several partitions at a
** time.  f->iv.bEmpty when no row can match.  Returns an SQLite code. */
static int dd_filter_query(dd_filter *f) {
  dd_cursor *pCur = f->pCur;
  dd_vtab *p = f->p;
  dd_path *pp = f->pp;
  dd_interval *iv = &f->iv;
  sqlite3_int64 nLim = pCur->nLimit; /* before an open end's checks */
  int rc, bOpen;
  pCur->rd.table = p->pDesc->name;
  pCur->rd.index = pp->pIdx->name;
  pCur->rd.pk_name = p->aCol[pp->iPk].zName;
  pCur->rd.sk_name = pCur->iSkCol >= 0 ? p->aCol[pCur->iSkCol].zName : 0;
  if(pCur->iSkCol >= 0 && p->aCol[pCur->iSkCol].type == DDB_N) {
    /* the exact interval, before dd_iv_finish shapes the request */
    rc = dd_val_copy(&f->lohi[0], &iv->lo);
    if(rc == SQLITE_OK)
      rc = dd_val_copy(&f->lohi[1], &iv->hi);
    if(rc)
      return rc;
    bOpen = iv->loOpen + 2 * iv->hiOpen;
    dd_iv_finish(iv, f->nPrefix, f->nOther, &pCur->rd, pCur->sk);
    dd_interval_checks(pCur, iv, &f->lohi[0], bOpen & 1, &f->lohi[1],
                       bOpen >> 1);
    dd_checks_settle(pCur);
  } else {
    dd_iv_finish(iv, f->nPrefix, f->nOther, &pCur->rd, pCur->sk);
  }
  if(iv->bEmpty)
    return SQLITE_OK;
  pCur->nLimit = dd_query_limit(f, nLim);
  pCur->rd.sk[0] = pCur->sk[0].av;
  pCur->rd.sk[1] = pCur->sk[1].av;
  pCur->rd.descending = (f->idxNum & DD_DESC) != 0;
  pCur->iPk = -1;
  if(pCur->nPk > 1 && !pCur->bFetch && pCur->nLimit == 0)
    /* several partitions (IN): their Queries run concurrently */
    return dd_stream_start(
        pCur, pCur->nPk < DD_MAX_IN_WORKERS ? pCur->nPk : DD_MAX_IN_WORKERS,
        pCur->nPk);
  return SQLITE_OK;
}

/* Run the call: a GetItem or BatchGetItem now (dd_run_keys), a Query's
** or a Scan's first page set up (a parallel Scan started), the open
** transaction's writes laid over it; then the first row.  Returns an
** SQLite code. */
static int dd_filter_run(dd_filter *f) {
  dd_cursor *pCur = f->pCur;
  dd_vtab *p = f->p;
  int rc = SQLITE_OK;
  switch(pCur->op) {
  case DD_OP_GET:
  case DD_OP_BATCH: rc = dd_run_keys(pCur, f->aSkv, f->nSkv); break;
  case DD_OP_QUERY:
    rc = dd_filter_query(f);
    if(rc == SQLITE_OK && f->iv.bEmpty) {
      pCur->bEof = 1;
      return SQLITE_OK;
    }
    break;
  default:
    pCur->nPk = 0;
    pCur->iPk = -1;
    if(p->nSlice > 0) {
      pCur->rd.segment = p->iSlice;
      pCur->rd.total_segments = p->nSlice;
    }
    break;
  }
  if(rc == SQLITE_OK)
    rc = dd_overlay_start(pCur, f->aSkv, f->nSkv, NULL, 0);
  if(rc)
    return rc;
  pCur->tStart = ddbc_now();
  /* the first page: dd_next_page() starts at the first partition */
  if(pCur->op == DD_OP_QUERY)
    pCur->bMore = 0;
  if(pCur->op == DD_OP_SCAN) {
    pCur->bMore = 1;
    pCur->iPk = 0;
    /* a LIMIT of at most DD_SCAN_SERIAL_LIMIT rows is one request with
    ** Limit (about a page): segments would each read a page */
    if(p->nSegments > 1 && p->nSlice == 0 &&
       (pCur->nLimit == 0 || pCur->nLimit > DD_SCAN_SERIAL_LIMIT)) {
      rc = dd_stream_start(pCur, p->nSegments, p->nUnits);
      if(rc)
        return rc;
    }
  }
  return dynamodbNext(&pCur->base);
}

/* Ready the plan's run: the client made (the first real read:
** credentials are resolved now), ttl=hide's attribute, the machine half
** of idxStr read into *x.  Returns an SQLite code, with p's message set
** on error. */
static int dd_filter_plan(dd_cursor *pCur, const char *idxStr, int argc,
                          dd_extra *x) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  int rc = dd_client(p);
  if(rc == SQLITE_OK && p->bTtlHide)
    rc = dd_ttl_start(pCur);
  if(rc)
    return rc;
  /* an idxStr is its statement's, which outlives the cursor: decoded once
  ** a cursor (a join runs xFilter once per outer row) */
  if(!idxStr || idxStr != pCur->zPlanSeen || argc != pCur->nPlanArgs) {
    pCur->zPlanSeen = NULL;
    if(dd_plan_decode(p, idxStr, argc, &pCur->xPlan)) {
      dd_error(p, "the plan '%s' lost its machine half (see dd_plan_encode)",
               idxStr ? idxStr : "");
      return SQLITE_ERROR;
    }
    pCur->zPlanSeen = idxStr;
    pCur->nPlanArgs = argc;
  }
  *x = pCur->xPlan;
  return SQLITE_OK;
}

/* Start f for the plan (idxNum, argv; f->x already read by
** dd_filter_plan, kept): everything else zero, the interval exact, no
** LIMIT.  (After the cached GetItem's chance: the warm path of a join
** never pays for this.) */
static void dd_filter_begin(dd_filter *f, dd_cursor *pCur, int idxNum,
                            int argc, sqlite3_value **argv) {
  dd_extra x = f->x;
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  memset(f, 0, sizeof(*f));
  f->x = x;
  f->pCur = pCur;
  f->p = p;
  f->pp = &p->aPath[DD_IDX_PATH(idxNum)];
  f->idxNum = idxNum;
  f->argc = argc;
  f->argv = argv;
  f->nLim = -1;
  f->iv.bExact = 1;
}

/* The cursor takes the plan's call, path and FETCH; in a write
** transaction (an UPDATE or DELETE, or a read inside one), or where the
** writes of another virtual table's over the same DynamoDB table are laid
** over the rows, rows must be whole items with their keys, never counted
** or projected, and the rows a write reads from a GSI (never consistent)
** are read again by key, consistently.  Returns SQLITE_OK, or
** SQLITE_ERROR for a Scan that scan=deny refuses. */
static int dd_filter_cursor(dd_filter *f) {
  dd_cursor *pCur = f->pCur;
  pCur->op = DD_IDX_OP(f->idxNum);
  pCur->pPath = f->pp;
  pCur->bEof = 0;
  pCur->bFetch = (f->idxNum & DD_FETCH) != 0 ||
                 (pCur->bFresh && f->pp->pIdx->name && !f->pp->pIdx->is_local);
  if(dd_in_write(f->p) || dd_pending_any(f->p)) {
    f->x.bCount = 0;
    f->x.mProj = 0;
  }
  if(pCur->op == DD_OP_SCAN && !(f->idxNum & DD_KEYS)) {
    if(f->p->bScanDeny) {
      dd_scan_denied(f->p);
      return SQLITE_ERROR;
    }
    pCur->rd.table = f->p->pDesc->name;
  }
  return SQLITE_OK;
}

/* Are the run's rows chosen on values other than the table key: its
** path's key condition, a FILTER or a row check on another attribute?
** (dd_cursor.bDepends) */
static int dd_run_depends(const dd_cursor *pCur) {
  const dd_vtab *p = (const dd_vtab *)pCur->base.pVtab;
  int k;
  if(!dd_col_is_key(p, pCur->pPath->iPk) ||
     (pCur->pPath->iSk >= 0 && !dd_col_is_key(p, pCur->pPath->iSk)))
    return 1;
  for(k = 0; k < pCur->nFilter; k++)
    if(!dd_col_is_key(p, pCur->aFilterCol[k]))
      return 1;
  for(k = 0; k < pCur->nCheck; k++)
    if(!dd_col_is_key(p, pCur->aCheck[k].iCol))
      return 1;
  return 0;
}

/* Does the statement running now write p (an UPDATE, DELETE or INSERT of
** it)?  A write transaction is open on p (xBegin comes before xFilter in
** a statement that writes a virtual table) and the running statement, as
** the trace hook saw it start, is not read-only; without the hook, every
** read inside a write transaction counts. */
static int dd_stmt_writes(dd_vtab *p) {
  sqlite3_stmt *pStmt;
  if(!dd_in_write(p))
    return 0;
  pStmt = dd_stmt_running(p->pConn);
  return !pStmt || !sqlite3_stmt_readonly(pStmt);
}

/* The read policy of the cursor's run: the table's, or for a statement
** that writes the table (dd_stmt_writes) DynamoDB's own items, read
** consistently and never from (nor into) either cache tier: an UPDATE's
** new values and a DELETE's choice are computed from them. */
static void dd_filter_policy(dd_cursor *pCur) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  pCur->pol = p->pol;
  pCur->bFresh = dd_stmt_writes(p);
  if(pCur->bFresh) {
    pCur->pol.consistent = 1;
    pCur->pol.item_ttl = 0;
    pCur->pol.query_ttl = 0; /* a GSI's pages too (not consistent) */
  }
}

/* xFilter: run the plan xBestIndex chose (idxNum, idxStr and argv as
** ext/PLAN.md lays them out): bind the keys, the filters, the
** projection, the limit and the checks into the cursor's request, then
** run it.  Returns an SQLite code, the vtab's message set on error (the
** cursor then at EOF). */
int dynamodbFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                   int argc, sqlite3_value **argv) {
  dd_cursor *pCur = (dd_cursor *)cur;
  dd_vtab *p = (dd_vtab *)cur->pVtab;
  dd_filter f;
  int rc;

  dd_cursor_reset(pCur);
  if(idxNum & DD_NONE)
    return SQLITE_OK; /* no row can match: no call, no credentials */
  rc = dd_filter_plan(pCur, idxStr, argc, &f.x);
  if(rc)
    return rc;
  dd_filter_policy(pCur);
  /* the hot path of a join: a GetItem the item cache answers */
  if(DD_IDX_OP(idxNum) == DD_OP_GET && !pCur->bFresh && !dd_pending_any(p) &&
     !dd_has_n_check(p, &f.x) && dd_get_cached(pCur, argc, argv))
    return dynamodbNext(cur);
  dd_filter_begin(&f, pCur, idxNum, argc, argv);
  rc = dd_filter_cursor(&f);
  if(rc)
    return rc;
  if(idxNum & DD_KEYS)
    return dd_filter_key_list(&f);

  /* the arguments, in ext/PLAN.md's order; then the call */
  rc = dd_filter_bind_keys(&f);
  if(rc == SQLITE_OK)
    rc = dd_filter_bind_filters(&f);
  if(rc == SQLITE_OK) {
    dd_filter_projection(&f);
    dd_filter_read_limit(&f);
    rc = dd_check_values(pCur, &f.x, &f.iv, argc, argv, &f.iArg);
  }
  if(rc == SQLITE_OK) {
    dd_filter_limit(&f);
    pCur->bDepends = dd_run_depends(pCur);
    if(f.iv.bEmpty)
      pCur->bEof = 1; /* no row can match: no call */
    else
      rc = dd_filter_run(&f);
    if(rc == SQLITE_OK && f.x.nSort && !pCur->bCount)
      rc = dd_sort_rows(pCur, &f.x);
  }
  dd_filter_clear(&f);
  if(rc)
    pCur->bEof = 1;
  return rc;
}
