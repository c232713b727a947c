/*
** fleet.c -- one DynamoDB Stream reader per table per fleet (interface
** and the reader's loop: fleet.h; docs/cache.md, "One reader per
** fleet").  Transport only: what a change record means is the stream
** reader's.
**
**     leader:  DynamoDB Streams --GetRecords--> apply here
**                  |  XADD (script: lease checked, numbered)
**                  v
**              Redis Stream  --XREAD BLOCK-->  followers: apply there
**
** Keys.  Four per fleet, named as the tier names its entries
** (ddbc_shared_name, kind 'F', the logical key a letter and the table), so
** no table name is readable and other credentials name other keys:
**     l  the lease: a random token, SET NX PX DDBC_FLEET_LEASE
**     n  the sequence counter: the number of the last message published
**     s  the Redis Stream: entries {v: sealed message}
**     c  the checkpoint: the sealed shard positions
**
** Messages.  Sealed under the stream's name (ddbc_shared_seal: version,
** nonce, AES-256-GCM, tag); the plaintext:
**     kind (1: R a record, H a heartbeat, X a reset) | seq (8) |
**     fresh (8, ms of the leader's wall clock; 0 on records) | payload
** A heartbeat follows every batch of records: a follower's freshness moves
** only when it has applied the whole batch.  seq numbers every message of
** the fleet, continued by each new leader (the counter n), so that a
** follower sees any gap: messages trimmed away (it fell more than
** DDBC_FLEET_MAXLEN behind), a Redis that restarted or was flushed (the
** numbers start again), a message that does not open.  It then clears the
** table once and goes on from there.
**
** Why a Redis Stream, not pub/sub: pub/sub forgets a message nobody was
** connected to hear, silently; a stream keeps the last DDBC_FLEET_MAXLEN,
** so a follower that reconnects reads on from its last id, a new leader
** first reads what the old one published, and a process that starts
** following replays the last DDBC_FLEET_REPLAY seconds.
**
** Fencing.  The publish and checkpoint scripts check the lease's token in
** the same script: a leader that stalled past its lease (and was
** replaced) cannot publish or store anything.  Renewal and release are
** compare-and-pexpire and compare-and-delete scripts.
**
** Clocks.  Timers and the lease on CLOCK_MONOTONIC (ddbc_resp_clock);
** freshness on the leader's wall clock (ddbc_shared_now), compared by
** followers with theirs: the skew between machines adds to (or hides
** from) their lag; NTP keeps it to milliseconds.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "fleet.h"

#define HEAD_LEN 17 /* kind, seq, fresh */
#define ID_LEN   48 /* a stream id: "ms-n" */
#define CMD_MAX  (DDBC_FLEET_BATCH * (DDBC_FLEET_MAX_RECORD + 256) + 4096)

struct ddbc_fleet {
  ddbc_shared *sh;
  ddb_client *c;                        /* not owned */
  unsigned char root[DDB_TIER_KEY_LEN]; /* c's tier key (wiped) */
  char *table;                          /* owned */
  char k_lease[DDBC_SHARED_NAME_LEN + 1], k_seq[DDBC_SHARED_NAME_LEN + 1];
  char k_stream[DDBC_SHARED_NAME_LEN + 1], k_ckpt[DDBC_SHARED_NAME_LEN + 1];
  char token[33];           /* the lease's value: random hex */
  int pid;                  /* the process that made f */
  ddbc_resp *r;             /* the connection, or NULL */
  double retry_at, backoff; /* after a failure (monotonic) */
  double next_try;          /* the next renewal or attempt (monotonic) */
  double last_pub;          /* the last publish (monotonic) */
  int have_seq;             /* seq is known (a follower's baseline) */
  char last_id[ID_LEN];     /* the last stream entry read or written */
  pthread_mutex_t mu;       /* st */
  ddbc_fleet_state st;
};

/* ------------------------------------------------------------------------
** The scripts (KEYS and ARGV as written above each)
*/
/* KEYS lease; ARGV token, ms: 1 renewed, 0 not ours */
static const char renew_lua[] =
    "if redis.call('GET',KEYS[1])==ARGV[1] then "
    "return redis.call('PEXPIRE',KEYS[1],ARGV[2]) end return 0";
/* KEYS lease; ARGV token: 1 released, 0 not ours */
static const char release_lua[] =
    "if redis.call('GET',KEYS[1])==ARGV[1] then "
    "return redis.call('DEL',KEYS[1]) end return 0";
