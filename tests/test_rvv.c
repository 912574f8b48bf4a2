/*
** test_rvv.c -- the RISC-V vector backend (targets/rvv/rv.h): instance
** names and the answer protocol's parser on crafted answers (always run);
** then, where clang-16 and qemu-riscv64 run (else skipped with the
** reason): the description, schedules of both templates covering every
** value of LMUL, register tile, unroll, k blocking and vl strategy built
** and verified under qemu at VLEN 128 and 256 against the host's scalar C
** reference, a deliberately wrong schedule (rv_gemm_sched.bug) caught as
** wrong_result at both, a crashing, a hanging and a non-compiling
** candidate reported without taking the harness down, the board hook
** through a stand-in runner (this program run as `test_rvv --rvv-standin
** MODE`: it runs the artefact under qemu, or answers malformed on
** purpose), and the command line: measure says the run was emulated, tune
** refuses to store emulated results and stores the stand-in's timings as
** measured trials of a target whose description names the runner, and
** tune --strategy model stores verified predictions. The model: the K1
** description's ceilings as the rvv:256 row's, the gemm model's flops and
** L1 bytes against a walk of the generated loops, and every schedule the
** model proposes first (gemm and reduction) verified at VLEN 128 and 256.
** Problem sizes are small (qemu is slow) and odd (tails at every VLEN).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/rt.h"
#include "../measure/ms.h"
#include "../cost_model/cm.h"
#include "../measure/ms_backend.h"
#include "../targets/rvv/rv.h"
#include "../targets/tg.h"
#include "../tuner/tu.h"
#include "tk_exe.h"
#include "tk_run.h"
#include "tk_space.h"

static char exe[PATH_MAX], self[PATH_MAX], cache_dir[64];
static int have_rvv;
static const char *why_not = "";

#define NEED_RVV()                                                     \
  do {                                                                 \
    if (!have_rvv) {                                                   \
      print_message("skipped: no RISC-V toolchain here: %s\n", why_not); \
      skip();                                                          \
    }                                                                  \
  } while (0)

static void opts(ms_opts *o) {
  ms_opts_default(o);
  o->cache_dir = cache_dir;
  o->timeout = 30;
}

/* A workload of k for "VAR=VAL,..." (its space in *sp, pb filled). */
static ms_workload *workload(const kn_kernel *k, const char *set, sp_space **sp, kn_problem *pb) {
  rt_err err = {0};
  *sp = load_space(k, set);
  kn_problem_from_space(pb, *sp);
  ms_workload *w = ms_workload_new(k, pb, &err);
  if (!w) fail_msg("%s", err.msg);
  return w;
}

static void measure_at(int vlen, ms_workload *w, const char *src, ms_result *r) {
  char name[32];
  tg_target t;
  rt_err err = {0};
  ms_opts o;
  opts(&o);
  snprintf(name, sizeof name, "rvv:%d", vlen);
  assert_int_equal(tg_resolve(name, &t, &err), 0);
  if (tg_measure(&t, w, src, NULL, &o, r)) fail_msg("harness: %s", r->msg);
}

/* ---- always ---- */

static void test_target_names(void **state) {
  (void)state;
  static const struct { const char *in, *canon; int vlen; } ok[] = {
    {"rvv", "rvv:256", 256}, {"rvv:128", "rvv:128", 128}, {"rvv:1024", "rvv:1024", 1024}};
  tg_target t;
  rt_err err = {0};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
    assert_int_equal(tg_resolve(ok[i].in, &t, &err), 0);
    assert_string_equal(t.name, ok[i].canon);
    assert_int_equal(t.idx[0], ok[i].vlen);
    assert_ptr_equal(t.be, &rv_backend);
  }
  static const char *const bad[] = {"rvv:", "rvv:x", "rvv:100", "rvv:64", "rvv:2048", "rvv:-256",
                                    "rvv:256x", "rvv:+256"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    err.msg[0] = 0;
    assert_int_equal(tg_resolve(bad[i], &t, &err), -1);
    if (!strstr(err.msg, "expected rvv:VLEN")) fail_msg("%s: %s", bad[i], err.msg);
  }
  assert_int_equal(tg_resolve("rvvx", &t, &err), -1);
  assert_non_null(strstr(err.msg, "unknown target"));
}

