/*
** commit_send.c -- sending a COMMIT's calls and reporting what became of
** them: the planned calls (commit.c) go through the cache, write_calls at
** a time (cache/wcalls.c), each labelled in the request log; the INSERTs
** of a split write are checked first; a failure's message says what
** became of every write.  Nothing here decides which write goes in which
** call (commit.c), nor what is buffered (txn.c).
**
** Up to DDB_TRANSACT_MAX items (and 4 MB) go as one call, all or nothing
** (dd_commit_atomic).  More (dd_commit_split): cut into calls (dd_cut_plan,
** commit.c's dd_cut_build), the INSERTs checked with consistent
** BatchGetItems (dd_check_inserts), the calls sent (dd_send_calls), and a
** failure says what became of every write (dd_report_split).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "commit.h"

/* Bytes of a key quoted in a message, at most. */
#define DD_KEY_BRIEF 80

/* The key of merged write o as a message quotes it (dd_key_text), with,
** when the writes sent are of several virtual tables (bMulti), the table
** it was
** written through: "PK='a', SK=1 in orders".  From sqlite3_malloc (the
** caller frees it); NULL when out of memory. */
static char *dd_op_key(const dd_op *o, int bMulti) {
  char *z = dd_key_text(o->pTab, o->item), *zIn;
  if(!z || !bMulti)
    return z;
  zIn = sqlite3_mprintf("%s in %s", z,
                        o->pTab->zVtabName ? o->pTab->zVtabName
                                           : o->pTab->zTable);
  sqlite3_free(z);
  return zIn;
}

/* Why the writes whose merged writes are a[0..n) failed, from e: a failed
** condition names the item ("the item with key PK='a' already exists"),
** an unknown operation says the server has no TransactWriteItems, another
** error is e's message, naming the item it points at ("item 3"); keys
** as dd_op_key quotes them (bMulti).
** From sqlite3_malloc (the caller frees it); NULL when out of memory. */
static char *dd_failure_reason(const ddb_error *e, dd_op *const *a, int n,
                               int bMulti) {
  const char *z = strstr(e->message, "item ");
  long k = z ? strtol(z + 5, NULL, 10) : 0;
  char *zKey = (k >= 1 && k <= n) ? dd_op_key(a[k - 1], bMulti) : NULL;
  char *zWhy;
  if(strcmp(e->type, "UnknownOperationException") == 0)
    /* of a COMMIT's calls, TransactWriteItems is the one a server may
    ** lack (dynalite, Alternator): every server has PutItem, UpdateItem,
    ** DeleteItem and BatchWriteItem */
    zWhy =
        sqlite3_mprintf("the server has no TransactWriteItems (%s)", e->type);
  else if(zKey && strstr(e->message, "ConditionalCheckFailed") &&
          a[k - 1]->cond == DDB_COND_SAME && !a[k - 1]->bInsert)
    zWhy = dd_changed_reason(a[k - 1]->pTab, a[k - 1]->item, zKey);
  else if(zKey && strstr(e->message, "ConditionalCheckFailed"))
    zWhy = sqlite3_mprintf("the item with key %s %s", zKey,
                           a[k - 1]->bInsert ? "already exists"
                                             : "does not exist any more");
  else if(zKey)
    zWhy = sqlite3_mprintf("%s (item %lld is %s)", e->message, (long long)k,
                           zKey);
  else
    zWhy = sqlite3_mprintf("%s", e->message);
  sqlite3_free(zKey);
  return zWhy;
}

/* The SQLite code of a failed COMMIT call: a failed condition is
** SQLITE_CONSTRAINT. */
static int dd_commit_rc(const ddb_error *e) {
  return strstr(e->message, "ConditionalCheckFailed") ? SQLITE_CONSTRAINT
                                                      : dd_rc(e);
}

