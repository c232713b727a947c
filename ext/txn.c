/*
** txn.c -- the transactions of a dynamodb virtual table: writes buffered
** between BEGIN and COMMIT, savepoints, and the COMMIT that sends them.
**
** Inside BEGIN ... COMMIT, writes are buffered (dd_op: the kind, the
** condition, the new image, and for an UPDATE the image it read; xUpdate,
** write.c, adds them with dd_op_add) and sent by xSync at COMMIT, merged to
** one write per item (dd_coalesce).  Each keeps its kind: an UPDATE is
** sent as the SET and REMOVE of what changed against the image it read, on
** condition that the item exists, never as a whole-item put.  Up to 100
** items and 4 MB go in one TransactWriteItems (all or nothing; a failure
** names the item); more as TransactWriteItems of up to 100 items and 4 MB
** each (atomic each, not together), then the unconditional puts (REPLACE)
** and deletes as BatchWriteItem, with the INSERTs first checked with a
** consistent BatchGetItem, so an existing key still fails the COMMIT
** before anything is written; with split_transactions=no, an error.
** ROLLBACK sends nothing; ROLLBACK TO a savepoint drops the writes after
** it.
**
** Reads inside the transaction see its writes: dd_txn.pend maps each
** written key (canonical, ddb_key_encode) to its newest write, and the
** cursor (cursor.c, dd_overlay_start) lays those over every read path.
**
** Every write goes through the cache (cache/write.c: ddbc_put_item ...).
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
dd_txn *dd_txn_get(dd_vtab *p) {
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

const ddb_item *dd_row_get(dd_vtab *p, sqlite3_int64 rowid) {
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
int dd_op_add(dd_vtab *p, ddb_write_kind kind, ddb_cond cond,
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
  dd_import_reset((dd_vtab *)pVtab);
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
