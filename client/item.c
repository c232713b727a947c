/*
** item.c -- DynamoDB AttributeValues: decoding, building, comparing,
** JSON rendering (numbers: number.c; packed items for the cache: pack.c).
**
** An item is decoded from a tape of its JSON text (tape.c) in two passes:
** the first counts nodes and string bytes, the second lays everything out
** in one allocation:
**
**     [ddb_item][ddb_av nodes ...][names and texts, NUL-terminated ...]
**
** so an item is freed with one free() and its size is known exactly.
*/
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddb_client_int.h"

/* Deepest nesting accepted (DynamoDB itself allows 32 levels). */
#define ITEM_MAX_DEPTH 64

const char *ddb_type_name(ddb_type t) {
  switch(t) {
  case DDB_S: return "S";
  case DDB_N: return "N";
  case DDB_B: return "B";
  case DDB_BOOL: return "BOOL";
  case DDB_NULL: return "NULL";
  case DDB_M: return "M";
  case DDB_L: return "L";
  case DDB_SS: return "SS";
  case DDB_NS: return "NS";
  case DDB_BS: return "BS";
  default: return "?";
  }
}

/* The type named s ("S", "N", ... "BS"), or DDB_NONE. */
static ddb_type type_from_name(const char *s) {
  static const ddb_type all[] = {DDB_S, DDB_N, DDB_B,  DDB_BOOL, DDB_NULL,
                                 DDB_M, DDB_L, DDB_SS, DDB_NS,   DDB_BS};
  size_t i;
  for(i = 0; i < sizeof(all) / sizeof(all[0]); i++)
    if(strcmp(s, ddb_type_name(all[i])) == 0)
      return all[i];
  return DDB_NONE;
}

ddb_item *ddb_item_ref(ddb_item *it) {
  if(it)
    __atomic_add_fetch(&it->refs, 1, __ATOMIC_RELAXED);
  return it;
}

void ddb_item_unref(ddb_item *it) {
  if(it && __atomic_sub_fetch(&it->refs, 1, __ATOMIC_ACQ_REL) == 0)
    free(it);
}

const ddb_av *ddb_item_get(const ddb_item *it, const char *name) {
  uint32_t i;
  if(!it)
    return NULL;
  for(i = 0; i < it->root.n; i++)
    if(strcmp(it->root.kids[i].name, name) == 0)
      return &it->root.kids[i];
  return NULL;
}

/* ------------------------------------------------------------------------
** Decoding, from a tape of the JSON text (tape.c)
*/

/* See ddb_client_int.h. */
ddb_item *ddb_item_alloc(size_t nodes, size_t bytes, uint32_t n,
                         ddb_layout *L) {
  size_t total = sizeof(ddb_item) + nodes * sizeof(ddb_av) + bytes;
  ddb_item *it = malloc(total);
  if(!it)
    return NULL;
  it->refs = 1;
  it->plain = 0;
  it->bytes = total;
  memset(&it->root, 0, sizeof(it->root));
  it->root.type = DDB_M;
  it->root.n = n;
  it->root.kids = (ddb_av *)(it + 1);
  L->next_node = it->root.kids + n;
  L->next_byte = (char *)(it->root.kids + nodes);
  return it;
}

/* The type named by the string token k ("S", "N", ...), or DDB_NONE. */
static inline ddb_type type_of(const char *text, const ddb_jtok *k) {
  const char *s = text + k->off;
  char buf[8];
  if(k->esc) {
    if(k->len >= sizeof(buf))
      return DDB_NONE;
    ddb_tape_str(text, k, buf);
    return type_from_name(buf);
  }
  switch(k->len) {
  case 1:
    return s[0] == 'S'   ? DDB_S
           : s[0] == 'N' ? DDB_N
           : s[0] == 'B' ? DDB_B
           : s[0] == 'M' ? DDB_M
           : s[0] == 'L' ? DDB_L
                         : DDB_NONE;
  case 2:
    if(s[1] != 'S')
      return DDB_NONE;
    return s[0] == 'S'   ? DDB_SS
           : s[0] == 'N' ? DDB_NS
           : s[0] == 'B' ? DDB_BS
                         : DDB_NONE;
  case 4:
    return memcmp(s, "BOOL", 4) == 0   ? DDB_BOOL
           : memcmp(s, "NULL", 4) == 0 ? DDB_NULL
                                       : DDB_NONE;
  default: return DDB_NONE;
  }
}

