/*
** bench_adapt_demo.c -- online adaptation on this machine (rtdb.h, "Online
** adaptation"): the host gemm kernel run on a workload that was never
** tuned, with the pin of another workload. In a folder under /tmp:
**   1. `rooftune tune` the host gemm at M=N=K=64 and 96 (random search,
**      BUDGET evaluations each; the conservative rule pins each), and a
**      quick look at M=N=K=512 (4 random evaluations, --no-pin);
**   2. the application's workload is M=N=K=512: rtdb_lookup answers the
**      pin of the nearest tuned workload (96), and the adapter offers it
**      with the verified alternatives (A1: 512's own four trials, then
**      96's and 64's);
**   3. every arm is measured on 512 with the harness's own stopping rule
**      (the candidate set's truth: the pin's time and the best);
**   4. CALLS application calls: each runs the adapter's choice through the
**      isolated harness (one warm-up, then the median of three timed runs:
**      a single run is too noisy on a machine shared with builds) and
**      reports its time.
** The adapter: cap 0.2, confidence 0.99, first test after 5 reports.
** Printed: the arms and their times, when the pin was replaced, the mean
** time of the CALLS calls against the pin's and the best arm's (timed
** beforehand, and as the calls saw them), and the share of calls spent
** exploring. Arguments: [CALLS [BUDGET [SEED]]] (1500, 24, 1: tune's
** --seed).
** Without the rooftune program beside the bench folder it says so and
** exits 0.
*/
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/rt.h"
#include "db/rtdb.h"
#include "measure/ms.h"
#include "search_spaces/sp.h"
#include "targets/kn.h"
#include "targets/tg.h"

static void die(const char *what, const char *msg) {
  fprintf(stderr, "bench_adapt_demo: %s: %s\n", what, msg);
  exit(1);
}

/* The space of kernel k on t for the problem set (as `rooftune measure`). */
static sp_space *space_of(const tg_target *t, const kn_kernel *k, const char *set) {
  char path[4096];
  rt_err err = {0};
  char *bind = tg_kernel_bindings(t, k, set, &err);
  if (!bind) die("bindings", err.msg);
  sx_arena *arena = sx_arena_new();
  sp_binding *b = NULL;
  int nb = *bind ? sp_parse_bindings(bind, arena, &b, &err) : 0;
  free(bind);
  sp_space *sp = nb < 0 ? NULL : sp_load_file(rt_project_path(k->space, path, sizeof path), b, nb, &err);
  free(b);
  sx_arena_free(arena);
  if (!sp) die("space", err.msg);
  return sp;
}

/* Time config on the workload: its median (seconds), or NAN when not ok. */
static double measure(const tg_target *t, const kn_kernel *k, sp_space *sp, const kn_problem *pb,
                      ms_workload *w, const ms_opts *o, const char *config) {
  int *cfg = rt_malloc((size_t)sp_nparams(sp) * sizeof *cfg);
  rt_err err = {0};
  if (sp_config_parse(sp, config, cfg, &err)) die(config, err.msg);
  char *src = k->codegen(pb, sp, cfg);
  ms_result r;
  if (tg_measure(t, w, src, NULL, o, &r)) die("harness", r.msg);
  free(src);
  free(cfg);
  return r.status == MS_OK ? r.t.median : NAN;
}

