/*
** ddb_client.h -- the DynamoDB HTTP client layer.
**
** This is the lowest layer of the project.  It knows DynamoDB's wire
** protocol (JSON 1.0 over HTTPS, SigV4 signed in sigv4.c), the AWS way of
** finding a region, an endpoint and credentials, and DynamoDB's data model
** (AttributeValues).  It knows nothing of SQLite and nothing of caching:
** cache/ calls it, ext/ calls cache/; nothing here calls upwards.
**
** Data model.  Items, AttributeValues, numbers and their JSON forms, and
** DynamoDB's limits, are in ddb_item.h, which this header includes.
**
** Errors.  Every call that can fail returns a ddb_result and fills a
** caller-supplied ddb_error with a one-line message naming what was wrong;
** for DynamoDB's own errors it also carries the error type (e.g.
** "ResourceNotFoundException") and the HTTP status.
**
** Threads.  A ddb_client may be used by several threads at once: it keeps a
** small pool of curl handles (each with its own kept-alive connection) and
** hands one to each call.  The request log is process-wide and locked.
*/
#ifndef DDB_CLIENT_H
#define DDB_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
** Results and errors
*/
typedef enum ddb_result {
  DDB_OK = 0,
  DDB_ERR_NOMEM,     /* out of memory, or a bounded buffer hit its cap */
  DDB_ERR_CONFIG,    /* bad option, no region, no credentials, ... */
  DDB_ERR_NETWORK,   /* connect/send/receive failed after all retries */
  DDB_ERR_SERVICE,   /* DynamoDB answered with an error (see type) */
  DDB_ERR_PARSE,     /* the response was not what DynamoDB sends */
  DDB_ERR_INPUT,     /* the caller's value cannot be sent (e.g. bad number) */
  DDB_ERR_CANCELLED, /* the cancel hook said stop (see ddb_client_set_cancel) */
  DDB_ERR_LIMIT      /* the statement's meter is at the client's max_requests
                        (see ddb_meter): nothing was sent */
} ddb_result;

/* The room of an error's message, its NUL included. */
#define DDB_ERROR_MAX 512

typedef struct ddb_error {
  ddb_result code;
  int http_status; /* 0 when no HTTP answer was received */
  int retries;     /* retries spent on the failing call */
  char type[96];   /* DynamoDB error type without namespace, or "" */
  char message[DDB_ERROR_MAX];
  int maybe_applied; /* a write that failed, but an attempt of it may have
                        reached DynamoDB: it may have been applied */
} ddb_error;

