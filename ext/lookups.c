/*
** lookups.c -- the lookups by key of xFilter: the values of a key's = and
** IN collected (converted, checked, deduplicated), GetItem and
** BatchGetItem of them (the item cache asked first for one key, the hot
** path of a join), and keys = ? (a key list read, then the transaction's
** images of those keys).
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "cursor.h" /* and multikey.h, dd_ext.h */

/* Append v (moved) to the list *pa of *pn values: its first value in
** pOne (one value: no allocation), then in sqlite3_malloc()ed room. */
static int dd_add_val(dd_val **pa, int *pn, dd_val *pOne, dd_val *v) {
  dd_val *a;
  if(*pn == 0 && (!*pa || *pa == pOne)) {
    *pa = pOne;
  } else if(*pa == pOne) {
    if(!(a = sqlite3_malloc64(sizeof(dd_val) * 2))) {
      dd_val_clear(v);
      return SQLITE_NOMEM;
    }
    a[0] = *pOne;
    *pa = a;
  } else if(*pn > 0 && (*pn & (*pn - 1)) == 0) {
    /* grow by doubling: capacity is the next power of two >= *pn */
    a = sqlite3_realloc64(*pa, sizeof(dd_val) * (sqlite3_uint64)*pn * 2);
    if(!a) {
      dd_val_clear(v);
      return SQLITE_NOMEM;
    }
    *pa = a;
  }
  a = *pa;
  a[(*pn)++] = *v;
  memset(v, 0, sizeof(*v));
  return SQLITE_OK;
}

/* Drop repeated values from a[0..*pn): sorts, then keeps one of each
** (O(n log n); an IN list may hold thousands of keys). */
static void dd_dedupe(dd_val *a, int *pn) {
  int i, j;
  if(*pn < 2)
    return;
  qsort(a, (size_t)*pn, sizeof(dd_val), dd_val_order);
  for(i = 1, j = 0; i < *pn; i++) {
    if(dd_val_order(&a[i], &a[j]) == 0)
      dd_val_clear(&a[i]);
    else
      a[++j] = a[i];
  }
  *pn = j + 1;
}

/* May the REAL d in an IN list on an N key be a longer number SQLite
** rounded?  SQLite converts the values of an IN list by the column's
** NUMERIC affinity before the extension sees them, so the text
** '12345678901234567890123456789012345678' arrives as the REAL
** 1.2345678901234568e+37, and no digit of it can be had back.  A REAL of
** more than 15 significant digits, or a whole one from 2^53 on (its
** neighbours are 2 apart), may be such a rounding; the others are what a
** text of at most 15 digits converts to, without loss.  (A longer text
** that rounds to a short double, '1.0000000000000001', cannot be told.) */
static int dd_real_ambiguous(double d) {
  char z[64];
  if(d == floor(d))
    return fabs(d) >= 9007199254740992.0;
  if(ddb_number_from_double(d, z, sizeof(z)))
    return 0; /* out of DynamoDB's range: finds nothing anyway */
  return ddb_number_classify(z, strlen(z), NULL, NULL) == DDB_NUM_TEXT;
}

/* See cursor.h. */
int dd_collect(dd_vtab *p, int c, dd_val **pa, int *pn, dd_val *pOne,
               sqlite3_value *pArg, int bIn, int nMax) {
  ddb_type t = p->aCol[c].type;
  sqlite3_value *pV;
  dd_val v;
  int ok, rc;
  if(!bIn) {
    rc = dd_val_from_sql(pArg, t, &v, &ok);
    if(rc == SQLITE_OK && ok)
      rc = dd_key_fits(&v, nMax) ? dd_add_val(pa, pn, pOne, &v) : dd_drop(&v);
    return rc;
  }
  for(rc = sqlite3_vtab_in_first(pArg, &pV); rc == SQLITE_OK && pV;
      rc = sqlite3_vtab_in_next(pArg, &pV)) {
    /* pV is valid only until the next call: dd_val_from_sql copies it */
    int rc2;
    if(t == DDB_N && sqlite3_value_type(pV) == SQLITE_FLOAT &&
       dd_real_ambiguous(sqlite3_value_double(pV))) {
      char z[32];
      snprintf(z, sizeof(z), "%.17g", sqlite3_value_double(pV));
      dd_error(p,
               "%s IN (...): %s may be a longer number rounded to a double "
               "(SQLite turns the values of an IN list into REAL by the "
               "column's NUMERIC affinity, keeping 15 to 17 digits, before "
               "the extension sees them); for every digit write %s = "
               "'<digits>' (UNION ALL for several) or give the keys to the "
               "keys column, the number as a JSON string",
               p->aCol[c].zName, z, p->aCol[c].zName);
      return SQLITE_ERROR;
    }
    rc2 = dd_val_from_sql(pV, t, &v, &ok);
    if(rc2 == SQLITE_OK && ok)
      rc2 = dd_key_fits(&v, nMax) ? dd_add_val(pa, pn, pOne, &v) : dd_drop(&v);
    if(rc2)
      return rc2;
  }
  if(rc == SQLITE_DONE) {
    dd_dedupe(*pa, pn);
    rc = SQLITE_OK;
  }
  return rc;
}

