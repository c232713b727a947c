/*
** sigv4.c -- AWS Signature Version 4 (AWS4-HMAC-SHA256) for the requests
** of http.c (their headers are put together by signer.c).
**
**   canonical request = METHOD \n PATH \n QUERY \n
**                       name:value \n ... (sorted by lower-case name) \n
**                       name;name;... \n hex(SHA-256(body))
**   string to sign    = AWS4-HMAC-SHA256 \n YYYYMMDDTHHMMSSZ \n
**                       YYYYMMDD/region/service/aws4_request \n
**                       hex(SHA-256(canonical request))
**   signing key       = HMAC(HMAC(HMAC(HMAC("AWS4" secret, YYYYMMDD),
**                       region), service), "aws4_request")
**   Authorization     = AWS4-HMAC-SHA256 Credential=AKID/scope,
**                       SignedHeaders=name;name;..., Signature=hex(HMAC(
**                       signing key, string to sign))
**
** Cost.  The signing key changes once a day: a ddb_sigv4 keeps it, as an
** HMAC context already past its key block (crypto.c), for the scope
** (date, region, service) it was derived for, and derives it again only
** when the scope changes.  A DynamoDB request then costs the SHA-256 of
** its body, of a canonical request of a few hundred bytes and one HMAC of
** the string to sign, from a duplicate of the prepared key; nothing is
** formatted with printf, and the canonical request is hashed as it is
** written, through a small buffer (one libcrypto update per 512 bytes, not
** per piece), never built whole.  A SHA-256 block (64 bytes) costs about
** 2,000 instructions, and three of a request's ten are mostly the same
** from one request to the next: the first block of the canonical request
** (POST, the path, the Content-Type and the Host: the same for every
** request of a client), its second (the X-Amz-Date, to the second, and
** the X-Amz-Target or the start of the token: the same for the requests
** of one operation in one second) and the first block of the string to
** sign (the algorithm, the date and time, most of the scope: the same for
** the requests of one second).  The ddb_sigv4 keeps the hash state past
** each (creq_mid[0] and [1], and sts_mid, the signing key's HMAC past
** it) with the bytes it covers; a request that begins with the same bytes
** starts from a copy of it.
**
** Threads.  A ddb_sigv4 is shared by the requests of a client (http.c's
** reference-counted signer).  The cached key and the block states are
** read and replaced under the ddb_sigv4's own mutex, held for a
** comparison of 64 or 128 bytes and a copy of a state (or, once a day,
** the four HMACs of a derivation; about once a second, a block of the
** string to sign and one or two of the canonical request); the rest of
** the hashing happens outside it.
** fork(): the client's handlers take that mutex (ddb_sigv4_fork_lock)
** with the client's own locks, so a child forked while another thread
** signs finds it free and the cached key whole.
**
** Checked against AWS's published SigV4 vectors and against the
** specialised DynamoDB form in tests/unit/test_sigv4.c, and against
** botocore on every request the extension sends in
** tests/suites/22-sigv4.sh.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sigv4.h"

/* "YYYYMMDD/region/service": the cache's key and most of the scope. */
#define SCOPE_MAX 160
/* SignedHeaders of ddb_sigv4_sign(). */
#define SIGNED_MAX 1024

#define ALGORITHM  "AWS4-HMAC-SHA256"
#define TERMINATOR "aws4_request"
/* The signed headers of ddb_sigv4_sign_json, in order. */
#define JSON_SIGNED "content-type;host;x-amz-date;x-amz-target"
#define JSON_SIGNED_TOKEN                                                     \
  "content-type;host;x-amz-date;x-amz-security-token;x-amz-target"

/* The first block of SHA-256 (64 bytes), hashed once for the messages
** that begin with it (HEAD_LEN bytes; see "Cost" above). */
#define HEAD_LEN 64

