/*
** redis_conn.c -- one job: the shared tier as a client of Redis.  The
** tiers of the process (one a URL and timeout: their settings, password
** and TLS context), each tier's pool of connections (resp.c), its
** backoff, and the round trip that takes a connection, sends commands
** and gives it back.  What the commands are, and what the values mean,
** is shared.c's (interface: shared.h).
**
** Failure.  A connect and each round trip are bounded by the tier's
** timeout (shared_cache_timeout, 20 ms by default).  A timeout, a refused
** or closed connection, or an answer that is not RESP drops the
** connection and the tier backs off: lookups are skipped (a miss,
** shared_skipped) for DDBC_SHARED_BACKOFF_MIN seconds, doubling up to
** DDBC_SHARED_BACKOFF_MAX, until a connection works again.  An answer of
** the wrong type or an error answer (OOM when Redis is full) is a miss on
** a connection that stays good.
**
** Threads and fork().  Connections sit in a per-tier pool (a mutex, at
** most DDBC_SHARED_IDLE idle); a thread takes one for a round trip and
** gives it back; no lock is held while talking to Redis.  fork(): the
** handlers below take every tier's lock before the fork, and the child
** closes the idle connections it inherited (without a TLS close_notify,
** which would end the parent's session); a connection that was in use by
** another thread is refused when given back to a pool in another process
** (its pid).
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "resp.h"
#include "fleet.h"
#include "shared.h"

/* Idle connections kept per tier; tiers per process. */
#define DDBC_SHARED_IDLE  8
#define DDBC_SHARED_TIERS 16
/* Backoff after a failure: the first wait, doubling up to the last. */
#define DDBC_SHARED_BACKOFF_MIN 0.1
#define DDBC_SHARED_BACKOFF_MAX 5.0

