/*
** store.c -- the cache engine (see store.h for the interface).
**
** Entries live in one hash table (chained, keyed by the canonical key; its
** own, so an entry carries 12 bytes of it where uthash's handle took 56)
** and on one of two LRU lists, a segmented LRU:
**
**   probation  every new entry starts here, at the head;
**   protected  an entry moves here (to the head) when it is hit.
**
** Eviction takes the probation tail first, and the protected tail only
** when probation is empty.  Protected may hold at most
** DDBC_PROTECTED_SHARE of the budget; past that its tail is demoted to the
** probation head.  So a full-table Scan, whose pages are each read once,
** churns through probation and cannot flush the items a workload keeps
** hitting: those sit in protected.  Within each list the order is plain
** LRU.
**
** Expiry is lazy: a lookup that finds an expired entry drops it and
** misses.  Each fill also looks at DDBC_SWEEP entries at each tail and
** drops those that expired, so dead entries do not wait for the budget to
** push them out.
**
** Invalidation uses generations.  A tag (an item's key, or a partition of
** a table or index) has a generation: the store's counter at its last
** bump, or the epoch for tags never bumped.  Pages remember the generation
** of their tag captured before their request was sent, and are stale once
** it moved; item fills are refused when it moved, so a read that raced
** with a write never overwrites the write's result.  The tag table is
** bounded: past DDBC_MAX_TAGS it is cleared and the epoch moves, which
** makes every page stale at once (rare and safe).
**
** Items are packed (a store made by ddbc_store_create_packed, as cache.c
** makes it): the entry is one allocation holding its header, its key and
** the item as ddb_item_pack wrote it, with no pointer inside, and a hit
** unpacks a new ddb_item for the reader.  A store made by
** ddbc_store_create holds a reference to the caller's item instead (the
** tests' stores, whose items are not real).
**
** Accounting.  Each entry is charged what it makes malloc hold:
**
**   - its allocation (header, key, tags, packed item) as a glibc chunk:
**     the request plus 8 bytes of size field, rounded up to 16, at least
**     32 (alloc_charge; other allocators differ by a few bytes);
**   - the item or page it references, if it does (their `bytes` plus one
**     chunk's overhead; an item shared by several pages is counted in
**     each: the budget errs on the safe side);
**   - three slots (24 bytes) of the hash table: the table doubles past one
**     entry a slot and halves below one entry per three slots, so it
**     holds 1 to 3 slots an entry (at least 16 slots).
**
** Not charged: the store itself, the table's 16 first slots and the
** generation tags (bounded by DDBC_MAX_TAGS).  tests/unit/test_cache.c
** checks the charge against mallinfo2's count of bytes in use.
*/
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* Rehash into n slots (a power of 2, >= TABLE_MIN); on out of memory the
** table stays as it is (longer chains, still correct). */
static void do_resize(ddbc_store *s, size_t n) {
  entry **slots = calloc(n, sizeof(*slots));
  size_t i;
  if(!slots)
    return;
  for(i = 0; i < s->n_slots; i++) {
    entry *e = s->slots[i], *next;
    for(; e; e = next) {
      next = e->hnext;
      e->hnext = slots[e->hash & (n - 1)];
      slots[e->hash & (n - 1)] = e;
    }
  }
  free(s->slots);
  s->slots = slots;
  s->n_slots = n;
}

/* Add e (its hash set) to the table, doubling it past one entry a slot. */
static void do_hash_add(ddbc_store *s, entry *e) {
  size_t i;
  if(!s->n_slots)
    do_resize(s, TABLE_MIN);
  else if(s->st.entries + 1 > s->n_slots)
    do_resize(s, s->n_slots * 2);
  if(!s->n_slots)
    return; /* out of memory: the caller checks */
  i = e->hash & (s->n_slots - 1);
  e->hnext = s->slots[i];
  s->slots[i] = e;
}

