/*
** test_cache.c -- unit tests of the cache engine (cache/store.c): LRU order
** and segments, TTL with an injected clock, byte accounting against the
** budget, the size cap, negative entries, generations and their table, and
** freeing.  Every store is private to its test; time is the `now` argument,
** never a sleep.  No network.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__) /* set by the headers above */
#include <malloc.h>
#endif

#include "../../cache/ddb_cache.h"
#include "../../cache/cache_int.h"
#include "../../cache/store.h"
#include "tap.h"

/* ------------------------------------------------------------------------
** Helpers
*/

/* max_age for readers that take entries of any age (within their TTL). */
#define ANY_AGE 1e9

/* A new item (one reference) whose allocation is exactly `bytes` long, so
** that the charge of its entry is known.  bytes >= sizeof(ddb_item). */
static ddb_item *mkitem(size_t bytes) {
  ddb_item *it = malloc(bytes);
  if(!it)
    abort();
  memset(it, 0, bytes);
  it->refs = 1;
  it->bytes = bytes;
  it->root.type = DDB_M;
  return it;
}

/* A new empty page (one reference) claiming `bytes` allocated bytes. */
static ddb_page *mkpage(size_t bytes) {
  ddb_page *p = calloc(1, sizeof(*p));
  if(!p)
    abort();
  p->refs = 1;
  p->bytes = bytes;
  return p;
}

/* The reference count of an item or a page (read without the store's
** lock: the tests are single-threaded). */
static int refs_of_item(const ddb_item *it) {
  return __atomic_load_n(&it->refs, __ATOMIC_RELAXED);
}
static int refs_of_page(const ddb_page *p) {
  return __atomic_load_n(&p->refs, __ATOMIC_RELAXED);
}

/* Fill item key (a C string) at time now, with the key's current
** generation (no write in between). */
static void fill(ddbc_store *s, const char *key, ddb_item *it, double now,
                 double ttl) {
  uint64_t g = ddbc_store_gen(s, key, strlen(key));
  ddbc_store_fill_item(s, key, strlen(key), it, g, now, ttl);
}

/* Is key cached (as an item) at time now?  A hit promotes the entry, like
** any get. */
static int has(ddbc_store *s, const char *key, double now) {
  ddb_item *out = NULL;
  int hit = ddbc_store_get_item(s, key, strlen(key), now, ANY_AGE, &out);
  ddb_item_unref(out);
  return hit;
}

/* Is the page under key cached at time now? */
static int has_page(ddbc_store *s, const char *key, double now) {
  ddb_page *out = NULL;
  int hit = ddbc_store_get_page(s, key, strlen(key), now, ANY_AGE, &out);
  ddb_page_unref(out);
  return hit;
}

/* The tags of a page. */
static void tags2(ddbc_tag t[2], const char *a, const char *b) {
  t[0].p = a;
  t[0].len = strlen(a);
  t[1].p = b;
  t[1].len = strlen(b);
}

/* Fill page key under tags (a, b) with their current generations. */
static void fill_page(ddbc_store *s, const char *key, const char *a,
                      const char *b, ddb_page *pg, double now, double ttl) {
  ddbc_tag t[2];
  uint64_t g[2];
  tags2(t, a, b);
  g[0] = ddbc_store_gen(s, a, strlen(a));
  g[1] = ddbc_store_gen(s, b, strlen(b));
  ddbc_store_fill_page(s, key, strlen(key), t, g, pg, now, ttl);
}

static ddbc_store_stats stats(ddbc_store *s) {
  ddbc_store_stats st;
  ddbc_store_stats_get(s, &st);
  return st;
}

/* The charge of an item entry with a key of key_len bytes and a value of
** value_bytes (0: a negative entry), measured on a scratch store. */
static size_t charge_of(size_t key_len, size_t value_bytes) {
  ddbc_store *s = ddbc_store_create(1u << 30);
  char key[256];
  ddb_item *it = value_bytes ? mkitem(value_bytes) : NULL;
  size_t bytes;
  memset(key, 'k', key_len);
  key[key_len] = 0;
  fill(s, key, it, 0, 10);
  bytes = (size_t)stats(s).bytes;
  ddb_item_unref(it);
  ddbc_store_release(s);
  return bytes;
}

typedef struct order_buf {
  char text[4096];
  size_t len;
} order_buf;

/* ddbc_store_order callback: append "key," to the order_buf ctx. */
static void order_cb(const char *key, size_t key_len, size_t charge,
                     void *ctx) {
  order_buf *o = ctx;
  (void)charge;
  if(o->len + key_len + 2 > sizeof(o->text))
    return;
  memcpy(o->text + o->len, key, key_len);
  o->len += key_len;
  o->text[o->len++] = ',';
  o->text[o->len] = 0;
}

/* The keys of segment seg, head (most recent) first, comma-separated (in a
** static buffer, valid until the next call). */
static const char *order(ddbc_store *s, int seg) {
  static order_buf o;
  o.len = 0;
  o.text[0] = 0;
  ddbc_store_order(s, seg, order_cb, &o);
  if(o.len)
    o.text[--o.len] = 0;
  return o.text;
}

#define PROBATION 0
#define PROTECTED 1
#define CHECK_INVARIANTS(s)                                                   \
  do {                                                                        \
    const char *why_ = ddbc_store_check(s);                                   \
    CHECK_MSG(why_ == NULL, "store invariant: %s", why_ ? why_ : "");         \
  } while(0)

/* Item size used where all entries must cost the same. */
#define ISZ 1000

/* ------------------------------------------------------------------------
** LRU order and segments
*/

static void test_lru_probation_order(void) {
  size_t c = charge_of(1, ISZ);
  ddbc_store *s = ddbc_store_create(8 * c); /* 8 entries, each at the cap */
  ddb_item *it = mkitem(ISZ);
  const char *keys[] = {"a", "b", "c", "d", "e", "f", "g", "h"};
  int i;
  for(i = 0; i < 8; i++)
    fill(s, keys[i], it, 0, 100);
  CHECK_STR(order(s, PROBATION), "h,g,f,e,d,c,b,a");
  CHECK_STR(order(s, PROTECTED), "");
  fill(s, "b", it, 1, 100); /* a fill renews: b to the head */
  CHECK_STR(order(s, PROBATION), "b,h,g,f,e,d,c,a");
  CHECK_INT(stats(s).evictions, 0);
  fill(s, "i", it, 2, 100); /* over budget: the tail goes */
  CHECK_STR(order(s, PROBATION), "i,b,h,g,f,e,d,c");
  CHECK_INT(stats(s).evictions, 1);
  fill(s, "j", it, 3, 100);
  CHECK_STR(order(s, PROBATION), "j,i,b,h,g,f,e,d");
  CHECK_INT(stats(s).evictions, 2);
  CHECK(!has(s, "a", 4));
  CHECK(!has(s, "c", 4));
  CHECK_INT(stats(s).entries, 8);
  CHECK_INT(stats(s).bytes, 8 * c);
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
  CHECK_INT(refs_of_item(it), 1);
  ddb_item_unref(it);
}

static void test_lru_hit_promotes(void) {
  size_t c = charge_of(1, ISZ);
  ddbc_store *s = ddbc_store_create(10 * c);
  ddb_item *it = mkitem(ISZ);
  fill(s, "a", it, 0, 100);
  fill(s, "b", it, 0, 100);
  fill(s, "c", it, 0, 100);
  CHECK(has(s, "a", 1));
  CHECK_STR(order(s, PROBATION), "c,b");
  CHECK_STR(order(s, PROTECTED), "a");
  CHECK(has(s, "c", 1));
  CHECK(has(s, "a", 1)); /* a hit in protected moves to its head */
  CHECK_STR(order(s, PROTECTED), "a,c");
  CHECK_STR(order(s, PROBATION), "b");
  CHECK_INT(stats(s).item_hits, 3);
  CHECK_INT(stats(s).item_misses, 0);
  CHECK(!has(s, "z", 1));
  CHECK_INT(stats(s).item_misses, 1);
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
  ddb_item_unref(it);
}

