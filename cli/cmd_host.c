/*
** cmd_host.c -- the commands that touch a target: `rooftune targets`
** (what can run code here, with its description and fingerprint),
** `rooftune kernels` (the kernel templates and their problem variables),
** `rooftune measure` (one schedule through the harness) and
** `rooftune baseline` (the vendor library, or the reference, through the
** same harness). They share one option table and one workload loader.
*/
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cost_model/cm.h"
#include "../measure/ms.h"
#include "../targets/tg.h"
#include "cli.h"

/* ---- Options of measure and baseline: one table ---- */

typedef struct hopts {
  const char *target, *kernel, *set, *config, *events;
  int json, counters;
  ms_opts ms;
  tg_target t;                 /* target, resolved */
} hopts;

enum { H_MEASURE = 1, H_BASELINE = 2 };   /* the commands, as the rows' masks */

/* Parse argv for measure (H_MEASURE) or baseline (H_BASELINE) into *o and
** check the target and kernel; 0, CLI_HELP, or a usage error's exit code. */
static int parse_hopts(int argc, char **argv, unsigned which, hopts *o) {
  static const char host[] = "host";   /* o->target still this: --target was not given */
  memset(o, 0, sizeof *o);
  ms_opts_default(&o->ms);
  o->target = host;
  cli_t1 t1 = {0};
  const cli_opt opts[] = {
    CLI_OPT_STRING("target", &o->target, "T", "the target (default host; rooftune targets lists them)"),
    CLI_OPT_STRING("kernel", &o->kernel, "K", "kernel template (rooftune kernels)", .required = H_BASELINE),
    CLI_OPTS_T1(&t1, H_MEASURE),
    CLI_OPT_STRING("set", &o->set, "VAR=VAL,...", "problem variables of the workload", .check = cli_check_set),
    CLI_OPT_STRING("config", &o->config, "JSON", "the schedule, or 'default' for the space's defaults",
                   .mask = H_MEASURE, .required = H_MEASURE),
    CLI_OPT_FLAG("json", &o->json, "machine-readable output"),
    CLI_OPT_GROUP("harness options"),
    CLI_OPT_FLAG("counters", &o->counters, "also collect hardware counters (a separate run)"),
    CLI_OPT_STRING("events", &o->events, "LIST", "counter events, comma-separated (the names of the\n"
                   "target's counter source); implies --counters"),
    CLI_OPT_DOUBLE("ci", &o->ms.ci_target, "F", 0, 1, "stop timing when the 95% CI half-width of the\n"
                   "median is below this fraction of it (default 0.01)", .flags = CLI_OPEN_LO | CLI_OPEN_HI),
    CLI_OPT_DOUBLE("time-cap", &o->ms.time_cap, "S", 0, 0, "at most S seconds of timed repeats (default 2)",
                   .flags = CLI_OPEN_LO),
    CLI_OPT_DOUBLE("timeout", &o->ms.timeout, "S", 0, 0, "kill the worker after S seconds (default 20)",
                   .flags = CLI_OPEN_LO),
    CLI_OPT_INT("min-reps", &o->ms.min_reps, "N", 1, 0, "at least N timed repeats (default 5)"),
    CLI_OPT_FLAG("flush", &o->ms.flush_cache, "flush the caches between repeats"),
    CLI_OPT_INT("pin", &o->ms.pin_cpu, "CPU", 0, 0, "pin the worker to a CPU"),
    CLI_OPT_END,
  };
  cli_spec spec = {
    .cmd = which == H_MEASURE ? "measure" : "baseline",
    .usage = which == H_MEASURE
                 ? "[--target T] --kernel K|--t1 FILE [--kernel-dir DIR] [--atol A] [--rtol R]\n"
                   "       --set VAR=VAL,... --config JSON|default [--json]\n"
                   "       [--counters] [--events LIST] [--ci F] [--time-cap S] [--timeout S]\n"
                   "       [--min-reps N] [--flush] [--pin CPU]"
                 : "[--target T] --kernel K --set VAR=VAL,... [--json] [harness options]",
    .about = which == H_MEASURE
                 ? "Build one schedule, verify it against the reference and time it in an isolated\n"
                   "worker (exit 1 unless its status is ok)."
                 : "The vendor library (OpenBLAS, cuBLAS), or the kernel's reference where it has\n"
                   "none, through the same harness as measure.",
    .opts = opts, .mask = which};
  int nop, rc = cli_parse(&spec, argc, argv, &nop);
  if (rc) return rc;
  if (o->events) o->ms.events = o->events;
  o->counters = o->ms.counters = o->counters || o->events;
  if ((rc = cli_t1_load(&spec, &t1, o->set, &o->kernel, &o->target, o->target != host, 1))) return rc;
  if (!o->kernel) return cli_usage(&spec, "--kernel K or --t1 FILE is required (rooftune kernels lists the kernels)");
  if (!cli_kernel(&spec, o->target, o->kernel, &rc)) return rc;
  return cli_find_target(&spec, o->target, &o->t);
}