/* Is string token k a DynamoDB number? */
static int number_ok(const char *text, const ddb_jtok *k) {
  char buf[128];
  if(!k->esc)
    return ddb_number_ok(text + k->off, k->len);
  if(k->len >= sizeof(buf))
    return 0;
  return ddb_number_ok(buf, ddb_tape_str(text, k, buf));
}

/* Pass 1 over the AttributeValue {"T": value} at token i: count nodes and
** bytes (a string's raw length bounds its unescaped one).  Returns 0, or
** -1 when it is not a valid AttributeValue. */
static int av_count(const char *text, const ddb_jtok *t, uint32_t i,
                    ddb_layout *L, int depth) {
  const ddb_jtok *v;
  uint32_t j, k;
  ddb_type ty;
  if(depth > ITEM_MAX_DEPTH || t[i].type != DDB_JOBJ || t[i].n != 1)
    return -1;
  ty = type_of(text, &t[i + 1]);
  v = &t[i + 2];
  switch(ty) {
  case DDB_S:
  case DDB_N:
  case DDB_B:
    if(v->type != DDB_JSTR)
      return -1;
    /* a number goes out as JSON text as it is: it must be one */
    if(ty == DDB_N && !number_ok(text, v)) {
      L->bad_number = v;
      return -1;
    }
    L->bytes += v->len + 1;
    L->esc |= v->esc;
    return 0;
  case DDB_BOOL: return v->type == DDB_JTRUE || v->type == DDB_JFALSE ? 0 : -1;
  case DDB_NULL: return v->type == DDB_JTRUE ? 0 : -1;
  case DDB_M:
    if(v->type != DDB_JOBJ)
      return -1;
    for(j = 0, k = i + 3; j < v->n; j++, k = t[k + 1].end) {
      L->nodes++;
      L->bytes += t[k].len + 1;
      L->esc |= t[k].esc;
      if(av_count(text, t, k + 1, L, depth + 1))
        return -1;
    }
    return 0;
  case DDB_L:
    if(v->type != DDB_JARR)
      return -1;
    for(j = 0, k = i + 3; j < v->n; j++, k = t[k].end) {
      L->nodes++;
      if(av_count(text, t, k, L, depth + 1))
        return -1;
    }
    return 0;
  case DDB_SS:
  case DDB_NS:
  case DDB_BS:
    if(v->type != DDB_JARR)
      return -1;
    for(j = 0, k = i + 3; j < v->n; j++, k = t[k].end) {
      if(t[k].type != DDB_JSTR)
        return -1;
      if(ty == DDB_NS && !number_ok(text, &t[k])) {
        L->bad_number = &t[k];
        return -1;
      }
      L->nodes++;
      L->bytes += t[k].len + 1;
      L->esc |= t[k].esc;
    }
    return 0;
  default: return -1;
  }
}

/* Copy string token k into the layout's bytes; its length goes to *len. */
static const char *lay_str(ddb_layout *L, const char *text, const ddb_jtok *k,
                           uint32_t *len) {
  char *p = L->next_byte;
  size_t n = ddb_tape_str(text, k, p);
  L->next_byte += n + 1;
  *len = (uint32_t)n;
  return p;
}

