/*
** test_tape.c -- unit tests of client/tape.c (JSON text to a tape of
** tokens) and of the parsers built on it: items (ddb_item_parse) and
** Query/Scan pages (ddb_page_parse), the bound on pages parsed at once.
** (The byte scanners under it: test_tape_scan.c.)  No network.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../client/ddb_client_int.h"
#include "tap.h"

/* Does the tape parser take s as one JSON value (and nothing after)? */
static int valid(const char *s) {
  ddb_tape t;
  const char *p = s, *end = s + strlen(s);
  int ok;
  memset(&t, 0, sizeof(t));
  ok = ddb_tape_value(&t, s, &p, end) == 0 && ddb_tape_skip_ws(p, end) == end;
  ddb_tape_free(&t);
  return ok;
}

/* RFC 8259 grammar: what is JSON and what is not. */
static void test_grammar(void) {
  static const char *const good[] = {
      "{}",
      "[]",
      " { } ",
      "0",
      "-0",
      "1.5e+10",
      "-12.25E-3",
      "true",
      "false",
      "null",
      "\"\"",
      "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"",
      "\"\\u00e9\\uD83D\\uDE00\"",
      "[1,[2,[3,{}]],\"x\"]",
      "{\"a\":{\"b\":[true,false,null]},\"c\":\"d\"}",
      "\t\r\n[ 1 , 2 ]\n",
      "\"caf\xc3\xa9\""};
  static const char *const bad[] = {"",
                                    " ",
                                    "{",
                                    "[",
                                    "{\"a\"}",
                                    "{\"a\":}",
                                    "{\"a\":1,}",
                                    "[1,]",
                                    "[,1]",
                                    "{,}",
                                    "{a:1}",
                                    "{'a':1}",
                                    "01",
                                    "1.",
                                    ".5",
                                    "1e",
                                    "+1",
                                    "-",
                                    "tru",
                                    "nul",
                                    "True",
                                    "\"abc",
                                    "\"a\\x\"",
                                    "\"\\u12\"",
                                    "\"\\u12G4\"",
                                    "\"tab\there\"",
                                    "[1 2]",
                                    "{\"a\":1 \"b\":2}",
                                    "[1]]",
                                    "{}}",
                                    "[] []",
                                    "NaN",
                                    "Infinity",
                                    "[1,2",
                                    "{\"a\":[1,2}",
                                    "\"a\nb\"",
                                    "\"\\uD800\"",
                                    "\"\\uD800x\"",
                                    "\"\\uDC00\"",
                                    "\"\\uD800\\u0041\"",
                                    "\"\\uD800\\\""};
  size_t i;
  for(i = 0; i < sizeof(good) / sizeof(good[0]); i++)
    CHECK_MSG(valid(good[i]), "valid JSON refused: %s", good[i]);
  for(i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    CHECK_MSG(!valid(bad[i]), "invalid JSON taken: %s", bad[i]);
}

/* Tokens: order, counts, ends, string spans; member lookup. */
static void test_tokens(void) {
  const char *s = "{\"a\":{\"S\":\"x\"},\"b\":[1,2],\"c\":{}}";
  const char *p = s;
  ddb_tape t;
  long v;
  memset(&t, 0, sizeof(t));
  CHECK_INT(ddb_tape_value(&t, s, &p, s + strlen(s)), 0);
  CHECK(p == s + strlen(s));
  CHECK_INT(t.n, 11);
  CHECK_INT(t.tok[0].type, DDB_JOBJ);
  CHECK_INT(t.tok[0].n, 3);
  CHECK_INT(t.tok[0].end, 11);
  CHECK_INT(t.tok[2].type, DDB_JOBJ);
  CHECK_INT(t.tok[2].end, 5);
  CHECK_INT(t.tok[4].type, DDB_JSTR);
  CHECK_MEM(s + t.tok[4].off, t.tok[4].len, "x", 1);
  CHECK_INT(t.tok[6].type, DDB_JARR);
  CHECK_INT(t.tok[6].n, 2);
  CHECK_INT(t.tok[8].type, DDB_JNUM);
  CHECK_INT(t.tok[10].type, DDB_JOBJ);
  CHECK_INT(t.tok[10].n, 0);
  CHECK_INT(t.tok[10].end, 11);
  v = ddb_tape_member(&t, s, 0, "b");
  CHECK_INT(v, 6);
  CHECK(ddb_tape_num(&t, s, (uint32_t)v + 2) == 2.0);
  CHECK_INT(ddb_tape_member(&t, s, 0, "zz"), -1);
  CHECK_INT(ddb_tape_member(&t, s, 6, "a"), -1); /* not an object */
  ddb_tape_free(&t);
}

/* Escapes: unescaped exactly, surrogate pairs joined (a lone surrogate is
** refused, as cJSON refuses it); names with escapes still match. */
static void test_escapes(void) {
  const char *s = "[\"a\\\"b\\\\c\\/\\n\\u0041\\u00e9\\u20ac\","
                  "\"\\uD83D\\uDE00\",\"\\u0000z\",\"\\u0053\"]";
  const char *p = s;
  ddb_tape t;
  char out[64];
  size_t n;
  memset(&t, 0, sizeof(t));
  CHECK_INT(ddb_tape_value(&t, s, &p, s + strlen(s)), 0);
  CHECK_INT(t.tok[0].n, 4);
  n = ddb_tape_str(s, &t.tok[1], out);
  CHECK_MEM(out, n, "a\"b\\c/\nA\xc3\xa9\xe2\x82\xac", 13);
  n = ddb_tape_str(s, &t.tok[2], out);
  CHECK_MEM(out, n, "\xf0\x9f\x98\x80", 4);
  n = ddb_tape_str(s, &t.tok[3], out);
  CHECK_MEM(out, n, "\0z", 2);
  CHECK(ddb_tape_eq(s, &t.tok[4], "S"));
  CHECK(!ddb_tape_eq(s, &t.tok[4], "N"));
  ddb_tape_free(&t);
}

/* Nesting: deep enough for DynamoDB's 32 levels, bounded beyond. */
static void test_depth(void) {
  char buf[2 * 300 + 1];
  int i;
  for(i = 0; i < 200; i++)
    buf[i] = '[', buf[400 - 1 - i] = ']';
  buf[400] = 0;
  CHECK(valid(buf));
  for(i = 0; i < 300; i++)
    buf[i] = '[', buf[600 - 1 - i] = ']';
  buf[600] = 0;
  CHECK(!valid(buf));
}

static ddb_result parse_item(const char *s, ddb_item **it, ddb_error *err) {
  return ddb_item_parse(s, strlen(s), it, err);
}

/* Items from text: every type, sizes exact, errors named. */
static void test_items(void) {
  const char *s =
      "{\"PK\":{\"S\":\"c#1\"},\"n\":{\"N\":\"-1.5e3\"},\"b\":{\"B\":\"AQI=\"}"
      ","
      "\"t\":{\"BOOL\":true},\"f\":{\"BOOL\":false},\"z\":{\"NULL\":true},"
      "\"m\":{\"M\":{\"k\":{\"L\":[{\"S\":\"v\"},{\"N\":\"2\"}]}}},"
      "\"ss\":{\"SS\":[\"a\",\"b\"]},\"ns\":{\"NS\":[\"1\",\"2\"]},"
      "\"bs\":{\"BS\":[\"AA==\"]},\"e\\u0301\":{\"S\":\"\\u00e9\"}}";
  ddb_item *it = NULL;
  ddb_error err;
  const ddb_av *a;
  ddb_error_clear(&err);
  CHECK_INT(ddb_item_parse(s, strlen(s), &it, &err), DDB_OK);
  if(!it)
    return;
  CHECK_INT(it->root.n, 11);
  a = ddb_item_get(it, "n");
  CHECK(a && a->type == DDB_N && strcmp(a->text, "-1.5e3") == 0);
  a = ddb_item_get(it, "f");
  CHECK(a && a->type == DDB_BOOL && a->n == 0);
  a = ddb_item_get(it, "m");
  CHECK(a && a->type == DDB_M && a->n == 1 && a->kids[0].type == DDB_L &&
        a->kids[0].n == 2 && a->kids[0].kids[1].type == DDB_N);
  a = ddb_item_get(it, "ns");
  CHECK(a && a->type == DDB_NS && a->n == 2 && a->kids[1].type == DDB_N);
  a = ddb_item_get(it, "e\xcc\x81");
  CHECK(a && a->n == 2 && strcmp(a->text, "\xc3\xa9") == 0);
  ddb_item_unref(it);

  it = NULL;
  CHECK_INT(parse_item("{\"a\":{\"N\":\"12x\"}}", &it, &err), DDB_ERR_PARSE);
  CHECK(it == NULL);
  CHECK_STR(err.message, "attribute 'a': '12x' is not a DynamoDB number");
  CHECK_INT(parse_item("{\"a\":{\"S\":1}}", &it, &err), DDB_ERR_PARSE);
  CHECK_STR(err.message, "attribute 'a' is not a valid AttributeValue");
  CHECK_INT(parse_item("{\"a\":{\"S\":\"x\",\"N\":\"1\"}}", &it, &err),
            DDB_ERR_PARSE);
  CHECK_INT(parse_item("{\"a\":{\"Q\":\"x\"}}", &it, &err), DDB_ERR_PARSE);
  CHECK_INT(parse_item("{\"a\":{\"NULL\":false}}", &it, &err), DDB_ERR_PARSE);
  CHECK_INT(parse_item("[1]", &it, &err), DDB_ERR_PARSE);
  CHECK_INT(parse_item("{\"a\":{\"S\":\"x\"}", &it, &err), DDB_ERR_PARSE);
  CHECK_STR(err.message, "item is not valid JSON");
}

/* Parse a page; returns the result, *malformed, and the page in *out. */
static ddb_result page(const char *s, int count_only, ddb_page **out,
                       int *malformed, ddb_error *err) {
  return ddb_page_parse(s, strlen(s), "Scan", count_only, out, malformed, err);
}

/* Pages: items streamed, counts, keys, capacity; a body cut anywhere is
** malformed (retried), a well-formed wrong one is an error (not). */
static void test_pages(void) {
  const char *s =
      "{\"Count\":3,\"Items\":[{\"PK\":{\"S\":\"a\"}},{\"PK\":{\"S\":\"b\"}},"
      "{\"PK\":{\"S\":\"c\"}}],\"ScannedCount\":7,"
      "\"LastEvaluatedKey\":{\"PK\":{\"S\":\"c\"}},"
      "\"ConsumedCapacity\":{\"TableName\":\"T\",\"CapacityUnits\":2.5}}";
  ddb_page *p = NULL;
  ddb_error err;
  int malformed = -1;
  size_t cut, n = strlen(s);
  char *copy;

  ddb_error_clear(&err);
  CHECK_INT(page(s, 0, &p, &malformed, &err), DDB_OK);
  CHECK_INT(malformed, 0);
  if(p) {
    CHECK_INT(p->n_items, 3);
    CHECK_INT(p->count, 3);
    CHECK_INT(p->scanned, 7);
    CHECK(p->consumed_rcu == 2.5);
    CHECK(p->last_key &&
          strcmp(ddb_item_get(p->last_key, "PK")->text, "c") == 0);
    CHECK(strcmp(ddb_item_get(p->items[1], "PK")->text, "b") == 0);
    ddb_page_unref(p);
  }
  /* every strict prefix is malformed: never a shorter page */
  copy = malloc(n + 1);
  for(cut = 0; copy && cut < n; cut++) {
    memcpy(copy, s, cut);
    p = NULL;
    malformed = 0;
    CHECK_MSG(ddb_page_parse(copy, cut, "Scan", 0, &p, &malformed, &err) ==
                      DDB_ERR_PARSE &&
                  malformed && !p,
              "a page cut at %zu bytes was taken", cut);
  }
  free(copy);
  /* well-formed but wrong: an error, not retried */
  CHECK_INT(page("{\"Count\":0}", 0, &p, &malformed, &err), DDB_ERR_PARSE);
  CHECK_INT(malformed, 0);
  CHECK_STR(err.message, "malformed response to Scan: no Items array");
  CHECK_INT(page("{\"Items\":[]}", 0, &p, &malformed, &err), DDB_ERR_PARSE);
  CHECK_STR(err.message, "malformed response to Scan: no Count");
  CHECK_INT(page("{\"Items\":{},\"Count\":0}", 0, &p, &malformed, &err),
            DDB_ERR_PARSE);
  CHECK_INT(page("{\"Count\":\"3\",\"Items\":[]}", 0, &p, &malformed, &err),
            DDB_ERR_PARSE);
  CHECK_INT(page("{\"Count\":1,\"Items\":[{\"a\":{\"S\":5}}]}", 0, &p,
                 &malformed, &err),
            DDB_ERR_PARSE);
  CHECK_INT(malformed, 0);
  /* Select=COUNT: no Items needed; capacity summed over a list */
  CHECK_INT(page("{\"Count\":42,\"ScannedCount\":50,\"ConsumedCapacity\":"
                 "[{\"CapacityUnits\":1},{\"CapacityUnits\":0.5}]}",
                 1, &p, &malformed, &err),
            DDB_OK);
  if(p) {
    CHECK_INT(p->n_items, 0);
    CHECK_INT(p->count, 42);
    CHECK_INT(p->scanned, 50);
    CHECK(p->consumed_rcu == 1.5);
    ddb_page_unref(p);
  }
  /* unknown members are skipped, whatever they hold */
  CHECK_INT(page("{\"X\":[{\"y\":[1,{}]}],\"Items\":[],\"Count\":0,"
                 "\"Z\":null}",
                 0, &p, &malformed, &err),
            DDB_OK);
  ddb_page_unref(p);
  /* trailing garbage */
  CHECK_INT(page("{\"Items\":[],\"Count\":0} x", 0, &p, &malformed, &err),
            DDB_ERR_PARSE);
  CHECK_INT(malformed, 1);
}

/* Many items: the items array grows, bytes add up. */
static void test_big_page(void) {
  ddb_buf b;
  ddb_page *p = NULL;
  ddb_error err;
  int i, malformed;
  size_t sum = 0;
  ddb_buf_init(&b, 1 << 24);
  ddb_buf_adds(&b, "{\"Items\":[");
  for(i = 0; i < 5000; i++) {
    char one[96];
    snprintf(one, sizeof(one),
             "%s{\"PK\":{\"S\":\"k%d\"},\"n\":{\"N\":\"%d\"}}", i ? "," : "",
             i, i);
    ddb_buf_adds(&b, one);
  }
  ddb_buf_adds(&b, "],\"Count\":5000}");
  CHECK_INT(ddb_page_parse(b.p, b.len, "Query", 0, &p, &malformed, &err),
            DDB_OK);
  if(p) {
    CHECK_INT(p->n_items, 5000);
    CHECK(strcmp(ddb_item_get(p->items[4999], "n")->text, "4999") == 0);
    for(i = 0; i < p->n_items; i++)
      sum += p->items[i]->bytes;
    CHECK(p->bytes > sum);
    ddb_page_unref(p);
  }
  ddb_buf_free(&b);
}

/* Counts must be counts of the page: a negative, fractional or huge
** Count, a Count that is not the number of Items, a ScannedCount below
** Count are errors (not retried), never a count of 0. */
static void test_page_counts(void) {
  static const struct {
    const char *body;
    int count_only;
    const char *msg;
  } bad[] = {
      {"{\"Count\":-5,\"ScannedCount\":7}", 1,
       "malformed response to Scan: Count -5 is not a count of one page"},
      {"{\"Count\":1.5}", 1,
       "malformed response to Scan: Count 1.5 is not a count of one page"},
      {"{\"Count\":1e3}", 1,
       "malformed response to Scan: Count 1e3 is not a count of one page"},
      {"{\"Count\":1000000000}", 1,
       "malformed response to Scan: Count 1000000000 is not a count of one "
       "page"},
      {"{\"Count\":524289}", 1,
       "malformed response to Scan: Count 524289 is not a count of one "
       "page"},
      {"{\"Count\":2,\"Items\":[{}]}", 0,
       "malformed response to Scan: Count 2 but 1 Items"},
      {"{\"Count\":0,\"Items\":[{}]}", 0,
       "malformed response to Scan: Count 0 but 1 Items"},
      {"{\"Count\":3,\"ScannedCount\":2}", 1,
       "malformed response to Scan: ScannedCount 2 is below Count"},
      {"{\"Count\":3,\"ScannedCount\":-1}", 1,
       "malformed response to Scan: ScannedCount -1 is not a count of one "
       "page"},
  };
  ddb_page *p = NULL;
  ddb_error err;
  int malformed, i;
  for(i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++) {
    ddb_error_clear(&err);
    CHECK_INT(page(bad[i].body, bad[i].count_only, &p, &malformed, &err),
              DDB_ERR_PARSE);
    CHECK(p == NULL);
    CHECK_INT(malformed, 0);
    CHECK_STR(err.message, bad[i].msg);
  }
  CHECK_INT(page("{\"Count\":524288,\"ScannedCount\":524288}", 1, &p,
                 &malformed, &err),
            DDB_OK);
  if(p)
    CHECK_INT(p->count, 524288);
  ddb_page_unref(p);
  CHECK_INT(page("{\"Count\":0}", 1, &p, &malformed, &err), DDB_OK);
  if(p)
    CHECK_INT(p->scanned, 0);
  ddb_page_unref(p);
}

/* A page of n copies of item, in b. */
static void page_of(ddb_buf *b, const char *item, int n) {
  int i;
  ddb_buf_reset(b);
  ddb_buf_addf(b, "{\"Count\":%d,\"Items\":[", n);
  for(i = 0; i < n; i++) {
    if(i)
      ddb_buf_addc(b, ',');
    ddb_buf_adds(b, item);
  }
  ddb_buf_addf(b, "],\"ScannedCount\":%d}", n);
}

/* What one page may cost: at most 524,288 items and 96 MB decoded (read.c,
** PAGE_*); past either, an error naming the bound, not retried. */
static void test_page_bounds(void) {
  ddb_buf b, l;
  ddb_page *p = NULL;
  ddb_error err;
  int malformed = -1, i;
  ddb_buf_init(&b, (size_t)64 << 20);
  ddb_buf_init(&l, (size_t)4 << 20);
  page_of(&b, "{}", 524288);
  CHECK_INT(ddb_page_parse(b.p, b.len, "Scan", 0, &p, &malformed, &err),
            DDB_OK);
  if(p)
    CHECK_INT(p->n_items, 524288);
  ddb_page_unref(p);
  page_of(&b, "{}", 524289);
  CHECK_INT(ddb_page_parse(b.p, b.len, "Scan", 0, &p, &malformed, &err),
            DDB_ERR_PARSE);
  CHECK_INT(malformed, 0);
  CHECK(p == NULL);
  CHECK_STR(err.message, "malformed response to Scan: more than 524288 items "
                         "in one page (a page holds at most 1 MB of items)");
  /* items of a List of 100,000 empty strings: 4 MB decoded each */
  ddb_buf_adds(&l, "{\"L\":{\"L\":[");
  for(i = 0; i < 100000; i++)
    ddb_buf_adds(&l, i ? ",{\"S\":\"\"}" : "{\"S\":\"\"}");
  ddb_buf_adds(&l, "]}}");
  page_of(&b, l.p, 30);
  CHECK(!b.failed);
  CHECK_INT(ddb_page_parse(b.p, b.len, "Query", 0, &p, &malformed, &err),
            DDB_ERR_PARSE);
  CHECK_INT(malformed, 0);
  CHECK_STR(err.message, "malformed response to Query: a page of more than "
                         "96 MB decoded (a page holds at most 1 MB of items)");
  page_of(&b, l.p, 20);
  CHECK_INT(ddb_page_parse(b.p, b.len, "Query", 0, &p, &malformed, &err),
            DDB_OK);
  ddb_page_unref(p);
  ddb_buf_free(&b);
  ddb_buf_free(&l);
}

/* The reader enters an object member and comes back out of it. */
static void test_reader_object(void) {
  const char *s = "{\"a\":1,\"R\":{\"T\":[{\"x\":{\"S\":\"1\"}},{}],"
                  "\"U\":[]},\"b\":{\"c\":2}}";
  ddb_jreader r;
  ddb_jtok name;
  int n = 0, rc;
  memset(&r, 0, sizeof(r));
  CHECK_INT(ddb_jr_open(&r, s, strlen(s)), 0);
  CHECK_INT(ddb_jr_next(&r, &name), 1);
  CHECK(ddb_tape_eq(s, &name, "a"));
  CHECK_INT(ddb_jr_object(&r), -1); /* 1 is no object */
  CHECK_INT(ddb_jr_value(&r), 0);
  CHECK_INT(ddb_jr_next(&r, &name), 1);
  CHECK(ddb_tape_eq(s, &name, "R"));
  CHECK_INT(ddb_jr_object(&r), 0);
  CHECK_INT(ddb_jr_next(&r, &name), 1);
  CHECK(ddb_tape_eq(s, &name, "T"));
  CHECK_INT(ddb_jr_array(&r), 0);
  while((rc = ddb_jr_element(&r)) == 1)
    n++;
  CHECK_INT(rc, 0);
  CHECK_INT(n, 2);
  CHECK_INT(ddb_jr_next(&r, &name), 1);
  CHECK(ddb_tape_eq(s, &name, "U"));
  CHECK_INT(ddb_jr_value(&r), 0);
  CHECK_INT(ddb_jr_next(&r, &name), 0); /* the end of R */
  CHECK_INT(ddb_jr_next(&r, &name), 1);
  CHECK(ddb_tape_eq(s, &name, "b"));
  CHECK_INT(ddb_jr_value(&r), 0);
  CHECK_INT(ddb_jr_next(&r, &name), 0); /* the end of the text */
  ddb_tape_free(&r.tape);
  /* an entered object cut short is malformed */
  memset(&r, 0, sizeof(r));
  CHECK_INT(ddb_jr_open(&r, "{\"R\":{\"T\":1", 11), 0);
  CHECK_INT(ddb_jr_next(&r, &name), 1);
  CHECK_INT(ddb_jr_object(&r), 0);
  CHECK_INT(ddb_jr_next(&r, &name), 1);
  CHECK_INT(ddb_jr_value(&r), 0);
  CHECK_INT(ddb_jr_next(&r, &name), -1);
  ddb_tape_free(&r.tape);
}

/* A value of more tokens than one item can have (2 M) is refused. */
static void test_tape_tokens_max(void) {
  ddb_buf b;
  ddb_tape t;
  const char *p;
  int i;
  ddb_buf_init(&b, (size_t)16 << 20);
  memset(&t, 0, sizeof(t));
  ddb_buf_addc(&b, '[');
  for(i = 0; i < 2100000; i++)
    ddb_buf_adds(&b, i ? ",1" : "1");
  ddb_buf_addc(&b, ']');
  p = b.p;
  CHECK_INT(ddb_tape_value(&t, b.p, &p, b.p + b.len), -1);
  ddb_tape_free(&t);
  ddb_buf_free(&b);
}

/* An item without an escape in its text is plain (rendered without a
** scan for characters to escape), one with any escape is not, and both
** render as the escaping renderer renders them. */
static void test_item_plain(void) {
  static const struct {
    const char *typed, *json;
    int plain;
  } cases[] = {
      {"{\"a\":{\"S\":\"x y\"},\"m\":{\"M\":{\"k\":{\"SS\":[\"p\"]}}}}",
       "{\"a\":\"x y\",\"m\":{\"k\":[\"p\"]}}", 1},
      {"{\"a\":{\"S\":\"x\\ny\"}}", "{\"a\":\"x\\ny\"}", 0},
      {"{\"a\":{\"S\":\"q\\\"\"}}", "{\"a\":\"q\\\"\"}", 0},
      {"{\"a\\u0001\":{\"N\":\"1\"}}", "{\"a\\u0001\":1}", 0},
      {"{\"a\":{\"L\":[{\"S\":\"\\u00e9\"}]}}", "{\"a\":[\"\xc3\xa9\"]}", 0},
      {"{\"a\":{\"NS\":[\"1\",\"2.5\"]},\"b\":{\"BOOL\":true}}",
       "{\"a\":[1,2.5],\"b\":true}", 1},
      {"{\"a\":{\"N\":\"+5\"},\"e\":{\"M\":{}},\"l\":{\"L\":[]},\"z\":{"
       "\"NULL\":"
       "true},\"f\":{\"BOOL\":false},\"b\":{\"B\":\"AQ==\"},\"s\":{\"S\":\"\"}"
       ","
       "\"w\":{\"L\":[{\"BOOL\":false},{\"NULL\":true},{\"N\":\"0\"}]}}",
       "{\"a\":5,\"e\":{},\"l\":[],\"z\":null,\"f\":false,\"b\":\"AQ==\","
       "\"s\":\"\",\"w\":[false,null,0]}",
       1},
  };
  size_t i;
  for(i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    ddb_item *it = NULL;
    ddb_error err;
    ddb_buf b;
    ddb_error_clear(&err);
    CHECK_INT(
        ddb_item_parse(cases[i].typed, strlen(cases[i].typed), &it, &err),
        DDB_OK);
    if(!it)
      continue;
    CHECK_INT(it->plain, cases[i].plain);
    ddb_buf_init(&b, 1 << 20);
    ddb_item_to_json(it, &b);
    CHECK_MEM(b.p, b.len, cases[i].json, strlen(cases[i].json));
    /* the bound the plain render makes room by */
    CHECK_MSG(b.len <= it->bytes, "json %zu, item %zu", b.len, it->bytes);
    ddb_buf_free(&b);
    ddb_item_unref(it);
  }
}

/* What test_parse_slots' threads share. */
typedef struct slots_probe {
  int inside, peak; /* atomics */
} slots_probe;

/* One worker of test_parse_slots: take a slot, count itself in, hold it
** 20 ms, count itself out. */
static void *slots_worker(void *arg) {
  slots_probe *pr = arg;
  struct timespec ts = {0, 20 * 1000 * 1000};
  int now, peak;
  ddb_parse_enter();
  now = __atomic_add_fetch(&pr->inside, 1, __ATOMIC_SEQ_CST);
  peak = __atomic_load_n(&pr->peak, __ATOMIC_SEQ_CST);
  while(now > peak &&
        !__atomic_compare_exchange_n(&pr->peak, &peak, now, 0,
                                     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
    ;
  nanosleep(&ts, NULL);
  __atomic_sub_fetch(&pr->inside, 1, __ATOMIC_SEQ_CST);
  ddb_parse_leave();
  return NULL;
}

/* No more pages parsed at once than the online cores: 16 threads that
** each hold a parse slot 20 ms are never more than the cores inside. */
static void test_parse_slots(void) {
  pthread_t th[16];
  slots_probe pr = {0, 0};
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int i, started = 0;
  for(i = 0; i < 16; i++)
    if(pthread_create(&th[i], NULL, slots_worker, &pr) == 0)
      started++;
  for(i = 0; i < started; i++)
    pthread_join(th[i], NULL);
  CHECK_INT(started, 16);
  CHECK(pr.peak >= 1);
  CHECK_MSG(pr.peak <= (cores < 1 ? 1 : cores), "peak %d, cores %ld", pr.peak,
            cores);
  CHECK_INT(pr.inside, 0);
}

const tap_test tap_tape_tests[] = {
    {"tape: JSON grammar (RFC 8259)", test_grammar},
    {"tape: tokens, ends, member lookup", test_tokens},
    {"tape: string escapes and surrogates", test_escapes},
    {"tape: nesting depth", test_depth},
    {"tape: items from text", test_items},
    {"tape: Query/Scan pages, cut and wrong bodies", test_pages},
    {"tape: a page of 5,000 items", test_big_page},
    {"tape: a page's Count and ScannedCount are counts of it",
     test_page_counts},
    {"tape: a page past 524,288 items or 96 MB decoded is refused",
     test_page_bounds},
    {"tape: the reader enters an object and leaves it", test_reader_object},
    {"tape: a value of more than 2 M tokens is refused", test_tape_tokens_max},
    {"tape: an item without escapes renders plain", test_item_plain},
    {"tape: no more pages parsed at once than cores", test_parse_slots},
    {NULL, NULL}};
