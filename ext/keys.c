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
** for an S key, a JSON number (or a string holding a number, for more
** digits than 64 bits) for N, base64 text for B; it converts as PK = ?
** would, so a value no key can hold (an empty string, a number DynamoDB
** cannot hold, a key over the length limits) finds nothing, as the join
** does.  A key of another shape or type is an error naming it.
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

/* One key value: pVal (from json_extract, of JSON type zType) to column
** c's type into v.  Returns SQLITE_OK (*pbOk=0: no key can equal it), or
** SQLITE_ERROR with *pzWhy set to what is wrong (static text). */
static int dd_keys_val(dd_vtab *p, int c, sqlite3_value *pVal,
                       const char *zType, dd_val *v, int *pbOk,
                       const char **pzWhy) {
  ddb_type t = p->aCol[c].type;
  int bText = zType && strcmp(zType, "text") == 0;
  int bNum =
      zType && (strcmp(zType, "integer") == 0 || strcmp(zType, "real") == 0);
  memset(v, 0, sizeof(*v));
  *pbOk = 0;
  if(!zType) {
    *pzWhy = "missing";
    return SQLITE_ERROR;
  }
  if(t == DDB_S && !bText) {
    *pzWhy = "must be a JSON string (S key)";
    return SQLITE_ERROR;
  }
  if(t == DDB_N && !bNum && !bText) {
    *pzWhy = "must be a JSON number (N key)";
    return SQLITE_ERROR;
  }
  if(t == DDB_B) {
    const char *z = (const char *)sqlite3_value_text(pVal);
    int n = sqlite3_value_bytes(pVal);
    size_t cap = (size_t)n / 4 * 3 + 3, nRaw;
    if(!bText || !z) {
      *pzWhy = "must be base64 text (B key)";
      return SQLITE_ERROR;
    }
    if(n == 0)
      return SQLITE_OK;
    v->zBuf = malloc((size_t)n + 1 + cap);
    if(!v->zBuf)
      return SQLITE_NOMEM;
    nRaw =
        ddb_base64_decode(z, (size_t)n, (unsigned char *)v->zBuf + n + 1, cap);
    if(nRaw == (size_t)-1) {
      dd_val_clear(v);
      *pzWhy = "is not base64 (B key)";
      return SQLITE_ERROR;
    }
    /* canonical base64 of the bytes, and the bytes, for ordering */
    if(ddb_base64_encode((unsigned char *)v->zBuf + n + 1, nRaw, v->zBuf,
                         (size_t)n + 1) == (size_t)-1) {
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
  if(t == DDB_N && bText) {
    int rc = dd_val_from_sql(pVal, t, v, pbOk);
    if(rc == SQLITE_OK && !*pbOk) {
      *pzWhy = "must be a JSON number (N key)";
      return SQLITE_ERROR;
    }
    return rc;
  }
  return dd_val_from_sql(pVal, t, v, pbOk);
}

/* Parse the key list pList (the argument of keys = ?) into table keys:
** *paKey (sqlite3_free(), each ddb_item_unref()) of *pnKey distinct keys,
** in key order.  Keys no item can have are left out.  Returns SQLITE_OK;
** SQLITE_ERROR with the vtab's message set when the list or a key is
** malformed, naming it. */
int dd_keys_parse(dd_vtab *p, sqlite3_value *pList, ddb_item ***paKey,
                  int *pnKey) {
  static const char zSql[] =
      "SELECT e.key, json_quote(e.value),"
      " CASE e.type WHEN 'array' THEN json_array_length(e.value)"
      "  WHEN 'object' THEN (SELECT count(*) FROM json_each(e.value))"
      "  ELSE 0 END,"
      " CASE e.type WHEN 'array' THEN json_type(e.value, '$[0]')"
      "  WHEN 'object' THEN json_type(e.value, ?2) ELSE e.type END,"
      " CASE e.type WHEN 'array' THEN json_extract(e.value, '$[0]')"
      "  WHEN 'object' THEN json_extract(e.value, ?2) ELSE e.value END,"
      " CASE e.type WHEN 'array' THEN json_type(e.value, '$[1]')"
      "  WHEN 'object' THEN json_type(e.value, ?3) END,"
      " CASE e.type WHEN 'array' THEN json_extract(e.value, '$[1]')"
      "  WHEN 'object' THEN json_extract(e.value, ?3) END,"
      " e.type"
      " FROM json_each(CASE WHEN json_valid(?1) AND json_type(?1) = 'array'"
      "  THEN ?1 ELSE json_array(?1, 0) END) e";
  sqlite3_stmt *pStmt = NULL;
  dd_keypair *a = NULL;
  ddb_item **aKey = NULL;
  char *zPath[2] = {NULL, NULL};
  const char *zWhy = NULL;
  char *zWhat = NULL;
  int n = 0, nAlloc = 0, i, j, rc, bList;
  const char *zList;
  *paKey = NULL;
  *pnKey = 0;
  if(sqlite3_value_type(pList) == SQLITE_NULL)
    return SQLITE_OK; /* keys = NULL: no row, as PK = NULL */
  zList = (const char *)sqlite3_value_text(pList);
  if(!zList)
    return SQLITE_NOMEM;
  for(i = 0; i < p->nKey; i++) {
    zPath[i] = sqlite3_mprintf("$.\"%s\"", p->azKey[i]);
    if(!zPath[i]) {
      rc = SQLITE_NOMEM;
      goto fail;
    }
  }
  rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, NULL);
  if(rc)
    goto fail;
  sqlite3_bind_value(pStmt, 1, pList);
  sqlite3_bind_text(pStmt, 2, zPath[0], -1, SQLITE_STATIC);
  sqlite3_bind_text(pStmt, 3, p->nKey == 2 ? zPath[1] : "$", -1,
                    SQLITE_STATIC);
  bList = 1;
  {
    /* is it a JSON array at all?  (json_each would walk an object's
    ** members, and fail on malformed text with no word of where) */
    sqlite3_stmt *pChk = NULL;
    rc = sqlite3_prepare_v2(p->db,
                            "SELECT CASE WHEN json_valid(?1) THEN "
                            "json_type(?1) = 'array' ELSE 0 END",
                            -1, &pChk, NULL);
    if(rc)
      goto fail;
    sqlite3_bind_value(pChk, 1, pList);
    if(sqlite3_step(pChk) == SQLITE_ROW)
      bList = sqlite3_column_int(pChk, 0);
    rc = sqlite3_finalize(pChk);
    if(rc)
      goto fail;
  }
  if(!bList) {
    dd_error(p,
             "keys: not a JSON array of keys: '%.60s' (expected e.g. "
             "[[\"pk1\", \"sk1\"], ...] or [{\"%s\": ...}, ...])",
             zList, p->azKey[0]);
    rc = SQLITE_ERROR;
    goto fail;
  }
  while((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
    int iKey = sqlite3_column_int(pStmt, 0);
    int nPart = sqlite3_column_int(pStmt, 2);
    const char *zType = (const char *)sqlite3_column_text(pStmt, 7);
    int bArr = zType && strcmp(zType, "array") == 0;
    int bObj = zType && strcmp(zType, "object") == 0;
    int ok0 = 0, ok1 = 1;
    dd_keypair kp;
    memset(&kp, 0, sizeof(kp));
    if(n >= DD_MAX_KEYS) {
      dd_error(p, "keys: more than %d keys", DD_MAX_KEYS);
      rc = SQLITE_ERROR;
      goto fail;
    }
    if((bArr || bObj) ? nPart != p->nKey : p->nKey != 1) {
      zWhy = "has the wrong shape";
      goto bad;
    }
    rc = dd_keys_val(p, p->aPath[0].iPk, sqlite3_column_value(pStmt, 4),
                     (const char *)sqlite3_column_text(pStmt, 3), &kp.pk, &ok0,
                     &zWhy);
    if(rc == SQLITE_ERROR) {
      zWhat = sqlite3_mprintf("%s", p->azKey[0]);
      goto bad;
    }
    if(rc)
      goto fail;
    if(p->nKey == 2) {
      rc = dd_keys_val(p, p->aPath[0].iSk, sqlite3_column_value(pStmt, 6),
                       (const char *)sqlite3_column_text(pStmt, 5), &kp.sk,
                       &ok1, &zWhy);
      if(rc == SQLITE_ERROR) {
        dd_val_clear(&kp.pk);
        zWhat = sqlite3_mprintf("%s", p->azKey[1]);
        goto bad;
      }
      if(rc) {
        dd_val_clear(&kp.pk);
        goto fail;
      }
    }
    if(!ok0 || !ok1 || !dd_key_fits(&kp.pk, DD_MAX_PK_BYTES) ||
       (p->nKey == 2 && !dd_key_fits(&kp.sk, DD_MAX_SK_BYTES))) {
      dd_val_clear(&kp.pk); /* no item has this key: it finds nothing */
      dd_val_clear(&kp.sk);
      continue;
    }
    if(n == nAlloc) {
      dd_keypair *aNew;
      nAlloc = nAlloc ? nAlloc * 2 : 64;
      aNew = sqlite3_realloc64(a, sizeof(*a) * (sqlite3_uint64)nAlloc);
      if(!aNew) {
        dd_val_clear(&kp.pk);
        dd_val_clear(&kp.sk);
        rc = SQLITE_NOMEM;
        goto fail;
      }
      a = aNew;
    }
    a[n++] = kp;
    continue;
  bad:
    if(zWhat)
      dd_error(p, "keys: key %d (%.60s): %s %s", iKey,
               (const char *)sqlite3_column_text(pStmt, 1), zWhat, zWhy);
    else if(p->nKey == 2)
      dd_error(p,
               "keys: key %d (%.60s) %s: expected [%s, %s] or "
               "{\"%s\": .., \"%s\": ..}",
               iKey, (const char *)sqlite3_column_text(pStmt, 1), zWhy,
               p->azKey[0], p->azKey[1], p->azKey[0], p->azKey[1]);
    else
      dd_error(p,
               "keys: key %d (%.60s) %s: expected a value, [%s] or "
               "{\"%s\": ..}",
               iKey, (const char *)sqlite3_column_text(pStmt, 1), zWhy,
               p->azKey[0], p->azKey[0]);
    rc = SQLITE_ERROR;
    goto fail;
  }
  if(rc != SQLITE_DONE) {
    dd_error(p, "keys: %s", sqlite3_errmsg(p->db));
    rc = SQLITE_ERROR;
    goto fail;
  }
  rc = SQLITE_OK;
  /* the same key twice is one key (BatchGetItem refuses duplicates) */
  if(n > 1)
    qsort(a, (size_t)n, sizeof(*a), dd_keypair_order);
  aKey = sqlite3_malloc64(sizeof(*aKey) * (sqlite3_uint64)(n ? n : 1));
  if(!aKey) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  for(i = j = 0; i < n; i++) {
    ddb_av kv[2];
    if(i > 0 && dd_keypair_order(&a[i], &a[i - 1]) == 0)
      continue;
    kv[0] = a[i].pk.av;
    kv[0].name = p->azKey[0];
    kv[0].name_len = 0;
    if(p->nKey == 2) {
      kv[1] = a[i].sk.av;
      kv[1].name = p->azKey[1];
      kv[1].name_len = 0;
    }
    aKey[j] = ddb_item_from_avs(kv, p->nKey);
    if(!aKey[j]) {
      rc = SQLITE_NOMEM;
      break;
    }
    j++;
  }
  if(rc) {
    while(j > 0)
      ddb_item_unref(aKey[--j]);
    sqlite3_free(aKey);
    goto fail;
  }
  *paKey = aKey;
  *pnKey = j;

fail:
  sqlite3_finalize(pStmt);
  for(i = 0; i < n; i++) {
    dd_val_clear(&a[i].pk);
    dd_val_clear(&a[i].sk);
  }
  sqlite3_free(a);
  sqlite3_free(zPath[0]);
  sqlite3_free(zPath[1]);
  sqlite3_free(zWhat);
  return rc;
}
