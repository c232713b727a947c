/*
** tape.c -- JSON text to a tape of tokens, in one pass, without a tree.
**
** The answers of Query, Scan and GetItem are parsed here instead of by
** cJSON: a cJSON tree costs a malloc and a free per node and a copy of
** every string, which was more than half the client CPU of a Scan.  A tape
** is one flat array of tokens in document order (reused from value to
** value), each token pointing into the text:
**
**     {"a":{"S":"x"},"b":[1,2]}
**     0:OBJ n=2  1:STR a  2:OBJ n=1  3:STR S  4:STR x  5:STR b  6:ARR n=2
**     7:NUM 1  8:NUM 2                      (end of 0 = 9, of 2 = 5, ...)
**
** so a value's members are walked by `end` without recursion, and strings
** are copied (and unescaped) once, straight into the decoded item
** (item.c:ddb_item_from_tape).  The parser is strict RFC 8259 JSON: a body
** cut short or damaged in any way is an error, never a shorter answer.
**
** A page is not tokenized whole: the reader (ddb_jr_*) walks the top-level
** object itself and tokenizes one member value, or one element of a
** member array (an item of Items), at a time, so the tape stays the size
** of one item.
*/
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ddb_client_int.h"

/* Deepest nesting of arrays and objects accepted (an AttributeValue of
** DynamoDB's 32 levels is 64 JSON levels). */
#define TAPE_MAX_DEPTH 256
/* The most tokens one value may have.  A value tokenized at once is one
** item (400 KB at most, as DynamoDB sizes it), a key, a ConsumedCapacity
** or UnprocessedKeys (at most 100 keys): never a page, nor the Responses
** of a BatchGetItem, which are read an item at a time.  An item has the
** most tokens as a List of empty strings ({"S":""}: 3 tokens, and 1 byte
** of size for the element): 3 x 400 KB = 1.2 M tokens (24 MB of tape);
** past 2 M, a value is none DynamoDB sends. */
#define TAPE_MAX_TOKENS (2u * 1024 * 1024)

/* Make room for one more token (called when t is full); 0, or -1 on out
** of memory or too many. */
static int tape_grow(ddb_tape *t) {
  uint32_t cap;
  ddb_jtok *p;
  if(t->cap >= TAPE_MAX_TOKENS)
    return -1;
  cap = t->cap ? t->cap * 2 : 256;
  if(t->borrowed) { /* the caller's storage is full: to the heap */
    p = malloc(cap * sizeof(*p));
    if(p && t->n)
      memcpy(p, t->tok, t->n * sizeof(*p));
  } else {
    p = realloc(t->tok, cap * sizeof(*p));
  }
  if(!p)
    return -1;
  t->tok = p;
  t->cap = cap;
  t->borrowed = 0;
  return 0;
}

/* See ddb_client_int.h. */
void ddb_tape_init_with(ddb_tape *t, ddb_jtok *storage, uint32_t cap) {
  t->tok = storage;
  t->n = 0;
  t->cap = cap;
  t->borrowed = 1;
}

/* Release the tape's tokens; the tape may be used again. */
void ddb_tape_free(ddb_tape *t) {
  if(!t->borrowed)
    free(t->tok);
  memset(t, 0, sizeof(*t));
}

