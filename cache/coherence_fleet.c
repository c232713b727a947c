/*
** coherence_fleet.c -- coherence=streams with the shared tier: the
** reader's fleet mode, one reader per table per fleet (docs/cache.md, "One
** reader per fleet"; the transport: fleet.c).
**
**   CREATE VIRTUAL TABLE t USING dynamodb(coherence=streams,
**                                         shared_cache='redis://h:6379');
**
** Each turn of the reader's loop (coherence.c's FLEET HOOK) asks fleet.c
** for this process's role:
**   LEADER    polls DynamoDB Streams as a lone reader does (poll_stream),
**             then publishes the change records apply_batch queued
**             (ddbc_fleet_queue: the tier's entry of each changed item
**             retired first, before any process drops its own), a
**             heartbeat of its position, and its shard positions as the
**             fleet's checkpoint.  A new leader resumes
**             from the checkpoint (AFTER_SEQUENCE_NUMBER of each shard);
**             with none it anchors at LATEST and publishes a reset (every
**             process clears the table once), as it does after any anchor.
**   FOLLOWER  applies what the leader publishes (ddbc_reader_apply); its
**             position is the leader's last heartbeat.
**   OFF       Redis cannot answer: polls as a lone reader.
**
** The checkpoint: "1\n" arn "\n", then a line a shard:
**     id TAB parent|- TAB last_seq|- TAB from_start NL
** A shard opened at LATEST from which nothing was read yet has no
** position another process can open: such a checkpoint is not resumed
** (the new leader anchors and publishes a reset).
**
** Only the reader's thread touches r->fm; its lock is r->mu for what the
** front ends read (following, caught, why, clears).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coherence.h"
#include "fleet.h"

/* Seconds a follower waits for the leader in one turn (XREAD BLOCK): a
** detach waits at most this for the thread. */
#define FOLLOW_WAIT 0.5
/* The longest checkpoint made. */
#define CHECKPOINT_MAX DDBC_FLEET_MAX_CHECKPOINT

typedef struct queued {
  char *rec; /* a change record */
  size_t len;
} queued;

struct reader_fleet {
  ddbc_fleet *f;
  int role;  /* DDBC_FLEET_*: the role of the turn */
  queued *q; /* the records of the turn, to publish */
  size_t n, cap;
  int lost;     /* records applied, not published: a reset is due */
  ddb_buf ckpt; /* the positions stored last */
};

/* ------------------------------------------------------------------------
** Life
*/
/* See ddb_cache.h: the first tier named wins; the thread starts fleet
** mode at its next turn. */
void ddbc_reader_share(ddbc_reader *r, ddbc_shared *sh) {
  if(!r || !sh)
    return;
  pthread_mutex_lock(&r->mu);
  if(!r->shared)
    __atomic_store_n(&r->shared, sh, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&r->mu);
}

/* Drop the queued records of fm. */
static void queue_clear(struct reader_fleet *fm) {
  size_t i;
  for(i = 0; i < fm->n; i++)
    free(fm->q[i].rec);
  fm->n = 0;
}

/* See coherence.h. */
void ddbc_fleet_reader_free(ddbc_reader *r) {
  struct reader_fleet *fm = r->fm;
  if(!fm)
    return;
  ddbc_fleet_free(fm->f); /* the lease released: another leads at once */
  queue_clear(fm);
  free(fm->q);
  ddb_buf_free(&fm->ckpt);
  free(fm);
  r->fm = NULL;
}

