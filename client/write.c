/*
** write.c -- PutItem, UpdateItem, DeleteItem, TransactWriteItems and
** BatchWriteItem.
**
** Conditions and updates name every attribute through
** ExpressionAttributeNames (#a0, #a1, ...) and every value through
** ExpressionAttributeValues (:v0, ...), so reserved words and odd names
** are safe.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddb_client_int.h"

/* DynamoDB's longest UpdateExpression, in bytes. */
#define UPDATE_EXPRESSION_MAX 4096

/* Append prefix and then the decimal n (>= 0), e.g. "#a" 12 -> "#a12":
** the names and values of expressions, written without printf (a bulk
** write builds thousands). */
static void add_ref(ddb_buf *b, const char *prefix, int n) {
  char num[12];
  int i = (int)sizeof(num);
  ddb_buf_adds(b, prefix);
  do {
    num[--i] = (char)('0' + n % 10);
    n /= 10;
  } while(n > 0 && i > 0);
  ddb_buf_add(b, num + i, sizeof(num) - (size_t)i);
}

/* DynamoDB's longest ConditionExpression, in bytes, and the operators
** (comparisons, AND, functions) one may hold, as for an UpdateExpression. */
#define CONDITION_EXPRESSION_MAX 4096
#define CONDITION_OPERATORS_MAX  300

/* A write's condition, built apart (cond_build) and then laid into the
** request: the ConditionExpression, and the names (#cN) and values (:cN)
** it adds to ExpressionAttributeNames and ExpressionAttributeValues (each
** a list of "key":value members, without braces; the key names #kN are
** the caller's). */
typedef struct cond_parts {
  ddb_buf expr, names, vals;
  int n_name, n_val, n_op;
} cond_parts;

static void cond_free(cond_parts *cp) {
  ddb_buf_free(&cp->expr);
  ddb_buf_free(&cp->names);
  ddb_buf_free(&cp->vals);
}

/* Append " AND " between terms of cp's expression. */
static void cond_and(cond_parts *cp) {
  if(cp->expr.len) {
    ddb_buf_adds(&cp->expr, " AND ");
    cp->n_op++;
  }
}

/* A new name placeholder #cN for name[0..n): appended to path. */
static void cond_name(cond_parts *cp, ddb_buf *path, const char *name,
                      size_t n) {
  add_ref(path, "#c", cp->n_name);
  add_ref(&cp->names, cp->n_name ? ",\"#c" : "\"#c", cp->n_name);
  ddb_buf_add(&cp->names, "\":", 2);
  ddb_buf_json_str(&cp->names, name, n);
  cp->n_name++;
}

/* A new value placeholder :cN for av (or, with av NULL, the typed JSON
** text z): appended to the expression. */
static void cond_value(cond_parts *cp, const ddb_av *av, const char *z) {
  add_ref(&cp->expr, ":c", cp->n_val);
  add_ref(&cp->vals, cp->n_val ? ",\":c" : "\":c", cp->n_val);
  ddb_buf_add(&cp->vals, "\":", 2);
  if(av)
    ddb_av_to_typed_json(av, &cp->vals);
  else
    ddb_buf_adds(&cp->vals, z);
  cp->n_val++;
}

