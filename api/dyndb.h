/*
** dyndb.h -- cached DynamoDB reads and write-through writes for C programs.
**
** This is the one public header of libdyndb, the C library of the
** sqlite-dynamodb project.  It gives a C program what the SQL extension
** gives a sqlite3 session, without SQL: GetItem, BatchGetItem, Query and
** Scan answered from an in-process cache in the manner of DynamoDB
** Accelerator (DAX), and PutItem, UpdateItem, DeleteItem and
** TransactWriteItems that update that cache as they write.
**
**    #include <dyndb.h>
**
**    dyn_client *c = NULL;
**    char *json = NULL;
**    dyn_client_new(NULL, &c, NULL);            // region, endpoint and
**                                               // credentials as the AWS
**                                               // CLI finds them
**    dyn_get_json(c, "Store", "{\"PK\":\"CUSTOMER#alice\",\"SK\":\"PROFILE\"}",
**                 0, &json, NULL);
**    puts(json ? json : "(no item)");
**    dyn_free(json);
**    dyn_client_free(c);
**
** Build:   cc app.c $(pkg-config --cflags --libs dyndb)
** Static:  cc app.c $(pkg-config --cflags dyndb) \
**             $(pkg-config --variable=libdir dyndb)/libdyndb.a \
**             $(pkg-config --libs libcurl libcjson libssl libcrypto zlib) \
**             -pthread -lm
**
** ------------------------------------------------------------------------
** THE CACHE
**
** One cache per process (per copy of the library), shared by every
** dyn_client and thread.  It is the SQL extension's cache layer: the same
** code, keys and rules.  (The loadable extension, dynamodb.so, carries its
** own copy, so a process that loads it next to libdyndb has two caches.)
** It holds
**
**   items   GetItem and BatchGetItem answers, "no such item" included,
**           keyed by (endpoint, table, primary key), for item_ttl seconds;
**   pages   Query and Scan pages, keyed by (endpoint, exact request), for
**           query_ttl seconds;
**
** under one byte budget (64 MiB unless dyn_cache_set_budget() says
** otherwise), least recently used first out.
**
** A read with DYN_CONSISTENT goes to DynamoDB (ConsistentRead=true) and
** neither uses nor fills the cache, as in DAX.  A write made through this
** library replaces the item's cache entry with the item as written and
** makes stale every cached page that the write could change: the pages of
** the partitions (in the table and in every index) that held the item
** before and hold it after, and the table's Scan pages.  So, unlike DAX, a
** Query right after a write through this process sees the write.  Writes
** made by other processes (or other copies of the library) are seen when
** the entries' TTL runs out.
**
** ------------------------------------------------------------------------
** ITEMS
**
** An item is a dyn_item: immutable once built, reference counted, one
** allocation.  Its attributes form a tree of dyn_value nodes that a
** program walks with the dyn_value_*() accessors, without parsing JSON:
**
**    const dyn_value *total = dyn_item_get(item, "total");
**    if(dyn_value_type(total) == DYN_N)
**      printf("total %s\n", dyn_value_text(total, NULL));   // "30"
**
** Numbers (N, NS) stay the exact decimal text DynamoDB sent (up to 38
** significant digits, more than a double holds); dyn_value_int64() and
** dyn_value_double() convert when asked.  Binary values (B, BS) are base64
** text as on the wire; dyn_value_binary() decodes.
**
** Items also convert to and from JSON text in two forms:
**
**   plain   {"PK":"CUSTOMER#alice","total":30,"tags":["a","b"]}
**           string S, number N (exact digits), true/false BOOL, null NULL,
**           array L, object M; sets become arrays and binaries base64
**           strings, so plain JSON does not round-trip sets and binaries;
**   typed   DynamoDB's own form, {"PK":{"S":"CUSTOMER#alice"},
**           "total":{"N":"30"},"tags":{"SS":["a","b"]}}: exact for every
**           type (flag DYN_JSON_TYPED).
**
** Or a program builds one with a dyn_builder (dyn_builder_s() and
** friends), which needs no JSON escaping.
**
** A key is an item holding (at least) the table's key attributes; a whole
** item read from the table is a fine key.  The library learns the key
** schema from DescribeTable (remembered for 60 s per client), checks the
** key's types before sending anything and sends only the key attributes.
**
** ------------------------------------------------------------------------
** OWNERSHIP
**
**   dyn_client     dyn_client_new() -> dyn_client_free()
**   dyn_item       every dyn_item * a call hands out through an out
**                  parameter is a new reference: dyn_item_unref() it once.
**                  dyn_iter_next() is the exception: it lends the item
**                  until the next dyn_iter_next()/dyn_iter_free() on that
**                  iterator (dyn_item_ref() it to keep it longer).
**   dyn_value      borrowed from its item: valid while the item is.
**   dyn_iter       dyn_query_open()/dyn_scan_open() -> dyn_iter_free()
**   dyn_builder    dyn_builder_new() -> dyn_builder_finish(), which frees
**                  the builder whatever it returns, or dyn_builder_free()
**                  to abandon it.
**   char *, void * returned by this library (JSON text, decoded binary):
**                  dyn_free().
**   const char *   returned by accessors: owned by the object they came
**                  from; never free them.
**   Arguments:     the library never keeps a pointer the caller passed in
**                  after the call returns (strings and items are copied
**                  or referenced as needed), except that dyn_query_open()
**                  and dyn_scan_open() copy their struct and strings.
**
** ------------------------------------------------------------------------
** ERRORS
**
** Every call that can fail returns a dyn_code: DYN_OK (0) or an error.  If
** the caller passes a dyn_error (it may pass NULL), it is cleared on entry
** and, on failure, says what went wrong in one line, plus for DynamoDB's
** own errors the error type ("ResourceNotFoundException"), the HTTP status
** and how many retries were spent.  Nothing in this library calls abort()
** or exit(), and nothing prints.  Out of memory is DYN_ENOMEM.
**
** Throttling, HTTP 5xx answers and network failures are retried with
** exponential backoff and full jitter (max_retries, default 10) before a
** call fails.  A Query or Scan that fails part way is an error from
** dyn_iter_next(), never a shorter answer.
**
** ------------------------------------------------------------------------
** THREADS
**
**   - A dyn_client may be used by any number of threads at once.  It
**     keeps a pool of HTTP connections and hands one to each call in
**     progress, so concurrent calls do not wait for one another.  Do not
**     call dyn_client_free() while another thread still uses the client
**     or an iterator opened on it.
**   - dyn_item and dyn_value are immutable: any number of threads may read
**     the same item; dyn_item_ref()/dyn_item_unref() are atomic.
**   - A dyn_iter or a dyn_builder is used by one thread at a time (it may
**     move from thread to thread between calls).  A parallel Scan's
**     iterator runs its own threads inside; the caller still sees one
**     iterator.
**   - The cache, the statistics and the version calls are process-wide
**     and safe to call from any thread at any time.
**   - The first dyn_client_new() initialises libcurl (curl_global_init).
**     A program that also uses libcurl itself, or calls
**     curl_global_cleanup(), should do its own curl_global_init() before
**     it starts threads.
**
** ------------------------------------------------------------------------
** CONFIGURATION (dyn_options; NULL or dyn_options_init: every default)
**
** The same resolution as the SQL extension's (docs/reference.md, "Options"),
** which follows the AWS SDKs:
**
**   region     AWS_REGION, AWS_DEFAULT_REGION, `region` of the profile in
**              the config file
**   endpoint   AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL, the profile's
**              services section or endpoint_url,
**              https://dynamodb.<region>.amazonaws.com
**   profile    AWS_PROFILE, "default"
**   ca_bundle  AWS_CA_BUNDLE, `ca_bundle` of the profile, the system's CAs
**   credentials  the chain, in botocore's order: AWS_ACCESS_KEY_ID /
**              AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, the profile's
**              role_arn (AssumeRole), web identity (its settings or
**              AWS_WEB_IDENTITY_TOKEN_FILE / AWS_ROLE_ARN), IAM Identity
**              Center (the token `aws sso login` cached), its keys in the
**              shared credentials and config files, its credential_process,
**              container and instance metadata (docs/aws.md).  A profile
**              named in the options is used even when AWS_ACCESS_KEY_ID is
**              set.  Assumed and SSO credentials are kept for the process:
**              clients with the same role share one STS call.
**
** No option takes a secret: credentials come from the chain only.
*/
#ifndef DYNDB_H
#define DYNDB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DYN_VERSION        "0.1.0"
#define DYN_VERSION_NUMBER 100 /* major * 10000 + minor * 100 + patch */

