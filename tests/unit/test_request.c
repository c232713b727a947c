/*
** test_request.c -- unit tests of client/: request bodies (Query, Scan,
** attribute-name placeholders) and the text of errors (safe for a
** terminal; a server's message cut and escaped).  (INI files and
** settings: test_settings.c; the LastEvaluatedKey guard: test_lek.c.)  No
** network.
*/
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../client/ddb_client_int.h"
#include "helpers.h"
#include "tap.h"

/* ------------------------------------------------------------------------
** Request bodies
*/
static char *body_of(const ddb_read *r, ddb_result *rc, ddb_error *err) {
  ddb_buf b;
  ddb_buf_init(&b, 1 << 16);
  ddb_error_clear(err);
  *rc = ddb_read_body(r, &b, err);
  if(*rc) {
    ddb_buf_free(&b);
    return NULL;
  }
  return ddb_buf_take(&b, NULL);
}

static void test_read_body_query_ops(void) {
  static const struct {
    ddb_skop op;
    const char *kce;
  } v[] = {
      {DDB_SK_EQ, " AND #k1 = :v1"},
      {DDB_SK_LT, " AND #k1 < :v1"},
      {DDB_SK_LE, " AND #k1 <= :v1"},
      {DDB_SK_GT, " AND #k1 > :v1"},
      {DDB_SK_GE, " AND #k1 >= :v1"},
      {DDB_SK_BEGINS_WITH, " AND begins_with(#k1, :v1)"},
  };
  ddb_read r;
  ddb_result rc;
  ddb_error err;
  char want[1024], *s;
  size_t i;
  memset(&r, 0, sizeof(r));
  r.table = "T";
  r.pk_name = "PK";
  r.pk = mkav(DDB_S, "u1");
  s = body_of(&r, &rc, &err);
  CHECK_STR(s, "{\"TableName\":\"T\",\"KeyConditionExpression\":\"#k0 = :v0\","
               "\"ExpressionAttributeNames\":{\"#k0\":\"PK\"},"
               "\"ExpressionAttributeValues\":{\":v0\":{\"S\":\"u1\"}},"
               "\"ReturnConsumedCapacity\":\"TOTAL\"}");
  free(s);
  r.sk_name = "SK";
  r.sk[0] = mkav(DDB_S, "a");
  for(i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
    r.sk_op = v[i].op;
    s = body_of(&r, &rc, &err);
    snprintf(want, sizeof(want),
             "{\"TableName\":\"T\",\"KeyConditionExpression\":\"#k0 = "
             ":v0%s\",\"ExpressionAttributeNames\":{\"#k0\":\"PK\",\"#k1\":"
             "\"SK\"},\"ExpressionAttributeValues\":{\":v0\":{\"S\":\"u1\"},"
             "\":v1\":{\"S\":\"a\"}},\"ReturnConsumedCapacity\":\"TOTAL\"}",
             v[i].kce);
    CHECK_STR(s, want);
    free(s);
  }
  r.sk_op = DDB_SK_BETWEEN;
  r.sk[0] = mkav(DDB_N, "-1.5");
  r.sk[1] = mkav(DDB_N, "10");
  s = body_of(&r, &rc, &err);
  CHECK_STR(s, "{\"TableName\":\"T\",\"KeyConditionExpression\":\"#k0 = :v0 "
               "AND #k1 BETWEEN :v1 AND :v2\",\"ExpressionAttributeNames\":"
               "{\"#k0\":\"PK\",\"#k1\":\"SK\"},\"ExpressionAttributeValues\":"
               "{\":v0\":{\"S\":\"u1\"},\":v1\":{\"N\":\"-1.5\"},\":v2\":"
               "{\"N\":\"10\"}},\"ReturnConsumedCapacity\":\"TOTAL\"}");
  free(s);
}

static void test_read_body_query_options(void) {
  ddb_read r;
  ddb_result rc;
  ddb_error err;
  ddb_av k[2];
  ddb_item *start;
  char *s;
  k[0] = mkav(DDB_N, "42");
  k[0].name = "PK";
  k[1] = mkav(DDB_B, "AQI=");
  k[1].name = "SK";
  start = ddb_item_from_avs(k, 2);
  memset(&r, 0, sizeof(r));
  r.table = "T";
  r.index = "GSI1";
  r.pk_name = "PK";
  r.pk = mkav(DDB_N, "42");
  r.descending = 1;
  r.consistent = 1;
  r.limit = 25;
  r.count_only = 1;
  r.start = start;
  r.segment = 2;
  r.total_segments = 4; /* ignored by a Query */
  s = body_of(&r, &rc, &err);
  CHECK_STR(s, "{\"TableName\":\"T\",\"IndexName\":\"GSI1\","
               "\"KeyConditionExpression\":\"#k0 = :v0\","
               "\"ExpressionAttributeNames\":{\"#k0\":\"PK\"},"
               "\"ExpressionAttributeValues\":{\":v0\":{\"N\":\"42\"}},"
               "\"ScanIndexForward\":false,\"ConsistentRead\":true,"
               "\"Limit\":25,\"Select\":\"COUNT\",\"ExclusiveStartKey\":"
               "{\"PK\":{\"N\":\"42\"},\"SK\":{\"B\":\"AQI=\"}},"
               "\"ReturnConsumedCapacity\":\"TOTAL\"}");
  free(s);
  ddb_item_unref(start);
}

