/*
** lease.c -- one job: leases in the shared tier, so that a fleet that
** misses a key at the same moment reads DynamoDB for it once (the
** memcache paper's leases; interface: shared.h, "lease.c").
**
**   reader A: MGET miss -> take lease (won)  -> DynamoDB -> fill if token
**   reader B: MGET miss -> take lease (lost) -> poll ... the entry: a hit
**   writer:   SET entry, DEL lease     (A's fill finds no token: dropped)
**
** A lease is a Redis key named as the tier names everything (an HMAC of
** kind DDBC_LEASE_ITEM or DDBC_LEASE_PAGE and the entry's logical key:
** nothing readable), holding a token of 16 random bytes for
** ddbc_lease_hold(wait) seconds.  Every step is a Lua script (EVALSHA,
** EVAL when Redis does not know it yet), so each is atomic in Redis:
**
**   TAKE  per key: the entry if Redis holds one, else SET lease token NX
**         PX hold: 1 taken, 0 held by another.  A batch takes all its
**         leases in one round trip; waiting polls with the same script,
**         so a lease freed (its holder's fill dropped by a write, or its
**         read failed) is taken by one waiter, not by all.
**   FILL  per key: when the lease still holds the token, DEL it and SET
**         the entry NX (a write's entry, or a tombstone, is never
**         overwritten); else the fill is dropped (shared_lease_stale).
**   PAGE_TAKE, PAGE_FILL  the same for a query page; the fill also needs
**         the table's generation unchanged, so a write of the table since
**         the read (which moves it) drops the page.
**
** Cancelling.  ddbc_shared_note_write, which every write through the tier
** calls (this process's, another's, and a stream reader's for a change
** it sees), DELs the item's lease in the round trip of its SET.
**
** Bounds.  A waiter polls every LEASE_POLL seconds for at most `wait`
** (shared_lease_wait); what has not come by then is read from DynamoDB
** and not filled (shared_lease_fallbacks).  A holder that dies leaves its
** lease until hold runs out; until then readers of the key wait `wait`
** and read DynamoDB.  Redis slow or down: each round trip is bounded by
** the tier's timeout and a failure is NONE or FALLBACK, never an error.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "resp.h"
#include "shared.h"

/* Keys of one script call (a batch of more makes several calls, sent in
** one round trip). */
#define LEASE_CHUNK 100
/* Seconds between two polls of a waiter: wait / LEASE_POLLS, from
** LEASE_POLL_MIN to LEASE_POLL_MAX (each poll of a batch asks Redis for
** all its keys: fewer polls, less CPU on both sides). */
#define LEASE_POLLS    20
#define LEASE_POLL_MIN 0.001
#define LEASE_POLL_MAX 0.01
/* A lease is held for LEASE_HOLD_FACTOR waits, at least LEASE_HOLD_MIN
** seconds: the holder's read may take longer than a waiter waits (its
** fill still serves the readers after), but a dead holder's lease goes. */
#define LEASE_HOLD_FACTOR 10
#define LEASE_HOLD_MIN    2.0
/* The largest wait (the SQL option's bound: a wait is not interrupted),
** and the smallest that DDBC_LEASE_AUTO makes. */
#define LEASE_WAIT_MAX 1.0
#define LEASE_WAIT_MIN 0.005

static struct { uint64_t wins, waits, stale, fallbacks; } st;

#define COUNT(field, n)                                                       \
  __atomic_add_fetch(&st.field, (uint64_t)(n), __ATOMIC_RELAXED)