/* See coherence.h: the tier's entry of the record's item retired now
** (a tombstone, the table's generation moved), before this process and
** then the followers drop theirs, so that none of them fills again from
** Redis's old entry; the record queued to publish at the end of the
** turn. */
void ddbc_fleet_queue(ddbc_reader *r, const ddb_item *keys, const char *rec,
                      size_t len) {
  struct reader_fleet *fm = r->fm;
  const char *names[2];
  queued *x;
  ddb_buf k;
  if(!fm || fm->role != DDBC_FLEET_LEADER)
    return;
  names[0] = r->d->indexes[0].pk.name;
  names[1] = r->d->indexes[0].sk.name;
  ddb_buf_init(&k, DDBC_KEY_MAX);
  if(keys &&
     ddbc_item_key(&k, r->c, r->table, keys, names, names[1] ? 2 : 1) == 0) {
    size_t tail_len;
    const char *tail = ddbc_shared_tail(r->c, &k, &tail_len);
    ddbc_fleet_note_change(fm->f, tail, tail_len, ddbc_shared_now());
  }
  ddb_buf_free(&k);
  if(fm->n == fm->cap) {
    size_t cap = fm->cap ? fm->cap * 2 : 64;
    queued *p = realloc(fm->q, cap * sizeof(*p));
    if(!p) {
      fm->lost = 1; /* not published: a reset */
      return;
    }
    fm->q = p;
    fm->cap = cap;
  }
  x = &fm->q[fm->n];
  if(!(x->rec = malloc(len ? len : 1))) {
    fm->lost = 1;
    return;
  }
  memcpy(x->rec, rec, len);
  x->len = len;
  fm->n++;
}

/* ------------------------------------------------------------------------
** The checkpoint
*/
/* r's shard positions, as the checkpoint's text, into out. */
static void positions(ddbc_reader *r, ddb_buf *out) {
  int i;
  ddb_buf_addf(out, "1\n%s\n", r->arn ? r->arn : "");
  for(i = 0; i < r->n_shards; i++) {
    const shard *sh = &r->shards[i];
    ddb_buf_addf(out, "%s\t%s\t%s\t%d\n", sh->id,
                 sh->parent ? sh->parent : "-",
                 sh->last_seq ? sh->last_seq : "-", sh->from_start);
  }
}

/* Follow the shards of checkpoint p[0..n) (positions' text), each after
** its last record (or from its start): following, nothing cleared.
** Returns 0, or -1 when it cannot be resumed (another stream now, a shard
** without a position, malformed): then anchor. */
static int resume(ddbc_reader *r, const ddbc_reader_ops *ops, char *p,
                  double now) {
  char *arn = NULL, *view = NULL, *line, *save = NULL;
  ddb_error err;
  int rc = -1;
  ddb_error_clear(&err);
  line = strtok_r(p, "\n", &save);
  if(!line || strcmp(line, "1") != 0 || !(line = strtok_r(NULL, "\n", &save)))
    return -1;
  if((!r->d && ddbc_describe_table(r->c, r->table, &r->d, &err)) ||
     ddb_stream_of_table(r->c, r->table, &arn, &view, &err) || !arn ||
     strcmp(arn, line) != 0)
    goto done;
  ops->shards_clear(r);
  while((line = strtok_r(NULL, "\n", &save)) != NULL) {
    char *f[4], *s2 = NULL;
    ddb_stream_shard x;
    int i;
    for(i = 0; i < 4; i++)
      f[i] = strtok_r(i ? NULL : line, "\t", &s2);
    if(!f[3] || (strcmp(f[2], "-") == 0 && strcmp(f[3], "1") != 0))
      goto done; /* opened at LATEST, nothing read: no position */
    x.id = f[0];
    x.parent = strcmp(f[1], "-") == 0 ? NULL : f[1];
    x.closed = 0;
    if(ops->shard_add(r, &x, f[3][0] == '1', now))
      goto done;
    if(strcmp(f[2], "-") != 0 &&
       !(r->shards[r->n_shards - 1].last_seq = ddb_strdup(f[2])))
      goto done;
  }
  free(r->arn);
  free(r->view);
  r->arn = arn;
  r->view = view;
  arn = view = NULL;
  r->images = strcmp(r->view, "KEYS_ONLY") != 0;
  r->anchored = now;
  r->recheck = now; /* shards opened since: found at once */
  pthread_mutex_lock(&r->mu);
  r->following = 1;
  r->why[0] = 0;
  pthread_mutex_unlock(&r->mu);
  rc = 0;
done:
  if(rc)
    ops->shards_clear(r);
  free(arn);
  free(view);
  return rc;
}

