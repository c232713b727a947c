/*
** json.c -- items from JSON text: plain JSON (as the `item` column shows
** it) and DynamoDB's typed JSON.
**
** Plain JSON maps to AttributeValues as
**   string -> S, number -> N (the exact digits given), true/false -> BOOL,
**   null -> NULL, array -> L, object -> M
** except where a hint (the item as it was read) holds a set or a binary at
** the same place: there an array of distinct strings stays SS (or BS when
** every string is base64), an array of distinct numbers stays NS, and a
** base64 string (or "", the empty binary) stays B.  So reading an item and
** writing it back, changed or not, keeps its types.  An array with an
** element twice (by value: 1 and 1.0 are one number, two base64 texts of
** the same bytes one binary) cannot be a set: it is the L the plain rules
** make (lists_for_sets_with_duplicates).
**
** Typed JSON (item_raw) says each type itself; what DynamoDB would refuse
** is an error naming the attribute (check_values): a name twice in a map,
** a number out of DynamoDB's range or precision, a binary that is not
** base64, an empty set or an element twice in one.
**
** Both are read by tape.c's tokenizer (strict RFC 8259; cJSON would turn
** numbers into doubles).  Typed JSON is decoded from its tape by item.c.
** Plain JSON's tape is walked here straight into the item, in item.c's
** two passes (count the nodes and bytes, then lay them out in one
** allocation), the type of each value decided from its token and its hint
** the same way in both (plain_type); a syntax error names the attribute
** path where the tokenizer stopped (syntax_error).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddb_client_int.h"

/* Deepest nesting accepted (DynamoDB's own limit is 32). */
#define JSON_MAX_DEPTH 32
/* The room of an attribute path in a message. */
#define PATH_MAX_LEN 256

/* One step of the path to a value: a member's name token, or (name NULL)
** an element's index. */
typedef struct pstep {
  const ddb_jtok *name;
  uint32_t idx;
} pstep;

/* ------------------------------------------------------------------------
** Plain JSON: its tape walked into an item
*/

/* One walk of a plain JSON tape: counting (fill 0: L.nodes and L.bytes),
** or laying the item out (fill 1: L.next_node and L.next_byte). */
typedef struct pwalk {
  const char *text;
  const ddb_jtok *t;
  ddb_layout L;
  int fill;
  ddb_error *err;
  pstep path[JSON_MAX_DEPTH + 2]; /* where we are, for messages */
  int depth;                      /* steps in path */
} pwalk;

/* Go down one step: a member (name) or the element idx (name NULL). */
static void path_push(pwalk *w, const ddb_jtok *name, uint32_t idx) {
  w->path[w->depth].name = name;
  w->path[w->depth].idx = idx;
  w->depth++;
}

/* The error what at w's path ("m.l[2]: what"; what alone at the top),
** the names as the text spells them. */
static ddb_result walk_error(pwalk *w, const char *what) {
  char path[PATH_MAX_LEN];
  size_t plen = 0;
  int i;
  path[0] = 0;
  for(i = 0; i < w->depth && plen + 1 < sizeof(path); i++) {
    const ddb_jtok *name = w->path[i].name;
    if(name)
      snprintf(path + plen, sizeof(path) - plen, "%s%.*s", plen ? "." : "",
               (int)name->len, w->text + name->off);
    else
      snprintf(path + plen, sizeof(path) - plen, "[%u]", w->path[i].idx);
    plen += strlen(path + plen);
  }
  return ddb_error_set(w->err, DDB_ERR_INPUT, "%s%s%s", path,
                       path[0] ? ": " : "", what);
}

/* Is string token k base64 (ddb_base64_ok) with no escapes? */
static int is_base64_tok(const char *text, const ddb_jtok *k) {
  return !k->esc && ddb_base64_ok(text + k->off, k->len);
}

/* The kid of hint M named by string token name (unescaped names only), or
** NULL. */
static const ddb_av *hint_member(const ddb_av *hint, const char *text,
                                 const ddb_jtok *name) {
  uint32_t i;
  if(!hint || hint->type != DDB_M || name->esc)
    return NULL;
  for(i = 0; i < hint->n; i++)
    if(hint->kids[i].name_len == name->len &&
       memcmp(hint->kids[i].name, text + name->off, name->len) == 0)
      return &hint->kids[i];
  return NULL;
}

