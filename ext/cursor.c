/*
** cursor.c -- xOpen, xClose, xNext, xEof, xColumn and xRowid: walking
** the rows of a plan (its pages are read by pages.c), the overlay of the
** open transaction's writes, SORT, and the item's JSON.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "cursor.h" /* and multikey.h, dd_ext.h */

/* ------------------------------------------------------------------------
** Cursors
**
** Rows are held as item references in aRow: the one GetItem answer, the
** BatchGetItem answers, or the current page of a Query/Scan (read again
** by key when the index does not project a used column).  xNext walks
** aRow and fetches the next page when it runs out.
*/
/* See dd_ext.h. */
int dynamodbOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor) {
  dd_cursor *pCur = sqlite3_malloc(sizeof(*pCur));
  if(!pCur)
    return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->bEof = 1;
  *ppCursor = &pCur->base;
  dd_stmt_cursor((dd_vtab *)pVtab, 1);
  return SQLITE_OK;
}

/* Forget the rendered item column of the current row (it changes). */
static void dd_item_json_drop(dd_cursor *pCur) {
  free(pCur->zItem);
  pCur->zItem = NULL;
  pCur->nItem = 0;
}

/* See cursor.h. */
void dd_cursor_reset(dd_cursor *pCur) {
  int i;
  dd_item_json_drop(pCur);
  pCur->bView = 0; /* (its buffers are kept for the next lookup) */
  pCur->bMissed = 0;
  ddbc_stream_free(pCur->pScan); /* workers read the strings freed below */
  pCur->pScan = NULL;
  dd_progress(pCur, 1);
  pCur->nItemsSeen = pCur->nPagesSeen = 0;
  pCur->rcuSeen = 0;
  for(i = 0; i < pCur->nPk; i++)
    dd_val_clear(&pCur->aPk[i]);
  if(pCur->aPk != pCur->aPkOne)
    sqlite3_free(pCur->aPk);
  pCur->aPk = NULL;
  pCur->nPk = pCur->iPk = 0;
  dd_val_clear(&pCur->sk[0]);
  dd_val_clear(&pCur->sk[1]);
  dd_multi_reset(pCur);
  for(i = 0; i < pCur->nFilter; i++)
    dd_val_clear(&pCur->aFv[i]);
  pCur->nFilter = pCur->nProj = pCur->bCount = 0;
  ddb_item_unref(pCur->pStart);
  pCur->pStart = NULL;
  ddb_lek_guard_free(&pCur->lek);
  pCur->bMore = 0;
  dd_rows_clear(pCur);
  pCur->bEof = 1;
  pCur->nLimit = pCur->nEmitted = 0;
  memset(&pCur->rd, 0, sizeof(pCur->rd));
  for(i = 0; i < pCur->nPend; i++)
    ddb_item_unref(pCur->aPend[i]);
  sqlite3_free(pCur->aPend);
  pCur->aPend = NULL;
  pCur->nPend = pCur->iPend = 0;
  pCur->bOverlay = pCur->bRawEof = pCur->bOrdered = 0;
  pCur->bFresh = pCur->bDepends = pCur->bRowRead = 0;
  pCur->pPeek = NULL;
  sqlite3_value_free(pCur->pKeys);
  pCur->pKeys = NULL;
  for(i = 0; i < pCur->nCheck; i++)
    dd_val_clear(&pCur->aCheck[i].v);
  pCur->nCheck = 0;
  pCur->zTtl = NULL;
  for(i = 0; i < pCur->nSorted; i++)
    ddb_item_unref(pCur->aSorted[i]);
  sqlite3_free(pCur->aSorted);
  pCur->aSorted = NULL;
  pCur->nSorted = pCur->iSorted = pCur->nSort = 0;
}

/* See dd_ext.h. */
int dynamodbClose(sqlite3_vtab_cursor *cur) {
  dd_cursor *pCur = (dd_cursor *)cur;
  dd_stmt_cursor((dd_vtab *)cur->pVtab, -1);
  dd_cursor_reset(pCur);
  free(pCur->view.packed);
  free(pCur->view.json);
  sqlite3_free(pCur->zKeyBuf);
  sqlite3_free(cur);
  return SQLITE_OK;
}

