/*
** creds_meta.c -- credentials from the container endpoint (ECS/EKS:
** AWS_CONTAINER_CREDENTIALS_RELATIVE_URI on http://169.254.170.2, or
** AWS_CONTAINER_CREDENTIALS_FULL_URI, https or http to a loopback or the
** ECS/EKS addresses, with the Authorization header from
** AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE or _TOKEN) and from EC2 instance
** metadata (IMDSv2 only: a PUT for a session token, then the role name,
** then its credentials; AWS_EC2_METADATA_SERVICE_ENDPOINT replaces
** http://169.254.169.254).  Both over HTTP with short timeouts (1 s to
** connect, 2 s per request), one attempt, no proxy, no redirects.
*/
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ddb_client_int.h"

/* Container and instance metadata: connect, and a whole request. */
#define META_CONNECT_MS   1000
#define META_TIMEOUT_MS   2000
#define CONTAINER_HOST    "http://169.254.170.2"
#define IMDS_DEFAULT      "http://169.254.169.254"
#define IMDS_DEFAULT_IPV6 "http://[fd00:ec2::254]"
#define IMDS_TOKEN_TTL    "21600"

/* curl write callback: append to the ddb_buf ud, stop past its cap. */
static size_t on_meta_body(char *p, size_t size, size_t n, void *ud) {
  return ddb_buf_add(ud, p, size * n) ? 0 : size * n;
}

/* Free a request's header list (NULL is fine), its one header, which may
** hold a token, wiped first. */
static void headers_wipe_free(struct curl_slist *hdrs) {
  if(hdrs) {
    memset(hdrs->data, 0, strlen(hdrs->data));
    curl_slist_free_all(hdrs);
  }
}

/* One request to a metadata endpoint: method ("GET" or "PUT") on url with
** the headers hdrs, short timeouts, no proxy, no redirects.  out gets the
** body and *status the HTTP status.  Errors name what and the URL. */
static ddb_result meta_request(const char *method, const char *url,
                               struct curl_slist *hdrs, const char *what,
                               ddb_buf *out, long *status, ddb_error *err) {
  CURL *h = curl_easy_init();
  CURLcode cc;
  *status = 0;
  if(!h)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  ddb_buf_reset(out);
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)META_CONNECT_MS);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)META_TIMEOUT_MS);
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE,
                   (curl_off_t)DDB_CREDS_OUT_MAX);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_meta_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
  if(strcmp(method, "PUT") == 0) {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L);
  }
  cc = curl_easy_perform(h);
  if(cc == CURLE_OK)
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
  curl_easy_cleanup(h);
  if(cc != CURLE_OK)
    return ddb_error_set(err, DDB_ERR_CONFIG, "%s (%.200s): %s", what, url,
                         out->failed ? "answer too large"
                                     : curl_easy_strerror(cc));
  if(*status != 200)
    return ddb_error_set(err, DDB_ERR_CONFIG, "%s (%.200s): HTTP %ld", what,
                         url, *status);
  return DDB_OK;
}

/* Read the Authorization value for a container endpoint from the file
** path (trimmed).  Returns a malloc'ed string or NULL (err set). */
static char *read_token_file(const char *path, const char *what,
                             ddb_error *err) {
  FILE *f = fopen(path, "r");
  char buf[DDB_CREDS_ERR_MAX];
  size_t n;
  if(!f) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "%s: AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE '%.200s': %s",
                  what, path, strerror(errno));
    return NULL;
  }
  n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  while(n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' ||
                  buf[n - 1] == ' ' || buf[n - 1] == '\t'))
    n--;
  buf[n] = 0;
  if(!n || strchr(buf, '\n') || strchr(buf, '\r')) {
    memset(buf, 0, sizeof(buf));
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "%s: AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE '%.200s' does "
                  "not hold one token",
                  what, path);
    return NULL;
  }
  {
    char *p = ddb_strndup(buf, n);
    memset(buf, 0, sizeof(buf));
    if(!p)
      ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    return p;
  }
}

