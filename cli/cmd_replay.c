/*
** cmd_replay.c -- `rooftune replay` (one strategy run against recorded
** results: a T4 file or a rooftune database) and `rooftune compare`
** (several strategies, several seeds each, scored with the methodology of
** Willemsen et al. against the exact expectation of random search, with
** the curves as CSV). Both share one option table and one recording
** loader; live comparisons run campaigns (tu_campaign). A database
** recording's target is the data's (cli_data_target): the one stored
** target holding the kernel's trials, or --fingerprint's. A T4 file
** without --space is replayed on the space of its recorded configurations
** (t4_inferred).
*/
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../cost_model/cm.h"
#include "../db/db.h"
#include "../measure/ms.h"
#include "../targets/host/hk.h"
#include "../targets/tg.h"
#include "../tuner/tu.h"
#include "../mpi/mp.h"
#include "cli.h"

typedef struct ropts {
  const char *t4, *space, *db, *target, *kernel, *set, *strategy, *budget, *csv, *reference;
  const char *fingerprint;   /* --db: the stored target whose fingerprint starts with it */
  int64_t campaign;
  uint64_t seed;
  double time_limit, time_cap;
  int json, repeats, batch, budget_set, recorded, time_cap_set;
  int live;   /* compare: live campaigns on --target (not a recording) */
  int mpi;    /* replay --mpi: evaluations sleep on MPI workers (mpi/mp.h) */
  double sleep_scale;
} ropts;

enum { R_REPLAY = 1, R_COMPARE = 2 };   /* the commands, as the rows' masks */

static const cli_spec replay_spec = {
  .cmd = "replay",
  .usage = "(--t4 FILE [--space T1] | --db F [--target T] [--fingerprint P] --kernel K [--space T1]\n"
           "        | --db F --campaign ID [--space T1])\n"
           "       [--set VAR=VAL,...] --strategy S [--budget N|P%] [--time-limit S]\n"
           "       [--seed S] [--batch N] [--json] [--mpi [--sleep-scale F]]",
  .about = "Run a strategy with recorded results as the objective: a T4 file, or the trials of\n"
           "a rooftune database (no hardware is needed).",
  .epilog = "--mpi, under mpirun -n N: the worker ranks 1..N-1 emulate the evaluations, each\n"
            "sleeping its recorded cost (compile + verify + measure) times --sleep-scale, while\n"
            "rank 0 runs the strategy (asynchronously where it can: tune's invariant 10); the\n"
            "report adds the wall time. A run is then not repeatable: results arrive by time.\n",
  .mask = R_REPLAY};
static const cli_spec compare_spec = {
  .cmd = "compare",
  .usage = "(--t4 FILE [--space T1] | --db F [--target T] [--fingerprint P] --kernel K [--space T1]\n"
           "        [--recorded] | --db F --campaign ID [--space T1]\n"
           "        | --target host --kernel K [--db F] [--reference N|P%] [--time-cap S])\n"
           "       [--set VAR=VAL,...] --strategies A,B,...|all [--budget N|P%] [--time-limit S]\n"
           "       [--repeats R] [--seed S] [--batch N] [--json] [--csv DIR]",
  .about = "Score strategies over repeats (seeds S, S+1, ...) against random search's exact\n"
           "expectation and the optimum (Willemsen et al.): 0 is random search, 1 the optimum.",
  .epilog = "live comparison (compare --target host --kernel K): every run is a campaign in the\n"
            "database (default rooftune.db), reusing what it measured before.\n",
  .mask = R_COMPARE};