/* Protected is capped at DDBC_PROTECTED_SHARE of the budget: past it, its
** tail is demoted to the head of probation (not evicted). */
static void test_lru_protected_share(void) {
  size_t c = charge_of(1, ISZ);
  ddbc_store *s = ddbc_store_create(10 * c + 100); /* 80%: 8 entries */
  ddb_item *it = mkitem(ISZ);
  const char *keys[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
  int i;
  for(i = 0; i < 10; i++)
    fill(s, keys[i], it, 0, 100);
  for(i = 0; i < 10; i++)
    CHECK(has(s, keys[i], 1));
  /* 80% of 10 entries: 8 stay protected; a then b were demoted */
  CHECK_STR(order(s, PROTECTED), "j,i,h,g,f,e,d,c");
  CHECK_STR(order(s, PROBATION), "b,a");
  CHECK_INT(stats(s).evictions, 0);
  CHECK_INT(stats(s).entries, 10);
  /* a new entry now evicts from probation's tail: a */
  fill(s, "k", it, 2, 100);
  CHECK_STR(order(s, PROBATION), "k,b");
  CHECK_INT(stats(s).evictions, 1);
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
  ddb_item_unref(it);
}

/* Shrinking the budget demotes protected's tail past its new share, then
** evicts probation's tail first, protected's only when probation is
** empty. */
static void test_lru_shrink_order(void) {
  size_t c = charge_of(2, ISZ);
  ddbc_store *s = ddbc_store_create(10 * c);
  ddb_item *it = mkitem(ISZ);
  char key[16];
  int i;
  fill(s, "ha", it, 0, 100);
  fill(s, "hb", it, 0, 100);
  fill(s, "hc", it, 0, 100);
  fill(s, "hd", it, 0, 100);
  fill(s, "he", it, 0, 100);
  CHECK(has(s, "ha", 1));
  CHECK(has(s, "hb", 1));
  CHECK(has(s, "hc", 1));
  CHECK(has(s, "hd", 1));
  CHECK(has(s, "he", 1));
  CHECK(has(s, "ha", 1));
  CHECK_STR(order(s, PROTECTED), "ha,he,hd,hc,hb");
  for(i = 1; i <= 6; i++) {
    snprintf(key, sizeof(key), "x%d", i);
    fill(s, key, it, 2, 100);
  }
  /* 11 entries for 10: x1, probation's tail, went */
  CHECK_STR(order(s, PROBATION), "x6,x5,x4,x3,x2");
  CHECK_INT(stats(s).evictions, 1);
  CHECK_INT(ddbc_store_set_budget(s, 3 * c), 10 * c);
  /* protected may hold 2.4 entries: hb, hc, hd demoted (in that order, to
  ** probation's head); then 7 evicted from probation's tail */
  CHECK_STR(order(s, PROTECTED), "ha,he");
  CHECK_STR(order(s, PROBATION), "hd");
  CHECK_INT(stats(s).evictions, 8);
  CHECK_INT(stats(s).bytes, 3 * c);
  /* now probation empties before protected is touched */
  CHECK_INT(ddbc_store_set_budget(s, 2 * c), 3 * c);
  CHECK_STR(order(s, PROTECTED), "ha");
  CHECK_STR(order(s, PROBATION), "he");
  CHECK_INT(ddbc_store_set_budget(s, c), 2 * c);
  CHECK_STR(order(s, PROTECTED), "");
  CHECK_STR(order(s, PROBATION), "ha");
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
  ddb_item_unref(it);
}

/* Run the scan-resistance workload on a store; returns how many of the 5
** hot keys survive a one-pass stream of 500 new entries. */
static int hot_survivors(int segmented, uint64_t *evictions) {
  size_t c = charge_of(4, ISZ);
  ddbc_store *s = ddbc_store_create(20 * c);
  ddb_item *it = mkitem(ISZ);
  char key[16];
  int i, n = 0;
  ddbc_store_set_segmented(s, segmented);
  for(i = 0; i < 5; i++) {
    snprintf(key, sizeof(key), "h%03d", i);
    fill(s, key, it, 0, 100);
    CHECK(has(s, key, 0));
    CHECK(has(s, key, 0));
  }
  for(i = 0; i < 500; i++) {
    snprintf(key, sizeof(key), "s%03d", i);
    fill(s, key, it, 1, 100);
  }
  CHECK_INVARIANTS(s);
  CHECK_INT(stats(s).entries, 20);
  *evictions = stats(s).evictions;
  for(i = 0; i < 5; i++) {
    snprintf(key, sizeof(key), "h%03d", i);
    n += has(s, key, 2);
  }
  ddbc_store_release(s);
  ddb_item_unref(it);
  return n;
}

static void test_segmented_scan_resistance(void) {
  uint64_t ev = 0;
  CHECK_INT(hot_survivors(1, &ev), 5);
  CHECK_INT(ev, 505 - 20);
  /* the same stream flushes a plain LRU: what the segments buy */
  CHECK_INT(hot_survivors(0, &ev), 0);
  CHECK_INT(ev, 505 - 20);
}

/* ------------------------------------------------------------------------
** TTL
*/

static void test_ttl_lazy_on_get(void) {
  ddbc_store *s = ddbc_store_create(1 << 20);
  ddb_item *it = mkitem(ISZ);
  ddb_page *pg = mkpage(2000);
  fill(s, "a", it, 100, 2.5);
  fill(s, "b", it, 100, 1000);
  fill_page(s, "q", "P", "T", pg, 100, 0.25);
  CHECK(has(s, "a", 102.49));
  CHECK(has_page(s, "q", 100.24));
  CHECK_INT(stats(s).entries, 3);
  CHECK_INT(stats(s).expirations, 0);
  /* a hit does not extend the life */
  CHECK(!has(s, "a", 102.5));
  CHECK_INT(stats(s).expirations, 1);
  CHECK_INT(stats(s).entries, 2);
  CHECK_INT(stats(s).item_misses, 1);
  CHECK(!has_page(s, "q", 100.25));
  CHECK_INT(stats(s).expirations, 2);
  CHECK_INT(stats(s).query_misses, 1);
  CHECK_INT(stats(s).entries, 1);
  CHECK_INT(stats(s).bytes, charge_of(1, ISZ));
  CHECK(has(s, "b", 500));
  CHECK_INT(refs_of_page(pg), 1);
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
  CHECK_INT(refs_of_item(it), 1);
  ddb_item_unref(it);
  ddb_page_unref(pg);
}

static void test_ttl_sweep(void) {
  ddbc_store *s = ddbc_store_create(1 << 20);
  ddb_item *it = mkitem(ISZ);
  char key[16];
  int i;
  /* tail to head: x (long-lived), e0..e9 (1 s) */
  fill(s, "x", it, 0, 1000);
  for(i = 0; i < 10; i++) {
    snprintf(key, sizeof(key), "e%d", i);
    fill(s, key, it, 0, 1);
  }
  /* promote e8 and e9 and y: protected's tail is e8 */
  fill(s, "y", it, 0, 1000);
  CHECK(has(s, "e8", 0.5));
  CHECK(has(s, "e9", 0.5));
  CHECK(has(s, "y", 0.5));
  CHECK_STR(order(s, PROTECTED), "y,e9,e8");
  CHECK_INT(stats(s).entries, 12);
  /* one fill at t=5 looks at DDBC_SWEEP entries from each tail: x (alive),
  ** e0, e1, e2 in probation; e8, e9, y in protected */
  fill(s, "z", it, 5, 1000);
  CHECK_INT(stats(s).expirations, (DDBC_SWEEP - 1) + 2);
  CHECK_STR(order(s, PROTECTED), "y");
  CHECK_STR(order(s, PROBATION), "z,e7,e6,e5,e4,e3,x");
  /* the sweep is bounded: the rest waits for the next fills or a get */
  fill(s, "w", it, 5, 1000);
  CHECK_INT(stats(s).expirations, 5 + DDBC_SWEEP - 1);
  CHECK_STR(order(s, PROBATION), "w,z,e7,e6,x");
  CHECK_INT(stats(s).item_misses, 0);
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
  CHECK_INT(refs_of_item(it), 1);
  ddb_item_unref(it);
}

/* Readers with different TTLs share entries: an entry older than the
** reader's own TTL (max_age) is a miss for it but stays for the others,
** until the reader's fill replaces it. */
static void test_ttl_reader_max_age(void) {
  ddbc_store *s = ddbc_store_create(1 << 20);
  ddb_item *v1 = mkitem(ISZ), *v2 = mkitem(ISZ), *out = NULL;
  ddb_page *pg = mkpage(500);
  fill(s, "k", v1, 0, 300);
  fill_page(s, "q", "P", "T", pg, 0, 300);
  CHECK_INT(ddbc_store_get_item(s, "k", 1, 0.49, 0.5, &out), 1);
  ddb_item_unref(out);
  CHECK_INT(ddbc_store_get_item(s, "k", 1, 0.5, 0.5, &out), 0);
  CHECK_INT(ddbc_store_get_item(s, "k", 1, 10, 0.5, &out), 0);
  CHECK_INT(stats(s).item_misses, 2);
  CHECK_INT(stats(s).expirations, 0);
  CHECK_INT(stats(s).entries, 2);
  {
    ddb_page *po = NULL;
    CHECK_INT(ddbc_store_get_page(s, "q", 1, 10, 0.5, &po), 0);
    CHECK_INT(ddbc_store_get_page(s, "q", 1, 10, 300, &po), 1);
    CHECK(po == pg);
    ddb_page_unref(po);
  }
  out = NULL;
  CHECK_INT(ddbc_store_get_item(s, "k", 1, 10, 300, &out), 1);
  CHECK(out == v1);
  ddb_item_unref(out);
  /* the short reader's fill replaces it, for everyone */
  fill(s, "k", v2, 10, 0.5);
  out = NULL;
  CHECK_INT(ddbc_store_get_item(s, "k", 1, 10.2, 300, &out), 1);
  CHECK(out == v2);
  ddb_item_unref(out);
  CHECK_INT(ddbc_store_get_item(s, "k", 1, 10.5, 300, &out), 0);
  CHECK_INT(stats(s).expirations, 1);
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
  ddb_item_unref(v1);
  ddb_item_unref(v2);
  ddb_page_unref(pg);
}

/* ttl <= 0 is "don't cache": nothing is stored, and an older entry of the
** key goes (a newer value that is not kept must not leave an older one). */
static void test_ttl_zero(void) {
  ddbc_store *s = ddbc_store_create(1 << 20);
  ddb_item *it = mkitem(ISZ), *it2 = mkitem(ISZ);
  ddb_page *pg = mkpage(500);
  fill(s, "a", it, 0, 0);
  fill_page(s, "q", "P", "T", pg, 0, 0);
  CHECK_INT(stats(s).entries, 0);
  fill(s, "b", it, 0, 10);
  fill(s, "b", it2, 1, 0);
  CHECK(!has(s, "b", 1));
  ddbc_store_write_item(s, "c", 1, it, 0, 10);
  ddbc_store_write_item(s, "c", 1, it2, 1, -1);
  CHECK(!has(s, "c", 1));
  CHECK_INT(stats(s).entries, 0);
  CHECK_INT(stats(s).bytes, 0);
  CHECK_INT(refs_of_item(it), 1);
  ddbc_store_release(s);
  ddb_item_unref(it);
  ddb_item_unref(it2);
  ddb_page_unref(pg);
}

/* ------------------------------------------------------------------------
** Bytes
*/

/* The bytes glibc's malloc holds for a request of n: the request plus its
** 8-byte size field, rounded up to 16, at least 32 (what store.c charges
** for each allocation). */
static size_t chunk(size_t n) {
  size_t c = (n + 8 + 15) & ~(size_t)15;
  return c < 32 ? 32 : c;
}

/* The charge of a page entry with a key of key_len bytes, tags of 3 bytes
** each and a page claiming page_bytes, measured on a scratch store. */
static size_t page_charge_of(size_t key_len, size_t page_bytes) {
  ddbc_store *s = ddbc_store_create(1u << 30);
  char key[256];
  ddb_page *pg = mkpage(page_bytes);
  size_t bytes;
  memset(key, 'q', key_len);
  key[key_len] = 0;
  fill_page(s, key, "P#x", "T#t", pg, 0, 10);
  bytes = (size_t)stats(s).bytes;
  ddb_page_unref(pg);
  ddbc_store_release(s);
  return bytes;
}

static void test_bytes_sum_of_charges(void) {
  ddbc_store *s = ddbc_store_create(1 << 24);
  size_t base = charge_of(1, 0); /* a negative entry, key of 1 byte */
  ddb_item *small = mkitem(200), *big = mkitem(50000);
  ddb_page *pg = mkpage(30000);
  size_t want;
  /* entry header + key + malloc overhead + 3 hash slots */
  CHECK(base >= 64 && base <= 160);
  /* each allocation is charged as a whole chunk (16-byte steps), the
  ** referenced item's chunk besides the entry's */
  CHECK_INT(charge_of(1, 0) % 16, 24 % 16);
  CHECK_INT(charge_of(17, 0), base + 16);
  CHECK_INT(charge_of(33, 0), base + 32);
  CHECK_INT(charge_of(1, ISZ), base + chunk(ISZ));
  CHECK_INT(charge_of(1, 20000), base + chunk(20000));
  CHECK_INT(charge_of(7, ISZ) - charge_of(7, 0), chunk(ISZ));
  /* a page: the entry (its tags in it) plus the page's own count */
  CHECK_INT(page_charge_of(4, 30000) - page_charge_of(4, 0), 30000);
  CHECK(page_charge_of(4, 0) >= charge_of(4 + 3 + 3, 0));
  fill(s, "k1", small, 0, 10);
  fill(s, "key2", big, 0, 10);
  fill(s, "neg", NULL, 0, 10);
  fill_page(s, "page", "P#x", "T#t", pg, 0, 10);
  want = charge_of(2, 200) + charge_of(4, 50000) + charge_of(3, 0) +
         page_charge_of(4, 30000);
  CHECK_INT(stats(s).bytes, want);
  CHECK_INT(stats(s).entries, 4);
  CHECK_INVARIANTS(s);
  /* replacing a value changes the sum by the difference */
  fill(s, "k1", big, 1, 10);
  want += chunk(50000) - chunk(200);
  CHECK_INT(stats(s).bytes, want);
  ddbc_store_write_item(s, "key2", 4, NULL, 1, 10);
  want -= chunk(50000);
  CHECK_INT(stats(s).bytes, want);
  CHECK_INT(stats(s).entries, 4);
  CHECK(!has(s, "k1", 11)); /* expired: its charge goes */
  want -= charge_of(2, 50000);
  CHECK_INT(stats(s).bytes, want);
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
  ddb_item_unref(small);
  ddb_item_unref(big);
  ddb_page_unref(pg);
}

/* A small deterministic generator (xorshift64*). */
static uint64_t rng_next(uint64_t *x) {
  *x ^= *x >> 12;
  *x ^= *x << 25;
  *x ^= *x >> 27;
  return *x * 2685821657736338717ULL;
}

static void test_bytes_within_budget_always(void) {
  ddbc_store *s = ddbc_store_create(64 * 1024);
  ddb_item *items[4];
  ddb_page *pages[2];
  uint64_t x = 42;
  char key[16];
  int i, bad = 0, bad_check = 0;
  const char *why = NULL;
  items[0] = mkitem(sizeof(ddb_item));
  items[1] = mkitem(900);
  items[2] = mkitem(4000);
  items[3] = mkitem(7800); /* near the 1/8 cap of 64 KB */
  pages[0] = mkpage(3000);
  pages[1] = mkpage(9000); /* over the cap: never stored */
  for(i = 0; i < 20000; i++) {
    uint64_t r = rng_next(&x);
    double now = i * 0.001;
    int k = (int)(r % 300);
    snprintf(key, sizeof(key), "%c%d", "IQ"[k & 1], k);
    switch((r >> 16) % 10) {
    case 0:
    case 1: has(s, key, now); break;
    case 2: has_page(s, key, now); break;
    case 3:
    case 4:
      fill(s, key, items[(r >> 24) % 4], now, 0.5 + (r >> 32) % 5);
      break;
    case 5: fill(s, key, NULL, now, 2); break;
    case 6:
      fill_page(s, key, k & 2 ? "P1" : "P2", "T", pages[(r >> 24) % 2], now,
                3);
      break;
    case 7:
      ddbc_store_write_item(s, key, strlen(key), items[1], now, 4);
      break;
    case 8: ddbc_store_bump(s, k & 4 ? "P1" : "T", k & 4 ? 2 : 1); break;
    case 9:
      if(((r >> 24) & 15) == 0)
        ddbc_store_set_budget(s, 16 * 1024 + (r >> 32) % (96 * 1024));
      break;
    }
    if(stats(s).bytes > stats(s).bytes_max)
      bad++;
    if(!why && (why = ddbc_store_check(s)) != NULL)
      bad_check = i;
  }
  CHECK_INT(bad, 0);
  CHECK_MSG(why == NULL, "op %d: %s", bad_check, why ? why : "");
  CHECK(stats(s).evictions > 0);
  CHECK(stats(s).expirations > 0);
  CHECK(stats(s).stale > 0);
  ddbc_store_release(s);
  for(i = 0; i < 4; i++) {
    CHECK_INT(refs_of_item(items[i]), 1);
    ddb_item_unref(items[i]);
  }
  for(i = 0; i < 2; i++) {
    CHECK_INT(refs_of_page(pages[i]), 1);
    ddb_page_unref(pages[i]);
  }
}

static void test_bytes_set_budget_shrinks(void) {
  size_t c = charge_of(3, ISZ);
  ddbc_store *s = ddbc_store_create(20 * c);
  ddb_item *it = mkitem(ISZ);
  char key[16];
  int i;
  for(i = 0; i < 20; i++) {
    snprintf(key, sizeof(key), "k%02d", i);
    fill(s, key, it, 0, 100);
  }
  CHECK_INT(stats(s).entries, 20);
  CHECK_INT(stats(s).bytes, 20 * c);
  CHECK_INT(ddbc_store_set_budget(s, 5 * c + c / 2), 20 * c);
  CHECK_INT(stats(s).entries, 5);
  CHECK_INT(stats(s).evictions, 15);
  CHECK_INT(stats(s).bytes_max, 5 * c + c / 2);
  CHECK_STR(order(s, PROBATION), "k19,k18,k17,k16,k15");
  CHECK(!has(s, "k14", 0));
  CHECK_INT(ddbc_store_set_budget(s, 0), 5 * c + c / 2);
  CHECK_INT(stats(s).entries, 0);
  CHECK_INT(stats(s).bytes, 0);
  fill(s, "k00", it, 1, 100); /* nothing fits a zero budget */
  CHECK_INT(stats(s).entries, 0);
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
  CHECK_INT(refs_of_item(it), 1);
  ddb_item_unref(it);
}

static void test_bytes_share_cap(void) {
  size_t budget = 8 * 10000, vfit, pfit;
  ddbc_store *s = ddbc_store_create(budget);
  ddb_item *fits, *over;
  ddb_page *pfits, *pover;
  /* the cap is budget/8 = 10000: the largest item and page of key "a"
  ** (pages: "q", tags "P#x", "T#t") whose charge is within it */
  for(vfit = 10000; charge_of(1, vfit) > 10000; vfit--)
    ;
  for(pfit = 10000; page_charge_of(1, pfit) > 10000; pfit--)
    ;
  CHECK(vfit > 9000 && pfit > 9000);
  fits = mkitem(vfit);
  over = mkitem(vfit + 1);
  pfits = mkpage(pfit);
  pover = mkpage(pfit + 1);
  fill(s, "a", fits, 0, 10);
  CHECK(has(s, "a", 0));
  CHECK_INT(stats(s).bytes, charge_of(1, vfit));
  CHECK(charge_of(1, vfit + 1) > 10000);
  fill(s, "a", over, 1, 10); /* not stored, and the old value goes too */
  CHECK(!has(s, "a", 1));
  CHECK_INT(stats(s).entries, 0);
  ddbc_store_write_item(s, "b", 1, over, 1, 10);
  CHECK(!has(s, "b", 1));
  fill_page(s, "q", "P#x", "T#t", pfits, 1, 10);
  CHECK(has_page(s, "q", 1));
  fill_page(s, "q", "P#x", "T#t", pover, 1, 10);
  CHECK(!has_page(s, "q", 1));
  CHECK_INT(stats(s).entries, 0);
  CHECK_INT(stats(s).bytes, 0);
  CHECK_INT(refs_of_item(over), 1);
  CHECK_INT(refs_of_page(pover), 1);
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
  ddb_item_unref(fits);
  ddb_item_unref(over);
  ddb_page_unref(pfits);
  ddb_page_unref(pover);
}

/* ------------------------------------------------------------------------
** Packed items (ddbc_store_create_packed, as cache.c makes its store)
*/

static const ddbc_item_codec codec = {ddb_item_packed_size, ddb_item_pack,
                                      ddb_item_unpack};

/* A real item from its typed JSON (the test fails if it does not parse). */
static ddb_item *typed(const char *json) {
  ddb_item *it = NULL;
  ddb_error err;
  memset(&err, 0, sizeof(err));
  if(ddb_item_from_typed_json(json, strlen(json), &it, &err) != DDB_OK)
    CHECK_MSG(0, "typed json: %s", err.message);
  return it;
}

/* Does b hold the same tree as a, node for node (types, counts, names,
** texts; sets in order), every string NUL-terminated? */
static int same_tree(const ddb_av *a, const ddb_av *b) {
  uint32_t i;
  if(a->type != b->type || a->n != b->n)
    return 0;
  if((a->name != NULL) != (b->name != NULL) ||
     (a->name && (a->name_len != b->name_len ||
                  memcmp(a->name, b->name, a->name_len + 1) != 0)))
    return 0;
  if((a->text != NULL) != (b->text != NULL) ||
     (a->text && memcmp(a->text, b->text, (size_t)a->n + 1) != 0))
    return 0;
  if((a->kids != NULL) != (b->kids != NULL))
    return 0;
  for(i = 0; a->kids && i < a->n; i++)
    if(!same_tree(&a->kids[i], &b->kids[i]))
      return 0;
  return 1;
}

static void test_packed_round_trip(void) {
  static const char *const items[] = {
      "{}",
      "{\"PK\":{\"S\":\"K#1\"}}",
      "{\"PK\":{\"S\":\"a\\u0000b\"},\"e\":{\"S\":\"\"},\"n\":{\"N\":\"-1.5E+"
      "3\"},"
      "\"b\":{\"B\":\"AAEC\"},\"t\":{\"BOOL\":true},\"f\":{\"BOOL\":false},"
      "\"z\":{\"NULL\":true}}",
      "{\"m\":{\"M\":{\"x\":{\"L\":[{\"N\":\"1\"},{\"M\":{}},{\"L\":[]},"
      "{\"SS\":[\"a\",\"b\"]}]},\"\":{\"S\":\"empty name\"}}},"
      "\"ss\":{\"SS\":[\"x\",\"yy\",\"\"]},\"ns\":{\"NS\":[\"1\",\"2.5\"]},"
      "\"bs\":{\"BS\":[\"AA==\"]},\"l\":{\"L\":[{\"NULL\":true},"
      "{\"BOOL\":true}]}}",
      "{\"q\\\"n\":{\"S\":\"v\"}}",
      "{\"k\":{\"M\":{\"x\":{\"SS\":[\"a\\nb\"]}}}}",
      "{\"k\":{\"L\":[{\"S\":\"back\\\\slash\"}]}}",
  };
  /* ddb_item.plain after the trip: no name or text needs escaping */
  static const int plain[] = {1, 1, 0, 1, 0, 0, 0, 1};
  size_t i;
  char big[2000];
  /* and one with a text over 127 bytes (a varint of two bytes) */
  snprintf(big, sizeof(big), "{\"pad\":{\"S\":\"%0300d\"}}", 7);
  for(i = 0; i <= sizeof(items) / sizeof(items[0]); i++) {
    const char *json = i < sizeof(items) / sizeof(items[0]) ? items[i] : big;
    ddb_item *it = typed(json), *back;
    size_t n;
    unsigned char *p;
    ddb_buf a, b;
    if(!it)
      continue;
    n = ddb_item_packed_size(it);
    p = malloc(n + 1);
    p[n] = 0xA5; /* a canary: pack writes exactly n bytes */
    ddb_item_pack(it, p);
    CHECK_INT(p[n], 0xA5);
    back = ddb_item_unpack(p, n);
    CHECK(back && back != it);
    if(back) {
      CHECK_MSG(same_tree(&it->root, &back->root), "tree of %s", json);
      CHECK(ddb_av_equal(&it->root, &back->root));
      CHECK_INT(back->refs, 1);
      CHECK(back->bytes <= it->bytes); /* exact, where decoding bounds */
      /* the same JSON, typed and plain */
      ddb_buf_init(&a, 1 << 16);
      ddb_buf_init(&b, 1 << 16);
      ddb_item_to_typed_json(it, &a);
      ddb_item_to_typed_json(back, &b);
      CHECK_MEM(b.p, b.len, a.p, a.len);
      ddb_buf_free(&a);
      ddb_buf_free(&b);
      CHECK_MSG(back->plain == plain[i], "plain %d of %s", back->plain, json);
      CHECK_INT(it->plain, 0); /* decoded: not known */
      ddb_buf_init(&a, 1 << 16);
      ddb_buf_init(&b, 1 << 16);
      ddb_av_to_json(&it->root, &a);
      ddb_item_to_json(back, &b); /* the plain fast path, where it is */
      CHECK_MEM(b.p, b.len, a.p, a.len);
      ddb_buf_free(&a);
      ddb_buf_free(&b);
      /* smaller than the ddb_item (by 40 bytes a node, less varints) */
      CHECK_MSG(n < it->bytes, "packed %zu, item %zu", n, it->bytes);
    }
    free(p);
    ddb_item_unref(back);
    ddb_item_unref(it);
  }
}

static void test_packed_store(void) {
  ddbc_store *s = ddbc_store_create_packed(1 << 20, &codec);
  ddb_item *it = typed("{\"PK\":{\"S\":\"K#00001\"},\"SK\":{\"S\":\"S\"},"
                       "\"total\":{\"N\":\"1\"}}");
  ddb_item *out = NULL, *out2 = NULL;
  size_t base;
  if(!it) {
    ddbc_store_release(s);
    return;
  }
  fill(s, "k", it, 0, 10);
  CHECK_INT(it->refs, 1); /* the store keeps its own packed copy */
  CHECK_INT(ddbc_store_get_item(s, "k", 1, 1, ANY_AGE, &out), 1);
  CHECK_INT(ddbc_store_get_item(s, "k", 1, 1, ANY_AGE, &out2), 1);
  CHECK(out && out != it && out2 && out2 != out);
  if(out && out2) {
    CHECK(same_tree(&it->root, &out->root));
    CHECK(same_tree(&it->root, &out2->root));
  }
  ddb_item_unref(out);
  ddb_item_unref(out2);
  /* the charge: one chunk holding the entry, the key and the packed item,
  ** and the hash slots; a negative entry holds no packed bytes */
  base = (size_t)stats(s).bytes;
  fill(s, "neg", NULL, 0, 10);
  CHECK_INT(ddbc_store_get_item(s, "neg", 3, 1, ANY_AGE, &out), 1);
  CHECK(out == NULL);
  CHECK(stats(s).bytes - base < base);
  CHECK(base - (stats(s).bytes - base) >= ddb_item_packed_size(it) - 16);
  ddbc_store_write_item(s, "k", 1, NULL, 2, 10);
  CHECK_INT(ddbc_store_get_item(s, "k", 1, 3, ANY_AGE, &out), 1);
  CHECK(out == NULL);
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
  CHECK_INT(it->refs, 1);
  ddb_item_unref(it);
}

#if defined(__GLIBC__) &&                                                     \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)) &&           \
    !defined(__SANITIZE_ADDRESS__)
#define HAVE_MALLINFO2 1
/* Bytes malloc holds for the process (arena chunks in use and mmapped
** blocks). */
static size_t heap_in_use(void) {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}
#endif

/* The budget is honest: fill a packed store far past its budget with
** items like the bench's, and compare what the store says it holds with
** what malloc says it gave out meanwhile.  The charge may exceed the truth
** (it charges 3 hash slots an entry where the table holds 1 to 3) but
** never fall short of it by more than 1%. */
static void test_packed_accounting(void) {
#ifdef HAVE_MALLINFO2
  enum { PROBE = 4000 };
  const size_t budget = 4u << 20;
  void **probe = malloc(PROBE * sizeof(*probe));
  size_t m0, m1, i, n, got, real;
  ddbc_store *s;
  ddb_item *it;
  char key[128], json[512];
  /* does mallinfo2 count this process's malloc (not under valgrind)? */
  m0 = heap_in_use();
  for(i = 0; i < PROBE; i++)
    probe[i] = malloc(200); /* chunks of 208 */
  m1 = heap_in_use();
  for(i = 0; i < PROBE; i++)
    free(probe[i]);
  free(probe);
  if(m1 - m0 < PROBE * 208 / 10 * 9 || m1 - m0 > PROBE * 208 + 65536) {
    printf("#   skipped: mallinfo2 does not count this malloc "
           "(%zu bytes for %d x 208)\n",
           m1 - m0, PROBE);
    return;
  }
  s = ddbc_store_create_packed(budget, &codec);
  m0 = heap_in_use();
  for(n = 0; n < 40000; n++) {
    size_t kl = (size_t)snprintf(key, sizeof(key),
                                 "I\x15http://localhost:8000/us-east-1"
                                 "0123456789abcdef\x0a"
                                 "BenchItems\x02PKS\x07K#%05zu\x02SKS\x01S",
                                 n);
    snprintf(json, sizeof(json),
             "{\"PK\":{\"S\":\"K#%05zu\"},\"SK\":{\"S\":\"S\"},"
             "\"name\":{\"S\":\"customer %zu\"},\"total\":{\"N\":\"%zu\"},"
             "\"pad\":{\"S\":\"%0*d\"}}",
             n, n, n % 1000, (int)(n % 200), 0);
    it = typed(json);
    if(!it)
      break;
    ddbc_store_fill_item(s, key, kl, it, ddbc_store_gen(s, key, kl), 0, 100);
    ddb_item_unref(it);
  }
  m1 = heap_in_use();
  got = (size_t)stats(s).bytes;
  real = m1 - m0;
  CHECK(stats(s).evictions > 0);
  CHECK(got <= budget && got > budget - budget / 8);
  CHECK_MSG(got >= real - real / 100, "charged %zu, malloc grew %zu", got,
            real);
  CHECK_MSG(got <= real + real / 10, "charged %zu, malloc grew %zu", got,
            real);
  printf("#   %llu entries: charged %zu bytes, malloc grew %zu (%.3fx)\n",
         (unsigned long long)stats(s).entries, got, real,
         (double)got / (double)real);
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
#else
  printf("#   skipped: no mallinfo2 (not glibc >= 2.33, or ASan)\n");
#endif
}

/* ------------------------------------------------------------------------
** Negative entries, generations
*/

static void test_negative_entries(void) {
  ddbc_store *s = ddbc_store_create(1 << 20);
  ddb_item *it = mkitem(ISZ), *out = it;
  fill(s, "gone", NULL, 0, 10);
  CHECK_INT(ddbc_store_get_item(s, "gone", 4, 1, ANY_AGE, &out), 1);
  CHECK(out == NULL);
  CHECK_INT(stats(s).item_hits, 1);
  CHECK_INT(stats(s).item_misses, 0);
  CHECK_INT(stats(s).bytes, charge_of(4, 0));
  /* a delete through this process caches "no such item" */
  ddbc_store_write_item(s, "item", 4, it, 0, 10);
  out = NULL;
  CHECK_INT(ddbc_store_get_item(s, "item", 4, 1, ANY_AGE, &out), 1);
  CHECK(out == it);
  ddb_item_unref(out);
  ddbc_store_write_item(s, "item", 4, NULL, 2, 10);
  out = it;
  CHECK_INT(ddbc_store_get_item(s, "item", 4, 3, ANY_AGE, &out), 1);
  CHECK(out == NULL);
  CHECK_INT(refs_of_item(it), 1);
  /* negative entries expire like the others */
  out = it;
  CHECK_INT(ddbc_store_get_item(s, "gone", 4, 10, ANY_AGE, &out), 0);
  CHECK_INT(stats(s).expirations, 1);
  CHECK_INT(stats(s).item_hits, 3);
  CHECK_INT(stats(s).item_misses, 1);
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
  ddb_item_unref(it);
}

static void test_gen_fill_refused_after_bump(void) {
  ddbc_store *s = ddbc_store_create(1 << 20);
  ddb_item *it = mkitem(ISZ);
  uint64_t g0 = ddbc_store_gen(s, "k", 1), g1, g2;
  CHECK_INT(ddbc_store_gen(s, "other", 5), g0); /* both at the epoch */
  g1 = ddbc_store_bump(s, "k", 1);
  CHECK(g1 > g0);
  CHECK_INT(ddbc_store_gen(s, "k", 1), g1);
  CHECK_INT(ddbc_store_gen(s, "other", 5), g0);
  ddbc_store_fill_item(s, "k", 1, it, g0, 0, 10);
  CHECK(!has(s, "k", 0));
  CHECK_INT(stats(s).stale, 1);
  CHECK_INT(stats(s).entries, 0);
  ddbc_store_fill_item(s, "k", 1, it, g1, 0, 10);
  CHECK(has(s, "k", 0));
  /* a read that raced with a write never overwrites the write's result */
  g2 = ddbc_store_gen(s, "k", 1);
  ddbc_store_write_item(s, "k", 1, NULL, 1, 10);
  ddbc_store_fill_item(s, "k", 1, it, g2, 1, 10);
  CHECK_INT(stats(s).stale, 2);
  {
    ddb_item *out = it;
    CHECK_INT(ddbc_store_get_item(s, "k", 1, 2, ANY_AGE, &out), 1);
    CHECK(out == NULL);
  }
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
  CHECK_INT(refs_of_item(it), 1);
  ddb_item_unref(it);
}

static void test_gen_page_stale(void) {
  ddbc_store *s = ddbc_store_create(1 << 20);
  ddb_page *p1 = mkpage(100), *p2 = mkpage(100), *p3 = mkpage(100);
  ddb_page *out = NULL;
  ddbc_tag t[2];
  uint64_t g[2];
  fill_page(s, "q1", "P#a", "T#t", p1, 0, 10);
  fill_page(s, "q2", "P#b", "T#t", p2, 0, 10);
  fill_page(s, "q3", "S#t", "T#u", p3, 0, 10);
  CHECK_INT(ddbc_store_get_page(s, "q1", 2, 0, ANY_AGE, &out), 1);
  CHECK(out == p1);
  ddb_page_unref(out);
  ddbc_store_bump(s, "P#zzz", 5); /* an unrelated tag */
  CHECK(has_page(s, "q1", 0));
  ddbc_store_bump(s, "P#a", 3); /* the first tag of q1 */
  CHECK(!has_page(s, "q1", 0));
  CHECK_INT(stats(s).stale, 1);
  CHECK_INT(stats(s).entries, 2); /* dropped, not only missed */
  CHECK(has_page(s, "q2", 0));
  CHECK(has_page(s, "q3", 0));
  ddbc_store_bump(s, "T#t", 3); /* the second tag of q2 */
  CHECK(!has_page(s, "q2", 0));
  CHECK(has_page(s, "q3", 0));
  CHECK_INT(stats(s).stale, 2);
  CHECK_INT(stats(s).query_misses, 2);
  CHECK_INT(refs_of_page(p1), 1);
  CHECK_INT(refs_of_page(p2), 1);
  /* a fill whose generations moved meanwhile is refused, either tag */
  tags2(t, "P#a", "T#t");
  g[0] = ddbc_store_gen(s, "P#a", 3);
  g[1] = ddbc_store_gen(s, "T#t", 3);
  ddbc_store_bump(s, "P#a", 3);
  ddbc_store_fill_page(s, "q1", 2, t, g, p1, 1, 10);
  CHECK_INT(stats(s).entries, 1); /* refused, not stored to go stale */
  CHECK_INT(stats(s).stale, 3);
  CHECK(!has_page(s, "q1", 1));
  g[0] = ddbc_store_gen(s, "P#a", 3);
  ddbc_store_bump(s, "T#t", 3);
  ddbc_store_fill_page(s, "q1", 2, t, g, p1, 1, 10);
  CHECK_INT(stats(s).entries, 1);
  CHECK(!has_page(s, "q1", 1));
  CHECK_INT(stats(s).stale, 4);
  g[1] = ddbc_store_gen(s, "T#t", 3);
  ddbc_store_fill_page(s, "q1", 2, t, g, p1, 1, 10);
  CHECK(has_page(s, "q1", 1));
  /* items and pages do not answer for each other */
  CHECK(!has(s, "q1", 1));
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
  CHECK_INT(refs_of_page(p1), 1);
  ddb_page_unref(p1);
  ddb_page_unref(p2);
  ddb_page_unref(p3);
}

static void test_gen_write_item_replaces(void) {
  ddbc_store *s = ddbc_store_create(1 << 20);
  ddb_item *v1 = mkitem(ISZ), *v2 = mkitem(ISZ + 10), *out = NULL;
  uint64_t g;
  fill(s, "k", v1, 0, 10);
  CHECK(has(s, "k", 0)); /* protected now */
  g = ddbc_store_gen(s, "k", 1);
  ddbc_store_write_item(s, "k", 1, v2, 1, 10);
  CHECK(ddbc_store_gen(s, "k", 1) > g);
  CHECK_INT(refs_of_item(v1), 1); /* the old value was released */
  CHECK_INT(refs_of_item(v2), 2);
  CHECK_INT(ddbc_store_get_item(s, "k", 1, 2, ANY_AGE, &out), 1);
  CHECK(out == v2);
  ddb_item_unref(out);
  CHECK_INT(stats(s).entries, 1);
  CHECK_INT(stats(s).bytes, charge_of(1, ISZ + 10));
  /* a write stores even where no read filled before */
  ddbc_store_write_item(s, "new", 3, v1, 2, 10);
  out = NULL;
  CHECK_INT(ddbc_store_get_item(s, "new", 3, 2, ANY_AGE, &out), 1);
  CHECK(out == v1);
  ddb_item_unref(out);
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
  CHECK_INT(refs_of_item(v1), 1);
  CHECK_INT(refs_of_item(v2), 1);
  ddb_item_unref(v1);
  ddb_item_unref(v2);
}

static void test_gen_tag_table_reset(void) {
  ddbc_store *s = ddbc_store_create(1 << 20);
  ddb_page *p1 = mkpage(100), *p2 = mkpage(100);
  ddb_item *it = mkitem(ISZ);
  char tag[32];
  uint64_t gi, gy;
  int i;
  ddbc_store_bump(s, "Y", 1);
  fill_page(s, "q1", "X", "T", p1, 0, 10); /* X, T never bumped */
  fill_page(s, "q2", "Y", "T", p2, 0, 10); /* Y bumped before */
  gi = ddbc_store_gen(s, "item", 4);
  gy = ddbc_store_gen(s, "Y", 1);
  /* fill the table: Y plus DDBC_MAX_TAGS - 1 others */
  for(i = 1; i < DDBC_MAX_TAGS; i++) {
    int n = snprintf(tag, sizeof(tag), "tag%d", i);
    ddbc_store_bump(s, tag, (size_t)n);
  }
  CHECK(has_page(s, "q1", 1));
  CHECK(has_page(s, "q2", 1));
  CHECK_INT(ddbc_store_gen(s, "Y", 1), gy);
  /* a tag the full table already holds moves alone */
  ddbc_store_bump(s, "tag1", 4);
  CHECK(has_page(s, "q1", 1));
  CHECK(has_page(s, "q2", 1));
  CHECK_INT(ddbc_store_gen(s, "Y", 1), gy);
  /* a new one resets the table: every generation moves */
  ddbc_store_bump(s, "one more", 8);
  CHECK(ddbc_store_gen(s, "Y", 1) != gy);
  CHECK(ddbc_store_gen(s, "item", 4) != gi);
  CHECK(!has_page(s, "q1", 1));
  CHECK(!has_page(s, "q2", 1));
  CHECK_INT(stats(s).stale, 2);
  ddbc_store_fill_item(s, "item", 4, it, gi, 1, 10);
  CHECK(!has(s, "item", 1));
  CHECK_INT(stats(s).stale, 3);
  /* and the store goes on working */
  fill_page(s, "q1", "X", "T", p1, 2, 10);
  CHECK(has_page(s, "q1", 2));
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
  CHECK_INT(refs_of_page(p1), 1);
  ddb_page_unref(p1);
  ddb_page_unref(p2);
  ddb_item_unref(it);
}

/* ------------------------------------------------------------------------
** Freeing
*/

static void test_empty_and_release(void) {
  ddbc_store *s = ddbc_store_create(1 << 20);
  ddb_item *it = mkitem(ISZ);
  ddb_page *pg = mkpage(5000);
  char key[16];
  int i;
  for(i = 0; i < 50; i++) {
    snprintf(key, sizeof(key), "i%d", i);
    fill(s, key, i % 5 ? it : NULL, 0, 10);
    snprintf(key, sizeof(key), "p%d", i);
    fill_page(s, key, "P", "T", pg, 0, 10);
    ddbc_store_bump(s, key, strlen(key)); /* tags to free too */
  }
  CHECK(has(s, "i1", 0));
  CHECK(has_page(s, "p1", 0));
  CHECK_INT(refs_of_item(it), 1 + 40);
  CHECK_INT(refs_of_page(pg), 1 + 50);
  CHECK_INT(stats(s).entries, 100);
  ddbc_store_empty(s);
  CHECK_INT(stats(s).entries, 0);
  CHECK_INT(stats(s).bytes, 0);
  CHECK_INT(stats(s).item_hits, 1); /* counters are kept */
  CHECK_INT(stats(s).query_hits, 1);
  CHECK_INT(refs_of_item(it), 1);
  CHECK_INT(refs_of_page(pg), 1);
  CHECK_STR(order(s, PROBATION), "");
  CHECK_STR(order(s, PROTECTED), "");
  CHECK(!has(s, "i1", 0));
  CHECK_INVARIANTS(s);
  /* filled again, then released with entries in both segments */
  fill(s, "a", it, 0, 10);
  fill(s, "b", it, 0, 10);
  CHECK(has(s, "a", 0));
  fill_page(s, "p", "P", "T", pg, 0, 10);
  CHECK_INT(refs_of_item(it), 3);
  ddbc_store_release(s);
  CHECK_INT(refs_of_item(it), 1);
  CHECK_INT(refs_of_page(pg), 1);
  ddbc_store_release(NULL);
  ddb_item_unref(it);
  ddb_page_unref(pg);
}

/* ------------------------------------------------------------------------
** Keys never shared: the key encoding is injective, and entries are kept
** apart by endpoint (canonical), region and credentials
*/

/* The encoding of the key attributes v[0..n) (names set) in b (reset
** first), through the item path and the attribute path, which must agree.
** Returns 0, or -1 when either fails. */
static int encode_key(ddb_buf *b, const ddb_av *v, int n) {
  static const char *const names[] = {"PK", "SK"};
  ddb_item *it = ddb_item_from_avs(v, n);
  ddb_buf other;
  int rc = -1;
  ddb_buf_reset(b);
  ddb_buf_init(&other, 4096);
  if(it && ddb_key_encode(it, names, n, b) == 0 &&
     ddb_key_encode_avs(v, n, &other) == 0 && other.len == b->len &&
     memcmp(other.p, b->p, b->len) == 0)
    rc = 0;
  ddb_buf_free(&other);
  ddb_item_unref(it);
  return rc;
}

/* A key attribute named name of type t whose text is s[0..n). */
static ddb_av keyav(const char *name, ddb_type t, const char *s, size_t n) {
  ddb_av a;
  memset(&a, 0, sizeof(a));
  a.type = t;
  a.text = s;
  a.n = (uint32_t)n;
  a.name = name;
  a.name_len = (uint32_t)strlen(name);
  return a;
}

static void test_key_encoding_injective(void) {
  /* pairs of distinct keys (two attributes each, SK absent when sk is
  ** NULL) that must never encode alike */
  static const struct {
    ddb_type t1, t2;
    const char *pk1, *sk1;
    size_t npk1, nsk1;
    const char *pk2, *sk2;
    size_t npk2, nsk2;
  } v[] = {
      /* a partition/sort split with the separators inside a part */
      {DDB_S, DDB_S, "a",
       "b\x1eSK\x1fS\x1f"
       "c",
       1, 8,
       "a\x1eSK\x1fS\x1f"
       "b",
       "c", 8, 1},
      {DDB_S, DDB_S, "a|b", "c", 3, 1, "a", "b|c", 1, 3},
      {DDB_S, DDB_S, "a\x1e", "b", 2, 1, "a",
       "\x1e"
       "b",
       1, 2},
      {DDB_S, DDB_S, "a\x1f", "b", 2, 1, "a",
       "\x1f"
       "b",
       1, 2},
      /* NUL bytes are part of a value */
      {DDB_S, DDB_S, "a\0b", "c", 3, 1, "a", "b\0c", 1, 3},
      {DDB_S, DDB_S, "a\0", "b", 2, 1, "a", "\0b", 1, 2},
      {DDB_S, DDB_S, "a", "", 1, 0, "a\0", "", 2, 0},
      /* the same text as S, N and B */
      {DDB_S, DDB_S, "5", "x", 1, 1, "5", "x", 1, 1}, /* (equal: control) */
  };
  static const ddb_type types[] = {DDB_S, DDB_N, DDB_B};
  ddb_buf b1, b2;
  ddb_av k1[2], k2[2];
  size_t i, j, m;
  ddb_buf_init(&b1, 4096);
  ddb_buf_init(&b2, 4096);
  for(i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
    int same = i == sizeof(v) / sizeof(v[0]) - 1;
    k1[0] = keyav("PK", v[i].t1, v[i].pk1, v[i].npk1);
    k1[1] = keyav("SK", v[i].t2, v[i].sk1, v[i].nsk1);
    k2[0] = keyav("PK", v[i].t1, v[i].pk2, v[i].npk2);
    k2[1] = keyav("SK", v[i].t2, v[i].sk2, v[i].nsk2);
    if(!CHECK(encode_key(&b1, k1, 2) == 0 && encode_key(&b2, k2, 2) == 0))
      continue;
    if(!CHECK_MSG((b1.len == b2.len && memcmp(b1.p, b2.p, b1.len) == 0) ==
                      same,
                  "pair %zu: %s", i,
                  same ? "equal keys encode apart"
                       : "distinct keys share "
                         "an encoding"))
      continue;
  }
  /* one text, three types: three keys (a partition key alone) */
  for(i = 0; i < 3; i++)
    for(j = i + 1; j < 3; j++) {
      k1[0] = keyav("PK", types[i], "5", 1);
      k2[0] = keyav("PK", types[j], "5", 1);
      CHECK(encode_key(&b1, k1, 1) == 0 && encode_key(&b2, k2, 1) == 0 &&
            (b1.len != b2.len || memcmp(b1.p, b2.p, b1.len) != 0));
    }
  /* a one-attribute key never encodes as a two-attribute one */
  k1[0] = keyav("PK", DDB_S, "a", 1);
  k1[1] = keyav("SK", DDB_S, "b", 1);
  CHECK(encode_key(&b1, k1, 2) == 0);
  for(m = 0; m < b1.len; m++) {
    /* no prefix of the 2-part encoding is a 1-part encoding of any PK:
    ** take the candidate PK text between the first and last bytes */
    k2[0] = keyav("PK", DDB_S, b1.p, m);
    CHECK(encode_key(&b2, k2, 1) == 0);
    if(!CHECK_MSG(b1.len != b2.len || memcmp(b1.p, b2.p, b1.len) != 0,
                  "PK of %zu bytes encodes as (PK, SK)", m))
      break;
  }
  /* numbers: every spelling of one value is one key, N "1e2" and "100"
  ** are one, and "1" then "e2" split differently is not */
  k1[0] = keyav("PK", DDB_N, "100", 3);
  k2[0] = keyav("PK", DDB_N, "1E+2", 4);
  CHECK(encode_key(&b1, k1, 1) == 0 && encode_key(&b2, k2, 1) == 0 &&
        b1.len == b2.len && memcmp(b1.p, b2.p, b1.len) == 0);
  k1[0] = keyav("PK", DDB_N, "1", 1);
  k1[1] = keyav("SK", DDB_N, "22", 2);
  k2[0] = keyav("PK", DDB_N, "12", 2);
  k2[1] = keyav("SK", DDB_N, "2", 1);
  CHECK(encode_key(&b1, k1, 2) == 0 && encode_key(&b2, k2, 2) == 0 &&
        (b1.len != b2.len || memcmp(b1.p, b2.p, b1.len) != 0));
  ddb_buf_free(&b1);
  ddb_buf_free(&b2);
}

/* Environment variables the principal tests set, saved and restored. */
static const char *const scope_env[] = {"AWS_PROFILE",
                                        "AWS_ACCESS_KEY_ID",
                                        "AWS_SECRET_ACCESS_KEY",
                                        "AWS_SESSION_TOKEN",
                                        "AWS_CONFIG_FILE",
                                        "AWS_SHARED_CREDENTIALS_FILE",
                                        "AWS_REGION",
                                        "AWS_DEFAULT_REGION",
                                        "AWS_ENDPOINT_URL",
                                        "AWS_ENDPOINT_URL_DYNAMODB"};
#define N_SCOPE_ENV (sizeof(scope_env) / sizeof(scope_env[0]))

/* A client of endpoint and region signing with (ak, sk, token), nothing
** read from files; NULL on failure.  The endpoint is never contacted. */
static ddb_client *scoped_client(const char *endpoint, const char *region,
                                 const char *ak, const char *sk,
                                 const char *token) {
  ddb_config cfg;
  ddb_client *c = NULL;
  ddb_error err;
  memset(&cfg, 0, sizeof(cfg));
  cfg.endpoint = endpoint;
  cfg.region = region;
  cfg.max_retries = 0;
  setenv("AWS_ACCESS_KEY_ID", ak, 1);
  setenv("AWS_SECRET_ACCESS_KEY", sk, 1);
  if(token)
    setenv("AWS_SESSION_TOKEN", token, 1);
  else
    unsetenv("AWS_SESSION_TOKEN");
  ddb_error_clear(&err);
  if(ddb_client_new(&cfg, &c, &err))
    tap_diag("  ddb_client_new: %s", err.message);
  return c;
}

/* Does c's item cache answer for the key PK=pk of table T (no request)?
** On a hit *val (if given) is the item's attribute "v" (or "-" for a
** cached "no such item"). */
static int cached_for(ddb_client *c, const char *pk, char *val, size_t cap) {
  ddbc_policy pol = {0, 300, 300};
  ddb_av k = keyav("PK", DDB_S, pk, strlen(pk));
  ddb_item *it = NULL;
  int hit = ddbc_item_cached(c, "T", &k, 1, &pol, &it);
  if(hit && val) {
    const ddb_av *a = it ? ddb_item_get(it, "v") : NULL;
    snprintf(val, cap, "%s", a ? a->text : "-");
  }
  ddb_item_unref(it);
  return hit;
}

/* Write item {PK: pk, v: v} to table T through c (write-through: the
** cache then holds it for c). */
static void write_through(ddb_client *c, const char *pk, const char *v) {
  static char tname[] = "T", pkname[] = "PK";
  ddbc_policy pol = {0, 300, 300};
  ddb_index ix;
  ddb_table_desc d;
  ddb_av a[2];
  ddb_item *it;
  memset(&ix, 0, sizeof(ix));
  ix.pk.name = pkname;
  ix.pk.type = DDB_S;
  memset(&d, 0, sizeof(d));
  d.name = tname;
  d.n_indexes = 1;
  d.indexes = &ix;
  a[0] = keyav("PK", DDB_S, pk, strlen(pk));
  a[1] = keyav("v", DDB_S, v, strlen(v));
  it = ddb_item_from_avs(a, 2);
  if(CHECK(it != NULL))
    ddbc_note_write(c, &d, NULL, 1, it, it, &pol);
  ddb_item_unref(it);
}

static void test_principals_apart(void) {
  char *saved[N_SCOPE_ENV];
  char val[64];
  ddb_client *a, *a2, *b, *wrong, *tok1, *tok2, *west, *alias, *alias2,
      *https1, *https2, *other_port;
  size_t i;

  for(i = 0; i < N_SCOPE_ENV; i++) {
    const char *v = getenv(scope_env[i]);
    saved[i] = v ? strdup(v) : NULL;
    unsetenv(scope_env[i]);
  }
  setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
  ddbc_clear();
  a = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDA", "secretA",
                    NULL);
  a2 = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDA", "secretA",
                     NULL);
  b = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDB", "secretB",
                    NULL);
  wrong = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDA",
                        "not-secretA", NULL);
  tok1 = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDA", "secretA",
                       "token1");
  tok2 = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDA", "secretA",
                       "token2");
  west = scoped_client("http://127.0.0.1:1", "us-west-2", "AKIDA", "secretA",
                       NULL);
  alias = scoped_client("http://LocalHost:1/", "us-east-1", "AKIDA", "secretA",
                        NULL);
  alias2 = scoped_client("http://localhost.:1//", "us-east-1", "AKIDA",
                         "secretA", NULL);
  https1 = scoped_client("https://DynamoDB.us-east-1.amazonaws.com:443/",
                         "us-east-1", "AKIDA", "secretA", NULL);
  https2 = scoped_client("https://dynamodb.us-east-1.amazonaws.com",
                         "us-east-1", "AKIDA", "secretA", NULL);
  other_port = scoped_client("http://127.0.0.1:2", "us-east-1", "AKIDA",
                             "secretA", NULL);
  if(!CHECK(a && a2 && b && wrong && tok1 && tok2 && west && alias && alias2 &&
            https1 && https2 && other_port))
    goto done;

  write_through(a, "x", "A's");
  CHECK(cached_for(a, "x", val, sizeof(val)) && strcmp(val, "A's") == 0);
  /* the same credentials, endpoint and region: one cache */
  CHECK(cached_for(a2, "x", val, sizeof(val)) && strcmp(val, "A's") == 0);
  /* another access key, another secret with the same key id, a session
  ** token, another region, another port: never A's entry */
  CHECK_MSG(!cached_for(b, "x", NULL, 0), "B read A's cached item");
  CHECK_MSG(!cached_for(wrong, "x", NULL, 0),
            "a wrong secret read the right one's cached item");
  CHECK_MSG(!cached_for(tok1, "x", NULL, 0),
            "credentials with a session token read those without");
  CHECK_MSG(!cached_for(west, "x", NULL, 0), "us-west-2 read us-east-1's");
  CHECK_MSG(!cached_for(other_port, "x", NULL, 0),
            "another port read the item");
  /* one server, however its URL is spelled: one cache */
  CHECK_MSG(cached_for(alias, "x", val, sizeof(val)),
            "http://LocalHost:1/ is not http://127.0.0.1:1");
  CHECK_MSG(cached_for(alias2, "x", val, sizeof(val)),
            "http://localhost.:1// is not http://127.0.0.1:1");
  write_through(https1, "y", "aws");
  CHECK_MSG(cached_for(https2, "y", val, sizeof(val)),
            "the default port 443, case and slash made two caches");

  /* B's own item, then a write through A: B's entry is dropped (A's
  ** write may have changed what B reads, on real AWS one table), never
  ** replaced by A's item */
  write_through(b, "z", "B's");
  CHECK(cached_for(b, "z", val, sizeof(val)) && strcmp(val, "B's") == 0);
  CHECK(!cached_for(tok1, "z", NULL, 0));
  write_through(tok2, "z", "tok2's");
  CHECK(cached_for(tok2, "z", val, sizeof(val)) && strcmp(val, "tok2's") == 0);
  CHECK_MSG(!cached_for(b, "z", NULL, 0),
            "B still reads its entry after tok2 wrote the item");
  write_through(b, "z", "B's");
  CHECK(cached_for(b, "z", val, sizeof(val)) && strcmp(val, "B's") == 0);
  write_through(a, "z", "A's");
  CHECK(cached_for(a, "z", val, sizeof(val)) && strcmp(val, "A's") == 0);
  CHECK_MSG(!cached_for(b, "z", NULL, 0),
            "B still reads its entry after A wrote the item");
  CHECK_MSG(!cached_for(tok2, "z", NULL, 0),
            "tok2 still reads its entry after A wrote the item");