static void test_read_body_scan(void) {
  ddb_read r;
  ddb_result rc;
  ddb_error err;
  char *s;
  memset(&r, 0, sizeof(r));
  r.table = "Store";
  s = body_of(&r, &rc, &err);
  CHECK_STR(s,
            "{\"TableName\":\"Store\",\"ReturnConsumedCapacity\":\"TOTAL\"}");
  free(s);
  r.segment = 3;
  r.total_segments = 4;
  r.limit = 100;
  s = body_of(&r, &rc, &err);
  CHECK_STR(s, "{\"TableName\":\"Store\",\"Segment\":3,\"TotalSegments\":4,"
               "\"Limit\":100,\"ReturnConsumedCapacity\":\"TOTAL\"}");
  free(s);
  r.segment = 0;
  r.total_segments = 1; /* not parallel */
  r.limit = 0;
  r.index = "by\"q";
  r.descending = 1; /* a Scan has no order */
  s = body_of(&r, &rc, &err);
  CHECK_STR(s, "{\"TableName\":\"Store\",\"IndexName\":\"by\\\"q\","
               "\"ReturnConsumedCapacity\":\"TOTAL\"}");
  free(s);
}

/* Attribute names never appear in expressions, whatever they contain. */
static void test_read_body_names(void) {
  static const char *const names[] = {"Date",      "size",      "a#b",
                                      "a.b",       "has space", "na\xc3\xafve",
                                      "q\"uo\\te", ":v0",       "#k0"};
  ddb_read r;
  ddb_result rc;
  ddb_error err;
  size_t i;
  for(i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    char *s;
    cJSON *j;
    const cJSON *kce, *ean, *eav;
    memset(&r, 0, sizeof(r));
    r.table = "T";
    r.pk_name = names[i];
    r.pk = mkav(DDB_S, names[i]);
    r.sk_name = names[(i + 1) % (sizeof(names) / sizeof(names[0]))];
    r.sk_op = DDB_SK_GE;
    r.sk[0] = mkav(DDB_S, "x");
    s = body_of(&r, &rc, &err);
    j = s ? cJSON_Parse(s) : NULL;
    if(!CHECK_MSG(j != NULL, "body for '%s' is not JSON: %s", names[i],
                  s ? s : err.message)) {
      free(s);
      continue;
    }
    kce = cJSON_GetObjectItemCaseSensitive(j, "KeyConditionExpression");
    ean = cJSON_GetObjectItemCaseSensitive(j, "ExpressionAttributeNames");
    eav = cJSON_GetObjectItemCaseSensitive(j, "ExpressionAttributeValues");
    CHECK(cJSON_IsString(kce) &&
          strcmp(kce->valuestring, "#k0 = :v0 AND #k1 >= :v1") == 0);
    CHECK_STR(
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ean, "#k0")),
        r.pk_name);
    CHECK_STR(
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ean, "#k1")),
        r.sk_name);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                  cJSON_GetObjectItemCaseSensitive(eav, ":v0"), "S")),
              names[i]);
    cJSON_Delete(j);
    free(s);
  }
}

static void test_read_body_errors(void) {
  ddb_read r;
  ddb_result rc;
  ddb_error err;
  char *s;
  ddb_buf b;
  memset(&r, 0, sizeof(r));
  r.table = "T";
  r.pk_name = "PK";
  r.pk = mkav(DDB_N, "abc");
  s = body_of(&r, &rc, &err);
  CHECK(s == NULL);
  CHECK_INT(rc, DDB_ERR_INPUT);
  CHECK_INT(err.code, DDB_ERR_INPUT);
  CHECK_STR(err.message, "bad value for key 'PK'");
  r.pk = mkav(DDB_N, "");
  s = body_of(&r, &rc, &err);
  CHECK_INT(rc, DDB_ERR_INPUT);
  free(s);
  r.pk = mkav(DDB_BOOL, ""); /* not a key type */
  s = body_of(&r, &rc, &err);
  CHECK_INT(rc, DDB_ERR_INPUT);
  free(s);
  r.pk = mkav(DDB_N, "7");
  r.sk_name = "SK";
  r.sk_op = DDB_SK_LT;
  r.sk[0] = mkav(DDB_N, "1e");
  s = body_of(&r, &rc, &err);
  CHECK_INT(rc, DDB_ERR_INPUT);
  CHECK_STR(err.message, "bad value for key 'SK'");
  free(s);
  r.sk_op = DDB_SK_BETWEEN;
  r.sk[0] = mkav(DDB_N, "1");
  r.sk[1] = mkav(DDB_N, "--2"); /* the second operand too */
  s = body_of(&r, &rc, &err);
  CHECK_INT(rc, DDB_ERR_INPUT);
  free(s);
  r.sk[1] = mkav(DDB_N, "2");
  s = body_of(&r, &rc, &err);
  CHECK_INT(rc, DDB_OK);
  free(s);
  /* the buffer's cap */
  ddb_buf_init(&b, 40);
  ddb_error_clear(&err);
  CHECK_INT(ddb_read_body(&r, &b, &err), DDB_ERR_NOMEM);
  CHECK_INT(err.code, DDB_ERR_NOMEM);
  ddb_buf_free(&b);
}

