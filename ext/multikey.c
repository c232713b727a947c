/*
** multikey.c -- Queries of a multi-attribute GSI key: since November
** 2025 a GSI's key may list up to 4 partition (HASH) and 4 sort (RANGE)
** attributes, each a top-level S, N or B attribute.
**
**   -- GSI ByStatus: HASH tenant, status; RANGE created_at, id
**   SELECT * FROM orders
**    WHERE tenant = 't1' AND status = 'PENDING' AND created_at > 20260101;
**   -- Query ByStatus (tenant = ? AND status = ? AND created_at > ?)
**
** A Query of such an index needs = on every partition attribute (the
** first may be an IN list: a Query a value), then the sort attributes as
** a left-to-right prefix of =, at most the last of them a range (<, <=,
** >, >=, BETWEEN, begins_with); DynamoDB refuses any
** other key condition (DynamoDB Local 3.3.1: "HASH key attributes b must
** have equality conditions specified in the query", "RANGE key attributes
** c must have equality conditions specified in the query because a
** condition is present on key attribute d", "KeyConditionExpressions must
** only contain one condition per key").  dd_plan_multi plans exactly
** that and nothing else: the first partition attribute is the plan's
** partition key (DD_ARG_PK), the other = are DD_ARG_KEQ arguments, the
** range is the ordinary sort-key constraints (DD_ARG_SK) on the sort
** attribute after the prefix (dd_plan.iSkCol); whatever else the WHERE
** says goes to the FilterExpression or stays with SQLite (plan.c).
**
** An item is in the index only when it has every key attribute: each
** partition attribute's column is gated by the others (schema.c,
** dd_gate_multi), so a Scan shows such an item's partition attributes as
** NULL, as the index does not have it, and the index never changes the
** answer (docs/query-planning.md).
*/
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "cursor.h" /* and multikey.h */

/* The usable, binary-collated plain = (no IN list) on column iCol of
** type t, or -1.  A LIKE, GLOB or function never is one; nor, on an N
** attribute, a REAL SQLite shows now that stands for several numbers
** (dd_n_spans: a key condition holds one of them; a value known only at
** xFilter is refused there, dd_multi_bind). */
static int dd_mk_find_eq(sqlite3_index_info *pInfo, int iCol, ddb_type t) {
  int i;
  for(i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    sqlite3_value *pVal = NULL;
    const char *zColl;
    if(!c->usable || c->iColumn != iCol ||
       c->op != SQLITE_INDEX_CONSTRAINT_EQ || sqlite3_vtab_in(pInfo, i, -1))
      continue;
    if(t == DDB_N && sqlite3_vtab_rhs_value(pInfo, i, &pVal) == SQLITE_OK &&
       pVal && dd_n_spans(pVal))
      continue;
    zColl = sqlite3_vtab_collation(pInfo, i);
    if(zColl == NULL || sqlite3_stricmp(zColl, "BINARY") == 0)
      return i;
  }
  return -1;
}

/* The usable, binary-collated IN list on column iCol that SQLite can hand
** over whole (sqlite3_vtab_in), or -1: the first partition attribute's
** values, one Query each. */
static int dd_mk_find_in(sqlite3_index_info *pInfo, int iCol) {
  int i;
  for(i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    const char *zColl;
    if(!c->usable || c->iColumn != iCol ||
       c->op != SQLITE_INDEX_CONSTRAINT_EQ || !sqlite3_vtab_in(pInfo, i, -1))
      continue;
    zColl = sqlite3_vtab_collation(pInfo, i);
    if(zColl == NULL || sqlite3_stricmp(zColl, "BINARY") == 0)
      return i;
  }
  return -1;
}

