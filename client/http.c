/*
** http.c -- the transport: one DynamoDB request over libcurl, with its
** retries, and the verdict on each answer.
**
** One request is one POST of a JSON body to the endpoint, signed by
** signer.c, on a pooled curl handle of the client (client.c); its
** attempts are recorded in the request log and the counters (log.c).
**
** Retries follow the AWS SDKs' defaults for DynamoDB: up to max_retries
** (10) retries of the throttling family (botocore's list, and the reasons
** DynamoDB gives with it: throttle.c), ReplicatedWriteConflictException
** and TransactionInProgressException, HTTP 500/502/503/504, connection
** failures and timeouts, truncated bodies, bodies that do not parse and
** bodies whose x-amz-crc32 header does not match (checked on every
** response that has one), with exponential backoff and full jitter (25 ms
** base, 500 ms for throttling, 20 s cap; cancel.c).  Everything else (a
** ValidationException, a ConditionalCheckFailedException, an
** AccessDeniedException, a bad certificate, ...) fails at once with
** DynamoDB's (or curl's) message.  The whole request is bounded by the
** timeout (default 60 s), connecting by min(10 s, timeout), so one call
** ends within (max_retries + 1) * timeout plus the backoff.
**
** Responses are not compressed (no Accept-Encoding): x-amz-crc32 is the
** CRC of the bytes DynamoDB sends, and curl hands over decoded bytes.
**
** Lost answers.  A retry may follow an attempt that DynamoDB executed but
** whose answer never arrived (a reset, a timeout, a truncated or damaged
** body, a 5xx).  Reads and unconditional writes are idempotent;
** TransactWriteItems carries a ClientRequestToken; UpdateItem sets
** absolute values.  A conditional PutItem (INSERT) would fail its own
** condition on the retry: write.c asks for
** ReturnValuesOnConditionCheckFailure=ALL_OLD, and when such a retry finds
** exactly the item it wrote, the write is reported done.
*/
#include <curl/curl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddb_client_int.h"
#include "http_int.h"

/* The largest response body read unless the call says less (call_info's
** max_body: a Query or Scan page, GetItem, BatchGetItem set their own,
** with their reasons: read.c, get.c).  The answers parsed into a cJSON
** tree (writes, DescribeTable) are one item, or a few hundred, at most. */
#define RESPONSE_MAX (64u * 1024 * 1024)

/* ------------------------------------------------------------------------
** Reading an answer
*/

/* Where curl's write callback puts a body. */
typedef struct body_sink {
  ddb_buf *b;
  CURL *h;
  ddb_client *c;  /* whose cancel hook a wait for big_body polls */
  int *cancelled; /* set when that hook said stop (xfer_state's) */
  int sized;      /* its Content-Length was looked at */
  int known;      /* it has one */
  int big;        /* it holds big_body */
} body_sink;

/* ------------------------------------------------------------------------
** Bodies of unknown length
**
** A body with a Content-Length past its bound is refused by curl before
** it is read (CURLOPT_MAXFILESIZE_LARGE), and one within it gets its room
** at once.  A body without one (chunked) shows its size only as it
** arrives: each segment of a parallel Scan would hold up to its bound (32
** MB of a page's text) before finding it too long, 4 segments 128 MB of a
** hostile server's garbage.  So a body of unknown length grows past
** BODY_SOLO_MAX only while it holds big_body, which one body of the
** process holds at a time; the others wait for it (polling their cancel
** hooks) before they grow, and it is released when its transfer ends.
** DynamoDB sends a Content-Length, and its pages are a few MB of text at
** most: only a server that chunks a large answer waits.  A child of fork()
** finds big_body free (the thread that held it is not in the child).
*/
#define BODY_SOLO_MAX ((size_t)2 << 20)
static int big_body; /* 1: held (atomic) */

/* live.c's ops for big_body: nothing to lock (it is one atomic word). */
static void big_body_nop(void *obj) {
  (void)obj;
}

/* After fork(), in the child: big_body is free. */
static void big_body_child(void *obj) {
  (void)obj;
  __atomic_store_n(&big_body, 0, __ATOMIC_RELAXED);
}

static const ddb_live_ops big_body_live_ops = {DDB_LIVE_HTTP, big_body_nop,
                                               big_body_nop, big_body_child};
static ddb_live big_body_live;
static pthread_once_t big_body_once = PTHREAD_ONCE_INIT;

/* Register big_body's fork handler with live.c (once). */
static void big_body_init(void) {
  ddb_live_add(&big_body_live, &big_body_live_ops, NULL);
}

