/*
** test_item.c -- unit tests of client/item.c: items decoded from DynamoDB
** JSON (every type, what is refused, the depth limit), their plain and
** typed JSON, key encodings, items from attribute values, reference
** counts.  (Items from JSON text: test_json.c.)  No network.
*/
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "../../client/ddb_client_int.h"
#include "helpers.h"
#include "tap.h"

/* ------------------------------------------------------------------------
** Helpers
*/

/* Decode DynamoDB JSON text into an item; NULL (and err set) on failure. */
static ddb_item *decode(const char *json, ddb_error *err) {
  cJSON *j = cJSON_Parse(json);
  ddb_item *it = NULL;
  ddb_error e;
  ddb_error_clear(&e);
  if(!j) {
    tap_diag("cJSON_Parse failed on %s", json);
    if(err)
      err->code = DDB_ERR_PARSE;
    return NULL;
  }
  if(ddb_item_decode(j, &it, err ? err : &e) != DDB_OK)
    it = NULL;
  cJSON_Delete(j);
  return it;
}

/* Plain JSON of av as a malloc'ed string. */
static char *plain(const ddb_av *av) {
  ddb_buf b;
  ddb_buf_init(&b, 1 << 20);
  ddb_av_to_json(av, &b);
  return ddb_buf_take(&b, NULL);
}

/* Is every pointer of av inside the item's single allocation? */
static int av_within(const ddb_item *it, const ddb_av *av) {
  const char *lo = (const char *)it, *hi = lo + it->bytes;
  uint32_t i;
  if(av->text &&
     ((const char *)av->text < lo || (const char *)av->text + av->n + 1 > hi))
    return 0;
  if(av->name && ((const char *)av->name < lo ||
                  (const char *)av->name + av->name_len + 1 > hi))
    return 0;
  if(av->n && (av->type == DDB_M || av->type == DDB_L || av->type == DDB_SS ||
               av->type == DDB_NS || av->type == DDB_BS)) {
    if((const char *)av->kids < lo || (const char *)(av->kids + av->n) > hi)
      return 0;
    for(i = 0; i < av->n; i++)
      if(!av_within(it, &av->kids[i]))
        return 0;
  }
  return 1;
}

/* ------------------------------------------------------------------------
** Items
*/
static const char all_types[] =
    "{\"s\":{\"S\":\"h\\u00e9llo\"},"
    "\"n\":{\"N\":\"-12.50\"},"
    "\"b\":{\"B\":\"AAEC\"},"
    "\"t\":{\"BOOL\":true},"
    "\"f\":{\"BOOL\":false},"
    "\"z\":{\"NULL\":true},"
    "\"m\":{\"M\":{\"in\":{\"L\":[{\"N\":\"1\"},{\"M\":{\"deep\":{\"S\":\"x\"}"
    "}}]},"
    "\"e\":{\"M\":{}}}},"
    "\"l\":{\"L\":[{\"S\":\"a\"},{\"NULL\":true},{\"L\":[]}]},"
    "\"ss\":{\"SS\":[\"a\",\"b\"]},"
    "\"ns\":{\"NS\":[\"1\",\"2.5\",\"-3\"]},"
    "\"bs\":{\"BS\":[\"AA==\",\"AQ==\"]}}";

