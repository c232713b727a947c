/*
** test_shared.c -- the shared cache tier's parts that need no Redis:
** URLs, the names and sealed values (cache/shared.c), the tier's root key
** (client/config.c), and the RESP client and the tier against a hostile
** server: a thread on a loopback port that answers every request with
** the same bytes (wrong types, a huge bulk length, garbage, nothing,
** a closed socket).  tests/suites/60-redis.sh runs the rest against a
** real redis-server.
*/
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../cache/ddb_cache.h"
#include "../../cache/resp.h"
#include "../../cache/shared.h"
#include "../../client/ddb_client_int.h"
#include "tap.h"

/* ------------------------------------------------------------------------
** URLs
*/
static void test_url_parse(void) {
  ddbc_redis_url u;
  char why[200];
  static const char *const bad[] = {
      "http://127.0.0.1:6379", "127.0.0.1:6379", "redis://",
      "redis://:6379",         "redis://h:0",    "redis://h:65536",
      "redis://h:12x",         "redis://h/x",    "redis://h/1?timeout=1",
      "redis://[::1",          "redis://h st",   "redis://u:%zz@h",
      "rediss://h#frag"};
  size_t i;

  CHECK(ddbc_redis_url_parse("redis://127.0.0.1", &u, why, sizeof(why)) == 0);
  CHECK_STR(u.host, "127.0.0.1");
  CHECK_INT(u.port, 6379);
  CHECK_INT(u.db, 0);
  CHECK_INT(u.tls, 0);
  CHECK_INT(u.has_password, 0);
  CHECK(ddbc_redis_url_parse("rediss://app:p%40ss%3Aw@cache.example:6380/3",
                             &u, why, sizeof(why)) == 0);
  CHECK_INT(u.tls, 1);
  CHECK_STR(u.user, "app");
  CHECK_STR(u.password, "p@ss:w");
  CHECK_INT(u.has_password, 1);
  CHECK_STR(u.host, "cache.example");
  CHECK_INT(u.port, 6380);
  CHECK_INT(u.db, 3);
  CHECK(ddbc_redis_url_parse("redis://:secret@[::1]:7000/", &u, why,
                             sizeof(why)) == 0);
  CHECK_STR(u.host, "::1");
  CHECK_STR(u.user, "");
  CHECK_STR(u.password, "secret");
  CHECK_INT(u.port, 7000);
  ddbc_redis_url_wipe(&u);
  CHECK_STR(u.password, "");
  for(i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    why[0] = 0;
    CHECK_MSG(ddbc_redis_url_parse(bad[i], &u, why, sizeof(why)) == -1,
              "accepted '%s'", bad[i]);
    CHECK_MSG(why[0] != 0, "no reason for '%s'", bad[i]);
  }
  CHECK(ddbc_redis_url_parse("http://h", &u, why, sizeof(why)) == -1);
  CHECK(strstr(why, "redis:// or rediss://") != NULL);
}

static void test_url_redact(void) {
  char out[200];
  ddbc_redis_url_redact("rediss://app:hunter2@h:6380/1", out, sizeof(out));
  CHECK_STR(out, "rediss://app:***@h:6380/1");
  ddbc_redis_url_redact("redis://:hunter2@h", out, sizeof(out));
  CHECK_STR(out, "redis://:***@h");
  ddbc_redis_url_redact("redis://h:1/2", out, sizeof(out));
  CHECK_STR(out, "redis://h:1/2");
}