/* Store r's positions when they moved (after the records that moved
** them were published: a leader that dies in between leaves the older
** positions, from which the next one reads them again).  They move with
** records read, at most a few times a second a shard. */
static void checkpoint(ddbc_reader *r, struct reader_fleet *fm) {
  ddb_buf pos;
  if(!r->anchored)
    return;
  ddb_buf_init(&pos, CHECKPOINT_MAX);
  positions(r, &pos);
  if(!pos.failed &&
     (pos.len != fm->ckpt.len || memcmp(pos.p, fm->ckpt.p, pos.len) != 0) &&
     ddbc_fleet_checkpoint_put(fm->f, pos.p, pos.len) == 0) {
    ddb_buf_reset(&fm->ckpt);
    ddb_buf_add(&fm->ckpt, pos.p, pos.len);
  }
  ddb_buf_free(&pos);
}

/* ------------------------------------------------------------------------
** The turns
*/
/* What fleet.c hands a follower: apply a record, clear the table. */
static void sink_apply(void *arg, const unsigned char *rec, size_t len) {
  ddbc_reader_apply(arg, (const char *)rec, len);
}

static void sink_clear(void *arg, const char *why) {
  ddbc_reader *r = arg;
  ddbc_clear_table(r->c, r->table);
  pthread_mutex_lock(&r->mu);
  r->clears++;
  snprintf(r->why, sizeof(r->why), "%s", why);
  pthread_mutex_unlock(&r->mu);
}

/* Say what r does in the fleet (its state's why, dynamodb_stats'
** "stream.T.state"), while it follows (a fallback's why stays). */
static void say(ddbc_reader *r, const char *what) {
  pthread_mutex_lock(&r->mu);
  if(r->following)
    snprintf(r->why, sizeof(r->why), "%s", what);
  pthread_mutex_unlock(&r->mu);
}

/* The wall clock of ddbc_now() time t. */
static double wall_of(double t) {
  return ddbc_shared_now() - (ddbc_now() - t);
}

/* This process just took the lease: it reads from the fleet's checkpoint
** when one resumes (what was applied after it, here or by the last
** leader, is read and published again: nothing applied without being
** published is lost to the others), else from its own positions when it
** was reading already (OFF), else from LATEST (poll anchors): in both,
** *reset is set (every process clears the table once). */
static void lead_start(ddbc_reader *r, const ddbc_reader_ops *ops,
                       struct reader_fleet *fm, double now, int *reset) {
  ddb_buf pos;
  ddb_buf_init(&pos, CHECKPOINT_MAX);
  if(ddbc_fleet_checkpoint_get(fm->f, &pos) == 1 &&
     ddb_buf_addc(&pos, 0) == 0 && resume(r, ops, pos.p, now) == 0) {
    ddb_buf_free(&pos);
    return;
  }
  ddb_buf_free(&pos);
  if(!(r->anchored && r->following))
    r->anchored = 0;
  *reset = 1;
}

