/*
** sha256.c -- SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for SigV4
** (sigv4.c).  No dependency.
**
** Streaming: ddb_sha256_update() may be called any number of times, on
** pieces of any size; whole 64-byte blocks are compressed straight from
** the caller's bytes, only a partial block is copied.  An HMAC context
** holds the inner and outer hashes after their key block, so that a key
** prepared once (ddb_hmac_sha256_init) signs any number of messages with
** two compressions fewer each: copy the context, update, final.
**
** Two block functions: compress_portable(), in C, and on x86-64 with GCC
** or clang compress_sha_ni(), with the CPU's SHA extensions (about 4.7
** times as fast on an AMD EPYC).  compress() chooses once, by CPUID, and
** hands the chosen one all the whole blocks of an update at once.
**
** Checked in tests/unit/test_sigv4.c against FIPS 180-2's examples ("abc",
** the 448-bit two-block message, a million 'a') and RFC 4231's HMAC cases,
** with each block function (ddb_sha256_force_portable), and the two
** against each other on 2,000 random messages.
*/
#include <string.h>

#include "sigv4.h"

/* The SHA extensions (SHA-NI) of x86-64, with GCC or clang: only the block
** function that uses them is compiled for them (a target attribute), and
** it runs only when CPUID says the CPU has them. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DDB_SHA256_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

/* The round constants: the first 32 bits of the fractional parts of the
** cube roots of the first 64 primes (FIPS 180-4, 4.2.2). */
static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROTR(x, n)   (((x) >> (n)) | ((x) << (32 - (n))))
#define CH(x, y, z)  ((z) ^ ((x) & ((y) ^ (z))))
#define MAJ(x, y, z) (((x) & (y)) | ((z) & ((x) | (y))))
/* The sigmas with nested rotations (ROTR(x ^ ROTR(x, 9), 11) is ROTR(x,
** 11) ^ ROTR(x, 20)): fewer instructions, a longer chain.  Not in BSIG1,
** which is on the critical path of e; its nested form measured slower. */
#define BSIG0(x) ROTR((x) ^ ROTR((x) ^ ROTR(x, 9), 11), 2)
#define BSIG1(x) (ROTR(x, 6) ^ ROTR(x, 11) ^ ROTR(x, 25))
#define SSIG0(x) (ROTR((x) ^ ROTR(x, 11), 7) ^ ((x) >> 3))
#define SSIG1(x) (ROTR((x) ^ ROTR(x, 2), 17) ^ ((x) >> 10))
#define LOAD32(p)                                                             \
  ((uint32_t)(p)[0] << 24 | (uint32_t)(p)[1] << 16 | (uint32_t)(p)[2] << 8 |  \
   (uint32_t)(p)[3])
/* One round, the eight working variables named in their order for the
** round: instead of moving them along, the next round names them shifted.
** kw is K[j] + W[j]. */
#define ROUND(a, b, c, d, e, f, g, h, kw)                                     \
  do {                                                                        \
    uint32_t t_ = (h) + BSIG1(e) + CH(e, f, g) + (kw);                        \
    (d) += t_;                                                                \
    (h) = t_ + BSIG0(a) + MAJ(a, b, c);                                       \
  } while(0)
/* Round j: rounds 0-15 take the message words; from 16 on, W[j] (FIPS
** 180-4, 6.2.2 step 1) is computed in w[j % 16], over W[j - 16], from
** W[j - 2], W[j - 7] and W[j - 15], which are in the same window of 16. */
#define R0(a, b, c, d, e, f, g, h, j)                                         \
  ROUND(a, b, c, d, e, f, g, h, K[j] + (w[j] = LOAD32(p + 4 * (j))))
#define R16(a, b, c, d, e, f, g, h, j)                                        \
  ROUND(a, b, c, d, e, f, g, h,                                               \
        K[j] + (w[(j) % 16] += SSIG1(w[((j) + 14) % 16]) +                    \
                               w[((j) + 9) % 16] + SSIG0(w[((j) + 1) % 16])))
/* Rounds j..j+7 with R (R0 or R16); after eight, the names are back. */
#define ROUNDS8(R, j)                                                         \
  do {                                                                        \
    R(a, b, c, d, e, f, g, x, (j));                                           \
    R(x, a, b, c, d, e, f, g, (j) + 1);                                       \
    R(g, x, a, b, c, d, e, f, (j) + 2);                                       \
    R(f, g, x, a, b, c, d, e, (j) + 3);                                       \
    R(e, f, g, x, a, b, c, d, (j) + 4);                                       \
    R(d, e, f, g, x, a, b, c, (j) + 5);                                       \
    R(c, d, e, f, g, x, a, b, (j) + 6);                                       \
    R(b, c, d, e, f, g, x, a, (j) + 7);                                       \
  } while(0)