/* The library's version, DYN_VERSION of the library actually linked. */
const char *dyn_version(void);

/* ========================================================================
** Errors
*/
typedef enum dyn_code {
  DYN_OK = 0,
  DYN_ENOMEM,     /* out of memory */
  DYN_ECONFIG,    /* no region, no credentials, unreadable profile, ... */
  DYN_ENETWORK,   /* connect/send/receive failed after every retry */
  DYN_ESERVICE,   /* DynamoDB answered with an error: see dyn_error.type */
  DYN_EPARSE,     /* the answer was not what DynamoDB sends */
  DYN_EINPUT,     /* a value or item DynamoDB cannot take (bad number,
                     missing or mistyped key attribute, bad JSON, item over
                     400 KB, unknown index, ...); nothing was sent */
  DYN_ECONDITION, /* a write's condition failed (DYN_IF_EXISTS,
                     DYN_IF_NOT_EXISTS, the update of a missing item, or
                     one of a transaction's); nothing was written */
  DYN_ETYPE,      /* an accessor asked a value for what it is not (the
                     int64 of a string, of 1.5, of 1e40) */
  DYN_EMISUSE     /* a NULL where an object is required, an unknown flag,
                     a builder call out of place */
} dyn_code;

typedef struct dyn_error {
  dyn_code code;     /* DYN_OK when the call succeeded */
  int http_status;   /* of DynamoDB's last answer; 0 when none came */
  int retries;       /* retries spent on the failing request */
  char type[96];     /* DynamoDB's error type without its namespace
                        ("ConditionalCheckFailedException"), or "" */
  char message[512]; /* one line, never empty on failure */
} dyn_error;

