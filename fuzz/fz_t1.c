/*
** fz_t1.c -- fuzz target t1: the T1 loader (sp_load_string) and the space
** engine on whatever loads. Input: a space file, optionally preceded by
** one line "#set M=64,N=32\n" of problem-variable bindings.
**
** What loads is checked against the contract of sp.h: every parameter has
** values, names resolve, groups partition the parameters, the Cartesian
** size is the product. Then an oracle independent of the engine: every
** condition is compiled again from its text and evaluated over its own
** parameters' values (a truth table; raising is false), and
**  - Cartesian <= BRUTE: every configuration is judged by the tables and
**    sp_valid (with the first failing condition) must agree; sp_count is
**    the number of valid ones; unrank, rank and next follow the canonical
**    (lexicographic) order of the valid ones;
**  - larger (<= ENGINE): NPROBE ranks are unranked, judged, ranked back
**    and stepped with next;
**  - sampling yields valid (and, when asked, distinct) configurations;
**    neighbours are valid and differ as sp_neighbours says;
**  - every configuration seen prints as JSON that parses back to itself.
** Caps (fz.h invariant 2): the engine runs only when each condition's own
** domain is <= DOMAIN combinations, all tables together <= EVALS
** evaluations of <= BUDGET steps each (sx__run), and Cartesian <= ENGINE.
*/
#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <string.h>

#include "../search_spaces/sp.h"
#include "../search_spaces/sx_int.h"
#include "fz.h"

#define BRUTE 4096
#define ENGINE (1 << 20)
#define DOMAIN 4096
#define EVALS 65536
#define BUDGET 100000
#define NPROBE 24
#define NSAMPLE 8

/* A condition's truth table over its own parameters (mixed radix, first
** parameter most significant). */
typedef struct table {
  int np;
  const int *p;
  unsigned char *truth;
} table;

typedef struct ctx {
  sp_space *sp;
  int np, nc;
  table *t;
  uint64_t rng;   /* xorshift state from the input's hash */
} ctx;

static uint64_t next_rand(ctx *c) {
  c->rng ^= c->rng << 13;
  c->rng ^= c->rng >> 7;
  c->rng ^= c->rng << 17;
  return c->rng;
}

/* Names as the loader gives them to expressions: problem variables as
** constants, parameters as slots. */
static sx_name *names_of(const sp_space *sp, int *n) {
  int nv = sp_nvars(sp), np = sp_nparams(sp), k = 0;
  sx_name *names = calloc((size_t)(nv + np) + 1, sizeof *names);
  for (int v = 0; v < nv; v++)
    names[k++] = (sx_name){sp_var_name(sp, v), -1, *sp_var_value(sp, v)};
  for (int p = 0; p < np; p++) names[k++] = (sx_name){sp_param_name(sp, p), p, sx_int(0)};
  *n = k;
  return names;
}

/* Build every condition's truth table. 0, or -1 when a cap is passed
** (the engine is then not run). */
static int build_tables(ctx *c) {
  const sp_space *sp = c->sp;
  int nn, rc = 0;
  long evals = 0;
  sx_name *names = names_of(sp, &nn);
  sx_vm *vm = sx_vm_new();
  sx_value *slots = calloc((size_t)c->np, sizeof *slots);
  for (int p = 0; p < c->np; p++) slots[p] = *sp_value(sp, p, 0);
  for (int k = 0; k < c->nc && !rc; k++) {
    table *t = &c->t[k];
    t->p = sp_cond_params(sp, k, &t->np);
    long size = 1;
    for (int j = 0; j < t->np; j++) {
      FZ_CHECK(t->p[j] >= 0 && t->p[j] < c->np && (j == 0 || t->p[j] > t->p[j - 1]),
               "condition %d: parameters not ascending in range", k);
      size *= sp_nvalues(sp, t->p[j]);
      if (size > DOMAIN) break;
    }
    if (size > DOMAIN || (evals += size) > EVALS) {
      rc = -1;
      break;
    }
    rt_err e = {0};
    sx_prog *prog = sx_compile(sp_cond_text(sp, k), names, nn, &e);
    FZ_CHECK(prog, "condition %d `%s` loaded but does not compile again: %s", k,
             sp_cond_text(sp, k), e.msg);
    int ns;
    const int *s = sx_prog_slots(prog, &ns);
    FZ_CHECK(ns == t->np && (!ns || !memcmp(s, t->p, (size_t)ns * sizeof *s)),
             "condition %d: sp_cond_params differ from what it reads", k);
    t->truth = calloc((size_t)size, 1);
    int *idx = calloc((size_t)t->np + 1, sizeof *idx);
    for (long i = 0; i < size && !rc; i++) {
      for (int j = 0; j < t->np; j++) slots[t->p[j]] = *sp_value(sp, t->p[j], idx[j]);
      sx_value out;
      e.msg[0] = 0;
      if (sx__run(vm, prog, slots, &out, &e, BUDGET) == 0)
        t->truth[i] = (unsigned char)sx_truth(&out);
      else if (strstr(e.msg, "budget exhausted"))
        rc = -1;
      for (int j = t->np - 1; j >= 0; j--) {   /* odometer, last fastest */
        if (++idx[j] < sp_nvalues(sp, t->p[j])) break;
        idx[j] = 0;
      }
    }
    free(idx);
    sx_prog_free(prog);
  }
  free(slots);
  sx_vm_free(vm);
  free(names);
  return rc;
}

