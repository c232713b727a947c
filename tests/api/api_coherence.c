/*
** api_coherence.c -- suite 61's libdyndb part: dyn_options.coherence =
** DYN_COHERENCE_STREAMS.  A table without a stream fails its first call
** (DYN_ECONFIG, naming how to enable one); on a table with one, an item
** read twice (the second a hit), then, after the suite writes it with
** boto3 (it prints "ready" and waits for a line on stdin), seen changed
** by a cached read within 10 s.  TAP output.
**
**   api_coherence NOSTREAM_TABLE STREAM_TABLE N   (key pk = 'p0', sk = 'a';
**                                                 N: the tests before)
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/dyndb.h"

static int n_test;

/* One TAP line. */
static void ok(int cond, const char *what) {
  printf("%s %d - streams: libdyndb: %s\n", cond ? "ok" : "not ok", ++n_test,
         what);
  fflush(stdout);
}

/* The text of attribute v of table's item p0/a, into out (cap bytes; ""
** when there is no item).  Returns the call's code. */
static dyn_code value_of(dyn_client *c, const char *table, const dyn_item *k,
                         char *out, size_t cap) {
  dyn_item *it = NULL;
  dyn_error e;
  size_t n = 0;
  const char *t;
  dyn_code rc = dyn_get_item(c, table, k, 0, &it, &e);
  out[0] = 0;
  if(rc == DYN_OK && it && dyn_item_get(it, "v")) {
    t = dyn_value_text(dyn_item_get(it, "v"), &n);
    snprintf(out, cap, "%.*s", (int)n, t ? t : "");
  }
  dyn_item_unref(it);
  return rc;
}

int main(int argc, char **argv) {
  dyn_options o;
  dyn_client *c = NULL;
  dyn_error e;
  dyn_item *k = NULL, *it = NULL;
  dyn_stats s0, s1;
  char before[64], now[64], line[16];
  dyn_code rc;
  int i;
  if(argc != 4)
    return 2;
  n_test = (int)strtol(argv[3], NULL, 10);
  dyn_options_init(&o);
  o.coherence = DYN_COHERENCE_STREAMS;
  if(dyn_client_new(&o, &c, &e) ||
     dyn_item_from_json("{\"pk\":\"p0\",\"sk\":\"a\"}", 0, &k, &e)) {
    ok(0, "setup");
    return 1;
  }
  rc = dyn_get_item(c, argv[1], k, 0, &it, &e);
  ok(rc == DYN_ECONFIG && strstr(e.message, "has no DynamoDB Stream") &&
         strstr(e.message, "StreamEnabled=true"),
     "a table without a stream: DYN_ECONFIG naming how to enable one");
  dyn_item_unref(it);
  value_of(c, argv[2], k, before, sizeof(before));
  /* the reader's first anchor clears the table: read until a hit */
  for(i = 0; i < 100; i++) {
    struct timespec ts = {0, 50 * 1000000L};
    dyn_stats_get(&s0);
    value_of(c, argv[2], k, before, sizeof(before));
    dyn_stats_get(&s1);
    if(s1.item_hits > s0.item_hits)
      break;
    nanosleep(&ts, NULL);
  }
  ok(i < 100 && before[0], "an item read twice: the second a hit");
  printf("ready\n");
  fflush(stdout);
  if(!fgets(line, sizeof(line), stdin))
    return 1;
  for(i = 0; i < 1000; i++) {
    struct timespec ts = {0, 10 * 1000000L};
    value_of(c, argv[2], k, now, sizeof(now));
    if(strcmp(now, before) != 0)
      break;
    nanosleep(&ts, NULL);
  }
  ok(i < 1000, "an outside write seen by a cached read within 10 s");
  dyn_item_unref(k);
  dyn_client_free(c);
  return 0;
}