static void test_item_decode_types(void) {
  ddb_error err;
  ddb_item *it;
  const ddb_av *a, *k;
  ddb_error_clear(&err);
  it = decode(all_types, &err);
  if(!CHECK_MSG(it != NULL, "decode failed: %s", err.message))
    return;
  CHECK_INT(it->refs, 1);
  CHECK_INT(it->root.type, DDB_M);
  CHECK_INT(it->root.n, 11);
  CHECK(it->bytes > sizeof(ddb_item) + 11 * sizeof(ddb_av));
  CHECK(av_within(it, &it->root));
  /* attributes keep their order and names */
  CHECK_STR(it->root.kids[0].name, "s");
  CHECK_INT(it->root.kids[0].name_len, 1);
  CHECK_STR(it->root.kids[10].name, "bs");
  CHECK_INT(it->root.kids[10].name_len, 2);

  a = ddb_item_get(it, "s");
  CHECK(a && a->type == DDB_S && a->n == 6);
  if(a)
    CHECK_STR(a->text, "h\xc3\xa9llo");
  a = ddb_item_get(it, "n");
  CHECK(a && a->type == DDB_N);
  if(a)
    CHECK_STR(a->text, "-12.50"); /* exact digits */
  a = ddb_item_get(it, "b");
  CHECK(a && a->type == DDB_B);
  if(a)
    CHECK_STR(a->text, "AAEC"); /* base64 as sent */
  a = ddb_item_get(it, "t");
  CHECK(a && a->type == DDB_BOOL && a->n == 1);
  a = ddb_item_get(it, "f");
  CHECK(a && a->type == DDB_BOOL && a->n == 0);
  a = ddb_item_get(it, "z");
  CHECK(a && a->type == DDB_NULL);
  a = ddb_item_get(it, "m");
  CHECK(a && a->type == DDB_M && a->n == 2);
  if(a && a->n == 2) {
    k = &a->kids[0];
    CHECK_STR(k->name, "in");
    CHECK(k->type == DDB_L && k->n == 2);
    if(k->type == DDB_L && k->n == 2) {
      CHECK(k->kids[0].type == DDB_N && k->kids[0].name == NULL);
      CHECK(k->kids[1].type == DDB_M && k->kids[1].n == 1);
      if(k->kids[1].n == 1) {
        CHECK_STR(k->kids[1].kids[0].name, "deep");
        CHECK_STR(k->kids[1].kids[0].text, "x");
      }
    }
    CHECK_STR(a->kids[1].name, "e");
    CHECK(a->kids[1].type == DDB_M && a->kids[1].n == 0);
  }
  a = ddb_item_get(it, "l");
  CHECK(a && a->type == DDB_L && a->n == 3);
  if(a && a->n == 3)
    CHECK(a->kids[1].type == DDB_NULL && a->kids[2].type == DDB_L &&
          a->kids[2].n == 0);
  a = ddb_item_get(it, "ss");
  CHECK(a && a->type == DDB_SS && a->n == 2);
  if(a && a->n == 2) {
    CHECK(a->kids[0].type == DDB_S && a->kids[1].type == DDB_S);
    CHECK_STR(a->kids[1].text, "b");
  }
  a = ddb_item_get(it, "ns");
  CHECK(a && a->type == DDB_NS && a->n == 3);
  if(a && a->n == 3) {
    CHECK(a->kids[2].type == DDB_N);
    CHECK_STR(a->kids[1].text, "2.5");
  }
  a = ddb_item_get(it, "bs");
  CHECK(a && a->type == DDB_BS && a->n == 2);
  if(a && a->n == 2)
    CHECK(a->kids[0].type == DDB_B && a->kids[0].n == 4);
  CHECK(ddb_item_get(it, "missing") == NULL);
  CHECK(ddb_item_get(it, "S") == NULL);
  CHECK(ddb_item_get(NULL, "s") == NULL);
  ddb_item_unref(it);

  /* an empty item */
  it = decode("{}", &err);
  CHECK(it && it->root.n == 0);
  ddb_item_unref(it);
}

static void test_item_decode_rejects(void) {
  static const char *const bad[] = {
      "{\"a\":{\"S\":\"x\",\"N\":\"1\"}}", /* two type keys */
      "{\"a\":{}}",                        /* no type key */
      "{\"a\":{\"X\":\"1\"}}",             /* unknown type */
      "{\"a\":{\"s\":\"x\"}}",             /* types are case-sensitive */
      "{\"a\":{\"S\":1}}",                 /* S must be a string */
      "{\"a\":{\"N\":1}}",                 /* N is sent as a string */
      "{\"a\":{\"B\":null}}",
      "{\"a\":{\"BOOL\":\"true\"}}",
      "{\"a\":{\"BOOL\":1}}",
      "{\"a\":{\"M\":[]}}",
      "{\"a\":{\"L\":{}}}",
      "{\"a\":{\"L\":[\"x\"]}}", /* members are AttributeValues */
      "{\"a\":{\"M\":{\"k\":\"v\"}}}",
      "{\"a\":{\"SS\":[1]}}",
      "{\"a\":{\"NS\":\"1\"}}",
      "{\"a\":{\"BS\":[{\"B\":\"AA==\"}]}}",
      "{\"a\":\"x\"}", /* not an AttributeValue */
      "{\"a\":[]}",
      "{\"ok\":{\"S\":\"x\"},\"a\":{\"L\":[{\"M\":{\"k\":{\"Q\":1}}}]}}",
  };
  size_t i;
  ddb_error err;
  ddb_item *it;
  cJSON *j;
  for(i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    ddb_error_clear(&err);
    it = decode(bad[i], &err);
    CHECK_MSG(it == NULL && err.code == DDB_ERR_PARSE,
              "accepted malformed item %s", bad[i]);
    CHECK_MSG(strstr(err.message, "'a'") != NULL,
              "message does not name the attribute: %s", err.message);
    ddb_item_unref(it);
  }
  /* not an object at all */
  j = cJSON_Parse("[1]");
  it = (ddb_item *)1;
  CHECK_INT(ddb_item_decode(j, &it, &err), DDB_ERR_PARSE);
  CHECK(it == NULL);
  cJSON_Delete(j);
}

