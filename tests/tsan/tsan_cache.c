/*
** tsan_cache.c -- the cache engine (cache/store.c) under ThreadSanitizer:
** 8 threads share one store with a small byte budget and mix gets, fills,
** writes (one at a time, and two with a bump in one note, as a call of
** several writes notes them), bumps, page gets and page fills, budget
** changes and stats, as connections on different threads of one process
** would.
**
** A simulated database gives the reads something to race with: each item
** key has a version (db_item[k]: version << 1 | present) written only by
** the thread that owns the key (k % NTHREADS), and each partition a
** version (db_part[p]) that any thread may advance.  Reads follow cache.c's
** protocol (capture the generation, read the database, fill), writes its
** (change the database, then write_item or bump).  Besides TSan's own
** checks, every thread asserts the cache's promise to the process:
**
**   - after its own write of key k, a get of k that hits returns exactly
**     what it wrote (a racing fill never overwrites a write's result);
**   - after its own advance of partition p to version v, a page of p that
**     hits holds a version >= v (a page read before the write is stale).
**
** After joining: the store's invariants (ddbc_store_check), bytes within
** the budget, hits + misses equal the gets made, and every item and page
** is freed once the store is released (counted).  All of it twice: on a
** store holding references to the items (ddbc_store_create), and on a
** packed store (ddbc_store_create_packed, as cache.c makes it) whose
** codec here packs a version and unpacks a new counted item per hit.
**
** Prints TAP lines ("ok N - ...", no plan: the suite script adds its own
** line and the plan); exits 1 if any is "not ok".  Built by
** mk/tsan.mk with -fsanitize=thread, run by tests/suites/10-tsan-cache.sh,
** which also fails on any ThreadSanitizer report.
**
**   build/tsan-cache [ITERATIONS-PER-THREAD]     (default 200000)
*/
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cache/store.h"

#define NTHREADS 8
#define NKEYS    64 /* item keys I00..I63 */
#define NPARTS   4  /* partitions P0..P3; page keys Q<p>.<n> */
#define NPAGES   32 /* page keys per run: Q<p>.<n> with p = n % NPARTS */
#define BUDGET   (48 * 1024)

static ddbc_store *store;
static uint64_t db_item[NKEYS]; /* version << 1 | present (atomics) */
static uint64_t db_part[NPARTS];
static uint64_t live_objects; /* items and pages not yet freed (atomic) */

/* A versioned item: the version lives just past the ddb_item. */
typedef struct vitem {
  ddb_item it;
  uint64_t version;
} vitem;

/* A new item (one reference) of `version`, padded to a size from pad. */
static ddb_item *new_item(uint64_t version, unsigned pad) {
  size_t bytes = sizeof(vitem) + (pad % 4) * 700;
  vitem *v = calloc(1, bytes);
  if(!v)
    abort();
  v->it.refs = 1;
  v->it.bytes = bytes;
  v->it.root.type = DDB_M;
  v->version = version;
  __atomic_add_fetch(&live_objects, 1, __ATOMIC_RELAXED);
  return &v->it;
}

/* A new page (one reference) holding `version` in its count. */
static ddb_page *new_page(uint64_t version, unsigned pad) {
  ddb_page *p = calloc(1, sizeof(*p));
  if(!p)
    abort();
  p->refs = 1;
  p->bytes = sizeof(*p) + (pad % 8) * 900;
  p->count = (long long)version;
  __atomic_add_fetch(&live_objects, 1, __ATOMIC_RELAXED);
  return p;
}

