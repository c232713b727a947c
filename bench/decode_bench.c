/*
** decode_bench.c -- our side of `make bench-decode` (bench/decode_instr.sh):
** Scan pages decoded by the extension's own page path and each item
** rendered by the renderer of the `item` column, for counting under
** callgrind beside the simdjson floor (bench/decode_floor.cc).
**
**     build/bench-decode OUT PAGE.json...
**
** Reads every page into memory first, then decode_pages() does, for each
** page, what a Scan does with an answer's body: the CRC-32 of the body
** checked against the one computed when it was read (http.c's x-amz-crc32
** check: ddb_crc32), ddb_page_parse (read.c: the tape, the items laid
** out, the counts checked), and ddb_item_to_json (item.c, the `item`
** column's renderer) of every item into one buffer, a newline after each.
** Only decode_pages is counted (valgrind --toggle-collect=decode_pages).
** The rendered items are written to OUT afterwards, for the byte-for-byte
** comparison with the floor's.  Exits 1 on any error, with its message.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddb_client_int.h"

#define MAX_PAGES 64

/* One page's body and the CRC-32 the "header" carried. */
typedef struct page_text {
  char *p;
  size_t n;
  uint32_t crc;
} page_text;

/* Read path whole into *out (malloc'd); 0, or -1 with a message. */
static int read_page(const char *path, page_text *out) {
  FILE *f = fopen(path, "rb");
  long n;
  if(!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
     fseek(f, 0, SEEK_SET)) {
    fprintf(stderr, "bench-decode: cannot read %s\n", path);
    if(f)
      fclose(f);
    return -1;
  }
  out->p = malloc((size_t)n + 1);
  out->n = (size_t)n;
  if(!out->p || fread(out->p, 1, out->n, f) != out->n) {
    fprintf(stderr, "bench-decode: cannot read %s\n", path);
    fclose(f);
    return -1;
  }
  fclose(f);
  out->p[n] = 0;
  out->crc = ddb_crc32(0, out->p, out->n);
  return 0;
}

/* Decode the n pages and render their items into out.  Returns the number
** of items, or -1 with a message.  The one function counted. */
__attribute__((noinline)) long decode_pages(const page_text *pages, int n,
                                            ddb_buf *out);
__attribute__((noinline)) long decode_pages(const page_text *pages, int n,
                                            ddb_buf *out) {
  long items = 0;
  int i, j, malformed;
  ddb_error err;
  memset(&err, 0, sizeof(err));
  for(i = 0; i < n; i++) {
    ddb_page *p;
    if(ddb_crc32(0, pages[i].p, pages[i].n) != pages[i].crc) {
      fprintf(stderr, "bench-decode: page %d failed its CRC-32\n", i);
      return -1;
    }
    if(ddb_page_parse(pages[i].p, pages[i].n, "Scan", 0, &p, &malformed,
                      &err)) {
      fprintf(stderr, "bench-decode: page %d: %s\n", i, err.message);
      return -1;
    }
    for(j = 0; j < p->n_items; j++) {
      ddb_item_to_json(p->items[j], out);
      ddb_buf_addc(out, '\n');
    }
    items += p->n_items;
    ddb_page_unref(p);
  }
  return out->failed ? -1 : items;
}

int main(int argc, char **argv) {
  page_text pages[MAX_PAGES];
  ddb_buf out;
  long items;
  int n = 0, i, rc = 1;
  FILE *f;
  if(argc < 3 || argc - 2 > MAX_PAGES) {
    fprintf(stderr, "usage: bench-decode OUT PAGE.json... (at most %d)\n",
            MAX_PAGES);
    return 2;
  }
  for(i = 2; i < argc; i++, n++)
    if(read_page(argv[i], &pages[n]))
      return 1;
  ddb_buf_init(&out, (size_t)1 << 30);
  items = decode_pages(pages, n, &out);
  if(items >= 0 && (f = fopen(argv[1], "wb")) != NULL) {
    rc = fwrite(out.p, 1, out.len, f) == out.len ? 0 : 1;
    rc |= fclose(f) != 0;
    printf("%ld items\n", items);
  }
  ddb_buf_free(&out);
  for(i = 0; i < n; i++)
    free(pages[i].p);
  return rc;
}
