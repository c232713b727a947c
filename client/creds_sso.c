/*
** creds_sso.c -- the credentials of an IAM Identity Center (SSO) profile,
** as botocore's SSOProvider and SSOCredentialFetcher get them:
**
**   [profile dev]                        [profile old]     (legacy form)
**   sso_session = corp                   sso_start_url = https://x/start
**   sso_account_id = 111122223333        sso_region = us-east-1
**   sso_role_name = ReadOnly             sso_account_id = 111122223333
**                                        sso_role_name = ReadOnly
**   [sso-session corp]
**   sso_start_url = https://corp.awsapps.com/start
**   sso_region = us-east-1
**
** A profile is an SSO profile when it has sso_role_name or sso_account_id
** (botocore's test; a profile with only sso_session is for tokens, not
** credentials).  It then needs sso_role_name, sso_account_id,
** sso_start_url and sso_region; with sso_session they may come from the
** [sso-session NAME] section, which must exist and agree with every key
** the profile repeats, and must itself hold sso_start_url and sso_region
** (botocore's SSOTokenProvider reads them there).  Each is an error
** naming the profile and the keys, as botocore words it.
**
** The credentials: the token of `aws sso login` (sso_token.c: the cache,
** the refresh through SSO OIDC), then the portal's GetRoleCredentials,
** unsigned: GET <portal>/federation/credentials?role_name=R&account_id=A
** with the header x-amz-sso_bearer_token, answered
** {"roleCredentials": {accessKeyId, secretAccessKey, sessionToken,
** expiration (Unix milliseconds)}}.  A 401 (UnauthorizedException) is an
** error naming `aws sso login --profile NAME`; any other error answer
** names the status and the portal's type and message.
**
** Endpoints, as botocore resolves them (ddb_service_endpoint): the portal
** is the service "sso" (AWS_ENDPOINT_URL_SSO, `sso` in a services
** section), default https://portal.sso.<sso_region>.<dns suffix>; SSO
** OIDC is "sso_oidc" (AWS_ENDPOINT_URL_SSO_OIDC, `sso_oidc`), default
** https://oidc.<sso_region>.<dns suffix>: the service ids "SSO" and
** "SSO OIDC" as botocore's configprovider turns them into names.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sso_int.h"

/* The four settings of an SSO profile, in botocore's order (its messages
** list the missing ones so). */
static const char *const required[] = {"sso_role_name", "sso_account_id",
                                       "sso_start_url", "sso_region"};

/* See ddb_client_int.h: free s; NULL is fine.  (It holds no secret.) */
void ddb_sso_source_free(ddb_sso_source *s) {
  if(!s)
    return;
  free(s->profile);
  free(s->session);
  free(s->start_url);
  free(s->region);
  free(s->account_id);
  free(s->role_name);
  free(s->portal);
  free(s->oidc);
  free(s->oidc_error);
  free(s->cache_file);
  free(s);
}

/* The value of key in the config file's [sso-session session] (its
** [DEFAULT]'s too), or NULL. */
static const char *session_value(const ddb_profile *prof, const char *session,
                                 const char *key) {
  const char *k, *v;
  int i;
  for(i = 0; ddb_profile_sso_key(prof, session, i, &k, &v) == 1; i++)
    if(strcmp(k, key) == 0)
      return v;
  return NULL;
}

/* botocore's _resolve_sso_session_reference for the sso_session named
** session of prof: the section exists and agrees with the profile on every
** key both have.  Returns 0, or -1 with err set. */
static int session_check(const ddb_profile *prof, const char *session,
                         ddb_error *err) {
  const char *k, *v, *mine;
  int i, rc = ddb_profile_sso_key(prof, session, 0, &k, &v);
  if(rc < 0) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "profile '%.100s': the specified sso-session does not "
                  "exist: \"%.100s\" (add [sso-session %.100s] to the AWS "
                  "config file, or run aws configure sso --profile %.100s)",
                  prof->name, session, session, prof->name);
    return -1;
  }
  for(i = 0; ddb_profile_sso_key(prof, session, i, &k, &v) == 1; i++) {
    mine = ddb_profile_value(prof, k);
    if(mine && strcmp(mine, v) != 0) {
      ddb_error_set(err, DDB_ERR_CONFIG,
                    "profile '%.100s': the value for %.60s is inconsistent "
                    "between profile (%.100s) and sso-session '%.60s' "
                    "(%.100s): remove it from the profile",
                    prof->name, k, mine, session, v);
      return -1;
    }
  }
  return 0;
}

