/*
** plan.c -- xBestIndex: the choice of one DynamoDB call per statement.
*/
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "dd_ext.h"
#include "multikey.h"

/* The plan this file chooses is described above dynamodbBestIndex, at the
** end of the file; its helpers come first. */

/* The outer rows a Scan is weighed against when a join on the key could
** replace it (dd_choose_path): 1,024 times SQLite's guess for a table it
** has no statistics of (1,048,576 rows), because the guesses of a join's
** tables multiply (two such tables joined on an index are guessed at
** about 10 million rows: 8 times the guess lost there, ext/PLAN.md); so
** the keyed call wins unless SQLite knows of more than about a billion
** rows outside. */
#define DD_JOIN_OUTER_ROWS (1024.0 * 1048576.0)

/* The DD_SK_ kind of constraint c on a sort key, or DD_SK_NONE. */
static int dd_sk_kind(const struct sqlite3_index_constraint *c) {
  switch(c->op) {
  case SQLITE_INDEX_CONSTRAINT_EQ: return DD_SK_EQ;
  case SQLITE_INDEX_CONSTRAINT_GT: return DD_SK_GT;
  case SQLITE_INDEX_CONSTRAINT_GE: return DD_SK_GE;
  case SQLITE_INDEX_CONSTRAINT_LT: return DD_SK_LT;
  case SQLITE_INDEX_CONSTRAINT_LE: return DD_SK_LE;
  case SQLITE_INDEX_CONSTRAINT_LIKE: return DD_SK_LIKE;
  case SQLITE_INDEX_CONSTRAINT_GLOB: return DD_SK_GLOB;
  case DD_FUNC_BEGINS_WITH: return DD_SK_BEGINS;
  default: return DD_SK_NONE;
  }
}

/* Is constraint i usable with binary comparison?  LIKE and GLOB carry
** their own semantics; ranges and EQ must compare in BINARY. */
static int dd_binary(sqlite3_index_info *pInfo, int i) {
  const char *zColl;
  int op = pInfo->aConstraint[i].op;
  if(op == SQLITE_INDEX_CONSTRAINT_LIKE ||
     op == SQLITE_INDEX_CONSTRAINT_GLOB || op == DD_FUNC_BEGINS_WITH)
    return 1;
  zColl = sqlite3_vtab_collation(pInfo, i);
  return zColl == NULL || sqlite3_stricmp(zColl, "BINARY") == 0;
}

/* Find the partition-key equality on column iCol: a plain EQ if any, else
** an IN that can be processed all at once.  Returns the constraint index
** or -1; *pbIn says whether it is an IN. */
static int dd_find_eq(sqlite3_index_info *pInfo, int iCol, int *pbIn) {
  int i, iIn = -1;
  *pbIn = 0;
  for(i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    if(!c->usable || c->iColumn != iCol ||
       c->op != SQLITE_INDEX_CONSTRAINT_EQ || !dd_binary(pInfo, i))
      continue;
    if(sqlite3_vtab_in(pInfo, i, -1)) {
      if(iIn < 0)
        iIn = i;
    } else {
      return i;
    }
  }
  if(iIn >= 0)
    *pbIn = 1;
  return iIn;
}

/* Estimate rows of one partition given the sort-key constraints. */
UNITTEST double dd_partition_rows(const dd_plan *pl) {
  int i, bLo = 0, bHi = 0, bPre = 0;
  for(i = 0; i < pl->nSk; i++) {
    switch(pl->aSkKind[i]) {
    case DD_SK_EQ: return 2;
    case DD_SK_GT:
    case DD_SK_GE: bLo = 1; break;
    case DD_SK_LT:
    case DD_SK_LE: bHi = 1; break;
    default: bPre = 1;
    }
  }
  if((bLo && bHi) || (bPre && (bLo || bHi)))
    return DD_PARTITION_ROWS / 8;
  if(bPre)
    return DD_PARTITION_ROWS / 5;
  if(bLo || bHi)
    return DD_PARTITION_ROWS / 3;
  return DD_PARTITION_ROWS;
}

/* Can a Query on path pp return every row the WHERE may match?  An item
** is in an index only when it has the index's sort key: the WHERE must
** exclude the others, by the gate on the partition-key column (see
** dd_column.mGate) or by a constraint on the sort key that NULL fails.  A
** sort key that is a key of the table is on every item. */
static int dd_membership_ok(dd_vtab *p, sqlite3_index_info *pInfo,
                            const dd_path *pp) {
  int i;
  if(pp->iSk < 0 || dd_is_table_key(p, pp->iSk) ||
     (p->aCol[pp->iPk].mGate & ((sqlite3_uint64)1 << pp->iSk)))
    return 1;
  for(i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    if(c->usable && c->iColumn == pp->iSk &&
       (dd_sk_kind(c) != DD_SK_NONE ||
        c->op == SQLITE_INDEX_CONSTRAINT_ISNOTNULL))
      return 1;
  }
  return 0;
}

/* Does every item a Query on pp returns pass the gate of its partition
** key column (the gate asks for no more than pp's own key attributes)? */
static int dd_gate_within(const dd_vtab *p, const dd_path *pp) {
  return (p->aCol[pp->iPk].mGate & ~pp->mKey) == 0;
}

