/*
** cmd_model_plot.c -- `rooftune model roofline`: the roofline plot of a
** campaign (or of every campaign of one workload on a target). The x axis
** is the workload's arithmetic intensity (the kernel's exact flops over its
** compulsory bytes, hk.h), the y axis the GFLOP/s each verified schedule
** achieved (flops / measured median time); the roofs are the target's
** measured ceilings from the database (cm.h: FP32 peaks as horizontal
** lines, one diagonal per memory level clipped at the peak). The plot is a
** gnuplot script kept next to the output (FILE.gp, self-contained: the
** data are inline) and rendered by gnuplot, run with an argument vector:
** the script on its standard input, the image on its standard output,
** which is rooftune's temporary file of the output (rt_out: renamed over
** FILE only when every output is complete). Every text the script holds
** is a single-quoted gnuplot string, where gnuplot substitutes nothing
** (its double-quoted strings run `backquoted` shell commands); --data
** writes the plotted points as CSV. Every roof is the higher of the
** one-thread and all-thread figures of a ceiling (the best the machine
** showed).
*/
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../cost_model/cm.h"
#include "../db/db.h"
#include "../targets/host/hk.h"
#include "../targets/tg.h"
#include "cli.h"

#define CMD "model roofline"

typedef struct ropts {
  const char *db, *target, *kernel, *set, *out, *title, *data, *fingerprint;
  int64_t campaign;
  int svg;   /* 1: .svg, 0: .png */
} ropts;

/* One verified schedule. */
typedef struct point {
  int64_t trial, campaign;
  int threads;          /* the configuration's "threads" (0: none) */
  double time, gflops, roof;
  char *config;
} point;

/* Everything the plot needs. */
typedef struct roof {
  ropts o;
  db *d;
  char *kernel, *key, *target, *fingerprint, model[256];
  int64_t target_id;
  cli_target t;                       /* the data's target (cli_data_target) */
  double flops, bytes, ai;            /* per run; ai = flops / bytes */
  point *p;
  int n, cap, dups, other_targets, best;
  int64_t *camp, *camp_target;        /* campaign -> target id cache */
  int ncamp;
  cm_ceilings ce;
  char measured[32];
  double peak;                        /* max of the one- and all-thread peaks */
  double bw[CM_NLEVEL];               /* same for each level (NAN: none) */
  int bw_all[CM_NLEVEL];              /* 1: bw[] is the all-thread figure */
} roof;

/* ---- Options ---- */

static char *sibling(const char *path, const char *ext);

/* Parse into *o; 0, CLI_HELP or a usage error's exit code. */
static int parse(int argc, char **argv, ropts *o) {
  memset(o, 0, sizeof *o);
  o->db = "rooftune.db";
  const cli_opt opts[] = {
    CLI_OPT_STRING("db", &o->db, "F", "the database (default rooftune.db)"),
    CLI_OPT_INT64("campaign", &o->campaign, "ID", 1, 0, "the schedules of this campaign (on its target)"),
    CLI_OPT_STRING("kernel", &o->kernel, "K", "the schedules of every campaign of K's workload on the\n"
                   "one stored target holding K's trials"),
    CLI_OPT_STRING("target", &o->target, "T", "only stored targets named T (rooftune targets)"),
    CLI_OPT_STRING("fingerprint", &o->fingerprint, "P", "the stored target whose fingerprint starts with P\n"
                   "(needed when several targets hold K's trials)", .check = cli_check_fingerprint),
    CLI_OPT_STRING("set", &o->set, "VAR=VAL,...", "with --kernel: which workload (needed when there are\n"
                   "several)", .check = cli_check_set),
    CLI_OPT_STRING("out", &o->out, "FILE", "the plot: FILE.png (pngcairo, 1000x700) or FILE.svg;\n"
                   "the gnuplot script is kept beside it as FILE.gp", .short_name = 'o', .required = CLI_ALL),
    CLI_OPT_STRING("title", &o->title, "T", "the plot's title (default: workload, target, date of\nceilings)"),
    CLI_OPT_STRING("data", &o->data, "FILE.csv", "also write the plotted points as CSV"),
    CLI_OPT_END,
  };
  cli_spec spec = {
    .cmd = CMD, .usage = cmd_model_roofline_usage, .opts = opts,
    .about = "The roofline plot of a campaign: the target's measured ceilings (rooftune bench)\n"
             "and every verified schedule of the campaign, drawn with gnuplot.",
    .epilog = "x: arithmetic intensity = flops / compulsory bytes; y: flops / measured time.\n"
              "Roofs: the higher of the one-thread and all-thread figure of each ceiling.\n"};
  int nop, rc = cli_parse(&spec, argc, argv, &nop);
  if (rc) return rc;
  if (!!o->campaign == !!o->kernel) return cli_usage(&spec, "give exactly one of --campaign ID and --kernel K");
  if (o->set && !o->kernel) return cli_usage(&spec, "--set selects a workload of --kernel K");
  if (o->fingerprint && !o->kernel)
    return cli_usage(&spec, "--fingerprint selects the target of --kernel K's trials (a --campaign names its own)");
  const char *dot = strrchr(o->out, '.'), *slash = strrchr(o->out, '/');
  if (!dot || (slash && dot < slash) || (strcasecmp(dot, ".png") && strcasecmp(dot, ".svg")))
    return cli_usage(&spec, "-o %s: the extension picks the format: expected .png or .svg", o->out);
  o->svg = !strcasecmp(dot, ".svg");
  if (o->data) {   /* three outputs, three files */
    char *gp = sibling(o->out, ".gp");
    int same = !strcmp(o->data, o->out) || !strcmp(o->data, gp) || rt_same_file(o->data, o->out) ||
               rt_same_file(o->data, gp);
    free(gp);
    if (same) return cli_usage(&spec, "--data %s: is also the plot or its script; name another file", o->data);
  }
  return 0;
}