struct ddbc_shared {
  struct ddbc_shared *next; /* the registry, under reg_lock */
  char *spec;               /* url and timeout: the registry's key */
  ddbc_redis_url u;
  double timeout;
  void *tls;            /* SSL_CTX for rediss://, else NULL */
  pthread_mutex_t lock; /* idle, n_idle, retry_at, backoff, why */
  ddbc_resp *idle[DDBC_SHARED_IDLE];
  int n_idle;
  double retry_at; /* ddbc_resp_clock() before which nothing is sent */
  double backoff;  /* the last wait; 0 while Redis answers */
  char why[160];   /* what failed last */
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static ddbc_shared *reg;
static int n_reg;

/* The counters of the connections (atomic); shared.c counts the rest. */
static struct { uint64_t timeouts, errors, skipped; } st;

#define COUNT(field, n)                                                       \
  __atomic_add_fetch(&st.field, (uint64_t)(n), __ATOMIC_RELAXED)

/* ------------------------------------------------------------------------
** fork()
*/
/* Before fork() (live.c's list, rank DDB_LIVE_SHARED): every tier's lock
** (the registry's first), so the child gets the pools whole. */
static void shared_fork_lock(void *obj) {
  ddbc_shared *sh;
  (void)obj;
  pthread_mutex_lock(&reg_lock);
  for(sh = reg; sh; sh = sh->next)
    pthread_mutex_lock(&sh->lock);
}

/* After fork(), in the parent: the locks released. */
static void shared_fork_parent(void *obj) {
  ddbc_shared *sh;
  (void)obj;
  for(sh = reg; sh; sh = sh->next)
    pthread_mutex_unlock(&sh->lock);
  pthread_mutex_unlock(&reg_lock);
}

/* The child: the idle connections are the parent's sessions. */
static void shared_fork_child(void *obj) {
  ddbc_shared *sh;
  int i;
  (void)obj;
  for(sh = reg; sh; sh = sh->next) {
    for(i = 0; i < sh->n_idle; i++)
      ddbc_resp_close(sh->idle[i], 1);
    sh->n_idle = 0;
    pthread_mutex_unlock(&sh->lock);
  }
  pthread_mutex_unlock(&reg_lock);
}

static const ddb_live_ops shared_live_ops = {
    DDB_LIVE_SHARED, shared_fork_lock, shared_fork_parent, shared_fork_child};
static ddb_live shared_live;

/* At load: on the fork list (glibc forgets the handlers at unload). */
__attribute__((constructor)) static void shared_load(void) {
  ddb_live_add(&shared_live, &shared_live_ops, NULL);
}

/* ------------------------------------------------------------------------
** Opening a tier
*/
/* Free a tier not yet in the registry. */
static void tier_free(ddbc_shared *sh) {
  if(!sh)
    return;
  ddbc_redis_url_wipe(&sh->u);
  if(sh->spec) {
    OPENSSL_cleanse(sh->spec, strlen(sh->spec));
    free(sh->spec);
  }
  ddbc_resp_tls_free(sh->tls);
  pthread_mutex_destroy(&sh->lock);
  free(sh);
}

/* The tier in the registry whose spec (URL and timeout) is spec, or NULL.
** Expects reg_lock held. */
static ddbc_shared *do_tier_find(const char *spec) {
  ddbc_shared *x;
  for(x = reg; x; x = x->next)
    if(strcmp(x->spec, spec) == 0)
      break;
  return x;
}

/* Is u the Redis that DYNAMODB_SHARED_CACHE names (the same scheme, host,
** port, database and user)?  Returns 1 or 0, with that URL parsed into
** *env_u (its password too: the caller wipes it).  The environment's
** password goes to that Redis only: a shared_cache= URL can come from a
** database file (docs/trust-model.md). */
static int tier_is_env(const ddbc_redis_url *u, ddbc_redis_url *env_u) {
  const char *env = getenv("DYNAMODB_SHARED_CACHE");
  char why[200];
  if(!env || !env[0] || strcmp(env, "off") == 0 ||
     ddbc_redis_url_parse(env, env_u, why, sizeof(why)))
    return 0;
  return env_u->tls == u->tls && strcasecmp(env_u->host, u->host) == 0 &&
         env_u->port == u->port && env_u->db == u->db &&
         strcmp(env_u->user, u->user) == 0;
}

/* The settings of the new tier sh from url (from names it in messages,
** shown is it with its password redacted; from_env: url is
** DYNAMODB_SHARED_CACHE) and the environment: the URL parsed; when it has
** no password and names the environment's Redis (from_env, or
** tier_is_env), that URL's password or else
** DYNAMODB_SHARED_CACHE_PASSWORD, never for another Redis; the TLS
** context of rediss:// (DYNAMODB_SHARED_CACHE_CA).  Returns DDB_OK, or
** DDB_ERR_CONFIG naming what is wrong; sh is then the caller's to free
** (tier_free), as always. */
static ddb_result tier_settings(ddbc_shared *sh, const char *url,
                                const char *from, const char *shown,
                                int from_env, ddb_error *err) {
  const char *pw, *ca;
  char why[200];
  ddbc_redis_url env_u;
  int is_env;
  if(ddbc_redis_url_parse(url, &sh->u, why, sizeof(why)))
    return ddb_error_set(err, DDB_ERR_CONFIG, "bad %s '%.200s': %s", from,
                         shown, why);
  memset(&env_u, 0, sizeof(env_u));
  is_env = from_env || tier_is_env(&sh->u, &env_u);
  if(is_env && !sh->u.has_password && env_u.has_password) {
    memcpy(sh->u.password, env_u.password, sizeof(sh->u.password));
    sh->u.has_password = 1;
  }
  ddbc_redis_url_wipe(&env_u);
  pw = getenv("DYNAMODB_SHARED_CACHE_PASSWORD");
  if(is_env && !sh->u.has_password && pw && pw[0]) {
    if(strlen(pw) >= sizeof(sh->u.password))
      return ddb_error_set(err, DDB_ERR_CONFIG,
                           "DYNAMODB_SHARED_CACHE_PASSWORD is too long");
    memcpy(sh->u.password, pw, strlen(pw) + 1);
    sh->u.has_password = 1;
  }
  if(sh->u.user[0] && !sh->u.has_password && is_env)
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "bad %s '%.200s': a user needs a password "
                         "(DYNAMODB_SHARED_CACHE_PASSWORD)",
                         from, shown);
  if(sh->u.user[0] && !sh->u.has_password)
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "bad %s '%.200s': a user needs a password, and "
                         "DYNAMODB_SHARED_CACHE_PASSWORD goes only to the "
                         "Redis that DYNAMODB_SHARED_CACHE names: name this "
                         "one there",
                         from, shown);
  if(sh->u.tls) {
    ca = getenv("DYNAMODB_SHARED_CACHE_CA");
    sh->tls = ddbc_resp_tls_new(ca && ca[0] ? ca : NULL, why, sizeof(why));
    if(!sh->tls)
      return ddb_error_set(err, DDB_ERR_CONFIG, "%s '%.200s': %s", from, shown,
                           why);
  }
  return DDB_OK;
}

