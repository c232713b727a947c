/*
** describe.c -- DescribeTable: the table's key schema, indexes, item
** count and size, as ddb_table_desc (ddb_client.h).
*/
#include <stdlib.h>
#include <string.h>

#include "ddb_client_int.h"
#include "http_int.h"

/* ------------------------------------------------------------------------
** DescribeTable
*/
/* A malloc'ed copy of j's string value, or NULL (none, or no memory). */
static char *dup_json_str(const cJSON *j) {
  return ddb_strdup(cJSON_GetStringValue(j));
}

/* The type of attribute name in AttributeDefinitions defs, or DDB_NONE. */
static ddb_type attr_type(const cJSON *defs, const char *name) {
  const cJSON *d;
  cJSON_ArrayForEach(d, defs) {
    const char *n = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(d, "AttributeName"));
    const char *t = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(d, "AttributeType"));
    if(n && t && strcmp(n, name) == 0)
      return strcmp(t, "S") == 0   ? DDB_S
             : strcmp(t, "N") == 0 ? DDB_N
             : strcmp(t, "B") == 0 ? DDB_B
                                   : DDB_NONE;
  }
  return DDB_NONE;
}

/* Fill idx's keys from a KeySchema array: its HASH attributes, then its
** RANGE attributes, in order (one of each, or a GSI's multi-attribute key
** of up to DDB_KEY_ATTRS of each; DynamoDB lists every HASH first), each
** with its type from AttributeDefinitions defs.  Returns 0 or -1. */
static int parse_keys(const cJSON *schema, const cJSON *defs, ddb_index *idx) {
  const cJSON *k;
  cJSON_ArrayForEach(k, schema) {
    const char *kt =
        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(k, "KeyType"));
    ddb_keyattr *ka;
    if(!kt)
      return -1;
    if(strcmp(kt, "HASH") == 0 && idx->n_pk < DDB_KEY_ATTRS && !idx->n_sk)
      ka = &idx->pks[idx->n_pk++];
    else if(strcmp(kt, "RANGE") == 0 && idx->n_sk < DDB_KEY_ATTRS)
      ka = &idx->sks[idx->n_sk++];
    else
      return -1; /* unknown, too many, or HASH after RANGE */
    ka->name =
        dup_json_str(cJSON_GetObjectItemCaseSensitive(k, "AttributeName"));
    if(!ka->name)
      return -1;
    ka->type = attr_type(defs, ka->name);
    if(ka->type == DDB_NONE)
      return -1;
  }
  return idx->pk.name ? 0 : -1;
}

/* Is every key attribute of idx named once?  (An attribute twice in one
** key is no key DynamoDB makes.) */
static int keys_distinct(const ddb_index *idx) {
  const ddb_keyattr *a[2 * DDB_KEY_ATTRS];
  int n = 0, i, j;
  for(i = 0; i < idx->n_pk; i++)
    a[n++] = &idx->pks[i];
  for(i = 0; i < idx->n_sk; i++)
    a[n++] = &idx->sks[i];
  for(i = 0; i < n; i++)
    for(j = 0; j < i; j++)
      if(strcmp(a[i]->name, a[j]->name) == 0)
        return 0;
  return 1;
}

/* Fill idx's projection from a Projection object.  Returns 0 or -1. */
static int parse_projection(const cJSON *p, ddb_index *idx) {
  const char *t = cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(p, "ProjectionType"));
  const cJSON *nk = cJSON_GetObjectItemCaseSensitive(p, "NonKeyAttributes"),
              *a;
  if(!t || strcmp(t, "ALL") == 0)
    idx->projection = DDB_PROJ_ALL;
  else if(strcmp(t, "KEYS_ONLY") == 0)
    idx->projection = DDB_PROJ_KEYS_ONLY;
  else
    idx->projection = DDB_PROJ_INCLUDE;
  if(cJSON_IsArray(nk) && cJSON_GetArraySize(nk) > 0) {
    idx->nonkey = calloc((size_t)cJSON_GetArraySize(nk), sizeof(char *));
    if(!idx->nonkey)
      return -1;
    cJSON_ArrayForEach(a, nk) {
      if(!(idx->nonkey[idx->n_nonkey] = dup_json_str(a)))
        return -1;
      idx->n_nonkey++;
    }
  }
  return 0;
}

/* qsort order of indexes: by name. */
static int index_cmp(const void *a, const void *b) {
  return strcmp(((const ddb_index *)a)->name, ((const ddb_index *)b)->name);
}

