/*
** test_load.c -- the load guard (measure/ms_load.c) and its policy in
** campaigns (tuner/tu_campaign.c): /proc/stat's text parsed against
** numbers written by hand (the aggregate line wherever it is, kernels
** that stop at four columns, text without it refused); the signs between
** two samples computed here by hand (others' CPUs, steal); each sign's
** verdict and its message; the GPU's signs from injected NVML-like
** readings (a clock drop against the highest seen, idle clocks ignored,
** throttle bits, thermal violation time, a power cap alone no sign, a GPU
** that cannot be read no sign); the reference loop's sign from an
** injected slowdown; the wait policy against injected busy/quiet
** sequences (how many times each schedule is measured, which trials are
** stored loaded, the seconds waited, one wait per busy spell) against
** the flag policy; the model strategy's refit never given a loaded
** result; and on this machine, a child spinning for 1.2 s seen as other
** work, and a real host campaign with spinners reporting looks at every
** measurement, and --no-load-guard (an injected measurement too) none.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "measure/ms.h"
#include "search_spaces/sx.h"
#include "targets/tg.h"
#include "tuner/tu.h"
#include <sqlite3.h>

static void parses_stat(void **state) {
  (void)state;
  const char *text = "intr 1 2 3\n"
                     "cpu  100 20 30 4000 50 6 7 8 0 0\n"
                     "cpu0 50 10 15 2000 25 3 3 4 0 0\n"
                     "ctxt 99\nprocs_running 3\nprocs_blocked 0\n";
  ms_jiffies j;
  assert_int_equal(ms_load_parse_stat(text, &j), 0);
  assert_true(j.busy == 100 + 20 + 30 + 6 + 7);   /* user nice system irq softirq */
  assert_true(j.idle == 4000 + 50);               /* idle iowait */
  assert_true(j.steal == 8);
  assert_int_equal(j.running, 3);
  assert_int_equal(ms_load_parse_stat("cpu  1 2 3 4\n", &j), 0);   /* a 2.4 kernel's four */
  assert_true(j.busy == 6 && j.idle == 4 && j.steal == 0);
  assert_int_equal(j.running, -1);
  assert_int_equal(ms_load_parse_stat("cpu0 1 2 3 4\n", &j), -1);   /* no aggregate line */
  assert_int_equal(ms_load_parse_stat("cpu  1 2\n", &j), -1);
  assert_int_equal(ms_load_parse_stat("", &j), -1);
}

static void signs_between_samples(void **state) {
  (void)state;
  ms_load_sample_t a = {.t = 10, .own = 5, .j = {.busy = 1000, .idle = 5000, .steal = 0}};
  ms_load_sample_t b = {.t = 12, .own = 6, .j = {.busy = 1300, .idle = 5100, .steal = 20, .running = 4}};
  ms_load_view v;
  ms_load_between(&a, &b, 100, &v);
  /* 3 CPU-seconds busy, 1 of them ours, over 2 s: 1 CPU of others */
  assert_true(fabs(v.others - 1.0) < 1e-12);
  assert_true(fabs(v.steal - 20.0 / 400.0) < 1e-12);   /* 0.2 s of 4 CPU-seconds */
  assert_true(fabs(v.wall - 2) < 1e-12);
  assert_int_equal(v.running, 4);
  b.own = 9;   /* more of ours than the CPUs' busy time (children reaped late): none */
  ms_load_between(&a, &b, 100, &v);
  assert_true(v.others == 0);
  b.t = a.t;   /* no interval: no signs */
  ms_load_between(&a, &b, 100, &v);
  assert_true(v.others == 0 && v.steal == 0);
}

static void verdicts(void **state) {
  (void)state;
  ms_load_guard g = {.max_others = MS_LOAD_OTHERS, .max_steal = MS_LOAD_STEAL, .max_ref = MS_LOAD_REF};
  ms_load_view v = {.wall = 2, .others = 0.49, .steal = 0.04, .ref = 1.24};
  ms_load_verdict(&g, &v);
  assert_int_equal(v.busy, 0);
  assert_int_equal(v.signs, 0);
  assert_string_equal(v.why, "");
  v.others = 0.6;
  ms_load_verdict(&g, &v);
  assert_int_equal(v.busy, 1);
  assert_int_equal(v.signs, MS_SIGN_OTHERS);
  assert_string_equal(v.why, "other work used 0.60 CPUs (over 0.50) for 2.0 s");
  v.others = 0, v.steal = 0.1;
  ms_load_verdict(&g, &v);
  assert_string_equal(v.why, "the hypervisor stole 10.0% of the CPU time (over 5.0%)");
  v.steal = 0, v.ref = 1.5;
  ms_load_verdict(&g, &v);
  assert_int_equal(v.signs, MS_SIGN_REF);
  assert_string_equal(v.why, "the reference loop ran 1.50x its start time (over 1.25x)");
  v.others = 0.7;   /* two signs: both counted, the first one said */
  ms_load_verdict(&g, &v);
  assert_int_equal(v.signs, MS_SIGN_OTHERS | MS_SIGN_REF);
  assert_non_null(strstr(v.why, "other work used 0.70 CPUs"));
  assert_string_equal(ms_sign_names[4], "ref");   /* bit 16 */
}

