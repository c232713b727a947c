/*
** commit.c -- the COMMIT planner: which of a transaction's (or a
** statement's) buffered writes go in which DynamoDB call, and in what
** order.  It reads plain arrays (dd_op, commit.h) and sends nothing:
** txn.c hands it the buffered writes, commit_send.c sends what it plans.
**
** The outline: dd_coalesce merges the buffered writes into one per item
** and ties the writes that must be applied together into groups;
** dd_writes_build turns them into DynamoDB writes.  Up to DDB_TRANSACT_MAX
** (and 4 MB: dd_transact_fits) go as one call.  More: dd_cut_build cuts
** them into atomic groups (dd_atomic_groups) and packs the groups into
** calls, never cutting a group: TransactWriteItems first, in order, then
** the unconditional puts and deletes as BatchWriteItem of DDB_BATCH_WRITE_MAX,
** table by table.
*/
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "commit.h"

static int dd_group_root(dd_op *a, int i) {
  while(a[i].iGroup != i) {
    a[i].iGroup = a[a[i].iGroup].iGroup;
    i = a[i].iGroup;
  }
  return i;
}

/* Put merged writes i and j (and their groups) in one group. */
static void dd_group_join(dd_op *a, int i, int j) {
  i = dd_group_root(a, i);
  j = dd_group_root(a, j);
  if(i < j)
    a[j].iGroup = i;
  else if(j < i)
    a[i].iGroup = j;
}

/* Merge the buffered write o into x, the merged write of the same key
** (see dd_coalesce for the table). */
static void dd_merge(dd_op *x, const dd_op *o) {
  /* the first write's image read from DynamoDB stays the condition of a
  ** DELETE, and of a PUT after a DELETE */
  int bSame = x->cond == DDB_COND_SAME;
  if(o->kind == DDB_WRITE_DELETE) {
    if(!bSame)
      x->cond = x->bInsert ? DDB_COND_NOT_EXISTS : DDB_COND_NONE;
    x->kind = DDB_WRITE_DELETE;
    x->item = o->item;
    x->old = bSame ? x->old : NULL;
  } else if(o->kind == DDB_WRITE_PUT) {
    if(x->kind == DDB_WRITE_UPDATE) {
      x->cond = DDB_COND_NONE; /* REPLACE of an item that exists */
      x->bInsert = 0;
    } else if(x->kind == DDB_WRITE_DELETE && !bSame) {
      x->cond = x->bInsert ? DDB_COND_NOT_EXISTS : DDB_COND_NONE;
    }
    x->kind = DDB_WRITE_PUT;
    x->item = o->item;
    x->old = x->cond == DDB_COND_SAME ? x->old : NULL;
  } else { /* UPDATE: of an item this transaction put, or updated */
    x->item = o->item;
    if(x->kind == DDB_WRITE_DELETE) { /* not reachable: the row is gone */
      x->kind = DDB_WRITE_PUT;
      x->cond = x->bInsert ? DDB_COND_NOT_EXISTS : DDB_COND_NONE;
    }
  }
}