/* ---- The schedules ---- */

/* The target of --kernel's trials (cli_data_target) and the workload key
** --set selects among those it holds (the only one when --set is left
** out). 0, or an exit code after reporting. */
static int pick_key(roof *r) {
  const char *sets[1] = {r->o.set};
  cli_target_req q = {.name = r->o.target, .fingerprint = r->o.fingerprint, .kernel = r->kernel,
                      .sets = sets, .nsets = r->o.set ? 1 : 0};
  int rc = cli_data_target(r->d, r->o.db, &q, &r->t, CMD);
  if (rc == CLI_NO_DATA)
    return cli_fail(CMD, "%s holds no trials of kernel %s%s%s%s%s", r->o.db, r->kernel,
                    r->o.set ? " --set " : "", r->o.set ? r->o.set : "", r->o.target ? " on a target named " : "",
                    r->o.target ? r->o.target : "");
  if (rc) return rc;
  r->target = rt_strdup(r->t.name);
  r->fingerprint = rt_strdup(r->t.fingerprint);
  r->target_id = r->t.id;
  if (r->t.nkeys == 1) {
    r->key = rt_strdup(r->t.keys[0]);
    return 0;
  }
  rc = cli_fail(CMD, "%s workloads of %s on target %s (fingerprint %.12s) match%s%s (%s); stored "
                "workloads:", r->t.nkeys ? "several" : "no", r->kernel, r->target, r->fingerprint,
                r->o.set ? " --set " : "", r->o.set ? r->o.set : "",
                r->t.nkeys ? "give more variables with --set" : "check --set");
  for (int i = 0; i < r->t.nkeys; i++) fprintf(stderr, "  %s\n", r->t.keys[i]);
  return rc;
}

/* The target id of campaign id (memoised); -1 with err. */
static int64_t campaign_target(roof *r, int64_t id, rt_err *err) {
  for (int i = 0; i < r->ncamp; i++)
    if (r->camp[i] == id) return r->camp_target[i];
  db_campaign_info c;
  if (db_campaign_get(r->d, id, &c, err)) return -1;
  r->camp = rt_realloc(r->camp, (size_t)(r->ncamp + 1) * sizeof *r->camp);
  r->camp_target = rt_realloc(r->camp_target, (size_t)(r->ncamp + 1) * sizeof *r->camp_target);
  r->camp[r->ncamp] = id;
  r->camp_target[r->ncamp++] = c.target_id;
  db_campaign_info_free(&c);
  return r->camp_target[r->ncamp - 1];
}

/* The "threads" of a configuration's JSON (0 when it has none). */
static int config_threads(const char *config) {
  json_t *j = json_loads(config, 0, NULL);
  json_t *t = json_object_get(j, "threads");
  int v = json_is_integer(t) ? (int)json_integer_value(t) : 0;
  json_decref(j);
  return v;
}

typedef struct collect_ctx { roof *r; rt_err *err; int failed; } collect_ctx;

/* db_trials callback: keep verified trials (one per configuration). */
static int collect(void *ctx, const db_trial_row *t) {
  collect_ctx *c = ctx;
  roof *r = c->r;
  if (strcmp(t->status, "ok") || !(t->time_s > 0)) return 0;
  if (!r->o.campaign) {
    int64_t tid = campaign_target(r, t->campaign_id, c->err);
    if (tid < 0) return c->failed = 1;
    if (tid != r->target_id) {
      r->other_targets++;
      return 0;
    }
    for (int i = 0; i < r->n; i++)
      if (!strcmp(r->p[i].config, t->config)) {   /* reused or measured again */
        r->dups++;
        return 0;
      }
  }
  if (r->n == r->cap) r->p = rt_realloc(r->p, (size_t)(r->cap = r->cap ? 2 * r->cap : 64) * sizeof *r->p);
  point *p = &r->p[r->n++];
  p->trial = t->id;
  p->campaign = t->campaign_id;
  p->threads = config_threads(t->config);
  p->time = t->time_s;
  p->config = rt_strdup(t->config);
  return 0;
}

/* Fill r's workload (kernel, key, target) and its verified schedules. 0,
** or an exit code after reporting. */
static int load_points(roof *r) {
  rt_err err = {0};
  db_trial_filter f = {0};
  if (r->o.campaign) {
    db_campaign_info c;
    int rc = db_campaign_get(r->d, r->o.campaign, &c, &err);
    if (rc) return cli_fail(CMD, "%s in %s", err.msg, r->o.db);
    if (r->o.target && strcmp(r->o.target, c.target)) {
      rc = cli_fail(CMD, "campaign %lld is of target %s, not %s", (long long)c.id, c.target, r->o.target);
      db_campaign_info_free(&c);
      return rc;
    }
    r->kernel = rt_strdup(c.kernel);
    r->key = rt_strdup(c.workload_key);
    r->target = rt_strdup(c.target);
    r->fingerprint = rt_strdup(c.fingerprint);
    r->target_id = c.target_id;
    db_campaign_info_free(&c);
    f.campaign = r->o.campaign;
    /* the campaign's target as stored (its description) */
    cli_target_req q = {.name = r->target, .fingerprint = r->fingerprint};
    if ((rc = cli_data_target(r->d, r->o.db, &q, &r->t, CMD))) return rc == CLI_NO_DATA ? EXIT_FAIL : rc;
  } else {
    r->kernel = rt_strdup(r->o.kernel);
    int rc = pick_key(r);
    if (rc) return rc;
    f.target = r->target, f.kernel = r->kernel, f.workload_key = r->key;
  }
  collect_ctx cc = {r, &err, 0};
  if (db_trials(r->d, &f, collect, &cc, &err) < 0 || cc.failed) return cli_fail(CMD, "%s", err.msg);
  if (r->n == 0) {
    if (r->o.campaign) return cli_fail(CMD, "campaign %lld has no verified (ok) trial", (long long)r->o.campaign);
    return cli_fail(CMD, "no verified (ok) trial of %s on %s", r->key, r->target);
  }
  return 0;
}