/* The columns a statement needs read: those it uses (colUsed) and the
** gates of those (a column's value depends on its gate's attributes).
** colUsed is cut to the table's columns (the key columns, item, keys,
** item_raw): an UPDATE's has every bit set, also those of columns the
** table does not have, and no path "covers" those, so every UPDATE read
** its rows again by key (DD_FETCH) after the Query that found them. */
static sqlite3_uint64 dd_cols_needed(const dd_vtab *p, sqlite3_uint64 mUsed) {
  int nAll = p->nCol + 3;
  sqlite3_uint64 m =
      nAll >= 64 ? mUsed : mUsed & (((sqlite3_uint64)1 << nAll) - 1);
  int c;
  for(c = 0; c < p->nCol && c < 64; c++)
    if(mUsed & ((sqlite3_uint64)1 << c))
      m |= p->aCol[c].mGate;
  return m;
}

/* Fill pl with the best Query (or GetItem/BatchGetItem on path 0) on path
** iPath.  mUsed: the columns the statement needs (dd_cols_needed).
** Returns 0 when the path cannot be used. */
static int dd_plan_path(dd_vtab *p, sqlite3_index_info *pInfo, int iPath,
                        sqlite3_uint64 mUsed, dd_plan *pl) {
  const dd_path *pp = &p->aPath[iPath];
  int i, bIn, iSkEq = -1, bSkIn = 0;
  if(dd_path_multi(pp))
    return dd_plan_multi(p, pInfo, iPath, mUsed, pl);
  memset(pl, 0, sizeof(*pl));
  pl->iPath = iPath;
  pl->iSkCol = pp->iSk;
  pl->iPkCons = dd_find_eq(pInfo, pp->iPk, &bIn);
  if(pl->iPkCons < 0)
    return 0;
  /* an index holds only items that have its sort key: when the WHERE
  ** asks for items without it, the index has none of them */
  for(i = 0; i < pInfo->nConstraint && iPath > 0 && pp->iSk >= 0; i++)
    if(pInfo->aConstraint[i].usable &&
       pInfo->aConstraint[i].iColumn == pp->iSk &&
       pInfo->aConstraint[i].op == SQLITE_INDEX_CONSTRAINT_ISNULL)
      return 0;
  if(!dd_membership_ok(p, pInfo, pp))
    return 0;
  pl->bPkIn = bIn;
  if(pp->iSk >= 0)
    iSkEq = dd_find_eq(pInfo, pp->iSk, &bSkIn);
  if(iPath == 0 && (pp->iSk < 0 || iSkEq >= 0)) {
    /* the full primary key: GetItem, or BatchGetItem for IN lists */
    if(pp->iSk >= 0) {
      pl->nSk = 1;
      pl->aSkCons[0] = iSkEq;
      pl->aSkKind[0] = DD_SK_EQ;
      pl->bSkIn = bSkIn;
    }
    pl->op = (pl->bPkIn || pl->bSkIn) ? DD_OP_BATCH : DD_OP_GET;
    pl->rows = pl->op == DD_OP_GET ? 1 : 5;
    pl->cost = pl->rows;
    return 1;
  }
  pl->op = DD_OP_QUERY;
  if(pp->iSk >= 0 && iSkEq >= 0 && !bSkIn) {
    pl->nSk = 1;
    pl->aSkCons[0] = iSkEq;
    pl->aSkKind[0] = DD_SK_EQ;
  } else if(pp->iSk >= 0) {
    for(i = 0; i < pInfo->nConstraint && pl->nSk < DD_MAX_SK; i++) {
      const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
      int k = dd_sk_kind(c);
      if(!c->usable || c->iColumn != pp->iSk || k == DD_SK_NONE ||
         k == DD_SK_EQ || !dd_binary(pInfo, i))
        continue;
      if((k == DD_SK_LIKE || k == DD_SK_GLOB || k == DD_SK_BEGINS) &&
         p->aCol[pp->iSk].type != DDB_S)
        continue; /* prefixes only make sense for strings */
      pl->aSkCons[pl->nSk] = i;
      pl->aSkKind[pl->nSk] = k;
      pl->nSk++;
    }
  }
  pl->rows = dd_partition_rows(pl) * (pl->bPkIn ? 5 : 1);
  pl->cost = 5 + pl->rows;
  if(iPath > 0)
    pl->cost += 1; /* on a tie, prefer the table: reads are consistent-able */
  if((mUsed & ~pp->mCover) != 0)
    pl->cost = pl->cost * 2 + 10; /* rows must be fetched again by key */
  return 1;
}

/* Is every WHERE term a usable constraint that the plan passes on? */
static int dd_all_used(sqlite3_index_info *pInfo) {
  int i;
  for(i = 0; i < pInfo->nConstraint; i++) {
    int op = pInfo->aConstraint[i].op;
    if(op == SQLITE_INDEX_CONSTRAINT_LIMIT ||
       op == SQLITE_INDEX_CONSTRAINT_OFFSET)
      continue;
    if(!pInfo->aConstraint[i].usable ||
       pInfo->aConstraintUsage[i].argvIndex <= 0)
      return 0;
  }
  return 1;
}