/* The name of a code: "DYN_OK", "DYN_ESERVICE", ...  A static string. */
const char *dyn_code_name(dyn_code code);

/* Free memory this library returned as char * or void * (JSON text,
** decoded binaries).  NULL is fine. */
void dyn_free(void *p);

/* ========================================================================
** Flags (one namespace; each call says which it takes, others are
** DYN_EMISUSE)
*/
#define DYN_CONSISTENT                                                        \
  0x01                         /* reads: ConsistentRead=true, bypassing
                                  the cache (not on a GSI: DYN_EINPUT) */
#define DYN_JSON_TYPED    0x02 /* JSON in and out is DynamoDB's typed form */
#define DYN_IF_NOT_EXISTS 0x04 /* writes: only if no item has this key */
#define DYN_IF_EXISTS     0x08 /* writes: only if an item has this key */

/* ========================================================================
** The client
*/

/* Option values.  max_retries, item_ttl and query_ttl mean what the SQL
** extension's options of the same names mean (docs/reference.md): 0 is
** none (no retry, not cached); DYN_DEFAULT asks for the default.
** DYN_OFF is the same as 0, kept for the programs that used it when 0 was
** the default. */
#define DYN_OFF     (-1)
#define DYN_DEFAULT (-2)

typedef struct dyn_options {
  const char *region;     /* NULL: see CONFIGURATION above */
  const char *endpoint;   /* NULL: see above.  http:// only when given */
  const char *profile;    /* NULL: AWS_PROFILE, then "default" */
  const char *ca_bundle;  /* PEM file of the CAs to trust; NULL: see
                             above */
  double timeout;         /* seconds for one request; 0: 60 */
  double connect_timeout; /* seconds to connect; 0: 10 */
  int max_retries;        /* retries of throttling, 5xx, ...: 0 to 100,
                             0 (or DYN_OFF): no retry; DYN_DEFAULT: 10 */
  double item_ttl;        /* seconds an item stays cached, 0 to 31536000;
                             0 (or DYN_OFF): items are not cached;
                             DYN_DEFAULT: 300 */
  double query_ttl;       /* seconds a Query/Scan page stays cached, as
                             item_ttl; DYN_DEFAULT: 300 */

  /* A shared tier behind the process's cache (docs/cache.md):
  ** redis[s]://[user[:password]@]host[:port][/db]; NULL: the
  ** environment's DYNAMODB_SHARED_CACHE (unset: none); "" or "off": none.
  ** DYNAMODB_SHARED_CACHE_PASSWORD goes only to the Redis that
  ** DYNAMODB_SHARED_CACHE names (scheme, host, port, db, user alike).
  ** shared_cache_timeout: seconds, the bound of a connect and of each
  ** command to it; 0: 0.02. */
  const char *shared_cache;
  double shared_cache_timeout;
  /* shared_lease_wait: seconds (at most 1) a reader that misses a key in
  ** the shared tier while another process holds its lease waits for that
  ** one's fill before reading DynamoDB itself; 0: the environment's
  ** DYNAMODB_SHARED_CACHE_LEASE_WAIT, else twice this process's DynamoDB
  ** round trip (0.25 before one is measured); negative: no leases. */
  double shared_lease_wait;

  /* coherence: DYN_COHERENCE_TTL (0, the default: an entry lives its
  ** TTL) or DYN_COHERENCE_STREAMS (a background reader of each table's
  ** DynamoDB Stream retires what other writers change; a table without a
  ** stream fails its first call, saying how to enable one).
  ** max_staleness: with streams, seconds a reader may lag before a read
  ** goes to DynamoDB (as every read does while it starts or has fallen
  ** back to TTL freshness); 0 (or DYN_OFF): no bound (docs/cache.md). */
  int coherence;
  double max_staleness;
} dyn_options;
#define DYN_COHERENCE_TTL     0
#define DYN_COHERENCE_STREAMS 1