/* Whether the ceilings are a GPU's (figures per SM; no L3). Ceilings
** stored before they carried the device's properties are known by the
** target's name. */
static int is_gpu(const roof *r) {
  const tg_backend *b = tg_backend_of(r->target);
  return r->ce.gpu.sms > 0 || (b && b->gpu);
}

/* The workload's flops and compulsory bytes from the host kernel with the
** key's problem variables. 0, or an exit code after reporting. */
static int load_workload(roof *r) {
  const kn_kernel *k = tg_kernel_of(r->target, r->kernel);
  if (!k)
    return cli_fail(CMD, "kernel '%s' is not a kernel of %s: its flops and compulsory bytes are "
                    "unknown", r->kernel, r->target);
  rt_err err = {0};
  char path[4096], *text = cli_key_bindings(r->key);
  sx_arena *a = sx_arena_new();
  sp_binding *b = NULL;
  int nb = text ? sp_parse_bindings(text, a, &b, &err) : 0;
  sp_space *sp = nb < 0 ? NULL : sp_load_file(rt_project_path(k->space, path, sizeof path), b, nb, &err);
  int rc = 0;
  if (!sp) {
    rc = cli_fail(CMD, "workload '%s': %s", r->key, err.msg);
  } else {
    kn_problem pb;
    kn_problem_from_space(&pb, sp);
    r->flops = k->flops(&pb);
    r->bytes = k->min_bytes(&pb);
    if (!(r->flops > 0) || !(r->bytes > 0))
      rc = cli_fail(CMD, "workload '%s': %g flops over %g compulsory bytes: no arithmetic intensity", r->key,
                    r->flops, r->bytes);
    r->ai = r->flops / r->bytes;
  }
  sp_free(sp);
  free(b);
  free(text);
  sx_arena_free(a);
  return rc;
}

/* ---- Ceilings and roofs ---- */

/* The larger finite positive figure of v[0..1] (NAN if none); *all = 1
** when it is v[1]. */
static double best_of(const double v[2], int *all) {
  int ok0 = isfinite(v[0]) && v[0] > 0, ok1 = isfinite(v[1]) && v[1] > 0;
  *all = ok1 && (!ok0 || v[1] > v[0]);
  return *all ? v[1] : ok0 ? v[0] : NAN;
}

/* The roof of level l at intensity x: min(peak, bw_l * x); NAN if none. */
static double level_roof(const roof *r, int l, double x) {
  return isnan(r->bw[l]) ? NAN : fmin(r->peak, r->bw[l] * x);
}

/* The attainable roof at x: the DRAM roof (the classic roofline's, with
** compulsory bytes), else the slowest level measured, else the peak. */
static double attainable(const roof *r, double x) {
  for (int l = CM_NLEVEL - 1; l >= 0; l--)
    if (!isnan(r->bw[l])) return level_roof(r, l, x);
  return r->peak;
}

static int load_ceilings(roof *r) {
  rt_err err = {0};
  char *json = NULL;
  int rc = db_ceilings_get(r->d, r->target_id, &json, r->measured, &err);
  if (rc < 0) return cli_fail(CMD, "%s", err.msg);
  if (rc == 0 && r->t.here)
    return cli_fail(CMD, "no measured ceilings for target %s in %s: run rooftune bench --target %s --db %s",
                    r->target, r->o.db, r->target, r->o.db);
  if (rc == 0)
    return cli_fail(CMD, "no measured ceilings for target %s (fingerprint %s, %s) in %s: they can only "
                    "be measured on that machine (rooftune bench --target %s there)", r->target,
                    r->fingerprint, r->t.model, r->o.db, r->target);
  rc = cm_ceilings_parse(json, &r->ce, &err);
  free(json);
  if (rc) return cli_fail(CMD, "%s: stored ceilings of target %s: %s", r->o.db, r->target, err.msg);
  int all;
  r->peak = best_of(r->ce.peak, &all);
  if (isnan(r->peak))
    return cli_fail(CMD, "%s: the ceilings of target %s have no FP32 peak (measure again: rooftune bench --force)",
                    r->o.db, r->target);
  for (int l = 0; l < CM_NLEVEL; l++) r->bw[l] = best_of(r->ce.bw[l], &r->bw_all[l]);
  if (is_gpu(r)) r->bw[2] = NAN;   /* a GPU has no L3 */
  r->best = 0;
  for (int i = 0; i < r->n; i++) {
    point *p = &r->p[i];
    p->gflops = r->flops / p->time / 1e9;
    p->roof = attainable(r, r->ai) / 1e9;
    if (p->time < r->p[r->best].time) r->best = i;
  }
  return 0;
}

