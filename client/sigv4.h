/*
** sigv4.h -- SHA-256 and HMAC-SHA256 (sha256.c), for the files of client/
** only (and the unit tests).
*/
#ifndef DDB_SIGV4_H
#define DDB_SIGV4_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* ------------------------------------------------------------------------
** SHA-256 and HMAC-SHA256 (sha256.c)
*/
#define DDB_SHA256_LEN 32

/* A SHA-256 in progress.  Plain data: may be copied. */
typedef struct ddb_sha256_ctx {
  uint32_t h[8];           /* the state */
  uint64_t bytes;          /* bytes hashed so far */
  unsigned char block[64]; /* a partial block */
  size_t used;             /* bytes in block */
} ddb_sha256_ctx;

/* An HMAC-SHA256 in progress: the inner and outer hashes, each after its
** key block.  Copy a prepared one to sign several messages with one key.
** Secret: wipe with ddb_wipe when done (final does). */
typedef struct ddb_hmac_sha256_ctx {
  ddb_sha256_ctx inner, outer;
} ddb_hmac_sha256_ctx;

void ddb_sha256_init(ddb_sha256_ctx *s);
void ddb_sha256_update(ddb_sha256_ctx *s, const void *p, size_t n);
void ddb_sha256_final(ddb_sha256_ctx *s, unsigned char out[DDB_SHA256_LEN]);
void ddb_sha256(const void *p, size_t n, unsigned char out[DDB_SHA256_LEN]);
void ddb_hmac_sha256_init(ddb_hmac_sha256_ctx *m, const void *key,
                          size_t klen);
void ddb_hmac_sha256_update(ddb_hmac_sha256_ctx *m, const void *p, size_t n);
void ddb_hmac_sha256_final(ddb_hmac_sha256_ctx *m,
                           unsigned char out[DDB_SHA256_LEN]);
void ddb_hmac_sha256(const void *key, size_t klen, const void *p, size_t n,
                     unsigned char out[DDB_SHA256_LEN]);
/* Lower-case hex of p[0..n) in out: 2n characters and a NUL. */
void ddb_hex(const unsigned char *p, size_t n, char *out);
/* Zero p[0..n) in a way the compiler cannot drop (for secrets). */
void ddb_wipe(void *p, size_t n);

#endif
