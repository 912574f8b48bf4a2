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
** Families (schema 8): every stored target has a chain from specific to
** general -- its fingerprint, its device model ("NVIDIA H200", a CPU's
** model name), its architecture ("sm_90", "x86-64 AVX-512"), its backend
** (the row of rooftune's target table that runs it: "host", ...). When
** the caller's own target has no comparable pin, the lookup falls back
** along the chain, level by level: at each level
** the exact workload, then the nearest one, on the targets of that level;
** then the template default. The order, for the caller's chain C:
**   1. RTDB_LEVEL_TARGET   the target row of C's fingerprint (and name)
**   2. RTDB_LEVEL_MODEL    other targets of C's backend and device model
**   3. RTDB_LEVEL_ARCH     other targets of C's backend and architecture
**   4. RTDB_LEVEL_BACKEND  other targets of C's backend (only when asked:
**                          rtdb_target.max_level)
**   5. RTDB_LEVEL_DEFAULT  the kernel template's default
** A fallback never leaves the caller's backend, and a level whose part of
** C is unknown ("" or NULL in the database) is skipped. The result says
** which level answered and from which target (name and fingerprint).
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
  RTDB_LEVEL_TARGET = 1,   /* a pin of the caller's own target */
  RTDB_LEVEL_MODEL = 2,    /* a pin of another target of the same device model */
  RTDB_LEVEL_ARCH = 3,     /* ... of the same architecture */
  RTDB_LEVEL_BACKEND = 4,  /* ... of the same backend */
  RTDB_LEVEL_DEFAULT = 5,  /* the template default (match RTDB_DEFAULT) */
} rtdb_level;

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
  /* Appended with families (schema 8); older files answer at levels 1
  ** and 5 only. */
  rtdb_level level;             /* which level of the family chain answered */
  char target[RTDB_MAXKEY];     /* the name of the target whose pin it is ("" for defaults) */
  char fingerprint[RTDB_MAXKEY];/* and its fingerprint ("" for defaults) */
  /* Appended with model-only targets (schema 10): 1 when the pin was made
  ** from a prediction (a model:FILE target's trial: time_s is predicted,
  ** the schedule never ran there); 0 for measured pins and defaults. */
  int predicted;
} rtdb_result;

/* What the caller runs on: its place in the family chain, as `rooftune
** targets` prints it for each target here (its fingerprint, and "family
** MODEL > ARCH > BACKEND"; `--json` gives the same strings). A code
** generator that knows only its device can give model and arch itself
** (an NVIDIA GPU's: the device's name, and "sm_" with its compute
** capability's two digits). NULL fields are taken from the stored
** target row named name: with a fingerprint given, the row of that name
** and fingerprint; without, the one rtdb_lookup picks (the most recent
** row of that name with pins in scope). A row that disagrees with a part
** the caller gave (another fingerprint, model or architecture: another
** device under that name) gives the backend only. "" means unknown, and
** its level is skipped. */
typedef struct rtdb_target {
  const char *name;         /* a target name as given to rooftune ("host", ...); may be NULL */
  const char *fingerprint;  /* 32 hex digits (level 1 needs it; with name, both must match) */
  const char *model;        /* level 2 */
  const char *arch;         /* level 3 */
  const char *backend;      /* levels 2-4 need it: the fallback never leaves it */
  int max_level;            /* the last level tried before the default:
                            ** 0 = RTDB_LEVEL_ARCH, else 1..4 */
} rtdb_target;

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
** text for the handle's lifetime.
** Families: rtdb_lookup(db, T, ...) is rtdb_lookup_on with {.name = T}:
** the named row's chain, levels 1 to 3 (rtdb.h's top comment). */
int rtdb_lookup(rtdb *db, const char *target, const char *kernel, const char *vars,
                const char *tag, rtdb_result *out);

