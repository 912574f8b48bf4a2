/*
** rv.h -- the RISC-V vector backend ("rvv:VLEN"): kernel templates that
** generate RVV 1.0 C intrinsics, cross-compiled for riscv64 with clang,
** run under qemu-riscv64 at the instance's VLEN to verify their outputs,
** and timed only on a real board through a runner program the user names
** (the board hook). The templates are vector-length agnostic: one
** artefact is correct at any VLEN.
**
** Toolchain (Debian 12): clang-16 (`--target=riscv64-linux-gnu
** -march=rv64gcv`, v0.11 of the `__riscv_`-prefixed intrinsics API,
** __riscv_v_intrinsic == 11000, from the riscv_vector.h clang-16 ships),
** GNU ld from binutils-riscv64-linux-gnu (lld fails on R_RISCV_ALIGN),
** glibc from libc6-dev-riscv64-cross, linked -static so that neither qemu
** nor a board needs the cross sysroot at run time; qemu-user's
** qemu-riscv64 with `-cpu rv64,v=true,vlen=N,vext_spec=v1.0`. Debian's
** GCC 12 cross compiler (gcc-12-riscv64-linux-gnu 12.2) has no RVV
** intrinsics: checked, `#include <riscv_vector.h>` fails with "No such
** file or directory" even with -march=rv64gcv (GCC ships the header from
** GCC 13 on); so the compiler is clang (ROOFTUNE_RVV_CC, default
** clang-16).
**
** Invariants:
**  1. Instances are "rvv:VLEN", VLEN a power of two in [128, 1024] bits;
**     "rvv" is rvv:256 (the SpacemiT K1's). The VLEN is the emulator's
**     (qemu's vlen=) and, with a runner, what the board must report: the
**     artefact prints its VLEN (vlenb * 8) and a different one is
**     runtime_error.
**  2. An artefact is the candidate's source followed by rv_driver_source
**     (a fixed driver: main reads the buffers, runs rk_run, answers),
**     built with RV_CFLAGS by the compiler into the compile cache
**     (KEY.rvv.c, KEY.rvv); the key hashes (that text, RV_CFLAGS, the
**     compiler's path and --version line). A cached key is never rebuilt.
**  3. Emulated time is not a measurement. Without a runner a candidate is
**     run under qemu at the instance's VLEN and at a second one
**     (rv_second_vlen: the code must be vector-length agnostic, so an
**     artefact right at one VLEN only is wrong_result naming the VLEN),
**     verified each time, never timed: its ms_result has
**     status ok (or the failure), no statistics (t.n 0) and origin
**     "emulated" (ms.h invariant 8); the campaign refuses to store it as
**     a trial. With a runner its times are the board's, a measurement.
**  4. The runner (the board hook): ROOFTUNE_RVV_RUNNER, split at blanks
**     into an argument vector (no shell, no quoting), run as
**     RUNNER... ARTEFACT REPS WARMUP with the protocol below on its
**     stdin and stdout; it copies the artefact to the board, runs it with
**     those arguments and its stdin, and passes its stdout back (ssh
**     does the last two itself). The description names the runner
**     (pairs timing and runner), so trials measured through one carry
**     its fingerprint, never the emulator's; without one the description
**     says timing=none and names the emulator: no fingerprint pretends
**     to be a board.
**  5. Isolation: the row's measure runs each candidate in the harness's
**     worker (ms__run_worker); the worker starts qemu or the runner with
**     rt_fork (argument vector, stdin and stdout on pipes), so a crash is
**     runtime_error, a hang is killed with the worker at o->timeout
**     (qemu dies with the worker: rt.h "Child processes" 1). Under qemu
**     the worker enters the sandbox first (ms__sandbox: the emulated
**     program writes no file); a runner is the user's own program and
**     needs the network, so it runs outside the sandbox.
**  6. Outputs are verified on the host against the kernel's host
**     reference (the host template's C reference on the same inputs) with
**     its tolerance (kn.h invariant 2), and the inputs the artefact sends
**     back must be unchanged (ms.h invariant 3).
**  7. Ceilings: the row measures none (an emulator's speed says nothing
**     of a board's); its bench returns a description file's
**     (targets/model/tm.h format, read with tm_load): $ROOFTUNE_RVV_
**     DESCRIPTION, else targets/rvv/k1.json (the SpacemiT K1, VLEN 256,
**     every number with its source in its "provenance"). A file whose
**     "vlen" pair is not the instance's VLEN is refused. The models are
**     the "vla" family's (cost_model/cm_vla_*.c); tune --strategy model
**     on an rvv target stores predictions (tuner/tu_predict.c), each
**     schedule built and verified under qemu first.
**
** The protocol of an artefact (and so of a runner):
**   argv:   ARTEFACT REPS WARMUP     (REPS 0: verify only, no time lines)
**   stdin:  a line "rooftune-rvv-in NBUF BYTES0 OUT0 ... BYTES{n-1} OUT{n-1}"
**           then every buffer's bytes in order (outputs poisoned)
**   stdout: every buffer's bytes in order (each output as the first,
**           checked run left it; each input as it is after every run),
**           then text lines:
**             rvv-vlen BITS          (first)
**             rvv-time SECONDS       (one per timed run, REPS of them)
**             rvv-end N              (last: N == REPS) or
**             rvv-error MESSAGE      (last: the run failed)
**   Anything else (too few bytes, another line, a number that is not a
**   finite positive time, a count that disagrees) is runtime_error naming
**   the runner and the line.
*/
#ifndef RV_H
#define RV_H