/* The parser of answers (rv.h: the protocol), on answers made here. */
static void test_parse_answer(void **state) {
  (void)state;
  sp_space *sp;
  kn_problem pb;
  ms_workload *w = workload(&rv_reduction, "N=5", &sp, &pb);   /* x: 20 bytes, sum: 4 */
  float x[5], s[1];
  void *bufs[2] = {x, s};
  double t[4];
  int vlen;
  char msg[256], ans[512];
  static const struct { const char *text, *why; int reps; } cases[] = {
    {"rvv-vlen 128\nrvv-time 1e-3\nrvv-time 2e-3\nrvv-end 2\n", NULL, 2},
    {"rvv-vlen 256\nrvv-end 0\n", NULL, 0},
    {"rvv-vlen 256\nrvv-end 0", NULL, 0},   /* no newline at the end */
    {"", "no line after the buffers", 0},
    {"rvv-vlen x\nrvv-end 0\n", "line 1: 'rvv-vlen x': expected 'rvv-vlen BITS'", 0},
    {"rvv-time 1\nrvv-end 0\n", "line 1", 0},
    {"rvv-vlen 256\nrvv-time soon\nrvv-end 1\n", "line 2: 'rvv-time soon'", 1},
    {"rvv-vlen 256\nrvv-time -1\nrvv-end 1\n", "finite, positive", 1},
    {"rvv-vlen 256\nrvv-time nan\nrvv-end 1\n", "line 2", 1},
    {"rvv-vlen 256\nrvv-time 1\nrvv-time 1\nrvv-end 1\n", "line 3", 1},
    {"rvv-vlen 256\nrvv-time 1\nrvv-end 2\n", "line 3: 'rvv-end 2' after 1 of 1", 1},
    {"rvv-vlen 256\nrvv-time 1\n", "ends after 1 time lines without 'rvv-end 1'", 1},
    {"rvv-vlen 256\nrvv-end 0\nmore\n", "text after its last line", 0},
    {"rvv-vlen 256\nrvv-error rk_run returned 3\n", "the artefact failed: rk_run returned 3", 0},
    {"rvv-vlen 256\nhello\n", "line 2: 'hello'", 0},
  };
  float xin[5] = {1, 2, 3, 4, 5}, sum = 15;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    memcpy(ans, xin, sizeof xin);
    memcpy(ans + 20, &sum, 4);
    size_t n = strlen(cases[i].text);
    memcpy(ans + 24, cases[i].text, n);
    msg[0] = 0;
    int rc = rv_parse_answer(w, ans, 24 + n, cases[i].reps, bufs, t, &vlen, msg, sizeof msg);
    if (!cases[i].why) {
      if (rc) fail_msg("case %zu: %s", i, msg);
      assert_true(x[4] == 5 && s[0] == 15);
      continue;
    }
    if (rc != -1 || !strstr(msg, cases[i].why))
      fail_msg("case %zu: rc %d, '%s', expected '%s'", i, rc, msg, cases[i].why);
  }
  assert_int_equal(rv_parse_answer(w, "rvv-vlen 256\nrvv-end 0\n", 23, 0, bufs, t, &vlen, msg,
                                   sizeof msg), -1);
  assert_non_null(strstr(msg, "holds 23 bytes, its buffers need 24"));
  assert_int_equal(rv_parse_answer(w, ans, 24 + strlen("rvv-vlen 128\n"), 0, bufs, t, &vlen, msg,
                                   sizeof msg), -1);
  ms_workload_free(w);
  sp_free(sp);
}

/* ---- with the toolchain ---- */

static void test_describe(void **state) {
  (void)state;
  NEED_RVV();
  tg_target t;
  rt_err err = {0};
  tg_desc d = {0}, e = {0};
  unsetenv(RV_RUNNER_ENV);
  assert_int_equal(tg_resolve("rvv:128", &t, &err), 0);
  if (tg_describe(&t, &d, &err)) fail_msg("%s", err.msg);
  assert_string_equal(tg_desc_get(&d, "vlen"), "128");
  assert_non_null(strstr(tg_desc_get(&d, "compiler"), "clang version 16"));
  assert_non_null(strstr(tg_desc_get(&d, "emulator"), "qemu-riscv64 version"));
  assert_non_null(strstr(tg_desc_get(&d, "emulator"), "vlen=128"));
  assert_non_null(strstr(tg_desc_get(&d, "timing"), "never timed"));
  assert_string_equal(tg_desc_get(&d, "runner"), "");
  assert_string_equal(d.family.model, "qemu-riscv64 (emulated)");
  setenv(RV_RUNNER_ENV, "ssh  board.local", 1);   /* split at blanks */
  if (tg_describe(&t, &e, &err)) fail_msg("%s", err.msg);
  unsetenv(RV_RUNNER_ENV);
  assert_string_equal(tg_desc_get(&e, "runner"), "ssh board.local");
  assert_string_equal(tg_desc_get(&e, "emulator"), "");
  assert_string_not_equal(d.fingerprint, e.fingerprint);
  assert_non_null(strstr(e.family.model, "board"));
}