/* Compare two key values of type t in DynamoDB's order (S and B by their
** bytes, N by value, every digit counted), the order a Query returns. */
static int dd_av_order(const ddb_av *a, const ddb_av *b) {
  if(a->type == DDB_N && b->type == DDB_N)
    return ddb_number_cmp(a->text, a->n, b->text, b->n); /* exactly */
  if(a->type == DDB_B && b->type == DDB_B) {
    unsigned char *za = sqlite3_malloc64((sqlite3_uint64)a->n + 1);
    unsigned char *zb = sqlite3_malloc64((sqlite3_uint64)b->n + 1);
    size_t na = za ? ddb_base64_decode(a->text, a->n, za, a->n + 1) : 0;
    size_t nb = zb ? ddb_base64_decode(b->text, b->n, zb, b->n + 1) : 0;
    int c;
    if(na == (size_t)-1)
      na = 0;
    if(nb == (size_t)-1)
      nb = 0;
    c = memcmp(za ? (const void *)za : "", zb ? (const void *)zb : "",
               na < nb ? na : nb);
    sqlite3_free(za);
    sqlite3_free(zb);
    return c ? c : (na < nb ? -1 : na > nb);
  }
  {
    uint32_t n = a->n < b->n ? a->n : b->n;
    int c = memcmp(a->text, b->text, n);
    return c ? c : (a->n < b->n ? -1 : a->n > b->n);
  }
}

/* The path's sort-key order (every sort attribute) of a, b: the overlay. */
static int dd_pend_cmp(dd_cursor *pCur, const ddb_item *a, const ddb_item *b) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  int c = 0, k;
  for(k = 0; k < pCur->pPath->nSkCol && c == 0; k++) {
    const char *zSk = p->aCol[pCur->pPath->aSkCol[k]].zName;
    const ddb_av *x = ddb_item_get(a, zSk), *y = ddb_item_get(b, zSk);
    c = !x || !y ? (x ? 1 : y ? -1 : 0) : dd_av_order(x, y);
  }
  return pCur->rd.descending ? -c : c;
}

/* Does item it have the attribute of key column c, in its type? */
static const ddb_av *dd_key_attr(dd_vtab *p, const ddb_item *it, int c) {
  const ddb_av *a = ddb_item_get(it, p->aCol[c].zName);
  return a && a->type == p->aCol[c].type ? a : NULL;
}

/*
** May item it (written by the open transaction) be a row of the plan?  A
** superset is enough, as SQLite checks every constraint again, except
** those it was told to omit (ext/PLAN.md, "omit"): the N comparisons,
** which the cursor's row checks apply to these rows too, and PK = ? and
** SK = ?, which are checked here exactly: the partition key is one of aPk, the sort key
** one of aSkv (GetItem, BatchGetItem) or the Query's = value.  An index
** holds only items with its key attributes.
*/
static int dd_pend_match(dd_cursor *pCur, const ddb_item *it,
                         const dd_val *aSkv, int nSkv) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  dd_path *pp = pCur->pPath;
  const ddb_av *pk = dd_key_attr(p, it, pp->iPk);
  const ddb_av *sk = pp->iSk >= 0 ? dd_key_attr(p, it, pp->iSk) : NULL;
  int i, ok;
  if(!pk || (pp->iSk >= 0 && !sk) || !dd_multi_pend_ok(pCur, it))
    return 0;
  if(pCur->op == DD_OP_SCAN)
    return p->nSlice == 0 || p->iSlice == 0; /* one slice shows them */
  for(i = 0, ok = 0; i < pCur->nPk && !ok; i++)
    ok = ddb_av_equal(pk, &pCur->aPk[i].av);
  if(!ok)
    return 0;
  if(pCur->op != DD_OP_QUERY) {
    if(pp->iSk < 0)
      return 1;
    for(i = 0, ok = 0; i < nSkv && !ok; i++)
      ok = ddb_av_equal(sk, &aSkv[i].av);
    return ok;
  }
  if(pCur->rd.sk_op == DDB_SK_EQ && !dd_path_multi(pp))
    return sk && ddb_av_equal(sk, &pCur->sk[0].av);
  return 1;
}

/* Append to a[*pn] (a reference) the open transaction's image of the
** item with the table key of `key`, if it wrote one. */
static void dd_pend_add(dd_vtab *p, const ddb_item *key, ddb_item **a,
                        int *pn) {
  ddb_item *img = NULL;
  if(dd_pending_get(p, key, &img) && img)
    a[(*pn)++] = ddb_item_ref(img);
}

