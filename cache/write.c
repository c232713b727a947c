/*
** write.c -- writes through the cache: PutItem, DeleteItem, UpdateItem,
** TransactWriteItems and BatchWriteItem sent by the client, then the cache
** told what each did (ddbc_note_write), by the rules in ddb_cache.h
** ("Writes through the cache").  ext/ (SQL writes) and api/ (libdyndb)
** write only through these, so the rules live here alone.
**
** Why the rules are what they are.  ddbc_note_write() needs the item's
** image before the write to know which cached pages the write made stale.
** An answer gives it (ALL_OLD), but only the answer of the attempt that did
** the write: when a write was retried (its first answer lost after
** DynamoDB applied it), the retry's answer shows the item as the first
** attempt left it, and when a write failed it may have been applied
** anyway.  In both cases the old image is unknown: old_known=0 makes every
** cached page of the table stale.
*/
#include <stdlib.h>
#include <string.h>

#include "ddb_cache.h"
#include "cache_int.h"

/* DynamoDB's most writes in one TransactWriteItems. */
#define DDBC_TRANSACT_MAX 100

/* Did the write fail because a condition failed (so nothing was written
** by this attempt)?  A single write says so in its type; a
** TransactWriteItems is cancelled, naming the reasons in its message.  A
** retried write whose earlier attempt's answer was lost
** (err->maybe_applied) may fail its condition because that attempt was
** applied: its outcome is unknown to the cache. */
static int cond_failed(const ddb_error *e) {
  return strcmp(e->type, "ConditionalCheckFailedException") == 0 ||
         (strcmp(e->type, "TransactionCanceledException") == 0 &&
          strstr(e->message, "ConditionalCheckFailed") != NULL);
}

/* A write of the item with key's key may or may not have happened, to an
** unknown image: drop its item entry, make every page of the table stale. */
static void note_unknown(ddb_client *c, const ddb_table_desc *d,
                         const ddb_item *key, const ddbc_policy *pol) {
  ddbc_policy forget = *pol;
  forget.item_ttl = 0; /* drops the entry, caches nothing */
  ddbc_note_write(c, d, NULL, 0, NULL, key, &forget);
}

/* A write that DynamoDB accepted (e: its call's error record, for the
** retries): old is the image before (NULL: none), trusted when old_known
** and the call was not retried; now is the image after (NULL: deleted). */
static void note_done(ddb_client *c, const ddb_table_desc *d,
                      const ddb_error *e, const ddb_item *old, int old_known,
                      const ddb_item *now, const ddb_item *key,
                      const ddbc_policy *pol) {
  if(e->retries > 0 || !old_known)
    ddbc_note_write(c, d, NULL, 0, now, key, pol);
  else
    ddbc_note_write(c, d, old, 1, now, key, pol);
  /* coherence=streams: its stream record must not evict this */
  ddbc_coherence_note_write(c, d, key, old, old_known && e->retries == 0, now);
}

ddb_result ddbc_put_item(ddb_client *c, const ddb_table_desc *d,
                         const ddb_item *item, const char *const *key_names,
                         int n_key, ddb_cond cond, const ddb_item *expect,
                         const ddbc_policy *pol, ddb_item **old,
                         ddb_error *err) {
  ddb_item *was = NULL;
  ddb_tally t, *prev;
  ddb_result result;
  if(old)
    *old = NULL;
  /* the old image always: the cache needs it to know which pages change */
  prev = ddb_tally_begin(&t);   /* for dynamodb_hot */
  ddbc_coherence_write_begin(); /* coherence.c's own writes */
  result = ddb_put_item(c, d->name, item, key_names, n_key, cond, expect, &was,
                        err);
  ddb_tally_end(prev);
  ddbc_hot_writes(d, item, NULL, 0, &t);
  if(result) {
    if(!cond_failed(err) || err->maybe_applied) /* see cond_failed */
      note_unknown(c, d, item, pol);
    return result;
  }
  note_done(c, d, err, was, 1, item, item, pol);
  if(old)
    *old = was;
  else
    ddb_item_unref(was);
  return DDB_OK;
}

