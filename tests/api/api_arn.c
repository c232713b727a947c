/*
** api_arn.c -- libdyndb takes a table's ARN where it takes its name
** (suite 29): a GetItem through the ARN finds the item the
** name finds; an ARN of another region than the client's, or a malformed
** one, is a one-line error.  TAP lines.
**
**    api_arn ENDPOINT TABLE      (TABLE holds PK=CUSTOMER#bob SK=PROFILE)
*/
#include <stdio.h>
#include <string.h>

#include "api/dyndb.h"

static int n_test, n_fail;

/* One TAP line: ok when cond, else not ok with what was got. */
static void check(int cond, const char *name, const char *got) {
  n_test++;
  n_fail += !cond;
  printf("%s %d - api arn: %s\n", cond ? "ok" : "not ok", n_test, name);
  if(!cond)
    printf("#   got: %s\n", got ? got : "(null)");
}

int main(int argc, char **argv) {
  dyn_options o;
  dyn_client *c = NULL;
  dyn_error e;
  char arn[300], other[300], *json = NULL;
  const char *key = "{\"PK\":\"CUSTOMER#bob\",\"SK\":\"PROFILE\"}";
  dyn_code rc;
  if(argc != 3) {
    fprintf(stderr, "usage: api_arn ENDPOINT TABLE\n");
    return 2;
  }
  snprintf(arn, sizeof(arn),
           "arn:aws:dynamodb:us-east-1:000000000000:table/%s", argv[2]);
  snprintf(other, sizeof(other),
           "arn:aws:dynamodb:eu-west-1:000000000000:table/%s", argv[2]);
  dyn_options_init(&o);
  o.endpoint = argv[1];
  o.region = "us-east-1";
  if(dyn_client_new(&o, &c, &e) != DYN_OK) {
    printf("not ok 1 - api arn: dyn_client_new: %s\n1..1\n", e.message);
    return 1;
  }
  rc = dyn_get_json(c, arn, key, 0, &json, &e);
  check(rc == DYN_OK && json && strstr(json, "\"Bob\""),
        "dyn_get_json through the ARN finds the item", rc ? e.message : json);
  dyn_free(json);
  json = NULL;
  rc = dyn_get_json(c, other, key, 0, &json, &e);
  check(rc == DYN_ECONFIG &&
            strstr(e.message, "is in region 'eu-west-1' (its ARN) but the "
                              "client's region is 'us-east-1'"),
        "an ARN of another region than the client's is an error naming both",
        rc ? e.message : json);
  dyn_free(json);
  json = NULL;
  rc = dyn_get_json(c, "arn:aws:dynamodb:us-east-1:42:table/X", key, 0, &json,
                    &e);
  check(rc == DYN_ECONFIG && strstr(e.message, "malformed table ARN") &&
            strstr(e.message, "no account id of 12 digits") &&
            !strchr(e.message, '\n'),
        "a malformed ARN is a one-line error", rc ? e.message : json);
  dyn_free(json);
  dyn_client_free(c);
  printf("1..%d\n", n_test);
  return n_fail ? 1 : 0;
}
