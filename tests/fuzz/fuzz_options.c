/*
** fuzz_options.c -- libFuzzer harness of the option parser of
** CREATE VIRTUAL TABLE ... USING dynamodb(...): ext/options.c's
** dd_parse_args (with dd_dequote and dd_secret_option), and the value
** parsers dd_bool and dd_number.  The ext/ objects are linked in, built
** with SQLITE_CORE and UNITTESTS, as for tests/unit/test_ext.c.
**
** The input is split at newlines into the arguments argv[3..] (at most
** 32).  Checked: the parser returns SQLITE_OK, SQLITE_ERROR with a
** message, or SQLITE_NOMEM; a refused secret option never echoes its
** value.
*/
#ifndef SQLITE_CORE
#define SQLITE_CORE 1
#endif
#ifndef UNITTESTS
#define UNITTESTS 1
#endif
#include <stdlib.h>
#include <string.h>

#include "../../ext/dd_ext.h"

#include <stdint.h>

#define MAX_ARGS 32

/* Does s end with tail? */
static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), m = strlen(tail);
  return n >= m && strcmp(s + n - m, tail) == 0;
}

/* libFuzzer's entry point: one input; returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf, *argv_buf[MAX_ARGS + 3], *zErr = NULL;
  dd_opts v;
  int argc = 3, rc, k;
  size_t i, start = 0;
  double d;
  buf = malloc(size + 1);
  if(!buf)
    return 0;
  memcpy(buf, data, size);
  buf[size] = 0;
  argv_buf[0] = (char *)"dynamodb";
  argv_buf[1] = (char *)"main";
  argv_buf[2] = (char *)"t";
  for(i = 0; i <= size && argc < MAX_ARGS + 3; i++)
    if(i == size || buf[i] == '\n') {
      buf[i] = 0;
      argv_buf[argc++] = buf + start;
      start = i + 1;
    }
  memset(&v, 0, sizeof(v));
  rc = dd_parse_args(argc, (const char *const *)argv_buf, &v, &zErr);
  if(rc != SQLITE_OK && rc != SQLITE_ERROR && rc != SQLITE_NOMEM)
    abort();
  if(rc == SQLITE_ERROR && !zErr)
    abort();
  if(zErr && ends_with(zErr, "container or instance metadata")) {
    /* a refusal names the refused option and nothing else of the
    ** arguments: "dynamodb: option 'KEY' refused: <fixed text>" where KEY
    ** is the dequoted name of one of them */
    static const char head[] = DD_PREFIX "option '";
    static const char fixed[] = "' refused: CREATE VIRTUAL TABLE arguments "
                                "are stored in plain text in the database "
                                "file; credentials come from the "
                                "environment, the shared files (profile=), "
                                "credential_process, container or instance "
                                "metadata";
    size_t nerr = strlen(zErr), nkey;
    int found = 0;
    if(strncmp(zErr, head, sizeof(head) - 1) != 0 ||
       nerr < sizeof(head) - 1 + sizeof(fixed) - 1 ||
       strcmp(zErr + nerr - (sizeof(fixed) - 1), fixed) != 0)
      abort();
    nkey = nerr - (sizeof(head) - 1) - (sizeof(fixed) - 1);
    for(k = 3; k < argc && !found; k++) {
      const char *eq = strchr(argv_buf[k], '=');
      char *key;
      if(!eq)
        continue;
      key = dd_dequote(argv_buf[k], (int)(eq - argv_buf[k]));
      found = key && strlen(key) == nkey &&
              memcmp(key, zErr + sizeof(head) - 1, nkey) == 0;
      sqlite3_free(key);
    }
    if(!found)
      abort();
  }
  sqlite3_free(zErr);
  {
    const char *const az[] = {
        v.zTable,    v.zRegion,     v.zEndpoint, v.zProfile,
        v.zCaBundle, v.zColumns,    v.zScan,     v.zConsistent,
        v.zTimeout,  v.zMaxRetries, v.zItemTtl,  v.zQueryTtl,
        v.zProgress, v.zSegments,   v.zSegment,  v.zSplit};
    for(k = 0; k < (int)(sizeof(az) / sizeof(az[0])); k++) {
      if(az[k]) {
        (void)dd_bool(az[k]);
        (void)dd_number(az[k], &d);
      }
    }
  }
  dd_opts_free(&v);
  free(buf);
  return 0;
}