/* Compress n whole 64-byte blocks at p into the state h (FIPS 180-4,
** 6.2.2), in C: the 64 rounds written out (the round constants and window
** indexes become immediates), the message schedule in a window of 16
** words.  About 3,100 instructions a block with gcc -O2 on x86-64. */
static void compress_portable(uint32_t h[8], const unsigned char *p,
                              size_t n) {
  uint32_t w[16], a, b, c, d, e, f, g, x;
  for(; n; n--, p += 64) {
    a = h[0];
    b = h[1];
    c = h[2];
    d = h[3];
    e = h[4];
    f = h[5];
    g = h[6];
    x = h[7];
    ROUNDS8(R0, 0);
    ROUNDS8(R0, 8);
    ROUNDS8(R16, 16);
    ROUNDS8(R16, 24);
    ROUNDS8(R16, 32);
    ROUNDS8(R16, 40);
    ROUNDS8(R16, 48);
    ROUNDS8(R16, 56);
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += x;
  }
}

#ifdef DDB_SHA256_X86
/* Four rounds 4g..4g+3 with the message words m (W[4g..4g+3], as a
** vector).  SHA256RNDS2 does two rounds on the state split in two vectors,
** ABEF and CDGH, with K + W of the two rounds in the low half of its third
** operand; it returns the new ABEF, and the old ABEF is the new CDGH: after
** the first, cdgh holds ABEF and abef CDGH; the second swaps them back. */
#define NI_ROUNDS4(g, m)                                                      \
  do {                                                                        \
    kw = _mm_add_epi32(m, _mm_loadu_si128((const __m128i *)(K + 4 * (g))));   \
    cdgh = _mm_sha256rnds2_epu32(cdgh, abef, kw);                             \
    kw = _mm_shuffle_epi32(kw, 0x0e);                                         \
    abef = _mm_sha256rnds2_epu32(abef, cdgh, kw);                             \
  } while(0)
/* Message words i*4..i*4+3 of the block at p, big-endian. */
#define NI_LOAD(m, i)                                                         \
  (m) = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * (i))),    \
                         bswap)
/* The message schedule four words a vector: W[4g..4g+3] is in m(g % 4).
** For W[j..j+3], NI_MSG1(a, b), a holding W[j-16..j-13] and b
** W[j-12..j-9], leaves W[j-16..j-13] + SSIG0(W[j-15..j-12]) in a; later
** NI_MSG2(a, b, c), b holding W[j-4..j-1] and c W[j-8..j-5], adds
** W[j-7..j-4] (taken from c and b) and SHA256MSG2 adds the SSIG1 terms of
** W[j-2..j+1] (the last two from its own first two results). */
#define NI_MSG1(a, b) (a) = _mm_sha256msg1_epu32(a, b)
#define NI_MSG2(a, b, c)                                                      \
  (a) = _mm_sha256msg2_epu32(_mm_add_epi32(a, _mm_alignr_epi8(b, c, 4)), b)

