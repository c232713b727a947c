/*
** ddb_client_int.h -- declarations shared by the files of client/ only.
** Not part of the layer's interface: nothing outside client/ includes it.
*/
#ifndef DDB_CLIENT_INT_H
#define DDB_CLIENT_INT_H

#include <cjson/cJSON.h>
#include <string.h>

#include "ddb_client.h"

/* Decode a DynamoDB item object ({"attr": {"S": "..."}, ...}) given as a
** cJSON tree (printed and parsed again: for cold paths).  On success *out
** is a new item with one reference. */
ddb_result ddb_item_decode(const cJSON *obj, ddb_item **out, ddb_error *err);

/* buf.c: a malloc'ed a followed by b, or a copy of s[0..n) (NULL on out
** of memory); free a string after wiping it (secrets; NULL is fine); copy
** src (NULL: "") into dst[0..cap), cut to fit, NUL-terminated. */
char *ddb_concat(const char *a, const char *b);
char *ddb_strndup(const char *s, size_t n);
void ddb_wipe_free(char *s);
void ddb_copy_str(char *dst, size_t cap, const char *src);

/* buf.c: ddb_text_cut: the length of the longest prefix of s[0..n) of at
** most max bytes that does not split a UTF-8 sequence (n when n <= max).
** (ddb_text_safe: ddb_client.h.) */
size_t ddb_text_cut(const char *s, size_t n, size_t max);

/* 1 for the bytes a JSON string holds as they are: not '"', not a
** backslash, not a control character (below 0x20) (buf.c). */
extern const unsigned char ddb_json_plain_byte[256];

/* The length of the longest prefix of s[0..n) that a JSON string holds as
** it is.  Eight bytes at a time while they are all plain (a word has a
** byte below 0x20, a '"' or a backslash: the exact tests of "Bit Twiddling
** Hacks", haszero and hasless), then a table lookup per byte. */
static inline size_t ddb_json_plain(const char *s, size_t n) {
  const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  size_t i = 0;
  while(i + 8 <= n) {
    uint64_t w, q, e;
    memcpy(&w, s + i, 8);
    q = w ^ (ones * '"');
    e = w ^ (ones * '\\');
    if(((w - ones * 0x20) & ~w & highs) | ((q - ones) & ~q & highs) |
       ((e - ones) & ~e & highs))
      break;
    i += 8;
  }
  while(i < n && ddb_json_plain_byte[(unsigned char)s[i]])
    i++;
  return i;
}

/* Copy s[0..n) to d (not overlapping) without a call for the short
** strings most of an item's are: two loads that may overlap, never
** reading or writing past either end (tape.c, item.c). */
static inline void ddb_copy_short(char *d, const char *s, size_t n) {
  if(n >= 8 && n <= 16) {
    uint64_t a, b;
    memcpy(&a, s, 8);
    memcpy(&b, s + n - 8, 8);
    memcpy(d, &a, 8);
    memcpy(d + n - 8, &b, 8);
  } else if(n >= 4 && n < 8) {
    uint32_t a, b;
    memcpy(&a, s, 4);
    memcpy(&b, s + n - 4, 4);
    memcpy(d, &a, 4);
    memcpy(d + n - 4, &b, 4);
  } else if(n < 4) {
    if(n) {
      d[0] = s[0];
      d[n / 2] = s[n / 2];
      d[n - 1] = s[n - 1];
    }
  } else
    memcpy(d, s, n);
}

/* Append '"', s[0..n) as it is and '"' when the buffer has room for them
** already (no growing, no escaping: the caller knows s needs none).
** Returns 1 when done, 0 when the caller must take the general way
** (ddb_buf_json_str), with b untouched. */
static inline int ddb_buf_quoted_fast(ddb_buf *b, const char *s, size_t n) {
  char *d;
  if(b->failed || !b->p || n + 2 >= b->cap - b->len || b->len + n + 2 > b->max)
    return 0;
  d = b->p + b->len;
  d[0] = '"';
  memcpy(d + 1, s, n);
  d[n + 1] = '"';
  d[n + 2] = 0;
  b->len += n + 2;
  return 1;
}

