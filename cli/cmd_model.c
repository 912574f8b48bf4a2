/*
** cmd_model.c -- `rooftune model ...`: the cost model from the command
** line. predict and explain give a schedule's predicted time and its
** roofline breakdown (which bound limits it, what fraction of each ceiling
** it uses) next to what was measured; calibrate fits a kernel model's
** coefficients to the measured trials of a target (with the counted
** traffic its backend row gives for the byte terms) and stores them as a new version; accuracy
** scores a version on held-out trials; history lists the versions;
** roofline draws a campaign on the target's ceilings (cmd_model_plot.c);
** whatif ranks one space on two target description files (cmd_model_whatif.c).
** One table lists the subcommands and the options each accepts. The target
** is the data's (cli_data_target): the one stored target holding the
** kernel's trials, or --fingerprint's; this machine only when the database
** holds no trials of the kernel (predict, explain, history). Ceilings are
** measured, and hardware counters count, only when the target is this
** machine.
*/
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cost_model/cm.h"
#include "../db/db.h"
#include "../measure/ms.h"
#include "../targets/tg.h"
#include "../tuner/tu.h"
#include "cli.h"

/* The subcommands, as bits: each option row names those that accept it. */
enum { M_PREDICT = 1 << 0, M_EXPLAIN = 1 << 1, M_CALIBRATE = 1 << 2, M_ACCURACY = 1 << 3,
       M_HISTORY = 1 << 4, M_ROOFLINE = 1 << 5, M_WHATIF = 1 << 6 };
#define M_ONE (M_PREDICT | M_EXPLAIN)                 /* one schedule */
#define M_FIT (M_CALIBRATE | M_ACCURACY)              /* many measured trials */

#define MAXSET 16

typedef struct mopts {
  const char *db, *target, *kernel, *config, *csv, *fingerprint;   /* target: NULL if not given */
  const char *set[MAXSET];
  int nset, json, version, defaults, counters, flush, all;
  double holdout;
  uint64_t seed;
} mopts;

typedef struct model_cmd {
  cli_sub sub;
  int (*fn)(const mopts *o, const char *cmd);
  int (*main)(int argc, char **argv);   /* a subcommand of its own file (fn NULL) */
  unsigned bit;
} model_cmd;

static int mc_predict(const mopts *o, const char *cmd);
static int mc_explain(const mopts *o, const char *cmd);
static int mc_calibrate(const mopts *o, const char *cmd);
static int mc_accuracy(const mopts *o, const char *cmd);
static int mc_history(const mopts *o, const char *cmd);

static const model_cmd subcommands[] = {
  {{"predict",
    "[--db F] [--target T] [--fingerprint P] --kernel K|--t1 FILE [--kernel-dir DIR] [--set ...]\n"
    "       --config JSON|default [--version N|--defaults] [--flush] [--json]",
    "a schedule's predicted time and limiting bound"}, mc_predict, NULL, M_PREDICT},
  {{"explain",
    "[--db F] [--target T] [--fingerprint P] --kernel K|--t1 FILE [--kernel-dir DIR] [--set ...]\n"
    "       --config JSON|default [--version N|--defaults] [--flush] [--json]",
    "why a schedule is fast or slow: the roofline breakdown next to its measurements"},
   mc_explain, NULL, M_EXPLAIN},
  {{"calibrate",
    "[--db F] [--target T] [--fingerprint P] --kernel K [--set ...]... [--holdout F] [--seed S]\n"
    "       [--counters N] [--flush] [--json]",
    "fit the model's coefficients to the measured trials; store a new version"},
   mc_calibrate, NULL, M_CALIBRATE},
  {{"accuracy",
    "[--db F] [--target T] [--fingerprint P] --kernel K [--set ...]... [--version N] [--all]\n"
    "       [--flush] [--csv FILE] [--json]",
    "rank correlation, top-k and error on held-out trials: defaults against a calibration"},
   mc_accuracy, NULL, M_ACCURACY},
  {{"history", "[--db F] [--target T] [--fingerprint P] [--kernel K] [--json]",
    "the stored calibrations, oldest first"}, mc_history, NULL, M_HISTORY},
  {{"roofline", cmd_model_roofline_usage,
    "plot a campaign's schedules on the target's ceilings (PNG, SVG)"}, NULL, cmd_model_roofline, M_ROOFLINE},
  {{"whatif", cmd_model_whatif_usage,
    "one space ranked by the model on two target description files: best schedules, rank changes"},
   NULL, cmd_model_whatif, M_WHATIF},
  {{NULL, NULL, NULL}, NULL, NULL, 0},
};
const cli_group cmd_model_group = CLI_GROUP_OF(subcommands);

/* Whether kernel names a template of some target (with --target, of that
** one): else a usage error with "did you mean". */
static int check_kernel(const cli_spec *s, const char *target, const char *kernel) {
  int rc = 0;
  if (target) return cli_kernel(s, target, kernel, &rc) ? 0 : rc;
  const char *names[128];
  int n = 0;
  for (int b = 0; tg_backends[b]; b++)
    for (const kn_kernel *const *kk = tg_backends[b]->kernels; *kk; kk++) {
      if (!strcmp((*kk)->name, kernel)) return 0;
      int dup = 0;
      for (int k = 0; k < n; k++) dup |= !strcmp(names[k], (*kk)->name);
      if (!dup && n < 127) names[n++] = (*kk)->name;
    }
  names[n] = NULL;
  return cli_unknown(s, "kernel", kernel, names, "rooftune kernels --target T lists them");
}