/* Pass 2: fill *out from the AttributeValue at token i (checked by
** av_count). */
static void av_fill(const char *text, const ddb_jtok *t, uint32_t i,
                    ddb_av *out, ddb_layout *L) {
  const ddb_jtok *v = &t[i + 2];
  ddb_type ty = type_of(text, &t[i + 1]);
  uint32_t j, k;
  out->type = ty;
  out->kids = NULL;
  out->text = NULL;
  switch(ty) {
  case DDB_S:
  case DDB_N:
  case DDB_B: out->text = lay_str(L, text, v, &out->n); break;
  case DDB_BOOL: out->n = v->type == DDB_JTRUE; break;
  case DDB_NULL: out->n = 0; break;
  case DDB_M:
    out->n = v->n;
    out->kids = L->next_node;
    L->next_node += out->n;
    for(j = 0, k = i + 3; j < v->n; j++, k = t[k + 1].end) {
      ddb_av *kid = &out->kids[j];
      kid->name = lay_str(L, text, &t[k], &kid->name_len);
      av_fill(text, t, k + 1, kid, L);
    }
    break;
  case DDB_L:
    out->n = v->n;
    out->kids = L->next_node;
    L->next_node += out->n;
    for(j = 0, k = i + 3; j < v->n; j++, k = t[k].end) {
      ddb_av *kid = &out->kids[j];
      kid->name = NULL;
      kid->name_len = 0;
      av_fill(text, t, k, kid, L);
    }
    break;
  default: /* sets */
    out->n = v->n;
    out->kids = L->next_node;
    L->next_node += out->n;
    for(j = 0, k = i + 3; j < v->n; j++, k = t[k].end) {
      ddb_av *kid = &out->kids[j];
      kid->type = ty == DDB_SS ? DDB_S : ty == DDB_NS ? DDB_N : DDB_B;
      kid->name = NULL;
      kid->name_len = 0;
      kid->kids = NULL;
      kid->text = lay_str(L, text, &t[k], &kid->n);
    }
  }
}

/* At most cap - 1 bytes of string token k, for a message (unescaped
** when it fits, else its raw start). */
static const char *excerpt(const char *text, const ddb_jtok *k, char *buf,
                           size_t cap) {
  if(k->len < cap) {
    ddb_tape_str(text, k, buf);
    return buf;
  }
  memcpy(buf, text + k->off, cap - 1);
  buf[cap - 1] = 0;
  return buf;
}

/* Decode the item object at token obj of tape tp (see ddb_client_int.h). */
ddb_result ddb_item_from_tape(const char *text, const ddb_tape *tp,
                              uint32_t obj, ddb_item **out, ddb_error *err) {
  const ddb_jtok *t = tp->tok;
  ddb_layout L;
  ddb_item *it;
  uint32_t j, k;
  char name[101], num[61];

  *out = NULL;
  memset(&L, 0, sizeof(L));
  if(t[obj].type != DDB_JOBJ)
    return ddb_error_set(err, DDB_ERR_PARSE, "item is not a JSON object");
  for(j = 0, k = obj + 1; j < t[obj].n; j++, k = t[k + 1].end) {
    L.nodes++;
    L.bytes += t[k].len + 1;
    L.esc |= t[k].esc;
    if(av_count(text, t, k + 1, &L, 1)) {
      if(L.bad_number)
        return ddb_error_set(err, DDB_ERR_PARSE,
                             "attribute '%s': '%s' is not a DynamoDB number",
                             excerpt(text, &t[k], name, sizeof(name)),
                             excerpt(text, L.bad_number, num, sizeof(num)));
      return ddb_error_set(err, DDB_ERR_PARSE,
                           "attribute '%s' is not a valid AttributeValue",
                           excerpt(text, &t[k], name, sizeof(name)));
    }
  }
  it = ddb_item_alloc(L.nodes, L.bytes, t[obj].n, &L);
  if(!it)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory decoding an item");
  for(j = 0, k = obj + 1; j < t[obj].n; j++, k = t[k + 1].end) {
    ddb_av *a = &it->root.kids[j];
    a->name = lay_str(&L, text, &t[k], &a->name_len);
    av_fill(text, t, k + 1, a, &L);
  }
  /* a JSON string without escapes holds no '"', backslash or control
  ** character (the tokenizer refuses them raw): when no name or text of
  ** the item had an escape (av_count saw them all), none needs escaping to
  ** render */
  it->plain = !L.esc;
  *out = it;
  return DDB_OK;
}