/* The terms that say the document path path holds av: path = :cN; with
** deep, a map or a list member by member (size(path) = :cN, each member
** at path.#cM or path[i]; an empty one by its type), which is what
** servers that compare documents with = wrongly agree on too. */
static void cond_terms(cond_parts *cp, ddb_buf *path, const ddb_av *av,
                       int deep) {
  size_t at = path->len;
  uint32_t i;
  char z[48];
  if(!deep || (av->type != DDB_M && av->type != DDB_L)) {
    cond_and(cp);
    ddb_buf_add(&cp->expr, path->p, path->len);
    ddb_buf_adds(&cp->expr, " = ");
    cond_value(cp, av, NULL);
    cp->n_op++;
    return;
  }
  cond_and(cp);
  ddb_buf_adds(&cp->expr, "size(");
  ddb_buf_add(&cp->expr, path->p, path->len);
  ddb_buf_adds(&cp->expr, ") = ");
  snprintf(z, sizeof(z), "{\"N\":\"%u\"}", (unsigned)av->n);
  cond_value(cp, NULL, z);
  cp->n_op += 2;
  if(av->n == 0) {
    cond_and(cp);
    ddb_buf_adds(&cp->expr, "attribute_type(");
    ddb_buf_add(&cp->expr, path->p, path->len);
    ddb_buf_adds(&cp->expr, ", ");
    cond_value(cp, NULL,
               av->type == DDB_M ? "{\"S\":\"M\"}" : "{\"S\":\"L\"}");
    ddb_buf_addc(&cp->expr, ')');
    cp->n_op++;
  }
  for(i = 0; i < av->n; i++) {
    const ddb_av *k = &av->kids[i];
    if(av->type == DDB_M) {
      ddb_buf_addc(path, '.');
      cond_name(cp, path, k->name, k->name_len);
    } else {
      add_ref(path, "[", (int)i);
      ddb_buf_addc(path, ']');
    }
    cond_terms(cp, path, k, deep);
    path->len = at;
    if(path->p)
      path->p[at] = 0;
  }
}

/* Is name one of the key attributes? */
static int is_key_name(const char *name, const char *const *key_names,
                       int n_key) {
  int i;
  for(i = 0; i < n_key; i++)
    if(strcmp(name, key_names[i]) == 0)
      return 1;
  return 0;
}

/* Build the condition cond (over the key attributes #k0.., and for
** DDB_COND_SAME every other attribute of expect, deep as cond_terms)
** into *cp (cond_free it, whatever the result).  Returns DDB_OK,
** DDB_ERR_NOMEM, or DDB_ERR_INPUT when it is over DynamoDB's limits. */
static ddb_result cond_try(cond_parts *cp, ddb_cond cond,
                           const ddb_item *expect,
                           const char *const *key_names, int n_key, int deep) {
  ddb_buf path;
  uint32_t i;
  int k;
  memset(cp, 0, sizeof(*cp));
  ddb_buf_init(&cp->expr, DDB_REQUEST_MAX);
  ddb_buf_init(&cp->names, DDB_REQUEST_MAX);
  ddb_buf_init(&cp->vals, DDB_REQUEST_MAX);
  if(cond == DDB_COND_NONE)
    return DDB_OK;
  for(k = 0; k < n_key; k++) {
    cond_and(cp);
    ddb_buf_adds(&cp->expr, cond == DDB_COND_NOT_EXISTS
                                ? "attribute_not_exists"
                                : "attribute_exists");
    add_ref(&cp->expr, "(#k", k);
    ddb_buf_addc(&cp->expr, ')');
    cp->n_op++;
  }
  if(cond == DDB_COND_SAME && expect) {
    ddb_buf_init(&path, DDB_REQUEST_MAX);
    for(i = 0; i < expect->root.n; i++) {
      const ddb_av *a = &expect->root.kids[i];
      if(is_key_name(a->name, key_names, n_key))
        continue;
      ddb_buf_reset(&path);
      cond_name(cp, &path, a->name, a->name_len);
      cond_terms(cp, &path, a, deep);
      if(cp->expr.len > CONDITION_EXPRESSION_MAX ||
         cp->n_op > CONDITION_OPERATORS_MAX)
        break;
    }
    k = path.failed;
    ddb_buf_free(&path);
    if(k)
      return DDB_ERR_NOMEM;
  }
  if(cp->expr.failed || cp->names.failed || cp->vals.failed || !cp->expr.p)
    return DDB_ERR_NOMEM;
  if(cp->expr.len > CONDITION_EXPRESSION_MAX ||
     cp->n_op > CONDITION_OPERATORS_MAX)
    return DDB_ERR_INPUT;
  return DDB_OK;
}

