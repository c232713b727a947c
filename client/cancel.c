/*
** cancel.c -- cancelling a call and waiting between its attempts: the
** cancel hooks (see ddb_client.h), the full-jitter backoff sleep that
** polls them, and the kernel's random bytes that the jitter (and the
** scope key of creds.c) are drawn from.
**
** Backoff: the AWS SDKs' defaults for DynamoDB, exponential with full
** jitter, 25 ms base (500 ms for throttling), 20 s cap.  The jitter is
** drawn from the kernel at each retry (retries are rare): clients,
** threads, parent and child of fork() that fail together must not retry
** together (the point of the jitter).
*/
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "ddb_client_int.h"
#include "http_int.h"

/* Backoff: base delays and the cap, in milliseconds. */
#define BACKOFF_BASE_MS          25
#define BACKOFF_THROTTLE_BASE_MS 500
#define BACKOFF_CAP_MS           20000

/* The calling thread's hook (ddb_cancel_thread), in a pthread key rather
** than __thread: a dlopen()ed library's __thread block is dynamic TLS, and
** LeakSanitizer (gcc 12, glibc 2.36) crashes walking it at exit. */
typedef struct thread_hook {
  ddb_cancel_fn fn;
  void *ud;
  /* the hook last asked (ddb_cancelled) said go on: not asked again
  ** before next_ms */
  ddb_cancel_fn asked_fn;
  void *asked_ud;
  double next_ms;
} thread_hook;
static pthread_key_t hook_key;
static pthread_once_t hook_once = PTHREAD_ONCE_INIT;
static int hook_ok; /* hook_key was made */

/* Make hook_key, the thread's cancel hook (once); hook_ok says whether it
** was made. */
static void hook_key_init(void) {
  hook_ok = pthread_key_create(&hook_key, free) == 0;
}

/* Set c's cancel hook; call before c is used by other threads. */
void ddb_client_set_cancel(ddb_client *c, ddb_cancel_fn fn, void *ud) {
  c->cancel = fn;
  c->cancel_ud = ud;
}

/* The calling thread's record (made when make is set and there is none:
** NULL when out of memory), or NULL. */
static thread_hook *thread_rec(int make) {
  thread_hook *h;
  pthread_once(&hook_once, hook_key_init);
  if(!hook_ok)
    return NULL;
  h = pthread_getspecific(hook_key);
  if(!h && make) {
    h = calloc(1, sizeof(*h));
    if(h && pthread_setspecific(hook_key, h)) {
      free(h);
      h = NULL;
    }
  }
  return h;
}

/* Set the calling thread's cancel hook (NULL: none). */
void ddb_cancel_thread(ddb_cancel_fn fn, void *ud) {
  thread_hook *h = thread_rec(fn != NULL);
  if(h) { /* out of memory: the client's hook still applies */
    h->fn = fn;
    h->ud = ud;
  }
}

/* Is there a hook to poll: this thread's, or c's? */
int ddb_cancel_hooked(const ddb_client *c) {
  const thread_hook *h = thread_rec(0);
  return (h && h->fn) || (c && c->cancel);
}

/* Has this thread's hook, or else c's, said stop?  A hook that said go
** on is not asked again by this thread within DDB_CANCEL_POLL_MS (asked
** again at once when another hook, or the same with another ud, is the
** one to ask): an extension's hook may cost more than a request's own
** work (SQLite before 3.41 has no sqlite3_is_interrupted, and ext/
** prepares a statement to learn it), and the calls of a statement follow
** each other within a millisecond on a near server. */
int ddb_cancelled(ddb_client *c) {
  thread_hook *h = thread_rec(c && c->cancel);
  ddb_cancel_fn fn = h && h->fn ? h->fn : c ? c->cancel : NULL;
  void *ud = h && h->fn ? h->ud : c ? c->cancel_ud : NULL;
  double now;
  if(!fn)
    return 0;
  if(!h) /* out of memory: asked every time */
    return fn(ud) != 0;
  now = ddb_now_ms();
  if(fn == h->asked_fn && ud == h->asked_ud && now < h->next_ms)
    return 0;
  if(fn(ud))
    return 1;
  h->asked_fn = fn;
  h->asked_ud = ud;
  h->next_ms = now + DDB_CANCEL_POLL_MS;
  return 0;
}

/* Fill err for a call of operation stopped by the cancel hook. */
ddb_result ddb_cancel_error(ddb_error *err, const char *operation) {
  return ddb_error_set(err, DDB_ERR_CANCELLED, "interrupted: %s stopped",
                       operation);
}

/* Milliseconds on the monotonic clock. */
double ddb_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Fill p[0..n) from getrandom(); a clock-and-address mix if the kernel
** has none. */
void ddb_random_bytes(void *p, size_t n) {
  unsigned char *b = p;
  size_t got = 0;
  while(got < n) {
    ssize_t r = getrandom(b + got, n - got, 0);
    if(r > 0)
      got += (size_t)r;
    else if(r < 0 && errno != EINTR)
      break;
  }
  if(got < n) {
    /* no getrandom(): the clocks and the stack, which at least differ
    ** between processes and calls */
    struct timespec ts;
    size_t i;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    for(i = got; i < n; i++)
      b[i] = (unsigned char)((uintptr_t)ts.tv_nsec >> (i % 4 * 8) ^
                             (uintptr_t)time(NULL) ^ (uintptr_t)&ts ^
                             (uintptr_t)getpid() ^ i * 131);
  }
}

/* Sleep the full-jitter backoff of retry number attempt (1, 2, ...):
** uniform in [0, min(cap, base * 2^(attempt-1))), in slices of
** DDB_CANCEL_POLL_MS, polling c's cancel hook (c may be NULL).  Returns
** DDB_OK, or DDB_ERR_CANCELLED (err set) when the hook said stop. */
ddb_result ddb_backoff(ddb_client *c, const char *operation, int attempt,
                       int throttled, ddb_error *err) {
  double cap = throttled ? BACKOFF_THROTTLE_BASE_MS : BACKOFF_BASE_MS;
  double ms;
  struct timespec ts;
  uint32_t r;
  int i;
  ddb_random_bytes(&r, sizeof(r));
  for(i = 1; i < attempt && cap < BACKOFF_CAP_MS; i++)
    cap *= 2;
  if(cap > BACKOFF_CAP_MS)
    cap = BACKOFF_CAP_MS;
  ms = cap * (r / 4294967296.0);
  for(;;) {
    double slice = ms < DDB_CANCEL_POLL_MS ? ms : DDB_CANCEL_POLL_MS;
    if(ddb_cancelled(c))
      return ddb_cancel_error(err, operation);
    if(slice <= 0)
      return DDB_OK;
    ts.tv_sec = (time_t)(slice / 1000);
    ts.tv_nsec = (long)((slice - ts.tv_sec * 1000.0) * 1e6);
    nanosleep(&ts, NULL);
    ms -= slice;
  }
}