done:
  ddb_client_free(a);
  ddb_client_free(a2);
  ddb_client_free(b);
  ddb_client_free(wrong);
  ddb_client_free(tok1);
  ddb_client_free(tok2);
  ddb_client_free(west);
  ddb_client_free(alias);
  ddb_client_free(alias2);
  ddb_client_free(https1);
  ddb_client_free(https2);
  ddb_client_free(other_port);
  ddbc_clear();
  for(i = 0; i < N_SCOPE_ENV; i++) {
    if(saved[i])
      setenv(scope_env[i], saved[i], 1);
    else
      unsetenv(scope_env[i]);
    free(saved[i]);
  }
}

/* Write-through (cache/write.c): a write whose outcome is unknown (here the
** endpoint refuses the connection: not a failed condition) may have been
** applied, so each of the five calls drops the item's cached entry. */
static void test_write_unknown_drops(void) {
  static char tname[] = "T", pkname[] = "PK";
  static const char *const key_names[] = {"PK"};
  static const char *const remove[] = {"v"};
  ddbc_policy pol = {0, 300, 300};
  char *saved[N_SCOPE_ENV];
  char val[64];
  ddb_index ix;
  ddb_table_desc d;
  ddb_av a[2];
  ddb_item *it = NULL, *out = NULL;
  ddb_client *c;
  ddb_write w;
  ddb_error err;
  size_t i;
  int k;

  for(i = 0; i < N_SCOPE_ENV; i++) {
    const char *v = getenv(scope_env[i]);
    saved[i] = v ? strdup(v) : NULL;
    unsetenv(scope_env[i]);
  }
  setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
  ddbc_clear();
  memset(&ix, 0, sizeof(ix));
  ix.pk.name = pkname;
  ix.pk.type = DDB_S;
  memset(&d, 0, sizeof(d));
  d.name = tname;
  d.n_indexes = 1;
  d.indexes = &ix;
  a[0] = keyav("PK", DDB_S, "x", 1);
  a[1] = keyav("v", DDB_S, "new", 3);
  c = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDW", "sW", NULL);
  it = ddb_item_from_avs(a, 2);
  if(!CHECK(c && it))
    goto done;
  for(k = 0; k < 5; k++) {
    ddb_result r = DDB_OK;
    write_through(c, "x", "old");
    if(!CHECK(cached_for(c, "x", val, sizeof(val)) && strcmp(val, "old") == 0))
      break;
    memset(&w, 0, sizeof(w));
    w.kind = DDB_WRITE_PUT;
    w.item = it;
    ddb_error_clear(&err);
    switch(k) {
    case 0:
      r = ddbc_put_item(c, &d, it, key_names, 1, DDB_COND_NONE, &pol, &out,
                        &err);
      break;
    case 1:
      r = ddbc_delete_item(c, &d, it, key_names, 1, DDB_COND_NONE, &pol, &out,
                           &err);
      break;
    case 2:
      r = ddbc_update_item(c, &d, it, key_names, 1, NULL, remove, 1, it, &pol,
                           &out, &err);
      break;
    case 3:
      r = ddbc_transact_write(c, &d, &w, 1, key_names, 1, NULL, &pol, &err);
      break;
    default:
      r = ddbc_batch_write(c, &d, &w, 1, key_names, 1, &pol, &err);
      break;
    }
    CHECK_MSG(r != DDB_OK && out == NULL, "write %d did not fail", k);
    CHECK_MSG(!cached_for(c, "x", NULL, 0),
              "write %d of unknown outcome left the cached item", k);
    ddb_item_unref(out);
    out = NULL;
  }

done:
  ddb_item_unref(it);
  ddb_client_free(c);
  ddbc_clear();
  for(i = 0; i < N_SCOPE_ENV; i++) {
    if(saved[i])
      setenv(scope_env[i], saved[i], 1);
    else
      unsetenv(scope_env[i]);
    free(saved[i]);
  }
}

