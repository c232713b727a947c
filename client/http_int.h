/*
** http_int.h -- what the request files of client/ share (internal to
** client/): one request with its retries (http.c), and the pieces of an
** answer that describe.c, read.c and get.c all take.
*/
#ifndef DDB_HTTP_INT_H
#define DDB_HTTP_INT_H

#include <cjson/cJSON.h>

#include "ddb_client_int.h"

typedef struct call_info call_info;
struct call_info {
  const char *operation;
  const char *table;
  const char *index;
  int continuation;
  /* How a 200 answer is taken.  NULL: parsed into a cJSON tree (*out of
  ** call()).  Else take() reads the body itself and returns DDB_OK, or an
  ** error with *malformed set when the body is no JSON text (cut short or
  ** damaged: retried), or not set (a well-formed answer that is wrong:
  ** not retried).  It sets items (-1: unknown) and consumed, for the log
  ** and the counters, and must keep nothing of a failed attempt. */
  ddb_result (*take)(call_info *ci, const char *body, size_t len,
                     int *malformed, ddb_error *e);
  void *ud;
  long long items;
  double consumed;
};

/* POST body to the endpoint as ci->operation, retrying what is retryable
** (http.c).  On success *out is the parsed response (free with
** cJSON_Delete), or, with ci->take, NULL (the answer went to take). */
ddb_result ddb_http_call(ddb_client *c, call_info *ci, const char *body,
                         size_t body_len, cJSON **out, ddb_error *err);

/* The capacity units an answer says it consumed, summed over tables
** (read.c). */
double ddb_answer_consumed(const cJSON *resp);
/* The same from a tape of the answer's text (read.c). */
double ddb_tape_consumed(const ddb_tape *t, const char *text);
/* Append item it (a reference, taken) to page p, growing its array (*cap
** entries); returns 0, or -1 on out of memory (it is released) (read.c). */
int ddb_page_push(ddb_page *p, int *cap, ddb_item *it);

#endif
