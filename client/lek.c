/*
** lek.c -- the LastEvaluatedKeys of a Query or Scan: the rules every key a
** correct server sends keeps (ddb_lek_check, for each page), and the guard
** that follows them from page to page (ddb_lek_next), so that a server
** that sends keys for ever fails the read instead of keeping it going.
*/
#include <stdlib.h>
#include <string.h>

#include "ddb_client_int.h"
#include "http_int.h"

/* ------------------------------------------------------------------------
** LastEvaluatedKeys a correct server can send
**
** A reader follows LastEvaluatedKey until an answer has none, so a server
** that always sends a new one keeps it reading for ever (one did: 10 M
** requests in 12 minutes).  No cap on pages is right (a table may be very
** large, and a filter makes empty pages that end on a key), so these are
** rules every answer of a correct server keeps, and an answer that breaks
** one is an error that names it:
**
**  1. A LastEvaluatedKey is the key of the item where the read stopped
**     (the API's definition of it), and the reader sends it back as
**     ExclusiveStartKey: it holds exactly the key attributes of what is
**     read (an index's key and the table's), each of its type (from
**     ddb_read.desc; no description, no check).
**  2. A Query reads one partition: its keys have the Query's partition key.
**  3. A Query reads its partition in sort key order, so each key's sort key
**     is past the ExclusiveStartKey's in the Query's direction (strictly on
**     a table, whose sort keys are unique in a partition; not before it on
**     an index, whose sort keys may repeat), and meets the key condition,
**     as every item the Query reads does.
**  4. Without a FilterExpression every item read is returned, so a page
**     with items ends on the key of its last item (when the items hold
**     their key: a projection may leave it out).
**  5. Each page that ends on a key read an item no page of the read read
**     before (where it stopped, past where it started), so a read ends on
**     no more keys than the table has items.  ddb_lek_next() counts them,
**     and the idle ones apart: pages that bring no item although they read
**     none (ScannedCount 0), or although nothing was filtered out (none of
**     these from a correct server, whose page ends on an item it read).
**     Past LEK_IDLE_MIN idle pages, or LEK_PAGES_MIN pages, it asks
**     DescribeTable for the ItemCount and fails the read past
**     LEK_IDLE_MIN + 2 x ItemCount idle pages or LEK_PAGES_MIN + 2 x
**     ItemCount pages (asking again when a new bound is reached).
**     DynamoDB updates ItemCount about every six hours: the factor 2 and
**     LEK_PAGES_MIN leave room for what the table gained since.  A server
**     that lies in DescribeTable too is not caught; the statement can
**     still be interrupted.
**  6. No key comes twice: the start key at once (ddb_read_page), or keys
**     that go round in a circle (ddb_lek_next, Brent's cycle detection).
*/

/* Idle pages (rule 5) that any read may make before DescribeTable is
** asked; pages ending on a key (a table of 100 GB in pages of 1 MB, loaded
** since DynamoDB last counted its items). */
#define LEK_IDLE_MIN  1000
#define LEK_PAGES_MIN 100000

/* The bytes of key value v in *out (a malloc'ed copy: S as it is, B
** decoded; free()), their length in *n.  Returns 0, or -1 (bad base64,
** out of memory). */
static int key_bytes(const ddb_av *v, unsigned char **out, size_t *n) {
  *out = malloc((size_t)v->n + 1);
  if(!*out)
    return -1;
  if(v->type == DDB_B) {
    *n = ddb_base64_decode(v->text, v->n, *out, (size_t)v->n + 1);
    if(*n == (size_t)-1) {
      free(*out);
      return -1;
    }
  } else {
    memcpy(*out, v->text, v->n);
    *n = v->n;
  }
  return 0;
}

/* Compare the canonical numbers x and y (ddb_number_canonical: "0", or
** [-]DIGITSe<exp> with no leading or trailing zero digit) by value. */
static int canonical_cmp(const char *x, const char *y) {
  int nx = x[0] == '-', ny = y[0] == '-', sx, sy;
  const char *ex, *ey;
  long px, py;
  size_t dx, dy;
  int c;
  sx = strcmp(x, "0") == 0 ? 0 : nx ? -1 : 1;
  sy = strcmp(y, "0") == 0 ? 0 : ny ? -1 : 1;
  if(sx != sy || sx == 0)
    return sx < sy ? -1 : sx > sy;
  ex = strchr(x, 'e');
  ey = strchr(y, 'e');
  dx = (size_t)(ex - x - nx);
  dy = (size_t)(ey - y - ny);
  /* the place of the first digit decides, then the digits */
  px = (long)dx + strtol(ex + 1, NULL, 10);
  py = (long)dy + strtol(ey + 1, NULL, 10);
  if(px != py)
    c = px < py ? -1 : 1;
  else {
    c = memcmp(x + nx, y + ny, dx < dy ? dx : dy);
    if(c == 0)
      c = dx < dy ? -1 : dx > dy;
  }
  return sx < 0 ? -c : c;
}

