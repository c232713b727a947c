/*
** get.c -- GetItem and BatchGetItem (100 keys a call, UnprocessedKeys
** retried with backoff up to max_retries calls without progress).
*/
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "ddb_client_int.h"
#include "http_int.h"

/* What one answer may be.  GetItem: one item, at most 400 KB as DynamoDB
** sizes it; typed JSON takes at most about 10 bytes of text a byte of a
** large item (names and values of control characters, escaped: 6 bytes
** each, and "name":{"S":"..."} around them), so 8 MB.  BatchGetItem: at
** most 16 MB of items and as many items as keys asked; its text can pass
** 64 MB (http.c's cap) only when its items are mostly control characters:
** then the keys are asked again, fewer at a time (ddb_batch_get), until
** one key's answer (one item) is asked for alone. */
#define GET_ITEM_TEXT_MAX ((size_t)8 << 20)

/* ------------------------------------------------------------------------
** GetItem and BatchGetItem
*/

/* Tokens of an answer's member held on each_member's stack (2 KB): an
** item of a few dozen attributes is tokenized with no malloc; a larger
** one moves to the heap (ddb_tape_init_with). */
#define GET_TOKENS 96

/* Read the members of the JSON object body[0..len) (an answer), each value
** tokenized, through fn(ci, body, name, tape): DDB_OK when all went well,
** fn's error, or DDB_ERR_PARSE with *malformed set when the text is not
** one JSON object. */
static ddb_result each_member(call_info *ci, const char *body, size_t len,
                              ddb_result (*fn)(call_info *ci, const char *body,
                                               const ddb_jtok *name,
                                               const ddb_tape *t,
                                               ddb_error *e),
                              int *malformed, ddb_error *e) {
  ddb_jreader r;
  ddb_jtok name, toks[GET_TOKENS];
  ddb_result result = DDB_OK;
  int rc;

  memset(&r, 0, sizeof(r));
  ddb_tape_init_with(&r.tape, toks, GET_TOKENS);
  rc = ddb_jr_open(&r, body, len) ? -1 : 1;
  while(rc == 1 && (rc = ddb_jr_next(&r, &name)) == 1) {
    if(ddb_jr_value(&r))
      rc = -1;
    else if((result = fn(ci, body, &name, &r.tape, e)) != DDB_OK)
      break;
  }
  if(rc < 0) {
    *malformed = 1;
    result = DDB_ERR_PARSE;
  }
  ddb_tape_free(&r.tape);
  return result;
}

/* each_member()'s handler for GetItem: Item to *(ddb_item **)ci->ud. */
static ddb_result item_member(call_info *ci, const char *body,
                              const ddb_jtok *name, const ddb_tape *t,
                              ddb_error *e) {
  ddb_item **out = ci->ud;
  if(!*out && ddb_tape_eq(body, name, "Item"))
    return ddb_item_from_tape(body, t, 0, out, e);
  if(ddb_tape_eq(body, name, "ConsumedCapacity"))
    ci->consumed = ddb_tape_consumed(t, body);
  return DDB_OK;
}

/* ddb_http_call()'s take for GetItem: the Item (or none) to *(ddb_item **)ci->ud. */
static ddb_result take_item(call_info *ci, const char *body, size_t len,
                            int *malformed, ddb_error *e) {
  ddb_item **out = ci->ud;
  ddb_result result;
  *out = NULL;
  ci->consumed = 0;
  result = each_member(ci, body, len, item_member, malformed, e);
  if(result) {
    ddb_item_unref(*out);
    *out = NULL;
  }
  ci->items = *out ? 1 : 0;
  return result;
}

ddb_result ddb_get_item(ddb_client *c, const char *table, const ddb_item *key,
                        int consistent, ddb_item **out, ddb_error *err) {
  ddb_buf body;
  cJSON *resp = NULL;
  ddb_result result;
  call_info ci = {.operation = "GetItem",
                  .table = table,
                  .take = take_item,
                  .max_body = GET_ITEM_TEXT_MAX};

  *out = NULL;
  ci.ud = out;
  ddb_buf_init(&body, DDB_REQUEST_MAX);
  ddb_buf_adds(&body, "{\"TableName\":");
  ddb_buf_json_str(&body, table, strlen(table));
  ddb_buf_adds(&body, ",\"Key\":");
  ddb_item_to_typed_json(key, &body);
  if(consistent)
    ddb_buf_adds(&body, ",\"ConsistentRead\":true");
  ddb_buf_adds(&body, ",\"ReturnConsumedCapacity\":\"TOTAL\"}");
  if(body.failed) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "request too large");
    goto fail;
  }
  result = ddb_http_call(c, &ci, body.p, body.len, &resp, err);