/* KEYS lease, counter, stream; ARGV token, first seq, maxlen, keep ms,
** values...: {last seq, last id}, {-1, ''} not the leader, {-2, counter}
** the counter is not first seq - 1 */
static const char publish_lua[] =
    "if redis.call('GET',KEYS[1])~=ARGV[1] then return {-1,''} end "
    "local c=tonumber(redis.call('GET',KEYS[2]) or '0') "
    "if c+1~=tonumber(ARGV[2]) then return {-2,tostring(c)} end "
    "local id='' "
    "for i=5,#ARGV do id=redis.call('XADD',KEYS[3],'MAXLEN','~',ARGV[3],"
    "'*','v',ARGV[i]) end "
    "c=c+#ARGV-4 "
    "redis.call('SET',KEYS[2],c,'PX',ARGV[4]) "
    "redis.call('PEXPIRE',KEYS[3],ARGV[4]) "
    "return {c,id}";
/* KEYS lease, checkpoint; ARGV token, value, keep ms: 1 stored, 0 not the
** leader */
static const char ckpt_lua[] =
    "if redis.call('GET',KEYS[1])~=ARGV[1] then return 0 end "
    "redis.call('SET',KEYS[2],ARGV[2],'PX',ARGV[3]) return 1";

/* ------------------------------------------------------------------------
** Small parts
*/
/* Set the state's why (and log it as the request log's row op) under
** f->mu; counter, when not NULL, counts one more. */
static void note(ddbc_fleet *f, const char *op, uint64_t *counter,
                 const char *why) {
  pthread_mutex_lock(&f->mu);
  snprintf(f->st.why, sizeof(f->st.why), "%s", why);
  if(counter)
    (*counter)++;
  pthread_mutex_unlock(&f->mu);
  ddbc_shared_log(op, f->table, -1, 0);
}

/* Set the role (under f->mu). */
static void set_role(ddbc_fleet *f, int role) {
  pthread_mutex_lock(&f->mu);
  f->st.role = role;
  pthread_mutex_unlock(&f->mu);
}

/* Clear the table through sink once, saying why (counted as a gap). */
static void clear_once(ddbc_fleet *f, const ddbc_fleet_sink *sink,
                       const char *why) {
  note(f, "fleet_clear", &f->st.gaps, why);
  if(sink && sink->clear)
    sink->clear(sink->arg, why);
}

/* Compare two stream ids "ms-n": <0, 0, >0. */
static int id_cmp(const char *a, const char *b) {
  unsigned long long am = 0, an = 0, bm = 0, bn = 0;
  sscanf(a, "%llu-%llu", &am, &an);
  sscanf(b, "%llu-%llu", &bm, &bn);
  if(am != bm)
    return am < bm ? -1 : 1;
  return an < bn ? -1 : an > bn;
}

/* Copy a reply's id (a bulk string) into out[ID_LEN]; "0-0" when it is
** not one. */
static void id_take(const ddbc_resp_node *v, char *out) {
  if(v->type == DDBC_RESP_BULK && v->len > 0 && v->len < ID_LEN)
    memcpy(out, v->str, v->len + 1);
  else
    memcpy(out, "0-0", 4);
}

/* Append a command of argc arguments, the first ones the strings of
** args[0..nstr) (the rest follow from the caller). */
static void cmd_strs(ddb_buf *b, int argc, const char *const *args, int nstr) {
  int i;
  ddbc_resp_cmd(b, argc);
  for(i = 0; i < nstr; i++)
    ddbc_resp_args(b, args[i]);
}

/* ------------------------------------------------------------------------
** The connection
*/
/* Redis failed (why): the connection dropped, the role OFF, backoff. */
static void conn_failed(ddbc_fleet *f, const char *why) {
  double now = ddbc_resp_clock();
  if(f->r)
    ddbc_resp_close(f->r, ddbc_resp_pid(f->r) != (int)getpid());
  f->r = NULL;
  f->backoff = f->backoff > 0 ? f->backoff * 2 : DDBC_FLEET_BACKOFF_MIN;
  if(f->backoff > DDBC_FLEET_BACKOFF_MAX)
    f->backoff = DDBC_FLEET_BACKOFF_MAX;
  f->retry_at = now + f->backoff;
  note(f, "fleet_error", NULL, why);
  set_role(f, DDBC_FLEET_OFF);
}

