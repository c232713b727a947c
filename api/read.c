/*
** read.c -- GetItem, BatchGetItem, and the Query and Scan iterators, all
** through cache/ (ddbc_*), so that they share the process-wide cache.
**
** Iterators read one page at a time, when the items of the previous one
** are used up.  A parallel Scan is the SQL extension's page stream
** (cache/stream.c): one thread per segment, each reading its segment's
** pages in order onto one bounded queue (at most 2 x segments pages held
** ahead of the consumer), which the consumer takes in arrival order.  The
** first error of any segment stops them all and is what dyn_iter_next()
** returns from then on.  BatchGetItem is the extension's fan-out too
** (cache/fanout.c): up to 4 requests of 100 keys in flight.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"

/* Clear err, check c and flags.  Returns DYN_OK or DYN_EMISUSE. */
static dyn_code enter(dyn_client *c, int flags, int allowed, const char *fn,
                      dyn_error *err) {
  if(err)
    memset(err, 0, sizeof(*err));
  if(!c)
    return dyni_fail(err, DYN_EMISUSE, "%s: client is NULL", fn);
  if(flags & ~allowed)
    return dyni_fail(err, DYN_EMISUSE, "%s: unknown flags 0x%x", fn,
                     (unsigned)(flags & ~allowed));
  return DYN_OK;
}

/* ------------------------------------------------------------------------
** GetItem and BatchGetItem
*/
dyn_code dyn_get_item(dyn_client *c, const char *table, const dyn_item *key,
                      int flags, dyn_item **out, dyn_error *err) {
  dyn_table *t = NULL;
  ddb_item *k = NULL, *it = NULL;
  ddbc_policy pol;
  ddb_error e;
  dyn_code result;

  result = enter(c, flags, DYN_CONSISTENT, "dyn_get_item", err);
  if(result)
    return result;
  if(!out)
    return dyni_fail(err, DYN_EMISUSE, "dyn_get_item: out is NULL");
  *out = NULL;
  result = dyni_table_get(c, table, &t, err);
  if(result)
    goto fail;
  result = dyni_key(t, CITEM(key), "key", &k, err);
  if(result)
    goto fail;
  pol = dyni_policy(c, t, flags);
  ddb_error_clear(&e);
  if(ddbc_get_item(c->ddb, t->desc->name, k, t->key_names, t->n_key, &pol, &it,
                   &e)) {
    result = dyni_error(err, &e);
    goto fail;
  }
  *out = PITEM(it);

fail:
  ddb_item_unref(k);
  dyni_table_unref(t);
  return result;
}

dyn_code dyn_get_json(dyn_client *c, const char *table, const char *key_json,
                      int flags, char **out, dyn_error *err) {
  dyn_table *t = NULL;
  ddb_item *key = NULL, *hint = NULL;
  dyn_item *it = NULL;
  ddb_error e;
  dyn_code result;

  result =
      enter(c, flags, DYN_CONSISTENT | DYN_JSON_TYPED, "dyn_get_json", err);
  if(result)
    return result;
  if(!out || !key_json)
    return dyni_fail(err, DYN_EMISUSE, "dyn_get_json: NULL argument");
  *out = NULL;
  result = dyni_table_get(c, table, &t, err);
  if(result)
    goto fail;
  ddb_error_clear(&e);
  if(flags & DYN_JSON_TYPED) {
    dyn_item *k = NULL;
    result = dyn_item_from_json(key_json, DYN_JSON_TYPED, &k, err);
    if(result)
      goto fail;
    key = ITEM(k);
  } else {
    /* plain JSON has no binary type: a B key's base64 string becomes a B
    ** through a hint naming the B key attributes */
    ddb_av vals[2];
    int i, n = 0;
    const ddb_keyattr *ka[2];
    ka[0] = &t->desc->indexes[0].pk;
    ka[1] = &t->desc->indexes[0].sk;
    memset(vals, 0, sizeof(vals));
    for(i = 0; i < t->n_key; i++)
      if(ka[i]->type == DDB_B) {
        vals[n].type = DDB_B;
        vals[n].name = ka[i]->name;
        vals[n].text = "";
        n++;
      }
    if(n) {
      hint = ddb_item_from_avs(vals, n);
      if(!hint) {
        result = dyni_fail(err, DYN_ENOMEM, "out of memory");
        goto fail;
      }
    }
    if(ddb_item_from_json(key_json, strlen(key_json), hint, &key, &e)) {
      result = dyni_error(err, &e);
      goto fail;
    }
  }
  result =
      dyn_get_item(c, table, PITEM(key), flags & DYN_CONSISTENT, &it, err);
  if(result || !it)
    goto fail;
  *out = dyn_item_to_json(it, flags & DYN_JSON_TYPED);
  if(!*out)
    result = dyni_fail(err, DYN_ENOMEM, "out of memory");

fail:
  dyn_item_unref(it);
  ddb_item_unref(key);
  ddb_item_unref(hint);
  dyni_table_unref(t);
  return result;
}

