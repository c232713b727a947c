/*
** fleet_check.c -- cache/fleet.c (one stream reader per table per fleet)
** against a real redis-server (tests/suites/63-streams-fleet.sh).
**
**    fleet_check REDIS_URL
**
** Each "process" of the fleet is a ddbc_fleet of its own in this one
** process (the same credentials and table: the same Redis keys), driven
** by hand, so that a "death" is a member that stops ticking.  No
** DynamoDB: the client only names the keys.  Prints one TAP line per
** check and exits 1 if any failed.
**
**   election    one leader, the others followers
**   delivery    250 records (3 batches) arrive in order, whole; the
**               follower's freshness is the leader's
**   sealed      nothing readable in Redis: no table name, no record
**   gap         a trimmed stream: the follower clears once, saying how
**               many changes it missed, and goes on
**   takeover    the leader stops renewing: a follower leads within
**               DDBC_FLEET_LEASE + 2 s, having first applied what the
**               old leader published; the old leader's publish and
**               checkpoint are refused (fencing), nothing reaches the
**               stream
**   checkpoint  a round trip between leaders, sealed
**   release     a clean stop hands the lease over at once
**   restart     Redis flushed and every connection dropped: the
**               follower clears once, then follows the new numbering
**   down        no Redis: OFF within the bound, follow fails, no error
*/
#define _GNU_SOURCE /* memmem */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../cache/fleet.h"
#include "../../client/ddb_client.h"

#define TABLE  "FleetTableName"
#define MAXREC 400

static int n_test, n_failed;

static void tap(int ok, const char *what, const char *detail) {
  n_test++;
  if(!ok)
    n_failed++;
  printf("%sok %d - fleet: %s\n", ok ? "" : "not ", n_test, what);
  if(!ok && detail && detail[0])
    printf("#   %s\n", detail);
  fflush(stdout);
}

/* What a member's sink saw. */
typedef struct seen {
  char rec[MAXREC][64];
  int n, clears;
  char why[160];
} seen;

static void on_apply(void *arg, const unsigned char *rec, size_t len) {
  seen *s = arg;
  if(s->n < MAXREC && len < 64) {
    memcpy(s->rec[s->n], rec, len);
    s->rec[s->n][len] = 0;
  }
  s->n++;
}

static void on_clear(void *arg, const char *why) {
  seen *s = arg;
  s->clears++;
  snprintf(s->why, sizeof(s->why), "%s", why);
}

typedef struct member {
  ddbc_fleet *f;
  seen s;
  ddbc_fleet_sink sink;
} member;

static void sleep_s(double s) {
  struct timespec ts;
  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  nanosleep(&ts, NULL);
}

static member *member_new(ddbc_shared *sh, ddb_client *c) {
  member *m = calloc(1, sizeof(*m));
  ddb_error err;
  ddb_error_clear(&err);
  if(!m || ddbc_fleet_new(sh, c, TABLE, &m->f, &err)) {
    fprintf(stderr, "fleet_check: ddbc_fleet_new failed\n");
    exit(2);
  }
  m->sink.apply = on_apply;
  m->sink.clear = on_clear;
  m->sink.arg = &m->s;
  return m;
}

static void member_free(member *m) {
  ddbc_fleet_free(m->f);
  free(m);
}

static int role(member *m) {
  return ddbc_fleet_tick(m->f, &m->sink);
}

static ddbc_fleet_state state(member *m) {
  ddbc_fleet_state st;
  ddbc_fleet_status(m->f, &st);
  return st;
}

/* Follow until m has n records (or 5 s pass). */
static void follow_until(member *m, int n) {
  double t0 = ddbc_resp_clock();
  while(m->s.n < n && ddbc_resp_clock() - t0 < 5)
    ddbc_fleet_follow(m->f, 0.2, &m->sink);
}

/* Follow until m's last record is text (or 5 s pass). */
static void follow_for(member *m, const char *text) {
  double t0 = ddbc_resp_clock();
  while(!(m->s.n > 0 && m->s.n <= MAXREC &&
          strcmp(m->s.rec[m->s.n - 1], text) == 0) &&
        ddbc_resp_clock() - t0 < 5)
    ddbc_fleet_follow(m->f, 0.2, &m->sink);
}

/* Publish records "<tag>-<i>" for i in 0..n-1 with freshness fresh. */
static int publish(member *m, const char *tag, int n, double fresh) {
  static char text[MAXREC][64];
  const unsigned char *p[MAXREC];
  size_t len[MAXREC];
  int i;
  for(i = 0; i < n && i < MAXREC; i++) {
    snprintf(text[i], sizeof(text[i]), "secret-record-%s-%d", tag, i);
    p[i] = (const unsigned char *)text[i];
    len[i] = strlen(text[i]);
  }
  return ddbc_fleet_publish(m->f, p, len, (size_t)n, fresh);
}

