/*
** test_crypto.c -- the library primitives the signer (client/sigv4.c) and
** http.c use through client/crypto.c: SHA-256 and HMAC-SHA256 of
** libcrypto, the CRC-32 of zlib (x-amz-crc32) and its folded form, ddb_hex.
**
** SHA-256: FIPS 180-2's examples ("abc", the 448-bit two-block message, a
** million 'a') and the empty string, in one piece and streamed in pieces
** of every size.  HMAC-SHA256: RFC 4231's test cases 1-4, 6 and 7 (5 is a
** truncated MAC), with one prepared key duplicated for several messages
** (as the signing key is).  CRC-32: the check value 0xCBF43926, pieces,
** and zlib's crc32_z at every length and alignment.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../../client/ddb_client_int.h"
#include "tap.h"

/* hex of a digest, for comparisons */
static void hex32(const unsigned char d[DDB_SHA256_LEN], char out[65]) {
  ddb_hex(d, DDB_SHA256_LEN, out);
}

/* ------------------------------------------------------------------------
** SHA-256 and HMAC-SHA256 (libcrypto, through client/crypto.c)
*/

/* The SHA-256 of p[0..n) fed in pieces of piece bytes (the last shorter)
** through a ddb_sha256_ctx, in hex; "" when a call failed. */
static void sha256_pieces(const void *p, size_t n, size_t piece,
                          char hex[65]) {
  ddb_sha256_ctx *s = ddb_sha256_new();
  unsigned char d[DDB_SHA256_LEN];
  const unsigned char *q = p;
  size_t off;
  int bad = s == NULL;
  for(off = 0; !bad && off < n; off += piece)
    bad = ddb_sha256_update(s, q + off, off + piece <= n ? piece : n - off);
  if(!bad)
    bad = ddb_sha256_final(s, d);
  ddb_sha256_free(s);
  if(bad)
    hex[0] = 0;
  else
    hex32(d, hex);
}

