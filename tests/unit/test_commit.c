/*
** test_commit.c -- unit tests of the COMMIT planner (ext/commit.c): plain
** arrays of buffered writes (dd_op) merged (dd_coalesce), turned into
** DynamoDB writes (dd_writes_build) and cut into calls (dd_transact_fits,
** dd_cut_build).  No network: nothing is sent.  Built as test_ext.c is
** (SQLITE_CORE, UNITTESTS: see test_plan.c).
*/
#ifndef SQLITE_CORE
#define SQLITE_CORE 1 /* the Makefile passes it to every ext/ file */
#endif
#ifndef UNITTESTS
#define UNITTESTS 1
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ext/commit.h"

#include "tap.h"

/* A virtual table as the planner sees it: its DynamoDB table and key. */
typedef struct t_tab {
  ddb_table_desc desc;
  dd_vtab vt;
} t_tab;

static void t_tab_init(t_tab *t, const char *zName) {
  memset(t, 0, sizeof(*t));
  t->desc.name = (char *)zName;
  t->vt.pDesc = &t->desc;
  t->vt.azKey[0] = "PK";
  t->vt.nKey = 1;
}

/* An item {PK: S zKey} with, when nPad > 0, an attribute "pad" of nPad
** bytes (ddb_item_unref). */
static ddb_item *t_item(const char *zKey, size_t nPad) {
  ddb_av v[2];
  char *zPad = NULL;
  ddb_item *it;
  memset(v, 0, sizeof(v));
  v[0].type = DDB_S;
  v[0].text = zKey;
  v[0].n = (uint32_t)strlen(zKey);
  v[0].name = "PK";
  v[0].name_len = 2;
  if(nPad > 0) {
    zPad = malloc(nPad + 1);
    if(!zPad)
      return NULL;
    memset(zPad, 'x', nPad);
    zPad[nPad] = 0;
    v[1].type = DDB_S;
    v[1].text = zPad;
    v[1].n = (uint32_t)nPad;
    v[1].name = "pad";
    v[1].name_len = 3;
  }
  it = ddb_item_from_avs(v, nPad > 0 ? 2 : 1);
  free(zPad);
  return it;
}

/* Up to 300 buffered writes and their items. */
typedef struct t_ops {
  dd_op a[300];
  int n;
} t_ops;

/* Buffer a write of key zKey through tab (an INSERT: bInsert with
** DDB_COND_NOT_EXISTS; a REPLACE: DDB_COND_NONE). */
static void t_op(t_ops *o, t_tab *tab, ddb_write_kind kind, ddb_cond cond,
                 int bInsert, const char *zKey, size_t nPad) {
  dd_op *op = &o->a[o->n];
  memset(op, 0, sizeof(*op));
  op->kind = kind;
  op->cond = cond;
  op->bInsert = bInsert;
  op->item = t_item(zKey, nPad);
  op->old = cond == DDB_COND_SAME ? ddb_item_ref(op->item) : NULL;
  op->pTab = &tab->vt;
  op->iSeq = (sqlite3_uint64)o->n + 1;
  o->n++;
}

static void t_ops_free(t_ops *o) {
  int i;
  for(i = 0; i < o->n; i++) {
    ddb_item_unref(o->a[i].item);
    ddb_item_unref(o->a[i].old);
  }
  o->n = 0;
}

/* The planner over o: merged into *pa (sqlite3_free), built into *x
** (dd_writes_free).  Returns an SQLite code. */
static int t_plan(t_ops *o, int bDistinct, dd_op **pa, dd_writes *x) {
  int n = 0;
  int rc = dd_coalesce(o->a, o->n, bDistinct, pa, &n);
  if(rc == SQLITE_OK)
    rc = dd_writes_build(*pa, n, x);
  return rc;
}

/* Free what t_plan made and o's writes (o is empty after). */
static void t_plan_free(t_ops *o, dd_op **pa, dd_writes *x) {
  dd_writes_free(x);
  sqlite3_free(*pa);
  *pa = NULL;
  t_ops_free(o);
}

/* The key (PK) of write i of the cut. */
static const char *t_key(const dd_cut *pl, int i) {
  const ddb_av *v = ddb_item_get(pl->w[i].item, "PK");
  return v ? v->text : "?";
}