/* Take big_body for k, waiting while another body holds it.  Returns 0,
** or -1 when k's cancel hook said stop (*k->cancelled then set). */
static int big_body_take(body_sink *k) {
  struct timespec ts = {0, 10 * 1000000L};
  pthread_once(&big_body_once, big_body_init);
  for(;;) {
    int free_ = 0;
    if(__atomic_compare_exchange_n(&big_body, &free_, 1, 0, __ATOMIC_ACQUIRE,
                                   __ATOMIC_RELAXED)) {
      k->big = 1;
      return 0;
    }
    if(ddb_cancelled(k->c)) {
      *k->cancelled = 1;
      return -1;
    }
    nanosleep(&ts, NULL);
  }
}

/* k's transfer ended: release big_body if it held it. */
static void big_body_release(body_sink *k) {
  if(k->big) {
    __atomic_store_n(&big_body, 0, __ATOMIC_RELEASE);
    k->big = 0;
  }
}

/* curl write callback: append to the ddb_buf of the body_sink ud; past its
** cap, stop (curl then fails with CURLE_WRITE_ERROR).  The first time, room
** for the whole body is taken at once from its Content-Length: no chain of
** doubling reallocs (copies, and pages touched twice) for a 1 MB page.  A
** body without one grows past BODY_SOLO_MAX only holding big_body. */
static size_t on_body(char *p, size_t size, size_t n, void *ud) {
  body_sink *k = ud;
  if(!k->sized) {
    curl_off_t cl = -1;
    k->sized = 1;
    ddb_curl_recv_block(p); /* DynamoDB's answer: no secret (curl_mem.c) */
    if(curl_easy_getinfo(k->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) ==
           CURLE_OK &&
       cl >= 0) {
      k->known = 1;
      if((size_t)cl > k->b->len && (size_t)cl <= k->b->max)
        ddb_buf_reserve(k->b, (size_t)cl - k->b->len);
    }
  }
  if(!k->known && !k->big && k->b->len + size * n > BODY_SOLO_MAX &&
     k->b->len + size * n <= k->b->max && big_body_take(k))
    return 0;
  if(ddb_buf_add(k->b, p, size * n))
    return 0;
  return size * n;
}

/* Is the curl failure cc worth another attempt (the network, not us)? */
static int curl_retryable(CURLcode cc) {
  switch(cc) {
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_CONNECT:
  case CURLE_OPERATION_TIMEDOUT:
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_GOT_NOTHING:
  case CURLE_PARTIAL_FILE:
  case CURLE_SSL_CONNECT_ERROR:
  case CURLE_WEIRD_SERVER_REPLY:
  case CURLE_HTTP2:
  case CURLE_HTTP2_STREAM:
  case CURLE_BAD_CONTENT_ENCODING: return 1;
  default: return 0;
  }
}

/* The most of a server's error message quoted in ours.  DynamoDB's
** messages are a sentence, a ValidationException quoting a bit of an
** expression at most; a longer one is cut here, with "...", so that no
** server can fill the terminal (one sent 100 KB). */
#define SERVER_TEXT_MAX 300

/* Fill err from a DynamoDB error response body (err must not be NULL).
** The server's text (its type, its message, a cancelled transaction's
** reason codes) enters the client here: it is cut to SERVER_TEXT_MAX
** bytes and, as every message, made safe for a terminal by
** ddb_error_set() (escape sequences, CR, bytes that are no UTF-8). */
static void service_error(const ddb_buf *body, int status, ddb_error *err) {
  cJSON *j = body->len ? cJSON_ParseWithLength(body->p, body->len) : NULL;
  const char *type = NULL, *msg = NULL, *hash;
  size_t nmsg = 0, cut = 0;
  if(j) {
    type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "__type"));
    msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "message"));
    if(!msg)
      msg =
          cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "Message"));
  }
  if(type && (hash = strrchr(type, '#')) != NULL)
    type = hash + 1;
  if(!msg)
    msg = type ? "(no message)" : "unexpected answer";
  nmsg = strlen(msg);
  cut = ddb_text_cut(msg, nmsg, SERVER_TEXT_MAX);
  if(type)
    ddb_error_set(err, DDB_ERR_SERVICE, "%.90s: %.*s%s", type, (int)cut, msg,
                  cut < nmsg ? "..." : "");
  else
    ddb_error_set(err, DDB_ERR_SERVICE, "HTTP %d: %.*s%s", status, (int)cut,
                  msg, cut < nmsg ? "..." : "");
  /* a cancelled transaction says which item failed, and why */
  if(j) {
    const cJSON *reasons =
        cJSON_GetObjectItemCaseSensitive(j, "CancellationReasons");
    const cJSON *r;
    int i = 0;
    ddb_buf b;
    ddb_buf_init(&b, sizeof(err->message));
    cJSON_ArrayForEach(r, reasons) {
      const char *code =
          cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "Code"));
      i++;
      if(code && strcmp(code, "None") != 0)
        ddb_buf_addf(&b, "%sitem %d: %.60s", b.len ? "; " : "", i, code);
    }
    if(b.len && !b.failed)
      ddb_error_set(err, DDB_ERR_SERVICE, "%.90s: %s",
                    type ? type : "TransactionCanceledException", b.p);
    ddb_buf_free(&b);
  }
  /* the type, as compared and shown: safe text too */
  ddb_text_safe(err->type, sizeof(err->type), type ? type : "",
                type ? ddb_text_cut(type, strlen(type), 90) : 0);
  err->http_status = status;
  cJSON_Delete(j);
}

