/*
** plancodec.c -- the plan as idxStr: the text EXPLAIN QUERY PLAN shows,
** and the machine half xFilter reads (see ext/PLAN.md).
*/
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "dd_ext.h"
#include "multikey.h"

/* Write the plan for people into idxStr. */

/* Append attribute or index name z to s as the plan writes names: bare
** when it is an identifier, else in double quotes with quotes doubled, as
** dd_shown() shows it (the name is DescribeTable's). */
static void dd_name(sqlite3_str *s, const char *z) {
  int i, bBare = z[0] != 0 && !(z[0] >= '0' && z[0] <= '9');
  char *zShown;
  for(i = 0; z[i] && bBare; i++)
    bBare = (z[i] >= 'a' && z[i] <= 'z') || (z[i] >= 'A' && z[i] <= 'Z') ||
            (z[i] >= '0' && z[i] <= '9') || z[i] == '_';
  if(bBare) {
    sqlite3_str_appendall(s, z);
    return;
  }
  zShown = dd_shown(z);
  if(!zShown) {
    sqlite3_str_appendall(s, "?"); /* out of memory: so is s, then */
    return;
  }
  sqlite3_str_appendchar(s, 1, '"');
  for(i = 0; zShown[i]; i++) {
    if(zShown[i] == '"')
      sqlite3_str_appendchar(s, 1, '"');
    sqlite3_str_appendchar(s, 1, zShown[i]);
  }
  sqlite3_str_appendchar(s, 1, '"');
  sqlite3_free(zShown);
}

static const char *const azOp[] = {"", "=", ">", ">=", "<", "<="};

/* Append the call and its key condition to s: "Query GSI1 (PK = ? AND SK
** BETWEEN ? AND ?)", "GetItem (PK = ? AND SK = ?)", "Scan". */
static void dd_str_call(sqlite3_str *s, dd_vtab *p, const dd_plan *pl) {
  const dd_path *pp = &p->aPath[pl->iPath];
  int i, nLo = 0, nHi = 0, nPre = 0, nEq = 0;
  switch(pl->op) {
  case DD_OP_SCAN: sqlite3_str_appendall(s, "Scan"); break;
  case DD_OP_GET: sqlite3_str_appendall(s, "GetItem ("); break;
  case DD_OP_BATCH: sqlite3_str_appendall(s, "BatchGetItem ("); break;
  default:
    sqlite3_str_appendall(s, "Query");
    if(pp->pIdx->name) {
      sqlite3_str_appendchar(s, 1, ' ');
      dd_name(s, pp->pIdx->name);
    }
    sqlite3_str_appendall(s, " (");
  }
  if(pl->op != DD_OP_SCAN) {
    dd_name(s, p->aCol[pp->iPk].zName);
    sqlite3_str_appendall(s, pl->bPkIn ? " IN (...)" : " = ?");
    for(i = 0; i < pl->nEq; i++) { /* a multi-attribute key's other = */
      sqlite3_str_appendall(s, " AND ");
      dd_name(s, p->aCol[pl->aEqCol[i]].zName);
      sqlite3_str_appendall(s, " = ?");
    }
    for(i = 0; i < pl->nSk; i++) {
      switch(pl->aSkKind[i]) {
      case DD_SK_EQ: nEq++; break;
      case DD_SK_GT:
      case DD_SK_GE: nLo++; break;
      case DD_SK_LT:
      case DD_SK_LE: nHi++; break;
      default: nPre++;
      }
    }
    if(pl->nSk > 0) {
      const char *zSk =
          p->aCol[dd_path_multi(pp) ? pl->iSkCol : pp->iSk].zName;
      sqlite3_str_appendall(s, " AND ");
      if(nEq) {
        dd_name(s, zSk);
        sqlite3_str_appendall(s, pl->bSkIn ? " IN (...)" : " = ?");
      } else if(nPre == 1 && nLo + nHi == 0 && pl->aSkKind[0] != DD_SK_LIKE) {
        sqlite3_str_appendall(s, "begins_with(");
        dd_name(s, zSk);
        sqlite3_str_appendall(s, ", ?)");
      } else {
        dd_name(s, zSk);
        if(nPre || (nLo && nHi))
          sqlite3_str_appendall(s, " BETWEEN ? AND ?");
        else
          sqlite3_str_appendf(s, " %s ?", azOp[pl->aSkKind[0]]);
      }
    }
    sqlite3_str_appendall(s, ")");
  }
}

