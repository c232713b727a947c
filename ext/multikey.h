/*
** multikey.h -- Queries of a multi-attribute GSI key (multikey.c): the
** planner's, xFilter's and the cursor's part.
*/
#ifndef DD_MULTIKEY_H
#define DD_MULTIKEY_H

#include "dd_ext.h"

/* Has path pp a multi-attribute key (more than one partition or sort
** attribute)? */
static inline int dd_path_multi(const struct dd_path *pp) {
  return pp->nPkCol > 1 || pp->nSkCol > 1;
}

/* Multi-attribute keys (multikey.c).  dd_plan_multi: the Query of the
** multi-attribute path iPath that the WHERE allows into pl (= on every
** partition attribute, then the sort attributes' = prefix and at most
** one range), 0 when it allows none.  dd_multi_order_ok: does the Query
** pl deliver the ORDER BY (*pbDesc: descending)?  dd_multi_bind: xFilter
** reads the plan's nArg DD_ARG_KEQ values (argv[*piArg...]) into the cursor's
** request, and sets pCur->iSkCol for every path; *pbEmpty when one can
** match no item.  dd_multi_reset frees them.  dd_multi_pend_ok: may the
** open transaction's item it be in the Query (every key attribute, the =
** values)?  (1 on a path of a single-attribute key.) */
int dd_plan_multi(dd_vtab *p, sqlite3_index_info *pInfo, int iPath,
                  sqlite3_uint64 mUsed, dd_plan *pl);
int dd_multi_order_ok(dd_vtab *p, sqlite3_index_info *pInfo, const dd_plan *pl,
                      int *pbDesc);
int dd_multi_bind(dd_cursor *pCur, int nArg, sqlite3_value **argv, int *piArg,
                  int *pbEmpty);
void dd_multi_reset(dd_cursor *pCur);
/* In a counted row (Select=COUNT), the value the Query fixes column i to:
** its range column's = (any path's sort key), a multi-attribute key's
** other =; NULL: none. */
const dd_val *dd_multi_known(const dd_cursor *pCur, int i);
int dd_multi_pend_ok(dd_cursor *pCur, const ddb_item *it);

#ifdef UNITTESTS
UNITTEST double dd_partition_rows(const dd_plan *pl); /* plan.c */
#endif

#endif
