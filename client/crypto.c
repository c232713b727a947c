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

/* CRC-32 of a whole page body (x-amz-crc32) was 7% of decoding a Scan
** page with zlib's crc32_z (about 4 instructions a byte).  On x86-64 with
** PCLMULQDQ (every x86-64 CPU since 2010) the body is folded 64 bytes at
** a time by carry-less multiplication instead: Intel's "Fast CRC
** Computation for Generic Polynomials Using PCLMULQDQ Instruction"
** (2009), with the constants of the bit-reflected CRC-32 polynomial
** 0x04C11DB7 that the Linux kernel's crc32-pclmul_asm.S uses, about 0.2
** instructions a byte.  The tail past the last 16 bytes and short
** buffers go to zlib.  tests/unit/test_tape.c checks it against zlib on
** every length from 0 to 600 and every alignment. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* The CRC-32 state crc (bit-reflected, not inverted) advanced over
** p[0..n), n >= 64 and a multiple of 16. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t
crc32_fold(uint32_t crc, const unsigned char *p, size_t n) {
  /* x^(k) mod P(x) for the folding distances (512+64, 512, 128+64, 128),
  ** the last fold to 32 bits, and Barrett's mu and P(x) */
  const __m128i k1k2 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4);
  const __m128i k3k4 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);
  const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124);
  const __m128i poly = _mm_set_epi64x(0x1f7011641, 0x1db710641);
  const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
  __m128i x1, x2, x3, x4, t;
  x1 = _mm_loadu_si128((const __m128i *)(const void *)p);
  x2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
  x3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));
  x4 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48));
  x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
  p += 64;
  n -= 64;
#define CRC_FOLD(x, k, next)                                                  \
  do {                                                                        \
    t = _mm_clmulepi64_si128(x, k, 0x00);                                     \
    x = _mm_clmulepi64_si128(x, k, 0x11);                                     \
    x = _mm_xor_si128(_mm_xor_si128(x, t), next);                             \
  } while(0)
#define CRC_LOAD(q) _mm_loadu_si128((const __m128i *)(const void *)(q))
  for(; n >= 64; p += 64, n -= 64) { /* four lanes, 64 bytes a turn */
    CRC_FOLD(x1, k1k2, CRC_LOAD(p));
    CRC_FOLD(x2, k1k2, CRC_LOAD(p + 16));
    CRC_FOLD(x3, k1k2, CRC_LOAD(p + 32));
    CRC_FOLD(x4, k1k2, CRC_LOAD(p + 48));
  }
  /* the four lanes into one, then 16 bytes a turn */
  CRC_FOLD(x1, k3k4, x2);
  CRC_FOLD(x1, k3k4, x3);
  CRC_FOLD(x1, k3k4, x4);
  for(; n >= 16; p += 16, n -= 16)
    CRC_FOLD(x1, k3k4, CRC_LOAD(p));
#undef CRC_FOLD
#undef CRC_LOAD
  /* 128 bits to 64, then to 32 */
  t = _mm_clmulepi64_si128(x1, k3k4, 0x10);
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), t);
  t = _mm_srli_si128(x1, 4);
  x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5, 0x00);
  x1 = _mm_xor_si128(x1, t);
  /* Barrett reduction to the 32-bit remainder */
  t = x1;
  x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x10);
  x1 = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x00);
  x1 = _mm_xor_si128(x1, t);
  return (uint32_t)_mm_extract_epi32(x1, 1);
}

/* Has the CPU PCLMULQDQ and SSE4.1?  Asked once. */
static int crc_has_pclmul(void) {
  static int has = -1; /* -1: not asked yet (a benign race: same answer) */
  int h = __atomic_load_n(&has, __ATOMIC_RELAXED);
  if(h < 0) {
    __builtin_cpu_init();
    h = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
    __atomic_store_n(&has, h, __ATOMIC_RELAXED);
  }
  return h;
}
#endif

/* See ddb_client.h.  zlib's crc32_z takes a size_t length; it returns 0
** for a NULL buffer whatever crc was, hence the test.  The folded part
** works on the state zlib keeps (the CRC inverted). */
uint32_t ddb_crc32(uint32_t crc, const void *p, size_t n) {
  if(!n)
    return crc;
#if defined(__x86_64__) && defined(__GNUC__)
  if(n >= 64 && crc_has_pclmul()) {
    size_t m = n & ~(size_t)15;
    crc = ~crc32_fold(~crc, p, m);
    p = (const unsigned char *)p + m;
    n -= m;
    if(!n)
      return crc;
  }
#endif
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