/* Parse options for replay_spec or compare_spec; 0, CLI_HELP, or a usage
** error's exit code. */
static int parse_ropts(int argc, char **argv, const cli_spec *which, ropts *o) {
  memset(o, 0, sizeof *o);
  o->seed = 1;
  o->repeats = 10;
  o->budget = "5%";
  o->time_cap = 0.5;
  int is_compare = which->mask == R_COMPARE, nop;
  int64_t seed = 1;   /* written to JSON as a signed integer */
  const cli_opt opts[] = {
    CLI_OPT_STRING("t4", &o->t4, "FILE", "a T4 results file (plain or .gz)"),
    CLI_OPT_STRING("db", &o->db, "F", "a rooftune database: the trials of --kernel and the workload\n"
                   "--set binds on the one stored target holding them (or\nof --campaign ID)"),
    CLI_OPT_STRING("target", &o->target, "T", "with --db: only stored targets named T (rooftune targets)"),
    CLI_OPT_STRING("fingerprint", &o->fingerprint, "P", "with --db: the stored target whose fingerprint starts\n"
                   "with P (needed when several targets hold the trials)", .check = cli_check_fingerprint),
    CLI_OPT_STRING("kernel", &o->kernel, "K", "the kernel of --db's trials"),
    CLI_OPT_INT64("campaign", &o->campaign, "ID", 1, 0, "with --db: the trials of this campaign"),
    CLI_OPT_STRING("space", &o->space, "T1", "the space (default: --t4's inferred from the recorded\n"
                   "configurations, --db's the kernel's space file)"),
    CLI_OPT_STRING("set", &o->set, "VAR=VAL,...", "the space's problem variables", .check = cli_check_set),
    CLI_OPT_STRING("strategy", &o->strategy, "S", "the strategy to replay (rooftune tune --help lists them)",
                   .mask = R_REPLAY, .required = R_REPLAY),
    CLI_OPT_STRING("strategies", &o->strategy, "LIST", "strategies to compare, comma-separated, or 'all'",
                   .mask = R_COMPARE, .required = R_COMPARE),
    CLI_OPT_STRING("budget", &o->budget, "N|P%", "evaluations, or a percentage of the recorded\n"
                   "configurations (default 5%)", .check = cli_check_budget, .given = &o->budget_set),
    CLI_OPT_DOUBLE("time-limit", &o->time_limit, "S", 0, 0, "spend S seconds of recorded time (compile,\n"
                   "verification, runs, framework): stop before a candidate\nwhose predicted cost would "
                   "not fit (compare: each\nrun; recorded comparisons only)", .flags = CLI_OPEN_LO),
    CLI_OPT_INT64("seed", &seed, "S", 0, 0, "the seed (compare: repeat r uses S + r; default 1)"),
    CLI_OPT_INT("repeats", &o->repeats, "R", 1, 100000, "runs per strategy (default 10)", .mask = R_COMPARE),
    CLI_OPT_INT("batch", &o->batch, "N", 1, 100000, "proposals asked for at once (default 16)"),
    CLI_OPT_FLAG("json", &o->json, "machine-readable output"),
    CLI_OPT_FLAG("mpi", &o->mpi, "under mpirun: evaluations sleep their recorded cost on\n"
                 "the worker ranks (see below)", .mask = R_REPLAY),
    CLI_OPT_DOUBLE("sleep-scale", &o->sleep_scale, "F", 0, 0, "with --mpi: each evaluation sleeps its\n"
                   "recorded cost times F (default 1)", .mask = R_REPLAY),
    CLI_OPT_STRING("csv", &o->csv, "DIR", "write DIR/curves.csv and DIR/scores.csv", .mask = R_COMPARE),
    CLI_OPT_GROUP("live comparison", .mask = R_COMPARE),
    CLI_OPT_STRING("reference", &o->reference, "N|P%", "configurations of the random reference sample that\n"
                   "stands for the space (default max(4 x budget, 100); the\nwhole space when it covers it, "
                   "and then the score is\nexact)", .check = cli_check_budget, .mask = R_COMPARE),
    CLI_OPT_DOUBLE("time-cap", &o->time_cap, "S", 0, 0, "seconds of timing per schedule (default 0.5)",
                   .flags = CLI_OPEN_LO, .mask = R_COMPARE, .given = &o->time_cap_set),
    CLI_OPT_FLAG("recorded", &o->recorded, "with --db and --target host: compare over the recorded\n"
                 "trials only (replay), measuring nothing", .mask = R_COMPARE),
    CLI_OPT_END,
  };
  cli_spec spec = *which;
  spec.opts = opts;
  o->sleep_scale = -1;
  int rc = cli_parse(&spec, argc, argv, &nop);
  if (rc) return rc;
  if (o->sleep_scale >= 0 && !o->mpi) return cli_usage(which, "--sleep-scale is for --mpi");
  if (o->sleep_scale < 0) o->sleep_scale = 1;
  o->seed = (uint64_t)seed;
  const cli_spec *s = which;
  o->live = is_compare && !o->t4 && !o->campaign && !o->recorded && !o->fingerprint && o->target &&
            tg_backend_of(o->target);
  if (o->live && !o->kernel) return cli_usage(s, "a live comparison needs --kernel K");
  if (o->live && o->time_limit > 0)
    return cli_usage(s, "--time-limit compares recorded runs (a live comparison's campaigns take --budget)");
  if (!o->live && (o->reference || o->time_cap_set))
    return cli_usage(s, "--reference and --time-cap are for live comparisons (--target host)");
  if (!o->live && !!o->t4 == !!o->db)
    return cli_usage(s, "give exactly one of --t4 FILE and --db F%s",
                     is_compare ? " (or --target host --kernel K to compare on live measurements)" : "");
  if (o->db && !o->kernel && !o->campaign) return cli_usage(s, "--db needs --kernel K (or --campaign ID)");
  if (o->fingerprint && (!o->db || o->campaign))
    return cli_usage(s, "--fingerprint selects the target of --db's trials of --kernel K (a --campaign "
                     "names its own)");
  if (o->live && !cli_kernel(s, o->target, o->kernel, &rc)) return rc;
  if (!is_compare) return cli_strategy(s, o->strategy, &rc) ? 0 : rc;
  if (strcmp(o->strategy, "all")) {   /* each name of the list */
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", o->strategy);
    for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
      if (!cli_strategy(s, t, &rc)) return rc;
  }
  return 0;
}

/* ---- The recording ---- */

typedef struct replay_in {
  sp_space *sp;
  tu_rec *rec;
  int64_t n;            /* configurations recorded */
  double *values, opt, worst;
  char *key;
  kn_problem pb;        /* the workload, for the cost model */
  cm_tmodel *model;     /* a host kernel's model on the recording's target,
                        ** or NULL (T4 recordings, kernels without one) */
  char why_no_model[600];
} replay_in;

static void replay_in_free(replay_in *in) {
  cm_tmodel_free(in->model);
  tu_rec_free(in->rec);
  sp_free(in->sp);
  free(in->values);
  free(in->key);
}

/* ---- The space of a T4 file given without --space ----
** As db import infers it (db_import_read): each parameter with the values
** recorded, sorted, typed as recorded. A recording rarely holds every
** combination of those values (a tool records the configurations of its
** restricted space); the space is then exactly the configurations
** recorded, as Kernel Tuner's simulation mode takes them from its cache,
** through one condition: a decision tree over the parameters in order
** ("p0 == a and (p1 == b and (...) or ...) or ..."), which the engine
** checks in a few comparisons per parameter, where a list of the recorded
** tuples would be scanned whole. */

/* A T1 text of sp's parameters (values as sx_repr writes them), its
** problem variables declared by name (bound by --set again), and cond as
** the only condition (NULL: none). Caller frees. */
static char *t1_text(const sp_space *sp, const char *cond) {
  json_t *params = json_array(), *vars = json_array(), *names = json_array();
  char buf[1024];
  for (int p = 0; p < sp_nparams(sp); p++) {
    rt_str v = {0};
    rt_str_printf(&v, "[");
    for (int i = 0; i < sp_nvalues(sp, p); i++) {
      sx_repr(sp_value(sp, p, i), buf, sizeof buf);
      rt_str_printf(&v, "%s%s", i ? ", " : "", buf);
    }
    rt_str_printf(&v, "]");
    json_array_append_new(params, json_pack("{s:s, s:s, s:s}", "Name", sp_param_name(sp, p), "Type",
                                            sp_param_type(sp, p), "Values", v.s));
    json_array_append_new(names, json_string(sp_param_name(sp, p)));
    free(v.s);
  }
  for (int i = 0; i < sp_nvars(sp); i++) json_array_append_new(vars, json_pack("{s:s}", "Name", sp_var_name(sp, i)));
  json_t *conds = json_array();
  if (cond) json_array_append_new(conds, json_pack("{s:s, s:O}", "Expression", cond, "Parameters", names));
  json_t *t1 = json_pack("{s:{s:s}, s:{s:o, s:o, s:o}}", "General", "BenchmarkName", sp_name(sp),
                         "ConfigurationSpace", "ProblemVariables", vars, "TuningParameters", params,
                         "Conditions", conds);
  char *text = json_dumps(t1, JSON_COMPACT);
  json_decref(t1);
  json_decref(names);
  return text;
}

/* Lexicographic order of configurations (value indices); arg: np. */
static int cfg_cmp(const void *a, const void *b, void *np) {
  const int *x = *(const int *const *)a, *y = *(const int *const *)b;
  for (int p = 0; p < *(const int *)np; p++)
    if (x[p] != y[p]) return (x[p] > y[p]) - (x[p] < y[p]);
  return 0;
}

