/*
** http_int.h -- what the request files of client/ share (internal to
** client/): the client itself (client.c), its signing credentials
** (signer.c), libcurl's memory (curl_mem.c), cancelling and backoff
** (cancel.c), the request log and counters (log.c), one request with its
** retries (http.c), and the pieces of an answer that describe.c, read.c
** and get.c all take.
*/
#ifndef DDB_HTTP_INT_H
#define DDB_HTTP_INT_H

#include <curl/curl.h>
#include <cjson/cJSON.h>
#include <pthread.h>

#include "ddb_client_int.h"
#include "sigv4.h"

/* Idle curl handles kept per client (each holds a kept-alive connection). */
#define DDB_POOL_MAX 32
/* The Host header as the client keeps it signed ("Host: <host[:port]>"). */
#define DDB_HOST_HDR     "Host: "
#define DDB_HOST_HDR_LEN (sizeof(DDB_HOST_HDR) - 1)

/* One set of signing credentials, shared by the requests using it
** (signer.c). */
typedef struct ddb_signer {
  int refs;        /* under cred_lock */
  ddb_sigv4 *keys; /* the credentials and their cached signing key */
  char *token_hdr; /* "X-Amz-Security-Token: ..." or NULL */
  int64_t expires; /* Unix time; 0: never */
} ddb_signer;

struct ddb_client {
  ddb_settings s;
  char *host_hdr; /* "Host: " and s.ep.host, as signed */
  double timeout, connect_timeout;
  int max_retries;
  pthread_mutex_t lock; /* guards pool */
  CURL *pool[DDB_POOL_MAX];
  int n_pool;
  pthread_mutex_t cred_lock;    /* guards sig, next_refresh, force_refresh */
  pthread_mutex_t refresh_lock; /* one refresh at a time */
  ddb_signer *sig;
  int64_t next_refresh; /* no refresh try before this (Unix time) */
  int force_refresh;    /* DynamoDB said the token expired */
  /* the cache's scope (ddb_client_scope): the place (endpoint and region)
  ** and every principal, the current first (read atomically, pushed under
  ** cred_lock) */
  unsigned char place[DDB_SCOPE_ID_LEN];
  ddb_principal *principals;
  int64_t clock_skew;   /* seconds the server's clock is ahead of ours, as
                           a refusal for the time told it (http.c); added
                           to the clock of every signature (atomic) */
  ddb_live live;        /* on live.c's list while c lives (fork()) */
  ddb_cancel_fn cancel; /* the cancel hook, or NULL (set before use) */
  void *cancel_ud;
  ddb_meter *meter;       /* charged with every request, or NULL (set
                             before use: ddb_client_set_meter) */
  long long max_requests; /* ddb_config's limits (0: none) */
  double max_rcu, max_wcu;
};

/* client.c: a curl handle from c's pool (with its kept-alive connection),
** or a new one; NULL on out of memory.  ddb_handle_put gives it back (or
** cleans it up when the pool is full). */
CURL *ddb_handle_get(ddb_client *c);
void ddb_handle_put(ddb_client *c, CURL *h);

/* signer.c: a new signer (one reference) for the given credentials, or
** NULL on out of memory; ddb_signer_free frees one (secrets wiped; NULL is
** fine). */
ddb_signer *ddb_signer_new(const char *ak, const char *sk, const char *token,
                           int64_t expires);
void ddb_signer_free(ddb_signer *g);
/* Take a reference to c's current signing credentials, refreshing them
** first when they are about to expire.  Returns DDB_OK with *out set, or
** the refresh's error when the old credentials cannot be used any more.
** ddb_signer_release drops the reference (NULL is fine). */
ddb_result ddb_signer_acquire(ddb_client *c, ddb_signer **out, ddb_error *err);
void ddb_signer_release(ddb_client *c, ddb_signer *g);
/* Make the principal of credentials (ak, sk, token) c's current one,
** unless it already is (the caller holds cred_lock, or c is not shared
** yet).  Returns 0, or -1 on out of memory (the current one stays). */
int ddb_principal_push(ddb_client *c, const char *ak, const char *sk,
                       const char *token);