/* A bad URL from the option or the environment: a clear error, no
** password in it; "off" and "" are no tier. */
static void test_open_errors(void) {
  ddbc_shared *sh = (ddbc_shared *)1;
  ddb_error err;
  ddb_error_clear(&err);
  CHECK(ddbc_shared_open("memcached://h", 0, &sh, &err) == DDB_ERR_CONFIG);
  CHECK(sh == NULL);
  CHECK_STR(err.message, "bad shared_cache 'memcached://h': the scheme must "
                         "be redis:// or rediss:// (TLS)");
  ddb_error_clear(&err);
  CHECK(ddbc_shared_open("redis://u:hunter2@h:99999", 0, &sh, &err) ==
        DDB_ERR_CONFIG);
  CHECK(strstr(err.message, "hunter2") == NULL);
  CHECK(strstr(err.message, "u:***@h:99999") != NULL);
  setenv("DYNAMODB_SHARED_CACHE", "redis://h:x", 1);
  ddb_error_clear(&err);
  CHECK(ddbc_shared_open(NULL, 0, &sh, &err) == DDB_ERR_CONFIG);
  CHECK(strstr(err.message, "bad DYNAMODB_SHARED_CACHE 'redis://h:x'") !=
        NULL);
  unsetenv("DYNAMODB_SHARED_CACHE");
  CHECK(ddbc_shared_open(NULL, 0, &sh, &err) == DDB_OK && sh == NULL);
  CHECK(ddbc_shared_open("off", 0, &sh, &err) == DDB_OK && sh == NULL);
  CHECK(ddbc_shared_open("", 0, &sh, &err) == DDB_OK && sh == NULL);
}

/* ------------------------------------------------------------------------
** Names, values, the root key
*/
static void test_seal_open(void) {
  unsigned char root[32], other[32];
  char name[DDBC_SHARED_NAME_LEN + 1], name2[DDBC_SHARED_NAME_LEN + 1];
  static const char msg[] = "an item of table Orders";
  ddb_buf v, p;
  size_t i;
  memset(root, 7, sizeof(root));
  memset(other, 8, sizeof(other));
  ddbc_shared_name(root, 'I', "\x06Orders\x01k", 9, name);
  ddbc_shared_name(root, 'I', "\x06Orders\x01l", 9, name2);
  ddb_buf_init(&v, 1 << 20);
  ddb_buf_init(&p, 1 << 20);
  CHECK(ddbc_shared_seal(root, name, (const unsigned char *)msg,
                         sizeof(msg) - 1, &v) == 0);
  CHECK_INT(v.len, 1 + 12 + sizeof(msg) - 1 + 16);
  CHECK(memmem(v.p, v.len, "Orders", 6) == NULL); /* encrypted */
  CHECK(ddbc_shared_open_value(root, name, (unsigned char *)v.p, v.len, &p) ==
        0);
  CHECK_MEM(p.p, p.len, msg, sizeof(msg) - 1);
  /* another key's name, other credentials, any changed byte, cut short */
  ddb_buf_reset(&p);
  CHECK(ddbc_shared_open_value(root, name2, (unsigned char *)v.p, v.len, &p) ==
        -1);
  CHECK(ddbc_shared_open_value(other, name, (unsigned char *)v.p, v.len, &p) ==
        -1);
  for(i = 0; i < v.len; i++) {
    v.p[i] ^= 0x20;
    CHECK_MSG(ddbc_shared_open_value(root, name, (unsigned char *)v.p, v.len,
                                     &p) == -1,
              "byte %zu changed, still opened", i);
    v.p[i] ^= 0x20;
  }
  CHECK(ddbc_shared_open_value(root, name, (unsigned char *)v.p, v.len - 1,
                               &p) == -1);
  CHECK(ddbc_shared_open_value(root, name, (unsigned char *)v.p, 5, &p) == -1);
  CHECK(ddbc_shared_open_value(root, name, (unsigned char *)"", 0, &p) == -1);
  /* two seals of one plaintext differ (a random nonce) */
  {
    ddb_buf v2;
    ddb_buf_init(&v2, 1 << 20);
    CHECK(ddbc_shared_seal(root, name, (const unsigned char *)msg,
                           sizeof(msg) - 1, &v2) == 0);
    CHECK(v2.len == v.len && memcmp(v2.p, v.p, v.len) != 0);
    ddb_buf_free(&v2);
  }
  ddb_buf_free(&v);
  ddb_buf_free(&p);
}