/* The scripts.  KEYS and ARGV as each says; replies: an array. */
enum { S_TAKE, S_FILL, S_PAGE_TAKE, S_PAGE_FILL, N_SCRIPTS };
static const char *const script_text[N_SCRIPTS] = {
    /* TAKE: KEYS entry1 lease1 entry2 lease2 ..; ARGV token px */
    "local r = {} "
    "for i = 1, #KEYS, 2 do "
    " local v = redis.call('GET', KEYS[i]) "
    " if v then r[#r + 1] = v "
    " elseif redis.call('SET', KEYS[i + 1], ARGV[1], 'PX', ARGV[2], 'NX') "
    " then r[#r + 1] = 1 else r[#r + 1] = 0 end "
    "end "
    "return r",
    /* FILL: KEYS entry1 lease1 ..; ARGV token px value1 ..  ('': release)
    ** -> 1 stored, 2 refused by an entry, 3 released, 0 not ours */
    "local r = {} "
    "for i = 1, #KEYS, 2 do "
    " local k = (i + 1) / 2 "
    " if redis.call('GET', KEYS[i + 1]) == ARGV[1] then "
    "  redis.call('DEL', KEYS[i + 1]) "
    "  if ARGV[2 + k] == '' then r[k] = 3 "
    "  elseif redis.call('SET', KEYS[i], ARGV[2 + k], 'PX', ARGV[2], 'NX') "
    "  then r[k] = 1 else r[k] = 2 end "
    " else r[k] = 0 end "
    "end "
    "return r",
    /* PAGE_TAKE: KEYS gen page lease; ARGV token px -> {gen, page|1|0} */
    "local g = redis.call('GET', KEYS[1]) or '' "
    "local v = redis.call('GET', KEYS[2]) "
    "if v then return {g, v} end "
    "if redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2], 'NX') "
    "then return {g, 1} end "
    "return {g, 0}",
    /* PAGE_FILL: KEYS gen page lease; ARGV token gen px value ('':
    ** release) -> 1 stored, 3 released, 0 not ours or the gen moved */
    "if redis.call('GET', KEYS[3]) ~= ARGV[1] then return {0} end "
    "redis.call('DEL', KEYS[3]) "
    "if ARGV[4] == '' then return {3} end "
    "if redis.call('GET', KEYS[1]) ~= ARGV[2] then return {0} end "
    "redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[3]) "
    "return {1}",
};

/* ------------------------------------------------------------------------
** Settings, counters
*/
double ddbc_lease_wait_default(void) {
  const char *e = getenv("DYNAMODB_SHARED_CACHE_LEASE_WAIT");
  char *end;
  double d;
  if(!e || !e[0] || strcmp(e, "auto") == 0)
    return DDBC_LEASE_AUTO;
  d = strtod(e, &end);
  if(*end || d != d || d < 0 || d > LEASE_WAIT_MAX)
    return DDBC_LEASE_AUTO; /* not seconds from 0 to 1: the default */
  return d;
}

/* The process's DynamoDB round trip by kind, in microseconds (0: none
** yet): the slowest of the recent reads, each read taking an eighth off
** (a decaying maximum: a wait must cover the holder's slow reads, not its
** average one).  Atomic; a lost update is one read less. */
static uint64_t read_us[3];

void ddbc_lease_note_read(int kind, double seconds) {
  uint64_t *p = &read_us[kind >= 0 && kind < 3 ? kind : 0];
  uint64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);
  uint64_t us = seconds > 0 ? (uint64_t)(seconds * 1e6) : 1;
  old -= old / 8;
  __atomic_store_n(p, us > old ? us : old, __ATOMIC_RELAXED);
}

double ddbc_lease_wait_of(const ddbc_policy *pol, int kind) {
  uint64_t us;
  double w;
  if(pol->lease_wait >= 0)
    return pol->lease_wait;
  us = __atomic_load_n(&read_us[kind >= 0 && kind < 3 ? kind : 0],
                       __ATOMIC_RELAXED);
  if(us == 0)
    return DDBC_LEASE_WAIT;
  w = 2 * (double)us / 1e6;
  return w < LEASE_WAIT_MIN   ? LEASE_WAIT_MIN
         : w > LEASE_WAIT_MAX ? LEASE_WAIT_MAX
                              : w;
}

double ddbc_lease_hold(double wait) {
  double h = wait * LEASE_HOLD_FACTOR;
  return h > LEASE_HOLD_MIN ? h : LEASE_HOLD_MIN;
}

