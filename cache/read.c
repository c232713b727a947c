/*
** read.c -- one job: the read paths through the caches.  GetItem,
** BatchGetItem, Query and Scan pages: the process's store first, then
** the shared tier (shared.c), then DynamoDB, filling both on the way
** back; a consistent read bypasses them (see cache.c's "Consistency").
*/
#include <stdlib.h>
#include <string.h>

#include "ddb_cache.h"
#include "cache_int.h"
#include "shared.h"
#include "store.h"

/* ------------------------------------------------------------------------
** The shared tier's hooks (shared.c).  Redis is asked after a miss here
** and before DynamoDB, once the generations of the request are captured,
** so that a write of this process between the two still refuses the
** fill; what Redis answers fills this cache for what is left of the
** entry's TTL, and what DynamoDB answers fills both.  An entry's name in
** Redis is its key here less the head (kind, place, principal), which are
** this process's own ids: shared.c names it under the credentials.
*/

/* What is left of a TTL for an entry age seconds old (never 0, which
** would not cache). */
static double ttl_left(double ttl, double age) {
  return ttl - age > 0.001 ? ttl - age : 0.001;
}

/* The item of key k from Redis, filled into s under gen: 1 with *out
** (NULL: no such item); else 0, and *lease the key's lease (lease.c):
** taken (WON), or another reader's fill waited for (HIT: then 1),
** FALLBACK (none came), or NONE (no lease: leases off, Redis failed, or
** an entry there not to be taken). */
static int shared_item_get(ddbc_store *s, ddb_client *c, const char *table,
                           const ddb_buf *k, uint64_t gen,
                           const ddbc_policy *pol, ddb_item **out,
                           unsigned char *lease, ddbc_lease_token *tok) {
  char *tail;
  size_t len;
  unsigned char hit = 0;
  double age = 0, wait = ddbc_lease_wait_of(pol, DDBC_READ_ITEM);
  *lease = DDBC_LEASE_NONE;
  tail = (char *)ddbc_shared_tail(c, k, &len);
  ddbc_shared_get_items(pol->shared, c, table, &tail, &len, 1, pol->item_ttl,
                        ddbc_shared_now(), out, &hit, &age);
  if(hit == 0 && wait > 0) {
    ddbc_lease_take_items(pol->shared, c, table, &tail, &len, 1, wait,
                          pol->item_ttl, tok, lease, out, &age);
    ddbc_lease_wait_items(pol->shared, c, table, &tail, &len, 1, wait,
                          pol->item_ttl, tok, lease, out, &age);
    hit = *lease == DDBC_LEASE_HIT;
  }
  if(hit == 1)
    ddbc_store_fill_item(s, k->p, k->len, *out, gen, ddbc_now(),
                         ttl_left(pol->item_ttl, age));
  return hit == 1;
}

/* DynamoDB's answers items[0..n) (NULL: none; items NULL: the read
** failed) for the cache keys ckeys[0..n) (NULL: not cacheable), into
** Redis: by the lease of each (lease[i]: WON fills by compare-and-set, or
** releases when the read failed; NONE fills as without leases; FALLBACK
** fills nothing); lease NULL: every key NONE. */
static void shared_fill(ddb_client *c, const char *table, char *const *ckeys,
                        const size_t *clens, size_t n, ddb_item *const *items,
                        const unsigned char *lease,
                        const ddbc_lease_token *tok, const ddbc_policy *pol) {
  char **tails = calloc(n ? n : 1, sizeof(*tails));
  char **plain = calloc(n ? n : 1, sizeof(*plain));
  size_t *lens = calloc(n ? n : 1, sizeof(*lens));
  size_t i;
  if(tails && lens && plain) {
    for(i = 0; i < n; i++)
      if(ckeys[i]) {
        ddb_buf k = {ckeys[i], clens[i], 0, 0, 0, 1};
        tails[i] = (char *)ddbc_shared_tail(c, &k, &lens[i]);
        if(!lease || lease[i] == DDBC_LEASE_NONE)
          plain[i] = tails[i];
      }
    if(lease)
      ddbc_lease_fill_items(pol->shared, c, table, tails, lens, n, lease,
                            items, items == NULL, pol->item_ttl, tok,
                            ddbc_shared_now());
    if(items)
      ddbc_shared_fill_items(pol->shared, c, table, plain, lens, n, items,
                             pol->item_ttl, ddbc_shared_now());
  }
  free(tails);
  free(plain);
  free(lens);
}

