/*
** cmd_host.c -- the commands that touch a target: `rooftune targets`
** (what can run code here, with its description and fingerprint),
** `rooftune kernels` (the kernel templates and their problem variables),
** `rooftune measure` (one schedule through the harness) and
** `rooftune baseline` (the vendor library, or the reference, through the
** same harness). They share one option table and one workload loader.
*/
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../measure/ms.h"
#include "../targets/host/hk.h"
#include "../targets/tg.h"
#include "cli.h"

/* ---- Options shared by the commands of this file ---- */

typedef struct hopts {
  const char *target, *kernel, *set, *config, *events;
  int json, counters;
  ms_opts ms;
} hopts;

enum { H_TARGET = 1, H_KERNEL, H_SET, H_CONFIG, H_JSON, H_COUNTERS, H_EVENTS,
       H_CI, H_CAP, H_TIMEOUT, H_FLUSH, H_PIN, H_REPS, H_HELP };

static const struct option hlong[] = {
  {"target", required_argument, 0, H_TARGET}, {"kernel", required_argument, 0, H_KERNEL},
  {"set", required_argument, 0, H_SET}, {"config", required_argument, 0, H_CONFIG},
  {"json", no_argument, 0, H_JSON}, {"counters", no_argument, 0, H_COUNTERS},
  {"events", required_argument, 0, H_EVENTS}, {"ci", required_argument, 0, H_CI},
  {"time-cap", required_argument, 0, H_CAP}, {"timeout", required_argument, 0, H_TIMEOUT},
  {"flush", no_argument, 0, H_FLUSH}, {"pin", required_argument, 0, H_PIN},
  {"min-reps", required_argument, 0, H_REPS}, {"help", no_argument, 0, H_HELP},
  {0, 0, 0, 0},
};

static const char measure_usage[] =
    "--target T --kernel K --set VAR=VAL,... --config JSON|default [--json]\n"
    "       [--counters] [--events LIST] [--ci FRACTION] [--time-cap SECONDS]\n"
    "       [--timeout SECONDS] [--min-reps N] [--flush] [--pin CPU]";
static const char baseline_usage[] =
    "--target T --kernel K --set VAR=VAL,... [--json] [harness options as for measure]";

static const char measure_help[] =
    "  --target T         target (rooftune targets): host (default), cuda:N\n"
    "  --kernel K         kernel template (rooftune kernels)\n"
    "  --set VAR=VAL,...  problem variables of the workload\n"
    "  --config JSON      the schedule, or 'default' for the space's defaults\n"
    "  --json             machine-readable output\n"
    "  --counters         also collect hardware counters (a separate run)\n"
    "  --events LIST      counter events, comma-separated (PAPI names; CUPTI metric\n"
    "                     names on cuda:N)\n"
    "  --ci FRACTION      stop timing when the 95%% CI half-width of the median is below\n"
    "                     this fraction of it (default 0.01)\n"
    "  --time-cap S       at most S seconds of timed repeats (default 2)\n"
    "  --timeout S        kill the worker after S seconds (default 20)\n"
    "  --min-reps N       at least N timed repeats (default 5)\n"
    "  --flush            flush the caches between repeats\n"
    "  --pin CPU          pin the worker to a CPU\n";

