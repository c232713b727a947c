/*
** test_throttle.c -- client/throttle.c (the reasons of a throttling
** answer), client/arn.c (table and index ARNs) and cache/hot.c's marking
** of a hot key range DynamoDB named.
*/
#include <stdio.h>
#include <string.h>

#include "../../cache/cache_int.h"
#include "../../client/http_int.h"
#include "tap.h"

#define ARN "arn:aws:dynamodb:us-east-1:123456789012:table/Orders"

/* Good ARNs parse into their parts; an index only where one is allowed. */
static void test_arn_parse(void) {
  ddb_arn a;
  ddb_error e;
  CHECK_INT(ddb_arn_parse(ARN, 0, &a, &e), DDB_OK);
  CHECK_STR(a.partition, "aws");
  CHECK_STR(a.region, "us-east-1");
  CHECK_STR(a.account, "123456789012");
  CHECK_STR(a.table, "Orders");
  CHECK_STR(a.index, "");
  CHECK_INT(ddb_arn_parse(ARN "/index/By.Status-1", 1, &a, &e), DDB_OK);
  CHECK_STR(a.index, "By.Status-1");
  CHECK_INT(ddb_arn_parse(ARN "/index/ByStatus", 0, &a, &e), DDB_ERR_CONFIG);
  CHECK(strstr(e.message, "text after the table name") != NULL);
  CHECK_INT(ddb_arn_parse("arn:aws-cn:dynamodb:cn-north-1:000000000000:"
                          "table/a_b",
                          0, &a, &e),
            DDB_OK);
  CHECK_STR(a.partition, "aws-cn");
  CHECK_INT(ddb_arn_parse("arn:aws:dynamodb:ddblocal:000000000000:table/T01",
                          0, &a, &e),
            DDB_OK);
  CHECK_STR(a.region, "ddblocal");
}

/* Bad ARNs: each says what is wrong, quoting the ARN, on one line. */
static void test_arn_bad(void) {
  static const struct {
    const char *arn, *why;
  } bad[] = {
      {"Orders", "it does not start with arn:"},
      {"arn:aws:s3:::bucket", "not a DynamoDB ARN"},
      {"arn::dynamodb:us-east-1:123456789012:table/Orders", "no partition"},
      {"arn:aws:dynamodb::123456789012:table/Orders", "no region"},
      {"arn:aws:dynamodb:US-EAST-1:123456789012:table/Orders", "no region"},
      {"arn:aws:dynamodb:us-east-1:1234:table/Orders", "no account id"},
      {"arn:aws:dynamodb:us-east-1:12345678901a:table/Orders",
       "no account id"},
      {"arn:aws:dynamodb:us-east-1:123456789012:Orders", "no table/NAME"},
      {"arn:aws:dynamodb:us-east-1:123456789012:table/ab", "no table/NAME"},
      {"arn:aws:dynamodb:us-east-1:123456789012:table/abc d", "text after"},
      {"arn:aws:dynamodb:us-east-1:123456789012:table/abc\n", "text after"},
  };
  size_t i;
  for(i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
    ddb_arn a;
    ddb_error e;
    memset(&e, 0, sizeof(e));
    CHECK_INT(ddb_arn_parse(bad[i].arn, 0, &a, &e), DDB_ERR_CONFIG);
    CHECK_MSG(strstr(e.message, bad[i].why) != NULL, "%s: %s", bad[i].arn,
              e.message);
    CHECK(strchr(e.message, '\n') == NULL);
    CHECK_STR(a.table, "");
  }
  CHECK_STR(ddb_arn_table_name(ARN), "Orders");
  CHECK_STR(ddb_arn_table_name("Orders"), "Orders");
  CHECK_STR(ddb_arn_table_name("arn:aws:s3:::bucket"), "arn:aws:s3:::bucket");
}

/* Both spellings of the list are read, at most DDB_THROTTLE_REASONS of
** them; a resource that is no ARN leaves table and index empty. */
static void test_throttle_read(void) {
  const char *lower =
      "{\"__type\":\"x#ThrottlingException\",\"message\":\"m\","
      "\"throttlingReasons\":[{\"reason\":"
      "\"IndexReadKeyRangeThroughputExceeded\",\"resource\":\"" ARN
      "/index/ByStatus\"}]}";
  const char *upper =
      "{\"ThrottlingReasons\":[{\"reason\":\"A\",\"resource\":\"x\"},"
      "{\"reason\":\"B\"},{\"resource\":\"" ARN "\"},{\"reason\":\"C\"},"
      "{\"reason\":\"D\"},{\"reason\":\"E\"}]}";
  ddb_throttle t;
  ddb_throttle_read(lower, strlen(lower), &t);
  CHECK_INT(t.n, 1);
  CHECK_STR(t.r[0].reason, "IndexReadKeyRangeThroughputExceeded");
  CHECK_STR(t.r[0].table, "Orders");
  CHECK_STR(t.r[0].index, "ByStatus");
  ddb_throttle_read(upper, strlen(upper), &t);
  CHECK_INT(t.n, DDB_THROTTLE_REASONS);
  CHECK_STR(t.r[0].reason, "A");
  CHECK_STR(t.r[0].table, "");
  CHECK_STR(t.r[1].reason, "B");
  CHECK_STR(t.r[2].reason, "C"); /* the one without a reason is skipped */
  CHECK_STR(t.r[3].reason, "D");
  ddb_throttle_read("{\"message\":\"old\"}", 17, &t);
  CHECK_INT(t.n, 0);
  ddb_throttle_read("not json", 8, &t);
  CHECK_INT(t.n, 0);
  ddb_throttle_read("{\"throttlingReasons\":{}}", 24, &t);
  CHECK_INT(t.n, 0);
}