int main(int argc, char **argv) {
  int calls = argc > 1 ? atoi(argv[1]) : 1500, budget = argc > 2 ? atoi(argv[2]) : 24;
  const char *seed = argc > 3 ? argv[3] : "1";
  char self[4096], exe[4200], dir[64], dbp[128], logp[128];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) die("/proc/self/exe", "unreadable");
  self[n] = 0;
  snprintf(exe, sizeof exe, "%s/../rooftune", dirname(self));
  if (access(exe, X_OK)) {
    printf("bench_adapt_demo: %s not built: skipped (make build/rooftune)\n", exe);
    return 0;
  }
  snprintf(dir, sizeof dir, "/tmp/rooftune-adapt-demo-XXXXXX");
  if (!mkdtemp(dir)) die("mkdtemp", dir);
  snprintf(dbp, sizeof dbp, "%s/demo.db", dir);
  snprintf(logp, sizeof logp, "%s/adapt.log", dir);
  char bud[16];
  snprintf(bud, sizeof bud, "%d", budget);
  static const char *const tuned[] = {"M=64,N=64,K=64", "M=96,N=96,K=96", "M=512,N=512,K=512"};
  double t0 = rt_now();
  for (int i = 0; i < 3; i++) {
    char *av[] = {exe, "tune", "--db", dbp, "--kernel", "gemm", "--set", (char *)tuned[i], "--strategy", "random",
                  "--budget", i < 2 ? bud : "4", "--seed", (char *)seed, "--time-cap", "0.2",
                  i < 2 ? NULL : "--no-pin", NULL};
    rt_str out = {0};
    int st = rt_capture(av, 1, 1 << 16, &out);
    if (st != 0) die("tune", out.s ? out.s : "failed");
    const char *pin = out.s ? strstr(out.s, "decision") : NULL;
    printf("tuned gemm %s (%d evaluations): %.*s\n", tuned[i], i < 2 ? budget : 4, pin ? (int)strcspn(pin, "\n") : 0,
           pin ? pin : "");
    free(out.s);
  }
  printf("tuning: %.1f s\n", rt_now() - t0);

  const char *vars = "M=512,N=512,K=512";
  rtdb *rd;
  char msg[512];
  if (rtdb_open(dbp, &rd)) die("rtdb_open", dbp);
  rtdb_adapt *ad;
  rtdb_adapt_opts ao = {.cap = 0.2, .confidence = 0.99, .min_samples = 5, .log_path = logp};
  if (rtdb_adapt_open(rd, &ao, &ad, msg, sizeof msg)) die("rtdb_adapt_open", msg);
  rtdb_choice c;
  if (rtdb_adapt_choose(ad, "host", "gemm", vars, NULL, &c)) die("choose", rtdb_adapt_errmsg(ad));
  rtdb_adapt_stats st;
  rtdb_adapt_arm arms[72];
  rtdb_adapt_stats_of(ad, &c, &st, arms, 72);
  static const char *const match[] = {"", "exact", "nearest", "default"};
  printf("application workload %s: the lookup answers %s (%s), %d arms\n", vars, match[c.match <= 3 ? c.match : 0],
         arms[0].workload, st.narms);

  tg_target t;
  rt_err err = {0};
  if (tg_resolve("host", &t, &err)) die("host", err.msg);
  const kn_kernel *k = tg_kernel(&t, "gemm");
  sp_space *sp = space_of(&t, k, vars);
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  ms_workload *w = ms_workload_new(k, &pb, &err);
  if (!w) die("workload", err.msg);
  ms_opts truth, once;
  ms_opts_default(&truth);
  truth.time_cap = 0.5;
  once = truth;
  once.min_reps = once.max_reps = 3, once.warmup = 1;

  double truth_s[72], best = INFINITY;
  int best_arm = 0;
  for (int j = 0; j < st.narms; j++) {
    truth_s[j] = measure(&t, k, sp, &pb, w, &truth, arms[j].config);
    if (truth_s[j] < best) best = truth_s[j], best_arm = j;
    printf("  arm %d: %.4f ms, %s of %.*s: %s\n", j, truth_s[j] * 1e3, arms[j].pin_version ? "the pin" : "a trial",
           (int)strcspn(arms[j].workload, "t") - 1, arms[j].workload, arms[j].config);
  }

  double sum = 0, sum_after = 0;
  long long after = 0, ran = 0;
  int replaced_at = -1;
  t0 = rt_now();
  for (int i = 0; i < calls; i++) {
    if (rtdb_adapt_choose(ad, "host", "gemm", vars, NULL, &c)) die("choose", rtdb_adapt_errmsg(ad));
    double s = measure(&t, k, sp, &pb, w, &once, c.config);
    if (isnan(s)) {
      rtdb_adapt_fail(ad, &c);
      continue;
    }
    sum += s, ran++;
    if (replaced_at >= 0) sum_after += s, after++;
    rtdb_adapt_report(ad, &c, s);
    rtdb_adapt_stats_of(ad, &c, &st, NULL, 0);
    if (st.replacements && replaced_at < 0) replaced_at = i + 1;
  }
  double wall = rt_now() - t0;
  rtdb_adapt_stats_of(ad, &c, &st, arms, 72);
  printf("%d calls in %.1f s: mean %.4f ms per call; the pin %.4f ms, the best arm (%d) %.4f ms "
         "(each arm timed to 1%% CI beforehand)\n", calls, wall, sum / (double)ran * 1e3, truth_s[0] * 1e3,
         best_arm, best * 1e3);
  printf("the calls' own times (as the application sees them): the pin %.4f ms over %lld "
         "calls, the best arm %.4f ms over %lld\n", arms[0].mean_s * 1e3, arms[0].n, arms[best_arm].mean_s * 1e3,
         arms[best_arm].n);
  for (int j = 0; j < st.narms; j++)
    printf("  arm %d: %lld calls, mean %.4f ms, state %s%s\n", j, arms[j].n, arms[j].mean_s * 1e3,
           (const char *[]){"live", "dropped (slower)", "retired", "replaced"}[arms[j].state],
           arms[j].incumbent ? ", the incumbent" : "");
  printf("explored %lld of %lld calls (%.1f%%; cap %.0f%%); incumbent now arm %d (%.4f ms)", st.explored,
         st.calls - 1, 100.0 * (double)st.explored / (double)(st.calls - 1), ao.cap * 100, st.incumbent,
         truth_s[st.incumbent] * 1e3);
  if (replaced_at >= 0)
    printf(", replaced the pin at call %d; mean after it %.4f ms (%.2fx the pin)\n", replaced_at,
           sum_after / (double)after * 1e3, truth_s[0] / (sum_after / (double)after));
  else
    printf(", the pin kept\n");
  if (rtdb_adapt_close(ad)) die("log", "write failed");
  rtdb_close(rd);
  ms_workload_free(w);
  sp_free(sp);
  /* what adapt-import makes of the log */
  char *av[] = {exe, "db", "adapt-import", "--db", dbp, "--pin", logp, NULL};   /* 512 is stored */
  rt_str out = {0};
  int rc = rt_capture(av, 1, 1 << 16, &out);
  printf("adapt-import --pin: %s", out.s ? out.s : "");
  free(out.s);
  if (rc != 0) die("adapt-import", "failed");
  static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
  for (int i = 0; i < 4; i++) {   /* this run's files only */
    char p[160];
    snprintf(p, sizeof p, "%s%s", dbp, sfx[i]);
    unlink(p);
  }
  unlink(logp);
  rmdir(dir);
  return 0;
}
