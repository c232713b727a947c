/*
** curl_floor.c -- what a bare libcurl request loop costs: the floor under
** the extension's per-call CPU (bench.py's "Floors").
**
**   cc -O2 -o curl_floor bench/scale/curl_floor.c -lcurl
**   ./curl_floor URL N          prints "requests N status S cpu_us X"
**
** N GetItem requests for one key of the benchmark's table, one after
** another on one reused handle (kept-alive connection), each with the
** headers the extension sends, a fixed X-Amz-Date and an Authorization of
** the right length but not computed (DynamoDB Local does not check it),
** and the options of client/http.c that change what curl does per request
** (CURLOPT_NOSIGNAL: without it curl sets SIGPIPE's handler 9 times a
** request): no signing, no JSON parsing, no cache, no SQL.  The first request (the
** connect) is not counted.  CPU is user+sys of the process (getrusage).
** Only for DynamoDB Local on loopback.
*/
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

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

int main(int argc, char **argv) {
  static const char body[] =
      "{\"TableName\":\"Store\",\"Key\":{\"PK\":{\"S\":\"CUST#00001\"},"
      "\"SK\":{\"S\":\"ORDER#0001\"}},\"ReturnConsumedCapacity\":\"TOTAL\"}";
  static const char *const headers[] = {
      "Content-Type: application/x-amz-json-1.0",
      "X-Amz-Target: DynamoDB_20120810.GetItem",
      "X-Amz-Date: 20260101T000000Z",
      "Authorization: AWS4-HMAC-SHA256 "
      "Credential=test/20260101/us-east-1/dynamodb/aws4_request, "
      "SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
      "Signature=0000000000000000000000000000000000000000000000000000000000000"
      "000"};
  struct curl_slist *hdrs = NULL;
  CURL *h;
  long n, i, status = 0;
  size_t got = 0;
  double t0 = 0;
  char *end;
  size_t k;

  if(argc != 3 || (n = strtol(argv[2], &end, 10)) < 1 || *end) {
    fprintf(stderr, "usage: curl_floor URL N\n");
    return 2;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  h = curl_easy_init();
  for(k = 0; k < sizeof(headers) / sizeof(headers[0]); k++)
    hdrs = curl_slist_append(hdrs, headers[k]);
  if(!h || !hdrs)
    return 1;
  curl_easy_setopt(h, CURLOPT_URL, argv[1]);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
  /* as client/http.c sets them: no signals, no compression */
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, NULL);
  for(i = 0; i <= n; i++) {
    if(i == 1)
      t0 = cpu_now();
    if(curl_easy_perform(h) != CURLE_OK) {
      fprintf(stderr, "curl_floor: request %ld failed\n", i);
      return 1;
    }
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  printf("requests %ld status %ld cpu_us %.1f bytes %zu\n", n, status,
         (cpu_now() - t0) / (double)n * 1e6, got / (size_t)(n + 1));
  curl_slist_free_all(hdrs);
  curl_easy_cleanup(h);
  curl_global_cleanup();
  return 0;
}
