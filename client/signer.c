/*
** signer.c -- a client's signing credentials, refreshed before they
** expire, and the signed headers of one request.
**
** The signing credentials are a reference-counted `ddb_signer` that a
** request takes under cred_lock and keeps for one attempt.  Temporary
** credentials (credential_process, container, instance metadata) are
** refreshed with botocore's windows, one thread at a time (refresh_lock):
**
**   * ADVISORY_S (15 min) before they expire, one thread refreshes while
**     the others go on signing with the current ones;
**   * MANDATORY_S (10 min) before, every thread waits for the refresh
**     (and then finds it done);
**   * at most one refresh a REFRESH_MIN_S while the current ones are still
**     valid, whatever their window: a source that hands out credentials
**     good for 4 minutes is asked again once a minute, not per request;
**   * a failed refresh keeps credentials that are still valid;
**   * credentials that have expired (or that DynamoDB refused as expired:
**     ExpiredTokenException sets force_refresh, http.c) are never used to
**     sign: each request then waits for a refresh, and fails with an
**     error naming the source and the expiry when there is none.
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
*/
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddb_client_int.h"
#include "http_int.h"
#include "sigv4.h"

/* Temporary credentials: botocore's advisory and mandatory refresh
** windows before they expire, and the least time between two refreshes
** while they are still valid. */
#define ADVISORY_S    (15 * 60)
#define MANDATORY_S   (10 * 60)
#define REFRESH_MIN_S 60

/* The headers ddb_sign_request() signs and sets, and the lengths of their
** names (the values follow). */
#define CONTENT_TYPE   "application/x-amz-json-1.0"
#define DATE_HDR       "X-Amz-Date: "
#define DATE_HDR_LEN   (sizeof(DATE_HDR) - 1)
#define TARGET_HDR     "X-Amz-Target: "
#define TARGET_HDR_LEN (sizeof(TARGET_HDR) - 1)
#define AUTH_HDR       "Authorization: "
#define AUTH_HDR_LEN   (sizeof(AUTH_HDR) - 1)

/* See http_int.h: push the principal of (ak, sk, token) on c's list. */
int ddb_principal_push(ddb_client *c, const char *ak, const char *sk,
                       const char *token) {
  ddb_principal *pr = ddb_principal_new(ak, sk, token);
  if(!pr)
    return -1;
  /* the shared tier's key (an endpoint ddb_client_new accepted is good) */
  if(ddb_tier_root(c->s.ep.canonical, c->s.region, ak, sk, token, pr->tier))
    memset(pr->tier, 0, sizeof(pr->tier));
  if(c->principals &&
     memcmp(c->principals->id, pr->id, DDB_SCOPE_ID_LEN) == 0) {
    free(pr);
    return 0;
  }
  pr->next = c->principals;
  __atomic_store_n(&c->principals, pr, __ATOMIC_RELEASE);
  return 0;
}

/* Free a signer (its secrets and derived keys wiped); NULL is fine. */
void ddb_signer_free(ddb_signer *g) {
  if(!g)
    return;
  ddb_sigv4_free(g->keys);
  ddb_wipe_free(g->token_hdr);
  free(g);
}

/* A new signer (one reference) for the given credentials, or NULL on out
** of memory. */
ddb_signer *ddb_signer_new(const char *ak, const char *sk, const char *token,
                           int64_t expires) {
  ddb_signer *g = calloc(1, sizeof(*g));
  const char *tok;
  if(!g)
    return NULL;
  g->refs = 1;
  g->expires = expires;
  g->keys = ddb_sigv4_new(ak, sk, token);
  if(!g->keys) {
    ddb_signer_free(g);
    return NULL;
  }
  /* the token as signed: trimmed, blank runs folded */
  tok = ddb_sigv4_token(g->keys);
  if(tok) {
    g->token_hdr = ddb_concat("X-Amz-Security-Token: ", tok);
    if(!g->token_hdr) {
      ddb_signer_free(g);
      return NULL;
    }
  }
  return g;
}

/* Drop a reference taken by ddb_signer_acquire() (NULL is fine). */
void ddb_signer_release(ddb_client *c, ddb_signer *g) {
  int last;
  if(!g)
    return;
  pthread_mutex_lock(&c->cred_lock);
  last = --g->refs == 0;
  pthread_mutex_unlock(&c->cred_lock);
  if(last)
    ddb_signer_free(g);
}

/* Seconds since the epoch. */
static int64_t wall_now(void) {
  return (int64_t)time(NULL);
}

