/*
** fuzz_read_body.c -- libFuzzer harness of the expression builder:
** ddb_read_body (client/read.c), which turns a ddb_read (table, index,
** key condition, sort-key operator and values, filters, projection,
** ExclusiveStartKey, limits) into the JSON body of a Query or Scan.
**
** The input is split at 0xff bytes into fields; the first bytes choose
** the operators, types and flags.  Checked: every body built is valid
** JSON whose ExpressionAttributeNames and ExpressionAttributeValues hold
** exactly the placeholders the expressions use.
*/
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../client/ddb_client_int.h"

#define MAX_FIELDS 16

/* A scalar AttributeValue of type chosen by t over text f. */
static ddb_av scalar(unsigned t, const char *f) {
  ddb_av a;
  memset(&a, 0, sizeof(a));
  a.type = t % 3 == 0 ? DDB_S : t % 3 == 1 ? DDB_N : DDB_B;
  a.text = f;
  a.n = (uint32_t)strlen(f);
  return a;
}

/* Does every "#x" / ":x" placeholder in expr appear in names / values? */
static void check_placeholders(const cJSON *body, const char *field) {
  const char *expr =
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(body, field));
  const cJSON *names =
      cJSON_GetObjectItemCaseSensitive(body, "ExpressionAttributeNames");
  const cJSON *vals =
      cJSON_GetObjectItemCaseSensitive(body, "ExpressionAttributeValues");
  const char *p;
  if(!expr)
    return;
  for(p = expr; *p; p++) {
    if(*p == '#' || *p == ':') {
      char ph[32];
      size_t n = 1;
      ph[0] = *p;
      while(n < sizeof(ph) - 1 &&
            ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9')))
        ph[n] = p[n], n++;
      ph[n] = 0;
      if(n > 1 &&
         !cJSON_GetObjectItemCaseSensitive(*p == '#' ? names : vals, ph))
        abort();
      p += n - 1;
    }
  }
}

/* libFuzzer's entry point: one input; returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf, *f[MAX_FIELDS];
  const char *proj[4];
  ddb_filter filters[2];
  ddb_read r;
  ddb_buf b;
  ddb_error e;
  ddb_item *start = NULL;
  cJSON *j;
  size_t i, s = 0;
  int nf = 0;
  unsigned c0, c1, c2, c3;
  if(size < 4)
    return 0;
  c0 = data[0];
  c1 = data[1];
  c2 = data[2];
  c3 = data[3];
  buf = malloc(size - 4 + 1);
  if(!buf)
    return 0;
  memcpy(buf, data + 4, size - 4);
  buf[size - 4] = 0;
  for(i = 0; i <= size - 4 && nf < MAX_FIELDS; i++)
    if(i == size - 4 || (unsigned char)buf[i] == 0xff) {
      buf[i] = 0;
      f[nf++] = buf + s;
      s = i + 1;
    }
  while(nf < MAX_FIELDS)
    f[nf++] = (char *)"";
  memset(&r, 0, sizeof(r));
  r.table = f[0];
  r.index = (c0 & 1) ? f[1] : NULL;
  if(c0 & 2) {
    r.pk_name = f[2];
    r.pk = scalar(c1, f[3]);
    r.sk_op = (ddb_skop)(c1 / 3 % 8);
    r.sk_name = f[4];
    r.sk[0] = scalar(c2, f[5]);
    r.sk[1] = scalar(c2 / 3, f[6]);
    r.descending = (c0 & 4) != 0;
  } else if(c0 & 4) {
    r.total_segments = (int)(c2 % 5);
    r.segment = (int)(c3 % 5);
  }
  r.consistent = (c0 & 8) != 0;
  r.limit = (c0 & 16) ? (long long)c3 : 0;
  r.count_only = (c0 & 32) != 0;
  if(c0 & 64) {
    proj[0] = f[7];
    proj[1] = f[8];
    r.proj = proj;
    r.n_proj = 1 + (int)(c3 & 1);
  }
  if(c0 & 128) {
    filters[0].name = f[9];
    filters[0].op = (ddb_skop)(1 + c3 % 7);
    filters[0].v[0] = scalar(c3 / 7, f[10]);
    filters[0].v[1] = scalar(c3 / 21, f[11]);
    filters[1].name = f[12];
    filters[1].op = (ddb_skop)(1 + c2 % 7);
    filters[1].v[0] = scalar(c2 / 7, f[13]);
    filters[1].v[1] = scalar(c2 / 21, f[14]);
    r.filters = filters;
    r.n_filters = 1 + (int)(c1 & 1);
  }
  ddb_error_clear(&e);
  if(f[15][0] &&
     ddb_item_from_typed_json(f[15], strlen(f[15]), &start, &e) == DDB_OK)
    r.start = start;
  ddb_buf_init(&b, 1u << 20);
  if(ddb_read_body(&r, &b, &e) == DDB_OK) {
    j = cJSON_ParseWithLength(b.p, b.len);
    if(!j)
      abort(); /* the body must be JSON */
    check_placeholders(j, "KeyConditionExpression");
    check_placeholders(j, "FilterExpression");
    check_placeholders(j, "ProjectionExpression");
    cJSON_Delete(j);
  }
  ddb_buf_free(&b);
  ddb_item_unref(start);
  free(buf);
  return 0;
}
