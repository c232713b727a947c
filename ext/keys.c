/*
** keys.c -- the hidden column keys: parsing the JSON key list of
** keys = ? into table keys.
*/
#include <stdlib.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "dd_ext.h"

/*
** keys = ?: a join on the full key as one BatchGetItem plan
**
** The hidden column keys takes a JSON array of table keys, each
** [PK, SK] (or {"PK": .., "SK": ..} by attribute name; a table without a
** sort key also takes a plain value or [PK]).  A value is a JSON string
** for an S key (every byte, \u0000 included), a JSON number or a string
** holding a number for N (every digit kept), base64 text for B; it
** converts as PK = ? would, so a value no key can hold (an empty string,
** a number DynamoDB cannot hold, a key over the length limits) finds
** nothing, as the join does.  A key of another shape or type is an error
** naming it.
*/
#define DD_MAX_KEYS 1000000

typedef struct dd_keypair {
  dd_val pk, sk;
} dd_keypair;

/* Order of key pairs for dd_keys_parse's duplicates. */
static int dd_keypair_order(const void *pa, const void *pb) {
  const dd_keypair *a = pa, *b = pb;
  int c = dd_val_order(&a->pk, &b->pk);
  if(c || (!a->sk.av.text && !b->sk.av.text))
    return c; /* no sort key (memcmp must not see NULL) */
  return dd_val_order(&a->sk, &b->sk);
}

/* The key list as tokens (ddb_jv, client/jsonval.c): the list is parsed
** here, not by SQLite's JSON functions, which cut a string at \u0000 (3.40:
** json_extract('["p0\u0000x"]', '$[0]') is 'p0', another key) and read a
** number as a double (38 digits are not one). */

/* Append token i of j to s as compact JSON, for messages: strings and
** numbers as written, containers without white space. */
static void dd_keys_render(sqlite3_str *s, const ddb_jv *j, uint32_t i) {
  size_t n;
  const char *z;
  uint32_t k, m, e;
  switch(ddb_jv_type_of(j, i)) {
  case DDB_JV_ARRAY:
  case DDB_JV_OBJECT: {
    int bObj = ddb_jv_type_of(j, i) == DDB_JV_OBJECT;
    sqlite3_str_appendchar(s, 1, bObj ? '{' : '[');
    for(k = 0, m = i + 1, e = ddb_jv_count(j, i); k < e; k++) {
      if(k)
        sqlite3_str_appendchar(s, 1, ',');
      if(bObj) {
        dd_keys_render(s, j, m);
        sqlite3_str_appendchar(s, 1, ':');
        m++;
      }
      dd_keys_render(s, j, m);
      m = ddb_jv_next(j, m);
    }
    sqlite3_str_appendchar(s, 1, bObj ? '}' : ']');
    return;
  }
  case DDB_JV_STRING:
    z = ddb_jv_raw(j, i, &n);
    sqlite3_str_appendf(s, "\"%.*s\"", (int)n, z);
    return;
  default: z = ddb_jv_raw(j, i, &n); sqlite3_str_appendf(s, "%.*s", (int)n, z);
  }
}

/* The value token of member zName (bytes, NUL-terminated) of object i,
** or 0 when there is none (token 0 is the list: never a member). */
static uint32_t dd_keys_member(const ddb_jv *j, uint32_t i, const char *zName,
                               int *pbNoMem) {
  uint32_t k, m, e;
  size_t nName = strlen(zName);
  for(k = 0, m = i + 1, e = ddb_jv_count(j, i); k < e; k++) {
    size_t n;
    char *z = ddb_jv_string(j, m, &n);
    int bSame = z && n == nName && memcmp(z, zName, n) == 0;
    if(!z) {
      *pbNoMem = 1;
      return 0;
    }
    free(z);
    if(bSame)
      return m + 1;
    m = ddb_jv_next(j, m + 1);
  }
  return 0;
}