/* The first byte at or after p that is not JSON white space (or end);
** inlined into the tokenizer. */
static inline const char *skip_ws(const char *p, const char *end) {
  /* every white space byte is at most ' ': one test for the others (the
  ** compact JSON DynamoDB sends has no white space at all) */
  while(p < end && (unsigned char)*p <= ' ' &&
        (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
    p++;
  return p;
}

/* The first byte at or after p that is not JSON white space (or end). */
const char *ddb_tape_skip_ws(const char *p, const char *end) {
  return skip_ws(p, end);
}

/* See ddb_client_int.h.  The ASCII runs (all of JSON's syntax, and most
** text) 16 bytes at a time with SSE2, a multi-byte sequence checked byte
** by byte (RFC 3629's table: E0 and F0 take no overlong second byte, ED
** none of the surrogates, F4 nothing past U+10FFFF). */
int ddb_utf8_valid(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s, *end = p + n;
  while(p < end) {
    unsigned c, b;
    size_t need, i;
#ifdef __SSE2__
    while(end - p >= 16 && !_mm_movemask_epi8(_mm_loadu_si128(
                               (const __m128i *)(const void *)p)))
      p += 16;
    if(p >= end)
      break;
#endif
    c = *p;
    if(c < 0x80) {
      p++;
      continue;
    }
    if(c >= 0xC2 && c <= 0xDF)
      need = 1;
    else if(c >= 0xE0 && c <= 0xEF)
      need = 2;
    else if(c >= 0xF0 && c <= 0xF4)
      need = 3;
    else
      return 0; /* a continuation byte first, C0/C1 (overlong), F5-FF */
    if((size_t)(end - p) <= need)
      return 0; /* cut short */
    b = p[1];
    if((c == 0xE0 && b < 0xA0) || (c == 0xED && b > 0x9F) ||
       (c == 0xF0 && b < 0x90) || (c == 0xF4 && b > 0x8F))
      return 0;
    for(i = 1; i <= need; i++)
      if((p[i] & 0xC0) != 0x80)
        return 0;
    p += need + 1;
  }
  return 1;
}

/* The 4 hex digits at p as a number, or -1. */
static long hex4_at(const char *p, const char *end) {
  long u = 0;
  int i, d;
  if(end - p < 4)
    return -1;
  for(i = 0; i < 4; i++) {
    if((d = ddb_hexval(p[i])) < 0)
      return -1;
    u = u << 4 | d;
  }
  return u;
}

/* The length of the longest prefix of s[0..n) that a JSON string holds as
** it is (no '"', no backslash, no control character): 16 bytes at a time
** with SSE2 (part of every x86-64) while 16 remain, then
** ddb_json_plain's words and bytes.  Reads nothing past s + n. */
static inline size_t plain_prefix(const char *s, size_t n) {
  size_t i = 0;
#ifdef __SSE2__
  const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                ctl = _mm_set1_epi8(0x1f);
  while(i + 16 <= n) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
    /* a byte below 0x20 is its own minimum with 0x1f */
    __m128i m = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)),
        _mm_cmpeq_epi8(_mm_min_epu8(x, ctl), x));
    int mask = _mm_movemask_epi8(m);
    if(mask)
      return i + (size_t)__builtin_ctz((unsigned)mask);
    i += 16;
  }
#endif
  return i + ddb_json_plain(s + i, n - i);
}

/* scan_string past its first plain run (p at a byte that is no plain
** byte, or at end). */
static const char *scan_string_rest(const char *p, const char *end, int *esc);

/* Scan a string whose opening quote is at p[-1].  Returns the position of
** the closing quote, or NULL when the string is not valid; *esc tells
** whether it has escapes.  Inlined: a string whose closing quote is among
** its first 16 bytes (most names and values) takes one load and compare
** of 16 bytes. */
static inline const char *scan_string(const char *p, const char *end,
                                      int *esc) {
  *esc = 0;
#ifdef __SSE2__
  if(end - p >= 16) {
    const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i m =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
                                  _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
                     _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x));
    int mask = _mm_movemask_epi8(m);
    if(mask) {
      p += __builtin_ctz((unsigned)mask);
      if(*p == '"')
        return p;
    } else
      p += 16;
  }
#endif
  return scan_string_rest(p, end, esc);
}

static const char *scan_string_rest(const char *p, const char *end, int *esc) {
  for(;;) {
    /* the common case: a run of plain bytes */
    p += plain_prefix(p, (size_t)(end - p));
    if(p >= end || (unsigned char)*p < 0x20)
      return NULL;
    if(*p == '"')
      return p;
    *esc = 1;
    if(++p >= end)
      return NULL;
    switch(*p) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't': p++; break;
    case 'u': {
      /* a surrogate must be half of a pair: UTF-8 cannot hold it alone */
      long u = hex4_at(p + 1, end);
      if(u < 0 || (u >= 0xDC00 && u <= 0xDFFF))
        return NULL;
      p += 5;
      if(u >= 0xD800 && u <= 0xDBFF) {
        long lo = end - p >= 2 && p[0] == '\\' && p[1] == 'u'
                      ? hex4_at(p + 2, end)
                      : -1;
        if(lo < 0xDC00 || lo > 0xDFFF)
          return NULL;
        p += 6;
      }
      break;
    }
    default: return NULL;
    }
  }
}