/* The target's CPU model or device as its stored description says, else
** its fingerprint. */
static void target_model(roof *r) {
  if (r->t.model && strcmp(r->t.model, "-")) snprintf(r->model, sizeof r->model, "%s", r->t.model);
  else snprintf(r->model, sizeof r->model, "fingerprint %.12s", r->fingerprint);
}

/* ---- Output ---- */

/* path with its extension replaced by ext (".gp"). Caller frees. */
static char *sibling(const char *path, const char *ext) {
  rt_str s = {0};
  const char *dot = strrchr(path, '.');
  rt_str_printf(&s, "%.*s%s", (int)(dot - path), path, ext);
  return s.s;
}

/* text as a gnuplot string expression: single-quoted pieces (a quote
** doubled; gnuplot substitutes nothing in them) joined by "\n" where text
** has a newline; other control characters become blanks. */
static void gp_str(rt_str *s, const char *text) {
  rt_str_printf(s, "'");
  for (const char *c = text; *c; c++) {
    if (*c == '\n') rt_str_printf(s, "'.\"\\n\".'");
    else if (*c == '\'') rt_str_printf(s, "''");
    else rt_str_printf(s, "%c", (unsigned char)*c < 0x20 || *c == 0x7f ? ' ' : *c);
  }
  rt_str_printf(s, "'");
}

/* text in a comment line of the script: control characters become blanks
** (a newline would end the comment). */
static void gp_comment(rt_str *s, const char *text) {
  for (const char *c = text; *c; c++)
    rt_str_printf(s, "%c", (unsigned char)*c < 0x20 || *c == 0x7f ? ' ' : *c);
}

static const char *const level_color[CM_NLEVEL] = {"#56B4E9", "#009E73", "#E69F00", "#D55E00"};

/* Bandwidth as "312 GB/s" (three significant digits). */
static void fmt_rate(char *buf, size_t cap, double v, const char *unit) {
  double g = v / 1e9;
  snprintf(buf, cap, g >= 100 ? "%.0f %s" : g >= 10 ? "%.1f %s" : "%.2f %s", g, unit);
}

/* Number of threads a figure stands for, as text. */
static void fmt_threads(char *buf, size_t cap, const roof *r, int all) {
  int t = all ? r->ce.threads : 1;
  snprintf(buf, cap, "%d %s%s", t, is_gpu(r) ? "SM" : "thread", t == 1 ? "" : "s");
}

/* log10 bounds: the decade at or below lo, at or above hi. */
static double decade_below(double v) { return pow(10, floor(log10(v))); }
static double decade_above(double v) { return pow(10, ceil(log10(v))); }

/* The best non-FMA class (its index, -1 if none) and its figure. */
static int lower_roof(const roof *r, double *v, int *all) {
  int k = -1;
  *v = NAN;
  for (int i = 0; i < r->ce.nclass; i++) {
    int a;
    double f = best_of(r->ce.cls[i].flops, &a);
    if (!r->ce.cls[i].fma && !isnan(f) && (k < 0 || f > *v)) k = i, *v = f, *all = a;
  }
  return k;
}

/* The plot's frame: data ranges (y in FLOP/s) and the plot area in
** pixels, to place labels where they can be read. */
typedef struct frame {
  double xmin, xmax, ymin, ymax, w, h;
  double ang;   /* on-screen angle of a line of slope 1 (radians) */
} frame;

static double px_x(const frame *f, double x) { return log10(x / f->xmin) / log10(f->xmax / f->xmin) * f->w; }
static double px_y(const frame *f, double y) { return log10(y / f->ymin) / log10(f->ymax / f->ymin) * f->h; }
static double data_x(const frame *f, double px) { return f->xmin * pow(f->xmax / f->xmin, px / f->w); }

#define GP_W 1000
#define GP_H 700
#define GP_CHAR 7.0   /* pixels per character of the label font, about */
static const double gp_ml = 0.08, gp_mr = 0.62, gp_mb = 0.09, gp_mt = 0.88;

/* A label placed along a diagonal: its along-line extent and the
** perpendicular position of its middle (pixels). */
typedef struct placed { double s0, s1, c; } placed;

/* Where the label of the diagonal y = bw x (clipped at peak) goes: the
** first x from its left end at which the text fits before the ridge,
** above the line or else below it, clear of the labels placed so far;
** NAN when there is none. *below says which side. */
static double diag_label_x(const frame *f, double bw, double peak, double len, placed *done, int *ndone,
                           int *below) {
  double ca = cos(f->ang), sa = sin(f->ang), ridge = px_x(f, peak / bw);
  double x0 = fmax(f->xmin * 1.15, f->ymin * 1.4 / bw);
  for (int j = 0; j < 16; j++) {
    double x = x0 * pow(10, 0.2 * j), px = px_x(f, x), py = px_y(f, bw * x);
    if (px + len * ca > ridge - 6) break;
    double s = px * ca + py * sa, c = -px * sa + py * ca;
    for (int side = 0; side < 2; side++) {
      double mid = side ? c - 11 : c + 11;
      int clash = 0;
      for (int k = 0; k < *ndone; k++)
        clash |= fabs(mid - done[k].c) < 15 && s < done[k].s1 + 10 && s + len > done[k].s0 - 10;
      if (clash) continue;
      done[(*ndone)++] = (placed){s, s + len, mid};
      *below = side;
      return x;
    }
  }
  return NAN;
}