/* A GetItem of the table key kv[0..p->nKey) (dd_key_avs) answered by the
** item cache, nothing copied or allocated (the hot path of a join; the
** one place that asks the cache for a GetItem's item).
** Returns 1 with the cursor's row set (the item, or none when the cache
** knows there is none); 0 on a miss, or when the table's policy does not
** use the cache (then the plan runs). */
static int dd_get_from_cache(dd_cursor *pCur, const ddb_av *kv) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  ddb_item *it = NULL;
  if(!ddbc_item_cached(p->pClient, p->pDesc->name, kv, p->nKey, &pCur->pol,
                       &it))
    return 0;
  pCur->op = DD_OP_GET;
  pCur->pPath = &p->aPath[0];
  pCur->aRow = pCur->aRowOne;
  pCur->aRowOne[0] = it;
  pCur->nRow = it ? 1 : 0;
  pCur->iRow = 0;
  pCur->bEof = 0;
  return 1;
}

/* See cursor.h. */
int dd_run_keys(dd_cursor *pCur, dd_val *aSk, int nSk) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  int nKeys = pCur->nPk * (p->nKey == 2 ? nSk : 1);
  ddb_item **aKey = NULL, **aFound = NULL, *aOne[2]; /* one key: no malloc */
  ddb_error err;
  int i, j, k = 0, rc = SQLITE_OK;

  ddb_error_clear(&err);
  if(nKeys == 0) {
    pCur->bEof = 1;
    return SQLITE_OK;
  }
  if(pCur->op == DD_OP_GET && !pCur->bMissed) {
    ddb_av kv[2];
    dd_key_avs(p, &pCur->aPk[0].av, nSk ? &aSk[0].av : NULL, kv);
    if(dd_get_from_cache(pCur, kv))
      return SQLITE_OK;
  }
  aKey =
      nKeys == 1
          ? aOne
          : sqlite3_malloc64(sizeof(ddb_item *) * (sqlite3_uint64)nKeys * 2);
  if(!aKey)
    return SQLITE_NOMEM;
  memset(aKey, 0, sizeof(ddb_item *) * (size_t)nKeys * 2);
  aFound = aKey + nKeys;
  for(i = 0; i < pCur->nPk; i++) {
    for(j = 0; j < (p->nKey == 2 ? nSk : 1); j++) {
      aKey[k] = dd_key_item(p, &pCur->aPk[i].av, nSk ? &aSk[j].av : NULL);
      if(!aKey[k++]) {
        rc = SQLITE_NOMEM;
        goto fail;
      }
    }
  }
  if(pCur->op == DD_OP_GET) {
    if(ddbc_get_item(p->pClient, p->pDesc->name, aKey[0], p->azKey, p->nKey,
                     &pCur->pol, &aFound[0], &err)) {
      rc = dd_cursor_error(pCur, &err);
      goto fail;
    }
  } else if(dd_batch_get_parallel(pCur, aKey, nKeys, aFound, &err)) {
    rc = dd_cursor_error(pCur, &err);
    goto fail;
  }
  /* keep the found items, in key order */
  pCur->aRow =
      nKeys == 1
          ? pCur->aRowOne
          : sqlite3_malloc64(sizeof(ddb_item *) * (sqlite3_uint64)nKeys);
  if(!pCur->aRow) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  for(i = 0; i < nKeys; i++)
    if(aFound[i]) {
      pCur->aRow[pCur->nRow++] = aFound[i];
      aFound[i] = NULL;
    }

fail:
  for(i = 0; i < nKeys; i++) {
    ddb_item_unref(aKey[i]);
    ddb_item_unref(aFound[i]);
  }
  if(aKey != aOne)
    sqlite3_free(aKey);
  return rc;
}

/* A text key value read in place from v (valid during xFilter only), as
** dd_val_from_sql would convert it for an S key, into *out (unnamed);
** 0 if v is not such a value (then the general path decides). */
static int dd_text_key(sqlite3_value *v, ddb_av *out) {
  int e = sqlite3_value_type(v), n;
  const unsigned char *z;
  if(e != SQLITE_TEXT)
    return 0;
  z = sqlite3_value_text(v);
  n = sqlite3_value_bytes(v);
  if(!z || n == 0 || !dd_utf8_ok(z, n))
    return 0;
  memset(out, 0, sizeof(*out));
  out->type = DDB_S;
  out->text = (const char *)z;
  out->n = (uint32_t)n;
  return 1;
}

