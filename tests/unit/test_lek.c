/*
** test_lek.c -- unit tests of the LastEvaluatedKey guard of a read
** (client/lek.c): a loop caught (Brent), fresh keys for ever bounded by
** the table's size, the rules a correct server's keys keep.  No network.
*/
#include <stdio.h>
#include <string.h>

#include "../../client/ddb_client_int.h"
#include "tap.h"

/* A key item PK=<n> (a new reference). */
static ddb_item *lek_key(int n) {
  char text[16];
  ddb_av v;
  memset(&v, 0, sizeof(v));
  snprintf(text, sizeof(text), "k%d", n);
  v.type = DDB_S;
  v.text = text;
  v.n = (uint32_t)strlen(text);
  v.name = "PK";
  v.name_len = 2;
  return ddb_item_from_avs(&v, 1);
}

/* Feed the keys seq(0), seq(1), ... to a guard, as pages of a Scan of a
** table of `items` items (its description; no client, so no
** DescribeTable); the page at which it says "loop" (its message has
** want), or -1 within max pages. */
static int lek_run_pages(int tail, int cycle, int max, long long items,
                         int count, int filters, const char *want) {
  ddb_lek_guard g;
  ddb_error err;
  ddb_table_desc d;
  ddb_read rd;
  ddb_page pg;
  int i, at = -1;
  memset(&g, 0, sizeof(g));
  memset(&d, 0, sizeof(d));
  memset(&rd, 0, sizeof(rd));
  memset(&pg, 0, sizeof(pg));
  d.item_count = items;
  rd.table = "T";
  rd.desc = &d;
  rd.n_filters = filters;
  pg.count = count;
  pg.scanned = count ? count : filters;
  for(i = 0; i < max && at < 0; i++) {
    int n = i < tail || cycle == 0 ? i : tail + (i - tail) % cycle;
    pg.last_key = lek_key(n);
    if(ddb_lek_next(&g, NULL, &rd, &pg, &err) != DDB_OK) {
      at = i;
      CHECK_MSG(strstr(err.message, want) != NULL, "%s", err.message);
    }
    ddb_item_unref(pg.last_key);
  }
  ddb_lek_guard_free(&g);
  return at;
}

static int lek_run_items(int tail, int cycle, int max, long long items,
                         const char *want) {
  return lek_run_pages(tail, cycle, max, items, 0, 0, want);
}

static int lek_run(int tail, int cycle, int max) {
  return lek_run_items(tail, cycle, max, 100000, "go round in a circle");
}

/* A server whose LastEvaluatedKeys go round in a circle is caught within
** 4 x (the pages before the circle + the circle's); distinct keys never
** are. */
static void test_lek_guard(void) {
  int tail, cycle;
  ddb_lek_guard g;
  CHECK_INT(lek_run(0, 0, 5000), -1);
  for(tail = 0; tail < 20; tail += 7)
    for(cycle = 1; cycle <= 40; cycle += 13) {
      int at = lek_run(tail, cycle, 5000);
      CHECK(at > 0);
      CHECK(at <= 4 * (tail + cycle) + 4);
    }
  /* the end of a read (no key) is no loop */
  memset(&g, 0, sizeof(g));
  {
    ddb_read rd;
    ddb_page pg;
    memset(&rd, 0, sizeof(rd));
    memset(&pg, 0, sizeof(pg));
    rd.table = "T";
    CHECK_INT(ddb_lek_next(&g, NULL, &rd, &pg, NULL), DDB_OK);
  }
  ddb_lek_guard_free(&g);
}