/* ------------------------------------------------------------------------
** Reads.  What goes to DynamoDB is counted among the hot keys (hot.c)
** with what its tally says it cost; what the cache answers or lacks is
** charged to the client's meter (the statement's: ddb_meter), with the
** answer's age, and a page answered from the cache is logged (cached=1).
*/

/* ddb_read_page, its Query counted among the hot keys. */
static ddb_result read_page_counted(ddb_client *c, const ddb_read *r,
                                    ddb_page **out, ddb_error *err) {
  ddb_tally t, *prev = ddb_tally_begin(&t);
  double t0 = ddbc_now();
  ddb_result result = ddb_read_page(c, r, out, err);
  ddb_tally_end(prev);
  if(result == DDB_OK) /* (the lease wait: twice this) */
    ddbc_lease_note_read(DDBC_READ_PAGE, ddbc_now() - t0);
  if(r->pk_name && t.requests) {
    ddbc_hot_note(r->table, r->index, &r->pk, 1, (uint64_t)t.items, t.rcu, 0,
                  t.throttles);
    ddbc_hot_mark(r->table, r->index, &r->pk, &t);
  }
  return result;
}

/* ddb_get_item, counted among the hot keys by key's partition key
** key_names[0]. */
static ddb_result get_item_counted(ddb_client *c, const char *table,
                                   const ddb_item *key,
                                   const char *const *key_names,
                                   int consistent, ddb_item **out,
                                   ddb_error *err) {
  ddb_tally t, *prev = ddb_tally_begin(&t);
  double t0 = ddbc_now();
  ddb_result result = ddb_get_item(c, table, key, consistent, out, err);
  ddb_tally_end(prev);
  if(result == DDB_OK)
    ddbc_lease_note_read(DDBC_READ_ITEM, ddbc_now() - t0);
  if(t.requests) {
    ddbc_hot_note(table, NULL, ddb_item_get(key, key_names[0]), 1,
                  (uint64_t)t.items, t.rcu, 0, t.throttles);
    ddbc_hot_mark(table, NULL, ddb_item_get(key, key_names[0]), &t);
  }
  return result;
}

/* ddb_batch_get, each key counted among the hot keys (one request each,
** the capacity shared). */
static ddb_result batch_get_counted(ddb_client *c, const char *table,
                                    const ddb_item *const *keys, size_t n,
                                    const char *const *key_names,
                                    int n_key_names, int consistent,
                                    ddb_item **found, ddb_error *err) {
  ddb_tally t, *prev = ddb_tally_begin(&t);
  double t0 = ddbc_now();
  ddb_result result = ddb_batch_get(c, table, keys, n, key_names, n_key_names,
                                    consistent, found, err);
  size_t i;
  ddb_tally_end(prev);
  if(result == DDB_OK)
    ddbc_lease_note_read(DDBC_READ_BATCH, ddbc_now() - t0);
  for(i = 0; t.requests && i < n; i++)
    ddbc_hot_note(table, NULL, ddb_item_get(keys[i], key_names[0]), 1,
                  result == DDB_OK && found[i] ? 1 : 0, t.rcu / (double)n, 0,
                  t.throttles);
  return result;
}

/* The tags a page of rd is filed under, into tags[0..2): its partition
** (a Query) or its table's Scans (tag1), and the whole table (tag2), whose
** bytes tag1 and tag2 hold (check their failed flags). */
static void page_tags(ddb_client *c, const ddb_read *rd, ddb_buf *tag1,
                      ddb_buf *tag2, ddbc_tag *tags) {
  if(rd->pk_name)
    ddbc_partition_tag(tag1, c, rd->table, rd->index, &rd->pk);
  else
    ddbc_tag_head(tag1, 'S', c, rd->table);
  ddbc_tag_head(tag2, 'T', c, rd->table);
  tags[0].p = tag1->p;
  tags[0].len = tag1->len;
  tags[1].p = tag2->p;
  tags[1].len = tag2->len;
}

