/*
** test_sigv4.c -- SigV4 as libcurl signs it (CURLOPT_AWS_SIGV4, what
** client/http.c uses), against AWS's published test vectors, the SHA-256
** and HMAC-SHA256 of client/sha256.c, and the CRC-32 of x-amz-crc32.
**
** SHA-256: FIPS 180-2's examples ("abc", the 448-bit two-block message, a
** million 'a') and the empty string, in one piece and streamed in pieces
** of every size.  HMAC-SHA256: RFC 4231's test cases 1-4, 6 and 7 (5 is a
** truncated MAC).
**
** The vectors come from AWS's SigV4 test suite (the copy in
** awslabs/aws-c-auth, tests/aws-signing-test-suite/v4/): credentials
** AKIDEXAMPLE / wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, region us-east-1,
** service "service", time 2015-08-30T12:36:00Z.  Those that apply to what
** we send (a request to "/", headers, a session token) are used; the ones
** about paths and query strings do not apply (DynamoDB is always POST /).
**
** The clock is fixed by handing curl an X-Amz-Date header, which its SigV4
** code then signs with (and sends twice; the listener does not mind).
** Each request goes to a listener thread on 127.0.0.1, reached as
** http://example.amazonaws.com/ through CURLOPT_CONNECT_TO so that the
** Host header is the vectors' own; the listener keeps the request's head
** and the test compares its Authorization header byte for byte.
*/
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../client/ddb_client_int.h"
#include "../../client/sigv4.h"
#include "tap.h"

#define VEC_AK    "AKIDEXAMPLE"
#define VEC_SK    "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define VEC_DATE  "X-Amz-Date: 20150830T123600Z"
#define VEC_SIGV4 "aws:amz:us-east-1:service"
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
** SHA-256 and HMAC-SHA256
*/

/* FIPS 180-2's examples and the empty string, in one call and streamed in
** pieces of every size from 1 to 130 bytes. */
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
  unsigned char d[DDB_SHA256_LEN];
  char hex[65];
  size_t i, piece, off, n;
  ddb_sha256_ctx s;
  char *a;

  for(i = 0; i < sizeof(kat) / sizeof(kat[0]); i++) {
    ddb_sha256(kat[i].msg, strlen(kat[i].msg), d);
    hex32(d, hex);
    CHECK_STR(hex, kat[i].hex);
  }

  /* one million 'a': in one piece, and in pieces of 1..130 bytes */
  n = 1000000;
  a = malloc(n);
  if(!CHECK(a != NULL))
    return;
  memset(a, 'a', n);
  ddb_sha256(a, n, d);
  hex32(d, hex);
  CHECK_STR(
      hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  for(piece = 1; piece <= 130; piece++) {
    ddb_sha256_init(&s);
    for(off = 0; off < n; off += piece)
      ddb_sha256_update(&s, a + off, off + piece <= n ? piece : n - off);
    ddb_sha256_final(&s, d);
    hex32(d, hex);
    if(!CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d3"
                       "9ccc7112cd0"))
      tap_diag("pieces of %zu bytes", piece);
  }
  free(a);

  /* the padding boundaries: 55, 56, 63, 64 and 65 bytes, one call against
  ** byte by byte */
  {
    static const size_t lens[] = {55, 56, 63, 64, 65, 119, 120, 128};
    unsigned char e[DDB_SHA256_LEN];
    char buf[128];
    memset(buf, 'q', sizeof(buf));
    for(i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
      ddb_sha256(buf, lens[i], d);
      ddb_sha256_init(&s);
      for(off = 0; off < lens[i]; off++)
        ddb_sha256_update(&s, buf + off, 1);
      ddb_sha256_final(&s, e);
      CHECK_MEM(d, sizeof(d), e, sizeof(e));
    }
  }
}

