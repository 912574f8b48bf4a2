/*
** cli_target.c -- the target of recorded data, for every command that works
** on a database's trials (model predict|explain|calibrate|accuracy|history|
** roofline, replay --db, compare --db): taken from the data, never from the
** machine the command runs on. --fingerprint PREFIX names a stored target
** (a unique prefix of its fingerprint); without it, the one target holding
** trials of the kernel (and of the workloads asked for) is the target, and
** several are an error that lists them. The query is db_data_targets.
*/
#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../db/db.h"
#include "../search_spaces/sp.h"
#include "../targets/tg.h"
#include "cli.h"

/* A stored target as the rows of db_data_targets describe it. */
typedef struct cand {
  int64_t id, trials, ok;
  char *name, *fingerprint, *model;
  char **keys;
  int nkeys;
} cand;

typedef struct collect {
  const cli_target_req *q;
  sp_binding **set;           /* the parsed --set texts */
  int *nset, ns;
  cand *c;
  int n;
} collect;

/* The CPU model or device name of a stored description ("-" if none). */
static char *desc_model(const char *description) {
  json_t *j = json_loads(description ? description : "{}", 0, NULL);
  const char *m = json_string_value(json_object_get(j, "model"));
  if (!m || !*m) m = json_string_value(json_object_get(j, "device"));
  char *s = rt_strdup(m && *m ? m : "-");
  json_decref(j);
  return s;
}

/* Whether key is a workload the request asks for. */
static int wanted(const collect *c, const char *key) {
  if (!c->ns) return 1;
  for (int i = 0; i < c->ns; i++)
    if (cli_key_matches(key, c->set[i], c->nset[i])) return 1;
  return 0;
}

static int add_row(void *ctx, const db_data_row *r) {
  collect *c = ctx;
  cand *t = c->n ? &c->c[c->n - 1] : NULL;
  if (!t || t->id != r->target_id) {
    c->c = rt_realloc(c->c, (size_t)(c->n + 1) * sizeof *c->c);
    t = &c->c[c->n++];
    *t = (cand){.id = r->target_id, .name = rt_strdup(r->target),
                .fingerprint = rt_strdup(r->fingerprint), .model = desc_model(r->description)};
  }
  if (r->workload_key && r->trials > 0 && wanted(c, r->workload_key)) {
    t->trials += r->trials, t->ok += r->ok;
    t->keys = rt_realloc(t->keys, (size_t)(t->nkeys + 1) * sizeof *t->keys);
    t->keys[t->nkeys++] = rt_strdup(r->workload_key);
  }
  return 0;
}

static void cand_free(cand *t) {
  for (int i = 0; i < t->nkeys; i++) free(t->keys[i]);
  free(t->keys), free(t->name), free(t->fingerprint), free(t->model);
}

/* "kernel K (workloads ...)" or "any kernel": what was asked for. */
static void asked(const cli_target_req *q, rt_str *s) {
  rt_str_printf(s, "%s%s", q->kernel ? "kernel " : "any kernel", q->kernel ? q->kernel : "");
  for (int i = 0; i < q->nsets; i++) rt_str_printf(s, "%s%s", i ? "; " : " (--set ", q->sets[i]);
  if (q->nsets) rt_str_printf(s, ")");
}

/* The candidates as indented lines on stderr. */
static void list(const cand *c, int n, int count) {
  for (int i = 0; i < n; i++) {
    fprintf(stderr, "  %-8s %s  %s", c[i].name, c[i].fingerprint, c[i].model);
    if (count) fprintf(stderr, "  %lld trials (%lld ok)", (long long)c[i].trials, (long long)c[i].ok);
    fputc('\n', stderr);
  }
}

int cli_data_target(db *d, const char *dbpath, const cli_target_req *q, cli_target *t,
                    const char *cmd) {
  memset(t, 0, sizeof *t);
  char prefix[33] = "";
  if (q->fingerprint) {
    size_t n = strlen(q->fingerprint);   /* hex, or "external" (imported results) */
    char msg[256];
    if (cli_check_fingerprint(q->fingerprint, msg, sizeof msg)) {   /* the commands check it first */
      cli_fail(cmd, "--fingerprint: %s", msg);
      return EXIT_USAGE;
    }
    for (size_t i = 0; i <= n; i++) prefix[i] = (char)tolower((unsigned char)q->fingerprint[i]);
  }
  rt_err err = {0};
  sx_arena *arena = sx_arena_new();
  sp_binding *set[64] = {0};
  int nset[64] = {0}, rc = 0;
  collect c = {.q = q, .set = set, .nset = nset, .ns = q->nsets < 64 ? q->nsets : 64};
  for (int i = 0; i < c.ns && !rc; i++)
    if ((nset[i] = sp_parse_bindings(q->sets[i], arena, &set[i], &err)) < 0)
      rc = cli_fail(cmd, "--set %s: %s", q->sets[i], err.msg);
  if (!rc && db_data_targets(d, q->name, prefix, q->kernel, add_row, &c, &err) < 0)
    rc = cli_fail(cmd, "%s: %s", dbpath, err.msg);
  /* The candidates: every match of --fingerprint, else the holders. */
  int nc = 0;
  for (int i = 0; !rc && i < c.n; i++)
    if (q->fingerprint || c.c[i].trials > 0) {
      cand tmp = c.c[nc];
      c.c[nc++] = c.c[i];
      c.c[i] = tmp;
    }
  rt_str what = {0};
  asked(q, &what);
  if (rc) {
  } else if (nc == 0 && !q->fingerprint) {
    rc = CLI_NO_DATA;   /* nobody's data: the caller decides */
  } else if (nc == 0) {
    rc = cli_fail(cmd, "no target%s%s in %s has a fingerprint starting with %s; stored targets:",
                  q->name ? " named " : "", q->name ? q->name : "", dbpath, prefix);
    for (int i = 0; i < c.n; i++) cand_free(&c.c[i]);
    c.n = 0;
    if (db_data_targets(d, q->name, NULL, q->kernel, add_row, &c, &err) >= 0) list(c.c, c.n, 1);
    nc = 0;
  } else if (nc > 1) {
    rc = cli_fail(cmd, "%s holds data of %s on %d targets%s%s; choose one with --fingerprint PREFIX:",
                  dbpath, what.s, nc, q->fingerprint ? " whose fingerprint starts with " : "",
                  q->fingerprint ? prefix : "");
    list(c.c, nc, 1);
  } else {
    cand *s = &c.c[0];
    t->id = s->id, t->trials = s->trials, t->ok = s->ok;
    t->name = s->name, t->fingerprint = s->fingerprint, t->model = s->model;
    t->keys = s->keys, t->nkeys = s->nkeys;
    *s = (cand){0};
    tg_desc here;
    t->here = !tg_describe_name(t->name, &here, &err) &&
              !strcmp(here.fingerprint, t->fingerprint);
  }
  for (int i = 0; i < c.n; i++) cand_free(&c.c[i]);
  free(c.c);
  free(what.s);
  for (int i = 0; i < c.ns; i++) free(set[i]);
  sx_arena_free(arena);
  return rc;
}

void cli_target_free(cli_target *t) {
  for (int i = 0; i < t->nkeys; i++) free(t->keys[i]);
  free(t->keys), free(t->name), free(t->fingerprint), free(t->model);
  memset(t, 0, sizeof *t);
}