dyn_code dyn_batch_get(dyn_client *c, const char *table,
                       const dyn_item *const *keys, size_t n, int flags,
                       dyn_item **found, dyn_error *err) {
  dyn_table *t = NULL;
  const ddb_item **k = NULL;
  ddb_item **got = NULL;
  ddbc_policy pol;
  ddb_error e;
  dyn_code result;
  size_t i;

  result = enter(c, flags, DYN_CONSISTENT, "dyn_batch_get", err);
  if(result)
    return result;
  if(n > 0 && (!keys || !found))
    return dyni_fail(err, DYN_EMISUSE, "dyn_batch_get: NULL argument");
  for(i = 0; i < n; i++)
    found[i] = NULL;
  result = dyni_table_get(c, table, &t, err);
  if(result)
    return result;
  for(i = 0; i < n && !result; i++) {
    char what[40];
    snprintf(what, sizeof(what), "keys[%zu]", i);
    result = dyni_key(t, CITEM(keys[i]), what, NULL, err);
  }
  if(result || n == 0)
    goto fail;
  k = malloc(n * sizeof(*k));
  got = calloc(n, sizeof(*got));
  if(!k || !got) {
    result = dyni_fail(err, DYN_ENOMEM, "out of memory");
    goto fail;
  }
  for(i = 0; i < n; i++)
    k[i] = CITEM(keys[i]);
  pol = dyni_policy(c, t, flags);
  ddb_error_clear(&e);
  if(ddbc_batch_get_parallel(c->ddb, t->desc->name, k, n, t->key_names,
                             t->n_key, &pol, NULL, NULL, got, &e)) {
    result = dyni_error(err, &e);
    goto fail;
  }
  for(i = 0; i < n; i++)
    found[i] = PITEM(got[i]);

fail:
  free((void *)k);
  free(got);
  dyni_table_unref(t);
  return result;
}

/* ------------------------------------------------------------------------
** Iterators
*/
struct dyn_iter {
  dyn_client *c;
  dyn_table *t; /* rd's index name points into t->desc */
  char *table, *pk, *sk, *sk_hi;
  ddb_read rd;
  ddbc_policy pol;
  int page_size;
  long long limit, returned;
  size_t pages; /* atomic */
  ddb_page *page;
  int pos;
  int more;          /* sequential: another page to read */
  ddb_item *start;   /* sequential: its ExclusiveStartKey */
  ddb_lek_guard lek; /* sequential: its LastEvaluatedKeys */
  int done;          /* the end was reached */
  dyn_error error;   /* sticky error (error.code != DYN_OK) */

  /* parallel Scan */
  int nseg;            /* segments (threads); > 1: parallel */
  ddbc_stream *stream; /* started by the first dyn_iter_next() */
};

