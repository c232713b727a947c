/*
** coherence_apply.c -- coherence=streams: each stream record as one
** self-contained change record, and apply(): what it retires from this
** process's cache; this process's own writes recognised.
**
** The change record (the FLEET HOOK: a shared-tier leader publishes these
** bytes, followers apply them).  Each stream record becomes one
** self-contained byte string, then apply() retires what it names:
**
**   0      'C'           magic
**   1      1             version
**   2      event         'I' INSERT, 'M' MODIFY, 'R' REMOVE
**   3      flags         1: the old image's index keys are known (carried,
**                        or no old image: INSERT); 2: the same of the new
**                        image (carried, or none: REMOVE)
**   4..11  created       ApproximateCreationDateTime, ms since the epoch,
**                        big-endian
**   then four parts, each a 4-byte big-endian length and that many bytes
**   of an item packed by ddb_item_pack (length 0: none):
**          keys          the table's key attributes (Keys)
**          old_keys      the old image's attributes that key any index
**          new_keys      the same of the new image
**          new_image     the whole new image when carried and at most
**                        CHANGE_IMAGE_MAX bytes packed (only to recognise
**                        this process's own writes: own_match)
**
** This process's own writes.  ddbc_note_write already put the written item
** in the cache and moved the tags of the pages it could change, so its
** record must not evict them again.  A write of a table with a reader
** leaves a fingerprint (own_note): its item key, and its new image when
** the stream carries images.  A record whose key has a fingerprint:
**   - images: skipped when its NewImage equals the fingerprint's (then
**     the item is what the write stored, and every page filled since the
**     write saw it); any other record of that key drops the key's
**     fingerprints.  A write that changed nothing makes no record: its
**     fingerprint stays until FP_TTL, and the next record of the key is a
**     change away from that image, which does not match.
**   - KEYS_ONLY: nothing to compare, so a fingerprint is left only when a
**     record is certain (the write knew the image before and it differs
**     from the new one) and no record of that key was applied since the
**     write began (ddbc_coherence_write_begin: that record may be the
**     write's own, come before the fingerprint);
**     the first record of that kind (REMOVE or not) consumes it.  Other
**     own writes are evicted by their record: one more GetItem (and the
**     pages of the partition) after each such write.
**
*/
#include <stdlib.h>
#include <string.h>

#include "coherence.h"
#include "store.h"

/* ------------------------------------------------------------------------
** The change record
*/
/* Append n as 4 bytes big-endian. */
static void put_u32(ddb_buf *b, size_t n) {
  unsigned char x[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16),
                        (unsigned char)(n >> 8), (unsigned char)n};
  ddb_buf_add(b, (const char *)x, 4);
}

/* Append item it packed, as a part (NULL: an empty part). */
static void put_item(ddb_buf *b, const ddb_item *it) {
  size_t n = it ? ddb_item_packed_size(it) : 0;
  unsigned char *p = n ? malloc(n) : NULL;
  if(n && !p) {
    b->failed = 1;
    return;
  }
  if(p)
    ddb_item_pack(it, p);
  put_u32(b, n);
  ddb_buf_add(b, (const char *)p, n);
  free(p);
}

/* A new item of the attributes of img that key some index of d (NULL: img
** is NULL, or out of memory). */
static ddb_item *index_keys(const ddb_table_desc *d, const ddb_item *img) {
  const ddb_av *attrs[64];
  int n = 0, i, j, k;
  if(!img)
    return NULL;
  for(i = 0; i < d->n_indexes && n < 60; i++)
    for(k = 0; k < 2; k++)
      for(j = 0; j < ddb_key_attrs(&d->indexes[i], k) && n < 60; j++) {
        const char *name =
            k ? d->indexes[i].sks[j].name : d->indexes[i].pks[j].name;
        const ddb_av *v = ddb_item_get(img, name);
        int dup = 0, m;
        for(m = 0; m < n; m++)
          dup |= strcmp(attrs[m]->name, name) == 0;
        if(v && !dup)
          attrs[n++] = v;
      }
  return ddb_item_from_attrs(attrs, n);
}

