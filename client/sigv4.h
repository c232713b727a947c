/*
** sigv4.h -- AWS Signature Version 4 (sigv4.c), for the files of client/
** only (and the unit tests).  Its SHA-256 and HMAC-SHA256 are libcrypto's
** (crypto.c, declared in ddb_crypto.h).
**
** A ddb_sigv4 holds one set of credentials and the signing key derived
** from them for the last date, region and service signed for; it is
** shared by threads.  ddb_sigv4_sign_json() signs a DynamoDB request
** (a JSON POST); ddb_sigv4_sign() is the general form (any method, path,
** query and headers), for AWS's published test vectors.
*/
#ifndef DDB_SIGV4_H
#define DDB_SIGV4_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ddb_client.h"

/* ------------------------------------------------------------------------
** SigV4 (sigv4.c)
*/
/* Room for an Authorization value (the longest access key id is 128
** characters, regions and services are short), an X-Amz-Date value
** (YYYYMMDDTHHMMSSZ and a NUL), a Host value and a canonical path. */
#define DDB_SIGV4_AUTH_MAX 640
#define DDB_SIGV4_DATE_LEN 17
#define DDB_SIGV4_HOST_MAX 300
#define DDB_SIGV4_PATH_MAX 1024
/* What the signing functions return when libcrypto fails (out of
** memory), beside 0 and -1. */
#define DDB_SIGV4_NOMEM (-2)
/* At most this many headers for ddb_sigv4_sign(). */
#define DDB_SIGV4_HEADERS_MAX 32

typedef struct ddb_sigv4 ddb_sigv4;

/* One header for ddb_sigv4_sign(): a name (any case) and a value (trimmed
** and its blank runs folded when signed). */
typedef struct ddb_sigv4_header {
  const char *name;
  const char *value;
} ddb_sigv4_header;

/* New credentials for signing: access key id, secret key and session
** token (NULL or "" when none; stored with its blank runs folded, as
** ddb_sigv4_token() returns it).  NULL on out of memory.  Free with
** ddb_sigv4_free, which wipes the secret and the derived keys. */
ddb_sigv4 *ddb_sigv4_new(const char *access_key, const char *secret_key,
                         const char *token);
void ddb_sigv4_free(ddb_sigv4 *s);
/* The session token of s, or NULL (owned by s). */
const char *ddb_sigv4_token(const ddb_sigv4 *s);
/* How many times s derived a signing key (for tests of the cache). */
unsigned long ddb_sigv4_derivations(ddb_sigv4 *s);
/* fork() (client.c's handlers, DDB_LIVE_CLIENT): take s's signing-key
** cache's lock before the fork, release it after, in the parent and the
** child, so a child never finds it held by a thread it does not have. */
void ddb_sigv4_fork_lock(ddb_sigv4 *s);
void ddb_sigv4_fork_unlock(ddb_sigv4 *s);

/* Write the X-Amz-Date of Unix time t (YYYYMMDDTHHMMSSZ, UTC) to out.
** Returns 0, or -1 when t is not in the years 0 to 9999.  Takes no lock
** (not even glibc's tzset_lock: see fork() in ddb_client.h). */
int ddb_sigv4_amz_date(time_t t, char out[DDB_SIGV4_DATE_LEN]);

/* The canonical URI of a request path as SigV4 wants it for every service
** but S3: each byte that is not one of RFC 3986's unreserved characters
** or '/' percent-encoded (upper-case hex), the path taken as it goes on
** the wire (so a "%41" there is signed as "%2541").  Writes it to
** out[0..cap).  Returns 0, or -1 when it does not fit. */
int ddb_sigv4_uri_encode(const char *path, char *out, size_t cap);

/* Sign a JSON POST with an empty query: the signed headers are
** content-type, host, x-amz-date, x-amz-security-token (when s has a
** token: ddb_sigv4_token(s)) and x-amz-target, with exactly these values,
** which must already be in canonical form (no blanks at either end, no
** runs of them, no line breaks).  path is the canonical URI; the payload
** hash is the SHA-256 of body[0..n), streamed.  Writes the Authorization
** value (AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...)
** to auth[0..cap).  Returns 0, -1 when it does not fit or region and
** service are too long, or DDB_SIGV4_NOMEM when libcrypto fails. */
int ddb_sigv4_sign_json(ddb_sigv4 *s, const char *region, const char *service,
                        const char *amz_date, const char *path,
                        const char *content_type, const char *host,
                        const char *target, const void *body, size_t n,
                        char *auth, size_t cap);

/* Sign any request: method, canonical URI path, canonical query string
** (already encoded and sorted; "" for none), the nh headers hdrs (names
** lower-cased, values trimmed with blank runs folded to one space, sorted
** by name, repeated names joined with commas in their order; host and
** x-amz-date must be among them, and x-amz-security-token when wanted:
** nothing is added) and the payload body[0..n).  Writes the Authorization
** value to auth[0..cap).  Returns 0, -1 when it does not fit, nh is
** above DDB_SIGV4_HEADERS_MAX or amz_date is not YYYYMMDDTHHMMSSZ, or
** DDB_SIGV4_NOMEM when libcrypto fails. */
int ddb_sigv4_sign(ddb_sigv4 *s, const char *region, const char *service,
                   const char *amz_date, const char *method, const char *path,
                   const char *query, const ddb_sigv4_header *hdrs, size_t nh,
                   const void *body, size_t n, char *auth, size_t cap);

#endif