/* Scan a number starting at p (RFC 8259 grammar).  Returns the position
** after it, or NULL. */
static const char *scan_number(const char *p, const char *end) {
  if(p < end && *p == '-')
    p++;
  if(p >= end)
    return NULL;
  if(*p == '0')
    p++;
  else if(*p >= '1' && *p <= '9')
    while(p < end && *p >= '0' && *p <= '9')
      p++;
  else
    return NULL;
  if(p < end && *p == '.') {
    const char *d = ++p;
    while(p < end && *p >= '0' && *p <= '9')
      p++;
    if(p == d)
      return NULL;
  }
  if(p < end && (*p == 'e' || *p == 'E')) {
    const char *d;
    p++;
    if(p < end && (*p == '+' || *p == '-'))
      p++;
    d = p;
    while(p < end && *p >= '0' && *p <= '9')
      p++;
    if(p == d)
      return NULL;
  }
  return p;
}

/* What comes next for ddb_tape_value's outline, as its phases say. */
enum tape_next {
  TAPE_FAIL,  /* the text is not valid there */
  TAPE_VALUE, /* a value at p */
  TAPE_KEY,   /* an object member's name at p */
  TAPE_AFTER, /* p just after a value */
  TAPE_DONE   /* the outermost value is whole */
};

/* Tokenize the scalar (string, true, false, null or number) at *pp into k,
** the token at t->tok[t->n] (off set, the rest 0), and count it.  Returns
** TAPE_AFTER with *pp just past it, or TAPE_FAIL with *pp unchanged. */
static inline int tape_scalar(ddb_tape *t, ddb_jtok *k, const char **pp,
                              const char *end) {
  const char *p = *pp, *q;
  switch(*p) {
  case '"': {
    int esc;
    q = scan_string(p + 1, end, &esc);
    if(!q)
      return TAPE_FAIL;
    k->type = DDB_JSTR;
    k->off++;
    k->len = (uint32_t)(q - p - 1);
    k->esc = (uint8_t)esc;
    q++;
    break;
  }
  case 't':
  case 'f':
  case 'n': {
    static const char *const lit[] = {"true", "false", "null"};
    int w = *p == 't' ? 0 : *p == 'f' ? 1 : 2;
    size_t n = strlen(lit[w]);
    if((size_t)(end - p) < n || memcmp(p, lit[w], n) != 0)
      return TAPE_FAIL;
    k->type = (uint8_t)(DDB_JTRUE + w);
    k->len = (uint32_t)n;
    q = p + n;
    break;
  }
  default:
    q = scan_number(p, end);
    if(!q)
      return TAPE_FAIL;
    k->type = DDB_JNUM;
    k->len = (uint32_t)(q - p);
  }
  k->end = ++t->n;
  *pp = q;
  return TAPE_AFTER;
}

/* Open the object or array at *pp as k, the token at t->tok[t->n] (off
** set, the rest 0), pushed on stack (*depth of TAPE_MAX_DEPTH in use).
** Returns TAPE_AFTER when it is empty (closed at once), else TAPE_KEY (an
** object) or TAPE_VALUE (an array) with *pp at its first member; or
** TAPE_FAIL when too deep (*pp unchanged). */
static inline int tape_open(ddb_tape *t, ddb_jtok *k, uint32_t *stack,
                            int *depth, const char **pp, const char *end) {
  const char *p = *pp;
  if(*depth == TAPE_MAX_DEPTH)
    return TAPE_FAIL;
  k->type = *p == '{' ? DDB_JOBJ : DDB_JARR;
  k->end = 0; /* open */
  stack[(*depth)++] = t->n++;
  p = skip_ws(p + 1, end);
  if(p < end && *p == (k->type == DDB_JOBJ ? '}' : ']')) {
    t->tok[stack[--*depth]].end = t->n;
    *pp = p + 1;
    return TAPE_AFTER;
  }
  *pp = p;
  return k->type == DDB_JOBJ ? TAPE_KEY : TAPE_VALUE;
}