/* See coherence.h. */
int ddbc_change_encode(const ddb_table_desc *d, const ddb_stream_record *r,
                       int images, ddb_buf *out) {
  unsigned long long ms =
      r->created > 0 ? (unsigned long long)(r->created * 1000.0) : 0;
  unsigned char head[12];
  ddb_item *ok = NULL, *nk = NULL;
  int i, flags = 0;
  if(r->event == 'I' || (images && r->old_image))
    flags |= 1;
  if(r->event == 'R' || (images && r->new_image))
    flags |= 2;
  head[0] = 'C';
  head[1] = 1;
  head[2] = (unsigned char)r->event;
  head[3] = (unsigned char)flags;
  for(i = 0; i < 8; i++)
    head[4 + i] = (unsigned char)(ms >> (56 - 8 * i));
  ddb_buf_add(out, (const char *)head, sizeof(head));
  put_item(out, r->keys);
  ok = index_keys(d, r->old_image);
  nk = index_keys(d, r->new_image);
  put_item(out, ok);
  put_item(out, nk);
  put_item(out, r->new_image &&
                        ddb_item_packed_size(r->new_image) <= CHANGE_IMAGE_MAX
                    ? r->new_image
                    : NULL);
  ddb_item_unref(ok);
  ddb_item_unref(nk);
  return out->failed ? -1 : 0;
}

/* The decoded change record: its items (new references) and fields. */
typedef struct change {
  int event, flags;
  double created;
  ddb_item *keys, *old_keys, *new_keys, *new_image;
} change;

static void change_free(change *ch) {
  ddb_item_unref(ch->keys);
  ddb_item_unref(ch->old_keys);
  ddb_item_unref(ch->new_keys);
  ddb_item_unref(ch->new_image);
}

/* Take one part of rec[*at..len) as an item into *out (NULL: empty).
** Returns 0, or -1 when malformed or out of memory. */
static int take_item(const char *rec, size_t len, size_t *at, ddb_item **out) {
  const unsigned char *p = (const unsigned char *)rec + *at;
  size_t n;
  *out = NULL;
  if(len - *at < 4)
    return -1;
  n = ((size_t)p[0] << 24) | ((size_t)p[1] << 16) | ((size_t)p[2] << 8) | p[3];
  *at += 4;
  if(n > len - *at)
    return -1;
  if(n && !(*out = ddb_item_unpack(p + 4, n)))
    return -1;
  *at += n;
  return 0;
}

