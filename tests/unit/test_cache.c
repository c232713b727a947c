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

#include "store_fixtures.h"

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
    {NULL, NULL}};