fail:
  cJSON_Delete(resp);
  ddb_buf_free(&body);
  return result;
}

/* A distinct key of a batch, hashed by its canonical encoding. */
typedef struct batch_key {
  char *enc; /* canonical encoding (hash key) */
  const ddb_item *key;
  ddb_item *found; /* the item, or NULL */
  int done;
  int asked; /* in the call under way */
  int back;  /* that call's answer had it (an item, or unprocessed) */
  UT_hash_handle hh;
} batch_key;

/* What ddb_http_call()'s take for BatchGetItem collects (ci->ud): the items of
** Responses[table] (at most n_asked) and the keys of
** UnprocessedKeys[table].Keys. */
typedef struct batch_take {
  const char *table;
  int n_asked;      /* keys in the request */
  ddb_page *got;    /* items */
  ddb_page *unproc; /* keys, as items */
} batch_take;

/* Decode the items of the array at token i of tape t into a new page *out
** (a non-array is an empty list).  Returns DDB_OK or the decode error. */
static ddb_result tape_items(const char *text, const ddb_tape *t, long i,
                             ddb_page **out, ddb_error *e) {
  ddb_page *p = calloc(1, sizeof(*p));
  ddb_item *it;
  uint32_t j, k;
  int cap = 0;
  ddb_result result;
  *out = NULL;
  if(!p)
    return ddb_error_set(e, DDB_ERR_NOMEM, "out of memory");
  p->refs = 1;
  if(i >= 0 && t->tok[i].type == DDB_JARR)
    for(j = 0, k = (uint32_t)i + 1; j < t->tok[i].n; j++, k = t->tok[k].end) {
      result = ddb_item_from_tape(text, t, k, &it, e);
      if(!result && ddb_page_push(p, &cap, it))
        result = ddb_error_set(e, DDB_ERR_NOMEM, "out of memory");
      if(result) {
        ddb_page_unref(p);
        return result;
      }
    }
  *out = p;
  return DDB_OK;
}

/* each_member()'s handler for BatchGetItem. */
static ddb_result batch_member(call_info *ci, const char *body,
                               const ddb_jtok *name, const ddb_tape *t,
                               ddb_error *e) {
  batch_take *bt = ci->ud;
  long x;
  if(!bt->unproc && ddb_tape_eq(body, name, "UnprocessedKeys")) {
    x = ddb_tape_member(t, body, 0, bt->table);
    if(x < 0 && ddb_arn_is(bt->table)) /* keyed by its name (see below) */
      x = ddb_tape_member(t, body, 0, ddb_arn_table_name(bt->table));
    if(x >= 0)
      x = ddb_tape_member(t, body, (uint32_t)x, "Keys");
    return tape_items(body, t, x, &bt->unproc, e);
  }
  if(ddb_tape_eq(body, name, "ConsumedCapacity"))
    ci->consumed = ddb_tape_consumed(t, body);
  return DDB_OK;
}

/* Read the Responses member, the current one of r: {table: [item, ...]},
** an item at a time, into bt->got.  A correct answer names no other table
** than the one asked about and has at most as many items as keys asked.
** Returns DDB_OK, an error, or DDB_ERR_PARSE with *malformed set. */
static ddb_result take_responses(batch_take *bt, ddb_jreader *r,
                                 const char *body, int *malformed,
                                 ddb_error *e) {
  ddb_jtok name;
  ddb_item *it;
  int rc, cap = 0;
  ddb_result result;
  bt->got = calloc(1, sizeof(*bt->got));
  if(!bt->got)
    return ddb_error_set(e, DDB_ERR_NOMEM, "out of memory");
  bt->got->refs = 1;
  if(ddb_jr_object(r))
    goto malformed;
  while((rc = ddb_jr_next(r, &name)) == 1) {
    /* a table asked for by its ARN: DynamoDB keys the answer by the ARN,
    ** DynamoDB Local (3.3.1) by the table's name */
    if((!ddb_tape_eq(body, &name, bt->table) &&
        (!ddb_arn_is(bt->table) ||
         !ddb_tape_eq(body, &name, ddb_arn_table_name(bt->table)))) ||
       bt->got->n_items > 0)
      return ddb_error_set(e, DDB_ERR_PARSE,
                           "malformed response to BatchGetItem: Responses "
                           "for a table not asked about");
    if(ddb_jr_array(r))
      goto malformed;
    while((rc = ddb_jr_element(r)) == 1) {
      if(bt->got->n_items >= bt->n_asked)
        return ddb_error_set(e, DDB_ERR_PARSE,
                             "malformed response to BatchGetItem: more items "
                             "than the %d keys asked",
                             bt->n_asked);
      result = ddb_item_from_tape(body, &r->tape, 0, &it, e);
      if(result)
        return result;
      if(ddb_page_push(bt->got, &cap, it))
        return ddb_error_set(e, DDB_ERR_NOMEM, "out of memory");
    }
    if(rc < 0)
      goto malformed;
  }
  if(rc == 0)
    return DDB_OK;
malformed:
  *malformed = 1;
  return DDB_ERR_PARSE;
}

