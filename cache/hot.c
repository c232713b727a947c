/*
** hot.c -- the partition keys this process sent DynamoDB the most
** requests for (dynamodb_hot): a hot partition is throttled however much
** capacity the table has, so a key design is checked by where requests go.
**
** The counter is Space-Saving (Metwally, Agrawal and El Abbadi, "Efficient
** computation of frequent and top-k elements in data streams", 2005): at
** most DDBC_HOT_COUNTERS keys are counted; a request for a key that is
** not counted takes over the counter with the fewest requests, and starts
** from that count (kept as the key's error).  So memory is fixed however
** many keys a process reads, and, after N requests in all:
**
**   - a key's requests are never fewer than its true count, and at most
**     its error (at most N / DDBC_HOT_COUNTERS) more;
**   - every key with more than N / DDBC_HOT_COUNTERS requests is counted.
**
** items, rcu, wcu and throttled are what the requests since the key took
** its counter brought (a key that lost its counter starts them again).
** The counters sit in a min-heap by requests (the one to take over is the
** root) and a hash by key: a request costs O(log DDBC_HOT_COUNTERS).
**
** key_range counts the throttling answers whose reasons (DynamoDB's
** ThrottlingReasons: client/throttle.c) named the key's table or index
** as a hot key range (*KeyRangeThroughputExceeded): the server's own
** word that the key is hot, for a call that named that one key (a
** GetItem, a Query, a write of one item; a write's index reason marks
** the item's value of that index's partition attribute).
**
** A key is (table, index, partition-key value): a GetItem, a
** BatchGetItem's key, a Query of the table or an index, a write.  A Scan
** names no partition and is not counted.  Tables of the same name at two
** endpoints or regions share their counters.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "ddb_cache.h"
#include "cache_int.h"

typedef struct hot_node {
  UT_hash_handle hh;
  int heap; /* its place in hot_heap */
  ddbc_hot_row r;
  char *key; /* table NUL index NUL type pk (canonical): the hash key,
                key_len bytes; then pk as first written (r's strings
                point into it) */
  size_t key_len;
  size_t key_cap; /* bytes malloc()ed at key: a key that takes the
                     counter over reuses them when it fits */
} hot_node;

static pthread_mutex_t hot_lock = PTHREAD_MUTEX_INITIALIZER;
static hot_node *hot_map;
static hot_node *hot_heap[DDBC_HOT_COUNTERS];
static int hot_n;

/* fork(): on live.c's list (rank DDB_LIVE_HOT): the child finds hot_lock
** free, and the counters whole. */
static void hot_fork_lock(void *obj) {
  (void)obj;
  pthread_mutex_lock(&hot_lock);
}

/* After fork(), in the parent and the child: hot_lock released. */
static void hot_fork_unlock(void *obj) {
  (void)obj;
  pthread_mutex_unlock(&hot_lock);
}

static const ddb_live_ops hot_live_ops = {DDB_LIVE_HOT, hot_fork_lock,
                                          hot_fork_unlock, NULL};
static ddb_live hot_live;

__attribute__((constructor)) static void hot_load(void) {
  ddb_live_add(&hot_live, &hot_live_ops, NULL);
}

/* Move heap entry i down until no child has fewer requests (hot_lock
** held). */
static void do_sift_down(int i) {
  for(;;) {
    int l = 2 * i + 1, m = i;
    hot_node *t;
    if(l < hot_n && hot_heap[l]->r.requests < hot_heap[m]->r.requests)
      m = l;
    if(l + 1 < hot_n && hot_heap[l + 1]->r.requests < hot_heap[m]->r.requests)
      m = l + 1;
    if(m == i)
      return;
    t = hot_heap[i];
    hot_heap[i] = hot_heap[m];
    hot_heap[m] = t;
    hot_heap[i]->heap = i;
    hot_heap[m]->heap = m;
    i = m;
  }
}

/* Move heap entry i up while its parent has more requests (hot_lock
** held). */
static void do_sift_up(int i) {
  hot_node *n = hot_heap[i];
  while(i > 0) {
    int up = (i - 1) / 2;
    if(hot_heap[up]->r.requests <= n->r.requests)
      break;
    hot_heap[i] = hot_heap[up];
    hot_heap[i]->heap = i;
    i = up;
  }
  hot_heap[i] = n;
  n->heap = i;
}

