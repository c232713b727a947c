/*
** pack.c -- packed items, for the cache: an item as a byte string without
** pointers (ddb_item_pack), and back (ddb_item_unpack).
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ddb_client_int.h"

/* ------------------------------------------------------------------------
** Packed items, for the cache (ddb_item_pack, ddb_item_unpack)
**
** A packed item is a byte string: two varints (LEB128), the nodes and the
** text bytes its ddb_item needs (the first one doubled, plus 1 when no
** name or text needs escaping in JSON: ddb_item.plain); those text bytes
** as the ddb_item holds them (every name and text, NUL-terminated, in the
** order below); then
** the root's member count and its members' records.  A member's record is
** its name's length (varint) and its value's record; a value's record is
** a type byte, then:
**
**     S, N, B      varint length
**     BOOL         one byte, 0 or 1
**     NULL         nothing
**     M            varint count, then that many member records
**     L            varint count, then that many value records
**     SS, NS, BS   varint count, then that many varint lengths
**
** No pointers and no padding: the bench's item of 169 bytes of JSON packs
** to about 165 bytes, where its ddb_item takes 40 bytes a node besides.
** ddb_item_unpack makes one allocation of the exact size, copies the text
** bytes with one memcpy and walks the records to set the nodes (laid out
** in the order av_fill lays them), each string found where the previous
** one ended: no copy per string, so a cache hit stays cheap.
*/