/* The head of the message of a write that failed before its calls were
** sent: "INSERT: nothing written", or, for a statement whose earlier parts
** went (nBase writes: dd_stmt_flush), what they were.  From
** sqlite3_malloc (the caller frees it); NULL when out of memory. */
static char *dd_unsent_head(const char *zVerb, int nBase) {
  if(nBase == 0)
    return sqlite3_mprintf("%s: nothing written", zVerb);
  return sqlite3_mprintf("%s failed part way (over %d writes or 4 MB are not "
                         "one transaction): writes 1-%d applied (its earlier "
                         "parts), none after them",
                         zVerb, DDB_TRANSACT_MAX, nBase);
}

/* Cut x into calls (dd_cut_build, into *pl: dd_cut_free); a group that
** cannot be sent, nm writes from x->w[iFirst] (a group of several on a
** server without TransactWriteItems, bSingle; or one over a transaction's
** limits), is an error set on p naming zVerb (nothing sent).  Returns an
** SQLite code. */
static int dd_cut_plan(dd_vtab *p, const dd_writes *x, int bSingle,
                       const char *zVerb, int nBase, dd_cut *pl) {
  char *zKey, *zHead;
  int iFirst = 0, nm = 0;
  int rc = dd_cut_build(x, bSingle, pl, &iFirst, &nm);
  if(rc != SQLITE_ERROR && rc != SQLITE_CONSTRAINT)
    return rc;
  zKey = dd_op_key(x->aOp[iFirst], x->bMulti);
  zHead = dd_unsent_head(zVerb, nBase);
  if(rc == SQLITE_ERROR) {
    dd_error(p,
             "%s: the server has no TransactWriteItems, and an UPDATE "
             "that moves a row (%s) must delete and put in one",
             zHead ? zHead : zVerb, zKey ? zKey : "?");
    rc = SQLITE_ERROR;
  } else {
    dd_error(p,
             "%s: %d writes must be applied together (UPDATEs that move "
             "rows onto keys this %s freed, chained; the first: %s), over "
             "DynamoDB's %d writes or 4 MB for one transaction: commit "
             "such moves in smaller transactions",
             zHead ? zHead : zVerb, nm,
             strcmp(zVerb, "COMMIT") ? "statement" : "transaction",
             zKey ? zKey : "?", DDB_TRANSACT_MAX);
    rc = SQLITE_CONSTRAINT;
  }
  sqlite3_free(zKey);
  sqlite3_free(zHead);
  return rc;
}

/* Append the keys of the cut's writes [i0, i0 + n) to s, briefly: all of
** them up to four, else the first two, how many more, and the last; each
** cut to DD_KEY_BRIEF bytes. */
void dd_keys_brief(const dd_cut *pl, int i0, int n, sqlite3_str *s) {
  int i;
  for(i = i0; i < i0 + n; i++) {
    char *z;
    int nz;
    if(n > 4 && i == i0 + 2) {
      sqlite3_str_appendf(s, "; %d more", n - 3);
      i = i0 + n - 1;
    }
    z = dd_op_key(pl->aOp[i], pl->bMulti);
    nz = z ? (int)strlen(z) : 0;
    if(nz > DD_KEY_BRIEF) {
      nz = DD_KEY_BRIEF;
      while(nz > 0 && (z[nz] & 0xc0) == 0x80)
        nz--; /* not inside a UTF-8 character */
    }
    sqlite3_str_appendf(s, "%s%.*s%s", i > i0 ? "; " : "", nz, z ? z : "",
                        z && z[nz] ? "..." : "");
    sqlite3_free(z);
  }
}

/* Append "writes A-B <what> (keys)" for the cut's writes [i0, i0 + n)
** to s (numbered from 1). */
static void dd_report_range(const dd_cut *pl, int i0, int n, const char *zWhat,
                            sqlite3_str *s) {
  int a = pl->nBase + i0 + 1;
  if(n == 1)
    sqlite3_str_appendf(s, "write %d %s (", a, zWhat);
  else
    sqlite3_str_appendf(s, "writes %d-%d %s (", a, a + n - 1, zWhat);
  dd_keys_brief(pl, i0, n, s);
  sqlite3_str_appendall(s, ")");
}

