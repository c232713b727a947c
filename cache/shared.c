/*
** shared.c -- the shared cache tier: item entries and query pages in
** Redis, between the process's own cache and DynamoDB (interface:
** shared.h, ddb_cache.h; the protocol: resp.c).
**
**     process cache  --miss-->  Redis  --miss-->  DynamoDB
**          ^                     ^                    |
**          +------ fill ---------+------ fill --------+
**
** Names.  Every entry is a Redis string under
**     ddbc1:HEX(HMAC-SHA256(K_names, kind | logical key))
** where K_names = HMAC-SHA256(root, "names") and root is the client's
** ddb_client_tier_key: an HMAC of the endpoint, region, access key id,
** secret key and session token.  Kinds: I an item (logical key: the
** table and the item's key), Q a query page (the request body), G a
** table's generation (the table).  So no table or key name is readable,
** and other credentials name other keys.
**
** Values.  version (1 byte, 1) | nonce (12 random bytes) | AES-256-GCM
** ciphertext | tag (16), under K_values = HMAC-SHA256(root, "values"),
** with the Redis key's name as associated data: a value moved to another
** key, changed in any byte, or sealed under other credentials fails
** authentication and is a miss (shared_auth_failures).  The plaintext:
**     kind (1) | flags (1) | filled (8, ms of the wall clock) |
**     gen (8) | payload
** flags: 1 an item (payload: its DynamoDB JSON), 0 "no such item", 2 a
** tombstone; a page's payload is the JSON of DynamoDB's answer, decoded by
** the client's parser of answers (ddb_page_from_json).  A reader takes an
** entry only when it is younger than the reader's own TTL (filled is
** inside the sealed value).  Bound to its key, not to a version: a value
** put back under its key is taken within that TTL (docs/trust-model.md).
**
** Coherence.  A write through this process (ddbc_shared_note_write, from
** ddbc_note_write) SETs the item's entry to the item as written (or "no
** such item"), and replaces the table's generation G with a new random
** number.  Every page holds the generation it was read under and is
** taken only while G still holds it: an MGET of G and the page, one round
** trip.  (A random generation, not a counter, so that G evicted and made
** again can never match an old page: a missing G is made anew with SET
** NX, and pages read without one are misses.)  Reads fill items with SET
** NX: the entry a write left is never overwritten by a read that raced
** with it.  A write whose result is unknown (it failed, maybe applied; an
** update whose answer holds no image) leaves a tombstone that refuses
** fills for DDBC_SHARED_TOMBSTONE seconds.  Writers that bypass the
** extension (or use other credentials) leave entries stale until their
** TTL, as with DAX.
**
** The connections to Redis (the tiers, their pools, backoff and round
** trips, the fork() handlers) are redis_conn.c's; this file is what the
** tier stores and fetches: names, sealed values, generations, items and
** pages, and its counters.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "resp.h"
#include "shared.h"

#define NONCE_LEN 12
#define TAG_LEN   16
#define HEAD_LEN  18 /* kind, flags, filled, gen */
#define VERSION   1

/* flags of a value */
#define FLAG_ITEM      1
#define FLAG_TOMBSTONE 2

/* The counters of what the tier finds and stores (atomic); the
** connections' are redis_conn.c's. */
static struct { uint64_t hits, misses, fills, auth_failures; } st;

#define COUNT(field, n)                                                       \
  __atomic_add_fetch(&st.field, (uint64_t)(n), __ATOMIC_RELAXED)

/* ------------------------------------------------------------------------
** The clock, the counters
*/
double ddbc_shared_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void ddbc_shared_count_found(uint64_t hits, uint64_t fills) {
  COUNT(hits, hits);
  COUNT(fills, fills);
}

void ddbc_shared_stats_get(ddbc_stats *out) {
  out->shared_hits = __atomic_load_n(&st.hits, __ATOMIC_RELAXED);
  out->shared_misses = __atomic_load_n(&st.misses, __ATOMIC_RELAXED);
  out->shared_fills = __atomic_load_n(&st.fills, __ATOMIC_RELAXED);
  out->shared_auth_failures =
      __atomic_load_n(&st.auth_failures, __ATOMIC_RELAXED);
  ddbc_shared_conn_stats(out);
}