/* Point n's row strings into n->key (table, index, then after the hash
** key the value as first written, pk_len bytes). */
static void node_fields(hot_node *n, size_t pk_len) {
  size_t t = strlen(n->key);
  n->r.table = n->key;
  n->r.index = n->key[t + 1] ? n->key + t + 1 : NULL;
  n->r.pk_type = n->key[t + 1 + strlen(n->key + t + 1) + 1];
  n->r.pk = n->key + n->key_len;
  n->r.pk_len = pk_len;
}

/* A counter for key k[0..len) (table NUL index NUL type and the value in
** canonical form), shown as the value pk[0..pk_len) as written: a free
** one, or the one with the fewest requests, which the key takes over with
** that count as its error; hashed (hv: k's hash value), in its place in
** the heap, nothing else counted yet (hot_lock held).  NULL when out of
** memory. */
static hot_node *do_take_counter(const char *k, size_t len, unsigned hv,
                                 const char *pk, size_t pk_len) {
  size_t need = len + pk_len + 1;
  hot_node *n = hot_n < DDBC_HOT_COUNTERS ? NULL : hot_heap[0];
  char *nk = NULL;
  uint64_t base = 0;
  /* the key's room: the counter's own when it is taken over and fits */
  if((!n || n->key_cap < need) && !(nk = malloc(need)))
    return NULL;
  if(!n) {
    n = calloc(1, sizeof(*n));
    if(!n) {
      free(nk);
      return NULL;
    }
    n->heap = hot_n;
    hot_heap[hot_n++] = n;
  } else {
    HASH_DELETE(hh, hot_map, n);
    base = n->r.requests;
  }
  if(nk) {
    free(n->key);
    n->key = nk;
    n->key_cap = need;
  }
  memcpy(n->key, k, len);
  memcpy(n->key + len, pk, pk_len);
  n->key[len + pk_len] = 0;
  memset(&n->r, 0, sizeof(n->r));
  n->r.requests = n->r.error = base;
  n->key_len = len;
  node_fields(n, pk_len);
  HASH_ADD_KEYPTR_BYHASHVALUE(hh, hot_map, n->key, n->key_len, hv, n);
  do_sift_up(n->heap);
  return n;
}

/* Count what the arguments say for (table, index, pk): ddbc_hot_note's
** work, and key_range answers that named its key range. */
static void hot_add(const char *table, const char *index, const ddb_av *pk,
                    uint64_t requests, uint64_t items, double rcu, double wcu,
                    uint64_t throttled, uint64_t key_range) {
  char stack[512], num[192];
  const char *v;
  size_t tl, il, vl, len;
  unsigned hv;
  hot_node *n = NULL;
  char *k = stack;
  ddb_buf nb;
  if(!table || !pk ||
     !(pk->type == DDB_S || pk->type == DDB_N || pk->type == DDB_B))
    return;
  /* one spelling of each number: 1 and 1.0 are one key */
  ddb_buf_init_with(&nb, num, sizeof(num), 4096);
  v = pk->text;
  vl = pk->n;
  if(pk->type == DDB_N && ddb_number_canonical(pk->text, pk->n, &nb) == 0 &&
     !nb.failed && nb.p) {
    v = nb.p;
    vl = nb.len;
  }
  tl = strlen(table);
  il = index ? strlen(index) : 0;
  len = tl + 1 + il + 1 + 1 + vl;
  if(len > sizeof(stack) && !(k = malloc(len))) {
    ddb_buf_free(&nb);
    return;
  }
  memcpy(k, table, tl + 1);
  memcpy(k + tl + 1, index ? index : "", il + 1);
  k[tl + il + 2] = ddb_type_name(pk->type)[0];
  memcpy(k + tl + il + 3, v, vl);
  HASH_VALUE(k, len, hv); /* once, for the find and the add */
  pthread_mutex_lock(&hot_lock);
  HASH_FIND_BYHASHVALUE(hh, hot_map, k, len, hv, n);
  if(!n)
    n = do_take_counter(k, len, hv, pk->text, pk->n);
  if(n) {
    n->r.requests += requests;
    n->r.items += items;
    n->r.rcu += rcu;
    n->r.wcu += wcu;
    n->r.throttled += throttled;
    n->r.key_range += key_range;
    do_sift_down(n->heap);
  }
  pthread_mutex_unlock(&hot_lock);
  if(k != stack)
    free(k);
  ddb_buf_free(&nb);
}

/* See cache_int.h. */
void ddbc_hot_note(const char *table, const char *index, const ddb_av *pk,
                   uint64_t requests, uint64_t items, double rcu, double wcu,
                   uint64_t throttled) {
  hot_add(table, index, pk, requests, items, rcu, wcu, throttled, 0);
}