/* One integer from the database (-1 when the query fails). */
static long long q_int(const char *path, const char *sql) {
  sqlite3 *h;
  sqlite3_stmt *st;
  long long v = -1;
  if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return v;
}

/* ---- injected readings (ms.h invariant 1) ---- */

/* A scripted machine: each sample after the first is 1 s later; the
** interval before it busy (two CPUs of other work) or quiet by script[i]
** ('B' or 'Q'; past its end, its last letter). The reference loop's time
** and the naps come from here too. */
typedef struct script {
  const char *s;
  int i;                 /* samples taken after the start */
  double t, hz;
  unsigned long long busy, idle;
  double ref[16];        /* the reference's times in order (past nref: the last) */
  int nref, iref;
  double napped;
  int naps;
} script;

static int sc_sample(void *ctx, ms_load_sample_t *s, rt_err *err) {
  script *x = ctx;
  (void)err;
  if (x->t > 0) {   /* not the first */
    size_t n = strlen(x->s);
    char c = x->s[(size_t)x->i < n ? (size_t)x->i : n - 1];
    x->i++;
    if (c == 'B') x->busy += (unsigned long long)(2 * x->hz);
    else x->idle += (unsigned long long)(2 * x->hz);
  }
  x->t += 1;
  *s = (ms_load_sample_t){.t = x->t, .own = 0, .j = {.busy = x->busy, .idle = x->idle}};
  return 0;
}

static double sc_ref(void *ctx) {
  script *x = ctx;
  if (!x->nref) return 1e-3;
  double t = x->ref[x->iref < x->nref ? x->iref : x->nref - 1];
  x->iref++;
  return t;
}

static void sc_nap(void *ctx, double s) {
  script *x = ctx;
  x->napped += s;
  x->naps++;
}

static ms_load_hooks sc_hooks(script *x) {
  x->hz = (double)sysconf(_SC_CLK_TCK);
  if (x->hz <= 0) x->hz = 100;
  return (ms_load_hooks){.sample = sc_sample, .ref = sc_ref, .nap = sc_nap, .ctx = x};
}

/* A machine busy throughout (two CPUs of other work) looked at every 0.1 s,
** as after short measurements: every look from the second on is busy,
** judged over the last half second (shorter intervals were once left to
** the next look, so only every fifth short measurement was marked and
** the others were stored as quiet). */
typedef struct steady { double t, hz; unsigned long long busy; } steady;
static int st_sample(void *ctx, ms_load_sample_t *s, rt_err *err) {
  steady *x = ctx;
  (void)err;
  x->t += 0.1;
  x->busy += (unsigned long long)(2 * 0.1 * x->hz + 0.5);
  *s = (ms_load_sample_t){.t = x->t, .own = 0, .j = {.busy = x->busy, .idle = 0}};
  return 0;
}
static double st_ref(void *ctx) {
  (void)ctx;
  return 1e-3;
}
static void short_looks(void **state) {
  (void)state;
  steady x = {0, 100, 0};
  ms_load_hooks h = {.sample = st_sample, .ref = st_ref, .ctx = &x};
  ms_load_guard g;
  rt_err err = {0};
  assert_int_equal(ms_load_start(&g, &h, &err), 0);
  ms_load_view v;
  int busy = 0;
  assert_int_equal(ms_load_check(&g, &v), 0);   /* 0.1 s: too short to judge */
  for (int k = 0; k < 19; k++) {
    busy += ms_load_check(&g, &v);
    assert_true(fabs(v.others - 2) < 1e-9);
  }
  assert_int_equal(busy, 19);
  ms_load_end(&g);
}