/* Load the kernel's space with the bindings. NULL after reporting. */
static sp_space *load_space(const kn_kernel *k, const tg_target *target, const char *user_set,
                            const char *cmd) {
  char path[4096];
  rt_err err = {0};
  char *set = tg_kernel_bindings(target, k, user_set, &err);
  if (!set) {
    cli_fail(cmd, "%s: %s", target->name, err.msg);
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

static void print_result(const char *what, int what_config, const kn_kernel *k, const kn_problem *pb,
                         const ms_result *r, const hopts *o) {
  double t = r->t.median, gflops = t > 0 ? k->flops(pb) / t * 1e-9 : 0,
         gbs = t > 0 ? k->min_bytes(pb) / t * 1e-9 : 0;
  const char *why = NULL;
  if (o->counters && !r->counters) {
    if (tg_counters_available(&o->t, &why)) why = r->msg[0] ? r->msg : "the counters returned no values";
  }
  if (o->json) {
    jw w;
    jw_init(&w, stdout);
    jw_begin(&w, '{');
    jw_key(&w, "kernel"); jw_str(&w, k->name);
    jw_key(&w, "what");
    if (what_config) jw_raw(&w, what);   /* the canonical configuration: JSON already */
    else jw_str(&w, what);
    jw_key(&w, "status"); jw_str(&w, ms_status_name(r->status));
    if (r->msg[0]) { jw_key(&w, "message"); jw_str(&w, r->msg); }
    if (r->origin[0]) { jw_key(&w, "origin"); jw_str(&w, r->origin); }   /* ms.h 8: no time */
    if (r->status == MS_OK && r->origin[0]) {
      jw_key(&w, "time_s"); jw_raw(&w, "null");
      jw_key(&w, "max_rel_error"); jw_double(&w, r->max_err);
    } else if (r->status == MS_OK) {
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
        char v[32];   /* exact (jw_double keeps 6 digits); JSON has no NaN */
        snprintf(v, sizeof v, "%.17g", r->ev_val[i]);
        jw_key(&w, r->ev_name[i]);
        jw_raw(&w, isfinite(r->ev_val[i]) ? v : "null");
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
  if (r->status == MS_OK && r->origin[0])
    printf("time     none: the run was %s, and emulated time is not a measurement\n", r->origin);
  else if (r->status == MS_OK) {
    printf("time     median %.6g s  95%% CI [%.6g, %.6g]  (%d repeats, mean %.6g, sd %.3g, min %.6g)%s\n",
           t, r->t.ci_lo, r->t.ci_hi, r->t.n, r->t.mean, r->t.sd, r->t.min,
           r->t.noisy ? "  NOISY" : "");
    printf("rate     %.2f GFLOP/s  %.2f GB/s (compulsory traffic)\n", gflops, gbs);
  }
  if (r->status == MS_OK) {
    if (k->tolerance)
      printf("verified max |out - ref| / max |ref| = %.3g (tolerance %.3g)\n", r->max_err, k->tolerance(pb));
    else   /* kn.h invariant 2: element by element */
      printf("verified |out - ref| <= %.3g + %.3g |ref| for every element (integers: equal)\n", k->atol, k->rtol);
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
static ms_workload *workload(const char *cmd, const kn_kernel *k, sp_space *sp, kn_problem *pb) {
  rt_err err = {0};
  kn_problem_from_space(pb, sp);
  ms_workload *w = ms_workload_new(k, pb, &err);
  if (!w) cli_fail(cmd, "%s", err.msg);
  return w;
}

/* Measure src (or report why it could not be) and print; exit code. Every
** status prints as its T4 name (ms.h invariant 1). */
static int run_measure(const char *cmd, const char *what, int what_config, const kn_kernel *k, ms_workload *w,
                       const kn_problem *pb, const char *src, const char *ldflags,
                       const hopts *o) {
  ms_result r;
  int rc = tg_measure(&o->t, w, src, ldflags, &o->ms, &r);
  if (rc) return cli_fail(cmd, "the harness failed: %s", r.msg);
  print_result(what, what_config, k, pb, &r, o);
  return r.status == MS_OK ? EXIT_OK : EXIT_FAIL;
}

/* ---- Commands ---- */

int cmd_measure(int argc, char **argv) {
  hopts o;
  int rc = parse_hopts(argc, argv, H_MEASURE, &o);
  if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
  const kn_kernel *k = tg_kernel(&o.t, o.kernel);
  sp_space *sp = load_space(k, &o.t, o.set, "measure");
  if (!sp) return EXIT_FAIL;
  kn_problem pb;
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
    rc = run_measure("measure", canon, 1, k, w, &pb, src, NULL, &o);
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
  int rc = parse_hopts(argc, argv, H_BASELINE, &o);
  if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
  const kn_kernel *k = tg_kernel(&o.t, o.kernel);
  sp_space *sp = load_space(k, &o.t, o.set, "baseline");
  if (!sp) return EXIT_FAIL;
  kn_problem pb;
  ms_workload *w = workload("baseline", k, sp, &pb);
  if (!w) {
    sp_free(sp);
    return EXIT_FAIL;
  }
  const char *ldflags = NULL;
  char *src = k->baseline ? k->baseline(&pb, &ldflags) : NULL;
  if (src) {
    char what[128];
    snprintf(what, sizeof what, "vendor library (%s)", ldflags ? ldflags : "no flags");
    rc = run_measure("baseline", what, 0, k, w, &pb, src, ldflags, &o);
  } else {
    /* No library for this kernel: its reference implementation. */
    rc = run_measure("baseline", "reference implementation (no library for this kernel)", 0, k, w,
                     &pb, NULL, NULL, &o);
  }
  free(src);
  ms_workload_free(w);
  sp_free(sp);
  return rc;
}

/* One target as `rooftune targets` shows it (JSON: an element of its
** array); with_ceilings adds the ceilings a described target carries and
** where its numbers come from (--describe). 0, or 1 when it is not
** available here. */
static int show_target(jw *w, int json, const tg_target *t, int with_ceilings) {
  tg_desc d;
  rt_err err = {0};
  const char *inst = t->name, *untimed = NULL;
  int ok = tg_describe(t, &d, &err) == 0;
  int timed = t->be->model_only ? 0 : tg_timed(t, &untimed);   /* ms.h invariant 8 */
  if (t->be->model_only) untimed = "a model-only target runs no code: it predicts";
  cm_ceilings ce;
  const char *prov = with_ceilings && ok ? tg_provenance(t) : NULL;
  int have_ce = with_ceilings && ok && !tg_bench(t, NULL, &ce, &err);
  if (json) {
    jw_begin(w, '{');
    jw_key(w, "name"); jw_str(w, inst);
    jw_key(w, "summary"); jw_str(w, t->be->summary);
    jw_key(w, "available"); jw_bool(w, ok);
    jw_key(w, "model_only"); jw_bool(w, t->be->model_only);   /* runs nothing: predictions only */
    if (ok) {
      jw_key(w, "fingerprint"); jw_str(w, d.fingerprint);
      jw_key(w, "timed"); jw_bool(w, timed);
      if (untimed) { jw_key(w, "untimed_why"); jw_str(w, untimed); }
      jw_key(w, "family"); jw_begin(w, '{');
      jw_key(w, "model"); jw_str(w, d.family.model);
      jw_key(w, "arch"); jw_str(w, d.family.arch);
      jw_key(w, "backend"); jw_str(w, d.family.backend);
      jw_end(w, '}');
      jw_key(w, "description"); jw_begin(w, '{');
      for (int i = 0; i < d.n; i++) { jw_key(w, d.key[i]); jw_str(w, d.val[i]); }
      jw_end(w, '}');
      if (have_ce) {
        char *text = cm_ceilings_json(&ce);
        jw_key(w, "ceilings"); jw_raw(w, text);
        free(text);
      }
      if (prov) { jw_key(w, "provenance"); jw_raw(w, prov); }
    } else {
      jw_key(w, "why"); jw_str(w, err.msg);
    }
    jw_end(w, '}');
    return !ok;
  }
  printf("%s -- %s\n", inst, t->be->summary);
  if (!ok) {
    printf("  not available: %s\n", err.msg);
    return 1;
  }
  for (int i = 0; i < d.n; i++) printf("  %-12s %s\n", d.key[i], d.val[i]);
  printf("  %-12s %s\n", "fingerprint", d.fingerprint);
  if (!timed) printf("  %-12s %s\n", "untimed", untimed);
  printf("  %-12s %s > %s > %s (rtdb lookups fall back along it)\n", "family",
         d.family.model[0] ? d.family.model : "?", d.family.arch[0] ? d.family.arch : "?",
         d.family.backend);
  if (have_ce) {
    printf("  ceilings     peak %.4g GFLOP/s (%d %s), measured %s\n", ce.peak[1] / 1e9, ce.threads,
           t->be->gpu ? "SMs" : "threads", ce.measured);
    for (int l = 0; l < CM_NLEVEL; l++)
      if (ce.bw[l][1] > 0 && (ce.cache[l] > 0 || l == CM_NLEVEL - 1))
        printf("  %-12s %.4g GB/s, %.4g MiB\n", cm_bound_name(CM_LEVEL(l)), ce.bw[l][1] / 1e9,
               ce.cache[l] / 1048576.0);
  }
  if (prov) {
    json_t *j = json_loads(prov, 0, NULL), *v;
    const char *k;
    json_object_foreach(j, k, v) printf("  from: %s -- %s\n", k, json_string_value(v));
    json_decref(j);
  }
  return 0;
}

int cmd_targets(int argc, char **argv) {
  int json = 0, nop;
  const char *file = NULL;
  const cli_opt opts[] = {
    CLI_OPT_FLAG("json", &json, "machine-readable output"),
    CLI_OPT_STRING("describe", &file, "FILE", "check a target description file and show what it\n"
                   "describes (its pairs, fingerprint, family, ceilings and\nprovenance), or its first error"),
    CLI_OPT_END,
  };
  cli_spec spec = {.cmd = "targets", .usage = "[--json] [--describe FILE]", .opts = opts,
                   .about = "The targets available here, with their hardware description and fingerprint."};
  int rc = cli_parse(&spec, argc, argv, &nop);
  if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
  jw w;
  jw_init(&w, stdout);
  if (file) {
    tg_target t;
    rt_err err = {0};
    if (tg_file_target(file, &t, &err)) {
      fprintf(stderr, "rooftune targets: %s\n", err.msg);
      return EXIT_FAIL;
    }
    return show_target(&w, json, &t, 1) ? EXIT_FAIL : EXIT_OK;
  }
  if (json) jw_begin(&w, '[');
  tg_target all[64];
  int n = 0;
  for (int b = 0; tg_backends[b]; b++) n += tg_backends[b]->list(all + n, 64 - n);
  for (const tg_target *t = all; t < all + n; t++) show_target(&w, json, t, 0);
  if (json) jw_end(&w, ']');
  return EXIT_OK;
}

int cmd_kernels(int argc, char **argv) {
  int json = 0, nop;
  const char *target = "host";
  const cli_opt opts[] = {
    CLI_OPT_STRING("target", &target, "T", "the target (default host; rooftune targets)"),
    CLI_OPT_FLAG("json", &json, "machine-readable output"),
    CLI_OPT_END,
  };
  cli_spec spec = {.cmd = "kernels", .usage = "[--target T] [--json]", .opts = opts,
                   .about = "The kernel templates of a target with their problem variables (bind them\n"
                            "with --set)."};
  int rc = cli_parse(&spec, argc, argv, &nop);
  if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
  tg_target tt;
  const tg_target *t = &tt;
  if ((rc = cli_find_target(&spec, target, &tt))) return rc;
  jw w;
  jw_init(&w, stdout);
  if (json) jw_begin(&w, '[');
  for (int i = 0; t->be->kernels[i]; i++) {
    const kn_kernel *k = t->be->kernels[i];
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
