/*
** test_json.c -- unit tests of JSON text: ddb_jv's tokens with their
** exact bytes (client/jsonval.c), and items from plain JSON over a typed
** hint and from typed JSON, with what each refuses, naming where
** (client/json.c).  No network.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../client/ddb_client_int.h"
#include "helpers.h"
#include "tap.h"

/* ddb_jv: a JSON text as tokens, every value with its exact bytes. */
static void test_jv(void) {
  static const char text[] =
      " [[\"p0\\u0000x\", 12345678901234567890123456789012345678],"
      " {\"a\": true, \"b\": [null, false]}, \"\\u00e9\"] ";
  ddb_jv *j = NULL;
  size_t n = 0;
  const char *z;
  char *str;
  uint32_t e1, e2, e3;
  CHECK_INT(ddb_jv_parse(text, strlen(text), &j), DDB_OK);
  if(!CHECK(j != NULL))
    return;
  CHECK_INT(ddb_jv_type_of(j, 0), DDB_JV_ARRAY);
  CHECK_INT(ddb_jv_count(j, 0), 3);
  e1 = 1;
  CHECK_INT(ddb_jv_type_of(j, e1), DDB_JV_ARRAY);
  CHECK_INT(ddb_jv_count(j, e1), 2);
  str = ddb_jv_string(j, e1 + 1, &n);
  CHECK_MEM(str, n, "p0\0x", 4); /* \u0000 kept: 4 bytes, not "p0" */
  free(str);
  z = ddb_jv_raw(j, ddb_jv_next(j, e1 + 1), &n);
  CHECK_MEM(z, n, "12345678901234567890123456789012345678", 38);
  CHECK_INT(ddb_jv_type_of(j, ddb_jv_next(j, e1 + 1)), DDB_JV_NUMBER);
  e2 = ddb_jv_next(j, e1);
  CHECK_INT(ddb_jv_type_of(j, e2), DDB_JV_OBJECT);
  CHECK_INT(ddb_jv_count(j, e2), 2);
  CHECK_INT(ddb_jv_type_of(j, e2 + 2), DDB_JV_TRUE);
  CHECK_INT(ddb_jv_type_of(j, e2 + 4), DDB_JV_ARRAY);
  CHECK_INT(ddb_jv_type_of(j, e2 + 5), DDB_JV_NULL);
  CHECK_INT(ddb_jv_type_of(j, e2 + 6), DDB_JV_FALSE);
  e3 = ddb_jv_next(j, e2);
  str = ddb_jv_string(j, e3, &n);
  CHECK_MEM(str, n, "\xc3\xa9", 2);
  free(str);
  CHECK_INT(ddb_jv_next(j, e3), ddb_jv_next(j, 0));
  ddb_jv_free(j);
  CHECK_INT(ddb_jv_parse("[1] x", 5, &j), DDB_ERR_INPUT);
  CHECK(j == NULL);
  CHECK_INT(ddb_jv_parse("[1,", 3, &j), DDB_ERR_INPUT);
  CHECK_INT(ddb_jv_parse("[\"\\ud800\"]", 10, &j), DDB_ERR_INPUT);
  CHECK_INT(ddb_jv_parse("", 0, &j), DDB_ERR_INPUT);
  ddb_jv_free(NULL);
}

/* ------------------------------------------------------------------------
** Items from JSON text (client/json.c)
*/

/* The typed JSON of the plain JSON plain written over the item hint (typed
** JSON), or the error message; malloc'ed. */
static char *over_hint(const char *plain_json, const char *hint_json) {
  ddb_item *hint = NULL, *it = NULL;
  ddb_error e;
  char *out;
  ddb_error_clear(&e);
  if(ddb_item_from_typed_json(hint_json, strlen(hint_json), &hint, &e))
    return strdup(e.message);
  if(ddb_item_from_json(plain_json, strlen(plain_json), hint, &it, &e))
    out = strdup(e.message);
  else
    out = typed(it);
  ddb_item_unref(it);
  ddb_item_unref(hint);
  return out;
}

