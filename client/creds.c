/*
** creds.c -- the AWS credential chain, walked in botocore's order:
**
**   1. the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
**      AWS_SESSION_TOKEN (skipped when the profile= option names a
**      profile: naming one means "use that profile");
**   2. assume-role: the profile sets role_arn (with source_profile or
**      credential_source; creds_role.c follows the hops), STS AssumeRole
**      (creds_sts.c);
**   3. the profile's own settings, botocore's "profile providers"
**      (ddb_creds_profile_steps), in this order:
**      a. web identity: web_identity_token_file + role_arn, each taken
**         from AWS_WEB_IDENTITY_TOKEN_FILE / AWS_ROLE_ARN /
**         AWS_ROLE_SESSION_NAME first unless the profile= option named
**         the profile (EKS's IRSA), STS AssumeRoleWithWebIdentity;
**      b. IAM Identity Center: sso_session or sso_start_url (creds_sso.c);
**      c. the profile's keys in the shared credentials file ([NAME]), all
**         three from that file;
**      d. the profile's credential_process (run with /bin/sh -c, its
**         stdout read as the JSON of the SDKs' process protocol);
**      e. the profile's keys in the config file ([profile NAME]), all
**         three from that file (profile.c reads the files);
**   4. container credentials: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (on
**      http://169.254.170.2) or AWS_CONTAINER_CREDENTIALS_FULL_URI (https,
**      or http to a loopback or the ECS/EKS addresses), with the
**      Authorization header from AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE or
**      AWS_CONTAINER_AUTHORIZATION_TOKEN;
**   5. EC2 instance metadata, IMDSv2 only: a PUT for a session token, then
**      the role name, then its credentials; 1 s to connect and 2 s per
**      request, one attempt; skipped when AWS_EC2_METADATA_DISABLED=true;
**      AWS_EC2_METADATA_SERVICE_ENDPOINT replaces http://169.254.169.254.
**
** A source that is configured but fails (a credential_process that exits
** non-zero, a container endpoint that refuses, STS refusing a role) is an
** error naming it; an instance-metadata service that does not answer just
** ends the chain.  When nothing is found the error lists what was tried.
**
** Every source but the keys hands out temporary credentials with an
** expiry; ddb_creds_fetch() fetches them again (signer.c calls it before
** they expire, with botocore's windows) and refuses a set that has already
** expired.  No secret ever goes into a message: errors name the source,
** the variable, the file, never a key, a token or a command line.
**
** The sources live in files of their own: creds_process.c runs a
** credential_process, creds_meta.c asks the container and instance
** metadata endpoints, creds_role.c sets up roles, creds_sts.c and
** creds_sso.c call STS and IAM Identity Center (through creds_http.c),
** creds_parse.c reads what they answer; this file walks the chain and
** names principals.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ddb_client_int.h"
#include "sigv4.h"

/* The list of what was tried, for the "no credentials" message. */
#define TRIED_MAX 400

