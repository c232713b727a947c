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
** it.  Inside, writes are buffered and sent by xSync at COMMIT: up to 100
** distinct items in one TransactWriteItems (all or nothing; a failure
** names the item), more as BatchWriteItem calls of 25 (not atomic; the
** INSERTs among them are first checked with a consistent BatchGetItem, so
** an existing key still fails the COMMIT before anything is written), or,
** with split_transactions=no, an error.  ROLLBACK sends nothing.  Reads
** inside the transaction do not see its buffered writes.
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

typedef struct dd_op {
  ddb_write_kind kind;
  ddb_cond cond;
  ddb_item *item; /* PUT: the new item; DELETE: the old one (its key) */
  int bInsert;    /* from an INSERT: an existing key is an error */
} dd_op;

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
  dd_row *rows; /* rows handed out by xRowid */
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

static void dd_ops_truncate(dd_txn *t, int n) {
  while(t->nOp > n)
    ddb_item_unref(t->aOp[--t->nOp].item);
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
  dd_ops_truncate(t, 0);
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

/* Append a buffered write (takes a reference to item). */
static int dd_op_add(dd_vtab *p, ddb_write_kind kind, ddb_cond cond,
                     const ddb_item *item, int bInsert) {
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
  t->aOp[t->nOp].bInsert = bInsert;
  t->nOp++;
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

int dd_savepoint(sqlite3_vtab *pVtab, int iSavepoint) {
  dd_txn *t = dd_txn_get((dd_vtab *)pVtab);
  if(!t)
    return SQLITE_NOMEM;
  if(iSavepoint < 0 || iSavepoint >= DD_MAX_SAVEPOINTS) {
    dd_error((dd_vtab *)pVtab, "more than %d nested savepoints",
             DD_MAX_SAVEPOINTS);
    return SQLITE_ERROR;
  }
  while(t->nSave <= iSavepoint)
    t->aSave[t->nSave++] = t->nOp;
  t->aSave[iSavepoint] = t->nOp;
  return SQLITE_OK;
}

int dd_release(sqlite3_vtab *pVtab, int iSavepoint) {
  dd_txn *t = ((dd_vtab *)pVtab)->pTxn;
  if(t && iSavepoint < t->nSave)
    t->nSave = iSavepoint;
  return SQLITE_OK;
}

int dd_rollback_to(sqlite3_vtab *pVtab, int iSavepoint) {
  dd_txn *t = ((dd_vtab *)pVtab)->pTxn;
  if(t && iSavepoint < t->nSave)
    dd_ops_truncate(t, t->aSave[iSavepoint]);
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
  int e = sqlite3_value_type(v);
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
    *pzBuf = sqlite3_mprintf("%s", sqlite3_value_text(v));
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
  out->n = (uint32_t)strlen(*pzBuf);
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
  sqlite3_value *pItem = argv[2 + p->nCol], *pRaw = argv[3 + p->nCol];
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
    if(pOld && ddb_av_equal(&aKeyAv[c], pOld))
      continue; /* unchanged */
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
  ddb_item *old = NULL;
  ddb_cond cond =
      onConflict == SQLITE_REPLACE ? DDB_COND_NONE : DDB_COND_NOT_EXISTS;
  int rc = SQLITE_OK;
  ddb_error_clear(&err);
  if(ddb_put_item(p->pClient, p->pDesc->name, it, p->azKey, p->nKey, cond,
                  &old, &err)) {
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
  ddbc_note_write(p->pClient, p->pDesc, old, 1, it, it, &p->pol);
  ddb_item_unref(old);
  return SQLITE_OK;
}

static int dd_delete_now(dd_vtab *p, const ddb_item *old) {
  ddb_error err;
  ddb_item *was = NULL;
  ddb_error_clear(&err);
  if(ddb_delete_item(p->pClient, p->pDesc->name, old, p->azKey, p->nKey,
                     DDB_COND_NONE, &was, &err))
    return dd_write_error(p, &err, "DELETE failed");
  ddbc_note_write(p->pClient, p->pDesc, was, 1, NULL, old, &p->pol);
  ddb_item_unref(was);
  return SQLITE_OK;
}

/* UPDATE without a key change: UpdateItem of what changed. */
static int dd_update_now(dd_vtab *p, const ddb_item *old, const ddb_item *it) {
  const ddb_av **aSet = NULL;
  const char **azRemove = NULL;
  ddb_item *set = NULL, *updated = NULL;
  ddb_error err;
  int nSet = 0, nRemove = 0, rc = SQLITE_OK, i;
  uint32_t k;

  ddb_error_clear(&err);
  aSet = sqlite3_malloc64(sizeof(*aSet) * (it->root.n + 1));
  azRemove = sqlite3_malloc64(sizeof(*azRemove) * (old->root.n + 1));
  if(!aSet || !azRemove) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
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
      azRemove[nRemove++] = old->root.kids[k].name;
  if(nSet == 0 && nRemove == 0)
    goto fail; /* nothing changed: no call */
  set = ddb_item_from_attrs(aSet, nSet);
  if(!set) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  if(ddb_update_item(p->pClient, p->pDesc->name, it, p->azKey, p->nKey, set,
                     azRemove, nRemove, &updated, &err)) {
    char *zKey = dd_key_text(p, it);
    char *zWhat = sqlite3_mprintf("UPDATE: the item with key %s no longer "
                                  "exists",
                                  zKey ? zKey : "?");
    rc = dd_write_error(p, &err, zWhat ? zWhat : "UPDATE: item gone");
    sqlite3_free(zWhat);
    sqlite3_free(zKey);
    goto fail;
  }
  ddbc_note_write(p->pClient, p->pDesc, old, 1, updated ? updated : it, it,
                  &p->pol);

fail:
  sqlite3_free((void *)aSet);
  sqlite3_free((void *)azRemove);
  ddb_item_unref(set);
  ddb_item_unref(updated);
  return rc;
}

/* UPDATE that changes the table key: delete the old item and put the new
** one, in one transaction. */
static int dd_rekey_now(dd_vtab *p, const ddb_item *old, const ddb_item *it) {
  ddb_write w[2];
  ddb_error err;
  ddb_error_clear(&err);
  w[0].kind = DDB_WRITE_DELETE;
  w[0].item = old;
  w[0].cond = DDB_COND_EXISTS;
  w[1].kind = DDB_WRITE_PUT;
  w[1].item = it;
  w[1].cond = DDB_COND_NOT_EXISTS;
  if(ddb_transact_write(p->pClient, p->pDesc->name, w, 2, p->azKey, p->nKey,
                        &err)) {
    char *zNew = dd_key_text(p, it);
    char *zWhat = sqlite3_mprintf("UPDATE: cannot move the item to key %s: "
                                  "it exists, or the old item is gone",
                                  zNew ? zNew : "?");
    int rc = dd_write_error(p, &err, zWhat ? zWhat : "UPDATE failed");
    sqlite3_free(zWhat);
    sqlite3_free(zNew);
    return rc;
  }
  ddbc_note_write(p->pClient, p->pDesc, old, 1, NULL, old, &p->pol);
  ddbc_note_write(p->pClient, p->pDesc, NULL, 1, it, it, &p->pol);
  return SQLITE_OK;
}

/* ------------------------------------------------------------------------
** xUpdate
*/
int dd_update(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
              sqlite3_int64 *pRowid) {
  dd_vtab *p = (dd_vtab *)pVtab;
  int bBuffer = !sqlite3_get_autocommit(p->db);
  const ddb_item *old = NULL;
  ddb_item *it = NULL;
  int rc = SQLITE_OK;

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
      return dd_op_add(p, DDB_WRITE_DELETE, DDB_COND_NONE, old, 0);
    return dd_delete_now(p, old);
  }

  if(old && sqlite3_value_int64(argv[1]) != sqlite3_value_int64(argv[0])) {
    dd_error(p, "the rowid is derived from the key and cannot be set");
    return SQLITE_CONSTRAINT;
  }
  rc = dd_build_row(p, argv, old, &it);
  if(rc)
    return rc;

  if(!old) { /* INSERT */
    int onConflict = sqlite3_vtab_on_conflict(p->db);
    *pRowid = dd_key_rowid(p, it);
    if(bBuffer)
      rc = dd_op_add(p, DDB_WRITE_PUT,
                     onConflict == SQLITE_REPLACE ? DDB_COND_NONE
                                                  : DDB_COND_NOT_EXISTS,
                     it, onConflict != SQLITE_REPLACE);
    else
      rc = dd_insert_now(p, it, onConflict);
  } else if(ddb_av_equal(&old->root, &it->root)) {
    rc = SQLITE_OK;                     /* UPDATE that changes nothing */
  } else if(!dd_same_key(p, old, it)) { /* UPDATE of the key */
    if(bBuffer) {
      rc = dd_op_add(p, DDB_WRITE_DELETE, DDB_COND_EXISTS, old, 0);
      if(rc == SQLITE_OK)
        rc = dd_op_add(p, DDB_WRITE_PUT, DDB_COND_NOT_EXISTS, it, 1);
    } else {
      rc = dd_rekey_now(p, old, it);
    }
  } else { /* UPDATE */
    if(bBuffer)
      rc = dd_op_add(p, DDB_WRITE_PUT, DDB_COND_EXISTS, it, 0);
    else
      rc = dd_update_now(p, old, it);
  }
  ddb_item_unref(it);
  return rc;
}

/* ------------------------------------------------------------------------
** COMMIT: send the buffered writes
*/

/* Merge the buffered writes into one per item, in first-seen order:
** the last write wins; a PUT after a DELETE of the same key in this
** transaction needs no condition; an INSERT keeps its "must not exist"
** through later writes of the same key. */
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
    ddb_buf_reset(&b);
    if(ddb_key_encode(o->item, p->azKey, p->nKey, &b) || !b.p) {
      rc = SQLITE_NOMEM;
      break;
    }
    HASH_FIND(hh, map, b.p, b.len, e);
    if(!e) {
      e = sqlite3_malloc(sizeof(*e));
      if(!e || !(e->zKey = sqlite3_mprintf("%.*s", (int)b.len, b.p))) {
        sqlite3_free(e);
        rc = SQLITE_NOMEM;
        break;
      }
      e->idx = n;
      HASH_ADD_KEYPTR(hh, map, e->zKey, b.len, e);
      a[n++] = *o;
      continue;
    }
    j = e->idx;
    if(o->kind == DDB_WRITE_DELETE) {
      a[j].kind = DDB_WRITE_DELETE;
      a[j].cond = DDB_COND_NONE;
      a[j].bInsert = 0;
      a[j].item = o->item;
    } else {
      if(a[j].kind == DDB_WRITE_DELETE) {
        a[j].cond = DDB_COND_NONE;
        a[j].bInsert = 0;
      }
      a[j].kind = DDB_WRITE_PUT;
      a[j].item = o->item;
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

/* Find "item N" in a transaction's error and name that item's key. */
static void dd_name_failed_item(dd_vtab *p, const ddb_error *e, dd_op *a,
                                int n) {
  const char *z = strstr(e->message, "item ");
  long k = z ? strtol(z + 5, NULL, 10) : 0;
  char *zKey = (k >= 1 && k <= n) ? dd_key_text(p, a[k - 1].item) : NULL;
  if(zKey && strstr(e->message, "ConditionalCheckFailed"))
    dd_error(p, "COMMIT: nothing written: the item with key %s %s", zKey,
             a[k - 1].bInsert ? "already exists" : "does not exist any more");
  else if(zKey)
    dd_error(p, "COMMIT: nothing written: %s (item %lld is %s)", e->message,
             (long long)k, zKey);
  else
    dd_error(p, "COMMIT: nothing written: %s", e->message);
  sqlite3_free(zKey);
}

/* More than 100 items: INSERTs must not find their keys (checked with one
** consistent BatchGetItem per 100), then BatchWriteItem. */
static int dd_commit_split(dd_vtab *p, dd_op *a, int n) {
  const ddb_item **aKey = sqlite3_malloc64(sizeof(*aKey) * ((size_t)n + 1));
  ddb_item **aFound = sqlite3_malloc64(sizeof(*aFound) * ((size_t)n + 1));
  ddb_write *w = sqlite3_malloc64(sizeof(*w) * ((size_t)n + 1));
  ddb_error err;
  int i, m = 0, rc = SQLITE_OK;

  ddb_error_clear(&err);
  if(!aKey || !aFound || !w) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  for(i = 0; i < n; i++)
    if(a[i].bInsert)
      aKey[m++] = a[i].item;
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
  for(i = 0; i < n; i++) {
    w[i].kind = a[i].kind;
    w[i].item = a[i].item;
    w[i].cond = DDB_COND_NONE;
  }
  if(ddb_batch_write(p->pClient, p->pDesc->name, w, (size_t)n, p->azKey,
                     p->nKey, &err)) {
    /* not atomic: say so */
    dd_error(p,
             "COMMIT failed part way (BatchWriteItem is not atomic; some "
             "of the %d writes may be done): %s",
             n, err.message);
    rc = dd_rc(&err);
  }

fail:
  sqlite3_free((void *)aKey);
  sqlite3_free(aFound);
  sqlite3_free(w);
  return rc;
}

int dd_sync(sqlite3_vtab *pVtab) {
  dd_vtab *p = (dd_vtab *)pVtab;
  dd_op *a = NULL;
  ddb_error err;
  int n = 0, i, rc;

  if(!p->pTxn || p->pTxn->nOp == 0)
    return SQLITE_OK;
  ddb_error_clear(&err);
  rc = dd_coalesce(p, &a, &n);
  if(rc)
    return rc;
  if(n <= DD_TRANSACT_MAX) {
    ddb_write *w = sqlite3_malloc64(sizeof(*w) * ((size_t)n + 1));
    if(!w) {
      sqlite3_free(a);
      return SQLITE_NOMEM;
    }
    for(i = 0; i < n; i++) {
      w[i].kind = a[i].kind;
      w[i].item = a[i].item;
      w[i].cond = a[i].cond;
    }
    if(n == 1 && a[0].kind == DDB_WRITE_PUT && a[0].cond != DDB_COND_EXISTS) {
      /* one item: a plain PutItem is atomic too, at half the cost */
      if(ddb_put_item(p->pClient, p->pDesc->name, a[0].item, p->azKey, p->nKey,
                      a[0].cond, NULL, &err))
        rc = SQLITE_ERROR;
    } else if(ddb_transact_write(p->pClient, p->pDesc->name, w, n, p->azKey,
                                 p->nKey, &err)) {
      rc = SQLITE_ERROR;
    }
    sqlite3_free(w);
    if(rc) {
      if(strcmp(err.type, "ConditionalCheckFailedException") == 0) {
        snprintf(err.message, sizeof(err.message),
                 "item 1: ConditionalCheckFailed");
      }
      dd_name_failed_item(p, &err, a, n);
      rc = strstr(err.message, "ConditionalCheckFailed") ? SQLITE_CONSTRAINT
                                                         : dd_rc(&err);
    }
  } else if(!p->bSplit) {
    dd_error(p,
             "COMMIT: nothing written: %d items in one transaction, over "
             "DynamoDB's limit of %d for an atomic write "
             "(split_transactions=no)",
             n, DD_TRANSACT_MAX);
    rc = SQLITE_CONSTRAINT;
  } else {
    rc = dd_commit_split(p, a, n);
  }
  if(rc == SQLITE_OK)
    for(i = 0; i < n; i++)
      ddbc_note_write(p->pClient, p->pDesc, NULL, 0,
                      a[i].kind == DDB_WRITE_PUT ? a[i].item : NULL, a[i].item,
                      &p->pol);
  sqlite3_free(a);
  return rc;
}
