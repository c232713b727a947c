/*
** store_int.h -- the cache engine's insides, shared by store.c (the
** engine) and store_check.c (its hooks for tests and bench/): the entry,
** the store, their charges, the key's hash and the hash table's lookup.
** Internal to those two files.
*/
#ifndef DDBC_STORE_INT_H
#define DDBC_STORE_INT_H

#include <pthread.h>
#include <stdint.h>
#include <string.h>

/* The tag table (uthash) doubles its buckets when one holds 3 tags, not
** uthash's 10: a write of an item not cached adds a tag, and the table
** holds up to DDBC_MAX_TAGS, so its chains, walked entry by entry from
** memory, are what a bulk write's bump costs (each new tag is looked up
** and added; with 10 a bucket, a 1,000-row DELETE spent 8% of its CPU
** walking them).  The buckets cost 16 bytes each: at most about 2 per
** tag. */
#define HASH_BKT_CAPACITY_THRESH 3U
#include <uthash.h>

#include "store.h"

/* Bytes glibc's malloc adds to a request: its size field (8), and the
** rounding of the chunk to 16 bytes. */
#define CHUNK_HEADER 8
#define CHUNK_ALIGN  16
#define CHUNK_MIN    32
/* Hash table slots charged to each entry (see the accounting above), and
** the table's smallest size. */
#define SLOTS_CHARGED 3
#define TABLE_MIN     16

enum { SEG_PROBATION = 0, SEG_PROTECTED = 1 };
enum {
  KIND_ITEM = 1,       /* a reference to the caller's item (or NULL) */
  KIND_PACKED = 2,     /* the item packed after the key (val_len 0: none) */
  KIND_PAGE = 3,       /* a page_ext before the key, two tags after it */
  KIND_PACKED_JSON = 4 /* KIND_PACKED, its JSON after the packed item (its
                          length in a json_ext before the key) */
};

/* An entry: one allocation, the header then (pages) a page_ext or (items
** by reference) the item's pointer, the key, then (pages) the two tags or
** (packed items) the packed item.  64 bytes of header on x86-64. */
typedef struct entry {
  struct entry *hnext;       /* next in its hash slot's chain */
  struct entry *prev, *next; /* in list `seg` */
  double filled;             /* when it was stored */
  double expires;            /* filled + the filler's ttl */
  size_t bytes;              /* charged to the budget */
  uint32_t hash;             /* of the key */
  uint32_t key_len;
  uint32_t val_len; /* KIND_PACKED: bytes of the packed item */
  unsigned char seg;
  unsigned char kind;
} entry;

/* What a KIND_PACKED_JSON entry holds before its key: its JSON's length
** (the JSON follows the packed item, NUL-terminated). */
typedef struct json_ext {
  uint32_t json_len;
  uint32_t unused;
} json_ext;

/* What a page entry holds besides its key. */
typedef struct page_ext {
  ddb_page *page;
  uint64_t gen[2];     /* the tags' generations at fill */
  uint32_t tag_len[2]; /* the tags follow the key */
} page_ext;

typedef struct tag_entry {
  UT_hash_handle hh;
  uint64_t gen;
  size_t len;
  char key[]; /* the tag */
} tag_entry;

struct ddbc_store {
  pthread_mutex_t lock;
  entry **slots; /* the hash table: n_slots chains (a power of 2) */
  size_t n_slots;
  uint64_t seed; /* of the hash: per store */
  entry *head[2], *tail[2];
  size_t seg_bytes[2];
  size_t bytes, bytes_max;
  tag_entry *tags;
  size_t n_tags;
  uint64_t counter;      /* last generation handed out */
  uint64_t epoch;        /* generation of tags not in the table */
  int plain_lru;         /* ddbc_store_set_segmented(s, 0): one list only */
  ddbc_item_codec codec; /* KIND_PACKED items when codec.pack is set */
  ddbc_store_stats st;
};

/* The bytes malloc holds for a request of n (see the accounting above). */
static inline size_t alloc_charge(size_t n) {
  size_t c = (n + CHUNK_HEADER + CHUNK_ALIGN - 1) & ~(size_t)(CHUNK_ALIGN - 1);
  return c < CHUNK_MIN ? CHUNK_MIN : c;
}

/* Bytes of what an entry of kind holds between its header and its key. */
static inline size_t ext_size(int kind) {
  return kind == KIND_PAGE          ? sizeof(page_ext)
         : kind == KIND_ITEM        ? sizeof(ddb_item *)
         : kind == KIND_PACKED_JSON ? sizeof(json_ext)
                                    : 0;
}

/* What a page entry e holds after its header. */
static inline page_ext *page_of(entry *e) {
  return (page_ext *)(e + 1);
}

/* The item reference an item entry e holds after its header (an entry
** whose item is not packed). */
static inline ddb_item **item_ref_of(entry *e) {
  return (ddb_item **)(e + 1);
}

/* Where e's key starts: after its header and what its kind holds. */
static inline char *key_of(const entry *e) {
  return (char *)(e + 1) + ext_size(e->kind);
}

/* The hash of key[0..n): 8 bytes at a time, multiplied and folded, seeded
** per store (so that no fixed set of keys collides in every process). */
static inline uint32_t key_hash(const ddbc_store *s, const char *key,
                                size_t n) {
  const uint64_t m = 0xff51afd7ed558ccdULL;
  uint64_t h = s->seed ^ (n * 0x9e3779b97f4a7c15ULL), w;
  while(n >= 8) {
    memcpy(&w, key, 8);
    h = (h ^ w) * m;
    h ^= h >> 29;
    key += 8;
    n -= 8;
  }
  if(n) {
    w = 0;
    memcpy(&w, key, n);
    h = (h ^ w) * m;
  }
  h ^= h >> 32;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 29;
  return (uint32_t)h;
}

/* ------------------------------------------------------------------------
** The hash table (lock held)
*/

/* The entry of key (its hash h), or NULL. */
static inline entry *do_find(ddbc_store *s, const char *key, size_t len,
                             uint32_t h) {
  entry *e;
  if(!s->n_slots)
    return NULL;
  for(e = s->slots[h & (s->n_slots - 1)]; e; e = e->hnext)
    if(e->hash == h && e->key_len == len && memcmp(key_of(e), key, len) == 0)
      return e;
  return NULL;
}

#endif
