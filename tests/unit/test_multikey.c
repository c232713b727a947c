/*
** test_multikey.c -- unit tests of multi-attribute GSI keys in client/:
** DescribeTable's KeySchema of up to 4 HASH and 4 RANGE attributes
** (describe.c), the Query body of such a key (read.c: #eI = :eI), and the
** LastEvaluatedKey that holds every attribute of it.  No network.
*/
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../client/ddb_client_int.h"
#include "helpers.h"
#include "tap.h"

/* A DescribeTable answer of table T (key id S) whose one GSI G has the
** KeySchema ks (a JSON array); lsi: as an LSI instead.  A new string. */
static char *answer(const char *ks, int lsi) {
  char *z = malloc(4096);
  snprintf(z, 4096,
           "{\"Table\":{\"TableName\":\"T\",\"KeySchema\":[{\"AttributeName\":"
           "\"id\",\"KeyType\":\"HASH\"}],\"AttributeDefinitions\":["
           "{\"AttributeName\":\"id\",\"AttributeType\":\"S\"},"
           "{\"AttributeName\":\"a\",\"AttributeType\":\"S\"},"
           "{\"AttributeName\":\"b\",\"AttributeType\":\"N\"},"
           "{\"AttributeName\":\"c\",\"AttributeType\":\"B\"},"
           "{\"AttributeName\":\"d\",\"AttributeType\":\"N\"},"
           "{\"AttributeName\":\"e\",\"AttributeType\":\"S\"}],"
           "\"%s\":[{\"IndexName\":\"G\",\"KeySchema\":%s,"
           "\"Projection\":{\"ProjectionType\":\"ALL\"}}]}}",
           lsi ? "LocalSecondaryIndexes" : "GlobalSecondaryIndexes", ks);
  return z;
}

/* Parse answer(ks, lsi): DDB_OK with *out, or the error (message in err). */
static ddb_result parse(const char *ks, int lsi, ddb_table_desc **out,
                        ddb_error *err) {
  char *z = answer(ks, lsi);
  cJSON *j = cJSON_Parse(z);
  ddb_result rc;
  ddb_error_clear(err);
  rc = ddb_table_desc_from_json(j, "T", out, err);
  cJSON_Delete(j);
  free(z);
  return rc;
}

#define K(n, t) "{\"AttributeName\":\"" n "\",\"KeyType\":\"" t "\"}"

static void test_describe_multi(void) {
  ddb_table_desc *d = NULL, *c;
  ddb_error err;
  const ddb_index *x;
  CHECK_INT(parse("[" K("a", "HASH") "," K("b", "HASH") "," K(
                      "c", "RANGE") "," K("d", "RANGE") "]",
                  0, &d, &err),
            DDB_OK);
  if(!d)
    return;
  x = &d->indexes[1];
  CHECK_INT(x->n_pk, 2);
  CHECK_INT(x->n_sk, 2);
  CHECK_STR(x->pk.name, "a"); /* pk and sk are the first of each */
  CHECK_STR(x->pks[1].name, "b");
  CHECK_INT(x->pks[1].type, DDB_N);
  CHECK_STR(x->sk.name, "c");
  CHECK_INT(x->sk.type, DDB_B);
  CHECK_STR(x->sks[1].name, "d");
  CHECK_INT(ddb_key_attrs(x, 0), 2);
  CHECK_INT(ddb_key_attrs(x, 1), 2);
  CHECK_INT(ddb_key_attrs(&d->indexes[0], 0), 1);
  CHECK_INT(ddb_key_attrs(&d->indexes[0], 1), 0);
  c = ddb_table_desc_dup(d); /* a deep copy keeps every attribute */
  CHECK(c != NULL);
  if(c) {
    CHECK_STR(c->indexes[1].sks[1].name, "d");
    CHECK(c->indexes[1].sks[1].name != x->sks[1].name);
    CHECK_INT(c->indexes[1].n_pk, 2);
  }
  ddb_table_desc_free(c);
  ddb_table_desc_free(d);
  /* 4 + 4, and a single-attribute key as before */
  d = NULL;
  CHECK_INT(parse("[" K("a", "HASH") "," K("b", "HASH") "," K(
                      "c", "HASH") "," K("e", "HASH") "," K("d", "RANGE") "]",
                  0, &d, &err),
            DDB_OK);
  if(d)
    CHECK_INT(d->indexes[1].n_pk, 4);
  ddb_table_desc_free(d);
  d = NULL;
  CHECK_INT(parse("[" K("a", "HASH") "," K("b", "RANGE") "]", 0, &d, &err),
            DDB_OK);
  if(d) {
    CHECK_INT(d->indexes[1].n_pk, 1);
    CHECK_INT(d->indexes[1].n_sk, 1);
  }
  ddb_table_desc_free(d);
}

static void test_describe_multi_malformed(void) {
  static const char *const bad[] = {
      /* a HASH after a RANGE: no key DynamoDB makes */
      "[" K("a", "HASH") "," K("c", "RANGE") "," K("b", "HASH") "]",
      /* five HASH attributes */
      "[" K("a", "HASH") "," K("b", "HASH") "," K("c", "HASH") "," K(
          "d", "HASH") "," K("e", "HASH") "]",
      /* one attribute twice */
      "[" K("a", "HASH") "," K("b", "HASH") "," K("a", "RANGE") "]",
      /* no HASH at all */
      "[" K("c", "RANGE") "]",
  };
  ddb_table_desc *d = NULL;
  ddb_error err;
  size_t i;
  for(i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    CHECK_INT(parse(bad[i], 0, &d, &err), DDB_ERR_PARSE);
    CHECK_STR(err.message, "DescribeTable of 'T': malformed index");
    CHECK(d == NULL);
  }
  /* an LSI's key is the table's partition key and one sort attribute */
  CHECK_INT(
      parse("[" K("id", "HASH") "," K("c", "RANGE") "," K("d", "RANGE") "]", 1,
            &d, &err),
      DDB_ERR_PARSE);
}