/* Build the condition of a write (see cond_try): maps and lists member
** by member when that fits, else whole.  Returns DDB_OK, or an error set
** on err (DDB_ERR_INPUT: too big for DynamoDB even so). */
static ddb_result cond_build(cond_parts *cp, ddb_cond cond,
                             const ddb_item *expect,
                             const char *const *key_names, int n_key,
                             ddb_error *err) {
  ddb_result r = cond_try(cp, cond, expect, key_names, n_key, 1);
  if(r == DDB_ERR_INPUT) {
    cond_free(cp);
    r = cond_try(cp, cond, expect, key_names, n_key, 0);
  }
  if(r == DDB_ERR_NOMEM)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  if(r)
    return ddb_error_set(
        err, DDB_ERR_INPUT,
        "the item has %u attributes: a write conditioned on every one of "
        "them, as read, is over DynamoDB's %d bytes or %d operators for a "
        "ConditionExpression",
        (unsigned)(expect ? expect->root.n : 0), CONDITION_EXPRESSION_MAX,
        CONDITION_OPERATORS_MAX);
  return DDB_OK;
}

ddb_result ddb_condition_check(const ddb_item *expect,
                               const char *const *key_names, int n_key,
                               ddb_error *err) {
  cond_parts cp;
  ddb_result r = cond_build(&cp, DDB_COND_SAME, expect, key_names, n_key, err);
  cond_free(&cp);
  return r;
}

/* Append the ExpressionAttributeNames of the key attributes (#k0 ..),
** without the braces. */
static void add_key_names(ddb_buf *b, const char *const *key_names,
                          int n_key) {
  int i;
  for(i = 0; i < n_key; i++) {
    add_ref(b, i ? ",\"#k" : "\"#k", i);
    ddb_buf_add(b, "\":", 2);
    ddb_buf_json_str(b, key_names[i], strlen(key_names[i]));
  }
}

/* Append ,"ConditionExpression":...,"ExpressionAttributeNames":{...}
** (and its values) of the built condition cp (nothing for none). */
static void add_condition(ddb_buf *b, const cond_parts *cp,
                          const char *const *key_names, int n_key) {
  if(!cp->expr.len)
    return;
  ddb_buf_adds(b, ",\"ConditionExpression\":");
  ddb_buf_json_str(b, cp->expr.p, cp->expr.len);
  ddb_buf_adds(b, ",\"ExpressionAttributeNames\":{");
  add_key_names(b, key_names, n_key);
  if(cp->names.len) {
    ddb_buf_addc(b, ',');
    ddb_buf_add(b, cp->names.p, cp->names.len);
  }
  ddb_buf_addc(b, '}');
  if(cp->vals.len) {
    ddb_buf_adds(b, ",\"ExpressionAttributeValues\":{");
    ddb_buf_add(b, cp->vals.p, cp->vals.len);
    ddb_buf_addc(b, '}');
  }
}

/* Append the key attributes of item as a Key map. */
static int add_key(ddb_buf *b, const ddb_item *item,
                   const char *const *key_names, int n_key) {
  int i;
  ddb_buf_addc(b, '{');
  for(i = 0; i < n_key; i++) {
    const ddb_av *a = ddb_item_get(item, key_names[i]);
    if(!a)
      return -1;
    if(i)
      ddb_buf_addc(b, ',');
    ddb_buf_json_str(b, key_names[i], strlen(key_names[i]));
    ddb_buf_addc(b, ':');
    ddb_av_to_typed_json(a, b);
  }
  return ddb_buf_addc(b, '}');
}

/* Start the body of the single-item operation op on table's item key:
** {"TableName":...,"Key":{...}.  Returns DDB_OK, or a DDB_ERR_INPUT naming
** op when key lacks a key attribute (b is then freed). */
static ddb_result start_keyed(ddb_buf *b, const char *op, const char *table,
                              const ddb_item *key,
                              const char *const *key_names, int n_key,
                              ddb_error *err) {
  ddb_buf_init(b, DDB_REQUEST_MAX);
  ddb_buf_adds(b, "{\"TableName\":");
  ddb_buf_json_str(b, table, strlen(table));
  ddb_buf_adds(b, ",\"Key\":");
  if(add_key(b, key, key_names, n_key)) {
    ddb_buf_free(b);
    return ddb_error_set(err, DDB_ERR_INPUT, "%s: key incomplete", op);
  }
  return DDB_OK;
}