/* Can the plan deliver rows in the ORDER BY's order?  Sets *pbDesc. */
UNITTEST int dd_order_ok(dd_vtab *p, sqlite3_index_info *pInfo,
                         const dd_plan *pl, int *pbDesc) {
  const dd_path *pp = &p->aPath[pl->iPath];
  int i, dir = -1;
  *pbDesc = 0;
  if(pInfo->nOrderBy == 0)
    return 1;
  if(dd_path_multi(pp))
    return pl->op == DD_OP_QUERY && dd_multi_order_ok(p, pInfo, pl, pbDesc);
  if(pl->op == DD_OP_GET && (pp->iSk < 0 || p->aCol[pp->iSk].type != DDB_N))
    return 1; /* at most one row */
  /* (an N sort key's = may be a REAL that stands for several numbers:
  ** then xFilter runs the GetItem as a Query, in this order) */
  if((pl->op != DD_OP_QUERY && pl->op != DD_OP_GET) || pl->bPkIn)
    return 0;
  for(i = 0; i < pInfo->nOrderBy; i++) {
    const struct sqlite3_index_orderby *o = &pInfo->aOrderBy[i];
    if(o->iColumn == pp->iPk)
      continue; /* constant within the partition */
    if(o->iColumn != pp->iSk || pp->iSk < 0)
      return 0;
    if(dir >= 0 && dir != o->desc)
      return 0;
    dir = o->desc;
  }
  *pbDesc = dir == 1;
  return 1;
}