/* Parse options; -1: --help was printed; >0: exit code of a usage error. */
static int parse_hopts(int argc, char **argv, const char *cmd, const char *usage,
                       int need_config, hopts *o) {
  memset(o, 0, sizeof *o);
  ms_opts_default(&o->ms);
  o->target = "host";
  optind = 0;
  opterr = 0;
  int ch;
  while ((ch = getopt_long(argc, argv, "", hlong, NULL)) != -1) {
    double d;
    switch (ch) {
    case H_TARGET: o->target = optarg; break;
    case H_KERNEL: o->kernel = optarg; break;
    case H_SET: o->set = optarg; break;
    case H_CONFIG: o->config = optarg; break;
    case H_JSON: o->json = 1; break;
    case H_COUNTERS: o->counters = o->ms.counters = 1; break;
    case H_EVENTS: o->events = o->ms.events = optarg; o->counters = o->ms.counters = 1; break;
    case H_FLUSH: o->ms.flush_cache = 1; break;
    case H_CI:
      if (cli_double(optarg, 1e-6, &d) || d >= 1)
        return cli_usage_text(cmd, usage, "--ci: expected a fraction in (0, 1), got '%s'", optarg);
      o->ms.ci_target = d;
      break;
    case H_CAP:
    case H_TIMEOUT:
      if (cli_double(optarg, 0.001, &d))
        return cli_usage_text(cmd, usage, "--%s: expected seconds > 0, got '%s'",
                         ch == H_CAP ? "time-cap" : "timeout", optarg);
      *(ch == H_CAP ? &o->ms.time_cap : &o->ms.timeout) = d;
      break;
    case H_PIN:
    case H_REPS:
      if (cli_double(optarg, ch == H_PIN ? 0 : 1, &d) || d != (int)d)
        return cli_usage_text(cmd, usage, "--%s: expected an integer, got '%s'",
                         ch == H_PIN ? "pin" : "min-reps", optarg);
      *(ch == H_PIN ? &o->ms.pin_cpu : &o->ms.min_reps) = (int)d;
      break;
    case H_HELP:
      printf("usage: rooftune %s %s\n\noptions:\n%s", cmd, usage, measure_help);
      return -1;
    default:
      return cli_usage_text(cmd, usage, "unknown option or missing value: %s", argv[optind - 1]);
    }
  }
  if (optind < argc) return cli_usage_text(cmd, usage, "unexpected argument '%s'", argv[optind]);
  const tg_target *t = tg_find(o->target);
  if (!t)
    return cli_usage_text(cmd, usage, "unknown target '%s' (rooftune targets lists them)", o->target);
  o->ms.device = tg_device(o->target);
  if (!o->kernel) return cli_usage_text(cmd, usage, "--kernel K is required (rooftune kernels lists them)");
  if (!tg_kernel(t, o->kernel))
    return cli_usage_text(cmd, usage, "unknown kernel '%s' on target %s (rooftune kernels --target %s "
                     "lists them)", o->kernel, t->name, t->name);
  if (need_config && !o->config)
    return cli_usage_text(cmd, usage, "--config JSON (or --config default) is required");
  return 0;
}

/* Load the kernel's space with the bindings. NULL after reporting. */
static sp_space *load_space(const hk_kernel *k, const char *target, const char *user_set,
                            const char *cmd) {
  char path[4096];
  rt_err err = {0};
  char *set = tg_bindings(target, user_set, &err);
  if (!set) {
    cli_fail(cmd, "%s: %s", target, err.msg);
    return NULL;
  }
  sx_arena *arena = sx_arena_new();  /* the space copies what it keeps */
  sp_binding *b = NULL;
  int nb = *set ? sp_parse_bindings(set, arena, &b, &err) : 0;
  free(set);
  sp_space *sp = nb < 0 ? NULL : sp_load_file(rt_project_path(k->space, path, sizeof path), b, nb, &err);
  free(b);
  sx_arena_free(arena);
  if (!sp) {
    cli_fail(cmd, "%s", err.msg);
    return NULL;
  }
  for (int i = 0; i < sp_nwarnings(sp); i++)
    fprintf(stderr, "rooftune %s: warning: %s\n", cmd, sp_warning(sp, i));
  if (sp_count(sp) == 0) {
    cli_fail(cmd, "no valid schedule for this workload: the space of %s is empty (see the "
             "warnings above, or rooftune space info %s)", k->name, k->space);
    sp_free(sp);
    return NULL;
  }
  return sp;
}

/* ---- Printing a measurement ---- */