/* The message names each reason with its table or index and its limit's
** meaning; the log's text is shorter; none: as before. */
static void test_throttle_text(void) {
  const char *body = "{\"throttlingReasons\":["
                     "{\"reason\":\"TableWriteProvisionedThroughputExceeded\","
                     "\"resource\":\"" ARN "\"},"
                     "{\"reason\":\"IndexWriteKeyRangeThroughputExceeded\","
                     "\"resource\":\"" ARN "/index/ByStatus\"}]}";
  ddb_throttle t;
  ddb_error e;
  char log[160];
  ddb_tally tl;
  memset(&e, 0, sizeof(e));
  ddb_error_set(&e, DDB_ERR_SERVICE, "ThrottlingException: Rate exceeded");
  snprintf(e.type, sizeof(e.type), "ThrottlingException");
  ddb_throttle_read(body, strlen(body), &t);
  ddb_throttle_explain(&t, &e);
  CHECK_STR(e.message,
            "ThrottlingException: TableWriteProvisionedThroughputExceeded on "
            "table 'Orders' (over its provisioned capacity); "
            "IndexWriteKeyRangeThroughputExceeded on table 'Orders' index "
            "'ByStatus' (a hot partition key): Rate exceeded");
  ddb_throttle_summary(&t, e.type, log, sizeof(log));
  CHECK_STR(log, "TableWriteProvisionedThroughputExceeded Orders; "
                 "IndexWriteKeyRangeThroughputExceeded Orders/ByStatus");
  memset(&tl, 0, sizeof(tl));
  CHECK_INT(ddb_throttle_key_range(&t, &tl), 1);
  CHECK_INT(tl.key_range, 1);
  CHECK_STR(tl.key_range_table, "Orders");
  CHECK_STR(tl.key_range_index, "ByStatus");
  t.n = 1; /* the provisioned one alone: no key range */
  CHECK_INT(ddb_throttle_key_range(&t, &tl), 0);
  CHECK_INT(tl.key_range, 1);
  t.n = 0;
  ddb_throttle_summary(&t, "ProvisionedThroughputExceededException", log,
                       sizeof(log));
  CHECK_STR(log, "ProvisionedThroughputExceededException");
  ddb_error_set(&e, DDB_ERR_SERVICE, "ThrottlingException: Rate exceeded");
  ddb_throttle_explain(&t, &e);
  CHECK_STR(e.message, "ThrottlingException: Rate exceeded");
  CHECK(ddb_throttle_is("ThrottlingException"));
  CHECK(ddb_throttle_is("RequestLimitExceeded"));
  CHECK(ddb_throttle_is("TooManyRequestsException"));
  CHECK(!ddb_throttle_is("ValidationException"));
  CHECK(!ddb_throttle_is("ReplicatedWriteConflictException"));
  CHECK(ddb_throttle_transient("ReplicatedWriteConflictException"));
  CHECK(ddb_throttle_transient("TransactionInProgressException"));
}

/* A hot key range marks the key of the table or index it named (a table
** given by its ARN matches its name), and no other. */
static void test_hot_mark(void) {
  ddb_tally tl;
  ddb_av av;
  ddbc_hot_row *rows = NULL;
  int i, n, seen = 0;
  memset(&tl, 0, sizeof(tl));
  memset(&av, 0, sizeof(av));
  av.type = DDB_S;
  av.text = "UnitMark#1";
  av.n = (uint32_t)strlen(av.text);
  tl.key_range = 2;
  snprintf(tl.key_range_table, sizeof(tl.key_range_table), "UnitMark");
  ddbc_hot_mark("arn:aws:dynamodb:us-east-1:123456789012:table/UnitMark", NULL,
                &av, &tl);
  ddbc_hot_mark("UnitMark", "SomeIndex", &av, &tl); /* not the index */
  ddbc_hot_mark("UnitMarkOther", NULL, &av, &tl);   /* not the table */
  n = ddbc_hot_top(DDBC_HOT_COUNTERS, &rows);
  for(i = 0; i < n; i++)
    if(rows[i].pk_len == av.n && memcmp(rows[i].pk, av.text, av.n) == 0) {
      seen++;
      CHECK_STR(rows[i].table,
                "arn:aws:dynamodb:us-east-1:123456789012:table/UnitMark");
      CHECK(rows[i].index == NULL);
      CHECK_INT(rows[i].key_range, 2);
      CHECK_INT(rows[i].requests, rows[i].error); /* none of its own */
    }
  CHECK_INT(seen, 1);
  ddbc_hot_free(rows, n);
}

const tap_test tap_throttle_tests[] = {
    {"arn: table and index ARNs parse into their parts", test_arn_parse},
    {"arn: a malformed ARN says what is wrong, on one line", test_arn_bad},
    {"throttle: the reasons of both spellings, at most 4", test_throttle_read},
    {"throttle: the message, the log's text and the tally's key range",
     test_throttle_text},
    {"hot: a key range DynamoDB named marks that table's or index's key",
     test_hot_mark},
    {NULL, NULL}};