/* ------------------------------------------------------------------------
** Names and sealed values
*/

/* K_names or K_values of root (label "names" or "values") in out. */
static void derive(const unsigned char *root, const char *label,
                   unsigned char out[32]) {
  unsigned int n = 32;
  HMAC(EVP_sha256(), root, DDB_TIER_KEY_LEN, (const unsigned char *)label,
       strlen(label), out, &n);
}

void ddbc_shared_name(const unsigned char *root, char kind, const char *tail,
                      size_t len, char *out) {
  static const char hex[] = "0123456789abcdef";
  unsigned char k[32], mac[32];
  unsigned int n = 32;
  unsigned char *msg = malloc(len + 1);
  int i;
  derive(root, "names", k);
  if(msg) {
    msg[0] = (unsigned char)kind;
    memcpy(msg + 1, tail, len);
    HMAC(EVP_sha256(), k, 32, msg, len + 1, mac, &n);
    free(msg);
  } else {
    memset(mac, 0, sizeof(mac)); /* out of memory: a name nobody fills */
  }
  OPENSSL_cleanse(k, sizeof(k));
  memcpy(out, "ddbc1:", 6);
  for(i = 0; i < 32; i++) {
    out[6 + 2 * i] = hex[mac[i] >> 4];
    out[6 + 2 * i + 1] = hex[mac[i] & 15];
  }
  out[DDBC_SHARED_NAME_LEN] = 0;
}

int ddbc_shared_seal(const unsigned char *root, const char *name,
                     const unsigned char *plain, size_t n, ddb_buf *out) {
  unsigned char k[32], nonce[NONCE_LEN], tag[TAG_LEN];
  EVP_CIPHER_CTX *ctx = NULL;
  unsigned char *ct = NULL;
  int len = 0, fin = 0, rc = -1;

  if(n > DDBC_SHARED_MAX_VALUE)
    return -1;
  derive(root, "values", k);
  if(RAND_bytes(nonce, sizeof(nonce)) != 1)
    goto fail;
  ct = malloc(n + 16);
  ctx = EVP_CIPHER_CTX_new();
  if(!ct || !ctx ||
     EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, NONCE_LEN, NULL) != 1 ||
     EVP_EncryptInit_ex(ctx, NULL, NULL, k, nonce) != 1 ||
     EVP_EncryptUpdate(ctx, NULL, &len, (const unsigned char *)name,
                       (int)strlen(name)) != 1 ||
     EVP_EncryptUpdate(ctx, ct, &len, plain, (int)n) != 1 ||
     EVP_EncryptFinal_ex(ctx, ct + len, &fin) != 1 ||
     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG_LEN, tag) != 1)
    goto fail;
  ddb_buf_addc(out, VERSION);
  ddb_buf_add(out, nonce, sizeof(nonce));
  ddb_buf_add(out, ct, (size_t)(len + fin));
  ddb_buf_add(out, tag, sizeof(tag));
  rc = out->failed ? -1 : 0;
fail:
  OPENSSL_cleanse(k, sizeof(k));
  EVP_CIPHER_CTX_free(ctx);
  free(ct);
  return rc;
}