/* The DynamoDB operation of call c of the cut. */
static const char *dd_call_op(const dd_cut *pl, int c) {
  const dd_call *k = &pl->aCall[c];
  if(k->bBatch)
    return "BatchWriteItem";
  if(k->n > 1)
    return "TransactWriteItems";
  switch(pl->w[k->i0].kind) {
  case DDB_WRITE_PUT: return "PutItem";
  case DDB_WRITE_UPDATE: return "UpdateItem";
  default: return "DeleteItem";
  }
}

/* The words for what became of a run of n writes (state v) from call c
** on, over nCalls calls (more than one only for TransactWriteItems whose
** answers were lost: each all or nothing); zBuf has room for 80 bytes. */
static const char *dd_state_words(const dd_cut *pl, int c, unsigned char v,
                                  int n, int nCalls, char *zBuf) {
  if(v == DDB_WRITE_APPLIED)
    return "applied";
  if(v != DDB_WRITE_MAYBE)
    return "not applied";
  if(pl->aCall[c].bBatch)
    return "may be partly applied (BatchWriteItem is not atomic)";
  if(nCalls > 1) {
    snprintf(zBuf, 80,
             "may or may not have been applied (each of their %d calls "
             "all or none)",
             nCalls);
    return zBuf;
  }
  return n == 1 ? "may or may not have been applied"
                : "may or may not have been applied (all of them or none)";
}

/* A split write failed (or was interrupted): set the error on p, naming
** zVerb and saying what became of every write, in runs of consecutive
** writes alike ("writes 1-99 applied (keys); writes 100-101 not applied
** (keys)"; a run of writes that may have been applied never spans two
** calls, each being all or nothing, or a BatchWriteItem; the writes of a
** statement's earlier parts, pl->nBase, first), then the first call that
** failed (in call order) and why.  aCall[c] are the calls'
** outcomes, aState[i] each write's.  Returns the SQLite code. */
static int dd_report_split(dd_vtab *p, const dd_cut *pl,
                           const ddbc_wcall *aCall,
                           const unsigned char *aState, const char *zVerb) {
  const ddbc_wcall *k = NULL;
  char *zWhy = NULL, *z;
  sqlite3_str *s = sqlite3_str_new(0);
  int c, i, j, iFail = -1, nFail = 0, bAny = 0, rc;
  for(c = 0; c < pl->nCall; c++)
    if(aCall[c].ran && aCall[c].result) {
      if(iFail < 0)
        iFail = c;
      nFail++;
    }
  bAny = pl->nBase > 0;
  for(i = 0; i < pl->n; i++)
    bAny |= aState[i] != DDB_WRITE_NOT_APPLIED;
  if(iFail >= 0) {
    k = &aCall[iFail];
    zWhy = dd_failure_reason(&k->err, pl->aOp + pl->aCall[iFail].i0,
                             pl->aCall[iFail].n, pl->bMulti);
  }
  if(!bAny) {
    sqlite3_str_appendf(s, "%s: nothing written: %s", zVerb,
                        k ? (zWhy ? zWhy : "?")
                          : "interrupted before any call was sent");
  } else {
    sqlite3_str_appendf(s,
                        "%s failed part way (over %d writes or 4 MB are not "
                        "one transaction): ",
                        zVerb, DDB_TRANSACT_MAX);
    if(pl->nBase > 0)
      sqlite3_str_appendf(s, "writes 1-%d applied (its earlier parts)%s",
                          pl->nBase, pl->n ? "; " : "");
    for(c = 0, i = 0; i < pl->n; i = j) {
      int cj, nCalls = 1;
      char zWords[80];
      while(pl->aCall[c].i0 + pl->aCall[c].n <= i)
        c++; /* the call of write i */
      cj = c;
      j = i + 1;
      while(j < pl->n && aState[j] == aState[i]) {
        if(j == pl->aCall[cj].i0 + pl->aCall[cj].n) {
          /* into the next call: a BatchWriteItem's "may be partly" stays
          ** its own, so do the TransactWriteItems' next to it */
          if(aState[i] == DDB_WRITE_MAYBE &&
             (pl->aCall[cj].bBatch || pl->aCall[cj + 1].bBatch))
            break;
          cj++;
          nCalls++;
        }
        j++;
      }
      if(i > 0)
        sqlite3_str_appendall(s, "; ");
      dd_report_range(pl, i, j - i,
                      dd_state_words(pl, c, aState[i], j - i, nCalls, zWords),
                      s);
    }
    if(k) {
      sqlite3_str_appendf(s, ": call %d of %d (%s): %s", iFail + 1, pl->nCall,
                          dd_call_op(pl, iFail), zWhy ? zWhy : "?");
      if(nFail > 1)
        sqlite3_str_appendf(s, " (and %d more call%s failed)", nFail - 1,
                            nFail > 2 ? "s" : "");
    } else
      sqlite3_str_appendall(s, ": interrupted: the calls not started were "
                               "not sent");
  }
  z = sqlite3_str_finish(s);
  dd_error(p, "%s", z ? z : "write failed (out of memory)");
  sqlite3_free(z);
  sqlite3_free(zWhy);
  rc = k ? dd_commit_rc(&k->err) : SQLITE_INTERRUPT;
  return rc;
}