/* Past DDBC_MAX_PRINCIPALS (256) principals seen, the cache forgets
** everything once, and then remembers principals again. */
static void test_principals_overflow(void) {
  char *saved[N_SCOPE_ENV];
  char ak[32], val[64];
  ddb_client *a, *b, *c;
  size_t i;
  int k, kept = 1;

  for(i = 0; i < N_SCOPE_ENV; i++) {
    const char *v = getenv(scope_env[i]);
    saved[i] = v ? strdup(v) : NULL;
    unsetenv(scope_env[i]);
  }
  setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
  ddbc_clear();
  a = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDA", "sA", NULL);
  b = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDB", "sB", NULL);
  if(!CHECK(a && b))
    goto done;
  write_through(a, "x", "A's");
  write_through(b, "y", "B's");
  /* 254 more principals: 256 in all, every entry kept */
  for(k = 0; k < 254; k++) {
    snprintf(ak, sizeof(ak), "AKID%03d", k);
    c = scoped_client("http://127.0.0.1:1", "us-east-1", ak, "s", NULL);
    if(!c)
      break;
    write_through(c, "w", ak);
    kept &= cached_for(c, "w", NULL, 0) == 1;
    ddb_client_free(c);
  }
  CHECK_MSG(kept, "a principal's own write was not cached");
  CHECK(cached_for(a, "x", val, sizeof(val)) && strcmp(val, "A's") == 0);
  CHECK(cached_for(b, "y", val, sizeof(val)) && strcmp(val, "B's") == 0);
  /* the 257th: everything is forgotten, then it is remembered */
  c = scoped_client("http://127.0.0.1:1", "us-east-1", "AKIDC", "sC", NULL);
  if(!CHECK(c != NULL))
    goto done;
  write_through(c, "x", "C's");
  CHECK_MSG(!cached_for(a, "x", NULL, 0), "A's entry survived the reset");
  CHECK_MSG(!cached_for(b, "y", NULL, 0), "B's entry survived the reset");
  CHECK(cached_for(c, "x", val, sizeof(val)) && strcmp(val, "C's") == 0);
  /* A is remembered again: C's write drops A's new entry */
  write_through(a, "x", "A's again");
  CHECK(cached_for(a, "x", val, sizeof(val)) && strcmp(val, "A's again") == 0);
  write_through(c, "x", "C's again");
  CHECK_MSG(!cached_for(a, "x", NULL, 0),
            "after the reset, A's entry survived C's write");
  ddb_client_free(c);

done:
  ddb_client_free(a);
  ddb_client_free(b);
  ddbc_clear();
  for(i = 0; i < N_SCOPE_ENV; i++) {
    if(saved[i])
      setenv(scope_env[i], saved[i], 1);
    else
      unsetenv(scope_env[i]);
    free(saved[i]);
  }
}

