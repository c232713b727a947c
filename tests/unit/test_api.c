/*
** test_api.c -- unit tests of api/ (the public C API of dyndb.h): the
** typed tree of items and values, JSON in both forms, builders, numbers
** and binaries, error codes and their mapping, key checks, client options.
** No network: nothing here sends a request.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../api/api_int.h"
#include "env_fixtures.h"
#include "tap.h"

/* ------------------------------------------------------------------------
** Helpers
*/

/* Parse JSON (plain, or typed with DYN_JSON_TYPED); NULL on failure. */
static dyn_item *parse(const char *json, int flags) {
  dyn_item *it = NULL;
  dyn_error err;
  if(dyn_item_from_json(json, flags, &it, &err) != DYN_OK)
    tap_diag("dyn_item_from_json failed: %s", err.message);
  return it;
}

/* JSON text of a value, compared and freed. */
static int check_json(const dyn_value *v, int flags, const char *want,
                      const char *file, int line) {
  char *got = dyn_value_to_json(v, flags);
  int ok = tap_check_str(got, want, file, line, "json");
  dyn_free(got);
  return ok;
}
#define CHECK_JSON(v, flags, want)                                            \
  check_json((v), (flags), (want), __FILE__, __LINE__)

static int check_item_json(const dyn_item *it, int flags, const char *want,
                           const char *file, int line) {
  char *got = dyn_item_to_json(it, flags);
  int ok = tap_check_str(got, want, file, line, "item json");
  dyn_free(got);
  return ok;
}
#define CHECK_ITEM_JSON(it, flags, want)                                      \
  check_item_json((it), (flags), (want), __FILE__, __LINE__)

/* The expected failure of dyn_item_from_json: code, and a message that
** contains `part`. */
static void check_bad_json(const char *json, int flags, dyn_code want,
                           const char *part, const char *file, int line) {
  dyn_item *it = (dyn_item *)1;
  dyn_error err;
  dyn_code rc = dyn_item_from_json(json, flags, &it, &err);
  tap_check(rc == want, file, line, "%s: got %s, want %s", json,
            dyn_code_name(rc), dyn_code_name(want));
  tap_check(it == NULL, file, line, "%s: *out not NULL", json);
  tap_check(err.code == want, file, line, "%s: err.code %s", json,
            dyn_code_name(err.code));
  tap_check(part == NULL || strstr(err.message, part) != NULL, file, line,
            "%s: message '%s' lacks '%s'", json, err.message,
            part ? part : "");
}
#define CHECK_BAD_JSON(json, flags, want, part)                               \
  check_bad_json((json), (flags), (want), (part), __FILE__, __LINE__)

/* ------------------------------------------------------------------------
** The typed tree
*/
static void test_tree_plain(void) {
  dyn_item *it = parse("{\"PK\":\"CUSTOMER#alice\",\"total\":30,\"ok\":true,"
                       "\"none\":null,\"tags\":[\"a\",2,false],"
                       "\"addr\":{\"city\":\"Oslo\",\"zip\":\"0150\"}}",
                       0);
  const dyn_value *root, *v, *addr;
  size_t len = 99;
  if(!CHECK(it != NULL))
    return;
  root = dyn_item_root(it);
  CHECK_INT(dyn_value_type(root), DYN_M);
  CHECK_INT(dyn_value_count(root), 6);
  CHECK_STR(dyn_value_name(dyn_value_at(root, 0), &len), "PK");
  CHECK_INT(len, 2);
  CHECK_STR(dyn_value_name(dyn_value_at(root, 5), NULL), "addr");
  CHECK(dyn_value_at(root, 6) == NULL);

  v = dyn_item_get(it, "PK");
  CHECK_INT(dyn_value_type(v), DYN_S);
  CHECK_STR(dyn_type_name(dyn_value_type(v)), "S");
  CHECK_STR(dyn_value_text(v, &len), "CUSTOMER#alice");
  CHECK_INT(len, 14);
  CHECK(v == dyn_value_get(root, "PK"));

  v = dyn_item_get(it, "total");
  CHECK_INT(dyn_value_type(v), DYN_N);
  CHECK_STR(dyn_value_text(v, NULL), "30");
  CHECK_INT(dyn_value_bool(v), -1);

  v = dyn_item_get(it, "ok");
  CHECK_INT(dyn_value_type(v), DYN_BOOL);
  CHECK_INT(dyn_value_bool(v), 1);
  CHECK(dyn_value_text(v, &len) == NULL);
  CHECK_INT(len, 0);

  CHECK_INT(dyn_value_type(dyn_item_get(it, "none")), DYN_NULL);

  v = dyn_item_get(it, "tags");
  CHECK_INT(dyn_value_type(v), DYN_L);
  CHECK_INT(dyn_value_count(v), 3);
  CHECK_INT(dyn_value_type(dyn_value_at(v, 0)), DYN_S);
  CHECK_INT(dyn_value_type(dyn_value_at(v, 1)), DYN_N);
  CHECK_INT(dyn_value_bool(dyn_value_at(v, 2)), 0);
  CHECK(dyn_value_name(dyn_value_at(v, 0), &len) == NULL);
  CHECK_INT(len, 0);
  CHECK(dyn_value_get(v, "a") == NULL); /* not a map */

  addr = dyn_item_get(it, "addr");
  CHECK_INT(dyn_value_type(addr), DYN_M);
  CHECK_STR(dyn_value_text(dyn_value_get(addr, "zip"), NULL), "0150");
  CHECK(dyn_value_get(addr, "country") == NULL);
  CHECK(dyn_item_get(it, "missing") == NULL);

  CHECK_ITEM_JSON(it, 0,
                  "{\"PK\":\"CUSTOMER#alice\",\"total\":30,\"ok\":true,"
                  "\"none\":null,\"tags\":[\"a\",2,false],"
                  "\"addr\":{\"city\":\"Oslo\",\"zip\":\"0150\"}}");
  CHECK_JSON(addr, DYN_JSON_TYPED,
             "{\"M\":{\"city\":{\"S\":\"Oslo\"},\"zip\":{\"S\":\"0150\"}}}");
  dyn_item_unref(it);
}

