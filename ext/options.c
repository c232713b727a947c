/*
** options.c -- the parameters of CREATE VIRTUAL TABLE ... USING
** dynamodb(...): parsing them and applying them to a dd_vtab.
*/
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "dd_ext.h"

/* ------------------------------------------------------------------------
** Argument parsing
**
** Parameters of CREATE VIRTUAL TABLE ... USING dynamodb(...):
**
**   table=NAME          DynamoDB table (default: the virtual table's name),
**                       or its ARN, arn:aws:dynamodb:REGION:ACCOUNT:table/
**                       NAME (another account's table; REGION is the
**                       table's unless region= is given, and must agree)
**   region=REGION       default: AWS_REGION, AWS_DEFAULT_REGION, config file
**   endpoint=URL        default: AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL,
**                       https://dynamodb.<region>.amazonaws.com
**   profile=NAME        profile of the shared credentials/config files
**   scan=allow|deny     deny: a statement that needs a full Scan fails
**                       (default allow)
**   consistent_read=BOOL  ConsistentRead on every read (default false)
**   timeout=SECONDS     a whole request, retries excluded (default 60)
**   max_retries=N       retries of throttling and 5xx (default 10)
**   item_ttl=SECONDS    life of an item-cache entry (default 300; 0: off)
**   query_ttl=SECONDS   life of a query-cache entry (default 300; 0: off)
**   segments=N|auto     a full Scan runs as N parallel segments, 1..64
**                       (default auto: 8, or one per 8 MiB of the table's
**                       size as DescribeTable reports it when that is
**                       more, at most 16; a known size is split finer,
**                       about one TotalSegments per MiB, 1 to 4 per
**                       worker: dd_auto_segments, dd_auto_units)
**   segment=I/N         scan only slice I (0-based) of N: for splitting
**                       one table's Scan over processes or machines
**   progress=BOOL       a progress line on stderr for statements that run
**                       over 2 s, when stderr is a terminal (default on)
**   ca_bundle=FILE      PEM file of the CAs to trust for https (default:
**                       AWS_CA_BUNDLE, ca_bundle of the profile, the
**                       system's); certificates are always verified
**   columns='a, b N, c B'  more columns, one per named attribute, of type
**                       S (TEXT, the default), N (NUMERIC) or B (BLOB); an
**                       item whose attribute has another type shows NULL
**   split_transactions=BOOL  a COMMIT (or a statement) of more than 100
**                       items goes as several calls, not atomic
**                       (default true); false: it fails and writes nothing
**   write_calls=N       calls of such a write in flight at once, 1..64
**                       (default 8)
**   shared_cache=URL    a shared tier behind the process's cache:
**                       redis[s]://[user@]host[:port][/db] (default:
**                       DYNAMODB_SHARED_CACHE; off: none); no password
**                       here (DYNAMODB_SHARED_CACHE_PASSWORD goes only to
**                       the Redis DYNAMODB_SHARED_CACHE names)
**   shared_cache_timeout=SECONDS  bound of a connect and of each command
**                       to it, 0.001 to 1 (default 0.02)
**   max_requests=N      a statement that would send more than N requests
**                       fails, naming cheaper forms (default 0: no limit)
**   ttl=show|hide       hide: leave out items whose TTL attribute (from
**                       DescribeTimeToLive) is in the past (default show)
**   max_rcu=N, max_wcu=N  capacity units a second this table's reads
**                       (writes) may spend, across the process's segments,
**                       threads and connections (default 0: no limit)
**   coherence=ttl|streams  streams: a background reader follows the
**                       table's DynamoDB Stream and retires what other
**                       writers change (default ttl: entries live their TTL)
**   max_staleness=SECONDS  with coherence=streams, a read goes to DynamoDB
**                       while the reader lags more (default 0: no bound)
**
** Values may be quoted with ' or ".  BOOL is yes/no, on/off, true/false,
** 1/0.  An unknown or repeated parameter is an error.
*/
/* What an option's value is, and so how it is checked and applied. */
enum {
  DD_OPT_TEXT,     /* any text, kept as given */
  DD_OPT_SCAN,     /* allow or deny: int, 1 for deny */
  DD_OPT_BOOL,     /* BOOL (dd_bool): int */
  DD_OPT_TIMEOUT,  /* seconds > 0, at least 0.001: double */
  DD_OPT_RETRIES,  /* 0 to DDB_MAX_RETRIES (ddb_option_retries): int */
  DD_OPT_TTL,      /* seconds, 0 to DDB_MAX_TTL (ddb_option_ttl): double */
  DD_OPT_SEGMENTS, /* auto (0) or 1 to 64: int */
  DD_OPT_SEGMENT,  /* I/N with 0 <= I < N: iSlice, nSlice */
  DD_OPT_CALLS,    /* an integer from 1 to 64: int */
  DD_OPT_COUNT,    /* an integer from 0 to DD_MAX_COUNT: long long */
  DD_OPT_TTLMODE,  /* show or hide: int, 1 for hide */
  DD_OPT_RATE,     /* units a second from 0 to DD_MAX_RATE: double */
  DD_OPT_COHERENCE /* ttl or streams: int, 1 for streams */
};
/* The largest shared_cache_timeout: a wait on Redis does not see an
** interrupt, and a database file can name the Redis (docs/trust-model.md),
** so no wait on it may last longer than an interrupt takes elsewhere. */
#define DD_SHARED_TIMEOUT_MAX 1
/* The largest max_requests, and the largest max_rcu / max_wcu. */
#define DD_MAX_COUNT 1000000000
#define DD_MAX_RATE  1000000

