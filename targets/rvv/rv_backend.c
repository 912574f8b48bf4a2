/*
** rv_backend.c -- the rvv row of the backend table (tg_backend.h): RISC-V
** vector code cross-compiled with clang, verified under qemu-riscv64 at the
** instance's VLEN ("rvv:VLEN", rv.h invariant 1), timed only through the
** board runner (invariant 4). Its description names the VLEN, the
** compiler, the emulator and how it is timed; no counters, no ceilings
** bench (an emulator's speed says nothing of a board's: the ceilings are
** a description file's, targets/rvv/k1.json for rvv:256, read with
** targets/model/tm.h), and its kernels' models are the "vla" family's
** (cost_model/cm_vla_gemm.c, cm_vla_reduction.c: the CPU roofline for
** vector-length agnostic code).
*/
#include "rv.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cost_model/cm.h"
#include "../model/tm.h"

const kn_kernel *const rv_kernels[] = {&rv_gemm, &rv_reduction, NULL};

/* "rvv" is rvv:256; "rvv:VLEN" with VLEN a power of two in [128, 1024]. */
static int rvb_parse(const char *name, tg_target *t, rt_err *err) {
  if (strncmp(name, "rvv", 3) || (name[3] && name[3] != ':')) return 0;
  long v = RV_VLEN_DEFAULT;
  if (name[3]) {
    char *end;
    v = strtol(name + 4, &end, 10);
    if (!name[4] || *end || name[4] == '-' || name[4] == '+' || v < 128 || v > 1024 || (v & (v - 1))) {
      rt_err_set(err, "target '%s': expected rvv:VLEN, VLEN a power of two from 128 to 1024 "
                 "(the vector register width in bits: rvv:256 is the SpacemiT K1's)", name);
      return -1;
    }
  }
  memset(t, 0, sizeof *t);
  t->be = &rv_backend;
  t->idx[0] = (int)v;
  snprintf(t->name, sizeof t->name, "rvv:%ld", v);
  return 1;
}

static int rvb_list(tg_target *t, int max) {
  static const int vlens[] = {128, 256};
  int n = 0;
  for (; n < max && n < 2; n++) {
    memset(&t[n], 0, sizeof t[n]);
    t[n].be = &rv_backend;
    t[n].idx[0] = vlens[n];
    snprintf(t[n].name, sizeof t[n].name, "rvv:%d", vlens[n]);
  }
  return n;
}

/* The pairs: what the code is built for and with, what runs it, and how it
** is timed (rv.h invariant 4: no pair pretends to be a board). */
static int rvb_describe(const tg_target *t, tg_desc *d, rt_err *err) {
  const char *why;
  if (!rv_available(&why)) {
    rt_err_set(err, "%s is not available here: %s", t->name, why);
    return -1;
  }
  char cc[768], rbuf[1024], *argv[RV_MAXARGV];
  int nr = rv_runner(rbuf, sizeof rbuf, argv);
  if (nr < 0) {
    rt_err_set(err, "%s holds more than %d words", RV_RUNNER_ENV, RV_MAXARGV - 4);
    return -1;
  }
  tg_desc_add(d, "backend", "rvv");
  tg_desc_add(d, "isa", "rv64gcv (RVV 1.0)");
  tg_desc_add(d, "vlen", "%d", t->idx[0]);
  tg_desc_add(d, "compiler", "%s", rv_compiler(cc, sizeof cc));
  tg_desc_add(d, "cflags", "%s", RV_CFLAGS);
  if (nr) {
    rt_str r = {0};
    for (int i = 0; i < nr; i++) rt_str_printf(&r, "%s%s", i ? " " : "", argv[i]);
    tg_desc_add(d, "timing", "board through a runner");
    tg_desc_add(d, "runner", "%s", r.s);
    free(r.s);
  } else {
    tg_desc_add(d, "timing", "none (emulated: verified, never timed)");
    tg_desc_add(d, "emulator", "%s -cpu rv64,v=true,vlen=%d,vext_spec=v1.0", rv_qemu_version(),
                t->idx[0]);
  }
  return 0;
}

/* Family: the runner (a board) or the emulator is the model; the
** architecture is the ISA at its VLEN. */
static void rvb_family(const tg_desc *d, tg_family *f) {
  const char *runner = tg_desc_get(d, "runner"), *vlen = tg_desc_get(d, "vlen"),
             *model = tg_desc_get(d, "model");
  if (*model) snprintf(f->model, sizeof f->model, "%s", model);   /* a description file's */
  else if (*runner) snprintf(f->model, sizeof f->model, "RISC-V board through '%.200s'", runner);
  else snprintf(f->model, sizeof f->model, "qemu-riscv64 (emulated)");
  if (*vlen) snprintf(f->arch, sizeof f->arch, "rv64gcv vlen=%.16s", vlen);
}

