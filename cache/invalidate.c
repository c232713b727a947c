/*
** invalidate.c -- one job: what a write, or dynamodb_cache_clear('t'),
** makes stale.  A write through this process (ddbc_note_write, from
** write.c) replaces the item's entry with the written item, drops the
** other principals' entries of it, and moves the generation tags of the
** pages it could alter (see cache.c's "Consistency" and "Keys and
** tags"); clearing a table drops its entries and DescribeTable answers.
*/
#include <stdlib.h>
#include <string.h>

#include "ddb_cache.h"
#include "cache_int.h"
#include "shared.h"
#include "store.h"

/* ------------------------------------------------------------------------
** Clearing one table (dynamodb_cache_clear('t'))
*/
/* What ddbc_clear_table drops: the entries of one table at one place. */
typedef struct table_match {
  const char *place;
  size_t place_len, principal_len;
  ddb_buf part; /* the table as a part (ddb_buf_add_part) */
  ddb_buf body; /* a request body's start: {"TableName":"..." */
} table_match;

/* ddbc_store_drop_if's test: an item (I place principal table ...) or a
** page (Q place principal {"TableName":table, or }) of the table. */
static int table_entry(const char *key, size_t len, void *ctx) {
  const table_match *t = ctx;
  size_t head = 1 + t->place_len + t->principal_len;
  const char *rest = key + head;
  size_t n = len - head;
  if(len <= head || (key[0] != 'I' && key[0] != 'Q') ||
     memcmp(key + 1, t->place, t->place_len) != 0)
    return 0;
  if(key[0] == 'I')
    return n >= t->part.len && memcmp(rest, t->part.p, t->part.len) == 0;
  return n > t->body.len && memcmp(rest, t->body.p, t->body.len) == 0 &&
         (rest[t->body.len] == ',' || rest[t->body.len] == '}');
}

size_t ddbc_clear_table(ddb_client *c, const char *table) {
  ddbc_store *s = ddbc_cache_store();
  const char *principal;
  table_match t;
  ddb_buf tag;
  size_t n = 0;
  if(!s)
    return 0;
  ddb_client_scope(c, &t.place, &t.place_len, &principal, &t.principal_len);
  ddb_buf_init(&t.part, DDBC_KEY_MAX);
  ddb_buf_init(&t.body, DDBC_KEY_MAX);
  ddb_buf_init(&tag, DDBC_KEY_MAX);
  ddb_buf_add_part(&t.part, table, strlen(table));
  ddb_buf_adds(&t.body, "{\"TableName\":");
  ddb_buf_json_str(&t.body, table, strlen(table));
  /* pages being read now must not fill: their table's generation moves */
  ddbc_tag_head(&tag, 'T', c, table);
  if(!tag.failed)
    ddbc_store_bump(s, tag.p, tag.len);
  if(!t.part.failed && !t.body.failed)
    n = ddbc_store_drop_if(s, table_entry, &t);
  /* and its DescribeTable answers, whoever asked */
  ddbc_describe_forget(t.place, t.place_len, t.principal_len, &t.part);
  ddb_buf_free(&t.part);
  ddb_buf_free(&t.body);
  ddb_buf_free(&tag);
  return n;
}

/* ------------------------------------------------------------------------
** Writes
*/
/* Append tag b to the list of tags (their bytes in *all, their ends in
** ends[0..*n)), unless it is one of the two appended last: the writes of
** one call mostly share their partitions. */
static void tag_list_add(ddb_buf *all, size_t *ends, size_t *n,
                         const ddb_buf *b) {
  size_t j;
  if(b->failed || !b->p)
    return;
  for(j = *n; j > 0 && j + 2 > *n; j--) {
    size_t start = j > 1 ? ends[j - 2] : 0;
    if(ends[j - 1] - start == b->len &&
       memcmp(all->p + start, b->p, b->len) == 0)
      return;
  }
  ddb_buf_add(all, b->p, b->len);
  if(!all->failed)
    ends[(*n)++] = all->len;
}

