/*
** options.c -- the parameters of CREATE VIRTUAL TABLE ... USING
** dynamodb(...): parsing them and applying them to a dd_vtab.
*/
#include <math.h>
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
**   table=NAME          DynamoDB table (default: the virtual table's name)
**   region=REGION       default: AWS_REGION, AWS_DEFAULT_REGION, config file
**   endpoint=URL        default: AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL,
**                       https://dynamodb.<region>.amazonaws.com
**   profile=NAME        profile of the shared credentials/config files
**   scan=allow|deny     deny: a statement that needs a full Scan fails
**   consistent_read=BOOL  ConsistentRead on every read (default false)
**   timeout=SECONDS     a whole request, retries excluded (default 60)
**   max_retries=N       retries of throttling and 5xx (default 10)
**   item_ttl=SECONDS    life of an item-cache entry (default 300; 0: off)
**   query_ttl=SECONDS   life of a query-cache entry (default 300; 0: off)
**   segments=N|auto     a full Scan runs as N parallel segments (1..64;
**                       auto, the default: one per 8 MiB of the table's
**                       size as DescribeTable reports it, at most 16)
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
**   split_transactions=BOOL  a COMMIT of more than 100 items goes as
**                       BatchWriteItem calls, not atomic (default true);
**                       false: such a COMMIT fails and writes nothing
**
** Values may be quoted with ' or ".  BOOL is yes/no, on/off, true/false,
** 1/0.  An unknown or repeated parameter is an error.
*/
static const char *const azParam[] = {
    "table",              /* 0 */
    "region",             /* 1 */
    "endpoint",           /* 2 */
    "profile",            /* 3 */
    "scan",               /* 4 */
    "consistent_read",    /* 5 */
    "timeout",            /* 6 */
    "max_retries",        /* 7 */
    "item_ttl",           /* 8 */
    "query_ttl",          /* 9 */
    "split_transactions", /* 10 */
    "segments",           /* 11 */
    "segment",            /* 12 */
    "progress",           /* 13 */
    "ca_bundle",          /* 14 */
    "columns",            /* 15 */
};
_Static_assert(sizeof(azParam) / sizeof(azParam[0]) == DD_NPARAM,
               "DD_NPARAM (dd_ext.h) counts azParam");

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

/* Split argv[3..] into azVal[] by parameter.  Returns SQLITE_OK, or an
** error with *pzErr set. */
int dd_parse_args(int argc, const char *const *argv, char *azVal[DD_NPARAM],
                  char **pzErr) {
  int i, k;
  for(i = 3; i < argc; i++) {
    const char *z = argv[i];
    const char *zEq = strchr(z, '=');
    char *zKey;
    if(!zEq) {
      *pzErr = sqlite3_mprintf(DD_PREFIX "bad argument '%s': expected "
                                         "key=value",
                               z);
      return SQLITE_ERROR;
    }
    zKey = dd_dequote(z, (int)(zEq - z));
    if(!zKey)
      return SQLITE_NOMEM;
    for(k = 0; k < DD_NPARAM; k++)
      if(sqlite3_stricmp(zKey, azParam[k]) == 0)
        break;
    if(k == DD_NPARAM && dd_secret_option(zKey)) {
      *pzErr = sqlite3_mprintf(
          DD_PREFIX "option '%s' refused: CREATE VIRTUAL TABLE arguments are "
                    "stored in plain text in the database file; credentials "
                    "come from the environment, the shared files (profile=), "
                    "credential_process, container or instance metadata",
          zKey);
      sqlite3_free(zKey);
      return SQLITE_ERROR;
    }
    if(k == DD_NPARAM) {
      *pzErr = sqlite3_mprintf(DD_PREFIX "unknown option '%s'", zKey);
      sqlite3_free(zKey);
      return SQLITE_ERROR;
    }
    if(azVal[k]) {
      *pzErr = sqlite3_mprintf(DD_PREFIX "option '%s' given twice", zKey);
      sqlite3_free(zKey);
      return SQLITE_ERROR;
    }
    sqlite3_free(zKey);
    azVal[k] = dd_dequote(zEq + 1, (int)strlen(zEq + 1));
    if(!azVal[k])
      return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}
/* Apply the options azVal[] to p (taking the strings the client needs
** from azVal).  Returns SQLITE_OK, or SQLITE_ERROR with *pzErr set. */
int dd_options(dd_vtab *p, char *azVal[DD_NPARAM], char **pzErr) {
  double d;
  int i;
  p->zRegion = azVal[1];
  p->zEndpoint = azVal[2];
  p->zProfile = azVal[3];
  p->zCaBundle = azVal[14];
  azVal[1] = azVal[2] = azVal[3] = azVal[14] = NULL;
  p->cfg.region = p->zRegion;
  p->cfg.endpoint = p->zEndpoint;
  p->cfg.profile = p->zProfile;
  p->cfg.ca_bundle = p->zCaBundle;
  p->pol.consistent = 0;
  p->cfg.max_retries = -1;
  /* azVal[]: 0 table, 1 region, 2 endpoint, 3 profile, 4 scan,
  **          5 consistent_read, 6 timeout, 7 max_retries */
  if(azVal[4]) {
    if(sqlite3_stricmp(azVal[4], "deny") == 0)
      p->bScanDeny = 1;
    else if(sqlite3_stricmp(azVal[4], "allow") != 0) {
      *pzErr = sqlite3_mprintf(DD_PREFIX "bad value for scan: '%s' "
                                         "(expected allow or deny)",
                               azVal[4]);
      return SQLITE_ERROR;
    }
  }
  if(azVal[5]) {
    p->pol.consistent = dd_bool(azVal[5]);
    if(p->pol.consistent < 0) {
      *pzErr = sqlite3_mprintf(DD_PREFIX "bad value for consistent_read: "
                                         "'%s' (expected true or false)",
                               azVal[5]);
      return SQLITE_ERROR;
    }
  }
  if(azVal[6]) {
    if(dd_number(azVal[6], &d) || d <= 0) {
      *pzErr = sqlite3_mprintf(DD_PREFIX "bad value for timeout: '%s' "
                                         "(expected seconds > 0)",
                               azVal[6]);
      return SQLITE_ERROR;
    }
    if(d < 0.001) {
      /* curl counts milliseconds, and its 0 means no timeout at all */
      *pzErr = sqlite3_mprintf(DD_PREFIX "bad value for timeout: '%s' "
                                         "(at least 0.001 seconds)",
                               azVal[6]);
      return SQLITE_ERROR;
    }
    p->cfg.timeout = d;
  }
  if(azVal[7]) {
    if(dd_number(azVal[7], &d) || d != floor(d) || d > 100) {
      *pzErr = sqlite3_mprintf(DD_PREFIX "bad value for max_retries: '%s' "
                                         "(expected an integer from 0 to 100)",
                               azVal[7]);
      return SQLITE_ERROR;
    }
    p->cfg.max_retries = (int)d;
  }
  for(i = 8; i <= 9; i++) {
    double *pTtl = i == 8 ? &p->pol.item_ttl : &p->pol.query_ttl;
    *pTtl = DD_DEFAULT_TTL;
    if(azVal[i] && (dd_number(azVal[i], pTtl) || *pTtl > DD_MAX_TTL)) {
      *pzErr = sqlite3_mprintf(DD_PREFIX "bad value for %s: '%s' (expected "
                                         "seconds from 0 to %d)",
                               azParam[i], azVal[i], DD_MAX_TTL);
      return SQLITE_ERROR;
    }
  }
  p->bProgress = 1;
  if(azVal[13] && (p->bProgress = dd_bool(azVal[13])) < 0) {
    *pzErr = sqlite3_mprintf(DD_PREFIX "bad value for progress: '%s' "
                                       "(expected on or off)",
                             azVal[13]);
    return SQLITE_ERROR;
  }
  if(azVal[11] && sqlite3_stricmp(azVal[11], "auto") != 0) {
    if(dd_number(azVal[11], &d) || d != floor(d) || d < 1 || d > 64) {
      *pzErr = sqlite3_mprintf(DD_PREFIX "bad value for segments: '%s' "
                                         "(expected auto or 1 to 64)",
                               azVal[11]);
      return SQLITE_ERROR;
    }
    p->nSegments = (int)d;
  }
  if(azVal[12]) {
    char *zEnd;
    long i1 = strtol(azVal[12], &zEnd, 10), n1 = -1;
    if(zEnd != azVal[12] && *zEnd == '/')
      n1 = strtol(zEnd + 1, &zEnd, 10);
    if(*zEnd || n1 < 1 || n1 > 1000000 || i1 < 0 || i1 >= n1 ||
       azVal[12][0] < '0' || azVal[12][0] > '9') {
      *pzErr = sqlite3_mprintf(DD_PREFIX "bad value for segment: '%s' "
                                         "(expected I/N with 0 <= I < N)",
                               azVal[12]);
      return SQLITE_ERROR;
    }
    if(azVal[11]) {
      *pzErr = sqlite3_mprintf(DD_PREFIX "segment= and segments= exclude "
                                         "each other");
      return SQLITE_ERROR;
    }
    p->iSlice = (int)i1;
    p->nSlice = (int)n1;
  }
  p->bSplit = 1;
  if(azVal[10] && (p->bSplit = dd_bool(azVal[10])) < 0) {
    *pzErr = sqlite3_mprintf(DD_PREFIX "bad value for split_transactions: "
                                       "'%s' (expected true or false)",
                             azVal[10]);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}