/* Three INSERTs: one TransactWriteItems, in the order they were made. */
static void test_commit_small(void) {
  t_tab tab;
  t_ops *o = calloc(1, sizeof(*o));
  dd_op *a = NULL;
  dd_writes x;
  dd_cut pl;
  int iFirst = -1, nGroup = -1;
  t_tab_init(&tab, "t");
  t_op(o, &tab, DDB_WRITE_PUT, DDB_COND_NOT_EXISTS, 1, "a", 0);
  t_op(o, &tab, DDB_WRITE_PUT, DDB_COND_NOT_EXISTS, 1, "b", 0);
  t_op(o, &tab, DDB_WRITE_PUT, DDB_COND_NOT_EXISTS, 1, "c", 0);
  CHECK_INT(t_plan(o, 0, &a, &x), SQLITE_OK);
  CHECK_INT(x.n, 3);
  CHECK(dd_transact_fits(x.w, x.n));
  CHECK_INT(dd_cut_build(&x, 0, &pl, &iFirst, &nGroup), SQLITE_OK);
  CHECK_INT(pl.nCall, 1);
  CHECK_INT(pl.aCall[0].n, 3);
  CHECK_INT(pl.aCall[0].bBatch, 0); /* a TransactWriteItems */
  CHECK_STR(t_key(&pl, 0), "a");
  CHECK_STR(t_key(&pl, 2), "c");
  CHECK_INT(pl.w[1].cond, DDB_COND_NOT_EXISTS);
  dd_cut_free(&pl);
  t_plan_free(o, &a, &x);
  free(o);
}

/* 150 INSERTs and 30 REPLACEs: TransactWriteItems of 100 and 50, then
** BatchWriteItem of 25 and 5; 11 items of 390 KB: two calls (4 MB). */
static void test_commit_over_limit(void) {
  t_tab tab;
  t_ops *o = calloc(1, sizeof(*o));
  dd_op *a = NULL;
  dd_writes x;
  dd_cut pl;
  char zKey[16];
  int i, iFirst = -1, nGroup = -1;
  t_tab_init(&tab, "t");
  for(i = 0; i < 180; i++) {
    snprintf(zKey, sizeof(zKey), "k%03d", i);
    if(i % 6 == 5) /* every sixth a REPLACE */
      t_op(o, &tab, DDB_WRITE_PUT, DDB_COND_NONE, 0, zKey, 0);
    else
      t_op(o, &tab, DDB_WRITE_PUT, DDB_COND_NOT_EXISTS, 1, zKey, 0);
  }
  CHECK_INT(t_plan(o, 1, &a, &x), SQLITE_OK);
  CHECK_INT(x.n, 180);
  CHECK(!dd_transact_fits(x.w, x.n));
  CHECK_INT(dd_cut_build(&x, 0, &pl, &iFirst, &nGroup), SQLITE_OK);
  CHECK_INT(pl.n, 180);
  CHECK_INT(pl.nCall, 4);
  CHECK_INT(pl.aCall[0].n, 100);
  CHECK_INT(pl.aCall[0].bBatch, 0);
  CHECK_INT(pl.aCall[1].n, 50);
  CHECK_INT(pl.aCall[1].bBatch, 0);
  CHECK_INT(pl.aCall[2].n, DDB_BATCH_WRITE_MAX);
  CHECK_INT(pl.aCall[2].bBatch, 1);
  CHECK_INT(pl.aCall[3].n, 5);
  CHECK_INT(pl.aCall[3].bBatch, 1);
  CHECK_STR(t_key(&pl, 0), "k000");
  CHECK_STR(t_key(&pl, 99), "k118");  /* the 100th INSERT */
  CHECK_STR(t_key(&pl, 150), "k005"); /* the first REPLACE */
  CHECK_STR(t_key(&pl, 179), "k179");
  dd_cut_free(&pl);
  t_plan_free(o, &a, &x);

  /* by bytes: 11 INSERTs of 390 KB are over 4 MB */
  for(i = 0; i < 11; i++) {
    snprintf(zKey, sizeof(zKey), "b%02d", i);
    t_op(o, &tab, DDB_WRITE_PUT, DDB_COND_NOT_EXISTS, 1, zKey, 390000);
  }
  CHECK_INT(t_plan(o, 1, &a, &x), SQLITE_OK);
  CHECK(!dd_transact_fits(x.w, x.n));
  CHECK(dd_transact_fits(x.w, 10));
  CHECK_INT(dd_cut_build(&x, 0, &pl, &iFirst, &nGroup), SQLITE_OK);
  CHECK_INT(pl.nCall, 2);
  CHECK_INT(pl.aCall[0].n, 10);
  CHECK_INT(pl.aCall[1].n, 1);
  dd_cut_free(&pl);
  t_plan_free(o, &a, &x);
  free(o);
}