/* Free d and everything in it; NULL is fine. */
void ddb_table_desc_free(ddb_table_desc *d) {
  int i, j;
  if(!d)
    return;
  for(i = 0; i < d->n_indexes; i++) {
    ddb_index *x = &d->indexes[i];
    free(x->name);
    for(j = 0; j < DDB_KEY_ATTRS; j++) {
      free(x->pks[j].name);
      free(x->sks[j].name);
    }
    for(j = 0; j < x->n_nonkey; j++)
      free(x->nonkey[j]);
    free(x->nonkey);
  }
  free(d->indexes);
  free(d->name);
  free(d->status);
  free(d->billing_mode);
  free(d->stream);
  free(d);
}

/* *dst = a copy of src (NULL stays NULL).  Returns 0, or -1 on OOM. */
static int dup_str(char **dst, const char *src) {
  *dst = NULL;
  if(!src)
    return 0;
  *dst = strdup(src);
  return *dst ? 0 : -1;
}

/* A deep copy of d, or NULL on out of memory. */
ddb_table_desc *ddb_table_desc_dup(const ddb_table_desc *d) {
  ddb_table_desc *c = calloc(1, sizeof(*c));
  int i, j, bad = 0;
  if(!c)
    return NULL;
  c->item_count = d->item_count;
  c->size_bytes = d->size_bytes;
  c->indexes = calloc((size_t)d->n_indexes, sizeof(ddb_index));
  if(!c->indexes) {
    free(c);
    return NULL;
  }
  c->n_indexes = d->n_indexes;
  bad |= dup_str(&c->name, d->name);
  bad |= dup_str(&c->status, d->status);
  bad |= dup_str(&c->billing_mode, d->billing_mode);
  bad |= dup_str(&c->stream, d->stream);
  for(i = 0; i < d->n_indexes; i++) {
    const ddb_index *x = &d->indexes[i];
    ddb_index *y = &c->indexes[i];
    *y = *x;
    y->nonkey = NULL;
    y->n_nonkey = 0;
    bad |= dup_str(&y->name, x->name);
    for(j = 0; j < DDB_KEY_ATTRS; j++) {
      bad |= dup_str(&y->pks[j].name, x->pks[j].name);
      bad |= dup_str(&y->sks[j].name, x->sks[j].name);
    }
    if(x->n_nonkey) {
      y->nonkey = calloc((size_t)x->n_nonkey, sizeof(char *));
      if(!y->nonkey) {
        bad = 1;
        continue;
      }
      y->n_nonkey = x->n_nonkey;
      for(j = 0; j < x->n_nonkey; j++)
        bad |= dup_str(&y->nonkey[j], x->nonkey[j]);
    }
  }
  if(bad) {
    ddb_table_desc_free(c);
    return NULL;
  }
  return c;
}

/* A count from JSON: x's value when it is a number in [0, 2^53], else
** dflt (a huge or negative number in a damaged answer is no count). */
static long long json_count(const cJSON *x, long long dflt) {
  if(!cJSON_IsNumber(x) || !(x->valuedouble >= 0) ||
     x->valuedouble > 9007199254740992.0)
    return dflt;
  return (long long)x->valuedouble;
}

/* The status, billing mode and stream of table object t into d.  Returns
** 0, or -1 when out of memory. */
static int describe_extras(const cJSON *t, ddb_table_desc *d) {
  const cJSON *bm = cJSON_GetObjectItemCaseSensitive(t, "BillingModeSummary");
  const cJSON *ss = cJSON_GetObjectItemCaseSensitive(t, "StreamSpecification");
  const char *z;
  z = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "TableStatus"));
  if(z && !(d->status = ddb_strdup(z)))
    return -1;
  /* a table made provisioned, never switched, has no BillingModeSummary */
  z = cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(bm, "BillingMode"));
  if(!(d->billing_mode = ddb_strdup(z ? z : "PROVISIONED")))
    return -1;
  if(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ss, "StreamEnabled"))) {
    z = cJSON_GetStringValue(
        cJSON_GetObjectItemCaseSensitive(ss, "StreamViewType"));
    if(!(d->stream = ddb_strdup(z ? z : "ENABLED")))
      return -1;
  }
  return 0;
}

