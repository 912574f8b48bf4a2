/*
** ms.h -- the measurement harness, target-neutral: workloads (inputs and
** reference outputs, their sizes checked), the content-addressed compile
** cache (C sources into shared objects with the system compiler), the
** isolated child process, verification, timing statistics and the stopping
** rule. What runs a candidate on a target is its backend row's measure
** (targets/tg.h: tg_measure; each backend's worker lives in its folder
** under targets/), built on measure/ms_backend.h.
**
** Invariants:
**  1. Nothing a candidate does (crash, hang, out-of-bounds write, wrong
**     result, compile failure, bytes written into the harness's pipe)
**     takes the caller down: it becomes one of the six statuses, never
**     anything else. Each measurement runs in a fresh child process (a new
**     worker, rt_fork: common/rt.h), killed with its process group on
**     timeout; no child outlives a measurement, nor rooftune.
**  2. A candidate reaches nothing but its own buffers: the worker holds no
**     descriptor but its report pipe and stdio (stdout goes to stderr), no
**     shared writable mapping, and the host worker runs in a Landlock
**     sandbox where the kernel has one (ms_isolate.c: no file written,
**     created or removed, no TCP, no signal outside). A database named in
**     ms_opts.guard is checked around every worker.
**  3. A candidate is timed only after it passed verification; one that
**     failed it is MS_WRONG_RESULT and carries no time. Verification also
**     fails a candidate that changed one of its inputs (after the checked
**     run, and again after the timed runs): "the candidate wrote to its
**     input X", on every backend.
**  4. The compile cache key is a hash of (source, compiler path and
**     --version, flags); a key present in the cache is never rebuilt.
**  5. No workload is allocated unless its sizes were checked first
**     (ms_workload_new): every size variable an integer of at most
**     KN_SIZE_MAX, every buffer what its kind allows (a scalar one
**     element, only vectors as outputs), buffer sizes computed without
**     overflow, twice the bytes of its buffers (n x the element's size;
**     KN_LOCAL holds none here: the workload plus a worker's copy) within
**     the memory limit (ms_mem_limit), and every raw file (KN_FILL_FILE,
**     given references) of exactly its buffer's bytes.
**  6. Workloads are deterministic: the same kernel and problem give the
**     same bytes (kn_buf.fill: seeded streams, constants, files), and the
**     same reference outputs: given ones, the host reference's, or the
**     reference configuration's, computed once per workload by the
**     backend and kept in the compile cache by a hash of the reference's
**     build, the compiler and the inputs (measure/ms_backend.h).
**  7. Verification is kn.h invariant 2 for every element type: the
**     kernel's tolerance rule, or atol/rtol element by element for
**     floating point (f16 as its value) and exact equality for integers;
**     a failure names the output, the element, its value and the
**     expected one.
**  8. Emulated time is not a measurement: a backend that runs a candidate
**     under an emulator (the RISC-V vector target: qemu) verifies it and
**     reports no time, with ms_result.origin "emulated"; such a result is never
**     stored as a trial (tuner/tu_campaign.c refuses it), so nothing that
**     reads trials (pins, the reader, calibration, reuse, replay) sees it.
*/
#ifndef MS_H
#define MS_H

#include <signal.h>
#include <stddef.h>

#include "../common/rt.h"
#include "../targets/kn.h"

/* Statuses, in the community T4 vocabulary (ms_status_name). */
typedef enum {
  MS_OK, MS_COMPILE_ERROR, MS_RUNTIME_ERROR, MS_TIMEOUT, MS_WRONG_RESULT,
  MS_INVALID
} ms_status;
const char *ms_status_name(ms_status s);  /* "ok", "compile_error", ... */