static void test_tree_typed(void) {
  static const char typed[] =
      "{\"PK\":{\"S\":\"x\"},\"ss\":{\"SS\":[\"a\",\"b\"]},"
      "\"ns\":{\"NS\":[\"1\",\"2.50\"]},\"bin\":{\"B\":\"aGk=\"},"
      "\"bs\":{\"BS\":[\"AA==\",\"AQI=\"]},"
      "\"l\":{\"L\":[{\"NULL\":true},{\"M\":{\"k\":{\"BOOL\":false}}}]}}";
  dyn_item *it = parse(typed, DYN_JSON_TYPED);
  const dyn_value *v;
  if(!CHECK(it != NULL))
    return;
  /* typed JSON round-trips exactly, in DynamoDB's order */
  CHECK_ITEM_JSON(it, DYN_JSON_TYPED, typed);
  /* plain JSON turns sets into arrays and binaries into base64 strings */
  CHECK_ITEM_JSON(it, 0,
                  "{\"PK\":\"x\",\"ss\":[\"a\",\"b\"],\"ns\":[1,2.50],"
                  "\"bin\":\"aGk=\",\"bs\":[\"AA==\",\"AQI=\"],"
                  "\"l\":[null,{\"k\":false}]}");
  v = dyn_item_get(it, "ss");
  CHECK_INT(dyn_value_type(v), DYN_SS);
  CHECK_INT(dyn_value_count(v), 2);
  CHECK_INT(dyn_value_type(dyn_value_at(v, 1)), DYN_S);
  CHECK_STR(dyn_value_text(dyn_value_at(v, 1), NULL), "b");
  v = dyn_item_get(it, "ns");
  CHECK_INT(dyn_value_type(v), DYN_NS);
  CHECK_STR(dyn_value_text(dyn_value_at(v, 1), NULL), "2.50");
  CHECK_INT(dyn_value_type(dyn_value_at(v, 1)), DYN_N);
  v = dyn_item_get(it, "bs");
  CHECK_INT(dyn_value_type(v), DYN_BS);
  CHECK_INT(dyn_value_type(dyn_value_at(v, 0)), DYN_B);
  v = dyn_item_get(it, "l");
  CHECK_INT(dyn_value_type(dyn_value_at(v, 0)), DYN_NULL);
  CHECK_INT(dyn_value_bool(dyn_value_get(dyn_value_at(v, 1), "k")), 0);
  dyn_item_unref(it);
}

static void test_numbers(void) {
  /* 38 significant digits: more than a double holds, kept exactly */
  dyn_item *it = parse("{\"big\":12345678901234567890123456789012345678,"
                       "\"i\":42,\"neg\":-7,\"e\":1e3,\"f\":1.5,"
                       "\"huge\":1e40,\"max\":9223372036854775807,"
                       "\"over\":9223372036854775808,\"min\":"
                       "-9223372036854775808,\"z\":-0.0,\"t\":1000.000}",
                       0);
  int64_t i = 1;
  double d = 0;
  if(!CHECK(it != NULL))
    return;
  CHECK_STR(dyn_value_text(dyn_item_get(it, "big"), NULL),
            "12345678901234567890123456789012345678");
  CHECK_INT(dyn_value_int64(dyn_item_get(it, "i"), &i), DYN_OK);
  CHECK_INT(i, 42);
  CHECK_INT(dyn_value_int64(dyn_item_get(it, "neg"), &i), DYN_OK);
  CHECK_INT(i, -7);
  CHECK_INT(dyn_value_int64(dyn_item_get(it, "e"), &i), DYN_OK);
  CHECK_INT(i, 1000);
  CHECK_INT(dyn_value_int64(dyn_item_get(it, "t"), &i), DYN_OK);
  CHECK_INT(i, 1000);
  CHECK_INT(dyn_value_int64(dyn_item_get(it, "z"), &i), DYN_OK);
  CHECK_INT(i, 0);
  CHECK_INT(dyn_value_int64(dyn_item_get(it, "max"), &i), DYN_OK);
  CHECK(i == INT64_MAX);
  CHECK_INT(dyn_value_int64(dyn_item_get(it, "min"), &i), DYN_OK);
  CHECK(i == INT64_MIN);
  CHECK_INT(dyn_value_int64(dyn_item_get(it, "over"), &i), DYN_ETYPE);
  CHECK_INT(i, 0);
  CHECK_INT(dyn_value_int64(dyn_item_get(it, "f"), &i), DYN_ETYPE);
  CHECK_INT(dyn_value_int64(dyn_item_get(it, "huge"), &i), DYN_ETYPE);
  CHECK_INT(dyn_value_int64(dyn_item_get(it, "big"), &i), DYN_ETYPE);
  CHECK_INT(dyn_value_int64(NULL, &i), DYN_ETYPE);
  CHECK_INT(dyn_value_int64(dyn_item_get(it, "i"), NULL), DYN_EMISUSE);
  CHECK_INT(dyn_value_double(dyn_item_get(it, "f"), &d), DYN_OK);
  CHECK(d == 1.5);
  CHECK_INT(dyn_value_double(dyn_item_get(it, "huge"), &d), DYN_OK);
  CHECK(d == 1e40);
  CHECK_INT(dyn_value_double(dyn_item_root(it), &d), DYN_ETYPE);
  /* compared by value, as DynamoDB compares them */
  CHECK(dyn_value_equal(dyn_item_get(it, "e"), dyn_item_get(it, "t")));
  CHECK(!dyn_value_equal(dyn_item_get(it, "e"), dyn_item_get(it, "i")));
  dyn_item_unref(it);

  CHECK_BAD_JSON("{\"n\":123456789012345678901234567890123456789}", 0,
                 DYN_EINPUT, "n");
  CHECK_BAD_JSON("{\"n\":1e126}", 0, DYN_EINPUT, NULL);
  CHECK_BAD_JSON("{\"n\":{\"N\":\"12x\"}}", DYN_JSON_TYPED, DYN_EINPUT,
                 "'12x' is not a DynamoDB number");
  CHECK_BAD_JSON("{\"m\":{\"M\":{\"deep\":{\"NS\":[\"1\",\"1e200\"]}}}}",
                 DYN_JSON_TYPED, DYN_EINPUT, "m.deep[1]");
}

