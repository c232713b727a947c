/*
** buf.c -- bounded buffers, base64 and error helpers for the client layer.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddb_client_int.h"

/* ------------------------------------------------------------------------
** Text a terminal shows as it is
**
** Messages quote what others wrote: DynamoDB's error text, attribute
** names of an answer, a credential_process's stderr.  A hostile endpoint
** can put escape sequences there (clear the screen, set the title, move
** the cursor, make a link), a CR that overwrites the line, bidi controls
** that show text in another order, or bytes that are no UTF-8; every
** message of this layer goes through ddb_text_safe() once, in
** ddb_error_set(), so none of them reaches a terminal.
*/

/* Is the code point u one a terminal would act on rather than show: a
** C1 control, a line or paragraph separator, or a bidi control (the
** "Trojan Source" ones: LRM, RLM, ALM, LRE..RLO, LRI..PDI)? */
static int unsafe_code_point(unsigned long u) {
  return (u >= 0x80 && u <= 0x9F) || u == 0x61C || u == 0x200E ||
         u == 0x200F || (u >= 0x2028 && u <= 0x202E) ||
         (u >= 0x2066 && u <= 0x2069);
}

/* The length of the well-formed UTF-8 sequence at s[0..n) (RFC 3629: no
** overlong form, no surrogate, at most U+10FFFF) with *u its code point,
** or 0 when s does not start with one. */
static size_t utf8_seq(const unsigned char *s, size_t n, unsigned long *u) {
  size_t len, i;
  unsigned long min;
  if(s[0] < 0x80) {
    *u = s[0];
    return 1;
  }
  if(s[0] >= 0xC2 && s[0] <= 0xDF) {
    len = 2;
    min = 0x80;
    *u = s[0] & 0x1F;
  } else if(s[0] >= 0xE0 && s[0] <= 0xEF) {
    len = 3;
    min = 0x800;
    *u = s[0] & 0x0F;
  } else if(s[0] >= 0xF0 && s[0] <= 0xF4) {
    len = 4;
    min = 0x10000;
    *u = s[0] & 0x07;
  } else {
    return 0;
  }
  if(n < len)
    return 0;
  for(i = 1; i < len; i++) {
    if((s[i] & 0xC0) != 0x80)
      return 0;
    *u = *u << 6 | (s[i] & 0x3F);
  }
  if(*u < min || *u > 0x10FFFF || (*u >= 0xD800 && *u <= 0xDFFF))
    return 0;
  return len;
}

/* See ddb_client_int.h: s[0..n) into out[0..cap) with what a terminal
** would act on written as escapes. */
size_t ddb_text_safe(char *out, size_t cap, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0, o = 0;
  if(cap == 0)
    return 0;
  while(i < n) {
    char esc[24]; /* "\\u" and up to 16 hex digits: room the compiler
                     can see, though every escape is 4 or 6 bytes */
    const char *w = (const char *)p + i;
    unsigned long u = 0;
    size_t len = utf8_seq(p + i, n - i, &u), wn = len;
    if(len == 0) {
      /* a byte that is no UTF-8 */
      snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
      w = esc;
      wn = 4;
      len = 1;
    } else if(u < 0x20 || u == 0x7F) {
      snprintf(esc, sizeof(esc), "\\x%02lx", u);
      w = esc;
      wn = 4;
    } else if(unsafe_code_point(u)) {
      snprintf(esc, sizeof(esc), "\\u%04lx", u & 0xFFFF); /* all <= FFFF */
      w = esc;
      wn = 6;
    }
    if(o + wn >= cap)
      break; /* only whole characters and escapes */
    memcpy(out + o, w, wn);
    o += wn;
    i += len;
  }
  out[o] = 0;
  return o;
}