typedef struct ms_opts {
  double ci_target;    /* stop when CI half-width / median < this (0.01) */
  double time_cap;     /* seconds of timing per candidate at most (2.0) */
  int min_reps;        /* at least this many timed repeats (5) */
  int max_reps;        /* at most (10000) */
  int warmup;          /* untimed runs first (2) */
  double timeout;      /* seconds before the worker is killed (20.0) */
  int flush_cache;     /* touch a buffer larger than the LLC between repeats */
  int pin_cpu;         /* CPU to pin the worker to, -1: none */
  const char *cache_dir;  /* compile cache ($XDG_CACHE_HOME/rooftune/cc) */
  const char *cflags;     /* MS_DEFAULT_CFLAGS (NULL: the same); ms_build
                          ** always adds -shared */
  const char *events;     /* counters, comma-separated (NULL: the
                          ** backend's defaults, tg_backend.default_events) */
  int counters;           /* 1: also run the counter pass */
  const char *guard;      /* a SQLite database no candidate may touch (the
                          ** campaign's), or NULL: a change to its header
                          ** or identity across a worker makes the measurement
                          ** fail (-1) */
} ms_opts;
void ms_opts_default(ms_opts *o);
#define MS_DEFAULT_CFLAGS "-O3 -march=native -fopenmp -fPIC"

typedef struct ms_stats {
  int n;                       /* timed repeats */
  double median, mean, sd, min, max;  /* seconds */
  double ci_lo, ci_hi;         /* 95% CI of the median (order statistics) */
  int noisy;                   /* spread suspicious (see ms_stats.c) */
} ms_stats;

#define MS_MAXEV 8
#define MS_EVNAME 64          /* bytes of an event or metric name, NUL included */
typedef struct ms_result {
  ms_status status;
  char msg[512];               /* compiler error excerpt, signal, ... */
  ms_stats t;
  double max_err;              /* verification: max|out-ref| / max|ref| */
  double compile_s, verify_s, bench_s;   /* wall time spent in each */
  int cache_hit;               /* the build came from the compile cache */
  int counters;                /* 1: ev_* hold values; 0: unavailable */
  int nev;
  char ev_name[MS_MAXEV][MS_EVNAME];
  double ev_val[MS_MAXEV];      /* counts, or metric values (the backend's
                               ** counter source) */
  /* Where the result comes from (invariant 8): "", a measurement on the
  ** target; "emulated", a run under an emulator that verified the outputs
  ** and timed nothing (status ok with t.n 0). An array, not a pointer:
  ** results travel between processes (mpi/mp.c) as bytes. */
  char origin[16];
} ms_result;

/* Build src (plus extra link flags) into a shared object in the cache.
** 0: *so_path set (cap bytes). -1: compile error, log holds its text. */
int ms_build(const char *src, const char *ldflags, const ms_opts *o,
             char *so_path, size_t cap, int *hit, rt_str *log);

/* How a child of ms_run_child ended when it sent no whole report. */
typedef struct ms_child_end {
  int timed_out;               /* killed at the deadline */
  int wstatus;                 /* its wait status */
  int err;                     /* errno of a failed pipe or fork (0: none) */
  size_t extra;                /* bytes that came after a whole report */
  double seconds;
} ms_child_end;
/* Run child(fd, ctx) in a child of rt_fork (common/rt.h: its own process
** group, dies with rooftune, no descriptor but fd and stdio, stdout on
** stderr, no shared writable mapping); it must write exactly size bytes
** to fd (then it may exit). The parent reads them into rep until timeout
** seconds have passed, then kills the group and reaps it; no child
** outlives the call. 0: rep filled; 1: the child died or hung first, or
** more than size bytes came (*end says how); -1: pipe or fork failed
** (end->err). */
int ms_run_child(void (*child)(int fd, void *ctx), void *ctx, double timeout, void *rep,
                 size_t size, ms_child_end *end);
/* end as a message about `who` ("worker", "bench worker") into buf. */
const char *ms_child_why(const ms_child_end *end, const char *who, char *buf, size_t cap);

/* Run build(srcs[i], ctx) for i < n in jobs forked children at once (0:
** one per online CPU), so that the measurements that follow find their
** artefacts in the compile cache. Results are not collected (a failed
** build is redone, and reported, by the measurement); a build that takes
** over 5 minutes is killed. */
void ms_prebuild_with(const char *const *srcs, int n, int jobs,
                      void (*build)(const char *src, void *ctx), void *ctx);
/* ms_prebuild_with of ms_build (C sources into shared objects). */
void ms_prebuild(const char *const *srcs, int n, const char *ldflags, const ms_opts *o,
                 int jobs);

