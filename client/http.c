/*
** http.c -- DynamoDB requests over libcurl: signing, retries, responses.
**
** One request is one POST of a JSON body to the endpoint with
**   X-Amz-Target: DynamoDB_20120810.<Operation>
**   Content-Type: application/x-amz-json-1.0
** signed here (sigv4.c, AWS4-HMAC-SHA256 for service "dynamodb"): the
** Host (as the endpoint gives it, lower-case), X-Amz-Date (the clock at
** each attempt), X-Amz-Security-Token and Authorization headers are set
** in the request's header list, not by curl.  The signed headers are
** content-type, host, x-amz-date, x-amz-security-token (with a session
** token) and x-amz-target; the payload hash is the SHA-256 of the body.
** The Authorization header is compared byte for byte with botocore's in
** tests/suites/22-sigv4.sh; the signer is checked with AWS's published
** vectors in tests/unit/test_sigv4.c.
**
** Credentials.  The signing credentials are a reference-counted `signer`
** that a request takes under cred_lock and keeps for one attempt.
** Temporary credentials (credential_process, container, instance
** metadata) are fetched again REFRESH_AHEAD_S before they expire, by one
** thread at a time (refresh_lock); the others keep signing with the old
** ones while those are still good for GRACE_S.  A failed refresh is tried
** again after REFRESH_RETRY_S; once the old credentials are within GRACE_S
** of expiring, the failure is the request's error.
**
** Retries follow the AWS SDKs' defaults for DynamoDB: up to max_retries
** (10) retries of the throttling family, HTTP 500/502/503/504, connection
** failures and timeouts, truncated bodies, bodies that do not parse and
** bodies whose x-amz-crc32 header does not match (checked on every
** response that has one), with exponential backoff and full jitter (25 ms
** base, 500 ms for throttling, 20 s cap).  Everything else (a
** ValidationException, a ConditionalCheckFailedException, an
** AccessDeniedException, a bad certificate, ...) fails at once with
** DynamoDB's (or curl's) message.  The whole request is bounded by the
** timeout (default 60 s), connecting by min(10 s, timeout), so one call
** ends within (max_retries + 1) * timeout plus the backoff.
**
** Responses are not compressed (no Accept-Encoding): x-amz-crc32 is the
** CRC of the bytes DynamoDB sends, and curl hands over decoded bytes.
**
** Lost answers.  A retry may follow an attempt that DynamoDB executed but
** whose answer never arrived (a reset, a timeout, a truncated or damaged
** body, a 5xx).  Reads and unconditional writes are idempotent;
** TransactWriteItems carries a ClientRequestToken; UpdateItem sets
** absolute values.  A conditional PutItem (INSERT) would fail its own
** condition on the retry: write.c asks for
** ReturnValuesOnConditionCheckFailure=ALL_OLD, and when such a retry finds
** exactly the item it wrote, the write is reported done.
*/
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>

#include "ddb_client_int.h"
#include "http_int.h"
#include "sigv4.h"

/* The largest response body read.  DynamoDB pages are at most 1 MB of
** items and BatchGetItem at most 16 MB; JSON adds overhead. */
#define RESPONSE_MAX (64u * 1024 * 1024)
/* Idle curl handles kept per client (each holds a kept-alive connection). */
#define POOL_MAX 32
/* Backoff: base delays and the cap, in milliseconds. */
#define BACKOFF_BASE_MS           25
#define BACKOFF_THROTTLE_BASE_MS  500
#define BACKOFF_CAP_MS            20000
#define DEFAULT_MAX_RETRIES       10
#define DEFAULT_TIMEOUT_S         60.0
#define DEFAULT_CONNECT_TIMEOUT_S 10.0
/* Temporary credentials: refresh this long before they expire; keep the
** old ones for requests until this close to expiring; after a failed
** refresh, wait this long before the next try. */
#define REFRESH_AHEAD_S 300
#define GRACE_S         60
#define REFRESH_RETRY_S 10

/* The headers attempt_once() signs and sets, and the lengths of their
** names (the values follow). */
#define CONTENT_TYPE   "application/x-amz-json-1.0"
#define HOST_HDR       "Host: "
#define HOST_HDR_LEN   (sizeof(HOST_HDR) - 1)
#define DATE_HDR       "X-Amz-Date: "
#define DATE_HDR_LEN   (sizeof(DATE_HDR) - 1)
#define TARGET_HDR     "X-Amz-Target: "
#define TARGET_HDR_LEN (sizeof(TARGET_HDR) - 1)
#define AUTH_HDR       "Authorization: "
#define AUTH_HDR_LEN   (sizeof(AUTH_HDR) - 1)

/* One set of signing credentials, shared by the requests using it. */
typedef struct signer {
  int refs;        /* under cred_lock */
  ddb_sigv4 *keys; /* the credentials and their cached signing key */
  char *token_hdr; /* "X-Amz-Security-Token: ..." or NULL */
  int64_t expires; /* Unix time; 0: never */
} signer;

struct ddb_client {
  ddb_settings s;
  char *host_hdr;  /* "Host: <host[:port]>", as signed */
  char *sign_path; /* the canonical URI of the endpoint + "/" */
  double timeout, connect_timeout;
  int max_retries;
  pthread_mutex_t lock; /* guards pool */
  CURL *pool[POOL_MAX];
  int n_pool;
  pthread_mutex_t cred_lock;    /* guards sig, next_refresh, force_refresh */
  pthread_mutex_t refresh_lock; /* one refresh at a time */
  signer *sig;
  int64_t next_refresh; /* no refresh try before this (Unix time) */
  int force_refresh;    /* DynamoDB said the token expired */
  /* the cache's scope (ddb_client_scope): the place (endpoint and region)
  ** and every principal, the current first (read atomically, pushed under
  ** cred_lock) */
  unsigned char place[DDB_SCOPE_ID_LEN];
  ddb_principal *principals;
  ddb_client *next_live; /* the list of live clients (fork_lock) */
  ddb_cancel_fn cancel;  /* the cancel hook, or NULL (set before use) */
  void *cancel_ud;
};

