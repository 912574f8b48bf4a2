/*
** test_t1_kernels.c -- the T1 kernels the repository ships, loaded by
** targets/user and checked without a GPU: our own CUDA kernels
** (examples/t1/fir.json, pnpoly.json: everywhere) and the benchmark hub's
** (data/t1k/convolution_milo.json, dedispersion_milo.json: only where
** ../shared/data/kernels/benchmark_hub holds their sources; skipped with a
** message elsewhere). For each, the reference configuration and six
** sampled ones (GSL mt19937, seed 7):
**  - the plan's launch line against the launch worked out here from the
**    kernel's own Kernel Tuner script or README (blocks = ceil(problem /
**    (the grid divisors' product)), the block = the block-size
**    parameters), the kernel's name, its symbols, its argument count;
**  - compiled by NVRTC for sm_90 (gd_cubin_build, the worker's own build;
**    skipped without NVRTC): the reference configuration and our kernels'
**    every sample must build; the hub convolution's samples may fail only
**    for the reason the hub's source has (over 48 KiB of static shared
**    memory), and the log must say so.
** Then CLBlast's Xgemm (data/t1k/gemm_milo.json, OpenCL) tuned end to end
** on PoCL through the program at M = N = K = 128 (random, 6 schedules):
** every one verified against the reference configuration, the winner
** pinned and read back by the reader library.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "targets/cuda/gd.h"
#include "targets/cuda/gk.h"
#include "targets/opencl/oc.h"
#include "targets/user/uk.h"
#include "db/rtdb.h"
#include "tk_exe.h"
#include "tk_run.h"

#define HUB "../shared/data/kernels/benchmark_hub"

static char rooftune[4096], tmp[64];

/* The launch expected for cfg: grid and block, from the kernel's own
** definition (its Kernel Tuner script's grid divisors). */
typedef struct expect {
  const char *t1, *dir, *kernel, *symbol;   /* symbol NULL: none */
  int nargs;                                  /* launch arguments */
  void (*launch)(const sp_space *sp, const int *cfg, long grid[3], long block[3]);
  int may_fail_smem;                          /* static shared memory over 48 KiB */
} expect;

static long p(const sp_space *sp, const int *cfg, const char *name) { return (long)kn_param_int(sp, cfg, name); }
static long cdiv(long a, long b) { return (a + b - 1) / b; }

static void fir_launch(const sp_space *sp, const int *cfg, long g[3], long b[3]) {
  long n = 1000003;   /* N's Default in fir.json */
  g[0] = cdiv(n, p(sp, cfg, "BLOCK") * p(sp, cfg, "ITEMS")), g[1] = g[2] = 1;
  b[0] = p(sp, cfg, "BLOCK"), b[1] = b[2] = 1;
}
static void pnpoly_launch(const sp_space *sp, const int *cfg, long g[3], long b[3]) {
  g[0] = cdiv(20000000, p(sp, cfg, "block_size_x") * p(sp, cfg, "tile_size")), g[1] = g[2] = 1;
  b[0] = p(sp, cfg, "block_size_x"), b[1] = b[2] = 1;
}
static void conv_launch(const sp_space *sp, const int *cfg, long g[3], long b[3]) {
  /* convolution_milo.py: grid_div_x = [block_size_x, tile_size_x], y alike, 4096^2 */
  g[0] = cdiv(4096, p(sp, cfg, "block_size_x") * p(sp, cfg, "tile_size_x"));
  g[1] = cdiv(4096, p(sp, cfg, "block_size_y") * p(sp, cfg, "tile_size_y")), g[2] = 1;
  b[0] = p(sp, cfg, "block_size_x"), b[1] = p(sp, cfg, "block_size_y"), b[2] = 1;
}
static void dedisp_launch(const sp_space *sp, const int *cfg, long g[3], long b[3]) {
  /* dedispersion_milo.py: Kernel Tuner's default divisors, the block sizes;
  ** problem (samples 25000, DMs 2048, 1) */
  g[0] = cdiv(25000, p(sp, cfg, "block_size_x")), g[1] = cdiv(2048, p(sp, cfg, "block_size_y"));
  g[2] = cdiv(1, p(sp, cfg, "block_size_z"));
  b[0] = p(sp, cfg, "block_size_x"), b[1] = p(sp, cfg, "block_size_y"), b[2] = p(sp, cfg, "block_size_z");
}

static const expect kernels[] = {
  {"examples/t1/fir.json", NULL, "fir", "taps", 4, fir_launch, 0},
  {"examples/t1/pnpoly.json", NULL, "cn_pnpoly", "d_vertices", 3, pnpoly_launch, 0},
  {"data/t1k/convolution_milo.json", HUB, "convolution_kernel", "d_filter", 3, conv_launch, 1},
  {"data/t1k/dedispersion_milo.json", HUB, "dedispersion_kernel", NULL, 3, dedisp_launch, 0},
};