/* The type the array at token i becomes: the hint's set type when the hint
** is a set and every element fits it (strings for SS; numbers for NS;
** base64 strings or "" for BS) and there is one at least, else L. */
static ddb_type array_type(const char *text, const ddb_jtok *t, uint32_t i,
                           const ddb_av *hint) {
  ddb_type want = hint ? hint->type : DDB_NONE;
  uint32_t j, k;
  if((want != DDB_SS && want != DDB_NS && want != DDB_BS) || t[i].n == 0)
    return DDB_L;
  for(j = 0, k = i + 1; j < t[i].n; j++, k = t[k].end) {
    if(want == DDB_NS ? t[k].type != DDB_JNUM
                      : t[k].type != DDB_JSTR || (want == DDB_BS && t[k].len &&
                                                  !is_base64_tok(text, &t[k])))
      return DDB_L;
  }
  return want;
}

/* The type the value at token i becomes, given its hint (see the top). */
static ddb_type plain_type(const char *text, const ddb_jtok *t, uint32_t i,
                           const ddb_av *hint) {
  const ddb_jtok *k = &t[i];
  switch(k->type) {
  case DDB_JOBJ: return DDB_M;
  case DDB_JARR: return array_type(text, t, i, hint);
  case DDB_JSTR:
    /* "" over a B is the empty binary (DynamoDB allows one outside keys):
    ** the plain JSON of B "" and of S "" look alike */
    return hint && hint->type == DDB_B &&
                   (k->len == 0 || is_base64_tok(text, k))
               ? DDB_B
               : DDB_S;
  case DDB_JNUM: return DDB_N;
  case DDB_JTRUE:
  case DDB_JFALSE: return DDB_BOOL;
  default: return DDB_NULL;
  }
}

/* Counting: the room of the text of token k (a string, whose raw length
** bounds its unescaped one, or a number). */
static void count_text(pwalk *w, const ddb_jtok *k) {
  w->L.bytes += k->len + 1;
}

/* Filling: the text of token k copied (unescaped) into the layout; its
** length to *len. */
static const char *lay_text(pwalk *w, const ddb_jtok *k, uint32_t *len) {
  char *p = w->L.next_byte;
  size_t n = ddb_tape_str(w->text, k, p);
  w->L.next_byte += n + 1;
  *len = (uint32_t)n;
  return p;
}

/* n kids for out (filling): taken from the layout's nodes; counting: n
** more nodes.  Returns the kids, or NULL when counting. */
static ddb_av *walk_kids(pwalk *w, ddb_av *out, uint32_t n) {
  if(!w->fill) {
    w->L.nodes += n;
    return NULL;
  }
  out->n = n;
  out->kids = w->L.next_node;
  w->L.next_node += n;
  return out->kids;
}

/* Is number token k one DynamoDB takes?  Returns DDB_OK or the error. */
static ddb_result walk_number(pwalk *w, const ddb_jtok *k) {
  const char *s = w->text + k->off;
  if(!ddb_number_ok(s, k->len))
    return walk_error(w, "not valid JSON");
  if(!ddb_number_fits(s, k->len))
    return walk_error(w, "number out of DynamoDB's range or precision "
                         "(38 digits, 1E-130 to 9.99E+125)");
  return DDB_OK;
}

static ddb_result walk_value(pwalk *w, uint32_t i, const ddb_av *hint,
                             ddb_av *out, int depth);

/* The members of the object at token obj into kids (kids NULL when
** counting), each with its hint's member of the same name. */
static ddb_result walk_members(pwalk *w, uint32_t obj, const ddb_av *hint,
                               ddb_av *kids, int depth) {
  const ddb_jtok *t = w->t;
  uint32_t j, k;
  ddb_result r;
  for(j = 0, k = obj + 1; j < t[obj].n; j++, k = t[k + 1].end) {
    if(t[k].len == 0)
      return walk_error(w, "empty attribute name");
    if(kids)
      kids[j].name = lay_text(w, &t[k], &kids[j].name_len);
    else
      count_text(w, &t[k]);
    path_push(w, &t[k], 0);
    r = walk_value(w, k + 1, hint_member(hint, w->text, &t[k]),
                   kids ? &kids[j] : NULL, depth + 1);
    if(r)
      return r;
    w->depth--;
  }
  return DDB_OK;
}

