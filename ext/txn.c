/*
** txn.c -- the transactions of a dynamodb virtual table: writes buffered
** between BEGIN and COMMIT (and, outside one, for the length of a
** statement), savepoints, and the xSync that hands them on: commit.c
** plans the calls (merges the writes, cuts them into calls), commit_send.c
** sends them and reports a failure.  This file holds what a transaction
** has pending; the other two see it only as arrays of dd_op (commit.h).
**
** Writes are buffered (dd_op: the kind, the condition, the new image, and
** for an UPDATE the image it read; xUpdate, write.c, adds them with
** dd_op_add) and sent by xSync, at COMMIT or, outside BEGIN ... COMMIT,
** at the end of the statement (SQLite calls xBegin, xSync and xCommit
** around every statement that writes a virtual table): one statement is
** one batch.  A statement's single write goes alone as it always did
** (row.c: dd_write_now); otherwise the writes are merged to one per item
** (commit.c: dd_coalesce).  Each keeps its kind: an UPDATE is sent as the SET and
** REMOVE of what changed against the image it read, on condition that
** the item is still that image (DDB_COND_SAME: every attribute read holds
** the value read; a DELETE whose row was chosen on other values than its
** key, and the Delete of a key move, too), never as a whole-item put.  Up to 100 items and 4 MB
** go in one TransactWriteItems (all or nothing; a failure names the
** item); more (split_transactions; without it, an error) as calls that
** are atomic each, not together (commit_send.c: dd_commit_split): TransactWriteItems of
** up to 100 items and 4 MB, then the unconditional puts (REPLACE) and
** deletes as BatchWriteItem, with the INSERTs first checked with
** consistent BatchGetItems, so an existing key still fails before
** anything is written.  The Delete and the Put of a key move (and every
** write merged with either) stay in one call.  The calls run write_calls
** at a time (cache/wcalls.c), each labelled in the request log; a failure
** stops those not started and says what became of every write
** (dd_report_split).  A statement of over DD_STMT_FLUSH_OPS writes sends
** them in parts as it runs (dd_stmt_flush).  A server without
** TransactWriteItems is found by the first call that needs it
** (dd_vtab.eTransact): a statement then goes as single writes and
** BatchWriteItem.  ROLLBACK sends nothing; ROLLBACK TO a savepoint drops
** the writes after it.
**
** Reads inside the transaction (or statement) see its writes: dd_txn.pend
** maps each written key (canonical, ddb_key_encode) to its newest write,
** and the cursor (cursor.c, dd_overlay_start) lays those over every read
** path, whatever virtual table the read goes through: the overlay of a
** read is the newest write of each key (dd_op.iSeq) among the open
** transactions of every virtual table of the connection over the same
** DynamoDB table (same table name, endpoint, region and credentials:
** dd_same_table).
**
** Across virtual tables.  The connection keeps a registry of its virtual
** tables with a write transaction open (dd_txn_reg, kept by stmt.c's
** dd_conn).  SQLite calls xSync on each of them, in an order of its own,
** before xCommit on any: the first xSync sends the writes of every one of
** them that writes with the same endpoint, region and credentials
** (dd_same_account) as one batch, in the order they were made
** (dd_group_ops): one TransactWriteItems when they fit, else cut into
** calls by the rules above, a failure naming each write's table; the
** others' xSync then has nothing to send (dd_txn.bSent).  Writes of
** another account, region or endpoint cannot be in that transaction: they
** go at their own xSync, and should they fail, the message says what the
** earlier xSyncs wrote (dd_txn_reg.zSent).  Savepoints and ROLLBACK stay
** each virtual table's own (SQLite calls them on every one).
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

#include "commit.h"

/* Savepoints tracked at the most. */
#define DD_MAX_SAVEPOINTS 64

