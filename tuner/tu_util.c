/*
** tu_util.c -- small services the strategies share: a seeded
** pseudo-random permutation of [0, n) for sampling a space of any size
** without replacement in O(1) memory, and drawing a valid configuration
** the run has not evaluated yet.
*/
#include <stdlib.h>
#include <string.h>

#include "tu.h"

/* SplitMix64's finaliser: a strong 64-bit mixing function. */
static uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

void tu_perm_init(tu_perm *p, rt_count n, const gsl_rng *rng) {
  int bits = 0;
  for (rt_count m = n > 0 ? n - 1 : 0; m; m >>= 1) bits++;
  p->n = n;
  p->half_bits = (bits + 1) / 2;
  if (p->half_bits == 0) p->half_bits = 1;
  p->half_mask = ((rt_count)1 << p->half_bits) - 1;
  for (int i = 0; i < 4; i++)
    p->key[i] = ((uint64_t)gsl_rng_get(rng) << 32) ^ (uint64_t)gsl_rng_get(rng);
}

/* The Feistel network: a bijection on [0, 2^(2*half_bits)). */
static rt_count feistel(const tu_perm *p, rt_count x) {
  rt_count l = x >> p->half_bits, r = x & p->half_mask;
  for (int i = 0; i < 4; i++) {
    rt_count f = (rt_count)(mix64((uint64_t)r ^ p->key[i]) ^ (uint64_t)i) & p->half_mask;
    rt_count t = r;
    r = l ^ f;
    l = t;
  }
  return (l << p->half_bits) | r;
}

rt_count tu_perm_at(const tu_perm *p, rt_count i) {
  /* Cycle walking: the domain is < 4n, so a few steps on average; it
  ** stays a bijection on [0, n) because the network is one on its domain. */
  rt_count x = feistel(p, i);
  while (x >= p->n) x = feistel(p, x);
  return x;
}

int tu_random_unknown(const tu_ctx *ctx, int *cfg, int tries) {
  for (int t = 0; t < tries; t++) {
    if (sp_sample(ctx->sp, ctx->rng, 1, 0, cfg, NULL)) return 0;
    if (!ctx->known(ctx->run, cfg, NULL)) return 1;
  }
  return 0;
}

/* ---- Configuration maps ---- */

static uint64_t cfg_hash(const int *cfg, int np) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (int p = 0; p < np; p++) h = (h ^ (uint64_t)(uint32_t)cfg[p]) * 0x100000001b3ull;
  return mix64(h);
}

/* The slot holding cfg, or the empty slot where it would go. */
static int64_t find_slot(const tu_cfgmap *m, const int *cfg) {
  int64_t mask = m->nslot - 1, i = (int64_t)(cfg_hash(cfg, m->np) & (uint64_t)mask);
  for (;; i = (i + 1) & mask) {
    int64_t s = m->slot[i];
    if (!s || !memcmp(m->keys + (size_t)(s - 1) * m->np, cfg, (size_t)m->np * sizeof *cfg))
      return i;
  }
}

void tu_cfgmap_init(tu_cfgmap *m, int np) {
  memset(m, 0, sizeof *m);
  m->np = np;
}

void tu_cfgmap_free(tu_cfgmap *m) {
  free(m->keys);
  free(m->slot);
  memset(m, 0, sizeof *m);
}

int64_t tu_cfgmap_get(const tu_cfgmap *m, const int *cfg) {
  if (!m->n) return -1;
  return m->slot[find_slot(m, cfg)] - 1;
}

int64_t tu_cfgmap_put(tu_cfgmap *m, const int *cfg, int *added) {
  int64_t i = tu_cfgmap_get(m, cfg);
  if (added) *added = i < 0;
  if (i >= 0) return i;
  if (m->n == m->cap) {   /* grow and rehash: the table stays under 1/4 full */
    m->cap = m->cap ? 2 * m->cap : 256;
    m->keys = rt_realloc(m->keys, (size_t)m->cap * m->np * sizeof *m->keys);
    free(m->slot);
    m->nslot = 4 * m->cap;
    m->slot = rt_calloc((size_t)m->nslot, sizeof *m->slot);
    for (int64_t j = 0; j < m->n; j++) m->slot[find_slot(m, m->keys + (size_t)j * m->np)] = j + 1;
  }
  memcpy(m->keys + (size_t)m->n * m->np, cfg, (size_t)m->np * sizeof *cfg);
  m->slot[find_slot(m, cfg)] = m->n + 1;
  return m->n++;
}

const int *tu_cfgmap_key(const tu_cfgmap *m, int64_t i) { return m->keys + (size_t)i * m->np; }