/* A raw connection for the checks: cmd argv[0..argc) into *rp. */
static ddbc_resp *raw;
static int raw_cmd(ddbc_resp_reply *rp, int argc, const char **argv) {
  ddb_buf b;
  char why[160];
  int i, rc;
  ddb_buf_init(&b, 1 << 20);
  ddbc_resp_cmd(&b, argc);
  for(i = 0; i < argc; i++)
    ddbc_resp_args(&b, argv[i]);
  rc = ddbc_resp_call(raw, b.p, b.len, rp, 1, DDBC_RESP_MAX_NODES,
                      ddbc_resp_clock() + 2, why, sizeof(why));
  ddb_buf_free(&b);
  return rc;
}

/* Is the key name a stream? */
static int is_stream(const char *name) {
  const char *targs[2] = {"TYPE", name};
  ddbc_resp_reply t;
  int yes;
  raw_cmd(&t, 2, targs);
  yes = t.n_node > 0 && t.node[0].type == DDBC_RESP_STATUS &&
        strcmp(t.node[0].str, "stream") == 0;
  ddbc_resp_reply_free(&t);
  return yes;
}

/* Does the value v (the reply of a GET, or of XRANGE) hold text? */
static int holds(const ddbc_resp_reply *v, const char *text) {
  int k;
  for(k = 0; k < v->n_node; k++)
    if(v->node[k].type == DDBC_RESP_BULK &&
       memmem(v->node[k].str, v->node[k].len, text, strlen(text)))
      return 1;
  return 0;
}

/* Does the stream name hold text in any entry?  Read 100 at a time. */
static int stream_holds(const char *name, const char *text) {
  char start[64] = "-";
  int found = 0, n;
  do {
    const char *xargs[6] = {"XRANGE", name, start, "+", "COUNT", "100"};
    ddbc_resp_reply v;
    if(raw_cmd(&v, 6, xargs) || v.node[0].type != DDBC_RESP_ARRAY) {
      ddbc_resp_reply_free(&v);
      return 1; /* cannot tell: a failure */
    }
    n = (int)v.node[0].integer;
    found = holds(&v, text);
    if(n > 0)
      snprintf(start, sizeof(start), "(%s", v.node[v.n_node - 4].str);
    ddbc_resp_reply_free(&v);
  } while(n == 100 && !found);
  return found;
}

/* Does any key, or any value of any key (strings, stream entries), hold
** text?  Also every key must start "ddbc1:".  Returns a complaint or
** NULL. */
static const char *readable(const char *text, char *detail, size_t cap) {
  ddbc_resp_reply keys;
  const char *kargs[2] = {"KEYS", "*"};
  int i, bad;
  if(raw_cmd(&keys, 2, kargs)) {
    ddbc_resp_reply_free(&keys);
    return "KEYS failed";
  }
  for(i = 1; i < keys.n_node; i++) {
    const char *name = keys.node[i].str;
    const char *gargs[2] = {"GET", name};
    ddbc_resp_reply v;
    if(strncmp(name, "ddbc1:", 6) != 0 || strstr(name, text)) {
      snprintf(detail, cap, "key %s", name);
      ddbc_resp_reply_free(&keys);
      return detail;
    }
    if(is_stream(name))
      bad = stream_holds(name, text);
    else {
      bad = raw_cmd(&v, 2, gargs) || holds(&v, text);
      ddbc_resp_reply_free(&v);
    }
    if(bad) {
      snprintf(detail, cap, "the value of %s holds '%s'", name, text);
      ddbc_resp_reply_free(&keys);
      return detail;
    }
  }
  ddbc_resp_reply_free(&keys);
  return NULL;
}

static long long xlen_all(void) {
  ddbc_resp_reply keys, n;
  const char *kargs[2] = {"KEYS", "*"};
  long long total = 0;
  int i;
  raw_cmd(&keys, 2, kargs);
  for(i = 1; i < keys.n_node; i++) {
    const char *xargs[2] = {"XLEN", keys.node[i].str};
    if(is_stream(keys.node[i].str)) {
      raw_cmd(&n, 2, xargs);
      total += n.n_node > 0 ? n.node[0].integer : 0;
      ddbc_resp_reply_free(&n);
    }
  }
  ddbc_resp_reply_free(&keys);
  return total;
}