/* See cache_int.h.  The tally's reasons name the table by its bare name
** (from the resource ARN); table may be a name or an ARN. */
void ddbc_hot_mark(const char *table, const char *index, const ddb_av *pk,
                   const ddb_tally *t) {
  if(!table || !t->key_range ||
     strcmp(ddb_arn_table_name(table), t->key_range_table) != 0 ||
     strcmp(index ? index : "", t->key_range_index) != 0)
    return;
  hot_add(table, index, pk, 0, 0, 0, 0, 0, t->key_range);
}

/* qsort order of rows: most requests first, then by table, index, key. */
static int row_cmp(const void *pa, const void *pb) {
  const ddbc_hot_row *a = pa, *b = pb;
  size_t n;
  int c;
  if(a->requests != b->requests)
    return a->requests > b->requests ? -1 : 1;
  if((c = strcmp(a->table, b->table)) != 0)
    return c;
  if((c = strcmp(a->index ? a->index : "", b->index ? b->index : "")) != 0)
    return c;
  n = a->pk_len < b->pk_len ? a->pk_len : b->pk_len;
  if((c = memcmp(a->pk, b->pk, n)) != 0)
    return c;
  return a->pk_len < b->pk_len ? -1 : a->pk_len > b->pk_len;
}

/* See ddb_cache.h. */
int ddbc_hot_top(int max, ddbc_hot_row **out) {
  ddbc_hot_row *a;
  int i, n;
  *out = NULL;
  pthread_mutex_lock(&hot_lock);
  a = calloc((size_t)(hot_n ? hot_n : 1), sizeof(*a));
  if(!a) {
    pthread_mutex_unlock(&hot_lock);
    return -1;
  }
  for(i = n = 0; i < hot_n; i++) {
    const hot_node *h = hot_heap[i];
    size_t len = h->key_len + h->r.pk_len;
    char *k = malloc(len + 1);
    if(!k)
      continue;
    memcpy(k, h->key, len);
    k[len] = 0;
    a[n] = h->r;
    /* the copy's strings point into its own key */
    a[n].table = k;
    a[n].index = h->r.index ? k + (h->r.index - h->key) : NULL;
    a[n].pk = k + (h->r.pk - h->key);
    n++;
  }
  pthread_mutex_unlock(&hot_lock);
  qsort(a, (size_t)n, sizeof(*a), row_cmp);
  for(i = max; i < n; i++)
    free((char *)a[i].table);
  *out = a;
  return n < max ? n : max;
}

/* See ddb_cache.h. */
void ddbc_hot_free(ddbc_hot_row *rows, int n) {
  int i;
  for(i = 0; rows && i < n; i++)
    free((char *)rows[i].table);
  free(rows);
}

/* Mark the key of item, written to table d, that t's reasons named: the
** table's partition key, or the partition key of the index named (the
** item's value of that index's partition attribute, if it has one). */
static void hot_mark_write(const ddb_table_desc *d, const ddb_item *item,
                           const ddb_tally *t) {
  int i;
  if(!t->key_range || !item)
    return;
  if(!t->key_range_index[0]) {
    ddbc_hot_mark(d->name, NULL, ddb_item_get(item, d->indexes[0].pk.name), t);
    return;
  }
  for(i = 1; i < d->n_indexes; i++)
    if(d->indexes[i].name &&
       strcmp(d->indexes[i].name, t->key_range_index) == 0)
      ddbc_hot_mark(d->name, d->indexes[i].name,
                    ddb_item_get(item, d->indexes[i].pk.name), t);
}

/* See cache_int.h. */
void ddbc_hot_writes(const ddb_table_desc *d, const ddb_item *one,
                     const ddb_write *w, size_t n, const ddb_tally *t) {
  size_t i;
  if(!t->requests)
    return;
  if(one) {
    ddbc_hot_note(d->name, NULL, ddb_item_get(one, d->indexes[0].pk.name), 1,
                  1, 0, t->wcu, t->throttles);
    hot_mark_write(d, one, t);
    return;
  }
  if(n == 1)
    hot_mark_write(w[0].d ? w[0].d : d, w[0].item, t);
  for(i = 0; i < n; i++) {
    /* a call across tables: each write's own (ddb_write.d) */
    const ddb_table_desc *dw = w[i].d ? w[i].d : d;
    ddbc_hot_note(dw->name, NULL,
                  ddb_item_get(w[i].item, dw->indexes[0].pk.name), 1, 1, 0,
                  t->wcu / (double)n, t->throttles);
  }
}