static void verify_configs(const kn_kernel *k, const char *set, const char *const *configs, int n) {
  sp_space *sp;
  kn_problem pb;
  ms_workload *w = workload(k, set, &sp, &pb);
  for (int i = 0; i < n; i++) {
    int cfg[16], failed;
    rt_err err = {0};
    if (!strcmp(configs[i], "default") ? !sp_default_config(sp, cfg)
                                       : sp_config_parse(sp, configs[i], cfg, &err))
      fail_msg("%s: %s", configs[i], err.msg);
    if (!sp_valid(sp, cfg, &failed)) fail_msg("%s: invalid (condition %d)", configs[i], failed);
    char *src = k->codegen(&pb, sp, cfg);
    assert_non_null(strstr(src, "__riscv_v"));
    for (int v = 128; v <= 256; v *= 2) {
      ms_result r;
      measure_at(v, w, src, &r);
      if (r.status != MS_OK)
        fail_msg("%s %s at VLEN %d: %s: %s", k->name, configs[i], v, ms_status_name(r.status), r.msg);
      assert_string_equal(r.origin, "emulated");   /* rv.h invariant 3 */
      assert_int_equal(r.t.n, 0);
      assert_true(r.max_err <= k->tolerance(&pb));
    }
    free(src);
  }
  ms_workload_free(w);
  sp_free(sp);
}

/* Every value of every gemm parameter in some schedule, at both VLENs; K
** = 40 gives two k blocks at kc 32, M = 9 an edge of rows for every mr
** but 1, N = 37 a tail of columns at every vl. */
static void test_gemm_two_vlens(void **state) {
  (void)state;
  NEED_RVV();
  static const char *const configs[] = {
    "default",
    "{\"lmul\":1,\"mr\":8,\"unroll_k\":4,\"kc\":32,\"vl_strategy\":\"strip\"}",
    "{\"lmul\":2,\"mr\":6,\"unroll_k\":1,\"kc\":64,\"vl_strategy\":\"vlmax\"}",
    "{\"lmul\":4,\"mr\":2,\"unroll_k\":2,\"kc\":32,\"vl_strategy\":\"vlmax\"}",
    "{\"lmul\":8,\"mr\":1,\"unroll_k\":4,\"kc\":128,\"vl_strategy\":\"strip\"}",
    "{\"lmul\":4,\"mr\":4,\"unroll_k\":4,\"kc\":256,\"vl_strategy\":\"strip\"}",
  };
  verify_configs(&rv_gemm, "M=9,N=37,K=40", configs, 6);
}

static void test_reduction_two_vlens(void **state) {
  (void)state;
  NEED_RVV();
  static const char *const configs[] = {
    "{\"lmul\":1,\"accs\":4,\"vl_strategy\":\"vlmax\"}",
    "{\"lmul\":2,\"accs\":1,\"vl_strategy\":\"strip\"}",
    "{\"lmul\":4,\"accs\":2,\"vl_strategy\":\"strip\"}",
    "{\"lmul\":8,\"accs\":2,\"vl_strategy\":\"vlmax\"}",
    "{\"lmul\":1,\"accs\":4,\"vl_strategy\":\"strip\"}",
  };
  verify_configs(&rv_reduction, "N=1001", configs, 5);
  static const char *const tiny[] = {configs[0], configs[4]};
  verify_configs(&rv_reduction, "N=3", tiny, 2);   /* shorter than one vector */
}

/* The injected bug is caught at both VLENs; the same schedule without it
** passes (so it is the bug, not the schedule, that fails). */
static void test_wrong_schedule(void **state) {
  (void)state;
  NEED_RVV();
  sp_space *sp;
  kn_problem pb;
  ms_workload *w = workload(&rv_gemm, "M=5,N=19,K=9", &sp, &pb);
  rv_gemm_sched g = {.m = 5, .n = 19, .k = 9, .lmul = 2, .mr = 2, .unroll_k = 2, .kc = 32,
                     .vlmax = 1, .bug = 1};
  char *bad = rv_gemm_source(&g);
  g.bug = 0;
  char *good = rv_gemm_source(&g);
  for (int v = 128; v <= 256; v *= 2) {
    ms_result r;
    measure_at(v, w, bad, &r);
    if (r.status != MS_WRONG_RESULT) fail_msg("VLEN %d: %s: %s", v, ms_status_name(r.status), r.msg);
    assert_string_equal(r.origin, "");
    measure_at(v, w, good, &r);
    if (r.status != MS_OK) fail_msg("VLEN %d: %s", v, r.msg);
  }
  free(bad), free(good);
  ms_workload_free(w);
  sp_free(sp);
}

