/*
** coherence.c -- coherence=streams: one background reader per (place,
** table) per process follows the table's DynamoDB Stream and retires what
** other writers changed, so a cached answer is never older than the
** reader's position (docs/cache.md, "Following the table's stream").
**
**   CREATE VIRTUAL TABLE t USING dynamodb(coherence=streams,
**                                         max_staleness=5);
**
** The reader is shared by every connection and virtual table of that
** table at that place (refcounted: ddbc_reader_attach, _detach); the last
** detach stops its thread and joins it, so no thread outlives the last
** connection.  It follows every open shard from LATEST, GetRecords at
** most every READER_POLL_MIN seconds a shard (DynamoDB Streams allows 5 a
** second), backing off to READER_POLL_IDLE when idle and to
** READER_ERROR_MAX after errors (LimitExceededException is backed off by
** http.c first).  Shard ends are followed by their children (TRIM_HORIZON),
** an expired iterator reopened AFTER_SEQUENCE_NUMBER the last record.
**
** Faults (TrimmedDataAccessException, a stream disabled or replaced, an
** expired iterator with no record read, a reader more than READER_BEHIND_MAX
** seconds behind): the table's cache is cleared, the reader says
** "fallback-ttl" with why (the table's answers are TTL-fresh, as without
** the option), and it anchors again at LATEST; at each anchor the table's
** cache is cleared once more (what was read before it is covered by no
** record), then it is "following" again.  Nothing here is ever a
** statement's error: a reader only changes what the cache holds.
**
** The change records and what they retire: coherence_apply.c.
**
** Locks: reg_lock (the readers) then a reader's mu, rank DDB_LIVE_COHERENCE
** on live.c's list (before the cache's), each a leaf: mu is never held
** while the store, a request or another rank's lock is taken.  fork(): the child has no
** reader thread; its readers leave the list (their vtabs see
** "fallback-ttl: forked"), and a new attach in the child starts its own.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coherence.h"
#include "store.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static ddbc_reader *readers;
static int n_readers; /* atomic: a write looks here before taking a lock */

/* The reader of (c's place, table), or NULL (reg_lock held). */
static ddbc_reader *do_reader_find(ddb_client *c, const char *table) {
  const char *place, *principal;
  size_t place_len, principal_len;
  ddbc_reader *r;
  ddb_client_scope(c, &place, &place_len, &principal, &principal_len);
  for(r = readers; r; r = r->next)
    if(r->place_len == place_len && memcmp(r->place, place, place_len) == 0 &&
       strcmp(r->table, ddb_arn_table_name(table)) == 0)
      break;
  return r;
}

/* The reader of (c's place, table), with its mu taken, or NULL (none). */
static ddbc_reader *reader_find_locked(ddb_client *c, const char *table) {
  ddbc_reader *r;
  pthread_mutex_lock(&reg_lock);
  if((r = do_reader_find(c, table)) != NULL)
    pthread_mutex_lock(&r->mu);
  pthread_mutex_unlock(&reg_lock);
  return r;
}

/* Readers live in this process (atomic, no lock). */
static int readers_live(void) {
  return __atomic_load_n(&n_readers, __ATOMIC_ACQUIRE);
}

/* ------------------------------------------------------------------------
** Own writes (coherence_apply.c's top says what they are for)
*/
/* When the calling thread's write began (ddbc_coherence_write_begin; 0:
** not known). */
static __thread double write_began;

/* See cache_int.h. */
void ddbc_coherence_write_begin(void) {
  write_began = ddbc_now();
}

