/*
** crypto.c -- the primitives the client takes from libraries: SHA-256
** from libcrypto (OpenSSL 3, already in the process through libcurl),
** HMAC-SHA256 over it (RFC 2104), CRC-32 from zlib (loaded by libcurl
** too; folded with PCLMULQDQ where the CPU has it, below), and the small
** helpers around them (hex, wiping).  Declared in
** ddb_client.h, so that cache/ can use the same MAC.
**
** SHA-256 is libcrypto's SHA256_Init/Update/Final on a SHA256_CTX, not
** the EVP layer: the same compression function (libcrypto's assembly,
** with its own CPUID dispatch: the SHA extensions when the CPU has them,
** AVX2/SSSE3 code otherwise) without a context allocated from the heap,
** a provider's dispatch and OSSL_PARAM parsing around every call.  The
** EVP route (EVP_MD_CTX_new, EVP_MAC_CTX_dup, EVP_MAC_init, ...) cost a
** GetItem's signature about 11,000 instructions of its 30,000 (callgrind,
** bench/request_instr.sh).  These functions are deprecated in OpenSSL 3
** (OPENSSL_SUPPRESS_DEPRECATED below) but present in every build that
** does not drop the 3.0 API (Debian's does not).
**
** HMAC-SHA256 (RFC 2104): a ddb_hmac_ctx holds the inner and outer
** SHA-256 states already past the key block (key XOR ipad, key XOR opad),
** so that ddb_hmac_dup (a copy of 2 x 112 bytes) prepares the MAC of a
** message with a key keyed once: SigV4's signing key, kept per client
** (sigv4.c).  Every context, key block and intermediate digest is wiped
** (OPENSSL_cleanse) when freed or done with.  Checked against RFC 4231's
** vectors and FIPS 180's (tests/unit/test_crypto.c).
*/
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ddb_client.h"

/* ------------------------------------------------------------------------
** SHA-256
*/

struct ddb_sha256_ctx {
  SHA256_CTX c;
};

/* See ddb_client.h. */
int ddb_sha256(const void *p, size_t n, unsigned char out[DDB_SHA256_LEN]) {
  SHA256_CTX c;
  int ok = SHA256_Init(&c) && SHA256_Update(&c, n ? p : "", n) &&
           SHA256_Final(out, &c);
  OPENSSL_cleanse(&c, sizeof(c));
  return ok ? 0 : -1;
}

/* See ddb_client.h. */
ddb_sha256_ctx *ddb_sha256_new(void) {
  ddb_sha256_ctx *h = malloc(sizeof(*h));
  if(h && !SHA256_Init(&h->c)) {
    free(h);
    h = NULL;
  }
  return h;
}

/* See ddb_client.h. */
int ddb_sha256_update(ddb_sha256_ctx *h, const void *p, size_t n) {
  if(!n)
    return 0;
  return SHA256_Update(&h->c, p, n) ? 0 : -1;
}

/* See ddb_client.h. */
int ddb_sha256_final(ddb_sha256_ctx *h, unsigned char out[DDB_SHA256_LEN]) {
  return SHA256_Final(out, &h->c) ? 0 : -1;
}

/* See ddb_client.h. */
void ddb_sha256_copy(ddb_sha256_ctx *dst, const ddb_sha256_ctx *src) {
  memcpy(dst, src, sizeof(*dst));
}

/* See ddb_client.h. */
void ddb_sha256_free(ddb_sha256_ctx *h) {
  if(h) {
    OPENSSL_cleanse(h, sizeof(*h));
    free(h);
  }
}

/* ------------------------------------------------------------------------
** HMAC-SHA256
*/

#define HMAC_BLOCK 64 /* SHA-256's block */

struct ddb_hmac_ctx {
  SHA256_CTX inner; /* past key ^ ipad, then the message */
  SHA256_CTX outer; /* past key ^ opad */
};

