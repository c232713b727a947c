/*
** endpoint.c -- where an AWS service is, as botocore finds a configured
** endpoint, and an endpoint URL parsed once (the rules are below).  A
** leaf: it reads the profile (profile.c) and the environment, and calls
** libcurl's URL API; config.c (DynamoDB's endpoint) and the credential
** sources (STS, the SSO portal, SSO OIDC) call it.
**
** A service's endpoint, in botocore's order: AWS_ENDPOINT_URL_<SERVICE>,
** AWS_ENDPOINT_URL, the service's entry of the profile's services
** section, the profile's endpoint_url; none of them when
** AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true (or the profile's
** ignore_configured_endpoint_urls = true).  The services section looks
** like this:
**
**   [profile dev]
**   services = local
**   [services local]
**   dynamodb =
**     endpoint_url = http://localhost:8000
*/
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ddb_client_int.h"
#include "sigv4.h"

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

/* See ddb_client_int.h: the endpoint configured for a service. */
const char *ddb_configured_endpoint(const ddb_profile *prof,
                                    const char *service,
                                    const char *env_suffix, char **conf,
                                    const char **what, char *whatbuf,
                                    size_t whatcap) {
  char var[48];
  const char *v;
  *conf = NULL;
  *what = "";
  if(is_true(ddb_env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")) ||
     is_true(ddb_profile_value(prof, "ignore_configured_endpoint_urls")))
    return NULL;
  snprintf(var, sizeof(var), "AWS_ENDPOINT_URL_%s", env_suffix);
  if((v = ddb_env(var)) != NULL) {
    snprintf(whatbuf, whatcap, " (%s)", var);
    *what = whatbuf;
    return v;
  }
  if((v = ddb_env("AWS_ENDPOINT_URL")) != NULL) {
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

/* See ddb_client_int.h: a credential source's service endpoint. */
char *ddb_service_endpoint(const ddb_profile *prof, const char *service,
                           const char *env_suffix, const char *dflt,
                           ddb_error *err) {
  const char *what, *v;
  char *conf, *out = NULL, whatbuf[80];
  ddb_endpoint ep;
  size_t n;
  v = ddb_configured_endpoint(prof, service, env_suffix, &conf, &what, whatbuf,
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
