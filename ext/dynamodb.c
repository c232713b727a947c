/*
** dynamodb.c -- a SQLite virtual table over an Amazon DynamoDB table.
**
** Usage example (sqlite3 shell):
**
**    .load build/dynamodb
**    CREATE VIRTUAL TABLE shop USING dynamodb(
**       table=Store,                        -- default: the vtab's own name
**       region=us-east-1,                   -- default: AWS_REGION, ...
**       endpoint='http://127.0.0.1:8000'    -- default: AWS_ENDPOINT_URL_DYNAMODB
**    );
**    SELECT SK, json_extract(item, '$.email') FROM shop
**     WHERE PK = 'USER#alice' AND SK >= 'ORDER#';
**    EXPLAIN QUERY PLAN SELECT * FROM shop WHERE Type = 'ORDER';
**        -- SCAN shop VIRTUAL TABLE INDEX ...:Query GSI2 (Type = ?)
**
** The table's columns come from DescribeTable, asked by CREATE VIRTUAL
** TABLE and stored in the shadow table NAME_schema (opening the database
** again makes no call: see "The stored description"): one column per key
** attribute of the table and of every GSI and LSI, named exactly as the
** attribute, then `item`, the whole item as plain JSON.  Key columns are
** TEXT for S attributes, NUMERIC for N (INTEGER values when they fit in 64
** bits, else REAL when no digit is lost, else TEXT with every digit) and
** BLOB for B.
**
** WHERE constraints on key columns become the cheapest correct DynamoDB
** call (GetItem, BatchGetItem, Query on the table or an index); anything
** else is a paginated Scan.  SQLite re-checks every constraint (omit=0),
** so a pushed-down condition only ever needs to select a superset of the
** rows, never the exact set.  See the plan table above dynamodbBestIndex.
**
** Also registered: begins_with(X, P), pushed down to DynamoDB's
** begins_with() when X is a sort key; dynamodb_calls(), a summary of the
** DynamoDB calls since the previous dynamodb_calls() (for tests and for
** seeing what a statement cost); dynamodb_refresh(NAME), which describes
** the table again and stores it.
*/
#include <math.h>
#include <unistd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h> /* malloc_trim */
#endif

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "../cache/ddb_cache.h"
#include "dd_ext.h"

/* Estimated rows of a partition with no sort-key condition. */
#define DD_PARTITION_ROWS 100.0
/* Cost of a full Scan when DescribeTable gives no item count. */
#define DD_SCAN_MIN_ROWS 1000.0
/* Cache entry lifetime in seconds, default and largest accepted. */
#define DD_DEFAULT_TTL 300.0
#define DD_MAX_TTL     31536000
/* segments=auto: at least DD_MIN_AUTO_SEGMENTS, and one Scan segment per
** DD_SEGMENT_BYTES of the table beyond, at most DD_AUTO_SEGMENTS.  The
** floor is there because the size is not to be trusted: DynamoDB updates
** TableSizeBytes about every six hours, so a table loaded since reports 0
** or its old size, and a scan sized by it ran on 1 segment (7.8x slower
** than 8 at 20 ms a call).  8 is what the AWS SDKs' examples use; the
** price is up to 8 requests (0.5 RCU each at least) where 1 would do for a
** table of one page. */
#define DD_SEGMENT_BYTES     (8LL * 1024 * 1024)
#define DD_MIN_AUTO_SEGMENTS 8
#define DD_AUTO_SEGMENTS     16
/* Filter conditions pushed into one Query or Scan at the most. */
#define DD_MAX_FILTER 8
/* The colUsed bits of columns nCol and beyond (item, keys, item_raw). */
#define DD_COLS_BEYOND(n) ((n) >= 64 ? 0 : ~(((sqlite3_uint64)1 << (n)) - 1))
/* The largest Limit DynamoDB takes (a 32-bit signed integer). */
#define DD_MAX_LIMIT 2147483647LL
/* A Scan whose LIMIT (+OFFSET) is at most this many rows runs as one
** segment with Limit, whatever segments= says: a Scan page holds up to
** 1 MB, about 1,000 items of 1 KB, so one request reads what is needed,
** where N segments would read N pages (see dynamodbFilter). */
#define DD_SCAN_SERIAL_LIMIT 1000
/* DynamoDB's longest key values, in bytes (UTF-8 for S, raw for B). */
#define DD_MAX_PK_BYTES 2048
#define DD_MAX_SK_BYTES 1024
/* Sort-key constraints pushed into one plan at the most. */
#define DD_MAX_SK 4

/* ------------------------------------------------------------------------
** Structures
*/

/* Every connected vtab of the process, for dynamodb_info(). */
static pthread_mutex_t dd_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static dd_vtab *dd_registry;

/* A value converted from SQL for use in a key condition.  av.text points
** into zBuf (owned) or into raw bytes kept alongside. */
typedef struct dd_val {
  ddb_av av;
  char *zBuf;               /* sqlite3_free() */
  const unsigned char *raw; /* bytes for ordering (text, or blob bytes) */
  int nRaw;
  double num;        /* N: the value as a double, for ordering */
  sqlite3_int64 i64; /* N: the value, exactly, when bInt */
  int bInt;
} dd_val;

/* What a Query or Scan does besides its key condition: the part of the
** plan xFilter reads from the machine half of idxStr (see "The plan as
** xFilter reads it" above dd_plan_encode). */
typedef struct dd_extra {
  int nFilter;
  int aFilterCol[DD_MAX_FILTER];  /* column of each filter */
  int aFilterKind[DD_MAX_FILTER]; /* DD_SK_EQ .. _LE or _BEGINS */
  sqlite3_uint64 mProj;           /* columns to project; 0: whole items */
  int bCount;                     /* Select=COUNT */
} dd_extra;

typedef struct dd_cursor {
  sqlite3_vtab_cursor base; /* Base class.  Must be first */
  int op;                   /* DD_OP_* of the running plan */
  dd_path *pPath;
  /* Query: the partition keys still to run, and the key condition */
  dd_val *aPk; /* sqlite3_free(), each zBuf too */
  int nPk, iPk;
  ddb_read rd;       /* the request of the current page */
  dd_val sk[2];      /* sort-key operands used by rd */
  ddb_item *pStart;  /* ExclusiveStartKey of the next page */
  ddb_lek_guard lek; /* the LastEvaluatedKeys of this partition's pages */
  int bMore;         /* the current partition has more pages */
  int bFetch;        /* read each page's rows again by key */
  ddb_item **aRow;   /* rows of the current batch; sqlite3_free(),
                               each a reference */
  int nRow;
  int iRow;       /* next row in aRow */
  ddb_item *pCur; /* the current row (borrowed) */
  int bEof;
  long long nLimit; /* Limit of the first request (LIMIT+OFFSET), 0: none */
  long long nEmitted;
  /* FILTER, PROJECT and COUNT of the plan (see dd_extra) */
  int nFilter;
  ddb_filter aFilter[DD_MAX_FILTER];
  dd_val aFv[DD_MAX_FILTER]; /* their values */
  int aFilterCol[DD_MAX_FILTER];
  int nProj;
  const char *azProj[64]; /* attribute names (owned by the vtab) */
  int bCount;             /* rows are counted, not fetched: only columns
                             with a known value (= in the call) are used */
  ddb_item *aRowOne[1];   /* aRow of a cached GetItem: no allocation */
  struct dd_pscan *pScan; /* a parallel Scan's workers, or NULL */
  int nSegDone;           /* segments finished (progress) */
  double tStart;          /* when xFilter ran (progress) */
  long long nItemsSeen, nPagesSeen;
  double rcuSeen;
  int bProgressShown;
  /* read your writes: the items the open transaction's buffered writes
  ** leave that may match the plan (aPend, references, in the plan's order
  ** when it has one), merged into the rows DynamoDB returns, whose rows of
  ** keys the transaction wrote are dropped (see dd_overlay_start) */
  int bOverlay;
  ddb_item **aPend; /* sqlite3_free(), each a reference */
  int nPend, iPend;
  ddb_item *pPeek; /* the next DynamoDB row (borrowed from aRow) */
  int bRawEof;     /* DynamoDB's rows are done */
  int bOrdered;    /* merge aPend by the path's sort key */
  /* the current row's item column, rendered at its first use and kept
  ** until the row changes: SQLite asks for a virtual table's column once
  ** per reference, and json_extract(item, ...) three times would render
  ** the JSON three times (see dd_item_json) */
  char *zItem; /* free(); NULL: not rendered yet */
  size_t nItem;
  /* the key list of a `keys = ?` plan, as given: the hidden keys column
  ** reads it back (sqlite3_value_free()) */
  sqlite3_value *pKeys;
} dd_cursor;

/* ------------------------------------------------------------------------
** Errors
*/

/* Set the vtab's error message (freeing the old one) to DD_PREFIX and a
** printf-style message. */
void dd_error(dd_vtab *p, const char *zFmt, ...) {
  va_list ap;
  char *z;
  va_start(ap, zFmt);
  z = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  sqlite3_free(p->base.zErrMsg);
  p->base.zErrMsg = sqlite3_mprintf(DD_PREFIX "%s", z ? z : "out of memory");
  sqlite3_free(z);
}

/* ------------------------------------------------------------------------
** Interrupts
**
** sqlite3_interrupt() (and the shell's Ctrl-C, which calls it) sets a flag
** that SQLite itself checks only between its own opcodes: a statement
** waiting in xFilter or xNext for DynamoDB (a hung request, a retry
** loop's backoff) would not see it for (max_retries + 1) x timeout.  So
** the client polls a cancel hook while a request waits and between
** slices of every backoff sleep, and the hook asks SQLite.
** sqlite3_is_interrupted() exists from 3.41 on; before it (Debian 12 has
** 3.40) the flag can still be read: preparing " " runs the tokenizer,
** which checks db->u1.isInterrupted at every space token and fails with
** SQLITE_INTERRUPT while it is set (tokenize.c, sqlite3RunParser, 3.40;
** the flag is reset there only when no statement is active, and the hook
** runs inside one).  The hook runs only on the statement's thread (the
** connection's mutex is held, and recursive); worker threads poll a stop
** flag instead, which the statement's thread sets when it sees the
** interrupt (dd_pscan_next, dd_batch_get_parallel). */
int dd_interrupted(void *pDb) {
  sqlite3 *db = pDb;
#if SQLITE_VERSION_NUMBER >= 3041000
  if(sqlite3_libversion_number() >= 3041000)
    return sqlite3_is_interrupted(db);
#endif
  sqlite3_stmt *pStmt = NULL;
  int rc = sqlite3_prepare_v2(db, " ", -1, &pStmt, NULL);
  sqlite3_finalize(pStmt);
  return rc == SQLITE_INTERRUPT;
}

/* The SQLite result code for a client error. */
int dd_rc(const ddb_error *e) {
  switch(e->code) {
  case DDB_OK: return SQLITE_OK;
  case DDB_ERR_NOMEM: return SQLITE_NOMEM;
  case DDB_ERR_CANCELLED: return SQLITE_INTERRUPT;
  default: return SQLITE_ERROR;
  }
}

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
#define DD_NPARAM (int)(sizeof(azParam) / sizeof(azParam[0]))

