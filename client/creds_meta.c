/*
** creds_meta.c -- credentials from the container endpoint (ECS/EKS:
** AWS_CONTAINER_CREDENTIALS_RELATIVE_URI on http://169.254.170.2, or
** AWS_CONTAINER_CREDENTIALS_FULL_URI, https or http to a loopback or the
** ECS/EKS addresses, checked on the host libcurl's URL parser says it
** will connect to, with the Authorization header from
** AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE or _TOKEN) and from EC2 instance
** metadata (IMDSv2 only: a PUT for a session token, then the role name,
** then its credentials; AWS_EC2_METADATA_SERVICE_ENDPOINT replaces
** http://169.254.169.254).  Both over HTTP with short timeouts (1 s to
** connect, 2 s per request), one attempt, no proxy, no redirects.
*/
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ddb_client_int.h"
#include "http_int.h"

/* Container and instance metadata: connect, and a whole request. */
#define META_CONNECT_MS   1000
#define META_TIMEOUT_MS   2000
#define CONTAINER_ADDR    "169.254.170.2"
#define CONTAINER_HOST    "http://" CONTAINER_ADDR
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
  CURL *h;
  CURLcode cc;
  ddb_curl_global_init(); /* libcurl's blocks wiped when freed (curl_mem.c) */
  h = curl_easy_init();
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
  /* the answer's room at once: a realloc would leave a copy unwiped */
  ddb_buf_reserve(&body, DDB_CREDS_OUT_MAX);
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

/* IMDSv2's step 1: PUT a session token of src->url (body and line are
** scratch, body reserved whole).  Returns DDB_OK with *hdrs the header
** list that sends it (the caller's, for headers_wipe_free), or an error
** naming src->what (a token that is empty or holds a line break is bad). */
static ddb_result imds_token(const ddb_cred_source *src, ddb_buf *body,
                             ddb_buf *line, struct curl_slist **hdrs,
                             ddb_error *err) {
  struct curl_slist *h;
  long status;
  size_t n;
  ddb_result result;
  h = curl_slist_append(
      NULL, "X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TOKEN_TTL);
  ddb_buf_addf(line, "%s/latest/api/token", src->url);
  if(!h || line->failed) {
    curl_slist_free_all(h);
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  }
  result = meta_request("PUT", line->p, h, src->what, body, &status, err);
  curl_slist_free_all(h);
  if(result)
    return result;
  n = body->len;
  while(n > 0 && (body->p[n - 1] == '\n' || body->p[n - 1] == '\r'))
    n--;
  ddb_buf_reset(line);
  ddb_buf_adds(line, "X-aws-ec2-metadata-token: ");
  if(n == 0 || memchr(body->p, '\n', n) || memchr(body->p, '\r', n) ||
     ddb_buf_add(line, body->p, n))
    return ddb_error_set(err, DDB_ERR_CONFIG, "%s: bad session token",
                         src->what);
  *hdrs = curl_slist_append(NULL, line->p);
  memset(line->p, 0, line->len);
  if(!*hdrs)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  return DDB_OK;
}

/* IMDSv2's step 2: the role name (the first line of the answer) with the
** token headers hdrs.  Returns DDB_OK with line the URL of the role's
** credentials, or an error naming src->what (no role, or a name that is
** not one IAM allows). */
static ddb_result imds_role(const ddb_cred_source *src,
                            struct curl_slist *hdrs, ddb_buf *body,
                            ddb_buf *line, ddb_error *err) {
  long status;
  size_t n = 0;
  ddb_result result;
  ddb_buf_reset(line);
  ddb_buf_addf(line, "%s/latest/meta-data/iam/security-credentials/",
               src->url);
  result = meta_request("GET", line->p, hdrs, src->what, body, &status, err);
  if(result)
    return result;
  while(n < body->len && body->p[n] != '\n' && body->p[n] != '\r')
    n++;
  if(!role_ok(body->p ? body->p : "", n))
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "%s: no IAM role attached to the instance",
                         src->what);
  ddb_buf_add(line, body->p, n);
  if(line->failed)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  return DDB_OK;
}

