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
**   credentials: the chain of creds.c (environment, shared files,
**                credential_process, container, instance metadata).
**   files:       AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) and
**                AWS_CONFIG_FILE (~/.aws/config); in the config file a
**                profile's section is [profile NAME], except [default].
**
** The config file's services section looks like this:
**
**   [profile dev]
**   services = local
**   [services local]
**   dynamodb =
**     endpoint_url = http://localhost:8000
*/
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

/* Is the text a true boolean as the SDKs spell it ("true", any case)? */
static int is_true(const char *v) {
  return v && strcasecmp(v, "true") == 0;
}

/* The endpoint the profile configures for DynamoDB: the dynamodb entry of
** its services section, else its endpoint_url; NULL when none. */
static char *config_endpoint(const ddb_profile *prof) {
  const char *services = ddb_profile_value(prof, "services");
  const char *url;
  char *v = NULL;
  if(services && *services)
    v = ddb_profile_service(prof, services, "dynamodb", "endpoint_url");
  if(v && !*v) {
    free(v);
    v = NULL;
  }
  if(!v && (url = ddb_profile_value(prof, "endpoint_url")) != NULL && *url)
    v = ddb_strdup(url);
  return v;
}

/* Check endpoint text v and store it without trailing slashes in s; what
** names where it came from.  Returns DDB_OK or a config error. */
static ddb_result set_endpoint(ddb_settings *s, const char *v,
                               const char *what, ddb_error *err) {
  size_t n = strlen(v), skip;
  const char *host, *at, *slash;
  if(strncmp(v, "http://", 7) == 0)
    skip = 7;
  else if(strncmp(v, "https://", 8) == 0)
    skip = 8;
  else
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "bad endpoint '%.200s'%s: must start with "
                         "http:// or https://",
                         v, what);
  host = v + skip;
  slash = strchr(host, '/');
  at = strchr(host, '@');
  if(at && (!slash || at < slash))
    /* user:password@ would put a secret in messages and dynamodb_info */
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "bad endpoint%s: a user name or password in the URL "
                         "is not allowed",
                         what);
  if(!*host || *host == '/')
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "bad endpoint '%.200s'%s: no host", v, what);
  while(n > skip && v[n - 1] == '/')
    n--;
  s->endpoint = malloc(n + 1);
  if(!s->endpoint)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  memcpy(s->endpoint, v, n);
  s->endpoint[n] = 0;
  return DDB_OK;
}

/* Resolve the endpoint into s (see the top of the file). */
static ddb_result resolve_endpoint(const ddb_config *cfg,
                                   const ddb_profile *prof, ddb_settings *s,
                                   ddb_error *err) {
  const char *v = NULL, *what = "";
  char *conf = NULL, buf[1024];
  ddb_result result;
  int ignore_configured =
      is_true(env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")) ||
      is_true(ddb_profile_value(prof, "ignore_configured_endpoint_urls"));
  if(cfg->endpoint)
    v = cfg->endpoint;
  else if(!ignore_configured) {
    if((v = env("AWS_ENDPOINT_URL_DYNAMODB")) != NULL)
      what = " (AWS_ENDPOINT_URL_DYNAMODB)";
    else if((v = env("AWS_ENDPOINT_URL")) != NULL)
      what = " (AWS_ENDPOINT_URL)";
    else if((conf = config_endpoint(prof)) != NULL) {
      v = conf;
      what = " (config file)";
    }
  }
  if(v) {
    result = set_endpoint(s, v, what, err);
    free(conf);
    return result;
  }
  if(snprintf(buf, sizeof(buf), "https://dynamodb.%s.amazonaws.com",
              s->region) >= (int)sizeof(buf))
    return ddb_error_set(err, DDB_ERR_CONFIG, "region too long");
  s->endpoint = ddb_strdup(buf);
  if(!s->endpoint)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  return DDB_OK;
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
  result = ddb_creds_chain(&prof, cfg->profile != NULL, resolve_stopped,
                           (void *)cfg, &s->src, &creds, &s->cred_source, err);
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
/* See ddb_client_int.h: the canonical endpoint of endpoint, appended to
** out. */
int ddb_place_canonical(const char *endpoint, ddb_buf *out) {
  char host[DDB_SIGV4_HOST_MAX], path[DDB_SIGV4_PATH_MAX];
  const char *port;
  size_t hlen, plen;

  if(ddb_sigv4_endpoint(endpoint, host, sizeof(host), path, sizeof(path)))
    return -1;
  /* host: lower case, the default port already dropped; split the port */
  port = host[0] == '[' ? strchr(host, ']') : host;
  port = port ? strchr(port, ':') : NULL;
  hlen = port ? (size_t)(port - host) : strlen(host);
  while(hlen > 1 && host[hlen - 1] == '.' && host[0] != '[')
    hlen--; /* "localhost." is "localhost" */
  plen = strlen(path);
  while(plen > 0 && path[plen - 1] == '/')
    plen--;
  ddb_buf_adds(out,
               strncmp(endpoint, "https://", 8) == 0 ? "https://" : "http://");
  if(hlen == 9 && memcmp(host, "localhost", 9) == 0)
    ddb_buf_adds(out, "127.0.0.1");
  else
    ddb_buf_add(out, host, hlen);
  if(port)
    ddb_buf_adds(out, port);
  ddb_buf_add(out, path, plen);
  return out->failed || !out->p ? -1 : 0;
}

int ddb_place_id(const char *endpoint, const char *region,
                 unsigned char *out) {
  const char *parts[2];
  size_t lens[2];
  ddb_buf ep;
  int rc = -1;

  ddb_buf_init(&ep, DDB_SIGV4_HOST_MAX + DDB_SIGV4_PATH_MAX + 16);
  if(ddb_place_canonical(endpoint, &ep) == 0) {
    parts[0] = ep.p;
    lens[0] = ep.len;
    parts[1] = region ? region : "";
    lens[1] = strlen(parts[1]);
    ddb_scope_hash('P', parts, lens, 2, out);
    rc = 0;
  }
  ddb_buf_free(&ep);
  return rc;
}

/* See ddb_client_int.h: the shared tier's root key of a principal at a
** place.  HMAC-SHA256 keyed by a fixed label (HKDF-Extract's salt) over
** the length-prefixed canonical endpoint, region, access key id, secret
** key and session token: the same in every process that has the same
** credentials for the same place, and unknown to anyone without the
** secret. */
int ddb_tier_root(const char *endpoint, const char *region, const char *ak,
                  const char *sk, const char *token, unsigned char *out) {
  static const char label[] = "sqlite-dynamodb shared tier v1";
  const char *parts[4];
  ddb_buf place, b;
  int i, rc = -1;

  parts[0] = region ? region : "";
  parts[1] = ak ? ak : "";
  parts[2] = sk ? sk : "";
  parts[3] = token ? token : "";
  ddb_buf_init(&place, DDB_SIGV4_HOST_MAX + DDB_SIGV4_PATH_MAX + 16);
  ddb_buf_init(&b, 64 * 1024);
  if(ddb_place_canonical(endpoint, &place) == 0) {
    ddb_buf_add_part(&b, place.p, place.len);
    for(i = 0; i < 4; i++)
      ddb_buf_add_part(&b, parts[i], strlen(parts[i]));
    if(!b.failed && b.p) {
      ddb_hmac_sha256(label, sizeof(label) - 1, b.p, b.len, out);
      rc = 0;
    }
  }
  if(b.p)
    ddb_wipe(b.p, b.len);
  ddb_buf_free(&b);
  ddb_buf_free(&place);
  return rc;
}