/* What a request must do about c's credentials g at now (cred_lock
** held). */
enum { KEEP, REFRESH_ADVISORY, REFRESH_MANDATORY };
static int do_refresh_state(const ddb_client *c, const ddb_signer *g,
                            int64_t now) {
  if(c->s.src.kind == DDB_CRED_STATIC)
    return KEEP;
  if(c->force_refresh || (g->expires && now >= g->expires))
    return REFRESH_MANDATORY; /* never signed with */
  if(!g->expires || now + ADVISORY_S < g->expires)
    return KEEP;
  if(now < c->s.fetched + REFRESH_MIN_S || now < c->next_refresh)
    return KEEP; /* still valid, and refreshed a moment ago */
  return now + MANDATORY_S >= g->expires ? REFRESH_MANDATORY
                                         : REFRESH_ADVISORY;
}

/* Stop hook of a refresh (ud: the client): the thread's or c's hook. */
static int refresh_stopped(void *ud) {
  return ddb_cancelled(ud);
}

/* Fetch fresh credentials and swap them in (the caller holds
** refresh_lock).  On failure the old ones stay.  Either way the next
** refresh waits REFRESH_MIN_S while the credentials are valid.  Returns
** DDB_OK or the fetch's error. */
static ddb_result refresh(ddb_client *c, ddb_error *err) {
  ddb_creds fresh;
  ddb_signer *g = NULL, *old;
  ddb_result result;
  int forced;
  pthread_mutex_lock(&c->cred_lock);
  forced = c->force_refresh;
  pthread_mutex_unlock(&c->cred_lock);
  if(forced) /* refused as expired: not from the process's memo again */
    ddb_creds_memo_drop(&c->s.src);
  result = ddb_creds_fetch(&c->s.src, refresh_stopped, c, &fresh, err);
  if(result == DDB_OK) {
    g = ddb_signer_new(fresh.access_key, fresh.secret_key, fresh.session_token,
                       fresh.expires);
    if(!g)
      result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  }
  pthread_mutex_lock(&c->cred_lock);
  if(g && ddb_principal_push(c, fresh.access_key, fresh.secret_key,
                             fresh.session_token)) {
    ddb_signer_free(g); /* out of memory: keep the old credentials */
    g = NULL;
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  }
  ddb_creds_clear(&fresh);
  old = NULL;
  if(g) {
    old = c->sig;
    c->sig = g;
    c->force_refresh = 0;
  }
  c->next_refresh = wall_now() + REFRESH_MIN_S;
  pthread_mutex_unlock(&c->cred_lock);
  ddb_signer_release(c, old);
  return result;
}

/* The error of a request whose credentials g expired (or were refused as
** expired) and could not be refreshed (why: e). */
static ddb_result expired_error(const ddb_client *c, const ddb_signer *g,
                                int refused, const ddb_error *e,
                                ddb_error *err) {
  char when[32];
  if(e->code == DDB_ERR_CANCELLED)
    return ddb_error_set(err, e->code, "%s", e->message);
  ddb_creds_time(g->expires, when, sizeof(when));
  if(refused)
    return ddb_error_set(err, e->code ? e->code : DDB_ERR_CONFIG,
                         "the credentials from %s were refused as expired "
                         "and could not be refreshed: %s",
                         c->s.cred_source, e->message);
  return ddb_error_set(err, e->code ? e->code : DDB_ERR_CONFIG,
                       "the credentials from %s expired at %s and could not "
                       "be refreshed: %s",
                       c->s.cred_source, when, e->message);
}

/* See http_int.h: a reference to c's signing credentials, refreshed as the
** top of the file says; never expired ones. */
ddb_result ddb_signer_acquire(ddb_client *c, ddb_signer **out,
                              ddb_error *err) {
  int64_t now = wall_now();
  ddb_signer *g;
  int state, refused;
  ddb_result result = DDB_OK;
  ddb_error e;

  *out = NULL;
  ddb_error_clear(&e);
  pthread_mutex_lock(&c->cred_lock);
  state = do_refresh_state(c, c->sig, now);
  pthread_mutex_unlock(&c->cred_lock);
  if(state == REFRESH_ADVISORY &&
     pthread_mutex_trylock(&c->refresh_lock) == 0) {
    /* one thread refreshes; the others go on with valid credentials */
    pthread_mutex_lock(&c->cred_lock);
    state = do_refresh_state(c, c->sig, now);
    pthread_mutex_unlock(&c->cred_lock);
    if(state != KEEP)
      refresh(c, &e); /* a failure keeps the valid ones */
    pthread_mutex_unlock(&c->refresh_lock);
  } else if(state == REFRESH_MANDATORY) {
    /* wait for the thread that refreshes, or refresh */
    pthread_mutex_lock(&c->refresh_lock);
    pthread_mutex_lock(&c->cred_lock);
    state = do_refresh_state(c, c->sig, now);
    pthread_mutex_unlock(&c->cred_lock);
    if(state != KEEP)
      refresh(c, &e);
    pthread_mutex_lock(&c->cred_lock);
    g = c->sig;
    refused = c->force_refresh;
    if(refused || (g->expires && wall_now() >= g->expires))
      result = expired_error(c, g, refused, &e, err);
    pthread_mutex_unlock(&c->cred_lock);
    pthread_mutex_unlock(&c->refresh_lock);
    if(result)
      return result;
  }
  pthread_mutex_lock(&c->cred_lock);
  g = c->sig;
  g->refs++;
  pthread_mutex_unlock(&c->cred_lock);
  *out = g;
  return DDB_OK;
}

