/*
** dd_ext.h -- declarations shared by the files of ext/ (not an interface:
** the extension's interface is SQL, registered by sqlite3_dynamodb_init).
*/
#ifndef DD_EXT_H
#define DD_EXT_H

#include <sqlite3ext.h>

#include "../cache/ddb_cache.h"

/* Every error message of the module starts with this. */
#define DD_PREFIX "dynamodb: "

typedef struct dd_txn dd_txn;

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
  int nSegments;        /* parallel Scan segments (segments=) */
  int iSlice, nSlice;   /* segment=I/N; nSlice 0: the whole table */
  int bProgress;        /* progress= */
  int bSplit;           /* split_transactions: >100 writes may go as
                           BatchWriteItem (not atomic) */
  dd_txn *pTxn;
  const char *zColumns; /* columns= while connecting (borrowed) */
  char *zSchemaErr;
  /* an error building the schema; sqlite3_free() */ /* writes buffered in BEGIN...COMMIT; see txn.c */
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
} dd_vtab;

/* Set p's error message (freeing the old one) to DD_PREFIX and a
** printf-style message (dynamodb.c). */
void dd_error(dd_vtab *p, const char *zFmt, ...);
/* The SQLite result code for a client error. */
int dd_rc(const ddb_error *e);
/* The name of the extra column zBase ("item", "keys", "item_raw") into
** zName[32]: zBase, with '_' appended while a key attribute has it
** (dynamodb.c). */
void dd_extra_col_name(dd_vtab *p, const char *zBase, char *zName);
/* Make sure p can reach DynamoDB: SQLITE_OK with p->pClient made (the
** first time: resolves region, endpoint and credentials), or an error
** with p's message set (the table's deferred error, or the client's). */
int dd_client(dd_vtab *p);
/* The cancel hook of a table's client (ud: its sqlite3 *): has the
** statement running on this thread been interrupted (sqlite3_interrupt,
** Ctrl-C)?  Only on the thread that runs the statement (dynamodb.c). */
int dd_interrupted(void *pDb);
/* The most pages, and bytes of pages, one parallel Scan (or IN-list
** Query) held at once in this process: read, not yet taken by xNext;
** never more than 2 x its segments (dynamodb.c). */
void dd_scan_peak(int *pnPage, long long *pnByte);
/* dd_number_text: the DynamoDB number text of an SQL value (dynamodb.c,
** which documents it). */
enum { DD_NUM_OK = 0, DD_NUM_NONE, DD_NUM_RANGE };
int dd_number_text(sqlite3_value *pVal, char *zBuf, size_t nBuf,
                   const char **pz, int *pn, double *pd);
/* The stable rowid of an item: a hash of its primary key. */
sqlite3_int64 dd_key_rowid(dd_vtab *p, const ddb_item *it);

/* write.c: xUpdate, the row it writes, and the writes sent at once. */
int dd_update(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
              sqlite3_int64 *pRowid);
/* The key of it as text for messages (PK='a', SK=5): from
** sqlite3_malloc (the caller frees it), or NULL when out of memory. */
char *dd_key_text(dd_vtab *p, const ddb_item *it);
/* What an UPDATE from old to it changes: *pSet the attributes to SET (NULL
** when none), azRemove[0..*pnRemove) the names to REMOVE (borrowed from
** old; azRemove has room for old's attributes).  Key attributes are never
** set.  Returns an SQLite code. */
int dd_diff(dd_vtab *p, const ddb_item *old, const ddb_item *it,
            ddb_item **pSet, const char **azRemove, int *pnRemove);

/* txn.c: the transaction methods, the writes buffered until COMMIT. */
int dd_begin(sqlite3_vtab *pVtab);
int dd_sync(sqlite3_vtab *pVtab);
int dd_commit(sqlite3_vtab *pVtab);
int dd_rollback(sqlite3_vtab *pVtab);
int dd_savepoint(sqlite3_vtab *pVtab, int iSavepoint);
int dd_release(sqlite3_vtab *pVtab, int iSavepoint);
int dd_rollback_to(sqlite3_vtab *pVtab, int iSavepoint);
/* p's transaction state, made on first use: NULL when out of memory. */
dd_txn *dd_txn_get(dd_vtab *p);
/* Buffer a write of the open transaction (takes references to item and
** old: UPDATE's image as read, else NULL) and make it the newest write of
** its key.  bInsert: from an INSERT (an existing key fails the COMMIT).
** Returns an SQLite code; on error nothing is buffered. */
int dd_op_add(dd_vtab *p, ddb_write_kind kind, ddb_cond cond,
              const ddb_item *item, const ddb_item *old, int bInsert);
/* Remember row it under rowid for a later xUpdate (during a write
** transaction only).  Returns an SQLite code. */
int dd_remember_row(dd_vtab *p, sqlite3_int64 rowid, ddb_item *it);
/* The row remembered under rowid (borrowed), or NULL. */
const ddb_item *dd_row_get(dd_vtab *p, sqlite3_int64 rowid);
/* Is a write transaction open on p (between xBegin and its end)?  Then
** the rows read must be whole items: UPDATE and DELETE use them. */
int dd_in_write(dd_vtab *p);
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

/* Register dynamodb_log, dynamodb_stats, dynamodb_cache_size() and
** dynamodb_cache_clear() on db (monitor.c).  Returns an SQLite code. */
int dd_register_log(sqlite3 *db);

#endif