/* Fresh keys for ever: a read ends on at most 1000 + 2 x ItemCount idle
** pages (no item read, or none returned with no filter; the table's
** description, as DescribeTable would tell it), and 100,000 + 2 x
** ItemCount pages in all, then fails; a table of unknown size stops at
** the first bound. */
static void test_lek_bound(void) {
  CHECK_INT(lek_run_items(0, 0, 5000, 100, "with no item read"), 1200);
  CHECK_INT(lek_run_items(0, 0, 5000, 0, "more than the table's 0 items"),
            1000);
  CHECK_INT(lek_run_items(0, 0, 5000, -1, "is not known"), 1000);
  CHECK_INT(lek_run_items(0, 0, 5000, 2000, ""), -1);
  /* pages that read items (a filter dropped them all), or brought some */
  CHECK_INT(lek_run_pages(0, 0, 5000, 0, 0, 1, ""), -1);
  CHECK_INT(lek_run_pages(0, 0, 5000, 0, 3, 0, ""), -1);
  CHECK_INT(lek_run_pages(0, 0, 200000, 10, 0, 1,
                          "100021 pages ended on a LastEvaluatedKey, more "
                          "than the table's 10 items"),
            100020);
  /* with no filter, a page that brings nothing is idle, whatever it says
  ** it read */
  CHECK_INT(lek_run_pages(0, 0, 5000, 0, 0, 0, "with no item read"), 1000);
}

/* The item of typed JSON text (a new reference; NULL when it is none). */
static ddb_item *typed(const char *text) {
  ddb_item *it = NULL;
  ddb_error err;
  if(ddb_item_from_typed_json(text, strlen(text), &it, &err) != DDB_OK)
    return NULL;
  return it;
}

/* Run ddb_lek_check on r with a page whose LastEvaluatedKey is the typed
** JSON key (start: the request's ExclusiveStartKey, or NULL); the message
** ("" when it passed). */
static const char *lek_verdict(ddb_read *r, const char *start, const char *key,
                               ddb_error *err) {
  ddb_page pg;
  ddb_item *s = start ? typed(start) : NULL;
  ddb_result rc;
  memset(&pg, 0, sizeof(pg));
  pg.last_key = typed(key);
  r->start = s;
  ddb_error_clear(err);
  rc = ddb_lek_check(r, &pg, err);
  ddb_item_unref(pg.last_key);
  ddb_item_unref(s);
  r->start = NULL;
  return rc == DDB_OK ? "" : err->message;
}