/* Trim every stream of the fleet to its last entry. */
static void trim_streams(void) {
  ddbc_resp_reply keys, n;
  const char *kargs[2] = {"KEYS", "*"};
  int i;
  raw_cmd(&keys, 2, kargs);
  for(i = 1; i < keys.n_node; i++) {
    const char *xargs[4] = {"XTRIM", keys.node[i].str, "MAXLEN", "1"};
    if(is_stream(keys.node[i].str)) {
      raw_cmd(&n, 4, xargs);
      ddbc_resp_reply_free(&n);
    }
  }
  ddbc_resp_reply_free(&keys);
}

static ddb_client *new_client(void) {
  ddb_config cfg;
  ddb_client *c = NULL;
  ddb_error err;
  memset(&cfg, 0, sizeof(cfg));
  cfg.endpoint = "http://127.0.0.1:1";
  cfg.region = "us-east-1";
  setenv("AWS_ACCESS_KEY_ID", "AKIDFLEET", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "fleet-secret", 1);
  unsetenv("AWS_SESSION_TOKEN");
  unsetenv("AWS_PROFILE");
  setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
  ddb_error_clear(&err);
  if(ddb_client_new(&cfg, &c, &err)) {
    fprintf(stderr, "fleet_check: ddb_client_new: %s\n", err.message);
    exit(2);
  }
  return c;
}

