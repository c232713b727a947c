/*
** test_number.c -- unit tests of client/number.c: DynamoDB numbers
** classified (INT, REAL, TEXT, BAD), their range and shortest double, the
** decimals a double stands for, their canonical text and exact order.  No
** network.
*/
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../client/ddb_client_int.h"
#include "tap.h"

static int classify(const char *s, int64_t *i, double *d) {
  return (int)ddb_number_classify(s, strlen(s), i, d);
}

static void test_number_int(void) {
  int64_t i = 0;
  double d = 0;
  CHECK_INT(classify("0", &i, &d), DDB_NUM_INT);
  CHECK_INT(i, 0);
  CHECK_INT(classify("42", &i, &d), DDB_NUM_INT);
  CHECK_INT(i, 42);
  CHECK_INT(classify("-17", &i, &d), DDB_NUM_INT);
  CHECK_INT(i, -17);
  CHECK_INT(classify("+5", &i, &d), DDB_NUM_INT);
  CHECK_INT(i, 5);
  CHECK_INT(classify("-0", &i, &d), DDB_NUM_INT); /* an integer literal */
  CHECK_INT(i, 0);
  CHECK_INT(classify("007", &i, &d), DDB_NUM_INT);
  CHECK_INT(i, 7);
  CHECK_INT(classify("9223372036854775807", &i, &d), DDB_NUM_INT);
  CHECK(i == INT64_MAX);
  CHECK_INT(classify("-9223372036854775808", &i, &d), DDB_NUM_INT);
  CHECK(i == INT64_MIN);
  /* one past either end: 19 significant digits, so exact text */
  CHECK_INT(classify("9223372036854775808", &i, &d), DDB_NUM_TEXT);
  CHECK_INT(classify("-9223372036854775809", &i, &d), DDB_NUM_TEXT);
  /* only n bytes are read */
  CHECK_INT(ddb_number_classify("12abc", 2, &i, &d), DDB_NUM_INT);
  CHECK_INT(i, 12);
  /* NULL outputs are allowed */
  CHECK_INT(classify("12", NULL, NULL), DDB_NUM_INT);
  CHECK_INT(classify("1.5", NULL, NULL), DDB_NUM_REAL);
}