/* One round trip on f's connection (made when there is none): cmds, then
** n replies into rp (freed by the caller in every case), within wait +
** DDBC_FLEET_TIMEOUT seconds.  Returns 0, or -1 (skipped in backoff, or
** failed: conn_failed). */
static int call(ddbc_fleet *f, const ddb_buf *cmds, ddbc_resp_reply *rp, int n,
                int max_nodes, double wait) {
  double t0 = ddbc_resp_clock();
  char why[160];
  int i;
  for(i = 0; i < n; i++)
    memset(&rp[i], 0, sizeof(rp[i]));
  if(cmds->failed || t0 < f->retry_at)
    return -1;
  why[0] = 0;
  if(f->r && ddbc_resp_pid(f->r) != (int)getpid()) {
    ddbc_resp_close(f->r, 1); /* the parent's (fork) */
    f->r = NULL;
  }
  if(!f->r && ddbc_shared_connect(f->sh, t0 + DDBC_FLEET_TIMEOUT, &f->r, why,
                                  sizeof(why)) != DDBC_RESP_OK) {
    conn_failed(f, why);
    return -1;
  }
  if(ddbc_resp_call(f->r, cmds->p, cmds->len, rp, n, max_nodes,
                    ddbc_resp_clock() + wait + DDBC_FLEET_TIMEOUT, why,
                    sizeof(why)) != DDBC_RESP_OK) {
    for(i = 0; i < n; i++)
      ddbc_resp_reply_free(&rp[i]);
    conn_failed(f, why);
    return -1;
  }
  f->backoff = 0;
  return 0;
}

/* ------------------------------------------------------------------------
** Life
*/
/* The Redis key of the fleet's part (a letter) in out. */
static void fleet_name(ddbc_fleet *f, char part, char *out) {
  ddb_buf t;
  ddb_buf_init(&t, 4096);
  ddb_buf_addc(&t, part);
  ddb_buf_add_part(&t, f->table, strlen(f->table));
  ddbc_shared_name(f->root, 'F', t.p ? t.p : "", t.len, out);
  ddb_buf_free(&t);
}

ddb_result ddbc_fleet_new(ddbc_shared *sh, ddb_client *c, const char *table,
                          ddbc_fleet **out, ddb_error *err) {
  static const char hex[] = "0123456789abcdef";
  unsigned char rnd[16];
  ddbc_fleet *f;
  int i;

  *out = NULL;
  f = calloc(1, sizeof(*f));
  if(!f || !(f->table = strdup(table)) || RAND_bytes(rnd, sizeof(rnd)) != 1) {
    if(f)
      free(f->table);
    free(f);
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  }
  f->sh = sh;
  f->c = c;
  memcpy(f->root, ddb_client_tier_key(c), DDB_TIER_KEY_LEN);
  fleet_name(f, 'l', f->k_lease);
  fleet_name(f, 'n', f->k_seq);
  fleet_name(f, 's', f->k_stream);
  fleet_name(f, 'c', f->k_ckpt);
  for(i = 0; i < 16; i++) {
    f->token[2 * i] = hex[rnd[i] >> 4];
    f->token[2 * i + 1] = hex[rnd[i] & 15];
  }
  f->token[32] = 0;
  f->pid = (int)getpid();
  memcpy(f->last_id, "0-0", 4);
  pthread_mutex_init(&f->mu, NULL);
  *out = f;
  return DDB_OK;
}

/* A script's command: EVAL script numkeys keys... (its arguments follow
** from the caller). */
static void cmd_eval(ddb_buf *b, int argc, const char *script, int nkeys,
                     const char *const *keys) {
  char nk[8];
  int i;
  snprintf(nk, sizeof(nk), "%d", nkeys);
  ddbc_resp_cmd(b, argc);
  ddbc_resp_args(b, "EVAL");
  ddbc_resp_args(b, script);
  ddbc_resp_args(b, nk);
  for(i = 0; i < nkeys; i++)
    ddbc_resp_args(b, keys[i]);
}

void ddbc_fleet_free(ddbc_fleet *f) {
  if(!f)
    return;
  if(f->r && f->pid == (int)getpid() && f->st.role == DDBC_FLEET_LEADER) {
    ddbc_resp_reply rp;
    ddb_buf cmds;
    const char *keys[1] = {f->k_lease};
    ddb_buf_init(&cmds, 4096);
    cmd_eval(&cmds, 5, release_lua, 1, keys);
    ddbc_resp_args(&cmds, f->token);
    if(call(f, &cmds, &rp, 1, 1, 0) == 0)
      ddbc_resp_reply_free(&rp);
    ddb_buf_free(&cmds);
  }
  if(f->r)
    ddbc_resp_close(f->r, ddbc_resp_pid(f->r) != (int)getpid());
  OPENSSL_cleanse(f->root, sizeof(f->root));
  pthread_mutex_destroy(&f->mu);
  free(f->table);
  free(f);
}