/* Decode the item that text[0..n) is (see ddb_client_int.h). */
ddb_result ddb_item_parse(const char *text, size_t n, ddb_item **out,
                          ddb_error *err) {
  ddb_tape t;
  const char *p = text, *end = text + n;
  ddb_result result;
  memset(&t, 0, sizeof(t));
  *out = NULL;
  if(ddb_tape_value(&t, text, &p, end) ||
     (p = ddb_tape_skip_ws(p, end)) != end)
    result = ddb_error_set(err, DDB_ERR_PARSE, "item is not valid JSON");
  else
    result = ddb_item_from_tape(text, &t, 0, out, err);
  ddb_tape_free(&t);
  return result;
}

/* Decode a cJSON item (see ddb_client_int.h). */
ddb_result ddb_item_decode(const cJSON *obj, ddb_item **out, ddb_error *err) {
  char *text;
  ddb_result result;
  *out = NULL;
  if(!cJSON_IsObject(obj))
    return ddb_error_set(err, DDB_ERR_PARSE, "item is not a JSON object");
  text = cJSON_PrintUnformatted(obj);
  if(!text)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory decoding an item");
  result = ddb_item_parse(text, strlen(text), out, err);
  cJSON_free(text);
  return result;
}

ddb_item *ddb_item_from_avs(const ddb_av *vals, int n) {
  size_t bytes = 0;
  int i;
  ddb_item *it;
  ddb_layout L;
  char *p;
  for(i = 0; i < n; i++)
    bytes += strlen(vals[i].name) + 1 + vals[i].n + 1;
  it = ddb_item_alloc((size_t)n, bytes, (uint32_t)n, &L);
  if(!it)
    return NULL;
  p = L.next_byte;
  for(i = 0; i < n; i++) {
    ddb_av *a = &it->root.kids[i];
    size_t nl = strlen(vals[i].name);
    memset(a, 0, sizeof(*a));
    a->type = vals[i].type;
    a->n = vals[i].n;
    memcpy(p, vals[i].name, nl + 1);
    a->name = p;
    a->name_len = (uint32_t)nl;
    p += nl + 1;
    memcpy(p, vals[i].text, vals[i].n);
    p[vals[i].n] = 0;
    a->text = p;
    p += vals[i].n + 1;
  }
  return it;
}

/* ------------------------------------------------------------------------
** Building items from attribute trees, comparing, sizing
*/
static void tree_count(const ddb_av *a, size_t *nodes, size_t *bytes) {
  uint32_t i;
  if(a->name)
    *bytes += a->name_len + 1;
  if(a->text)
    *bytes += a->n + 1;
  if(a->type == DDB_M || a->type == DDB_L || a->type == DDB_SS ||
     a->type == DDB_NS || a->type == DDB_BS) {
    *nodes += a->n;
    for(i = 0; i < a->n; i++)
      tree_count(&a->kids[i], nodes, bytes);
  }
}

/* Copy a (its name, text and kids, at any depth) into out, the bytes and
** nodes taken from the layout L of the one allocation being filled. */
static void tree_copy(const ddb_av *a, ddb_av *out, ddb_layout *L) {
  uint32_t i;
  *out = *a;
  if(a->name) {
    memcpy(L->next_byte, a->name, a->name_len);
    L->next_byte[a->name_len] = 0;
    out->name = L->next_byte;
    L->next_byte += a->name_len + 1;
  }
  if(a->text) {
    memcpy(L->next_byte, a->text, a->n);
    L->next_byte[a->n] = 0;
    out->text = L->next_byte;
    L->next_byte += a->n + 1;
  }
  if(a->kids) {
    out->kids = L->next_node;
    L->next_node += a->n;
    for(i = 0; i < a->n; i++)
      tree_copy(&a->kids[i], &out->kids[i], L);
  }
}

ddb_item *ddb_item_from_attrs(const ddb_av *const *attrs, int n) {
  size_t nodes = (size_t)n, bytes = 0;
  ddb_layout L;
  ddb_item *it;
  int i;
  for(i = 0; i < n; i++)
    tree_count(attrs[i], &nodes, &bytes);
  it = ddb_item_alloc(nodes, bytes, (uint32_t)n, &L);
  if(!it)
    return NULL;
  for(i = 0; i < n; i++)
    tree_copy(attrs[i], &it->root.kids[i], &L);
  return it;
}