/* After a value at *pp: count it in its container, and close the
** containers that end there.  Returns TAPE_DONE (the outermost value
** closed), TAPE_VALUE or TAPE_KEY (after a ',' in an array or an object:
** *pp at the next member), or TAPE_FAIL (*pp at the byte JSON does not
** allow there). */
static inline int tape_after(ddb_tape *t, const uint32_t *stack, int *depth,
                             const char **pp, const char *end) {
  const char *p = *pp;
  int next;
  for(;;) {
    ddb_jtok *c;
    if(*depth == 0) {
      next = TAPE_DONE;
      break;
    }
    c = &t->tok[stack[*depth - 1]];
    c->n++;
    p = skip_ws(p, end);
    if(p >= end) {
      next = TAPE_FAIL;
      break;
    }
    if(*p == ',') {
      p = skip_ws(p + 1, end);
      next = c->type == DDB_JOBJ ? TAPE_KEY : TAPE_VALUE;
      break;
    }
    if(*p != (c->type == DDB_JOBJ ? '}' : ']')) {
      next = TAPE_FAIL;
      break;
    }
    c->end = t->n;
    --*depth;
    p++;
  }
  *pp = p;
  return next;
}

/* Tokenize the object member name at *pp and its ':' onto t.  Returns
** TAPE_VALUE with *pp at the member's value, or TAPE_FAIL with *pp at the
** byte JSON does not allow (the name's opening quote for a bad name). */
static inline int tape_key(ddb_tape *t, const char *base, const char **pp,
                           const char *end) {
  const char *p = *pp, *q;
  ddb_jtok *k;
  int esc;
  if(p >= end || *p != '"' || (t->n >= t->cap && tape_grow(t)))
    return TAPE_FAIL;
  q = scan_string(p + 1, end, &esc);
  if(!q)
    return TAPE_FAIL;
  k = &t->tok[t->n];
  k->type = DDB_JSTR;
  k->off = (uint32_t)(p + 1 - base);
  k->len = (uint32_t)(q - p - 1);
  k->n = 0;
  k->esc = (uint8_t)esc;
  k->end = ++t->n;
  p = skip_ws(q + 1, end);
  if(p >= end || *p != ':') {
    *pp = p;
    return TAPE_FAIL;
  }
  *pp = skip_ws(p + 1, end);
  return TAPE_VALUE;
}

/* Tokenize the one JSON value at *pp (leading white space allowed) onto the
** end of t; on success *pp is just past it.  Returns 0, or -1 when the text
** there is not one valid value (or is nested deeper than TAPE_MAX_DEPTH, or
** memory runs out); then *pp is where it failed (the byte JSON does not
** allow there: a string's opening quote for a bad string), and the tokens
** before it are on t, the containers still open with end 0.  A loop over
** the phases: a value (opened, or a scalar), what follows it, a name. */
int ddb_tape_value(ddb_tape *t, const char *base, const char **pp,
                   const char *end) {
  uint32_t stack[TAPE_MAX_DEPTH];
  int depth = 0, next;
  const char *p = skip_ws(*pp, end);
  ddb_jtok *k;

  for(;;) {
    /* p is at a value */
    if(p >= end || (t->n >= t->cap && tape_grow(t)))
      break;
    k = &t->tok[t->n];
    k->off = (uint32_t)(p - base);
    k->len = 0;
    k->n = 0;
    k->esc = 0;
    if(*p == '{' || *p == '[')
      next = tape_open(t, k, stack, &depth, &p, end);
    else
      next = tape_scalar(t, k, &p, end);
    if(next == TAPE_AFTER)
      next = tape_after(t, stack, &depth, &p, end);
    if(next == TAPE_KEY)
      next = tape_key(t, base, &p, end);
    if(next == TAPE_DONE) {
      *pp = p;
      return 0;
    }
    if(next == TAPE_FAIL)
      break;
  }
  *pp = p;
  return -1;
}