/* ------------------------------------------------------------------------
** Item layout (item.c, pack.c): [ddb_item][ddb_av nodes][texts]
*/
/* Where the next node and the next text bytes of an item being laid out
** go (and, while decoding, what the first pass counted). */
typedef struct ddb_layout {
  size_t nodes;
  size_t bytes;
  ddb_av *next_node;
  char *next_byte;
  const struct ddb_jtok *bad_number; /* an N that is not a number, for the
                                        message */
  int esc; /* item.c's counting pass: a name or text had an escape */
} ddb_layout;

/* A new item (one reference) laid out for n attributes among nodes
** ddb_avs and bytes of text, its root an M of those n kids; *L points
** past the root's kids and at the text, for the caller to fill.  NULL on
** out of memory (item.c). */
ddb_item *ddb_item_alloc(size_t nodes, size_t bytes, uint32_t n,
                         ddb_layout *L);

/* ------------------------------------------------------------------------
** JSON tapes (tape.c): one pass over the text, one flat array of tokens
*/
enum {
  DDB_JOBJ = 1,
  DDB_JARR,
  DDB_JSTR,
  DDB_JNUM,
  DDB_JTRUE,
  DDB_JFALSE,
  DDB_JNULL
};

/* A token: a value, or an object member's name (a DDB_JSTR before its
** value).  Tokens are in document order; a container's members follow it
** and `end` is the index just past its last one. */
typedef struct ddb_jtok {
  uint32_t off; /* offset in the text (strings: after the quote) */
  uint32_t len; /* strings: raw bytes between the quotes; numbers and
                    literals: their bytes */
  uint32_t n;   /* objects: members; arrays: elements */
  uint32_t end; /* index of the first token after this value */
  uint8_t type; /* DDB_J* */
  uint8_t esc;  /* strings: has backslash escapes */
} ddb_jtok;

typedef struct ddb_tape {
  ddb_jtok *tok;
  uint32_t n, cap;
  int borrowed; /* tok is the caller's (ddb_tape_init_with): never freed */
} ddb_tape;

/* Start t over the caller's storage[0..cap) tokens (on its stack, say): a
** value of up to cap tokens needs no malloc; past it the tokens move to
** the heap.  ddb_tape_free frees only what was allocated.  A zeroed tape
** starts on the heap. */
void ddb_tape_init_with(ddb_tape *t, ddb_jtok *storage, uint32_t cap);

int ddb_tape_value(ddb_tape *t, const char *base, const char **pp,
                   const char *end);
void ddb_tape_free(ddb_tape *t);
const char *ddb_tape_skip_ws(const char *p, const char *end);
size_t ddb_tape_str(const char *text, const ddb_jtok *k, char *out);
int ddb_tape_eq(const char *text, const ddb_jtok *k, const char *s);
long ddb_tape_member(const ddb_tape *t, const char *text, uint32_t obj,
                     const char *name);
double ddb_tape_num(const ddb_tape *t, const char *text, uint32_t i);

/* A reader of a top-level JSON object, member by member, that tokenizes one
** member value, or one element of a member array, at a time into tape;
** an object member may be entered (ddb_jr_object) to read its members the
** same way. */
typedef struct ddb_jreader {
  const char *text, *p, *end;
  int first, first_elem;
  int depth; /* objects entered (ddb_jr_object) and not yet left */
  ddb_tape tape;
} ddb_jreader;

/* Is s[0..n) well-formed UTF-8 (RFC 3629)?  1 or 0.  ddb_jr_open asks it
** of every answer it reads (GetItem, BatchGetItem, Query, Scan): a text
** that is not refuses to open, as JSON that does not parse. */
int ddb_utf8_valid(const char *s, size_t n);
int ddb_jr_open(ddb_jreader *r, const char *text, size_t n);
int ddb_jr_next(ddb_jreader *r, ddb_jtok *name);
int ddb_jr_value(ddb_jreader *r);
int ddb_jr_object(ddb_jreader *r);
int ddb_jr_array(ddb_jreader *r);
int ddb_jr_element(ddb_jreader *r);

