/*
** fuzz_response.c -- libFuzzer harness of the response parsers of client/:
** a Query/Scan page (ddb_page_parse, over the tape parser of tape.c, with
** every item and LastEvaluatedKey decoded), an item alone
** (ddb_item_parse; whatever these take must be JSON to cJSON too), a
** DynamoDB error body
** (ddb_error_from_response; its message, as every error's, free of
** control characters), and a DescribeTable answer.  For every item
** that decodes, its plain and typed JSON, canonical key and size are
** computed, and the typed JSON must decode again to an equal item unless
** it holds what input refuses (refused_as_input), and then be refused.
**
** The first byte chooses the parser; the rest is the response body.
*/
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../client/ddb_client_int.h"

/* Does any map in av have two members of one name?  (DynamoDB never sends
** that; such an item is kept as sent, but its typed JSON is refused as
** input, as any item JSON naming an attribute twice is.) */
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

/* The bytes of binary av's base64 text into out (room for av->n), or the
** text itself when it is not base64; returns their length. */
static size_t binary_bytes(const ddb_av *av, unsigned char *out) {
  size_t m = ddb_base64_decode(av->text, av->n, out, av->n + 1);
  if(m == (size_t)-1) {
    memcpy(out, av->text, av->n);
    m = av->n;
  }
  return m;
}

/* Do set elements a and b (one set's) hold one value? */
static int same_element(const ddb_av *a, const ddb_av *b) {
  unsigned char *x, *y;
  size_t nx, ny;
  int same;
  if(a->type != DDB_B)
    return ddb_av_equal(a, b);
  x = malloc(a->n + 1);
  y = malloc(b->n + 1);
  if(!x || !y)
    abort();
  nx = binary_bytes(a, x);
  ny = binary_bytes(b, y);
  same = nx == ny && (nx == 0 || memcmp(x, y, nx) == 0);
  free(x);
  free(y);
  return same;
}

/* Does av hold what DynamoDB never sends and client/json.c refuses as
** input (check_values there, found here the slow way): a name twice in a
** map, a number out of DynamoDB's range, a binary not base64, an empty
** set or one with an element twice? */
static int refused_as_input(const ddb_av *av) {
  uint32_t i, k;
  switch(av->type) {
  case DDB_N: return !ddb_number_fits(av->text, av->n);
  case DDB_B: return av->n && !ddb_base64_ok(av->text, av->n);
  case DDB_SS:
  case DDB_NS:
  case DDB_BS:
    if(av->n == 0)
      return 1;
    for(i = 0; i < av->n; i++) {
      if(refused_as_input(&av->kids[i]))
        return 1;
      for(k = 0; k < i; k++)
        if(same_element(&av->kids[i], &av->kids[k]))
          return 1;
    }
    return 0;
  case DDB_M:
  case DDB_L:
    if(has_dup_names(av))
      return 1;
    for(i = 0; i < av->n; i++)
      if(refused_as_input(&av->kids[i]))
        return 1;
    return 0;
  default: return 0;
  }
}

/* Exercise one decoded item: conversions and a typed-JSON round trip. */
static void poke_item(const ddb_item *it) {
  static const char *const names[] = {"PK", "SK"};
  ddb_buf b;
  ddb_item *again = NULL;
  ddb_error e;
  uint32_t i;
  ddb_buf_init(&b, 1u << 24);
  ddb_av_to_json(&it->root, &b);
  ddb_buf_reset(&b);
  ddb_key_encode(it, names, 2, &b);
  ddb_buf_reset(&b);
  (void)ddb_item_size(it);
  for(i = 0; i < it->root.n; i++)
    (void)ddb_item_get(it, it->root.kids[i].name);
  if(ddb_item_to_typed_json(it, &b) == 0 && !b.failed) {
    ddb_error_clear(&e);
    /* what we print we must read back; but input that DynamoDB would
    ** refuse is refused (client/json.c), so such an item is not, and only
    ** such an item */
    if(ddb_item_from_typed_json(b.p, b.len, &again, &e) != DDB_OK) {
      if(!refused_as_input(&it->root) || e.code != DDB_ERR_INPUT)
        abort();
    } else {
      if(refused_as_input(&it->root) || !ddb_av_equal(&it->root, &again->root))
        abort();
      ddb_item_unref(again);
    }
  }
  ddb_buf_free(&b);
}

/* Is s text a terminal shows as it is (no control character: every
** message of the client passes through ddb_text_safe)?  Aborts if not. */
static void check_safe(const char *s) {
  for(; *s; s++)
    if((unsigned char)*s < 0x20 || *s == 0x7f)
      abort();
}

/* libFuzzer's entry point: one input; returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cJSON *j;
  ddb_error e;
  ddb_page *p = NULL;
  ddb_table_desc *d = NULL;
  ddb_item *it = NULL;
  int mode, i;
  if(size < 1)
    return 0;
  mode = data[0] % 4;
  data++;
  size--;
  ddb_error_clear(&e);
  if(mode == 2) {
    ddb_error_from_response((const char *)data, size, 400, &e);
    if(strlen(e.message) >= sizeof(e.message) ||
       strlen(e.type) >= sizeof(e.type))
      abort();
    check_safe(e.message);
    check_safe(e.type);
    return 0;
  }
  if(mode == 0 || mode == 1) {
    int malformed, ok = 0;
    if(ddb_page_parse((const char *)data, size, "Query", mode == 1, &p,
                      &malformed, &e) == DDB_OK) {
      ok = 1;
      for(i = 0; i < p->n_items; i++)
        poke_item(p->items[i]);
      if(p->last_key)
        poke_item(p->last_key);
      ddb_page_unref(p);
    }
    if(ddb_item_parse((const char *)data, size, &it, &e) == DDB_OK) {
      ok = 1;
      poke_item(it);
      ddb_item_unref(it);
    }
    check_safe(e.message); /* errors quote names of the answer */
    /* what the tape parser takes is JSON: cJSON must take it too */
    if(ok) {
      j = cJSON_ParseWithLength((const char *)data, size);
      if(!j)
        abort();
      cJSON_Delete(j);
    }
    return 0;
  }
  j = cJSON_ParseWithLength((const char *)data, size);
  if(!j)
    return 0;
  if(ddb_table_desc_from_json(j, "T", &d, &e) == DDB_OK) {
    ddb_table_desc *c = ddb_table_desc_dup(d);
    ddb_table_desc_free(c);
    ddb_table_desc_free(d);
  }
  cJSON_Delete(j);
  return 0;
}