/* See cursor.h. */
int dd_overlay_start(dd_cursor *pCur, const dd_val *aSkv, int nSkv,
                     ddb_item *const *aKey, int nKey) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  ddb_item **a = NULL;
  int n = 0, i, j, rc;
  if(!dd_pending_any(p))
    return SQLITE_OK;
  if(aKey) {
    /* keys = ?: the image of each key given, in the list's order */
    a = sqlite3_malloc64(sizeof(*a) * ((size_t)nKey + 1));
    if(!a)
      return SQLITE_NOMEM;
    for(i = 0; i < nKey; i++)
      dd_pend_add(p, aKey[i], a, &n);
    pCur->aPend = a;
    pCur->nPend = n;
    pCur->iPend = 0;
    pCur->bOverlay = 1;
    return SQLITE_OK;
  }
  if(pCur->op == DD_OP_GET || pCur->op == DD_OP_BATCH) {
    /* table keys: look each up, rather than go through every write (a
    ** join driving lookups inside a large transaction) */
    int nSk = p->nKey == 2 ? nSkv : 1;
    a = sqlite3_malloc64(sizeof(*a) * ((size_t)pCur->nPk * (size_t)nSk + 1));
    if(!a)
      return SQLITE_NOMEM;
    for(i = 0; i < pCur->nPk; i++) {
      for(j = 0; j < nSk; j++) {
        ddb_item *key = dd_key_item(p, &pCur->aPk[i].av,
                                    p->nKey == 2 ? &aSkv[j].av : NULL);
        if(!key) {
          while(n > 0)
            ddb_item_unref(a[--n]);
          sqlite3_free(a);
          return SQLITE_NOMEM;
        }
        dd_pend_add(p, key, a, &n);
        ddb_item_unref(key);
      }
    }
  } else {
    rc = dd_pending_images(p, &a, &n);
    if(rc)
      return rc;
  }
  for(i = j = 0; i < n; i++) {
    if(dd_pend_match(pCur, a[i], aSkv, nSkv))
      a[j++] = a[i];
    else
      ddb_item_unref(a[i]);
  }
  pCur->aPend = a;
  pCur->nPend = j;
  pCur->iPend = 0;
  pCur->bOverlay = 1;
  /* a Query returns a partition in sort-key order, which the plan may
  ** have promised SQLite (orderByConsumed): merge in that order */
  pCur->bOrdered = pCur->op == DD_OP_QUERY && pCur->pPath->iSk >= 0;
  if(pCur->bOrdered) {
    for(i = 1; i < j; i++) { /* insertion sort: few, and stable */
      ddb_item *x = a[i];
      int k = i;
      while(k > 0 && dd_pend_cmp(pCur, a[k - 1], x) > 0) {
        a[k] = a[k - 1];
        k--;
      }
      a[k] = x;
    }
  }
  return SQLITE_OK;
}

/* The next row, the overlay of the transaction's writes merged in, into
** pCur->pCur, or bEof. */
static int dd_next_row(dd_cursor *pCur) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  int rc;
  if(!pCur->bOverlay)
    return dd_next_raw(pCur);
  for(;;) {
    ddb_item *pend = pCur->iPend < pCur->nPend ? pCur->aPend[pCur->iPend] : 0;
    if(!pCur->pPeek && !pCur->bRawEof) {
      ddb_item *img;
      rc = dd_next_raw(pCur);
      if(rc)
        return rc;
      if(pCur->bEof) {
        pCur->bRawEof = 1;
      } else if(pCur->pCur && dd_pending_get(p, pCur->pCur, &img)) {
        continue; /* the transaction wrote this key: aPend has it, or not */
      } else {
        pCur->pPeek = pCur->pCur;
      }
    }
    if(!pCur->pPeek && !pend) {
      pCur->bEof = 1;
      pCur->pCur = NULL;
      return SQLITE_OK;
    }
    pCur->bEof = 0;
    if(pend && (!pCur->pPeek || (pCur->bOrdered &&
                                 dd_pend_cmp(pCur, pend, pCur->pPeek) <= 0))) {
      pCur->pCur = pend;
      pCur->iPend++;
    } else {
      pCur->pCur = pCur->pPeek;
      pCur->pPeek = NULL;
    }
    return SQLITE_OK;
  }
}

