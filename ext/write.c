/*
** write.c -- INSERT, UPDATE and DELETE on a dynamodb virtual table
** (xUpdate): the row built and checked, and handed to the transaction.
**
**   INSERT              PutItem, condition attribute_not_exists(key): an
**                       existing key is SQLITE_CONSTRAINT naming the key
**   INSERT OR REPLACE   PutItem without condition
**   INSERT OR IGNORE    an existing key is skipped silently
**   UPDATE              UpdateItem of the attributes that changed (SET and
**                       REMOVE), on condition that the item is still as
**                       the statement read it (every attribute read holds
**                       the value read: a change in between fails the row,
**                       naming its key), ReturnValues=ALL_NEW; changing a
**                       table key column is a TransactWriteItems of
**                       Delete(old, still as read) and Put(new, must not
**                       exist), never sent apart, even in a COMMIT cut
**                       into several calls
**   DELETE              DeleteItem, ReturnValues=ALL_OLD; a row chosen on
**                       values other than its key (a non-key condition)
**                       on condition that it still holds what was read
**
** The rows an UPDATE or DELETE changes are read from DynamoDB itself,
** consistently, never from either cache tier (filter.c:
** dd_filter_policy), and xUpdate computes the new values from them.
**
** The row written is the `item` JSON object (or `item_raw`, DynamoDB's
** typed JSON) with every non-NULL key column laid over it.  Plain JSON maps
** back as client/json.c says; an UPDATE passes the item as it was read as
** the type hint, so sets and binaries keep their types.  Everything is
** checked before anything is sent: key attributes present, of their
** declared types and not empty, the item under 400 KB, and (client/json.c)
** every value of `item` and `item_raw` one DynamoDB takes (numbers in
** range, sets without an element twice).
**
** xUpdate hands the write to the transaction (txn.c: dd_op_add), which
** sends it at COMMIT, or, outside BEGIN ... COMMIT, at the end of the
** statement: one statement is one batch (dynamodbSync).  Only OR IGNORE and OR
** FAIL outside a transaction write each row as it comes (row.c:
** dd_write_now), as their rows need their answers at once.  A second
** INSERT of a key the transaction (or statement) wrote fails at once; an
** INSERT OR IGNORE of a key it did not write (or an UPDATE OR IGNORE that
** moves a row to such a key) inside a transaction reads the key from
** DynamoDB at the statement and skips the row when it exists
** (dd_insert_check).
**
** Every write goes through the cache (cache/write.c: ddbc_put_item ...),
** which tells it what the write did: the old image an answer gives is
** trusted only when the call was not retried; a retried or failed write
** makes every page of the table stale.
**
** UPDATE and DELETE find the row by rowid: while a write transaction is
** open, xRowid remembers each row it hands out (txn.c: dd_remember_row).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "dd_ext.h"

/* ------------------------------------------------------------------------
** Building the row to write
*/

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

