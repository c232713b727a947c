/*
** test_tape_scan.c -- unit tests of the byte scanners under the tape
** parser (client/tape.c, number.c): JSON numbers checked and converted
** (ddb_number_ok, ddb_tape_num against strtod), plain runs of strings
** (ddb_json_plain, tape.c's 16-byte plain_prefix), UTF-8 validity
** (ddb_utf8_valid against RFC 3629).  No network.
*/
#include <stdlib.h>
#include <string.h>

#include "../../client/ddb_client_int.h"
#include "tap.h"

/* ddb_json_plain against the byte-at-a-time rule: every byte value at
** every position of buffers of every length up to 20. */
static void test_plain_run(void) {
  char buf[20];
  int c, pos, len, bad = 0;
  for(len = 0; len <= 20; len++)
    for(pos = 0; pos < len; pos++)
      for(c = 0; c < 256; c++) {
        size_t want;
        memset(buf, 'a' + len % 26, sizeof(buf));
        buf[pos] = (char)c;
        want = (c == '"' || c == '\\' || c < 0x20) ? (size_t)pos : (size_t)len;
        if(ddb_json_plain(buf, (size_t)len) != want)
          bad++;
      }
  CHECK_INT(bad, 0);
  CHECK_INT(ddb_json_plain("\xc3\xa9\x7f\xff abcdefgh\x1f", 14), 13);
}

/* ddb_number_ok is ddb_number_classify's "not DDB_NUM_BAD", without the
** conversions. */
static void test_number_ok(void) {
  static const char *const all[] = {"0",
                                    "-0",
                                    "+1",
                                    "12",
                                    "1.5",
                                    ".5",
                                    "5.",
                                    "-1e10",
                                    "1E-130",
                                    "1e+5",
                                    "123456789012345678901234567890123456789",
                                    "9223372036854775808",
                                    "",
                                    "-",
                                    "+",
                                    ".",
                                    "e5",
                                    "1e",
                                    "1e+",
                                    "1.2.3",
                                    "1e5e5",
                                    "1x",
                                    " 1",
                                    "1 ",
                                    "--1",
                                    "1e1000001",
                                    "0x10",
                                    "NaN",
                                    "inf",
                                    "1,5"};
  char longest[1025];
  size_t i;
  for(i = 0; i < sizeof(all) / sizeof(all[0]); i++)
    CHECK_MSG(ddb_number_ok(all[i], strlen(all[i])) ==
                  (ddb_number_classify(all[i], strlen(all[i]), NULL, NULL) !=
                   DDB_NUM_BAD),
              "ddb_number_ok and ddb_number_classify disagree on '%s'",
              all[i]);
  CHECK(ddb_number_ok("1.5", 3));
  CHECK(!ddb_number_ok("1.5.", 4));
  memset(longest, '7', sizeof(longest));
  /* past DynamoDB's 38 digits written out in full (about 170 chars) */
  CHECK(ddb_number_ok(longest, 1024));
  CHECK(!ddb_number_ok(longest, 1025));
  CHECK_INT(ddb_number_classify(longest, 1024, NULL, NULL), DDB_NUM_TEXT);
  CHECK_INT(ddb_number_classify(longest, 1025, NULL, NULL), DDB_NUM_BAD);
}

