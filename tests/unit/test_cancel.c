/*
** test_cancel.c -- unit tests of client/cancel.c: how often a thread's
** cancel hook is asked (at most once a DDB_CANCEL_POLL_MS while it says
** go on).  No network.
*/
#include <unistd.h>

#include "../../client/ddb_client_int.h"
#include "tap.h"

/* Cancel hooks for test_cancel_poll: count the asks; say stop when the
** flag ud points to is set. */
static int n_asked;
static int ask_count(void *ud) {
  n_asked++;
  return ud ? *(int *)ud : 0;
}

/* A hook that said go on is not asked again by the thread within
** DDB_CANCEL_POLL_MS; another hook (or the same with another ud) is asked
** at once; a stop is asked again every time; the hook whose go on stands
** is asked again once DDB_CANCEL_POLL_MS have passed. */
static void test_cancel_poll(void) {
  int a = 0, b = 0, i, stopped = 0;
  n_asked = 0;
  ddb_cancel_thread(ask_count, &a);
  for(i = 0; i < 100; i++)
    CHECK(!ddb_cancelled(NULL));
  CHECK(n_asked == 1);
  ddb_cancel_thread(NULL, NULL); /* cleared and set again: not asked anew */
  ddb_cancel_thread(ask_count, &a);
  CHECK(!ddb_cancelled(NULL));
  CHECK(n_asked == 1);
  ddb_cancel_thread(ask_count, &b); /* another ud: asked at once */
  b = 1;
  CHECK(ddb_cancelled(NULL));
  CHECK(ddb_cancelled(NULL)); /* a stop is asked again, and holds */
  CHECK(n_asked == 3);
  ddb_cancel_thread(ask_count, &a); /* its go on of before still stands */
  a = 1;
  CHECK(!ddb_cancelled(NULL));
  CHECK(n_asked == 3);
  usleep((DDB_CANCEL_POLL_MS + 10) * 1000);
  stopped = ddb_cancelled(NULL); /* asked again after the interval */
  CHECK(stopped);
  CHECK(n_asked == 4);
  ddb_cancel_thread(NULL, NULL);
  CHECK(!ddb_cancelled(NULL)); /* no hook: never stopped */
}

const tap_test tap_cancel_tests[] = {
    {"client: a cancel hook that said go on is asked again after "
     "DDB_CANCEL_POLL_MS, another at once",
     test_cancel_poll},
    {NULL, NULL}};