#define DD_STR_(x) #x
#define DD_STR(x)  DD_STR_(x)

/* The options, in the order dd_options checks them (the first bad one is
** the one reported): the one table of them, which the usage above and
** docs/reference.md ("Options") follow (tests/unit/test_options.c checks
** their names and defaults against it).  iVal: its slot in dd_opts;
** iDst: the dd_vtab field it sets (not for TEXT and SEGMENT); zDefault:
** its default as the docs state it, applied when the option is not given
** (for TIMEOUT the client's or the shared tier's own, which they apply to
** the 0 left here), NULL when its absence means something of its own (the
** vtab's name, the environment's, none); zExpect: what a bad value's
** message says is expected. */
static const struct dd_option {
  const char *zName;
  size_t iVal;
  int eKind;
  size_t iDst;
  const char *zDefault;
  const char *zExpect;
} aOption[] = {
    {"table", offsetof(dd_opts, zTable), DD_OPT_TEXT, 0, NULL, NULL},
    {"region", offsetof(dd_opts, zRegion), DD_OPT_TEXT, 0, NULL, NULL},
    {"endpoint", offsetof(dd_opts, zEndpoint), DD_OPT_TEXT, 0, NULL, NULL},
    {"profile", offsetof(dd_opts, zProfile), DD_OPT_TEXT, 0, NULL, NULL},
    {"ca_bundle", offsetof(dd_opts, zCaBundle), DD_OPT_TEXT, 0, NULL, NULL},
    {"columns", offsetof(dd_opts, zColumns), DD_OPT_TEXT, 0, NULL, NULL},
    {"scan", offsetof(dd_opts, zScan), DD_OPT_SCAN,
     offsetof(dd_vtab, bScanDeny), "allow", "expected allow or deny"},
    {"consistent_read", offsetof(dd_opts, zConsistent), DD_OPT_BOOL,
     offsetof(dd_vtab, pol.consistent), "false", "expected true or false"},
    {"timeout", offsetof(dd_opts, zTimeout), DD_OPT_TIMEOUT,
     offsetof(dd_vtab, cfg.timeout), "60", "expected seconds > 0"},
    {"max_retries", offsetof(dd_opts, zMaxRetries), DD_OPT_RETRIES,
     offsetof(dd_vtab, cfg.max_retries), DD_STR(DDB_DEFAULT_MAX_RETRIES),
     "expected an integer from 0 to " DD_STR(DDB_MAX_RETRIES)},
    {"item_ttl", offsetof(dd_opts, zItemTtl), DD_OPT_TTL,
     offsetof(dd_vtab, pol.item_ttl), DD_STR(DDB_DEFAULT_TTL),
     "expected seconds from 0 to " DD_STR(DDB_MAX_TTL)},
    {"query_ttl", offsetof(dd_opts, zQueryTtl), DD_OPT_TTL,
     offsetof(dd_vtab, pol.query_ttl), DD_STR(DDB_DEFAULT_TTL),
     "expected seconds from 0 to " DD_STR(DDB_MAX_TTL)},
    {"progress", offsetof(dd_opts, zProgress), DD_OPT_BOOL,
     offsetof(dd_vtab, bProgress), "on", "expected on or off"},
    {"segments", offsetof(dd_opts, zSegments), DD_OPT_SEGMENTS,
     offsetof(dd_vtab, nSegments), "auto", "expected auto or 1 to 64"},
    {"segment", offsetof(dd_opts, zSegment), DD_OPT_SEGMENT, 0, NULL,
     "expected I/N with 0 <= I < N"},
    {"split_transactions", offsetof(dd_opts, zSplit), DD_OPT_BOOL,
     offsetof(dd_vtab, bSplit), "true", "expected true or false"},
    {"shared_cache", offsetof(dd_opts, zSharedCache), DD_OPT_TEXT, 0, NULL,
     NULL},
    {"shared_cache_timeout", offsetof(dd_opts, zSharedTimeout), DD_OPT_TIMEOUT,
     offsetof(dd_vtab, rSharedTimeout), "0.02",
     "expected seconds from 0.001 to " DD_STR(DD_SHARED_TIMEOUT_MAX)},
    {"write_calls", offsetof(dd_opts, zWriteCalls), DD_OPT_CALLS,
     offsetof(dd_vtab, nWriteCalls), DD_STR(DD_WRITE_CALLS),
     "expected an integer from 1 to 64"},
    {"max_requests", offsetof(dd_opts, zMaxRequests), DD_OPT_COUNT,
     offsetof(dd_vtab, cfg.max_requests), "0",
     "expected an integer from 0 to " DD_STR(DD_MAX_COUNT)},
    {"ttl", offsetof(dd_opts, zTtl), DD_OPT_TTLMODE,
     offsetof(dd_vtab, bTtlHide), "show", "expected show or hide"},
    {"max_rcu", offsetof(dd_opts, zMaxRcu), DD_OPT_RATE,
     offsetof(dd_vtab, cfg.max_rcu), "0",
     "expected units a second from 0 to " DD_STR(DD_MAX_RATE)},
    {"max_wcu", offsetof(dd_opts, zMaxWcu), DD_OPT_RATE,
     offsetof(dd_vtab, cfg.max_wcu), "0",
     "expected units a second from 0 to " DD_STR(DD_MAX_RATE)},
    {"coherence", offsetof(dd_opts, zCoherence), DD_OPT_COHERENCE,
     offsetof(dd_vtab, pol.streams), "ttl", "expected ttl or streams"},
    {"max_staleness", offsetof(dd_opts, zStaleness), DD_OPT_TTL,
     offsetof(dd_vtab, pol.max_staleness), "0",
     "expected seconds from 0 to " DD_STR(DDB_MAX_TTL)},
};
#define DD_NOPTION (int)(sizeof(aOption) / sizeof(aOption[0]))

