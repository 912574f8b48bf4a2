/*
** cmd_model_whatif.c -- `rooftune model whatif A.json B.json`: the same
** space predicted on two described machines (target description files,
** targets/model/tm.h) by the model alone: each file's best predicted
** schedules with their times and limiting bounds, where each lands on the
** other file, and how the ranking changes (Spearman's rho and Kendall's
** tau over every ranked schedule, the overlap of the two top-k sets). The
** space is the kernel's, bound with --set and A's limits (B's limits, when
** they differ, are named and not used: one space, two machines). Nothing
** runs and nothing is stored.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/jw.h"
#include "../cost_model/cm.h"
#include "../targets/tg.h"
#include "../tuner/tu.h"
#include "cli.h"

#define CMD "model whatif"

const char cmd_model_whatif_usage[] =
    "--kernel K [--set VAR=VAL,...] [--top N] [--config JSON] [--coefs JSON]\n"
    "       [--seed S] [--flush] [--json] A.json B.json";

typedef struct wopts {
  const char *kernel, *set, *config, *coefs, *file[2];
  int top, flush, json;
  int64_t seed;
} wopts;

static int parse(int argc, char **argv, wopts *o) {
  *o = (wopts){.top = 5, .seed = 1};
  const cli_opt opts[] = {
    CLI_OPT_STRING("kernel", &o->kernel, "K", "the kernel template (of the backend both files borrow)",
                   .required = CLI_ALL),
    CLI_OPT_STRING("set", &o->set, "VAR=VAL,...", "the workload's problem variables", .check = cli_check_set),
    CLI_OPT_INT("top", &o->top, "N", 1, 1000, "best schedules shown per file, and the k of the top-k\n"
                "overlap (default 5)"),
    CLI_OPT_STRING("config", &o->config, "JSON", "also this schedule on both files: time, bound, bytes\n"
                   "per level"),
    CLI_OPT_STRING("coefs", &o->coefs, "JSON", "the model's coefficients {name: value} over its defaults\n"
                   "(rooftune model history --json prints calibrated ones)"),
    CLI_OPT_INT64("seed", &o->seed, "S", 0, 0, "the sample of a space of more than 20000 schedules\n"
                  "(default 1)"),
    CLI_OPT_FLAG("flush", &o->flush, "predict cold caches (as measured with --flush)"),
    CLI_OPT_FLAG("json", &o->json, "JSON on stdout"),
    CLI_OPT_END,
  };
  cli_spec spec = {
    .cmd = CMD, .usage = cmd_model_whatif_usage, .opts = opts, .operands = "A.json B.json",
    .about = "What-if: one kernel's space ranked by the model on two target description files\n"
             "(rooftune targets --describe FILE checks one): each file's best predicted schedules,\n"
             "where they land on the other, and how the ranking changes. Nothing runs.",
    .epilog = "The space is bound with --set and A's limits. Rankings compare every ranked\n"
              "schedule (the whole space up to 20000 schedules, else a seeded sample of 4096).\n"};
  int nop, rc = cli_parse(&spec, argc, argv, &nop);
  if (rc) return rc;
  if (nop != 2) return cli_usage(&spec, "expected two description files A.json B.json, got %d", nop);
  o->file[0] = argv[1], o->file[1] = argv[2];
  return 0;
}

/* One file's side: its target, ceilings and the predictions of the
** ranked schedules; rank[i]: schedule i's place (0: fastest). */
typedef struct side {
  tg_target t;
  tg_desc d;
  cm_ceilings ce;
  cm_pred *pred;
  int64_t *order, *rank;
} side;