/* After a miss of the store: the page of rd under key from pol's shared
** tier.  Returns 1 with *out (a new page) and *sage (its age in seconds)
** on a hit; else 0 (no page there) or 2 (one not to be taken), with *sgen
** the tier's generation to fill under. */
static int page_shared_get(ddb_client *c, const ddb_read *rd,
                           const ddbc_policy *pol, const ddb_buf *key,
                           ddb_page **out, double *sage,
                           ddbc_shared_gen *sgen) {
  size_t tail_len;
  const char *tail = ddbc_shared_tail(c, key, &tail_len);
  return ddbc_shared_get_page(pol->shared, c, rd->table, tail, tail_len,
                              pol->query_ttl, ddbc_shared_now(), out, sage,
                              sgen);
}

/* After a miss of the shared tier under its generation sgen: the page's
** lease (lease.c: WON, HIT with *out and *sage, FALLBACK, or NONE when
** leases are off or cannot be had). */
static int page_lease(ddb_client *c, const ddb_read *rd,
                      const ddbc_policy *pol, const ddb_buf *key,
                      ddbc_shared_gen sgen, ddbc_lease_token *tok,
                      ddb_page **out, double *sage) {
  size_t tail_len;
  const char *tail = ddbc_shared_tail(c, key, &tail_len);
  double wait = ddbc_lease_wait_of(pol, DDBC_READ_PAGE);
  if(wait <= 0 || !sgen)
    return DDBC_LEASE_NONE;
  return ddbc_lease_page(pol->shared, c, rd->table, tail, tail_len, sgen, wait,
                         pol->query_ttl, tok, out, sage);
}

/* See ddb_cache.h: the page from the store, else from the shared tier,
** else from DynamoDB, filled into both on the way back.  The key is the
** request's body without ttl=hide's now. */
ddb_result ddbc_read_page(ddb_client *c, const ddb_read *r,
                          const ddbc_policy *pol, ddb_page **out,
                          ddb_error *err) {
  ddbc_store *s = ddbc_cache_store();
  ddb_meter *m = ddb_client_meter(c);
  ddb_read rd = *r, kr;
  ddb_buf key, tag1, tag2;
  ddbc_tag tags[2];
  uint64_t gens[2];
  ddbc_shared_gen sgen = 0;
  ddbc_lease_token tok;
  int lease = DDBC_LEASE_NONE, there = 0;
  size_t tail_len;
  ddb_result result;
  double age = 0, sage = 0;
  int fill;

  *out = NULL;
  rd.consistent = pol->consistent;
  if(pol->consistent || pol->query_ttl <= 0 || !s || ddbc_reader_bypass(pol))
    return read_page_counted(c, &rd, out, err);

  ddb_buf_init(&key, DDBC_KEY_MAX);
  ddb_buf_init(&tag1, DDBC_KEY_MAX);
  ddb_buf_init(&tag2, DDBC_KEY_MAX);
  ddbc_scope_head(&key, 'Q', c, 0);
  /* ttl=hide's now changes every second: the key holds the condition
  ** without it, and the reader drops what expired since (ext/) */
  kr = rd;
  kr.ttl_now = 0;
  result = ddb_read_body(&kr, &key, err);
  if(result || key.failed) {
    ddb_buf_free(&key);
    return result ? result : read_page_counted(c, &rd, out, err);
  }
  page_tags(c, &rd, &tag1, &tag2, tags);
  fill = !tag1.failed && !tag2.failed;

  if(fill && ddbc_store_get_page_age(s, key.p, key.len, ddbc_now(),
                                     pol->query_ttl, out, &age)) {
    ddb_meter_hit(m, age);
    ddb_log_cached(c, rd.pk_name ? "Query" : "Scan", rd.table, rd.index,
                   rd.start != NULL, (int)(*out)->count, age);
    result = DDB_OK;
    goto done;
  }
  if(m)
    ddb_meter_add(&m->misses, 1);
  gens[0] = ddbc_store_gen(s, tags[0].p, tags[0].len);
  gens[1] = ddbc_store_gen(s, tags[1].p, tags[1].len);
  if(pol->shared)
    there = page_shared_get(c, &rd, pol, &key, out, &sage, &sgen);
  if(pol->shared && there == 0) /* no page there: its lease */
    lease = page_lease(c, &rd, pol, &key, sgen, &tok, out, &sage);
  if(there == 1 || lease == DDBC_LEASE_HIT) {
    if(fill)
      ddbc_store_fill_page(s, key.p, key.len, tags, gens, *out, ddbc_now(),
                           ttl_left(pol->query_ttl, sage));
    result = DDB_OK;
    goto done;
  }
  result = read_page_counted(c, &rd, out, err);
  if(result == DDB_OK && fill)
    ddbc_store_fill_page(s, key.p, key.len, tags, gens, *out, ddbc_now(),
                         pol->query_ttl);
  if(pol->shared) {
    const char *tail = ddbc_shared_tail(c, &key, &tail_len);
    if(lease == DDBC_LEASE_WON) /* (a failed read releases the lease) */
      ddbc_lease_fill_page(pol->shared, c, rd.table, tail, tail_len, sgen,
                           result == DDB_OK ? *out : NULL, pol->query_ttl,
                           &tok, ddbc_shared_now());
    else if(lease == DDBC_LEASE_NONE && result == DDB_OK)
      ddbc_shared_fill_page(pol->shared, c, rd.table, tail, tail_len, sgen,
                            *out, pol->query_ttl, ddbc_shared_now());
  }
done:
  ddb_buf_free(&key);
  ddb_buf_free(&tag1);
  ddb_buf_free(&tag2);
  return result;
}

