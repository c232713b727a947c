/*
** multi_proto.c -- a prototype for a measurement, not product code: a
** parallel Scan of S segments driven two ways, to weigh one thread
** driving curl_multi against today's thread per segment (cache/stream.c,
** and a thread per call in flight for batch writes).
**
**   threads  S threads, each with its own easy handle, pages of its
**            segment one after another (curl_easy_perform), as the
**            stream's workers do;
**   multi    one thread, S easy handles in one curl_multi, the next page
**            of a segment added as soon as its answer is read.
**
** Both sign every request with the client's SigV4 (sigv4.c) and read every
** answer with the client's tape reader (tape.c: the items counted, the
** LastEvaluatedKey kept for the next request), so they differ only in how
** the transfers are driven.  Prints wall time, user+sys CPU, the peak RSS
** and the requests; bench/multi_run.sh runs it against DynamoDB Local
** behind the latency proxy (bench/scale/proxy.py), and under callgrind
** for instruction counts.
**
**   multi_proto threads|multi URL TABLE SEGMENTS LIMIT
*/
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "../client/ddb_client_int.h"
#include "../client/sigv4.h"

#define MAX_SEGMENTS 64

/* One segment's scan: its handle, request and answer. */
typedef struct seg {
  int no;
  CURL *h;
  struct curl_slist *hdrs;
  char body[2048];
  char start[1024]; /* the ExclusiveStartKey of the next request, or "" */
  ddb_buf resp;
  long items, requests;
  int done, failed;
} seg;

static const char *g_url, *g_table;
static char g_host[256];
static int g_segments, g_limit;
static ddb_sigv4 *g_sig;

/* curl write callback: append to the segment's answer. */
static size_t on_body(char *p, size_t size, size_t n, void *ud) {
  seg *s = ud;
  return ddb_buf_add(&s->resp, p, size * n) ? 0 : size * n;
}

/* Set up s->h for its next page: the body, the signed headers. */
static int prepare(seg *s) {
  char date[DDB_SIGV4_DATE_LEN], auth[DDB_SIGV4_AUTH_MAX];
  char line[DDB_SIGV4_AUTH_MAX + 64];
  int n;
  if(s->start[0])
    n = snprintf(s->body, sizeof(s->body),
                 "{\"TableName\":\"%s\",\"Segment\":%d,\"TotalSegments\":%d,"
                 "\"Limit\":%d,\"ExclusiveStartKey\":%s}",
                 g_table, s->no, g_segments, g_limit, s->start);
  else
    n = snprintf(s->body, sizeof(s->body),
                 "{\"TableName\":\"%s\",\"Segment\":%d,\"TotalSegments\":%d,"
                 "\"Limit\":%d}",
                 g_table, s->no, g_segments, g_limit);
  if(n <= 0 || (size_t)n >= sizeof(s->body))
    return -1;
  if(ddb_sigv4_amz_date(time(NULL), date) ||
     ddb_sigv4_sign_json(g_sig, "us-east-1", "dynamodb", date, "/",
                         "application/x-amz-json-1.0", g_host,
                         "DynamoDB_20120810.Scan", s->body, (size_t)n, auth,
                         sizeof(auth)))
    return -1;
  curl_slist_free_all(s->hdrs);
  s->hdrs =
      curl_slist_append(NULL, "Content-Type: application/x-amz-json-1.0");
  snprintf(line, sizeof(line), "Host: %s", g_host);
  s->hdrs = curl_slist_append(s->hdrs, line);
  snprintf(line, sizeof(line), "X-Amz-Date: %s", date);
  s->hdrs = curl_slist_append(s->hdrs, line);
  s->hdrs = curl_slist_append(s->hdrs, "X-Amz-Target: DynamoDB_20120810.Scan");
  snprintf(line, sizeof(line), "Authorization: %s", auth);
  s->hdrs = curl_slist_append(s->hdrs, line);
  ddb_buf_reset(&s->resp);
  curl_easy_setopt(s->h, CURLOPT_URL, g_url);
  curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, s->hdrs);
  curl_easy_setopt(s->h, CURLOPT_POSTFIELDS, s->body);
  curl_easy_setopt(s->h, CURLOPT_POSTFIELDSIZE, (long)n);
  curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(s->h, CURLOPT_WRITEDATA, s);
  curl_easy_setopt(s->h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(s->h, CURLOPT_ACCEPT_ENCODING, NULL);
  s->requests++;
  return 0;
}

