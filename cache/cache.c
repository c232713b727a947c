/*
** cache.c -- the read path between ext/ and client/.
**
** For now every call goes straight to DynamoDB; the item and query caches
** (issue #3) slot in here without changing the interface.
*/
#include "ddb_cache.h"

ddb_result ddbc_describe_table(ddb_client *c, const char *table,
                               ddb_table_desc **out, ddb_error *err) {
  return ddb_describe_table(c, table, out, err);
}

ddb_result ddbc_read_page(ddb_client *c, const ddb_read *r,
                          const ddbc_policy *pol, ddb_page **out,
                          ddb_error *err) {
  ddb_read copy = *r;
  copy.consistent = pol->consistent;
  return ddb_read_page(c, &copy, out, err);
}

ddb_result ddbc_get_item(ddb_client *c, const char *table, const ddb_item *key,
                         const char *const *key_names, int n_key_names,
                         const ddbc_policy *pol, ddb_item **out,
                         ddb_error *err) {
  (void)key_names;
  (void)n_key_names;
  return ddb_get_item(c, table, key, pol->consistent, out, err);
}

ddb_result ddbc_batch_get(ddb_client *c, const char *table,
                          const ddb_item *const *keys, size_t n,
                          const char *const *key_names, int n_key_names,
                          const ddbc_policy *pol, ddb_item **found,
                          ddb_error *err) {
  return ddb_batch_get(c, table, keys, n, key_names, n_key_names,
                       pol->consistent, found, err);
}