/* The checks botocore makes after session_check: every required setting
** there, in the profile or its session (the missing ones listed); then
** SSOTokenProvider's: the session has keys, sso_start_url and sso_region
** among them.  Returns 0, or -1 with err set. */
static int settings_check(const ddb_profile *prof, const char *session,
                          ddb_error *err) {
  char missing[160] = "";
  const char *k, *v;
  size_t i;
  for(i = 0; i < 4; i++)
    if(!ddb_profile_value(prof, required[i]) &&
       !(session && session_value(prof, session, required[i])))
      snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
               "%s%s", *missing ? ", " : "", required[i]);
  if(*missing) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "the profile \"%.100s\" is configured to use SSO but is "
                  "missing required configuration: %s (set it in the AWS "
                  "config file, or run aws configure sso --profile %.100s)",
                  prof->name, missing, prof->name);
    return -1;
  }
  if(!session)
    return 0;
  if(ddb_profile_sso_key(prof, session, 0, &k, &v) == 0) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "the profile \"%.100s\" is configured to use the SSO token "
                  "provider but the \"%.100s\" sso_session configuration "
                  "does not exist (its section is empty)",
                  prof->name, session);
    return -1;
  }
  for(i = 2; i < 4; i++)
    if(!session_value(prof, session, required[i]))
      snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
               "%s%s", *missing ? ", " : "", required[i]);
  if(*missing) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "the profile \"%.100s\" is configured to use the SSO token "
                  "provider but is missing the following configuration: %s "
                  "(botocore reads it in [sso-session %.100s] only)",
                  prof->name, missing, session);
    return -1;
  }
  return 0;
}

/* Is r a region name botocore accepts (validate_region_name:
** [a-zA-Z0-9], then up to 61 of [a-zA-Z0-9-], ending in [a-zA-Z0-9])? */
static int region_ok(const char *r) {
  size_t i, n = strlen(r);
  if(n == 0 || n > 63 || r[0] == '-' || r[n - 1] == '-')
    return 0;
  for(i = 0; i < n; i++)
    if(!((r[i] >= 'a' && r[i] <= 'z') || (r[i] >= 'A' && r[i] <= 'Z') ||
         (r[i] >= '0' && r[i] <= '9') || r[i] == '-'))
      return 0;
  return 1;
}

/* The DNS suffix of the partition of region r (botocore's partitions.json,
** by the prefixes of their region patterns). */
static const char *dns_suffix(const char *r) {
  static const struct {
    const char *prefix, *suffix;
  } parts[] = {{"cn-", "amazonaws.com.cn"},   {"eusc-", "amazonaws.eu"},
               {"us-isob-", "sc2s.sgov.gov"}, {"us-isof-", "csp.hci.ic.gov"},
               {"us-iso-", "c2s.ic.gov"},     {"eu-isoe-", "cloud.adc-e.uk"}};
  size_t i;
  for(i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
    if(strncmp(r, parts[i].prefix, strlen(parts[i].prefix)) == 0)
      return parts[i].suffix;
  return "amazonaws.com";
}

/* The endpoints of s (its region set): the portal's (an error is the
** source's error), and for an sso_session profile OIDC's (an error kept
** in s->oidc_error for the refresh that needs it).  Returns 0 or -1. */
static int endpoints(const ddb_profile *prof, ddb_sso_source *s,
                     ddb_error *err) {
  char dflt[200];
  ddb_error e;
  if(!region_ok(s->region)) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "profile '%.100s': sso_region '%.100s' is not a region "
                  "name (e.g. us-east-1)",
                  prof->name, s->region);
    return -1;
  }
  snprintf(dflt, sizeof(dflt), "https://portal.sso.%s.%s", s->region,
           dns_suffix(s->region));
  s->portal = ddb_service_endpoint(prof, "sso", "SSO", dflt, err);
  if(!s->portal)
    return -1;
  if(!s->session)
    return 0;
  snprintf(dflt, sizeof(dflt), "https://oidc.%s.%s", s->region,
           dns_suffix(s->region));
  ddb_error_clear(&e);
  s->oidc = ddb_service_endpoint(prof, "sso_oidc", "SSO_OIDC", dflt, &e);
  if(!s->oidc && (s->oidc_error = ddb_strdup(e.message)) == NULL) {
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    return -1;
  }
  return 0;
}

/* A copy of setting key of an SSO profile: the sso-session's when it has
** it (session not NULL), else the profile's; NULL when neither. */
static char *setting(const ddb_profile *prof, const char *session,
                     const char *key) {
  const char *v = session ? session_value(prof, session, key) : NULL;
  return ddb_strdup(v ? v : ddb_profile_value(prof, key));
}