int ddbc_shared_open_value(const unsigned char *root, const char *name,
                           const unsigned char *v, size_t vn, ddb_buf *out) {
  unsigned char k[32];
  EVP_CIPHER_CTX *ctx = NULL;
  unsigned char *pt = NULL;
  size_t n;
  int len = 0, fin = 0, rc = -1;

  if(vn < 1 + NONCE_LEN + TAG_LEN || v[0] != VERSION ||
     vn > DDBC_SHARED_MAX_VALUE + 1 + NONCE_LEN + TAG_LEN)
    return -1;
  n = vn - 1 - NONCE_LEN - TAG_LEN;
  derive(root, "values", k);
  pt = malloc(n + 16);
  ctx = EVP_CIPHER_CTX_new();
  if(!pt || !ctx ||
     EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, NONCE_LEN, NULL) != 1 ||
     EVP_DecryptInit_ex(ctx, NULL, NULL, k, v + 1) != 1 ||
     EVP_DecryptUpdate(ctx, NULL, &len, (const unsigned char *)name,
                       (int)strlen(name)) != 1 ||
     EVP_DecryptUpdate(ctx, pt, &len, v + 1 + NONCE_LEN, (int)n) != 1 ||
     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG_LEN,
                         (void *)(v + vn - TAG_LEN)) != 1 ||
     EVP_DecryptFinal_ex(ctx, pt + len, &fin) != 1)
    goto fail; /* the tag does not match: not ours, or changed */
  ddb_buf_add(out, pt, (size_t)(len + fin));
  rc = out->failed ? -1 : 0;
fail:
  OPENSSL_cleanse(k, sizeof(k));
  EVP_CIPHER_CTX_free(ctx);
  if(pt) {
    OPENSSL_cleanse(pt, n);
    free(pt);
  }
  return rc;
}

/* See shared.h. */
void ddbc_shared_put64(unsigned char *p, uint64_t u) {
  int i;
  for(i = 7; i >= 0; i--) {
    p[i] = (unsigned char)u;
    u >>= 8;
  }
}

/* See shared.h. */
uint64_t ddbc_shared_get64(const unsigned char *p) {
  uint64_t u = 0;
  int i;
  for(i = 0; i < 8; i++)
    u = u << 8 | p[i];
  return u;
}

/* The plaintext head of a value: kind, flags, filled (now), gen. */
static void head_put(ddb_buf *b, char kind, int flags, double now,
                     uint64_t gen) {
  unsigned char h[HEAD_LEN];
  h[0] = (unsigned char)kind;
  h[1] = (unsigned char)flags;
  ddbc_shared_put64(h + 2, (uint64_t)(now * 1000));
  ddbc_shared_put64(h + 10, gen);
  ddb_buf_add(b, h, sizeof(h));
}

/* A value read under name: opened and its head checked (kind; younger
** than max_age at now).  Returns 1 with *flags, *gen, *age and the
** payload in plain (from offset HEAD_LEN); 0 when too old (a miss); -1
** when it fails authentication or is malformed (counted). */
static int value_open(const unsigned char *root, const char *name, char kind,
                      const ddbc_resp_node *v, double max_age, double now,
                      ddb_buf *plain, int *flags, uint64_t *gen, double *age) {
  const unsigned char *h;
  double filled;
  if(ddbc_shared_open_value(root, name, (const unsigned char *)v->str, v->len,
                            plain) ||
     plain->len < HEAD_LEN ||
     (unsigned char)plain->p[0] != (unsigned char)kind ||
     (plain->p[1] & ~(FLAG_ITEM | FLAG_TOMBSTONE)) != 0) {
    COUNT(auth_failures, 1);
    return -1;
  }
  h = (const unsigned char *)plain->p;
  *flags = h[1];
  filled = (double)ddbc_shared_get64(h + 2) / 1000;
  *gen = ddbc_shared_get64(h + 10);
  *age = now - filled;
  if(*age < -60 || *age > max_age) /* (a minute of clock skew) */
    return 0;
  if(*age < 0)
    *age = 0;
  return 1;
}

/* A new random generation (never 0). */
static uint64_t new_gen(void) {
  unsigned char r[8];
  uint64_t g = 0;
  while(g == 0) {
    if(RAND_bytes(r, sizeof(r)) != 1)
      return (uint64_t)ddbc_resp_clock() * 1000003u | 1;
    g = ddbc_shared_get64(r);
  }
  return g;
}

/* Parse a generation's text (decimal, 1 to 20 digits, not 0). */
uint64_t ddbc_shared_gen_parse(const ddbc_resp_node *v) {
  uint64_t g = 0;
  size_t i;
  if(v->type != DDBC_RESP_BULK || v->len == 0 || v->len > 20)
    return 0;
  for(i = 0; i < v->len; i++) {
    if(v->str[i] < '0' || v->str[i] > '9')
      return 0;
    g = g * 10 + (uint64_t)(v->str[i] - '0');
  }
  return g;
}