/* The decision tree holding for exactly the configurations cfgs[lo..hi)
** (sorted) on parameters k.. into s. */
static void tree_expr(rt_str *s, const sp_space *sp, const int *const *cfgs, int64_t lo, int64_t hi, int k) {
  char buf[1024];
  const char *name = sp_param_name(sp, k);
  if (k == sp_nparams(sp) - 1) {   /* the last: one list (its values are distinct) */
    rt_str_printf(s, "%s in [", name);
    for (int64_t i = lo; i < hi; i++) {
      sx_repr(sp_value(sp, k, cfgs[i][k]), buf, sizeof buf);
      rt_str_printf(s, "%s%s", i > lo ? ", " : "", buf);
    }
    rt_str_printf(s, "]");
    return;
  }
  if (sp_nvalues(sp, k) == 1) {   /* a constant: nothing to test */
    tree_expr(s, sp, cfgs, lo, hi, k + 1);
    return;
  }
  for (int64_t i = lo, j; i < hi; i = j) {
    for (j = i + 1; j < hi && cfgs[j][k] == cfgs[i][k]; j++) continue;
    sx_repr(sp_value(sp, k, cfgs[i][k]), buf, sizeof buf);
    rt_str_printf(s, "%s(%s == %s and (", i > lo ? " or " : "", name, buf);
    tree_expr(s, sp, cfgs, i, j, k + 1);
    rt_str_printf(s, "))");
  }
}

/* The space of T4 file path inferred (above) with bindings b, and its
** recording; 0, or -1 with err. */
static int t4_inferred(const char *path, const sp_binding *b, int nb, sp_space **sp, tu_rec **rec,
                       rt_err *err) {
  db_import_opts io = {.format = "t4", .set = b, .nset = nb, .kernel = "recording"};
  db_import *im = db_import_read(path, &io, err);
  if (!im) return -1;
  char *text = t1_text(db_import_space(im), NULL);
  db_import_free(im);
  *sp = sp_load_string(text, "the space of its recorded values", b, nb, err);
  free(text);
  *rec = *sp ? tu_rec_t4(path, *sp, err) : NULL;
  if (!*rec || (rt_count)tu_rec_n(*rec) == sp_count(*sp)) return *rec ? 0 : -1;
  /* not every combination was recorded: the recorded ones */
  int np = sp_nparams(*sp);
  int64_t n = tu_rec_n(*rec);
  const int **cfgs = rt_malloc((size_t)n * sizeof *cfgs);
  for (int64_t i = 0; i < n; i++) cfgs[i] = tu_rec_cfg(*rec, i);
  qsort_r(cfgs, (size_t)n, sizeof *cfgs, cfg_cmp, &np);
  rt_str cond = {0};
  tree_expr(&cond, *sp, cfgs, 0, n, 0);
  free(cfgs);
  text = t1_text(*sp, cond.s);
  free(cond.s);
  tu_rec_free(*rec);
  sp_free(*sp);
  *rec = NULL;
  *sp = sp_load_string(text, "the space of its recorded configurations", b, nb, err);
  free(text);
  *rec = *sp ? tu_rec_t4(path, *sp, err) : NULL;
  return *rec ? 0 : -1;
}

/* Load the space (--space, else the kernel's on target, NULL: host) with
** --set into *sp; 0, or an exit code after reporting. */
static int load_input_space(const ropts *o, const char *cmd, const char *target, sp_space **sp) {
  rt_err err = {0};
  char path[4096];
  const char *space = o->space;
  if (!space) {
    if (!target) target = "host";
    const kn_kernel *k = o->kernel ? tg_kernel_of(target, o->kernel) : NULL;
    if (!k) return cli_fail(cmd, "--space T1 is needed: '%s' is not a kernel of %s with a space of its own",
                            o->kernel ? o->kernel : "(no --kernel)", target);
    space = rt_project_path(k->space, path, sizeof path);
  }
  sx_arena *arena = sx_arena_new();
  sp_binding *b = NULL;
  int nb = o->set ? sp_parse_bindings(o->set, arena, &b, &err) : 0;
  *sp = nb < 0 ? NULL : sp_load_file(space, b, nb, &err);
  free(b);
  sx_arena_free(arena);
  return *sp ? 0 : cli_fail(cmd, "%s", err.msg);
}

/* The first trial's campaign (db_trials callback). */
static int first_campaign(void *ctx, const db_trial_row *r) {
  *(int64_t *)ctx = r->campaign_id;
  return 1;
}

/* The cost model of a database recording: the kernel's model with the
** ceilings and latest calibration stored for the recording's target (the
** target of its first trial's campaign), and that campaign's flush
** option. Leaves in->model NULL with the reason in in->why_no_model. */
static void load_model(const ropts *o, const db_trial_filter *f, replay_in *in) {
  rt_err err = {0};
  const cm_kmodel *km = NULL;
  const char *kernel = o->kernel;
  db_campaign_info info = {0};
  int64_t campaign = 0;
  db *d = db_open(o->db, DB_READ, &err);
  if (d && db_trials(d, f, first_campaign, &campaign, &err) >= 0 && campaign &&
      !db_campaign_get(d, campaign, &info, &err)) {
    kernel = info.kernel;
    const tg_backend *be = tg_backend_of(info.target);
    if (!be || !(km = cm_kmodel_find_on(be->model_family, kernel)) || !tg_kernel_of(info.target, kernel)) {
      snprintf(in->why_no_model, sizeof in->why_no_model, "kernel %s has no cost model", kernel);
    } else {
      cm_ceilings ce;
      cm_coefs c;
      json_t *opt = json_loads(info.options ? info.options : "{}", 0, NULL);
      int flush = json_is_true(json_object_get(opt, "flush"));
      json_decref(opt);
      kn_problem_from_space(&in->pb, in->sp);
      if (cm_ceilings_load(d, info.target_id, info.target, 0, &ce, NULL, &err) ||
          cm_coefs_load(d, info.target_id, km, 0, &c, &err))
        snprintf(in->why_no_model, sizeof in->why_no_model, "%s", err.msg);
      else
        in->model = cm_tmodel_new(km, &in->pb, in->sp, &ce, &c, flush);
    }
  } else {
    snprintf(in->why_no_model, sizeof in->why_no_model, "%s",
             err.msg[0] ? err.msg : "the recording has no trial");
  }
  db_campaign_info_free(&info);
  db_close(d);
}