/* The plan of keys = ? (the hidden column keys, or the table-valued form
** shop(?)): BatchGetItem of every key of the list, the only argument.
** The constraint is omitted: the column reads back the list it was given.
** Returns SQLITE_NOTFOUND when the WHERE has no keys = ?, SQLITE_CONSTRAINT
** when it has one SQLite cannot give yet (a join's later table: SQLite
** then tries another order; without the list the hidden column would read
** NULL and match nothing), else SQLITE_OK with pInfo filled. */
static int dd_plan_keys(dd_vtab *p, sqlite3_index_info *pInfo) {
  dd_plancode pc;
  char zName[32];
  int i, iKeys = -1, bUnusable = 0;
  for(i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    if(c->iColumn != DD_COL_KEYS(p) || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
      continue;
    if(!c->usable)
      bUnusable = 1;
    else if(iKeys < 0)
      iKeys = i;
  }
  if(iKeys < 0)
    return bUnusable ? SQLITE_CONSTRAINT : SQLITE_NOTFOUND;
  memset(&pc, 0, sizeof(pc));
  memcpy(pc.zMagic, DD_PLAN_MAGIC, sizeof(pc.zMagic));
  pInfo->aConstraintUsage[iKeys].argvIndex =
      dd_plan_arg(&pc, DD_ARG_KEYS, 0, -1);
  pInfo->aConstraintUsage[iKeys].omit = 1;
  pInfo->idxNum = DD_OP_BATCH | DD_KEYS;
  dd_extra_col_name(p, "keys", zName);
  pInfo->idxStr =
      dd_plan_encode(sqlite3_mprintf("BatchGetItem (%s = ?)", zName), &pc);
  pInfo->needToFreeIdxStr = 1;
  if(!pInfo->idxStr)
    return SQLITE_NOMEM;
  pInfo->estimatedCost = 2;
  pInfo->estimatedRows = 100;
  return SQLITE_OK;
}

/* The plan of a WHERE no row can satisfy: a key attribute of the table
** IS NULL (every item has it), or a comparison whose value SQLite knows
** now (a literal: sqlite3_vtab_rhs_value) that no row passes
** (dd_never_true: GB = '' on a binary key, SK = 1e-131).  Such a plan
** makes no call and resolves no credentials (xFilter returns at once);
** values known only at xFilter (a parameter) cost no call either, as
** xFilter finds them (dynamodbFilter), but EXPLAIN cannot show it.
** Returns SQLITE_OK with pInfo filled, SQLITE_NOTFOUND when the WHERE
** may match, SQLITE_NOMEM. */
static int dd_plan_none(dd_vtab *p, sqlite3_index_info *pInfo) {
  dd_plancode pc;
  int i, iCol = -1, kind = -1;
  for(i = 0; i < pInfo->nConstraint && iCol < 0; i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    sqlite3_value *pVal = NULL;
    int k = dd_sk_kind(c);
    if(!c->usable || c->iColumn < 0 || c->iColumn >= p->nCol)
      continue;
    if(c->op == SQLITE_INDEX_CONSTRAINT_ISNULL) {
      if(dd_is_table_key(p, c->iColumn))
        iCol = c->iColumn;
      continue;
    }
    if(k == DD_SK_NONE || sqlite3_vtab_rhs_value(pInfo, i, &pVal) || !pVal ||
       (sqlite3_value_type(pVal) != SQLITE_NULL && !dd_binary(pInfo, i)))
      continue;
    if(dd_never_true(&p->aCol[c->iColumn], k, pVal)) {
      iCol = c->iColumn;
      kind = k;
    }
  }
  if(iCol < 0)
    return SQLITE_NOTFOUND;
  memset(&pc, 0, sizeof(pc));
  memcpy(pc.zMagic, DD_PLAN_MAGIC, sizeof(pc.zMagic));
  pInfo->idxNum = DD_OP_SCAN | DD_NONE;
  pInfo->idxStr = dd_plan_encode(dd_plan_none_str(p, iCol, kind), &pc);
  pInfo->needToFreeIdxStr = 1;
  if(!pInfo->idxStr)
    return SQLITE_NOMEM;
  pInfo->estimatedCost = 0.5;
  pInfo->estimatedRows = 1;
  pInfo->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
  return SQLITE_OK;
}

/* Do the key values of plan pl come from another table: is the value of
** its partition-key constraint, or of a sort-key constraint, not known
** while planning?  SQLite shows xBestIndex a literal's value
** (sqlite3_vtab_rhs_value) but not a column of another table, a
** correlated outer reference or a bound parameter: the call then runs
** once per row of the loop outside it (for a bound parameter, once per
** execution: SQLite does not tell the two apart here).  An IN list is read
** whole by one xFilter and does not count. */
static int dd_per_outer_row(sqlite3_index_info *pInfo, const dd_plan *pl) {
  sqlite3_value *v;
  int i;
  if(pl->op == DD_OP_SCAN)
    return 0;
  if(!pl->bPkIn &&
     sqlite3_vtab_rhs_value(pInfo, pl->iPkCons, &v) == SQLITE_NOTFOUND)
    return 1;
  for(i = 0; i < pl->nSk; i++)
    if(!pl->bSkIn &&
       sqlite3_vtab_rhs_value(pInfo, pl->aSkCons[i], &v) == SQLITE_NOTFOUND)
      return 1;
  for(i = 0; i < pl->nEq; i++)
    if(sqlite3_vtab_rhs_value(pInfo, pl->aEqCons[i], &v) == SQLITE_NOTFOUND)
      return 1;
  return 0;
}

/* ------------------------------------------------------------------------
** The phases of xBestIndex
*/

/* A plan being built by dynamodbBestIndex: the call chosen, what it
** hands xFilter (idxNum, the machine half of idxStr, the argument blocks
** in argv order: ext/PLAN.md), and what the phases tell each other. */
typedef struct dd_build {
  dd_vtab *p;
  sqlite3_index_info *pInfo;
  sqlite3_uint64 mUsed; /* the columns the statement needs (dd_cols_needed) */
  dd_plan best;         /* the call */
  dd_extra extra;       /* its FILTER, CHECK, PROJECT, COUNT, FETCH */
  dd_plancode pc;       /* the argument blocks so far */
  int idxNum;
  int bOrder; /* the call delivers the ORDER BY's order (dd_order_ok) */
  int bDesc;  /* ... read descending */
} dd_build;

/* The cost of the cheapest keyed call a join order SQLite is weighing
** would allow: every constraint taken as usable, as it is when the tables
** its values come from are put outside this one (a join on the key: its
** call runs once per outer row).  0 when no such call exists, or when no
** constraint is unusable now (then the plans of this call are all). */
static double dd_join_key_cost(dd_build *b) {
  sqlite3_index_info *pInfo = b->pInfo;
  unsigned char *aWas;
  dd_plan cand;
  double best = 0;
  int i, nOff = 0;
  for(i = 0; i < pInfo->nConstraint; i++)
    nOff += !pInfo->aConstraint[i].usable;
  if(nOff == 0)
    return 0;
  aWas = sqlite3_malloc64((sqlite3_uint64)pInfo->nConstraint);
  if(!aWas)
    return 0; /* no penalty: a costlier plan, never a wrong one */
  for(i = 0; i < pInfo->nConstraint; i++) {
    aWas[i] = pInfo->aConstraint[i].usable;
    pInfo->aConstraint[i].usable = 1;
  }
  for(i = 0; i < b->p->nPath; i++)
    if(dd_plan_path(b->p, pInfo, i, b->mUsed, &cand) &&
       (best == 0 || cand.cost < best))
      best = cand.cost;
  for(i = 0; i < pInfo->nConstraint; i++)
    pInfo->aConstraint[i].usable = aWas[i];
  sqlite3_free(aWas);
  return best;
}

/* Choose the call: the cheapest keyed plan of every path (dd_plan_path),
** else the Scan, into b->best.  A Scan that a join on the key could
** replace costs as though the keyed call ran once for each of
** DD_JOIN_OUTER_ROWS outer rows ("The query plan" at the end of the
** file says why). */
static void dd_choose_path(dd_build *b) {
  dd_vtab *p = b->p;
  dd_plan cand;
  double scanRows = p->pDesc->item_count > DD_SCAN_MIN_ROWS
                        ? (double)p->pDesc->item_count
                        : DD_SCAN_MIN_ROWS;
  double keyCost;
  int i;
  memset(&b->best, 0, sizeof(b->best));
  b->best.op = DD_OP_SCAN;
  b->best.rows = scanRows;
  b->best.cost = p->bScanDeny ? 1e300 : scanRows * 10;
  for(i = 0; i < p->nPath; i++)
    if(dd_plan_path(p, b->pInfo, i, b->mUsed, &cand) &&
       cand.cost < b->best.cost)
      b->best = cand;
  keyCost = b->best.op == DD_OP_SCAN ? dd_join_key_cost(b) : 0;
  if(keyCost > 0 && !p->bScanDeny)
    b->best.cost += DD_JOIN_OUTER_ROWS * keyCost;
}

/* Bind the key arguments of a keyed call (none for a Scan): the
** partition key, then the sort-key constraints, each an argument block,
** their kinds and IN flags in idxNum, omitted from SQLite's check as
** ext/PLAN.md ("omit") says. */
static void dd_bind_keys(dd_build *b) {
  dd_vtab *p = b->p;
  sqlite3_index_info *pInfo = b->pInfo;
  const dd_plan *best = &b->best;
  const dd_path *pp = &p->aPath[best->iPath];
  int i;
  b->idxNum = DD_IDX_MAKE(best->op, best->iPath);
  if(best->op == DD_OP_SCAN)
    return;
  pInfo->aConstraintUsage[best->iPkCons].argvIndex =
      dd_plan_arg(&b->pc, DD_ARG_PK, DD_SK_EQ, pp->iPk);
  /* PK = ? is enforced exactly by every keyed call (values convert as
  ** the column's affinity would), so SQLite need not check it again */
  pInfo->aConstraintUsage[best->iPkCons].omit =
      !best->bPkIn && dd_gate_within(p, pp);
  if(best->bPkIn) {
    sqlite3_vtab_in(pInfo, best->iPkCons, 1);
    b->idxNum |= DD_PK_IN;
  }
  /* a multi-attribute key's other = (multikey.c), checked again by
  ** SQLite: the key condition selects exactly those items, and SQLite
  ** only confirms it */
  for(i = 0; i < best->nEq; i++)
    pInfo->aConstraintUsage[best->aEqCons[i]].argvIndex =
        dd_plan_arg(&b->pc, DD_ARG_KEQ, DD_SK_EQ, best->aEqCol[i]);
  for(i = 0; i < best->nSk; i++) {
    pInfo->aConstraintUsage[best->aSkCons[i]].argvIndex =
        dd_plan_arg(&b->pc, DD_ARG_SK, best->aSkKind[i], best->iSkCol);
    /* likewise SK = ?; and a Query's ranges on an N sort key, which
    ** xFilter makes exact (the request, then the cursor's checks) */
    pInfo->aConstraintUsage[best->aSkCons[i]].omit =
        (best->aSkKind[i] == DD_SK_EQ && !best->bSkIn) ||
        (best->op == DD_OP_QUERY && p->aCol[best->iSkCol].type == DDB_N);
    b->idxNum |= DD_IDX_SK_SET(best->aSkKind[i], i);
  }
  if(best->bSkIn) {
    sqlite3_vtab_in(pInfo, best->aSkCons[0], 1);
    b->idxNum |= DD_SK_IN;
  }
}

/* May a Query or Scan push FILTER, PROJECT and COUNT?  Not when its rows
** are read again by key (FETCH), nor a Query the query cache may serve
** later statements from: that needs whole items (a Scan always pushes: a
** full table is what the cache must not be flushed with). */
static int dd_may_push(const dd_build *b) {
  const dd_plan *best = &b->best;
  int bReuse = best->op == DD_OP_QUERY && b->p->pol.query_ttl > 0 &&
               !b->p->pol.consistent;
  return (best->op == DD_OP_QUERY || best->op == DD_OP_SCAN) &&
         !b->extra.bFetch && !bReuse;
}

/* Is column c a key attribute of the Query's index, which a FILTER may
** not name?  The path's partition and sort key; of a multi-attribute key,
** every attribute of it, also those the key condition leaves out
** (DynamoDB Local 3.3.1: "Filter Expression can only contain non-primary
** key attributes: Primary key attribute: r2"): SQLite checks those. */
static int dd_in_keycond(const dd_path *pp, int c) {
  if(dd_path_multi(pp))
    return c < 64 && ((pp->mKey >> c) & 1);
  return c == pp->iPk || c == pp->iSk;
}

/* FILTER: the constraints on key columns the key condition does not use,
** DD_MAX_FILTER at the most, each an argument block (N ones omitted). */
static void dd_bind_filters(dd_build *b) {
  dd_vtab *p = b->p;
  sqlite3_index_info *pInfo = b->pInfo;
  const dd_path *pp = &p->aPath[b->best.iPath];
  dd_extra *x = &b->extra;
  int i;
  if(!dd_may_push(b))
    return;
  for(i = 0; i < pInfo->nConstraint && x->nFilter < DD_MAX_FILTER; i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    int k = dd_sk_kind(c);
    if(!c->usable || c->iColumn < 0 || c->iColumn >= p->nCol ||
       pInfo->aConstraintUsage[i].argvIndex > 0 ||
       (b->best.op == DD_OP_QUERY && dd_in_keycond(pp, c->iColumn)))
      continue;
    /* LIKE 'p%' goes as its prefix (filter.c: dd_like_filter); GLOB
    ** with a prefix SQLite turns into >= and < itself */
    if(k == DD_SK_NONE || k == DD_SK_GLOB || !dd_binary(pInfo, i) ||
       (k == DD_SK_EQ && sqlite3_vtab_in(pInfo, i, -1)) ||
       ((k == DD_SK_BEGINS || k == DD_SK_LIKE) &&
        p->aCol[c->iColumn].type != DDB_S))
      continue;
    pInfo->aConstraintUsage[i].argvIndex =
        dd_plan_arg(&b->pc, DD_ARG_FILTER, k, c->iColumn);
    /* N: xFilter checks it exactly on each row */
    pInfo->aConstraintUsage[i].omit = p->aCol[c->iColumn].type == DDB_N;
    x->aFilterCol[x->nFilter] = c->iColumn;
    x->aFilterKind[x->nFilter] = k;
    x->nFilter++;
  }
}

/* PROJECT: only the columns used (and the table's keys, for rowids) when
** neither item nor item_raw is; COUNT: when every column used has one
** value known from an equality the call enforces.  Into b->extra. */
static void dd_choose_projection(dd_build *b) {
  dd_vtab *p = b->p;
  const dd_plan *best = &b->best;
  const dd_path *pp = &p->aPath[best->iPath];
  dd_extra *x = &b->extra;
  sqlite3_uint64 mKnown = 0;
  int i;
  if(!dd_may_push(b) || (b->pInfo->colUsed & DD_COLS_BEYOND(p->nCol)) != 0)
    return;
  x->mProj = b->mUsed | ((sqlite3_uint64)1 << p->aPath[0].iPk);
  if(p->aPath[0].iSk >= 0)
    x->mProj |= (sqlite3_uint64)1 << p->aPath[0].iSk;
  /* a gated column is known only when the call enforces its gate: the
  ** Query's own partition key, gated by no more than the index's sort
  ** key (every item of the index has it) */
  if(best->op == DD_OP_QUERY) {
    if(dd_gate_within(p, pp))
      mKnown |= (sqlite3_uint64)1 << pp->iPk;
    if(best->nSk == 1 && best->aSkKind[0] == DD_SK_EQ && !dd_path_multi(pp) &&
       p->aCol[pp->iSk].mGate == 0)
      mKnown |= (sqlite3_uint64)1 << pp->iSk;
    for(i = 0; i < best->nEq; i++) /* a multi-attribute key's other = */
      if(best->aEqCol[i] < 64 &&
         (p->aCol[best->aEqCol[i]].mGate & ~pp->mKey) == 0)
        mKnown |= (sqlite3_uint64)1 << best->aEqCol[i];
  }
  for(i = 0; i < x->nFilter; i++)
    if(x->aFilterKind[i] == DD_SK_EQ && p->aCol[x->aFilterCol[i]].mGate == 0)
      mKnown |= (sqlite3_uint64)1 << x->aFilterCol[i];
  x->bCount = (b->pInfo->colUsed & ~mKnown) == 0;
}

/* Does the cursor sort the rows of an ORDER BY the call does not deliver
** (dd_order_ok said no)?  When it names an N column and only declared
** columns (at most DD_MAX_SORT): SQLite would put the numbers of more
** than 15 digits, which a column shows as TEXT, after every other
** number; the cursor orders them by value, every digit counted. */
static int dd_sort_ok(const dd_vtab *p, const sqlite3_index_info *pInfo) {
  int i, bN = 0;
  if(pInfo->nOrderBy > DD_MAX_SORT)
    return 0;
  for(i = 0; i < pInfo->nOrderBy; i++) {
    int c = pInfo->aOrderBy[i].iColumn;
    if(c < 0 || c >= p->nCol)
      return 0;
    bN |= p->aCol[c].type == DDB_N;
  }
  return bN;
}

/* ORDER BY: consumed when the call delivers its order (b->bOrder), read
** descending when it asks (DD_DESC); or when it names an N column the
** cursor sorts by (dd_sort_ok; then no LIMIT goes to the call). */
static void dd_bind_order(dd_build *b) {
  sqlite3_index_info *pInfo = b->pInfo;
  int i;
  b->bOrder = dd_order_ok(b->p, pInfo, &b->best, &b->bDesc);
  if(b->bOrder && pInfo->nOrderBy > 0) {
    pInfo->orderByConsumed = 1;
    if(b->bDesc)
      b->idxNum |= DD_DESC;
  } else if(!b->bOrder && !b->extra.bCount && dd_sort_ok(b->p, pInfo)) {
    pInfo->orderByConsumed = 1;
    for(i = 0; i < pInfo->nOrderBy; i++) {
      b->extra.aSortCol[i] = b->pc.aSort[i].col =
          (short)pInfo->aOrderBy[i].iColumn;
      b->extra.aSortDesc[i] = b->pc.aSort[i].desc =
          pInfo->aOrderBy[i].desc != 0;
    }
    b->extra.nSort = b->pc.nSort = pInfo->nOrderBy;
  }
}

/* Can the call's Limit count only rows SQLite keeps, its sort-key
** condition selecting exactly the WHERE's rows?  Not with LIKE or GLOB (a
** superset: LIKE ignores case, a pattern may hold more than a prefix), nor
** a prefix with other bounds; nor two bounds on an index whose near end
** (the first in the read's order, bDesc) is open: DynamoDB's BETWEEN is
** closed, and an index's sort keys repeat, so that end may add any number
** of items before the rows.  On the table, whose sort keys are unique in a
** partition, it adds one item at the most, which the Limit counts; a far
** end's items come after the rows (dd_query_limit). */
static int dd_limit_exact(const dd_plan *best, int bDesc) {
  int i, bLo = 0, bHi = 0, bLoOpen = 0, bHiOpen = 0, bPrefix = 0;
  for(i = 0; i < best->nSk; i++) {
    switch(best->aSkKind[i]) {
    case DD_SK_EQ: break;
    case DD_SK_GT: bLoOpen = bLo = 1; break;
    case DD_SK_GE: bLo = 1; break;
    case DD_SK_LT: bHiOpen = bHi = 1; break;
    case DD_SK_LE: bHi = 1; break;
    case DD_SK_BEGINS: bPrefix += best->nSk == 1 ? 1 : 2; break;
    default: bPrefix = 2; /* LIKE, GLOB */
    }
  }
  return bPrefix < 2 &&
         !(bLo && bHi && best->iPath != 0 && (bDesc ? bHiOpen : bLoOpen));
}

/* LIMIT and OFFSET: arguments only when nothing is left unpassed, the
** order is the call's, the Limit counts exactly (dd_limit_exact), and no
** row is read again by key. */
static void dd_bind_limit(dd_build *b) {
  dd_vtab *p = b->p;
  sqlite3_index_info *pInfo = b->pInfo;
  int i, iLimit = -1, iOffset = -1;
  for(i = 0; i < pInfo->nConstraint; i++) {
    if(!pInfo->aConstraint[i].usable)
      continue;
    if(pInfo->aConstraint[i].op == SQLITE_INDEX_CONSTRAINT_LIMIT)
      iLimit = i;
    if(pInfo->aConstraint[i].op == SQLITE_INDEX_CONSTRAINT_OFFSET)
      iOffset = i;
  }
  if(iLimit < 0 || !b->bOrder || b->best.op == DD_OP_GET ||
     !dd_limit_exact(&b->best, b->bDesc) ||
     (b->mUsed & ~p->aPath[b->best.iPath].mCover) != 0 || !dd_all_used(pInfo))
    return;
  pInfo->aConstraintUsage[iLimit].argvIndex =
      dd_plan_arg(&b->pc, DD_ARG_LIMIT, 0, -1);
  b->idxNum |= DD_LIMIT;
  if(iOffset >= 0) {
    pInfo->aConstraintUsage[iOffset].argvIndex =
        dd_plan_arg(&b->pc, DD_ARG_OFFSET, 0, -1);
    b->idxNum |= DD_OFFSET;
  }
}

/* CHECK: the comparisons on columns no FILTER took (a GetItem's, or a
** Query's that the query cache or a fetch by key keeps from filtering),
** for xFilter to judge; never shown in the plan (nothing is sent). */
static void dd_bind_checks(dd_build *b) {
  dd_vtab *p = b->p;
  sqlite3_index_info *pInfo = b->pInfo;
  dd_extra *x = &b->extra;
  int i;
  for(i = 0; i < pInfo->nConstraint && x->nFilter + x->nCheck < DD_MAX_FILTER;
      i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    int k = dd_sk_kind(c);
    if(!c->usable || c->iColumn < 0 || c->iColumn >= p->nCol ||
       pInfo->aConstraintUsage[i].argvIndex > 0 || k < DD_SK_EQ ||
       k > DD_SK_LE || !dd_binary(pInfo, i) ||
       (k == DD_SK_EQ && sqlite3_vtab_in(pInfo, i, -1)))
      continue;
    pInfo->aConstraintUsage[i].argvIndex =
        dd_plan_arg(&b->pc, DD_ARG_CHECK, k, c->iColumn);
    pInfo->aConstraintUsage[i].omit = p->aCol[c->iColumn].type == DDB_N;
    x->aCheckCol[x->nCheck] = c->iColumn;
    x->aCheckKind[x->nCheck++] = k;
  }
}

/* Hand the plan to SQLite: idxNum, idxStr (the text for people, "per
** outer row" when it runs once per row outside it, then the machine
** half), the cost and rows.  Returns SQLITE_OK or SQLITE_NOMEM. */
static int dd_plan_finish(dd_build *b) {
  sqlite3_index_info *pInfo = b->pInfo;
  char *zText;
  if(b->extra.bFetch)
    b->idxNum |= DD_FETCH;
  pInfo->idxNum = b->idxNum;
  b->pc.mProj = b->extra.bCount ? 0 : b->extra.mProj;
  b->pc.bCount = b->extra.bCount;
  b->pc.mUsed = b->mUsed;
  zText = dd_plan_str(b->p, &b->best, &b->extra,
                      b->bDesc && pInfo->orderByConsumed,
                      (b->idxNum & DD_LIMIT) != 0);
  if(zText && dd_per_outer_row(pInfo, &b->best)) {
    char *z = sqlite3_mprintf("%s per outer row", zText);
    sqlite3_free(zText);
    zText = z;
  }
  pInfo->idxStr = dd_plan_encode(zText, &b->pc);
  pInfo->needToFreeIdxStr = 1;
  if(!pInfo->idxStr)
    return SQLITE_NOMEM;
  pInfo->estimatedCost = b->best.cost;
  pInfo->estimatedRows = (sqlite3_int64)b->best.rows;
  /* (not on an N sort key: its = may be a REAL that stands for several
  ** numbers, a Query then: dd_filter_bind_keys) */
  if(b->best.op == DD_OP_GET &&
     (b->p->aPath[0].iSk < 0 || b->p->aCol[b->p->aPath[0].iSk].type != DDB_N))
    pInfo->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
  return SQLITE_OK;
}

/* ------------------------------------------------------------------------
** The query plan
**
** xBestIndex chooses one DynamoDB call and hands it to xFilter: what
** idxNum, idxStr and argv carry, and which constraints SQLite checks
** again (omit), is ext/PLAN.md, the one statement of that contract.
**
** The choice, cheapest first (estimatedCost):
**
**   GetItem       table PK = ? AND table SK = ?                 cost 1
**   BatchGetItem  the same with IN on either                    cost 5
**   Query         PK = ? (or IN) on the table or an index,
**                 sort-key conditions narrowing it further      cost 5..100
**                 (an index costs a little more than the table, and an
**                 index whose projection lacks a used column costs
**                 double: its rows are fetched again by key)
**   Scan          everything else                               cost rows*10
**                 (+ DD_JOIN_OUTER_ROWS x the keyed call's cost when a
**                 join order SQLite weighs could key this table)
**
** Why these numbers, and what SQLite does with them in a join: ext/PLAN.md
** ("Costs"), the one statement of the cost model.
**
** keys = ? (the hidden column given a JSON key list) wins over all of
** these whenever SQLite can give its value (dd_plan_keys): BatchGetItem of
** the list, cost 2.  A WHERE no row can satisfy wins over everything
** (dd_plan_none): no call.
**
** The plan for people ends in "per outer row" when its key values are
** not known while planning (dd_per_outer_row): a join's inner table, a
** correlated subquery, whose call runs once per row outside it.
**
** Only constraints with BINARY collation are pushed.  LIKE on a sort key
** becomes the range it implies in binary order ([upper(prefix),
** successor(lower(prefix))), a superset of the case-insensitive
** matches); GLOB 'p*' and begins_with(SK, 'p') become begins_with.  LIMIT
** is pushed only when every WHERE term is a constraint of this plan and
** its Limit counts only rows SQLite keeps (dd_limit_exact), and it is used
** (xFilter: dd_filter_limit, dd_query_limit) only when the call enforces
** each exactly, or sends a closed end for an open one.  With
** scan=deny a Scan costs 1e300 and xFilter refuses to run it, naming the
** key columns that would avoid it.
*/
/* xBestIndex: the cheapest correct DynamoDB call (see "The query plan"
** above; what it hands xFilter: ext/PLAN.md).  Returns SQLITE_OK with
** pInfo filled, SQLITE_CONSTRAINT for a keys = ? SQLite cannot give yet,
** SQLITE_ERROR for a table that cannot be used, SQLITE_NOMEM. */
int dynamodbBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo) {
  dd_vtab *p = (dd_vtab *)pVtab;
  dd_build b;
  int rc;

  if(p->zDefer) {
    /* bad options or no stored description: said at the first use */
    dd_error(p, "%s", p->zDefer);
    return SQLITE_ERROR;
  }
  /* a WHERE no row can satisfy: no call at all */
  rc = dd_plan_none(p, pInfo);
  if(rc != SQLITE_NOTFOUND)
    return rc;
  /* keys = ?: the whole key list in one BatchGetItem plan */
  rc = dd_plan_keys(p, pInfo);
  if(rc != SQLITE_NOTFOUND)
    return rc;

  memset(&b, 0, sizeof(b));
  b.p = p;
  b.pInfo = pInfo;
  b.mUsed = dd_cols_needed(p, pInfo->colUsed);
  memcpy(b.pc.zMagic, DD_PLAN_MAGIC, sizeof(b.pc.zMagic));
  dd_choose_path(&b);
  b.extra.bFetch = b.best.op == DD_OP_QUERY &&
                   (b.mUsed & ~p->aPath[b.best.iPath].mCover) != 0;
  /* the arguments, in ext/PLAN.md's order */
  dd_bind_keys(&b);
  dd_bind_filters(&b);
  dd_choose_projection(&b);
  dd_bind_order(&b);
  dd_bind_limit(&b);
  dd_bind_checks(&b);
  return dd_plan_finish(&b);
}
