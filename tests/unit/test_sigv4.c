/*
** test_sigv4.c -- our SigV4 signer (client/sigv4.c), and the library
** primitives it and http.c use through client/crypto.c: SHA-256 and
** HMAC-SHA256 of libcrypto, the CRC-32 of zlib (x-amz-crc32).
**
** SHA-256: FIPS 180-2's examples ("abc", the 448-bit two-block message, a
** million 'a') and the empty string, in one piece and streamed in pieces
** of every size.  HMAC-SHA256: RFC 4231's test cases 1-4, 6 and 7 (5 is a
** truncated MAC), with one prepared key duplicated for several messages
** (as the signing key is).  CRC-32: the check value 0xCBF43926, pieces.
**
** SigV4: AWS's published vectors (the copy in awslabs/aws-c-auth,
** tests/aws-signing-test-suite/v4/): credentials AKIDEXAMPLE /
** wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, region us-east-1, service
** "service", time 2015-08-30T12:36:00Z, through ddb_sigv4_sign() with the
** request's headers as the vector gives them (those about path
** normalisation and query encoding are left out: the path and query given
** to the signer are already canonical, and DynamoDB is always POST /).
** Then the DynamoDB form, ddb_sigv4_sign_json(), against the general
** one and against botocore's Authorization for the same requests (the
** expected values were computed with botocore 1.43, SigV4Auth, at the
** fixed clock), the cache of the signing key across dates, threads
** signing at once, X-Amz-Date and the Host/path taken from endpoints.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../client/ddb_client_int.h"
#include "../../client/sigv4.h"
#include "tap.h"

#define VEC_AK "AKIDEXAMPLE"
#define VEC_SK "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
/* 2015-08-30T12:36:00Z and the next day's first seconds */
#define VEC_TIME   1440938160
#define NEXT_DAY   1440979201
#define LAST_OF_30 1440979199
#define VEC_DATE   "20150830T123600Z"
#define VEC_PREFIX                                                            \
  "AWS4-HMAC-SHA256 "                                                         \
  "Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
#define STS_TOKEN                                                             \
  "AQoDYXdzEPT//////////"                                                     \
  "wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfI" \
  "eoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/"                                       \
  "kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9" \
  "HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+"       \
  "scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA=="

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
** AWS's published vectors
*/
typedef struct vector {
  const char *name;
  const char *method;
  const char *query;
  ddb_sigv4_header hdr[6]; /* besides Host and X-Amz-Date */
  const char *body;
  const char *signed_headers;
  const char *signature;
} vector;

