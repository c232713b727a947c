/*
** keycond.c -- SQL values as DynamoDB key values, and the sort-key
** constraints of a plan as one key condition (intervals, LIKE, GLOB,
** begins_with).
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "dd_ext.h"

/* ------------------------------------------------------------------------
** Values: SQL -> DynamoDB key values
*/
void dd_val_clear(dd_val *v) {
  free(v->zBuf); /* libc: hot path, and never handed to SQLite */
  memset(v, 0, sizeof(*v));
}

/* Can v be the value of a key attribute of at most nMax bytes (UTF-8 for
** S, raw for B; N has no byte limit)?  DynamoDB refuses longer key values
** in a key condition, and no stored key is longer: such a value matches
** nothing. */
int dd_key_fits(const dd_val *v, int nMax) {
  return v->av.type == DDB_N || v->nRaw <= nMax;
}

/* Forget v (a value that matches nothing).  Returns SQLITE_OK. */
int dd_drop(dd_val *v) {
  dd_val_clear(v);
  return SQLITE_OK;
}

/* Is z[0..n) valid UTF-8 (no surrogates, no overlongs)? */
int dd_utf8_ok(const unsigned char *z, int n) {
  int i = 0;
  while(i < n) {
    unsigned c = z[i];
    int len;
    unsigned cp;
    if(c < 0x80) {
      i++;
      continue;
    }
    if(c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if(c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if(c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    } else
      return 0;
    if(i + len > n)
      return 0;
    for(int k = 1; k < len; k++) {
      if((z[i + k] & 0xc0) != 0x80)
        return 0;
      cp = (cp << 6) | (z[i + k] & 0x3f);
    }
    if((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
       (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
      return 0;
    i += len;
  }
  return 1;
}

/* Set v to a copy of z[0..n) as a value of type t. */
int dd_val_text(dd_val *v, ddb_type t, const char *z, int n) {
  memset(v, 0, sizeof(*v));
  v->zBuf = malloc((size_t)n + 1);
  if(!v->zBuf)
    return SQLITE_NOMEM;
  memcpy(v->zBuf, z, (size_t)n);
  v->zBuf[n] = 0;
  v->av.type = t;
  v->av.text = v->zBuf;
  v->av.n = (uint32_t)n;
  v->raw = (const unsigned char *)v->zBuf;
  v->nRaw = n;
  return SQLITE_OK;
}

/* Set dst to a copy of src, buffer and raw bytes included. */
int dd_val_copy(dd_val *dst, const dd_val *src) {
  size_t nText = src->av.n, nRaw = (size_t)src->nRaw;
  int bRaw = src->raw && src->raw != (const unsigned char *)src->av.text;
  memset(dst, 0, sizeof(*dst));
  if(!src->av.type)
    return SQLITE_OK;
  dst->zBuf = malloc(nText + 1 + (bRaw ? nRaw : 0));
  if(!dst->zBuf)
    return SQLITE_NOMEM;
  memcpy(dst->zBuf, src->av.text, nText);
  dst->zBuf[nText] = 0;
  dst->av = src->av;
  dst->av.text = dst->zBuf;
  dst->raw = (const unsigned char *)dst->zBuf;
  if(bRaw) {
    memcpy(dst->zBuf + nText + 1, src->raw, nRaw);
    dst->raw = (const unsigned char *)dst->zBuf + nText + 1;
  }
  dst->nRaw = src->nRaw;
  dst->bOut = src->bOut;
  return SQLITE_OK;
}

/*
** The DynamoDB number that SQL value pVal stands for as a key of type N,
** the way NUMERIC affinity sees it.  An INTEGER is its digits; a REAL a
** whole number below 1E38 its exact integer (2^60 ->
** "1152921504606846976"), any other the shortest text that reads back as
** the same double (0.1 -> "0.1"; see ddb_number_from_double); TEXT
** that is a number with more digits than a double holds is kept digit for
** digit (a 38-digit key given as text is matched exactly, not rounded);
** other TEXT that looks like a number (' 1 ', '1.5') is converted as
** SQLite would.  zBuf (at least 64 bytes) holds the text when it is not
** pVal's own.
**
** Returns DD_NUM_OK with (*pz, *pn) the text (valid while pVal and zBuf are)
** and *pd its value as a double; DD_NUM_NONE when pVal is no number
** (NULL, a blob, other text); DD_NUM_RANGE when it is a number DynamoDB
** cannot hold (over 38 significant digits, magnitude 1E126 or more, or
** below 1E-130), with (*pz, *pn) its text for a message.
*/
int dd_number_text(sqlite3_value *pVal, char *zBuf, size_t nBuf,
                   const char **pz, int *pn, double *pd) {
  int eType = sqlite3_value_type(pVal);
  int rc = DD_NUM_OK;
  sqlite3_value *pDup = NULL;
  *pz = "";
  *pn = 0;
  *pd = 0;
  if(eType == SQLITE_TEXT) {
    const char *z = (const char *)sqlite3_value_text(pVal);
    int n = sqlite3_value_bytes(pVal);
    if(z && ddb_number_classify(z, (size_t)n, NULL, NULL) == DDB_NUM_TEXT) {
      if(*z == '+') {
        z++;
        n--;
      }
      *pz = z;
      *pn = n;
      *pd = strtod(z, NULL);
      return ddb_number_fits(z, (size_t)n) ? DD_NUM_OK : DD_NUM_RANGE;
    }
    /* NUMERIC affinity applies to the other operand: text that looks
    ** like a number compares as that number, other text never equals */
    pDup = sqlite3_value_dup(pVal);
    if(!pDup)
      return DD_NUM_NONE;
    eType = sqlite3_value_numeric_type(pDup);
    pVal = pDup;
  }
  if(eType == SQLITE_INTEGER) {
    sqlite3_int64 i = sqlite3_value_int64(pVal);
    snprintf(zBuf, nBuf, "%lld", (long long)i);
    *pd = (double)i;
  } else if(eType == SQLITE_FLOAT) {
    *pd = sqlite3_value_double(pVal);
    if(ddb_number_from_double(*pd, zBuf, nBuf))
      rc = DD_NUM_RANGE;
  } else {
    rc = DD_NUM_NONE;
  }
  sqlite3_value_free(pDup);
  if(rc != DD_NUM_NONE) {
    *pz = zBuf;
    *pn = (int)strlen(zBuf);
  }
  return rc;
}

/*
** Convert SQL value pVal to a value of a key of type t, the way SQLite's
** comparison with a column of that type's affinity would see it.
**
** Returns SQLITE_OK with *pbOk=1 and v filled when the value can be sent;
** *pbOk=0 when no key value of that type can compare equal to it (NULL, a
** blob against a string, text that is no number against a number, a
** number DynamoDB cannot hold, an empty or invalid string).
*/
int dd_val_from_sql(sqlite3_value *pVal, ddb_type t, dd_val *v, int *pbOk) {
  int eType = sqlite3_value_type(pVal);
  int rc = SQLITE_OK;
  memset(v, 0, sizeof(*v));
  *pbOk = 0;
  if(eType == SQLITE_NULL)
    return SQLITE_OK;
  if(t == DDB_S) {
    const unsigned char *z;
    int n;
    if(eType == SQLITE_BLOB)
      return SQLITE_OK; /* TEXT affinity leaves blobs alone: never equal */
    z = sqlite3_value_text(pVal); /* numbers render as TEXT affinity would */
    n = sqlite3_value_bytes(pVal);
    if(!z)
      return SQLITE_NOMEM;
    if(n == 0 || !dd_utf8_ok(z, n))
      return SQLITE_OK; /* no DynamoDB key is empty or invalid UTF-8 */
    rc = dd_val_text(v, DDB_S, (const char *)z, n);
    *pbOk = rc == SQLITE_OK;
    return rc;
  }
  if(t == DDB_N) {
    char zNum[64];
    const char *z;
    int n;
    double d;
    if(dd_number_text(pVal, zNum, sizeof(zNum), &z, &n, &d) != DD_NUM_OK)
      return SQLITE_OK; /* no number, or none DynamoDB can hold */
    rc = dd_val_text(v, DDB_N, z, n);
    *pbOk = rc == SQLITE_OK;
    return rc;
  }
  /* DDB_B */
  if(eType == SQLITE_BLOB) {
    int n = sqlite3_value_bytes(pVal);
    const void *z = sqlite3_value_blob(pVal);
    size_t cap = ((size_t)n + 2) / 3 * 4 + 1;
    if(n == 0)
      return SQLITE_OK;
    v->zBuf = malloc(cap + (size_t)n);
    if(!v->zBuf)
      return SQLITE_NOMEM;
    ddb_base64_encode(z, (size_t)n, v->zBuf, cap);
    memcpy(v->zBuf + cap, z, (size_t)n); /* raw bytes, for ordering */
    v->av.type = DDB_B;
    v->av.text = v->zBuf;
    v->av.n = (uint32_t)strlen(v->zBuf);
    v->raw = (const unsigned char *)v->zBuf + cap;
    v->nRaw = n;
    *pbOk = 1;
  }
  return SQLITE_OK;
}

/* Is pVal, as NUMERIC affinity sees it, a REAL (*pd its value)?  Text of
** more digits than a double holds is not: it keeps them. */
static int dd_number_real(sqlite3_value *pVal, double *pd) {
  int e = sqlite3_value_type(pVal);
  if(e == SQLITE_TEXT) {
    const char *z = (const char *)sqlite3_value_text(pVal);
    int n = sqlite3_value_bytes(pVal);
    sqlite3_value *pDup;
    if(!z || ddb_number_classify(z, (size_t)n, NULL, NULL) == DDB_NUM_TEXT)
      return 0;
    pDup = sqlite3_value_dup(pVal);
    if(!pDup)
      return 0;
    e = sqlite3_value_numeric_type(pDup);
    *pd = sqlite3_value_double(pDup);
    sqlite3_value_free(pDup);
    return e == SQLITE_FLOAT;
  }
  *pd = sqlite3_value_double(pVal);
  return e == SQLITE_FLOAT;
}

/*
** The DynamoDB numbers that a REAL x compared with an N column stands
** for, as SQLite compares x with the values of a NUMERIC column: an
** INTEGER exactly, every other number as its double.  So a whole x in
** 64-bit range is that integer alone (2^60 is 1152921504606846976, not
** 1152921504606846977); any other x every number whose nearest double is
** x (ddb_number_double_range: 1.23e22 is 1.23E+22 and
** 12300000000000001048576, and 0.1 is also 0.1000000000000000000001);
** at +-2^63 without the integers of 64 bits next to it.  Into zLo, zHi
** (cap >= 64), the same text when x is one number.  Returns 0, or -1
** when x is not finite.
*/
UNITTEST int dd_real_range(double x, char *zLo, int *pLoOpen, char *zHi,
                           int *pHiOpen, size_t cap) {
  const double two63 = 9223372036854775808.0;
  *pLoOpen = *pHiOpen = 0;
  if(x == floor(x) && x > -two63 && x < two63) {
    if(ddb_number_from_double(x, zLo, cap))
      return -1;
    memcpy(zHi, zLo, strlen(zLo) + 1);
    return 0;
  }
  if(ddb_number_double_range(x, zLo, pLoOpen, zHi, pHiOpen, cap))
    return -1;
  if(x == two63) {
    snprintf(zLo, cap, "9223372036854775808");
    *pLoOpen = 0;
  } else if(x == -two63) {
    snprintf(zHi, cap, "-9223372036854775808");
    *pHiOpen = 0;
  }
  return 0;
}

/* See dd_ext.h. */
void dd_nrange_clear(dd_nrange *r) {
  dd_val_clear(&r->lo);
  dd_val_clear(&r->hi);
  memset(r, 0, sizeof(*r));
}

/* Set r to the one number z[0..n) (bOut: DynamoDB cannot hold it). */
static int dd_nrange_one(dd_nrange *r, const char *z, int n, int bOut) {
  int rc = dd_val_text(&r->lo, DDB_N, z, n);
  if(rc == SQLITE_OK)
    rc = dd_val_text(&r->hi, DDB_N, z, n);
  r->lo.bOut = r->hi.bOut = bOut;
  return rc;
}

/*
** How SQL value pVal compares with the values of an N column, all of
** which SQLite sees as numbers (NUMERIC affinity), set in *pCls:
** DD_NB_NULL (it compares to nothing), DD_NB_ABOVE (above every number
** DynamoDB can hold: text that is no number, a blob, +Inf, 1E126 and
** beyond), DD_NB_BELOW (-Inf, -1E126 and below), or DD_NB_NUM with r set
** to the numbers it stands for: an INTEGER or a text of more digits than
** a double holds is one number (lo and hi the same); a REAL every number
** dd_real_range gives (v equals it when lo <= v <= hi, with an open end
** strict).  An end has bOut when DynamoDB cannot hold it (a magnitude
** below 1E-130 or from 1E126, more than 38 digits); it still orders
** exactly.  Returns SQLITE_OK or SQLITE_NOMEM (r is then zeroed).
*/
int dd_n_range(sqlite3_value *pVal, dd_nrange *r, int *pCls) {
  char zNum[64], zLo[64], zHi[64];
  const char *z;
  int n, k, rc;
  double d;
  memset(r, 0, sizeof(*r));
  *pCls = DD_NB_NULL;
  if(sqlite3_value_type(pVal) == SQLITE_NULL)
    return SQLITE_OK;
  if(dd_number_real(pVal, &d) && isfinite(d) &&
     dd_real_range(d, zLo, &r->loOpen, zHi, &r->hiOpen, sizeof(zLo)) == 0 &&
     strcmp(zLo, zHi) != 0) {
    /* a REAL that stands for many numbers */
    if(ddb_number_cmp(zLo, strlen(zLo), "1e126", 5) >= 0) {
      *pCls = DD_NB_ABOVE;
      return SQLITE_OK;
    }
    if(ddb_number_cmp(zHi, strlen(zHi), "-1e126", 6) <= 0) {
      *pCls = DD_NB_BELOW;
      return SQLITE_OK;
    }
    rc = dd_val_text(&r->lo, DDB_N, zLo, (int)strlen(zLo));
    if(rc == SQLITE_OK)
      rc = dd_val_text(&r->hi, DDB_N, zHi, (int)strlen(zHi));
    if(rc) {
      dd_nrange_clear(r);
      return rc;
    }
    r->lo.bOut = !ddb_number_fits(zLo, strlen(zLo));
    r->hi.bOut = !ddb_number_fits(zHi, strlen(zHi));
    *pCls = DD_NB_NUM;
    return SQLITE_OK;
  }
  r->loOpen = r->hiOpen = 0;
  k = dd_number_text(pVal, zNum, sizeof(zNum), &z, &n, &d);
  if(k == DD_NUM_RANGE && isinf(d)) {
    /* a REAL, or a text NUMERIC affinity makes one ('-1e999') */
    *pCls = d > 0 ? DD_NB_ABOVE : DD_NB_BELOW;
    return SQLITE_OK;
  }
  if(k == DD_NUM_NONE) {
    /* text that is no number, or a blob: SQLite orders both after every
    ** number */
    *pCls = DD_NB_ABOVE;
    return SQLITE_OK;
  }
  if(k == DD_NUM_RANGE && ddb_number_cmp(z, (size_t)n, "1e126", 5) >= 0) {
    *pCls = DD_NB_ABOVE;
    return SQLITE_OK;
  }
  if(k == DD_NUM_RANGE && ddb_number_cmp(z, (size_t)n, "-1e126", 6) <= 0) {
    *pCls = DD_NB_BELOW;
    return SQLITE_OK;
  }
  rc = dd_nrange_one(r, z, n, k == DD_NUM_RANGE);
  if(rc) {
    dd_nrange_clear(r);
    return rc;
  }
  *pCls = DD_NB_NUM;
  return SQLITE_OK;
}

/* See dd_ext.h. */
int dd_n_spans(sqlite3_value *pVal) {
  double d;
  return dd_number_real(pVal, &d) && isfinite(d) && fabs(d) >= 1e-200 &&
         !(d == floor(d) && d > -9223372036854775808.0 &&
           d < 9223372036854775808.0);
}

/* See dd_ext.h. */
int dd_n_ops(int k, dd_nrange *r, int aOp[2], dd_val *aV[2]) {
  int bOne = !r->loOpen && !r->hiOpen &&
             ddb_number_cmp(r->lo.av.text, r->lo.av.n, r->hi.av.text,
                            r->hi.av.n) == 0;
  switch(k) {
  case DD_SK_EQ:
    if(bOne) {
      aOp[0] = DD_SK_EQ;
      aV[0] = &r->lo;
      return 1;
    }
    aOp[0] = r->loOpen ? DD_SK_GT : DD_SK_GE;
    aV[0] = &r->lo;
    aOp[1] = r->hiOpen ? DD_SK_LT : DD_SK_LE;
    aV[1] = &r->hi;
    return 2;
  case DD_SK_GE:
    aOp[0] = r->loOpen ? DD_SK_GT : DD_SK_GE;
    aV[0] = &r->lo;
    return 1;
  case DD_SK_GT:
    aOp[0] = r->hiOpen ? DD_SK_GE : DD_SK_GT;
    aV[0] = &r->hi;
    return 1;
  case DD_SK_LT:
    aOp[0] = r->loOpen ? DD_SK_LE : DD_SK_LT;
    aV[0] = &r->lo;
    return 1;
  case DD_SK_LE:
    aOp[0] = r->hiOpen ? DD_SK_LT : DD_SK_LE;
    aV[0] = &r->hi;
    return 1;
  }
  return 0;
}

/* See dd_ext.h. */
int dd_never_true(const dd_column *col, int k, sqlite3_value *pVal) {
  int e = sqlite3_value_type(pVal), n, cls, bOut;
  int bLo = k == DD_SK_GT || k == DD_SK_GE,
      bHi = k == DD_SK_LT || k == DD_SK_LE;
  dd_nrange r;
  if(e == SQLITE_NULL)
    return 1; /* x op NULL is NULL, LIKE and begins_with too */
  if(k != DD_SK_EQ && !bLo && !bHi)
    return 0;
  if(col->type == DDB_N) {
    if(dd_n_range(pVal, &r, &cls))
      return 0;                    /* out of memory: no shortcut */
    bOut = r.lo.bOut && r.hi.bOut; /* no number DynamoDB holds is in it */
    dd_nrange_clear(&r);
    if(cls == DD_NB_ABOVE)
      return !bHi;
    if(cls == DD_NB_BELOW)
      return !bLo;
    return k == DD_SK_EQ && bOut; /* no item holds such a number */
  }
  n = sqlite3_value_bytes(pVal);
  if(col->type == DDB_S) {
    /* TEXT affinity turns numbers into text; a blob stays a blob, which
    ** SQLite orders after every text */
    if(e == SQLITE_BLOB)
      return !bHi;
    if(k != DD_SK_EQ)
      return 0;
    if(n == 0)
      return !col->bAttr; /* a key is never empty, an attribute may be */
    return !dd_utf8_ok(sqlite3_value_text(pVal), n);
  }
  /* B: no affinity: only a blob equals a blob, and a blob is above every
  ** number and text */
  if(e != SQLITE_BLOB)
    return !bLo;
  return k == DD_SK_EQ && n == 0 && !col->bAttr;
}

/* Compare two key values of the same type in DynamoDB's order (N by
** value, exactly: ddb_number_cmp; S and B by bytes). */
UNITTEST int dd_val_cmp(const dd_val *a, const dd_val *b) {
  int n, c;
  if(a->av.type == DDB_N)
    return ddb_number_cmp(a->av.text, a->av.n, b->av.text, b->av.n);
  n = a->nRaw < b->nRaw ? a->nRaw : b->nRaw;
  c = n ? memcmp(a->raw, b->raw, (size_t)n) : 0;
  return c ? c : a->nRaw - b->nRaw;
}

/* ------------------------------------------------------------------------
** Sort-key conditions: from the pushed constraints to one key condition.
**
** Each constraint narrows an interval [lo, hi] (either end open or
** closed, or absent).  A prefix constraint (begins_with, GLOB, LIKE)
** gives [prefix, successor(prefix)), LIKE with the ASCII letters of its
** prefix upper-cased for lo and lower-cased for hi.  The interval becomes
** begins_with when it is exactly one prefix, else BETWEEN (closed; SQLite
** drops what an open end should have excluded) or a single comparison.
*/

/* The successor of prefix z[0..n) in binary order: the smallest string
** greater than every string starting with z, computed on code points so
** that the result is valid UTF-8.  Returns the length, 0 when there is
** none (the prefix is all U+10FFFF). */
UNITTEST int dd_successor(const char *z, int n, char *zOut) {
  while(n > 0) {
    int i = n - 1, len;
    unsigned cp;
    while(i > 0 && ((unsigned char)z[i] & 0xc0) == 0x80)
      i--;
    len = n - i;
    {
      unsigned char c = (unsigned char)z[i];
      cp = len == 1   ? c
           : len == 2 ? (c & 0x1f)
           : len == 3 ? (c & 0x0f)
                      : (c & 0x07);
      for(int k = 1; k < len; k++)
        cp = (cp << 6) | ((unsigned char)z[i + k] & 0x3f);
    }
    if(cp >= 0x10ffff) {
      n = i;
      continue;
    }
    cp++;
    if(cp == 0xd800)
      cp = 0xe000;
    memcpy(zOut, z, (size_t)i);
    if(cp < 0x80) {
      zOut[i++] = (char)cp;
    } else if(cp < 0x800) {
      zOut[i++] = (char)(0xc0 | (cp >> 6));
      zOut[i++] = (char)(0x80 | (cp & 0x3f));
    } else if(cp < 0x10000) {
      zOut[i++] = (char)(0xe0 | (cp >> 12));
      zOut[i++] = (char)(0x80 | ((cp >> 6) & 0x3f));
      zOut[i++] = (char)(0x80 | (cp & 0x3f));
    } else {
      zOut[i++] = (char)(0xf0 | (cp >> 18));
      zOut[i++] = (char)(0x80 | ((cp >> 12) & 0x3f));
      zOut[i++] = (char)(0x80 | ((cp >> 6) & 0x3f));
      zOut[i++] = (char)(0x80 | (cp & 0x3f));
    }
    return i;
  }
  return 0;
}

/* Narrow the lower end to v (moved into the interval) if it is tighter. */
static void dd_iv_lo(dd_interval *iv, dd_val *v, int bOpen) {
  int c = iv->lo.av.type ? dd_val_cmp(v, &iv->lo) : 1;
  if(c > 0 || (c == 0 && bOpen && !iv->loOpen)) {
    dd_val_clear(&iv->lo);
    iv->lo = *v;
    iv->loOpen = bOpen;
  } else {
    dd_val_clear(v);
  }
  memset(v, 0, sizeof(*v));
}

/* Narrow the upper end to v (moved into the interval) if it is tighter. */
static void dd_iv_hi(dd_interval *iv, dd_val *v, int bOpen) {
  int c = iv->hi.av.type ? dd_val_cmp(v, &iv->hi) : -1;
  if(c < 0 || (c == 0 && bOpen && !iv->hiOpen)) {
    dd_val_clear(&iv->hi);
    iv->hi = *v;
    iv->hiOpen = bOpen;
  } else {
    dd_val_clear(v);
  }
  memset(v, 0, sizeof(*v));
}

/* The literal prefix of a LIKE or GLOB pattern, ASCII-case-mapped for
** LIKE (bUpper: 1 upper, 0 lower, -1 as is).  Returns its length. */
UNITTEST int dd_pattern_prefix(const char *z, int n, int bGlob, int bUpper,
                               char *zOut) {
  int i;
  for(i = 0; i < n; i++) {
    char c = z[i];
    if(bGlob ? (c == '*' || c == '?' || c == '[') : (c == '%' || c == '_'))
      break;
    if(bUpper == 1 && c >= 'a' && c <= 'z')
      c = (char)(c - 'a' + 'A');
    else if(bUpper == 0 && c >= 'A' && c <= 'Z')
      c = (char)(c - 'A' + 'a');
    zOut[i] = c;
  }
  return i;
}

/* Does the pattern consist of one literal prefix and a final wildcard,
** matching exactly the strings that start with that prefix? */
UNITTEST int dd_pattern_is_prefix(const char *z, int n, int bGlob) {
  int i = 0;
  while(i < n && (bGlob ? (z[i] != '*' && z[i] != '?' && z[i] != '[')
                        : (z[i] != '%' && z[i] != '_')))
    i++;
  return i == n - 1 && z[i] == (bGlob ? '*' : '%');
}

/* dd_iv_apply of a prefix constraint k (LIKE, GLOB, begins_with) on an S
** sort key: the range of the pattern's literal prefix ([upper(prefix),
** successor(lower(prefix))) for LIKE, which ignores ASCII case), and the
** prefix itself while it is the only condition.  Returns an SQLite
** code. */
static int dd_iv_prefix(dd_interval *iv, int k, sqlite3_value *pVal,
                        int *pnPrefix) {
  dd_val v;
  int rc;
  const char *z = (const char *)sqlite3_value_text(pVal);
  int n = sqlite3_value_bytes(pVal), nLo, nHi, nSucc, bCase = 0;
  char *zLo, *zHi, *zSucc;
  if(sqlite3_value_type(pVal) == SQLITE_NULL) {
    iv->bEmpty = 1; /* x LIKE NULL is NULL: no row */
    return SQLITE_OK;
  }
  if(!z)
    return SQLITE_NOMEM;
  zLo = sqlite3_malloc64((sqlite3_uint64)n * 3 + 12);
  if(!zLo)
    return SQLITE_NOMEM;
  zHi = zLo + n + 1;
  zSucc = zHi + n + 1;
  if(k == DD_SK_BEGINS) {
    memcpy(zLo, z, (size_t)n);
    memcpy(zHi, z, (size_t)n);
    nLo = nHi = n;
  } else {
    nLo = dd_pattern_prefix(z, n, k == DD_SK_GLOB, k == DD_SK_LIKE ? 1 : -1,
                            zLo);
    nHi = dd_pattern_prefix(z, n, k == DD_SK_GLOB, k == DD_SK_LIKE ? 0 : -1,
                            zHi);
    bCase =
        k == DD_SK_LIKE && (nLo != nHi || memcmp(zLo, zHi, (size_t)nLo) != 0);
    if(!dd_pattern_is_prefix(z, n, k == DD_SK_GLOB) || bCase)
      iv->bExact = 0;
  }
  if(nLo > DD_MAX_SK_BYTES) {
    /* every match starts with the prefix: longer than any sort key */
    iv->bEmpty = 1;
    sqlite3_free(zLo);
    return SQLITE_OK;
  }
  if(nLo == 0 || !dd_utf8_ok((unsigned char *)zLo, nLo)) {
    /* no literal prefix: no narrowing */
    iv->bExact = 0;
    sqlite3_free(zLo);
    return SQLITE_OK;
  }
  (*pnPrefix)++;
  rc = dd_val_text(&v, DDB_S, zLo, nLo);
  if(rc == SQLITE_OK) {
    if(!bCase && *pnPrefix == 1 && !iv->lo.av.type && !iv->hi.av.type) {
      dd_val_clear(&iv->prefix);
      rc = dd_val_text(&iv->prefix, DDB_S, zLo, nLo);
    }
    dd_iv_lo(iv, &v, 0);
  }
  nSucc = dd_successor(zHi, nHi, zSucc);
  if(rc == SQLITE_OK && nSucc > 0) {
    rc = dd_val_text(&v, DDB_S, zSucc, nSucc);
    if(rc == SQLITE_OK)
      dd_iv_hi(iv, &v, 1);
  }
  sqlite3_free(zLo);
  return rc;
}

/* Narrow iv by "key k v" (k DD_SK_EQ .. DD_SK_LE), v moved into iv.
** Returns SQLITE_OK or SQLITE_NOMEM (v cleared). */
static int dd_iv_bound(dd_interval *iv, int k, dd_val *v) {
  dd_val w;
  int rc;
  switch(k) {
  case DD_SK_EQ:
    rc = dd_val_copy(&w, v);
    if(rc) {
      dd_val_clear(v);
      return rc;
    }
    dd_iv_lo(iv, v, 0);
    dd_iv_hi(iv, &w, 0);
    break;
  case DD_SK_GT: dd_iv_lo(iv, v, 1); break;
  case DD_SK_GE: dd_iv_lo(iv, v, 0); break;
  case DD_SK_LT: dd_iv_hi(iv, v, 1); break;
  case DD_SK_LE: dd_iv_hi(iv, v, 0); break;
  }
  return SQLITE_OK;
}

/* dd_iv_apply of "N key k pVal": the bounds of the numbers pVal stands
** for (dd_n_range, dd_n_ops); none when the constraint is decided without
** one (NULL, or a value above or below every number: true of no item, or
** of every one; an equality with no number an item can hold).  Every
** bound orders exactly (the cursor checks what the request cannot say;
** SQLite does not check them again: ext/PLAN.md).  Returns an SQLite
** code. */
static int dd_iv_n(dd_interval *iv, int k, sqlite3_value *pVal) {
  dd_nrange r;
  dd_val *aV[2];
  int aOp[2], cls, n, i, rc;
  rc = dd_n_range(pVal, &r, &cls);
  if(rc)
    return rc;
  if(cls != DD_NB_NUM || (k == DD_SK_EQ && r.lo.bOut && r.hi.bOut)) {
    int bLo = k == DD_SK_GT || k == DD_SK_GE;
    if(cls == DD_NB_NULL || k == DD_SK_EQ || (cls == DD_NB_ABOVE) == bLo)
      iv->bEmpty = 1;
    dd_nrange_clear(&r);
    return SQLITE_OK;
  }
  n = dd_n_ops(k, &r, aOp, aV);
  for(i = 0; i < n && rc == SQLITE_OK; i++)
    rc = dd_iv_bound(iv, aOp[i], aV[i]);
  dd_nrange_clear(&r);
  return rc;
}

/* Apply one constraint of kind k with value pVal to the interval. */
int dd_iv_apply(dd_interval *iv, ddb_type t, int k, sqlite3_value *pVal,
                int *pnPrefix) {
  dd_val v;
  int ok, rc;
  if(k == DD_SK_LIKE || k == DD_SK_GLOB || k == DD_SK_BEGINS)
    return dd_iv_prefix(iv, k, pVal, pnPrefix);
  if(t == DDB_N)
    return dd_iv_n(iv, k, pVal);
  rc = dd_val_from_sql(pVal, t, &v, &ok);
  if(rc)
    return rc;
  if(ok && !dd_key_fits(&v, DD_MAX_SK_BYTES)) {
    dd_val_clear(&v); /* no sort key equals it; as a bound: dropped */
    ok = 0;
  }
  if(!ok) {
    /* A value no key can equal, or a bound DynamoDB cannot express.
    ** NULL compares to nothing: the whole WHERE is false.  Otherwise
    ** drop the bound (a superset) unless it is an equality. */
    if(sqlite3_value_type(pVal) == SQLITE_NULL || k == DD_SK_EQ)
      iv->bEmpty = 1;
    else
      iv->bExact = 0;
    return SQLITE_OK;
  }
  return dd_iv_bound(iv, k, &v);
}

/* Do N bounds lo <= hi lie between two neighbouring numbers DynamoDB
** can hold: both in (0, 1E-130), or both in (-1E-130, 0)?  (A REAL of
** that size stands for such an interval: 1e-131.) */
static int dd_n_in_gap(const dd_val *lo, const dd_val *hi) {
  const char *zl = lo->av.text, *zh = hi->av.text;
  size_t nl = lo->av.n, nh = hi->av.n;
  return (ddb_number_cmp(zl, nl, "0", 1) > 0 &&
          ddb_number_cmp(zh, nh, "1e-130", 6) < 0) ||
         (ddb_number_cmp(zl, nl, "-1e-130", 7) > 0 &&
          ddb_number_cmp(zh, nh, "0", 1) < 0);
}

/* Turn the interval into the request's sort-key condition: iv->bExact
** stays 1 when it selects exactly the interval's rows, or (iv->nSlack set)
** those and the items whose sort keys equal an open end. */
void dd_iv_finish(dd_interval *iv, int nPrefix, int nOther, ddb_read *rd,
                  dd_val out[2]) {
  if(iv->bEmpty)
    return;
  if(iv->lo.av.type && iv->hi.av.type) {
    int c = dd_val_cmp(&iv->lo, &iv->hi);
    if(c > 0 || (c == 0 && (iv->loOpen || iv->hiOpen || iv->lo.bOut)) ||
       (iv->lo.bOut && iv->hi.bOut && dd_n_in_gap(&iv->lo, &iv->hi))) {
      iv->bEmpty = 1;
      return;
    }
  }
  /* a bound DynamoDB cannot hold (1E-131, 39 digits) stays out of the
  ** request, a superset the cursor narrows (see dynamodbFilter) */
  if(iv->lo.bOut) {
    dd_val_clear(&iv->lo);
    iv->bExact = 0;
  }
  if(iv->hi.bOut) {
    dd_val_clear(&iv->hi);
    iv->bExact = 0;
  }
  if(nPrefix == 1 && nOther == 0 && iv->prefix.av.type) {
    rd->sk_op = DDB_SK_BEGINS_WITH;
    out[0] = iv->prefix;
    memset(&iv->prefix, 0, sizeof(iv->prefix));
    return;
  }
  if(iv->lo.av.type && iv->hi.av.type) {
    if(dd_val_cmp(&iv->lo, &iv->hi) == 0) {
      rd->sk_op = DDB_SK_EQ;
      out[0] = iv->lo;
      memset(&iv->lo, 0, sizeof(iv->lo));
      return;
    }
    rd->sk_op = DDB_SK_BETWEEN;
    /* BETWEEN is closed: an open end sent closed may add the items whose
    ** sort key is that end (one on a path whose sort keys are unique in
    ** a partition), which SQLite or the row checks drop; the rows are
    ** exact but for those: iv->nSlack, bit 0 the lower end, bit 1 the
    ** upper */
    if(nPrefix)
      iv->bExact = 0;
    else
      iv->nSlack = iv->loOpen + 2 * iv->hiOpen;
    out[0] = iv->lo;
    out[1] = iv->hi;
    memset(&iv->lo, 0, sizeof(iv->lo));
    memset(&iv->hi, 0, sizeof(iv->hi));
  } else if(iv->lo.av.type) {
    rd->sk_op = iv->loOpen ? DDB_SK_GT : DDB_SK_GE;
    out[0] = iv->lo;
    memset(&iv->lo, 0, sizeof(iv->lo));
  } else if(iv->hi.av.type) {
    rd->sk_op = iv->hiOpen ? DDB_SK_LT : DDB_SK_LE;
    out[0] = iv->hi;
    memset(&iv->hi, 0, sizeof(iv->hi));
  }
}

/* Order of values of one type for dd_dedupe: N by value (7 and 7.0, or
** 1E2 and 100, are one key), others by length, then bytes. */
int dd_val_order(const void *pa, const void *pb) {
  const dd_val *a = pa, *b = pb;
  if(a->av.type == DDB_N && b->av.type == DDB_N)
    return ddb_number_cmp(a->av.text, a->av.n, b->av.text, b->av.n);
  if(a->av.n != b->av.n)
    return a->av.n < b->av.n ? -1 : 1;
  return memcmp(a->av.text, b->av.text, a->av.n);
}

/* See dd_ext.h. */
ddb_item *dd_key_item(const dd_vtab *p, const ddb_av *pk, const ddb_av *sk) {
  ddb_av kv[2];
  return ddb_item_from_avs(kv, dd_key_avs(p, pk, sk, kv));
}

/*
** The rowid of a row is a 64-bit hash (FNV-1a) of its primary key in
** canonical form: the same item has the same rowid in every scan, which
** SQLite relies on when it merges the rows of an OR of indexable terms.
** (Two keys collide with odds of 2^-64 a pair.)
*/
sqlite3_int64 dd_key_rowid(dd_vtab *p, const ddb_item *it) {
  ddb_buf b;
  uint64_t h = 0xcbf29ce484222325ULL;
  size_t i;
  ddb_buf_init(&b, 4u * 1024 * 1024);
  if(ddb_key_encode(it, p->azKey, p->nKey, &b) == 0)
    for(i = 0; i < b.len; i++) {
      h ^= (unsigned char)b.p[i];
      h *= 0x100000001b3ULL;
    }
  ddb_buf_free(&b);
  return (sqlite3_int64)(h >> 1);
}