/* Nesting deeper than 64 levels is refused; 64 is fine. */
static void test_item_decode_depth(void) {
  ddb_buf b;
  ddb_item *it;
  ddb_error err;
  int d, depth[2] = {64, 65};
  for(d = 0; d < 2; d++) {
    int i;
    ddb_buf_init(&b, 1 << 16);
    ddb_buf_adds(&b, "{\"a\":");
    for(i = 1; i < depth[d]; i++)
      ddb_buf_adds(&b, "{\"L\":[");
    ddb_buf_adds(&b, "{\"S\":\"x\"}");
    for(i = 1; i < depth[d]; i++)
      ddb_buf_adds(&b, "]}");
    ddb_buf_adds(&b, "}");
    ddb_error_clear(&err);
    it = decode(b.p, &err);
    if(d == 0)
      CHECK_MSG(it != NULL, "depth 64 refused: %s", err.message);
    else
      CHECK_MSG(it == NULL && err.code == DDB_ERR_PARSE, "depth 65 accepted");
    ddb_item_unref(it);
    ddb_buf_free(&b);
  }
}

static void test_av_to_json(void) {
  static const struct {
    const char *in, *want;
  } v[] = {
      {"{\"a\":{\"S\":\"q\\\"\\\\\\n\"}}", "{\"a\":\"q\\\"\\\\\\n\"}"},
      {"{\"a\":{\"N\":\"1.50\"}}", "{\"a\":1.50}"},
      {"{\"a\":{\"N\":\"-0\"}}", "{\"a\":-0}"},
      {"{\"a\":{\"N\":\"12345678901234567890123456789012345678\"}}",
       "{\"a\":12345678901234567890123456789012345678}"},
      {"{\"a\":{\"N\":\"1E+2\"}}", "{\"a\":1E+2}"},
      {"{\"a\":{\"N\":\"+5\"}}", "{\"a\":5}"},
      {"{\"a\":{\"B\":\"AAEC\"}}", "{\"a\":\"AAEC\"}"},
      {"{\"a\":{\"BOOL\":true},\"b\":{\"BOOL\":false}}",
       "{\"a\":true,\"b\":false}"},
      {"{\"a\":{\"NULL\":true}}", "{\"a\":null}"},
      {"{\"a\":{\"M\":{}},\"b\":{\"L\":[]}}", "{\"a\":{},\"b\":[]}"},
      {"{\"a\":{\"SS\":[\"x\",\"y\"]},\"b\":{\"NS\":[\"1\",\"2.0\"]},"
       "\"c\":{\"BS\":[\"AA==\"]}}",
       "{\"a\":[\"x\",\"y\"],\"b\":[1,2.0],\"c\":[\"AA==\"]}"},
      {"{\"we\\\"ird\":{\"M\":{\"k\":{\"L\":[{\"N\":\"1\"},{\"S\":\"s\"},"
       "{\"M\":{\"z\":{\"NULL\":true}}}]}}}}",
       "{\"we\\\"ird\":{\"k\":[1,\"s\",{\"z\":null}]}}"},
  };
  size_t i;
  for(i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
    ddb_item *it = decode(v[i].in, NULL);
    char *s;
    if(!CHECK_MSG(it != NULL, "decode failed: %s", v[i].in))
      continue;
    s = plain(&it->root);
    CHECK_STR(s, v[i].want);
    free(s);
    ddb_item_unref(it);
  }
}