void ddbc_lease_stats(ddbc_stats *out) {
  out->shared_lease_wins = __atomic_load_n(&st.wins, __ATOMIC_RELAXED);
  out->shared_lease_waits = __atomic_load_n(&st.waits, __ATOMIC_RELAXED);
  out->shared_lease_stale = __atomic_load_n(&st.stale, __ATOMIC_RELAXED);
  out->shared_lease_fallbacks =
      __atomic_load_n(&st.fallbacks, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------
** Script calls
*/
/* A new token in *tok.  Returns 0, or -1 (no randomness: no lease). */
static int token_new(ddbc_lease_token *tok) {
  unsigned char r[16];
  if(RAND_bytes(r, sizeof(r)) != 1)
    return -1;
  ddb_hex(r, sizeof(r), tok->hex);
  return 0;
}

/* "PX" milliseconds of s seconds (at least 1), into out[0..24). */
static void px_of(double s, char *out) {
  long long ms = (long long)(s * 1000);
  snprintf(out, 24, "%lld", ms > 0 ? ms : 1);
}

/* One call of a script: its arguments after the script (numkeys, the
** keys, the args), RESP-encoded in body, argc of them. */
typedef struct script_call {
  ddb_buf body;
  int argc;
} script_call;

/* Start call x of nkeys keys (body capped at cap bytes). */
static void call_start(script_call *x, int nkeys, size_t cap) {
  char n[16];
  ddb_buf_init(&x->body, cap);
  snprintf(n, sizeof(n), "%d", nkeys);
  ddbc_resp_arg(&x->body, n, strlen(n));
  x->argc = 1;
}

/* Append an argument to call x. */
static void call_arg(script_call *x, const void *p, size_t n) {
  ddbc_resp_arg(&x->body, p, n);
  x->argc++;
}

/* Send calls x[0..n) of script s in one round trip (EVALSHA; again with
** EVAL when Redis answers NOSCRIPT), replies into rp[0..n) (max_nodes
** values each).  Returns 0, or -1 (Redis failed: rp holds nothing). */
static int script_run(ddbc_shared *sh, int s, script_call *x, int n,
                      ddbc_resp_reply *rp, int max_nodes, const char *table,
                      const char *op) {
  unsigned char md[SHA_DIGEST_LENGTH];
  char sha[2 * SHA_DIGEST_LENGTH + 1];
  const char *text = script_text[s];
  ddb_buf cmds;
  double ms = 0;
  int i, full, again = 0, rc = -1;

  SHA1((const unsigned char *)text, strlen(text), md);
  ddb_hex(md, sizeof(md), sha);
  ddb_buf_init(&cmds, DDBC_RESP_MAX_REPLY);
  for(full = 0; full < 2; full++) {
    ddb_buf_reset(&cmds);
    for(i = 0; i < n; i++) {
      ddbc_resp_cmd(&cmds, x[i].argc + 2);
      ddbc_resp_args(&cmds, full ? "EVAL" : "EVALSHA");
      ddbc_resp_args(&cmds, full ? text : sha);
      ddb_buf_add(&cmds, x[i].body.p, x[i].body.len);
      if(x[i].body.failed)
        cmds.failed = 1;
    }
    if(ddbc_shared_round_trip(sh, &cmds, rp, n, max_nodes, table, &ms))
      break;
    for(i = 0, again = 0; i < n; i++)
      if(rp[i].node[0].type == DDBC_RESP_ERROR &&
         strncmp(rp[i].node[0].str, "NOSCRIPT", 8) == 0)
        again = 1;
    if(!again) {
      rc = 0;
      ddbc_shared_log(op, table, n, ms);
      break;
    }
    for(i = 0; i < n; i++)
      ddbc_resp_reply_free(&rp[i]);
  }
  ddb_buf_free(&cmds);
  return rc;
}

/* Is reply r an array of m values?  (Else counted as an error.) */
static int reply_ok(const ddbc_resp_reply *r, int m) {
  if(r->node[0].type == DDBC_RESP_ARRAY && r->node[0].integer == m &&
     r->n_node == m + 1)
    return 1;
  ddbc_shared_count_error();
  return 0;
}

/* Free the calls x[0..n) and x. */
static void calls_free(script_call *x, int n) {
  int i;
  for(i = 0; i < n; i++)
    ddb_buf_free(&x[i].body);
  free(x);
}

/* ------------------------------------------------------------------------
** Items
*/
/* The indexes of the items of tails[0..n) (not NULL) whose state is want,
** into a new array *out (free it); returns how many (0: none, *out NULL,
** or out of memory). */
static size_t items_in(char *const *tails, size_t n,
                       const unsigned char *state, unsigned char want,
                       size_t **out) {
  size_t i, m = 0;
  *out = NULL;
  for(i = 0; i < n; i++)
    m += tails[i] && state[i] == want;
  if(m == 0 || !(*out = calloc(m, sizeof(**out))))
    return 0;
  for(i = 0, m = 0; i < n; i++)
    if(tails[i] && state[i] == want)
      (*out)[m++] = i;
  return m;
}

/* The keys of call k of which[0..m): from k * LEASE_CHUNK, how many. */
static int chunk_len(size_t m, int k) {
  size_t at = (size_t)k * LEASE_CHUNK;
  return (int)(m - at < LEASE_CHUNK ? m - at : LEASE_CHUNK);
}

/* The names of an item's entry ([0]) and lease ([1]). */
typedef char pair_names[2][DDBC_SHARED_NAME_LEN + 1];

/* The names of the items of tails[0..n) (not NULL) in a new array (free
** it), or NULL when out of memory.  Made once a call: a poll loop asks
** the same keys many times. */
static pair_names *names_of(const unsigned char *root, char *const *tails,
                            const size_t *lens, size_t n) {
  pair_names *nm = calloc(n ? n : 1, sizeof(*nm));
  size_t i;
  for(i = 0; nm && i < n; i++)
    if(tails[i]) {
      ddbc_shared_name(root, 'I', tails[i], lens[i], nm[i][0]);
      ddbc_shared_name(root, DDBC_LEASE_ITEM, tails[i], lens[i], nm[i][1]);
    }
  return nm;
}

/* Start the calls of a script over the items which[0..m): numkeys and the
** pairs (entry, lease) of each chunk, into x[0..nc) (cap: each body's). */
static void calls_keys(pair_names *nm, const size_t *which, size_t m,
                       script_call *x, int nc, size_t cap) {
  int k, q;
  for(k = 0; k < nc; k++) {
    int len = chunk_len(m, k);
    call_start(&x[k], 2 * len, cap);
    for(q = 0; q < len; q++) {
      size_t at = which[(size_t)k * LEASE_CHUNK + (size_t)q];
      call_arg(&x[k], nm[at][0], DDBC_SHARED_NAME_LEN);
      call_arg(&x[k], nm[at][1], DDBC_SHARED_NAME_LEN);
    }
  }
}

/* The state of item `at` from v, TAKE's answer for it: an entry (HIT with
** found[at] and age[at], or FALLBACK when not to be taken), 1 WON, 0 LOST;
** anything else `fail`. */
static void take_one(const unsigned char *root, const char *name, size_t at,
                     const ddbc_resp_node *v, double max_age, double now,
                     ddb_buf *plain, unsigned char fail, unsigned char *state,
                     ddb_item **found, double *age) {
  double a = 0;
  if(v->type == DDBC_RESP_BULK) {
    ddb_buf_reset(plain);
    if(ddbc_shared_item_take(root, name, v, max_age, now, plain, &found[at],
                             &a)) {
      state[at] = DDBC_LEASE_HIT;
      ddbc_shared_count_found(1, 0);
      if(age)
        age[at] = a;
    } else
      state[at] = DDBC_LEASE_FALLBACK;
  } else if(v->type == DDBC_RESP_INT && v->integer == 1) {
    state[at] = DDBC_LEASE_WON;
    COUNT(wins, 1);
  } else if(v->type == DDBC_RESP_INT && v->integer == 0)
    state[at] = DDBC_LEASE_LOST;
  else {
    ddbc_shared_count_error();
    state[at] = fail;
  }
}

/* TAKE the leases of the items whose state is LOST, LEASE_CHUNK a call,
** all calls in one round trip, and set their states from the answers
** (take_one); Redis failing sets them to `fail`. */
static void take_round(ddbc_shared *sh, ddb_client *c, const char *table,
                       char *const *tails, pair_names *nm, size_t n,
                       double wait, double max_age,
                       const ddbc_lease_token *tok, unsigned char *state,
                       unsigned char fail, ddb_item **found, double *age) {
  const unsigned char *root = ddb_client_tier_key(c);
  char px[24];
  size_t *which = NULL, m, i;
  int nc, k, q;
  script_call *x = NULL;
  ddbc_resp_reply *rp = NULL;
  ddb_buf plain;
  double now = ddbc_shared_now();

  m = items_in(tails, n, state, DDBC_LEASE_LOST, &which);
  if(m == 0) {
    for(i = 0; i < n; i++) /* out of memory: no lease */
      if(state[i] == DDBC_LEASE_LOST)
        state[i] = fail;
    return;
  }
  nc = (int)((m + LEASE_CHUNK - 1) / LEASE_CHUNK);
  x = calloc((size_t)nc, sizeof(*x));
  rp = calloc((size_t)nc, sizeof(*rp));
  ddb_buf_init(&plain, DDBC_SHARED_MAX_VALUE + 64);
  px_of(ddbc_lease_hold(wait), px);
  if(!x || !rp)
    goto failed;
  calls_keys(nm, which, m, x, nc, 64 * 1024);
  for(k = 0; k < nc; k++) {
    call_arg(&x[k], tok->hex, 32);
    call_arg(&x[k], px, strlen(px));
  }
  if(script_run(sh, S_TAKE, x, nc, rp, LEASE_CHUNK + 1, table, "shared_lease"))
    goto failed;
  for(k = 0; k < nc; k++) {
    int len = chunk_len(m, k);
    int ok = reply_ok(&rp[k], len);
    for(q = 0; q < len; q++) {
      size_t at = which[(size_t)k * LEASE_CHUNK + (size_t)q];
      if(ok)
        take_one(root, nm[at][0], at, &rp[k].node[q + 1], max_age, now, &plain,
                 fail, state, found, age);
      else
        state[at] = fail;
    }
  }
  goto done;
failed:
  for(i = 0; i < m; i++)
    state[which[i]] = fail;
done:
  for(k = 0; rp && k < nc; k++)
    ddbc_resp_reply_free(&rp[k]);
  if(plain.p)
    OPENSSL_cleanse(plain.p, plain.len);
  ddb_buf_free(&plain);
  if(x)
    calls_free(x, nc);
  free(rp);
  free(which);
}

void ddbc_lease_take_items(ddbc_shared *sh, ddb_client *c, const char *table,
                           char *const *tails, const size_t *lens, size_t n,
                           double wait, double max_age, ddbc_lease_token *tok,
                           unsigned char *state, ddb_item **found,
                           double *age) {
  size_t i, lost = 0;
  int no_token = token_new(tok);
  pair_names *nm = names_of(ddb_client_tier_key(c), tails, lens, n);
  /* the keys to take are marked LOST, then asked */
  for(i = 0; i < n; i++)
    state[i] = tails[i] && nm && !no_token ? DDBC_LEASE_LOST : DDBC_LEASE_NONE;
  take_round(sh, c, table, tails, nm, n, wait, max_age, tok, state,
             DDBC_LEASE_NONE, found, age);
  free(nm);
  for(i = 0; i < n; i++)
    lost += state[i] == DDBC_LEASE_LOST;
  COUNT(waits, lost);
}

/* Sleep s seconds (nothing when s <= 0). */
static void sleep_for(double s) {
  struct timespec ts;
  if(s <= 0)
    return;
  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  nanosleep(&ts, NULL);
}

/* The poll loop of a wait: poll(arg) every wait / LEASE_POLLS seconds
** (LEASE_POLL_MIN to LEASE_POLL_MAX) until it returns 0 (nothing left to
** wait for) or wait seconds have passed (the last poll at the
** deadline). */
static void poll_until(double wait, int (*poll)(void *), void *arg) {
  double t0 = ddbc_resp_clock(), step = wait / LEASE_POLLS, left;
  step = step < LEASE_POLL_MIN   ? LEASE_POLL_MIN
         : step > LEASE_POLL_MAX ? LEASE_POLL_MAX
                                 : step;
  for(;;) {
    left = t0 + wait - ddbc_resp_clock();
    sleep_for(step < left ? step : left);
    if(!poll(arg) || ddbc_resp_clock() >= t0 + wait)
      break;
  }
}

/* What a poll of items needs. */
typedef struct item_wait {
  ddbc_shared *sh;
  ddb_client *c;
  const char *table;
  char *const *tails;
  pair_names *nm;
  size_t n;
  double wait, max_age;
  const ddbc_lease_token *tok;
  unsigned char *state;
  ddb_item **found;
  double *age;
} item_wait;

/* One poll of the LOST items of w (a TAKE round; Redis failing ends the
** wait: FALLBACK).  Returns 1 while some are still LOST. */
static int item_poll(void *arg) {
  item_wait *w = arg;
  size_t i;
  take_round(w->sh, w->c, w->table, w->tails, w->nm, w->n, w->wait, w->max_age,
             w->tok, w->state, DDBC_LEASE_FALLBACK, w->found, w->age);
  for(i = 0; i < w->n; i++)
    if(w->state[i] == DDBC_LEASE_LOST)
      return 1;
  return 0;
}

void ddbc_lease_wait_items(ddbc_shared *sh, ddb_client *c, const char *table,
                           char *const *tails, const size_t *lens, size_t n,
                           double wait, double max_age,
                           const ddbc_lease_token *tok, unsigned char *state,
                           ddb_item **found, double *age) {
  item_wait w;
  size_t i, lost = 0;
  for(i = 0; i < n; i++)
    lost += state[i] == DDBC_LEASE_LOST;
  if(lost == 0)
    return;
  w.sh = sh;
  w.c = c;
  w.table = table;
  w.tails = tails;
  w.nm = names_of(ddb_client_tier_key(c), tails, lens, n);
  w.n = n;
  w.wait = wait;
  w.max_age = max_age;
  w.tok = tok;
  w.state = state;
  w.found = found;
  w.age = age;
  if(w.nm)
    poll_until(wait, item_poll, &w);
  free(w.nm);
  for(i = 0; i < n; i++)
    if(state[i] == DDBC_LEASE_LOST) {
      state[i] = DDBC_LEASE_FALLBACK;
      COUNT(fallbacks, 1);
    }
}

/* Count FILL's (and PAGE_FILL's) answer r: 1 a fill, 0 dropped. */
static void count_fill(const ddbc_resp_node *r) {
  if(r->type == DDBC_RESP_INT && r->integer == 1)
    ddbc_shared_count_found(0, 1);
  else if(r->type == DDBC_RESP_INT && r->integer == 0)
    COUNT(stale, 1);
}

void ddbc_lease_fill_items(ddbc_shared *sh, ddb_client *c, const char *table,
                           char *const *tails, const size_t *lens, size_t n,
                           const unsigned char *state, ddb_item *const *items,
                           int release, double ttl,
                           const ddbc_lease_token *tok, double now) {
  const unsigned char *root = ddb_client_tier_key(c);
  char px[24];
  size_t *which = NULL, m;
  script_call *x = NULL;
  ddbc_resp_reply *rp = NULL;
  pair_names *nm = NULL;
  ddb_buf v;
  int nc = 0, k, q;

  m = items_in(tails, n, state, DDBC_LEASE_WON, &which);
  if(m == 0 || !(nm = names_of(root, tails, lens, n))) {
    free(which);
    return; /* (out of memory: the leases run out) */
  }
  nc = (int)((m + LEASE_CHUNK - 1) / LEASE_CHUNK);
  x = calloc((size_t)nc, sizeof(*x));
  rp = calloc((size_t)nc, sizeof(*rp));
  ddb_buf_init(&v, DDBC_SHARED_MAX_VALUE + 64);
  px_of(ttl, px);
  if(!x || !rp)
    goto done;
  calls_keys(nm, which, m, x, nc, DDBC_RESP_MAX_REPLY);
  for(k = 0; k < nc; k++) {
    int len = chunk_len(m, k);
    call_arg(&x[k], tok->hex, 32);
    call_arg(&x[k], px, strlen(px));
    for(q = 0; q < len; q++) {
      size_t at = which[(size_t)k * LEASE_CHUNK + (size_t)q];
      ddb_buf_reset(&v);
      if(release ||
         ddbc_shared_item_value(root, nm[at][0], items[at], now, &v))
        call_arg(&x[k], "", 0); /* (too large to share: released) */
      else
        call_arg(&x[k], v.p, v.len);
    }
  }
  if(script_run(sh, S_FILL, x, nc, rp, LEASE_CHUNK + 1, table, "shared_fill"))
    goto done;
  for(k = 0; k < nc; k++) {
    int len = chunk_len(m, k);
    if(reply_ok(&rp[k], len))
      for(q = 1; q <= len; q++)
        count_fill(&rp[k].node[q]);
    ddbc_resp_reply_free(&rp[k]);
  }
done:
  ddb_buf_free(&v);
  if(x)
    calls_free(x, nc);
  free(rp);
  free(which);
  free(nm);
}

/* ------------------------------------------------------------------------
** Pages
*/
/* What a poll of a page needs, and what it found. */
typedef struct page_wait {
  ddbc_shared *sh;
  const unsigned char *root;
  const char *table;
  const char *names; /* gen, page, lease: 3 names */
  ddbc_shared_gen gen;
  double max_age, hold;
  const ddbc_lease_token *tok;
  int state;
  ddb_page **out;
  double *age;
} page_wait;

/* One PAGE_TAKE of w's page: w->state from the answer (the page under
** w->gen: HIT; another page, or the generation moved: `other`; 1 WON;
** 0 LOST; Redis failing: `fail`).  Returns 1 while still LOST. */
static int page_round(page_wait *w, int fail, int other) {
  char px[24];
  script_call x;
  ddbc_resp_reply rp;
  ddb_buf plain;
  int i;
  px_of(w->hold, px);
  call_start(&x, 3, 4096);
  for(i = 0; i < 3; i++)
    call_arg(&x, w->names + i * (DDBC_SHARED_NAME_LEN + 1),
             DDBC_SHARED_NAME_LEN);
  call_arg(&x, w->tok->hex, 32);
  call_arg(&x, px, strlen(px));
  ddb_buf_init(&plain, DDBC_SHARED_MAX_VALUE + 64);
  w->state = fail;
  if(script_run(w->sh, S_PAGE_TAKE, &x, 1, &rp, 3, w->table, "shared_lease") ==
     0) {
    if(reply_ok(&rp, 2)) {
      const ddbc_resp_node *v = &rp.node[2];
      if(ddbc_shared_gen_parse(&rp.node[1]) != w->gen)
        w->state = other; /* a write moved it */
      else if(v->type == DDBC_RESP_BULK)
        w->state = ddbc_shared_page_take(
                       w->root, w->names + DDBC_SHARED_NAME_LEN + 1, v, w->gen,
                       w->max_age, ddbc_shared_now(), &plain, w->out, w->age)
                       ? DDBC_LEASE_HIT
                       : other;
      else if(v->type == DDBC_RESP_INT && v->integer == 1)
        w->state = DDBC_LEASE_WON;
      else if(v->type == DDBC_RESP_INT && v->integer == 0)
        w->state = DDBC_LEASE_LOST;
    }
    ddbc_resp_reply_free(&rp);
  }
  if(w->state == DDBC_LEASE_WON)
    COUNT(wins, 1);
  if(plain.p)
    OPENSSL_cleanse(plain.p, plain.len);
  ddb_buf_free(&plain);
  ddb_buf_free(&x.body);
  return w->state == DDBC_LEASE_LOST;
}

/* poll_until's poll of a page. */
static int page_poll(void *arg) {
  return page_round(arg, DDBC_LEASE_FALLBACK, DDBC_LEASE_FALLBACK);
}

/* The names of a page's generation, entry and lease into names. */
static void page_names(const unsigned char *root, const char *table,
                       const char *tail, size_t len, char *names) {
  ddbc_shared_gen_name(root, table, names);
  ddbc_shared_name(root, 'Q', tail, len, names + DDBC_SHARED_NAME_LEN + 1);
  ddbc_shared_name(root, DDBC_LEASE_PAGE, tail, len,
                   names + 2 * (DDBC_SHARED_NAME_LEN + 1));
}

int ddbc_lease_page(ddbc_shared *sh, ddb_client *c, const char *table,
                    const char *tail, size_t len, ddbc_shared_gen gen,
                    double wait, double max_age, ddbc_lease_token *tok,
                    ddb_page **out, double *age) {
  char names[3 * (DDBC_SHARED_NAME_LEN + 1)];
  page_wait w;
  *out = NULL;
  if(!gen || token_new(tok))
    return DDBC_LEASE_NONE;
  page_names(ddb_client_tier_key(c), table, tail, len, names);
  memset(&w, 0, sizeof(w));
  w.sh = sh;
  w.root = ddb_client_tier_key(c);
  w.table = table;
  w.names = names;
  w.gen = gen;
  w.max_age = max_age;
  w.hold = ddbc_lease_hold(wait);
  w.tok = tok;
  w.out = out;
  w.age = age;
  /* first: a page there under an older generation (a write retired it)
  ** is refilled as without leases (NONE), not waited for */
  if(!page_round(&w, DDBC_LEASE_NONE, DDBC_LEASE_NONE))
    return w.state;
  COUNT(waits, 1);
  poll_until(wait, page_poll, &w);
  if(w.state == DDBC_LEASE_LOST) {
    w.state = DDBC_LEASE_FALLBACK;
    COUNT(fallbacks, 1);
  }
  return w.state;
}

void ddbc_lease_fill_page(ddbc_shared *sh, ddb_client *c, const char *table,
                          const char *tail, size_t len, ddbc_shared_gen gen,
                          const ddb_page *p, double ttl,
                          const ddbc_lease_token *tok, double now) {
  const unsigned char *root = ddb_client_tier_key(c);
  char names[3 * (DDBC_SHARED_NAME_LEN + 1)], g[24], px[24];
  script_call x;
  ddbc_resp_reply rp;
  ddb_buf v;
  int i;
  page_names(root, table, tail, len, names);
  snprintf(g, sizeof(g), "%llu", (unsigned long long)gen);
  px_of(ttl, px);
  ddb_buf_init(&v, DDBC_SHARED_MAX_VALUE + 64);
  call_start(&x, 3, DDBC_RESP_MAX_REPLY);
  for(i = 0; i < 3; i++)
    call_arg(&x, names + i * (DDBC_SHARED_NAME_LEN + 1), DDBC_SHARED_NAME_LEN);
  call_arg(&x, tok->hex, 32);
  call_arg(&x, g, strlen(g));
  call_arg(&x, px, strlen(px));
  if(!p || ddbc_shared_page_value(root, names + DDBC_SHARED_NAME_LEN + 1, gen,
                                  p, now, &v))
    call_arg(&x, "", 0); /* released */
  else
    call_arg(&x, v.p, v.len);
  if(script_run(sh, S_PAGE_FILL, &x, 1, &rp, 2, table, "shared_fill") == 0) {
    if(reply_ok(&rp, 1))
      count_fill(&rp.node[1]);
    ddbc_resp_reply_free(&rp);
  }
  ddb_buf_free(&x.body);
  ddb_buf_free(&v);
}