/* See ddb_client.h. */
ddb_hmac_ctx *ddb_hmac_new(const void *key, size_t klen) {
  unsigned char k[HMAC_BLOCK], pad[HMAC_BLOCK];
  ddb_hmac_ctx *m = malloc(sizeof(*m));
  int ok, i;
  if(!m)
    return NULL;
  memset(k, 0, sizeof(k));
  if(klen > HMAC_BLOCK) /* a long key is its digest */
    ok = ddb_sha256(key, klen, k) == 0;
  else {
    if(klen)
      memcpy(k, key, klen);
    ok = 1;
  }
  for(i = 0; i < HMAC_BLOCK; i++)
    pad[i] = (unsigned char)(k[i] ^ 0x36);
  ok = ok && SHA256_Init(&m->inner) &&
       SHA256_Update(&m->inner, pad, HMAC_BLOCK);
  for(i = 0; i < HMAC_BLOCK; i++)
    pad[i] = (unsigned char)(k[i] ^ 0x5c);
  ok = ok && SHA256_Init(&m->outer) &&
       SHA256_Update(&m->outer, pad, HMAC_BLOCK);
  OPENSSL_cleanse(k, sizeof(k));
  OPENSSL_cleanse(pad, sizeof(pad));
  if(!ok) {
    ddb_hmac_free(m);
    return NULL;
  }
  return m;
}

/* See ddb_client.h. */
ddb_hmac_ctx *ddb_hmac_dup(const ddb_hmac_ctx *m) {
  ddb_hmac_ctx *d = malloc(sizeof(*d));
  if(d)
    memcpy(d, m, sizeof(*d));
  return d;
}

/* See ddb_client.h. */
int ddb_hmac_update(ddb_hmac_ctx *m, const void *p, size_t n) {
  if(!n)
    return 0;
  return SHA256_Update(&m->inner, p, n) ? 0 : -1;
}

/* See ddb_client.h. */
int ddb_hmac_final(ddb_hmac_ctx *m, unsigned char out[DDB_SHA256_LEN]) {
  unsigned char d[DDB_SHA256_LEN];
  int ok = SHA256_Final(d, &m->inner) &&
           SHA256_Update(&m->outer, d, sizeof(d)) &&
           SHA256_Final(out, &m->outer);
  OPENSSL_cleanse(d, sizeof(d));
  return ok ? 0 : -1;
}

/* See ddb_client.h. */
void ddb_hmac_free(ddb_hmac_ctx *m) {
  if(m) {
    OPENSSL_cleanse(m, sizeof(*m));
    free(m);
  }
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
** buffers go to zlib.  tests/unit/test_crypto.c checks it against zlib on
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

/* The two hex digits of every byte value, in order (ddb_hex: one copy a
** byte, three digests a request). */
#define HEX16(h)                                                              \
  h "0" h "1" h "2" h "3" h "4" h "5" h "6" h "7" h "8" h "9" h "a" h "b" h   \
    "c" h "d" h "e" h "f"
static const char hex_pairs[] = HEX16("0") HEX16("1") HEX16("2") HEX16("3")
    HEX16("4") HEX16("5") HEX16("6") HEX16("7") HEX16("8") HEX16("9")
        HEX16("a") HEX16("b") HEX16("c") HEX16("d") HEX16("e") HEX16("f");

/* See ddb_client.h.  16 bytes at a time with SSE2: each byte's nibbles
** side by side (high first), '0' added, and 'a' - '0' - 10 more to those
** above 9; the rest a byte at a time from hex_pairs. */
void ddb_hex(const unsigned char *p, size_t n, char *out) {
  size_t i = 0;
#ifdef __SSE2__
  const __m128i nib = _mm_set1_epi8(0x0f), nine = _mm_set1_epi8(9),
                zero = _mm_set1_epi8('0'), gap = _mm_set1_epi8('a' - '0' - 10);
  for(; i + 16 <= n; i += 16) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
    __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), nib);
    __m128i lo = _mm_and_si128(x, nib);
    __m128i a = _mm_unpacklo_epi8(hi, lo), b = _mm_unpackhi_epi8(hi, lo);
    a = _mm_add_epi8(_mm_add_epi8(a, zero),
                     _mm_and_si128(_mm_cmpgt_epi8(a, nine), gap));
    b = _mm_add_epi8(_mm_add_epi8(b, zero),
                     _mm_and_si128(_mm_cmpgt_epi8(b, nine), gap));
    _mm_storeu_si128((__m128i *)(void *)(out + 2 * i), a);
    _mm_storeu_si128((__m128i *)(void *)(out + 2 * i + 16), b);
  }
#endif
  for(; i < n; i++)
    memcpy(out + 2 * i, hex_pairs + 2 * p[i], 2);
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