/* Make v a key value of type type from text (owned by the iterator);
** what names it in messages. */
static dyn_code key_value(ddb_av *v, ddb_type type, const char *text,
                          const char *name, const char *what, dyn_error *err) {
  size_t n;
  memset(v, 0, sizeof(*v));
  if(!text)
    return dyni_fail(err, DYN_EINPUT, "%s: no value for key '%s'", what, name);
  n = strlen(text);
  if(n == 0)
    return dyni_fail(err, DYN_EINPUT, "%s: key '%s' cannot be empty", what,
                     name);
  if(type == DDB_N && !ddb_number_fits(text, n))
    return dyni_fail(err, DYN_EINPUT,
                     "%s: key '%s' is N; '%.60s' is not a DynamoDB number",
                     what, name, text);
  if(type == DDB_B && !ddb_base64_ok(text, n))
    return dyni_fail(err, DYN_EINPUT, "%s: key '%s' is B; give it in base64",
                     what, name);
  v->type = type;
  v->text = text;
  v->n = (uint32_t)n;
  return DYN_OK;
}

/* The index called name of t (NULL: the table), or NULL. */
static const ddb_index *find_index(const dyn_table *t, const char *name) {
  int i;
  if(!name)
    return &t->desc->indexes[0];
  for(i = 1; i < t->desc->n_indexes; i++)
    if(strcmp(t->desc->indexes[i].name, name) == 0)
      return &t->desc->indexes[i];
  return NULL;
}

/* A new iterator with the table and index resolved and checked. */
static dyn_code iter_new(dyn_client *c, const char *table, const char *index,
                         int flags, long long limit, int page_size,
                         const char *what, dyn_iter **out, dyn_error *err) {
  dyn_iter *it;
  const ddb_index *idx;
  dyn_code result;

  *out = NULL;
  if(limit < 0 || page_size < 0)
    return dyni_fail(err, DYN_EINPUT, "%s: negative limit or page_size", what);
  it = calloc(1, sizeof(*it));
  if(!it)
    return dyni_fail(err, DYN_ENOMEM, "out of memory");
  it->c = c;
  it->limit = limit;
  it->page_size = page_size;
  it->more = 1;
  result = dyni_table_get(c, table, &it->t, err);
  if(result)
    goto fail;
  it->pol = dyni_policy(c, it->t, flags);
  idx = find_index(it->t, index);
  if(!idx) {
    result = dyni_fail(err, DYN_EINPUT, "%s: table '%s' has no index '%s'",
                       what, table, index);
    goto fail;
  }
  if(idx->name && !idx->is_local && (flags & DYN_CONSISTENT)) {
    result = dyni_fail(err, DYN_EINPUT,
                       "%s: '%s' is a global secondary index, which cannot "
                       "be read consistently",
                       what, idx->name);
    goto fail;
  }
  it->table = ddb_strdup(it->t->desc->name);
  if(!it->table) {
    result = dyni_fail(err, DYN_ENOMEM, "out of memory");
    goto fail;
  }
  it->rd.table = it->table;
  it->rd.index = idx->name;
  it->rd.desc = it->t->desc; /* the keys of every LastEvaluatedKey */
  *out = it;
  return DYN_OK;

fail:
  dyn_iter_free(it);
  return result;
}

