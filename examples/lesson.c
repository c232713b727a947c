/*
** lesson.c -- the lesson table of examples/lesson/ (customers and their
** orders, one table) in C, through the cache of libdyndb.
**
** Customers and their orders live in one table: a profile is SK =
** "PROFILE", an order SK = "ORDER#<date>#<id>"; orders also carry
** GSI1PK = "STATUS#<status>" and GSI1SK, so GSI1 answers "every pending
** order, whoever placed it".  Each step prints what it found and the
** requests it cost ("cache" when none), which shows the cache at work: a
** repeated read costs nothing, and a write makes exactly the cached
** answers it changes stale.
**
**    cc lesson.c $(pkg-config --cflags --libs dyndb) -o lesson
**    ./lesson [TABLE]        (default Store; to load it into DynamoDB Local:
**      python3 examples/load.py examples/lesson/store.json Store)
**
** The program leaves the table as it found it, so it can run again.
*/
#include <dyndb.h>
#include <stdio.h>
#include <string.h>

static const char *table = "Store";
static dyn_stats before;

/* Start counting requests. */
static void count_start(void) {
  dyn_stats_get(&before);
}

/* Print the requests since count_start(): "[Query]", "[cache]". */
static void count_print(void) {
  dyn_stats now;
  int op, n = 0;
  dyn_stats_get(&now);
  printf("  [");
  for(op = 0; op < DYN_OP_COUNT; op++) {
    unsigned long long d =
        (unsigned long long)(now.op_requests[op] - before.op_requests[op]);
    if(d == 0)
      continue;
    printf("%s%s", n++ ? ", " : "", dyn_op_name((dyn_op)op));
    if(d > 1)
      printf(" x%llu", d);
  }
  printf("%s]\n", n ? "" : "cache");
}

/* The text of attribute name of item ("" when missing or not text). */
static const char *text(const dyn_item *item, const char *name) {
  const char *s = dyn_value_text(dyn_item_get(item, name), NULL);
  return s ? s : "";
}

/* A new item (a key, or an item to put) from pairs: name, value, ...,
** NULL.  A value is an S, or an N when it starts with '#' ("#40"). */
static dyn_code make(dyn_item **out, dyn_error *err,
                     const char *const *pairs) {
  dyn_builder *b = dyn_builder_new();
  for(; pairs[0]; pairs += 2) {
    if(pairs[1][0] == '#')
      dyn_builder_n(b, pairs[0], pairs[1] + 1);
    else
      dyn_builder_s(b, pairs[0], pairs[1]);
  }
  return dyn_builder_finish(b, out, err);
}
#define PAIRS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* How a query's items are printed. */
enum show { SHOW_SK, SHOW_PK_SK, SHOW_COUNT };

/* Run q and print its items as `show` says. */
static dyn_code run_query(dyn_client *c, const dyn_query *q, enum show show,
                          dyn_error *err) {
  dyn_iter *it = NULL;
  const dyn_item *item;
  dyn_code result;
  int n = 0;

  result = dyn_query_open(c, q, 0, &it, err);
  if(result)
    return result;
  while((result = dyn_iter_next(it, &item, err)) == DYN_OK && item) {
    if(show == SHOW_SK)
      printf("%s%s", n ? ", " : "  ", text(item, "SK"));
    else if(show == SHOW_PK_SK)
      printf("  %s %s\n", text(item, "PK"), text(item, "SK"));
    n++;
  }
  dyn_iter_free(it);
  if(result)
    return result;
  if(show == SHOW_SK)
    printf("%s(%d item%s)\n", n ? " " : "  ", n, n == 1 ? "" : "s");
  else if(show == SHOW_COUNT)
    printf("  Count: %d\n", n);
  return DYN_OK;
}

static dyn_code pending_count(dyn_client *c, dyn_error *err) {
  dyn_query q;
  memset(&q, 0, sizeof(q));
  q.table = table;
  q.index = "GSI1";
  q.pk = "STATUS#pending";
  return run_query(c, &q, SHOW_COUNT, err);
}