/* See shared.h: the Redis key of the generation of table. */
void ddbc_shared_gen_name(const unsigned char *root, const char *table,
                          char *out) {
  ddb_buf t;
  ddb_buf_init(&t, 4096);
  ddb_buf_add_part(&t, table, strlen(table));
  ddbc_shared_name(root, 'G', t.p ? t.p : "", t.len, out);
  ddb_buf_free(&t);
}

/* Append "SET name value PX ms [NX]" to b. */
static void cmd_set(ddb_buf *b, const char *name, const ddb_buf *value,
                    double ttl, int nx) {
  char px[32];
  long long ms = (long long)(ttl * 1000);
  snprintf(px, sizeof(px), "%lld", ms > 0 ? ms : 1);
  ddbc_resp_cmd(b, nx ? 6 : 5);
  ddbc_resp_args(b, "SET");
  ddbc_resp_args(b, name);
  ddbc_resp_arg(b, value->p ? value->p : "", value->len);
  ddbc_resp_args(b, "PX");
  ddbc_resp_args(b, px);
  if(nx)
    ddbc_resp_args(b, "NX");
}

/* Count the SET replies rp[0..n) that stored (+OK) as fills; an error
** answer (OOM: Redis full) counts one error. */
static void count_sets(const ddbc_resp_reply *rp, int n) {
  int i, stored = 0, failed = 0;
  for(i = 0; i < n; i++) {
    const ddbc_resp_node *x = &rp[i].node[0];
    if(x->type == DDBC_RESP_STATUS)
      stored++;
    else if(x->type != DDBC_RESP_NIL)
      failed = 1;
  }
  COUNT(fills, stored);
  if(failed)
    ddbc_shared_count_error();
}

/* ------------------------------------------------------------------------
** Items
*/
/* The next MGET of item entries into cmds: the names (into names) of up
** to DDBC_SHARED_MGET of tails[*start..n) that are not NULL, their indexes
** into which.  *start moves past them.  Returns how many (0: none left). */
static size_t items_mget(const unsigned char *root, char *const *tails,
                         const size_t *lens, size_t n, size_t *start,
                         size_t *which,
                         char (*names)[DDBC_SHARED_NAME_LEN + 1],
                         ddb_buf *cmds) {
  size_t i, m = 0, k;
  ddb_buf_reset(cmds);
  for(i = *start; i < n && m < DDBC_SHARED_MGET; i++)
    if(tails[i])
      which[m++] = i;
  *start = i;
  if(m == 0)
    return 0;
  ddbc_resp_cmd(cmds, (int)m + 1);
  ddbc_resp_args(cmds, "MGET");
  for(k = 0; k < m; k++) {
    ddbc_shared_name(root, 'I', tails[which[k]], lens[which[k]], names[k]);
    ddbc_resp_args(cmds, names[k]);
  }
  return m;
}

/* The item entry v that Redis holds under name, read at now: 1 on a hit
** (*found the item, a new reference, or NULL for "no such item"; *age its
** age), else 0 (nothing, too old, a tombstone, or a value that is not
** ours: each counted).  plain is scratch. */
int ddbc_shared_item_take(const unsigned char *root, const char *name,
                          const ddbc_resp_node *v, double max_age, double now,
                          ddb_buf *plain, ddb_item **found, double *age) {
  ddb_error err;
  uint64_t gen;
  int flags, ok;
  if(v->type == DDBC_RESP_NIL) {
    COUNT(misses, 1);
    return 0;
  }
  if(v->type != DDBC_RESP_BULK) {
    ddbc_shared_count_error();
    return 0;
  }
  ddb_buf_reset(plain);
  ok = value_open(root, name, 'I', v, max_age, now, plain, &flags, &gen, age);
  if(ok <= 0 || (flags & FLAG_TOMBSTONE)) {
    if(ok >= 0)
      COUNT(misses, 1);
    return 0;
  }
  *found = NULL;
  if(flags & FLAG_ITEM) {
    ddb_error_clear(&err);
    if(ddb_item_from_typed_json(plain->p + HEAD_LEN, plain->len - HEAD_LEN,
                                found, &err)) {
      *found = NULL;
      COUNT(auth_failures, 1); /* sealed by us, yet not an item */
      return 0;
    }
  }
  return 1;
}