/* The target of --db's trials of --kernel (cli_data_target) into *t; 0,
** or an exit code after reporting. */
static int db_target(const ropts *o, const char *cmd, cli_target *t) {
  rt_err err = {0};
  db *d = db_open(o->db, 0, &err);
  if (!d) return cli_fail(cmd, "%s", err.msg);
  const char *sets[1] = {o->set};
  cli_target_req q = {.name = o->target, .fingerprint = o->fingerprint, .kernel = o->kernel,
                      .sets = sets, .nsets = o->set ? 1 : 0};
  int rc = cli_data_target(d, o->db, &q, t, cmd);
  if (rc == CLI_NO_DATA)
    rc = cli_fail(cmd, "%s holds no trials of kernel %s%s%s%s%s", o->db, o->kernel,
                  o->set ? " --set " : "", o->set ? o->set : "", o->target ? " on a target named " : "",
                  o->target ? o->target : "");
  db_close(d);
  return rc;
}

/* Load the space and the recording; 0, or an exit code after reporting. */
static int load_input(const ropts *o, const char *cmd, replay_in *in) {
  memset(in, 0, sizeof *in);
  rt_err err = {0};
  cli_target t = {0};
  int rc = o->db && !o->campaign ? db_target(o, cmd, &t) : 0;
  if (!rc && (o->space || !o->t4)) rc = load_input_space(o, cmd, t.name ? t.name : o->target, &in->sp);
  if (rc) {
    cli_target_free(&t);
    return rc;
  }
  if (o->t4 && o->space) {
    in->rec = tu_rec_t4(o->t4, in->sp, &err);
  } else if (o->t4) {   /* the space inferred from the file */
    sx_arena *arena = sx_arena_new();
    sp_binding *b = NULL;
    int nb = o->set ? sp_parse_bindings(o->set, arena, &b, &err) : 0;   /* checked: cli_check_set */
    if (nb >= 0) t4_inferred(o->t4, b, nb, &in->sp, &in->rec, &err);
    free(b);
    sx_arena_free(arena);
  } else {
    /* the dtype of a template kernel of the data's target, else of imported data */
    const kn_kernel *k = o->kernel ? tg_kernel_of(t.name, o->kernel) : NULL;
    in->key = o->kernel ? db_workload_key(o->kernel, k ? k->dtype : DB_DEFAULT_DTYPE, in->sp) : NULL;
    db_trial_filter f = {.campaign = o->campaign, .target_id = o->campaign ? 0 : t.id,
                         .kernel = o->campaign ? NULL : o->kernel, .workload_key = o->campaign ? NULL : in->key};
    in->rec = tu_rec_db(o->db, &f, in->sp, &err);
    if (in->rec) load_model(o, &f, in);
  }
  cli_target_free(&t);
  if (o->t4)
    snprintf(in->why_no_model, sizeof in->why_no_model,
             "a T4 recording carries no ceilings: replay a rooftune database (--db F --kernel K)");
  if (!in->rec) {
    replay_in_free(in);
    return cli_fail(cmd, "%s", err.msg);
  }
  in->n = tu_rec_n(in->rec);
  in->values = rt_malloc((size_t)in->n * sizeof *in->values);
  in->opt = tu_rec_values(in->rec, in->values);
  in->worst = in->opt;
  for (int64_t i = 0; i < in->n; i++)
    if (in->values[i] > in->worst) in->worst = in->values[i];
  if (isnan(in->opt)) {
    replay_in_free(in);
    return cli_fail(cmd, "%s: no configuration in the recording has a time", o->t4 ? o->t4 : o->db);
  }
  return 0;
}

/* The budget in evaluations: "N" or "P%" of the recorded configurations. */
static int parse_budget(const char *s, int64_t n, int64_t *out) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || !(v > 0)) return -1;
  if (!strcmp(end, "%")) {
    if (v > 100) return -1;
    *out = (int64_t)ceil(v / 100 * (double)n - 1e-9);
    if (*out < 1) *out = 1;
    return 0;
  }
  if (*end || v != floor(v)) return -1;
  *out = (int64_t)v;
  return 0;
}

/* ---- replay --mpi: the recording's answers, after a sleep on a worker ---- */

typedef struct mpi_obj {
  tu_objective rec;     /* the recording's answers */
  double scale, slept;  /* --sleep-scale; seconds of sleep handed out */
  tu_cfgmap ids;        /* configurations submitted: their job ids */
  tu_obs *obs;          /* per id: the recorded answer */
  char *done;           /* per id: its sleep is over */
  int64_t cap;
} mpi_obj;

/* Start cfg's sleep (tu_run_opts.submit); its id in *id. */
static int mpi_start_one(mpi_obj *m, const int *cfg, int64_t *id, rt_err *err) {
  tu_obs ob;
  if (m->rec.eval(m->rec.ctx, cfg, &ob, err)) return -1;   /* not recorded: replay never guesses */
  int added;
  int64_t cap = m->ids.cap;
  *id = tu_cfgmap_put(&m->ids, cfg, &added);
  if (m->ids.cap != cap) {
    m->obs = rt_realloc(m->obs, (size_t)m->ids.cap * sizeof *m->obs);
    m->done = rt_realloc(m->done, (size_t)m->ids.cap);
  }
  m->obs[*id] = ob;
  m->done[*id] = 0;
  m->slept += ob.cost * m->scale;
  return mp_sleep_submit(*id, ob.cost * m->scale, err);
}

static int mpi_submit(void *ctx, const int *cfg, rt_err *err) {
  int64_t id;
  return mpi_start_one(ctx, cfg, &id, err);
}

static int mpi_collect(void *ctx, int *cfg, tu_obs *obs, rt_err *err) {
  mpi_obj *m = ctx;
  int64_t id;
  if (mp_sleep_collect(&id, err)) return -1;
  m->done[id] = 1;
  memcpy(cfg, tu_cfgmap_key(&m->ids, id), (size_t)m->ids.np * sizeof *cfg);
  *obs = m->obs[id];
  return 0;
}

/* The batch path (strategies that are not asynchronous): a batch's sleeps
** start together, and eval waits for each in proposal order. */
static void mpi_prepare(void *ctx, const int *cfgs, int n) {
  mpi_obj *m = ctx;
  for (int i = 0; i < n; i++) {
    int64_t id;
    rt_err e = {0};
    if (tu_cfgmap_get(&m->ids, cfgs + (size_t)i * m->ids.np) < 0)
      mpi_start_one(m, cfgs + (size_t)i * m->ids.np, &id, &e);   /* an error comes again from eval */
  }
}

