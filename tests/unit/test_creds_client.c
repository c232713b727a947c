/*
** test_creds_client.c -- credentials inside a client: short-lived ones
** fetched once, not per request, and refreshed once for many threads
** (client/signer.c); the secret and the session token wiped when the
** client is freed (heap scans); and the C API's error for a table that is
** not there.  The server is creds_fixtures.h's, on a thread of this
** process.  Every test saves and restores the environment it touches.
*/
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../api/api_int.h"
#include "../../client/ddb_client_int.h"
#include "../../client/http_int.h"
#include "../../client/sigv4.h"
#include "creds_fixtures.h"
#include "tap.h"

/* ------------------------------------------------------------------------
** Refresh (signer.c)
*/

/* The number of lines of the file at path (0 when missing). */
static int count_lines(const char *path) {
  FILE *f = fopen(path, "r");
  int n = 0, ch;
  if(!f)
    return 0;
  while((ch = fgetc(f)) != EOF)
    n += ch == '\n';
  fclose(f);
  return n;
}

typedef struct acquirer {
  ddb_client *c;
  ddb_signer *g;
  ddb_result rc;
} acquirer;

static void *acquire_main(void *arg) {
  acquirer *a = arg;
  ddb_error e;
  ddb_error_clear(&e);
  a->rc = ddb_signer_acquire(a->c, &a->g, &e);
  return NULL;
}

/* Mark c's credentials expired a second ago (as the clock would). */
static void expire_now(ddb_client *c) {
  pthread_mutex_lock(&c->cred_lock);
  c->sig->expires = (int64_t)time(NULL) - 1;
  pthread_mutex_unlock(&c->cred_lock);
}

/* A credential_process of credentials good for 4 minutes: 51 requests run
** it once (not once a request); once they expire, 8 threads at once run
** it once more and all sign with the new set; one that returns expired
** credentials makes the request fail, naming the source and the expiry. */
static void test_refresh(void) {
  sandbox s;
  ddb_config cfg;
  ddb_client *c = NULL;
  ddb_error e;
  char cfgtext[256], runs[160], ttl[160], script[1024];
  acquirer a[8];
  pthread_t tid[8];
  int i, ok = 1;
  if(!CHECK(sandbox_open(&s) == 0))
    return;
  snprintf(runs, sizeof(runs), "%s/runs", s.dir);
  snprintf(ttl, sizeof(ttl), "%s/ttl", s.dir);
  snprintf(script, sizeof(script),
           "#!/bin/sh\necho run >> '%s'\nsleep 0.2\n"
           "exp=$(date -u -d \"@$(( $(date +%%s) + $(cat '%s') ))\" "
           "+%%Y-%%m-%%dT%%H:%%M:%%SZ)\n"
           "echo \"{\\\"Version\\\": 1, \\\"AccessKeyId\\\": "
           "\\\"AK$(wc -l < '%s')\\\", \\\"SecretAccessKey\\\": "
           "\\\"s\\\", \\\"Expiration\\\": \\\"$exp\\\"}\"\n",
           runs, ttl, runs);
  put_script(s.script, script);
  put_file(ttl, "240\n");
  snprintf(cfgtext, sizeof(cfgtext),
           "[profile p]\nregion = us-east-1\ncredential_process = %s\n",
           s.script);
  put_file(s.config, cfgtext);
  memset(&cfg, 0, sizeof(cfg));
  cfg.profile = "p";
  cfg.endpoint = "http://127.0.0.1:9";
  ddb_error_clear(&e);
  if(!CHECK_MSG(ddb_client_new(&cfg, &c, &e) == DDB_OK, "client: %s",
                e.message)) {
    unlink(runs);
    unlink(ttl);
    sandbox_close(&s);
    return;
  }
  /* 51 requests, credentials 4 minutes from expiry: the one run */
  for(i = 0; i < 51; i++) {
    ddb_signer *g = NULL;
    ok &= ddb_signer_acquire(c, &g, &e) == DDB_OK;
    ddb_signer_release(c, g);
  }
  CHECK(ok);
  CHECK_INT(count_lines(runs), 1);
  /* expired: 8 threads at once, one refresh, all with the new set */
  expire_now(c);
  for(i = 0; i < 8; i++) {
    a[i].c = c;
    a[i].g = NULL;
    pthread_create(&tid[i], NULL, acquire_main, &a[i]);
  }
  for(i = 0; i < 8; i++)
    pthread_join(tid[i], NULL);
  CHECK_INT(count_lines(runs), 2);
  for(i = 0; i < 8; i++) {
    CHECK_INT(a[i].rc, DDB_OK);
    CHECK(a[i].g && a[i].g == a[0].g && a[i].g->expires > (int64_t)time(NULL));
    ddb_signer_release(c, a[i].g);
  }
  /* the process returns expired credentials: not used, an error */
  put_file(ttl, "-60\n");
  expire_now(c);
  {
    ddb_signer *g = NULL;
    CHECK_INT(ddb_signer_acquire(c, &g, &e), DDB_ERR_CONFIG);
    CHECK(g == NULL);
    CHECK_MSG(strncmp(e.message,
                      "the credentials from credential_process of profile "
                      "'p' expired at 20",
                      67) == 0 &&
                  strstr(e.message,
                         "Z and could not be refreshed: credential_process of "
                         "profile 'p' returned credentials that expired at "
                         "20") != NULL,
              "message: %s", e.message);
  }
  CHECK_INT(count_lines(runs), 3);
  ddb_client_free(c);
  unlink(runs);
  unlink(ttl);
  sandbox_close(&s);
}

