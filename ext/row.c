/*
** row.c -- rows as DynamoDB writes see them, for write.c and txn.c: the
** changes between two images of an item as an UpdateItem (dd_diff), the
** key of an item as text for messages (dd_key_text).
*/
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
