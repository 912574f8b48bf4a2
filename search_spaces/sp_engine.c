/*
** sp_engine.c -- the space engine: exact counting, rank/unrank, canonical
** enumeration, uniform sampling, neighbours and validity, on spaces far too
** large to list.
**
** The method is a memoised depth-first search over the parameters in a
** fixed order (a "chain"). A condition is checked at the depth of its last
** parameter, so whole subtrees are pruned as early as possible. The number
** of valid completions below depth d depends only on the frontier: the
** fixed parameters that still share a condition with an unfixed one. That
** count is memoised per (depth, frontier values), which collapses
** independent parameters and independent groups (empty frontier) into one
** entry per depth, and makes rank/unrank/next cost O(sum of domain sizes)
** memo look-ups once the tables are warm. Counting runs one chain per
** independent group and multiplies; rank/unrank run the chain of all
** parameters in file order, which defines the canonical order.
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
  sp->gchain = rt_calloc((size_t)sp->ng, sizeof *sp->gchain);
  free(gid);
  free(parent);
}

int sp_ngroups(const sp_space *sp) { return sp->ng; }
int sp_group_of(const sp_space *sp, int p) { return sp->group_of[p]; }
const int *sp_group_params(const sp_space *sp, int g, int *n) {
  *n = sp->gsize[g];
  return sp->groups[g];
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
  for (int g = 0; sp->gchain && g < sp->ng; g++) chain_free(sp->gchain[g]);
  free(sp->gchain);
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
  for (int k = 0; k < ch->ncheck[d]; k++)
    if (!sx_eval_bool(sp->vm, sp->conds[ch->check[d][k]].prog, sp->slots))
      return 0;
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

static sp_chain *group_chain(sp_space *sp, int g) {
  if (!sp->gchain[g]) sp->gchain[g] = chain_new(sp, sp->groups[g], sp->gsize[g]);
  return sp->gchain[g];
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

rt_count sp_group_count(sp_space *sp, int g) {
  if (sp->const_false) return 0;
  return chain_count(sp, group_chain(sp, g), 0, sp->cfg);
}

rt_count sp_count(sp_space *sp) {
  rt_count total = 1;
  for (int g = 0; g < sp->ng && total; g++) total *= sp_group_count(sp, g);
  return total;
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

/* Product of the completions of every group but g, given k. */
static rt_count others(sp_space *sp, const int *k, int g, int *cfg) {
  rt_count prod = 1;
  for (int h = 0; h < sp->ng && prod; h++)
    if (h != g) prod *= chain_count(sp, group_chain(sp, h), k[h], cfg);
  return prod;
}

/* Try value v for parameter p (depth pos in its group's chain): the number
** of completions it leaves to its own group, 0 if its checks fail. */
static rt_count try_value(sp_space *sp, int p, int v, int *cfg) {
  sp_chain *ch = group_chain(sp, sp->group_of[p]);
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
  if (sp->const_false) return 0;
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
    if (!checks_pass(sp, group_chain(sp, sp->group_of[p]), sp->gpos[p])) {
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
  for (int i = 0; i < n; i++) sp_unrank(sp, ranks[i], cfgs + (size_t)i * sp->np);
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
