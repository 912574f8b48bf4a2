/*
** ms_load.c -- the load guard's eyes and its wait (ms.h "Load"): does
** something else use this machine while rooftune measures? The signs,
** each over the interval between two looks: others' CPU time and the
** hypervisor's steal (/proc/stat against getrusage), a reference loop
** re-timed against its start, and on a GPU target its clocks and
** throttling (the backend row's reading). The parse, the
** arithmetic and the verdicts are pure functions of their inputs (tests
** feed them text and numbers); every reading goes through the guard's
** hooks (ms.h invariant 1), so the looks and the wait run on injected
** sequences too.
**
** The reference loop replaces a memory probe (a 32 MiB streaming read,
** the fastest of three, against its fastest of five at the start) that
** flagged 38 of 40 quiet `make demo` measurements after gemm. Why: the
** probe's size was the L3's (32 MiB on the development VM), so its
** start time was partly cache-warm and any measurement in between left
** it cold; and its time swung 0.44-2.7x run to run with no measurement
** in between at all (this VM's memory bandwidth is shared with its
** neighbours). A loop of dependent multiply-adds in registers reads no
** memory: on the same VM, timed before and after gemm campaigns, its
** median stayed within 0.96-1.04x (experiments/load/README.md).
*/
#include "ms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

int ms_load_parse_stat(const char *text, ms_jiffies *j) {
  memset(j, 0, sizeof *j);
  const char *p = text;
  while (p && strncmp(p, "cpu ", 4)) {   /* the aggregate line, wherever it is */
    p = strchr(p, '\n');
    if (p) p++;
  }
  if (!p) return -1;
  unsigned long long v[8] = {0};
  int n = sscanf(p + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                 &v[4], &v[5], &v[6], &v[7]);
  if (n < 4) return -1;   /* user nice system idle at least (old kernels stop at 4) */
  /* user nice system idle iowait irq softirq steal (guest is inside user).
  ** Niced time counts as others' work on purpose: a niced job still takes
  ** cores a parallel schedule's threads wait for, and shares the caches
  ** and the memory bandwidth whatever its priority. */
  j->busy = v[0] + v[1] + v[2] + v[5] + v[6];
  j->idle = v[3] + v[4];
  j->steal = v[7];
  const char *r = strstr(text, "\nprocs_running ");
  j->running = r ? atoi(r + 15) : -1;
  return 0;
}

/* Our process's and its reaped children's CPU seconds. */
static double own_cpu(void) {
  struct rusage a, b;
  double s = 0;
  if (!getrusage(RUSAGE_SELF, &a))
    s += (double)a.ru_utime.tv_sec + (double)a.ru_stime.tv_sec +
         1e-6 * (double)(a.ru_utime.tv_usec + a.ru_stime.tv_usec);
  if (!getrusage(RUSAGE_CHILDREN, &b))
    s += (double)b.ru_utime.tv_sec + (double)b.ru_stime.tv_sec +
         1e-6 * (double)(b.ru_utime.tv_usec + b.ru_stime.tv_usec);
  return s;
}

int ms_load_sample(ms_load_sample_t *s, rt_err *err) {
  memset(s, 0, sizeof *s);
  FILE *f = fopen("/proc/stat", "re");
  if (!f) {
    rt_err_set(err, "load guard: /proc/stat: %s", strerror(errno));
    return -1;
  }
  char buf[8192];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  if (ms_load_parse_stat(buf, &s->j)) {
    rt_err_set(err, "load guard: /proc/stat has no aggregate cpu line");
    return -1;
  }
  s->t = rt_now();
  s->own = own_cpu();
  return 0;
}

void ms_load_between(const ms_load_sample_t *a, const ms_load_sample_t *b, double hz,
                     ms_load_view *v) {
  memset(v, 0, sizeof *v);
  double wall = b->t - a->t;
  v->wall = wall;
  if (wall <= 0 || hz <= 0) return;
  double busy = (double)(b->j.busy - a->j.busy) / hz, idle = (double)(b->j.idle - a->j.idle) / hz;
  double steal = (double)(b->j.steal - a->j.steal) / hz, own = b->own - a->own;
  double others = (busy - own) / wall;
  v->others = others > 0 ? others : 0;
  v->steal = busy + idle > 0 ? steal / (busy + idle) : 0;
  v->running = b->j.running;
}

const char *const ms_sign_names[MS_NSIGNS] = {"others", "steal", "gpu_throttle", "gpu_clock", "ref"};

/* ---- the GPU ---- */

void ms_load_gpu_between(const ms_gpu_reading *a, const ms_gpu_reading *b, unsigned *sm_top,
                         ms_load_view *v) {
  v->gpu = 1;
  v->g = *b;
  v->sm_ratio = NAN;
  if (b->sm_mhz && !(b->reasons & MS_GPU_IDLE)) {   /* idle clocks say nothing */
    if (b->sm_mhz > *sm_top) *sm_top = b->sm_mhz;
    v->sm_ratio = (double)b->sm_mhz / *sm_top;
  }
#define DELTA(f) (a->f == MS_GPU_UNKNOWN || b->f == MS_GPU_UNKNOWN || b->f < a->f ? NAN : 1e-9 * (double)(b->f - a->f))
  v->thermal_s = DELTA(thermal_ns);
  v->power_s = DELTA(power_ns);
#undef DELTA
}

