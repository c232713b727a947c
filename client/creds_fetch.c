/*
** creds_fetch.c -- fetching a credential source again, whatever its kind
** (ddb_creds_fetch: signer.c calls it before credentials expire, the
** chain when it sets a source up), and freeing one.
**
** An AssumeRole's source credentials are kept in src->held and fetched
** again from src->inner only when they near their own expiry
** (SOURCE_MARGIN_S, botocore's advisory window), so a chain of hops costs
** one STS call per hop per refresh at most, and the signer's windows
** (signer.c) decide when a refresh happens at all.  This file calls the
** sources' files (creds_process.c, creds_meta.c, creds_sts.c,
** creds_sso.c); none of them calls it back.
**
** The process's memo.  Every virtual table (and every dyn_client) has a
** client of its own, and each resolves its credentials: without a memo, a
** program that opens a connection per request would call STS per
** request.  So the credentials of an AssumeRole, web identity or IAM
** Identity Center fetch are kept for the process, under the HMAC
** (ddb_scope_hash) of everything the call depends on: the kind, STS's
** endpoint and region, the role, the session name (unless botocore's
** default, drawn per source), the external id, the duration, the token
** file, and for AssumeRole the source credentials themselves (so two
** principals never share one entry); for SSO the sso-session (or start
** URL), region, account, role, portal and token cache file.  A fetch with the same settings gets them while they are good
** for MEMO_MARGIN_S more (a minute past the signer's advisory window, so
** the signer's own refresh finds the memo stale and calls STS once);
** MEMO_MAX entries at most, the one that expires first replaced.
** Credentials DynamoDB refused as expired are dropped from it
** (ddb_creds_memo_drop).  memo_lock is a leaf: nothing else is taken while
** it is held (DDB_LIVE_CREDS in live.c's list).
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddb_client_int.h"

#define SOURCE_MARGIN_S (15 * 60)
#define MEMO_MARGIN_S   (SOURCE_MARGIN_S + 60)
#define MEMO_MAX        64

/* ------------------------------------------------------------------------
** The memo
*/
typedef struct memo_entry {
  unsigned char key[DDB_SCOPE_ID_LEN];
  ddb_creds creds; /* access_key NULL: a free slot */
} memo_entry;

static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static memo_entry memo[MEMO_MAX]; /* memo_lock */

static void memo_fork_lock(void *obj) {
  (void)obj;
  pthread_mutex_lock(&memo_lock);
}
static void memo_fork_unlock(void *obj) {
  (void)obj;
  pthread_mutex_unlock(&memo_lock);
}
static const ddb_live_ops memo_live_ops = {DDB_LIVE_CREDS, memo_fork_lock,
                                           memo_fork_unlock, NULL};
static ddb_live memo_live;
static pthread_once_t memo_once = PTHREAD_ONCE_INIT;
static void memo_init_once(void) {
  ddb_live_add(&memo_live, &memo_live_ops, NULL);
}

/* The memo's key of a fetch of src (AssumeRole: signed with signer) in out.
** Returns 0, or -1 when src is not kept (another kind) or libcrypto
** fails. */
static int memo_key(const ddb_cred_source *src, const ddb_creds *signer,
                    unsigned char *out) {
  const char *p[11];
  size_t n[11];
  char kind[4], dur[16];
  int i, np = 11;
  if(src->kind == DDB_CRED_SSO && src->sso) {
    np = ddb_sso_source_parts(src->sso, p + 1) + 1;
    p[0] = "sso";
    for(i = 0; i < np; i++) {
      if(!p[i])
        p[i] = "";
      n[i] = strlen(p[i]);
    }
    return ddb_scope_hash('M', p, n, np, out);
  }
  if(src->kind != DDB_CRED_ROLE && src->kind != DDB_CRED_WEB_IDENTITY)
    return -1;
  snprintf(kind, sizeof(kind), "%d", (int)src->kind);
  snprintf(dur, sizeof(dur), "%d", src->duration);
  p[0] = kind;
  p[1] = src->url;
  p[2] = src->region;
  p[3] = src->role_arn;
  p[4] = src->session_drawn ? "" : src->session_name;
  p[5] = src->external_id;
  p[6] = dur;
  p[7] = src->token_file;
  p[8] = signer ? signer->access_key : NULL;
  p[9] = signer ? signer->secret_key : NULL;
  p[10] = signer ? signer->session_token : NULL;
  for(i = 0; i < np; i++) {
    if(!p[i])
      p[i] = "";
    n[i] = strlen(p[i]);
  }
  return ddb_scope_hash('M', p, n, np, out);
}