/* Put the new tier *sh (its spec set) in the registry, unless another
** thread put one of the same spec there first: *out is the one
** registered, and *sh NULL when it was ours (the registry owns it now).
** Returns DDB_OK, or DDB_ERR_CONFIG when the registry is full
** (DDBC_SHARED_TIERS). */
static ddb_result tier_register(ddbc_shared **sh, ddbc_shared **out,
                                ddb_error *err) {
  ddbc_shared *x;
  pthread_mutex_lock(&reg_lock);
  x = do_tier_find((*sh)->spec); /* another thread may have made it */
  if(!x && n_reg >= DDBC_SHARED_TIERS) {
    pthread_mutex_unlock(&reg_lock);
    return ddb_error_set(err, DDB_ERR_CONFIG,
                         "too many shared caches in one process (at most "
                         "%d URL and timeout pairs)",
                         DDBC_SHARED_TIERS);
  }
  if(!x) {
    x = *sh;
    x->next = reg;
    reg = x;
    n_reg++;
    *sh = NULL;
  }
  pthread_mutex_unlock(&reg_lock);
  *out = x;
  return DDB_OK;
}

/* See ddb_cache.h: the tier of url (or DYNAMODB_SHARED_CACHE) and timeout,
** one a spec in the process: found in the registry, or made (its
** settings) and registered. */
ddb_result ddbc_shared_open(const char *url, double timeout, ddbc_shared **out,
                            ddb_error *err) {
  static const char env_name[] = "DYNAMODB_SHARED_CACHE";
  const char *from = url ? "shared_cache" : env_name;
  char shown[300];
  ddbc_shared *sh = NULL, *x;
  ddb_buf spec;
  ddb_result result = DDB_OK;

  *out = NULL;
  if(!url)
    url = getenv("DYNAMODB_SHARED_CACHE");
  if(!url || !url[0] || strcmp(url, "off") == 0)
    return DDB_OK;
  if(timeout <= 0)
    timeout = DDBC_SHARED_TIMEOUT;
  ddbc_redis_url_redact(url, shown, sizeof(shown));
  ddb_buf_init(&spec, 8192);
  ddb_buf_addf(&spec, "%s\n%.6f", url, timeout);
  if(spec.failed)
    return ddb_error_set(err, DDB_ERR_CONFIG, "bad %s '%.200s': too long",
                         from, shown);
  pthread_mutex_lock(&reg_lock);
  x = do_tier_find(spec.p);
  pthread_mutex_unlock(&reg_lock);
  if(x) {
    *out = x;
    goto done;
  }
  sh = calloc(1, sizeof(*sh));
  if(!sh) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto done;
  }
  pthread_mutex_init(&sh->lock, NULL);
  sh->timeout = timeout;
  result = tier_settings(sh, url, from, shown, from == env_name, err);
  if(result)
    goto done;
  sh->spec = ddb_buf_take(&spec, NULL);
  if(!sh->spec) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto done;
  }
  result = tier_register(&sh, out, err);

done:
  tier_free(sh);
  if(spec.p)
    OPENSSL_cleanse(spec.p, spec.len);
  ddb_buf_free(&spec);
  return result;
}

int ddbc_shared_status(ddbc_shared *sh, char *why, size_t cap) {
  int down;
  if(cap)
    why[0] = 0;
  if(!sh)
    return 0;
  pthread_mutex_lock(&sh->lock);
  down = sh->backoff > 0;
  if(down && cap)
    snprintf(why, cap, "%s", sh->why);
  pthread_mutex_unlock(&sh->lock);
  return down;
}

void ddbc_shared_count_error(void) {
  COUNT(errors, 1);
}

void ddbc_shared_conn_stats(ddbc_stats *out) {
  ddbc_shared *sh;
  uint64_t down = 0;
  out->shared_timeouts = __atomic_load_n(&st.timeouts, __ATOMIC_RELAXED);
  out->shared_errors = __atomic_load_n(&st.errors, __ATOMIC_RELAXED);
  out->shared_skipped = __atomic_load_n(&st.skipped, __ATOMIC_RELAXED);
  pthread_mutex_lock(&reg_lock);
  for(sh = reg; sh; sh = sh->next)
    down += (uint64_t)ddbc_shared_status(sh, NULL, 0);
  pthread_mutex_unlock(&reg_lock);
  out->shared_down = down;
}

/* ------------------------------------------------------------------------
** Round trips: a connection from the pool, the commands, the backoff
*/

/* See shared.h: a row of the request log for the tier. */
void ddbc_shared_log(const char *op, const char *table, int items, double ms) {
  ddb_log_entry e;
  memset(&e, 0, sizeof(e));
  snprintf(e.operation, sizeof(e.operation), "%s", op);
  snprintf(e.table, sizeof(e.table), "%s", table ? table : "");
  e.items = items;
  e.ms = ms;
  ddb_log_add(&e);
}

