/*
** test_cache_gen.c -- unit tests of the cache engine (cache/store.c), part
** two: packed items and their accounting, negative entries, generations
** and their table, freeing.  No network.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__) /* set by the headers above */
#include <malloc.h>
#endif

#include "../../cache/cache_int.h"
#include "store_fixtures.h"

/* ------------------------------------------------------------------------
** Packed items (ddbc_store_create_packed, as cache.c makes its store)
*/

static const ddbc_item_codec codec = {ddb_item_packed_size, ddb_item_pack,
                                      ddb_item_unpack, ddbc_packed_json};

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
      /* decoded: plain when no string had an escape, which implies it */
      CHECK_MSG(!it->plain || back->plain, "plain %d of %s", it->plain, json);
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

/* The JSON ddb_item_to_json renders for it (malloc()ed, NUL-terminated). */
static char *json_of(const ddb_item *it) {
  ddb_buf b;
  ddb_buf_init(&b, DDB_JSON_MAX);
  ddb_item_to_json(it, &b);
  return ddb_buf_take(&b, NULL);
}

/* A warm lookup's view (ddbc_store_peek_item_view): the packed item copied
** out, the JSON rendered at the first hit that asks for it and kept in the
** entry (its charge grown by it), the same at the next hit, dropped with
** the entry when a write replaces it; a miss not counted, a hit counted;
** a negative entry found = 0; a store that does not pack answers 0. */
static void test_packed_view(void) {
  ddbc_store *s = ddbc_store_create_packed(1 << 20, &codec);
  ddbc_store *plain = ddbc_store_create(1 << 20);
  ddb_item *it = typed("{\"PK\":{\"S\":\"K#1\"},\"name\":{\"S\":\"Ann\"},"
                       "\"n\":{\"N\":\"7\"},\"l\":{\"L\":[{\"S\":\"x\"}]}}");
  ddb_item *it2 = typed("{\"PK\":{\"S\":\"K#1\"},\"name\":{\"S\":\"Bea\"}}");
  ddbc_item_view v;
  ddb_item *back;
  char *want = NULL, *want2 = NULL;
  size_t b0, b1;
  double age = -1;
  memset(&v, 0, sizeof(v));
  if(!it || !it2)
    goto done;
  want = json_of(it);
  want2 = json_of(it2);
  fill(s, "k", it, 0, 10);
  fill(plain, "k", it, 0, 10);
  b0 = (size_t)stats(s).bytes;
  CHECK_INT(ddbc_store_peek_item_view(s, "x", 1, 1, ANY_AGE, 0, &v, NULL), 0);
  CHECK_INT((int)stats(s).item_misses, 0);
  CHECK_INT(ddbc_store_peek_item_view(s, "k", 1, 1.5, ANY_AGE, 0, &v, &age),
            1);
  CHECK(v.found && v.json_len == 0 && age == 1.5);
  CHECK_INT((int)v.packed_len, (int)ddb_item_packed_size(it));
  back = v.packed ? ddb_item_unpack(v.packed, v.packed_len) : NULL;
  CHECK(back && same_tree(&it->root, &back->root));
  ddb_item_unref(back);
  CHECK_INT((int)(stats(s).bytes - b0), 0); /* no JSON asked: none kept */
  CHECK_INT(ddbc_store_peek_item_view(s, "k", 1, 2, ANY_AGE, DDBC_VIEW_JSON,
                                      &v, NULL),
            1);
  CHECK(v.json && want && v.json_len == strlen(want) &&
        strcmp(v.json, want) == 0);
  b1 = (size_t)stats(s).bytes;
  CHECK_MSG(b1 >= b0 + strlen(want), "charge %zu -> %zu", b0, b1);
  CHECK_INVARIANTS(s);
  /* the caller's copy: the entry keeps its own */
  memset(v.json, '?', v.json_len);
  CHECK_INT(ddbc_store_peek_item_view(s, "k", 1, 3, ANY_AGE, DDBC_VIEW_JSON,
                                      &v, NULL),
            1);
  CHECK(strcmp(v.json, want) == 0);
  CHECK_INT((int)stats(s).bytes, (int)b1); /* rendered once */
  CHECK_INT((int)stats(s).item_hits, 3);
  /* a write replaces the entry, its JSON with it */
  ddbc_store_write_item(s, "k", 1, it2, 4, 10);
  CHECK_INT(ddbc_store_peek_item_view(s, "k", 1, 5, ANY_AGE, DDBC_VIEW_JSON,
                                      &v, NULL),
            1);
  CHECK(want2 && strcmp(v.json, want2) == 0);
  ddbc_store_write_item(s, "k", 1, NULL, 6, 10);
  CHECK_INT(ddbc_store_peek_item_view(s, "k", 1, 7, ANY_AGE, DDBC_VIEW_JSON,
                                      &v, NULL),
            1);
  CHECK(!v.found);
  CHECK_INT(ddbc_store_peek_item_view(plain, "k", 1, 1, ANY_AGE, 0, &v, NULL),
            0);
  CHECK_INVARIANTS(s);
done:
  free(v.packed);
  free(v.json);
  free(want);
  free(want2);
  ddb_item_unref(it);
  ddb_item_unref(it2);
  ddbc_store_release(s);
  ddbc_store_release(plain);
}

