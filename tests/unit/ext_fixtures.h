/*
** ext_fixtures.h -- what the unit tests of ext/ share (test_ext.c,
** test_plan.c): an in-memory database, an SQL expression's value, a
** statement's first column as text.  Include after ../../ext/dd_ext.h.
*/
#ifndef EXT_FIXTURES_H
#define EXT_FIXTURES_H

#include <stdio.h>

#include "tap.h"

static inline sqlite3 *open_db(void) {
  sqlite3 *db = NULL;
  if(sqlite3_open(":memory:", &db) != SQLITE_OK) {
    sqlite3_close(db);
    return NULL;
  }
  return db;
}

/* The value of SQL expression expr (a protected copy; sqlite3_value_free). */
static inline sqlite3_value *sqlv(sqlite3 *db, const char *expr) {
  char *sql = sqlite3_mprintf("SELECT %s", expr);
  sqlite3_stmt *st = NULL;
  sqlite3_value *v = NULL;
  if(sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
     sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_value_dup(sqlite3_column_value(st, 0));
  else
    tap_diag("cannot evaluate %s: %s", expr, sqlite3_errmsg(db));
  sqlite3_finalize(st);
  sqlite3_free(sql);
  return v;
}

/* The first column of the first row of sql as text ("NULL" for NULL),
** or "ERROR: <message>". */
static inline void sql_text(sqlite3 *db, const char *sql, char *out,
                            size_t cap) {
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if(rc == SQLITE_OK)
    rc = sqlite3_step(st);
  if(rc == SQLITE_ROW) {
    const unsigned char *z = sqlite3_column_text(st, 0);
    snprintf(out, cap, "%s", z ? (const char *)z : "NULL");
  } else if(rc == SQLITE_DONE) {
    snprintf(out, cap, "DONE");
  } else {
    snprintf(out, cap, "ERROR: %s", sqlite3_errmsg(db));
  }
  sqlite3_finalize(st);
}

#endif