/* The store and the cache key (into *k, over stack[0..n), for the
** caller to ddb_buf_free) of the item of key[0..n_key) for a warm lookup;
** NULL when pol says not to use the cache or the key cannot be built. */
static ddbc_store *item_probe(ddb_client *c, const char *table,
                              const ddb_av *key, int n_key,
                              const ddbc_policy *pol, ddb_buf *k, char *stack,
                              size_t n) {
  ddbc_store *s = ddbc_cache_store();
  ddb_buf_init_with(k, stack, n, DDBC_KEY_MAX);
  if(pol->consistent || pol->item_ttl <= 0 || !s || ddbc_reader_bypass(pol))
    return NULL;
  ddbc_key_head(k, 'I', c, table);
  return ddb_key_encode_avs(key, n_key, k) == 0 && !k->failed ? s : NULL;
}

int ddbc_item_cached(ddb_client *c, const char *table, const ddb_av *key,
                     int n_key, const ddbc_policy *pol, ddb_item **out) {
  char stack[256]; /* most keys fit: no malloc */
  ddb_buf k;
  ddbc_store *s = item_probe(c, table, key, n_key, pol, &k, stack, 256);
  double age;
  int hit;
  *out = NULL;
  hit = s && ddbc_store_peek_item_age(s, k.p, k.len, ddbc_now(), pol->item_ttl,
                                      out, &age);
  if(hit)
    ddb_meter_hit(ddb_client_meter(c), age);
  ddb_buf_free(&k);
  return hit;
}

int ddbc_item_view_cached(ddb_client *c, const char *table, const ddb_av *key,
                          int n_key, const ddbc_policy *pol, int want,
                          ddbc_item_view *v) {
  char stack[256]; /* most keys fit: no malloc */
  ddb_buf k;
  ddbc_store *s = item_probe(c, table, key, n_key, pol, &k, stack, 256);
  double age;
  int hit = s && ddbc_store_peek_item_view(s, k.p, k.len, ddbc_now(),
                                           pol->item_ttl, want, v, &age);
  if(hit)
    ddb_meter_hit(ddb_client_meter(c), age);
  ddb_buf_free(&k);
  return hit;
}

