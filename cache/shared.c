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
** Failure.  A connect and each round trip are bounded by the tier's
** timeout (shared_cache_timeout, 20 ms by default).  A timeout, a refused
** or closed connection, or an answer that is not RESP drops the
** connection and the tier backs off: lookups are skipped (a miss,
** shared_skipped) for DDBC_SHARED_BACKOFF_MIN seconds, doubling up to
** DDBC_SHARED_BACKOFF_MAX, until a connection works again.  An answer of
** the wrong type or an error answer (OOM when Redis is full) is a miss on
** a connection that stays good.
**
** Threads and fork().  Connections sit in a per-tier pool (a mutex, at
** most DDBC_SHARED_IDLE idle); a thread takes one for a round trip and
** gives it back; no lock is held while talking to Redis.  fork(): the
** handlers below take every tier's lock before the fork, and the child
** closes the idle connections it inherited (without a TLS close_notify,
** which would end the parent's session); a connection that was in use by
** another thread is refused when given back to a pool in another process
** (its pid).
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "resp.h"
#include "shared.h"

/* Idle connections kept per tier; tiers per process. */
#define DDBC_SHARED_IDLE  8
#define DDBC_SHARED_TIERS 16
/* Backoff after a failure: the first wait, doubling up to the last. */
#define DDBC_SHARED_BACKOFF_MIN 0.1
#define DDBC_SHARED_BACKOFF_MAX 5.0

#define NONCE_LEN 12
#define TAG_LEN   16
#define HEAD_LEN  18 /* kind, flags, filled, gen */
#define VERSION   1

/* flags of a value */
#define FLAG_ITEM      1
#define FLAG_TOMBSTONE 2

struct ddbc_shared {
  struct ddbc_shared *next; /* the registry, under reg_lock */
  char *spec;               /* url and timeout: the registry's key */
  ddbc_redis_url u;
  double timeout;
  void *tls;            /* SSL_CTX for rediss://, else NULL */
  pthread_mutex_t lock; /* idle, n_idle, retry_at, backoff, why */
  ddbc_resp *idle[DDBC_SHARED_IDLE];
  int n_idle;
  double retry_at; /* ddbc_resp_clock() before which nothing is sent */
  double backoff;  /* the last wait; 0 while Redis answers */
  char why[160];   /* what failed last */
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static ddbc_shared *reg;
static int n_reg;

/* The counters (atomic). */
static struct {
  uint64_t hits, misses, fills, auth_failures, timeouts, errors, skipped;
} st;

#define COUNT(field, n)                                                       \
  __atomic_add_fetch(&st.field, (uint64_t)(n), __ATOMIC_RELAXED)

/* ------------------------------------------------------------------------
** fork()
*/
/* Before fork() (live.c's list, rank DDB_LIVE_SHARED): every tier's lock
** (the registry's first), so the child gets the pools whole. */
static void shared_fork_lock(void *obj) {
  ddbc_shared *sh;
  (void)obj;
  pthread_mutex_lock(&reg_lock);
  for(sh = reg; sh; sh = sh->next)
    pthread_mutex_lock(&sh->lock);
}

/* After fork(), in the parent: the locks released. */
static void shared_fork_parent(void *obj) {
  ddbc_shared *sh;
  (void)obj;
  for(sh = reg; sh; sh = sh->next)
    pthread_mutex_unlock(&sh->lock);
  pthread_mutex_unlock(&reg_lock);
}

/* The child: the idle connections are the parent's sessions. */
static void shared_fork_child(void *obj) {
  ddbc_shared *sh;
  int i;
  (void)obj;
  for(sh = reg; sh; sh = sh->next) {
    for(i = 0; i < sh->n_idle; i++)
      ddbc_resp_close(sh->idle[i], 1);
    sh->n_idle = 0;
    pthread_mutex_unlock(&sh->lock);
  }
  pthread_mutex_unlock(&reg_lock);
}

static const ddb_live_ops shared_live_ops = {
    DDB_LIVE_SHARED, shared_fork_lock, shared_fork_parent, shared_fork_child};
static ddb_live shared_live;

/* At load: on the fork list (glibc forgets the handlers at unload). */
__attribute__((constructor)) static void shared_load(void) {
  ddb_live_add(&shared_live, &shared_live_ops, NULL);
}

/* ------------------------------------------------------------------------
** Opening a tier
*/
double ddbc_shared_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Free a tier not yet in the registry. */
static void tier_free(ddbc_shared *sh) {
  if(!sh)
    return;
  ddbc_redis_url_wipe(&sh->u);
  if(sh->spec) {
    OPENSSL_cleanse(sh->spec, strlen(sh->spec));
    free(sh->spec);
  }
  ddbc_resp_tls_free(sh->tls);
  pthread_mutex_destroy(&sh->lock);
  free(sh);
}

/* The tier in the registry whose spec (URL and timeout) is spec, or NULL.
** Expects reg_lock held. */
static ddbc_shared *do_tier_find(const char *spec) {
  ddbc_shared *x;
  for(x = reg; x; x = x->next)
    if(strcmp(x->spec, spec) == 0)
      break;
  return x;
}

/* Is u the Redis that DYNAMODB_SHARED_CACHE names (the same scheme, host,
** port, database and user)?  Returns 1 or 0, with that URL parsed into
** *env_u (its password too: the caller wipes it).  The environment's
** password goes to that Redis only: a shared_cache= URL can come from a
** database file (docs/trust-model.md). */
static int tier_is_env(const ddbc_redis_url *u, ddbc_redis_url *env_u) {
  const char *env = getenv("DYNAMODB_SHARED_CACHE");
  char why[200];
  if(!env || !env[0] || strcmp(env, "off") == 0 ||
     ddbc_redis_url_parse(env, env_u, why, sizeof(why)))
    return 0;
  return env_u->tls == u->tls && strcasecmp(env_u->host, u->host) == 0 &&
         env_u->port == u->port && env_u->db == u->db &&
         strcmp(env_u->user, u->user) == 0;
}

/* The settings of the new tier sh from url (from names it in messages,
** shown is it with its password redacted; from_env: url is
** DYNAMODB_SHARED_CACHE) and the environment: the URL parsed; when it has
** no password and names the environment's Redis (from_env, or
** tier_is_env), that URL's password or else
** DYNAMODB_SHARED_CACHE_PASSWORD, never for another Redis; the TLS
** context of rediss:// (DYNAMODB_SHARED_CACHE_CA).  Returns DDB_OK, or
** DDB_ERR_CONFIG naming what is wrong; sh is then the caller's to free
** (tier_free), as always. */
static ddb_result tier_settings(ddbc_shared *sh, const char *url,
                                const char *from, const char *shown,
                                int from_env, ddb_error *err) {
  const char *pw, *ca;
  char why[200];
  ddbc_redis_url env_u;
  int is_env;
  if(ddbc_redis_url_parse(url, &sh->u, why, sizeof(why)))
    return ddb_error_set(err, DDB_ERR_CONFIG, "bad %s '%.200s': %s", from,
                         shown, why);
  memset(&env_u, 0, sizeof(env_u));
  is_env = from_env || tier_is_env(&sh->u, &env_u);
  if(is_env && !sh->u.has_password && env_u.has_password) {
    memcpy(sh->u.password, env_u.password, sizeof(sh->u.password));
    sh->u.has_password = 1;
  }
  ddbc_redis_url_wipe(&env_u);
  pw = getenv("DYNAMODB_SHARED_CACHE_PASSWORD");
  if(is_env && !sh->u.has_password && pw && pw[0]) {
    if(strlen(pw) >= sizeof(sh->u.password))
      return ddb_error_set(err, DDB_ERR_CONFIG,
                           "DYNAMODB_SHARED_CACHE_PASSWORD is too long");
    memcpy(sh->u.password, pw, strlen(pw) + 1);
    sh->u.has_password = 1;
  }
  if(sh->u.user[0] && !sh->u.has_password && is_env)
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "bad %s '%.200s': a user needs a password "
                         "(DYNAMODB_SHARED_CACHE_PASSWORD)",
                         from, shown);
  if(sh->u.user[0] && !sh->u.has_password)
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "bad %s '%.200s': a user needs a password, and "
                         "DYNAMODB_SHARED_CACHE_PASSWORD goes only to the "
                         "Redis that DYNAMODB_SHARED_CACHE names: name this "
                         "one there",
                         from, shown);
  if(sh->u.tls) {
    ca = getenv("DYNAMODB_SHARED_CACHE_CA");
    sh->tls = ddbc_resp_tls_new(ca && ca[0] ? ca : NULL, why, sizeof(why));
    if(!sh->tls)
      return ddb_error_set(err, DDB_ERR_CONFIG, "%s '%.200s': %s", from, shown,
                           why);
  }
  return DDB_OK;
}