/* See cache_int.h: leave the fingerprint of a write through this process. */
void ddbc_coherence_note_write(ddb_client *c, const ddb_table_desc *d,
                               const ddb_item *key, const ddb_item *old_item,
                               int old_known, const ddb_item *new_item) {
  const char *names[2];
  ddbc_reader *r;
  ddb_buf k;
  fingerprint *f;
  double now = ddbc_now();
  if(!readers_live())
    return;
  if(!(r = reader_find_locked(c, d->name)))
    return;
  names[0] = d->indexes[0].pk.name;
  names[1] = d->indexes[0].sk.name;
  ddb_buf_init(&k, DDBC_KEY_MAX);
  if(ddb_key_encode(key, names, names[1] ? 2 : 1, &k) || k.failed)
    goto done;
  if(!r->images) {
    int same = old_known && (old_item == NULL) == (new_item == NULL) &&
               (!old_item || ddb_av_equal(&old_item->root, &new_item->root));
    /* the coarse clock ticks in milliseconds: a tick earlier */
    double since = write_began > 0 ? write_began - 0.01 : now - FP_TTL;
    if(!old_known || same || ddbc_own_seen_since(r, k.p, k.len, since))
      goto done;
  }
  if(r->n_fp == FP_MAX)
    ddbc_own_drop(r, 0); /* a dropped fingerprint only costs an eviction */
  f = &r->fp[r->n_fp];
  f->key = malloc(k.len);
  if(!f->key)
    goto done;
  memcpy(f->key, k.p, k.len);
  f->key_len = k.len;
  f->image = new_item ? ddb_item_ref((ddb_item *)new_item) : NULL;
  f->removed = new_item == NULL;
  f->t = now;
  r->n_fp++;

done:
  pthread_mutex_unlock(&r->mu);
  ddb_buf_free(&k);
}

/* ------------------------------------------------------------------------
** The reader's state
*/
/* Fall back to TTL freshness for why: the table's cache cleared (once, on
** the way from following), and an anchor asked for. */
static void fall_back(ddbc_reader *r, const char *why) {
  int was;
  pthread_mutex_lock(&r->mu);
  was = r->following;
  r->following = 0;
  r->clears += was;
  snprintf(r->why, sizeof(r->why), "%s", why);
  pthread_mutex_unlock(&r->mu);
  if(was)
    ddbc_clear_table(r->c, r->table);
  r->anchored = 0; /* anchor again */
}

static void shard_free(shard *sh) {
  free(sh->id);
  free(sh->parent);
  free(sh->iter);
  free(sh->last_seq);
}

/* Follow shard x of the stream (from its start when from_start, else from
** LATEST when it is opened).  0, or -1 when out of memory or too many. */
static int shard_add(ddbc_reader *r, const ddb_stream_shard *x, int from_start,
                     double now) {
  shard *p, *sh;
  if(r->n_shards >= READER_SHARDS_MAX)
    return -1;
  p = realloc(r->shards, sizeof(*p) * (size_t)(r->n_shards + 1));
  if(!p)
    return -1;
  r->shards = p;
  sh = &p[r->n_shards];
  memset(sh, 0, sizeof(*sh));
  sh->id = ddb_strdup(x->id);
  sh->parent = x->parent ? ddb_strdup(x->parent) : NULL;
  if(!sh->id)
    return -1;
  sh->from_start = from_start;
  sh->next = now;
  sh->wait = READER_POLL_MIN;
  sh->caught = now;
  r->n_shards++;
  return 0;
}

/* Is shard id followed? */
static int shard_known(const ddbc_reader *r, const char *id) {
  int i;
  for(i = 0; i < r->n_shards; i++)
    if(strcmp(r->shards[i].id, id) == 0)
      return 1;
  return 0;
}

/* Drop every shard followed. */
static void shards_clear(ddbc_reader *r) {
  int i;
  for(i = 0; i < r->n_shards; i++)
    shard_free(&r->shards[i]);
  free(r->shards);
  r->shards = NULL;
  r->n_shards = 0;
}