ddb_result ddbc_get_item(ddb_client *c, const char *table, const ddb_item *key,
                         const char *const *key_names, int n_key_names,
                         const ddbc_policy *pol, ddb_item **out,
                         ddb_error *err) {
  ddbc_store *s = ddbc_cache_store();
  ddb_meter *m = ddb_client_meter(c);
  ddb_buf k;
  char stack[256]; /* most keys fit: no malloc on a hit */
  uint64_t gen = 0;
  ddb_result result;
  double age;
  unsigned char lease = DDBC_LEASE_NONE;
  ddbc_lease_token tok;

  *out = NULL;
  if(pol->consistent || pol->item_ttl <= 0 || !s || ddbc_reader_bypass(pol))
    return get_item_counted(c, table, key, key_names, pol->consistent, out,
                            err);
  ddb_buf_init_with(&k, stack, sizeof(stack), DDBC_KEY_MAX);
  if(ddbc_item_key(&k, c, table, key, key_names, n_key_names)) {
    ddb_buf_free(&k);
    return get_item_counted(c, table, key, key_names, 0, out, err);
  }
  if(ddbc_store_get_item_age(s, k.p, k.len, ddbc_now(), pol->item_ttl, out,
                             &age)) {
    ddb_meter_hit(m, age);
    ddb_buf_free(&k);
    return DDB_OK;
  }
  if(m)
    ddb_meter_add(&m->misses, 1);
  {
    char *kp = k.p;
    ddbc_principal_seen_gens(s, c, table, &kp, &k.len, 1, &gen);
  }
  if(pol->shared &&
     shared_item_get(s, c, table, &k, gen, pol, out, &lease, &tok)) {
    ddb_buf_free(&k);
    return DDB_OK;
  }
  result = get_item_counted(c, table, key, key_names, 0, out, err);
  if(result == DDB_OK)
    ddbc_store_fill_item(s, k.p, k.len, *out, gen, ddbc_now(), pol->item_ttl);
  if(pol->shared && (result == DDB_OK || lease == DDBC_LEASE_WON)) {
    char *kp = k.p;
    shared_fill(c, table, &kp, &k.len, 1, result == DDB_OK ? out : NULL,
                &lease, &tok, pol);
  }
  ddb_buf_free(&k);
  return result;
}

/* What ddbc_batch_get did not find in the store: m keys (of arrays n
** long), miss[j] the key of found[where[j]], ckeys[j] its cache key
** (clens[j] long; NULL when it could not be built), gens[j] the
** generation its fill is checked against, got[j] what DynamoDB answers. */
typedef struct batch_miss {
  const ddb_item **miss;
  ddb_item **got;
  size_t *where;
  uint64_t *gens;
  char **ckeys;
  size_t *clens;
  unsigned char *lease; /* the shared tier's lease of each (lease.c) */
  size_t m;
  ddbc_lease_token tok;
} batch_miss;

/* Allocate bm's arrays for n keys (zeroed).  Returns 0, or -1 when out of
** memory (then batch_miss_free frees what was allocated). */
static int batch_miss_alloc(batch_miss *bm, size_t n) {
  size_t k = n ? n : 1;
  memset(bm, 0, sizeof(*bm));
  bm->miss = calloc(k, sizeof(*bm->miss));
  bm->got = calloc(k, sizeof(*bm->got));
  bm->where = calloc(k, sizeof(*bm->where));
  bm->gens = calloc(k, sizeof(*bm->gens));
  bm->ckeys = calloc(k, sizeof(*bm->ckeys));
  bm->clens = calloc(k, sizeof(*bm->clens));
  bm->lease = calloc(k, sizeof(*bm->lease));
  return bm->miss && bm->got && bm->where && bm->gens && bm->ckeys &&
                 bm->clens && bm->lease
             ? 0
             : -1;
}

/* Free bm's arrays and the cache keys they own. */
static void batch_miss_free(batch_miss *bm) {
  size_t i;
  for(i = 0; i < bm->m; i++)
    free(bm->ckeys ? bm->ckeys[i] : NULL);
  free(bm->miss);
  free(bm->got);
  free(bm->where);
  free(bm->gens);
  free(bm->ckeys);
  free(bm->clens);
  free(bm->lease);
}

/* Look up keys[0..n) of table in the store s at now: found[i] a hit (a
** new reference, or NULL for "no such item"; charged to the meter), or
** NULL and the key added to bm's misses. */
static void batch_lookup(ddbc_store *s, ddb_client *c, const char *table,
                         const ddb_item *const *keys, size_t n,
                         const char *const *key_names, int n_key_names,
                         const ddbc_policy *pol, double now, ddb_item **found,
                         batch_miss *bm) {
  ddb_meter *meter = ddb_client_meter(c);
  double age;
  size_t i;
  for(i = 0; i < n; i++) {
    ddb_buf k;
    found[i] = NULL;
    ddb_buf_init(&k, DDBC_KEY_MAX);
    if(ddbc_item_key(&k, c, table, keys[i], key_names, n_key_names) == 0 &&
       ddbc_store_get_item_age(s, k.p, k.len, now, pol->item_ttl, &found[i],
                               &age)) {
      ddb_meter_hit(meter, age);
      ddb_buf_free(&k);
      continue;
    }
    bm->where[bm->m] = i;
    bm->miss[bm->m] = keys[i];
    if(!k.failed)
      bm->ckeys[bm->m] = ddb_buf_take(&k, &bm->clens[bm->m]);
    ddb_buf_free(&k);
    bm->m++;
  }
}