/* Decode the attribute map `name` of resp into *out (NULL if absent). */
static ddb_result take_item(const cJSON *resp, const char *name,
                            ddb_item **out, ddb_error *err) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(resp, name);
  *out = NULL;
  if(!x || (cJSON_IsObject(x) && !x->child))
    return DDB_OK;
  return ddb_item_decode(x, out, err);
}

static ddb_result send_write(ddb_client *c, const char *op, const char *table,
                             ddb_buf *body, cJSON **resp, ddb_error *err) {
  if(body->failed)
    return ddb_error_set(err, DDB_ERR_INPUT, "%s request too large", op);
  return ddb_call(c, op, table, NULL, 0, body->p, body->len, resp, err);
}

/* Close body b, send it as op, and give the answer's Attributes to *item
** (when item is not NULL).  Frees b. */
static ddb_result send_and_take(ddb_client *c, const char *op,
                                const char *table, ddb_buf *b, ddb_item **item,
                                ddb_error *err) {
  cJSON *resp = NULL;
  ddb_result result;
  ddb_buf_adds(b, ",\"ReturnConsumedCapacity\":\"TOTAL\"}");
  result = send_write(c, op, table, b, &resp, err);
  if(result == DDB_OK && item)
    result = take_item(resp, "Attributes", item, err);
  cJSON_Delete(resp);
  ddb_buf_free(b);
  return result;
}

ddb_result ddb_put_item(ddb_client *c, const char *table, const ddb_item *item,
                        const char *const *key_names, int n_key, ddb_cond cond,
                        const ddb_item *expect, ddb_item **old,
                        ddb_error *err) {
  ddb_buf b;
  cond_parts cp;
  ddb_result r;
  if(old)
    *old = NULL;
  r = cond_build(&cp, cond, expect, key_names, n_key, err);
  if(r) {
    cond_free(&cp);
    return r;
  }
  ddb_buf_init(&b, DDB_REQUEST_MAX);
  ddb_buf_adds(&b, "{\"TableName\":");
  ddb_buf_json_str(&b, table, strlen(table));
  ddb_buf_adds(&b, ",\"Item\":");
  ddb_item_to_typed_json(item, &b);
  add_condition(&b, &cp, key_names, n_key);
  cond_free(&cp);
  if(old)
    ddb_buf_adds(&b, ",\"ReturnValues\":\"ALL_OLD\"");
  /* a retry after a lost answer finds our own item: http.c compares */
  if(cond == DDB_COND_NOT_EXISTS)
    ddb_buf_adds(&b, ",\"ReturnValuesOnConditionCheckFailure\":\"ALL_OLD\"");
  return send_and_take(c, "PutItem", table, &b, old, err);
}

ddb_result ddb_delete_item(ddb_client *c, const char *table,
                           const ddb_item *key, const char *const *key_names,
                           int n_key, ddb_cond cond, const ddb_item *expect,
                           ddb_item **old, ddb_error *err) {
  ddb_buf b;
  cond_parts cp;
  ddb_result r;
  if(old)
    *old = NULL;
  r = cond_build(&cp, cond, expect, key_names, n_key, err);
  if(r) {
    cond_free(&cp);
    return r;
  }
  if(start_keyed(&b, "DeleteItem", table, key, key_names, n_key, err)) {
    cond_free(&cp);
    return DDB_ERR_INPUT;
  }
  add_condition(&b, &cp, key_names, n_key);
  cond_free(&cp);
  if(old)
    ddb_buf_adds(&b, ",\"ReturnValues\":\"ALL_OLD\"");
  return send_and_take(c, "DeleteItem", table, &b, old, err);
}

