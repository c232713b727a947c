/*
** streams.c -- DynamoDB Streams: the table's stream (its LatestStreamArn,
** from DescribeTable), DescribeStream (its shards, every page),
** GetShardIterator and GetRecords, for cache/coherence.c's reader.
**
** The same JSON protocol as DynamoDB's, signed for the service
** "dynamodb", with X-Amz-Target DynamoDBStreams_20120810.<Op>, POSTed to
** the streams endpoint (config.c's resolve_streams: AWS's
** streams.dynamodb.<region>.amazonaws.com, or DynamoDB's own URL when that
** is configured, as DynamoDB Local serves both).  Each call is logged and
** counted under its operation's name, retried as every call is (http.c:
** LimitExceededException is a throttling answer, backed off).
*/
#include <stdlib.h>
#include <string.h>

#include "ddb_client_int.h"
#include "http_int.h"

/* The largest stream ARN, shard id, sequence number or iterator taken. */
#define STREAM_STR_MAX 4096

/* A malloc'ed copy of member name of j when it is a string of at most
** STREAM_STR_MAX bytes, else NULL. */
static char *member_str(const cJSON *j, const char *name) {
  const char *s =
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, name));
  if(!s || strlen(s) > STREAM_STR_MAX)
    return NULL;
  return ddb_strdup(s);
}

/* Call streams operation op with body b: the parsed answer in *resp. */
static ddb_result streams_call(ddb_client *c, const char *op,
                               const char *table, const ddb_buf *b,
                               cJSON **resp, ddb_error *err) {
  call_info ci;
  memset(&ci, 0, sizeof(ci));
  ci.operation = op;
  ci.table = table;
  ci.streams = 1;
  if(b->failed)
    return ddb_error_set(err, DDB_ERR_INPUT, "%s: request too long", op);
  return ddb_http_call(c, &ci, b->p, b->len, resp, err);
}

/* See ddb_client.h: the table's latest stream, from DescribeTable. */
ddb_result ddb_stream_of_table(ddb_client *c, const char *table, char **arn,
                               char **view, ddb_error *err) {
  cJSON *resp = NULL;
  const cJSON *t, *ss;
  ddb_result result;

  *arn = *view = NULL;
  result = ddb_table_call(c, "DescribeTable", table, &resp, err);
  if(result)
    goto fail;
  t = cJSON_GetObjectItemCaseSensitive(resp, "Table");
  ss = cJSON_GetObjectItemCaseSensitive(t, "StreamSpecification");
  if(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ss, "StreamEnabled"))) {
    *arn = member_str(t, "LatestStreamArn");
    *view = member_str(ss, "StreamViewType");
    if(!*arn || !*view) {
      free(*arn);
      free(*view);
      *arn = *view = NULL;
    }
  }

fail:
  cJSON_Delete(resp);
  return result;
}

void ddb_stream_desc_free(ddb_stream_desc *d) {
  int i;
  if(!d)
    return;
  for(i = 0; i < d->n_shards; i++) {
    free(d->shards[i].id);
    free(d->shards[i].parent);
  }
  free(d->shards);
  free(d->status);
  free(d);
}

/* Append the shards of one DescribeStream page sh to d.  0 or -1 (OOM). */
static int add_shards(ddb_stream_desc *d, const cJSON *sh) {
  const cJSON *x;
  int n = cJSON_GetArraySize(sh);
  ddb_stream_shard *p;
  if(n <= 0)
    return 0;
  p = realloc(d->shards, sizeof(*p) * (size_t)(d->n_shards + n));
  if(!p)
    return -1;
  d->shards = p;
  cJSON_ArrayForEach(x, sh) {
    ddb_stream_shard *s = &d->shards[d->n_shards];
    const cJSON *range =
        cJSON_GetObjectItemCaseSensitive(x, "SequenceNumberRange");
    memset(s, 0, sizeof(*s));
    s->id = member_str(x, "ShardId");
    if(!s->id)
      return -1;
    s->parent = member_str(x, "ParentShardId");
    s->closed = cJSON_GetObjectItemCaseSensitive(
                    range, "EndingSequenceNumber") != NULL;
    d->n_shards++;
  }
  return 0;
}

/* See ddb_client.h: DescribeStream, every page of shards. */
ddb_result ddb_describe_stream(ddb_client *c, const char *arn,
                               ddb_stream_desc **out, ddb_error *err) {
  ddb_stream_desc *d = calloc(1, sizeof(*d));
  char *last = NULL;
  cJSON *resp = NULL;
  ddb_buf body;
  ddb_result result = DDB_OK;
  int pages;

  *out = NULL;
  ddb_buf_init(&body, 2 * STREAM_STR_MAX);
  if(!d) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  for(pages = 0; pages < 1000; pages++) {
    const cJSON *sd;
    ddb_buf_reset(&body);
    ddb_buf_adds(&body, "{\"StreamArn\":");
    ddb_buf_json_str(&body, arn, strlen(arn));
    if(last) {
      ddb_buf_adds(&body, ",\"ExclusiveStartShardId\":");
      ddb_buf_json_str(&body, last, strlen(last));
    }
    ddb_buf_addc(&body, '}');
    cJSON_Delete(resp);
    resp = NULL;
    result = streams_call(c, "DescribeStream", NULL, &body, &resp, err);
    if(result)
      goto fail;
    sd = cJSON_GetObjectItemCaseSensitive(resp, "StreamDescription");
    if(!d->status)
      d->status = member_str(sd, "StreamStatus");
    if(add_shards(d, cJSON_GetObjectItemCaseSensitive(sd, "Shards"))) {
      result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
      goto fail;
    }
    free(last);
    last = member_str(sd, "LastEvaluatedShardId");
    if(!last)
      break;
  }
  *out = d;
  d = NULL;

fail:
  free(last);
  cJSON_Delete(resp);
  ddb_buf_free(&body);
  ddb_stream_desc_free(d);
  return result;
}

