/*
** test_options.c -- the option table aOption (ext/options.c) is the one
** source: the usage comment at the top of ext/options.c and the table of
** CREATE VIRTUAL TABLE options in docs/reference.md name the same options
** with the same defaults.  Reads both files from the source tree (the
** unit tests run from the top of the tree, as `make check` runs them).
*/
#ifndef SQLITE_CORE
#define SQLITE_CORE 1
#endif
#ifndef UNITTESTS
#define UNITTESTS 1
#endif
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../ext/dd_ext.h"

#include "../../api/api_int.h"
#include "../../client/ddb_client_int.h"
#include "tap.h"

/* Options a file names at the most. */
#define OPT_MAX 64

/* One option as a file states it: its name and its default (the empty
** string: none stated). */
typedef struct opt_seen {
  char zName[64];
  char zDefault[64];
} opt_seen;

/* The whole of file zPath (malloc'd, NUL-terminated), or NULL. */
static char *opt_read(const char *zPath) {
  FILE *f = fopen(zPath, "rb");
  char *z = NULL;
  long n;
  if(!f)
    return NULL;
  if(fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
     fseek(f, 0, SEEK_SET) == 0 && (z = malloc((size_t)n + 1)) != NULL) {
    if(fread(z, 1, (size_t)n, f) != (size_t)n) {
      free(z);
      z = NULL;
    } else {
      z[n] = 0;
    }
  }
  fclose(f);
  return z;
}

/* Copy z[0..n) into zOut[nOut] (cut to fit). */
static void opt_copy(char *zOut, size_t nOut, const char *z, size_t n) {
  if(n >= nOut)
    n = nOut - 1;
  memcpy(zOut, z, n);
  zOut[n] = 0;
}

/* The options docs/reference.md's table states (its rows between the
** header "| option | default | meaning |" and the first line that is not
** a row) into a[]; returns how many, -1 when the table is not found.  A
** row may name several options (`max_rcu`, `max_wcu`).  A default is
** stated when the cell is one value, `x` or a number, alone or followed
** by " (": a cell of prose or of a chain (`AWS_REGION`, ...) states none. */
static int opt_docs(const char *zDoc, opt_seen *a) {
  const char *z = strstr(zDoc, "| option | default | meaning |");
  int n = 0;
  if(!z)
    return -1;
  z = strchr(z, '\n');
  z = z ? strchr(z + 1, '\n') : NULL; /* past |---| */
  while(z && z[1] == '|' && n < OPT_MAX) {
    const char *zRow = z + 2, *zEnd = strchr(zRow, '|');
    const char *zDef, *zDefEnd, *q;
    char zVal[64] = "";
    int n0 = n;
    if(!zEnd)
      break;
    /* the default cell */
    zDef = zEnd + 1;
    while(*zDef == ' ')
      zDef++;
    zDefEnd = strchr(zDef, '|');
    if(zDefEnd && zDef[0] == '`') {
      q = strchr(zDef + 1, '`');
      if(q && q < zDefEnd && (q[1] == ' ' || q[1] == '|') &&
         (q[1] == '|' || q[2] == '|' || q[2] == '('))
        opt_copy(zVal, sizeof(zVal), zDef + 1, (size_t)(q - zDef - 1));
    } else if(zDefEnd && isdigit((unsigned char)zDef[0])) {
      for(q = zDef; q < zDefEnd && *q != ' '; q++)
        ;
      if(q[1] == '|' || q[1] == '(')
        opt_copy(zVal, sizeof(zVal), zDef, (size_t)(q - zDef));
    }
    /* the names: each `name` of the first cell */
    for(q = zRow; q < zEnd && n < OPT_MAX;) {
      const char *b = memchr(q, '`', (size_t)(zEnd - q)), *e;
      if(!b)
        break;
      e = memchr(b + 1, '`', (size_t)(zEnd - b - 1));
      if(!e)
        break;
      opt_copy(a[n].zName, sizeof(a[n].zName), b + 1, (size_t)(e - b - 1));
      n++;
      q = e + 1;
    }
    for(; n0 < n; n0++)
      opt_copy(a[n0].zDefault, sizeof(a[n0].zDefault), zVal, strlen(zVal));
    z = strchr(z + 1, '\n');
  }
  return n;
}

