/*
** log.c -- the request log (a process-wide ring of the last DDB_LOG_SIZE
** requests) and the request counters (see ddb_client.h).  http.c adds one
** entry and counts one call at the end of each request, retries included;
** the capacity an answer consumed is read here too, from its cJSON tree or
** from a tape of its text.
*/
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ddb_client_int.h"
#include "http_int.h"

/* The ring and the counters, both under log_lock: they change once per
** request. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static ddb_log_entry log_ring[DDB_LOG_SIZE];
static uint64_t log_seq;
static ddb_stats stats;

static const char *const op_names[DDB_OP_COUNT] = {
    "GetItem",       "BatchGetItem",   "Query",
    "Scan",          "PutItem",        "UpdateItem",
    "DeleteItem",    "BatchWriteItem", "TransactWriteItems",
    "DescribeTable", "ListTables",     "DescribeTimeToLive"};

/* fork(): log_lock is on the list of live.c, so a child never finds it
** held by a thread it does not have. */
static void log_fork_lock(void *obj) {
  (void)obj;
  pthread_mutex_lock(&log_lock);
}

/* After fork() (live.c): log_lock released. */
static void log_fork_unlock(void *obj) {
  (void)obj;
  pthread_mutex_unlock(&log_lock);
}

static const ddb_live_ops log_live_ops = {DDB_LIVE_LOG, log_fork_lock,
                                          log_fork_unlock, NULL};
static ddb_live log_live;
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

/* Register the log's fork handlers with live.c (once). */
static void log_init_once(void) {
  ddb_live_add(&log_live, &log_live_ops, NULL);
}

/* Take log_lock (its fork handlers installed first). */
static void log_lock_take(void) {
  pthread_once(&log_once, log_init_once);
  pthread_mutex_lock(&log_lock);
}

/* The calling thread's note (ddb_log_note): a char[64] in a pthread key
** rather than __thread (see cancel.c: a dlopen()ed library's __thread
** block and LeakSanitizer). */
static pthread_key_t note_key;
static pthread_once_t note_once = PTHREAD_ONCE_INIT;
static int note_ok; /* note_key was made */

/* Make note_key, the thread's note for the log (once); note_ok says
** whether it was made. */
static void note_key_init(void) {
  note_ok = pthread_key_create(&note_key, free) == 0;
}

/* See ddb_client.h. */
void ddb_log_note(const char *note) {
  char *z;
  pthread_once(&note_once, note_key_init);
  if(!note_ok)
    return;
  z = pthread_getspecific(note_key);
  if(!z && note && note[0]) {
    z = calloc(1, sizeof(((ddb_log_entry *)0)->note));
    if(!z || pthread_setspecific(note_key, z)) {
      free(z);
      return; /* out of memory: the requests go unlabelled */
    }
  }
  if(z)
    ddb_copy_str(z, sizeof(((ddb_log_entry *)0)->note), note ? note : "");
}

/* The calling thread's note, or "". */
static const char *note_get(void) {
  const char *z;
  pthread_once(&note_once, note_key_init);
  z = note_ok ? pthread_getspecific(note_key) : NULL;
  return z ? z : "";
}

/* Append e to the ring with the next seq (see http_int.h), with the
** calling thread's note. */
void ddb_log_add(const ddb_log_entry *e) {
  const char *note = note_get();
  ddb_log_entry *slot;
  log_lock_take();
  log_seq++;
  slot = &log_ring[log_seq % DDB_LOG_SIZE];
  *slot = *e;
  slot->seq = log_seq;
  ddb_copy_str(slot->note, sizeof(slot->note), note);
  pthread_mutex_unlock(&log_lock);
}

/* Copy at most n log entries with seq > after into out; returns how many. */
int ddb_log_read(uint64_t after, ddb_log_entry *out, int n) {
  int k = 0;
  uint64_t s;
  log_lock_take();
  if(log_seq > DDB_LOG_SIZE && after < log_seq - DDB_LOG_SIZE)
    after = log_seq - DDB_LOG_SIZE;
  for(s = after + 1; s <= log_seq && k < n; s++)
    out[k++] = log_ring[s % DDB_LOG_SIZE];
  pthread_mutex_unlock(&log_lock);
  return k;
}