/* curl_mem.c: curl_global_init (once per process: called before every first curl
** handle, a client's or a credential fetch's) with allocators that wipe
** every block libcurl frees but the receive buffer of a DynamoDB answer:
** its copies of the request headers hold the session token (curl_mem.c).
** ddb_curl_recv_block: the write callback of a DynamoDB request names its
** receive buffer (p: an address of the answer it was handed), which is
** then freed without the wipe; ddb_curl_recv_done, after
** curl_easy_perform, forgets it. */
void ddb_curl_global_init(void);
void ddb_curl_recv_block(const void *p);
void ddb_curl_recv_done(void);
/* The signed headers of one attempt, for CURLOPT_HTTPHEADER: list nodes
** over lines of their own (and of the client and the signer), so that
** nothing is allocated; the caller's (on its stack), valid while the
** client and the signer are.  ddb_sign_hdrs_wipe wipes the Authorization
** line when the transfer is over. */
typedef struct ddb_sign_hdrs {
  struct curl_slist node[6];          /* node[0] heads the list */
  char target[128];                   /* "X-Amz-Target: ..." */
  char date[32];                      /* "X-Amz-Date: YYYYMMDDTHHMMSSZ" */
  char auth[16 + DDB_SIGV4_AUTH_MAX]; /* "Authorization: ..." */
  char host[DDB_HOST_HDR_LEN + 512];  /* "Host: ..." of a Streams call */
} ddb_sign_hdrs;
/* The headers of one request of operation with body, signed with g at
** the clock of now plus c->clock_skew (a retry is signed again), into h
** (h->node the list); streams: DynamoDB Streams' operation, at its
** endpoint.  Returns DDB_OK, or an error. */
ddb_result ddb_sign_request(const ddb_client *c, const ddb_signer *g,
                            const char *operation, int streams,
                            const char *body, size_t body_len,
                            ddb_sign_hdrs *h, ddb_error *err);
void ddb_sign_hdrs_wipe(ddb_sign_hdrs *h);

/* cancel.c: milliseconds on the monotonic clock; is any cancel hook (the
** calling thread's or c's) set; fill err for operation stopped by the
** hook (returns DDB_ERR_CANCELLED). */
double ddb_now_ms(void);
int ddb_cancel_hooked(const ddb_client *c);
ddb_result ddb_cancel_error(ddb_error *err, const char *operation);

/* log.c: append e to the request log (its seq is set there); count one
** call of operation: attempts requests (attempts-1 retries), throttles
** throttling answers, consumed capacity units; count a wait for a rate
** limit that starts, and the ms milliseconds of one that ended. */
void ddb_log_add(const ddb_log_entry *e);
void ddb_stats_add(const char *operation, int attempts, int throttles,
                   double consumed);
void ddb_stats_wait_begin(void);
void ddb_stats_wait_end(double ms);

/* meter.c: charge a finished call to the calling thread's tally (if one
** is begun) and to c's meter (if set): e as logged (its operation, items,
** rcu, wcu), scanned items (-1: as many as e->items), sent requests of
** which throttles throttled. */
void ddb_meter_charge(ddb_client *c, const ddb_log_entry *e, long long scanned,
                      int sent, int throttles);
/* meter.c: count one more request against c's max_requests: DDB_OK, or
** DDB_ERR_LIMIT (err set, nothing counted) when the meter is there
** already. */
ddb_result ddb_meter_take(ddb_client *c, const char *operation,
                          ddb_error *err);

/* throttle.c: DynamoDB's throttling answers and their reasons (up to
** DDB_THROTTLE_REASONS of an answer's ThrottlingReasons: the reason, and
** the table and index of its resource ARN, "" when none). */
#define DDB_THROTTLE_REASONS 4
typedef struct ddb_throttle_reason {
  char reason[64], table[256], index[256];
} ddb_throttle_reason;
typedef struct ddb_throttle {
  int n;
  ddb_throttle_reason r[DDB_THROTTLE_REASONS];
} ddb_throttle;
/* Is type a throttling error (botocore's list)?  Is it another error
** botocore retries for DynamoDB (the short backoff)? */
int ddb_throttle_is(const char *type);
int ddb_throttle_transient(const char *type);
/* Read the reasons of the error answer body[0..len) into *t (none: n 0;
** throttlingReasons or ThrottlingReasons). */
void ddb_throttle_read(const char *body, size_t len, ddb_throttle *t);
/* Rewrite e's message to name t's reasons, tables and indexes (nothing
** when t has none). */
void ddb_throttle_explain(const ddb_throttle *t, ddb_error *e);
/* The request log's text of t into out[0..cap): "Reason table[/index]"
** joined by "; ", or type when t has no reasons. */
void ddb_throttle_summary(const ddb_throttle *t, const char *type, char *out,
                          size_t cap);
