/*
** sp_engine.c -- the space engine: exact counting, rank/unrank, canonical
** enumeration, uniform sampling, neighbours and validity, on spaces far too
** large to list.
**
** The method is a memoised depth-first search over the parameters of one
** independent group (parameters connected by conditions) in a fixed order:
** a "chain". A condition is checked at the depth of its last parameter in
** that order, so whole subtrees are pruned there. The number of valid
** completions below depth d depends only on the frontier: the fixed
** parameters that still share a condition with an unfixed one. That count
** is memoised per (depth, frontier values), which collapses independent
** parameters into one entry per depth. Single-valued parameters (BAT's
** MAX_THREADS...) are constants in the compiled conditions (sp_load.c), so
** they are groups of their own and never delay a check.
**
** Each group has two chains, because a count in one order cannot be read
** off a chain in another order:
**
**  - the pruning chain, in an order chosen from the conditions alone
**    (pruning_order: repeatedly bind the cheapest unbound parameter of the
**    condition whose unbound parameters have the smallest Cartesian size,
**    ties broken by parameter names), so that every condition is checked as
**    early as its cost allows whatever the order of the file. It serves
**    sp_count, sp_group_count and sp_sample (which unranks in this order,
**    groups by smallest parameter name), so counts, memory and samples are
**    the same for every permutation of the file's parameters. Cost of the
**    first count: sum over depths d of M_d * |values of params[d]| condition
**    checks, M_d the distinct frontier values reached at d (at most the
**    product of the frontier's domain sizes, at most the valid prefixes);
**    memory: sum of M_d memo entries. A draw then costs sum of |values|
**    memo look-ups per group.
**
**  - the canonical chain, in file order, which defines rank/unrank/next
**    (README "Canonical order"): rank needs the completions of every prefix
**    in file order, and a file-order prefix is a scattered subset of the
**    pruning order, whose memo is keyed by its own prefixes only (counting
**    with a scattered subset fixed is a new search per query, with no bound
**    on its cost). So sp_rank/sp_unrank/sp_next (and so enum) walk the
**    parameters in file order; the completions of a prefix
**    factor over the groups: the group being walked contributes its
**    canonical chain's count below the parameters already fixed, the others
**    their canonical chains' counts (or their whole count from the pruning
**    chain before any of their parameters is fixed). The first canonical
**    call pays for a memoised search in file order, whose cost depends on
**    the file's order as counting used to; later calls cost O(sum of
**    |values| * groups) memo look-ups. When the two orders of a group agree,
**    it has one chain.
**
** sp_valid evaluates every condition once, in file order, whatever the
** chains: O(conditions).
*/
#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <string.h>

#include "sp_int.h"

/* ---- Groups (union-find over the conditions' parameters) ---- */