static void test_names(void) {
  unsigned char a[32], b[32];
  char n1[DDBC_SHARED_NAME_LEN + 1], n2[DDBC_SHARED_NAME_LEN + 1];
  memset(a, 1, sizeof(a));
  memset(b, 2, sizeof(b));
  ddbc_shared_name(a, 'I', "\x06Orders", 7, n1);
  CHECK_INT(strlen(n1), DDBC_SHARED_NAME_LEN);
  CHECK(strncmp(n1, "ddbc1:", 6) == 0);
  CHECK(strstr(n1, "Orders") == NULL);
  ddbc_shared_name(a, 'I', "\x06Orders", 7, n2);
  CHECK_STR(n1, n2); /* the same in every process */
  ddbc_shared_name(b, 'I', "\x06Orders", 7, n2);
  CHECK(strcmp(n1, n2) != 0); /* other credentials */
  ddbc_shared_name(a, 'Q', "\x06Orders", 7, n2);
  CHECK(strcmp(n1, n2) != 0); /* other kind */
}

/* ddb_tier_root of the endpoint as ddb_endpoint_parse makes it canonical:
** 0, or -1 when the endpoint is refused. */
static int tier_root_of(const char *url, const char *region, const char *sk,
                        const char *token, unsigned char *out) {
  ddb_endpoint ep;
  ddb_error e;
  int rc;
  ddb_error_clear(&e);
  if(ddb_endpoint_parse(url, "", &ep, &e) != DDB_OK)
    return -1;
  rc = ddb_tier_root(ep.canonical, region, "AK", sk, token, out);
  ddb_endpoint_free(&ep);
  return rc;
}

static void test_tier_root(void) {
  unsigned char r1[32], r2[32];
  CHECK(tier_root_of("http://localhost:8000/", "us-east-1", "SK", NULL, r1) ==
        0);
  CHECK(tier_root_of("http://127.0.0.1:8000", "us-east-1", "SK", "", r2) == 0);
  CHECK(memcmp(r1, r2, 32) == 0); /* one server, however spelled */
  CHECK(tier_root_of("http://127.0.0.1:8000", "us-east-1", "SK2", NULL, r2) ==
        0);
  CHECK(memcmp(r1, r2, 32) != 0); /* another secret */
  CHECK(tier_root_of("http://127.0.0.1:8000", "us-east-1", "SK", "tok", r2) ==
        0);
  CHECK(memcmp(r1, r2, 32) != 0); /* another session token */
  CHECK(tier_root_of("http://127.0.0.1:8000", "eu-west-1", "SK", NULL, r2) ==
        0);
  CHECK(memcmp(r1, r2, 32) != 0); /* another region */
  CHECK(tier_root_of("http://127.0.0.1:8001", "us-east-1", "SK", NULL, r2) ==
        0);
  CHECK(memcmp(r1, r2, 32) != 0); /* another server */
  CHECK(tier_root_of("ftp://x", "us-east-1", "SK", NULL, r2) == -1);
}

/* ------------------------------------------------------------------------
** A hostile server: every request it reads gets `answer` (n bytes), after
** `delay_ms`; `close_after`: the socket is closed after the answer.
*/
typedef struct fake {
  int fd, port;
  const char *answer;
  size_t n;
  int delay_ms;
  int close_after;
  int accepted; /* connections (atomic) */
  int stop;
  pthread_t th;
} fake;

/* Serve one connection until it closes (or stop). */
static void fake_serve(fake *f, int c) {
  char buf[4096];
  for(;;) {
    struct pollfd p = {c, POLLIN, 0};
    ssize_t k;
    if(__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE))
      break;
    if(poll(&p, 1, 20) == 0)
      continue; /* look at stop again */
    k = recv(c, buf, sizeof(buf), 0);
    if(k <= 0)
      break;
    if(f->delay_ms)
      usleep((useconds_t)f->delay_ms * 1000);
    if(f->n && send(c, f->answer, f->n, MSG_NOSIGNAL) < 0)
      break;
    if(f->close_after)
      break;
  }
  close(c);
}

