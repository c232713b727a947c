/*
** curl_mem.c -- libcurl's memory: the allocators libcurl is initialized
** with (once per process, before the first curl handle of a client or of
** a credential fetch), which wipe what it frees, and the one block they
** free without wiping.
*/
#include <curl/curl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"

/* ------------------------------------------------------------------------
** Wiped when freed.  libcurl gets these allocators
** (curl_global_init_mem): every block it frees, or that realloc moves, is
** zeroed first (explicit_bzero over malloc_usable_size), but one.  What
** libcurl holds of a request's secrets, in curl 7.88 (lib/http.c,
** lib/dynbuf.c, lib/multi.c):
**
**   * the request it sends: the request line and every header
**     (Authorization: the access key id and the signature;
**     X-Amz-Security-Token: the session token) and a small body, written
**     into a dynbuf that grows by realloc (each block it leaves is wiped
**     by curl_wipe_realloc) and is freed when sent;
**   * over TLS, a copy of that request in the upload buffer (64 KB,
**     data->state.ulbuf), freed at the end of each transfer;
**   * not our header list: its nodes and lines are the attempt's own
**     (ddb_sign_hdrs, on http.c's stack; the Authorization line wiped
**     after the transfer) and the signer's (the token's line, wiped when
**     the signer is freed);
**   * for a credential fetch (creds_http.c, creds_meta.c, creds_sso.c,
**     creds_sts.c), also the answer: the secret key and the token,
**     read into the receive buffer and handed to the write callback;
**   * the receive buffer may also hold what a SOCKS proxy's handshake
**     sent (its user and password, from a proxy URL with user info).
**
** The one block not wiped is the receive buffer (16 KB,
** data->state.buffer, allocated and freed for every transfer: its wipe
** was 16,400 of the 23,000 instructions this allocator cost a GetItem)
** of a DynamoDB request, whose answer holds no credential: http.c's write
** callback names it (ddb_curl_recv_block: an address of the answer it was
** handed), and the block freed that contains that address, on the same
** thread during the same curl_easy_perform, is freed without the wipe.
** A credential fetch's write callbacks name nothing, so every block of
** theirs is wiped; when a proxy with user info is configured in the
** environment (all_proxy, https_proxy, http_proxy and their upper-case
** forms, read when libcurl is initialized) nothing is skipped.
*/

/* The least size of libcurl's receive buffer (CURLOPT_BUFFERSIZE's
** minimum, 1024, and its NUL). */
#define RECV_MIN 1025

/* The receive buffer to free without its wipe: an address in it, set by
** the write callback of the DynamoDB request this thread performs; NULL
** when none. */
static __thread const char *recv_hint;
/* 1 when no proxy with user info is configured (read at init). */
static int recv_skip_ok;

/* See http_int.h: the receive buffer of this thread's request. */
void ddb_curl_recv_block(const void *p) {
  recv_hint = recv_skip_ok ? p : NULL;
}

/* See http_int.h: this thread's request is over. */
void ddb_curl_recv_done(void) {
  recv_hint = NULL;
}

/* curl's free(): wipe, then free (the receive buffer named by
** ddb_curl_recv_block() without the wipe). */
static void curl_wipe_free(void *p) {
  if(p) {
    size_t n = malloc_usable_size(p);
    const char *h;
    /* the receive buffer is at least RECV_MIN bytes: smaller blocks are
    ** wiped without reading the thread's hint (a __tls_get_addr call) */
    if(n >= RECV_MIN && (h = recv_hint) != NULL && h >= (const char *)p &&
       h < (const char *)p + n)
      recv_hint = NULL; /* DynamoDB's answer: no secret */
    else
      explicit_bzero(p, n);
    free(p);
  }
}

/* The least block curl_wipe_realloc moves a block into: libcurl grows a
** request's dynbuf from 32 bytes by doubling, and each move costs a copy
** and a wipe; from 1 KB, most requests' headers fit after the first move. */
#define REALLOC_MIN 1024

/* curl's realloc(): in place when the block is large enough, else a new
** block (at least REALLOC_MIN bytes), the old one wiped and freed. */
static void *curl_wipe_realloc(void *p, size_t n) {
  size_t old;
  void *q;
  if(!p)
    return malloc(n);
  if(n == 0) {
    curl_wipe_free(p);
    return NULL;
  }
  old = malloc_usable_size(p);
  if(n <= old)
    return p;
  q = malloc(n < REALLOC_MIN ? REALLOC_MIN : n);
  if(!q)
    return NULL;
  memcpy(q, p, old);
  if(old >= RECV_MIN && recv_hint >= (const char *)p &&
     recv_hint < (const char *)p + old)
    recv_hint = NULL; /* moved: never skip whatever comes there next */
  explicit_bzero(p, old);
  free(p);
  return q;
}

/* Is a proxy with user info (user[:password]@) configured in the
** environment, which libcurl would use? */
static int proxy_with_userinfo(void) {
  static const char *const names[] = {"all_proxy",   "ALL_PROXY",
                                      "https_proxy", "HTTPS_PROXY",
                                      "http_proxy",  "HTTP_PROXY"};
  size_t i;
  for(i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    const char *v = getenv(names[i]);
    if(v && strchr(v, '@'))
      return 1;
  }
  return 0;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

/* curl_global_init_mem with the wiping allocators (once). */
static void curl_init_once(void) {
  recv_skip_ok = !proxy_with_userinfo();
  curl_global_init_mem(CURL_GLOBAL_DEFAULT, malloc, curl_wipe_free,
                       curl_wipe_realloc, strdup, calloc);
}

/* See http_int.h: curl_global_init with the wiping allocators, once per
** process, before the first curl handle of the client or of a credential
** fetch (curl_easy_init would otherwise initialize libcurl with plain
** free). */
void ddb_curl_global_init(void) {
  pthread_once(&curl_once, curl_init_once);
}