/* Fill err from the error body body[0..len) of an HTTP status answer. */
void ddb_error_from_response(const char *body, size_t len, int status,
                             ddb_error *err) {
  ddb_buf b;
  memset(&b, 0, sizeof(b));
  b.p = (char *)body;
  b.len = len;
  service_error(&b, status, err);
}

/* Append printf-style text to err's message, as far as it fits. */
static void error_append(ddb_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void error_append(ddb_error *err, const char *fmt, ...) {
  size_t n = strlen(err->message);
  char raw[DDB_ERROR_MAX];
  va_list ap;
  if(n + 1 >= sizeof(err->message))
    return;
  va_start(ap, fmt);
  vsnprintf(raw, sizeof(raw), fmt, ap);
  va_end(ap);
  /* curl's details may quote what the server sent */
  ddb_text_safe(err->message + n, sizeof(err->message) - n, raw, strlen(raw));
}

/* Does the x-amz-crc32 header of the last response on h (if any) match
** body?  Returns 1 when it matches or is absent, 0 when not; *want and
** *got hold the two values when it is there. */
static int crc_ok(CURL *h, const ddb_buf *body, unsigned long *want,
                  unsigned long *got) {
  struct curl_header *hh = NULL;
  char *end;
  if(curl_easy_header(h, "x-amz-crc32", 0, CURLH_HEADER, -1, &hh) !=
         CURLHE_OK ||
     !hh || !hh->value)
    return 1;
  *got = ddb_crc32(0, body->p, body->len);
  if(hh->value[0] < '0' || hh->value[0] > '9')
    return 0;
  *want = strtoul(hh->value, &end, 10);
  while(*end == ' ' || *end == '\t')
    end++;
  return *end == 0 && *want == *got;
}

/* curl's pre-request callback (CURLOPT_PREREQFUNCTION), called each time
** a request is about to go out on a connection, so *(int *)ud counts the
** requests curl sent for one perform.  More than one is curl resending on
** its own: on a kept-alive connection that dies before any answer, curl
** sends the request again on a fresh connection.  That resend is a retry
** too (counted, and the request may have been executed twice).  A pooled
** connection that curl finds dead before sending is replaced without a
** second call.  (libcurl says so only in its verbose text otherwise,
** "Connection died, retrying a fresh connect", which would need verbose
** mode and a text match on every request.) */
static int on_prereq(void *ud, char *primary_ip, char *local_ip,
                     int primary_port, int local_port) {
  (void)primary_ip;
  (void)local_ip;
  (void)primary_port;
  (void)local_port;
  (*(int *)ud)++;
  return CURL_PREREQFUNC_OK;
}

/* Did a conditional PutItem, retried after an attempt whose answer was
** lost, fail its condition only because that attempt wrote the item?
** True when the request's Item equals the Item DynamoDB returned with the
** failure (ReturnValuesOnConditionCheckFailure=ALL_OLD). */
static int put_already_done(const char *body, size_t body_len,
                            const ddb_buf *resp) {
  cJSON *req = cJSON_ParseWithLength(body, body_len);
  cJSON *ans = resp->len ? cJSON_ParseWithLength(resp->p, resp->len) : NULL;
  const cJSON *ri = cJSON_GetObjectItemCaseSensitive(req, "Item");
  const cJSON *ai = cJSON_GetObjectItemCaseSensitive(ans, "Item");
  ddb_item *a = NULL, *b = NULL;
  int same = 0;
  if(ri && ai && ddb_item_decode(ri, &a, NULL) == DDB_OK &&
     ddb_item_decode(ai, &b, NULL) == DDB_OK)
    same = ddb_av_equal(&a->root, &b->root);
  ddb_item_unref(a);
  ddb_item_unref(b);
  cJSON_Delete(req);
  cJSON_Delete(ans);
  return same;
}

/* What curl's transfer callback polls: the cancel hook, and how much of
** the request went out. */
typedef struct xfer_state {
  ddb_client *c;
  double next_ms;  /* no poll of the hook before this (the attempt began
                      with one: DDB_CANCEL_POLL_MS after it) */
  curl_off_t sent; /* request body bytes sent so far */
  int cancelled;
} xfer_state;

/* curl's transfer callback: stop the transfer (non-zero) when the cancel
** hook says so, polled at most every DDB_CANCEL_POLL_MS.  curl calls it
** often while bytes move and about once a second while it waits. */
static int on_xfer(void *ud, curl_off_t dltotal, curl_off_t dlnow,
                   curl_off_t ultotal, curl_off_t ulnow) {
  xfer_state *x = ud;
  double t;
  (void)dltotal;
  (void)dlnow;
  (void)ultotal;
  if(ulnow > x->sent)
    x->sent = ulnow;
  t = ddb_now_ms();
  if(t < x->next_ms)
    return 0;
  x->next_ms = t + DDB_CANCEL_POLL_MS;
  if(ddb_cancelled(x->c)) {
    x->cancelled = 1;
    return 1;
  }
  return 0;
}

/* A timeout of s seconds as curl's milliseconds: at least 1 (curl reads
** 0 as no timeout at all) and at most a day's worth. */
static long ms_option(double s) {
  double ms = s * 1000;
  if(!(ms >= 1))
    return 1;
  return ms > 86400e3 ? 86400000L : (long)ms;
}

/* ------------------------------------------------------------------------
** One request with retries
*/

/* One request and the state of its attempts.  The request (c, h, ci, url,
** body) is the same for every attempt; g, resp, status, throttled and
** resent describe the current one; ambiguous and expired carry over. */
typedef struct attempt {
  ddb_client *c;
  CURL *h; /* from c's pool, for every attempt */
  call_info *ci;
  const char *url;
  const char *body;
  size_t body_len;
  ddb_signer *g;     /* the credentials this attempt is signed with */
  ddb_buf resp;      /* the answer's body */
  int status;        /* its HTTP status; 0 if none */
  int throttled;     /* DynamoDB said slow down */
  int sent_now;      /* requests curl sent for this attempt (on_prereq) */
  int resent;        /* times curl sent it again by itself */
  int ambiguous;     /* some attempt may have been executed */
  int expired;       /* the token expired (once: then refreshed) */
  int skewed;        /* refused for our clock (once: signed again with the
                        server's time) */
  int64_t skew_used; /* c->clock_skew when this attempt was signed */
  char thr[160];     /* the last throttling answer (the log's text) */
  cJSON *out;        /* on success without ci->take: the parsed answer */
  ddb_error *e;      /* the failure of the last attempt */
} attempt;

/* The verdict on one attempt. */
typedef enum { ATTEMPT_DONE, ATTEMPT_FAIL, ATTEMPT_RETRY } attempt_verdict;

/* Set h's options for one attempt of a with the header list hdrs, the
** transfer state xs, the sink and errbuf.  The options that are the same
** for every request of the client to a->url are set once per handle (a
** pooled handle is its client's, and keeps them): CURLOPT_PRIVATE holds
** the URL they were set for (the client's, for its life). */
static void attempt_setopt(attempt *a, struct curl_slist *hdrs, xfer_state *xs,
                           body_sink *sink, char *errbuf) {
  CURL *h = a->h;
  ddb_client *c = a->c;
  char *set_for = NULL;
  if(curl_easy_getinfo(h, CURLINFO_PRIVATE, &set_for) != CURLE_OK ||
     set_for != a->url) {
    curl_easy_setopt(h, CURLOPT_URL, a->url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms_option(c->timeout));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                     ms_option(c->connect_timeout));
    /* the cancel hook, polled while the request is on the wire */
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_xfer);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    /* identity: x-amz-crc32 covers the bytes as sent */
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, NULL);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    if(c->s.ca_bundle)
      curl_easy_setopt(h, CURLOPT_CAINFO, c->s.ca_bundle);
    curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, on_prereq);
    curl_easy_setopt(h, CURLOPT_PRIVATE, (char *)a->url);
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, a->body);
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)a->body_len);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, sink);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, xs);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, ddb_cancel_hooked(c) ? 0L : 1L);
  curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)a->resp.max);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_PREREQDATA, &a->sent_now);
}

