/*
** rt.h -- the few things every room of rooftune shares: the error record,
** exact big counts (rt_count), checked allocation and the version string.
** Nothing here knows about spaces, kernels or databases.
*/
#ifndef RT_H
#define RT_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#define RT_VERSION "0.1.0"
/* The git commit this build came from ("-dirty" with uncommitted
** changes), or "unknown" outside a checkout. */
const char *rt_commit(void);

/* An error being reported: a message (always NUL-terminated, possibly
** empty) and, where it applies, a 1-based line/column in some input text
** (0 when unknown). Functions that can fail take an rt_err* last and fill
** it; passing NULL is allowed and discards the detail. */
typedef struct rt_err {
  int line, col;
  char msg[512];
} rt_err;

void rt_err_set(rt_err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prepend "prefix: " to an existing message (used to add context such as
** the file name or the parameter name as an error travels up). */
void rt_err_prefix(rt_err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Exact counts of configurations. 128 bits hold any space whose Cartesian
** product is below 3.4e38; larger products are refused at load time. */
typedef unsigned __int128 rt_count;
#define RT_COUNT_MAX (~(rt_count)0)

/* a*b or a+b into *r; return 0 on success, -1 on overflow. */
int rt_count_mul(rt_count a, rt_count b, rt_count *r);
int rt_count_add(rt_count a, rt_count b, rt_count *r);
/* Decimal text of c into buf (at least 40 bytes); returns buf. */
char *rt_count_str(rt_count c, char *buf);
/* Parse a non-negative decimal integer; 0 on success, -1 on bad text or
** overflow. */
int rt_count_parse(const char *s, rt_count *out);

/* 128-bit FNV-1a of n bytes, continuing from h (start with RT_HASH_INIT),
** and its 32-digit lowercase hex text (buf: 33 bytes). Identifies content
** (compile cache keys, fingerprints); not for security. */
typedef unsigned __int128 rt_hash;
#define RT_HASH_INIT \
  ((((rt_hash)0x6c62272e07bb0142ull) << 64) | (rt_hash)0x62b821756295c58dull)
rt_hash rt_hash_bytes(rt_hash h, const void *p, size_t n);
char *rt_hash_hex(rt_hash h, char *buf);

/* A growing string (for generated source, messages). Zero-initialise;
** s is NUL-terminated once anything was appended; free(s) when done. */
typedef struct rt_str {
  char *s;
  size_t n, cap;
} rt_str;
void rt_str_printf(rt_str *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Path of a file shipped with rooftune (space files, kernels), given
** relative to the project root: under $ROOFTUNE_HOME if set, else the
** first readable of EXEDIR/../REL (a checkout's build/rooftune) and
** EXEDIR/../share/rooftune/REL (installed), else REL itself. An absolute
** REL (a T1 kernel's own file) is returned as it is. */
const char *rt_project_path(const char *rel, char *out, size_t cap);

/* Seconds on the monotonic clock (CLOCK_MONOTONIC): for intervals and
** deadlines only; the one clock every room uses. */
double rt_now(void);

/* ---- Output files (rt_out.c) ----
** Every file rooftune writes for the user goes through rt_out, so that one
** rule holds everywhere:
**  1. The content is written to a temporary file beside the target (same
**     folder, so the rename cannot cross file systems) and renamed over the
**     target only by rt_out_commit: a failed or interrupted write leaves the
**     target exactly as it was (absent, or the old file).
**  2. An existing regular file at the path is replaced whole; a path that is
**     a symbolic link, a folder or anything but a regular file is refused
**     (rooftune never writes through a link into a file it did not name).
**  3. A path that names the same file (device and inode) as one of the
**     command's inputs (`protect`: the database, files being read) is
**     refused: an output never overwrites what the command reads.
** rt_out_abort (or a commit that fails) removes the temporary file.
** Closing NULL members is harmless; an rt_out is reusable after either. */
typedef struct rt_out {
  FILE *f;          /* write here between open and commit */
  char *path;       /* the target */
  char *tmp;        /* the temporary file beside it */
} rt_out;

/* Open path for writing under the rule above; protect is a NULL-terminated
** list of input paths (NULL: none; entries that do not exist are skipped).
** 0 on success, -1 with e set. */
int rt_out_open(rt_out *o, const char *path, const char *const *protect, rt_err *e);
/* Flush, fsync and rename over the target; 0, or -1 with e set (the target
** unchanged, the temporary removed). */
int rt_out_commit(rt_out *o, rt_err *e);
/* Discard the temporary file; the target is unchanged. */
void rt_out_abort(rt_out *o);
/* Whether a and b name the same existing file (device and inode). */
int rt_same_file(const char *a, const char *b);

/* ---- Child processes (rt_child.c) ----
** Every process rooftune forks (measurement workers, compilers, NVRTC and
** device probes, cachegrind, gnuplot) is made by rt_fork, so that:
**  1. No child outlives rooftune: it has PR_SET_PDEATHSIG(SIGKILL) (and
**     exits at once if the parent died before that took effect), so even a
**     SIGKILL of rooftune ends it. Fork from the main thread only: the
**     signal fires when the forking thread ends.
**  2. It leads a process group of its own (setpgid in both processes:
**     kill(-pid) never races). rt_child_kill ends the group and reaps the
**     child; rooftune ends every live child's group at exit (atexit) and in
**     signal handlers that call rt_child_kill_all.
**  3. It starts with stdin on /dev/null, stdout and stderr inherited
**     (RT_CHILD_STDOUT_TO_STDERR: stdout a copy of stderr, so it cannot
**     write into a command's output), the `keep` descriptors, and nothing
**     else: not the database, its -wal and -shm, nor any other file
**     rooftune holds (close_range; without it each entry of /proc/self/fd).
**  4. Its signal dispositions are the defaults, none is blocked, and it
**     dumps no core (RLIMIT_CORE 0).
**  5. RT_CHILD_UNMAP_SHARED: every shared writable memory mapping it
**     inherited (SQLite's -shm) is unmapped, for children that run code
**     rooftune did not write.
** Processes a child starts in a new session escape 2 (nothing can follow
** them); ones it starts in its group are killed with it. */
#define RT_CHILD_STDOUT_TO_STDERR 1
#define RT_CHILD_UNMAP_SHARED 2
/* fork() under the rules above: in the child 0 (keep[], at most 16, hold
** the kept descriptors' numbers, moved when they were 0..2), in the parent
** the child's pid, -1 with errno. Flushes stdio first. */
pid_t rt_fork(int flags, int *keep, int nkeep);
/* waitpid (EINTR retried) that also forgets a reaped child; pid -1: any. */
pid_t rt_child_wait(pid_t pid, int *status, int options);
/* SIGKILL the child's group, reap the child; its wait status (-1: none). */
int rt_child_kill(pid_t pid);
/* SIGKILL every live child's group and reap them (async-signal-safe: for
** handlers of fatal signals; also registered with atexit). */
void rt_child_kill_all(void);
/* Run argv (PATH searched) in such a child; its stdout, and its stderr
** too when with_stderr (else stderr goes to /dev/null), appended to out
** (at most cap bytes kept, then a "... (truncated)" line). Returns the wait
** status, or -1 when it could not start (out says why). */
int rt_capture(char *const *argv, int with_stderr, size_t cap, rt_str *out);
/* Write all n bytes of p to fd (a pipe to a parent, a child's report),
** retrying after EINTR and short writes: 0, or -1 (errno set, or 0 when
** the descriptor took nothing). */
int rt_write_all(int fd, const void *p, size_t n);

/* Checked allocation: abort with a message on out-of-memory. rooftune
** treats OOM as fatal; every other failure is reported through rt_err. */
void *rt_malloc(size_t n);
void *rt_calloc(size_t n, size_t size);
void *rt_realloc(void *p, size_t n);
char *rt_strdup(const char *s);

#endif