/* Put the new tier *sh (its spec set) in the registry, unless another
** thread put one of the same spec there first: *out is the one
** registered, and *sh NULL when it was ours (the registry owns it now).
** Returns DDB_OK, or DDB_ERR_CONFIG when the registry is full
** (DDBC_SHARED_TIERS). */
static ddb_result tier_register(ddbc_shared **sh, ddbc_shared **out,
                                ddb_error *err) {
  ddbc_shared *x;
  pthread_mutex_lock(&reg_lock);
  x = do_tier_find((*sh)->spec); /* another thread may have made it */
  if(!x && n_reg >= DDBC_SHARED_TIERS) {
    pthread_mutex_unlock(&reg_lock);
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "too many shared caches in one process (at most "
                         "%d URL and timeout pairs)",
                         DDBC_SHARED_TIERS);
  }
  if(!x) {
    x = *sh;
    x->next = reg;
    reg = x;
    n_reg++;
    *sh = NULL;
  }
  pthread_mutex_unlock(&reg_lock);
  *out = x;
  return DDB_OK;
}

/* See ddb_cache.h: the tier of url (or DYNAMODB_SHARED_CACHE) and timeout,
** one a spec in the process: found in the registry, or made (its
** settings) and registered. */
ddb_result ddbc_shared_open(const char *url, double timeout, ddbc_shared **out,
                            ddb_error *err) {
  static const char env_name[] = "DYNAMODB_SHARED_CACHE";
  const char *from = url ? "shared_cache" : env_name;
  char shown[300];
  ddbc_shared *sh = NULL, *x;
  ddb_buf spec;
  ddb_result result = DDB_OK;

  *out = NULL;
  if(!url)
    url = getenv("DYNAMODB_SHARED_CACHE");
  if(!url || !url[0] || strcmp(url, "off") == 0)
    return DDB_OK;
  if(timeout <= 0)
    timeout = DDBC_SHARED_TIMEOUT;
  ddbc_redis_url_redact(url, shown, sizeof(shown));
  ddb_buf_init(&spec, 8192);
  ddb_buf_addf(&spec, "%s\n%.6f", url, timeout);
  if(spec.failed)
    return ddb_error_set(err, DDB_ERR_CONFIG, "bad %s '%.200s': too long",
                         from, shown);
  pthread_mutex_lock(&reg_lock);
  x = do_tier_find(spec.p);
  pthread_mutex_unlock(&reg_lock);
  if(x) {
    *out = x;
    goto done;
  }
  sh = calloc(1, sizeof(*sh));
  if(!sh) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto done;
  }
  pthread_mutex_init(&sh->lock, NULL);
  sh->timeout = timeout;
  result = tier_settings(sh, url, from, shown, from == env_name, err);
  if(result)
    goto done;
  sh->spec = ddb_buf_take(&spec, NULL);
  if(!sh->spec) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto done;
  }
  result = tier_register(&sh, out, err);