/* The last dd_op.iSeq given (atomic). */
static sqlite3_uint64 dd_op_seq;

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
  int bDepends; /* chosen on values other than its key (dd_remember_row) */
  UT_hash_handle hh;
} dd_row;

struct dd_txn {
  int bActive;       /* between xBegin and xCommit/xRollback */
  int bStmt;         /* the buffered writes are one statement's, outside BEGIN
                  ... COMMIT: sent at its end (set at its first write) */
  const char *zVerb; /* bStmt: the statement's kind for messages
                        ("INSERT", "UPDATE", "DELETE"); static */
  long long nBytes;  /* bStmt: bytes of the items buffered */
  int nSent;         /* bStmt: writes its earlier parts sent (applied) */
  dd_op *aOp;        /* buffered writes, in order */
  int nOp, nAlloc;
  int aSave[DD_MAX_SAVEPOINTS]; /* nOp at each savepoint */
  int nSave;
  dd_row *rows;      /* rows handed out by xRowid */
  dd_pend *pend;     /* the newest write of each key in aOp[0..nOp) */
  dd_vtab *pNextTxn; /* bListed: the next in the connection's registry */
  int bListed;       /* in the registry (dd_txn_reg), from xBegin on */
  int bSent;         /* its writes went at this COMMIT's xSync (its own, or
                        an earlier one's: dd_group_sent) */
};

/* The connection's virtual tables with a write transaction open (see the
** header): made by the first xBegin, freed when the last one ends.  Used
** on the connection's thread only. */
struct dd_txn_reg {
  dd_vtab *pHead; /* linked by dd_txn.pNextTxn */
  char *zSent;    /* what this COMMIT's earlier xSyncs wrote, NULL: none;
                     sqlite3_free() */
};

/* ------------------------------------------------------------------------
** The registry of the connection's open write transactions
*/

/* p's connection's registry (bMake: made when missing), or NULL: none
** (out of memory, or a vtab without a connection state). */
static dd_txn_reg *dd_reg(dd_vtab *p, int bMake) {
  dd_txn_reg **pp = dd_conn_txn_reg(p->pConn);
  if(!pp)
    return NULL;
  if(!*pp && bMake && (*pp = sqlite3_malloc(sizeof(**pp))) != NULL)
    memset(*pp, 0, sizeof(**pp));
  return *pp;
}

/* List p's transaction in the registry (at xBegin).  Returns an SQLite
** code: without the registry, its writes could not join the others'. */
static int dd_reg_add(dd_vtab *p) {
  dd_txn_reg *r;
  if(!p->pConn || p->pTxn->bListed)
    return SQLITE_OK;
  r = dd_reg(p, 1);
  if(!r)
    return SQLITE_NOMEM;
  p->pTxn->pNextTxn = r->pHead;
  r->pHead = p;
  p->pTxn->bListed = 1;
  return SQLITE_OK;
}

/* Take p's transaction out of the registry (its end); the last one out
** ends what the COMMIT's xSyncs noted. */
static void dd_reg_remove(dd_vtab *p) {
  dd_txn_reg *r;
  dd_vtab **pp;
  if(!p->pTxn || !p->pTxn->bListed || (r = dd_reg(p, 0)) == NULL)
    return;
  for(pp = &r->pHead; *pp; pp = &(*pp)->pTxn->pNextTxn)
    if(*pp == p) {
      *pp = p->pTxn->pNextTxn;
      break;
    }
  p->pTxn->pNextTxn = NULL;
  p->pTxn->bListed = 0;
  if(!r->pHead) { /* the COMMIT or ROLLBACK is over */
    sqlite3_free(r->zSent);
    sqlite3_free(r);
    *dd_conn_txn_reg(p->pConn) = NULL;
  }
}

