/*
** curl_floor.c -- what a bare libcurl request loop costs: the floor under
** the extension's per-call CPU (bench.py's "Floors", and
** bench/request_instr.sh's instructions a request).
**
**   cc -O2 -o curl_floor bench/scale/curl_floor.c -lcurl
**   ./curl_floor URL N          prints "requests N status S cpu_us X bytes B"
**   ./curl_floor URL N TABLE    the same, one key a request (see below)
**
** N GetItem requests, one after another on one reused handle (kept-alive
** connection), each with the headers the extension sends (Content-Type,
** Host, X-Amz-Date, X-Amz-Target, Authorization: client/signer.c), a
** fixed X-Amz-Date and an Authorization of the right length but not
** computed (DynamoDB Local does not check it), and the options of
** client/http.c that change what curl does per request (CURLOPT_NOSIGNAL:
** without it curl sets SIGPIPE's handler 9 times a request; no
** Accept-Encoding): no signing, no JSON parsing, no cache, no SQL.  The
** answer is read whole (counted, not kept).
**
** Without TABLE every request asks for one key of bench/scale's table.
** With TABLE, request i asks for PK = K#<i, 5 digits>, SK = S of TABLE
** (bench/load.py's items), with the body the extension sends for that key
** (client/get.c), as bench/request_instr.sh's N cold GetItems do; the
** bodies are written before the loop.
**
** The first request (the connect) is not counted.  CPU is user+sys of the
** process (getrusage).  Under valgrind --tool=callgrind
** --instr-atstart=no only the counted loop is instrumented
** (CALLGRIND_START_INSTRUMENTATION and _STOP around it, when
** valgrind/callgrind.h is there).  Only for DynamoDB Local on loopback.
*/
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

/* curl write callback: count the bytes, keep nothing. */
static size_t sink(char *p, size_t size, size_t n, void *ud) {
  (void)p;
  *(size_t *)ud += size * n;
  return size * n;
}

/* User+sys CPU seconds of this process so far. */
static double cpu_now(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return (double)r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 +
         (double)r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
}

/* The Host header of url ("Host: host[:port]"), into out[0..cap), as
** client/signer.c sets it; "" when url has no scheme. */
static void host_header(const char *url, char *out, size_t cap) {
  const char *p = strstr(url, "://"), *e;
  out[0] = 0;
  if(!p)
    return;
  p += 3;
  e = p + strcspn(p, "/?#");
  snprintf(out, cap, "Host: %.*s", (int)(e - p), p);
}

int main(int argc, char **argv) {
  static const char store_body[] =
      "{\"TableName\":\"Store\",\"Key\":{\"PK\":{\"S\":\"CUST#00001\"},"
      "\"SK\":{\"S\":\"ORDER#0001\"}},\"ReturnConsumedCapacity\":\"TOTAL\"}";
  static const char *const headers[] = {
      "Content-Type: application/x-amz-json-1.0",
      "X-Amz-Date: 20260101T000000Z",
      "X-Amz-Target: DynamoDB_20120810.GetItem",
      "Authorization: AWS4-HMAC-SHA256 "
      "Credential=test/20260101/us-east-1/dynamodb/aws4_request, "
      "SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
      "Signature=0000000000000000000000000000000000000000000000000000000000000"
      "000"};
  struct curl_slist *hdrs = NULL;
  char host[300];
  CURL *h;
  long n, i, status = 0;
  size_t got = 0, k, each = 0;
  double t0 = 0;
  char *end, *bodies = NULL;
  const char *table = argc == 4 ? argv[3] : NULL;

  if((argc != 3 && argc != 4) || (n = strtol(argv[2], &end, 10)) < 1 || *end ||
     n > 99999 || (table && strlen(table) > 255)) {
    fprintf(stderr, "usage: curl_floor URL N [TABLE]\n");
    return 2;
  }
  if(table) {
    /* body i at bodies + i * each, written before the loop */
    each = strlen(table) + 128;
    bodies = malloc((size_t)(n + 1) * each);
    if(!bodies)
      return 1;
    for(i = 0; i <= n; i++)
      snprintf(bodies + (size_t)i * each, each,
               "{\"TableName\":\"%s\",\"Key\":{\"PK\":{\"S\":\"K#%05ld\"},"
               "\"SK\":{\"S\":\"S\"}},\"ReturnConsumedCapacity\":\"TOTAL\"}",
               table, i);
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  h = curl_easy_init();
  /* in client/signer.c's order: Content-Type, Host, X-Amz-Date,
  ** X-Amz-Target, Authorization */
  host_header(argv[1], host, sizeof(host));
  hdrs = curl_slist_append(hdrs, headers[0]);
  if(host[0])
    hdrs = curl_slist_append(hdrs, host);
  for(k = 1; hdrs && k < sizeof(headers) / sizeof(headers[0]); k++)
    hdrs = curl_slist_append(hdrs, headers[k]);
  if(!h || !hdrs)
    return 1;
  curl_easy_setopt(h, CURLOPT_URL, argv[1]);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, store_body);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
  /* as client/http.c sets them: no signals, no compression */
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, NULL);
  for(i = 0; i <= n; i++) {
    if(i == 1) {
      t0 = cpu_now();
      got = 0;
      CALLGRIND_START_INSTRUMENTATION;
    }
    if(bodies)
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, bodies + (size_t)i * each);
    if(curl_easy_perform(h) != CURLE_OK) {
      fprintf(stderr, "curl_floor: request %ld failed\n", i);
      return 1;
    }
  }
  CALLGRIND_STOP_INSTRUMENTATION;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  printf("requests %ld status %ld cpu_us %.1f bytes %zu\n", n, status,
         (cpu_now() - t0) / (double)n * 1e6, got / (size_t)n);
  curl_slist_free_all(hdrs);
  curl_easy_cleanup(h);
  curl_global_cleanup();
  free(bodies);
  return 0;
}