/* Set err (if not NULL) to code and a printf-style message; returns code. */
ddb_result ddb_error_set(ddb_error *err, ddb_result code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void ddb_error_clear(ddb_error *err);
/* A malloc'ed copy of s (free()), or NULL when s is NULL or memory ran
** out. */
char *ddb_strdup(const char *s);

/* s[0..n) as text a terminal shows as it is, into out[0..cap)
** (NUL-terminated; cut before the first character or escape that does
** not fit: 4 * n + 1 bytes always hold it all): control characters (C0,
** DEL) and bytes that are no UTF-8 as \xHH, C1 controls, line separators
** and bidi controls as \uHHHH; any other character, é or 日本, as it is.
** Returns the length written.  ddb_error_set() passes every message
** through it; ext/ every name a server told that it shows (dd_shown).
** (buf.c) */
size_t ddb_text_safe(char *out, size_t cap, const char *s, size_t n);

/* ------------------------------------------------------------------------
** Bounded growing buffer.  Every append is checked against `max`; once an
** append fails the buffer is marked failed and later appends do nothing,
** so a builder can append freely and check ddb_buf_failed() once.
*/
typedef struct ddb_buf {
  char *p; /* NUL-terminated when len > 0; free with ddb_buf_free() */
  size_t len;
  size_t cap;
  size_t max; /* hard cap on len */
  int failed;
  int borrowed; /* p is the caller's storage (ddb_buf_init_with) */
} ddb_buf;

void ddb_buf_init(ddb_buf *b, size_t max);
/* Start in the caller's storage[0..cap) (e.g. on the stack), moving to
** the heap only if it outgrows it; ddb_buf_free() is still required. */
void ddb_buf_init_with(ddb_buf *b, char *storage, size_t cap, size_t max);
void ddb_buf_free(ddb_buf *b);
void ddb_buf_reset(ddb_buf *b);
/* Append p[0..n).  Returns 0, or -1 once the buffer failed.  The common
** case (room already there) is inline: rendering JSON appends a lot. */
int ddb_buf_add_slow(ddb_buf *b, const void *p, size_t n);
static inline int ddb_buf_add(ddb_buf *b, const void *p, size_t n) {
  if(!b->failed && b->p && n < b->cap - b->len && b->len + n <= b->max) {
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
  }
  return ddb_buf_add_slow(b, p, n);
}
static inline int ddb_buf_adds(ddb_buf *b, const char *s) {
  return ddb_buf_add(b, s, strlen(s));
}
static inline int ddb_buf_addc(ddb_buf *b, char c) {
  if(!b->failed && b->p && 1 < b->cap - b->len && b->len < b->max) {
    b->p[b->len++] = c;
    b->p[b->len] = 0;
    return 0;
  }
  return ddb_buf_add_slow(b, &c, 1);
}
/* Make room for n more bytes now.  Returns 0 or -1 (buffer failed). */
int ddb_buf_reserve(ddb_buf *b, size_t n);
int ddb_buf_addf(ddb_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Append p[0..n) as one self-delimiting part: its length n (LEB128, 7
** bits a byte, low bits first, the high bit set on every byte but the
** last), then its bytes.  A sequence of parts reads back in one way
** only, whatever bytes they hold (cache keys are built of them).  Returns
** 0, or -1 once the buffer failed. */
int ddb_buf_add_part_slow(ddb_buf *b, const void *p, size_t n);
static inline int ddb_buf_add_part(ddb_buf *b, const void *p, size_t n) {
  /* the common case (a part under 128 bytes, room already there): one
  ** length byte and the bytes, inline (the cache's hit path builds keys) */
  if(n < 0x80 && !b->failed && b->p && n + 1 < b->cap - b->len &&
     b->len + n + 1 <= b->max) {
    b->p[b->len] = (char)n;
    memcpy(b->p + b->len + 1, p, n);
    b->len += n + 1;
    b->p[b->len] = 0;
    return 0;
  }
  return ddb_buf_add_part_slow(b, p, n);
}
/* Append s[0..n) as a JSON string literal, quotes included. */
int ddb_buf_json_str(ddb_buf *b, const char *s, size_t n);
/* Detach the contents: returns a malloc'ed NUL-terminated string (caller
** frees with free()) and leaves b empty, or NULL if the buffer failed. */
char *ddb_buf_take(ddb_buf *b, size_t *len);

/* Base64 (RFC 4648, with padding).  Return the output length, or
** (size_t)-1 if the input is not valid base64 or out is too small. */
size_t ddb_base64_encode(const unsigned char *in, size_t n, char *out,
                         size_t cap);
size_t ddb_base64_decode(const char *in, size_t n, unsigned char *out,
                         size_t cap);
/* Is s[0..n) the base64 of a binary value: not empty, padded (a multiple
** of 4 characters), and what ddb_base64_decode accepts?  The one home of
** that check (binary values in JSON text, api/'s values). */
int ddb_base64_ok(const char *s, size_t n);

/* SHA-256, HMAC-SHA256, CRC-32, hex, wiping: the primitives (ddb_crypto.h). */
#include "ddb_crypto.h"

/* AttributeValues, items, numbers, keys and JSON values: the data model
** (ddb_item.h). */
#include "ddb_item.h"

/* ------------------------------------------------------------------------
** Configuration: region, endpoint, credentials (see config.c for the
** resolution order, which follows the AWS SDKs).
*/
/* A cancel hook (see ddb_client_set_cancel below). */
typedef int (*ddb_cancel_fn)(void *ud);

typedef struct ddb_config {
  const char *region;   /* NULL: AWS_REGION, AWS_DEFAULT_REGION, config file */
  const char *endpoint; /* NULL: AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL,
                           the config file's services section,
                           https://dynamodb.<region>.amazonaws.com */
  const char *profile;  /* NULL: AWS_PROFILE, then "default" */
  const char *ca_bundle;  /* NULL: AWS_CA_BUNDLE, config file, system CAs */
  double timeout;         /* seconds for a whole request; 0: default (60) */
  double connect_timeout; /* seconds; 0: default (10, at most timeout) */
  int max_retries;        /* < 0: default (DDB_DEFAULT_MAX_RETRIES) */
  ddb_cancel_fn cancel;   /* NULL, or polled while ddb_client_new runs a
                             credential_process (the calling thread's own
                             hook is polled too) */
  void *cancel_ud;
  /* Limits of what the client spends (0: none).  max_requests: a call
  ** fails with DDB_ERR_LIMIT, sending nothing, once the meter it charges
  ** (ddb_client_set_meter) counts that many requests.  max_rcu, max_wcu:
  ** capacity units a second that the reads (writes) of one table at one
  ** place may consume, across every client and thread of the process:
  ** requests wait for a token bucket fed by the ConsumedCapacity each
  ** answer reports (rate.c). */
  long long max_requests;
  double max_rcu, max_wcu;
} ddb_config;

/* The options users give (SQL's CREATE VIRTUAL TABLE options and
** libdyndb's dyn_options alike) mean the same in both, and their ranges
** are checked once, here (config.c): 0 is none (no retries, not cached),
** DDB_OPT_DEFAULT asks for the default. */
#define DDB_OPT_DEFAULT         (-1)
#define DDB_DEFAULT_MAX_RETRIES 10
#define DDB_MAX_RETRIES         100
#define DDB_DEFAULT_TTL         300
#define DDB_MAX_TTL             31536000
/* max_retries v: a whole number from 0 (no retry) to DDB_MAX_RETRIES, or
** DDB_OPT_DEFAULT (DDB_DEFAULT_MAX_RETRIES).  Returns 0 with *out set, or
** -1 when v is none of these (*out untouched). */
int ddb_option_retries(double v, int *out);
/* A cache lifetime v (item_ttl, query_ttl): seconds from 0 (not cached)
** to DDB_MAX_TTL, or DDB_OPT_DEFAULT (DDB_DEFAULT_TTL).  Returns 0 with
** *out set, or -1 when v is none of these (*out untouched). */
int ddb_option_ttl(double v, double *out);

typedef struct ddb_client ddb_client;

/* Resolve cfg and create a client.  On success *out owns the client (free
** with ddb_client_free).  On error *out is NULL and err says why. */
ddb_result ddb_client_new(const ddb_config *cfg, ddb_client **out,
                          ddb_error *err);
void ddb_client_free(ddb_client *c);
/* Cancelling.  A cancel hook returns non-zero when the caller wants the
** current call stopped.  It is polled before each attempt (a hook that said
** go on is not asked again by that thread within DDB_CANCEL_POLL_MS), while a
** request waits on the network (curl's transfer callback: at least about
** once a second, at most every DDB_CANCEL_POLL_MS), and between the
** DDB_CANCEL_POLL_MS slices of a backoff sleep; a call it stops fails
** with DDB_ERR_CANCELLED, "interrupted: ...", and a write says whether it
** may have reached DynamoDB (maybe_applied).  The hook of the calling
** thread (ddb_cancel_thread) comes first; without one, the client's.  The
** client's hook may be called from any thread that uses the client
** without a hook of its own. */
#define DDB_CANCEL_POLL_MS 50
void ddb_client_set_cancel(ddb_client *c, ddb_cancel_fn fn, void *ud);
/* Set the calling thread's hook (fn NULL: none). */
void ddb_cancel_thread(ddb_cancel_fn fn, void *ud);

/* The resolved endpoint URL and region (owned by the client). */
const char *ddb_client_endpoint(const ddb_client *c);
const char *ddb_client_region(const ddb_client *c);
/* Where the credentials came from ("environment", "profile 'x'"); never
** the credentials themselves. */
const char *ddb_client_credential_source(const ddb_client *c);
/* The cache's names for what c reads and as whom, for keys of the cache
** (cache/): *place names the canonical endpoint and the region (one
** server has one place however its URL is spelled); *principal names the
** access key id, secret key and session token.  Each is 16 bytes of a
** keyed hash (HMAC-SHA256 under a key drawn once per process, cut to 128
** bits; never the secret), owned by c and valid until ddb_client_free:
** refreshed credentials get a new principal, and the old one stays
** readable.  Safe from any thread. */
void ddb_client_scope(const ddb_client *c, const char **place,
                      size_t *place_len, const char **principal,
                      size_t *principal_len);
/* The shared cache tier's root key for c's current credentials
** (DDB_TIER_KEY_LEN bytes, owned by c, valid until ddb_client_free): an
** HMAC-SHA256 of the canonical endpoint, the region, the access key id,
** the secret key and the session token under a fixed label, so every
** process with the same credentials for the same place derives the same
** key, and nobody without the secret can (cache/shared.c derives its key
** names and its encryption key from it).  Never the secret itself.  Safe
** from any thread. */
#define DDB_TIER_KEY_LEN 32
const unsigned char *ddb_client_tier_key(const ddb_client *c);

/* ------------------------------------------------------------------------
** Table descriptions (DescribeTable)
*/
typedef enum {
  DDB_PROJ_ALL = 0,
  DDB_PROJ_KEYS_ONLY,
  DDB_PROJ_INCLUDE
} ddb_projection;

typedef struct ddb_keyattr {
  char *name;    /* NULL when absent (no sort key) */
  ddb_type type; /* DDB_S, DDB_N or DDB_B */
} ddb_keyattr;

/* A key's partition attributes, and its sort attributes, at the most: a
** GSI's key may list up to 4 of each (multi-attribute keys, November
** 2025); a table's or an LSI's has one partition and at most one sort
** attribute. */
#define DDB_KEY_ATTRS 4

typedef struct ddb_index {
  char *name;   /* NULL for the base table */
  int is_local; /* 1 for an LSI */
  /* The key, in KeySchema order: pks[0..n_pk) the partition attributes,
  ** sks[0..n_sk) the sort attributes; pk and sk are the first of each
  ** (sk.name NULL: no sort key).  A description made by hand may leave
  ** n_pk and n_sk 0: ddb_key_attrs counts either way. */
  union {
    ddb_keyattr pk;
    ddb_keyattr pks[DDB_KEY_ATTRS];
  };
  union {
    ddb_keyattr sk;
    ddb_keyattr sks[DDB_KEY_ATTRS];
  };
  int n_pk, n_sk;
  ddb_projection projection;
  int n_nonkey;
  char **nonkey; /* INCLUDE projection's NonKeyAttributes */
} ddb_index;

/* The number of partition (sort 0) or sort (sort 1) attributes of x's
** key: n_pk or n_sk, or for a description that leaves them 0, 1 and 0 or
** 1 as pk and sk are set. */
static inline int ddb_key_attrs(const ddb_index *x, int sort) {
  if(sort)
    return x->n_sk ? x->n_sk : x->sk.name != NULL;
  return x->n_pk ? x->n_pk : x->pk.name != NULL;
}

typedef struct ddb_table_desc {
  char *name;
  long long item_count;
  long long size_bytes;
  /* TableStatus ("ACTIVE", ...); the billing mode ("PROVISIONED" when
  ** the answer has no BillingModeSummary); the stream's StreamViewType,
  ** NULL without an enabled stream.  NULL in a description read back from
  ** a database file (desc.c keeps what the columns need). */
  char *status, *billing_mode, *stream;
  int n_indexes;      /* 1 + GSIs + LSIs */
  ddb_index *indexes; /* [0] is the base table, then GSIs, then LSIs */
} ddb_table_desc;

ddb_result ddb_describe_table(ddb_client *c, const char *table,
                              ddb_table_desc **out, ddb_error *err);
void ddb_table_desc_free(ddb_table_desc *d);
/* ListTables: one page of at most limit (1..100) table names, those after
** start (NULL: from the first), in *names[0..*n) (ddb_strv_free), and in
** *last the LastEvaluatedTableName to start the next page after (free();
** NULL on the last page).  An answer whose LastEvaluatedTableName is not
** its page's last name (as DynamoDB's always is) is DDB_ERR_PARSE: a
** broken server's pages could go on for ever. */
ddb_result ddb_list_tables(ddb_client *c, const char *start, int limit,
                           char ***names, int *n, char **last, ddb_error *err);
/* Free names[0..n) and the array. */
void ddb_strv_free(char **names, int n);
/* DescribeTimeToLive: *attr the TTL attribute (NULL when TTL was never
** set), *status its TimeToLiveStatus ("ENABLED", "DISABLED", ...); both
** free().  A server without the operation answers an error whose type is
** "UnknownOperationException" (dynalite's DescribeTimeToLive exists, its
** UpdateTimeToLive does not). */
ddb_result ddb_describe_ttl(ddb_client *c, const char *table, char **attr,
                            char **status, ddb_error *err);
/* A deep copy of d (free with ddb_table_desc_free), or NULL on OOM. */
ddb_table_desc *ddb_table_desc_dup(const ddb_table_desc *d);

/* DynamoDB Streams (streams.c; cache/coherence.c's reader).
** ddb_stream_of_table: the table's LatestStreamArn and StreamViewType
** (*arn, *view: free(); both NULL when its stream is not enabled), from
** DescribeTable.  ddb_describe_stream: every shard of stream arn
** (ddb_stream_desc_free).  ddb_shard_iterator: an iterator of shard at
** LATEST (seq NULL), TRIM_HORIZON (seq "") or AFTER_SEQUENCE_NUMBER
** seq, in *iter (free()).
** ddb_get_records: at most limit (0: the server's) records at iter into
** *out (ddb_stream_batch_free); out->next NULL: the shard is closed and
** read to its end.  Errors are the service's (e.type
** "ExpiredIteratorException", "TrimmedDataAccessException",
** "ResourceNotFoundException"; LimitExceededException is retried with
** backoff like any throttling answer). */
typedef struct ddb_stream_shard {
  char *id, *parent; /* parent: NULL when none */
  int closed;        /* has an EndingSequenceNumber */
} ddb_stream_shard;
typedef struct ddb_stream_desc {
  char *status; /* StreamStatus: "ENABLED", "DISABLED", ... */
  ddb_stream_shard *shards;
  int n_shards;
} ddb_stream_desc;
typedef struct ddb_stream_record {
  int event;      /* 'I' INSERT, 'M' MODIFY, 'R' REMOVE */
  char *seq;      /* SequenceNumber */
  double created; /* ApproximateCreationDateTime, Unix seconds */
  ddb_item *keys, *new_image, *old_image; /* images NULL when not sent */
} ddb_stream_record;
typedef struct ddb_stream_batch {
  ddb_stream_record *r;
  int n;
  char *next; /* NextShardIterator, NULL at a closed shard's end */
} ddb_stream_batch;
ddb_result ddb_stream_of_table(ddb_client *c, const char *table, char **arn,
                               char **view, ddb_error *err);
ddb_result ddb_describe_stream(ddb_client *c, const char *arn,
                               ddb_stream_desc **out, ddb_error *err);
void ddb_stream_desc_free(ddb_stream_desc *d);
ddb_result ddb_shard_iterator(ddb_client *c, const char *arn,
                              const char *shard, const char *seq, char **iter,
                              ddb_error *err);
ddb_result ddb_get_records(ddb_client *c, const char *iter, int limit,
                           ddb_stream_batch *out, ddb_error *err);
void ddb_stream_batch_free(ddb_stream_batch *b);

/* Table ARNs (arn.c): arn:PARTITION:dynamodb:REGION:ACCOUNT:table/NAME,
** with /index/INDEX when index_ok (the resource a throttling answer
** names).  DynamoDB takes a table's ARN wherever it takes its name. */
typedef struct ddb_arn {
  char partition[32], region[64], account[16];
  char table[256], index[256]; /* index: "" for the table */
} ddb_arn;
/* 1 when s starts with "arn:" (then it must parse: no table is named so). */
int ddb_arn_is(const char *s);
/* Parse s into *out; DDB_OK, or DDB_ERR_CONFIG with a one-line err (if
** not NULL) quoting s and saying what is wrong. */
ddb_result ddb_arn_parse(const char *s, int index_ok, ddb_arn *out,
                         ddb_error *err);
/* The table name of the table ARN s (a pointer into s), or s itself when
** it is no well-formed table ARN (a name). */
const char *ddb_arn_table_name(const char *s);
/* A description of table NAME asked for by its ARN `asked` gets `asked` as
** its name, so that every call and cache key names the ARN.  Returns 0
** (also when there was nothing to do), -1 on out of memory. */
int ddb_desc_name_asked(ddb_table_desc *d, const char *asked);

/* ------------------------------------------------------------------------
** Reads
*/

/* Operators a key condition can use on the sort key. */
typedef enum ddb_skop {
  DDB_SK_NONE = 0,
  DDB_SK_EQ,
  DDB_SK_LT,
  DDB_SK_LE,
  DDB_SK_GT,
  DDB_SK_GE,
  DDB_SK_BETWEEN,
  DDB_SK_BEGINS_WITH
} ddb_skop;

/* One condition of a FilterExpression: name op value(s), or
** begins_with(name, value).  DynamoDB applies filters after reading, so
** they cut the bytes sent, not the capacity consumed. */
typedef struct ddb_filter {
  const char *name;
  ddb_skop op; /* EQ, LT, LE, GT, GE, BETWEEN, BEGINS_WITH */
  ddb_av v[2];
} ddb_filter;

/* A Query (pk_name set) or a Scan (pk_name NULL).  All strings are owned
** by the caller and must outlive the call. */
typedef struct ddb_read {
  const char *table;
  const char *index;   /* NULL: the base table */
  const char *pk_name; /* Query: partition key attribute */
  ddb_av pk;           /* Query: its value (S, N or B) */
  const char *sk_name; /* sort key attribute when sk_op != NONE */
  ddb_skop sk_op;
  ddb_av sk[2]; /* one value, two for BETWEEN */
  /* Query of a multi-attribute key (a GSI's): n_eq more attributes, each
  ** = its value (eq_names[i] = eq_vals[i]): the partition attributes
  ** after pk_name, then the sort attributes before sk_name */
  int n_eq;
  const char *const *eq_names;
  const ddb_av *eq_vals;
  int descending;            /* Query: ScanIndexForward=false */
  int consistent;            /* ConsistentRead=true */
  long long limit;           /* Limit; 0: none */
  int count_only;            /* Select=COUNT */
  int segment;               /* Scan: Segment (with total_segments > 1) */
  int total_segments;        /* Scan: TotalSegments; 0/1: not parallel */
  const ddb_item *start;     /* ExclusiveStartKey, or NULL */
  const char *const *proj;   /* ProjectionExpression: these attributes */
  int n_proj;                /* 0: whole items */
  const ddb_filter *filters; /* FilterExpression: all of these */
  int n_filters;
  /* The table's description (borrowed; NULL: none): the key attributes
  ** every LastEvaluatedKey of the read must hold (lek.c) */
  const ddb_table_desc *desc;
  /* ttl=hide: with ttl_attr set, the FilterExpression also keeps only the
  ** items whose attribute ttl_attr is not a number below ttl_now (Unix
  ** seconds): an item DynamoDB's TTL has expired but not yet deleted is
  ** left out */
  const char *ttl_attr;
  long long ttl_now;
} ddb_read;

/* One page of a Query or Scan.  Reference-counted and immutable. */
typedef struct ddb_page {
  int refs;
  size_t bytes; /* allocated bytes, items included */
  int n_items;
  ddb_item **items;   /* n_items references */
  ddb_item *last_key; /* LastEvaluatedKey, or NULL on the last page */
  long long count;    /* Count */
  long long scanned;  /* ScannedCount */
  double consumed_rcu;
} ddb_page;

ddb_page *ddb_page_ref(ddb_page *p);
void ddb_page_unref(ddb_page *p);

/* Serialize a Query/Scan request body (the exact JSON sent, and the cache
** key of the page).  Returns DDB_OK or an error (bad number, no memory). */
ddb_result ddb_read_body(const ddb_read *r, ddb_buf *out, ddb_error *err);

/* A page as the JSON of DynamoDB's answer (Items in typed JSON, Count,
** ScannedCount, LastEvaluatedKey; no ConsumedCapacity), appended to out;
** and back, through the parser of DynamoDB's answers (every byte checked:
** text that is not such an answer is an error, DDB_ERR_PARSE).  For the
** shared cache tier (cache/shared.c).  ddb_page_to_json returns 0, or -1
** when out failed. */
int ddb_page_to_json(const ddb_page *p, ddb_buf *out);
ddb_result ddb_page_from_json(const char *text, size_t n, ddb_page **out,
                              ddb_error *err);

/* Run one page of a Query/Scan.  On success *out is a new page reference. */
ddb_result ddb_read_page(ddb_client *c, const ddb_read *r, ddb_page **out,
                         ddb_error *err);

/* Following LastEvaluatedKey from page to page, a guard against a server
** whose keys never end (the rules are in lek.c): keys that go round in a
** circle (A, B, A, B, ...; one that repeats the start key at once is
** caught by ddb_read_page), found by Brent's cycle detection (one saved
** key, one comparison a page; a circle of L keys entered after T pages is
** found within 4 x (T + L) pages), and more pages ending on a key than the
** table has items (DescribeTable asked past 1000 idle pages, or 100,000
** pages).  Zero-initialize; ddb_lek_guard_free() when done (then it may be
** reused). */
typedef struct ddb_lek_guard {
  ddb_item *saved; /* a reference, or NULL */
  long power, lam;
  long long pages, idle;       /* pages that ended on a key; of them, idle */
  long long bound, idle_bound; /* the most allowed before DescribeTable
                                  is asked again */
} ddb_lek_guard;
/* Note page pg of the read r (pg->last_key NULL: the read ended), read
** with c.  Returns DDB_OK, or DDB_ERR_PARSE (err set) when the server
** leads the read in a loop, or ends on more keys than the table has
** items. */
ddb_result ddb_lek_next(ddb_lek_guard *g, ddb_client *c, const ddb_read *r,
                        const ddb_page *pg, ddb_error *err);
void ddb_lek_guard_free(ddb_lek_guard *g);

/* GetItem.  key holds the key attributes (names set).  On success *out is
** the item (a new reference) or NULL when there is no such item. */
ddb_result ddb_get_item(ddb_client *c, const char *table, const ddb_item *key,
                        int consistent, ddb_item **out, ddb_error *err);

/* BatchGetItem for any number of keys: sent 100 keys per call, with
** UnprocessedKeys retried (with backoff) until done.  Results go to
** found[i] for keys[i] (a new reference, or NULL when missing); found must
** have room for n.  Duplicate keys are allowed (sent once). */
ddb_result ddb_batch_get(ddb_client *c, const char *table,
                         const ddb_item *const *keys, size_t n,
                         const char *const *key_names, int n_key_names,
                         int consistent, ddb_item **found, ddb_error *err);

/* ------------------------------------------------------------------------
** Writes (write.c)
*/
typedef enum ddb_cond {
  DDB_COND_NONE = 0,
  DDB_COND_NOT_EXISTS, /* the key must not exist (INSERT) */
  DDB_COND_EXISTS,     /* the key must exist */
  DDB_COND_SAME        /* the key must exist, and every attribute of the
                          image `expect` (the item as it was read) must
                          hold there the value it holds in expect: a write
                          computed from what was read (ddb_condition_check
                          says whether it fits DynamoDB's limits).  An
                          attribute added since is not seen. */
} ddb_cond;

/* Does the condition DDB_COND_SAME on expect fit one request:
** DynamoDB's ConditionExpression takes at most 4 KB and (counted as for
** an UpdateExpression) 300 operators?  A map or list is compared member
** by member when the whole condition then fits (servers that compare
** documents with = wrongly, dynalite, agree then), else with = whole.
** Returns DDB_OK, or DDB_ERR_INPUT with a message saying how many
** attributes the item has; DDB_ERR_NOMEM. */
ddb_result ddb_condition_check(const ddb_item *expect,
                               const char *const *key_names, int n_key,
                               ddb_error *err);

/* PutItem.  With old != NULL, *old is the item it replaced (or NULL).
** expect: the image of DDB_COND_SAME (else unused).  A failed condition
** is DDB_ERR_SERVICE with type "ConditionalCheckFailedException". */
ddb_result ddb_put_item(ddb_client *c, const char *table, const ddb_item *item,
                        const char *const *key_names, int n_key, ddb_cond cond,
                        const ddb_item *expect, ddb_item **old,
                        ddb_error *err);
/* DeleteItem of the item with key's key attributes (expect: as for
** ddb_put_item). */
ddb_result ddb_delete_item(ddb_client *c, const char *table,
                           const ddb_item *key, const char *const *key_names,
                           int n_key, ddb_cond cond, const ddb_item *expect,
                           ddb_item **old, ddb_error *err);
/* UpdateItem: SET every attribute of `set`, REMOVE the names in remove,
** on condition cond (DDB_COND_EXISTS, or DDB_COND_SAME on expect: an
** UPDATE changes rows, it never creates one); *updated is the item
** after. */
ddb_result ddb_update_item(ddb_client *c, const char *table,
                           const ddb_item *key, const char *const *key_names,
                           int n_key, const ddb_item *set,
                           const char *const *remove, int n_remove,
                           ddb_cond cond, const ddb_item *expect,
                           ddb_item **updated, ddb_error *err);

typedef enum {
  DDB_WRITE_PUT = 1,
  DDB_WRITE_DELETE,
  DDB_WRITE_UPDATE /* TransactWriteItems only */
} ddb_write_kind;

typedef struct ddb_write {
  ddb_write_kind kind;
  const ddb_item *item;   /* PUT: the item; DELETE, UPDATE: holds the key */
  ddb_cond cond;          /* UPDATE: EXISTS or SAME */
  const ddb_item *expect; /* DDB_COND_SAME: the image read */
  /* UPDATE: SET every attribute of set (may be NULL), REMOVE remove[] */
  const ddb_item *set;
  const char *const *remove;
  int n_remove;
  /* A write of a call across tables (a TransactWriteItems of one
  ** account and region; the calls of a cache plan, cache/wcalls.c): its
  ** own table and key attribute names.  d NULL (memset 0): the call's. */
  const ddb_table_desc *d;
  const char *const *key_names;
  int n_key;
} ddb_write;

/* TransactWriteItems of at most 100 writes, all or nothing, idempotent on
** retry (ClientRequestToken): Put, Delete, or Update (as ddb_update_item:
** SET and REMOVE of the given attributes), each on its condition.  Each
** write goes to table with key_names, or, w[i].d set, to its own (tables
** of one account and region: c's).  A cancellation names the failing
** items:
** "TransactionCanceledException: item 2: ConditionalCheckFailed". */
ddb_result ddb_transact_write(ddb_client *c, const char *table,
                              const ddb_write *w, int n,
                              const char *const *key_names, int n_key,
                              ddb_error *err);
/* What became of each write of a call (ddb_batch_write's state[]). */
#define DDB_WRITE_NOT_APPLIED 0 /* never reached DynamoDB, or refused */
#define DDB_WRITE_APPLIED     1
#define DDB_WRITE_MAYBE       2 /* its answer was lost: it may have been */

/* BatchWriteItem, 25 writes a call, UnprocessedItems resent with backoff
** (a resend that leaves as many unprocessed counts as a retry: more than
** max_retries in a row fail the call).  Not atomic: on error, earlier
** calls' writes stay written.  With state != NULL, state[i] says what
** became of w[i], exactly: DynamoDB names the writes it did not process
** (UnprocessedItems), and those of a request whose answer was lost are
** DDB_WRITE_MAYBE. */
ddb_result ddb_batch_write(ddb_client *c, const char *table,
                           const ddb_write *w, size_t n,
                           const char *const *key_names, int n_key,
                           unsigned char *state, ddb_error *err);

/* ------------------------------------------------------------------------
** fork() safety (live.c): an object whose locks a child of fork() must
** find free and whole embeds a ddb_live node and adds it while it lives.
** One set of pthread_atfork handlers calls every node's ops: lock before
** the fork, unlock_parent after it in the parent, unlock_child (NULL: the
** same as unlock_parent) in the child, the nodes in the order of their
** ranks, lowest first: the lock order, written at the top of live.c.
*/
typedef enum ddb_live_rank {
  DDB_LIVE_EXT = 10,        /* ext/common.c: dd_registry_lock */
  DDB_LIVE_API_CLIENT = 20, /* api/client.c: a dyn_client's table list */
  DDB_LIVE_STREAM = 30,     /* cache/stream.c: a stream's mu */
  DDB_LIVE_COHERENCE = 35,  /* cache/coherence.c: readers, each mu */
  DDB_LIVE_CACHE = 40,      /* cache/cache.c: see live.c */
  DDB_LIVE_HOT = 41,        /* cache/hot.c: hot_lock */
  DDB_LIVE_SHARED = 42,     /* cache/shared.c: see live.c */
  DDB_LIVE_CLIENT = 50,     /* client/client.c: see live.c */
  DDB_LIVE_CREDS = 52,      /* client/creds_fetch.c: memo_lock */
  DDB_LIVE_HTTP = 55,       /* client/http.c: big_body (no lock: the child
                               finds it free) */
  DDB_LIVE_RATE = 60,       /* client/rate.c: rate_lock */
  DDB_LIVE_LOG = 70         /* client/log.c: log_lock */
} ddb_live_rank;

typedef struct ddb_live_ops {
  ddb_live_rank rank;
  void (*lock)(void *obj);
  void (*unlock_parent)(void *obj);
  void (*unlock_child)(void *obj);
} ddb_live_ops;

typedef struct ddb_live {
  const ddb_live_ops *ops;
  void *obj;             /* what the ops are called with */
  struct ddb_live *next; /* live.c's list */
} ddb_live;

/* Put n (for obj; ops must outlive n) on the list of live objects. */
void ddb_live_add(ddb_live *n, const ddb_live_ops *ops, void *obj);
/* Take n off the list (before obj's locks are destroyed). */
void ddb_live_remove(ddb_live *n);

/* ------------------------------------------------------------------------
** The request log: every HTTP request this process sent, newest last, in
** a bounded ring (DDB_LOG_SIZE entries).
*/
#define DDB_LOG_SIZE 4096

typedef struct ddb_log_entry {
  uint64_t seq;       /* 1, 2, ... */
  char operation[24]; /* "Query", "GetItem", ... */
  char table[256];
  char index[256];  /* "" for the base table */
  int continuation; /* 1: a follow-up page (ExclusiveStartKey) */
  int http_status;  /* last attempt's status, 0 if none */
  int retries;
  int items;     /* items returned (Count), -1 if unknown */
  double ms;     /* wall time including retries */
  char note[64]; /* what the caller said of the call (ddb_log_note): a
                    call of a write cut into calls that are not atomic
                    together; "" for none */
  /* fields appended later (the order above is kept) */
  double rcu, wcu; /* the ConsumedCapacity the answer reported */
  int cached;      /* 1: a page answered from the query cache: no
                        request was sent (http_status 0) */
  double age_s;    /* cached: the answer's age in seconds; else 0 */
  uint64_t stmt;   /* the statement it served (its meter's), 0: none */
  /* the last throttling answer's reasons, "Reason table[/index]"
  ** joined by "; " (its error type when it gave none); "" if none */
  char throttle[160];
} ddb_log_entry;

/* Process-wide request counters, counted where each event happens. */
typedef enum ddb_op {
  DDB_OP_GET_ITEM = 0,
  DDB_OP_BATCH_GET_ITEM,
  DDB_OP_QUERY,
  DDB_OP_SCAN,
  DDB_OP_PUT_ITEM,
  DDB_OP_UPDATE_ITEM,
  DDB_OP_DELETE_ITEM,
  DDB_OP_BATCH_WRITE_ITEM,
  DDB_OP_TRANSACT_WRITE_ITEMS,
  DDB_OP_DESCRIBE_TABLE,
  DDB_OP_LIST_TABLES,
  DDB_OP_DESCRIBE_TTL,
  DDB_OP_COUNT
} ddb_op;

typedef struct ddb_stats {
  uint64_t requests; /* HTTP requests sent, retries included */
  uint64_t op_requests[DDB_OP_COUNT];
  uint64_t retries;    /* requests that were retries */
  uint64_t throttles;  /* throttling answers */
  double consumed_rcu; /* ConsumedCapacity of reads */
  double consumed_wcu; /* ConsumedCapacity of writes */
  uint64_t rate_waits; /* requests that waited for max_rcu / max_wcu
                          (counted when a wait starts) */
  double rate_wait_s;  /* seconds they waited (added when it ends) */
} ddb_stats;

/* The name of op as DynamoDB spells it ("GetItem", ...). */
const char *ddb_op_name(ddb_op op);
void ddb_stats_get(ddb_stats *out);

/* Copy entries with seq > after into out (at most n); returns how many. */
int ddb_log_read(uint64_t after, ddb_log_entry *out, int n);
/* Append e to the log (its seq is set there); counts nothing.  The
** client's requests are logged by http.c; cache/shared.c logs the shared
** tier's commands (operations named shared_*). */
void ddb_log_add(const ddb_log_entry *e);
/* The note of the requests the calling thread sends from now on (copied,
** cut to the entry's 63 bytes; NULL or "": none), until it sets another:
** each request's log entry carries it.  Thread by thread, so the calls
** one thread makes for a statement never label another's. */
void ddb_log_note(const char *note);

/* Log a page of operation ("Query", "Scan") answered from the cache for
** c (cached = 1, items, its age in seconds), charged to c's meter's
** statement. */
void ddb_log_cached(const ddb_client *c, const char *operation,
                    const char *table, const char *index, int continuation,
                    int items, double age_s);
/* The ddb_op of operation, or DDB_OP_COUNT when it is none. */
ddb_op ddb_op_of(const char *operation);

/* ------------------------------------------------------------------------
** Statement meters (meter.c): what requests cost, and how old the cached
** answers taken were.  The front end (ext/) owns one per connection,
** whose counters only grow: a statement's cost is what they gained while
** it ran (ext/stmt.c keeps a copy from its start); its clients charge it
** (ddb_client_set_meter) with every request they send, the cache (cache/)
** with every answer it gives or lacks for them.  Any
** thread may charge it: the counters are atomic (relaxed: a reader
** between statements sees the sums).
*/
typedef struct ddb_meter {
  uint64_t stmt;                   /* the running statement's id (the
                                      log's stmt), set by the owner */
  uint64_t sent;                   /* requests counted for max_requests */
  uint64_t base;                   /* sent when the running statement
                                      started (set by the owner):
                                      max_requests allows sent - base */
  uint64_t requests[DDB_OP_COUNT]; /* by operation: first requests of
                                      calls and follow-up pages, not
                                      retries */
  uint64_t retries, throttles;
  uint64_t items_read;     /* ScannedCount (what DynamoDB read) */
  uint64_t items_returned; /* Count (what it sent back) */
  uint64_t rcu_u, wcu_u;   /* ConsumedCapacity, in millionths of a unit */
  uint64_t hits;           /* answers from the cache (items, pages) */
  uint64_t misses;         /* cache lookups that went to DynamoDB */
  int64_t oldest_ms;       /* the oldest cached answer's age (ms) since
                              the owner last set it; -1: none */
  uint64_t paced;          /* requests that waited for max_rcu/max_wcu
                              (counted when the wait starts) */
  uint64_t paced_us;       /* microseconds they waited (when it ends) */
  uint64_t waiting;        /* requests waiting for them now (a gauge) */
  uint64_t split;          /* COMMITs sent as more than one call */
} ddb_meter;

/* Zero m for statement stmt (no cached answer yet). */
void ddb_meter_reset(ddb_meter *m, uint64_t stmt);
/* A copy of m's counters, each read atomically. */
void ddb_meter_read(const ddb_meter *m, ddb_meter *out);
/* Charge m (NULL: nothing) with n units to counter *p: atomic, relaxed. */
static inline void ddb_meter_add(uint64_t *p, uint64_t n) {
  __atomic_add_fetch(p, n, __ATOMIC_RELAXED);
}
/* An answer from the cache of age seconds, charged to m (NULL: none):
** the hit path of a lookup, so inline. */
static inline void ddb_meter_hit(ddb_meter *m, double age) {
  int64_t ms, cur;
  if(!m)
    return;
  __atomic_add_fetch(&m->hits, 1, __ATOMIC_RELAXED);
  ms = (int64_t)(age * 1000);
  cur = __atomic_load_n(&m->oldest_ms, __ATOMIC_RELAXED);
  while(ms > cur &&
        !__atomic_compare_exchange_n(&m->oldest_ms, &cur, ms, 1,
                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    ;
}
/* Make c's requests charge m (NULL: none); m must outlive c's calls. */
void ddb_client_set_meter(ddb_client *c, ddb_meter *m);
/* The meter c charges, or NULL. */
ddb_meter *ddb_client_meter(const ddb_client *c);

/* What the requests made on one thread cost, summed while a tally is
** begun there (cache/ reads it for the hot keys of dynamodb_hot).
** ddb_tally_begin zeroes *t, makes it the calling thread's and returns the
** one it replaces (NULL: none), which ddb_tally_end(prev) restores. */
typedef struct ddb_tally {
  uint64_t requests, throttles;
  long long items;
  double rcu, wcu;
  /* throttling answers whose reasons named a hot key range
  ** (*KeyRangeThroughputExceeded), and the table and index ("": the
  ** table) the last of them named */
  uint64_t key_range;
  char key_range_table[256], key_range_index[256];
} ddb_tally;
ddb_tally *ddb_tally_begin(ddb_tally *t);
void ddb_tally_end(ddb_tally *prev);

#ifdef __cplusplus
}
#endif
#endif /* DDB_CLIENT_H */