/* Do p and q write as one principal to one place (the same endpoint,
** region and credentials: ddb_client_scope), so that their writes may be
** one TransactWriteItems?  Both must have their clients. */
static int dd_same_account(dd_vtab *p, dd_vtab *q) {
  const char *a, *b, *c, *d;
  size_t na, nb, nc, nd;
  if(!p->pClient || !q->pClient)
    return 0;
  ddb_client_scope(p->pClient, &a, &na, &b, &nb);
  ddb_client_scope(q->pClient, &c, &nc, &d, &nd);
  return na == nc && nb == nd && memcmp(a, c, na) == 0 &&
         memcmp(b, d, nb) == 0;
}

/* Are p and q over the same DynamoDB table: the same table name, place
** and principal?  (A read has made p's client first: dd_filter_plan.) */
static int dd_same_table(dd_vtab *p, dd_vtab *q) {
  if(p == q)
    return 1;
  if(!p->pDesc || !q->pDesc || strcmp(p->pDesc->name, q->pDesc->name) != 0)
    return 0;
  return dd_same_account(p, q);
}

/* The next vtab after q (NULL: the first) whose open transaction has
** buffered writes to p's DynamoDB table: p itself, or another virtual
** table over that table; NULL after the last. */
static dd_vtab *dd_over_next(dd_vtab *p, dd_vtab *q) {
  dd_txn_reg *r = dd_reg(p, 0);
  if(!r || !r->pHead) /* none listed: p alone */
    return !q && p->pTxn && p->pTxn->bActive && p->pTxn->pend ? p : NULL;
  for(q = q ? q->pTxn->pNextTxn : r->pHead; q; q = q->pTxn->pNextTxn)
    if(q->pTxn->bActive && q->pTxn->pend && dd_same_table(p, q))
      return q;
  return NULL;
}

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

/* End p's transaction: drop buffered writes and remembered rows, and
** take it out of the registry. */
static void dd_txn_end(dd_vtab *p) {
  dd_txn *t = p->pTxn;
  if(!t)
    return;
  dd_reg_remove(p);
  dd_ops_truncate(NULL, t, 0);
  dd_pend_free(t);
  dd_rows_free(t);
  t->nSave = 0;
  t->bActive = 0;
  t->bStmt = 0;
  t->zVerb = NULL;
  t->nBytes = 0;
  t->nSent = 0;
  t->bSent = 0;
}

void dd_txn_free(dd_vtab *p) {
  if(!p->pTxn)
    return;
  dd_txn_end(p);
  sqlite3_free(p->pTxn->aOp);
  sqlite3_free(p->pTxn);
  p->pTxn = NULL;
}

int dd_in_write(dd_vtab *p) {
  return p->pTxn && p->pTxn->bActive;
}

int dd_remember_row(dd_vtab *p, sqlite3_int64 rowid, ddb_item *it,
                    int bDepends) {
  dd_row *r;
  if(!p->pTxn || !p->pTxn->bActive)
    return SQLITE_OK;
  HASH_FIND(hh, p->pTxn->rows, &rowid, sizeof(rowid), r);
  if(r) {
    ddb_item_unref(r->item);
    r->item = ddb_item_ref(it);
    r->bDepends |= bDepends;
    return SQLITE_OK;
  }
  r = sqlite3_malloc(sizeof(*r));
  if(!r)
    return SQLITE_NOMEM;
  r->rowid = rowid;
  r->item = ddb_item_ref(it);
  r->bDepends = bDepends;
  HASH_ADD(hh, p->pTxn->rows, rowid, sizeof(rowid), r);
  return SQLITE_OK;
}

const ddb_item *dd_row_get(dd_vtab *p, sqlite3_int64 rowid, int *pbDepends) {
  dd_row *r = NULL;
  if(p->pTxn)
    HASH_FIND(hh, p->pTxn->rows, &rowid, sizeof(rowid), r);
  if(pbDepends)
    *pbDepends = r ? r->bDepends : 0;
  return r ? r->item : NULL;
}