/* Parse argv (argv[0] the subcommand) for c; 0, CLI_HELP or a usage
** error's exit code. The target and kernel names are checked here. */
static int parse(const model_cmd *c, int argc, char **argv, mopts *o, const char *cmd) {
  *o = (mopts){.db = "rooftune.db", .holdout = 0.3, .seed = 1, .counters = 6};
  cli_strv sets = {0};
  cli_t1 t1 = {0};
  int64_t seed = 1;   /* stored in JSON as a signed integer */
  const cli_opt opts[] = {
    CLI_OPT_STRING("db", &o->db, "F", "the database (default rooftune.db)"),
    CLI_OPT_STRING("target", &o->target, "T", "only stored targets named T (rooftune targets); default: any"),
    CLI_OPT_STRING("fingerprint", &o->fingerprint, "P", "the stored target whose fingerprint starts with P\n"
                   "(default: the one target holding the kernel's trials;\nthis machine when the database "
                   "holds none: predict,\nexplain, history)", .check = cli_check_fingerprint),
    CLI_OPT_STRING("kernel", &o->kernel, "K", "the kernel template", .required = M_FIT),
    CLI_OPTS_T1(&t1, M_ONE),
    CLI_OPT_LIST("set", &sets, "VAR=VAL,...", "a workload (calibrate, accuracy: repeat for several;\n"
                 "none: every workload measured on the target)", .check = cli_check_set,
                 .mask = M_ONE | M_FIT),
    CLI_OPT_STRING("config", &o->config, "JSON", "the schedule, or 'default'", .mask = M_ONE, .required = M_ONE),
    CLI_OPT_INT("version", &o->version, "N", 1, 1000000000, "a stored calibration (default the latest)",
                .mask = M_ONE | M_ACCURACY),
    CLI_OPT_FLAG("defaults", &o->defaults, "the model's default coefficients", .mask = M_ONE),
    CLI_OPT_DOUBLE("holdout", &o->holdout, "F", 0, 1, "share of the trials kept out of the fit (default 0.3)",
                   .flags = CLI_OPEN_HI, .mask = M_CALIBRATE),
    CLI_OPT_INT64("seed", &seed, "S", 0, 0, "seed of the held-out split (default 1)", .mask = M_CALIBRATE),
    CLI_OPT_INT("counters", &o->counters, "N", 0, 1000, "schedules whose cache traffic is counted for the\n"
                "byte terms (the target's counters, else a cache simulator; default 6,\n0: none)", .mask = M_CALIBRATE),
    CLI_OPT_FLAG("flush", &o->flush, "the trials were measured with --flush (cold caches)", .mask = M_ONE | M_FIT),
    CLI_OPT_FLAG("all", &o->all, "score on every trial, training trials included", .mask = M_ACCURACY),
    CLI_OPT_STRING("csv", &o->csv, "FILE", "every scored schedule: workload, configuration, measured\n"
                   "and predicted time (defaults, calibrated), limiting bound", .mask = M_ACCURACY),
    CLI_OPT_FLAG("json", &o->json, "JSON on stdout"),
    CLI_OPT_END,
  };
  cli_spec spec = {.cmd = cmd, .usage = c->sub.usage, .about = c->sub.summary, .opts = opts, .mask = c->bit};
  int nop, rc = cli_parse(&spec, argc, argv, &nop);
  o->seed = (uint64_t)seed;
  for (int i = 0; !rc && i < sets.n; i++) {
    if (i == MAXSET || (i == 1 && (c->bit & M_ONE))) {
      rc = cli_usage(&spec, "--set given %d times: %s", sets.n,
                     c->bit & M_ONE ? "one schedule is of one workload" : "at most 16 workloads");
      break;
    }
    o->set[o->nset++] = sets.v[i];
  }
  cli_strv_free(&sets);
  if (rc) return rc;
  if (o->version && o->defaults) return cli_usage(&spec, "--version and --defaults exclude each other");
  if ((rc = cli_t1_load(&spec, &t1, o->nset ? o->set[0] : NULL, &o->kernel, &o->target, o->target != NULL, 1)))
    return rc;
  if ((c->bit & M_ONE) && !o->kernel)
    return cli_usage(&spec, "--kernel K or --t1 FILE is required (rooftune kernels lists the kernels)");
  tg_target t;
  if (o->target && (rc = cli_find_target(&spec, o->target, &t))) return rc;
  if (o->kernel && (c->bit & (M_ONE | M_FIT))) return check_kernel(&spec, o->target, o->kernel);
  return 0;
}

/* ---- What every subcommand needs: the target, the kernel and its model ---- */

typedef struct mctx {
  db *d;
  cli_target t;                /* the data's target, or this machine */
  int64_t target_id;           /* t.id */
  const char *target;          /* t.name: an instance name */
  tg_target tg;                /* target, resolved (tg.be NULL: a name no
                               ** backend knows) */
  const kn_kernel *hk;
  const cm_kmodel *km;
  cm_ceilings ce;
} mctx;

static void mctx_close(mctx *m) {
  db_close(m->d);
  cli_target_free(&m->t);
}

/* This machine (--target, default host) as the target, registered in the
** database: predict, explain and history where no stored target holds
** trials of the kernel. */
static int live_target(mctx *m, const mopts *o, db_mode mode, rt_err *err) {
  tg_target t;
  if (tg_resolve(o->target ? o->target : "host", &t, err)) return -1;
  const char *name = t.name;
  tg_desc desc;
  if (tg_describe(&t, &desc, err)) return -1;
  char *dj = tg_desc_json(&desc);
  /* DB_READ: looked up, never registered (id 0: nothing stored of it) */
  int rc = mode == DB_READ ? db_target_find(m->d, name, desc.fingerprint, &m->t.id, err)
                           : db_target_id(m->d, name, desc.fingerprint, dj, &m->t.id, err);
  if (rc == 1) rc = 0;
  free(dj);
  const char *model = *tg_desc_get(&desc, "model") ? tg_desc_get(&desc, "model") : tg_desc_get(&desc, "device");
  m->t.name = rt_strdup(name), m->t.fingerprint = rt_strdup(desc.fingerprint);
  m->t.model = rt_strdup(*model ? model : "-"), m->t.here = 1;
  return rc;
}

/* Load the target's ceilings into m->ce (measured now only when none are
** stored and the target is this machine); 0, or an exit code after
** reporting (m stays open). */
static int mctx_ceilings(mctx *m, const mopts *o, const char *cmd) {
  rt_err err = {0};
  if (!cm_ceilings_load(m->d, m->target_id, m->target, m->t.here, &m->ce, NULL, &err)) {
    /* the backend's answers to its models (a GPU's registers: compiled) */
    if (m->tg.be && m->tg.be->model_setup) m->tg.be->model_setup(&m->tg, &m->ce, NULL, 1);
    return 0;
  }
  return m->t.here ? cli_fail(cmd, "%s", err.msg)
                   : cli_fail(cmd, "%s holds no ceilings of target %s (fingerprint %s, %s), and they "
                              "can only be measured on that machine (rooftune bench --target %s there)",
                              o->db, m->target, m->t.fingerprint, m->t.model, m->target);
}

/* Open the database (mode: db.h), find the data's target (cli_data_target;
** with live_ok, this machine when no stored target holds trials of the
** kernel), the kernel and its model, and (with ceilings) the target's
** ceilings (mctx_ceilings). Exit code on failure. */
static int mctx_open(mctx *m, const mopts *o, const char *cmd, int need_kernel, int live_ok,
                     db_mode mode, int ceilings) {
  rt_err err = {0};
  memset(m, 0, sizeof *m);   /* the kernel's name was checked by parse */
  if (!(m->d = db_open(o->db, mode, &err))) return cli_fail(cmd, "%s", err.msg);
  cli_target_req q = {.name = o->target, .fingerprint = o->fingerprint, .kernel = o->kernel,
                      .sets = o->set, .nsets = o->nset};
  int rc = cli_data_target(m->d, o->db, &q, &m->t, cmd);
  if (rc == CLI_NO_DATA && live_ok && o->nset) {   /* another workload's target still has the calibration */
    q.nsets = 0;
    rc = cli_data_target(m->d, o->db, &q, &m->t, cmd);
  }
  if (rc == CLI_NO_DATA && live_ok)
    rc = live_target(m, o, mode, &err) ? cli_fail(cmd, "%s", err.msg) : 0;
  else if (rc == CLI_NO_DATA)
    rc = cli_fail(cmd, "%s holds no trials of %s%s%s%s: tune or measure some first (rooftune tune "
                  "--kernel %s ...)", o->db, o->kernel, o->nset ? " --set " : "", o->nset ? o->set[0] : "",
                  o->target ? " on a target of that name" : "", o->kernel);
  if (rc) {
    mctx_close(m);
    return rc;
  }
  m->target_id = m->t.id, m->target = m->t.name;
  rt_err terr = {0};
  if (tg_resolve(m->target, &m->tg, &terr)) m->tg.be = NULL;
  if (need_kernel && (!m->tg.be || !(m->hk = tg_kernel(&m->tg, o->kernel))))
    rc = cli_fail(cmd, "kernel '%s' is not a kernel of target %s (rooftune kernels --target %s)",
                  o->kernel, m->target, m->tg.be ? m->tg.name : "T");
  else if (need_kernel && !(m->km = cm_kmodel_find_on(m->tg.be->model_family, o->kernel)))
    rc = cli_fail(cmd, "kernel %s has no cost model", o->kernel);
  else if (need_kernel && ceilings)
    rc = mctx_ceilings(m, o, cmd);
  if (rc) mctx_close(m);
  return rc;
}