/* Make the principal of credentials (ak, sk, token) c's current one,
** unless it already is (the caller holds cred_lock, or c is not shared
** yet).  Returns 0, or -1 on out of memory (the current one stays). */
static int principal_push(ddb_client *c, const char *ak, const char *sk,
                          const char *token) {
  ddb_principal *pr = ddb_principal_new(ak, sk, token);
  if(!pr)
    return -1;
  if(c->principals &&
     memcmp(c->principals->id, pr->id, DDB_SCOPE_ID_LEN) == 0) {
    free(pr);
    return 0;
  }
  pr->next = c->principals;
  __atomic_store_n(&c->principals, pr, __ATOMIC_RELEASE);
  return 0;
}

/* ------------------------------------------------------------------------
** The request log (process-wide ring)
*/
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static ddb_log_entry log_ring[DDB_LOG_SIZE];
static uint64_t log_seq;

static void log_add(const ddb_log_entry *e) {
  pthread_mutex_lock(&log_lock);
  log_seq++;
  log_ring[log_seq % DDB_LOG_SIZE] = *e;
  log_ring[log_seq % DDB_LOG_SIZE].seq = log_seq;
  pthread_mutex_unlock(&log_lock);
}

/* Copy at most n log entries with seq > after into out; returns how many. */
int ddb_log_read(uint64_t after, ddb_log_entry *out, int n) {
  int k = 0;
  uint64_t s;
  pthread_mutex_lock(&log_lock);
  if(log_seq > DDB_LOG_SIZE && after < log_seq - DDB_LOG_SIZE)
    after = log_seq - DDB_LOG_SIZE;
  for(s = after + 1; s <= log_seq && k < n; s++)
    out[k++] = log_ring[s % DDB_LOG_SIZE];
  pthread_mutex_unlock(&log_lock);
  return k;
}

uint64_t ddb_log_last(void) {
  uint64_t s;
  pthread_mutex_lock(&log_lock);
  s = log_seq;
  pthread_mutex_unlock(&log_lock);
  return s;
}

/* ------------------------------------------------------------------------
** Counters (under log_lock too: they change once per request)
*/
static ddb_stats stats;

static const char *const op_names[DDB_OP_COUNT] = {
    "GetItem",      "BatchGetItem",   "Query",
    "Scan",         "PutItem",        "UpdateItem",
    "DeleteItem",   "BatchWriteItem", "TransactWriteItems",
    "DescribeTable"};

const char *ddb_op_name(ddb_op op) {
  return op < DDB_OP_COUNT ? op_names[op] : "?";
}

/* A consistent copy of the process-wide counters. */
void ddb_stats_get(ddb_stats *out) {
  pthread_mutex_lock(&log_lock);
  *out = stats;
  pthread_mutex_unlock(&log_lock);
}

/* Count one call: attempts requests of which attempts-1 retries. */
static void stats_add(const char *operation, int attempts, int throttles,
                      double consumed) {
  int i;
  pthread_mutex_lock(&log_lock);
  stats.requests += (uint64_t)attempts;
  stats.retries += (uint64_t)(attempts - 1);
  stats.throttles += (uint64_t)throttles;
  for(i = 0; i < DDB_OP_COUNT; i++)
    if(strcmp(op_names[i], operation) == 0) {
      stats.op_requests[i] += (uint64_t)attempts;
      if(i >= DDB_OP_PUT_ITEM && i <= DDB_OP_TRANSACT_WRITE_ITEMS)
        stats.consumed_wcu += consumed;
      else
        stats.consumed_rcu += consumed;
      break;
    }
  pthread_mutex_unlock(&log_lock);
}

/* Copy src (NULL: "") into dst of cap bytes, cut to fit, NUL-terminated. */
static void copy_str(char *dst, size_t cap, const char *src) {
  size_t n = src ? strlen(src) : 0;
  if(n >= cap)
    n = cap - 1;
  if(n)
    memcpy(dst, src, n);
  dst[n] = 0;
}

/* ------------------------------------------------------------------------
** Client lifecycle
*/
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
/* curl_global_init, once per process. */
static void curl_init_once(void) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* A malloc'ed a+b+c, or NULL on out of memory. */
/* ------------------------------------------------------------------------
** fork()
**
** A child of fork() inherits the pooled curl handles, and with them the
** parent's kept-alive connections: both would write requests on one
** socket and read each other's answers.  It also inherits the locks as
** they were, held perhaps by threads that do not exist in the child.  So
** every live client is on a list, and pthread_atfork handlers take every
** lock of every client (and the request log's) before the fork, in one
** order, and release them after it in both processes: the child finds
** them free and what they guard whole.  The child then forgets its pooled
** handles without cleaning them up (a cleanup could send a TLS
** close_notify on the parent's connection): their memory and sockets
** stay, at most POOL_MAX per client, and its requests open connections of
** its own.  refresh_lock is not taken (a refresh holds it for as long as
** fetching credentials takes); the child makes it anew, which is safe
** because the thread that held it is not in the child and it guards no
** data.  The backoff's jitter is drawn from the kernel at each retry, so a
** child does not retry in step with its parent.
*/
static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;
static ddb_client *live; /* every client not yet freed (fork_lock) */

static void fork_prepare(void) {
  ddb_client *c;
  pthread_mutex_lock(&fork_lock);
  for(c = live; c; c = c->next_live) {
    pthread_mutex_lock(&c->lock);
    pthread_mutex_lock(&c->cred_lock);
  }
  pthread_mutex_lock(&log_lock);
}

static void fork_parent(void) {
  ddb_client *c;
  pthread_mutex_unlock(&log_lock);
  for(c = live; c; c = c->next_live) {
    pthread_mutex_unlock(&c->cred_lock);
    pthread_mutex_unlock(&c->lock);
  }
  pthread_mutex_unlock(&fork_lock);
}

