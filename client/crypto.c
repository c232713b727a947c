/*
** crypto.c -- the primitives the client takes from libraries: SHA-256 and
** HMAC-SHA256 from libcrypto (OpenSSL 3, already in the process through
** libcurl), CRC-32 from zlib (loaded by libcurl too), and the small
** helpers around them (hex, wiping).  Declared in ddb_client.h, so that
** cache/ can use the same MAC.
**
** SHA-256 is EVP_MD "SHA256" and HMAC is EVP_MAC "HMAC" with digest
** SHA256, both fetched once per process from the default library context
** (an implicit fetch, EVP_sha256() or EVP_MAC_init without a fetched MAC,
** looks the algorithm up again on every use).  A ddb_hmac_ctx is an
** EVP_MAC_CTX: keyed once by ddb_hmac_new (the key block hashed into the
** inner and outer digests), duplicated by ddb_hmac_dup for each message,
** which is what keeps SigV4's signing key prepared across requests
** (sigv4.c).  libcrypto cleanses what it frees of these contexts (the
** key, the digest states).
**
** On x86-64 libcrypto hashes with the SHA extensions when the CPU has them
** and with AVX2/SSSE3 code otherwise (its own CPUID dispatch): nothing of
** that is ours.
*/
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <pthread.h>
#include <string.h>
#include <zlib.h>

#include "ddb_client.h"

/* The algorithms, fetched once (NULL when the fetch failed: every call
** then fails). */
static EVP_MD *sha256_md;
static EVP_MAC *hmac_mac;
static pthread_once_t fetch_once = PTHREAD_ONCE_INIT;

/* Fetch SHA256 and HMAC from the default library context. */
static void fetch_algorithms(void) {
  sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
  hmac_mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
}

/* The fetched SHA-256, or NULL. */
static EVP_MD *md(void) {
  pthread_once(&fetch_once, fetch_algorithms);
  return sha256_md;
}

/* The fetched HMAC, or NULL. */
static EVP_MAC *mac(void) {
  pthread_once(&fetch_once, fetch_algorithms);
  return hmac_mac;
}

/* ------------------------------------------------------------------------
** SHA-256
*/

/* See ddb_client.h. */
int ddb_sha256(const void *p, size_t n, unsigned char out[DDB_SHA256_LEN]) {
  unsigned int len = 0;
  EVP_MD *m = md();
  if(!m || !EVP_Digest(n ? p : "", n, out, &len, m, NULL) ||
     len != DDB_SHA256_LEN)
    return -1;
  return 0;
}

/* See ddb_client.h. */
ddb_sha256_ctx *ddb_sha256_new(void) {
  EVP_MD *m = md();
  EVP_MD_CTX *c = m ? EVP_MD_CTX_new() : NULL;
  if(c && !EVP_DigestInit_ex2(c, m, NULL)) {
    EVP_MD_CTX_free(c);
    c = NULL;
  }
  return (ddb_sha256_ctx *)c;
}

/* See ddb_client.h. */
int ddb_sha256_update(ddb_sha256_ctx *h, const void *p, size_t n) {
  if(!n)
    return 0;
  return EVP_DigestUpdate((EVP_MD_CTX *)h, p, n) ? 0 : -1;
}

/* See ddb_client.h. */
int ddb_sha256_final(ddb_sha256_ctx *h, unsigned char out[DDB_SHA256_LEN]) {
  unsigned int len = 0;
  if(!EVP_DigestFinal_ex((EVP_MD_CTX *)h, out, &len) || len != DDB_SHA256_LEN)
    return -1;
  return 0;
}

/* See ddb_client.h. */
void ddb_sha256_free(ddb_sha256_ctx *h) {
  EVP_MD_CTX_free((EVP_MD_CTX *)h);
}

/* ------------------------------------------------------------------------
** HMAC-SHA256
*/

/* See ddb_client.h. */
ddb_hmac_ctx *ddb_hmac_new(const void *key, size_t klen) {
  static const unsigned char none[1] = {0};
  char digest[] = "SHA256";
  OSSL_PARAM params[2];
  EVP_MAC *m = mac();
  EVP_MAC_CTX *c = m ? EVP_MAC_CTX_new(m) : NULL;
  if(!c)
    return NULL;
  params[0] = OSSL_PARAM_construct_utf8_string("digest", digest, 0);
  params[1] = OSSL_PARAM_construct_end();
  /* a NULL key would mean "the key set before": "" is a key too */
  if(!EVP_MAC_init(c, klen ? key : none, klen, params)) {
    EVP_MAC_CTX_free(c);
    return NULL;
  }
  return (ddb_hmac_ctx *)c;
}

/* See ddb_client.h. */
ddb_hmac_ctx *ddb_hmac_dup(const ddb_hmac_ctx *m) {
  return (ddb_hmac_ctx *)EVP_MAC_CTX_dup((const EVP_MAC_CTX *)m);
}

/* See ddb_client.h. */
int ddb_hmac_update(ddb_hmac_ctx *m, const void *p, size_t n) {
  if(!n)
    return 0;
  return EVP_MAC_update((EVP_MAC_CTX *)m, p, n) ? 0 : -1;
}

/* See ddb_client.h. */
int ddb_hmac_final(ddb_hmac_ctx *m, unsigned char out[DDB_SHA256_LEN]) {
  size_t len = 0;
  if(!EVP_MAC_final((EVP_MAC_CTX *)m, out, &len, DDB_SHA256_LEN) ||
     len != DDB_SHA256_LEN)
    return -1;
  return 0;
}

/* See ddb_client.h. */
void ddb_hmac_free(ddb_hmac_ctx *m) {
  EVP_MAC_CTX_free((EVP_MAC_CTX *)m);
}

/* See ddb_client.h. */
int ddb_hmac_sha256(const void *key, size_t klen, const void *p, size_t n,
                    unsigned char out[DDB_SHA256_LEN]) {
  ddb_hmac_ctx *m = ddb_hmac_new(key, klen);
  int rc = -1;
  if(m && ddb_hmac_update(m, p, n) == 0 && ddb_hmac_final(m, out) == 0)
    rc = 0;
  ddb_hmac_free(m);
  return rc;
}

/* ------------------------------------------------------------------------
** CRC-32, hex, wiping
*/

/* See ddb_client.h.  zlib's crc32_z takes a size_t length; it returns 0
** for a NULL buffer whatever crc was, hence the test. */
uint32_t ddb_crc32(uint32_t crc, const void *p, size_t n) {
  if(!n)
    return crc;
  return (uint32_t)crc32_z(crc, p, n);
}

/* See ddb_client.h. */
void ddb_hex(const unsigned char *p, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  size_t i;
  for(i = 0; i < n; i++) {
    out[2 * i] = digits[p[i] >> 4];
    out[2 * i + 1] = digits[p[i] & 15];
  }
  out[2 * n] = 0;
}

/* See ddb_client.h. */
void ddb_wipe(void *p, size_t n) {
  if(p && n)
    OPENSSL_cleanse(p, n);
}

/* See ddb_client.h. */
int ddb_hexval(int c) {
  if(c >= '0' && c <= '9')
    return c - '0';
  if(c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if(c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}