/* The settings of an SSO profile prof (checked) into a new *out; its
** name for messages into *what.  Returns 0, or -1 out of memory. */
static int source_new(const ddb_profile *prof, const char *session,
                      ddb_sso_source **out, char **what) {
  ddb_sso_source *s = calloc(1, sizeof(*s));
  ddb_buf w;
  *out = s;
  ddb_buf_init(&w, 512);
  if(session)
    ddb_buf_addf(&w, "sso-session '%.200s' (profile '%.200s')", session,
                 prof->name);
  else
    ddb_buf_addf(&w, "sso (profile '%.200s')", prof->name);
  *what = ddb_buf_take(&w, NULL);
  if(!s)
    return -1;
  s->profile = ddb_strdup(prof->name);
  s->session = ddb_strdup(session);
  s->start_url = setting(prof, session, "sso_start_url");
  s->region = setting(prof, session, "sso_region");
  s->account_id = setting(prof, NULL, "sso_account_id");
  s->role_name = setting(prof, NULL, "sso_role_name");
  if(s->start_url)
    s->cache_file = ddb_sso_cache_file(session ? session : s->start_url);
  return !*what || !s->profile || (session && !s->session) || !s->start_url ||
                 !s->region || !s->account_id || !s->role_name ||
                 (ddb_env("HOME") && !s->cache_file)
             ? -1
             : 0;
}