/* See shared.h: an MGET of up to DDBC_SHARED_MGET names a round trip,
** each value taken (item_take); a Redis that fails makes the rest
** misses. */
void ddbc_shared_get_items(ddbc_shared *sh, ddb_client *c, const char *table,
                           char *const *tails, const size_t *lens, size_t n,
                           double max_age, double now, ddb_item **found,
                           unsigned char *hit, double *age) {
  const unsigned char *root = ddb_client_tier_key(c);
  char(*names)[DDBC_SHARED_NAME_LEN + 1] = NULL;
  size_t *which = NULL;
  size_t i, start;
  ddb_buf cmds, plain;

  for(i = 0; i < n; i++)
    hit[i] = 0;
  names = malloc((n ? n : 1) * sizeof(*names));
  which = malloc((n ? n : 1) * sizeof(*which));
  ddb_buf_init(&cmds, DDBC_RESP_MAX_REPLY);
  ddb_buf_init(&plain, DDBC_SHARED_MAX_VALUE + 64);
  if(!names || !which)
    goto done;
  for(start = 0; start < n;) {
    ddbc_resp_reply rp;
    size_t m, k, hits = 0;
    double ms = 0;
    m = items_mget(root, tails, lens, n, &start, which, names, &cmds);
    if(m == 0)
      break;
    if(ddbc_shared_round_trip(sh, &cmds, &rp, 1, (int)m + 1, table, &ms))
      goto done; /* Redis failed: everything left is a miss */
    if(rp.node[0].type != DDBC_RESP_ARRAY ||
       rp.node[0].integer != (long long)m || rp.n_node != (int)m + 1)
      ddbc_shared_count_error(); /* a wrong type: a miss */
    else
      for(k = 0; k < m; k++) {
        size_t at = which[k];
        double a;
        if(!ddbc_shared_item_take(root, names[k], &rp.node[k + 1], max_age,
                                  now, &plain, &found[at], &a)) {
          /* present but not to be taken: not a lease's to fill */
          if(rp.node[k + 1].type != DDBC_RESP_NIL)
            hit[at] = 2;
          continue;
        }
        hit[at] = 1;
        if(age)
          age[at] = a;
        hits++;
      }
    COUNT(hits, hits);
    ddbc_shared_log("shared_get", table, (int)hits, ms);
    ddbc_resp_reply_free(&rp);
  }
done:
  if(plain.p)
    OPENSSL_cleanse(plain.p, plain.len);
  ddb_buf_free(&plain);
  ddb_buf_free(&cmds);
  free(names);
  free(which);
}

/* Append the sealed value of an item entry (item NULL: none; flags) to
** v under name.  Returns 0 or -1 (too large, or out of memory). */
static int item_value(const unsigned char *root, const char *name,
                      const ddb_item *item, int flags, double now,
                      ddb_buf *v) {
  ddb_buf plain;
  int rc;
  ddb_buf_init(&plain, DDBC_SHARED_MAX_VALUE);
  head_put(&plain, 'I', item ? FLAG_ITEM : flags, now, 0);
  if(item && ddb_item_to_typed_json(item, &plain))
    plain.failed = 1;
  rc = plain.failed ? -1
                    : ddbc_shared_seal(root, name, (unsigned char *)plain.p,
                                       plain.len, v);
  if(plain.p)
    OPENSSL_cleanse(plain.p, plain.len);
  ddb_buf_free(&plain);
  return rc;
}

int ddbc_shared_item_value(const unsigned char *root, const char *name,
                           const ddb_item *item, double now, ddb_buf *v) {
  return item_value(root, name, item, 0, now, v);
}

