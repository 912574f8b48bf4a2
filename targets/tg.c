/*
** tg.c -- the targets as the rest of rooftune sees them: a name resolved
** through the rows of tg_backends[] (tg_table.c), the description and its
** fingerprint (one recipe: tg.h), and the thin calls that hand an
** instance to its row.
*/
#include "tg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kn.h"
#include "user/uk.h"
#include "../measure/ms.h"

int tg_resolve(const char *name, tg_target *t, rt_err *err) {
  memset(t, 0, sizeof *t);
  for (int i = 0; tg_backends[i]; i++) {
    int rc = tg_backends[i]->parse(name, t, err);
    if (rc < 0) return -1;
    if (rc > 0) {
      t->be = tg_backends[i];
      if (t->be->instance_row && !(t->be = t->be->instance_row(t, tg_backend_find, err)))
        return -1;   /* tg_backend.h invariant 7 */
      return 0;
    }
  }
  char syn[256];
  rt_err_set(err, "unknown target '%s': expected %s (rooftune targets lists them)", name,
             tg_syntaxes(syn, sizeof syn));
  return -1;
}

int tg_file_target(const char *path, tg_target *t, rt_err *err) {
  for (int i = 0; tg_backends[i]; i++)
    if (tg_backends[i]->model_only) {
      rt_str name = {0};
      rt_str_printf(&name, "%s:%s", tg_backends[i]->name, path);
      int rc = tg_resolve(name.s, t, err);
      free(name.s);
      return rc;
    }
  rt_err_set(err, "%s: no backend row reads target description files", path);
  return -1;
}

const tg_backend *tg_backend_find(const char *name) {
  for (int i = 0; tg_backends[i]; i++)
    if (!strcmp(tg_backends[i]->name, name)) return tg_backends[i];
  return NULL;
}

const kn_kernel *tg_kernel(const tg_target *t, const char *name) {
  for (int i = 0; t && t->be && t->be->kernels[i]; i++)
    if (!strcmp(t->be->kernels[i]->name, name)) return t->be->kernels[i];
  return t && t->be ? uk_find(t->be->name, name) : NULL;   /* a loaded T1 kernel */
}

const tg_backend *tg_backend_of(const char *name) {
  tg_target t;
  rt_err err = {0};
  return tg_resolve(name, &t, &err) ? NULL : t.be;
}

const kn_kernel *tg_kernel_of(const char *target, const char *kernel) {
  tg_target t;
  rt_err err = {0};
  return tg_resolve(target, &t, &err) ? NULL : tg_kernel(&t, kernel);
}

const char *tg_syntaxes(char *buf, size_t cap) {
  buf[0] = 0;
  for (int i = 0; tg_backends[i]; i++)
    snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", i ? ", " : "", tg_backends[i]->syntax);
  return buf;
}

/* The fingerprint of d (the recipe at the top of tg.h) into out. */
static void fingerprint_of(const tg_desc *d, char out[33]) {
  rt_hash h = RT_HASH_INIT;
  for (int i = 0; i < d->n; i++) {
    h = rt_hash_bytes(h, d->key[i], strlen(d->key[i]));
    h = rt_hash_bytes(h, "=", 1);
    h = rt_hash_bytes(h, d->val[i], strlen(d->val[i]) + 1);
  }
  rt_hash_hex(h, out);
}

/* The family chain of a description of row be's (tg.h: "Families"). */
static void family_of(const tg_backend *be, const tg_desc *d, tg_family *f) {
  memset(f, 0, sizeof *f);
  snprintf(f->backend, sizeof f->backend, "%s", be->name);
  if (be->family) be->family(d, f);
}

int tg_family_of(const char *name, const char *description_json, tg_family *f) {
  memset(f, 0, sizeof *f);
  const tg_backend *be = tg_backend_of(name);
  if (!be) return -1;
  tg_desc *d = rt_malloc(sizeof *d);
  int rc = tg_desc_parse(description_json, d);
  if (rc) snprintf(f->backend, sizeof f->backend, "%s", be->name);
  else family_of(be, d, f);
  free(d);
  return rc;
}

int tg_describe(const tg_target *t, tg_desc *d, rt_err *err) {
  memset(d, 0, sizeof *d);
  const tg_backend *be = t->be;   /* a listed instance may still have the table's row */
  if (be->instance_row && !(be = be->instance_row(t, tg_backend_find, err))) return -1;
  if (be->describe(t, d, err)) return -1;
  fingerprint_of(d, d->fingerprint);
  family_of(be, d, &d->family);
  const char *env = t->be->test_fingerprint_env;
  const char *forced = env ? getenv(env) : NULL;
  if (forced && *forced) {   /* test-only: tg_backend.h */
    size_t n = strspn(forced, "0123456789abcdef");
    if (n != 32 || forced[n]) {
      rt_err_set(err, "%s: expected 32 lower-case hex digits, got '%.40s' (a test-only override)",
                 env, forced);
      return -1;
    }
    tg_desc_add(d, "fingerprint_override", "%s (test-only; measured %s)", env, d->fingerprint);
    snprintf(d->fingerprint, sizeof d->fingerprint, "%s", forced);
  }
  return 0;
}