static void *fake_main(void *arg) {
  fake *f = arg;
  for(;;) {
    int c = accept(f->fd, NULL, NULL);
    if(c < 0 || __atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
      if(c >= 0)
        close(c);
      break;
    }
    __atomic_add_fetch(&f->accepted, 1, __ATOMIC_RELEASE);
    fake_serve(f, c);
  }
  return NULL;
}

static int fake_start(fake *f, const char *answer, size_t n, int delay_ms,
                      int close_after) {
  struct sockaddr_in a;
  socklen_t al = sizeof(a);
  memset(f, 0, sizeof(*f));
  f->answer = answer;
  f->n = n;
  f->delay_ms = delay_ms;
  f->close_after = close_after;
  f->fd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if(f->fd < 0 || bind(f->fd, (struct sockaddr *)&a, sizeof(a)) ||
     listen(f->fd, 8) || getsockname(f->fd, (struct sockaddr *)&a, &al))
    return -1;
  f->port = ntohs(a.sin_port);
  return pthread_create(&f->th, NULL, fake_main, f);
}

/* Stop the server: wake accept() with a connection of our own. */
static void fake_stop(fake *f) {
  struct sockaddr_in a;
  int c;
  __atomic_store_n(&f->stop, 1, __ATOMIC_RELEASE);
  shutdown(f->fd, SHUT_RDWR);
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons((unsigned short)f->port);
  c = socket(AF_INET, SOCK_STREAM, 0);
  if(c >= 0) {
    connect(c, (struct sockaddr *)&a, sizeof(a));
    close(c);
  }
  pthread_join(f->th, NULL);
  close(f->fd);
}

/* One GET on a fresh connection to f, bounded by 200 ms: the result. */
static int resp_get(fake *f, ddbc_resp_reply *rp) {
  ddbc_redis_url u;
  ddbc_resp *r = NULL;
  char url[64], why[160];
  ddb_buf b;
  int rc;
  snprintf(url, sizeof(url), "redis://127.0.0.1:%d", f->port);
  if(ddbc_redis_url_parse(url, &u, why, sizeof(why)))
    return -1;
  rc = ddbc_resp_connect(&u, NULL, ddbc_resp_clock() + 0.2, &r, why,
                         sizeof(why));
  if(rc)
    return rc;
  ddb_buf_init(&b, 4096);
  ddbc_resp_cmd(&b, 2);
  ddbc_resp_args(&b, "GET");
  ddbc_resp_args(&b, "k");
  rc = ddbc_resp_call(r, b.p, b.len, rp, 1, 8, ddbc_resp_clock() + 0.2, why,
                      sizeof(why));
  ddb_buf_free(&b);
  ddbc_resp_close(r, 0);
  return rc;
}