/* Are the INSERTs among x's writes free to go?  Consistent BatchGetItem
** calls of 100 keys, up to p->nWriteCalls at a time (cache/fanout.c), the
** keys of each virtual table written through with its client: an existing
** key is an error set on p naming zVerb, before anything is written.
** Returns an SQLite code. */
static int dd_check_inserts(dd_vtab *p, const dd_writes *x, const char *zVerb,
                            int nBase) {
  const ddb_item **aKey = sqlite3_malloc64(sizeof(*aKey) * ((size_t)x->n + 1));
  ddb_item **aFound = sqlite3_malloc64(sizeof(*aFound) * ((size_t)x->n + 1));
  int *aIdx = sqlite3_malloc64(sizeof(int) * ((size_t)x->n + 1));
  unsigned char *aDone = sqlite3_malloc64((size_t)x->n + 1);
  ddbc_policy pol;
  ddb_error err;
  int i, j, m, rc = SQLITE_OK;

  ddb_error_clear(&err);
  if(!aKey || !aFound || !aIdx || !aDone) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  for(i = 0; i < x->n; i++)
    aDone[i] = !(x->aOp[i]->bInsert && x->w[i].kind == DDB_WRITE_PUT);
  for(i = 0; i < x->n && rc == SQLITE_OK; i++) {
    dd_vtab *q = x->aOp[i]->pTab;
    if(aDone[i])
      continue;
    for(j = i, m = 0; j < x->n; j++)
      if(!aDone[j] && x->aOp[j]->pTab == q) {
        aDone[j] = 1;
        aIdx[m] = j;
        aKey[m++] = x->w[j].item;
      }
    pol = q->pol;
    pol.consistent = 1; /* never the cache's answer */
    if(ddbc_batch_get_fanout(q->pClient, q->pDesc->name, aKey, (size_t)m,
                             q->azKey, q->nKey, &pol, p->nWriteCalls,
                             dd_interrupted, p->db, aFound, &err)) {
      char *zHead = dd_unsent_head(zVerb, nBase);
      dd_error(p, "%s: %s", zHead ? zHead : zVerb, err.message);
      sqlite3_free(zHead);
      rc = dd_rc(&err);
      break;
    }
    for(j = 0; j < m; j++) {
      if(aFound[j] && rc == SQLITE_OK) {
        char *zKey = dd_op_key(x->aOp[aIdx[j]], x->bMulti);
        char *zHead = dd_unsent_head(zVerb, nBase);
        if(strcmp(zVerb, "COMMIT") == 0)
          dd_error(p, "%s: INSERT of key %s, which already exists",
                   zHead ? zHead : zVerb, zKey ? zKey : "?");
        else
          dd_error(p,
                   "%s: an item with key %s already exists (INSERT OR "
                   "REPLACE overwrites it)",
                   zHead ? zHead : zVerb, zKey ? zKey : "?");
        sqlite3_free(zKey);
        sqlite3_free(zHead);
        rc = SQLITE_CONSTRAINT;
      }
      ddb_item_unref(aFound[j]);
    }
  }

fail:
  sqlite3_free((void *)aKey);
  sqlite3_free(aFound);
  sqlite3_free(aIdx);
  sqlite3_free(aDone);
  return rc;
}