/* Every option at its default: the strings NULL, the timeouts 0 (their
** defaults), max_retries, item_ttl and query_ttl DYN_DEFAULT.  A program
** starts from it and sets what it wants:
**
**    dyn_options o;
**    dyn_options_init(&o);
**    o.endpoint = "http://127.0.0.1:8000";
**    o.item_ttl = 0;                     (no item cache)
*/
void dyn_options_init(dyn_options *o);

typedef struct dyn_client dyn_client;

/* Create a client.  opt may be NULL (all defaults, as dyn_options_init
** gives them); its strings are copied.
** Resolves region, endpoint and credentials now (reading the AWS files),
** without any request.  On success *out is the client, to be freed with
** dyn_client_free(); on failure *out is NULL (DYN_ECONFIG, DYN_EINPUT for
** an option out of range, DYN_ENOMEM). */
dyn_code dyn_client_new(const dyn_options *opt, dyn_client **out,
                        dyn_error *err);

/* Free a client.  No other thread may be using it, and every iterator
** opened on it must be freed first.  NULL is fine. */
void dyn_client_free(dyn_client *c);

/* The endpoint URL and region the client resolved (owned by the client). */
const char *dyn_client_endpoint(const dyn_client *c);
const char *dyn_client_region(const dyn_client *c);
/* Where the credentials came from ("environment", "profile 'x'"); never
** the credentials themselves.  Owned by the client. */
const char *dyn_client_credential_source(const dyn_client *c);

/* ========================================================================
** Items and values: the typed tree
*/
typedef enum dyn_type {
  DYN_NONE = 0, /* what a NULL value reports */
  DYN_S,        /* string (UTF-8) */
  DYN_N,        /* number, exact decimal text */
  DYN_B,        /* binary, base64 text */
  DYN_BOOL,
  DYN_NULL,
  DYN_M,  /* map: named members */
  DYN_L,  /* list */
  DYN_SS, /* string set: S members */
  DYN_NS, /* number set: N members */
  DYN_BS  /* binary set: B members */
} dyn_type;

typedef struct dyn_item dyn_item;   /* immutable, reference counted */
typedef struct dyn_value dyn_value; /* a node of an item's tree */

/* Take one more reference to it (returns it).  NULL is fine. */
dyn_item *dyn_item_ref(const dyn_item *it);
/* Drop one reference; the last one frees the item.  NULL is fine. */
void dyn_item_unref(const dyn_item *it);

/* The item as a value: a DYN_M whose members are the attributes.  Walk it
** with dyn_value_count()/dyn_value_at()/dyn_value_name().  NULL if it is
** NULL. */
const dyn_value *dyn_item_root(const dyn_item *it);
/* The attribute called name, or NULL when the item has none. */
const dyn_value *dyn_item_get(const dyn_item *it, const char *name);

