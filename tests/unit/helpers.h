/*
** helpers.h -- small helpers the client's unit tests share (test_client.c,
** test_request.c).
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

#endif