/* A candidate that crashes, one that hangs, one that does not compile,
** one that writes its input, one right at one VLEN only: each gets its
** status; the harness goes on. */
static void test_faults(void **state) {
  (void)state;
  NEED_RVV();
  sp_space *sp;
  kn_problem pb;
  ms_workload *w = workload(&rv_reduction, "N=64", &sp, &pb);
  tg_target t;
  rt_err err = {0};
  assert_int_equal(tg_resolve("rvv:128", &t, &err), 0);
  ms_opts o;
  opts(&o);
  o.timeout = 3;
  ms_result r;
  const char *crash = "#include <stddef.h>\nint rk_run(float *const *bufs) {\n"
                      "  volatile float *p = NULL; bufs[1][0] = *p; return 0;\n}\n";
  assert_int_equal(tg_measure(&t, w, crash, NULL, &o, &r), 0);
  if (r.status != MS_RUNTIME_ERROR || !strstr(r.msg, "signal")) fail_msg("%s", r.msg);
  const char *hang = "int rk_run(float *const *bufs) {\n"
                     "  for (volatile int i = 0;; i++) bufs[1][0] = (float)i;\n  return 0;\n}\n";
  double t0 = rt_now();
  assert_int_equal(tg_measure(&t, w, hang, NULL, &o, &r), 0);
  assert_int_equal(r.status, MS_TIMEOUT);
  assert_true(rt_now() - t0 < 15);
  const char *broken = "int rk_run(float *const *bufs) { return undeclared; }\n";
  assert_int_equal(tg_measure(&t, w, broken, NULL, &o, &r), 0);
  assert_int_equal(r.status, MS_COMPILE_ERROR);
  assert_non_null(strstr(r.msg, "undeclared"));
  const char *writes = "int rk_run(float *const *bufs) {\n"
                       "  float s = 0; for (int i = 0; i < 64; i++) s += bufs[0][i];\n"
                       "  bufs[0][0] = 7; bufs[1][0] = s; return 0;\n}\n";
  assert_int_equal(tg_measure(&t, w, writes, NULL, &o, &r), 0);
  assert_int_equal(r.status, MS_WRONG_RESULT);
  assert_non_null(strstr(r.msg, "wrote to its input x"));
  /* right at one VLEN only: caught at the second VLEN an emulated run uses */
  const char *vla = "#include <riscv_vector.h>\nint rk_run(float *const *bufs) {\n"
                    "  double s = 0; for (int i = 0; i < 64; i++) s += bufs[0][i];\n"
                    "  bufs[1][0] = __riscv_vlenb() == 16 ? (float)s : 0.0f; return 0;\n}\n";
  assert_int_equal(tg_measure(&t, w, vla, NULL, &o, &r), 0);   /* rvv:128, then 256 */
  if (r.status != MS_WRONG_RESULT || !strstr(r.msg, "at VLEN 256")) fail_msg("%s", r.msg);
  assert_int_equal(tg_measure(&t, w, NULL, NULL, &o, &r), 0);   /* no baseline */
  assert_int_equal(r.status, MS_INVALID);
  const char *fine = "#include <riscv_vector.h>\nint rk_run(float *const *bufs) {\n"
                     "  double s = 0; for (int i = 0; i < 64; i++) s += bufs[0][i];\n"
                     "  bufs[1][0] = (float)s; return 0;\n}\n";
  assert_int_equal(tg_measure(&t, w, fine, NULL, &o, &r), 0);   /* still here */
  if (r.status != MS_OK) fail_msg("%s", r.msg);
  ms_workload_free(w);
  sp_free(sp);
}

/* ms.h invariant 8 in the campaign: a result that says it is emulated is
** never stored, even from a row that claims to time (an injected
** measurement on the host target: ok, a time, origin "emulated"). */
static int emulated_measure(void *ctx, const int *cfg, const char *src, const char *ldflags,
                            const ms_opts *o, ms_result *r) {
  (void)ctx, (void)cfg, (void)src, (void)ldflags, (void)o;
  memset(r, 0, sizeof *r);
  r->status = MS_OK;
  r->t = (ms_stats){.n = 5, .median = 1e-3, .mean = 1e-3, .min = 1e-3, .max = 1e-3,
                    .ci_lo = 1e-3, .ci_hi = 1e-3};
  snprintf(r->origin, sizeof r->origin, "emulated");
  snprintf(r->msg, sizeof r->msg, "injected");
  return 0;
}

static void test_campaign_refuses_emulated(void **state) {
  (void)state;
  char dir[] = "/tmp/rt-rvv-camp-XXXXXX", dbp[64], out[256];
  assert_non_null(mkdtemp(dir));
  snprintf(dbp, sizeof dbp, "%s/t.db", dir);
  tu_campaign_opts o = {.db_path = dbp, .target = "host", .kernel = "reduction", .set = "N=100",
                        .strategy = "random", .budget = "2", .seed = 1, .no_load_guard = 1,
                        .measure = emulated_measure};
  ms_opts_default(&o.ms);
  tu_report rep;
  rt_err err = {0};
  assert_int_equal(tu_campaign(&o, &rep, &err), -1);
  if (!strstr(err.msg, "emulated") || !strstr(err.msg, "never stored")) fail_msg("%s", err.msg);
  const char *count[] = {"sqlite3", dbp, "SELECT count(*) FROM trials", NULL};
  tk_io io = {.out = out, .cap = sizeof out};
  assert_int_equal(tk_run(count, &io), 0);
  assert_string_equal(out, "0\n");
  assert_int_equal(tk_rm_rf(dir), 0);
}