/* See ddb_client_int.h: fetch credentials from EC2 instance metadata
** (IMDSv2) at src->url: a session token, the role's name, its
** credentials. */
ddb_result ddb_creds_imds_fetch(const ddb_cred_source *src, ddb_creds *out,
                                ddb_error *err) {
  ddb_buf body, line;
  struct curl_slist *hdrs = NULL;
  long status;
  ddb_result result;

  ddb_buf_init(&body, DDB_CREDS_OUT_MAX);
  /* the answer's room at once: a realloc would leave a copy unwiped */
  ddb_buf_reserve(&body, DDB_CREDS_OUT_MAX);
  ddb_buf_init(&line, 1024);
  result = imds_token(src, &body, &line, &hdrs, err);
  if(result)
    goto fail;
  result = imds_role(src, hdrs, &body, &line, err);
  if(result)
    goto fail;
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

/* Is host (as curl's URL parser gives it: an IPv6 address in brackets)
** one a container endpoint may be reached on over plain http: a loopback
** address or "localhost", or the ECS/EKS link-local addresses (the SDKs'
** rule)? */
static int container_host_ok(const char *host) {
  unsigned char a[16];
  char v6[64];
  size_t n = strlen(host);
  if(strcasecmp(host, "localhost") == 0)
    return 1;
  if(inet_pton(AF_INET, host, a) == 1)
    return a[0] == 127 || strcmp(host, "169.254.170.2") == 0 ||
           strcmp(host, "169.254.170.23") == 0;
  if(n < 3 || n - 2 >= sizeof(v6) || host[0] != '[' || host[n - 1] != ']')
    return 0;
  memcpy(v6, host + 1, n - 2);
  v6[n - 2] = 0;
  if(inet_pton(AF_INET6, v6, a) != 1)
    return 0;
  {
    static const unsigned char eks[16] = {
        0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x23};
    static const unsigned char lo[16] = {0, 0, 0, 0, 0, 0, 0, 0,
                                         0, 0, 0, 0, 0, 0, 0, 1};
    return memcmp(a, lo, 16) == 0 || memcmp(a, eks, 16) == 0;
  }
}

/* Parse the container endpoint url (from variable var) with libcurl's URL
** API, as curl will connect: https to any host, http only to a host that
** container_host_ok() allows (relative: only to CONTAINER_HOST), never a
** user name or password.  Returns the URL as curl gives it back (what is
** fetched is what was checked; malloc'ed), or NULL (err set). */
static char *container_url(const char *url, const char *var, int relative,
                           ddb_error *err) {
  CURLU *u = curl_url();
  char *scheme = NULL, *host = NULL, *user = NULL, *pass = NULL, *full = NULL;
  char *result = NULL;
  if(!u) {
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    return NULL;
  }
  if(curl_url_set(u, CURLUPART_URL, url, 0) ||
     curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) ||
     curl_url_get(u, CURLUPART_HOST, &host, 0)) {
    ddb_error_set(err, DDB_ERR_CONFIG, "%s: not a URL", var);
    goto done;
  }
  curl_url_get(u, CURLUPART_USER, &user, 0);
  curl_url_get(u, CURLUPART_PASSWORD, &pass, 0);
  if(user || pass) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "%s: a user name or password in the URL is not allowed "
                  "(it would connect to host '%.100s')",
                  var, host);
    goto done;
  }
  if(strcmp(scheme, "https") != 0 && strcmp(scheme, "http") != 0) {
    ddb_error_set(err, DDB_ERR_CONFIG, "%s '%.200s': must be http or https",
                  var, url);
    goto done;
  }
  if(relative ? strcmp(host, CONTAINER_ADDR) != 0
              : strcmp(scheme, "http") == 0 && !container_host_ok(host)) {
    ddb_error_set(err, DDB_ERR_CONFIG,
                  "%s '%.200s': must be https, or http to a loopback address "
                  "or the ECS/EKS credentials address, not to host '%.100s'",
                  var, url, host);
    goto done;
  }
  if(curl_url_get(u, CURLUPART_URL, &full, 0)) {
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto done;
  }
  result = ddb_strdup(full);
  if(!result)
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");

done:
  curl_free(scheme);
  curl_free(host);
  curl_free(user);
  curl_free(pass);
  curl_free(full);
  curl_url_cleanup(u);
  return result;
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
  } else
    ddb_buf_adds(&u, full);
  if(u.failed) {
    ddb_buf_free(&u);
    ddb_error_set(err, DDB_ERR_CONFIG, "%s: longer than 4096 bytes",
                  rel ? "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"
                      : "AWS_CONTAINER_CREDENTIALS_FULL_URI");
    return -1;
  }
  src->kind = DDB_CRED_CONTAINER;
  src->url = container_url(u.p,
                           rel ? "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"
                               : "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                           rel != NULL, err);
  ddb_buf_free(&u);
  if(!src->url)
    return -1;
  src->what = ddb_strdup("container credentials");
  if(tok_file)
    src->auth_file = ddb_strdup(tok_file);
  else if(tok)
    src->auth = ddb_strdup(tok);
  if(!src->what || (tok_file && !src->auth_file) ||
     (!tok_file && tok && !src->auth)) {
    ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    return -1;
  }
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
