/*
** dd_ext.h -- declarations shared by the files of ext/ (not an interface:
** the extension's interface is SQL, registered by sqlite3_dynamodb_init).
*/
#ifndef DD_EXT_H
#define DD_EXT_H

#include <pthread.h>

#include <sqlite3ext.h>

#include "../cache/ddb_cache.h"

/* Every error message of the module starts with this. */
#define DD_PREFIX "dynamodb: "

/* Estimated rows of a partition with no sort-key condition. */
#define DD_PARTITION_ROWS 100.0
/* Cost of a full Scan when DescribeTable gives no item count. */
#define DD_SCAN_MIN_ROWS 1000.0
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
/* segments=auto splits a table whose reported size is known into about
** one segment (TotalSegments) per DD_UNIT_BYTES, between one and
** DD_UNITS_PER_WORKER per worker; the workers (the segments above) take
** them in turn, so requests stay that many at a time.  Small segments are
** mostly read in one request each: a partition much larger than the
** others no longer makes its segment a chain of many pages that finishes
** long after the rest (in the benchmark's table, one segment of 8 held 6
** of the 27 pages), and DynamoDB Local answers first pages faster than
** follow-up ones.  An unknown size (0: a table loaded in the last hours)
** keeps one segment per worker. */
#define DD_UNIT_BYTES       (1024LL * 1024)
#define DD_UNITS_PER_WORKER 4
/* Calls of a split write in flight at once (write_calls=), by default:
** as many as a full Scan's segments. */
#define DD_WRITE_CALLS 8
/* Single-row statements in a row that earn the hint to use BEGIN ...
** COMMIT (dd_hint_singles). */
#define DD_HINT_SINGLES 1000
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
#define DD_MAX_EQ (2 * DDB_KEY_ATTRS - 1) /* a multi-attribute key's other = */
/* Partitions of an IN list queried at once at the most (filter.c). */
#define DD_MAX_IN_WORKERS 8

/* The idxNum of a plan: ext/PLAN.md ("idxNum") is its layout.  These
** name its fields, for the encoder (plan.c) and the decoder (filter.c)
** alike: no bit of idxNum is written or read with a bare number. */
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
#define DD_OP_MASK    0x3 /* bits 0-1: DD_OP_* */
#define DD_PATH_SHIFT 2   /* bits 2-6: the path, an index of dd_vtab.aPath */
#define DD_PATH_MASK  0x1f
#define DD_PK_IN      (1 << 7)
#define DD_SK_IN      (1 << 8)
#define DD_DESC       (1 << 9)
#define DD_LIMIT      (1 << 10)
#define DD_OFFSET     (1 << 11)
#define DD_SK_SHIFT   12 /* bits 12-27: DD_MAX_SK sort-key kinds (DD_SK_*) */
#define DD_SK_BITS    4  /* ... of DD_SK_BITS bits each, lowest first */
#define DD_SK_MASK    0xf
#define DD_FETCH      (1 << 28)
#define DD_KEYS       (1 << 29)
#define DD_NONE       (1 << 30)
/* The op and path fields of an idxNum for op o on path i. */
#define DD_IDX_MAKE(o, i) ((o) | ((i) << DD_PATH_SHIFT))
/* The sort-key kind k as the i-th of an idxNum (0-based). */
#define DD_IDX_SK_SET(k, i) ((k) << (DD_SK_SHIFT + DD_SK_BITS * (i)))
/* The fields of idxNum n: its DD_OP_*, its path, its i-th sort-key kind. */
#define DD_IDX_OP(n)   ((n)&DD_OP_MASK)
#define DD_IDX_PATH(n) (((n) >> DD_PATH_SHIFT) & DD_PATH_MASK)
#define DD_IDX_SK(n, i)                                                       \
  (((n) >> (DD_SK_SHIFT + DD_SK_BITS * (i))) & DD_SK_MASK)
_Static_assert(DD_SK_BEGINS <= DD_SK_MASK, "a sort-key kind fits its bits");
_Static_assert(DD_SK_SHIFT + DD_SK_BITS * DD_MAX_SK <= 28,
               "the sort-key kinds end below DD_FETCH");

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
  /* a multi-attribute key's other = (multikey.c); iSkCol: aSkCons' column */
  int nEq, aEqCons[DD_MAX_EQ], aEqCol[DD_MAX_EQ], iSkCol;
} dd_plan;

/* The machine half of idxStr (ext/PLAN.md, "idxStr"; plancodec.c). */
enum {
  DD_ARG_PK = 1,
  DD_ARG_SK,
  DD_ARG_FILTER,
  DD_ARG_LIMIT,
  DD_ARG_OFFSET,
  DD_ARG_KEYS,
  DD_ARG_CHECK,
  DD_ARG_KEQ /* a multi-attribute key's other attribute = (multikey.c) */
};
/* xFilter arguments at the most: PK, the sort-key constraints, the
** filters and checks (DD_MAX_FILTER together), LIMIT and OFFSET. */
#define DD_MAX_ARGS   (1 + DD_MAX_EQ + DD_MAX_SK + DD_MAX_FILTER + 2)
#define DD_PLAN_MAGIC "ddplan1"

/* ORDER BY terms the cursor sorts by itself at the most (DD_SORT). */
#define DD_MAX_SORT 8