/* The tails in the shared tier of bm's keys (NULL where there is no cache
** key, or where skip[i] is set), into tails and lens. */
static void bm_tails(ddb_client *c, const batch_miss *bm,
                     const unsigned char *skip, char **tails, size_t *lens) {
  size_t i;
  for(i = 0; i < bm->m; i++) {
    tails[i] = NULL;
    if(bm->ckeys[i] && !(skip && skip[i])) {
      ddb_buf k = {bm->ckeys[i], bm->clens[i], 0, 0, 0, 1};
      tails[i] = (char *)ddbc_shared_tail(c, &k, &lens[i]);
    }
  }
}

/* The keys of bm that Redis answered (done[i]: got[i], age[i] old) go to
** found[] and into s; the rest are compacted to the front (bm->m their
** new count). */
static void bm_answered(ddbc_store *s, batch_miss *bm,
                        const unsigned char *done, ddb_item **got,
                        const double *age, const ddbc_policy *pol,
                        ddb_item **found) {
  size_t i, j;
  double now = ddbc_now();
  for(i = j = 0; i < bm->m; i++) {
    if(done[i]) {
      ddbc_store_fill_item(s, bm->ckeys[i], bm->clens[i], got[i], bm->gens[i],
                           now, ttl_left(pol->item_ttl, age[i]));
      found[bm->where[i]] = got[i];
      free(bm->ckeys[i]);
      continue;
    }
    bm->ckeys[j] = bm->ckeys[i];
    bm->clens[j] = bm->clens[i];
    bm->gens[j] = bm->gens[i];
    bm->where[j] = bm->where[i];
    bm->miss[j] = bm->miss[i];
    bm->lease[j] = bm->lease[i];
    j++;
  }
  bm->m = j;
}

/* Scratch of the shared tier's steps of a batch, for m keys. */
typedef struct batch_scratch {
  char **tails;
  size_t *lens;
  unsigned char *hit;
  double *age;
  ddb_item **got;
} batch_scratch;

/* Allocate x's arrays for m keys (zeroed).  Returns 0, or -1 when out of
** memory (then scratch_free frees what was allocated). */
static int scratch_alloc(batch_scratch *x, size_t m) {
  size_t k = m ? m : 1;
  x->tails = calloc(k, sizeof(*x->tails));
  x->lens = calloc(k, sizeof(*x->lens));
  x->hit = calloc(k, 1);
  x->age = calloc(k, sizeof(*x->age));
  x->got = calloc(k, sizeof(*x->got));
  return x->tails && x->lens && x->hit && x->age && x->got ? 0 : -1;
}

/* Free x's arrays (not what they point to). */
static void scratch_free(batch_scratch *x) {
  free(x->tails);
  free(x->lens);
  free(x->hit);
  free(x->age);
  free(x->got);
}

/* The misses of bm in Redis: those it holds go to found[] (and into s);
** for the keys it has nothing for, leases are taken in one round trip
** (leases on: ddbc_lease_wait_of), and what came meanwhile is taken too.
** The rest are compacted to the front, each with its lease state. */
static void shared_batch_get(ddbc_store *s, ddb_client *c, const char *table,
                             batch_miss *bm, const ddbc_policy *pol,
                             ddb_item **found) {
  batch_scratch x;
  size_t i;
  if(scratch_alloc(&x, bm->m))
    goto done;
  bm_tails(c, bm, NULL, x.tails, x.lens);
  ddbc_shared_get_items(pol->shared, c, table, x.tails, x.lens, bm->m,
                        pol->item_ttl, ddbc_shared_now(), x.got, x.hit, x.age);
  for(i = 0; i < bm->m; i++)
    bm->lease[i] = DDBC_LEASE_NONE;
  if(ddbc_lease_wait_of(pol, DDBC_READ_BATCH) > 0) {
    bm_tails(c, bm, x.hit, x.tails, x.lens); /* hit 0: nothing there */
    ddbc_lease_take_items(pol->shared, c, table, x.tails, x.lens, bm->m,
                          ddbc_lease_wait_of(pol, DDBC_READ_BATCH),
                          pol->item_ttl, &bm->tok, bm->lease, x.got, x.age);
  }
  for(i = 0; i < bm->m; i++)
    x.hit[i] = x.hit[i] == 1 || bm->lease[i] == DDBC_LEASE_HIT;
  bm_answered(s, bm, x.hit, x.got, x.age, pol, found);
done:
  scratch_free(&x);
}