/* A key written twice is one write; a key move is a group never cut,
** refused when over a transaction's limits or without transactions. */
static void test_commit_key_twice(void) {
  t_tab tab;
  t_ops *o = calloc(1, sizeof(*o));
  dd_op *a = NULL;
  dd_writes x;
  dd_cut pl;
  char zKey[16];
  int i, iFirst = -1, nGroup = -1;
  t_tab_init(&tab, "t");
  /* INSERT a, REPLACE a: one PUT of the newest item, still "must not
  ** exist"; INSERT b, DELETE b: a DELETE "must not exist" */
  t_op(o, &tab, DDB_WRITE_PUT, DDB_COND_NOT_EXISTS, 1, "a", 0);
  t_op(o, &tab, DDB_WRITE_PUT, DDB_COND_NOT_EXISTS, 1, "b", 0);
  t_op(o, &tab, DDB_WRITE_PUT, DDB_COND_NONE, 0, "a", 10);
  t_op(o, &tab, DDB_WRITE_DELETE, DDB_COND_NONE, 0, "b", 0);
  CHECK_INT(t_plan(o, 0, &a, &x), SQLITE_OK);
  CHECK_INT(x.n, 2);
  CHECK(x.w[0].item == o->a[2].item); /* the newest image of a */
  CHECK_INT(x.w[0].kind, DDB_WRITE_PUT);
  CHECK_INT(x.w[0].cond, DDB_COND_NOT_EXISTS);
  CHECK_INT(x.w[1].kind, DDB_WRITE_DELETE);
  CHECK_INT(x.w[1].cond, DDB_COND_NOT_EXISTS);
  t_plan_free(o, &a, &x);

  /* 99 REPLACEs, then a chain of moves: x0 -> x1 -> x2, each Put tied to
  ** its Delete, the second Delete merged with the first Put: one group
  ** of three writes, in one TransactWriteItems, the REPLACEs batched */
  for(i = 0; i < 99; i++) {
    snprintf(zKey, sizeof(zKey), "r%02d", i);
    t_op(o, &tab, DDB_WRITE_PUT, DDB_COND_NONE, 0, zKey, 0);
  }
  t_op(o, &tab, DDB_WRITE_DELETE, DDB_COND_SAME, 0, "x0", 0);
  t_op(o, &tab, DDB_WRITE_PUT, DDB_COND_NOT_EXISTS, 1, "x1", 0);
  o->a[o->n - 1].bTied = 1;
  t_op(o, &tab, DDB_WRITE_DELETE, DDB_COND_SAME, 0, "x1", 0);
  t_op(o, &tab, DDB_WRITE_PUT, DDB_COND_NOT_EXISTS, 1, "x2", 0);
  o->a[o->n - 1].bTied = 1;
  CHECK_INT(t_plan(o, 0, &a, &x), SQLITE_OK);
  CHECK_INT(x.n, 102);
  CHECK_INT(x.aGroup[100], 99); /* x1 goes with x0's Delete */
  CHECK_INT(x.aGroup[101], 99);
  CHECK_INT(dd_cut_build(&x, 0, &pl, &iFirst, &nGroup), SQLITE_OK);
  CHECK_INT(pl.nCall, 1 + 4); /* the moves, then 99 REPLACEs by 25 */
  CHECK_INT(pl.aCall[0].n, 3);
  CHECK_INT(pl.aCall[0].bBatch, 0);
  CHECK_STR(t_key(&pl, 0), "x0");
  CHECK_STR(t_key(&pl, 2), "x2");
  CHECK_INT(pl.aCall[4].n, 99 - 3 * DDB_BATCH_WRITE_MAX);
  dd_cut_free(&pl);
  /* on a server without TransactWriteItems the group is refused */
  CHECK_INT(dd_cut_build(&x, 1, &pl, &iFirst, &nGroup), SQLITE_ERROR);
  CHECK_INT(iFirst, 99);
  CHECK_INT(nGroup, 3);
  t_plan_free(o, &a, &x);

  /* a chain of 51 moves is 102 writes that must go together: refused */
  for(i = 0; i < 51; i++) {
    snprintf(zKey, sizeof(zKey), "m%02d", i);
    t_op(o, &tab, DDB_WRITE_DELETE, DDB_COND_SAME, 0, zKey, 0);
    snprintf(zKey, sizeof(zKey), "n%02d", i);
    t_op(o, &tab, DDB_WRITE_PUT, DDB_COND_NOT_EXISTS, 1, zKey, 0);
    o->a[o->n - 1].bTied = 1;
    if(i > 0)
      o->a[o->n - 2].bTied = 1; /* chained to the move before */
  }
  CHECK_INT(t_plan(o, 1, &a, &x), SQLITE_OK);
  CHECK_INT(dd_cut_build(&x, 0, &pl, &iFirst, &nGroup), SQLITE_CONSTRAINT);
  CHECK_INT(iFirst, 0);
  CHECK_INT(nGroup, 102);
  t_plan_free(o, &a, &x);
  free(o);
}

const tap_test tap_commit_tests[] = {
    {"commit: a small COMMIT is one TransactWriteItems", test_commit_small},
    {"commit: over 100 writes or 4 MB cut into calls", test_commit_over_limit},
    {"commit: a key written twice, key moves kept together",
     test_commit_key_twice},
    {NULL, NULL}};