/* The newest buffered write of the key encoded as aKey[0..nKey) among
** the transactions over p's DynamoDB table (dd_over_next), or NULL. */
static const dd_op *dd_pending_op(dd_vtab *p, const void *aKey, size_t nKey) {
  const dd_op *o = NULL;
  dd_vtab *q;
  for(q = dd_over_next(p, NULL); q; q = dd_over_next(p, q)) {
    dd_pend *e;
    HASH_FIND(hh, q->pTxn->pend, aKey, nKey, e);
    if(e && (!o || q->pTxn->aOp[e->iOp].iSeq > o->iSeq))
      o = &q->pTxn->aOp[e->iOp];
  }
  return o;
}

int dd_pending_get(dd_vtab *p, const ddb_item *it, ddb_item **pOut) {
  const dd_op *o;
  ddb_buf b;
  char aBuf[256];
  *pOut = NULL;
  if(!dd_over_next(p, NULL))
    return 0;
  ddb_buf_init_with(&b, aBuf, sizeof(aBuf), 4u * 1024 * 1024);
  if(ddb_key_encode(it, p->azKey, p->nKey, &b) || !b.p) {
    ddb_buf_free(&b);
    return 0;
  }
  o = dd_pending_op(p, b.p, b.len);
  ddb_buf_free(&b);
  if(!o)
    return 0;
  if(o->kind != DDB_WRITE_DELETE)
    *pOut = o->item;
  return 1;
}

int dd_pending_images(dd_vtab *p, ddb_item ***paOut, int *pnOut) {
  dd_vtab *q;
  dd_pend *e;
  ddb_item **a;
  size_t nMax = 0;
  int n = 0;
  *paOut = NULL;
  *pnOut = 0;
  for(q = dd_over_next(p, NULL); q; q = dd_over_next(p, q))
    nMax += HASH_COUNT(q->pTxn->pend);
  if(nMax == 0)
    return SQLITE_OK;
  a = sqlite3_malloc64(sizeof(*a) * (nMax + 1));
  if(!a)
    return SQLITE_NOMEM;
  for(q = dd_over_next(p, NULL); q; q = dd_over_next(p, q))
    for(e = q->pTxn->pend; e; e = e->hh.next) {
      const dd_op *o = &q->pTxn->aOp[e->iOp];
      /* each key once: its newest write, whichever table's it is */
      if(o->kind != DDB_WRITE_DELETE &&
         dd_pending_op(p, e->aKey, e->nKey) == o)
        a[n++] = ddb_item_ref(o->item);
    }
  *paOut = a;
  *pnOut = n;
  return SQLITE_OK;
}

int dd_pending_any(dd_vtab *p) {
  return dd_over_next(p, NULL) != NULL;
}