typedef struct dd_plancode {
  char zMagic[8];
  int nArg;
  int bCount;
  sqlite3_uint64 mProj;
  sqlite3_uint64 mUsed; /* the columns the statement reads (dd_extra) */
  int nSort;            /* the cursor sorts its rows by these columns */
  struct {
    short col;
    unsigned char desc;
  } aSort[DD_MAX_SORT];
  struct {
    unsigned char role, kind;
    short col;
  } aArg[DD_MAX_ARGS];
} dd_plancode;

typedef struct dd_txn dd_txn;
/* A connection's open write transactions, across its tables (txn.c). */
typedef struct dd_txn_reg dd_txn_reg;
/* A connection's statement state: its meter, the statement running
** (stmt.c). */
typedef struct dd_conn dd_conn;

/* The options of one CREATE VIRTUAL TABLE as given, dequoted (NULL: not
** given); each string sqlite3_free()d (dd_opts_free).  options.c holds
** their names and checks. */
typedef struct dd_opts {
  char *zTable, *zRegion, *zEndpoint, *zProfile, *zCaBundle, *zColumns;
  char *zScan, *zConsistent, *zTimeout, *zMaxRetries, *zItemTtl, *zQueryTtl,
      *zProgress, *zSegments, *zSegment, *zSplit, *zWriteCalls;
  char *zSharedCache, *zSharedTimeout, *zSharedLeaseWait; /* the shared
                                                            tier */
  char *zMaxRequests, *zTtl, *zMaxRcu, *zMaxWcu, *zCoherence, *zStaleness;
} dd_opts;

/* A value converted from SQL for use in a key condition.  av.text points
** into zBuf (owned) or into raw bytes kept alongside. */
typedef struct dd_val {
  ddb_av av;
  char *zBuf;               /* free() */
  const unsigned char *raw; /* bytes for ordering (text, or blob bytes) */
  int nRaw;
  int bOut; /* N: a number beyond DynamoDB's range or precision (1E-131,
               39 digits): compared exactly, never sent */
} dd_val;

/* What a Query or Scan does besides its key condition: the part of the
** plan xFilter reads from the machine half of idxStr (ext/PLAN.md;
** dd_plan_decode). */
typedef struct dd_extra {
  int nFilter;
  int aFilterCol[DD_MAX_FILTER];  /* column of each filter */
  int aFilterKind[DD_MAX_FILTER]; /* DD_SK_EQ .. _LE or _BEGINS */
  sqlite3_uint64 mProj;           /* columns to project; 0: whole items */
  sqlite3_uint64 mUsed; /* columns the statement reads (colUsed and their
                           gates; 0 when the plan does not say) */
  int bCount;           /* Select=COUNT */
  /* CHECK: comparisons sent nowhere, which xFilter judges (a value no
  ** row can match costs no call; an N comparison is checked exactly on
  ** each row); at most DD_MAX_FILTER - nFilter */
  int nCheck;
  int aCheckCol[DD_MAX_FILTER];
  int aCheckKind[DD_MAX_FILTER];
  int bFetch; /* DD_FETCH: each row read again by table key (EXPLAIN) */
  int nEq;    /* DD_ARG_KEQ arguments (a multi-attribute key's =) */
  /* SORT: an ORDER BY on an N column the call does not deliver in order,
  ** which the cursor sorts, numerically (cursor.c: dd_sort_rows) */
  int nSort;
  int aSortCol[DD_MAX_SORT];
  int aSortDesc[DD_MAX_SORT];
} dd_extra;

/* A row check: the current row's column iCol compared with v, exactly
** (ddb_number_cmp), by op DD_SK_EQ .. DD_SK_LE; op DD_SK_NONE: the
** column has a value.  For the N comparisons SQLite was told to omit
** whose answer the request alone does not give (ext/PLAN.md, "omit"). */
typedef struct dd_check {
  int iCol, op;
  dd_val v;
} dd_check;
/* Row checks of one cursor at the most: the sort key's two bounds, and
** two for a filter or check each (an equality with a REAL: dd_n_ops). */
#define DD_MAX_CHECKS (2 * DD_MAX_FILTER + 2)

/* A sort-key condition being built (see "Sort-key conditions" in
** keycond.c). */
typedef struct dd_interval {
  dd_val lo, hi;              /* empty (av.type 0) when absent */
  int loOpen, hiOpen, nSlack; /* nSlack: see dd_iv_finish */
  dd_val prefix; /* set while the interval is exactly one prefix */
  int bPrefixOnly;
  int bEmpty; /* no row can match */
  int bExact; /* the condition sent selects exactly these rows */
} dd_interval;

/* A key column: one attribute that is a key of the table or an index. */
typedef struct dd_column {
  char *zName;   /* attribute name; sqlite3_free() */
  ddb_type type; /* DDB_S, DDB_N or DDB_B */
  int bAttr;     /* declared by columns=, not a key of any index */
  /* An index's partition key shows its value only for items in every
  ** index it is the partition key of: bit c set when the item must also
  ** have column c's attribute (of its type).  0: always shown. */
  sqlite3_uint64 mGate;
} dd_column;

/* An access path: the base table (iPath 0) or an index. */
typedef struct dd_path {
  const ddb_index *pIdx; /* owned by dd_vtab.pDesc */
  int iPk;               /* column number of the partition key */
  int iSk;               /* column number of the sort key, or -1 */
  sqlite3_uint64 mCover; /* columns the path's projection holds */
  /* each key attribute's column in order (a GSI's: 4 + 4); mKey: bits */
  int nPkCol, nSkCol, aPkCol[DDB_KEY_ATTRS], aSkCol[DDB_KEY_ATTRS];
  sqlite3_uint64 mKey;
} dd_path;