int main(int argc, char **argv) {
  dyn_client *c = NULL;
  dyn_item *key = NULL, *item = NULL, *carol = NULL, *dave = NULL;
  dyn_item *keys[2] = {NULL, NULL}, *found[2] = {NULL, NULL};
  dyn_item *set = NULL, *updated = NULL, *o101 = NULL;
  dyn_iter *it = NULL;
  const dyn_item *row;
  dyn_query q;
  dyn_scan s;
  dyn_write w[3];
  dyn_error err;
  dyn_code result;
  int n, total;

  if(argc > 1)
    table = argv[1];
  result = dyn_client_new(NULL, &c, &err);
  if(result)
    goto fail;

  printf("Pattern 1: a customer's profile and every order, one Query\n");
  count_start();
  memset(&q, 0, sizeof(q));
  q.table = table;
  q.pk = "CUSTOMER#alice";
  result = run_query(c, &q, SHOW_SK, &err);
  if(result)
    goto fail;
  count_print();
  printf("Pattern 1 again\n");
  count_start();
  result = run_query(c, &q, SHOW_SK, &err);
  if(result)
    goto fail;
  count_print();

  printf("Pattern 2: a date range of orders, one Query\n");
  count_start();
  q.sk_op = DYN_SK_BETWEEN;
  q.sk = "ORDER#2026-02-01";
  q.sk_hi = "ORDER#2026-02-28";
  result = run_query(c, &q, SHOW_SK, &err);
  if(result)
    goto fail;
  count_print();

  printf("Pattern 3: every pending order, across every customer, one Query "
         "on GSI1\n");
  count_start();
  memset(&q, 0, sizeof(q));
  q.table = table;
  q.index = "GSI1";
  q.pk = "STATUS#pending";
  result = run_query(c, &q, SHOW_PK_SK, &err);
  if(result)
    goto fail;
  count_print();

  printf("Practice 1: alice's profile with GetItem\n");
  result = make(&key, &err, PAIRS("PK", "CUSTOMER#alice", "SK", "PROFILE"));
  if(result)
    goto fail;
  for(n = 0; n < 3; n++) {
    int flags = n == 2 ? DYN_CONSISTENT : 0;
    count_start();
    result = dyn_get_item(c, table, key, flags, &item, &err);
    if(result)
      goto fail;
    printf("  %sname %s, email %s\n",
           n == 0   ? ""
           : n == 1 ? "again: "
                    : "consistent: ",
           text(item, "name"), text(item, "email"));
    dyn_item_unref(item);
    item = NULL;
    count_print();
  }

  printf("Practice 2: GSI1 for a status no order has\n");
  count_start();
  q.pk = "STATUS#cancelled";
  result = run_query(c, &q, SHOW_COUNT, &err);
  if(result)
    goto fail;
  count_print();

  printf("Practice 3: a new order for a third customer shows up in GSI1\n");
  result = make(&carol, &err,
                PAIRS("PK", "CUSTOMER#carol", "SK", "ORDER#2026-03-15#o-300",
                      "status", "pending", "total", "#40", "GSI1PK",
                      "STATUS#pending", "GSI1SK", "ORDER#2026-03-15#o-300"));
  if(result)
    goto fail;
  printf("  before (Pattern 3's page, cached):\n");
  count_start();
  result = pending_count(c, &err);
  if(result)
    goto fail;
  count_print();
  printf("  after the put (which made that page stale):\n");
  count_start();
  result = dyn_put_item(c, table, carol, 0, NULL, &err);
  if(result)
    goto fail;
  result = pending_count(c, &err);
  if(result)
    goto fail;
  count_print();
  count_start();
  result = dyn_put_item(c, table, carol, DYN_IF_NOT_EXISTS, NULL, &err);
  printf("  the same order again, DYN_IF_NOT_EXISTS: %s (%s)\n",
         dyn_code_name(result), err.type);
  if(result != DYN_ECONDITION)
    goto fail;
  count_print();

  printf("Practice 4: alice's PROFILE is not in GSI1 (a sparse index)\n");
  count_start();
  memset(&s, 0, sizeof(s));
  s.table = table;
  s.index = "GSI1";
  result = dyn_scan_open(c, &s, 0, &it, &err);
  if(result)
    goto fail;
  n = total = 0;
  while((result = dyn_iter_next(it, &row, &err)) == DYN_OK && row) {
    total++;
    if(!strcmp(text(row, "PK"), "CUSTOMER#alice") &&
       !strcmp(text(row, "SK"), "PROFILE"))
      n++;
  }
  dyn_iter_free(it);
  it = NULL;
  if(result)
    goto fail;
  printf("  Count: %d (of %d items in GSI1)\n", n, total);
  count_print();

  printf("Practice 5: an order on Pattern 2's end boundary\n");
  result = make(&dave, &err,
                PAIRS("PK", "CUSTOMER#dave", "SK", "ORDER#2026-02-28#o-400",
                      "status", "pending", "total", "#25"));
  if(result)
    goto fail;
  result = dyn_put_item(c, table, dave, 0, NULL, &err);
  if(result)
    goto fail;
  memset(&q, 0, sizeof(q));
  q.table = table;
  q.pk = "CUSTOMER#dave";
  q.sk_op = DYN_SK_BETWEEN;
  q.sk = "ORDER#2026-02-01";
  q.sk_hi = "ORDER#2026-02-28";
  printf("  naive bound (end = ORDER#2026-02-28):\n");
  result = run_query(c, &q, SHOW_COUNT, &err);
  if(result)
    goto fail;
  printf("  fixed bound (end = ORDER#2026-02-28~):\n");
  q.sk_hi = "ORDER#2026-02-28~";
  result = run_query(c, &q, SHOW_COUNT, &err);
  if(result)
    goto fail;

  printf("Both profiles with BatchGetItem (alice's is cached)\n");
  result =
      make(&keys[0], &err, PAIRS("PK", "CUSTOMER#alice", "SK", "PROFILE"));
  if(!result)
    result =
        make(&keys[1], &err, PAIRS("PK", "CUSTOMER#bob", "SK", "PROFILE"));
  if(result)
    goto fail;
  count_start();
  result = dyn_batch_get(c, table, (const dyn_item *const *)keys, 2, 0, found,
                         &err);
  if(result)
    goto fail;
  printf("  %s, %s\n", text(found[0], "name"), text(found[1], "name"));
  count_print();

  printf("Ship order o-101 with UpdateItem\n");
  dyn_item_unref(key);
  key = NULL;
  result = make(&key, &err,
                PAIRS("PK", "CUSTOMER#alice", "SK", "ORDER#2026-02-10#o-101"));
  if(!result)
    result = make(&set, &err,
                  PAIRS("status", "shipped", "GSI1PK", "STATUS#shipped"));
  if(result)
    goto fail;
  result = dyn_get_item(c, table, key, DYN_CONSISTENT, &o101, &err);
  if(result)
    goto fail;
  count_start();
  result = dyn_update_item(c, table, key, set, NULL, 0, 0, &updated, &err);
  if(result)
    goto fail;
  printf("  status %s, total %s\n", text(updated, "status"),
         text(updated, "total"));
  result = pending_count(c, &err);
  if(result)
    goto fail;
  count_print();

  printf("Put the table back: one transaction of 3 writes\n");
  w[0].kind = DYN_DELETE;
  w[0].item = carol;
  w[0].flags = DYN_IF_EXISTS;
  w[1].kind = DYN_DELETE;
  w[1].item = dave;
  w[1].flags = 0;
  w[2].kind = DYN_PUT;
  w[2].item = o101;
  w[2].flags = DYN_IF_EXISTS;
  count_start();
  result = dyn_transact_write(c, table, w, 3, &err);
  if(result)
    goto fail;
  result = pending_count(c, &err);
  if(result)
    goto fail;
  count_print();
  result = dyn_transact_write(c, table, w, 3, &err);
  printf("  again: %s: %s\n", dyn_code_name(result), err.message);
  if(result != DYN_ECONDITION)
    goto fail;
  result = DYN_OK;

fail:
  if(result)
    fprintf(stderr, "lesson: %s: %s\n", dyn_code_name(result), err.message);
  dyn_iter_free(it);
  dyn_item_unref(key);
  dyn_item_unref(item);
  dyn_item_unref(carol);
  dyn_item_unref(dave);
  dyn_item_unref(keys[0]);
  dyn_item_unref(keys[1]);
  dyn_item_unref(found[0]);
  dyn_item_unref(found[1]);
  dyn_item_unref(set);
  dyn_item_unref(updated);
  dyn_item_unref(o101);
  dyn_client_free(c);
  return result ? 1 : 0;
}