/* Strip leading/trailing white space and one level of quotes.  Returns a
** new string (sqlite3_free) or NULL on OOM. */
static char *dd_dequote(const char *z, int n) {
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
static int dd_bool(const char *z) {
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
static int dd_number(const char *z, double *pOut) {
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
static int dd_parse_args(int argc, const char *const *argv,
                         char *azVal[DD_NPARAM], char **pzErr) {
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

/* ------------------------------------------------------------------------
** xConnect / xCreate / xDisconnect
*/

static void dd_vtab_free(dd_vtab *p) {
  int i;
  dd_vtab **pp;
  if(!p)
    return;
  pthread_mutex_lock(&dd_registry_lock);
  for(pp = &dd_registry; *pp; pp = &(*pp)->pNextVtab)
    if(*pp == p) {
      *pp = p->pNextVtab;
      break;
    }
  pthread_mutex_unlock(&dd_registry_lock);
  dd_txn_free(p);
  sqlite3_free(p->zVtabName);
  sqlite3_free(p->zRegion);
  sqlite3_free(p->zEndpoint);
  sqlite3_free(p->zProfile);
  sqlite3_free(p->zCaBundle);
  sqlite3_free(p->zTable);
  sqlite3_free(p->zDb);
  sqlite3_free(p->zDefer);
  sqlite3_free(p->zSchemaErr);
  for(i = 0; i < p->nCol; i++)
    sqlite3_free(p->aCol[i].zName);
  sqlite3_free(p->aCol);
  sqlite3_free(p->aPath);
  ddb_table_desc_free(p->pDesc);
  ddb_client_free(p->pClient);
  sqlite3_free(p->base.zErrMsg);
  sqlite3_free(p);
}

/* The column number of attribute zName, adding it if new. */
static int dd_add_column(dd_vtab *p, const ddb_keyattr *ka) {
  int i;
  for(i = 0; i < p->nCol; i++)
    if(strcmp(p->aCol[i].zName, ka->name) == 0)
      return i;
  p->aCol[p->nCol].zName = sqlite3_mprintf("%s", ka->name);
  p->aCol[p->nCol].type = ka->type;
  if(!p->aCol[p->nCol].zName)
    return -1;
  return p->nCol++;
}

/* Is attribute zName projected into index x? */
static int dd_projected(const ddb_index *x, const char *zName) {
  int i;
  if(x->projection == DDB_PROJ_ALL)
    return 1;
  for(i = 0; i < x->n_nonkey; i++)
    if(strcmp(x->nonkey[i], zName) == 0)
      return 1;
  return 0;
}

/* Build columns and access paths from p->pDesc. */
/* Add the columns declared by columns='name [S|N|B], ...' (after the key
** columns).  A name is bare (up to a space or comma) or quoted with " or
** ' (the quote doubled inside): then it may hold spaces, commas, any
** length.  Returns SQLITE_OK, or an error with *pzErr set. */
static int dd_declare_columns(dd_vtab *p, const char *z, char **pzErr) {
  static const char *const azT[] = {"S", "TEXT", "N", "NUMERIC", "B", "BLOB"};
  static const ddb_type aT[] = {DDB_S, DDB_S, DDB_N, DDB_N, DDB_B, DDB_B};
  while(z && *z) {
    const char *zN, *zT;
    int nN, nT, i;
    ddb_type t = DDB_S;
    char *zName;
    while(*z == ' ' || *z == '\t' || *z == '\n')
      z++;
    zN = z;
    if(*z == '"' || *z == '\'') {
      for(z++; *z && !(*z == *zN && z[1] != *zN); z++)
        if(*z == *zN)
          z++; /* a doubled quote */
      if(*z)
        z++;
    } else {
      while(*z && *z != ',' && *z != ' ' && *z != '\t' && *z != '\n')
        z++;
    }
    nN = (int)(z - zN);
    while(*z == ' ' || *z == '\t' || *z == '\n')
      z++;
    zT = z;
    while(*z && *z != ',' && *z != ' ' && *z != '\t' && *z != '\n')
      z++;
    nT = (int)(z - zT);
    while(*z == ' ' || *z == '\t' || *z == '\n')
      z++;
    if(*z && *z != ',') {
      *pzErr = sqlite3_mprintf(DD_PREFIX "bad column in columns at '%.60s' "
                                         "(expected name [S|N|B], ...)",
                               zN);
      return SQLITE_ERROR;
    }
    if(*z == ',')
      z++;
    if(nT > 0) {
      for(i = 0; i < 6; i++)
        if(sqlite3_strnicmp(zT, azT[i], nT) == 0 && azT[i][nT] == 0)
          break;
      if(i == 6) {
        *pzErr = sqlite3_mprintf(DD_PREFIX "bad type in columns: '%.*s' "
                                           "(expected S, N or B)",
                                 nT, zT);
        return SQLITE_ERROR;
      }
      t = aT[i];
    }
    zName = dd_dequote(zN, nN);
    if(!zName)
      return SQLITE_NOMEM;
    for(i = 0; i < p->nCol; i++)
      if(strcmp(p->aCol[i].zName, zName) == 0)
        break;
    if(i < p->nCol || !*zName || sqlite3_stricmp(zName, "item") == 0 ||
       sqlite3_stricmp(zName, "item_raw") == 0 || p->nCol >= 62) {
      *pzErr =
          sqlite3_mprintf(DD_PREFIX "bad column in columns: '%s' (%s)", zName,
                          !*zName         ? "empty"
                          : i < p->nCol   ? "already a column"
                          : p->nCol >= 62 ? "too many columns"
                                          : "a reserved name");
      sqlite3_free(zName);
      return SQLITE_ERROR;
    }
    p->aCol[p->nCol].zName = zName;
    p->aCol[p->nCol].type = t;
    p->aCol[p->nCol].bAttr = 1;
    p->nCol++;
  }
  return SQLITE_OK;
}

/* Is column c an attribute of the table's primary key? */
static int dd_is_table_key(const dd_vtab *p, int c) {
  return c == p->aPath[0].iPk || c == p->aPath[0].iSk;
}

static int dd_build_schema(dd_vtab *p) {
  const ddb_table_desc *d = p->pDesc;
  int i, c;
  p->aCol = sqlite3_malloc64(sizeof(dd_column) *
                             ((sqlite3_uint64)d->n_indexes * 2 + 64));
  p->aPath = sqlite3_malloc64(sizeof(dd_path) * (sqlite3_uint64)d->n_indexes);
  if(!p->aCol || !p->aPath)
    return SQLITE_NOMEM;
  memset(p->aCol, 0, sizeof(dd_column) * ((size_t)d->n_indexes * 2 + 64));
  p->nPath = d->n_indexes;
  for(i = 0; i < d->n_indexes; i++) {
    const ddb_index *x = &d->indexes[i];
    dd_path *pp = &p->aPath[i];
    pp->pIdx = x;
    pp->iPk = dd_add_column(p, &x->pk);
    pp->iSk = x->sk.name ? dd_add_column(p, &x->sk) : -1;
    if(pp->iPk < 0 || (x->sk.name && pp->iSk < 0))
      return SQLITE_NOMEM;
  }
  p->azKey[0] = d->indexes[0].pk.name;
  p->azKey[1] = d->indexes[0].sk.name;
  p->nKey = d->indexes[0].sk.name ? 2 : 1;
  if(p->zColumns) {
    int rc = dd_declare_columns(p, p->zColumns, &p->zSchemaErr);
    if(rc)
      return rc;
  }
  /* Index membership: an item is in an index only when it has the
  ** index's partition and sort key.  A Query on the index cannot see the
  ** others, so the index's partition-key column shows NULL for them (see
  ** "Index membership" above dynamodbBestIndex); the gate is the sort key
  ** of each index the column is the partition key of, unless that sort
  ** key is a key of the table (every item has it). */
  for(i = 1; i < p->nPath; i++) {
    const dd_path *pp = &p->aPath[i];
    if(pp->iSk < 0 || dd_is_table_key(p, pp->iSk) ||
       dd_is_table_key(p, pp->iPk))
      continue;
    p->aCol[pp->iPk].mGate |= (sqlite3_uint64)1 << pp->iSk;
  }
  /* What each path's projection covers: the table's keys, its own keys,
  ** and for ALL/INCLUDE the projected attributes.  `item` is covered only
  ** by ALL (and by the base table). */
  for(i = 0; i < p->nPath; i++) {
    dd_path *pp = &p->aPath[i];
    sqlite3_uint64 m = 0;
    for(c = 0; c <= p->nCol + 2 && c < 64; c++) {
      int bCover;
      if(i == 0 || pp->pIdx->projection == DDB_PROJ_ALL)
        bCover = 1;
      else if(c >= p->nCol)
        bCover = c == DD_COL_KEYS(p); /* item, item_raw: no */
      else
        bCover = c == pp->iPk || c == pp->iSk || c == p->aPath[0].iPk ||
                 c == p->aPath[0].iSk ||
                 dd_projected(pp->pIdx, p->aCol[c].zName);
      if(bCover)
        m |= (sqlite3_uint64)1 << c;
    }
    pp->mCover = m;
  }
  return SQLITE_OK;
}

/* The name of the extra column zBase ("item", "keys", "item_raw") in
** zName[32] (zBase is shorter than 16 bytes): zBase, or, when a key
** attribute has that name (SQLite compares column names without case),
** zBase with '_' appended until no column has it. */
void dd_extra_col_name(dd_vtab *p, const char *zBase, char *zName) {
  size_t n = strlen(zBase);
  int i;
  memcpy(zName, zBase, n + 1);
  for(i = 0; i < p->nCol && n + 1 < 32; i++) {
    if(sqlite3_stricmp(p->aCol[i].zName, zName) == 0) {
      zName[n++] = '_';
      zName[n] = 0;
      i = -1; /* check the new name against every column again */
    }
  }
}

/* The name of a whole-item column: zBase ("item", "item_raw"), or, when
** a key attribute has that name (SQLite compares column names without
** case), zBase with '_' appended until no column has it.  Appends it to
** s, quoted. */
static void dd_item_col_name(dd_vtab *p, sqlite3_str *s, const char *zBase) {
  char zName[32];
  dd_extra_col_name(p, zBase, zName);
  sqlite3_str_appendf(s, "\"%w\"", zName);
}

/* The CREATE TABLE statement declaring the columns. */
static char *dd_schema_sql(dd_vtab *p) {
  sqlite3_str *s = sqlite3_str_new(0);
  int i;
  sqlite3_str_appendall(s, "CREATE TABLE x(");
  for(i = 0; i < p->nCol; i++) {
    const char *zType = p->aCol[i].type == DDB_S   ? "TEXT"
                        : p->aCol[i].type == DDB_N ? "NUMERIC"
                                                   : "BLOB";
    sqlite3_str_appendf(s, "%s\"%w\" %s", i ? ", " : "", p->aCol[i].zName,
                        zType);
  }
  sqlite3_str_appendall(s, ", ");
  dd_item_col_name(p, s, "item");
  sqlite3_str_appendall(s, " TEXT, ");
  dd_item_col_name(p, s, "keys");
  sqlite3_str_appendall(s, " TEXT HIDDEN, ");
  dd_item_col_name(p, s, "item_raw");
  sqlite3_str_appendall(s, " TEXT HIDDEN)");
  return sqlite3_str_finish(s);
}

/* The Scan segments of segments=auto for a table of nBytes (DescribeTable's
** TableSizeBytes, possibly hours old; unknown: 0). */
static int dd_auto_segments(long long nBytes) {
  long long n = nBytes > 0 ? nBytes / DD_SEGMENT_BYTES + 1 : 1;
  if(n < DD_MIN_AUTO_SEGMENTS)
    n = DD_MIN_AUTO_SEGMENTS;
  return n > DD_AUTO_SEGMENTS ? DD_AUTO_SEGMENTS : (int)n;
}

/*
** The stored description: the shadow table NAME_schema
**
** xCreate asks DynamoDB for the table's description (DescribeTable) and
** keeps what xConnect needs to declare the columns and plan the queries
** in a shadow table of the virtual table, one row per access path:
**
**   k            0: the table itself, then its GSIs and LSIs in the order
**                of the description
**   name         k=0: the DynamoDB table; else the index
**   is_local     1 for an LSI
**   pk, pk_type  partition key attribute and its type (S, N or B)
**   sk, sk_type  sort key and type, NULL when there is none
**   projection   ALL, KEYS_ONLY or INCLUDE
**   nonkey       INCLUDE's NonKeyAttributes as a JSON array of strings
**   item_count, size_bytes   k=0: DescribeTable's counts (plans, segments)
**
** xConnect reads it back and makes no call and resolves no credentials:
** opening a database file, reading its schema (.schema, PRAGMA
** table_info, sqlite_schema) and DROP TABLE stay offline, whatever the
** file's CREATE VIRTUAL TABLE says.  The client (region, endpoint,
** credentials: a credential_process may run) is made at the table's first
** real read or write (dd_client).  dynamodb_refresh('NAME') describes the
** table again and rewrites the rows.  xShadowName makes the table a
** shadow table: read-only to SQL when SQLITE_DBCONFIG_DEFENSIVE is on.
** Its content comes from the file, like the options, so xConnect checks it
** (types, counts, the table's name) and a damaged one is reported at first
** use, as is a missing one (a table made by an older version).
*/
/* Rows of a stored description at the most: the table, 20 GSIs and 5
** LSIs fit DynamoDB's limits; more is a damaged file. */
#define DD_MAX_PATHS 32
/* NonKeyAttributes of one index at the most (DynamoDB allows 100 over all
** of a table's indexes). */
#define DD_MAX_NONKEY 1000

/* The projection names, as ddb_projection numbers them. */
static const char *const azProj[] = {"ALL", "KEYS_ONLY", "INCLUDE"};

/* Write d into the shadow table zDb.zName_schema (created when bCreate,
** else emptied, or created if missing).  Returns an SQLite code; on error
** *pzErr is set (sqlite3_free). */
static int dd_desc_store(sqlite3 *db, const char *zDb, const char *zName,
                         const ddb_table_desc *d, int bCreate, char **pzErr) {
  sqlite3_stmt *pStmt = NULL;
  char *zSql;
  int rc, i, j;
  ddb_buf b;

  zSql = sqlite3_mprintf(
      "%s \"%w\".\"%w_schema\"(k INTEGER PRIMARY KEY, name TEXT, "
      "is_local INTEGER, pk TEXT, pk_type TEXT, sk TEXT, sk_type TEXT, "
      "projection TEXT, nonkey TEXT, item_count INTEGER, size_bytes "
      "INTEGER);%s%w%s%w%s",
      bCreate ? "CREATE TABLE" : "CREATE TABLE IF NOT EXISTS", zDb, zName,
      bCreate ? "" : "DELETE FROM \"", bCreate ? "" : zDb,
      bCreate ? "" : "\".\"", bCreate ? "" : zName,
      bCreate ? "" : "_schema\";");
  if(!zSql)
    return SQLITE_NOMEM;
  rc = sqlite3_exec(db, zSql, 0, 0, pzErr);
  sqlite3_free(zSql);
  if(rc)
    return rc;
  zSql = sqlite3_mprintf("INSERT INTO \"%w\".\"%w_schema\" VALUES(?1, ?2, "
                         "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                         zDb, zName);
  if(!zSql)
    return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  for(i = 0; rc == SQLITE_OK && i < d->n_indexes; i++) {
    const ddb_index *x = &d->indexes[i];
    char *zNonkey = NULL;
    size_t nNonkey = 0;
    sqlite3_bind_int(pStmt, 1, i);
    sqlite3_bind_text(pStmt, 2, i ? x->name : d->name, -1, SQLITE_STATIC);
    sqlite3_bind_int(pStmt, 3, x->is_local);
    sqlite3_bind_text(pStmt, 4, x->pk.name, -1, SQLITE_STATIC);
    sqlite3_bind_text(pStmt, 5, ddb_type_name(x->pk.type), -1, SQLITE_STATIC);
    if(x->sk.name) {
      sqlite3_bind_text(pStmt, 6, x->sk.name, -1, SQLITE_STATIC);
      sqlite3_bind_text(pStmt, 7, ddb_type_name(x->sk.type), -1,
                        SQLITE_STATIC);
    } else {
      sqlite3_bind_null(pStmt, 6);
      sqlite3_bind_null(pStmt, 7);
    }
    sqlite3_bind_text(pStmt, 8, azProj[x->projection], -1, SQLITE_STATIC);
    if(x->projection == DDB_PROJ_INCLUDE) {
      ddb_buf_init(&b, 16 * 1024 * 1024);
      ddb_buf_addc(&b, '[');
      for(j = 0; j < x->n_nonkey; j++) {
        if(j)
          ddb_buf_addc(&b, ',');
        ddb_buf_json_str(&b, x->nonkey[j], strlen(x->nonkey[j]));
      }
      ddb_buf_addc(&b, ']');
      zNonkey = ddb_buf_take(&b, &nNonkey);
      if(!zNonkey) {
        rc = SQLITE_NOMEM;
        break;
      }
      sqlite3_bind_text64(pStmt, 9, zNonkey, nNonkey, free, SQLITE_UTF8);
    } else {
      sqlite3_bind_null(pStmt, 9);
    }
    sqlite3_bind_int64(pStmt, 10, i ? 0 : d->item_count);
    sqlite3_bind_int64(pStmt, 11, i ? 0 : d->size_bytes);
    sqlite3_step(pStmt);
    rc = sqlite3_reset(pStmt); /* the step's error, if any */
  }
  if(rc && rc != SQLITE_NOMEM)
    *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  sqlite3_finalize(pStmt);
  return rc;
}

/* A copy of column iCol of pStmt (malloc, as ddb_table_desc_free frees),
** or NULL when it is NULL or not text.  *pbNoMem set on OOM. */
static char *dd_col_dup(sqlite3_stmt *pStmt, int iCol, int *pbNoMem) {
  const char *z;
  char *zOut;
  if(sqlite3_column_type(pStmt, iCol) != SQLITE_TEXT)
    return NULL;
  z = (const char *)sqlite3_column_text(pStmt, iCol);
  if(!z)
    return NULL;
  zOut = strdup(z);
  if(!zOut)
    *pbNoMem = 1;
  return zOut;
}

/* The key type named by column iCol of pStmt (S, N or B), or -1. */
static int dd_col_type(sqlite3_stmt *pStmt, int iCol) {
  const char *z = (const char *)sqlite3_column_text(pStmt, iCol);
  if(!z)
    return -1;
  if(strcmp(z, "S") == 0)
    return DDB_S;
  if(strcmp(z, "N") == 0)
    return DDB_N;
  if(strcmp(z, "B") == 0)
    return DDB_B;
  return -1;
}

/* Read INCLUDE's attribute names, JSON array zJson, into x.  Returns
** SQLITE_OK, SQLITE_NOMEM, or SQLITE_ERROR when zJson is not an array of
** strings (at most DD_MAX_NONKEY). */
static int dd_nonkey_load(sqlite3 *db, const char *zJson, ddb_index *x) {
  sqlite3_stmt *pStmt = NULL;
  int rc, n = 0;
  if(!zJson)
    return SQLITE_ERROR;
  rc = sqlite3_prepare_v2(db,
                          "SELECT value, type = 'text' FROM json_each(?1) "
                          "WHERE json_type(?1) = 'array'",
                          -1, &pStmt, 0);
  if(rc)
    return rc == SQLITE_NOMEM ? rc : SQLITE_ERROR;
  sqlite3_bind_text(pStmt, 1, zJson, -1, SQLITE_STATIC);
  while((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
    char **a;
    int bNoMem = 0;
    if(!sqlite3_column_int(pStmt, 1) || n >= DD_MAX_NONKEY) {
      rc = SQLITE_ERROR;
      break;
    }
    a = realloc(x->nonkey, sizeof(char *) * (size_t)(n + 1));
    if(!a) {
      rc = SQLITE_NOMEM;
      break;
    }
    x->nonkey = a;
    x->nonkey[n] = dd_col_dup(pStmt, 0, &bNoMem);
    if(!x->nonkey[n]) {
      rc = bNoMem ? SQLITE_NOMEM : SQLITE_ERROR;
      break;
    }
    x->n_nonkey = ++n;
  }
  sqlite3_finalize(pStmt);
  if(rc == SQLITE_DONE)
    return SQLITE_OK;
  return rc == SQLITE_NOMEM ? rc : SQLITE_ERROR;
}

/* Read the stored description of the vtab zDb.zName, which must describe
** DynamoDB table zTable.  SQLITE_OK with *ppDesc (ddb_table_desc_free);
** SQLITE_NOMEM; or SQLITE_ERROR with *pzWhy (sqlite3_free) saying what is
** missing or wrong.  Makes no call: the rows are checked, not trusted. */
static int dd_desc_load(sqlite3 *db, const char *zDb, const char *zName,
                        const char *zTable, ddb_table_desc **ppDesc,
                        char **pzWhy) {
  sqlite3_stmt *pStmt = NULL;
  ddb_table_desc *d = NULL;
  char *zSql;
  const char *zWhy = NULL;
  int rc, n = 0, bNoMem = 0, t;

  *ppDesc = NULL;
  *pzWhy = NULL;
  /* an ordinary table, never a view (a view could run anything) */
  zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema WHERE "
                         "type = 'table' AND name = '%q_schema'",
                         zDb, zName);
  if(!zSql)
    return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  if(rc == SQLITE_OK && sqlite3_step(pStmt) != SQLITE_ROW)
    rc = SQLITE_NOTFOUND;
  sqlite3_finalize(pStmt);
  pStmt = NULL;
  if(rc == SQLITE_NOMEM)
    return rc;
  if(rc) {
    *pzWhy = sqlite3_mprintf("no stored description (no table %s_schema: "
                             "made by an older version of the extension?)",
                             zName);
    return *pzWhy ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  zSql = sqlite3_mprintf("SELECT k, name, is_local, pk, pk_type, sk, "
                         "sk_type, projection, nonkey, item_count, "
                         "size_bytes FROM \"%w\".\"%w_schema\" ORDER BY k",
                         zDb, zName);
  if(!zSql)
    return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  if(rc) {
    if(rc == SQLITE_NOMEM)
      return rc;
    *pzWhy = sqlite3_mprintf("the stored description is damaged: %s",
                             sqlite3_errmsg(db));
    return *pzWhy ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  d = calloc(1, sizeof(*d));
  if(d)
    d->indexes = calloc(DD_MAX_PATHS, sizeof(ddb_index));
  if(!d || !d->indexes) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  while((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
    ddb_index *x = &d->indexes[n];
    if(n >= DD_MAX_PATHS) {
      zWhy = "too many indexes";
      break;
    }
    if(sqlite3_column_type(pStmt, 0) != SQLITE_INTEGER ||
       sqlite3_column_int64(pStmt, 0) != n) {
      zWhy = "its rows are not numbered 0, 1, ...";
      break;
    }
    d->n_indexes = n + 1; /* x is d's to free from here on */
    if(n == 0) {
      d->name = dd_col_dup(pStmt, 1, &bNoMem);
      d->item_count = sqlite3_column_int64(pStmt, 9);
      d->size_bytes = sqlite3_column_int64(pStmt, 10);
      if(d->item_count < 0 || d->size_bytes < 0) {
        zWhy = "a negative count";
        break;
      }
    } else {
      x->name = dd_col_dup(pStmt, 1, &bNoMem);
    }
    x->is_local = n > 0 && sqlite3_column_int(pStmt, 2) != 0;
    x->pk.name = dd_col_dup(pStmt, 3, &bNoMem);
    x->sk.name = dd_col_dup(pStmt, 5, &bNoMem);
    if(bNoMem) {
      rc = SQLITE_NOMEM;
      goto fail;
    }
    if(!(n ? x->name : d->name) || !x->pk.name || !x->pk.name[0] ||
       (x->sk.name && !x->sk.name[0])) {
      zWhy = "a name is missing";
      break;
    }
    if((t = dd_col_type(pStmt, 4)) < 0) {
      zWhy = "a key type is not S, N or B";
      break;
    }
    x->pk.type = (ddb_type)t;
    if(x->sk.name) {
      if((t = dd_col_type(pStmt, 6)) < 0) {
        zWhy = "a key type is not S, N or B";
        break;
      }
      x->sk.type = (ddb_type)t;
    }
    for(t = 0; t < 3; t++) {
      const char *z = (const char *)sqlite3_column_text(pStmt, 7);
      if(z && strcmp(z, azProj[t]) == 0)
        break;
    }
    if(t == 3 || (n == 0 && t != DDB_PROJ_ALL)) {
      zWhy = "a projection is not ALL, KEYS_ONLY or INCLUDE";
      break;
    }
    x->projection = (ddb_projection)t;
    if(t == DDB_PROJ_INCLUDE) {
      rc = dd_nonkey_load(db, (const char *)sqlite3_column_text(pStmt, 8), x);
      if(rc == SQLITE_NOMEM)
        goto fail;
      if(rc) {
        zWhy = "nonkey is not a JSON array of names";
        break;
      }
    }
    n++;
  }
  if(!zWhy && rc != SQLITE_DONE) {
    if(rc == SQLITE_NOMEM)
      goto fail;
    zWhy = sqlite3_errmsg(db);
  }
  if(!zWhy && n == 0)
    zWhy = "it has no rows";
  if(!zWhy && strcmp(d->name, zTable) != 0)
    zWhy = "it describes another DynamoDB table";
  if(zWhy) {
    *pzWhy = sqlite3_mprintf("the stored description is damaged (%s)", zWhy);
    rc = *pzWhy ? SQLITE_ERROR : SQLITE_NOMEM;
    goto fail;
  }
  *ppDesc = d;
  d = NULL;
  rc = SQLITE_OK;

fail:
  sqlite3_finalize(pStmt);
  ddb_table_desc_free(d);
  return rc;
}

/* Set p->zDefer to DD_PREFIX-less text z (which may carry the prefix);
** takes z (sqlite3_free).  Returns SQLITE_OK, or SQLITE_NOMEM. */
static int dd_defer(dd_vtab *p, char *z, int bOptErr) {
  size_t n = strlen(DD_PREFIX);
  if(!z)
    return SQLITE_NOMEM;
  sqlite3_free(p->zDefer);
  p->zDefer = sqlite3_mprintf("%s", strncmp(z, DD_PREFIX, n) == 0 ? z + n : z);
  p->bOptErr = bOptErr;
  sqlite3_free(z);
  return p->zDefer ? SQLITE_OK : SQLITE_NOMEM;
}

/* Make p's client if it has none yet (bAny: even when the table has no
** usable description, for dynamodb_refresh).  Returns an SQLite code, with
** p's error message set on failure. */
static int dd_client_make(dd_vtab *p, int bAny) {
  ddb_error err;
  if(p->zDefer && (p->bOptErr || !bAny)) {
    dd_error(p, "%s", p->zDefer);
    return SQLITE_ERROR;
  }
  if(p->pClient)
    return SQLITE_OK;
  ddb_error_clear(&err);
  if(ddb_client_new(&p->cfg, &p->pClient, &err)) {
    dd_error(p, "table '%s': %s", p->zTable, err.message);
    return dd_rc(&err);
  }
  /* connected (p->db set): sqlite3_interrupt() stops this client's calls */
  if(p->db)
    ddb_client_set_cancel(p->pClient, dd_interrupted, p->db);
  return SQLITE_OK;
}

int dd_client(dd_vtab *p) {
  return dd_client_make(p, 0);
}

/* Apply the options azVal[] to p (taking the strings the client needs
** from azVal).  Returns SQLITE_OK, or SQLITE_ERROR with *pzErr set. */
static int dd_options(dd_vtab *p, char *azVal[DD_NPARAM], char **pzErr) {
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

/* Forget p's columns and paths (a description that did not build). */
static void dd_schema_clear(dd_vtab *p) {
  int i;
  for(i = 0; i < p->nCol; i++)
    sqlite3_free(p->aCol[i].zName);
  sqlite3_free(p->aCol);
  sqlite3_free(p->aPath);
  p->aCol = NULL;
  p->aPath = NULL;
  p->nCol = p->nPath = 0;
  ddb_table_desc_free(p->pDesc);
  p->pDesc = NULL;
}

/*
** xCreate and xConnect.  Creating the virtual table creates nothing in
** DynamoDB: the DynamoDB table must exist.  xCreate describes it (with
** the user's credentials: the user is running CREATE VIRTUAL TABLE) and
** stores the description; xConnect reads it back and makes no call.
**
** xConnect runs for whatever a database file holds: the file's options
** are not checked until the table is used, so that a table whose options
** are bad (or that has no stored description) still connects, shows its
** columns and can be dropped; its first read or write reports the error.
*/
static int dd_init(sqlite3 *db, int argc, const char *const *argv,
                   sqlite3_vtab **ppVtab, char **pzErr, int bCreate) {
  dd_vtab *p = NULL;
  char *azVal[DD_NPARAM];
  char *zSchema = NULL, *zErr = NULL;
  ddb_error err;
  int rc, i, bDescBad = 0;

  memset(azVal, 0, sizeof(azVal));
  ddb_error_clear(&err);
  *ppVtab = NULL;
  p = sqlite3_malloc(sizeof(*p));
  if(!p) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  memset(p, 0, sizeof(*p));
  rc = dd_parse_args(argc, argv, azVal, &zErr);
  if(rc == SQLITE_OK)
    rc = dd_options(p, azVal, &zErr);
  if(rc == SQLITE_NOMEM)
    goto fail;
  p->zTable = sqlite3_mprintf("%s", azVal[0] ? azVal[0] : argv[2]);
  p->zDb = sqlite3_mprintf("%s", argv[1]);
  if(!p->zTable || !p->zDb) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  if(rc && bCreate) {
    *pzErr = zErr;
    zErr = NULL;
    goto fail;
  }
  if(rc) {
    rc = dd_defer(p, zErr, 1);
    zErr = NULL;
    if(rc)
      goto fail;
  }
  if(bCreate) {
    if(dd_client(p) ||
       ddbc_describe_table(p->pClient, p->zTable, &p->pDesc, &err)) {
      if(p->base.zErrMsg) {
        *pzErr = p->base.zErrMsg;
        p->base.zErrMsg = NULL;
        rc = SQLITE_ERROR;
      } else {
        *pzErr = sqlite3_mprintf(DD_PREFIX "table '%s': %s", p->zTable,
                                 err.message);
        rc = dd_rc(&err);
      }
      goto fail;
    }
  } else {
    rc = dd_desc_load(db, argv[1], argv[2], p->zTable, &p->pDesc, &zErr);
    if(rc == SQLITE_NOMEM)
      goto fail;
    if(rc) {
      rc = p->zDefer ? SQLITE_OK
                     : dd_defer(p,
                                sqlite3_mprintf(
                                    "table '%s': %s: run SELECT "
                                    "dynamodb_refresh('%s') to describe it "
                                    "again and store it, or DROP TABLE and "
                                    "CREATE it again",
                                    argv[2], zErr, argv[2]),
                                0);
      sqlite3_free(zErr);
      zErr = NULL;
      if(rc)
        goto fail;
    }
  }
  if(p->pDesc) {
    p->zColumns = p->bOptErr ? NULL : azVal[15];
    rc = dd_build_schema(p);
    p->zColumns = NULL;
    bDescBad = rc == SQLITE_OK && p->nCol > 62 && !bCreate;
    if(bDescBad) {
      p->zSchemaErr = sqlite3_mprintf("table '%s': the stored description "
                                      "is damaged (too many columns)",
                                      argv[2]);
      rc = p->zSchemaErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }
    if(rc && (bCreate || rc == SQLITE_NOMEM)) {
      if(p->zSchemaErr) {
        *pzErr = p->zSchemaErr;
        p->zSchemaErr = NULL;
      }
      goto fail;
    }
    if(rc) {
      /* a file's columns= that does not parse: reported at first use */
      rc = dd_defer(p, p->zSchemaErr, !bDescBad);
      p->zSchemaErr = NULL;
      dd_schema_clear(p);
      if(rc)
        goto fail;
    }
  }
  if(p->pDesc) {
    if(p->nSegments == 0)
      p->nSegments = dd_auto_segments(p->pDesc->size_bytes);
    zSchema = dd_schema_sql(p);
  } else {
    zSchema = sqlite3_mprintf("CREATE TABLE x(item TEXT, keys TEXT HIDDEN, "
                              "item_raw TEXT HIDDEN)");
  }
  if(!zSchema) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  rc = sqlite3_declare_vtab(db, zSchema);
  if(rc) {
    *pzErr = sqlite3_mprintf(DD_PREFIX "cannot declare the schema: %s",
                             sqlite3_errmsg(db));
    goto fail;
  }
  if(bCreate) {
    rc = dd_desc_store(db, argv[1], argv[2], p->pDesc, 1, &zErr);
    if(rc) {
      *pzErr = sqlite3_mprintf(DD_PREFIX "cannot store the description of "
                                         "'%s': %s",
                               argv[2], zErr ? zErr : sqlite3_errstr(rc));
      goto fail;
    }
  }
  /* A statement may read (and later write) DynamoDB with the user's
  ** credentials, to the endpoint the file names.  A view or trigger stored
  ** in a database file runs whenever that file is used, and a file can
  ** come from anyone, so the table is DIRECTONLY: SQLite refuses it inside
  ** the schema's views and triggers (after xConnect, which makes no call).
  ** Views over the table are useful for reports, but that is what TEMP
  ** views and triggers are for: only the user's own session creates them,
  ** and they still work:
  **   CREATE TEMP VIEW orders AS SELECT ... FROM shop WHERE ...; */
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  /* an INSERT that finds its key returns SQLITE_CONSTRAINT and SQLite
  ** applies the statement's ON CONFLICT (IGNORE skips the row; REPLACE is
  ** done by xUpdate itself, as an unconditional PutItem) */
  sqlite3_vtab_config(db, SQLITE_VTAB_CONSTRAINT_SUPPORT, 1);
  p->db = db;
  /* from here on, sqlite3_interrupt() and Ctrl-C stop this table's calls
  ** (not before: xCreate's DescribeTable above may run inside
  ** sqlite3_prepare); a client made later gets the hook in dd_client_make */
  if(p->pClient)
    ddb_client_set_cancel(p->pClient, dd_interrupted, db);
  p->zVtabName = sqlite3_mprintf("%s", argv[2]);
  if(!p->zVtabName) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  pthread_mutex_lock(&dd_registry_lock);
  p->pNextVtab = dd_registry;
  dd_registry = p;
  pthread_mutex_unlock(&dd_registry_lock);
  *ppVtab = &p->base;
  p = NULL;

fail:
  for(i = 0; i < DD_NPARAM; i++)
    sqlite3_free(azVal[i]);
  sqlite3_free(zSchema);
  sqlite3_free(zErr);
  dd_vtab_free(p);
  return rc;
}

static int dynamodbCreate(sqlite3 *db, void *pAux, int argc,
                          const char *const *argv, sqlite3_vtab **ppVtab,
                          char **pzErr) {
  (void)pAux;
  return dd_init(db, argc, argv, ppVtab, pzErr, 1);
}

static int dynamodbConnect(sqlite3 *db, void *pAux, int argc,
                           const char *const *argv, sqlite3_vtab **ppVtab,
                           char **pzErr) {
  (void)pAux;
  return dd_init(db, argc, argv, ppVtab, pzErr, 0);
}

static int dynamodbDisconnect(sqlite3_vtab *pVtab) {
  dd_vtab_free((dd_vtab *)pVtab);
  return SQLITE_OK;
}

/* xDestroy: DROP TABLE drops the stored description (never the DynamoDB
** table), with no call: it works for a table whose options are bad. */
static int dynamodbDestroy(sqlite3_vtab *pVtab) {
  dd_vtab *p = (dd_vtab *)pVtab;
  char *zSql = sqlite3_mprintf("DROP TABLE IF EXISTS \"%w\".\"%w_schema\"",
                               p->zDb, p->zVtabName);
  int rc;
  if(!zSql)
    return SQLITE_NOMEM;
  rc = sqlite3_exec(p->db, zSql, 0, 0, 0);
  sqlite3_free(zSql);
  if(rc == SQLITE_OK)
    dd_vtab_free(p);
  return rc;
}

/* ------------------------------------------------------------------------
** The query plan
**
** xBestIndex chooses one DynamoDB call and passes its choice to xFilter in
** idxNum; idxStr is the same plan for people (EXPLAIN QUERY PLAN).
**
**   idxNum bits   meaning
**   -----------   ------------------------------------------------------
**   0-1           operation: 0 Scan, 1 GetItem, 2 BatchGetItem, 3 Query
**   2-6           access path: 0 the base table, k the k-th index
**                 (GSIs in DescribeTable order, then LSIs)
**   7             the partition-key argument is an IN list (all at once)
**   8             the sort-key EQ argument is an IN list (BatchGetItem)
**   9             ORDER BY consumed descending (ScanIndexForward=false)
**   10            a LIMIT argument follows the key arguments
**   11            an OFFSET argument follows LIMIT
**   12-27         up to four sort-key constraints, 4 bits each, lowest
**                 first: DD_SK_EQ, _GT, _GE, _LT, _LE, _LIKE, _GLOB,
**                 _BEGINS (begins_with); 0 ends the list
**   28            the index's projection lacks a column the statement
**                 uses: each page's rows are read again by table key
**   29            DD_KEYS: BatchGetItem of the key list given to the
**                 hidden column keys (keys = ?, or shop(?)): one
**                 argument, the JSON list (see dd_keys_parse)
**
** Arguments reach xFilter in this order: the partition key (GetItem,
** BatchGetItem, Query), the sort-key constraints in bit order, LIMIT,
** OFFSET.
**
** The choice, cheapest first (estimatedCost):
**
**   GetItem       table PK = ? AND table SK = ?                 cost 1
**   BatchGetItem  the same with IN on either                    cost 5
**   Query         PK = ? (or IN) on the table or an index,
**                 sort-key conditions narrowing it further      cost 5..100
**                 (an index costs a little more than the table, and an
**                 index whose projection lacks a used column costs
**                 double: its rows are fetched again by key)
**   Scan          everything else                               cost rows*10
**
** keys = ? (the hidden column given a JSON key list) wins over all of
** these whenever SQLite can give its value (dd_plan_keys): BatchGetItem of
** the list, cost 2.
**
** Only constraints with BINARY collation are pushed.  Every constraint
** is left for SQLite to check again (omit=0): the DynamoDB call selects a
** superset.  LIKE on a sort key becomes the range it implies in binary
** order ([upper(prefix), successor(lower(prefix))), a superset of the
** case-insensitive matches); GLOB 'p*' and begins_with(SK, 'p') become
** begins_with.  LIMIT is pushed only when every WHERE term is a
** constraint of this plan, and it is used (xFilter) only when the call
** enforces each exactly.  With scan=deny a Scan costs 1e300 and xFilter
** refuses to run it, naming the key columns that would avoid it.
*/
enum { DD_OP_SCAN = 0, DD_OP_GET, DD_OP_BATCH, DD_OP_QUERY };
enum {
  DD_SK_NONE = 0,
  DD_SK_EQ,
  DD_SK_GT,
  DD_SK_GE,
  DD_SK_LT,
  DD_SK_LE,
  DD_SK_LIKE,
  DD_SK_GLOB,
  DD_SK_BEGINS
};
#define DD_PK_IN    (1 << 7)
#define DD_SK_IN    (1 << 8)
#define DD_DESC     (1 << 9)
#define DD_LIMIT    (1 << 10)
#define DD_OFFSET   (1 << 11)
#define DD_SK_SHIFT 12
#define DD_FETCH    (1 << 28)
#define DD_KEYS     (1 << 29)

/* The function-constraint op xFindFunction assigns to begins_with. */
#define DD_FUNC_BEGINS_WITH SQLITE_INDEX_CONSTRAINT_FUNCTION

typedef struct dd_plan {
  int op, iPath;
  int iPkCons; /* constraint index of PK = ?, or -1 */
  int bPkIn, bSkIn;
  int nSk;
  int aSkCons[DD_MAX_SK];
  int aSkKind[DD_MAX_SK];
  double cost, rows;
} dd_plan;

/* The DD_SK_ kind of constraint c on a sort key, or DD_SK_NONE. */
static int dd_sk_kind(const struct sqlite3_index_constraint *c) {
  switch(c->op) {
  case SQLITE_INDEX_CONSTRAINT_EQ: return DD_SK_EQ;
  case SQLITE_INDEX_CONSTRAINT_GT: return DD_SK_GT;
  case SQLITE_INDEX_CONSTRAINT_GE: return DD_SK_GE;
  case SQLITE_INDEX_CONSTRAINT_LT: return DD_SK_LT;
  case SQLITE_INDEX_CONSTRAINT_LE: return DD_SK_LE;
  case SQLITE_INDEX_CONSTRAINT_LIKE: return DD_SK_LIKE;
  case SQLITE_INDEX_CONSTRAINT_GLOB: return DD_SK_GLOB;
  case DD_FUNC_BEGINS_WITH: return DD_SK_BEGINS;
  default: return DD_SK_NONE;
  }
}

/* Is constraint i usable with binary comparison?  LIKE and GLOB carry
** their own semantics; ranges and EQ must compare in BINARY. */
static int dd_binary(sqlite3_index_info *pInfo, int i) {
  const char *zColl;
  int op = pInfo->aConstraint[i].op;
  if(op == SQLITE_INDEX_CONSTRAINT_LIKE ||
     op == SQLITE_INDEX_CONSTRAINT_GLOB || op == DD_FUNC_BEGINS_WITH)
    return 1;
  zColl = sqlite3_vtab_collation(pInfo, i);
  return zColl == NULL || sqlite3_stricmp(zColl, "BINARY") == 0;
}

/* Find the partition-key equality on column iCol: a plain EQ if any, else
** an IN that can be processed all at once.  Returns the constraint index
** or -1; *pbIn says whether it is an IN. */
static int dd_find_eq(sqlite3_index_info *pInfo, int iCol, int *pbIn) {
  int i, iIn = -1;
  *pbIn = 0;
  for(i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    if(!c->usable || c->iColumn != iCol ||
       c->op != SQLITE_INDEX_CONSTRAINT_EQ || !dd_binary(pInfo, i))
      continue;
    if(sqlite3_vtab_in(pInfo, i, -1)) {
      if(iIn < 0)
        iIn = i;
    } else {
      return i;
    }
  }
  if(iIn >= 0)
    *pbIn = 1;
  return iIn;
}

/* Estimate rows of one partition given the sort-key constraints. */
static double dd_partition_rows(const dd_plan *pl) {
  int i, bLo = 0, bHi = 0, bPre = 0;
  for(i = 0; i < pl->nSk; i++) {
    switch(pl->aSkKind[i]) {
    case DD_SK_EQ: return 2;
    case DD_SK_GT:
    case DD_SK_GE: bLo = 1; break;
    case DD_SK_LT:
    case DD_SK_LE: bHi = 1; break;
    default: bPre = 1;
    }
  }
  if((bLo && bHi) || (bPre && (bLo || bHi)))
    return DD_PARTITION_ROWS / 8;
  if(bPre)
    return DD_PARTITION_ROWS / 5;
  if(bLo || bHi)
    return DD_PARTITION_ROWS / 3;
  return DD_PARTITION_ROWS;
}

/* Can a Query on path pp return every row the WHERE may match?  An item
** is in an index only when it has the index's sort key: the WHERE must
** exclude the others, by the gate on the partition-key column (see
** dd_column.mGate) or by a constraint on the sort key that NULL fails.  A
** sort key that is a key of the table is on every item. */
static int dd_membership_ok(dd_vtab *p, sqlite3_index_info *pInfo,
                            const dd_path *pp) {
  int i;
  if(pp->iSk < 0 || dd_is_table_key(p, pp->iSk) ||
     (p->aCol[pp->iPk].mGate & ((sqlite3_uint64)1 << pp->iSk)))
    return 1;
  for(i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    if(c->usable && c->iColumn == pp->iSk &&
       (dd_sk_kind(c) != DD_SK_NONE ||
        c->op == SQLITE_INDEX_CONSTRAINT_ISNOTNULL))
      return 1;
  }
  return 0;
}

/* Does every item a Query on pp returns pass the gate of its partition
** key column (the gate asks for no more than pp's own sort key)? */
static int dd_gate_within(const dd_vtab *p, const dd_path *pp) {
  sqlite3_uint64 mSk = pp->iSk >= 0 ? (sqlite3_uint64)1 << pp->iSk : 0;
  return (p->aCol[pp->iPk].mGate & ~mSk) == 0;
}

/* The columns a statement needs read: those it uses (colUsed) and the
** gates of those (a column's value depends on its gate's attributes). */
static sqlite3_uint64 dd_cols_needed(const dd_vtab *p, sqlite3_uint64 mUsed) {
  sqlite3_uint64 m = mUsed;
  int c;
  for(c = 0; c < p->nCol && c < 64; c++)
    if(mUsed & ((sqlite3_uint64)1 << c))
      m |= p->aCol[c].mGate;
  return m;
}

/* Fill pl with the best Query (or GetItem/BatchGetItem on path 0) on path
** iPath.  mUsed: the columns the statement needs (dd_cols_needed).
** Returns 0 when the path cannot be used. */
static int dd_plan_path(dd_vtab *p, sqlite3_index_info *pInfo, int iPath,
                        sqlite3_uint64 mUsed, dd_plan *pl) {
  const dd_path *pp = &p->aPath[iPath];
  int i, bIn, iSkEq = -1, bSkIn = 0;
  memset(pl, 0, sizeof(*pl));
  pl->iPath = iPath;
  pl->iPkCons = dd_find_eq(pInfo, pp->iPk, &bIn);
  if(pl->iPkCons < 0)
    return 0;
  /* an index holds only items that have its sort key: when the WHERE
  ** asks for items without it, the index has none of them */
  for(i = 0; i < pInfo->nConstraint && iPath > 0 && pp->iSk >= 0; i++)
    if(pInfo->aConstraint[i].usable &&
       pInfo->aConstraint[i].iColumn == pp->iSk &&
       pInfo->aConstraint[i].op == SQLITE_INDEX_CONSTRAINT_ISNULL)
      return 0;
  if(!dd_membership_ok(p, pInfo, pp))
    return 0;
  pl->bPkIn = bIn;
  if(pp->iSk >= 0)
    iSkEq = dd_find_eq(pInfo, pp->iSk, &bSkIn);
  if(iPath == 0 && (pp->iSk < 0 || iSkEq >= 0)) {
    /* the full primary key: GetItem, or BatchGetItem for IN lists */
    if(pp->iSk >= 0) {
      pl->nSk = 1;
      pl->aSkCons[0] = iSkEq;
      pl->aSkKind[0] = DD_SK_EQ;
      pl->bSkIn = bSkIn;
    }
    pl->op = (pl->bPkIn || pl->bSkIn) ? DD_OP_BATCH : DD_OP_GET;
    pl->rows = pl->op == DD_OP_GET ? 1 : 5;
    pl->cost = pl->rows;
    return 1;
  }
  pl->op = DD_OP_QUERY;
  if(pp->iSk >= 0 && iSkEq >= 0 && !bSkIn) {
    pl->nSk = 1;
    pl->aSkCons[0] = iSkEq;
    pl->aSkKind[0] = DD_SK_EQ;
  } else if(pp->iSk >= 0) {
    for(i = 0; i < pInfo->nConstraint && pl->nSk < DD_MAX_SK; i++) {
      const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
      int k = dd_sk_kind(c);
      if(!c->usable || c->iColumn != pp->iSk || k == DD_SK_NONE ||
         k == DD_SK_EQ || !dd_binary(pInfo, i))
        continue;
      if((k == DD_SK_LIKE || k == DD_SK_GLOB || k == DD_SK_BEGINS) &&
         p->aCol[pp->iSk].type != DDB_S)
        continue; /* prefixes only make sense for strings */
      pl->aSkCons[pl->nSk] = i;
      pl->aSkKind[pl->nSk] = k;
      pl->nSk++;
    }
  }
  pl->rows = dd_partition_rows(pl) * (pl->bPkIn ? 5 : 1);
  pl->cost = 5 + pl->rows;
  if(iPath > 0)
    pl->cost += 1; /* on a tie, prefer the table: reads are consistent-able */
  if((mUsed & ~pp->mCover) != 0)
    pl->cost = pl->cost * 2 + 10; /* rows must be fetched again by key */
  return 1;
}

/* Is every WHERE term a usable constraint that the plan passes on? */
static int dd_all_used(sqlite3_index_info *pInfo) {
  int i;
  for(i = 0; i < pInfo->nConstraint; i++) {
    int op = pInfo->aConstraint[i].op;
    if(op == SQLITE_INDEX_CONSTRAINT_LIMIT ||
       op == SQLITE_INDEX_CONSTRAINT_OFFSET)
      continue;
    if(!pInfo->aConstraint[i].usable ||
       pInfo->aConstraintUsage[i].argvIndex <= 0)
      return 0;
  }
  return 1;
}

/* Can the plan deliver rows in the ORDER BY's order?  Sets *pbDesc. */
static int dd_order_ok(dd_vtab *p, sqlite3_index_info *pInfo,
                       const dd_plan *pl, int *pbDesc) {
  const dd_path *pp = &p->aPath[pl->iPath];
  int i, dir = -1;
  *pbDesc = 0;
  if(pInfo->nOrderBy == 0)
    return 1;
  if(pl->op == DD_OP_GET)
    return 1; /* at most one row */
  if(pl->op != DD_OP_QUERY || pl->bPkIn)
    return 0;
  for(i = 0; i < pInfo->nOrderBy; i++) {
    const struct sqlite3_index_orderby *o = &pInfo->aOrderBy[i];
    if(o->iColumn == pp->iPk)
      continue; /* constant within the partition */
    if(o->iColumn != pp->iSk || pp->iSk < 0)
      return 0;
    if(dir >= 0 && dir != o->desc)
      return 0;
    dir = o->desc;
  }
  *pbDesc = dir == 1;
  return 1;
}

/* Write the plan for people into idxStr. */

/* Append attribute name z to s as the plan writes names: bare when it is
** an identifier, else in double quotes with quotes doubled. */
static void dd_name(sqlite3_str *s, const char *z) {
  int i, bBare = z[0] != 0 && !(z[0] >= '0' && z[0] <= '9');
  for(i = 0; z[i] && bBare; i++)
    bBare = (z[i] >= 'a' && z[i] <= 'z') || (z[i] >= 'A' && z[i] <= 'Z') ||
            (z[i] >= '0' && z[i] <= '9') || z[i] == '_';
  if(bBare) {
    sqlite3_str_appendall(s, z);
    return;
  }
  sqlite3_str_appendchar(s, 1, '"');
  for(i = 0; z[i]; i++) {
    if(z[i] == '"')
      sqlite3_str_appendchar(s, 1, '"');
    sqlite3_str_appendchar(s, 1, z[i]);
  }
  sqlite3_str_appendchar(s, 1, '"');
}

static const char *const azOp[] = {"", "=", ">", ">=", "<", "<="};

/* Write the plan for people into idxStr (see the grammar above
** dynamodbBestIndex). */
static char *dd_plan_str(dd_vtab *p, const dd_plan *pl, const dd_extra *x,
                         int bDesc, int bLimit) {
  const dd_path *pp = &p->aPath[pl->iPath];
  sqlite3_str *s = sqlite3_str_new(0);
  int i, nLo = 0, nHi = 0, nPre = 0, nEq = 0;
  switch(pl->op) {
  case DD_OP_SCAN: sqlite3_str_appendall(s, "Scan"); break;
  case DD_OP_GET: sqlite3_str_appendall(s, "GetItem ("); break;
  case DD_OP_BATCH: sqlite3_str_appendall(s, "BatchGetItem ("); break;
  default:
    sqlite3_str_appendall(s, "Query");
    if(pp->pIdx->name) {
      sqlite3_str_appendchar(s, 1, ' ');
      dd_name(s, pp->pIdx->name);
    }
    sqlite3_str_appendall(s, " (");
  }
  if(pl->op != DD_OP_SCAN) {
    dd_name(s, p->aCol[pp->iPk].zName);
    sqlite3_str_appendall(s, pl->bPkIn ? " IN (...)" : " = ?");
    for(i = 0; i < pl->nSk; i++) {
      switch(pl->aSkKind[i]) {
      case DD_SK_EQ: nEq++; break;
      case DD_SK_GT:
      case DD_SK_GE: nLo++; break;
      case DD_SK_LT:
      case DD_SK_LE: nHi++; break;
      default: nPre++;
      }
    }
    if(pl->nSk > 0) {
      const char *zSk = p->aCol[pp->iSk].zName;
      sqlite3_str_appendall(s, " AND ");
      if(nEq) {
        dd_name(s, zSk);
        sqlite3_str_appendall(s, pl->bSkIn ? " IN (...)" : " = ?");
      } else if(nPre == 1 && nLo + nHi == 0 && pl->aSkKind[0] != DD_SK_LIKE) {
        sqlite3_str_appendall(s, "begins_with(");
        dd_name(s, zSk);
        sqlite3_str_appendall(s, ", ?)");
      } else {
        dd_name(s, zSk);
        if(nPre || (nLo && nHi))
          sqlite3_str_appendall(s, " BETWEEN ? AND ?");
        else
          sqlite3_str_appendf(s, " %s ?", azOp[pl->aSkKind[0]]);
      }
    }
    sqlite3_str_appendall(s, ")");
  }
  if(x->nFilter) {
    sqlite3_str_appendall(s, " FILTER (");
    for(i = 0; i < x->nFilter; i++) {
      if(i)
        sqlite3_str_appendall(s, " AND ");
      if(x->aFilterKind[i] == DD_SK_BEGINS) {
        sqlite3_str_appendall(s, "begins_with(");
        dd_name(s, p->aCol[x->aFilterCol[i]].zName);
        sqlite3_str_appendall(s, ", ?)");
      } else {
        dd_name(s, p->aCol[x->aFilterCol[i]].zName);
        sqlite3_str_appendf(s, " %s ?", azOp[x->aFilterKind[i]]);
      }
    }
    sqlite3_str_appendall(s, ")");
  }
  if(x->mProj && !x->bCount) {
    int n = 0;
    sqlite3_str_appendall(s, " PROJECT (");
    for(i = 0; i < p->nCol && i < 64; i++)
      if(x->mProj & ((sqlite3_uint64)1 << i)) {
        if(n++)
          sqlite3_str_appendall(s, ", ");
        dd_name(s, p->aCol[i].zName);
      }
    sqlite3_str_appendall(s, ")");
  }
  if(x->bCount)
    sqlite3_str_appendall(s, " COUNT");
  if(bDesc)
    sqlite3_str_appendall(s, " DESC");
  if(bLimit)
    sqlite3_str_appendall(s, " LIMIT ?");
  return sqlite3_str_finish(s);
}

/*
** The plan as xFilter reads it
**
** idxStr holds two strings one after the other: the plan for people
** (EXPLAIN QUERY PLAN shows it; nothing ever parses it), its NUL, then
** the plan for xFilter, a dd_plancode: a header and one fixed block per
** argument of xFilter, in argv order.  SQLite hands xFilter the very
** pointer xBestIndex set, so the bytes after the first NUL arrive
** untouched; xFilter checks the magic and every field before trusting
** them, and an idxStr without them is an error, never a guess.  Names
** never enter the machine half: columns travel as numbers, so no
** attribute or index name (COUNT, PROJECT, "a b", 600 bytes) can be taken
** for part of the plan.
**
**   header   magic "ddplan1" (8 bytes with its NUL), nArg (== argc),
**            mProj (the columns to project, bit c for column c < 64;
**            0: whole items), bCount (Select=COUNT)
**   block    role: DD_ARG_PK, _SK, _FILTER, _LIMIT, _OFFSET or _KEYS
**            (the key list of keys = ?, col -1);
**            kind: DD_SK_EQ .. DD_SK_BEGINS for _SK and _FILTER;
**            col: the column the argument is compared with (-1: none)
*/
enum {
  DD_ARG_PK = 1,
  DD_ARG_SK,
  DD_ARG_FILTER,
  DD_ARG_LIMIT,
  DD_ARG_OFFSET,
  DD_ARG_KEYS
};
/* xFilter arguments at the most: PK, the sort-key constraints, the
** filters, LIMIT and OFFSET. */
#define DD_MAX_ARGS   (1 + DD_MAX_SK + DD_MAX_FILTER + 2)
#define DD_PLAN_MAGIC "ddplan1"

typedef struct dd_plancode {
  char zMagic[8];
  int nArg;
  int bCount;
  sqlite3_uint64 mProj;
  struct {
    unsigned char role, kind;
    short col;
  } aArg[DD_MAX_ARGS];
} dd_plancode;

/* Add an argument block to pc; returns its argvIndex (1-based). */
static int dd_plan_arg(dd_plancode *pc, int role, int kind, int col) {
  pc->aArg[pc->nArg].role = (unsigned char)role;
  pc->aArg[pc->nArg].kind = (unsigned char)kind;
  pc->aArg[pc->nArg].col = (short)col;
  return ++pc->nArg;
}

/* Join zText (sqlite3_free()d here) and pc into one idxStr
** (sqlite3_malloc()ed); NULL when out of memory. */
static char *dd_plan_encode(char *zText, const dd_plancode *pc) {
  size_t n;
  char *z;
  if(!zText)
    return NULL;
  n = strlen(zText) + 1;
  z = sqlite3_malloc64(n + sizeof(*pc));
  if(z) {
    memcpy(z, zText, n);
    memcpy(z + n, pc, sizeof(*pc));
  }
  sqlite3_free(zText);
  return z;
}

/* Read the machine half of idxStr into x for argc arguments.  Returns 0,
** or -1 when it is missing or not one dd_plan_encode wrote for this
** table. */
static int dd_plan_decode(dd_vtab *p, const char *idxStr, int argc,
                          dd_extra *x) {
  dd_plancode pc;
  int i;
  memset(x, 0, sizeof(*x));
  if(!idxStr)
    return -1;
  memcpy(&pc, idxStr + strlen(idxStr) + 1, sizeof(pc));
  if(memcmp(pc.zMagic, DD_PLAN_MAGIC, sizeof(pc.zMagic)) != 0 ||
     pc.nArg != argc || pc.nArg < 0 || pc.nArg > DD_MAX_ARGS)
    return -1;
  if(p->nCol < 64 && (pc.mProj >> p->nCol) != 0)
    return -1;
  x->mProj = pc.mProj;
  x->bCount = pc.bCount != 0;
  for(i = 0; i < pc.nArg; i++) {
    int role = pc.aArg[i].role, kind = pc.aArg[i].kind, col = pc.aArg[i].col;
    if(role < DD_ARG_PK || role > DD_ARG_KEYS || col < -1 || col >= p->nCol)
      return -1;
    if(role != DD_ARG_FILTER)
      continue;
    if(x->nFilter >= DD_MAX_FILTER || col < 0 ||
       (kind != DD_SK_BEGINS && (kind < DD_SK_EQ || kind > DD_SK_LE)))
      return -1;
    x->aFilterCol[x->nFilter] = col;
    x->aFilterKind[x->nFilter++] = kind;
  }
  return 0;
}

/* The plan of keys = ? (the hidden column keys, or the table-valued form
** shop(?)): BatchGetItem of every key of the list, the only argument.
** The constraint is omitted: the column reads back the list it was given.
** Returns SQLITE_NOTFOUND when the WHERE has no keys = ?, SQLITE_CONSTRAINT
** when it has one SQLite cannot give yet (a join's later table: SQLite
** then tries another order; without the list the hidden column would read
** NULL and match nothing), else SQLITE_OK with pInfo filled. */
static int dd_plan_keys(dd_vtab *p, sqlite3_index_info *pInfo) {
  dd_plancode pc;
  char zName[32];
  int i, iKeys = -1, bUnusable = 0;
  for(i = 0; i < pInfo->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
    if(c->iColumn != DD_COL_KEYS(p) || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
      continue;
    if(!c->usable)
      bUnusable = 1;
    else if(iKeys < 0)
      iKeys = i;
  }
  if(iKeys < 0)
    return bUnusable ? SQLITE_CONSTRAINT : SQLITE_NOTFOUND;
  memset(&pc, 0, sizeof(pc));
  memcpy(pc.zMagic, DD_PLAN_MAGIC, sizeof(pc.zMagic));
  pInfo->aConstraintUsage[iKeys].argvIndex =
      dd_plan_arg(&pc, DD_ARG_KEYS, 0, -1);
  pInfo->aConstraintUsage[iKeys].omit = 1;
  pInfo->idxNum = DD_OP_BATCH | DD_KEYS;
  dd_extra_col_name(p, "keys", zName);
  pInfo->idxStr =
      dd_plan_encode(sqlite3_mprintf("BatchGetItem (%s = ?)", zName), &pc);
  pInfo->needToFreeIdxStr = 1;
  if(!pInfo->idxStr)
    return SQLITE_NOMEM;
  pInfo->estimatedCost = 2;
  pInfo->estimatedRows = 100;
  return SQLITE_OK;
}

static int dynamodbBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo) {
  dd_vtab *p = (dd_vtab *)pVtab;
  dd_plan best, cand;
  dd_extra extra;
  dd_plancode pc;
  int i, bDesc = 0, bOrder, iLimit = -1, iOffset = -1, bFetch;
  int bReuse, rc;
  int idxNum;
  double scanRows;
  sqlite3_uint64 mUsed;

  if(p->zDefer) {
    /* bad options or no stored description: said at the first use */
    dd_error(p, "%s", p->zDefer);
    return SQLITE_ERROR;
  }
  mUsed = dd_cols_needed(p, pInfo->colUsed);

  /* keys = ?: the whole key list in one BatchGetItem plan */
  rc = dd_plan_keys(p, pInfo);
  if(rc != SQLITE_NOTFOUND)
    return rc;

  /* the Scan fallback */
  memset(&best, 0, sizeof(best));
  best.op = DD_OP_SCAN;
  scanRows = p->pDesc->item_count > DD_SCAN_MIN_ROWS
                 ? (double)p->pDesc->item_count
                 : DD_SCAN_MIN_ROWS;
  best.rows = scanRows;
  best.cost = p->bScanDeny ? 1e300 : scanRows * 10;
  for(i = 0; i < p->nPath; i++) {
    if(dd_plan_path(p, pInfo, i, mUsed, &cand) && cand.cost < best.cost)
      best = cand;
  }

  /* hand the arguments out in the documented order */
  memset(&pc, 0, sizeof(pc));
  memcpy(pc.zMagic, DD_PLAN_MAGIC, sizeof(pc.zMagic));
  idxNum = best.op | (best.iPath << 2);
  if(best.op != DD_OP_SCAN) {
    pInfo->aConstraintUsage[best.iPkCons].argvIndex =
        dd_plan_arg(&pc, DD_ARG_PK, DD_SK_EQ, p->aPath[best.iPath].iPk);
    /* PK = ? is enforced exactly by every keyed call (values convert as
    ** the column's affinity would), so SQLite need not check it again */
    pInfo->aConstraintUsage[best.iPkCons].omit =
        !best.bPkIn && dd_gate_within(p, &p->aPath[best.iPath]);
    if(best.bPkIn) {
      sqlite3_vtab_in(pInfo, best.iPkCons, 1);
      idxNum |= DD_PK_IN;
    }
    for(i = 0; i < best.nSk; i++) {
      pInfo->aConstraintUsage[best.aSkCons[i]].argvIndex = dd_plan_arg(
          &pc, DD_ARG_SK, best.aSkKind[i], p->aPath[best.iPath].iSk);
      /* likewise SK = ? */
      pInfo->aConstraintUsage[best.aSkCons[i]].omit =
          best.aSkKind[i] == DD_SK_EQ && !best.bSkIn;
      idxNum |= best.aSkKind[i] << (DD_SK_SHIFT + 4 * i);
    }
    if(best.bSkIn) {
      sqlite3_vtab_in(pInfo, best.aSkCons[0], 1);
      idxNum |= DD_SK_IN;
    }
  }
  /* FILTER: constraints on key columns the key condition does not use */
  memset(&extra, 0, sizeof(extra));
  bFetch =
      best.op == DD_OP_QUERY && (mUsed & ~p->aPath[best.iPath].mCover) != 0;
  /* A Query answered from the query cache serves later statements on the
  ** same key condition only when it asked for whole items: with the query
  ** cache on, a Query pushes no FILTER, PROJECT or COUNT (a Scan always
  ** does: a full table is what the cache must not be flushed with) */
  bReuse =
      best.op == DD_OP_QUERY && p->pol.query_ttl > 0 && !p->pol.consistent;
  if((best.op == DD_OP_QUERY || best.op == DD_OP_SCAN) && !bFetch && !bReuse) {
    const dd_path *pp = &p->aPath[best.iPath];
    for(i = 0; i < pInfo->nConstraint && extra.nFilter < DD_MAX_FILTER; i++) {
      const struct sqlite3_index_constraint *c = &pInfo->aConstraint[i];
      int k = dd_sk_kind(c);
      if(!c->usable || c->iColumn < 0 || c->iColumn >= p->nCol ||
         pInfo->aConstraintUsage[i].argvIndex > 0 ||
         (best.op == DD_OP_QUERY &&
          (c->iColumn == pp->iPk || c->iColumn == pp->iSk)))
        continue;
      if(k == DD_SK_NONE || k == DD_SK_LIKE || k == DD_SK_GLOB ||
         !dd_binary(pInfo, i) ||
         (k == DD_SK_EQ && sqlite3_vtab_in(pInfo, i, -1)) ||
         (k == DD_SK_BEGINS && p->aCol[c->iColumn].type != DDB_S))
        continue;
      pInfo->aConstraintUsage[i].argvIndex =
          dd_plan_arg(&pc, DD_ARG_FILTER, k, c->iColumn);
      extra.aFilterCol[extra.nFilter] = c->iColumn;
      extra.aFilterKind[extra.nFilter] = k;
      extra.nFilter++;
    }
  }
  /* PROJECT: only the columns used (and the table's keys, for rowids)
  ** when neither item nor item_raw is; COUNT: when every column used has
  ** one value known from an equality the call enforces */
  if((best.op == DD_OP_QUERY || best.op == DD_OP_SCAN) && !bFetch && !bReuse &&
     (pInfo->colUsed & DD_COLS_BEYOND(p->nCol)) == 0) {
    const dd_path *pp = &p->aPath[best.iPath];
    sqlite3_uint64 mKnown = 0;
    extra.mProj = mUsed | ((sqlite3_uint64)1 << p->aPath[0].iPk);
    if(p->aPath[0].iSk >= 0)
      extra.mProj |= (sqlite3_uint64)1 << p->aPath[0].iSk;
    /* a gated column is known only when the call enforces its gate: the
    ** Query's own partition key, gated by no more than the index's sort
    ** key (every item of the index has it) */
    if(best.op == DD_OP_QUERY) {
      if(dd_gate_within(p, pp))
        mKnown |= (sqlite3_uint64)1 << pp->iPk;
      if(best.nSk == 1 && best.aSkKind[0] == DD_SK_EQ &&
         p->aCol[pp->iSk].mGate == 0)
        mKnown |= (sqlite3_uint64)1 << pp->iSk;
    }
    for(i = 0; i < extra.nFilter; i++)
      if(extra.aFilterKind[i] == DD_SK_EQ &&
         p->aCol[extra.aFilterCol[i]].mGate == 0)
        mKnown |= (sqlite3_uint64)1 << extra.aFilterCol[i];
    extra.bCount = (pInfo->colUsed & ~mKnown) == 0;
  }
  bOrder = dd_order_ok(p, pInfo, &best, &bDesc);
  if(bOrder && pInfo->nOrderBy > 0) {
    pInfo->orderByConsumed = 1;
    if(bDesc)
      idxNum |= DD_DESC;
  }
  /* LIMIT/OFFSET: only when nothing is left unpassed and order is ours */
  for(i = 0; i < pInfo->nConstraint; i++) {
    if(!pInfo->aConstraint[i].usable)
      continue;
    if(pInfo->aConstraint[i].op == SQLITE_INDEX_CONSTRAINT_LIMIT)
      iLimit = i;
    if(pInfo->aConstraint[i].op == SQLITE_INDEX_CONSTRAINT_OFFSET)
      iOffset = i;
  }
  if(iLimit >= 0 && bOrder && best.op != DD_OP_GET &&
     (mUsed & ~p->aPath[best.iPath].mCover) == 0 && dd_all_used(pInfo)) {
    pInfo->aConstraintUsage[iLimit].argvIndex =
        dd_plan_arg(&pc, DD_ARG_LIMIT, 0, -1);
    idxNum |= DD_LIMIT;
    if(iOffset >= 0) {
      pInfo->aConstraintUsage[iOffset].argvIndex =
          dd_plan_arg(&pc, DD_ARG_OFFSET, 0, -1);
      idxNum |= DD_OFFSET;
    }
  }
  if(bFetch)
    idxNum |= DD_FETCH;
  pInfo->idxNum = idxNum;
  pc.mProj = extra.bCount ? 0 : extra.mProj;
  pc.bCount = extra.bCount;
  pInfo->idxStr = dd_plan_encode(dd_plan_str(p, &best, &extra,
                                             bDesc && pInfo->orderByConsumed,
                                             (idxNum & DD_LIMIT) != 0),
                                 &pc);
  pInfo->needToFreeIdxStr = 1;
  if(!pInfo->idxStr)
    return SQLITE_NOMEM;
  pInfo->estimatedCost = best.cost;
  pInfo->estimatedRows = (sqlite3_int64)best.rows;
  if(best.op == DD_OP_GET)
    pInfo->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
  return SQLITE_OK;
}

/* ------------------------------------------------------------------------
** Values: SQL -> DynamoDB key values
*/
static void dd_val_clear(dd_val *v) {
  free(v->zBuf); /* libc: hot path, and never handed to SQLite */
  memset(v, 0, sizeof(*v));
}

/* Can v be the value of a key attribute of at most nMax bytes (UTF-8 for
** S, raw for B; N has no byte limit)?  DynamoDB refuses longer key values
** in a key condition, and no stored key is longer: such a value matches
** nothing. */
static int dd_key_fits(const dd_val *v, int nMax) {
  return v->av.type == DDB_N || v->nRaw <= nMax;
}

/* Forget v (a value that matches nothing).  Returns SQLITE_OK. */
static int dd_drop(dd_val *v) {
  dd_val_clear(v);
  return SQLITE_OK;
}

/* Is z[0..n) valid UTF-8 (no surrogates, no overlongs)? */
static int dd_utf8_ok(const unsigned char *z, int n) {
  int i = 0;
  while(i < n) {
    unsigned c = z[i];
    int len;
    unsigned cp;
    if(c < 0x80) {
      i++;
      continue;
    }
    if(c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if(c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if(c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    } else
      return 0;
    if(i + len > n)
      return 0;
    for(int k = 1; k < len; k++) {
      if((z[i + k] & 0xc0) != 0x80)
        return 0;
      cp = (cp << 6) | (z[i + k] & 0x3f);
    }
    if((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
       (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
      return 0;
    i += len;
  }
  return 1;
}

/* Set v to a copy of z[0..n) as a value of type t. */
static int dd_val_text(dd_val *v, ddb_type t, const char *z, int n) {
  v->zBuf = malloc((size_t)n + 1);
  if(!v->zBuf)
    return SQLITE_NOMEM;
  memcpy(v->zBuf, z, (size_t)n);
  v->zBuf[n] = 0;
  v->av.type = t;
  v->av.text = v->zBuf;
  v->av.n = (uint32_t)n;
  v->raw = (const unsigned char *)v->zBuf;
  v->nRaw = n;
  return SQLITE_OK;
}

/*
** The DynamoDB number that SQL value pVal stands for as a key of type N,
** the way NUMERIC affinity sees it.  An INTEGER is its digits; a REAL the
** shortest text that reads back as the same double (0.1 -> "0.1"); TEXT
** that is a number with more digits than a double holds is kept digit for
** digit (a 38-digit key given as text is matched exactly, not rounded);
** other TEXT that looks like a number (' 1 ', '1.5') is converted as
** SQLite would.  zBuf (at least 64 bytes) holds the text when it is not
** pVal's own.
**
** Returns DD_NUM_OK with (*pz, *pn) the text (valid while pVal and zBuf are)
** and *pd its value as a double; DD_NUM_NONE when pVal is no number
** (NULL, a blob, other text); DD_NUM_RANGE when it is a number DynamoDB
** cannot hold (over 38 significant digits, magnitude 1E126 or more, or
** below 1E-130), with (*pz, *pn) its text for a message.
*/
int dd_number_text(sqlite3_value *pVal, char *zBuf, size_t nBuf,
                   const char **pz, int *pn, double *pd) {
  int eType = sqlite3_value_type(pVal);
  int rc = DD_NUM_OK;
  sqlite3_value *pDup = NULL;
  *pz = "";
  *pn = 0;
  *pd = 0;
  if(eType == SQLITE_TEXT) {
    const char *z = (const char *)sqlite3_value_text(pVal);
    int n = sqlite3_value_bytes(pVal);
    if(z && ddb_number_classify(z, (size_t)n, NULL, NULL) == DDB_NUM_TEXT) {
      if(*z == '+') {
        z++;
        n--;
      }
      *pz = z;
      *pn = n;
      *pd = strtod(z, NULL);
      return ddb_number_fits(z, (size_t)n) ? DD_NUM_OK : DD_NUM_RANGE;
    }
    /* NUMERIC affinity applies to the other operand: text that looks
    ** like a number compares as that number, other text never equals */
    pDup = sqlite3_value_dup(pVal);
    if(!pDup)
      return DD_NUM_NONE;
    eType = sqlite3_value_numeric_type(pDup);
    pVal = pDup;
  }
  if(eType == SQLITE_INTEGER) {
    sqlite3_int64 i = sqlite3_value_int64(pVal);
    snprintf(zBuf, nBuf, "%lld", (long long)i);
    *pd = (double)i;
  } else if(eType == SQLITE_FLOAT) {
    *pd = sqlite3_value_double(pVal);
    if(ddb_number_from_double(*pd, zBuf, nBuf))
      rc = DD_NUM_RANGE;
  } else {
    rc = DD_NUM_NONE;
  }
  sqlite3_value_free(pDup);
  if(rc != DD_NUM_NONE) {
    *pz = zBuf;
    *pn = (int)strlen(zBuf);
  }
  return rc;
}

/*
** Convert SQL value pVal to a value of a key of type t, the way SQLite's
** comparison with a column of that type's affinity would see it.
**
** Returns SQLITE_OK with *pbOk=1 and v filled when the value can be sent;
** *pbOk=0 when no key value of that type can compare equal to it (NULL, a
** blob against a string, text that is no number against a number, a
** number DynamoDB cannot hold, an empty or invalid string).
*/
static int dd_val_from_sql(sqlite3_value *pVal, ddb_type t, dd_val *v,
                           int *pbOk) {
  int eType = sqlite3_value_type(pVal);
  int rc = SQLITE_OK;
  memset(v, 0, sizeof(*v));
  *pbOk = 0;
  if(eType == SQLITE_NULL)
    return SQLITE_OK;
  if(t == DDB_S) {
    const unsigned char *z;
    int n;
    if(eType == SQLITE_BLOB)
      return SQLITE_OK; /* TEXT affinity leaves blobs alone: never equal */
    z = sqlite3_value_text(pVal); /* numbers render as TEXT affinity would */
    n = sqlite3_value_bytes(pVal);
    if(!z)
      return SQLITE_NOMEM;
    if(n == 0 || !dd_utf8_ok(z, n))
      return SQLITE_OK; /* no DynamoDB key is empty or invalid UTF-8 */
    rc = dd_val_text(v, DDB_S, (const char *)z, n);
    *pbOk = rc == SQLITE_OK;
    return rc;
  }
  if(t == DDB_N) {
    char zNum[64];
    const char *z;
    int n;
    double d;
    if(dd_number_text(pVal, zNum, sizeof(zNum), &z, &n, &d) != DD_NUM_OK)
      return SQLITE_OK; /* no number, or none DynamoDB can hold */
    rc = dd_val_text(v, DDB_N, z, n);
    if(rc == SQLITE_OK) {
      int64_t i;
      v->num = d;
      if(ddb_number_classify(z, (size_t)n, &i, NULL) == DDB_NUM_INT) {
        v->i64 = i;
        v->bInt = 1;
      }
    }
    *pbOk = rc == SQLITE_OK;
    return rc;
  }
  /* DDB_B */
  if(eType == SQLITE_BLOB) {
    int n = sqlite3_value_bytes(pVal);
    const void *z = sqlite3_value_blob(pVal);
    size_t cap = ((size_t)n + 2) / 3 * 4 + 1;
    if(n == 0)
      return SQLITE_OK;
    v->zBuf = malloc(cap + (size_t)n);
    if(!v->zBuf)
      return SQLITE_NOMEM;
    ddb_base64_encode(z, (size_t)n, v->zBuf, cap);
    memcpy(v->zBuf + cap, z, (size_t)n); /* raw bytes, for ordering */
    v->av.type = DDB_B;
    v->av.text = v->zBuf;
    v->av.n = (uint32_t)strlen(v->zBuf);
    v->raw = (const unsigned char *)v->zBuf + cap;
    v->nRaw = n;
    *pbOk = 1;
  }
  return SQLITE_OK;
}

/* Compare two key values of the same type in DynamoDB's order. */
static int dd_val_cmp(const dd_val *a, const dd_val *b) {
  int n, c;
  if(a->av.type == DDB_N) {
    /* exact for 64-bit integers (a double holds only 53 bits) */
    long double x = a->bInt ? (long double)a->i64 : (long double)a->num;
    long double y = b->bInt ? (long double)b->i64 : (long double)b->num;
    if(a->bInt && b->bInt)
      return a->i64 < b->i64 ? -1 : a->i64 > b->i64 ? 1 : 0;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  n = a->nRaw < b->nRaw ? a->nRaw : b->nRaw;
  c = n ? memcmp(a->raw, b->raw, (size_t)n) : 0;
  return c ? c : a->nRaw - b->nRaw;
}

/* ------------------------------------------------------------------------
** Sort-key conditions: from the pushed constraints to one key condition.
**
** Each constraint narrows an interval [lo, hi] (either end open or
** closed, or absent).  A prefix constraint (begins_with, GLOB, LIKE)
** gives [prefix, successor(prefix)), LIKE with the ASCII letters of its
** prefix upper-cased for lo and lower-cased for hi.  The interval becomes
** begins_with when it is exactly one prefix, else BETWEEN (closed; SQLite
** drops what an open end should have excluded) or a single comparison.
*/
typedef struct dd_interval {
  dd_val lo, hi; /* empty (av.type 0) when absent */
  int loOpen, hiOpen;
  dd_val prefix; /* set while the interval is exactly one prefix */
  int bPrefixOnly;
  int bEmpty; /* no row can match */
  int bExact; /* the condition sent selects exactly these rows */
} dd_interval;

/* The successor of prefix z[0..n) in binary order: the smallest string
** greater than every string starting with z, computed on code points so
** that the result is valid UTF-8.  Returns the length, 0 when there is
** none (the prefix is all U+10FFFF). */
static int dd_successor(const char *z, int n, char *zOut) {
  while(n > 0) {
    int i = n - 1, len;
    unsigned cp;
    while(i > 0 && ((unsigned char)z[i] & 0xc0) == 0x80)
      i--;
    len = n - i;
    {
      unsigned char c = (unsigned char)z[i];
      cp = len == 1   ? c
           : len == 2 ? (c & 0x1f)
           : len == 3 ? (c & 0x0f)
                      : (c & 0x07);
      for(int k = 1; k < len; k++)
        cp = (cp << 6) | ((unsigned char)z[i + k] & 0x3f);
    }
    if(cp >= 0x10ffff) {
      n = i;
      continue;
    }
    cp++;
    if(cp == 0xd800)
      cp = 0xe000;
    memcpy(zOut, z, (size_t)i);
    if(cp < 0x80) {
      zOut[i++] = (char)cp;
    } else if(cp < 0x800) {
      zOut[i++] = (char)(0xc0 | (cp >> 6));
      zOut[i++] = (char)(0x80 | (cp & 0x3f));
    } else if(cp < 0x10000) {
      zOut[i++] = (char)(0xe0 | (cp >> 12));
      zOut[i++] = (char)(0x80 | ((cp >> 6) & 0x3f));
      zOut[i++] = (char)(0x80 | (cp & 0x3f));
    } else {
      zOut[i++] = (char)(0xf0 | (cp >> 18));
      zOut[i++] = (char)(0x80 | ((cp >> 12) & 0x3f));
      zOut[i++] = (char)(0x80 | ((cp >> 6) & 0x3f));
      zOut[i++] = (char)(0x80 | (cp & 0x3f));
    }
    return i;
  }
  return 0;
}

/* Narrow the lower end to v (moved into the interval) if it is tighter. */
static void dd_iv_lo(dd_interval *iv, dd_val *v, int bOpen) {
  int c = iv->lo.av.type ? dd_val_cmp(v, &iv->lo) : 1;
  if(c > 0 || (c == 0 && bOpen && !iv->loOpen)) {
    dd_val_clear(&iv->lo);
    iv->lo = *v;
    iv->loOpen = bOpen;
  } else {
    dd_val_clear(v);
  }
  memset(v, 0, sizeof(*v));
}

static void dd_iv_hi(dd_interval *iv, dd_val *v, int bOpen) {
  int c = iv->hi.av.type ? dd_val_cmp(v, &iv->hi) : -1;
  if(c < 0 || (c == 0 && bOpen && !iv->hiOpen)) {
    dd_val_clear(&iv->hi);
    iv->hi = *v;
    iv->hiOpen = bOpen;
  } else {
    dd_val_clear(v);
  }
  memset(v, 0, sizeof(*v));
}

/* The literal prefix of a LIKE or GLOB pattern, ASCII-case-mapped for
** LIKE (bUpper: 1 upper, 0 lower, -1 as is).  Returns its length. */
static int dd_pattern_prefix(const char *z, int n, int bGlob, int bUpper,
                             char *zOut) {
  int i;
  for(i = 0; i < n; i++) {
    char c = z[i];
    if(bGlob ? (c == '*' || c == '?' || c == '[') : (c == '%' || c == '_'))
      break;
    if(bUpper == 1 && c >= 'a' && c <= 'z')
      c = (char)(c - 'a' + 'A');
    else if(bUpper == 0 && c >= 'A' && c <= 'Z')
      c = (char)(c - 'A' + 'a');
    zOut[i] = c;
  }
  return i;
}

/* Does the pattern consist of one literal prefix and a final wildcard,
** matching exactly the strings that start with that prefix? */
static int dd_pattern_is_prefix(const char *z, int n, int bGlob) {
  int i = 0;
  while(i < n && (bGlob ? (z[i] != '*' && z[i] != '?' && z[i] != '[')
                        : (z[i] != '%' && z[i] != '_')))
    i++;
  return i == n - 1 && z[i] == (bGlob ? '*' : '%');
}

/* Apply one constraint of kind k with value pVal to the interval. */
static int dd_iv_apply(dd_interval *iv, ddb_type t, int k, sqlite3_value *pVal,
                       int *pnPrefix) {
  dd_val v;
  int ok, rc;
  if(k == DD_SK_LIKE || k == DD_SK_GLOB || k == DD_SK_BEGINS) {
    const char *z = (const char *)sqlite3_value_text(pVal);
    int n = sqlite3_value_bytes(pVal), nLo, nHi, nSucc, bCase = 0;
    char *zLo, *zHi, *zSucc;
    if(sqlite3_value_type(pVal) == SQLITE_NULL) {
      iv->bEmpty = 1; /* x LIKE NULL is NULL: no row */
      return SQLITE_OK;
    }
    if(!z)
      return SQLITE_NOMEM;
    zLo = sqlite3_malloc64((sqlite3_uint64)n * 3 + 12);
    if(!zLo)
      return SQLITE_NOMEM;
    zHi = zLo + n + 1;
    zSucc = zHi + n + 1;
    if(k == DD_SK_BEGINS) {
      memcpy(zLo, z, (size_t)n);
      memcpy(zHi, z, (size_t)n);
      nLo = nHi = n;
    } else {
      nLo = dd_pattern_prefix(z, n, k == DD_SK_GLOB, k == DD_SK_LIKE ? 1 : -1,
                              zLo);
      nHi = dd_pattern_prefix(z, n, k == DD_SK_GLOB, k == DD_SK_LIKE ? 0 : -1,
                              zHi);
      bCase = k == DD_SK_LIKE &&
              (nLo != nHi || memcmp(zLo, zHi, (size_t)nLo) != 0);
      if(!dd_pattern_is_prefix(z, n, k == DD_SK_GLOB) || bCase)
        iv->bExact = 0;
    }
    if(nLo > DD_MAX_SK_BYTES) {
      /* every match starts with the prefix: longer than any sort key */
      iv->bEmpty = 1;
      sqlite3_free(zLo);
      return SQLITE_OK;
    }
    if(nLo == 0 || !dd_utf8_ok((unsigned char *)zLo, nLo)) {
      /* no literal prefix: no narrowing */
      iv->bExact = 0;
      sqlite3_free(zLo);
      return SQLITE_OK;
    }
    (*pnPrefix)++;
    rc = dd_val_text(&v, DDB_S, zLo, nLo);
    if(rc == SQLITE_OK) {
      if(!bCase && *pnPrefix == 1 && !iv->lo.av.type && !iv->hi.av.type) {
        dd_val_clear(&iv->prefix);
        rc = dd_val_text(&iv->prefix, DDB_S, zLo, nLo);
      }
      dd_iv_lo(iv, &v, 0);
    }
    nSucc = dd_successor(zHi, nHi, zSucc);
    if(rc == SQLITE_OK && nSucc > 0) {
      rc = dd_val_text(&v, DDB_S, zSucc, nSucc);
      if(rc == SQLITE_OK)
        dd_iv_hi(iv, &v, 1);
    }
    sqlite3_free(zLo);
    return rc;
  }
  rc = dd_val_from_sql(pVal, t, &v, &ok);
  if(rc)
    return rc;
  if(ok && !dd_key_fits(&v, DD_MAX_SK_BYTES)) {
    dd_val_clear(&v); /* no sort key equals it; as a bound: dropped */
    ok = 0;
  }
  if(!ok) {
    /* A value no key can equal, or a bound DynamoDB cannot express.
    ** NULL compares to nothing: the whole WHERE is false.  Otherwise
    ** drop the bound (a superset) unless it is an equality. */
    if(sqlite3_value_type(pVal) == SQLITE_NULL || k == DD_SK_EQ)
      iv->bEmpty = 1;
    else
      iv->bExact = 0;
    return SQLITE_OK;
  }
  switch(k) {
  case DD_SK_EQ: {
    dd_val w;
    rc = dd_val_text(&w, v.av.type, v.av.text, (int)v.av.n);
    if(rc) {
      dd_val_clear(&v);
      return rc;
    }
    w.num = v.num;
    w.i64 = v.i64;
    w.bInt = v.bInt;
    if(v.av.type == DDB_B) { /* keep raw bytes for ordering */
      dd_val_clear(&w);
      rc = dd_val_from_sql(pVal, t, &w, &ok);
      if(rc) {
        dd_val_clear(&v);
        return rc;
      }
    }
    dd_iv_lo(iv, &v, 0);
    dd_iv_hi(iv, &w, 0);
    break;
  }
  case DD_SK_GT: dd_iv_lo(iv, &v, 1); break;
  case DD_SK_GE: dd_iv_lo(iv, &v, 0); break;
  case DD_SK_LT: dd_iv_hi(iv, &v, 1); break;
  case DD_SK_LE: dd_iv_hi(iv, &v, 0); break;
  }
  return SQLITE_OK;
}

/* Turn the interval into the request's sort-key condition. */
static void dd_iv_finish(dd_interval *iv, int nPrefix, int nOther,
                         ddb_read *rd, dd_val out[2]) {
  if(iv->bEmpty)
    return;
  if(iv->lo.av.type && iv->hi.av.type) {
    int c = dd_val_cmp(&iv->lo, &iv->hi);
    if(c > 0 || (c == 0 && (iv->loOpen || iv->hiOpen))) {
      iv->bEmpty = 1;
      return;
    }
  }
  if(nPrefix == 1 && nOther == 0 && iv->prefix.av.type) {
    rd->sk_op = DDB_SK_BEGINS_WITH;
    out[0] = iv->prefix;
    memset(&iv->prefix, 0, sizeof(iv->prefix));
    return;
  }
  if(iv->lo.av.type && iv->hi.av.type) {
    if(dd_val_cmp(&iv->lo, &iv->hi) == 0) {
      rd->sk_op = DDB_SK_EQ;
      out[0] = iv->lo;
      memset(&iv->lo, 0, sizeof(iv->lo));
      return;
    }
    rd->sk_op = DDB_SK_BETWEEN;
    if(iv->loOpen || iv->hiOpen || nPrefix)
      iv->bExact = 0;
    out[0] = iv->lo;
    out[1] = iv->hi;
    memset(&iv->lo, 0, sizeof(iv->lo));
    memset(&iv->hi, 0, sizeof(iv->hi));
  } else if(iv->lo.av.type) {
    rd->sk_op = iv->loOpen ? DDB_SK_GT : DDB_SK_GE;
    out[0] = iv->lo;
    memset(&iv->lo, 0, sizeof(iv->lo));
  } else if(iv->hi.av.type) {
    rd->sk_op = iv->hiOpen ? DDB_SK_LT : DDB_SK_LE;
    out[0] = iv->hi;
    memset(&iv->hi, 0, sizeof(iv->hi));
  }
}

/* ------------------------------------------------------------------------
** Cursors
**
** Rows are held as item references in aRow: the one GetItem answer, the
** BatchGetItem answers, or the current page of a Query/Scan (read again
** by key when the index does not project a used column).  xNext walks
** aRow and fetches the next page when it runs out.
*/
static int dynamodbOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor) {
  dd_cursor *pCur = sqlite3_malloc(sizeof(*pCur));
  (void)pVtab;
  if(!pCur)
    return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->bEof = 1;
  *ppCursor = &pCur->base;
  return SQLITE_OK;
}

static void dd_rows_clear(dd_cursor *pCur) {
  int i;
  for(i = 0; pCur->aRow && i < pCur->nRow; i++)
    ddb_item_unref(pCur->aRow[i]);
  if(pCur->aRow != pCur->aRowOne)
    sqlite3_free(pCur->aRow);
  pCur->aRow = NULL;
  pCur->nRow = pCur->iRow = 0;
  pCur->pCur = NULL;
}

/* Release everything a previous xFilter left. */
static void dd_pscan_free(struct dd_pscan *s);
static void dd_progress(dd_cursor *pCur, int bEnd);

/* Forget the rendered item column of the current row (it changes). */
static void dd_item_json_drop(dd_cursor *pCur) {
  free(pCur->zItem);
  pCur->zItem = NULL;
  pCur->nItem = 0;
}

static void dd_cursor_reset(dd_cursor *pCur) {
  int i;
  dd_item_json_drop(pCur);
  dd_pscan_free(pCur->pScan); /* workers read the strings freed below */
  pCur->pScan = NULL;
  dd_progress(pCur, 1);
  pCur->nItemsSeen = pCur->nPagesSeen = 0;
  pCur->rcuSeen = 0;
  for(i = 0; i < pCur->nPk; i++)
    dd_val_clear(&pCur->aPk[i]);
  sqlite3_free(pCur->aPk);
  pCur->aPk = NULL;
  pCur->nPk = pCur->iPk = 0;
  dd_val_clear(&pCur->sk[0]);
  dd_val_clear(&pCur->sk[1]);
  for(i = 0; i < pCur->nFilter; i++)
    dd_val_clear(&pCur->aFv[i]);
  pCur->nFilter = pCur->nProj = pCur->bCount = 0;
  ddb_item_unref(pCur->pStart);
  pCur->pStart = NULL;
  ddb_lek_guard_free(&pCur->lek);
  pCur->bMore = 0;
  dd_rows_clear(pCur);
  pCur->bEof = 1;
  pCur->nLimit = pCur->nEmitted = 0;
  memset(&pCur->rd, 0, sizeof(pCur->rd));
  for(i = 0; i < pCur->nPend; i++)
    ddb_item_unref(pCur->aPend[i]);
  sqlite3_free(pCur->aPend);
  pCur->aPend = NULL;
  pCur->nPend = pCur->iPend = 0;
  pCur->bOverlay = pCur->bRawEof = pCur->bOrdered = 0;
  pCur->pPeek = NULL;
  sqlite3_value_free(pCur->pKeys);
  pCur->pKeys = NULL;
}

static int dynamodbClose(sqlite3_vtab_cursor *cur) {
  dd_cursor_reset((dd_cursor *)cur);
  sqlite3_free(cur);
  return SQLITE_OK;
}

/* Report a client error on the cursor's vtab; returns the SQLite code. */
static int dd_cursor_error(dd_cursor *pCur, const ddb_error *e) {
  dd_error((dd_vtab *)pCur->base.pVtab, "%s", e->message);
  return dd_rc(e);
}

/* Read aIn[0..nIn) again by their table keys (the index lacks a used
** column) into aRow.  Rows whose item vanished meanwhile are dropped. */
static ddb_result dd_batch_get_parallel(dd_vtab *p, ddb_item **aKey, int nKeys,
                                        ddb_item **aFound, ddb_error *err);

static int dd_fetch_full(dd_cursor *pCur, ddb_item *const *aIn, int nIn) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  ddb_item **aFound;
  ddb_error err;
  int i, j;
  ddb_item **aKey;
  int rc = SQLITE_OK;
  ddb_error_clear(&err);
  aFound = sqlite3_malloc64(sizeof(ddb_item *) *
                            (sqlite3_uint64)(nIn ? nIn : 1) * 2);
  if(!aFound)
    return SQLITE_NOMEM;
  memset(aFound, 0, sizeof(ddb_item *) * (size_t)(nIn ? nIn : 1) * 2);
  aKey = aFound + (nIn ? nIn : 1);
  /* an index row holds the table's key attributes and its own: keep the
  ** former, BatchGetItem refuses any other attribute in a key */
  for(i = 0; i < nIn; i++) {
    ddb_av kv[2];
    for(j = 0; j < p->nKey; j++) {
      const ddb_av *a = ddb_item_get(aIn[i], p->azKey[j]);
      if(!a) {
        dd_error(p, "index row without the table key '%s'", p->azKey[j]);
        rc = SQLITE_ERROR;
        goto fail;
      }
      kv[j] = *a;
    }
    aKey[i] = ddb_item_from_avs(kv, p->nKey);
    if(!aKey[i]) {
      rc = SQLITE_NOMEM;
      goto fail;
    }
  }
  if(dd_batch_get_parallel(p, aKey, nIn, aFound, &err)) {
    rc = dd_cursor_error(pCur, &err);
    goto fail;
  }
  for(i = j = 0; i < nIn; i++)
    if(aFound[i])
      aFound[j++] = aFound[i];
  pCur->aRow = aFound;
  pCur->nRow = j;
  aFound = NULL;

fail:
  for(i = 0; i < nIn; i++)
    ddb_item_unref(aKey[i]);
  if(aFound) {
    for(i = 0; i < nIn; i++)
      ddb_item_unref(aFound[i]);
    sqlite3_free(aFound);
  }
  return rc;
}

/* ------------------------------------------------------------------------
** Parallel Scan
**
** With segments=N (N > 1), a Scan runs as N workers, one thread per
** segment (TotalSegments=N), each reading its segment page by page
** through the cache, each with its own kept-alive connection from the
** client's pool.  Pages go through a bounded queue (DD_QUEUE_PER_SEGMENT
** page per segment) to xNext, so memory stays O(segments x page) and rows
** stream to SQLite as pages arrive.  The first error stops every worker
** and fails the statement; closing the cursor early stops them too.
**
** The same machinery runs the Queries of a partition-key IN list
** concurrently: there each unit of work is one partition, and up to
** DD_MAX_IN_WORKERS workers take the partitions in turn.
*/
#define DD_MAX_IN_WORKERS    8
#define DD_QUEUE_PER_SEGMENT 1

typedef struct dd_worker {
  struct dd_pscan *s;
  int iSeg;
  int bStarted;
  pthread_t tid;
} dd_worker;

typedef struct dd_pscan {
  pthread_mutex_t mu;
  pthread_cond_t cv; /* signalled on every queue or state change */
  ddb_page **aQ;     /* ring of pages, each a reference */
  int *aQUnit;       /* the unit each queued page belongs to */
  int nQCap, iHead, nQ;
  int nWorker, nRunning; /* workers started, and still producing */
  int nUnit;             /* Scan segments, or Query partitions */
  const dd_val *aPk;     /* Query: the partition keys (the cursor's) */
  int bStop;             /* the consumer is gone or an error happened */
  int bFailed;
  int nHeld;           /* pages read and not yet taken by xNext: queued, or
                          in a worker's hands waiting for room (<= 2 x
                          nWorker: see dd_pscan_peak) */
  long long nHeldByte; /* their bytes (ddb_page.bytes) */
  ddb_error err;       /* the first error */
  ddb_client *pClient;
  ddb_read rd; /* template: workers copy it (borrowed strings); its limit
               ** sizes each unit's first request only (LIMIT+OFFSET) */
  ddbc_policy pol;
  dd_worker *aW;
} dd_pscan;

/* The most pages (and bytes) one parallel read held at once, process-wide,
** for dynamodb_stats.  Each worker holds at most one page outside the
** queue (it waits for room before reading the next), and the queue holds
** at most DD_QUEUE_PER_SEGMENT x workers: so at most 2 x segments pages,
** plus the one xNext is reading. */
static int dd_peak_pages;
static long long dd_peak_bytes;

/* Note s's pages held now (s->mu held). */
static void dd_pscan_peak(const dd_pscan *s) {
  if(s->nHeld > __atomic_load_n(&dd_peak_pages, __ATOMIC_RELAXED))
    __atomic_store_n(&dd_peak_pages, s->nHeld, __ATOMIC_RELAXED);
  if(s->nHeldByte > __atomic_load_n(&dd_peak_bytes, __ATOMIC_RELAXED))
    __atomic_store_n(&dd_peak_bytes, s->nHeldByte, __ATOMIC_RELAXED);
}

/* See dd_ext.h. */
void dd_scan_peak(int *pnPage, long long *pnByte) {
  *pnPage = __atomic_load_n(&dd_peak_pages, __ATOMIC_RELAXED);
  *pnByte = __atomic_load_n(&dd_peak_bytes, __ATOMIC_RELAXED);
}

/* A worker's cancel hook: has the statement stopped the scan (an error,
** the cursor closed, an interrupt seen by dd_pscan_next)? */
static int dd_worker_stopped(void *pArg) {
  dd_pscan *s = pArg;
  int bStop;
  pthread_mutex_lock(&s->mu);
  bStop = s->bStop;
  pthread_mutex_unlock(&s->mu);
  return bStop;
}

/* A worker's error: the first one is the scan's, and every worker stops
** (takes s->mu). */
static void dd_pscan_fail(dd_pscan *s, const ddb_error *err) {
  pthread_mutex_lock(&s->mu);
  if(!s->bFailed) {
    s->bFailed = 1;
    s->err = *err;
  }
  s->bStop = 1;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

/* A worker: read segment w->iSeg to its end, queueing each page. */
static void *dd_worker_main(void *pArg) {
  dd_worker *w = pArg;
  dd_pscan *s = w->s;
  ddb_read rd = s->rd;
  ddb_item *pStart = NULL;
  ddb_lek_guard lek;
  ddb_error err;
  int iUnit = w->iSeg, bStop = 0;
  memset(&lek, 0, sizeof(lek));
  ddb_error_clear(&err);
  ddb_cancel_thread(dd_worker_stopped, s);
  while(iUnit < s->nUnit && !bStop) {
    ddb_page *pg = NULL;
    if(rd.pk_name)
      rd.pk = s->aPk[iUnit].av; /* one partition of the IN list */
    else {
      rd.segment = iUnit; /* one segment of the Scan */
      rd.total_segments = s->nUnit;
    }
    rd.start = pStart;
    rd.limit = pStart ? 0 : s->rd.limit;
    if(ddbc_read_page(s->pClient, &rd, &s->pol, &pg, &err)) {
      dd_pscan_fail(s, &err);
      break;
    }
    if(!pStart)
      ddb_lek_guard_free(&lek); /* a new unit's first page */
    if(ddb_lek_next(&lek, rd.pk_name ? "Query" : "Scan", rd.table,
                    pg->last_key, &err)) {
      ddb_page_unref(pg);
      dd_pscan_fail(s, &err);
      break;
    }
    ddb_item_unref(pStart);
    pStart = ddb_item_ref(pg->last_key);
    pthread_mutex_lock(&s->mu);
    s->nHeld++;
    s->nHeldByte += (long long)pg->bytes;
    dd_pscan_peak(s);
    while(s->nQ == s->nQCap && !s->bStop)
      pthread_cond_wait(&s->cv, &s->mu);
    bStop = s->bStop;
    if(bStop) {
      s->nHeld--;
      s->nHeldByte -= (long long)pg->bytes;
    } else {
      s->aQUnit[(s->iHead + s->nQ) % s->nQCap] = iUnit;
      s->aQ[(s->iHead + s->nQ) % s->nQCap] = pg;
      s->nQ++;
      pg = NULL;
      pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    ddb_page_unref(pg);
    /* give back what this thread's malloc arena holds from decoding the
    ** page (the response text, the parse tree): with N workers, glibc
    ** keeps N arenas, and RSS would grow by several MB per segment */
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    if(!pStart)
      iUnit += s->nWorker; /* this unit is done: the next one */
  }
  ddb_item_unref(pStart);
  ddb_lek_guard_free(&lek);
  pthread_mutex_lock(&s->mu);
  s->nRunning--;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/* Stop the workers, wait for them, and free s (NULL is fine). */
static void dd_pscan_free(dd_pscan *s) {
  int i;
  if(!s)
    return;
  pthread_mutex_lock(&s->mu);
  s->bStop = 1;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  for(i = 0; s->aW && i < s->nWorker; i++)
    if(s->aW[i].bStarted)
      pthread_join(s->aW[i].tid, NULL);
  while(s->nQ > 0) {
    ddb_page_unref(s->aQ[s->iHead]);
    s->iHead = (s->iHead + 1) % s->nQCap;
    s->nQ--;
  }
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  sqlite3_free(s->aW);
  sqlite3_free(s->aQ);
  sqlite3_free(s->aQUnit);
  sqlite3_free(s);
}

/* Start nSeg workers on nUnit units of the cursor's read (its rd is the
** template): Scan segments, or the partitions of a Query's IN list.
** Returns an SQLite code; on error the cursor's pScan is freed by
** dd_cursor_reset as usual. */
static int dd_pscan_start(dd_cursor *pCur, int nSeg, int nUnit) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  dd_pscan *s = sqlite3_malloc(sizeof(*s));
  int i;
  if(!s)
    return SQLITE_NOMEM;
  memset(s, 0, sizeof(*s));
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  s->nQCap = nSeg * DD_QUEUE_PER_SEGMENT;
  s->aQ = sqlite3_malloc64(sizeof(ddb_page *) * (sqlite3_uint64)s->nQCap);
  s->aQUnit = sqlite3_malloc64(sizeof(int) * (sqlite3_uint64)s->nQCap);
  s->aW = sqlite3_malloc64(sizeof(dd_worker) * (sqlite3_uint64)nSeg);
  s->nWorker = nSeg;
  s->nUnit = nUnit;
  s->aPk = pCur->aPk;
  s->pClient = p->pClient;
  s->rd = pCur->rd;
  s->rd.limit = pCur->nLimit;
  s->pol = p->pol;
  if(pCur->pPath && pCur->pPath->pIdx->name && !pCur->pPath->pIdx->is_local)
    s->pol.consistent = 0; /* a GSI: see dd_next_page */
  pCur->pScan = s;
  if(!s->aQ || !s->aQUnit || !s->aW)
    return SQLITE_NOMEM;
  memset(s->aW, 0, sizeof(dd_worker) * (size_t)nSeg);
  for(i = 0; i < nSeg; i++) {
    s->aW[i].s = s;
    s->aW[i].iSeg = i;
    pthread_mutex_lock(&s->mu);
    s->nRunning++;
    pthread_mutex_unlock(&s->mu);
    if(pthread_create(&s->aW[i].tid, NULL, dd_worker_main, &s->aW[i])) {
      pthread_mutex_lock(&s->mu);
      s->nRunning--;
      s->bStop = 1;
      pthread_mutex_unlock(&s->mu);
      dd_error(p, "cannot start scan worker %d of %d", i + 1, nSeg);
      return SQLITE_ERROR;
    }
    s->aW[i].bStarted = 1;
  }
  return SQLITE_OK;
}

/* The next page from the workers (a reference), or *ppg NULL when every
** segment is done.  Returns SQLITE_OK or the first worker's error. */
static int dd_pscan_next(dd_cursor *pCur, ddb_page **ppg) {
  dd_pscan *s = pCur->pScan;
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  *ppg = NULL;
  pthread_mutex_lock(&s->mu);
  while(s->nQ == 0 && s->nRunning > 0 && !s->bFailed) {
    /* wait in slices, to see an interrupt (only this thread may ask) */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += DDB_CANCEL_POLL_MS * 1000000L;
    if(ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    if(pthread_cond_timedwait(&s->cv, &s->mu, &ts) != 0 && s->nQ == 0 &&
       !s->bFailed && dd_interrupted(p->db)) {
      s->bFailed = 1;
      s->bStop = 1;
      ddb_error_set(&s->err, DDB_ERR_CANCELLED, "interrupted: %s stopped",
                    s->rd.pk_name ? "Query" : "Scan");
      pthread_cond_broadcast(&s->cv);
    }
  }
  if(s->bFailed) {
    ddb_error e = s->err;
    pthread_mutex_unlock(&s->mu);
    return dd_cursor_error(pCur, &e);
  }
  if(s->nQ > 0) {
    *ppg = s->aQ[s->iHead];
    s->nHeld--;
    s->nHeldByte -= (long long)(*ppg)->bytes;
    if(s->rd.pk_name)
      pCur->iPk = s->aQUnit[s->iHead]; /* the partition of this page */
    s->iHead = (s->iHead + 1) % s->nQCap;
    s->nQ--;
    pthread_cond_broadcast(&s->cv);
  }
  pCur->nSegDone = s->nWorker - s->nRunning;
  pthread_mutex_unlock(&s->mu);
  return SQLITE_OK;
}

/* ------------------------------------------------------------------------
** Progress: in an interactive shell (stderr a terminal), a statement that
** has run for DD_PROGRESS_AFTER seconds (or $DYNAMODB_PROGRESS_AFTER)
** shows one line on stderr, updated
** as pages arrive, and cleared at the end (bEnd).
*/
#define DD_PROGRESS_AFTER 2.0

/* Seconds before the line appears: DD_PROGRESS_AFTER, or the environment
** variable DYNAMODB_PROGRESS_AFTER (read once). */
static double dd_progress_after(void) {
  static double after = -1;
  if(after < 0) {
    const char *z = getenv("DYNAMODB_PROGRESS_AFTER");
    double d;
    after = z && dd_number(z, &d) == 0 ? d : DD_PROGRESS_AFTER;
  }
  return after;
}

static void dd_progress(dd_cursor *pCur, int bEnd) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  double t;
  if(!p->bProgress)
    return;
  if(bEnd) {
    if(pCur->bProgressShown)
      fputs("\r\033[K", stderr);
    pCur->bProgressShown = 0;
    return;
  }
  t = ddbc_now() - pCur->tStart;
  if(t < dd_progress_after() || !isatty(2))
    return;
  fprintf(stderr, "\r\033[K%s: %lld items, %lld pages, %.1f RCU, %.1f s",
          p->zVtabName ? p->zVtabName : "dynamodb", pCur->nItemsSeen,
          pCur->nPagesSeen, pCur->rcuSeen, t);
  if(pCur->pScan)
    fprintf(stderr, ", segments %d/%d done", pCur->nSegDone,
            pCur->pScan->nWorker);
  fflush(stderr);
  pCur->bProgressShown = 1;
}

/* Load the next non-empty page of the Query/Scan into aRow, moving on to
** the next partition key when one is exhausted.  Sets bEof at the end. */
static int dd_next_page(dd_cursor *pCur) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  ddbc_policy pol;
  ddb_error err;
  int i, rc;
  ddb_error_clear(&err);
  dd_rows_clear(pCur);
  for(;;) {
    ddb_page *pg = NULL;
    if(pCur->pScan) {
      rc = dd_pscan_next(pCur, &pg);
      if(rc)
        return rc;
      if(!pg) {
        pCur->bEof = 1;
        dd_progress(pCur, 1);
        return SQLITE_OK;
      }
      goto got_page;
    }
    if(!pCur->bMore) {
      if(pCur->op != DD_OP_QUERY || pCur->iPk + 1 >= pCur->nPk) {
        pCur->bEof = 1;
        dd_progress(pCur, 1);
        return SQLITE_OK;
      }
      pCur->iPk++;
      pCur->bMore = 1;
    }
    if(pCur->op == DD_OP_QUERY)
      pCur->rd.pk = pCur->aPk[pCur->iPk].av;
    /* a GSI cannot be read consistently: DynamoDB refuses ConsistentRead
    ** there, so a GSI Query is eventually consistent whatever the option */
    pol = p->pol;
    if(pCur->pPath && pCur->pPath->pIdx->name && !pCur->pPath->pIdx->is_local)
      pol.consistent = 0;
    pCur->rd.start = pCur->pStart;
    /* LIMIT only sizes the first request: SQLite can hand over a LIMIT
    ** while it still filters with a term it never showed us (GSI1SK > SK),
    ** so when it asks for more rows the next pages come unlimited */
    pCur->rd.limit = pCur->nEmitted == 0 && !pCur->pStart ? pCur->nLimit : 0;
    if(ddbc_read_page(p->pClient, &pCur->rd, &pol, &pg, &err))
      return dd_cursor_error(pCur, &err);
    if(!pCur->pStart)
      ddb_lek_guard_free(&pCur->lek); /* a new partition's first page */
    if(ddb_lek_next(&pCur->lek, pCur->rd.pk_name ? "Query" : "Scan",
                    pCur->rd.table, pg->last_key, &err)) {
      ddb_page_unref(pg);
      return dd_cursor_error(pCur, &err);
    }
    ddb_item_unref(pCur->pStart);
    pCur->pStart = ddb_item_ref(pg->last_key);
    pCur->bMore = pCur->pStart != NULL;
  got_page:
    pCur->nPagesSeen++;
    pCur->nItemsSeen += pg->count;
    pCur->rcuSeen += pg->consumed_rcu;
    dd_progress(pCur, 0);
    if(pCur->bCount) {
      /* Select=COUNT: Count rows, no items */
      pCur->nRow = (int)pg->count;
      pCur->iRow = 0;
      ddb_page_unref(pg);
      if(pCur->nRow == 0)
        continue;
      return SQLITE_OK;
    }
    if(pg->n_items == 0) {
      ddb_page_unref(pg);
      continue;
    }
    if(pCur->bFetch) {
      rc = dd_fetch_full(pCur, pg->items, pg->n_items);
      ddb_page_unref(pg);
      if(rc)
        return rc;
      if(pCur->nRow == 0)
        continue;
      return SQLITE_OK;
    }
    pCur->aRow =
        sqlite3_malloc64(sizeof(ddb_item *) * (sqlite3_uint64)pg->n_items);
    if(!pCur->aRow) {
      ddb_page_unref(pg);
      return SQLITE_NOMEM;
    }
    for(i = 0; i < pg->n_items; i++)
      pCur->aRow[i] = ddb_item_ref(pg->items[i]);
    pCur->nRow = pg->n_items;
    ddb_page_unref(pg);
    return SQLITE_OK;
  }
}

/* The next row DynamoDB (or the cache) returned into pCur->pCur, or
** bEof. */
static int dd_next_raw(dd_cursor *pCur) {
  int rc;
  while(pCur->iRow >= pCur->nRow) {
    if(pCur->op == DD_OP_GET || pCur->op == DD_OP_BATCH) {
      pCur->bEof = 1;
      return SQLITE_OK;
    }
    rc = dd_next_page(pCur);
    if(rc || pCur->bEof)
      return rc;
  }
  pCur->pCur = pCur->aRow ? pCur->aRow[pCur->iRow] : NULL;
  pCur->iRow++;
  pCur->nEmitted++;
  return SQLITE_OK;
}

/* Compare two key values of type t as SQLite orders the column's values
** (S and B by their bytes, N by value). */
static int dd_av_order(const ddb_av *a, const ddb_av *b) {
  if(a->type == DDB_N && b->type == DDB_N) {
    int64_t i, j;
    double x, y;
    ddb_numkind ka = ddb_number_classify(a->text, a->n, &i, &x);
    ddb_numkind kb = ddb_number_classify(b->text, b->n, &j, &y);
    if(ka == DDB_NUM_INT && kb == DDB_NUM_INT)
      return i < j ? -1 : i > j;
    if(ka == DDB_NUM_INT)
      x = (double)i;
    else if(ka != DDB_NUM_REAL)
      x = strtod(a->text, NULL);
    if(kb == DDB_NUM_INT)
      y = (double)j;
    else if(kb != DDB_NUM_REAL)
      y = strtod(b->text, NULL);
    return x < y ? -1 : x > y;
  }
  if(a->type == DDB_B && b->type == DDB_B) {
    unsigned char *za = sqlite3_malloc64((sqlite3_uint64)a->n + 1);
    unsigned char *zb = sqlite3_malloc64((sqlite3_uint64)b->n + 1);
    size_t na = za ? ddb_base64_decode(a->text, a->n, za, a->n + 1) : 0;
    size_t nb = zb ? ddb_base64_decode(b->text, b->n, zb, b->n + 1) : 0;
    int c;
    if(na == (size_t)-1)
      na = 0;
    if(nb == (size_t)-1)
      nb = 0;
    c = memcmp(za ? (const void *)za : "", zb ? (const void *)zb : "",
               na < nb ? na : nb);
    sqlite3_free(za);
    sqlite3_free(zb);
    return c ? c : (na < nb ? -1 : na > nb);
  }
  {
    uint32_t n = a->n < b->n ? a->n : b->n;
    int c = memcmp(a->text, b->text, n);
    return c ? c : (a->n < b->n ? -1 : a->n > b->n);
  }
}

/* The cursor's path's sort-key order of items a and b, for the overlay. */
static int dd_pend_cmp(dd_cursor *pCur, const ddb_item *a, const ddb_item *b) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  const char *zSk = p->aCol[pCur->pPath->iSk].zName;
  const ddb_av *x = ddb_item_get(a, zSk), *y = ddb_item_get(b, zSk);
  int c;
  if(!x || !y)
    return x ? 1 : y ? -1 : 0;
  c = dd_av_order(x, y);
  return pCur->rd.descending ? -c : c;
}

/* Does item it have the attribute of key column c, in its type? */
static const ddb_av *dd_key_attr(dd_vtab *p, const ddb_item *it, int c) {
  const ddb_av *a = ddb_item_get(it, p->aCol[c].zName);
  return a && a->type == p->aCol[c].type ? a : NULL;
}

/*
** May item it (written by the open transaction) be a row of the plan?  A
** superset is enough, as SQLite checks every constraint again, except
** those it was told to omit: PK = ? and SK = ? (see xBestIndex), which
** are checked here exactly: the partition key is one of aPk, the sort key
** one of aSkv (GetItem, BatchGetItem) or the Query's = value.  An index
** holds only items with its key attributes.
*/
static int dd_pend_match(dd_cursor *pCur, const ddb_item *it,
                         const dd_val *aSkv, int nSkv) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  dd_path *pp = pCur->pPath;
  const ddb_av *pk = dd_key_attr(p, it, pp->iPk);
  const ddb_av *sk = pp->iSk >= 0 ? dd_key_attr(p, it, pp->iSk) : NULL;
  int i, ok;
  if(!pk || (pp->iSk >= 0 && !sk))
    return 0;
  if(pCur->op == DD_OP_SCAN)
    return p->nSlice == 0 || p->iSlice == 0; /* one slice shows them */
  for(i = 0, ok = 0; i < pCur->nPk && !ok; i++)
    ok = ddb_av_equal(pk, &pCur->aPk[i].av);
  if(!ok)
    return 0;
  if(pCur->op != DD_OP_QUERY) {
    if(pp->iSk < 0)
      return 1;
    for(i = 0, ok = 0; i < nSkv && !ok; i++)
      ok = ddb_av_equal(sk, &aSkv[i].av);
    return ok;
  }
  if(pCur->rd.sk_op == DDB_SK_EQ)
    return sk && ddb_av_equal(sk, &pCur->sk[0].av);
  return 1;
}

/* Start the overlay of the open transaction's writes on the plan xFilter
** just set up (a no-op when nothing is buffered). */
static int dd_overlay_start(dd_cursor *pCur, const dd_val *aSkv, int nSkv) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  ddb_item **a = NULL;
  int n = 0, i, j, rc;
  if(!dd_pending_any(p))
    return SQLITE_OK;
  if(pCur->op == DD_OP_GET || pCur->op == DD_OP_BATCH) {
    /* table keys: look each up, rather than go through every write (a
    ** join driving lookups inside a large transaction) */
    int nSk = p->nKey == 2 ? nSkv : 1;
    a = sqlite3_malloc64(sizeof(*a) * ((size_t)pCur->nPk * (size_t)nSk + 1));
    if(!a)
      return SQLITE_NOMEM;
    for(i = 0; i < pCur->nPk; i++) {
      for(j = 0; j < nSk; j++) {
        ddb_av kv[2];
        ddb_item *key, *img = NULL;
        kv[0] = pCur->aPk[i].av;
        kv[0].name = p->azKey[0];
        kv[0].name_len = 0;
        if(p->nKey == 2) {
          kv[1] = aSkv[j].av;
          kv[1].name = p->azKey[1];
          kv[1].name_len = 0;
        }
        key = ddb_item_from_avs(kv, p->nKey);
        if(!key) {
          while(n > 0)
            ddb_item_unref(a[--n]);
          sqlite3_free(a);
          return SQLITE_NOMEM;
        }
        if(dd_pending_get(p, key, &img) && img)
          a[n++] = ddb_item_ref(img);
        ddb_item_unref(key);
      }
    }
  } else {
    rc = dd_pending_images(p, &a, &n);
    if(rc)
      return rc;
  }
  for(i = j = 0; i < n; i++) {
    if(dd_pend_match(pCur, a[i], aSkv, nSkv))
      a[j++] = a[i];
    else
      ddb_item_unref(a[i]);
  }
  pCur->aPend = a;
  pCur->nPend = j;
  pCur->iPend = 0;
  pCur->bOverlay = 1;
  /* a Query returns a partition in sort-key order, which the plan may
  ** have promised SQLite (orderByConsumed): merge in that order */
  pCur->bOrdered = pCur->op == DD_OP_QUERY && pCur->pPath->iSk >= 0;
  if(pCur->bOrdered) {
    for(i = 1; i < j; i++) { /* insertion sort: few, and stable */
      ddb_item *x = a[i];
      int k = i;
      while(k > 0 && dd_pend_cmp(pCur, a[k - 1], x) > 0) {
        a[k] = a[k - 1];
        k--;
      }
      a[k] = x;
    }
  }
  return SQLITE_OK;
}

static int dynamodbNext(sqlite3_vtab_cursor *cur) {
  dd_cursor *pCur = (dd_cursor *)cur;
  dd_vtab *p = (dd_vtab *)cur->pVtab;
  int rc;
  dd_item_json_drop(pCur);
  if(!pCur->bOverlay)
    return dd_next_raw(pCur);
  for(;;) {
    ddb_item *pend = pCur->iPend < pCur->nPend ? pCur->aPend[pCur->iPend] : 0;
    if(!pCur->pPeek && !pCur->bRawEof) {
      ddb_item *img;
      rc = dd_next_raw(pCur);
      if(rc)
        return rc;
      if(pCur->bEof) {
        pCur->bRawEof = 1;
      } else if(pCur->pCur && dd_pending_get(p, pCur->pCur, &img)) {
        continue; /* the transaction wrote this key: aPend has it, or not */
      } else {
        pCur->pPeek = pCur->pCur;
      }
    }
    if(!pCur->pPeek && !pend) {
      pCur->bEof = 1;
      pCur->pCur = NULL;
      return SQLITE_OK;
    }
    pCur->bEof = 0;
    if(pend && (!pCur->pPeek || (pCur->bOrdered &&
                                 dd_pend_cmp(pCur, pend, pCur->pPeek) <= 0))) {
      pCur->pCur = pend;
      pCur->iPend++;
    } else {
      pCur->pCur = pCur->pPeek;
      pCur->pPeek = NULL;
    }
    return SQLITE_OK;
  }
}

/* Append v (moved) to the list *pa of *pn values. */
static int dd_add_val(dd_val **pa, int *pn, dd_val *v) {
  dd_val *a;
  /* grow by doubling: capacity is the next power of two >= *pn */
  if(*pn > 0 && (*pn & (*pn - 1)) != 0) {
    (*pa)[(*pn)++] = *v;
    memset(v, 0, sizeof(*v));
    return SQLITE_OK;
  }
  a = sqlite3_realloc64(*pa,
                        sizeof(dd_val) * (sqlite3_uint64)(*pn ? *pn * 2 : 1));
  if(!a) {
    dd_val_clear(v);
    return SQLITE_NOMEM;
  }
  *pa = a;
  a[(*pn)++] = *v;
  memset(v, 0, sizeof(*v));
  return SQLITE_OK;
}

/* Order of values for dd_dedupe: by length, then bytes. */
static int dd_val_order(const void *pa, const void *pb) {
  const dd_val *a = pa, *b = pb;
  if(a->av.n != b->av.n)
    return a->av.n < b->av.n ? -1 : 1;
  return memcmp(a->av.text, b->av.text, a->av.n);
}

/* Drop repeated values from a[0..*pn): sorts, then keeps one of each
** (O(n log n); an IN list may hold thousands of keys). */
static void dd_dedupe(dd_val *a, int *pn) {
  int i, j;
  if(*pn < 2)
    return;
  qsort(a, (size_t)*pn, sizeof(dd_val), dd_val_order);
  for(i = 1, j = 0; i < *pn; i++) {
    if(dd_val_order(&a[i], &a[j]) == 0)
      dd_val_clear(&a[i]);
    else
      a[++j] = a[i];
  }
  *pn = j + 1;
}

/* Collect the distinct usable values of argument pArg (an IN list when
** bIn) converted to type t, appended to the list *pa of *pn values. */
static int dd_collect(dd_val **pa, int *pn, sqlite3_value *pArg, int bIn,
                      ddb_type t, int nMax) {
  sqlite3_value *pV;
  dd_val v;
  int ok, rc;
  if(!bIn) {
    rc = dd_val_from_sql(pArg, t, &v, &ok);
    if(rc == SQLITE_OK && ok)
      rc = dd_key_fits(&v, nMax) ? dd_add_val(pa, pn, &v) : dd_drop(&v);
    return rc;
  }
  for(rc = sqlite3_vtab_in_first(pArg, &pV); rc == SQLITE_OK && pV;
      rc = sqlite3_vtab_in_next(pArg, &pV)) {
    /* pV is valid only until the next call: dd_val_from_sql copies it */
    int rc2 = dd_val_from_sql(pV, t, &v, &ok);
    if(rc2 == SQLITE_OK && ok)
      rc2 = dd_key_fits(&v, nMax) ? dd_add_val(pa, pn, &v) : dd_drop(&v);
    if(rc2)
      return rc2;
  }
  if(rc == SQLITE_DONE) {
    dd_dedupe(*pa, pn);
    rc = SQLITE_OK;
  }
  return rc;
}

/* The error for a Scan refused by scan=deny, naming what would avoid it. */
static void dd_scan_denied(dd_vtab *p) {
  sqlite3_str *s = sqlite3_str_new(0);
  char *z;
  int i;
  for(i = 0; i < p->nPath; i++) {
    const dd_path *pp = &p->aPath[i];
    sqlite3_str_appendf(s, "%s%s", i ? ", " : "", p->aCol[pp->iPk].zName);
    if(pp->pIdx->name)
      sqlite3_str_appendf(s, " (%s)", pp->pIdx->name);
  }
  z = sqlite3_str_finish(s);
  dd_error(p,
           "full scan of table '%s' denied (scan=deny); constrain a "
           "partition key with = or IN: %s",
           p->pDesc->name, z ? z : "");
  sqlite3_free(z);
}

/* BatchGetItem of many keys with several calls in flight: the keys are
** cut into chunks of DD_BATCH_CHUNK (one call each, through the cache)
** and up to DD_BATCH_THREADS threads take the chunks in turn. */
#define DD_BATCH_CHUNK   100
#define DD_BATCH_THREADS 4

typedef struct dd_batch_job {
  dd_vtab *p;
  ddb_item **aKey;
  ddb_item **aFound;
  int nKeys, iFirst, nStride; /* this thread's chunks: iFirst, +nStride.. */
  ddb_error err;
  int bFailed;
  int *pStop; /* shared: set to stop every job (atomic) */
} dd_batch_job;

/* A job thread's cancel hook: has the statement's thread said stop? */
static int dd_batch_stopped(void *pArg) {
  return __atomic_load_n((int *)pArg, __ATOMIC_ACQUIRE);
}

static void *dd_batch_main(void *pArg) {
  dd_batch_job *j = pArg;
  int c;
  for(c = j->iFirst; c * DD_BATCH_CHUNK < j->nKeys; c += j->nStride) {
    int i0 = c * DD_BATCH_CHUNK;
    int n = j->nKeys - i0 < DD_BATCH_CHUNK ? j->nKeys - i0 : DD_BATCH_CHUNK;
    if(ddbc_batch_get(j->p->pClient, j->p->pDesc->name,
                      (const ddb_item *const *)j->aKey + i0, (size_t)n,
                      j->p->azKey, j->p->nKey, &j->p->pol, j->aFound + i0,
                      &j->err)) {
      j->bFailed = 1;
      if(j->err.code == DDB_ERR_CANCELLED)
        __atomic_store_n(j->pStop, 1, __ATOMIC_RELEASE);
      break;
    }
  }
  return NULL;
}

/* A job run by a thread of its own: the hook is the stop flag. */
static void *dd_batch_thread(void *pArg) {
  dd_batch_job *j = pArg;
  ddb_cancel_thread(dd_batch_stopped, j->pStop);
  return dd_batch_main(pArg);
}

/* Look up aKey[0..nKeys) into aFound[] (found items or NULL).  Returns
** DDB_OK, or the first error (then aFound holds nothing). */
static ddb_result dd_batch_get_parallel(dd_vtab *p, ddb_item **aKey, int nKeys,
                                        ddb_item **aFound, ddb_error *err) {
  dd_batch_job aJob[DD_BATCH_THREADS];
  pthread_t aTid[DD_BATCH_THREADS];
  int nChunk = (nKeys + DD_BATCH_CHUNK - 1) / DD_BATCH_CHUNK, nThread, i;
  int aStarted[DD_BATCH_THREADS];
  int bStop = 0;
  ddb_result result = DDB_OK;
  nThread = nChunk < DD_BATCH_THREADS ? nChunk : DD_BATCH_THREADS;
  if(nThread <= 1)
    return ddbc_batch_get(p->pClient, p->pDesc->name,
                          (const ddb_item *const *)aKey, (size_t)nKeys,
                          p->azKey, p->nKey, &p->pol, aFound, err);
  for(i = 0; i < nThread; i++) {
    memset(&aJob[i], 0, sizeof(aJob[i]));
    aJob[i].p = p;
    aJob[i].aKey = aKey;
    aJob[i].aFound = aFound;
    aJob[i].nKeys = nKeys;
    aJob[i].iFirst = i;
    aJob[i].nStride = nThread;
    aJob[i].pStop = &bStop;
    aStarted[i] = i > 0 && pthread_create(&aTid[i], NULL, dd_batch_thread,
                                          &aJob[i]) == 0;
  }
  /* this thread takes job 0, and any job whose thread did not start */
  for(i = 0; i < nThread; i++)
    if(i == 0 || !aStarted[i])
      dd_batch_main(&aJob[i]);
  /* then waits for the others, watching for an interrupt (which only this
  ** thread can see) to pass on to them */
  for(i = 1; i < nThread; i++) {
    while(aStarted[i]) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += DDB_CANCEL_POLL_MS * 1000000L;
      if(ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
      }
      if(pthread_timedjoin_np(aTid[i], NULL, &ts) == 0)
        break;
      if(!__atomic_load_n(&bStop, __ATOMIC_ACQUIRE) && dd_interrupted(p->db))
        __atomic_store_n(&bStop, 1, __ATOMIC_RELEASE);
    }
  }
  for(i = 0; i < nThread; i++)
    if(aJob[i].bFailed && result == DDB_OK) {
      *err = aJob[i].err;
      result = err->code ? err->code : DDB_ERR_SERVICE;
    }
  if(result)
    for(i = 0; i < nKeys; i++) {
      ddb_item_unref(aFound[i]);
      aFound[i] = NULL;
    }
  return result;
}

/* GetItem and BatchGetItem: the keys are aPk (partition) x skv (sort). */
static int dd_run_keys(dd_cursor *pCur, dd_val *aSk, int nSk) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  int nKeys = pCur->nPk * (p->nKey == 2 ? nSk : 1);
  ddb_item **aKey = NULL, **aFound = NULL;
  ddb_error err;
  int i, j, k = 0, rc = SQLITE_OK;

  ddb_error_clear(&err);
  if(nKeys == 0) {
    pCur->bEof = 1;
    return SQLITE_OK;
  }
  if(pCur->op == DD_OP_GET) {
    /* the hot path of a join: ask the item cache with the key's values,
    ** without building a key item or any array */
    ddb_av kv[2];
    ddb_item *it = NULL;
    kv[0] = pCur->aPk[0].av;
    kv[0].name = p->azKey[0];
    kv[0].name_len = 0;
    if(p->nKey == 2) {
      kv[1] = aSk[0].av;
      kv[1].name = p->azKey[1];
      kv[1].name_len = 0;
    }
    if(ddbc_item_cached(p->pClient, p->pDesc->name, kv, p->nKey, &p->pol,
                        &it)) {
      pCur->aRow = pCur->aRowOne;
      pCur->aRowOne[0] = it;
      pCur->nRow = it ? 1 : 0;
      return SQLITE_OK;
    }
  }
  aKey = sqlite3_malloc64(sizeof(ddb_item *) * (sqlite3_uint64)nKeys * 2);
  if(!aKey)
    return SQLITE_NOMEM;
  memset(aKey, 0, sizeof(ddb_item *) * (size_t)nKeys * 2);
  aFound = aKey + nKeys;
  for(i = 0; i < pCur->nPk; i++) {
    for(j = 0; j < (p->nKey == 2 ? nSk : 1); j++) {
      ddb_av kv[2];
      kv[0] = pCur->aPk[i].av;
      kv[0].name = p->azKey[0];
      if(p->nKey == 2) {
        kv[1] = aSk[j].av;
        kv[1].name = p->azKey[1];
      }
      aKey[k] = ddb_item_from_avs(kv, p->nKey);
      if(!aKey[k++]) {
        rc = SQLITE_NOMEM;
        goto fail;
      }
    }
  }
  if(pCur->op == DD_OP_GET) {
    if(ddbc_get_item(p->pClient, p->pDesc->name, aKey[0], p->azKey, p->nKey,
                     &p->pol, &aFound[0], &err)) {
      rc = dd_cursor_error(pCur, &err);
      goto fail;
    }
  } else if(dd_batch_get_parallel(p, aKey, nKeys, aFound, &err)) {
    rc = dd_cursor_error(pCur, &err);
    goto fail;
  }
  /* keep the found items, in key order; aKey's first half is reused */
  pCur->aRow = sqlite3_malloc64(sizeof(ddb_item *) * (sqlite3_uint64)nKeys);
  if(!pCur->aRow) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  for(i = 0; i < nKeys; i++)
    if(aFound[i]) {
      pCur->aRow[pCur->nRow++] = aFound[i];
      aFound[i] = NULL;
    }

fail:
  for(i = 0; i < nKeys; i++) {
    ddb_item_unref(aKey[i]);
    ddb_item_unref(aFound[i]);
  }
  sqlite3_free(aKey);
  return rc;
}

/* A text key value read in place from v (valid during xFilter only), as
** dd_val_from_sql would convert it for an S key; 0 if v is not such a
** value (then the general path decides). */
static int dd_text_key(sqlite3_value *v, ddb_av *out, const char *zName) {
  int e = sqlite3_value_type(v), n;
  const unsigned char *z;
  if(e != SQLITE_TEXT)
    return 0;
  z = sqlite3_value_text(v);
  n = sqlite3_value_bytes(v);
  if(!z || n == 0 || !dd_utf8_ok(z, n))
    return 0;
  memset(out, 0, sizeof(*out));
  out->type = DDB_S;
  out->text = (const char *)z;
  out->n = (uint32_t)n;
  out->name = zName;
  return 1;
}

/* The hot path of a join: a GetItem on S keys answered by the item cache,
** the key's values read in place, nothing copied or allocated.  Returns 1
** when the row (or its absence) came from the cache; 0 to run the plan. */
static int dd_get_cached(dd_cursor *pCur, int argc, sqlite3_value **argv) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  ddb_av kv[2];
  ddb_item *it = NULL;
  if(argc < p->nKey || p->aCol[p->aPath[0].iPk].type != DDB_S ||
     !dd_text_key(argv[0], &kv[0], p->azKey[0]))
    return 0;
  if(p->nKey == 2 && (p->aCol[p->aPath[0].iSk].type != DDB_S ||
                      !dd_text_key(argv[1], &kv[1], p->azKey[1])))
    return 0;
  if(!ddbc_item_cached(p->pClient, p->pDesc->name, kv, p->nKey, &p->pol, &it))
    return 0;
  pCur->op = DD_OP_GET;
  pCur->pPath = &p->aPath[0];
  pCur->aRow = pCur->aRowOne;
  pCur->aRowOne[0] = it;
  pCur->nRow = it ? 1 : 0;
  pCur->iRow = 0;
  pCur->bEof = 0;
  return 1;
}

/*
** keys = ?: a join on the full key as one BatchGetItem plan
**
** The hidden column keys takes a JSON array of table keys, each
** [PK, SK] (or {"PK": .., "SK": ..} by attribute name; a table without a
** sort key also takes a plain value or [PK]).  A value is a JSON string
** for an S key, a JSON number (or a string holding a number, for more
** digits than 64 bits) for N, base64 text for B; it converts as PK = ?
** would, so a value no key can hold (an empty string, a number DynamoDB
** cannot hold, a key over the length limits) finds nothing, as the join
** does.  A key of another shape or type is an error naming it.
*/
#define DD_MAX_KEYS 1000000

typedef struct dd_keypair {
  dd_val pk, sk;
} dd_keypair;

/* Order of key pairs for dd_keys_parse's duplicates. */
static int dd_keypair_order(const void *pa, const void *pb) {
  const dd_keypair *a = pa, *b = pb;
  int c = dd_val_order(&a->pk, &b->pk);
  if(c || (!a->sk.av.text && !b->sk.av.text))
    return c; /* no sort key (memcmp must not see NULL) */
  return dd_val_order(&a->sk, &b->sk);
}

/* One key value: pVal (from json_extract, of JSON type zType) to column
** c's type into v.  Returns SQLITE_OK (*pbOk=0: no key can equal it), or
** SQLITE_ERROR with *pzWhy set to what is wrong (static text). */
static int dd_keys_val(dd_vtab *p, int c, sqlite3_value *pVal,
                       const char *zType, dd_val *v, int *pbOk,
                       const char **pzWhy) {
  ddb_type t = p->aCol[c].type;
  int bText = zType && strcmp(zType, "text") == 0;
  int bNum =
      zType && (strcmp(zType, "integer") == 0 || strcmp(zType, "real") == 0);
  memset(v, 0, sizeof(*v));
  *pbOk = 0;
  if(!zType) {
    *pzWhy = "missing";
    return SQLITE_ERROR;
  }
  if(t == DDB_S && !bText) {
    *pzWhy = "must be a JSON string (S key)";
    return SQLITE_ERROR;
  }
  if(t == DDB_N && !bNum && !bText) {
    *pzWhy = "must be a JSON number (N key)";
    return SQLITE_ERROR;
  }
  if(t == DDB_B) {
    const char *z = (const char *)sqlite3_value_text(pVal);
    int n = sqlite3_value_bytes(pVal);
    size_t cap = (size_t)n / 4 * 3 + 3, nRaw;
    if(!bText || !z) {
      *pzWhy = "must be base64 text (B key)";
      return SQLITE_ERROR;
    }
    if(n == 0)
      return SQLITE_OK;
    v->zBuf = malloc((size_t)n + 1 + cap);
    if(!v->zBuf)
      return SQLITE_NOMEM;
    nRaw =
        ddb_base64_decode(z, (size_t)n, (unsigned char *)v->zBuf + n + 1, cap);
    if(nRaw == (size_t)-1) {
      dd_val_clear(v);
      *pzWhy = "is not base64 (B key)";
      return SQLITE_ERROR;
    }
    /* canonical base64 of the bytes, and the bytes, for ordering */
    if(ddb_base64_encode((unsigned char *)v->zBuf + n + 1, nRaw, v->zBuf,
                         (size_t)n + 1) == (size_t)-1) {
      dd_val_clear(v);
      *pzWhy = "is not base64 (B key)";
      return SQLITE_ERROR;
    }
    v->av.type = DDB_B;
    v->av.text = v->zBuf;
    v->av.n = (uint32_t)strlen(v->zBuf);
    v->raw = (const unsigned char *)v->zBuf + n + 1;
    v->nRaw = (int)nRaw;
    *pbOk = nRaw > 0;
    return SQLITE_OK;
  }
  if(t == DDB_N && bText) {
    int rc = dd_val_from_sql(pVal, t, v, pbOk);
    if(rc == SQLITE_OK && !*pbOk) {
      *pzWhy = "must be a JSON number (N key)";
      return SQLITE_ERROR;
    }
    return rc;
  }
  return dd_val_from_sql(pVal, t, v, pbOk);
}

/* Parse the key list pList (the argument of keys = ?) into table keys:
** *paKey (sqlite3_free(), each ddb_item_unref()) of *pnKey distinct keys,
** in key order.  Keys no item can have are left out.  Returns SQLITE_OK;
** SQLITE_ERROR with the vtab's message set when the list or a key is
** malformed, naming it. */
static int dd_keys_parse(dd_vtab *p, sqlite3_value *pList, ddb_item ***paKey,
                         int *pnKey) {
  static const char zSql[] =
      "SELECT e.key, json_quote(e.value),"
      " CASE e.type WHEN 'array' THEN json_array_length(e.value)"
      "  WHEN 'object' THEN (SELECT count(*) FROM json_each(e.value))"
      "  ELSE 0 END,"
      " CASE e.type WHEN 'array' THEN json_type(e.value, '$[0]')"
      "  WHEN 'object' THEN json_type(e.value, ?2) ELSE e.type END,"
      " CASE e.type WHEN 'array' THEN json_extract(e.value, '$[0]')"
      "  WHEN 'object' THEN json_extract(e.value, ?2) ELSE e.value END,"
      " CASE e.type WHEN 'array' THEN json_type(e.value, '$[1]')"
      "  WHEN 'object' THEN json_type(e.value, ?3) END,"
      " CASE e.type WHEN 'array' THEN json_extract(e.value, '$[1]')"
      "  WHEN 'object' THEN json_extract(e.value, ?3) END,"
      " e.type"
      " FROM json_each(CASE WHEN json_valid(?1) AND json_type(?1) = 'array'"
      "  THEN ?1 ELSE json_array(?1, 0) END) e";
  sqlite3_stmt *pStmt = NULL;
  dd_keypair *a = NULL;
  ddb_item **aKey = NULL;
  char *zPath[2] = {NULL, NULL};
  const char *zWhy = NULL;
  char *zWhat = NULL;
  int n = 0, nAlloc = 0, i, j, rc, bList;
  const char *zList;
  *paKey = NULL;
  *pnKey = 0;
  if(sqlite3_value_type(pList) == SQLITE_NULL)
    return SQLITE_OK; /* keys = NULL: no row, as PK = NULL */
  zList = (const char *)sqlite3_value_text(pList);
  if(!zList)
    return SQLITE_NOMEM;
  for(i = 0; i < p->nKey; i++) {
    zPath[i] = sqlite3_mprintf("$.\"%s\"", p->azKey[i]);
    if(!zPath[i]) {
      rc = SQLITE_NOMEM;
      goto fail;
    }
  }
  rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, NULL);
  if(rc)
    goto fail;
  sqlite3_bind_value(pStmt, 1, pList);
  sqlite3_bind_text(pStmt, 2, zPath[0], -1, SQLITE_STATIC);
  sqlite3_bind_text(pStmt, 3, p->nKey == 2 ? zPath[1] : "$", -1,
                    SQLITE_STATIC);
  bList = 1;
  {
    /* is it a JSON array at all?  (json_each would walk an object's
    ** members, and fail on malformed text with no word of where) */
    sqlite3_stmt *pChk = NULL;
    rc = sqlite3_prepare_v2(p->db,
                            "SELECT CASE WHEN json_valid(?1) THEN "
                            "json_type(?1) = 'array' ELSE 0 END",
                            -1, &pChk, NULL);
    if(rc)
      goto fail;
    sqlite3_bind_value(pChk, 1, pList);
    if(sqlite3_step(pChk) == SQLITE_ROW)
      bList = sqlite3_column_int(pChk, 0);
    rc = sqlite3_finalize(pChk);
    if(rc)
      goto fail;
  }
  if(!bList) {
    dd_error(p,
             "keys: not a JSON array of keys: '%.60s' (expected e.g. "
             "[[\"pk1\", \"sk1\"], ...] or [{\"%s\": ...}, ...])",
             zList, p->azKey[0]);
    rc = SQLITE_ERROR;
    goto fail;
  }
  while((rc = sqlite3_step(pStmt)) == SQLITE_ROW) {
    int iKey = sqlite3_column_int(pStmt, 0);
    int nPart = sqlite3_column_int(pStmt, 2);
    const char *zType = (const char *)sqlite3_column_text(pStmt, 7);
    int bArr = zType && strcmp(zType, "array") == 0;
    int bObj = zType && strcmp(zType, "object") == 0;
    int ok0 = 0, ok1 = 1;
    dd_keypair kp;
    memset(&kp, 0, sizeof(kp));
    if(n >= DD_MAX_KEYS) {
      dd_error(p, "keys: more than %d keys", DD_MAX_KEYS);
      rc = SQLITE_ERROR;
      goto fail;
    }
    if((bArr || bObj) ? nPart != p->nKey : p->nKey != 1) {
      zWhy = "has the wrong shape";
      goto bad;
    }
    rc = dd_keys_val(p, p->aPath[0].iPk, sqlite3_column_value(pStmt, 4),
                     (const char *)sqlite3_column_text(pStmt, 3), &kp.pk, &ok0,
                     &zWhy);
    if(rc == SQLITE_ERROR) {
      zWhat = sqlite3_mprintf("%s", p->azKey[0]);
      goto bad;
    }
    if(rc)
      goto fail;
    if(p->nKey == 2) {
      rc = dd_keys_val(p, p->aPath[0].iSk, sqlite3_column_value(pStmt, 6),
                       (const char *)sqlite3_column_text(pStmt, 5), &kp.sk,
                       &ok1, &zWhy);
      if(rc == SQLITE_ERROR) {
        dd_val_clear(&kp.pk);
        zWhat = sqlite3_mprintf("%s", p->azKey[1]);
        goto bad;
      }
      if(rc) {
        dd_val_clear(&kp.pk);
        goto fail;
      }
    }
    if(!ok0 || !ok1 || !dd_key_fits(&kp.pk, DD_MAX_PK_BYTES) ||
       (p->nKey == 2 && !dd_key_fits(&kp.sk, DD_MAX_SK_BYTES))) {
      dd_val_clear(&kp.pk); /* no item has this key: it finds nothing */
      dd_val_clear(&kp.sk);
      continue;
    }
    if(n == nAlloc) {
      dd_keypair *aNew;
      nAlloc = nAlloc ? nAlloc * 2 : 64;
      aNew = sqlite3_realloc64(a, sizeof(*a) * (sqlite3_uint64)nAlloc);
      if(!aNew) {
        dd_val_clear(&kp.pk);
        dd_val_clear(&kp.sk);
        rc = SQLITE_NOMEM;
        goto fail;
      }
      a = aNew;
    }
    a[n++] = kp;
    continue;
  bad:
    if(zWhat)
      dd_error(p, "keys: key %d (%.60s): %s %s", iKey,
               (const char *)sqlite3_column_text(pStmt, 1), zWhat, zWhy);
    else if(p->nKey == 2)
      dd_error(p,
               "keys: key %d (%.60s) %s: expected [%s, %s] or "
               "{\"%s\": .., \"%s\": ..}",
               iKey, (const char *)sqlite3_column_text(pStmt, 1), zWhy,
               p->azKey[0], p->azKey[1], p->azKey[0], p->azKey[1]);
    else
      dd_error(p,
               "keys: key %d (%.60s) %s: expected a value, [%s] or "
               "{\"%s\": ..}",
               iKey, (const char *)sqlite3_column_text(pStmt, 1), zWhy,
               p->azKey[0], p->azKey[0]);
    rc = SQLITE_ERROR;
    goto fail;
  }
  if(rc != SQLITE_DONE) {
    dd_error(p, "keys: %s", sqlite3_errmsg(p->db));
    rc = SQLITE_ERROR;
    goto fail;
  }
  rc = SQLITE_OK;
  /* the same key twice is one key (BatchGetItem refuses duplicates) */
  if(n > 1)
    qsort(a, (size_t)n, sizeof(*a), dd_keypair_order);
  aKey = sqlite3_malloc64(sizeof(*aKey) * (sqlite3_uint64)(n ? n : 1));
  if(!aKey) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  for(i = j = 0; i < n; i++) {
    ddb_av kv[2];
    if(i > 0 && dd_keypair_order(&a[i], &a[i - 1]) == 0)
      continue;
    kv[0] = a[i].pk.av;
    kv[0].name = p->azKey[0];
    kv[0].name_len = 0;
    if(p->nKey == 2) {
      kv[1] = a[i].sk.av;
      kv[1].name = p->azKey[1];
      kv[1].name_len = 0;
    }
    aKey[j] = ddb_item_from_avs(kv, p->nKey);
    if(!aKey[j]) {
      rc = SQLITE_NOMEM;
      break;
    }
    j++;
  }
  if(rc) {
    while(j > 0)
      ddb_item_unref(aKey[--j]);
    sqlite3_free(aKey);
    goto fail;
  }
  *paKey = aKey;
  *pnKey = j;

fail:
  sqlite3_finalize(pStmt);
  for(i = 0; i < n; i++) {
    dd_val_clear(&a[i].pk);
    dd_val_clear(&a[i].sk);
  }
  sqlite3_free(a);
  sqlite3_free(zPath[0]);
  sqlite3_free(zPath[1]);
  sqlite3_free(zWhat);
  return rc;
}

/* Run the plan keys = ?: BatchGetItem of aKey[0..nKey) (taken: unref'd
** here), through the cache, several calls in flight; then the overlay of
** the open transaction's writes to those keys. */
static int dd_run_key_list(dd_cursor *pCur, ddb_item **aKey, int nKey) {
  dd_vtab *p = (dd_vtab *)pCur->base.pVtab;
  ddb_item **aFound = NULL;
  ddb_error err;
  int i, rc = SQLITE_OK;

  ddb_error_clear(&err);
  if(nKey == 0) {
    pCur->bEof = 1;
    goto fail;
  }
  aFound = sqlite3_malloc64(sizeof(*aFound) * (sqlite3_uint64)nKey);
  pCur->aRow = sqlite3_malloc64(sizeof(*aFound) * (sqlite3_uint64)nKey);
  if(!aFound || !pCur->aRow) {
    rc = SQLITE_NOMEM;
    goto fail;
  }
  memset(aFound, 0, sizeof(*aFound) * (size_t)nKey);
  if(dd_batch_get_parallel(p, aKey, nKey, aFound, &err)) {
    rc = dd_cursor_error(pCur, &err);
    goto fail;
  }
  for(i = 0; i < nKey; i++)
    if(aFound[i]) {
      pCur->aRow[pCur->nRow++] = aFound[i];
      aFound[i] = NULL;
    }
  if(dd_pending_any(p)) {
    /* read your writes: the transaction's image of each key */
    pCur->aPend = sqlite3_malloc64(sizeof(ddb_item *) * (sqlite3_uint64)nKey);
    if(!pCur->aPend) {
      rc = SQLITE_NOMEM;
      goto fail;
    }
    for(i = 0; i < nKey; i++) {
      ddb_item *img = NULL;
      if(dd_pending_get(p, aKey[i], &img) && img)
        pCur->aPend[pCur->nPend++] = ddb_item_ref(img);
    }
    pCur->iPend = 0;
    pCur->bOverlay = 1;
  }

fail:
  for(i = 0; i < nKey; i++) {
    ddb_item_unref(aKey[i]);
    if(aFound)
      ddb_item_unref(aFound[i]);
  }
  sqlite3_free(aKey);
  sqlite3_free(aFound);
  return rc;
}

/*
** xFilter: run the plan xBestIndex chose (see the table above
** dynamodbBestIndex for idxNum and the order of argv).
*/
static int dynamodbFilter(sqlite3_vtab_cursor *cur, int idxNum,
                          const char *idxStr, int argc, sqlite3_value **argv) {
  dd_cursor *pCur = (dd_cursor *)cur;
  dd_vtab *p = (dd_vtab *)cur->pVtab;
  dd_path *pp;
  dd_interval iv;
  dd_val aSkEq[1];
  dd_val *aSkv = NULL; /* sort-key values (=, IN) for Get/BatchGetItem */
  int nSkv = 0;
  dd_extra x;
  int iArg = 0, i, rc = SQLITE_OK, nPrefix = 0, nOther = 0, nSkEq = 0;

  dd_cursor_reset(pCur);
  /* the first real read: the client (and credentials) are made now */
  rc = dd_client(p);
  if(rc)
    return rc;
  pp = &p->aPath[(idxNum >> 2) & 31];
  memset(&iv, 0, sizeof(iv));
  memset(aSkEq, 0, sizeof(aSkEq));
  iv.bExact = 1;
  if((idxNum & 3) == DD_OP_GET && !dd_pending_any(p) &&
     dd_get_cached(pCur, argc, argv))
    return dynamodbNext(cur);
  pCur->op = idxNum & 3;
  pCur->pPath = pp;
  pCur->bEof = 0;
  pCur->bFetch = (idxNum & DD_FETCH) != 0;
  if(dd_plan_decode(p, idxStr, argc, &x)) {
    dd_error(p, "the plan '%s' lost its machine half (see dd_plan_encode)",
             idxStr ? idxStr : "");
    return SQLITE_ERROR;
  }
  if(dd_in_write(p)) {
    /* an UPDATE or DELETE (or a read in a write transaction): rows must
    ** be whole items with their keys, never counted or projected */
    x.bCount = 0;
    x.mProj = 0;
  }
  if(idxNum & DD_KEYS) {
    ddb_item **aKey = NULL;
    int nKey = 0;
    if(argc != 1)
      return SQLITE_ERROR;
    pCur->pPath = &p->aPath[0];
    pCur->bEof = 0;
    pCur->pKeys = sqlite3_value_dup(argv[0]);
    if(!pCur->pKeys)
      return SQLITE_NOMEM;
    rc = dd_keys_parse(p, argv[0], &aKey, &nKey);
    if(rc == SQLITE_OK)
      rc = dd_run_key_list(pCur, aKey, nKey);
    if(rc == SQLITE_OK && !pCur->bEof) {
      pCur->tStart = ddbc_now();
      rc = dynamodbNext(cur);
    }
    if(rc)
      pCur->bEof = 1;
    return rc;
  }

  if(pCur->op == DD_OP_SCAN) {
    if(p->bScanDeny) {
      dd_scan_denied(p);
      return SQLITE_ERROR;
    }
    pCur->rd.table = p->pDesc->name;
  } else {
    rc = dd_collect(&pCur->aPk, &pCur->nPk, argv[iArg++],
                    (idxNum & DD_PK_IN) != 0, p->aCol[pp->iPk].type,
                    DD_MAX_PK_BYTES);
    if(rc)
      goto fail;
    if(pCur->nPk == 0)
      iv.bEmpty = 1; /* PK = NULL, or a value no key can hold */
    for(i = 0; i < 4; i++) {
      int k = (idxNum >> (DD_SK_SHIFT + 4 * i)) & 15;
      if(k == DD_SK_NONE || iArg >= argc)
        break;
      if(pCur->op != DD_OP_QUERY) {
        /* the table's sort key, = or IN: gather its values */
        rc = dd_collect(&aSkv, &nSkv, argv[iArg++], (idxNum & DD_SK_IN) != 0,
                        p->aCol[pp->iSk].type, DD_MAX_SK_BYTES);
        if(rc)
          goto fail;
        nSkEq = nSkv;
        continue;
      }
      if(k == DD_SK_LIKE || k == DD_SK_GLOB || k == DD_SK_BEGINS)
        ;
      else
        nOther++;
      rc = dd_iv_apply(&iv, p->aCol[pp->iSk].type, k, argv[iArg++], &nPrefix);
      if(rc)
        goto fail;
    }
    if(pCur->op != DD_OP_QUERY && p->nKey == 2 && nSkEq == 0)
      iv.bEmpty = 1;
  }
  /* FILTER values, in plan order */
  for(i = 0; i < x.nFilter && iArg < argc; i++) {
    int c = x.aFilterCol[i], k = x.aFilterKind[i], ok = 0;
    dd_val *v = &pCur->aFv[pCur->nFilter];
    ddb_filter *f = &pCur->aFilter[pCur->nFilter];
    sqlite3_value *pArg = argv[iArg++];
    if(k == DD_SK_BEGINS) {
      const char *z = (const char *)sqlite3_value_text(pArg);
      int n = sqlite3_value_bytes(pArg);
      if(sqlite3_value_type(pArg) == SQLITE_NULL) {
        iv.bEmpty = 1;
        continue;
      }
      if(!z || n == 0 || !dd_utf8_ok((const unsigned char *)z, n))
        continue; /* no narrowing: SQLite checks */
      rc = dd_val_text(v, DDB_S, z, n);
      ok = rc == SQLITE_OK;
    } else {
      rc = dd_val_from_sql(pArg, p->aCol[c].type, v, &ok);
    }
    if(rc)
      goto fail;
    if(!ok) {
      /* NULL or a value no attribute of that type equals: no row for =;
      ** for a bound, leave it to SQLite */
      if(k == DD_SK_EQ || sqlite3_value_type(pArg) == SQLITE_NULL)
        iv.bEmpty = 1;
      dd_val_clear(v);
      continue;
    }
    memset(f, 0, sizeof(*f));
    f->name = p->aCol[c].zName;
    f->op = k == DD_SK_BEGINS ? DDB_SK_BEGINS_WITH
            : k == DD_SK_EQ   ? DDB_SK_EQ
            : k == DD_SK_GT   ? DDB_SK_GT
            : k == DD_SK_GE   ? DDB_SK_GE
            : k == DD_SK_LT   ? DDB_SK_LT
                              : DDB_SK_LE;
    f->v[0] = v->av;
    pCur->aFilterCol[pCur->nFilter] = c;
    pCur->nFilter++;
  }
  pCur->rd.filters = pCur->aFilter;
  pCur->rd.n_filters = pCur->nFilter;
  for(i = 0; i < p->nCol && i < 64; i++)
    if(x.mProj & ((sqlite3_uint64)1 << i))
      pCur->azProj[pCur->nProj++] = p->aCol[i].zName;
  pCur->rd.proj = pCur->azProj;
  pCur->rd.n_proj = x.bCount ? 0 : pCur->nProj;
  pCur->bCount = pCur->rd.count_only = x.bCount;
  if(idxNum & DD_LIMIT) {
    sqlite3_int64 nLim = sqlite3_value_int64(argv[iArg++]);
    sqlite3_int64 nOff =
        (idxNum & DD_OFFSET) ? sqlite3_value_int64(argv[iArg++]) : 0;
    if(nOff < 0)
      nOff = 0;
    if(nLim == 0)
      iv.bEmpty = 1; /* LIMIT 0: no row, no call */
    /* LIMIT only when the call selects exactly the WHERE's rows; Limit is
    ** a 32-bit integer to DynamoDB: n+m beyond it (or overflowing) asks
    ** for DD_MAX_LIMIT, as good as none */
    if(nLim >= 0 && iv.bExact && !pCur->bFetch && pCur->nFilter == 0)
      pCur->nLimit = nLim > DD_MAX_LIMIT - nOff || nOff > DD_MAX_LIMIT
                         ? DD_MAX_LIMIT
                         : nLim + nOff;
  }
  if(iv.bEmpty) {
    pCur->bEof = 1;
    goto fail;
  }

  switch(pCur->op) {
  case DD_OP_GET:
  case DD_OP_BATCH:
    rc = dd_run_keys(pCur, aSkv, nSkv);
    if(rc)
      goto fail;
    break;
  case DD_OP_QUERY:
    pCur->rd.table = p->pDesc->name;
    pCur->rd.index = pp->pIdx->name;
    pCur->rd.pk_name = p->aCol[pp->iPk].zName;
    if(pp->iSk >= 0)
      pCur->rd.sk_name = p->aCol[pp->iSk].zName;
    dd_iv_finish(&iv, nPrefix, nOther, &pCur->rd, pCur->sk);
    if(iv.bEmpty) {
      pCur->bEof = 1;
      goto fail;
    }
    if(!iv.bExact)
      pCur->nLimit = 0;
    pCur->rd.sk[0] = pCur->sk[0].av;
    pCur->rd.sk[1] = pCur->sk[1].av;
    pCur->rd.descending = (idxNum & DD_DESC) != 0;
    pCur->iPk = -1;
    if(pCur->nPk > 1 && !pCur->bFetch && pCur->nLimit == 0) {
      /* several partitions (IN): their Queries run concurrently */
      rc = dd_pscan_start(
          pCur, pCur->nPk < DD_MAX_IN_WORKERS ? pCur->nPk : DD_MAX_IN_WORKERS,
          pCur->nPk);
      if(rc)
        goto fail;
    }
    break;
  default:
    pCur->nPk = 0;
    pCur->iPk = -1;
    if(p->nSlice > 0) {
      pCur->rd.segment = p->iSlice;
      pCur->rd.total_segments = p->nSlice;
    }
    break;
  }
  rc = dd_overlay_start(pCur, aSkv, nSkv);
  if(rc)
    goto fail;
  pCur->tStart = ddbc_now();
  if(pCur->op == DD_OP_QUERY || pCur->op == DD_OP_SCAN) {
    /* the first page: dd_next_page() starts at the first partition */
    pCur->bMore = 0;
    if(pCur->op == DD_OP_SCAN) {
      pCur->bMore = 1;
      pCur->iPk = 0;
      /* a LIMIT of at most DD_SCAN_SERIAL_LIMIT rows is one request with
      ** Limit (about a page): segments would each read a page */
      if(p->nSegments > 1 && p->nSlice == 0 &&
         (pCur->nLimit == 0 || pCur->nLimit > DD_SCAN_SERIAL_LIMIT)) {
        rc = dd_pscan_start(pCur, p->nSegments, p->nSegments);
        if(rc)
          goto fail;
      }
    }
  }
  rc = dynamodbNext(cur);

fail:
  dd_val_clear(&iv.lo);
  dd_val_clear(&iv.hi);
  dd_val_clear(&iv.prefix);
  for(i = 0; i < nSkv; i++)
    dd_val_clear(&aSkv[i]);
  sqlite3_free(aSkv);
  if(rc)
    pCur->bEof = 1;
  return rc;
}

static int dynamodbEof(sqlite3_vtab_cursor *cur) {
  return ((dd_cursor *)cur)->bEof;
}

/* A map, list or set as plain JSON text: malloc()ed, NUL-terminated, its
** length in *pn; NULL when out of memory or over 64 MiB. */
static char *dd_av_json(const ddb_av *av, size_t *pn) {
  ddb_buf b;
  ddb_buf_init(&b, 64u * 1024 * 1024);
  /* the item's decoded size bounds its JSON closely: one allocation */
  ddb_buf_reserve(&b, (size_t)av->n * 32 + 256);
  ddb_av_to_json(av, &b);
  return ddb_buf_take(&b, pn);
}

/* Set the result to attribute value av as a key column would show it. */
static void dd_result_av(sqlite3_context *ctx, const ddb_av *av) {
  switch(av->type) {
  case DDB_S:
    sqlite3_result_text(ctx, av->text, (int)av->n, SQLITE_TRANSIENT);
    return;
  case DDB_N: {
    int64_t i;
    double d;
    switch(ddb_number_classify(av->text, av->n, &i, &d)) {
    case DDB_NUM_INT: sqlite3_result_int64(ctx, i); return;
    case DDB_NUM_REAL: sqlite3_result_double(ctx, d); return;
    default: sqlite3_result_text(ctx, av->text, (int)av->n, SQLITE_TRANSIENT);
    }
    return;
  }
  case DDB_B: {
    unsigned char *z = sqlite3_malloc64(av->n + 1);
    size_t n;
    if(!z) {
      sqlite3_result_error_nomem(ctx);
      return;
    }
    n = ddb_base64_decode(av->text, av->n, z, av->n + 1);
    if(n == (size_t)-1) {
      sqlite3_free(z);
      sqlite3_result_error(ctx, DD_PREFIX "malformed base64 in a B value", -1);
      return;
    }
    sqlite3_result_blob64(ctx, z, n, sqlite3_free);
    return;
  }
  default: {
    size_t n;
    char *z = dd_av_json(av, &n);
    if(!z) {
      sqlite3_result_error_nomem(ctx);
      return;
    }
    sqlite3_result_text64(ctx, z, n, free, SQLITE_UTF8);
  }
  }
}

/* Render the current row's whole item as plain JSON into pCur->zItem
** (nItem bytes, NUL-terminated), which the cursor keeps until the row
** changes (dd_item_json_drop).  Returns 0, or 1 when out of memory. */
static int dd_item_json(dd_cursor *pCur) {
  pCur->zItem = dd_av_json(&pCur->pCur->root, &pCur->nItem);
  return pCur->zItem == NULL;
}

/* In a counted row, the value of column i if an = in the call fixes it
** (the partition key, an = sort key, an = filter), else NULL. */
static const dd_val *dd_known(dd_cursor *pCur, int i) {
  int k;
  if(pCur->op == DD_OP_QUERY && pCur->nPk && i == pCur->pPath->iPk)
    return &pCur->aPk[pCur->iPk];
  if(pCur->op == DD_OP_QUERY && i == pCur->pPath->iSk &&
     pCur->rd.sk_op == DDB_SK_EQ)
    return &pCur->sk[0];
  for(k = 0; k < pCur->nFilter; k++)
    if(pCur->aFilterCol[k] == i && pCur->aFilter[k].op == DDB_SK_EQ)
      return &pCur->aFv[k];
  return NULL;
}

/* Does item it have the attribute of every column in mGate, each of its
** column's type (the index membership of dd_column.mGate)? */
static int dd_gate_ok(const dd_vtab *p, const ddb_item *it,
                      sqlite3_uint64 mGate) {
  int c;
  for(c = 0; c < p->nCol && c < 64; c++) {
    const ddb_av *av;
    if(!(mGate & ((sqlite3_uint64)1 << c)))
      continue;
    av = ddb_item_get(it, p->aCol[c].zName);
    if(!av || av->type != p->aCol[c].type)
      return 0;
  }
  return 1;
}

static int dynamodbColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx,
                          int i) {
  dd_cursor *pCur = (dd_cursor *)cur;
  dd_vtab *p = (dd_vtab *)cur->pVtab;
  const ddb_av *av;
  if(pCur->bCount) {
    /* a counted row: only columns with a value known from an = */
    const dd_val *v = dd_known(pCur, i);
    if(v)
      dd_result_av(ctx, &v->av);
    return SQLITE_OK;
  }
  if(!pCur->pCur)
    return SQLITE_OK;
  if(i < p->nCol) {
    if(p->aCol[i].mGate && !dd_gate_ok(p, pCur->pCur, p->aCol[i].mGate))
      return SQLITE_OK; /* not in the index: NULL (in an UPDATE: unchanged) */
    av = ddb_item_get(pCur->pCur, p->aCol[i].zName);
    /* a declared column shows its attribute only in the declared type, so
    ** that SQLite and a FilterExpression agree on every comparison */
    if(av && (!p->aCol[i].bAttr || av->type == p->aCol[i].type))
      dd_result_av(ctx, av);
    return SQLITE_OK;
  }
  if(i == DD_COL_KEYS(p)) {
    /* keys: the list given to keys = ? (SQLite may compare it); in an
    ** UPDATE that does not set it, unchanged (dd_update refuses a value) */
    if(pCur->pKeys && !sqlite3_vtab_nochange(ctx))
      sqlite3_result_value(ctx, pCur->pKeys);
    return SQLITE_OK;
  }
  /* an UPDATE that does not change item: do not render it */
  if(sqlite3_vtab_nochange(ctx))
    return SQLITE_OK;
  if(i == p->nCol) {
    /* item: the whole item as plain JSON, rendered once per row */
    if(!pCur->zItem && dd_item_json(pCur))
      return SQLITE_NOMEM;
    sqlite3_result_text64(ctx, pCur->zItem, pCur->nItem, SQLITE_TRANSIENT,
                          SQLITE_UTF8);
  } else {
    /* item_raw: DynamoDB's typed JSON */
    ddb_buf b;
    char *z;
    size_t n;
    ddb_buf_init(&b, 64u * 1024 * 1024);
    ddb_item_to_typed_json(pCur->pCur, &b);
    z = ddb_buf_take(&b, &n);
    if(!z)
      return SQLITE_NOMEM;
    sqlite3_result_text64(ctx, z, n, free, SQLITE_UTF8);
  }
  return SQLITE_OK;
}

/*
** The rowid of a row is a 64-bit hash (FNV-1a) of its primary key in
** canonical form: the same item has the same rowid in every scan, which
** SQLite relies on when it merges the rows of an OR of indexable terms.
** (Two keys collide with odds of 2^-64 a pair.)
*/
sqlite3_int64 dd_key_rowid(dd_vtab *p, const ddb_item *it) {
  ddb_buf b;
  uint64_t h = 0xcbf29ce484222325ULL;
  size_t i;
  ddb_buf_init(&b, 4u * 1024 * 1024);
  if(ddb_key_encode(it, p->azKey, p->nKey, &b) == 0)
    for(i = 0; i < b.len; i++) {
      h ^= (unsigned char)b.p[i];
      h *= 0x100000001b3ULL;
    }
  ddb_buf_free(&b);
  return (sqlite3_int64)(h >> 1);
}

static int dynamodbRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid) {
  dd_cursor *pCur = (dd_cursor *)cur;
  dd_vtab *p = (dd_vtab *)cur->pVtab;
  if(pCur->bCount) {
    /* counted rows have no key: hash the partition and the row's place,
    ** the same in every run of the same plan */
    const dd_val *v = pCur->nPk ? &pCur->aPk[pCur->iPk] : NULL;
    uint64_t h = 0xcbf29ce484222325ULL;
    uint32_t k;
    for(k = 0; v && k < v->av.n; k++)
      h = (h ^ (unsigned char)v->av.text[k]) * 0x100000001b3ULL;
    h = (h ^ (uint64_t)pCur->nEmitted) * 0x100000001b3ULL;
    *pRowid = (sqlite3_int64)(h >> 1);
    return SQLITE_OK;
  }
  *pRowid = pCur->pCur ? dd_key_rowid(p, pCur->pCur) : 0;
  /* in a write transaction, an UPDATE or DELETE will name this row by its
  ** rowid: remember the item */
  return pCur->pCur ? dd_remember_row(p, *pRowid, pCur->pCur) : SQLITE_OK;
}

/* ------------------------------------------------------------------------
** SQL functions
*/

/* begins_with(X, P): 1 if X starts with P (as text, or as bytes when either
** is a blob), 0 if not, NULL if either is NULL. */
static void dd_begins_with_func(sqlite3_context *ctx, int argc,
                                sqlite3_value **argv) {
  const unsigned char *zX, *zP;
  int nX, nP, bBlob;
  (void)argc;
  if(sqlite3_value_type(argv[0]) == SQLITE_NULL ||
     sqlite3_value_type(argv[1]) == SQLITE_NULL)
    return;
  bBlob = sqlite3_value_type(argv[0]) == SQLITE_BLOB ||
          sqlite3_value_type(argv[1]) == SQLITE_BLOB;
  zX = bBlob ? sqlite3_value_blob(argv[0]) : sqlite3_value_text(argv[0]);
  nX = sqlite3_value_bytes(argv[0]);
  zP = bBlob ? sqlite3_value_blob(argv[1]) : sqlite3_value_text(argv[1]);
  nP = sqlite3_value_bytes(argv[1]);
  sqlite3_result_int(ctx,
                     nP <= nX && (nP == 0 || memcmp(zX, zP, (size_t)nP) == 0));
}

static int
dynamodbFindFunction(sqlite3_vtab *pVtab, int nArg, const char *zName,
                     void (**pxFunc)(sqlite3_context *, int, sqlite3_value **),
                     void **ppArg) {
  (void)pVtab;
  if(nArg == 2 && sqlite3_stricmp(zName, "begins_with") == 0) {
    *pxFunc = dd_begins_with_func;
    *ppArg = NULL;
    return DD_FUNC_BEGINS_WITH;
  }
  return 0;
}

/* dynamodb_info(NAME): how the virtual table NAME of this connection is
** set up, as JSON: DynamoDB table, endpoint, region, where the credentials
** came from (never the credentials), scan and consistent_read.  NULL when
** there is no such virtual table (or it was not used yet since opening
** the database: SQLite connects a virtual table on first use). */
/* The connected dynamodb vtab zName of db, or NULL. */
static dd_vtab *dd_find(sqlite3 *db, const char *zName) {
  dd_vtab *p;
  pthread_mutex_lock(&dd_registry_lock);
  for(p = dd_registry; p; p = p->pNextVtab)
    if(p->db == db && sqlite3_stricmp(p->zVtabName, zName) == 0)
      break;
  pthread_mutex_unlock(&dd_registry_lock);
  return p;
}

/* dynamodb_refresh(NAME): ask DynamoDB for the description of the table
** behind the virtual table NAME again (DescribeTable, bypassing the
** process's copy) and store it in NAME_schema, e.g. after a GSI was added
** or removed; also stores one for a table made by an older version of the
** extension, which has none.  The new columns and indexes are used from
** the next statement on.  Returns a line saying what is stored.  It
** reaches the network with the user's credentials, so it is DIRECTONLY. */
static void dd_refresh_func(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv) {
  const char *zName = (const char *)sqlite3_value_text(argv[0]);
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_stmt *pStmt = NULL;
  ddb_table_desc *d = NULL;
  ddb_error err;
  sqlite3_str *s = NULL;
  char *zErr = NULL, *zSql = NULL;
  dd_vtab *p;
  int rc, i;
  (void)argc;

  ddb_error_clear(&err);
  if(!zName)
    return;
  /* connect the vtab if no statement has yet (xConnect makes no call) */
  rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_table_info(?1)", -1,
                          &pStmt, 0);
  if(rc == SQLITE_OK) {
    sqlite3_bind_text(pStmt, 1, zName, -1, SQLITE_STATIC);
    sqlite3_step(pStmt);
  }
  sqlite3_finalize(pStmt);
  p = dd_find(db, zName);
  if(!p) {
    zErr = sqlite3_mprintf(DD_PREFIX "dynamodb_refresh: no dynamodb table "
                                     "'%s'",
                           zName);
    goto fail;
  }
  if(!sqlite3_get_autocommit(db)) {
    /* the new description reconnects the table: not under buffered writes */
    zErr = sqlite3_mprintf(DD_PREFIX "dynamodb_refresh: not inside a "
                                     "transaction (run it after COMMIT)");
    goto fail;
  }
  if(dd_client_make(p, 1)) {
    zErr = sqlite3_mprintf("%s", p->base.zErrMsg);
    goto fail;
  }
  if(ddbc_describe_table_fresh(p->pClient, p->zTable, &d, &err)) {
    zErr = sqlite3_mprintf(DD_PREFIX "table '%s': %s", p->zTable, err.message);
    goto fail;
  }
  rc = dd_desc_store(db, p->zDb, p->zVtabName, d, 0, &zErr);
  if(rc == SQLITE_OK) {
    /* SQLite declares a vtab's columns only when it connects it: renaming
    ** the shadow table away and back makes SQLite read the schema again,
    ** so that the next statement connects the table anew.  Legacy ALTER
    ** (nothing refers to the shadow table) so that a broken view elsewhere
    ** in the file does not stop it. */
    int bLegacy = 0;
    sqlite3_db_config(db, SQLITE_DBCONFIG_LEGACY_ALTER_TABLE, -1, &bLegacy);
    sqlite3_db_config(db, SQLITE_DBCONFIG_LEGACY_ALTER_TABLE, 1, (int *)0);
    zSql = sqlite3_mprintf("ALTER TABLE \"%w\".\"%w_schema\" RENAME TO "
                           "\"%w_schema_refresh\"; ALTER TABLE \"%w\"."
                           "\"%w_schema_refresh\" RENAME TO \"%w_schema\"",
                           p->zDb, p->zVtabName, p->zVtabName, p->zDb,
                           p->zVtabName, p->zVtabName);
    rc = zSql ? sqlite3_exec(db, zSql, 0, 0, &zErr) : SQLITE_NOMEM;
    sqlite3_db_config(db, SQLITE_DBCONFIG_LEGACY_ALTER_TABLE, bLegacy,
                      (int *)0);
  }
  if(rc) {
    char *z = sqlite3_mprintf(DD_PREFIX "dynamodb_refresh: cannot store the "
                                        "description of '%s': %s",
                              zName, zErr ? zErr : sqlite3_errstr(rc));
    sqlite3_free(zErr);
    zErr = z;
    goto fail;
  }
  s = sqlite3_str_new(0);
  sqlite3_str_appendf(s, "%s: DynamoDB table %s, %d index%s", zName, d->name,
                      d->n_indexes - 1, d->n_indexes == 2 ? "" : "es");
  for(i = 1; i < d->n_indexes; i++)
    sqlite3_str_appendf(s, "%s%s", i == 1 ? " (" : ", ", d->indexes[i].name);
  sqlite3_str_appendall(s, d->n_indexes > 1 ? ")" : "");
  zSql = (sqlite3_free(zSql), sqlite3_str_finish(s));
  if(zSql)
    sqlite3_result_text(ctx, zSql, -1, SQLITE_TRANSIENT);
  else
    sqlite3_result_error_nomem(ctx);

fail:
  if(zErr)
    sqlite3_result_error(ctx, zErr, -1);
  else if(rc == SQLITE_NOMEM)
    sqlite3_result_error_nomem(ctx);
  sqlite3_free(zErr);
  sqlite3_free(zSql);
  ddb_table_desc_free(d);
}

/* xRename: ALTER TABLE ... RENAME TO renames the stored description
** with the table (no call). */
static int dynamodbRename(sqlite3_vtab *pVtab, const char *zNew) {
  dd_vtab *p = (dd_vtab *)pVtab;
  char *zSql, *zName;
  int rc;
  zName = sqlite3_mprintf("%s", zNew);
  zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema WHERE name = "
                         "'%q_schema' AND type = 'table'",
                         p->zDb, p->zVtabName);
  if(!zName || !zSql) {
    sqlite3_free(zName);
    sqlite3_free(zSql);
    return SQLITE_NOMEM;
  }
  {
    sqlite3_stmt *pStmt = NULL;
    int bHas;
    rc = sqlite3_prepare_v2(p->db, zSql, -1, &pStmt, 0);
    bHas = rc == SQLITE_OK && sqlite3_step(pStmt) == SQLITE_ROW;
    sqlite3_finalize(pStmt);
    sqlite3_free(zSql);
    zSql = NULL;
    if(bHas) /* a table made by an older version has none */
      zSql = sqlite3_mprintf("ALTER TABLE \"%w\".\"%w_schema\" RENAME TO "
                             "\"%w_schema\"",
                             p->zDb, p->zVtabName, zNew);
    else
      rc = SQLITE_OK;
  }
  if(zSql) {
    char *zErr = NULL;
    rc = sqlite3_exec(p->db, zSql, 0, 0, &zErr);
    if(rc)
      dd_error(p, "cannot rename the stored description: %s",
               zErr ? zErr : sqlite3_errstr(rc));
    sqlite3_free(zErr);
    sqlite3_free(zSql);
  }
  if(rc == SQLITE_OK) {
    pthread_mutex_lock(&dd_registry_lock);
    sqlite3_free(p->zVtabName);
    p->zVtabName = zName;
    pthread_mutex_unlock(&dd_registry_lock);
  } else {
    sqlite3_free(zName);
  }
  return rc;
}

/* xShadowName: NAME_schema is the stored description of vtab NAME. */
static int dynamodbShadowName(const char *zSuffix) {
  return sqlite3_stricmp(zSuffix, "schema") == 0;
}

static void dd_info_func(sqlite3_context *ctx, int argc,
                         sqlite3_value **argv) {
  const char *zName = (const char *)sqlite3_value_text(argv[0]);
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *azKey[] = {"table", "endpoint", "region", "credentials", "scan"};
  const char *azVal[5];
  dd_vtab *p;
  ddb_buf b;
  char *z;
  size_t n;
  int i;
  (void)argc;
  if(!zName)
    return;
  ddb_buf_init(&b, 64 * 1024);
  p = dd_find(db, zName);
  /* the vtabs of db are db's (this thread's) until it disconnects them:
  ** p stays valid after the registry's lock */
  if(p && dd_client(p)) {
    sqlite3_result_error(ctx, p->base.zErrMsg, -1);
    return;
  }
  pthread_mutex_lock(&dd_registry_lock);
  if(p) {
    azVal[0] = p->pDesc->name;
    azVal[1] = ddb_client_endpoint(p->pClient);
    azVal[2] = ddb_client_region(p->pClient);
    azVal[3] = ddb_client_credential_source(p->pClient);
    azVal[4] = p->bScanDeny ? "deny" : "allow";
    for(i = 0; i < 5; i++) {
      ddb_buf_addc(&b, i ? ',' : '{');
      ddb_buf_json_str(&b, azKey[i], strlen(azKey[i]));
      ddb_buf_addc(&b, ':');
      ddb_buf_json_str(&b, azVal[i], strlen(azVal[i]));
    }
    ddb_buf_addf(&b,
                 ",\"consistent_read\":%s,\"segments\":%d,"
                 "\"table_bytes\":%lld}",
                 p->pol.consistent ? "true" : "false",
                 p->nSlice ? 1 : p->nSegments,
                 (long long)p->pDesc->size_bytes);
  }
  pthread_mutex_unlock(&dd_registry_lock);
  if(!p)
    return;
  z = ddb_buf_take(&b, &n);
  if(!z)
    sqlite3_result_error_nomem(ctx);
  else
    sqlite3_result_text64(ctx, z, n, free, SQLITE_UTF8);
}

/* The seq of the last request dynamodb_calls() reported. */
static uint64_t dd_calls_seen;

/* dynamodb_calls(): the DynamoDB calls made by this process since the
** previous dynamodb_calls(), e.g. "Query GSI1, GetItem"; follow-up pages
** and retries of a call are not listed again.  "(none)" if there were
** none. */
static void dd_calls_func(sqlite3_context *ctx, int argc,
                          sqlite3_value **argv) {
  ddb_log_entry *a;
  sqlite3_str *s;
  uint64_t after = __atomic_load_n(&dd_calls_seen, __ATOMIC_RELAXED);
  int i, n, nOut = 0;
  (void)argc;
  (void)argv;
  a = sqlite3_malloc64(sizeof(ddb_log_entry) * DDB_LOG_SIZE);
  if(!a) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  n = ddb_log_read(after, a, DDB_LOG_SIZE);
  s = sqlite3_str_new(0);
  for(i = 0; i < n; i++) {
    if(a[i].continuation)
      continue;
    sqlite3_str_appendf(s, "%s%s%s%s", nOut++ ? ", " : "", a[i].operation,
                        a[i].index[0] ? " " : "", a[i].index);
  }
  if(n > 0)
    __atomic_store_n(&dd_calls_seen, a[n - 1].seq, __ATOMIC_RELAXED);
  if(nOut == 0)
    sqlite3_str_appendall(s, "(none)");
  sqlite3_free(a);
  sqlite3_result_text(ctx, sqlite3_str_value(s), -1, SQLITE_TRANSIENT);
  sqlite3_free(sqlite3_str_finish(s));
}

/* ------------------------------------------------------------------------
** The module
*/
static sqlite3_module dynamodbModule = {
    3,                    /* iVersion: savepoints, xShadowName */
    dynamodbCreate,       /* xCreate: describes and stores the table */
    dynamodbConnect,      /* xConnect: reads the stored description */
    dynamodbBestIndex,    /* xBestIndex */
    dynamodbDisconnect,   /* xDisconnect */
    dynamodbDestroy,      /* xDestroy: never deletes the DynamoDB table */
    dynamodbOpen,         /* xOpen */
    dynamodbClose,        /* xClose */
    dynamodbFilter,       /* xFilter */
    dynamodbNext,         /* xNext */
    dynamodbEof,          /* xEof */
    dynamodbColumn,       /* xColumn */
    dynamodbRowid,        /* xRowid */
    dd_update,            /* xUpdate: write.c */
    dd_begin,             /* xBegin */
    dd_sync,              /* xSync: COMMIT sends buffered writes */
    dd_commit,            /* xCommit */
    dd_rollback,          /* xRollback */
    dynamodbFindFunction, /* xFindFunction: begins_with */
    dynamodbRename,       /* xRename: renames NAME_schema too */
    dd_savepoint,         /* xSavepoint */
    dd_release,           /* xRelease */
    dd_rollback_to,       /* xRollbackTo */
    dynamodbShadowName    /* xShadowName: NAME_schema */
};

int sqlite3_dynamodb_init(sqlite3 *db, char **pzErrMsg,
                          const sqlite3_api_routines *pApi);

#ifdef _WIN32
__declspec(dllexport)
#endif
    int sqlite3_dynamodb_init(sqlite3 *db, char **pzErrMsg,
                              const sqlite3_api_routines *pApi) {
  int rc;
  SQLITE_EXTENSION_INIT2(pApi);
  (void)pzErrMsg;
  ddbc_pin(); /* the cache outlives the last connection (cache.c) */
  rc = sqlite3_create_module(db, "dynamodb", &dynamodbModule, 0);
  if(rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "begins_with", 2,
                                 SQLITE_UTF8 | SQLITE_DETERMINISTIC |
                                     SQLITE_INNOCUOUS,
                                 0, dd_begins_with_func, 0, 0);
  if(rc == SQLITE_OK)
    rc = dd_register_log(db);
  if(rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "dynamodb_info", 1,
                                 SQLITE_UTF8 | SQLITE_DIRECTONLY, 0,
                                 dd_info_func, 0, 0);
  /* DIRECTONLY: functions that reach DynamoDB with the user's
  ** credentials (dynamodb_info resolves them, dynamodb_refresh calls) are
  ** refused inside the views and triggers of a database file */
  if(rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "dynamodb_refresh", 1,
                                 SQLITE_UTF8 | SQLITE_DIRECTONLY, 0,
                                 dd_refresh_func, 0, 0);
  if(rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "dynamodb_calls", 0,
                                 SQLITE_UTF8 | SQLITE_DIRECTONLY, 0,
                                 dd_calls_func, 0, 0);
  return rc;
}