/* The elements of the array at token i, as ty (L or a set), into out's
** kids (out NULL when counting). */
static ddb_result walk_elements(pwalk *w, uint32_t i, ddb_type ty,
                                const ddb_av *hint, ddb_av *out, int depth) {
  const ddb_jtok *t = w->t;
  ddb_av *kids = walk_kids(w, out, t[i].n);
  uint32_t j, k;
  ddb_result r;
  for(j = 0, k = i + 1; j < t[i].n; j++, k = t[k].end) {
    ddb_av *kid = kids ? &kids[j] : NULL;
    path_push(w, NULL, j);
    if(kid) {
      kid->name = NULL;
      kid->name_len = 0;
    }
    if(ty == DDB_L) {
      const ddb_av *kh =
          hint && hint->type == DDB_L && j < hint->n ? &hint->kids[j] : NULL;
      r = walk_value(w, k, kh, kid, depth + 1);
      if(r)
        return r;
    } else {
      /* a set's element: a string or a number, as array_type found */
      if(ty == DDB_NS && (r = walk_number(w, &t[k])) != DDB_OK)
        return r;
      if(kid) {
        kid->type = ty == DDB_SS ? DDB_S : ty == DDB_NS ? DDB_N : DDB_B;
        kid->kids = NULL;
        kid->text = lay_text(w, &t[k], &kid->n);
      } else
        count_text(w, &t[k]);
    }
    w->depth--;
  }
  return DDB_OK;
}

/* The value at token i (its hint, or NULL) into *out (NULL when
** counting); out's name is the caller's. */
static ddb_result walk_value(pwalk *w, uint32_t i, const ddb_av *hint,
                             ddb_av *out, int depth) {
  const ddb_jtok *k = &w->t[i];
  ddb_type ty;
  ddb_result r;
  if(depth > JSON_MAX_DEPTH)
    return walk_error(w, "nested too deeply");
  ty = plain_type(w->text, w->t, i, hint);
  if(out) {
    out->type = ty;
    out->n = 0;
    out->kids = NULL;
    out->text = NULL;
  }
  switch(ty) {
  case DDB_M: return walk_members(w, i, hint, walk_kids(w, out, k->n), depth);
  case DDB_L:
  case DDB_SS:
  case DDB_NS:
  case DDB_BS: return walk_elements(w, i, ty, hint, out, depth);
  case DDB_N:
    if((r = walk_number(w, k)) != DDB_OK)
      return r;
    /* fall through */
  case DDB_S:
  case DDB_B:
    if(out)
      out->text = lay_text(w, k, &out->n);
    else
      count_text(w, k);
    return DDB_OK;
  case DDB_BOOL:
    if(out)
      out->n = k->type == DDB_JTRUE;
    return DDB_OK;
  default: return DDB_OK; /* NULL */
  }
}