void ddbc_shared_fill_items(ddbc_shared *sh, ddb_client *c, const char *table,
                            char *const *tails, const size_t *lens, size_t n,
                            ddb_item *const *items, double ttl, double now) {
  const unsigned char *root = ddb_client_tier_key(c);
  char name[DDBC_SHARED_NAME_LEN + 1];
  ddbc_resp_reply *rp = NULL;
  ddb_buf cmds, v;
  size_t i, start;

  ddb_buf_init(&cmds, DDBC_RESP_MAX_REPLY);
  ddb_buf_init(&v, DDBC_SHARED_MAX_VALUE + 64);
  rp = calloc(DDBC_SHARED_MGET, sizeof(*rp));
  for(start = 0; rp && start < n;) {
    int m = 0, k;
    double ms = 0;
    ddb_buf_reset(&cmds);
    for(i = start; i < n && m < DDBC_SHARED_MGET; i++) {
      if(!tails[i])
        continue;
      ddbc_shared_name(root, 'I', tails[i], lens[i], name);
      ddb_buf_reset(&v);
      if(item_value(root, name, items[i], 0, now, &v) == 0) {
        cmd_set(&cmds, name, &v, ttl, 1);
        m++;
      }
    }
    start = i;
    if(m == 0)
      continue;
    if(ddbc_shared_round_trip(sh, &cmds, rp, m, 1, table, &ms))
      break;
    count_sets(rp, m);
    ddbc_shared_log("shared_fill", table, m, ms);
    for(k = 0; k < m; k++)
      ddbc_resp_reply_free(&rp[k]);
  }
  free(rp);
  ddb_buf_free(&v);
  ddb_buf_free(&cmds);
}

void ddbc_shared_note_write(ddbc_shared *sh, ddb_client *c, const char *table,
                            const char *tail, size_t len, const ddb_item *item,
                            double ttl, double now) {
  const unsigned char *root = ddb_client_tier_key(c);
  char name[DDBC_SHARED_NAME_LEN + 1], gname[DDBC_SHARED_NAME_LEN + 1];
  char lname[DDBC_SHARED_NAME_LEN + 1], gen[24];
  ddbc_resp_reply rp[3];
  ddb_buf cmds, v;
  double ms = 0;
  int rc;

  ddb_buf_init(&cmds, DDBC_SHARED_MAX_VALUE + 4096);
  ddb_buf_init(&v, DDBC_SHARED_MAX_VALUE + 64);
  ddbc_shared_name(root, 'I', tail, len, name);
  ddbc_shared_gen_name(root, table, gname);
  snprintf(gen, sizeof(gen), "%llu", (unsigned long long)new_gen());
  if(ttl > 0)
    rc = item_value(root, name, item, 0, now, &v);
  else
    rc = item_value(root, name, NULL, FLAG_TOMBSTONE, now, &v);
  if(rc == 0)
    cmd_set(&cmds, name, &v, ttl > 0 ? ttl : DDBC_SHARED_TOMBSTONE, 0);
  else {
    /* too large to share: drop the entry instead */
    ddbc_resp_cmd(&cmds, 2);
    ddbc_resp_args(&cmds, "DEL");
    ddbc_resp_args(&cmds, name);
  }
  ddbc_resp_cmd(&cmds, 3);
  ddbc_resp_args(&cmds, "SET");
  ddbc_resp_args(&cmds, gname);
  ddbc_resp_args(&cmds, gen);
  /* a lease on the item is cancelled: its holder read before this write,
  ** and its fill (compare-and-set on the lease's token) is dropped
  ** (lease.c); the generation's move above drops leased page fills */
  ddbc_shared_name(root, DDBC_LEASE_ITEM, tail, len, lname);
  ddbc_resp_cmd(&cmds, 2);
  ddbc_resp_args(&cmds, "DEL");
  ddbc_resp_args(&cmds, lname);
  if(ddbc_shared_round_trip(sh, &cmds, rp, 3, 1, table, &ms) == 0) {
    if(rc == 0)
      count_sets(rp, 1); /* the item's SET (not the DEL) */
    if(rp[1].node[0].type != DDBC_RESP_STATUS)
      ddbc_shared_count_error();
    ddbc_shared_log("shared_write", table, 1, ms);
    ddbc_resp_reply_free(&rp[0]);
    ddbc_resp_reply_free(&rp[1]);
    ddbc_resp_reply_free(&rp[2]);
  }
  ddb_buf_free(&v);
  ddb_buf_free(&cmds);
}