/* An N key value from the text z[0..n) of a JSON string: white space
** around it, as NUMERIC affinity allows, and every digit kept, into v
** (*pbOk=0: a number DynamoDB cannot hold, which finds nothing).  Returns
** SQLITE_OK, SQLITE_ERROR with *pzWhy set when it is no number,
** SQLITE_NOMEM. */
static int dd_keys_n_text(const char *z, size_t n, dd_val *v, int *pbOk,
                          const char **pzWhy) {
  const char *zNum = z;
  size_t nNum = n;
  int rc;
  while(nNum &&
        (*zNum == ' ' || *zNum == '\t' || *zNum == '\n' || *zNum == '\r'))
    zNum++, nNum--;
  while(nNum && (zNum[nNum - 1] == ' ' || zNum[nNum - 1] == '\t' ||
                 zNum[nNum - 1] == '\n' || zNum[nNum - 1] == '\r'))
    nNum--;
  if(nNum && *zNum == '+')
    zNum++, nNum--;
  if(!ddb_number_ok(zNum, nNum) || (nNum && zNum[0] == '+')) {
    *pzWhy = "must be a JSON number (N key)";
    return SQLITE_ERROR;
  }
  if(!ddb_number_fits(zNum, nNum))
    return SQLITE_OK;
  rc = dd_val_text(v, DDB_N, zNum, (int)nNum);
  *pbOk = rc == SQLITE_OK;
  return rc;
}

/* A B key value from the base64 text z[0..n): kept canonical, and its
** bytes for ordering, into v (*pbOk=0: empty, which no key is).  Returns
** SQLITE_OK, SQLITE_ERROR with *pzWhy set when it is not base64,
** SQLITE_NOMEM. */
static int dd_keys_b_text(const char *z, size_t n, dd_val *v, int *pbOk,
                          const char **pzWhy) {
  size_t cap = n / 4 * 3 + 3, nRaw;
  if(n == 0)
    return SQLITE_OK;
  v->zBuf = malloc(n + 1 + cap);
  if(!v->zBuf)
    return SQLITE_NOMEM;
  nRaw = ddb_base64_decode(z, n, (unsigned char *)v->zBuf + n + 1, cap);
  if(nRaw == (size_t)-1 ||
     ddb_base64_encode((unsigned char *)v->zBuf + n + 1, nRaw, v->zBuf,
                       n + 1) == (size_t)-1) {
    dd_val_clear(v);
    *pzWhy = "is not base64 (B key)";
    return SQLITE_ERROR;
  }
  v->av.type = DDB_B;
  v->av.text = v->zBuf;
  v->av.n = (uint32_t)strlen(v->zBuf);
  v->raw = (const unsigned char *)v->zBuf + n + 1;
  v->nRaw = (int)nRaw;
  *pbOk = nRaw > 0;
  return SQLITE_OK;
}

/* One key value: token i of j (0: missing) to column c's type into v.
** Returns SQLITE_OK (*pbOk=0: no key can equal it), or SQLITE_ERROR with
** *pzWhy set to what is wrong (static text); SQLITE_NOMEM. */
static int dd_keys_val(dd_vtab *p, int c, const ddb_jv *j, uint32_t i,
                       dd_val *v, int *pbOk, const char **pzWhy) {
  ddb_type t = p->aCol[c].type;
  ddb_jv_type jt = i ? ddb_jv_type_of(j, i) : DDB_JV_NULL;
  char *z = NULL;
  size_t n = 0;
  int rc = SQLITE_OK;
  memset(v, 0, sizeof(*v));
  *pbOk = 0;
  if(!i) {
    *pzWhy = "missing";
    return SQLITE_ERROR;
  }
  if(jt != DDB_JV_STRING && (t != DDB_N || jt != DDB_JV_NUMBER)) {
    *pzWhy = t == DDB_S   ? "must be a JSON string (S key)"
             : t == DDB_N ? "must be a JSON number (N key)"
                          : "must be base64 text (B key)";
    return SQLITE_ERROR;
  }
  if(jt == DDB_JV_NUMBER) {
    /* every digit as written; a number DynamoDB cannot hold finds
    ** nothing, as PK = ? does */
    const char *zNum = ddb_jv_raw(j, i, &n);
    if(!ddb_number_fits(zNum, n))
      return SQLITE_OK;
    rc = dd_val_text(v, DDB_N, zNum, (int)n);
    *pbOk = rc == SQLITE_OK;
    return rc;
  }
  z = ddb_jv_string(j, i, &n);
  if(!z)
    return SQLITE_NOMEM;
  if(n > 0x7fffffff) {
    rc = SQLITE_TOOBIG;
  } else if(t == DDB_S) {
    /* every byte, a NUL included; no key is empty or invalid UTF-8 */
    if(n > 0 && dd_utf8_ok((const unsigned char *)z, (int)n)) {
      rc = dd_val_text(v, DDB_S, z, (int)n);
      *pbOk = rc == SQLITE_OK;
    }
  } else if(t == DDB_N) {
    /* a number in a string */
    rc = dd_keys_n_text(z, n, v, pbOk, pzWhy);
  } else {
    rc = dd_keys_b_text(z, n, v, pbOk, pzWhy);
  }
  free(z);
  return rc;
}