/* Compare key values a and b as DynamoDB orders a sort key (S and B by
** their bytes, unsigned; N by value) into *cmp (<0, 0, >0); with prefix,
** *cmp is 0 when b's bytes begin a's and 1 when not.  Returns 0, or -1
** when they cannot be compared (types differ, bad value). */
static int key_cmp(const ddb_av *a, const ddb_av *b, int prefix, int *cmp) {
  int result = -1;
  if(a->type != b->type)
    return -1;
  if(a->type == DDB_N) {
    ddb_buf x, y;
    ddb_buf_init(&x, 1024);
    ddb_buf_init(&y, 1024);
    if(!prefix && ddb_number_canonical(a->text, a->n, &x) == 0 &&
       ddb_number_canonical(b->text, b->n, &y) == 0 && !x.failed &&
       !y.failed) {
      *cmp = canonical_cmp(x.p, y.p);
      result = 0;
    }
    ddb_buf_free(&x);
    ddb_buf_free(&y);
  } else if(a->type == DDB_S || a->type == DDB_B) {
    unsigned char *x = NULL, *y = NULL;
    size_t nx = 0, ny = 0;
    if(key_bytes(a, &x, &nx) == 0 && key_bytes(b, &y, &ny) == 0) {
      if(prefix)
        *cmp = !(ny <= nx && memcmp(x, y, ny) == 0);
      else {
        int c = memcmp(x, y, nx < ny ? nx : ny);
        *cmp = c ? c : (nx < ny ? -1 : nx > ny);
      }
      result = 0;
    }
    free(x);
    free(y);
  }
  return result;
}

/* The entry of r's description for what r reads (the table or its
** index), or NULL when r has no description or it has no such index. */
static const ddb_index *read_index(const ddb_read *r) {
  int i;
  if(!r->desc || r->desc->n_indexes < 1)
    return NULL;
  if(!r->index)
    return &r->desc->indexes[0];
  for(i = 1; i < r->desc->n_indexes; i++)
    if(r->desc->indexes[i].name &&
       strcmp(r->desc->indexes[i].name, r->index) == 0)
      return &r->desc->indexes[i];
  return NULL;
}

/* Rule 1: key has exactly the key attributes of idx and of the table
** (base), each of its type.  Returns DDB_OK or the error (what names the
** read: "Scan of 'T'"). */
static ddb_result lek_shape(const ddb_index *idx, const ddb_index *base,
                            const ddb_item *key, const char *what,
                            ddb_error *err) {
  /* every attribute of a multi-attribute key, then the table's */
  const ddb_keyattr *ka[2 * DDB_KEY_ATTRS + 2];
  const char *names[2 * DDB_KEY_ATTRS + 2] = {0};
  uint32_t i, n = 0, k, m = 0;
  for(i = 0; i < (uint32_t)ddb_key_attrs(idx, 0); i++)
    ka[m++] = &idx->pks[i];
  for(i = 0; i < (uint32_t)ddb_key_attrs(idx, 1); i++)
    ka[m++] = &idx->sks[i];
  ka[m++] = &base->pk;
  ka[m++] = &base->sk;
  for(i = 0; i < m; i++) {
    const ddb_av *a;
    if(!ka[i]->name)
      continue;
    for(k = 0; k < n && strcmp(names[k], ka[i]->name) != 0; k++)
      ;
    if(k < n)
      continue; /* an LSI's partition key is the table's */
    names[n++] = ka[i]->name;
    a = ddb_item_get(key, ka[i]->name);
    if(!a)
      return ddb_error_set(err, DDB_ERR_PARSE,
                           "%s: the answer's LastEvaluatedKey is no key "
                           "(it lacks '%.100s')",
                           what, ka[i]->name);
    if(a->type != ka[i]->type)
      return ddb_error_set(err, DDB_ERR_PARSE,
                           "%s: the answer's LastEvaluatedKey is no key "
                           "('%.100s' is %s, the key's is %s)",
                           what, ka[i]->name, ddb_type_name(a->type),
                           ddb_type_name(ka[i]->type));
  }
  for(i = 0; i < key->root.n; i++) {
    const char *an = key->root.kids[i].name;
    for(k = 0; k < n && strcmp(names[k], an) != 0; k++)
      ;
    if(k == n)
      return ddb_error_set(err, DDB_ERR_PARSE,
                           "%s: the answer's LastEvaluatedKey is no key "
                           "('%.100s' is no key attribute)",
                           what, an);
  }
  return DDB_OK;
}