/* The item a row written starts from (*pBase, a reference): the old
** item when neither item nor item_raw is set; the JSON of item_raw or of
** item (*pbFromUser); an empty item for an INSERT of key columns alone.
** Returns an SQLite code, with p's message set on error (bad JSON, an
** UPDATE setting item to NULL). */
static int dd_row_base(dd_vtab *p, sqlite3_value **argv, const ddb_item *old,
                       ddb_item **pBase, int *pbFromUser) {
  sqlite3_value *pItem = argv[2 + p->nCol], *pRaw = argv[4 + p->nCol];
  ddb_error err;
  ddb_error_clear(&err);
  *pBase = NULL;
  *pbFromUser = 0;
  if(old && sqlite3_value_nochange(pItem) && sqlite3_value_nochange(pRaw)) {
    *pBase = ddb_item_ref((ddb_item *)old);
    return SQLITE_OK;
  }
  if(sqlite3_value_type(pRaw) != SQLITE_NULL &&
     !(old && sqlite3_value_nochange(pRaw))) {
    const char *z = (const char *)sqlite3_value_text(pRaw);
    if(ddb_item_from_typed_json(z ? z : "", (size_t)sqlite3_value_bytes(pRaw),
                                pBase, &err)) {
      dd_error(p, "item_raw: %s", err.message);
      return err.code == DDB_ERR_NOMEM ? SQLITE_NOMEM : SQLITE_MISMATCH;
    }
    *pbFromUser = 1;
    return SQLITE_OK;
  }
  if(sqlite3_value_type(pItem) != SQLITE_NULL &&
     !(old && sqlite3_value_nochange(pItem))) {
    const char *z = (const char *)sqlite3_value_text(pItem);
    if(ddb_item_from_json(z ? z : "", (size_t)sqlite3_value_bytes(pItem), old,
                          pBase, &err)) {
      dd_error(p, "item: %s", err.message);
      return err.code == DDB_ERR_NOMEM ? SQLITE_NOMEM : SQLITE_MISMATCH;
    }
    *pbFromUser = 1;
    return SQLITE_OK;
  }
  if(old) {
    dd_error(p, "item cannot be set to NULL (DELETE the row instead)");
    return SQLITE_CONSTRAINT;
  }
  *pBase = ddb_item_from_avs(NULL, 0);
  return *pBase ? SQLITE_OK : SQLITE_NOMEM;
}

/* Lay key column c's value v over the attributes aAttr[0..*pnAttr) of
** the row being built (old: the UPDATE's image, or NULL; bFromUser: the
** attributes come from the user's item or item_raw), the value converted
** into *pKeyAv (its bytes in *pzBuf, sqlite3_free).  NULL removes the
** attribute from an UPDATE's row; a value the item contradicts is an
** error.  Returns an SQLite code, with p's message set on error. */
static int dd_row_key_col(dd_vtab *p, int c, sqlite3_value *v,
                          const ddb_item *old, int bFromUser,
                          const ddb_av **aAttr, int *pnAttr, ddb_av *pKeyAv,
                          char **pzBuf) {
  const char *zName = p->aCol[c].zName;
  const ddb_av *pOld = old ? ddb_item_get(old, zName) : NULL;
  int i = dd_attr_find(aAttr, *pnAttr, zName), rc;
  if(sqlite3_value_nochange(v))
    return SQLITE_OK;
  if(sqlite3_value_type(v) == SQLITE_NULL) {
    /* INSERT: the item says; UPDATE: NULL where there was a value
    ** removes the attribute */
    if(old && pOld && i >= 0 && (!bFromUser || ddb_av_equal(aAttr[i], pOld)))
      aAttr[i] = aAttr[--*pnAttr];
    return SQLITE_OK;
  }
  rc = dd_key_value(p, c, v, pKeyAv, pzBuf);
  if(rc)
    return rc;
  if(pOld && ddb_av_equal(pKeyAv, pOld)) {
    /* unchanged: laid over a new item that lacks it (UPDATE t SET item =
    ** '{"name":"x"}' keeps the item's keys) */
    if(i < 0 && bFromUser)
      aAttr[(*pnAttr)++] = pOld;
    return SQLITE_OK;
  }
  if(i >= 0 && bFromUser && !ddb_av_equal(aAttr[i], pKeyAv) &&
     !(pOld && ddb_av_equal(aAttr[i], pOld))) {
    dd_error(p, "column %s and item disagree on attribute '%s'", zName, zName);
    return SQLITE_CONSTRAINT;
  }
  if(i >= 0)
    aAttr[i] = pKeyAv;
  else
    aAttr[(*pnAttr)++] = pKeyAv;
  return SQLITE_OK;
}