/* The error for plain JSON text that the tokenizer refused at fail, the
** tokens before it on t: the path of the member or element it was in
** ("a: bad string", "m.l[2]: not valid JSON"), found by walking down the
** containers still open (end 0) to the one the failure is in. */
static ddb_result syntax_error(pwalk *w, const ddb_tape *t, const char *fail,
                               const char *end) {
  uint32_t c = 0, j, k;
  int depth = 0, after_comma;
  const char *b = fail;
  /* what comes before the failure: a comma means a value was wanted */
  while(b > w->text &&
        (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\n' || b[-1] == '\r'))
    b--;
  after_comma = b > w->text && b[-1] == ',';
  while(c < t->n && t->tok[c].end == 0 && depth++ < JSON_MAX_DEPTH) {
    const ddb_jtok *ct = &t->tok[c];
    int obj = ct->type == DDB_JOBJ;
    uint32_t last = 0;
    /* skip the members or elements it has whole */
    for(j = 0, k = c + 1; j < ct->n; j++) {
      last = k;
      k = obj ? t->tok[k + 1].end : t->tok[k].end;
    }
    if(k >= t->n) {
      /* just after its last whole member or element ({"a": 007}: after
      ** the 0): named by it; after a comma, at the next element (named)
      ** or a member's name (the object's path) */
      if(after_comma && !obj)
        path_push(w, NULL, ct->n);
      else if(!after_comma && ct->n)
        path_push(w, obj ? &t->tok[last] : NULL, ct->n - 1);
      break;
    }
    if(obj) {
      path_push(w, &t->tok[k], 0);
      k++; /* its value */
    } else
      path_push(w, NULL, ct->n);
    if(k >= t->n || t->tok[k].type > DDB_JARR || t->tok[k].end != 0)
      break; /* at that value, or after it */
    c = k;
  }
  if(depth > JSON_MAX_DEPTH)
    return walk_error(w, "nested too deeply");
  return walk_error(w, fail < end && *fail == '"' ? "bad string"
                                                  : "not valid JSON");
}

/* Plain JSON text[0..n) (a whole object) into *out, with hint's types;
** the sets with an element twice made lists and everything checked by
** check_values (the caller's). */
static ddb_result plain_item(const char *text, size_t n, const ddb_item *hint,
                             ddb_item **out, ddb_error *err) {
  const char *p = text, *end = text + n;
  ddb_tape t;
  pwalk w;
  ddb_result r;
  *out = NULL;
  memset(&t, 0, sizeof(t));
  memset(&w, 0, sizeof(w));
  w.text = text;
  w.err = err;
  p = ddb_tape_skip_ws(p, end);
  if(p >= end || *p != '{')
    return ddb_error_set(err, DDB_ERR_INPUT, "item is not a JSON object");
  if(ddb_tape_value(&t, text, &p, end)) {
    r = syntax_error(&w, &t, p, end);
    goto done;
  }
  if(ddb_tape_skip_ws(p, end) != end) {
    r = walk_error(&w, "text after the JSON object");
    goto done;
  }
  w.t = t.tok;
  /* count, lay out */
  r = walk_members(&w, 0, hint ? &hint->root : NULL, NULL, 0);
  if(r)
    goto done;
  w.L.nodes += t.tok[0].n;
  *out = ddb_item_alloc(w.L.nodes, w.L.bytes, t.tok[0].n, &w.L);
  if(!*out) {
    r = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory converting an item");
    goto done;
  }
  w.fill = 1;
  r = walk_members(&w, 0, hint ? &hint->root : NULL, (*out)->root.kids, 0);

done:
  ddb_tape_free(&t);
  if(r && *out) {
    ddb_item_unref(*out);
    *out = NULL;
  }
  return r;
}

/* Order of two attributes by name, for check_values. */
static int name_order(const void *pa, const void *pb) {
  const ddb_av *a = *(const ddb_av *const *)pa;
  const ddb_av *b = *(const ddb_av *const *)pb;
  size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
  int c = memcmp(a->name, b->name, n);
  return c ? c : (a->name_len < b->name_len ? -1 : a->name_len > b->name_len);
}

/* One element of a set as set_duplicate compares it: its bytes for an SS,
** its canonical number for an NS, its decoded bytes for a BS. */
typedef struct elem_key {
  const char *p; /* the bytes compared (p[0..n)) */
  size_t off, n; /* where they are in the keys' buffer (NS, BS) */
  uint32_t idx;  /* the element, in the set's kids */
} elem_key;

/* qsort order of two set elements: by bytes, then by index, so that of
** two equal ones the later comes second. */
static int elem_order(const void *pa, const void *pb) {
  const elem_key *a = pa, *b = pb;
  size_t n = a->n < b->n ? a->n : b->n;
  int c = n ? memcmp(a->p, b->p, n) : 0;
  if(c)
    return c;
  if(a->n != b->n)
    return a->n < b->n ? -1 : 1;
  return a->idx < b->idx ? -1 : a->idx > b->idx; /* the later one second */
}

/* Does set av (SS, NS or BS) hold an element twice, by value ("1" and
** "1.0" are one number; two spellings of the same bytes one binary)?
** Returns 1 with *dup_out the later of the two (its index in av->kids), 0
** when every element differs, -1 when out of memory. */
static int set_duplicate(const ddb_av *av, uint32_t *dup_out) {
  elem_key *a;
  unsigned char *raw = NULL;
  ddb_buf b;
  size_t most = 0;
  uint32_t i;
  int found = 0;
  if(av->n < 2)
    return 0;
  a = malloc(sizeof(*a) * av->n);
  if(!a)
    return -1;
  for(i = 0; i < av->n; i++)
    if(av->kids[i].n > most)
      most = av->kids[i].n;
  ddb_buf_init(&b, DDB_JSON_MAX);
  if(av->type == DDB_BS && !(raw = malloc(most + 1))) {
    free(a);
    return -1;
  }
  for(i = 0; i < av->n; i++) {
    const ddb_av *k = &av->kids[i];
    a[i].idx = i;
    a[i].p = k->text;
    a[i].n = k->n;
    a[i].off = b.len;
    if(av->type == DDB_NS) {
      if(ddb_number_canonical(k->text, k->n, &b))
        ddb_buf_add(&b, k->text, k->n); /* not a number: compare as is */
      a[i].n = b.len - a[i].off;
    } else if(av->type == DDB_BS) {
      size_t m = ddb_base64_decode(k->text, k->n, raw, most + 1);
      if(m == (size_t)-1)
        ddb_buf_add(&b, k->text, k->n);
      else
        ddb_buf_add(&b, raw, m);
      a[i].n = b.len - a[i].off;
    }
  }
  if(av->type != DDB_SS && b.failed) {
    found = -1;
  } else {
    if(av->type != DDB_SS)
      for(i = 0; i < av->n; i++)
        a[i].p = b.p ? b.p + a[i].off : "";
    qsort(a, av->n, sizeof(*a), elem_order);
    for(i = 1; i < av->n && !found; i++)
      if(a[i - 1].n == a[i].n &&
         (a[i].n == 0 || memcmp(a[i - 1].p, a[i].p, a[i].n) == 0)) {
        *dup_out = a[i].idx;
        found = 1;
      }
  }
  ddb_buf_free(&b);
  free(raw);
  free(a);
  return found;
}

/* check_values of the set av (SS, NS, BS) at the path path_text[0..pl) (sep
** after it when it is not empty): not empty, each NS element a number
** DynamoDB holds, each BS element base64, no element twice. */
static ddb_result check_set(const ddb_av *av, const char *path_text, int pl,
                            const char *sep, ddb_error *err) {
  uint32_t i, dup;
  if(av->n == 0)
    return ddb_error_set(err, DDB_ERR_INPUT,
                         "%.*s%sa set must not be empty (DynamoDB holds no "
                         "empty %s)",
                         pl, path_text, sep, ddb_type_name(av->type));
  for(i = 0; av->type != DDB_SS && i < av->n; i++) {
    const ddb_av *k = &av->kids[i];
    if(av->type == DDB_NS ? ddb_number_fits(k->text, k->n)
                          : !k->n || ddb_base64_ok(k->text, k->n))
      continue;
    if(av->type == DDB_NS)
      return ddb_error_set(err, DDB_ERR_INPUT,
                           "%.*s[%u]: number '%.60s' out of DynamoDB's "
                           "range or precision (38 digits, 1E-130 to "
                           "9.99E+125)",
                           pl, path_text, i, k->text);
    return ddb_error_set(err, DDB_ERR_INPUT,
                         "%.*s[%u]: binary value is not base64", pl, path_text,
                         i);
  }
  switch(set_duplicate(av, &dup)) {
  case 0: return DDB_OK;
  case 1:
    return ddb_error_set(err, DDB_ERR_INPUT,
                         "%.*s%s'%.60s' is in the %s twice (a set's "
                         "elements must differ)",
                         pl, path_text, sep, av->kids[dup].text,
                         ddb_type_name(av->type));
  default: return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  }
}

/* check_values of the names of the map av at the path path_text[0..pl) (sep
** after it when it is not empty): none twice (as decoded). */
static ddb_result check_names(const ddb_av *av, const char *path_text, int pl,
                              const char *sep, ddb_error *err) {
  const ddb_av **a, *dup_name = NULL;
  uint32_t i;
  if(av->n < 2)
    return DDB_OK;
  a = malloc(sizeof(*a) * av->n);
  if(!a)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  for(i = 0; i < av->n; i++)
    a[i] = &av->kids[i];
  qsort((void *)a, av->n, sizeof(*a), name_order);
  for(i = 1; i < av->n && !dup_name; i++)
    if(name_order(&a[i - 1], &a[i]) == 0)
      dup_name = a[i];
  free((void *)a);
  if(dup_name)
    return ddb_error_set(
        err, DDB_ERR_INPUT, "%.*s%sduplicate attribute name '%.*s'", pl,
        path_text, sep,
        (int)(dup_name->name_len > 200 ? 200 : dup_name->name_len),
        dup_name->name);
  return DDB_OK;
}

/*
** Would DynamoDB take av, where path names it ("" at the top)?  Checked at
** any depth of maps and lists:
**   a name used twice in a map: JSON allows it; DynamoDB would keep the
**     last, while a check of the item (its key attributes, say) reads the
**     first.  Names compare as decoded ("P\u004b" is "PK");
**   a number (N, or in an NS) out of DynamoDB's range or precision;
**   a binary (B, or in a BS) that is not base64 ("" is the empty binary);
**   an empty set, or an element twice in a set (SS, NS, BS; by value, see
**   set_duplicate).
** Returns DDB_OK, or DDB_ERR_INPUT naming what and where, or
** DDB_ERR_NOMEM.  A scalar is checked here, a set by check_set, a map's
** names by check_names, then each member of a map or list in turn, its
** name or index added to path (and taken off again).
*/
static ddb_result check_values(const ddb_av *av, ddb_buf *path,
                               ddb_error *err) {
  uint32_t i;
  size_t plen = path->len;
  const char *path_text = path->p ? path->p : "";
  int pl = (int)(plen > 200 ? 200 : plen);
  const char *sep = plen ? ": " : "";
  ddb_result r;
  switch(av->type) {
  case DDB_N:
    if(!ddb_number_fits(av->text, av->n))
      return ddb_error_set(err, DDB_ERR_INPUT,
                           "%.*s%snumber '%.60s' out of DynamoDB's range or "
                           "precision (38 digits, 1E-130 to 9.99E+125)",
                           pl, path_text, sep, av->text);
    return DDB_OK;
  case DDB_B:
    if(av->n && !ddb_base64_ok(av->text, av->n))
      return ddb_error_set(err, DDB_ERR_INPUT,
                           "%.*s%sbinary value is not base64", pl, path_text,
                           sep);
    return DDB_OK;
  case DDB_NS:
  case DDB_SS:
  case DDB_BS: return check_set(av, path_text, pl, sep, err);
  case DDB_M:
    r = check_names(av, path_text, pl, sep, err);
    if(r)
      return r;
    break;
  case DDB_L: break;
  default: return DDB_OK;
  }
  for(i = 0; i < av->n; i++) {
    const ddb_av *k = &av->kids[i];
    if(k->type == DDB_S || k->type == DDB_BOOL || k->type == DDB_NULL)
      continue; /* nothing to check */
    if(av->type == DDB_M)
      ddb_buf_addf(path, "%s%.*s", plen ? "." : "", (int)k->name_len, k->name);
    else
      ddb_buf_addf(path, "[%u]", i);
    r = check_values(k, path, err);
    path->len = plen;
    if(path->p)
      path->p[plen] = 0;
    if(r)
      return r;
  }
  return DDB_OK;
}

/* Make every set in av (at any depth) that holds an element twice the
** list the plain rules make of its array: L of its elements, a BS's as S
** (strings).  Only for an item just decoded from plain JSON, whose sets
** came from hints (ddb_item_from_json), before anyone else sees it.
** Returns 0, or -1 when out of memory. */
static int lists_for_sets_with_duplicates(ddb_av *av) {
  uint32_t i, dup;
  int found;
  switch(av->type) {
  case DDB_SS:
  case DDB_NS:
  case DDB_BS:
    found = set_duplicate(av, &dup);
    if(found < 0)
      return -1;
    if(found) {
      for(i = 0; av->type == DDB_BS && i < av->n; i++)
        av->kids[i].type = DDB_S;
      av->type = DDB_L;
    }
    return 0;
  case DDB_M:
  case DDB_L:
    for(i = 0; i < av->n; i++)
      if(lists_for_sets_with_duplicates(&av->kids[i]))
        return -1;
    return 0;
  default: return 0;
  }
}

/* Check item *out (check_values), and release it on error.  from_plain:
** it was made from plain JSON, whose sets came from hints: a set there
** with an element twice becomes a list first. */
static ddb_result checked(ddb_result r, int from_plain, ddb_item **out,
                          ddb_error *err) {
  ddb_buf path;
  if(r == DDB_OK && from_plain &&
     lists_for_sets_with_duplicates(&(*out)->root))
    r = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  if(r == DDB_OK) {
    ddb_buf_init(&path, 64u * 1024);
    r = check_values(&(*out)->root, &path, err);
    ddb_buf_free(&path);
  }
  if(r && *out) {
    ddb_item_unref(*out);
    *out = NULL;
  }
  return r;
}

/* See ddb_client.h. */
ddb_result ddb_item_from_json(const char *text, size_t n, const ddb_item *hint,
                              ddb_item **out, ddb_error *err) {
  return checked(plain_item(text, n, hint, out, err), 1, out, err);
}

/* See ddb_client.h: decoded from its tape by item.c, then checked. */
ddb_result ddb_item_from_typed_json(const char *text, size_t n, ddb_item **out,
                                    ddb_error *err) {
  ddb_result r = ddb_item_parse(text, n, out, err);
  if(r == DDB_ERR_PARSE && err) {
    err->code = r = DDB_ERR_INPUT;
    if(strcmp(err->message, "item is not valid JSON") == 0)
      ddb_error_set(err, DDB_ERR_INPUT, "not valid JSON");
  }
  if(r)
    return r;
  return checked(r, 0, out, err);
}
