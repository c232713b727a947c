/*
** cursor.h -- the read path's own header: dd_cursor, the rows of one run
** of a plan, and the functions the files of the read path share over it.
** Included by those files only (cursor.c, filter.c, multikey.c and the
** files they are split into); the rest of ext/ sees dd_cursor's name
** alone (dd_ext.h), as csv.c keeps its cursor to itself.
*/
#ifndef DD_CURSOR_H
#define DD_CURSOR_H

#include "multikey.h" /* and dd_ext.h */

/* A cursor: the rows of one run of a plan. */
struct dd_cursor {
  sqlite3_vtab_cursor base; /* Base class.  Must be first */
  int op;                   /* DD_OP_* of the running plan */
  dd_path *pPath;
  /* Query: the partition keys still to run, and the key condition */
  dd_val *aPk; /* aPkOne or sqlite3_free(), each zBuf too */
  dd_val aPkOne[1];
  int nPk, iPk;
  ddb_read rd;  /* the request of the current page */
  dd_val sk[2]; /* sort-key operands used by rd */
  int iSkCol;   /* rd.sk_name's column (-1: none) */
  int nEq;      /* a multi-attribute key's other = (multikey.c): rd.eq_* */
  dd_val aEq[DD_MAX_EQ];
  const char *azEq[DD_MAX_EQ];
  ddb_av aEqAv[DD_MAX_EQ];
  ddb_item *pStart;  /* ExclusiveStartKey of the next page */
  ddb_lek_guard lek; /* the LastEvaluatedKeys of this partition's pages */
  int bMore;         /* the current partition has more pages */
  int bFetch;        /* read each page's rows again by key */
  ddb_item **aRow;   /* rows of the current batch; sqlite3_free(),
                               each a reference */
  int nRow;
  int iRow;       /* next row in aRow */
  ddb_item *pCur; /* the current row (borrowed) */
  int bEof;
  long long nLimit; /* Limit of the first request (LIMIT+OFFSET), 0: none */
  long long nEmitted;
  /* FILTER, PROJECT and COUNT of the plan (see dd_extra) */
  int nFilter;
  ddb_filter aFilter[DD_MAX_FILTER];
  dd_val aFv[DD_MAX_FILTER]; /* their values */
  int aFilterCol[DD_MAX_FILTER];
  int nProj;
  const char *azProj[64]; /* attribute names (owned by the vtab) */
  int bCount;             /* rows are counted, not fetched: only columns
                             with a known value (= in the call) are used */
  ddb_item *aRowOne[1];   /* aRow of one GetItem: no allocation */
  int nCheck;             /* rows must pass aCheck (never with bCount) */
  dd_check aCheck[DD_MAX_CHECKS];
  ddbc_stream *pScan; /* a parallel read's workers, or NULL */
  int nSegDone;       /* segments finished (progress) */
  double tStart;      /* when xFilter ran (progress) */
  long long nItemsSeen, nPagesSeen;
  double rcuSeen;
  int bProgressShown;
  double tDrawn; /* when the progress line was last drawn */
  /* read your writes: the items the open transaction's buffered writes
  ** leave that may match the plan (aPend, references, in the plan's order
  ** when it has one), merged into the rows DynamoDB returns, whose rows of
  ** keys the transaction wrote are dropped (see dd_overlay_start) */
  int bOverlay;
  ddb_item **aPend; /* sqlite3_free(), each a reference */
  int nPend, iPend;
  ddb_item *pPeek; /* the next DynamoDB row (borrowed from aRow) */
  int bRawEof;     /* DynamoDB's rows are done */
  int bOrdered;    /* merge aPend by the path's sort key */
  /* the current row's item column, rendered at its first use and kept
  ** until the row changes: SQLite asks for a virtual table's column once
  ** per reference, and json_extract(item, ...) three times would render
  ** the JSON three times (see dd_item_json) */
  char *zItem; /* free(); NULL: not rendered yet */
  size_t nItem;
  /* the key list of a `keys = ?` plan, as given: the hidden keys column
  ** reads it back (sqlite3_value_free()) */
  sqlite3_value *pKeys;
  /* ttl=hide: rows whose attribute zTtl (the vtab's) is a number below
  ** ttlNow (Unix seconds, taken when xFilter ran) are skipped: an answer
  ** from the cache may hold items that expired since it was read */
  const char *zTtl;
  long long ttlNow;
  char zTtlNow[24]; /* ttlNow as N text */
  /* the policy of this run's reads (set by xFilter): the table's, or, when
  ** the run feeds a statement that writes the table (filter.c:
  ** dd_filter_policy), a
  ** consistent read of DynamoDB itself, never either cache tier: a write
  ** is computed from what DynamoDB holds (docs/writes.md) */
  ddbc_policy pol;
  int bFresh; /* the run feeds a write: pol reads DynamoDB consistently */
  /* a write's rows chosen on values other than the table key: bDepends
  ** for the whole run (the path's key condition, a FILTER or a row check
  ** on another attribute), bRowRead for the current row (xColumn handed
  ** out another attribute's value); xRowid tells dd_remember_row, so that
  ** a DELETE of such a row is conditioned on what was read */
  int bDepends, bRowRead;
  /* SORT (dd_extra.nSort): every row read at xFilter, sorted, then
  ** walked (dd_sort_rows) */
  int nSort;
  int aSortCol[DD_MAX_SORT], aSortDesc[DD_MAX_SORT];
  ddb_item **aSorted; /* sqlite3_free(), each a reference */
  int nSorted, iSorted;
  /* a warm GetItem answered from the item cache without its item
  ** (dd_get_cached): the entry copied into view (its buffers kept for the
  ** next lookup), the key's values in zKeyBuf (pk NUL sk NUL, their
  ** lengths aKeyLen); the key columns come from them, the item column
  ** from view.json when the plan reads it, and the item is unpacked from
  ** view.packed into aRowOne[0] (pCur) only when something else needs it
  ** (dd_view_item).  bView: 2 after xFilter, 1 while the row is current,
  ** 0 otherwise */
  int bView;
  /* xFilter asked the item cache for this GetItem's key and it had no
  ** entry (dd_get_cached): the run does not ask again (ddbc_get_item,
  ** which asks once more on its own, under its single flight) */
  int bMissed;
  ddbc_item_view view;
  char *zKeyBuf; /* sqlite3_free() */
  int nKeyBuf;
  int aKeyLen[2];
  int bKeyNul; /* a key value holds a NUL byte: give its length */
  /* the plan xFilter decoded last (dd_plan_decode), by its idxStr: one
  ** statement's, alive as long as this cursor, so decoded once */
  const char *zPlanSeen;
  int nPlanArgs;
  dd_extra xPlan;
};

