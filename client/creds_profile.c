/*
** creds_profile.c -- the sources a profile sets up, as botocore sets them
** up: its own settings (botocore's "profile providers": web identity, IAM
** Identity Center, the credentials file's keys, credential_process, the
** config file's keys; ddb_creds_profile_steps), and the role it assumes
** with the credentials of another source (ddb_creds_role_source).
** creds_sts.c and creds_sso.c make the calls, creds_fetch.c fetches.
**
** A profile with role_arn (and no web_identity_token_file) assumes the
** role with the credentials of exactly one of:
**
**   source_profile = NAME     that profile's credentials: its own settings
**                             (ddb_creds_profile_steps, the environment
**                             never consulted) when it has keys or no
**                             role_arn, else the role it assumes in turn
**                             (a chain of hops, at most DDB_ROLE_HOPS); a
**                             profile may name itself only when it has
**                             keys; any other loop is an error;
**   credential_source = Environment | Ec2InstanceMetadata | EcsContainer
**                             (spelled exactly so).
**
** role_session_name, external_id and duration_seconds (an integer;
** anything else ignored, as botocore ignores it) go into the call.
** mfa_serial is refused: botocore prompts for the code, and nothing here
** can prompt.  The STS endpoint is AWS_ENDPOINT_URL_STS, the services
** section's sts, AWS_ENDPOINT_URL, the profile's endpoint_url (of the
** profile in use, for every hop), else the regional
** https://sts.<region>.amazonaws.com of the client's region.
*/
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ddb_client_int.h"

/* The STS endpoint of env (see the top of the file), malloc'ed, or NULL
** with err set. */
static char *sts_endpoint(const ddb_cred_env *env, ddb_error *err) {
  char dflt[300];
  const char *region = env->region ? env->region : "us-east-1";
  snprintf(dflt, sizeof(dflt), "https://sts.%.200s.amazonaws.com%s", region,
           strncmp(region, "cn-", 3) == 0 ? ".cn" : "");
  return ddb_service_endpoint(env->top, "sts", "STS", dflt, err);
}

/* The settings every STS source shares: the endpoint, region, CA bundle
** and the session name (botocore's default drawn once, as its fetcher
** does).  Returns 0, or -1 with err. */
static int sts_common(const ddb_cred_env *env, const char *session,
                      ddb_cred_source *src, ddb_error *err) {
  char name[64];
  if(!session || !*session) {
    snprintf(name, sizeof(name), "botocore-session-%lld",
             (long long)time(NULL));
    session = name;
    src->session_drawn = 1;
  }
  src->url = sts_endpoint(env, err);
  if(!src->url)
    return -1;
  src->region = ddb_strdup(env->region ? env->region : "us-east-1");
  src->session_name = ddb_strdup(session);
  if(env->ca_bundle)
    src->ca_bundle = ddb_strdup(env->ca_bundle);
  if(!src->region || !src->session_name ||
     (env->ca_bundle && !src->ca_bundle)) {
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    return -1;
  }
  return 0;
}