static void check_kernel(const expect *e, int nvrtc) {
  rt_err err = {0};
  const kn_kernel *k = uk_load(e->t1, e->dir, NULL, 0, &err);
  if (!k) fail_msg("%s", err.msg);
  uk_spec *s = uk_spec_of(k);
  sp_space *sp = sp_load_file(s->path, NULL, 0, &err);
  if (!sp) fail_msg("%s", err.msg);
  int np = sp_nparams(sp), ncfg = 7;
  int *cfgs = calloc((size_t)ncfg * (size_t)np, sizeof *cfgs);
  assert_int_equal(uk_reference_config(s, sp, cfgs, &err), 0);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 7);
  assert_int_equal(sp_sample(sp, rng, ncfg - 1, 1, cfgs + np, &err), 0);
  gsl_rng_free(rng);
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  kn_buf b[KN_MAXBUF];
  int nbuf = k->buffers(&pb, b), built = 0;
  for (int c = 0; c < ncfg; c++) {
    const int *cfg = cfgs + (size_t)c * (size_t)np;
    char *src = k->codegen(&pb, sp, cfg), *cj = sp_config_json(sp, cfg);
    gk_plan plan;
    if (gk_plan_parse(src, nbuf, &plan, &err)) fail_msg("%s %s: %s", e->t1, cj, err.msg);
    assert_int_equal(plan.nsteps, 1);
    const gk_step *st = &plan.step[0];
    long g[3], bl[3];
    e->launch(sp, cfg, g, bl);
    assert_int_equal(st->kind, GK_LAUNCH);
    assert_string_equal(st->name, e->kernel);
    for (int d = 0; d < 3; d++)
      if ((long)st->grid[d] != g[d] || (long)st->block[d] != bl[d])
        fail_msg("%s %s: launch %u %u %u x %u %u %u, expected %ld %ld %ld x %ld %ld %ld", e->t1, cj,
                 st->grid[0], st->grid[1], st->grid[2], st->block[0], st->block[1], st->block[2],
                 g[0], g[1], g[2], bl[0], bl[1], bl[2]);
    assert_int_equal(st->nargs, e->nargs);
    assert_int_equal(plan.nsym, e->symbol ? 1 : 0);
    if (e->symbol) assert_string_equal(plan.sym[0].name, e->symbol);
    if (nvrtc) {
      char path[4200];
      rt_str log = {0};
      int hit = 0, rc = gd_cubin_build(src, &plan, 9, 0, tmp, path, sizeof path, &hit, &log);
      if (rc == 0) built++;
      else if (!(rc == 1 && e->may_fail_smem && c > 0 && log.s && strstr(log.s, "shared data")))
        fail_msg("%s %s: NVRTC: %d: %.600s", e->t1, cj, rc, log.s ? log.s : "");
      free(log.s);
    }
    free(src), free(cj);
  }
  if (nvrtc) assert_true(built >= (e->may_fail_smem ? 1 : ncfg));
  print_message("%s: %d configurations planned%s%d built by NVRTC\n", e->t1, ncfg, nvrtc ? ", " : " (", built);
  free(cfgs);
  sp_free(sp);
  uk_unload(k);
}

static void cuda_plans(void **state) {
  (void)state;
  const char *why = NULL;
  int nvrtc = gd_nvrtc_available(&why);
  if (!nvrtc) print_message("NVRTC not here (%s): plans only\n", why);
  int hub = access(HUB "/convolution_milo.cu", R_OK) == 0;
  if (!hub) print_message("skipped the hub's kernels: %s is not here (it is beside a developer's checkout, not in the repository)\n", HUB);
  for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++)
    if (!kernels[i].dir || hub) check_kernel(&kernels[i], nvrtc);
}

/* CLBlast's Xgemm on PoCL through the program. */
static void clblast_gemm_pocl(void **state) {
  (void)state;
  const char *why;
  if (access(HUB "/gemm_milo/xgemm_part4.opencl", R_OK)) {
    print_message("skipped: %s is not here (the hub's CLBlast sources)\n", HUB);
    skip();
  }
  if (!rooftune[0] || !oc_available(&why)) {
    print_message("skipped: %s\n", rooftune[0] ? why : "the rooftune program is not built");
    skip();
  }
  char t1[4200], dir[4200], out[32768], db[128];
  if (!realpath("data/t1k/gemm_milo.json", t1) || !realpath(HUB, dir)) fail_msg("paths");
  const char *argv[] = {rooftune, "tune", "--t1", t1, "--kernel-dir", dir, "--set", "M=128,N=128,K=128",
                        "--strategy", "random", "--budget", "6", "--seed", "3", "--atol", "1e-4",
                        "--time-cap", "0.05", "--db", "gemm.db", NULL};
  tk_io io = {.cwd = tmp, .out = out, .cap = sizeof out, .both = 1};
  if (tk_run(argv, &io)) fail_msg("%s", out);
  if (!strstr(out, "trials     6: ok 6 compile_error 0 runtime_error 0 timeout 0 wrong_result 0 invalid 0") ||
      !strstr(out, "pinned     version 1"))
    fail_msg("%s", out);
  snprintf(db, sizeof db, "%s/gemm.db", tmp);
  rtdb *r = NULL;
  assert_int_equal(rtdb_open(db, &r), RTDB_OK);
  rtdb_result res;
  assert_int_equal(rtdb_lookup(r, "opencl:0.0", "gemm_milo", "M=128,N=128,K=128", NULL, &res), RTDB_OK);
  assert_int_equal(res.match, RTDB_EXACT);
  rtdb_close(r);
}

static int setup(void **state) {
  (void)state;
  snprintf(tmp, sizeof tmp, "/tmp/test_t1k-XXXXXX");
  if (!mkdtemp(tmp)) return -1;
  char cache[96];
  snprintf(cache, sizeof cache, "%s/cache", tmp);
  setenv("ROOFTUNE_CACHE", cache, 1);
  if (find_rooftune("test_t1_kernels", rooftune, sizeof rooftune)) rooftune[0] = 0;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tk_rm_rf(tmp);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(cuda_plans),
    cmocka_unit_test(clblast_gemm_pocl),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