/* 1 when t names a hot key range (a KeyRange reason with its table);
** then counted in tl (NULL: nowhere) with the table and index named. */
int ddb_throttle_key_range(const ddb_throttle *t, ddb_tally *tl);
/* meter.c: the calling thread's tally, or NULL when none is begun. */
ddb_tally *ddb_tally_current(void);

typedef struct call_info call_info;
struct ddb_read;

/* rate.c: the token buckets of max_rcu and max_wcu.  ddb_rate_wait: before
** an attempt of the call ci (its JSON body[0..len)), wait (polling the
** cancel hook) until the bucket of (c's place, table, reads or writes)
** has tokens (a write: what it may cost, ci->rate_cost), then reserve
** *reserved of them (a write's cost, a read's average answer); DDB_OK, or
** DDB_ERR_CANCELLED.  Nothing to wait for (*reserved 0) when c has no
** limit for that kind, or operation is neither a read nor a write.
** ddb_rate_page: before the Query or Scan page r (a copy the caller sends)
** of the call ci, wait in the same way until the read bucket holds the
** page's share of max_rcu, take it (ci->rate_share, which the call's
** first attempt spends instead of ddb_rate_wait's reservation) and lower
** r->limit to the items the share pays for; nothing without max_rcu.
** ddb_rate_charge: the attempt of ci's answer consumed `consumed` units:
** the bucket gets the reservation back and pays that. */
ddb_result ddb_rate_wait(ddb_client *c, call_info *ci, const char *body,
                         size_t len, double *reserved, ddb_error *err);
ddb_result ddb_rate_page(ddb_client *c, struct ddb_read *r, call_info *ci,
                         ddb_error *err);
void ddb_rate_charge(ddb_client *c, const call_info *ci, double reserved,
                     double consumed);

struct call_info {
  const char *operation;
  const char *table;
  const char *index;
  int continuation;
  /* How a 200 answer is taken.  NULL: parsed into a cJSON tree (*out of
  ** call()).  Else take() reads the body itself and returns DDB_OK, or an
  ** error with *malformed set when the body is no JSON text (cut short or
  ** damaged: retried), or not set (a well-formed answer that is wrong:
  ** not retried).  It sets items (-1: unknown) and consumed, for the log
  ** and the counters, and must keep nothing of a failed attempt. */
  ddb_result (*take)(call_info *ci, const char *body, size_t len,
                     int *malformed, ddb_error *e);
  void *ud;
  long long items;
  double consumed;
  /* The largest answer read (0: http.c's RESPONSE_MAX); a larger one
  ** fails the call, not retried, with too_large set. */
  size_t max_body;
  int too_large;
  long long scanned; /* ScannedCount, set by a take that knows it (read.c);
                        0: as many as items */
  /* max_rcu, a Query or Scan page (ddb_rate_page): the tokens taken for
  ** its first attempt (0 once spent), and its unit (1 read consistently,
  ** 0.5 eventually; 0: not a page) */
  double rate_share, rate_unit;
  double rate_cost; /* max_wcu: the most the write may cost (rate.c) */
  int streams;      /* a DynamoDB Streams call (streams.c): its endpoint
                       and X-Amz-Target */
};

/* POST body to the endpoint as ci->operation, retrying what is retryable
** (http.c).  On success *out is the parsed response (free with
** cJSON_Delete), or, with ci->take, NULL (the answer went to take). */
ddb_result ddb_http_call(ddb_client *c, call_info *ci, const char *body,
                         size_t body_len, cJSON **out, ddb_error *err);

/* The capacity units an answer says it consumed, summed over tables
** (log.c). */
double ddb_answer_consumed(const cJSON *resp);
/* The same from a tape of a ConsumedCapacity value (log.c). */
double ddb_tape_consumed(const ddb_tape *t, const char *text);
/* Append item it (a reference, taken) to page p, growing its array (*cap
** entries); returns 0, or -1 on out of memory (it is released) (read.c). */
int ddb_page_push(ddb_page *p, int *cap, ddb_item *it);

#endif