/* Parse JSON text (NUL-terminated) into a new item: plain JSON, or with
** DYN_JSON_TYPED DynamoDB's typed form (flags: DYN_JSON_TYPED only).  The
** text must be one JSON object.  Numbers are checked against DynamoDB's
** rules (38 significant digits, magnitude 1e-130 to 1e126), binaries must
** be base64.  On success *out is a new item (dyn_item_unref()); on failure
** NULL, with DYN_EINPUT and a message naming the attribute path. */
dyn_code dyn_item_from_json(const char *json, int flags, dyn_item **out,
                            dyn_error *err);

/* The item as JSON text: plain, or with DYN_JSON_TYPED typed.  Returns
** NUL-terminated text to free with dyn_free(), or NULL when it is NULL or
** out of memory. */
char *dyn_item_to_json(const dyn_item *it, int flags);

/* The value's type; DYN_NONE for NULL. */
dyn_type dyn_value_type(const dyn_value *v);
/* The type as DynamoDB spells it: "S", "N", ..., "" for DYN_NONE. */
const char *dyn_type_name(dyn_type t);

/* The member name of a value inside a map (an item's attribute name),
** NUL-terminated; *len (if len is not NULL) gets its length in bytes.
** NULL for a list or set element. */
const char *dyn_value_name(const dyn_value *v, size_t *len);

/* The text of an S (UTF-8), N (exact decimal digits as DynamoDB sent
** them) or B (base64), NUL-terminated; *len gets its length in bytes (an
** S may contain NUL bytes; use len then).  NULL for other types. */
const char *dyn_value_text(const dyn_value *v, size_t *len);

/* A BOOL's value: 1 or 0; -1 when v is not a BOOL. */
int dyn_value_bool(const dyn_value *v);

/* How many members or elements an M, L, SS, NS or BS has; 0 otherwise. */
size_t dyn_value_count(const dyn_value *v);
/* Member or element i (0-based) of an M, L or set, or NULL when out of
** range.  Members of an M keep the order DynamoDB sent them in (which is
** not the order they were written in); set elements are S, N or B
** values. */
const dyn_value *dyn_value_at(const dyn_value *v, size_t i);
/* The member called name of an M, or NULL. */
const dyn_value *dyn_value_get(const dyn_value *v, const char *name);

/* An N as a 64-bit integer: DYN_OK when it is an integer that fits
** ("42", "-7", "1e3"); DYN_ETYPE for 1.5, 1e40 or a value that is not an
** N (*out is then 0). */
dyn_code dyn_value_int64(const dyn_value *v, int64_t *out);
/* An N as the nearest double (digits beyond a double's 15-17 are lost;
** use dyn_value_text() to keep them).  DYN_ETYPE when not an N. */
dyn_code dyn_value_double(const dyn_value *v, double *out);
/* A B decoded: *out gets n bytes (plus a NUL not counted in n) to free
** with dyn_free().  DYN_ETYPE when not a B, DYN_ENOMEM. */
dyn_code dyn_value_binary(const dyn_value *v, void **out, size_t *n);

/* The value as JSON text (plain, or DYN_JSON_TYPED), to free with
** dyn_free(); NULL when v is NULL or out of memory. */
char *dyn_value_to_json(const dyn_value *v, int flags);

/* 1 when a and b are the same value (numbers compared by value: 1.50 ==
** 15E-1; maps and sets regardless of order), else 0. */
int dyn_value_equal(const dyn_value *a, const dyn_value *b);

/* ========================================================================
** Building items without JSON
**
**    dyn_builder *b = dyn_builder_new();
**    dyn_builder_s(b, "PK", "CUSTOMER#carol");
**    dyn_builder_s(b, "SK", "ORDER#2026-03-15#o-300");
**    dyn_builder_n(b, "total", "40");
**    dyn_builder_begin(b, "tags", DYN_SS);
**    dyn_builder_s(b, NULL, "gift");
**    dyn_builder_end(b);
**    result = dyn_builder_finish(b, &item, &err);
**
** Inside a map (the item itself is one) every value needs a name, unique
** in that map; inside a list or set, name must be NULL.  A set takes only
** its element type (SS: dyn_builder_s, NS: _n/_int64/_double, BS: _b) and
** must not be empty.  The first mistake is remembered: later calls do
** nothing and return it, and dyn_builder_finish() reports it, so a
** program may check only the finish.  A NULL builder (dyn_builder_new()
** out of memory) makes every call return DYN_ENOMEM.
*/
typedef struct dyn_builder dyn_builder;