/* The compile-cache key ms_build would use for (src, ldflags, o's cflags
** and the compiler): 32 hex digits. Identifies what a measurement ran. */
void ms_build_key(const char *src, const char *ldflags, const ms_opts *o, char key[33]);
/* The compile cache's directory: cache_dir when given, else
** $ROOFTUNE_CACHE, else $XDG_CACHE_HOME/rooftune/cc, else
** ~/.cache/rooftune/cc; into out, returned. */
const char *ms_cache_path(const char *cache_dir, char *out, size_t cap);
/* mkdir -p: 0, or -1 with errno set. */
int ms_mkdirs(const char *dir);
/* The compiler's identity, "PATH: first line of --version", into buf. */
const char *ms_compiler(char *buf, size_t cap);
/* The status named name (ms_status_name's inverse); -1 if unknown. */
int ms_status_parse(const char *name);

/* A workload under measurement: its typed inputs and reference outputs,
** made once and shared (read-only) by every candidate's worker (a
** backend's measure may add reference outputs it computed, invariant 6). k and pb (with
** the space its strings point into) must outlive w. NULL with err (the
** variable, the sizes and the limit) when its sizes fail invariant 5;
** nothing is allocated then. */
typedef struct ms_workload ms_workload;
ms_workload *ms_workload_new(const kn_kernel *k, const kn_problem *pb, rt_err *err);
/* Invariant 5 alone: 0, or -1 with err. */
int ms_workload_check(const kn_kernel *k, const kn_problem *pb, rt_err *err);
/* Bytes a workload's harness may hold: $ROOFTUNE_MEM_LIMIT (a size such as
** 8G, 512M, or bytes; K, M, G, T are powers of 1024), else three quarters
** of the memory here (physical, or the cgroup's limit when lower). *what
** says which ("ROOFTUNE_MEM_LIMIT", "3/4 of physical memory"). 0 with err
** when the variable is not a size. */
uint64_t ms_mem_limit(const char **what, rt_err *err);
/* Whether host workers run in the sandbox here; *why says why not. */
int ms_sandbox_available(const char **why);
void ms_workload_free(ms_workload *w);              /* NULL is a no-op */

/* The timing loop and its stopping rule, on any sampler (used by the
** worker with a real clock and by tests with a synthetic noisy one).
** sample() runs the thing once and returns its duration in seconds. */
void ms_time_loop(double (*sample)(void *ctx), void *ctx, const ms_opts *o,
                  ms_stats *st);
/* Statistics of n durations (sorted in place). */
void ms_stats_compute(double *x, int n, ms_stats *st);

/* Parse an event list ("A, B": trimmed, no empty names, names < MS_EVNAME
** chars, no duplicates, at most max; NULL: defaults, NULL-terminated, which
** may be NULL too). Returns the number of names, or -1 with err set. */
int ms_parse_events(const char *list, const char *const *defaults, char names[][MS_EVNAME], int max,
                    rt_err *err);