/* ddb_http_call()'s take for BatchGetItem: the members of the answer, the
** items of Responses one at a time (take_responses), the others each
** tokenized whole (batch_member). */
static ddb_result take_batch(call_info *ci, const char *body, size_t len,
                             int *malformed, ddb_error *e) {
  batch_take *bt = ci->ud;
  ddb_jreader r;
  ddb_jtok name;
  ddb_result result = DDB_OK;
  int rc;

  ci->consumed = 0;
  memset(&r, 0, sizeof(r));
  rc = ddb_jr_open(&r, body, len) ? -1 : 1;
  while(rc == 1 && (rc = ddb_jr_next(&r, &name)) == 1) {
    if(!bt->got && ddb_tape_eq(body, &name, "Responses"))
      result = take_responses(bt, &r, body, malformed, e);
    else if(ddb_jr_value(&r))
      rc = -1;
    else
      result = batch_member(ci, body, &name, &r.tape, e);
    if(result)
      break;
  }
  if(rc < 0 && !result) {
    *malformed = 1;
    result = DDB_ERR_PARSE;
  }
  if(result && *malformed)
    ddb_error_set(e, DDB_ERR_PARSE,
                  "malformed response to BatchGetItem (%zu bytes)", len);
  if(result) {
    ddb_page_unref(bt->got);
    ddb_page_unref(bt->unproc);
    bt->got = bt->unproc = NULL;
  }
  ddb_tape_free(&r.tape);
  ci->items = bt->got ? bt->got->n_items : 0;
  return result;
}

/* The key of map that item (an item of an answer, or an unprocessed key)
** is, when it was asked in the call under way and not yet given back by
** its answer (it is then marked given back); NULL with err set when not:
** an answer that is not one DynamoDB sends. */
static batch_key *batch_answered(batch_key *map, const ddb_item *item,
                                 const char *const *names, int n_names,
                                 ddb_buf *enc, ddb_error *err) {
  batch_key *bk = NULL;
  ddb_buf_reset(enc);
  if(ddb_key_encode(item, names, n_names, enc)) {
    ddb_error_set(err, DDB_ERR_PARSE,
                  "BatchGetItem returned an item without its key");
    return NULL;
  }
  HASH_FIND(hh, map, enc->p, enc->len, bk);
  if(!bk || !bk->asked || bk->back) {
    ddb_error_set(err, DDB_ERR_PARSE, "malformed response to BatchGetItem: %s",
                  !bk || !bk->asked ? "a key it was not asked for"
                                    : "a key it was asked for once, twice");
    return NULL;
  }
  bk->back = 1;
  return bk;
}

/* Append the BatchGetItem request for keys[0..n) of table to body: each
** key's attributes names[0..n_names) only (DynamoDB refuses any other in a
** key), ConsistentRead when consistent.  Check body->failed after. */
static void batch_body(ddb_buf *body, const char *table, batch_key **keys,
                       int n, const char *const *names, int n_names,
                       int consistent) {
  int i, k;
  ddb_buf_adds(body, "{\"RequestItems\":{");
  ddb_buf_json_str(body, table, strlen(table));
  ddb_buf_adds(body, ":{\"Keys\":[");
  for(i = 0; i < n; i++) {
    if(i)
      ddb_buf_addc(body, ',');
    ddb_buf_addc(body, '{');
    for(k = 0; k < n_names; k++) {
      const ddb_av *a = ddb_item_get(keys[i]->key, names[k]);
      if(k)
        ddb_buf_addc(body, ',');
      ddb_buf_json_str(body, names[k], strlen(names[k]));
      ddb_buf_addc(body, ':');
      if(a)
        ddb_av_to_typed_json(a, body);
    }
    ddb_buf_addc(body, '}');
  }
  ddb_buf_addc(body, ']');
  if(consistent)
    ddb_buf_adds(body, ",\"ConsistentRead\":true");
  ddb_buf_adds(body, "}},\"ReturnConsumedCapacity\":\"TOTAL\"}");
}