/* A new builder for one item, or NULL when out of memory. */
dyn_builder *dyn_builder_new(void);
/* An S: s is NUL-terminated UTF-8 (copied). */
dyn_code dyn_builder_s(dyn_builder *b, const char *name, const char *s);
/* An N from exact decimal text ("30", "-1.5e10"), checked as in JSON. */
dyn_code dyn_builder_n(dyn_builder *b, const char *name, const char *digits);
/* An N from an integer, or from a finite double written with the fewest
** digits (15 to 17) that read back as the same double: 0.1 is "0.1". */
dyn_code dyn_builder_int64(dyn_builder *b, const char *name, int64_t v);
dyn_code dyn_builder_double(dyn_builder *b, const char *name, double v);
/* A B of n bytes (copied, base64-encoded). */
dyn_code dyn_builder_b(dyn_builder *b, const char *name, const void *p,
                       size_t n);
dyn_code dyn_builder_bool(dyn_builder *b, const char *name, int v);
dyn_code dyn_builder_null(dyn_builder *b, const char *name);
/* A deep copy of v (from any item), with this name. */
dyn_code dyn_builder_value(dyn_builder *b, const char *name,
                           const dyn_value *v);
/* Open a DYN_M, DYN_L, DYN_SS, DYN_NS or DYN_BS; the following values go
** into it until the matching dyn_builder_end().  At most 32 levels. */
dyn_code dyn_builder_begin(dyn_builder *b, const char *name, dyn_type type);
dyn_code dyn_builder_end(dyn_builder *b);
/* Finish: every begin must be ended.  On success *out is the new item
** (dyn_item_unref()); on failure NULL and the first mistake.  Frees b in
** every case. */
dyn_code dyn_builder_finish(dyn_builder *b, dyn_item **out, dyn_error *err);
/* Abandon a builder.  NULL is fine. */
void dyn_builder_free(dyn_builder *b);

/* ========================================================================
** Reads.  flags: 0 or DYN_CONSISTENT (and DYN_JSON_TYPED for
** dyn_get_json).  Without DYN_CONSISTENT a read may be answered from the
** cache (see THE CACHE); with it, it never is, and does not fill it.
*/

/* GetItem.  key holds the table's key attributes (other attributes are
** ignored).  On success *out is the item (a new reference) or NULL when
** the table has no item with that key -- not an error. */
dyn_code dyn_get_item(dyn_client *c, const char *table, const dyn_item *key,
                      int flags, dyn_item **out, dyn_error *err);

/* GetItem with JSON in and out: key_json is the key as plain JSON
** ({"PK":"x","SK":5}; a B key attribute as a base64 string), or typed
** with DYN_JSON_TYPED; *out is the item as JSON text in the same form
** (dyn_free()), or NULL when there is no such item. */
dyn_code dyn_get_json(dyn_client *c, const char *table, const char *key_json,
                      int flags, char **out, dyn_error *err);

/* BatchGetItem of n keys, any n: sent 100 distinct keys a request, up to
** 4 requests in flight (the SQL extension's fan-out), with
** UnprocessedKeys re-sent (with backoff) until done; keys found in the
** cache are not sent at all.  found must have room for n: found[i] is the
** item of keys[i] (a new reference) or NULL when there is none.  On
** failure every found[i] is NULL. */
dyn_code dyn_batch_get(dyn_client *c, const char *table,
                       const dyn_item *const *keys, size_t n, int flags,
                       dyn_item **found, dyn_error *err);

/* Sort-key conditions of a Query. */
typedef enum dyn_sk_op {
  DYN_SK_NONE = 0, /* the whole partition */
  DYN_SK_EQ,
  DYN_SK_LT,
  DYN_SK_LE,
  DYN_SK_GT,
  DYN_SK_GE,
  DYN_SK_BETWEEN, /* sk <= SK <= sk_hi */
  DYN_SK_BEGINS_WITH
} dyn_sk_op;

