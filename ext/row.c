/*
** row.c -- rows as DynamoDB writes see them, for write.c and txn.c: the
** changes between two images of an item as an UpdateItem (dd_diff), the
** key of an item as text for messages (dd_key_text), and one row's write
** sent alone, with the messages of its statement (dd_write_now,
** dd_move_now): a statement's single write (txn.c), and the rows of an
** OR IGNORE or OR FAIL statement, which each need their answer at once
** (write.c).  Every write goes through the cache (cache/write.c).
*/
#include <stdio.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "dd_ext.h"

/* The key of it as text for messages: PK='a', SK=5.  sqlite3_free(). */
char *dd_key_text(dd_vtab *p, const ddb_item *it) {
  sqlite3_str *s = sqlite3_str_new(0);
  int i;
  for(i = 0; i < p->nKey; i++) {
    const ddb_av *a = ddb_item_get(it, p->azKey[i]);
    if(!a)
      continue;
    sqlite3_str_appendf(s, "%s%s=", i ? ", " : "", p->azKey[i]);
    if(a->type == DDB_S)
      sqlite3_str_appendf(s, "'%.*q'", (int)a->n, a->text);
    else
      sqlite3_str_appendf(s, "%.*s", (int)a->n, a->text);
  }
  return sqlite3_str_finish(s);
}

/* What an UPDATE from old to it changes: *pSet the attributes to SET (NULL
** when none), azRemove[0..*pnRemove) the names to REMOVE (borrowed from
** old; azRemove has room for old's attributes).  Key attributes are never
** set.  Returns an SQLite code. */
int dd_diff(dd_vtab *p, const ddb_item *old, const ddb_item *it,
            ddb_item **pSet, const char **azRemove, int *pnRemove) {
  const ddb_av **aSet;
  int nSet = 0, i;
  uint32_t k;
  *pSet = NULL;
  *pnRemove = 0;
  aSet = sqlite3_malloc64(sizeof(*aSet) * (it->root.n + 1));
  if(!aSet)
    return SQLITE_NOMEM;
  for(k = 0; k < it->root.n; k++) {
    const ddb_av *a = &it->root.kids[k];
    const ddb_av *b = ddb_item_get(old, a->name);
    int bKey = 0;
    for(i = 0; i < p->nKey; i++)
      bKey |= strcmp(a->name, p->azKey[i]) == 0;
    if(!bKey && (!b || !ddb_av_equal(a, b)))
      aSet[nSet++] = a;
  }
  for(k = 0; k < old->root.n; k++)
    if(!ddb_item_get(it, old->root.kids[k].name))
      azRemove[(*pnRemove)++] = old->root.kids[k].name;
  if(nSet > 0) {
    *pSet = ddb_item_from_attrs(aSet, nSet);
    if(!*pSet) {
      sqlite3_free((void *)aSet);
      return SQLITE_NOMEM;
    }
  }
  sqlite3_free((void *)aSet);
  return SQLITE_OK;
}

/* Did the write fail its condition (nothing written)? */
static int dd_cond_failed(const ddb_error *e) {
  return strcmp(e->type, "ConditionalCheckFailedException") == 0 ||
         (strcmp(e->type, "TransactionCanceledException") == 0 &&
          strstr(e->message, "ConditionalCheckFailed"));
}

/* The item with it's key as DynamoDB holds it now: a consistent GetItem,
** never either cache tier.  Returns 1 with *pNow (NULL: no such item; the
** caller unrefs it), or 0 when it could not be asked. */
static int dd_item_now(dd_vtab *p, const ddb_item *it, ddb_item **pNow) {
  ddbc_policy pol = p->pol;
  ddb_item *key;
  ddb_error err;
  int bAsk = 0;
  *pNow = NULL;
  ddb_error_clear(&err);
  pol.consistent = 1; /* DynamoDB's item now, never the cache's */
  key = ddb_item_get(it, p->azKey[0])
            ? dd_key_item(p, ddb_item_get(it, p->azKey[0]),
                          p->nKey > 1 ? ddb_item_get(it, p->azKey[1]) : NULL)
            : NULL;
  if(key)
    bAsk = ddbc_get_item(p->pClient, p->pDesc->name, key, p->azKey, p->nKey,
                         &pol, pNow, &err) == DDB_OK;
  ddb_item_unref(key);
  return bAsk;
}