/* A machine quiet until t = 10 s, then 1.5 CPUs of other work; a clock
** that naps move. The wait ends quiet at t = 10 on a window back to 9.5;
** a 0.1 s measurement made again runs into the load. Its look must not
** reach back into the quiet wait (0.15 CPUs over [9.5, 10.1]: quiet, the
** old window) but forward: a nap to 10.5, 1.5 CPUs over [10, 10.5]. */
typedef struct resume { double t, hz; } resume;
static int rs_sample(void *ctx, ms_load_sample_t *s, rt_err *err) {
  resume *x = ctx;
  (void)err;
  double others = x->t > 10 ? 1.5 * (x->t - 10) : 0;   /* CPU seconds so far */
  *s = (ms_load_sample_t){.t = x->t, .own = 0,
                          .j = {.busy = (unsigned long long)(others * x->hz + 0.5),
                                .idle = (unsigned long long)((2 * x->t - others) * x->hz + 0.5)}};
  return 0;
}
static void rs_nap(void *ctx, double s) { ((resume *)ctx)->t += s; }
static void forward_after_wait(void **state) {
  (void)state;
  resume x = {9.0, 100};
  ms_load_hooks h = {.sample = rs_sample, .ref = st_ref, .nap = rs_nap, .ctx = &x};
  ms_load_guard g;
  rt_err err = {0};
  assert_int_equal(ms_load_start(&g, &h, &err), 0);
  ms_load_view v;
  x.t = 9.5;
  assert_int_equal(ms_load_check(&g, &v), 0);
  double w = ms_load_wait(&g, 30, NULL, &v);   /* one nap of 0.5 s: quiet at 10 */
  assert_true(fabs(w - 0.5) < 1e-12 && fabs(x.t - 10) < 1e-9 && !v.busy);
  x.t += 0.1;                                  /* the measurement made again */
  assert_int_equal(ms_load_check(&g, &v), 1);
  assert_true(fabs(x.t - 10.5) < 1e-9);        /* napped forward 0.4 s */
  assert_true(fabs(v.wall - 0.5) < 1e-9 && fabs(v.others - 1.5) < 0.05);
  /* the next look is an ordinary one: no nap, back over 0.5 s */
  x.t += 0.1;
  assert_int_equal(ms_load_check(&g, &v), 1);
  assert_true(fabs(x.t - 10.6) < 1e-9);
  ms_load_end(&g);
  /* a measurement of 0.5 s or more after a quiet wait needs no nap: its
  ** window is [10, 10.7] */
  x.t = 9.0;
  assert_int_equal(ms_load_start(&g, &h, &err), 0);
  x.t = 9.5;
  assert_int_equal(ms_load_check(&g, &v), 0);
  ms_load_wait(&g, 30, NULL, &v);
  x.t += 0.7;
  assert_int_equal(ms_load_check(&g, &v), 1);
  assert_true(fabs(x.t - 10.7) < 1e-9 && fabs(v.wall - 0.7) < 1e-9);
  ms_load_end(&g);
}

/* A job on 2 CPUs for 8 s, paused for 8 s, over and over (the load
** experiment's competing job); a clock that naps move. After a busy
** look at 0.3 s the wait must end in the job's first pause, at the first
** look whose half second lies in it (looks 0.5 s apart: by 9 s; here
** 8.8), and a 0.3 s measurement made again must then look quiet. Doubling naps (0.5, 1, 2, 4, 8 s) ended
** the wait at 15.8 s on the 8 s nap that spanned the pause, just as the
** job came back: the measurement made again was busy, every time. */
static double cy_others(double t) {   /* the job's CPU seconds until t */
  double full = floor(t / 16), in = t - 16 * full;
  return 2 * (8 * full + fmin(in, 8));
}
static int cy_sample(void *ctx, ms_load_sample_t *s, rt_err *err) {
  resume *x = ctx;
  (void)err;
  double o = cy_others(x->t);
  *s = (ms_load_sample_t){.t = x->t, .own = 0,
                          .j = {.busy = (unsigned long long)(o * x->hz + 0.5),
                                .idle = (unsigned long long)((2 * x->t - o) * x->hz + 0.5)}};
  return 0;
}
static void wait_in_pause(void **state) {
  (void)state;
  resume x = {0.0, 100};
  ms_load_hooks h = {.sample = cy_sample, .ref = st_ref, .nap = rs_nap, .ctx = &x};
  ms_load_guard g;
  rt_err err = {0};
  assert_int_equal(ms_load_start(&g, &h, &err), 0);
  ms_load_view v;
  x.t = 0.3;
  assert_int_equal(ms_load_check(&g, &v), 1);   /* busy since 0: 2 CPUs */
  ms_load_wait(&g, 30, NULL, &v);
  assert_int_equal(v.busy, 0);
  if (!(x.t >= 8 && x.t <= 9 + 1e-9)) fail_msg("the wait ended at %.2f s, not in [8, 9]", x.t);
  x.t += 0.3;                                   /* the measurement made again */
  assert_int_equal(ms_load_check(&g, &v), 0);
  ms_load_end(&g);
}