/* Strings scanned 16 bytes at a time (tape.c's plain_prefix): a byte that
** ends or breaks a string (a quote, a backslash, a control character) or
** one that does not (0x7f, 0xff, 0x20) at every position of strings of
** every length up to 40, the string at every offset of its text. */
static void test_string_scan(void) {
  static const unsigned char bytes[] = {'"',  '\\', 0x00, 0x1f,
                                        0x7f, 0xff, 0x20, '/'};
  char text[64];
  size_t b;
  int len, pos, off, bad = 0;
  for(b = 0; b < sizeof(bytes); b++)
    for(len = 1; len <= 40; len++)
      for(pos = 0; pos < len; pos++)
        for(off = 0; off < 3; off++) {
          ddb_tape t;
          const char *p = text, *end;
          int rc, want_ok;
          size_t want_len;
          memset(text, ' ', sizeof(text));
          text[off] = '"';
          memset(text + off + 1, 'a', (size_t)len);
          text[off + 1 + pos] = (char)bytes[b];
          text[off + 1 + len] = '"';
          end = text + off + 2 + len;
          memset(&t, 0, sizeof(t));
          rc = ddb_tape_value(&t, text, &p, end);
          /* a quote ends the string early (a string of pos bytes); a
          ** backslash before 'a' or a control character is no JSON */
          want_ok = bytes[b] >= 0x20 && bytes[b] != '\\';
          want_len = bytes[b] == '"' ? (size_t)pos : (size_t)len;
          if(want_ok != (rc == 0))
            bad++;
          else if(rc == 0 && (t.n != 1 || t.tok[0].type != DDB_JSTR ||
                              t.tok[0].len != want_len || t.tok[0].esc))
            bad++;
          ddb_tape_free(&t);
        }
  CHECK_INT(bad, 0);
}