/* A copy of c into *out (malloc'ed strings): 0, or -1 out of memory. */
static int creds_copy(ddb_creds *out, const ddb_creds *c) {
  memset(out, 0, sizeof(*out));
  out->access_key = ddb_strdup(c->access_key);
  out->secret_key = ddb_strdup(c->secret_key);
  if(c->session_token)
    out->session_token = ddb_strdup(c->session_token);
  out->expires = c->expires;
  if(!out->access_key || !out->secret_key ||
     (c->session_token && !out->session_token)) {
    ddb_creds_clear(out);
    return -1;
  }
  return 0;
}

/* The memo's credentials under key into *out while they are good for
** MEMO_MARGIN_S more: 1, else 0. */
static int memo_get(const unsigned char *key, ddb_creds *out) {
  int64_t now = (int64_t)time(NULL);
  int i, hit = 0;
  pthread_once(&memo_once, memo_init_once);
  pthread_mutex_lock(&memo_lock);
  for(i = 0; i < MEMO_MAX && !hit; i++)
    if(memo[i].creds.access_key &&
       memcmp(memo[i].key, key, DDB_SCOPE_ID_LEN) == 0 &&
       memo[i].creds.expires - now > MEMO_MARGIN_S)
      hit = creds_copy(out, &memo[i].creds) == 0;
  pthread_mutex_unlock(&memo_lock);
  return hit;
}

/* Keep c under key: in its own slot, else a free one, else the one that
** expires first. */
static void memo_put(const unsigned char *key, const ddb_creds *c) {
  ddb_creds copy;
  int i, slot = -1;
  if(!c->expires || creds_copy(&copy, c))
    return;
  pthread_once(&memo_once, memo_init_once);
  pthread_mutex_lock(&memo_lock);
  for(i = 0; i < MEMO_MAX; i++) {
    if(memo[i].creds.access_key &&
       memcmp(memo[i].key, key, DDB_SCOPE_ID_LEN) == 0) {
      slot = i;
      break;
    }
    if(slot < 0 || !memo[i].creds.access_key ||
       (memo[slot].creds.access_key &&
        memo[i].creds.expires < memo[slot].creds.expires))
      slot = i;
  }
  ddb_creds_clear(&memo[slot].creds);
  memcpy(memo[slot].key, key, DDB_SCOPE_ID_LEN);
  memo[slot].creds = copy;
  pthread_mutex_unlock(&memo_lock);
}

/* See ddb_client_int.h. */
void ddb_creds_memo_drop(const ddb_cred_source *src) {
  unsigned char key[DDB_SCOPE_ID_LEN];
  int i;
  if(memo_key(src, src->kind == DDB_CRED_ROLE ? src->held : NULL, key))
    return;
  pthread_once(&memo_once, memo_init_once);
  pthread_mutex_lock(&memo_lock);
  for(i = 0; i < MEMO_MAX; i++)
    if(memo[i].creds.access_key &&
       memcmp(memo[i].key, key, DDB_SCOPE_ID_LEN) == 0)
      ddb_creds_clear(&memo[i].creds);
  pthread_mutex_unlock(&memo_lock);
}

/* ------------------------------------------------------------------------
** Fetching
*/

