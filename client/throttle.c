/*
** throttle.c -- DynamoDB's "slow down" answers: which error types are
** throttling (retried with the throttling backoff), and what the reasons
** DynamoDB now gives with them say.
**
** Since 2025 a throttled request is answered with ThrottlingException,
** whose member throttlingReasons (spelled so, lower-case) lists why, and
** ProvisionedThroughputExceededException and RequestLimitExceeded carry
** the same list as ThrottlingReasons (botocore's service-2.json, shape
** ThrottlingReason):
**
**    {"__type": "com.amazonaws.dynamodb.v20120810#ThrottlingException",
**     "message": "...",
**     "throttlingReasons": [
**       {"reason": "TableReadKeyRangeThroughputExceeded",
**        "resource": "arn:aws:dynamodb:us-east-1:123456789012:table/T"}]}
**
** A reason is ResourceType + OperationType + LimitType: Table or Index,
** Read or Write, and ProvisionedThroughputExceeded (the provisioned
** capacity), AccountLimitExceeded (the account's per-table quota of an
** on-demand table), KeyRangeThroughputExceeded (one partition's limit: a
** hot key) or MaxOnDemandThroughputExceeded (the table's configured
** on-demand maximum).  The resource is the ARN of the table or the index.
** Older answers (and DynamoDB Local, dynalite) give no reasons: those
** read as none, and everything goes on as before.
**
** What is made of them: the final error names each reason and its table
** or index; the request log records them per request (ddb_log_entry's
** throttle); a KeyRange reason is counted in the thread's tally, with the
** table and index it named, so that cache/hot.c marks the partition key
** of the request as a hot key range DynamoDB itself reported.
*/
#include <stdio.h>
#include <string.h>

#include "ddb_client_int.h"
#include "http_int.h"

/* The error types retried as throttling: botocore's standard retry mode
** (botocore/retries/standard.py, ThrottledRetryableChecker), which covers
** its legacy rules for DynamoDB (data/_retry.json: throughput_exceeded,
** throttling_exception, request_limit_exceeded, too_many_requests). */
static const char *const throttle_types[] = {
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestThrottledException",
    "TooManyRequestsException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "BandwidthLimitExceeded",
    "LimitExceededException",
    "RequestThrottled",
    "SlowDown",
    "EC2ThrottledException",
};

/* See http_int.h. */
int ddb_throttle_is(const char *type) {
  size_t i;
  for(i = 0; type && i < sizeof(throttle_types) / sizeof(*throttle_types); i++)
    if(strcmp(type, throttle_types[i]) == 0)
      return 1;
  return 0;
}

/* See http_int.h.  ReplicatedWriteConflictException: a global table's
** item being written in another Region at once (botocore's _retry.json
** for dynamodb, write_conflict; not throttling: the short backoff).
** TransactionInProgressException: the same ClientRequestToken still being
** worked on (still_processing). */
int ddb_throttle_transient(const char *type) {
  return type && (strcmp(type, "ReplicatedWriteConflictException") == 0 ||
                  strcmp(type, "TransactionInProgressException") == 0);
}

/* Copy the JSON string member `name` of o into dst[0..cap) as safe text
** (cut to fit); "" when there is none. */
static void member_text(const cJSON *o, const char *name, char *dst,
                        size_t cap) {
  const char *v =
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));
  dst[0] = 0;
  if(v) /* cut where the next character does not fit */
    ddb_text_safe(dst, cap, v, strlen(v));
}

/* See http_int.h. */
void ddb_throttle_read(const char *body, size_t len, ddb_throttle *t) {
  cJSON *j = len ? cJSON_ParseWithLength(body, len) : NULL;
  const cJSON *list, *r;
  memset(t, 0, sizeof(*t));
  list = cJSON_GetObjectItemCaseSensitive(j, "throttlingReasons");
  if(!list)
    list = cJSON_GetObjectItemCaseSensitive(j, "ThrottlingReasons");
  if(!cJSON_IsArray(list))
    list = NULL;
  cJSON_ArrayForEach(r, list) {
    ddb_throttle_reason *x = &t->r[t->n];
    char arn[1100];
    ddb_arn a;
    if(t->n >= DDB_THROTTLE_REASONS)
      break;
    member_text(r, "reason", x->reason, sizeof(x->reason));
    if(!x->reason[0])
      continue;
    member_text(r, "resource", arn, sizeof(arn));
    if(ddb_arn_parse(arn, 1, &a, NULL) == DDB_OK) {
      ddb_copy_str(x->table, sizeof(x->table), a.table);
      ddb_copy_str(x->index, sizeof(x->index), a.index);
    }
    t->n++;
  }
  cJSON_Delete(j);
}