done:
  tier_free(sh);
  if(spec.p)
    OPENSSL_cleanse(spec.p, spec.len);
  ddb_buf_free(&spec);
  return result;
}

int ddbc_shared_status(ddbc_shared *sh, char *why, size_t cap) {
  int down;
  if(cap)
    why[0] = 0;
  if(!sh)
    return 0;
  pthread_mutex_lock(&sh->lock);
  down = sh->backoff > 0;
  if(down && cap)
    snprintf(why, cap, "%s", sh->why);
  pthread_mutex_unlock(&sh->lock);
  return down;
}

void ddbc_shared_stats_get(ddbc_stats *out) {
  ddbc_shared *sh;
  uint64_t down = 0;
  out->shared_hits = __atomic_load_n(&st.hits, __ATOMIC_RELAXED);
  out->shared_misses = __atomic_load_n(&st.misses, __ATOMIC_RELAXED);
  out->shared_fills = __atomic_load_n(&st.fills, __ATOMIC_RELAXED);
  out->shared_auth_failures =
      __atomic_load_n(&st.auth_failures, __ATOMIC_RELAXED);
  out->shared_timeouts = __atomic_load_n(&st.timeouts, __ATOMIC_RELAXED);
  out->shared_errors = __atomic_load_n(&st.errors, __ATOMIC_RELAXED);
  out->shared_skipped = __atomic_load_n(&st.skipped, __ATOMIC_RELAXED);
  pthread_mutex_lock(&reg_lock);
  for(sh = reg; sh; sh = sh->next)
    down += (uint64_t)ddbc_shared_status(sh, NULL, 0);
  pthread_mutex_unlock(&reg_lock);
  out->shared_down = down;
}

