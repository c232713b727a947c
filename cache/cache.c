/*
** cache.c -- the process-wide cache in front of DynamoDB, in the manner of
** DynamoDB Accelerator (DAX):
**
**   item cache   GetItem / BatchGetItem results by (endpoint, table, key),
**                "no such item" included;
**   query cache  Query / Scan pages by (endpoint, exact request);
**   table cache  DescribeTable answers, for DDBC_DESCRIBE_TTL seconds.
**
** One store (store.c) holds both item and query entries under one byte
** budget, shared by every connection and thread of the process.
**
** Consistency.  A consistent read bypasses the cache, as in DAX.  A write
** made through this process (ddbc_note_write) replaces the item's entry
** with the written item and makes stale every page that could contain it:
** pages carry the generation of the partition they read (table or index,
** partition key value) or of the table's scans, and of the whole table; a
** write moves the generations of the partitions of the item's old and new
** images in every index, of the table's scans, and of the whole table when
** the old image is unknown.  Unlike DAX, a Query right after a write
** through this process sees the write.  Writes made by other processes are
** seen when the entries' TTL runs out.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddb_cache.h"
#include "store.h"

/* The default byte budget of the process-wide cache. */
#define DDBC_DEFAULT_BUDGET (64u * 1024 * 1024)
/* Seconds a DescribeTable answer is reused. */
#define DDBC_DESCRIBE_TTL 60.0
/* Longest cache key built (a request body is at most a few KB unless an
** ExclusiveStartKey is huge; larger requests are simply not cached). */
#define DDBC_KEY_MAX (256u * 1024)

static ddbc_store *store;
static pthread_once_t store_once = PTHREAD_ONCE_INIT;

static void store_init(void) {
  __atomic_store_n(&store, ddbc_store_create(DDBC_DEFAULT_BUDGET),
                   __ATOMIC_RELEASE);
}

static void descs_free(void);

/* When the library is unloaded (the sqlite3 shell unloads the extension
** with the last connection that loaded it), free the process-wide store
** and the DescribeTable answers: a later load starts afresh, and nothing
** is left behind unreachable. */
__attribute__((destructor)) static void cache_unload(void) {
  ddbc_store_release(store);
  store = NULL;
  descs_free();
}

/* fork(): the handlers take the DescribeTable list's lock, then the
** store's, before the fork and release them after it, in the parent and
** in the child alike.  So no other thread is inside the cache while the
** process is copied: the child's cache is whole (its entries, as the
** parent had them, stay good until their TTL, like any other process's
** view), and its locks are free, not held by a thread the child does not
** have.  glibc forgets the handlers when the library is unloaded. */
static pthread_mutex_t desc_lock;
static ddbc_store *fork_store; /* the store locked by cache_fork_prepare */
static void cache_fork_prepare(void) {
  pthread_mutex_lock(&desc_lock);
  fork_store = __atomic_load_n(&store, __ATOMIC_ACQUIRE);
  if(fork_store)
    ddbc_store_lock(fork_store);
}

static void cache_fork_after(void) {
  if(fork_store)
    ddbc_store_unlock(fork_store);
  fork_store = NULL;
  pthread_mutex_unlock(&desc_lock);
}

__attribute__((constructor)) static void cache_load(void) {
  pthread_atfork(cache_fork_prepare, cache_fork_after, cache_fork_after);
}

/* The process-wide store, created on first use (NULL only on OOM). */
static ddbc_store *the_store(void) {
  pthread_once(&store_once, store_init);
  return store;
}

