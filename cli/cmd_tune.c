/*
** cmd_tune.c -- `rooftune tune`: a tuning campaign on a target into a
** database (tuner/tu_campaign.c does the work), with a progress line on a
** terminal, Ctrl-C that stops cleanly (a second one kills), --resume of a
** stopped or killed campaign, and the one-screen report at the end.
*/
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tuner/tu.h"
#include "cli.h"

#define DEFAULT_STRATEGY "bandit"
#define DEFAULT_BUDGET "64"

static const char tune_usage[] =
    "[--target T] --kernel K [--set VAR=VAL,...] [--space FILE] [--strategy S] [--budget N|P%]\n"
    "       [--time-limit SECONDS] [--seed S] [--db F] [--no-pin] [--json] [harness options]\n"
    "   or: rooftune tune --resume CAMPAIGN_ID [--db F] [--no-pin] [--json]";

static const char tune_help[] =
    "  --target T         where to tune: host (default) or cuda:N (rooftune targets)\n"
    "  --kernel K         the kernel template (rooftune kernels)\n"
    "  --set VAR=VAL,...  the workload's problem variables\n"
    "  --space FILE       a space file of the kernel's parameters (a subset of their values)\n"
    "  --strategy S       search strategy (default " DEFAULT_STRATEGY "); one of:\n%s"
    "  --budget N|P%%      evaluations, or a percentage of the valid space (default " DEFAULT_BUDGET ")\n"
    "  --time-limit S     stop after S seconds spent building and measuring\n"
    "  --seed S           seed of the strategy (default 1); same seed, same search\n"
    "  --db F             the database (default rooftune.db, created when missing)\n"
    "  --no-pin           decide and report, but do not pin\n"
    "  --resume ID        continue a stopped or killed campaign to its budget\n"
    "  --batch N          proposals asked for at once (default 16)\n"
    "  --json             the report as JSON on stdout\n"
    "harness options (as for rooftune measure):\n"
    "  --ci F  --time-cap S  --timeout S  --min-reps N  --flush\n"
    "  --counters         also count every verified schedule (PAPI; CUPTI on cuda:N), stored per trial\n"
    "The first trial is the default schedule. At the end the 3 fastest others are measured\n"
    "again alternating with the default; one is pinned only if its 95%% CI lies below the\n"
    "default's, else the default is (the report's decision line says why).\n"
    "Ctrl-C stops after the measurement in flight (exit 130); --resume continues.\n"
    "One process at a time runs a campaign: a second --resume of it is refused.\n";

enum { T_TARGET = 1, T_KERNEL, T_SET, T_STRATEGY, T_BUDGET, T_TIME, T_SEED, T_DB, T_NOPIN,
       T_RESUME, T_BATCH, T_JSON, T_CI, T_CAP, T_TIMEOUT, T_REPS, T_FLUSH, T_SPACE, T_COUNTERS, T_HELP };

static const struct option tlong[] = {
  {"target", required_argument, 0, T_TARGET}, {"kernel", required_argument, 0, T_KERNEL},
  {"set", required_argument, 0, T_SET}, {"strategy", required_argument, 0, T_STRATEGY},
  {"budget", required_argument, 0, T_BUDGET}, {"time-limit", required_argument, 0, T_TIME},
  {"seed", required_argument, 0, T_SEED}, {"db", required_argument, 0, T_DB},
  {"no-pin", no_argument, 0, T_NOPIN}, {"resume", required_argument, 0, T_RESUME},
  {"batch", required_argument, 0, T_BATCH}, {"json", no_argument, 0, T_JSON},
  {"ci", required_argument, 0, T_CI}, {"time-cap", required_argument, 0, T_CAP},
  {"timeout", required_argument, 0, T_TIMEOUT}, {"min-reps", required_argument, 0, T_REPS},
  {"flush", no_argument, 0, T_FLUSH}, {"space", required_argument, 0, T_SPACE},
  {"counters", no_argument, 0, T_COUNTERS},
  {"help", no_argument, 0, T_HELP}, {0, 0, 0, 0},
};

static void help(void) {
  rt_str list = {0};
  for (int i = 0; tu_strategies[i]; i++)
    rt_str_printf(&list, "                       %-11s %s\n", tu_strategies[i]->name,
                  tu_strategies[i]->summary);
  printf("usage: rooftune tune %s\n\noptions:\n", tune_usage);
  printf(tune_help, list.s);
  free(list.s);
}