/* ------------------------------------------------------------------------
** Round trips: a connection from the pool, the commands, the backoff
*/

/* A row of the request log for the tier (operation "shared_..."). */
static void log_row(const char *op, const char *table, int items, double ms) {
  ddb_log_entry e;
  memset(&e, 0, sizeof(e));
  snprintf(e.operation, sizeof(e.operation), "%s", op);
  snprintf(e.table, sizeof(e.table), "%s", table ? table : "");
  e.items = items;
  e.ms = ms;
  ddb_log_add(&e);
}

/* Redis failed (rc: TIMEOUT or FAILED, why): count it, log it, back off. */
static void note_failure(ddbc_shared *sh, int rc, const char *why,
                         const char *table, double ms) {
  double now = ddbc_resp_clock();
  if(rc == DDBC_RESP_TIMEOUT)
    COUNT(timeouts, 1);
  else
    COUNT(errors, 1);
  log_row(rc == DDBC_RESP_TIMEOUT ? "shared_timeout" : "shared_error", table,
          -1, ms);
  pthread_mutex_lock(&sh->lock);
  sh->backoff = sh->backoff > 0 ? sh->backoff * 2 : DDBC_SHARED_BACKOFF_MIN;
  if(sh->backoff > DDBC_SHARED_BACKOFF_MAX)
    sh->backoff = DDBC_SHARED_BACKOFF_MAX;
  sh->retry_at = now + sh->backoff;
  snprintf(sh->why, sizeof(sh->why), "%s", why);
  pthread_mutex_unlock(&sh->lock);
}

/* A connection of sh in *out: an idle one, or a new one (connected
** within the timeout).  Returns DDBC_RESP_OK; -1 when the tier is backing
** off (counted as skipped); TIMEOUT or FAILED (counted, backoff). */
static int conn_take(ddbc_shared *sh, const char *table, ddbc_resp **out) {
  double t0 = ddbc_resp_clock();
  int pid = (int)getpid(), rc;
  char why[160];
  *out = NULL;
  pthread_mutex_lock(&sh->lock);
  if(sh->retry_at > t0) {
    pthread_mutex_unlock(&sh->lock);
    COUNT(skipped, 1);
    return -1;
  }
  while(sh->n_idle > 0) {
    ddbc_resp *r = sh->idle[--sh->n_idle];
    if(ddbc_resp_pid(r) == pid) {
      *out = r;
      break;
    }
    ddbc_resp_close(r, 1);
  }
  pthread_mutex_unlock(&sh->lock);
  if(*out)
    return DDBC_RESP_OK;
  why[0] = 0;
  rc = ddbc_resp_connect(&sh->u, sh->tls, t0 + sh->timeout, out, why,
                         sizeof(why));
  if(rc)
    note_failure(sh, rc, why, table, (ddbc_resp_clock() - t0) * 1000);
  return rc;
}

/* Give r back to sh's pool after a round trip that worked. */
static void conn_give(ddbc_shared *sh, ddbc_resp *r) {
  pthread_mutex_lock(&sh->lock);
  sh->backoff = 0;
  sh->retry_at = 0;
  if(ddbc_resp_pid(r) == (int)getpid() && sh->n_idle < DDBC_SHARED_IDLE) {
    sh->idle[sh->n_idle++] = r;
    r = NULL;
  }
  pthread_mutex_unlock(&sh->lock);
  if(r)
    ddbc_resp_close(r, ddbc_resp_pid(r) != (int)getpid());
}