static void test_binary(void) {
  dyn_item *it = parse("{\"b\":{\"B\":\"AAEC/w==\"},\"e\":{\"B\":\"\"},"
                       "\"s\":{\"S\":\"AAEC\"}}",
                       DYN_JSON_TYPED);
  void *p = NULL;
  size_t n = 99;
  if(!CHECK(it != NULL))
    return;
  CHECK_STR(dyn_value_text(dyn_item_get(it, "b"), NULL), "AAEC/w==");
  CHECK_INT(dyn_value_binary(dyn_item_get(it, "b"), &p, &n), DYN_OK);
  CHECK_MEM(p, n, "\x00\x01\x02\xff", 4);
  dyn_free(p);
  CHECK_INT(dyn_value_binary(dyn_item_get(it, "e"), &p, &n), DYN_OK);
  CHECK_INT(n, 0);
  dyn_free(p);
  CHECK_INT(dyn_value_binary(dyn_item_get(it, "s"), &p, &n), DYN_ETYPE);
  CHECK(p == NULL);
  CHECK_INT(n, 0);
  CHECK_INT(dyn_value_binary(dyn_item_get(it, "b"), NULL, &n), DYN_EMISUSE);
  dyn_item_unref(it);
  CHECK_BAD_JSON("{\"b\":{\"B\":\"not base64!\"}}", DYN_JSON_TYPED, DYN_EINPUT,
                 "b: binary value is not base64");
  CHECK_BAD_JSON("{\"s\":{\"SS\":[]}}", DYN_JSON_TYPED, DYN_EINPUT,
                 "set must not be empty");
}

static void test_json_errors(void) {
  dyn_item *it = (dyn_item *)1;
  CHECK_BAD_JSON("[1,2]", 0, DYN_EINPUT, "object");
  CHECK_BAD_JSON("{\"a\":1", 0, DYN_EINPUT, NULL);
  CHECK_BAD_JSON("{\"a\":1} x", 0, DYN_EINPUT, NULL);
  /* strings by the answer parser's rules (tape.c), the path named */
  CHECK_BAD_JSON("{\"a\":\"\\uD800\"}", 0, DYN_EINPUT, "a: bad string");
  CHECK_BAD_JSON("{\"a\":\"\\x\"}", 0, DYN_EINPUT, "a: bad string");
  CHECK_BAD_JSON("{\"a\":\"tab\there\"}", 0, DYN_EINPUT, "a: bad string");
  CHECK_BAD_JSON("{\"a\":{\"Q\":\"1\"}}", DYN_JSON_TYPED, DYN_EINPUT, "a");
  CHECK_BAD_JSON("{\"a\":1}", 0x100, DYN_EMISUSE, "flags");
  CHECK_INT(dyn_item_from_json(NULL, 0, &it, NULL), DYN_EMISUSE);
  CHECK(it == NULL);
  CHECK_INT(dyn_item_from_json("{}", 0, NULL, NULL), DYN_EMISUSE);
  /* an empty object is an empty item */
  it = parse("{}", 0);
  CHECK_INT(dyn_value_count(dyn_item_root(it)), 0);
  CHECK_ITEM_JSON(it, 0, "{}");
  dyn_item_unref(it);
}

static void test_null_safety(void) {
  size_t len = 5;
  CHECK(dyn_item_root(NULL) == NULL);
  CHECK(dyn_item_get(NULL, "a") == NULL);
  CHECK_INT(dyn_value_type(NULL), DYN_NONE);
  CHECK(dyn_value_name(NULL, &len) == NULL);
  CHECK_INT(len, 0);
  CHECK(dyn_value_text(NULL, NULL) == NULL);
  CHECK_INT(dyn_value_bool(NULL), -1);
  CHECK_INT(dyn_value_count(NULL), 0);
  CHECK(dyn_value_at(NULL, 0) == NULL);
  CHECK(dyn_value_get(NULL, "a") == NULL);
  CHECK(dyn_value_to_json(NULL, 0) == NULL);
  CHECK(dyn_item_to_json(NULL, 0) == NULL);
  CHECK(dyn_value_equal(NULL, NULL));
  CHECK(dyn_item_ref(NULL) == NULL);
  dyn_item_unref(NULL);
  dyn_free(NULL);
  dyn_client_free(NULL);
  dyn_iter_free(NULL);
  dyn_builder_free(NULL);
  CHECK_INT(dyn_iter_pages(NULL), 0);
  CHECK_STR(dyn_type_name(DYN_NONE), "");
  CHECK_STR(dyn_type_name((dyn_type)99), "");
  CHECK_STR(dyn_type_name(DYN_BS), "BS");
  CHECK(dyn_client_endpoint(NULL) == NULL);
}

