/*
** write.c -- INSERT, UPDATE and DELETE on a dynamodb virtual table, and
** its transactions.
**
**   INSERT              PutItem, condition attribute_not_exists(key): an
**                       existing key is SQLITE_CONSTRAINT naming the key
**   INSERT OR REPLACE   PutItem without condition
**   INSERT OR IGNORE    an existing key is skipped silently
**   UPDATE              UpdateItem of the attributes that changed (SET and
**                       REMOVE), on condition that the item exists,
**                       ReturnValues=ALL_NEW; changing a table key column
**                       is a TransactWriteItems of Delete(old, must exist)
**                       and Put(new, must not exist)
**   DELETE              DeleteItem, ReturnValues=ALL_OLD
**
** The row written is the `item` JSON object (or `item_raw`, DynamoDB's
** typed JSON) with every non-NULL key column laid over it.  Plain JSON maps
** back as client/json.c says; an UPDATE passes the item as it was read as
** the type hint, so sets and binaries keep their types.  Everything is
** checked before anything is sent: key attributes present, of their
** declared types and not empty, the item under 400 KB.
**
** Outside BEGIN ... COMMIT each row is written when the statement reaches
** it.  Inside, writes are buffered (dd_op: the kind, the condition, the new
** image, and for an UPDATE the image it read) and sent by xSync at COMMIT,
** merged to one write per item (dd_coalesce).  Each keeps its kind: an
** UPDATE is sent as the SET and REMOVE of what changed against the image
** it read, on condition that the item exists, never as a whole-item put.
** Up to 100 items and 4 MB go in one TransactWriteItems (all or nothing; a
** failure names the item); more as TransactWriteItems of up to 100 items
** and 4 MB each (atomic each, not together), then the unconditional puts (REPLACE) and deletes
** as BatchWriteItem, with the INSERTs first checked with a consistent
** BatchGetItem, so an existing key still fails the COMMIT before anything
** is written; with split_transactions=no, an error.  ROLLBACK sends
** nothing; ROLLBACK TO a savepoint drops the writes after it.
**
** Reads inside the transaction see its writes: dd_txn.pend maps each
** written key (canonical, ddb_key_encode) to its newest write, and the
** cursor (dynamodb.c, dd_overlay_start) lays those over every read path.
** A second INSERT of a key the transaction wrote fails at the statement;
** an INSERT OR IGNORE of a key it did not write (or an UPDATE OR IGNORE
** that moves a row to such a key) reads the key from DynamoDB at the
** statement and skips the row when it exists (dd_insert_check).
**
** Every write goes through the cache (cache/write.c: ddbc_put_item ...),
** which tells it what the write did: the old image an answer gives is
** trusted only when the call was not retried; a retried or failed write
** makes every page of the table stale.
**
** UPDATE and DELETE find the row by rowid: while a write transaction is
** open, xRowid remembers each row it hands out (dd_remember_row).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "dd_ext.h"

/* Savepoints tracked at the most. */
#define DD_MAX_SAVEPOINTS 64
/* Writes DynamoDB takes in one TransactWriteItems. */
#define DD_TRANSACT_MAX 100
/* Bytes of items DynamoDB takes in one TransactWriteItems: its limit is
** 4 MB of payload; item sizes as DynamoDB counts them, with room for the
** request around them. */
#define DD_TRANSACT_BYTES (4000LL * 1000)

typedef struct dd_op {
  ddb_write_kind kind; /* PUT, UPDATE or DELETE */
  ddb_cond cond;
  ddb_item *item; /* PUT, UPDATE: the new item; DELETE: the old one (its
                     key); a reference */
  ddb_item *old;  /* UPDATE: the item as the statement read it (the diff
                     against it is what COMMIT sends); a reference */
  int bInsert;    /* from an INSERT: an existing key is an error */
} dd_op;

/* The newest buffered write of one key: what the transaction's reads see
** (dd_pending_get).  Keyed by the canonical key (ddb_key_encode). */
typedef struct dd_pend {
  int iOp; /* in dd_txn.aOp */
  UT_hash_handle hh;
  size_t nKey;
  char aKey[1]; /* nKey bytes; allocated to size */
} dd_pend;

typedef struct dd_row {
  sqlite3_int64 rowid;
  ddb_item *item;
  UT_hash_handle hh;
} dd_row;

struct dd_txn {
  int bActive; /* between xBegin and xCommit/xRollback */
  dd_op *aOp;  /* buffered writes, in order */
  int nOp, nAlloc;
  int aSave[DD_MAX_SAVEPOINTS]; /* nOp at each savepoint */
  int nSave;
  dd_row *rows;  /* rows handed out by xRowid */
  dd_pend *pend; /* the newest write of each key in aOp[0..nOp) */
};

/* ------------------------------------------------------------------------
** Transaction state
*/
static dd_txn *dd_txn_get(dd_vtab *p) {
  if(!p->pTxn) {
    p->pTxn = sqlite3_malloc(sizeof(dd_txn));
    if(p->pTxn)
      memset(p->pTxn, 0, sizeof(dd_txn));
  }
  return p->pTxn;
}

static void dd_pend_free(dd_txn *t) {
  dd_pend *e, *tmp;
  HASH_ITER(hh, t->pend, e, tmp) {
    HASH_DEL(t->pend, e);
    sqlite3_free(e);
  }
}

/* Record aOp[iOp] as the newest write of its key.  Returns an SQLite
** code. */
static int dd_pend_note(dd_vtab *p, int iOp) {
  dd_txn *t = p->pTxn;
  dd_pend *e;
  ddb_buf b;
  char aBuf[256];
  int rc = SQLITE_OK;
  ddb_buf_init_with(&b, aBuf, sizeof(aBuf), 4u * 1024 * 1024);
  if(ddb_key_encode(t->aOp[iOp].item, p->azKey, p->nKey, &b) || !b.p) {
    ddb_buf_free(&b);
    return SQLITE_NOMEM;
  }
  HASH_FIND(hh, t->pend, b.p, b.len, e);
  if(e) {
    e->iOp = iOp;
  } else if((e = sqlite3_malloc64(sizeof(*e) + b.len)) != NULL) {
    memset(e, 0, sizeof(*e));
    e->iOp = iOp;
    e->nKey = b.len;
    memcpy(e->aKey, b.p, b.len);
    HASH_ADD(hh, t->pend, aKey[0], e->nKey, e);
  } else {
    rc = SQLITE_NOMEM;
  }
  ddb_buf_free(&b);
  return rc;
}