/* The column number of the hidden `keys` column (see dd_keys_parse). */
#define DD_COL_KEYS(p) ((p)->nCol + 1)

typedef struct dd_vtab {
  sqlite3_vtab base;     /* Base class.  Must be first */
  ddb_client *pClient;   /* ddb_client_free() */
  ddb_table_desc *pDesc; /* ddb_table_desc_free() */
  int nCol;              /* key columns; column nCol is `item`, nCol+1
                            the hidden `keys`, nCol+2 `item_raw` */
  dd_column *aCol;       /* sqlite3_free() */
  int nPath;
  dd_path *aPath;       /* sqlite3_free(); [0] is the base table */
  const char *azKey[2]; /* the table's key attribute names (in pDesc) */
  int nKey;             /* 1 or 2 */
  int bScanDeny;        /* scan=deny */
  ddbc_policy pol;      /* how reads may be served */
  int nSegments;        /* parallel Scan workers (segments=) */
  int nUnits;           /* a full Scan's TotalSegments: nSegments, or more
                        ** for segments=auto (dd_auto_units) */
  int iSlice, nSlice;   /* segment=I/N; nSlice 0: the whole table */
  int bProgress;        /* progress= */
  int bSplit;           /* split_transactions: >100 writes may go as
                           BatchWriteItem (not atomic) */
  int bHeaderRefused;   /* a row of the open transaction looked like a
                           CSV header: its later INSERTs are refused
                           (import.c) */
  int nWriteCalls;      /* write_calls: calls of a split write in flight
                           at once (and its INSERTs' checks) */
  int eTransact;        /* has the server TransactWriteItems?  0 not
                           known yet, 1 yes, -1 no (commit_send.c) */
  int nSingleRun;       /* statements in a row that each wrote one row
                           (for the hint, dd_hint_singles) */
  dd_txn *pTxn;         /* writes buffered in BEGIN...COMMIT; see txn.c */
  const char *zColumns; /* columns= while connecting (borrowed) */
  char *zSchemaErr;     /* an error building the schema; sqlite3_free() */
  /* The client is made at the first real read or write (dd_client), never
  ** by xConnect: reading a schema makes no call and resolves no
  ** credentials.  Until then cfg holds the options it will be made of. */
  ddb_config cfg; /* strings owned: zRegion .. zCaBundle */
  char *zRegion, *zEndpoint, *zProfile, *zCaBundle; /* sqlite3_free() */
  char *zTable;    /* the DynamoDB table; sqlite3_free() */
  char *zDb;       /* the schema (main, temp, ...); sqlite3_free() */
  char *zDefer;    /* why the table cannot be used (bad options in the
                       file, no stored description), reported by its first
                       use; NULL: usable.  sqlite3_free() */
  int bOptErr;     /* zDefer is about the options */
  sqlite3 *db;     /* the connection, for dynamodb_info() */
  char *zVtabName; /* the virtual table's name; sqlite3_free() */
  struct dd_vtab *pNextVtab; /* list of all vtabs, under dd_registry_lock */
  /* shared_cache_timeout= (0: the default); pol.shared is the tier of
  ** shared_cache= (or NULL) */
  double rSharedTimeout;
  dd_conn *pConn; /* the connection's statement state (the module's
                      client data; it outlives the vtab) */
  int bTtlHide;   /* ttl=hide */
  int bTtlKnown;  /* zTtlAttr was asked (DescribeTimeToLive) */
  char *zTtlAttr; /* ttl=hide: the table's TTL attribute, NULL: none
                      (TTL off); sqlite3_free() */
} dd_vtab;

/* A cursor: the rows of one run of a plan, declared in cursor.h, the read
** path's header (cursor.c, filter.c, multikey.c and the files they are
** split into): the rest of ext/ sees only the name. */
typedef struct dd_cursor dd_cursor;

/* Is column c one of the table's key attributes (the table path's)? */
static inline int dd_col_is_key(const dd_vtab *p, int c) {
  return c == p->aPath[0].iPk || c == p->aPath[0].iSk;
}

/* Every connected vtab of the process, for dynamodb_info() and
** dynamodb_refresh(), linked by pNextVtab (common.c). */
extern pthread_mutex_t dd_registry_lock;
extern dd_vtab *dd_registry;

