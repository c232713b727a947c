/*
** number.c -- DynamoDB numbers: the range rule (ddb_number_fits), SQL's
** view of them (ddb_number_classify), their exact order (ddb_number_cmp),
** the canonical form and the text of a double.
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
** 132 characters; 1024 leaves room for leading zeros a person may type,
** and keeps the conversion buffer of ddb_number_classify on the stack.
** Everything else here reads the text in place (number_parts_of): no
** digit buffer, so no length below NUMBER_MAX cuts a number short. */
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

/* A number's significant digits and magnitude, read in place from its
** text (no copy, any length): value = [-]0.D x 10^mag, where D are the
** digits of s[first..last) without the point, the first and the last of
** them non-zero. */
typedef struct number_parts {
  const char *s;
  size_t first, last; /* first == last: zero */
  size_t ndig;        /* digits in s[first..last) */
  long mag;
  int neg;
} number_parts;

/* Read s[0..n) into *np.  Returns 0, or -1 when it is not a number
** (number_scan), with *np zeroed. */
static int number_parts_of(const char *s, size_t n, number_parts *np) {
  number_shape sh;
  size_t i = 0, m, k, point;
  long exp10 = 0, before = 0, zeros = 0;
  memset(np, 0, sizeof(*np));
  if(number_scan(s, n, &sh))
    return -1;
  np->s = s;
  if(s[i] == '-' || s[i] == '+')
    np->neg = s[i++] == '-';
  for(m = i; m < n && s[m] != 'e' && s[m] != 'E'; m++)
    ;
  if(m < n) {
    /* number_scan checked the form and that |exponent| <= 10^6 (no
    ** DynamoDB number is near; it keeps the sums below in range) */
    size_t j = m + 1;
    int eneg = 0;
    if(s[j] == '-' || s[j] == '+')
      eneg = s[j++] == '-';
    for(; j < n; j++)
      exp10 = exp10 * 10 + (s[j] - '0');
    if(eneg)
      exp10 = -exp10;
  }
  for(point = i; point < m && s[point] != '.'; point++)
    ;
  for(k = i; k < m && (s[k] == '0' || s[k] == '.'); k++)
    ;
  if(k == m) {
    np->first = np->last = m; /* zero, whatever its sign */
    np->neg = 0;
    return 0;
  }
  np->first = k;
  for(np->last = m; s[np->last - 1] == '0' || s[np->last - 1] == '.';)
    np->last--;
  for(k = np->first; k < point; k++)
    before++; /* significant digits before the point */
  for(k = point + 1; k < np->first; k++)
    zeros++; /* zeros between the point and the first significant digit */
  np->mag = (np->first < point ? before : -zeros) + exp10;
  for(k = np->first; k < np->last; k++)
    np->ndig += s[k] != '.';
  return 0;
}

/* The significant digit of np at *k, skipping the point, and *k moved
** past it; 0 past the last one. */
static int number_digit(const number_parts *np, size_t *k) {
  if(*k < np->last && np->s[*k] == '.')
    (*k)++;
  return *k < np->last ? np->s[(*k)++] - '0' : 0;
}

/* Compare two numbers exactly (see ddb_client.h). */
int ddb_number_cmp(const char *a, size_t na, const char *b, size_t nb) {
  number_parts x, y;
  int bx = number_parts_of(a, na, &x), by = number_parts_of(b, nb, &y);
  int sx, sy, c = 0;
  size_t i, j;
  if(bx || by) {
    /* not numbers: after every number, among themselves by bytes */
    size_t n = na < nb ? na : nb;
    if(!bx || !by)
      return bx ? 1 : -1;
    c = n ? memcmp(a, b, n) : 0;
    return c ? (c < 0 ? -1 : 1) : na < nb ? -1 : na > nb;
  }
  sx = x.first == x.last ? 0 : x.neg ? -1 : 1;
  sy = y.first == y.last ? 0 : y.neg ? -1 : 1;
  if(sx != sy || sx == 0)
    return sx < sy ? -1 : sx > sy;
  if(x.mag != y.mag)
    return x.mag < y.mag ? -sx : sx;
  for(i = x.first, j = y.first; c == 0 && (i < x.last || j < y.last);) {
    int dx = number_digit(&x, &i), dy = number_digit(&y, &j);
    c = dx < dy ? -1 : dx > dy;
  }
  return c * sx;
}