static void test_typed_json(void) {
  ddb_item *it, *it2;
  char *t1, *p1, *p2, *t2;
  cJSON *j;
  it = decode(all_types, NULL);
  if(!CHECK(it != NULL))
    return;
  t1 = typed(it);
  p1 = plain(&it->root);
  /* typed json decodes to the same item */
  it2 = decode(t1, NULL);
  CHECK(it2 != NULL);
  if(it2) {
    p2 = plain(&it2->root);
    CHECK_STR(p2, p1);
    t2 = typed(it2);
    CHECK_STR(t2, t1);
    free(p2);
    free(t2);
  }
  /* spot checks of the typed forms */
  CHECK(strstr(t1, "\"z\":{\"NULL\":true}") != NULL);
  CHECK(strstr(t1, "\"ns\":{\"NS\":[\"1\",\"2.5\",\"-3\"]}") != NULL);
  CHECK(strstr(t1, "\"n\":{\"N\":\"-12.50\"}") != NULL);
  CHECK(strstr(t1, "\"s\":{\"S\":\"h\xc3\xa9llo\"}") != NULL);
  CHECK(strstr(t1, "\"f\":{\"BOOL\":false}") != NULL);
  CHECK(strstr(t1, "\"e\":{\"M\":{}}") != NULL);
  j = cJSON_Parse(p1);
  CHECK_MSG(j != NULL, "plain JSON does not parse: %s", p1);
  cJSON_Delete(j);
  free(t1);
  free(p1);
  ddb_item_unref(it);
  ddb_item_unref(it2);
}

static void test_key_encode(void) {
  static const char *const k2[] = {"PK", "SK"};
  static const char *const k1[] = {"PK"};
  static const char *const kb[] = {"bin"};
  static const char *const kbad[] = {"PK", "flag"};
  static const char *const kmiss[] = {"PK", "nope"};
  ddb_item *it = decode("{\"SK\":{\"S\":\"s1\"},\"x\":{\"S\":\"y\"},"
                        "\"PK\":{\"S\":\"u#1\"},\"flag\":{\"BOOL\":true},"
                        "\"bin\":{\"B\":\"AQ==\"}}",
                        NULL);
  ddb_buf b;
  if(!CHECK(it != NULL))
    return;
  ddb_buf_init(&b, 1024);
  CHECK_INT(ddb_key_encode(it, k2, 2, &b), 0);
  CHECK_MEM(b.p, b.len, "\x02PKS\x03u#1\x02SKS\x02s1", 15);
  ddb_buf_reset(&b);
  CHECK_INT(ddb_key_encode(it, k1, 1, &b), 0);
  CHECK_MEM(b.p, b.len, "\x02PKS\x03u#1", 8);
  ddb_buf_reset(&b);
  CHECK_INT(ddb_key_encode(it, kb, 1, &b), 0);
  CHECK_MEM(b.p, b.len,
            "\x03"
            "binB\x04"
            "AQ==",
            10);
  ddb_buf_reset(&b);
  CHECK_INT(ddb_key_encode(it, kbad, 2, &b), -1); /* not a key type */
  ddb_buf_reset(&b);
  CHECK_INT(ddb_key_encode(it, kmiss, 2, &b), -1);
  ddb_buf_free(&b);
  /* a full buffer is an error */
  ddb_buf_init(&b, 5);
  CHECK_INT(ddb_key_encode(it, k2, 2, &b), -1);
  ddb_buf_free(&b);
  ddb_item_unref(it);
}

/* N keys: every spelling of one value is one key. */
static void test_key_encode_numbers(void) {
  static const char *const k[] = {"n"};
  static const char *const same[] = {"{\"n\":{\"N\":\"1.5\"}}",
                                     "{\"n\":{\"N\":\"1.50\"}}",
                                     "{\"n\":{\"N\":\"15E-1\"}}"};
  ddb_buf b[3];
  size_t i;
  ddb_item *it;
  for(i = 0; i < 3; i++) {
    ddb_buf_init(&b[i], 256);
    it = decode(same[i], NULL);
    CHECK(it && ddb_key_encode(it, k, 1, &b[i]) == 0);
    ddb_item_unref(it);
  }
  CHECK_MEM(b[0].p, b[0].len,
            "\x01nN\x05"
            "15e-1",
            9);
  CHECK_MEM(b[1].p, b[1].len, b[0].p, b[0].len);
  CHECK_MEM(b[2].p, b[2].len, b[0].p, b[0].len);
  ddb_buf_reset(&b[1]);
  it = decode("{\"n\":{\"N\":\"1.51\"}}", NULL);
  CHECK(it && ddb_key_encode(it, k, 1, &b[1]) == 0);
  CHECK(b[1].len != b[0].len || memcmp(b[1].p, b[0].p, b[0].len) != 0);
  ddb_item_unref(it);
  for(i = 0; i < 3; i++)
    ddb_buf_free(&b[i]);
}