/* The source credentials of src (an AssumeRole): those held while they are
** good for SOURCE_MARGIN_S more, else fresh ones from src->inner (kept in
** src->held); a failed fetch keeps held ones that have not expired. */
static ddb_result role_source_creds(const ddb_cred_source *src,
                                    ddb_cancel_fn stop, void *stop_ud,
                                    const ddb_creds **out, ddb_error *err) {
  int64_t now = (int64_t)time(NULL);
  ddb_creds fresh;
  ddb_result result;
  ddb_creds *held = src->held;
  if(held && held->access_key &&
     (held->expires == 0 || held->expires - now > SOURCE_MARGIN_S ||
      !src->inner)) {
    *out = held;
    return DDB_OK;
  }
  if(!src->inner || !held)
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "assume-role of %s: no source credentials",
                         src->role_arn);
  result = ddb_creds_fetch(src->inner, stop, stop_ud, &fresh, err);
  if(result) {
    if(held->access_key && held->expires > now) {
      *out = held;
      return DDB_OK;
    }
    return result;
  }
  ddb_creds_clear(held);
  *held = fresh;
  *out = held;
  return DDB_OK;
}

/* See ddb_client_int.h: fresh credentials from src into *out; a set that
** has already expired is an error naming src and the expiry. */
ddb_result ddb_creds_fetch(const ddb_cred_source *src, ddb_cancel_fn stop,
                           void *stop_ud, ddb_creds *out, ddb_error *err) {
  unsigned char key[DDB_SCOPE_ID_LEN];
  const ddb_creds *signer = NULL;
  ddb_result result;
  int keyed = 0;
  char when[32];
  memset(out, 0, sizeof(*out));
  if(src->kind == DDB_CRED_ROLE &&
     (result = role_source_creds(src, stop, stop_ud, &signer, err)) != DDB_OK)
    return result;
  keyed = memo_key(src, signer, key) == 0;
  if(keyed && memo_get(key, out))
    return DDB_OK;
  switch(src->kind) {
  case DDB_CRED_PROCESS:
    result = ddb_creds_process_fetch(src, stop, stop_ud, out, err);
    break;
  case DDB_CRED_CONTAINER:
    result = ddb_creds_container_fetch(src, out, err);
    break;
  case DDB_CRED_IMDS: result = ddb_creds_imds_fetch(src, out, err); break;
  case DDB_CRED_ROLE:
    result = ddb_creds_role_fetch(src, signer, stop, stop_ud, out, err);
    break;
  case DDB_CRED_WEB_IDENTITY:
    result = ddb_creds_web_identity_fetch(src, stop, stop_ud, out, err);
    break;
  case DDB_CRED_SSO:
    result = ddb_creds_sso_fetch(src, stop, stop_ud, out, err);
    break;
  default:
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "credentials from %s cannot be refreshed",
                         src->what ? src->what : "this source");
  }
  if(result == DDB_OK && out->expires && out->expires <= (int64_t)time(NULL)) {
    ddb_creds_time(out->expires, when, sizeof(when));
    ddb_creds_clear(out);
    result = ddb_error_set(err, DDB_ERR_CONFIG,
                           "%s returned credentials that expired at %s",
                           src->what, when);
  }
  if(result == DDB_OK && keyed)
    memo_put(key, out);
  return result;
}

/* Free s's strings (the authorization token wiped), its source
** credentials and the source they come from, and zero it. */
void ddb_cred_source_free(ddb_cred_source *s) {
  free(s->what);
  free(s->command);
  free(s->url);
  ddb_wipe_free(s->auth);
  free(s->auth_file);
  free(s->role_arn);
  free(s->session_name);
  free(s->external_id);
  free(s->token_file);
  free(s->region);
  free(s->ca_bundle);
  if(s->inner) {
    ddb_cred_source_free(s->inner);
    free(s->inner);
  }
  if(s->held) {
    ddb_creds_clear(s->held);
    free(s->held);
  }
  ddb_sso_source_free(s->sso);
  memset(s, 0, sizeof(*s));
}