/* ------------------------------------------------------------------------
** Pages
*/
/* Make the generation gname of table's pages, which Redis does not hold
** (new, or evicted): SET NX of a new one, then GET of whichever won, in
** one round trip (cmds is scratch).  Returns it, or 0 when Redis failed
** or answered no generation (counted). */
static ddbc_shared_gen gen_make(ddbc_shared *sh, const char *table,
                                const char *gname, ddb_buf *cmds) {
  ddbc_resp_reply mk[2];
  ddbc_shared_gen gen = 0;
  char fresh[24];
  double ms = 0;
  snprintf(fresh, sizeof(fresh), "%llu", (unsigned long long)new_gen());
  ddb_buf_reset(cmds);
  ddbc_resp_cmd(cmds, 4);
  ddbc_resp_args(cmds, "SET");
  ddbc_resp_args(cmds, gname);
  ddbc_resp_args(cmds, fresh);
  ddbc_resp_args(cmds, "NX");
  ddbc_resp_cmd(cmds, 2);
  ddbc_resp_args(cmds, "GET");
  ddbc_resp_args(cmds, gname);
  if(ddbc_shared_round_trip(sh, cmds, mk, 2, 1, table, &ms) == 0) {
    gen = ddbc_shared_gen_parse(&mk[1].node[0]);
    if(!gen)
      ddbc_shared_count_error();
    ddbc_resp_reply_free(&mk[0]);
    ddbc_resp_reply_free(&mk[1]);
  }
  return gen;
}

/* The page entry v that Redis holds under name, read at now under the
** table's generation cur: 1 on a hit (*out a new page, *age its age),
** else 0 (nothing, too old, filled under another generation, or a value
** that is not ours: each counted).  plain is scratch. */
int ddbc_shared_page_take(const unsigned char *root, const char *name,
                          const ddbc_resp_node *v, uint64_t cur,
                          double max_age, double now, ddb_buf *plain,
                          ddb_page **out, double *age) {
  ddb_error err;
  uint64_t pgen;
  int flags, ok;
  if(v->type == DDBC_RESP_NIL) {
    COUNT(misses, 1);
    return 0;
  }
  if(v->type != DDBC_RESP_BULK) {
    ddbc_shared_count_error();
    return 0;
  }
  ok = value_open(root, name, 'Q', v, max_age, now, plain, &flags, &pgen, age);
  if(ok == 0 || (ok > 0 && pgen != cur))
    COUNT(misses, 1); /* too old, or retired by a write */
  if(ok <= 0 || pgen != cur)
    return 0;
  ddb_error_clear(&err);
  if(ddb_page_from_json(plain->p + HEAD_LEN, plain->len - HEAD_LEN, out,
                        &err)) {
    *out = NULL;
    COUNT(auth_failures, 1);
    return 0;
  }
  COUNT(hits, 1);
  return 1;
}

