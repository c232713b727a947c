/*
** rate.c -- max_rcu and max_wcu: a token bucket per (place, table, reads
** or writes), shared by every client and thread of the process, so that
** the parallel segments of a Scan, or several connections on one table,
** spend no more than the rate together.
**
** The bucket holds up to one second of the rate and fills at the rate.
** DynamoDB says what a request cost only in its answer (ConsumedCapacity),
** so a request may go whenever the bucket holds tokens; it reserves the
** bucket's running average of what an answer consumed (at first half a
** unit, the least a read costs), and its answer gives the reservation back
** and pays what it consumed.  A large answer (a 1 MB Scan page is 128
** RCU) leaves the bucket in debt, and the next requests wait until the
** rate has repaid it: over a statement the rate holds, whatever each
** request costs.  A wait sleeps in slices of DDB_CANCEL_POLL_MS and stops
** when the cancel hook says so.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uthash.h>

#include "ddb_client_int.h"
#include "http_int.h"

/* What an answer is reckoned to cost before any has been seen. */
#define RATE_FIRST_GUESS 0.5

typedef struct bucket {
  UT_hash_handle hh;
  double tokens;  /* may be negative: debt */
  double last_ms; /* when tokens was last filled */
  double avg;     /* running average of an answer's consumption */
  size_t key_len;
  char key[]; /* place, table, 'r' or 'w' */
} bucket;

static pthread_mutex_t rate_lock = PTHREAD_MUTEX_INITIALIZER;
static bucket *buckets;

/* fork(): rate_lock on live.c's list, so a child never finds it held. */
static void rate_fork_lock(void *obj) {
  (void)obj;
  pthread_mutex_lock(&rate_lock);
}

/* After fork() (live.c): rate_lock released. */
static void rate_fork_unlock(void *obj) {
  (void)obj;
  pthread_mutex_unlock(&rate_lock);
}

static const ddb_live_ops rate_live_ops = {DDB_LIVE_RATE, rate_fork_lock,
                                           rate_fork_unlock, NULL};
static ddb_live rate_live;
static pthread_once_t rate_once = PTHREAD_ONCE_INIT;

/* Register the buckets' fork handlers with live.c (once). */
static void rate_init_once(void) {
  ddb_live_add(&rate_live, &rate_live_ops, NULL);
}

/* Is operation a read (1), a write (2), or neither (0: not paced)? */
static int rate_kind(const char *operation) {
  switch(ddb_op_of(operation)) {
  case DDB_OP_GET_ITEM:
  case DDB_OP_BATCH_GET_ITEM:
  case DDB_OP_QUERY:
  case DDB_OP_SCAN: return 1;
  case DDB_OP_PUT_ITEM:
  case DDB_OP_UPDATE_ITEM:
  case DDB_OP_DELETE_ITEM:
  case DDB_OP_BATCH_WRITE_ITEM:
  case DDB_OP_TRANSACT_WRITE_ITEMS: return 2;
  default: return 0;
  }
}

/* The bucket of (c's place, table, kind), made full when new (rate_lock
** held); NULL when out of memory (then nothing is paced). */
static bucket *do_bucket(ddb_client *c, const char *table, int kind,
                         double rate, double now) {
  size_t tlen = strlen(table), len = DDB_SCOPE_ID_LEN + tlen + 1;
  char stack[DDB_SCOPE_ID_LEN + 256 + 1], *k = stack;
  bucket *b = NULL;
  if(len > sizeof(stack) && !(k = malloc(len)))
    return NULL;
  memcpy(k, c->place, DDB_SCOPE_ID_LEN);
  memcpy(k + DDB_SCOPE_ID_LEN, table, tlen);
  k[len - 1] = kind == 1 ? 'r' : 'w';
  HASH_FIND(hh, buckets, k, len, b);
  if(!b && (b = calloc(1, sizeof(*b) + len)) != NULL) {
    memcpy(b->key, k, len);
    b->key_len = len;
    b->tokens = rate;
    b->last_ms = now;
    b->avg = RATE_FIRST_GUESS;
    HASH_ADD(hh, buckets, key[0], len, b);
  }
  if(k != stack)
    free(k);
  return b;
}

