/*
** scope.c -- the cache's names for what a client may see: scope ids
** (ddb_scope_hash, an HMAC under a key drawn once per process) and
** principals (the id of a set of credentials).  See ddb_client_int.h's
** "The cache's names for a client".  A leaf: libcrypto only.
*/
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ddb_client_int.h"
#include "sigv4.h"

/* ------------------------------------------------------------------------
** Principals (see ddb_client_int.h)
*/

static unsigned char scope_key[DDB_SHA256_LEN];
static pthread_once_t scope_once = PTHREAD_ONCE_INIT;

/* Draw the process's key for scope ids. */
static void scope_key_init(void) {
  ddb_random_bytes(scope_key, sizeof(scope_key));
}

int ddb_scope_hash(char letter, const char *const *p, const size_t *n,
                   int n_parts, unsigned char *out) {
  unsigned char mac[DDB_SHA256_LEN];
  ddb_hmac_ctx *m;
  int i, rc;
  pthread_once(&scope_once, scope_key_init);
  m = ddb_hmac_new(scope_key, sizeof(scope_key));
  rc = m ? ddb_hmac_update(m, &letter, 1) : -1;
  for(i = 0; rc == 0 && i < n_parts; i++) {
    unsigned char len[8];
    uint64_t v = n[i];
    int k;
    for(k = 0; k < 8; k++, v >>= 8)
      len[k] = (unsigned char)(v & 0xff);
    rc =
        ddb_hmac_update(m, len, sizeof(len)) || ddb_hmac_update(m, p[i], n[i]);
  }
  if(rc == 0)
    rc = ddb_hmac_final(m, mac);
  ddb_hmac_free(m);
  if(rc == 0)
    memcpy(out, mac, DDB_SCOPE_ID_LEN);
  ddb_wipe(mac, sizeof(mac));
  return rc ? -1 : 0;
}

ddb_principal *ddb_principal_new(const char *access_key,
                                 const char *secret_key, const char *token) {
  const char *parts[3];
  size_t lens[3];
  ddb_principal *pr = malloc(sizeof(*pr));
  if(!pr)
    return NULL;
  parts[0] = access_key ? access_key : "";
  parts[1] = secret_key ? secret_key : "";
  parts[2] = token ? token : "";
  lens[0] = strlen(parts[0]);
  lens[1] = strlen(parts[1]);
  lens[2] = strlen(parts[2]);
  pr->next = NULL;
  if(ddb_scope_hash('U', parts, lens, 3, pr->id)) {
    free(pr);
    return NULL;
  }
  return pr;
}