/* Append ", \\\n  SPEC title LABEL" for one plot element. */
static void gp_elem(rt_str *s, int *first, const char *spec, const char *title) {
  rt_str_printf(s, "%s  %s title ", *first ? "plot \\\n" : ", \\\n", spec);
  gp_str(s, title);
  *first = 0;
}

/* The gnuplot script of the plot; with keep, the script kept beside the
** plot (its output: ./NAME of o.out, in the script's directory), else the
** one rooftune runs (no output set: the image goes to standard output). */
static char *gp_script(const roof *r, const char *title, int keep) {
  rt_str s = {0}, t = {0}, spec = {0};
  char rate[64], thr[32];
  /* ranges: the intensity, every ridge point, the points, the roof */
  double xlo = r->ai, xhi = r->ai, ylo = attainable(r, r->ai), yhi = r->peak;
  for (int l = 0; l < CM_NLEVEL; l++)
    if (!isnan(r->bw[l])) xlo = fmin(xlo, r->peak / r->bw[l]), xhi = fmax(xhi, r->peak / r->bw[l]);
  for (int i = 0; i < r->n; i++) ylo = fmin(ylo, r->p[i].gflops * 1e9), yhi = fmax(yhi, r->p[i].gflops * 1e9);
  frame f = {decade_below(xlo / 3), decade_above(xhi * 3), decade_below(ylo / 3), decade_above(yhi * 3),
             GP_W * (gp_mr - gp_ml), GP_H * (gp_mt - gp_mb), 0};
  f.ang = atan2(f.h / log10(f.ymax / f.ymin), f.w / log10(f.xmax / f.xmin));
  const char *base = strrchr(r->o.out, '/');
  base = base ? base + 1 : r->o.out;

  rt_str_printf(&s, "# rooftune model roofline: %d schedules of ", r->n);
  gp_comment(&s, r->key);
  rt_str_printf(&s, " on target ");
  gp_comment(&s, r->target);
  rt_str_printf(&s, " (");
  gp_comment(&s, r->model);
  rt_str_printf(&s, ")\n# re-render: run gnuplot on this file in its directory\n");
  rt_str_printf(&s, "# x: arithmetic intensity = %.17g flops / %.17g compulsory bytes\n", r->flops, r->bytes);
  rt_str_printf(&s, "# y: GFLOP/s = flops / median time; roofs: the higher of the 1-thread and all-thread "
                    "figure of each ceiling\n");
  if (r->o.svg)
    rt_str_printf(&s, "set terminal svg size %d,%d dynamic noenhanced font 'sans,11' background '#ffffff'\n",
                  GP_W, GP_H);
  else
    rt_str_printf(&s, "set terminal pngcairo size %d,%d noenhanced font 'sans,10' background '#ffffff'\n",
                  GP_W, GP_H);
  if (keep) {   /* "./": a name starting with | would be a pipe to a shell command */
    rt_str_printf(&s, "set output ");
    t.n = 0;
    rt_str_printf(&t, "./%s", base);
    gp_str(&s, t.s);
    rt_str_printf(&s, "\n");
  }
  rt_str_printf(&s, "set title ");
  gp_str(&s, title);
  rt_str_printf(&s, "\nset lmargin at screen %g\nset rmargin at screen %g\n", gp_ml, gp_mr);
  rt_str_printf(&s, "set bmargin at screen %g\nset tmargin at screen %g\n", gp_mb, gp_mt);
  rt_str_printf(&s, "set logscale xy\nset xrange [%g:%g]\nset yrange [%g:%g]\n", f.xmin, f.xmax, f.ymin / 1e9,
                f.ymax / 1e9);
  rt_str_printf(&s, "set format x '%%g'\nset format y '%%g'\n"
                    "set xlabel 'arithmetic intensity (flops / compulsory byte)'\nset ylabel 'GFLOP/s'\n"
                    "set grid xtics ytics mxtics mytics lc rgb '#e4e4e4' lw 1\n"
                    "set key at screen %g,%g top left reverse Left samplen 2 spacing 1.2 box lc rgb '#bbbbbb'\n"
                    "set style textbox opaque noborder\nset clip one\n",
                gp_mr + 0.02, gp_mt);

  /* data: each roof as a segment, the points by thread class, the best */
  for (int l = 0; l < CM_NLEVEL; l++)
    if (!isnan(r->bw[l]))
      rt_str_printf(&s, "$%s << EOD\n%.9g %.9g\n%.9g %.9g\nEOD\n", cm_bound_name(CM_LEVEL(l)), f.xmin,
                    r->bw[l] * f.xmin / 1e9, r->peak / r->bw[l], r->peak / 1e9);
  static const char *const cls_name[2] = {"one_thread", "threads"};
  int count[2] = {0, 0};
  for (int c = 0; c < 2; c++) {
    rt_str_printf(&s, "# intensity, GFLOP/s, trial\n$%s << EOD\n", cls_name[c]);
    for (int i = 0; i < r->n; i++)
      if ((r->p[i].threads > 1) == c) {
        rt_str_printf(&s, "%.17g %.17g %lld\n", r->ai, r->p[i].gflops, (long long)r->p[i].trial);
        count[c]++;
      }
    rt_str_printf(&s, "EOD\n");
  }
  const point *b = &r->p[r->best];
  rt_str_printf(&s, "$best << EOD\n%.17g %.17g\nEOD\n$roof << EOD\n%.17g %.17g\nEOD\n", r->ai, b->gflops, r->ai,
                b->roof);

  /* labels: along the diagonals, over the peak, beside the best */
  placed done[CM_NLEVEL];
  int nd = 0, k = 0;
  for (int l = 0; l < CM_NLEVEL; l++) {
    if (isnan(r->bw[l])) continue;
    fmt_rate(rate, sizeof rate, r->bw[l], "GB/s");
    t.n = 0;
    rt_str_printf(&t, "%s %s", cm_bound_name(CM_LEVEL(l)), rate);
    int below = 0;
    double x = diag_label_x(&f, r->bw[l], r->peak, GP_CHAR * (double)t.n, done, &nd, &below);
    if (isnan(x)) continue;   /* no room: the key names it */
    rt_str_printf(&s, "set label %d ", ++k);
    gp_str(&s, t.s);
    rt_str_printf(&s, " at %.9g,%.9g rotate by %.2f offset 0,%s textcolor rgb '%s' front\n", x,
                  r->bw[l] * x / 1e9, f.ang * 180 / M_PI, below ? "-1.3" : "0.6", level_color[l]);
  }
  int all_peak = 0, all_low = 0;
  best_of(r->ce.peak, &all_peak);
  fmt_rate(rate, sizeof rate, r->peak, "GFLOP/s");
  t.n = 0;
  rt_str_printf(&t, "FP32 peak %s", rate);
  double len = GP_CHAR * (double)t.n, col = px_x(&f, r->ai), at = f.w - 8;   /* right end of the text */
  if (col > at - len - 20) at = col - 20 > len + 5 ? col - 20 : col + 20 + len;
  rt_str_printf(&s, "set label %d ", ++k);
  gp_str(&s, t.s);
  rt_str_printf(&s, " at %.9g,%.9g right offset 0,0.7 front\n", data_x(&f, at), r->peak / 1e9);
  t.n = 0;
  rt_str_printf(&t, "best %.1f GFLOP/s\n%.0f%% of the roof", b->gflops, 100 * b->gflops / b->roof);
  int left = col > f.w / 2;
  rt_str_printf(&s, "set label %d ", ++k);
  gp_str(&s, t.s);
  rt_str_printf(&s, " at %.17g,%.17g %s offset %s,-1 boxed front\n", r->ai, b->gflops, left ? "right" : "left",
                left ? "-2.2" : "2.2");

  /* a note under the key: the numbers of the summary */
  t.n = 0;
  rt_str_printf(&t, "%d verified schedules\nintensity %.4g flops / byte\nbest: %.1f GFLOP/s, trial %lld\n"
                    "%.1f%% of the roof %.4g GFLOP/s\n(min of peak and DRAM x intensity)\nof each roof:",
                r->n, r->ai, b->gflops, (long long)b->trial, 100 * b->gflops / b->roof, b->roof);
  for (int l = 0; l < CM_NLEVEL; l++)
    if (!isnan(r->bw[l]))
      rt_str_printf(&t, "%s %s %.0f%%", l ? "," : "", cm_bound_name(CM_LEVEL(l)),
                    100 * b->gflops * 1e9 / level_roof(r, l, r->ai));
  rt_str_printf(&s, "set label %d ", ++k);
  gp_str(&s, t.s);
  rt_str_printf(&s, " at screen %g,%g left front\n", gp_mr + 0.025, gp_mt - 0.40);

  /* the plot: roofs, then points */
  int first = 1;
  for (int l = 0; l < CM_NLEVEL; l++) {
    if (isnan(r->bw[l])) continue;
    fmt_rate(rate, sizeof rate, r->bw[l], "GB/s");
    fmt_threads(thr, sizeof thr, r, r->bw_all[l]);
    t.n = spec.n = 0;
    rt_str_printf(&t, "%s %s (%s)", cm_bound_name(CM_LEVEL(l)), rate, thr);
    rt_str_printf(&spec, "$%s with lines lw 2 lc rgb '%s'", cm_bound_name(CM_LEVEL(l)), level_color[l]);
    gp_elem(&s, &first, spec.s, t.s);
  }
  for (int a = 0; a < 2; a++) {
    double v = r->ce.peak[a];
    if (!(v > 0) || !isfinite(v)) continue;
    fmt_rate(rate, sizeof rate, v, "GFLOP/s");
    fmt_threads(thr, sizeof thr, r, a);
    t.n = spec.n = 0;
    rt_str_printf(&t, "FP32 peak %s (%s)", rate, thr);
    rt_str_printf(&spec, "%.9g with lines lw %s dt %d lc rgb '#000000'", v / 1e9, a == all_peak ? "2" : "1.5",
                  a == all_peak ? 1 : 2);
    gp_elem(&s, &first, spec.s, t.s);
  }
  double nf;
  int lk = lower_roof(r, &nf, &all_low);
  if (lk >= 0) {
    fmt_rate(rate, sizeof rate, nf, "GFLOP/s");
    fmt_threads(thr, sizeof thr, r, all_low);
    t.n = spec.n = 0;
    rt_str_printf(&t, "no FMA: %s %s (%s)", r->ce.cls[lk].name, rate, thr);
    rt_str_printf(&spec, "%.9g with lines lw 1.5 dt 3 lc rgb '#777777'", nf / 1e9);
    gp_elem(&s, &first, spec.s, t.s);
  }
  for (int c = 0; c < 2; c++) {
    if (!count[c]) continue;
    t.n = spec.n = 0;
    if (is_gpu(r)) rt_str_printf(&t, "schedules (%d)", count[c]);
    else if (c) rt_str_printf(&t, "schedules, threads > 1 (%d)", count[c]);
    else rt_str_printf(&t, "schedules, 1 thread (%d)", count[c]);
    rt_str_printf(&spec, "$%s using 1:2 with points pt %d ps 1.2 lc rgb '%s'", cls_name[c], c ? 5 : 7,
                  c ? "#68C0306A" : "#682050C0");
    gp_elem(&s, &first, spec.s, t.s);
  }
  fmt_rate(rate, sizeof rate, b->roof * 1e9, "GFLOP/s");
  t.n = 0;
  rt_str_printf(&t, "roof at this intensity: %s", rate);
  gp_elem(&s, &first, "$roof using 1:2 with points pt 3 ps 2 lw 2 lc rgb '#000000'", t.s);
  t.n = 0;
  if (is_gpu(r))
    rt_str_printf(&t, "best: trial %lld", (long long)b->trial);
  else
    rt_str_printf(&t, "best: trial %lld, %d thread%s", (long long)b->trial,
                  b->threads ? b->threads : 1, b->threads > 1 ? "s" : "");
  gp_elem(&s, &first, "$best using 1:2 with points pt 6 ps 2.6 lw 2.5 lc rgb '#000000'", t.s);
  rt_str_printf(&s, "\n");
  free(t.s);
  free(spec.s);
  return s.s;
}