/* ------------------------------------------------------------------------
** Secrets in memory
*/

/* The scan's buffer, and the patterns it looks for: static, so neither is
** in the heap or the anonymous mappings scanned (and matches inside them
** are skipped anyway). */
static unsigned char scan_buf[1 << 16];
static char pat_secret[64], pat_token[2100];

/* Write text to path with write(2): stdio's buffer would keep a copy. */
static int put_file_raw(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  size_t n = strlen(text), done = 0;
  while(fd >= 0 && done < n) {
    ssize_t w = write(fd, text + done, n - done);
    if(w <= 0)
      break;
    done += (size_t)w;
  }
  if(fd >= 0)
    close(fd);
  return fd >= 0 && done == n ? 0 : -1;
}

/* How many copies of pat[0..n) the process's heap and anonymous mappings
** hold (read through /proc/self/mem, so unreadable pages are skipped), not
** counting pat itself and the scan's own buffer; -1 if it cannot look. */
static int memory_copies(const char *pat, size_t n) {
  FILE *maps = fopen("/proc/self/maps", "r");
  int mem = open("/proc/self/mem", O_RDONLY), found = 0;
  char line[512];
  if(!maps || mem < 0) {
    if(maps)
      fclose(maps);
    if(mem >= 0)
      close(mem);
    return -1;
  }
  while(fgets(line, sizeof(line), maps)) {
    unsigned long lo, hi;
    char perms[8], path[256] = "";
    if(sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &lo, &hi, perms, path) <
       3)
      continue;
    if(perms[0] != 'r' || perms[1] != 'w' ||
       (path[0] && strcmp(path, "[heap]") != 0))
      continue;
    for(unsigned long at = lo; at < hi;) {
      size_t want = hi - at < sizeof(scan_buf) ? hi - at : sizeof(scan_buf);
      ssize_t got = pread(mem, scan_buf, want, (off_t)at);
      size_t i;
      if(got <= 0) {
        at += 4096; /* an unreadable page */
        continue;
      }
      for(i = 0; i + n <= (size_t)got; i++)
        if(scan_buf[i] == (unsigned char)pat[0] &&
           memcmp(scan_buf + i, pat, n) == 0) {
          unsigned long where = at + i;
          if((where >= (unsigned long)pat &&
              where < (unsigned long)pat + sizeof(pat_token)) ||
             (where >= (unsigned long)scan_buf &&
              where < (unsigned long)scan_buf + sizeof(scan_buf)))
            continue;
          found++;
          if(getenv("WIPE_DEBUG")) {
            size_t k0 = i >= 48 ? i - 48 : 0, k;
            char ctx[64];
            for(k = 0; k < 48 && k0 + k < i; k++)
              ctx[k] = scan_buf[k0 + k] >= 32 && scan_buf[k0 + k] < 127
                           ? (char)scan_buf[k0 + k]
                           : '.';
            ctx[k] = 0;
            tap_diag("copy at %lx (%s) after \"%s\"", where,
                     path[0] ? path : "anon", ctx);
          }
        }
      /* a copy across the end of this read is found by the next one */
      at += (size_t)got > n ? (size_t)got - n + 1 : (size_t)got;
    }
  }
  fclose(maps);
  close(mem);
  return found;
}

