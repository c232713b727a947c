/*
** item.c -- dyn_item and dyn_value: the typed tree, JSON text, builders.
**
** A dyn_item is a ddb_item (client/item.c): one immutable allocation with
** its tree of ddb_av nodes.  The accessors only read it; the builder
** collects ddb_av nodes in memory of its own and hands them to
** ddb_item_from_attrs(), which copies the tree into one new item.
*/
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"

/* Deepest nesting of a built item (DynamoDB's own limit is 32). */
#define BUILD_MAX_DEPTH 32

/* ------------------------------------------------------------------------
** Value checks
*/
/* Check av and below; path names where we are, for messages. */
static dyn_code check_av(const ddb_av *av, char *path, size_t cap,
                         dyn_error *err) {
  size_t len = strlen(path);
  uint32_t i;
  dyn_code result = DYN_OK;
  switch(av->type) {
  case DDB_N:
    if(!ddb_number_fits(av->text, av->n))
      return dyni_fail(err, DYN_EINPUT, "%s: '%.60s' is not a DynamoDB number",
                       path, av->text);
    return DYN_OK;
  case DDB_B:
    if(av->n && !ddb_base64_ok(av->text, av->n))
      return dyni_fail(err, DYN_EINPUT, "%s: binary value is not base64",
                       path);
    return DYN_OK;
  case DDB_M:
  case DDB_L:
  case DDB_SS:
  case DDB_NS:
  case DDB_BS:
    if((av->type == DDB_SS || av->type == DDB_NS || av->type == DDB_BS) &&
       av->n == 0)
      return dyni_fail(err, DYN_EINPUT, "%s: a set must not be empty", path);
    for(i = 0; i < av->n && !result; i++) {
      if(av->type == DDB_M)
        snprintf(path + len, cap - len, ".%s", av->kids[i].name);
      else
        snprintf(path + len, cap - len, "[%u]", i);
      result = check_av(&av->kids[i], path, cap, err);
    }
    path[len] = 0;
    return result;
  default: return DYN_OK;
  }
}

dyn_code dyni_check_item(const ddb_item *it, dyn_error *err) {
  char path[256];
  uint32_t i;
  dyn_code result = DYN_OK;
  for(i = 0; i < it->root.n && !result; i++) {
    snprintf(path, sizeof(path), "%s", it->root.kids[i].name);
    result = check_av(&it->root.kids[i], path, sizeof(path), err);
  }
  return result;
}

/* ------------------------------------------------------------------------
** Items and values
*/
dyn_item *dyn_item_ref(const dyn_item *it) {
  return PITEM(ddb_item_ref(ITEM(it)));
}

void dyn_item_unref(const dyn_item *it) {
  ddb_item_unref(ITEM(it));
}

const dyn_value *dyn_item_root(const dyn_item *it) {
  return it ? PVAL(&CITEM(it)->root) : NULL;
}

const dyn_value *dyn_item_get(const dyn_item *it, const char *name) {
  if(!it || !name)
    return NULL;
  return PVAL(ddb_item_get(CITEM(it), name));
}

dyn_type dyn_value_type(const dyn_value *v) {
  if(!v)
    return DYN_NONE;
  switch(AV(v)->type) {
  case DDB_S: return DYN_S;
  case DDB_N: return DYN_N;
  case DDB_B: return DYN_B;
  case DDB_BOOL: return DYN_BOOL;
  case DDB_NULL: return DYN_NULL;
  case DDB_M: return DYN_M;
  case DDB_L: return DYN_L;
  case DDB_SS: return DYN_SS;
  case DDB_NS: return DYN_NS;
  case DDB_BS: return DYN_BS;
  default: return DYN_NONE;
  }
}

static const ddb_type to_ddb[] = {DDB_NONE, DDB_S,    DDB_N, DDB_B,
                                  DDB_BOOL, DDB_NULL, DDB_M, DDB_L,
                                  DDB_SS,   DDB_NS,   DDB_BS};

const char *dyn_type_name(dyn_type t) {
  if((int)t <= 0 || (size_t)t >= sizeof(to_ddb) / sizeof(to_ddb[0]))
    return "";
  return ddb_type_name(to_ddb[t]);
}

const char *dyn_value_name(const dyn_value *v, size_t *len) {
  const char *name = v ? AV(v)->name : NULL;
  if(len)
    *len = name ? AV(v)->name_len : 0;
  return name;
}

const char *dyn_value_text(const dyn_value *v, size_t *len) {
  const ddb_av *a = AV(v);
  int has = a && (a->type == DDB_S || a->type == DDB_N || a->type == DDB_B);
  if(len)
    *len = has ? a->n : 0;
  return has ? a->text : NULL;
}

