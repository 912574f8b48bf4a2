/*
** tk_db.h -- for the tests that craft databases by hand (test_rtdb,
** test_rtdb_family, test_rtdb_adapt): SQL run or the test failed with
** the statement and SQLite's message, and a db.h call that must succeed.
** Include after cmocka.h.
*/
#ifndef TK_DB_H
#define TK_DB_H

#include <sqlite3.h>
#include <stdarg.h>

#include "common/rt.h"

/* Run the printf-formatted SQL (sqlite3_vmprintf: %q, %Q) on h. */
static void sql(sqlite3 *h, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *q = sqlite3_vmprintf(fmt, ap);
  va_end(ap);
  char *msg = NULL;
  if (sqlite3_exec(h, q, NULL, NULL, &msg) != SQLITE_OK) fail_msg("%s: %s", q, msg);
  sqlite3_free(q);
}

/* A db.h call's return rc: 0, else the test fails with err's message. */
static void ok(int rc, rt_err *err) {
  if (rc) fail_msg("%s", err->msg);
}

#endif
