/*
** meter.c -- what requests cost, summed where someone asks: a statement's
** meter (ddb_meter, owned by the front end: see ddb_client.h) and a
** thread's tally (ddb_tally, which cache/ begins around a call to learn
** its capacity and throttles for dynamodb_hot).  http.c charges both at
** the end of every call, and asks the meter before a call whether the
** client's max_requests allows one more.
*/
#include <pthread.h>
#include <string.h>

#include "ddb_client_int.h"
#include "http_int.h"

/* ------------------------------------------------------------------------
** Meters
*/

/* See ddb_client.h. */
void ddb_meter_reset(ddb_meter *m, uint64_t stmt) {
  uint64_t *p = (uint64_t *)m;
  size_t i;
  /* field by field, atomically: another thread may be charging it */
  for(i = 0; i < sizeof(*m) / sizeof(uint64_t); i++)
    __atomic_store_n(&p[i], 0, __ATOMIC_RELAXED);
  __atomic_store_n(&m->oldest_ms, -1, __ATOMIC_RELAXED);
  __atomic_store_n(&m->stmt, stmt, __ATOMIC_RELAXED);
}

/* See ddb_client.h. */
void ddb_meter_read(const ddb_meter *m, ddb_meter *out) {
  const uint64_t *p = (const uint64_t *)m;
  uint64_t *q = (uint64_t *)out;
  size_t i;
  for(i = 0; i < sizeof(*m) / sizeof(uint64_t); i++)
    q[i] = __atomic_load_n(&p[i], __ATOMIC_RELAXED);
}

/* See ddb_client.h. */
void ddb_client_set_meter(ddb_client *c, ddb_meter *m) {
  c->meter = m;
}

/* See ddb_client.h. */
ddb_meter *ddb_client_meter(const ddb_client *c) {
  return c ? c->meter : NULL;
}

/* ------------------------------------------------------------------------
** Tallies: one per thread at the most, begun and ended by the caller
*/
static __thread ddb_tally *thread_tally;

/* See ddb_client.h. */
ddb_tally *ddb_tally_begin(ddb_tally *t) {
  ddb_tally *prev = thread_tally;
  memset(t, 0, sizeof(*t));
  thread_tally = t;
  return prev;
}

/* See ddb_client.h. */
void ddb_tally_end(ddb_tally *prev) {
  thread_tally = prev;
}

/* See http_int.h. */
ddb_tally *ddb_tally_current(void) {
  return thread_tally;
}

/* See http_int.h. */
void ddb_meter_charge(ddb_client *c, const ddb_log_entry *e, long long scanned,
                      int sent, int throttles) {
  ddb_tally *t = thread_tally;
  ddb_meter *m = c->meter;
  ddb_op op = ddb_op_of(e->operation);
  long long items = e->items > 0 ? e->items : 0;
  if(t) {
    t->requests += (uint64_t)sent;
    t->throttles += (uint64_t)throttles;
    t->items += items;
    t->rcu += e->rcu;
    t->wcu += e->wcu;
  }
  if(!m || sent == 0)
    return;
  if(op < DDB_OP_COUNT)
    ddb_meter_add(&m->requests[op], 1);
  if(sent > 1)
    ddb_meter_add(&m->retries, (uint64_t)(sent - 1));
  if(throttles)
    ddb_meter_add(&m->throttles, (uint64_t)throttles);
  ddb_meter_add(&m->items_returned, (uint64_t)items);
  ddb_meter_add(&m->items_read, (uint64_t)(scanned > 0 ? scanned : items));
  if(e->rcu > 0)
    ddb_meter_add(&m->rcu_u, (uint64_t)(e->rcu * 1e6 + 0.5));
  if(e->wcu > 0)
    ddb_meter_add(&m->wcu_u, (uint64_t)(e->wcu * 1e6 + 0.5));
}

/* See http_int.h.  The count is taken before the request is sent, so
** that workers of one statement in parallel pass exactly max_requests. */
ddb_result ddb_meter_take(ddb_client *c, const char *operation,
                          ddb_error *err) {
  ddb_meter *m = c->meter;
  uint64_t n;
  if(!m)
    return DDB_OK;
  n = __atomic_add_fetch(&m->sent, 1, __ATOMIC_RELAXED) -
      __atomic_load_n(&m->base, __ATOMIC_RELAXED);
  if(c->max_requests <= 0 || n <= (uint64_t)c->max_requests)
    return DDB_OK;
  __atomic_sub_fetch(&m->sent, 1, __ATOMIC_RELAXED);
  return ddb_error_set(err, DDB_ERR_LIMIT,
                       "max_requests=%lld: the statement would send more "
                       "than %lld requests (stopped before a %s)",
                       c->max_requests, c->max_requests, operation);
}