/* Decode change record rec[0..len) into *ch.  0, or -1 (malformed). */
static int change_decode(const char *rec, size_t len, change *ch) {
  const unsigned char *p = (const unsigned char *)rec;
  unsigned long long ms = 0;
  size_t at = 12;
  int i;
  memset(ch, 0, sizeof(*ch));
  if(len < 12 || p[0] != 'C' || p[1] != 1)
    return -1;
  ch->event = p[2];
  ch->flags = p[3];
  for(i = 0; i < 8; i++)
    ms = (ms << 8) | p[4 + i];
  ch->created = (double)ms / 1000.0;
  if(take_item(rec, len, &at, &ch->keys) || !ch->keys ||
     take_item(rec, len, &at, &ch->old_keys) ||
     take_item(rec, len, &at, &ch->new_keys) ||
     take_item(rec, len, &at, &ch->new_image)) {
    change_free(ch);
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------------------
** Own writes (see the top of the file)
*/
/* See coherence.h. */
void ddbc_own_drop(ddbc_reader *r, int i) {
  free(r->fp[i].key);
  ddb_item_unref(r->fp[i].image);
  r->fp[i] = r->fp[--r->n_fp];
}

/* Was a record of item key k applied since `since` (when the write began:
** such a record may be the write's own), or do the keys remembered not
** reach back that far (mu held)? */
int ddbc_own_seen_since(ddbc_reader *r, const char *k, size_t n,
                        double since) {
  int i, full = 1;
  double oldest = 0;
  for(i = 0; i < SEEN_MAX; i++) {
    if(!r->seen[i]) {
      full = 0;
      continue;
    }
    if(!oldest || r->seen_t[i] < oldest)
      oldest = r->seen_t[i];
    if(r->seen_t[i] >= since && r->seen_len[i] == n &&
       memcmp(r->seen[i], k, n) == 0)
      return 1;
  }
  return full && oldest >= since;
}

/* A record of key k applied: remember it (mu held). */
static void do_seen_add(ddbc_reader *r, const char *k, size_t n, double now) {
  int i = r->seen_next;
  char *p = malloc(n);
  free(r->seen[i]);
  r->seen[i] = p;
  r->seen_len[i] = p ? n : 0;
  if(p)
    memcpy(p, k, n);
  r->seen_t[i] = now;
  r->seen_next = (i + 1) % SEEN_MAX;
}

/* Is the record of key k (event, new image img or NULL when not carried)
** this process's own write (a fingerprint consumed)?  Any record of k that
** is not drops k's fingerprints (mu held). */
static int do_own_match(ddbc_reader *r, const char *k, size_t n, int event,
                        const ddb_item *img, double now) {
  int i, hit = 0;
  for(i = r->n_fp - 1; i >= 0; i--) {
    fingerprint *f = &r->fp[i];
    if(now - f->t > FP_TTL) {
      ddbc_own_drop(r, i);
      continue;
    }
    if(f->key_len != n || memcmp(f->key, k, n) != 0)
      continue;
    if(!hit && r->images)
      hit = f->removed ? event == 'R'
                       : event != 'R' && img && f->image &&
                             ddb_av_equal(&f->image->root, &img->root);
    else if(!hit)
      hit = f->removed == (event == 'R');
    ddbc_own_drop(r, i);
  }
  return hit;
}

/* ------------------------------------------------------------------------
** Applying a change
*/
/* Move tag b of store s (nothing when it could not be built). */
static void bump(ddbc_store *s, const ddb_buf *b) {
  if(!b->failed && b->p)
    ddbc_store_bump(s, b->p, b->len);
}

/* Retire the pages ch could change: for each index, the partitions of the
** images whose keys are known (a table's and an LSI's partition key is in
** Keys); any index it cannot place, by the whole table; the table's scans
** always. */
static void retire_pages(ddbc_reader *r, ddbc_store *s, const change *ch) {
  const ddb_table_desc *d = r->d;
  int i, img, by_table = 0;
  ddb_buf b;
  ddb_buf_init(&b, DDBC_KEY_MAX);
  for(i = 0; i < d->n_indexes; i++) {
    const ddb_index *x = &d->indexes[i];
    for(img = 0; img < 2; img++) {
      const ddb_item *keys = img ? ch->new_keys : ch->old_keys;
      const ddb_av *pk;
      if(i == 0 || x->is_local)
        keys = ch->keys; /* the table's partition key: in every image */
      else if(!(ch->flags & (img ? 2 : 1))) {
        by_table = 1; /* an image not carried: this index's partition */
        continue;
      }
      pk = keys ? ddb_item_get(keys, x->pk.name) : NULL;
      if(!pk)
        continue; /* not in this (sparse) index */
      ddb_buf_reset(&b);
      ddbc_partition_tag(&b, r->c, r->table, x->name, pk);
      bump(s, &b);
    }
  }
  ddb_buf_reset(&b);
  ddbc_tag_head(&b, 'S', r->c, r->table);
  bump(s, &b);
  if(by_table) {
    ddb_buf_reset(&b);
    ddbc_tag_head(&b, 'T', r->c, r->table);
    bump(s, &b);
  }
  ddb_buf_free(&b);
}

/* FLEET HOOK: apply one change record rec[0..len) (the format at the top
** of the file) to this process's cache: unless it is this process's own
** write (own_match), drop the item's entry of every principal and retire
** the pages it could change.  A record that does not decode retires the
** table (ddbc_clear_table).  r->d must be set. */
void ddbc_reader_apply(ddbc_reader *r, const char *rec, size_t len) {
  ddbc_store *s = ddbc_cache_store();
  const char *names[2];
  int n_names;
  change ch;
  ddb_buf k;
  double now = ddbc_now();
  if(!s || !r->d)
    return;
  if(change_decode(rec, len, &ch)) {
    ddbc_clear_table(r->c, r->table);
    return;
  }
  names[0] = r->d->indexes[0].pk.name;
  names[1] = r->d->indexes[0].sk.name;
  n_names = names[1] ? 2 : 1;
  ddb_buf_init(&k, DDBC_KEY_MAX);
  if(ddb_key_encode(ch.keys, names, n_names, &k) == 0 && !k.failed) {
    int own;
    pthread_mutex_lock(&r->mu);
    own = do_own_match(r, k.p, k.len, ch.event, ch.new_image, now);
    if(!r->images)
      do_seen_add(r, k.p, k.len, now);
    r->own_skipped += own;
    r->records++;
    pthread_mutex_unlock(&r->mu);
    if(!own) {
      ddbc_drop_other_principals(s, r->c, r->table, ch.keys, names, n_names);
      ddb_buf_reset(&k);
      if(ddbc_item_key(&k, r->c, r->table, ch.keys, names, n_names) == 0)
        ddbc_store_write_item(s, k.p, k.len, NULL, now, 0);
      retire_pages(r, s, &ch);
    }
  } else {
    ddbc_clear_table(r->c, r->table);
  }
  ddb_buf_free(&k);
  change_free(&ch);
}

/* See coherence.h. */
void ddbc_reader_own_free(ddbc_reader *r) {
  int i;
  for(i = 0; i < r->n_fp; i++) {
    free(r->fp[i].key);
    ddb_item_unref(r->fp[i].image);
  }
  r->n_fp = 0;
  for(i = 0; i < SEEN_MAX; i++) {
    free(r->seen[i]);
    r->seen[i] = NULL;
  }
}