/* The DD_SK_ kind of a range constraint c a Query may send on a sort
** attribute of type t, or DD_SK_NONE (= is not a range here; LIKE, GLOB
** and begins_with are prefixes of strings only). */
static int dd_mk_range_kind(sqlite3_index_info *pInfo, int i, ddb_type t) {
  const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
  const char *zColl;
  int k;
  switch(c->op) {
  case SQLITE_INDEX_CONSTRAINT_GT: k = DD_SK_GT; break;
  case SQLITE_INDEX_CONSTRAINT_GE: k = DD_SK_GE; break;
  case SQLITE_INDEX_CONSTRAINT_LT: k = DD_SK_LT; break;
  case SQLITE_INDEX_CONSTRAINT_LE: k = DD_SK_LE; break;
  case SQLITE_INDEX_CONSTRAINT_LIKE: k = DD_SK_LIKE; break;
  case SQLITE_INDEX_CONSTRAINT_GLOB: k = DD_SK_GLOB; break;
  case DD_FUNC_BEGINS_WITH: k = DD_SK_BEGINS; break;
  default: return DD_SK_NONE;
  }
  if(k >= DD_SK_LIKE)
    return t == DDB_S ? k : DD_SK_NONE;
  zColl = sqlite3_vtab_collation(pInfo, i);
  return zColl == NULL || sqlite3_stricmp(zColl, "BINARY") == 0 ? k
                                                                : DD_SK_NONE;
}

/* Does the WHERE hold a constraint on column iCol that NULL fails (a
** comparison, IS NOT NULL)?  *pbNull: it asks for NULL (IS NULL). */
static int dd_mk_not_null(sqlite3_index_info *pInfo, int iCol, int *pbNull) {
  int i, bFound = 0;
  for(i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    if(!c->usable || c->iColumn != iCol)
      continue;
    if(c->op == SQLITE_INDEX_CONSTRAINT_ISNULL)
      *pbNull = 1;
    else if(c->op == SQLITE_INDEX_CONSTRAINT_ISNOTNULL ||
            c->op == SQLITE_INDEX_CONSTRAINT_EQ ||
            c->op == SQLITE_INDEX_CONSTRAINT_GT ||
            c->op == SQLITE_INDEX_CONSTRAINT_GE ||
            c->op == SQLITE_INDEX_CONSTRAINT_LT ||
            c->op == SQLITE_INDEX_CONSTRAINT_LE ||
            c->op == SQLITE_INDEX_CONSTRAINT_LIKE ||
            c->op == SQLITE_INDEX_CONSTRAINT_GLOB ||
            c->op == DD_FUNC_BEGINS_WITH)
      bFound = 1;
  }
  return bFound;
}

/* Can a Query of pp return every row the WHERE may match?  Not when the
** WHERE asks for a key attribute to be NULL (no item of the index lacks
** one).  Else yes when a partition attribute is gated (it is not a key of
** the table: dd_gate_multi), as the = on it then fails for every item
** outside the index; otherwise each key attribute that is not a key of
** the table needs a constraint NULL fails. */
static int dd_mk_membership_ok(dd_vtab *p, sqlite3_index_info *pInfo,
                               const dd_path *pp) {
  int k, bNull = 0, bGated = 0, bAll = 1;
  for(k = 0; k < pp->nPkCol + pp->nSkCol; k++) {
    int c = k < pp->nPkCol ? pp->aPkCol[k] : pp->aSkCol[k - pp->nPkCol];
    int bHas = dd_mk_not_null(pInfo, c, &bNull);
    if(k < pp->nPkCol && !dd_is_table_key(p, c))
      bGated = 1;
    if(!bHas && !dd_is_table_key(p, c))
      bAll = 0;
  }
  return !bNull && (bGated || bAll);
}

