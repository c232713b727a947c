/*
** test_hot.c -- cache/hot.c's bounded counter of hot partition keys
** (Space-Saving) and client/meter.c's statement meter.
*/
#include <stdio.h>
#include <string.h>

#include "../../cache/cache_int.h"
#include "tap.h"

/* Note one request of table `t`'s partition key `pk` (an S value). */
static void note(const char *t, const char *index, const char *pk,
                 uint64_t items, double rcu) {
  ddb_av av;
  memset(&av, 0, sizeof(av));
  av.type = DDB_S;
  av.text = pk;
  av.n = (uint32_t)strlen(pk);
  ddbc_hot_note(t, index, &av, 1, items, rcu, 0, 0);
}

/* The row of table t and key pk in rows[0..n), or NULL. */
static const ddbc_hot_row *find(const ddbc_hot_row *rows, int n, const char *t,
                                const char *pk) {
  int i;
  for(i = 0; i < n; i++)
    if(strcmp(rows[i].table, t) == 0 && rows[i].pk_len == strlen(pk) &&
       memcmp(rows[i].pk, pk, rows[i].pk_len) == 0)
      return &rows[i];
  return NULL;
}

/* A key counted from its first request is exact; keys that take over a
** counter carry the count they took as their error, and never count below
** their true requests; the top rows are the most requested. */
static void test_hot_space_saving(void) {
  ddbc_hot_row *rows = NULL;
  const ddbc_hot_row *r;
  char pk[32];
  int i, n, bad = 0;
  for(i = 0; i < 50; i++)
    note("UnitHot", NULL, "hot", 2, 0.5);
  note("UnitHot", "ByX", "hot", 1, 0.5); /* another index: another key */
  for(i = 0; i < 3 * DDBC_HOT_COUNTERS; i++) {
    snprintf(pk, sizeof(pk), "cold%05d", i);
    note("UnitHot", NULL, pk, 1, 0.5);
  }
  n = ddbc_hot_top(100, &rows);
  CHECK_INT(n, 100);
  r = find(rows, n, "UnitHot", "hot");
  CHECK(r && r == &rows[0]);
  if(r) {
    CHECK_INT(r->requests, 50);
    CHECK_INT(r->error, 0);
    CHECK_INT(r->items, 100);
    CHECK(r->index == NULL);
    CHECK(r->rcu == 25.0);
    CHECK(r->pk_type == 'S');
  }
  /* each cold key was asked once: a count above 1 is all error */
  for(i = 1; i < n; i++)
    if(strcmp(rows[i].table, "UnitHot") == 0 && rows[i].index == NULL &&
       rows[i].requests - rows[i].error != 1)
      bad++;
  CHECK_INT(bad, 0);
  /* the error is bounded by N / counters (N: requests in all) */
  for(i = 0; i < n; i++)
    CHECK(rows[i].error <=
          (uint64_t)(50 + 1 + 3 * DDBC_HOT_COUNTERS) / DDBC_HOT_COUNTERS);
  ddbc_hot_free(rows, n);
}

/* Numbers count as one key however they are written. */
static void test_hot_numbers_canonical(void) {
  ddbc_hot_row *rows = NULL;
  ddb_av av;
  int n, i, found = 0;
  memset(&av, 0, sizeof(av));
  av.type = DDB_N;
  for(i = 0; i < 200; i++) {
    av.text = i % 2 ? "1.50" : "1.5";
    av.n = (uint32_t)strlen(av.text);
    ddbc_hot_note("UnitHotN", NULL, &av, 1, 0, 0, 0, 0);
  }
  n = ddbc_hot_top(100, &rows);
  for(i = 0; i < n; i++)
    if(strcmp(rows[i].table, "UnitHotN") == 0) {
      found++;
      CHECK_INT(rows[i].requests - rows[i].error, 200);
      CHECK_MEM(rows[i].pk, rows[i].pk_len, "1.5", 3);
      CHECK(rows[i].pk_type == 'N');
    }
  CHECK_INT(found, 1);
  ddbc_hot_free(rows, n);
}

/* A meter starts empty, keeps the oldest age, and reads back. */
static void test_meter_reset_and_age(void) {
  ddb_meter m, r;
  memset(&m, 0xff, sizeof(m));
  ddb_meter_reset(&m, 7);
  ddb_meter_read(&m, &r);
  CHECK_INT(r.stmt, 7);
  CHECK_INT(r.hits, 0);
  CHECK_INT(r.oldest_ms, -1);
  CHECK_INT(r.requests[DDB_OP_QUERY], 0);
  ddb_meter_hit(&m, 2.5);
  ddb_meter_hit(&m, 0.5);
  ddb_meter_hit(NULL, 9);
  ddb_meter_read(&m, &r);
  CHECK_INT(r.hits, 2);
  CHECK_INT(r.oldest_ms, 2500);
}

const tap_test tap_hot_tests[] = {
    {"hot: Space-Saving counts exactly from a key's first request, bounds "
     "the error of the rest",
     test_hot_space_saving},
    {"hot: a number is one key however it is spelled",
     test_hot_numbers_canonical},
    {"meter: reset, hits and the oldest age", test_meter_reset_and_age},
    {NULL, NULL}};