/* A Query.  Key values are text, typed by the key schema: an S key's
** string, an N key's decimal digits, a B key's base64.  Zero-initialise
** and set what you need. */
typedef struct dyn_query {
  const char *table; /* required */
  const char *index; /* NULL: the table; else a GSI or LSI name */
  const char *pk;    /* required: the partition key value */
  dyn_sk_op sk_op;
  const char *sk;    /* the sort key value (BETWEEN: the lower bound) */
  const char *sk_hi; /* BETWEEN: the upper bound */
  int descending;    /* 1: sort key descending (ScanIndexForward=false) */
  long long limit;   /* the iterator stops after this many items; 0: all */
  int page_size;     /* Limit of each request; 0: DynamoDB's (1 MB) */
} dyn_query;

/* A Scan.  Three ways to run one:
**   segments 0 or 1, total_segments 0: one sequential Scan;
**   segments N > 1 (at most 64): a parallel Scan in N segments, each read
**     by its own thread (each with its own HTTP connection from the
**     client's pool), items handed out as their pages arrive -- so in no
**     particular order;
**   total_segments T > 0: only segment `segment` (0..T-1) of T, in the
**     calling thread, for programs that run the segments themselves. */
typedef struct dyn_scan {
  const char *table; /* required */
  const char *index; /* NULL: the table */
  int segments;
  int segment;
  int total_segments;
  long long limit; /* the iterator stops after this many items; 0: all */
  int page_size;   /* Limit of each request; 0: DynamoDB's (1 MB) */
} dyn_scan;

typedef struct dyn_iter dyn_iter;

/* Open an iterator over a Query or a Scan.  No item is read yet, but the
** table's key schema is (DescribeTable, unless remembered), so a wrong
** table, index or key type fails here.  Pages are read lazily, one
** request each when dyn_iter_next() runs out (a parallel Scan's threads
** read ahead, holding at most 2 x segments pages not yet handed out: the
** SQL extension's bound, the same code).  On success *out is the iterator
** (dyn_iter_free()); q/s and their strings are copied.  flags: 0 or
** DYN_CONSISTENT (not on a GSI). */
dyn_code dyn_query_open(dyn_client *c, const dyn_query *q, int flags,
                        dyn_iter **out, dyn_error *err);
dyn_code dyn_scan_open(dyn_client *c, const dyn_scan *s, int flags,
                       dyn_iter **out, dyn_error *err);

/* The next item: DYN_OK with *item set, or DYN_OK with *item NULL at the
** end (and on every call after it).  The item is lent: valid until the
** next dyn_iter_next() or dyn_iter_free() on this iterator; dyn_item_ref()
** it to keep it.  An error ends the iteration: later calls return it
** again.
**
**    while((result = dyn_iter_next(it, &item, &err)) == DYN_OK && item)
**      ...;
*/
dyn_code dyn_iter_next(dyn_iter *it, const dyn_item **item, dyn_error *err);

/* Pages read so far (requests made or answered from the cache, empty
** pages included; a parallel Scan counts the pages its threads have
** handed to the iterator, not those still read ahead).  0 for NULL. */
size_t dyn_iter_pages(const dyn_iter *it);

/* Free an iterator (a parallel Scan's threads are stopped and joined
** first, which may wait for the requests in flight).  NULL is fine. */
void dyn_iter_free(dyn_iter *it);

/* ========================================================================
** Writes (write-through: see THE CACHE).  The item or key is checked
** first (key attributes present, of the table's types, not empty; the
** item within DynamoDB's 400 KB); then sent.
*/

/* PutItem: create or replace item.  flags: 0, DYN_IF_NOT_EXISTS (fail
** with DYN_ECONDITION if an item has this key) or DYN_IF_EXISTS.  old may
** be NULL; otherwise *old is the item replaced (new reference) or NULL. */
dyn_code dyn_put_item(dyn_client *c, const char *table, const dyn_item *item,
                      int flags, dyn_item **old, dyn_error *err);