/* Append the FILTER of plan x to s: " FILTER (a = ? AND ...)". */
static void dd_str_filters(sqlite3_str *s, dd_vtab *p, const dd_extra *x) {
  int i;
  if(x->nFilter) {
    sqlite3_str_appendall(s, " FILTER (");
    for(i = 0; i < x->nFilter; i++) {
      if(i)
        sqlite3_str_appendall(s, " AND ");
      if(x->aFilterKind[i] == DD_SK_BEGINS) {
        sqlite3_str_appendall(s, "begins_with(");
        dd_name(s, p->aCol[x->aFilterCol[i]].zName);
        sqlite3_str_appendall(s, ", ?)");
      } else if(x->aFilterKind[i] == DD_SK_LIKE) {
        /* sent as the prefix's begins_with, or its range (filter.c) */
        dd_name(s, p->aCol[x->aFilterCol[i]].zName);
        sqlite3_str_appendall(s, " LIKE ?");
      } else {
        dd_name(s, p->aCol[x->aFilterCol[i]].zName);
        sqlite3_str_appendf(s, " %s ?", azOp[x->aFilterKind[i]]);
      }
    }
    sqlite3_str_appendall(s, ")");
  }
}

/* Append what the plan x reads to s: " PROJECT (...)", " COUNT",
** " FETCH (BatchGetItem by PK, SK)". */
static void dd_str_reads(sqlite3_str *s, dd_vtab *p, const dd_extra *x) {
  int i;
  if(x->mProj && !x->bCount) {
    int n = 0;
    sqlite3_str_appendall(s, " PROJECT (");
    for(i = 0; i < p->nCol && i < 64; i++)
      if(x->mProj & ((sqlite3_uint64)1 << i)) {
        if(n++)
          sqlite3_str_appendall(s, ", ");
        dd_name(s, p->aCol[i].zName);
      }
    sqlite3_str_appendall(s, ")");
  }
  if(x->bCount)
    sqlite3_str_appendall(s, " COUNT");
  if(x->nSort) {
    /* ORDER BY an N column: numerically, by the cursor */
    sqlite3_str_appendall(s, " SORT (");
    for(i = 0; i < x->nSort; i++) {
      if(i)
        sqlite3_str_appendall(s, ", ");
      dd_name(s, p->aCol[x->aSortCol[i]].zName);
      if(x->aSortDesc[i])
        sqlite3_str_appendall(s, " DESC");
    }
    sqlite3_str_appendall(s, ")");
  }
  if(x->bFetch) {
    /* the path lacks a column used: each page's rows read again */
    sqlite3_str_appendall(s, " FETCH (BatchGetItem by ");
    for(i = 0; i < p->nKey; i++) {
      if(i)
        sqlite3_str_appendall(s, ", ");
      dd_name(s, p->azKey[i]);
    }
    sqlite3_str_appendall(s, ")");
  }
}

/* The plan for people, the first half of idxStr (ext/PLAN.md: its
** wording may change, nothing parses it): a new string (sqlite3_free),
** NULL when out of memory. */
char *dd_plan_str(dd_vtab *p, const dd_plan *pl, const dd_extra *x, int bDesc,
                  int bLimit) {
  sqlite3_str *s = sqlite3_str_new(0);
  dd_str_call(s, p, pl);
  dd_str_filters(s, p, x);
  dd_str_reads(s, p, x);
  if(bDesc)
    sqlite3_str_appendall(s, " DESC");
  if(bLimit)
    sqlite3_str_appendall(s, " LIMIT ?");
  return sqlite3_str_finish(s);
}

/* See dd_ext.h. */
char *dd_plan_none_str(dd_vtab *p, int iCol, int kind) {
  static const char *const azKind[] = {
      "", "= ?", "> ?", ">= ?", "< ?", "<= ?", "LIKE ?", "GLOB ?", ""};
  sqlite3_str *s = sqlite3_str_new(0);
  sqlite3_str_appendall(s, "no call (");
  if(kind == DD_SK_BEGINS) {
    sqlite3_str_appendall(s, "begins_with(");
    dd_name(s, p->aCol[iCol].zName);
    sqlite3_str_appendall(s, ", ?)");
  } else {
    dd_name(s, p->aCol[iCol].zName);
    sqlite3_str_appendf(s, " %s", kind < 0 ? "IS NULL" : azKind[kind]);
  }
  sqlite3_str_appendall(s, ": no row can match)");
  return sqlite3_str_finish(s);
}