/* The budget stays honest when hits keep JSON in their entries: fill a
** packed store past its budget, asking each entry's JSON once, and compare
** the charge with what malloc gave out (as test_packed_accounting). */
static void test_packed_view_accounting(void) {
#ifdef HAVE_MALLINFO2
  const size_t budget = 4u << 20;
  size_t m0, m1, n, got, real;
  ddbc_store *s = ddbc_store_create_packed(budget, &codec);
  ddbc_item_view v;
  ddb_item *it;
  char key[128], json[512];
  memset(&v, 0, sizeof(v));
  /* the view's buffers grown once before counting */
  v.packed = malloc(4096);
  v.json = malloc(4096);
  v.packed_cap = v.json_cap = 4096;
  m0 = heap_in_use();
  for(n = 0; n < 30000; n++) {
    size_t kl = (size_t)snprintf(key, sizeof(key), "I\x05K#%05zu", n);
    snprintf(json, sizeof(json),
             "{\"PK\":{\"S\":\"K#%05zu\"},\"name\":{\"S\":\"customer %zu\"},"
             "\"pad\":{\"S\":\"%0*d\"}}",
             n, n, (int)(n % 200), 0);
    it = typed(json);
    if(!it)
      break;
    ddbc_store_fill_item(s, key, kl, it, ddbc_store_gen(s, key, kl), 0, 100);
    ddb_item_unref(it);
    if(n % 2 == 0) /* half of them read with their JSON */
      ddbc_store_peek_item_view(s, key, kl, 0, ANY_AGE, DDBC_VIEW_JSON, &v,
                                NULL);
  }
  m1 = heap_in_use();
  got = (size_t)stats(s).bytes;
  real = m1 - m0;
  CHECK(stats(s).evictions > 0);
  CHECK(got <= budget);
  CHECK_MSG(got >= real - real / 100, "charged %zu, malloc grew %zu", got,
            real);
  CHECK_MSG(got <= real + real / 10, "charged %zu, malloc grew %zu", got,
            real);
  CHECK_INVARIANTS(s);
  ddbc_store_release(s);
  free(v.packed);
  free(v.json);
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

const tap_test tap_cache_gen_tests[] = {
    {"cache: packed items round-trip exactly (every type, nesting)",
     test_packed_round_trip},
    {"cache: a packed store keeps its own copy, hits get new items",
     test_packed_store},
    {"cache: the packed store's charge tracks mallinfo2 (budget honoured)",
     test_packed_accounting},
    {"cache: a view copies the entry out, its JSON rendered once and kept",
     test_packed_view},
    {"cache: the charge tracks mallinfo2 with JSON kept in entries",
     test_packed_view_accounting},
    {"cache: negative item entries", test_negative_entries},
    {"cache: an item fill is refused after a bump of its key",
     test_gen_fill_refused_after_bump},
    {"cache: a page is stale after a bump of either tag", test_gen_page_stale},
    {"cache: write_item replaces the cached item",
     test_gen_write_item_replaces},
    {"cache: the tag table reset (DDBC_MAX_TAGS) makes every page stale",
     test_gen_tag_table_reset},
    {"cache: empty and release free every entry", test_empty_and_release},
    {NULL, NULL}};