/* Does the number s[0..n) fit DynamoDB (see ddb_client.h)? */
int ddb_number_fits(const char *s, size_t n) {
  number_parts np;
  if(number_parts_of(s, n, &np))
    return 0;
  /* zero, or 10^(mag-1) <= |value| < 10^mag */
  return np.first == np.last ||
         (np.ndig <= NUMBER_DIGITS && np.mag <= NUMBER_MAX_MAG &&
          np.mag - 1 >= NUMBER_MIN_MAG);
}

/* The shortest text of d that reads back as d (%.17g at the most). */
static void number_shortest(double d, char *buf, size_t cap) {
  int prec;
  for(prec = 1; prec <= 17; prec++) {
    snprintf(buf, cap, "%.*g", prec, d);
    if(strtod(buf, NULL) == d)
      break;
  }
}

/* The text of d: a whole number in 64-bit range exactly, any other the
** shortest text that reads back as d (see ddb_client.h). */
int ddb_number_from_double(double d, char *buf, size_t cap) {
  if(cap < 40)
    return -1;
  if(!isfinite(d)) {
    snprintf(buf, cap, "%s", d != d ? "nan" : d > 0 ? "inf" : "-inf");
    return -1;
  }
  /* A whole double in 64-bit range is an integer, and SQLite compares it
  ** with an INTEGER exactly: 2^60 goes out as 1152921504606846976, never
  ** as its shortest text 1.152921504606847e+18, which names another
  ** number.  From 2^63 on no INTEGER is near: the shortest text is what
  ** was written (1.23e22, never its binary expansion
  ** 12300000000000001048576). */
  if(d == floor(d) && d >= -9223372036854775808.0 &&
     d < 9223372036854775808.0) {
    snprintf(buf, cap, "%.0f", d == 0 ? 0.0 : d); /* no "-0", no "1e+02" */
    return 0;
  }
  number_shortest(d, buf, cap);
  return ddb_number_fits(buf, strlen(buf)) ? 0 : -1;
}

/* ------------------------------------------------------------------------
** The decimals a double stands for.  The numbers whose nearest double is
** d lie between the midpoints of d and its neighbours: exact binary
** fractions N * 2^K of up to 767 digits, which number_big writes out
** digit for digit (base 10^9 limbs), and number_round38 rounds to the
** nearest number of DynamoDB's 38 digits inside the interval.
*/
#define BIG_LIMBS 80 /* 720 digits: (2^55) * 5^720 and 2^1026 fit */
typedef struct number_big {
  uint32_t d[BIG_LIMBS]; /* little-endian, each below 10^9 */
  int n;
} number_big;

/* b *= m (m < 2^32).  The limbs are sized for every use below. */
static void number_big_mul(number_big *b, uint32_t m) {
  uint64_t carry = 0;
  int i;
  for(i = 0; i < b->n; i++) {
    uint64_t t = (uint64_t)b->d[i] * m + carry;
    b->d[i] = (uint32_t)(t % 1000000000u);
    carry = t / 1000000000u;
  }
  while(carry && b->n < BIG_LIMBS) {
    b->d[b->n++] = (uint32_t)(carry % 1000000000u);
    carry /= 1000000000u;
  }
}

/* The digits of N * 2^K into z (no leading zero, cap >= BIG_LIMBS*9+1)
** and *e10_out such that N * 2^K = z * 10^(*e10_out).  N > 0, K >= -730,
** K <= 1030. */
static void number_big_digits(uint64_t N, int K, char *z, size_t cap,
                              long *e10_out) {
  number_big b;
  size_t len = 0;
  int i;
  memset(&b, 0, sizeof(b));
  for(b.n = 0; N; N /= 1000000000u)
    b.d[b.n++] = (uint32_t)(N % 1000000000u);
  *e10_out = 0;
  if(K >= 0) {
    for(; K >= 28; K -= 28)
      number_big_mul(&b, 1u << 28);
    number_big_mul(&b, 1u << K);
  } else {
    /* N / 2^k = N * 5^k / 10^k */
    static const uint32_t pow5[14] = {
        1,     5,      25,      125,     625,      3125,      15625,
        78125, 390625, 1953125, 9765625, 48828125, 244140625, 1220703125};
    int k = -K;
    *e10_out = K;
    for(; k >= 13; k -= 13)
      number_big_mul(&b, pow5[13]);
    number_big_mul(&b, pow5[k]);
  }
  len = (size_t)snprintf(z, cap, "%u", b.d[b.n - 1]);
  for(i = b.n - 2; i >= 0 && len + 10 <= cap; i--)
    len += (size_t)snprintf(z + len, cap - len, "%09u", b.d[i]);
}