/* Remove e from the table (entries already counts it out), halving the
** table below one entry per SLOTS_CHARGED slots, freeing it when empty. */
static void do_hash_del(ddbc_store *s, entry *e) {
  entry **pp = &s->slots[e->hash & (s->n_slots - 1)];
  while(*pp != e)
    pp = &(*pp)->hnext;
  *pp = e->hnext;
  if(s->st.entries == 0) {
    free(s->slots);
    s->slots = NULL;
    s->n_slots = 0;
  } else if(s->n_slots > TABLE_MIN &&
            s->st.entries * SLOTS_CHARGED < s->n_slots) {
    do_resize(s, s->n_slots / 2);
  }
}

/* ------------------------------------------------------------------------
** Lists (lock held)
*/

/* Unlink e from its list. */
static void do_list_unlink(ddbc_store *s, entry *e) {
  if(e->prev)
    e->prev->next = e->next;
  else
    s->head[e->seg] = e->next;
  if(e->next)
    e->next->prev = e->prev;
  else
    s->tail[e->seg] = e->prev;
  e->prev = e->next = NULL;
  s->seg_bytes[e->seg] -= e->bytes;
  assert((s->head[e->seg] && s->tail[e->seg]) ||
         (!s->head[e->seg] && !s->tail[e->seg]));
}

/* Link e at the head of list seg. */
static void do_list_push(ddbc_store *s, entry *e, int seg) {
  e->seg = seg;
  e->prev = NULL;
  e->next = s->head[seg];
  if(s->head[seg])
    s->head[seg]->prev = e;
  s->head[seg] = e;
  if(!s->tail[seg])
    s->tail[seg] = e;
  s->seg_bytes[seg] += e->bytes;
}

/* Remove e from the store and free it, releasing its value. */
static void do_entry_free(ddbc_store *s, entry *e) {
  do_list_unlink(s, e);
  s->bytes -= e->bytes;
  s->st.entries--;
  do_hash_del(s, e);
  if(e->kind == KIND_ITEM)
    ddb_item_unref(*item_ref_of(e));
  else if(e->kind == KIND_PAGE)
    ddb_page_unref(page_of(e)->page);
  free(e);
}

/* Demote protected entries past their share, then evict until the store
** is within its budget. */
static void do_enforce_budget(ddbc_store *s) {
  size_t cap = s->bytes_max / 100 * DDBC_PROTECTED_SHARE;
  while(s->seg_bytes[SEG_PROTECTED] > cap && s->tail[SEG_PROTECTED]) {
    entry *e = s->tail[SEG_PROTECTED];
    do_list_unlink(s, e);
    do_list_push(s, e, SEG_PROBATION);
  }
  while(s->bytes > s->bytes_max) {
    entry *e = s->tail[SEG_PROBATION] ? s->tail[SEG_PROBATION]
                                      : s->tail[SEG_PROTECTED];
    if(!e)
      break;
    do_entry_free(s, e);
    s->st.evictions++;
  }
}

/* Drop up to DDBC_SWEEP expired entries from each tail. */
static void do_sweep(ddbc_store *s, double now) {
  int seg, i;
  for(seg = 0; seg < 2; seg++) {
    entry *e = s->tail[seg];
    for(i = 0; e && i < DDBC_SWEEP; i++) {
      entry *prev = e->prev;
      if(e->expires <= now) {
        do_entry_free(s, e);
        s->st.expirations++;
      }
      e = prev;
    }
  }
}

/* ------------------------------------------------------------------------
** Tags (lock held)
*/
/* The generation of tag: its last bump, or the epoch if not remembered. */
static uint64_t do_gen(ddbc_store *s, const char *tag, size_t len) {
  tag_entry *t;
  HASH_FIND(hh, s->tags, tag, len, t);
  return t ? t->gen : s->epoch;
}