/* The verdict on a 200 answer in a->resp: taken by ci->take, or parsed
** into a->out.  A body that does not parse, or is not UTF-8, was cut
** short or damaged: it is retried. */
static attempt_verdict attempt_take(attempt *a) {
  ddb_buf *resp = &a->resp;
  call_info *ci = a->ci;
  if(ci->take) {
    int malformed = 0;
    if(ci->take(ci, resp->p ? resp->p : "", resp->len, &malformed, a->e) ==
       DDB_OK)
      return ATTEMPT_DONE;
    if(!malformed)
      return ATTEMPT_FAIL;
  } else if(ddb_utf8_valid(resp->p, resp->len)) { /* JSON is UTF-8 */
    a->out = cJSON_ParseWithLength(resp->p ? resp->p : "", resp->len);
    if(cJSON_IsObject(a->out))
      return ATTEMPT_DONE;
    cJSON_Delete(a->out);
    a->out = NULL;
  }
  ddb_error_set(a->e, DDB_ERR_PARSE, "malformed response to %s (%zu bytes)",
                ci->operation, resp->len);
  a->ambiguous = 1;
  return ATTEMPT_RETRY;
}

/* ------------------------------------------------------------------------
** A clock out of step
**
** SigV4 signs the time of the request (X-Amz-Date), and DynamoDB refuses
** one more than 15 minutes from its own clock: a machine whose clock is
** off can make no call at all.  As the AWS SDKs do (botocore, the Java and
** JavaScript SDKs: "clock skew correction"), a refusal for the time
** (RequestTimeTooSkewed; InvalidSignatureException "Signature expired" or
** "Signature not yet current") tells the server's time: the answer's Date
** header, or else the time DynamoDB's message quotes ("... (20260102T030405Z
** - 15 min.)").  The difference is kept in the client (c->clock_skew,
** added to the clock by every later signature: signer.c) and the request
** is signed again and sent once more at once.  A refusal whose time
** cannot be read, or that tells no other time than the one already used,
** fails as it is.
*/