/* ---- the board hook ---- */

/* This program as the stand-in runner: `--rvv-standin MODE ARTEFACT REPS
** WARMUP`. MODE qemu128 / qemu256 runs the artefact under qemu at that
** VLEN (what a board would do); the others read the input and answer
** wrongly on purpose: short (too few bytes), garble (a time that is no
** number), noend (no last line), hang (a child in its process group, as
** ssh would be, then nothing: its pid into $RVV_STANDIN_PIDFILE). */
static int standin(int argc, char **argv) {
  if (argc != 6) return 2;
  const char *mode = argv[2];
  if (!strncmp(mode, "qemu", 4)) {
    char cpu[64];
    snprintf(cpu, sizeof cpu, "rv64,v=true,vlen=%s,vext_spec=v1.0", mode + 4);
    char *qargv[] = {RV_QEMU, "-cpu", cpu, argv[3], argv[4], argv[5], NULL};
    execvp(qargv[0], qargv);
    return 127;
  }
  int nbuf = 0;
  long long need = 0, b;
  int out;
  if (scanf("rooftune-rvv-in %d", &nbuf) != 1) return 3;
  for (int i = 0; i < nbuf; i++)
    if (scanf(" %lld %d", &b, &out) == 2) need += b;
  getchar();
  for (long long i = 0; i < need; i++) getchar();
  if (!strcmp(mode, "hang")) {   /* a child in its group (ssh, say), then nothing */
    pid_t kid = fork();
    if (kid == 0) {
      for (;;) pause();
    }
    FILE *f = fopen(getenv("RVV_STANDIN_PIDFILE"), "w");
    if (f) fprintf(f, "%d\n", (int)kid), fclose(f);
    for (;;) pause();
  }
  if (!strcmp(mode, "short")) {
    printf("rvv-vlen 256\nrvv-end 0\n");
    return 0;
  }
  for (long long i = 0; i < need; i++) putchar(0);
  printf("rvv-vlen 256\n");
  if (!strcmp(mode, "garble")) printf("rvv-time soon\n");
  else for (int i = 0; i < atoi(argv[4]); i++) printf("rvv-time 1e-3\n");
  return 0;
}

static void runner_env(const char *mode) {
  char v[PATH_MAX + 64];
  snprintf(v, sizeof v, "%s --rvv-standin %s", self, mode);
  setenv(RV_RUNNER_ENV, v, 1);
}