/* Parse into *o; -1: --help printed; > 0: a usage error's exit code. */
static int parse(int argc, char **argv, tu_campaign_opts *o, int *json) {
  memset(o, 0, sizeof *o);
  ms_opts_default(&o->ms);
  o->ms.time_cap = 1.0;   /* a campaign measures many schedules */
  o->target = "host";
  o->strategy = DEFAULT_STRATEGY;
  o->budget = DEFAULT_BUDGET;
  o->db_path = "rooftune.db";
  o->seed = 1;
  *json = 0;
  optind = 0;
  opterr = 0;
  int ch, other = 0;
  while ((ch = getopt_long(argc, argv, "", tlong, NULL)) != -1) {
    double d;
    other += ch != T_DB && ch != T_NOPIN && ch != T_RESUME && ch != T_JSON;
    switch (ch) {
    case T_TARGET: o->target = optarg; break;
    case T_KERNEL: o->kernel = optarg; break;
    case T_SET: o->set = optarg; break;
    case T_SPACE: o->space = optarg; break;
    case T_STRATEGY: o->strategy = optarg; break;
    case T_BUDGET: o->budget = optarg; break;
    case T_DB: o->db_path = optarg; break;
    case T_NOPIN: o->no_pin = 1; break;
    case T_JSON: *json = 1; break;
    case T_FLUSH: o->ms.flush_cache = 1; break;
    case T_COUNTERS: o->ms.counters = 1; break;
    case T_HELP: help(); return -1;
    case T_TIME:
    case T_CAP:
    case T_TIMEOUT:
      if (cli_double(optarg, 0.001, &d))
        return cli_usage_text("tune", tune_usage, "--%s: expected seconds > 0, got '%s'", cli_optname(tlong, ch), optarg);
      *(ch == T_TIME ? &o->time_limit : ch == T_CAP ? &o->ms.time_cap : &o->ms.timeout) = d;
      break;
    case T_CI:
      if (cli_double(optarg, 1e-6, &d) || d >= 1)
        return cli_usage_text("tune", tune_usage, "--ci: expected a fraction in (0, 1), got '%s'", optarg);
      o->ms.ci_target = d;
      break;
    case T_SEED:
    case T_RESUME:
    case T_BATCH:
    case T_REPS:
      if (cli_double(optarg, ch == T_SEED ? 0 : 1, &d) || d != floor(d) || d > 9e15)
        return cli_usage_text("tune", tune_usage, "--%s: expected an integer%s, got '%s'", cli_optname(tlong, ch),
                         ch == T_SEED ? " >= 0" : " >= 1", optarg);
      if (ch == T_SEED) o->seed = (uint64_t)d;
      else if (ch == T_RESUME) o->resume = (int64_t)d;
      else if (ch == T_BATCH) o->batch = (int)d;
      else o->ms.min_reps = (int)d;
      break;
    default:
      return cli_usage_text("tune", tune_usage, "unknown option or missing value: %s", argv[optind - 1]);
    }
  }
  if (optind < argc) return cli_usage_text("tune", tune_usage, "unexpected argument '%s'", argv[optind]);
  if (o->resume) {
    if (other)
      return cli_usage_text("tune", tune_usage, "--resume takes the campaign's own options; only --db, "
                       "--no-pin and --json may accompany it");
    return 0;
  }
  if (!o->kernel) return cli_usage_text("tune", tune_usage, "--kernel K is required (rooftune kernels lists them)");
  if (!tu_strategy_find(o->strategy))
    return cli_usage_text("tune", tune_usage, "unknown strategy '%s' (rooftune tune --help lists them)", o->strategy);
  return 0;
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
  if (r->reason) printf("decision   %s\n", r->reason);
  printf("spent      compile %.1f s, verify %.1f s, measure %.1f s, framework %.1f s; elapsed %.1f s\n",
         r->compile_s, r->verify_s, r->bench_s, r->framework_s, r->elapsed_s);
  if (r->pin_version)
    printf("pinned     version %lld: %s (rooftune db history --target %s --kernel %s)\n",
           (long long)r->pin_version, strcmp(r->choice, "default") ? "the tuned schedule" : "the default schedule",
           r->target, r->kernel);
  else
    printf("pinned     %s\n", r->pin_note);
}

int cmd_tune(int argc, char **argv) {
  tu_campaign_opts o;
  int json, rc = parse(argc, argv, &o, &json);
  if (rc) return rc < 0 ? EXIT_OK : rc;
  stop_flag = 0;
  o.stop = &stop_flag;
  if (isatty(STDERR_FILENO)) o.progress = show_progress;
  struct sigaction sa = {0}, old;
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old);
  tu_report rep;
  rt_err err = {0};
  rc = tu_campaign(&o, &rep, &err);
  sigaction(SIGINT, &old, NULL);
  if (o.progress) fprintf(stderr, "\r\033[K");
  if (rc) return cli_fail("tune", "%s", err.msg);
  if (json) printf("%s\n", rep.json);
  else print_report(&rep);
  int stopped = !strcmp(rep.state, "stopped");
  if (stopped)
    fprintf(stderr, "rooftune tune: stopped; continue with: rooftune tune --resume %lld --db %s\n",
            (long long)rep.campaign, o.db_path);
  tu_report_free(&rep);
  return stopped ? 130 : EXIT_OK;
}