/* ------------------------------------------------------------------------
** The text of errors
*/

/* Text a terminal shows as it is: control characters, C1, bidi controls
** and bytes that are no UTF-8 escaped, whole characters only. */
static void test_text_safe(void) {
  char out[64];
  CHECK_INT(
      (int)ddb_text_safe(out, sizeof(out), "plain \xc3\xa9t\xc3\xa9", 11), 11);
  CHECK_STR(out, "plain \xc3\xa9t\xc3\xa9");
  ddb_text_safe(out, sizeof(out), "a\x1b[2J\rb\x07\x7f", 9);
  CHECK_STR(out, "a\\x1b[2J\\x0db\\x07\\x7f");
  ddb_text_safe(out, sizeof(out), "\xc2\x9b|\xe2\x80\xae|\xe2\x81\xa6", 10);
  CHECK_STR(out, "\\u009b|\\u202e|\\u2066");
  /* no UTF-8: a lone continuation byte, an overlong form, a surrogate, a
  ** sequence cut short */
  ddb_text_safe(out, sizeof(out), "\x80\xc0\xaf\xed\xa0\x80\xe2\x82", 8);
  CHECK_STR(out, "\\x80\\xc0\\xaf\\xed\\xa0\\x80\\xe2\\x82");
  /* cut before an escape that does not fit */
  CHECK_INT((int)ddb_text_safe(out, 6, "ab\x1b", 3), 2);
  CHECK_STR(out, "ab");
  CHECK_INT((int)ddb_text_cut("ab\xc3\xa9", 4, 3), 2);
  CHECK_INT((int)ddb_text_cut("ab\xc3\xa9", 4, 4), 4);
}

/* DynamoDB's error text enters the client cut to 300 bytes and escaped;
** every message (ddb_error_set) is terminal-safe. */
static void test_service_error_text(void) {
  ddb_buf b;
  ddb_error err;
  int i;
  ddb_buf_init(&b, 1 << 20);
  ddb_buf_adds(&b, "{\"__type\":\"com.amazon#Bad\\u001b]0;x\\u0007Type\","
                   "\"message\":\"m\\u001b[31m\\r");
  for(i = 0; i < 100000; i++)
    ddb_buf_addc(&b, 'x');
  ddb_buf_adds(&b, "\"}");
  ddb_error_from_response(b.p, b.len, 400, &err);
  CHECK(strlen(err.message) < 400);
  CHECK(strstr(err.message, "Bad\\x1b]0;x\\x07Type: m\\x1b[31m\\x0dxxx") ==
        err.message);
  CHECK(strcmp(err.message + strlen(err.message) - 4, "x...") == 0);
  CHECK_STR(err.type, "Bad\\x1b]0;x\\x07Type");
  for(i = 0; err.message[i]; i++)
    CHECK((unsigned char)err.message[i] >= 0x20);
  ddb_error_set(&err, DDB_ERR_PARSE, "attribute '%s'", "\x1b[2J\xff");
  CHECK_STR(err.message, "attribute '\\x1b[2J\\xff'");
  /* escapes that make a message too long keep its start and its end */
  ddb_buf_reset(&b);
  for(i = 0; i < 300; i++)
    ddb_buf_addc(&b, (char)0x85);
  ddb_error_set(&err, DDB_ERR_PARSE, "attribute '%s': duplicate name", b.p);
  CHECK(strlen(err.message) < sizeof(err.message));
  CHECK(strncmp(err.message, "attribute '\\x85\\x85", 19) == 0);
  CHECK(strstr(err.message, "...") != NULL);
  {
    const char *end = "\\x85\\x85': duplicate name";
    CHECK(strcmp(err.message + strlen(err.message) - strlen(end), end) == 0);
  }
  ddb_buf_free(&b);
}

const tap_test tap_request_tests[] = {
    {"client: read body, Query sort-key operators", test_read_body_query_ops},
    {"client: read body, Query options", test_read_body_query_options},
    {"client: read body, Scan", test_read_body_scan},
    {"client: read body, attribute names via placeholders",
     test_read_body_names},
    {"client: read body, errors", test_read_body_errors},
    {"client: text safe for a terminal", test_text_safe},
    {"client: a server's error text is cut and escaped",
     test_service_error_text},
    {NULL, NULL}};