/* See ddb_client_int.h: fetch credentials from the container endpoint of
** src. */
ddb_result ddb_creds_container_fetch(const ddb_cred_source *src,
                                     ddb_creds *out, ddb_error *err) {
  ddb_buf body, hdr;
  struct curl_slist *hdrs = NULL;
  char *token = NULL;
  long status;
  ddb_result result = DDB_OK;

  ddb_buf_init(&body, DDB_CREDS_OUT_MAX);
  ddb_buf_init(&hdr, DDB_CREDS_ERR_MAX + 32);
  if(src->auth_file) {
    token = read_token_file(src->auth_file, src->what, err);
    if(!token) {
      result = err ? err->code : DDB_ERR_CONFIG;
      goto fail;
    }
  }
  if(token || src->auth) {
    ddb_buf_adds(&hdr, "Authorization: ");
    ddb_buf_adds(&hdr, token ? token : src->auth);
    if(hdr.failed || !(hdrs = curl_slist_append(NULL, hdr.p))) {
      result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
      goto fail;
    }
  }
  result = meta_request("GET", src->url, hdrs, src->what, &body, &status, err);
  if(result)
    goto fail;
  result = ddb_creds_from_json(body.p ? body.p : "", body.len, 0, src->what,
                               out, err);

fail:
  headers_wipe_free(hdrs);
  if(hdr.p)
    memset(hdr.p, 0, hdr.len);
  if(body.p)
    memset(body.p, 0, body.len);
  ddb_buf_free(&hdr);
  ddb_buf_free(&body);
  ddb_wipe_free(token);
  return result;
}

/* Is the role name r one IMDS can hand out (no '/', no dot segments)? */
static int role_ok(const char *r, size_t n) {
  size_t i;
  if(n == 0 || n > 128 || (r[0] == '.'))
    return 0;
  for(i = 0; i < n; i++) {
    char c = r[i];
    if(!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || strchr("+=,.@_-", c)))
      return 0;
  }
  return 1;
}