/* compress_portable() with the SHA extensions: the state is kept as ABEF
** and CDGH across the n blocks.  Callers check that the CPU has SHA and
** SSE4.1 (use_sha_ni). */
__attribute__((target("sha,sse4.1"))) static void
compress_sha_ni(uint32_t h[8], const unsigned char *p, size_t n) {
  const __m128i bswap =
      _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i abef, cdgh, abef0, cdgh0, kw, m0, m1, m2, m3, t;

  /* h[0..3] is DCBA as a vector (written from the highest lane, as the
  ** SHA extensions' documentation does), h[4..7] HGFE */
  t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h), 0xb1);
  cdgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(h + 4)), 0x1b);
  abef = _mm_alignr_epi8(t, cdgh, 8);
  cdgh = _mm_blend_epi16(cdgh, t, 0xf0);
  for(; n; n--, p += 64) {
    abef0 = abef;
    cdgh0 = cdgh;
    NI_LOAD(m0, 0);
    NI_ROUNDS4(0, m0);
    NI_LOAD(m1, 1);
    NI_ROUNDS4(1, m1);
    NI_MSG1(m0, m1);
    NI_LOAD(m2, 2);
    NI_ROUNDS4(2, m2);
    NI_MSG1(m1, m2);
    NI_LOAD(m3, 3);
    NI_ROUNDS4(3, m3);
    NI_MSG2(m0, m3, m2);
    NI_MSG1(m2, m3);
    NI_ROUNDS4(4, m0);
    NI_MSG2(m1, m0, m3);
    NI_MSG1(m3, m0);
    NI_ROUNDS4(5, m1);
    NI_MSG2(m2, m1, m0);
    NI_MSG1(m0, m1);
    NI_ROUNDS4(6, m2);
    NI_MSG2(m3, m2, m1);
    NI_MSG1(m1, m2);
    NI_ROUNDS4(7, m3);
    NI_MSG2(m0, m3, m2);
    NI_MSG1(m2, m3);
    NI_ROUNDS4(8, m0);
    NI_MSG2(m1, m0, m3);
    NI_MSG1(m3, m0);
    NI_ROUNDS4(9, m1);
    NI_MSG2(m2, m1, m0);
    NI_MSG1(m0, m1);
    NI_ROUNDS4(10, m2);
    NI_MSG2(m3, m2, m1);
    NI_MSG1(m1, m2);
    NI_ROUNDS4(11, m3);
    NI_MSG2(m0, m3, m2);
    NI_MSG1(m2, m3);
    NI_ROUNDS4(12, m0);
    NI_MSG2(m1, m0, m3);
    NI_MSG1(m3, m0);
    NI_ROUNDS4(13, m1);
    NI_MSG2(m2, m1, m0);
    NI_ROUNDS4(14, m2);
    NI_MSG2(m3, m2, m1);
    NI_ROUNDS4(15, m3);
    abef = _mm_add_epi32(abef, abef0);
    cdgh = _mm_add_epi32(cdgh, cdgh0);
  }
  /* back to DCBA and HGFE */
  t = _mm_shuffle_epi32(abef, 0x1b);
  cdgh = _mm_shuffle_epi32(cdgh, 0xb1);
  _mm_storeu_si128((__m128i *)h, _mm_blend_epi16(t, cdgh, 0xf0));
  _mm_storeu_si128((__m128i *)(h + 4), _mm_alignr_epi8(cdgh, t, 8));
}

/* Which block function runs: 0 not chosen yet, 1 the portable one, 2 the
** SHA extensions.  Chosen on first use; threads that race there choose
** the same.  ddb_sha256_force_portable() sets it for the tests. */
static int sha_impl;

/* 2 when the CPU has the SHA extensions and SSE4.1 (CPUID leaf 7 EBX, leaf
** 1 ECX), else 1.  (CPUID rather than __builtin_cpu_supports("sha"),
** which clang 14 does not know.)  Under valgrind, whose CPUID does not
** report SHA, this is 1. */
static int cpu_impl(void) {
  unsigned int a, b, c, d;
  if(!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1))
    return 1;
  if(!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & bit_SHA))
    return 1;
  return 2;
}

/* Whether the SHA extensions are to be used (choosing on first call). */
static int use_sha_ni(void) {
  int impl = __atomic_load_n(&sha_impl, __ATOMIC_RELAXED);
  if(!impl) {
    impl = cpu_impl();
    __atomic_store_n(&sha_impl, impl, __ATOMIC_RELAXED);
  }
  return impl == 2;
}
#endif

/* Compress n whole 64-byte blocks at p into the state h, all of them with
** the one block function chosen for this CPU. */
static void compress(uint32_t h[8], const unsigned char *p, size_t n) {
#ifdef DDB_SHA256_X86
  if(use_sha_ni()) {
    compress_sha_ni(h, p, n);
    return;
  }
#endif
  compress_portable(h, p, n);
}

/* For the tests: on != 0 makes SHA-256 use the portable block function,
** 0 gives it back the CPU's choice.  Returns 1 when SHA-256 now runs on
** the SHA extensions, 0 when on the portable code.  Not for use while
** other threads hash. */
int ddb_sha256_force_portable(int on) {
#ifdef DDB_SHA256_X86
  __atomic_store_n(&sha_impl, on ? 1 : cpu_impl(), __ATOMIC_RELAXED);
  return use_sha_ni();
#else
  (void)on;
  return 0;
#endif
}

/* Overwrite n bytes at p with zeros, in a way the compiler keeps (a
** memset just before free or return may be removed as a dead store). */
void ddb_wipe(void *p, size_t n) {
  static void *(*volatile do_memset)(void *, int, size_t) = memset;
  if(p && n)
    do_memset(p, 0, n);
}

/* Start a hash: s holds the initial state (FIPS 180-4, 5.3.3). */
void ddb_sha256_init(ddb_sha256_ctx *s) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                 0xa54ff53a, 0x510e527f, 0x9b05688c,
                                 0x1f83d9ab, 0x5be0cd19};
  memcpy(s->h, iv, sizeof(iv));
  s->bytes = 0;
  s->used = 0;
}