/* 1 (said) when the heap scans cannot run: AddressSanitizer's allocator
** and shadow are anonymous mappings of terabytes, which the scan through
** /proc/self/mem would read for hours.  The build without sanitizers
** (make test's first run) does the check. */
static int heap_scan_skipped(void) {
#if defined(__SANITIZE_ADDRESS__)
  tap_diag("skipped under AddressSanitizer (its mappings are terabytes)");
  return 1;
#else
  return 0;
#endif
}

/* pat_secret: prefix and 32 random hex digits (r: the 16 random bytes). */
static void secret_pattern(const char *prefix, unsigned char r[16]) {
  size_t n = strlen(prefix);
  int i;
  ddb_random_bytes(r, 16);
  snprintf(pat_secret, sizeof(pat_secret), "%s", prefix);
  for(i = 0; i < 16; i++)
    snprintf(pat_secret + n + 2 * i, 3, "%02x", r[i]);
}

/* cfg: a client of the fake server f (its URL in url[0..cap)), no
** retries. */
static void fake_config(const fake_http *f, ddb_config *cfg, char *url,
                        size_t cap) {
  snprintf(url, cap, "http://127.0.0.1:%d", f->port);
  memset(cfg, 0, sizeof(*cfg));
  cfg->region = "us-east-1";
  cfg->endpoint = url;
  cfg->max_retries = 0;
}

/* A client made from a credentials file with a unique secret and a
** 2,000-character session token, which sends one request: once it is
** freed, neither the secret nor the token is anywhere in the process's
** heap (the file read, the profile parsed, the settings, the signer and
** its signing key, the request's header list: all wiped). */
static void test_wipe(void) {
  sandbox s;
  fake_http f;
  ddb_config cfg;
  ddb_client *c = NULL;
  ddb_table_desc *desc = NULL;
  ddb_error e;
  char url[64], text[2400];
  unsigned char r[16];
  int i;
  if(heap_scan_skipped() || !CHECK(sandbox_open(&s) == 0))
    return;
  if(!CHECK(fake_start(&f, ROLE_JSON) == 0)) {
    sandbox_close(&s);
    return;
  }
  secret_pattern("WIPESECRET", r);
  memcpy(pat_token, "WIPETOKEN", 9);
  for(i = 9; i < 2000; i++)
    pat_token[i] = "0123456789abcdef"[(r[i % 16] + i) % 16];
  pat_token[2000] = 0;
  snprintf(text, sizeof(text),
           "[default]\naws_access_key_id = AKIDWIPE\n"
           "aws_secret_access_key = %s\naws_session_token = %s\n",
           pat_secret, pat_token);
  CHECK(put_file_raw(s.creds, text) == 0);
  ddb_wipe(text, sizeof(text));
  fake_config(&f, &cfg, url, sizeof(url));
  ddb_error_clear(&e);
  if(CHECK(ddb_client_new(&cfg, &c, &e) == DDB_OK)) {
    /* in use, the token is there (the scan sees it) */
    CHECK(memory_copies(pat_token, 2000) > 0);
    ddb_describe_table(c, "Wipe", &desc, &e); /* 404: an error, sent */
    CHECK(f.requests == 1);
    ddb_table_desc_free(desc);
    ddb_client_free(c);
  }
  fake_stop(&f);
  i = memory_copies(pat_secret, strlen(pat_secret));
  CHECK_MSG(i == 0, "the secret: %d copies after ddb_client_free", i);
  i = memory_copies(pat_token, 2000);
  CHECK_MSG(i == 0, "the session token: %d copies after ddb_client_free", i);
  sandbox_close(&s);
}

