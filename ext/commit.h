/*
** commit.h -- what the three files of a COMMIT share: txn.c (the buffered
** writes, dd_op), commit.c (the planner: the writes merged and cut into
** calls) and commit_send.c (the calls sent, a failure reported).  Only
** those three include it, and the planner's unit test.
**
** The planner's functions are pure functions of arrays of dd_op (a dd_op
** names its virtual table for the DynamoDB table and key; nothing else of
** it is read): tests/unit/test_commit.c drives them with plain arrays.
*/
#ifndef DD_COMMIT_H
#define DD_COMMIT_H

#include "dd_ext.h"

typedef struct dd_op {
  ddb_write_kind kind; /* PUT, UPDATE or DELETE */
  ddb_cond cond;
  ddb_item *item;      /* PUT, UPDATE: the new item; DELETE: the old one (its
                     key); a reference */
  ddb_item *old;       /* UPDATE, and a write with cond DDB_COND_SAME: the
                     item as the statement read it from DynamoDB (an
                     UPDATE's diff is against it; SAME: the write goes only
                     if the item is still that); a reference */
  int bInsert;         /* from an INSERT: an existing key is an error */
  int bTied;           /* buffered: to be applied with the write buffered just
                     before it, never apart (the Put of a key move, tied
                     to its Delete) */
  int iGroup;          /* merged (dd_coalesce): the union-find parent, in the
                     merged writes, of the group that must be applied
                     together (dd_group_root) */
  dd_vtab *pTab;       /* the virtual table written through (its table, key and
                     name) */
  sqlite3_uint64 iSeq; /* when it was buffered: process-wide, increasing */
} dd_op;

/* The DynamoDB writes of the merged a[0..n): an UPDATE becomes the SET and
** REMOVE of what it changed against the image it read (aSet[i] and
** azRemove hold them; free with dd_writes_free); an UPDATE that changes
** nothing is left out.  w has room for n; *pnW is how many. */
typedef struct dd_writes {
  ddb_write *w;
  dd_op **aOp;         /* aOp[i]: the merged write of w[i] */
  int *aGroup;         /* aGroup[i]: the first write (index in w) of the
                          group w[i] must be applied with (w[i] alone: i) */
  ddb_item **aSet;     /* one a write; references */
  const char **azName; /* the REMOVE names of all writes */
  int n;
  int bMulti; /* of several virtual tables: messages name each
                          write's table (dd_op_key) */
} dd_writes;

/* One call of a split write: the cut's writes [i0, i0 + n). */
typedef struct dd_call {
  int i0, n;
  int bBatch; /* BatchWriteItem (unconditional writes, each alone in its
                 group); else TransactWriteItems, or one plain call for
                 one write */
} dd_call;

/* A split write cut into calls (dd_cut_build); free with dd_cut_free.
** The writes are numbered in this order in messages (1, 2, ...). */
typedef struct dd_cut {
  ddb_write *w;   /* copies of dd_writes.w, in the order they are sent */
  dd_op **aOp;    /* aOp[i]: the merged write of w[i] */
  dd_call *aCall; /* the calls, in the order they are numbered */
  int n, nCall;
  int nBase;  /* writes of the statement sent before this cut (its
                     earlier parts, dd_stmt_flush): numbered first */
  int bMulti; /* dd_writes.bMulti */
} dd_cut;

/* ------------------------------------------------------------------------
** The planner (commit.c)
*/

/* Merge the buffered writes aOp[0..nOp) into one per item (see commit.c
** for the table), in *paOut[0..*pnOut) (sqlite3_free; the dd_op's borrow
** aOp's references); bDistinct: every write is of its own item.  Returns
** an SQLite code. */
int dd_coalesce(const dd_op *aOp, int nOp, int bDistinct, dd_op **paOut,
                int *pnOut);
/* The DynamoDB writes of the merged a[0..n) into *x (dd_writes_free; x
** borrows a).  Returns an SQLite code (x is empty on error). */
int dd_writes_build(dd_op *a, int n, dd_writes *x);
void dd_writes_free(dd_writes *x);
/* Do w[0..n) fit one TransactWriteItems (DDB_TRANSACT_MAX writes and
** DDB_TRANSACT_BYTES bytes; one write always fits)? */
int dd_transact_fits(const ddb_write *w, int n);
/* Cut x's writes into the calls of a split write (*pl: dd_cut_free).  A
** group that cannot be sent: SQLITE_ERROR (bSingle and a group of
** several) or SQLITE_CONSTRAINT (over a transaction's limits), its first
** write x->w[*piFirst], its size *pnGroup, nothing cut.  Returns an SQLite
** code. */
int dd_cut_build(const dd_writes *x, int bSingle, dd_cut *pl, int *piFirst,
                 int *pnGroup);
void dd_cut_free(dd_cut *pl);

/* ------------------------------------------------------------------------
** Sending and reporting (commit_send.c); each returns an SQLite code with
** the error set on p, naming zVerb ("COMMIT", "INSERT", ...)
*/

/* Up to 100 items and 4 MB: x as one call, all or nothing. */
int dd_commit_atomic(dd_vtab *p, dd_writes *x, const char *zVerb, int bStmt);
/* More: x cut into calls and sent; nBase writes of the statement went in
** its earlier parts. */
int dd_commit_split(dd_vtab *p, dd_writes *x, const char *zVerb, int bStmt,
                    int nBase);
/* x cannot go as one call and split_transactions=no: the error, nothing
** sent (bFits: it would fit, but the server has no TransactWriteItems). */
int dd_sync_unsplit(dd_vtab *p, const dd_writes *x, int bFits,
                    const char *zVerb, const char *zWhole);
/* Append the keys of the cut's writes [i0, i0 + n) to s, briefly. */
void dd_keys_brief(const dd_cut *pl, int i0, int n, sqlite3_str *s);

#endif /* DD_COMMIT_H */