/* One round trip on sh: cmds, then n replies into rp (freed by the
** caller in every case).  Returns 0, or -1 (skipped, timed out or failed:
** counted and logged; rp then holds nothing to read). */
static int round_trip(ddbc_shared *sh, const ddb_buf *cmds,
                      ddbc_resp_reply *rp, int n, int max_nodes,
                      const char *table, double *ms) {
  ddbc_resp *r;
  double t0;
  char why[160];
  int rc, i;
  for(i = 0; i < n; i++)
    memset(&rp[i], 0, sizeof(rp[i]));
  if(cmds->failed)
    return -1;
  if(conn_take(sh, table, &r))
    return -1;
  t0 = ddbc_resp_clock();
  why[0] = 0;
  rc = ddbc_resp_call(r, cmds->p, cmds->len, rp, n, max_nodes,
                      t0 + sh->timeout, why, sizeof(why));
  *ms = (ddbc_resp_clock() - t0) * 1000;
  if(rc) {
    ddbc_resp_close(r, 0);
    for(i = 0; i < n; i++)
      ddbc_resp_reply_free(&rp[i]);
    note_failure(sh, rc, why, table, *ms);
    return -1;
  }
  conn_give(sh, r);
  return 0;
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

/* Put u at p, big-endian (8 bytes). */
static void put64(unsigned char *p, uint64_t u) {
  int i;
  for(i = 7; i >= 0; i--) {
    p[i] = (unsigned char)u;
    u >>= 8;
  }
}

/* The big-endian 8 bytes at p. */
static uint64_t get64(const unsigned char *p) {
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
  put64(h + 2, (uint64_t)(now * 1000));
  put64(h + 10, gen);
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
  filled = (double)get64(h + 2) / 1000;
  *gen = get64(h + 10);
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
    g = get64(r);
  }
  return g;
}