/* Append the UTF-8 of code point u to out; returns the bytes written. */
static size_t put_utf8(char *out, unsigned u) {
  if(u < 0x80) {
    out[0] = (char)u;
    return 1;
  }
  if(u < 0x800) {
    out[0] = (char)(0xC0 | (u >> 6));
    out[1] = (char)(0x80 | (u & 0x3F));
    return 2;
  }
  if(u < 0x10000) {
    out[0] = (char)(0xE0 | (u >> 12));
    out[1] = (char)(0x80 | ((u >> 6) & 0x3F));
    out[2] = (char)(0x80 | (u & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (u >> 18));
  out[1] = (char)(0x80 | ((u >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((u >> 6) & 0x3F));
  out[3] = (char)(0x80 | (u & 0x3F));
  return 4;
}

/* Copy the string token k of text into out (room for k->len + 1 bytes:
** unescaped text is never longer), unescaped and NUL-terminated.  Returns
** its length. */
size_t ddb_tape_str(const char *text, const ddb_jtok *k, char *out) {
  const char *p = text + k->off, *end = p + k->len;
  char *o = out;
  if(!k->esc) {
    ddb_copy_short(out, p, k->len);
    out[k->len] = 0;
    return k->len;
  }
  while(p < end) {
    const char *bs = memchr(p, '\\', (size_t)(end - p));
    size_t run = bs ? (size_t)(bs - p) : (size_t)(end - p);
    unsigned u;
    memcpy(o, p, run);
    o += run;
    p += run;
    if(p >= end)
      break;
    p++; /* the backslash; the tokenizer checked what follows */
    switch(*p++) {
    case 'b': *o++ = '\b'; break;
    case 'f': *o++ = '\f'; break;
    case 'n': *o++ = '\n'; break;
    case 'r': *o++ = '\r'; break;
    case 't': *o++ = '\t'; break;
    case 'u':
      /* the tokenizer took only whole surrogate pairs */
      u = (unsigned)hex4_at(p, end);
      p += 4;
      if(u >= 0xD800 && u <= 0xDBFF) {
        u = 0x10000 + ((u - 0xD800) << 10) +
            ((unsigned)hex4_at(p + 2, end) - 0xDC00);
        p += 6;
      }
      o += put_utf8(o, u);
      break;
    default: *o++ = p[-1]; /* " \ / */
    }
  }
  *o = 0;
  return (size_t)(o - out);
}

/* Is string token k of text equal to the NUL-terminated s? */
int ddb_tape_eq(const char *text, const ddb_jtok *k, const char *s) {
  size_t n = strlen(s);
  char buf[64];
  if(k->type != DDB_JSTR)
    return 0;
  if(!k->esc)
    return k->len == n && memcmp(text + k->off, s, n) == 0;
  if(k->len >= sizeof(buf))
    return 0; /* an escaped name this long is none of ours */
  return ddb_tape_str(text, k, buf) == n && memcmp(buf, s, n) == 0;
}

/* The value of member `name` of the object token at index obj, or -1. */
long ddb_tape_member(const ddb_tape *t, const char *text, uint32_t obj,
                     const char *name) {
  uint32_t i, k;
  if(t->tok[obj].type != DDB_JOBJ)
    return -1;
  for(i = 0, k = obj + 1; i < t->tok[obj].n; i++, k = t->tok[k + 1].end)
    if(ddb_tape_eq(text, &t->tok[k], name))
      return (long)k + 1;
  return -1;
}

/* s[0..n), a JSON number, as a double when it is short: at most 15
** digits and no exponent.  Then the digits m are exact in a double, and
** so is 10^f for its f fraction digits (f <= 15 <= 22), so m / 10^f,
** one correctly rounded division, is strtod's answer (Clinger's fast
** path).  Returns 0 with *out set, or -1 for strtod to read it. */
static int num_short(const char *s, size_t n, double *out) {
  static const double pow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  uint64_t m = 0;
  size_t i = s[0] == '-', digits = 0, frac = 0;
  int dot = 0;
  for(; i < n; i++) {
    if(s[i] >= '0' && s[i] <= '9') {
      m = m * 10 + (uint64_t)(s[i] - '0');
      digits++;
      frac += (size_t)dot;
    } else if(s[i] == '.' && !dot) {
      dot = 1;
    } else {
      return -1; /* an exponent */
    }
  }
  if(digits == 0 || digits > 15)
    return -1;
  *out = (double)m / pow10[frac];
  if(s[0] == '-')
    *out = -*out;
  return 0;
}

/* The number token at index i as a double; 0 if it is not a number. */
double ddb_tape_num(const ddb_tape *t, const char *text, uint32_t i) {
  char buf[64];
  const ddb_jtok *k = &t->tok[i];
  double v;
  if(k->type != DDB_JNUM || k->len >= sizeof(buf))
    return 0;
  if(num_short(text + k->off, k->len, &v) == 0)
    return v;
  memcpy(buf, text + k->off, k->len);
  buf[k->len] = 0;
  return strtod(buf, NULL);
}

/* ------------------------------------------------------------------------
** The reader: a top-level object walked member by member
*/

/* Start reading the object that text[0..n) must be.  Returns 0, or -1
** when it does not start with '{' or is not UTF-8 (ddb_utf8_valid). */
int ddb_jr_open(ddb_jreader *r, const char *text, size_t n) {
  if(!ddb_utf8_valid(text, n))
    return -1; /* JSON text is UTF-8 (RFC 8259, 8.1) */
  r->text = text;
  r->p = skip_ws(text, text + n);
  r->end = text + n;
  r->first = 1;
  if(r->p >= r->end || *r->p != '{')
    return -1;
  r->p++;
  return 0;
}

/* The next member's name: 1 with *name set (a token of r->tape, which is
** reset first), 0 at the end of the object (of an entered one: the reader
** is then back among its parent's members; of the top one: nothing but
** white space may follow), -1 on malformed text. */
int ddb_jr_next(ddb_jreader *r, ddb_jtok *name) {
  const char *q;
  int esc;
  r->p = skip_ws(r->p, r->end);
  if(r->p >= r->end)
    return -1;
  if(*r->p == '}') {
    if(r->depth > 0) {
      /* the end of an object entered: back to its parent's members */
      r->depth--;
      r->first = 0;
      r->p++;
      return 0;
    }
    r->p = skip_ws(r->p + 1, r->end);
    return r->p == r->end ? 0 : -1;
  }
  if(!r->first) {
    if(*r->p != ',')
      return -1;
    r->p = skip_ws(r->p + 1, r->end);
  }
  r->first = 0;
  if(r->p >= r->end || *r->p != '"' ||
     !(q = scan_string(r->p + 1, r->end, &esc)))
    return -1;
  name->type = DDB_JSTR;
  name->off = (uint32_t)(r->p + 1 - r->text);
  name->len = (uint32_t)(q - r->p - 1);
  name->n = 0;
  name->end = 0;
  name->esc = (uint8_t)esc;
  r->p = skip_ws(q + 1, r->end);
  if(r->p >= r->end || *r->p != ':')
    return -1;
  r->p++;
  return 1;
}

/* Tokenize the current member's value onto a reset r->tape (root at 0).
** Returns 0 or -1. */
int ddb_jr_value(ddb_jreader *r) {
  r->tape.n = 0;
  return ddb_tape_value(&r->tape, r->text, &r->p, r->end);
}

/* Enter the current member's value, which must be an object: the next
** calls of ddb_jr_next() give its members, then 0 at its end, after which
** they go on with the members of the object around it.  Returns 0, or -1
** when it is not an object (or is nested too deep). */
int ddb_jr_object(ddb_jreader *r) {
  r->p = skip_ws(r->p, r->end);
  if(r->p >= r->end || *r->p != '{' || r->depth >= TAPE_MAX_DEPTH)
    return -1;
  r->p++;
  r->depth++;
  r->first = 1;
  return 0;
}

/* Enter the current member's value, which must be an array.  Returns 0,
** or -1 when it is not one. */
int ddb_jr_array(ddb_jreader *r) {
  r->p = skip_ws(r->p, r->end);
  if(r->p >= r->end || *r->p != '[')
    return -1;
  r->p++;
  r->first_elem = 1;
  return 0;
}

/* The next element of the array entered: 1 with it on a reset r->tape
** (root at 0), 0 after the last (the array is left), -1 on malformed
** text. */
int ddb_jr_element(ddb_jreader *r) {
  r->p = skip_ws(r->p, r->end);
  if(r->p >= r->end)
    return -1;
  if(*r->p == ']') {
    r->p++;
    return 0;
  }
  if(!r->first_elem) {
    if(*r->p != ',')
      return -1;
    r->p++;
  }
  r->first_elem = 0;
  r->tape.n = 0;
  return ddb_tape_value(&r->tape, r->text, &r->p, r->end) ? -1 : 1;
}