/* See ddb_client_int.h: the SSO settings of prof into src.  On -1 src is
** left as it was. */
int ddb_creds_sso_source(const ddb_profile *prof, const ddb_cred_env *env,
                         ddb_cred_source *src, ddb_error *err) {
  const char *session = ddb_profile_value(prof, "sso_session");
  const char *ca = env ? env->ca_bundle : NULL;
  ddb_sso_source *s = NULL;
  char *what = NULL, *ca_copy = ddb_strdup(ca);
  if(!ddb_profile_value(prof, "sso_role_name") &&
     !ddb_profile_value(prof, "sso_account_id")) {
    free(ca_copy);
    return 0;
  }
  if((session && session_check(prof, session, err)) ||
     settings_check(prof, session, err))
    goto fail;
  if(source_new(prof, session, &s, &what) || (ca && !ca_copy)) {
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  if(endpoints(prof, s, err))
    goto fail;
  src->kind = DDB_CRED_SSO;
  src->what = what;
  src->ca_bundle = ca_copy;
  src->sso = s;
  return 1;

fail:
  ddb_sso_source_free(s);
  free(what);
  free(ca_copy);
  return -1;
}

/* Append s percent-encoded as botocore encodes a query value: all but
** A-Z a-z 0-9 - _ . ~ as %XX (upper-case hex). */
static void query_encode(ddb_buf *b, const char *s) {
  static const char hex[] = "0123456789ABCDEF";
  for(; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
       (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~')
      ddb_buf_addc(b, (char)c);
    else {
      ddb_buf_addc(b, '%');
      ddb_buf_addc(b, hex[c >> 4]);
      ddb_buf_addc(b, hex[c & 15]);
    }
  }
}

/* The role credentials of the portal's answer body[0..n) into *out.
** Returns DDB_OK, or an error naming what is missing. */
static ddb_result role_creds(const ddb_cred_source *src, const char *body,
                             size_t n, ddb_creds *out, ddb_error *err) {
  static const char *const keys[] = {"accessKeyId", "secretAccessKey",
                                     "sessionToken"};
  cJSON *j = cJSON_ParseWithLength(body ? body : "", body ? n : 0);
  const cJSON *rc = cJSON_GetObjectItemCaseSensitive(j, "roleCredentials");
  const cJSON *exp = cJSON_GetObjectItemCaseSensitive(rc, "expiration");
  const char *v[3];
  ddb_result result = DDB_OK;
  size_t i;
  for(i = 0; i < 3; i++)
    if(!(v[i] = cJSON_GetStringValue(
             cJSON_GetObjectItemCaseSensitive(rc, keys[i]))))
      break;
  if(!rc || i < 3 || !cJSON_IsNumber(exp) ||
     !(fabs(exp->valuedouble) < 1e15)) { /* milliseconds: year 33658 */
    result = ddb_error_set(err, DDB_ERR_CONFIG,
                           "%s: SSO GetRoleCredentials answered no usable "
                           "roleCredentials.%s",
                           src->what,
                           !rc     ? "accessKeyId"
                           : i < 3 ? keys[i]
                                   : "expiration");
    goto fail;
  }
  out->access_key = ddb_strdup(v[0]);
  out->secret_key = ddb_strdup(v[1]);
  out->session_token = ddb_strdup(v[2]);
  /* botocore: milliseconds / 1000, formatted to the second */
  out->expires = (int64_t)floor(exp->valuedouble / 1000.0);
  if(out->expires <= 0)
    out->expires = 1; /* "long expired", not "never" */
  if(!out->access_key || !out->secret_key || !out->session_token)
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");

fail:
  ddb_sso_json_free(j);
  if(result)
    ddb_creds_clear(out);
  return result;
}

/* Is the token fit for a header value (no control character)? */
static int header_safe(const char *t) {
  for(; *t; t++)
    if((unsigned char)*t < 0x20 || *t == 0x7f)
      return 0;
  return 1;
}

/* See ddb_client_int.h: the token, then GetRoleCredentials. */
ddb_result ddb_creds_sso_fetch(const ddb_cred_source *src, ddb_cancel_fn stop,
                               void *stop_ud, ddb_creds *out, ddb_error *err) {
  const ddb_sso_source *s = src->sso;
  const char *hdrs[2] = {NULL, NULL};
  char *token = NULL, detail[300], call[512];
  ddb_buf url, hdr, body;
  ddb_creds_req req;
  ddb_result result;
  long status = 0;

  memset(out, 0, sizeof(*out));
  ddb_buf_init(&url, 8192);
  ddb_buf_init(&hdr, DDB_CREDS_OUT_MAX);
  ddb_buf_reserve(&hdr, DDB_CREDS_OUT_MAX); /* no realloc: no copy left */
  ddb_buf_init(&body, DDB_CREDS_OUT_MAX);
  ddb_buf_reserve(&body, DDB_CREDS_OUT_MAX);
  result = ddb_sso_token(s, src->what, src->ca_bundle, stop, stop_ud,
                         (int64_t)time(NULL), &token, err);
  if(result)
    goto fail;
  if(!header_safe(token)) {
    result = ddb_error_set(err, DDB_ERR_CONFIG,
                           "%s: the cached SSO token holds a control "
                           "character: run aws sso login --profile %.100s",
                           src->what, s->profile);
    goto fail;
  }
  ddb_buf_addf(&url, "%s/federation/credentials?role_name=", s->portal);
  query_encode(&url, s->role_name);
  ddb_buf_adds(&url, "&account_id=");
  query_encode(&url, s->account_id);
  ddb_buf_addf(&hdr, "x-amz-sso_bearer_token: %s", token);
  if(url.failed || hdr.failed) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  hdrs[0] = hdr.p;
  memset(&req, 0, sizeof(req));
  snprintf(call, sizeof(call), "%s: SSO GetRoleCredentials", src->what);
  req.what = call;
  req.method = "GET";
  req.url = url.p;
  req.headers = hdrs;
  req.ca_bundle = src->ca_bundle;
  req.stop = stop;
  req.stop_ud = stop_ud;
  result = ddb_creds_http(&req, &body, &status, err);
  if(result)
    goto fail;
  if(status >= 200 && status <= 299) {
    result = role_creds(src, body.p, body.len, out, err);
    goto fail;
  }
  ddb_sso_error_text(body.p, body.len, detail, sizeof(detail));
  if(status == 401 || strncmp(detail, "UnauthorizedException", 21) == 0)
    result = ddb_error_set(err, DDB_ERR_CONFIG,
                           "%s: the SSO session has expired or is otherwise "
                           "invalid (the portal answered %ld%s%s): run aws "
                           "sso login --profile %.100s",
                           src->what, status, *detail ? " " : "", detail,
                           s->profile);
  else
    result = ddb_error_set(err, DDB_ERR_CONFIG,
                           "%s: SSO GetRoleCredentials of role '%.100s' in "
                           "account %.40s (%.200s) answered %ld%s%s",
                           src->what, s->role_name, s->account_id, s->portal,
                           status, *detail ? " " : "", detail);

fail:
  ddb_wipe_free(token);
  ddb_wipe(hdr.p, hdr.len);
  ddb_wipe(body.p, body.len);
  ddb_buf_free(&url);
  ddb_buf_free(&hdr);
  ddb_buf_free(&body);
  return result;
}

/* See ddb_client_int.h: the sso-session (or start URL), the region, the
** account and role, the portal and the token's cache file. */
int ddb_sso_source_parts(const ddb_sso_source *s, const char **p) {
  p[0] = s->session ? s->session : s->start_url;
  p[1] = s->region;
  p[2] = s->account_id;
  p[3] = s->role_name;
  p[4] = s->portal;
  p[5] = s->cache_file;
  return 6;
}
