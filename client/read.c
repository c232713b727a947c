/*
** read.c -- Query and Scan: one page a call, parsed in one pass into
** items (tape.c), and the consumed capacity an answer reports.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ddb_client_int.h"
#include "http_int.h"

/* ------------------------------------------------------------------------
** Query and Scan
*/
static int scalar_ok(const ddb_av *v) {
  if(v->type == DDB_N)
    return ddb_number_ok(v->text, v->n);
  return v->type == DDB_S || v->type == DDB_B;
}

/* The operator of a comparison, with spaces (" < "), or "". */
static const char *skop_text(ddb_skop op) {
  switch(op) {
  case DDB_SK_EQ: return " = ";
  case DDB_SK_LT: return " < ";
  case DDB_SK_LE: return " <= ";
  case DDB_SK_GT: return " > ";
  case DDB_SK_GE: return " >= ";
  default: return "";
  }
}

/* Append a typed scalar ({"S":"..."}) for a request value. */
static void add_scalar(ddb_buf *b, const ddb_av *v) {
  ddb_av tmp = *v;
  tmp.kids = NULL;
  ddb_av_to_typed_json(&tmp, b);
}

/* Append the FilterExpression text: #fI op :vN ..., values numbered from
** first_val (the names and values go in the maps built after). */
static void add_filter_expr(ddb_buf *b, const ddb_read *r, int first_val) {
  int i, v = first_val;
  for(i = 0; i < r->n_filters; i++) {
    const ddb_filter *f = &r->filters[i];
    if(i)
      ddb_buf_adds(b, " AND ");
    switch(f->op) {
    case DDB_SK_BETWEEN:
      ddb_buf_addf(b, "#f%d BETWEEN :v%d AND :v%d", i, v, v + 1);
      v += 2;
      break;
    case DDB_SK_BEGINS_WITH:
      ddb_buf_addf(b, "begins_with(#f%d, :v%d)", i, v++);
      break;
    default: ddb_buf_addf(b, "#f%d%s:v%d", i, skop_text(f->op), v++);
    }
  }
}

/* Append the KeyConditionExpression of the Query r (#k0 = :v0, and the
** sort-key condition on #k1).  Returns the number of values it names
** (1 to 3). */
static int add_key_condition(ddb_buf *b, const ddb_read *r) {
  int nvals = 1, i;
  ddb_buf_adds(b, ",\"KeyConditionExpression\":\"#k0 = :v0");
  for(i = 0; i < r->n_eq; i++) /* a multi-attribute key's = (#eI, :eI) */
    ddb_buf_addf(b, " AND #e%d = :e%d", i, i);
  switch(r->sk_op) {
  case DDB_SK_NONE: break;
  case DDB_SK_BETWEEN:
    ddb_buf_adds(b, " AND #k1 BETWEEN :v1 AND :v2");
    nvals = 3;
    break;
  case DDB_SK_BEGINS_WITH:
    ddb_buf_adds(b, " AND begins_with(#k1, :v1)");
    nvals = 2;
    break;
  default: ddb_buf_addf(b, " AND #k1%s:v1", skop_text(r->sk_op)); nvals = 2;
  }
  ddb_buf_addc(b, '"');
  return nvals;
}

/* Append the FilterExpression of r: its filters (values from :v<nvals>),
** and with ttl=hide the condition that drops expired items. */
static void add_filter(ddb_buf *b, const ddb_read *r, int nvals) {
  ddb_buf_adds(b, ",\"FilterExpression\":\"");
  add_filter_expr(b, r, nvals);
  /* ttl=hide: an item whose TTL attribute is a number below now has
  ** expired (DynamoDB deletes it within days); any other value, or none,
  ** never expires */
  if(r->ttl_attr)
    ddb_buf_adds(b, r->n_filters ? " AND " : "");
  if(r->ttl_attr)
    ddb_buf_adds(b, "(attribute_not_exists(#t) OR NOT attribute_type(#t, "
                    ":tn) OR #t >= :tt)");
  ddb_buf_addc(b, '"');
}