/* Anchor: the table's keys, its stream (a new one replaces the old), an
** iterator at LATEST of every open shard, then the table's cache cleared
** (what was read before is covered by no record): following.  Returns 0,
** or -1 (why in r->why: then still fallback-ttl). */
static int anchor(ddbc_reader *r, double now) {
  ddb_stream_desc *sd = NULL;
  char *arn = NULL, *view = NULL;
  ddb_error err;
  int i, rc = -1;
  ddb_error_clear(&err);
  if(!r->d && ddbc_describe_table(r->c, r->table, &r->d, &err))
    goto fail;
  if(ddb_stream_of_table(r->c, r->table, &arn, &view, &err))
    goto fail;
  if(!arn) {
    snprintf(err.message, sizeof(err.message), "the stream is disabled");
    goto fail;
  }
  if(ddb_describe_stream(r->c, arn, &sd, &err))
    goto fail;
  shards_clear(r);
  for(i = 0; i < sd->n_shards; i++)
    if(!sd->shards[i].closed && shard_add(r, &sd->shards[i], 0, now))
      goto fail;
  for(i = 0; i < r->n_shards; i++)
    if(ddb_shard_iterator(r->c, arn, r->shards[i].id, NULL, &r->shards[i].iter,
                          &err))
      goto fail;
  free(r->arn);
  free(r->view);
  r->arn = arn;
  r->view = view;
  arn = view = NULL;
  r->images = strcmp(r->view, "KEYS_ONLY") != 0;
  ddbc_clear_table(r->c, r->table);
  pthread_mutex_lock(&r->mu);
  r->following = 1;
  r->why[0] = 0;
  r->caught = now; /* every shard at LATEST: read to its end */
  pthread_mutex_unlock(&r->mu);
  r->anchored = now;
  r->recheck = now + r->recheck_every;
  rc = 0;

fail:
  if(rc) {
    char why[sizeof(r->why)];
    snprintf(why, sizeof(why), "cannot follow the stream: %.120s",
             err.message[0] ? err.message : "out of memory");
    fall_back(r, why);
  }
  ddb_stream_desc_free(sd);
  free(arn);
  free(view);
  return rc;
}

/* Every READER_RECHECK: is the table's stream still the one read, and are
** there open shards not followed (not the children of a shard followed,
** which come at its end)?  A new one is followed from its start. */
static void recheck(ddbc_reader *r, double now) {
  ddb_stream_desc *sd = NULL;
  char *arn = NULL, *view = NULL;
  int i;
  r->recheck = now + r->recheck_every;
  if(ddb_stream_of_table(r->c, r->table, &arn, &view, NULL))
    return; /* asked again at the next recheck */
  if(!arn || strcmp(arn, r->arn) != 0)
    fall_back(r, arn ? "the stream was replaced (a new LatestStreamArn)"
                     : "the stream was disabled");
  else if(ddb_describe_stream(r->c, arn, &sd, NULL) == 0) {
    for(i = 0; i < sd->n_shards; i++)
      if(!sd->shards[i].closed && !shard_known(r, sd->shards[i].id) &&
         !(sd->shards[i].parent && shard_known(r, sd->shards[i].parent)))
        shard_add(r, &sd->shards[i], 1, now);
  }
  ddb_stream_desc_free(sd);
  free(arn);
  free(view);
}

/* Shard i read to its end: dropped, its children followed from their
** start. */
static void shard_ended(ddbc_reader *r, int i, double now) {
  ddb_stream_desc *sd = NULL;
  char *id = r->shards[i].id;
  int j;
  r->shards[i].id = NULL;
  shard_free(&r->shards[i]);
  r->shards[i] = r->shards[--r->n_shards];
  if(ddb_describe_stream(r->c, r->arn, &sd, NULL)) {
    fall_back(r, "a shard ended and its children are unknown");
  } else {
    for(j = 0; j < sd->n_shards; j++)
      if(sd->shards[j].parent && strcmp(sd->shards[j].parent, id) == 0 &&
         !shard_known(r, sd->shards[j].id))
        shard_add(r, &sd->shards[j], 1, now);
  }
  ddb_stream_desc_free(sd);
  free(id);
}