/* Whether prog is an executable file in a directory of $PATH. */
static int in_path(const char *prog) {
  const char *path = getenv("PATH");
  if (!path) return 0;
  char *dirs = rt_strdup(path), *save = NULL, buf[4096];
  int found = 0;
  for (char *d = strtok_r(dirs, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
    snprintf(buf, sizeof buf, "%s/%s", *d ? d : ".", prog);
    found = !access(buf, X_OK);
  }
  free(dirs);
  return found;
}

static const char no_gnuplot[] =
    "gnuplot is not installed (not found on PATH): install the Debian package gnuplot-nox "
    "(apt-get install gnuplot-nox)";

/* Run gnuplot (an argument vector, no shell) with script on its standard
** input and its standard output into img (the image's temporary file); 0
** when it exited 0 and wrote something, else EXIT_FAIL after reporting. */
static int run_gnuplot(const char *script, rt_out *img) {
  FILE *in = tmpfile();
  if (!in || fputs(script, in) < 0 || fflush(in) || lseek(fileno(in), 0, SEEK_SET)) {
    int rc = cli_fail(CMD, "cannot write gnuplot's script to a temporary file: %s", strerror(errno));
    if (in) fclose(in);
    return rc;
  }
  int keep[2] = {fileno(in), fileno(img->f)};   /* the only descriptors it gets */
  pid_t pid = rt_fork(0, keep, 2);
  if (pid < 0) {
    fclose(in);
    return cli_fail(CMD, "fork: %s", strerror(errno));
  }
  if (pid == 0) {
    if (dup2(keep[0], 0) < 0 || dup2(keep[1], 1) < 0) _exit(126);
    execlp("gnuplot", "gnuplot", (char *)NULL);
    _exit(127);
  }
  fclose(in);
  int st;
  if (rt_child_wait(pid, &st, 0) != pid) return cli_fail(CMD, "waitpid: %s", strerror(errno));
  if (WIFEXITED(st) && WEXITSTATUS(st) == 127) return cli_fail(CMD, "%s", no_gnuplot);
  struct stat sb;
  if (!WIFEXITED(st) || WEXITSTATUS(st) || fstat(fileno(img->f), &sb) || sb.st_size == 0)
    return cli_fail(CMD, "gnuplot failed on the plot's script (%s %d); %s is unchanged",
                    WIFEXITED(st) ? "exit status" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
                    img->path);
  return 0;
}

/* A CSV field: quoted when it holds a comma, quote or newline. */
static void csv_field(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* The plotted points as CSV into f. */
static void write_csv(const roof *r, FILE *f) {
  fprintf(f, "trial,campaign,threads,time_s,flops,bytes,intensity,gflops,roof_gflops,roof_fraction,best,config\n");
  for (int i = 0; i < r->n; i++) {
    const point *p = &r->p[i];
    fprintf(f, "%lld,%lld,", (long long)p->trial, (long long)p->campaign);
    if (p->threads) fprintf(f, "%d", p->threads);
    fprintf(f, ",%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%d,", p->time, r->flops, r->bytes, r->ai, p->gflops,
            p->roof, p->gflops / p->roof, i == r->best);
    csv_field(f, p->config);
    fputc('\n', f);
  }
}

/* The text summary on stdout. */
static void summary(const roof *r) {
  const point *b = &r->p[r->best];
  int many = 0;
  for (int i = 0; i < r->n; i++) many += r->p[i].threads > 1;
  printf("workload   %s on %s (%s)\n", r->key, r->target, r->model);
  printf("schedules  %d verified (%d with 1 thread, %d with more)", r->n, r->n - many, many);
  if (r->o.campaign) printf(" of campaign %lld", (long long)r->o.campaign);
  if (r->dups) printf("; %d repeated configurations skipped", r->dups);
  if (r->other_targets) printf("; %d trials of other machines named %s skipped", r->other_targets, r->target);
  printf("\nintensity  %.4g flops / byte (%.6g flops, %.6g compulsory bytes)\n", r->ai, r->flops, r->bytes);
  printf("ceilings   measured %s: FP32 peak %.1f GFLOP/s", r->measured, r->peak / 1e9);
  for (int l = 0; l < CM_NLEVEL; l++)
    if (!isnan(r->bw[l])) printf(", %s %.1f GB/s", cm_bound_name(CM_LEVEL(l)), r->bw[l] / 1e9);
  printf("\nbest       trial %lld (%d thread%s): %.1f GFLOP/s, %.1f%% of the attainable roof %.1f GFLOP/s"
         " = min(peak, DRAM x intensity)\n",
         (long long)b->trial, b->threads ? b->threads : 1, b->threads > 1 ? "s" : "", b->gflops,
         100 * b->gflops / b->roof, b->roof);
  printf("of roofs  ");
  printf(" compute %.1f%%", 100 * b->gflops * 1e9 / r->peak);
  for (int l = 0; l < CM_NLEVEL; l++)
    if (!isnan(r->bw[l]))
      printf(", %s %.1f%% (of %.1f)", cm_bound_name(CM_LEVEL(l)), 100 * b->gflops * 1e9 / level_roof(r, l, r->ai),
             level_roof(r, l, r->ai) / 1e9);
  printf("\n");
  if (b->gflops > b->roof) {   /* above the classic roof: say why it can be */
    int l = 0;
    while (l < CM_NLEVEL - 1 && !(r->bytes <= r->ce.cache[l] * (l < 2 ? fmax(r->ce.threads, 1) : 1))) l++;
    int per_core = l < 2 && r->ce.threads > 1;
    if (l < CM_NLEVEL - 1)
      printf("note       above the DRAM roof: the workload's %.4g MB fit in %s (%.4g MiB%s), where runs after "
             "the first find them (tune --flush times cold caches)\n",
             r->bytes / 1e6, cm_bound_name(CM_LEVEL(l)), r->ce.cache[l] / 1048576,
             per_core ? " per core, one per thread" : "");
    else
      printf("note       above the DRAM roof: the ceilings may be too low (measure again: rooftune bench "
             "--force)\n");
  }
}

static void roof_free(roof *r) {
  for (int i = 0; i < r->n; i++) free(r->p[i].config);
  free(r->p);
  free(r->camp);
  free(r->camp_target);
  free(r->kernel);
  free(r->key);
  free(r->target);
  free(r->fingerprint);
  cli_target_free(&r->t);
  db_close(r->d);
}

/* The usage line, here and in cmd_model.c's table of subcommands (which
** this file does not read: no circle of files). */
const char cmd_model_roofline_usage[] =
    "[--db F] (--campaign ID | [--target T] [--fingerprint P] --kernel K [--set VAR=VAL,...])\n"
    "       -o FILE.png|FILE.svg [--title T] [--data FILE.csv]";

int cmd_model_roofline(int argc, char **argv) {
  roof r;
  memset(&r, 0, sizeof r);
  int rc = parse(argc, argv, &r.o);
  if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
  if (!in_path("gnuplot")) return cli_fail(CMD, "%s", no_gnuplot);
  /* every output is opened first (a refused one changes nothing) and
  ** renamed into place only when all are complete */
  char *gp = sibling(r.o.out, ".gp");
  rt_out img = {0}, gpo = {0}, csv = {0};
  if ((rc = cli_out_open(&img, CMD, r.o.out, r.o.db, NULL)) ||
      (rc = cli_out_open(&gpo, CMD, gp, r.o.db, NULL)) ||
      (r.o.data && (rc = cli_out_open(&csv, CMD, r.o.data, r.o.db, NULL)))) {
    rt_out_abort(&img), rt_out_abort(&gpo);
    free(gp);
    return rc;
  }
  rt_err err = {0};
  struct stat sb;
  if (stat(r.o.db, &sb)) rc = cli_fail(CMD, "%s: %s", r.o.db, strerror(errno));
  else if (!(r.d = db_open(r.o.db, DB_READ, &err))) rc = cli_fail(CMD, "%s", err.msg);
  else if (!(rc = load_points(&r)) && !(rc = load_workload(&r))) rc = load_ceilings(&r);
  char *keep = NULL, *script = NULL;
  rt_str title = {0};
  if (!rc) {
    target_model(&r);
    if (r.o.title) {
      rt_str_printf(&title, "%s", r.o.title);
    } else {
      if (r.o.campaign) rt_str_printf(&title, "%s -- campaign %lld\n", r.key, (long long)r.o.campaign);
      else rt_str_printf(&title, "%s -- every campaign\n", r.key);
      rt_str_printf(&title, "target %s: %s -- ceilings measured %s", r.target, r.model, r.measured);
    }
    keep = gp_script(&r, title.s, 1);
    script = gp_script(&r, title.s, 0);
    fputs(keep, gpo.f);
    if (r.o.data) write_csv(&r, csv.f);
    rc = run_gnuplot(script, &img);
  }
  if (!rc && (rt_out_commit(&img, &err) || rt_out_commit(&gpo, &err) ||
              (r.o.data && rt_out_commit(&csv, &err))))
    rc = cli_fail(CMD, "%s", err.msg);
  rt_out_abort(&img), rt_out_abort(&gpo), rt_out_abort(&csv);   /* what was not committed */
  if (!rc) {
    printf("wrote %s\nwrote %s\n", r.o.out, gp);
    if (r.o.data) printf("wrote %s\n", r.o.data);
    summary(&r);
  }
  free(title.s);
  free(keep);
  free(script);
  free(gp);
  roof_free(&r);
  return rc;
}
