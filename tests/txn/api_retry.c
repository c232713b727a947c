/*
** api_retry.c -- the C API's side of tests/suites/50-python.sh: a cached GSI
** Query, then a dyn_delete_item whose first answer the fault proxy drops
** (set up by tests/txn/python_txn.py), then the same Query.  Prints the
** sort keys of each Query on one line, and the delete's result.
**
**    api_retry ENDPOINT TABLE
*/
#include <stdio.h>
#include <string.h>

#include "dyndb.h"

/* The SK of every item of GSI ByGrp's partition R, space-separated. */
static void gsi(dyn_client *c, const char *table) {
  dyn_query q;
  dyn_iter *it = NULL;
  const dyn_item *item;
  dyn_error err;
  memset(&q, 0, sizeof(q));
  q.table = table;
  q.index = "ByGrp";
  q.pk = "R";
  if(dyn_query_open(c, &q, 0, &it, &err) != DYN_OK) {
    printf("query: %s\n", err.message);
    return;
  }
  while(dyn_iter_next(it, &item, &err) == DYN_OK && item) {
    const char *sk = dyn_value_text(dyn_item_get(item, "SK"), NULL);
    printf("%s ", sk ? sk : "?");
  }
  printf("\n");
  dyn_iter_free(it);
}

int main(int argc, char **argv) {
  dyn_options o;
  dyn_client *c = NULL;
  dyn_item *key = NULL;
  dyn_error err;
  if(argc != 3)
    return 2;
  dyn_options_init(&o);
  o.endpoint = argv[1];
  if(dyn_client_new(&o, &c, &err) != DYN_OK) {
    printf("client: %s\n", err.message);
    return 1;
  }
  gsi(c, argv[2]);
  gsi(c, argv[2]); /* from the cache */
  if(dyn_item_from_json("{\"PK\":\"R\",\"SK\":\"001\"}", 0, &key, &err) ||
     dyn_delete_item(c, argv[2], key, 0, NULL, &err))
    printf("delete: %s\n", err.message);
  else
    printf("deleted\n");
  gsi(c, argv[2]);
  dyn_item_unref(key);
  dyn_client_free(c);
  return 0;
}