/* See dd_ext.h. */
const char *dd_option_name(int i) {
  return i >= 0 && i < DD_NOPTION ? aOption[i].zName : NULL;
}

/* See dd_ext.h. */
const char *dd_option_default(int i) {
  return i >= 0 && i < DD_NOPTION ? aOption[i].zDefault : NULL;
}

/* The slot of option o in v. */
static char **dd_opt_slot(dd_opts *v, const struct dd_option *o) {
  return (char **)((char *)v + o->iVal);
}

/* The one way an option error is reported: *pzErr set to DD_PREFIX and
** the printf-style message (sqlite3_free; NULL when out of memory).
** Returns SQLITE_ERROR. */
static int dd_opt_error(char **pzErr, const char *zFmt, ...) {
  va_list ap;
  char *z;
  va_start(ap, zFmt);
  z = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  *pzErr = z ? sqlite3_mprintf(DD_PREFIX "%s", z) : NULL;
  sqlite3_free(z);
  return SQLITE_ERROR;
}

/* See dd_ext.h. */
void dd_opts_free(dd_opts *v) {
  int k;
  for(k = 0; k < DD_NOPTION; k++) {
    char **pz = dd_opt_slot(v, &aOption[k]);
    sqlite3_free(*pz);
    *pz = NULL;
  }
}