typedef struct ordt { double t; int64_t i; } ordt;
static int by_t(const void *a, const void *b) {
  const ordt *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

/* Order and ranks of s->pred[0..n). */
static void order_side(side *s, int64_t n) {
  ordt *o = rt_malloc((size_t)n * sizeof *o);
  for (int64_t i = 0; i < n; i++) o[i] = (ordt){s->pred[i].time, i};
  qsort(o, (size_t)n, sizeof *o, by_t);
  s->order = rt_malloc((size_t)n * sizeof *s->order);
  s->rank = rt_malloc((size_t)n * sizeof *s->rank);
  for (int64_t i = 0; i < n; i++) s->order[i] = o[i].i, s->rank[o[i].i] = i;
  free(o);
}

static void pred_json(jw *w, const cm_pred *p) {
  jw_begin(w, '{');
  jw_key(w, "time_s"); jw_double(w, p->time);
  jw_key(w, "bound"); jw_str(w, cm_bound_name(p->bound));
  jw_key(w, "flops"); jw_double(w, p->w.flops);
  jw_key(w, "bytes"); jw_begin(w, '{');
  for (int l = 0; l < CM_NLEVEL; l++) { jw_key(w, cm_bound_name(CM_LEVEL(l))); jw_double(w, p->w.bytes[l]); }
  jw_end(w, '}');
  jw_end(w, '}');
}

int cmd_model_whatif(int argc, char **argv) {
  wopts o;
  int rc = parse(argc, argv, &o);
  if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
  side s[2];
  memset(s, 0, sizeof s);
  rt_err err = {0};
  for (int f = 0; f < 2; f++)
    if (tg_file_target(o.file[f], &s[f].t, &err) || tg_describe(&s[f].t, &s[f].d, &err) ||
        tg_bench(&s[f].t, NULL, &s[f].ce, &err))
      return cli_fail(CMD, "%s", err.msg);
  if (strcmp(s[0].t.be->model_family, s[1].t.be->model_family))
    return cli_fail(CMD, "%s and %s borrow backends of different model families (%s, %s): their "
                    "predictions are of different models", o.file[0], o.file[1], s[0].t.be->model_family,
                    s[1].t.be->model_family);
  const cm_kmodel *km = cm_kmodel_find_on(s[0].t.be->model_family, o.kernel);
  if (!km) return cli_fail(CMD, "kernel %s has no cost model on %s", o.kernel, s[0].t.name);
  cm_coefs c;
  cm_coefs_default(km, &c);
  if (o.coefs && tu_coefs_given(km, o.coefs, &c, &err)) return cli_fail(CMD, "--coefs: %s", err.msg);
  tu_rank_opts ro = {.target = &s[0].t, .kernel = o.kernel, .set = o.set, .seed = (uint64_t)o.seed,
                     .coefs = &c, .flush = o.flush};
  tu_ranking r;
  if (tu_rank(&ro, &r, &err)) return cli_fail(CMD, "%s: %s", o.file[0], err.msg);
  int np = sp_nparams(r.sp);
  int *cfg = NULL;
  if (o.config && (cfg = rt_malloc((size_t)np * sizeof *cfg), sp_config_parse(r.sp, o.config, cfg, &err))) {
    rc = cli_fail(CMD, "--config: %s", err.msg);
    goto out;
  }
  /* B's limits, when they differ from A's, are not the space's */
  char *la = tg_kernel_bindings(&s[0].t, r.k, o.set, &err), *lb = tg_kernel_bindings(&s[1].t, r.k, o.set, &err);
  int same_limits = la && lb && !strcmp(la, lb);
  /* A's predictions are the ranking's; B's of the same schedules */
  s[0].pred = r.pred, r.pred = NULL;
  s[1].pred = rt_malloc((size_t)r.n * sizeof *s[1].pred);
  if (s[1].t.be->model_setup) s[1].t.be->model_setup(&s[1].t, &s[1].ce, NULL, 0);
  for (int64_t i = 0; i < r.n; i++) {
    rt_err e = {0};
    if (cm_predict(km, &r.pb, r.sp, tu_ranking_cfg(&r, i), &s[1].ce, &r.c, o.flush, &s[1].pred[i], &e))
      s[1].pred[i].time = INFINITY;
  }
  cm_pred cp[2];
  for (int f = 0; cfg && f < 2; f++) {
    if (s[f].t.be->model_setup) s[f].t.be->model_setup(&s[f].t, &s[f].ce, NULL, 0);
    if (cm_predict(km, &r.pb, r.sp, cfg, &s[f].ce, &r.c, o.flush, &cp[f], &err)) {
      rc = cli_fail(CMD, "--config: %s", err.msg);
      goto out2;
    }
  }
  order_side(&s[0], r.n), order_side(&s[1], r.n);
  /* agreement over the schedules both files predict */
  double *x = rt_malloc((size_t)r.n * sizeof *x), *y = rt_malloc((size_t)r.n * sizeof *y);
  int64_t m = 0;
  for (int64_t i = 0; i < r.n; i++)
    if (isfinite(s[0].pred[i].time) && isfinite(s[1].pred[i].time))
      x[m] = s[0].pred[i].time, y[m] = s[1].pred[i].time, m++;
  double rho = m > 1 ? cm_spearman(x, y, (int)m) : NAN, tau = m > 1 ? cm_kendall(x, y, (int)m) : NAN;
  free(x), free(y);
  int k = o.top < r.n ? o.top : (int)r.n, overlap = 0;
  for (int i = 0; i < k; i++) overlap += s[1].rank[s[0].order[i]] < k;
  char *key = db_workload_key(r.k->name, r.k->dtype, r.sp), cnt[48];
  rt_count_str(r.count, cnt);
  if (o.json) {
    jw w;
    jw_init(&w, stdout);
    jw_begin(&w, '{');
    jw_key(&w, "workload"); jw_str(&w, key);
    jw_key(&w, "space"); jw_raw(&w, cnt);
    jw_key(&w, "ranked"); jw_int(&w, r.n);
    jw_key(&w, "sampled"); jw_bool(&w, r.sampled);
    jw_key(&w, "coefficients"); jw_str(&w, r.c.source);
    jw_key(&w, "same_limits"); jw_bool(&w, same_limits);
    jw_key(&w, "files"); jw_begin(&w, '[');
    for (int f = 0; f < 2; f++) {
      jw_begin(&w, '{');
      jw_key(&w, "file"); jw_str(&w, o.file[f]);
      jw_key(&w, "target"); jw_str(&w, s[f].t.name);
      jw_key(&w, "fingerprint"); jw_str(&w, s[f].d.fingerprint);
      jw_key(&w, "best"); jw_begin(&w, '[');
      for (int i = 0; i < k; i++) {
        int64_t j = s[f].order[i];
        char *cj = sp_config_json(r.sp, tu_ranking_cfg(&r, j));
        jw_begin(&w, '{');
        jw_key(&w, "config"); jw_raw(&w, cj);
        jw_key(&w, "time_s"); jw_double(&w, s[f].pred[j].time);
        jw_key(&w, "bound"); jw_str(&w, cm_bound_name(s[f].pred[j].bound));
        jw_key(&w, "other_time_s"); jw_double(&w, s[!f].pred[j].time);
        jw_key(&w, "other_bound"); jw_str(&w, cm_bound_name(s[!f].pred[j].bound));
        jw_key(&w, "other_rank"); jw_int(&w, s[!f].rank[j] + 1);
        jw_end(&w, '}');
        free(cj);
      }
      jw_end(&w, ']');
      jw_end(&w, '}');
    }
    jw_end(&w, ']');
    jw_key(&w, "spearman"); jw_double(&w, rho);
    jw_key(&w, "kendall"); jw_double(&w, tau);
    jw_key(&w, "top_k"); jw_int(&w, k);
    jw_key(&w, "top_k_overlap"); jw_int(&w, overlap);
    if (cfg) {
      jw_key(&w, "config"); jw_begin(&w, '{');
      jw_key(&w, "config"); jw_raw(&w, o.config);
      jw_key(&w, "A"); pred_json(&w, &cp[0]);
      jw_key(&w, "B"); pred_json(&w, &cp[1]);
      jw_end(&w, '}');
    }
    jw_end(&w, '}');
    printf("\n");
  } else {
    printf("what-if: %s\n", key);
    printf("ranked %lld %s %s schedules with the %s model (coefficients: %s); nothing ran\n",
           (long long)r.n, r.sampled ? "sampled of" : "of", cnt, s[0].t.be->model_family, r.c.source);
    for (int f = 0; f < 2; f++)
      printf("%c  %s -- %s (fingerprint %.12s)\n", 'A' + f, o.file[f], tg_desc_get(&s[f].d, "model_target"),
             s[f].d.fingerprint);
    if (!same_limits) printf("note: B's limits (%s) differ from A's (%s): the space is A's\n", lb ? lb : "?", la ? la : "?");
    for (int f = 0; f < 2; f++) {
      printf("best on %c:%20s on %c:\n", 'A' + f, "", 'B' - f);   /* over the columns below */
      for (int i = 0; i < k; i++) {
        int64_t j = s[f].order[i];
        char *cj = sp_config_json(r.sp, tu_ranking_cfg(&r, j));
        printf("  %2d. %10.6g ms %-8s  %10.6g ms %-8s rank %-6lld %s\n", i + 1, s[f].pred[j].time * 1e3,
               cm_bound_name(s[f].pred[j].bound), s[!f].pred[j].time * 1e3, cm_bound_name(s[!f].pred[j].bound),
               (long long)s[!f].rank[j] + 1, cj);
        free(cj);
      }
    }
    printf("ranking: Spearman %.4f, Kendall %.4f over %lld schedules; top-%d overlap %d/%d; best B/A %.4g\n",
           rho, tau, (long long)m, k, overlap, k,
           s[1].pred[s[1].order[0]].time / s[0].pred[s[0].order[0]].time);
    if (cfg) {
      printf("--config %s\n", o.config);
      for (int f = 0; f < 2; f++)
        printf("  %c: %.6g ms %s; bytes L1 %.4g L2 %.4g DRAM %.4g; flops %.4g\n", 'A' + f, cp[f].time * 1e3,
               cm_bound_name(cp[f].bound), cp[f].w.bytes[0], cp[f].w.bytes[1], cp[f].w.bytes[3], cp[f].w.flops);
    }
  }
  free(key);
  rc = EXIT_OK;
out2:
  free(la), free(lb);
  for (int f = 0; f < 2; f++) free(s[f].pred), free(s[f].order), free(s[f].rank);
out:
  free(cfg);
  tu_ranking_free(&r);
  return rc;
}
