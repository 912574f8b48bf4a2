/*
** rtdb_int.h -- what rooftune's own database code (db.c) takes from the
** reader library (rtdb.c), so that there is one read-only open and one
** notion of a row the reader can read. Not part of the public rtdb.h:
** these may change with rooftune.
*/
#ifndef RTDB_INT_H
#define RTDB_INT_H

#include <stddef.h>

struct sqlite3;

/* Open path read-only (SQLITE_OPEN_READONLY | flags), wait up to busy_ms
** for locks, and read its user_version into *version, so that a file
** SQLite cannot read fails here. Nothing is written to the file or created
** beside it, except the -wal/-shm SQLite makes for a WAL-mode file in a
** directory it can write. A WAL-mode file SQLite cannot read without them
** (read-only directory or media, no -wal/-shm) is opened immutable when it
** lies on a read-only file system and has no -wal (no one can change it,
** nothing was left uncheckpointed), and refused otherwise with a message
** saying what is needed. SQLITE_OK with *h, else SQLite's extended code,
** *h NULL and msg (cap bytes) saying why, naming path. */
int rtdb__open_ro(const char *path, int flags, int busy_ms, struct sqlite3 **h, int *version,
                  char *msg, size_t cap);

/* path as an SQLite URI ("file:" and path percent-encoded, so that any
** file name means itself) with query ("" for none; "mode=ro"...) to open
** with SQLITE_OPEN_URI or ATTACH. Caller frees; NULL without memory. */
char *rtdb__uri(const char *path, const char *query);

/* Read, as rtdb_lookup would, every pin a lookup can reach (the current
** pins and every tag's) and every kernel's template default, and prepare
** every statement of the reader: fn gets one line per problem (naming the
** table and row). Returns the number of problems. */
int rtdb__check(struct sqlite3 *h, void (*fn)(void *ctx, const char *problem), void *ctx);

/* ---- For the adapter (rtdb_adapt.c) and its importer ---- */

struct rtdb;
/* The handle's SQLite connection (opened serialized: statements of
** another owner may run on it from any thread). */
struct sqlite3 *rtdb__sqlite(struct rtdb *db);
/* rtdb_lookup's distance from vars to a stored workload (its sizes JSON
** and dtype column): 0 with *d (>= 0), or -1 in *d when not comparable
** (variables vars leaves out are not compared). RTDB_MISUSE for
** malformed vars, RTDB_NOTADB for sizes rooftune does not write. */
int rtdb__distance(const char *vars, const char *sizes_json, const char *dtype, double *d);
/* One-sided Welch t-test: the probability, under equal means, of a
** difference mean_a - mean_b at least this large (sample sizes n, means
** m, variances v (n - 1 denominators)), Welch's statistic taken with the
** conservative min(na, nb) - 1 degrees of freedom; 0.5 when both
** variances are 0 and the means equal. Student's t tail through the
** regularized incomplete beta function (continued fraction). */
double rtdb__welch_p(double na, double ma, double va, double nb, double mb, double vb);

#endif