/* Append ,"UpdateExpression":...,"ConditionExpression":...,
** "ExpressionAttributeNames":{...},"ExpressionAttributeValues":{...} of an
** update that SETs every attribute of set (may be NULL) and REMOVEs
** remove[0..n_remove), on the built condition cp (the item exists, or is
** as it was read: an UPDATE changes rows, it never creates one).  Returns
** the UpdateExpression's length: DynamoDB refuses one over
** UPDATE_EXPRESSION_MAX. */
static size_t add_update(ddb_buf *b, const char *const *key_names, int n_key,
                         const ddb_item *set, const char *const *remove,
                         int n_remove, const cond_parts *cp) {
  uint32_t i;
  int k, n_set = set ? (int)set->root.n : 0;
  size_t start, len;
  ddb_buf_adds(b, ",\"UpdateExpression\":\"");
  start = b->len;
  if(n_set) {
    ddb_buf_adds(b, "SET ");
    for(k = 0; k < n_set; k++) {
      add_ref(b, k ? ", #a" : "#a", k);
      add_ref(b, " = :v", k);
    }
  }
  if(n_remove) {
    ddb_buf_adds(b, n_set ? " REMOVE " : "REMOVE ");
    for(k = 0; k < n_remove; k++)
      add_ref(b, k ? ", #a" : "#a", n_set + k);
  }
  len = b->len - start;
  ddb_buf_adds(b, "\",\"ConditionExpression\":");
  ddb_buf_json_str(b, cp->expr.p ? cp->expr.p : "", cp->expr.len);
  ddb_buf_adds(b, ",\"ExpressionAttributeNames\":{");
  add_key_names(b, key_names, n_key);
  for(i = 0; i < (uint32_t)n_set; i++) {
    add_ref(b, ",\"#a", (int)i);
    ddb_buf_add(b, "\":", 2);
    ddb_buf_json_str(b, set->root.kids[i].name, set->root.kids[i].name_len);
  }
  for(k = 0; k < n_remove; k++) {
    add_ref(b, ",\"#a", n_set + k);
    ddb_buf_add(b, "\":", 2);
    ddb_buf_json_str(b, remove[k], strlen(remove[k]));
  }
  if(cp->names.len) {
    ddb_buf_addc(b, ',');
    ddb_buf_add(b, cp->names.p, cp->names.len);
  }
  ddb_buf_addc(b, '}');
  if(n_set || cp->vals.len) {
    ddb_buf_adds(b, ",\"ExpressionAttributeValues\":{");
    for(i = 0; i < (uint32_t)n_set; i++) {
      add_ref(b, i ? ",\":v" : "\":v", (int)i);
      ddb_buf_add(b, "\":", 2);
      ddb_av_to_typed_json(&set->root.kids[i], b);
    }
    if(cp->vals.len) {
      if(n_set)
        ddb_buf_addc(b, ',');
      ddb_buf_add(b, cp->vals.p, cp->vals.len);
    }
    ddb_buf_addc(b, '}');
  }
  return len;
}

/* The error for an update whose UpdateExpression has len bytes. */
static ddb_result update_too_big(ddb_error *err, size_t len, int n_set,
                                 int n_remove) {
  return ddb_error_set(err, DDB_ERR_INPUT,
                       "an update of %d attributes needs an UpdateExpression "
                       "of %zu bytes, over DynamoDB's %d: write the whole "
                       "item instead (INSERT OR REPLACE)",
                       n_set + n_remove, len, UPDATE_EXPRESSION_MAX);
}

ddb_result ddb_update_item(ddb_client *c, const char *table,
                           const ddb_item *key, const char *const *key_names,
                           int n_key, const ddb_item *set,
                           const char *const *remove, int n_remove,
                           ddb_cond cond, const ddb_item *expect,
                           ddb_item **updated, ddb_error *err) {
  ddb_buf b;
  cJSON *resp = NULL;
  ddb_result result;
  cond_parts cp;
  size_t len;
  if(updated)
    *updated = NULL;
  if(cond != DDB_COND_SAME)
    cond = DDB_COND_EXISTS;
  result = cond_build(&cp, cond, expect, key_names, n_key, err);
  if(result == DDB_OK &&
     start_keyed(&b, "UpdateItem", table, key, key_names, n_key, err))
    result = DDB_ERR_INPUT;
  if(result) {
    cond_free(&cp);
    return result;
  }
  len = add_update(&b, key_names, n_key, set, remove, n_remove, &cp);
  cond_free(&cp);
  if(len > UPDATE_EXPRESSION_MAX) {
    ddb_buf_free(&b);
    return update_too_big(err, len, set ? (int)set->root.n : 0, n_remove);
  }
  ddb_buf_adds(&b, ",\"ReturnValues\":\"ALL_NEW\","
                   "\"ReturnConsumedCapacity\":\"TOTAL\"}");
  result = send_write(c, "UpdateItem", table, &b, &resp, err);
  if(result == DDB_OK && updated)
    result = take_item(resp, "Attributes", updated, err);
  cJSON_Delete(resp);
  ddb_buf_free(&b);
  return result;
}