static void test_item_from_avs(void) {
  ddb_av v[2];
  ddb_item *it;
  char pk[] = "user#1", sk[] = "12.5";
  char *s;
  v[0] = mkav(DDB_S, pk);
  v[0].name = "PK";
  v[1] = mkav(DDB_N, sk);
  v[1].name = "SK";
  it = ddb_item_from_avs(v, 2);
  if(!CHECK(it != NULL))
    return;
  /* a copy: changing the inputs does not change the item */
  pk[0] = 'X';
  sk[0] = '9';
  CHECK_INT(it->refs, 1);
  CHECK_INT(it->root.type, DDB_M);
  CHECK_INT(it->root.n, 2);
  CHECK(av_within(it, &it->root));
  CHECK_STR(it->root.kids[0].name, "PK");
  CHECK_INT(it->root.kids[0].name_len, 2);
  CHECK_STR(it->root.kids[0].text, "user#1");
  CHECK_INT(it->root.kids[0].n, 6);
  CHECK_INT(it->root.kids[1].type, DDB_N);
  CHECK_STR(it->root.kids[1].text, "12.5");
  CHECK(ddb_item_get(it, "SK") == &it->root.kids[1]);
  s = typed(it);
  CHECK_STR(s, "{\"PK\":{\"S\":\"user#1\"},\"SK\":{\"N\":\"12.5\"}}");
  free(s);
  ddb_item_unref(it);
  /* text is copied by length, not up to a NUL */
  v[0] = mkav(DDB_S, "abcdef");
  v[0].n = 3;
  v[0].name = "k";
  it = ddb_item_from_avs(v, 1);
  CHECK(it && it->root.n == 1);
  if(it)
    CHECK_STR(it->root.kids[0].text, "abc");
  ddb_item_unref(it);
  it = ddb_item_from_avs(v, 0);
  CHECK(it && it->root.n == 0);
  ddb_item_unref(it);
}

/* Runs under valgrind/ASan: every reference is dropped exactly once. */
static void test_refcount(void) {
  ddb_item *it = decode("{\"a\":{\"S\":\"x\"}}", NULL), *it2;
  ddb_page *pg;
  if(!CHECK(it != NULL))
    return;
  CHECK(ddb_item_ref(it) == it);
  CHECK_INT(it->refs, 2);
  ddb_item_unref(it);
  CHECK_INT(it->refs, 1);
  CHECK(ddb_item_ref(NULL) == NULL);
  ddb_item_unref(NULL);
  CHECK(ddb_page_ref(NULL) == NULL);
  ddb_page_unref(NULL);

  /* a page owns its items and last key; readers may keep items longer */
  it2 = decode("{\"k\":{\"N\":\"1\"}}", NULL);
  pg = calloc(1, sizeof(*pg));
  if(!CHECK(pg != NULL && it2 != NULL)) {
    free(pg);
    ddb_item_unref(it);
    ddb_item_unref(it2);
    return;
  }
  pg->refs = 1;
  pg->n_items = 2;
  pg->items = malloc(2 * sizeof(ddb_item *));
  pg->items[0] = ddb_item_ref(it);
  pg->items[1] = it2; /* the page's only reference */
  pg->last_key = ddb_item_ref(it2);
  CHECK(ddb_page_ref(pg) == pg);
  CHECK_INT(pg->refs, 2);
  ddb_page_unref(pg);
  CHECK_INT(pg->refs, 1);
  CHECK_INT(it2->refs, 2);
  ddb_page_unref(pg); /* frees the page, it2, and one reference of it */
  CHECK_INT(it->refs, 1);
  CHECK_STR(it->root.kids[0].text, "x");
  ddb_item_unref(it);
}

const tap_test tap_item_tests[] = {
    {"client: item decode, every type", test_item_decode_types},
    {"client: item decode rejects malformed AttributeValues",
     test_item_decode_rejects},
    {"client: item decode depth limit", test_item_decode_depth},
    {"client: ddb_av_to_json", test_av_to_json},
    {"client: typed JSON round trip", test_typed_json},
    {"client: ddb_key_encode", test_key_encode},
    {"client: ddb_key_encode, numbers in canonical form",
     test_key_encode_numbers},
    {"client: ddb_item_from_avs", test_item_from_avs},
    {"client: item and page reference counts", test_refcount},
    {NULL, NULL}};