/* Set p's error message (freeing the old one) to DD_PREFIX and a
** printf-style message (common.c). */
void dd_error(dd_vtab *p, const char *zFmt, ...);
/* The same for the extension's other tables (common.c). */
void dd_vtab_error(sqlite3_vtab *pBase, const char *zFmt, ...);
/* A name a server told (a table's, an index's, an attribute's), as the
** extension shows it: escaped as error text is (ddb_text_safe: control
** characters as \xHH, C1, bidi controls and line separators as \uHHHH),
** every other character as it is (common.c).  dd_shown: a new string
** (sqlite3_free), NULL when out of memory; dd_result_shown: the result
** of ctx (nothing for NULL z), SQLITE_NOMEM when out of memory;
** dd_json_shown: as a JSON string appended to b (b->failed when out of
** memory). */
char *dd_shown(const char *z);
int dd_result_shown(sqlite3_context *ctx, const char *z);
void dd_json_shown(ddb_buf *b, const char *z);
/* Set ctx's result to av as a column shows it (cursor.c). */
void dd_result_av(sqlite3_context *ctx, const ddb_av *av);
/* The xConnect and xOpen of the extension's eponymous tables (monitor.c,
** hot.c, tables.c, attributes.c; common.c).  dd_eponymous_connect
** declares zSchema on db, allocates a zeroed vtab of nByte bytes (its
** sqlite3_vtab first) into *ppVtab and makes eConfig the table's
** sqlite3_vtab_config choice (SQLITE_VTAB_INNOCUOUS or _DIRECTONLY, its
** reason written at the caller); dd_eponymous_open a zeroed cursor of
** nByte bytes into *ppCur.  Both return an SQLite code; sqlite3_free()
** frees what they allocate. */
int dd_eponymous_connect(sqlite3 *db, const char *zSchema, size_t nByte,
                         int eConfig, sqlite3_vtab **ppVtab);
int dd_eponymous_open(size_t nByte, sqlite3_vtab_cursor **ppCur);
/* The SQLite result code for a client error (common.c). */
int dd_rc(const ddb_error *e);
/* The name of the extra column zBase ("item", "keys", "item_raw") into
** zName[32]: zBase, with '_' appended while a key attribute has it
** (schema.c). */
void dd_extra_col_name(dd_vtab *p, const char *zBase, char *zName);
/* Make sure p can reach DynamoDB: SQLITE_OK with p->pClient made (the
** first time: resolves region, endpoint and credentials), or an error
** with p's message set (the table's deferred error, or the client's;
** schema.c). */
int dd_client(dd_vtab *p);
/* The cancel hook of a table's client (ud: its sqlite3 *): has the
** statement running on this thread been interrupted (sqlite3_interrupt,
** Ctrl-C)?  Only on the thread that runs the statement (common.c). */
int dd_interrupted(void *pDb);
/* dd_number_text: the DynamoDB number text of an SQL value (keycond.c,
** which documents it). */
enum { DD_NUM_OK = 0, DD_NUM_NONE, DD_NUM_RANGE };
int dd_number_text(sqlite3_value *pVal, char *zBuf, size_t nBuf,
                   const char **pz, int *pn, double *pd);
/* The one builder of table keys (keycond.c): the key of p with
** partition-key value pk and, when the table has a sort key, sort-key
** value sk (else sk is not read), as attribute values named by p->azKey
** into kv[0..p->nKey), their bytes borrowed from pk and sk: returns
** p->nKey.  dd_key_item: the same as a key item, a new reference
** (ddb_item_unref), NULL when out of memory
** (dd_key_avs is inline: the warm GetItem of a join builds its key with
** it, for the item cache, on every row.) */
static inline int dd_key_avs(const dd_vtab *p, const ddb_av *pk,
                             const ddb_av *sk, ddb_av kv[2]) {
  kv[0] = *pk;
  kv[0].name = p->azKey[0];
  kv[0].name_len = 0;
  if(p->nKey == 2) {
    kv[1] = *sk;
    kv[1].name = p->azKey[1];
    kv[1].name_len = 0;
  }
  return p->nKey;
}
ddb_item *dd_key_item(const dd_vtab *p, const ddb_av *pk, const ddb_av *sk);
/* The stable rowid of an item: a hash of its primary key (keycond.c). */
sqlite3_int64 dd_key_rowid(dd_vtab *p, const ddb_item *it);

/* write.c: xUpdate and the row it writes. */
/* xUpdate: INSERT, UPDATE, DELETE of one row.  Returns an SQLite code,
** the vtab's message set on error. */
int dynamodbUpdate(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                   sqlite3_int64 *pRowid);
/* row.c: rows as writes see them; one row's write sent alone. */
/* Send one write of a statement as its own call, as xUpdate always did
** (INSERT's PutItem, UPDATE's UpdateItem, DELETE's DeleteItem: kind,
** cond and the new item it, or for a DELETE the old one; old: the image
** an UPDATE read), with the statement's messages ("INSERT: an item with
** key ... already exists").  Returns an SQLite code, the error set on p. */
int dd_write_now(dd_vtab *p, ddb_write_kind kind, ddb_cond cond,
                 const ddb_item *it, const ddb_item *old);
/* The same for an UPDATE that moves item old to it's key: one
** TransactWriteItems of the Delete and the Put. */
int dd_move_now(dd_vtab *p, const ddb_item *old, const ddb_item *it);
/* The key of it as text for messages (PK='a', SK=5): from
** sqlite3_malloc (the caller frees it), or NULL when out of memory. */
char *dd_key_text(dd_vtab *p, const ddb_item *it);
/* Why a write conditioned on the image read (DDB_COND_SAME) of the item
** with it's key in p's table failed, asked of DynamoDB (a consistent
** GetItem) now: "the item with key PK='a' changed since it was read", or
** "... does not exist any more"; zName, if not NULL, is the key as the
** message names it (a COMMIT across tables: "PK='a' in b").  From
** sqlite3_malloc; NULL when out of memory. */
char *dd_changed_reason(dd_vtab *p, const ddb_item *it, const char *zName);
/* A write of the item with it's key, conditioned on what was read, failed
** its condition with e: was it applied all the same, by an earlier
** attempt whose answer was lost (e->maybe_applied), so that the retry
** found the item changed by itself?  Asked of DynamoDB now (consistent):
** 1 when the item is want (NULL: a DELETE's, no item), else 0. */
int dd_write_landed(dd_vtab *p, const ddb_item *it, const ddb_item *want,
                    const ddb_error *e);
