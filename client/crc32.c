/*
** crc32.c -- CRC-32 (IEEE 802.3, the zlib polynomial 0xEDB88320,
** reflected, initial value and final XOR 0xFFFFFFFF), as DynamoDB sends it
** in the x-amz-crc32 header of every response.
**
** A 256-entry table built once; no dependency.  ddb_crc32("123456789")
** is 0xCBF43926, the check value of this CRC.
*/
#include <pthread.h>

#include "ddb_client_int.h"

static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* Fill crc_table: entry i is the CRC register after shifting byte i
** through the reflected polynomial eight times. */
static void crc_init(void) {
  uint32_t i, k, c;
  for(i = 0; i < 256; i++) {
    c = i;
    for(k = 0; k < 8; k++)
      c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    crc_table[i] = c;
  }
}

/* Continue a CRC-32: crc is the value returned for the bytes before p
** (0 to start); returns the CRC-32 of everything so far.  p may be NULL
** when n is 0. */
uint32_t ddb_crc32(uint32_t crc, const void *p, size_t n) {
  const unsigned char *s = p;
  size_t i;
  pthread_once(&crc_once, crc_init);
  crc = ~crc;
  for(i = 0; i < n; i++)
    crc = crc_table[(crc ^ s[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}
