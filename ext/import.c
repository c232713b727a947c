/*
** import.c -- the sqlite3 shell's `.import FILE TABLE` into a dynamodb
** table: the one mistake of it the extension can recognise.
**
** `.import --csv products.csv shop`, with shop an existing table, runs
** `INSERT INTO shop VALUES(?, ?, ...)` for every line of the file: the
** fields fill the table's columns by position (PK, SK, then the indexes'
** key columns, then item), whatever the file's header says, and the
** header line itself is inserted as a row (unless --skip 1).  A file
** "PK,SK,name,category,price" puts name in GSI1PK, category in GSI1SK
** and the price in Type: corrupted items, each a valid write.  The shell
** wraps the lines in one BEGIN ... COMMIT and does not report a COMMIT
** that fails.  The recipe that works, `.import --csv --schema temp` and
** then `INSERT INTO shop(...) SELECT ...`, is in docs/import.md.
**
** What can be recognised: the header line.  A row whose table-key
** columns hold exactly their own names (PK = 'PK' AND SK = 'SK') is a
** header inserted as data; no item is keyed that way through the key
** columns by design (an item that really has such a key can still be
** written through `item`: INSERT INTO shop(item) VALUES('{"PK": "PK",
** ...}'), which this check does not look at).  It is refused with an error
** naming the recipe, and so is every later INSERT into the table in the
** same transaction: the lines after the header are the same mistake.
** The shell then prints one error a line and the COMMIT writes nothing of
** them.  What cannot be recognised: a file without a header, or with
** --skip 1; its fields are as valid in the wrong columns as in the right
** ones.
*/
#include <string.h>

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include "dd_ext.h"

/* Do the table-key columns of the row argv (xUpdate's: argv[2 + c] is
** column c) hold exactly their own names, as text? */
static int dd_row_is_header(dd_vtab *p, sqlite3_value **argv) {
  int i, c;
  for(i = 0; i < p->nKey; i++) {
    const char *zKey = p->azKey[i];
    for(c = 0; c < p->nCol && strcmp(p->aCol[c].zName, zKey) != 0; c++) {
    }
    if(c == p->nCol || sqlite3_value_type(argv[2 + c]) != SQLITE_TEXT)
      return 0;
    if(strcmp((const char *)sqlite3_value_text(argv[2 + c]), zKey) != 0)
      return 0;
  }
  return p->nKey > 0;
}

/* Check an INSERT's row (argv as xUpdate has it) against the header
** mistake.  Returns SQLITE_OK, or SQLITE_CONSTRAINT with p's error set:
** for a header row (then, inside a transaction, p->bHeaderRefused is set
** until its end) and for any INSERT after one in the same transaction. */
int dd_import_check(dd_vtab *p, sqlite3_value **argv) {
  sqlite3_str *s;
  char *zCols, *zKey;
  int i;
  if(p->bHeaderRefused) {
    dd_error(p, "not inserted: an earlier row of this transaction looked like "
                "a CSV header, so this one is likely in the wrong columns too "
                "(ROLLBACK, then see docs/import.md)");
    return SQLITE_CONSTRAINT;
  }
  if(!dd_row_is_header(p, argv))
    return SQLITE_OK;
  if(!sqlite3_get_autocommit(p->db))
    p->bHeaderRefused = 1;
  s = sqlite3_str_new(0);
  for(i = 0; i < p->nKey; i++)
    sqlite3_str_appendf(s, "%s%s='%q'", i ? ", " : "", p->azKey[i],
                        p->azKey[i]);
  zKey = sqlite3_str_finish(s);
  s = sqlite3_str_new(0);
  for(i = 0; i < p->nCol; i++)
    sqlite3_str_appendf(s, "%s, ", p->aCol[i].zName);
  zCols = sqlite3_str_finish(s);
  dd_error(p,
           "this row looks like a CSV header line (%s): .import fills the "
           "columns by position (%sitem); import into a TEMP table and "
           "INSERT ... SELECT from it (docs/import.md); no later INSERT of "
           "this transaction goes into %s",
           zKey ? zKey : "", zCols ? zCols : "", p->zVtabName);
  sqlite3_free(zKey);
  sqlite3_free(zCols);
  return SQLITE_CONSTRAINT;
}

/* A transaction starts (xBegin): forget a header row of the one before. */
void dd_import_reset(dd_vtab *p) {
  p->bHeaderRefused = 0;
}