/* src->what = "<kind> ARN (<where>)[ via <via>]". */
static int name_source(ddb_cred_source *src, const char *kind,
                       const char *where, const char *via, ddb_error *err) {
  ddb_buf b;
  ddb_buf_init(&b, 4096);
  ddb_buf_addf(&b, "%s %.300s (%.250s)", kind, src->role_arn, where);
  if(via)
    ddb_buf_addf(&b, " via %.2000s", via);
  src->what = ddb_buf_take(&b, NULL);
  if(!src->what) {
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------------------
** The profile's own settings
*/

/* See ddb_client_int.h: the environment's keys. */
int ddb_creds_env_keys(ddb_creds *out) {
  if(!ddb_env("AWS_ACCESS_KEY_ID") || !ddb_env("AWS_SECRET_ACCESS_KEY"))
    return 0;
  out->access_key = ddb_strdup(ddb_env("AWS_ACCESS_KEY_ID"));
  out->secret_key = ddb_strdup(ddb_env("AWS_SECRET_ACCESS_KEY"));
  out->session_token = ddb_strdup(ddb_env("AWS_SESSION_TOKEN"));
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

/* The profile's keys in one of the shared files (the
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

/* The profile's credential_process: 1 found (src set too), 0 none
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
  int rc =
      fetch_new(ddb_creds_web_identity_source(prof, no_env, env, src, err),
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

/* ------------------------------------------------------------------------
** Where the source credentials come from
*/

/* Does prof hold keys (either of aws_access_key_id, aws_secret_access_key,
** in either file)? */
static int has_keys(const ddb_profile *prof) {
  return ddb_profile_value(prof, "aws_access_key_id") != NULL ||
         ddb_profile_value(prof, "aws_secret_access_key") != NULL;
}

/* Does prof assume a role of its own (role_arn, no web identity)? */
static int has_role(const ddb_profile *prof) {
  return ddb_profile_value(prof, "role_arn") != NULL &&
         ddb_profile_value(prof, "web_identity_token_file") == NULL;
}

/* The credential_source cs of profile name: the source set up in *inner
** and its credentials fetched into *held; *via names it.  Returns 0, or -1
** with err. */
static int from_credential_source(const char *name, const char *cs,
                                  const ddb_cred_env *env,
                                  ddb_cred_source *inner, ddb_creds *held,
                                  char **via, ddb_error *err) {
  const char *off = ddb_env("AWS_EC2_METADATA_DISABLED");
  int rc = 0;
  if(strcmp(cs, "Environment") == 0) {
    rc = ddb_creds_env_keys(held);
    *via = ddb_strdup("environment");
  } else if(strcmp(cs, "EcsContainer") == 0) {
    rc = ddb_creds_container_source(inner, err);
    if(rc < 0)
      return -1;
  } else if(strcmp(cs, "Ec2InstanceMetadata") == 0) {
    if(!off || strcasecmp(off, "true") != 0) {
      inner->kind = DDB_CRED_IMDS;
      inner->url = ddb_creds_imds_endpoint();
      inner->what = ddb_strdup("instance metadata (IMDSv2)");
      rc = 1;
    }
  } else {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "profile '%.100s': credential_source '%.100s' is not one of "
                  "Environment, Ec2InstanceMetadata, EcsContainer",
                  name, cs);
    return -1;
  }
  if(rc == 0) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "profile '%.100s': credential_source %.100s found no "
                  "credentials",
                  name, cs);
    return -1;
  }
  if(inner->kind != DDB_CRED_STATIC) {
    if(ddb_creds_fetch(inner, env->stop, env->stop_ud, held, err))
      return -1;
    *via = ddb_strdup(inner->what);
  }
  return 0;
}

/* The source_profile sp of profile name (visited: the path so far): the
** source set up in *inner, its credentials in *held, *via naming it.
** Returns 0, or -1 with err. */
static int from_source_profile(const char *name, const char *sp,
                               const ddb_cred_env *env, const char **visited,
                               int nv, ddb_cred_source *inner, ddb_creds *held,
                               char **via, ddb_error *err) {
  ddb_profile sprof;
  ddb_error e;
  int i, rc = -1, seen = 0;

  ddb_error_clear(&e);
  memset(&sprof, 0, sizeof(sprof));
  if(ddb_profile_load(sp, 1, &sprof, &e)) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "profile '%.100s': its source_profile '%.100s' does not "
                  "exist",
                  name, sp);
    goto fail;
  }
  for(i = 0; i < nv; i++)
    seen |= strcmp(visited[i], sp) == 0;
  if(seen && (strcmp(sp, name) != 0 || !has_keys(&sprof))) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "profile '%.100s': source_profile '%.100s' makes a loop "
                  "(a profile may name itself only when it has keys)",
                  name, sp);
    goto fail;
  }
  if(nv >= DDB_ROLE_HOPS) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "profile '%.100s': more than %d source_profile hops", name,
                  DDB_ROLE_HOPS);
    goto fail;
  }
  visited[nv] = sp;
  if(has_keys(&sprof) || !has_role(&sprof)) {
    /* its own settings, never the environment's */
    rc = ddb_creds_profile_steps(&sprof, 1, env, inner, held, via, err);
    if(rc == 0)
      ddb_error_set(err, DDB_ERR_CONFIG,
                    "profile '%.100s': its source_profile '%.100s' has no "
                    "credentials",
                    name, sp);
    rc = rc == 1 ? 0 : -1;
    goto fail;
  }
  if(ddb_creds_role_source(&sprof, env, visited, nv + 1, inner, err) ||
     ddb_creds_fetch(inner, env->stop, env->stop_ud, held, err))
    goto fail;
  *via = ddb_strdup(inner->what);
  rc = 0;

fail:
  ddb_profile_free(&sprof);
  return rc;
}

/* ------------------------------------------------------------------------
** The two sources
*/

