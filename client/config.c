/*
** config.c -- finding the region, the endpoint, the CA bundle and the
** credentials the way the AWS SDKs do.
**
**   region:      option, AWS_REGION, AWS_DEFAULT_REGION, `region` of the
**                profile (the credentials file's over the config file's).
**   endpoint:    option, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL, the
**                `dynamodb` entry of the profile's `services` section,
**                `endpoint_url` of the profile,
**                https://dynamodb.<region>.amazonaws.com.  The environment
**                and the config file are ignored when
**                AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true (or the profile's
**                ignore_configured_endpoint_urls = true).
**   ca_bundle:   option, AWS_CA_BUNDLE, `ca_bundle` of the profile; none:
**                the system's CAs.  HTTPS always verifies certificates.
**   profile:     option, AWS_PROFILE, "default"; one that the option or
**                AWS_PROFILE names must exist in one of the files (as in
**                botocore, even with keys in the environment).
**   credentials: the chain of creds.c (environment, assume-role, web
**                identity, IAM Identity Center, shared files,
**                credential_process, container, instance metadata).
**   files:       AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) and
**                AWS_CONFIG_FILE (~/.aws/config); in the config file a
**                profile's section is [profile NAME], except [default].
**
** endpoint.c finds a configured endpoint (and the services section) and
** parses the endpoint URL.
*/
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ddb_client_int.h"
#include "http_int.h"
#include "sigv4.h"

/* The value of environment variable name, or NULL when unset or empty. */
static const char *env(const char *name) {
  const char *v = getenv(name);
  return (v && *v) ? v : NULL;
}

/* Check endpoint text v (what names where it came from), parse it into
** s->ep and keep it, without trailing slashes, in s->endpoint (for
** messages).  Returns DDB_OK or an error. */
static ddb_result set_endpoint(ddb_settings *s, const char *v,
                               const char *what, ddb_error *err) {
  size_t n = strlen(v);
  ddb_result result = ddb_endpoint_parse(v, what, &s->ep, err);
  if(result)
    return result;
  while(n > 0 && v[n - 1] == '/')
    n--;
  s->endpoint = malloc(n + 1);
  if(!s->endpoint)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  memcpy(s->endpoint, v, n);
  s->endpoint[n] = 0;
  return DDB_OK;
}

/* Resolve DynamoDB Streams' endpoint into s->streams_ep: botocore's
** configured endpoint of the service "DynamoDB Streams"
** (AWS_ENDPOINT_URL_DYNAMODB_STREAMS, AWS_ENDPOINT_URL, `dynamodb_streams`
** of a services section); else, when DynamoDB's endpoint was configured
** (custom: DynamoDB Local and dynalite serve both on one port), that one;
** else AWS's https://streams.dynamodb.<region>.amazonaws.com.  (botocore
** itself would send a dynamodbstreams client to AWS when only
** AWS_ENDPOINT_URL_DYNAMODB is set: a reader following DynamoDB Local must
** not.) */
static ddb_result resolve_streams(const ddb_profile *prof, ddb_settings *s,
                                  int custom, ddb_error *err) {
  const char *v, *what = "";
  char *conf = NULL, buf[1024], whatbuf[80];
  ddb_result result;
  v = ddb_configured_endpoint(prof, "dynamodb_streams", "DYNAMODB_STREAMS",
                              &conf, &what, whatbuf, sizeof(whatbuf));
  if(!v && custom)
    v = s->endpoint;
  if(!v) {
    if(snprintf(buf, sizeof(buf), "https://streams.dynamodb.%s.amazonaws.com",
                s->region) >= (int)sizeof(buf))
      return ddb_error_set(err, DDB_ERR_CONFIG, "region too long");
    v = buf;
  }
  result = ddb_endpoint_parse(v, what, &s->streams_ep, err);
  free(conf);
  return result;
}