/* What an UPDATE from old to it changes: *pSet the attributes to SET (NULL
** when none), azRemove[0..*pnRemove) the names to REMOVE (borrowed from
** old; azRemove has room for old's attributes).  Key attributes are never
** set.  Returns an SQLite code. */
int dd_diff(dd_vtab *p, const ddb_item *old, const ddb_item *it,
            ddb_item **pSet, const char **azRemove, int *pnRemove);

/* import.c: the sqlite3 shell's .import mistake (a CSV header row).
** dd_import_check: SQLITE_OK, or SQLITE_CONSTRAINT with p's error set for
** a header row and every later INSERT of its transaction;
** dd_import_reset: at xBegin. */
int dd_import_check(dd_vtab *p, sqlite3_value **argv);
void dd_import_reset(dd_vtab *p);

/* txn.c: the transaction methods, the writes buffered until COMMIT.
** xBegin .. xRollbackTo; xSync sends the writes (planned by commit.c, sent
** by commit_send.c).  Each returns an SQLite
** code, the vtab's message set on error; their contracts are at their
** definitions. */
int dynamodbBegin(sqlite3_vtab *pVtab);
int dynamodbSync(sqlite3_vtab *pVtab);
int dynamodbCommit(sqlite3_vtab *pVtab);
int dynamodbRollback(sqlite3_vtab *pVtab);
int dynamodbSavepoint(sqlite3_vtab *pVtab, int iSavepoint);
int dynamodbRelease(sqlite3_vtab *pVtab, int iSavepoint);
int dynamodbRollbackTo(sqlite3_vtab *pVtab, int iSavepoint);
/* p's transaction state, made on first use: NULL when out of memory. */
dd_txn *dd_txn_get(dd_vtab *p);
/* Buffer a write of the open transaction (takes references to item and
** old: UPDATE's image as read, else NULL) and make it the newest write of
** its key.  bInsert: from an INSERT (an existing key fails the COMMIT).
** Returns an SQLite code; on error nothing is buffered. */
int dd_op_add(dd_vtab *p, ddb_write_kind kind, ddb_cond cond,
              const ddb_item *item, const ddb_item *old, int bInsert);
/* Buffer the move of item old to it's key (an UPDATE of the key): the
** Delete of old (must exist) and the Put of it (must not exist), which
** COMMIT never sends apart, in one TransactWriteItems however big the
** COMMIT.  Returns an SQLite code; on error neither is buffered. */
int dd_op_add_move(dd_vtab *p, const ddb_item *old, const ddb_item *it);
/* Remember row it under rowid for a later xUpdate (during a write
** transaction only); bDepends: the row was chosen on values other than
** its key (a DELETE of it is conditioned on what was read; once set for
** a rowid, it stays).  Returns an SQLite code. */
int dd_remember_row(dd_vtab *p, sqlite3_int64 rowid, ddb_item *it,
                    int bDepends);
/* The row remembered under rowid (borrowed), or NULL; *pbDepends (may be
** NULL) as dd_remember_row was told. */
const ddb_item *dd_row_get(dd_vtab *p, sqlite3_int64 rowid, int *pbDepends);
/* Is a write transaction open on p (between xBegin and its end)?  Then
** the rows read must be whole items: UPDATE and DELETE use them. */
int dd_in_write(dd_vtab *p);
/* The statement running now on c's connection, as the trace hook saw it
** start (stmt.c), or NULL when unknown (no hook, a cursor's frame). */
sqlite3_stmt *dd_stmt_running(dd_conn *c);
/* Read your writes.  The transaction's newest buffered write of the item
** with it's table key: 0 if there is none; 1 with *pOut the item it leaves
** (borrowed, valid until the next write) or NULL when it deletes it. */
int dd_pending_get(dd_vtab *p, const ddb_item *it, ddb_item **pOut);
/* Does the open transaction have buffered writes? */
int dd_pending_any(dd_vtab *p);
/* The items the transaction's buffered writes leave (one a key, deletions
** left out) in *paOut[0..*pnOut): new references in an array, both freed
** by the caller (ddb_item_unref, sqlite3_free).  Returns an SQLite code. */
int dd_pending_images(dd_vtab *p, ddb_item ***paOut, int *pnOut);
/* Free everything txn.c keeps for p. */
void dd_txn_free(dd_vtab *p);