/* Decode the AttributeValue map at token obj of tape t over text (an item
** object {"attr": {"S": "..."}, ...}).  On success *out is a new item with
** one reference. */
ddb_result ddb_item_from_tape(const char *text, const ddb_tape *t,
                              uint32_t obj, ddb_item **out, ddb_error *err);
/* The same from the text of one JSON object. */
ddb_result ddb_item_parse(const char *text, size_t n, ddb_item **out,
                          ddb_error *err);

/* The largest request body built (an item is at most 400 KB; 25 or 100
** of them stay far below). */
#define DDB_REQUEST_MAX (32u * 1024 * 1024)

/* POST body as DynamoDB operation `operation` (logged with table, index
** and continuation), with retries.  On success *out is the parsed
** response (cJSON_Delete). */
ddb_result ddb_call(ddb_client *c, const char *operation, const char *table,
                    const char *index, int continuation, const char *body,
                    size_t body_len, cJSON **out, ddb_error *err);
int ddb_client_max_retries(const ddb_client *c);

/* describe.c: one call of operation (DescribeTable, DescribeTimeToLive,
** streams.c's) whose body names table alone, {"TableName": table}: the
** parsed answer in *resp (cJSON_Delete), or the call's error. */
ddb_result ddb_table_call(ddb_client *c, const char *operation,
                          const char *table, cJSON **resp, ddb_error *err);
/* read.c's parse slots: as many as the online cores (at least 1).
** ddb_parse_enter takes one, waiting while every one is taken;
** ddb_parse_leave gives it back.  Around every Query/Scan page parse. */
void ddb_parse_enter(void);
void ddb_parse_leave(void);

/* The parsers of http.c's answers, on their own (for tests and fuzzing):
** a Query/Scan page from its text (operation names it in errors;
** count_only: Select=COUNT, no Items; *malformed is set when the text is
** no JSON at all, i.e. cut short or damaged), a DescribeTable answer, and
** an error body with its HTTP status (fills err: message, type,
** http_status). */
ddb_result ddb_page_parse(const char *body, size_t len, const char *operation,
                          int count_only, ddb_page **out, int *malformed,
                          ddb_error *err);
ddb_result ddb_table_desc_from_json(const cJSON *resp, const char *table,
                                    ddb_table_desc **out, ddb_error *err);
void ddb_error_from_response(const char *body, size_t len, int status,
                             ddb_error *err);
/* Does the LastEvaluatedKey of page pg (none: yes) keep the rules of
** read.c for the Query/Scan r: the key attributes of what r reads (from
** r->desc), a Query's partition, its sort key past r->start's in r's
** direction and within r's key condition?  DDB_OK, or DDB_ERR_PARSE with
** err naming the rule broken (ddb_read_page's check of every page). */
ddb_result ddb_lek_check(const ddb_read *r, const ddb_page *pg,
                         ddb_error *err);
/* Sleep a full-jitter backoff for retry number attempt (1, 2, ...), in
** slices, polling c's cancel hook.  Returns DDB_OK, or DDB_ERR_CANCELLED
** (err set: "interrupted: <operation> ...") when the hook said stop. */
ddb_result ddb_backoff(ddb_client *c, const char *operation, int attempt,
                       int throttled, ddb_error *err);
/* Has the cancel hook of this thread (or else c's) said stop? */
int ddb_cancelled(ddb_client *c);
/* Fill p[0..n) with random bytes from the kernel (getrandom). */
void ddb_random_bytes(void *p, size_t n);

/* ------------------------------------------------------------------------
** Credentials (creds.c)
*/
typedef enum ddb_cred_kind {
  DDB_CRED_STATIC = 0,   /* environment or shared files: never refreshed */
  DDB_CRED_PROCESS,      /* credential_process */
  DDB_CRED_CONTAINER,    /* ECS/EKS container credentials endpoint */
  DDB_CRED_IMDS,         /* EC2 instance metadata, IMDSv2 */
  DDB_CRED_ROLE,         /* STS AssumeRole, signed with inner's credentials */
  DDB_CRED_WEB_IDENTITY, /* STS AssumeRoleWithWebIdentity, a token file */
  DDB_CRED_SSO           /* IAM Identity Center's GetRoleCredentials */
} ddb_cred_kind;