/* Hash n more bytes at p (p may be NULL when n is 0).  Whole blocks are
** compressed from p in place; at most 63 bytes are kept in s->block. */
void ddb_sha256_update(ddb_sha256_ctx *s, const void *p, size_t n) {
  const unsigned char *in = p;
  size_t take;
  if(!n)
    return;
  s->bytes += n;
  if(s->used) {
    take = 64 - s->used;
    if(take > n)
      take = n;
    memcpy(s->block + s->used, in, take);
    s->used += take;
    in += take;
    n -= take;
    if(s->used < 64)
      return;
    compress(s->h, s->block, 1);
    s->used = 0;
  }
  if(n >= 64) {
    compress(s->h, in, n / 64);
    in += n / 64 * 64;
    n %= 64;
  }
  if(n) {
    memcpy(s->block, in, n);
    s->used = n;
  }
}

/* Finish: pad (a 1 bit, zeros, the length in bits, big-endian), write the
** 32-byte digest to out and wipe s (use ddb_sha256_init to start again). */
void ddb_sha256_final(ddb_sha256_ctx *s, unsigned char out[DDB_SHA256_LEN]) {
  uint64_t bits = s->bytes * 8;
  int i;
  s->block[s->used++] = 0x80;
  if(s->used > 56) {
    memset(s->block + s->used, 0, 64 - s->used);
    compress(s->h, s->block, 1);
    s->used = 0;
  }
  memset(s->block + s->used, 0, 56 - s->used);
  for(i = 0; i < 8; i++)
    s->block[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
  compress(s->h, s->block, 1);
  for(i = 0; i < 8; i++) {
    out[4 * i] = (unsigned char)(s->h[i] >> 24);
    out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
    out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
    out[4 * i + 3] = (unsigned char)s->h[i];
  }
  ddb_wipe(s, sizeof(*s));
}

/* The SHA-256 of p[0..n) in out, in one call. */
void ddb_sha256(const void *p, size_t n, unsigned char out[DDB_SHA256_LEN]) {
  ddb_sha256_ctx s;
  ddb_sha256_init(&s);
  ddb_sha256_update(&s, p, n);
  ddb_sha256_final(&s, out);
}

/* Prepare m for HMAC-SHA256 with key[0..klen): the inner and outer hashes
** after their key block (a key longer than a block is hashed first, RFC
** 2104).  The key bytes are not kept; m is secret (wipe it). */
void ddb_hmac_sha256_init(ddb_hmac_sha256_ctx *m, const void *key,
                          size_t klen) {
  unsigned char k[64], pad[64];
  int i;
  memset(k, 0, sizeof(k));
  if(klen > sizeof(k))
    ddb_sha256(key, klen, k);
  else if(klen)
    memcpy(k, key, klen);
  for(i = 0; i < 64; i++)
    pad[i] = k[i] ^ 0x36;
  ddb_sha256_init(&m->inner);
  ddb_sha256_update(&m->inner, pad, sizeof(pad));
  for(i = 0; i < 64; i++)
    pad[i] = k[i] ^ 0x5c;
  ddb_sha256_init(&m->outer);
  ddb_sha256_update(&m->outer, pad, sizeof(pad));
  ddb_wipe(k, sizeof(k));
  ddb_wipe(pad, sizeof(pad));
}

/* Add n bytes at p to the message of m. */
void ddb_hmac_sha256_update(ddb_hmac_sha256_ctx *m, const void *p, size_t n) {
  ddb_sha256_update(&m->inner, p, n);
}

/* Finish: the 32-byte MAC in out; m is wiped. */
void ddb_hmac_sha256_final(ddb_hmac_sha256_ctx *m,
                           unsigned char out[DDB_SHA256_LEN]) {
  unsigned char ih[DDB_SHA256_LEN];
  ddb_sha256_final(&m->inner, ih);
  ddb_sha256_update(&m->outer, ih, sizeof(ih));
  ddb_sha256_final(&m->outer, out);
  ddb_wipe(ih, sizeof(ih));
}

/* HMAC-SHA256 of p[0..n) with key[0..klen), in one call. */
void ddb_hmac_sha256(const void *key, size_t klen, const void *p, size_t n,
                     unsigned char out[DDB_SHA256_LEN]) {
  ddb_hmac_sha256_ctx m;
  ddb_hmac_sha256_init(&m, key, klen);
  ddb_hmac_sha256_update(&m, p, n);
  ddb_hmac_sha256_final(&m, out);
}

/* Lower-case hex of p[0..n) in out (2n characters and a NUL), by table. */
void ddb_hex(const unsigned char *p, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  size_t i;
  for(i = 0; i < n; i++) {
    out[2 * i] = digits[p[i] >> 4];
    out[2 * i + 1] = digits[p[i] & 15];
  }
  out[2 * n] = 0;
}