/* Drop the buffered writes from aOp[n] on (ROLLBACK TO), and point the
** map of the newest write of each key at what is left: every key left is
** in the map already, so this allocates nothing but, for a key over 256
** bytes, its encoding (should that fail, the whole transaction's map is
** dropped and the error returned). */
static int dd_ops_truncate(dd_vtab *p, dd_txn *t, int n) {
  dd_pend *e, *tmp;
  int i, rc = SQLITE_OK;
  if(n < 0)
    n = 0;
  if(n >= t->nOp)
    return SQLITE_OK;
  while(t->nOp > n) {
    dd_op *o = &t->aOp[--t->nOp];
    ddb_item_unref(o->item);
    ddb_item_unref(o->old);
  }
  if(!p) {
    dd_pend_free(t);
    return SQLITE_OK;
  }
  for(e = t->pend; e; e = e->hh.next)
    e->iOp = -1;
  for(i = 0; i < t->nOp && rc == SQLITE_OK; i++)
    rc = dd_pend_note(p, i);
  HASH_ITER(hh, t->pend, e, tmp) {
    if(e->iOp < 0 || rc) {
      HASH_DEL(t->pend, e);
      sqlite3_free(e);
    }
  }
  return rc;
}

static void dd_rows_free(dd_txn *t) {
  dd_row *r, *tmp;
  HASH_ITER(hh, t->rows, r, tmp) {
    HASH_DEL(t->rows, r);
    ddb_item_unref(r->item);
    sqlite3_free(r);
  }
}

/* End the transaction: drop buffered writes and remembered rows. */
static void dd_txn_end(dd_txn *t) {
  if(!t)
    return;
  dd_ops_truncate(NULL, t, 0);
  dd_pend_free(t);
  dd_rows_free(t);
  t->nSave = 0;
  t->bActive = 0;
}

void dd_txn_free(dd_vtab *p) {
  if(!p->pTxn)
    return;
  dd_txn_end(p->pTxn);
  sqlite3_free(p->pTxn->aOp);
  sqlite3_free(p->pTxn);
  p->pTxn = NULL;
}

int dd_in_write(dd_vtab *p) {
  return p->pTxn && p->pTxn->bActive;
}

int dd_remember_row(dd_vtab *p, sqlite3_int64 rowid, ddb_item *it) {
  dd_row *r;
  if(!p->pTxn || !p->pTxn->bActive)
    return SQLITE_OK;
  HASH_FIND(hh, p->pTxn->rows, &rowid, sizeof(rowid), r);
  if(r) {
    ddb_item_unref(r->item);
    r->item = ddb_item_ref(it);
    return SQLITE_OK;
  }
  r = sqlite3_malloc(sizeof(*r));
  if(!r)
    return SQLITE_NOMEM;
  r->rowid = rowid;
  r->item = ddb_item_ref(it);
  HASH_ADD(hh, p->pTxn->rows, rowid, sizeof(rowid), r);
  return SQLITE_OK;
}

static const ddb_item *dd_row_get(dd_vtab *p, sqlite3_int64 rowid) {
  dd_row *r = NULL;
  if(p->pTxn)
    HASH_FIND(hh, p->pTxn->rows, &rowid, sizeof(rowid), r);
  return r ? r->item : NULL;
}

int dd_pending_get(dd_vtab *p, const ddb_item *it, ddb_item **pOut) {
  dd_txn *t = p->pTxn;
  dd_pend *e;
  ddb_buf b;
  char aBuf[256];
  *pOut = NULL;
  if(!t || !t->pend)
    return 0;
  ddb_buf_init_with(&b, aBuf, sizeof(aBuf), 4u * 1024 * 1024);
  if(ddb_key_encode(it, p->azKey, p->nKey, &b) || !b.p) {
    ddb_buf_free(&b);
    return 0;
  }
  HASH_FIND(hh, t->pend, b.p, b.len, e);
  ddb_buf_free(&b);
  if(!e)
    return 0;
  if(t->aOp[e->iOp].kind != DDB_WRITE_DELETE)
    *pOut = t->aOp[e->iOp].item;
  return 1;
}

int dd_pending_images(dd_vtab *p, ddb_item ***paOut, int *pnOut) {
  dd_txn *t = p->pTxn;
  dd_pend *e;
  ddb_item **a;
  int n = 0;
  *paOut = NULL;
  *pnOut = 0;
  if(!t || !t->pend)
    return SQLITE_OK;
  a = sqlite3_malloc64(sizeof(*a) * ((size_t)HASH_COUNT(t->pend) + 1));
  if(!a)
    return SQLITE_NOMEM;
  for(e = t->pend; e; e = e->hh.next)
    if(t->aOp[e->iOp].kind != DDB_WRITE_DELETE)
      a[n++] = ddb_item_ref(t->aOp[e->iOp].item);
  *paOut = a;
  *pnOut = n;
  return SQLITE_OK;
}

int dd_pending_any(dd_vtab *p) {
  return p->pTxn && p->pTxn->bActive && p->pTxn->pend != NULL;
}