int dyn_value_bool(const dyn_value *v) {
  if(!v || AV(v)->type != DDB_BOOL)
    return -1;
  return AV(v)->n ? 1 : 0;
}

static int is_container(const ddb_av *a) {
  return a && (a->type == DDB_M || a->type == DDB_L || a->type == DDB_SS ||
               a->type == DDB_NS || a->type == DDB_BS);
}

size_t dyn_value_count(const dyn_value *v) {
  return is_container(AV(v)) ? AV(v)->n : 0;
}

const dyn_value *dyn_value_at(const dyn_value *v, size_t i) {
  if(!is_container(AV(v)) || i >= AV(v)->n)
    return NULL;
  return PVAL(&AV(v)->kids[i]);
}

const dyn_value *dyn_value_get(const dyn_value *v, const char *name) {
  const ddb_av *a = AV(v);
  uint32_t i;
  if(!a || a->type != DDB_M || !name)
    return NULL;
  for(i = 0; i < a->n; i++)
    if(strcmp(a->kids[i].name, name) == 0)
      return PVAL(&a->kids[i]);
  return NULL;
}

dyn_code dyn_value_int64(const dyn_value *v, int64_t *out) {
  const ddb_av *a = AV(v);
  ddb_buf b;
  char digits[32];
  dyn_code result = DYN_ETYPE;
  if(out)
    *out = 0;
  if(!out)
    return DYN_EMISUSE;
  if(!a || a->type != DDB_N)
    return DYN_ETYPE;
  /* through the canonical form, so that 1e3 and 1000.0 are integers */
  ddb_buf_init(&b, 256);
  if(ddb_number_canonical(a->text, a->n, &b) == 0 && b.p) {
    const char *ex = strchr(b.p, 'e');
    if(!ex) {
      result = DYN_OK; /* zero */
    } else {
      long exp10 = strtol(ex + 1, NULL, 10);
      size_t nd = (size_t)(ex - b.p);
      if(exp10 >= 0 && nd + (size_t)exp10 < sizeof(digits)) {
        char *end;
        long long x;
        memcpy(digits, b.p, nd);
        memset(digits + nd, '0', (size_t)exp10);
        digits[nd + (size_t)exp10] = 0;
        errno = 0;
        x = strtoll(digits, &end, 10);
        if(errno == 0 && *end == 0) {
          *out = (int64_t)x;
          result = DYN_OK;
        }
      }
    }
  }
  ddb_buf_free(&b);
  return result;
}

dyn_code dyn_value_double(const dyn_value *v, double *out) {
  const ddb_av *a = AV(v);
  if(!out)
    return DYN_EMISUSE;
  *out = 0;
  if(!a || a->type != DDB_N)
    return DYN_ETYPE;
  *out = strtod(a->text, NULL);
  return DYN_OK;
}

dyn_code dyn_value_binary(const dyn_value *v, void **out, size_t *n) {
  const ddb_av *a = AV(v);
  unsigned char *p;
  size_t r;
  if(!out || !n)
    return DYN_EMISUSE;
  *out = NULL;
  *n = 0;
  if(!a || a->type != DDB_B)
    return DYN_ETYPE;
  p = malloc((size_t)a->n / 4 * 3 + 1);
  if(!p)
    return DYN_ENOMEM;
  r = ddb_base64_decode(a->text, a->n, p, (size_t)a->n / 4 * 3 + 1);
  if(r == (size_t)-1) {
    free(p);
    return DYN_ETYPE; /* cannot happen for a value DynamoDB sent */
  }
  p[r] = 0;
  *out = p;
  *n = r;
  return DYN_OK;
}

char *dyn_value_to_json(const dyn_value *v, int flags) {
  ddb_buf b;
  if(!v)
    return NULL;
  ddb_buf_init(&b, DDB_JSON_MAX);
  if(flags & DYN_JSON_TYPED)
    ddb_av_to_typed_json(AV(v), &b);
  else
    ddb_av_to_json(AV(v), &b);
  return ddb_buf_take(&b, NULL);
}

int dyn_value_equal(const dyn_value *a, const dyn_value *b) {
  if(!a || !b)
    return a == b;
  return ddb_av_equal(AV(a), AV(b));
}