static void fork_child(void) {
  ddb_client *c;
  pthread_mutex_unlock(&log_lock);
  for(c = live; c; c = c->next_live) {
    c->n_pool = 0; /* the parent's connections: left alone */
    pthread_mutex_init(&c->refresh_lock, NULL);
    pthread_mutex_unlock(&c->cred_lock);
    pthread_mutex_unlock(&c->lock);
  }
  pthread_mutex_unlock(&fork_lock);
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static void fork_init_once(void) {
  pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Put c on the list of live clients (add) or take it off. */
static void live_set(ddb_client *c, int add) {
  ddb_client **pp;
  pthread_once(&fork_once, fork_init_once);
  pthread_mutex_lock(&fork_lock);
  if(add) {
    c->next_live = live;
    live = c;
  } else {
    for(pp = &live; *pp; pp = &(*pp)->next_live)
      if(*pp == c) {
        *pp = c->next_live;
        break;
      }
  }
  pthread_mutex_unlock(&fork_lock);
}

static char *join3(const char *a, const char *b, const char *c) {
  size_t na = strlen(a), nb = strlen(b), nc = strlen(c);
  char *p = malloc(na + nb + nc + 1);
  if(!p)
    return NULL;
  memcpy(p, a, na);
  memcpy(p + na, b, nb);
  memcpy(p + na + nb, c, nc + 1);
  return p;
}

/* Free a string after overwriting it with zeros (for secrets). */
static void wipe_free(char *s) {
  if(s) {
    memset(s, 0, strlen(s));
    free(s);
  }
}

/* Free a signer (its secrets and derived keys wiped); NULL is fine. */
static void signer_free(signer *g) {
  if(!g)
    return;
  ddb_sigv4_free(g->keys);
  wipe_free(g->token_hdr);
  free(g);
}

/* A new signer (one reference) for the given credentials, or NULL on out
** of memory. */
static signer *signer_new(const char *ak, const char *sk, const char *token,
                          int64_t expires) {
  signer *g = calloc(1, sizeof(*g));
  const char *tok;
  if(!g)
    return NULL;
  g->refs = 1;
  g->expires = expires;
  g->keys = ddb_sigv4_new(ak, sk, token);
  if(!g->keys) {
    signer_free(g);
    return NULL;
  }
  /* the token as signed: trimmed, blank runs folded */
  tok = ddb_sigv4_token(g->keys);
  if(tok) {
    g->token_hdr = join3("X-Amz-Security-Token: ", tok, "");
    if(!g->token_hdr) {
      signer_free(g);
      return NULL;
    }
  }
  return g;
}

/* Drop a reference taken by signer_acquire(). */
static void signer_release(ddb_client *c, signer *g) {
  int last;
  if(!g)
    return;
  pthread_mutex_lock(&c->cred_lock);
  last = --g->refs == 0;
  pthread_mutex_unlock(&c->cred_lock);
  if(last)
    signer_free(g);
}

/* Seconds since the epoch. */
static int64_t wall_now(void) {
  return (int64_t)time(NULL);
}

/* Should credentials expiring at `expires` be fetched again now? */
static int needs_refresh(const ddb_client *c, int64_t expires, int64_t now) {
  if(c->s.src.kind == DDB_CRED_STATIC)
    return 0;
  if(c->force_refresh)
    return 1;
  return expires && now + REFRESH_AHEAD_S >= expires && now >= c->next_refresh;
}

/* Fetch fresh credentials and swap them in (the caller holds
** refresh_lock).  On failure the old ones stay; next_refresh is pushed
** back.  Returns DDB_OK or the fetch's error. */
static ddb_result refresh(ddb_client *c, ddb_error *err) {
  ddb_creds fresh;
  signer *g = NULL, *old;
  ddb_result result = ddb_creds_fetch(&c->s.src, &fresh, err);
  if(result == DDB_OK) {
    g = signer_new(fresh.access_key, fresh.secret_key, fresh.session_token,
                   fresh.expires);
    if(!g)
      result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  }
  pthread_mutex_lock(&c->cred_lock);
  if(g && principal_push(c, fresh.access_key, fresh.secret_key,
                         fresh.session_token)) {
    signer_free(g); /* out of memory: keep the old credentials */
    g = NULL;
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  }
  ddb_creds_clear(&fresh);
  if(g) {
    old = c->sig;
    c->sig = g;
    c->force_refresh = 0;
    c->next_refresh = 0;
  } else {
    old = NULL;
    c->next_refresh = wall_now() + REFRESH_RETRY_S;
  }
  pthread_mutex_unlock(&c->cred_lock);
  signer_release(c, old);
  return result;
}

/* Take a reference to the current signing credentials, refreshing them
** first when they are about to expire.  Returns DDB_OK with *out set, or
** the refresh's error when the old credentials cannot be used any more. */
static ddb_result signer_acquire(ddb_client *c, signer **out, ddb_error *err) {
  int64_t now = wall_now();
  signer *g;
  int want, usable;
  ddb_result result = DDB_OK;
  ddb_error e;

  *out = NULL;
  pthread_mutex_lock(&c->cred_lock);
  g = c->sig;
  want = needs_refresh(c, g->expires, now);
  usable = !c->force_refresh && (!g->expires || now + GRACE_S < g->expires);
  pthread_mutex_unlock(&c->cred_lock);
  if(want) {
    /* one thread refreshes; the others go on with good old credentials */
    if(usable) {
      if(pthread_mutex_trylock(&c->refresh_lock) == 0) {
        ddb_error_clear(&e);
        pthread_mutex_lock(&c->cred_lock);
        want = needs_refresh(c, c->sig->expires, now);
        pthread_mutex_unlock(&c->cred_lock);
        if(want)
          refresh(c, &e); /* a failure keeps the old ones */
        pthread_mutex_unlock(&c->refresh_lock);
      }
    } else {
      pthread_mutex_lock(&c->refresh_lock);
      pthread_mutex_lock(&c->cred_lock);
      g = c->sig;
      usable =
          !c->force_refresh && (!g->expires || now + GRACE_S < g->expires);
      pthread_mutex_unlock(&c->cred_lock);
      if(!usable) {
        ddb_error_clear(&e);
        result = refresh(c, &e);
        if(result)
          ddb_error_set(err, result,
                        "the credentials from %s expired and could not be "
                        "refreshed: %s",
                        c->s.cred_source, e.message);
      }
      pthread_mutex_unlock(&c->refresh_lock);
      if(result)
        return result;
    }
  }
  pthread_mutex_lock(&c->cred_lock);
  g = c->sig;
  g->refs++;
  pthread_mutex_unlock(&c->cred_lock);
  *out = g;
  return DDB_OK;
}

/* Resolve cfg and create a client (see ddb_client.h). */
ddb_result ddb_client_new(const ddb_config *cfg, ddb_client **out,
                          ddb_error *err) {
  ddb_client *c;
  ddb_result result;
  char host[DDB_SIGV4_HOST_MAX], path[DDB_SIGV4_PATH_MAX];

  *out = NULL;
  pthread_once(&curl_once, curl_init_once);
  c = calloc(1, sizeof(*c));
  if(!c)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  result = ddb_settings_resolve(cfg, &c->s, err);
  if(result) {
    free(c);
    return result;
  }
  pthread_mutex_init(&c->lock, NULL);
  pthread_mutex_init(&c->cred_lock, NULL);
  pthread_mutex_init(&c->refresh_lock, NULL);
  live_set(c, 1);
  c->timeout = cfg->timeout > 0 ? cfg->timeout : DEFAULT_TIMEOUT_S;
  c->connect_timeout = cfg->connect_timeout > 0 ? cfg->connect_timeout
                                                : DEFAULT_CONNECT_TIMEOUT_S;
  if(c->connect_timeout > c->timeout)
    c->connect_timeout = c->timeout;
  c->max_retries =
      cfg->max_retries >= 0 ? cfg->max_retries : DEFAULT_MAX_RETRIES;
  /* what the signature covers: Host and path, as curl will send them */
  if(ddb_sigv4_endpoint(c->s.endpoint, host, sizeof(host), path,
                        sizeof(path))) {
    result = ddb_error_set(err, DDB_ERR_CONFIG,
                           "bad endpoint '%.200s': must be "
                           "http[s]://host[:port][/path], without a query or "
                           "fragment",
                           c->s.endpoint);
    ddb_client_free(c);
    return result;
  }
  c->host_hdr = join3(HOST_HDR, host, "");
  c->sign_path = join3(path, "", "");
  c->sig = signer_new(c->s.access_key, c->s.secret_key, c->s.session_token,
                      c->s.expires);
  if(ddb_place_id(c->s.endpoint, c->s.region, c->place)) {
    ddb_client_free(c); /* (ddb_sigv4_endpoint accepted it above) */
    return ddb_error_set(err, DDB_ERR_CONFIG, "bad endpoint");
  }
  if(!c->host_hdr || !c->sign_path || !c->sig ||
     principal_push(c, c->s.access_key, c->s.secret_key, c->s.session_token)) {
    ddb_client_free(c);
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  }
  *out = c;
  return DDB_OK;
}

/* Free c, its pooled handles and its credentials (wiped); NULL is fine. */
void ddb_client_free(ddb_client *c) {
  int i;
  if(!c)
    return;
  live_set(c, 0);
  for(i = 0; i < c->n_pool; i++)
    curl_easy_cleanup(c->pool[i]);
  pthread_mutex_destroy(&c->lock);
  pthread_mutex_destroy(&c->cred_lock);
  pthread_mutex_destroy(&c->refresh_lock);
  free(c->host_hdr);
  free(c->sign_path);
  signer_free(c->sig);
  while(c->principals) {
    ddb_principal *next = c->principals->next;
    free(c->principals);
    c->principals = next;
  }
  ddb_settings_free(&c->s);
  free(c);
}

/* The resolved endpoint URL (owned by c). */
const char *ddb_client_endpoint(const ddb_client *c) {
  return c->s.endpoint;
}

/* The resolved region (owned by c). */
const char *ddb_client_region(const ddb_client *c) {
  return c->s.region;
}

/* The cache's place and principal ids of c (see ddb_client.h): the
** principal is the newest pushed, read without the lock. */
void ddb_client_scope(const ddb_client *c, const char **place,
                      size_t *place_len, const char **principal,
                      size_t *principal_len) {
  const ddb_principal *pr = __atomic_load_n(&c->principals, __ATOMIC_ACQUIRE);
  *place = (const char *)c->place;
  *place_len = DDB_SCOPE_ID_LEN;
  *principal = (const char *)pr->id;
  *principal_len = DDB_SCOPE_ID_LEN;
}

/* Where the credentials came from (owned by c), never a secret. */
const char *ddb_client_credential_source(const ddb_client *c) {
  return c->s.cred_source;
}

/* ------------------------------------------------------------------------
** Cancelling (see ddb_client.h)
*/
/* The calling thread's hook (ddb_cancel_thread), in a pthread key rather
** than __thread: a dlopen()ed library's __thread block is dynamic TLS, and
** LeakSanitizer (gcc 12, glibc 2.36) crashes walking it at exit. */
typedef struct thread_hook {
  ddb_cancel_fn fn;
  void *ud;
} thread_hook;
static pthread_key_t hook_key;
static pthread_once_t hook_once = PTHREAD_ONCE_INIT;
static int hook_ok; /* hook_key was made */

static void hook_key_init(void) {
  hook_ok = pthread_key_create(&hook_key, free) == 0;
}

/* Set c's cancel hook; call before c is used by other threads. */
void ddb_client_set_cancel(ddb_client *c, ddb_cancel_fn fn, void *ud) {
  c->cancel = fn;
  c->cancel_ud = ud;
}

/* Set the calling thread's cancel hook (NULL: none). */
void ddb_cancel_thread(ddb_cancel_fn fn, void *ud) {
  thread_hook *h;
  pthread_once(&hook_once, hook_key_init);
  if(!hook_ok)
    return;
  h = pthread_getspecific(hook_key);
  if(!h && fn) {
    h = calloc(1, sizeof(*h));
    if(!h || pthread_setspecific(hook_key, h)) {
      free(h);
      return; /* out of memory: the client's hook still applies */
    }
  }
  if(h) {
    h->fn = fn;
    h->ud = ud;
  }
}

/* The calling thread's hook, or NULL. */
static const thread_hook *thread_hook_get(void) {
  const thread_hook *h;
  pthread_once(&hook_once, hook_key_init);
  if(!hook_ok)
    return NULL;
  h = pthread_getspecific(hook_key);
  return h && h->fn ? h : NULL;
}

/* Has this thread's hook, or else c's, said stop? */
int ddb_cancelled(ddb_client *c) {
  const thread_hook *h = thread_hook_get();
  if(h)
    return h->fn(h->ud) != 0;
  return c && c->cancel && c->cancel(c->cancel_ud) != 0;
}

/* A curl handle from c's pool (with its kept-alive connection), or a
** new one; NULL on out of memory. */
static CURL *handle_get(ddb_client *c) {
  CURL *h = NULL;
  pthread_mutex_lock(&c->lock);
  if(c->n_pool > 0)
    h = c->pool[--c->n_pool];
  pthread_mutex_unlock(&c->lock);
  return h ? h : curl_easy_init();
}

/* Give h back to c's pool, or clean it up when the pool is full. */
static void handle_put(ddb_client *c, CURL *h) {
  pthread_mutex_lock(&c->lock);
  if(c->n_pool < POOL_MAX) {
    c->pool[c->n_pool++] = h;
    h = NULL;
  }
  pthread_mutex_unlock(&c->lock);
  if(h)
    curl_easy_cleanup(h);
}

/* ------------------------------------------------------------------------
** One request with retries
*/

/* Where curl's write callback puts a body. */
typedef struct body_sink {
  ddb_buf *b;
  CURL *h;
  int sized; /* room for the whole body was asked for */
} body_sink;

/* curl write callback: append to the ddb_buf of the body_sink ud; past its
** cap, stop (curl then fails with CURLE_WRITE_ERROR).  The first time, room
** for the whole body is taken at once from its Content-Length: no chain of
** doubling reallocs (copies, and pages touched twice) for a 1 MB page. */
static size_t on_body(char *p, size_t size, size_t n, void *ud) {
  body_sink *k = ud;
  if(!k->sized) {
    curl_off_t cl = -1;
    k->sized = 1;
    if(curl_easy_getinfo(k->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) ==
           CURLE_OK &&
       cl > 0 && (size_t)cl > k->b->len && (size_t)cl <= k->b->max)
      ddb_buf_reserve(k->b, (size_t)cl - k->b->len);
  }
  if(ddb_buf_add(k->b, p, size * n))
    return 0;
  return size * n;
}

static int is_throttle(const char *type) {
  return strcmp(type, "ProvisionedThroughputExceededException") == 0 ||
         strcmp(type, "ThrottlingException") == 0 ||
         strcmp(type, "RequestLimitExceeded") == 0 ||
         strcmp(type, "LimitExceededException") == 0;
}

/* Is the curl failure cc worth another attempt (the network, not us)? */
static int curl_retryable(CURLcode cc) {
  switch(cc) {
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_CONNECT:
  case CURLE_OPERATION_TIMEDOUT:
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_GOT_NOTHING:
  case CURLE_PARTIAL_FILE:
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_WEIRD_SERVER_REPLY:
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM:
  case CURLE_BAD_CONTENT_ENCODING: return 1;
  default: return 0;
  }
}

/* Milliseconds on the monotonic clock. */
static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Fill p[0..n) from getrandom(); a clock-and-address mix if the kernel
** has none. */
void ddb_random_bytes(void *p, size_t n) {
  unsigned char *b = p;
  size_t got = 0;
  while(got < n) {
    ssize_t r = getrandom(b + got, n - got, 0);
    if(r > 0)
      got += (size_t)r;
    else if(r < 0 && errno != EINTR)
      break;
  }
  if(got < n) {
    /* no getrandom(): the clocks and the stack, which at least differ
    ** between processes and calls */
    struct timespec ts;
    size_t i;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    for(i = got; i < n; i++)
      b[i] = (unsigned char)((uintptr_t)ts.tv_nsec >> (i % 4 * 8) ^
                             (uintptr_t)time(NULL) ^ (uintptr_t)&ts ^
                             (uintptr_t)getpid() ^ i * 131);
  }
}

/* Sleep a full-jitter backoff for retry number `attempt` (1, 2, ...):
** uniform in [0, min(cap, base * 2^(attempt-1))), in slices of
** DDB_CANCEL_POLL_MS, polling c's cancel hook (c may be NULL).  Returns
** 1 when the hook said stop, else 0. */
static int backoff(ddb_client *c, int attempt, int throttled) {
  double cap = throttled ? BACKOFF_THROTTLE_BASE_MS : BACKOFF_BASE_MS;
  double ms;
  struct timespec ts;
  uint32_t r;
  int i;
  /* the jitter from the kernel at each retry (retries are rare): clients,
  ** threads, parent and child of fork() that fail together must not retry
  ** together (the point of the jitter) */
  ddb_random_bytes(&r, sizeof(r));
  for(i = 1; i < attempt && cap < BACKOFF_CAP_MS; i++)
    cap *= 2;
  if(cap > BACKOFF_CAP_MS)
    cap = BACKOFF_CAP_MS;
  ms = cap * (r / 4294967296.0);
  for(;;) {
    double slice = ms < DDB_CANCEL_POLL_MS ? ms : DDB_CANCEL_POLL_MS;
    if(ddb_cancelled(c))
      return 1;
    if(slice <= 0)
      return 0;
    ts.tv_sec = (time_t)(slice / 1000);
    ts.tv_nsec = (long)((slice - ts.tv_sec * 1000.0) * 1e6);
    nanosleep(&ts, NULL);
    ms -= slice;
  }
}

/* Fill err for a call of operation stopped by the cancel hook. */
static ddb_result cancel_error(ddb_error *err, const char *operation) {
  return ddb_error_set(err, DDB_ERR_CANCELLED, "interrupted: %s stopped",
                       operation);
}

/* Fill err from a DynamoDB error response body (err must not be NULL). */
static void service_error(const ddb_buf *body, int status, ddb_error *err) {
  cJSON *j = body->len ? cJSON_ParseWithLength(body->p, body->len) : NULL;
  const char *type = NULL, *msg = NULL, *hash;
  if(j) {
    type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "__type"));
    msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "message"));
    if(!msg)
      msg =
          cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "Message"));
  }
  if(type && (hash = strrchr(type, '#')) != NULL)
    type = hash + 1;
  if(type)
    ddb_error_set(err, DDB_ERR_SERVICE, "%.90s: %.400s", type,
                  msg ? msg : "(no message)");
  else
    ddb_error_set(err, DDB_ERR_SERVICE, "HTTP %d: %.400s", status,
                  msg ? msg : "unexpected answer");
  /* a cancelled transaction says which item failed, and why */
  if(j) {
    const cJSON *reasons =
        cJSON_GetObjectItemCaseSensitive(j, "CancellationReasons");
    const cJSON *r;
    int i = 0;
    ddb_buf b;
    ddb_buf_init(&b, sizeof(err->message));
    cJSON_ArrayForEach(r, reasons) {
      const char *code =
          cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "Code"));
      i++;
      if(code && strcmp(code, "None") != 0)
        ddb_buf_addf(&b, "%sitem %d: %.60s", b.len ? "; " : "", i, code);
    }
    if(b.len && !b.failed)
      snprintf(err->message, sizeof(err->message), "%.90s: %s",
               type ? type : "TransactionCanceledException", b.p);
    ddb_buf_free(&b);
  }
  copy_str(err->type, sizeof(err->type), type ? type : "");
  err->http_status = status;
  cJSON_Delete(j);
}