/* See dd_ext.h: the = of every partition attribute (the first the plan's
** partition key, the others DD_ARG_KEQ), the = prefix of the sort
** attributes, then the range constraints on the next one; the cost as
** for a single key, each = of a sort attribute narrowing the partition. */
int dd_plan_multi(dd_vtab *p, sqlite3_index_info *pInfo, int iPath,
                  sqlite3_uint64 mUsed, dd_plan *pl) {
  const dd_path *pp = &p->aPath[iPath];
  int k, i, iCons;
  memset(pl, 0, sizeof(*pl));
  pl->iPath = iPath;
  pl->iSkCol = -1;
  pl->op = DD_OP_QUERY;
  if(!dd_mk_membership_ok(p, pInfo, pp))
    return 0;
  for(k = 0; k < pp->nPkCol; k++) {
    iCons = dd_mk_find_eq(pInfo, pp->aPkCol[k], p->aCol[pp->aPkCol[k]].type);
    if(iCons < 0 && k == 0 && (iCons = dd_mk_find_in(pInfo, pp->iPk)) >= 0)
      pl->bPkIn = 1; /* the first attribute IN (...): a Query a value */
    if(iCons < 0)
      return 0; /* DynamoDB needs = on every partition attribute */
    if(k == 0) {
      pl->iPkCons = iCons;
      continue;
    }
    pl->aEqCons[pl->nEq] = iCons;
    pl->aEqCol[pl->nEq++] = pp->aPkCol[k];
  }
  for(k = 0; k < pp->nSkCol; k++) {
    int c = pp->aSkCol[k];
    if((iCons = dd_mk_find_eq(pInfo, c, p->aCol[c].type)) >= 0) {
      pl->aEqCons[pl->nEq] = iCons;
      pl->aEqCol[pl->nEq++] = c;
      continue;
    }
    /* the first sort attribute without =: its ranges end the condition */
    pl->iSkCol = c;
    for(i = 0; i < pInfo->nConstraint && pl->nSk < DD_MAX_SK; i++) {
      int kind;
      if(!pInfo->aConstraint[i].usable || pInfo->aConstraint[i].iColumn != c)
        continue;
      kind = dd_mk_range_kind(pInfo, i, p->aCol[c].type);
      if(kind == DD_SK_NONE)
        continue;
      pl->aSkCons[pl->nSk] = i;
      pl->aSkKind[pl->nSk++] = kind;
    }
    break;
  }
  /* rows: a partition's (DD_PARTITION_ROWS), a third with a range, a
  ** quarter of that with each = of a sort attribute */
  pl->rows = DD_PARTITION_ROWS / (pl->nSk ? 3 : 1);
  for(k = pp->nPkCol - 1; k < pl->nEq; k++)
    pl->rows /= 4;
  if(pl->bPkIn)
    pl->rows *= 5;
  pl->cost = 5 + pl->rows + 1; /* an index: a little more than the table */
  if((mUsed & ~pp->mCover) != 0)
    pl->cost = pl->cost * 2 + 10; /* rows must be fetched again by key */
  return 1;
}

/* See dd_ext.h.  The Query returns the index's items in the order of its
** sort attributes, one after the other; those fixed by = (and the
** partition attributes) are constant.  So an ORDER BY is delivered when,
** without its constant columns, it is a prefix of the sort attributes
** from the first not fixed on, all in one direction. */
int dd_multi_order_ok(dd_vtab *p, sqlite3_index_info *pInfo, const dd_plan *pl,
                      int *pbDesc) {
  const dd_path *pp = &p->aPath[pl->iPath];
  int i, k, iNext, dir = -1;
  *pbDesc = 0;
  if(pl->bPkIn)
    return pInfo->nOrderBy == 0; /* several partitions, one after another */
  /* the first sort attribute not fixed by = */
  for(iNext = 0; iNext < pp->nSkCol; iNext++) {
    for(k = 0; k < pl->nEq && pl->aEqCol[k] != pp->aSkCol[iNext]; k++)
      ;
    if(k == pl->nEq)
      break;
  }
  for(i = 0; i < pInfo->nOrderBy; i++) {
    const struct sqlite3_index_orderby *o = &pInfo->aOrderBy[i];
    int bConst = o->iColumn == pp->iPk;
    for(k = 0; k < pl->nEq && !bConst; k++)
      bConst = o->iColumn == pl->aEqCol[k];
    if(bConst)
      continue;
    if(iNext >= pp->nSkCol || o->iColumn != pp->aSkCol[iNext])
      return 0;
    if(dir >= 0 && dir != o->desc)
      return 0;
    dir = o->desc;
    iNext++;
  }
  *pbDesc = dir == 1;
  return 1;
}