/* The options the usage comment of ext/options.c states (its lines
** "**   name=VALUE ..." between "Parameters of CREATE VIRTUAL TABLE" and
** "Values may be quoted") into a[]; returns how many, -1 when the block
** is not found.  A line may name several options (max_rcu=N, max_wcu=N);
** an option's default is the "(default X" of its lines (X up to one of
** " ;:,)"). */
static int opt_usage(const char *zSrc, opt_seen *a) {
  const char *z = strstr(zSrc, "Parameters of CREATE VIRTUAL TABLE");
  const char *zStop = z ? strstr(z, "Values may be quoted") : NULL;
  int n = 0, nLine = 0; /* nLine: the options of the current line */
  if(!z || !zStop)
    return -1;
  while((z = strstr(z, "\n**")) != NULL && z < zStop) {
    const char *zLine = z + 3, *zEol = strchr(zLine, '\n'), *q;
    z = zLine;
    if(!zEol)
      break;
    if(strncmp(zLine, "   ", 3) == 0 && islower((unsigned char)zLine[3])) {
      /* an option line: name=..., name=... up to two spaces */
      nLine = 0;
      for(q = zLine + 3; q < zEol && n < OPT_MAX;) {
        const char *b = q;
        while(q < zEol && (islower((unsigned char)*q) || *q == '_'))
          q++;
        if(q == b || *q != '=')
          break;
        opt_copy(a[n].zName, sizeof(a[n].zName), b, (size_t)(q - b));
        a[n].zDefault[0] = 0;
        n++;
        nLine++;
        while(q < zEol && *q != ' ' && *q != ',')
          q++;
        if(q + 1 < zEol && q[0] == ',' && q[1] == ' ')
          q += 2; /* another name on the line */
        else
          break;
      }
    }
    /* a default on this line belongs to the options of the last name
    ** line */
    q = strstr(zLine, "(default ");
    if(q && q < zEol && nLine > 0) {
      const char *b = q + 9, *e = b;
      int i;
      while(e < zEol && !strchr(" ;:,)", *e))
        e++;
      for(i = n - nLine; i < n; i++)
        opt_copy(a[i].zDefault, sizeof(a[i].zDefault), b, (size_t)(e - b));
    }
  }
  return n;
}

/* The entry of a[0..n) named zName, or NULL. */
static const opt_seen *opt_find(const opt_seen *a, int n, const char *zName) {
  int i;
  for(i = 0; i < n; i++)
    if(strcmp(a[i].zName, zName) == 0)
      return &a[i];
  return NULL;
}

/* Do the options a[0..n) that file zWhat states match aOption: every
** name in both, and each default zWhat states equal to the table's;
** bAll: zWhat must state every default the table has. */
static void opt_compare(const char *zWhat, const opt_seen *a, int n,
                        int bAll) {
  int i;
  for(i = 0; dd_option_name(i); i++) {
    const char *zName = dd_option_name(i), *zDef = dd_option_default(i);
    const opt_seen *o = opt_find(a, n, zName);
    if(!CHECK_MSG(o != NULL, "%s does not name option %s", zWhat, zName))
      continue;
    if(o->zDefault[0] || (bAll && zDef))
      CHECK_MSG(zDef && strcmp(o->zDefault, zDef) == 0,
                "%s: default of %s is '%s', aOption's '%s'", zWhat, zName,
                o->zDefault, zDef ? zDef : "(none)");
  }
  for(i = 0; i < n; i++) {
    int k;
    for(k = 0; dd_option_name(k); k++)
      if(strcmp(dd_option_name(k), a[i].zName) == 0)
        break;
    CHECK_MSG(dd_option_name(k) != NULL,
              "%s names option %s, which aOption does not have", zWhat,
              a[i].zName);
  }
}

static void test_options_docs(void) {
  opt_seen a[OPT_MAX];
  char *z = opt_read("docs/reference.md");
  int n;
  if(!CHECK_MSG(z != NULL, "docs/reference.md unreadable (run from the top)"))
    return;
  n = opt_docs(z, a);
  CHECK_MSG(n > 10, "docs/reference.md: the option table has %d rows", n);
  opt_compare("docs/reference.md", a, n, 0);
  free(z);
}