/* Fill err from the error body body[0..len) of an HTTP status answer. */
void ddb_error_from_response(const char *body, size_t len, int status,
                             ddb_error *err) {
  ddb_buf b;
  memset(&b, 0, sizeof(b));
  b.p = (char *)body;
  b.len = len;
  service_error(&b, status, err);
}

/* Append printf-style text to err's message, as far as it fits. */
static void error_append(ddb_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void error_append(ddb_error *err, const char *fmt, ...) {
  size_t n = strlen(err->message);
  va_list ap;
  if(n + 1 >= sizeof(err->message))
    return;
  va_start(ap, fmt);
  vsnprintf(err->message + n, sizeof(err->message) - n, fmt, ap);
  va_end(ap);
}

/* Does the x-amz-crc32 header of the last response on h (if any) match
** body?  Returns 1 when it matches or is absent, 0 when not; *want and
** *got hold the two values when it is there. */
static int crc_ok(CURL *h, const ddb_buf *body, unsigned long *want,
                  unsigned long *got) {
  struct curl_header *hh = NULL;
  char *end;
  if(curl_easy_header(h, "x-amz-crc32", 0, CURLH_HEADER, -1, &hh) !=
         CURLHE_OK ||
     !hh || !hh->value)
    return 1;
  *got = ddb_crc32(0, body->p, body->len);
  if(hh->value[0] < '0' || hh->value[0] > '9')
    return 0;
  *want = strtoul(hh->value, &end, 10);
  while(*end == ' ' || *end == '\t')
    end++;
  return *end == 0 && *want == *got;
}

/* curl's debug callback, to see what curl does on its own: on a kept-alive
** connection that dies before any answer, curl sends the request again on
** a fresh connection ("Connection died, retrying a fresh connect").  That
** resend is a retry too (counted, and the request may have been executed
** twice), so *(int *)ud counts them. */
static int on_debug(CURL *h, curl_infotype type, char *data, size_t size,
                    void *ud) {
  static const char died[] = "Connection died, retrying";
  (void)h;
  if(ud && type == CURLINFO_TEXT && size >= sizeof(died) - 1 &&
     memcmp(data, died, sizeof(died) - 1) == 0)
    (*(int *)ud)++;
  return 0;
}

/* Did a conditional PutItem, retried after an attempt whose answer was
** lost, fail its condition only because that attempt wrote the item?
** True when the request's Item equals the Item DynamoDB returned with the
** failure (ReturnValuesOnConditionCheckFailure=ALL_OLD). */
static int put_already_done(const char *body, size_t body_len,
                            const ddb_buf *resp) {
  cJSON *req = cJSON_ParseWithLength(body, body_len);
  cJSON *ans = resp->len ? cJSON_ParseWithLength(resp->p, resp->len) : NULL;
  const cJSON *ri = cJSON_GetObjectItemCaseSensitive(req, "Item");
  const cJSON *ai = cJSON_GetObjectItemCaseSensitive(ans, "Item");
  ddb_item *a = NULL, *b = NULL;
  int same = 0;
  if(ri && ai && ddb_item_decode(ri, &a, NULL) == DDB_OK &&
     ddb_item_decode(ai, &b, NULL) == DDB_OK)
    same = ddb_av_equal(&a->root, &b->root);
  ddb_item_unref(a);
  ddb_item_unref(b);
  cJSON_Delete(req);
  cJSON_Delete(ans);
  return same;
}

ddb_result ddb_call(ddb_client *c, const char *operation, const char *table,
                    const char *index, int continuation, const char *body,
                    size_t body_len, cJSON **out, ddb_error *err) {
  call_info ci;
  memset(&ci, 0, sizeof(ci));
  ci.operation = operation;
  ci.table = table;
  ci.index = index;
  ci.continuation = continuation;
  return ddb_http_call(c, &ci, body, body_len, out, err);
}

/* The client's max_retries. */
int ddb_client_max_retries(const ddb_client *c) {
  return c->max_retries;
}

/* Sleep the full-jitter backoff of retry number attempt (1, 2, ...),
** polling c's cancel hook (see ddb_client_int.h). */
ddb_result ddb_backoff(ddb_client *c, const char *operation, int attempt,
                       int throttled, ddb_error *err) {
  if(backoff(c, attempt, throttled))
    return cancel_error(err, operation);
  return DDB_OK;
}

/* What curl's transfer callback polls: the cancel hook, and how much of
** the request went out. */
typedef struct xfer_state {
  ddb_client *c;
  double next_ms;  /* no poll of the hook before this */
  curl_off_t sent; /* request body bytes sent so far */
  int cancelled;
} xfer_state;

/* curl's transfer callback: stop the transfer (non-zero) when the cancel
** hook says so, polled at most every DDB_CANCEL_POLL_MS.  curl calls it
** often while bytes move and about once a second while it waits. */
static int on_xfer(void *ud, curl_off_t dltotal, curl_off_t dlnow,
                   curl_off_t ultotal, curl_off_t ulnow) {
  xfer_state *x = ud;
  double t;
  (void)dltotal;
  (void)dlnow;
  (void)ultotal;
  if(ulnow > x->sent)
    x->sent = ulnow;
  t = now_ms();
  if(t < x->next_ms)
    return 0;
  x->next_ms = t + DDB_CANCEL_POLL_MS;
  if(ddb_cancelled(x->c)) {
    x->cancelled = 1;
    return 1;
  }
  return 0;
}

/* A timeout of s seconds as curl's milliseconds: at least 1 (curl reads
** 0 as no timeout at all) and at most a day's worth. */
static long ms_option(double s) {
  double ms = s * 1000;
  if(!(ms >= 1))
    return 1;
  return ms > 86400e3 ? 86400000L : (long)ms;
}

/* The verdict on one attempt. */
typedef enum { ATTEMPT_DONE, ATTEMPT_FAIL, ATTEMPT_RETRY } attempt_verdict;

/* Send one attempt on h, signed with g; fill resp, *status, *out (on
** success) and e (on failure).  *throttled, *ambiguous (the request may
** have been executed) and *expired (the token expired) describe a
** failure; *resent counts the times curl sent it again by itself. */
static attempt_verdict attempt_once(ddb_client *c, CURL *h, const signer *g,
                                    call_info *ci, const char *url,
                                    const char *body, size_t body_len,
                                    ddb_buf *resp, int *status, cJSON **out,
                                    int *throttled, int *ambiguous,
                                    int *expired, int *resent, ddb_error *e) {
  struct curl_slist *hdrs = NULL, *x;
  char target[96], errbuf[CURL_ERROR_SIZE];
  char date[DATE_HDR_LEN + DDB_SIGV4_DATE_LEN] = DATE_HDR;
  char auth[AUTH_HDR_LEN + DDB_SIGV4_AUTH_MAX] = AUTH_HDR;
  const char *lines[6];
  int i;
  CURLcode cc;
  long code = 0;
  unsigned long want = 0, got = 0;
  attempt_verdict v;
  body_sink sink = {.b = resp, .h = h};
  xfer_state xs = {.c = c};

  *status = 0;
  errbuf[0] = 0;
  snprintf(target, sizeof(target), TARGET_HDR "DynamoDB_20120810.%.60s",
           ci->operation);
  /* signed with the clock of this attempt (a retry is signed again) */
  if(ddb_sigv4_amz_date(time(NULL), date + DATE_HDR_LEN) ||
     ddb_sigv4_sign_json(
         g->keys, c->s.region, "dynamodb", date + DATE_HDR_LEN, c->sign_path,
         CONTENT_TYPE, c->host_hdr + HOST_HDR_LEN, target + TARGET_HDR_LEN,
         body, body_len, auth + AUTH_HDR_LEN, sizeof(auth) - AUTH_HDR_LEN)) {
    ddb_error_set(e, DDB_ERR_CONFIG,
                  "cannot sign %s: the clock, the region or the access key "
                  "id is out of range",
                  ci->operation);
    return ATTEMPT_FAIL;
  }
  lines[0] = "Content-Type: " CONTENT_TYPE;
  lines[1] = c->host_hdr;
  lines[2] = date;
  lines[3] = target;
  lines[4] = auth;
  lines[5] = g->token_hdr; /* NULL without a token */
  for(i = 0; i < 6 && lines[i]; i++) {
    x = curl_slist_append(hdrs, lines[i]);
    if(!x)
      break;
    hdrs = x;
  }
  if(i < 6 && lines[i]) {
    curl_slist_free_all(hdrs);
    ddb_error_set(e, DDB_ERR_NOMEM, "out of memory");
    return ATTEMPT_FAIL;
  }
  ddb_buf_reset(resp);
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms_option(c->timeout));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                   ms_option(c->connect_timeout));
  /* the cancel hook, polled while the request is on the wire */
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_xfer);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &xs);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS,
                   thread_hook_get() || c->cancel ? 0L : 1L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  /* identity: x-amz-crc32 covers the bytes as sent */
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, NULL);
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)RESPONSE_MAX);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
  if(c->s.ca_bundle)
    curl_easy_setopt(h, CURLOPT_CAINFO, c->s.ca_bundle);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, on_debug);
  curl_easy_setopt(h, CURLOPT_DEBUGDATA, resent);
  curl_easy_setopt(h, CURLOPT_VERBOSE, 1L);
  cc = curl_easy_perform(h);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
  curl_easy_setopt(h, CURLOPT_VERBOSE, 0L);
  curl_easy_setopt(h, CURLOPT_DEBUGDATA, NULL);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, NULL);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 1L);
  curl_slist_free_all(hdrs);
  if(*resent)
    *ambiguous = 1;
  if(cc == CURLE_ABORTED_BY_CALLBACK && xs.cancelled) {
    /* stopped by the hook: once any of the body went out, DynamoDB may
    ** have it all (and execute it) */
    cancel_error(e, ci->operation);
    if(xs.sent > 0)
      *ambiguous = 1;
    return ATTEMPT_FAIL;
  }
  if(cc == CURLE_OK)
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
  *status = (int)code;

  if(cc == CURLE_FILESIZE_EXCEEDED ||
     (cc == CURLE_WRITE_ERROR && resp->failed)) {
    ddb_error_set(e, DDB_ERR_PARSE,
                  "the response to %s is larger than %u bytes", ci->operation,
                  RESPONSE_MAX);
    return ATTEMPT_FAIL;
  }
  if(cc != CURLE_OK) {
    ddb_error_set(e, DDB_ERR_NETWORK, "%s to %s failed: %s", ci->operation,
                  c->s.endpoint, curl_easy_strerror(cc));
    /* curl's details, e.g. "Recv failure: Connection reset by peer" */
    if(errbuf[0] && cc != CURLE_COULDNT_CONNECT &&
       strcmp(errbuf, curl_easy_strerror(cc)) != 0)
      error_append(e, " (%.200s)", errbuf);
    if(cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE)
      error_append(e, " (to trust another CA, set ca_bundle= or "
                      "AWS_CA_BUNDLE)");
    *ambiguous |= cc != CURLE_COULDNT_CONNECT &&
                  cc != CURLE_COULDNT_RESOLVE_HOST &&
                  cc != CURLE_SSL_CONNECT_ERROR;
    return curl_retryable(cc) ? ATTEMPT_RETRY : ATTEMPT_FAIL;
  }
  if(!crc_ok(h, resp, &want, &got)) {
    /* damaged on the way: the answer is lost, the request may be done */
    ddb_error_set(e, DDB_ERR_NETWORK,
                  "the response to %s failed its x-amz-crc32 check "
                  "(header %lu, body %lu)",
                  ci->operation, want, got);
    e->http_status = *status;
    *ambiguous = 1;
    return ATTEMPT_RETRY;
  }
  if(code == 200 && ci->take) {
    int malformed = 0;
    if(ci->take(ci, resp->p ? resp->p : "", resp->len, &malformed, e) ==
       DDB_OK)
      return ATTEMPT_DONE;
    if(!malformed)
      return ATTEMPT_FAIL;
    /* a body that does not parse was cut short or damaged: retry */
    ddb_error_set(e, DDB_ERR_PARSE, "malformed response to %s (%zu bytes)",
                  ci->operation, resp->len);
    *ambiguous = 1;
    return ATTEMPT_RETRY;
  }
  if(code == 200) {
    *out = cJSON_ParseWithLength(resp->p ? resp->p : "", resp->len);
    if(cJSON_IsObject(*out))
      return ATTEMPT_DONE;
    cJSON_Delete(*out);
    *out = NULL;
    /* a body that does not parse was cut short or damaged: retry */
    ddb_error_set(e, DDB_ERR_PARSE, "malformed response to %s (%zu bytes)",
                  ci->operation, resp->len);
    *ambiguous = 1;
    return ATTEMPT_RETRY;
  }
  service_error(resp, *status, e);
  *throttled = is_throttle(e->type) || code == 429;
  if(*throttled)
    return ATTEMPT_RETRY;
  if(code >= 500) {
    *ambiguous = 1;
    return ATTEMPT_RETRY;
  }
  if(strcmp(e->type, "TransactionInProgressException") == 0)
    return ATTEMPT_RETRY;
  if(strcmp(e->type, "ExpiredTokenException") == 0 &&
     c->s.src.kind != DDB_CRED_STATIC && !*expired) {
    *expired = 1;
    return ATTEMPT_RETRY;
  }
  v = ATTEMPT_FAIL;
  if(*ambiguous && strcmp(e->type, "ConditionalCheckFailedException") == 0 &&
     strcmp(ci->operation, "PutItem") == 0 &&
     put_already_done(body, body_len, resp)) {
    *out = cJSON_CreateObject();
    v = *out ? ATTEMPT_DONE : ATTEMPT_FAIL;
  }
  return v;
}