void ddbc_fleet_status(ddbc_fleet *f, ddbc_fleet_state *out) {
  pthread_mutex_lock(&f->mu);
  *out = f->st;
  pthread_mutex_unlock(&f->mu);
}

/* ------------------------------------------------------------------------
** Following
*/
/* Why a FOLLOWER that cannot reach Redis clears the table: what the
** leader publishes meanwhile is lost to it, and its own reader starts at
** LATEST. */
static const char follow_lost[] =
    "fleet: Redis cannot answer: this process reads the stream itself";

/* One message v (an entry's value) with stream id id, through sink: the
** sequence checked (a gap clears the table once), then applied by kind.
** plain is scratch.  Returns 1 when it was a record. */
static int take(ddbc_fleet *f, const ddbc_resp_node *v, const char *id,
                const ddbc_fleet_sink *sink, ddb_buf *plain) {
  const unsigned char *h;
  uint64_t seq;
  double fresh;
  char why[160];
  int record = 0;

  ddb_buf_reset(plain);
  if(v->type != DDBC_RESP_BULK ||
     ddbc_shared_open_value(f->root, f->k_stream,
                            (const unsigned char *)v->str, v->len, plain) ||
     plain->len < HEAD_LEN) {
    /* not ours, or changed: what it said is lost */
    clear_once(f, sink, "fleet: a message that does not open");
    f->have_seq = 0;
    return 0;
  }
  h = (const unsigned char *)plain->p;
  seq = ddbc_shared_get64(h + 1);
  fresh = (double)ddbc_shared_get64(h + 9) / 1000;
  if(f->have_seq && seq != f->st.seq + 1) {
    if(seq > f->st.seq)
      snprintf(why, sizeof(why), "fleet: %llu messages missed",
               (unsigned long long)(seq - f->st.seq - 1));
    else
      snprintf(why, sizeof(why),
               "fleet: the stream began again (Redis "
               "restarted or flushed)");
    clear_once(f, sink, why);
  }
  f->have_seq = 1;
  if(h[0] == 'R' && sink && sink->apply) {
    sink->apply(sink->arg, h + HEAD_LEN, plain->len - HEAD_LEN);
    record = 1;
  } else if(h[0] == 'X') {
    snprintf(why, sizeof(why), "%.*s", (int)(plain->len - HEAD_LEN),
             plain->p + HEAD_LEN);
    clear_once(f, sink, why);
  }
  pthread_mutex_lock(&f->mu);
  f->st.seq = seq;
  if(fresh > 0)
    f->st.fresh = fresh;
  f->st.received += (uint64_t)record;
  pthread_mutex_unlock(&f->mu);
  snprintf(f->last_id, sizeof(f->last_id), "%s", id);
  return 1;
}

/* Walk an XREAD reply rp (flattened: streams, stream, key, entries,
** then each entry: pair, id, fields, "v", value) through take.  Returns
** the entries, or -1 when it is not that shape (counted). */
static int take_all(ddbc_fleet *f, const ddbc_resp_reply *rp,
                    const ddbc_fleet_sink *sink, ddb_buf *plain) {
  const ddbc_resp_node *x = rp->node;
  int i, k, n, at;
  char id[ID_LEN];
  if(x[0].type == DDBC_RESP_NIL)
    return 0; /* nothing within the wait */
  if(x[0].type != DDBC_RESP_ARRAY || rp->n_node < 4 ||
     x[3].type != DDBC_RESP_ARRAY)
    goto bad;
  n = (int)x[3].integer;
  for(i = 0, at = 4; i < n; i++) {
    if(at + 2 >= rp->n_node || x[at].type != DDBC_RESP_ARRAY ||
       x[at + 2].type != DDBC_RESP_ARRAY)
      goto bad;
    id_take(&x[at + 1], id);
    k = (int)x[at + 2].integer;
    if(k != 2 || at + 4 >= rp->n_node)
      goto bad;
    take(f, &x[at + 4], id, sink, plain);
    at += 5;
  }
  return n;
bad:
  ddbc_shared_count_error();
  return -1;
}