/* See ddb_client.h: GetShardIterator. */
ddb_result ddb_shard_iterator(ddb_client *c, const char *arn,
                              const char *shard, const char *seq, char **iter,
                              ddb_error *err) {
  ddb_buf body;
  cJSON *resp = NULL;
  ddb_result result;

  *iter = NULL;
  ddb_buf_init(&body, 4 * STREAM_STR_MAX);
  ddb_buf_adds(&body, "{\"StreamArn\":");
  ddb_buf_json_str(&body, arn, strlen(arn));
  ddb_buf_adds(&body, ",\"ShardId\":");
  ddb_buf_json_str(&body, shard, strlen(shard));
  ddb_buf_adds(&body, ",\"ShardIteratorType\":");
  ddb_buf_adds(&body, !seq ? "\"LATEST\""
                      : !*seq
                          ? "\"TRIM_HORIZON\""
                          : "\"AFTER_SEQUENCE_NUMBER\",\"SequenceNumber\":");
  if(seq && *seq)
    ddb_buf_json_str(&body, seq, strlen(seq));
  ddb_buf_addc(&body, '}');
  result = streams_call(c, "GetShardIterator", NULL, &body, &resp, err);
  if(result)
    goto fail;
  *iter = member_str(resp, "ShardIterator");
  if(!*iter)
    result = ddb_error_set(err, DDB_ERR_PARSE,
                           "GetShardIterator: no ShardIterator in the answer");

fail:
  cJSON_Delete(resp);
  ddb_buf_free(&body);
  return result;
}

void ddb_stream_batch_free(ddb_stream_batch *b) {
  int i;
  for(i = 0; i < b->n; i++) {
    ddb_stream_record *r = &b->r[i];
    free(r->seq);
    ddb_item_unref(r->keys);
    ddb_item_unref(r->new_image);
    ddb_item_unref(r->old_image);
  }
  free(b->r);
  free(b->next);
  memset(b, 0, sizeof(*b));
}

/* An item of member name of record object d into *out (NULL: none).
** 0 or -1 (malformed). */
static int record_item(const cJSON *d, const char *name, ddb_item **out) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(d, name);
  *out = NULL;
  if(!j)
    return 0;
  return ddb_item_decode(j, out, NULL) ? -1 : 0;
}

/* One record object x into *r.  0, or -1 when malformed (or OOM). */
static int parse_record(const cJSON *x, ddb_stream_record *r) {
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(x, "dynamodb");
  const char *ev =
      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, "eventName"));
  const cJSON *t =
      cJSON_GetObjectItemCaseSensitive(d, "ApproximateCreationDateTime");
  memset(r, 0, sizeof(*r));
  if(!ev || !d)
    return -1;
  r->event = strcmp(ev, "INSERT") == 0   ? 'I'
             : strcmp(ev, "MODIFY") == 0 ? 'M'
             : strcmp(ev, "REMOVE") == 0 ? 'R'
                                         : 0;
  r->created = cJSON_IsNumber(t) ? t->valuedouble : 0;
  r->seq = member_str(d, "SequenceNumber");
  if(!r->event || !r->seq || record_item(d, "Keys", &r->keys) || !r->keys ||
     record_item(d, "NewImage", &r->new_image) ||
     record_item(d, "OldImage", &r->old_image))
    return -1;
  return 0;
}

/* See ddb_client.h: GetRecords. */
ddb_result ddb_get_records(ddb_client *c, const char *iter, int limit,
                           ddb_stream_batch *out, ddb_error *err) {
  ddb_buf body;
  cJSON *resp = NULL;
  const cJSON *recs, *x;
  ddb_result result;
  char num[32];

  memset(out, 0, sizeof(*out));
  ddb_buf_init(&body, 2 * STREAM_STR_MAX);
  ddb_buf_adds(&body, "{\"ShardIterator\":");
  ddb_buf_json_str(&body, iter, strlen(iter));
  if(limit > 0) {
    snprintf(num, sizeof(num), ",\"Limit\":%d", limit);
    ddb_buf_adds(&body, num);
  }
  ddb_buf_addc(&body, '}');
  result = streams_call(c, "GetRecords", NULL, &body, &resp, err);
  if(result)
    goto fail;
  recs = cJSON_GetObjectItemCaseSensitive(resp, "Records");
  if(cJSON_GetArraySize(recs) > 0) {
    out->r = calloc((size_t)cJSON_GetArraySize(recs), sizeof(*out->r));
    if(!out->r) {
      result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
      goto fail;
    }
  }
  cJSON_ArrayForEach(x, recs) {
    if(parse_record(x, &out->r[out->n])) {
      out->n++; /* freed with the batch */
      result = ddb_error_set(err, DDB_ERR_PARSE,
                             "GetRecords: malformed record in the answer");
      goto fail;
    }
    out->n++;
  }
  out->next = member_str(resp, "NextShardIterator");

fail:
  if(result)
    ddb_stream_batch_free(out);
  cJSON_Delete(resp);
  ddb_buf_free(&body);
  return result;
}
