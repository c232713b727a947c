/*
** write.c -- PutItem, UpdateItem, DeleteItem and TransactWriteItems,
** write-through: each is sent by cache/write.c (ddbc_put_item ...), which
** puts the item as written into the cache and makes stale the pages it
** could change (as for SQL writes, ext/write.c).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_int.h"

/* Attribute names one UpdateItem may remove, at the most. */
#define REMOVE_MAX 1000

static ddb_cond cond_of(int flags) {
  if(flags & DYN_IF_NOT_EXISTS)
    return DDB_COND_NOT_EXISTS;
  if(flags & DYN_IF_EXISTS)
    return DDB_COND_EXISTS;
  return DDB_COND_NONE;
}

/* Check an item to put: its key, its values, its size. */
static dyn_code check_put(const dyn_table *t, const ddb_item *item,
                          const char *what, dyn_error *err) {
  dyn_code result = dyni_key(t, item, what, NULL, err);
  size_t size;
  if(result)
    return result;
  result = dyni_check_item(item, err);
  if(result)
    return result;
  size = ddb_item_size(item);
  if(size > DDB_ITEM_MAX_SIZE)
    return dyni_fail(err, DYN_EINPUT,
                     "%s: %zu bytes, over DynamoDB's 400 KB for an item", what,
                     size);
  return DYN_OK;
}

dyn_code dyn_put_item(dyn_client *c, const char *table, const dyn_item *item,
                      int flags, dyn_item **old, dyn_error *err) {
  dyn_table *t = NULL;
  ddb_item *was = NULL;
  ddb_error e;
  dyn_code result;

  result = dyni_enter(c, flags, DYN_IF_EXISTS | DYN_IF_NOT_EXISTS,
                      "dyn_put_item", err);
  if(result)
    return result;
  if(old)
    *old = NULL;
  result = dyni_table_get(c, table, &t, err);
  if(result)
    return result;
  result = check_put(t, CITEM(item), "item", err);
  if(result)
    goto fail;
  ddb_error_clear(&e);
  if(ddbc_put_item(c->ddb, t->desc, CITEM(item), t->key_names, t->n_key,
                   cond_of(flags), NULL, &c->pol, &was, &e)) {
    result = dyni_error(err, &e);
    goto fail;
  }
  if(old) {
    *old = PITEM(was);
    was = NULL;
  }

fail:
  ddb_item_unref(was);
  dyni_table_unref(t);
  return result;
}

dyn_code dyn_delete_item(dyn_client *c, const char *table, const dyn_item *key,
                         int flags, dyn_item **old, dyn_error *err) {
  dyn_table *t = NULL;
  ddb_item *k = NULL, *was = NULL;
  ddb_error e;
  dyn_code result;

  result = dyni_enter(c, flags, DYN_IF_EXISTS, "dyn_delete_item", err);
  if(result)
    return result;
  if(old)
    *old = NULL;
  result = dyni_table_get(c, table, &t, err);
  if(result)
    return result;
  result = dyni_key(t, CITEM(key), "key", &k, err);
  if(result)
    goto fail;
  ddb_error_clear(&e);
  if(ddbc_delete_item(c->ddb, t->desc, k, t->key_names, t->n_key,
                      cond_of(flags), NULL, &c->pol, &was, &e)) {
    result = dyni_error(err, &e);
    goto fail;
  }
  if(old) {
    *old = PITEM(was);
    was = NULL;
  }

fail:
  ddb_item_unref(was);
  ddb_item_unref(k);
  dyni_table_unref(t);
  return result;
}

/* Is name one of t's key attributes? */
static int is_key(const dyn_table *t, const char *name) {
  int i;
  for(i = 0; i < t->n_key; i++)
    if(strcmp(t->key_names[i], name) == 0)
      return 1;
  return 0;
}