/* RFC 4231, test cases 1-4, 6 and 7, in one call and through a prepared
** context copied for two messages. */
static void test_hmac_sha256(void) {
  static const char case6[] =
      "Test Using Larger Than Block-Size Key - Hash Key First";
  static const char case7[] =
      "This is a test using a larger than block-size key and a larger than "
      "block-size data. The key needs to be hashed before being used by the "
      "HMAC algorithm.";
  unsigned char key[131], data[50], d[DDB_SHA256_LEN];
  char hex[65];
  ddb_hmac_sha256_ctx m, copy;
  int i;

  /* 1: 20 x 0x0b, "Hi There" */
  memset(key, 0x0b, 20);
  ddb_hmac_sha256(key, 20, "Hi There", 8, d);
  hex32(d, hex);
  CHECK_STR(
      hex, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  /* 2: "Jefe" */
  ddb_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, d);
  hex32(d, hex);
  CHECK_STR(
      hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  /* 3: 20 x 0xaa, 50 x 0xdd */
  memset(key, 0xaa, 20);
  memset(data, 0xdd, 50);
  ddb_hmac_sha256(key, 20, data, 50, d);
  hex32(d, hex);
  CHECK_STR(
      hex, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  /* 4: 0x01..0x19, 50 x 0xcd */
  for(i = 0; i < 25; i++)
    key[i] = (unsigned char)(i + 1);
  memset(data, 0xcd, 50);
  ddb_hmac_sha256(key, 25, data, 50, d);
  hex32(d, hex);
  CHECK_STR(
      hex, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  /* 6 and 7: a 131-byte key (hashed first), with one prepared context */
  memset(key, 0xaa, 131);
  ddb_hmac_sha256_init(&m, key, 131);
  copy = m;
  ddb_hmac_sha256_update(&copy, case6, sizeof(case6) - 1);
  ddb_hmac_sha256_final(&copy, d);
  hex32(d, hex);
  CHECK_STR(
      hex, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  copy = m;
  ddb_hmac_sha256_update(&copy, case7, 50);
  ddb_hmac_sha256_update(&copy, case7 + 50, sizeof(case7) - 1 - 50);
  ddb_hmac_sha256_final(&copy, d);
  hex32(d, hex);
  CHECK_STR(
      hex, "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
  ddb_wipe(&m, sizeof(m));
}

/* The listener: one connection, one request. */
typedef struct listener {
  int fd;
  int port;
  pthread_t tid;
  char head[16384]; /* the request's head, NUL-terminated */
} listener;

/* Read one request on connection c into l->head (its body is read and
** dropped), answer 200 {}, close. */
static void serve_one(listener *l, int c) {
  static const char ans[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
                            "Connection: close\r\n\r\n{}";
  size_t got = 0;
  char *end = NULL, *cl;
  long body = 0, have;
  while(got + 1 < sizeof(l->head)) {
    ssize_t n = recv(c, l->head + got, sizeof(l->head) - 1 - got, 0);
    if(n <= 0)
      break;
    got += (size_t)n;
    l->head[got] = 0;
    if((end = strstr(l->head, "\r\n\r\n")) != NULL)
      break;
  }
  if(end) {
    cl = strcasestr(l->head, "\r\nContent-Length:");
    if(cl && cl < end)
      body = strtol(cl + 17, NULL, 10);
    have = (long)(l->head + got - (end + 4));
    while(have < body) {
      char tmp[4096];
      ssize_t n = recv(c, tmp, sizeof(tmp), 0);
      if(n <= 0)
        break;
      have += n;
    }
    end[2] = 0; /* keep the head with its last CRLF */
  }
  if(send(c, ans, sizeof(ans) - 1, MSG_NOSIGNAL) < 0)
    tap_diag("listener: send failed");
  close(c);
}

/* The listener thread: accept one connection and serve it. */
static void *listener_main(void *arg) {
  listener *l = arg;
  int c = accept(l->fd, NULL, NULL);
  if(c >= 0)
    serve_one(l, c);
  return NULL;
}

/* Start a listener on a free loopback port.  Returns 0 or -1. */
static int listener_start(listener *l) {
  struct sockaddr_in a;
  socklen_t len = sizeof(a);
  memset(l, 0, sizeof(*l));
  l->fd = socket(AF_INET, SOCK_STREAM, 0);
  if(l->fd < 0)
    return -1;
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if(bind(l->fd, (struct sockaddr *)&a, sizeof(a)) || listen(l->fd, 4) ||
     getsockname(l->fd, (struct sockaddr *)&a, &len) ||
     pthread_create(&l->tid, NULL, listener_main, l)) {
    close(l->fd);
    return -1;
  }
  l->port = ntohs(a.sin_port);
  return 0;
}

/* Wait for the listener thread and close its socket. */
static void listener_stop(listener *l) {
  pthread_join(l->tid, NULL);
  close(l->fd);
}

/* The value of header name in head (a malloc'ed copy of the first one), or
** NULL. */
static char *header_of(const char *head, const char *name) {
  size_t n = strlen(name);
  const char *p = head;
  while((p = strstr(p, "\r\n")) != NULL) {
    p += 2;
    if(strncasecmp(p, name, n) == 0 && p[n] == ':') {
      const char *v = p + n + 1, *e;
      while(*v == ' ')
        v++;
      e = strstr(v, "\r\n");
      if(!e)
        e = v + strlen(v);
      return strndup(v, (size_t)(e - v));
    }
  }
  return NULL;
}

/* Discard curl's response body. */
static size_t sink(char *p, size_t size, size_t n, void *ud) {
  (void)p;
  (void)ud;
  return size * n;
}

/* Send method (GET or POST, without a body) to
** http://example.amazonaws.com/ with the headers hdr (NULL terminated) and
** token (or NULL), signed by curl with the vectors' credentials and clock;
** return the Authorization header curl sent (malloc'ed) or NULL.  (Bodies,
** non-ASCII ones too, are checked against botocore in
** test/suites/22-sigv4.sh.) */
static char *sign_with_curl(const char *method, const char *const *hdr,
                            const char *token) {
  listener l;
  CURL *h;
  struct curl_slist *list = NULL, *to = NULL;
  char connect_to[64], tok[1024];
  CURLcode cc;
  int i;
  if(listener_start(&l))
    return NULL;
  h = curl_easy_init();
  snprintf(connect_to, sizeof(connect_to),
           "example.amazonaws.com:80:127.0.0.1:%d", l.port);
  list = curl_slist_append(list, VEC_DATE);
  for(i = 0; hdr && hdr[i]; i++)
    list = curl_slist_append(list, hdr[i]);
  if(token) {
    snprintf(tok, sizeof(tok), "x-amz-security-token: %s", token);
    list = curl_slist_append(list, tok);
  }
  if(strcmp(method, "POST") == 0)
    /* a POST without a body and without the Content-Type curl would add
    ** (and sign) for one: the vectors have none */
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "POST");
  to = curl_slist_append(NULL, connect_to);
  curl_easy_setopt(h, CURLOPT_CONNECT_TO, to);
  curl_easy_setopt(h, CURLOPT_URL, "http://example.amazonaws.com/");
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(h, CURLOPT_AWS_SIGV4, VEC_SIGV4);
  curl_easy_setopt(h, CURLOPT_USERNAME, VEC_AK);
  curl_easy_setopt(h, CURLOPT_PASSWORD, VEC_SK);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  cc = curl_easy_perform(h);
  curl_easy_cleanup(h);
  curl_slist_free_all(list);
  curl_slist_free_all(to);
  listener_stop(&l);
  if(cc != CURLE_OK) {
    tap_diag("curl: %s", curl_easy_strerror(cc));
    return NULL;
  }
  return header_of(l.head, "Authorization");
}

typedef struct vector {
  const char *name;
  const char *method;
  const char *hdr[4];
  const char *token;
  const char *signed_headers;
  const char *signature;
} vector;

static const vector vectors[] = {
    {"get-vanilla",
     "GET",
     {NULL},
     NULL,
     "host;x-amz-date",
     "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"},
    {"post-vanilla",
     "POST",
     {NULL},
     NULL,
     "host;x-amz-date",
     "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"},
    {"get-header-value-trim",
     "GET",
     {"My-Header1: value1", "My-Header2: \"a   b   c\"", NULL},
     NULL,
     "host;my-header1;my-header2;x-amz-date",
     "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"},
    {"post-header-key-sort",
     "POST",
     {"My-Header1:value1", NULL},
     NULL,
     "host;my-header1;x-amz-date",
     "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c"},
    {"post-header-value-case",
     "POST",
     {"My-Header1:VALUE1", NULL},
     NULL,
     "host;my-header1;x-amz-date",
     "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d"},
    {"get-vanilla-with-session-token",
     "GET",
     {NULL},
     "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267",
     "host;x-amz-date;x-amz-security-token",
     "07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8"},
    {"post-sts-header-before",
     "POST",
     {NULL},
     STS_TOKEN,
     "host;x-amz-date;x-amz-security-token",
     "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"},
};

static void test_vectors(void) {
  size_t i;
  char want[512];
  for(i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
    const vector *v = &vectors[i];
    char *got = sign_with_curl(v->method, v->hdr, v->token);
    snprintf(want, sizeof(want), VEC_PREFIX "SignedHeaders=%s, Signature=%s",
             v->signed_headers, v->signature);
    if(!CHECK_STR(got, want))
      tap_diag("vector %s", v->name);
    free(got);
  }
}

/* CRC-32 check values: the standard "123456789", empty input, continuing
** a CRC piecewise, and what DynamoDB Local sends for "{}" (2745614147). */
static void test_crc32(void) {
  CHECK_INT(ddb_crc32(0, "123456789", 9), 0xCBF43926u);
  CHECK_INT(ddb_crc32(0, NULL, 0), 0);
  CHECK_INT(ddb_crc32(0, "{}", 2), 2745614147u);
  CHECK_INT(ddb_crc32(ddb_crc32(0, "12345", 5), "6789", 4), 0xCBF43926u);
  CHECK_INT(ddb_crc32(0, "The quick brown fox jumps over the lazy dog", 43),
            0x414FA339u);
}

const tap_test tap_sigv4_tests[] = {
    {"sigv4: SHA-256, FIPS 180-2 examples, streamed", test_sha256},
    {"sigv4: HMAC-SHA256, RFC 4231 cases 1-4, 6, 7", test_hmac_sha256},
    {"sigv4: AWS's published vectors, signed by curl", test_vectors},
    {"sigv4: CRC-32 of x-amz-crc32", test_crc32},
    {NULL, NULL}};