static void print_result(const char *what, const hk_kernel *k, const hk_problem *pb,
                         const ms_result *r, const hopts *o) {
  double t = r->t.median, gflops = t > 0 ? k->flops(pb) / t * 1e-9 : 0,
         gbs = t > 0 ? k->min_bytes(pb) / t * 1e-9 : 0;
  const char *why = NULL;
  if (o->counters && !r->counters) {
    if (o->ms.device < 0) ms_counters_available(&why);
    else why = r->msg[0] ? r->msg : "CUPTI returned no values";
  }
  if (o->json) {
    jw w;
    jw_init(&w, stdout);
    jw_begin(&w, '{');
    jw_key(&w, "kernel"); jw_str(&w, k->name);
    jw_key(&w, "what"); jw_raw(&w, what);
    jw_key(&w, "status"); jw_str(&w, ms_status_name(r->status));
    if (r->msg[0]) { jw_key(&w, "message"); jw_str(&w, r->msg); }
    if (r->status == MS_OK) {
      jw_key(&w, "time_s"); jw_begin(&w, '{');
      jw_key(&w, "median"); jw_double(&w, r->t.median);
      jw_key(&w, "mean"); jw_double(&w, r->t.mean);
      jw_key(&w, "sd"); jw_double(&w, r->t.sd);
      jw_key(&w, "min"); jw_double(&w, r->t.min);
      jw_key(&w, "max"); jw_double(&w, r->t.max);
      jw_key(&w, "ci95"); jw_begin(&w, '['); jw_double(&w, r->t.ci_lo); jw_double(&w, r->t.ci_hi); jw_end(&w, ']');
      jw_key(&w, "repeats"); jw_int(&w, r->t.n);
      jw_key(&w, "noisy"); jw_bool(&w, r->t.noisy);
      jw_end(&w, '}');
      jw_key(&w, "gflops"); jw_double(&w, gflops);
      jw_key(&w, "gbytes_per_s"); jw_double(&w, gbs);
      jw_key(&w, "max_rel_error"); jw_double(&w, r->max_err);
    }
    jw_key(&w, "flops"); jw_double(&w, k->flops(pb));
    jw_key(&w, "min_bytes"); jw_double(&w, k->min_bytes(pb));
    jw_key(&w, "compile_s"); jw_double(&w, r->compile_s);
    jw_key(&w, "verify_s"); jw_double(&w, r->verify_s);
    jw_key(&w, "bench_s"); jw_double(&w, r->bench_s);
    jw_key(&w, "compile_cache_hit"); jw_bool(&w, r->cache_hit);
    jw_key(&w, "counters");
    if (r->counters) {
      jw_begin(&w, '{');
      for (int i = 0; i < r->nev; i++) {
        char v[32];
        snprintf(v, sizeof v, "%.17g", r->ev_val[i]);
        jw_key(&w, r->ev_name[i]);
        jw_raw(&w, v);
      }
      jw_end(&w, '}');
    } else {
      jw_raw(&w, "null");
      if (why) { jw_key(&w, "counters_unavailable"); jw_str(&w, why); }
    }
    jw_end(&w, '}');
    return;
  }
  printf("kernel   %s\nschedule %s\nstatus   %s%s%s\n", k->name, what, ms_status_name(r->status),
         r->msg[0] ? ": " : "", r->msg);
  if (r->status == MS_OK) {
    printf("time     median %.6g s  95%% CI [%.6g, %.6g]  (%d repeats, mean %.6g, sd %.3g, min %.6g)%s\n",
           t, r->t.ci_lo, r->t.ci_hi, r->t.n, r->t.mean, r->t.sd, r->t.min,
           r->t.noisy ? "  NOISY" : "");
    printf("rate     %.2f GFLOP/s  %.2f GB/s (compulsory traffic)\n", gflops, gbs);
    printf("verified max |out - ref| / max |ref| = %.3g (tolerance %.3g)\n", r->max_err,
           k->tolerance(pb));
  }
  printf("spent    compile %.3f s%s, verify %.3f s, measure %.3f s\n", r->compile_s,
         r->cache_hit ? " (cache hit)" : "", r->verify_s, r->bench_s);
  if (r->counters)
    for (int i = 0; i < r->nev; i++) printf("counter  %-16s %.17g\n", r->ev_name[i], r->ev_val[i]);
  else if (why)
    printf("counters unavailable: %s\n", why);
}