/* See dd_ext.h.  Each = value converts to its column's type as the
** partition key's does (dd_val_from_sql); one no key can hold (NULL, a
** blob for a string, an empty string, a number beyond DynamoDB's) matches
** no item.  An N value that stands for several numbers (a REAL of more
** than 15 digits) is refused: the key condition would hold one of them. */
int dd_multi_bind(dd_cursor *pCur, int nArg, sqlite3_value **argv, int *piArg,
                  int *pbEmpty) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  const dd_path *pp = pCur->pPath;
  int nPkMore = pp->nPkCol - 1, rc, k;
  pCur->iSkCol = pp->iSk;
  pCur->rd.n_eq = 0;
  if(!dd_path_multi(pp))
    return nArg ? SQLITE_ERROR : SQLITE_OK;
  if(nArg < nPkMore || nArg > nPkMore + pp->nSkCol)
    return SQLITE_ERROR; /* dd_plan_decode counted what dd_plan_multi set */
  /* the sort attribute after those fixed by =: the range's (also when a
  ** value below matches nothing, as the range's arguments follow) */
  k = nArg - nPkMore;
  pCur->iSkCol = k < pp->nSkCol ? pp->aSkCol[k] : -1;
  for(k = 0; k < nArg; k++) {
    int c = k < nPkMore ? pp->aPkCol[k + 1] : pp->aSkCol[k - nPkMore], ok = 0;
    sqlite3_value *pV = argv[(*piArg)++];
    if(p->aCol[c].type == DDB_N && dd_n_spans(pV)) {
      dd_error(p,
               "%s = %s: a REAL that stands for several numbers cannot be "
               "one value of a key condition; write the number as text "
               "('<digits>') for every digit",
               p->aCol[c].zName, sqlite3_value_text(pV));
      return SQLITE_ERROR;
    }
    rc = dd_val_from_sql(pV, p->aCol[c].type, &pCur->aEq[k], &ok);
    if(rc)
      return rc;
    if(!ok || !dd_key_fits(&pCur->aEq[k],
                           k < nPkMore ? DD_MAX_PK_BYTES : DD_MAX_SK_BYTES)) {
      *pbEmpty = 1; /* a value no key can hold: no item */
      if(ok)
        dd_val_clear(&pCur->aEq[k]);
      *piArg += nArg - k - 1;
      return SQLITE_OK;
    }
    pCur->azEq[k] = p->aCol[c].zName;
    pCur->aEqAv[k] = pCur->aEq[k].av;
    pCur->nEq++;
  }
  pCur->rd.n_eq = pCur->nEq;
  pCur->rd.eq_names = pCur->azEq;
  pCur->rd.eq_vals = pCur->aEqAv;
  return SQLITE_OK;
}

/* See multikey.h. */
const dd_val *dd_multi_known(const dd_cursor *pCur, int i) {
  const dd_vtab *p = (const dd_vtab *)pCur->base.pVtab;
  int k;
  if(i == pCur->iSkCol && pCur->rd.sk_op == DDB_SK_EQ)
    return &pCur->sk[0];
  for(k = 0; k < pCur->nEq; k++)
    if(pCur->azEq[k] == p->aCol[i].zName)
      return &pCur->aEq[k];
  return NULL;
}

/* See dd_ext.h. */
void dd_multi_reset(dd_cursor *pCur) {
  int i;
  for(i = 0; i < pCur->nEq; i++)
    dd_val_clear(&pCur->aEq[i]);
  pCur->nEq = 0;
  pCur->rd.n_eq = 0;
  pCur->iSkCol = -1;
}

/* See dd_ext.h: every key attribute of the path in its type, and the
** value of each = the Query sends. */
int dd_multi_pend_ok(dd_cursor *pCur, const ddb_item *it) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  const dd_path *pp = pCur->pPath;
  int k;
  if(!dd_path_multi(pp))
    return 1;
  for(k = 0; k < pp->nPkCol + pp->nSkCol; k++) {
    int c = k < pp->nPkCol ? pp->aPkCol[k] : pp->aSkCol[k - pp->nPkCol];
    const ddb_av *a = ddb_item_get(it, p->aCol[c].zName);
    if(!a || a->type != p->aCol[c].type)
      return 0;
  }
  for(k = 0; k < pCur->nEq; k++)
    if(!ddb_av_equal(ddb_item_get(it, pCur->azEq[k]), &pCur->aEqAv[k]))
      return 0;
  return 1;
}
