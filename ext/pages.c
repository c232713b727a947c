/*
** pages.c -- the reads of a plan's rows: a Query's or Scan's pages one at
** a time or from a parallel read's stream (dd_next_page), each page's rows
** read again by key when the index lacks a used column or the rows feed a
** write (dd_fetch_full), BatchGetItem with several calls in flight, the
** progress line a long read draws on a terminal, and a failed read's
** error (dd_cursor_error).
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "cursor.h" /* and multikey.h, dd_ext.h */

/* See cursor.h. */
void dd_rows_clear(dd_cursor *pCur) {
  int i;
  for(i = 0; pCur->aRow && i < pCur->nRow; i++)
    ddb_item_unref(pCur->aRow[i]);
  if(pCur->aRow != pCur->aRowOne)
    sqlite3_free(pCur->aRow);
  pCur->aRow = NULL;
  pCur->nRow = pCur->iRow = 0;
  pCur->pCur = NULL;
}

/* See cursor.h. */
int dd_cursor_error(dd_cursor *pCur, const ddb_error *e) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  if(e->code == DDB_ERR_LIMIT) {
    /* max_requests: what the statement sent, and the forms that send less */
    sqlite3_str *s = sqlite3_str_new(0);
    char *z;
    if(p->pConn) {
      sqlite3_str_appendall(s, " so far: ");
      if(dd_conn_ops(p->pConn, s) == 0)
        sqlite3_str_appendall(s, "none");
    }
    z = sqlite3_str_finish(s);
    dd_error(p,
             "%s;%s. Cheaper forms: a join on the full key as keys = "
             "'<JSON list of keys>' (BatchGetItem, 100 keys a request); a "
             "correlated subquery as a MATERIALIZED CTE of one Query (WITH x "
             "AS MATERIALIZED (SELECT ... WHERE PK = ...)); or a larger "
             "max_requests",
             e->message, z ? z : "");
    sqlite3_free(z);
    return SQLITE_ERROR;
  }
  dd_error(p, "%s", e->message);
  return dd_rc(e);
}

/* Does item it, read again by its table key for a write, still have the
** index key attributes of its index row x (else it has left the place in
** the index the plan chose it by)? */
static int dd_fetch_same(dd_cursor *pCur, const ddb_item *x,
                         const ddb_item *it) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  const dd_path *pp = pCur->pPath;
  int i;
  for(i = 0; i < pp->nPkCol + pp->nSkCol; i++) { /* every key attribute */
    int c = i < pp->nPkCol ? pp->aPkCol[i] : pp->aSkCol[i - pp->nPkCol];
    const ddb_av *a = ddb_item_get(x, p->aCol[c].zName),
                 *b = ddb_item_get(it, p->aCol[c].zName);
    if(!a || !b || !ddb_av_equal(a, b))
      return 0;
  }
  return 1;
}

/* Read aIn[0..nIn) again by their table keys (the index lacks a used
** column, or the rows feed a write) into aRow.  Rows whose item vanished
** meanwhile are dropped, and, for a write, rows whose index key changed
** (dd_fetch_same). */

static int dd_fetch_full(dd_cursor *pCur, ddb_item *const *aIn, int nIn) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  ddb_item **aFound;
  ddb_error err;
  int i, j;
  ddb_item **aKey;
  int rc = SQLITE_OK;
  ddb_error_clear(&err);
  aFound = sqlite3_malloc64(sizeof(ddb_item *) *
                            (sqlite3_uint64)(nIn ? nIn : 1) * 2);
  if(!aFound)
    return SQLITE_NOMEM;
  memset(aFound, 0, sizeof(ddb_item *) * (size_t)(nIn ? nIn : 1) * 2);
  aKey = aFound + (nIn ? nIn : 1);
  /* an index row holds the table's key attributes and its own: keep the
  ** former, BatchGetItem refuses any other attribute in a key */
  for(i = 0; i < nIn; i++) {
    const ddb_av *kv[2] = {NULL, NULL};
    for(j = 0; j < p->nKey; j++) {
      kv[j] = ddb_item_get(aIn[i], p->azKey[j]);
      if(!kv[j]) {
        dd_error(p, "index row without the table key '%s'", p->azKey[j]);
        rc = SQLITE_ERROR;
        goto fail;
      }
    }
    aKey[i] = dd_key_item(p, kv[0], kv[1]);
    if(!aKey[i]) {
      rc = SQLITE_NOMEM;
      goto fail;
    }
  }
  if(dd_batch_get_parallel(pCur, aKey, nIn, aFound, &err)) {
    rc = dd_cursor_error(pCur, &err);
    goto fail;
  }
  for(i = j = 0; i < nIn; i++) {
    if(aFound[i] && pCur->bFresh && !dd_fetch_same(pCur, aIn[i], aFound[i])) {
      ddb_item_unref(aFound[i]); /* it left the index entry read */
      aFound[i] = NULL;
    }
    if(aFound[i])
      aFound[j++] = aFound[i];
  }
  pCur->aRow = aFound;
  pCur->nRow = j;
  aFound = NULL;