/* Strip leading/trailing white space and one level of quotes.  Returns a
** new string (sqlite3_free) or NULL on OOM. */
char *dd_dequote(const char *z, int n) {
  char *zOut;
  int i, j;
  while(n > 0 && (z[0] == ' ' || z[0] == '\t' || z[0] == '\n')) {
    z++;
    n--;
  }
  while(n > 0 && (z[n - 1] == ' ' || z[n - 1] == '\t' || z[n - 1] == '\n'))
    n--;
  zOut = sqlite3_malloc64((sqlite3_uint64)n + 1);
  if(!zOut)
    return NULL;
  if(n >= 2 && (z[0] == '\'' || z[0] == '"') && z[n - 1] == z[0]) {
    char q = z[0];
    for(i = 1, j = 0; i < n - 1; i++) {
      zOut[j++] = z[i];
      if(z[i] == q && i + 1 < n - 1 && z[i + 1] == q)
        i++;
    }
    zOut[j] = 0;
  } else {
    memcpy(zOut, z, (size_t)n);
    zOut[n] = 0;
  }
  return zOut;
}

/* Parse a boolean: 1 true, 0 false, -1 not a boolean. */
UNITTEST int dd_bool(const char *z) {
  static const char *const azTrue[] = {"1", "yes", "on", "true"};
  static const char *const azFalse[] = {"0", "no", "off", "false"};
  int i;
  for(i = 0; i < 4; i++) {
    if(sqlite3_stricmp(z, azTrue[i]) == 0)
      return 1;
    if(sqlite3_stricmp(z, azFalse[i]) == 0)
      return 0;
  }
  return -1;
}

/* Parse a non-negative decimal number of seconds (or a count). */
int dd_number(const char *z, double *pOut) {
  char *zEnd;
  double d;
  /* a plain decimal: no sign, leading space, hex, inf or nan */
  if(!((z[0] >= '0' && z[0] <= '9') || z[0] == '.') || strpbrk(z, "xX"))
    return -1;
  d = strtod(z, &zEnd);
  if(*zEnd || !(d >= 0) || isinf(d))
    return -1;
  *pOut = d;
  return 0;
}

/* Does option name zKey look like it holds a secret (a secret key, a
** session token, a password)?  Such an option is refused: SQLite keeps
** the arguments of CREATE VIRTUAL TABLE in plain text in the database
** file.  The value is never looked at, and never echoed. */
static int dd_secret_option(const char *zKey) {
  static const char *const azWord[] = {"secret",     "token",      "password",
                                       "passwd",     "access_key", "accesskey",
                                       "access-key", "credential", "session"};
  char zLow[64];
  size_t i, n = strlen(zKey);
  if(n >= sizeof(zLow))
    n = sizeof(zLow) - 1;
  for(i = 0; i < n; i++)
    zLow[i] =
        (char)((zKey[i] >= 'A' && zKey[i] <= 'Z') ? zKey[i] + 32 : zKey[i]);
  zLow[n] = 0;
  for(i = 0; i < sizeof(azWord) / sizeof(azWord[0]); i++)
    if(strstr(zLow, azWord[i]))
      return 1;
  return 0;
}