/* Is reason a hot key range (its LimitType KeyRangeThroughputExceeded)? */
static int is_key_range(const char *reason) {
  const char *k = "KeyRangeThroughputExceeded";
  size_t n = strlen(reason), m = strlen(k);
  return n >= m && strcmp(reason + n - m, k) == 0;
}

/* What a reason's LimitType means, for the message. */
static const char *limit_hint(const char *reason) {
  static const struct {
    const char *suffix, *hint;
  } hints[] = {
      {"KeyRangeThroughputExceeded", "a hot partition key"},
      {"ProvisionedThroughputExceeded", "over its provisioned capacity"},
      {"AccountLimitExceeded", "over the account's per-table quota"},
      {"MaxOnDemandThroughputExceeded", "over its on-demand maximum"},
  };
  size_t i, n = strlen(reason);
  for(i = 0; i < sizeof(hints) / sizeof(*hints); i++) {
    size_t m = strlen(hints[i].suffix);
    if(n >= m && strcmp(reason + n - m, hints[i].suffix) == 0)
      return hints[i].hint;
  }
  return NULL;
}

/* See http_int.h: "TYPE: REASON on table 'T' index 'I' (hint); ...:
** MESSAGE", cut to the message's room. */
void ddb_throttle_explain(const ddb_throttle *t, ddb_error *e) {
  char said[sizeof(e->message)];
  const char *msg;
  ddb_buf b;
  int i;
  if(t->n == 0)
    return;
  memcpy(said, e->message, sizeof(said));
  /* the server's message follows "TYPE: " in what service_error set */
  msg = strstr(said, ": ");
  msg = msg ? msg + 2 : said;
  ddb_buf_init(&b, sizeof(e->message) * 2);
  ddb_buf_addf(&b, "%s: ", e->type[0] ? e->type : "throttled");
  for(i = 0; i < t->n; i++) {
    const ddb_throttle_reason *x = &t->r[i];
    const char *hint = limit_hint(x->reason);
    ddb_buf_addf(&b, "%s%s", i ? "; " : "", x->reason);
    if(x->table[0])
      ddb_buf_addf(&b, " on table '%s'", x->table);
    if(x->index[0])
      ddb_buf_addf(&b, " index '%s'", x->index);
    if(hint)
      ddb_buf_addf(&b, " (%s)", hint);
  }
  ddb_buf_addf(&b, ": %s", msg);
  if(!b.failed && b.p) { /* cut where no UTF-8 sequence is split */
    size_t n = ddb_text_cut(b.p, b.len, sizeof(e->message) - 1);
    memcpy(e->message, b.p, n);
    e->message[n] = 0;
  }
  ddb_buf_free(&b);
}

/* See http_int.h. */
void ddb_throttle_summary(const ddb_throttle *t, const char *type, char *out,
                          size_t cap) {
  ddb_buf b;
  int i;
  out[0] = 0;
  if(t->n == 0) {
    ddb_copy_str(out, cap, type);
    return;
  }
  ddb_buf_init(&b, 4096);
  for(i = 0; i < t->n; i++) {
    const ddb_throttle_reason *x = &t->r[i];
    ddb_buf_addf(&b, "%s%s", i ? "; " : "", x->reason);
    if(x->table[0])
      ddb_buf_addf(&b, " %s%s%s", x->table, x->index[0] ? "/" : "", x->index);
  }
  if(!b.failed && b.p) {
    size_t n = ddb_text_cut(b.p, b.len, cap - 1);
    memcpy(out, b.p, n);
    out[n] = 0;
  }
  ddb_buf_free(&b);
}

/* See http_int.h. */
int ddb_throttle_key_range(const ddb_throttle *t, ddb_tally *tl) {
  int i, found = 0;
  for(i = 0; i < t->n; i++)
    if(is_key_range(t->r[i].reason) && t->r[i].table[0]) {
      found = 1;
      if(tl) {
        ddb_copy_str(tl->key_range_table, sizeof(tl->key_range_table),
                     t->r[i].table);
        ddb_copy_str(tl->key_range_index, sizeof(tl->key_range_index),
                     t->r[i].index);
      }
    }
  if(found && tl)
    tl->key_range++;
  return found;
}