/* Mark in map what the answer bt gave back for keys[0..n): each item
** found (a reference taken), every key done unless unprocessed.  Returns
** DDB_OK, or DDB_ERR_PARSE (err set by batch_answered) when an item or an
** unprocessed key is not one asked in this call, once; enc is scratch. */
static ddb_result batch_mark(batch_key *map, const batch_take *bt,
                             batch_key **keys, int n, const char *const *names,
                             int n_names, ddb_buf *enc, ddb_error *err) {
  batch_key *bk;
  int i;
  for(i = 0; bt->got && i < bt->got->n_items; i++) {
    bk = batch_answered(map, bt->got->items[i], names, n_names, enc, err);
    if(!bk)
      return DDB_ERR_PARSE;
    bk->found = ddb_item_ref(bt->got->items[i]);
  }
  /* everything sent is done unless listed as unprocessed */
  for(i = 0; i < n; i++)
    keys[i]->done = 1;
  for(i = 0; bt->unproc && i < bt->unproc->n_items; i++) {
    bk = batch_answered(map, bt->unproc->items[i], names, n_names, enc, err);
    if(!bk)
      return DDB_ERR_PARSE;
    bk->done = 0;
  }
  return DDB_OK;
}

/* Send one BatchGetItem for keys[0..n) and mark what came back; keys that
** come back unprocessed stay !done.  Every item and unprocessed key of the
** answer must be one of keys, once.  *too_large is set when the answer was
** larger than any is taken (then fewer keys a call may do).  On error
** nothing of the call is kept: keys[0..n) are !done, nothing found. */
static ddb_result batch_once(ddb_client *c, const char *table,
                             batch_key **keys, int n, batch_key *map,
                             const char *const *names, int n_names,
                             int consistent, int retry, int *too_large,
                             ddb_error *err) {
  ddb_buf body, enc;
  cJSON *resp = NULL;
  ddb_result result = DDB_OK;
  batch_take bt = {.table = table, .n_asked = n};
  call_info ci = {.operation = "BatchGetItem",
                  .table = table,
                  .continuation = retry,
                  .take = take_batch,
                  .ud = &bt};
  int i;

  ddb_buf_init(&body, DDB_REQUEST_MAX);
  ddb_buf_init(&enc, 4 * 1024 * 1024);
  batch_body(&body, table, keys, n, names, n_names, consistent);
  if(body.failed) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "request too large");
    goto fail;
  }
  for(i = 0; i < n; i++)
    keys[i]->asked = 1;
  result = ddb_http_call(c, &ci, body.p, body.len, &resp, err);
  *too_large = ci.too_large;
  if(result)
    goto fail;
  result = batch_mark(map, &bt, keys, n, names, n_names, &enc, err);

fail:
  for(i = 0; i < n; i++)
    keys[i]->asked = keys[i]->back = 0;
  if(result)
    for(i = 0; i < n; i++) {
      /* nothing of a failed call is kept */
      ddb_item_unref(keys[i]->found);
      keys[i]->found = NULL;
      keys[i]->done = 0;
    }
  ddb_page_unref(bt.got);
  ddb_page_unref(bt.unproc);
  cJSON_Delete(resp);
  ddb_buf_free(&body);
  ddb_buf_free(&enc);
  return result;
}

/* The distinct keys of keys[0..n), in first-seen order, into all[0..*n_all)
** (each owning its encoding) and the hash map *map; slot[i] is the entry
** of keys[i].  Returns DDB_OK, or an error: a key without one of
** names[0..n_names) (DDB_ERR_INPUT, naming its index), out of memory; what
** was added is the caller's to free either way. */
static ddb_result batch_distinct(const ddb_item *const *keys, size_t n,
                                 const char *const *names, int n_names,
                                 batch_key *all, size_t *n_all,
                                 batch_key **map, batch_key **slot,
                                 ddb_error *err) {
  batch_key *bk;
  ddb_buf enc;
  ddb_result result = DDB_OK;
  size_t i;

  ddb_buf_init(&enc, 4 * 1024 * 1024);
  for(i = 0; i < n; i++) {
    ddb_buf_reset(&enc);
    if(ddb_key_encode(keys[i], names, n_names, &enc)) {
      result = ddb_error_set(err, DDB_ERR_INPUT,
                             "BatchGetItem: key %zu "
                             "lacks a key attribute",
                             i);
      goto fail;
    }
    HASH_FIND(hh, *map, enc.p, enc.len, bk);
    if(!bk) {
      size_t len;
      bk = &all[(*n_all)++];
      bk->enc = ddb_buf_take(&enc, &len);
      if(!bk->enc) {
        result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
        goto fail;
      }
      bk->key = keys[i];
      /* by its length, never strlen: a key 'p0'||char(0)||'x' holds a NUL
      ** (and is not the key 'p0') */
      HASH_ADD_KEYPTR(hh, *map, bk->enc, len, bk);
    }
    slot[i] = bk;
  }
fail:
  ddb_buf_free(&enc);
  return result;
}