static void test_resp_replies(void) {
  static const struct {
    const char *answer;
    int want; /* DDBC_RESP_* */
    int type; /* the reply's type when OK */
  } cases[] = {
      {"$5\r\nhello\r\n", DDBC_RESP_OK, DDBC_RESP_BULK},
      {"$-1\r\n", DDBC_RESP_OK, DDBC_RESP_NIL},
      {":42\r\n", DDBC_RESP_OK, DDBC_RESP_INT},
      {"-ERR wrong\r\n", DDBC_RESP_OK, DDBC_RESP_ERROR},
      {"*2\r\n$1\r\na\r\n$-1\r\n", DDBC_RESP_OK, DDBC_RESP_ARRAY},
      {"$999999999999\r\n", DDBC_RESP_FAILED, 0}, /* huge: never read */
      {"$5000000\r\n", DDBC_RESP_FAILED, 0},      /* over 4 MiB */
      {"*99999999\r\n", DDBC_RESP_FAILED, 0},     /* too many values */
      {"GARBAGE\r\n", DDBC_RESP_FAILED, 0},
      {"$5\r\nhelloXX", DDBC_RESP_FAILED, 0}, /* no CRLF after the bulk */
      {":12a\r\n", DDBC_RESP_FAILED, 0},
      {"$-7\r\n", DDBC_RESP_FAILED, 0},
      /* XREAD's 5 levels of arrays (DDBC_RESP_MAX_DEPTH), not 6 */
      {"*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", DDBC_RESP_OK, DDBC_RESP_ARRAY},
      {"*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", DDBC_RESP_FAILED,
       0},                                 /* too deep */
      {"$5\r\nhel", DDBC_RESP_TIMEOUT, 0}, /* then nothing more */
  };
  size_t i;
  for(i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    fake f;
    ddbc_resp_reply rp;
    int rc;
    memset(&rp, 0, sizeof(rp));
    if(!CHECK(fake_start(&f, cases[i].answer, strlen(cases[i].answer), 0, 0) ==
              0))
      return;
    rc = resp_get(&f, &rp);
    CHECK_MSG(rc == cases[i].want, "answer %zu: got %d, want %d", i, rc,
              cases[i].want);
    if(rc == DDBC_RESP_OK && cases[i].want == DDBC_RESP_OK)
      CHECK_MSG(rp.node[0].type == cases[i].type, "answer %zu: type %c", i,
                rp.node[0].type);
    ddbc_resp_reply_free(&rp);
    fake_stop(&f);
  }
  /* a server that answers nothing at all, and one that hangs up */
  {
    fake f;
    ddbc_resp_reply rp;
    memset(&rp, 0, sizeof(rp));
    if(CHECK(fake_start(&f, "", 0, 0, 0) == 0)) {
      CHECK_INT(resp_get(&f, &rp), DDBC_RESP_TIMEOUT);
      ddbc_resp_reply_free(&rp);
      fake_stop(&f);
    }
    if(CHECK(fake_start(&f, "", 0, 0, 1) == 0)) {
      CHECK_INT(resp_get(&f, &rp), DDBC_RESP_FAILED);
      ddbc_resp_reply_free(&rp);
      fake_stop(&f);
    }
  }
}