/* See shared.h: one MGET of the table's generation and the page; no
** generation yet makes one (gen_make) and is a miss. */
int ddbc_shared_get_page(ddbc_shared *sh, ddb_client *c, const char *table,
                         const char *tail, size_t len, double max_age,
                         double now, ddb_page **out, double *age,
                         ddbc_shared_gen *gen) {
  const unsigned char *root = ddb_client_tier_key(c);
  char name[DDBC_SHARED_NAME_LEN + 1], gname[DDBC_SHARED_NAME_LEN + 1];
  ddbc_resp_reply rp;
  const ddbc_resp_node *g;
  ddb_buf cmds, plain;
  uint64_t cur;
  double ms = 0;
  int hit = 0, there = 0;

  *out = NULL;
  *gen = 0;
  *age = 0;
  ddb_buf_init(&cmds, 4096);
  ddb_buf_init(&plain, DDBC_SHARED_MAX_VALUE + 64);
  ddbc_shared_name(root, 'Q', tail, len, name);
  ddbc_shared_gen_name(root, table, gname);
  ddbc_resp_cmd(&cmds, 3);
  ddbc_resp_args(&cmds, "MGET");
  ddbc_resp_args(&cmds, gname);
  ddbc_resp_args(&cmds, name);
  if(ddbc_shared_round_trip(sh, &cmds, &rp, 1, 3, table, &ms))
    goto done;
  if(rp.node[0].type != DDBC_RESP_ARRAY || rp.node[0].integer != 2 ||
     rp.n_node != 3) {
    ddbc_shared_count_error();
    goto reply_done;
  }
  g = &rp.node[1];
  cur = ddbc_shared_gen_parse(g);
  if(g->type == DDBC_RESP_NIL) {
    /* no generation yet (or it was evicted): make one; pages read
    ** without one are misses */
    COUNT(misses, 1);
    *gen = gen_make(sh, table, gname, &cmds);
    goto reply_done;
  }
  if(!cur) {
    ddbc_shared_count_error(); /* not a generation: neither read nor fill */
    goto reply_done;
  }
  *gen = cur;
  hit = ddbc_shared_page_take(root, name, &rp.node[2], cur, max_age, now,
                              &plain, out, age);
  if(!hit && rp.node[2].type != DDBC_RESP_NIL)
    there = 1; /* not to be taken: not a lease's to fill */
reply_done:
  ddbc_shared_log("shared_get", table, hit, ms);
  ddbc_resp_reply_free(&rp);
done:
  if(plain.p)
    OPENSSL_cleanse(plain.p, plain.len);
  ddb_buf_free(&plain);
  ddb_buf_free(&cmds);
  return hit ? 1 : there ? 2 : 0;
}

int ddbc_shared_page_value(const unsigned char *root, const char *name,
                           ddbc_shared_gen gen, const ddb_page *p, double now,
                           ddb_buf *v) {
  ddb_buf plain;
  int rc = -1;
  ddb_buf_init(&plain, DDBC_SHARED_MAX_VALUE);
  head_put(&plain, 'Q', 0, now, gen);
  if(ddb_page_to_json(p, &plain) == 0 && !plain.failed)
    rc = ddbc_shared_seal(root, name, (unsigned char *)plain.p, plain.len, v);
  if(plain.p)
    OPENSSL_cleanse(plain.p, plain.len);
  ddb_buf_free(&plain);
  return rc;
}

void ddbc_shared_fill_page(ddbc_shared *sh, ddb_client *c, const char *table,
                           const char *tail, size_t len, ddbc_shared_gen gen,
                           const ddb_page *p, double ttl, double now) {
  const unsigned char *root = ddb_client_tier_key(c);
  char name[DDBC_SHARED_NAME_LEN + 1];
  ddbc_resp_reply rp;
  ddb_buf v, cmds;
  double ms = 0;

  if(!gen)
    return;
  ddb_buf_init(&v, DDBC_SHARED_MAX_VALUE + 64);
  ddb_buf_init(&cmds, DDBC_SHARED_MAX_VALUE + 4096);
  ddbc_shared_name(root, 'Q', tail, len, name);
  if(ddbc_shared_page_value(root, name, gen, p, now, &v) == 0) {
    cmd_set(&cmds, name, &v, ttl, 0);
    if(ddbc_shared_round_trip(sh, &cmds, &rp, 1, 1, table, &ms) == 0) {
      count_sets(&rp, 1);
      ddbc_shared_log("shared_fill", table, 1, ms);
      ddbc_resp_reply_free(&rp);
    }
  }
  ddb_buf_free(&v);
  ddb_buf_free(&cmds);
}