static int dd_gate_ok(const dd_vtab *p, const ddb_item *it,
                      sqlite3_uint64 mGate);

/* The attribute of key column i that the row shows (xColumn's value), or
** NULL: an index's partition key outside its gate, a declared column's
** attribute of another type. */
static const ddb_av *dd_col_av(dd_vtab *p, const ddb_item *it, int i) {
  const ddb_av *av;
  if(p->aCol[i].mGate && !dd_gate_ok(p, it, p->aCol[i].mGate))
    return NULL;
  av = ddb_item_get(it, p->aCol[i].zName);
  /* a declared column shows its attribute only in the declared type, so
  ** that SQLite and a FilterExpression agree on every comparison */
  return av && (!p->aCol[i].bAttr || av->type == p->aCol[i].type) ? av : NULL;
}

/* Does the current row pass the cursor's row checks (dd_check)? */
static int dd_row_ok(dd_cursor *pCur) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  int i;
  for(i = 0; i < pCur->nCheck; i++) {
    const dd_check *ck = &pCur->aCheck[i];
    const ddb_av *av = dd_col_av(p, pCur->pCur, ck->iCol);
    int c;
    if(!av || av->type != DDB_N)
      return 0; /* NULL compares to nothing */
    if(ck->op == DD_SK_NONE)
      continue;
    c = ddb_number_cmp(av->text, av->n, ck->v.av.text, ck->v.av.n);
    if(!(ck->op == DD_SK_EQ   ? c == 0
         : ck->op == DD_SK_GT ? c > 0
         : ck->op == DD_SK_GE ? c >= 0
         : ck->op == DD_SK_LT ? c < 0
                              : c <= 0))
      return 0;
  }
  return 1;
}

/* ttl=hide: has the current row expired (its TTL attribute a number
** below the statement's now)?  DynamoDB deletes such an item within a few
** days; until then it is still read, and a cached answer may hold an item
** that expired since it was read. */
static int dd_row_expired(const dd_cursor *pCur) {
  const ddb_av *av = ddb_item_get(pCur->pCur, pCur->zTtl);
  if(!av || av->type != DDB_N)
    return 0;
  return ddb_number_cmp(av->text, av->n, pCur->zTtlNow,
                        strlen(pCur->zTtlNow)) < 0;
}

/* See dd_ext.h.  Rows that fail the row checks, or have expired under
** ttl=hide, are skipped. */
int dynamodbNext(sqlite3_vtab_cursor *cur) {
  dd_cursor *pCur = (dd_cursor *)cur;
  int rc;
  dd_item_json_drop(pCur);
  pCur->bRowRead = 0;
  if(pCur->bView)
    pCur->bView--; /* 1: the view's row is current; 0: it was */
  if(pCur->aSorted) {
    /* SORT: the rows dd_sort_rows read and sorted */
    pCur->iSorted++;
    pCur->bEof = pCur->iSorted >= pCur->nSorted;
    pCur->pCur = pCur->bEof ? NULL : pCur->aSorted[pCur->iSorted];
    return SQLITE_OK;
  }
  do {
    rc = dd_next_row(pCur);
  } while(rc == SQLITE_OK && !pCur->bEof && pCur->pCur &&
          ((pCur->nCheck && !dd_row_ok(pCur)) ||
           (pCur->zTtl && dd_row_expired(pCur))));
  return rc;
}

/* ------------------------------------------------------------------------
** SORT: an ORDER BY on an N column that the call does not deliver in
** order (a Scan, an index's Query, several partitions).  SQLite would
** sort the numbers of more than 15 digits, which a column shows as TEXT,
** after every other number; the cursor reads every row, sorts them in
** DynamoDB's order (N by value, every digit counted; S and B by bytes;
** a row without the column first, as SQLite puts NULL), and walks them.
** The rows are held in memory, as SQLite's sorter would hold them.
*/

/* The ORDER BY order of items a and b (the cursor's sort columns). */
static int dd_sort_cmp(dd_cursor *pCur, const ddb_item *a, const ddb_item *b) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  int i, c = 0;
  for(i = 0; i < pCur->nSort && c == 0; i++) {
    const ddb_av *x = dd_col_av(p, a, pCur->aSortCol[i]);
    const ddb_av *y = dd_col_av(p, b, pCur->aSortCol[i]);
    c = !x || !y ? (x ? 1 : y ? -1 : 0) : dd_av_order(x, y);
    if(pCur->aSortDesc[i])
      c = -c;
  }
  return c;
}

