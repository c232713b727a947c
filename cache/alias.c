/*
** alias.c -- the forms this process names a table by: its name, and the
** table ARNs it was read through (table=arn:aws:dynamodb:...:table/NAME).
**
** The cache keys a table's entries by the form a call names it by (see
** cache.c, "Keys and tags"): an entry read through one account's ARN is
** never an answer for another account's table of the same name, nor for
** the caller's own table of that name.  But the name and an ARN of the
** caller's own account are one table, whose item entries a write through
** either form must drop under the other: so the ARNs read through are
** remembered here (before the read is sent, with the generations of its
** keys, under cache.c's seen_lock), and a write through any form drops
** the item's entries under every other form of its name (the name, and
** each ARN of that name: one of another account only costs a miss).
** Pages need none of this: their tags name the table by its name.
**
** At most DDBC_MAX_ARNS are remembered; one more forgets them all, and
** every entry and generation (ddbc_store_forget: always safe), as the
** principals past their bound do.  Every function here expects cache.c's
** seen_lock held (its name says so: do_*); it is on live.c's fork list
** with it.
*/
#include <stdlib.h>
#include <string.h>

#include "ddb_cache.h"
#include "cache_int.h"
#include "store.h"

#define DDBC_MAX_ARNS 64

static char *arns[DDBC_MAX_ARNS]; /* malloc'ed; under seen_lock */
static int n_arns;

/* See cache_int.h. */
void do_alias_forget(void) {
  int i;
  for(i = 0; i < n_arns; i++)
    free(arns[i]);
  n_arns = 0;
}

/* See cache_int.h. */
void do_alias_note(ddbc_store *s, const char *table) {
  int i;
  char *z;
  if(!table || !ddb_arn_is(table))
    return;
  for(i = 0; i < n_arns; i++)
    if(strcmp(arns[i], table) == 0)
      return;
  z = ddb_strdup(table);
  if(!z || n_arns == DDBC_MAX_ARNS) {
    do_alias_forget();
    ddbc_store_forget(s);
  }
  if(z)
    arns[n_arns++] = z;
}

/* See cache_int.h. */
int do_alias_others(const char *table, const char **out, int max) {
  const char *name = ddb_arn_table_name(table);
  int i, n = 0;
  if(name != table && n < max)
    out[n++] = name; /* an ARN's name: the caller's own table's form */
  for(i = 0; i < n_arns && n < max; i++)
    if(strcmp(arns[i], table) != 0 &&
       strcmp(ddb_arn_table_name(arns[i]), name) == 0)
      out[n++] = arns[i];
  return n;
}