/* UpdateItem of an existing item: SET every attribute of `set` (which must
** not hold key attributes; may be NULL), REMOVE the n_remove attribute
** names of remove (may be NULL when n_remove is 0); at least one of the
** two.  A missing item is DYN_ECONDITION (an update never creates an
** item).  updated may be NULL; otherwise *updated is the item after the
** update (new reference).  flags: 0.
**
** An update's old image is unknown to the cache, so it makes every cached
** Query/Scan page of the table stale (a put or a delete only those it can
** change). */
dyn_code dyn_update_item(dyn_client *c, const char *table, const dyn_item *key,
                         const dyn_item *set, const char *const *remove,
                         size_t n_remove, int flags, dyn_item **updated,
                         dyn_error *err);

/* DeleteItem.  flags: 0 or DYN_IF_EXISTS.  Deleting a missing item
** without DYN_IF_EXISTS succeeds.  old may be NULL; otherwise *old is the
** item deleted (new reference) or NULL when there was none. */
dyn_code dyn_delete_item(dyn_client *c, const char *table, const dyn_item *key,
                         int flags, dyn_item **old, dyn_error *err);

/* One write of a transaction. */
typedef enum dyn_write_kind { DYN_PUT = 1, DYN_DELETE } dyn_write_kind;
typedef struct dyn_write {
  dyn_write_kind kind;
  const dyn_item *item; /* DYN_PUT: the item; DYN_DELETE: holds the key */
  int flags;            /* 0, DYN_IF_NOT_EXISTS or DYN_IF_EXISTS */
} dyn_write;

/* TransactWriteItems: 1 to 100 writes to distinct items of one table, all
** or nothing.  Retried requests carry the same ClientRequestToken, so a
** lost answer never writes twice.  A failed condition is DYN_ECONDITION
** with a message naming the write ("item 2: ConditionalCheckFailed",
** counting from 1); nothing is then written. */
dyn_code dyn_transact_write(dyn_client *c, const char *table,
                            const dyn_write *w, size_t n, dyn_error *err);

/* ========================================================================
** Cache and statistics (process-wide)
*/
typedef enum dyn_op {
  DYN_OP_GET_ITEM = 0,
  DYN_OP_BATCH_GET_ITEM,
  DYN_OP_QUERY,
  DYN_OP_SCAN,
  DYN_OP_PUT_ITEM,
  DYN_OP_UPDATE_ITEM,
  DYN_OP_DELETE_ITEM,
  DYN_OP_BATCH_WRITE_ITEM,
  DYN_OP_TRANSACT_WRITE_ITEMS,
  DYN_OP_DESCRIBE_TABLE,
  DYN_OP_COUNT
} dyn_op;

typedef struct dyn_stats {
  /* the cache */
  uint64_t item_hits, item_misses;   /* GetItem/BatchGetItem keys */
  uint64_t query_hits, query_misses; /* Query/Scan pages */
  uint64_t evictions;                /* dropped for the byte budget */
  uint64_t expirations;              /* dropped when their TTL ran out */
  uint64_t stale;     /* pages dropped because a write changed them */
  uint64_t entries;   /* items and pages held now */
  uint64_t bytes;     /* their size now */
  uint64_t bytes_max; /* the budget */
  /* requests to DynamoDB */
  uint64_t requests;                  /* HTTP requests, retries included */
  uint64_t op_requests[DYN_OP_COUNT]; /* the same by operation */
  uint64_t retries;                   /* requests that were retries */
  uint64_t throttles;                 /* throttling answers */
  double consumed_rcu, consumed_wcu;  /* ConsumedCapacity reported */

  /* the shared tier (shared_cache; docs/cache.md has each one) */
  uint64_t shared_hits, shared_misses, shared_fills, shared_auth_failures;
  uint64_t shared_timeouts, shared_errors, shared_skipped, shared_down;
  /* leases (docs/cache.md, "Leases") */
  uint64_t shared_lease_wins, shared_lease_waits, shared_lease_stale;
  uint64_t shared_lease_fallbacks;
} dyn_stats;

/* Counters since the process started (of this copy of the library). */
void dyn_stats_get(dyn_stats *out);
/* "GetItem", "Query", ...; "" for a value out of range. */
const char *dyn_op_name(dyn_op op);
/* Set the cache's byte budget, evicting as needed; returns the old one. */
size_t dyn_cache_set_budget(size_t bytes);
/* Drop every cached item and page. */
void dyn_cache_clear(void);

#ifdef __cplusplus
}
#endif
#endif /* DYNDB_H */
