/*
** ddb_crypto.h -- the primitives from libraries (crypto.c): SHA-256 of
** libcrypto and HMAC-SHA256 over it, the CRC-32 of zlib, hex, and wiping
** secrets.
**
** Part of the client layer's one public header: ddb_client.h includes it,
** so a file that includes ddb_client.h has all of it.  Needs nothing of
** the rest of the client.
*/
#ifndef DDB_CRYPTO_H
#define DDB_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
** Hashes and MACs (crypto.c): SHA-256 from libcrypto, HMAC-SHA256 over it,
** CRC-32 from zlib.  For SigV4 (sigv4.c), the cache's ids (scope.c), the
** x-amz-crc32 check (http.c), and any layer above that needs a MAC.
** Contexts are opaque; every function that can fail returns 0, or -1
** when libcrypto fails (out of memory), and the NULL-returning ones NULL.
** A context is wiped when it is freed (a key stays secret).
*/
#define DDB_SHA256_LEN 32

typedef struct ddb_sha256_ctx ddb_sha256_ctx; /* a SHA-256 in progress */
typedef struct ddb_hmac_ctx ddb_hmac_ctx;     /* an HMAC-SHA256 with its key */

/* The SHA-256 of p[0..n) (p may be NULL when n is 0) in out. */
int ddb_sha256(const void *p, size_t n, unsigned char out[DDB_SHA256_LEN]);
/* A SHA-256 in pieces: new, any number of updates, final (once), free
** (NULL is fine). */
ddb_sha256_ctx *ddb_sha256_new(void);
int ddb_sha256_update(ddb_sha256_ctx *h, const void *p, size_t n);
int ddb_sha256_final(ddb_sha256_ctx *h, unsigned char out[DDB_SHA256_LEN]);
void ddb_sha256_free(ddb_sha256_ctx *h);
/* Make dst (from ddb_sha256_new) a copy of src: the same bytes hashed so
** far, so that a common prefix is hashed once. */
void ddb_sha256_copy(ddb_sha256_ctx *dst, const ddb_sha256_ctx *src);

/* HMAC-SHA256 of p[0..n) with key[0..klen), in one call. */
int ddb_hmac_sha256(const void *key, size_t klen, const void *p, size_t n,
                    unsigned char out[DDB_SHA256_LEN]);
/* An HMAC keyed with key[0..klen) (not kept: the key block is hashed
** now); ddb_hmac_dup copies one, key included, so that a key prepared
** once MACs any number of messages (dup, update, final, free); final
** once; free (NULL is fine) cleanses it. */
ddb_hmac_ctx *ddb_hmac_new(const void *key, size_t klen);
ddb_hmac_ctx *ddb_hmac_dup(const ddb_hmac_ctx *m);
int ddb_hmac_update(ddb_hmac_ctx *m, const void *p, size_t n);
int ddb_hmac_final(ddb_hmac_ctx *m, unsigned char out[DDB_SHA256_LEN]);
void ddb_hmac_free(ddb_hmac_ctx *m);

/* CRC-32 (IEEE 802.3, zlib's, as x-amz-crc32 carries it) of p[0..n),
** continuing from crc (0 to start; p may be NULL when n is 0). */
uint32_t ddb_crc32(uint32_t crc, const void *p, size_t n);
/* Lower-case hex of p[0..n) in out: 2n characters and a NUL. */
void ddb_hex(const unsigned char *p, size_t n, char *out);
/* The value of hex digit c (either case), or -1. */
int ddb_hexval(int c);
/* Zero p[0..n) in a way the compiler cannot drop (for secrets). */
void ddb_wipe(void *p, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* DDB_CRYPTO_H */