/* The range rule (ddb_number_fits) and the shortest text of a double
** (ddb_number_from_double) at DynamoDB's edges. */
static void test_number_edges(void) {
  char tiny[200], full[200], buf[64];
  int64_t i = 0;
  double d = 0;
  /* 1E-130 as DynamoDB writes it out: 132 characters */
  snprintf(tiny, sizeof(tiny), "0.%0129d1", 0);
  CHECK_INT((int)strlen(tiny), 132);
  CHECK(ddb_number_ok(tiny, strlen(tiny)));
  CHECK(ddb_number_fits(tiny, strlen(tiny)));
  CHECK_INT(classify(tiny, &i, &d), DDB_NUM_REAL);
  CHECK(d == 1e-130);
  /* -1.2345678901234567890123456789012345678E-92 written out: 133 chars */
  snprintf(full, sizeof(full),
           "-0.%091d12345678901234567890123456789012345678", 0);
  CHECK_INT((int)strlen(full), 132);
  CHECK(ddb_number_fits(full, strlen(full)));
  CHECK_INT(classify(full, &i, &d), DDB_NUM_TEXT);
  CHECK(ddb_number_fits("1E-130", 6));
  CHECK(ddb_number_fits("-1E-130", 7));
  CHECK(!ddb_number_fits("9E-131", 6));
  CHECK(ddb_number_fits("9.9999999999999999999999999999999999999E+125", 44));
  CHECK(!ddb_number_fits("1E+126", 6));
  CHECK(!ddb_number_fits("1e126", 5));
  CHECK(ddb_number_fits("12345678901234567890123456789012345678", 38));
  CHECK(!ddb_number_fits("123456789012345678901234567890123456789", 39));
  CHECK(ddb_number_fits("0", 1));
  CHECK(!ddb_number_fits("1x", 2));
  CHECK_INT(ddb_number_from_double(0.3, buf, sizeof(buf)), 0);
  CHECK_STR(buf, "0.3");
  CHECK_INT(ddb_number_from_double(0.1, buf, sizeof(buf)), 0);
  CHECK_STR(buf, "0.1");
  CHECK_INT(ddb_number_from_double(100.0, buf, sizeof(buf)), 0);
  CHECK_STR(buf, "100");
  CHECK_INT(ddb_number_from_double(-0.0, buf, sizeof(buf)), 0);
  CHECK_STR(buf, "0");
  CHECK_INT(ddb_number_from_double(1.0 / 3, buf, sizeof(buf)), 0);
  CHECK(strtod(buf, NULL) == 1.0 / 3);
  CHECK_INT(ddb_number_from_double(1e-130, buf, sizeof(buf)), 0);
  CHECK_STR(buf, "1e-130");
  CHECK_INT(ddb_number_from_double(1e126, buf, sizeof(buf)), -1);
  CHECK_INT(ddb_number_from_double(1e-131, buf, sizeof(buf)), -1);
  CHECK_INT(ddb_number_from_double(1.0 / 0.0, buf, sizeof(buf)), -1);
  /* a whole double in 64-bit range is its exact integer: SQLite compares it
  ** with an INTEGER exactly, and the shortest text names another number */
  CHECK_INT(ddb_number_from_double(1152921504606846976.0, buf, sizeof(buf)),
            0);
  CHECK_STR(buf, "1152921504606846976");
  CHECK_INT(ddb_number_from_double(-9223372036854775808.0, buf, sizeof(buf)),
            0);
  CHECK_STR(buf, "-9223372036854775808");
  CHECK_INT(ddb_number_from_double(18446744073709551616.0, buf, sizeof(buf)),
            0);
  CHECK_STR(buf, "1.8446744073709552e+19");
  /* from 2^63 on, the shortest text: what the user wrote, never the
  ** binary expansion (1e37 is 9999999999999999538762658202121142272) */
  CHECK_INT(ddb_number_from_double(1e37, buf, sizeof(buf)), 0);
  CHECK_STR(buf, "1e+37");
  CHECK_INT(ddb_number_from_double(1.23e22, buf, sizeof(buf)), 0);
  CHECK_STR(buf, "1.23e+22");
  CHECK_INT(ddb_number_from_double(9223372036854775808.0, buf, sizeof(buf)),
            0);
  CHECK_STR(buf, "9.223372036854776e+18");
  CHECK_INT(ddb_number_from_double(9223372036854774784.0, buf, sizeof(buf)),
            0);
  CHECK_STR(buf, "9223372036854774784");
  CHECK_INT(ddb_number_from_double(-1e20, buf, 40), 0);
  CHECK_STR(buf, "-1e+20");
  CHECK_INT(ddb_number_from_double(1e40, buf, sizeof(buf)), 0);
  CHECK_STR(buf, "1e+40");
  CHECK_INT(ddb_number_from_double(0.5, buf, 39), -1); /* cap under 40 */
}