/* A client whose credentials come from a container endpoint (the fake
** server) with a unique secret key: once it is freed, the secret is
** nowhere in the heap.  libcurl read it into its
** receive buffer; the allocator of signer.c frees a DynamoDB answer's
** receive buffer without wiping it, never a credential fetch's. */
static void test_wipe_fetched(void) {
  sandbox s;
  fake_http f;
  ddb_config cfg;
  ddb_client *c = NULL;
  ddb_error e;
  char url[96], *role;
  unsigned char r[16];
  int i;
  if(heap_scan_skipped() || !CHECK(sandbox_open(&s) == 0))
    return;
  secret_pattern("WIPEROLE", r);
  role = malloc(512);
  if(!CHECK(role != NULL)) {
    sandbox_close(&s);
    return;
  }
  snprintf(role, 512,
           "{\"AccessKeyId\":\"ASIAWIPE\",\"SecretAccessKey\":\"%s\","
           "\"Token\":\"t\",\"Expiration\":\"2030-01-02T03:04:05Z\"}",
           pat_secret);
  if(!CHECK(fake_start(&f, role) == 0)) {
    free(role);
    sandbox_close(&s);
    return;
  }
  snprintf(url, sizeof(url), "http://127.0.0.1:%d/container", f.port);
  setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", url, 1);
  fake_config(&f, &cfg, url, sizeof(url));
  ddb_error_clear(&e);
  if(CHECK(ddb_client_new(&cfg, &c, &e) == DDB_OK)) {
    /* no request after the fetch: its blocks are freed as they were */
    CHECK_STR(c->s.cred_source, "container credentials");
    CHECK_INT(f.requests, 1);
    ddb_client_free(c);
  }
  fake_stop(&f);
  ddb_wipe(role, 512);
  free(role);
  i = memory_copies(pat_secret, strlen(pat_secret));
  CHECK_MSG(i == 0, "the fetched secret: %d copies after ddb_client_free", i);
  sandbox_close(&s);
}

/* ------------------------------------------------------------------------
** The C API's errors
*/

/* A table that is not there: the C API's error names the table, the
** endpoint and the region (and what DynamoDB said). */
static void test_missing_table(void) {
  sandbox s;
  fake_http f;
  dyn_options opt;
  dyn_client *c = NULL;
  dyn_error e;
  char *json = NULL, url[64], want[512];
  if(!CHECK(sandbox_open(&s) == 0))
    return;
  if(!CHECK(fake_start(&f, ROLE_JSON) == 0)) {
    sandbox_close(&s);
    return;
  }
  f.not_found = 1;
  setenv("AWS_ACCESS_KEY_ID", "AK", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "SK", 1);
  snprintf(url, sizeof(url), "http://127.0.0.1:%d", f.port);
  dyn_options_init(&opt);
  opt.endpoint = url;
  opt.region = "eu-west-2";
  if(CHECK(dyn_client_new(&opt, &c, &e) == DYN_OK)) {
    CHECK(dyn_get_json(c, "NoSuchTable", "{\"PK\":\"a\"}", 0, &json, &e) ==
          DYN_ESERVICE);
    CHECK(json == NULL);
    snprintf(want, sizeof(want),
             "table 'NoSuchTable' not found at %s in region eu-west-2 "
             "(ResourceNotFoundException: Requested resource not found)",
             url);
    CHECK_STR(e.message, want);
    CHECK_STR(e.type, "ResourceNotFoundException");
    dyn_client_free(c);
  }
  fake_stop(&f);
  sandbox_close(&s);
}

const tap_test tap_creds_client_tests[] = {
    {"signer: short-lived credentials are fetched once, not per request; "
     "one refresh for 8 threads; expired ones never sign",
     test_refresh},
    {"api: a missing table's error names the table, endpoint and region",
     test_missing_table},
    {"creds: the secret and the session token are wiped when a client is "
     "freed (heap scan)",
     test_wipe},
    {"creds: a secret fetched from a container endpoint is wiped when the "
     "client is freed (heap scan)",
     test_wipe_fetched},
    {NULL, NULL}};
