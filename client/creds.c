/*
** creds.c -- the AWS credential chain, walked as the AWS SDKs walk it:
**
**   1. the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
**      AWS_SESSION_TOKEN (skipped when the profile= option names a
**      profile: naming one means "use that profile");
**   2. the profile's keys in the shared credentials file, then in the
**      config file ([profile NAME] there; see profile.c);
**   3. the profile's credential_process (run with /bin/sh -c, its stdout
**      read as the JSON of the SDKs' process protocol, Version 1);
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
** non-zero, a container endpoint that refuses) is an error naming it; an
** instance-metadata service that does not answer just ends the chain.
** When nothing is found the error lists what was tried.
**
** Sources 3 to 5 hand out temporary credentials with an expiry;
** ddb_creds_fetch() fetches them again (signer.c calls it before they
** expire).  No secret ever goes into a message: errors name the source,
** the variable, the file, never a key, a token or a command line.
**
** Not resolved here (the error says what to do instead): role_arn /
** source_profile (AssumeRole), sso_* profiles and web identity tokens;
** `credential_process = aws configure export-credentials --profile NAME
** --format process` covers all of them.
**
** The sources live in files of their own: creds_process.c runs a
** credential_process, creds_meta.c asks the container and instance
** metadata endpoints, creds_parse.c reads what they answer; this file
** walks the chain and names principals.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ddb_client_int.h"
#include "sigv4.h"

/* The list of what was tried, for the "no credentials" message. */
#define TRIED_MAX 400

/* See ddb_client_int.h: fresh credentials from src into *out. */
ddb_result ddb_creds_fetch(const ddb_cred_source *src, ddb_creds *out,
                           ddb_error *err) {
  memset(out, 0, sizeof(*out));
  switch(src->kind) {
  case DDB_CRED_PROCESS: return ddb_creds_process_fetch(src, out, err);
  case DDB_CRED_CONTAINER: return ddb_creds_container_fetch(src, out, err);
  case DDB_CRED_IMDS: return ddb_creds_imds_fetch(src, out, err);
  default:
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "credentials from %s cannot be refreshed",
                         src->what ? src->what : "this source");
  }
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

/* Step 1, the environment: 1 found (out, what set), 0 not. */
static int step_env(ddb_creds *out, char **what) {
  if(!ddb_env("AWS_ACCESS_KEY_ID") || !ddb_env("AWS_SECRET_ACCESS_KEY"))
    return 0;
  out->access_key = ddb_strdup(ddb_env("AWS_ACCESS_KEY_ID"));
  out->secret_key = ddb_strdup(ddb_env("AWS_SECRET_ACCESS_KEY"));
  out->session_token = ddb_strdup(ddb_env("AWS_SESSION_TOKEN"));
  *what = ddb_strdup("environment");
  return 1;
}

/* Step 2, the profile's keys in the shared files: 1 found, 0 not. */
static int step_files(const char *profile, ddb_creds *out, char **what) {
  char *ak = ddb_profile_get(profile, "aws_access_key_id", 1);
  char *sk = ddb_profile_get(profile, "aws_secret_access_key", 1);
  ddb_buf name;
  if(!ak || !*ak || !sk || !*sk) {
    free(ak);
    ddb_wipe_free(sk);
    return 0;
  }
  out->access_key = ak;
  out->secret_key = sk;
  out->session_token = ddb_profile_get(profile, "aws_session_token", 1);
  ddb_buf_init(&name, 512);
  ddb_buf_addf(&name, "profile '%.200s'", profile);
  *what = ddb_buf_take(&name, NULL);
  return 1;
}

/* Step 3, the profile's credential_process: 1 found (src set too), 0 none
** configured, -1 error (err set). */
static int step_process(const char *profile, ddb_cred_source *src,
                        ddb_creds *out, char **what, ddb_error *err) {
  char *process = ddb_profile_get(profile, "credential_process", 1);
  ddb_buf name;
  if(!process || !*process) {
    free(process);
    return 0;
  }
  src->kind = DDB_CRED_PROCESS;
  src->command = process;
  ddb_buf_init(&name, 512);
  ddb_buf_addf(&name, "credential_process of profile '%.200s'", profile);
  src->what = ddb_buf_take(&name, NULL);
  if(!src->what) {
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    return -1;
  }
  if(ddb_creds_fetch(src, out, err))
    return -1;
  *what = ddb_strdup(src->what);
  return 1;
}

/* A profile that needs what the SDKs do and this extension does not
** (AssumeRole, SSO): -1 with err saying what to do instead, else 0. */
static int step_unsupported(const char *profile, ddb_error *err) {
  static const char *const keys[] = {
      "role_arn", "sso_session", "sso_start_url", "web_identity_token_file"};
  size_t i;
  for(i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
    char *v = ddb_profile_get(profile, keys[i], 0);
    int set = v && *v;
    free(v);
    if(set) {
      ddb_error_set(err, DDB_ERR_CONFIG,
                    "profile '%.100s' uses %s, which this extension does not "
                    "resolve: add credential_process = aws configure "
                    "export-credentials --profile %.100s --format process",
                    profile, keys[i], profile);
      return -1;
    }
  }
  return 0;
}

/* Step 4, container credentials: 1 found, 0 not configured, -1 error. */
static int step_container(ddb_cred_source *src, ddb_creds *out, char **what,
                          ddb_error *err) {
  int rc = ddb_creds_container_source(src, err);
  if(rc <= 0)
    return rc;
  if(ddb_creds_fetch(src, out, err))
    return -1;
  *what = ddb_strdup(src->what);
  return 1;
}

/* Step 5, instance metadata: 1 found, 0 not (why added to tried), -1 out
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
  if(ddb_creds_fetch(src, out, &e) == DDB_OK) {
    *what = ddb_strdup(src->what);
    return 1;
  }
  tried_add(tried, "%s", e.message);
  ddb_cred_source_free(src);
  return 0;
}

/* See ddb_client_int.h: walk the chain; on failure the error lists what
** was tried, or names the configured source that failed. */
ddb_result ddb_creds_chain(const char *profile, int given,
                           ddb_cred_source *src, ddb_creds *out, char **what,
                           ddb_error *err) {
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
  if(rc == 0 && (rc = step_files(profile, out, what)) == 0)
    tried_add(&tried, "the shared credentials and config files (profile '%s')",
              profile);
  if(rc == 0)
    rc = step_process(profile, src, out, what, &e);
  if(rc == 0)
    rc = step_unsupported(profile, &e);
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

void ddb_scope_hash(char letter, const char *const *p, const size_t *n,
                    int n_parts, unsigned char *out) {
  unsigned char mac[DDB_SHA256_LEN];
  ddb_hmac_sha256_ctx m;
  int i;
  pthread_once(&scope_once, scope_key_init);
  ddb_hmac_sha256_init(&m, scope_key, sizeof(scope_key));
  ddb_hmac_sha256_update(&m, &letter, 1);
  for(i = 0; i < n_parts; i++) {
    unsigned char len[8];
    uint64_t v = n[i];
    int k;
    for(k = 0; k < 8; k++, v >>= 8)
      len[k] = (unsigned char)(v & 0xff);
    ddb_hmac_sha256_update(&m, len, sizeof(len));
    ddb_hmac_sha256_update(&m, p[i], n[i]);
  }
  ddb_hmac_sha256_final(&m, mac);
  memcpy(out, mac, DDB_SCOPE_ID_LEN);
  ddb_wipe(mac, sizeof(mac));
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
  ddb_scope_hash('U', parts, lens, 3, pr->id);
  return pr;
}
