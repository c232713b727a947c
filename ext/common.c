/*
** common.c -- what every file of ext/ uses, and nothing of theirs: the
** SQLite API pointer (SQLITE_EXTENSION_INIT1; extension.c sets it), the
** error helper, the result code of a client error, the interrupt hook,
** the registry of connected vtabs, and the table's sqlite3_vtab_config.
** A leaf: it calls no other file of ext/.
*/
#include <pthread.h>
#include <stdarg.h>
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "dd_ext.h"

/* Every connected vtab of the process, for dynamodb_info(). */
pthread_mutex_t dd_registry_lock = PTHREAD_MUTEX_INITIALIZER;
dd_vtab *dd_registry;

/* fork(): dd_registry_lock on client/live.c's list (rank DDB_LIVE_EXT),
** so a child never finds it held by a thread it does not have. */
static void dd_registry_fork_lock(void *obj) {
  (void)obj;
  pthread_mutex_lock(&dd_registry_lock);
}

/* After fork(), in the parent and the child: released. */
static void dd_registry_fork_unlock(void *obj) {
  (void)obj;
  pthread_mutex_unlock(&dd_registry_lock);
}

static const ddb_live_ops dd_registry_live_ops = {
    DDB_LIVE_EXT, dd_registry_fork_lock, dd_registry_fork_unlock, NULL};
static ddb_live dd_registry_live;

/* At load: the registry's lock on the fork list. */
__attribute__((constructor)) static void dd_registry_load(void) {
  ddb_live_add(&dd_registry_live, &dd_registry_live_ops, NULL);
}

/* See dd_ext.h. */
__thread int dd_internal_sql;

/* ------------------------------------------------------------------------
** Errors
*/

/* Set the message of vtab pBase (freeing the old one) to DD_PREFIX and
** the message zFmt, ap make, as dd_shown() shows it: a message may quote
** what a server told (a column's attribute name, an index's name). */
static void dd_verror(sqlite3_vtab *pBase, const char *zFmt, va_list ap) {
  char *z = sqlite3_vmprintf(zFmt, ap);
  char *zShown = z ? dd_shown(z) : NULL;
  sqlite3_free(pBase->zErrMsg);
  pBase->zErrMsg =
      sqlite3_mprintf(DD_PREFIX "%s", zShown ? zShown : "out of memory");
  sqlite3_free(zShown);
  sqlite3_free(z);
}

/* Set the vtab's error message (freeing the old one) to DD_PREFIX and a
** printf-style message. */
void dd_error(dd_vtab *p, const char *zFmt, ...) {
  va_list ap;
  va_start(ap, zFmt);
  dd_verror(&p->base, zFmt, ap);
  va_end(ap);
}

/* See dd_ext.h. */
int dd_eponymous_connect(sqlite3 *db, const char *zSchema, size_t nByte,
                         int eConfig, sqlite3_vtab **ppVtab) {
  sqlite3_vtab *p;
  int rc = sqlite3_declare_vtab(db, zSchema);
  if(rc)
    return rc;
  p = sqlite3_malloc64(nByte);
  if(!p)
    return SQLITE_NOMEM;
  memset(p, 0, nByte);
  sqlite3_vtab_config(db, eConfig);
  *ppVtab = p;
  return SQLITE_OK;
}

/* See dd_ext.h. */
int dd_eponymous_open(size_t nByte, sqlite3_vtab_cursor **ppCur) {
  sqlite3_vtab_cursor *c = sqlite3_malloc64(nByte);
  if(!c)
    return SQLITE_NOMEM;
  memset(c, 0, nByte);
  *ppCur = c;
  return SQLITE_OK;
}

/* See dd_ext.h: dd_error for the extension's other tables. */
void dd_vtab_error(sqlite3_vtab *pBase, const char *zFmt, ...) {
  va_list ap;
  va_start(ap, zFmt);
  dd_verror(pBase, zFmt, ap);
  va_end(ap);
}

/* ------------------------------------------------------------------------
** Names a server told, as a terminal shows them
**
** A table, index or attribute name comes from ListTables, DescribeTable,
** DescribeTimeToLive or an item: from whoever answers at the endpoint.
** What the extension shows of one goes through ddb_text_safe(), the
** escaping of every error message (client/buf.c), so that no escape
** sequence, BEL or bidi control reaches a terminal; é or 日本 show as they
** are, and a real table or index name (A-Z a-z 0-9 _ . -) is unchanged.
*/

/* See dd_ext.h. */
char *dd_shown(const char *z) {
  size_t n = strlen(z);
  char *zOut = sqlite3_malloc64(4 * n + 1); /* the most an escape takes */
  if(zOut)
    ddb_text_safe(zOut, 4 * n + 1, z, n);
  return zOut;
}

/* See dd_ext.h. */
int dd_result_shown(sqlite3_context *ctx, const char *z) {
  char *zShown;
  if(!z)
    return SQLITE_OK;
  zShown = dd_shown(z);
  if(!zShown)
    return SQLITE_NOMEM;
  sqlite3_result_text(ctx, zShown, -1, sqlite3_free);
  return SQLITE_OK;
}

/* See dd_ext.h. */
void dd_json_shown(ddb_buf *b, const char *z) {
  char *zShown = dd_shown(z);
  if(!zShown) {
    b->failed = 1;
    return;
  }
  ddb_buf_json_str(b, zShown, strlen(zShown));
  sqlite3_free(zShown);
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
** interrupt (ddbc_stream_next, ddbc_batch_get_parallel). */
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
/* The connected dynamodb vtab zName of db, or NULL. */
dd_vtab *dd_find(sqlite3 *db, const char *zName) {
  dd_vtab *p;
  pthread_mutex_lock(&dd_registry_lock);
  for(p = dd_registry; p; p = p->pNextVtab)
    if(p->db == db && sqlite3_stricmp(p->zVtabName, zName) == 0)
      break;
  pthread_mutex_unlock(&dd_registry_lock);
  return p;
}

/* See dd_ext.h.  Preparing a statement that reads the table's columns
** makes SQLite connect it (xConnect, which makes no call). */
dd_vtab *dd_find_connected(sqlite3 *db, const char *zName) {
  sqlite3_stmt *pStmt = NULL;
  dd_vtab *p = dd_find(db, zName);
  if(p)
    return p;
  dd_internal_sql++;
  if(sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_table_info(?1)", -1,
                        &pStmt, 0) == SQLITE_OK) {
    sqlite3_bind_text(pStmt, 1, zName, -1, SQLITE_STATIC);
    sqlite3_step(pStmt);
  }
  sqlite3_finalize(pStmt);
  dd_internal_sql--;
  return dd_find(db, zName);
}

/* ------------------------------------------------------------------------
** The table's configuration (called by xCreate and xConnect, the only
** place SQLite allows it)
*/

/* See dd_ext.h. */
void dd_vtab_config(sqlite3 *db) {
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
}