fail:
  for(i = 0; i < nIn; i++)
    ddb_item_unref(aKey[i]);
  if(aFound) {
    for(i = 0; i < nIn; i++)
      ddb_item_unref(aFound[i]);
    sqlite3_free(aFound);
  }
  return rc;
}

/* ------------------------------------------------------------------------
** Progress: in an interactive shell (stderr a terminal), a statement that
** has run for DD_PROGRESS_AFTER seconds (or $DYNAMODB_PROGRESS_AFTER:
** dd_progress_after) shows one line on stderr, updated as pages arrive,
** and cleared at the end (bEnd).
*/

/* See cursor.h. */
void dd_progress(dd_cursor *pCur, int bEnd) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  double t;
  if(!p->bProgress)
    return;
  if(bEnd) {
    if(pCur->bProgressShown)
      fputs("\r\033[K", stderr);
    pCur->bProgressShown = 0;
    return;
  }
  t = ddbc_now() - pCur->tStart;
  if(t < dd_progress_after() || !isatty(2))
    return;
  fprintf(stderr, "\r\033[K%s: %lld items, %lld pages, %.1f RCU, %.1f s",
          p->zVtabName ? p->zVtabName : "dynamodb", pCur->nItemsSeen,
          pCur->nPagesSeen, pCur->rcuSeen, t);
  if(pCur->pScan)
    fprintf(stderr, ", segments %d/%d done", pCur->nSegDone,
            ddbc_stream_workers(pCur->pScan));
  {
    /* max_rcu, max_wcu: whether a request waits now, how long they did */
    double paced = dd_conn_paced(p->pConn);
    if(dd_conn_waiting(p->pConn))
      fprintf(stderr, ", waiting for max_rcu/max_wcu");
    if(paced >= 0.05)
      fprintf(stderr, ", waited %.1f s for max_rcu/max_wcu", paced);
    char zWhy[160];
    if(ddbc_shared_status(p->pol.shared, zWhy, sizeof(zWhy)))
      fprintf(stderr, ", shared cache down (%s)", zWhy);
  }
  fflush(stderr);
  pCur->bProgressShown = 1;
  pCur->tDrawn = ddbc_now();
}

/* The cancel hook of the statement's thread while it waits for a page
** (ud: the cursor): the interrupt, as dd_interrupted, and the progress
** line drawn again every DD_PROGRESS_REDRAW seconds, so that it moves
** while a request or a wait for max_rcu lasts. */
#define DD_PROGRESS_REDRAW 0.5
static int dd_cursor_poll(void *ud) {
  dd_cursor *pCur = ud;
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  if(ddbc_now() - pCur->tDrawn >= DD_PROGRESS_REDRAW)
    dd_progress(pCur, 0);
  return dd_interrupted(p->db);
}

/* The end of the cursor's rows: bEof, the progress line's last draw. */
static void dd_pages_end(dd_cursor *pCur) {
  pCur->bEof = 1;
  dd_progress(pCur, 1);
}

/* The next page of the parallel read (its workers' queue) into *ppg (a
** reference; NULL at the end, the cursor then at EOF), the partition of
** an IN list's page in iPk; an interrupt (only this thread may ask) stops
** the workers.  Returns an SQLite code. */
static int dd_page_stream(dd_cursor *pCur, ddb_page **ppg) {
  ddb_error err;
  int iUnit = -1;
  ddb_error_clear(&err);
  if(ddbc_stream_next(pCur->pScan, dd_cursor_poll, pCur, ppg, &iUnit, &err))
    return dd_cursor_error(pCur, &err);
  if(*ppg && pCur->rd.pk_name)
    pCur->iPk = iUnit; /* the partition of this page */
  pCur->nSegDone = ddbc_stream_done(pCur->pScan);
  if(!*ppg)
    dd_pages_end(pCur);
  return SQLITE_OK;
}

