/*
** ms_backend.h -- the harness as a backend's worker uses it (was
** measure/ms_int.h): the workload's insides, the sealed report a worker
** child sends back, the sandbox and the database guard, verification, and
** ms__run_worker, which runs a worker child isolated (ms.h invariants 1
** and 2). Included by measure/ and by the backends' workers under
** targets/<backend>/; a backend's measure operation
** (tg_backend.measure) is: build, ms__run_worker(child), then fill the
** ms_result from the report.
**
** Invariants a worker keeps:
**  1. Its child sends exactly one report with ms__send (or dies): status,
**     message, statistics, counts.
**  2. It times a candidate only after ms__verify passed (ms.h 3), and
**     fails one that changed an input.
*/
#ifndef MS_BACKEND_H
#define MS_BACKEND_H

#include <signal.h>
#include <sys/types.h>

#include "ms.h"

/* Workloads of kernels with a device reference up to this many flops
** also get the host reference (ms_workload_new). */
#define MS_HOST_CHECK_FLOPS 2e8

struct ms_workload {
  const kn_kernel *k;
  kn_problem pb;           /* its strings point into the caller's space */
  int nbuf;
  kn_buf b[KN_MAXBUF];
  float *in[KN_MAXBUF];    /* input values (NULL for outputs) */
  float *ref[KN_MAXBUF];   /* reference outputs (NULL for inputs); device
                           ** kernels (kn_kernel.device_reference): the
                           ** host reference's outputs for
                           ** small workloads (checks the device reference),
                           ** else all NULL */
  double tol;
};

/* What a worker sends back through its pipe, whole, sealed (ms__seal:
** magic and hash; ms__unseal turns anything else into runtime_error). */
typedef struct ms__report {
  uint32_t magic;
  int status;
  char msg[256];
  ms_stats t;
  double max_err, verify_s, bench_s;
  double ev[MS_MAXEV];
  int item;                /* a batch's (ms__run_batch): which item it is
                           ** (0 for a single candidate) */
  int last;                /* a batch's: the child ends after this report
                           ** (its context is poisoned); a new child
                           ** continues with item + 1 */
  uint64_t check;
} ms__report;
void ms__seal(ms__report *r);
/* 0: r is a worker's report; -1: r is now a runtime_error saying so. */
int ms__unseal(ms__report *r);

/* In the host worker, before it loads the candidate: enter the sandbox
** (ms_isolate.c). 0 (also where Landlock does not exist); -1 with msg. */
int ms__sandbox(char *msg, size_t cap);

/* The database guard (ms_opts.guard): what stays fixed in its header. */
typedef struct ms__guard {
  int valid;
  unsigned long long dev, ino;
  unsigned char head[100];
} ms__guard;
void ms__guard_take(const char *path, ms__guard *g);
/* 0: unchanged since g; -1 with msg naming the change. */
int ms__guard_check(const char *path, const ms__guard *g, char *msg, size_t cap);

size_t ms__buf_bytes(const kn_buf *b);
/* Worst relative error of the outputs bufs against ref (hk.h invariant
** 3); msg gets the first output beyond tolerance. NaN/Inf: infinitely
** wrong. */
double ms__verify(const ms_workload *w, float *const *bufs, float *const *ref, char *msg,
                  size_t cap);
/* In a child: seal rep, send it whole and _exit(0). */
void ms__send(int fd, ms__report *rep) __attribute__((noreturn));
/* Fork child(fd, ctx) (ms_run_child), which must ms__send a report; wait
** for it until timeout seconds, killing its process group then. 0: rep
** filled and unsealed (status timeout or runtime_error when the child
** died without a whole report, or sent a garbled one); -1: fork/pipe
** failed, or the database o->guard changed (rep->msg says). */
int ms__run_worker(void (*child)(int fd, void *ctx), void *ctx, const ms_opts *o,
                   ms__report *rep);

/* Wait for the child pid until the deadline (rt_now's clock); on timeout
** kill its group. Either way it is reaped: 1 if it timed out, else 0;
** *st its wait status. */
int ms__reap(pid_t pid, double deadline, int *st);

/* ---- Batches (ms_batch.c): one worker child for many candidates ----
** A batch child child(fd, ctx, start, n) measures items start..n-1 in
** order, sends each item's report with ms__send_item (rep->item its
** index; rep->last set when it must end after it: a poisoned context),
** and exits after the last. The parent gives each report its own deadline
** (o->timeout, the clock restarting at each report); when the child dies,
** hangs or garbles its report at item i, item i gets runtime_error or
** timeout as ms__run_worker would say it (ms_child_why), the child's
** group is killed and reaped, and a new child continues at i + 1. Every
** child is forked by ms_run_child's rules (rt_fork: its own process
** group, no descriptor but the pipe and stdio, no shared writable
** mapping); the database guard o->guard is checked after every report
** and every child; no child outlives the call. A candidate that corrupts
** its child's state beyond its own buffers can fail the items after it in
** that child (verification still catches a wrong result). */
/* In a batch child: seal rep and write it whole. 0, or -1 when the pipe
** is gone (the parent ended or dropped the child: it should _exit). */
int ms__send_item(int fd, ms__report *rep);
/* Measure items 0..n-1 (rep[n], zeroed first). Returns how many items
** have their report, in order: n, fewer when *stop (may be NULL) was set
** (the item in flight is dropped, its child killed); -1 when a pipe or
** fork failed or the database guard changed (err says; nothing of the
** batch is to be kept then). */
int ms__run_batch(void (*child)(int fd, void *ctx, int start, int n), void *ctx, int n,
                  const ms_opts *o, const volatile sig_atomic_t *stop, ms__report *rep,
                  rt_err *err);

/* The interesting part of a compile log: from the first line that says
** "error" (else from the compiler's output after the command line). */
const char *ms__log_excerpt(const char *log);

#endif