ddb_result ddb_transact_write(ddb_client *c, const char *table,
                              const ddb_write *w, int n,
                              const char *const *keys, int nk,
                              ddb_error *err) {
  ddb_buf b;
  cJSON *resp = NULL;
  ddb_result result;
  int i;
  char token[40];
  unsigned char rnd[14];
  if(n > DDB_TRANSACT_MAX)
    return ddb_error_set(err, DDB_ERR_INPUT,
                         "TransactWriteItems takes at most %d items, got %d",
                         DDB_TRANSACT_MAX, n);
  /* the token makes a retry of this exact request idempotent (DynamoDB
  ** remembers it for 10 minutes), so a lost answer never writes twice; it
  ** must be unique across clients too (the same token on another
  ** transaction fails it, or on an identical one skips it): 112 random
  ** bits from the kernel */
  ddb_random_bytes(rnd, sizeof(rnd));
  memcpy(token, "sqlite-", 7);
  for(i = 0; i < (int)sizeof(rnd); i++) {
    token[7 + 2 * i] = "0123456789abcdef"[rnd[i] >> 4];
    token[8 + 2 * i] = "0123456789abcdef"[rnd[i] & 15];
  }
  token[7 + 2 * sizeof(rnd)] = 0;
  ddb_buf_init(&b, DDB_REQUEST_MAX);
  ddb_buf_adds(&b, "{\"TransactItems\":[");
  for(i = 0; i < n; i++) {
    /* the write's own table, in a transaction across tables */
    const char *tname = w[i].d ? w[i].d->name : table;
    const char *const *key_names = w[i].d ? w[i].key_names : keys;
    int n_key = w[i].d ? w[i].n_key : nk;
    if(i)
      ddb_buf_addc(&b, ',');
    ddb_buf_adds(&b, w[i].kind == DDB_WRITE_PUT      ? "{\"Put\":{"
                     : w[i].kind == DDB_WRITE_UPDATE ? "{\"Update\":{"
                                                     : "{\"Delete\":{");
    ddb_buf_adds(&b, "\"TableName\":");
    ddb_buf_json_str(&b, tname, strlen(tname));
    if(w[i].kind == DDB_WRITE_PUT) {
      ddb_buf_adds(&b, ",\"Item\":");
      ddb_item_to_typed_json(w[i].item, &b);
    } else {
      ddb_buf_adds(&b, ",\"Key\":");
      if(add_key(&b, w[i].item, key_names, n_key)) {
        ddb_buf_free(&b);
        return ddb_error_set(err, DDB_ERR_INPUT, "item %d: key incomplete",
                             i + 1);
      }
    }
    {
      cond_parts cp;
      ddb_cond cond = w[i].cond;
      if(w[i].kind == DDB_WRITE_UPDATE && cond != DDB_COND_SAME)
        cond = DDB_COND_EXISTS;
      result = cond_build(&cp, cond, w[i].expect, key_names, n_key, err);
      if(result) {
        cond_free(&cp);
        ddb_buf_free(&b);
        if(err)
          ddb_error_set(err, result, "item %d: %s", i + 1, err->message);
        return result;
      }
      if(w[i].kind == DDB_WRITE_UPDATE) {
        size_t len = add_update(&b, key_names, n_key, w[i].set, w[i].remove,
                                w[i].n_remove, &cp);
        if(len > UPDATE_EXPRESSION_MAX) {
          cond_free(&cp);
          ddb_buf_free(&b);
          return update_too_big(err, len, w[i].set ? (int)w[i].set->root.n : 0,
                                w[i].n_remove);
        }
      } else {
        add_condition(&b, &cp, key_names, n_key);
      }
      cond_free(&cp);
    }
    ddb_buf_adds(&b, "}}");
  }
  ddb_buf_adds(&b, "],\"ClientRequestToken\":");
  ddb_buf_json_str(&b, token, strlen(token));
  ddb_buf_adds(&b, ",\"ReturnConsumedCapacity\":\"TOTAL\"}");
  result = send_write(c, "TransactWriteItems", table, &b, &resp, err);
  cJSON_Delete(resp);
  ddb_buf_free(&b);
  return result;
}