/* Open shard sh's iterator: after its last record, at its start, else the
** records in between are lost (-1).  0 or -1 (err set). */
static int shard_open(ddbc_reader *r, shard *sh, ddb_error *err) {
  const char *at = sh->last_seq ? sh->last_seq : sh->from_start ? "" : NULL;
  if(!at) {
    snprintf(err->message, sizeof(err->message),
             "an iterator expired before any record");
    return -1;
  }
  return ddb_shard_iterator(r->c, r->arn, sh->id, at, &sh->iter, err) ? -1 : 0;
}

/* ------------------------------------------------------------------------
** The loop
*/
/* Apply the batch b of shard sh, read at t0: each record as a change
** record (the FLEET HOOK: a leader publishes rec here too).  Returns 0,
** or -1 when the reader fell behind (then anchored again). */
static int apply_batch(ddbc_reader *r, shard *sh, const ddb_stream_batch *b) {
  ddb_buf rec;
  int i, rc = 0;
  double wall = (double)time(NULL);
  ddb_buf_init(&rec, 2 * DDBC_KEY_MAX);
  for(i = 0; i < b->n; i++) {
    const ddb_stream_record *x = &b->r[i];
    if(x->created > 0 && x->created < wall - READER_BEHIND_MAX) {
      fall_back(r, "the reader fell behind");
      rc = -1;
      break;
    }
    ddb_buf_reset(&rec);
    if(ddbc_change_encode(r->d, x, r->images, &rec) == 0) {
      if(r->fm) /* a fleet's leader: Redis's entry first, publish later */
        ddbc_fleet_queue(r, x->keys, rec.p, rec.len);
      ddbc_reader_apply(r, rec.p, rec.len);
    } else
      ddbc_clear_table(r->c, r->table);
    free(sh->last_seq);
    sh->last_seq = ddb_strdup(x->seq);
  }
  ddb_buf_free(&rec);
  return rc;
}

/* One GetRecords of shard i at now.  The error types that lose records
** fall back and anchor again; others back the shard off. */
static void poll_shard(ddbc_reader *r, int i, double now) {
  shard *sh = &r->shards[i];
  ddb_stream_batch b;
  ddb_error err;
  ddb_error_clear(&err);
  memset(&b, 0, sizeof(b));
  if(!sh->iter && shard_open(r, sh, &err)) {
    if(!err.type[0] || strcmp(err.type, "ResourceNotFoundException") == 0 ||
       strcmp(err.type, "TrimmedDataAccessException") == 0)
      fall_back(r, err.message);
    goto backoff;
  }
  pthread_mutex_lock(&r->mu);
  r->polls++;
  pthread_mutex_unlock(&r->mu);
  if(ddb_get_records(r->c, sh->iter, READER_LIMIT, &b, &err)) {
    if(strcmp(err.type, "ExpiredIteratorException") == 0) {
      free(sh->iter); /* reopened after its last record */
      sh->iter = NULL;
      sh->next = now;
      return;
    }
    if(strcmp(err.type, "TrimmedDataAccessException") == 0 ||
       strcmp(err.type, "ResourceNotFoundException") == 0) {
      char why[sizeof(r->why)];
      snprintf(why, sizeof(why), "%s", err.type);
      fall_back(r, why);
      return;
    }
    goto backoff;
  }
  if(apply_batch(r, sh, &b) == 0) {
    free(sh->iter);
    sh->iter = b.next;
    b.next = NULL;
    if(b.n < READER_LIMIT)
      sh->caught = now; /* read to what the stream held at now */
    sh->wait = b.n ? READER_POLL_MIN : sh->wait * 1.25;
    if(sh->wait > READER_POLL_IDLE)
      sh->wait = READER_POLL_IDLE;
    sh->next = now + sh->wait;
    if(!sh->iter)
      shard_ended(r, i, now);
  }
  ddb_stream_batch_free(&b);
  return;

backoff:
  pthread_mutex_lock(&r->mu);
  r->errors++;
  pthread_mutex_unlock(&r->mu);
  sh->wait = sh->wait * 2 > READER_ERROR_MAX ? READER_ERROR_MAX : sh->wait * 2;
  sh->next = now + sh->wait;
  if(now - sh->caught > READER_BEHIND_MAX)
    fall_back(r, "the reader fell behind (errors)");
  ddb_stream_batch_free(&b);
}