/* A plain reading of RFC 3629 for test_utf8: decode each sequence and
** check its length, continuation bytes, shortest form and range. */
static int utf8_ref(const unsigned char *p, size_t n) {
  size_t i = 0, len, k;
  while(i < n) {
    unsigned c = p[i], cp;
    if(c < 0x80) {
      i++;
      continue;
    }
    if((c & 0xE0) == 0xC0)
      len = 2, cp = c & 0x1F;
    else if((c & 0xF0) == 0xE0)
      len = 3, cp = c & 0x0F;
    else if((c & 0xF8) == 0xF0)
      len = 4, cp = c & 0x07;
    else
      return 0;
    if(n - i < len)
      return 0;
    for(k = 1; k < len; k++) {
      if((p[i + k] & 0xC0) != 0x80)
        return 0;
      cp = cp << 6 | (p[i + k] & 0x3F);
    }
    if((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
       (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
       (cp >= 0xD800 && cp <= 0xDFFF))
      return 0;
    i += len;
  }
  return 1;
}

/* ddb_utf8_valid against utf8_ref: every string of 1 and 2 bytes, and of
** 3 and 4 bytes every first two bytes with the later ones from a set at
** the edges (the fourth from 7F 80 BF C0); each alone, and inside ASCII where the 16-byte loads cross
** it (at 14, 15 and 16 of 40 bytes); and a reader refuses a JSON answer
** that is not UTF-8. */
static void test_utf8(void) {
  static const unsigned char later[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90,
                                        0x9F, 0xA0, 0xBF, 0xC0, 0xFF};
  static const unsigned char last[] = {0x7F, 0x80, 0xBF, 0xC0};
  unsigned char buf[40];
  unsigned a, b, c, d;
  size_t nl = sizeof(later), bad = 0, cases = 0, len, at;
  ddb_jreader r;
  for(len = 1; len <= 4; len++)
    for(a = 0; a < 256; a++)
      for(b = 0; b < (len >= 2 ? 256u : 1u); b++)
        for(c = 0; c < (len >= 3 ? nl : 1); c++)
          for(d = 0; d < (len >= 4 ? 4u : 1u); d++) {
            unsigned char s[4] = {(unsigned char)a, (unsigned char)b, later[c],
                                  last[d]};
            static const size_t ats[] = {0, 14, 15, 16, 36};
            size_t i;
            for(i = 0; i < sizeof(ats) / sizeof(ats[0]); i++) {
              at = ats[i];
              if(at + len > sizeof(buf))
                continue;
              memset(buf, 'a', sizeof(buf));
              memcpy(buf + at, s, len);
              cases++;
              if(ddb_utf8_valid((const char *)buf, sizeof(buf)) !=
                 utf8_ref(buf, sizeof(buf)))
                bad++;
            }
            cases++;
            if(ddb_utf8_valid((const char *)s, len) != utf8_ref(s, len))
              bad++;
          }
  CHECK(cases > 1000000);
  CHECK_INT((int)bad, 0);
  CHECK(ddb_utf8_valid("", 0));
  CHECK(ddb_utf8_valid("\xf4\x8f\xbf\xbf", 4));          /* U+10FFFF */
  CHECK(!ddb_utf8_valid("\xed\xa0\x80", 3));             /* a surrogate */
  CHECK(!ddb_utf8_valid("\xc0\xaf", 2));                 /* overlong '/' */
  CHECK(!ddb_utf8_valid("aaaaaaaaaaaaaaa\xe2\x82", 17)); /* cut short */
  memset(&r, 0, sizeof(r));
  CHECK(ddb_jr_open(&r, "{\"S\":\"\xc3\xa9\"}", 11) == 0);
  memset(&r, 0, sizeof(r));
  CHECK(ddb_jr_open(&r, "{\"S\":\"\xc3\x28\"}", 11) == -1);
}

/* ddb_tape_num of JSON number text s, through a tape. */
static double tape_num(const char *s) {
  ddb_tape t;
  const char *p = s;
  double v = -12345.0;
  memset(&t, 0, sizeof(t));
  if(ddb_tape_value(&t, s, &p, s + strlen(s)) == 0)
    v = ddb_tape_num(&t, s, 0);
  ddb_tape_free(&t);
  return v;
}

/* ddb_tape_num is strtod, bit for bit, for short numbers (its fast path)
** and long ones: ConsumedCapacity's units are summed from it. */
static void test_tape_num(void) {
  static const char *const fixed[] = {"0",
                                      "-0",
                                      "0.5",
                                      "1",
                                      "1.0",
                                      "128.5",
                                      "0.1",
                                      "0.3",
                                      "-2.25",
                                      "1e3",
                                      "1.5E-2",
                                      "123456789012345",
                                      "1234567890123456",
                                      "0.000000000000001",
                                      "9007199254740993",
                                      "99999999999999.9",
                                      "3.141592653589793",
                                      "-0.0"};
  char buf[40];
  unsigned seed = 12345;
  size_t i;
  int bad = 0, n;
  for(i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
    double a = tape_num(fixed[i]), b = strtod(fixed[i], NULL);
    if(memcmp(&a, &b, sizeof(a)) != 0) {
      tap_diag("%s: %.17g, strtod %.17g", fixed[i], a, b);
      bad++;
    }
  }
  for(n = 0; n < 200000; n++) {
    int len = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 17;
    int dot = (int)((seed = seed * 1103515245u + 12345u) >> 16) % (len + 1);
    int j, k = 0;
    double a, b;
    if((seed >> 20) & 1)
      buf[k++] = '-';
    for(j = 0; j < len; j++) {
      if(j == dot && j > 0)
        buf[k++] = '.';
      seed = seed * 1103515245u + 12345u;
      buf[k++] =
          (char)('0' + (j == 0 && len > 1 && dot != 1 ? 1 + (seed >> 16) % 9
                                                      : (seed >> 16) % 10));
    }
    buf[k] = 0;
    a = tape_num(buf);
    b = strtod(buf, NULL);
    if(memcmp(&a, &b, sizeof(a)) != 0 && bad++ < 5)
      tap_diag("%s: %.17g, strtod %.17g", buf, a, b);
  }
  CHECK(bad == 0);
}

const tap_test tap_tape_scan_tests[] = {
    {"tape: ddb_number_ok against ddb_number_classify", test_number_ok},
    {"tape: ddb_tape_num is strtod, bit for bit", test_tape_num},
    {"tape: plain runs of JSON strings, 8 bytes at a time", test_plain_run},
    {"tape: strings scanned 16 bytes at a time", test_string_scan},
    {"tape: UTF-8 validity as RFC 3629 reads it (every 1-2 byte string, "
     "3-4 byte edges, across 16-byte loads); a reader refuses other text",
     test_utf8},
    {NULL, NULL}};