typedef struct ddb_creds ddb_creds;
typedef struct ddb_profile ddb_profile;
typedef struct ddb_sso_source ddb_sso_source; /* creds_sso.c */

/* Where temporary credentials come from: enough to fetch them again. */
typedef struct ddb_cred_source {
  ddb_cred_kind kind;
  char *what;      /* for messages, e.g. "credential_process of profile 'x'" */
  char *command;   /* PROCESS: the command line */
  char *url;       /* CONTAINER: the full URL; IMDS: the endpoint; ROLE and
                      WEB_IDENTITY: the STS endpoint */
  char *auth;      /* CONTAINER: Authorization header value, or NULL */
  char *auth_file; /* CONTAINER: file to read it from on every fetch */
  /* ROLE and WEB_IDENTITY (creds_sts.c) */
  char *role_arn;
  char *session_name; /* the RoleSessionName sent */
  int session_drawn;  /* session_name is botocore's default,
                         botocore-session-<Unix time>, drawn once */
  char *external_id;  /* ROLE: ExternalId, or NULL */
  int duration;       /* DurationSeconds; 0: not sent (STS's 3600) */
  char *token_file;   /* WEB_IDENTITY: read again at every fetch */
  char *region;       /* ROLE: the region STS's requests are signed for */
  char *ca_bundle;    /* ROLE, WEB_IDENTITY, SSO: CA file, or NULL */
  struct ddb_cred_source *inner; /* ROLE: where the source credentials
                                    come from (malloc'ed, freed with this) */
  ddb_creds *held;     /* ROLE: the source credentials last fetched from inner
                      (static ones for good); malloc'ed */
  ddb_sso_source *sso; /* SSO: creds_sso.c's settings */
} ddb_cred_source;

/* What a chain needs beside the profile: the profile in use (whose
** settings name the services' endpoints), the client's region (STS's), its
** CA bundle (NULL: the system's), and the hook polled while a source runs
** (NULL: none). */
typedef struct ddb_cred_env {
  const ddb_profile *top;
  const char *region;
  const char *ca_bundle;
  ddb_cancel_fn stop;
  void *stop_ud;
} ddb_cred_env;

/* One set of credentials; every string malloc'ed, secrets wiped on
** ddb_creds_clear(). */
struct ddb_creds {
  char *access_key;
  char *secret_key;
  char *session_token; /* NULL if none */
  int64_t expires;     /* Unix time they expire; 0: never */
};

/* Walk the chain for the loaded profile prof (given: named by the
** profile= option, which skips the environment); env->stop is polled
** while a source runs.  On success *out holds the credentials, *src how
** to refresh them and *what (malloc'ed) where they came from
** ("environment", "profile 'x'", "assume-role ARN (profile 'r') via ...").
** On failure a DDB_ERR_CONFIG that lists what was tried, or the error of
** a configured source that failed (DDB_ERR_CANCELLED when stop said so). */
ddb_result ddb_creds_chain(const ddb_profile *prof, int given,
                           const ddb_cred_env *env, ddb_cred_source *src,
                           ddb_creds *out, char **what, ddb_error *err);
/* Fetch fresh credentials from src (any kind but STATIC) into *out
** (cleared first); stop (may be NULL) is polled while a source runs.  An
** AssumeRole or web identity source with the same settings (and source
** credentials) as one fetched before in this process gets that fetch's
** credentials while they are good for 16 minutes more, without a call to
** STS (creds_fetch.c).  Credentials that have already expired are an error naming src and
** their expiry.  Errors name the source, never a secret. */
ddb_result ddb_creds_fetch(const ddb_cred_source *src, ddb_cancel_fn stop,
                           void *stop_ud, ddb_creds *out, ddb_error *err);
/* t (Unix seconds) as ISO 8601 UTC into buf (cap >= 21) (creds_parse.c). */
void ddb_creds_time(int64_t t, char *buf, size_t cap);
/* creds_parse.c: parse the JSON of a credential_process (process=1:
** Version 1, SessionToken) or of a container/IMDS endpoint (process=0:
** Token, Code) into *out; what names the source in errors. */
ddb_result ddb_creds_from_json(const char *text, size_t n, int process,
                               const char *what, ddb_creds *out,
                               ddb_error *err);