/* Every lookup reads the clock, so the coarse one where there is one: it
** ticks every few milliseconds (plenty for TTLs in seconds) and costs 5 ns
** where CLOCK_MONOTONIC costs 35 (bench/README.md). */
double ddbc_now(void) {
  struct timespec ts;
#ifdef CLOCK_MONOTONIC_COARSE
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
#else
  clock_gettime(CLOCK_MONOTONIC, &ts);
#endif
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

size_t ddbc_set_budget(size_t bytes) {
  ddbc_store *s = the_store();
  return s ? ddbc_store_set_budget(s, bytes) : 0;
}

void ddbc_clear(void) {
  ddbc_store *s = the_store();
  if(s)
    ddbc_store_empty(s);
}

void ddbc_stats_get(ddbc_stats *out) {
  ddbc_store *s = the_store();
  ddbc_store_stats st;
  memset(out, 0, sizeof(*out));
  if(!s)
    return;
  ddbc_store_stats_get(s, &st);
  out->item_hits = st.item_hits;
  out->item_misses = st.item_misses;
  out->query_hits = st.query_hits;
  out->query_misses = st.query_misses;
  out->evictions = st.evictions;
  out->expirations = st.expirations;
  out->stale = st.stale;
  out->entries = st.entries;
  out->bytes = st.bytes;
  out->bytes_max = st.bytes_max;
}

/* ------------------------------------------------------------------------
** Keys and tags.  Fields are separated by \x1f; every key starts with a
** letter naming its kind, so kinds never collide:
**   I endpoint table key        an item (and its generation tag)
**   Q endpoint request-body     a page
**   P endpoint table index pk   tag: one partition of the table or an index
**   S endpoint table            tag: the table's scans
**   T endpoint table            tag: the whole table
*/
static void key_head(ddb_buf *b, char kind, ddb_client *c, const char *table) {
  ddb_buf_addc(b, kind);
  ddb_buf_addc(b, '\x1f');
  ddb_buf_adds(b, ddb_client_endpoint(c));
  ddb_buf_addc(b, '\x1f');
  ddb_buf_adds(b, table);
}

/* The item key of `key` (an item holding at least the key attributes). */
static int item_key(ddb_buf *b, ddb_client *c, const char *table,
                    const ddb_item *key, const char *const *names, int n) {
  key_head(b, 'I', c, table);
  ddb_buf_addc(b, '\x1f');
  if(ddb_key_encode(key, names, n, b))
    return -1;
  return b->failed ? -1 : 0;
}

/* Partition tag of (table, index, partition value av). */
static void partition_tag(ddb_buf *b, ddb_client *c, const char *table,
                          const char *index, const ddb_av *pk) {
  key_head(b, 'P', c, table);
  ddb_buf_addc(b, '\x1f');
  ddb_buf_adds(b, index ? index : "");
  ddb_buf_addc(b, '\x1f');
  ddb_buf_adds(b, ddb_type_name(pk->type));
  ddb_buf_addc(b, '\x1f');
  if(pk->type == DDB_N)
    ddb_number_canonical(pk->text, pk->n, b);
  else
    ddb_buf_add(b, pk->text, pk->n);
}

/* ------------------------------------------------------------------------
** DescribeTable
*/
typedef struct desc_entry {
  struct desc_entry *next;
  char *endpoint, *table;
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
    free(e->endpoint);
    free(e->table);
    ddb_table_desc_free(e->desc);
    free(e);
  }
  descs = NULL;
  pthread_mutex_unlock(&desc_lock);
}

ddb_result ddbc_describe_table(ddb_client *c, const char *table,
                               ddb_table_desc **out, ddb_error *err) {
  desc_entry *e, **pp;
  const char *ep = ddb_client_endpoint(c);
  double now = ddbc_now();
  ddb_result result;

  *out = NULL;
  pthread_mutex_lock(&desc_lock);
  for(pp = &descs; (e = *pp) != NULL;) {
    if(e->expires <= now) {
      *pp = e->next;
      free(e->endpoint);
      free(e->table);
      ddb_table_desc_free(e->desc);
      free(e);
      continue;
    }
    if(strcmp(e->endpoint, ep) == 0 && strcmp(e->table, table) == 0) {
      *out = ddb_table_desc_dup(e->desc);
      break;
    }
    pp = &e->next;
  }
  pthread_mutex_unlock(&desc_lock);
  if(*out)
    return DDB_OK;
  result = ddb_describe_table(c, table, out, err);
  if(result)
    return result;
  e = calloc(1, sizeof(*e));
  if(e) {
    e->endpoint = strdup(ep);
    e->table = strdup(table);
    e->desc = ddb_table_desc_dup(*out);
    e->expires = now + DDBC_DESCRIBE_TTL;
    if(!e->endpoint || !e->table || !e->desc) {
      free(e->endpoint);
      free(e->table);
      ddb_table_desc_free(e->desc);
      free(e);
      return DDB_OK; /* not cached; the answer is still good */
    }
    pthread_mutex_lock(&desc_lock);
    e->next = descs;
    descs = e;
    pthread_mutex_unlock(&desc_lock);
  }
  return DDB_OK;
}