/* The message of typed JSON json's refusal, or "accepted"; malloc'ed. */
static char *typed_refusal(const char *json) {
  ddb_item *it = NULL;
  ddb_error e;
  ddb_error_clear(&e);
  if(ddb_item_from_typed_json(json, strlen(json), &it, &e) == DDB_OK) {
    ddb_item_unref(it);
    return strdup("accepted");
  }
  return strdup(e.message);
}

static void test_json_sets_over_hints(void) {
  static const struct {
    const char *plain, *hint, *want;
  } c[] = {
      /* distinct elements keep the set, in any order */
      {"{\"s\":[\"y\",\"x\"]}", "{\"s\":{\"SS\":[\"x\",\"y\"]}}",
       "{\"s\":{\"SS\":[\"y\",\"x\"]}}"},
      /* an element twice cannot be a set: the list the plain rules make,
      ** whatever the length */
      {"{\"s\":[\"y\",\"y\"]}", "{\"s\":{\"SS\":[\"x\",\"y\"]}}",
       "{\"s\":{\"L\":[{\"S\":\"y\"},{\"S\":\"y\"}]}}"},
      {"{\"s\":[\"y\",\"z\",\"y\"]}", "{\"s\":{\"SS\":[\"x\",\"y\"]}}",
       "{\"s\":{\"L\":[{\"S\":\"y\"},{\"S\":\"z\"},{\"S\":\"y\"}]}}"},
      /* escapes compare decoded: "\u0079" is "y" */
      {"{\"s\":[\"y\",\"\\u0079\"]}", "{\"s\":{\"SS\":[\"x\",\"y\"]}}",
       "{\"s\":{\"L\":[{\"S\":\"y\"},{\"S\":\"y\"}]}}"},
      /* numbers by value: 1 and 1.0 are one number */
      {"{\"n\":[1,1.0]}", "{\"n\":{\"NS\":[\"1\",\"2\"]}}",
       "{\"n\":{\"L\":[{\"N\":\"1\"},{\"N\":\"1.0\"}]}}"},
      {"{\"n\":[1,10]}", "{\"n\":{\"NS\":[\"1\",\"2\"]}}",
       "{\"n\":{\"NS\":[\"1\",\"10\"]}}"},
      /* binaries by their bytes; a BS's strings become S */
      {"{\"b\":[\"AAE=\",\"AAE=\"]}", "{\"b\":{\"BS\":[\"AAE=\",\"AAI=\"]}}",
       "{\"b\":{\"L\":[{\"S\":\"AAE=\"},{\"S\":\"AAE=\"}]}}"},
      {"{\"b\":[\"AAE=\",\"AAI=\"]}", "{\"b\":{\"BS\":[\"AAI=\"]}}",
       "{\"b\":{\"BS\":[\"AAE=\",\"AAI=\"]}}"},
      /* inside a map too */
      {"{\"m\":{\"s\":[\"a\",\"a\"]}}",
       "{\"m\":{\"M\":{\"s\":{\"SS\":[\"a\"]}}}}",
       "{\"m\":{\"M\":{\"s\":{\"L\":[{\"S\":\"a\"},{\"S\":\"a\"}]}}}}"},
      /* "" over a B is the empty binary, not an empty string */
      {"{\"b\":\"\",\"s\":\"\"}", "{\"b\":{\"B\":\"\"},\"s\":{\"S\":\"\"}}",
       "{\"b\":{\"B\":\"\"},\"s\":{\"S\":\"\"}}"},
      {"{\"b\":\"\"}", "{\"b\":{\"B\":\"AAE=\"}}", "{\"b\":{\"B\":\"\"}}"},
      {"{\"b\":[\"\",\"AAE=\"]}", "{\"b\":{\"BS\":[\"\",\"AAE=\"]}}",
       "{\"b\":{\"BS\":[\"\",\"AAE=\"]}}"},
  };
  size_t i;
  for(i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
    char *got = over_hint(c[i].plain, c[i].hint);
    CHECK_MSG(got && strcmp(got, c[i].want) == 0, "%s over %s: got %s",
              c[i].plain, c[i].hint, got ? got : "(null)");
    free(got);
  }
}