/* The name of op as DynamoDB spells it, "?" for none. */
const char *ddb_op_name(ddb_op op) {
  return op < DDB_OP_COUNT ? op_names[op] : "?";
}

/* See ddb_client.h. */
ddb_op ddb_op_of(const char *operation) {
  int i;
  for(i = 0; i < DDB_OP_COUNT; i++)
    if(strcmp(op_names[i], operation) == 0)
      return (ddb_op)i;
  return DDB_OP_COUNT;
}

/* See ddb_client.h: a row with no request behind it (http_status 0). */
void ddb_log_cached(const ddb_client *c, const char *operation,
                    const char *table, const char *index, int continuation,
                    int items, double age_s) {
  ddb_log_entry le;
  memset(&le, 0, sizeof(le));
  ddb_copy_str(le.operation, sizeof(le.operation), operation);
  ddb_copy_str(le.table, sizeof(le.table), table);
  ddb_copy_str(le.index, sizeof(le.index), index);
  le.continuation = continuation;
  le.items = items;
  le.cached = 1;
  le.age_s = age_s;
  le.stmt =
      c && c->meter ? __atomic_load_n(&c->meter->stmt, __ATOMIC_RELAXED) : 0;
  ddb_log_add(&le);
}

/* A consistent copy of the process-wide counters. */
void ddb_stats_get(ddb_stats *out) {
  log_lock_take();
  *out = stats;
  pthread_mutex_unlock(&log_lock);
}

/* Count one call of operation (see http_int.h): attempts requests of
** which attempts-1 retries. */
void ddb_stats_add(const char *operation, int attempts, int throttles,
                   double consumed) {
  ddb_op i = ddb_op_of(operation);
  log_lock_take();
  stats.requests += (uint64_t)attempts;
  stats.retries += (uint64_t)(attempts - 1);
  stats.throttles += (uint64_t)throttles;
  if(i < DDB_OP_COUNT) {
    stats.op_requests[i] += (uint64_t)attempts;
    if(i >= DDB_OP_PUT_ITEM && i <= DDB_OP_TRANSACT_WRITE_ITEMS)
      stats.consumed_wcu += consumed;
    else
      stats.consumed_rcu += consumed;
  }
  pthread_mutex_unlock(&log_lock);
}

/* Count a wait for max_rcu or max_wcu that starts (see http_int.h). */
void ddb_stats_wait_begin(void) {
  log_lock_take();
  stats.rate_waits++;
  pthread_mutex_unlock(&log_lock);
}

/* Count the ms milliseconds of a wait that ended (see http_int.h). */
void ddb_stats_wait_end(double ms) {
  log_lock_take();
  stats.rate_wait_s += ms / 1000;
  pthread_mutex_unlock(&log_lock);
}

/* The capacity units an answer says it consumed (summed over tables). */
double ddb_answer_consumed(const cJSON *resp) {
  const cJSON *cc = cJSON_GetObjectItemCaseSensitive(resp, "ConsumedCapacity");
  const cJSON *u;
  double sum = 0;
  if(cJSON_IsArray(cc)) {
    const cJSON *x;
    cJSON_ArrayForEach(x, cc) {
      u = cJSON_GetObjectItemCaseSensitive(x, "CapacityUnits");
      if(cJSON_IsNumber(u))
        sum += u->valuedouble;
    }
    return sum;
  }
  u = cJSON_GetObjectItemCaseSensitive(cc, "CapacityUnits");
  return cJSON_IsNumber(u) ? u->valuedouble : 0;
}

/* The capacity units of a ConsumedCapacity value at token 0 of the tape
** (an object, or an array of them: summed). */
double ddb_tape_consumed(const ddb_tape *t, const char *text) {
  uint32_t j, k;
  long u;
  double sum = 0;
  if(t->tok[0].type == DDB_JARR) {
    for(j = 0, k = 1; j < t->tok[0].n; j++, k = t->tok[k].end)
      if((u = ddb_tape_member(t, text, k, "CapacityUnits")) > 0)
        sum += ddb_tape_num(t, text, (uint32_t)u);
    return sum;
  }
  u = ddb_tape_member(t, text, 0, "CapacityUnits");
  return u > 0 ? ddb_tape_num(t, text, (uint32_t)u) : 0;
}