static const vector vectors[] = {
    {"get-vanilla",
     "GET",
     "",
     {{NULL, NULL}},
     "",
     "host;x-amz-date",
     "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
    {"post-vanilla",
     "POST",
     "",
     {{NULL, NULL}},
     "",
     "host;x-amz-date",
     "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"},
    {"get-header-value-trim",
     "GET",
     "",
     {{"My-Header1", " value1"}, {"My-Header2", " \"a   b   c\""}, {NULL}},
     "",
     "host;my-header1;my-header2;x-amz-date",
     "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"},
    {"get-header-value-multiline",
     "GET",
     "",
     {{"My-Header1", "value1\n  value2\n     value3"}, {NULL}},
     "",
     "host;my-header1;x-amz-date",
     "cfd34249e4b1c8d6b91ef74165d41a32e5fab3306300901bb65a51a73575eefd"},
    {"get-header-key-duplicate",
     "GET",
     "",
     {{"My-Header1", "value2"},
      {"My-Header1", "value2"},
      {"My-Header1", "value1"},
      {NULL}},
     "",
     "host;my-header1;x-amz-date",
     "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea"},
    {"get-header-value-order",
     "GET",
     "",
     {{"My-Header1", "value4"},
      {"My-Header1", "value1"},
      {"My-Header1", "value3"},
      {"My-Header1", "value2"},
      {NULL}},
     "",
     "host;my-header1;x-amz-date",
     "08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01"},
    {"post-header-key-case",
     "POST",
     "",
     {{NULL, NULL}},
     "",
     "host;x-amz-date",
     "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"},
    {"post-header-key-sort",
     "POST",
     "",
     {{"My-Header1", "value1"}, {NULL}},
     "",
     "host;my-header1;x-amz-date",
     "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c"},
    {"post-header-value-case",
     "POST",
     "",
     {{"My-Header1", "VALUE1"}, {NULL}},
     "",
     "host;my-header1;x-amz-date",
     "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d"},
    {"get-vanilla-with-session-token",
     "GET",
     "",
     {{"X-Amz-Security-Token",
       "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267"},
      {NULL}},
     "",
     "host;x-amz-date;x-amz-security-token",
     "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8"},
    {"post-sts-header-before",
     "POST",
     "",
     {{"X-Amz-Security-Token", STS_TOKEN}, {NULL}},
     "",
     "host;x-amz-date;x-amz-security-token",
     "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"},
    {"post-vanilla-query",
     "POST",
     "Param1=value1",
     {{NULL, NULL}},
     "",
     "host;x-amz-date",
     "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"},
    {"get-vanilla-query-order-key-case",
     "GET",
     "Param1=value1&Param2=value2",
     {{NULL, NULL}},
     "",
     "host;x-amz-date",
     "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"},
    /* a body: the suite signs this one with x-amz-content-sha256 (the
    ** body's hash) and content-length, which are plain headers here */
    {"post-x-www-form-urlencoded",
     "POST",
     "",
     {{"Content-Type", "application/x-www-form-urlencoded"},
      {"Content-Length", "13"},
      {"X-Amz-Content-Sha256",
       "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e"},
      {NULL}},
     "Param1=value1",
     "content-length;content-type;host;x-amz-content-sha256;x-amz-date",
     "d3875051da38690788ef43de4db0d8f280229d82040bfac253562e56c3f20e0b"},
};

/* Each vector through ddb_sigv4_sign(), Host and X-Amz-Date first. */
static void test_vectors(void) {
  ddb_sigv4 *s = ddb_sigv4_new(VEC_AK, VEC_SK, NULL);
  ddb_sigv4_header hdr[8];
  char want[512], got[DDB_SIGV4_AUTH_MAX];
  size_t i, n;
  if(!CHECK(s != NULL))
    return;
  for(i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
    const vector *v = &vectors[i];
    hdr[0].name = "Host";
    hdr[0].value = "example.amazonaws.com";
    hdr[1].name = "X-Amz-Date";
    hdr[1].value = VEC_DATE;
    for(n = 2; v->hdr[n - 2].name; n++)
      hdr[n] = v->hdr[n - 2];
    snprintf(want, sizeof(want), VEC_PREFIX "SignedHeaders=%s, Signature=%s",
             v->signed_headers, v->signature);
    got[0] = 0;
    CHECK_INT(ddb_sigv4_sign(s, "us-east-1", "service", VEC_DATE, v->method,
                             "/", v->query, hdr, n, v->body, strlen(v->body),
                             got, sizeof(got)),
              0);
    if(!CHECK_STR(got, want))
      tap_diag("vector %s", v->name);
  }
  /* the two paths of the suite, encoded as ddb_sigv4_uri_encode() does */
  {
    char path[64];
    hdr[0].name = "host";
    hdr[0].value = "example.amazonaws.com";
    hdr[1].name = "x-amz-date";
    hdr[1].value = VEC_DATE;
    /* get-utf8 is GET /<U+1234> */
    CHECK_INT(ddb_sigv4_uri_encode("/\xe1\x88\xb4", path, sizeof(path)), 0);
    CHECK_STR(path, "/%E1%88%B4");
    CHECK_INT(ddb_sigv4_sign(s, "us-east-1", "service", VEC_DATE, "GET", path,
                             "", hdr, 2, NULL, 0, got, sizeof(got)),
              0);
    CHECK_STR(got, VEC_PREFIX "SignedHeaders=host;x-amz-date, Signature="
                              "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255"
                              "a891fd03141be5d85");
    /* get-space is GET /example space/ */
    CHECK_INT(ddb_sigv4_uri_encode("/example space/", path, sizeof(path)), 0);
    CHECK_STR(path, "/example%20space/");
    CHECK_INT(ddb_sigv4_sign(s, "us-east-1", "service", VEC_DATE, "GET", path,
                             "", hdr, 2, NULL, 0, got, sizeof(got)),
              0);
    CHECK_STR(got, VEC_PREFIX "SignedHeaders=host;x-amz-date, Signature="
                              "652487583200325589f1fba4c7e578f72c47cb61beeca81"
                              "406b39ddec1366741");
    /* what does not fit */
    CHECK_INT(ddb_sigv4_uri_encode("/abc", path, 4), -1);
    CHECK_INT(ddb_sigv4_uri_encode("/\xe1", path, 4), -1);
    CHECK_INT(ddb_sigv4_uri_encode("/\xe1", path, 5), 0);
    CHECK_STR(path, "/%E1");
  }
  /* what does not fit or is malformed is refused */
  CHECK_INT(ddb_sigv4_sign(s, "us-east-1", "service", VEC_DATE, "GET", "/", "",
                           hdr, 2, NULL, 0, got, 40),
            -1);
  CHECK_INT(ddb_sigv4_sign(s, "us-east-1", "service", "20150830T1236Z", "GET",
                           "/", "", hdr, 2, NULL, 0, got, sizeof(got)),
            -1);
  CHECK_INT(ddb_sigv4_sign(s, "us-east-1", "service", VEC_DATE, "GET", "/", "",
                           hdr, DDB_SIGV4_HEADERS_MAX + 1, NULL, 0, got,
                           sizeof(got)),
            -1);
  ddb_sigv4_free(s);
}

/* ------------------------------------------------------------------------
** The DynamoDB form
*/
#define DDB_BODY                                                              \
  "{\"TableName\":\"Sig\",\"Key\":{\"PK\":{\"S\":\"cl\xc3\xa9 "               \
  "\xe6\x97\xa5\xe6\x9c\xac\"}}}"
#define BOTO_PREFIX                                                           \
  "AWS4-HMAC-SHA256 "                                                         \
  "Credential=AKIDEXAMPLE/20150830/eu-west-1/dynamodb/aws4_request, "
#define BOTO_TOKEN "FwoGZXIvYXdzE//tok+en="

/* ddb_sigv4_sign_json for body at amz_date on host into out (cap
** DDB_SIGV4_AUTH_MAX); returns its result. */
static int sign_json(ddb_sigv4 *s, const char *amz_date, const char *host,
                     const char *body, char *out) {
  return ddb_sigv4_sign_json(s, "eu-west-1", "dynamodb", amz_date, "/",
                             "application/x-amz-json-1.0", host,
                             "DynamoDB_20120810.GetItem", body, strlen(body),
                             out, DDB_SIGV4_AUTH_MAX);
}

/* The same request through the general ddb_sigv4_sign, its headers in
** another order and case. */
static int sign_general(ddb_sigv4 *s, const char *amz_date, const char *host,
                        const char *token, const char *body, char *out) {
  ddb_sigv4_header hdr[5];
  size_t n = 0;
  hdr[n].name = "X-Amz-Target";
  hdr[n++].value = "DynamoDB_20120810.GetItem";
  if(token) {
    hdr[n].name = "x-amz-security-token";
    hdr[n++].value = token;
  }
  hdr[n].name = "X-AMZ-DATE";
  hdr[n++].value = amz_date;
  hdr[n].name = "Host";
  hdr[n++].value = host;
  hdr[n].name = "Content-Type";
  hdr[n++].value = "application/x-amz-json-1.0";
  return ddb_sigv4_sign(s, "eu-west-1", "dynamodb", amz_date, "POST", "/", "",
                        hdr, n, body, strlen(body), out, DDB_SIGV4_AUTH_MAX);
}

/* ddb_sigv4_sign_json against botocore and against ddb_sigv4_sign: with
** and without a session token, on a port and on an AWS host, a non-ASCII
** body, an empty body and a 3 MB one. */
static void test_json(void) {
  static const struct {
    const char *token;
    const char *host;
    const char *signature;
  } boto[] = {
      {NULL, "127.0.0.1:8000",
       "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature="
       "0ef40ac3403f2c5f902eae4f38cdf1fbb9fa54cfdc5210a76c87b68e6cab6d50"},
      {NULL, "dynamodb.eu-west-1.amazonaws.com",
       "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature="
       "b5bec3e5729f20ab2b33c99df747ac6edd2cbed7614a86bb86123e230615e1aa"},
      {BOTO_TOKEN, "127.0.0.1:8000",
       "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;x-amz-"
       "target, Signature="
       "d219da9fdf9ea6db389e87f09e4c260c8d6c0a0bde483f8c3fe6d8fa80b4d32b"},
      {BOTO_TOKEN, "dynamodb.eu-west-1.amazonaws.com",
       "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;x-amz-"
       "target, Signature="
       "39117c8b36876060f6e9ec334c990a48b5e1e3140463e14be1822e9c1cbdcbb5"},
  };
  char a[DDB_SIGV4_AUTH_MAX], b[DDB_SIGV4_AUTH_MAX], want[512];
  size_t i, big = 3u << 20;
  char *body;
  for(i = 0; i < sizeof(boto) / sizeof(boto[0]); i++) {
    ddb_sigv4 *s = ddb_sigv4_new(VEC_AK, VEC_SK, boto[i].token);
    if(!CHECK(s != NULL))
      return;
    snprintf(want, sizeof(want), BOTO_PREFIX "%s", boto[i].signature);
    CHECK_INT(sign_json(s, VEC_DATE, boto[i].host, DDB_BODY, a), 0);
    CHECK_STR(a, want);
    CHECK_INT(
        sign_general(s, VEC_DATE, boto[i].host, boto[i].token, DDB_BODY, b),
        0);
    CHECK_STR(b, want);
    /* the empty body: both forms agree */
    CHECK_INT(sign_json(s, VEC_DATE, boto[i].host, "", a), 0);
    CHECK_INT(sign_general(s, VEC_DATE, boto[i].host, boto[i].token, "", b),
              0);
    CHECK_STR(a, b);
    ddb_sigv4_free(s);
  }

  /* a token with blanks at its ends and inside is signed folded, as
  ** botocore and DynamoDB fold it */
  {
    ddb_sigv4 *s = ddb_sigv4_new(VEC_AK, VEC_SK, " \t" BOTO_TOKEN "\n");
    ddb_sigv4 *t = ddb_sigv4_new(VEC_AK, VEC_SK, "  ");
    if(CHECK(s && t)) {
      CHECK_STR(ddb_sigv4_token(s), BOTO_TOKEN);
      CHECK(ddb_sigv4_token(t) == NULL); /* blank: none */
      CHECK_INT(sign_json(s, VEC_DATE, "127.0.0.1:8000", DDB_BODY, a), 0);
      CHECK_STR(a, BOTO_PREFIX "SignedHeaders=content-type;host;x-amz-date;x-"
                               "amz-security-token;x-amz-target, Signature="
                               "d219da9fdf9ea6db389e87f09e4c260c8d6c0a0bde483f"
                               "8c3fe6d8fa80b4d32b");
    }
    ddb_sigv4_free(s);
    ddb_sigv4_free(t);
  }

  /* a 3 MB body: the two forms agree */
  body = malloc(big + 1);
  if(CHECK(body != NULL)) {
    ddb_sigv4 *s = ddb_sigv4_new(VEC_AK, VEC_SK, NULL);
    for(i = 0; i < big; i++)
      body[i] = (char)('a' + i % 26);
    body[big] = 0;
    if(CHECK(s != NULL)) {
      CHECK_INT(sign_json(s, VEC_DATE, "h", body, a), 0);
      CHECK_INT(sign_general(s, VEC_DATE, "h", NULL, body, b), 0);
      CHECK_STR(a, b);
    }
    ddb_sigv4_free(s);
    free(body);
  }

  /* too small an output, a bad date: refused */
  {
    ddb_sigv4 *s = ddb_sigv4_new(VEC_AK, VEC_SK, NULL);
    if(CHECK(s != NULL)) {
      CHECK_INT(ddb_sigv4_sign_json(s, "eu-west-1", "dynamodb", VEC_DATE, "/",
                                    "application/x-amz-json-1.0", "h", "t", "",
                                    0, a, 100),
                -1);
      CHECK_INT(sign_json(s, "2015-08-30T12:36:00Z", "h", "", a), -1);
    }
    ddb_sigv4_free(s);
  }
}

/* X-Amz-Date from a Unix time. */
static void test_amz_date(void) {
  char d[DDB_SIGV4_DATE_LEN];
  CHECK_INT(ddb_sigv4_amz_date(VEC_TIME, d), 0);
  CHECK_STR(d, VEC_DATE);
  CHECK_INT(ddb_sigv4_amz_date(0, d), 0);
  CHECK_STR(d, "19700101T000000Z");
  CHECK_INT(ddb_sigv4_amz_date(LAST_OF_30, d), 0);
  CHECK_STR(d, "20150830T235959Z");
  CHECK_INT(ddb_sigv4_amz_date(NEXT_DAY, d), 0);
  CHECK_STR(d, "20150831T000001Z");
  /* the calendar is reckoned without gmtime_r (whose lock fork() copies):
  ** leap days, centuries and the ends of the range, then the same as
  ** gmtime_r's every 7919 s + 1 day from 1900 to 2200 */
  {
    static const struct {
      int64_t t;
      const char *want;
    } at[] = {{-2208988800LL, "19000101T000000Z"},
              {-1LL, "19691231T235959Z"},
              {951782400LL, "20000229T000000Z"},
              {4107542399LL, "21000228T235959Z"},
              {4107542400LL, "21000301T000000Z"},
              {253402300799LL, "99991231T235959Z"},
              {-62167219200LL, "00000101T000000Z"}};
    int64_t t;
    size_t i;
    int bad = 0;
    for(i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
      CHECK_INT(ddb_sigv4_amz_date((time_t)at[i].t, d), 0);
      CHECK_STR(d, at[i].want);
    }
    for(t = -2208988800LL; t < 7258118400LL; t += 7919 + 86400) {
      time_t tt = (time_t)t;
      struct tm tm;
      char want[32];
      gmtime_r(&tt, &tm);
      strftime(want, sizeof(want), "%Y%m%dT%H%M%SZ", &tm);
      if(ddb_sigv4_amz_date(tt, d) != 0 || strcmp(d, want) != 0)
        bad++;
    }
    CHECK_INT(bad, 0);
  }
  CHECK_INT(ddb_sigv4_amz_date((time_t)253402300800LL, d), -1); /* 10000 */
  CHECK_INT(ddb_sigv4_amz_date((time_t)-62167219201LL, d), -1); /* -1 */
}

/* botocore's signature of DDB_BODY at VEC_TIME. */
#define BOTO_D1                                                               \
  BOTO_PREFIX "SignedHeaders=content-type;host;x-amz-date;x-amz-target, "     \
              "Signature=0ef40ac3403f2c5f902eae4f38cdf1fbb9fa54cfdc5210a76c8" \
              "7b68e6cab6d50"

/* The cached signing key: the same signatures as a fresh derivation,
** derived once per date, again when the date (or region) changes. */
static void test_key_cache(void) {
  ddb_sigv4 *s = ddb_sigv4_new(VEC_AK, VEC_SK, NULL);
  ddb_sigv4 *fresh;
  char d1[DDB_SIGV4_DATE_LEN], d2[DDB_SIGV4_DATE_LEN], d3[DDB_SIGV4_DATE_LEN];
  char a[DDB_SIGV4_AUTH_MAX], b[DDB_SIGV4_AUTH_MAX];
  if(!CHECK(s != NULL))
    return;
  ddb_sigv4_amz_date(VEC_TIME, d1);
  ddb_sigv4_amz_date(LAST_OF_30, d2);
  ddb_sigv4_amz_date(NEXT_DAY, d3);
  CHECK_INT(ddb_sigv4_derivations(s), 0);

  /* two times of the same day: one derivation */
  CHECK_INT(sign_json(s, d1, "127.0.0.1:8000", DDB_BODY, a), 0);
  CHECK_STR(a, BOTO_D1);
  CHECK_INT(sign_json(s, d2, "127.0.0.1:8000", DDB_BODY, a), 0);
  CHECK_STR(a, BOTO_PREFIX "SignedHeaders=content-type;host;x-amz-date;x-amz-"
                           "target, Signature=97c6da2c41b13d8d66f653d05da1c31a"
                           "2351372c640811bf0a5d607bd0d07eaa");
  CHECK_INT(ddb_sigv4_derivations(s), 1);

  /* the next day: derived again; botocore's signature and a fresh
  ** signer's */
  CHECK_INT(sign_json(s, d3, "127.0.0.1:8000", DDB_BODY, a), 0);
  CHECK_STR(a, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150831/eu-west-1/"
               "dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-"
               "date;x-amz-target, Signature=df9ae34918ab3db7646b54af304e529fc"
               "c30b78d23c7a539ef0ce545997874a7");
  CHECK_INT(ddb_sigv4_derivations(s), 2);
  fresh = ddb_sigv4_new(VEC_AK, VEC_SK, NULL);
  if(CHECK(fresh != NULL)) {
    CHECK_INT(sign_json(fresh, d3, "127.0.0.1:8000", DDB_BODY, b), 0);
    CHECK_STR(a, b);
    CHECK_INT(ddb_sigv4_derivations(fresh), 1);
  }
  ddb_sigv4_free(fresh);
  /* the same day again: no derivation */
  CHECK_INT(sign_general(s, d3, "127.0.0.1:8000", NULL, DDB_BODY, b), 0);
  CHECK_STR(a, b);
  CHECK_INT(ddb_sigv4_derivations(s), 2);

  /* the same request again, and with another Host in between: the
  ** first blocks kept (the canonical request's, the string to sign's)
  ** give the signature of a fresh signer, which keeps none */
  CHECK_INT(sign_json(s, d3, "127.0.0.1:8000", DDB_BODY, b), 0);
  CHECK_STR(a, b);
  fresh = ddb_sigv4_new(VEC_AK, VEC_SK, NULL);
  if(CHECK(fresh != NULL)) {
    char c1[DDB_SIGV4_AUTH_MAX], c2[DDB_SIGV4_AUTH_MAX];
    const char *h9 = "dynamodb.eu-west-1.amazonaws.com";
    CHECK_INT(sign_json(s, d3, h9, DDB_BODY, c1), 0);
    CHECK_INT(sign_json(fresh, d3, h9, DDB_BODY, c2), 0);
    CHECK_STR(c1, c2);
    CHECK(strcmp(c1, a) != 0);
    CHECK_INT(sign_json(s, d3, "127.0.0.1:8000", DDB_BODY, b), 0);
    CHECK_STR(a, b);
    CHECK_INT(sign_json(s, d3, h9, DDB_BODY, c1), 0);
    CHECK_STR(c1, c2);
  }
  ddb_sigv4_free(fresh);
  CHECK_INT(ddb_sigv4_derivations(s), 2);

  /* back to the day before, then another region: derived each time */
  CHECK_INT(sign_json(s, d1, "127.0.0.1:8000", DDB_BODY, a), 0);
  CHECK_STR(a, BOTO_D1);
  CHECK_INT(ddb_sigv4_derivations(s), 3);
  CHECK_INT(ddb_sigv4_sign_json(s, "us-east-1", "dynamodb", d1, "/",
                                "application/x-amz-json-1.0", "h", "t", "", 0,
                                a, sizeof(a)),
            0);
  CHECK(strstr(a, "/20150830/us-east-1/dynamodb/aws4_request,") != NULL);
  CHECK_INT(ddb_sigv4_derivations(s), 4);
  ddb_sigv4_free(s);
}

/* Threads signing with one ddb_sigv4 across a date change: every
** signature right (checked against botocore's for the two dates). */
typedef struct sign_thread {
  ddb_sigv4 *s;
  int id;
  int bad;
} sign_thread;

static void *sign_thread_main(void *arg) {
  sign_thread *t = arg;
  char d1[DDB_SIGV4_DATE_LEN], d3[DDB_SIGV4_DATE_LEN], a[DDB_SIGV4_AUTH_MAX];
  int i;
  ddb_sigv4_amz_date(VEC_TIME, d1);
  ddb_sigv4_amz_date(NEXT_DAY, d3);
  for(i = 0; i < 400; i++) {
    int day2 = (i / 50 + t->id) % 2;
    if(sign_json(t->s, day2 ? d3 : d1, "127.0.0.1:8000", DDB_BODY, a) ||
       !strstr(a, day2 ? "df9ae34918ab3db7646b54af304e529fcc30b78d23c7a539ef0"
                         "ce545997874a7"
                       : "0ef40ac3403f2c5f902eae4f38cdf1fbb9fa54cfdc5210a76c8"
                         "7b68e6cab6d50"))
      t->bad++;
  }
  return NULL;
}

static void test_key_cache_threads(void) {
  sign_thread t[4];
  pthread_t tid[4];
  ddb_sigv4 *s = ddb_sigv4_new(VEC_AK, VEC_SK, NULL);
  int i, started = 0;
  if(!CHECK(s != NULL))
    return;
  for(i = 0; i < 4; i++) {
    t[i].s = s;
    t[i].id = i;
    t[i].bad = 0;
    if(pthread_create(&tid[i], NULL, sign_thread_main, &t[i]) == 0)
      started++;
    else
      break;
  }
  for(i = 0; i < started; i++) {
    pthread_join(tid[i], NULL);
    CHECK_INT(t[i].bad, 0);
  }
  CHECK_INT(started, 4);
  ddb_sigv4_free(s);
}

/* The endpoint parsed once (config.c, ddb_endpoint_parse): the URL curl
** gets, the Host header and canonical URI that are signed, the canonical
** endpoint of the cache's place, all from one parse by libcurl; and what
** is refused, with its message. */
static void test_endpoint(void) {
  static const struct {
    const char *text;
    const char *url, *host, *sign_path, *canonical;
  } ok[] = {
      {"http://127.0.0.1:8000", "http://127.0.0.1:8000/", "127.0.0.1:8000",
       "/", "http://127.0.0.1:8000"},
      {"https://dynamodb.us-east-1.amazonaws.com",
       "https://dynamodb.us-east-1.amazonaws.com/",
       "dynamodb.us-east-1.amazonaws.com", "/",
       "https://dynamodb.us-east-1.amazonaws.com"},
      {"https://DynamoDB.EU-West-1.AmazonAWS.com:8443",
       "https://DynamoDB.EU-West-1.AmazonAWS.com:8443/",
       "dynamodb.eu-west-1.amazonaws.com:8443", "/",
       "https://dynamodb.eu-west-1.amazonaws.com:8443"},
      /* the scheme in any case; localhost, LOCALHOST. and 127.0.0.1 one
      ** place (the Host header keeps the name) */
      {"HTTP://LOCALHOST.:8000/", "http://LOCALHOST.:8000/", "localhost.:8000",
       "/", "http://127.0.0.1:8000"},
      {"HtTpS://h", "https://h/", "h", "/", "https://h"},
      /* the scheme's default port is none; another scheme's is a port */
      {"http://localhost:80", "http://localhost:80/", "localhost", "/",
       "http://127.0.0.1"},
      {"https://h:443", "https://h:443/", "h", "/", "https://h"},
      {"http://h:443", "http://h:443/", "h:443", "/", "http://h:443"},
      {"https://h:80", "https://h:80/", "h:80", "/", "https://h:80"},
      {"http://h:080", "http://h:80/", "h", "/", "http://h"},
      {"http://h:", "http://h/", "h", "/", "http://h"},
      /* IPv6 literals, in lower case */
      {"http://[::1]:8000", "http://[::1]:8000/", "[::1]:8000", "/",
       "http://[::1]:8000"},
      {"http://[::FFFF:7F00:1]", "http://[::FFFF:7F00:1]/", "[::ffff:7f00:1]",
       "/", "http://[::ffff:7f00:1]"},
      /* a path: signed with "/" after it, kept without trailing slashes;
      ** dot segments removed as curl removes them */
      {"http://h:1/ddb/v1", "http://h:1/ddb/v1/", "h:1", "/ddb/v1/",
       "http://h:1/ddb/v1"},
      {"http://h/ddb//", "http://h/ddb/", "h", "/ddb/", "http://h/ddb"},
      {"http://h/a/../b/./c", "http://h/b/c/", "h", "/b/c/", "http://h/b/c"},
      {"http://h/a~b_c.d-e", "http://h/a~b_c.d-e/", "h", "/a~b_c.d-e/",
       "http://h/a~b_c.d-e"},
      /* a path's percent-encoding is sent as it is and signed encoded
      ** again, as SigV4 (and botocore) want for every service but S3 */
      {"http://h/%41", "http://h/%41/", "h", "/%2541/", "http://h/%41"},
      {"http://h/\xe1\x88\xb4", "http://h/\xe1\x88\xb4/", "h", "/%E1%88%B4/",
       "http://h/\xe1\x88\xb4"},
      /* a percent-encoded host is the host it decodes to, everywhere */
      {"http://local%68ost:8000", "http://localhost:8000/", "localhost:8000",
       "/", "http://127.0.0.1:8000"},
      /* IPv4 in other notations: the dotted address curl connects to */
      {"http://127.1:8000", "http://127.0.0.1:8000/", "127.0.0.1:8000", "/",
       "http://127.0.0.1:8000"},
      {"http://0x7f.0.0.1", "http://127.0.0.1/", "127.0.0.1", "/",
       "http://127.0.0.1"},
  };
  static const struct {
    const char *text;
    const char *message;
  } bad[] = {
      {"ftp://h", "bad endpoint 'ftp://h': must start with http:// or "
                  "https://"},
      {"h:8000", "bad endpoint 'h:8000': must start with http:// or https://"},
      {"http:/h", "bad endpoint 'http:/h': must start with http:// or "
                  "https://"},
      {"http://", "bad endpoint 'http://': no host"},
      {"http:///x", "bad endpoint 'http:///x': no host"},
      {"http://u@h", "bad endpoint: a user name or password in the URL is "
                     "not allowed"},
      {"http://127.0.0.1:1@h/", "bad endpoint: a user name or password in "
                                "the URL is not allowed"},
      {"ftp://u:secret@h", "bad endpoint: a user name or password in the URL "
                           "is not allowed"},
      {"http://h?x=1", "bad endpoint 'http://h?x=1': a query ('?...') is not "
                       "allowed: requests go to the endpoint's path"},
      {"http://h/x?", "bad endpoint 'http://h/x?': a query ('?...') is not "
                      "allowed: requests go to the endpoint's path"},
      {"http://h#f", "bad endpoint 'http://h#f': a fragment ('#...') is not "
                     "allowed"},
      {"http://h/x#", "bad endpoint 'http://h/x#': a fragment ('#...') is not "
                      "allowed"},
      {"http://h:8x0", "bad endpoint 'http://h:8x0': bad port (a number from "
                       "0 to 65535 after the host)"},
      {"http://h:1:", "bad endpoint 'http://h:1:': bad port (a number from 0 "
                      "to 65535 after the host)"},
      {"http://h:65536", "bad endpoint 'http://h:65536': bad port (a number "
                         "from 0 to 65535 after the host)"},
      {"http://[::1]x", "bad endpoint 'http://[::1]x': bad port (a number "
                        "from 0 to 65535 after the host)"},
      {"http://a b", "bad endpoint 'http://a b': bad host name (a blank, a "
                     "control character or a character no host name has)"},
      {"http://\x01h", "bad endpoint 'http://\\x01h': bad host name (a "
                       "blank, a control character or a character no host "
                       "name has)"},
      {"http://h%2Fx", "bad endpoint 'http://h%2Fx': bad host name (a blank, "
                       "a control character or a character no host name "
                       "has)"},
      {"http://h%20x", "bad endpoint 'http://h%20x': bad host name (a blank, "
                       "a control character or a character no host name "
                       "has)"},
      {"http://[v1.x]", "bad endpoint 'http://[v1.x]': bad IPv6 address"},
      {"http://h/a b", "bad endpoint 'http://h/a b': bad path (a blank or a "
                       "control character)"},
      {"http://[fe80::1%25eth0]:8000",
       "bad endpoint 'http://[fe80::1%25eth0]:8000': an IPv6 zone id "
       "('%25eth0') is not supported: give the address without it"},
      {"http://[::1%25lo]", "bad endpoint 'http://[::1%25lo]': an IPv6 zone "
                            "id ('%25lo') is not supported: give the address "
                            "without it"},
      {"http://b\xc3\xbc"
       "cher.de",
       "bad endpoint 'http://b\xc3\xbc"
       "cher.de': the host name must be ASCII (for an international name, "
       "its xn-- form)"},
  };
  ddb_endpoint ep;
  ddb_error err;
  size_t i;
  char longhost[400];
  for(i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
    memset(&err, 0, sizeof(err));
    if(!CHECK(ddb_endpoint_parse(ok[i].text, "", &ep, &err) == DDB_OK)) {
      tap_diag("%s: %s", ok[i].text, err.message);
      continue;
    }
    if(!CHECK_STR(ep.url, ok[i].url) || !CHECK_STR(ep.host, ok[i].host) ||
       !CHECK_STR(ep.sign_path, ok[i].sign_path) ||
       !CHECK_STR(ep.canonical, ok[i].canonical))
      tap_diag("%s", ok[i].text);
    ddb_endpoint_free(&ep);
  }
  for(i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    memset(&err, 0, sizeof(err));
    if(!CHECK(ddb_endpoint_parse(bad[i].text, "", &ep, &err) ==
              DDB_ERR_CONFIG))
      tap_diag("%s", bad[i].text);
    if(!CHECK_STR(err.message, bad[i].message))
      tap_diag("%s", bad[i].text);
    CHECK(ep.url == NULL && ep.host == NULL);
  }
  /* where it came from is named */
  CHECK_INT(ddb_endpoint_parse("http://h?x", " (AWS_ENDPOINT_URL)", &ep, &err),
            DDB_ERR_CONFIG);
  CHECK_STR(err.message, "bad endpoint 'http://h?x' (AWS_ENDPOINT_URL): a "
                         "query ('?...') is not allowed: requests go to the "
                         "endpoint's path");
  /* too long for what is signed */
  memset(longhost, 'a', sizeof(longhost));
  memcpy(longhost, "http://", 7);
  longhost[sizeof(longhost) - 1] = 0;
  CHECK_INT(ddb_endpoint_parse(longhost, "", &ep, &err), DDB_ERR_CONFIG);
  CHECK(strstr(err.message, "': host too long") != NULL);
}

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

const tap_test tap_sigv4_tests[] = {
    {"crypto: ddb_hex as printf's %02x (every byte, lengths 0-70)", test_hex},
    {"crypto: SHA-256 of libcrypto, FIPS 180-2's examples, whole and "
     "streamed",
     test_sha256},
    {"crypto: HMAC-SHA256 of libcrypto, RFC 4231, a prepared key duplicated",
     test_hmac},
    {"sigv4: AWS's published vectors", test_vectors},
    {"sigv4: DynamoDB form against botocore and the general form", test_json},
    {"sigv4: X-Amz-Date", test_amz_date},
    {"sigv4: signing key cached per date", test_key_cache},
    {"sigv4: signing key cache, 4 threads across a date change",
     test_key_cache_threads},
    {"sigv4: the endpoint parsed once: URL, Host, canonical URI, place",
     test_endpoint},
    {"crypto: CRC-32 of zlib (x-amz-crc32), check value 0xCBF43926",
     test_crc32},
    {NULL, NULL}};