/* The tier against hostile servers: a miss, counted; after a failure the
** tier backs off (the next lookup is skipped, no new connection); a
** wrong type is a miss on a connection that stays good. */
static ddb_client *tier_client(void) {
  ddb_config cfg;
  ddb_client *c = NULL;
  ddb_error err;
  memset(&cfg, 0, sizeof(cfg));
  cfg.endpoint = "http://127.0.0.1:1";
  cfg.region = "us-east-1";
  setenv("AWS_ACCESS_KEY_ID", "AKIDSHARED", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
  unsetenv("AWS_SESSION_TOKEN");
  setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
  ddb_error_clear(&err);
  if(ddb_client_new(&cfg, &c, &err))
    tap_diag("ddb_client_new: %s", err.message);
  return c;
}

static void test_tier_hostile(void) {
  static const char *const answers[] = {
      "GARBAGE\r\n",
      "$999999999999\r\n",
      "*1\r\n:5\r\n",
      "-OOM command not allowed\r\n",
      "$3\r\nabc\r\n",
      "*1\r\n$3\r\nabc\r\n",
      "*1\r\n$40\r\n\x01xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n"};
  ddb_client *c = tier_client();
  size_t i;
  if(!CHECK(c != NULL))
    return;
  for(i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
    fake f;
    ddbc_shared *sh = NULL;
    ddb_error err;
    ddbc_stats before, after;
    char url[64], *tail = "\x01T\x03key";
    size_t len = 6;
    ddb_item *found = NULL;
    unsigned char hit = 1;
    if(!CHECK(fake_start(&f, answers[i], strlen(answers[i]), 0, 0) == 0))
      break;
    snprintf(url, sizeof(url), "redis://127.0.0.1:%d", f.port);
    ddb_error_clear(&err);
    CHECK(ddbc_shared_open(url, 0.2, &sh, &err) == DDB_OK && sh);
    ddbc_stats_get(&before);
    ddbc_shared_get_items(sh, c, "T", &tail, &len, 1, 300, ddbc_shared_now(),
                          &found, &hit, NULL);
    ddbc_stats_get(&after);
    CHECK_MSG(hit != 1 && found == NULL, "answer %zu: a hit", i);
    if(i < 2) { /* not RESP: the connection is dropped, the tier backs off */
      CHECK_INT(after.shared_errors, before.shared_errors + 1);
      CHECK(ddbc_shared_status(sh, NULL, 0) == 1);
      ddbc_shared_get_items(sh, c, "T", &tail, &len, 1, 300, ddbc_shared_now(),
                            &found, &hit, NULL);
      ddbc_stats_get(&before);
      CHECK_INT(before.shared_skipped, after.shared_skipped + 1);
      CHECK_INT(__atomic_load_n(&f.accepted, __ATOMIC_ACQUIRE), 1);
    } else if(i < 5) { /* RESP of the wrong shape: a miss, still up */
      CHECK_INT(after.shared_errors, before.shared_errors + 1);
      CHECK(ddbc_shared_status(sh, NULL, 0) == 0);
      ddbc_shared_get_items(sh, c, "T", &tail, &len, 1, 300, ddbc_shared_now(),
                            &found, &hit, NULL);
      CHECK_INT(__atomic_load_n(&f.accepted, __ATOMIC_ACQUIRE), 1);
    } else { /* a value that is not ours: an authentication failure */
      CHECK_INT(after.shared_auth_failures, before.shared_auth_failures + 1);
      CHECK(ddbc_shared_status(sh, NULL, 0) == 0);
    }
    fake_stop(&f);
  }
  /* a slow server: a timeout, counted, then backing off */
  {
    fake f;
    ddbc_shared *sh = NULL;
    ddb_error err;
    ddbc_stats before, after;
    char url[64], why[160], *tail = "\x01T\x03key";
    size_t len = 6;
    ddb_item *found = NULL;
    unsigned char hit = 1;
    if(CHECK(fake_start(&f, "$-1\r\n", 5, 300, 0) == 0)) {
      snprintf(url, sizeof(url), "redis://127.0.0.1:%d", f.port);
      CHECK(ddbc_shared_open(url, 0.03, &sh, &err) == DDB_OK && sh);
      ddbc_stats_get(&before);
      ddbc_shared_get_items(sh, c, "T", &tail, &len, 1, 300, ddbc_shared_now(),
                            &found, &hit, NULL);
      ddbc_stats_get(&after);
      CHECK(hit == 0);
      CHECK_INT(after.shared_timeouts, before.shared_timeouts + 1);
      CHECK(ddbc_shared_status(sh, why, sizeof(why)) == 1);
      CHECK_STR(why, "timed out");
      fake_stop(&f);
    }
  }
  /* nothing listening: refused, counted, backing off */
  {
    fake f;
    ddbc_shared *sh = NULL;
    ddb_error err;
    ddbc_stats before, after;
    char url[64], *tail = "\x01T\x03key";
    size_t len = 6;
    ddb_item *found = NULL;
    unsigned char hit = 1;
    int port;
    if(CHECK(fake_start(&f, "", 0, 0, 0) == 0)) {
      port = f.port;
      fake_stop(&f); /* the port is closed now */
      snprintf(url, sizeof(url), "redis://127.0.0.1:%d/2", port);
      CHECK(ddbc_shared_open(url, 0.2, &sh, &err) == DDB_OK && sh);
      ddbc_stats_get(&before);
      ddbc_shared_get_items(sh, c, "T", &tail, &len, 1, 300, ddbc_shared_now(),
                            &found, &hit, NULL);
      ddbc_stats_get(&after);
      CHECK(hit == 0);
      CHECK_INT(after.shared_errors, before.shared_errors + 1);
      CHECK(ddbc_shared_status(sh, NULL, 0) == 1);
    }
  }
  ddb_client_free(c);
}

const tap_test tap_shared_tests[] = {
    {"shared: redis URLs", test_url_parse},
    {"shared: URLs redacted", test_url_redact},
    {"shared: bad URLs are clear errors", test_open_errors},
    {"shared: sealed values", test_seal_open},
    {"shared: names", test_names},
    {"shared: the tier's root key", test_tier_root},
    {"shared: RESP replies, hostile ones bounded", test_resp_replies},
    {"shared: the tier against a hostile server", test_tier_hostile},
    {NULL, NULL}};