/* The decimals a double stands for (ddb_number_double_range): the
** midpoints to its neighbours rounded inwards to 38 digits, each end open
** exactly when it is a tie that goes to the odd neighbour. */
static void test_number_double_range(void) {
  char lo[64], hi[64];
  int lo_open = -1, hi_open = -1;
  /* 1.23e22 is 12300000000000001048576, its ulp 2^21: the lower midpoint
  ** is 1.23E22 exactly, a tie its even significand wins */
  CHECK_INT(
      ddb_number_double_range(1.23e22, lo, &lo_open, hi, &hi_open, sizeof(lo)),
      0);
  CHECK_STR(lo, "1.23E22");
  CHECK_STR(hi, "1.2300000000000002097152E22");
  CHECK_INT(lo_open, 0);
  CHECK_INT(hi_open, 0);
  CHECK_INT(ddb_number_double_range(-1.23e22, lo, &lo_open, hi, &hi_open,
                                    sizeof(lo)),
            0);
  CHECK_STR(lo, "-1.2300000000000002097152E22");
  CHECK_STR(hi, "-1.23E22");
  /* 0.1: its midpoints have 57 digits, rounded inwards: both ends inside,
  ** closed */
  CHECK_INT(
      ddb_number_double_range(0.1, lo, &lo_open, hi, &hi_open, sizeof(lo)), 0);
  CHECK_STR(lo, "9.9999999999999998612221219218554324471E-2");
  CHECK_STR(hi, "1.0000000000000001249000902703301107976E-1");
  CHECK(strtod(lo, NULL) == 0.1 && strtod(hi, NULL) == 0.1);
  CHECK_INT(lo_open + hi_open, 0);
  /* 2^63 + 2048 (odd significand): both midpoints exact ties that go to
  ** the neighbours, so both ends open */
  CHECK_INT(ddb_number_double_range(9223372036854777856.0, lo, &lo_open, hi,
                                    &hi_open, sizeof(lo)),
            0);
  CHECK_STR(lo, "9.223372036854776832E18");
  CHECK_STR(hi, "9.22337203685477888E18");
  CHECK_INT(lo_open, 1);
  CHECK_INT(hi_open, 1);
  /* a power of two: the lower neighbour is half as far */
  CHECK_INT(ddb_number_double_range(9223372036854775808.0, lo, &lo_open, hi,
                                    &hi_open, sizeof(lo)),
            0);
  CHECK_STR(lo, "9.223372036854775296E18");
  CHECK_STR(hi, "9.223372036854776832E18");
  CHECK_INT(lo_open + hi_open, 0);
  /* 1e126 stands for 38-digit numbers DynamoDB can hold */
  CHECK_INT(
      ddb_number_double_range(1e126, lo, &lo_open, hi, &hi_open, sizeof(lo)),
      0);
  CHECK(ddb_number_fits(lo, strlen(lo)));
  CHECK(!ddb_number_fits(hi, strlen(hi)));
  CHECK(strtod(lo, NULL) == 1e126);
  /* far below 1E-130, and zero: the shortest text, closed */
  CHECK_INT(
      ddb_number_double_range(1e-300, lo, &lo_open, hi, &hi_open, sizeof(lo)),
      0);
  CHECK_STR(lo, "1e-300");
  CHECK_STR(hi, "1e-300");
  CHECK_INT(
      ddb_number_double_range(-0.0, lo, &lo_open, hi, &hi_open, sizeof(lo)),
      0);
  CHECK_STR(lo, "0");
  CHECK_INT(ddb_number_double_range(1.0 / 0.0, lo, &lo_open, hi, &hi_open,
                                    sizeof(lo)),
            -1);
  CHECK_INT(ddb_number_double_range(1.0, lo, &lo_open, hi, &hi_open, 63), -1);
  /* every end reads back as d, or (open) is the tie that does not */
  {
    static const double ad[] = {1.0,     3.0,   0.3,    1e-130, 2.5e-131,
                                1.5e125, 1e300, 1e-199, 7e22,   123.456,
                                4.56e22, -1e-5, 1e15,   DBL_MAX};
    size_t i;
    for(i = 0; i < sizeof(ad) / sizeof(ad[0]); i++) {
      CHECK_INT(ddb_number_double_range(ad[i], lo, &lo_open, hi, &hi_open,
                                        sizeof(lo)),
                0);
      CHECK(lo_open || strtod(lo, NULL) == ad[i]);
      CHECK(hi_open || strtod(hi, NULL) == ad[i]);
      CHECK(ddb_number_cmp(lo, strlen(lo), hi, strlen(hi)) < 0);
    }
  }
}

