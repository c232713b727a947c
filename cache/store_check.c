/*
** store_check.c -- the cache engine's hooks for tests and bench/ (see
** store.h): its invariants checked, a segment's order walked, plain LRU
** instead of segments.  Not used by cache.c.
*/
#include <pthread.h>
#include <stddef.h>

#include "store_int.h"

/* Walk segment seg from head to tail checking the links; adds the
** entries' charges to *bytes and their number to *n.  Returns NULL or what
** is wrong. */
static const char *do_check_list(ddbc_store *s, int seg, size_t *bytes,
                                 size_t *n) {
  entry *e, *prev = NULL, *found;
  size_t sum = 0;
  for(e = s->head[seg]; e; prev = e, e = e->next) {
    if(e->prev != prev)
      return "a prev link is wrong";
    if(e->seg != seg)
      return "an entry is on the list of another segment";
    found = do_find(s, key_of(e), e->key_len, e->hash);
    if(found != e || e->hash != key_hash(s, key_of(e), e->key_len))
      return "a listed entry is not in the hash";
    sum += e->bytes;
    (*n)++;
    if(*n > s->st.entries)
      return "a list is longer than the hash (cycle?)";
  }
  if(s->tail[seg] != prev)
    return "a tail is not the list's last entry";
  if(sum != s->seg_bytes[seg])
    return "a segment's bytes are not the sum of its entries";
  *bytes += sum;
  return NULL;
}

/* The entries in the hash table's chains. */
static size_t hash_count(ddbc_store *s) {
  size_t i, n = 0;
  entry *e;
  for(i = 0; i < s->n_slots; i++)
    for(e = s->slots[i]; e; e = e->hnext)
      n++;
  return n;
}

const char *ddbc_store_check(ddbc_store *s) {
  const char *why = NULL;
  size_t bytes = 0, n = 0;
  pthread_mutex_lock(&s->lock);
  why = do_check_list(s, SEG_PROBATION, &bytes, &n);
  if(!why)
    why = do_check_list(s, SEG_PROTECTED, &bytes, &n);
  if(!why && n != hash_count(s))
    why = "the lists do not hold every entry of the hash";
  if(!why &&
     (s->st.entries > s->n_slots ||
      (s->n_slots > TABLE_MIN && s->st.entries * SLOTS_CHARGED < s->n_slots)))
    why = "the hash table is outside 1 to 3 slots an entry";
  if(!why && n != s->st.entries)
    why = "entries is not the number of entries";
  if(!why && bytes != s->bytes)
    why = "bytes is not the sum of the entries' charges";
  if(!why && s->bytes > s->bytes_max)
    why = "bytes is above bytes_max";
  if(!why && s->plain_lru && s->head[SEG_PROTECTED])
    why = "a plain LRU store has protected entries";
  pthread_mutex_unlock(&s->lock);
  return why;
}

size_t ddbc_store_order(ddbc_store *s, int seg,
                        void (*fn)(const char *key, size_t key_len,
                                   size_t charge, void *ctx),
                        void *ctx) {
  entry *e;
  size_t n = 0;
  pthread_mutex_lock(&s->lock);
  for(e = s->head[seg & 1]; e; e = e->next, n++)
    fn(key_of(e), e->key_len, e->bytes, ctx);
  pthread_mutex_unlock(&s->lock);
  return n;
}

void ddbc_store_set_segmented(ddbc_store *s, int on) {
  pthread_mutex_lock(&s->lock);
  s->plain_lru = !on;
  pthread_mutex_unlock(&s->lock);
}
