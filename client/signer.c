/*
** signer.c -- a client's signing credentials, refreshed before they
** expire, and the signed headers of one request.
**
** The signing credentials are a reference-counted `ddb_signer` that a
** request takes under cred_lock and keeps for one attempt.  Temporary
** credentials (credential_process, container, instance metadata) are
** fetched again REFRESH_AHEAD_S before they expire, by one thread at a
** time (refresh_lock); the others keep signing with the old ones while
** those are still good for GRACE_S.  A failed refresh is tried again
** after REFRESH_RETRY_S; once the old credentials are within GRACE_S of
** expiring, the failure is the request's error.  DynamoDB's
** ExpiredTokenException sets force_refresh (http.c).
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

/* Temporary credentials: refresh this long before they expire; keep the
** old ones for requests until this close to expiring; after a failed
** refresh, wait this long before the next try. */
#define REFRESH_AHEAD_S 300
#define GRACE_S         60
#define REFRESH_RETRY_S 10

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
  if(ddb_tier_root(c->s.endpoint, c->s.region, ak, sk, token, pr->tier))
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
  ddb_signer *g = NULL, *old;
  ddb_result result = ddb_creds_fetch(&c->s.src, &fresh, err);
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
  ddb_signer_release(c, old);
  return result;
}

/* See http_int.h: a reference to c's signing credentials, refreshed when
** they are about to expire. */
ddb_result ddb_signer_acquire(ddb_client *c, ddb_signer **out,
                              ddb_error *err) {
  int64_t now = wall_now();
  ddb_signer *g;
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

/* See http_int.h: the signed header list of one attempt. */
ddb_result ddb_sign_request(const ddb_client *c, const ddb_signer *g,
                            const char *operation, const char *body,
                            size_t body_len, struct curl_slist **out,
                            ddb_error *err) {
  struct curl_slist *hdrs = NULL, *x;
  char target[96];
  char date[DATE_HDR_LEN + DDB_SIGV4_DATE_LEN] = DATE_HDR;
  char auth[AUTH_HDR_LEN + DDB_SIGV4_AUTH_MAX] = AUTH_HDR;
  const char *lines[6];
  int i;

  *out = NULL;
  snprintf(target, sizeof(target), TARGET_HDR "DynamoDB_20120810.%.60s",
           operation);
  /* signed with the clock of this attempt (a retry is signed again) */
  if(ddb_sigv4_amz_date(time(NULL), date + DATE_HDR_LEN) ||
     ddb_sigv4_sign_json(
         g->keys, c->s.region, "dynamodb", date + DATE_HDR_LEN, c->sign_path,
         CONTENT_TYPE, c->host_hdr + DDB_HOST_HDR_LEN, target + TARGET_HDR_LEN,
         body, body_len, auth + AUTH_HDR_LEN, sizeof(auth) - AUTH_HDR_LEN))
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "cannot sign %s: the clock, the region or the access "
                         "key id is out of range",
                         operation);
  lines[0] = "Content-Type: " CONTENT_TYPE;
  lines[1] = c->host_hdr;
  lines[2] = date;
  lines[3] = target;
  lines[4] = auth;
  lines[5] = g->token_hdr; /* NULL without a token */
  for(i = 0; i < 6 && lines[i]; i++) {
    x = curl_slist_append(hdrs, lines[i]);
    if(!x) {
      curl_slist_free_all(hdrs);
      return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    }
    hdrs = x;
  }
  *out = hdrs;
  return DDB_OK;
}
