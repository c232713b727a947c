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
** The config file's services section looks like this:
**
**   [profile dev]
**   services = local
**   [services local]
**   dynamodb =
**     endpoint_url = http://localhost:8000
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

/* Is the text a true boolean as the SDKs spell it ("true", any case)? */
static int is_true(const char *v) {
  return v && strcasecmp(v, "true") == 0;
}

/* The endpoint the profile configures for service (its key in a services
** section: "dynamodb", "sts", ...): the service's entry of its services
** section, else its endpoint_url; NULL when none. */
static char *config_endpoint(const ddb_profile *prof, const char *service) {
  const char *services = ddb_profile_value(prof, "services");
  const char *url;
  char *v = NULL;
  if(services && *services)
    v = ddb_profile_service(prof, services, service, "endpoint_url");
  if(v && !*v) {
    free(v);
    v = NULL;
  }
  if(!v && (url = ddb_profile_value(prof, "endpoint_url")) != NULL && *url)
    v = ddb_strdup(url);
  return v;
}

/* The endpoint configured for service as botocore looks for one:
** AWS_ENDPOINT_URL_<env_suffix>, AWS_ENDPOINT_URL, the profile's (see
** config_endpoint); none when AWS_IGNORE_CONFIGURED_ENDPOINT_URLS or the
** profile's ignore_configured_endpoint_urls is true.  Returns the value
** (owned by the environment, or *conf malloc'ed when from the profile)
** and sets *what to where it came from (" (AWS_ENDPOINT_URL_STS)", into
** whatbuf); NULL when none. */
static const char *configured_endpoint(const ddb_profile *prof,
                                       const char *service,
                                       const char *env_suffix, char **conf,
                                       const char **what, char *whatbuf,
                                       size_t whatcap) {
  char var[48];
  const char *v;
  *conf = NULL;
  *what = "";
  if(is_true(env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")) ||
     is_true(ddb_profile_value(prof, "ignore_configured_endpoint_urls")))
    return NULL;
  snprintf(var, sizeof(var), "AWS_ENDPOINT_URL_%s", env_suffix);
  if((v = env(var)) != NULL) {
    snprintf(whatbuf, whatcap, " (%s)", var);
    *what = whatbuf;
    return v;
  }
  if((v = env("AWS_ENDPOINT_URL")) != NULL) {
    *what = " (AWS_ENDPOINT_URL)";
    return v;
  }
  if((*conf = config_endpoint(prof, service)) != NULL) {
    *what = " (config file)";
    return *conf;
  }
  return NULL;
}

/* ------------------------------------------------------------------------
** The endpoint, parsed once
**
** The endpoint URL is parsed here, once, by libcurl's URL API, and
** everything else is taken from that parse: the URL curl is given (as the
** parse renders it), the Host header and the canonical URI that are
** signed, and the canonical endpoint that names the cache's place.  So
** what is signed, what the cache is keyed by and where curl connects are
** one host by construction.  Before the parse, the text's shape is
** checked for what libcurl would accept but cannot be honoured here:
**
**   a user name or password (user:password@host): a secret in messages
**     and dynamodb_info, and "http://127.0.0.1:1@HOST/" is HOST;
**   a scheme other than http or https (any case), or none;
**   no host ("http:///x", which libcurl reads as host x);
**   a query or a fragment: requests are POSTs to the endpoint's path.
**
** After it: an IPv6 zone id ("[fe80::1%25eth0]": it names an interface of
** this machine, and whether it belongs in the signed Host header is not
** settled), a host that is not ASCII (libcurl would connect to its IDN
** form while the Host header signs the UTF-8; give the xn-- form).  What
** libcurl itself refuses (a bad port, a blank or control character in the
** host or path, a bad IPv6 literal) is refused with its reason.  What it
** normalises is taken as it normalises it: a percent-encoded host is
** decoded ("local%68ost" is localhost), an IPv4 address in another
** notation is dotted ("127.1"), dot segments of the path are removed, a
** port's leading zeros go.
*/

/* The length of text's authority: the bytes after "://" up to the path,
** query or fragment (text itself when there is no "://"); *start is set
** to where it begins. */
static size_t authority(const char *text, const char **start) {
  const char *sep = strstr(text, "://");
  *start = sep ? sep + 3 : text;
  return strcspn(*start, "/?#");
}

/* Is text's scheme http or https (any case)?  *tls is set for https. */
static int http_scheme(const char *text, int *tls) {
  *tls = strncasecmp(text, "https://", 8) == 0;
  return *tls || strncasecmp(text, "http://", 7) == 0;
}

/* The one-line reason of libcurl's refusal uc of an endpoint. */
static const char *url_refusal(CURLUcode uc) {
  switch(uc) {
  case CURLUE_BAD_PORT_NUMBER:
    return "bad port (a number from 0 to 65535 after the host)";
  case CURLUE_BAD_HOSTNAME:
    return "bad host name (a blank, a control character or a character no "
           "host name has)";
  case CURLUE_BAD_IPV6: return "bad IPv6 address";
  case CURLUE_BAD_PATH: return "bad path (a blank or a control character)";
  case CURLUE_NO_HOST: return "no host";
  case CURLUE_OUT_OF_MEMORY: return "out of memory";
  default: return curl_url_strerror(uc);
  }
}

/* Set err for endpoint text (what: where it came from) refused because of
** why; returns DDB_ERR_CONFIG (DDB_ERR_NOMEM when why is that). */
static ddb_result endpoint_error(ddb_error *err, const char *text,
                                 const char *what, const char *why) {
  if(strcmp(why, "out of memory") == 0)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  return ddb_error_set(err, DDB_ERR_CONFIG, "bad endpoint '%.200s'%s: %s",
                       text, what, why);
}

/* The host of a parse, checked and in lower case, into out[0..cap) (a
** zone id or a byte that is not ASCII refused). */
static ddb_result endpoint_host(CURLU *u, const char *text, const char *what,
                                char *out, size_t cap, ddb_error *err) {
  char *host = NULL, *zone = NULL;
  ddb_result result = DDB_OK;
  size_t i, n;
  CURLUcode uc = curl_url_get(u, CURLUPART_HOST, &host, 0);
  if(uc) {
    result = endpoint_error(err, text, what, url_refusal(uc));
    goto fail;
  }
  if(curl_url_get(u, CURLUPART_ZONEID, &zone, 0) == CURLUE_OK) {
    char why[160];
    snprintf(why, sizeof(why),
             "an IPv6 zone id ('%%25%.40s') is not supported: give the "
             "address without it",
             zone);
    result = endpoint_error(err, text, what, why);
    goto fail;
  }
  n = strlen(host);
  if(!n || n >= cap) {
    result = endpoint_error(err, text, what, n ? "host too long" : "no host");
    goto fail;
  }
  for(i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)host[i];
    if(ch <= ' ' || ch >= 0x7f) {
      result = endpoint_error(err, text, what,
                              "the host name must be ASCII (for an "
                              "international name, its xn-- form)");
      goto fail;
    }
    out[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
  }
  out[n] = 0;

fail:
  curl_free(host);
  curl_free(zone);
  return result;
}

/* The shape of endpoint text, before libcurl reads it: http(s), a host,
** no user or password, no query or fragment.  *tls: https.  Returns
** DDB_OK or a DDB_ERR_CONFIG naming what is wrong. */
static ddb_result endpoint_shape(const char *text, const char *what, int *tls,
                                 ddb_error *err) {
  const char *auth;
  size_t hlen = authority(text, &auth);
  if(memchr(auth, '@', hlen))
    /* user:password@ would put a secret in messages and dynamodb_info */
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "bad endpoint%s: a user name or password in the URL "
                         "is not allowed",
                         what);
  if(!http_scheme(text, tls))
    return endpoint_error(err, text, what,
                          "must start with http:// or https://");
  if(!hlen)
    return endpoint_error(err, text, what, "no host");
  if(strchr(text, '?'))
    return endpoint_error(err, text, what,
                          "a query ('?...') is not allowed: requests go to "
                          "the endpoint's path");
  if(strchr(text, '#'))
    return endpoint_error(err, text, what,
                          "a fragment ('#...') is not allowed");
  return DDB_OK;
}