/* The loop's body: anchor when needed, recheck the stream when due, then
** one GetRecords of each shard whose time has come; the position
** (r->caught, the least of the shards') updated.  Returns when the next
** thing is due (ddbc_now). */
static double poll_stream(ddbc_reader *r, double now) {
  double next = now + READER_POLL_IDLE, caught = now;
  int i;
  if(!r->anchored) {
    if(anchor(r, now))
      return now + READER_ERROR_MAX;
  } else if(now >= r->recheck) {
    recheck(r, now);
  }
  for(i = 0; r->anchored && i < r->n_shards; i++)
    if(r->shards[i].next <= now)
      poll_shard(r, i, now);
  for(i = 0; r->anchored && i < r->n_shards; i++) {
    if(r->shards[i].next < next)
      next = r->shards[i].next;
    if(r->shards[i].caught < caught)
      caught = r->shards[i].caught;
  }
  pthread_mutex_lock(&r->mu);
  r->caught = caught;
  pthread_mutex_unlock(&r->mu);
  return r->anchored ? next : now + READER_ERROR_MAX;
}

/* This file's steps, for fleet mode's turn (coherence_fleet.c). */
static const ddbc_reader_ops reader_ops = {poll_stream, shard_add,
                                           shards_clear};

/* The thread's cancel hook: a request in flight stops with the reader. */
static int reader_stopped(void *ud) {
  ddbc_reader *r = ud;
  return __atomic_load_n(&r->stop, __ATOMIC_ACQUIRE);
}

/* The reader's thread: poll_stream until stopped, sleeping on cv between
** polls (detach signals it). */
static void *reader_main(void *arg) {
  ddbc_reader *r = arg;
  ddb_cancel_thread(reader_stopped, r);
  for(;;) {
    double now = ddbc_now(), next;
    struct timespec ts;
    /* FLEET HOOK: with the shared tier, one reader per fleet
    ** (coherence_fleet.c) */
    next = __atomic_load_n(&r->shared, __ATOMIC_ACQUIRE)
               ? ddbc_fleet_turn(r, now, &reader_ops)
               : poll_stream(r, now);
    clock_gettime(CLOCK_REALTIME, &ts);
    next -= ddbc_now();
    if(next < 0.005)
      next = 0.005;
    ts.tv_sec += (time_t)next;
    ts.tv_nsec += (long)((next - (double)(time_t)next) * 1e9);
    if(ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&r->mu);
    if(!r->stop)
      pthread_cond_timedwait(&r->cv, &r->mu, &ts);
    if(r->stop) {
      pthread_mutex_unlock(&r->mu);
      break;
    }
    pthread_mutex_unlock(&r->mu);
  }
  return NULL;
}

/* ------------------------------------------------------------------------
** Life: attach, detach, fork()
*/
/* Free r, its thread stopped (or never started, or a parent's). */
static void reader_free(ddbc_reader *r) {
  ddbc_fleet_reader_free(r);
  ddbc_reader_own_free(r);
  shards_clear(r);
  ddb_table_desc_free(r->d);
  free(r->arn);
  free(r->view);
  free(r->table);
  ddb_client_free(r->c);
  pthread_mutex_destroy(&r->mu);
  pthread_cond_destroy(&r->cv);
  free(r);
}

/* Seconds between rechecks: READER_RECHECK, or $DYNAMODB_STREAMS_RECHECK
** (0.1 to 3600: the tests' stream disabled and replaced). */
static double recheck_every(void) {
  const char *z = getenv("DYNAMODB_STREAMS_RECHECK");
  char *end;
  double v = z ? strtod(z, &end) : 0;
  return z && *z && !*end && v >= 0.1 && v <= 3600 ? v : READER_RECHECK;
}