/* The kernel's space bound to one workload's variables; NULL after
** reporting. */
static sp_space *workload_space(const kn_kernel *k, const char *set, const char *cmd) {
  char path[4096];
  rt_err err = {0};
  sx_arena *arena = sx_arena_new();
  sp_binding *b = NULL;
  int nb = set ? sp_parse_bindings(set, arena, &b, &err) : 0;
  sp_space *sp = nb < 0 ? NULL : sp_load_file(rt_project_path(k->space, path, sizeof path), b, nb, &err);
  free(b);
  sx_arena_free(arena);
  if (!sp) cli_fail(cmd, "%s", err.msg);
  return sp;
}

/* The database id of the workload sp binds (registered when new). */
static int workload_id(mctx *m, const sp_space *sp, const kn_problem *pb, int64_t *wid,
                       rt_err *err) {
  int64_t kid;
  char *key = db_workload_key(m->hk->name, m->hk->dtype, sp), *sizes = db_workload_sizes(sp);
  int rc = db_kernel_id(m->d, m->hk->name, "rooftune-" RT_VERSION, &kid, err) ||
           db_workload_id(m->d, kid, key, sizes, m->hk->dtype, kn_str(pb, "layout"), wid, err);
  free(key), free(sizes);
  return rc ? -1 : 0;
}

