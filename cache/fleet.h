/*
** fleet.h -- one DynamoDB Stream reader per table per fleet, not per
** process (fleet.c): the election of the reader (a lease in Redis), the
** broadcast of its change records to every other process of the fleet (a
** Redis Stream), their following, and the reader's checkpoint.  Transport
** only: a change record is opaque bytes (the stream reader's), sealed
** like every value of the shared tier (shared.c).  Internal to cache/.
**
** A fleet is every process whose tier names the same Redis keys: the same
** Redis, the same credentials scope (ddb_client_tier_key: endpoint,
** region, keys) and the same table.  The reader's loop, each turn:
**
**     role = ddbc_fleet_tick(f, &sink);
**     LEADER:   poll DynamoDB Streams; apply each record here, then
**               ddbc_fleet_publish(f, recs, lens, n, T) (and
**               ddbc_fleet_note_change per record), then
**               ddbc_fleet_checkpoint_put(f, positions)
**     FOLLOWER: ddbc_fleet_follow(f, wait, &sink): the leader's records
**               applied here in order; freshness = the leader's T
**     OFF:      Redis cannot answer: read the stream in this process
**
** On becoming LEADER the caller reads ddbc_fleet_checkpoint_get and
** continues AFTER_SEQUENCE_NUMBER of those positions; with none, it
** starts at LATEST and publishes ddbc_fleet_publish_reset, which makes
** every process clear the table once.  Nothing here returns an error to
** a statement: Redis down or slow makes the role OFF.
**
** One thread uses a ddbc_fleet at a time (the reader's);
** ddbc_fleet_status may be called from any thread.
*/
#ifndef DDBC_FLEET_H
#define DDBC_FLEET_H

#include "resp.h"
#include "shared.h"

/* The lease of the reader, in seconds: taken with SET NX PX, renewed
** every DDBC_FLEET_RENEW by its holder; a holder that stops renewing (it
** died) loses it after at most DDBC_FLEET_LEASE, and a follower, which
** tries every DDBC_FLEET_RENEW, takes it within a second more. */
#define DDBC_FLEET_LEASE 3.0
#define DDBC_FLEET_RENEW 1.0
/* A round trip of the fleet's own connection (a background thread: not
** the tier's statement timeout). */
#define DDBC_FLEET_TIMEOUT 0.5
/* Entries kept in the Redis Stream (XADD MAXLEN ~): a follower that falls
** further behind finds a gap in the sequence numbers. */
#define DDBC_FLEET_MAXLEN 10000
/* Messages of one XADD round trip, and of one XREAD. */
#define DDBC_FLEET_BATCH 100
/* The largest change record published (larger: a reset instead). */
#define DDBC_FLEET_MAX_RECORD (1024u * 1024)
/* The longest checkpoint (shard positions). */
#define DDBC_FLEET_MAX_CHECKPOINT (256u * 1024)
/* A leader with nothing to publish sends a heartbeat this often. */
#define DDBC_FLEET_HEARTBEAT 0.5
/* Seconds of the stream a process that starts following replays (the
** changes its own reader may not have seen yet). */
#define DDBC_FLEET_REPLAY 5.0
/* Backoff after Redis failed: the first wait, doubling up to the last. */
#define DDBC_FLEET_BACKOFF_MIN 0.25
#define DDBC_FLEET_BACKOFF_MAX 5.0
/* How long the keys of a fleet live without a write (the stream, its
** counter, the checkpoint): a day, DynamoDB Streams' retention. */
#define DDBC_FLEET_KEEP_MS 86400000LL

enum {
  DDBC_FLEET_OFF = 0,    /* Redis cannot answer: read the stream here */
  DDBC_FLEET_LEADER = 1, /* this process reads DynamoDB and publishes */
  DDBC_FLEET_FOLLOWER = 2
};

/* What a follower does with what the leader published: apply one change
** record (rec[0..len), as published), and clear the table's cache once
** (why: a phrase for the progress line, e.g. "fleet: 3 changes missed").
** arg is the caller's. */
typedef struct ddbc_fleet_sink {
  void (*apply)(void *arg, const unsigned char *rec, size_t len);
  void (*clear)(void *arg, const char *why);
  void *arg;
} ddbc_fleet_sink;