/* A new reader of table at c's place (not started), its own client made
** from cfg.  DDB_OK, or an error in err. */
static ddb_result reader_new(const ddb_config *cfg, ddb_client *c,
                             const char *table, ddbc_reader **out,
                             ddb_error *err) {
  const char *place, *principal;
  size_t place_len, principal_len;
  ddbc_reader *r = calloc(1, sizeof(*r));
  ddb_result result;
  *out = NULL;
  ddb_client_scope(c, &place, &place_len, &principal, &principal_len);
  if(!r || place_len > sizeof(r->place) ||
     !(r->table = ddb_strdup(ddb_arn_table_name(table)))) {
    if(r)
      free(r);
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  }
  memcpy(r->place, place, place_len);
  r->place_len = place_len;
  r->refs = 1;
  r->pid = getpid();
  pthread_mutex_init(&r->mu, NULL);
  pthread_cond_init(&r->cv, NULL);
  snprintf(r->why, sizeof(r->why), "starting");
  r->recheck_every = recheck_every();
  result = ddb_client_new(cfg, &r->c, err);
  if(result) {
    reader_free(r);
    return result;
  }
  *out = r;
  return DDB_OK;
}

/* The reader of (c's place, table) with one more reference, or NULL. */
static ddbc_reader *reader_ref(ddb_client *c, const char *table) {
  ddbc_reader *r;
  pthread_mutex_lock(&reg_lock);
  if((r = do_reader_find(c, table)) != NULL)
    r->refs++;
  pthread_mutex_unlock(&reg_lock);
  return r;
}

/* See ddb_cache.h. */
ddb_result ddbc_reader_attach(const ddb_config *cfg, ddb_client *c,
                              const char *table, ddbc_reader **out,
                              ddb_error *err) {
  ddbc_reader *r, *x;
  char *arn = NULL, *view = NULL;
  const char *name = ddb_arn_table_name(table);
  ddb_result result;
  *out = NULL;
  if((x = reader_ref(c, table)) != NULL) {
    *out = x;
    return DDB_OK;
  }
  result = ddb_stream_of_table(c, table, &arn, &view, err);
  if(result)
    return result;
  free(view);
  if(!arn)
    return ddb_error_set(
        err, DDB_ERR_CONFIG,
        "coherence=streams: table '%.200s' has no DynamoDB Stream enabled; "
        "enable one: aws dynamodb update-table --table-name %.200s "
        "--stream-specification StreamEnabled=true,StreamViewType=KEYS_ONLY",
        name, name);
  free(arn);
  result = reader_new(cfg, c, table, &r, err);
  if(result)
    return result;
  pthread_mutex_lock(&reg_lock);
  for(x = readers; x; x = x->next)
    if(x->place_len == r->place_len &&
       memcmp(x->place, r->place, r->place_len) == 0 &&
       strcmp(x->table, r->table) == 0)
      break;
  if(x) { /* another connection made it meanwhile */
    x->refs++;
    pthread_mutex_unlock(&reg_lock);
    reader_free(r);
    *out = x;
    return DDB_OK;
  }
  if(pthread_create(&r->tid, NULL, reader_main, r) != 0) {
    pthread_mutex_unlock(&reg_lock);
    reader_free(r);
    return ddb_error_set(err, DDB_ERR_NOMEM,
                         "coherence=streams: cannot start the reader thread");
  }
  r->started = 1;
  r->next = readers;
  readers = r;
  __atomic_add_fetch(&n_readers, 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&reg_lock);
  *out = r;
  return DDB_OK;
}

