/*
** number.c -- DynamoDB numbers: the range rule (ddb_number_fits), SQL's
** view of them (ddb_number_classify), the canonical form and the shortest
** text of a double.
*/
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ddb_client_int.h"

/* ------------------------------------------------------------------------
** Numbers
**
** An N maps to SQL INTEGER when it is an integer literal that fits in 64
** bits; else to REAL when it has at most 15 significant digits (DBL_DIG:
** any such decimal survives the trip through a double and back); else to
** TEXT, keeping every digit.
*/
/* The longest number text accepted.  DynamoDB writes some numbers out in
** full: -1.2345678901234567890123456789012345678E-92 comes back as a sign,
** "0.", 91 zeros and 38 digits, and the smallest magnitudes (1E-130) take
** about 170 characters; 1024 leaves room for leading zeros a person may
** type, and keeps the conversion buffer of ddb_number_classify on the
** stack. */
#define NUMBER_MAX 1024
/* DynamoDB's numbers: at most 38 significant digits, magnitude from 1E-130
** to 9.9999999999999999999999999999999999999E+125 (and zero). */
#define NUMBER_DIGITS  38
#define NUMBER_MAX_MAG 126  /* |value| < 10^126 */
#define NUMBER_MIN_MAG -130 /* |value| >= 10^-130 */

/* The shape of a number, from number_scan(). */
typedef struct number_shape {
  size_t sig;  /* significant digits */
  int frac;    /* has a point */
  int expo;    /* has an exponent */
  int started; /* has a non-zero digit */
} number_shape;

/* Scan s[0..n) as a number: -1 when it is not one (the only test of
** ddb_number_ok), else 0 with *sh filled. */
static int number_scan(const char *s, size_t n, number_shape *sh) {
  size_t i = 0, zeros = 0;
  int digits = 0;
  memset(sh, 0, sizeof(*sh));
  if(i < n && (s[i] == '-' || s[i] == '+'))
    i++;
  for(; i < n; i++) {
    char c = s[i];
    if(c >= '0' && c <= '9') {
      digits++;
      if(c == '0') {
        if(sh->started)
          zeros++; /* a zero that counts only if a non-zero follows */
      } else {
        sh->started = 1;
        sh->sig += zeros + 1;
        zeros = 0;
      }
    } else if(c == '.' && !sh->frac && !sh->expo) {
      sh->frac = 1;
    } else if((c == 'e' || c == 'E') && digits && !sh->expo) {
      long e10 = 0;
      sh->expo = 1;
      if(i + 1 < n && (s[i + 1] == '-' || s[i + 1] == '+'))
        i++;
      if(i + 1 >= n)
        return -1;
      for(i++; i < n; i++) {
        if(s[i] < '0' || s[i] > '9')
          return -1;
        /* far past DynamoDB's range (and ddb_number_canonical's) */
        if((e10 = e10 * 10 + (s[i] - '0')) > 1000000)
          return -1;
      }
      break;
    } else {
      return -1;
    }
  }
  return digits && n <= NUMBER_MAX ? 0 : -1;
}

/* Is s[0..n) a number this layer takes (see ddb_client.h)? */
int ddb_number_ok(const char *s, size_t n) {
  number_shape sh;
  return number_scan(s, n, &sh) == 0;
}

/* Does the number s[0..n) fit DynamoDB (see ddb_client.h)? */
int ddb_number_fits(const char *s, size_t n) {
  char tmp[160];
  ddb_buf b;
  int ok = 0;
  ddb_buf_init_with(&b, tmp, sizeof(tmp), 256);
  if(ddb_number_canonical(s, n, &b) == 0 && !b.failed) {
    /* canonical: "0" or [-]DIGITSe<exp>; value = DIGITS x 10^exp */
    const char *d = b.p + (b.p[0] == '-');
    const char *ex = strchr(d, 'e');
    if(!ex) {
      ok = 1; /* zero */
    } else {
      long digits = (long)(ex - d), exp10 = strtol(ex + 1, NULL, 10);
      long mag = digits + exp10; /* 10^(mag-1) <= |value| < 10^mag */
      ok = digits <= NUMBER_DIGITS && mag <= NUMBER_MAX_MAG &&
           mag - 1 >= NUMBER_MIN_MAG;
    }
  }
  ddb_buf_free(&b);
  return ok;
}