/* ------------------------------------------------------------------------
** JSON
*/
dyn_code dyn_item_from_json(const char *json, int flags, dyn_item **out,
                            dyn_error *err) {
  ddb_item *it = NULL;
  ddb_error e;
  dyn_code result;
  if(err)
    memset(err, 0, sizeof(*err));
  if(!out)
    return dyni_fail(err, DYN_EMISUSE, "dyn_item_from_json: out is NULL");
  *out = NULL;
  if(!json)
    return dyni_fail(err, DYN_EMISUSE, "dyn_item_from_json: json is NULL");
  if(flags & ~DYN_JSON_TYPED)
    return dyni_fail(err, DYN_EMISUSE, "dyn_item_from_json: unknown flags");
  ddb_error_clear(&e);
  if(flags & DYN_JSON_TYPED) {
    if(ddb_item_from_typed_json(json, strlen(json), &it, &e))
      return dyni_error(err, &e);
    result = dyni_check_item(it, err);
    if(result) {
      ddb_item_unref(it);
      return result;
    }
  } else if(ddb_item_from_json(json, strlen(json), NULL, &it, &e)) {
    return dyni_error(err, &e);
  }
  *out = PITEM(it);
  return DYN_OK;
}

char *dyn_item_to_json(const dyn_item *it, int flags) {
  ddb_buf b;
  if(!it)
    return NULL;
  if(!(flags & DYN_JSON_TYPED))
    return dyn_value_to_json(dyn_item_root(it), flags);
  /* an item is an attribute map, not an {"M":...} value */
  ddb_buf_init(&b, DDB_JSON_MAX);
  ddb_item_to_typed_json(CITEM(it), &b);
  return ddb_buf_take(&b, NULL);
}

/* ------------------------------------------------------------------------
** Builders.  Every container being built is a frame: a growing array of
** ddb_av.  dyn_builder_end() turns the frame into its parent's value.
** Strings and finished arrays live until the builder goes, in `owned`.
*/
typedef struct frame {
  ddb_type type; /* of the container; the root is an M */
  ddb_av *kids;
  uint32_t n, cap;
  const char *name; /* its name in the parent (owned copy), or NULL */
} frame;

struct dyn_builder {
  frame stack[BUILD_MAX_DEPTH + 1];
  int depth; /* stack[0] is the item */
  void **owned;
  size_t n_owned, cap_owned;
  dyn_code failed; /* the first mistake, sticky */
  char message[256];
};

static dyn_code bfail(dyn_builder *b, dyn_code code, const char *fmt,
                      const char *arg) {
  if(!b->failed) {
    b->failed = code;
    snprintf(b->message, sizeof(b->message), fmt, arg ? arg : "");
  }
  return b->failed;
}

/* Keep p until the builder is freed; returns p, or NULL (and the builder
** failed) when out of memory -- p is then freed. */
static void *own(dyn_builder *b, void *p) {
  if(!p) {
    bfail(b, DYN_ENOMEM, "out of memory%s", NULL);
    return NULL;
  }
  if(b->n_owned == b->cap_owned) {
    size_t cap = b->cap_owned ? b->cap_owned * 2 : 32;
    void **a = realloc(b->owned, cap * sizeof(*a));
    if(!a) {
      free(p);
      bfail(b, DYN_ENOMEM, "out of memory%s", NULL);
      return NULL;
    }
    b->owned = a;
    b->cap_owned = cap;
  }
  b->owned[b->n_owned++] = p;
  return p;
}

static char *own_strn(dyn_builder *b, const char *s, size_t n) {
  char *p = malloc(n + 1);
  if(p) {
    memcpy(p, s, n);
    p[n] = 0;
  }
  return own(b, p);
}

dyn_builder *dyn_builder_new(void) {
  dyn_builder *b = calloc(1, sizeof(*b));
  if(b)
    b->stack[0].type = DDB_M;
  return b;
}

void dyn_builder_free(dyn_builder *b) {
  size_t i;
  if(!b)
    return;
  for(i = 0; i < b->n_owned; i++)
    free(b->owned[i]);
  for(i = 0; i <= (size_t)b->depth; i++)
    free(b->stack[i].kids);
  free(b->owned);
  free(b);
}

