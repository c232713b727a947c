/*
** creds_http.c -- one request of a credential source to an AWS service:
** STS (AssumeRole, AssumeRoleWithWebIdentity), the IAM Identity Center
** portal (GetRoleCredentials) and SSO OIDC (CreateToken).
**
** Unlike the metadata endpoints (creds_meta.c: one short attempt, no
** proxy) these are real services, reached as the DynamoDB endpoint is:
** http or https as configured, the client's CA bundle, the proxy of the
** environment, no redirects.  A request is retried as botocore retries a
** transient failure: up to ATTEMPTS attempts while the connection fails or
** the answer is a 5xx or a 429.  The stop hook is polled while a request
** runs (curl's progress callback), so a slow STS is interruptible like a
** credential_process.  Headers may carry a token (SSO's bearer token):
** the list is wiped when freed, and no error quotes a header or a body.
*/
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddb_client_int.h"
#include "http_int.h"

/* Per attempt: connect, and the whole request; attempts, and the pause
** before the second and third. */
#define CONNECT_MS 10000
#define ATTEMPT_MS 30000
#define ATTEMPTS   3
static const long pause_ms[ATTEMPTS] = {0, 100, 400};

/* curl write callback: append to the ddb_buf ud, stop past its cap. */
static size_t on_body(char *p, size_t size, size_t n, void *ud) {
  return ddb_buf_add(ud, p, size * n) ? 0 : size * n;
}

/* curl progress callback: non-zero (abort) once the request's stop hook
** says so. */
static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut,
                       curl_off_t un) {
  const ddb_creds_req *req = ud;
  (void)dt;
  (void)dn;
  (void)ut;
  (void)un;
  return req->stop && req->stop(req->stop_ud) ? 1 : 0;
}

/* Sleep ms milliseconds in steps of 20 ms, polling req's stop hook: 1 when
** it said stop, else 0. */
static int pause_or_stop(const ddb_creds_req *req, long ms) {
  struct timespec step = {0, 20 * 1000000L};
  for(; ms > 0; ms -= 20) {
    if(req->stop && req->stop(req->stop_ud))
      return 1;
    nanosleep(&step, NULL);
  }
  return req->stop && req->stop(req->stop_ud);
}

/* Free a header list, each line wiped first (it may hold a token). */
static void headers_free(struct curl_slist *l) {
  struct curl_slist *x;
  for(x = l; x; x = x->next)
    ddb_wipe(x->data, strlen(x->data));
  curl_slist_free_all(l);
}

/* The header list of req (NULL when none or out of memory: *nomem set). */
static struct curl_slist *header_list(const ddb_creds_req *req, int *nomem) {
  struct curl_slist *l = NULL, *n;
  const char *const *h;
  *nomem = 0;
  for(h = req->headers; h && *h; h++) {
    n = curl_slist_append(l, *h);
    if(!n) {
      headers_free(l);
      *nomem = 1;
      return NULL;
    }
    l = n;
  }
  return l;
}

/* One attempt of req on h: the answer in out and *status, or the curl
** code of the failure. */
static CURLcode attempt(CURL *h, const ddb_creds_req *req,
                        struct curl_slist *hdrs, ddb_buf *out, long *status) {
  CURLcode cc;
  curl_easy_reset(h);
  ddb_buf_reset(out);
  *status = 0;
  curl_easy_setopt(h, CURLOPT_URL, req->url);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)CONNECT_MS);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)ATTEMPT_MS);
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE,
                   (curl_off_t)DDB_CREDS_OUT_MAX);
  if(req->ca_bundle)
    curl_easy_setopt(h, CURLOPT_CAINFO, req->ca_bundle);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, (void *)req);
  if(strcmp(req->method, "POST") == 0) {
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body ? req->body : "");
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                     (curl_off_t)(req->body ? req->body_len : 0));
  }
  cc = curl_easy_perform(h);
  if(cc == CURLE_OK)
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
  return cc;
}

/* See ddb_client_int.h. */
ddb_result ddb_creds_http(const ddb_creds_req *req, ddb_buf *out, long *status,
                          ddb_error *err) {
  struct curl_slist *hdrs;
  ddb_result result = DDB_OK;
  CURLcode cc = CURLE_OK;
  CURL *h = NULL;
  int i, nomem;

  *status = 0;
  hdrs = header_list(req, &nomem);
  ddb_curl_global_init(); /* libcurl's blocks wiped when freed (curl_mem.c) */
  if(nomem || (h = curl_easy_init()) == NULL) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  for(i = 0; i < ATTEMPTS; i++) {
    if(pause_or_stop(req, pause_ms[i])) {
      cc = CURLE_ABORTED_BY_CALLBACK;
      break;
    }
    cc = attempt(h, req, hdrs, out, status);
    if(cc == CURLE_ABORTED_BY_CALLBACK || out->failed ||
       cc == CURLE_FILESIZE_EXCEEDED)
      break;
    if(cc == CURLE_OK && *status < 500 && *status != 429)
      break;
  }
  if(cc == CURLE_ABORTED_BY_CALLBACK)
    result = ddb_error_set(err, DDB_ERR_CANCELLED, "%s (%.200s): interrupted",
                           req->what, req->url);
  else if(out->failed || cc == CURLE_FILESIZE_EXCEEDED)
    result = ddb_error_set(err, DDB_ERR_CONFIG,
                           "%s (%.200s): answer larger than %d bytes",
                           req->what, req->url, DDB_CREDS_OUT_MAX);
  else if(cc != CURLE_OK)
    result = ddb_error_set(err, DDB_ERR_CONFIG, "%s (%.200s): %s", req->what,
                           req->url, curl_easy_strerror(cc));

fail:
  if(h)
    curl_easy_cleanup(h);
  headers_free(hdrs);
  return result;
}