/* A write being sent: what its progress line and its cancel hook need. */
typedef struct dd_sendctx {
  dd_vtab *p;
  const char *zVerb;
  double tStart;
  int nBefore; /* calls of the write sent before this plan's */
  int nCall;   /* calls of the whole write */
  int bShown;  /* the progress line is on the terminal */
} dd_sendctx;

/* The plan's cancel hook (asked on the statement's thread). */
static int dd_send_cancelled(void *ud) {
  return dd_interrupted(((dd_sendctx *)ud)->p->db);
}

/* The plan's progress: the write's progress line (monitor.c). */
static void dd_send_progress(void *ud, int nDone, int nCalls) {
  dd_sendctx *cx = ud;
  (void)nCalls;
  dd_write_progress(cx->p, cx->zVerb, cx->nBefore + nDone, cx->nCall,
                    cx->tStart, &cx->bShown, 0);
}

/* Send calls [c0, c1) of cut pl through the cache, up to p->nWriteCalls at
** a time (cache/wcalls.c); aCall[c] (for every call of the cut) and
** aState[i] (for every write) get what became of them, aWas[i] is write
** i's image as read (an UPDATE's; room for pl->n).  A single write's
** failed condition reads "item 1: ConditionalCheckFailed", as a
** transaction's does (dd_failure_reason).  Returns the first failed
** call's error, DDB_ERR_CANCELLED when interrupted between calls, or
** DDB_OK. */
static ddb_result dd_send_calls(dd_vtab *p, const dd_cut *pl, int c0, int c1,
                                ddbc_wcall *aCall, unsigned char *aState,
                                const ddb_item **aWas, dd_sendctx *cx) {
  ddbc_wplan plan;
  ddb_result r;
  int c, i;
  for(i = 0; i < pl->n; i++)
    aWas[i] = pl->w[i].kind == DDB_WRITE_UPDATE ? pl->aOp[i]->old : NULL;
  memset(&plan, 0, sizeof(plan));
  plan.d = p->pDesc;
  plan.key_names = p->azKey;
  plan.n_key = p->nKey;
  plan.w = pl->w;
  plan.was = aWas;
  plan.n = pl->n;
  plan.calls = aCall + c0;
  plan.n_calls = c1 - c0;
  plan.n_threads = p->nWriteCalls;
  plan.pol = &p->pol;
  plan.cancel = dd_send_cancelled;
  plan.ud = cx;
  /* a progress line only for a write cut into calls (not atomic) */
  plan.progress = pl->nCall > 1 ? dd_send_progress : NULL;
  plan.state = aState;
  cx->nBefore = c0;
  cx->nCall = pl->nCall;
  r = ddbc_write_calls(p->pClient, &plan);
  for(c = c0; c < c1; c++)
    if(aCall[c].ran && aCall[c].result && aCall[c].n == 1 &&
       strcmp(aCall[c].err.type, "ConditionalCheckFailedException") == 0)
      snprintf(aCall[c].err.message, sizeof(aCall[c].err.message),
               "item 1: ConditionalCheckFailed");
  return r;
}

/* Did call k fail because the server has no TransactWriteItems? */
static int dd_no_transactions(const ddbc_wcall *k) {
  return k->ran && k->result &&
         strcmp(k->err.type, "UnknownOperationException") == 0;
}

