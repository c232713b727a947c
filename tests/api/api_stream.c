/*
** api_stream.c -- libdyndb's parallel reads against DynamoDB Local
** (tests/suites/31-api-stream.sh), which run on cache/'s machinery, the
** SQL extension's: a parallel Scan is cache/stream.c, dyn_batch_get is
** cache/fanout.c.  Checks, on a table of N items made by
** `fixtures.py bulk TABLE N 100` (partition P#big, SK S#00000..):
**
**   - a parallel Scan (segments 3, page_size 1) read by a slow consumer
**     returns every item once, in N pages or more (page_size is the Limit
**     of every request of every segment, not only of the first), and the
**     stream never held more than 2 x segments pages (ddbc_stream_peak);
**   - the same with limit 5: 5 items, then the end;
**   - dyn_batch_get of N + 50 keys (several requests in flight, 50 of the
**     keys missing): found[i] answers keys[i], NULL for the missing ones;
**   - cache/stream.c itself with fewer workers than segments (2 workers,
**     7 segments, Limit 1 on every request): every item once, every
**     segment read, and the segments without the partition all done
**     before the last page of the one that holds it (a worker whose
**     segment ends takes the next one no worker has taken, rather than
**     waiting behind the long one: segments=auto's finer split).
**
**    api_stream ENDPOINT TABLE N
**
** Prints TAP lines.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/dyndb.h"
#include "cache/ddb_cache.h"

static int n_test, n_failed;

/* One TAP line: ok when cond. */
static void tap(int cond, const char *what) {
  n_test++;
  if(!cond)
    n_failed++;
  printf("%sok %d - api stream: %s\n", cond ? "" : "not ", n_test, what);
}

/* Scan TABLE in segments with page_size 1 and this limit, slowly;
** *seen[i] counts item S#i.  Returns the items, or -1 on error. */
static long scan(dyn_client *c, const char *table, int segments,
                 long long limit, int *seen, int n, size_t *pages) {
  dyn_scan s;
  dyn_iter *it = NULL;
  const dyn_item *item;
  dyn_error err;
  dyn_code rc;
  long got = 0;
  memset(&s, 0, sizeof(s));
  s.table = table;
  s.segments = segments;
  s.page_size = 1;
  s.limit = limit;
  if(dyn_scan_open(c, &s, 0, &it, &err) != DYN_OK) {
    printf("# scan: %s\n", err.message);
    return -1;
  }
  while((rc = dyn_iter_next(it, &item, &err)) == DYN_OK && item) {
    const char *sk = dyn_value_text(dyn_item_get(item, "SK"), NULL);
    int i =
        sk && strncmp(sk, "S#", 2) == 0 ? (int)strtol(sk + 2, NULL, 10) : -1;
    if(i >= 0 && i < n)
      seen[i]++;
    got++;
    usleep(2000); /* a slow consumer: the workers fill the queue */
  }
  if(rc != DYN_OK) {
    printf("# scan: %s\n", err.message);
    got = -1;
  }
  *pages = dyn_iter_pages(it);
  dyn_iter_free(it);
  return got;
}

/* ddbc_stream_start on TABLE with 2 workers and 7 segments, every request
** Limit 1; checks as in the head comment.  seen[i] counts item S#i. */
static void units(const char *endpoint, const char *table, int *seen, int n) {
  ddb_config cfg;
  ddb_client *dc = NULL;
  ddb_read rd;
  ddbc_policy pol = {.consistent = 0}; /* not cached: every page a request */
  ddbc_stream *st = NULL;
  ddb_error err;
  ddb_page *pg;
  int unit, i, once = 1, big = -1, late = 0, pages[7] = {0}, last_big = 0;
  int done_at[7] = {0}, seq = 0;
  long got = 0;
  char msg[200];
  memset(&cfg, 0, sizeof(cfg));
  cfg.endpoint = endpoint;
  memset(&rd, 0, sizeof(rd));
  rd.table = table;
  rd.limit = 1;
  ddb_error_clear(&err);
  if(ddb_client_new(&cfg, &dc, &err) ||
     ddbc_stream_start(dc, &rd, &pol, NULL, 2, 7, DDBC_STREAM_LIMIT_EVERY, &st,
                       &err)) {
    printf("# stream: %s\n", err.message);
    tap(0, "stream, 2 workers on 7 segments: start");
    ddb_client_free(dc);
    return;
  }
  while(ddbc_stream_next(st, NULL, NULL, &pg, &unit, &err) == DDB_OK && pg) {
    seq++;
    if(unit >= 0 && unit < 7) {
      pages[unit]++;
      if(!pg->last_key)
        done_at[unit] = seq;
    }
    for(i = 0; i < pg->n_items; i++) {
      const ddb_av *v = ddb_item_get(pg->items[i], "SK");
      int k = v && v->type == DDB_S && v->n > 2
                  ? (int)strtol(v->text + 2, NULL, 10)
                  : -1;
      if(k >= 0 && k < n)
        seen[k]++;
      big = unit;
      got++;
    }
    ddb_page_unref(pg);
  }
  if(err.code)
    printf("# stream: %s\n", err.message);
  for(i = 0; i < n; i++)
    once &= seen[i] == 1;
  snprintf(msg, sizeof(msg),
           "stream, 2 workers on 7 segments: %ld of %d items, each once", got,
           n);
  tap(!err.code && got == n && once, msg);
  for(i = 0; i < 7; i++)
    if(done_at[i] == 0)
      late = 1;
  snprintf(msg, sizeof(msg),
           "stream, 2 workers on 7 segments: every segment read to its end");
  tap(!late, msg);
  if(big >= 0)
    last_big = done_at[big];
  late = 0;
  for(i = 0; i < 7; i++)
    if(i != big && done_at[i] > last_big)
      late++;
  snprintf(msg, sizeof(msg),
           "stream, 2 workers on 7 segments: the 6 short segments done before "
           "the long one (segment %d, %d pages): %d after it",
           big, big >= 0 ? pages[big] : 0, late);
  tap(big >= 0 && late == 0, msg);
  ddbc_stream_free(st);
  ddb_client_free(dc);
}

