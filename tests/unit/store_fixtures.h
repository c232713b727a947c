/*
** store_fixtures.h -- what the cache engine's unit tests share
** (test_cache.c, test_cache_gen.c): items and pages of a known size, fill
** and lookup shorthands, the charge of an entry, the LRU order as a string.
*/
#ifndef STORE_FIXTURES_H
#define STORE_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cache/ddb_cache.h"
#include "../../cache/store.h"
#include "tap.h"

/* max_age for readers that take entries of any age (within their TTL). */
#define ANY_AGE 1e9

/* A new item (one reference) whose allocation is exactly `bytes` long, so
** that the charge of its entry is known.  bytes >= sizeof(ddb_item). */
static inline ddb_item *mkitem(size_t bytes) {
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
static inline ddb_page *mkpage(size_t bytes) {
  ddb_page *p = calloc(1, sizeof(*p));
  if(!p)
    abort();
  p->refs = 1;
  p->bytes = bytes;
  return p;
}

/* The reference count of an item or a page (read without the store's
** lock: the tests are single-threaded). */
static inline int refs_of_item(const ddb_item *it) {
  return __atomic_load_n(&it->refs, __ATOMIC_RELAXED);
}
static inline int refs_of_page(const ddb_page *p) {
  return __atomic_load_n(&p->refs, __ATOMIC_RELAXED);
}

/* Fill item key (a C string) at time now, with the key's current
** generation (no write in between). */
static inline void fill(ddbc_store *s, const char *key, ddb_item *it,
                        double now, double ttl) {
  uint64_t g = ddbc_store_gen(s, key, strlen(key));
  ddbc_store_fill_item(s, key, strlen(key), it, g, now, ttl);
}

/* Is key cached (as an item) at time now?  A hit promotes the entry, like
** any get. */
static inline int has(ddbc_store *s, const char *key, double now) {
  ddb_item *out = NULL;
  int hit = ddbc_store_get_item(s, key, strlen(key), now, ANY_AGE, &out);
  ddb_item_unref(out);
  return hit;
}

/* Is the page under key cached at time now? */
static inline int has_page(ddbc_store *s, const char *key, double now) {
  ddb_page *out = NULL;
  int hit = ddbc_store_get_page(s, key, strlen(key), now, ANY_AGE, &out);
  ddb_page_unref(out);
  return hit;
}

/* The tags of a page. */
static inline void tags2(ddbc_tag t[2], const char *a, const char *b) {
  t[0].p = a;
  t[0].len = strlen(a);
  t[1].p = b;
  t[1].len = strlen(b);
}

/* Fill page key under tags (a, b) with their current generations. */
static inline void fill_page(ddbc_store *s, const char *key, const char *a,
                             const char *b, ddb_page *pg, double now,
                             double ttl) {
  ddbc_tag t[2];
  uint64_t g[2];
  tags2(t, a, b);
  g[0] = ddbc_store_gen(s, a, strlen(a));
  g[1] = ddbc_store_gen(s, b, strlen(b));
  ddbc_store_fill_page(s, key, strlen(key), t, g, pg, now, ttl);
}

static inline ddbc_store_stats stats(ddbc_store *s) {
  ddbc_store_stats st;
  ddbc_store_stats_get(s, &st);
  return st;
}

/* The charge of an item entry with a key of key_len bytes and a value of
** value_bytes (0: a negative entry), measured on a scratch store. */
static inline size_t charge_of(size_t key_len, size_t value_bytes) {
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
static inline void order_cb(const char *key, size_t key_len, size_t charge,
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
static inline const char *order(ddbc_store *s, int seg) {
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

#endif