struct ddb_sigv4 {
  char *access_key;      /* malloc'ed */
  unsigned char *secret; /* "AWS4" + secret key, malloc'ed, wiped */
  size_t secret_len;
  char *token;           /* folded session token or NULL; malloc'ed, wiped */
  pthread_mutex_t lock;  /* guards what follows */
  char scope[SCOPE_MAX]; /* what key was derived for */
  ddb_hmac_ctx *key;     /* keyed with the signing key of scope, or NULL */
  unsigned long derivations;
  /* the signing key's HMAC past the first HEAD_LEN bytes of the last
  ** string to sign (sts_head: the scope's date and the second of the
  ** request), or NULL; freed (wiped) with the key */
  unsigned char sts_head[HEAD_LEN];
  ddb_hmac_ctx *sts_mid;
  /* the SHA-256 past the first HEAD_LEN bytes (creq_mid[0]: the method,
  ** path, Content-Type and most of the Host) and past the first 2 x
  ** HEAD_LEN bytes (creq_mid[1], when has2: the rest of the Host, the
  ** X-Amz-Date, the start of the token or of the X-Amz-Target) of the last
  ** canonical request of ddb_sigv4_sign_json, which creq_head holds (wiped
  ** when freed: a part of the token), or NULL */
  unsigned char creq_head[2 * HEAD_LEN];
  ddb_sha256_ctx *creq_mid[2];
  int has2;
};

/* ------------------------------------------------------------------------
** Small helpers
*/

/* A bounded string being written: p[0..cap), always NUL-terminated;
** failed once something did not fit. */
typedef struct sbuf {
  char *p;
  size_t cap, len;
  int failed;
} sbuf;

/* Start writing to p[0..cap) (cap at least 1). */
static void sbuf_init(sbuf *b, char *p, size_t cap) {
  b->p = p;
  b->cap = cap;
  b->len = 0;
  b->failed = 0;
  p[0] = 0;
}