/* Parse an ISO 8601 UTC time (2026-01-02T03:04:05[.fff](Z|+hh:mm)) into
** Unix seconds.  Returns 0, or -1 when s[0..n) is not one. */
int ddb_parse_iso8601(const char *s, size_t n, int64_t *out);
void ddb_creds_clear(ddb_creds *c);
void ddb_cred_source_free(ddb_cred_source *s);
/* Forget the credentials the process keeps for src (they were refused as
** expired): its next fetch calls STS (creds_fetch.c). */
void ddb_creds_memo_drop(const ddb_cred_source *src);

/* What the files of the chain share: the value of environment variable
** name, or NULL when unset or empty (profile.c); the most read from a
** credential_process or a metadata endpoint, and the stderr of a failing
** credential_process kept for the message. */
const char *ddb_env(const char *name);
#define DDB_CREDS_OUT_MAX (64 * 1024)
#define DDB_CREDS_ERR_MAX 4096
/* The sources' fetches, into *out (zeroed by ddb_creds_fetch); errors
** name src->what: a credential_process (creds_process.c), the container
** endpoint and instance metadata (creds_meta.c). */
ddb_result ddb_creds_process_fetch(const ddb_cred_source *src,
                                   ddb_cancel_fn stop, void *stop_ud,
                                   ddb_creds *out, ddb_error *err);
ddb_result ddb_creds_container_fetch(const ddb_cred_source *src,
                                     ddb_creds *out, ddb_error *err);
ddb_result ddb_creds_imds_fetch(const ddb_cred_source *src, ddb_creds *out,
                                ddb_error *err);
/* IAM Identity Center (creds_sso.c).  The profile's SSO settings (an
** sso_session profile, or the legacy form with sso_start_url in the
** profile): 1 with src filled (kind DDB_CRED_SSO, what, sso, ca_bundle
** from env) when prof is one, 0 when it is not, -1 on a bad or partial
** setting (err names the profile and the key). */
int ddb_creds_sso_source(const ddb_profile *prof, const ddb_cred_env *env,
                         ddb_cred_source *src, ddb_error *err);
/* Role credentials from the portal's GetRoleCredentials, with the token
** cached by `aws sso login` (refreshed through SSO OIDC when botocore
** would); errors name `aws sso login --profile NAME` where that is the fix,
** never a token. */
ddb_result ddb_creds_sso_fetch(const ddb_cred_source *src, ddb_cancel_fn stop,
                               void *stop_ud, ddb_creds *out, ddb_error *err);
void ddb_sso_source_free(ddb_sso_source *s);
/* What s's credentials depend on, for the process's memo (creds_fetch.c):
** up to 6 strings into p (owned by s, NULL for one not set).  Returns how
** many. */
int ddb_sso_source_parts(const ddb_sso_source *s, const char **p);
/* The role profiles (creds_profile.c).  prof sets role_arn (and no
** web_identity_token_file): fill src (kind ROLE) with the role, its STS
** endpoint and the source it assumes it from (source_profile, followed
** hop by hop, or credential_source), the source's credentials fetched
** into src->held.  visited lists the profiles already on the path (nv of
** them, at most DDB_ROLE_HOPS).  Returns 0, or -1 with err naming the
** profile and what is wrong. */
#define DDB_ROLE_HOPS 16
int ddb_creds_role_source(const ddb_profile *prof, const ddb_cred_env *env,
                          const char **visited, int nv, ddb_cred_source *src,
                          ddb_error *err);
/* Web identity: the token file and role of prof, or of the environment
** (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN, AWS_ROLE_SESSION_NAME, each
** over the profile's, unless no_env).  1 with src filled (kind
** WEB_IDENTITY), 0 when no token file is configured, -1 with err. */
int ddb_creds_web_identity_source(const ddb_profile *prof, int no_env,
                                  const ddb_cred_env *env,
                                  ddb_cred_source *src, ddb_error *err);