/* Append a slot to the current frame for a value of type t named name;
** checks the name and the set's element type.  Returns the slot or NULL
** (builder failed). */
static ddb_av *slot(dyn_builder *b, const char *name, ddb_type t) {
  frame *f;
  ddb_av *a;
  if(!b || b->failed)
    return NULL;
  f = &b->stack[b->depth];
  if(f->type == DDB_M) {
    uint32_t i;
    if(!name || !*name) {
      bfail(b, DYN_EMISUSE, "a value in a map needs a name%s", NULL);
      return NULL;
    }
    for(i = 0; i < f->n; i++)
      if(strcmp(f->kids[i].name, name) == 0) {
        bfail(b, DYN_EINPUT, "attribute '%.100s' given twice", name);
        return NULL;
      }
  } else if(name) {
    bfail(b, DYN_EMISUSE, "'%.100s': a list or set element has no name", name);
    return NULL;
  }
  if((f->type == DDB_SS && t != DDB_S) || (f->type == DDB_NS && t != DDB_N) ||
     (f->type == DDB_BS && t != DDB_B)) {
    bfail(b, DYN_EMISUSE, "a %s set holds only its element type",
          ddb_type_name(f->type));
    return NULL;
  }
  if(f->n == f->cap) {
    uint32_t cap = f->cap ? f->cap * 2 : 8;
    ddb_av *k = realloc(f->kids, cap * sizeof(*k));
    if(!k) {
      bfail(b, DYN_ENOMEM, "out of memory%s", NULL);
      return NULL;
    }
    f->kids = k;
    f->cap = cap;
  }
  a = &f->kids[f->n];
  memset(a, 0, sizeof(*a));
  a->type = t;
  if(name) {
    size_t nl = strlen(name);
    a->name = own_strn(b, name, nl);
    if(!a->name)
      return NULL;
    a->name_len = (uint32_t)nl;
  }
  f->n++;
  return a;
}

static dyn_code add_text(dyn_builder *b, const char *name, ddb_type t,
                         const char *s, size_t n) {
  ddb_av *a = slot(b, name, t);
  if(!a)
    return b ? b->failed : DYN_ENOMEM;
  a->text = own_strn(b, s, n);
  a->n = (uint32_t)n;
  return b->failed;
}

dyn_code dyn_builder_s(dyn_builder *b, const char *name, const char *s) {
  if(b && !b->failed && !s)
    return bfail(b, DYN_EMISUSE, "NULL string for '%.100s'", name);
  return add_text(b, name, DDB_S, s, s ? strlen(s) : 0);
}

dyn_code dyn_builder_n(dyn_builder *b, const char *name, const char *digits) {
  if(b && !b->failed && (!digits || !ddb_number_fits(digits, strlen(digits))))
    return bfail(b, DYN_EINPUT, "'%.60s' is not a DynamoDB number",
                 digits ? digits : "NULL");
  return add_text(b, name, DDB_N, digits, digits ? strlen(digits) : 0);
}

dyn_code dyn_builder_int64(dyn_builder *b, const char *name, int64_t v) {
  char s[32];
  snprintf(s, sizeof(s), "%lld", (long long)v);
  return add_text(b, name, DDB_N, s, strlen(s));
}

dyn_code dyn_builder_double(dyn_builder *b, const char *name, double v) {
  char s[40] = "";
  if(b && !b->failed && !isfinite(v))
    return bfail(b, DYN_EINPUT, "%s: not a finite number", name);
  /* the shortest text that reads back as v, within DynamoDB's range */
  if(ddb_number_from_double(v, s, sizeof(s)) && b && !b->failed)
    return bfail(b, DYN_EINPUT, "'%s' is out of DynamoDB's range", s);
  return add_text(b, name, DDB_N, s, strlen(s));
}

dyn_code dyn_builder_b(dyn_builder *b, const char *name, const void *p,
                       size_t n) {
  size_t cap = (n + 2) / 3 * 4 + 1;
  char *enc;
  ddb_av *a;
  if(b && !b->failed && !p && n)
    return bfail(b, DYN_EMISUSE, "NULL bytes for '%.100s'", name);
  a = slot(b, name, DDB_B);
  if(!a)
    return b ? b->failed : DYN_ENOMEM;
  enc = own(b, malloc(cap));
  if(!enc)
    return b->failed;
  a->n = (uint32_t)ddb_base64_encode(p, n, enc, cap);
  enc[a->n] = 0;
  a->text = enc;
  return DYN_OK;
}

dyn_code dyn_builder_bool(dyn_builder *b, const char *name, int v) {
  ddb_av *a = slot(b, name, DDB_BOOL);
  if(!a)
    return b ? b->failed : DYN_ENOMEM;
  a->n = v ? 1 : 0;
  return DYN_OK;
}

dyn_code dyn_builder_null(dyn_builder *b, const char *name) {
  ddb_av *a = slot(b, name, DDB_NULL);
  return a ? DYN_OK : b ? b->failed : DYN_ENOMEM;
}