/* The names of the throttling bits set in r, into buf. */
static const char *throttle_names(unsigned long long r, char *buf, size_t cap) {
  static const struct { unsigned long long bit; const char *name; } bits[] = {
    {MS_GPU_HW_SLOWDOWN, "hardware slowdown"}, {MS_GPU_SW_THERMAL, "software thermal"},
    {MS_GPU_HW_THERMAL, "hardware thermal"}, {MS_GPU_HW_POWER_BRAKE, "power brake"},
  };
  buf[0] = 0;
  for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
    if (r & bits[i].bit)
      snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", buf[0] ? ", " : "", bits[i].name);
  return buf;
}

/* ---- the verdict ---- */

void ms_load_verdict(const ms_load_guard *g, ms_load_view *v) {
  char names[96];
  v->signs = 0;
  if (v->others > g->max_others) v->signs |= MS_SIGN_OTHERS;
  if (v->steal > g->max_steal) v->signs |= MS_SIGN_STEAL;
  if (v->gpu && ((v->g.reasons & MS_GPU_THROTTLED) || v->thermal_s > 0)) v->signs |= MS_SIGN_GPU_THROTTLE;
  if (v->gpu && g->max_sm_drop > 0 && v->sm_ratio < g->max_sm_drop) v->signs |= MS_SIGN_GPU_CLOCK;
  if (g->max_ref > 0 && v->ref > g->max_ref) v->signs |= MS_SIGN_REF;
  v->busy = v->signs != 0;
  if (v->signs & MS_SIGN_OTHERS)
    snprintf(v->why, sizeof v->why, "other work used %.2f CPUs (over %.2f) for %.1f s",
             v->others, g->max_others, v->wall);
  else if (v->signs & MS_SIGN_STEAL)
    snprintf(v->why, sizeof v->why, "the hypervisor stole %.1f%% of the CPU time (over %.1f%%)",
             100 * v->steal, 100 * g->max_steal);
  else if ((v->signs & MS_SIGN_GPU_THROTTLE) && (v->g.reasons & MS_GPU_THROTTLED))
    snprintf(v->why, sizeof v->why, "the GPU throttled its clocks (%s)",
             throttle_names(v->g.reasons, names, sizeof names));
  else if (v->signs & MS_SIGN_GPU_THROTTLE)
    snprintf(v->why, sizeof v->why, "the GPU was held back for heat %.1f ms of the interval",
             1e3 * v->thermal_s);
  else if (v->signs & MS_SIGN_GPU_CLOCK)
    snprintf(v->why, sizeof v->why, "the GPU's SM clock fell to %u MHz, %.0f%% of the %.0f MHz "
             "seen (under %.0f%%)", v->g.sm_mhz, 100 * v->sm_ratio, v->g.sm_mhz / v->sm_ratio,
             100 * g->max_sm_drop);
  else if (v->signs & MS_SIGN_REF)
    snprintf(v->why, sizeof v->why, "the reference loop ran %.2fx its start time (over %.2fx)",
             v->ref, g->max_ref);
  else
    v->why[0] = 0;
}

/* ---- the reference loop ---- */

#define REF_ITERS 200000   /* ~0.3 ms on the development VM */