/* Append the ExpressionAttributeNames of r: every name of its key
** condition (#k0, #k1), filters (#fI), projection (#pI) and TTL (#t). */
static void add_names(ddb_buf *b, const ddb_read *r) {
  int n = 0, i;
  ddb_buf_adds(b, ",\"ExpressionAttributeNames\":{");
  if(r->pk_name) {
    ddb_buf_adds(b, "\"#k0\":");
    ddb_buf_json_str(b, r->pk_name, strlen(r->pk_name));
    n++;
    if(r->sk_op != DDB_SK_NONE) {
      ddb_buf_adds(b, ",\"#k1\":");
      ddb_buf_json_str(b, r->sk_name, strlen(r->sk_name));
    }
    for(i = 0; i < r->n_eq; i++) {
      ddb_buf_addf(b, ",\"#e%d\":", i);
      ddb_buf_json_str(b, r->eq_names[i], strlen(r->eq_names[i]));
    }
  }
  for(i = 0; i < r->n_filters; i++, n++) {
    ddb_buf_addf(b, "%s\"#f%d\":", n ? "," : "", i);
    ddb_buf_json_str(b, r->filters[i].name, strlen(r->filters[i].name));
  }
  for(i = 0; i < r->n_proj; i++, n++) {
    ddb_buf_addf(b, "%s\"#p%d\":", n ? "," : "", i);
    ddb_buf_json_str(b, r->proj[i], strlen(r->proj[i]));
  }
  if(r->ttl_attr) {
    ddb_buf_adds(b, n ? ",\"#t\":" : "\"#t\":");
    ddb_buf_json_str(b, r->ttl_attr, strlen(r->ttl_attr));
  }
  ddb_buf_addc(b, '}');
}

/* Append the ExpressionAttributeValues of r: its nvals key values (:v0..),
** its filters' values after them, the TTL's :tn and :tt.  Returns DDB_OK,
** or DDB_ERR_INPUT naming the first key or attribute whose value is not a
** scalar DynamoDB takes. */
static ddb_result add_values(ddb_buf *b, const ddb_read *r, int nvals,
                             ddb_error *err) {
  int i, v;
  ddb_buf_adds(b, ",\"ExpressionAttributeValues\":{");
  if(nvals) {
    ddb_buf_adds(b, "\":v0\":");
    add_scalar(b, &r->pk);
  }
  for(i = 1; i < nvals; i++) {
    if(!scalar_ok(&r->sk[i - 1]))
      return ddb_error_set(err, DDB_ERR_INPUT, "bad value for key '%.100s'",
                           r->sk_name);
    ddb_buf_addf(b, ",\":v%d\":", i);
    add_scalar(b, &r->sk[i - 1]);
  }
  for(i = 0; nvals && i < r->n_eq; i++) {
    if(!scalar_ok(&r->eq_vals[i]))
      return ddb_error_set(err, DDB_ERR_INPUT, "bad value for key '%.100s'",
                           r->eq_names[i]);
    ddb_buf_addf(b, ",\":e%d\":", i);
    add_scalar(b, &r->eq_vals[i]);
  }
  v = nvals;
  for(i = 0; i < r->n_filters; i++) {
    const ddb_filter *f = &r->filters[i];
    int k, nv = f->op == DDB_SK_BETWEEN ? 2 : 1;
    for(k = 0; k < nv; k++, v++) {
      if(!scalar_ok(&f->v[k]))
        return ddb_error_set(err, DDB_ERR_INPUT,
                             "bad value for attribute '%.100s'", f->name);
      ddb_buf_addf(b, "%s\":v%d\":", v ? "," : "", v);
      add_scalar(b, &f->v[k]);
    }
  }
  if(r->ttl_attr)
    ddb_buf_addf(b, "%s\":tn\":{\"S\":\"N\"},\":tt\":{\"N\":\"%lld\"}",
                 v ? "," : "", r->ttl_now);
  ddb_buf_addc(b, '}');
  return DDB_OK;
}