/* The server's time (Unix seconds) as a refusal for the clock tells it,
** or -1: from the Date header of the answer on h, else from the last
** "(YYYYMMDDTHHMMSSZ" in message. */
static int64_t server_time(CURL *h, const char *message) {
  struct curl_header *hh = NULL;
  const char *p, *q = NULL;
  struct tm tm;
  if(curl_easy_header(h, "Date", 0, CURLH_HEADER, -1, &hh) == CURLHE_OK &&
     hh && hh->value) {
    time_t t = curl_getdate(hh->value, NULL);
    if(t > 0)
      return (int64_t)t;
  }
  for(p = message; (p = strchr(p, '(')) != NULL; p++)
    q = p + 1;
  memset(&tm, 0, sizeof(tm));
  if(!q || !strptime(q, "%Y%m%dT%H%M%SZ", &tm))
    return -1;
  return (int64_t)timegm(&tm);
}

/* Is the refusal e one for the time of the request? */
static int is_clock_refusal(const ddb_error *e) {
  return strcmp(e->type, "RequestTimeTooSkewed") == 0 ||
         (strcmp(e->type, "InvalidSignatureException") == 0 &&
          (strstr(e->message, "Signature expired") ||
           strstr(e->message, "Signature not yet current")));
}

/* A refusal for our clock: learn the server's time into c->clock_skew.
** Returns 1 when the request should be signed again (the skew changed),
** 0 when not. */
static int learn_skew(attempt *a) {
  int64_t server = server_time(a->h, a->e->message);
  int64_t skew;
  if(server <= 0)
    return 0;
  skew = server - (int64_t)time(NULL);
  if(skew == a->skew_used)
    return 0; /* signed with that time already: refused for another reason */
  __atomic_store_n(&a->c->clock_skew, skew, __ATOMIC_RELAXED);
  return 1;
}

/* The verdict on an error answer (status code) in a->resp. */
static attempt_verdict attempt_refused(attempt *a, long code) {
  ddb_error *e = a->e;
  service_error(&a->resp, a->status, e);
  a->throttled = ddb_throttle_is(e->type) || code == 429;
  if(a->throttled) {
    /* its reasons: in the message, the log, and the hot keys' tally */
    ddb_throttle t;
    ddb_throttle_read(a->resp.p, a->resp.len, &t);
    ddb_throttle_explain(&t, e);
    ddb_throttle_summary(&t, e->type[0] ? e->type : "HTTP 429", a->thr,
                         sizeof(a->thr));
    ddb_throttle_key_range(&t, ddb_tally_current());
    return ATTEMPT_RETRY;
  }
  if(!a->skewed && is_clock_refusal(e) && learn_skew(a)) {
    a->skewed = 1;
    return ATTEMPT_RETRY;
  }
  if(code >= 500) {
    a->ambiguous = 1;
    return ATTEMPT_RETRY;
  }
  if(ddb_throttle_transient(e->type))
    return ATTEMPT_RETRY;
  if(strcmp(e->type, "ExpiredTokenException") == 0 &&
     a->c->s.src.kind != DDB_CRED_STATIC && !a->expired) {
    a->expired = 1;
    return ATTEMPT_RETRY;
  }
  if(a->ambiguous && strcmp(e->type, "ConditionalCheckFailedException") == 0 &&
     strcmp(a->ci->operation, "PutItem") == 0 &&
     put_already_done(a->body, a->body_len, &a->resp)) {
    a->out = cJSON_CreateObject();
    return a->out ? ATTEMPT_DONE : ATTEMPT_FAIL;
  }
  return ATTEMPT_FAIL;
}