/* The credentials of prof's own settings, botocore's "profile providers"
** (creds_profile.c): web identity, IAM Identity Center, the credentials file's
** keys, credential_process, the config file's keys.  1 found (*out, *src,
** *what as ddb_creds_chain sets them), 0 none, -1 err. */
int ddb_creds_profile_steps(const ddb_profile *prof, int no_env,
                            const ddb_cred_env *env, ddb_cred_source *src,
                            ddb_creds *out, char **what, ddb_error *err);
/* The environment's keys (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
** AWS_SESSION_TOKEN) into *out: 1 found, 0 not (creds_profile.c). */
int ddb_creds_env_keys(ddb_creds *out);
/* STS (creds_sts.c): AssumeRole signed with the source credentials signer
** (creds_fetch.c keeps them), and
** AssumeRoleWithWebIdentity with the token read from src->token_file at
** each call.  Errors name the role and STS's code and message. */
ddb_result ddb_creds_role_fetch(const ddb_cred_source *src,
                                const ddb_creds *signer, ddb_cancel_fn stop,
                                void *stop_ud, ddb_creds *out, ddb_error *err);
ddb_result ddb_creds_web_identity_fetch(const ddb_cred_source *src,
                                        ddb_cancel_fn stop, void *stop_ud,
                                        ddb_creds *out, ddb_error *err);
/* Look for the container endpoint in the environment: fills src and
** returns 1 when one is configured, 0 when not, -1 on a bad setting (err
** set) (creds_meta.c). */
int ddb_creds_container_source(ddb_cred_source *src, ddb_error *err);
/* The instance metadata endpoint (malloc'ed), without a trailing '/'
** (creds_meta.c). */
char *ddb_creds_imds_endpoint(void);

/* One request of a credential source to an AWS service (STS, the SSO
** portal, SSO OIDC) (creds_http.c). */
typedef struct ddb_creds_req {
  const char *what;   /* names the call in errors, e.g. "STS AssumeRole" */
  const char *method; /* "GET" or "POST" */
  const char *url;
  const char *const *headers; /* "Name: value" lines, NULL-terminated, or
                                 NULL; copies are wiped when freed */
  const char *body;           /* POST: the body (NULL: empty) */
  size_t body_len;
  const char *ca_bundle; /* CA file, or NULL: the system's */
  ddb_cancel_fn stop;    /* polled while it runs, or NULL */
  void *stop_ud;
} ddb_creds_req;
/* Send req: 10 s to connect, 30 s a whole attempt, no redirects, up to 3
** attempts (100 ms, then 400 ms apart) while the connection fails or the
** answer is a 5xx or 429.  out gets the last answer's body (at most
** DDB_CREDS_OUT_MAX bytes), *status its HTTP status.  Errors (the
** connection, an answer too large, DDB_ERR_CANCELLED when stop said so)
** name req->what and the URL, never a header or the body. */
ddb_result ddb_creds_http(const ddb_creds_req *req, ddb_buf *out, long *status,
                          ddb_error *err);
/* The endpoint configured for service (its key in a services section:
** "dynamodb", "sts", "sso", "sso_oidc") as botocore looks for one:
** AWS_ENDPOINT_URL_<env_suffix>, AWS_ENDPOINT_URL, the service's entry of
** the profile's services section, the profile's endpoint_url; none when
** AWS_IGNORE_CONFIGURED_ENDPOINT_URLS or the profile's
** ignore_configured_endpoint_urls is true.  Returns the value (owned by
** the environment, or *conf malloc'ed when from the profile) and sets
** *what to where it came from (" (AWS_ENDPOINT_URL_STS)", written into
** whatbuf); NULL when none (endpoint.c). */
const char *ddb_configured_endpoint(const ddb_profile *prof,
                                    const char *service,
                                    const char *env_suffix, char **conf,
                                    const char **what, char *whatbuf,
                                    size_t whatcap);
/* The endpoint of an AWS service a credential source calls, as botocore
** resolves a configured endpoint: AWS_ENDPOINT_URL_<env_suffix>,
** AWS_ENDPOINT_URL, the `service` entry of the profile's services section,
** the profile's endpoint_url (none of them when
** AWS_IGNORE_CONFIGURED_ENDPOINT_URLS or the profile's
** ignore_configured_endpoint_urls is true), else dflt.  Checked as the
** DynamoDB endpoint is (ddb_endpoint_parse).  Returns it malloc'ed, without
** trailing slashes, or NULL with err set (endpoint.c). */
char *ddb_service_endpoint(const ddb_profile *prof, const char *service,
                           const char *env_suffix, const char *dflt,
                           ddb_error *err);