/* See ddb_client_int.h. */
int ddb_creds_role_source(const ddb_profile *prof, const ddb_cred_env *env,
                          const char **visited, int nv, ddb_cred_source *src,
                          ddb_error *err) {
  const char *sp = ddb_profile_value(prof, "source_profile");
  const char *cs = ddb_profile_value(prof, "credential_source");
  const char *ext = ddb_profile_value(prof, "external_id");
  const char *dur = ddb_profile_value(prof, "duration_seconds");
  char *via = NULL, *end;
  const char *hops[DDB_ROLE_HOPS + 1];
  char where[160];
  long d;
  int rc = -1;

  memset(src, 0, sizeof(*src));
  memcpy(hops, visited, sizeof(*hops) * (size_t)nv);
  if(sp && cs) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "profile '%.100s' sets both source_profile and "
                  "credential_source: keep one",
                  prof->name);
    return -1;
  }
  if(!sp && !cs) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "profile '%.100s' sets role_arn without source_profile or "
                  "credential_source: add one",
                  prof->name);
    return -1;
  }
  if(ddb_profile_value(prof, "mfa_serial")) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "profile '%.100s' sets mfa_serial, and an MFA code cannot "
                  "be asked for here: get keys in a terminal with `aws "
                  "configure export-credentials --profile %.100s --format "
                  "env` (it asks for the code) and set them in the "
                  "environment",
                  prof->name, prof->name);
    return -1;
  }
  src->kind = DDB_CRED_ROLE;
  src->role_arn = ddb_strdup(ddb_profile_value(prof, "role_arn"));
  src->inner = calloc(1, sizeof(*src->inner));
  src->held = calloc(1, sizeof(*src->held));
  if(ext)
    src->external_id = ddb_strdup(ext);
  if(dur && *dur) {
    d = strtol(dur, &end, 10);
    if(*end == 0 && d > 0 && d <= INT_MAX)
      src->duration = (int)d;
  }
  if(!src->role_arn || !src->inner || !src->held ||
     (ext && !src->external_id)) {
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  if(sts_common(env, ddb_profile_value(prof, "role_session_name"), src, err))
    goto fail;
  if(cs ? from_credential_source(prof->name, cs, env, src->inner, src->held,
                                 &via, err)
        : from_source_profile(prof->name, sp, env, hops, nv, src->inner,
                              src->held, &via, err))
    goto fail;
  if(src->inner->kind == DDB_CRED_STATIC) {
    ddb_cred_source_free(src->inner);
    free(src->inner);
    src->inner = NULL;
  }
  snprintf(where, sizeof(where), "profile '%.100s'", prof->name);
  rc = name_source(src, "assume-role", where, via ? via : "?", err);

fail:
  free(via);
  if(rc)
    ddb_cred_source_free(src);
  return rc;
}

/* See ddb_client_int.h. */
int ddb_creds_web_identity_source(const ddb_profile *prof, int no_env,
                                  const ddb_cred_env *env,
                                  ddb_cred_source *src, ddb_error *err) {
  const char *file = no_env ? NULL : ddb_env("AWS_WEB_IDENTITY_TOKEN_FILE");
  const char *arn = no_env ? NULL : ddb_env("AWS_ROLE_ARN");
  const char *session = no_env ? NULL : ddb_env("AWS_ROLE_SESSION_NAME");
  char where[160];
  if(file)
    snprintf(where, sizeof(where), "AWS_WEB_IDENTITY_TOKEN_FILE");
  else {
    file = ddb_profile_value(prof, "web_identity_token_file");
    snprintf(where, sizeof(where), "profile '%.100s'", prof->name);
  }
  if(!file || !*file)
    return 0;
  if(!arn)
    arn = ddb_profile_value(prof, "role_arn");
  if(!session)
    session = ddb_profile_value(prof, "role_session_name");
  if(!arn || !*arn) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "a web identity token file is set (%s) but no role: set "
                  "AWS_ROLE_ARN or role_arn in profile '%.100s'",
                  where, prof->name);
    return -1;
  }
  memset(src, 0, sizeof(*src));
  src->kind = DDB_CRED_WEB_IDENTITY;
  src->role_arn = ddb_strdup(arn);
  src->token_file = ddb_strdup(file);
  if(!src->role_arn || !src->token_file) {
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    ddb_cred_source_free(src);
    return -1;
  }
  if(sts_common(env, session, src, err) ||
     name_source(src, "web identity", where, NULL, err)) {
    ddb_cred_source_free(src);
    return -1;
  }
  return 1;
}
