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
*/
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddb_client_int.h"

#define SOURCE_MARGIN_S (15 * 60)

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
  const ddb_creds *signer = NULL;
  ddb_result result;
  char when[32];
  memset(out, 0, sizeof(*out));
  switch(src->kind) {
  case DDB_CRED_PROCESS:
    result = ddb_creds_process_fetch(src, stop, stop_ud, out, err);
    break;
  case DDB_CRED_CONTAINER:
    result = ddb_creds_container_fetch(src, out, err);
    break;
  case DDB_CRED_IMDS: result = ddb_creds_imds_fetch(src, out, err); break;
  case DDB_CRED_ROLE:
    result = role_source_creds(src, stop, stop_ud, &signer, err);
    if(result == DDB_OK)
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