/* The tags the writes w[0..n) of table d touch, appended to the list
** (all, ends, *n_tags: tag_list_add): the partitions their old and new
** images live in, in every index; the table's Scans; the whole table
** when an old image is unknown.  b is scratch. */
static void write_tags(ddb_client *c, const ddb_table_desc *d,
                       const ddbc_write_note *w, size_t n, ddb_buf *b,
                       ddb_buf *all, size_t *ends, size_t *n_tags) {
  size_t i, k;
  int img, any_unknown = 0;
  for(i = 0; i < n; i++) {
    any_unknown |= !w[i].old_known;
    for(img = 0; img < 2; img++) {
      const ddb_item *it = img ? w[i].new_item : w[i].old_item;
      if(!it)
        continue;
      for(k = 0; k < (size_t)d->n_indexes; k++) {
        const ddb_av *pk = ddb_item_get(it, d->indexes[k].pk.name);
        if(!pk)
          continue; /* not in this (sparse) index */
        ddb_buf_reset(b);
        ddbc_partition_tag(b, c, d->name, d->indexes[k].name, pk);
        tag_list_add(all, ends, n_tags, b);
      }
    }
  }
  ddb_buf_reset(b);
  ddbc_tag_head(b, 'S', c, d->name);
  tag_list_add(all, ends, n_tags, b);
  if(any_unknown) {
    ddb_buf_reset(b);
    ddbc_tag_head(b, 'T', c, d->name);
    tag_list_add(all, ends, n_tags, b);
  }
}

/* The items the writes w[0..n) of table d (key names names[0..n_names))
** wrote: dropped from the store s for the other principals, and their
** keys for the writer's appended to all (ends[0..*n_keys)), items[j] the
** new image of each (NULL: deleted).  b is scratch. */
static void write_keys(ddbc_store *s, ddb_client *c, const ddb_table_desc *d,
                       const ddbc_write_note *w, size_t n,
                       const char *const *names, int n_names, ddb_buf *b,
                       ddb_buf *all, size_t *ends, ddb_item **items,
                       size_t *n_keys) {
  size_t i;
  for(i = 0; i < n; i++) {
    ddbc_drop_other_principals(s, c, d->name, w[i].key, names, n_names);
    ddb_buf_reset(b);
    if(ddbc_item_key(b, c, d->name, w[i].key, names, n_names) == 0) {
      ddb_buf_add(all, b->p, b->len);
      if(all->failed)
        break;
      ends[*n_keys] = all->len;
      items[(*n_keys)++] = (ddb_item *)w[i].new_item;
    }
  }
}

/* The n byte strings of all, each ending at ends[i] (the next starts
** there), as out[0..n). */
static void tags_at(const ddb_buf *all, const size_t *ends, size_t n,
                    ddbc_tag *out) {
  size_t i;
  for(i = 0; i < n; i++) {
    out[i].p = all->p + (i ? ends[i - 1] : 0);
    out[i].len = ends[i] - (i ? ends[i - 1] : 0);
  }
}