/* The keys of bm whose leases others hold: their fills waited for, all
** together (one poll loop); those that came go to found[] (and into s),
** the rest are compacted to the front (WON: this reader took the lease
** freed; FALLBACK: none came). */
static void shared_batch_wait(ddbc_store *s, ddb_client *c, const char *table,
                              batch_miss *bm, const ddbc_policy *pol,
                              ddb_item **found) {
  batch_scratch x;
  size_t i;
  if(scratch_alloc(&x, bm->m)) {
    for(i = 0; i < bm->m; i++) /* out of memory: read them */
      bm->lease[i] = DDBC_LEASE_FALLBACK;
    goto done;
  }
  bm_tails(c, bm, NULL, x.tails, x.lens);
  ddbc_lease_wait_items(pol->shared, c, table, x.tails, x.lens, bm->m,
                        ddbc_lease_wait_of(pol, DDBC_READ_BATCH),
                        pol->item_ttl, &bm->tok, bm->lease, x.got, x.age);
  for(i = 0; i < bm->m; i++)
    x.hit[i] = bm->lease[i] == DDBC_LEASE_HIT;
  bm_answered(s, bm, x.hit, x.got, x.age, pol, found);
done:
  scratch_free(&x);
}

/* Order bm's keys so that those whose leases others hold (LOST) come
** last; returns how many come before them.  Returns bm->m when out of
** memory (then the LOST keys are read as the rest: FALLBACK). */
static size_t bm_lost_last(batch_miss *bm) {
  batch_miss t;
  size_t i, j = 0, pass;
  if(batch_miss_alloc(&t, bm->m)) {
    for(i = 0; i < bm->m; i++)
      if(bm->lease[i] == DDBC_LEASE_LOST)
        bm->lease[i] = DDBC_LEASE_FALLBACK;
    t.m = 0;
    batch_miss_free(&t);
    return bm->m;
  }
  for(pass = 0; pass < 2; pass++)
    for(i = 0; i < bm->m; i++)
      if((bm->lease[i] == DDBC_LEASE_LOST) == (pass == 1)) {
        t.miss[j] = bm->miss[i];
        t.where[j] = bm->where[i];
        t.gens[j] = bm->gens[i];
        t.ckeys[j] = bm->ckeys[i];
        t.clens[j] = bm->clens[i];
        t.lease[j] = bm->lease[i];
        j++;
      }
  for(i = 0, j = 0; i < bm->m; i++) {
    bm->miss[i] = t.miss[i];
    bm->where[i] = t.where[i];
    bm->gens[i] = t.gens[i];
    bm->ckeys[i] = t.ckeys[i];
    bm->clens[i] = t.clens[i];
    bm->lease[i] = t.lease[i];
    j += t.lease[i] != DDBC_LEASE_LOST;
  }
  t.m = 0; /* the keys are bm's */
  batch_miss_free(&t);
  return j;
}

/* bm's keys from `from` on, as a batch_miss of their own (its arrays
** point into bm's: not to be freed). */
static batch_miss bm_tail(const batch_miss *bm, size_t from) {
  batch_miss v = *bm;
  v.miss += from;
  v.got += from;
  v.where += from;
  v.gens += from;
  v.ckeys += from;
  v.clens += from;
  v.lease += from;
  v.m = bm->m - from;
  return v;
}