/* See ddb_client_int.h: how much of s[0..n) to quote, at most max bytes,
** ending on a character boundary. */
size_t ddb_text_cut(const char *s, size_t n, size_t max) {
  if(n <= max)
    return n;
  while(max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
    max--;
  return max;
}

/* Of a message made safe that does not fit an error's DDB_ERROR_MAX, the
** bytes kept from its start; the rest of the room is its end (what went
** wrong is often said last: "...: duplicate attribute name"). */
#define ERROR_HEAD 300

ddb_result ddb_error_set(ddb_error *err, ddb_result code, const char *fmt,
                         ...) {
  char raw[DDB_ERROR_MAX], safe[4 * DDB_ERROR_MAX];
  size_t n, head, tail;
  va_list ap;
  if(!err)
    return code;
  err->code = code;
  va_start(ap, fmt);
  vsnprintf(raw, sizeof(raw), fmt, ap);
  va_end(ap);
  /* each byte takes 4 at most (\xHH), so safe holds all of raw */
  n = ddb_text_safe(safe, sizeof(safe), raw, strlen(raw));
  if(n < DDB_ERROR_MAX) {
    memcpy(err->message, safe, n + 1);
    return code;
  }
  /* escapes made it longer: its start, "...", its end */
  head = ddb_text_cut(safe, n, ERROR_HEAD);
  tail = n - (DDB_ERROR_MAX - 1 - head - 3);
  while(tail < n && ((unsigned char)safe[tail] & 0xC0) == 0x80)
    tail++;
  memcpy(err->message, safe, head);
  memcpy(err->message + head, "...", 3);
  memcpy(err->message + head + 3, safe + tail, n - tail + 1);
  return code;
}

void ddb_error_clear(ddb_error *err) {
  /* not a memset of the whole struct: this runs on every cached read */
  if(err) {
    err->code = DDB_OK;
    err->http_status = 0;
    err->retries = 0;
    err->type[0] = 0;
    err->message[0] = 0;
    err->maybe_applied = 0;
  }
}

char *ddb_strdup(const char *s) {
  size_t n;
  char *p;
  if(!s)
    return NULL;
  n = strlen(s);
  p = malloc(n + 1);
  if(p)
    memcpy(p, s, n + 1);
  return p;
}

/* A malloc'ed a followed by b, or NULL on out of memory. */
char *ddb_concat(const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  char *p = malloc(na + nb + 1);
  if(!p)
    return NULL;
  memcpy(p, a, na);
  memcpy(p + na, b, nb + 1);
  return p;
}

/* A malloc'ed copy of s[0..n), NUL-terminated; NULL on out of memory. */
char *ddb_strndup(const char *s, size_t n) {
  char *p = malloc(n + 1);
  if(p) {
    if(n)
      memcpy(p, s, n);
    p[n] = 0;
  }
  return p;
}

/* Free s (NULL is fine) after overwriting it with zeros (for secrets):
** explicit_bzero, which the compiler may not drop as a dead store before
** free() (a memset there, it may and does). */
void ddb_wipe_free(char *s) {
  if(s) {
    explicit_bzero(s, strlen(s));
    free(s);
  }
}

/* Copy src (NULL: "") into dst of cap bytes, cut to fit, NUL-terminated. */
void ddb_copy_str(char *dst, size_t cap, const char *src) {
  size_t n = src ? strlen(src) : 0;
  if(n >= cap)
    n = cap - 1;
  if(n)
    memcpy(dst, src, n);
  dst[n] = 0;
}

/* ------------------------------------------------------------------------
** Bounded buffer
*/
void ddb_buf_init(ddb_buf *b, size_t max) {
  memset(b, 0, sizeof(*b));
  b->max = max;
}

void ddb_buf_init_with(ddb_buf *b, char *storage, size_t cap, size_t max) {
  memset(b, 0, sizeof(*b));
  b->max = max;
  b->p = storage;
  b->cap = cap;
  b->borrowed = 1;
  if(cap)
    storage[0] = 0;
}

void ddb_buf_free(ddb_buf *b) {
  if(!b->borrowed)
    free(b->p);
  b->borrowed = 0;
  b->p = NULL;
  b->len = b->cap = 0;
  b->failed = 0;
}

void ddb_buf_reset(ddb_buf *b) {
  b->len = 0;
  b->failed = 0;
  if(b->p)
    b->p[0] = 0;
}

/* Make room for n more bytes plus a NUL.  Returns 0, or -1 (and marks the
** buffer failed) when that would pass the cap or memory runs out. */
static int buf_grow(ddb_buf *b, size_t n) {
  size_t need, cap;
  char *p;
  if(b->failed)
    return -1;
  if(n > b->max || b->len > b->max - n) {
    b->failed = 1;
    return -1;
  }
  need = b->len + n + 1;
  if(need <= b->cap)
    return 0;
  cap = b->cap ? b->cap : 256;
  while(cap < need)
    cap *= 2;
  if(b->borrowed) {
    /* outgrew the caller's storage: move to the heap */
    p = malloc(cap);
    if(p && b->len)
      memcpy(p, b->p, b->len);
  } else {
    p = realloc(b->p, cap);
  }
  if(!p) {
    b->failed = 1;
    return -1;
  }
  b->borrowed = 0;
  b->p = p;
  b->cap = cap;
  return 0;
}

int ddb_buf_add_slow(ddb_buf *b, const void *p, size_t n) {
  if(buf_grow(b, n))
    return -1;
  if(n)
    memcpy(b->p + b->len, p, n);
  b->len += n;
  b->p[b->len] = 0;
  return 0;
}

int ddb_buf_reserve(ddb_buf *b, size_t n) {
  return buf_grow(b, n);
}

int ddb_buf_add_part_slow(ddb_buf *b, const void *p, size_t n) {
  unsigned char len[10]; /* 64 bits need 10 bytes of 7 */
  size_t k = 0, v = n;
  do {
    len[k] = (unsigned char)(v & 0x7f);
    v >>= 7;
    if(v)
      len[k] |= 0x80;
    k++;
  } while(v);
  ddb_buf_add(b, len, k);
  return ddb_buf_add(b, p, n);
}

int ddb_buf_addf(ddb_buf *b, const char *fmt, ...) {
  va_list ap;
  int n;
  char small[128];
  va_start(ap, fmt);
  n = vsnprintf(small, sizeof(small), fmt, ap);
  va_end(ap);
  if(n < 0) {
    b->failed = 1;
    return -1;
  }
  if((size_t)n < sizeof(small))
    return ddb_buf_add(b, small, (size_t)n);
  if(buf_grow(b, (size_t)n))
    return -1;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
  return 0;
}

#define P8  1, 1, 1, 1, 1, 1, 1, 1
#define P32 P8, P8, P8, P8
const unsigned char ddb_json_plain_byte[256] = {
    /* 0x00-0x1f: control characters */
    [0x20] = 1, 1,   0 /* '"' */, 1,  1, 1, 1, 1,
    1,          1,   1,           1,  1, 1, 1, 1, /* 0x2f */
    P8,         P8,                               /* 0x30-0x3f */
    P8,         P8,  P8,          1,  1, 1, 1, 0 /* '\\' */,
    1,          1,   1, /* 0x40-0x5f */
    P32,                /* 0x60-0x7f */
    P32,        P32, P32,         P32 /* 0x80-0xff: UTF-8 bytes */};
#undef P8
#undef P32

int ddb_buf_json_str(ddb_buf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  size_t i = 0, run = ddb_json_plain(s, n);
  /* the common case: nothing to escape and room already there */
  if(run == n && ddb_buf_quoted_fast(b, s, n))
    return 0;
  if(ddb_buf_addc(b, '"'))
    return -1;
  for(;;) {
    unsigned char c;
    char esc[7];
    size_t elen = 2;
    /* the plain run up to the next character that needs an escape */
    ddb_buf_add(b, s + i, run);
    i += run;
    if(i >= n)
      break;
    c = (unsigned char)s[i++];
    esc[0] = '\\';
    switch(c) {
    case '"': esc[1] = '"'; break;
    case '\\': esc[1] = '\\'; break;
    case '\n': esc[1] = 'n'; break;
    case '\r': esc[1] = 'r'; break;
    case '\t': esc[1] = 't'; break;
    case '\b': esc[1] = 'b'; break;
    case '\f': esc[1] = 'f'; break;
    default:
      esc[1] = 'u';
      esc[2] = '0';
      esc[3] = '0';
      esc[4] = hex[c >> 4];
      esc[5] = hex[c & 15];
      elen = 6;
    }
    ddb_buf_add(b, esc, elen);
    run = ddb_json_plain(s + i, n - i);
  }
  return ddb_buf_addc(b, '"');
}

char *ddb_buf_take(ddb_buf *b, size_t *len) {
  char *p;
  if(b->failed) {
    ddb_buf_free(b);
    return NULL;
  }
  if(b->borrowed) {
    /* the caller's storage cannot be handed out: copy it */
    p = malloc(b->len + 1);
    if(!p)
      return NULL;
    memcpy(p, b->p, b->len);
    p[b->len] = 0;
    if(len)
      *len = b->len;
    ddb_buf_free(b);
    return p;
  }
  if(!b->p && buf_grow(b, 0))
    return NULL;
  p = b->p;
  if(len)
    *len = b->len;
  p[b->len] = 0;
  b->p = NULL;
  b->len = b->cap = 0;
  return p;
}

/* ------------------------------------------------------------------------
** Base64
*/
static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t ddb_base64_encode(const unsigned char *in, size_t n, char *out,
                         size_t cap) {
  size_t i, o = 0;
  if(cap < ((n + 2) / 3) * 4 + 1)
    return (size_t)-1;
  for(i = 0; i + 2 < n; i += 3) {
    unsigned v = (unsigned)in[i] << 16 | (unsigned)in[i + 1] << 8 | in[i + 2];
    out[o++] = b64[v >> 18];
    out[o++] = b64[(v >> 12) & 63];
    out[o++] = b64[(v >> 6) & 63];
    out[o++] = b64[v & 63];
  }
  if(i < n) {
    unsigned v = (unsigned)in[i] << 16;
    if(i + 1 < n)
      v |= (unsigned)in[i + 1] << 8;
    out[o++] = b64[v >> 18];
    out[o++] = b64[(v >> 12) & 63];
    out[o++] = (i + 1 < n) ? b64[(v >> 6) & 63] : '=';
    out[o++] = '=';
  }
  out[o] = 0;
  return o;
}

/* The 6-bit value of base64 digit c, or -1 when c is none. */
static int b64_value(unsigned char c) {
  if(c >= 'A' && c <= 'Z')
    return c - 'A';
  if(c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if(c >= '0' && c <= '9')
    return c - '0' + 52;
  if(c == '+')
    return 62;
  if(c == '/')
    return 63;
  return -1;
}

size_t ddb_base64_decode(const char *in, size_t n, unsigned char *out,
                         size_t cap) {
  size_t i, o = 0;
  unsigned v = 0;
  int bits = 0, pad = 0;
  for(i = 0; i < n; i++) {
    unsigned char c = (unsigned char)in[i];
    int d;
    if(c == '=') {
      pad++;
      continue;
    }
    if(pad)
      return (size_t)-1; /* data after padding */
    d = b64_value(c);
    if(d < 0)
      return (size_t)-1;
    v = (v << 6) | (unsigned)d;
    bits += 6;
    if(bits >= 8) {
      bits -= 8;
      if(o >= cap)
        return (size_t)-1;
      out[o++] = (unsigned char)((v >> bits) & 0xff);
    }
  }
  /* a lone 6-bit character cannot end a quantum; padding only completes
  ** a quantum of 2 or 3 characters */
  if(bits >= 6 || pad > 2 || (pad && (n % 4 != 0 || bits == 0)))
    return (size_t)-1;
  return o;
}

/* See ddb_client.h.  Decoded a quantum (4 characters) at a time into 3
** bytes: the same verdict as ddb_base64_decode over the whole text, since
** each full quantum stands alone, with padding only in the last. */
int ddb_base64_ok(const char *s, size_t n) {
  unsigned char q[3];
  size_t i;
  if(n == 0 || n % 4 != 0)
    return 0;
  for(i = 0; i < n; i += 4) {
    if(i + 4 < n && memchr(s + i, '=', 4))
      return 0; /* data after padding */
    if(ddb_base64_decode(s + i, 4, q, sizeof(q)) == (size_t)-1)
      return 0;
  }
  return 1;
}