/* Parse a DescribeTable answer into *out (see ddb_client_int.h). */
ddb_result ddb_table_desc_from_json(const cJSON *resp, const char *table,
                                    ddb_table_desc **out, ddb_error *err) {
  const cJSON *t, *defs, *gsis, *lsis, *x;
  ddb_table_desc *d = NULL;
  ddb_result result = DDB_OK;
  int n, i = 1, pass;

  *out = NULL;
  t = cJSON_GetObjectItemCaseSensitive(resp, "Table");
  defs = cJSON_GetObjectItemCaseSensitive(t, "AttributeDefinitions");
  gsis = cJSON_GetObjectItemCaseSensitive(t, "GlobalSecondaryIndexes");
  lsis = cJSON_GetObjectItemCaseSensitive(t, "LocalSecondaryIndexes");
  n = 1 + cJSON_GetArraySize(gsis) + cJSON_GetArraySize(lsis);
  d = calloc(1, sizeof(*d));
  if(d)
    d->indexes = calloc((size_t)n, sizeof(ddb_index));
  if(!d || !d->indexes) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  d->n_indexes = n;
  d->name = dup_json_str(cJSON_GetObjectItemCaseSensitive(t, "TableName"));
  x = cJSON_GetObjectItemCaseSensitive(t, "ItemCount");
  d->item_count = json_count(x, -1);
  x = cJSON_GetObjectItemCaseSensitive(t, "TableSizeBytes");
  d->size_bytes = json_count(x, -1);
  if(describe_extras(t, d)) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  if(!d->name ||
     parse_keys(cJSON_GetObjectItemCaseSensitive(t, "KeySchema"), defs,
                &d->indexes[0]) ||
     d->indexes[0].n_pk > 1 || d->indexes[0].n_sk > 1) {
    result =
        ddb_error_set(err, DDB_ERR_PARSE,
                      "DescribeTable of '%.200s': malformed answer", table);
    goto fail;
  }
  for(pass = 0; pass < 2; pass++) {
    cJSON_ArrayForEach(x, (pass == 0 ? gsis : lsis)) {
      ddb_index *idx = &d->indexes[i++];
      idx->is_local = pass == 1;
      idx->name =
          dup_json_str(cJSON_GetObjectItemCaseSensitive(x, "IndexName"));
      if(!idx->name ||
         parse_keys(cJSON_GetObjectItemCaseSensitive(x, "KeySchema"), defs,
                    idx) ||
         (idx->is_local && (idx->n_pk > 1 || idx->n_sk > 1)) ||
         !keys_distinct(idx) ||
         parse_projection(cJSON_GetObjectItemCaseSensitive(x, "Projection"),
                          idx)) {
        result =
            ddb_error_set(err, DDB_ERR_PARSE,
                          "DescribeTable of '%.200s': malformed index", table);
        goto fail;
      }
    }
  }
  /* DynamoDB lists indexes in no fixed order: sort each kind by name so
  ** that columns and plans are the same on every connection */
  if(cJSON_GetArraySize(gsis) > 1)
    qsort(d->indexes + 1, (size_t)cJSON_GetArraySize(gsis), sizeof(ddb_index),
          index_cmp);
  if(cJSON_GetArraySize(lsis) > 1)
    qsort(d->indexes + 1 + cJSON_GetArraySize(gsis),
          (size_t)cJSON_GetArraySize(lsis), sizeof(ddb_index), index_cmp);
  *out = d;
  d = NULL;

fail:
  ddb_table_desc_free(d);
  return result;
}

/* See ddb_client_int.h: one call of operation naming table alone. */
ddb_result ddb_table_call(ddb_client *c, const char *operation,
                          const char *table, cJSON **resp, ddb_error *err) {
  ddb_buf body;
  ddb_result result;
  call_info ci = {.operation = operation, .table = table};

  *resp = NULL;
  ddb_buf_init(&body, 4096);
  ddb_buf_adds(&body, "{\"TableName\":");
  ddb_buf_json_str(&body, table, strlen(table));
  ddb_buf_addc(&body, '}');
  if(body.failed)
    result = ddb_error_set(err, DDB_ERR_INPUT, "table name too long");
  else
    result = ddb_http_call(c, &ci, body.p, body.len, resp, err);
  ddb_buf_free(&body);
  return result;
}

/* DescribeTable of table into *out (see ddb_client.h). */
ddb_result ddb_describe_table(ddb_client *c, const char *table,
                              ddb_table_desc **out, ddb_error *err) {
  cJSON *resp = NULL;
  ddb_result result;

  *out = NULL;
  result = ddb_table_call(c, "DescribeTable", table, &resp, err);
  if(result == DDB_OK)
    result = ddb_table_desc_from_json(resp, table, out, err);
  cJSON_Delete(resp);
  return result;
}

/* ------------------------------------------------------------------------
** ListTables and DescribeTimeToLive (dynamodb_tables)
*/

