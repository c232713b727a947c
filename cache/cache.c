/*
** cache.c -- the process-wide cache in front of DynamoDB, in the manner of
** DynamoDB Accelerator (DAX):
**
**   item cache   GetItem / BatchGetItem results by (endpoint, region,
**                credentials, table, key), "no such item" included;
**   query cache  Query / Scan pages by (endpoint, region, credentials,
**                exact request);
**   table cache  DescribeTable answers by (endpoint, region, credentials,
**                table), for DDBC_DESCRIBE_TTL seconds.
**
** What one set of credentials read is never an answer for another (see
** "Keys and tags" below).
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
**
** This file's one job is the store and what names its entries: the
** store's lifetime (pinned, fork()), the keys and tags, the principals
** seen, the counters.  The rest, one job a file (declarations in
** cache_int.h): describe.c the table cache, read.c the item and query
** reads, invalidate.c what a write makes stale, alias.c the table ARNs,
** shared.c the shared tier on Redis.
*/
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddb_cache.h"
#include "cache_int.h"
#include "shared.h"
#include "store.h"

/* The default byte budget of the process-wide cache. */
#define DDBC_DEFAULT_BUDGET (64u * 1024 * 1024)

static ddbc_store *store;
static pthread_once_t store_once = PTHREAD_ONCE_INIT;

/* See store.h. */
char *ddbc_packed_json(const unsigned char *p, size_t n, size_t *len) {
  ddb_item *it = ddb_item_unpack(p, n);
  char *json;
  ddb_buf b;
  if(!it)
    return NULL;
  ddb_buf_init(&b, DDB_JSON_MAX);
  ddb_buf_reserve(&b, it->bytes); /* (the JSON is about this size) */
  ddb_item_to_json(it, &b);
  ddb_item_unref(it);
  json = ddb_buf_take(&b, len);
  return json;
}