/* Append the plain parameters of r: order, segment, consistency, limit,
** COUNT, the start key, and the closing ReturnConsumedCapacity. */
static void add_params(ddb_buf *b, const ddb_read *r) {
  if(r->pk_name && r->descending)
    ddb_buf_adds(b, ",\"ScanIndexForward\":false");
  if(!r->pk_name && r->total_segments > 1)
    ddb_buf_addf(b, ",\"Segment\":%d,\"TotalSegments\":%d", r->segment,
                 r->total_segments);
  if(r->consistent)
    ddb_buf_adds(b, ",\"ConsistentRead\":true");
  if(r->limit > 0)
    ddb_buf_addf(b, ",\"Limit\":%lld", r->limit);
  if(r->count_only)
    ddb_buf_adds(b, ",\"Select\":\"COUNT\"");
  if(r->start) {
    ddb_buf_adds(b, ",\"ExclusiveStartKey\":");
    ddb_item_to_typed_json(r->start, b);
  }
  ddb_buf_adds(b, ",\"ReturnConsumedCapacity\":\"TOTAL\"}");
}

/* The JSON body of the Query/Scan r into b (see ddb_client.h): the table
** and index, the key condition, the filter, the projection, every name and
** value through the expression maps, the parameters. */
ddb_result ddb_read_body(const ddb_read *r, ddb_buf *b, ddb_error *err) {
  int nvals = 0, i;
  ddb_result result;
  ddb_buf_adds(b, "{\"TableName\":");
  ddb_buf_json_str(b, r->table, strlen(r->table));
  if(r->index) {
    ddb_buf_adds(b, ",\"IndexName\":");
    ddb_buf_json_str(b, r->index, strlen(r->index));
  }
  if(r->pk_name) {
    if(!scalar_ok(&r->pk))
      return ddb_error_set(err, DDB_ERR_INPUT, "bad value for key '%.100s'",
                           r->pk_name);
    nvals = add_key_condition(b, r);
  }
  if(r->n_filters || r->ttl_attr)
    add_filter(b, r, nvals);
  if(r->n_proj) {
    ddb_buf_adds(b, ",\"ProjectionExpression\":\"");
    for(i = 0; i < r->n_proj; i++)
      ddb_buf_addf(b, "%s#p%d", i ? ", " : "", i);
    ddb_buf_addc(b, '"');
  }
  /* every name goes through ExpressionAttributeNames */
  if(r->pk_name || r->n_filters || r->n_proj || r->ttl_attr)
    add_names(b, r);
  /* and every value through ExpressionAttributeValues */
  if(nvals || r->n_filters || r->ttl_attr) {
    result = add_values(b, r, nvals, err);
    if(result)
      return result;
  }
  add_params(b, r);
  if(b->failed)
    return ddb_error_set(err, DDB_ERR_NOMEM, "request too large");
  return DDB_OK;
}

/* ------------------------------------------------------------------------
** What one page may cost
**
** DynamoDB answers a Query or Scan with at most 1 MB of the items it read
** (1,048,576 bytes, items sized as DynamoDB sizes them: the UTF-8 bytes of
** names and values, 1 byte a List or Map element, 3 a List or Map:
** developerguide/CapacityUnitCalculations.html), stopping on the item that
** passes it: a page holds at most 1 MB + one item (400 KB) = 1,458,176
** bytes of items.  A projection or a filter only makes it less.  The
** bounds below are what no correct page reaches, so a page past one is not
** what DynamoDB sends: it fails with an error naming the bound (a
** DDB_ERR_PARSE, not retried: its bytes passed their CRC, so the server
** meant them), before it costs more.
**
** PAGE_TEXT_MAX, the answer's JSON text (curl refuses a longer one from its
** Content-Length, before reading it).  Typed JSON spells an attribute
** "name":{"S":"value"}, 10 bytes more than its size, and a control
** character takes 6 bytes (\u0001).  The most text for a byte of size is an
** empty string under a one-byte name that is a control character: 18
** bytes ("\u0001":{"S":""},) for 1 (two-byte names give 12 for 2, list
** elements {"S":""}, 9 for 1): at most 1,458,176 x 18 = 25 MB.
**
** PAGE_ITEMS_MAX, the items of a page.  Each has its own key, and keys are
** distinct: under a one-byte key name, 256 values of one byte (items of 2
** bytes), 65,536 of two, then values of three bytes (items of 4) fill
** 1,458,176 bytes with 381,056 items; numbers are no smaller (1 or 2
** significant digits, size 2: 46,080 values).  Select=COUNT's Count and
** ScannedCount count items read by one page: the same bound.
**
** PAGE_DECODED_MAX, the decoded page (ddb_page.bytes: items and the array
** of their pointers).  A List element costs a node (40 bytes) and its
** text's NUL: a page of lists of empty strings (1 byte each) decodes to
** 1,458,176 x 41 = 60 MB, the most; 381,056 one-attribute items take
** about 112 bytes each, 43 MB.
*/
#define PAGE_TEXT_MAX    ((size_t)32 << 20)
#define PAGE_ITEMS_MAX   524288 /* 2^19 */
#define PAGE_DECODED_MAX ((size_t)96 << 20)

