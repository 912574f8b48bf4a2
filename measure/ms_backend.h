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
**  3. Running a reference configuration for ms__ref_once, its child
**     ends with ms__send_outputs whatever happened (the report, then
**     every output whole), and verifies and times nothing.
**  4. A launch beyond the device's limits is MS_INVALID, found before any
**     launch, with the limit and both numbers in the message.
**  5. A batch child (ms__run_batch) sends one report per item, in item
**     order, each naming its item, with what invariants 1 and 2 give a
**     single worker's; it ends after its last item, or after a report
**     with `last` set when its context cannot serve another candidate.
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
  /* Buffer i's data, ms__buf_bytes(&b[i]) bytes of b[i].elem: the input
  ** values (every KN_VECTOR, KN_SCALAR and KN_SYMBOL input) and the
  ** initial contents of an inout output; NULL for other outputs and for
  ** KN_LOCAL (which has no data). */
  void *in[KN_MAXBUF];
  /* Reference outputs (NULL for inputs): the given ones (kn_buf.has_ref),
  ** else the host reference's (kn_kernel.reference; kernels with a device
  ** reference only for small workloads, which checks the device
  ** reference itself, else NULL), else, for kernels whose reference is
  ** NULL, the reference configuration's computed once by the backend
  ** (ms__ref_once: NULL until then). */
  void *ref[KN_MAXBUF];
  double tol;              /* tolerance(pb); 0 when the kernel has none */
};

/* Bytes of buffer b's data: n elements of kn_elem_size(b->elem) (at
** least one element). */
size_t ms__buf_bytes(const kn_buf *b);
/* Buffer i's contents before the checked run, into dst (ms__buf_bytes):
** the input's values, an inout output's initial contents, or an output
** poisoned (MS_POISON for f32 and f64, 65504 for f16, bytes 0xCA for
** integers: an output the candidate does not write fails verification). */
void ms__buf_init(const ms_workload *w, int i, void *dst);
#define MS_POISON 1.0e30f
/* The first input of w (KN_VECTOR, KN_SCALAR or KN_SYMBOL, not an
** output) that bufs[] no longer holds exactly (its index), or -1. bufs[i]
** may be NULL for outputs and KN_LOCAL. */
int ms__changed_input(const ms_workload *w, void *const *bufs);

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

/* Verify the outputs bufs[] against ref[] (kn.h invariant 2: the
** tolerance rule for kernels with a tolerance function, else atol/rtol
** element by element for floating-point elements, f16 included, and
** exact equality for integers; NaN never passes). 0: every output
** passes; -1: msg names the first output that fails, the element, its
** value and the expected one. *max_err: the worst max|out-ref| /
** max|ref| over the outputs (NaN/Inf: infinity). */
int ms__verify(const ms_workload *w, void *const *bufs, void *const *ref, double *max_err,
               char *msg, size_t cap);
/* In a child: seal rep, send it whole and _exit(0). */
void ms__send(int fd, ms__report *rep) __attribute__((noreturn));
/* Fork child(fd, ctx) (ms_run_child), which must ms__send a report; wait
** for it until timeout seconds, killing its process group then. 0: rep
** filled and unsealed (status timeout or runtime_error when the child
** died without a whole report, or sent a garbled one); -1: fork/pipe
** failed, or the database o->guard changed (rep->msg says). */
int ms__run_worker(void (*child)(int fd, void *ctx), void *ctx, const ms_opts *o,
                   ms__report *rep);

/* ---- The once-computed reference outputs (kernels whose reference is
** NULL: targets/user/uk.h's T1 kernels) ----
** A backend's measure calls ms__ref_once before it verifies anything.
** When some output of w has no reference yet (w->ref[i] NULL), the
** reference configuration's outputs are read from the compile cache,
** <cache>/ref-<key>.bin (written with rt_out; a header naming every
** output's index, element type and count, then their bytes; a file whose
** size or header does not match is ignored and replaced), or else
** computed by `child`: a worker child (ms__run_worker's isolation) that
** runs the reference source on the workload's inputs as it would run a
** candidate and ends with ms__send_outputs. The parent keeps them in
** w->ref[] (later workers, forked from it, verify against them) and
** stores them in the cache. The key (ms__ref_key) hashes the reference's
** build key, the target's compiler identity, every buffer's shape and the
** contents of every input (inout initial contents included). */
int ms__ref_missing(const ms_workload *w);
void ms__ref_key(const ms_workload *w, const char *build_key, const char *compiler, char key[33]);
/* In the child: seal rep, send it, then every output's bufs[i] whole
** (ms__buf_bytes each, in buffer order; zeros where rep is not ok or
** bufs[i] is NULL) and _exit(0). */
void ms__send_outputs(int fd, ms__report *rep, const ms_workload *w, void *const *bufs)
    __attribute__((noreturn));
/* Fill w's missing reference outputs as above. 0: filled (rep->status
** MS_OK; rep->msg says "cached" when they came from the cache); 1: the
** reference run was not ok (rep: its status and message); -1: the harness
** failed (rep->msg). A failure to store the file is not one: the outputs
** are kept in w and recomputed by a later process. */
int ms__ref_once(ms_workload *w, const char *build_key, const char *compiler,
                 void (*child)(int fd, void *ctx), void *ctx, const ms_opts *o, ms__report *rep);

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