/* Read the answer in s->resp: count its items, keep its
** LastEvaluatedKey (none: the segment is done).  Returns 0 or -1. */
static int take(seg *s) {
  ddb_jreader r;
  ddb_jtok name;
  int k, more = 0;
  memset(&r, 0, sizeof(r));
  if(!s->resp.p || ddb_jr_open(&r, s->resp.p, s->resp.len))
    goto bad;
  while((k = ddb_jr_next(&r, &name)) == 1) {
    if(ddb_tape_eq(r.text, &name, "Items")) {
      if(ddb_jr_array(&r))
        goto bad;
      while((k = ddb_jr_element(&r)) == 1)
        s->items++;
      if(k < 0)
        goto bad;
    } else if(ddb_tape_eq(r.text, &name, "LastEvaluatedKey")) {
      const char *v = ddb_tape_skip_ws(r.p, r.end);
      size_t n;
      if(ddb_jr_value(&r))
        goto bad;
      n = (size_t)(r.p - v);
      if(n >= sizeof(s->start))
        goto bad;
      memcpy(s->start, v, n);
      s->start[n] = 0;
      more = 1;
    } else if(ddb_jr_value(&r))
      goto bad;
  }
  if(k < 0)
    goto bad;
  ddb_tape_free(&r.tape);
  if(!more)
    s->done = 1;
  return 0;
bad:
  ddb_tape_free(&r.tape);
  fprintf(stderr, "segment %d: bad answer (%zu bytes)\n", s->no, s->resp.len);
  s->failed = s->done = 1;
  return -1;
}

/* A thread of the threads variant: its segment, page by page. */
__attribute__((noinline)) static void *seg_main(void *arg) {
  seg *s = arg;
  while(!s->done) {
    if(prepare(s) || curl_easy_perform(s->h) != CURLE_OK) {
      s->failed = s->done = 1;
      break;
    }
    take(s);
  }
  return NULL;
}

/* The multi variant: every segment's next page in one curl_multi. */
__attribute__((noinline)) static void run_multi(seg *segs, int n) {
  CURLM *m = curl_multi_init();
  int i, running = 0, left = n;
  for(i = 0; i < n; i++) {
    curl_easy_setopt(segs[i].h, CURLOPT_PRIVATE, &segs[i]);
    if(prepare(&segs[i]) == 0)
      curl_multi_add_handle(m, segs[i].h);
  }
  while(left > 0) {
    CURLMsg *msg;
    int q;
    curl_multi_perform(m, &running);
    while((msg = curl_multi_info_read(m, &q)) != NULL) {
      seg *s = NULL;
      if(msg->msg != CURLMSG_DONE)
        continue;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
      curl_multi_remove_handle(m, s->h);
      if(msg->data.result != CURLE_OK)
        s->failed = s->done = 1;
      else
        take(s);
      if(!s->done && prepare(s) == 0)
        curl_multi_add_handle(m, s->h);
      else
        left--;
    }
    if(left > 0)
      curl_multi_poll(m, NULL, 0, 1000, NULL);
  }
  curl_multi_cleanup(m);
}

int main(int argc, char **argv) {
  seg *segs;
  pthread_t tid[MAX_SEGMENTS];
  struct timespec t0, t1;
  struct rusage ru;
  long items = 0, requests = 0;
  int i, failed = 0, multi;
  const char *u;
  if(argc != 6) {
    fprintf(stderr, "usage: %s threads|multi URL TABLE SEGMENTS LIMIT\n",
            argv[0]);
    return 2;
  }
  multi = strcmp(argv[1], "multi") == 0;
  g_url = argv[2];
  g_table = argv[3];
  g_segments = (int)strtol(argv[4], NULL, 10);
  g_limit = (int)strtol(argv[5], NULL, 10);
  if(g_segments < 1 || g_segments > MAX_SEGMENTS)
    return 2;
  u = strstr(g_url, "://");
  snprintf(g_host, sizeof(g_host), "%.*s",
           (int)strcspn(u ? u + 3 : g_url, "/"), u ? u + 3 : g_url);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  g_sig = ddb_sigv4_new("test", "test", NULL);
  segs = calloc((size_t)g_segments, sizeof(*segs));
  for(i = 0; i < g_segments; i++) {
    segs[i].no = i;
    segs[i].h = curl_easy_init();
    ddb_buf_init(&segs[i].resp, 64u << 20);
  }
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if(multi)
    run_multi(segs, g_segments);
  else {
    for(i = 0; i < g_segments; i++)
      pthread_create(&tid[i], NULL, seg_main, &segs[i]);
    for(i = 0; i < g_segments; i++)
      pthread_join(tid[i], NULL);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  getrusage(RUSAGE_SELF, &ru);
  for(i = 0; i < g_segments; i++) {
    items += segs[i].items;
    requests += segs[i].requests;
    failed += segs[i].failed;
    curl_slist_free_all(segs[i].hdrs);
    curl_easy_cleanup(segs[i].h);
    ddb_buf_free(&segs[i].resp);
  }
  printf("%s: %d segments, %ld requests, %ld items, %d failed, wall %.0f ms, "
         "cpu %.0f ms, peak RSS %ld KiB\n",
         argv[1], g_segments, requests, items, failed,
         (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6,
         (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
             (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3,
         ru.ru_maxrss);
  free(segs);
  ddb_sigv4_free(g_sig);
  curl_global_cleanup();
  return failed ? 1 : 0;
}