dyn_code dyn_query_open(dyn_client *c, const dyn_query *q, int flags,
                        dyn_iter **out, dyn_error *err) {
  dyn_iter *it = NULL;
  const ddb_index *idx;
  dyn_code result;

  result = enter(c, flags, DYN_CONSISTENT, "dyn_query_open", err);
  if(result)
    return result;
  if(!q || !out)
    return dyni_fail(err, DYN_EMISUSE, "dyn_query_open: NULL argument");
  *out = NULL;
  if((int)q->sk_op < DYN_SK_NONE || q->sk_op > DYN_SK_BEGINS_WITH)
    return dyni_fail(err, DYN_EMISUSE, "dyn_query_open: bad sk_op");
  result = iter_new(c, q->table, q->index, flags, q->limit, q->page_size,
                    "Query", &it, err);
  if(result)
    return result;
  idx = find_index(it->t, q->index);
  it->pk = ddb_strdup(q->pk);
  it->sk = ddb_strdup(q->sk);
  it->sk_hi = ddb_strdup(q->sk_hi);
  if((q->pk && !it->pk) || (q->sk && !it->sk) || (q->sk_hi && !it->sk_hi)) {
    result = dyni_fail(err, DYN_ENOMEM, "out of memory");
    goto fail;
  }
  it->rd.pk_name = idx->pk.name;
  result =
      key_value(&it->rd.pk, idx->pk.type, it->pk, idx->pk.name, "Query", err);
  if(result)
    goto fail;
  if(q->sk_op != DYN_SK_NONE) {
    if(!idx->sk.name) {
      result = dyni_fail(
          err, DYN_EINPUT, "Query: %s '%s' has no sort key for sk_op",
          idx->name ? "index" : "table", idx->name ? idx->name : it->table);
      goto fail;
    }
    if(q->sk_op == DYN_SK_BEGINS_WITH && idx->sk.type == DDB_N) {
      result = dyni_fail(err, DYN_EINPUT,
                         "Query: begins_with needs an S or B sort key; '%s' "
                         "is N",
                         idx->sk.name);
      goto fail;
    }
    it->rd.sk_name = idx->sk.name;
    it->rd.sk_op = (ddb_skop)q->sk_op;
    result = key_value(&it->rd.sk[0], idx->sk.type, it->sk, idx->sk.name,
                       "Query", err);
    if(result == DYN_OK && q->sk_op == DYN_SK_BETWEEN)
      result = key_value(&it->rd.sk[1], idx->sk.type, it->sk_hi, idx->sk.name,
                         "Query (sk_hi)", err);
    if(result)
      goto fail;
  }
  it->rd.descending = q->descending != 0;
  *out = it;
  return DYN_OK;

fail:
  dyn_iter_free(it);
  return result;
}

dyn_code dyn_scan_open(dyn_client *c, const dyn_scan *s, int flags,
                       dyn_iter **out, dyn_error *err) {
  dyn_iter *it = NULL;
  dyn_code result;

  result = enter(c, flags, DYN_CONSISTENT, "dyn_scan_open", err);
  if(result)
    return result;
  if(!s || !out)
    return dyni_fail(err, DYN_EMISUSE, "dyn_scan_open: NULL argument");
  *out = NULL;
  if(s->segments < 0 || s->segments > DYN_MAX_SEGMENTS)
    return dyni_fail(err, DYN_EINPUT,
                     "Scan: segments %d out of range (0 to "
                     "%d)",
                     s->segments, DYN_MAX_SEGMENTS);
  if(s->total_segments < 0 || s->total_segments > 1000000 ||
     (s->total_segments > 0 &&
      (s->segment < 0 || s->segment >= s->total_segments)) ||
     (s->total_segments == 0 && s->segment != 0))
    return dyni_fail(err, DYN_EINPUT, "Scan: segment %d of %d is out of range",
                     s->segment, s->total_segments);
  if(s->segments > 1 && s->total_segments > 0)
    return dyni_fail(err, DYN_EINPUT,
                     "Scan: set segments (threads here) or segment and "
                     "total_segments (your threads), not both");
  result = iter_new(c, s->table, s->index, flags, s->limit, s->page_size,
                    "Scan", &it, err);
  if(result)
    return result;
  it->rd.segment = s->segment;
  it->rd.total_segments = s->total_segments;
  if(s->segments > 1)
    it->nseg = s->segments;
  *out = it;
  return DYN_OK;
}

/* Record a sticky error on the iterator and copy it to err. */
static dyn_code iter_fail(dyn_iter *it, dyn_error *err) {
  it->done = 1;
  if(err)
    *err = it->error;
  return it->error.code;
}