/* rtdb_lookup for the caller's chain *on (rtdb_target), falling back
** along it. At each level: of the kernel rows (template versions) with
** pins in scope on that level's targets, the most recent; the exact
** workload, else the nearest (as rtdb_lookup); ties between targets of a
** level go to the most recently registered one. With a tag, every level
** sees only the tag's pins, and the default is the one the tag recorded
** when it was made (tags made before schema 8 recorded none: the
** kernel's current default, as before); a tag that recorded defaults but
** none for this kernel is RTDB_NOTFOUND. on->max_level outside 0..4 is
** RTDB_MISUSE. Memoised like rtdb_lookup (all of *on is the key). */
int rtdb_lookup_on(rtdb *db, const rtdb_target *on, const char *kernel, const char *vars,
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


/* ---- Online adaptation (db/rtdb_adapt.c) ----
**
** An application asks an adapter (rtdb_adapt_choose) for the schedule of a
** workload -- a *site*: one (target, kernel, vars, tag) text, as
** rtdb_lookup takes it -- runs it, and reports the time it measured
** (rtdb_adapt_report). The adapter mostly answers the *incumbent* (at
** first rtdb_lookup's answer: the pin, the nearest pin or the default)
** and, within a stated share of calls, a few verified alternatives; an
** alternative replaces the incumbent only when it is faster with a stated
** confidence. The database stays read-only: what was measured and decided
** goes to a side log that `rooftune db adapt-import` turns into trials
** and, when asked, new pin versions.
**
** Invariants:
**  A1. Arm 0 of a site is rtdb_lookup's answer. The alternatives (at most
**      max_arms) are, in this order, the top_k fastest trials of status ok
**      on the target (every target row of the name) of the asked workload
**      when it is stored without a pin (the one stored workload vars name
**      exactly), then of the answer's workload, then the pin and the top_k
**      trials of each of the neighbours nearest other pinned workloads
**      (rtdb_lookup's distance, ties by key); never a trial that failed, was not verified (status other
**      than ok) or came from another machine or tool (a target fingerprint
**      or kernel template_version "external"); each schedule once (same
**      text). A site whose answer is the default draws from the nearest
**      pinned workloads only.
**  A2. The cap: a site's n-th call goes to an alternative only when the
**      alternatives' calls so far, plus this one, are at most cap * n; so
**      after every call the share of calls on alternatives is <= cap.
**      Among the live alternatives, the one with the fewest reports goes.
**  A3. The confidence rule: an alternative is tested against the
**      incumbent when its report count reaches min_samples * 2^i (i = 0,
**      1, ... while <= max_samples) and the incumbent has min_samples: a
**      one-sided Welch t-test on the reported times (Welch's statistic
**      with the conservative min(n1, n2) - 1 degrees of freedom, whose
**      level never exceeds the nominal one for normal times) at level
**      alpha_i = (1 - confidence) / (m * 2^(i+1)), m the site's number of
**      alternatives. Faster: it becomes the incumbent (the old one is
**      retired). Else slower at level 1 - confidence (a drop only forgoes
**      an alternative, so its test is not split): it is dropped. Undecided
**      at its last test within max_samples (or at max_samples reports), it
**      is retired. The replacement levels sum to at most
**      1 - confidence, so when no alternative is faster (times independent
**      and normal) the incumbent is replaced with probability at most
**      1 - confidence (tests/test_rtdb_adapt.c checks the rate by
**      simulation). rtdb_adapt_fail on an alternative retires it for good;
**      on the incumbent it is logged only (the pin is the safe fallback).
**  A4. Thread-safe: one adapter serves many threads (a mutex; the reader
**      handle's own). A site's first call (its warm-up) reads the database
**      and allocates; later calls of the site, and every report, allocate
**      nothing and do not touch SQLite.
**  A5. The log (log_path, appended to, never truncated; one process at a
**      time: an exclusive flock) is JSON Lines, buffered (64 KiB) and
**      written whole lines at a time on rtdb_adapt_flush, when the buffer
**      is full and at rtdb_adapt_close; a failed write is kept and
**      returned by rtdb_adapt_flush and rtdb_adapt_close (choose and
**      report go on; later lines are dropped). Lines:
**        {"rtdb_adapt":1,"session":S,"cap":C,"confidence":P,"min_samples":N,"max_samples":M}
**            opens a session; site numbers below are the session's
**        {"site":I,"target":T,"kernel":K,"vars":V,"tag":R|null,"match":"exact"|"nearest"|"default"|"other",
**         "arms":[{"config":TEXT,"workload":W,"trial":ID,"pin_version":V}...]}
**            a site at its warm-up (arm 0 first; config is the schedule's
**            JSON as a string; trial 0 and workload "" for a default;
**            "other": a kind of answer this version does not name)
**        {"s":I,"a":J,"t":SECONDS}        a report (9 significant digits)
**        {"s":I,"a":J,"fail":1}           a failure (rtdb_adapt_fail)
**        {"s":I,"a":J,"event":"replace"|"drop"|"retire","n":N,"mean":X,"vs":K,"vs_n":N2,
**         "vs_mean":Y,"p":P,"alpha":A}  a decision (vs: the incumbent)
*/

typedef struct rtdb_adapt rtdb_adapt;
typedef struct rtdb_adapt_site rtdb_adapt_site;

/* Zero fields take the defaults. */
typedef struct rtdb_adapt_opts {
  int top_k;            /* verified trials per workload (default 3, at most 16) */
  int neighbours;       /* nearest other pinned workloads drawn from (default 2, at most 16) */
  int max_arms;         /* alternatives per site (default 8, at most 64) */
  double cap;           /* share of calls on alternatives, in (0, 0.5] (default 0.05) */
  double confidence;    /* of a replacement, in [0.5, 1) (default 0.99) */
  int min_samples;      /* reports per arm before its first test, >= 2 (default 8) */
  int max_samples;      /* reports after which an undecided alternative retires (default 256) */
  const char *log_path; /* the side log (A5); NULL: none */
} rtdb_adapt_opts;

/* What rtdb_adapt_choose answers: pass it back to report or fail. */
typedef struct rtdb_choice {
  const char *config;   /* the schedule to run (canonical JSON; valid until rtdb_adapt_close) */
  int arm;              /* the site's arm (0: rtdb_lookup's answer) */
  int explore;          /* 1: an alternative, within the cap; 0: the incumbent */
  rtdb_match match;     /* rtdb_lookup's answer for the site */
  rtdb_adapt_site *site;
} rtdb_choice;

/* One arm of a site, as rtdb_adapt_stats reports it. */
typedef struct rtdb_adapt_arm {
  const char *config, *workload;   /* valid until rtdb_adapt_close; workload "" for a default */
  long long trial_id;              /* 0: none (a default) */
  int pin_version;                 /* > 0: a pin of workload; 0: a trial */
  long long n, failures;           /* reports and failures */
  double mean_s, sd_s;             /* of the reported times (NAN below 1 and 2 reports) */
  int incumbent;                   /* 1: the one answered outside exploration */
  int state;                       /* 0 live, 1 dropped (slower), 2 retired, 3 replaced */
} rtdb_adapt_arm;

typedef struct rtdb_adapt_stats {
  long long calls, explored;       /* rtdb_adapt_choose answers; those on alternatives */
  int replacements, narms, incumbent;
} rtdb_adapt_stats;

/* An adapter over db (which must outlive it) with options o (NULL: the
** defaults). RTDB_MISUSE for options out of range, RTDB_CANTOPEN when the
** log cannot be opened or another process holds it; msg (cap bytes, may
** be NULL) says why. */
int rtdb_adapt_open(rtdb *db, const rtdb_adapt_opts *o, rtdb_adapt **ad, char *msg, size_t cap);
/* Flush the log and free everything; NULL is a no-op. The log's write
** error, if any, is returned (the adapter is freed anyway). */
int rtdb_adapt_close(rtdb_adapt *ad);
const char *rtdb_adapt_errmsg(const rtdb_adapt *ad);   /* last error ("" if none) */

/* The schedule to run for the site (arguments as rtdb_lookup's); errors
** are rtdb_lookup's (a failed warm-up is retried at the next call). */
int rtdb_adapt_choose(rtdb_adapt *ad, const char *target, const char *kernel, const char *vars,
                      const char *tag, rtdb_choice *out);
/* The time the application measured for a choice (finite, > 0), or that
** its run failed (wrong output, crash): RTDB_MISUSE for a choice not of
** this adapter or a bad time. */
int rtdb_adapt_report(rtdb_adapt *ad, const rtdb_choice *c, double seconds);
int rtdb_adapt_fail(rtdb_adapt *ad, const rtdb_choice *c);
/* A site's counts and its arms (up to cap of them into arms; arms may be
** NULL with cap 0). */
int rtdb_adapt_stats_of(rtdb_adapt *ad, const rtdb_choice *c, rtdb_adapt_stats *s,
                        rtdb_adapt_arm *arms, int cap);
/* Write the log's buffered lines now. */
int rtdb_adapt_flush(rtdb_adapt *ad);

#ifdef __cplusplus
}
#endif
#endif