/* ------------------------------------------------------------------------
** Reads
*/
ddb_result ddbc_read_page(ddb_client *c, const ddb_read *r,
                          const ddbc_policy *pol, ddb_page **out,
                          ddb_error *err) {
  ddbc_store *s = the_store();
  ddb_read rd = *r;
  ddb_buf key, tag1, tag2;
  ddbc_tag tags[2];
  uint64_t gens[2];
  ddb_result result;

  *out = NULL;
  rd.consistent = pol->consistent;
  if(pol->consistent || pol->query_ttl <= 0 || !s)
    return ddb_read_page(c, &rd, out, err);

  ddb_buf_init(&key, DDBC_KEY_MAX);
  ddb_buf_init(&tag1, DDBC_KEY_MAX);
  ddb_buf_init(&tag2, DDBC_KEY_MAX);
  key_head(&key, 'Q', c, "");
  ddb_buf_addc(&key, '\x1f');
  result = ddb_read_body(&rd, &key, err);
  if(result || key.failed) {
    ddb_buf_free(&key);
    return result ? result : ddb_read_page(c, &rd, out, err);
  }
  if(rd.pk_name)
    partition_tag(&tag1, c, rd.table, rd.index, &rd.pk);
  else
    key_head(&tag1, 'S', c, rd.table);
  key_head(&tag2, 'T', c, rd.table);
  tags[0].p = tag1.p;
  tags[0].len = tag1.len;
  tags[1].p = tag2.p;
  tags[1].len = tag2.len;

  if(!tag1.failed && !tag2.failed &&
     ddbc_store_get_page(s, key.p, key.len, ddbc_now(), pol->query_ttl, out)) {
    result = DDB_OK;
    goto done;
  }
  gens[0] = ddbc_store_gen(s, tags[0].p, tags[0].len);
  gens[1] = ddbc_store_gen(s, tags[1].p, tags[1].len);
  result = ddb_read_page(c, &rd, out, err);
  if(result == DDB_OK && !tag1.failed && !tag2.failed)
    ddbc_store_fill_page(s, key.p, key.len, tags, gens, *out, ddbc_now(),
                         pol->query_ttl);
done:
  ddb_buf_free(&key);
  ddb_buf_free(&tag1);
  ddb_buf_free(&tag2);
  return result;
}

int ddbc_item_cached(ddb_client *c, const char *table, const ddb_av *key,
                     int n_key, const ddbc_policy *pol, ddb_item **out) {
  ddbc_store *s = the_store();
  char stack[256]; /* most keys fit: no malloc */
  ddb_buf k;
  int hit = 0;
  *out = NULL;
  if(pol->consistent || pol->item_ttl <= 0 || !s)
    return 0;
  ddb_buf_init_with(&k, stack, sizeof(stack), DDBC_KEY_MAX);
  key_head(&k, 'I', c, table);
  ddb_buf_addc(&k, '\x1f');
  if(ddb_key_encode_avs(key, n_key, &k) == 0 && !k.failed)
    hit = ddbc_store_peek_item(s, k.p, k.len, ddbc_now(), pol->item_ttl, out);
  ddb_buf_free(&k);
  return hit;
}

ddb_result ddbc_get_item(ddb_client *c, const char *table, const ddb_item *key,
                         const char *const *key_names, int n_key_names,
                         const ddbc_policy *pol, ddb_item **out,
                         ddb_error *err) {
  ddbc_store *s = the_store();
  ddb_buf k;
  char stack[256]; /* most keys fit: no malloc on a hit */
  uint64_t gen;
  ddb_result result;

  *out = NULL;
  if(pol->consistent || pol->item_ttl <= 0 || !s)
    return ddb_get_item(c, table, key, pol->consistent, out, err);
  ddb_buf_init_with(&k, stack, sizeof(stack), DDBC_KEY_MAX);
  if(item_key(&k, c, table, key, key_names, n_key_names)) {
    ddb_buf_free(&k);
    return ddb_get_item(c, table, key, 0, out, err);
  }
  if(ddbc_store_get_item(s, k.p, k.len, ddbc_now(), pol->item_ttl, out)) {
    ddb_buf_free(&k);
    return DDB_OK;
  }
  gen = ddbc_store_gen(s, k.p, k.len);
  result = ddb_get_item(c, table, key, 0, out, err);
  if(result == DDB_OK)
    ddbc_store_fill_item(s, k.p, k.len, *out, gen, ddbc_now(), pol->item_ttl);
  ddb_buf_free(&k);
  return result;
}