/* Sequential: read the next page into it->page. */
static dyn_code read_next_page(dyn_iter *it, dyn_error *err) {
  ddb_page *pg = NULL;
  ddb_error e;
  long long left = it->limit ? it->limit - it->returned : 0;
  it->rd.start = it->start;
  it->rd.limit = it->page_size;
  if(left > 0 && (it->page_size == 0 || left < it->page_size))
    it->rd.limit = left;
  ddb_error_clear(&e);
  if(ddbc_read_page(it->c->ddb, &it->rd, &it->pol, &pg, &e)) {
    dyni_error(&it->error, &e);
    return iter_fail(it, err);
  }
  if(ddb_lek_next(&it->lek, it->c->ddb, &it->rd, pg, &e)) {
    ddb_page_unref(pg);
    dyni_error(&it->error, &e);
    return iter_fail(it, err);
  }
  __atomic_add_fetch(&it->pages, 1, __ATOMIC_RELAXED);
  ddb_item_unref(it->start);
  it->start = ddb_item_ref(pg->last_key);
  it->more = it->start != NULL;
  it->page = pg;
  it->pos = 0;
  return DYN_OK;
}

/* Parallel: the next page of the Scan's stream (started on the first
** call) into it->page; at the end it->page stays NULL.  Empty pages come
** too: dyn_iter_next() skips them. */
static dyn_code take_next_page(dyn_iter *it, dyn_error *err) {
  ddb_page *pg = NULL;
  ddb_error e;
  ddb_error_clear(&e);
  if(!it->stream) {
    ddb_read rd = it->rd;
    rd.limit = it->page_size; /* the Limit of every request */
    if(ddbc_stream_start(it->c->ddb, &rd, &it->pol, NULL, it->nseg, it->nseg,
                         DDBC_STREAM_LIMIT_EVERY, &it->stream, &e)) {
      dyni_error(&it->error, &e);
      return iter_fail(it, err);
    }
  }
  if(ddbc_stream_next(it->stream, NULL, NULL, &pg, NULL, &e)) {
    dyni_error(&it->error, &e);
    ddbc_stream_free(it->stream); /* its threads stop */
    it->stream = NULL;
    return iter_fail(it, err);
  }
  if(!pg) {
    it->more = 0;
    return DYN_OK;
  }
  __atomic_add_fetch(&it->pages, 1, __ATOMIC_RELAXED);
  it->page = pg;
  it->pos = 0;
  return DYN_OK;
}

dyn_code dyn_iter_next(dyn_iter *it, const dyn_item **item, dyn_error *err) {
  dyn_code result;
  if(err)
    memset(err, 0, sizeof(*err));
  if(!it || !item)
    return dyni_fail(err, DYN_EMISUSE, "dyn_iter_next: NULL argument");
  *item = NULL;
  if(it->error.code)
    return iter_fail(it, err);
  for(;;) {
    if(it->page && it->pos < it->page->n_items) {
      if(it->limit && it->returned >= it->limit)
        break;
      *item = PITEM(it->page->items[it->pos++]);
      it->returned++;
      return DYN_OK;
    }
    ddb_page_unref(it->page);
    it->page = NULL;
    if(it->done || !it->more || (it->limit && it->returned >= it->limit))
      break;
    if(it->nseg > 1) {
      result = take_next_page(it, err);
    } else {
      result = read_next_page(it, err);
    }
    if(result)
      return result;
  }
  /* the end: let a parallel Scan's threads go now */
  it->done = 1;
  ddbc_stream_free(it->stream);
  it->stream = NULL;
  ddb_page_unref(it->page);
  it->page = NULL;
  return DYN_OK;
}

size_t dyn_iter_pages(const dyn_iter *it) {
  return it ? __atomic_load_n(&it->pages, __ATOMIC_RELAXED) : 0;
}

void dyn_iter_free(dyn_iter *it) {
  if(!it)
    return;
  ddbc_stream_free(it->stream); /* stops and joins its threads */
  ddb_page_unref(it->page);
  ddb_item_unref(it->start);
  ddb_lek_guard_free(&it->lek);
  dyni_table_unref(it->t);
  free(it->table);
  free(it->pk);
  free(it->sk);
  free(it->sk_hi);
  free(it);
}