/* Append a buffered write (takes references to item and old) and make it
** the newest write of its key. */
static int dd_op_add(dd_vtab *p, ddb_write_kind kind, ddb_cond cond,
                     const ddb_item *item, const ddb_item *old, int bInsert) {
  dd_txn *t = p->pTxn;
  if(t->nOp == t->nAlloc) {
    int n = t->nAlloc ? t->nAlloc * 2 : 64;
    dd_op *a = sqlite3_realloc64(t->aOp, sizeof(dd_op) * (sqlite3_uint64)n);
    if(!a)
      return SQLITE_NOMEM;
    t->aOp = a;
    t->nAlloc = n;
  }
  t->aOp[t->nOp].kind = kind;
  t->aOp[t->nOp].cond = cond;
  t->aOp[t->nOp].item = ddb_item_ref((ddb_item *)item);
  t->aOp[t->nOp].old = old ? ddb_item_ref((ddb_item *)old) : NULL;
  t->aOp[t->nOp].bInsert = bInsert;
  t->nOp++;
  if(dd_pend_note(p, t->nOp - 1)) {
    dd_ops_truncate(p, t, t->nOp - 1);
    return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

int dd_begin(sqlite3_vtab *pVtab) {
  dd_txn *t = dd_txn_get((dd_vtab *)pVtab);
  if(!t)
    return SQLITE_NOMEM;
  dd_txn_end(t);
  t->bActive = 1;
  return SQLITE_OK;
}

int dd_commit(sqlite3_vtab *pVtab) {
  dd_txn_end(((dd_vtab *)pVtab)->pTxn);
  return SQLITE_OK;
}

int dd_rollback(sqlite3_vtab *pVtab) {
  dd_txn_end(((dd_vtab *)pVtab)->pTxn);
  return SQLITE_OK;
}

/*
** Savepoints.  SQLite numbers the savepoints open on the connection 0, 1,
** ... from the outermost, counting the statement savepoint of each
** statement; the savepoint (or BEGIN) that opened the transaction is not
** one of them: ROLLBACK TO it arrives as xRollbackTo(-1), "back to
** xBegin".  A vtab first written inside nested savepoints gets xBegin and
** then xSavepoint(level) for the innermost only: the levels below were
** opened before xBegin, when nothing was buffered, so they stand at 0.
** aSave[i] is how many writes were buffered when savepoint i was opened.
*/
int dd_savepoint(sqlite3_vtab *pVtab, int iSavepoint) {
  dd_txn *t = dd_txn_get((dd_vtab *)pVtab);
  if(!t)
    return SQLITE_NOMEM;
  if(iSavepoint < 0)
    return SQLITE_OK;
  if(iSavepoint >= DD_MAX_SAVEPOINTS) {
    dd_error((dd_vtab *)pVtab, "more than %d nested savepoints",
             DD_MAX_SAVEPOINTS);
    return SQLITE_ERROR;
  }
  while(t->nSave < iSavepoint)
    t->aSave[t->nSave++] = 0;
  t->aSave[iSavepoint] = t->nOp;
  t->nSave = iSavepoint + 1;
  return SQLITE_OK;
}

int dd_release(sqlite3_vtab *pVtab, int iSavepoint) {
  dd_txn *t = ((dd_vtab *)pVtab)->pTxn;
  if(t && iSavepoint < t->nSave)
    t->nSave = iSavepoint < 0 ? 0 : iSavepoint;
  return SQLITE_OK;
}

/* Back to savepoint iSavepoint, which stays open (-1: back to xBegin). */
int dd_rollback_to(sqlite3_vtab *pVtab, int iSavepoint) {
  dd_vtab *p = (dd_vtab *)pVtab;
  dd_txn *t = p->pTxn;
  int n;
  if(!t)
    return SQLITE_OK;
  if(iSavepoint < 0) {
    n = 0;
    t->nSave = 0;
  } else if(iSavepoint < t->nSave) {
    n = t->aSave[iSavepoint];
    t->nSave = iSavepoint + 1;
  } else {
    return SQLITE_OK; /* opened after the last write: nothing to undo */
  }
  if(dd_ops_truncate(p, t, n)) {
    dd_error(p, "out of memory rolling back to a savepoint");
    return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

/* ------------------------------------------------------------------------
** Building the row to write
*/

/* The key of it as text for messages: PK='a', SK=5.  sqlite3_free(). */
static char *dd_key_text(dd_vtab *p, const ddb_item *it) {
  sqlite3_str *s = sqlite3_str_new(0);
  int i;
  for(i = 0; i < p->nKey; i++) {
    const ddb_av *a = ddb_item_get(it, p->azKey[i]);
    if(!a)
      continue;
    sqlite3_str_appendf(s, "%s%s=", i ? ", " : "", p->azKey[i]);
    if(a->type == DDB_S)
      sqlite3_str_appendf(s, "'%.*q'", (int)a->n, a->text);
    else
      sqlite3_str_appendf(s, "%.*s", (int)a->n, a->text);
  }
  return sqlite3_str_finish(s);
}

/* Convert SQL value v for key column c into *out (text in *pzBuf, which
** the caller frees).  Returns SQLITE_OK, or an error set on p. */
static int dd_key_value(dd_vtab *p, int c, sqlite3_value *v, ddb_av *out,
                        char **pzBuf) {
  const dd_column *col = &p->aCol[c];
  int e = sqlite3_value_type(v), nText = -1;
  memset(out, 0, sizeof(*out));
  out->name = col->zName;
  out->name_len = (uint32_t)strlen(col->zName);
  out->type = col->type;
  *pzBuf = NULL;
  if(col->type == DDB_S) {
    if(e == SQLITE_BLOB) {
      dd_error(p, "column %s is S (text); got a blob", col->zName);
      return SQLITE_MISMATCH;
    }
    /* every byte, a NUL included: the value's length is its bytes, never
    ** strlen (a key 'a'||char(0)||'x' is not the key 'a') */
    const unsigned char *z = sqlite3_value_text(v);
    int n = sqlite3_value_bytes(v);
    *pzBuf = sqlite3_malloc64((sqlite3_uint64)n + 1);
    if(*pzBuf) {
      if(n > 0)
        memcpy(*pzBuf, z, (size_t)n);
      (*pzBuf)[n] = 0;
    }
    nText = n;
  } else if(col->type == DDB_N) {
    char zNum[64];
    const char *z;
    int n, r;
    double d;
    r = dd_number_text(v, zNum, sizeof(zNum), &z, &n, &d);
    if(r == DD_NUM_NONE) {
      dd_error(p, "column %s is N (a number); got %s '%s'", col->zName,
               e == SQLITE_BLOB ? "a blob" : "text",
               e == SQLITE_BLOB ? "" : (const char *)sqlite3_value_text(v));
      return SQLITE_MISMATCH;
    }
    if(r == DD_NUM_RANGE) {
      dd_error(p,
               "column %s: %.*s is not a DynamoDB number (at most 38 "
               "significant digits, magnitude 1E-130 to 9.99E+125)",
               col->zName, n > 80 ? 80 : n, z);
      return SQLITE_RANGE;
    }
    *pzBuf = sqlite3_mprintf("%.*s", n, z);
  } else {
    int n = sqlite3_value_bytes(v);
    size_t cap = ((size_t)n + 2) / 3 * 4 + 1;
    if(e != SQLITE_BLOB) {
      dd_error(p, "column %s is B (a blob); got %s", col->zName,
               e == SQLITE_TEXT ? "text" : "a number");
      return SQLITE_MISMATCH;
    }
    *pzBuf = sqlite3_malloc64(cap);
    if(*pzBuf)
      ddb_base64_encode(sqlite3_value_blob(v), (size_t)n, *pzBuf, cap);
  }
  if(!*pzBuf)
    return SQLITE_NOMEM;
  out->text = *pzBuf;
  out->n = (uint32_t)(nText >= 0 ? (size_t)nText : strlen(*pzBuf));
  return SQLITE_OK;
}

/* Check the item before anything is sent.  Returns SQLITE_OK or an error
** set on p. */
static int dd_validate(dd_vtab *p, const ddb_item *it) {
  int c, i;
  size_t sz;
  for(i = 0; i < p->nKey; i++)
    if(!ddb_item_get(it, p->azKey[i])) {
      dd_error(p, "missing key attribute '%s'", p->azKey[i]);
      return SQLITE_CONSTRAINT;
    }
  for(c = 0; c < p->nCol; c++) {
    const ddb_av *a = ddb_item_get(it, p->aCol[c].zName);
    if(!a || p->aCol[c].bAttr)
      continue; /* a declared column may hold any type in the item */
    if(a->type != p->aCol[c].type) {
      dd_error(p, "key attribute '%s' must be %s, got %s", p->aCol[c].zName,
               ddb_type_name(p->aCol[c].type), ddb_type_name(a->type));
      return SQLITE_MISMATCH;
    }
    if(a->n == 0) {
      dd_error(p, "key attribute '%s' is empty", p->aCol[c].zName);
      return SQLITE_CONSTRAINT;
    }
    if(a->type == DDB_N && !ddb_number_ok(a->text, a->n)) {
      dd_error(p, "key attribute '%s' is not a number", p->aCol[c].zName);
      return SQLITE_MISMATCH;
    }
  }
  sz = ddb_item_size(it);
  if(sz > DDB_ITEM_MAX_SIZE) {
    dd_error(p, "item of %lld bytes is over DynamoDB's 400 KB limit",
             (long long)sz);
    return SQLITE_TOOBIG;
  }
  return SQLITE_OK;
}

/* The index of attribute zName in a[0..n), or -1. */
static int dd_attr_find(const ddb_av **a, int n, const char *zName) {
  int i;
  for(i = 0; i < n; i++)
    if(strcmp(a[i]->name, zName) == 0)
      return i;
  return -1;
}

/*
** Build the row an INSERT (old == NULL) or UPDATE writes from argv[2..]
** (the columns: key columns, item, item_raw).  On success *pOut is the new
** item, validated.
*/
static int dd_build_row(dd_vtab *p, sqlite3_value **argv, const ddb_item *old,
                        ddb_item **pOut) {
  sqlite3_value *pItem = argv[2 + p->nCol], *pRaw = argv[4 + p->nCol];
  ddb_item *base = NULL, *out = NULL;
  const ddb_av **aAttr = NULL;
  ddb_av *aKeyAv = NULL;
  char **azBuf = NULL;
  int nAttr = 0, bFromUser = 0, c, rc = SQLITE_OK;
  ddb_error err;
  uint32_t k;

  *pOut = NULL;
  ddb_error_clear(&err);
  if(old && sqlite3_value_nochange(pItem) && sqlite3_value_nochange(pRaw)) {
    base = ddb_item_ref((ddb_item *)old);
  } else if(sqlite3_value_type(pRaw) != SQLITE_NULL &&
            !(old && sqlite3_value_nochange(pRaw))) {
    const char *z = (const char *)sqlite3_value_text(pRaw);
    if(ddb_item_from_typed_json(z ? z : "", (size_t)sqlite3_value_bytes(pRaw),
                                &base, &err)) {
      dd_error(p, "item_raw: %s", err.message);
      return err.code == DDB_ERR_NOMEM ? SQLITE_NOMEM : SQLITE_MISMATCH;
    }
    bFromUser = 1;
  } else if(sqlite3_value_type(pItem) != SQLITE_NULL &&
            !(old && sqlite3_value_nochange(pItem))) {
    const char *z = (const char *)sqlite3_value_text(pItem);
    if(ddb_item_from_json(z ? z : "", (size_t)sqlite3_value_bytes(pItem), old,
                          &base, &err)) {
      dd_error(p, "item: %s", err.message);
      return err.code == DDB_ERR_NOMEM ? SQLITE_NOMEM : SQLITE_MISMATCH;
    }
    bFromUser = 1;
  } else if(old) {
    dd_error(p, "item cannot be set to NULL (DELETE the row instead)");
    return SQLITE_CONSTRAINT;
  } else {
    base = ddb_item_from_avs(NULL, 0);
    if(!base)
      return SQLITE_NOMEM;
  }

  aAttr =
      sqlite3_malloc64(sizeof(*aAttr) * (base->root.n + (size_t)p->nCol + 1));
  aKeyAv = sqlite3_malloc64(sizeof(*aKeyAv) * ((size_t)p->nCol + 1));
  azBuf = sqlite3_malloc64(sizeof(*azBuf) * ((size_t)p->nCol + 1));
  if(!aAttr || !aKeyAv || !azBuf) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  memset(azBuf, 0, sizeof(*azBuf) * ((size_t)p->nCol + 1));
  for(k = 0; k < base->root.n; k++)
    aAttr[nAttr++] = &base->root.kids[k];

  /* lay the key columns over it */
  for(c = 0; c < p->nCol; c++) {
    sqlite3_value *v = argv[2 + c];
    const char *zName = p->aCol[c].zName;
    const ddb_av *pOld = old ? ddb_item_get(old, zName) : NULL;
    int i = dd_attr_find(aAttr, nAttr, zName);
    if(sqlite3_value_nochange(v))
      continue;
    if(sqlite3_value_type(v) == SQLITE_NULL) {
      /* INSERT: the item says; UPDATE: NULL where there was a value
      ** removes the attribute */
      if(old && pOld && i >= 0 &&
         (!bFromUser || ddb_av_equal(aAttr[i], pOld))) {
        aAttr[i] = aAttr[--nAttr];
      }
      continue;
    }
    rc = dd_key_value(p, c, v, &aKeyAv[c], &azBuf[c]);
    if(rc)
      goto fail;
    if(pOld && ddb_av_equal(&aKeyAv[c], pOld)) {
      /* unchanged: laid over a new item that lacks it (UPDATE t SET item =
      ** '{"name":"x"}' keeps the item's keys) */
      if(i < 0 && bFromUser)
        aAttr[nAttr++] = pOld;
      continue;
    }
    if(i >= 0 && bFromUser && !ddb_av_equal(aAttr[i], &aKeyAv[c]) &&
       !(pOld && ddb_av_equal(aAttr[i], pOld))) {
      dd_error(p, "column %s and item disagree on attribute '%s'", zName,
               zName);
      rc = SQLITE_CONSTRAINT;
      goto fail;
    }
    if(i >= 0)
      aAttr[i] = &aKeyAv[c];
    else
      aAttr[nAttr++] = &aKeyAv[c];
  }
  out = ddb_item_from_attrs(aAttr, nAttr);
  if(!out) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  rc = dd_validate(p, out);
  if(rc)
    goto fail;
  *pOut = out;
  out = NULL;

fail:
  for(c = 0; azBuf && c < p->nCol; c++)
    sqlite3_free(azBuf[c]);
  sqlite3_free(azBuf);
  sqlite3_free(aKeyAv);
  sqlite3_free((void *)aAttr);
  ddb_item_unref(base);
  ddb_item_unref(out);
  return rc;
}

/* Do a and b have the same table key? */
static int dd_same_key(dd_vtab *p, const ddb_item *a, const ddb_item *b) {
  int i;
  for(i = 0; i < p->nKey; i++) {
    const ddb_av *x = ddb_item_get(a, p->azKey[i]);
    const ddb_av *y = ddb_item_get(b, p->azKey[i]);
    if(!x || !y || !ddb_av_equal(x, y))
      return 0;
  }
  return 1;
}

/* Report a client error from a write; a failed condition becomes
** SQLITE_CONSTRAINT with zWhat (which names the key). */
static int dd_write_error(dd_vtab *p, const ddb_error *e, const char *zWhat) {
  if(strcmp(e->type, "ConditionalCheckFailedException") == 0 ||
     (strcmp(e->type, "TransactionCanceledException") == 0 &&
      strstr(e->message, "ConditionalCheckFailed"))) {
    dd_error(p, "%s", zWhat);
    return SQLITE_CONSTRAINT;
  }
  dd_error(p, "%s", e->message);
  return dd_rc(e);
}

/* ------------------------------------------------------------------------
** Writes sent at once (outside a transaction)
*/
static int dd_insert_now(dd_vtab *p, ddb_item *it, int onConflict) {
  ddb_error err;
  ddb_cond cond =
      onConflict == SQLITE_REPLACE ? DDB_COND_NONE : DDB_COND_NOT_EXISTS;
  int rc = SQLITE_OK;
  ddb_error_clear(&err);
  if(ddbc_put_item(p->pClient, p->pDesc, it, p->azKey, p->nKey, cond, &p->pol,
                   NULL, &err)) {
    char *zKey;
    /* under OR IGNORE SQLite turns the SQLITE_CONSTRAINT below into
    ** "skip this row" (SQLITE_VTAB_CONSTRAINT_SUPPORT) */
    zKey = dd_key_text(p, it);
    {
      char *zWhat = sqlite3_mprintf("INSERT: an item with key %s already "
                                    "exists (INSERT OR REPLACE overwrites it)",
                                    zKey ? zKey : "?");
      rc = dd_write_error(p, &err, zWhat ? zWhat : "INSERT: key exists");
      sqlite3_free(zWhat);
    }
    sqlite3_free(zKey);
    return rc;
  }
  return SQLITE_OK;
}

static int dd_delete_now(dd_vtab *p, const ddb_item *old) {
  ddb_error err;
  ddb_error_clear(&err);
  if(ddbc_delete_item(p->pClient, p->pDesc, old, p->azKey, p->nKey,
                      DDB_COND_NONE, &p->pol, NULL, &err))
    return dd_write_error(p, &err, "DELETE failed");
  return SQLITE_OK;
}

/* What an UPDATE from old to it changes: *pSet the attributes to SET (NULL
** when none), azRemove[0..*pnRemove) the names to REMOVE (borrowed from
** old; azRemove has room for old's attributes).  Key attributes are never
** set.  Returns an SQLite code. */
static int dd_diff(dd_vtab *p, const ddb_item *old, const ddb_item *it,
                   ddb_item **pSet, const char **azRemove, int *pnRemove) {
  const ddb_av **aSet;
  int nSet = 0, i;
  uint32_t k;
  *pSet = NULL;
  *pnRemove = 0;
  aSet = sqlite3_malloc64(sizeof(*aSet) * (it->root.n + 1));
  if(!aSet)
    return SQLITE_NOMEM;
  for(k = 0; k < it->root.n; k++) {
    const ddb_av *a = &it->root.kids[k];
    const ddb_av *b = ddb_item_get(old, a->name);
    int bKey = 0;
    for(i = 0; i < p->nKey; i++)
      bKey |= strcmp(a->name, p->azKey[i]) == 0;
    if(!bKey && (!b || !ddb_av_equal(a, b)))
      aSet[nSet++] = a;
  }
  for(k = 0; k < old->root.n; k++)
    if(!ddb_item_get(it, old->root.kids[k].name))
      azRemove[(*pnRemove)++] = old->root.kids[k].name;
  if(nSet > 0) {
    *pSet = ddb_item_from_attrs(aSet, nSet);
    if(!*pSet) {
      sqlite3_free((void *)aSet);
      return SQLITE_NOMEM;
    }
  }
  sqlite3_free((void *)aSet);
  return SQLITE_OK;
}

/* UPDATE without a key change: UpdateItem of what changed. */
static int dd_update_now(dd_vtab *p, const ddb_item *old, const ddb_item *it) {
  const char **azRemove = NULL;
  ddb_item *set = NULL;
  ddb_error err;
  int nRemove = 0, rc = SQLITE_OK;

  ddb_error_clear(&err);
  azRemove = sqlite3_malloc64(sizeof(*azRemove) * (old->root.n + 1));
  if(!azRemove)
    return SQLITE_NOMEM;
  rc = dd_diff(p, old, it, &set, azRemove, &nRemove);
  if(rc || (!set && nRemove == 0))
    goto fail; /* nothing changed: no call */
  /* old is the item as read, perhaps from the cache and not what DynamoDB
  ** held */
  if(ddbc_update_item(p->pClient, p->pDesc, it, p->azKey, p->nKey, set,
                      azRemove, nRemove, old, &p->pol, NULL, &err)) {
    char *zKey = dd_key_text(p, it);
    char *zWhat = sqlite3_mprintf("UPDATE: the item with key %s no longer "
                                  "exists",
                                  zKey ? zKey : "?");
    rc = dd_write_error(p, &err, zWhat ? zWhat : "UPDATE: item gone");
    sqlite3_free(zWhat);
    sqlite3_free(zKey);
    goto fail;
  }

fail:
  sqlite3_free((void *)azRemove);
  ddb_item_unref(set);
  return rc;
}

/* UPDATE that changes the table key: delete the old item and put the new
** one, in one transaction. */
static int dd_rekey_now(dd_vtab *p, const ddb_item *old, const ddb_item *it) {
  ddb_write w[2];
  const ddb_item *was[2];
  ddb_error err;
  ddb_error_clear(&err);
  memset(w, 0, sizeof(w));
  w[0].kind = DDB_WRITE_DELETE;
  w[0].item = old;
  w[0].cond = DDB_COND_EXISTS;
  w[1].kind = DDB_WRITE_PUT;
  w[1].item = it;
  w[1].cond = DDB_COND_NOT_EXISTS;
  was[0] = old;  /* as read */
  was[1] = NULL; /* none: the put's condition */
  if(ddbc_transact_write(p->pClient, p->pDesc, w, 2, p->azKey, p->nKey, was,
                         &p->pol, &err)) {
    char *zNew = dd_key_text(p, it);
    char *zWhat = sqlite3_mprintf("UPDATE: cannot move the item to key %s: "
                                  "it exists, or the old item is gone",
                                  zNew ? zNew : "?");
    int rc = dd_write_error(p, &err, zWhat ? zWhat : "UPDATE failed");
    sqlite3_free(zWhat);
    sqlite3_free(zNew);
    return rc;
  }
  return SQLITE_OK;
}

/* ------------------------------------------------------------------------
** xUpdate
*/

/* Inside a transaction, may the INSERT of it (or the UPDATE that moves a
** row to its key; zWhat names which) go ahead?  Not when an earlier
** write of this transaction left an item with its key: SQLITE_CONSTRAINT
** now, at the statement, as an ordinary table does.  An OR IGNORE
** (bIgnore) of a key the transaction has not written asks DynamoDB now
** (a consistent read): SQLITE_CONSTRAINT, which SQLite turns into "skip
** the row", when the item exists, so changes() and the transaction's reads
** see what an ordinary table would.  A plain INSERT's existing key is
** found at COMMIT (its condition). */
static int dd_insert_check(dd_vtab *p, const ddb_item *it, int bIgnore,
                           const char *zWhat) {
  ddb_item *pend = NULL, *found = NULL;
  const ddb_item *aKey[1];
  ddb_error err;
  char *zKey;
  int bPending = dd_pending_get(p, it, &pend);
  if(bPending && pend) {
    zKey = dd_key_text(p, it);
    dd_error(p,
             "%s: an item with key %s already exists (written earlier "
             "in this transaction; INSERT OR REPLACE overwrites it)",
             zWhat, zKey ? zKey : "?");
    sqlite3_free(zKey);
    return SQLITE_CONSTRAINT;
  }
  if(bPending || !bIgnore)
    return SQLITE_OK; /* deleted earlier in this transaction: free */
  aKey[0] = it;
  ddb_error_clear(&err);
  if(ddb_batch_get(p->pClient, p->pDesc->name, aKey, 1, p->azKey, p->nKey, 1,
                   &found, &err)) {
    dd_error(p, "%s OR IGNORE: %s", zWhat, err.message);
    return dd_rc(&err);
  }
  if(!found)
    return SQLITE_OK;
  ddb_item_unref(found);
  zKey = dd_key_text(p, it);
  dd_error(p, "%s: an item with key %s already exists", zWhat,
           zKey ? zKey : "?");
  sqlite3_free(zKey);
  return SQLITE_CONSTRAINT;
}

int dd_update(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
              sqlite3_int64 *pRowid) {
  dd_vtab *p = (dd_vtab *)pVtab;
  int bBuffer = !sqlite3_get_autocommit(p->db);
  const ddb_item *old = NULL;
  ddb_item *it = NULL;
  int rc;

  /* the first real write: the client (and credentials) are made now */
  rc = dd_client(p);
  if(rc)
    return rc;
  if(!dd_txn_get(p))
    return SQLITE_NOMEM;
  if(sqlite3_value_type(argv[0]) != SQLITE_NULL) {
    old = dd_row_get(p, sqlite3_value_int64(argv[0]));
    if(!old) {
      dd_error(p, "cannot find the row to change (rowid %lld)",
               sqlite3_value_int64(argv[0]));
      return SQLITE_ERROR;
    }
  }

  if(argc == 1) { /* DELETE */
    if(bBuffer)
      return dd_op_add(p, DDB_WRITE_DELETE, DDB_COND_NONE, old, NULL, 0);
    return dd_delete_now(p, old);
  }

  if(old && sqlite3_value_int64(argv[1]) != sqlite3_value_int64(argv[0])) {
    dd_error(p, "the rowid is derived from the key and cannot be set");
    return SQLITE_CONSTRAINT;
  }
  {
    /* keys (argv[3 + nCol]) is for reading; an UPDATE that does not set
    ** it passes it unchanged (dynamodbColumn) */
    sqlite3_value *pKeys = argv[3 + p->nCol];
    if(sqlite3_value_type(pKeys) != SQLITE_NULL &&
       !sqlite3_value_nochange(pKeys)) {
      char zName[32];
      dd_extra_col_name(p, "keys", zName);
      dd_error(p,
               "%s is for reading (WHERE %s = ... or %s(...)): it cannot "
               "be written",
               zName, zName, p->zVtabName);
      return SQLITE_CONSTRAINT;
    }
  }
  rc = dd_build_row(p, argv, old, &it);
  if(rc)
    return rc;

  if(!old) { /* INSERT */
    int onConflict = sqlite3_vtab_on_conflict(p->db);
    *pRowid = dd_key_rowid(p, it);
    if(bBuffer) {
      if(onConflict != SQLITE_REPLACE)
        rc = dd_insert_check(p, it, onConflict == SQLITE_IGNORE, "INSERT");
      if(rc == SQLITE_OK)
        rc = dd_op_add(p, DDB_WRITE_PUT,
                       onConflict == SQLITE_REPLACE ? DDB_COND_NONE
                                                    : DDB_COND_NOT_EXISTS,
                       it, NULL, onConflict != SQLITE_REPLACE);
    } else {
      rc = dd_insert_now(p, it, onConflict);
    }
  } else if(ddb_av_equal(&old->root, &it->root)) {
    rc = SQLITE_OK;                     /* UPDATE that changes nothing */
  } else if(!dd_same_key(p, old, it)) { /* UPDATE of the key */
    if(bBuffer) {
      /* the new key taken: UPDATE OR IGNORE skips the row now */
      rc = dd_insert_check(
          p, it, sqlite3_vtab_on_conflict(p->db) == SQLITE_IGNORE, "UPDATE");
      if(rc == SQLITE_OK)
        rc = dd_op_add(p, DDB_WRITE_DELETE, DDB_COND_EXISTS, old, NULL, 0);
      if(rc == SQLITE_OK)
        rc = dd_op_add(p, DDB_WRITE_PUT, DDB_COND_NOT_EXISTS, it, NULL, 1);
    } else {
      rc = dd_rekey_now(p, old, it);
    }
  } else { /* UPDATE */
    if(bBuffer)
      rc = dd_op_add(p, DDB_WRITE_UPDATE, DDB_COND_EXISTS, it, old, 0);
    else
      rc = dd_update_now(p, old, it);
  }
  ddb_item_unref(it);
  return rc;
}

/* ------------------------------------------------------------------------
** COMMIT: send the buffered writes
*/

/* Merge the buffered writes into one per item, in first-seen order (the
** dd_op's in *paOut borrow the transaction's references):
**
**   first, then        becomes
**   PUT, PUT           PUT of the newest item; an INSERT's "must not
**                      exist" stays (a REPLACE of a key an INSERT wrote
**                      still needs that key to have been free)
**   PUT, UPDATE        PUT of the newest item, same condition
**   UPDATE, UPDATE     UPDATE from the first's old image to the newest
**   UPDATE, PUT        PUT without condition (REPLACE of an existing item)
**   any, DELETE        DELETE; after an INSERT, a DELETE "must not exist"
**                      (nothing is written, but the INSERT's check stays)
**   DELETE, PUT        PUT, unconditional; after an INSERT and a DELETE
**                      the INSERT's "must not exist" again
*/
static int dd_coalesce(dd_vtab *p, dd_op **paOut, int *pnOut) {
  typedef struct seen {
    char *zKey; /* canonical key; sqlite3_free() */
    int idx;    /* in a[] */
    UT_hash_handle hh;
  } seen;
  dd_txn *t = p->pTxn;
  dd_op *a = sqlite3_malloc64(sizeof(dd_op) * ((sqlite3_uint64)t->nOp + 1));
  seen *map = NULL, *e, *tmp;
  ddb_buf b;
  int i, j, n = 0, rc = SQLITE_OK;
  if(!a)
    return SQLITE_NOMEM;
  ddb_buf_init(&b, 4u * 1024 * 1024);
  for(i = 0; i < t->nOp && rc == SQLITE_OK; i++) {
    const dd_op *o = &t->aOp[i];
    dd_op *x;
    ddb_buf_reset(&b);
    if(ddb_key_encode(o->item, p->azKey, p->nKey, &b) || !b.p) {
      rc = SQLITE_NOMEM;
      break;
    }
    HASH_FIND(hh, map, b.p, b.len, e);
    if(!e) {
      e = sqlite3_malloc(sizeof(*e));
      if(!e || !(e->zKey = sqlite3_malloc64(b.len + 1))) {
        sqlite3_free(e);
        rc = SQLITE_NOMEM;
        break;
      }
      memcpy(e->zKey, b.p, b.len);
      e->idx = n;
      HASH_ADD_KEYPTR(hh, map, e->zKey, b.len, e);
      a[n++] = *o;
      continue;
    }
    j = e->idx;
    x = &a[j];
    if(o->kind == DDB_WRITE_DELETE) {
      x->cond = x->bInsert ? DDB_COND_NOT_EXISTS : DDB_COND_NONE;
      x->kind = DDB_WRITE_DELETE;
      x->item = o->item;
      x->old = NULL;
    } else if(o->kind == DDB_WRITE_PUT) {
      if(x->kind == DDB_WRITE_UPDATE) {
        x->cond = DDB_COND_NONE; /* REPLACE of an item that exists */
        x->bInsert = 0;
      } else if(x->kind == DDB_WRITE_DELETE) {
        x->cond = x->bInsert ? DDB_COND_NOT_EXISTS : DDB_COND_NONE;
      }
      x->kind = DDB_WRITE_PUT;
      x->item = o->item;
      x->old = NULL;
    } else { /* UPDATE: of an item this transaction put, or updated */
      x->item = o->item;
      if(x->kind == DDB_WRITE_DELETE) { /* not reachable: the row is gone */
        x->kind = DDB_WRITE_PUT;
        x->cond = x->bInsert ? DDB_COND_NOT_EXISTS : DDB_COND_NONE;
      }
    }
  }
  HASH_ITER(hh, map, e, tmp) {
    HASH_DEL(map, e);
    sqlite3_free(e->zKey);
    sqlite3_free(e);
  }
  ddb_buf_free(&b);
  if(rc) {
    sqlite3_free(a);
    return rc;
  }
  *paOut = a;
  *pnOut = n;
  return SQLITE_OK;
}

/* The DynamoDB writes of the merged a[0..n): an UPDATE becomes the SET and
** REMOVE of what it changed against the image it read (aSet[i] and
** azRemove hold them; free with dd_writes_free); an UPDATE that changes
** nothing is left out.  w has room for n; *pnW is how many. */
typedef struct dd_writes {
  ddb_write *w;
  dd_op **aOp;         /* aOp[i]: the merged write of w[i] */
  ddb_item **aSet;     /* one a write; references */
  const char **azName; /* the REMOVE names of all writes */
  int n;
} dd_writes;

static void dd_writes_free(dd_writes *x) {
  int i;
  for(i = 0; x->aSet && i < x->n; i++)
    ddb_item_unref(x->aSet[i]);
  sqlite3_free(x->w);
  sqlite3_free(x->aOp);
  sqlite3_free(x->aSet);
  sqlite3_free((void *)x->azName);
  memset(x, 0, sizeof(*x));
}

static int dd_writes_build(dd_vtab *p, dd_op *a, int n, dd_writes *x) {
  size_t nName = 1;
  int i, used = 0, rc = SQLITE_OK;
  memset(x, 0, sizeof(*x));
  for(i = 0; i < n; i++)
    if(a[i].kind == DDB_WRITE_UPDATE)
      nName += a[i].old->root.n;
  x->w = sqlite3_malloc64(sizeof(*x->w) * ((size_t)n + 1));
  x->aOp = sqlite3_malloc64(sizeof(*x->aOp) * ((size_t)n + 1));
  x->aSet = sqlite3_malloc64(sizeof(*x->aSet) * ((size_t)n + 1));
  x->azName = sqlite3_malloc64(sizeof(*x->azName) * nName);
  if(!x->w || !x->aOp || !x->aSet || !x->azName) {
    dd_writes_free(x);
    return SQLITE_NOMEM;
  }
  for(i = 0; i < n && rc == SQLITE_OK; i++) {
    ddb_write *w = &x->w[x->n];
    memset(w, 0, sizeof(*w));
    x->aSet[x->n] = NULL;
    w->kind = a[i].kind;
    w->item = a[i].item;
    w->cond = a[i].cond;
    if(a[i].kind == DDB_WRITE_UPDATE) {
      int nRemove = 0;
      rc = dd_diff(p, a[i].old, a[i].item, &x->aSet[x->n], x->azName + used,
                   &nRemove);
      if(rc)
        break;
      if(!x->aSet[x->n] && nRemove == 0)
        continue; /* changed and changed back: nothing to send */
      w->cond = DDB_COND_EXISTS;
      w->set = x->aSet[x->n];
      w->remove = x->azName + used;
      w->n_remove = nRemove;
      used += nRemove;
    }
    x->aOp[x->n++] = &a[i];
  }
  if(rc)
    dd_writes_free(x);
  return rc;
}

/* Find "item N" in a transaction's error and name that item's key. */
static void dd_name_failed_item(dd_vtab *p, const ddb_error *e,
                                dd_op *const *a, int n, const char *zHow) {
  const char *z = strstr(e->message, "item ");
  long k = z ? strtol(z + 5, NULL, 10) : 0;
  char *zKey = (k >= 1 && k <= n) ? dd_key_text(p, a[k - 1]->item) : NULL;
  if(zKey && strstr(e->message, "ConditionalCheckFailed"))
    dd_error(p, "COMMIT: %s: the item with key %s %s", zHow, zKey,
             a[k - 1]->bInsert ? "already exists" : "does not exist any more");
  else if(zKey)
    dd_error(p, "COMMIT: %s: %s (item %lld is %s)", zHow, e->message,
             (long long)k, zKey);
  else
    dd_error(p, "COMMIT: %s: %s", zHow, e->message);
  sqlite3_free(zKey);
}

/* Send w[0..n) (n <= 100) as one TransactWriteItems, or one plain call
** when n is 1 (atomic too, at half the cost).  Returns an SQLite code with
** the error set on p (zHow says what was written when it failed). */
static int dd_send_atomic(dd_vtab *p, const dd_writes *x, int i0, int n,
                          const char *zHow) {
  const ddb_write *w = x->w + i0;
  ddbc_policy forget = p->pol;
  ddb_error err;
  int rc = SQLITE_OK;
  ddb_error_clear(&err);
  /* no answer of a TransactWriteItems holds the images: the cache forgets
  ** the items (item_ttl 0) */
  forget.item_ttl = 0;
  if(n == 1 && w[0].kind == DDB_WRITE_PUT && w[0].cond != DDB_COND_EXISTS) {
    if(ddbc_put_item(p->pClient, p->pDesc, w[0].item, p->azKey, p->nKey,
                     w[0].cond, &p->pol, NULL, &err))
      rc = SQLITE_ERROR;
  } else if(n == 1 && w[0].kind == DDB_WRITE_UPDATE) {
    if(ddbc_update_item(p->pClient, p->pDesc, w[0].item, p->azKey, p->nKey,
                        w[0].set, w[0].remove, w[0].n_remove, x->aOp[i0]->old,
                        &p->pol, NULL, &err))
      rc = SQLITE_ERROR;
  } else if(ddbc_transact_write(p->pClient, p->pDesc, w, n, p->azKey, p->nKey,
                                NULL, &forget, &err)) {
    rc = SQLITE_ERROR;
  }
  if(rc) {
    int bCond = strcmp(err.type, "ConditionalCheckFailedException") == 0;
    if(bCond)
      snprintf(err.message, sizeof(err.message),
               "item 1: ConditionalCheckFailed");
    if(err.maybe_applied && strcmp(zHow, "nothing written") == 0)
      /* an attempt may have reached DynamoDB (its answer was lost, or the
      ** statement was interrupted after sending): all or nothing */
      zHow = n == 1 ? "the write may or may not have been applied"
                    : "the transaction may or may not have been applied "
                      "(all of its writes or none)";
    dd_name_failed_item(p, &err, x->aOp + i0, n, zHow);
    rc = strstr(err.message, "ConditionalCheckFailed") ? SQLITE_CONSTRAINT
                                                       : dd_rc(&err);
  }
  return rc;
}

/* The bytes write w adds to a TransactWriteItems (see DD_TRANSACT_BYTES). */
static long long dd_write_bytes(const ddb_write *w) {
  long long n = (long long)ddb_item_size(w->item) + 100;
  if(w->kind == DDB_WRITE_UPDATE && w->set)
    n += (long long)ddb_item_size(w->set);
  return n;
}

/* How many of w[0..n) go in the next TransactWriteItems: at most
** DD_TRANSACT_MAX writes and DD_TRANSACT_BYTES bytes (at least one). */
static int dd_transact_chunk(const ddb_write *w, int n) {
  long long bytes = 0;
  int k;
  for(k = 0; k < n && k < DD_TRANSACT_MAX; k++) {
    bytes += dd_write_bytes(&w[k]);
    if(bytes > DD_TRANSACT_BYTES && k > 0)
      break;
  }
  return k;
}

/* More than 100 items, or 4 MB (split_transactions=yes).  Each write keeps its kind
** and condition; they go as TransactWriteItems of up to 100 (atomic each,
** not together), and the unconditional PUTs (REPLACE) and DELETEs as
** BatchWriteItem calls of 25, last.  The INSERTs are first checked with
** consistent BatchGetItem calls (100 keys each), so an existing key fails
** the COMMIT before anything is written. */
static int dd_commit_split(dd_vtab *p, dd_writes *x) {
  const ddb_item **aKey = sqlite3_malloc64(sizeof(*aKey) * ((size_t)x->n + 1));
  ddb_item **aFound = sqlite3_malloc64(sizeof(*aFound) * ((size_t)x->n + 1));
  ddb_write *wB = sqlite3_malloc64(sizeof(*wB) * ((size_t)x->n + 1));
  ddb_write *wT = sqlite3_malloc64(sizeof(*wT) * ((size_t)x->n + 1));
  dd_op **aT = sqlite3_malloc64(sizeof(*aT) * ((size_t)x->n + 1));
  ddb_error err;
  int i, m = 0, nB = 0, nT = 0, nDone = 0, rc = SQLITE_OK;

  ddb_error_clear(&err);
  if(!aKey || !aFound || !wB || !wT || !aT) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  for(i = 0; i < x->n; i++)
    if(x->aOp[i]->bInsert && x->w[i].kind == DDB_WRITE_PUT)
      aKey[m++] = x->w[i].item;
  if(m > 0) {
    if(ddb_batch_get(p->pClient, p->pDesc->name, aKey, (size_t)m, p->azKey,
                     p->nKey, 1, aFound, &err)) {
      dd_error(p, "COMMIT: nothing written: %s", err.message);
      rc = dd_rc(&err);
      goto fail;
    }
    for(i = 0; i < m; i++) {
      if(aFound[i] && rc == SQLITE_OK) {
        char *zKey = dd_key_text(p, aKey[i]);
        dd_error(p,
                 "COMMIT: nothing written: INSERT of key %s, which "
                 "already exists",
                 zKey ? zKey : "?");
        sqlite3_free(zKey);
        rc = SQLITE_CONSTRAINT;
      }
      ddb_item_unref(aFound[i]);
    }
    if(rc)
      goto fail;
  }
  for(i = 0; i < x->n; i++) {
    if(x->w[i].cond == DDB_COND_NONE && x->w[i].kind != DDB_WRITE_UPDATE) {
      wB[nB++] = x->w[i];
    } else {
      aT[nT] = x->aOp[i];
      wT[nT++] = x->w[i];
    }
  }
  for(i = 0; i < nT && rc == SQLITE_OK;) {
    dd_writes chunk;
    char zHow[160];
    int k = dd_transact_chunk(wT + i, nT - i);
    memset(&chunk, 0, sizeof(chunk));
    chunk.w = wT + i;
    chunk.aOp = aT + i;
    chunk.n = k;
    if(nDone == 0)
      snprintf(zHow, sizeof(zHow), "nothing written");
    else
      snprintf(zHow, sizeof(zHow),
               "failed part way (%d of the %d writes done: a COMMIT of more "
               "than %d items or 4 MB is not atomic)",
               nDone, x->n, DD_TRANSACT_MAX);
    rc = dd_send_atomic(p, &chunk, 0, k, zHow);
    nDone += k;
    i += k;
  }
  if(rc == SQLITE_OK && nB > 0) {
    if(ddbc_batch_write(p->pClient, p->pDesc, wB, (size_t)nB, p->azKey,
                        p->nKey, &p->pol, &err)) {
      dd_error(p,
               "COMMIT failed part way (%d of the %d writes done, then "
               "BatchWriteItem, which is not atomic, failed: some of its %d "
               "writes may be done): %s",
               nDone, x->n, nB, err.message);
      rc = dd_rc(&err);
    }
  }

fail:
  sqlite3_free((void *)aKey);
  sqlite3_free(aFound);
  sqlite3_free(wB);
  sqlite3_free(wT);
  sqlite3_free(aT);
  return rc;
}

int dd_sync(sqlite3_vtab *pVtab) {
  dd_vtab *p = (dd_vtab *)pVtab;
  dd_op *a = NULL;
  dd_writes x;
  int n = 0, rc;

  if(!p->pTxn || p->pTxn->nOp == 0)
    return SQLITE_OK;
  rc = dd_coalesce(p, &a, &n);
  if(rc)
    return rc;
  rc = dd_writes_build(p, a, n, &x);
  if(rc) {
    sqlite3_free(a);
    return rc;
  }
  if(x.n == 0) {
    rc = SQLITE_OK;
  } else if(dd_transact_chunk(x.w, x.n) == x.n) {
    rc = dd_send_atomic(p, &x, 0, x.n, "nothing written");
  } else if(!p->bSplit && x.n <= DD_TRANSACT_MAX) {
    dd_error(p,
             "COMMIT: nothing written: %d items of over %lld bytes in one "
             "transaction, over DynamoDB's 4 MB for an atomic write "
             "(split_transactions=no)",
             x.n, DD_TRANSACT_BYTES);
    rc = SQLITE_CONSTRAINT;
  } else if(!p->bSplit) {
    dd_error(p,
             "COMMIT: nothing written: %d items in one transaction, over "
             "DynamoDB's limit of %d for an atomic write "
             "(split_transactions=no)",
             x.n, DD_TRANSACT_MAX);
    rc = SQLITE_CONSTRAINT;
  } else {
    rc = dd_commit_split(p, &x);
  }
  dd_writes_free(&x);
  sqlite3_free(a);
  return rc;
}