/* The oracle: 1 if cfg is valid; *first gets the first false condition. */
static int judge(const ctx *c, const int *cfg, int *first) {
  *first = -1;
  for (int k = 0; k < c->nc; k++) {
    const table *t = &c->t[k];
    size_t i = 0;
    for (int j = 0; j < t->np; j++)
      i = i * (size_t)sp_nvalues(c->sp, t->p[j]) + (size_t)cfg[t->p[j]];
    if (!t->truth[i]) {
      *first = k;
      return 0;
    }
  }
  return 1;
}

static void check_json(const ctx *c, const int *cfg) {
  char *js = sp_config_json(c->sp, cfg);
  FZ_CHECK(js, "sp_config_json returned NULL");
  int *back = calloc((size_t)c->np, sizeof *back);
  rt_err e = {0};
  FZ_CHECK(sp_config_parse(c->sp, js, back, &e) == 0, "configuration %s does not parse back: %s",
           js, e.msg);
  for (int p = 0; p < c->np; p++)
    FZ_CHECK(back[p] == cfg[p], "configuration %s parses back with '%s' = value %d, not %d", js,
             sp_param_name(c->sp, p), back[p], cfg[p]);
  free(back);
  free(js);
}

static void check_neighbours(const ctx *c, const int *cfg) {
  for (int kind = SP_NB_HAMMING; kind <= SP_NB_ADJACENT; kind++) {
    int *nb = NULL, n = sp_neighbours(c->sp, cfg, (sp_nb_kind)kind, &nb), first;
    for (int i = 0; i < n; i++) {
      const int *x = nb + (size_t)i * c->np;
      int diff = 0, at = -1;
      for (int p = 0; p < c->np; p++)
        if (x[p] != cfg[p]) diff++, at = p;
      FZ_CHECK(diff == 1, "neighbour %d differs in %d parameters", i, diff);
      FZ_CHECK(kind == SP_NB_HAMMING || abs(x[at] - cfg[at]) == 1, "adjacent neighbour %d jumps", i);
      FZ_CHECK(judge(c, x, &first), "neighbour %d is invalid", i);
    }
    free(nb);
  }
}

/* cfg (valid, rank r) against unrank, rank and next. */
static void check_rank(const ctx *c, rt_count r, const int *cfg, rt_count count) {
  int *u = calloc((size_t)c->np, sizeof *u);
  FZ_CHECK(sp_unrank(c->sp, r, u) == 0, "unrank of a rank below the count failed");
  FZ_CHECK(!memcmp(u, cfg, (size_t)c->np * sizeof *u), "unrank disagrees with the canonical order");
  rt_count back;
  FZ_CHECK(sp_rank(c->sp, cfg, &back) == 0 && back == r, "rank(unrank(r)) != r");
  int more = sp_next(c->sp, u);
  FZ_CHECK(more == (r + 1 < count), "next says %s at rank %d of %d", more ? "more" : "end",
           (int)r, (int)count);
  if (more) {
    int *v = calloc((size_t)c->np, sizeof *v);
    FZ_CHECK(sp_unrank(c->sp, r + 1, v) == 0 && !memcmp(u, v, (size_t)c->np * sizeof *v),
             "next(unrank(r)) != unrank(r + 1)");
    free(v);
  } else {
    FZ_CHECK(!memcmp(u, cfg, (size_t)c->np * sizeof *u), "next at the end changed cfg");
  }
  free(u);
}