/* Do sets a and b (same type) hold the same elements? */
static int set_equal(const ddb_av *a, const ddb_av *b) {
  uint32_t i, j;
  if(a->n != b->n)
    return 0;
  for(i = 0; i < a->n; i++) {
    for(j = 0; j < b->n; j++)
      if(ddb_av_equal(&a->kids[i], &b->kids[j]))
        break;
    if(j == b->n)
      return 0;
  }
  return 1;
}

int ddb_av_equal(const ddb_av *a, const ddb_av *b) {
  uint32_t i;
  if(a->type != b->type)
    return 0;
  switch(a->type) {
  case DDB_S:
  case DDB_B: return a->n == b->n && memcmp(a->text, b->text, a->n) == 0;
  case DDB_N: /* by value, exactly: 1.50 = 15E-1 */
    return ddb_number_cmp(a->text, a->n, b->text, b->n) == 0;
  case DDB_BOOL: return a->n == b->n;
  case DDB_NULL: return 1;
  case DDB_L:
    if(a->n != b->n)
      return 0;
    for(i = 0; i < a->n; i++)
      if(!ddb_av_equal(&a->kids[i], &b->kids[i]))
        return 0;
    return 1;
  case DDB_M:
    if(a->n != b->n)
      return 0;
    for(i = 0; i < a->n; i++) {
      uint32_t j;
      for(j = 0; j < b->n; j++)
        if(b->kids[j].name_len == a->kids[i].name_len &&
           memcmp(b->kids[j].name, a->kids[i].name, a->kids[i].name_len) == 0)
          break;
      if(j == b->n || !ddb_av_equal(&a->kids[i], &b->kids[j]))
        return 0;
    }
    return 1;
  default: return set_equal(a, b);
  }
}

/* The size DynamoDB charges for a value (its documented rules: strings
** and binaries by bytes, numbers about one byte per two digits plus one,
** 1 for BOOL and NULL, 3 per map or list plus 1 per element). */
static size_t av_size(const ddb_av *a) {
  size_t n = 0;
  uint32_t i;
  switch(a->type) {
  case DDB_S: return a->n;
  case DDB_B: return (size_t)a->n / 4 * 3;
  case DDB_N: return (size_t)a->n / 2 + 1;
  case DDB_BOOL:
  case DDB_NULL: return 1;
  case DDB_M:
  case DDB_L:
    n = 3;
    for(i = 0; i < a->n; i++)
      n += 1 + (a->kids[i].name ? a->kids[i].name_len : 0) +
           av_size(&a->kids[i]);
    return n;
  default:
    for(i = 0; i < a->n; i++)
      n += av_size(&a->kids[i]);
    return n;
  }
}

size_t ddb_item_size(const ddb_item *it) {
  size_t n = 0;
  uint32_t i;
  for(i = 0; i < it->root.n; i++)
    n += it->root.kids[i].name_len + av_size(&it->root.kids[i]);
  return n;
}

/* ------------------------------------------------------------------------
** JSON rendering
*/

/* Append s[0..n), known to need no escaping, as a JSON string. */
static int json_str_plain(ddb_buf *b, const char *s, size_t n) {
  if(ddb_buf_quoted_fast(b, s, n))
    return 0;
  return ddb_buf_json_str(b, s, n); /* growing, or failing: the slow way */
}