/* The shortest decimal text of d that reads back as d (see ddb_client.h). */
int ddb_number_from_double(double d, char *buf, size_t cap) {
  int prec;
  if(cap < 32 || !isfinite(d))
    return -1;
  if(d == floor(d) && fabs(d) < 1e15) {
    snprintf(buf, cap, "%.0f", d == 0 ? 0.0 : d); /* no "-0", no "1e+02" */
    return 0;
  }
  for(prec = 1; prec <= 17; prec++) {
    snprintf(buf, cap, "%.*g", prec, d);
    if(strtod(buf, NULL) == d)
      break;
  }
  return ddb_number_fits(buf, strlen(buf)) ? 0 : -1;
}

/* Classify the number s[0..n) (see ddb_client.h). */
ddb_numkind ddb_number_classify(const char *s, size_t n, int64_t *ival,
                                double *dval) {
  number_shape sh;
  char tmp[NUMBER_MAX + 1];
  if(number_scan(s, n, &sh))
    return DDB_NUM_BAD;
  memcpy(tmp, s, n);
  tmp[n] = 0;
  if(!sh.frac && !sh.expo) {
    char *end;
    long long v;
    errno = 0;
    v = strtoll(tmp, &end, 10);
    if(errno == 0 && *end == 0) {
      if(ival)
        *ival = v;
      return DDB_NUM_INT;
    }
  }
  if(sh.sig <= 15) {
    char *end;
    double d = strtod(tmp, &end);
    /* finite, and not a non-zero that underflowed to zero */
    if(*end == 0 && d == d && d - d == 0 && (d != 0 || !sh.started)) {
      if(dval)
        *dval = d;
      return DDB_NUM_REAL;
    }
  }
  return DDB_NUM_TEXT;
}

int ddb_number_canonical(const char *s, size_t n, ddb_buf *out) {
  char digits[128];
  size_t i = 0, nd = 0, first;
  long point = 0, exp10 = 0;
  int neg = 0, seen_point = 0;
  if(!ddb_number_ok(s, n))
    return -1;
  if(s[i] == '-' || s[i] == '+')
    neg = s[i++] == '-';
  for(; i < n && s[i] != 'e' && s[i] != 'E'; i++) {
    if(s[i] == '.') {
      seen_point = 1;
      continue;
    }
    if(nd < sizeof(digits))
      digits[nd++] = s[i];
    else if(!seen_point)
      point++; /* digits past the buffer only scale the value */
    if(!seen_point)
      point++;
  }
  if(i < n) {
    /* classify checked the form and that |exponent| <= 10^6 (no DynamoDB
    ** number is near; it keeps the sums below in range) */
    int eneg = 0;
    i++;
    if(s[i] == '-' || s[i] == '+')
      eneg = s[i++] == '-';
    for(; i < n; i++)
      exp10 = exp10 * 10 + (s[i] - '0');
    if(eneg)
      exp10 = -exp10;
  }
  /* value = 0.digits x 10^point x 10^exp10 */
  for(first = 0; first < nd && digits[first] == '0'; first++)
    point--;
  while(nd > first && digits[nd - 1] == '0')
    nd--;
  if(first == nd)
    return ddb_buf_addc(out, '0');
  if(neg)
    ddb_buf_addc(out, '-');
  ddb_buf_add(out, digits + first, nd - first);
  return ddb_buf_addf(out, "e%ld", point + exp10 - (long)(nd - first));
}