/* The path of parsed URL u without its trailing slashes, then the "/"
** requests go to, into path (cap bytes; *plen: its length before the
** "/"), set back into u; *url the whole URL curl will connect to
** (curl_free), sign_path the path as SigV4 signs it.  Returns DDB_OK or
** an error naming text. */
static ddb_result endpoint_path(CURLU *u, const char *text, const char *what,
                                char *path, size_t cap, size_t *plen,
                                char **url, char *sign_path, size_t sign_cap,
                                ddb_error *err) {
  char *cpath = NULL;
  ddb_result result = DDB_OK;
  CURLUcode uc = curl_url_get(u, CURLUPART_PATH, &cpath, 0);
  size_t n;
  if(uc) {
    result = endpoint_error(err, text, what, url_refusal(uc));
    goto fail;
  }
  n = strlen(cpath);
  while(n > 0 && cpath[n - 1] == '/')
    n--;
  if(n + 2 > cap) {
    result = endpoint_error(err, text, what, "path too long");
    goto fail;
  }
  memcpy(path, cpath, n);
  path[n] = '/';
  path[n + 1] = 0;
  *plen = n;
  uc = curl_url_set(u, CURLUPART_PATH, path, 0);
  if(!uc)
    uc = curl_url_get(u, CURLUPART_URL, url, 0);
  if(uc) {
    result = endpoint_error(err, text, what, url_refusal(uc));
    goto fail;
  }
  if(ddb_sigv4_uri_encode(path, sign_path, sign_cap))
    result = endpoint_error(err, text, what, "path too long");
fail:
  curl_free(cpath);
  return result;
}