static int mpi_eval(void *ctx, const int *cfg, tu_obs *obs, rt_err *err) {
  mpi_obj *m = ctx;
  int64_t id = tu_cfgmap_get(&m->ids, cfg);
  if (id < 0 && mpi_start_one(m, cfg, &id, err)) return -1;
  while (!m->done[id]) {
    int64_t got;
    if (mp_sleep_collect(&got, err)) return -1;
    m->done[got] = 1;
  }
  *obs = m->obs[id];
  return 0;
}

/* One run of strategy S; NULL after reporting. With m (replay --mpi) the
** evaluations sleep on the MPI workers. */
static tu_run *replay_run_on(const replay_in *in, const tu_strategy *S, uint64_t seed, int64_t budget,
                             const ropts *o, const char *cmd, mpi_obj *m) {
  tu_objective obj = tu_rec_objective(in->rec);
  tu_run_opts ro = {.strategy = S, .seed = seed, .max_evals = budget,
                    .max_cost = o->time_limit, .batch = o->batch};
  if (m) {
    m->rec = obj;
    obj = (tu_objective){.eval = mpi_eval, .ctx = m, .prepare = mpi_prepare};
    ro.parallel = mp_workers(), ro.submit = mpi_submit, ro.collect = mpi_collect;
    if ((ro.batch ? ro.batch : 16) < ro.parallel) ro.batch = ro.parallel;   /* batches as wide as the workers */
  }
  rt_err err = {0};
  if (S->needs_model && !in->model) {
    cli_fail(cmd, "strategy %s needs a cost model: %s", S->name, in->why_no_model);
    return NULL;
  }
  if (in->model) {   /* every run starts from the stored calibration */
    cm_tmodel_reset(in->model);
    ro.predict = cm_tmodel_predict, ro.refit = cm_tmodel_refit, ro.model = in->model;
    ro.sigma = cm_tmodel_sigma;
  }
  tu_run *r = tu_run_strategy(in->sp, &obj, &ro, NULL, &err);
  while (m && mp_pending() > 0) {   /* sleeps a run ended before taking */
    int64_t id;
    rt_err e = {0};
    if (mp_sleep_collect(&id, &e)) break;
  }
  if (!r) cli_fail(cmd, "%s (seed %llu): %s", S->name, (unsigned long long)seed, err.msg);
  return r;
}

static tu_run *replay_run(const replay_in *in, const tu_strategy *S, uint64_t seed, int64_t budget,
                          const ropts *o, const char *cmd) {
  return replay_run_on(in, S, seed, budget, o, cmd, NULL);
}

/* 1-based rank of time t among the recorded ok times. */
static int64_t rank_of(const replay_in *in, double t) {
  int64_t r = 1;
  for (int64_t i = 0; i < in->n; i++) r += in->values[i] < t;
  return r;
}

/* ---- replay ---- */

int cmd_replay(int argc, char **argv) {
  ropts o;
  int rc = parse_ropts(argc, argv, &replay_spec, &o);
  if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
  if (mp_rank() > 0) return o.mpi ? mp_serve() : EXIT_OK;   /* an MPI worker */
  rt_err merr = {0};
  if (o.mpi && mp_start_sleep(&merr)) return cli_fail("replay", "--mpi: %s", merr.msg);
  const tu_strategy *S = tu_strategy_find(o.strategy);   /* checked by parse_ropts */
  replay_in in;
  if ((rc = load_input(&o, "replay", &in))) return rc;
  int64_t budget = 0;
  if (!o.time_limit || o.budget_set) {   /* a time limit alone: no evaluation cap */
    if (parse_budget(o.budget, in.n, &budget)) {
      replay_in_free(&in);
      return cli_usage(&replay_spec, "--budget: expected N or P%%, got '%s'", o.budget);
    }
  }
  mpi_obj mo = {.scale = o.sleep_scale};
  if (o.mpi) tu_cfgmap_init(&mo.ids, sp_nparams(in.sp));
  double wall0 = rt_now();
  tu_run *r = replay_run_on(&in, S, o.seed, budget, &o, "replay", o.mpi ? &mo : NULL);
  double wall = rt_now() - wall0;
  if (o.mpi) {
    tu_cfgmap_free(&mo.ids);
    free(mo.obs);
    free(mo.done);
  }
  if (!r) {
    replay_in_free(&in);
    return EXIT_FAIL;
  }
  int64_t n = tu_run_n(r), best = tu_run_best(r), nfail = 0, nstat[MS_INVALID + 1] = {0};
  for (int64_t i = 0; i < n; i++) {
    nstat[tu_run_obs(r, i)->status]++;
    nfail += !tu_run_obs(r, i)->ok;
  }
  double bt = best >= 0 ? tu_run_obs(r, best)->value : NAN, score = NAN;
  if (budget > 0) {   /* Willemsen et al.'s score of this run (tu_score), as compare's */
    double *curve = rt_malloc((size_t)budget * sizeof *curve), *rnd = rt_malloc((size_t)budget * sizeof *rnd);
    tu_random_expect(in.values, in.n, budget, rnd);
    tu_run_curve(r, budget, in.worst, curve);
    score = tu_score(curve, rnd, in.opt, budget);
    free(curve), free(rnd);
  }
  char *bcfg = best >= 0 ? sp_config_json(in.sp, tu_run_cfg(r, best)) : NULL;
  double over_ms = n ? tu_run_framework_s(r) / (double)n * 1e3 : 0;
  if (o.json) {
    jw w;
    jw_init(&w, stdout);
    jw_begin(&w, '{');
    jw_key(&w, "strategy"); jw_str(&w, S->name);
    jw_key(&w, "recording"); jw_str(&w, tu_rec_name(in.rec));
    jw_key(&w, "recorded"); jw_int(&w, in.n);
    jw_key(&w, "seed"); jw_int(&w, (long long)o.seed);
    jw_key(&w, "budget"); jw_int(&w, budget);
    jw_key(&w, "time_limit_s"); jw_double(&w, o.time_limit);
    jw_key(&w, "evaluations"); jw_int(&w, n);
    jw_key(&w, "proposals"); jw_int(&w, tu_run_proposals(r));
    jw_key(&w, "restarts"); jw_int(&w, tu_run_restarts(r));
    jw_key(&w, "ended"); jw_str(&w, tu_end_name(tu_run_end(r)));
    jw_key(&w, "recorded_cost_s"); jw_double(&w, tu_run_cost(r));
    jw_key(&w, "framework_ms_per_eval"); jw_double(&w, over_ms);
    jw_key(&w, "optimum_s"); jw_double(&w, in.opt);
    jw_key(&w, "score"); jw_double(&w, score);
    if (o.mpi) {
      jw_key(&w, "mpi");
      jw_begin(&w, '{');
      jw_key(&w, "workers"); jw_int(&w, mp_workers());
      jw_key(&w, "sleep_scale"); jw_double(&w, o.sleep_scale);
      jw_key(&w, "slept_s"); jw_double(&w, mo.slept);
      jw_key(&w, "wall_s"); jw_double(&w, wall);
      jw_key(&w, "asynchronous"); jw_bool(&w, S->async);
      jw_end(&w, '}');
    }
    jw_key(&w, "best");
    if (bcfg) {
      jw_begin(&w, '{');
      jw_key(&w, "time_s"); jw_double(&w, bt);
      jw_key(&w, "rank"); jw_int(&w, rank_of(&in, bt));
      jw_key(&w, "fraction_of_optimum"); jw_double(&w, in.opt / bt);
      jw_key(&w, "evaluation"); jw_int(&w, best + 1);
      jw_key(&w, "config"); jw_raw(&w, bcfg);
      jw_end(&w, '}');
    } else {
      jw_raw(&w, "null");
    }
    jw_key(&w, "trace");
    jw_begin(&w, '[');
    double bsf = NAN;
    for (int64_t i = 0; i < n; i++) {
      const tu_obs *ob = tu_run_obs(r, i);
      if (ob->ok && !(ob->value >= bsf)) bsf = ob->value;
      char *c = sp_config_json(in.sp, tu_run_cfg(r, i));
      jw_begin(&w, '{');
      jw_key(&w, "config"); jw_raw(&w, c);
      jw_key(&w, "status"); jw_str(&w, ms_status_name((ms_status)ob->status));
      jw_key(&w, "time_s"); if (ob->ok) jw_double(&w, ob->value); else jw_raw(&w, "null");
      jw_key(&w, "best_s"); if (!isnan(bsf)) jw_double(&w, bsf); else jw_raw(&w, "null");
      jw_end(&w, '}');
      free(c);
    }
    jw_end(&w, ']');
    jw_end(&w, '}');
    fputc('\n', stdout);
  } else {
    printf("replay     %s on %s: %lld configurations recorded, optimum %.6g s\n", S->name,
           tu_rec_name(in.rec), (long long)in.n, in.opt);
    printf("run        seed %llu, budget %s, ended on %s after %lld evaluations "
           "(%lld proposals, %d restarts)\n", (unsigned long long)o.seed,
           budget ? o.budget : "none", tu_end_name(tu_run_end(r)), (long long)n,
           (long long)tu_run_proposals(r), tu_run_restarts(r));
    if (bcfg)
      printf("best       %.6g s at evaluation %lld: rank %lld of %lld, %.1f%% of the optimum's speed\n"
             "           %s\n", bt, (long long)best + 1, (long long)rank_of(&in, bt),
             (long long)in.n, 100 * in.opt / bt, bcfg);
    else
      printf("best       none: every evaluation failed\n");
    printf("failures   %lld", (long long)nfail);
    for (int s = 1; s <= MS_INVALID; s++)
      if (nstat[s]) printf(" %s %lld", ms_status_name((ms_status)s), (long long)nstat[s]);
    printf("\nspent      %.3f s recorded time; framework %.4f ms per evaluation\n", tu_run_cost(r),
           over_ms);
    if (!isnan(score))
      printf("score      %.3f over the budget (Willemsen et al.: 0 random search, 1 the optimum)\n", score);
    if (o.mpi)
      printf("mpi        %d workers (%s): %.3f s of emulated cost (x %g) in %.3f s wall\n",
             mp_workers(), S->async ? "asynchronous" : "in batches", mo.slept, o.sleep_scale, wall);
  }
  free(bcfg);
  tu_run_free(r);
  replay_in_free(&in);
  return EXIT_OK;
}