static void test_refcount(void) {
  dyn_item *it = parse("{\"a\":\"x\"}", 0);
  dyn_item *again;
  const dyn_value *v;
  if(!CHECK(it != NULL))
    return;
  again = dyn_item_ref(it);
  CHECK(again == it);
  CHECK_INT(CITEM(it)->refs, 2);
  v = dyn_item_get(it, "a");
  dyn_item_unref(it);
  /* the other reference keeps the tree alive */
  CHECK_STR(dyn_value_text(v, NULL), "x");
  dyn_item_unref(again);
}

/* ------------------------------------------------------------------------
** Builders
*/
static void test_builder(void) {
  static const unsigned char bytes[] = {0, 1, 2, 0xff};
  dyn_builder *b = dyn_builder_new();
  dyn_item *it = NULL, *from = NULL;
  dyn_error err;
  if(!CHECK(b != NULL))
    return;
  CHECK_INT(dyn_builder_s(b, "PK", "CUSTOMER#\"carol\""), DYN_OK);
  CHECK_INT(dyn_builder_n(b, "total", "40.50"), DYN_OK);
  CHECK_INT(dyn_builder_int64(b, "i", INT64_MIN), DYN_OK);
  CHECK_INT(dyn_builder_double(b, "d", 0.1), DYN_OK);
  CHECK_INT(dyn_builder_b(b, "bin", bytes, sizeof(bytes)), DYN_OK);
  CHECK_INT(dyn_builder_bool(b, "ok", 7), DYN_OK);
  CHECK_INT(dyn_builder_null(b, "none"), DYN_OK);
  CHECK_INT(dyn_builder_begin(b, "tags", DYN_SS), DYN_OK);
  CHECK_INT(dyn_builder_s(b, NULL, "gift"), DYN_OK);
  CHECK_INT(dyn_builder_s(b, NULL, "red"), DYN_OK);
  CHECK_INT(dyn_builder_end(b), DYN_OK);
  CHECK_INT(dyn_builder_begin(b, "addr", DYN_M), DYN_OK);
  CHECK_INT(dyn_builder_s(b, "city", "Oslo"), DYN_OK);
  CHECK_INT(dyn_builder_begin(b, "lines", DYN_L), DYN_OK);
  CHECK_INT(dyn_builder_s(b, NULL, "Karl Johans gate 1"), DYN_OK);
  CHECK_INT(dyn_builder_begin(b, NULL, DYN_NS), DYN_OK);
  CHECK_INT(dyn_builder_int64(b, NULL, 1), DYN_OK);
  CHECK_INT(dyn_builder_double(b, NULL, 2.5), DYN_OK);
  CHECK_INT(dyn_builder_end(b), DYN_OK);
  CHECK_INT(dyn_builder_begin(b, NULL, DYN_M), DYN_OK);
  CHECK_INT(dyn_builder_end(b), DYN_OK); /* an empty map is fine */
  CHECK_INT(dyn_builder_end(b), DYN_OK);
  CHECK_INT(dyn_builder_end(b), DYN_OK);
  CHECK_INT(dyn_builder_finish(b, &it, &err), DYN_OK);
  CHECK_STR(err.message, "");
  if(!CHECK(it != NULL))
    return;
  CHECK_ITEM_JSON(
      it, DYN_JSON_TYPED,
      "{\"PK\":{\"S\":\"CUSTOMER#\\\"carol\\\"\"},\"total\":{\"N\":\"40.50\"},"
      "\"i\":{\"N\":\"-9223372036854775808\"},\"d\":{\"N\":\"0.1\"},"
      "\"bin\":{\"B\":\"AAEC/w==\"},\"ok\":{\"BOOL\":true},"
      "\"none\":{\"NULL\":true},\"tags\":{\"SS\":[\"gift\",\"red\"]},"
      "\"addr\":{\"M\":{\"city\":{\"S\":\"Oslo\"},\"lines\":{\"L\":["
      "{\"S\":\"Karl Johans gate 1\"},{\"NS\":[\"1\",\"2.5\"]},"
      "{\"M\":{}}]}}}}");
  /* the same item, from JSON, is equal value by value */
  from = parse(
      "{\"PK\":{\"S\":\"CUSTOMER#\\\"carol\\\"\"},\"total\":{\"N\":\"40.5\"},"
      "\"i\":{\"N\":\"-9223372036854775808\"},\"d\":{\"N\":\"0.10\"},"
      "\"bin\":{\"B\":\"AAEC/w==\"},\"ok\":{\"BOOL\":true},"
      "\"none\":{\"NULL\":true},\"tags\":{\"SS\":[\"red\",\"gift\"]},"
      "\"addr\":{\"M\":{\"lines\":{\"L\":[{\"S\":\"Karl Johans gate 1\"},"
      "{\"NS\":[\"2.5\",\"1\"]},{\"M\":{}}]},\"city\":{\"S\":\"Oslo\"}}}}",
      DYN_JSON_TYPED);
  CHECK(dyn_value_equal(dyn_item_root(it), dyn_item_root(from)));
  dyn_item_unref(from);
  dyn_item_unref(it);
}

