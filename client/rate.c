/*
** rate.c -- max_rcu and max_wcu: a token bucket per (place, table, reads
** or writes), shared by every client and thread of the process, so that
** the parallel segments of a Scan, or several connections on one table,
** spend no more than the rate together.
**
** The bucket holds up to half a second of the rate (and at least what the
** least request costs: rate_cap) and fills at the rate, so that in any
** second at most twice the rate is spent: what it held, what it gained,
** and half a second's worth more for the time between a request taking
** its tokens and the server reading (the answers of one instant's
** requests come back over some hundreds of milliseconds, and a second of
** the server's may count tokens taken before it began).  DynamoDB says
** what a request cost only in its answer (ConsumedCapacity), so the
** bucket is charged then, and a request is held to what it may cost
** beforehand:
**
**   * a Query or Scan page takes a share of the bucket (ddb_rate_page:
**     half a second of the rate / max(RATE_SHARES, segments), waiting
**     until the bucket holds it: the first pages of every segment go at
**     once) and asks for no more items (its Limit) than that share pays
**     for: the units an item evaluated costs, learned from the table's
**     earlier answers (consumed / ScannedCount), or before any from
**     DescribeTable's average item size (TableSizeBytes / ItemCount, 4 KB
**     a unit read consistently, 8 KB eventually), or before that the most
**     an item costs (400 KB).  So the first pages of 8 segments together
**     cost what the bucket holds, not 8 pages.  A page asks for one item
**     at least: an item larger than its share (or an average that has
**     grown since DescribeTable) leaves the bucket in debt.
**   * a write waits until the bucket holds what it may cost (its text's
**     KB and a unit an item, twice in a transaction; scaled by what the
**     table's writes have cost of that), at most a full bucket, and
**     reserves that (ddb_rate_wait): 8 BatchWriteItem calls in flight
**     take what the bucket holds, not a token each.
**   * any other read (GetItem, BatchGetItem, a page's retry) goes whenever
**     the bucket holds tokens, reserving the bucket's running average of
**     what an answer consumed (at first half a unit, the least a read
**     costs).
**
** The answer gives the share (or the reservation) back and pays what it
** consumed.  A large answer (a 1 MB Scan page is 128 RCU) leaves the
** bucket in debt, and the next requests wait until the rate has repaid it:
** over a statement the rate holds, whatever each request costs.  A wait
** sleeps in slices of DDB_CANCEL_POLL_MS and stops when the cancel hook
** says so.
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
/* The most the bucket holds: half a second of the rate (rate_cap). */
#define RATE_BURST 0.5
/* A Query or Scan page takes at most 1 / RATE_SHARES of that (or
** 1 / segments of a parallel Scan): an eighth of a second's worth. */
#define RATE_SHARES 4
/* The most an item can cost a read, in units read eventually: DynamoDB's
** largest item, 400 KB, at 8 KB a unit. */
#define RATE_ITEM_MAX 50.0
/* A Limit past this is none: no page holds more items (read.c's
** PAGE_ITEMS_MAX). */
#define RATE_LIMIT_MAX 524288

