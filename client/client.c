/*
** client.c -- a client's life: made from a resolved configuration, kept
** safe across fork(), its pool of curl handles, freed.
**
** fork().  A child of fork() inherits the pooled curl handles, and with
** them the parent's kept-alive connections: both would write requests on
** one socket and read each other's answers.  It also inherits the locks
** as they were, held perhaps by threads that do not exist in the child.
** So every live client is on live.c's list (rank DDB_LIVE_CLIENT), whose
** pthread_atfork handlers take every client's lock, cred_lock and the
** signing-key cache of its current credentials (sigv4.c), in that order,
** before the fork and release them after it in both processes: the child
** finds them free and what they guard whole.  The current credentials
** cannot change meanwhile (they are swapped under cred_lock); older ones
** still referenced by a request in flight are the parent's threads', which
** the child does not have.  The child then forgets its pooled handles
** without cleaning them up (a cleanup could send a TLS close_notify on the
** parent's connection): their memory and sockets stay, at most
** DDB_POOL_MAX per client, and its requests open connections of its own.
** refresh_lock is not taken (a refresh holds it for as long as fetching
** credentials takes); the child makes it anew, which is safe because the
** thread that held it is not in the child and it guards no data.  The
** backoff's jitter is drawn from the kernel at each retry (cancel.c), so a
** child does not retry in step with its parent.
*/
#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ddb_client_int.h"
#include "http_int.h"
#include "sigv4.h"

#define DEFAULT_TIMEOUT_S         60.0
#define DEFAULT_CONNECT_TIMEOUT_S 10.0

/* Before fork(): take c's locks (see above). */
static void client_fork_lock(void *obj) {
  ddb_client *c = obj;
  pthread_mutex_lock(&c->lock);
  pthread_mutex_lock(&c->cred_lock);
  ddb_sigv4_fork_lock(c->sig->keys);
}

/* After fork(), in the parent: release them. */
static void client_fork_parent(void *obj) {
  ddb_client *c = obj;
  ddb_sigv4_fork_unlock(c->sig->keys);
  pthread_mutex_unlock(&c->cred_lock);
  pthread_mutex_unlock(&c->lock);
}

/* After fork(), in the child: forget the pooled handles, make
** refresh_lock anew, release the locks. */
static void client_fork_child(void *obj) {
  ddb_client *c = obj;
  c->n_pool = 0; /* the parent's connections: left alone */
  pthread_mutex_init(&c->refresh_lock, NULL);
  ddb_sigv4_fork_unlock(c->sig->keys);
  pthread_mutex_unlock(&c->cred_lock);
  pthread_mutex_unlock(&c->lock);
}

static const ddb_live_ops client_live_ops = {
    DDB_LIVE_CLIENT, client_fork_lock, client_fork_parent, client_fork_child};

/* Resolve cfg and create a client (see ddb_client.h). */
ddb_result ddb_client_new(const ddb_config *cfg, ddb_client **out,
                          ddb_error *err) {
  ddb_client *c;
  ddb_result result;

  *out = NULL;
  ddb_curl_global_init(); /* once; allocators that wipe (curl_mem.c) */
  c = calloc(1, sizeof(*c));
  if(!c)
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  result = ddb_settings_resolve(cfg, &c->s, err);
  if(result) {
    free(c);
    return result;
  }
  pthread_mutex_init(&c->lock, NULL);
  pthread_mutex_init(&c->cred_lock, NULL);
  pthread_mutex_init(&c->refresh_lock, NULL);
  c->timeout = cfg->timeout > 0 ? cfg->timeout : DEFAULT_TIMEOUT_S;
  c->connect_timeout = cfg->connect_timeout > 0 ? cfg->connect_timeout
                                                : DEFAULT_CONNECT_TIMEOUT_S;
  if(c->connect_timeout > c->timeout)
    c->connect_timeout = c->timeout;
  c->max_retries =
      cfg->max_retries >= 0 ? cfg->max_retries : DDB_DEFAULT_MAX_RETRIES;
  c->max_requests = cfg->max_requests > 0 ? cfg->max_requests : 0;
  c->max_rcu = cfg->max_rcu > 0 ? cfg->max_rcu : 0;
  c->max_wcu = cfg->max_wcu > 0 ? cfg->max_wcu : 0;
  /* the endpoint as config.c parsed it: the Host header signed (the
  ** path too: c->s.ep.sign_path), the URL curl connects to (http.c) and
  ** the cache's place */
  c->host_hdr = ddb_concat(DDB_HOST_HDR, c->s.ep.host);
  c->sig = ddb_signer_new(c->s.access_key, c->s.secret_key, c->s.session_token,
                          c->s.expires);
  if(!c->host_hdr || !c->sig ||
     ddb_place_id(c->s.ep.canonical, c->s.region, c->place) ||
     ddb_principal_push(c, c->s.access_key, c->s.secret_key,
                        c->s.session_token)) {
    ddb_client_free(c);
    return ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  }
  /* on the fork list once whole: its handlers read c->sig */
  ddb_live_add(&c->live, &client_live_ops, c);
  *out = c;
  return DDB_OK;
}