/* See dd_ext.h. */
char *dd_changed_reason(dd_vtab *p, const ddb_item *it, const char *zName) {
  ddb_item *now = NULL;
  char *zKey = zName ? sqlite3_mprintf("%s", zName) : dd_key_text(p, it), *z;
  int bAsk = dd_item_now(p, it, &now);
  z = sqlite3_mprintf("the item with key %s %s", zKey ? zKey : "?",
                      !bAsk ? "changed or was deleted since it was read"
                      : now ? "changed since it was read"
                            : "does not exist any more");
  ddb_item_unref(now);
  sqlite3_free(zKey);
  return z;
}

/* See dd_ext.h. */
int dd_write_landed(dd_vtab *p, const ddb_item *it, const ddb_item *want,
                    const ddb_error *e) {
  ddb_item *now = NULL;
  int bLanded;
  if(!e->maybe_applied || !dd_cond_failed(e))
    return 0; /* no attempt of it can have been applied, or not that */
  if(!dd_item_now(p, it, &now))
    return 0;
  bLanded = want ? now && ddb_av_equal(&now->root, &want->root) : !now;
  ddb_item_unref(now);
  return bLanded;
}

/* ------------------------------------------------------------------------
** One row's write sent alone
*/

/* Report a client error from a write; a failed condition becomes
** SQLITE_CONSTRAINT with zWhat (which names the key). */
static int dd_write_error(dd_vtab *p, const ddb_error *e, const char *zWhat) {
  if(dd_cond_failed(e)) {
    dd_error(p, "%s", zWhat);
    return SQLITE_CONSTRAINT;
  }
  dd_error(p, "%s", e->message);
  return dd_rc(e);
}

/* INSERT (cond DDB_COND_NOT_EXISTS) or REPLACE (DDB_COND_NONE): PutItem. */
static int dd_insert_now(dd_vtab *p, const ddb_item *it, ddb_cond cond) {
  ddb_error err;
  int rc = SQLITE_OK;
  ddb_error_clear(&err);
  if(ddbc_put_item(p->pClient, p->pDesc, it, p->azKey, p->nKey, cond, NULL,
                   &p->pol, NULL, &err)) {
    /* under OR IGNORE SQLite turns the SQLITE_CONSTRAINT below into
    ** "skip this row" (SQLITE_VTAB_CONSTRAINT_SUPPORT) */
    char *zKey = dd_key_text(p, it);
    char *zWhat = sqlite3_mprintf("INSERT: an item with key %s already "
                                  "exists (INSERT OR REPLACE overwrites it)",
                                  zKey ? zKey : "?");
    rc = dd_write_error(p, &err, zWhat ? zWhat : "INSERT: key exists");
    sqlite3_free(zWhat);
    sqlite3_free(zKey);
  }
  return rc;
}

/* DELETE: DeleteItem; with cond DDB_COND_SAME only if the item is still
** old, as read. */
static int dd_delete_now(dd_vtab *p, const ddb_item *old, ddb_cond cond) {
  ddb_error err;
  int rc;
  ddb_error_clear(&err);
  if(ddbc_delete_item(p->pClient, p->pDesc, old, p->azKey, p->nKey, cond, old,
                      &p->pol, NULL, &err) == DDB_OK)
    return SQLITE_OK;
  if(cond == DDB_COND_SAME && dd_write_landed(p, old, NULL, &err))
    return SQLITE_OK; /* an earlier attempt deleted it, its answer lost */
  if(cond == DDB_COND_SAME && dd_cond_failed(&err)) {
    char *zWhy = dd_changed_reason(p, old, NULL);
    char *zWhat = sqlite3_mprintf("DELETE: nothing deleted: %s",
                                  zWhy ? zWhy : "the item changed");
    rc = dd_write_error(p, &err, zWhat ? zWhat : "DELETE: item changed");
    sqlite3_free(zWhat);
    sqlite3_free(zWhy);
    return rc;
  }
  return dd_write_error(p, &err, "DELETE failed");
}