int ddbc_fleet_follow(ddbc_fleet *f, double wait,
                      const ddbc_fleet_sink *sink) {
  char count[16], block[24];
  const char *args[4] = {"XREAD", "COUNT", count, "BLOCK"};
  ddbc_resp_reply rp;
  ddb_buf cmds, plain;
  int n, was = f->st.role;

  snprintf(count, sizeof(count), "%d", DDBC_FLEET_BATCH);
  snprintf(block, sizeof(block), "%lld",
           wait * 1000 < 1 ? 1LL : (long long)(wait * 1000)); /* 0: ever */
  ddb_buf_init(&cmds, 4096);
  ddb_buf_init(&plain, DDBC_FLEET_MAX_RECORD + 4096);
  cmd_strs(&cmds, wait > 0 ? 8 : 6, args, wait > 0 ? 4 : 3);
  if(wait > 0)
    ddbc_resp_args(&cmds, block);
  ddbc_resp_args(&cmds, "STREAMS");
  ddbc_resp_args(&cmds, f->k_stream);
  ddbc_resp_args(&cmds, f->last_id);
  n = -1;
  if(call(f, &cmds, &rp, 1, DDBC_RESP_MAX_NODES, wait) == 0) {
    n = take_all(f, &rp, sink, &plain);
    ddbc_resp_reply_free(&rp);
  } else if(was == DDBC_FLEET_FOLLOWER && f->st.role == DDBC_FLEET_OFF)
    clear_once(f, sink, follow_lost);
  if(plain.p)
    OPENSSL_cleanse(plain.p, plain.len);
  ddb_buf_free(&plain);
  ddb_buf_free(&cmds);
  return n;
}

/* Where a process that starts following begins: the stream's newest
** entry less DDBC_FLEET_REPLAY seconds (on Redis's clock, as the ids
** are), with no sequence yet (the first message read is the baseline).
** A process that followed before, and finds the stream gone or older
** than where it was (Redis restarted), clears the table once.  Returns 0
** or -1 (Redis failed). */
static int follow_start(ddbc_fleet *f, const ddbc_fleet_sink *sink) {
  static const char *const args[] = {"XREVRANGE", NULL,    "+",
                                     "-",         "COUNT", "1"};
  const char *a[6];
  ddbc_resp_reply rp;
  ddb_buf cmds;
  char newest[ID_LEN];
  unsigned long long ms = 0,
                     back = (unsigned long long)(DDBC_FLEET_REPLAY * 1000);
  memcpy(a, args, sizeof(a));
  a[1] = f->k_stream;
  ddb_buf_init(&cmds, 4096);
  cmd_strs(&cmds, 6, a, 6);
  if(call(f, &cmds, &rp, 1, 16, 0)) {
    ddb_buf_free(&cmds);
    return -1;
  }
  ddb_buf_free(&cmds);
  memcpy(newest, "0-0", 4);
  if(rp.node[0].type == DDBC_RESP_ARRAY && rp.n_node >= 3)
    id_take(&rp.node[2], newest);
  ddbc_resp_reply_free(&rp);
  if(f->have_seq && id_cmp(newest, f->last_id) < 0)
    clear_once(f, sink,
               "fleet: the stream began again (Redis restarted or "
               "flushed)");
  f->have_seq = 0;
  sscanf(newest, "%llu", &ms);
  snprintf(f->last_id, sizeof(f->last_id), "%llu-0",
           ms > back ? ms - back : 0);
  return 0;
}

/* ------------------------------------------------------------------------
** The election
*/
/* Renew the lease (LEADER).  Returns 1 renewed, 0 lost, -1 Redis
** failed. */
static int renew(ddbc_fleet *f) {
  const char *keys[1] = {f->k_lease};
  char ms[24];
  ddbc_resp_reply rp;
  ddb_buf cmds;
  int rc = -1;
  snprintf(ms, sizeof(ms), "%lld", (long long)(DDBC_FLEET_LEASE * 1000));
  ddb_buf_init(&cmds, 4096);
  cmd_eval(&cmds, 6, renew_lua, 1, keys);
  ddbc_resp_args(&cmds, f->token);
  ddbc_resp_args(&cmds, ms);
  if(call(f, &cmds, &rp, 1, 1, 0) == 0) {
    rc = rp.node[0].type == DDBC_RESP_INT && rp.node[0].integer == 1;
    ddbc_resp_reply_free(&rp);
  }
  ddb_buf_free(&cmds);
  return rc;
}

