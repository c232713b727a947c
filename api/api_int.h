/*
** api_int.h -- declarations shared by the files of api/ only.  Not part of
** the interface: that is dyndb.h.
**
** api/ is the top layer of the C library: it calls cache/ (every read and
** the write-through notes) and client/ (writes, items, JSON); nothing
** below calls it.  A dyn_item is a ddb_item and a dyn_value a ddb_av: the
** public names are opaque views of the client layer's immutable items, so
** an item read from DynamoDB or the cache is handed out without a copy.
*/
#ifndef DYN_API_INT_H
#define DYN_API_INT_H

#include <pthread.h>

#include "../cache/ddb_cache.h"
#include "dyndb.h"

/* The public opaque types are the client layer's. */
#define ITEM(x)  ((ddb_item *)(x))
#define CITEM(x) ((const ddb_item *)(x))
#define AV(x)    ((const ddb_av *)(x))
#define PITEM(x) ((dyn_item *)(x))
#define PVAL(x)  ((const dyn_value *)(x))

/* Seconds a table's key schema is remembered by a client. */
#define DYN_TABLE_TTL 60.0
/* Parallel Scan segments (threads) at the most. */
#define DYN_MAX_SEGMENTS 64

/* What a client knows of one table: its description (key schema and
** indexes), shared by the calls in flight; reference counted because a
** refresh may replace it while a call still uses the old one. */
typedef struct dyn_table {
  struct dyn_table *next; /* the client's list, under its lock */
  int refs;               /* atomic */
  double expires;         /* ddbc_now() after which it is refreshed */
  ddb_table_desc *desc;
  const char *key_names[2]; /* in desc: partition key, sort key */
  int n_key;                /* 1 or 2 */
  ddbc_reader *reader;      /* coherence: the table's stream reader */
} dyn_table;

struct dyn_client {
  ddb_client *ddb;
  ddbc_policy pol; /* consistent = 0; the TTLs of the options */
  pthread_mutex_t lock;
  dyn_table *tables;
  ddb_live live;  /* on client/live.c's list while c lives, for fork() */
  int coherence;  /* DYN_COHERENCE_STREAMS: each table's stream reader */
  ddb_config cfg; /* the options, for a reader's own client; its strings
                     the copies in strs (free()) */
  char *strs[4];
};

/* client.c */

/* Copy a client-layer error into err (may be NULL), mapping the code;
** returns the dyn_code. */
dyn_code dyni_error(dyn_error *err, const ddb_error *e);
/* Set err to code and a printf-style message; returns code. */
dyn_code dyni_fail(dyn_error *err, dyn_code code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The description of table, from the client's list or DescribeTable.  On
** success *out is a reference to release with dyni_table_unref(). */
dyn_code dyni_table_get(dyn_client *c, const char *table, dyn_table **out,
                        dyn_error *err);
void dyni_table_unref(dyn_table *t);
/* Check that src holds t's key attributes, of the key's types, not empty;
** then, unless key is NULL (check only), *key is an item of exactly those
** attributes (a new reference: src itself when it is one already).  what
** names the argument in messages. */
dyn_code dyni_key(const dyn_table *t, const ddb_item *src, const char *what,
                  ddb_item **key, dyn_error *err);
/* The cache policy of a read of table t (its stream reader, if any) with
** these flags. */
ddbc_policy dyni_policy(const dyn_client *c, const dyn_table *t, int flags);

/* item.c */

/* Check an item built from typed JSON or a builder against DynamoDB's
** rules for values (numbers, base64).  Returns DYN_OK or DYN_EINPUT. */
dyn_code dyni_check_item(const ddb_item *it, dyn_error *err);
/* (Numbers and binaries are checked by client/'s ddb_number_fits and
** ddb_base64_ok, the one home of each rule.) */

#endif /* DYN_API_INT_H */