/* ---- compare ---- */

/* The strategies of a comma-separated list, or all of them. */
static int parse_strategies(const char *list, const tu_strategy **out, int max) {
  int n = 0;
  if (!strcmp(list, "all")) {
    for (int i = 0; tu_strategies[i] && n < max; i++) out[n++] = tu_strategies[i];
    return n;
  }
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    const tu_strategy *S = tu_strategy_find(t);
    if (!S || n == max) return -1 - n;
    out[n++] = S;
  }
  return n;
}

/* Where the runs of a comparison come from: a recording (replay) or live
** campaigns on a target (measured, reusing what the database holds). */
typedef struct cmp_src {
  /* One run's best-so-far curve over 1..budget (src->worst before its
  ** first ok result), tu_cmp_src's run with this as ctx: 0, or an exit
  ** code after reporting (err left empty). */
  int (*run)(void *ctx, const tu_strategy *S, uint64_t seed, int64_t budget, double *curve,
             tu_cmp_run *info, rt_err *err);
  const char *name;       /* what the comparison ran on */
  int64_t n;              /* random search's expectation is computed */
  double *values;         /* over values[0..n-1] (NAN: failed) */
  double opt, worst;      /* fastest and slowest ok values known */
  int exact;              /* 1: values covers the whole space */
  const replay_in *in;    /* replay */
  const ropts *o;
  tu_campaign_opts live;  /* live */
} cmp_src;

static int replay_curve(void *ctx, const tu_strategy *S, uint64_t seed, int64_t budget,
                        double *curve, tu_cmp_run *info, rt_err *err) {
  cmp_src *src = ctx;
  (void)err;
  tu_run *r = replay_run(src->in, S, seed, budget, src->o, "compare");
  if (!r) return EXIT_FAIL;
  tu_run_curve(r, budget, src->worst, curve);
  double *spent = info->spent, sum = 0;
  for (int64_t k = 0; spent && k < budget && k < tu_run_n(r); k++) spent[k] = sum += tu_run_obs(r, k)->cost;
  tu_guide g = tu_run_guide(r);
  *info = (tu_cmp_run){tu_run_n(r), tu_run_cost(r), tu_run_framework_s(r) / (double)tu_run_n(r) * 1e3, 0,
                       g.model, g.fallback, spent};
  tu_run_free(r);
  return 0;
}

/* A campaign's trials in order: values (NAN failed) and measuring cost. */
typedef struct trial_vals {
  double *v, cost;
  int64_t n, cap;
} trial_vals;