/* Resolve the endpoint into s (see the top of the file). */
static ddb_result resolve_endpoint(const ddb_config *cfg,
                                   const ddb_profile *prof, ddb_settings *s,
                                   ddb_error *err) {
  const char *v = NULL, *what = "";
  char *conf = NULL, buf[1024], whatbuf[80];
  ddb_result result;
  if(cfg->endpoint)
    v = cfg->endpoint;
  else
    v = ddb_configured_endpoint(prof, "dynamodb", "DYNAMODB", &conf, &what,
                                whatbuf, sizeof(whatbuf));
  if(v) {
    result = set_endpoint(s, v, what, err);
    free(conf);
  } else if(snprintf(buf, sizeof(buf), "https://dynamodb.%s.amazonaws.com",
                     s->region) >= (int)sizeof(buf))
    return ddb_error_set(err, DDB_ERR_CONFIG, "region too long");
  else
    result = set_endpoint(s, buf, " (from the region)", err);
  if(result)
    return result;
  return resolve_streams(prof, s, v != NULL, err);
}

/* Resolve the CA bundle into s: option, AWS_CA_BUNDLE, the profile's
** ca_bundle; the file must be readable. */
static ddb_result resolve_ca_bundle(const ddb_config *cfg,
                                    const ddb_profile *prof, ddb_settings *s,
                                    ddb_error *err) {
  const char *v = cfg->ca_bundle, *what = "ca_bundle", *conf;
  FILE *f;
  if(v && !*v)
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "bad value for ca_bundle: '' (expected a PEM file)");
  if(!v && (v = env("AWS_CA_BUNDLE")) != NULL)
    what = "AWS_CA_BUNDLE";
  if(!v && (conf = ddb_profile_value(prof, "ca_bundle")) != NULL && *conf) {
    v = conf;
    what = "ca_bundle of the config file";
  }
  if(!v || !*v)
    return DDB_OK;
  f = fopen(v, "r");
  if(!f) {
    int e = errno;
    ddb_error_set(err, DDB_ERR_CONFIG, "%s '%.200s': cannot read: %s", what, v,
                  strerror(e));
    return DDB_ERR_CONFIG;
  }
  fclose(f);
  s->ca_bundle = ddb_strdup(v);
  if(!s->ca_bundle)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  return DDB_OK;
}

/* Free everything s holds (secrets wiped) and zero it. */
void ddb_settings_free(ddb_settings *s) {
  free(s->region);
  free(s->endpoint);
  ddb_endpoint_free(&s->ep);
  ddb_endpoint_free(&s->streams_ep);
  free(s->ca_bundle);
  free(s->access_key);
  ddb_wipe_free(s->secret_key);
  ddb_wipe_free(s->session_token);
  free(s->cred_source);
  ddb_cred_source_free(&s->src);
  memset(s, 0, sizeof(*s));
}

/* The stop hook of a resolution (ud: the ddb_config): the calling
** thread's cancel hook, else the config's. */
static int resolve_stopped(void *ud) {
  const ddb_config *cfg = ud;
  if(ddb_cancel_hooked(NULL))
    return ddb_cancelled(NULL);
  return cfg->cancel && cfg->cancel(cfg->cancel_ud) != 0;
}

