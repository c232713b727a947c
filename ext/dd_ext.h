/*
** dd_ext.h -- declarations shared by the files of ext/ (not an interface:
** the extension's interface is SQL, registered by sqlite3_dynamodb_init).
*/
#ifndef DD_EXT_H
#define DD_EXT_H

#include <sqlite3ext.h>

/* Register the eponymous tables dynamodb_log (and, later, the statistics)
** on db.  Returns an SQLite result code. */
int dd_register_log(sqlite3 *db);

#endif