dyn_code dyn_update_item(dyn_client *c, const char *table, const dyn_item *key,
                         const dyn_item *set, const char *const *remove,
                         size_t n_remove, int flags, dyn_item **updated,
                         dyn_error *err) {
  dyn_table *t = NULL;
  ddb_item *k = NULL, *after = NULL;
  const ddb_item *s = CITEM(set);
  ddb_error e;
  dyn_code result;
  size_t i;

  result = dyni_enter(c, flags, 0, "dyn_update_item", err);
  if(result)
    return result;
  if(updated)
    *updated = NULL;
  if(n_remove > 0 && !remove)
    return dyni_fail(err, DYN_EMISUSE, "dyn_update_item: remove is NULL");
  if((!s || s->root.n == 0) && n_remove == 0)
    return dyni_fail(err, DYN_EINPUT,
                     "UpdateItem: nothing to SET and nothing to REMOVE");
  if(n_remove > REMOVE_MAX)
    return dyni_fail(err, DYN_EINPUT,
                     "UpdateItem: more than %d attributes to remove",
                     REMOVE_MAX);
  result = dyni_table_get(c, table, &t, err);
  if(result)
    return result;
  result = dyni_key(t, CITEM(key), "key", &k, err);
  if(result)
    goto fail;
  for(i = 0; s && i < s->root.n; i++)
    if(is_key(t, s->root.kids[i].name)) {
      result = dyni_fail(err, DYN_EINPUT,
                         "UpdateItem: '%s' is a key attribute; it cannot be "
                         "SET (delete and put the item instead)",
                         s->root.kids[i].name);
      goto fail;
    }
  if(s) {
    result = dyni_check_item(s, err);
    if(result)
      goto fail;
  }
  for(i = 0; i < n_remove; i++)
    if(!remove[i] || !*remove[i] || is_key(t, remove[i])) {
      result =
          dyni_fail(err, DYN_EINPUT, "UpdateItem: remove[%zu] is %s", i,
                    !remove[i] || !*remove[i] ? "empty" : "a key attribute");
      goto fail;
    }
  ddb_error_clear(&e);
  /* the image before is unknown: every page of the table becomes stale */
  if(ddbc_update_item(c->ddb, t->desc, k, t->key_names, t->n_key,
                      s && s->root.n ? s : NULL, remove, (int)n_remove,
                      DDB_COND_EXISTS, NULL, &c->pol, &after, &e)) {
    result = dyni_error(err, &e);
    goto fail;
  }
  if(updated) {
    *updated = PITEM(after);
    after = NULL;
  }

fail:
  ddb_item_unref(after);
  ddb_item_unref(k);
  dyni_table_unref(t);
  return result;
}

dyn_code dyn_transact_write(dyn_client *c, const char *table,
                            const dyn_write *w, size_t n, dyn_error *err) {
  dyn_table *t = NULL;
  ddb_write *dw = NULL;
  ddb_error e;
  dyn_code result;
  size_t i;

  result = dyni_enter(c, 0, 0, "dyn_transact_write", err);
  if(result)
    return result;
  if(!w && n > 0)
    return dyni_fail(err, DYN_EMISUSE, "dyn_transact_write: w is NULL");
  if(n == 0 || n > DDB_TRANSACT_MAX)
    return dyni_fail(err, DYN_EINPUT,
                     "TransactWriteItems takes 1 to %d writes, not %zu",
                     DDB_TRANSACT_MAX, n);
  result = dyni_table_get(c, table, &t, err);
  if(result)
    return result;
  dw = calloc(n, sizeof(*dw));
  if(!dw) {
    result = dyni_fail(err, DYN_ENOMEM, "out of memory");
    goto fail;
  }
  for(i = 0; i < n; i++) {
    char what[40];
    int allowed = w[i].kind == DYN_DELETE ? DYN_IF_EXISTS
                                          : DYN_IF_EXISTS | DYN_IF_NOT_EXISTS;
    snprintf(what, sizeof(what), "w[%zu]", i);
    if(w[i].kind != DYN_PUT && w[i].kind != DYN_DELETE) {
      result = dyni_fail(err, DYN_EMISUSE,
                         "%s: kind is not DYN_PUT or "
                         "DYN_DELETE",
                         what);
      goto fail;
    }
    if((w[i].flags & ~allowed) ||
       (w[i].flags & (DYN_IF_EXISTS | DYN_IF_NOT_EXISTS)) ==
           (DYN_IF_EXISTS | DYN_IF_NOT_EXISTS)) {
      result = dyni_fail(err, DYN_EMISUSE, "%s: bad flags 0x%x", what,
                         (unsigned)w[i].flags);
      goto fail;
    }
    result = w[i].kind == DYN_PUT
                 ? check_put(t, CITEM(w[i].item), what, err)
                 : dyni_key(t, CITEM(w[i].item), what, NULL, err);
    if(result)
      goto fail;
    dw[i].kind = w[i].kind == DYN_PUT ? DDB_WRITE_PUT : DDB_WRITE_DELETE;
    dw[i].item = CITEM(w[i].item);
    dw[i].cond = cond_of(w[i].flags);
  }
  ddb_error_clear(&e);
  /* the images before are unknown */
  if(ddbc_transact_write(c->ddb, t->desc, dw, (int)n, t->key_names, t->n_key,
                         NULL, &c->pol, &e))
    result = dyni_error(err, &e);

fail:
  free(dw);
  dyni_table_unref(t);
  return result;
}