/* The workload of sp's problem (its sizes checked before anything else
** of the kernel runs), or NULL after reporting. */
static ms_workload *workload(const char *cmd, const hk_kernel *k, sp_space *sp, hk_problem *pb) {
  rt_err err = {0};
  hk_problem_from_space(pb, sp);
  ms_workload *w = ms_workload_new(k, pb, &err);
  if (!w) cli_fail(cmd, "%s", err.msg);
  return w;
}

/* Measure src (or report why it could not be) and print; exit code. Every
** status prints as its T4 name (ms.h invariant 1). */
static int run_measure(const char *cmd, const char *what, const hk_kernel *k, ms_workload *w,
                       const hk_problem *pb, const char *src, const char *ldflags,
                       const hopts *o) {
  ms_result r;
  int rc = ms_measure(w, src, ldflags, &o->ms, &r);
  if (rc) return cli_fail(cmd, "the harness failed: %s", r.msg);
  print_result(what, k, pb, &r, o);
  return r.status == MS_OK ? EXIT_OK : EXIT_FAIL;
}

/* ---- Commands ---- */

int cmd_measure(int argc, char **argv) {
  hopts o;
  int rc = parse_hopts(argc, argv, "measure", measure_usage, 1, &o);
  if (rc) return rc < 0 ? EXIT_OK : rc;
  const hk_kernel *k = tg_kernel(tg_find(o.target), o.kernel);
  sp_space *sp = load_space(k, o.target, o.set, "measure");
  if (!sp) return EXIT_FAIL;
  hk_problem pb;
  ms_workload *w = workload("measure", k, sp, &pb);
  if (!w) {
    sp_free(sp);
    return EXIT_FAIL;
  }
  int *cfg = rt_malloc((size_t)sp_nparams(sp) * sizeof *cfg), failed;
  rt_err err = {0};
  if (!strcmp(o.config, "default")) {
    if (!sp_default_config(sp, cfg)) rc = cli_fail("measure", "the space of %s has no complete default", k->name);
  } else if (sp_config_parse(sp, o.config, cfg, &err)) {
    rc = cli_fail("measure", "%s", err.msg);
  }
  if (!rc && !sp_valid(sp, cfg, &failed))
    rc = cli_fail("measure", "the configuration is invalid (status invalid): condition %d is false: %s",
                  failed, sp_cond_text(sp, failed));
  if (!rc) {
    char *src = k->codegen(&pb, sp, cfg), *canon = sp_config_json(sp, cfg);
    rc = run_measure("measure", canon, k, w, &pb, src, NULL, &o);
    free(canon);
    free(src);
  }
  free(cfg);
  ms_workload_free(w);
  sp_free(sp);
  return rc;
}

int cmd_baseline(int argc, char **argv) {
  hopts o;
  int rc = parse_hopts(argc, argv, "baseline", baseline_usage, 0, &o);
  if (rc) return rc < 0 ? EXIT_OK : rc;
  const hk_kernel *k = tg_kernel(tg_find(o.target), o.kernel);
  sp_space *sp = load_space(k, o.target, o.set, "baseline");
  if (!sp) return EXIT_FAIL;
  hk_problem pb;
  ms_workload *w = workload("baseline", k, sp, &pb);
  if (!w) {
    sp_free(sp);
    return EXIT_FAIL;
  }
  const char *ldflags = NULL;
  char *src = k->baseline ? k->baseline(&pb, &ldflags) : NULL;
  if (src) {
    char what[128];
    snprintf(what, sizeof what, "\"vendor library (%s)\"", ldflags ? ldflags : "no flags");
    rc = run_measure("baseline", what, k, w, &pb, src, ldflags, &o);
  } else {
    /* No library for this kernel: its reference implementation. */
    rc = run_measure("baseline", "\"reference implementation (no library for this kernel)\"", k, w,
                     &pb, NULL, NULL, &o);
  }
  free(src);
  ms_workload_free(w);
  sp_free(sp);
  return rc;
}