/* stmt.c: statements, their meter, dynamodb_last(). */
/* Seconds before a progress line shows (and before a statement's line is
** due): DD_PROGRESS_AFTER, or $DYNAMODB_PROGRESS_AFTER. */
#define DD_PROGRESS_AFTER 2.0
double dd_progress_after(void);
/* A new statement state for db (sqlite3_free'd by dd_conn_free, the
** module's destructor), or NULL when out of memory. */
dd_conn *dd_conn_new(sqlite3 *db);
void dd_conn_free(void *pConn);
/* Set db's trace hook to c's statement boundaries and register
** dynamodb_last().  Returns an SQLite code. */
int dd_register_stmt(sqlite3 *db, dd_conn *c);
/* Where c keeps its registry of open write transactions (txn.c makes
** and frees it; NULL while none is open), NULL for NULL. */
dd_txn_reg **dd_conn_txn_reg(dd_conn *c);
/* c's meter (what its tables' clients charge), NULL for NULL. */
ddb_meter *dd_conn_meter(dd_conn *c);
/* The running statement's requests by operation appended to s (as
** dd_meter_ops), and the seconds they waited for max_rcu/max_wcu. */
int dd_conn_ops(dd_conn *c, sqlite3_str *s);
double dd_conn_paced(dd_conn *c);
/* Is a request of c's waiting for max_rcu/max_wcu now? */
int dd_conn_waiting(dd_conn *c);
/* Set while the extension runs SQL of its own (the stored description,
** dynamodb_refresh, connecting a table by name): its statements are part
** of the statement that runs them (stmt.c).  Per thread (common.c). */
extern __thread int dd_internal_sql;
/* A cursor of p opens (delta 1) or closes (-1); a write of p starts
** (dd_stmt_write): without the trace hook these start statements. */
void dd_stmt_cursor(dd_vtab *p, int delta);
void dd_stmt_write(dd_vtab *p);
/* The running statement uses a table of the extension (bProgress: its
** progress option). */
void dd_stmt_touch(dd_conn *c, int bProgress);
/* p's COMMIT went as more than one call (not atomic). */
void dd_stmt_split(dd_vtab *p);
/* Append m's requests by operation to s, most first ("Query x1051,
** GetItem x3"); returns how many operations. */
int dd_meter_ops(const ddb_meter *m, sqlite3_str *s);

/* Register dynamodb_log, dynamodb_stats, dynamodb_cache_size() and
** dynamodb_cache_clear() on db (monitor.c).  Returns an SQLite code. */
int dd_register_log(sqlite3 *db);
/* The progress line of a write cut into calls that are not atomic
** together (zVerb: "COMMIT", "INSERT", ...): nDone of nCalls sent since
** tStart, shown once it has run dd_progress_after() seconds, on a
** terminal, unless progress=off; *pbShown says it is on the screen.
** bEnd: clear it (if shown).  stmt.c. */
void dd_write_progress(dd_vtab *p, const char *zVerb, int nDone, int nCalls,
                       double tStart, int *pbShown, int bEnd);
/* DD_HINT_SINGLES statements in a row each wrote one row of p, each in a
** call of its own: say once per process, on stderr when it is a terminal
** (and progress is on), that BEGIN ... COMMIT sends them as batches
** (stmt.c). */
void dd_hint_singles(dd_vtab *p);

/* Register dynamodb_tables (tables.c), dynamodb_attributes
** (attributes.c), dynamodb_hot (hot.c) on db.  Return an SQLite code.
** dd_indexes_json: d's indexes as dynamodb_tables and dynamodb_info show
** them, a new string (sqlite3_free; NULL: out of memory; tables.c). */
int dd_register_tables(sqlite3 *db, dd_conn *c);
char *dd_indexes_json(const ddb_table_desc *d);
int dd_register_attributes(sqlite3 *db, dd_conn *c);
int dd_register_hot(sqlite3 *db);

/* extension.c: the module table and the entry point. */
/* The entry point: registers the module dynamodb and the functions on db.
** Returns an SQLite code. */
int sqlite3_dynamodb_init(sqlite3 *db, char **pzErrMsg,
                          const sqlite3_api_routines *pApi);
/* common.c (besides the registry, dd_error, dd_rc, dd_interrupted). */
/* Configure the table being connected (xCreate, xConnect): DIRECTONLY
** and CONSTRAINT_SUPPORT, each with its reason at the call. */
void dd_vtab_config(sqlite3 *db);
/* The connected dynamodb vtab zName of db (compared without case), or
** NULL.  Takes dd_registry_lock. */
dd_vtab *dd_find(sqlite3 *db, const char *zName);
/* dd_find, the table connected first if no statement has used it since
** the database was opened (xConnect makes no call). */
dd_vtab *dd_find_connected(sqlite3 *db, const char *zName);

/* options.c: the parameters of CREATE VIRTUAL TABLE. */
/* z[0..n) without its surrounding white space and one level of quotes
** (a doubled quote inside is one): a new string (sqlite3_free), or NULL
** when out of memory. */
char *dd_dequote(const char *z, int n);
/* Parse a non-negative plain decimal (no sign, hex, inf or nan) into
** *pOut.  Returns 0, or -1 (then *pOut is untouched). */
int dd_number(const char *z, double *pOut);
/* Split argv[3..argc) (key=value) into the slots of *pVal by option
** name (each a sqlite3_free()d string; a slot that is set is an error).
** Returns SQLITE_OK; SQLITE_NOMEM; or SQLITE_ERROR with *pzErr set (an
** unknown, repeated, secret-looking or malformed option). */
int dd_parse_args(int argc, const char *const *argv, dd_opts *pVal,
                  char **pzErr);
/* Apply the options *v to p, taking the strings the client keeps (their
** slots are set to NULL).  Returns SQLITE_OK, or SQLITE_ERROR with *pzErr
** set to a message quoting the first bad value. */
int dd_options(dd_vtab *p, dd_opts *v, char **pzErr);
/* Free the strings of v and clear its slots. */
void dd_opts_free(dd_opts *v);
/* The name of option i (0-based, in aOption's order), and its default as
** docs/reference.md states it (NULL: none stated): NULL past the last
** option.  For the test that the usage and the docs follow the table. */
const char *dd_option_name(int i);
const char *dd_option_default(int i);

