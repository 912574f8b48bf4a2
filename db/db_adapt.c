/*
** db_adapt.c -- `rooftune db adapt-import`: the side log of the reader's
** online adaptation (rtdb.h, "Online adaptation", A5) turned into trials
** and, when asked, new pin versions. The whole log is read and checked
** first (a line that is not what rtdb_adapt writes is an error naming the
** file and line, and nothing is stored); then, in one transaction, each
** site with reports becomes one campaign (strategy "adapt") of the stored
** workload its vars name exactly, with one trial per arm that ran: status
** ok with the median, mean, sd, min and every reported time (runtimes),
** or runtime_error when the application reported a failure of it. With
** pin, a site whose adapter replaced its incumbent pins the replacing
** arm's new trial, unless the workload's pin changed since the run. A
** site imported before (a campaign of its session and number) is skipped.
*/
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "rtdb.h"
#include "rtdb_int.h"

typedef struct arm {
  char *config, *workload;
  double *t;
  size_t n, cap;
  long long fails;
} arm;

typedef struct site {
  char *target, *kernel, *vars, *tag, *match, *session;
  double confidence;           /* the session's */
  int index;                   /* its number in its session */
  arm *arms;
  int narms;
  int replaced;                /* the last replacing arm, -1 */
  double p, alpha;
  long long n, vs_n;
} site;

typedef struct log_rd {
  site *s;
  int n, cap, first;           /* first: the current session's first site */
  double confidence;           /* the current session's */
  const char *path;
  long line;
  rt_err *err;
} log_rd;

static void site_free(site *s) {
  free(s->target), free(s->kernel), free(s->vars), free(s->tag), free(s->match), free(s->session);
  for (int i = 0; i < s->narms; i++) free(s->arms[i].config), free(s->arms[i].workload), free(s->arms[i].t);
  free(s->arms);
}

static int bad(log_rd *r, const char *what) {
  rt_err_set(r->err, "%s:%ld: %s", r->path, r->line, what);
  return -1;
}

/* A string member, or NULL. */
static const char *str(json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

/* The site line's fields into a new site; 0 or -1. */
static int read_site(log_rd *r, json_t *o, const char *session) {
  json_t *arms = json_object_get(o, "arms"), *id = json_object_get(o, "site"), *tag = json_object_get(o, "tag");
  const char *match = str(o, "match");
  if (!json_is_integer(id) || json_integer_value(id) != r->n - r->first || !str(o, "target") || !str(o, "kernel") ||
      !str(o, "vars") || !(json_is_null(tag) || json_is_string(tag)) || !match ||
      !json_is_array(arms) ||
      json_array_size(arms) == 0 || json_array_size(arms) > 1000)
    return bad(r, "a site line without its number (the session's next), target, kernel, vars, tag, match or arms");
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 16;
    r->s = rt_realloc(r->s, (size_t)r->cap * sizeof *r->s);
  }
  site *s = &r->s[r->n++];
  *s = (site){rt_strdup(str(o, "target")), rt_strdup(str(o, "kernel")), rt_strdup(str(o, "vars")),
              json_is_string(tag) ? rt_strdup(json_string_value(tag)) : NULL, rt_strdup(match),
              rt_strdup(session), r->confidence, (int)json_integer_value(id), NULL, 0, -1, NAN, NAN, 0, 0};
  s->arms = rt_calloc(json_array_size(arms), sizeof *s->arms);
  size_t i;
  json_t *a;
  json_array_foreach(arms, i, a) {
    const char *config = str(a, "config"), *workload = str(a, "workload");
    json_t *parsed = config ? json_loads(config, 0, NULL) : NULL;
    int object = json_is_object(parsed);
    json_decref(parsed);
    if (!object || !workload) return bad(r, "an arm without its config (a JSON object as a string) or workload");
    s->arms[s->narms++] = (arm){rt_strdup(config), rt_strdup(workload), NULL, 0, 0, 0};
  }
  return 0;
}

/* The arm of a report, failure or decision line; NULL after bad(). */
static arm *arm_of(log_rd *r, json_t *o, site **sp) {
  json_t *s = json_object_get(o, "s"), *a = json_object_get(o, "a");
  if (!json_is_integer(s) || !json_is_integer(a)) return bad(r, "\"s\" and \"a\" must be integers"), NULL;
  json_int_t si = json_integer_value(s), ai = json_integer_value(a);
  if (si < 0 || si >= r->n - r->first) return bad(r, "a report of a site not declared in this session"), NULL;
  site *st = &r->s[r->first + si];
  if (ai < 0 || ai >= st->narms) return bad(r, "a report of an arm the site does not have"), NULL;
  *sp = st;
  return &st->arms[ai];
}