/* FIPS 180-2's examples ("abc", the 448-bit two-block message, a million
** 'a') and the empty string, in one call and streamed in pieces of every
** size from 1 to 130 bytes; the padding boundaries one call against byte
** by byte. */
static void test_sha256(void) {
  static const struct {
    const char *msg;
    const char *hex;
  } kat[] = {
      {"abc",
       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
  };
  static const char million_a[] =
      "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
  static const size_t lens[] = {55, 56, 63, 64, 65, 119, 120, 128};
  unsigned char d[DDB_SHA256_LEN];
  char hex[65], hex2[65], buf[128];
  size_t i, piece, n = 1000000;
  char *a;

  for(i = 0; i < sizeof(kat) / sizeof(kat[0]); i++) {
    CHECK_INT(ddb_sha256(kat[i].msg, strlen(kat[i].msg), d), 0);
    hex32(d, hex);
    CHECK_STR(hex, kat[i].hex);
    sha256_pieces(kat[i].msg, strlen(kat[i].msg), 1, hex);
    CHECK_STR(hex, kat[i].hex);
  }
  CHECK_INT(ddb_sha256(NULL, 0, d), 0);
  hex32(d, hex);
  CHECK_STR(hex, kat[1].hex);

  a = malloc(n);
  if(!CHECK(a != NULL))
    return;
  memset(a, 'a', n);
  CHECK_INT(ddb_sha256(a, n, d), 0);
  hex32(d, hex);
  CHECK_STR(hex, million_a);
  for(piece = 1; piece <= 130; piece++) {
    sha256_pieces(a, n, piece, hex);
    if(!CHECK_STR(hex, million_a))
      tap_diag("pieces of %zu bytes", piece);
  }
  free(a);

  memset(buf, 'q', sizeof(buf));
  for(i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
    CHECK_INT(ddb_sha256(buf, lens[i], d), 0);
    hex32(d, hex);
    sha256_pieces(buf, lens[i], 1, hex2);
    CHECK_STR(hex, hex2);
  }
}

/* The hex HMAC of m's key over msg[0..n) through a duplicate of m (m
** stays as it was); "" when a call failed. */
static void hmac_dup_hex(const ddb_hmac_ctx *m, const void *msg, size_t n,
                         size_t split, char hex[65]) {
  ddb_hmac_ctx *c = ddb_hmac_dup(m);
  unsigned char d[DDB_SHA256_LEN];
  const unsigned char *p = msg;
  if(!c || ddb_hmac_update(c, p, split) ||
     ddb_hmac_update(c, p + split, n - split) || ddb_hmac_final(c, d))
    hex[0] = 0;
  else
    hex32(d, hex);
  ddb_hmac_free(c);
}

/* RFC 4231, test cases 1-4, 6 and 7 (5 is a truncated MAC), in one call;
** 6 and 7, whose 131-byte key is hashed first, through one prepared key
** duplicated for each message (as sigv4.c uses its signing key), and the
** prepared key again after both; the empty key and message. */
static void test_hmac(void) {
  static const char case6[] =
      "Test Using Larger Than Block-Size Key - Hash Key First";
  static const char case7[] =
      "This is a test using a larger than block-size key and a larger than "
      "block-size data. The key needs to be hashed before being used by the "
      "HMAC algorithm.";
  static const char want6[] =
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54";
  static const char want7[] =
      "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2";
  unsigned char key[131], data[50], d[DDB_SHA256_LEN];
  char hex[65];
  ddb_hmac_ctx *m;
  int i;

  /* 1: 20 x 0x0b, "Hi There" */
  memset(key, 0x0b, 20);
  CHECK_INT(ddb_hmac_sha256(key, 20, "Hi There", 8, d), 0);
  hex32(d, hex);
  CHECK_STR(
      hex, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  /* 2: "Jefe" */
  CHECK_INT(ddb_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, d),
            0);
  hex32(d, hex);
  CHECK_STR(
      hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  /* 3: 20 x 0xaa, 50 x 0xdd */
  memset(key, 0xaa, 20);
  memset(data, 0xdd, 50);
  CHECK_INT(ddb_hmac_sha256(key, 20, data, 50, d), 0);
  hex32(d, hex);
  CHECK_STR(
      hex, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  /* 4: 0x01..0x19, 50 x 0xcd */
  for(i = 0; i < 25; i++)
    key[i] = (unsigned char)(i + 1);
  memset(data, 0xcd, 50);
  CHECK_INT(ddb_hmac_sha256(key, 25, data, 50, d), 0);
  hex32(d, hex);
  CHECK_STR(
      hex, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  /* 6 and 7: one prepared key, duplicated */
  memset(key, 0xaa, 131);
  m = ddb_hmac_new(key, 131);
  if(CHECK(m != NULL)) {
    hmac_dup_hex(m, case6, sizeof(case6) - 1, 0, hex);
    CHECK_STR(hex, want6);
    hmac_dup_hex(m, case7, sizeof(case7) - 1, 50, hex);
    CHECK_STR(hex, want7);
    hmac_dup_hex(m, case6, sizeof(case6) - 1, 10, hex);
    CHECK_STR(hex, want6);
    /* the prepared one itself, last */
    CHECK_INT(ddb_hmac_update(m, case7, sizeof(case7) - 1), 0);
    CHECK_INT(ddb_hmac_final(m, d), 0);
    hex32(d, hex);
    CHECK_STR(hex, want7);
  }
  ddb_hmac_free(m);
  CHECK_INT(ddb_hmac_sha256(key, 131, case6, sizeof(case6) - 1, d), 0);
  hex32(d, hex);
  CHECK_STR(hex, want6);
  /* HMAC-SHA256("", "") */
  CHECK_INT(ddb_hmac_sha256("", 0, "", 0, d), 0);
  hex32(d, hex);
  CHECK_STR(
      hex, "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
  ddb_hmac_free(NULL);
  ddb_sha256_free(NULL);
}

/* ------------------------------------------------------------------------
** CRC-32 (zlib, through client/crypto.c) and ddb_hex
*/

/* CRC-32 (zlib's): the check value of this CRC, 0xCBF43926 for
** "123456789"; empty input (NULL or not) leaves a CRC as it was;
** continuing a CRC piecewise; what DynamoDB Local sends for "{}"
** (2745614147); and a body of 5 MB, whole and in uneven pieces. */
static void test_crc32(void) {
  size_t i, n = 5u << 20, off, piece;
  unsigned char *big;
  uint32_t whole, crc;
  CHECK_INT(ddb_crc32(0, "123456789", 9), 0xCBF43926u);
  CHECK_INT(ddb_crc32(0, NULL, 0), 0);
  CHECK_INT(ddb_crc32(0xCBF43926u, NULL, 0), 0xCBF43926u);
  CHECK_INT(ddb_crc32(0xCBF43926u, "", 0), 0xCBF43926u);
  CHECK_INT(ddb_crc32(0, "{}", 2), 2745614147u);
  CHECK_INT(ddb_crc32(ddb_crc32(0, "12345", 5), "6789", 4), 0xCBF43926u);
  CHECK_INT(ddb_crc32(0, "The quick brown fox jumps over the lazy dog", 43),
            0x414FA339u);
  big = malloc(n);
  if(!CHECK(big != NULL))
    return;
  for(i = 0; i < n; i++)
    big[i] = (unsigned char)(i * 2654435761u >> 24);
  whole = ddb_crc32(0, big, n);
  for(crc = 0, off = 0, piece = 1; off < n;
      off += piece, piece = piece * 3 + 1)
    crc = ddb_crc32(crc, big + off, piece <= n - off ? piece : n - off);
  CHECK_INT(crc, whole);
  free(big);
}

/* ddb_hex against printf's %02x: every byte value, at every length from 0
** to 70 and every start in a 256-byte run (the 16-byte path and the
** bytes after it). */
static void test_hex(void) {
  unsigned char in[256];
  char got[2 * 256 + 1], want[2 * 256 + 1];
  size_t n, at, i, bad = 0;
  for(i = 0; i < sizeof(in); i++)
    in[i] = (unsigned char)(i * 167 + 13); /* every value, out of order */
  for(at = 0; at < 32; at++)
    for(n = 0; n <= 70; n++) {
      for(i = 0; i < n; i++)
        snprintf(want + 2 * i, 3, "%02x", in[at + i]);
      want[2 * n] = 0;
      memset(got, 'X', sizeof(got));
      ddb_hex(in + at, n, got);
      bad += strcmp(got, want) != 0;
    }
  ddb_hex(in, sizeof(in), got);
  for(i = 0; i < sizeof(in); i++)
    snprintf(want + 2 * i, 3, "%02x", in[i]);
  CHECK_STR(got, want);
  CHECK_INT((int)bad, 0);
}

/* ddb_crc32 (folded with PCLMULQDQ from 64 bytes on, where the CPU has it)
** is zlib's crc32_z: every length 0 to 600 at each of 16 alignments, from
** 0 and from another CRC, and a body split anywhere chains. */
static void test_crc32_fold(void) {
  static unsigned char buf[640];
  uint32_t x = 2463534242u;
  size_t i, n;
  int a, bad = 0;
  for(i = 0; i < sizeof(buf); i++) { /* xorshift32: any bytes */
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    buf[i] = (unsigned char)x;
  }
  for(a = 0; a < 16; a++)
    for(n = 0; n <= 600; n++) {
      if(ddb_crc32(0, buf + a, n) != (uint32_t)crc32_z(0, buf + a, n))
        bad++;
      if(ddb_crc32(0xdeadbeefu, buf + a, n) !=
         (uint32_t)crc32_z(0xdeadbeefu, buf + a, n))
        bad++;
    }
  CHECK_INT(bad, 0);
  for(n = 0; n <= 600; n += 7)
    if(ddb_crc32(ddb_crc32(0, buf, n), buf + n, 600 - n) !=
       (uint32_t)crc32_z(0, buf, 600))
      bad++;
  CHECK_INT(bad, 0);
}

const tap_test tap_crypto_tests[] = {
    {"crypto: ddb_hex as printf's %02x (every byte, lengths 0-70)", test_hex},
    {"crypto: SHA-256 of libcrypto, FIPS 180-2's examples, whole and "
     "streamed",
     test_sha256},
    {"crypto: HMAC-SHA256 of libcrypto, RFC 4231, a prepared key duplicated",
     test_hmac},
    {"crypto: CRC-32 of zlib (x-amz-crc32), check value 0xCBF43926",
     test_crc32},
    {"tape: CRC-32 folded 64 bytes at a time is zlib's", test_crc32_fold},
    {NULL, NULL}};