/* The reference loop's sign: its start time the fastest of three medians;
** an injected 1.5x slowdown is busy, 1.2x is not. */
static void reference_sign(void **state) {
  (void)state;
  script x = {.s = "Q", .ref = {2e-3, 1e-3, 1.1e-3, 1.2e-3, 1.5e-3, 0.9e-3}, .nref = 6};
  ms_load_hooks h = sc_hooks(&x);
  ms_load_guard g;
  rt_err err = {0};
  assert_int_equal(ms_load_start(&g, &h, &err), 0);
  assert_true(g.ref_base == 1e-3);   /* the fastest of the first three */
  ms_load_view v;
  assert_int_equal(ms_load_check(&g, &v), 0);   /* 1.2x */
  assert_true(fabs(v.ref - 1.2) < 1e-12);
  assert_int_equal(ms_load_check(&g, &v), 1);   /* 1.5x */
  assert_int_equal(v.signs, MS_SIGN_REF);
  assert_string_equal(v.why, "the reference loop ran 1.50x its start time (over 1.25x)");
  assert_int_equal(ms_load_check(&g, &v), 0);   /* faster than at the start: quiet */
  ms_load_end(&g);
  /* the real loop: a positive time, and its median of a few is stable
  ** enough that two in a row differ by less than 2x on any machine that
  ** runs this test at all (no timing assertion beyond that) */
  double a = ms_load_ref(), b = ms_load_ref();
  assert_true(a > 0 && b > 0);
}

/* The GPU's signs from injected readings (no NVML here). */
static void gpu_decisions(void **state) {
  (void)state;
  ms_load_guard g = {.max_others = MS_LOAD_OTHERS, .max_steal = MS_LOAD_STEAL, .max_sm_drop = MS_LOAD_SM_DROP};
  unsigned top = 0;
  ms_gpu_reading a = {.sm_mhz = 1980, .thermal_ns = 1000, .power_ns = 5000};
  ms_gpu_reading b = a;
  ms_load_view v = {0};
  ms_load_gpu_between(&a, &b, &top, &v);
  ms_load_verdict(&g, &v);
  assert_true(top == 1980 && v.gpu && v.sm_ratio == 1.0 && v.thermal_s == 0 && v.power_s == 0);
  assert_int_equal(v.busy, 0);
  /* the SM clock at 81% of the highest seen: busy */
  b.sm_mhz = 1600;
  memset(&v, 0, sizeof v);
  ms_load_gpu_between(&a, &b, &top, &v);
  ms_load_verdict(&g, &v);
  assert_int_equal(v.signs, MS_SIGN_GPU_CLOCK);
  assert_string_equal(v.why, "the GPU's SM clock fell to 1600 MHz, 81% of the 1980 MHz seen (under 85%)");
  /* idle clocks say nothing (the GPU idles between measurements) */
  b.sm_mhz = 345, b.reasons = MS_GPU_IDLE;
  memset(&v, 0, sizeof v);
  ms_load_gpu_between(&a, &b, &top, &v);
  ms_load_verdict(&g, &v);
  assert_true(isnan(v.sm_ratio));
  assert_int_equal(v.busy, 0);
  assert_true(top == 1980);
  /* a power cap alone at a clock near the top: no sign (a heavy kernel's
  ** normal state); 0.96 of the top */
  b.sm_mhz = 1900, b.reasons = MS_GPU_SW_POWER_CAP, b.power_ns = a.power_ns + 40000000;
  memset(&v, 0, sizeof v);
  ms_load_gpu_between(&a, &b, &top, &v);
  ms_load_verdict(&g, &v);
  assert_int_equal(v.busy, 0);
  assert_true(fabs(v.power_s - 0.04) < 1e-12);
  /* thermal and hardware slowdown bits */
  b.reasons = MS_GPU_HW_SLOWDOWN | MS_GPU_HW_THERMAL;
  memset(&v, 0, sizeof v);
  ms_load_gpu_between(&a, &b, &top, &v);
  ms_load_verdict(&g, &v);
  assert_int_equal(v.signs, MS_SIGN_GPU_THROTTLE);
  assert_string_equal(v.why, "the GPU throttled its clocks (hardware slowdown, hardware thermal)");
  /* thermal violation time during the interval, no bit at the look */
  b.reasons = 0, b.thermal_ns = a.thermal_ns + 5000000;
  memset(&v, 0, sizeof v);
  ms_load_gpu_between(&a, &b, &top, &v);
  ms_load_verdict(&g, &v);
  assert_int_equal(v.signs, MS_SIGN_GPU_THROTTLE);
  assert_string_equal(v.why, "the GPU was held back for heat 5.0 ms of the interval");
  /* violation times the board does not give: no sign from them */
  b.thermal_ns = MS_GPU_UNKNOWN;
  memset(&v, 0, sizeof v);
  ms_load_gpu_between(&a, &b, &top, &v);
  ms_load_verdict(&g, &v);
  assert_true(isnan(v.thermal_s));
  assert_int_equal(v.busy, 0);
}

/* The GPU through the guard: a reading per look; one that fails stops
** the GPU's looks (said in gpu_why) and the CPU signs go on. */
typedef struct gpu_seq {
  ms_gpu_reading r[8];
  int n, i, fail_at;
} gpu_seq;

