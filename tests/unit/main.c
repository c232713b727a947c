/*
** main.c -- runs the unit tests of every module (see tap.h).
**
**    build/unit-tests              every test
**    build/unit-tests succ iv      tests whose name contains "succ" or "iv"
*/
#define TAP_MAIN
#include "tap.h"

#include <sqlite3.h>

int main(int argc, char **argv) {
  static const tap_test *const tables[] = {
      tap_buf_tests,
      tap_number_tests,
      tap_item_tests,
      tap_json_tests,
      tap_cancel_tests,
      tap_ext_tests,
      tap_cache_tests,
      tap_api_tests,
      tap_crypto_tests,
      tap_sigv4_tests,
      tap_creds_tests,
      tap_config_tests,
      tap_creds_client_tests,
      tap_tape_tests,
      tap_tape_scan_tests,
      tap_request_tests,
      tap_settings_tests,
      tap_lek_tests,
      tap_cache_gen_tests,
      tap_cache_keys_tests,
      tap_plan_tests,
      tap_shared_tests,
      tap_hot_tests,
      tap_options_tests,
      tap_throttle_tests,
      tap_commit_tests,
      tap_multikey_tests,
      NULL, /* one table a line, so that a new one is a line */
  };
  int rc = tap_main(argc, argv, tables);
  sqlite3_shutdown();
  return rc;
}