/* DynamoDB's smallest magnitudes build, and the largest are refused. */
static void test_builder_number_edges(void) {
  dyn_builder *b = dyn_builder_new();
  dyn_item *it = NULL;
  dyn_error err;
  if(!CHECK(b != NULL))
    return;
  CHECK_INT(dyn_builder_n(b, "tiny", "1E-130"), DYN_OK);
  CHECK_INT(dyn_builder_double(b, "ntiny", -1e-130), DYN_OK);
  CHECK_INT(dyn_builder_double(b, "third", 0.3), DYN_OK);
  CHECK_INT(dyn_builder_finish(b, &it, &err), DYN_OK);
  if(CHECK(it != NULL))
    CHECK_ITEM_JSON(it, DYN_JSON_TYPED,
                    "{\"tiny\":{\"N\":\"1E-130\"},\"ntiny\":{\"N\":"
                    "\"-1e-130\"},\"third\":{\"N\":\"0.3\"}}");
  dyn_item_unref(it);
  b = dyn_builder_new();
  if(!CHECK(b != NULL))
    return;
  CHECK_INT(dyn_builder_double(b, "big", 1e126), DYN_EINPUT);
  dyn_builder_free(b);
}

/* N equality is by value at any length: 1E-130 as written and its
** 132-character expansion (DynamoDB Local returns the expansion; the
** cache holds the written form) are one number, and 1E-130 is not 0. */
static void test_number_equal_long(void) {
  char json[800];
  dyn_item *it;
  snprintf(json, sizeof(json),
           "{\"w\":{\"N\":\"1E-130\"},\"x\":{\"N\":\"0.%0129d1\"},"
           "\"z\":{\"N\":\"0\"},\"y\":{\"N\":\"-0.%0129d1\"},"
           "\"b\":{\"N\":\"99999999999999999999999999999999999999\"},"
           "\"c\":{\"N\":\"9.9999999999999999999999999999999999999E37\"},"
           "\"d\":{\"N\":\"99999999999999999999999999999999999998\"}}",
           0, 0);
  it = parse(json, DYN_JSON_TYPED);
  if(!CHECK(it != NULL))
    return;
  CHECK(dyn_value_equal(dyn_item_get(it, "w"), dyn_item_get(it, "x")));
  CHECK(!dyn_value_equal(dyn_item_get(it, "x"), dyn_item_get(it, "z")));
  CHECK(!dyn_value_equal(dyn_item_get(it, "x"), dyn_item_get(it, "y")));
  CHECK(dyn_value_equal(dyn_item_get(it, "b"), dyn_item_get(it, "c")));
  CHECK(!dyn_value_equal(dyn_item_get(it, "b"), dyn_item_get(it, "d")));
  dyn_item_unref(it);
}

static void test_builder_value(void) {
  dyn_item *src = parse("{\"m\":{\"x\":[1,{\"y\":\"z\"}]},\"s\":\"t\"}", 0);
  dyn_builder *b = dyn_builder_new();
  dyn_item *it = NULL;
  dyn_error err;
  if(!CHECK(src != NULL && b != NULL))
    return;
  CHECK_INT(dyn_builder_value(b, "copy", dyn_item_get(src, "m")), DYN_OK);
  CHECK_INT(dyn_builder_begin(b, "l", DYN_L), DYN_OK);
  CHECK_INT(dyn_builder_value(b, NULL, dyn_item_get(src, "s")), DYN_OK);
  CHECK_INT(dyn_builder_end(b), DYN_OK);
  dyn_item_unref(src); /* the built item holds copies, not references */
  CHECK_INT(dyn_builder_finish(b, &it, &err), DYN_OK);
  CHECK_ITEM_JSON(it, 0, "{\"copy\":{\"x\":[1,{\"y\":\"z\"}]},\"l\":[\"t\"]}");
  CHECK_STR(dyn_value_name(dyn_item_get(it, "copy"), NULL), "copy");
  CHECK(dyn_value_name(dyn_value_at(dyn_item_get(it, "l"), 0), NULL) == NULL);
  dyn_item_unref(it);
}

/* Build with one mistake: the call `bad` returns want, finish reports it
** with a message containing part. */
#define BUILDER_FAILS(calls, want, part)                                      \
  do {                                                                        \
    dyn_builder *b = dyn_builder_new();                                       \
    dyn_item *it = (dyn_item *)1;                                             \
    dyn_error err;                                                            \
    calls;                                                                    \
    CHECK_INT(dyn_builder_s(b, "after", "x"), want); /* sticky */             \
    CHECK_INT(dyn_builder_finish(b, &it, &err), want);                        \
    CHECK(it == NULL);                                                        \
    CHECK_MSG(strstr(err.message, part) != NULL, "message '%s' lacks '%s'",   \
              err.message, part);                                             \
  } while(0)

