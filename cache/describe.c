/*
** describe.c -- one job: the table cache, DescribeTable answers kept by
** (place, principal, table) for DDBC_DESCRIBE_TTL seconds (see cache.c's
** "Keys and tags", kind D), and dropped by dynamodb_cache_clear('t').
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ddb_cache.h"
#include "cache_int.h"

/* Seconds a DescribeTable answer is reused. */
#define DDBC_DESCRIBE_TTL 60.0

/* ------------------------------------------------------------------------
** DescribeTable
*/
typedef struct desc_entry {
  struct desc_entry *next;
  char *key; /* D place principal table */
  size_t key_len;
  ddb_table_desc *desc;
  double expires;
} desc_entry;

static pthread_mutex_t desc_lock = PTHREAD_MUTEX_INITIALIZER;
static desc_entry *descs;

/* Free every DescribeTable answer kept. */
static void descs_free(void) {
  desc_entry *e, *next;
  pthread_mutex_lock(&desc_lock);
  for(e = descs; e; e = next) {
    next = e->next;
    free(e->key);
    ddb_table_desc_free(e->desc);
    free(e);
  }
  descs = NULL;
  pthread_mutex_unlock(&desc_lock);
}

/* When the library is unloaded without having been pinned (ddbc_pin),
** free the answers kept: a later load starts afresh.  A pinned library
** is only finalized at exit: then nothing is freed. */
__attribute__((destructor)) static void describe_unload(void) {
  if(ddbc_pinned())
    return;
  descs_free();
}

/* fork(): on live.c's list (rank DDB_LIVE_CACHE, as cache.c's node): the
** list's lock taken before the fork and released after it, in the parent
** and in the child alike, so the child's list is whole and its lock free.
** A leaf: no code holds it while it takes another lock. */
static void describe_fork_lock(void *obj) {
  (void)obj;
  pthread_mutex_lock(&desc_lock);
}

/* After fork(), in the parent and the child: desc_lock released. */
static void describe_fork_unlock(void *obj) {
  (void)obj;
  pthread_mutex_unlock(&desc_lock);
}

static const ddb_live_ops describe_live_ops = {
    DDB_LIVE_CACHE, describe_fork_lock, describe_fork_unlock, NULL};
static ddb_live describe_live;

/* At load: on the fork list (glibc forgets the handlers at unload). */
__attribute__((constructor)) static void describe_load(void) {
  ddb_live_add(&describe_live, &describe_live_ops, NULL);
}

/* DescribeTable of table (a name or an ARN) from DynamoDB: a table asked
** for by its ARN keeps the ARN as its name (client/arn.c), so that its
** calls and this cache's keys name the ARN. */
static ddb_result describe_call(ddb_client *c, const char *table,
                                ddb_table_desc **out, ddb_error *err) {
  ddb_result result = ddb_describe_table(c, table, out, err);
  if(result == DDB_OK && ddb_desc_name_asked(*out, table)) {
    ddb_table_desc_free(*out);
    *out = NULL;
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
  }
  return result;
}

/* DescribeTable through the cache: the kept answer unless fresh, which
** drops it and asks DynamoDB.  The contract of ddbc_describe_table. */
static ddb_result describe(ddb_client *c, const char *table, int fresh,
                           ddb_table_desc **out, ddb_error *err) {
  desc_entry *e, **pp;
  double now = ddbc_now();
  ddb_result result;
  ddb_buf k;

  *out = NULL;
  ddb_buf_init(&k, DDBC_KEY_MAX);
  ddbc_key_head(&k, 'D', c, table);
  if(k.failed) {
    ddb_buf_free(&k);
    return describe_call(c, table, out, err);
  }
  pthread_mutex_lock(&desc_lock);
  for(pp = &descs; (e = *pp) != NULL;) {
    int mine = e->key_len == k.len && memcmp(e->key, k.p, k.len) == 0;
    if(e->expires <= now || (mine && fresh)) {
      *pp = e->next;
      free(e->key);
      ddb_table_desc_free(e->desc);
      free(e);
      continue;
    }
    if(mine) {
      *out = ddb_table_desc_dup(e->desc);
      break;
    }
    pp = &e->next;
  }
  pthread_mutex_unlock(&desc_lock);
  if(*out) {
    ddb_buf_free(&k);
    return DDB_OK;
  }
  result = describe_call(c, table, out, err);
  if(result) {
    ddb_buf_free(&k);
    return result;
  }
  e = calloc(1, sizeof(*e));
  if(e) {
    e->key = ddb_buf_take(&k, &e->key_len);
    e->desc = ddb_table_desc_dup(*out);
    e->expires = now + DDBC_DESCRIBE_TTL;
    if(!e->key || !e->desc) {
      free(e->key);
      ddb_table_desc_free(e->desc);
      free(e);
      ddb_buf_free(&k);
      return DDB_OK; /* not cached; the answer is still good */
    }
    pthread_mutex_lock(&desc_lock);
    e->next = descs;
    descs = e;
    pthread_mutex_unlock(&desc_lock);
  }
  ddb_buf_free(&k);
  return DDB_OK;
}

void ddbc_describe_forget(const char *place, size_t place_len,
                          size_t principal_len, const ddb_buf *part) {
  desc_entry *e, **pp;
  ddb_buf dk;
  ddb_buf_init(&dk, DDBC_KEY_MAX);
  ddb_buf_addc(&dk, 'D');
  ddb_buf_add(&dk, place, place_len);
  pthread_mutex_lock(&desc_lock);
  for(pp = &descs; (e = *pp) != NULL;) {
    if(!dk.failed && !part->failed &&
       e->key_len == dk.len + principal_len + part->len &&
       memcmp(e->key, dk.p, dk.len) == 0 &&
       memcmp(e->key + dk.len + principal_len, part->p, part->len) == 0) {
      *pp = e->next;
      free(e->key);
      ddb_table_desc_free(e->desc);
      free(e);
      continue;
    }
    pp = &e->next;
  }
  pthread_mutex_unlock(&desc_lock);
  ddb_buf_free(&dk);
}

ddb_result ddbc_describe_table(ddb_client *c, const char *table,
                               ddb_table_desc **out, ddb_error *err) {
  return describe(c, table, 0, out, err);
}

ddb_result ddbc_describe_table_fresh(ddb_client *c, const char *table,
                                     ddb_table_desc **out, ddb_error *err) {
  return describe(c, table, 1, out, err);
}