/* schema.c: xCreate, xConnect, xDisconnect, xDestroy; the client. */
/* Is column c an attribute of the table's primary key? */
int dd_is_table_key(const dd_vtab *p, int c);
/* Make p's client if it has none yet (bAny: even when the table has no
** usable description, for dynamodb_refresh).  Returns an SQLite code,
** with p's error message set on failure. */
int dd_client_make(dd_vtab *p, int bAny);
/* xCreate: describe the DynamoDB table (a call) and store it. */
int dynamodbCreate(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                   sqlite3_vtab **ppVtab, char **pzErr);
/* xConnect: read the stored description (no call). */
int dynamodbConnect(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                    sqlite3_vtab **ppVtab, char **pzErr);
/* xDisconnect: free the vtab.  Returns SQLITE_OK. */
int dynamodbDisconnect(sqlite3_vtab *pVtab);
/* xDestroy: drop the stored description (never the DynamoDB table). */
int dynamodbDestroy(sqlite3_vtab *pVtab);

/* desc.c: the stored description (the shadow table NAME_schema). */
/* Write d into zDb.zName_schema (created when bCreate, else emptied, or
** created if missing).  Returns an SQLite code; on error *pzErr may be
** set (sqlite3_free). */
int dd_desc_store(sqlite3 *db, const char *zDb, const char *zName,
                  const ddb_table_desc *d, int bCreate, char **pzErr);
/* Read the stored description of vtab zDb.zName, which must describe
** DynamoDB table zTable.  SQLITE_OK with *ppDesc (ddb_table_desc_free);
** SQLITE_NOMEM; or SQLITE_ERROR with *pzWhy (sqlite3_free) saying what is
** missing or wrong.  Makes no call. */
int dd_desc_load(sqlite3 *db, const char *zDb, const char *zName,
                 const char *zTable, ddb_table_desc **ppDesc, char **pzWhy);

/* plan.c: xBestIndex. */
/* xBestIndex: the cheapest correct DynamoDB call (see "The query plan"). */
int dynamodbBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo);

/* plancodec.c: the plan as idxStr. */
/* The plan for people (EXPLAIN QUERY PLAN): a new string (sqlite3_free),
** NULL when out of memory. */
char *dd_plan_str(dd_vtab *p, const dd_plan *pl, const dd_extra *x, int bDesc,
                  int bLimit);
/* The plan for people of a WHERE no row satisfies: column iCol IS NULL
** (kind -1) or compared by kind: a new string (sqlite3_free), NULL when
** out of memory. */
char *dd_plan_none_str(dd_vtab *p, int iCol, int kind);
/* Add an argument block to pc; returns its argvIndex (1-based). */
int dd_plan_arg(dd_plancode *pc, int role, int kind, int col);
/* Join zText (sqlite3_free()d here) and pc into one idxStr
** (sqlite3_malloc()ed); NULL when out of memory. */
char *dd_plan_encode(char *zText, const dd_plancode *pc);
/* Read the machine half of idxStr into x for argc arguments.  Returns 0,
** or -1 when it is missing or not one dd_plan_encode wrote for p. */
int dd_plan_decode(dd_vtab *p, const char *idxStr, int argc, dd_extra *x);

/* keycond.c: SQL values as key values; sort-key conditions. */
/* Free v's buffer and zero it (v may be zeroed already). */
void dd_val_clear(dd_val *v);
/* Can v be the value of a key attribute of at most nMax bytes? */
int dd_key_fits(const dd_val *v, int nMax);
/* Forget v (a value that matches nothing).  Returns SQLITE_OK. */
int dd_drop(dd_val *v);
/* Is z[0..n) valid UTF-8 (no surrogates, no overlongs)? */
int dd_utf8_ok(const unsigned char *z, int n);
/* qsort order of dd_val: by length, then bytes. */
int dd_val_order(const void *pa, const void *pb);
/* Set v to a copy of z[0..n) as a value of type t.  Returns SQLITE_OK or
** SQLITE_NOMEM. */
int dd_val_text(dd_val *v, ddb_type t, const char *z, int n);
/* Set dst to a copy of src (its own buffer).  Returns SQLITE_OK or
** SQLITE_NOMEM (dst zeroed). */
int dd_val_copy(dd_val *dst, const dd_val *src);
/* dd_n_range: how an SQL value compares with an N column's values, the
** numbers it stands for (keycond.c documents it): lo..hi, an end open
** when strict. */
enum { DD_NB_NULL = 0, DD_NB_ABOVE, DD_NB_BELOW, DD_NB_NUM };
typedef struct dd_nrange {
  dd_val lo, hi; /* the same number for an INTEGER, a long text */
  int loOpen, hiOpen;
} dd_nrange;
int dd_n_range(sqlite3_value *pVal, dd_nrange *r, int *pCls);
void dd_nrange_clear(dd_nrange *r);
/* The exact comparisons "v aOp[i] *aV[i]" (DD_SK_EQ .. DD_SK_LE) that
** "v k x" means for the numbers r that x stands for (dd_n_range): 1 or 2
** (an equality with a REAL: both ends).  aV points into r. */
int dd_n_ops(int k, dd_nrange *r, int aOp[2], dd_val *aV[2]);
/* Does pVal stand for more than one number (a REAL of dd_n_range with
** two ends)?  Then "N key = pVal" is a range, never one GetItem. */
int dd_n_spans(sqlite3_value *pVal);
/* Is "column col <k> pVal" (k DD_SK_EQ .. DD_SK_BEGINS) false for every
** row, as SQLite compares with the column's affinity?  NULL, a key value
** no key can hold (GB = '' on a B key, an empty S key), a number no item
** holds, a bound above or below every value.  0 when some row may pass
** (or memory ran out). */
int dd_never_true(const dd_column *col, int k, sqlite3_value *pVal);
/* Convert pVal to a key value of type t as SQLite's comparison would
** see it: SQLITE_OK with *pbOk=1 and v set (dd_val_clear), or *pbOk=0
** when no key of that type can equal it; SQLITE_NOMEM. */
int dd_val_from_sql(sqlite3_value *pVal, ddb_type t, dd_val *v, int *pbOk);
/* Narrow iv by one constraint of kind k (DD_SK_*) with value pVal on a
** sort key of type t; *pnPrefix counts prefix constraints.  Returns an
** SQLite code. */
int dd_iv_apply(dd_interval *iv, ddb_type t, int k, sqlite3_value *pVal,
                int *pnPrefix);