/* More than 100 items, or 4 MB (split_transactions=yes), or a statement
** on a server without TransactWriteItems: cut into calls (dd_cut_plan: a
** key move and every write chained to it stay in one TransactWriteItems;
** each write keeps its kind and condition), the INSERTs checked first
** (dd_check_inserts), then the calls sent up to p->nWriteCalls at a time,
** each labelled in the request log as a call of a write that is not
** atomic: each call is atomic, together they are not.  While it is not
** known whether the server has TransactWriteItems, the first such call
** goes alone first: without it, a COMMIT fails with nothing written and a
** statement is cut again into single writes.  A failure says what became
** of every write (dd_report_split); the cache is told by each call what
** it did (cache/write.c).  Returns an SQLite code. */
int dd_commit_split(dd_vtab *p, dd_writes *x, const char *zVerb, int bStmt,
                    int nBase) {
  dd_cut pl;
  dd_sendctx cx;
  ddbc_wcall *aCall = NULL;
  unsigned char *aState = NULL;
  const ddb_item **aWas = NULL;
  ddb_result r = DDB_OK;
  int c, c0 = 0, rc;

  rc = dd_cut_plan(p, x, bStmt && p->eTransact < 0, zVerb, nBase, &pl);
  if(rc)
    return rc;
  pl.nBase = nBase;
  rc = dd_check_inserts(p, x, zVerb, nBase);
  if(rc)
    goto done;
  if(pl.nCall > 1)
    dd_stmt_split(p); /* dynamodb_last()'s "split" */
  aCall = sqlite3_malloc64(sizeof(*aCall) * ((size_t)pl.nCall + 1));
  aState = sqlite3_malloc64((size_t)pl.n + 1);
  aWas = sqlite3_malloc64(sizeof(*aWas) * ((size_t)pl.n + 1));
  if(!aCall || !aState || !aWas) {
    rc = SQLITE_NOMEM;
    goto done;
  }
  memset(aCall, 0, sizeof(*aCall) * (size_t)pl.nCall);
  memset(aState, DDB_WRITE_NOT_APPLIED, (size_t)pl.n);
  for(c = 0; c < pl.nCall; c++) {
    aCall[c].i0 = pl.aCall[c].i0;
    aCall[c].n = pl.aCall[c].n;
    aCall[c].batch = pl.aCall[c].bBatch;
    snprintf(aCall[c].note, sizeof(aCall[c].note),
             "%s call %d of %d, not atomic", zVerb, c + 1, pl.nCall);
  }
  memset(&cx, 0, sizeof(cx));
  cx.p = p;
  cx.zVerb = zVerb;
  cx.tStart = ddbc_now();
  if(p->eTransact == 0 && pl.nCall > 1 && !pl.aCall[0].bBatch &&
     pl.aCall[0].n > 1) {
    /* does the server have TransactWriteItems?  Its first alone */
    r = dd_send_calls(p, &pl, 0, 1, aCall, aState, aWas, &cx);
    if(dd_no_transactions(&aCall[0])) {
      p->eTransact = -1;
      if(bStmt) {
        /* nothing was sent: single writes instead */
        dd_write_progress(p, zVerb, 0, 0, 0, &cx.bShown, 1);
        sqlite3_free(aCall);
        sqlite3_free(aState);
        sqlite3_free((void *)aWas);
        dd_cut_free(&pl);
        return dd_commit_split(p, x, zVerb, bStmt, nBase);
      }
    } else if(r == DDB_OK) {
      p->eTransact = 1;
    }
    c0 = 1;
  }
  if(r == DDB_OK)
    r = dd_send_calls(p, &pl, c0, pl.nCall, aCall, aState, aWas, &cx);
  if(r == DDB_OK && c0 == 0 && !pl.aCall[0].bBatch && pl.aCall[0].n > 1)
    p->eTransact = 1;
  dd_write_progress(p, zVerb, 0, 0, 0, &cx.bShown, 1);
  if(r)
    rc = dd_report_split(p, &pl, aCall, aState, zVerb);

done:
  sqlite3_free(aCall);
  sqlite3_free(aState);
  sqlite3_free((void *)aWas);
  dd_cut_free(&pl);
  return rc;
}