/* The rate of c for kind (units a second; 0: none). */
static double rate_of(const ddb_client *c, int kind) {
  return kind == 1 ? c->max_rcu : kind == 2 ? c->max_wcu : 0;
}

/* The end of a wait of ms milliseconds that began (counted). */
static void rate_wait_done(ddb_client *c, double ms) {
  ddb_stats_wait_end(ms);
  if(c->meter) {
    ddb_meter_add(&c->meter->paced_us, (uint64_t)(ms * 1000));
    __atomic_sub_fetch(&c->meter->waiting, 1, __ATOMIC_RELAXED);
  }
}

/* See http_int.h.  A wait is counted when it starts (rate_waits, the
** meter's paced and waiting), so that it shows while it lasts. */
ddb_result ddb_rate_wait(ddb_client *c, const char *operation,
                         const char *table, double *reserved, ddb_error *err) {
  int kind, is_waiting = 0;
  double rate, waited = 0;
  *reserved = 0;
  if((c->max_rcu <= 0 && c->max_wcu <= 0) || !table)
    return DDB_OK; /* the common case: no limit, nothing looked up */
  kind = rate_kind(operation);
  rate = rate_of(c, kind);
  if(rate <= 0)
    return DDB_OK;
  pthread_once(&rate_once, rate_init_once);
  for(;;) {
    double now = ddb_now_ms(), ms;
    struct timespec ts;
    bucket *b;
    pthread_mutex_lock(&rate_lock);
    b = do_bucket(c, table, kind, rate, now);
    if(!b) {
      pthread_mutex_unlock(&rate_lock);
      break;
    }
    b->tokens += (now - b->last_ms) / 1000 * rate;
    if(b->tokens > rate)
      b->tokens = rate; /* a second's worth at the most */
    b->last_ms = now;
    if(b->tokens > 0) {
      *reserved = b->avg;
      b->tokens -= b->avg;
      pthread_mutex_unlock(&rate_lock);
      break;
    }
    /* until the debt is paid, and a little more */
    ms = (-b->tokens) / rate * 1000 + 1;
    pthread_mutex_unlock(&rate_lock);
    if(!is_waiting) {
      is_waiting = 1;
      ddb_stats_wait_begin();
      if(c->meter) {
        ddb_meter_add(&c->meter->paced, 1);
        ddb_meter_add(&c->meter->waiting, 1);
      }
    }
    if(ddb_cancelled(c)) {
      rate_wait_done(c, waited);
      return ddb_cancel_error(err, operation);
    }
    if(ms > DDB_CANCEL_POLL_MS)
      ms = DDB_CANCEL_POLL_MS;
    ts.tv_sec = 0;
    ts.tv_nsec = (long)(ms * 1e6);
    nanosleep(&ts, NULL);
    waited += ddb_now_ms() - now;
  }
  if(is_waiting)
    rate_wait_done(c, waited);
  return DDB_OK;
}

/* See http_int.h.  The running average weighs the newest answer 1/4. */
void ddb_rate_charge(ddb_client *c, const char *operation, const char *table,
                     double reserved, double consumed) {
  int kind;
  double rate;
  bucket *b;
  if((c->max_rcu <= 0 && c->max_wcu <= 0) || !table)
    return;
  kind = rate_kind(operation);
  rate = rate_of(c, kind);
  if(rate <= 0)
    return;
  pthread_mutex_lock(&rate_lock);
  b = do_bucket(c, table, kind, rate, ddb_now_ms());
  if(b) {
    b->tokens += reserved - consumed;
    if(consumed > 0)
      b->avg = b->avg * 0.75 + consumed * 0.25;
  }
  pthread_mutex_unlock(&rate_lock);
}
