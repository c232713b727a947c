/*
** tap.h -- a very small unit-test harness printing TAP.
**
** A test is a void function made of CHECK*() calls; each failing check
** prints a "#" diagnostic naming its file and line, and the test is
** reported "not ok" when any of its checks failed.  Each test file exports
** a table of named tests ending with {NULL, NULL}; main.c (which defines
** TAP_MAIN before including this header) runs every table:
**
**    1..N
**    ok 1 - client: buf bounded
**    #   tests/unit/test_ext.c:42: "abc" != "abd"
**    not ok 2 - ext: dd_successor
**    # 1 passed, 1 failed (250 checks, 1 failed)
**
** The exit status is 0 when every test passed and 1 otherwise.  Arguments
** select tests whose name contains any of them.
*/
#ifndef TAP_H
#define TAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct tap_test {
  const char *name;
  void (*fn)(void);
} tap_test;

/* Record one check; returns ok so callers can skip dependent checks. */
int tap_check(int ok, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Record a string comparison (either may be NULL). */
int tap_check_str(const char *got, const char *want, const char *file,
                  int line, const char *expr);
/* Record a comparison of byte ranges (printed escaped when different). */
int tap_check_mem(const void *got, size_t ngot, const void *want, size_t nwant,
                  const char *file, int line, const char *expr);
/* Print a "#" diagnostic line. */
void tap_diag(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#define CHECK(cond) tap_check(!!(cond), __FILE__, __LINE__, "%s", #cond)
#define CHECK_MSG(cond, ...)                                                  \
  tap_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define CHECK_INT(got, want)                                                  \
  do {                                                                        \
    long long tap_g_ = (long long)(got), tap_w_ = (long long)(want);          \
    tap_check(tap_g_ == tap_w_, __FILE__, __LINE__,                           \
              "%s: got %lld, want %lld", #got, tap_g_, tap_w_);               \
  } while(0)
#define CHECK_STR(got, want)                                                  \
  tap_check_str((got), (want), __FILE__, __LINE__, #got)
#define CHECK_MEM(got, ngot, want, nwant)                                     \
  tap_check_mem((got), (ngot), (want), (nwant), __FILE__, __LINE__, #got)

/* The tables of the test files. */
extern const tap_test tap_buf_tests[];
extern const tap_test tap_number_tests[];
extern const tap_test tap_item_tests[];
extern const tap_test tap_json_tests[];
extern const tap_test tap_cancel_tests[];
extern const tap_test tap_ext_tests[];
extern const tap_test tap_cache_tests[];
extern const tap_test tap_api_tests[];
extern const tap_test tap_crypto_tests[];
extern const tap_test tap_sigv4_tests[];
extern const tap_test tap_creds_tests[];
extern const tap_test tap_config_tests[];
extern const tap_test tap_creds_client_tests[];
extern const tap_test tap_tape_tests[];
extern const tap_test tap_tape_scan_tests[];
extern const tap_test tap_request_tests[];
extern const tap_test tap_settings_tests[];
extern const tap_test tap_lek_tests[];
extern const tap_test tap_cache_gen_tests[];
extern const tap_test tap_cache_keys_tests[];
extern const tap_test tap_plan_tests[];
extern const tap_test tap_shared_tests[];
extern const tap_test tap_hot_tests[];
extern const tap_test tap_options_tests[];
extern const tap_test tap_throttle_tests[];
extern const tap_test tap_commit_tests[];
extern const tap_test tap_multikey_tests[];

#ifdef TAP_MAIN
#include <stdarg.h>
#include <stdio.h>

static int tap_checks, tap_checks_failed, tap_cur_failed;

void tap_diag(const char *fmt, ...) {
  va_list ap;
  fputs("#   ", stdout);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  fputc('\n', stdout);
}

int tap_check(int ok, const char *file, int line, const char *fmt, ...) {
  va_list ap;
  tap_checks++;
  if(ok)
    return 1;
  tap_checks_failed++;
  tap_cur_failed++;
  printf("#   %s:%d: check failed: ", file, line);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  fputc('\n', stdout);
  return 0;
}

/* Print n bytes of p as a C string literal. */
static void tap_print_escaped(const void *p, size_t n) {
  const unsigned char *s = p;
  size_t i;
  fputc('"', stdout);
  for(i = 0; i < n && i < 400; i++) {
    if(s[i] == '"' || s[i] == '\\')
      printf("\\%c", s[i]);
    else if(s[i] < 0x20 || s[i] >= 0x7f)
      printf("\\x%02x", s[i]);
    else
      fputc(s[i], stdout);
  }
  fputs(i < n ? "\"..." : "\"", stdout);
}

int tap_check_mem(const void *got, size_t ngot, const void *want, size_t nwant,
                  const char *file, int line, const char *expr) {
  int ok;
  if(!got || !want)
    ok = got == want;
  else
    ok = ngot == nwant && (ngot == 0 || memcmp(got, want, ngot) == 0);
  tap_checks++;
  if(ok)
    return 1;
  tap_checks_failed++;
  tap_cur_failed++;
  printf("#   %s:%d: check failed: %s\n#     got:  ", file, line, expr);
  if(got)
    tap_print_escaped(got, ngot);
  else
    fputs("NULL", stdout);
  fputs("\n#     want: ", stdout);
  if(want)
    tap_print_escaped(want, nwant);
  else
    fputs("NULL", stdout);
  fputc('\n', stdout);
  return 0;
}

int tap_check_str(const char *got, const char *want, const char *file,
                  int line, const char *expr) {
  return tap_check_mem(got, got ? strlen(got) : 0, want,
                       want ? strlen(want) : 0, file, line, expr);
}

static int tap_selected(const char *name, int argc, char **argv) {
  int i;
  if(argc < 2)
    return 1;
  for(i = 1; i < argc; i++)
    if(strstr(name, argv[i]))
      return 1;
  return 0;
}

/* Run the tests of the NULL-terminated list of tables. */
static int tap_main(int argc, char **argv, const tap_test *const *tables) {
  int t, i, n = 0, passed = 0, failed = 0;
  for(t = 0; tables[t]; t++)
    for(i = 0; tables[t][i].name; i++)
      if(tap_selected(tables[t][i].name, argc, argv))
        n++;
  printf("1..%d\n", n);
  n = 0;
  for(t = 0; tables[t]; t++) {
    for(i = 0; tables[t][i].name; i++) {
      const tap_test *x = &tables[t][i];
      if(!tap_selected(x->name, argc, argv))
        continue;
      tap_cur_failed = 0;
      x->fn();
      n++;
      if(tap_cur_failed) {
        failed++;
        printf("not ok %d - %s\n", n, x->name);
      } else {
        passed++;
        printf("ok %d - %s\n", n, x->name);
      }
      fflush(stdout);
    }
  }
  printf("# %d passed, %d failed (%d checks, %d failed)\n", passed, failed,
         tap_checks, tap_checks_failed);
  return failed ? 1 : 0;
}
#endif /* TAP_MAIN */

#endif /* TAP_H */