ddb_result ddbc_delete_item(ddb_client *c, const ddb_table_desc *d,
                            const ddb_item *key, const char *const *key_names,
                            int n_key, ddb_cond cond, const ddb_item *expect,
                            const ddbc_policy *pol, ddb_item **old,
                            ddb_error *err) {
  ddb_item *was = NULL;
  ddb_tally t, *prev;
  ddb_result result;
  if(old)
    *old = NULL;
  prev = ddb_tally_begin(&t);   /* for dynamodb_hot */
  ddbc_coherence_write_begin(); /* coherence.c's own writes */
  result = ddb_delete_item(c, d->name, key, key_names, n_key, cond, expect,
                           &was, err);
  ddb_tally_end(prev);
  ddbc_hot_writes(d, key, NULL, 0, &t);
  if(result) {
    if(!cond_failed(err) || err->maybe_applied) /* see cond_failed */
      note_unknown(c, d, key, pol);
    return result;
  }
  note_done(c, d, err, was, 1, NULL, key, pol);
  if(old)
    *old = was;
  else
    ddb_item_unref(was);
  return DDB_OK;
}

ddb_result ddbc_update_item(ddb_client *c, const ddb_table_desc *d,
                            const ddb_item *key, const char *const *key_names,
                            int n_key, const ddb_item *set,
                            const char *const *remove, int n_remove,
                            ddb_cond cond, const ddb_item *was,
                            const ddbc_policy *pol, ddb_item **updated,
                            ddb_error *err) {
  ddb_item *after = NULL;
  ddb_tally t, *prev;
  ddb_result result;
  if(updated)
    *updated = NULL;
  prev = ddb_tally_begin(&t);   /* for dynamodb_hot */
  ddbc_coherence_write_begin(); /* coherence.c's own writes */
  result = ddb_update_item(c, d->name, key, key_names, n_key, set, remove,
                           n_remove, cond, was, &after, err);
  ddb_tally_end(prev);
  ddbc_hot_writes(d, key, NULL, 0, &t);
  if(result) {
    if(!cond_failed(err) || err->maybe_applied) /* see cond_failed */
      note_unknown(c, d, key, pol);
    return result;
  }
  if(after)
    note_done(c, d, err, was, was != NULL, after, key, pol);
  else
    note_unknown(c, d, key, pol); /* no image after in the answer */
  if(updated)
    *updated = after;
  else
    ddb_item_unref(after);
  return DDB_OK;
}

/* Tell the cache about the writes w[0..n) of one call, in at most two
** notes (ddbc_note_writes): those with bad[i] (or every one, bad NULL and
** all_bad) as writes of unknown outcome (note_unknown's rule), the others
** as done (note_done's rule: the image before was[i] trusted unless the
** call was retried or was is NULL; after, a PUT's item, a DELETE's
** absence; an UPDATE, whose answer holds no image, as unknown).  Out of
** memory, each is noted on its own, as unknown. */
static void note_call(ddb_client *c, const ddb_table_desc *d,
                      const ddb_write *w, size_t n, const unsigned char *done,
                      const ddb_item *const *was, const ddb_error *e,
                      const ddbc_policy *pol) {
  ddbc_write_note *a = malloc(sizeof(*a) * (n ? n : 1));
  ddbc_policy forget = *pol;
  int trusted = was != NULL && e->retries == 0;
  size_t i, m = 0;
  forget.item_ttl = 0; /* drops the entry, caches nothing */
  if(!a) {
    for(i = 0; i < n; i++)
      note_unknown(c, d, w[i].item, pol);
    return;
  }
  for(i = 0; i < n; i++) /* unknown: dropped, every page stale */
    if(!done[i] || w[i].kind == DDB_WRITE_UPDATE) {
      memset(&a[m], 0, sizeof(a[m]));
      a[m++].key = w[i].item;
    }
  if(m)
    ddbc_note_writes(c, d, a, m, &forget);
  m = 0;
  for(i = 0; i < n; i++)
    if(done[i] && w[i].kind != DDB_WRITE_UPDATE) {
      a[m].old_item = trusted ? was[i] : NULL;
      a[m].old_known = trusted;
      a[m].new_item = w[i].kind == DDB_WRITE_PUT ? w[i].item : NULL;
      a[m++].key = w[i].item;
    }
  if(m)
    ddbc_note_writes(c, d, a, m, pol);
  for(i = 0; i < m; i++) /* coherence=streams, as note_done */
    ddbc_coherence_note_write(c, d, a[i].key, a[i].old_item, a[i].old_known,
                              a[i].new_item);
  free(a);
}