/* Sort a[0..n) by dd_sort_cmp, stably (a merge sort through tmp[n]). */
static void dd_sort_items(dd_cursor *pCur, ddb_item **a, ddb_item **tmp,
                          int n) {
  int w, i;
  for(w = 1; w < n; w *= 2) {
    for(i = 0; i < n; i += 2 * w) {
      int l = i, m = i + w < n ? i + w : n, h = i + 2 * w < n ? i + 2 * w : n;
      int x = l, y = m, k = l;
      while(x < m && y < h)
        tmp[k++] = dd_sort_cmp(pCur, a[y], a[x]) < 0 ? a[y++] : a[x++];
      while(x < m)
        tmp[k++] = a[x++];
      while(y < h)
        tmp[k++] = a[y++];
    }
    memcpy(a, tmp, sizeof(*a) * (size_t)n);
  }
}

/* See cursor.h. */
int dd_sort_rows(dd_cursor *pCur, const dd_extra *x) {
  ddb_item **a = NULL, **tmp;
  int n = 0, nAlloc = 0, rc = SQLITE_OK, i;
  pCur->nSort = x->nSort;
  memcpy(pCur->aSortCol, x->aSortCol, sizeof(pCur->aSortCol));
  memcpy(pCur->aSortDesc, x->aSortDesc, sizeof(pCur->aSortDesc));
  while(!pCur->bEof) {
    if(pCur->pCur) {
      if(n == nAlloc) {
        ddb_item **aNew;
        nAlloc = nAlloc ? nAlloc * 2 : 64;
        aNew = sqlite3_realloc64(a, sizeof(*a) * (sqlite3_uint64)nAlloc);
        if(!aNew) {
          rc = SQLITE_NOMEM;
          goto fail;
        }
        a = aNew;
      }
      a[n++] = ddb_item_ref(pCur->pCur);
    }
    rc = dynamodbNext(&pCur->base);
    if(rc)
      goto fail;
  }
  tmp = sqlite3_malloc64(sizeof(*a) * (sqlite3_uint64)(n ? n : 1));
  if(!tmp) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  dd_sort_items(pCur, a, tmp, n);
  sqlite3_free(tmp);
  dd_rows_clear(pCur);
  pCur->aSorted = a ? a : sqlite3_malloc64(sizeof(*a));
  if(!pCur->aSorted) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  a = NULL;
  pCur->nSorted = n;
  pCur->iSorted = 0;
  pCur->bEof = n == 0;
  pCur->pCur = n ? pCur->aSorted[0] : NULL;
  return SQLITE_OK;

fail:
  for(i = 0; i < n; i++)
    ddb_item_unref(a[i]);
  sqlite3_free(a);
  return rc;
}

/* See dd_ext.h. */
int dynamodbEof(sqlite3_vtab_cursor *cur) {
  return ((dd_cursor *)cur)->bEof;
}

/* A map, list or set as plain JSON text: malloc()ed, NUL-terminated, its
** length in *pn; NULL when out of memory or over 64 MiB. */
static char *dd_av_json(const ddb_av *av, size_t *pn) {
  ddb_buf b;
  ddb_buf_init(&b, DDB_JSON_MAX);
  /* the item's decoded size bounds its JSON closely: one allocation */
  ddb_buf_reserve(&b, (size_t)av->n * 32 + 256);
  ddb_av_to_json(av, &b);
  return ddb_buf_take(&b, pn);
}

/* See dd_ext.h. */
void dd_result_av(sqlite3_context *ctx, const ddb_av *av) {
  switch(av->type) {
  case DDB_S:
    sqlite3_result_text(ctx, av->text, (int)av->n, SQLITE_TRANSIENT);
    return;
  case DDB_N: {
    int64_t i;
    double d;
    switch(ddb_number_classify(av->text, av->n, &i, &d)) {
    case DDB_NUM_INT: sqlite3_result_int64(ctx, i); return;
    case DDB_NUM_REAL: sqlite3_result_double(ctx, d); return;
    default: sqlite3_result_text(ctx, av->text, (int)av->n, SQLITE_TRANSIENT);
    }
    return;
  }
  case DDB_B: {
    unsigned char *z = sqlite3_malloc64(av->n + 1);
    size_t n;
    if(!z) {
      sqlite3_result_error_nomem(ctx);
      return;
    }
    n = ddb_base64_decode(av->text, av->n, z, av->n + 1);
    if(n == (size_t)-1) {
      sqlite3_free(z);
      sqlite3_result_error(ctx, DD_PREFIX "malformed base64 in a B value", -1);
      return;
    }
    sqlite3_result_blob64(ctx, z, n, sqlite3_free);
    return;
  }
  default: {
    size_t n;
    char *z = dd_av_json(av, &n);
    if(!z) {
      sqlite3_result_error_nomem(ctx);
      return;
    }
    sqlite3_result_text64(ctx, z, n, free, SQLITE_UTF8);
  }
  }
}