/* A count (Count, ScannedCount) at token 0 of the tape: its value when it
** is an integer in [0, PAGE_ITEMS_MAX], else -1 (a negative, fractional or
** huge count is none a page of DynamoDB has). */
static long long tape_count(const ddb_tape *t, const char *text) {
  const ddb_jtok *k = &t->tok[0];
  long long v = 0;
  uint32_t i;
  if(k->type != DDB_JNUM || k->len > 7)
    return -1;
  for(i = 0; i < k->len; i++) {
    char ch = text[k->off + i];
    if(ch < '0' || ch > '9')
      return -1;
    v = v * 10 + (ch - '0');
  }
  return v <= PAGE_ITEMS_MAX ? v : -1;
}

/* Append it to the page's items (taking its reference); 0, or -1 on out
** of memory (it is then released). */
int ddb_page_push(ddb_page *p, int *cap, ddb_item *it) {
  if(p->n_items == *cap) {
    int ncap = *cap ? *cap * 2 : 64;
    ddb_item **x = realloc(p->items, (size_t)ncap * sizeof(*x));
    if(!x) {
      ddb_item_unref(it);
      return -1;
    }
    p->items = x;
    p->bytes += (size_t)(ncap - *cap) * sizeof(*x);
    *cap = ncap;
  }
  p->items[p->n_items++] = it;
  p->bytes += it->bytes;
  return 0;
}

/* The error for a Count or ScannedCount (name) whose token k in text is
** not a count of this page; returns DDB_ERR_PARSE. */
static ddb_result bad_count(const char *text, const ddb_jtok *k,
                            const char *operation, const char *name,
                            const char *why, ddb_error *err) {
  int n = k->len > 40 ? 40 : (int)k->len;
  return ddb_error_set(
      err, DDB_ERR_PARSE, "malformed response to %s: %s %.*s%s %s", operation,
      name, n, text + k->off, n < (int)k->len ? "..." : "", why);
}

/* What ddb_page_parse has read of an answer so far: each field 1 once
** seen, -1 when seen with a value of the wrong type. */
typedef struct page_seen {
  int items, count, scanned;
  ddb_jtok count_tok, scanned_tok; /* their tokens, for the messages */
  long long count_v, scanned_v;    /* tape_count() of them */
  int cap;                         /* of the page's items */
} page_seen;

/* The error for an answer to operation (len bytes) that is not JSON of
** the expected shape: sets *malformed, returns DDB_ERR_PARSE. */
static ddb_result page_malformed(const char *operation, size_t len,
                                 int *malformed, ddb_error *err) {
  *malformed = 1;
  return ddb_error_set(err, DDB_ERR_PARSE,
                       "malformed response to %s (%zu bytes)", operation, len);
}

/* Read the Items array r is at into p, one item at a time (the tape holds
** one item).  Returns DDB_OK, or an error: malformed JSON (*malformed
** set), a page past PAGE_ITEMS_MAX or PAGE_DECODED_MAX, out of memory. */
static ddb_result page_items(ddb_jreader *r, const char *body, size_t len,
                             const char *operation, ddb_page *p, page_seen *s,
                             int *malformed, ddb_error *err) {
  ddb_item *it;
  ddb_result result;
  int rc;
  s->items = 1;
  while((rc = ddb_jr_element(r)) == 1) {
    if(p->n_items >= PAGE_ITEMS_MAX)
      return ddb_error_set(err, DDB_ERR_PARSE,
                           "malformed response to %s: more than %d "
                           "items in one page (a page holds at most "
                           "1 MB of items)",
                           operation, PAGE_ITEMS_MAX);
    result = ddb_item_from_tape(body, &r->tape, 0, &it, err);
    if(result)
      return result;
    if(ddb_page_push(p, &s->cap, it))
      return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    if(p->bytes > PAGE_DECODED_MAX)
      return ddb_error_set(err, DDB_ERR_PARSE,
                           "malformed response to %s: a page of more "
                           "than %zu MB decoded (a page holds at most "
                           "1 MB of items)",
                           operation, PAGE_DECODED_MAX >> 20);
  }
  if(rc < 0)
    return page_malformed(operation, len, malformed, err);
  return DDB_OK;
}