/* Exact order of numbers at any length and spelling (ddb_number_cmp). */
static void test_number_cmp(void) {
  static const struct {
    const char *a, *b;
    int want;
  } v[] = {
      {"1", "1", 0},
      {"1.50", "15E-1", 0},
      {"0", "-0.0", 0},
      {"0", "0e5", 0},
      {"-1", "1", -1},
      {"-2", "-1", -1},
      {"0.1", "0.10000000000000001", -1},
      {"18446744073709551616", "18446744073709551617", -1},
      {"-9223372036854775810", "-9223372036854775809", -1},
      {"9007199254740993", "9007199254740992", 1},
      {"12345678901234567890123456789012345678",
       "12345678901234567890123456789012345679", -1},
      {"1.2345678901234567890123456789012345678E+37",
       "12345678901234567890123456789012345678", 0},
      {"1E-130", "0", 1},
      {"-1E-130", "0", -1},
      {"1E-130", "2E-130", -1},
      {"9.9999999999999999999999999999999999999E+125", "1E126", -1},
      {"100", "99.999", 1},
      {"0.001", "0.01", -1},
      {"-0.001", "-0.01", 1},
      {"5", "5.0000000000000000000000000000000000000000000001", -1},
      {"abc", "1", 1}, /* not numbers: after every number */
      {"1", "abc", -1},
      {"abc", "abd", -1},
  };
  char tiny[200], tinier[200], neg[200];
  size_t i;
  for(i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
    int c = ddb_number_cmp(v[i].a, strlen(v[i].a), v[i].b, strlen(v[i].b));
    int r = ddb_number_cmp(v[i].b, strlen(v[i].b), v[i].a, strlen(v[i].a));
    CHECK_MSG(c == v[i].want && r == -v[i].want,
              "ddb_number_cmp(%s, %s) = %d (reversed %d), want %d", v[i].a,
              v[i].b, c, r, v[i].want);
  }
  /* 1E-130 written out in full (132 characters, as DynamoDB Local returns
  ** it) is 1E-130, above 0 and 1E-131, below 2E-130 */
  snprintf(tiny, sizeof(tiny), "0.%0129d1", 0);
  snprintf(tinier, sizeof(tinier), "0.%0130d1", 0);
  snprintf(neg, sizeof(neg), "-0.%0129d1", 0);
  CHECK_INT(ddb_number_cmp(tiny, strlen(tiny), "1E-130", 6), 0);
  CHECK_INT(ddb_number_cmp(tiny, strlen(tiny), "0", 1), 1);
  CHECK_INT(ddb_number_cmp(tiny, strlen(tiny), tinier, strlen(tinier)), 1);
  CHECK_INT(ddb_number_cmp(neg, strlen(neg), "-1e-130", 7), 0);
  CHECK_INT(ddb_number_cmp(tiny, strlen(tiny), "2E-130", 6), -1);
  CHECK(ddb_number_fits(tiny, strlen(tiny)));
  CHECK(!ddb_number_fits(tinier, strlen(tinier)));
}

static void test_number_real_text(void) {
  int64_t i = 0;
  double d = 0;
  CHECK_INT(classify("1.5", &i, &d), DDB_NUM_REAL);
  CHECK(d == 1.5);
  CHECK_INT(classify("-0.25", &i, &d), DDB_NUM_REAL);
  CHECK(d == -0.25);
  CHECK_INT(classify(".5", &i, &d), DDB_NUM_REAL);
  CHECK(d == 0.5);
  CHECK_INT(classify("5.", &i, &d), DDB_NUM_REAL);
  CHECK(d == 5.0);
  /* an exponent is not an integer literal; no digit is lost: REAL */
  CHECK_INT(classify("1E+2", &i, &d), DDB_NUM_REAL);
  CHECK(d == 100.0);
  CHECK_INT(classify("2e-3", &i, &d), DDB_NUM_REAL);
  CHECK(d == 0.002);
  CHECK_INT(classify("1E-130", &i, &d), DDB_NUM_REAL);
  CHECK(d == 1e-130);
  /* 15 significant digits fit a double, 16 do not */
  CHECK_INT(classify("1.23456789012345", &i, &d), DDB_NUM_REAL);
  CHECK(d == 1.23456789012345);
  CHECK_INT(classify("1.234567890123456", &i, &d), DDB_NUM_TEXT);
  CHECK_INT(classify("0.123456789012345", &i, &d), DDB_NUM_REAL);
  CHECK_INT(classify("0.1234567890123456", &i, &d), DDB_NUM_TEXT);
  /* leading zeros and trailing zeros are not significant */
  CHECK_INT(classify("0.000000000000000000001", &i, &d), DDB_NUM_REAL);
  CHECK(d == 1e-21);
  CHECK_INT(classify("000.1234567890123450000", &i, &d), DDB_NUM_REAL);
  CHECK_INT(classify("1.00000000000000000000000", &i, &d), DDB_NUM_REAL);
  CHECK(d == 1.0);
  CHECK_INT(classify("1000000000000000000000", &i, &d), DDB_NUM_REAL);
  CHECK(d == 1e21);
  /* zeros between significant digits are significant */
  CHECK_INT(classify("1000000000000000000001", &i, &d), DDB_NUM_TEXT);
  CHECK_INT(classify("1.0000000000000001", &i, &d), DDB_NUM_TEXT);
  /* DynamoDB's 38 digits */
  CHECK_INT(classify("12345678901234567890123456789012345678", &i, &d),
            DDB_NUM_TEXT);
  CHECK_INT(classify("-0.12345678901234567890123456789012345678", &i, &d),
            DDB_NUM_TEXT);
  CHECK_INT(classify("9.9999999999999999999999999999999999999E+125", &i, &d),
            DDB_NUM_TEXT);
  /* too large for a double */
  CHECK_INT(classify("1e400", &i, &d), DDB_NUM_TEXT);
}