static void test_json_typed_refusals(void) {
  static const struct {
    const char *json, *want;
  } c[] = {
      {"{\"x\":{\"N\":\"1E+126\"}}",
       "x: number '1E+126' out of DynamoDB's range or precision (38 digits, "
       "1E-130 to 9.99E+125)"},
      {"{\"x\":{\"N\":\"9.99E+125\"}}", "accepted"},
      {"{\"x\":{\"N\":\"1E-131\"}}",
       "x: number '1E-131' out of DynamoDB's range or precision (38 digits, "
       "1E-130 to 9.99E+125)"},
      {"{\"x\":{\"N\":\"123456789012345678901234567890123456789\"}}",
       "x: number '123456789012345678901234567890123456789' out of "
       "DynamoDB's range or precision (38 digits, 1E-130 to 9.99E+125)"},
      {"{\"m\":{\"M\":{\"l\":{\"L\":[{\"N\":\"1\"},{\"NS\":[\"2\",\"1e200\"]}]"
       "}}}}",
       "m.l[1][1]: number '1e200' out of DynamoDB's range or precision (38 "
       "digits, 1E-130 to 9.99E+125)"},
      {"{\"s\":{\"SS\":[\"a\",\"b\",\"a\"]}}",
       "s: 'a' is in the SS twice (a set's elements must differ)"},
      {"{\"n\":{\"NS\":[\"1\",\"10E-1\"]}}",
       "n: '10E-1' is in the NS twice (a set's elements must differ)"},
      {"{\"b\":{\"BS\":[\"AAE=\",\"AAI=\",\"AAE=\"]}}",
       "b: 'AAE=' is in the BS twice (a set's elements must differ)"},
      {"{\"s\":{\"SS\":[]}}",
       "s: a set must not be empty (DynamoDB holds no empty SS)"},
      {"{\"b\":{\"B\":\"not base64!\"}}", "b: binary value is not base64"},
      {"{\"b\":{\"BS\":[\"AAE=\",\"x\"]}}",
       "b[1]: binary value is not base64"},
      {"{\"b\":{\"B\":\"\"},\"bs\":{\"BS\":[\"\"]}}", "accepted"},
      {"{\"a\":{\"S\":\"x\"},\"a\":{\"S\":\"y\"}}",
       "duplicate attribute name 'a'"},
  };
  size_t i;
  for(i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
    char *got = typed_refusal(c[i].json);
    CHECK_MSG(got && strcmp(got, c[i].want) == 0, "%s: got %s", c[i].json,
              got ? got : "(null)");
    free(got);
  }
}