static void test_builder_errors(void) {
  BUILDER_FAILS(CHECK_INT(dyn_builder_s(b, NULL, "x"), DYN_EMISUSE),
                DYN_EMISUSE, "needs a name");
  BUILDER_FAILS(CHECK_INT(dyn_builder_s(b, "", "x"), DYN_EMISUSE), DYN_EMISUSE,
                "needs a name");
  BUILDER_FAILS(dyn_builder_s(b, "a", "x");
                CHECK_INT(dyn_builder_s(b, "a", "y"), DYN_EINPUT), DYN_EINPUT,
                "'a' given twice");
  BUILDER_FAILS(dyn_builder_begin(b, "l", DYN_L);
                CHECK_INT(dyn_builder_s(b, "named", "x"), DYN_EMISUSE),
                DYN_EMISUSE, "has no name");
  BUILDER_FAILS(dyn_builder_begin(b, "s", DYN_SS);
                CHECK_INT(dyn_builder_int64(b, NULL, 1), DYN_EMISUSE),
                DYN_EMISUSE, "SS set holds only");
  BUILDER_FAILS(dyn_builder_begin(b, "s", DYN_NS);
                CHECK_INT(dyn_builder_end(b), DYN_EINPUT), DYN_EINPUT,
                "set must not be empty");
  BUILDER_FAILS(CHECK_INT(dyn_builder_n(b, "n", "1.2.3"), DYN_EINPUT),
                DYN_EINPUT, "'1.2.3' is not a DynamoDB number");
  BUILDER_FAILS(CHECK_INT(dyn_builder_n(b, "n", "1e999"), DYN_EINPUT),
                DYN_EINPUT, "not a DynamoDB number");
  BUILDER_FAILS(CHECK_INT(dyn_builder_double(b, "d", 0.0 / 0.0), DYN_EINPUT),
                DYN_EINPUT, "not a finite number");
  BUILDER_FAILS(CHECK_INT(dyn_builder_end(b), DYN_EMISUSE), DYN_EMISUSE,
                "without a begin");
  BUILDER_FAILS(CHECK_INT(dyn_builder_begin(b, "x", DYN_S), DYN_EMISUSE),
                DYN_EMISUSE, "not a container");
  BUILDER_FAILS(CHECK_INT(dyn_builder_s(b, "s", NULL), DYN_EMISUSE),
                DYN_EMISUSE, "NULL string");
  BUILDER_FAILS(CHECK_INT(dyn_builder_value(b, "v", NULL), DYN_EMISUSE),
                DYN_EMISUSE, "NULL value");
  {
    /* an unended begin is reported by finish */
    dyn_builder *b = dyn_builder_new();
    dyn_item *it = NULL;
    dyn_error err;
    dyn_builder_begin(b, "m", DYN_M);
    CHECK_INT(dyn_builder_finish(b, &it, &err), DYN_EMISUSE);
    CHECK(strstr(err.message, "not ended") != NULL);
  }
  {
    /* 32 levels are fine, 33 are not */
    dyn_builder *b = dyn_builder_new();
    dyn_item *it = NULL;
    dyn_error err;
    int i;
    dyn_builder_begin(b, "m", DYN_L);
    for(i = 1; i < 32; i++)
      dyn_builder_begin(b, NULL, DYN_L);
    CHECK_INT(dyn_builder_begin(b, NULL, DYN_L), DYN_EINPUT);
    CHECK_INT(dyn_builder_finish(b, &it, &err), DYN_EINPUT);
  }
  /* a NULL builder (out of memory) fails every call, never crashes */
  {
    dyn_item *it = (dyn_item *)1;
    dyn_error err;
    CHECK_INT(dyn_builder_s(NULL, "a", "b"), DYN_ENOMEM);
    CHECK_INT(dyn_builder_begin(NULL, "a", DYN_M), DYN_ENOMEM);
    CHECK_INT(dyn_builder_end(NULL), DYN_ENOMEM);
    CHECK_INT(dyn_builder_b(NULL, "a", "x", 1), DYN_ENOMEM);
    CHECK_INT(dyn_builder_finish(NULL, &it, &err), DYN_ENOMEM);
    CHECK(it == NULL);
  }
  /* doubles: the shortest text that reads back */
  {
    dyn_builder *b = dyn_builder_new();
    dyn_item *it = NULL;
    dyn_builder_double(b, "a", 1.0 / 3);
    dyn_builder_double(b, "b", 1e100);
    dyn_builder_double(b, "c", -0.5);
    CHECK_INT(dyn_builder_finish(b, &it, NULL), DYN_OK);
    CHECK_ITEM_JSON(it, 0,
                    "{\"a\":0.3333333333333333,\"b\":1e+100,\"c\":-0.5}");
    dyn_item_unref(it);
  }
}