/* note_call for the writes w[0..n) of a call that may span tables (each
** w[i].d, NULL: d): the writes of each table in one note_call.  n is at
** most DDBC_TRANSACT_MAX. */
static void note_tables(ddb_client *c, const ddb_table_desc *d,
                        const ddb_write *w, size_t n,
                        const unsigned char *done, const ddb_item *const *was,
                        const ddb_error *e, const ddbc_policy *pol) {
  ddb_write sub[DDBC_TRANSACT_MAX];
  const ddb_item *sub_was[DDBC_TRANSACT_MAX];
  unsigned char sub_done[DDBC_TRANSACT_MAX];
  size_t i, j, m;
  for(i = 0; i < n && (!w[i].d || w[i].d == d); i++)
    ;
  if(i == n) { /* one table */
    note_call(c, d, w, n, done, was, e, pol);
    return;
  }
  for(i = 0; i < n; i++) {
    const ddb_table_desc *di = w[i].d ? w[i].d : d;
    for(j = 0; j < i && (w[j].d ? w[j].d : d) != di; j++)
      ;
    if(j < i)
      continue; /* noted with the first write of its table */
    for(j = i, m = 0; j < n; j++)
      if((w[j].d ? w[j].d : d) == di) {
        sub[m] = w[j];
        sub_was[m] = was ? was[j] : NULL;
        sub_done[m++] = done[j];
      }
    note_call(c, di, sub, m, sub_done, was ? sub_was : NULL, e, pol);
  }
}

ddb_result ddbc_transact_write(ddb_client *c, const ddb_table_desc *d,
                               const ddb_write *w, int n,
                               const char *const *key_names, int n_key,
                               const ddb_item *const *was,
                               const ddbc_policy *pol, ddb_error *err) {
  unsigned char all[DDBC_TRANSACT_MAX];
  ddb_tally t, *prev;
  ddb_result result;
  prev = ddb_tally_begin(&t);   /* for dynamodb_hot */
  ddbc_coherence_write_begin(); /* coherence.c's own writes */
  result = ddb_transact_write(c, d->name, w, n, key_names, n_key, err);
  ddb_tally_end(prev);
  ddbc_hot_writes(d, NULL, w, (size_t)n, &t);
  if(n <= 0 || n > DDBC_TRANSACT_MAX || (result && cond_failed(err)))
    return result; /* refused as a whole (or nothing to say): no write */
  /* all done, or, on another error, all perhaps done */
  memset(all, result == DDB_OK, (size_t)n);
  note_tables(c, d, w, (size_t)n, all, was, err, pol);
  return result;
}

ddb_result ddbc_batch_write(ddb_client *c, const ddb_table_desc *d,
                            const ddb_write *w, size_t n,
                            const char *const *key_names, int n_key,
                            const ddbc_policy *pol, unsigned char *state,
                            ddb_error *err) {
  unsigned char one[32], *st = state, *done;
  ddb_tally t, *prev;
  ddb_result result;
  size_t i;
  if(!st)
    st = n <= sizeof(one) ? one : malloc(n);
  prev = ddb_tally_begin(&t);   /* for dynamodb_hot */
  ddbc_coherence_write_begin(); /* coherence.c's own writes */
  result = ddb_batch_write(c, d->name, w, n, key_names, n_key, st, err);
  ddb_tally_end(prev);
  ddbc_hot_writes(d, NULL, w, n, &t);
  /* applied: written through; on error every other one is dropped (it
  ** may be done; not applied, it is dropped as the single calls drop
  ** theirs: the next read asks DynamoDB) */
  done = st ? malloc(n ? n : 1) : NULL;
  if(done) {
    for(i = 0; i < n; i++)
      done[i] = st[i] == DDB_WRITE_APPLIED || (result == DDB_OK);
    note_call(c, d, w, n, done, NULL, err, pol);
    free(done);
  } else {
    for(i = 0; i < n; i++)
      note_unknown(c, d, w[i].item, pol);
  }
  if(st != state && st != one)
    free(st);
  return result;
}