typedef struct bucket {
  UT_hash_handle hh;
  double tokens;  /* may be negative: debt */
  double last_ms; /* when tokens was last filled */
  double avg;     /* running average of an answer's consumption */
  /* sums that halve at each answer: of Query and Scan answers, the units
  ** consumed (as read eventually) and the items evaluated (ScannedCount);
  ** of writes, the units consumed and the most they might have been */
  double used, evaluated;
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

/* The most the bucket of kind at rate holds: half a second of the rate,
** and at least what the least request costs (half a unit a read, a unit
** a write), so that one can go: below 1 (2) units a second, the bucket
** lets one request go at a time, each costing more than the rate. */
static double rate_cap(int kind, double rate) {
  double least = kind == 1 ? 0.5 : 1;
  return rate * RATE_BURST > least ? rate * RATE_BURST : least;
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
    b->tokens = rate_cap(kind, rate);
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

/* Wait (polling the cancel hook) until the bucket of (c's place, table,
** kind) at rate holds need tokens (need 0: any), then take them (need 0:
** the bucket's average answer) into *took.  A wait is counted when it
** starts (rate_waits, the meter's paced and waiting), so that it shows
** while it lasts.  Returns DDB_OK, or DDB_ERR_CANCELLED (err set). */
static ddb_result rate_take(ddb_client *c, const char *operation,
                            const char *table, int kind, double rate,
                            double need, double *took, ddb_error *err) {
  int is_waiting = 0;
  double waited = 0;
  *took = 0;
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
    if(b->tokens > rate * RATE_BURST)
      b->tokens = rate_cap(kind, rate);
    b->last_ms = now;
    /* (need less a rounding error: the shares of a full bucket fit it) */
    if(need > 0 ? b->tokens >= need * (1 - 1e-9) : b->tokens > 0) {
      *took = need > 0 ? need : b->avg;
      b->tokens -= *took;
      pthread_mutex_unlock(&rate_lock);
      break;
    }
    /* until the debt is paid and need is there, and a little more */
    ms = (need - b->tokens) / rate * 1000 + 1;
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

/* The number of times the text key occurs in body[0..len). */
static size_t count_of(const char *body, size_t len, const char *key) {
  size_t n = 0, k = strlen(key);
  const char *p = body, *end = body + len, *q;
  while((q = memmem(p, (size_t)(end - p), key, k)) != NULL) {
    n++;
    p = q + k;
  }
  return n;
}

/* What the write operation with JSON body[0..len) may cost, in units: an
** item written costs a unit a KB, rounded up, and DynamoDB's size of an
** item is no more than its typed JSON, so a request's items cost at most
** its text's KB and a unit more each; a transaction twice.  Its items are
** counted by their requests' names ("PutRequest", "Update", ... as JSON
** strings: a value spelled so counts too, which only reserves more).  An
** UpdateItem or DeleteItem costs what the item it replaces weighs too,
** which no request says. */
static double rate_write_cost(const char *operation, const char *body,
                              size_t len) {
  double items = 1, kb = (double)len / 1024;
  switch(ddb_op_of(operation)) {
  case DDB_OP_BATCH_WRITE_ITEM:
    items = (double)(count_of(body, len, "\"PutRequest\"") +
                     count_of(body, len, "\"DeleteRequest\""));
    break;
  case DDB_OP_TRANSACT_WRITE_ITEMS:
    items = (double)(count_of(body, len, "\"Put\"") +
                     count_of(body, len, "\"Update\"") +
                     count_of(body, len, "\"Delete\"") +
                     count_of(body, len, "\"ConditionCheck\""));
    return 2 * (items + kb);
  default: break;
  }
  return items + kb;
}

/* See http_int.h.  A write waits for what it may cost (rate_write_cost,
** times what the table's writes have cost of that, at most 1: sums that
** halve at each answer), at most a full bucket; a read for any token. */
ddb_result ddb_rate_wait(ddb_client *c, call_info *ci, const char *body,
                         size_t len, double *reserved, ddb_error *err) {
  int kind;
  double rate, need = 0;
  *reserved = 0;
  if((c->max_rcu <= 0 && c->max_wcu <= 0) || !ci->table)
    return DDB_OK; /* the common case: no limit, nothing looked up */
  kind = rate_kind(ci->operation);
  rate = rate_of(c, kind);
  if(rate <= 0)
    return DDB_OK;
  if(kind == 2) {
    bucket *b;
    double ratio = 1;
    ci->rate_cost = rate_write_cost(ci->operation, body, len);
    pthread_once(&rate_once, rate_init_once);
    pthread_mutex_lock(&rate_lock);
    b = do_bucket(c, ci->table, kind, rate, ddb_now_ms());
    if(b && b->evaluated > 0 && b->used < b->evaluated)
      ratio = b->used / b->evaluated;
    pthread_mutex_unlock(&rate_lock);
    need = ci->rate_cost * ratio;
    if(need > rate_cap(kind, rate))
      need = rate_cap(kind, rate);
  }
  return rate_take(c, ci->operation, ci->table, kind, rate, need, reserved,
                   err);
}

/* What an item evaluated by r costs, in units read eventually: learned
** from the table's answers, else DescribeTable's average item, else the
** most an item costs. */
static double rate_per_item(ddb_client *c, const ddb_read *r, double rate) {
  double per_item = RATE_ITEM_MAX;
  bucket *b;
  pthread_mutex_lock(&rate_lock);
  b = do_bucket(c, r->table, 1, rate, ddb_now_ms());
  if(b && b->evaluated > 0)
    per_item = b->used / b->evaluated;
  else if(r->desc && r->desc->item_count > 0 && r->desc->size_bytes > 0)
    per_item = (double)r->desc->size_bytes / r->desc->item_count / 8192;
  pthread_mutex_unlock(&rate_lock);
  return per_item;
}

/* See http_int.h.  A page costs what DynamoDB reads, rounded up to 4 KB
** once for the page: unit * ceil(items * per_item / unit), with unit 1
** read consistently (per_item twice what it is eventually), else 0.5.  So
** the share pays for floor(share / unit) units of 4 KB, which hold
** floor(share / unit) * unit / per_item items; a share smaller than a
** unit still costs one (the least a page costs). */
ddb_result ddb_rate_page(ddb_client *c, ddb_read *r, call_info *ci,
                         ddb_error *err) {
  double rate = c->max_rcu, share, per_item, unit = r->consistent ? 1 : 0.5;
  double items, blocks;
  int shares = RATE_SHARES;
  ddb_result result;
  if(rate <= 0 || !r->table)
    return DDB_OK;
  if(r->total_segments > shares)
    shares = r->total_segments;
  /* a share of half a second, at least what the page costs, at most
  ** what the bucket holds */
  share = rate * RATE_BURST / shares;
  if(share < unit)
    share = unit;
  if(share > rate_cap(1, rate))
    share = rate_cap(1, rate);
  result = rate_take(c, ci->operation, r->table, 1, rate, share,
                     &ci->rate_share, err);
  if(result)
    return result;
  ci->rate_unit = unit;
  per_item = rate_per_item(c, r, rate) * (r->consistent ? 2 : 1);
  blocks = share < unit ? 1 : (double)(long long)(share / unit);
  items = blocks * unit / per_item;
  if(items < 1)
    items = 1;
  if(items < RATE_LIMIT_MAX && (r->limit <= 0 || items < (double)r->limit))
    r->limit = (long long)items;
  return DDB_OK;
}

/* See http_int.h.  The running average weighs the newest answer 1/4; the
** sums of a Query or Scan's answers halve at each. */
void ddb_rate_charge(ddb_client *c, const call_info *ci, double reserved,
                     double consumed) {
  const char *operation = ci->operation, *table = ci->table;
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
    if(ci->rate_unit > 0 && consumed > 0 && ci->scanned > 0) {
      /* as read eventually: a consistent read costs twice */
      b->used = b->used / 2 + consumed * 0.5 / ci->rate_unit;
      b->evaluated = b->evaluated / 2 + (double)ci->scanned;
    } else if(kind == 2 && consumed > 0 && ci->rate_cost > 0) {
      /* a write: what it cost of what it might have */
      b->used = b->used / 2 + consumed;
      b->evaluated = b->evaluated / 2 + ci->rate_cost;
    }
  }
  pthread_mutex_unlock(&rate_lock);
}