/* ------------------------------------------------------------------------
** Errors, codes, names
*/
static void test_codes(void) {
  ddb_error e;
  dyn_error err;
  int op;
  CHECK_STR(dyn_code_name(DYN_OK), "DYN_OK");
  CHECK_STR(dyn_code_name(DYN_ECONDITION), "DYN_ECONDITION");
  CHECK_STR(dyn_code_name(DYN_EMISUSE), "DYN_EMISUSE");
  CHECK_STR(dyn_code_name((dyn_code)77), "DYN_E?");
  CHECK_STR(dyn_version(), DYN_VERSION);
  CHECK_STR(dyn_op_name(DYN_OP_GET_ITEM), "GetItem");
  CHECK_STR(dyn_op_name(DYN_OP_TRANSACT_WRITE_ITEMS), "TransactWriteItems");
  CHECK_STR(dyn_op_name(DYN_OP_COUNT), "");
  for(op = 0; op < DYN_OP_COUNT; op++)
    CHECK(dyn_op_name((dyn_op)op)[0] != 0);

  /* the client layer's errors, mapped */
  ddb_error_clear(&e);
  e.code = DDB_ERR_SERVICE;
  e.http_status = 400;
  e.retries = 3;
  snprintf(e.type, sizeof(e.type), "ConditionalCheckFailedException");
  snprintf(e.message, sizeof(e.message), "%s: The conditional request failed",
           e.type);
  CHECK_INT(dyni_error(&err, &e), DYN_ECONDITION);
  CHECK_INT(err.code, DYN_ECONDITION);
  CHECK_INT(err.http_status, 400);
  CHECK_INT(err.retries, 3);
  CHECK_STR(err.type, "ConditionalCheckFailedException");
  CHECK_STR(err.message,
            "ConditionalCheckFailedException: The conditional request failed");
  snprintf(e.type, sizeof(e.type), "TransactionCanceledException");
  snprintf(e.message, sizeof(e.message),
           "TransactionCanceledException: item 2: ConditionalCheckFailed");
  CHECK_INT(dyni_error(&err, &e), DYN_ECONDITION);
  snprintf(e.message, sizeof(e.message),
           "TransactionCanceledException: item 1: TransactionConflict");
  CHECK_INT(dyni_error(&err, &e), DYN_ESERVICE);
  snprintf(e.type, sizeof(e.type), "ResourceNotFoundException");
  CHECK_INT(dyni_error(NULL, &e), DYN_ESERVICE);
  e.code = DDB_ERR_NETWORK;
  e.type[0] = 0;
  e.message[0] = 0;
  CHECK_INT(dyni_error(&err, &e), DYN_ENETWORK);
  CHECK_STR(err.message, "DYN_ENETWORK"); /* never an empty message */
  e.code = DDB_ERR_INPUT;
  CHECK_INT(dyni_error(&err, &e), DYN_EINPUT);
  e.code = DDB_ERR_CONFIG;
  CHECK_INT(dyni_error(&err, &e), DYN_ECONFIG);
  e.code = DDB_ERR_NOMEM;
  CHECK_INT(dyni_error(&err, &e), DYN_ENOMEM);
  e.code = DDB_ERR_PARSE;
  CHECK_INT(dyni_error(&err, &e), DYN_EPARSE);
}

/* ------------------------------------------------------------------------
** Key checks (against a hand-made table description)
*/
static void test_keys(void) {
  ddb_index idx;
  ddb_table_desc desc;
  dyn_table t;
  ddb_item *key = NULL;
  dyn_item *it;
  dyn_error err;

  memset(&idx, 0, sizeof(idx));
  memset(&desc, 0, sizeof(desc));
  memset(&t, 0, sizeof(t));
  idx.pk.name = "PK";
  idx.pk.type = DDB_S;
  idx.sk.name = "SK";
  idx.sk.type = DDB_N;
  desc.name = "T";
  desc.n_indexes = 1;
  desc.indexes = &idx;
  t.desc = &desc;
  t.key_names[0] = "PK";
  t.key_names[1] = "SK";
  t.n_key = 2;

  /* exactly the key: the same item comes back */
  it = parse("{\"SK\":5,\"PK\":\"a\"}", 0);
  CHECK_INT(dyni_key(&t, CITEM(it), "key", &key, &err), DYN_OK);
  CHECK(key == CITEM(it));
  ddb_item_unref(key);
  dyn_item_unref(it);
  /* a whole item: a new item of only the key, table key order */
  it = parse("{\"x\":1,\"SK\":5,\"PK\":\"a\",\"y\":[1]}", 0);
  CHECK_INT(dyni_key(&t, CITEM(it), "key", &key, &err), DYN_OK);
  CHECK(key != CITEM(it));
  CHECK_ITEM_JSON(PITEM(key), 0, "{\"PK\":\"a\",\"SK\":5}");
  ddb_item_unref(key);
  CHECK_INT(dyni_key(&t, CITEM(it), "key", NULL, &err), DYN_OK);
  dyn_item_unref(it);

#define KEY_FAILS(json, part)                                                 \
  do {                                                                        \
    dyn_item *k_ = parse(json, 0);                                            \
    ddb_item *out_ = (ddb_item *)1;                                           \
    CHECK_INT(dyni_key(&t, CITEM(k_), "key", &out_, &err), DYN_EINPUT);       \
    CHECK(out_ == NULL);                                                      \
    CHECK_MSG(strstr(err.message, part) != NULL, "'%s' lacks '%s'",           \
              err.message, part);                                             \
    dyn_item_unref(k_);                                                       \
  } while(0)
  KEY_FAILS("{\"PK\":\"a\"}", "missing key attribute 'SK' of table 'T'");
  KEY_FAILS("{\"PK\":\"a\",\"SK\":\"5\"}", "'SK' must be N, not S");
  KEY_FAILS("{\"PK\":\"\",\"SK\":5}", "'PK' is empty");
  KEY_FAILS("{\"PK\":1,\"SK\":5}", "'PK' must be S, not N");
#undef KEY_FAILS
  CHECK_INT(dyni_key(&t, NULL, "key", &key, &err), DYN_EMISUSE);
  CHECK(strstr(err.message, "key is NULL") != NULL);
}

