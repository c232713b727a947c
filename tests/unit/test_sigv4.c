/*
** test_sigv4.c -- our SigV4 signer (client/sigv4.c).  (The primitives it
** uses: test_crypto.c; the endpoint whose Host and path it signs:
** test_config.c.)
**
** AWS's published vectors (the copy in awslabs/aws-c-auth,
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
** signing at once and X-Amz-Date.
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

const tap_test tap_sigv4_tests[] = {
    {"sigv4: AWS's published vectors", test_vectors},
    {"sigv4: DynamoDB form against botocore and the general form", test_json},
    {"sigv4: X-Amz-Date", test_amz_date},
    {"sigv4: signing key cached per date", test_key_cache},
    {"sigv4: signing key cache, 4 threads across a date change",
     test_key_cache_threads},
    {NULL, NULL}};