/* Try to take the lease: SET NX PX, and the counter read in the same
** round trip.  Returns 1 taken (*seq the counter), 0 another holds it,
** -1 Redis failed. */
static int acquire(ddbc_fleet *f, uint64_t *seq) {
  char ms[24];
  const char *args[7] = {"SET", f->k_lease, f->token, "NX", "PX", ms, NULL};
  const char *get[2] = {"GET", f->k_seq};
  ddbc_resp_reply rp[2];
  ddb_buf cmds;
  int rc = -1;
  snprintf(ms, sizeof(ms), "%lld", (long long)(DDBC_FLEET_LEASE * 1000));
  ddb_buf_init(&cmds, 4096);
  cmd_strs(&cmds, 6, args, 6);
  cmd_strs(&cmds, 2, get, 2);
  if(call(f, &cmds, rp, 2, 1, 0) == 0) {
    rc = rp[0].node[0].type == DDBC_RESP_STATUS;
    *seq = rp[1].node[0].type == DDBC_RESP_BULK
               ? strtoull(rp[1].node[0].str, NULL, 10)
               : 0;
    ddbc_resp_reply_free(&rp[0]);
    ddbc_resp_reply_free(&rp[1]);
  }
  ddb_buf_free(&cmds);
  return rc;
}

/* This process took the lease (the counter at seq): what the last leader
** published and this one has not read is applied first. */
static void become_leader(ddbc_fleet *f, const ddbc_fleet_sink *sink,
                          uint64_t seq) {
  int n;
  if(f->st.role == DDBC_FLEET_FOLLOWER)
    do
      n = ddbc_fleet_follow(f, 0, sink);
    while(n >= DDBC_FLEET_BATCH);
  else
    n = follow_start(f, sink); /* the last id, for a later FOLLOWER */
  if(n < 0)
    return; /* Redis failed: OFF (the lease runs out) */
  pthread_mutex_lock(&f->mu);
  f->st.seq = seq;
  f->st.leads++;
  f->st.role = DDBC_FLEET_LEADER;
  pthread_mutex_unlock(&f->mu);
  f->have_seq = 1;
  f->last_pub = 0;
  ddbc_shared_log("fleet_lead", f->table, -1, 0);
}

int ddbc_fleet_tick(ddbc_fleet *f, const ddbc_fleet_sink *sink) {
  double now = ddbc_resp_clock();
  int was = f->st.role, rc;
  uint64_t seq = 0;

  if(now < f->retry_at || now < f->next_try)
    return was;
  f->next_try = now + DDBC_FLEET_RENEW;
  if(was == DDBC_FLEET_LEADER) {
    rc = renew(f);
    if(rc == 0) {
      note(f, "fleet_lost", NULL, "fleet: the lease went to another process");
      set_role(f, DDBC_FLEET_FOLLOWER);
    }
    return f->st.role;
  }
  rc = acquire(f, &seq);
  if(rc == 1)
    become_leader(f, sink, seq);
  else if(rc == 0 && was == DDBC_FLEET_OFF && follow_start(f, sink) == 0)
    set_role(f, DDBC_FLEET_FOLLOWER);
  if(was == DDBC_FLEET_FOLLOWER && f->st.role == DDBC_FLEET_OFF)
    clear_once(f, sink, follow_lost);
  return f->st.role;
}

/* ------------------------------------------------------------------------
** Publishing
*/
/* Append the sealed message (kind, seq, fresh, payload p[0..n)) as the
** next argument of cmds.  Returns 0 or -1. */
static int seal_arg(ddbc_fleet *f, ddb_buf *cmds, char kind, uint64_t seq,
                    double fresh, const void *p, size_t n) {
  unsigned char *plain = malloc(HEAD_LEN + n);
  ddb_buf v;
  int rc = -1;
  if(!plain)
    return -1;
  plain[0] = (unsigned char)kind;
  ddbc_shared_put64(plain + 1, seq);
  ddbc_shared_put64(plain + 9, (uint64_t)(fresh > 0 ? fresh * 1000 : 0));
  if(n)
    memcpy(plain + HEAD_LEN, p, n);
  ddb_buf_init(&v, DDBC_SHARED_MAX_VALUE + 64);
  if(ddbc_shared_seal(f->root, f->k_stream, plain, HEAD_LEN + n, &v) == 0) {
    ddbc_resp_arg(cmds, v.p, v.len);
    rc = 0;
  }
  OPENSSL_cleanse(plain, HEAD_LEN + n);
  free(plain);
  ddb_buf_free(&v);
  return rc;
}