/* Drop a reference; counts the object freed when it was the last.  (The
** client's unref frees; this mirrors it to count frees.) */
static void put_item(ddb_item *it) {
  if(it && __atomic_sub_fetch(&it->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    free(it);
    __atomic_sub_fetch(&live_objects, 1, __ATOMIC_RELAXED);
  }
}
static void put_page(ddb_page *p) {
  if(p && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    free(p);
    __atomic_sub_fetch(&live_objects, 1, __ATOMIC_RELAXED);
  }
}

/* The packed store's codec (cache.c uses client/pack.c's): a vitem packs
** to its version and its padding, and unpacks to a new vitem (counted). */
static size_t test_packed_size(const ddb_item *it) {
  return sizeof(uint64_t) + (it->bytes - sizeof(vitem));
}
static void test_pack(const ddb_item *it, unsigned char *out) {
  memcpy(out, &((const vitem *)it)->version, sizeof(uint64_t));
  memset(out + sizeof(uint64_t), 0, it->bytes - sizeof(vitem));
}
static ddb_item *test_unpack(const unsigned char *p, size_t n) {
  size_t bytes = sizeof(vitem) + (n - sizeof(uint64_t));
  vitem *v = calloc(1, bytes);
  if(!v)
    abort();
  v->it.refs = 1;
  v->it.bytes = bytes;
  v->it.root.type = DDB_M;
  memcpy(&v->version, p, sizeof(uint64_t));
  __atomic_add_fetch(&live_objects, 1, __ATOMIC_RELAXED);
  return &v->it;
}

/* The codec's JSON of a packed vitem: its version (malloc()ed). */
static char *test_to_json(const unsigned char *p, size_t n, size_t *len) {
  uint64_t v;
  char *z = malloc(32);
  (void)n;
  if(!z)
    abort();
  memcpy(&v, p, sizeof(v));
  *len = (size_t)snprintf(z, 32, "{\"v\":%llu}", (unsigned long long)v);
  return z;
}

/*
** The store releases its references with ddb_item_unref/ddb_page_unref
** (client/pack.c).  This binary defines them itself, counting frees; it
** is linked without pack.c.
*/
ddb_item *ddb_item_ref(ddb_item *it) {
  if(it)
    __atomic_add_fetch(&it->refs, 1, __ATOMIC_RELAXED);
  return it;
}
void ddb_item_unref(ddb_item *it) {
  put_item(it);
}
ddb_page *ddb_page_ref(ddb_page *p) {
  if(p)
    __atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
  return p;
}
void ddb_page_unref(ddb_page *p) {
  put_page(p);
}

typedef struct worker {
  pthread_t tid;
  int id;
  uint64_t rng;
  uint64_t item_gets, page_gets, ops;
  ddbc_item_view view; /* op_view's buffers (free()) */
  uint64_t item_hits_checked, page_hits_checked;
  uint64_t violations;
  char first_violation[160];
  uint64_t wrote[NKEYS];     /* own keys: db_item value last written */
  uint64_t advanced[NPARTS]; /* partition versions this thread set */
} worker;

static int iterations = 200000;

/* xorshift64*: the worker's own random numbers. */
static uint64_t rnd(worker *w) {
  w->rng ^= w->rng >> 12;
  w->rng ^= w->rng << 25;
  w->rng ^= w->rng >> 27;
  return w->rng * 2685821657736338717ULL;
}

/* Record a broken promise (the first one's text is kept). */
static void violation(worker *w, const char *what, int k, uint64_t got,
                      uint64_t want) {
  if(w->violations++ == 0)
    snprintf(w->first_violation, sizeof(w->first_violation),
             "thread %d: %s %d: got %llu, want %llu", w->id, what, k,
             (unsigned long long)got, (unsigned long long)want);
}

/* Key text for item k / page n / partition tag p / table tag. */
static size_t item_key(char *buf, size_t cap, int k) {
  return (size_t)snprintf(buf, cap, "I%02d", k);
}
static size_t page_key(char *buf, size_t cap, int n) {
  return (size_t)snprintf(buf, cap, "Q%d.%d", n % NPARTS, n);
}
static size_t part_tag(char *buf, size_t cap, int p) {
  return (size_t)snprintf(buf, cap, "P%d", p);
}

/* Get item k; on a hit of an own key, check it is what this thread last
** wrote. */
static void op_get(worker *w, int k, double now) {
  char key[16];
  size_t n = item_key(key, sizeof(key), k);
  ddb_item *out = NULL;
  w->item_gets++;
  if(ddbc_store_get_item(store, key, n, now, 1e9, &out)) {
    if(k % NTHREADS == w->id && w->wrote[k]) {
      uint64_t got = out ? (((vitem *)out)->version << 1 | 1) : 0;
      uint64_t want = w->wrote[k] & 1 ? w->wrote[k] : 0;
      w->item_hits_checked++;
      if(got != want)
        violation(w, "own write hidden on item", k, got, want);
    }
    put_item(out);
  }
}

/* A warm lookup of item k (ddbc_store_peek_item_view: the entry copied
** out, with its JSON rendered into the entry and copied when pad's bit 1
** is set);
** on a hit of an own key, the packed version is what this thread last
** wrote.  A hit counts as a get (a miss is not counted by the store). */
static void op_view(worker *w, int k, double now, unsigned pad) {
  char key[16];
  size_t n = item_key(key, sizeof(key), k);
  if(!ddbc_store_peek_item_view(store, key, n, now, 1e9,
                                (pad >> 1) % 2 ? DDBC_VIEW_JSON : 0, &w->view,
                                NULL))
    return;
  w->item_gets++;
  if(k % NTHREADS == w->id && w->wrote[k]) {
    uint64_t ver = 0, got, want = w->wrote[k] & 1 ? w->wrote[k] : 0;
    if(w->view.found && w->view.packed_len >= sizeof(ver))
      memcpy(&ver, w->view.packed, sizeof(ver));
    got = w->view.found ? (ver << 1 | 1) : 0;
    if(w->view.found && (pad >> 1) % 2) { /* the JSON kept: same version's */
      char z[32];
      snprintf(z, sizeof(z), "{\"v\":%llu}", (unsigned long long)ver);
      if(!w->view.json || strcmp(w->view.json, z) != 0)
        violation(w, "JSON of another version on a view of item", k, ver, 0);
    }
    w->item_hits_checked++;
    if(got != want)
      violation(w, "own write hidden on a view of item", k, got, want);
  }
}

/* A read of item k from the database, filled into the cache. */
static void op_fill(worker *w, int k, double now, unsigned pad) {
  (void)w;
  char key[16];
  size_t n = item_key(key, sizeof(key), k);
  uint64_t gen = ddbc_store_gen(store, key, n);
  uint64_t v = __atomic_load_n(&db_item[k], __ATOMIC_ACQUIRE);
  ddb_item *it = v & 1 ? new_item(v >> 1, pad) : NULL;
  if(pad % 2)
    sched_yield(); /* the request's latency: a write may complete now */
  ddbc_store_fill_item(store, key, n, it, gen, now, 0.05 + (pad % 5) * 0.02);
  put_item(it);
}

/* A put or delete of an own key: database first, then write-through. */
static void op_write(worker *w, int k, double now, unsigned pad) {
  char key[16];
  size_t n = item_key(key, sizeof(key), k);
  uint64_t v = __atomic_load_n(&db_item[k], __ATOMIC_RELAXED);
  uint64_t ver = (v >> 1) + 1;
  int present = pad % 5 != 0;
  ddb_item *it = present ? new_item(ver, pad) : NULL;
  v = ver << 1 | (uint64_t)present;
  __atomic_store_n(&db_item[k], v, __ATOMIC_RELEASE);
  ddbc_store_write_item(store, key, n, it, now, 0.2);
  put_item(it);
  w->wrote[k] = v;
  if(pad % 4 == 0) {
    sched_yield(); /* let racing fills land, then read back */
    op_get(w, k, now);
  }
}

/* One call of several writes (ddbc_store_note_writes, as a
** TransactWriteItems or BatchWriteItem notes its writes): two own keys
** put or deleted and a partition advanced, database first, then one
** note for all of them; each key read back. */
static void op_write_batch(worker *w, int k0, int p, double now,
                           unsigned pad) {
  char key[2][16], tag[16];
  ddbc_tag keys[2], tags[1];
  ddb_item *items[2];
  int i, k[2];
  k[0] = k0;
  k[1] = (k0 + NTHREADS) % NKEYS; /* also this thread's */
  for(i = 0; i < 2; i++) {
    uint64_t v = __atomic_load_n(&db_item[k[i]], __ATOMIC_RELAXED);
    uint64_t ver = (v >> 1) + 1;
    int present = (pad >> i) % 5 != 0;
    items[i] = present ? new_item(ver, pad) : NULL;
    v = ver << 1 | (uint64_t)present;
    __atomic_store_n(&db_item[k[i]], v, __ATOMIC_RELEASE);
    keys[i].p = key[i];
    keys[i].len = item_key(key[i], sizeof(key[i]), k[i]);
    w->wrote[k[i]] = v;
  }
  tags[0].p = tag;
  tags[0].len = part_tag(tag, sizeof(tag), p);
  w->advanced[p] = __atomic_add_fetch(&db_part[p], 1, __ATOMIC_ACQ_REL);
  ddbc_store_note_writes(store, tags, 1, keys, items, 2, now, 0.2);
  for(i = 0; i < 2; i++)
    put_item(items[i]);
  if(pad % 4 == 0) {
    sched_yield();
    op_get(w, k[0], now);
    op_get(w, k[1], now);
  }
}

static void op_get_page(worker *w, int pn, double now);

/* A write to partition p: advance its version, then bump its tag (and
** sometimes the table's). */
static void op_bump(worker *w, int p, double now, unsigned pad) {
  char tag[16];
  size_t n = part_tag(tag, sizeof(tag), p);
  uint64_t v = __atomic_add_fetch(&db_part[p], 1, __ATOMIC_ACQ_REL);
  (void)now;
  ddbc_store_bump(store, tag, n);
  if(pad % 16 == 0)
    ddbc_store_bump(store, "T", 1);
  w->advanced[p] = v;
  if(pad % 4 == 0) {
    sched_yield();
    op_get_page(w, p + NPARTS * (int)(pad % (NPAGES / NPARTS)), now);
  }
}

/* Get page n; a hit must not predate this thread's last advance of its
** partition. */
static void op_get_page(worker *w, int pn, double now) {
  char key[16];
  size_t n = page_key(key, sizeof(key), pn);
  ddb_page *out = NULL;
  w->page_gets++;
  if(ddbc_store_get_page(store, key, n, now, 1e9, &out)) {
    int p = pn % NPARTS;
    w->page_hits_checked++;
    if((uint64_t)out->count < w->advanced[p])
      violation(w, "page older than own write in partition", p,
                (uint64_t)out->count, w->advanced[p]);
    put_page(out);
  }
}

/* A Query of page n's partition, filled into the cache. */
static void op_fill_page(worker *w, int pn, double now, unsigned pad) {
  char key[16], tag[16];
  size_t n = page_key(key, sizeof(key), pn);
  int p = pn % NPARTS;
  ddbc_tag tags[2];
  uint64_t gens[2], v;
  ddb_page *pg;
  (void)w;
  tags[0].p = tag;
  tags[0].len = part_tag(tag, sizeof(tag), p);
  tags[1].p = "T";
  tags[1].len = 1;
  gens[0] = ddbc_store_gen(store, tags[0].p, tags[0].len);
  gens[1] = ddbc_store_gen(store, "T", 1);
  v = __atomic_load_n(&db_part[p], __ATOMIC_ACQUIRE);
  pg = new_page(v, pad);
  if(pad % 2)
    sched_yield();
  ddbc_store_fill_page(store, key, n, tags, gens, pg, now,
                       0.05 + (pad % 3) * 0.05);
  put_page(pg);
}

/* Read the stats: bytes must be within the budget at every moment. */
static void op_stats(worker *w) {
  ddbc_store_stats st;
  ddbc_store_stats_get(store, &st);
  if(st.bytes > st.bytes_max)
    violation(w, "bytes over budget", 0, st.bytes, st.bytes_max);
}

/* Check the store's invariants while the others run. */
static void op_check(worker *w) {
  const char *why = ddbc_store_check(store);
  if(why)
    violation(w, why, 0, 0, 0);
}

/* The worker: a random mix of operations on the shared store; `now` is a
** per-thread clock that advances 1 ms a step (entries live 50-250 ms). */
static void *run(void *arg) {
  worker *w = arg;
  int i;
  for(i = 0; i < iterations; i++) {
    uint64_t r = rnd(w);
    unsigned pad = (unsigned)(r >> 40);
    double now = i * 0.001;
    int k = (int)((r >> 8) % NKEYS);
    int own = (int)(((r >> 8) % (NKEYS / NTHREADS)) * NTHREADS) + w->id;
    int pn = (int)((r >> 20) % NPAGES);
    w->ops++;
    unsigned op = (unsigned)(r % 100);
    if(op < 30)
      op_get(w, k, now);
    else if(op < 45)
      op_fill(w, k, now, pad);
    else if(op < 55)
      op_write(w, own, now, pad);
    else if(op < 58)
      op_get(w, own, now);
    else if(op < 60)
      op_view(w, pad % 2 ? own : k, now, pad);
    else if(op < 61)
      op_bump(w, pn % NPARTS, now, pad);
    else if(op < 62)
      op_write_batch(w, own, pn % NPARTS, now, pad);
    else if(op < 80)
      op_get_page(w, pn, now);
    else if(op < 95)
      op_fill_page(w, pn, now, pad);
    else if(op < 97)
      op_stats(w);
    else if(op == 97 && pad % 64 == 0)
      ddbc_store_set_budget(store, BUDGET / 2 + pad % BUDGET);
    else if(op == 98 && pad % 256 == 0)
      ddbc_store_empty(store);
    else if(op == 99 && pad % 32 == 0)
      op_check(w);
  }
  return NULL;
}

static int test_no;
static int failures;

/* Print one TAP line. */
static const char *mode = ""; /* the store under test, for the TAP names */

static void tap(int ok, const char *name, const char *detail) {
  printf("%sok %d - tsan-cache: %s: %s\n", ok ? "" : "not ", ++test_no, mode,
         name);
  if(!ok) {
    failures++;
    if(detail && *detail)
      printf("#   %s\n", detail);
  }
}

/* Run the threads on a new store (packed or holding references) and
** print the TAP lines about it. */
static void run_store(int packed) {
  static const ddbc_item_codec codec = {test_packed_size, test_pack,
                                        test_unpack, test_to_json};
  static worker ws[NTHREADS];
  ddbc_store_stats st;
  uint64_t gets = 0, pgets = 0, viol = 0, checked = 0, pchecked = 0;
  const char *first = "";
  const char *why;
  char detail[200];
  int i;

  mode = packed ? "packed" : "references";
  memset(ws, 0, sizeof(ws));
  store = packed ? ddbc_store_create_packed(BUDGET, &codec)
                 : ddbc_store_create(BUDGET);
  if(!store)
    exit(2);
  for(i = 0; i < NTHREADS; i++) {
    ws[i].id = i;
    ws[i].rng = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1);
    if(pthread_create(&ws[i].tid, NULL, run, &ws[i])) {
      perror("pthread_create");
      exit(2);
    }
  }
  for(i = 0; i < NTHREADS; i++)
    pthread_join(ws[i].tid, NULL);
  for(i = 0; i < NTHREADS; i++) {
    gets += ws[i].item_gets;
    free(ws[i].view.packed);
    free(ws[i].view.json);
    memset(&ws[i].view, 0, sizeof(ws[i].view));
    pgets += ws[i].page_gets;
    checked += ws[i].item_hits_checked;
    pchecked += ws[i].page_hits_checked;
    if(ws[i].violations && !viol)
      first = ws[i].first_violation;
    viol += ws[i].violations;
  }

  printf("# %s: %d threads x %d operations, budget %d bytes\n", mode, NTHREADS,
         iterations, BUDGET);
  snprintf(detail, sizeof(detail), "%llu violations; first: %s",
           (unsigned long long)viol, first);
  tap(viol == 0, "own writes never hidden, stats within budget while running",
      detail);
  snprintf(detail, sizeof(detail),
           "own-key hits checked %llu, own-partition page hits %llu",
           (unsigned long long)checked, (unsigned long long)pchecked);
  printf("# %s\n", detail);
  tap(checked > 100 && pchecked > 100, "the checks above saw enough hits",
      detail);
  why = ddbc_store_check(store);
  tap(why == NULL, "store invariants after join", why);
  ddbc_store_stats_get(store, &st);
  snprintf(detail, sizeof(detail), "bytes %llu, bytes_max %llu",
           (unsigned long long)st.bytes, (unsigned long long)st.bytes_max);
  tap(st.bytes <= st.bytes_max, "bytes <= bytes_max after join", detail);
  printf("# item hits %llu misses %llu, query hits %llu misses %llu, "
         "evictions %llu, expirations %llu, stale %llu, entries %llu\n",
         (unsigned long long)st.item_hits, (unsigned long long)st.item_misses,
         (unsigned long long)st.query_hits,
         (unsigned long long)st.query_misses, (unsigned long long)st.evictions,
         (unsigned long long)st.expirations, (unsigned long long)st.stale,
         (unsigned long long)st.entries);
  snprintf(detail, sizeof(detail),
           "item gets %llu vs hits+misses %llu; page gets %llu vs %llu",
           (unsigned long long)gets,
           (unsigned long long)(st.item_hits + st.item_misses),
           (unsigned long long)pgets,
           (unsigned long long)(st.query_hits + st.query_misses));
  tap(gets == st.item_hits + st.item_misses &&
          pgets == st.query_hits + st.query_misses && st.evictions > 0 &&
          st.expirations > 0 && st.stale > 0,
      "every get counted once as a hit or a miss; evictions, expirations, "
      "stale all happened",
      detail);
  ddbc_store_release(store);
  snprintf(
      detail, sizeof(detail), "%llu items or pages still allocated",
      (unsigned long long)__atomic_load_n(&live_objects, __ATOMIC_RELAXED));
  tap(__atomic_load_n(&live_objects, __ATOMIC_RELAXED) == 0,
      "release frees every item and page", detail);
}

int main(int argc, char **argv) {
  if(argc > 1) {
    char *end;
    long n = strtol(argv[1], &end, 10);
    if(*end || n <= 0 || n > 100000000) {
      fprintf(stderr, "usage: %s [ITERATIONS-PER-THREAD]\n", argv[0]);
      return 2;
    }
    iterations = (int)n;
  }
  run_store(0); /* what the unit tests use */
  run_store(1); /* what cache.c uses */
  return failures ? 1 : 0;
}