/* Free c, its pooled handles and its credentials (wiped); NULL is fine. */
void ddb_client_free(ddb_client *c) {
  int i;
  if(!c)
    return;
  ddb_live_remove(&c->live);
  for(i = 0; i < c->n_pool; i++)
    curl_easy_cleanup(c->pool[i]);
  pthread_mutex_destroy(&c->lock);
  pthread_mutex_destroy(&c->cred_lock);
  pthread_mutex_destroy(&c->refresh_lock);
  free(c->host_hdr);
  ddb_signer_free(c->sig);
  while(c->principals) {
    ddb_principal *next = c->principals->next;
    free(c->principals);
    c->principals = next;
  }
  ddb_settings_free(&c->s);
  free(c);
}

/* The resolved endpoint URL (owned by c). */
const char *ddb_client_endpoint(const ddb_client *c) {
  return c->s.endpoint;
}

/* The resolved region (owned by c). */
const char *ddb_client_region(const ddb_client *c) {
  return c->s.region;
}

/* The cache's place and principal ids of c (see ddb_client.h): the
** principal is the newest pushed, read without the lock. */
void ddb_client_scope(const ddb_client *c, const char **place,
                      size_t *place_len, const char **principal,
                      size_t *principal_len) {
  const ddb_principal *pr = __atomic_load_n(&c->principals, __ATOMIC_ACQUIRE);
  *place = (const char *)c->place;
  *place_len = DDB_SCOPE_ID_LEN;
  *principal = (const char *)pr->id;
  *principal_len = DDB_SCOPE_ID_LEN;
}

/* The shared tier's key of c's current principal (see ddb_client.h). */
const unsigned char *ddb_client_tier_key(const ddb_client *c) {
  const ddb_principal *pr = __atomic_load_n(&c->principals, __ATOMIC_ACQUIRE);
  return pr->tier;
}

/* Where the credentials came from (owned by c), never a secret. */
const char *ddb_client_credential_source(const ddb_client *c) {
  return c->s.cred_source;
}

/* The client's max_retries. */
int ddb_client_max_retries(const ddb_client *c) {
  return c->max_retries;
}

/* See http_int.h: a handle from c's pool, or a new one. */
CURL *ddb_handle_get(ddb_client *c) {
  CURL *h = NULL;
  pthread_mutex_lock(&c->lock);
  if(c->n_pool > 0)
    h = c->pool[--c->n_pool];
  pthread_mutex_unlock(&c->lock);
  return h ? h : curl_easy_init();
}

/* See http_int.h: give h back to c's pool, or clean it up when full. */
void ddb_handle_put(ddb_client *c, CURL *h) {
  pthread_mutex_lock(&c->lock);
  if(c->n_pool < DDB_POOL_MAX) {
    c->pool[c->n_pool++] = h;
    h = NULL;
  }
  pthread_mutex_unlock(&c->lock);
  if(h)
    curl_easy_cleanup(h);
}