static int uf_find(int *parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

/* Smallest parameter name of group g (names are unique). */
static const char *group_key(const sp_space *sp, int g) {
  const char *k = sp->params[sp->groups[g][0]].name;
  for (int i = 1; i < sp->gsize[g]; i++)
    if (strcmp(sp->params[sp->groups[g][i]].name, k) < 0) k = sp->params[sp->groups[g][i]].name;
  return k;
}

typedef struct keyed_group { const char *key; int g; } keyed_group;

static int by_key(const void *a, const void *b) {
  return strcmp(((const keyed_group *)a)->key, ((const keyed_group *)b)->key);
}

void sp__build_groups(sp_space *sp) {
  int *parent = rt_malloc((size_t)sp->np * sizeof *parent);
  for (int p = 0; p < sp->np; p++) parent[p] = p;
  for (int c = 0; c < sp->nc; c++)
    for (int k = 1; k < sp->conds[c].np; k++) {
      int a = uf_find(parent, sp->conds[c].p[0]);
      int b = uf_find(parent, sp->conds[c].p[k]);
      if (a != b) parent[a > b ? a : b] = a < b ? a : b;
    }
  /* Roots are the smallest member, so numbering groups by first parameter
  ** is numbering roots in ascending order. */
  sp->group_of = rt_malloc((size_t)sp->np * sizeof *sp->group_of);
  int *gid = rt_malloc((size_t)sp->np * sizeof *gid);
  sp->ng = 0;
  for (int p = 0; p < sp->np; p++)
    if (uf_find(parent, p) == p) gid[p] = sp->ng++;
  sp->groups = rt_calloc((size_t)sp->ng, sizeof *sp->groups);
  sp->gsize = rt_calloc((size_t)sp->ng, sizeof *sp->gsize);
  for (int p = 0; p < sp->np; p++) {
    int g = gid[uf_find(parent, p)];
    sp->group_of[p] = g;
    sp->groups[g] = rt_realloc(sp->groups[g], (size_t)(sp->gsize[g] + 1) * sizeof(int));
    sp->groups[g][sp->gsize[g]++] = p;
  }
  sp->gpos = rt_malloc((size_t)sp->np * sizeof *sp->gpos);
  for (int g = 0; g < sp->ng; g++)
    for (int k = 0; k < sp->gsize[g]; k++) sp->gpos[sp->groups[g][k]] = k;
  sp->kwork = rt_malloc((size_t)sp->ng * sizeof *sp->kwork);
  sp->fast = rt_calloc((size_t)sp->ng, sizeof *sp->fast);
  sp->canon = rt_calloc((size_t)sp->ng, sizeof *sp->canon);
  sp->gcount = rt_calloc((size_t)sp->ng, sizeof *sp->gcount);
  sp->gcount_ok = rt_calloc((size_t)sp->ng, 1);
  /* sampling order: by smallest name (unique, so the order is total) */
  keyed_group *kg = rt_malloc((size_t)(sp->ng ? sp->ng : 1) * sizeof *kg);
  for (int g = 0; g < sp->ng; g++) kg[g] = (keyed_group){group_key(sp, g), g};
  qsort(kg, (size_t)sp->ng, sizeof *kg, by_key);
  sp->sorder = rt_malloc((size_t)(sp->ng ? sp->ng : 1) * sizeof *sp->sorder);
  for (int i = 0; i < sp->ng; i++) sp->sorder[i] = kg[i].g;
  free(kg);
  free(gid);
  free(parent);
}

int sp_ngroups(const sp_space *sp) { return sp->ng; }
int sp_group_of(const sp_space *sp, int p) { return sp->group_of[p]; }
const int *sp_group_params(const sp_space *sp, int g, int *n) {
  *n = sp->gsize[g];
  return sp->groups[g];
}

/* ---- The pruning order ---- */

static int by_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The unbound parameters of condition c, as their names sorted, into
** names; returns their number. */
static int unbound_names(const sp_space *sp, int c, const unsigned char *bound,
                         const char **names) {
  int n = 0;
  for (int k = 0; k < sp->conds[c].np; k++)
    if (!bound[sp->conds[c].p[k]]) names[n++] = sp->params[sp->conds[c].p[k]].name;
  qsort(names, (size_t)n, sizeof *names, by_name);
  return n;
}

/* Parameter a binds before b: fewer values first, then by name. */
static int binds_before(const sp_space *sp, int a, int b) {
  const sp_param_t *x = &sp->params[a], *y = &sp->params[b];
  return x->nv != y->nv ? x->nv < y->nv : strcmp(x->name, y->name) < 0;
}

/* order := the n parameters ps[] of one group in pruning order: while a
** condition of the group is not yet decidable, take the one whose unbound
** parameters have the smallest Cartesian size (then the fewest of them,
** then the smallest sorted list of names), and bind its parameter with the
** fewest values (then the smallest name); then the rest the same way. Only
** names, domain sizes and the conditions' parameter sets decide, so the
** order is the same for every order of the file (all counts are exact
** 128-bit products, saturated, so no rounding depends on the file either). */
static void pruning_order(const sp_space *sp, const int *ps, int n, int *order) {
  unsigned char *bound = rt_calloc((size_t)sp->np, 1);
  const char **best = rt_malloc((size_t)(sp->np ? sp->np : 1) * sizeof *best);
  const char **cand = rt_malloc((size_t)(sp->np ? sp->np : 1) * sizeof *cand);
  int g = sp->group_of[ps[0]];
  for (int k = 0; k < n; k++) {
    int bc = -1, bn = 0;
    rt_count bsize = 0;
    for (int c = 0; c < sp->nc; c++) {
      const sp_cond_t *co = &sp->conds[c];
      if (co->np == 0 || sp->group_of[co->p[0]] != g) continue;
      rt_count size = 1;
      for (int i = 0; i < co->np; i++)
        if (!bound[co->p[i]] && rt_count_mul(size, (rt_count)sp->params[co->p[i]].nv, &size))
          size = RT_COUNT_MAX;
      int m = unbound_names(sp, c, bound, cand);
      if (m == 0) continue;   /* decidable already */
      int better = bc < 0 || size < bsize || (size == bsize && m < bn);
      if (!better && size == bsize && m == bn) {
        int i = 0;
        while (i < m && !strcmp(cand[i], best[i])) i++;
        better = i < m && strcmp(cand[i], best[i]) < 0;
      }
      if (better) {
        bc = c, bn = m, bsize = size;
        memcpy(best, cand, (size_t)m * sizeof *cand);
      }
    }
    int pick = -1;
    if (bc >= 0) {
      for (int i = 0; i < sp->conds[bc].np; i++) {
        int q = sp->conds[bc].p[i];
        if (!bound[q] && (pick < 0 || binds_before(sp, q, pick))) pick = q;
      }
    } else {
      for (int i = 0; i < n; i++)
        if (!bound[ps[i]] && (pick < 0 || binds_before(sp, ps[i], pick))) pick = ps[i];
    }
    order[k] = pick;
    bound[pick] = 1;
  }
  free(cand);
  free(best);
  free(bound);
}

/* ---- Chains ---- */

static sp_chain *chain_new(const sp_space *sp, const int *params, int n) {
  sp_chain *ch = rt_calloc(1, sizeof *ch);
  ch->n = n;
  ch->params = rt_malloc((size_t)(n ? n : 1) * sizeof(int));
  memcpy(ch->params, params, (size_t)n * sizeof(int));
  ch->nfront = rt_calloc((size_t)n + 1, sizeof(int));
  ch->front = rt_calloc((size_t)n + 1, sizeof(int *));
  ch->radix = rt_calloc((size_t)n + 1, sizeof(uint64_t *));
  ch->memo_ok = rt_calloc((size_t)n + 1, sizeof(int));
  ch->ncheck = rt_calloc((size_t)n + 1, sizeof(int));
  ch->check = rt_calloc((size_t)n + 1, sizeof(int *));
  ch->memo = rt_calloc((size_t)n + 1, sizeof(sp_memo));
  /* pos[p]: depth of parameter p in this chain, -1 if not in it */
  int *pos = rt_malloc((size_t)sp->np * sizeof(int));
  for (int p = 0; p < sp->np; p++) pos[p] = -1;
  for (int d = 0; d < n; d++) pos[params[d]] = d;
  /* last[c]: depth at which condition c becomes decidable */
  int *last = rt_malloc((size_t)(sp->nc ? sp->nc : 1) * sizeof(int));
  for (int c = 0; c < sp->nc; c++) {
    const sp_cond_t *co = &sp->conds[c];
    last[c] = -1;
    for (int k = 0; k < co->np; k++)
      if (pos[co->p[k]] > last[c]) last[c] = pos[co->p[k]];
    if (co->np == 0 || pos[co->p[0]] < 0) continue; /* not in this chain */
    int d = last[c];
    ch->check[d] = rt_realloc(ch->check[d], (size_t)(ch->ncheck[d] + 1) * sizeof(int));
    ch->check[d][ch->ncheck[d]++] = c;
  }
  for (int d = 0; d <= n; d++) {
    /* frontier at d: params[j], j < d, read by a condition decided at >= d */
    ch->front[d] = rt_malloc((size_t)(d ? d : 1) * sizeof(int));
    for (int j = 0; j < d; j++) {
      int p = params[j], in = 0;
      for (int c = 0; c < sp->nc && !in; c++) {
        if (last[c] < d) continue;
        for (int k = 0; k < sp->conds[c].np; k++) in |= sp->conds[c].p[k] == p;
      }
      if (in) ch->front[d][ch->nfront[d]++] = p;
    }
    ch->radix[d] = rt_malloc((size_t)(ch->nfront[d] ? ch->nfront[d] : 1) * sizeof(uint64_t));
    uint64_t w = 1;
    ch->memo_ok[d] = 1;
    for (int k = 0; k < ch->nfront[d]; k++) {
      ch->radix[d][k] = w;
      if (__builtin_mul_overflow(w, (uint64_t)sp->params[ch->front[d][k]].nv, &w) ||
          w >= ((uint64_t)1 << 62))
        ch->memo_ok[d] = 0;
    }
  }
  free(last);
  free(pos);
  return ch;
}

static void chain_free(sp_chain *ch) {
  if (!ch) return;
  for (int d = 0; d <= ch->n; d++) {
    free(ch->front[d]);
    free(ch->radix[d]);
    free(ch->check[d]);
    free(ch->memo[d].keys);
    free(ch->memo[d].vals);
  }
  free(ch->params);
  free(ch->nfront);
  free(ch->front);
  free(ch->radix);
  free(ch->memo_ok);
  free(ch->ncheck);
  free(ch->check);
  free(ch->memo);
  free(ch);
}

void sp__free_chains(sp_space *sp) {
  for (int g = 0; g < sp->ng; g++) {
    if (sp->canon && sp->canon[g] != sp->fast[g]) chain_free(sp->canon[g]);
    if (sp->fast) chain_free(sp->fast[g]);
  }
  free(sp->fast);
  free(sp->canon);
  free(sp->gcount);
  free(sp->gcount_ok);
  free(sp->sorder);
}

/* ---- Memo tables (open addressing, linear probing) ---- */

static size_t memo_slot(const sp_memo *m, uint64_t key) {
  uint64_t h = key * 0x9E3779B97F4A7C15ull;
  size_t i = (size_t)(h >> 17) & (m->cap - 1);
  while (m->keys[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
  return i;
}

static int memo_get(const sp_memo *m, uint64_t code, rt_count *out) {
  if (!m->cap) return 0;
  size_t i = memo_slot(m, code + 1);
  if (!m->keys[i]) return 0;
  *out = m->vals[i];
  return 1;
}

static void memo_put(sp_space *sp, sp_memo *m, uint64_t code, rt_count v) {
  if (sp->memo_entries >= SP_MEMO_MAX) return; /* still exact, just slower */
  if (2 * (m->n + 1) > m->cap) {
    sp_memo old = *m;
    m->cap = old.cap ? 2 * old.cap : 64;
    m->keys = rt_calloc(m->cap, sizeof *m->keys);
    m->vals = rt_malloc(m->cap * sizeof *m->vals);
    for (size_t i = 0; i < old.cap; i++)
      if (old.keys[i]) {
        size_t j = memo_slot(m, old.keys[i]);
        m->keys[j] = old.keys[i];
        m->vals[j] = old.vals[i];
      }
    free(old.keys);
    free(old.vals);
  }
  size_t i = memo_slot(m, code + 1);
  if (!m->keys[i]) {
    m->keys[i] = code + 1;
    m->n++;
    sp->memo_entries++;
  }
  m->vals[i] = v;
}

/* ---- The search ---- */

static inline void set_value(sp_space *sp, int *cfg, int p, int v) {
  cfg[p] = v;
  sp->slots[p] = sp->params[p].v[v];
}

static inline int checks_pass(sp_space *sp, const sp_chain *ch, int d) {
  for (int k = 0; k < ch->ncheck[d]; k++) {
    sp->evals++;
    if (!sx_eval_bool(sp->vm, sp->conds[ch->check[d][k]].prog, sp->slots)) return 0;
  }
  return 1;
}

/* Number of valid completions of cfg below depth d of ch. Requires
** cfg/slots to hold params[0..d-1]; clobbers the deeper ones. */
static rt_count chain_count(sp_space *sp, sp_chain *ch, int d, int *cfg) {
  if (d == ch->n) return 1;
  uint64_t code = 0;
  rt_count total = 0;
  if (ch->memo_ok[d]) {
    for (int k = 0; k < ch->nfront[d]; k++)
      code += (uint64_t)cfg[ch->front[d][k]] * ch->radix[d][k];
    if (memo_get(&ch->memo[d], code, &total)) return total;
  }
  int p = ch->params[d], nv = sp->params[p].nv;
  for (int v = 0; v < nv; v++) {
    set_value(sp, cfg, p, v);
    if (!checks_pass(sp, ch, d)) continue;
    /* sums never overflow: they are bounded by the Cartesian product,
    ** which the loader checked fits in rt_count */
    total += d + 1 == ch->n ? 1 : chain_count(sp, ch, d + 1, cfg);
  }
  if (ch->memo_ok[d]) memo_put(sp, &ch->memo[d], code, total);
  return total;
}

/* Group g's chain in pruning order. */
static sp_chain *fast_chain(sp_space *sp, int g) {
  if (!sp->fast[g]) {
    int *order = rt_malloc((size_t)sp->gsize[g] * sizeof *order);
    pruning_order(sp, sp->groups[g], sp->gsize[g], order);
    sp->fast[g] = chain_new(sp, order, sp->gsize[g]);
    free(order);
  }
  return sp->fast[g];
}

/* Group g's chain in file order (the pruning chain when they agree). */
static sp_chain *canon_chain(sp_space *sp, int g) {
  if (!sp->canon[g]) {
    sp_chain *f = fast_chain(sp, g);
    sp->canon[g] = memcmp(f->params, sp->groups[g], (size_t)sp->gsize[g] * sizeof(int))
                       ? chain_new(sp, sp->groups[g], sp->gsize[g])
                       : f;
  }
  return sp->canon[g];
}

rt_count sp_cartesian(const sp_space *sp) {
  rt_count c = 1;
  for (int p = 0; p < sp->np; p++) c *= (rt_count)sp->params[p].nv;
  return c;
}

rt_count sp_group_cartesian(const sp_space *sp, int g) {
  rt_count c = 1;
  for (int k = 0; k < sp->gsize[g]; k++) c *= (rt_count)sp->params[sp->groups[g][k]].nv;
  return c;
}

/* Uses sp->cfg and the group's slots as scratch on the first call. */
rt_count sp_group_count(sp_space *sp, int g) {
  if (sp->const_false) return 0;
  if (!sp->gcount_ok[g]) {
    sp->gcount[g] = chain_count(sp, fast_chain(sp, g), 0, sp->cfg);
    sp->gcount_ok[g] = 1;
  }
  return sp->gcount[g];
}

/* Groups in sampling order, so that which are counted before an empty one
** stops the product does not depend on the file's order either. */
rt_count sp_count(sp_space *sp) {
  rt_count total = 1;
  for (int i = 0; i < sp->ng && total; i++) total *= sp_group_count(sp, sp->sorder[i]);
  return total;
}

void sp_get_stats(const sp_space *sp, sp_stats *st) {
  st->evals = sp->evals;
  st->memo_entries = sp->memo_entries;
}

int sp_valid(sp_space *sp, const int *cfg, int *failed) {
  if (failed) *failed = -1;
  for (int p = 0; p < sp->np; p++) {
    if (cfg[p] < 0 || cfg[p] >= sp->params[p].nv) return 0;
    sp->slots[p] = sp->params[p].v[cfg[p]];
  }
  for (int c = 0; c < sp->nc; c++)
    if (!sx_eval_bool(sp->vm, sp->conds[c].prog, sp->slots)) {
      if (failed) *failed = c;
      return 0;
    }
  return 1;
}

/* ---- The canonical order ----
** Walking the parameters in file order, the completions of a prefix
** (parameters 0..d-1 fixed) factor over the groups: each group contributes
** the completions of its own chain below the number of its parameters
** already fixed (k[g]). So a walk needs only the groups' small memo
** tables, however the groups interleave in file order. */

/* k[g] := number of parameters of group g before depth d. */
static void fixed_per_group(const sp_space *sp, int d, int *k) {
  memset(k, 0, (size_t)sp->ng * sizeof *k);
  for (int p = 0; p < d; p++) k[sp->group_of[p]]++;
}

/* Product of the completions of every group but g, given k (a group none
** of whose parameters is fixed yet contributes its count; sp_count must
** have run, so that this reads the cache and clobbers nothing). */
static rt_count others(sp_space *sp, const int *k, int g, int *cfg) {
  rt_count prod = 1;
  for (int h = 0; h < sp->ng && prod; h++)
    if (h != g)
      prod *= k[h] ? chain_count(sp, canon_chain(sp, h), k[h], cfg) : sp_group_count(sp, h);
  return prod;
}

/* Try value v for parameter p (depth pos in its group's chain): the number
** of completions it leaves to its own group, 0 if its checks fail. */
static rt_count try_value(sp_space *sp, int p, int v, int *cfg) {
  sp_chain *ch = canon_chain(sp, sp->group_of[p]);
  int pos = sp->gpos[p];
  set_value(sp, cfg, p, v);
  if (!checks_pass(sp, ch, pos)) return 0;
  return chain_count(sp, ch, pos + 1, cfg);
}

int sp_unrank(sp_space *sp, rt_count r, int *cfg) {
  if (r >= sp_count(sp)) return -1;
  int *k = sp->kwork;
  memset(k, 0, (size_t)sp->ng * sizeof *k);
  for (int p = 0; p < sp->np; p++) {
    int g = sp->group_of[p], v;
    rt_count rest = others(sp, k, g, cfg);
    for (v = 0; v < sp->params[p].nv; v++) {
      rt_count c = rest * try_value(sp, p, v, cfg);
      if (r < c) break;
      r -= c;
    }
    set_value(sp, cfg, p, v); /* v < nv because r < the count at depth p */
    k[g]++;
  }
  return 0;
}

int sp_rank(sp_space *sp, const int *cfg, rt_count *r) {
  if (sp->const_false || !sp_valid(sp, cfg, NULL)) return -1;
  sp_count(sp);   /* every group's count, before work[] is in use */
  int *work = sp->cfg, *k = sp->kwork;
  memcpy(work, cfg, (size_t)sp->np * sizeof *work);
  memset(k, 0, (size_t)sp->ng * sizeof *k);
  rt_count acc = 0;
  for (int p = 0; p < sp->np; p++) {
    int g = sp->group_of[p];
    rt_count rest = others(sp, k, g, work);
    for (int v = 0; v < cfg[p]; v++) acc += rest * try_value(sp, p, v, work);
    set_value(sp, work, p, cfg[p]);
    k[g]++;
  }
  *r = acc;
  return 0;
}

/* Fill parameters p.. with the smallest values that keep a completion
** (the prefix before p has one). */
static void fill_first(sp_space *sp, int p, int *cfg) {
  for (; p < sp->np; p++)
    for (int v = 0; v < sp->params[p].nv; v++)
      if (try_value(sp, p, v, cfg) > 0) break;
}

int sp_next(sp_space *sp, int *cfg) {
  if (sp->const_false || sp_count(sp) == 0) return 0;
  for (int p = 0; p < sp->np; p++) {
    if (cfg[p] < 0 || cfg[p] >= sp->params[p].nv) return 0;
    sp->slots[p] = sp->params[p].v[cfg[p]];
  }
  int *orig = sp->cfg, *k = sp->kwork; /* orig: to leave cfg unchanged at the end */
  memcpy(orig, cfg, (size_t)sp->np * sizeof *orig);
  /* Start at the first parameter whose checks fail (the prefix before it
  ** is valid), or at the last one for a valid cfg. */
  int start = sp->np - 1;
  for (int p = 0; p < sp->np; p++)
    if (!checks_pass(sp, canon_chain(sp, sp->group_of[p]), sp->gpos[p])) {
      start = p;
      break;
    }
  for (int p = start; p >= 0; p--) {
    int g = sp->group_of[p];
    memcpy(cfg, orig, (size_t)sp->np * sizeof *cfg);
    for (int q = 0; q < p; q++) sp->slots[q] = sp->params[q].v[cfg[q]];
    fixed_per_group(sp, p, k);
    if (others(sp, k, g, cfg) == 0) continue;
    for (int v = orig[p] + 1; v < sp->params[p].nv; v++)
      if (try_value(sp, p, v, cfg) > 0) {
        set_value(sp, cfg, p, v);
        fill_first(sp, p + 1, cfg);
        return 1;
      }
  }
  memcpy(cfg, orig, (size_t)sp->np * sizeof *cfg);
  return 0;
}

/* ---- Sampling ---- */

rt_count sp_rand_below(const gsl_rng *rng, rt_count n) {
  /* The generator must yield 32 uniform bits per call (mt19937 does). */
  if (n <= 0xffffffffu)
    return (rt_count)gsl_rng_uniform_int(rng, (unsigned long)n);
  int bits = 0;
  for (rt_count m = n - 1; m; m >>= 1) bits++;
  for (;;) {
    rt_count x = 0;
    for (int b = 0; b < bits; b += 32) x = (x << 32) | (rt_count)gsl_rng_get(rng);
    x &= bits == 128 ? RT_COUNT_MAX : (((rt_count)1 << bits) - 1);
    if (x < n) return x;
  }
}

/* cfg := the configuration at position r of ch's own order (r < the
** chain's count): at each depth the first value whose completions reach r. */
static void chain_unrank(sp_space *sp, sp_chain *ch, rt_count r, int *cfg) {
  for (int d = 0; d < ch->n; d++) {
    int p = ch->params[d], nv = sp->params[p].nv;
    for (int v = 0; v < nv; v++) {
      set_value(sp, cfg, p, v);
      if (!checks_pass(sp, ch, d)) continue;
      rt_count c = d + 1 == ch->n ? 1 : chain_count(sp, ch, d + 1, cfg);
      if (r < c) break;
      r -= c;
    }
  }
}

/* cfg := the configuration at position r < sp_count of the sampling order:
** groups in sp->sorder (the last one varying fastest), each in its pruning
** order. Neither depends on the file's order of parameters. */
static void sample_at(sp_space *sp, rt_count r, int *cfg) {
  for (int i = sp->ng - 1; i >= 0; i--) {
    int g = sp->sorder[i];
    rt_count c = sp_group_count(sp, g);
    chain_unrank(sp, fast_chain(sp, g), r % c, cfg);
    r /= c;
  }
}

/* A set of ranks (open addressing on 128-bit keys). */
typedef struct rank_set { rt_count *keys; unsigned char *used; size_t cap; } rank_set;

static int rank_set_add(rank_set *s, rt_count k) {
  uint64_t h = ((uint64_t)k ^ (uint64_t)(k >> 64)) * 0x9E3779B97F4A7C15ull;
  size_t i = (size_t)(h >> 20) & (s->cap - 1);
  while (s->used[i]) {
    if (s->keys[i] == k) return 0;
    i = (i + 1) & (s->cap - 1);
  }
  s->used[i] = 1;
  s->keys[i] = k;
  return 1;
}

int sp_sample(sp_space *sp, const gsl_rng *rng, int n, int distinct, int *cfgs,
              rt_err *err) {
  rt_count total = sp_count(sp);
  if (n < 0) {
    rt_err_set(err, "cannot draw a negative number of samples");
    return -1;
  }
  if (n == 0) return 0;
  if (total == 0) {
    rt_err_set(err, "the space is empty: no configuration satisfies the conditions");
    return -1;
  }
  if (distinct && (rt_count)n > total) {
    char buf[48];
    rt_err_set(err, "cannot draw %d distinct configurations from a space of %s",
               n, rt_count_str(total, buf));
    return -1;
  }
  rt_count *ranks = rt_malloc((size_t)n * sizeof *ranks);
  if (!distinct) {
    for (int i = 0; i < n; i++) ranks[i] = sp_rand_below(rng, total);
  } else {
    /* Floyd's algorithm for a uniform n-subset, then a Fisher-Yates
    ** shuffle so that every prefix of the output is uniform too. */
    rank_set set = {0};
    set.cap = 16;
    while (set.cap < 2 * (size_t)n) set.cap *= 2;
    set.keys = rt_malloc(set.cap * sizeof *set.keys);
    set.used = rt_calloc(set.cap, 1);
    int k = 0;
    for (rt_count j = total - (rt_count)n; j < total; j++) {
      rt_count t = sp_rand_below(rng, j + 1);
      ranks[k++] = rank_set_add(&set, t) ? t : (rank_set_add(&set, j), j);
    }
    for (int i = n - 1; i > 0; i--) {
      int j = (int)gsl_rng_uniform_int(rng, (unsigned long)i + 1);
      rt_count t = ranks[i];
      ranks[i] = ranks[j];
      ranks[j] = t;
    }
    free(set.keys);
    free(set.used);
  }
  for (int i = 0; i < n; i++) sample_at(sp, ranks[i], cfgs + (size_t)i * sp->np);
  free(ranks);
  return 0;
}

/* ---- Neighbours ---- */

int sp_neighbours(sp_space *sp, const int *cfg, sp_nb_kind kind, int **out) {
  int n = 0, cap = 0, np = sp->np;
  int *res = NULL, *cand = rt_malloc((size_t)np * sizeof *cand);
  for (int p = 0; p < np; p++) {
    int lo = 0, hi = sp->params[p].nv - 1;
    if (kind == SP_NB_ADJACENT) {
      lo = cfg[p] - 1 < 0 ? 0 : cfg[p] - 1;
      hi = cfg[p] + 1 > hi ? hi : cfg[p] + 1;
    }
    for (int v = lo; v <= hi; v++) {
      if (v == cfg[p]) continue;
      memcpy(cand, cfg, (size_t)np * sizeof *cand);
      cand[p] = v;
      if (!sp_valid(sp, cand, NULL)) continue;
      if (n == cap) {
        cap = cap ? 2 * cap : 16;
        res = rt_realloc(res, (size_t)cap * (size_t)np * sizeof *res);
      }
      memcpy(res + (size_t)n * np, cand, (size_t)np * sizeof *cand);
      n++;
    }
  }
  free(cand);
  *out = res;
  return n;
}