/* Render the current row's whole item as plain JSON into pCur->zItem
** (nItem bytes, NUL-terminated), which the cursor keeps until the row
** changes (dd_item_json_drop).  Returns 0, or 1 when out of memory. */
static int dd_item_json(dd_cursor *pCur) {
  const ddb_item *it = pCur->pCur;
  ddb_buf b;
  ddb_buf_init(&b, DDB_JSON_MAX);
  /* the item's decoded size bounds its JSON closely: one allocation */
  ddb_buf_reserve(&b, it->bytes);
  ddb_item_to_json(it, &b);
  pCur->zItem = ddb_buf_take(&b, &pCur->nItem);
  return pCur->zItem == NULL;
}

/* In a counted row, the value of column i if an = in the call fixes it
** (the partition key, an = sort key, an = filter), else NULL. */
static const dd_val *dd_known(dd_cursor *pCur, int i) {
  int k;
  if(pCur->op == DD_OP_QUERY && pCur->nPk && i == pCur->pPath->iPk)
    return &pCur->aPk[pCur->iPk];
  if(pCur->op == DD_OP_QUERY && dd_multi_known(pCur, i)) /* sort key = */
    return dd_multi_known(pCur, i);
  for(k = 0; k < pCur->nFilter; k++)
    if(pCur->aFilterCol[k] == i && pCur->aFilter[k].op == DDB_SK_EQ)
      return &pCur->aFv[k];
  return NULL;
}

/* Does item it have the attribute of every column in mGate, each of its
** column's type (the index membership of dd_column.mGate)? */
static int dd_gate_ok(const dd_vtab *p, const ddb_item *it,
                      sqlite3_uint64 mGate) {
  int c;
  for(c = 0; c < p->nCol && c < 64; c++) {
    const ddb_av *av;
    if(!(mGate & ((sqlite3_uint64)1 << c)))
      continue;
    av = ddb_item_get(it, p->aCol[c].zName);
    if(!av || av->type != p->aCol[c].type)
      return 0;
  }
  return 1;
}

/* See cursor.h. */
ddb_item *dd_view_item(dd_cursor *pCur, int *pNomem) {
  if(pCur->bView && !pCur->pCur && pCur->view.found) {
    pCur->aRowOne[0] =
        ddb_item_unpack(pCur->view.packed, pCur->view.packed_len);
    pCur->pCur = pCur->aRowOne[0];
    *pNomem = pCur->pCur == NULL;
  }
  return pCur->pCur;
}

/* xColumn of a warm lookup's row not unpacked (dd_view_item): the table's
** key columns from the key looked up, the item column from the JSON the
** cache kept.  Returns 1 when it answered column i, 0 when the item is
** needed. */
static int dd_view_column(dd_cursor *pCur, sqlite3_context *ctx, int i) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  int k = i == p->aPath[0].iPk ? 0 : i == p->aPath[0].iSk ? 1 : -1;
  if(k >= 0 && i < p->nCol && p->aCol[i].mGate == 0) {
    const char *z = pCur->zKeyBuf + (k ? pCur->aKeyLen[0] + 1 : 0);
    /* NUL-terminated (-1): SQLite need not copy it again for a function */
    sqlite3_result_text(ctx, z, pCur->bKeyNul ? pCur->aKeyLen[k] : -1,
                        SQLITE_TRANSIENT);
    return 1;
  }
  if(i == p->nCol && pCur->view.json_len) {
    if(sqlite3_vtab_nochange(ctx))
      return 1;
    sqlite3_result_text(ctx, pCur->view.json, -1, SQLITE_TRANSIENT);
    return 1;
  }
  return 0;
}