/* See ddb_cache.h: the tags and the keys of the writes gathered, then told
** to the store in one call (ddbc_store_note_writes); out of memory, each
** write told alone, as one that forgets the table's pages. */
void ddbc_note_writes(ddb_client *c, const ddb_table_desc *d,
                      const ddbc_write_note *w, size_t n,
                      const ddbc_policy *pol) {
  ddbc_store *s = ddbc_cache_store();
  const char *names[2];
  ddbc_tag *tags = NULL, *keys = NULL;
  ddb_item **items = NULL;
  size_t *tag_end = NULL, *key_end = NULL, n_tags = 0, n_keys = 0, i;
  int n_names;
  ddb_buf b, all_tags, all_keys;
  if(!s || n == 0)
    return;
  ddb_buf_init(&b, DDBC_KEY_MAX);
  ddb_buf_init(&all_tags, (size_t)DDBC_KEY_MAX * (d->n_indexes * 2 + 2) * n);
  ddb_buf_init(&all_keys, (size_t)DDBC_KEY_MAX * n);
  names[0] = d->indexes[0].pk.name;
  names[1] = d->indexes[0].sk.name;
  n_names = names[1] ? 2 : 1;
  tag_end = malloc(sizeof(*tag_end) * ((size_t)d->n_indexes * 2 * n + 2));
  key_end = malloc(sizeof(*key_end) * n);
  tags = malloc(sizeof(*tags) * ((size_t)d->n_indexes * 2 * n + 2));
  keys = malloc(sizeof(*keys) * n);
  items = malloc(sizeof(*items) * n);
  if(!tag_end || !key_end || !tags || !keys || !items) {
    /* out of memory: forget the table's pages and the items, one by one */
    for(i = 0; i < n; i++)
      ddbc_note_write(c, d, NULL, 0, NULL, w[i].key, pol);
    goto done;
  }
  write_tags(c, d, w, n, &b, &all_tags, tag_end, &n_tags);
  /* the items themselves: dropped for the other principals, written
  ** through for the writer's */
  write_keys(s, c, d, w, n, names, n_names, &b, &all_keys, key_end, items,
             &n_keys);
  tags_at(&all_tags, tag_end, n_tags, tags);
  tags_at(&all_keys, key_end, n_keys, keys);
  ddbc_store_note_writes(s, tags, n_tags, keys, items, n_keys, ddbc_now(),
                         pol->item_ttl);

done:
  free(tag_end);
  free(key_end);
  free(tags);
  free(keys);
  free(items);
  ddb_buf_free(&b);
  ddb_buf_free(&all_tags);
  ddb_buf_free(&all_keys);
}

void ddbc_note_write(ddb_client *c, const ddb_table_desc *d,
                     const ddb_item *old_item, int old_known,
                     const ddb_item *new_item, const ddb_item *key,
                     const ddbc_policy *pol) {
  ddbc_store *s = ddbc_cache_store();
  const char *names[2];
  int n_names, i, img;
  ddb_buf b;
  if(!s)
    return;
  ddb_buf_init(&b, DDBC_KEY_MAX);
  names[0] = d->indexes[0].pk.name;
  names[1] = d->indexes[0].sk.name;
  n_names = names[1] ? 2 : 1;
  /* the partitions the old and the new image live in, in every index */
  for(img = 0; img < 2; img++) {
    const ddb_item *it = img ? new_item : old_item;
    if(!it)
      continue;
    for(i = 0; i < d->n_indexes; i++) {
      const ddb_av *pk = ddb_item_get(it, d->indexes[i].pk.name);
      if(!pk)
        continue; /* not in this (sparse) index */
      ddb_buf_reset(&b);
      ddbc_partition_tag(&b, c, d->name, d->indexes[i].name, pk);
      if(!b.failed)
        ddbc_store_bump(s, b.p, b.len);
    }
  }
  ddb_buf_reset(&b);
  ddbc_tag_head(&b, 'S', c, d->name);
  ddbc_store_bump(s, b.p, b.len);
  if(!old_known) {
    ddb_buf_reset(&b);
    ddbc_tag_head(&b, 'T', c, d->name);
    ddbc_store_bump(s, b.p, b.len);
  }
  /* the item itself: dropped for the other principals, written through
  ** for the writer's */
  ddbc_drop_other_principals(s, c, d->name, key, names, n_names);
  ddb_buf_reset(&b);
  if(ddbc_item_key(&b, c, d->name, key, names, n_names) == 0) {
    ddbc_store_write_item(s, b.p, b.len, (ddb_item *)new_item, ddbc_now(),
                          pol->item_ttl);
    if(pol->shared) {
      size_t len;
      const char *tail = ddbc_shared_tail(c, &b, &len);
      ddbc_shared_note_write(pol->shared, c, d->name, tail, len, new_item,
                             pol->item_ttl, ddbc_shared_now());
    }
  }
  ddb_buf_free(&b);
}