static void test_number_bad(void) {
  static const char *const bad[] = {
      "abc", "",     "1e",  "--1",   "-",     "+",     ".",
      "e5",  "1e+",  "1e-", "1.2.3", "1e5.0", "1e2e3", " 1",
      "1 ",  "0x10", "inf", "nan",   "1,5",   "+-1",   "1-"};
  size_t k;
  for(k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
    CHECK_MSG(classify(bad[k], NULL, NULL) == DDB_NUM_BAD,
              "\"%s\" not classified BAD", bad[k]);
}

/* Canonical text of a number, or "ERR". */
static void canon(const char *s, char *out, size_t cap) {
  ddb_buf b;
  ddb_buf_init(&b, 256);
  if(ddb_number_canonical(s, strlen(s), &b) || b.failed || !b.p)
    snprintf(out, cap, "ERR");
  else
    snprintf(out, cap, "%s", b.p);
  ddb_buf_free(&b);
}

static void test_number_canonical(void) {
  static const struct {
    const char *in, *want;
  } v[] = {
      {"1.5", "15e-1"},
      {"1.50", "15e-1"},
      {"15E-1", "15e-1"},
      {"0.15e1", "15e-1"},
      {"+1.5", "15e-1"},
      {"-1.5", "-15e-1"},
      {"7", "7e0"},
      {"007", "7e0"},
      {"7.000", "7e0"},
      {"100", "1e2"},
      {"1E+2", "1e2"},
      {"0.001", "1e-3"},
      {".5", "5e-1"},
      {"5.", "5e0"},
      {"0", "0"},
      {"-0.0", "0"},
      {"0e5", "0"},
      {"1E-130", "1e-130"},
      /* written out in full, as DynamoDB Local returns it: every digit
      ** counts, however long (a 127-byte buffer made this "0") */
      {"0.0000000000000000000000000000000000000000000000000000000000000000"
       "000000000000000000000000000000000000000000000000000000000000000001",
       "1e-130"},
      {"-0.000000000000000000000000000000000000000000000000000000000000000"
       "000000000000000000000000000009999999999999999999999999999999999999"
       "9",
       "-99999999999999999999999999999999999999e-130"},
      {"000000000000000000000000000000000000000000000000000000000000000000"
       "000000000000000000000000000000000000000000000000000000000000000001"
       "5.5",
       "155e-1"},
      {"12345678901234567890123456789012345678",
       "12345678901234567890123456789012345678e0"},
      {"abc", "ERR"},
      {"", "ERR"},
      {"1e", "ERR"},
  };
  size_t i;
  char out[128];
  for(i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
    canon(v[i].in, out, sizeof(out));
    if(!CHECK_STR(out, v[i].want))
      tap_diag("  ddb_number_canonical(\"%s\")", v[i].in);
  }
}

const tap_test tap_number_tests[] = {
    {"client: number classify INT and bounds", test_number_int},
    {"client: number classify REAL/TEXT and significant digits",
     test_number_real_text},
    {"client: numbers at DynamoDB's edges (fits, shortest double)",
     test_number_edges},
    {"client: the decimals a double stands for (38-digit rounding interval)",
     test_number_double_range},
    {"client: number classify BAD", test_number_bad},
    {"client: ddb_number_canonical", test_number_canonical},
    {"client: ddb_number_cmp, exact at any length", test_number_cmp},
    {NULL, NULL}};