static int gs_read(void *ctx, ms_gpu_reading *r, rt_err *err) {
  gpu_seq *q = ctx;
  if (q->i == q->fail_at) {
    rt_err_set(err, "no NVML: injected");
    return -1;
  }
  *r = q->r[q->i < q->n ? q->i : q->n - 1];
  q->i++;
  return 0;
}

static void gpu_through_guard(void **state) {
  (void)state;
  script x = {.s = "Q"};
  ms_load_hooks h = sc_hooks(&x);
  gpu_seq q = {.r = {{.sm_mhz = 210, .reasons = MS_GPU_IDLE}, {.sm_mhz = 1980}, {.sm_mhz = 1500},
                     {.sm_mhz = 1970}},
               .n = 4, .fail_at = 4};
  h.gpu = gs_read, h.gpu_ctx = &q;
  ms_load_guard g;
  rt_err err = {0};
  assert_int_equal(ms_load_start(&g, &h, &err), 0);
  assert_int_equal(g.gpu_on, 1);
  ms_load_view v;
  assert_int_equal(ms_load_check(&g, &v), 0);   /* 1980: the top */
  assert_int_equal(ms_load_check(&g, &v), 1);   /* 1500 of 1980 */
  assert_int_equal(v.signs, MS_SIGN_GPU_CLOCK);
  assert_int_equal(ms_load_check(&g, &v), 0);   /* 1970 */
  assert_int_equal(ms_load_check(&g, &v), 0);   /* the read fails: no sign, said */
  assert_int_equal(g.gpu_on, 0);
  assert_string_equal(g.gpu_why, "no NVML: injected");
  assert_int_equal(v.gpu, 0);
  x.s = "QQQQB";   /* the CPU signs still judge (the 5th look's interval) */
  assert_int_equal(ms_load_check(&g, &v), 1);
  assert_int_equal(v.signs, MS_SIGN_OTHERS);
  ms_load_end(&g);
  /* a GPU that cannot be read at the start: the guard starts without it */
  q.i = 0, q.fail_at = 0;
  assert_int_equal(ms_load_start(&g, &h, &err), 0);
  assert_true(g.on && !g.gpu_on && !strcmp(g.gpu_why, "no NVML: injected"));
  ms_load_end(&g);
}

/* NVML on this machine (the CUDA row's reader): here, without a GPU, it
** says why; on a GPU machine (the lead's H200) a reading with an SM clock. */
static void nvml_here(void **state) {
  (void)state;
  tg_target t;
  rt_err err = {0};
  if (tg_resolve("cuda:0", &t, &err)) skip();
  assert_non_null(t.be->gpu_reading);
  ms_gpu_reading r;
  if (t.be->gpu_reading(&t, &r, &err)) {
    printf("no GPU reading here: %s\n", err.msg);
    assert_true(!strncmp(err.msg, "no NVML", 7) || !strncmp(err.msg, "NVML", 4));
  } else {
    printf("cuda:0: SM %u MHz, reasons 0x%llx\n", r.sm_mhz, r.reasons);
    assert_true(r.sm_mhz > 0);
  }
}

/* ms_load_wait: naps of 0.5 s, the last cut to what is left; stops at
** the first quiet look. */
static void wait_naps(void **state) {
  (void)state;
  script x = {.s = "BBQ"};
  ms_load_hooks h = sc_hooks(&x);
  ms_load_guard g;
  rt_err err = {0};
  assert_int_equal(ms_load_start(&g, &h, &err), 0);
  ms_load_view v;
  double w = ms_load_wait(&g, 30, NULL, &v);   /* looks B, B, Q, 0.5 s apart */
  assert_true(fabs(w - 1.5) < 1e-12 && fabs(x.napped - 1.5) < 1e-9);
  assert_int_equal(v.busy, 0);
  x.s = "B", x.i = 0, x.napped = 0;
  w = ms_load_wait(&g, 2.2, NULL, &v);   /* 4 x 0.5 + 0.2: out of time, busy */
  assert_true(fabs(w - 2.2) < 1e-12 && fabs(x.napped - 2.2) < 1e-9);
  assert_int_equal(v.busy, 1);
  volatile sig_atomic_t stop = 1;
  x.napped = 0;
  assert_true(ms_load_wait(&g, 10, &stop, &v) == 0 && x.napped == 0 && v.busy);
  ms_load_end(&g);
}

/* ---- the policy in a campaign (injected measurement and readings) ---- */

#define PMAX 4096
typedef struct pmeas {
  sp_space *sp;
  int n[PMAX];       /* measurements per rank */
  int total;
} pmeas;