/*
** Build the row an INSERT (old == NULL) or UPDATE writes from argv[2..]
** (the columns: key columns, item, item_raw).  On success *pOut is the new
** item, validated.
*/
static int dd_build_row(dd_vtab *p, sqlite3_value **argv, const ddb_item *old,
                        ddb_item **pOut) {
  ddb_item *base = NULL, *out = NULL;
  const ddb_av **aAttr = NULL;
  ddb_av *aKeyAv = NULL;
  char **azBuf = NULL;
  int nAttr = 0, bFromUser = 0, c, rc;
  uint32_t k;

  *pOut = NULL;
  rc = dd_row_base(p, argv, old, &base, &bFromUser);
  if(rc)
    return rc;
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
  for(c = 0; c < p->nCol && rc == SQLITE_OK; c++)
    rc = dd_row_key_col(p, c, argv[2 + c], old, bFromUser, aAttr, &nAttr,
                        &aKeyAv[c], &azBuf[c]);
  if(rc)
    goto fail;
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
             "in this %s; INSERT OR REPLACE overwrites it)",
             zWhat, zKey ? zKey : "?",
             sqlite3_get_autocommit(p->db) ? "statement" : "transaction");
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

/* Is the write xUpdate is called for buffered?  Inside BEGIN ... COMMIT
** always; outside, too (the statement's writes go at its end, as one
** transaction when they fit: txn.c), except under OR IGNORE and OR FAIL,
** whose rows each need their answer at once: an existing key skips the
** row (and changes() does not count it), or stops the statement with
** the rows before it written.  Those write each row as it comes. */
static int dd_buffered(dd_vtab *p) {
  int onConflict;
  if(!sqlite3_get_autocommit(p->db))
    return 1;
  onConflict = sqlite3_vtab_on_conflict(p->db);
  return onConflict != SQLITE_IGNORE && onConflict != SQLITE_FAIL;
}

/* What an INSERT or UPDATE may not set: the rowid (derived from the key)
** and the hidden column keys (for reading; an UPDATE that does not set
** it passes it unchanged: dynamodbColumn).  Returns SQLITE_OK, or
** SQLITE_CONSTRAINT with p's message set. */
static int dd_write_settable(dd_vtab *p, sqlite3_value **argv,
                             const ddb_item *old) {
  sqlite3_value *pKeys = argv[3 + p->nCol];
  if(old && sqlite3_value_int64(argv[1]) != sqlite3_value_int64(argv[0])) {
    dd_error(p, "the rowid is derived from the key and cannot be set");
    return SQLITE_CONSTRAINT;
  }
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
  return SQLITE_OK;
}

/* INSERT of row it (*pRowid its rowid): a PutItem unless the key exists
** (OR REPLACE: whatever exists), buffered (bBuffer, its key checked now
** unless OR REPLACE) or sent now.  Returns an SQLite code. */
static int dd_write_insert(dd_vtab *p, const ddb_item *it, int bBuffer,
                           sqlite3_int64 *pRowid) {
  int onConflict = sqlite3_vtab_on_conflict(p->db), rc = SQLITE_OK;
  ddb_cond cond =
      onConflict == SQLITE_REPLACE ? DDB_COND_NONE : DDB_COND_NOT_EXISTS;
  *pRowid = dd_key_rowid(p, it);
  if(!bBuffer)
    return dd_write_now(p, DDB_WRITE_PUT, cond, it, NULL);
  if(onConflict != SQLITE_REPLACE)
    rc = dd_insert_check(p, it, onConflict == SQLITE_IGNORE, "INSERT");
  if(rc == SQLITE_OK)
    rc = dd_op_add(p, DDB_WRITE_PUT, cond, it, NULL,
                   onConflict != SQLITE_REPLACE);
  return rc;
}

/* May a write be conditioned on old, the item as zVerb read it (every
** attribute of it as read: DDB_COND_SAME)?  Not an item whose condition
** is over DynamoDB's limits for one (ddb_condition_check).  Returns
** SQLITE_OK, or SQLITE_TOOBIG with p's message set (nothing buffered or
** sent). */
static int dd_write_same_ok(dd_vtab *p, const ddb_item *old,
                            const char *zVerb) {
  ddb_error err;
  char *zKey;
  ddb_error_clear(&err);
  if(ddb_condition_check(old, p->azKey, p->nKey, &err) == DDB_OK)
    return SQLITE_OK;
  if(err.code == DDB_ERR_NOMEM)
    return SQLITE_NOMEM;
  zKey = dd_key_text(p, old);
  dd_error(p,
           "%s of key %s: %s, which a write computed from what was read "
           "needs (so that a change in between fails it): INSERT OR "
           "REPLACE writes the whole item without that check",
           zVerb, zKey ? zKey : "?", err.message);
  sqlite3_free(zKey);
  return SQLITE_TOOBIG;
}