/* Does sort key value v meet r's key condition?  1, 0, or -1 when it
** cannot be told (values that do not compare). */
static int meets_condition(const ddb_read *r, const ddb_av *v) {
  int c = 0, d = 0;
  if(key_cmp(v, &r->sk[0], r->sk_op == DDB_SK_BEGINS_WITH, &c))
    return -1;
  switch(r->sk_op) {
  case DDB_SK_EQ: return c == 0;
  case DDB_SK_LT: return c < 0;
  case DDB_SK_LE: return c <= 0;
  case DDB_SK_GT: return c > 0;
  case DDB_SK_GE: return c >= 0;
  case DDB_SK_BEGINS_WITH: return c == 0;
  case DDB_SK_BETWEEN:
    if(key_cmp(v, &r->sk[1], 0, &d))
      return -1;
    return c >= 0 && d <= 0;
  default: return 1;
  }
}

/* Rules 2 and 3 for a Query's key: its partition, its sort key's order
** after start (NULL: the first page) and its key condition.  sk_name is
** the sort key of what is read (NULL: none known); strict when sort keys
** are unique (the table). */
static ddb_result lek_order(const ddb_read *r, const char *sk_name, int strict,
                            const ddb_item *key, const char *what,
                            ddb_error *err) {
  const ddb_av *pk = ddb_item_get(key, r->pk_name), *sk, *from;
  int c;
  if(!pk || !ddb_av_equal(pk, &r->pk))
    return ddb_error_set(err, DDB_ERR_PARSE,
                         "%s: the answer's LastEvaluatedKey is in another "
                         "partition than the Query's ('%.100s')",
                         what, r->pk_name);
  if(!sk_name || !(sk = ddb_item_get(key, sk_name)))
    return DDB_OK;
  from = r->start ? ddb_item_get(r->start, sk_name) : NULL;
  if(from && key_cmp(sk, from, 0, &c) == 0) {
    if(r->descending)
      c = -c;
    if(c < 0 || (strict && c == 0))
      return ddb_error_set(err, DDB_ERR_PARSE,
                           "%s: the answer's LastEvaluatedKey goes back "
                           "(its '%.100s' is not %s the ExclusiveStartKey's)",
                           what, sk_name, r->descending ? "below" : "past");
  }
  if(r->sk_op != DDB_SK_NONE && r->sk_name &&
     strcmp(r->sk_name, sk_name) == 0 && meets_condition(r, sk) == 0)
    return ddb_error_set(err, DDB_ERR_PARSE,
                         "%s: the answer's LastEvaluatedKey is outside the "
                         "key condition on '%.100s'",
                         what, sk_name);
  return DDB_OK;
}

/* Rule 4: the key of page pg (read without a filter) is its last item's,
** when that item holds every attribute of the key. */
static ddb_result lek_last_item(const ddb_page *pg, const char *what,
                                ddb_error *err) {
  const ddb_item *last = pg->items[pg->n_items - 1], *key = pg->last_key;
  uint32_t i;
  for(i = 0; i < key->root.n; i++)
    if(!ddb_item_get(last, key->root.kids[i].name))
      return DDB_OK; /* projected away: nothing to compare */
  for(i = 0; i < key->root.n; i++)
    if(!ddb_av_equal(&key->root.kids[i],
                     ddb_item_get(last, key->root.kids[i].name)))
      return ddb_error_set(err, DDB_ERR_PARSE,
                           "%s: the answer's LastEvaluatedKey is not the key "
                           "of its last item (with no filter, the read "
                           "stopped there)",
                           what);
  return DDB_OK;
}