/* The publish script for messages kinds[i] (payloads p[i][0..n[i])) and,
** last, a heartbeat of fresh, numbered from f's counter + 1.  Returns the
** script's code (the new counter, -1 not the leader, -2 the counter
** differs: *seen it) or -3 when Redis failed or a message would not
** seal. */
static long long publish_once(ddbc_fleet *f, const char *kinds,
                              const unsigned char *const *p, const size_t *n,
                              size_t m, double fresh, long long *seen) {
  const char *keys[3] = {f->k_lease, f->k_seq, f->k_stream};
  char first[24], maxlen[24], keep[24];
  ddbc_resp_reply rp;
  ddb_buf cmds;
  long long code = -3;
  size_t i;
  snprintf(first, sizeof(first), "%llu", (unsigned long long)f->st.seq + 1);
  snprintf(maxlen, sizeof(maxlen), "%d", DDBC_FLEET_MAXLEN);
  snprintf(keep, sizeof(keep), "%lld", DDBC_FLEET_KEEP_MS);
  ddb_buf_init(&cmds, CMD_MAX);
  cmd_eval(&cmds, 10 + (int)m + 1, publish_lua, 3, keys);
  ddbc_resp_args(&cmds, f->token);
  ddbc_resp_args(&cmds, first);
  ddbc_resp_args(&cmds, maxlen);
  ddbc_resp_args(&cmds, keep);
  for(i = 0; i < m; i++)
    if(seal_arg(f, &cmds, kinds[i], f->st.seq + 1 + i, 0, p[i], n[i]))
      cmds.failed = 1;
  if(seal_arg(f, &cmds, 'H', f->st.seq + 1 + m, fresh, NULL, 0))
    cmds.failed = 1;
  if(!cmds.failed && call(f, &cmds, &rp, 1, 3, 0) == 0) {
    const ddbc_resp_node *x = rp.node;
    if(rp.n_node == 3 && x[1].type == DDBC_RESP_INT) {
      code = x[1].integer;
      if(code == -2 && x[2].type == DDBC_RESP_BULK)
        *seen = strtoll(x[2].str, NULL, 10);
      if(code >= 0)
        id_take(&x[2], f->last_id);
    } else {
      ddbc_shared_count_error();
    }
    ddbc_resp_reply_free(&rp);
  }
  ddb_buf_free(&cmds);
  return code;
}

/* Publish m messages (m <= DDBC_FLEET_BATCH) and a heartbeat: the script,
** once more when the counter moved under this process (a leader before
** it published after it read the counter; the lease keeps that from
** happening again).  Returns 0 or -1. */
static int publish_batch(ddbc_fleet *f, const char *kinds,
                         const unsigned char *const *p, const size_t *n,
                         size_t m, double fresh) {
  long long code, seen = 0;
  int tries;
  for(tries = 0; tries < 2; tries++) {
    code = publish_once(f, kinds, p, n, m, fresh, &seen);
    if(code >= 0) {
      pthread_mutex_lock(&f->mu);
      f->st.seq = (uint64_t)code;
      if(fresh > 0)
        f->st.fresh = fresh;
      f->st.published += (uint64_t)m;
      pthread_mutex_unlock(&f->mu);
      f->last_pub = ddbc_resp_clock();
      return 0;
    }
    if(code == -1) {
      note(f, "fleet_lost", NULL, "fleet: the lease went to another process");
      set_role(f, DDBC_FLEET_FOLLOWER);
      return -1;
    }
    if(code != -2)
      return -1;
    pthread_mutex_lock(&f->mu);
    f->st.seq = (uint64_t)(seen > 0 ? seen : 0);
    pthread_mutex_unlock(&f->mu);
  }
  return -1;
}

int ddbc_fleet_publish(ddbc_fleet *f, const unsigned char *const *recs,
                       const size_t *lens, size_t n, double fresh) {
  static const char reset_why[] = "fleet: a change too large to publish";
  char kinds[DDBC_FLEET_BATCH];
  const unsigned char *p[DDBC_FLEET_BATCH];
  size_t len[DDBC_FLEET_BATCH], start = 0, m, i;

  if(f->st.role != DDBC_FLEET_LEADER)
    return -1;
  if(n == 0 && f->last_pub > 0 &&
     ddbc_resp_clock() - f->last_pub < DDBC_FLEET_HEARTBEAT)
    return 0;
  do {
    for(m = 0, i = start; i < n && m < DDBC_FLEET_BATCH; i++, m++) {
      int big = lens[i] > DDBC_FLEET_MAX_RECORD;
      kinds[m] = big ? 'X' : 'R';
      p[m] = big ? (const unsigned char *)reset_why : recs[i];
      len[m] = big ? sizeof(reset_why) - 1 : lens[i];
    }
    start = i;
    if(publish_batch(f, kinds, p, len, m, i < n ? 0 : fresh))
      return -1;
  } while(start < n);
  if(n)
    ddbc_shared_log("fleet_publish", f->table, (int)n, 0);
  return 0;
}