/* Merge the buffered writes into one per item, in first-seen order (the
** dd_op's in *paOut borrow the transaction's references):
**
**   first, then        becomes
**   PUT, PUT           PUT of the newest item; an INSERT's "must not
**                      exist" stays (a REPLACE of a key an INSERT wrote
**                      still needs that key to have been free)
**   PUT, UPDATE        PUT of the newest item, same condition
**   UPDATE, UPDATE     UPDATE from the first's old image to the newest,
**                      on condition that the item is still that image
**   UPDATE, PUT        PUT without condition (REPLACE of an existing item)
**   any, DELETE        DELETE; after an INSERT, a DELETE "must not exist"
**                      (nothing is written, but the INSERT's check stays);
**                      after an UPDATE (or a DELETE) conditioned on the
**                      image read, on that condition
**   DELETE, PUT        PUT, unconditional, or on the DELETE's condition on
**                      the image read; after an INSERT and a DELETE the
**                      INSERT's "must not exist" again
**
** A buffered write tied to the one before it (bTied: the Put and the
** Delete of a key move) puts their merged writes in one group (iGroup,
** dd_group_root), and so does every later write merged into either: an
** UPDATE that moves a row onto a key an earlier move freed chains the two
** moves into one group.  The writes are aOp[0..nOp), in the order they
** were made (of one vtab, or of several: dd_group_ops); an item is its
** table and its key; bDistinct: every write is of its own item.  Returns
** an SQLite code.
*/
int dd_coalesce(const dd_op *aOp, int nOp, int bDistinct, dd_op **paOut,
                int *pnOut) {
  typedef struct seen {
    char *zKey; /* canonical key; sqlite3_free() */
    int idx;    /* in a[] */
    UT_hash_handle hh;
  } seen;
  dd_op *a = sqlite3_malloc64(sizeof(dd_op) * ((sqlite3_uint64)nOp + 1));
  seen *map = NULL, *e, *tmp;
  ddb_buf b;
  int i, j, n = 0, iPrev = -1, rc = SQLITE_OK;
  if(!a)
    return SQLITE_NOMEM;
  if(bDistinct) {
    /* every write of its own key (a bulk INSERT, an UPDATE of many rows):
    ** nothing to merge, the groups are the moves' pairs */
    for(i = 0; i < nOp; i++) {
      a[i] = aOp[i];
      a[i].iGroup = i;
      if(a[i].bTied && i > 0)
        dd_group_join(a, i, i - 1);
    }
    *paOut = a;
    *pnOut = nOp;
    return SQLITE_OK;
  }
  ddb_buf_init(&b, 4u * 1024 * 1024);
  for(i = 0; i < nOp && rc == SQLITE_OK; i++) {
    const dd_op *o = &aOp[i];
    const char *zTable = o->pTab->pDesc->name;
    ddb_buf_reset(&b);
    if(ddb_buf_add_part(&b, zTable, strlen(zTable)) ||
       ddb_key_encode(o->item, o->pTab->azKey, o->pTab->nKey, &b) || !b.p) {
      rc = SQLITE_NOMEM;
      break;
    }
    HASH_FIND(hh, map, b.p, b.len, e);
    if(e) {
      j = e->idx;
      dd_merge(&a[j], o);
    } else {
      e = sqlite3_malloc(sizeof(*e));
      if(!e || !(e->zKey = sqlite3_malloc64(b.len + 1))) {
        sqlite3_free(e);
        rc = SQLITE_NOMEM;
        break;
      }
      memcpy(e->zKey, b.p, b.len);
      e->idx = j = n;
      HASH_ADD_KEYPTR(hh, map, e->zKey, b.len, e);
      a[n] = *o;
      a[n++].iGroup = j;
    }
    if(o->bTied && iPrev >= 0)
      dd_group_join(a, j, iPrev);
    iPrev = j;
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

void dd_writes_free(dd_writes *x) {
  int i;
  for(i = 0; x->aSet && i < x->n; i++)
    ddb_item_unref(x->aSet[i]);
  sqlite3_free(x->w);
  sqlite3_free(x->aOp);
  sqlite3_free(x->aGroup);
  sqlite3_free(x->aSet);
  sqlite3_free((void *)x->azName);
  memset(x, 0, sizeof(*x));
}

/* Fill x->aGroup from the groups of the merged writes a[] (dd_coalesce);
** aFirst is scratch room for one int a merged write. */
static void dd_writes_group(dd_writes *x, dd_op *a, int *aFirst, int nA) {
  int i;
  for(i = 0; i < nA; i++)
    aFirst[i] = -1;
  for(i = 0; i < x->n; i++) {
    int r = dd_group_root(a, (int)(x->aOp[i] - a));
    if(aFirst[r] < 0)
      aFirst[r] = i;
    x->aGroup[i] = aFirst[r];
  }
}

/* The DynamoDB writes of the merged a[0..n) into *x (see dd_writes). */
int dd_writes_build(dd_op *a, int n, dd_writes *x) {
  size_t nName = 1;
  int i, used = 0, rc = SQLITE_OK;
  int *aFirst = sqlite3_malloc64(sizeof(int) * ((size_t)n + 1));
  memset(x, 0, sizeof(*x));
  for(i = 0; i < n; i++)
    if(a[i].kind == DDB_WRITE_UPDATE)
      nName += a[i].old->root.n;
  x->w = sqlite3_malloc64(sizeof(*x->w) * ((size_t)n + 1));
  x->aOp = sqlite3_malloc64(sizeof(*x->aOp) * ((size_t)n + 1));
  x->aGroup = sqlite3_malloc64(sizeof(*x->aGroup) * ((size_t)n + 1));
  x->aSet = sqlite3_malloc64(sizeof(*x->aSet) * ((size_t)n + 1));
  x->azName = sqlite3_malloc64(sizeof(*x->azName) * nName);
  if(!aFirst || !x->w || !x->aOp || !x->aGroup || !x->aSet || !x->azName) {
    sqlite3_free(aFirst);
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
    w->d = a[i].pTab->pDesc; /* its own table (a COMMIT across tables) */
    w->key_names = a[i].pTab->azKey;
    w->n_key = a[i].pTab->nKey;
    w->expect = a[i].cond == DDB_COND_SAME ? a[i].old : NULL;
    if(a[i].kind == DDB_WRITE_UPDATE) {
      int nRemove = 0;
      rc = dd_diff(a[i].pTab, a[i].old, a[i].item, &x->aSet[x->n],
                   x->azName + used, &nRemove);
      if(rc)
        break;
      if(!x->aSet[x->n] && nRemove == 0)
        continue; /* changed and changed back: nothing to send */
      if(w->cond != DDB_COND_SAME)
        w->cond = DDB_COND_EXISTS;
      w->set = x->aSet[x->n];
      w->remove = x->azName + used;
      w->n_remove = nRemove;
      used += nRemove;
    }
    x->aOp[x->n++] = &a[i];
  }
  if(rc == SQLITE_OK)
    dd_writes_group(x, a, aFirst, n);
  sqlite3_free(aFirst);
  if(rc)
    dd_writes_free(x);
  return rc;
}

/* The bytes write w adds to a TransactWriteItems (see DDB_TRANSACT_BYTES). */
static long long dd_write_bytes(const ddb_write *w) {
  long long n = (long long)ddb_item_size(w->item) + 100;
  if(w->kind == DDB_WRITE_UPDATE && w->set)
    n += (long long)ddb_item_size(w->set);
  if(w->cond == DDB_COND_SAME && w->expect)
    n += (long long)ddb_item_size(w->expect); /* the condition's values */
  return n;
}

/* Do w[0..n) fit one TransactWriteItems: at most DDB_TRANSACT_MAX writes
** and DDB_TRANSACT_BYTES bytes (one write always fits)? */
int dd_transact_fits(const ddb_write *w, int n) {
  long long bytes = 0;
  int k;
  if(n > DDB_TRANSACT_MAX)
    return 0;
  for(k = 0; k < n; k++)
    bytes += dd_write_bytes(&w[k]);
  return n <= 1 || bytes <= DDB_TRANSACT_BYTES;
}

/* May w go in a BatchWriteItem: an unconditional PUT (REPLACE) or DELETE?
** (Only when it is alone in its group: see dd_cut_build.) */
static int dd_write_unconditional(const ddb_write *w) {
  return w->cond == DDB_COND_NONE && w->kind != DDB_WRITE_UPDATE;
}

void dd_cut_free(dd_cut *pl) {
  sqlite3_free(pl->w);
  sqlite3_free(pl->aOp);
  sqlite3_free(pl->aCall);
  memset(pl, 0, sizeof(*pl));
}

/* Cut x's writes into atomic groups, the writes that must be applied
** together (dd_writes.aGroup): aMember[0..x->n) gets x's writes (indexes
** into x->w) group after group, the groups in the order of their first
** write, the writes of each in their order; group g is aMember[aStart[g]
** .. aStart[g + 1]).  aMember and aPos (scratch) have room for x->n,
** aStart for x->n + 1.  Returns the number of groups. */
static int dd_atomic_groups(const dd_writes *x, int *aMember, int *aStart,
                            int *aPos) {
  int i, nGroup = 0, at = 0;
  for(i = 0; i < x->n; i++)
    aPos[i] = 0;
  for(i = 0; i < x->n; i++)
    aPos[x->aGroup[i]]++; /* the group's size, at its first write */
  for(i = 0; i < x->n; i++) {
    if(x->aGroup[i] == i) {
      int nSize = aPos[i];
      aStart[nGroup++] = at;
      aPos[i] = at; /* now where its next write goes */
      at += nSize;
    }
  }
  aStart[nGroup] = x->n;
  for(i = 0; i < x->n; i++)
    aMember[aPos[x->aGroup[i]]++] = i;
  return nGroup;
}

/* Append write x->w[k] to the cut, in call c (a new call when c is
** pl->nCall). */
static void dd_cut_add(dd_cut *pl, const dd_writes *x, int k, int c,
                       int bBatch) {
  if(c == pl->nCall) {
    pl->aCall[c].i0 = pl->n;
    pl->aCall[c].n = 0;
    pl->aCall[c].bBatch = bBatch;
    pl->nCall++;
  }
  pl->w[pl->n] = x->w[k];
  pl->aOp[pl->n++] = x->aOp[k];
  pl->aCall[c].n++;
}

/* Is the group of the nm writes x->w[m[..]] one unconditional PUT or
** DELETE, which a BatchWriteItem may carry? */
static int dd_group_batchable(const dd_writes *x, const int *m, int nm) {
  return nm == 1 && dd_write_unconditional(&x->w[m[0]]);
}

/* May group m[0..nm) of x's writes, which needs a transaction, be sent
** (scratch: room for nm writes, for dd_transact_fits)?  Not a group of
** several on a server without TransactWriteItems (bSingle): SQLITE_ERROR;
** nor one over a transaction's limits: SQLITE_CONSTRAINT.  Else
** SQLITE_OK. */
static int dd_group_refused(const dd_writes *x, const int *m, int nm,
                            int bSingle, ddb_write *scratch) {
  int i;
  for(i = 0; i < nm; i++)
    scratch[i] = x->w[m[i]];
  if(!(bSingle && nm > 1) && dd_transact_fits(scratch, nm))
    return SQLITE_OK;
  return bSingle && nm > 1 ? SQLITE_ERROR : SQLITE_CONSTRAINT;
}

/* The groups aMember[aStart[g] .. aStart[g+1]) (g < nGroup) of x that need
** a transaction into pl's calls, in order: packed into TransactWriteItems
** of at most DDB_TRANSACT_MAX writes and DDB_TRANSACT_BYTES bytes, a group
** never cut (bSingle: each its own call). */
static void dd_cut_transacts(dd_cut *pl, const dd_writes *x,
                             const int *aMember, const int *aStart, int nGroup,
                             int bSingle) {
  long long bytes = 0;
  int g, i, c = -1;
  for(g = 0; g < nGroup; g++) {
    const int *m = aMember + aStart[g];
    int nm = aStart[g + 1] - aStart[g];
    long long gBytes = 0;
    if(dd_group_batchable(x, m, nm))
      continue;
    for(i = 0; i < nm; i++)
      gBytes += dd_write_bytes(&x->w[m[i]]);
    if(c < 0 || bSingle || pl->aCall[c].n + nm > DDB_TRANSACT_MAX ||
       bytes + gBytes > DDB_TRANSACT_BYTES) {
      c = pl->nCall;
      bytes = 0;
    }
    for(i = 0; i < nm; i++)
      dd_cut_add(pl, x, m[i], c, 0);
    bytes += gBytes;
  }
}

/* The groups of x that are one unconditional PUT or DELETE into pl's
** BatchWriteItem calls of DDB_BATCH_WRITE_MAX, each of one table (ddb_write.d):
** the tables in the order of their first such write. */
static void dd_cut_batches(dd_cut *pl, const dd_writes *x, const int *aMember,
                           const int *aStart, int nGroup) {
  const ddb_table_desc *aDone[16]; /* tables cut (most COMMITs: one) */
  int g, h, c, nDone = 0;
  for(h = 0; h < nGroup; h++) {
    const ddb_table_desc *d = x->w[aMember[aStart[h]]].d;
    if(!dd_group_batchable(x, aMember + aStart[h], aStart[h + 1] - aStart[h]))
      continue;
    for(g = 0; g < nDone && aDone[g] != d; g++)
      ;
    if(g < nDone)
      continue; /* that table's batches are cut already */
    if(nDone < (int)(sizeof(aDone) / sizeof(aDone[0]))) {
      aDone[nDone++] = d;
    } else { /* more tables than aDone holds: look back */
      for(g = 0; g < h; g++)
        if(x->w[aMember[aStart[g]]].d == d &&
           dd_group_batchable(x, aMember + aStart[g],
                              aStart[g + 1] - aStart[g]))
          break;
      if(g < h)
        continue;
    }
    for(g = h, c = -1; g < nGroup; g++) {
      const int *m = aMember + aStart[g];
      if(x->w[m[0]].d != d ||
         !dd_group_batchable(x, m, aStart[g + 1] - aStart[g]))
        continue;
      if(c < 0 || pl->aCall[c].n == DDB_BATCH_WRITE_MAX)
        c = pl->nCall;
      dd_cut_add(pl, x, m[0], c, 1);
    }
  }
}

/* Cut the writes into the calls of a split write: first the groups that
** need a transaction (more than one write, or one write with a condition
** or an UPDATE), in order, packed into TransactWriteItems of at most
** DDB_TRANSACT_MAX writes and DDB_TRANSACT_BYTES bytes, a group never cut
** (bSingle: a server without TransactWriteItems; then each such write is
** a call of its own, and a group of several is refused); then the
** unconditional PUTs and DELETEs alone in their group, as BatchWriteItem
** calls of DDB_BATCH_WRITE_MAX.  A group that cannot be sent (dd_group_refused)
** is SQLITE_ERROR or SQLITE_CONSTRAINT with its first write x->w[*piFirst]
** and its size *pnGroup (nothing cut; commit_send.c says why).  Returns an
** SQLite code; on success *pl holds the cut (dd_cut_free). */
int dd_cut_build(const dd_writes *x, int bSingle, dd_cut *pl, int *piFirst,
                 int *pnGroup) {
  size_t nAlloc = (size_t)x->n + 1;
  int *aMember = sqlite3_malloc64(sizeof(int) * nAlloc);
  int *aStart = sqlite3_malloc64(sizeof(int) * nAlloc);
  int *aPos = sqlite3_malloc64(sizeof(int) * nAlloc);
  int g, nGroup, rc = SQLITE_OK;

  memset(pl, 0, sizeof(*pl));
  pl->bMulti = x->bMulti;
  pl->w = sqlite3_malloc64(sizeof(*pl->w) * nAlloc);
  pl->aOp = sqlite3_malloc64(sizeof(*pl->aOp) * nAlloc);
  pl->aCall = sqlite3_malloc64(sizeof(*pl->aCall) * nAlloc);
  if(!aMember || !aStart || !aPos || !pl->w || !pl->aOp || !pl->aCall) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  nGroup = dd_atomic_groups(x, aMember, aStart, aPos);
  /* every group that needs a transaction checked first: nothing is cut
  ** while one is refused */
  for(g = 0; g < nGroup && rc == SQLITE_OK; g++) {
    const int *m = aMember + aStart[g];
    int nm = aStart[g + 1] - aStart[g];
    if(!dd_group_batchable(x, m, nm))
      rc = dd_group_refused(x, m, nm, bSingle, pl->w);
    if(rc) {
      *piFirst = m[0];
      *pnGroup = nm;
    }
  }
  if(rc == SQLITE_OK) {
    dd_cut_transacts(pl, x, aMember, aStart, nGroup, bSingle);
    dd_cut_batches(pl, x, aMember, aStart, nGroup);
  }

fail:
  sqlite3_free(aMember);
  sqlite3_free(aStart);
  sqlite3_free(aPos);
  if(rc)
    dd_cut_free(pl);
  return rc;
}