/* Read the whole log into r; 0 or -1. */
static int read_log(log_rd *r) {
  FILE *f = fopen(r->path, "r");
  if (!f) {
    rt_err_set(r->err, "%s: cannot open: %s", r->path, strerror(errno));
    return -1;
  }
  char *line = NULL, *session = NULL;
  size_t cap = 0;
  ssize_t len;
  int rc = 0;
  while (!rc && (len = getline(&line, &cap, f)) >= 0) {
    r->line++;
    if (len == 0 || line[len - 1] != '\n') {
      rc = bad(r, "an incomplete last line (the writer stopped mid-write?)");
      break;
    }
    json_error_t je;
    json_t *o = json_loads(line, 0, &je);
    site *s;
    arm *a;
    json_t *t, *ev;
    if (!json_is_object(o)) {
      rc = bad(r, "not a JSON object");
    } else if (json_object_get(o, "rtdb_adapt")) {
      json_t *conf = json_object_get(o, "confidence");
      if (json_integer_value(json_object_get(o, "rtdb_adapt")) != 1 || !str(o, "session") || !json_is_number(conf))
        rc = bad(r, "a session line of an unknown version, or without its session or confidence");
      else
        free(session), session = rt_strdup(str(o, "session")), r->first = r->n,
                       r->confidence = json_number_value(conf);
    } else if (!session) {
      rc = bad(r, "a line before the first session line");
    } else if (json_object_get(o, "site")) {
      rc = read_site(r, o, session);
    } else if (!(a = arm_of(r, o, &s))) {
      rc = -1;
    } else if ((t = json_object_get(o, "t"))) {
      double x = json_number_value(t);
      if (!json_is_number(t) || !(x > 0) || !isfinite(x)) rc = bad(r, "a time that is not a number > 0");
      else {
        if (a->n == a->cap) a->t = rt_realloc(a->t, (a->cap = a->cap ? 2 * a->cap : 16) * sizeof *a->t);
        a->t[a->n++] = x;
      }
    } else if (json_object_get(o, "fail")) {
      a->fails++;
    } else if ((ev = json_object_get(o, "event")) && json_is_string(ev)) {
      if (!strcmp(json_string_value(ev), "replace")) {
        s->replaced = (int)(a - s->arms);
        s->p = json_number_value(json_object_get(o, "p"));
        s->alpha = json_number_value(json_object_get(o, "alpha"));
        s->n = (long long)json_integer_value(json_object_get(o, "n"));
        s->vs_n = (long long)json_integer_value(json_object_get(o, "vs_n"));
      } else if (strcmp(json_string_value(ev), "drop") && strcmp(json_string_value(ev), "retire")) {
        rc = bad(r, "an unknown event");
      }
    } else {
      rc = bad(r, "a line that is none of rtdb_adapt's (session, site, report, fail, event)");
    }
    json_decref(o);
  }
  if (!rc && ferror(f)) rc = bad(r, "read error");
  free(line);
  free(session);
  fclose(f);
  return rc;
}