/* ddb_av_to_json; `plain`: no string of av needs escaping. */
static int av_json(const ddb_av *av, ddb_buf *out, int plain) {
  uint32_t i;
  switch(av->type) {
  case DDB_S:
  case DDB_B:
    return plain ? json_str_plain(out, av->text, av->n)
                 : ddb_buf_json_str(out, av->text, av->n);
  case DDB_N:
    /* DynamoDB's digits, verbatim; JSON has no leading '+' */
    if(av->n && av->text[0] == '+')
      return ddb_buf_add(out, av->text + 1, av->n - 1);
    return ddb_buf_add(out, av->text, av->n);
  case DDB_BOOL: return ddb_buf_adds(out, av->n ? "true" : "false");
  case DDB_NULL: return ddb_buf_adds(out, "null");
  case DDB_M:
    ddb_buf_addc(out, '{');
    for(i = 0; i < av->n; i++) {
      if(i)
        ddb_buf_addc(out, ',');
      if(plain)
        json_str_plain(out, av->kids[i].name, av->kids[i].name_len);
      else
        ddb_buf_json_str(out, av->kids[i].name, av->kids[i].name_len);
      ddb_buf_addc(out, ':');
      av_json(&av->kids[i], out, plain);
    }
    return ddb_buf_addc(out, '}');
  case DDB_L:
  case DDB_SS:
  case DDB_NS:
  case DDB_BS:
    ddb_buf_addc(out, '[');
    for(i = 0; i < av->n; i++) {
      if(i)
        ddb_buf_addc(out, ',');
      av_json(&av->kids[i], out, plain);
    }
    return ddb_buf_addc(out, ']');
  default: return ddb_buf_adds(out, "null");
  }
}

/* Write av, whose strings need no escaping, as JSON at d; returns the end.
** No bound is checked: the caller made room (see ddb_item_to_json). */
static char *plain_json(const ddb_av *av, char *d) {
  uint32_t i;
  switch(av->type) {
  case DDB_S:
  case DDB_B:
    *d++ = '"';
    ddb_copy_short(d, av->text, av->n);
    d += av->n;
    *d++ = '"';
    return d;
  case DDB_N: /* DynamoDB's digits, verbatim; JSON has no leading '+' */
    if(av->n && av->text[0] == '+') {
      ddb_copy_short(d, av->text + 1, av->n - 1);
      return d + av->n - 1;
    }
    ddb_copy_short(d, av->text, av->n);
    return d + av->n;
  case DDB_BOOL:
    memcpy(d, av->n ? "true" : "false", av->n ? 4 : 5);
    return d + (av->n ? 4 : 5);
  case DDB_M:
    *d++ = '{';
    for(i = 0; i < av->n; i++) {
      const ddb_av *k = &av->kids[i];
      if(i)
        *d++ = ',';
      *d++ = '"';
      ddb_copy_short(d, k->name, k->name_len);
      d += k->name_len;
      *d++ = '"';
      *d++ = ':';
      d = plain_json(k, d);
    }
    *d++ = '}';
    return d;
  case DDB_L:
  case DDB_SS:
  case DDB_NS:
  case DDB_BS:
    *d++ = '[';
    for(i = 0; i < av->n; i++) {
      if(i)
        *d++ = ',';
      d = plain_json(&av->kids[i], d);
    }
    *d++ = ']';
    return d;
  default: memcpy(d, "null", 4); return d + 4;
  }
}

int ddb_av_to_json(const ddb_av *av, ddb_buf *out) {
  return av_json(av, out, 0);
}

/* A plain item (no string to escape) is written straight into the buffer,
** with room made once: its JSON is never longer than it->bytes.  Each node
** of it (a ddb_av, 40 bytes) adds at most 8 bytes to the texts it holds
** (2 quotes, a ':' and a ',' around a name, 1 quote more than the NUL
** its text is counted with, or 'false', or 2 brackets), and the ddb_item
** header covers the root's braces; every item is laid out by
** ddb_item_alloc, so it->bytes counts all of that.  An item that is not
** plain, or a buffer near its max, takes the checked way. */
int ddb_item_to_json(const ddb_item *it, ddb_buf *out) {
  char *end;
  if(!it->plain || out->failed || it->bytes >= out->max - out->len ||
     ddb_buf_reserve(out, it->bytes))
    return av_json(&it->root, out, it->plain);
  end = plain_json(&it->root, out->p + out->len);
  out->len = (size_t)(end - out->p);
  out->p[out->len] = 0;
  return 0;
}