/* Keep the key values kv[0..p->nKey) (S) of a warm lookup in the cursor
** (zKeyBuf), for the key columns of its row.  Returns 0, or -1 when out
** of memory. */
static int dd_keep_key(dd_cursor *pCur, const ddb_av *kv, int nKey) {
  int n = (int)kv[0].n + 1 + (nKey == 2 ? (int)kv[1].n + 1 : 0), i;
  char *z;
  if(n > pCur->nKeyBuf) {
    z = sqlite3_realloc(pCur->zKeyBuf, n < 64 ? 64 : n);
    if(!z)
      return -1;
    pCur->zKeyBuf = z;
    pCur->nKeyBuf = n < 64 ? 64 : n;
  }
  z = pCur->zKeyBuf;
  pCur->bKeyNul = 0;
  for(i = 0; i < nKey; i++) {
    memcpy(z, kv[i].text, kv[i].n);
    z[kv[i].n] = 0;
    pCur->aKeyLen[i] = (int)kv[i].n;
    pCur->bKeyNul |= memchr(z, 0, kv[i].n) != NULL;
    z += kv[i].n + 1;
  }
  return 0;
}

/* Does the plan read the item column (dd_extra.mUsed; 63 and beyond share
** colUsed's last bit)? */
static int dd_reads_item(const dd_vtab *p, sqlite3_uint64 mUsed) {
  return (mUsed >> (p->nCol < 63 ? p->nCol : 63)) & 1;
}

/* What dd_view_from_cache did: answered (the cursor's row set), asked the
** cache in vain, or did not ask. */
#define DD_VIEW_HIT     1
#define DD_VIEW_MISS    0
#define DD_VIEW_UNASKED (-1)

/* A GetItem of the table key kv[0..p->nKey) answered by the item cache
** without unpacking its item: the entry copied into the cursor's view,
** with its JSON when the plan reads the item column (bView, dd_view_item).
** Returns DD_VIEW_HIT with the cursor's row set (or none when the cache
** knows there is no such item); DD_VIEW_MISS when the cache had no entry
** it could copy out (the plan runs, and ddbc_get_item asks the cache
** again, for the item itself); DD_VIEW_UNASKED when ttl=hide must read
** the row or the transaction keeps the key. */
static int dd_view_from_cache(dd_cursor *pCur, const ddb_av *kv) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  int want = dd_reads_item(p, pCur->xPlan.mUsed) ? DDBC_VIEW_JSON : 0;
  if(pCur->zTtl || dd_keep_key(pCur, kv, p->nKey))
    return DD_VIEW_UNASKED;
  if(!ddbc_item_view_cached(p->pClient, p->pDesc->name, kv, p->nKey,
                            &pCur->pol, want, &pCur->view))
    return DD_VIEW_MISS;
  if(!(want & DDBC_VIEW_JSON))
    pCur->view.json_len = 0;
  pCur->op = DD_OP_GET;
  pCur->pPath = &p->aPath[0];
  pCur->aRow = pCur->aRowOne;
  pCur->aRowOne[0] = NULL; /* unpacked when needed (dd_view_item) */
  pCur->nRow = pCur->view.found ? 1 : 0;
  pCur->iRow = 0;
  pCur->bEof = 0;
  pCur->bView = pCur->view.found ? 2 : 0;
  return DD_VIEW_HIT;
}

/* See cursor.h. */
int dd_get_cached(dd_cursor *pCur, int argc, sqlite3_value **argv) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  ddb_av kv[2];
  if(argc < p->nKey || p->aCol[p->aPath[0].iPk].type != DDB_S ||
     !dd_text_key(argv[0], &kv[0]))
    return 0;
  if(p->nKey == 2 &&
     (p->aCol[p->aPath[0].iSk].type != DDB_S || !dd_text_key(argv[1], &kv[1])))
    return 0;
  dd_key_avs(p, &kv[0], &kv[1], kv); /* named in place */
  switch(dd_view_from_cache(pCur, kv)) {
  case DD_VIEW_HIT: return 1;
  case DD_VIEW_MISS: pCur->bMissed = 1; return 0; /* asked once is enough */
  default: return dd_get_from_cache(pCur, kv);
  }
}

/* See cursor.h. */
int dd_run_key_list(dd_cursor *pCur, ddb_item **aKey, int nKey) {
  ddb_item **aFound = NULL;
  ddb_error err;
  int i, rc = SQLITE_OK;

  ddb_error_clear(&err);
  if(nKey == 0) {
    pCur->bEof = 1;
    goto fail;
  }
  aFound = sqlite3_malloc64(sizeof(*aFound) * (sqlite3_uint64)nKey);
  pCur->aRow = sqlite3_malloc64(sizeof(*aFound) * (sqlite3_uint64)nKey);
  if(!aFound || !pCur->aRow) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  memset(aFound, 0, sizeof(*aFound) * (size_t)nKey);
  if(dd_batch_get_parallel(pCur, aKey, nKey, aFound, &err)) {
    rc = dd_cursor_error(pCur, &err);
    goto fail;
  }
  for(i = 0; i < nKey; i++)
    if(aFound[i]) {
      pCur->aRow[pCur->nRow++] = aFound[i];
      aFound[i] = NULL;
    }
  /* read your writes: the transaction's image of each key */
  rc = dd_overlay_start(pCur, NULL, 0, aKey, nKey);

fail:
  for(i = 0; i < nKey; i++) {
    ddb_item_unref(aKey[i]);
    if(aFound)
      ddb_item_unref(aFound[i]);
  }
  sqlite3_free(aKey);
  sqlite3_free(aFound);
  return rc;
}