/* The strings of out from the parsed parts: the Host header host[:port]
** and the canonical endpoint (no trailing dot, localhost as 127.0.0.1,
** the path's first plen bytes), copies of url and sign_path.  host is
** changed (its trailing dots).  Returns DDB_OK or DDB_ERR_NOMEM. */
static ddb_result endpoint_strings(ddb_endpoint *out, char *host,
                                   const char *port, int tls, const char *path,
                                   size_t plen, const char *url,
                                   const char *sign_path, ddb_error *err) {
  const char *canon_host;
  size_t hlen;
  ddb_buf b;
  ddb_buf_init(&b, 2 * DDB_SIGV4_HOST_MAX + 2 * DDB_SIGV4_PATH_MAX);
  ddb_buf_adds(&b, host);
  if(port) {
    ddb_buf_addc(&b, ':');
    ddb_buf_adds(&b, port);
  }
  out->host = ddb_buf_take(&b, NULL);
  hlen = strlen(host);
  while(hlen > 1 && host[hlen - 1] == '.' && host[0] != '[')
    host[--hlen] = 0;
  canon_host = strcmp(host, "localhost") == 0 ? "127.0.0.1" : host;
  ddb_buf_init(&b, 2 * DDB_SIGV4_HOST_MAX + 2 * DDB_SIGV4_PATH_MAX);
  ddb_buf_adds(&b, tls ? "https://" : "http://");
  ddb_buf_adds(&b, canon_host);
  if(port) {
    ddb_buf_addc(&b, ':');
    ddb_buf_adds(&b, port);
  }
  ddb_buf_add(&b, path, plen);
  out->canonical = ddb_buf_take(&b, NULL);
  ddb_buf_free(&b);
  out->url = ddb_strdup(url);
  out->sign_path = ddb_strdup(sign_path);
  if(!out->host || !out->canonical || !out->url || !out->sign_path)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  return DDB_OK;
}