static const char *rvb_compiler(const tg_target *t, char *buf, size_t cap) {
  (void)t;
  return rv_compiler(buf, cap);
}

static void rvb_build_key(const tg_target *t, const char *src, const char *ldflags,
                          const ms_opts *o, char key[33]) {
  (void)t, (void)ldflags, (void)o;   /* RV_CFLAGS are fixed; nothing else is linked */
  rv_build_key(src, key);
}

static void rvb_prebuild(const tg_target *t, const char *const *srcs, int n, const char *ldflags,
                         const ms_opts *o, int jobs) {
  (void)t, (void)ldflags;
  rv_prebuild(srcs, n, o, jobs);
}

/* Timed only through a runner (rv.h invariant 3). */
static int rvb_timed(const tg_target *t, const char **why) {
  (void)t;
  char rbuf[1024], *argv[RV_MAXARGV];
  if (rv_runner(rbuf, sizeof rbuf, argv) != 0) return 1;
  if (why) *why = "its runs are emulated under " RV_QEMU ": they verify a schedule and time "
                  "nothing (set " RV_RUNNER_ENV " to time on a board; rooftune measure verifies)";
  return 0;
}

static int rvb_measure(const tg_target *t, ms_workload *w, const char *src, const char *ldflags,
                       const ms_opts *o, ms_result *r) {
  (void)ldflags;
  return rv_measure(w, src, t->idx[0], o, r);
}

static int rvb_counters(const tg_target *t, const char **why) {
  (void)t;
  if (why) *why = "the rvv backend has no counters";
  return 0;
}

static const char *const no_events[] = {NULL};

/* The description file of rvv:VLEN (rv.h invariant 7), loaded once per
** process and path; NULL with err when it cannot be read or describes
** another VLEN. */
static const tm_file *description(const tg_target *t, rt_err *err) {
  static tm_file f;
  static char loaded[PATH_MAX];
  char path[PATH_MAX];
  const char *env = getenv(RV_DESCRIPTION_ENV);
  if (env && *env) snprintf(path, sizeof path, "%s", env);
  else rt_project_path(RV_DESCRIPTION_DEFAULT, path, sizeof path);
  if (strcmp(loaded, path)) {
    loaded[0] = 0;
    if (tm_load(path, &f, err)) return NULL;
    snprintf(loaded, sizeof loaded, "%s", path);
  }
  const char *vlen = tg_desc_get(&f.desc, "vlen");
  if (atoi(vlen) != t->idx[0]) {
    rt_err_set(err, "%s: the description %s is of a machine with VLEN %s; name one of VLEN %d in "
               RV_DESCRIPTION_ENV, t->name, path, *vlen ? vlen : "(none: no 'vlen' pair)", t->idx[0]);
    return NULL;
  }
  return &f;
}

/* No bench: an emulator's speed says nothing of a board's. The ceilings
** are the description file's (invariant 7). */
static int rvb_bench(const tg_target *t, const cm_bench_opts *o, cm_ceilings *c, rt_err *err) {
  (void)o;
  const tm_file *f = description(t, err);
  if (!f) return -1;
  *c = f->ce;
  return 0;
}

static const char *rvb_provenance(const tg_target *t) {
  rt_err err = {0};
  const tm_file *f = description(t, &err);
  return f ? f->provenance : NULL;
}

static const tg_traffic rvb_traffic[] = {{NULL, 0}};

static const char *rvb_traffic_source(const tg_target *t, int here, const char **why) {
  (void)t, (void)here;
  if (why) *why = "the rvv backend counts no cache traffic";
  return NULL;
}

const tg_backend rv_backend = {
  .name = "rvv",
  .summary = "RISC-V vector (RVV 1.0) C intrinsics: clang cross-compiled, verified under "
             "qemu-riscv64 (never timed there), timed on a board through ROOFTUNE_RVV_RUNNER",
  .syntax = "rvv:VLEN",
  .gpu = 0,
  .parse = rvb_parse,
  .list = rvb_list,
  .describe = rvb_describe,
  .family = rvb_family,
  .test_fingerprint_env = NULL,
  .compiler = rvb_compiler,
  .build_key = rvb_build_key,
  .prebuild = rvb_prebuild,
  .timed = rvb_timed,
  .measure = rvb_measure,
  .measure_batch = NULL,
  .counter_source = "none",
  .counters_available = rvb_counters,
  .default_events = no_events,
  .counted_traffic = NULL,
  .bench = rvb_bench,
  .model_family = "vla",
  .traffic = rvb_traffic,
  .traffic_source = rvb_traffic_source,
  .traffic_count = NULL,
  .limit_bindings = NULL,
  .kernels = rv_kernels,
  .provenance = rvb_provenance,
};