ddb_result ddbc_batch_get(ddb_client *c, const char *table,
                          const ddb_item *const *keys, size_t n,
                          const char *const *key_names, int n_key_names,
                          const ddbc_policy *pol, ddb_item **found,
                          ddb_error *err) {
  ddbc_store *s = the_store();
  const ddb_item **miss = NULL;
  ddb_item **got = NULL;
  size_t *where = NULL;
  uint64_t *gens = NULL;
  char **ckeys = NULL;
  size_t *clens = NULL;
  size_t i, m = 0;
  ddb_result result = DDB_OK;
  double now = ddbc_now();

  if(pol->consistent || pol->item_ttl <= 0 || !s)
    return ddb_batch_get(c, table, keys, n, key_names, n_key_names,
                         pol->consistent, found, err);
  miss = calloc(n ? n : 1, sizeof(*miss));
  got = calloc(n ? n : 1, sizeof(*got));
  where = calloc(n ? n : 1, sizeof(*where));
  gens = calloc(n ? n : 1, sizeof(*gens));
  ckeys = calloc(n ? n : 1, sizeof(*ckeys));
  clens = calloc(n ? n : 1, sizeof(*clens));
  if(!miss || !got || !where || !gens || !ckeys || !clens) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  for(i = 0; i < n; i++) {
    ddb_buf k;
    found[i] = NULL;
    ddb_buf_init(&k, DDBC_KEY_MAX);
    if(item_key(&k, c, table, keys[i], key_names, n_key_names) == 0 &&
       ddbc_store_get_item(s, k.p, k.len, now, pol->item_ttl, &found[i])) {
      ddb_buf_free(&k);
      continue;
    }
    where[m] = i;
    miss[m] = keys[i];
    if(!k.failed) {
      gens[m] = ddbc_store_gen(s, k.p, k.len);
      ckeys[m] = ddb_buf_take(&k, &clens[m]);
    }
    ddb_buf_free(&k);
    m++;
  }
  if(m > 0) {
    result =
        ddb_batch_get(c, table, miss, m, key_names, n_key_names, 0, got, err);
    if(result)
      goto fail;
    now = ddbc_now();
    for(i = 0; i < m; i++) {
      if(ckeys[i])
        ddbc_store_fill_item(s, ckeys[i], clens[i], got[i], gens[i], now,
                             pol->item_ttl);
      found[where[i]] = got[i];
      got[i] = NULL;
    }
  }

fail:
  if(result)
    for(i = 0; i < n; i++) {
      ddb_item_unref(found[i]);
      found[i] = NULL;
    }
  for(i = 0; i < m; i++)
    free(ckeys ? ckeys[i] : NULL);
  free(miss);
  free(got);
  free(where);
  free(gens);
  free(ckeys);
  free(clens);
  return result;
}

/* ------------------------------------------------------------------------
** Writes
*/
void ddbc_note_write(ddb_client *c, const ddb_table_desc *d,
                     const ddb_item *old_item, int old_known,
                     const ddb_item *new_item, const ddb_item *key,
                     const ddbc_policy *pol) {
  ddbc_store *s = the_store();
  const char *names[2];
  int n_names, i, img;
  ddb_buf b;
  if(!s)
    return;
  ddb_buf_init(&b, DDBC_KEY_MAX);
  names[0] = d->indexes[0].pk.name;
  names[1] = d->indexes[0].sk.name;
  n_names = names[1] ? 2 : 1;
  /* the partitions the old and the new image live in, in every index */
  for(img = 0; img < 2; img++) {
    const ddb_item *it = img ? new_item : old_item;
    if(!it)
      continue;
    for(i = 0; i < d->n_indexes; i++) {
      const ddb_av *pk = ddb_item_get(it, d->indexes[i].pk.name);
      if(!pk)
        continue; /* not in this (sparse) index */
      ddb_buf_reset(&b);
      partition_tag(&b, c, d->name, d->indexes[i].name, pk);
      if(!b.failed)
        ddbc_store_bump(s, b.p, b.len);
    }
  }
  ddb_buf_reset(&b);
  key_head(&b, 'S', c, d->name);
  ddbc_store_bump(s, b.p, b.len);
  if(!old_known) {
    ddb_buf_reset(&b);
    key_head(&b, 'T', c, d->name);
    ddbc_store_bump(s, b.p, b.len);
  }
  /* the item itself: write through */
  ddb_buf_reset(&b);
  if(item_key(&b, c, d->name, key, names, n_names) == 0)
    ddbc_store_write_item(s, b.p, b.len, (ddb_item *)new_item, ddbc_now(),
                          pol->item_ttl);
  ddb_buf_free(&b);
}