/* The rules a correct server's LastEvaluatedKeys keep (read.c): the key
** shape of what is read, a Query's partition, its sort key's order (by
** bytes, by value for numbers) and its key condition. */
static void test_lek_rules(void) {
  ddb_index ix[2];
  ddb_table_desc d;
  ddb_read r;
  ddb_error err;
  memset(ix, 0, sizeof(ix));
  memset(&d, 0, sizeof(d));
  memset(&r, 0, sizeof(r));
  ix[0].pk.name = "PK";
  ix[0].pk.type = DDB_S;
  ix[0].sk.name = "SK";
  ix[0].sk.type = DDB_S;
  ix[1].name = "G";
  ix[1].pk.name = "GPK";
  ix[1].pk.type = DDB_B;
  ix[1].sk.name = "GSK";
  ix[1].sk.type = DDB_N;
  d.name = "T";
  d.n_indexes = 2;
  d.indexes = ix;
  r.table = "T";
  r.desc = &d;

  /* a Scan of the table: its key, exactly */
  CHECK_STR(lek_verdict(&r, NULL,
                        "{\"PK\":{\"S\":\"a\"},\"SK\":{\"S\":\"b\"}}", &err),
            "");
  CHECK_STR(lek_verdict(&r, NULL, "{\"PK\":{\"S\":\"a\"}}", &err),
            "Scan of 'T': the answer's LastEvaluatedKey is no key (it lacks "
            "'SK')");
  CHECK_STR(lek_verdict(&r, NULL,
                        "{\"PK\":{\"S\":\"a\"},\"SK\":{\"N\":\"1\"}}", &err),
            "Scan of 'T': the answer's LastEvaluatedKey is no key ('SK' is N, "
            "the key's is S)");
  CHECK_STR(lek_verdict(&r, NULL,
                        "{\"PK\":{\"S\":\"a\"},\"SK\":{\"S\":\"b\"},"
                        "\"v\":{\"S\":\"\\u001b[2J\"}}",
                        &err),
            "Scan of 'T': the answer's LastEvaluatedKey is no key ('v' is no "
            "key attribute)");
  /* an index: its key and the table's */
  r.index = "G";
  CHECK_STR(lek_verdict(&r, NULL,
                        "{\"GPK\":{\"B\":\"AA==\"},\"GSK\":{\"N\":\"1\"},"
                        "\"PK\":{\"S\":\"a\"},\"SK\":{\"S\":\"b\"}}",
                        &err),
            "");
  CHECK_STR(lek_verdict(&r, NULL,
                        "{\"GPK\":{\"B\":\"AA==\"},\"GSK\":{\"N\":\"1\"}}",
                        &err),
            "Scan of 'T' (index 'G'): the answer's LastEvaluatedKey is no key "
            "(it lacks 'PK')");

  /* a Query of the index: its partition, its sort key (N: by value) not
  ** going back; equal sort keys are allowed on an index */
  r.pk_name = "GPK";
  r.pk.type = DDB_B;
  r.pk.text = "AA==";
  r.pk.n = 4;
#define GKEY(g, n)                                                            \
  "{\"GPK\":{\"B\":\"" g "\"},\"GSK\":{\"N\":\"" n                            \
  "\"},\"PK\":{\"S\":\"a\"},"                                                 \
  "\"SK\":{\"S\":\"b\"}}"
  CHECK_STR(lek_verdict(&r, GKEY("AA==", "9"), GKEY("AA==", "10"), &err), "");
  CHECK_STR(lek_verdict(&r, GKEY("AA==", "10"), GKEY("AA==", "10.0"), &err),
            "");
  CHECK_STR(
      lek_verdict(&r, GKEY("AA==", "10"), GKEY("AA==", "9.99"), &err),
      "Query of 'T' (index 'G'): the answer's LastEvaluatedKey goes back "
      "(its 'GSK' is not past the ExclusiveStartKey's)");
  CHECK_STR(
      lek_verdict(&r, GKEY("AA==", "-1"), GKEY("AA==", "-10"), &err),
      "Query of 'T' (index 'G'): the answer's LastEvaluatedKey goes back "
      "(its 'GSK' is not past the ExclusiveStartKey's)");
  CHECK_STR(lek_verdict(&r, GKEY("AA==", "-10"), GKEY("AA==", "1E-130"), &err),
            "");
  CHECK_STR(
      lek_verdict(&r, GKEY("AA==", "1E+125"), GKEY("AA==", "2E+124"), &err),
      "Query of 'T' (index 'G'): the answer's LastEvaluatedKey goes back "
      "(its 'GSK' is not past the ExclusiveStartKey's)");
  CHECK_STR(lek_verdict(&r, NULL, GKEY("AQ==", "1"), &err),
            "Query of 'T' (index 'G'): the answer's LastEvaluatedKey is in "
            "another partition than the Query's ('GPK')");
  r.descending = 1;
  CHECK_STR(lek_verdict(&r, GKEY("AA==", "10"), GKEY("AA==", "9.99"), &err),
            "");
  CHECK_STR(
      lek_verdict(&r, GKEY("AA==", "9"), GKEY("AA==", "10"), &err),
      "Query of 'T' (index 'G'): the answer's LastEvaluatedKey goes back "
      "(its 'GSK' is not below the ExclusiveStartKey's)");
  r.descending = 0;
  /* the key condition: GSK BETWEEN 5 AND 50 */
  r.sk_name = "GSK";
  r.sk_op = DDB_SK_BETWEEN;
  r.sk[0].type = r.sk[1].type = DDB_N;
  r.sk[0].text = "5";
  r.sk[0].n = 1;
  r.sk[1].text = "5E1";
  r.sk[1].n = 3;
  CHECK_STR(lek_verdict(&r, NULL, GKEY("AA==", "50"), &err), "");
  CHECK_STR(
      lek_verdict(&r, NULL, GKEY("AA==", "50.5"), &err),
      "Query of 'T' (index 'G'): the answer's LastEvaluatedKey is outside "
      "the key condition on 'GSK'");
#undef GKEY

  /* a Query of the table: sort keys are unique, so strictly forward (S and
  ** B by unsigned bytes) */
  memset(&r, 0, sizeof(r));
  r.table = "T";
  r.desc = &d;
  r.pk_name = "PK";
  r.pk.type = DDB_S;
  r.pk.text = "p";
  r.pk.n = 1;
#define KEY(sk) "{\"PK\":{\"S\":\"p\"},\"SK\":{\"S\":\"" sk "\"}}"
  CHECK_STR(lek_verdict(&r, KEY("a"), KEY("ab"), &err), "");
  CHECK_STR(lek_verdict(&r, KEY("z"), KEY("\\u00e9"), &err), "");
  CHECK_STR(lek_verdict(&r, KEY("ab"), KEY("ab"), &err),
            "Query of 'T': the answer's LastEvaluatedKey goes back (its 'SK' "
            "is not past the ExclusiveStartKey's)");
  CHECK_STR(lek_verdict(&r, KEY("ab"), KEY("a"), &err),
            "Query of 'T': the answer's LastEvaluatedKey goes back (its 'SK' "
            "is not past the ExclusiveStartKey's)");
  r.sk_name = "SK";
  r.sk_op = DDB_SK_BEGINS_WITH;
  r.sk[0].type = DDB_S;
  r.sk[0].text = "ORDER#";
  r.sk[0].n = 6;
  CHECK_STR(lek_verdict(&r, NULL, KEY("ORDER#1"), &err), "");
  CHECK_STR(lek_verdict(&r, NULL, KEY("ORDER"), &err),
            "Query of 'T': the answer's LastEvaluatedKey is outside the key "
            "condition on 'SK'");
  r.sk_op = DDB_SK_LT;
  CHECK_STR(lek_verdict(&r, NULL, KEY("ORDER"), &err), "");
  CHECK_STR(lek_verdict(&r, NULL, KEY("ORDER#"), &err),
            "Query of 'T': the answer's LastEvaluatedKey is outside the key "
            "condition on 'SK'");
  /* no filter: a page with items ends on its last item's key */
  r.sk_op = DDB_SK_NONE;
  {
    ddb_page pg;
    ddb_item *items[2];
    memset(&pg, 0, sizeof(pg));
    items[0] = typed(KEY("a"));
    items[1] = typed("{\"PK\":{\"S\":\"p\"},\"SK\":{\"S\":\"b\"},"
                     "\"v\":{\"N\":\"1\"}}");
    pg.items = items;
    pg.n_items = 2;
    pg.count = 2;
    pg.last_key = typed(KEY("b"));
    CHECK_INT(ddb_lek_check(&r, &pg, &err), DDB_OK);
    ddb_item_unref(pg.last_key);
    pg.last_key = typed(KEY("c"));
    CHECK_INT(ddb_lek_check(&r, &pg, &err), DDB_ERR_PARSE);
    CHECK_STR(err.message, "Query of 'T': the answer's LastEvaluatedKey is "
                           "not the key of its last item (with no filter, "
                           "the read stopped there)");
    /* with a filter, or items without their key, it may be another */
    r.n_filters = 1;
    CHECK_INT(ddb_lek_check(&r, &pg, &err), DDB_OK);
    r.n_filters = 0;
    ddb_item_unref(items[1]);
    items[1] = typed("{\"v\":{\"N\":\"1\"}}");
    CHECK_INT(ddb_lek_check(&r, &pg, &err), DDB_OK);
    ddb_item_unref(pg.last_key);
    ddb_item_unref(items[0]);
    ddb_item_unref(items[1]);
  }
  /* no description: the partition and, with a condition, the sort key */
  r.desc = NULL;
  CHECK_STR(lek_verdict(&r, NULL, "{\"PK\":{\"S\":\"q\"}}", &err),
            "Query of 'T': the answer's LastEvaluatedKey is in another "
            "partition than the Query's ('PK')");
  CHECK_STR(lek_verdict(&r, NULL, "{\"PK\":{\"S\":\"p\"},\"x\":{\"S\":\"q\"}}",
                        &err),
            "");
#undef KEY
}

const tap_test tap_lek_tests[] = {
    {"client: a LastEvaluatedKey loop is caught (Brent)", test_lek_guard},
    {"client: fresh LastEvaluatedKeys for ever end past 1000 idle (100,000) + "
     "2 x "
     "ItemCount pages",
     test_lek_bound},
    {"client: a LastEvaluatedKey keeps the key shape, partition, order and "
     "key condition",
     test_lek_rules},
    {NULL, NULL}};