/* Append s[0..n); on overflow nothing is added and b is failed. */
static void sbuf_add(sbuf *b, const char *s, size_t n) {
  if(b->failed || n >= b->cap - b->len) {
    b->failed = 1;
    return;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
}

/* Append the string s. */
static void sbuf_str(sbuf *b, const char *s) {
  sbuf_add(b, s, strlen(s));
}

/* Is c a blank for SigV4's folding of header values (botocore's
** str.split(): space, tab, line ends, vertical tab, form feed)? */
static int is_blank(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

/* ASCII lower case of c. */
static unsigned char lower(unsigned char c) {
  return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

/* Compare header names a and b as their lower-case forms, bytewise:
** <0, 0 or >0. */
static int name_cmp(const char *a, const char *b) {
  const unsigned char *x = (const unsigned char *)a;
  const unsigned char *y = (const unsigned char *)b;
  while(*x && lower(*x) == lower(*y)) {
    x++;
    y++;
  }
  return (int)lower(*x) - (int)lower(*y);
}

/* Is d an X-Amz-Date, YYYYMMDDTHHMMSSZ (only the shape is checked)? */
static int is_amz_date(const char *d) {
  int i;
  for(i = 0; i < 16; i++) {
    char c = d[i];
    if(i == 8 ? c != 'T' : i == 15 ? c != 'Z' : (c < '0' || c > '9'))
      return 0;
  }
  return d[16] == 0;
}

/* Write n digits of v (zero-padded) at p. */
static void put_digits(char *p, int n, int v) {
  while(n-- > 0) {
    p[n] = (char)('0' + v % 10);
    v /= 10;
  }
}

/* ------------------------------------------------------------------------
** Credentials and the signing-key cache
*/

/* A malloc'ed copy of s with blanks trimmed at both ends and every run of
** them folded to one space; NULL on out of memory. */
static char *fold_dup(const char *s) {
  size_t n = strlen(s), k = 0;
  char *p = malloc(n + 1);
  int blank = 0;
  if(!p)
    return NULL;
  for(; *s; s++) {
    if(is_blank((unsigned char)*s)) {
      blank = 1;
      continue;
    }
    if(blank && k)
      p[k++] = ' ';
    blank = 0;
    p[k++] = *s;
  }
  p[k] = 0;
  return p;
}

/* See sigv4.h. */
ddb_sigv4 *ddb_sigv4_new(const char *access_key, const char *secret_key,
                         const char *token) {
  ddb_sigv4 *s = calloc(1, sizeof(*s));
  size_t n = strlen(secret_key), k;
  if(!s)
    return NULL;
  pthread_mutex_init(&s->lock, NULL);
  k = strlen(access_key);
  s->access_key = malloc(k + 1);
  s->secret = malloc(4 + n + 1);
  if(!s->access_key || !s->secret)
    goto fail;
  memcpy(s->access_key, access_key, k + 1);
  memcpy(s->secret, "AWS4", 4);
  memcpy(s->secret + 4, secret_key, n + 1);
  s->secret_len = 4 + n;
  if(token) {
    s->token = fold_dup(token);
    if(!s->token)
      goto fail;
    if(!s->token[0]) {
      /* an empty token is none */
      free(s->token);
      s->token = NULL;
    }
  }
  return s;

fail:
  ddb_sigv4_free(s);
  return NULL;
}

/* See sigv4.h. */
void ddb_sigv4_free(ddb_sigv4 *s) {
  if(!s)
    return;
  pthread_mutex_destroy(&s->lock);
  free(s->access_key);
  if(s->secret) {
    ddb_wipe(s->secret, s->secret_len);
    free(s->secret);
  }
  if(s->token) {
    ddb_wipe(s->token, strlen(s->token));
    free(s->token);
  }
  ddb_hmac_free(s->key); /* wiped (crypto.c) */
  ddb_hmac_free(s->sts_mid);
  ddb_sha256_free(s->creq_mid[0]);
  ddb_sha256_free(s->creq_mid[1]);
  ddb_wipe(s->creq_head, sizeof(s->creq_head));
  free(s);
}

/* See sigv4.h. */
const char *ddb_sigv4_token(const ddb_sigv4 *s) {
  return s->token;
}

/* See sigv4.h. */
unsigned long ddb_sigv4_derivations(ddb_sigv4 *s) {
  unsigned long n;
  pthread_mutex_lock(&s->lock);
  n = s->derivations;
  pthread_mutex_unlock(&s->lock);
  return n;
}

/* See sigv4.h. */
void ddb_sigv4_fork_lock(ddb_sigv4 *s) {
  pthread_mutex_lock(&s->lock);
}

/* See sigv4.h. */
void ddb_sigv4_fork_unlock(ddb_sigv4 *s) {
  pthread_mutex_unlock(&s->lock);
}

/* The signing key of s for date (8 characters), region and service, as
** an HMAC context keyed with it (ddb_hmac_free), or NULL when libcrypto
** fails.  The intermediate keys are wiped. */
static ddb_hmac_ctx *derive(const ddb_sigv4 *s, const char *date,
                            const char *region, const char *service) {
  unsigned char a[DDB_SHA256_LEN], b[DDB_SHA256_LEN];
  ddb_hmac_ctx *out = NULL;
  if(ddb_hmac_sha256(s->secret, s->secret_len, date, 8, a) == 0 &&
     ddb_hmac_sha256(a, sizeof(a), region, strlen(region), b) == 0 &&
     ddb_hmac_sha256(b, sizeof(b), service, strlen(service), a) == 0 &&
     ddb_hmac_sha256(a, sizeof(a), TERMINATOR, sizeof(TERMINATOR) - 1, b) ==
         0) /* kDate, kRegion, kService, kSigning */
    out = ddb_hmac_new(b, sizeof(b));
  ddb_wipe(a, sizeof(a));
  ddb_wipe(b, sizeof(b));
  return out;
}

/* A duplicate (ddb_hmac_free) of the HMAC context of the signing key for
** scope ("YYYYMMDD/region/service", shorter than SCOPE_MAX), derived again
** only when the cached one is for another scope, already past the first
** HEAD_LEN bytes of the string to sign sts[0..n) (n >= HEAD_LEN): from
** s->sts_mid when sts begins as the last one did, else hashed now and
** kept there.  NULL when out of memory (the cached key, if any, stays).
** Takes s->lock. */
static ddb_hmac_ctx *signing_key(ddb_sigv4 *s, const char *scope,
                                 const char *region, const char *service,
                                 const char *sts) {
  ddb_hmac_ctx *out = NULL, *mid;
  pthread_mutex_lock(&s->lock);
  if(!s->key || strcmp(s->scope, scope) != 0) {
    ddb_hmac_ctx *k = derive(s, scope, region, service);
    if(k) {
      ddb_hmac_free(s->key);
      ddb_hmac_free(s->sts_mid); /* of the old key */
      s->sts_mid = NULL;
      s->key = k;
      memcpy(s->scope, scope, strlen(scope) + 1);
      s->derivations++;
    } else {
      pthread_mutex_unlock(&s->lock);
      return NULL;
    }
  }
  if(s->sts_mid && memcmp(s->sts_head, sts, HEAD_LEN) == 0)
    out = ddb_hmac_dup(s->sts_mid);
  else if((mid = ddb_hmac_dup(s->key)) != NULL) {
    if(ddb_hmac_update(mid, sts, HEAD_LEN) == 0 &&
       (out = ddb_hmac_dup(mid)) != NULL) {
      ddb_hmac_free(s->sts_mid);
      s->sts_mid = mid;
      memcpy(s->sts_head, sts, HEAD_LEN);
    } else
      ddb_hmac_free(mid);
  }
  pthread_mutex_unlock(&s->lock);
  return out;
}

/* ------------------------------------------------------------------------
** Signing
*/

/* See sigv4.h.  The calendar is reckoned here (Howard Hinnant's
** civil_from_days), not by gmtime_r: glibc's takes its tzset_lock, which
** fork() copies as it was, so a child forked while another thread was
** signing would wait on it for ever. */
int ddb_sigv4_amz_date(time_t t, char out[DDB_SIGV4_DATE_LEN]) {
  int64_t days = (int64_t)t / 86400, secs = (int64_t)t % 86400, z, era, y;
  unsigned doe, yoe, doy, mp, d, m;
  if(secs < 0) {
    secs += 86400;
    days--;
  }
  z = days + 719468; /* days since 0000-03-01 */
  era = (z >= 0 ? z : z - 146096) / 146097;
  doe = (unsigned)(z - era * 146097);                          /* 0..146096 */
  yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* 0..399 */
  doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* 0..365 */
  mp = (5 * doy + 2) / 153;                                    /* March: 0 */
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = (int64_t)yoe + era * 400 + (m <= 2);
  if(y < 0 || y > 9999)
    return -1;
  put_digits(out, 4, (int)y);
  put_digits(out + 4, 2, (int)m);
  put_digits(out + 6, 2, (int)d);
  out[8] = 'T';
  put_digits(out + 9, 2, (int)(secs / 3600));
  put_digits(out + 11, 2, (int)(secs / 60 % 60));
  put_digits(out + 13, 2, (int)(secs % 60));
  out[15] = 'Z';
  out[16] = 0;
  return 0;
}

/* A hash fed as it is written: pieces gather in buf and go to libcrypto
** 512 bytes at a time (an update per piece would cost more than the
** hashing of a short one).  failed once libcrypto failed. */
typedef struct hash_writer {
  ddb_sha256_ctx *h; /* NULL: failed */
  unsigned char buf[512];
  size_t n;
  int failed;
  ddb_sigv4 *head; /* whose creq_mid the first HEAD_LEN bytes may come
                      from (NULL: none), until the first flush */
} hash_writer;

/* Start w (a new SHA-256); head: see hash_writer. */
static void hw_init(hash_writer *w, ddb_sigv4 *head) {
  w->h = ddb_sha256_new();
  w->n = 0;
  w->failed = w->h == NULL;
  w->head = head;
}

/* Keep the state of w's hash, past the first (k + 1) x HEAD_LEN bytes of
** buf, as w->head's creq_mid[k] (lock held). */
static void hw_keep(hash_writer *w, int k) {
  ddb_sigv4 *s = w->head;
  if(!s->creq_mid[k])
    s->creq_mid[k] = ddb_sha256_new();
  if(s->creq_mid[k]) {
    ddb_sha256_copy(s->creq_mid[k], w->h);
    memcpy(s->creq_head + k * HEAD_LEN, w->buf + k * HEAD_LEN, HEAD_LEN);
  }
  if(k == 0)
    s->has2 = 0; /* of another first block */
  else
    s->has2 = s->creq_mid[1] != NULL;
}

/* The first flush of w, with HEAD_LEN bytes or more: the hash of its
** first one or two blocks from w->head's creq_mid when they are the same
** as the last time, else hashed and kept there (under its lock).
** Returns how many bytes of buf were hashed. */
static size_t hw_head(hash_writer *w) {
  ddb_sigv4 *s = w->head;
  int two = w->n >= 2 * HEAD_LEN;
  size_t done = 0;
  pthread_mutex_lock(&s->lock);
  if(two && s->has2 && memcmp(s->creq_head, w->buf, 2 * HEAD_LEN) == 0) {
    ddb_sha256_copy(w->h, s->creq_mid[1]);
    done = 2 * HEAD_LEN;
  } else {
    if(s->creq_mid[0] && memcmp(s->creq_head, w->buf, HEAD_LEN) == 0)
      ddb_sha256_copy(w->h, s->creq_mid[0]);
    else if(ddb_sha256_update(w->h, w->buf, HEAD_LEN) == 0)
      hw_keep(w, 0);
    else
      w->failed = 1;
    done = HEAD_LEN;
    if(!w->failed && two) {
      if(ddb_sha256_update(w->h, w->buf + HEAD_LEN, HEAD_LEN) == 0)
        hw_keep(w, 1);
      else
        w->failed = 1;
      done = 2 * HEAD_LEN;
    }
  }
  pthread_mutex_unlock(&s->lock);
  return done;
}

/* Hand the buffered bytes of w to the hash. */
static void hw_flush(hash_writer *w) {
  size_t done = 0;
  if(!w->failed && w->head && w->n >= HEAD_LEN)
    done = hw_head(w);
  w->head = NULL;
  if(!w->failed && w->n > done &&
     ddb_sha256_update(w->h, w->buf + done, w->n - done))
    w->failed = 1;
  w->n = 0;
}

/* Add p[0..n). */
static void hw_add(hash_writer *w, const void *p, size_t n) {
  if(n > sizeof(w->buf) - w->n) {
    hw_flush(w);
    if(n >= sizeof(w->buf)) {
      if(!w->failed && ddb_sha256_update(w->h, p, n))
        w->failed = 1;
      return;
    }
  }
  memcpy(w->buf + w->n, p, n);
  w->n += n;
}

/* Add byte c. */
static void hw_byte(hash_writer *w, unsigned char c) {
  if(w->n == sizeof(w->buf))
    hw_flush(w);
  w->buf[w->n++] = c;
}

/* Add the string s. */
static void hw_str(hash_writer *w, const char *s) {
  hw_add(w, s, strlen(s));
}

/* Add the string literal lit. */
#define HW_LIT(w, lit) hw_add((w), (lit), sizeof(lit) - 1)

/* Finish w: the digest in out, the hash freed.  Returns 0, or
** DDB_SIGV4_NOMEM when libcrypto failed on the way. */
static int hw_final(hash_writer *w, unsigned char out[DDB_SHA256_LEN]) {
  hw_flush(w);
  if(!w->failed && ddb_sha256_final(w->h, out))
    w->failed = 1;
  ddb_sha256_free(w->h);
  w->h = NULL;
  return w->failed ? DDB_SIGV4_NOMEM : 0;
}

/* Add value as SigV4 canonicalises it: no blanks at either end, each run
** of them one space. */
static void hw_folded(hash_writer *w, const char *value) {
  const unsigned char *v = (const unsigned char *)value;
  int blank = 0, any = 0;
  for(; *v; v++) {
    if(is_blank(*v)) {
      blank = 1;
      continue;
    }
    if(blank && any)
      hw_byte(w, ' ');
    blank = 0;
    any = 1;
    hw_byte(w, *v);
  }
}

/* The second half of every signature: from the SHA-256 of the canonical
** request creq, the string to sign, its HMAC with the (cached) signing
** key, and the Authorization value in auth[0..cap).  amz_date has been
** checked.  Returns 0, -1 when something does not fit, or
** DDB_SIGV4_NOMEM. */
static int finish(ddb_sigv4 *s, const char *region, const char *service,
                  const char *amz_date,
                  const unsigned char creq[DDB_SHA256_LEN],
                  const char *signed_headers, char *auth, size_t cap) {
  char scope[SCOPE_MAX], hex[2 * DDB_SHA256_LEN + 1];
  unsigned char sig[DDB_SHA256_LEN];
  /* the string to sign: 16 + 1 + 16 + 1 + scope + 14 + 64 bytes */
  char sts[sizeof(ALGORITHM "\n") + 16 + 1 + SCOPE_MAX +
           sizeof("/" TERMINATOR "\n") + 2 * DDB_SHA256_LEN];
  ddb_hmac_ctx *m;
  sbuf b;
  int rc;

  /* the scope without its terminator: YYYYMMDD/region/service */
  sbuf_init(&b, scope, sizeof(scope));
  sbuf_add(&b, amz_date, 8);
  sbuf_add(&b, "/", 1);
  sbuf_str(&b, region);
  sbuf_add(&b, "/", 1);
  sbuf_str(&b, service);
  if(b.failed || !cap)
    return -1;

  sbuf_init(&b, sts, sizeof(sts));
  sbuf_str(&b, ALGORITHM "\n");
  sbuf_add(&b, amz_date, 16);
  sbuf_add(&b, "\n", 1);
  sbuf_str(&b, scope);
  sbuf_str(&b, "/" TERMINATOR "\n");
  ddb_hex(creq, DDB_SHA256_LEN, hex);
  sbuf_add(&b, hex, 2 * DDB_SHA256_LEN);
  if(b.failed)
    return -1;
  if(b.len < HEAD_LEN) /* never: the algorithm, date and scope are 77 */
    return -1;
  m = signing_key(s, scope, region, service, sts);
  if(!m)
    return DDB_SIGV4_NOMEM;
  rc = ddb_hmac_update(m, sts + HEAD_LEN, b.len - HEAD_LEN) ||
       ddb_hmac_final(m, sig);
  ddb_hmac_free(m);
  if(rc)
    return DDB_SIGV4_NOMEM;
  ddb_hex(sig, sizeof(sig), hex);

  sbuf_init(&b, auth, cap);
  sbuf_str(&b, ALGORITHM " Credential=");
  sbuf_str(&b, s->access_key);
  sbuf_add(&b, "/", 1);
  sbuf_str(&b, scope);
  sbuf_str(&b, "/" TERMINATOR ", SignedHeaders=");
  sbuf_str(&b, signed_headers);
  sbuf_str(&b, ", Signature=");
  sbuf_add(&b, hex, 2 * DDB_SHA256_LEN);
  return b.failed ? -1 : 0;
}

/* The hex SHA-256 of body[0..n) (the payload hash) in hex.  Returns 0 or
** DDB_SIGV4_NOMEM. */
static int payload_hash(const void *body, size_t n,
                        char hex[2 * DDB_SHA256_LEN + 1]) {
  unsigned char d[DDB_SHA256_LEN];
  if(ddb_sha256(body, n, d))
    return DDB_SIGV4_NOMEM;
  ddb_hex(d, sizeof(d), hex);
  return 0;
}

/* See sigv4.h. */
int ddb_sigv4_sign_json(ddb_sigv4 *s, const char *region, const char *service,
                        const char *amz_date, const char *path,
                        const char *content_type, const char *host,
                        const char *target, const void *body, size_t n,
                        char *auth, size_t cap) {
  const char *signed_headers = s->token ? JSON_SIGNED_TOKEN : JSON_SIGNED;
  char hex[2 * DDB_SHA256_LEN + 1];
  unsigned char creq[DDB_SHA256_LEN];
  hash_writer w;

  if(!is_amz_date(amz_date))
    return -1;
  if(payload_hash(body, n, hex))
    return DDB_SIGV4_NOMEM;
  /* the canonical request, hashed as it is written (its first block
  ** hashed once while it stays the same) */
  hw_init(&w, s);
  HW_LIT(&w, "POST\n");
  hw_str(&w, path);
  HW_LIT(&w, "\n\ncontent-type:");
  hw_str(&w, content_type);
  HW_LIT(&w, "\nhost:");
  hw_str(&w, host);
  HW_LIT(&w, "\nx-amz-date:");
  hw_add(&w, amz_date, 16);
  if(s->token) {
    HW_LIT(&w, "\nx-amz-security-token:");
    hw_str(&w, s->token);
  }
  HW_LIT(&w, "\nx-amz-target:");
  hw_str(&w, target);
  HW_LIT(&w, "\n\n");
  hw_str(&w, signed_headers);
  HW_LIT(&w, "\n");
  hw_add(&w, hex, 2 * DDB_SHA256_LEN);
  if(hw_final(&w, creq))
    return DDB_SIGV4_NOMEM;
  return finish(s, region, service, amz_date, creq, signed_headers, auth, cap);
}

/* See sigv4.h. */
int ddb_sigv4_sign(ddb_sigv4 *s, const char *region, const char *service,
                   const char *amz_date, const char *method, const char *path,
                   const char *query, const ddb_sigv4_header *hdrs, size_t nh,
                   const void *body, size_t n, char *auth, size_t cap) {
  size_t order[DDB_SIGV4_HEADERS_MAX], i, j, t;
  char signed_headers[SIGNED_MAX], hex[2 * DDB_SHA256_LEN + 1];
  unsigned char creq[DDB_SHA256_LEN];
  hash_writer w;
  sbuf sh;
  const char *c;

  if(nh > DDB_SIGV4_HEADERS_MAX || !is_amz_date(amz_date))
    return -1;
  /* sort by lower-case name; insertion sort is stable, which keeps the
  ** values of a repeated name in their order */
  for(i = 0; i < nh; i++) {
    t = i;
    for(j = i; j > 0 && name_cmp(hdrs[order[j - 1]].name, hdrs[t].name) > 0;
        j--)
      order[j] = order[j - 1];
    order[j] = t;
  }
  /* the signed headers first: a list too long fails before any hashing */
  sbuf_init(&sh, signed_headers, sizeof(signed_headers));
  for(i = 0; i < nh; i++) {
    const ddb_sigv4_header *hd = &hdrs[order[i]];
    if(i > 0 && name_cmp(hdrs[order[i - 1]].name, hd->name) == 0)
      continue;
    if(i > 0)
      sbuf_add(&sh, ";", 1);
    for(c = hd->name; *c; c++) {
      char l = (char)lower((unsigned char)*c);
      sbuf_add(&sh, &l, 1);
    }
  }
  if(sh.failed)
    return -1;
  if(payload_hash(body, n, hex))
    return DDB_SIGV4_NOMEM;

  hw_init(&w, NULL);
  hw_str(&w, method);
  hw_byte(&w, '\n');
  hw_str(&w, path);
  hw_byte(&w, '\n');
  hw_str(&w, query);
  hw_byte(&w, '\n');
  for(i = 0; i < nh; i++) {
    const ddb_sigv4_header *hd = &hdrs[order[i]];
    if(i > 0 && name_cmp(hdrs[order[i - 1]].name, hd->name) == 0)
      hw_byte(&w, ','); /* a repeated name: one line, values joined */
    else {
      if(i > 0)
        hw_byte(&w, '\n');
      for(c = hd->name; *c; c++)
        hw_byte(&w, lower((unsigned char)*c));
      hw_byte(&w, ':');
    }
    hw_folded(&w, hd->value);
  }
  hw_str(&w, nh ? "\n\n" : "\n");
  hw_str(&w, signed_headers);
  hw_byte(&w, '\n');
  hw_add(&w, hex, 2 * DDB_SHA256_LEN);
  if(hw_final(&w, creq))
    return DDB_SIGV4_NOMEM;
  return finish(s, region, service, amz_date, creq, signed_headers, auth, cap);
}

/* ------------------------------------------------------------------------
** The canonical URI
*/

/* Is c one of RFC 3986's unreserved characters (kept as they are in a
** canonical path)? */
static int is_unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
         c == '~';
}

/* See sigv4.h. */
int ddb_sigv4_uri_encode(const char *path, char *out, size_t cap) {
  static const char hexd[] = "0123456789ABCDEF";
  const char *p;
  char pct[3];
  sbuf b;
  if(!cap)
    return -1;
  sbuf_init(&b, out, cap);
  for(p = path; *p; p++) {
    unsigned char ch = (unsigned char)*p;
    if(ch == '/' || is_unreserved(ch))
      sbuf_add(&b, p, 1);
    else {
      pct[0] = '%';
      pct[1] = hexd[ch >> 4];
      pct[2] = hexd[ch & 15];
      sbuf_add(&b, pct, 3);
    }
  }
  return b.failed ? -1 : 0;
}