/* What ddbc_fleet_status shows. */
typedef struct ddbc_fleet_state {
  int role;           /* DDBC_FLEET_* */
  double fresh;       /* wall clock: the leader applied everything up to
                         here (0: unknown yet) */
  uint64_t seq;       /* the last message published or applied */
  uint64_t published; /* records published by this process */
  uint64_t received;  /* records applied from the leader */
  uint64_t gaps;      /* clears: messages missed, the stream gone */
  uint64_t leads;     /* times this process took the lease */
  char why[160];      /* the last clear or failure, or "" */
} ddbc_fleet_state;

typedef struct ddbc_fleet ddbc_fleet;

/* A fleet member for table on tier sh under c's credentials (c must
** outlive it).  Nothing is sent until the first tick.  Returns DDB_OK
** with *out (ddbc_fleet_free), or DDB_ERR_NOMEM. */
ddb_result ddbc_fleet_new(ddbc_shared *sh, ddb_client *c, const char *table,
                          ddbc_fleet **out, ddb_error *err);
/* Free f (NULL is fine): the lease released (compare-and-delete) when
** this process holds it, so that another takes it at once; the
** connection closed.  In a child of fork(), nothing is sent. */
void ddbc_fleet_free(ddbc_fleet *f);

/* One turn of the election: the lease renewed (leader) or tried (others)
** when due, the connection made again after a failure (with backoff).
** Returns the role.  Becoming LEADER, the messages not read yet are
** applied through sink first; becoming FOLLOWER after OFF, the last
** DDBC_FLEET_REPLAY seconds of the stream are replayed; a FOLLOWER that
** becomes OFF clears the table once (the changes published while it
** cannot read them are lost to it). */
int ddbc_fleet_tick(ddbc_fleet *f, const ddbc_fleet_sink *sink);

/* LEADER: publish the n change records recs[i][0..lens[i]) in order,
** then a heartbeat saying "applied everything written before wall time
** fresh" (n 0: the heartbeat alone, sent at most every
** DDBC_FLEET_HEARTBEAT).  Each message is sealed and numbered; the lease
** is checked in the same script (a process that lost it publishes
** nothing).  Returns 0, or -1 (not the leader any more, or Redis
** failed: the role says which). */
int ddbc_fleet_publish(ddbc_fleet *f, const unsigned char *const *recs,
                       const size_t *lens, size_t n, double fresh);
/* LEADER: a message that makes every follower clear the table once (why,
** a phrase, goes with it).  Returns 0 or -1. */
int ddbc_fleet_publish_reset(ddbc_fleet *f, double fresh, const char *why);
/* LEADER: the shared tier's entries follow a change of the item named
** tail[0..len) (shared.h's logical key): its entry becomes a tombstone
** and the table's generation moves (ddbc_shared_note_write). */
void ddbc_fleet_note_change(ddbc_fleet *f, const char *tail, size_t len,
                            double now);

/* FOLLOWER: wait up to `wait` seconds (0: not at all) for what the leader
** published after the last message read, and apply it in order through
** sink; a gap in the sequence numbers (trimmed, Redis restarted, another
** stream) clears the table once first.  Returns the messages read, or -1
** when Redis failed (the role is then OFF). */
int ddbc_fleet_follow(ddbc_fleet *f, double wait, const ddbc_fleet_sink *sink);

/* LEADER: store the reader's shard positions pos[0..len) (opaque), sealed,
** for the next leader (checked against the lease).  Returns 0 or -1. */
int ddbc_fleet_checkpoint_put(ddbc_fleet *f, const void *pos, size_t len);
/* The positions the last leader stored, appended to out.  Returns 1, 0
** when there are none (or none that opens: counted), -1 when Redis
** failed. */
int ddbc_fleet_checkpoint_get(ddbc_fleet *f, ddb_buf *out);

/* f's state, into *out (any thread). */
void ddbc_fleet_status(ddbc_fleet *f, ddbc_fleet_state *out);

/* ------------------------------------------------------------------------
** redis_conn.c, for fleet.c: a connection of its own to sh's Redis (not
** pooled: XREAD BLOCK holds it), connected before deadline (the tier's
** URL, password and TLS).  Returns DDBC_RESP_OK with *out, or TIMEOUT or
** FAILED with why set.
*/
int ddbc_shared_connect(ddbc_shared *sh, double deadline, ddbc_resp **out,
                        char *why, size_t cap);

#endif
