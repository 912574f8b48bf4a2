/*
** cmd_tune.c -- `rooftune tune`: a tuning campaign on a target into a
** database (tuner/tu_campaign.c does the work), with a progress line on a
** terminal, Ctrl-C that stops cleanly (a second one kills), --resume of a
** stopped or killed campaign, and the one-screen report at the end.
*/
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../targets/tg.h"
#include "../db/db.h"
#include "../tuner/tu.h"
#include "../targets/user/uk.h"
#include "../mpi/mp.h"
#include "cli.h"

#define DEFAULT_STRATEGY "bandit"
#define DEFAULT_BUDGET "64"

/* The problem variables a T1 kernel is loaded with: --set, or for
** --resume the campaign's own as stored (its file may leave a problem
** variable without a Default, and it is checked when it loads). *stored
** gets what to free; NULL when there is none to read (tu_campaign then
** says why). */
static const char *resumed_set(const tu_campaign_opts *o, const cli_t1 *t1, char **stored) {
  if (!o->resume || !t1->file) return o->set;
  rt_err err = {0};
  db *d = db_open(o->db_path, DB_READ, &err);
  db_campaign_info ci;
  if (d && db_campaign_get(d, o->resume, &ci, &err) == 0) {
    json_t *j = json_loads(ci.options, 0, NULL);
    const char *set = json_string_value(json_object_get(j, "set"));
    if (set && *set) *stored = rt_strdup(set);
    json_decref(j);
    db_campaign_info_free(&ci);
  }
  db_close(d);
  return *stored;
}

/* Whether target names a model-only target (tg_backend.h invariant 6). */
static int model_only(const char *target) {
  tg_target t;
  return !tg_resolve(target, &t, NULL) && t.be->model_only;
}

/* Whether tune stores predictions: on a model-only target, and with
** --strategy model on a target that does not time (an emulated one:
** measure/ms.h invariant 8; its predictions are verified first). */
static int predicts(const tu_campaign_opts *o) {
  tg_target t;
  return model_only(o->target) || (o->strategy && !strcmp(o->strategy, "model") &&
                                   !tg_resolve(o->target, &t, NULL) && !tg_timed(&t, NULL));
}