/* Send the request of a with the signed headers hdrs (the Authorization
** line wiped here): curl's options set for it (attempt_setopt), the error
** buffer's cleared after.  Returns curl's
** code; a->resent (and a->ambiguous) say whether curl sent it again by
** itself. */
static CURLcode attempt_send(attempt *a, ddb_sign_hdrs *hdrs, xfer_state *xs,
                             body_sink *sink, char *errbuf) {
  CURLcode cc;
  ddb_buf_reset(&a->resp);
  attempt_setopt(a, hdrs->node, xs, sink, errbuf);
  cc = curl_easy_perform(a->h);
  ddb_curl_recv_done();
  big_body_release(sink);
  /* libcurl may write an error when it closes the handle's connection
  ** later; the other options into this stack (the headers, the data of
  ** the callbacks) are read by a transfer only, and set again first */
  curl_easy_setopt(a->h, CURLOPT_ERRORBUFFER, NULL);
  ddb_sign_hdrs_wipe(hdrs);
  a->resent = a->sent_now > 1 ? a->sent_now - 1 : 0;
  if(a->resent)
    a->ambiguous = 1;
  return cc;
}

/* The verdict on an attempt of a that curl did not complete (cc is not
** CURLE_OK), a->e set: stopped by the cancel hook (xs), an answer larger
** than any correct one (not retried: a->ci->too_large), or a network
** error with curl's details in errbuf (retried when curl_retryable). */
static attempt_verdict attempt_broken(attempt *a, CURLcode cc,
                                      const xfer_state *xs,
                                      const char *errbuf) {
  ddb_buf *resp = &a->resp;
  ddb_error *e = a->e;
  const char *op = a->ci->operation;
  if((cc == CURLE_ABORTED_BY_CALLBACK || cc == CURLE_WRITE_ERROR) &&
     xs->cancelled) {
    /* stopped by the hook: once any of the body went out, DynamoDB may
    ** have it all (and execute it) */
    ddb_cancel_error(e, op);
    if(xs->sent > 0)
      a->ambiguous = 1;
    return ATTEMPT_FAIL;
  }
  if(cc == CURLE_FILESIZE_EXCEEDED ||
     (cc == CURLE_WRITE_ERROR && resp->failed)) {
    /* more than any correct answer to op can be: not retried */
    ddb_error_set(e, DDB_ERR_PARSE,
                  "the response to %s is larger than %zu bytes (%zu MB), "
                  "more than DynamoDB sends",
                  op, resp->max, resp->max >> 20);
    a->ci->too_large = 1;
    return ATTEMPT_FAIL;
  }
  ddb_error_set(e, DDB_ERR_NETWORK, "%s to %s failed: %s", op,
                a->c->s.endpoint, curl_easy_strerror(cc));
  /* curl's details, e.g. "Recv failure: Connection reset by peer" */
  if(errbuf[0] && cc != CURLE_COULDNT_CONNECT &&
     strcmp(errbuf, curl_easy_strerror(cc)) != 0)
    error_append(e, " (%.200s)", errbuf);
  if(cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE)
    error_append(e, " (to trust another CA, set ca_bundle= or "
                    "AWS_CA_BUNDLE)");
  a->ambiguous |= cc != CURLE_COULDNT_CONNECT &&
                  cc != CURLE_COULDNT_RESOLVE_HOST &&
                  cc != CURLE_SSL_CONNECT_ERROR;
  return curl_retryable(cc) ? ATTEMPT_RETRY : ATTEMPT_FAIL;
}

/* Send one attempt of a, signed with a->g; fill a->resp, a->status,
** a->out (on success) and a->e (on failure), and the flags of a that
** describe a failure (throttled, ambiguous, expired, resent): signed,
** sent, then judged (broken on the way, damaged, taken, or refused). */
static attempt_verdict attempt_once(attempt *a) {
  ddb_sign_hdrs hdrs;
  char errbuf[CURL_ERROR_SIZE];
  CURLcode cc;
  long code = 0;
  unsigned long want = 0, got = 0;
  ddb_error *e = a->e;
  const char *op = a->ci->operation;
  xfer_state xs = {.c = a->c, .next_ms = ddb_now_ms() + DDB_CANCEL_POLL_MS};
  body_sink sink = {
      .b = &a->resp, .h = a->h, .c = a->c, .cancelled = &xs.cancelled};

  a->status = 0;
  a->throttled = 0;
  a->resent = 0;
  a->sent_now = 0;
  errbuf[0] = 0;
  a->skew_used = __atomic_load_n(&a->c->clock_skew, __ATOMIC_RELAXED);
  if(ddb_sign_request(a->c, a->g, op, a->ci->streams, a->body, a->body_len,
                      &hdrs, e))
    return ATTEMPT_FAIL;
  cc = attempt_send(a, &hdrs, &xs, &sink, errbuf);
  if(cc != CURLE_OK)
    return attempt_broken(a, cc, &xs, errbuf);
  curl_easy_getinfo(a->h, CURLINFO_RESPONSE_CODE, &code);
  a->status = (int)code;
  if(!crc_ok(a->h, &a->resp, &want, &got)) {
    /* damaged on the way: the answer is lost, the request may be done */
    ddb_error_set(e, DDB_ERR_NETWORK,
                  "the response to %s failed its x-amz-crc32 check "
                  "(header %lu, body %lu)",
                  op, want, got);
    e->http_status = a->status;
    a->ambiguous = 1;
    return ATTEMPT_RETRY;
  }
  if(code == 200)
    return attempt_take(a);
  return attempt_refused(a, code);
}