int cmd_targets(int argc, char **argv) {
  int json = argc == 2 && !strcmp(argv[1], "--json");
  if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    printf("usage: rooftune targets [--json]\n\nThe targets available here, with their "
           "hardware description and fingerprint.\n");
    return EXIT_OK;
  }
  if (argc > 1 && !json) return cli_usage_text("targets", "[--json]", "unexpected argument '%s'", argv[1]);
  jw w;
  jw_init(&w, stdout);
  if (json) jw_begin(&w, '[');
  for (const tg_target *t = tg_targets; t->name; t++) {
    tg_desc d;
    rt_err err = {0};
    const char *inst = strcmp(t->name, "cuda") ? t->name : "cuda:0";
    int ok = t->describe(inst, &d, &err) == 0;
    if (json) {
      jw_begin(&w, '{');
      jw_key(&w, "name"); jw_str(&w, inst);
      jw_key(&w, "summary"); jw_str(&w, t->summary);
      jw_key(&w, "available"); jw_bool(&w, ok);
      if (ok) {
        jw_key(&w, "fingerprint"); jw_str(&w, d.fingerprint);
        jw_key(&w, "description"); jw_begin(&w, '{');
        for (int i = 0; i < d.n; i++) { jw_key(&w, d.key[i]); jw_str(&w, d.val[i]); }
        jw_end(&w, '}');
      } else {
        jw_key(&w, "why"); jw_str(&w, err.msg);
      }
      jw_end(&w, '}');
      continue;
    }
    printf("%s -- %s\n", inst, t->summary);
    if (!ok) {
      printf("  not available: %s\n", err.msg);
      continue;
    }
    for (int i = 0; i < d.n; i++) printf("  %-12s %s\n", d.key[i], d.val[i]);
    printf("  %-12s %s\n", "fingerprint", d.fingerprint);
  }
  if (json) jw_end(&w, ']');
  return EXIT_OK;
}

int cmd_kernels(int argc, char **argv) {
  int json = 0;
  const tg_target *t = tg_find("host");
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) json = 1;
    else if (!strcmp(argv[i], "--target") && i + 1 < argc) {
      if (!(t = tg_find(argv[++i])))
        return cli_usage_text("kernels", "[--target T] [--json]", "unknown target '%s'", argv[i]);
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: rooftune kernels [--target T] [--json]\n\nThe kernel templates of a "
             "target (default host) with their problem variables (bind them with --set).\n");
      return EXIT_OK;
    } else {
      return cli_usage_text("kernels", "[--target T] [--json]", "unexpected argument '%s'", argv[i]);
    }
  }
  jw w;
  jw_init(&w, stdout);
  if (json) jw_begin(&w, '[');
  for (int i = 0; t->kernels[i]; i++) {
    const hk_kernel *k = t->kernels[i];
    char path[4096];
    json_error_t je;
    json_t *root = json_load_file(rt_project_path(k->space, path, sizeof path), 0, &je);
    json_t *vars = json_object_get(json_object_get(root, "ConfigurationSpace"), "ProblemVariables");
    if (json) {
      jw_begin(&w, '{');
      jw_key(&w, "name"); jw_str(&w, k->name);
      jw_key(&w, "summary"); jw_str(&w, k->summary);
      jw_key(&w, "space"); jw_str(&w, k->space);
      jw_key(&w, "problem_variables"); jw_begin(&w, '[');
    } else {
      printf("%-10s %s\n           space %s\n           variables:", k->name, k->summary, k->space);
    }
    for (size_t v = 0; v < json_array_size(vars); v++) {
      json_t *jv = json_array_get(vars, v), *def = json_object_get(jv, "Default");
      const char *name = json_string_value(json_object_get(jv, "Name"));
      char *dtext = def ? json_dumps(def, JSON_ENCODE_ANY) : NULL;
      if (json) {
        jw_begin(&w, '{');
        jw_key(&w, "name"); jw_str(&w, name ? name : "?");
        jw_key(&w, "default"); jw_raw(&w, dtext ? dtext : "null");
        jw_end(&w, '}');
      } else {
        printf(" %s%s%s", name ? name : "?", dtext ? "=" : "", dtext ? dtext : "");
      }
      free(dtext);
    }
    if (json) {
      jw_end(&w, ']');
      jw_end(&w, '}');
    } else {
      printf("%s\n", root ? "" : "  (space file missing)");
    }
    json_decref(root);
  }
  if (json) jw_end(&w, ']');
  return EXIT_OK;
}