/* Parse into *o (tu.h's options); 0, CLI_HELP or a usage error's exit
** code. The target, kernel and strategy are checked here (exit 2). */
static int parse(int argc, char **argv, tu_campaign_opts *o, int *json, const char **devices,
                 const char **coefs) {
  static const char host[] = "host";   /* o->target still this: --target was not given */
  memset(o, 0, sizeof *o);
  ms_opts_default(&o->ms);
  o->ms.time_cap = 1.0;   /* a campaign measures many schedules */
  o->target = host;
  cli_t1 t1 = {0};
  char *stored = NULL;   /* a resumed campaign's own --set (resumed_set) */
  o->strategy = DEFAULT_STRATEGY;
  o->budget = DEFAULT_BUDGET;
  o->db_path = "rooftune.db";
  o->seed = 1;
  *json = 0;
  int other = 0;   /* an option of the campaign's own (--resume takes them from it) */
  char syn[160], target_help[256];
  snprintf(target_help, sizeof target_help, "where to tune: %s (default host; rooftune targets)",
           tg_syntaxes(syn, sizeof syn));
  static const char *const load_policies[] = {"wait", "flag", NULL};   /* TU_LOAD_WAIT, TU_LOAD_FLAG */
  const cli_opt opts[] = {
    CLI_OPT_STRING("target", &o->target, "T", target_help,
                   .given = &other),
    CLI_OPT_STRING("kernel", &o->kernel, "K", "the kernel template (rooftune kernels); required unless\n"
                   "--t1 or --resume", .given = &other),
    CLI_OPTS_T1(&t1, 0),
    CLI_OPT_STRING("set", &o->set, "VAR=VAL,...", "the workload's problem variables", .check = cli_check_set,
                   .given = &other),
    CLI_OPT_STRING("space", &o->space, "FILE", "a space file of the kernel's parameters (a subset of their\n"
                   "values)", .given = &other),
    CLI_OPT_STRING("strategy", &o->strategy, "S", "search strategy (default " DEFAULT_STRATEGY "; listed below)",
                   .given = &other),
    CLI_OPT_STRING("budget", &o->budget, "N|P%", "evaluations, or a percentage of the valid space\n"
                   "(default " DEFAULT_BUDGET ")", .check = cli_check_budget, .given = &other),
    CLI_OPT_DOUBLE("time-limit", &o->time_limit, "S", 0, 0, "stop after S seconds spent building and measuring",
                   .flags = CLI_OPEN_LO, .given = &other),
    CLI_OPT_UINT64("seed", &o->seed, "S", "seed of the strategy (default 1); same seed, same search",
                   .hi = 9007199254740992.0, .given = &other),
    CLI_OPT_INT("batch", &o->batch, "N", 1, 0, "proposals asked for at once (default 16)", .given = &other),
    CLI_OPT_STRING("db", &o->db_path, "F", "the database (default rooftune.db, created when missing)"),
    CLI_OPT_FLAG("no-pin", &o->no_pin, "decide and report, but do not pin"),
    CLI_OPT_FLAG("no-load-guard", &o->no_load_guard,
                 "do not look at the machine's load after each measurement"),
    CLI_OPT_CHOICE("load-policy", &o->load_policy, NULL, load_policies,
                   "after a measurement on a busy machine: wait for a quiet one\n"
                   "and measure again (default), or flag it loaded at once"),
    CLI_OPT_DOUBLE("load-wait", &o->load_wait, "S", 0, 0, "with --load-policy wait: wait at most S seconds\n"
                   "per measurement (default 30)", .flags = CLI_OPEN_LO),
    CLI_OPT_INT64("resume", &o->resume, "ID", 1, 0, "continue a stopped or killed campaign to its budget\n"
                  "(with its own options: only --db, --no-pin and --json\nmay accompany it)"),
    CLI_OPT_FLAG("json", json, "the report as JSON on stdout"),
    CLI_OPT_STRING("coefs", coefs, "JSON", "on a model-only target: the model's coefficients\n"
                   "{name: value} over its defaults (default: the defaults)", .given = &other),
    CLI_OPT_STRING("devices", devices, "T,T,...", "under mpirun: worker rank w measures on the\n"
                   "(w-1) mod n-th of these targets (default: the campaign's;\n"
                   "a GPU target without an index: one GPU per local rank)"),
    CLI_OPT_GROUP("harness options (as for rooftune measure)"),
    CLI_OPT_DOUBLE("ci", &o->ms.ci_target, "F", 0, 1, "stop timing a schedule when the 95% CI half-width of\n"
                   "its median is below this fraction of it (default 0.01)", .flags = CLI_OPEN_LO | CLI_OPEN_HI,
                   .given = &other),
    CLI_OPT_DOUBLE("time-cap", &o->ms.time_cap, "S", 0, 0, "at most S seconds of timed repeats per schedule\n"
                   "(default 1)", .flags = CLI_OPEN_LO, .given = &other),
    CLI_OPT_DOUBLE("timeout", &o->ms.timeout, "S", 0, 0, "kill a worker after S seconds (default 20)",
                   .flags = CLI_OPEN_LO, .given = &other),
    CLI_OPT_INT("min-reps", &o->ms.min_reps, "N", 1, 0, "at least N timed repeats (default 5)", .given = &other),
    CLI_OPT_FLAG("flush", &o->ms.flush_cache, "flush the caches between repeats", .given = &other),
    CLI_OPT_FLAG("counters", &o->ms.counters, "also count every verified schedule (the target's\n"
                 "counter source), stored per trial", .given = &other),
    CLI_OPT_END,
  };
  rt_str epilog = {0};
  rt_str_printf(&epilog, "strategies:\n");
  for (int i = 0; tu_strategies[i]; i++)
    rt_str_printf(&epilog, "  %-11s %s\n", tu_strategies[i]->name, tu_strategies[i]->summary);
  rt_str_printf(&epilog,
                "\nThe first trial is the default schedule. At the end the 3 fastest others are measured\n"
                "again alternating with the default; one is pinned only if its 95%% CI lies below the\n"
                "default's, else the default is (the report's decision line says why).\n"
                "Ctrl-C stops after the measurement in flight (exit 130); --resume continues.\n"
                "One process at a time runs a campaign: a second --resume of it is refused.\n"
                "Under mpirun -n N (N >= 2) rank 0 runs the campaign and ranks 1..N-1 measure;\n"
                "random, annealing and genetic then run asynchronously (a worker gets the next\n"
                "schedule as soon as it reports; the trials' order depends on timing)\n"
                "(README: \"Campaigns on a cluster\").\n");
  cli_spec spec = {
    .cmd = "tune",
    .usage = "[--target T] --kernel K|--t1 FILE [--kernel-dir DIR] [--atol A] [--rtol R]\n"
             "       [--set VAR=VAL,...] [--space FILE] [--strategy S] [--budget N|P%]\n"
             "       [--time-limit S] [--seed S] [--batch N] [--db F] [--no-pin] [--json]\n"
             "       [--no-load-guard] [--load-policy wait|flag] [--load-wait S]\n"
             "       [--devices T,...] [harness options]\n"
             "   or: rooftune tune --resume CAMPAIGN_ID [--db F] [--no-pin] [--json]\n"
             "   or: rooftune tune --target model:FILE --kernel K [--set ...] --strategy model [--budget N]\n"
             "       [--coefs JSON] [--seed S] [--db F] [--no-pin] [--json]   (predictions only)",
    .about = "A tuning campaign: the strategy's schedules built, verified and timed as by\n"
             "measure, every trial stored in the database, the decision pinned.",
    .opts = opts, .epilog = epilog.s};
  int nop, rc = cli_parse(&spec, argc, argv, &nop);
  if (!rc && o->resume && other)
    rc = cli_usage(&spec, "--resume takes the campaign's own options; only --db, --no-pin, --json and a T1 "
                   "kernel's --t1, --kernel-dir, --atol, --rtol may accompany it");
  else if (!rc && !(rc = cli_t1_load(&spec, &t1, resumed_set(o, &t1, &stored), &o->kernel, &o->target,
                                     o->target != host, !o->resume)) &&
           !o->resume && !o->kernel)
    rc = cli_usage(&spec, "--kernel K or --t1 FILE is required (rooftune kernels lists the kernels)");
  else if (!rc && !o->resume && cli_kernel(&spec, o->target, o->kernel, &rc))
    cli_strategy(&spec, o->strategy, &rc);   /* NULL: rc set */
  if (!rc && !o->resume && model_only(o->target) && strcmp(o->strategy, "model"))
    rc = cli_usage(&spec, "target %s is model-only: it runs no code, so --strategy %s cannot measure "
                   "there; --strategy model ranks its space by the model and stores predictions",
                   o->target, o->strategy);
  if (!rc && *coefs && !model_only(o->target))
    rc = cli_usage(&spec, "--coefs: only a model-only target's predictions take given coefficients "
                   "(a campaign uses the target's latest calibration)");
  if (!rc && model_only(o->target) && o->space)
    rc = cli_usage(&spec, "--space: a model-only target ranks the kernel's own space");
  free(epilog.s);
  free(stored);
  return rc;
}