/* Is operation a write (for "the write may have been applied")? */
static int is_write(const char *operation) {
  return strstr(operation, "Write") || strcmp(operation, "PutItem") == 0 ||
         strcmp(operation, "UpdateItem") == 0 ||
         strcmp(operation, "DeleteItem") == 0;
}

/* Record a finished call of a in the request log and the counters: sent
** requests (retries included) over ms milliseconds, ending in result. */
static void attempt_record(const attempt *a, ddb_result result, int sent,
                           int throttles, double ms) {
  const call_info *ci = a->ci;
  double consumed = ci->take ? (result == DDB_OK ? ci->consumed : 0)
                    : a->out ? ddb_answer_consumed(a->out)
                             : 0;
  ddb_log_entry le;
  memset(&le, 0, sizeof(le));
  ddb_copy_str(le.operation, sizeof(le.operation), ci->operation);
  ddb_copy_str(le.table, sizeof(le.table), ci->table);
  ddb_copy_str(le.index, sizeof(le.index), ci->index);
  le.continuation = ci->continuation;
  le.items = -1;
  le.retries = sent > 0 ? sent - 1 : 0;
  le.http_status = a->status;
  le.ms = ms;
  ddb_copy_str(le.throttle, sizeof(le.throttle), a->thr);
  if(ci->take && result == DDB_OK) {
    le.items = (int)ci->items;
  } else if(a->out) {
    cJSON *cnt = cJSON_GetObjectItemCaseSensitive(a->out, "Count");
    cJSON *item = cJSON_GetObjectItemCaseSensitive(a->out, "Item");
    if(cJSON_IsNumber(cnt))
      le.items = cnt->valueint;
    else if(strcmp(ci->operation, "GetItem") == 0)
      le.items = item ? 1 : 0;
  }
  if(is_write(ci->operation))
    le.wcu = consumed;
  else
    le.rcu = consumed;
  le.stmt =
      a->c->meter ? __atomic_load_n(&a->c->meter->stmt, __ATOMIC_RELAXED) : 0;
  ddb_log_add(&le);
  if(sent)
    ddb_stats_add(ci->operation, sent, throttles, consumed);
  ddb_meter_charge(a->c, &le, ci->scanned, sent, throttles);
}

/* A table DynamoDB says is not there: err's message names the table, the
** endpoint and the region asked, then what DynamoDB said. */
static void not_found_error(const ddb_client *c, const char *table,
                            ddb_error *err) {
  char said[sizeof(err->message)];
  memcpy(said, err->message, sizeof(said));
  snprintf(err->message, sizeof(err->message),
           "table '%.100s' not found at %.100s in region %.30s (%.150s%s)",
           table, c->s.endpoint, c->s.region, said,
           ddb_arn_is(table) ? "; a server may take no ARN in this call, "
                               "as DynamoDB Local's TransactWriteItems"
                             : "");
}

/* One attempt of a's call with what surrounds it: the cancel hook asked,
** the table's max_rcu/max_wcu bucket waited for (then charged what the
** answer consumed), the signer held for it.  Returns DDB_OK with *v the
** verdict, or the error that kept it from being sent (cancelled, the
** wait, the credentials) in a->e. */
static ddb_result call_attempt(attempt *a, attempt_verdict *v) {
  ddb_client *c = a->c;
  call_info *ci = a->ci;
  double reserved = 0;
  ddb_result result;
  if(ddb_cancelled(c))
    return ddb_cancel_error(a->e, ci->operation);
  /* max_rcu, max_wcu: wait for the table's bucket (a page's first attempt
  ** spends the share ddb_rate_page took) */
  if(ci->rate_share > 0) {
    reserved = ci->rate_share;
    ci->rate_share = 0;
  } else {
    result = ddb_rate_wait(c, ci, a->body, a->body_len, &reserved, a->e);
    if(result)
      return result;
  }
  result = ddb_signer_acquire(c, &a->g, a->e);
  if(result) {
    ddb_rate_charge(c, ci, reserved, 0);
    return result;
  }
  *v = attempt_once(a);
  ddb_signer_release(c, a->g);
  a->g = NULL;
  ddb_rate_charge(c, ci, reserved,
                  *v != ATTEMPT_DONE ? 0
                  : ci->take         ? ci->consumed
                  : a->out           ? ddb_answer_consumed(a->out)
                                     : 0);
  return DDB_OK;
}