/* See dd_ext.h. */
int dd_parse_args(int argc, const char *const *argv, dd_opts *pVal,
                  char **pzErr) {
  int i, k;
  for(i = 3; i < argc; i++) {
    const char *z = argv[i];
    const char *zEq = strchr(z, '=');
    char *zKey, **pz;
    if(!zEq)
      return dd_opt_error(pzErr, "bad argument '%s': expected key=value", z);
    zKey = dd_dequote(z, (int)(zEq - z));
    if(!zKey)
      return SQLITE_NOMEM;
    for(k = 0; k < DD_NOPTION; k++)
      if(sqlite3_stricmp(zKey, aOption[k].zName) == 0)
        break;
    if(k == DD_NOPTION && dd_secret_option(zKey)) {
      dd_opt_error(pzErr,
                   "option '%s' refused: CREATE VIRTUAL TABLE arguments are "
                   "stored in plain text in the database file; credentials "
                   "come from the environment, the shared files (profile=), "
                   "credential_process, container or instance metadata",
                   zKey);
      sqlite3_free(zKey);
      return SQLITE_ERROR;
    }
    if(k == DD_NOPTION) {
      dd_opt_error(pzErr, "unknown option '%s'", zKey);
      sqlite3_free(zKey);
      return SQLITE_ERROR;
    }
    pz = dd_opt_slot(pVal, &aOption[k]);
    if(*pz) {
      dd_opt_error(pzErr, "option '%s' given twice", zKey);
      sqlite3_free(zKey);
      return SQLITE_ERROR;
    }
    sqlite3_free(zKey);
    *pz = dd_dequote(zEq + 1, (int)strlen(zEq + 1));
    if(!*pz)
      return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

/* Is z a whole number from lo to hi (plain decimal, dd_number)?  Returns
** 0 with *pOut set, or -1 (*pOut untouched). */
static int dd_opt_int(const char *z, double lo, double hi, double *pOut) {
  double d;
  if(dd_number(z, &d) || d != floor(d) || d < lo || d > hi)
    return -1;
  *pOut = d;
  return 0;
}

/* One of two words: 0 for zNo, 1 for zYes (without case), -1 for any
** other z. */
static int dd_opt_word(const char *z, const char *zNo, const char *zYes) {
  if(sqlite3_stricmp(z, zNo) == 0)
    return 0;
  return sqlite3_stricmp(z, zYes) == 0 ? 1 : -1;
}

/* Parse z as a value of option kind eKind (not TEXT, TIMEOUT, SEGMENT) into
** pDst, an int, a long long or a double by kind (the comments of DD_OPT_*).
** Returns 0, or -1 when z is not such a value (pDst may be changed). */
static int dd_opt_value(int eKind, const char *z, void *pDst) {
  int *pInt = pDst;
  long long *pLong = pDst;
  double *pReal = pDst;
  double d = 0;
  switch(eKind) {
  case DD_OPT_SCAN: return (*pInt = dd_opt_word(z, "allow", "deny")) < 0;
  case DD_OPT_TTLMODE: return (*pInt = dd_opt_word(z, "show", "hide")) < 0;
  case DD_OPT_COHERENCE: return (*pInt = dd_opt_word(z, "ttl", "streams")) < 0;
  case DD_OPT_BOOL: return (*pInt = dd_bool(z)) < 0 ? -1 : 0;
  case DD_OPT_RETRIES: /* the range is client/'s, the C API's too */
    return dd_number(z, &d) || ddb_option_retries(d, pInt) ? -1 : 0;
  case DD_OPT_TTL:
    return dd_number(z, &d) || ddb_option_ttl(d, pReal) ? -1 : 0;
  case DD_OPT_SEGMENTS: /* auto: 0, sized by dd_init */
    if(sqlite3_stricmp(z, "auto") != 0 && dd_opt_int(z, 1, 64, &d))
      return -1;
    *pInt = (int)d;
    return 0;
  case DD_OPT_CALLS:
    if(dd_opt_int(z, 1, 64, &d))
      return -1;
    *pInt = (int)d;
    return 0;
  case DD_OPT_COUNT:
    if(dd_opt_int(z, 0, DD_MAX_COUNT, &d))
      return -1;
    *pLong = (long long)d;
    return 0;
  case DD_OPT_RATE:
    return dd_number(z, pReal) || *pReal > DD_MAX_RATE ? -1 : 0;
  default: return -1;
  }
}

/* timeout=, shared_cache_timeout=: seconds z > 0, at least 0.001 (and for
** shared_cache_timeout at most DD_SHARED_TIMEOUT_MAX), into *pReal.
** Returns SQLITE_OK, or SQLITE_ERROR with *pzErr set. */
static int dd_opt_timeout(const struct dd_option *o, const char *z,
                          double *pReal, char **pzErr) {
  double d;
  if(dd_number(z, &d) || d <= 0)
    return dd_opt_error(pzErr, "bad value for %s: '%s' (%s)", o->zName, z,
                        o->zExpect);
  if(d < 0.001) /* curl counts milliseconds, and its 0 means none */
    return dd_opt_error(
        pzErr, "bad value for %s: '%s' (at least 0.001 seconds)", o->zName, z);
  if(o->iDst == offsetof(dd_vtab, rSharedTimeout) && d > DD_SHARED_TIMEOUT_MAX)
    return dd_opt_error(pzErr,
                        "bad value for %s: '%s' (%s: a wait on Redis "
                        "is not interrupted)",
                        o->zName, z, o->zExpect);
  *pReal = d;
  return SQLITE_OK;
}

/* segment=I/N into p->iSlice, p->nSlice (v: every option, for the clash
** with segments=).  Returns SQLITE_OK, or SQLITE_ERROR with *pzErr set. */
static int dd_opt_segment(dd_vtab *p, const struct dd_option *o, const char *z,
                          const dd_opts *v, char **pzErr) {
  char *zEnd;
  long i1, n1 = -1;
  i1 = strtol(z, &zEnd, 10);
  if(zEnd != z && *zEnd == '/')
    n1 = strtol(zEnd + 1, &zEnd, 10);
  if(*zEnd || n1 < 1 || n1 > 1000000 || i1 < 0 || i1 >= n1 || z[0] < '0' ||
     z[0] > '9')
    return dd_opt_error(pzErr, "bad value for %s: '%s' (%s)", o->zName, z,
                        o->zExpect);
  if(v->zSegments)
    return dd_opt_error(pzErr, "segment= and segments= exclude each other");
  p->iSlice = (int)i1;
  p->nSlice = (int)n1;
  return SQLITE_OK;
}

/* Check option o's value zGiven (NULL: not given, then its zDefault
** applies) and set what it sets in p.  Returns SQLITE_OK, or SQLITE_ERROR
** with *pzErr set (dd_opt_error). */
static int dd_option_apply(dd_vtab *p, const struct dd_option *o,
                           const char *zGiven, const dd_opts *v,
                           char **pzErr) {
  void *pDst = (char *)p + o->iDst;
  const char *z = zGiven ? zGiven : o->zDefault;
  switch(o->eKind) {
  case DD_OPT_TEXT: return SQLITE_OK; /* taken by dd_options */
  case DD_OPT_TIMEOUT:
    return zGiven ? dd_opt_timeout(o, zGiven, pDst, pzErr) : SQLITE_OK;
  case DD_OPT_SEGMENT:
    return zGiven ? dd_opt_segment(p, o, zGiven, v, pzErr) : SQLITE_OK;
  default:
    if(dd_opt_value(o->eKind, z, pDst) == 0)
      return SQLITE_OK;
    return dd_opt_error(pzErr, "bad value for %s: '%s' (%s)", o->zName, z,
                        o->zExpect);
  }
}

/* Does the redis URL z carry a password (user:password@ or :password@)?
** It must not: CREATE VIRTUAL TABLE arguments are stored in plain text
** in the database file. */
static int dd_url_has_password(const char *z) {
  const char *zHost = strstr(z, "://");
  const char *zAt = NULL, *q;
  if(!zHost)
    return 0;
  zHost += 3;
  for(q = zHost; *q && *q != '/'; q++)
    if(*q == '@')
      zAt = q;
  return zAt && memchr(zHost, ':', (size_t)(zAt - zHost)) != NULL;
}

/* The shared tier of shared_cache= (or of DYNAMODB_SHARED_CACHE when the
** option is not given) into p->pol.shared.  Returns SQLITE_OK, or
** SQLITE_ERROR with *pzErr set. */
static int dd_shared_apply(dd_vtab *p, const dd_opts *v, char **pzErr) {
  ddb_error err;
  if(v->zSharedCache && dd_url_has_password(v->zSharedCache))
    return dd_opt_error(pzErr,
                        "shared_cache must not hold a password: CREATE "
                        "VIRTUAL TABLE arguments are stored in plain text "
                        "in the database file; set "
                        "DYNAMODB_SHARED_CACHE_PASSWORD (or the whole URL "
                        "in DYNAMODB_SHARED_CACHE)");
  ddb_error_clear(&err);
  if(ddbc_shared_open(v->zSharedCache, p->rSharedTimeout, &p->pol.shared,
                      &err))
    return dd_opt_error(pzErr, "%s", err.message);
  return SQLITE_OK;
}

/* table=ARN: the ARN checked (a malformed one is an error), and its
** region the table's unless region= is given, which must then be the
** same (p->zRegion, p->cfg.region).  A table's ARN goes to DynamoDB as it
** is: a name would name the caller's own table of that name, not the
** other account's the ARN names.  Returns SQLITE_OK, SQLITE_NOMEM, or
** SQLITE_ERROR with *pzErr set. */
static int dd_table_arn(dd_vtab *p, const dd_opts *v, char **pzErr) {
  ddb_arn a;
  ddb_error err;
  if(!v->zTable || !ddb_arn_is(v->zTable))
    return SQLITE_OK;
  ddb_error_clear(&err);
  if(ddb_arn_parse(v->zTable, 0, &a, &err))
    return dd_opt_error(pzErr, "bad value for table: %s", err.message);
  if(p->zRegion && strcmp(p->zRegion, a.region) != 0)
    return dd_opt_error(pzErr,
                        "table= is in region '%s' (its ARN) but region='%s': "
                        "drop region= or make them agree",
                        a.region, p->zRegion);
  if(!p->zRegion) {
    p->zRegion = sqlite3_mprintf("%s", a.region);
    if(!p->zRegion)
      return SQLITE_NOMEM;
    p->cfg.region = p->zRegion;
  }
  return SQLITE_OK;
}

/* See dd_ext.h. */
int dd_options(dd_vtab *p, dd_opts *v, char **pzErr) {
  int k, rc;
  p->zRegion = v->zRegion;
  p->zEndpoint = v->zEndpoint;
  p->zProfile = v->zProfile;
  p->zCaBundle = v->zCaBundle;
  v->zRegion = v->zEndpoint = v->zProfile = v->zCaBundle = NULL;
  p->cfg.region = p->zRegion;
  p->cfg.endpoint = p->zEndpoint;
  p->cfg.profile = p->zProfile;
  p->cfg.ca_bundle = p->zCaBundle;
  rc = dd_table_arn(p, v, pzErr);
  if(rc)
    return rc;
  for(k = 0; k < DD_NOPTION; k++) {
    const struct dd_option *o = &aOption[k];
    rc = dd_option_apply(p, o, *dd_opt_slot(v, o), v, pzErr);
    if(rc)
      return rc;
  }
  return dd_shared_apply(p, v, pzErr);
}