/* See ddb_client.h. */
void ddb_strv_free(char **names, int n) {
  int i;
  for(i = 0; names && i < n; i++)
    free(names[i]);
  free(names);
}

/* The names of ListTables' TableNames array a, copied: *v (k of them,
** *k set as they are copied, the caller's to free with ddb_strv_free
** either way).  Returns DDB_OK, or DDB_ERR_PARSE for a name that is no
** string, DDB_ERR_NOMEM. */
static ddb_result table_names(const cJSON *a, char ***v, int *k,
                              ddb_error *err) {
  const cJSON *x;
  int cap = cJSON_GetArraySize(a);
  *v = calloc((size_t)(cap ? cap : 1), sizeof(**v));
  if(!*v)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  cJSON_ArrayForEach(x, a) {
    const char *z = cJSON_GetStringValue(x);
    if(!z || *k >= cap)
      return ddb_error_set(err, DDB_ERR_PARSE,
                           "malformed response to ListTables: a name that "
                           "is no string");
    if(!((*v)[*k] = ddb_strdup(z)))
      return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    (*k)++;
  }
  return DDB_OK;
}

/* See ddb_client.h: the request, the call, the names, the name to go on
** from (never the one it started from). */
ddb_result ddb_list_tables(ddb_client *c, const char *start, int limit,
                           char ***names, int *n, char **last,
                           ddb_error *err) {
  ddb_buf body;
  cJSON *resp = NULL;
  const cJSON *a, *x;
  ddb_result result;
  call_info ci = {.operation = "ListTables", .table = ""};
  char **v = NULL;
  int k = 0;

  *names = NULL;
  *n = 0;
  *last = NULL;
  ddb_buf_init(&body, 4096);
  ddb_buf_addf(&body, "{\"Limit\":%d",
               limit < 1     ? 1
               : limit > 100 ? 100
                             : limit);
  if(start) {
    ddb_buf_adds(&body, ",\"ExclusiveStartTableName\":");
    ddb_buf_json_str(&body, start, strlen(start));
  }
  ddb_buf_addc(&body, '}');
  if(body.failed) {
    result = ddb_error_set(err, DDB_ERR_INPUT, "table name too long");
    goto fail;
  }
  result = ddb_http_call(c, &ci, body.p, body.len, &resp, err);
  if(result)
    goto fail;
  a = cJSON_GetObjectItemCaseSensitive(resp, "TableNames");
  if(!cJSON_IsArray(a)) {
    result = ddb_error_set(err, DDB_ERR_PARSE,
                           "malformed response to ListTables: no TableNames");
    goto fail;
  }
  result = table_names(a, &v, &k, err);
  if(result)
    goto fail;
  x = cJSON_GetObjectItemCaseSensitive(resp, "LastEvaluatedTableName");
  if(cJSON_GetStringValue(x)) {
    /* DynamoDB's LastEvaluatedTableName is the page's last name: a server
    ** that names another (an empty page's, the page's start again, a name
    ** never listed) could be read forever */
    if(k == 0 || strcmp(cJSON_GetStringValue(x), v[k - 1]) != 0) {
      result = ddb_error_set(err, DDB_ERR_PARSE,
                             "malformed response to ListTables: its "
                             "LastEvaluatedTableName is not the last name of "
                             "its page");
      goto fail;
    }
    if(!(*last = ddb_strdup(cJSON_GetStringValue(x)))) {
      result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
      goto fail;
    }
  }
  *names = v;
  *n = k;
  v = NULL;

fail:
  ddb_strv_free(v, k);
  cJSON_Delete(resp);
  ddb_buf_free(&body);
  return result;
}

/* See ddb_client.h. */
ddb_result ddb_describe_ttl(ddb_client *c, const char *table, char **attr,
                            char **status, ddb_error *err) {
  cJSON *resp = NULL;
  const cJSON *d;
  const char *z;
  ddb_result result;

  *attr = *status = NULL;
  result = ddb_table_call(c, "DescribeTimeToLive", table, &resp, err);
  if(result)
    goto fail;
  d = cJSON_GetObjectItemCaseSensitive(resp, "TimeToLiveDescription");
  z = cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(d, "AttributeName"));
  if(z && !(*attr = ddb_strdup(z))) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  z = cJSON_GetStringValue(
      cJSON_GetObjectItemCaseSensitive(d, "TimeToLiveStatus"));
  if(!(*status = ddb_strdup(z ? z : "DISABLED"))) {
    free(*attr);
    *attr = NULL;
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  }

fail:
  cJSON_Delete(resp);
  return result;
}