static void test_runner(void **state) {
  (void)state;
  NEED_RVV();
  sp_space *sp;
  kn_problem pb;
  ms_workload *w = workload(&rv_gemm, "M=6,N=21,K=11", &sp, &pb);
  int cfg[16];
  assert_true(sp_default_config(sp, cfg));
  char *src = rv_gemm.codegen(&pb, sp, cfg);
  ms_result r;
  runner_env("qemu256");
  measure_at(256, w, src, &r);
  if (r.status != MS_OK) fail_msg("%s", r.msg);
  assert_string_equal(r.origin, "");   /* a measurement (of the stand-in's board) */
  assert_int_equal(r.t.n, 10);
  assert_true(r.t.median > 0 && r.t.min <= r.t.median);
  assert_non_null(strstr(r.msg, "timed by the runner"));
  measure_at(128, w, src, &r);   /* the board's VLEN is not the target's */
  assert_int_equal(r.status, MS_RUNTIME_ERROR);
  assert_non_null(strstr(r.msg, "at VLEN 256, the target is rvv:128"));
  static const struct { const char *mode, *why; } bad[] = {
    {"short", "the runner (exit status 0): the answer holds"},
    {"garble", "line 2: 'rvv-time soon'"},
    {"noend", "without 'rvv-end 10'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    runner_env(bad[i].mode);
    measure_at(256, w, src, &r);
    if (r.status != MS_RUNTIME_ERROR || !strstr(r.msg, bad[i].why))
      fail_msg("%s: %s: %s", bad[i].mode, ms_status_name(r.status), r.msg);
  }
  /* a runner that hangs: killed at the deadline with its whole group */
  char pidfile[96];
  snprintf(pidfile, sizeof pidfile, "%s.standin-pid", cache_dir);
  setenv("RVV_STANDIN_PIDFILE", pidfile, 1);
  runner_env("hang");
  tg_target t;
  rt_err err = {0};
  ms_opts o;
  opts(&o);
  o.timeout = 3;
  assert_int_equal(tg_resolve("rvv:256", &t, &err), 0);
  double t0 = rt_now();
  assert_int_equal(tg_measure(&t, w, src, NULL, &o, &r), 0);
  if (r.status != MS_TIMEOUT || !strstr(r.msg, "killed with its process group"))
    fail_msg("%s: %s", ms_status_name(r.status), r.msg);
  assert_true(rt_now() - t0 < 6);
  FILE *f = fopen(pidfile, "r");
  int kid = 0;
  assert_non_null(f);
  assert_int_equal(fscanf(f, "%d", &kid), 1);
  fclose(f);
  unlink(pidfile);
  char proc[64], st[512] = "";
  snprintf(proc, sizeof proc, "/proc/%d/stat", kid);
  for (int i = 0; i < 100; i++) {   /* gone, or a zombie no one has reaped yet */
    FILE *p = fopen(proc, "r");
    if (!p) break;
    size_t n = fread(st, 1, sizeof st - 1, p);
    st[n] = 0;
    fclose(p);
    char *rp = strrchr(st, ')');
    if (rp && rp[1] == ' ' && rp[2] == 'Z') break;
    usleep(20000);
    st[0] = 0;
  }
  if (st[0] && !strstr(st, ") Z")) fail_msg("the hung runner's child %d outlived it: %s", kid, st);
  setenv(RV_RUNNER_ENV, "/nonexistent/runner", 1);
  measure_at(256, w, src, &r);
  assert_int_equal(r.status, MS_RUNTIME_ERROR);
  unsetenv(RV_RUNNER_ENV);
  free(src);
  ms_workload_free(w);
  sp_free(sp);
}

/* ---- the model (cost_model/cm_vla_*.c on targets/rvv/k1.json) ---- */

/* The K1 description's ceilings are the rvv:256 row's, and another VLEN's
** instance refuses them (rv.h invariant 7). */
static void test_k1_ceilings(void **state) {
  (void)state;
  tg_target t;
  rt_err err = {0};
  cm_ceilings ce;
  unsetenv(RV_DESCRIPTION_ENV);
  assert_int_equal(tg_resolve("rvv:256", &t, &err), 0);
  if (tg_bench(&t, NULL, &ce, &err)) fail_msg("%s", err.msg);
  assert_int_equal(ce.threads, 8);
  assert_true(ce.peak[0] == 32.0e9 && ce.peak[1] == 255.8e9);
  assert_true(ce.cache[0] == 32768 && ce.cache[1] == 524288 && ce.cache[2] == 0);
  const char *prov = tg_provenance(&t);
  assert_non_null(prov);
  assert_non_null(strstr(prov, "https://docs.banana-pi.org/en/BPI-F3/SpacemiT_K1_datasheet"));
  assert_int_equal(tg_resolve("rvv:128", &t, &err), 0);
  assert_int_equal(tg_bench(&t, NULL, &ce, &err), -1);
  assert_non_null(strstr(err.msg, "VLEN 256"));
}

/* The gemm model's flops and L1 bytes against a walk of the generated
** loops (k blocks, strips of min(vl, N - j) lanes, tiles of mr rows then
** one-row tiles, k steps): what each instruction loads and stores. */
static void test_model_walk(void **state) {
  (void)state;
  static const char *const sets[] = {"M=9,N=37,K=40", "M=16,N=64,K=300", "M=5,N=7,K=3"};
  static const char *const cfgs[] = {
    "{\"lmul\":1,\"mr\":4,\"unroll_k\":2,\"kc\":32,\"vl_strategy\":\"strip\"}",
    "{\"lmul\":2,\"mr\":2,\"unroll_k\":4,\"kc\":128,\"vl_strategy\":\"vlmax\"}",
    "{\"lmul\":8,\"mr\":1,\"unroll_k\":1,\"kc\":32,\"vl_strategy\":\"vlmax\"}",
  };
  tg_target t;
  rt_err err = {0};
  cm_ceilings ce;
  unsetenv(RV_DESCRIPTION_ENV);
  assert_int_equal(tg_resolve("rvv:256", &t, &err), 0);
  if (tg_bench(&t, NULL, &ce, &err)) fail_msg("%s", err.msg);
  const cm_kmodel *km = cm_kmodel_find_on(t.be->model_family, "gemm");
  assert_ptr_equal(km, &cm_vla_gemm);
  cm_coefs c;
  cm_coefs_default(km, &c);
  for (size_t a = 0; a < 3; a++)
    for (size_t b = 0; b < 3; b++) {
      sp_space *sp = load_space(&rv_gemm, sets[a]);
      kn_problem pb;
      kn_problem_from_space(&pb, sp);
      int cfg[16];
      if (sp_config_parse(sp, cfgs[b], cfg, &err)) fail_msg("%s", err.msg);
      if (!sp_valid(sp, cfg, NULL)) {   /* (mr + 1) * lmul over the registers */
        sp_free(sp);
        continue;
      }
      cm_pred p;
      if (cm_predict(km, &pb, sp, cfg, &ce, &c, 0, &p, &err)) fail_msg("%s", err.msg);
      long M = kn_int(&pb, "M"), N = kn_int(&pb, "N"), K = kn_int(&pb, "K");
      long L = kn_param_int(sp, cfg, "lmul"), mr = kn_param_int(sp, cfg, "mr"),
           kc = kn_param_int(sp, cfg, "kc"), vlmax = L * 256 / 32;
      double flops = 0, bytes = 0;
      for (long k0 = 0; k0 < K; k0 += kc) {
        long k1 = k0 + kc < K ? k0 + kc : K;
        for (long j = 0; j < N; j += vlmax) {
          long vl = N - j < vlmax ? N - j : vlmax;
          for (long i = 0; i < M;) {
            long rows = i + mr <= M ? mr : 1;
            bytes += (double)rows * vl * 4 * (k0 ? 2 : 1);   /* C stored (loaded after the first block) */
            for (long k = k0; k < k1; k++) {
              bytes += vl * 4 + rows * 4;                    /* a row of B, an element of A per row */
              flops += 2.0 * rows * vl;
            }
            i += rows;
          }
        }
      }
      if (fabs(p.w.flops - flops) > 1e-9 * flops || fabs(p.w.bytes[0] - bytes) > 1e-9 * bytes)
        fail_msg("%s %s: model flops %g L1 bytes %g, walk %g and %g", sets[a], cfgs[b], p.w.flops,
                 p.w.bytes[0], flops, bytes);
      assert_true(p.time > 0 && isfinite(p.time));
      sp_free(sp);
    }
}

/* Every schedule the model proposes first (tu_rank on rvv:256 with the K1
** ceilings) compiles and passes verification under qemu at VLEN 128 and
** 256: the best 6 of gemm and the best 4 of reduction. */
static void test_model_proposals_verify(void **state) {
  (void)state;
  NEED_RVV();
  static const struct { const kn_kernel *k; const char *set; int top; } cases[] = {
    {&rv_gemm, "M=24,N=37,K=33", 6}, {&rv_reduction, "N=999", 4}};
  tg_target t;
  rt_err err = {0};
  unsetenv(RV_DESCRIPTION_ENV);
  assert_int_equal(tg_resolve("rvv:256", &t, &err), 0);
  for (size_t c = 0; c < 2; c++) {
    tu_rank_opts ro = {.target = &t, .kernel = cases[c].k->name, .set = cases[c].set,
                       .cache_dir = cache_dir};
    tu_ranking r;
    if (tu_rank(&ro, &r, &err)) fail_msg("%s", err.msg);
    assert_true(r.n >= cases[c].top);
    ms_workload *w = ms_workload_new(r.k, &r.pb, &err);
    if (!w) fail_msg("%s", err.msg);
    for (int j = 0; j < cases[c].top; j++) {
      assert_true(isfinite(r.pred[r.order[j]].time));
      char *src = r.k->codegen(&r.pb, r.sp, tu_ranking_cfg(&r, r.order[j]));
      for (int v = 128; v <= 256; v *= 2) {
        ms_result m;
        measure_at(v, w, src, &m);
        if (m.status != MS_OK) {
          char *cj = sp_config_json(r.sp, tu_ranking_cfg(&r, r.order[j]));
          fail_msg("%s proposal %d %s at VLEN %d: %s: %s", r.k->name, j + 1, cj, v,
                   ms_status_name(m.status), m.msg);
        }
      }
      free(src);
    }
    ms_workload_free(w);
    tu_ranking_free(&r);
  }
}

/* ---- the command line ---- */

static tk_result rooftune(const char *dir, const char *const *args, const char *runner) {
  const char *argv[40] = {exe};
  int n = 1;
  for (; args[n - 1] && n < 39; n++) argv[n] = args[n - 1];
  argv[n] = NULL;
  static char env_cache[128], env_runner[PATH_MAX + 96];
  snprintf(env_cache, sizeof env_cache, "ROOFTUNE_CACHE=%s", cache_dir);
  if (runner) snprintf(env_runner, sizeof env_runner, RV_RUNNER_ENV "=%s --rvv-standin %s", self, runner);
  else snprintf(env_runner, sizeof env_runner, RV_RUNNER_ENV);
  const char *env[] = {env_cache, env_runner, NULL};
  return tk_capture(argv, dir, env);
}

static void test_cli(void **state) {
  (void)state;
  NEED_RVV();
  if (!exe[0]) skip();
  char dir[] = "/tmp/rt-rvv-cli-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const char *meas[] = {"measure", "--target", "rvv:128", "--kernel", "reduction", "--set", "N=77",
                        "--config", "default", "--json", NULL};
  const char *targets[] = {"targets", "--json", NULL};
  tk_result r = rooftune(dir, targets, NULL);
  const char *row = strstr(r.out, "{\"name\":\"rvv:128\""), *next = row ? strstr(row + 1, "{\"name\"") : NULL,
             *timed = row ? strstr(row, "\"timed\":false,\"untimed_why\":\"its runs are emulated") : NULL;
  if (r.rc || !timed || (next && timed > next)) fail_msg("%s%s", r.out, r.err);
  tk_result_free(&r);
  r = rooftune(dir, meas, NULL);
  if (r.rc || !strstr(r.out, "\"status\":\"ok\"") || !strstr(r.out, "\"origin\":\"emulated\"") ||
      !strstr(r.out, "\"time_s\":null"))
    fail_msg("%s%s", r.out, r.err);
  tk_result_free(&r);
  /* emulated results are refused, nothing stored */
  const char *tune[] = {"tune", "--target", "rvv:256", "--kernel", "reduction", "--set", "N=77",
                        "--strategy", "random", "--budget", "2", "--db", "t.db", NULL};
  r = rooftune(dir, tune, NULL);
  if (r.rc == 0 || !strstr(r.err, "rvv:256 does not time schedules: its runs are emulated")) fail_msg("%s%s", r.out, r.err);
  tk_result_free(&r);
  const char *count[] = {"sqlite3", "t.db", "SELECT count(*) FROM trials", NULL};
  char out[4096];
  tk_io io = {.cwd = dir, .out = out, .cap = sizeof out};
  assert_int_equal(tk_run(count, &io), 0);
  assert_string_equal(out, "0\n");
  /* through the stand-in: measured trials of a target that names it */
  r = rooftune(dir, tune, "qemu256");
  if (r.rc) fail_msg("%s%s", r.out, r.err);
  tk_result_free(&r);
  const char *origins[] = {"sqlite3", "t.db",
                           "SELECT count(*), min(t.origin), max(t.origin), min(t.time > 0), "
                           "instr(g.description, '--rvv-standin qemu256') > 0 FROM trials t "
                           "JOIN campaigns c ON c.id = t.campaign_id JOIN targets g ON "
                           "g.id = c.target_id WHERE t.status = 'ok'", NULL};
  assert_int_equal(tk_run(origins, &io), 0);
  assert_string_equal(out, "2|measured|measured|1|1\n");
  /* --strategy model without a runner: predictions, each verified first */
  const char *model[] = {"tune", "--target", "rvv:256", "--kernel", "gemm", "--set",
                         "M=12,N=21,K=17", "--strategy", "model", "--budget", "3", "--db", "p.db",
                         "--json", NULL};
  r = rooftune(dir, model, NULL);
  if (r.rc || !strstr(r.out, "\"rejected\":0") || !strstr(r.out, "\"verified\":true"))
    fail_msg("%s%s", r.out, r.err);
  tk_result_free(&r);
  const char *preds[] = {"sqlite3", "p.db",
                         "SELECT count(*), min(origin), max(origin), min(time > 0) FROM trials", NULL};
  assert_int_equal(tk_run(preds, &io), 0);
  assert_string_equal(out, "3|predicted|predicted|1\n");
  assert_int_equal(tk_rm_rf(dir), 0);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--rvv-standin")) return standin(argc, argv);
  if (find_rooftune(argv[0], exe, sizeof exe)) exe[0] = 0;
  if (!realpath("/proc/self/exe", self)) self[0] = 0;
  snprintf(cache_dir, sizeof cache_dir, "/tmp/rt-rvv-test-%d", (int)getpid());
  unsetenv(RV_RUNNER_ENV);
  have_rvv = rv_available(&why_not);
  if (!have_rvv) printf("test_rvv: %s: the toolchain tests are skipped\n", why_not);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_target_names),
    cmocka_unit_test(test_parse_answer),
    cmocka_unit_test(test_describe),
    cmocka_unit_test(test_gemm_two_vlens),
    cmocka_unit_test(test_reduction_two_vlens),
    cmocka_unit_test(test_wrong_schedule),
    cmocka_unit_test(test_faults),
    cmocka_unit_test(test_campaign_refuses_emulated),
    cmocka_unit_test(test_runner),
    cmocka_unit_test(test_k1_ceilings),
    cmocka_unit_test(test_model_walk),
    cmocka_unit_test(test_model_proposals_verify),
    cmocka_unit_test(test_cli),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  tk_rm_rf(cache_dir);
  return rc;
}
