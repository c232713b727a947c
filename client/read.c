/*
** read.c -- Query and Scan: one page a call, parsed in one pass into
** items (tape.c), and the consumed capacity an answer reports.
*/
#include <stdlib.h>
#include <string.h>

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

/* The JSON body of the Query/Scan r into b (see ddb_client.h). */
ddb_result ddb_read_body(const ddb_read *r, ddb_buf *b, ddb_error *err) {
  int nvals = 0, i, v;
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
    ddb_buf_adds(b, ",\"KeyConditionExpression\":\"#k0 = :v0");
    nvals = 1;
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
  }
  if(r->n_filters || r->ttl_attr) {
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
  if(r->n_proj) {
    ddb_buf_adds(b, ",\"ProjectionExpression\":\"");
    for(i = 0; i < r->n_proj; i++)
      ddb_buf_addf(b, "%s#p%d", i ? ", " : "", i);
    ddb_buf_addc(b, '"');
  }
  /* every name goes through ExpressionAttributeNames */
  if(r->pk_name || r->n_filters || r->n_proj || r->ttl_attr) {
    int n = 0;
    ddb_buf_adds(b, ",\"ExpressionAttributeNames\":{");
    if(r->pk_name) {
      ddb_buf_adds(b, "\"#k0\":");
      ddb_buf_json_str(b, r->pk_name, strlen(r->pk_name));
      n++;
      if(r->sk_op != DDB_SK_NONE) {
        ddb_buf_adds(b, ",\"#k1\":");
        ddb_buf_json_str(b, r->sk_name, strlen(r->sk_name));
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
  /* and every value through ExpressionAttributeValues */
  if(nvals || r->n_filters || r->ttl_attr) {
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
  }
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
  if(b->failed)
    return ddb_error_set(err, DDB_ERR_NOMEM, "request too large");
  return DDB_OK;
}

/* A count at token 0 of the tape: its value when it is a number in
** [0, 2^53], else dflt (a huge or negative number in a damaged answer is
** no count). */
static long long tape_count(const ddb_tape *t, const char *text,
                            long long dflt) {
  double d;
  if(t->tok[0].type != DDB_JNUM)
    return dflt;
  d = ddb_tape_num(t, text, 0);
  if(!(d >= 0) || d > 9007199254740992.0)
    return dflt;
  return (long long)d;
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

/* Parse a Query/Scan answer into a page (see ddb_client_int.h). */
ddb_result ddb_page_parse(const char *body, size_t len, const char *operation,
                          int count_only, ddb_page **out, int *malformed,
                          ddb_error *err) {
  ddb_jreader r;
  ddb_jtok name;
  ddb_page *p;
  ddb_item *it;
  ddb_result result = DDB_OK;
  int rc, cap = 0, have_items = 0, have_count = 0, have_scanned = 0;
  long long count = 0, scanned = 0;

  *out = NULL;
  *malformed = 0;
  memset(&r, 0, sizeof(r));
  p = calloc(1, sizeof(*p));
  if(!p)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  p->refs = 1;
  p->bytes = sizeof(*p);
  if(ddb_jr_open(&r, body, len))
    goto malformed;
  while((rc = ddb_jr_next(&r, &name)) == 1) {
    if(!have_items && ddb_tape_eq(body, &name, "Items") &&
       ddb_jr_array(&r) == 0) {
      /* the items, one at a time: the tape holds one item */
      have_items = 1;
      while((rc = ddb_jr_element(&r)) == 1) {
        result = ddb_item_from_tape(body, &r.tape, 0, &it, err);
        if(result)
          goto fail;
        if(ddb_page_push(p, &cap, it)) {
          result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
          goto fail;
        }
      }
      if(rc < 0)
        goto malformed;
      continue;
    }
    if(ddb_jr_value(&r))
      goto malformed;
    if(ddb_tape_eq(body, &name, "Items"))
      have_items = have_items ? have_items : -1; /* not an array */
    else if(!have_count && ddb_tape_eq(body, &name, "Count")) {
      have_count = r.tape.tok[0].type == DDB_JNUM ? 1 : -1;
      count = tape_count(&r.tape, body, -1);
    } else if(!have_scanned && ddb_tape_eq(body, &name, "ScannedCount")) {
      have_scanned = 1;
      scanned = tape_count(&r.tape, body, -1);
    } else if(!p->last_key && ddb_tape_eq(body, &name, "LastEvaluatedKey")) {
      result = ddb_item_from_tape(body, &r.tape, 0, &p->last_key, err);
      if(result)
        goto fail;
      p->bytes += p->last_key->bytes;
    } else if(ddb_tape_eq(body, &name, "ConsumedCapacity"))
      p->consumed_rcu = ddb_tape_consumed(&r.tape, body);
  }
  if(rc < 0)
    goto malformed;
  /* a page without its Items (or its Count) would read as a shorter
  ** answer: it is an error */
  if((!count_only && have_items != 1) || have_items < 0 || have_count != 1) {
    result =
        ddb_error_set(err, DDB_ERR_PARSE, "malformed response to %s: no %s",
                      operation, have_count == 1 ? "Items array" : "Count");
    goto fail;
  }
  p->count = count >= 0 ? count : p->n_items;
  p->scanned = have_scanned && scanned >= 0 ? scanned : p->count;
  *out = p;
  p = NULL;
  goto fail;

malformed:
  *malformed = 1;
  result =
      ddb_error_set(err, DDB_ERR_PARSE, "malformed response to %s (%zu bytes)",
                    operation, len);
fail:
  ddb_page_unref(p);
  ddb_tape_free(&r.tape);
  return result;
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
  ddb_result result = ddb_page_parse(
      body, len, ci->operation, pt->r->count_only, &pt->page, malformed, e);
  if(result)
    return result;
  ci->items = pt->page->count;
  ci->consumed = pt->page->consumed_rcu;
  ci->scanned = pt->page->scanned;
  return DDB_OK;
}

/* One page of the Query/Scan r (see ddb_client.h). */
/* See ddb_client.h: Brent's algorithm, the saved key (the tortoise)
** moving to the newest key (the hare) whenever lam reaches power, which
** doubles. */
ddb_result ddb_lek_next(ddb_lek_guard *g, const char *operation,
                        const char *table, const ddb_item *key,
                        ddb_error *err) {
  if(!key)
    return DDB_OK;
  if(g->saved && ddb_av_equal(&g->saved->root, &key->root))
    return ddb_error_set(err, DDB_ERR_PARSE,
                         "%s of '%.200s': the answers' LastEvaluatedKeys go "
                         "round in a circle (a key came back: a loop)",
                         operation, table);
  if(g->power == 0)
    g->power = g->lam = 1;
  if(g->lam == g->power) {
    ddb_item_unref(g->saved);
    g->saved = ddb_item_ref((ddb_item *)key);
    g->power *= 2;
    g->lam = 0;
  }
  g->lam++;
  return DDB_OK;
}

/* Drop g's saved key; g is then as new. */
void ddb_lek_guard_free(ddb_lek_guard *g) {
  ddb_item_unref(g->saved);
  memset(g, 0, sizeof(*g));
}

ddb_result ddb_read_page(ddb_client *c, const ddb_read *r, ddb_page **out,
                         ddb_error *err) {
  ddb_buf body;
  cJSON *resp = NULL;
  ddb_result result;
  call_info ci;
  page_take pt;

  *out = NULL;
  memset(&ci, 0, sizeof(ci));
  ci.operation = r->pk_name ? "Query" : "Scan";
  ci.table = r->table;
  ci.index = r->index;
  ci.continuation = r->start != NULL;
  pt.r = r;
  pt.page = NULL;
  ci.take = take_page;
  ci.ud = &pt;
  ddb_buf_init(&body, DDB_REQUEST_MAX);
  result = ddb_read_body(r, &body, err);
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
  *out = pt.page;

fail:
  cJSON_Delete(resp);
  ddb_buf_free(&body);
  return result;
}