/* The plan as xFilter reads it: the machine half of idxStr, a
** dd_plancode after the text's NUL (ext/PLAN.md, "idxStr"). */

/* Add an argument block to pc; returns its argvIndex (1-based). */
int dd_plan_arg(dd_plancode *pc, int role, int kind, int col) {
  pc->aArg[pc->nArg].role = (unsigned char)role;
  pc->aArg[pc->nArg].kind = (unsigned char)kind;
  pc->aArg[pc->nArg].col = (short)col;
  return ++pc->nArg;
}

/* Join zText (sqlite3_free()d here) and pc into one idxStr
** (sqlite3_malloc()ed); NULL when out of memory. */
char *dd_plan_encode(char *zText, const dd_plancode *pc) {
  size_t n;
  char *z;
  if(!zText)
    return NULL;
  n = strlen(zText) + 1;
  z = sqlite3_malloc64(n + sizeof(*pc));
  if(z) {
    memcpy(z, zText, n);
    memcpy(z + n, pc, sizeof(*pc));
  }
  sqlite3_free(zText);
  return z;
}

/* Read the machine half of idxStr into x for argc arguments.  Returns 0,
** or -1 when it is missing or not one dd_plan_encode wrote for this
** table. */
int dd_plan_decode(dd_vtab *p, const char *idxStr, int argc, dd_extra *x) {
  dd_plancode pc;
  int i;
  memset(x, 0, sizeof(*x));
  if(!idxStr)
    return -1;
  memcpy(&pc, idxStr + strlen(idxStr) + 1, sizeof(pc));
  if(memcmp(pc.zMagic, DD_PLAN_MAGIC, sizeof(pc.zMagic)) != 0 ||
     pc.nArg != argc || pc.nArg < 0 || pc.nArg > DD_MAX_ARGS)
    return -1;
  if(p->nCol < 64 && (pc.mProj >> p->nCol) != 0)
    return -1;
  x->mProj = pc.mProj;
  x->mUsed = pc.mUsed;
  x->bCount = pc.bCount != 0;
  if(pc.nSort < 0 || pc.nSort > DD_MAX_SORT)
    return -1;
  for(i = 0; i < pc.nSort; i++) {
    if(pc.aSort[i].col < 0 || pc.aSort[i].col >= p->nCol)
      return -1;
    x->aSortCol[i] = pc.aSort[i].col;
    x->aSortDesc[i] = pc.aSort[i].desc != 0;
  }
  x->nSort = pc.nSort;
  for(i = 0; i < pc.nArg; i++) {
    int role = pc.aArg[i].role, kind = pc.aArg[i].kind, col = pc.aArg[i].col;
    if(role < DD_ARG_PK || role > DD_ARG_KEQ || col < -1 || col >= p->nCol)
      return -1;
    if(role == DD_ARG_KEQ) {
      if(x->nEq >= DD_MAX_EQ || col < 0 || kind != DD_SK_EQ)
        return -1;
      x->nEq++;
      continue;
    }
    if(role == DD_ARG_CHECK) {
      if(x->nFilter + x->nCheck >= DD_MAX_FILTER || col < 0 ||
         kind < DD_SK_EQ || kind > DD_SK_LE)
        return -1;
      x->aCheckCol[x->nCheck] = col;
      x->aCheckKind[x->nCheck++] = kind;
      continue;
    }
    if(role != DD_ARG_FILTER)
      continue;
    if(x->nFilter + x->nCheck >= DD_MAX_FILTER || col < 0 ||
       (kind != DD_SK_BEGINS && kind != DD_SK_LIKE &&
        (kind < DD_SK_EQ || kind > DD_SK_LE)))
      return -1;
    x->aFilterCol[x->nFilter] = col;
    x->aFilterKind[x->nFilter++] = kind;
  }
  return 0;
}