/* A LEADER's turn: where to read from when it just took the lease
** (lead_start); a poll; a reset when due (an anchor, or records a failed
** publish lost); what it queued published, with a heartbeat of its
** position; the checkpoint. */
static double lead(ddbc_reader *r, const ddbc_reader_ops *ops,
                   struct reader_fleet *fm, int was, double now) {
  const unsigned char **recs = NULL;
  size_t *lens = NULL, i;
  double next, fresh = 0;
  int reset = fm->lost, anchored, following;
  if(was != DDBC_FLEET_LEADER)
    lead_start(r, ops, fm, now, &reset);
  anchored = r->anchored != 0;
  next = ops->poll(r, now);
  say(r, "fleet leader");
  pthread_mutex_lock(&r->mu);
  following = r->following;
  if(following)
    fresh = wall_of(r->caught);
  pthread_mutex_unlock(&r->mu);
  if((reset || !anchored) && r->anchored &&
     ddbc_fleet_publish_reset(fm->f, fresh,
                              "fleet: the reader started again") == 0)
    fm->lost = 0;
  if(fm->n) {
    recs = malloc(fm->n * sizeof(*recs));
    lens = malloc(fm->n * sizeof(*lens));
  }
  for(i = 0; recs && lens && i < fm->n; i++) {
    recs[i] = (const unsigned char *)fm->q[i].rec;
    lens[i] = fm->q[i].len;
  }
  if(fm->n && (!recs || !lens))
    ddbc_fleet_publish_reset(fm->f, 0, "fleet: out of memory");
  else if(ddbc_fleet_publish(fm->f, recs, lens, fm->n, fresh) == 0)
    checkpoint(r, fm);
  else if(fm->n)
    fm->lost = 1; /* applied here, not told: a reset while it leads */
  free(recs);
  free(lens);
  queue_clear(fm);
  return next < now + DDBC_FLEET_HEARTBEAT ? next : now + DDBC_FLEET_HEARTBEAT;
}

/* A FOLLOWER's turn: what the leader published applied (waiting up to
** FOLLOW_WAIT); the position is the leader's last heartbeat.  Its own
** shards are dropped (a later OFF or LEADER anchors or resumes). */
static double follow(ddbc_reader *r, struct reader_fleet *fm,
                     const ddbc_fleet_sink *sink) {
  ddbc_fleet_state st;
  ddb_error err;
  ddb_error_clear(&err);
  if(!r->d && ddbc_describe_table(r->c, r->table, &r->d, &err))
    return ddbc_now() + 1; /* apply needs the keys: asked again */
  r->anchored = 0;
  ddbc_fleet_follow(fm->f, FOLLOW_WAIT, sink);
  ddbc_fleet_status(fm->f, &st);
  pthread_mutex_lock(&r->mu);
  r->following = st.fresh > 0;
  if(st.fresh > 0) {
    double caught = ddbc_now() - (ddbc_shared_now() - st.fresh);
    r->caught = caught < ddbc_now() ? caught : ddbc_now();
    snprintf(r->why, sizeof(r->why), "fleet follower");
  } else
    snprintf(r->why, sizeof(r->why), "fleet: waiting for the leader");
  pthread_mutex_unlock(&r->mu);
  return ddbc_now(); /* the wait was in XREAD */
}

/* See coherence.h: one turn of the reader in fleet mode. */
double ddbc_fleet_turn(ddbc_reader *r, double now,
                       const ddbc_reader_ops *ops) {
  struct reader_fleet *fm = r->fm;
  ddbc_fleet_sink sink;
  ddb_error err;
  double next;
  int was;
  if(!fm) {
    fm = calloc(1, sizeof(*fm));
    ddb_error_clear(&err);
    if(!fm || ddbc_fleet_new(__atomic_load_n(&r->shared, __ATOMIC_ACQUIRE),
                             r->c, r->table, &fm->f, &err)) {
      free(fm);
      return ops->poll(r, now); /* a lone reader */
    }
    ddb_buf_init(&fm->ckpt, CHECKPOINT_MAX);
    r->fm = fm;
  }
  sink.apply = sink_apply;
  sink.clear = sink_clear;
  sink.arg = r;
  was = fm->role;
  fm->role = ddbc_fleet_tick(fm->f, &sink);
  if(fm->role != DDBC_FLEET_LEADER)
    fm->lost = 0; /* the checkpoint is before them: the next leader reads
                     them again */
  if(fm->role == DDBC_FLEET_LEADER)
    return lead(r, ops, fm, was, now);
  if(fm->role == DDBC_FLEET_FOLLOWER)
    return follow(r, fm, &sink);
  next = ops->poll(r, now); /* OFF: a lone reader */
  say(r, "fleet: Redis cannot answer: reading alone");
  return next;
}