static int value_row(void *ctx, const db_trial_row *t) {
  trial_vals *tv = ctx;
  if (tv->n == tv->cap) tv->v = rt_realloc(tv->v, (size_t)(tv->cap = tv->cap ? 2 * tv->cap : 256) * sizeof *tv->v);
  tv->v[tv->n++] = strcmp(t->status, "ok") ? NAN : t->time_s;
  if (!t->origin || strcmp(t->origin, "reused"))
    tv->cost += (isnan(t->compile_s) ? 0 : t->compile_s) + (isnan(t->verify_s) ? 0 : t->verify_s) +
                (isnan(t->bench_s) ? 0 : t->bench_s);
  return 0;
}

/* Run one live campaign (never pinned) and read its trials back. */
static int live_campaign(cmp_src *src, const char *strategy, uint64_t seed, const char *budget,
                         trial_vals *tv, tu_report *rep) {
  tu_campaign_opts co = src->live;
  co.strategy = strategy;
  co.seed = seed;
  co.budget = budget;
  rt_err err = {0};
  if (tu_campaign(&co, rep, &err))
    return cli_fail("compare", "%s (seed %llu): %s", strategy, (unsigned long long)seed, err.msg);
  db *d = db_open(co.db_path, DB_READ, &err);
  db_trial_filter f = {.campaign = rep->campaign};
  int n = d ? db_trials(d, &f, value_row, tv, &err) : -1;
  db_close(d);
  if (n < 0) {
    tu_report_free(rep);
    return cli_fail("compare", "%s", err.msg);
  }
  return 0;
}

static int live_curve(void *ctx, const tu_strategy *S, uint64_t seed, int64_t budget,
                      double *curve, tu_cmp_run *info, rt_err *err) {
  cmp_src *src = ctx;
  (void)err;
  char b[32];
  snprintf(b, sizeof b, "%lld", (long long)budget);
  trial_vals tv = {0};
  tu_report rep;
  int rc = live_campaign(src, S->name, seed, b, &tv, &rep);
  if (rc) return rc;
  double best = src->worst;
  for (int64_t k = 0; k < budget; k++) {
    if (k < tv.n && tv.v[k] < best) best = tv.v[k];
    curve[k] = best;
  }
  *info = (tu_cmp_run){tv.n, tv.cost, rep.search_s / (double)(tv.n ? tv.n : 1) * 1e3,
                    rep.choice && !strcmp(rep.choice, "tuned"), rep.guide_model, rep.guide_fallback,
                    info->spent};
  free(tv.v);
  tu_report_free(&rep);
  return 0;
}

/* The reference of a live comparison: a random campaign (fixed seed 0) of
** `reference` configurations -- all of them when that covers the space --
** whose values stand for the space in random search's expectation. */
static int live_reference(cmp_src *src, const char *reference) {
  trial_vals tv = {0};
  tu_report rep;
  src->live.no_recheck = 1;   /* it only stands for the space: nothing to decide */
  int rc = live_campaign(src, "random", 0, reference, &tv, &rep);
  src->live.no_recheck = 0;
  if (rc) return rc;
  src->values = tv.v;
  src->n = tv.n;
  src->exact = !strcmp(rep.end, "space exhausted");
  tu_report_free(&rep);
  src->opt = src->worst = NAN;
  for (int64_t i = 0; i < src->n; i++) {
    if (!(src->values[i] >= src->opt)) src->opt = src->values[i];
    if (!(src->values[i] <= src->worst)) src->worst = src->values[i];
  }
  if (isnan(src->opt)) return cli_fail("compare", "no configuration of the reference sample verified");
  return 0;
}