const tap_test tap_cache_tests[] = {
    {"cache: LRU order within probation, tail evicted first",
     test_lru_probation_order},
    {"cache: a hit promotes to protected, LRU order there",
     test_lru_hit_promotes},
    {"cache: protected holds at most DDBC_PROTECTED_SHARE, demotes its tail",
     test_lru_protected_share},
    {"cache: shrinking demotes, evicts probation before protected",
     test_lru_shrink_order},
    {"cache: a one-pass stream leaves hot entries (segmented, not plain LRU)",
     test_segmented_scan_resistance},
    {"cache: TTL expiry is lazy on get (items and pages)",
     test_ttl_lazy_on_get},
    {"cache: TTL sweep on fill, bounded by DDBC_SWEEP per segment",
     test_ttl_sweep},
    {"cache: an entry older than the reader's TTL is a miss for that reader",
     test_ttl_reader_max_age},
    {"cache: ttl <= 0 stores nothing and drops the older entry",
     test_ttl_zero},
    {"cache: bytes is the sum of the charged sizes",
     test_bytes_sum_of_charges},
    {"cache: bytes never above the budget after any operation",
     test_bytes_within_budget_always},
    {"cache: set_budget shrinking evicts and returns the old budget",
     test_bytes_set_budget_shrinks},
    {"cache: a value over 1/DDBC_MAX_SHARE of the budget is not stored",
     test_bytes_share_cap},
    {"cache: packed items round-trip exactly (every type, nesting)",
     test_packed_round_trip},
    {"cache: a packed store keeps its own copy, hits get new items",
     test_packed_store},
    {"cache: the packed store's charge tracks mallinfo2 (budget honoured)",
     test_packed_accounting},
    {"cache: negative item entries", test_negative_entries},
    {"cache: an item fill is refused after a bump of its key",
     test_gen_fill_refused_after_bump},
    {"cache: a page is stale after a bump of either tag", test_gen_page_stale},
    {"cache: write_item replaces the cached item",
     test_gen_write_item_replaces},
    {"cache: the tag table reset (DDBC_MAX_TAGS) makes every page stale",
     test_gen_tag_table_reset},
    {"cache: empty and release free every entry", test_empty_and_release},
    {"cache: distinct keys never share an encoding (separators, NUL, types)",
     test_key_encoding_injective},
    {"cache: entries apart by credentials and region, one per server",
     test_principals_apart},
    {"cache: past 256 principals the cache forgets everything once",
     test_principals_overflow},
    {"cache: a write-through of unknown outcome drops the cached item",
     test_write_unknown_drops},
    {NULL, NULL}};