/* See ddb_client_int.h: fresh credentials from src into *out; a set that
** has already expired is an error naming src and the expiry. */
ddb_result ddb_creds_fetch(const ddb_cred_source *src, ddb_cancel_fn stop,
                           void *stop_ud, ddb_creds *out, ddb_error *err) {
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
    result = ddb_creds_role_fetch(src, stop, stop_ud, out, err);
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

/* See ddb_client_int.h: t as ISO 8601 UTC ("2026-01-05T10:00:00Z"). */
void ddb_creds_time(int64_t t, char *buf, size_t cap) {
  time_t tt = (time_t)t;
  struct tm tm;
  if(!gmtime_r(&tt, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
    snprintf(buf, cap, "%lld", (long long)t);
}

/* ------------------------------------------------------------------------
** The chain
*/

/* Append "; " (unless first) and the printf-style text to the list of
** what was tried. */
static void tried_add(ddb_buf *t, const char *fmt, const char *arg) {
  if(t->len)
    ddb_buf_adds(t, "; ");
  ddb_buf_addf(t, fmt, arg);
}

/* See ddb_client_int.h: the environment's keys. */
int ddb_creds_env_keys(ddb_creds *out) {
  if(!ddb_env("AWS_ACCESS_KEY_ID") || !ddb_env("AWS_SECRET_ACCESS_KEY"))
    return 0;
  out->access_key = ddb_strdup(ddb_env("AWS_ACCESS_KEY_ID"));
  out->secret_key = ddb_strdup(ddb_env("AWS_SECRET_ACCESS_KEY"));
  out->session_token = ddb_strdup(ddb_env("AWS_SESSION_TOKEN"));
  return 1;
}

/* Step 1, the environment: 1 found (out, what set), 0 not. */
static int step_env(ddb_creds *out, char **what) {
  if(!ddb_creds_env_keys(out))
    return 0;
  *what = ddb_strdup("environment");
  return 1;
}

/* Fetch the credentials of a source just set up (rc 1 from its setup) into
** out and name it in *what: rc, or -1 when the fetch fails (err set). */
static int fetch_new(int rc, const ddb_cred_env *env, ddb_cred_source *src,
                     ddb_creds *out, char **what, ddb_error *err) {
  if(rc <= 0)
    return rc;
  if(ddb_creds_fetch(src, env->stop, env->stop_ud, out, err))
    return -1;
  *what = ddb_strdup(src->what);
  return 1;
}

/* Step 2, assume-role: prof sets role_arn (and not
** web_identity_token_file, which makes it a web identity profile). */
static int step_role(const ddb_profile *prof, const ddb_cred_env *env,
                     ddb_cred_source *src, ddb_creds *out, char **what,
                     ddb_error *err) {
  const char *arn = ddb_profile_value(prof, "role_arn");
  const char *wif = ddb_profile_value(prof, "web_identity_token_file");
  const char *visited[1];
  if(!arn || !*arn || (wif && *wif))
    return 0;
  visited[0] = prof->name;
  if(ddb_creds_role_source(prof, env, visited, 1, src, err))
    return -1;
  return fetch_new(1, env, src, out, what, err);
}

/* Steps 2 and 4, the profile's keys in one of the shared files (the
** credentials file when creds_file): 1 found, 0 not, -1 an unusable set
** there (err set). */
static int step_file(const ddb_profile *prof, int creds_file, ddb_creds *out,
                     char **what, ddb_error *err) {
  const char *ak, *sk, *tok;
  ddb_buf name;
  int rc = ddb_profile_keys(prof, creds_file, &ak, &sk, &tok, err);
  if(rc <= 0)
    return rc;
  out->access_key = ddb_strdup(ak);
  out->secret_key = ddb_strdup(sk);
  out->session_token = ddb_strdup(tok);
  ddb_buf_init(&name, 512);
  ddb_buf_addf(&name, "profile '%.200s'", prof->name);
  *what = ddb_buf_take(&name, NULL);
  return 1;
}

/* Step 3, the profile's credential_process: 1 found (src set too), 0 none
** configured, -1 error (err set). */
static int step_process(const ddb_profile *prof, const ddb_cred_env *env,
                        ddb_cred_source *src, ddb_creds *out, char **what,
                        ddb_error *err) {
  const char *process = ddb_profile_value(prof, "credential_process");
  ddb_buf name;
  if(!process || !*process)
    return 0;
  src->kind = DDB_CRED_PROCESS;
  src->command = ddb_strdup(process);
  ddb_buf_init(&name, 512);
  ddb_buf_addf(&name, "credential_process of profile '%.200s'", prof->name);
  src->what = ddb_buf_take(&name, NULL);
  if(!src->what || !src->command) {
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    return -1;
  }
  return fetch_new(1, env, src, out, what, err);
}

/* See ddb_client_int.h: the profile's own settings, in botocore's order. */
int ddb_creds_profile_steps(const ddb_profile *prof, int no_env,
                            const ddb_cred_env *env, ddb_cred_source *src,
                            ddb_creds *out, char **what, ddb_error *err) {
  int rc = fetch_new(ddb_creds_web_identity_source(prof, no_env, env, src, err),
                     env, src, out, what, err);
  if(rc == 0)
    rc = fetch_new(ddb_creds_sso_source(prof, env, src, err), env, src, out,
                   what, err);
  if(rc == 0)
    rc = step_file(prof, 1, out, what, err);
  if(rc == 0)
    rc = step_process(prof, env, src, out, what, err);
  if(rc == 0)
    rc = step_file(prof, 0, out, what, err);
  return rc;
}

/* Step 5, container credentials: 1 found, 0 not configured, -1 error. */
static int step_container(ddb_cred_source *src, ddb_creds *out, char **what,
                          ddb_error *err) {
  int rc = ddb_creds_container_source(src, err);
  if(rc <= 0)
    return rc;
  if(ddb_creds_fetch(src, NULL, NULL, out, err))
    return -1;
  *what = ddb_strdup(src->what);
  return 1;
}

/* Step 6, instance metadata: 1 found, 0 not (why added to tried), -1 out
** of memory. */
static int step_imds(ddb_cred_source *src, ddb_creds *out, char **what,
                     ddb_buf *tried, ddb_error *err) {
  const char *v = ddb_env("AWS_EC2_METADATA_DISABLED");
  ddb_error e;
  if(v && strcasecmp(v, "true") == 0) {
    tried_add(tried, "%s",
              "instance metadata (AWS_EC2_METADATA_DISABLED=true)");
    return 0;
  }
  ddb_error_clear(&e);
  src->kind = DDB_CRED_IMDS;
  src->url = ddb_creds_imds_endpoint();
  src->what = ddb_strdup("instance metadata (IMDSv2)");
  if(!src->url || !src->what) {
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    return -1;
  }
  if(ddb_creds_fetch(src, NULL, NULL, out, &e) == DDB_OK) {
    *what = ddb_strdup(src->what);
    return 1;
  }
  tried_add(tried, "%s", e.message);
  ddb_cred_source_free(src);
  return 0;
}

/* See ddb_client_int.h: walk the chain; on failure the error lists what
** was tried, or names the configured source that failed. */
ddb_result ddb_creds_chain(const ddb_profile *prof, int given,
                           const ddb_cred_env *env, ddb_cred_source *src,
                           ddb_creds *out, char **what, ddb_error *err) {
  ddb_buf tried;
  ddb_error e;
  ddb_result result = DDB_OK;
  int rc = 0;

  memset(src, 0, sizeof(*src));
  memset(out, 0, sizeof(*out));
  *what = NULL;
  ddb_error_clear(&e);
  ddb_buf_init(&tried, TRIED_MAX);
  if(!given && (rc = step_env(out, what)) == 0)
    tried_add(&tried, "%s", "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY");
  if(rc == 0)
    rc = step_role(prof, env, src, out, what, &e);
  if(rc == 0 &&
     (rc = ddb_creds_profile_steps(prof, given, env, src, out, what, &e)) == 0)
    tried_add(&tried, "the shared credentials and config files (profile '%s')",
              prof->name);
  if(rc == 0 && (rc = step_container(src, out, what, &e)) == 0)
    tried_add(&tried, "%s",
              "container credentials (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI/"
              "FULL_URI not set)");
  if(rc == 0)
    rc = step_imds(src, out, what, &tried, &e);
  if(rc < 0) {
    result = e.code ? e.code : DDB_ERR_CONFIG;
    if(err)
      ddb_error_set(err, result, "%s", e.message);
    goto fail;
  }
  if(rc == 0) {
    result = ddb_error_set(err, DDB_ERR_CONFIG, "no credentials: tried %s",
                           tried.failed ? "the whole chain" : tried.p);
    goto fail;
  }
  if(!out->access_key || !out->secret_key || !*what) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  if(src->kind == DDB_CRED_STATIC)
    ddb_cred_source_free(src);

fail:
  if(result) {
    ddb_creds_clear(out);
    ddb_cred_source_free(src);
    free(*what);
    *what = NULL;
  }
  ddb_buf_free(&tried);
  return result;
}

/* ------------------------------------------------------------------------
** Principals (see ddb_client_int.h)
*/

static unsigned char scope_key[DDB_SHA256_LEN];
static pthread_once_t scope_once = PTHREAD_ONCE_INIT;

/* Draw the process's key for scope ids. */
static void scope_key_init(void) {
  ddb_random_bytes(scope_key, sizeof(scope_key));
}

int ddb_scope_hash(char letter, const char *const *p, const size_t *n,
                   int n_parts, unsigned char *out) {
  unsigned char mac[DDB_SHA256_LEN];
  ddb_hmac_ctx *m;
  int i, rc;
  pthread_once(&scope_once, scope_key_init);
  m = ddb_hmac_new(scope_key, sizeof(scope_key));
  rc = m ? ddb_hmac_update(m, &letter, 1) : -1;
  for(i = 0; rc == 0 && i < n_parts; i++) {
    unsigned char len[8];
    uint64_t v = n[i];
    int k;
    for(k = 0; k < 8; k++, v >>= 8)
      len[k] = (unsigned char)(v & 0xff);
    rc =
        ddb_hmac_update(m, len, sizeof(len)) || ddb_hmac_update(m, p[i], n[i]);
  }
  if(rc == 0)
    rc = ddb_hmac_final(m, mac);
  ddb_hmac_free(m);
  if(rc == 0)
    memcpy(out, mac, DDB_SCOPE_ID_LEN);
  ddb_wipe(mac, sizeof(mac));
  return rc ? -1 : 0;
}

ddb_principal *ddb_principal_new(const char *access_key,
                                 const char *secret_key, const char *token) {
  const char *parts[3];
  size_t lens[3];
  ddb_principal *pr = malloc(sizeof(*pr));
  if(!pr)
    return NULL;
  parts[0] = access_key ? access_key : "";
  parts[1] = secret_key ? secret_key : "";
  parts[2] = token ? token : "";
  lens[0] = strlen(parts[0]);
  lens[1] = strlen(parts[1]);
  lens[2] = strlen(parts[2]);
  pr->next = NULL;
  if(ddb_scope_hash('U', parts, lens, 3, pr->id)) {
    free(pr);
    return NULL;
  }
  return pr;
}
