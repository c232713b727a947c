/*
** creds.c -- the AWS credential chain, walked in botocore's order:
**
**   1. the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
**      AWS_SESSION_TOKEN (skipped when the profile= option names a
**      profile: naming one means "use that profile");
**   2. assume-role: the profile sets role_arn (with source_profile or
**      credential_source; creds_profile.c follows the hops), STS AssumeRole
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
** metadata endpoints, creds_profile.c sets up a profile's sources and roles, creds_sts.c and
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

/* Step 1, the environment: 1 found (out, what set), 0 not. */
static int step_env(ddb_creds *out, char **what) {
  if(!ddb_creds_env_keys(out))
    return 0;
  *what = ddb_strdup("environment");
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
  if(ddb_creds_role_source(prof, env, visited, 1, src, err) ||
     ddb_creds_fetch(src, env->stop, env->stop_ud, out, err))
    return -1;
  *what = ddb_strdup(src->what);
  return 1;
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