/* Every configuration in lexicographic order against the oracle. */
static void brute(ctx *c, rt_count count) {
  int *cfg = calloc((size_t)c->np, sizeof *cfg), first, failed;
  rt_count r = 0;
  for (;;) {
    int ok = judge(c, cfg, &first);
    FZ_CHECK(sp_valid(c->sp, cfg, &failed) == ok && failed == first,
             "sp_valid says %d (condition %d), the oracle %d (condition %d)", !ok, failed, ok, first);
    if (ok) {
      FZ_CHECK(r < count, "more valid configurations than sp_count");
      if (r < 64 || r + 8 > count || next_rand(c) % 16 == 0) {
        check_rank(c, r, cfg, count);
        check_json(c, cfg);
      }
      if (r < 4) check_neighbours(c, cfg);
      r++;
    } else {
      rt_count dummy;
      FZ_CHECK(sp_rank(c->sp, cfg, &dummy) == -1, "rank of an invalid configuration succeeded");
    }
    int p = c->np - 1;
    for (; p >= 0; p--) {
      if (++cfg[p] < sp_nvalues(c->sp, p)) break;
      cfg[p] = 0;
    }
    if (p < 0) break;
  }
  FZ_CHECK(r == count, "sp_count %d, the oracle counts %d", (int)count, (int)r);
  int *u = calloc((size_t)c->np, sizeof *u);
  FZ_CHECK(sp_unrank(c->sp, count, u) == -1, "unrank of the count succeeded");
  free(u);
  free(cfg);
}

/* Ranks spread over a space too large to walk. */
static void probe(ctx *c, rt_count count) {
  int *cfg = calloc((size_t)c->np, sizeof *cfg), first;
  for (int i = 0; i < NPROBE && count; i++) {
    rt_count r = i == 0 ? 0 : i == 1 ? count - 1 : (rt_count)(next_rand(c) % (uint64_t)count);
    FZ_CHECK(sp_unrank(c->sp, r, cfg) == 0, "unrank of a rank below the count failed");
    FZ_CHECK(judge(c, cfg, &first), "unrank gave an invalid configuration");
    check_rank(c, r, cfg, count);
    check_json(c, cfg);
    if (i < 2) check_neighbours(c, cfg);
  }
  free(cfg);
}

static void sample(ctx *c, rt_count count) {
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, (unsigned long)c->rng);
  int n = count < NSAMPLE ? (int)count : NSAMPLE, first;
  int *cfgs = calloc((size_t)NSAMPLE * (size_t)c->np + 1, sizeof *cfgs);
  rt_err e = {0};
  for (int distinct = 0; distinct <= 1; distinct++) {
    int rc = sp_sample(c->sp, rng, n ? n : 1, distinct, cfgs, &e);
    FZ_CHECK((rc == 0) == (n > 0), "sp_sample %s on a space of %d", rc ? "failed" : "worked",
             (int)count);
    FZ_CHECK(rc == 0 || e.msg[0], "sp_sample failed without a message");
    for (int i = 0; i < n && rc == 0; i++) {
      FZ_CHECK(judge(c, cfgs + (size_t)i * c->np, &first), "sample %d is invalid", i);
      for (int j = 0; distinct && j < i; j++)
        FZ_CHECK(memcmp(cfgs + (size_t)i * c->np, cfgs + (size_t)j * c->np,
                        (size_t)c->np * sizeof *cfgs),
                 "distinct samples %d and %d are equal", j, i);
    }
  }
  free(cfgs);
  gsl_rng_free(rng);
}