/* ---- Load (ms_load.c): is something else using this machine? ----
** The signs over the interval since the guard's last look:
**  - others: other processes' CPU time (/proc/stat's busy time minus
**    rooftune's own and its reaped children's, getrusage), in CPUs;
**  - steal: the hypervisor's share of the CPU time;
**  - ref: a fixed compute loop in registers (no memory, so no cache
**    state a heavy measurement leaves behind), its median time over its
**    time at the guard's start: a slower core (frequency, a sibling
**    hyperthread, a CPU the hypervisor shares without saying so);
**  - gpu (a GPU target whose row reads its state, tg_backend.gpu_reading): the SM
**    clock under MS_LOAD_SM_DROP of the highest seen while not idle, a
**    throttling reason (hardware slowdown, thermal, power brake) at the
**    look, or thermal violation time during the interval.
** Over a threshold below, the interval is busy. CPU time is judged over
** at least MS_LOAD_MIN_WALL (jiffies are 10 ms: too coarse for less): a
** look after a shorter measurement is judged over the window back to the
** newest earlier look that old (MS_LOAD_HIST kept), so what ran beside a
** short measurement marks it, not the next one; where none is that old
** (a guard's first half second), back to the oldest when it is a quarter
** of that old, else the other signs judge alone. The look after a wait
** that ended quiet is the exception: its window starts at the wait's
** last look and reaches forward (a nap) to MS_LOAD_MIN_WALL, never back
** into the quiet wait, which would dilute load that came back with the
** measurement made again (seen in the load experiment).
** Invariants:
**  1. Every reading of the machine goes through g->hooks (NULL members:
**     the machine's own), so tests inject sequences of readings.
**  2. A machine that cannot be read is busy, never quiet (the CPU
**     sample); a GPU that cannot be read is no sign (said once in
**     g->gpu_why) and the CPU signs still judge.
**  3. ms_load_wait returns within max_s (plus one look) and at once
**     when *stop is set. */
#define MS_LOAD_OTHERS 0.5        /* CPUs of other work over the interval */
#define MS_LOAD_STEAL 0.05        /* share of the CPU time stolen */
#define MS_LOAD_REF 1.25          /* the reference loop's time over its start time */
#define MS_LOAD_REF_RUNS 7        /* a look times the loop this often: the median */
#define MS_LOAD_SM_DROP 0.85      /* GPU: SM clock over the highest seen (not idle) */
#define MS_LOAD_MIN_WALL 0.5      /* seconds: the shortest window CPU time judges */
#define MS_LOAD_HIST 64           /* earlier looks kept for that window */
#define MS_LOAD_RETRIES 2         /* the wait policy: measurements again, at most */
#define MS_LOAD_WAIT 30.0         /* the wait policy: seconds waited per measurement */
#define MS_LOAD_NAP MS_LOAD_MIN_WALL   /* a wait's nap between looks: each judges its own */

/* NVML's clocks event (throttle) reason bits (nvml.h's
** nvmlClocksEventReason* / nvmlClocksThrottleReason*, values pinned). */
#define MS_GPU_IDLE 0x1ULL
#define MS_GPU_SW_POWER_CAP 0x4ULL
#define MS_GPU_HW_SLOWDOWN 0x8ULL
#define MS_GPU_SW_THERMAL 0x20ULL
#define MS_GPU_HW_THERMAL 0x40ULL
#define MS_GPU_HW_POWER_BRAKE 0x80ULL
#define MS_GPU_THROTTLED (MS_GPU_HW_SLOWDOWN | MS_GPU_SW_THERMAL | MS_GPU_HW_THERMAL | MS_GPU_HW_POWER_BRAKE)
#define MS_GPU_UNKNOWN (~0ULL)    /* a cumulative time the driver does not give */

/* A GPU's state now (as its backend row reads it: tg_backend.gpu_reading). */
typedef struct ms_gpu_reading {
  unsigned sm_mhz;                       /* the SM clock now; 0: unknown */
  unsigned long long reasons;            /* MS_GPU_* bits now */
  unsigned long long thermal_ns, power_ns;   /* cumulative violation times (MS_GPU_UNKNOWN) */
} ms_gpu_reading;

/* The signs over their thresholds, as bits of ms_load_view.signs. */
enum { MS_SIGN_OTHERS = 1, MS_SIGN_STEAL = 2, MS_SIGN_GPU_THROTTLE = 4, MS_SIGN_GPU_CLOCK = 8,
       MS_SIGN_REF = 16, MS_NSIGNS = 5 };
extern const char *const ms_sign_names[MS_NSIGNS];   /* "others", "steal", ... by bit */

typedef struct ms_jiffies {
  unsigned long long busy, idle, steal;   /* /proc/stat's cpu line, summed */
  int running;                            /* procs_running (-1: absent) */
} ms_jiffies;
typedef struct ms_load_sample_t {
  double t, own;                          /* rt_now(); our CPU seconds */
  ms_jiffies j;
} ms_load_sample_t;
typedef struct ms_load_view {
  double wall, others, steal, ref;        /* s; CPUs; share; ratio (0: not timed) */
  int running, busy, signs;               /* signs: MS_SIGN_* over their thresholds */
  int gpu;                                /* 1: the GPU fields hold a reading */
  ms_gpu_reading g;                       /* the GPU at this look */
  double sm_ratio, thermal_s, power_s;    /* its clock over the highest seen; violation
                                          ** seconds during the interval (NAN: unknown) */
  char why[160];                          /* the first sign over its threshold */
} ms_load_view;

