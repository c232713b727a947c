/*
** helpers.h -- small helpers the client's unit tests share (test_request.c,
** test_item.c, test_json.c).
*/
#ifndef UNIT_HELPERS_H
#define UNIT_HELPERS_H

#include <string.h>

#include "../../client/ddb_client.h"

/* A scalar attribute value of type t over text (borrowed). */
static inline ddb_av mkav(ddb_type t, const char *text) {
  ddb_av a;
  memset(&a, 0, sizeof(a));
  a.type = t;
  a.text = text;
  a.n = (uint32_t)strlen(text);
  return a;
}

/* The typed JSON of item it, malloc'ed. */
static inline char *typed(const ddb_item *it) {
  ddb_buf b;
  ddb_buf_init(&b, 1 << 20);
  ddb_item_to_typed_json(it, &b);
  return ddb_buf_take(&b, NULL);
}

#endif