/* What sp.h promises of any loaded space. */
static void check_shape(const sp_space *sp) {
  int np = sp_nparams(sp), ng = sp_ngroups(sp);
  FZ_CHECK(np >= 1, "a space without parameters loaded");
  FZ_CHECK(sp_name(sp) != NULL, "no name");
  rt_count cart = 1;
  for (int p = 0; p < np; p++) {
    int nv = sp_nvalues(sp, p);
    FZ_CHECK(nv >= 1, "parameter %d has no values", p);
    FZ_CHECK(sp_param_index(sp, sp_param_name(sp, p)) == p, "parameter %d: name lookup", p);
    FZ_CHECK(sp_default(sp, p) >= -1 && sp_default(sp, p) < nv, "parameter %d: default index", p);
    FZ_CHECK(sp_param_type(sp, p) && sp_param_values_text(sp, p), "parameter %d: texts", p);
    for (int i = 0; i < nv; i++) {
      sx_type t = sp_value(sp, p, i)->t;
      FZ_CHECK(t == SX_INT || t == SX_FLOAT || t == SX_STR || t == SX_BOOL,
               "parameter %d value %d is a %s", p, i, sx_type_name(t));
    }
    FZ_CHECK(rt_count_mul(cart, (rt_count)nv, &cart) == 0, "Cartesian product overflows");
    int g = sp_group_of(sp, p), n;
    FZ_CHECK(g >= 0 && g < ng, "parameter %d: group %d of %d", p, g, ng);
    const int *gp = sp_group_params(sp, g, &n);
    int found = 0;
    for (int k = 0; k < n; k++) found += gp[k] == p;
    FZ_CHECK(found == 1, "parameter %d is %d times in its group", p, found);
  }
  int total = 0;
  for (int g = 0; g < ng; g++) {
    int n;
    sp_group_params(sp, g, &n);
    total += n;
  }
  FZ_CHECK(total == np, "groups hold %d parameters of %d", total, np);
  FZ_CHECK(sp_cartesian(sp) == cart, "sp_cartesian is not the product of the value counts");
  for (int v = 0; v < sp_nvars(sp); v++) {
    sx_type t = sp_var_value(sp, v)->t;
    FZ_CHECK(t == SX_INT || t == SX_FLOAT || t == SX_STR || t == SX_BOOL,
             "problem variable %d is a %s", v, sx_type_name(t));
  }
  for (int i = 0; i < sp_nwarnings(sp); i++) FZ_CHECK(sp_warning(sp, i), "warning %d is NULL", i);
  char *vj = sp_vars_json(sp);
  FZ_CHECK(vj, "sp_vars_json returned NULL");
  free(vj);
}

FZ_TARGET(t1) {
  char *text = fz_text(data, size), *body = text;
  sx_arena *arena = sx_arena_new();
  sp_binding *set = NULL;
  int nset = 0;
  rt_err err = {0};
  if (!strncmp(text, "#set ", 5)) {
    char *nl = strchr(text, '\n');
    body = nl ? nl + 1 : text + strlen(text);
    if (nl) *nl = 0;
    nset = sp_parse_bindings(text + 5, arena, &set, &err);
  }
  sp_space *sp = nset < 0 ? NULL : sp_load_string(body, "fuzz.json", set, nset, &err);
  if (!sp) {
    FZ_CHECK(err.msg[0], "failed without a message");
  } else {
    check_shape(sp);
    ctx c = {sp, sp_nparams(sp), sp_nconds(sp), NULL, fz_hash(data, size) | 1};
    c.t = calloc((size_t)c.nc + 1, sizeof *c.t);
    rt_count cart = sp_cartesian(sp);
    if (cart <= ENGINE && build_tables(&c) == 0) {
      rt_count count = sp_count(sp);
      FZ_CHECK(count <= cart, "more valid configurations than the Cartesian product");
      if (cart <= BRUTE) brute(&c, count);
      else probe(&c, count);
      sample(&c, count);
      int *def = calloc((size_t)c.np, sizeof *def);
      if (sp_default_config(sp, def)) check_json(&c, def);
      free(def);
    }
    for (int k = 0; k < c.nc; k++) free(c.t[k].truth);
    free(c.t);
    sp_free(sp);
  }
  free(set);
  sx_arena_free(arena);
  free(text);
  return 0;
}