int ddb_av_to_typed_json(const ddb_av *av, ddb_buf *out) {
  uint32_t i;
  /* {"S": ...: no printf, every value of every write goes through here */
  ddb_buf_add(out, "{\"", 2);
  ddb_buf_adds(out, ddb_type_name(av->type));
  ddb_buf_add(out, "\":", 2);
  switch(av->type) {
  case DDB_S:
  case DDB_N:
  case DDB_B: ddb_buf_json_str(out, av->text, av->n); break;
  case DDB_BOOL: ddb_buf_adds(out, av->n ? "true" : "false"); break;
  case DDB_NULL: ddb_buf_adds(out, "true"); break;
  case DDB_M:
    ddb_buf_addc(out, '{');
    for(i = 0; i < av->n; i++) {
      if(i)
        ddb_buf_addc(out, ',');
      ddb_buf_json_str(out, av->kids[i].name, av->kids[i].name_len);
      ddb_buf_addc(out, ':');
      ddb_av_to_typed_json(&av->kids[i], out);
    }
    ddb_buf_addc(out, '}');
    break;
  case DDB_L:
    ddb_buf_addc(out, '[');
    for(i = 0; i < av->n; i++) {
      if(i)
        ddb_buf_addc(out, ',');
      ddb_av_to_typed_json(&av->kids[i], out);
    }
    ddb_buf_addc(out, ']');
    break;
  default: /* sets: arrays of strings */
    ddb_buf_addc(out, '[');
    for(i = 0; i < av->n; i++) {
      if(i)
        ddb_buf_addc(out, ',');
      ddb_buf_json_str(out, av->kids[i].text, av->kids[i].n);
    }
    ddb_buf_addc(out, ']');
  }
  return ddb_buf_addc(out, '}');
}

int ddb_item_to_typed_json(const ddb_item *it, ddb_buf *out) {
  uint32_t i;
  ddb_buf_addc(out, '{');
  for(i = 0; i < it->root.n; i++) {
    if(i)
      ddb_buf_addc(out, ',');
    ddb_buf_json_str(out, it->root.kids[i].name, it->root.kids[i].name_len);
    ddb_buf_addc(out, ':');
    ddb_av_to_typed_json(&it->root.kids[i], out);
  }
  return ddb_buf_addc(out, '}');
}

/* Append one key attribute: its name as a part, its type letter, its text
** as a part (numbers in canonical form: 1.50, 15E-1 and 1.5 are one key
** to DynamoDB).  Length-prefixed parts, so no byte of a value can be
** taken for a boundary.  Returns 0 or -1. */
static int key_av(const ddb_av *a, ddb_buf *out) {
  char num[192]; /* a canonical number: at most 38 digits and an exponent */
  ddb_buf nb;
  int rc;
  if(!a || !a->name ||
     (a->type != DDB_S && a->type != DDB_N && a->type != DDB_B))
    return -1;
  ddb_buf_add_part(out, a->name, a->name_len ? a->name_len : strlen(a->name));
  ddb_buf_addc(out, ddb_type_name(a->type)[0]); /* S, N, B: one letter */
  if(a->type != DDB_N)
    return ddb_buf_add_part(out, a->text, a->n);
  ddb_buf_init_with(&nb, num, sizeof(num), 4096);
  rc = ddb_number_canonical(a->text, a->n, &nb) == 0 && !nb.failed
           ? ddb_buf_add_part(out, nb.p ? nb.p : "", nb.len)
           : -1;
  ddb_buf_free(&nb);
  return rc;
}

int ddb_key_encode(const ddb_item *item, const char *const *key_names,
                   int n_key_names, ddb_buf *out) {
  int i;
  for(i = 0; i < n_key_names; i++)
    if(key_av(ddb_item_get(item, key_names[i]), out))
      return -1;
  return out->failed ? -1 : 0;
}

int ddb_key_encode_avs(const ddb_av *vals, int n, ddb_buf *out) {
  int i;
  for(i = 0; i < n; i++)
    if(key_av(&vals[i], out))
      return -1;
  return out->failed ? -1 : 0;
}

/* ------------------------------------------------------------------------
** Pages
*/
ddb_page *ddb_page_ref(ddb_page *p) {
  if(p)
    __atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
  return p;
}

void ddb_page_unref(ddb_page *p) {
  int i;
  if(!p || __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) != 0)
    return;
  for(i = 0; i < p->n_items; i++)
    ddb_item_unref(p->items[i]);
  ddb_item_unref(p->last_key);
  free(p->items);
  free(p);
}
