/*
** fuzz_json.c -- libFuzzer harness of the AttributeValue <-> JSON
** converters (client/json.c, client/item.c): plain JSON -> item
** (ddb_item_from_json, with and without a type hint), DynamoDB typed JSON
** -> item, item -> plain JSON (ddb_av_to_json) and typed JSON, and number
** text -> canonical form (ddb_number_canonical) and class.
**
** Properties checked (abort on failure):
**   - an item read from plain JSON prints plain JSON that reads back to an
**     item equal to it;
**   - an item read from typed JSON prints typed JSON that reads back equal;
**   - the canonical form of a number is a number, its own canonical form,
**     and classifies like the original.
** The first byte chooses the converter; the rest is the text.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../client/ddb_client_int.h"

/* Does any map in av have two members of one name?  (DynamoDB never sends
** that; such an item is kept as sent, but equality by name cannot hold.) */
static int has_dup_names(const ddb_av *av) {
  uint32_t i, k;
  if(av->type != DDB_M && av->type != DDB_L)
    return 0;
  for(i = 0; i < av->n; i++) {
    if(has_dup_names(&av->kids[i]))
      return 1;
    for(k = 0; av->type == DDB_M && k < i; k++)
      if(strcmp(av->kids[i].name, av->kids[k].name) == 0)
        return 1;
  }
  return 0;
}

/* Plain JSON of it (malloc'ed into *out), or -1. */
static int plain_of(const ddb_item *it, ddb_buf *out) {
  ddb_buf_init(out, 1u << 24);
  return ddb_av_to_json(&it->root, out) || out->failed ? -1 : 0;
}

/* Plain JSON s[0..n) -> item -> plain JSON -> an equal item. */
static void check_plain(const char *s, size_t n, const ddb_item *hint) {
  ddb_item *a = NULL, *b = NULL;
  ddb_error e;
  ddb_buf t;
  ddb_error_clear(&e);
  if(ddb_item_from_json(s, n, hint, &a, &e) != DDB_OK)
    return;
  if(plain_of(a, &t) == 0) {
    if(ddb_item_from_json(t.p, t.len, a, &b, &e) != DDB_OK)
      abort();
    if(!has_dup_names(&a->root) && !ddb_av_equal(&a->root, &b->root))
      abort();
    ddb_item_unref(b);
  }
  ddb_buf_free(&t);
  ddb_item_unref(a);
}

/* Typed JSON s[0..n) -> item -> typed JSON -> an equal item. */
static void check_typed(const char *s, size_t n) {
  ddb_item *a = NULL, *b = NULL;
  ddb_error e;
  ddb_buf t;
  ddb_error_clear(&e);
  if(ddb_item_from_typed_json(s, n, &a, &e) != DDB_OK)
    return;
  ddb_buf_init(&t, 1u << 24);
  if(ddb_item_to_typed_json(a, &t) == 0 && !t.failed) {
    if(ddb_item_from_typed_json(t.p, t.len, &b, &e) != DDB_OK)
      abort();
    if(!has_dup_names(&a->root) && !ddb_av_equal(&a->root, &b->root))
      abort();
    ddb_item_unref(b);
  }
  ddb_buf_reset(&t);
  ddb_av_to_json(&a->root, &t);
  /* a typed item as a hint for plain JSON */
  if(!t.failed)
    check_plain(t.p, t.len, a);
  ddb_buf_free(&t);
  ddb_item_unref(a);
}

/* The canonical form of number s[0..n) is stable and a number. */
static void check_number(const char *s, size_t n) {
  ddb_buf c1, c2;
  int64_t i1, i2;
  double d1, d2;
  ddb_numkind k1;
  ddb_buf_init(&c1, 1 << 16);
  ddb_buf_init(&c2, 1 << 16);
  k1 = ddb_number_classify(s, n, &i1, &d1);
  /* (the canonical form of a 120-odd digit number, far past DynamoDB's
  ** 38, can be longer than the 127 bytes classify reads) */
  if(ddb_number_canonical(s, n, &c1) == 0 && !c1.failed && c1.len < 120) {
    if(k1 == DDB_NUM_BAD)
      abort(); /* canonical accepted what classify refused */
    if(ddb_number_canonical(c1.p, c1.len, &c2) != 0 || c1.len != c2.len ||
       memcmp(c1.p, c2.p, c1.len) != 0)
      abort();
    if(ddb_number_classify(c1.p, c1.len, &i2, &d2) == DDB_NUM_BAD)
      abort();
  }
  ddb_buf_free(&c1);
  ddb_buf_free(&c2);
}

/* libFuzzer's entry point: one input; returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *s = (const char *)data + 1;
  if(size < 1)
    return 0;
  switch(data[0] % 3) {
  case 0: check_plain(s, size - 1, NULL); break;
  case 1: check_typed(s, size - 1); break;
  default: check_number(s, size - 1); break;
  }
  return 0;
}