/* Resolve region, endpoint, CA bundle and credentials (see the top of
** the file) into s.  On error s is empty and err says why. */
ddb_result ddb_settings_resolve(const ddb_config *cfg, ddb_settings *s,
                                ddb_error *err) {
  const char *profile = cfg->profile ? cfg->profile : env("AWS_PROFILE");
  const char *v;
  ddb_profile prof;
  ddb_creds creds;
  ddb_cred_env cenv;
  ddb_result result = DDB_OK;

  memset(s, 0, sizeof(*s));
  memset(&creds, 0, sizeof(creds));
  memset(&prof, 0, sizeof(prof));

  /* the profile: one named by the option or AWS_PROFILE must exist */
  result = ddb_profile_load(profile ? profile : "default", profile != NULL,
                            &prof, err);
  if(result)
    goto fail;

  /* region */
  if(cfg->region)
    s->region = ddb_strdup(cfg->region);
  else if((v = env("AWS_REGION")) || (v = env("AWS_DEFAULT_REGION")) ||
          (v = ddb_profile_value(&prof, "region")))
    s->region = ddb_strdup(v);
  if(!s->region || !*s->region) {
    result = ddb_error_set(err, DDB_ERR_CONFIG,
                           "no region: set the region= option, AWS_REGION, "
                           "or region in the config file's profile '%s'",
                           prof.name);
    goto fail;
  }

  result = resolve_endpoint(cfg, &prof, s, err);
  if(result)
    goto fail;
  result = resolve_ca_bundle(cfg, &prof, s, err);
  if(result)
    goto fail;

  /* credentials */
  memset(&cenv, 0, sizeof(cenv));
  cenv.top = &prof;
  cenv.region = s->region;
  cenv.ca_bundle = s->ca_bundle;
  cenv.stop = resolve_stopped;
  cenv.stop_ud = (void *)cfg;
  result = ddb_creds_chain(&prof, cfg->profile != NULL, &cenv, &s->src, &creds,
                           &s->cred_source, err);
  if(result)
    goto fail;
  s->access_key = creds.access_key;
  s->secret_key = creds.secret_key;
  s->session_token = creds.session_token;
  s->expires = creds.expires;
  s->fetched = (int64_t)time(NULL);
  ddb_profile_free(&prof);
  return DDB_OK;

fail:
  ddb_profile_free(&prof);
  ddb_creds_clear(&creds);
  ddb_settings_free(s);
  return result;
}

/* ------------------------------------------------------------------------
** The place of a client (see ddb_client_int.h)
*/
int ddb_place_id(const char *canonical, const char *region,
                 unsigned char *out) {
  const char *parts[2];
  size_t lens[2];
  parts[0] = canonical;
  lens[0] = strlen(canonical);
  parts[1] = region ? region : "";
  lens[1] = strlen(parts[1]);
  return ddb_scope_hash('P', parts, lens, 2, out);
}

/* See ddb_client_int.h: the shared tier's root key of a principal at a
** place.  HMAC-SHA256 keyed by a fixed label (HKDF-Extract's salt) over
** the length-prefixed canonical endpoint, region, access key id, secret
** key and session token: the same in every process that has the same
** credentials for the same place, and unknown to anyone without the
** secret. */
int ddb_tier_root(const char *canonical, const char *region, const char *ak,
                  const char *sk, const char *token, unsigned char *out) {
  static const char label[] = "sqlite-dynamodb shared tier v1";
  const char *parts[5];
  ddb_buf b;
  size_t need = 0;
  int i, rc = -1;

  parts[0] = canonical ? canonical : "";
  parts[1] = region ? region : "";
  parts[2] = ak ? ak : "";
  parts[3] = sk ? sk : "";
  parts[4] = token ? token : "";
  for(i = 0; i < 5; i++)
    need += strlen(parts[i]) + 10; /* a LEB128 length at most 10 bytes */
  ddb_buf_init(&b, 64 * 1024);
  /* room for all at once: a realloc would leave a copy of the secret */
  if(ddb_buf_reserve(&b, need))
    b.failed = 1;
  for(i = 0; i < 5 && !b.failed; i++)
    ddb_buf_add_part(&b, parts[i], strlen(parts[i]));
  if(!b.failed && b.p &&
     ddb_hmac_sha256(label, sizeof(label) - 1, b.p, b.len, out) == 0)
    rc = 0;
  if(b.p)
    ddb_wipe(b.p, b.len);
  ddb_buf_free(&b);
  return rc;
}

/* ------------------------------------------------------------------------
** The ranges of the options users give (see ddb_client.h)
*/

/* See ddb_client.h. */
int ddb_option_retries(double v, int *out) {
  if(v == DDB_OPT_DEFAULT) {
    *out = DDB_DEFAULT_MAX_RETRIES;
    return 0;
  }
  if(!(v >= 0 && v <= DDB_MAX_RETRIES) || v != (double)(int)v)
    return -1;
  *out = (int)v;
  return 0;
}

/* See ddb_client.h. */
int ddb_option_ttl(double v, double *out) {
  if(v == DDB_OPT_DEFAULT) {
    *out = DDB_DEFAULT_TTL;
    return 0;
  }
  if(!(v >= 0 && v <= DDB_MAX_TTL))
    return -1;
  *out = v;
  return 0;
}