int main(int argc, char **argv) {
  dyn_options o;
  dyn_client *c = NULL;
  dyn_error err;
  dyn_item **keys, **found;
  int *seen, n, i, once = 1, right = 1, peak = 0;
  long long peak_bytes = 0;
  long got;
  size_t pages = 0, nk;
  char msg[200];
  if(argc != 4)
    return 2;
  n = (int)strtol(argv[3], NULL, 10);
  dyn_options_init(&o);
  o.endpoint = argv[1];
  o.query_ttl = DYN_OFF; /* every page a request */
  if(dyn_client_new(&o, &c, &err) != DYN_OK) {
    printf("# client: %s\nnot ok 1 - api stream: client\n1..1\n", err.message);
    return 1;
  }
  seen = calloc((size_t)n, sizeof(int));

  got = scan(c, argv[2], 3, 0, seen, n, &pages);
  for(i = 0; i < n; i++)
    once &= seen[i] == 1;
  snprintf(msg, sizeof(msg), "parallel Scan: %ld of %d items, each once", got,
           n);
  tap(got == n && once, msg);
  snprintf(msg, sizeof(msg),
           "parallel Scan: page_size 1 on every request: %zu pages >= %d",
           pages, n);
  tap(pages >= (size_t)n, msg);
  ddbc_stream_peak(&peak, &peak_bytes);
  snprintf(msg, sizeof(msg),
           "parallel Scan: at most 2 x segments = 6 pages held: %d", peak);
  tap(peak > 0 && peak <= 6, msg);

  memset(seen, 0, sizeof(int) * (size_t)n);
  got = scan(c, argv[2], 3, 5, seen, n, &pages);
  snprintf(msg, sizeof(msg), "parallel Scan, limit 5: %ld items", got);
  tap(got == 5, msg);

  /* BatchGetItem: N keys that exist, 50 that do not, interleaved */
  nk = (size_t)n + 50;
  keys = calloc(nk, sizeof(*keys));
  found = calloc(nk, sizeof(*found));
  for(i = 0; i < (int)nk; i++) {
    char json[80];
    snprintf(json, sizeof(json), "{\"PK\":\"%s\",\"SK\":\"S#%05d\"}",
             i % 5 == 4 && i / 5 < 50 ? "P#none" : "P#big", i);
    if(dyn_item_from_json(json, 0, &keys[i], &err) != DYN_OK)
      right = 0;
  }
  if(dyn_batch_get(c, argv[2], (const dyn_item *const *)keys, nk, 0, found,
                   &err) != DYN_OK) {
    printf("# batch get: %s\n", err.message);
    right = 0;
  }
  for(i = 0; i < (int)nk && right; i++) {
    int missing = (i % 5 == 4 && i / 5 < 50) || i >= n;
    const char *sk =
        found[i] ? dyn_value_text(dyn_item_get(found[i], "SK"), NULL) : NULL;
    char want[20];
    snprintf(want, sizeof(want), "S#%05d", i);
    if(missing ? found[i] != NULL : !sk || strcmp(sk, want) != 0) {
      printf("# found[%d]: %s, want %s\n", i, sk ? sk : "NULL",
             missing ? "NULL" : want);
      right = 0;
    }
  }
  snprintf(msg, sizeof(msg),
           "dyn_batch_get of %zu keys: found[i] answers keys[i]", nk);
  tap(right, msg);
  for(i = 0; i < (int)nk; i++) {
    dyn_item_unref(keys[i]);
    dyn_item_unref(found[i]);
  }
  free(keys);
  free(found);
  memset(seen, 0, sizeof(int) * (size_t)n);
  units(argv[1], argv[2], seen, n);
  free(seen);
  dyn_client_free(c);
  printf("1..%d\n", n_test);
  return n_failed ? 1 : 0;
}