dyn_code dyn_builder_value(dyn_builder *b, const char *name,
                           const dyn_value *v) {
  ddb_item *copy;
  const ddb_av *one[1];
  ddb_av *a;
  if(b && !b->failed && !v)
    return bfail(b, DYN_EMISUSE, "NULL value for '%.100s'", name);
  a = slot(b, name, b && v ? AV(v)->type : DDB_NONE);
  if(!a)
    return b ? b->failed : DYN_ENOMEM;
  /* a private deep copy (in an item of its own), grafted under our name */
  one[0] = AV(v);
  copy = own(b, ddb_item_from_attrs(one, 1));
  if(!copy)
    return b->failed;
  {
    const char *nm = a->name;
    uint32_t nl = a->name_len;
    *a = copy->root.kids[0];
    a->name = nm;
    a->name_len = nl;
  }
  return DYN_OK;
}

dyn_code dyn_builder_begin(dyn_builder *b, const char *name, dyn_type type) {
  ddb_type t;
  frame *f;
  if(!b)
    return DYN_ENOMEM;
  if(b->failed)
    return b->failed;
  if(type != DYN_M && type != DYN_L && type != DYN_SS && type != DYN_NS &&
     type != DYN_BS)
    return bfail(b, DYN_EMISUSE, "dyn_builder_begin: %s is not a container",
                 dyn_type_name(type));
  if(b->depth >= BUILD_MAX_DEPTH)
    return bfail(b, DYN_EINPUT, "nesting deeper than 32 levels%s", NULL);
  t = to_ddb[type];
  /* checks name and element type against the current frame */
  if(!slot(b, name, t))
    return b->failed;
  b->stack[b->depth].n--; /* the slot is filled by dyn_builder_end() */
  f = &b->stack[++b->depth];
  memset(f, 0, sizeof(*f));
  f->type = t;
  f->name =
      name ? b->stack[b->depth - 1].kids[b->stack[b->depth - 1].n].name : NULL;
  return DYN_OK;
}

dyn_code dyn_builder_end(dyn_builder *b) {
  frame *f, *parent;
  ddb_av *a;
  if(!b)
    return DYN_ENOMEM;
  if(b->failed)
    return b->failed;
  if(b->depth == 0)
    return bfail(b, DYN_EMISUSE, "dyn_builder_end without a begin%s", NULL);
  f = &b->stack[b->depth];
  if((f->type == DDB_SS || f->type == DDB_NS || f->type == DDB_BS) &&
     f->n == 0)
    return bfail(b, DYN_EINPUT, "'%.100s': a set must not be empty",
                 f->name ? f->name : "(element)");
  if(f->kids && !own(b, f->kids)) {
    f->kids = NULL;
    return b->failed;
  }
  parent = &b->stack[b->depth - 1];
  a = &parent->kids[parent->n++]; /* the slot dyn_builder_begin() made */
  a->type = f->type;
  a->name = f->name;
  a->name_len = f->name ? (uint32_t)strlen(f->name) : 0;
  a->text = NULL;
  a->n = f->n;
  a->kids = f->kids;
  memset(f, 0, sizeof(*f));
  b->depth--;
  return DYN_OK;
}

dyn_code dyn_builder_finish(dyn_builder *b, dyn_item **out, dyn_error *err) {
  const ddb_av **attrs = NULL;
  ddb_item *it = NULL;
  dyn_code result = DYN_OK;
  uint32_t i;

  if(err)
    memset(err, 0, sizeof(*err));
  if(out)
    *out = NULL;
  if(!b)
    return dyni_fail(err, DYN_ENOMEM, "out of memory (dyn_builder_new)");
  if(!out) {
    result = dyni_fail(err, DYN_EMISUSE, "dyn_builder_finish: out is NULL");
    goto fail;
  }
  if(b->failed) {
    result = dyni_fail(err, b->failed, "%s", b->message);
    goto fail;
  }
  if(b->depth != 0) {
    result = dyni_fail(err, DYN_EMISUSE,
                       "dyn_builder_finish: %d dyn_builder_begin() not ended",
                       b->depth);
    goto fail;
  }
  attrs = malloc(sizeof(*attrs) * (b->stack[0].n + 1));
  if(!attrs) {
    result = dyni_fail(err, DYN_ENOMEM, "out of memory");
    goto fail;
  }
  for(i = 0; i < b->stack[0].n; i++)
    attrs[i] = &b->stack[0].kids[i];
  it = ddb_item_from_attrs(attrs, (int)b->stack[0].n);
  if(!it) {
    result = dyni_fail(err, DYN_ENOMEM, "out of memory");
    goto fail;
  }
  *out = PITEM(it);

fail:
  free((void *)attrs);
  dyn_builder_free(b);
  return result;
}