/* Finish the error result of a's call in a->e: its HTTP status, the
** table named when DynamoDB says it is not there, the retries, and for a
** write whether it may have been applied. */
static void call_error(attempt *a, ddb_result result) {
  const call_info *ci = a->ci;
  int write = is_write(ci->operation);
  if(!a->e->http_status)
    a->e->http_status = a->status;
  if(ci->table && strcmp(a->e->type, "ResourceNotFoundException") == 0)
    not_found_error(a->c, ci->table, a->e);
  if(a->e->retries > 0)
    error_append(a->e, " (after %d retr%s)", a->e->retries,
                 a->e->retries == 1 ? "y" : "ies");
  a->e->maybe_applied = a->ambiguous && write;
  if(a->e->maybe_applied)
    error_append(a->e, "; the write may have been applied");
  else if(write && result == DDB_ERR_CANCELLED)
    error_append(a->e, "; the write was not applied");
}

/* See http_int.h: one call with its retries, logged and counted: the
** max_requests meter, then attempts until one is done, fails for good or
** the retries run out (new credentials or the server's time at once, else
** after a backoff), then the error finished and the call recorded. */
ddb_result ddb_http_call(ddb_client *c, call_info *ci, const char *body,
                         size_t body_len, cJSON **out, ddb_error *err) {
  attempt a;
  ddb_result result = DDB_OK;
  ddb_error local;
  double t0 = ddb_now_ms();
  int n, sent = 0, throttles = 0;

  *out = NULL;
  memset(&a, 0, sizeof(a));
  memset(&local, 0, sizeof(local));
  a.c = c;
  a.ci = ci;
  /* the endpoint as config.c parsed it */
  a.url = ci->streams ? c->s.streams_ep.url : c->s.ep.url;
  a.body = body;
  a.body_len = body_len;
  a.e = err ? err : &local;
  ddb_buf_init(&a.resp, ci->max_body ? ci->max_body : RESPONSE_MAX);

  /* max_requests: nothing is sent, and nothing logged */
  result = ddb_meter_take(c, ci->operation, a.e);
  if(result) {
    ddb_buf_free(&a.resp);
    return result;
  }
  a.h = ddb_handle_get(c);
  if(!a.h) {
    result = ddb_error_set(a.e, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }

  for(n = 0;; n++) {
    int was_expired = a.expired, was_skewed = a.skewed;
    attempt_verdict v = ATTEMPT_FAIL;
    ddb_error_clear(a.e);
    result = call_attempt(&a, &v);
    if(result)
      break;
    sent += 1 + a.resent;
    throttles += a.throttled;
    if(v == ATTEMPT_DONE)
      break;
    result = a.e->code ? a.e->code : DDB_ERR_SERVICE;
    if(v == ATTEMPT_FAIL || n >= c->max_retries)
      break;
    if(a.expired && !was_expired) {
      /* the token ran out under us: fetch new credentials, go again */
      pthread_mutex_lock(&c->cred_lock);
      c->force_refresh = 1;
      pthread_mutex_unlock(&c->cred_lock);
      continue;
    }
    if(a.skewed && !was_skewed)
      continue; /* signed again with the server's time, at once */
    result = ddb_backoff(c, ci->operation, n + 1, a.throttled, a.e);
    if(result)
      break;
  }
  a.e->retries = sent > 0 ? sent - 1 : 0;
  if(result)
    call_error(&a, result);

fail:
  if(ci->rate_share > 0) { /* a page's share not spent: given back */
    ddb_rate_charge(c, ci, ci->rate_share, 0);
    ci->rate_share = 0;
  }
  attempt_record(&a, result, sent, throttles, ddb_now_ms() - t0);
  *out = a.out;
  if(a.h)
    ddb_handle_put(c, a.h);
  ddb_buf_free(&a.resp);
  return result;
}

/* See ddb_client_int.h: a call answered as a cJSON tree. */
ddb_result ddb_call(ddb_client *c, const char *operation, const char *table,
                    const char *index, int continuation, const char *body,
                    size_t body_len, cJSON **out, ddb_error *err) {
  call_info ci;
  memset(&ci, 0, sizeof(ci));
  ci.operation = operation;
  ci.table = table;
  ci.index = index;
  ci.continuation = continuation;
  return ddb_http_call(c, &ci, body, body_len, out, err);
}