/* Two dependent multiply-add chains in registers: no memory traffic. */
static double ref_once(void) {
  volatile double seed = 1.0000001;
  double a = 1, b = 1, m = seed, n = 2 - seed;
  double t0 = rt_now();
  for (int i = 0; i < REF_ITERS; i++) a = a * m + 1e-9, b = b * n + 1e-9;
  double t = rt_now() - t0;
  seed = a + b;   /* the chains' results are used */
  return t;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

double ms_load_ref(void) {
  double t[MS_LOAD_REF_RUNS];
  ref_once();   /* the core and the loop's code warm */
  for (int k = 0; k < MS_LOAD_REF_RUNS; k++) t[k] = ref_once();
  qsort(t, MS_LOAD_REF_RUNS, sizeof *t, cmp_double);
  return t[MS_LOAD_REF_RUNS / 2];
}

/* ---- the guard ---- */

static int sample(ms_load_guard *g, ms_load_sample_t *s, rt_err *err) {
  return g->hooks.sample ? g->hooks.sample(g->hooks.ctx, s, err) : ms_load_sample(s, err);
}

static double ref_time(ms_load_guard *g) {
  return g->hooks.ref ? g->hooks.ref(g->hooks.ctx) : ms_load_ref();
}

/* Keep sample s as the newest of g's ring. */
static void push_sample(ms_load_guard *g, const ms_load_sample_t *s) {
  g->head = g->nhist ? (g->head + 1) % MS_LOAD_HIST : 0;
  g->hist[g->head] = *s;
  if (g->nhist < MS_LOAD_HIST) g->nhist++;
}

/* The newest kept sample at least MS_LOAD_MIN_WALL before t; none that
** old (a guard's first half second, or looks faster than the ring): the
** oldest when it is a quarter of that old, else NULL. */
static const ms_load_sample_t *window_start(const ms_load_guard *g, double t) {
  const ms_load_sample_t *s = NULL;
  for (int k = 0; k < g->nhist; k++) {
    s = &g->hist[(g->head - k + MS_LOAD_HIST) % MS_LOAD_HIST];
    if (t - s->t >= MS_LOAD_MIN_WALL) return s;
  }
  return s && t - s->t >= MS_LOAD_MIN_WALL / 4 ? s : NULL;
}

int ms_load_start(ms_load_guard *g, const ms_load_hooks *h, rt_err *err) {
  memset(g, 0, sizeof *g);
  if (h) g->hooks = *h;
  g->hz = (double)sysconf(_SC_CLK_TCK);
  if (g->hz <= 0) g->hz = 100;
  g->max_others = MS_LOAD_OTHERS, g->max_steal = MS_LOAD_STEAL, g->max_ref = MS_LOAD_REF;
  g->max_sm_drop = MS_LOAD_SM_DROP;
  g->ref_base = INFINITY;   /* the fastest of three medians */
  for (int k = 0; k < 3; k++) g->ref_base = fmin(g->ref_base, ref_time(g));
  if (!(g->ref_base > 0) || !isfinite(g->ref_base)) g->max_ref = 0;   /* no start time: no sign */
  if (g->hooks.gpu) {
    rt_err gerr = {0};
    if (g->hooks.gpu(g->hooks.gpu_ctx, &g->gpu_last, &gerr))
      snprintf(g->gpu_why, sizeof g->gpu_why, "%.150s", gerr.msg);   /* invariant 2 */
    else
      g->gpu_on = 1;
  }
  ms_load_sample_t first;
  if (sample(g, &first, err)) return -1;
  g->nhist = 0;
  push_sample(g, &first);
  g->on = 1;
  return 0;
}

void ms_load_end(ms_load_guard *g) { g->on = 0; }

static void nap(ms_load_guard *g, double s);

int ms_load_check(ms_load_guard *g, ms_load_view *v) {
  memset(v, 0, sizeof *v);
  if (!g->on) return 0;
  ms_load_sample_t now;
  rt_err err = {0};
  if (sample(g, &now, &err)) {   /* cannot look: say so, never call it quiet */
    snprintf(v->why, sizeof v->why, "%.150s", err.msg);
    v->busy = 1;
    return 1;
  }
  const ms_load_sample_t *from = window_start(g, now.t);
  if (g->after_wait && g->nhist) {   /* forward from the wait's quiet look (ms.h "Load") */
    from = &g->hist[g->head];
    if (now.t - from->t < MS_LOAD_MIN_WALL) {
      nap(g, MS_LOAD_MIN_WALL - (now.t - from->t));
      if (sample(g, &now, &err)) {
        g->after_wait = 0;
        snprintf(v->why, sizeof v->why, "%.150s", err.msg);
        v->busy = 1;
        return 1;
      }
    }
  }
  g->after_wait = 0;
  if (from) ms_load_between(from, &now, g->hz, v);
  push_sample(g, &now);
  if (g->max_ref > 0) v->ref = ref_time(g) / g->ref_base;
  ms_gpu_reading r;
  rt_err gerr = {0};
  if (g->gpu_on && !g->hooks.gpu(g->hooks.gpu_ctx, &r, &gerr)) {
    ms_load_gpu_between(&g->gpu_last, &r, &g->sm_top, v);
    g->gpu_last = r;
  } else if (g->gpu_on) {   /* invariant 2: said, and no sign */
    snprintf(g->gpu_why, sizeof g->gpu_why, "%.150s", gerr.msg);
    g->gpu_on = 0;
  }
  ms_load_verdict(g, v);
  return v->busy;
}

static void nap(ms_load_guard *g, double s) {
  if (g->hooks.nap) {
    g->hooks.nap(g->hooks.ctx, s);
    return;
  }
  struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
  nanosleep(&ts, NULL);
}

double ms_load_wait(ms_load_guard *g, double max_s, const volatile sig_atomic_t *stop,
                    ms_load_view *v) {
  double waited = 0;
  memset(v, 0, sizeof *v);
  v->busy = 1;
  while (waited < max_s && !(stop && *stop)) {
    double s = fmin(MS_LOAD_NAP, max_s - waited);
    /* in slices of at most 0.1 s, so that Ctrl-C is not kept waiting */
    for (double left = s; left > 1e-9 && !(stop && *stop); left -= 0.1) nap(g, fmin(0.1, left));
    waited += s;
    if (stop && *stop) break;
    if (!ms_load_check(g, v)) {
      g->after_wait = 1;
      break;
    }
  }
  return waited;
}
