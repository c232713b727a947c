/*
** ddb_cache.h -- the read path between ext/ and client/.
**
** Every read the extension makes goes through these calls, so that one
** place decides whether a request is answered from memory or sent to
** DynamoDB.  The functions take the same arguments as their client/
** counterparts plus a ddbc_policy saying how stale an answer may be.
**
** Ownership is as in client/: every item or page handed out is a new
** reference the caller releases with ddb_item_unref()/ddb_page_unref().
*/
#ifndef DDB_CACHE_H
#define DDB_CACHE_H

#include "../client/ddb_client.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a read may be served. */
typedef struct ddbc_policy {
  int consistent;   /* 1: ConsistentRead=true, never from the cache */
  double item_ttl;  /* seconds an item-cache entry lives; 0: don't cache */
  double query_ttl; /* seconds a query-cache entry lives; 0: don't cache */
} ddbc_policy;

/* DescribeTable.  *out is owned by the caller (ddb_table_desc_free). */
ddb_result ddbc_describe_table(ddb_client *c, const char *table,
                               ddb_table_desc **out, ddb_error *err);

/* One page of a Query or Scan. */
ddb_result ddbc_read_page(ddb_client *c, const ddb_read *r,
                          const ddbc_policy *pol, ddb_page **out,
                          ddb_error *err);

/* GetItem: *out is the item or NULL when there is none. */
ddb_result ddbc_get_item(ddb_client *c, const char *table, const ddb_item *key,
                         const char *const *key_names, int n_key_names,
                         const ddbc_policy *pol, ddb_item **out,
                         ddb_error *err);

/* BatchGetItem over any number of keys; found[i] answers keys[i]. */
ddb_result ddbc_batch_get(ddb_client *c, const char *table,
                          const ddb_item *const *keys, size_t n,
                          const char *const *key_names, int n_key_names,
                          const ddbc_policy *pol, ddb_item **found,
                          ddb_error *err);

#ifdef __cplusplus
}
#endif
#endif /* DDB_CACHE_H */