/* Parse a generation's text (decimal, 1 to 20 digits, not 0). */
static uint64_t gen_parse(const ddbc_resp_node *v) {
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

/* The Redis key of the generation of table. */
static void gen_name(const unsigned char *root, const char *table, char *out) {
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
    COUNT(errors, 1);
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
static int item_take(const unsigned char *root, const char *name,
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
    COUNT(errors, 1);
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
    if(round_trip(sh, &cmds, &rp, 1, (int)m + 1, table, &ms))
      goto done; /* Redis failed: everything left is a miss */
    if(rp.node[0].type != DDBC_RESP_ARRAY ||
       rp.node[0].integer != (long long)m || rp.n_node != (int)m + 1)
      COUNT(errors, 1); /* a wrong type: a miss */
    else
      for(k = 0; k < m; k++) {
        size_t at = which[k];
        double a;
        if(!item_take(root, names[k], &rp.node[k + 1], max_age, now, &plain,
                      &found[at], &a))
          continue;
        hit[at] = 1;
        if(age)
          age[at] = a;
        hits++;
      }
    COUNT(hits, hits);
    log_row("shared_get", table, (int)hits, ms);
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
    if(round_trip(sh, &cmds, rp, m, 1, table, &ms))
      break;
    count_sets(rp, m);
    log_row("shared_fill", table, m, ms);
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
  char gen[24];
  ddbc_resp_reply rp[2];
  ddb_buf cmds, v;
  double ms = 0;
  int rc;

  ddb_buf_init(&cmds, DDBC_SHARED_MAX_VALUE + 4096);
  ddb_buf_init(&v, DDBC_SHARED_MAX_VALUE + 64);
  ddbc_shared_name(root, 'I', tail, len, name);
  gen_name(root, table, gname);
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
  if(round_trip(sh, &cmds, rp, 2, 1, table, &ms) == 0) {
    if(rc == 0)
      count_sets(rp, 1); /* the item's SET (not the DEL) */
    if(rp[1].node[0].type != DDBC_RESP_STATUS)
      COUNT(errors, 1);
    log_row("shared_write", table, 1, ms);
    ddbc_resp_reply_free(&rp[0]);
    ddbc_resp_reply_free(&rp[1]);
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
  if(round_trip(sh, cmds, mk, 2, 1, table, &ms) == 0) {
    gen = gen_parse(&mk[1].node[0]);
    if(!gen)
      COUNT(errors, 1);
    ddbc_resp_reply_free(&mk[0]);
    ddbc_resp_reply_free(&mk[1]);
  }
  return gen;
}

/* The page entry v that Redis holds under name, read at now under the
** table's generation cur: 1 on a hit (*out a new page, *age its age),
** else 0 (nothing, too old, filled under another generation, or a value
** that is not ours: each counted).  plain is scratch. */
static int page_take(const unsigned char *root, const char *name,
                     const ddbc_resp_node *v, uint64_t cur, double max_age,
                     double now, ddb_buf *plain, ddb_page **out, double *age) {
  ddb_error err;
  uint64_t pgen;
  int flags, ok;
  if(v->type == DDBC_RESP_NIL) {
    COUNT(misses, 1);
    return 0;
  }
  if(v->type != DDBC_RESP_BULK) {
    COUNT(errors, 1);
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
  int hit = 0;

  *out = NULL;
  *gen = 0;
  *age = 0;
  ddb_buf_init(&cmds, 4096);
  ddb_buf_init(&plain, DDBC_SHARED_MAX_VALUE + 64);
  ddbc_shared_name(root, 'Q', tail, len, name);
  gen_name(root, table, gname);
  ddbc_resp_cmd(&cmds, 3);
  ddbc_resp_args(&cmds, "MGET");
  ddbc_resp_args(&cmds, gname);
  ddbc_resp_args(&cmds, name);
  if(round_trip(sh, &cmds, &rp, 1, 3, table, &ms))
    goto done;
  if(rp.node[0].type != DDBC_RESP_ARRAY || rp.node[0].integer != 2 ||
     rp.n_node != 3) {
    COUNT(errors, 1);
    goto reply_done;
  }
  g = &rp.node[1];
  cur = gen_parse(g);
  if(g->type == DDBC_RESP_NIL) {
    /* no generation yet (or it was evicted): make one; pages read
    ** without one are misses */
    COUNT(misses, 1);
    *gen = gen_make(sh, table, gname, &cmds);
    goto reply_done;
  }
  if(!cur) {
    COUNT(errors, 1); /* not a generation: neither read nor fill */
    goto reply_done;
  }
  *gen = cur;
  hit =
      page_take(root, name, &rp.node[2], cur, max_age, now, &plain, out, age);
reply_done:
  log_row("shared_get", table, hit, ms);
  ddbc_resp_reply_free(&rp);
done:
  if(plain.p)
    OPENSSL_cleanse(plain.p, plain.len);
  ddb_buf_free(&plain);
  ddb_buf_free(&cmds);
  return hit;
}

void ddbc_shared_fill_page(ddbc_shared *sh, ddb_client *c, const char *table,
                           const char *tail, size_t len, ddbc_shared_gen gen,
                           const ddb_page *p, double ttl, double now) {
  const unsigned char *root = ddb_client_tier_key(c);
  char name[DDBC_SHARED_NAME_LEN + 1];
  ddbc_resp_reply rp;
  ddb_buf plain, v, cmds;
  double ms = 0;

  if(!gen)
    return;
  ddb_buf_init(&plain, DDBC_SHARED_MAX_VALUE);
  ddb_buf_init(&v, DDBC_SHARED_MAX_VALUE + 64);
  ddb_buf_init(&cmds, DDBC_SHARED_MAX_VALUE + 4096);
  ddbc_shared_name(root, 'Q', tail, len, name);
  head_put(&plain, 'Q', 0, now, gen);
  if(ddb_page_to_json(p, &plain) == 0 && !plain.failed &&
     ddbc_shared_seal(root, name, (unsigned char *)plain.p, plain.len, &v) ==
         0) {
    cmd_set(&cmds, name, &v, ttl, 0);
    if(round_trip(sh, &cmds, &rp, 1, 1, table, &ms) == 0) {
      count_sets(&rp, 1);
      log_row("shared_fill", table, 1, ms);
      ddbc_resp_reply_free(&rp);
    }
  }
  if(plain.p)
    OPENSSL_cleanse(plain.p, plain.len);
  ddb_buf_free(&plain);
  ddb_buf_free(&v);
  ddb_buf_free(&cmds);
}