/* See the declaration above: one call with its retries, logged and
** counted. */
ddb_result ddb_http_call(ddb_client *c, call_info *ci, const char *body,
                         size_t body_len, cJSON **out, ddb_error *err) {
  CURL *h = NULL;
  ddb_buf resp;
  char url[2048];
  ddb_result result = DDB_OK;
  ddb_log_entry le;
  ddb_error local, *e = err;
  signer *g = NULL;
  double t0 = now_ms();
  int attempt = 0, status = 0, throttles = 0, sent = 0, ambiguous = 0;
  int expired = 0;

  *out = NULL;
  memset(&local, 0, sizeof(local));
  if(!e)
    e = &local;
  ddb_buf_init(&resp, RESPONSE_MAX);
  memset(&le, 0, sizeof(le));
  copy_str(le.operation, sizeof(le.operation), ci->operation);
  copy_str(le.table, sizeof(le.table), ci->table);
  copy_str(le.index, sizeof(le.index), ci->index);
  le.continuation = ci->continuation;
  le.items = -1;

  if(snprintf(url, sizeof(url), "%s/", c->s.endpoint) >= (int)sizeof(url)) {
    result = ddb_error_set(e, DDB_ERR_CONFIG, "endpoint too long");
    goto fail;
  }
  h = handle_get(c);
  if(!h) {
    result = ddb_error_set(e, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }

  for(attempt = 0;; attempt++) {
    int throttled = 0, was_expired = expired, resent = 0;
    attempt_verdict v;
    ddb_error_clear(e);
    if(ddb_cancelled(c)) {
      result = cancel_error(e, ci->operation);
      break;
    }
    result = signer_acquire(c, &g, e);
    if(result)
      break;
    v = attempt_once(c, h, g, ci, url, body, body_len, &resp, &status, out,
                     &throttled, &ambiguous, &expired, &resent, e);
    signer_release(c, g);
    g = NULL;
    sent += 1 + resent;
    throttles += throttled;
    if(v == ATTEMPT_DONE) {
      result = DDB_OK;
      break;
    }
    result = e->code ? e->code : DDB_ERR_SERVICE;
    if(v == ATTEMPT_FAIL || attempt >= c->max_retries)
      break;
    if(expired && !was_expired) {
      /* the token ran out under us: fetch new credentials, go again */
      pthread_mutex_lock(&c->cred_lock);
      c->force_refresh = 1;
      pthread_mutex_unlock(&c->cred_lock);
      continue;
    }
    if(backoff(c, attempt + 1, throttled)) {
      result = cancel_error(e, ci->operation);
      break;
    }
  }
  le.retries = sent > 0 ? sent - 1 : 0;
  e->retries = le.retries;
  if(result) {
    int write = strstr(ci->operation, "Write") ||
                strcmp(ci->operation, "PutItem") == 0 ||
                strcmp(ci->operation, "UpdateItem") == 0 ||
                strcmp(ci->operation, "DeleteItem") == 0;
    if(!e->http_status)
      e->http_status = status;
    if(le.retries > 0)
      error_append(e, " (after %d retr%s)", le.retries,
                   le.retries == 1 ? "y" : "ies");
    e->maybe_applied = ambiguous && write;
    if(e->maybe_applied)
      error_append(e, "; the write may have been applied");
    else if(write && result == DDB_ERR_CANCELLED)
      error_append(e, "; the write was not applied");
  }

fail:
  le.http_status = status;
  le.ms = now_ms() - t0;
  if(ci->take && result == DDB_OK) {
    le.items = ci->items;
  } else if(*out) {
    cJSON *cnt = cJSON_GetObjectItemCaseSensitive(*out, "Count");
    cJSON *item = cJSON_GetObjectItemCaseSensitive(*out, "Item");
    if(cJSON_IsNumber(cnt))
      le.items = cnt->valueint;
    else if(strcmp(ci->operation, "GetItem") == 0)
      le.items = item ? 1 : 0;
  }
  log_add(&le);
  if(sent)
    stats_add(ci->operation, sent, throttles,
              ci->take ? (result == DDB_OK ? ci->consumed : 0)
              : *out   ? ddb_answer_consumed(*out)
                       : 0);
  if(h)
    handle_put(c, h);
  ddb_buf_free(&resp);
  return result;
}