/* ------------------------------------------------------------------------
** Clients: options and defaults (no request is sent)
*/
static void test_client_options(void) {
  char *saved[N_ENV];
  dyn_options o;
  dyn_client *c = (dyn_client *)1;
  dyn_error err;
  const dyn_item *item = NULL;
  dyn_item *got = NULL;

  env_save(saved);
  setenv("AWS_ACCESS_KEY_ID", "AKIDTEST", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
  setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);

  /* no region anywhere: a configuration error, never a crash */
  CHECK_INT(dyn_client_new(NULL, &c, &err), DYN_ECONFIG);
  CHECK(c == NULL);
  CHECK(err.message[0] != 0);

  /* every default from the environment */
  setenv("AWS_REGION", "eu-north-1", 1);
  CHECK_INT(dyn_client_new(NULL, &c, &err), DYN_OK);
  CHECK_STR(dyn_client_region(c), "eu-north-1");
  CHECK_STR(dyn_client_endpoint(c),
            "https://dynamodb.eu-north-1.amazonaws.com");
  CHECK(dyn_client_credential_source(c) != NULL);
  CHECK_INT(c->pol.item_ttl * 10, 3000);
  CHECK_INT(c->pol.query_ttl * 10, 3000);
  CHECK_INT(c->pol.consistent, 0);
  /* misuse is caught before anything is sent */
  CHECK_INT(dyn_get_item(c, "T", NULL, 0x40, &got, &err), DYN_EMISUSE);
  CHECK(strstr(err.message, "unknown flags") != NULL);
  CHECK_INT(dyn_put_item(c, "T", NULL, DYN_IF_EXISTS | DYN_IF_NOT_EXISTS, NULL,
                         &err),
            DYN_EMISUSE);
  CHECK_INT(dyn_delete_item(c, "T", NULL, DYN_IF_NOT_EXISTS, NULL, &err),
            DYN_EMISUSE);
  CHECK_INT(dyn_get_item(c, NULL, NULL, 0, &got, &err), DYN_EMISUSE);
  CHECK_INT(dyn_transact_write(c, "T", NULL, 0, &err), DYN_EINPUT);
  CHECK_INT(dyn_update_item(c, "T", NULL, NULL, NULL, 0, 0, NULL, &err),
            DYN_EINPUT);
  CHECK_INT(dyn_iter_next(NULL, &item, &err), DYN_EMISUSE);
  dyn_client_free(c);
  CHECK_INT(dyn_get_item(NULL, "T", NULL, 0, &got, &err), DYN_EMISUSE);

  /* options win; DYN_OFF turns caching and retries off */
  dyn_options_init(&o);
  o.region = "ap-south-1";
  o.endpoint = "http://127.0.0.1:1";
  o.item_ttl = DYN_OFF;
  o.query_ttl = 5;
  o.max_retries = DYN_OFF;
  CHECK_INT(dyn_client_new(&o, &c, &err), DYN_OK);
  CHECK_STR(dyn_client_region(c), "ap-south-1");
  CHECK_STR(dyn_client_endpoint(c), "http://127.0.0.1:1");
  CHECK_INT(c->pol.item_ttl, 0);
  CHECK_INT(c->pol.query_ttl, 5);
  dyn_client_free(c);

  /* out of range */
  o.item_ttl = -5;
  CHECK_INT(dyn_client_new(&o, &c, &err), DYN_EINPUT);
  CHECK(strstr(err.message, "item_ttl") != NULL);
  o.item_ttl = 0;
  o.max_retries = 101;
  CHECK_INT(dyn_client_new(&o, &c, &err), DYN_EINPUT);
  CHECK(strstr(err.message, "max_retries") != NULL);
  o.max_retries = 0;
  o.timeout = -1;
  CHECK_INT(dyn_client_new(&o, &c, &err), DYN_EINPUT);
  /* below a millisecond curl would read 0: no timeout at all */
  o.timeout = 0.0001;
  CHECK_INT(dyn_client_new(&o, &c, &err), DYN_EINPUT);
  CHECK(strstr(err.message, "0.001") != NULL);
  o.timeout = 0;
  o.connect_timeout = 0.0009;
  CHECK_INT(dyn_client_new(&o, &c, &err), DYN_EINPUT);
  o.connect_timeout = 0;
  o.timeout = -1;
  CHECK_INT(dyn_client_new(&o, NULL, &err), DYN_EMISUSE);

  env_restore(saved);
}

static void test_stats(void) {
  dyn_stats st;
  size_t old;
  memset(&st, 0xff, sizeof(st));
  dyn_stats_get(&st);
  CHECK(st.bytes <= st.bytes_max);
  CHECK(st.requests >= st.op_requests[DYN_OP_GET_ITEM]);
  dyn_stats_get(NULL);
  old = dyn_cache_set_budget(1024 * 1024);
  dyn_stats_get(&st);
  CHECK_INT(st.bytes_max, 1024 * 1024);
  CHECK_INT(dyn_cache_set_budget(old), 1024 * 1024);
  dyn_cache_clear();
}

const tap_test tap_api_tests[] = {
    {"api: typed tree from plain JSON", test_tree_plain},
    {"api: typed JSON, sets and binaries", test_tree_typed},
    {"api: numbers stay exact text; int64 and double", test_numbers},
    {"api: binary values", test_binary},
    {"api: JSON errors", test_json_errors},
    {"api: NULL is safe everywhere", test_null_safety},
    {"api: references", test_refcount},
    {"api: builder, every type and nesting", test_builder},
    {"api: builder, numbers at DynamoDB's edges", test_builder_number_edges},
    {"api: N equality by value at any length (1E-130 expanded)",
     test_number_equal_long},
    {"api: builder copies values", test_builder_value},
    {"api: builder mistakes are sticky", test_builder_errors},
    {"api: codes, names, error mapping", test_codes},
    {"api: key checks", test_keys},
    {"api: client options and defaults", test_client_options},
    {"api: stats and cache budget", test_stats},
    {NULL, NULL}};