/* Counted traffic of a schedule (a counter source: tg_backend.traffic) into
** bytes[] (NAN where not counted): 1 found, 0 none, -1 error. */
static int counted_of(mctx *m, int64_t wid, const char *hash, const char *source,
                      double bytes[CM_NLEVEL], double *flops, rt_err *err) {
  char *data = NULL;
  int found = db_counters_get(m->d, m->target_id, wid, hash, source, &data, err);
  if (found != 1) return found;
  json_t *j = json_loads(data, 0, NULL);
  for (int l = 0; l < CM_NLEVEL; l++) {
    json_t *v = j ? json_object_get(j, cm_bound_name(CM_LEVEL(l))) : NULL;
    bytes[l] = json_is_number(v) ? json_number_value(v) : NAN;
  }
  /* FP32 operations from the counted instructions where the source counts
  ** them (the GPU profiler's sass thread-instruction metrics: an FMA is two) */
  static const struct { const char *metric; double ops; } fp32[] = {
    {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 2},
    {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", 1},
    {"sm__sass_thread_inst_executed_op_fmul_pred_on.sum", 1},
  };
  json_t *mx = j ? json_object_get(j, "metrics") : NULL;
  *flops = mx ? 0 : NAN;
  for (size_t i = 0; mx && i < sizeof fp32 / sizeof *fp32; i++) {
    json_t *v = json_object_get(mx, fp32[i].metric);
    *flops = json_is_number(v) && isfinite(*flops) ? *flops + fp32[i].ops * json_number_value(v) : NAN;
  }
  json_decref(j);
  free(data);
  return 1;
}

/* The coefficients the options select into c. */
static int pick_coefs(mctx *m, const mopts *o, cm_coefs *c, const char *cmd) {
  rt_err err = {0};
  if (o->defaults) {
    cm_coefs_default(m->km, c);
    return 0;
  }
  if (cm_coefs_load(m->d, m->target_id, m->km, o->version, c, &err)) return cli_fail(cmd, "%s", err.msg);
  return 0;
}

/* ---- predict, explain ---- */

/* The measured trials of one configuration of a workload on the target. */
typedef struct meas {
  const char *canon;
  int n;
  double t, lo, hi;
  int64_t trial, campaign;
} meas;

static int meas_row(void *ctx, const db_trial_row *r) {
  meas *ms = ctx;
  if (strcmp(r->config, ms->canon) || strcmp(r->status, "ok")) return 0;
  if (!ms->n || r->time_s < ms->t)
    ms->t = r->time_s, ms->lo = r->ci_lo_s, ms->hi = r->ci_hi_s, ms->trial = r->id,
    ms->campaign = r->campaign_id;
  ms->n++;
  return 0;
}

static const char *const bound_work_unit[CM_NBOUND] = {"FLOP", "B", "B", "B", "B", ""};

/* Where a measured time t of work[] sits under the ceilings: the rate and
** the fraction of its ceiling for each bound with work and a ceiling, the
** largest fraction marked (the roof the schedule is nearest); printed as
** one "achieved" line about `what` (NULL frac: print), or into frac[]. */
static void achieved(const char *what, const double work[CM_NBOUND], const double ceiling[CM_NBOUND],
                     double t, double frac[CM_NBOUND]) {
  int best = -1;
  double f[CM_NBOUND];
  for (int b = 0; b < CM_NBOUND; b++) {
    f[b] = b != CM_OVERHEAD && work[b] > 0 && ceiling[b] > 0 && t > 0 ? work[b] / t / ceiling[b] : NAN;
    if (isfinite(f[b]) && (best < 0 || f[b] > f[best])) best = b;
    if (frac) frac[b] = f[b];
  }
  if (frac) return;
  printf("achieved   %s:", what);
  for (int b = 0; b < CM_NBOUND; b++)
    if (isfinite(f[b]))
      printf("  %s %.4g G%s/s = %.1f%%%s", cm_bound_name((cm_bound)b), work[b] / t * 1e-9,
             b == CM_COMPUTE ? "FLOP" : "B", 100 * f[b], b == best ? " <- nearest roof" : "");
  if (best < 0) printf("  no work with a ceiling to place it by");
  printf("\n");
}

/* The prediction's uncertainty line (cost_model/cm.h invariant 6). */
static void print_unc(const cm_coefs *c, const cm_pred *p) {
  double sd = cm_unc_sigma(&c->unc, p->bound);
  int own = isfinite(c->unc.bound[p->bound]);
  if (!isfinite(sd)) {
    printf("uncertain  not known (%s: recalibrate to measure it)\n",
           c->version ? "a calibration stored before rooftune kept it" : "the defaults");
    return;
  }
  printf("uncertain  x/%.3g (log sd %.3f of %s %d %s schedules%s%s): %.6g to %.6g ms\n", exp(sd), sd,
         c->unc.held_out ? "the" : "the calibration's", own ? c->unc.nb[p->bound] : c->unc.n,
         c->unc.held_out ? "held-out" : "fitted", own ? " limited by " : "", own ? cm_bound_name(p->bound) : "",
         p->time * exp(-sd) * 1e3, p->time * exp(sd) * 1e3);
}

static int predict_or_explain(const mopts *o, const char *cmd, int explain) {
  mctx m;
  int rc = mctx_open(&m, o, cmd, 1, 1, DB_CREATE, 0);   /* may store ceilings */
  if (rc) return rc;
  rt_err err = {0};
  /* The device's limits bound as tune binds them (the row's
  ** limit_bindings) when the target is this machine and they can be
  ** asked; else the space's Defaults stand for them, as before. */
  const char *user = o->nset ? o->set[0] : NULL;
  char *bound = m.t.here && m.tg.be && m.tg.be->limit_bindings ? tg_kernel_bindings(&m.tg, m.hk, user, &err)
                                                                 : NULL;
  err.msg[0] = 0;
  sp_space *sp = workload_space(m.hk, bound ? bound : user, cmd);
  free(bound);
  int *cfg = sp ? rt_malloc((size_t)sp_nparams(sp) * sizeof *cfg) : NULL, failed;
  cm_coefs c;
  if (!sp) rc = EXIT_FAIL;   /* before the ceilings: a bad --set is said at once */
  else if (!strcmp(o->config, "default") ? !sp_default_config(sp, cfg)
                                          : sp_config_parse(sp, o->config, cfg, &err))
    rc = cli_fail(cmd, "%s", err.msg[0] ? err.msg : "the space has no complete default");
  else if (!sp_valid(sp, cfg, &failed))
    rc = cli_fail(cmd, "the configuration is invalid: condition %d is false: %s", failed,
                  sp_cond_text(sp, failed));
  else if (!(rc = mctx_ceilings(&m, o, cmd)))
    rc = pick_coefs(&m, o, &c, cmd);
  if (rc) {
    free(cfg), sp_free(sp), mctx_close(&m);
    return rc;
  }
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  cm_pred p;
  if (cm_predict(m.km, &pb, sp, cfg, &m.ce, &c, o->flush, &p, &err)) {
    free(cfg), sp_free(sp), mctx_close(&m);
    return cli_fail(cmd, "%s", err.msg);
  }
  char *canon = sp_config_json(sp, cfg), *wkey = db_workload_key(m.hk->name, m.hk->dtype, sp);
  meas ms = {.canon = canon};
  db_trial_filter f = {.target_id = m.target_id, .kernel = m.hk->name, .workload_key = wkey};
  if (explain && db_trials(m.d, &f, meas_row, &ms, &err) < 0) ms.n = 0;
  double flops = m.hk->flops(&pb);
  double work[CM_NBOUND] = {p.w.flops, p.w.bytes[0], p.w.bytes[1], p.w.bytes[2], p.w.bytes[3], 0};
  if (o->json) {
    jw w;
    jw_init(&w, stdout);
    jw_begin(&w, '{');
    jw_key(&w, "kernel"); jw_str(&w, m.hk->name);
    jw_key(&w, "target"); jw_str(&w, m.target);
    jw_key(&w, "fingerprint"); jw_str(&w, m.t.fingerprint);
    jw_key(&w, "workload"); jw_str(&w, wkey);
    jw_key(&w, "config"); jw_raw(&w, canon);
    jw_key(&w, "coefficients"); jw_str(&w, c.source);
    jw_key(&w, "ceilings_measured"); jw_str(&w, m.ce.measured);
    jw_key(&w, "predicted_s"); jw_double(&w, p.time);
    jw_key(&w, "predicted_gflops"); jw_double(&w, flops / p.time * 1e-9);
    jw_key(&w, "bound"); jw_str(&w, cm_bound_name(p.bound));
    /* cost_model/cm.h invariant 6: the spread of log(measured / predicted) */
    double sd = cm_unc_sigma(&c.unc, p.bound);
    jw_key(&w, "uncertainty");
    if (isfinite(sd)) {
      jw_begin(&w, '{');
      jw_key(&w, "log_sd"); jw_double(&w, sd);
      jw_key(&w, "interval_68_s"); jw_begin(&w, '['); jw_double(&w, p.time * exp(-sd));
      jw_double(&w, p.time * exp(sd)); jw_end(&w, ']');
      jw_key(&w, "of"); jw_str(&w, isfinite(c.unc.bound[p.bound]) ? cm_bound_name(p.bound) : "all");
      jw_key(&w, "n"); jw_int(&w, isfinite(c.unc.bound[p.bound]) ? c.unc.nb[p.bound] : c.unc.n);
      jw_key(&w, "on"); jw_str(&w, c.unc.held_out ? "held-out" : "fitted");
      jw_end(&w, '}');
    } else {
      jw_raw(&w, "null");
    }
    jw_key(&w, "threads"); jw_int(&w, p.w.threads);
    jw_key(&w, "bounds");
    jw_begin(&w, '{');
    for (int b = 0; b < CM_NBOUND; b++) {
      jw_key(&w, cm_bound_name((cm_bound)b));
      jw_begin(&w, '{');
      if (b != CM_OVERHEAD) { jw_key(&w, "work"); jw_double(&w, work[b]); }
      if (b != CM_OVERHEAD) { jw_key(&w, "ceiling"); jw_double(&w, p.ceiling[b]); }
      jw_key(&w, "time_s"); jw_double(&w, p.t[b]);
      jw_key(&w, "fraction"); jw_double(&w, p.frac[b]);
      jw_end(&w, '}');
    }
    jw_end(&w, '}');
    jw_key(&w, "efficiency");
    jw_begin(&w, '{');
    for (int j = 0; j < m.km->neff; j++) {
      jw_key(&w, m.km->eff_names[j]);
      jw_double(&w, p.w.eff[j]);
    }
    jw_end(&w, '}');
    if (explain) {
      jw_key(&w, "measured");
      if (ms.n) {
        jw_begin(&w, '{');
        jw_key(&w, "time_s"); jw_double(&w, ms.t);
        jw_key(&w, "ci95"); jw_begin(&w, '['); jw_double(&w, ms.lo); jw_double(&w, ms.hi); jw_end(&w, ']');
        jw_key(&w, "trial"); jw_int(&w, ms.trial);
        jw_key(&w, "trials"); jw_int(&w, ms.n);
        jw_key(&w, "model_error"); jw_double(&w, p.time / ms.t - 1);
        double fr[CM_NBOUND];
        achieved(NULL, work, p.ceiling, ms.t, fr);
        jw_key(&w, "achieved");
        jw_begin(&w, '{');
        for (int b = 0; b < CM_NBOUND; b++)
          if (isfinite(fr[b])) { jw_key(&w, cm_bound_name((cm_bound)b)); jw_double(&w, fr[b]); }
        jw_end(&w, '}');
        jw_end(&w, '}');
      } else {
        jw_raw(&w, "null");
      }
    }
    jw_end(&w, '}');
    fputc('\n', stdout);
  } else if (!explain) {
    printf("predicted %.6g s (%.2f GFLOP/s), bound %s (%.0f%% of its ceiling), %d thread%s\n",
           p.time, flops / p.time * 1e-9, cm_bound_name(p.bound), 100 * p.frac[p.bound],
           p.w.threads, p.w.threads > 1 ? "s" : "");
    print_unc(&c, &p);
  } else {
    printf("schedule   %s\nworkload   %s: %.4g FLOP, %.4g B compulsory\n", canon, wkey, flops,
           m.hk->min_bytes(&pb));
    printf("target     %s, fingerprint %.12s (%s)\n", m.target, m.t.fingerprint, m.t.model);
    printf("model      %s (%s); ceilings measured %s\n\n", m.km->kernel, c.source, m.ce.measured);
    printf("%-9s %12s %16s %12s %10s\n", "bound", "work", "ceiling", "time alone", "of ceiling");
    for (int b = 0; b < CM_NBOUND; b++) {
      char wbuf[32] = "", cbuf[32] = "";
      if (b != CM_OVERHEAD) {
        snprintf(wbuf, sizeof wbuf, "%.4g %s", work[b], bound_work_unit[b]);
        snprintf(cbuf, sizeof cbuf, "%.4g G%s/s", p.ceiling[b] * 1e-9, b == CM_COMPUTE ? "FLOP" : "B");
      }
      printf("%-9s %12s %16s %10.4g ms %9.1f%%%s\n", cm_bound_name((cm_bound)b), wbuf, cbuf,
             p.t[b] * 1e3, 100 * p.frac[b], b == (int)p.bound ? "  <- limits" : "");
    }
    printf("\npredicted  %.6g ms = overhead + the bounds overlapped as a %.2f-norm; "
           "%.2f GFLOP/s on %d thread%s (imbalance %.3f)\n", p.time * 1e3, c.v[CM_C_OVERLAP],
           flops / p.time * 1e-9, p.w.threads, p.w.threads > 1 ? "s" : "", p.w.imbalance);
    printf("efficiency");
    for (int j = 0; j < m.km->neff; j++)
      printf("  %s %.3f^%.2f", m.km->eff_names[j], p.w.eff[j], c.v[CM_C_EFF0 + j]);
    printf("  (x eff_compute %.3f)\n", c.v[CM_C_COMPUTE]);
    print_unc(&c, &p);
    if (ms.n)
      printf("measured   %.6g ms [%.6g, %.6g] (trial %lld of campaign %lld; %d trial%s): "
             "%.2f GFLOP/s, model error %+.1f%%\n", ms.t * 1e3, ms.lo * 1e3, ms.hi * 1e3,
             (long long)ms.trial, (long long)ms.campaign, ms.n, ms.n > 1 ? "s" : "",
             flops / ms.t * 1e-9, 100 * (p.time / ms.t - 1));
    if (ms.n) achieved("the model's work in the measured time", work, p.ceiling, ms.t, NULL);
    else
      printf("measured   not in %s for target %s and this workload\n", o->db, m.target);
    /* Counted: by any source of any backend (tg_backend.traffic: a warm
    ** or a cold run); the counters table holds this target's only. */
    int64_t wid;
    char hash[33];
    db_config_hash(canon, hash);
    int have_wid = !workload_id(&m, sp, &pb, &wid, &err);
    for (int b = 0; tg_backends[b] && have_wid; b++)
      for (const tg_traffic *ts = tg_backends[b]->traffic; ts && ts->source; ts++) {
      double cb[CM_NLEVEL], cf;
      if (counted_of(&m, wid, hash, ts->source, cb, &cf, &err) != 1) continue;
      cm_pred pc;
      if (cm_predict(m.km, &pb, sp, cfg, &m.ce, &c, ts->cold, &pc, &err)) continue;
      printf("counted    %s (%s run):", ts->source, ts->cold ? "one cold" : "a warm");
      for (int l = 1; l < CM_NLEVEL; l++)
        if (isfinite(cb[l]))
          printf("  %s %.4g B (model %.4g)", cm_bound_name(CM_LEVEL(l)), cb[l], pc.w.bytes[l]);
      if (isfinite(cf)) printf("  FP32 %.4g FLOP (stated %.4g)", cf, p.w.flops);
      printf("\n");
      if (ms.n) {   /* the measured time on the counted work */
        double cw[CM_NBOUND] = {isfinite(cf) ? cf : 0, 0, 0, 0, 0, 0};
        for (int l = 1; l < CM_NLEVEL; l++) cw[CM_LEVEL(l)] = isfinite(cb[l]) ? cb[l] : 0;
        char what[64];
        snprintf(what, sizeof what, "%s counts", ts->source);
        achieved(what, cw, p.ceiling, ms.t, NULL);
      }
    }
    /* Why: the limiting bound and the largest efficiency loss. */
    int worst = -1;   /* the largest loss as the model weighs it: eff ^ exponent */
    double lw = 0.999;
    for (int j = 0; j < m.km->neff; j++) {
      double e = pow(p.w.eff[j], c.v[CM_C_EFF0 + j]);
      if (e < lw) lw = e, worst = j;
    }
    printf("why        %s-bound: it would use %.0f%% of the %s ceiling", cm_bound_name(p.bound),
           100 * p.frac[p.bound], cm_bound_name(p.bound));
    if (p.bound != CM_COMPUTE) printf(" and %.0f%% of the FLOP/s peak", 100 * p.frac[CM_COMPUTE]);
    if (worst >= 0)
      printf("; its largest compute loss is %s (%.2f^%.2f = %.2f)", m.km->eff_names[worst],
             p.w.eff[worst], c.v[CM_C_EFF0 + worst], lw);
    printf("\n");
  }
  free(canon), free(wkey), free(cfg), sp_free(sp), mctx_close(&m);
  return EXIT_OK;
}

static int mc_predict(const mopts *o, const char *cmd) { return predict_or_explain(o, cmd, 0); }
static int mc_explain(const mopts *o, const char *cmd) { return predict_or_explain(o, cmd, 1); }

/* ---- The measured schedules of a kernel's workloads ---- */

typedef struct wl {
  char *set, *key;
  sp_space *sp;
  kn_problem pb;
} wl;

typedef struct sample_set {
  wl w[MAXSET];
  int nw;
  cm_sample *s;          /* one per distinct (workload, configuration) */
  char **hash;           /* its config hash */
  int n, cap, np_max;
  int loaded;            /* verified trials left out: stored as measured under load */
  int *cfgs;             /* owned configurations (n * np_max) */
  int cur;               /* workload being read */
} sample_set;

static int sample_row(void *ctx, const db_trial_row *r) {
  sample_set *ss = ctx;
  if (strcmp(r->status, "ok") || !(r->time_s > 0)) return 0;
  if (r->loaded) {   /* busy: not evidence */
    ss->loaded++;
    return 0;
  }
  wl *w = &ss->w[ss->cur];
  int np = sp_nparams(w->sp);
  int *cfg = rt_malloc((size_t)np * sizeof *cfg);
  rt_err err = {0};
  if (sp_config_parse(w->sp, r->config, cfg, &err)) {
    free(cfg);
    return 0;   /* a schedule of another space version: not this model's */
  }
  char h[33];
  db_config_hash(r->config, h);
  for (int i = 0; i < ss->n; i++)       /* one time per schedule: the fastest */
    if (ss->s[i].sp == w->sp && !strcmp(ss->hash[i], h)) {
      if (r->time_s < ss->s[i].t) ss->s[i].t = r->time_s;
      free(cfg);
      return 0;
    }
  if (ss->n == ss->cap) {
    ss->cap = ss->cap ? 2 * ss->cap : 256;
    ss->s = rt_realloc(ss->s, (size_t)ss->cap * sizeof *ss->s);
    ss->hash = rt_realloc(ss->hash, (size_t)ss->cap * sizeof *ss->hash);
  }
  ss->s[ss->n] = (cm_sample){&w->pb, w->sp, cfg, r->time_s};
  ss->hash[ss->n++] = rt_strdup(h);
  return 0;
}

static void samples_free(sample_set *ss) {
  for (int i = 0; i < ss->n; i++) free((void *)ss->s[i].cfg), free(ss->hash[i]);
  for (int i = 0; i < ss->nw; i++) free(ss->w[i].set), free(ss->w[i].key), sp_free(ss->w[i].sp);
  free(ss->s), free(ss->hash);
}

/* Load the workloads (o->set, or all the target has for the kernel) and
** their measured schedules. Exit code on failure. */
static int load_samples(mctx *m, const mopts *o, const char *cmd, sample_set *ss) {
  rt_err err = {0};
  memset(ss, 0, sizeof *ss);
  char **keys = NULL;
  int nk = 0;
  if (!o->nset) {
    keys = m->t.keys, nk = m->t.nkeys;   /* the workloads the target holds trials of */
    if (nk > MAXSET) nk = MAXSET;
  }
  int nw = o->nset ? o->nset : nk, rc = 0;
  for (int i = 0; i < nw && !rc; i++) {
    wl *w = &ss->w[ss->nw];
    w->set = o->nset ? rt_strdup(o->set[i]) : cli_key_bindings(keys[i]);
    if (!w->set) w->set = rt_strdup("");
    if (!(w->sp = workload_space(m->hk, w->set, cmd))) {
      free(w->set);
      rc = EXIT_FAIL;
      break;
    }
    kn_problem_from_space(&w->pb, w->sp);
    w->key = db_workload_key(m->hk->name, m->hk->dtype, w->sp);
    ss->nw++;
    ss->cur = ss->nw - 1;
    db_trial_filter f = {.target_id = m->target_id, .kernel = m->hk->name, .workload_key = w->key};
    if (db_trials(m->d, &f, sample_row, ss, &err) < 0) rc = cli_fail(cmd, "%s", err.msg);
  }
  if (!rc && ss->n < 2) {
    char what[200] = "tune or measure some first";
    if (ss->loaded)   /* the guard kept them out: say so, not "measure some" */
      snprintf(what, sizeof what, "its other %d verified trial%s were measured on a busy machine "
               "(stored loaded) and are left out; measure again on a quiet machine", ss->loaded,
               ss->loaded == 1 ? "" : "s");
    rc = cli_fail(cmd, "%d measured schedule%s of %s on target %s (fingerprint %.12s) in %s: %s "
                  "(rooftune tune --kernel %s ...)", ss->n, ss->n == 1 ? "" : "s", m->hk->name,
                  m->target, m->t.fingerprint, o->db, what, m->hk->name);
  }
  if (rc) samples_free(ss);
  return rc;
}

/* mctx_open then load_samples; an exit code on failure (nothing open). */
static int open_samples(mctx *m, const mopts *o, const char *cmd, sample_set *ss) {
  int rc = mctx_open(m, o, cmd, 1, 0, DB_WRITE, 1);   /* stores workloads, counts, versions */
  if (!rc && (rc = load_samples(m, o, cmd, ss))) mctx_close(m);
  return rc;
}

/* ---- Accuracy ---- */

static void print_acc(const char *what, const tu_acc *a) {
  printf("  %-28s %5d %8.3f %8.3f %6s %6s %6s %9.1f%%\n", what, a->n, a->rho, a->tau,
         a->top[0] ? "yes" : "no", a->top[1] ? "yes" : "no", a->top[2] ? "yes" : "no",
         100 * a->mre);
}

/* ---- Counted traffic and the byte terms ---- */

typedef tu_counted counted;

/* Count (or read back) the traffic of up to want one-thread training
** schedules of the first workload. Returns how many were counted. */
static int count_traffic(mctx *m, sample_set *ss, const int *train, int want, counted *out,
                         char *source, rt_err *err) {
  int n = 0;
  const char *why = NULL;
  const char *src_name = m->tg.be->traffic_source(&m->tg, m->t.here, &why);
  if (!src_name) {
    rt_err_set(err, "%s", why);
    return 0;
  }
  snprintf(source, 16, "%s", src_name);
  if (!m->tg.be->traffic_count) {   /* counts stored by tune --counters only */
    int64_t wid;
    if (workload_id(m, ss->w[0].sp, &ss->w[0].pb, &wid, err)) return 0;
    for (int i = 0; i < ss->n && n < want; i++) {
      if (!train[i] || ss->s[i].sp != ss->w[0].sp) continue;
      if (counted_of(m, wid, ss->hash[i], source, out[n].bytes, &(double){0}, err) != 1) continue;
      out[n++].idx = i;
    }
    if (!n) rt_err_set(err, "no trial of the training set has %s counts (tune --counters on "
                       "the target)", source);
    return n;
  }
  /* The row counts now (tg_backend.traffic_count): a source counting this
  ** machine's caches only for its own trials (traffic_source decides),
  ** a simulating one with the target's stored cache geometry. */
  cm_machine mach;
  cm_machine_from_ceilings(&mach, &m->ce);
  mach.flush = 1;
  ms_opts mo;
  ms_opts_default(&mo);
  int64_t wid;   /* the counted schedules are of the first workload */
  if (workload_id(m, ss->w[0].sp, &ss->w[0].pb, &wid, err)) return 0;
  for (int i = 0; i < ss->n && n < want; i++) {
    const cm_sample *s = &ss->s[i];
    if (!train[i] || s->sp != ss->w[0].sp) continue;
    if (sp_param_index(s->sp, "threads") >= 0 && kn_param_int(s->sp, s->cfg, "threads") != 1) continue;
    char *canon = sp_config_json(s->sp, s->cfg);
    cm_traffic tr;
    int found = counted_of(m, wid, ss->hash[i], source, tr.bytes, &(double){0}, err);
    if (found == 0) {
      char *src = m->hk->codegen(s->pb, s->sp, s->cfg);
      int rc = m->tg.be->traffic_count(&m->tg, source, m->hk, s->pb, src, &mach, mo.cache_dir, &tr, err);
      free(src);
      if (!rc) {
        json_t *j = json_pack("{s:s}", "config", tr.config);
        for (int l = 0; l < CM_NLEVEL; l++)
          if (isfinite(tr.bytes[l]))
            json_object_set_new(j, cm_bound_name(CM_LEVEL(l)), json_real(tr.bytes[l]));
        char *js = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
        db_counters_put(m->d, m->target_id, wid, canon, source, js, err);
        free(js);
        json_decref(j);
      } else {
        fprintf(stderr, "rooftune model calibrate: counting %s: %s\n", canon, err->msg);
        found = -1;
      }
    }
    free(canon);
    if (found < 0) continue;
    out[n].idx = i;
    memcpy(out[n].bytes, tr.bytes, sizeof tr.bytes);
    n++;
  }
  return n;
}

/* ---- calibrate ---- */

/* The traffic counter of a calibration (tu_count_fn): count_traffic on
** the schedules of the open database. */
typedef struct count_ctx {
  mctx *m;
  sample_set *ss;
} count_ctx;

static int count_cb(void *ctx, const int *train, int want, tu_counted *out, char *source, int *cold,
                    rt_err *err) {
  count_ctx *c = ctx;
  int n = count_traffic(c->m, c->ss, train, want, out, source, err);
  *cold = tg_traffic_cold(source);
  return n;
}

/* Load the schedules, calibrate (tu_calibrate), store the version, print. */
static int mc_calibrate(const mopts *o, const char *cmd) {
  mctx m;
  sample_set ss;
  int rc = open_samples(&m, o, cmd, &ss);
  if (rc) return rc;
  rt_err err = {0};
  const sp_space *spaces[MAXSET];
  const char *keys[MAXSET];
  for (int i = 0; i < ss.nw; i++) spaces[i] = ss.w[i].sp, keys[i] = ss.w[i].key;
  count_ctx cc = {&m, &ss};
  tu_cal_in in = {.km = m.km, .ce = &m.ce, .s = ss.s, .hash = (const char *const *)ss.hash, .n = ss.n,
                  .wl = spaces, .wl_key = keys, .nwl = ss.nw, .holdout = o->holdout, .seed = o->seed,
                  .flush = o->flush, .gpu = m.tg.be->gpu, .counters = o->counters, .count = count_cb,
                  .count_ctx = &cc};
  tu_cal_out r = {0};
  char *cj = NULL;
  if ((rc = pick_coefs(&m, o, &in.before, cmd))) goto out;
  if (tu_calibrate(&in, &r, &err)) {
    rc = cli_fail(cmd, "%s", err.msg);
    goto out;
  }
  const cm_coefs *before = &in.before, *defs = &r.defs, *after = &r.after;
  cj = cm_coefs_json(m.km, after);
  int version = 0;
  if (db_model_put(m.d, m.target_id, m.km->kernel, cj, r.fit_json, &version, &err))
    rc = cli_fail(cmd, "%s", err.msg);
  if (!rc && o->json) {
    jw w;
    jw_init(&w, stdout);
    jw_begin(&w, '{');
    jw_key(&w, "kernel"); jw_str(&w, m.km->kernel);
    jw_key(&w, "version"); jw_int(&w, version);
    jw_key(&w, "coefficients"); jw_raw(&w, cj);
    jw_key(&w, "fit"); jw_raw(&w, r.fit_json);
    jw_end(&w, '}');
  } else if (!rc) {
    printf("calibrated %s on %s %s (%s): version %d\n", m.km->kernel, m.target, m.t.fingerprint,
           m.t.model, version);
    for (int i = 0; i < ss.nw; i++) printf("workload   %s\n", ss.w[i].key);
    printf("schedules  %d measured: %d fitted, %d held out (share %.2f, seed %lu)\n", ss.n, r.ntrain,
           r.ntest, o->holdout, o->seed);
    if (r.counted) {
      printf("bytes      %d schedules counted with %s; model/counted (median) per level, before -> after:\n",
             r.counted, r.source);
      for (int l = 0; l < 3; l++) {
        int ci = r.cap_idx[l];
        printf("             %-5s %.3f -> %.3f  (median |log error| %.3f -> %.3f)",
               cm_bound_name(CM_LEVEL(l + 1)), r.brat0[l], r.brat1[l], r.berr0[l], r.berr1[l]);
        if (ci >= 0) printf("  %s = %.2f", r.cap[l], r.start.v[ci]);
        printf("\n");
      }
    } else if (o->counters > 0) {
      printf("bytes      not counted: %s\n", r.count_why[0] ? r.count_why : "no one-thread schedule to count");
    }
    printf("time fit   rms of log(predicted/measured) %.3f -> %.3f (%d iterations, %d reweighting "
           "rounds, %d outliers)\n", r.fit.rms_before, r.fit.rms_after, r.fit.iters, r.fit.irls_rounds,
           r.fit.n_outliers);
    for (int i = 0; i < ss.nw; i++) {
      printf("\n%s, accuracy on the %s schedules:\n  %-28s %5s %8s %8s %6s %6s %6s %10s\n",
             ss.w[i].key, r.ntest ? "held-out" : "fitted (none held out)", "", "n", "spearman",
             "kendall", "top1", "top5", "top10", "med.err");
      print_acc("defaults", &r.a_def[i]);
      if (before->version) print_acc(before->source, &r.a_before[i]);
      print_acc("this calibration", &r.a_after[i]);
      print_acc("this calibration, fitted ones", &r.t_after[i]);
    }
    printf("(topk: a schedule within 5%% of the best measured is among the model's k fastest)\n");
    printf("\ncoefficients (default -> calibrated):\n");
    for (int j = 0; j < m.km->ncoef; j++)
      printf("  %-12s %10.4g -> %-10.4g %s%s\n", m.km->coefs[j].name, defs->v[j], after->v[j],
             m.km->coefs[j].what, r.fixed[j] ? " [held]" : "");
  }
out:
  free(cj);
  tu_cal_out_free(&r);
  samples_free(&ss);
  mctx_close(&m);
  return rc;
}

/* ---- accuracy ---- */

/* A CSV field: the text quoted, its quotes doubled. */
static void csv_quoted(FILE *f, const char *t) {
  fputc('"', f);
  for (; *t; t++) {
    if (*t == '"') fputc('"', f);
    fputc(*t, f);
  }
  fputc('"', f);
}

/* The scored schedules as CSV rows into f (cal NULL: no calibrated
** column). */
static void write_points(FILE *f, mctx *m, const sample_set *ss, const int *use, const cm_coefs *defs,
                         const cm_coefs *cal, int flush) {
  fprintf(f, "workload,config,measured_s,predicted_defaults_s,predicted_calibrated_s,bound\n");
  for (int i = 0; i < ss->n; i++) {
    if (!use[i]) continue;
    const cm_sample *s = &ss->s[i];
    cm_pred pd, pc;
    rt_err e;
    if (cm_predict(m->km, s->pb, s->sp, s->cfg, &m->ce, defs, flush, &pd, &e)) continue;
    if (cal && cm_predict(m->km, s->pb, s->sp, s->cfg, &m->ce, cal, flush, &pc, &e)) continue;
    char *canon = sp_config_json(s->sp, s->cfg), *key = db_workload_key(m->hk->name, m->hk->dtype, s->sp);
    csv_quoted(f, key);
    fputc(',', f);
    csv_quoted(f, canon);
    fprintf(f, ",%.9g,%.9g,", s->t, pd.time);
    if (cal) fprintf(f, "%.9g", pc.time);
    fprintf(f, ",%s\n", cm_bound_name(cal ? pc.bound : pd.bound));
    free(canon), free(key);
  }
}

static int mc_accuracy(const mopts *o, const char *cmd) {
  mctx m;
  sample_set ss;
  int rc = open_samples(&m, o, cmd, &ss);
  if (rc) return rc;
  rt_err err = {0};
  cm_coefs cal, defs;
  cm_coefs_default(m.km, &defs);
  char *fit = NULL;
  int version = 0;
  int found = db_model_get(m.d, m.target_id, m.km->kernel, o->version, NULL, &fit, &version, NULL, &err);
  if (found < 0 || (o->version && !found)) {
    rc = cli_fail(cmd, "%s", found < 0 ? err.msg : "no such version");
    goto out;
  }
  int stale = 0;   /* the latest is of an older form of the model: the defaults alone */
  if (found && cm_coefs_load(m.d, m.target_id, m.km, version, &cal, &err)) {
    if (o->version || !strstr(err.msg, "an older form of the model")) {
      rc = cli_fail(cmd, "%s", err.msg);
      goto out;
    }
    stale = 1, found = 0;
    free(fit);
    fit = NULL;
  }
  /* The held-out split of that calibration. */
  double share = 0;
  unsigned long seed = 1;
  json_t *fj = fit ? json_loads(fit, 0, NULL) : NULL;
  if (fj) {
    share = json_number_value(json_object_get(fj, "holdout"));
    seed = (unsigned long)json_integer_value(json_object_get(fj, "seed"));
  }
  json_decref(fj);
  int *use = rt_malloc((size_t)ss.n * sizeof *use), nuse = 0;
  for (int i = 0; i < ss.n; i++) nuse += use[i] = o->all || !found || tu_held_out(ss.hash[i], seed, share);
  const char *what = stale   ? "every schedule (the latest calibration is of an older form of the model)"
                     : !found ? "every schedule (no calibration stored)"
                     : o->all ? "every schedule (training ones included)"
                     : nuse ? "schedules held out of the calibration"
                            : "every schedule (the calibration held none out)";
  if (!nuse)
    for (int i = 0; i < ss.n; i++) use[i] = 1, nuse++;
  tu_acc a_def[MAXSET], a_cal[MAXSET];
  for (int i = 0; i < ss.nw; i++) {
    tu_accuracy(m.km, &m.ce, &defs, o->flush, ss.s, use, ss.n, ss.w[i].sp, &a_def[i]);
    if (found) tu_accuracy(m.km, &m.ce, &cal, o->flush, ss.s, use, ss.n, ss.w[i].sp, &a_cal[i]);
  }
  if (o->csv) {   /* the README's "Output files": never the database itself */
    rt_out csv;
    if (!(rc = cli_out_open(&csv, cmd, o->csv, o->db, NULL))) {
      write_points(csv.f, &m, &ss, use, &defs, found ? &cal : NULL, o->flush);
      if (rt_out_commit(&csv, &err)) rc = cli_fail(cmd, "%s", err.msg);
    }
    if (rc) {
      free(use);
      goto out;
    }
  }
  if (o->json) {
    jw w;
    jw_init(&w, stdout);
    jw_begin(&w, '{');
    jw_key(&w, "kernel"); jw_str(&w, m.km->kernel);
    jw_key(&w, "on"); jw_str(&w, what);
    jw_key(&w, "version"); jw_int(&w, version);
    jw_key(&w, "workloads");
    jw_begin(&w, '[');
    for (int i = 0; i < ss.nw; i++) {
      jw_begin(&w, '{');
      jw_key(&w, "workload"); jw_str(&w, ss.w[i].key);
      jw_key(&w, "defaults"); tu_acc_json(&w, &a_def[i]);
      jw_key(&w, "calibrated"); if (found) tu_acc_json(&w, &a_cal[i]); else jw_raw(&w, "null");
      jw_end(&w, '}');
    }
    jw_end(&w, ']');
    jw_end(&w, '}');
    fputc('\n', stdout);
  } else {
    printf("accuracy of the %s model on %s (%d of %d)\n", m.km->kernel, what, nuse, ss.n);
    for (int i = 0; i < ss.nw; i++) {
      printf("%s\n  %-28s %5s %8s %8s %6s %6s %6s %10s\n", ss.w[i].key, "", "n", "spearman",
             "kendall", "top1", "top5", "top10", "med.err");
      print_acc("defaults", &a_def[i]);
      if (found) print_acc(cal.source, &a_cal[i]);
    }
    printf("(topk: a schedule within 5%% of the best measured is among the model's k fastest)\n");
  }
  free(use);
out:
  free(fit);
  samples_free(&ss);
  mctx_close(&m);
  return rc;
}

/* ---- history ---- */

typedef struct hist { const mopts *o; const char *family; int n; jw w; } hist;

static int hist_row(void *ctx, const char *kernel, int version, const char *coefs,
                    const char *fit, const char *created) {
  hist *h = ctx;
  /* current: of this model's form (a campaign would start from it) */
  const cm_kmodel *k = cm_kmodel_find_on(h->family, kernel);
  cm_coefs c;
  rt_err e = {0};
  int current = k && !cm_coefs_parse(k, coefs, &c, &e);
  json_t *fj = json_loads(fit, 0, NULL);
  json_t *a = fj ? json_object_get(json_array_get(json_object_get(fj, "accuracy"), 0), "calibrated") : NULL;
  if (h->o->json) {
    jw_begin(&h->w, '{');
    jw_key(&h->w, "kernel"); jw_str(&h->w, kernel);
    jw_key(&h->w, "version"); jw_int(&h->w, version);
    jw_key(&h->w, "created"); jw_str(&h->w, created);
    jw_key(&h->w, "coefficients"); jw_raw(&h->w, coefs);
    jw_key(&h->w, "current"); jw_bool(&h->w, current);
    jw_key(&h->w, "fit");
    if (fj) jw_raw(&h->w, fit);
    else jw_str(&h->w, fit);   /* not JSON (written by hand before, a NaN as nan): as text */
    jw_end(&h->w, '}');
  } else {
    printf("%-10s %3d  %s  %3lld schedules  spearman %.3f (first workload, held out %lld)%s\n", kernel, version, created,
           (long long)json_integer_value(json_object_get(fj, "schedules")),
           json_number_value(json_object_get(a, "spearman")),
           (long long)json_integer_value(json_object_get(fj, "test")),
           current ? "" : "  [an older form of the model: not used]");
  }
  json_decref(fj);
  h->n++;
  return 0;
}

static int mc_history(const mopts *o, const char *cmd) {
  mctx m;
  int rc = mctx_open(&m, o, cmd, 0, 1, DB_READ, 0);
  if (rc) return rc;
  hist h = {.o = o, .family = m.tg.be ? m.tg.be->model_family : NULL};
  rt_err err = {0};
  if (o->json) {
    jw_init(&h.w, stdout);
    jw_begin(&h.w, '[');
  }
  if (db_model_list(m.d, m.target_id, o->kernel, hist_row, &h, &err) < 0) rc = cli_fail(cmd, "%s", err.msg);
  if (o->json) {
    jw_end(&h.w, ']');
    fputc('\n', stdout);
  } else if (!rc && !h.n) {
    printf("no calibration stored for target %s (fingerprint %.12s)%s%s\n", m.target,
           m.t.fingerprint, o->kernel ? " and kernel " : "", o->kernel ? o->kernel : "");
  }
  mctx_close(&m);
  return rc;
}

/* ---- The command ---- */

int cmd_model(int argc, char **argv) {
  int rc;
  const model_cmd *c = cli_pick("model", &cmd_model_group, argc, argv, &rc);
  if (!c) return rc;
  if (c->main) return c->main(argc - 1, argv + 1);
  mopts o;
  char cmd[64];
  snprintf(cmd, sizeof cmd, "model %s", c->sub.name);
  if ((rc = parse(c, argc - 1, argv + 1, &o, cmd))) return rc == CLI_HELP ? EXIT_OK : rc;
  return c->fn(&o, cmd);
}