/* The stored workload vars names (distance 0; a variable vars leaves out
** must not tell two such workloads apart), of the newest template version
** of kernel that has one: *wid and *key (caller frees). 0, 1 when none,
** -1 with err. */
static int find_workload(db *d, const char *kernel, const char *vars, int64_t *wid, char **key, rt_err *err) {
  sqlite3_stmt *st = db__query(d, err, "SELECT w.id, w.key, w.sizes, w.dtype, k.id FROM workloads w"
                                       " JOIN kernels k ON k.id = w.kernel_id WHERE k.name = ?1"
                                       " ORDER BY k.id DESC, w.id", "s", kernel);
  if (!st) return -1;
  int rc, out = 1;
  int64_t kid = 0;
  while (out >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (out == 0 && sqlite3_column_int64(st, 4) != kid) break;   /* an older template version */
    double dist;
    int code = rtdb__distance(vars, (const char *)sqlite3_column_text(st, 2),
                              (const char *)sqlite3_column_text(st, 3), &dist);
    if (code == RTDB_MISUSE) {
      rt_err_set(err, "malformed vars '%s'", vars);
      out = -1;
    } else if (!code && dist == 0 && out == 0) {
      rt_err_set(err, "vars '%s' name both '%s' and '%s' of %s: give the variable that tells them apart", vars,
                 *key, (const char *)sqlite3_column_text(st, 1), kernel);
      free(*key);
      *key = NULL;
      out = -1;
    } else if (!code && dist == 0) {
      *wid = sqlite3_column_int64(st, 0);
      kid = sqlite3_column_int64(st, 4);
      *key = rt_strdup((const char *)sqlite3_column_text(st, 1));
      out = 0;
    }
  }
  if (out == 1 && rc != SQLITE_DONE) out = db__fail(d, err, "read");
  sqlite3_finalize(st);
  return out;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Store one arm's trial in campaign cid: *id. 0 or -1. */
static int store_arm(db *d, int64_t cid, const arm *a, int64_t *id, rt_err *err) {
  db_trial tr;
  db_trial_init(&tr);
  tr.campaign_id = cid;
  tr.config_json = a->config;
  tr.origin = "adapt";
  tr.repeats = (int)a->n;
  rt_str rt = {0};
  if (a->fails) {
    tr.status = "runtime_error";
  } else {
    double *t = rt_malloc(a->n * sizeof *t), sum = 0, ss = 0;
    memcpy(t, a->t, a->n * sizeof *t);
    qsort(t, a->n, sizeof *t, cmp_double);
    for (size_t i = 0; i < a->n; i++) sum += t[i];
    double mean = sum / (double)a->n;
    for (size_t i = 0; i < a->n; i++) ss += (t[i] - mean) * (t[i] - mean);
    tr.status = "ok";
    tr.time_s = a->n % 2 ? t[a->n / 2] : (t[a->n / 2 - 1] + t[a->n / 2]) / 2;
    tr.mean_s = mean, tr.min_s = t[0], tr.sd_s = a->n > 1 ? sqrt(ss / (double)(a->n - 1)) : NAN;
    free(t);
    rt_str_printf(&rt, "[");
    for (size_t i = 0; i < a->n; i++) rt_str_printf(&rt, "%s%.17g", i ? "," : "", a->t[i]);
    rt_str_printf(&rt, "]");
    tr.runtimes_json = rt.s;
  }
  int rc = db_trial_add(d, &tr, id, err);
  free(rt.s);
  return rc;
}

/* One site: its campaign, trials and (pin) pin; the report through fn. */
/* What store_site did, told after the commit (the workload key copied). */
typedef struct outcome {
  db_adapt_site s;
  char *workload;
} outcome;

/* Keep out (its workload copied) for the report after the commit. */
static void keep(outcome *o, const db_adapt_site *out) {
  o->s = *out;
  o->workload = out->workload ? rt_strdup(out->workload) : NULL;
  o->s.workload = o->workload;
}

static int store_site(db *d, const char *path, const site *s, int pin, int skip, outcome *done, rt_err *err) {
  long long reports = 0, fails = 0;
  for (int i = 0; i < s->narms; i++) reports += (long long)s->arms[i].n, fails += s->arms[i].fails;
  db_adapt_site out = {.target = s->target, .kernel = s->kernel, .vars = s->vars, .session = s->session,
                       .site = s->index, .reports = reports, .failures = fails};
  if (!reports && !fails) return keep(done, &out), 0;
  int64_t wid = 0, tid = 0, sid = 0, cid = 0;
  char *key = NULL;
  int rc = db__run(d, db__query(d, err, "SELECT id FROM campaigns WHERE strategy = 'adapt' AND"
                                        " json_extract(options, '$.session') = ?1 AND"
                                        " json_extract(options, '$.site') = ?2", "si", s->session,
                                (int64_t)s->index), &cid, err);
  if (rc < 0) return -1;
  if (!rc) return out.skipped = "imported before (campaign of the same session and site)", out.campaign = 0,
               keep(done, &out), 0;
  rc = find_workload(d, s->kernel, s->vars, &wid, &key, err);
  if (rc > 0) {
    if (skip) return out.skipped = "no stored workload matches its vars", keep(done, &out), 0;
    rt_err_set(err, "%s: site %d of session %s: no stored workload of %s matches vars '%s' (the adaptation "
               "ran on a workload never tuned here: tune it once, or --skip-unmatched)",
               path, s->index, s->session, s->kernel, s->vars);
    return -1;
  }
  if (rc) return -1;
  out.workload = key;
  rt_str opts = {0}, reason = {0};
  json_t *o = json_pack("{s:s, s:s, s:i, s:s, s:o, s:s, s:I, s:I}", "log", path, "session", s->session,
                        "site", s->index, "vars", s->vars, "tag", s->tag ? json_string(s->tag) : json_null(),
                        "match", s->match, "reports", (json_int_t)reports, "failures", (json_int_t)fails);
  char *oj = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
  json_decref(o);
  rt_str_printf(&opts, "adapt:%s", path);
  rc = !oj ? (rt_err_set(err, "out of memory"), -1) : 0;
  if (!rc)
    rc = db__run(d, db__query(d, err, "SELECT g.id FROM targets g WHERE g.name = ?1 ORDER BY g.fingerprint <> 'external'"
                                      " DESC, EXISTS(SELECT 1 FROM pin_current c WHERE c.target_id = g.id AND"
                                      " c.workload_id = ?2) DESC, g.id DESC LIMIT 1", "si", s->target, wid),
                 &tid, err);
  if (rc > 0) rt_err_set(err, "%s: site %d: no target named %s", path, s->index, s->target), rc = -1;
  if (!rc) {
    rc = db__run(d, db__query(d, err, "SELECT space_id FROM campaigns WHERE workload_id = ?1 ORDER BY id DESC"
                                      " LIMIT 1", "i", wid), &sid, err);
    if (rc > 0) rc = db_space_id(d, "{}", &sid, err);
  }
  if (!rc) {
    db_campaign c = {tid, wid, sid, "adapt", oj, 0, reports, opts.s, "", "", "done"};
    rc = db_campaign_new(d, &c, &cid, err);
  }
  int64_t won = 0;
  for (int i = 0; !rc && i < s->narms; i++) {
    int64_t id;
    if (!s->arms[i].n && !s->arms[i].fails) continue;
    if (!(rc = store_arm(d, cid, &s->arms[i], &id, err))) {
      out.trials++;
      if (i == s->replaced && !s->arms[i].fails) won = id;
    }
  }
  out.campaign = cid;
  if (!rc && pin && s->replaced >= 0) {
    /* the pin in force during the run: arm 0 for an exact answer, else none */
    sqlite3_stmt *st = db__query(d, err, "SELECT p.config FROM pin_current c JOIN pins p ON p.id = c.pin_id"
                                         " WHERE c.target_id = ?1 AND c.workload_id = ?2", "ii", tid, wid);
    int step = st ? sqlite3_step(st) : SQLITE_ERROR;
    const char *now = step == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    int same = !strcmp(s->match, "exact") ? now && !strcmp(now, s->arms[0].config) : step == SQLITE_DONE;
    if (step != SQLITE_ROW && step != SQLITE_DONE) rc = st ? db__fail(d, err, "read") : -1;
    sqlite3_finalize(st);
    if (rc) {
    } else if (!won) {
      out.skipped = "the replacing schedule failed in a run: not pinned";
    } else if (!same) {
      out.skipped = "the workload's pin changed since the run: not pinned";
    } else {
      rt_str_printf(&reason, "online adaptation: faster than the pin at confidence %g (one-sided Welch "
                    "test, p = %.3g < level %.3g, %lld against %lld reports)",
                    s->confidence, s->p, s->alpha, s->n, s->vs_n);
      db_pin_req req = {s->target, s->kernel, key, won, "adapt-import", reason.s};
      int64_t version;
      if (!(rc = db__pin_in(d, &req, &version, err))) out.pin_version = version;
    }
  }
  if (!rc) keep(done, &out);
  free(oj), free(opts.s), free(reason.s), free(key);
  return rc;
}

int db_adapt_import(db *d, const char *path, int pin, int skip_unmatched, db_adapt_fn fn, void *ctx,
                    rt_err *err) {
  log_rd r = {.path = path, .err = err};
  int rc = read_log(&r);
  outcome *done = rt_calloc((size_t)r.n + 1, sizeof *done);
  if (!rc && !(rc = db_begin(d, err))) {
    for (int i = 0; !rc && i < r.n; i++) rc = store_site(d, path, &r.s[i], pin, skip_unmatched, &done[i], err);
    if (rc) db_rollback(d);
    else rc = db_commit(d, err);
  }
  for (int i = 0; i < r.n; i++) {   /* told once stored: nothing is said of a rolled-back log */
    if (!rc) fn(ctx, &done[i].s);
    free(done[i].workload);
  }
  free(done);
  for (int i = 0; i < r.n; i++) site_free(&r.s[i]);
  free(r.s);
  return rc ? -1 : 0;
}