/* Append the BatchWriteItem body of the writes w[k] with pend[k] set
** (k < m) to b, reset first.  Returns DDB_OK, or DDB_ERR_INPUT naming
** write base + k + 1 when its key is incomplete. */
static ddb_result batch_body(ddb_buf *b, const char *table, const ddb_write *w,
                             const unsigned char *pend, size_t m, size_t base,
                             const char *const *key_names, int n_key,
                             ddb_error *err) {
  size_t k;
  int first = 1;
  ddb_buf_reset(b);
  ddb_buf_adds(b, "{\"RequestItems\":{");
  ddb_buf_json_str(b, table, strlen(table));
  ddb_buf_adds(b, ":[");
  for(k = 0; k < m; k++) {
    if(!pend[k])
      continue;
    if(!first)
      ddb_buf_addc(b, ',');
    first = 0;
    if(w[k].kind == DDB_WRITE_PUT) {
      ddb_buf_adds(b, "{\"PutRequest\":{\"Item\":");
      ddb_item_to_typed_json(w[k].item, b);
    } else {
      ddb_buf_adds(b, "{\"DeleteRequest\":{\"Key\":");
      if(add_key(b, w[k].item, key_names, n_key))
        return ddb_error_set(err, DDB_ERR_INPUT, "item %zu: key incomplete",
                             base + k + 1);
    }
    ddb_buf_adds(b, "}}");
  }
  ddb_buf_adds(b, "]},\"ReturnConsumedCapacity\":\"TOTAL\"}");
  return DDB_OK;
}

/* Does the typed item x have the table key of item it? */
static int same_key(const ddb_item *x, const ddb_item *it,
                    const char *const *key_names, int n_key) {
  int i;
  for(i = 0; i < n_key; i++) {
    const ddb_av *a = ddb_item_get(x, key_names[i]);
    const ddb_av *e = ddb_item_get(it, key_names[i]);
    if(!a || !e || !ddb_av_equal(a, e))
      return 0;
  }
  return 1;
}

/* The UnprocessedItems of table in the BatchWriteItem answer resp (NULL:
** none): keyed by the table as asked, or, for a table asked for by its
** ARN, by its name (as DynamoDB Local keys its answers). */
static const cJSON *unprocessed_of(const cJSON *resp, const char *table) {
  const cJSON *u = cJSON_GetObjectItemCaseSensitive(resp, "UnprocessedItems");
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(u, table);
  if(!x && ddb_arn_is(table))
    x = cJSON_GetObjectItemCaseSensitive(u, ddb_arn_table_name(table));
  return x;
}