static int p_measure(void *ctx, const int *cfg, const char *src, const char *ldflags,
                     const ms_opts *o, ms_result *r) {
  pmeas *m = ctx;
  (void)src, (void)ldflags, (void)o;
  memset(r, 0, sizeof *r);
  r->status = MS_OK;
  r->t.n = 10;
  double ms = 1;
  if (cfg) {
    rt_count rank;
    assert_int_equal(sp_rank(m->sp, cfg, &rank), 0);
    assert_true(rank < PMAX);
    m->n[rank]++;
    m->total++;
    ms = 1 + (double)(rank % 17);
  }
  r->t.median = r->t.mean = r->t.min = ms * 1e-3;
  r->t.ci_lo = 0.99 * ms * 1e-3, r->t.ci_hi = 1.01 * ms * 1e-3;
  return 0;
}

typedef struct pcase {
  const char *name, *script, *budget;
  int policy;
  double wait;
  int measured;        /* schedule measurements expected (the trials') */
  int loaded;          /* trials stored loaded */
  int retries;
  double waited;
} pcase;

static void policy_sequences(void **state) {
  (void)state;
  /* BUDGET trials, no end re-measurement; the baseline's look comes last */
  static const pcase cases[] = {
    /* each trial's look busy, the wait's first look quiet, the
    ** re-measurement quiet: each measured twice, none loaded */
    {"busy then quiet", "BQQBQQBQQQ", "3", TU_LOAD_WAIT, 30, 6, 0, 3, 1.5},
    /* always busy, 6 trials: a wait of 1 s runs out busy at trials 1, 3
    ** and 6 (then 1, 2 busy measurements kept without waiting; the
    ** baseline the 4 after the third), all kept loaded */
    {"always busy", "B", "6", TU_LOAD_WAIT, 1, 6, 6, 0, 3.0},
    /* busy after every retry: 1 + MS_LOAD_RETRIES measurements, kept loaded */
    {"busy after retries", "BQBQBQ", "3", TU_LOAD_WAIT, 30, 3 + MS_LOAD_RETRIES, 1,
     MS_LOAD_RETRIES, 0.5 * MS_LOAD_RETRIES},
    /* a wait runs out busy (trial 1, 1 s), the next busy trial is kept
    ** without waiting, the one after waits again and finds quiet (0.5 s) */
    {"skip then wait", "BBBBBQQ", "3", TU_LOAD_WAIT, 1, 4, 2, 1, 1.5},
    /* the flag policy (the old behaviour): never measured again */
    {"flag", "B", "3", TU_LOAD_FLAG, 30, 3, 3, 0, 0},
    {"quiet", "Q", "3", TU_LOAD_WAIT, 30, 3, 0, 0, 0},
  };
  char dbp[64];
  snprintf(dbp, sizeof dbp, "/tmp/rt-loadp-%d.db", (int)getpid());
  for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
    const pcase *pc = &cases[ci];
    unlink(dbp);
    script x = {.s = pc->script};
    ms_load_hooks h = sc_hooks(&x);
    static pmeas m;
    memset(&m, 0, sizeof m);
    volatile sig_atomic_t stop = 0;
    tu_campaign_opts o = {.db_path = dbp, .target = "host", .kernel = "reduction",
                          .set = "N=1000000", .strategy = "random", .budget = pc->budget, .seed = 1,
                          .stop = &stop, .no_pin = 1, .no_recheck = 1, .measure = p_measure,
                          .measure_ctx = &m, .load_policy = pc->policy, .load_wait = pc->wait,
                          .load_hooks = &h};
    ms_opts_default(&o.ms);
    rt_err err = {0};
    m.sp = NULL;
    /* the space, for ranks: the campaign's own, loaded the same way */
    sx_arena *a = sx_arena_new();
    sp_binding *b = NULL;
    int nb = sp_parse_bindings("N=1000000", a, &b, &err);
    tg_target t;
    char path[512];
    assert_int_equal(tg_resolve("host", &t, &err), 0);
    const kn_kernel *k = tg_kernel(&t, "reduction");
    m.sp = nb < 0 ? NULL : sp_load_file(rt_project_path(k->space, path, sizeof path), b, nb, &err);
    free(b);
    sx_arena_free(a);
    assert_non_null(m.sp);
    tu_report rep;
    if (tu_campaign(&o, &rep, &err)) fail_msg("%s: %s", pc->name, err.msg);
    if (m.total != pc->measured || rep.load_retries != pc->retries)
      fail_msg("%s: %d measurements, %lld retries (expected %d, %d)", pc->name, m.total,
               (long long)rep.load_retries, pc->measured, pc->retries);
    long long loaded = q_int(dbp, "SELECT count(*) FROM trials WHERE loaded");
    if (loaded != pc->loaded) fail_msg("%s: %lld trials loaded, expected %d", pc->name, loaded, pc->loaded);
    assert_int_equal(q_int(dbp, "SELECT count(*) FROM trials"), atoi(pc->budget));
    if (fabs(rep.load_wait_s - pc->waited) > 1e-9 || fabs(x.napped - pc->waited) > 1e-6)
      fail_msg("%s: waited %.3f s (napped %.3f), expected %.3f", pc->name, rep.load_wait_s,
               x.napped, pc->waited);
    assert_int_equal(rep.load_on, 1);
    assert_int_equal(rep.load_policy, pc->policy);
    json_t *j = json_loads(rep.json, 0, NULL);
    json_t *l = json_object_get(j, "load");
    assert_string_equal(json_string_value(json_object_get(l, "policy")),
                        pc->policy == TU_LOAD_WAIT ? "wait" : "flag");
    assert_int_equal(json_integer_value(json_object_get(l, "retries")), pc->retries);
    assert_true(json_integer_value(json_object_get(json_object_get(l, "signs"), "others")) ==
                rep.load_busy);
    json_decref(j);
    tu_report_free(&rep);
    sp_free(m.sp);
  }
  char p[80];
  const char *sfx[] = {"", "-wal", "-shm"};
  for (int i = 0; i < 3; i++) snprintf(p, sizeof p, "%s%s", dbp, sfx[i]), unlink(p);
}

