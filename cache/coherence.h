/*
** coherence.h -- what coherence.c (the reader: its loop, life and fork)
** and coherence_apply.c (change records, own writes, apply) share; private
** to those two files.  The reader's locks: coherence.c's top.
*/
#ifndef DDBC_COHERENCE_H
#define DDBC_COHERENCE_H

#include <pthread.h>
#include <sys/types.h>

#include "ddb_cache.h"
#include "cache_int.h"

/* Seconds between GetRecords of one shard: after records, at the most
** idle, at the most after errors. */
#define READER_POLL_MIN  0.2
#define READER_POLL_IDLE 0.5
#define READER_ERROR_MAX 5.0
/* Records asked per GetRecords. */
#define READER_LIMIT 1000
/* Seconds between checks that the table's stream is still the one read
** (DescribeTable's LatestStreamArn) and of new shards. */
#define READER_RECHECK 30.0
/* A record older than this (seconds, by its creation time) means the
** reader fell behind: it anchors again. */
#define READER_BEHIND_MAX 120.0
/* Shards followed at the most. */
#define READER_SHARDS_MAX 4096
/* Own-write fingerprints kept, their life, and the keys of applied
** records remembered (KEYS_ONLY). */
#define FP_MAX   256
#define FP_TTL   10.0
#define SEEN_MAX 256
/* The largest new image a change record carries. */
#define CHANGE_IMAGE_MAX 4096

typedef struct shard {
  char *id, *parent;
  char *iter;     /* NULL: to open (after last_seq, or at LATEST) */
  char *last_seq; /* the last record applied */
  int from_start; /* a child: opened at TRIM_HORIZON */
  double next;    /* when to poll (ddbc_now) */
  double wait;    /* the current interval */
  double caught;  /* when a poll last found it read to its end */
} shard;

typedef struct fingerprint {
  char *key; /* the item key (ddb_key_encode), key_len bytes */
  size_t key_len;
  ddb_item *image; /* the new image (images only; NULL: deleted) */
  int removed;     /* a delete */
  double t;
} fingerprint;

struct ddbc_reader {
  struct ddbc_reader *next; /* reg_lock */
  int refs;                 /* reg_lock */
  char place[64];
  size_t place_len;
  char *table;
  ddb_client *c;      /* the reader's own client */
  ddb_live live;      /* its mu on live.c's list */
  pthread_mutex_t mu; /* guards what follows */
  pthread_cond_t cv;
  pthread_t tid;
  int started, stop, orphan;
  pid_t pid;
  ddb_table_desc *d; /* the table's keys and indexes (the thread's) */
  char *arn, *view;  /* the stream read and its view type */
  int images;        /* the view carries images */
  shard *shards;
  int n_shards;
  int following; /* 0: fallback-ttl (or starting) */
  char why[160];
  double anchored; /* when it last anchored (ddbc_now); 0: to anchor */
  double caught;   /* the position: when every shard was last read to
                      its end (mu) */
  double recheck, recheck_every;
  uint64_t records, polls, clears, own_skipped, errors;
  fingerprint fp[FP_MAX];
  int n_fp;
  ddbc_shared *shared;     /* fleet mode's tier (atomic; set once) */
  struct reader_fleet *fm; /* fleet mode's state (the thread's) */
  char *seen[SEEN_MAX];    /* item keys of applied records (KEYS_ONLY) */
  size_t seen_len[SEEN_MAX];
  double seen_t[SEEN_MAX];
  int seen_next;
};

/* coherence_apply.c: stream record x of table d as a change record (the
** format at coherence_apply.c's top), appended to out; images: the view
** carries them.  Returns 0, or -1 when out of memory.  ddbc_reader_apply:
** the FLEET HOOK, one change record applied to this process's cache.
** ddbc_reader_own_free: free r's fingerprints and keys seen. */
int ddbc_change_encode(const ddb_table_desc *d, const ddb_stream_record *x,
                       int images, ddb_buf *out);
void ddbc_reader_apply(ddbc_reader *r, const char *rec, size_t len);
void ddbc_reader_own_free(ddbc_reader *r);
/* coherence_apply.c, mu held: ddbc_own_drop drops fingerprint i;
** ddbc_own_seen_since: was a record of item key k[0..n) applied since
** `since` (ddbc_now), or do the keys remembered not reach back that far? */
void ddbc_own_drop(ddbc_reader *r, int i);
int ddbc_own_seen_since(ddbc_reader *r, const char *k, size_t n, double since);

/* coherence_fleet.c: the reader's fleet mode (with the shared tier).
** ddbc_fleet_turn: one turn of the loop (leader, follower or alone), with
** coherence.c's own steps in ops (so that the files do not call each
** other); returns when the next turn is due.  ddbc_fleet_queue: a change
** record the leader is about to apply: the tier's entry of its item
** (keys: its key attributes) retired now, the record published at the
** end of the turn.  ddbc_fleet_reader_free: fleet mode's state
** freed, the lease released (the thread stopped). */
typedef struct ddbc_reader_ops {
  double (*poll)(ddbc_reader *r, double now); /* a lone reader's turn */
  int (*shard_add)(ddbc_reader *r, const ddb_stream_shard *x, int from_start,
                   double now);
  void (*shards_clear)(ddbc_reader *r);
} ddbc_reader_ops;
double ddbc_fleet_turn(ddbc_reader *r, double now, const ddbc_reader_ops *ops);
void ddbc_fleet_queue(ddbc_reader *r, const ddb_item *keys, const char *rec,
                      size_t len);
void ddbc_fleet_reader_free(ddbc_reader *r);

#endif /* DDBC_COHERENCE_H */