/* The error for key iKey (token i of j) of the list: "keys: key N (..)
** zWhat zWhy", or, without zWhat, the shape expected. */
static void dd_keys_bad(dd_vtab *p, const ddb_jv *j, uint32_t i, int iKey,
                        const char *zWhat, const char *zWhy) {
  sqlite3_str *s = sqlite3_str_new(0);
  char *zKey;
  dd_keys_render(s, j, i);
  zKey = sqlite3_str_finish(s);
  if(zWhat)
    dd_error(p, "keys: key %d (%.60s): %s %s", iKey, zKey ? zKey : "", zWhat,
             zWhy);
  else if(p->nKey == 2)
    dd_error(p,
             "keys: key %d (%.60s) %s: expected [%s, %s] or "
             "{\"%s\": .., \"%s\": ..}",
             iKey, zKey ? zKey : "", zWhy, p->azKey[0], p->azKey[1],
             p->azKey[0], p->azKey[1]);
  else
    dd_error(p,
             "keys: key %d (%.60s) %s: expected a value, [%s] or "
             "{\"%s\": ..}",
             iKey, zKey ? zKey : "", zWhy, p->azKey[0], p->azKey[0]);
  sqlite3_free(zKey);
}

/* The list as tokens: *pj (ddb_jv_free) and its number of keys, from
** pList's text.  Returns SQLITE_OK; SQLITE_ERROR with p's message set when
** it is no JSON array, or too long; SQLITE_NOMEM. */
static int dd_keys_open(dd_vtab *p, sqlite3_value *pList, ddb_jv **pj,
                        uint32_t *pnKeys) {
  const char *zList = (const char *)sqlite3_value_text(pList);
  int nList = sqlite3_value_bytes(pList);
  ddb_result jr;
  *pj = NULL;
  if(!zList)
    return SQLITE_NOMEM;
  jr = ddb_jv_parse(zList, (size_t)nList, pj);
  if(jr == DDB_ERR_NOMEM)
    return SQLITE_NOMEM;
  if(jr != DDB_OK || ddb_jv_type_of(*pj, 0) != DDB_JV_ARRAY) {
    dd_error(p,
             "keys: not a JSON array of keys: '%.60s' (expected e.g. "
             "[[\"pk1\", \"sk1\"], ...] or [{\"%s\": ...}, ...])",
             zList, p->azKey[0]);
    return SQLITE_ERROR;
  }
  *pnKeys = ddb_jv_count(*pj, 0);
  if(*pnKeys > DD_MAX_KEYS) {
    dd_error(p, "keys: more than %d keys", DD_MAX_KEYS);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/* Key iKey of the list, token e of j: its values into *kp (dd_val_clear
** each), *pbKeep=0 when no item can have it (a value no key holds, a key
** over the length limits: it finds nothing).  Returns SQLITE_OK;
** SQLITE_ERROR with p's message naming the key when it has the wrong
** shape or a value of the wrong type; SQLITE_NOMEM.  On error kp holds
** nothing. */
static int dd_keys_one(dd_vtab *p, const ddb_jv *j, uint32_t e, int iKey,
                       dd_keypair *kp, int *pbKeep) {
  ddb_jv_type jt = ddb_jv_type_of(j, e);
  int bArr = jt == DDB_JV_ARRAY, bObj = jt == DDB_JV_OBJECT;
  int nPart = bArr || bObj ? (int)ddb_jv_count(j, e) : 0;
  uint32_t aTok[2] = {0, 0};
  int ok0 = 0, ok1 = 1, bNoMem = 0, k, rc = SQLITE_OK;
  memset(kp, 0, sizeof(*kp));
  *pbKeep = 0;
  if((bArr || bObj) ? nPart != p->nKey : p->nKey != 1) {
    dd_keys_bad(p, j, e, iKey, NULL, "has the wrong shape");
    return SQLITE_ERROR;
  }
  for(k = 0; k < p->nKey; k++) {
    if(bArr)
      aTok[k] = k == 0 ? e + 1 : ddb_jv_next(j, e + 1);
    else if(bObj)
      aTok[k] = dd_keys_member(j, e, p->azKey[k], &bNoMem);
    else
      aTok[k] = e; /* a plain value: the partition key */
  }
  if(bNoMem)
    return SQLITE_NOMEM;
  for(k = 0; k < p->nKey && rc == SQLITE_OK; k++) {
    const char *zWhy = "";
    rc = dd_keys_val(p, k == 0 ? p->aPath[0].iPk : p->aPath[0].iSk, j, aTok[k],
                     k == 0 ? &kp->pk : &kp->sk, k == 0 ? &ok0 : &ok1, &zWhy);
    if(rc == SQLITE_ERROR)
      dd_keys_bad(p, j, e, iKey, p->azKey[k], zWhy);
  }
  if(rc == SQLITE_OK && ok0 && ok1 && dd_key_fits(&kp->pk, DD_MAX_PK_BYTES) &&
     (p->nKey == 1 || dd_key_fits(&kp->sk, DD_MAX_SK_BYTES))) {
    *pbKeep = 1;
    return SQLITE_OK;
  }
  dd_val_clear(&kp->pk);
  dd_val_clear(&kp->sk);
  return rc;
}

/* Append kp (moved) to the list *pa of *pn pairs (room for *pnAlloc).
** Returns SQLITE_OK, or SQLITE_NOMEM (kp cleared). */
static int dd_keys_add(dd_keypair **pa, int *pn, int *pnAlloc,
                       dd_keypair *kp) {
  if(*pn == *pnAlloc) {
    int nAlloc = *pnAlloc ? *pnAlloc * 2 : 64;
    dd_keypair *aNew =
        sqlite3_realloc64(*pa, sizeof(**pa) * (sqlite3_uint64)nAlloc);
    if(!aNew) {
      dd_val_clear(&kp->pk);
      dd_val_clear(&kp->sk);
      return SQLITE_NOMEM;
    }
    *pa = aNew;
    *pnAlloc = nAlloc;
  }
  (*pa)[(*pn)++] = *kp;
  return SQLITE_OK;
}

/* The distinct keys of a[0..n) (sorted here: BatchGetItem refuses the
** same key twice) as key items: *paKey (sqlite3_free(), each
** ddb_item_unref()) of *pnKey.  Returns SQLITE_OK or SQLITE_NOMEM (then
** nothing is returned). */
static int dd_keys_items(dd_vtab *p, dd_keypair *a, int n, ddb_item ***paKey,
                         int *pnKey) {
  ddb_item **aKey;
  int i, nKey = 0;
  if(n > 1)
    qsort(a, (size_t)n, sizeof(*a), dd_keypair_order);
  aKey = sqlite3_malloc64(sizeof(*aKey) * (sqlite3_uint64)(n ? n : 1));
  if(!aKey)
    return SQLITE_NOMEM;
  for(i = 0; i < n; i++) {
    if(i > 0 && dd_keypair_order(&a[i], &a[i - 1]) == 0)
      continue;
    aKey[nKey] = dd_key_item(p, &a[i].pk.av, &a[i].sk.av);
    if(!aKey[nKey]) {
      while(nKey > 0)
        ddb_item_unref(aKey[--nKey]);
      sqlite3_free(aKey);
      return SQLITE_NOMEM;
    }
    nKey++;
  }
  *paKey = aKey;
  *pnKey = nKey;
  return SQLITE_OK;
}

/* Parse the key list pList (the argument of keys = ?) into table keys:
** *paKey (sqlite3_free(), each ddb_item_unref()) of *pnKey distinct keys,
** in key order.  Keys no item can have are left out.  Returns SQLITE_OK;
** SQLITE_ERROR with the vtab's message set when the list or a key is
** malformed, naming it; SQLITE_NOMEM. */
int dd_keys_parse(dd_vtab *p, sqlite3_value *pList, ddb_item ***paKey,
                  int *pnKey) {
  ddb_jv *j = NULL;
  dd_keypair *a = NULL;
  int n = 0, nAlloc = 0, i, rc;
  uint32_t iKey, nKeys = 0, e;
  *paKey = NULL;
  *pnKey = 0;
  if(sqlite3_value_type(pList) == SQLITE_NULL)
    return SQLITE_OK; /* keys = NULL: no row, as PK = NULL */
  rc = dd_keys_open(p, pList, &j, &nKeys);
  for(iKey = 0, e = 1; rc == SQLITE_OK && iKey < nKeys;
      iKey++, e = ddb_jv_next(j, e)) {
    dd_keypair kp;
    int bKeep;
    rc = dd_keys_one(p, j, e, (int)iKey, &kp, &bKeep);
    if(rc == SQLITE_OK && bKeep)
      rc = dd_keys_add(&a, &n, &nAlloc, &kp);
  }
  if(rc == SQLITE_OK)
    rc = dd_keys_items(p, a, n, paKey, pnKey);
  ddb_jv_free(j);
  for(i = 0; i < n; i++) {
    dd_val_clear(&a[i].pk);
    dd_val_clear(&a[i].sk);
  }
  sqlite3_free(a);
  return rc;
}