/* The text into out (cap >= 64) of N * 2^K (N > 0) rounded to 38
** significant digits, towards zero unless up; *exact when that is the
** value itself. */
static void number_round38(uint64_t N, int K, int up, char *out, size_t cap,
                           int *exact) {
  char z[BIG_LIMBS * 9 + 2];
  long e10;
  size_t len, i;
  number_big_digits(N, K, z, sizeof(z), &e10);
  len = strlen(z);
  for(; len > 1 && z[len - 1] == '0'; len--)
    e10++;
  *exact = len <= NUMBER_DIGITS;
  if(!*exact) {
    e10 += (long)(len - NUMBER_DIGITS);
    len = NUMBER_DIGITS;
    if(up) {
      /* the next 38-digit number: add one in the last place */
      for(i = len; i > 0 && z[i - 1] == '9'; i--)
        z[i - 1] = '0';
      if(i > 0) {
        z[i - 1]++;
      } else {
        memmove(z + 1, z, len);
        z[0] = '1';
        len++;
      }
      for(; len > 1 && z[len - 1] == '0'; len--)
        e10++;
    }
  }
  /* d.ddd...E<exp>, the exponent of the first digit */
  snprintf(out, cap, "%c%s%.*sE%ld", z[0], len > 1 ? "." : "", (int)len - 1,
           z + 1, e10 + (long)len - 1);
}

/* The decimals whose nearest double is d (see ddb_client.h). */
int ddb_number_double_range(double d, char *lo, int *lo_open, char *hi,
                            int *hi_open, size_t cap) {
  char low_txt[64], high_txt[64];
  int e, even, low_exact, high_exact;
  uint64_t M;
  double a = fabs(d);
  if(!isfinite(d) || cap < 64)
    return -1;
  *lo_open = *hi_open = 0;
  if(a < 1e-200) {
    /* zero, or far below DynamoDB's 1E-130: only 0 is near, and the
    ** shortest text orders right against every DynamoDB number */
    number_shortest(d == 0 ? 0.0 : d, lo, cap);
    memcpy(hi, lo, strlen(lo) + 1);
    return 0;
  }
  M = (uint64_t)ldexp(frexp(a, &e), 53); /* a = M * 2^(e-53), M >= 2^52 */
  e -= 53;
  /* ties go to the even significand: both midpoints are d's when M is
  ** even */
  even = (M & 1) == 0;
  /* the upper midpoint (2M+1) * 2^(e-1); the lower one (2M-1) * 2^(e-1),
  ** or (4M-1) * 2^(e-2) at a power of two, whose lower neighbour is
  ** closer */
  number_round38(2 * M + 1, e - 1, 0, high_txt, sizeof(high_txt), &high_exact);
  if(M == (uint64_t)1 << 52)
    number_round38(4 * M - 1, e - 2, 1, low_txt, sizeof(low_txt), &low_exact);
  else
    number_round38(2 * M - 1, e - 1, 1, low_txt, sizeof(low_txt), &low_exact);
  if(d > 0) {
    snprintf(lo, cap, "%s", low_txt);
    snprintf(hi, cap, "%s", high_txt);
    *lo_open = low_exact && !even;
    *hi_open = high_exact && !even;
  } else {
    snprintf(lo, cap, "-%s", high_txt);
    snprintf(hi, cap, "-%s", low_txt);
    *lo_open = high_exact && !even;
    *hi_open = low_exact && !even;
  }
  return 0;
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

/* Append the canonical form of s[0..n) (see ddb_client.h). */
int ddb_number_canonical(const char *s, size_t n, ddb_buf *out) {
  number_parts np;
  size_t k;
  if(number_parts_of(s, n, &np))
    return -1;
  if(np.first == np.last)
    return ddb_buf_addc(out, '0');
  if(np.neg)
    ddb_buf_addc(out, '-');
  for(k = np.first; k < np.last; k++)
    if(s[k] != '.')
      ddb_buf_addc(out, s[k]);
  return ddb_buf_addf(out, "e%ld", np.mag - (long)np.ndig);
}