/* See ddb_cache.h. */
void ddbc_reader_detach(ddbc_reader *r) {
  ddbc_reader **pp;
  int last, mine;
  if(!r)
    return;
  pthread_mutex_lock(&reg_lock);
  last = --r->refs == 0;
  if(last && !r->orphan) {
    for(pp = &readers; *pp && *pp != r; pp = &(*pp)->next)
      ;
    if(*pp) {
      *pp = r->next;
      __atomic_sub_fetch(&n_readers, 1, __ATOMIC_RELEASE);
    }
  }
  pthread_mutex_unlock(&reg_lock);
  if(!last)
    return;
  mine = r->started && !r->orphan && r->pid == getpid();
  pthread_mutex_lock(&r->mu);
  __atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
  pthread_cond_signal(&r->cv);
  pthread_mutex_unlock(&r->mu);
  if(mine)
    pthread_join(r->tid, NULL);
  if(r->orphan)
    return; /* a parent's: its client and memory stay (as stream.c's) */
  reader_free(r);
}

/* fork(): reg_lock, then every reader's mu, before; released after. */
static void coherence_fork_lock(void *obj) {
  ddbc_reader *r;
  (void)obj;
  pthread_mutex_lock(&reg_lock);
  for(r = readers; r; r = r->next)
    pthread_mutex_lock(&r->mu);
}

static void coherence_fork_parent(void *obj) {
  ddbc_reader *r;
  (void)obj;
  for(r = readers; r; r = r->next)
    pthread_mutex_unlock(&r->mu);
  pthread_mutex_unlock(&reg_lock);
}

/* In the child: no reader has a thread here; every reader leaves the list
** (its vtabs then read with TTL freshness: "fallback-ttl: forked"), so a
** new attach in the child starts a reader of its own. */
static void coherence_fork_child(void *obj) {
  ddbc_reader *r, *next;
  (void)obj;
  for(r = readers; r; r = next) {
    next = r->next;
    r->orphan = 1;
    r->following = 0;
    snprintf(r->why, sizeof(r->why), "forked: this process has no reader");
    pthread_mutex_unlock(&r->mu);
  }
  readers = NULL;
  n_readers = 0;
  pthread_mutex_unlock(&reg_lock);
}

static const ddb_live_ops coherence_live_ops = {
    DDB_LIVE_COHERENCE, coherence_fork_lock, coherence_fork_parent,
    coherence_fork_child};
static ddb_live coherence_live;

__attribute__((constructor)) static void coherence_load(void) {
  ddb_live_add(&coherence_live, &coherence_live_ops, NULL);
}

/* ------------------------------------------------------------------------
** What the front ends see
*/
/* See ddb_cache.h. */
void ddbc_reader_info_get(ddbc_reader *r, ddbc_reader_info *out) {
  double now = ddbc_now();
  memset(out, 0, sizeof(*out));
  if(!r)
    return;
  pthread_mutex_lock(&r->mu);
  snprintf(out->table, sizeof(out->table), "%s", r->table);
  out->following = r->following;
  out->lag = r->following ? now - r->caught : -1;
  if(out->lag < 0 && r->following)
    out->lag = 0;
  snprintf(out->why, sizeof(out->why), "%s", r->why);
  out->records = r->records;
  out->polls = r->polls;
  out->clears = r->clears;
  out->own_skipped = r->own_skipped;
  out->errors = r->errors;
  out->shards = r->n_shards;
  pthread_mutex_unlock(&r->mu);
}

/* See ddb_cache.h. */
int ddbc_readers_info(ddbc_reader_info *out, int max) {
  ddbc_reader *r;
  int n = 0;
  pthread_mutex_lock(&reg_lock);
  for(r = readers; r; r = r->next, n++)
    if(n < max)
      ddbc_reader_info_get(r, &out[n]);
  pthread_mutex_unlock(&reg_lock);
  return n;
}

/* See ddb_cache.h. */
int ddbc_reader_bypass(const ddbc_policy *pol) {
  ddbc_reader *r = pol->reader;
  int out;
  if(!r || pol->max_staleness <= 0)
    return 0;
  pthread_mutex_lock(&r->mu);
  /* a reader that is not following (starting, fallback-ttl) vouches for
  ** nothing: the bound asked for is kept by asking DynamoDB */
  out = !r->following || ddbc_now() - r->caught > pol->max_staleness;
  pthread_mutex_unlock(&r->mu);
  return out;
}