/* UPDATE without a key change: UpdateItem of what changed. */
static int dd_update_now(dd_vtab *p, const ddb_item *old, const ddb_item *it) {
  const char **azRemove = NULL;
  ddb_item *set = NULL;
  ddb_error err;
  int nRemove = 0, rc = SQLITE_OK;

  ddb_error_clear(&err);
  azRemove = sqlite3_malloc64(sizeof(*azRemove) * (old->root.n + 1));
  if(!azRemove)
    return SQLITE_NOMEM;
  rc = dd_diff(p, old, it, &set, azRemove, &nRemove);
  if(rc || (!set && nRemove == 0))
    goto fail; /* nothing changed: no call */
  /* on condition that the item is still old, as the statement read it:
  ** the new values were computed from it */
  if(ddbc_update_item(p->pClient, p->pDesc, it, p->azKey, p->nKey, set,
                      azRemove, nRemove, DDB_COND_SAME, old, &p->pol, NULL,
                      &err) &&
     !dd_write_landed(p, old, it, &err)) {
    char *zWhy = dd_cond_failed(&err) ? dd_changed_reason(p, old, NULL) : NULL;
    char *zWhat = sqlite3_mprintf("UPDATE: nothing written: %s",
                                  zWhy ? zWhy : "the item changed");
    rc = dd_write_error(p, &err, zWhat ? zWhat : "UPDATE: item changed");
    sqlite3_free(zWhat);
    sqlite3_free(zWhy);
    goto fail;
  }

fail:
  sqlite3_free((void *)azRemove);
  ddb_item_unref(set);
  return rc;
}

/* UPDATE that changes the table key: delete the old item and put the new
** one, in one transaction. */
static int dd_rekey_now(dd_vtab *p, const ddb_item *old, const ddb_item *it) {
  ddb_write w[2];
  const ddb_item *was[2];
  ddb_error err;
  ddb_error_clear(&err);
  memset(w, 0, sizeof(w));
  w[0].kind = DDB_WRITE_DELETE;
  w[0].item = old;
  w[0].cond = DDB_COND_SAME; /* the Put carries what was read */
  w[0].expect = old;
  w[1].kind = DDB_WRITE_PUT;
  w[1].item = it;
  w[1].cond = DDB_COND_NOT_EXISTS;
  was[0] = old;  /* as read */
  was[1] = NULL; /* none: the put's condition */
  if(ddbc_transact_write(p->pClient, p->pDesc, w, 2, p->azKey, p->nKey, was,
                         &p->pol, &err)) {
    char *zNew = dd_key_text(p, it);
    char *zWhat = sqlite3_mprintf("UPDATE: cannot move the item to key %s: "
                                  "it exists, or the old item changed or "
                                  "is gone since it was read",
                                  zNew ? zNew : "?");
    int rc = dd_write_error(p, &err, zWhat ? zWhat : "UPDATE failed");
    sqlite3_free(zWhat);
    sqlite3_free(zNew);
    return rc;
  }
  return SQLITE_OK;
}

/* See dd_ext.h. */
int dd_write_now(dd_vtab *p, ddb_write_kind kind, ddb_cond cond,
                 const ddb_item *it, const ddb_item *old) {
  switch(kind) {
  case DDB_WRITE_PUT: return dd_insert_now(p, it, cond);
  case DDB_WRITE_UPDATE:
    /* an UPDATE always has the image it read */
    return old ? dd_update_now(p, old, it) : SQLITE_MISUSE;
  default: return dd_delete_now(p, it, cond);
  }
}

/* See dd_ext.h. */
int dd_move_now(dd_vtab *p, const ddb_item *old, const ddb_item *it) {
  return dd_rekey_now(p, old, it);
}