/* Mark in still[k] (k < m) the pending writes (pend[k]) that the answer's
** UnprocessedItems un (an array, or NULL) hands back; *n_un is how many.
** Returns DDB_OK, or DDB_ERR_PARSE when it names a write that was not
** pending (a server that answers what was not asked). */
static ddb_result batch_unprocessed(const cJSON *un, const ddb_write *w,
                                    const unsigned char *pend,
                                    unsigned char *still, size_t m,
                                    const char *const *key_names, int n_key,
                                    int *n_un, ddb_error *err) {
  const cJSON *x;
  size_t k;
  *n_un = 0;
  memset(still, 0, m);
  cJSON_ArrayForEach(x, un) {
    const cJSON *put = cJSON_GetObjectItemCaseSensitive(x, "PutRequest");
    const cJSON *del = cJSON_GetObjectItemCaseSensitive(x, "DeleteRequest");
    const cJSON *img = put ? cJSON_GetObjectItemCaseSensitive(put, "Item")
                           : cJSON_GetObjectItemCaseSensitive(del, "Key");
    ddb_item *it = NULL;
    ddb_error e2;
    ddb_error_clear(&e2);
    if(!img || ddb_item_decode(img, &it, &e2) || !it) {
      ddb_item_unref(it);
      return ddb_error_set(err, DDB_ERR_PARSE,
                           "BatchWriteItem: an UnprocessedItems entry that "
                           "is not a write");
    }
    for(k = 0; k < m; k++)
      if(pend[k] && !still[k] &&
         (put != NULL) == (w[k].kind == DDB_WRITE_PUT) &&
         same_key(it, w[k].item, key_names, n_key))
        break;
    ddb_item_unref(it);
    if(k == m)
      return ddb_error_set(err, DDB_ERR_PARSE,
                           "BatchWriteItem: UnprocessedItems hands back a "
                           "write that was not sent");
    still[k] = 1;
    (*n_un)++;
  }
  return DDB_OK;
}

ddb_result ddb_batch_write(ddb_client *c, const char *table,
                           const ddb_write *w, size_t n,
                           const char *const *key_names, int n_key,
                           unsigned char *state, ddb_error *err) {
  size_t i = 0, k;
  ddb_result result = DDB_OK;
  unsigned char pend[DDB_BATCH_WRITE_MAX], still[DDB_BATCH_WRITE_MAX];
  ddb_buf b;
  if(state)
    memset(state, DDB_WRITE_NOT_APPLIED, n);
  ddb_buf_init(&b, DDB_REQUEST_MAX);
  while(i < n) {
    size_t m = n - i < DDB_BATCH_WRITE_MAX ? n - i : DDB_BATCH_WRITE_MAX;
    cJSON *resp = NULL;
    int stalls = 0, n_sent = (int)m;
    memset(pend, 1, m);
    /* send, then resend what comes back unprocessed, with backoff; a
    ** call that leaves as many unprocessed as it was sent is a failed
    ** retry, and max_retries of them in a row fail the call */
    for(;;) {
      int n_un;
      result = batch_body(&b, table, w + i, pend, m, i, key_names, n_key, err);
      if(result == DDB_OK)
        result = send_write(c, "BatchWriteItem", table, &b, &resp, err);
      if(result) {
        /* what was still pending is as unknown as the call's answer */
        for(k = 0; state && k < m; k++)
          if(pend[k])
            state[i + k] =
                err->maybe_applied ? DDB_WRITE_MAYBE : DDB_WRITE_NOT_APPLIED;
        goto fail;
      }
      result = batch_unprocessed(unprocessed_of(resp, table), w + i, pend,
                                 still, m, key_names, n_key, &n_un, err);
      cJSON_Delete(resp);
      resp = NULL;
      if(result) {
        for(k = 0; state && k < m; k++)
          if(pend[k])
            state[i + k] = DDB_WRITE_MAYBE;
        goto fail;
      }
      for(k = 0; k < m; k++)
        if(pend[k] && !still[k]) {
          pend[k] = 0;
          if(state)
            state[i + k] = DDB_WRITE_APPLIED;
        }
      if(n_un == 0)
        break;
      stalls = n_un < n_sent ? 0 : stalls + 1;
      n_sent = n_un;
      if(stalls > ddb_client_max_retries(c)) {
        result = ddb_error_set(err, DDB_ERR_SERVICE,
                               "BatchWriteItem: items still unprocessed "
                               "(UnprocessedItems) after %d retries",
                               stalls - 1);
        goto fail;
      }
      result =
          ddb_backoff(c, "BatchWriteItem", stalls > 0 ? stalls : 1, 1, err);
      if(result)
        goto fail;
    }
    i += m;
    continue;
  fail:
    cJSON_Delete(resp);
    break;
  }
  ddb_buf_free(&b);
  return result;
}
