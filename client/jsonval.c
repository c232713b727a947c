/*
** jsonval.c -- one JSON text as a list of tokens, for callers outside
** client/ (the keys column, ext/keys.c): the tape of tape.c behind a small
** interface.  Every value reads with its exact bytes: a number's digits
** as written (38 digits and more), a string's bytes with every escape
** decoded (\u0000 included: the length says where it ends, never a NUL).
*/
#include <stdlib.h>
#include <string.h>

#include "ddb_client_int.h"

struct ddb_jv {
  ddb_tape tape;
  const char *text; /* the caller's, kept alive by the caller */
};

/* See ddb_client.h. */
ddb_result ddb_jv_parse(const char *text, size_t n, ddb_jv **out) {
  ddb_jv *j;
  const char *p = text, *end = text + n;
  *out = NULL;
  if(n > UINT32_MAX) /* token offsets are 32 bits */
    return DDB_ERR_INPUT;
  j = calloc(1, sizeof(*j));
  if(!j)
    return DDB_ERR_NOMEM;
  j->text = text;
  if(ddb_tape_value(&j->tape, text, &p, end) ||
     ddb_tape_skip_ws(p, end) != end) {
    ddb_jv_free(j);
    return DDB_ERR_INPUT;
  }
  *out = j;
  return DDB_OK;
}

/* See ddb_client.h. */
void ddb_jv_free(ddb_jv *j) {
  if(!j)
    return;
  ddb_tape_free(&j->tape);
  free(j);
}

/* See ddb_client.h. */
ddb_jv_type ddb_jv_type_of(const ddb_jv *j, uint32_t i) {
  switch(j->tape.tok[i].type) {
  case DDB_JOBJ: return DDB_JV_OBJECT;
  case DDB_JARR: return DDB_JV_ARRAY;
  case DDB_JSTR: return DDB_JV_STRING;
  case DDB_JNUM: return DDB_JV_NUMBER;
  case DDB_JTRUE: return DDB_JV_TRUE;
  case DDB_JFALSE: return DDB_JV_FALSE;
  default: return DDB_JV_NULL;
  }
}

/* See ddb_client.h. */
uint32_t ddb_jv_count(const ddb_jv *j, uint32_t i) {
  return j->tape.tok[i].n;
}

/* See ddb_client.h. */
uint32_t ddb_jv_next(const ddb_jv *j, uint32_t i) {
  return j->tape.tok[i].end;
}

/* See ddb_client.h. */
const char *ddb_jv_raw(const ddb_jv *j, uint32_t i, size_t *n) {
  const ddb_jtok *k = &j->tape.tok[i];
  *n = k->len;
  return j->text + k->off;
}

/* See ddb_client.h. */
char *ddb_jv_string(const ddb_jv *j, uint32_t i, size_t *n) {
  const ddb_jtok *k = &j->tape.tok[i];
  char *z = malloc((size_t)k->len + 1); /* decoded is never longer */
  *n = 0;
  if(z)
    *n = ddb_tape_str(j->text, k, z);
  return z;
}
