/*
** rtdb.h -- the rooftune reader library: read-only access to a rooftune
** database for code generators. This header is the whole specification;
** link with -lrtdb (pkg-config rtdb). It depends only on SQLite.
**
** A code generator asks: which schedule should kernel K use for these
** problem sizes on target T? rtdb_lookup answers with the pinned schedule
** of the exact workload, else of the nearest tuned workload of the same
** kernel, else the kernel template's default -- and says which of the
** three it is. Lookups against a release tag are reproducible: they see
** the pin versions the tag names, whatever was pinned since.
**
** Guarantees:
**  1. The file is opened read-only; nothing is ever written to it. (SQLite
**     itself makes a WAL-mode file's -wal/-shm beside it when the
**     directory is writable: see rtdb_open for read-only places.)
**  2. A missing, corrupt, truncated, foreign or newer-schema file is an
**     error code and a message, never a crash or an abort.
**  3. Functions return RTDB_OK (0) or an error code; rtdb_errmsg() tells
**     what went wrong on a handle, rtdb_errstr() names a code.
**  4. rtdb_close(NULL) is a no-op. One handle may be used by several
**     threads at once.
*/
#ifndef RTDB_H
#define RTDB_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  RTDB_OK = 0,
  RTDB_ERROR = 1,      /* generic error (see rtdb_errmsg) */
  RTDB_CANTOPEN = 2,   /* the file does not exist or cannot be read */
  RTDB_NOTADB = 3,     /* not a rooftune database, or corrupt */
  RTDB_SCHEMA = 4,     /* a schema version this library does not read */
  RTDB_NOTFOUND = 5,   /* no pin and no template default for the kernel */
  RTDB_MISUSE = 6,     /* bad arguments (NULL handle, malformed vars) */
  RTDB_NOMEM = 7,
  RTDB_READONLY = 8,   /* SQLite must write beside the file to read it, and cannot (see rtdb_open) */
};

typedef enum {
  RTDB_EXACT = 1,      /* the pinned schedule of this very workload */
  RTDB_NEAREST = 2,    /* the pin of the nearest tuned workload */
  RTDB_DEFAULT = 3,    /* the kernel template's default schedule */
} rtdb_match;

#define RTDB_MAXCONFIG 4096
#define RTDB_MAXKEY 512

typedef struct rtdb_result {
  rtdb_match match;
  char config[RTDB_MAXCONFIG];  /* the schedule: canonical JSON object */
  char workload[RTDB_MAXKEY];   /* key of the workload it was tuned for ("" for defaults) */
  int pin_version;              /* 0 for defaults */
  double time_s;                /* measured time of the pinned trial; < 0 if unknown */
  double distance;              /* RTDB_NEAREST: the distance (see rtdb_lookup) */
} rtdb_result;

typedef struct rtdb rtdb;

/* Open path read-only. On success *db is a handle; on failure *db is NULL
** and the code says why (rtdb_errstr).
** Read-only places (a directory one cannot write, read-only media): a
** file in rollback-journal mode opens anywhere, and rooftune leaves its
** files so when its last writer closes them. A WAL-mode file needs its
** -wal and -shm beside it (SQLite >= 3.22 reads them read-only); without
** them it opens when it lies on a read-only file system (it is read as
** immutable: nothing can change it, and with no -wal nothing is missed),
** and fails with RTDB_READONLY otherwise. A hot rollback journal there is
** RTDB_READONLY too. */
int rtdb_open(const char *path, rtdb **db);
/* rtdb_open, saying why it failed: msg (cap bytes; may be NULL) gets the
** file, SQLite's message and what is needed ("" on success). */
int rtdb_open_msg(const char *path, rtdb **db, char *msg, size_t cap);
int rtdb_close(rtdb *db);
const char *rtdb_errmsg(const rtdb *db);   /* last error on db ("" if none) */
const char *rtdb_errstr(int code);

/* Look up the schedule of kernel on target (a target name as given to
** rooftune) for the problem variables vars ("M=1024,N=1024,K=1024": the
** workload's variables; those it leaves out must not distinguish stored
** workloads). tag NULL: the current pins; else the pins of that release.
** Nearest workload: same kernel, same variable names, equal non-numeric
** values, minimising the Euclidean distance of log2 of the numeric values;
** ties go to the lexicographically smallest key.
** Precisely: a workload's variables are its sizes plus "dtype"; vars may
** be separated by commas or blanks, values are numbers, True/False, or
** quoted/bare strings. A stored variable left out of vars must have one
** value in every pinned workload of the kernel, else RTDB_MISUSE. Numeric
** values <= 0 or infinite must be equal, like strings. Distance 0 is RTDB_EXACT. No
** comparable pin (or an unknown target): RTDB_DEFAULT. An unknown kernel
** or tag, or no default: RTDB_NOTFOUND. Several target rows of the name
** (fingerprints) or kernel rows (template versions): the most recent one
** with pins in scope. Answers are memoised per (target, kernel, vars, tag)
** text for the handle's lifetime. */
int rtdb_lookup(rtdb *db, const char *target, const char *kernel, const char *vars,
                const char *tag, rtdb_result *out);

/* For exporters (rooftune's C-header export): the pinned workloads that
** rtdb_lookup chooses among for (target, kernel, tag), in no particular
** order, and the template default that it falls back to. fn gets each
** workload's key, its sizes (a flat JSON object) and dtype -- the
** workload's variables are the sizes plus "dtype" unless the sizes name
** one --, the pinned config, version and trial time (< 0 if unknown); it
** returns nonzero to stop. default_config (RTDB_MAXCONFIG bytes) gets the
** default, "" when there is none. */
typedef int (*rtdb_pin_fn)(void *ctx, const char *workload, const char *sizes_json,
                           const char *dtype, const char *config, int pin_version,
                           double time_s);
int rtdb_pins(rtdb *db, const char *target, const char *kernel, const char *tag,
              rtdb_pin_fn fn, void *ctx, char *default_config);

#ifdef __cplusplus
}
#endif
#endif