/* The keys of the next call, at most per_call into send: the keys sent
** before (all[0..*next)) that are not done first (*retry set when there is
** one), then fresh ones (*next moves past them).  Returns how many. */
static int batch_pick(batch_key *all, size_t n_all, size_t *next, int per_call,
                      batch_key **send, int *retry) {
  int m = 0;
  size_t j;
  *retry = 0;
  for(j = 0; j < *next && m < per_call; j++)
    if(!all[j].done) {
      send[m++] = &all[j];
      *retry = 1;
    }
  while(m < per_call && *next < n_all)
    send[m++] = &all[(*next)++];
  return m;
}

/* Before a call that retries keys left unprocessed, stalls the calls in a
** row that got no key done: fail once they pass max_retries, else back
** off.  Returns DDB_OK, or the error (DDB_ERR_SERVICE, or ddb_backoff's
** when cancelled). */
static ddb_result batch_wait(ddb_client *c, int stalls, ddb_error *err) {
  if(stalls > ddb_client_max_retries(c))
    return ddb_error_set(err, DDB_ERR_SERVICE,
                         "BatchGetItem: keys still unprocessed "
                         "(UnprocessedKeys) after %d retries",
                         stalls - 1);
  return ddb_backoff(c, "BatchGetItem", stalls > 0 ? stalls : 1, 1, err);
}

/* BatchGetItem of any number of keys (see ddb_client.h): the distinct
** keys, then calls of at most DDB_BATCH_GET_MAX until every key is done. */
ddb_result ddb_batch_get(ddb_client *c, const char *table,
                         const ddb_item *const *keys, size_t n,
                         const char *const *names, int n_names, int consistent,
                         ddb_item **found, ddb_error *err) {
  batch_key *map = NULL, *all = NULL, *bk, *tmp;
  batch_key *send[DDB_BATCH_GET_MAX];
  batch_key **slot = NULL;
  ddb_result result = DDB_OK;
  size_t i, n_all = 0, next = 0;
  int stalls = 0, per_call = DDB_BATCH_GET_MAX;

  for(i = 0; i < n; i++)
    found[i] = NULL;
  all = calloc(n ? n : 1, sizeof(batch_key));
  slot = calloc(n ? n : 1, sizeof(batch_key *));
  if(!all || !slot) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  result =
      batch_distinct(keys, n, names, n_names, all, &n_all, &map, slot, err);
  if(result)
    goto fail;
  /* send in chunks of 100: fresh keys first, then unprocessed ones.  A
  ** call after which no key is newly done is a retry that failed: after
  ** max_retries of them in a row, the call fails (a server that keeps
  ** returning every key unprocessed cannot keep us here) */
  for(;;) {
    int retry, k, done = 0, too_large = 0;
    int m = batch_pick(all, n_all, &next, per_call, send, &retry);
    if(m == 0)
      break;
    if(retry && (result = batch_wait(c, stalls, err)) != DDB_OK)
      goto fail;
    result = batch_once(c, table, send, m, map, names, n_names, consistent,
                        retry, &too_large, err);
    if(result && too_large && m > 1) {
      /* an answer past the cap (items of control characters): the same
      ** keys again, half as many a call */
      per_call = m / 2;
      ddb_error_clear(err);
      result = DDB_OK;
      continue;
    }
    if(result)
      goto fail;
    for(k = 0; k < m; k++)
      done += send[k]->done;
    stalls = done > 0 ? 0 : stalls + 1;
  }
  for(i = 0; i < n; i++)
    found[i] = ddb_item_ref(slot[i]->found);

fail:
  HASH_ITER(hh, map, bk, tmp) {
    HASH_DEL(map, bk);
  }
  for(i = 0; all && i < n_all; i++) {
    free(all[i].enc);
    ddb_item_unref(all[i].found);
  }
  if(result)
    for(i = 0; i < n; i++) {
      ddb_item_unref(found[i]);
      found[i] = NULL;
    }
  free(all);
  free(slot);
  return result;
}