/* Bytes varint_put writes for v. */
static size_t varint_len(uint64_t v) {
  size_t n = 1;
  while(v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

/* Write v at p as a LEB128 varint; returns the byte after it. */
static unsigned char *varint_put(unsigned char *p, uint64_t v) {
  while(v >= 0x80) {
    *p++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *p++ = (unsigned char)v;
  return p;
}

/* Read a varint at p into *v; returns the byte after it. */
static const unsigned char *varint_get(const unsigned char *p, uint64_t *v) {
  uint64_t x;
  unsigned shift = 7;
  if(!(*p & 0x80)) { /* most lengths and counts: one byte */
    *v = *p;
    return p + 1;
  }
  x = *p++ & 0x7f;
  while(*p & 0x80) {
    x |= (uint64_t)(*p++ & 0x7f) << shift;
    shift += 7;
  }
  *v = x | (uint64_t)*p++ << shift;
  return p;
}

/* Is t a set type? */
static int is_set(ddb_type t) {
  return t == DDB_SS || t == DDB_NS || t == DDB_BS;
}

/* The size of value a's record (not its name's length); adds the nodes
** below a and the text bytes of a and below (as item_alloc counts them)
** to *nodes and *bytes. */
static size_t av_record_size(const ddb_av *a, size_t *nodes, size_t *bytes) {
  size_t n = 1; /* the type byte */
  uint32_t i;
  switch(a->type) {
  case DDB_S:
  case DDB_N:
  case DDB_B: *bytes += a->n + 1; return n + varint_len(a->n);
  case DDB_BOOL: return n + 1;
  case DDB_M:
  case DDB_L:
    n += varint_len(a->n);
    *nodes += a->n;
    for(i = 0; i < a->n; i++) {
      const ddb_av *k = &a->kids[i];
      if(a->type == DDB_M) {
        n += varint_len(k->name_len);
        *bytes += k->name_len + 1;
      }
      n += av_record_size(k, nodes, bytes);
    }
    return n;
  default:
    if(!is_set(a->type))
      return n; /* NULL (or NONE) */
    n += varint_len(a->n);
    *nodes += a->n;
    for(i = 0; i < a->n; i++) {
      n += varint_len(a->kids[i].n);
      *bytes += a->kids[i].n + 1;
    }
    return n;
  }
}

/* The packed size of it, and the nodes and text bytes its ddb_item
** needs. */
static size_t item_packed_size(const ddb_item *it, size_t *nodes,
                               size_t *bytes) {
  size_t n;
  *nodes = 0;
  *bytes = 0;
  /* the root's record as an M's, less its type byte */
  n = av_record_size(&it->root, nodes, bytes) - 1;
  return varint_len(*nodes * 2 + 1) + varint_len(*bytes) + *bytes + n;
}

size_t ddb_item_packed_size(const ddb_item *it) {
  size_t nodes, bytes;
  return item_packed_size(it, &nodes, &bytes);
}

/* Where ddb_item_pack writes: the records, and the text bytes. */
typedef struct packer {
  unsigned char *rec;
  char *text;
  int plain; /* every string so far is plain JSON string content */
  int known; /* the item says it is plain (ddb_item.plain): not checked */
} packer;

/* Append s[0..n) and a NUL to the text bytes, its length to the
** records. */
static void pack_str(packer *P, const char *s, uint32_t n) {
  P->rec = varint_put(P->rec, n);
  if(!P->known && P->plain && ddb_json_plain(s, n) != n)
    P->plain = 0;
  if(n)
    memcpy(P->text, s, n);
  P->text[n] = 0;
  P->text += n + 1;
}

/* Pack the value a (without its name; with its type byte unless
** `untyped`). */
static void av_pack(const ddb_av *a, packer *P, int untyped) {
  uint32_t i;
  if(!untyped)
    *P->rec++ = (unsigned char)a->type;
  switch(a->type) {
  case DDB_S:
  case DDB_N:
  case DDB_B: pack_str(P, a->text, a->n); return;
  case DDB_BOOL: *P->rec++ = a->n ? 1 : 0; return;
  case DDB_M:
  case DDB_L:
    P->rec = varint_put(P->rec, a->n);
    for(i = 0; i < a->n; i++) {
      if(a->type == DDB_M)
        pack_str(P, a->kids[i].name, a->kids[i].name_len);
      av_pack(&a->kids[i], P, 0);
    }
    return;
  default:
    if(!is_set(a->type))
      return;
    P->rec = varint_put(P->rec, a->n);
    for(i = 0; i < a->n; i++)
      pack_str(P, a->kids[i].text, a->kids[i].n);
  }
}

void ddb_item_pack(const ddb_item *it, unsigned char *out) {
  size_t nodes, bytes;
  packer P;
  unsigned char *head = out;
  item_packed_size(it, &nodes, &bytes);
  /* the node count's varint, doubled: its length does not depend on the
  ** plain bit (item_packed_size counts it so) */
  out = varint_put(out, nodes * 2 + 1);
  out = varint_put(out, bytes);
  P.text = (char *)out;
  P.rec = out + bytes;
  P.plain = 1;
  P.known = it->plain;
  av_pack(&it->root, &P, 1);
  if(!P.plain)
    varint_put(head, nodes * 2); /* the same length: only bit 0 changes */
}

/* Take the next string of the text bytes, its length read from the
** records at *pp. */
static const char *unpack_str(const unsigned char **pp, ddb_layout *L,
                              uint32_t *len) {
  uint64_t n;
  const char *t = L->next_byte;
  *pp = varint_get(*pp, &n);
  L->next_byte += n + 1;
  *len = (uint32_t)n;
  return t;
}

/* Set *out (its name set by the caller) from the value record at *pp of
** type ty (its type byte already read). */
static void av_unpack(const unsigned char **pp, ddb_type ty, ddb_av *out,
                      ddb_layout *L) {
  uint64_t n;
  uint32_t i;
  out->type = ty;
  out->kids = NULL;
  out->text = NULL;
  switch(ty) {
  case DDB_S:
  case DDB_N:
  case DDB_B: out->text = unpack_str(pp, L, &out->n); return;
  case DDB_BOOL: out->n = *(*pp)++; return;
  case DDB_M:
  case DDB_L:
    *pp = varint_get(*pp, &n);
    out->n = (uint32_t)n;
    out->kids = L->next_node;
    L->next_node += n;
    for(i = 0; i < out->n; i++) {
      ddb_av *kid = &out->kids[i];
      if(ty == DDB_M) {
        kid->name = unpack_str(pp, L, &kid->name_len);
      } else {
        kid->name = NULL;
        kid->name_len = 0;
      }
      av_unpack(pp, (ddb_type) * (*pp)++, kid, L);
    }
    return;
  default:
    out->n = 0;
    if(!is_set(ty))
      return;
    *pp = varint_get(*pp, &n);
    out->n = (uint32_t)n;
    out->kids = L->next_node;
    L->next_node += n;
    for(i = 0; i < out->n; i++) {
      ddb_av *kid = &out->kids[i];
      kid->type = ty == DDB_SS ? DDB_S : ty == DDB_NS ? DDB_N : DDB_B;
      kid->name = NULL;
      kid->name_len = 0;
      kid->kids = NULL;
      kid->text = unpack_str(pp, L, &kid->n);
    }
  }
}

ddb_item *ddb_item_unpack(const unsigned char *p, size_t n) {
  uint64_t nodes, bytes, attrs;
  const unsigned char *q;
  ddb_layout L;
  ddb_item *it;
  uint32_t i;
  int plain;
  (void)n; /* trusted: ddb_item_pack wrote it */
  p = varint_get(p, &nodes);
  plain = (int)(nodes & 1);
  nodes >>= 1;
  p = varint_get(p, &bytes);
  q = varint_get(p + bytes, &attrs);
  it = ddb_item_alloc((size_t)nodes, (size_t)bytes, (uint32_t)attrs, &L);
  if(!it)
    return NULL;
  it->plain = plain;
  memcpy(L.next_byte, p, (size_t)bytes);
  for(i = 0; i < it->root.n; i++) {
    ddb_av *a = &it->root.kids[i];
    ddb_type ty;
    if(q[0] < 0x80 && (q[1] == DDB_S || q[1] == DDB_N) && q[2] < 0x80) {
      /* the common attribute: a short name, a short S or N, inline */
      a->name = L.next_byte;
      a->name_len = q[0];
      L.next_byte += q[0] + 1;
      a->type = (ddb_type)q[1];
      a->n = q[2];
      a->text = L.next_byte;
      a->kids = NULL;
      L.next_byte += q[2] + 1;
      q += 3;
      continue;
    }
    a->name = unpack_str(&q, &L, &a->name_len);
    ty = (ddb_type)*q++;
    av_unpack(&q, ty, a, &L);
  }
  return it;
}