/* ------------------------------------------------------------------------
** The cache's names for a client (config.c, scope.c; see
** ddb_client_scope in ddb_client.h).  Both are DDB_SCOPE_ID_LEN bytes of
** HMAC-SHA256 under a key drawn at random once per process, over the
** length-prefixed parts they name (and a letter, so a place never equals
** a principal): 128 bits, so two different inputs give one id with
** probability 2^-128 (never, in practice); the inputs cannot be recovered
** from an id, nor ids compared across processes.
*/
#define DDB_SCOPE_ID_LEN 16

/* HMAC of letter and the parts p[i][0..n[i]) (each length-prefixed) into
** out (DDB_SCOPE_ID_LEN bytes).  Returns 0, or -1 when libcrypto fails. */
int ddb_scope_hash(char letter, const char *const *p, const size_t *n,
                   int n_parts, unsigned char *out);

/* One principal: the id of the access key id, secret key and session
** token.  A client keeps every principal it had (newest first) until it
** is freed, so a pointer handed out stays valid across credential
** refreshes. */
typedef struct ddb_principal {
  struct ddb_principal *next;
  unsigned char id[DDB_SCOPE_ID_LEN];
  unsigned char tier[DDB_TIER_KEY_LEN]; /* ddb_tier_root (set by
                                           ddb_principal_push) */
} ddb_principal;

/* A new principal (malloc'ed, next NULL) for these credentials (token may
** be NULL), or NULL on out of memory. */
ddb_principal *ddb_principal_new(const char *access_key,
                                 const char *secret_key, const char *token);
/* The id of a client's place, its canonical endpoint (ddb_endpoint's
** canonical) and its region, in out (DDB_SCOPE_ID_LEN bytes).  Returns 0,
** or -1 when libcrypto fails. */
int ddb_place_id(const char *canonical, const char *region,
                 unsigned char *out);
/* The shared tier's root key of the credentials (ak, sk, token) at the
** place (the canonical endpoint, as ddb_place_id takes it, and region), in
** out (DDB_TIER_KEY_LEN bytes): the same in every process, unlike the ids
** above, and derived from the secret (see ddb_client_tier_key).  Returns
** 0, or -1 when a buffer or libcrypto fails. */
int ddb_tier_root(const char *canonical, const char *region, const char *ak,
                  const char *sk, const char *token, unsigned char *out);

/* ------------------------------------------------------------------------
** Resolved settings of a client (config.c)
*/

/* The endpoint URL as libcurl's URL API parsed it, once (endpoint.c): every
** use of the endpoint takes its part from here, so the host curl connects
** to, the Host header that is signed and the cache's place are one.  All
** malloc'ed. */
typedef struct ddb_endpoint {
  char *url;       /* what curl is given: the URL as the parse renders it,
                      its path + "/" (DynamoDB is POSTed to "/") */
  char *host;      /* the Host header's value, signed: the host in lower
                      case, ":port" unless the scheme's default */
  char *sign_path; /* the canonical URI of url's path (ddb_sigv4_uri_encode) */
  char *canonical; /* the cache's place: the scheme, the host without a
                      trailing dot (localhost as 127.0.0.1), the port
                      unless the scheme's default, the path without
                      trailing slashes: every spelling of one server's
                      URL gives one */
} ddb_endpoint;

/* Parse endpoint text (what names where it came from, for the message:
** "" or " (AWS_ENDPOINT_URL)", ...) into *out (ddb_endpoint_free).  The
** rules are at the top of endpoint.c's parse part: http or https, no
** user name or password, no query or fragment, no IPv6 zone id, an ASCII
** host, what libcurl accepts.  On error *out is empty and err names what
** is wrong (DDB_ERR_CONFIG, DDB_ERR_NOMEM). */
ddb_result ddb_endpoint_parse(const char *text, const char *what,
                              ddb_endpoint *out, ddb_error *err);