/* Rules 1 to 4 on the LastEvaluatedKey of page pg of r (see
** ddb_client_int.h). */
ddb_result ddb_lek_check(const ddb_read *r, const ddb_page *pg,
                         ddb_error *err) {
  const ddb_index *idx = read_index(r);
  const char *op = r->pk_name ? "Query" : "Scan";
  char what[300];
  ddb_result result;
  if(!pg->last_key)
    return DDB_OK;
  snprintf(what, sizeof(what), "%s of '%.200s'%s%.60s%s", op, r->table,
           r->index ? " (index '" : "", r->index ? r->index : "",
           r->index ? "')" : "");
  if(idx) {
    result = lek_shape(idx, &r->desc->indexes[0], pg->last_key, what, err);
    if(result)
      return result;
  }
  if(r->n_filters == 0 && pg->n_items > 0) {
    result = lek_last_item(pg, what, err);
    if(result)
      return result;
  }
  if(!r->pk_name)
    return DDB_OK;
  return lek_order(r, idx ? idx->sk.name : r->sk_name, r->index == NULL,
                   pg->last_key, what, err);
}

/* Rule 5: the read ended on more keys (or idle pages) than g's bounds;
** ask DescribeTable for the table's ItemCount (else take r's
** description's) and set new bounds, or fail the read. */
static ddb_result lek_bound(ddb_lek_guard *g, ddb_client *c, const ddb_read *r,
                            const char *op, ddb_error *err) {
  ddb_table_desc *d = NULL;
  ddb_error e;
  long long items = -1;
  ddb_error_clear(&e);
  if(c && ddb_describe_table(c, r->table, &d, &e) == DDB_OK)
    items = d->item_count;
  else if(r->desc)
    items = r->desc->item_count;
  ddb_table_desc_free(d);
  if(items < 0)
    return ddb_error_set(err, DDB_ERR_PARSE,
                         "%s of '%.200s': %lld pages ended on a "
                         "LastEvaluatedKey (%lld of them idle), and how many "
                         "items the table has is not known (DescribeTable: "
                         "%.200s)",
                         op, r->table, g->pages, g->idle,
                         e.message[0] ? e.message : "no ItemCount");
  g->bound = LEK_PAGES_MIN + 2 * items;
  g->idle_bound = LEK_IDLE_MIN + 2 * items;
  if(g->idle > g->idle_bound)
    return ddb_error_set(err, DDB_ERR_PARSE,
                         "%s of '%.200s': %lld pages ended on a "
                         "LastEvaluatedKey with no item read (or none "
                         "returned with no filter), more than the table's "
                         "%lld items allow (DescribeTable's ItemCount): the "
                         "server's keys do not end",
                         op, r->table, g->idle, items);
  if(g->pages > g->bound)
    return ddb_error_set(err, DDB_ERR_PARSE,
                         "%s of '%.200s': %lld pages ended on a "
                         "LastEvaluatedKey, more than the table's %lld items "
                         "allow (DescribeTable's ItemCount): the server's "
                         "keys do not end",
                         op, r->table, g->pages, items);
  return DDB_OK;
}

/* See ddb_client.h: rules 5 and 6 across the pages of one read.  Brent's
** algorithm: the saved key (the tortoise) moves to the newest key (the
** hare) whenever lam reaches power, which doubles. */
ddb_result ddb_lek_next(ddb_lek_guard *g, ddb_client *c, const ddb_read *r,
                        const ddb_page *pg, ddb_error *err) {
  const ddb_item *key = pg ? pg->last_key : NULL;
  const char *op = r->pk_name ? "Query" : "Scan";
  if(!key)
    return DDB_OK;
  if(g->saved && ddb_av_equal(&g->saved->root, &key->root))
    return ddb_error_set(err, DDB_ERR_PARSE,
                         "%s of '%.200s': the answers' LastEvaluatedKeys go "
                         "round in a circle (a key came back: a loop)",
                         op, r->table);
  if(g->power == 0)
    g->power = g->lam = 1;
  if(g->lam == g->power) {
    ddb_item_unref(g->saved);
    g->saved = ddb_item_ref((ddb_item *)key);
    g->power *= 2;
    g->lam = 0;
  }
  g->lam++;
  g->pages++;
  if(pg->count == 0 && (pg->scanned == 0 || r->n_filters == 0))
    g->idle++;
  if((g->idle > LEK_IDLE_MIN && g->idle > g->idle_bound) ||
     (g->pages > LEK_PAGES_MIN && g->pages > g->bound))
    return lek_bound(g, c, r, op, err);
  return DDB_OK;
}

/* Drop g's saved key; g is then as new. */
void ddb_lek_guard_free(ddb_lek_guard *g) {
  ddb_item_unref(g->saved);
  memset(g, 0, sizeof(*g));
}