static void test_options_usage(void) {
  opt_seen a[OPT_MAX];
  char *z = opt_read("ext/options.c");
  int n;
  if(!CHECK_MSG(z != NULL, "ext/options.c unreadable (run from the top)"))
    return;
  n = opt_usage(z, a);
  CHECK_MSG(n > 10, "ext/options.c: the usage names %d options", n);
  opt_compare("the usage of ext/options.c", a, n, 1);
  free(z);
}

/* The parsers find what they must: a row of prose states no default. */
static void test_options_parsers(void) {
  opt_seen a[OPT_MAX];
  static const char zDoc[] =
      "| option | default | meaning |\n|---|---|---|\n"
      "| `a` | `x` | one |\n| `b`, `c` | `0` (none) | two |\n"
      "| `d` | `ENV`, else none | three |\n| `e` | 60 | four |\n"
      "| `f` | | five |\n\nafter\n";
  static const char zSrc[] =
      "** Parameters of CREATE VIRTUAL TABLE\n**\n"
      "**   a=X       what (default x)\n"
      "**   b=N, c=N  more\n**             lines (default 0: none)\n"
      "**   d=URL     none\n**\n** Values may be quoted\n";
  CHECK_INT(opt_docs(zDoc, a), 6);
  CHECK_STR(a[0].zDefault, "x");
  CHECK_STR(a[1].zName, "b");
  CHECK_STR(a[2].zName, "c");
  CHECK_STR(a[2].zDefault, "0");
  CHECK_STR(a[3].zDefault, "");
  CHECK_STR(a[4].zDefault, "60");
  CHECK_STR(a[5].zDefault, "");
  CHECK_INT(opt_usage(zSrc, a), 4);
  CHECK_STR(a[0].zDefault, "x");
  CHECK_STR(a[2].zName, "c");
  CHECK_STR(a[2].zDefault, "0");
  CHECK_STR(a[3].zDefault, "");
}

/* The SQL options args[0..n) applied to *p (zeroed first) as xConnect
** applies them.  Returns an SQLite code. */
static int opt_sql(const char *const *args, int n, dd_vtab *p) {
  const char *argv[8] = {"dynamodb", "main", "t"};
  dd_opts v;
  char *zErr = NULL;
  int i, rc;
  for(i = 0; i < n && i < 5; i++)
    argv[3 + i] = args[i];
  memset(&v, 0, sizeof(v));
  memset(p, 0, sizeof(*p));
  rc = dd_parse_args(3 + n, argv, &v, &zErr);
  if(rc == SQLITE_OK)
    rc = dd_options(p, &v, &zErr);
  if(zErr)
    tap_diag("  %s", zErr);
  sqlite3_free(zErr);
  dd_opts_free(&v);
  return rc;
}

/* The retries a client made of cfg (region and endpoint set) does. */
static int opt_retries(ddb_config *cfg) {
  ddb_client *dc = NULL;
  ddb_error e;
  int n = -100;
  cfg->region = "eu-west-1";
  cfg->endpoint = "http://127.0.0.1:1";
  ddb_error_clear(&e);
  if(ddb_client_new(cfg, &dc, &e) == DDB_OK)
    n = ddb_client_max_retries(dc);
  ddb_client_free(dc);
  return n;
}

/* The dyn_client of o: its item and query TTLs and its retries into
** a[0..3), or -1 each when it cannot be made. */
static void opt_api(dyn_options *o, double a[3]) {
  dyn_client *c = NULL;
  dyn_error err;
  a[0] = a[1] = a[2] = -1;
  o->region = "eu-west-1";
  o->endpoint = "http://127.0.0.1:1";
  if(dyn_client_new(o, &c, &err) == DYN_OK) {
    a[0] = c->pol.item_ttl;
    a[1] = c->pol.query_ttl;
    a[2] = ddb_client_max_retries(c->ddb);
  } else {
    tap_diag("  dyn_client_new: %s", err.message);
  }
  dyn_client_free(c);
}