/* Up to 100 items and 4 MB: one call, all or nothing (one write alone:
** its own call, PutItem, UpdateItem or DeleteItem).  A statement on a
** server that turns out to have no TransactWriteItems goes as a split
** write instead (dd_commit_split).  Returns an SQLite code with the error
** set on p, naming zVerb. */
int dd_commit_atomic(dd_vtab *p, dd_writes *x, const char *zVerb, int bStmt) {
  dd_cut one;
  dd_call call;
  dd_sendctx cx;
  ddbc_wcall k;
  unsigned char *aState = sqlite3_malloc64((size_t)x->n + 1);
  const ddb_item **aWas = sqlite3_malloc64(sizeof(*aWas) * ((size_t)x->n + 1));
  const char *zHow = "nothing written";
  char *zWhy;
  int rc;

  if(!aState || !aWas) {
    sqlite3_free(aState);
    sqlite3_free((void *)aWas);
    return SQLITE_NOMEM;
  }
  memset(&one, 0, sizeof(one));
  one.w = x->w;
  one.aOp = x->aOp;
  one.n = x->n;
  one.aCall = &call;
  one.nCall = 1;
  one.bMulti = x->bMulti;
  call.i0 = 0;
  call.n = x->n;
  call.bBatch = 0;
  memset(&k, 0, sizeof(k));
  k.i0 = 0;
  k.n = x->n;
  memset(&cx, 0, sizeof(cx));
  cx.p = p;
  cx.zVerb = zVerb;
  cx.tStart = ddbc_now();
  if(dd_send_calls(p, &one, 0, 1, &k, aState, aWas, &cx) == DDB_OK) {
    if(x->n > 1)
      p->eTransact = 1;
    rc = SQLITE_OK;
    goto done;
  }
  if(x->n > 1 && dd_no_transactions(&k)) {
    p->eTransact = -1;
    if(bStmt) {
      rc = dd_commit_split(p, x, zVerb, bStmt, 0); /* as single writes */
      goto done;
    }
    dd_error(p,
             "COMMIT: nothing written: the server has no TransactWriteItems "
             "(%s), which a transaction of %d writes needs",
             k.err.type, x->n);
    rc = SQLITE_ERROR;
    goto done;
  }
  if(x->n == 1 && x->aOp[0]->cond == DDB_COND_SAME &&
     dd_write_landed(x->aOp[0]->pTab, x->aOp[0]->item,
                     x->aOp[0]->kind == DDB_WRITE_DELETE ? NULL
                                                         : x->aOp[0]->item,
                     &k.err)) {
    rc = SQLITE_OK; /* its retry failed because the lost attempt landed */
    goto done;
  }
  if(k.err.maybe_applied)
    /* an attempt may have reached DynamoDB (its answer was lost, or the
    ** statement was interrupted after sending): all or nothing */
    zHow = x->n == 1 ? "the write may or may not have been applied"
           : bStmt   ? "the statement may or may not have been applied "
                       "(all of its writes or none)"
                     : "the transaction may or may not have been applied "
                       "(all of its writes or none)";
  zWhy = dd_failure_reason(&k.err, x->aOp, x->n, x->bMulti);
  dd_error(p, "%s: %s: %s", zVerb, zHow, zWhy ? zWhy : k.err.message);
  sqlite3_free(zWhy);
  rc = dd_commit_rc(&k.err);

done:
  sqlite3_free(aState);
  sqlite3_free((void *)aWas);
  return rc;
}

/* The writes x cannot go as one call, and split_transactions=no: the
** error, nothing sent (bFits: they would fit, but the server has no
** TransactWriteItems).  Returns SQLITE_CONSTRAINT. */
int dd_sync_unsplit(dd_vtab *p, const dd_writes *x, int bFits,
                    const char *zVerb, const char *zWhole) {
  if(bFits)
    dd_error(p,
             "%s: nothing written: the server has no TransactWriteItems, "
             "so %d writes in one statement cannot be atomic "
             "(split_transactions=no)",
             zVerb, x->n);
  else if(x->n <= DDB_TRANSACT_MAX)
    dd_error(p,
             "%s: nothing written: %d items of over %lld bytes in one "
             "%s, over DynamoDB's 4 MB for an atomic write "
             "(split_transactions=no)",
             zVerb, x->n, DDB_TRANSACT_BYTES, zWhole);
  else
    dd_error(p,
             "%s: nothing written: %d items in one %s, over "
             "DynamoDB's limit of %d for an atomic write "
             "(split_transactions=no)",
             zVerb, x->n, zWhole, DDB_TRANSACT_MAX);
  return SQLITE_CONSTRAINT;
}