/* ---- the model strategy learns nothing from a loaded result ---- */

static const char refit_space[] =
  "{\"ConfigurationSpace\": {\"TuningParameters\": ["
  "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(16))\"},"
  "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"list(range(16))\"}]}}";

typedef struct rmodel {
  int refits, seen_loaded, last_n;
} rmodel;

/* loaded: every configuration with a odd (the objective below says so) */
static double r_time(const int *c) { return 1 + c[0] + 0.5 * c[1]; }

static int r_predict(void *m, const int *cfgs, int n, double *t) {
  (void)m;
  for (int i = 0; i < n; i++) t[i] = r_time(cfgs + 2 * i);
  return 0;
}

static int r_refit(void *m, const int *cfgs, const double *t, int n) {
  rmodel *s = m;
  s->refits++;
  s->last_n = n;
  for (int i = 0; i < n; i++) {
    if (cfgs[2 * i] % 2) s->seen_loaded++;
    assert_true(t[i] == r_time(cfgs + 2 * i));
  }
  return 0;
}

static int r_eval(void *ctx, const int *cfg, tu_obs *ob, rt_err *err) {
  (void)ctx, (void)err;
  *ob = (tu_obs){.ok = 1, .value = r_time(cfg), .cost = 1, .origin = TU_MEASURED,
                 .loaded = cfg[0] % 2};
  return 0;
}

static void refit_skips_loaded(void **state) {
  (void)state;
  rt_err err = {0};
  sp_space *sp = sp_load_string(refit_space, "refit", NULL, 0, &err);
  assert_non_null(sp);
  rmodel m = {0};
  tu_objective obj = {r_eval, NULL, NULL};
  tu_run_opts ro = {.strategy = &ts_model, .seed = 3, .max_evals = 96, .batch = 8,
                    .predict = r_predict, .refit = r_refit, .model = &m};
  tu_run *r = tu_run_strategy(sp, &obj, &ro, NULL, &err);
  assert_non_null(r);
  int64_t loaded = 0;
  for (int64_t i = 0; i < tu_run_n(r); i++) loaded += tu_run_obs(r, i)->loaded;
  assert_true(loaded > 0);   /* exploration met some: the filter was tested */
  assert_true(m.refits >= 1);
  assert_int_equal(m.seen_loaded, 0);
  assert_true(m.last_n <= tu_run_n(r) - loaded);
  tu_run_free(r);
  sp_free(sp);
}

/* A spinning child is other work: it is not reaped, so not ours yet. */
static void sees_a_spinner(void **state) {
  (void)state;
  ms_load_guard g;
  rt_err err = {0};
  if (ms_load_start(&g, NULL, &err)) {
    printf("skipped: %s\n", err.msg);
    skip();
  }
  assert_true(g.on);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    volatile unsigned long x = 0;
    double t0 = rt_now();
    while (rt_now() - t0 < 1.2) x++;
    _exit(0);
  }
  struct timespec ts = {1, 200000000};
  nanosleep(&ts, NULL);
  ms_load_view v;
  int busy = ms_load_check(&g, &v);
  int st;
  waitpid(pid, &st, 0);
  if (!busy) fail_msg("not busy: others %.2f CPUs over %.2f s", v.others, v.wall);
  assert_true(v.others >= 0.5);
  assert_non_null(strstr(v.why, "other work used"));
  ms_load_end(&g);
  assert_int_equal(g.on, 0);
}

static pid_t spin(double seconds) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    volatile unsigned long x = 0;
    double t0 = rt_now();
    while (rt_now() - t0 < seconds) x++;
    _exit(0);
  }
  return pid;
}

