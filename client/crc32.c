/*
** crc32.c -- CRC-32 (IEEE 802.3, the zlib polynomial 0xEDB88320,
** reflected, initial value and final XOR 0xFFFFFFFF), as DynamoDB sends it
** in the x-amz-crc32 header of every response.
**
** Slicing-by-8: eight 256-entry tables built once, eight bytes a step
** (about four times the speed of a byte at a time; every response body
** passes through here).  No dependency.  ddb_crc32("123456789") is
** 0xCBF43926, the check value of this CRC.
*/
#include <pthread.h>

#include "ddb_client_int.h"

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* Fill crc_table: [0][i] is the CRC register after shifting byte i
** through the reflected polynomial eight times; [k][i] the same followed
** by k zero bytes. */
static void crc_init(void) {
  uint32_t i, k, c;
  for(i = 0; i < 256; i++) {
    c = i;
    for(k = 0; k < 8; k++)
      c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    crc_table[0][i] = c;
  }
  for(i = 0; i < 256; i++)
    for(k = 1; k < 8; k++)
      crc_table[k][i] = crc_table[0][crc_table[k - 1][i] & 0xff] ^
                        (crc_table[k - 1][i] >> 8);
}

/* Continue a CRC-32: crc is the value returned for the bytes before p
** (0 to start); returns the CRC-32 of everything so far.  p may be NULL
** when n is 0. */
uint32_t ddb_crc32(uint32_t crc, const void *p, size_t n) {
  const unsigned char *s = p;
  pthread_once(&crc_once, crc_init);
  crc = ~crc;
  while(n >= 8) {
    /* little-endian word order, assembled byte by byte: any alignment */
    uint32_t lo = crc ^ ((uint32_t)s[0] | (uint32_t)s[1] << 8 |
                         (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24);
    uint32_t hi = (uint32_t)s[4] | (uint32_t)s[5] << 8 | (uint32_t)s[6] << 16 |
                  (uint32_t)s[7] << 24;
    crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
          crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
          crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
          crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
    s += 8;
    n -= 8;
  }
  while(n--)
    crc = crc_table[0][(crc ^ *s++) & 0xff] ^ (crc >> 8);
  return ~crc;
}