static void test_read_body_multi(void) {
  static const char *const names[] = {"b", "c"};
  ddb_av vals[2];
  ddb_read r;
  ddb_result rc;
  ddb_error err;
  ddb_buf b;
  char *s;
  memset(&r, 0, sizeof(r));
  r.table = "T";
  r.index = "G";
  r.pk_name = "a";
  r.pk = mkav(DDB_S, "x");
  vals[0] = mkav(DDB_N, "2");
  vals[1] = mkav(DDB_B, "AQ==");
  r.n_eq = 2;
  r.eq_names = names;
  r.eq_vals = vals;
  r.sk_name = "d";
  r.sk_op = DDB_SK_BETWEEN;
  r.sk[0] = mkav(DDB_N, "1");
  r.sk[1] = mkav(DDB_N, "5");
  ddb_buf_init(&b, 1 << 16);
  ddb_error_clear(&err);
  rc = ddb_read_body(&r, &b, &err);
  CHECK_INT(rc, DDB_OK);
  s = ddb_buf_take(&b, NULL);
  CHECK_STR(s, "{\"TableName\":\"T\",\"IndexName\":\"G\","
               "\"KeyConditionExpression\":\"#k0 = :v0 AND #e0 = :e0 AND #e1 "
               "= :e1 AND #k1 BETWEEN :v1 AND :v2\","
               "\"ExpressionAttributeNames\":{\"#k0\":\"a\",\"#k1\":\"d\","
               "\"#e0\":\"b\",\"#e1\":\"c\"},\"ExpressionAttributeValues\":{"
               "\":v0\":{\"S\":\"x\"},\":v1\":{\"N\":\"1\"},\":v2\":{\"N\":"
               "\"5\"},\":e0\":{\"N\":\"2\"},\":e1\":{\"B\":\"AQ==\"}},"
               "\"ReturnConsumedCapacity\":\"TOTAL\"}");
  free(s);
  /* a value that is no scalar DynamoDB takes is named */
  vals[0] = mkav(DDB_N, "");
  ddb_buf_init(&b, 1 << 16);
  rc = ddb_read_body(&r, &b, &err);
  CHECK_INT(rc, DDB_ERR_INPUT);
  CHECK_STR(err.message, "bad value for key 'b'");
  ddb_buf_free(&b);
}

/* A page whose LastEvaluatedKey is typed JSON key, checked for r. */
static ddb_result lek(ddb_read *r, const char *key, ddb_error *err) {
  ddb_page pg;
  ddb_item *it = NULL;
  ddb_result rc;
  memset(&pg, 0, sizeof(pg));
  ddb_error_clear(err);
  if(ddb_item_from_typed_json(key, strlen(key), &it, err) != DDB_OK)
    return DDB_ERR_INPUT;
  pg.last_key = it;
  rc = ddb_lek_check(r, &pg, err);
  ddb_item_unref(it);
  return rc;
}

static void test_lek_multi(void) {
  ddb_table_desc *d = NULL;
  ddb_error err;
  ddb_read r;
  CHECK_INT(parse("[" K("a", "HASH") "," K("b", "HASH") "," K(
                      "c", "RANGE") "," K("d", "RANGE") "]",
                  0, &d, &err),
            DDB_OK);
  if(!d)
    return;
  memset(&r, 0, sizeof(r));
  r.table = "T";
  r.index = "G";
  r.desc = d;
  r.pk_name = "a";
  r.pk = mkav(DDB_S, "x");
  /* every key attribute, and the table's: a key */
  CHECK_INT(
      lek(&r,
          "{\"a\":{\"S\":\"x\"},\"b\":{\"N\":\"1\"},\"c\":{\"B\":\"AA==\"},"
          "\"d\":{\"N\":\"2\"},\"id\":{\"S\":\"i\"}}",
          &err),
      DDB_OK);
  /* one missing: no key */
  CHECK_INT(
      lek(&r,
          "{\"a\":{\"S\":\"x\"},\"b\":{\"N\":\"1\"},\"c\":{\"B\":\"AA==\"},"
          "\"id\":{\"S\":\"i\"}}",
          &err),
      DDB_ERR_PARSE);
  CHECK(strstr(err.message, "it lacks 'd'") != NULL);
  /* another partition (the first attribute's) */
  CHECK_INT(
      lek(&r,
          "{\"a\":{\"S\":\"y\"},\"b\":{\"N\":\"1\"},\"c\":{\"B\":\"AA==\"},"
          "\"d\":{\"N\":\"2\"},\"id\":{\"S\":\"i\"}}",
          &err),
      DDB_ERR_PARSE);
  ddb_table_desc_free(d);
}

const tap_test tap_multikey_tests[] = {
    {"multikey: DescribeTable of 2 + 2 and 4 + 1 attribute keys",
     test_describe_multi},
    {"multikey: malformed multi-attribute keys are refused",
     test_describe_multi_malformed},
    {"multikey: a Query body with #eI = :eI", test_read_body_multi},
    {"multikey: a LastEvaluatedKey holds every key attribute", test_lek_multi},
    {NULL, NULL}};