/* item_ttl=0, query_ttl=0 and max_retries=0 mean the same in SQL and in
** the C API (off, no retry), and so do their defaults; the ranges are
** client/'s for both. */
static void test_options_agree(void) {
  static const char *const azZero[] = {"item_ttl=0", "query_ttl=0",
                                       "max_retries=0"};
  static const char *const azMax[] = {"item_ttl=31536000", "max_retries=100"};
  static const char *const azBad[] = {"max_retries=101"};
  static const char *const azBad2[] = {"item_ttl=31536001"};
  dd_vtab *p = sqlite3_malloc64(sizeof(dd_vtab));
  dyn_options o;
  double a[3];
  const char *zKey = getenv("AWS_ACCESS_KEY_ID");
  const char *zSecret = getenv("AWS_SECRET_ACCESS_KEY");
  char *zKeySaved = zKey ? strdup(zKey) : NULL;
  char *zSecretSaved = zSecret ? strdup(zSecret) : NULL;
  if(!CHECK(p != NULL))
    return;
  setenv("AWS_ACCESS_KEY_ID", "AKIDTEST", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);

  /* 0: off in both */
  CHECK_INT(opt_sql(azZero, 3, p), SQLITE_OK);
  dyn_options_init(&o);
  o.item_ttl = 0;
  o.query_ttl = 0;
  o.max_retries = 0;
  opt_api(&o, a);
  CHECK_INT(p->pol.item_ttl * 10, 0);
  CHECK_INT(a[0] * 10, p->pol.item_ttl * 10);
  CHECK_INT(a[1] * 10, p->pol.query_ttl * 10);
  CHECK_INT(a[2], opt_retries(&p->cfg));
  CHECK_INT(a[2], 0);

  /* not given, DYN_DEFAULT (dyn_options_init, or no options): the same
  ** defaults */
  CHECK_INT(opt_sql(NULL, 0, p), SQLITE_OK);
  dyn_options_init(&o);
  opt_api(&o, a);
  CHECK_INT(a[0] * 10, p->pol.item_ttl * 10);
  CHECK_INT(a[0], DDB_DEFAULT_TTL);
  CHECK_INT(a[1] * 10, p->pol.query_ttl * 10);
  CHECK_INT(a[2], opt_retries(&p->cfg));
  CHECK_INT(a[2], DDB_DEFAULT_MAX_RETRIES);

  /* the largest values, and one beyond, alike */
  CHECK_INT(opt_sql(azMax, 2, p), SQLITE_OK);
  dyn_options_init(&o);
  o.item_ttl = DDB_MAX_TTL;
  o.max_retries = DDB_MAX_RETRIES;
  opt_api(&o, a);
  CHECK_INT(a[0], p->pol.item_ttl);
  CHECK_INT(a[2], opt_retries(&p->cfg));
  CHECK_INT(opt_sql(azBad, 1, p), SQLITE_ERROR);
  CHECK_INT(opt_sql(azBad2, 1, p), SQLITE_ERROR);
  o.max_retries = DDB_MAX_RETRIES + 1;
  opt_api(&o, a);
  CHECK_INT(a[2], -1);
  o.max_retries = 0;
  o.item_ttl = DDB_MAX_TTL + 1;
  opt_api(&o, a);
  CHECK_INT(a[0], -1);

  if(zKeySaved)
    setenv("AWS_ACCESS_KEY_ID", zKeySaved, 1);
  else
    unsetenv("AWS_ACCESS_KEY_ID");
  if(zSecretSaved)
    setenv("AWS_SECRET_ACCESS_KEY", zSecretSaved, 1);
  else
    unsetenv("AWS_SECRET_ACCESS_KEY");
  free(zKeySaved);
  free(zSecretSaved);
  sqlite3_free(p);
}

const tap_test tap_options_tests[] = {
    {"options: item_ttl=0, max_retries=0 mean the same in SQL and C",
     test_options_agree},
    {"options: the parsers of the docs' and the usage's tables",
     test_options_parsers},
    {"options: docs/reference.md states aOption's names and defaults",
     test_options_docs},
    {"options: the usage of options.c states aOption's names and defaults",
     test_options_usage},
    {NULL, NULL},
};