/* ---- Ctrl-C and the progress line ---- */

static volatile sig_atomic_t stop_flag;

/* A second Ctrl-C kills at once: the workers' process groups first (they
** are not in the terminal's foreground group), then tune by SIGINT. */
static void on_second_sigint(int sig) {
  rt_child_kill_all();
  struct sigaction dfl = {0};
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, NULL);
  raise(sig);
}

static void on_sigint(int sig) {
  stop_flag = 1;
  struct sigaction again = {0};
  again.sa_handler = on_second_sigint;
  sigaction(sig, &again, NULL);
}

static void fmt_dur(double s, char *buf, size_t cap) {
  if (isnan(s)) snprintf(buf, cap, "?");
  else if (s < 60) snprintf(buf, cap, "%.0fs", s);
  else if (s < 3600) snprintf(buf, cap, "%dm%02ds", (int)s / 60, (int)s % 60);
  else snprintf(buf, cap, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
}

static void show_progress(void *ctx, const tu_progress *p) {
  (void)ctx;
  char el[32], rem[32], best[64] = "best -";
  fmt_dur(p->elapsed_s, el, sizeof el);
  fmt_dur(p->remaining_s, rem, sizeof rem);
  if (!isnan(p->best_s))
    snprintf(best, sizeof best, "best %.4g ms (%.1f GFLOP/s)", p->best_s * 1e3, p->best_gflops);
  char done[48];
  if (p->budget) snprintf(done, sizeof done, "%lld/%lld", (long long)p->done, (long long)p->budget);
  else snprintf(done, sizeof done, "%lld", (long long)p->done);
  fprintf(stderr, "\r\033[K  %s trials  %s  failed %lld  reused %lld  elapsed %s  left ~%s",
          done, best, (long long)p->failures, (long long)(p->reused + p->resumed), el, rem);
  fflush(stderr);
}

/* ---- The report ---- */

static void print_report(const tu_report *r) {
  static const char *const names[] = {"ok", "compile_error", "runtime_error", "timeout",
                                      "wrong_result", "invalid"};
  printf("campaign   %lld %s (%s) -- strategy %s, seed %llu, budget %lld evaluations\n",
         (long long)r->campaign, r->state, r->end, r->strategy, (unsigned long long)r->seed,
         (long long)r->budget);
  printf("workload   %s on %s (fingerprint %.12s)\n", r->workload, r->target, r->fingerprint);
  if (r->best_config) {
    printf("best       %s\n", r->best_config);
    printf("           %.6g ms  95%% CI [%.6g, %.6g] (%d repeats%s)  %.1f GFLOP/s  %.2f GB/s compulsory\n",
           r->best_s * 1e3, r->best_ci_lo * 1e3, r->best_ci_hi * 1e3, r->best_repeats,
           r->best_noisy ? ", noisy" : "", r->best_gflops, r->best_gbs);
  } else {
    printf("best       none: no trial was verified\n");
  }
  if (!isnan(r->default_s))
    printf("vs default %.2fx  (the space's default schedule: %.6g ms)\n", r->speedup_default,
           r->default_s * 1e3);
  else if (r->default_config)
    printf("vs default -  (the default schedule %s)\n", strcmp(r->state, "done") ? "was not measured" : "failed");
  if (!isnan(r->baseline_s))
    printf("vs library %.2fx  (%s: %.6g ms, 95%% CI [%.6g, %.6g], %.1f GFLOP/s)\n",
           r->speedup_baseline, r->baseline_what, r->baseline_s * 1e3, r->baseline_ci_lo * 1e3,
           r->baseline_ci_hi * 1e3, r->flops / r->baseline_s * 1e-9);
  printf("trials     %lld:", (long long)r->evaluations);
  for (int s = 0; s <= MS_INVALID; s++) printf(" %s %lld", names[s], (long long)r->status_count[s]);
  printf("\n           measured %lld, reused from earlier campaigns %lld, resumed %lld\n",
         (long long)r->measured, (long long)r->reused, (long long)r->resumed);
  if (r->remeasured) {
    int nc = r->remeasured_candidates, alt = r->remeasured > nc;   /* D c1 D ... D */
    printf("remeasured %d candidate%s%s: %d measurements", nc, nc == 1 ? "" : "s",
           alt ? " alternating with the default" : "", r->remeasured);
    if (r->remeasured_reused) printf(" (%d from the database)", r->remeasured_reused);
    printf(", %.1f s\n", r->remeasure_s);
  }
  if (r->guide_fallback_name) {
    int64_t all = r->guide_model + r->guide_fallback;
    printf("guided     %lld proposals from the model, %lld from its fallback %s (%.0f%%); "
           "last agreement Spearman %.2f\n", (long long)r->guide_model, (long long)r->guide_fallback,
           r->guide_fallback_name, all ? 100.0 * (double)r->guide_fallback / (double)all : 0.0, r->guide_rho);
  }
  if (r->reason) printf("decision   %s\n", r->reason);
  printf("spent      compile %.1f s, verify %.1f s, measure %.1f s, framework %.1f s; elapsed %.1f s\n",
         r->compile_s, r->verify_s, r->bench_s, r->framework_s, r->elapsed_s);
  if (r->load_on && r->load_kept)
    printf("load       %lld of %lld measurements kept though the machine was busy (%s): stored as "
           "loaded (not reused, not calibrated on); measure on a quiet machine\n",
           (long long)r->load_kept, (long long)r->load_looks, r->load_why);
  else if (r->load_on && r->load_busy)
    printf("load       %lld of %lld measurements while the machine was busy (%s): measured again "
           "when it was quiet\n", (long long)r->load_busy, (long long)r->load_looks, r->load_why);
  else if (r->load_on)
    printf("load       quiet: %lld measurements looked at (other processes' CPU time, steal, the "
           "reference loop%s)\n", (long long)r->load_looks, r->load_gpu ? ", the GPU's clocks" : "");
  else if (r->load_why)
    printf("load       not looked at: %s\n", r->load_why);
  if (r->load_retries || r->load_wait_s > 0)
    printf("           %lld measured again after waiting %.1f s in all for a quiet machine\n",
           (long long)r->load_retries, r->load_wait_s);
  if (r->load_on && r->load_gpu_why)
    printf("           the GPU not looked at: %s\n", r->load_gpu_why);
  if (r->pin_version)
    printf("pinned     version %lld: %s (rooftune db history --target %s --kernel %s)\n",
           (long long)r->pin_version, strcmp(r->choice, "default") ? "the tuned schedule" : "the default schedule",
           r->target, r->kernel);
  else
    printf("pinned     %s\n", r->pin_note);
  const char *workers = mp_worker_list();
  if (workers) {   /* an MPI campaign (mpi/mp.h invariant 6) */
    printf("workers    %d MPI ranks measured:\n", mp_workers());
    for (const char *p = workers; *p;) {
      size_t n = strcspn(p, "\n");
      printf("           %.*s\n", (int)n, p);
      p += n + (p[n] == '\n');
    }
  }
}

/* ---- MPI (mpi/mp.h): rank 0's campaign measures on the workers ---- */

static int mpi_measure(void *ctx, const int *cfg, const char *src, const char *ldflags, const ms_opts *o,
                       ms_result *r) {
  (void)ctx, (void)cfg, (void)o;   /* the options went with the set-up (mpi_start) */
  return mp_measure(src, ldflags, r);
}

static int mpi_batch(void *ctx, const int *cfgs, const char *const *srcs, int n, const ms_opts *o,
                     ms_result *r, const volatile sig_atomic_t *stop, rt_err *err) {
  (void)ctx, (void)cfgs, (void)o;
  return mp_measure_batch(srcs, n, r, stop, err);
}

static int mpi_submit(void *ctx, int64_t id, const int *cfg, const char *src, const char *ldflags,
                      rt_err *err) {
  (void)ctx, (void)cfg;
  return mp_measure_submit(id, src, ldflags, err);
}

static int mpi_collect(void *ctx, int64_t *id, int *rc, ms_result *r, rt_err *err) {
  (void)ctx;
  return mp_measure_collect(id, rc, r, err);
}

static int mpi_start(void *ctx, const char *target, const char *kernel, const char *set,
                     const ms_opts *ms, const char *fingerprint, rt_err *err) {
  return mp_start_tune(target, ctx, kernel, set, ms, fingerprint, err);
}

/* tune on a model-only target, or with --strategy model on one that does
** not time: the space ranked by the model, the best predictions stored
** (tu_predict; verified first where the target runs code), the report. */
static int tune_predicted(const tu_campaign_opts *c, int json, const char *coefs) {
  char *end;
  double keep = strtod(c->budget, &end);
  if (*end) return cli_fail("tune", "--budget %s: a model-only target stores N predictions (give N)", c->budget);
  tu_predict_opts o = {.db_path = c->db_path, .target = c->target, .kernel = c->kernel, .set = c->set,
                       .keep = (int64_t)keep, .seed = c->seed, .no_pin = c->no_pin,
                       .flush = c->ms.flush_cache, .coefs_json = coefs};
  tu_predict_report rep;
  rt_err err = {0};
  if (tu_predict(&o, &rep, &err)) return cli_fail("tune", "%s", err.msg);
  if (json) {
    jw w;
    jw_init(&w, stdout);
    jw_begin(&w, '{');
    jw_key(&w, "campaign"); jw_int(&w, rep.campaign);
    jw_key(&w, "target"); jw_str(&w, rep.target);
    jw_key(&w, "predicted"); jw_bool(&w, 1);
    jw_key(&w, "ranked"); jw_int(&w, rep.ranked);
    jw_key(&w, "sampled"); jw_bool(&w, rep.sampled);
    jw_key(&w, "coefficients"); jw_str(&w, rep.coefs_source);
    jw_key(&w, "pin_version"); jw_int(&w, rep.pin_version);
    jw_key(&w, "rejected"); jw_int(&w, rep.rejected);
    if (rep.rejected) { jw_key(&w, "rejected_first"); jw_str(&w, rep.reject_msg); }
    jw_key(&w, "trials"); jw_begin(&w, '[');
    for (int i = 0; i < rep.n; i++) {
      jw_begin(&w, '{');
      jw_key(&w, "trial"); jw_int(&w, rep.rows[i].trial);
      jw_key(&w, "predicted_s"); jw_double(&w, rep.rows[i].time_s);
      jw_key(&w, "bound"); jw_str(&w, cm_bound_name(rep.rows[i].bound));
      jw_key(&w, "verified"); jw_bool(&w, rep.rows[i].verified);
      jw_key(&w, "config"); jw_raw(&w, rep.rows[i].config);
      jw_end(&w, '}');
    }
    jw_end(&w, ']');
    jw_end(&w, '}');
    printf("\n");
  } else {
    char cnt[48];
    int verified = rep.n > 0 && rep.rows[0].verified;
    printf("campaign %lld on %s: predictions only (%s)\n", (long long)rep.campaign, rep.target,
           verified || rep.rejected ? "the target does not time: each stored schedule was built, "
                                      "run and verified there first, never timed"
                                    : "a model-only target runs no code");
    printf("ranked %lld %s %s schedules by the model (coefficients: %s)\n", (long long)rep.ranked,
           rep.sampled ? "sampled of" : "of", rt_count_str(rep.count, cnt), rep.coefs_source);
    for (int i = 0; i < rep.n; i++)
      printf("  %2d. %.6g ms  %-8s  trial %lld  %s\n", i + 1, rep.rows[i].time_s * 1e3,
             cm_bound_name(rep.rows[i].bound), (long long)rep.rows[i].trial, rep.rows[i].config);
    if (rep.rejected)
      printf("REJECTED %d predicted schedules that failed verification (not stored); the first: %s\n",
             rep.rejected, rep.reject_msg);
    printf("stored %d predictions (trials of origin 'predicted')", rep.n);
    if (rep.pin_version) printf("; pinned the best as version %lld, marked predicted\n", (long long)rep.pin_version);
    else printf("; nothing pinned\n");
  }
  int failed = rep.rejected > 0;
  tu_predict_report_free(&rep);
  return failed ? EXIT_FAIL : EXIT_OK;
}

int cmd_tune(int argc, char **argv) {
  tu_campaign_opts o;
  const char *devices = NULL;
  const char *coefs = NULL;
  int json, rc = parse(argc, argv, &o, &json, &devices, &coefs);
  if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
  if (!o.resume && predicts(&o)) return tune_predicted(&o, json, coefs);
  if (mp_rank() > 0) return mp_serve();   /* an MPI worker: it measures what rank 0 sends */
  if (mp_workers() > 0) {   /* rank 0: the campaign, measured on the workers */
    o.measure = mpi_measure, o.measure_batch = mpi_batch, o.start = mpi_start;
    o.measure_submit = mpi_submit, o.measure_collect = mpi_collect;   /* async strategies */
    o.measure_ctx = (void *)devices;
    o.parallel = mp_workers();
    if (!o.batch) o.batch = o.parallel;   /* batches as wide as the workers (a dead worker loses one) */
  }
  stop_flag = 0;
  o.stop = &stop_flag;
  if (isatty(STDERR_FILENO)) o.progress = show_progress;
  struct sigaction sa = {0}, old;
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old);
  tu_report rep;
  rt_err err = {0};
  /* a T1 kernel's file, hashes and input seeds, stored with the campaign */
  const uk_spec *u = o.kernel ? uk_spec_of(tg_kernel_of(o.target, o.kernel)) : NULL;
  char *prov = u ? uk_provenance_json(u) : NULL;
  o.provenance = prov;
  rc = tu_campaign(&o, &rep, &err);
  free(prov);
  sigaction(SIGINT, &old, NULL);
  if (o.progress) fprintf(stderr, "\r\033[K");
  if (rc) return cli_fail("tune", "%s", err.msg);
  if (json && mp_worker_list()) {   /* the workers join the report */
    json_t *j = json_loads(rep.json, 0, NULL);
    char *wl = mp_worker_json();
    json_object_set_new(j, "workers", json_loads(wl, 0, NULL));
    char *t = json_dumps(j, JSON_COMPACT);
    printf("%s\n", t);
    free(t), free(wl);
    json_decref(j);
  } else if (json) printf("%s\n", rep.json);
  else print_report(&rep);
  int stopped = !strcmp(rep.state, "stopped");
  if (stopped)
    fprintf(stderr, "rooftune tune: stopped; continue with: rooftune tune --resume %lld --db %s\n",
            (long long)rep.campaign, o.db_path);
  tu_report_free(&rep);
  return stopped ? 130 : EXIT_OK;
}