/* See ddb_client_int.h. */
ddb_result ddb_endpoint_parse(const char *text, const char *what,
                              ddb_endpoint *out, ddb_error *err) {
  char host[DDB_SIGV4_HOST_MAX], path[DDB_SIGV4_PATH_MAX];
  char sign_path[DDB_SIGV4_PATH_MAX];
  char *port = NULL, *url = NULL;
  ddb_result result;
  CURLU *u = NULL;
  CURLUcode uc;
  size_t plen = 0;
  int tls = 0;

  memset(out, 0, sizeof(*out));
  result = endpoint_shape(text, what, &tls, err);
  if(result)
    return result;
  /* the one parse */
  u = curl_url();
  if(!u)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  uc = curl_url_set(u, CURLUPART_URL, text, 0);
  if(uc) {
    result = endpoint_error(err, text, what, url_refusal(uc));
    goto fail;
  }
  result = endpoint_host(u, text, what, host, sizeof(host), err);
  if(result)
    goto fail;
  curl_url_get(u, CURLUPART_PORT, &port, 0); /* only when the URL has one */
  if(port && strcmp(port, tls ? "443" : "80") == 0) {
    curl_free(port);
    port = NULL; /* the scheme's default is no port */
  }
  result = endpoint_path(u, text, what, path, sizeof(path), &plen, &url,
                         sign_path, sizeof(sign_path), err);
  if(result)
    goto fail;
  result =
      endpoint_strings(out, host, port, tls, path, plen, url, sign_path, err);

fail:
  if(result)
    ddb_endpoint_free(out);
  curl_free(port);
  curl_free(url);
  curl_url_cleanup(u);
  return result;
}

/* See ddb_client_int.h. */
void ddb_endpoint_free(ddb_endpoint *ep) {
  free(ep->url);
  free(ep->host);
  free(ep->sign_path);
  free(ep->canonical);
  memset(ep, 0, sizeof(*ep));
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
    v = configured_endpoint(prof, "dynamodb", "DYNAMODB", &conf, &what,
                            whatbuf, sizeof(whatbuf));
  if(v) {
    result = set_endpoint(s, v, what, err);
    free(conf);
    return result;
  }
  if(snprintf(buf, sizeof(buf), "https://dynamodb.%s.amazonaws.com",
              s->region) >= (int)sizeof(buf))
    return ddb_error_set(err, DDB_ERR_CONFIG, "region too long");
  return set_endpoint(s, buf, " (from the region)", err);
}

/* See ddb_client_int.h: a credential source's service endpoint. */
char *ddb_service_endpoint(const ddb_profile *prof, const char *service,
                           const char *env_suffix, const char *dflt,
                           ddb_error *err) {
  const char *what, *v;
  char *conf, *out = NULL, whatbuf[80];
  ddb_endpoint ep;
  size_t n;
  v = configured_endpoint(prof, service, env_suffix, &conf, &what, whatbuf,
                          sizeof(whatbuf));
  if(!v) {
    v = dflt;
    what = "";
  }
  if(ddb_endpoint_parse(v, what, &ep, err) == DDB_OK) {
    ddb_endpoint_free(&ep);
    n = strlen(v);
    while(n > 0 && v[n - 1] == '/')
      n--;
    out = malloc(n + 1);
    if(out) {
      memcpy(out, v, n);
      out[n] = 0;
    } else
      ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  }
  free(conf);
  return out;
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
  cenv.region = s->region;
  cenv.ca_bundle = s->ca_bundle;
  cenv.stop = resolve_stopped;
  cenv.stop_ud = (void *)cfg;
  result = ddb_creds_chain(&prof, cfg->profile != NULL, &cenv, &s->src,
                           &creds, &s->cred_source, err);
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