/* Run every strategy o->repeats times and score the curves (tu_compare),
** print and write the CSV files. */
static int compare_core(const ropts *o, const tu_strategy **list, int ns, int64_t budget,
                        cmp_src *src) {
  int R = o->repeats, rc = 0;
  rt_err err = {0};
  tu_cmp_src ts = {.run = src->run, .ctx = src, .values = src->values, .n = src->n, .opt = src->opt};
  tu_cmp_result res;
  if (tu_compare(&ts, list, ns, budget, R, o->seed, &res, &err)) {
    tu_cmp_result_free(&res);
    return err.msg[0] ? cli_fail("compare", "%s", err.msg) : EXIT_FAIL;
  }
  double opt = res.opt, *rnd = res.rnd;
  const tu_cmp_stat *st = res.st;
  FILE *fc = NULL, *fs = NULL;
  rt_out oc = {0}, os = {0};   /* the README's "Output files": never an input */
  if (o->csv) {
    const char *dbp = o->db ? o->db : o->live ? "rooftune.db" : NULL, *inputs[3] = {0};
    int k = 0;
    if (o->t4) inputs[k++] = o->t4;
    if (o->space) inputs[k++] = o->space;
    rt_str p = {0};
    if (mkdir(o->csv, 0777) && errno != EEXIST) {
      rc = cli_fail("compare", "cannot make the folder %s: %s", o->csv, strerror(errno));
    } else {
      rt_str_printf(&p, "%s/curves.csv", o->csv);
      rc = cli_out_open(&oc, "compare", p.s, dbp, inputs);
      p.n = 0;
      rt_str_printf(&p, "%s/scores.csv", o->csv);
      if (!rc) rc = cli_out_open(&os, "compare", p.s, dbp, inputs);
    }
    free(p.s);
    if (!rc) {
      fc = oc.f, fs = os.f;
      fprintf(fc, "strategy,repeat,seed,k,best_s,random_expected_s,spent_s\n");
      fprintf(fs, "strategy,repeat,seed,score,best_s,evaluations,cost_s,framework_ms_per_eval,"
                  "from_model,from_fallback\n");
    }
  }
  for (int s = 0; s < ns && !rc; s++)
    for (int rep = 0; rep < R; rep++) {
      const double *curve = res.curves + ((size_t)s * R + rep) * budget;
      const tu_cmp_run *ru = &res.runs[s * R + rep];
      uint64_t seed = o->seed + (uint64_t)rep;
      const double *spent = res.spent + ((size_t)s * R + rep) * budget;
      for (int64_t k = 0; fc && k < budget; k++) {
        fprintf(fc, "%s,%d,%llu,%lld,%.9g,%.9g,", list[s]->name, rep, (unsigned long long)seed,
                (long long)k + 1, curve[k], rnd[k]);
        if (isnan(spent[k])) fprintf(fc, "\n");   /* after the run's end */
        else fprintf(fc, "%.6g\n", spent[k]);
      }
      if (fs)
        fprintf(fs, "%s,%d,%llu,%.6f,%.9g,%lld,%.6g,%.6g,%lld,%lld\n", list[s]->name, rep,
                (unsigned long long)seed, res.scores[s * R + rep], curve[budget - 1], (long long)ru->evals,
                ru->cost, ru->framework_ms, (long long)ru->from_model, (long long)ru->from_fallback);
    }
  if (!rc && o->json) {
    jw w;
    jw_init(&w, stdout);
    jw_begin(&w, '{');
    jw_key(&w, "on"); jw_str(&w, src->name);
    jw_key(&w, "reference_configurations"); jw_int(&w, src->n);
    jw_key(&w, "reference_is_whole_space"); jw_bool(&w, src->exact);
    jw_key(&w, "optimum_s"); jw_double(&w, opt);
    jw_key(&w, "budget"); jw_int(&w, budget);
    jw_key(&w, "repeats"); jw_int(&w, R);
    jw_key(&w, "seeds"); jw_begin(&w, '['); jw_int(&w, (long long)o->seed);
    jw_int(&w, (long long)(o->seed + (uint64_t)R - 1)); jw_end(&w, ']');
    jw_key(&w, "strategies"); jw_begin(&w, '[');
    for (int s = 0; s < ns; s++) {
      jw_begin(&w, '{');
      jw_key(&w, "name"); jw_str(&w, list[s]->name);
      jw_key(&w, "score_mean"); jw_double(&w, st[s].mean);
      jw_key(&w, "score_sd"); jw_double(&w, st[s].sd);
      jw_key(&w, "score_min"); jw_double(&w, st[s].min);
      jw_key(&w, "score_median"); jw_double(&w, st[s].median);
      jw_key(&w, "score_max"); jw_double(&w, st[s].max);
      jw_key(&w, "best_fraction_of_optimum"); jw_double(&w, st[s].best_frac);
      jw_key(&w, "runs_finding_optimum"); jw_int(&w, st[s].found_opt);
      jw_key(&w, "framework_ms_per_eval"); jw_double(&w, st[s].ms_per_eval);
      if (src->run == live_curve) {   /* runs whose decision pinned a tuned schedule */
        jw_key(&w, "runs_beating_default"); jw_int(&w, st[s].tuned);
      }
      jw_end(&w, '}');
    }
    jw_end(&w, ']');
    jw_end(&w, '}');
    fputc('\n', stdout);
  } else if (!rc) {
    printf("compare on %s: %lld configurations %s, optimum %.6g s\n", src->name, (long long)src->n,
           src->exact ? "(the whole space)" : "in the reference sample (random search's expectation is estimated from it)",
           opt);
    printf("budget %lld evaluations (%s), %d repeats per strategy (seeds %llu..%llu); score: 0 = "
           "random search's expectation, 1 = the optimum (Willemsen et al.)\n\n", (long long)budget,
           o->budget, R, (unsigned long long)o->seed, (unsigned long long)(o->seed + (uint64_t)R - 1));
    int live = src->run == live_curve;
    printf("%-12s %7s %6s %7s %7s %7s  %9s %7s %9s%s\n", "strategy", "score", "sd", "min", "median",
           "max", "best/opt", "optimum", "ms/eval", live ? "  beat default" : "");
    for (int s = 0; s < ns; s++) {
      printf("%-12s %7.3f %6.3f %7.3f %7.3f %7.3f  %8.1f%% %3d/%-3d %9.4f", list[s]->name,
             st[s].mean, st[s].sd, st[s].min, st[s].median, st[s].max, 100 * st[s].best_frac,
             st[s].found_opt, R, st[s].ms_per_eval);
      if (live) printf("  %5d/%-3d", st[s].tuned, R);
      printf("\n");
    }
    if (live)
      printf("\nbeat default: runs whose winner, measured again alternating with the default,\n"
             "beat it with disjoint 95%% CIs (what tune would pin; the others keep the default)\n");
  }
  if (!rc && o->csv && (rt_out_commit(&oc, &err) || rt_out_commit(&os, &err)))
    rc = cli_fail("compare", "%s", err.msg);
  rt_out_abort(&oc), rt_out_abort(&os);   /* what was not committed */
  tu_cmp_result_free(&res);
  return rc;
}

int cmd_compare(int argc, char **argv) {
  ropts o;
  int rc = parse_ropts(argc, argv, &compare_spec, &o);
  if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
  const tu_strategy *list[64];
  int ns = parse_strategies(o.strategy, list, 64);
  if (ns <= 0) return cli_usage(&compare_spec, "--strategies: at most 64 strategies, got '%s'", o.strategy);
  cmp_src src = {.o = &o};
  replay_in in = {0};
  int64_t budget;
  if (o.live) {
    src.run = live_curve;
    src.name = o.kernel;
    src.live = (tu_campaign_opts){.db_path = o.db ? o.db : "rooftune.db", .target = o.target,
                                  .kernel = o.kernel, .set = o.set, .no_pin = 1, .batch = o.batch};
    ms_opts_default(&src.live.ms);
    src.live.ms.time_cap = o.time_cap;
    sp_space *sp = NULL;
    if ((rc = load_input_space(&o, "compare", o.target, &sp))) return rc;
    rt_count count = sp_count(sp);
    sp_free(sp);
    if (parse_budget(o.budget, count > (rt_count)INT64_MAX ? INT64_MAX : (int64_t)count, &budget))
      return cli_usage(&compare_spec, "--budget: expected N or P%%, got '%s'", o.budget);
    char ref[32];
    if (!o.reference) snprintf(ref, sizeof ref, "%lld", (long long)(budget * 4 > 100 ? budget * 4 : 100));
    if ((rc = live_reference(&src, o.reference ? o.reference : ref))) {
      free(src.values);
      return rc;
    }
  } else {
    if ((rc = load_input(&o, "compare", &in))) return rc;
    if (!strcmp(o.strategy, "all") && !in.model) {   /* all that can run here */
      int k = 0;
      for (int i = 0; i < ns; i++)
        if (!list[i]->needs_model) list[k++] = list[i];
      ns = k;
    }
    if (parse_budget(o.budget, in.n, &budget)) {
      replay_in_free(&in);
      return cli_usage(&compare_spec, "--budget: expected N or P%%, got '%s'", o.budget);
    }
    src = (cmp_src){.run = replay_curve, .name = tu_rec_name(in.rec), .n = in.n, .values = in.values,
                    .opt = in.opt, .worst = in.worst, .exact = (rt_count)in.n == sp_count(in.sp),
                    .in = &in, .o = &o};
    if (!src.exact)
      fprintf(stderr, "rooftune compare: warning: the recording holds %lld of the space's valid "
              "configurations; random search's expectation is computed over the recording\n",
              (long long)in.n);
  }
  rc = compare_core(&o, list, ns, budget, &src);
  if (o.live) free(src.values);
  else replay_in_free(&in);
  return rc;
}