int ddbc_fleet_publish_reset(ddbc_fleet *f, double fresh, const char *why) {
  const unsigned char *p = (const unsigned char *)why;
  size_t n = strlen(why);
  if(f->st.role != DDBC_FLEET_LEADER)
    return -1;
  return publish_batch(f, "X", &p, &n, 1, fresh);
}

void ddbc_fleet_note_change(ddbc_fleet *f, const char *tail, size_t len,
                            double now) {
  ddbc_shared_note_write(f->sh, f->c, f->table, tail, len, NULL, 0, now);
}

/* ------------------------------------------------------------------------
** The checkpoint
*/
int ddbc_fleet_checkpoint_put(ddbc_fleet *f, const void *pos, size_t len) {
  const char *keys[2] = {f->k_lease, f->k_ckpt};
  char keep[24];
  unsigned char *plain;
  ddbc_resp_reply rp;
  ddb_buf cmds, v;
  int rc = -1;

  if(f->st.role != DDBC_FLEET_LEADER || len > DDBC_FLEET_MAX_CHECKPOINT)
    return -1;
  plain = malloc(HEAD_LEN + len);
  if(!plain)
    return -1;
  plain[0] = 'C';
  ddbc_shared_put64(plain + 1, f->st.seq);
  ddbc_shared_put64(plain + 9, 0);
  memcpy(plain + HEAD_LEN, pos, len);
  snprintf(keep, sizeof(keep), "%lld", DDBC_FLEET_KEEP_MS);
  ddb_buf_init(&v, DDBC_SHARED_MAX_VALUE + 64);
  ddb_buf_init(&cmds, DDBC_FLEET_MAX_CHECKPOINT + 8192);
  if(ddbc_shared_seal(f->root, f->k_ckpt, plain, HEAD_LEN + len, &v) == 0) {
    cmd_eval(&cmds, 8, ckpt_lua, 2, keys);
    ddbc_resp_args(&cmds, f->token);
    ddbc_resp_arg(&cmds, v.p, v.len);
    ddbc_resp_args(&cmds, keep);
    if(call(f, &cmds, &rp, 1, 1, 0) == 0) {
      rc =
          rp.node[0].type == DDBC_RESP_INT && rp.node[0].integer == 1 ? 0 : -1;
      ddbc_resp_reply_free(&rp);
    }
  }
  OPENSSL_cleanse(plain, HEAD_LEN + len);
  free(plain);
  ddb_buf_free(&v);
  ddb_buf_free(&cmds);
  return rc;
}

int ddbc_fleet_checkpoint_get(ddbc_fleet *f, ddb_buf *out) {
  const char *args[2] = {"GET", f->k_ckpt};
  ddbc_resp_reply rp;
  ddb_buf cmds, plain;
  int rc = -1;
  ddb_buf_init(&cmds, 4096);
  ddb_buf_init(&plain, DDBC_FLEET_MAX_CHECKPOINT + 64);
  cmd_strs(&cmds, 2, args, 2);
  if(call(f, &cmds, &rp, 1, 1, 0) == 0) {
    const ddbc_resp_node *x = &rp.node[0];
    rc = 0;
    if(x->type == DDBC_RESP_BULK &&
       (ddbc_shared_open_value(f->root, f->k_ckpt,
                               (const unsigned char *)x->str, x->len,
                               &plain) ||
        plain.len < HEAD_LEN || plain.p[0] != 'C'))
      ddbc_shared_count_error(); /* not ours: as if none */
    else if(x->type == DDBC_RESP_BULK) {
      ddb_buf_add(out, plain.p + HEAD_LEN, plain.len - HEAD_LEN);
      rc = out->failed ? -1 : 1;
    }
    ddbc_resp_reply_free(&rp);
  }
  if(plain.p)
    OPENSSL_cleanse(plain.p, plain.len);
  ddb_buf_free(&plain);
  ddb_buf_free(&cmds);
  return rc;
}