int tg_describe_name(const char *name, tg_desc *d, rt_err *err) {
  tg_target t;
  if (tg_resolve(name, &t, err)) return -1;
  return tg_describe(&t, d, err);
}

const char *tg_provenance(const tg_target *t) {
  return t->be->provenance ? t->be->provenance(t) : NULL;
}

const char *tg_compiler(const tg_target *t, char *buf, size_t cap) {
  return t->be->compiler(t, buf, cap);
}

void tg_build_key(const tg_target *t, const char *src, const char *ldflags, const struct ms_opts *o,
                  char key[33]) {
  t->be->build_key(t, src, ldflags, o, key);
}

void tg_prebuild(const tg_target *t, const char *const *srcs, int n, const char *ldflags,
                 const struct ms_opts *o, int jobs) {
  t->be->prebuild(t, srcs, n, ldflags, o, jobs);
}

int tg_timed(const tg_target *t, const char **why) {
  return t->be->timed ? t->be->timed(t, why) : 1;
}

int tg_measure(const tg_target *t, struct ms_workload *w, const char *src, const char *ldflags,
               const struct ms_opts *o, struct ms_result *r) {
  return t->be->measure(t, w, src, ldflags, o, r);
}

int tg_batches(const tg_target *t, const struct ms_opts *o) {
  return t->be->measure_batch && !o->counters;
}

int tg_measure_batch(const tg_target *t, struct ms_workload *w, const char *const *srcs, int n,
                     const struct ms_opts *o, struct ms_result *r,
                     const volatile sig_atomic_t *stop, rt_err *err) {
  if (tg_batches(t, o)) return t->be->measure_batch(t, w, srcs, n, o, r, stop, err);
  for (int i = 0; i < n; i++) {
    if (stop && *stop) return i;
    if (tg_measure(t, w, srcs[i], NULL, o, &r[i])) {
      rt_err_set(err, "the harness failed: %s", r[i].msg);
      return -1;
    }
    if (stop && *stop) return i;   /* interrupted: not complete */
  }
  return n;
}

int tg_counters_available(const tg_target *t, const char **why) {
  return t->be->counters_available(t, why);
}

int tg_bench(const tg_target *t, const struct cm_bench_opts *o, struct cm_ceilings *c, rt_err *err) {
  return t->be->bench(t, o, c, err);
}

int tg_traffic_cold(const char *source) {
  for (int i = 0; tg_backends[i]; i++)
    for (const tg_traffic *s = tg_backends[i]->traffic; s && s->source; s++)
      if (!strcmp(s->source, source)) return s->cold;
  return 1;
}

int tg_limit_bindings(const tg_target *t, const char *user_set, rt_str *out, rt_err *err) {
  return t->be->limit_bindings ? t->be->limit_bindings(t, user_set, out, err) : 0;
}

/* Whether the T1 kernel k's space declares problem variable name. */
static int declares(const uk_spec *s, const char *name, size_t len) {
  for (int v = 0; v < s->nv; v++)
    if (strlen(s->vname[v]) == len && !strncmp(s->vname[v], name, len)) return 1;
  return 0;
}

char *tg_kernel_bindings(const tg_target *t, const kn_kernel *k, const char *user_set, rt_err *err) {
  const uk_spec *s = uk_spec_of(k);
  if (!s) return tg_bindings(t, user_set, err);
  rt_str lim = {0}, out = {0};
  rt_str_printf(&out, "%s", user_set ? user_set : "");
  if (tg_limit_bindings(t, user_set, &lim, err)) {
    free(lim.s), free(out.s);
    return NULL;
  }
  for (const char *b = lim.s ? lim.s : ""; *b;) {   /* "VAR=VAL,VAR=VAL": the limits' own syntax */
    size_t n = strcspn(b, ","), eq = strcspn(b, "=");
    if (eq < n && declares(s, b, eq)) rt_str_printf(&out, "%s%.*s", out.n ? "," : "", (int)n, b);
    b += n + (b[n] == ',');
  }
  free(lim.s);
  return out.s;
}

char *tg_bindings(const tg_target *t, const char *user_set, rt_err *err) {
  rt_str s = {0};
  rt_str_printf(&s, "%s", user_set ? user_set : "");
  if (tg_limit_bindings(t, user_set, &s, err)) {
    free(s.s);
    return NULL;
  }
  return s.s;
}