static void campaign_reports_load(void **state) {
  (void)state;
  char dbp[64];
  snprintf(dbp, sizeof dbp, "/tmp/rt-load-%d.db", (int)getpid());
  volatile sig_atomic_t stop = 0;
  for (int off = 0; off < 2; off++) {
    tu_campaign_opts o = {.db_path = dbp, .target = "host", .kernel = "reduction",
                          .set = "N=1000000", .strategy = "random", .budget = "4", .seed = 1,
                          .stop = &stop, .no_pin = 1, .no_load_guard = off,
                          .load_policy = TU_LOAD_FLAG};   /* the spinners outlast any wait */
    ms_opts_default(&o.ms);
    o.ms.time_cap = 0.2;
    /* two spinners (on 2 cores one, sharing with the campaign, got under
    ** 0.5 CPU at times); the second campaign: none, and no guard */
    pid_t pid = off ? 0 : spin(30), pid2 = off ? 0 : spin(30);
    tu_report rep;
    rt_err err = {0};
    int rc = tu_campaign(&o, &rep, &err);
    if (pid > 0) kill(pid, SIGKILL), waitpid(pid, NULL, 0);
    if (pid2 > 0) kill(pid2, SIGKILL), waitpid(pid2, NULL, 0);
    if (rc) fail_msg("%s", err.msg);
    if (off) {
      /* the same proposals (same seed): the first campaign's trials are
      ** reused but those measured under load (and timeouts) */
      long long quiet = q_int(dbp, "SELECT count(*) FROM trials WHERE campaign_id = 1 AND "
                                   "loaded = 0 AND status != 'timeout'");
      assert_true(quiet >= 0);
      assert_int_equal(rep.reused, quiet);
      assert_int_equal(rep.measured, 4 - quiet);
      assert_int_equal(q_int(dbp, "SELECT count(*) FROM trials WHERE campaign_id = 2 AND loaded"), 0);
      assert_int_equal(rep.load_on, 0);
      assert_true(rep.load_looks == 0 && rep.load_busy == 0);
      json_t *j = json_loads(rep.json, 0, NULL);
      assert_true(json_is_null(json_object_get(j, "load")));
      json_decref(j);
    } else {
      /* every measurement looked at: 4 trials, the re-measurements, the baseline */
      assert_int_equal(rep.load_on, 1);
      assert_true(rep.load_looks == 4 + rep.remeasured + (rep.baseline_repeats > 0));
      if (rep.load_busy < 1) fail_msg("a spinner ran and no look saw it (%lld looks)",
                                      (long long)rep.load_looks);
      assert_non_null(rep.load_why);
      json_t *j = json_loads(rep.json, 0, NULL);
      json_t *l = json_object_get(j, "load");
      assert_true(json_integer_value(json_object_get(l, "looks")) == rep.load_looks);
      assert_true(json_integer_value(json_object_get(l, "busy")) == rep.load_busy);
      json_decref(j);
      /* busy looks mark the trials they cover; at least one was busy */
      long long loaded = q_int(dbp, "SELECT count(*) FROM trials WHERE campaign_id = 1 AND loaded");
      assert_true(loaded >= 0 && loaded <= 4);
      if (loaded == 0 && rep.load_busy > rep.remeasured + (rep.baseline_repeats > 0))
        fail_msg("%lld busy looks and no trial marked loaded", (long long)rep.load_busy);
      /* the pin: never from re-measurements made under load */
      assert_non_null(rep.choice);
      if (strstr(rep.reason, "busy while the candidates were measured again")) {
        assert_string_equal(rep.choice, "default");
        assert_int_equal(q_int(dbp, "SELECT count(*) FROM remeasurements WHERE campaign_id = 1"), 0);
      }
    }
    tu_report_free(&rep);
  }
  char p[80];
  const char *sfx[] = {"", "-wal", "-shm"};
  for (int i = 0; i < 3; i++) snprintf(p, sizeof p, "%s%s", dbp, sfx[i]), unlink(p);
}

int main(void) {
  unsetenv("ROOFTUNE_LOAD_GUARD");   /* scripts/run-tests turns the guard off for the others */
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(parses_stat),
    cmocka_unit_test(signs_between_samples),
    cmocka_unit_test(verdicts),
    cmocka_unit_test(short_looks),
    cmocka_unit_test(forward_after_wait),
    cmocka_unit_test(wait_in_pause),
    cmocka_unit_test(reference_sign),
    cmocka_unit_test(gpu_decisions),
    cmocka_unit_test(gpu_through_guard),
    cmocka_unit_test(nvml_here),
    cmocka_unit_test(wait_naps),
    cmocka_unit_test(policy_sequences),
    cmocka_unit_test(refit_skips_loaded),
    cmocka_unit_test(sees_a_spinner),
    cmocka_unit_test(campaign_reports_load),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