/* Where the guard's readings come from (invariant 1). */
typedef struct ms_load_hooks {
  int (*sample)(void *ctx, ms_load_sample_t *s, rt_err *err);   /* NULL: ms_load_sample */
  double (*ref)(void *ctx);                                     /* NULL: ms_load_ref */
  int (*gpu)(void *ctx, ms_gpu_reading *r, rt_err *err);        /* NULL: no GPU */
  void (*nap)(void *ctx, double s);                             /* NULL: sleep */
  void *ctx, *gpu_ctx;                                          /* gpu's own context */
} ms_load_hooks;

typedef struct ms_load_guard {
  int on;
  double hz, ref_base;
  double max_others, max_steal, max_ref, max_sm_drop;   /* the thresholds (the defines) */
  ms_load_hooks hooks;
  ms_load_sample_t hist[MS_LOAD_HIST];    /* the latest looks' samples, a ring */
  int nhist, head;                        /* kept; the newest's index */
  int gpu_on;                             /* 1: the GPU was read at the start */
  ms_gpu_reading gpu_last;
  unsigned sm_top;                        /* the highest SM clock seen while not idle */
  char gpu_why[160];                      /* why the GPU is not looked at ("": it is) */
  int after_wait;                         /* 1: the newest look ended a wait quiet */
} ms_load_guard;

/* The aggregate "cpu" line and procs_running of /proc/stat's text. 0 or
** -1 (no cpu line, or fewer than four numbers). */
int ms_load_parse_stat(const char *text, ms_jiffies *j);
/* This machine now. 0, or -1 with err. */
int ms_load_sample(ms_load_sample_t *s, rt_err *err);
/* The signs between samples a and b (hz: jiffies a second); busy unset. */
void ms_load_between(const ms_load_sample_t *a, const ms_load_sample_t *b, double hz,
                     ms_load_view *v);
/* The GPU's signs between readings a and b into v (gpu, g, sm_ratio,
** thermal_s, power_s); *sm_top: the highest SM clock seen while not
** idle, raised by b. */
void ms_load_gpu_between(const ms_gpu_reading *a, const ms_gpu_reading *b, unsigned *sm_top,
                         ms_load_view *v);
/* Busy or not by g's thresholds, into v->busy, v->signs and v->why. */
void ms_load_verdict(const ms_load_guard *g, ms_load_view *v);
/* The reference loop: the median of MS_LOAD_REF_RUNS timings (after one
** untimed run), in seconds. */
double ms_load_ref(void);
/* Start a guard with hooks h (NULL: the machine's): the reference's
** start time (the fastest of three medians), the GPU's first reading
** (when h->gpu) and a first sample. 0, or -1 with err. */
int ms_load_start(ms_load_guard *g, const ms_load_hooks *h, rt_err *err);
/* Look now: 1 when the interval since the last look was busy (v says
** why; a machine that cannot be read is busy), else 0. The first look
** after a wait that ended quiet naps until MS_LOAD_MIN_WALL has passed
** since the wait's last look ("Load" above). */
int ms_load_check(ms_load_guard *g, ms_load_view *v);
/* Wait for a quiet machine after a busy look: naps of MS_LOAD_NAP, the
** last cut to what is left of max_s, a look after each, until one is
** quiet (invariant 3). Each look judges its own nap, the last half
** second: a wait ends when the machine is quiet now, not when a long nap
** was quiet on average (doubling naps once ended waits on an 8 s nap that
** had spanned a job's 8 s pause, just as the job came back: the load
** experiment's busy run then stored all 80 trials loaded). The seconds
** waited; *v the last look (v->busy: it stayed busy, or *stop was set). */
double ms_load_wait(ms_load_guard *g, double max_s, const volatile sig_atomic_t *stop,
                    ms_load_view *v);
void ms_load_end(ms_load_guard *g);

#endif