void ddb_endpoint_free(ddb_endpoint *ep);

typedef struct ddb_settings {
  char *region;
  char *endpoint;  /* as configured, without trailing slashes: messages */
  ddb_endpoint ep; /* the endpoint, parsed */
  ddb_endpoint streams_ep; /* DynamoDB Streams' endpoint (streams.c) */
  char *ca_bundle; /* CA file to trust instead of the system's, or NULL */
  char *access_key;
  char *secret_key;
  char *session_token; /* NULL if none */
  char *cred_source;   /* where the credentials came from, for messages */
  int64_t expires;     /* when they expire (Unix time); 0: never */
  int64_t fetched;     /* when they were fetched (Unix time) */
  ddb_cred_source src; /* how to fetch them again */
} ddb_settings;

ddb_result ddb_settings_resolve(const ddb_config *cfg, ddb_settings *s,
                                ddb_error *err);
void ddb_settings_free(ddb_settings *s);

/* profile.c: the shared config and credentials files, read as botocore
** reads them (a leaf; see the top of profile.c). */
typedef struct ddb_ini ddb_ini;
struct ddb_ini_sec;
/* Read and parse the INI file at path (NULL, missing or not a regular
** file: no sections) into *out (free with ddb_ini_free).  Errors (a file
** botocore cannot read either, or larger than 4 MiB) name what and the
** line; nothing of the file is quoted. */
ddb_result ddb_ini_load(const char *path, const char *what, ddb_ini **out,
                        ddb_error *err);
void ddb_ini_free(ddb_ini *f);
/* key (lower-case) of [section] in f, else of its [DEFAULT]; owned by f,
** or NULL. */
const char *ddb_ini_value(const ddb_ini *f, const char *section,
                          const char *key);
/* The same from the file at path, malloc'ed (a file that does not parse
** has no keys): for tests. */
char *ddb_ini_get(const char *path, const char *section, const char *key);
/* The sub-property sub of key (its indented "sub = value" lines). */
char *ddb_ini_get_sub(const char *path, const char *section, const char *key,
                      const char *sub);
/* Path of an AWS file: the variable's value, else ~/.aws/<name> (malloc'ed;
** NULL without HOME). */
char *ddb_aws_file(const char *var, const char *name);

/* A profile: both files, parsed, and its sections in each. */
struct ddb_profile {
  char *name;
  char *config_path, *creds_path; /* NULL without HOME */
  ddb_ini *config, *creds;
  const struct ddb_ini_sec
      *in_config;                     /* [profile NAME] / [default], or NULL */
  const struct ddb_ini_sec *in_creds; /* [NAME], or NULL */
};
/* Load both files and find profile name in them.  named: the user named
** it (option or AWS_PROFILE), so it must exist (as in botocore), else the
** error names it and both files.  On error *p is empty. */
ddb_result ddb_profile_load(const char *name, int named, ddb_profile *p,
                            ddb_error *err);
void ddb_profile_free(ddb_profile *p);
/* A setting of the profile (the credentials file's over the config
** file's, as botocore merges them); owned by p, or NULL. */
const char *ddb_profile_value(const ddb_profile *p, const char *key);
/* The profile's keys, all from one file (creds_file: the credentials
** file, else the config file): 1 found (*ak, *sk, *tok owned by p; *tok
** NULL without a token), 0 no aws_access_key_id there, -1 an unusable
** set (no or an empty secret, an empty key id: err names the file). */
int ddb_profile_keys(const ddb_profile *p, int creds_file, const char **ak,
                     const char **sk, const char **tok, ddb_error *err);
/* Sub-property sub of key in the config file's [services NAME]
** (malloc'ed), or NULL. */
char *ddb_profile_service(const ddb_profile *p, const char *services,
                          const char *key, const char *sub);
/* The i-th key (from 0) of the config file's [sso-session NAME] (the last
** section of that name), its own keys in file order, then the [DEFAULT]
** keys it does not have: 1 with *key and *value (owned by p), 0 past the
** last, -1 when the file has no such section. */
int ddb_profile_sso_key(const ddb_profile *p, const char *session, int i,
                        const char **key, const char **value);

#endif