/* Plain JSON refused, each error naming the attribute path where it is:
** syntax (where the tokenizer stopped), numbers DynamoDB cannot hold, names,
** nesting.  Strict RFC 8259 as the answers are read: 007 and 1. are no
** JSON numbers (SQLite's json_valid says the same). */
static void test_json_plain_refusals(void) {
  static const struct {
    const char *plain, *hint, *want;
  } c[] = {
      {"{\"a\": }", "{}", "a: not valid JSON"},
      {"{\"m\": {\"l\": [1, 2, ]}}", "{}", "m.l[2]: not valid JSON"},
      {"{\"a\": {\"b\": [1, {\"c\": tru}]}}", "{}",
       "a.b[1].c: not valid JSON"},
      {"{\"m\": {\"s\": \"\\x\"}}", "{}", "m.s: bad string"},
      {"{\"m\": {\"s\": \"\\uDC00\"}}", "{}", "m.s: bad string"},
      {"{\"a\": 007}", "{}", "a: not valid JSON"},
      {"{\"a\": 1.}", "{}", "a: not valid JSON"},
      {"{\"a\": +1}", "{}", "a: not valid JSON"},
      {"{\"a\": 1", "{}", "a: not valid JSON"},
      {"{\"a\": 1, ", "{}", "not valid JSON"},
      {"{\"a\": [1 2]}", "{}", "a[0]: not valid JSON"},
      {"[1]", "{}", "item is not a JSON object"},
      {"  ", "{}", "item is not a JSON object"},
      {"{\"a\": 1} x", "{}", "text after the JSON object"},
      {"{\"\": 1}", "{}", "empty attribute name"},
      {"{\"m\": {\"\": 1}}", "{}", "m: empty attribute name"},
      {"{\"l\": [1, 1e200]}", "{}",
       "l[1]: number out of DynamoDB's range or precision (38 digits, "
       "1E-130 to 9.99E+125)"},
      {"{\"n\": [1, 1e-131]}", "{\"n\":{\"NS\":[\"1\"]}}",
       "n[1]: number out of DynamoDB's range or precision (38 digits, "
       "1E-130 to 9.99E+125)"},
      {"{\"P\\u004b\": 1e200}", "{}",
       "P\\u004b: number out of DynamoDB's range or precision (38 digits, "
       "1E-130 to 9.99E+125)"},
      {"{\"a\": 1, \"a\": 2}", "{}", "duplicate attribute name 'a'"},
      {"{\"P\\u004b\": 1, \"PK\": 2}", "{}", "duplicate attribute name 'PK'"},
      /* over a set, an element twice: the list, then checked as a list */
      {"{\"m\": {\"s\": [\"a\", \"a\"], \"s\": 1}}",
       "{\"m\":{\"M\":{\"s\":{\"SS\":[\"a\"]}}}}",
       "m: duplicate attribute name 's'"},
      /* what is accepted at the edges */
      {"{\"a\": -0, \"b\": 1E-130, \"c\": 9.99E+125, \"d\": [], \"e\": {}}",
       "{}",
       "{\"a\":{\"N\":\"-0\"},\"b\":{\"N\":\"1E-130\"},\"c\":{\"N\":\"9.99E+"
       "125\"},\"d\":{\"L\":[]},\"e\":{\"M\":{}}}"},
      {"{\"s\": []}", "{\"s\":{\"SS\":[\"a\"]}}", "{\"s\":{\"L\":[]}}"},
  };
  char deep[200], want[300];
  size_t i;
  int d;
  for(i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
    char *got = over_hint(c[i].plain, c[i].hint);
    CHECK_MSG(got && strcmp(got, c[i].want) == 0, "%s over %s: got %s",
              c[i].plain, c[i].hint, got ? got : "(null)");
    free(got);
  }
  /* 32 levels of maps are taken, 33 are not, named at the 33rd */
  for(d = 32; d <= 33; d++) {
    size_t n = 0, w = 0;
    char *got;
    int k;
    for(k = 0; k < d; k++)
      n += (size_t)snprintf(deep + n, sizeof(deep) - n, "{\"a\":");
    n += (size_t)snprintf(deep + n, sizeof(deep) - n, "1");
    for(k = 0; k < d; k++)
      deep[n++] = '}';
    deep[n] = 0;
    for(k = 0; k < d; k++)
      w += (size_t)snprintf(want + w, sizeof(want) - w, "%sa", k ? "." : "");
    snprintf(want + w, sizeof(want) - w, ": nested too deeply");
    got = over_hint(deep, "{}");
    if(d == 32)
      CHECK_MSG(got && strncmp(got, "{\"a\":{\"M\":", 10) == 0,
                "32 levels: got %s", got ? got : "(null)");
    else
      CHECK_MSG(got && strcmp(got, want) == 0, "33 levels: got %s, want %s",
                got ? got : "(null)", want);
    free(got);
  }
}

const tap_test tap_json_tests[] = {
    {"client: plain JSON refused, naming the path (syntax, numbers, names, "
     "depth)",
     test_json_plain_refusals},
    {"client: ddb_jv, JSON tokens with exact bytes", test_jv},
    {"client: plain JSON over sets and binaries (an element twice: L; \"\" "
     "over a B: B)",
     test_json_sets_over_hints},
    {"client: typed JSON DynamoDB would refuse is an error naming where",
     test_json_typed_refusals},
    {NULL, NULL}};