#include <stddef.h>

#include "../../common/rt.h"
#include "../kn.h"
#include "../tg_backend.h"
#include "../tg_desc.h"
#include "../../measure/ms.h"

#define RV_VLEN_DEFAULT 256
#define RV_CFLAGS "--target=riscv64-linux-gnu -march=rv64gcv -O2 -static"
#define RV_CC_DEFAULT "clang-16"
#define RV_QEMU "qemu-riscv64"
#define RV_RUNNER_ENV "ROOFTUNE_RVV_RUNNER"
#define RV_MAXARGV 32
#define RV_DESCRIPTION_ENV "ROOFTUNE_RVV_DESCRIPTION"
#define RV_DESCRIPTION_DEFAULT "targets/rvv/k1.json"

/* ---- The toolchain (rv_tool.c) ---- */
/* The compiler: $ROOFTUNE_RVV_CC or RV_CC_DEFAULT. */
const char *rv_cc(void);
/* "PATH: first line of --version" of the compiler into buf, returned
** ("...: (not found)" when it does not run). */
const char *rv_compiler(char *buf, size_t cap);
/* The first line of `qemu-riscv64 --version` ("" when absent). */
const char *rv_qemu_version(void);
/* Whether the compiler and qemu run here (*why says why not). */
int rv_available(const char **why);
/* The runner's argument vector from RV_RUNNER_ENV into argv (at most
** RV_MAXARGV - 4 words, pointing into buf): how many (0: no runner), -1
** when the variable holds too many words. */
int rv_runner(char *buf, size_t cap, char **argv);
/* The build key of src (invariant 2). */
void rv_build_key(const char *src, char key[33]);
/* Build src into the cache (o->cache_dir): 0 and the artefact's path, or
** -1 with the compiler's log. *hit: it was there. */
int rv_build(const char *src, const ms_opts *o, char *exe, size_t cap, int *hit, rt_str *log);
void rv_prebuild(const char *const *srcs, int n, const ms_opts *o, int jobs);
/* The driver appended to every candidate (invariant 2; the protocol). */
extern const char rv_driver_source[];

/* ---- Measuring (rv_measure.c) ---- */
/* The second VLEN an emulated run verifies at (invariant 3): half the
** instance's, or 256 for rvv:128. */
int rv_second_vlen(int vlen);
/* The row's measure at vlen: build, then run in a worker under qemu
** (verify only) or through the runner (verify and time). Always fills r;
** 0, or -1 for harness failures. src NULL: MS_INVALID (the reference is
** host C, which no RISC-V artefact holds). */
int rv_measure(ms_workload *w, const char *src, int vlen, const ms_opts *o, ms_result *r);
/* The answer of an artefact (the protocol) in ans[0..n) for w's buffers,
** bufs[i] receiving each buffer's bytes; reps: the time lines expected.
** 0 with times[0..reps) and *vlen; -1 with msg naming what is wrong. */
int rv_parse_answer(const ms_workload *w, const char *ans, size_t n, int reps, void *const *bufs,
                    double *times, int *vlen, char *msg, size_t cap);

/* ---- The templates (rv_gemm.c, rv_reduction.c) ---- */
/* A gemm schedule (targets/rvv/gemm.json); bug != 0: a deliberately
** wrong kernel (the last k step of every block dropped), for tests only. */
typedef struct rv_gemm_sched {
  long m, n, k;
  int lmul, mr, unroll_k, kc;
  int vlmax;   /* vl strategy: 1 vsetvlmax strips + a vsetvl tail; 0 vsetvl per strip */
  int bug;
} rv_gemm_sched;
char *rv_gemm_source(const rv_gemm_sched *g);
extern const kn_kernel rv_gemm, rv_reduction;
extern const kn_kernel *const rv_kernels[];   /* NULL-terminated */

/* ---- The row (rv_backend.c) ---- */
extern const tg_backend rv_backend;

#endif