/* Take the field name whose value is on r's tape (any field but an Items
** array): Count, ScannedCount, LastEvaluatedKey (into p), ConsumedCapacity;
** an Items that is no array marks s->items -1; others are skipped.
** Returns DDB_OK, or the error of decoding LastEvaluatedKey. */
static ddb_result page_field(const ddb_jreader *r, const char *body,
                             const ddb_jtok *name, ddb_page *p, page_seen *s,
                             ddb_error *err) {
  ddb_result result;
  if(ddb_tape_eq(body, name, "Items"))
    s->items = s->items ? s->items : -1; /* not an array */
  else if(!s->count && ddb_tape_eq(body, name, "Count")) {
    s->count = r->tape.tok[0].type == DDB_JNUM ? 1 : -1;
    s->count_tok = r->tape.tok[0];
    s->count_v = tape_count(&r->tape, body);
  } else if(!s->scanned && ddb_tape_eq(body, name, "ScannedCount")) {
    s->scanned = 1;
    s->scanned_tok = r->tape.tok[0];
    s->scanned_v = tape_count(&r->tape, body);
  } else if(!p->last_key && ddb_tape_eq(body, name, "LastEvaluatedKey")) {
    result = ddb_item_from_tape(body, &r->tape, 0, &p->last_key, err);
    if(result)
      return result;
    p->bytes += p->last_key->bytes;
  } else if(ddb_tape_eq(body, name, "ConsumedCapacity"))
    p->consumed_rcu = ddb_tape_consumed(&r->tape, body);
  return DDB_OK;
}

/* Check what s saw of the whole answer and set p's counts: Items (unless
** count_only) and Count present, Count a count of one page equal to the
** items read, ScannedCount no smaller.  Returns DDB_OK, or DDB_ERR_PARSE
** naming what is wrong. */
static ddb_result page_counts(const char *body, const char *operation,
                              int count_only, const page_seen *s, ddb_page *p,
                              ddb_error *err) {
  /* a page without its Items (or its Count) would read as a shorter
  ** answer: it is an error */
  if((!count_only && s->items != 1) || s->items < 0 || s->count != 1)
    return ddb_error_set(err, DDB_ERR_PARSE, "malformed response to %s: no %s",
                         operation, s->count == 1 ? "Items array" : "Count");
  /* the counts must be counts of this page */
  if(s->count_v < 0)
    return bad_count(body, &s->count_tok, operation, "Count",
                     "is not a count of one page", err);
  if(s->items == 1 && s->count_v != p->n_items)
    return ddb_error_set(err, DDB_ERR_PARSE,
                         "malformed response to %s: Count %lld but %d "
                         "Items",
                         operation, s->count_v, p->n_items);
  if(s->scanned && (s->scanned_v < 0 || s->scanned_v < s->count_v))
    return bad_count(body, &s->scanned_tok, operation, "ScannedCount",
                     s->scanned_v < 0 ? "is not a count of one page"
                                      : "is below Count",
                     err);
  p->count = s->count_v;
  p->scanned = s->scanned ? s->scanned_v : p->count;
  return DDB_OK;
}