/* See ddb_client_int.h: fetch credentials from EC2 instance metadata
** (IMDSv2) at src->url. */
ddb_result ddb_creds_imds_fetch(const ddb_cred_source *src, ddb_creds *out,
                                ddb_error *err) {
  ddb_buf body, line;
  struct curl_slist *hdrs = NULL;
  long status;
  size_t n;
  ddb_result result;

  ddb_buf_init(&body, DDB_CREDS_OUT_MAX);
  ddb_buf_init(&line, 1024);
  /* 1. a session token */
  hdrs = curl_slist_append(
      NULL, "X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TOKEN_TTL);
  ddb_buf_addf(&line, "%s/latest/api/token", src->url);
  if(!hdrs || line.failed) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  result = meta_request("PUT", line.p, hdrs, src->what, &body, &status, err);
  if(result)
    goto fail;
  curl_slist_free_all(hdrs);
  hdrs = NULL;
  n = body.len;
  while(n > 0 && (body.p[n - 1] == '\n' || body.p[n - 1] == '\r'))
    n--;
  ddb_buf_reset(&line);
  ddb_buf_adds(&line, "X-aws-ec2-metadata-token: ");
  if(n == 0 || memchr(body.p, '\n', n) || memchr(body.p, '\r', n) ||
     ddb_buf_add(&line, body.p, n)) {
    result =
        ddb_error_set(err, DDB_ERR_CONFIG, "%s: bad session token", src->what);
    goto fail;
  }
  hdrs = curl_slist_append(NULL, line.p);
  memset(line.p, 0, line.len);
  if(!hdrs) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  /* 2. the role name (the first line) */
  ddb_buf_reset(&line);
  ddb_buf_addf(&line, "%s/latest/meta-data/iam/security-credentials/",
               src->url);
  result = meta_request("GET", line.p, hdrs, src->what, &body, &status, err);
  if(result)
    goto fail;
  n = 0;
  while(n < body.len && body.p[n] != '\n' && body.p[n] != '\r')
    n++;
  if(!role_ok(body.p ? body.p : "", n)) {
    result =
        ddb_error_set(err, DDB_ERR_CONFIG,
                      "%s: no IAM role attached to the instance", src->what);
    goto fail;
  }
  ddb_buf_add(&line, body.p, n);
  if(line.failed) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  /* 3. its credentials */
  result = meta_request("GET", line.p, hdrs, src->what, &body, &status, err);
  if(result)
    goto fail;
  result = ddb_creds_from_json(body.p ? body.p : "", body.len, 0, src->what,
                               out, err);

fail:
  headers_wipe_free(hdrs);
  if(body.p)
    memset(body.p, 0, body.len);
  ddb_buf_free(&body);
  ddb_buf_free(&line);
  return result;
}

/* ------------------------------------------------------------------------
** Finding the endpoints
*/

/* Is host[0..n) one a container endpoint may be reached on over plain
** http: a loopback, or the ECS/EKS link-local addresses? */
static int container_host_ok(const char *host, size_t n) {
  static const char *const ok[] = {"localhost", "[::1]", "169.254.170.2",
                                   "169.254.170.23", "[fd00:ec2::23]"};
  size_t i;
  for(i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
    if(strlen(ok[i]) == n && strncasecmp(host, ok[i], n) == 0)
      return 1;
  return n > 4 && strncmp(host, "127.", 4) == 0 &&
         strspn(host, "0123456789.") == n;
}

/* Check AWS_CONTAINER_CREDENTIALS_FULL_URI url.  Returns 0 or -1. */
static int container_url_ok(const char *url) {
  const char *host, *end;
  if(strncmp(url, "https://", 8) == 0)
    return 0;
  if(strncmp(url, "http://", 7) != 0)
    return -1;
  host = url + 7;
  if(*host == '[')
    end = strchr(host, ']') ? strchr(host, ']') + 1 : NULL;
  else
    end = host + strcspn(host, ":/?#");
  if(!end)
    return -1;
  return container_host_ok(host, (size_t)(end - host)) ? 0 : -1;
}

/* Look for the container endpoint: fills src and returns 1 when one is
** configured, 0 when not, -1 on a bad setting (err set). */
int ddb_creds_container_source(ddb_cred_source *src, ddb_error *err) {
  const char *rel = ddb_env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
  const char *full = ddb_env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  const char *tok = ddb_env("AWS_CONTAINER_AUTHORIZATION_TOKEN");
  const char *tok_file = ddb_env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
  ddb_buf u;
  if(!rel && !full)
    return 0;
  ddb_buf_init(&u, 4096);
  if(rel) {
    ddb_buf_adds(&u, CONTAINER_HOST);
    if(rel[0] != '/')
      ddb_buf_addc(&u, '/');
    ddb_buf_adds(&u, rel);
  } else {
    if(container_url_ok(full)) {
      ddb_error_set(err, DDB_ERR_CONFIG,
                    "AWS_CONTAINER_CREDENTIALS_FULL_URI '%.200s': must be "
                    "https, or http to a loopback address or the ECS/EKS "
                    "credentials address",
                    full);
      ddb_buf_free(&u);
      return -1;
    }
    ddb_buf_adds(&u, full);
  }
  src->kind = DDB_CRED_CONTAINER;
  src->url = ddb_buf_take(&u, NULL);
  src->what = ddb_strdup("container credentials");
  if(tok_file)
    src->auth_file = ddb_strdup(tok_file);
  else if(tok)
    src->auth = ddb_strdup(tok);
  if(!src->url || !src->what || (tok_file && !src->auth_file) ||
     (!tok_file && tok && !src->auth)) {
    ddb_buf_free(&u);
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    return -1;
  }
  ddb_buf_free(&u);
  return 1;
}

/* The instance metadata endpoint (malloc'ed), without a trailing '/'. */
char *ddb_creds_imds_endpoint(void) {
  const char *v = ddb_env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
  const char *mode = ddb_env("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
  size_t n;
  if(!v)
    v = (mode && strcasecmp(mode, "IPv6") == 0) ? IMDS_DEFAULT_IPV6
                                                : IMDS_DEFAULT;
  n = strlen(v);
  while(n > 0 && v[n - 1] == '/')
    n--;
  return ddb_strndup(v, n);
}