/* cursor.c: the cursor's reset, the overlay, SORT. */
/* Release everything a previous xFilter left (stops a parallel read). */
void dd_cursor_reset(dd_cursor *pCur);
/* The current row's item, unpacked from a warm lookup's view when the row
** came from one and was not unpacked yet (into aRowOne[0]).  NULL: no row,
** or out of memory (then *pNomem is set). */
ddb_item *dd_view_item(dd_cursor *pCur, int *pNomem);
/* Start the overlay of the open transaction's writes on the plan xFilter
** just set up, the one way it starts (a no-op when nothing is buffered):
** with aKey (a `keys = ?` plan), the transaction's image of each table key
** aKey[0..nKey), in their order; else its images that may be rows of the
** plan, looked up by key for GetItem and BatchGetItem (the partition keys
** aPk x the sort keys aSkv[0..nSkv)), else among all its writes, merged
** in the path's sort-key order for a Query.  Returns an SQLite code. */
int dd_overlay_start(dd_cursor *pCur, const dd_val *aSkv, int nSkv,
                     ddb_item *const *aKey, int nKey);
/* SORT: read every row of the cursor's plan (run, at its first row), sort
** them by x's sort columns (N by value, S and B by bytes, NULL first),
** and make the cursor walk them (cursor.c).  Returns an SQLite code. */
int dd_sort_rows(dd_cursor *pCur, const dd_extra *x);

/* pages.c: the pages of a plan, the progress line, errors. */
/* Drop the rows of the current batch (aRow) and the current row. */
void dd_rows_clear(dd_cursor *pCur);
/* Report client error e on the cursor's vtab (max_requests' with the
** cheaper forms); returns the SQLite code. */
int dd_cursor_error(dd_cursor *pCur, const ddb_error *e);
/* Show (or update) the progress line of the cursor's statement once it
** has run long enough, on a terminal, unless progress=off; bEnd: clear
** it. */
void dd_progress(dd_cursor *pCur, int bEnd);
/* The next row DynamoDB (or the cache) returned into pCur->pCur, or
** bEof.  Returns an SQLite code. */
int dd_next_raw(dd_cursor *pCur);
/* Load the next non-empty page of the Query/Scan into aRow, moving on to
** the next partition key when one is exhausted.  Sets bEof at the end.
** Returns an SQLite code. */
int dd_next_page(dd_cursor *pCur);
/* Look up aKey[0..nKeys) into aFound[] (found items or NULL) with several
** BatchGetItem calls in flight (cache/fanout.c), under the cursor's read
** policy, an interrupt of its connection stopping them.  Returns DDB_OK,
** or the first error (then aFound holds nothing). */
ddb_result dd_batch_get_parallel(dd_cursor *pCur, ddb_item **aKey, int nKeys,
                                 ddb_item **aFound, ddb_error *err);

/* lookups.c: the lookups by key of xFilter. */
/* Collect the distinct usable values of argument pArg (an IN list when
** bIn) converted to the type of p's column c, appended to the list *pa
** of *pn values (the first in the caller's pOne: *pa is sqlite3_free()d
** only when it is not pOne).  Returns an SQLite code; SQLITE_ERROR with
** p's message set for an IN value on an N key that may have lost digits
** (dd_real_ambiguous). */
int dd_collect(dd_vtab *p, int c, dd_val **pa, int *pn, dd_val *pOne,
               sqlite3_value *pArg, int bIn, int nMax);
/* GetItem and BatchGetItem: the keys are aPk (partition) x aSk (sort;
** nSk values).  The rows found into the cursor's aRow, in key order; no
** key: EOF.  Returns an SQLite code, the vtab's message set on error. */
int dd_run_keys(dd_cursor *pCur, dd_val *aSk, int nSk);
/* The hot path of a join before any conversion: a GetItem on S keys
** whose values are read in place from argv (dd_text_key), asked of the
** item cache (dd_get_from_cache).  Returns 1 when the row (or its
** absence) came from the cache; 0 to run the plan. */
int dd_get_cached(dd_cursor *pCur, int argc, sqlite3_value **argv);
/* Run the plan keys = ?: BatchGetItem of aKey[0..nKey) (taken: unref'd
** here), through the cache, several calls in flight; then the overlay of
** the open transaction's writes to those keys. */
int dd_run_key_list(dd_cursor *pCur, ddb_item **aKey, int nKey);

#endif