/* Append a buffered write (takes references to item and old) and make it
** the newest write of its key; bTied: to be applied with the write before
** it (see dd_op.bTied).  Returns an SQLite code; on error nothing is
** buffered. */
static int dd_op_push(dd_vtab *p, ddb_write_kind kind, ddb_cond cond,
                      const ddb_item *item, const ddb_item *old, int bInsert,
                      int bTied) {
  dd_txn *t = p->pTxn;
  if(t->nOp == 0) {
    /* outside BEGIN ... COMMIT the statement's writes are buffered and
    ** sent at its end, as one transaction when they fit (dynamodbSync) */
    t->bStmt = sqlite3_get_autocommit(p->db);
    t->zVerb = kind == DDB_WRITE_PUT      ? "INSERT"
               : kind == DDB_WRITE_UPDATE ? "UPDATE"
                                          : "DELETE";
    t->nBytes = 0;
  }
  t->nBytes += (long long)ddb_item_size(item);
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
  t->aOp[t->nOp].bTied = bTied && t->nOp > 0;
  t->aOp[t->nOp].iGroup = 0;
  t->aOp[t->nOp].pTab = p;
  t->aOp[t->nOp].iSeq = __atomic_add_fetch(&dd_op_seq, 1, __ATOMIC_RELAXED);
  t->nOp++;
  if(dd_pend_note(p, t->nOp - 1)) {
    dd_ops_truncate(p, t, t->nOp - 1);
    return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

static int dd_stmt_flush(dd_vtab *p);

/* Statement writes buffered at the most (count or bytes of items) before
** the statement sends what it has and goes on (dd_stmt_flush): a
** statement that big is cut into calls anyway, and so holds the memory of
** at most this many items (an INSERT ... SELECT of millions of rows). */
#define DD_STMT_FLUSH_OPS   10000
#define DD_STMT_FLUSH_BYTES (32LL * 1024 * 1024)

/* After a write is buffered: a statement's buffer that reached its bound
** is sent now.  Returns an SQLite code. */
static int dd_op_added(dd_vtab *p) {
  dd_txn *t = p->pTxn;
  if(t->bStmt &&
     (t->nOp >= DD_STMT_FLUSH_OPS || t->nBytes >= DD_STMT_FLUSH_BYTES))
    return dd_stmt_flush(p);
  return SQLITE_OK;
}

int dd_op_add(dd_vtab *p, ddb_write_kind kind, ddb_cond cond,
              const ddb_item *item, const ddb_item *old, int bInsert) {
  int rc = dd_op_push(p, kind, cond, item, old, bInsert, 0);
  return rc ? rc : dd_op_added(p);
}

/* The Delete (the item must be old, as read) and the Put (must not
** exist) of a key move,
** tied: COMMIT sends them in one TransactWriteItems however big it is
** (apart, a failure between them would leave the item nowhere).  Both or
** neither are buffered. */
int dd_op_add_move(dd_vtab *p, const ddb_item *old, const ddb_item *it) {
  dd_txn *t = p->pTxn;
  int n = t->nOp;
  int rc = dd_op_push(p, DDB_WRITE_DELETE, DDB_COND_SAME, old, old, 0, 0);
  if(rc == SQLITE_OK) {
    rc = dd_op_push(p, DDB_WRITE_PUT, DDB_COND_NOT_EXISTS, it, NULL, 1, 1);
    if(rc)
      dd_ops_truncate(p, t, n);
  }
  if(rc == SQLITE_OK && n == 0)
    t->zVerb = "UPDATE";
  return rc ? rc : dd_op_added(p);
}

/* xBegin: a write transaction starts (nothing buffered yet).  Returns
** SQLITE_OK, or SQLITE_NOMEM. */
int dynamodbBegin(sqlite3_vtab *pVtab) {
  dd_txn *t = dd_txn_get((dd_vtab *)pVtab);
  if(!t)
    return SQLITE_NOMEM;
  dd_txn_end((dd_vtab *)pVtab);
  if(dd_reg_add((dd_vtab *)pVtab))
    return SQLITE_NOMEM;
  t->bActive = 1;
  dd_import_reset((dd_vtab *)pVtab);
  dd_stmt_write((dd_vtab *)pVtab); /* a statement, for dynamodb_last() */
  return SQLITE_OK;
}

/* xCommit: the writes went at xSync; forget them.  Returns SQLITE_OK. */
int dynamodbCommit(sqlite3_vtab *pVtab) {
  dd_txn_end((dd_vtab *)pVtab);
  return SQLITE_OK;
}

/* xRollback: drop the buffered writes, none was sent.  Returns
** SQLITE_OK. */
int dynamodbRollback(sqlite3_vtab *pVtab) {
  dd_txn_end((dd_vtab *)pVtab);
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
int dynamodbSavepoint(sqlite3_vtab *pVtab, int iSavepoint) {
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

/* xRelease: savepoint iSavepoint and those after it end, their writes
** kept.  Returns SQLITE_OK. */
int dynamodbRelease(sqlite3_vtab *pVtab, int iSavepoint) {
  dd_txn *t = ((dd_vtab *)pVtab)->pTxn;
  if(t && iSavepoint < t->nSave)
    t->nSave = iSavepoint < 0 ? 0 : iSavepoint;
  return SQLITE_OK;
}

/* Back to savepoint iSavepoint, which stays open (-1: back to xBegin). */
int dynamodbRollbackTo(sqlite3_vtab *pVtab, int iSavepoint) {
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

/* A statement outside BEGIN ... COMMIT that buffered one write (or one
** key move): sent as it always was, alone (write.c), and counted towards
** the hint that single-row statements in a row should be a transaction
** (DD_HINT_SINGLES of them, on a terminal: monitor.c). */
static int dd_sync_one(dd_vtab *p, dd_txn *t) {
  int rc;
  if(t->nOp == 2)
    rc = dd_move_now(p, t->aOp[0].item, t->aOp[1].item);
  else
    rc = dd_write_now(p, t->aOp[0].kind, t->aOp[0].cond, t->aOp[0].item,
                      t->aOp[0].old);
  if(rc == SQLITE_OK && ++p->nSingleRun == DD_HINT_SINGLES)
    dd_hint_singles(p);
  return rc;
}

/* May q's writes go with p's, in p's xSync?  q's transaction is open
** with writes not sent, of the same kind (a COMMIT's, or a statement's
** with none of its parts sent yet), with the same endpoint, region and
** credentials as p's. */
static int dd_group_member(dd_vtab *p, dd_vtab *q) {
  dd_txn *u = q->pTxn;
  return q != p && u->bActive && u->nOp > 0 && !u->bSent && u->nSent == 0 &&
         u->bStmt == p->pTxn->bStmt && p->pTxn->nSent == 0 &&
         dd_same_account(p, q);
}

/* Order of buffered writes: as they were made. */
static int dd_op_seq_cmp(const void *a, const void *b) {
  sqlite3_uint64 x = ((const dd_op *)a)->iSeq, y = ((const dd_op *)b)->iSeq;
  return x < y ? -1 : x > y;
}

/* The writes p's xSync sends: p's own, and those of every vtab of the
** connection that may go with them (dd_group_member), in the order they
** were made, in *paAll[0..*pnAll) (p's own array when it is alone, else
** a new one; dd_op's borrowed); *pnTab: how many vtabs' (1: p's alone);
** *pbSplit: every one of them allows a split COMMIT.  Returns an SQLite
** code. */
static int dd_group_ops(dd_vtab *p, dd_op **paAll, int *pnAll, int *pnTab,
                        int *pbSplit) {
  dd_txn *t = p->pTxn;
  dd_txn_reg *r = dd_reg(p, 0);
  dd_vtab *q;
  dd_op *a;
  int n = t->nOp, nTab = 1;
  *paAll = t->aOp;
  *pnAll = t->nOp;
  *pnTab = 1;
  *pbSplit = p->bSplit;
  for(q = r ? r->pHead : NULL; q; q = q->pTxn->pNextTxn)
    if(dd_group_member(p, q)) {
      n += q->pTxn->nOp;
      nTab++;
    }
  if(nTab == 1)
    return SQLITE_OK;
  a = sqlite3_malloc64(sizeof(*a) * (size_t)n);
  if(!a)
    return SQLITE_NOMEM;
  memcpy(a, t->aOp, sizeof(*a) * (size_t)t->nOp);
  n = t->nOp;
  for(q = r->pHead; q; q = q->pTxn->pNextTxn)
    if(dd_group_member(p, q)) {
      memcpy(a + n, q->pTxn->aOp, sizeof(*a) * (size_t)q->pTxn->nOp);
      n += q->pTxn->nOp;
      *pbSplit &= q->bSplit;
    }
  qsort(a, (size_t)n, sizeof(*a), dd_op_seq_cmp);
  *paAll = a;
  *pnAll = n;
  *pnTab = nTab;
  return SQLITE_OK;
}

/* p's xSync sent x's writes: the vtabs whose writes went with p's have
** nothing left to send (bSent).  When writes of other vtabs of this
** COMMIT are still to go (another endpoint, region or credentials: they
** cannot be in the same transaction), what went is noted for their
** message, should they fail (dd_sync_earlier). */
static void dd_group_sent(dd_vtab *p, const dd_writes *x) {
  dd_txn_reg *r = dd_reg(p, 0);
  dd_vtab *q;
  dd_cut v;
  sqlite3_str *s;
  int bLater = 0;
  for(q = r ? r->pHead : NULL; q; q = q->pTxn->pNextTxn)
    if(dd_group_member(p, q))
      q->pTxn->bSent = 1;
  p->pTxn->bSent = 1;
  for(q = r ? r->pHead : NULL; q; q = q->pTxn->pNextTxn)
    bLater |= q->pTxn->bActive && q->pTxn->nOp > 0 && !q->pTxn->bSent;
  if(!bLater || x->n == 0)
    return;
  memset(&v, 0, sizeof(v));
  v.w = x->w;
  v.aOp = x->aOp;
  v.n = x->n;
  v.bMulti = 1; /* name every write's table */
  s = sqlite3_str_new(0);
  if(r->zSent)
    sqlite3_str_appendf(s, "%s; ", r->zSent);
  sqlite3_str_appendf(s, "%d write%s (", x->n, x->n > 1 ? "s" : "");
  dd_keys_brief(&v, 0, x->n, s);
  sqlite3_str_appendall(s, ")");
  sqlite3_free(r->zSent);
  r->zSent = sqlite3_str_finish(s);
}

/* p's xSync failed after earlier xSyncs of this COMMIT applied writes
** (dd_txn_reg.zSent): p's message, about p's writes only, says so. */
static void dd_sync_earlier(dd_vtab *p) {
  dd_txn_reg *r = dd_reg(p, 0);
  const char *z = p->base.zErrMsg ? p->base.zErrMsg : "";
  char *zOwn;
  if(!r || !r->zSent)
    return;
  if(strncmp(z, DD_PREFIX, strlen(DD_PREFIX)) == 0)
    z += strlen(DD_PREFIX);
  if(strncmp(z, "COMMIT: ", 8) == 0)
    z += 8; /* "nothing written: ..." */
  else if(strncmp(z, "COMMIT ", 7) == 0)
    z += 7; /* "failed part way ..." */
  zOwn = sqlite3_mprintf("%s", z);
  dd_error(p,
           "COMMIT failed part way: earlier calls applied %s, which cannot "
           "be in one transaction with the writes through %s (another "
           "endpoint, region or credentials); the writes through %s: %s",
           r->zSent, p->zVtabName ? p->zVtabName : p->zTable,
           p->zVtabName ? p->zVtabName : p->zTable, zOwn ? zOwn : "?");
  sqlite3_free(zOwn);
}

/* xSync: send the buffered writes, at COMMIT or, outside BEGIN ...
** COMMIT, at the end of the statement that buffered them (SQLite calls
** xBegin, xSync and xCommit around every statement that writes a virtual
** table, in autocommit mode too; on an error it calls xRollback).  The
** outline: the writes of every vtab of the connection that may go with
** p's join them (dd_group_ops); one write of a statement goes alone
** (dd_sync_one); else the writes are merged (dd_coalesce, dd_writes_build)
** and go as one call when they fit (dd_commit_atomic), else, with
** split_transactions, cut into calls (dd_commit_split).  A vtab whose
** writes went at an earlier xSync has nothing to send. */
int dynamodbSync(sqlite3_vtab *pVtab) {
  dd_vtab *p = (dd_vtab *)pVtab;
  dd_txn *t = p->pTxn;
  const char *zVerb, *zWhole;
  dd_op *a = NULL, *aAll = NULL;
  dd_writes x;
  int n = 0, nAll = 0, nTab = 1, rc, bFits, bSplit;

  if(!t || t->nOp == 0 || t->bSent)
    return SQLITE_OK;
  zVerb = t->bStmt ? t->zVerb : "COMMIT";
  zWhole = t->bStmt ? "statement" : "transaction";
  rc = dd_group_ops(p, &aAll, &nAll, &nTab, &bSplit);
  if(rc)
    return rc;
  if(nTab == 1 && t->bStmt && t->nSent == 0 &&
     (t->nOp == 1 || (t->nOp == 2 && t->aOp[1].bTied))) {
    rc = dd_sync_one(p, t);
    memset(&x, 0, sizeof(x)); /* nothing for later xSyncs to quote */
    if(rc == SQLITE_OK)
      dd_group_sent(p, &x);
    goto done;
  }
  p->nSingleRun = 0;
  rc = dd_coalesce(aAll, nAll,
                   nTab == 1 && HASH_COUNT(t->pend) == (unsigned)t->nOp, &a,
                   &n);
  if(rc)
    goto done;
  rc = dd_writes_build(a, n, &x);
  if(rc)
    goto done;
  x.bMulti = nTab > 1; /* messages name each write's table */
  bFits = x.n > 0 && dd_transact_fits(x.w, x.n);
  if(x.n == 0) {
    rc = SQLITE_OK;
  } else if(t->nSent > 0) {
    /* the rest of a statement that sent its earlier parts */
    rc = dd_commit_split(p, &x, zVerb, 1, t->nSent);
  } else if(bFits && (!t->bStmt || p->eTransact >= 0)) {
    rc = dd_commit_atomic(p, &x, zVerb, t->bStmt);
  } else if(!bSplit) {
    rc = dd_sync_unsplit(p, &x, bFits, zVerb, zWhole);
  } else {
    rc = dd_commit_split(p, &x, zVerb, t->bStmt, 0);
  }
  if(rc == SQLITE_OK)
    dd_group_sent(p, &x);
  dd_writes_free(&x);

done:
  if(rc)
    dd_sync_earlier(p);
  sqlite3_free(a);
  if(aAll != t->aOp)
    sqlite3_free(aAll);
  return rc;
}

/* A statement's buffer reached DD_STMT_FLUSH_OPS writes or
** DD_STMT_FLUSH_BYTES: send it as a split write (with split_transactions;
** without, the statement fails, nothing sent) and go on with an empty
** buffer; its writes are numbered after the parts sent before (t->nSent).
** The statement's rows read stay remembered.  Returns an SQLite code
** with the error set on p. */
static int dd_stmt_flush(dd_vtab *p) {
  dd_txn *t = p->pTxn;
  dd_op *a = NULL;
  dd_writes x;
  int n = 0, rc;
  if(!p->bSplit) {
    dd_error(p,
             "%s: nothing written: at least %d items in one statement, "
             "over DynamoDB's limit of %d for an atomic write "
             "(split_transactions=no)",
             t->zVerb, t->nOp, DDB_TRANSACT_MAX);
    return SQLITE_CONSTRAINT;
  }
  rc = dd_coalesce(t->aOp, t->nOp, HASH_COUNT(t->pend) == (unsigned)t->nOp, &a,
                   &n);
  if(rc)
    return rc;
  rc = dd_writes_build(a, n, &x);
  if(rc) {
    sqlite3_free(a);
    return rc;
  }
  rc = dd_commit_split(p, &x, t->zVerb, 1, t->nSent);
  if(rc == SQLITE_OK) {
    t->nSent += x.n;
    dd_writes_free(&x);
    sqlite3_free(a);
    if(dd_ops_truncate(p, t, 0))
      return SQLITE_NOMEM;
    t->nBytes = 0;
    return SQLITE_OK;
  }
  dd_writes_free(&x);
  sqlite3_free(a);
  return rc;
}