/* UPDATE of item old to row it: nothing when nothing changes; a move
** (Delete and Put together) when the key changes, the new key checked
** now when buffered (OR IGNORE skips the row); else an UpdateItem.  Each
** goes only if the item is still old, as the statement read it
** (DDB_COND_SAME; dd_write_same_ok).  Buffered (bBuffer) or sent now.
** Returns an SQLite code. */
static int dd_write_update(dd_vtab *p, const ddb_item *old, const ddb_item *it,
                           int bBuffer) {
  int rc;
  if(ddb_av_equal(&old->root, &it->root))
    return SQLITE_OK;
  rc = dd_write_same_ok(p, old, "UPDATE");
  if(rc)
    return rc;
  if(!dd_same_key(p, old, it)) {
    if(!bBuffer)
      return dd_move_now(p, old, it);
    rc = dd_insert_check(
        p, it, sqlite3_vtab_on_conflict(p->db) == SQLITE_IGNORE, "UPDATE");
    return rc ? rc : dd_op_add_move(p, old, it);
  }
  if(bBuffer)
    return dd_op_add(p, DDB_WRITE_UPDATE, DDB_COND_SAME, it, old, 0);
  return dd_write_now(p, DDB_WRITE_UPDATE, DDB_COND_SAME, it, old);
}

/* xUpdate: a DELETE (argc 1), an INSERT (argv[0] NULL) or an UPDATE of
** one row, buffered in the transaction (dd_op_add) or, for a row that
** needs its answer at once, sent now.  Returns an SQLite code, with the
** vtab's message set on error (nothing buffered or sent then). */
int dynamodbUpdate(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                   sqlite3_int64 *pRowid) {
  dd_vtab *p = (dd_vtab *)pVtab;
  int bBuffer = dd_buffered(p);
  const ddb_item *old = NULL;
  ddb_item *it = NULL;
  int rc, bDepends = 0;

  /* the first real write: the client (and credentials) are made now */
  rc = dd_client(p);
  if(rc)
    return rc;
  if(!dd_txn_get(p))
    return SQLITE_NOMEM;
  if(sqlite3_value_type(argv[0]) != SQLITE_NULL) {
    old = dd_row_get(p, sqlite3_value_int64(argv[0]), &bDepends);
    if(!old) {
      dd_error(p, "cannot find the row to change (rowid %lld)",
               sqlite3_value_int64(argv[0]));
      return SQLITE_ERROR;
    }
  }
  if(argc == 1) { /* DELETE */
    /* a row chosen on other values than its key goes only if it still
    ** holds what was read */
    ddb_cond cond = bDepends ? DDB_COND_SAME : DDB_COND_NONE;
    if(bDepends && (rc = dd_write_same_ok(p, old, "DELETE")) != SQLITE_OK)
      return rc;
    if(bBuffer)
      return dd_op_add(p, DDB_WRITE_DELETE, cond, old, bDepends ? old : NULL,
                       0);
    return dd_write_now(p, DDB_WRITE_DELETE, cond, old, NULL);
  }
  rc = dd_write_settable(p, argv, old);
  if(rc == SQLITE_OK && !old)
    rc = dd_import_check(p, argv); /* a CSV header row (import.c) */
  if(rc == SQLITE_OK)
    rc = dd_build_row(p, argv, old, &it);
  if(rc)
    return rc;
  rc = old ? dd_write_update(p, old, it, bBuffer)
           : dd_write_insert(p, it, bBuffer, pRowid);
  ddb_item_unref(it);
  return rc;
}