_Static_assert(sizeof(((ddb_sign_hdrs *)0)->date) >=
                   DATE_HDR_LEN + DDB_SIGV4_DATE_LEN,
               "X-Amz-Date line");
_Static_assert(sizeof(((ddb_sign_hdrs *)0)->auth) >=
                   AUTH_HDR_LEN + DDB_SIGV4_AUTH_MAX,
               "Authorization line");
_Static_assert(sizeof(((ddb_sign_hdrs *)0)->target) >=
                   TARGET_HDR_LEN + sizeof("DynamoDBStreams_20120810.") + 60,
               "X-Amz-Target line");

/* Append s[0..n) at *p, which has room (the caller checked). */
static char *put(char *p, const char *s, size_t n) {
  memcpy(p, s, n);
  return p + n;
}

/* See http_int.h: the signed headers of one attempt, in h's own buffers
** and list nodes: nothing allocated, nothing formatted with printf. */
ddb_result ddb_sign_request(const ddb_client *c, const ddb_signer *g,
                            const char *operation, int streams,
                            const char *body, size_t body_len,
                            ddb_sign_hdrs *h, ddb_error *err) {
  static char content_type[] = "Content-Type: " CONTENT_TYPE;
  static const char ddb_target[] = "DynamoDB_20120810.";
  static const char streams_target[] = "DynamoDBStreams_20120810.";
  const ddb_endpoint *ep = streams ? &c->s.streams_ep : &c->s.ep;
  size_t n_op = strnlen(operation, 60), n;
  char *lines[6], *p;
  int i, rc;

  /* X-Amz-Target: DynamoDB[Streams]_20120810.<operation> */
  p = put(h->target, TARGET_HDR, TARGET_HDR_LEN);
  p = streams ? put(p, streams_target, sizeof(streams_target) - 1)
              : put(p, ddb_target, sizeof(ddb_target) - 1);
  *put(p, operation, n_op) = 0;
  /* Host: as the endpoint gives it (the client's own line for DynamoDB's) */
  if(streams) {
    n = strlen(ep->host);
    if(n >= sizeof(h->host) - DDB_HOST_HDR_LEN)
      return ddb_error_set(err, DDB_ERR_CONFIG, "endpoint host too long");
    *put(put(h->host, DDB_HOST_HDR, DDB_HOST_HDR_LEN), ep->host, n) = 0;
    lines[1] = h->host;
  } else
    lines[1] = c->host_hdr;
  memcpy(h->date, DATE_HDR, DATE_HDR_LEN);
  memcpy(h->auth, AUTH_HDR, AUTH_HDR_LEN);
  /* signed with the clock of this attempt (a retry is signed again),
  ** corrected by what the server said of its own (http.c) */
  rc = ddb_sigv4_amz_date(
      time(NULL) + (time_t)__atomic_load_n(&c->clock_skew, __ATOMIC_RELAXED),
      h->date + DATE_HDR_LEN);
  if(rc == 0)
    rc = ddb_sigv4_sign_json(
        g->keys, c->s.region, "dynamodb", h->date + DATE_HDR_LEN,
        ep->sign_path, CONTENT_TYPE, lines[1] + DDB_HOST_HDR_LEN,
        h->target + TARGET_HDR_LEN, body, body_len, h->auth + AUTH_HDR_LEN,
        sizeof(h->auth) - AUTH_HDR_LEN);
  if(rc == DDB_SIGV4_NOMEM)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory signing %s",
                         operation);
  if(rc)
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "cannot sign %s: the clock, the region or the access "
                         "key id is out of range",
                         operation);
  lines[0] = content_type;
  lines[2] = h->date;
  lines[3] = h->target;
  lines[4] = h->auth;
  lines[5] = g->token_hdr; /* NULL without a token */
  for(i = 0; i < 6 && lines[i]; i++) {
    h->node[i].data = lines[i];
    h->node[i].next = NULL;
    if(i > 0)
      h->node[i - 1].next = &h->node[i];
  }
  return DDB_OK;
}

/* See http_int.h: the Authorization line (the access key id and the
** signature) wiped; the token's line is the signer's. */
void ddb_sign_hdrs_wipe(ddb_sign_hdrs *h) {
  explicit_bzero(h->auth, sizeof(h->auth));
}