/* The misses of bm (at least one) from DynamoDB, filled into the store s
** (at now, read before the call) and pol's shared tier, into found.
** Returns DDB_OK, or the error of the call (found untouched). */
static ddb_result batch_fetch(ddbc_store *s, ddb_client *c, const char *table,
                              const char *const *key_names, int n_key_names,
                              const ddbc_policy *pol, batch_miss *bm,
                              ddb_item **found, ddb_error *err) {
  ddb_meter *meter = ddb_client_meter(c);
  ddb_result result;
  double now;
  size_t i;
  if(meter)
    ddb_meter_add(&meter->misses, bm->m);
  result = batch_get_counted(c, table, bm->miss, bm->m, key_names, n_key_names,
                             0, bm->got, err);
  if(result) {
    if(pol->shared) /* the leases taken go back */
      shared_fill(c, table, bm->ckeys, bm->clens, bm->m, NULL, bm->lease,
                  &bm->tok, pol);
    return result;
  }
  now = ddbc_now();
  for(i = 0; i < bm->m; i++)
    if(bm->ckeys[i])
      ddbc_store_fill_item(s, bm->ckeys[i], bm->clens[i], bm->got[i],
                           bm->gens[i], now, pol->item_ttl);
  if(pol->shared)
    shared_fill(c, table, bm->ckeys, bm->clens, bm->m, bm->got, bm->lease,
                &bm->tok, pol);
  for(i = 0; i < bm->m; i++) {
    found[bm->where[i]] = bm->got[i];
    bm->got[i] = NULL;
  }
  return DDB_OK;
}

/* The misses of bm (at least one) from DynamoDB, in two steps when others
** hold leases on some: first the keys this reader leased (or reads
** without a lease), then, after waiting for the others' fills, those
** that did not come.  Returns DDB_OK, or the error of a call (found
** holding what came before). */
static ddb_result batch_fetch_leased(ddbc_store *s, ddb_client *c,
                                     const char *table,
                                     const char *const *key_names,
                                     int n_key_names, const ddbc_policy *pol,
                                     batch_miss *bm, ddb_item **found,
                                     ddb_error *err) {
  size_t first = bm_lost_last(bm);
  batch_miss rest;
  ddb_result result = DDB_OK;
  if(first > 0) {
    batch_miss mine = *bm;
    mine.m = first;
    result = batch_fetch(s, c, table, key_names, n_key_names, pol, &mine,
                         found, err);
  }
  if(result || first == bm->m)
    return result;
  rest = bm_tail(bm, first);
  shared_batch_wait(s, c, table, &rest, pol, found);
  bm->m = first + rest.m; /* the keys answered were freed */
  if(rest.m > 0)
    result = batch_fetch(s, c, table, key_names, n_key_names, pol, &rest,
                         found, err);
  return result;
}

/* See ddb_cache.h: the keys from the store, the rest from the shared tier,
** the rest from DynamoDB (filled into both). */
ddb_result ddbc_batch_get(ddb_client *c, const char *table,
                          const ddb_item *const *keys, size_t n,
                          const char *const *key_names, int n_key_names,
                          const ddbc_policy *pol, ddb_item **found,
                          ddb_error *err) {
  ddbc_store *s = ddbc_cache_store();
  batch_miss bm;
  size_t i;
  ddb_result result = DDB_OK;

  if(pol->consistent || pol->item_ttl <= 0 || !s || ddbc_reader_bypass(pol))
    return batch_get_counted(c, table, keys, n, key_names, n_key_names,
                             pol->consistent, found, err);
  for(i = 0; i < n; i++)
    found[i] = NULL; /* so that a failure unrefs only what it found */
  if(batch_miss_alloc(&bm, n)) {
    result = ddb_error_set(err, DDB_ERR_NOMEM, "out of memory");
    goto fail;
  }
  batch_lookup(s, c, table, keys, n, key_names, n_key_names, pol, ddbc_now(),
               found, &bm);
  if(bm.m > 0)
    ddbc_principal_seen_gens(s, c, table, bm.ckeys, bm.clens, bm.m, bm.gens);
  if(bm.m > 0 && pol->shared)
    shared_batch_get(s, c, table, &bm, pol, found);
  if(bm.m > 0)
    result = batch_fetch_leased(s, c, table, key_names, n_key_names, pol, &bm,
                                found, err);

fail:
  if(result)
    for(i = 0; i < n; i++) {
      ddb_item_unref(found[i]);
      found[i] = NULL;
    }
  batch_miss_free(&bm);
  return result;
}