/* Make the process's store (once, by store_once): its budget the default,
** its items packed by pack.c.  On failure store stays NULL: no cache. */
static void store_init(void) {
  /* items packed inside their entries: see store.c */
  static const ddbc_item_codec codec = {ddb_item_packed_size, ddb_item_pack,
                                        ddb_item_unpack, ddbc_packed_json};
  __atomic_store_n(&store,
                   ddbc_store_create_packed(DDBC_DEFAULT_BUDGET, &codec),
                   __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------------------
** Lifetime.  The cache lives as long as the process: ddbc_pin marks the
** shared object holding this code RTLD_NODELETE (dladdr finds its path,
** dlopen with RTLD_NOLOAD takes a reference without loading anything),
** so SQLite's dlclose() at the last connection does not unload it, and a
** later load (same file: the loader finds it by device and inode) reuses
** the cache, the counters and the request log.
*/
static pthread_once_t pin_once = PTHREAD_ONCE_INIT;
static int pinned; /* 1 once the library cannot be unloaded */

/* Pin the object that holds ddbc_pin (see above); its handle is kept. */
static void pin_library(void) {
  Dl_info info;
  void *h;
  if(!dladdr((void *)ddbc_pin, &info) || !info.dli_fname || !info.dli_fname[0])
    return;
  h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  if(h)
    pinned = 1; /* the reference is never dropped */
}

void ddbc_pin(void) {
  pthread_once(&pin_once, pin_library);
}

int ddbc_pinned(void) {
  return pinned;
}

/* When the library is unloaded without having been pinned, free the
** process-wide store (describe.c frees the DescribeTable answers): a
** later load starts afresh, and nothing is left behind unreachable.  A pinned library is
** only finalized at exit, when other threads may still read the cache:
** then nothing is freed. */
__attribute__((destructor)) static void cache_unload(void) {
  if(pinned)
    return;
  ddbc_store_release(store);
  store = NULL;
}

/* fork(): on live.c's list (rank DDB_LIVE_CACHE), whose handlers take the
** principals' lock, then the store's (describe.c's node, of the same
** rank, takes the DescribeTable list's), before the fork and release them after it, in the parent and in the
** child alike.  So no other thread is inside the cache while the process
** is copied: the child's cache is whole (its entries, as the parent had
** them, stay good until their TTL, like any other process's view), and
** its locks are free, not held by a thread the child does not have. */
static pthread_mutex_t seen_lock; /* the principals seen (taken before the
                                     store's, never after it) */
static ddbc_store *fork_store;    /* the store locked by cache_fork_lock */
static void cache_fork_lock(void *obj) {
  (void)obj;
  pthread_mutex_lock(&seen_lock);
  fork_store = __atomic_load_n(&store, __ATOMIC_ACQUIRE);
  if(fork_store)
    ddbc_store_lock(fork_store);
}

/* After fork(), in the parent and the child: the locks of
** cache_fork_lock released, the store's first. */
static void cache_fork_unlock(void *obj) {
  (void)obj;
  if(fork_store)
    ddbc_store_unlock(fork_store);
  fork_store = NULL;
  pthread_mutex_unlock(&seen_lock);
}

static const ddb_live_ops cache_live_ops = {DDB_LIVE_CACHE, cache_fork_lock,
                                            cache_fork_unlock, NULL};
static ddb_live cache_live;

/* At load: on the fork list (glibc forgets the handlers at unload; the
** list is this copy's). */
__attribute__((constructor)) static void cache_load(void) {
  ddb_live_add(&cache_live, &cache_live_ops, NULL);
}

/* The process-wide store, created on first use (NULL only on OOM). */
ddbc_store *ddbc_cache_store(void) {
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
  ddbc_store *s = ddbc_cache_store();
  return s ? ddbc_store_set_budget(s, bytes) : 0;
}

static void seen_forget(ddbc_store *s);

void ddbc_clear(void) {
  ddbc_store *s = ddbc_cache_store();
  if(s)
    seen_forget(s);
}

void ddbc_stats_get(ddbc_stats *out) {
  ddbc_store *s = ddbc_cache_store();
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
  ddbc_shared_stats_get(out);
  ddbc_lease_stats(out);
}

/* ------------------------------------------------------------------------
** Keys and tags.  Every key and tag starts with a letter naming its kind,
** so kinds never collide, then the client's place (the id of its
** canonical endpoint and region, ddb_client_scope: 16 bytes), then for
** keys its principal (the id of its access key id, secret and token: 16
** bytes); every further field is a length-prefixed part
** (ddb_buf_add_part), so no byte of a name or value can be taken for a
** boundary:
**   I place principal table key   an item (and its generation tag)
**   Q place principal request     a page (the request body, to the end)
**   D place principal table       a DescribeTable answer (desc_entry)
**   P place table index type pk   tag: one partition of the table or an
**                                 index
**   S place table                 tag: the table's scans
**   T place table                 tag: the whole table
** Entries (I, Q, D) are per principal: what one set of credentials read is
** never an answer for another.  Tags have no principal: a write through
** any credentials makes stale the pages every principal read of that
** table at that place (on real AWS, two principals of one account read
** one table; on DynamoDB Local, which keeps a database per access key,
** this only costs a miss).  Item entries of the other principals are
** dropped by ddbc_note_write (see principals below).
*/

/* Append kind, c's place and, unless no_principal, c's principal to b. */
void ddbc_scope_head(ddb_buf *b, char kind, ddb_client *c, int no_principal) {
  const char *place, *principal;
  size_t place_len, principal_len;
  ddb_client_scope(c, &place, &place_len, &principal, &principal_len);
  ddb_buf_addc(b, kind);
  ddb_buf_add(b, place, place_len);
  if(!no_principal)
    ddb_buf_add(b, principal, principal_len);
}

/* The head of an entry's key: kind, place, principal, table. */
void ddbc_key_head(ddb_buf *b, char kind, ddb_client *c, const char *table) {
  ddbc_scope_head(b, kind, c, 0);
  ddb_buf_add_part(b, table, strlen(table));
}

/* The head of a tag: kind, place, table (no principal).  A table given by
** its ARN is tagged by its name: a write through either form makes stale
** the pages read through both (a table of the same name in another
** account, at the same place, only costs a miss). */
void ddbc_tag_head(ddb_buf *b, char kind, ddb_client *c, const char *table) {
  table = ddb_arn_table_name(table);
  ddbc_scope_head(b, kind, c, 1);
  ddb_buf_add_part(b, table, strlen(table));
}

/* The item key of `key` (an item holding at least the key attributes). */
int ddbc_item_key(ddb_buf *b, ddb_client *c, const char *table,
                  const ddb_item *key, const char *const *names, int n) {
  ddbc_key_head(b, 'I', c, table);
  if(ddb_key_encode(key, names, n, b))
    return -1;
  return b->failed ? -1 : 0;
}

/* Partition tag of (table, index, partition value av). */
void ddbc_partition_tag(ddb_buf *b, ddb_client *c, const char *table,
                        const char *index, const ddb_av *pk) {
  char num[192];
  ddb_buf nb;
  ddbc_tag_head(b, 'P', c, table);
  ddb_buf_add_part(b, index ? index : "", index ? strlen(index) : 0);
  ddb_buf_addc(b, ddb_type_name(pk->type)[0]);
  if(pk->type != DDB_N) {
    ddb_buf_add_part(b, pk->text, pk->n);
    return;
  }
  ddb_buf_init_with(&nb, num, sizeof(num), 4096);
  if(ddb_number_canonical(pk->text, pk->n, &nb) == 0 && !nb.failed)
    ddb_buf_add_part(b, nb.p ? nb.p : "", nb.len);
  else
    ddb_buf_add_part(b, pk->text, pk->n);
  ddb_buf_free(&nb);
}

/* The part of entry key k (built by ddbc_key_head or ddbc_scope_head for c) that
** the shared tier names: what follows the kind, place and principal. */
const char *ddbc_shared_tail(ddb_client *c, const ddb_buf *k, size_t *len) {
  const char *place, *principal;
  size_t place_len, principal_len, head;
  ddb_client_scope(c, &place, &place_len, &principal, &principal_len);
  head = 1 + place_len + principal_len;
  *len = k->len - head;
  return k->p + head;
}

/* ------------------------------------------------------------------------
** Principals.  Item entries are per principal, so a write through one set
** of credentials must also drop the entries of the item that the other
** principals of the same place hold (and refuse their fills in flight):
** the cache remembers every (place, principal) that read an item, before
** its request is sent, and ddbc_note_write walks them.  Past
** DDBC_MAX_PRINCIPALS (temporary credentials bring a new access key id
** at every refresh) the cache forgets everything at once: every entry and
** every generation (ddbc_store_forget), which is always safe.
*/
#define DDBC_MAX_PRINCIPALS 256

typedef struct seen_scope {
  size_t place_len, len; /* the place, then the principal: len in all */
  char *p;
} seen_scope;

static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static seen_scope seen[DDBC_MAX_PRINCIPALS];
static int n_seen;

/* Forget every principal seen (seen_lock held). */
static void do_seen_clear(void) {
  int i;
  for(i = 0; i < n_seen; i++)
    free(seen[i].p);
  n_seen = 0;
}

/* Remember c's place and principal (seen_lock held; s: the store, which
** forgets everything when the table is full).  The generations of an
** item read must be captured under the same hold of seen_lock: then
** either the principal was remembered before a reset (whose forget moves
** every generation, so the fill is refused) or after it (so every write
** finds it), and a write through other credentials always stops its fill
** (see ddbc_principal_seen_gens). */
static void do_principal_seen(ddbc_store *s, ddb_client *c) {
  const char *place, *principal;
  size_t place_len, principal_len;
  int i;
  ddb_client_scope(c, &place, &place_len, &principal, &principal_len);
  for(i = 0; i < n_seen; i++)
    if(seen[i].place_len == place_len &&
       seen[i].len == place_len + principal_len &&
       memcmp(seen[i].p, place, place_len) == 0 &&
       memcmp(seen[i].p + place_len, principal, principal_len) == 0)
      break;
  if(i == n_seen) {
    char *p = malloc(place_len + principal_len);
    if(p && n_seen == DDBC_MAX_PRINCIPALS) {
      do_seen_clear();
      ddbc_store_forget(s);
    }
    if(p) {
      memcpy(p, place, place_len);
      memcpy(p + place_len, principal, principal_len);
      seen[n_seen].p = p;
      seen[n_seen].place_len = place_len;
      seen[n_seen].len = place_len + principal_len;
      n_seen++;
    } else {
      ddbc_store_forget(s); /* cannot remember it: forget everything */
    }
  }
}

/* Forget every principal seen, every entry and every generation (reads
** in flight do not fill). */
static void seen_forget(ddbc_store *s) {
  pthread_mutex_lock(&seen_lock);
  do_seen_clear();
  ddbc_store_forget(s);
  pthread_mutex_unlock(&seen_lock);
}

/* Before an item read through c is sent: remember c's principal and
** capture the generations of the n item keys keys[i][0..lens[i]) (NULL
** keys are skipped) into gens, atomically with respect to the writes of
** other principals (ddbc_drop_other_principals). */
void ddbc_principal_seen_gens(ddbc_store *s, ddb_client *c, const char *table,
                              char *const *keys, const size_t *lens, size_t n,
                              uint64_t *gens) {
  size_t i;
  pthread_mutex_lock(&seen_lock);
  do_principal_seen(s, c);
  do_alias_note(s, table); /* an ARN: its writes by name drop it (alias.c) */
  for(i = 0; i < n; i++)
    if(keys[i])
      gens[i] = ddbc_store_gen(s, keys[i], lens[i]);
  pthread_mutex_unlock(&seen_lock);
}

/* A write through c of the item `key` of table completed: remember c,
** and drop the item's entry of every other principal seen at c's place,
** and of every principal under the table's other forms (its name, the
** ARNs read through: alias.c), bumping their generations, so that their
** reads in flight do not fill. */
void ddbc_drop_other_principals(ddbc_store *s, ddb_client *c,
                                const char *table, const ddb_item *key,
                                const char *const *names, int n) {
  const char *place, *principal;
  size_t place_len, principal_len;
  ddb_buf b;
  int i;
  const char *forms[1 + DDBC_ALIAS_MAX];
  int j, n_forms;
  ddb_client_scope(c, &place, &place_len, &principal, &principal_len);
  ddb_buf_init(&b, DDBC_KEY_MAX);
  pthread_mutex_lock(&seen_lock);
  do_principal_seen(s, c); /* the writer's entry is written through */
  forms[0] = table;
  n_forms = 1 + do_alias_others(table, forms + 1, DDBC_ALIAS_MAX);
  for(j = 0; j < n_forms; j++)
    for(i = 0; i < n_seen; i++) {
      if(seen[i].place_len != place_len ||
         memcmp(seen[i].p, place, place_len) != 0)
        continue;
      if(j == 0 && seen[i].len == place_len + principal_len &&
         memcmp(seen[i].p + place_len, principal, principal_len) == 0)
        continue; /* the writer's own: written through by the caller */
      ddb_buf_reset(&b);
      ddb_buf_addc(&b, 'I');
      ddb_buf_add(&b, seen[i].p, seen[i].len);
      ddb_buf_add_part(&b, forms[j], strlen(forms[j]));
      if(ddb_key_encode(key, names, n, &b) == 0 && !b.failed)
        ddbc_store_write_item(s, b.p, b.len, NULL, ddbc_now(), 0);
    }
  pthread_mutex_unlock(&seen_lock);
  ddb_buf_free(&b);
}