/* Parse a Query/Scan answer into a page (see ddb_client_int.h): field by
** field, the items read as they come, then the counts checked.  Beyond
** its syntax, an answer must be one DynamoDB sends: at most PAGE_ITEMS_MAX
** items and PAGE_DECODED_MAX decoded bytes; a Count that is an integer
** from 0 to PAGE_ITEMS_MAX, equal to the number of Items when they come;
** a ScannedCount (when there is one) no smaller than Count.  A negative
** Count is an error, never a count of 0. */
ddb_result ddb_page_parse(const char *body, size_t len, const char *operation,
                          int count_only, ddb_page **out, int *malformed,
                          ddb_error *err) {
  ddb_jreader r;
  ddb_jtok name;
  page_seen s;
  ddb_page *p;
  ddb_result result = DDB_OK;
  int rc;

  *out = NULL;
  *malformed = 0;
  memset(&r, 0, sizeof(r));
  memset(&s, 0, sizeof(s));
  p = calloc(1, sizeof(*p));
  if(!p)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  p->refs = 1;
  p->bytes = sizeof(*p);
  if(ddb_jr_open(&r, body, len))
    goto malformed;
  while((rc = ddb_jr_next(&r, &name)) == 1) {
    if(s.items == 0 && ddb_tape_eq(body, &name, "Items") &&
       ddb_jr_array(&r) == 0)
      result = page_items(&r, body, len, operation, p, &s, malformed, err);
    else if(ddb_jr_value(&r))
      goto malformed;
    else
      result = page_field(&r, body, &name, p, &s, err);
    if(result)
      goto fail;
  }
  if(rc < 0)
    goto malformed;
  result = page_counts(body, operation, count_only, &s, p, err);
  if(result)
    goto fail;
  *out = p;
  p = NULL;
  goto fail;

malformed:
  result = page_malformed(operation, len, malformed, err);
fail:
  ddb_page_unref(p);
  ddb_tape_free(&r.tape);
  return result;
}

/* ------------------------------------------------------------------------
** Parse slots: no more pages parsed at once than the machine has cores
**
** A parallel Scan runs up to 8 (or 16) workers, each fetching and parsing
** its pages.  Fetching is waiting and may overlap as much as it likes;
** parsing is CPU, and 8 threads parsing on 2 cores only take turns,
** costing 60-85% more CPU an item in switches and cold caches.
** So the parse of a page takes one of parse_max slots (the online cores,
** at least 1), a worker past them waiting here, its request done, while
** the others' requests stay in flight.  parse_mu is a leaf lock (nothing
** else is taken under it), on live.c's list so that a child of fork()
** finds it free and every slot free (the threads that held one are not
** in the child).
*/
static pthread_mutex_t parse_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t parse_cv = PTHREAD_COND_INITIALIZER;
static int parse_busy; /* slots taken (parse_mu) */
static int parse_max;  /* slots: the online cores, at least 1 */
static pthread_once_t parse_once = PTHREAD_ONCE_INIT;
static ddb_live parse_live;

/* live.c's ops for the slots: take and release parse_mu around fork(). */
static void parse_lock(void *obj) {
  pthread_mutex_lock(&parse_mu);
}
static void parse_unlock(void *obj) {
  pthread_mutex_unlock(&parse_mu);
}
/* In the child: every slot free (their holders are not in it). */
static void parse_unlock_child(void *obj) {
  parse_busy = 0;
  pthread_mutex_unlock(&parse_mu);
}
static const ddb_live_ops parse_live_ops = {DDB_LIVE_HTTP, parse_lock,
                                            parse_unlock, parse_unlock_child};

/* Count the slots and put parse_mu on live.c's list, once a process. */
static void parse_init(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  parse_max = n < 1 ? 1 : n > 4096 ? 4096 : (int)n;
  ddb_live_add(&parse_live, &parse_live_ops, NULL);
}

/* See ddb_client_int.h. */
void ddb_parse_enter(void) {
  pthread_once(&parse_once, parse_init);
  pthread_mutex_lock(&parse_mu);
  while(parse_busy >= parse_max)
    pthread_cond_wait(&parse_cv, &parse_mu);
  parse_busy++;
  pthread_mutex_unlock(&parse_mu);
}

/* See ddb_client_int.h. */
void ddb_parse_leave(void) {
  pthread_mutex_lock(&parse_mu);
  parse_busy--;
  pthread_cond_signal(&parse_cv);
  pthread_mutex_unlock(&parse_mu);
}