/* Redis failed (rc: TIMEOUT or FAILED, why): count it, log it, back off. */
static void note_failure(ddbc_shared *sh, int rc, const char *why,
                         const char *table, double ms) {
  double now = ddbc_resp_clock();
  if(rc == DDBC_RESP_TIMEOUT)
    COUNT(timeouts, 1);
  else
    COUNT(errors, 1);
  ddbc_shared_log(rc == DDBC_RESP_TIMEOUT ? "shared_timeout" : "shared_error",
                  table, -1, ms);
  pthread_mutex_lock(&sh->lock);
  sh->backoff = sh->backoff > 0 ? sh->backoff * 2 : DDBC_SHARED_BACKOFF_MIN;
  if(sh->backoff > DDBC_SHARED_BACKOFF_MAX)
    sh->backoff = DDBC_SHARED_BACKOFF_MAX;
  sh->retry_at = now + sh->backoff;
  snprintf(sh->why, sizeof(sh->why), "%s", why);
  pthread_mutex_unlock(&sh->lock);
}

/* A connection of sh in *out: an idle one, or a new one (connected
** within the timeout).  Returns DDBC_RESP_OK; -1 when the tier is backing
** off (counted as skipped); TIMEOUT or FAILED (counted, backoff). */
static int conn_take(ddbc_shared *sh, const char *table, ddbc_resp **out) {
  double t0 = ddbc_resp_clock();
  int pid = (int)getpid(), rc;
  char why[160];
  *out = NULL;
  pthread_mutex_lock(&sh->lock);
  if(sh->retry_at > t0) {
    pthread_mutex_unlock(&sh->lock);
    COUNT(skipped, 1);
    return -1;
  }
  while(sh->n_idle > 0) {
    ddbc_resp *r = sh->idle[--sh->n_idle];
    if(ddbc_resp_pid(r) == pid) {
      *out = r;
      break;
    }
    ddbc_resp_close(r, 1);
  }
  pthread_mutex_unlock(&sh->lock);
  if(*out)
    return DDBC_RESP_OK;
  why[0] = 0;
  rc = ddbc_resp_connect(&sh->u, sh->tls, t0 + sh->timeout, out, why,
                         sizeof(why));
  if(rc)
    note_failure(sh, rc, why, table, (ddbc_resp_clock() - t0) * 1000);
  return rc;
}

/* Give r back to sh's pool after a round trip that worked. */
static void conn_give(ddbc_shared *sh, ddbc_resp *r) {
  pthread_mutex_lock(&sh->lock);
  sh->backoff = 0;
  sh->retry_at = 0;
  if(ddbc_resp_pid(r) == (int)getpid() && sh->n_idle < DDBC_SHARED_IDLE) {
    sh->idle[sh->n_idle++] = r;
    r = NULL;
  }
  pthread_mutex_unlock(&sh->lock);
  if(r)
    ddbc_resp_close(r, ddbc_resp_pid(r) != (int)getpid());
}

/* See shared.h: one round trip on sh, cmds then n replies into rp. */
int ddbc_shared_round_trip(ddbc_shared *sh, const ddb_buf *cmds,
                           ddbc_resp_reply *rp, int n, int max_nodes,
                           const char *table, double *ms) {
  ddbc_resp *r;
  double t0;
  char why[160];
  int rc, i;
  for(i = 0; i < n; i++)
    memset(&rp[i], 0, sizeof(rp[i]));
  if(cmds->failed)
    return -1;
  if(conn_take(sh, table, &r))
    return -1;
  t0 = ddbc_resp_clock();
  why[0] = 0;
  rc = ddbc_resp_call(r, cmds->p, cmds->len, rp, n, max_nodes,
                      t0 + sh->timeout, why, sizeof(why));
  *ms = (ddbc_resp_clock() - t0) * 1000;
  if(rc) {
    ddbc_resp_close(r, 0);
    for(i = 0; i < n; i++)
      ddbc_resp_reply_free(&rp[i]);
    note_failure(sh, rc, why, table, *ms);
    return -1;
  }
  conn_give(sh, r);
  return 0;
}

/* See fleet.h: a connection of its own, outside the pool and the
** backoff (its caller keeps its own). */
int ddbc_shared_connect(ddbc_shared *sh, double deadline, ddbc_resp **out,
                        char *why, size_t cap) {
  return ddbc_resp_connect(&sh->u, sh->tls, deadline, out, why, cap);
}