/* See dd_ext.h. */
int dynamodbColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i) {
  dd_cursor *pCur = (dd_cursor *)cur;
  dd_vtab *p = (dd_vtab *)cur->pVtab;
  const ddb_av *av;
  if(pCur->bView && !pCur->pCur) {
    int bNomem = 0;
    if(dd_view_column(pCur, ctx, i))
      return SQLITE_OK;
    if(!dd_view_item(pCur, &bNomem))
      return bNomem ? SQLITE_NOMEM : SQLITE_OK;
  }
  if(pCur->bCount) {
    /* a counted row: only columns with a value known from an = */
    const dd_val *v = dd_known(pCur, i);
    if(v)
      dd_result_av(ctx, &v->av);
    return SQLITE_OK;
  }
  if(!pCur->pCur)
    return SQLITE_OK;
  if(pCur->bFresh && !pCur->bRowRead && i != DD_COL_KEYS(p) &&
     !sqlite3_vtab_nochange(ctx) && !(i < p->nCol && dd_col_is_key(p, i)))
    pCur->bRowRead = 1; /* a value other than the key: see bDepends */
  if(i < p->nCol) {
    /* NULL outside the index's gate (in an UPDATE: unchanged) */
    av = dd_col_av(p, pCur->pCur, i);
    if(av)
      dd_result_av(ctx, av);
    return SQLITE_OK;
  }
  if(i == DD_COL_KEYS(p)) {
    /* keys: the list given to keys = ? (SQLite may compare it); in an
    ** UPDATE that does not set it, unchanged (dynamodbUpdate refuses a value) */
    if(pCur->pKeys && !sqlite3_vtab_nochange(ctx))
      sqlite3_result_value(ctx, pCur->pKeys);
    return SQLITE_OK;
  }
  /* an UPDATE that does not change item: do not render it */
  if(sqlite3_vtab_nochange(ctx))
    return SQLITE_OK;
  if(i == p->nCol) {
    /* item: the whole item as plain JSON, rendered once per row */
    if(!pCur->zItem && dd_item_json(pCur))
      return SQLITE_NOMEM;
    /* NUL-terminated, no NUL inside (-1): SQLite need not copy it again
    ** to terminate it for json_extract or length */
    sqlite3_result_text(ctx, pCur->zItem, -1, SQLITE_TRANSIENT);
  } else {
    /* item_raw: DynamoDB's typed JSON */
    ddb_buf b;
    char *z;
    size_t n;
    ddb_buf_init(&b, DDB_JSON_MAX);
    ddb_item_to_typed_json(pCur->pCur, &b);
    z = ddb_buf_take(&b, &n);
    if(!z)
      return SQLITE_NOMEM;
    sqlite3_result_text64(ctx, z, n, free, SQLITE_UTF8);
  }
  return SQLITE_OK;
}

/* See dd_ext.h. */
int dynamodbRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid) {
  dd_cursor *pCur = (dd_cursor *)cur;
  dd_vtab *p = (dd_vtab *)cur->pVtab;
  if(pCur->bCount) {
    /* counted rows have no key: hash the partition and the row's place,
    ** the same in every run of the same plan */
    const dd_val *v = pCur->nPk ? &pCur->aPk[pCur->iPk] : NULL;
    uint64_t h = 0xcbf29ce484222325ULL;
    uint32_t k;
    for(k = 0; v && k < v->av.n; k++)
      h = (h ^ (unsigned char)v->av.text[k]) * 0x100000001b3ULL;
    h = (h ^ (uint64_t)pCur->nEmitted) * 0x100000001b3ULL;
    *pRowid = (sqlite3_int64)(h >> 1);
    return SQLITE_OK;
  }
  if(pCur->bView && !pCur->pCur) {
    int bNomem = 0;
    if(!dd_view_item(pCur, &bNomem) && bNomem)
      return SQLITE_NOMEM;
  }
  *pRowid = pCur->pCur ? dd_key_rowid(p, pCur->pCur) : 0;
  /* in a write transaction, an UPDATE or DELETE will name this row by its
  ** rowid: remember the item, and whether it was chosen on more than its
  ** key */
  return pCur->pCur ? dd_remember_row(p, *pRowid, pCur->pCur,
                                      pCur->bDepends || pCur->bRowRead)
                    : SQLITE_OK;
}
