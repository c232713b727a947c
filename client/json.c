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
** cJSON would turn numbers into doubles, so the plain JSON is read by the
** small parser below (strings scanned by tape.c's rules), which writes
** typed JSON text; that text is then decoded by tape.c into the item.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddb_client_int.h"

/* Deepest nesting accepted (DynamoDB's own limit is 32). */
#define JSON_MAX_DEPTH 32

typedef struct jparse {
  const char *p, *end;
  ddb_buf *out;
  ddb_error *err;
  char path[256]; /* where we are, for messages */
} jparse;

static void skip_ws(jparse *j) {
  while(j->p < j->end &&
        (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
    j->p++;
}

static ddb_result jerr(jparse *j, const char *what) {
  return ddb_error_set(j->err, DDB_ERR_INPUT, "%s%s%s", j->path,
                       j->path[0] ? ": " : "", what);
}

/* Scan a JSON string at j->p (tape.c's rules); sets [*s, *e) to its span,
** quotes included.  Returns 0 or -1. */
static int scan_string(jparse *j, const char **s, const char **e) {
  const char *q;
  int esc;
  if(j->p >= j->end || *j->p != '"' ||
     !(q = ddb_json_string_end(j->p + 1, j->end, &esc)))
    return -1;
  *s = j->p;
  *e = q + 1;
  j->p = q + 1;
  return 0;
}

/* Scan a JSON number; sets [*s, *e). */
static int scan_number(jparse *j, const char **s, const char **e) {
  const char *p = j->p;
  if(p < j->end && *p == '-')
    p++;
  if(p >= j->end || *p < '0' || *p > '9')
    return -1;
  while(p < j->end && ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' ||
                       *p == 'E' || *p == '+' || *p == '-'))
    p++;
  *s = j->p;
  *e = p;
  j->p = p;
  return 0;
}

/* Is the JSON string span [s, e) (quotes included) valid base64 with no
** escapes (ddb_base64_ok)? */
static int is_base64_span(const char *s, const char *e) {
  size_t n = (size_t)(e - s) - 2;
  return !memchr(s + 1, '\\', n) && ddb_base64_ok(s + 1, n);
}

static ddb_result parse_value(jparse *j, const ddb_av *hint, int depth);
static ddb_result typed_item(const char *text, size_t n, int from_plain,
                             ddb_item **out, ddb_error *err);

/* The kid of hint M named [s, e) (a JSON string span), or NULL. */
static const ddb_av *hint_member(const ddb_av *hint, const char *s,
                                 const char *e) {
  uint32_t i;
  size_t n = (size_t)(e - s) - 2;
  if(!hint || hint->type != DDB_M || memchr(s + 1, '\\', n))
    return NULL;
  for(i = 0; i < hint->n; i++)
    if(hint->kids[i].name_len == n &&
       memcmp(hint->kids[i].name, s + 1, n) == 0)
      return &hint->kids[i];
  return NULL;
}

/* An array: L, or a set when the hint says so and the elements allow. */
static ddb_result parse_array(jparse *j, const ddb_av *hint, int depth) {
  const char *start = j->p;
  ddb_type want = hint ? hint->type : DDB_NONE;
  int n = 0, all_str = 1, all_num = 1, all_b64 = 1;
  ddb_result r;

  /* first pass: can it be the hinted set? */
  if(want == DDB_SS || want == DDB_NS || want == DDB_BS) {
    j->p++;
    skip_ws(j);
    while(j->p < j->end && *j->p != ']') {
      const char *s, *e;
      if(*j->p == '"') {
        if(scan_string(j, &s, &e))
          break;
        all_num = 0;
        if(e - s != 2 && !is_base64_span(s, e))
          all_b64 = 0; /* "" is the empty binary */
      } else if(*j->p == '-' || (*j->p >= '0' && *j->p <= '9')) {
        if(scan_number(j, &s, &e))
          break;
        all_str = all_b64 = 0;
      } else {
        all_str = all_num = all_b64 = 0;
        break;
      }
      n++;
      skip_ws(j);
      if(j->p < j->end && *j->p == ',') {
        j->p++;
        skip_ws(j);
      }
    }
    j->p = start;
    if(n == 0 || (want == DDB_SS && !all_str) ||
       (want == DDB_NS && !all_num) || (want == DDB_BS && !all_b64))
      want = DDB_NONE;
  } else {
    want = DDB_NONE;
  }

  j->p++; /* [ */
  if(want != DDB_NONE)
    ddb_buf_addf(j->out, "{\"%s\":[", ddb_type_name(want));
  else
    ddb_buf_adds(j->out, "{\"L\":[");
  skip_ws(j);
  n = 0;
  while(j->p < j->end && *j->p != ']') {
    size_t plen = strlen(j->path);
    if(n)
      ddb_buf_addc(j->out, ',');
    snprintf(j->path + plen, sizeof(j->path) - plen, "[%d]", n);
    if(want == DDB_NS) {
      const char *s, *e;
      if(scan_number(j, &s, &e) || !ddb_number_fits(s, (size_t)(e - s)))
        return jerr(j, "number out of DynamoDB's range or precision");
      ddb_buf_addc(j->out, '"');
      ddb_buf_add(j->out, s, (size_t)(e - s));
      ddb_buf_addc(j->out, '"');
    } else if(want != DDB_NONE) {
      const char *s, *e;
      if(scan_string(j, &s, &e))
        return jerr(j, "bad string");
      ddb_buf_add(j->out, s, (size_t)(e - s));
    } else {
      const ddb_av *kh = (hint && hint->type == DDB_L && (uint32_t)n < hint->n)
                             ? &hint->kids[n]
                             : NULL;
      r = parse_value(j, kh, depth + 1);
      if(r)
        return r;
    }
    j->path[plen] = 0;
    n++;
    skip_ws(j);
    if(j->p < j->end && *j->p == ',') {
      j->p++;
      skip_ws(j);
      if(j->p < j->end && *j->p == ']')
        return jerr(j, "trailing comma in array");
    } else if(j->p < j->end && *j->p != ']') {
      return jerr(j, "expected ',' or ']' in array");
    }
  }
  if(j->p >= j->end)
    return jerr(j, "unterminated array");
  j->p++;
  ddb_buf_adds(j->out, "]}");
  return DDB_OK;
}

/* An object's members as a typed attribute map {"name":{...},...}. */
static ddb_result parse_members(jparse *j, const ddb_av *hint, int depth) {
  int n = 0;
  ddb_result r;
  j->p++; /* { */
  ddb_buf_addc(j->out, '{');
  skip_ws(j);
  while(j->p < j->end && *j->p != '}') {
    const char *s, *e;
    size_t plen = strlen(j->path);
    if(scan_string(j, &s, &e))
      return jerr(j, "expected a member name in double quotes");
    if(e - s == 2)
      return jerr(j, "empty attribute name");
    if(n)
      ddb_buf_addc(j->out, ',');
    ddb_buf_add(j->out, s, (size_t)(e - s));
    ddb_buf_addc(j->out, ':');
    snprintf(j->path + plen, sizeof(j->path) - plen, "%s%.*s", plen ? "." : "",
             (int)(e - s - 2), s + 1);
    skip_ws(j);
    if(j->p >= j->end || *j->p != ':')
      return jerr(j, "expected ':'");
    j->p++;
    skip_ws(j);
    r = parse_value(j, hint_member(hint, s, e), depth + 1);
    if(r)
      return r;
    j->path[plen] = 0;
    n++;
    skip_ws(j);
    if(j->p < j->end && *j->p == ',') {
      j->p++;
      skip_ws(j);
      if(j->p < j->end && *j->p == '}')
        return jerr(j, "trailing comma in object");
    } else if(j->p < j->end && *j->p != '}') {
      return jerr(j, "expected ',' or '}' in object");
    }
  }
  if(j->p >= j->end)
    return jerr(j, "unterminated object");
  j->p++;
  ddb_buf_addc(j->out, '}');
  return DDB_OK;
}

static ddb_result parse_value(jparse *j, const ddb_av *hint, int depth) {
  const char *s, *e;
  ddb_result r;
  if(depth > JSON_MAX_DEPTH)
    return jerr(j, "nested too deeply");
  skip_ws(j);
  if(j->p >= j->end)
    return jerr(j, "unexpected end of JSON");
  switch(*j->p) {
  case '{':
    ddb_buf_adds(j->out, "{\"M\":");
    r = parse_members(j, hint, depth);
    ddb_buf_addc(j->out, '}');
    return r;
  case '[': return parse_array(j, hint, depth);
  case '"':
    if(scan_string(j, &s, &e))
      return jerr(j, "bad string");
    /* "" over a B is the empty binary (DynamoDB allows one outside keys):
    ** the plain JSON of B "" and of S "" look alike */
    if(hint && hint->type == DDB_B && (e - s == 2 || is_base64_span(s, e)))
      ddb_buf_adds(j->out, "{\"B\":");
    else
      ddb_buf_adds(j->out, "{\"S\":");
    ddb_buf_add(j->out, s, (size_t)(e - s));
    return ddb_buf_addc(j->out, '}') ? DDB_ERR_NOMEM : DDB_OK;
  case 't':
  case 'f':
  case 'n': {
    static const char *const lit[] = {"true", "false", "null"};
    static const char *const typed[] = {"{\"BOOL\":true}", "{\"BOOL\":false}",
                                        "{\"NULL\":true}"};
    int k;
    for(k = 0; k < 3; k++) {
      size_t l = strlen(lit[k]);
      if((size_t)(j->end - j->p) >= l && memcmp(j->p, lit[k], l) == 0) {
        j->p += l;
        ddb_buf_adds(j->out, typed[k]);
        return DDB_OK;
      }
    }
    return jerr(j, "bad literal");
  }
  default:
    if(scan_number(j, &s, &e) || !ddb_number_ok(s, (size_t)(e - s)))
      return jerr(j, "not valid JSON");
    if(!ddb_number_fits(s, (size_t)(e - s)))
      return jerr(j, "number out of DynamoDB's range or precision "
                     "(38 digits, 1E-130 to 9.99E+125)");
    ddb_buf_adds(j->out, "{\"N\":\"");
    ddb_buf_add(j->out, s, (size_t)(e - s));
    ddb_buf_adds(j->out, "\"}");
    return DDB_OK;
  }
}

ddb_result ddb_item_from_json(const char *text, size_t n, const ddb_item *hint,
                              ddb_item **out, ddb_error *err) {
  jparse j;
  ddb_buf typed;
  ddb_result r;
  *out = NULL;
  memset(&j, 0, sizeof(j));
  j.p = text;
  j.end = text + n;
  j.err = err;
  ddb_buf_init(&typed, n * 4 + 1024);
  j.out = &typed;
  skip_ws(&j);
  if(j.p >= j.end || *j.p != '{') {
    ddb_buf_free(&typed);
    return ddb_error_set(err, DDB_ERR_INPUT, "item is not a JSON object");
  }
  r = parse_members(&j, hint ? &hint->root : NULL, 0);
  if(r == DDB_OK) {
    skip_ws(&j);
    if(j.p != j.end)
      r = jerr(&j, "text after the JSON object");
  }
  if(r == DDB_OK && typed.failed)
    r = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory converting an item");
  if(r == DDB_OK)
    r = typed_item(typed.p, typed.len, 1, out, err);
  ddb_buf_free(&typed);
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
** Returns 1 with *pDup the later of the two (its index in av->kids), 0
** when every element differs, -1 when out of memory. */
static int set_duplicate(const ddb_av *av, uint32_t *pDup) {
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
  ddb_buf_init(&b, 64u * 1024 * 1024);
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
        *pDup = a[i].idx;
        found = 1;
      }
  }
  ddb_buf_free(&b);
  free(raw);
  free(a);
  return found;
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
** DDB_ERR_NOMEM.
*/
static ddb_result check_values(const ddb_av *av, ddb_buf *path,
                               ddb_error *err) {
  uint32_t i, dup;
  size_t plen = path->len;
  const char *zPath = path->p ? path->p : "";
  int pl = (int)(plen > 200 ? 200 : plen);
  const char *zSep = plen ? ": " : "";
  ddb_result r;
  switch(av->type) {
  case DDB_N:
    if(!ddb_number_fits(av->text, av->n))
      return ddb_error_set(err, DDB_ERR_INPUT,
                           "%.*s%snumber '%.60s' out of DynamoDB's range or "
                           "precision (38 digits, 1E-130 to 9.99E+125)",
                           pl, zPath, zSep, av->text);
    return DDB_OK;
  case DDB_B:
    if(av->n && !ddb_base64_ok(av->text, av->n))
      return ddb_error_set(err, DDB_ERR_INPUT,
                           "%.*s%sbinary value is not base64", pl, zPath,
                           zSep);
    return DDB_OK;
  case DDB_NS:
  case DDB_SS:
  case DDB_BS:
    if(av->n == 0)
      return ddb_error_set(err, DDB_ERR_INPUT,
                           "%.*s%sa set must not be empty (DynamoDB holds no "
                           "empty %s)",
                           pl, zPath, zSep, ddb_type_name(av->type));
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
                             pl, zPath, i, k->text);
      return ddb_error_set(err, DDB_ERR_INPUT,
                           "%.*s[%u]: binary value is not base64", pl, zPath,
                           i);
    }
    switch(set_duplicate(av, &dup)) {
    case 0: return DDB_OK;
    case 1:
      return ddb_error_set(err, DDB_ERR_INPUT,
                           "%.*s%s'%.60s' is in the %s twice (a set's "
                           "elements must differ)",
                           pl, zPath, zSep, av->kids[dup].text,
                           ddb_type_name(av->type));
    default: return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    }
  case DDB_M:
  case DDB_L: break;
  default: return DDB_OK;
  }
  if(av->type == DDB_M && av->n > 1) {
    const ddb_av **a = malloc(sizeof(*a) * av->n);
    const ddb_av *dupName = NULL;
    if(!a)
      return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    for(i = 0; i < av->n; i++)
      a[i] = &av->kids[i];
    qsort((void *)a, av->n, sizeof(*a), name_order);
    for(i = 1; i < av->n && !dupName; i++)
      if(name_order(&a[i - 1], &a[i]) == 0)
        dupName = a[i];
    free((void *)a);
    if(dupName)
      return ddb_error_set(
          err, DDB_ERR_INPUT, "%.*s%sduplicate attribute name '%.*s'", pl,
          zPath, zSep,
          (int)(dupName->name_len > 200 ? 200 : dupName->name_len),
          dupName->name);
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

/* Decode typed JSON text[0..n) into *out and check it (check_values).
** from_plain: the text is what parse_members wrote from plain JSON: a set
** there with an element twice becomes a list first. */
static ddb_result typed_item(const char *text, size_t n, int from_plain,
                             ddb_item **out, ddb_error *err) {
  ddb_buf path;
  ddb_result r = ddb_item_parse(text, n, out, err);
  if(r == DDB_ERR_PARSE && err) {
    err->code = r = DDB_ERR_INPUT;
    if(strcmp(err->message, "item is not valid JSON") == 0)
      ddb_error_set(err, DDB_ERR_INPUT, "not valid JSON");
  }
  if(r)
    return r;
  if(from_plain && lists_for_sets_with_duplicates(&(*out)->root))
    r = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  if(r == DDB_OK) {
    ddb_buf_init(&path, 64u * 1024);
    r = check_values(&(*out)->root, &path, err);
    ddb_buf_free(&path);
  }
  if(r) {
    ddb_item_unref(*out);
    *out = NULL;
  }
  return r;
}

ddb_result ddb_item_from_typed_json(const char *text, size_t n, ddb_item **out,
                                    ddb_error *err) {
  return typed_item(text, n, 0, out, err);
}