/* Move tag to a new generation (remembering it, resetting the table with
** a new epoch when full) and return that generation. */
static uint64_t do_bump(ddbc_store *s, const char *tag, size_t len) {
  tag_entry *t, *tmp;
  unsigned hashv;
  HASH_VALUE(tag, len, hashv); /* once, for the find and the add */
  HASH_FIND_BYHASHVALUE(hh, s->tags, tag, len, hashv, t);
  if(!t && s->n_tags >= DDBC_MAX_TAGS) {
    /* forget every tag: the new epoch makes all of them "moved" */
    HASH_ITER(hh, s->tags, t, tmp) {
      HASH_DELETE(hh, s->tags, t);
      free(t);
    }
    s->n_tags = 0;
    s->epoch = ++s->counter;
    t = NULL;
  }
  if(!t) {
    t = malloc(sizeof(*t) + len);
    if(!t) {
      /* cannot remember this tag: move the epoch instead (safe) */
      s->epoch = ++s->counter;
      return s->epoch;
    }
    memcpy(t->key, tag, len);
    t->len = len;
    HASH_ADD_BYHASHVALUE(hh, s->tags, key[0], len, hashv, t);
    s->n_tags++;
  }
  t->gen = ++s->counter;
  return t->gen;
}

/* ------------------------------------------------------------------------
** Lifecycle
*/
ddbc_store *ddbc_store_create(size_t bytes_max) {
  ddbc_store *s = calloc(1, sizeof(*s));
  if(!s)
    return NULL;
  pthread_mutex_init(&s->lock, NULL);
  s->bytes_max = bytes_max;
  s->counter = s->epoch = 1;
  /* the hash's seed: this store's address, as ASLR placed it */
  s->seed = (uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ULL;
  return s;
}

ddbc_store *ddbc_store_create_packed(size_t bytes_max,
                                     const ddbc_item_codec *codec) {
  ddbc_store *s = ddbc_store_create(bytes_max);
  if(s)
    s->codec = *codec;
  return s;
}

/* Free every entry (lock held or store private). */
static void do_empty(ddbc_store *s) {
  int seg;
  for(seg = 0; seg < 2; seg++)
    while(s->tail[seg])
      do_entry_free(s, s->tail[seg]);
  assert(s->bytes == 0 && s->st.entries == 0 && !s->slots);
}

void ddbc_store_empty(ddbc_store *s) {
  pthread_mutex_lock(&s->lock);
  do_empty(s);
  pthread_mutex_unlock(&s->lock);
}

void ddbc_store_forget(ddbc_store *s) {
  tag_entry *t, *tmp;
  pthread_mutex_lock(&s->lock);
  do_empty(s);
  HASH_ITER(hh, s->tags, t, tmp) {
    HASH_DELETE(hh, s->tags, t);
    free(t);
  }
  s->n_tags = 0;
  s->epoch = ++s->counter;
  pthread_mutex_unlock(&s->lock);
}

size_t ddbc_store_drop_if(ddbc_store *s,
                          int (*match)(const char *key, size_t key_len,
                                       void *ctx),
                          void *ctx) {
  size_t n = 0;
  int seg;
  pthread_mutex_lock(&s->lock);
  for(seg = 0; seg < 2; seg++) {
    entry *e = s->head[seg], *next;
    for(; e; e = next) {
      next = e->next;
      if(match(key_of(e), e->key_len, ctx)) {
        do_entry_free(s, e);
        n++;
      }
    }
  }
  pthread_mutex_unlock(&s->lock);
  return n;
}

/* Take s's lock (ddbc_store_unlock releases it): for fork() only. */
void ddbc_store_lock(ddbc_store *s) {
  pthread_mutex_lock(&s->lock);
}

/* Release the lock ddbc_store_lock took. */
void ddbc_store_unlock(ddbc_store *s) {
  pthread_mutex_unlock(&s->lock);
}

void ddbc_store_release(ddbc_store *s) {
  tag_entry *t, *tmp;
  if(!s)
    return;
  do_empty(s);
  HASH_ITER(hh, s->tags, t, tmp) {
    HASH_DELETE(hh, s->tags, t);
    free(t);
  }
  pthread_mutex_destroy(&s->lock);
  free(s);
}

size_t ddbc_store_set_budget(ddbc_store *s, size_t bytes_max) {
  size_t old;
  pthread_mutex_lock(&s->lock);
  old = s->bytes_max;
  s->bytes_max = bytes_max;
  do_enforce_budget(s);
  pthread_mutex_unlock(&s->lock);
  return old;
}

void ddbc_store_stats_get(ddbc_store *s, ddbc_store_stats *out) {
  pthread_mutex_lock(&s->lock);
  *out = s->st;
  out->bytes = s->bytes;
  out->bytes_max = s->bytes_max;
  pthread_mutex_unlock(&s->lock);
}

uint64_t ddbc_store_gen(ddbc_store *s, const char *tag, size_t tag_len) {
  uint64_t g;
  pthread_mutex_lock(&s->lock);
  g = do_gen(s, tag, tag_len);
  pthread_mutex_unlock(&s->lock);
  return g;
}

uint64_t ddbc_store_bump(ddbc_store *s, const char *tag, size_t tag_len) {
  uint64_t g;
  pthread_mutex_lock(&s->lock);
  g = do_bump(s, tag, tag_len);
  pthread_mutex_unlock(&s->lock);
  return g;
}

/* ------------------------------------------------------------------------
** Lookups and fills
*/

/* Find key; drop it (and miss) when expired.  An entry older than
** max_age (the reader's own TTL; readers with different TTLs share
** entries) is a miss for this reader but stays: its fill replaces it. */
static entry *do_lookup(ddbc_store *s, const char *key, size_t len, double now,
                        double max_age) {
  entry *e = do_find(s, key, len, key_hash(s, key, len));
  if(!e)
    return NULL;
  if(e->expires <= now) {
    do_entry_free(s, e);
    s->st.expirations++;
    return NULL;
  }
  if(now - e->filled >= max_age)
    return NULL;
  return e;
}

/* A hit on e: move it to the head of protected (of probation when the
** store is a plain LRU), demoting protected's tail past its share. */
static void do_touch(ddbc_store *s, entry *e) {
  do_list_unlink(s, e);
  do_list_push(s, e, s->plain_lru ? SEG_PROBATION : SEG_PROTECTED);
  if(s->seg_bytes[SEG_PROTECTED] > s->bytes_max / 100 * DDBC_PROTECTED_SHARE)
    do_enforce_budget(s);
}

/* Insert a new entry of kind for key (replacing any), with extra bytes
** after the key (pages: their tags; packed items: the item) and charged
** value_bytes besides its own allocation (a referenced item or page).
** Returns the entry, its key copied and the extra bytes for the caller to
** fill, or NULL when it would not fit or memory ran out. */
static entry *do_insert(ddbc_store *s, int kind, const char *key,
                        size_t key_len, size_t extra, size_t value_bytes,
                        double now, double ttl) {
  entry *e, *old;
  uint32_t h = key_hash(s, key, key_len);
  size_t size = sizeof(entry) + ext_size(kind) + key_len + extra;
  size_t bytes =
      alloc_charge(size) + value_bytes + SLOTS_CHARGED * sizeof(entry *);
  old = do_find(s, key, key_len, h);
  if(old)
    do_entry_free(s, old);
  if(ttl <= 0 || bytes > s->bytes_max / DDBC_MAX_SHARE ||
     key_len > UINT32_MAX || extra > UINT32_MAX)
    return NULL;
  e = malloc(size);
  if(!e)
    return NULL;
  memset(e, 0, sizeof(*e) + ext_size(kind));
  e->kind = (unsigned char)kind;
  e->hash = h;
  e->key_len = (uint32_t)key_len;
  memcpy(key_of(e), key, key_len);
  e->filled = now;
  e->expires = now + ttl;
  e->bytes = bytes;
  do_hash_add(s, e);
  if(!s->n_slots) {
    free(e);
    return NULL;
  }
  do_list_push(s, e, SEG_PROBATION);
  s->bytes += bytes;
  s->st.entries++;
  return e;
}

/* Look up an item; count a miss only when count_miss is set; on a hit,
** *age (unless NULL) is how long ago the entry was stored. */
static int get_item(ddbc_store *s, const char *key, size_t key_len, double now,
                    double max_age, ddb_item **out, int count_miss,
                    double *age) {
  entry *e;
  int hit = 0;
  pthread_mutex_lock(&s->lock);
  e = do_lookup(s, key, key_len, now, max_age);
  if(e && (e->kind == KIND_PACKED || e->kind == KIND_PACKED_JSON)) {
    /* a new item for this reader (NULL when packed as "no such item") */
    *out = e->val_len
               ? s->codec.unpack((const unsigned char *)key_of(e) + e->key_len,
                                 e->val_len)
               : NULL;
    hit = !e->val_len || *out;
  } else if(e && e->kind == KIND_ITEM) {
    *out = ddb_item_ref(*item_ref_of(e));
    hit = 1;
  }
  if(hit) {
    if(age)
      *age = now - e->filled;
    do_touch(s, e);
    s->st.item_hits++;
  } else if(count_miss) {
    s->st.item_misses++;
  }
  pthread_mutex_unlock(&s->lock);
  return hit;
}

int ddbc_store_get_item(ddbc_store *s, const char *key, size_t key_len,
                        double now, double max_age, ddb_item **out) {
  return get_item(s, key, key_len, now, max_age, out, 1, NULL);
}

int ddbc_store_get_item_age(ddbc_store *s, const char *key, size_t key_len,
                            double now, double max_age, ddb_item **out,
                            double *age) {
  return get_item(s, key, key_len, now, max_age, out, 1, age);
}

int ddbc_store_peek_item_age(ddbc_store *s, const char *key, size_t key_len,
                             double now, double max_age, ddb_item **out,
                             double *age) {
  return get_item(s, key, key_len, now, max_age, out, 0, age);
}

/* Put n in e's place (the hash chain and its list), e's charge changed
** to n's, and free e. */
static void do_replace(ddbc_store *s, entry *e, entry *n) {
  entry **pp = &s->slots[e->hash & (s->n_slots - 1)];
  while(*pp != e)
    pp = &(*pp)->hnext;
  *pp = n;
  if(n->prev)
    n->prev->next = n;
  else
    s->head[n->seg] = n;
  if(n->next)
    n->next->prev = n;
  else
    s->tail[n->seg] = n;
  s->seg_bytes[n->seg] += n->bytes - e->bytes;
  s->bytes += n->bytes - e->bytes;
  free(e);
}

/* The packed item entry e (not a negative one) with its JSON (the codec's
** to_json) after the packed item: a KIND_PACKED_JSON entry in e's place (e freed),
** charged its new size (the caller enforces the budget).  Returns the
** entry, or e unchanged when the JSON cannot be had or would not fit. */
static entry *do_add_json(ddbc_store *s, entry *e) {
  const char *k = key_of(e);
  size_t size, bytes, n = 0;
  entry *x;
  char *json = s->codec.to_json
                   ? s->codec.to_json((const unsigned char *)k + e->key_len,
                                      e->val_len, &n)
                   : NULL;
  if(!json)
    return e;
  size = sizeof(entry) + sizeof(json_ext) + e->key_len + e->val_len + n + 1;
  bytes = alloc_charge(size) + SLOTS_CHARGED * sizeof(entry *);
  x = n < UINT32_MAX && bytes <= s->bytes_max / DDBC_MAX_SHARE ? malloc(size)
                                                               : NULL;
  if(!x) {
    free(json);
    return e;
  }
  *x = *e;
  x->kind = KIND_PACKED_JSON;
  x->bytes = bytes;
  ((json_ext *)(x + 1))->json_len = (uint32_t)n;
  ((json_ext *)(x + 1))->unused = 0;
  memcpy(key_of(x), k, (size_t)e->key_len + e->val_len);
  memcpy(key_of(x) + e->key_len + e->val_len, json, n + 1);
  free(json);
  do_replace(s, e, x);
  return x;
}

/* Copy n bytes of p into *buf (*cap bytes, grown as needed, one more for
** a NUL).  Returns 0, or -1 when it cannot grow. */
static int copy_out(void **buf, size_t *cap, const void *p, size_t n) {
  if(n + 1 > *cap) {
    size_t want = n + 1 > 2 * *cap ? n + 1 : 2 * *cap;
    void *q = realloc(*buf, want);
    if(!q)
      return -1;
    *buf = q;
    *cap = want;
  }
  memcpy(*buf, p, n);
  ((char *)*buf)[n] = 0;
  return 0;
}

int ddbc_store_peek_item_view(ddbc_store *s, const char *key, size_t key_len,
                              double now, double max_age, int want,
                              ddbc_item_view *v, double *age) {
  entry *e;
  int hit = 0;
  pthread_mutex_lock(&s->lock);
  e = do_lookup(s, key, key_len, now, max_age);
  if(e && (e->kind == KIND_PACKED || e->kind == KIND_PACKED_JSON)) {
    const char *packed = key_of(e) + e->key_len;
    v->found = e->val_len != 0;
    v->packed_len = e->val_len;
    v->json_len = 0;
    hit =
        copy_out((void **)&v->packed, &v->packed_cap, packed, e->val_len) == 0;
    if(hit && v->found && (want & DDBC_VIEW_JSON)) {
      if(e->kind == KIND_PACKED)
        e = do_add_json(s, e);
      if(e->kind == KIND_PACKED_JSON) {
        v->json_len = ((const json_ext *)(e + 1))->json_len;
        hit = copy_out((void **)&v->json, &v->json_cap,
                       key_of(e) + e->key_len + e->val_len, v->json_len) == 0;
      } else {
        hit = 0; /* not rendered (no memory): the caller's general path */
      }
    }
  }
  if(hit) {
    if(age)
      *age = now - e->filled;
    do_touch(s, e);
    if(s->bytes > s->bytes_max)
      do_enforce_budget(s); /* the JSON grew the entry (copied already) */
    s->st.item_hits++;
  }
  pthread_mutex_unlock(&s->lock);
  return hit;
}

/* Store item (NULL: a negative entry) under key, with the lock held; a
** value that does not fit is not stored. */
static void do_put_item(ddbc_store *s, const char *key, size_t key_len,
                        ddb_item *item, double now, double ttl) {
  entry *e;
  if(s->codec.pack) {
    size_t n = item ? s->codec.packed_size(item) : 0;
    e = do_insert(s, KIND_PACKED, key, key_len, n, 0, now, ttl);
    if(!e)
      return;
    e->val_len = (uint32_t)n;
    if(n)
      s->codec.pack(item, (unsigned char *)key_of(e) + key_len);
  } else {
    /* the item's chunk: its bytes and malloc's overhead */
    size_t v = item ? alloc_charge(item->bytes) : 0;
    e = do_insert(s, KIND_ITEM, key, key_len, 0, v, now, ttl);
    if(!e)
      return;
    *item_ref_of(e) = ddb_item_ref(item);
  }
  do_enforce_budget(s);
}

void ddbc_store_fill_item(ddbc_store *s, const char *key, size_t key_len,
                          ddb_item *item, uint64_t gen, double now,
                          double ttl) {
  pthread_mutex_lock(&s->lock);
  if(do_gen(s, key, key_len) != gen) {
    s->st.stale++; /* a write completed while this read was in flight */
  } else {
    do_sweep(s, now);
    do_put_item(s, key, key_len, item, now, ttl);
  }
  pthread_mutex_unlock(&s->lock);
}

void ddbc_store_write_item(ddbc_store *s, const char *key, size_t key_len,
                           ddb_item *item, double now, double ttl) {
  pthread_mutex_lock(&s->lock);
  do_bump(s, key, key_len);
  do_put_item(s, key, key_len, item, now, ttl);
  pthread_mutex_unlock(&s->lock);
}

void ddbc_store_note_writes(ddbc_store *s, const ddbc_tag *tags, size_t n_tags,
                            const ddbc_tag *keys, ddb_item *const *items,
                            size_t n, double now, double ttl) {
  size_t i;
  pthread_mutex_lock(&s->lock);
  for(i = 0; i < n_tags; i++)
    do_bump(s, tags[i].p, tags[i].len);
  for(i = 0; i < n; i++) {
    do_bump(s, keys[i].p, keys[i].len);
    do_put_item(s, keys[i].p, keys[i].len, items[i], now, ttl);
  }
  pthread_mutex_unlock(&s->lock);
}

/* Has a write moved either tag of page entry e since it was filled? */
static int do_page_stale(ddbc_store *s, entry *e) {
  const page_ext *x = page_of(e);
  const char *tag = key_of(e) + e->key_len;
  return x->gen[0] != do_gen(s, tag, x->tag_len[0]) ||
         x->gen[1] != do_gen(s, tag + x->tag_len[0], x->tag_len[1]);
}

int ddbc_store_get_page(ddbc_store *s, const char *key, size_t key_len,
                        double now, double max_age, ddb_page **out) {
  return ddbc_store_get_page_age(s, key, key_len, now, max_age, out, NULL);
}

int ddbc_store_get_page_age(ddbc_store *s, const char *key, size_t key_len,
                            double now, double max_age, ddb_page **out,
                            double *age) {
  entry *e;
  int hit = 0;
  pthread_mutex_lock(&s->lock);
  e = do_lookup(s, key, key_len, now, max_age);
  if(e && e->kind == KIND_PAGE && do_page_stale(s, e)) {
    do_entry_free(s, e); /* a write changed what it read */
    s->st.stale++;
    e = NULL;
  }
  if(e && e->kind == KIND_PAGE) {
    *out = ddb_page_ref(page_of(e)->page);
    if(age)
      *age = now - e->filled;
    do_touch(s, e);
    s->st.query_hits++;
    hit = 1;
  } else {
    s->st.query_misses++;
  }
  pthread_mutex_unlock(&s->lock);
  return hit;
}

void ddbc_store_fill_page(ddbc_store *s, const char *key, size_t key_len,
                          const ddbc_tag tags[2], const uint64_t gens[2],
                          ddb_page *page, double now, double ttl) {
  entry *e;
  pthread_mutex_lock(&s->lock);
  if(do_gen(s, tags[0].p, tags[0].len) != gens[0] ||
     do_gen(s, tags[1].p, tags[1].len) != gens[1]) {
    s->st.stale++;
  } else {
    do_sweep(s, now);
    e = do_insert(s, KIND_PAGE, key, key_len, tags[0].len + tags[1].len,
                  page->bytes, now, ttl);
    if(e) {
      page_ext *x = page_of(e);
      char *tag = key_of(e) + key_len;
      memcpy(tag, tags[0].p, tags[0].len);
      memcpy(tag + tags[0].len, tags[1].p, tags[1].len);
      x->tag_len[0] = (uint32_t)tags[0].len;
      x->tag_len[1] = (uint32_t)tags[1].len;
      x->gen[0] = gens[0];
      x->gen[1] = gens[1];
      x->page = ddb_page_ref(page);
      do_enforce_budget(s);
    }
  }
  pthread_mutex_unlock(&s->lock);
}