/* What ddb_http_call()'s take for a page works with (ci->ud). */
typedef struct page_take {
  const ddb_read *r;
  ddb_page *page; /* out */
} page_take;

/* ddb_http_call()'s take for a Query/Scan page. */
static ddb_result take_page(call_info *ci, const char *body, size_t len,
                            int *malformed, ddb_error *e) {
  page_take *pt = ci->ud;
  ddb_result result;
  ddb_parse_enter();
  result = ddb_page_parse(body, len, ci->operation, pt->r->count_only,
                          &pt->page, malformed, e);
  ddb_parse_leave();
  if(result)
    return result;
  ci->items = pt->page->count;
  ci->consumed = pt->page->consumed_rcu;
  ci->scanned = pt->page->scanned;
  return DDB_OK;
}

/* One page of the Query/Scan r (see ddb_client.h), its answer held to what
** DynamoDB sends (PAGE_*) and its LastEvaluatedKey to rules 1 to 4 and 6. */
ddb_result ddb_read_page(ddb_client *c, const ddb_read *r, ddb_page **out,
                         ddb_error *err) {
  ddb_buf body;
  cJSON *resp = NULL;
  ddb_result result;
  call_info ci;
  page_take pt;
  ddb_read paced = *r; /* its Limit lowered to max_rcu's share (rate.c) */

  *out = NULL;
  memset(&ci, 0, sizeof(ci));
  ci.operation = r->pk_name ? "Query" : "Scan";
  ci.table = r->table;
  ci.index = r->index;
  ci.continuation = r->start != NULL;
  ci.max_body = PAGE_TEXT_MAX;
  pt.r = r;
  pt.page = NULL;
  ci.take = take_page;
  ci.ud = &pt;
  ddb_buf_init(&body, DDB_REQUEST_MAX);
  result = ddb_rate_page(c, &paced, &ci, err);
  if(result == DDB_OK)
    result = ddb_read_body(&paced, &body, err);
  if(result)
    goto fail;
  result = ddb_http_call(c, &ci, body.p, body.len, &resp, err);
  if(result)
    goto fail;
  /* a server that answers a page with the key it was asked to start after
  ** would have its reader ask for that page forever */
  if(r->start && pt.page->last_key &&
     ddb_av_equal(&r->start->root, &pt.page->last_key->root)) {
    ddb_page_unref(pt.page);
    result = ddb_error_set(err, DDB_ERR_PARSE,
                           "%s of '%.200s': the answer's LastEvaluatedKey "
                           "repeats its ExclusiveStartKey (the same page "
                           "again: a loop)",
                           ci.operation, r->table);
    goto fail;
  }
  result = ddb_lek_check(r, pt.page, err);
  if(result) {
    ddb_page_unref(pt.page);
    goto fail;
  }
  *out = pt.page;

fail:
  if(ci.rate_share > 0) /* taken, not sent: given back */
    ddb_rate_charge(c, &ci, ci.rate_share, 0);
  cJSON_Delete(resp);
  ddb_buf_free(&body);
  return result;
}

/* ------------------------------------------------------------------------
** A page as text and back, for the shared cache tier (cache/shared.c)
*/

/* See ddb_client.h. */
int ddb_page_to_json(const ddb_page *p, ddb_buf *out) {
  int i;
  ddb_buf_adds(out, "{\"Items\":[");
  for(i = 0; i < p->n_items; i++) {
    if(i)
      ddb_buf_addc(out, ',');
    if(ddb_item_to_typed_json(p->items[i], out))
      return -1;
  }
  ddb_buf_addf(out, "],\"Count\":%lld,\"ScannedCount\":%lld", p->count,
               p->scanned);
  if(p->last_key) {
    ddb_buf_adds(out, ",\"LastEvaluatedKey\":");
    if(ddb_item_to_typed_json(p->last_key, out))
      return -1;
  }
  ddb_buf_addc(out, '}');
  return out->failed ? -1 : 0;
}

/* See ddb_client.h: the strict parser of DynamoDB's answers. */
ddb_result ddb_page_from_json(const char *text, size_t n, ddb_page **out,
                              ddb_error *err) {
  int malformed;
  return ddb_page_parse(text, n, "Query", 0, out, &malformed, err);
}