/* The next page of the serial read into *ppg (a reference; NULL at the
** end, the cursor then at EOF): this partition's next page, or the next
** partition's first; its LastEvaluatedKey kept (and checked: ddb_lek_next)
** for the page after.  Returns an SQLite code. */
static int dd_page_read(dd_cursor *pCur, ddb_page **ppg) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  ddbc_policy pol;
  ddb_error err;
  int rc;
  ddb_error_clear(&err);
  if(!pCur->bMore) {
    if(pCur->op != DD_OP_QUERY || pCur->iPk + 1 >= pCur->nPk) {
      dd_pages_end(pCur);
      return SQLITE_OK;
    }
    pCur->iPk++;
    pCur->bMore = 1;
  }
  if(pCur->op == DD_OP_QUERY)
    pCur->rd.pk = pCur->aPk[pCur->iPk].av;
  /* a GSI cannot be read consistently: DynamoDB refuses ConsistentRead
  ** there, so a GSI Query is eventually consistent whatever the option
  ** (a write's rows are read again by key: dd_filter_cursor) */
  pol = pCur->pol;
  if(pCur->pPath && pCur->pPath->pIdx->name && !pCur->pPath->pIdx->is_local)
    pol.consistent = 0;
  pCur->rd.start = pCur->pStart;
  /* LIMIT only sizes the first request: SQLite can hand over a LIMIT
  ** while it still filters with a term it never showed us (GSI1SK > SK),
  ** so when it asks for more rows the next pages come unlimited */
  pCur->rd.limit = pCur->nEmitted == 0 && !pCur->pStart ? pCur->nLimit : 0;
  /* this thread's hook while the page is read: the interrupt, and the
  ** progress line kept moving */
  ddb_cancel_thread(dd_cursor_poll, pCur);
  rc = ddbc_read_page(p->pClient, &pCur->rd, &pol, ppg, &err);
  ddb_cancel_thread(NULL, NULL);
  if(rc)
    return dd_cursor_error(pCur, &err);
  if(!pCur->pStart)
    ddb_lek_guard_free(&pCur->lek); /* a new partition's first page */
  if(ddb_lek_next(&pCur->lek, p->pClient, &pCur->rd, *ppg, &err)) {
    ddb_page_unref(*ppg);
    *ppg = NULL;
    return dd_cursor_error(pCur, &err);
  }
  ddb_item_unref(pCur->pStart);
  pCur->pStart = ddb_item_ref((*ppg)->last_key);
  pCur->bMore = pCur->pStart != NULL;
  return SQLITE_OK;
}

/* Page pg (taken: unref'd here) counted for the progress line and made
** the cursor's rows: a count (Select=COUNT), its items read again by key
** (FETCH), or its items.  *pbRows: it gave rows (else read the next page).
** Returns an SQLite code. */
static int dd_page_take(dd_cursor *pCur, ddb_page *pg, int *pbRows) {
  int i, rc;
  *pbRows = 0;
  pCur->nPagesSeen++;
  pCur->nItemsSeen += pg->count;
  pCur->rcuSeen += pg->consumed_rcu;
  dd_progress(pCur, 0);
  if(pCur->bCount) {
    /* Select=COUNT: Count rows, no items */
    pCur->nRow = (int)pg->count;
    pCur->iRow = 0;
    ddb_page_unref(pg);
    *pbRows = pCur->nRow > 0;
    return SQLITE_OK;
  }
  if(pg->n_items == 0) {
    ddb_page_unref(pg);
    return SQLITE_OK;
  }
  if(pCur->bFetch) {
    rc = dd_fetch_full(pCur, pg->items, pg->n_items);
    ddb_page_unref(pg);
    *pbRows = rc == SQLITE_OK && pCur->nRow > 0;
    return rc;
  }
  pCur->aRow =
      sqlite3_malloc64(sizeof(ddb_item *) * (sqlite3_uint64)pg->n_items);
  if(!pCur->aRow) {
    ddb_page_unref(pg);
    return SQLITE_NOMEM;
  }
  for(i = 0; i < pg->n_items; i++)
    pCur->aRow[i] = ddb_item_ref(pg->items[i]);
  pCur->nRow = pg->n_items;
  ddb_page_unref(pg);
  *pbRows = 1;
  return SQLITE_OK;
}

/* Load the next non-empty page of the Query/Scan into aRow, moving on to
** the next partition key when one is exhausted.  Sets bEof at the end.
** Returns an SQLite code, the vtab's message set on error. */
int dd_next_page(dd_cursor *pCur) {
  int rc, bRows = 0;
  dd_rows_clear(pCur);
  while(!bRows) {
    ddb_page *pg = NULL;
    rc = pCur->pScan ? dd_page_stream(pCur, &pg) : dd_page_read(pCur, &pg);
    if(rc || !pg)
      return rc; /* an error, or the end */
    rc = dd_page_take(pCur, pg, &bRows);
    if(rc)
      return rc;
  }
  return SQLITE_OK;
}

/* See cursor.h. */
int dd_next_raw(dd_cursor *pCur) {
  int rc;
  while(pCur->iRow >= pCur->nRow) {
    if(pCur->op == DD_OP_GET || pCur->op == DD_OP_BATCH) {
      pCur->bEof = 1;
      return SQLITE_OK;
    }
    rc = dd_next_page(pCur);
    if(rc || pCur->bEof)
      return rc;
  }
  pCur->pCur = pCur->aRow ? pCur->aRow[pCur->iRow] : NULL;
  pCur->iRow++;
  pCur->nEmitted++;
  return SQLITE_OK;
}

/* See cursor.h. */
ddb_result dd_batch_get_parallel(dd_cursor *pCur, ddb_item **aKey, int nKeys,
                                 ddb_item **aFound, ddb_error *err) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  return ddbc_batch_get_parallel(
      p->pClient, p->pDesc->name, (const ddb_item *const *)aKey, (size_t)nKeys,
      p->azKey, p->nKey, &pCur->pol, dd_interrupted, p->db, aFound, err);
}