/* Turn iv into rd's sort-key condition, its operands moved to out[]
** (sets iv->bEmpty when no row can match). */
void dd_iv_finish(dd_interval *iv, int nPrefix, int nOther, ddb_read *rd,
                  dd_val out[2]);

/* cursor.c: xOpen, xClose, xNext, xEof, xColumn, xRowid (the rest of the
** read path: cursor.h). */
/* xOpen: a cursor at EOF.  Returns SQLITE_OK or SQLITE_NOMEM. */
int dynamodbOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCursor);
/* xClose. */
int dynamodbClose(sqlite3_vtab_cursor *cur);
/* xNext: the next row (the overlay merged in), or bEof. */
int dynamodbNext(sqlite3_vtab_cursor *cur);
/* xEof. */
int dynamodbEof(sqlite3_vtab_cursor *cur);
/* xColumn: key columns, item (plain JSON), keys, item_raw. */
int dynamodbColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i);
/* xRowid: a hash of the row's primary key (see dd_key_rowid). */
int dynamodbRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid);

/* filter.c: xFilter. */
/* xFilter: run the plan xBestIndex chose (ext/PLAN.md). */
int dynamodbFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                   int argc, sqlite3_value **argv);

/* keys.c: the hidden column keys. */
/* Parse the key list pList (the argument of keys = ?) into *paKey
** (sqlite3_free(), each ddb_item_unref()) of *pnKey distinct table keys.
** Returns SQLITE_OK; SQLITE_ERROR with p's message set naming a malformed
** key; SQLITE_NOMEM. */
int dd_keys_parse(dd_vtab *p, sqlite3_value *pList, ddb_item ***paKey,
                  int *pnKey);

/* functions.c: SQL functions and the remaining methods. */
/* begins_with(X, P): 1 if X starts with P, 0 if not, NULL with a NULL. */
void dd_begins_with_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* xFindFunction: begins_with(SK, ?) as an indexable constraint. */
int dynamodbFindFunction(sqlite3_vtab *pVtab, int nArg, const char *zName,
                         void (**pxFunc)(sqlite3_context *, int,
                                         sqlite3_value **),
                         void **ppArg);
/* dynamodb_refresh(NAME): describe the table again and store it. */
void dd_refresh_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* xRename: renames NAME_schema with the table. */
int dynamodbRename(sqlite3_vtab *pVtab, const char *zNew);
/* xShadowName: is NAME_zSuffix a shadow table ("schema")? */
int dynamodbShadowName(const char *zSuffix);
/* dynamodb_info(NAME): the table's setup as JSON. */
void dd_info_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
/* dynamodb_calls(): the calls since the previous dynamodb_calls(). */
void dd_calls_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);

/* UNITTEST: helpers static to their file, made external in the unit-test
** build (-DUNITTESTS) so that tests/unit/test_ext.c can call them (curl's
** idiom).  Their contracts are at their definitions. */
#ifdef UNITTESTS
#define UNITTEST
UNITTEST int dd_version_check(int v, char **pzErr);        /* extension.c */
UNITTEST int dd_bool(const char *z);                       /* options.c */
UNITTEST int dd_auto_segments(long long nBytes);           /* schema.c */
UNITTEST int dd_auto_units(long long nBytes, int nWorker); /* schema.c */
UNITTEST int dd_order_ok(dd_vtab *p, sqlite3_index_info *pInfo,
                         const dd_plan *pl, int *pbDesc);    /* plan.c */
UNITTEST int dd_val_cmp(const dd_val *a, const dd_val *b);   /* keycond.c */
UNITTEST int dd_successor(const char *z, int n, char *zOut); /* keycond.c */
UNITTEST int dd_pattern_prefix(const char *z, int n, int bGlob, int bUpper,
                               char *zOut);
UNITTEST int dd_pattern_is_prefix(const char *z, int n, int bGlob);
UNITTEST int dd_real_range(double x, char *zLo, int *pLoOpen, char *zHi,
                           int *pHiOpen, size_t cap); /* keycond.c */
#else
#define UNITTEST static
#endif

#endif