int main(int argc, char **argv) {
  ddbc_shared *sh = NULL, *dead = NULL;
  ddb_client *c;
  ddb_error err;
  ddbc_redis_url u;
  char why[200], detail[300];
  member *a, *b, *x;
  ddbc_fleet_state sa, sb;
  double t0, fresh, took;
  ddb_buf pos;
  int i, ok, ra, rb;
  long long before;

  if(argc != 2) {
    fprintf(stderr, "usage: fleet_check REDIS_URL\n");
    return 2;
  }
  setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
  c = new_client();
  ddb_error_clear(&err);
  if(ddbc_shared_open(argv[1], 0.5, &sh, &err) || !sh ||
     ddbc_redis_url_parse(argv[1], &u, why, sizeof(why)) ||
     ddbc_resp_connect(&u, NULL, ddbc_resp_clock() + 2, &raw, why,
                       sizeof(why))) {
    fprintf(stderr, "fleet_check: cannot reach %s\n", argv[1]);
    return 2;
  }
  {
    ddbc_resp_reply rp;
    const char *fl[1] = {"FLUSHALL"};
    raw_cmd(&rp, 1, fl);
    ddbc_resp_reply_free(&rp);
  }

  /* election */
  a = member_new(sh, c);
  b = member_new(sh, c);
  x = member_new(sh, c);
  ra = role(a);
  rb = role(b);
  snprintf(detail, sizeof(detail), "roles %d %d %d", ra, rb, role(x));
  tap(ra == DDBC_FLEET_LEADER && rb == DDBC_FLEET_FOLLOWER &&
          state(x).role == DDBC_FLEET_FOLLOWER,
      "election: one leader, two followers", detail);
  tap(state(a).leads == 1 && state(b).leads == 0,
      "election: the leader counted one lead", NULL);

  /* delivery */
  fresh = ddbc_shared_now() - 0.25;
  ok = publish(a, "d", 250, fresh) == 0;
  follow_until(b, 250);
  sb = state(b);
  for(i = 0; i < 250 && ok; i++) {
    char want[64];
    snprintf(want, sizeof(want), "secret-record-d-%d", i);
    if(strcmp(b->s.rec[i], want) != 0) {
      snprintf(detail, sizeof(detail), "record %d: '%s', want '%s'", i,
               b->s.rec[i], want);
      ok = 0;
    }
  }
  if(ok && b->s.n != 250)
    snprintf(detail, sizeof(detail), "%d records", b->s.n), ok = 0;
  tap(ok, "delivery: 250 records in 3 batches, in order, whole", detail);
  snprintf(detail, sizeof(detail), "fresh %.3f want %.3f, seq %llu/%llu",
           sb.fresh, fresh, (unsigned long long)sb.seq,
           (unsigned long long)state(a).seq);
  tap(sb.fresh > fresh - 0.002 && sb.fresh < fresh + 0.002 &&
          sb.seq == state(a).seq && sb.received == 250 && b->s.clears == 0,
      "delivery: the follower's freshness and sequence are the leader's",
      detail);
  /* a heartbeat alone, once DDBC_FLEET_HEARTBEAT has passed */
  sleep_s(DDBC_FLEET_HEARTBEAT + 0.1);
  fresh = ddbc_shared_now();
  publish(a, "h", 0, fresh);
  ddbc_fleet_follow(b->f, 1, &b->sink);
  sb = state(b);
  tap(sb.fresh > fresh - 0.002 && b->s.n == 250,
      "delivery: a heartbeat moves freshness, applies nothing", NULL);

  /* sealed */
  {
    const char *bad = readable("secret-record", detail, sizeof(detail));
    if(!bad)
      bad = readable(TABLE, detail, sizeof(detail));
    tap(!bad, "sealed: no key or value in Redis holds a record or the table",
        bad);
  }

  /* gap: 5 more published, the stream trimmed to its last entry (the
  ** heartbeat) before the follower reads */
  publish(a, "g", 5, ddbc_shared_now());
  trim_streams();
  publish(a, "g2", 1, ddbc_shared_now());
  follow_until(b, 251);
  snprintf(detail, sizeof(detail), "clears %d (%s), records %d", b->s.clears,
           b->s.why, b->s.n);
  tap(b->s.clears == 1 && strstr(b->s.why, "5 messages missed") &&
          b->s.n == 251 && strcmp(b->s.rec[250], "secret-record-g2-0") == 0,
      "gap: a trimmed stream clears the follower once, then it goes on",
      detail);
  tap(state(b).gaps == 1, "gap: counted", NULL);

  /* checkpoint */
  ok = ddbc_fleet_checkpoint_put(a->f, "shard-1:000123|shard-2:000456", 29);
  ddb_buf_init(&pos, 1 << 20);
  ra = ddbc_fleet_checkpoint_get(x->f, &pos);
  tap(ok == 0 && ra == 1 && pos.len == 29 &&
          memcmp(pos.p, "shard-1:000123|shard-2:000456", 29) == 0,
      "checkpoint: another member reads the leader's positions", NULL);
  tap(readable("shard-1", detail, sizeof(detail)) == NULL,
      "checkpoint: sealed", detail);
  tap(ddbc_fleet_checkpoint_put(b->f, "x", 1) == -1,
      "checkpoint: a follower cannot store one", NULL);

  /* takeover: a publishes 3 and dies (stops ticking); b leads */
  publish(a, "t", 3, ddbc_shared_now());
  t0 = ddbc_resp_clock();
  took = -1;
  while(ddbc_resp_clock() - t0 < DDBC_FLEET_LEASE + 4) {
    if(role(b) == DDBC_FLEET_LEADER) {
      took = ddbc_resp_clock() - t0;
      break;
    }
    sleep_s(0.1);
  }
  snprintf(detail, sizeof(detail), "took %.2f s", took);
  tap(took > 0 && took < DDBC_FLEET_LEASE + 2.5,
      "takeover: a follower leads within the lease and a renewal", detail);
  snprintf(detail, sizeof(detail), "records %d, last '%s'", b->s.n,
           b->s.n > 0 && b->s.n <= MAXREC ? b->s.rec[b->s.n - 1] : "");
  tap(b->s.n == 254 && strcmp(b->s.rec[253], "secret-record-t-2") == 0,
      "takeover: the new leader applied the old one's last records first",
      detail);
  sleep_s(DDBC_FLEET_RENEW + 0.05);
  tap(role(x) == DDBC_FLEET_FOLLOWER, "takeover: one leader still", NULL);
  ok = ddbc_fleet_checkpoint_get(b->f, &pos);
  tap(ok == 1, "takeover: the new leader finds the checkpoint", NULL);
  ddb_buf_free(&pos);
  /* the old leader, back from its stall, still thinks it leads */
  before = xlen_all();
  ra = publish(a, "stale", 2, ddbc_shared_now());
  sa = state(a);
  tap(ra == -1 && sa.role == DDBC_FLEET_FOLLOWER && xlen_all() == before,
      "takeover: the stale leader's publish is refused, nothing written",
      NULL);
  tap(ddbc_fleet_checkpoint_put(a->f, "stale", 5) == -1,
      "takeover: the stale leader's checkpoint is refused", NULL);
  /* the new leader's numbering goes on: x reads it without a gap */
  publish(b, "n", 2, ddbc_shared_now());
  follow_for(x, "secret-record-n-1");
  snprintf(detail, sizeof(detail), "x: records %d clears %d (%s)", x->s.n,
           x->s.clears, x->s.why);
  /* x never read before the trim: it starts at the trimmed stream's head
  ** (g2-0, t-0..2, n-0..1) */
  tap(x->s.n == 6 && strcmp(x->s.rec[x->s.n - 1], "secret-record-n-1") == 0 &&
          x->s.clears == 0,
      "takeover: a follower reads on across leaders without a gap", detail);

  /* release: b stops cleanly; x leads on its next tick */
  member_free(b);
  sleep_s(DDBC_FLEET_RENEW + 0.05);
  t0 = ddbc_resp_clock();
  rb = role(x);
  tap(rb == DDBC_FLEET_LEADER, "release: a clean stop hands the lease over",
      NULL);

  /* restart: Redis flushed, every connection dropped */
  member_free(a);
  a = member_new(sh, c); /* a new process: follows */
  role(a);
  publish(x, "r", 1, ddbc_shared_now());
  follow_for(a, "secret-record-r-0");
  {
    ddbc_resp_reply rp;
    const char *fl[1] = {"FLUSHALL"};
    const char *kill[5] = {"CLIENT", "KILL", "TYPE", "normal", "SKIPME"};
    ddb_buf b2;
    char why2[160];
    raw_cmd(&rp, 1, fl);
    ddbc_resp_reply_free(&rp);
    ddb_buf_init(&b2, 4096);
    ddbc_resp_cmd(&b2, 6);
    for(i = 0; i < 5; i++)
      ddbc_resp_args(&b2, kill[i]);
    ddbc_resp_args(&b2, "yes");
    ddbc_resp_call(raw, b2.p, b2.len, &rp, 1, 4, ddbc_resp_clock() + 2, why2,
                   sizeof(why2));
    ddbc_resp_reply_free(&rp);
    ddb_buf_free(&b2);
  }
  i = a->s.clears;
  ra = ddbc_fleet_follow(a->f, 0.2, &a->sink);
  snprintf(detail, sizeof(detail), "follow %d role %d clears %d (%s)", ra,
           state(a).role, a->s.clears, a->s.why);
  tap(ra == -1 && state(a).role == DDBC_FLEET_OFF && a->s.clears == i + 1,
      "restart: the follower's connection drops: OFF, cleared once", detail);
  /* both come back: x (its lease gone with the flush) or a leads */
  t0 = ddbc_resp_clock();
  while(ddbc_resp_clock() - t0 < 8) {
    ra = role(a);
    rb = role(x);
    if((ra == DDBC_FLEET_LEADER) + (rb == DDBC_FLEET_LEADER) == 1 &&
       ra != DDBC_FLEET_OFF && rb != DDBC_FLEET_OFF)
      break;
    sleep_s(0.1);
  }
  snprintf(detail, sizeof(detail), "roles %d %d", ra, rb);
  tap((ra == DDBC_FLEET_LEADER) + (rb == DDBC_FLEET_LEADER) == 1 &&
          ra != DDBC_FLEET_OFF && rb != DDBC_FLEET_OFF,
      "restart: one leader again", detail);
  {
    member *l = ra == DDBC_FLEET_LEADER ? a : x, *fo = l == a ? x : a;
    int n0 = fo->s.n, c0 = fo->s.clears;
    publish(l, "after", 2, ddbc_shared_now());
    follow_for(fo, "secret-record-after-1");
    snprintf(detail, sizeof(detail), "records %d->%d clears %d->%d", n0,
             fo->s.n, c0, fo->s.clears);
    tap(fo->s.n == n0 + 2 &&
            strcmp(fo->s.rec[fo->s.n - 1], "secret-record-after-1") == 0,
        "restart: the follower follows the new numbering", detail);
  }
  member_free(a);
  member_free(x);

  /* down: a Redis that is not there */
  ddb_error_clear(&err);
  if(ddbc_shared_open("redis://127.0.0.1:1", 0.2, &dead, &err) == 0 && dead) {
    member *d = member_new(dead, c);
    t0 = ddbc_resp_clock();
    ra = role(d);
    rb = ddbc_fleet_follow(d->f, 0.5, &d->sink);
    took = ddbc_resp_clock() - t0;
    snprintf(detail, sizeof(detail), "role %d follow %d in %.2f s", ra, rb,
             took);
    tap(ra == DDBC_FLEET_OFF && rb == -1 && took < 2 && d->s.clears == 0,
        "down: OFF at once, follow fails, nothing cleared", detail);
    ra = ddbc_fleet_publish(d->f, NULL, NULL, 0, ddbc_shared_now());
    tap(ra == -1, "down: publish refused", NULL);
    member_free(d);
  } else {
    tap(0, "down: a tier for a closed port opens", err.message);
  }

  ddbc_resp_close(raw, 0);
  ddb_client_free(c);
  printf("1..%d\n", n_test);
  return n_failed ? 1 : 0;
}
