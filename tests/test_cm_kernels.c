/*
** test_cm_kernels.c -- the roofline models of the conv2d, stencil,
** transpose and reduction host kernels (cost_model/cm_*.c) against
** independent expectations. Each kernel's schedule is re-implemented here
** as an instrumented walk that visits the buffers in the order the
** generated code does (loop order, tiles, edges, temporal blocks, the
** padding copy, private buffers, streamed stores) and counts its
** floating-point operations; its address trace feeds fully associative
** LRU caches (a hash map and a list of line addresses) and a set of
** touched lines. The tests: the model's flops equal the kernel's own count
** and the walk's; with caches flushed the model's DRAM bytes equal the
** distinct lines the walk touches, and a level holding the whole working
** set fills exactly those; where tiles do not fit, the model's fills
** agree with the simulated LRU within a stated tolerance; and over 200
** sampled schedules of each kernel at realistic sizes every term is
** finite and in range.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost_model/cm.h"
#include "targets/host/hw.h"
#include "search_spaces/sp.h"
#include "targets/host/hk.h"
#include "tk_run.h"
#include "tk_space.h"

#define LINE 64

/* ---- A fully associative LRU cache of lines ---- */

typedef struct lru {
  long cap, n, head, tail;        /* capacity and use in lines; MRU, LRU */
  long *prev, *next;              /* list of slots */
  uint64_t *tag;                  /* line address of a slot */
  long *map, mapn;                /* open addressing: slot + 1, 0 empty */
  double misses;
} lru;

static void lru_init(lru *c, long cap) {
  memset(c, 0, sizeof *c);
  c->cap = cap;
  c->prev = malloc((size_t)cap * sizeof *c->prev);
  c->next = malloc((size_t)cap * sizeof *c->next);
  c->tag = malloc((size_t)cap * sizeof *c->tag);
  c->mapn = 1;
  while (c->mapn < 4 * cap) c->mapn *= 2;
  c->map = calloc((size_t)c->mapn, sizeof *c->map);
  c->head = c->tail = -1;
}

static void lru_free(lru *c) {
  free(c->prev), free(c->next), free(c->tag), free(c->map);
}

static long *lru_find(lru *c, uint64_t t, int *found) {
  long h = (long)((t * 0x9E3779B97F4A7C15ull) >> 20) & (c->mapn - 1);
  for (;; h = (h + 1) & (c->mapn - 1)) {
    if (!c->map[h]) return *found = 0, &c->map[h];
    if (c->tag[c->map[h] - 1] == t) return *found = 1, &c->map[h];
  }
}

/* Delete the map entry at *e (backward-shift deletion). */
static void lru_unmap(lru *c, long *e) {
  long i = e - c->map;
  c->map[i] = 0;
  for (long j = (i + 1) & (c->mapn - 1); c->map[j]; j = (j + 1) & (c->mapn - 1)) {
    long s = c->map[j];
    c->map[j] = 0;
    int found;
    *lru_find(c, c->tag[s - 1], &found) = s;
  }
}

static void lru_unlink(lru *c, long s) {
  if (c->prev[s] >= 0) c->next[c->prev[s]] = c->next[s]; else c->head = c->next[s];
  if (c->next[s] >= 0) c->prev[c->next[s]] = c->prev[s]; else c->tail = c->prev[s];
}

static void lru_push(lru *c, long s) {
  c->prev[s] = -1, c->next[s] = c->head;
  if (c->head >= 0) c->prev[c->head] = s;
  c->head = s;
  if (c->tail < 0) c->tail = s;
}

static void lru_access(lru *c, uint64_t t) {
  int found;
  long *e = lru_find(c, t, &found);
  if (found) {
    long s = *e - 1;
    lru_unlink(c, s);
    lru_push(c, s);
    return;
  }
  c->misses++;
  long s;
  if (c->n < c->cap) {
    s = c->n++;
  } else {
    s = c->tail;
    lru_unlink(c, s);
    lru_unmap(c, lru_find(c, c->tag[s], &found));
    e = lru_find(c, t, &found);
  }
  c->tag[s] = t;
  *e = s + 1;
  lru_push(c, s);
}

/* ---- The trace of a walk: three LRU levels and the touched lines ---- */

enum { B_IN, B_OUT, B_FILTER, B_XPAD, B_SCRATCH, B_A, B_B, NBUF };

/* Write-combining buffers of streamed stores: n lines, least recently
** written dropped first; a line leaves (one write to memory) when all of
** it was written, when dropped, or at the end. */
#define WC_MAX 64
typedef struct wcbuf {
  int n, used;
  uint64_t line[WC_MAX];
  int filled[WC_MAX];       /* elements written */
  double writes;
} wcbuf;

/* Remove slot i, keeping the others in order (oldest first). */
static void wc_remove(wcbuf *w, int i) {
  memmove(w->line + i, w->line + i + 1, (size_t)(w->used - i - 1) * sizeof *w->line);
  memmove(w->filled + i, w->filled + i + 1, (size_t)(w->used - i - 1) * sizeof *w->filled);
  w->used--;
}

static void wc_store(wcbuf *w, uint64_t line) {
  int i = 0, f = 1;
  while (i < w->used && w->line[i] != line) i++;
  if (i < w->used) {
    f = w->filled[i] + 1;
    wc_remove(w, i);
  } else if (w->used == w->n) {
    w->writes++;                      /* drop the oldest */
    wc_remove(w, 0);
  }
  if (f == LINE / 4) {                /* a whole line: written at once */
    w->writes++;
    return;
  }
  w->line[w->used] = line, w->filled[w->used] = f, w->used++;
}

typedef struct trace {
  wcbuf wc;
  int nlev;
  lru lev[3];
  lru seen;                 /* large enough never to evict: distinct lines */
  double flops;             /* operations the walk executes */
  double useful;            /* those the reference loop nest executes */
} trace;

static void trace_init(trace *t, const double *caps, int nlev, long distinct) {
  memset(t, 0, sizeof *t);
  t->wc.n = 10;
  t->nlev = nlev;
  for (int i = 0; i < nlev; i++)      /* no larger than what can be touched */
    lru_init(&t->lev[i], (long)fmin(caps[i] / LINE, (double)distinct));
  lru_init(&t->seen, distinct);
}

static void trace_free(trace *t) {
  for (int i = 0; i < t->nlev; i++) lru_free(&t->lev[i]);
  lru_free(&t->seen);
}

/* Element i of buffer b (float32, buffers line-aligned, far apart). */
static void touch(trace *t, int b, int64_t i) {
  uint64_t line = (((uint64_t)b << 36) + (uint64_t)i * 4) / LINE;
  for (int l = 0; l < t->nlev; l++) lru_access(&t->lev[l], line);
  lru_access(&t->seen, line);
}

static double seen_bytes(const trace *t) { return t->seen.misses * LINE; }

/* ---- Spaces, configurations, the model ---- */

/* Configuration from "name=value,..." (values as Python reprs) over the
** default; fails the test when a value is not in the space or the result
** is not valid. */
static void config(sp_space *sp, const char *text, int *cfg) {
  assert_int_equal(sp_default_config(sp, cfg), 1);
  char buf[512];
  snprintf(buf, sizeof buf, "%s", text);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    char *eq = strchr(tok, '=');
    assert_non_null(eq);
    *eq = 0;
    int p = sp_param_index(sp, tok), found = 0;
    if (p < 0) fail_msg("no parameter %s", tok);
    for (int v = 0; v < sp_nvalues(sp, p) && !found; v++) {
      char r[128];
      sx_repr(sp_value(sp, p, v), r, sizeof r);
      if (!strcmp(r, eq + 1)) cfg[p] = v, found = 1;
    }
    if (!found) fail_msg("%s=%s is not a value of the space", tok, eq + 1);
  }
  int failed;
  if (!sp_valid(sp, cfg, &failed)) fail_msg("%s fails %s", text, sp_cond_text(sp, failed));
}

/* The machine of a test: cache capacities in bytes, flushed. */
static cm_machine machine(double l1, double l2, double l3) {
  cm_machine m = {.cache = {l1, l2, l3, 0}, .line = LINE, .vector_regs = 32,
                  .simd_floats = 16, .flush = 1};   /* ways unknown: full */
  return m;
}

static int64_t param(sp_space *sp, const int *cfg, const char *name) {
  return kn_param_int(sp, cfg, name);
}

/* ---- Instrumented walks of the generated schedules ---- */

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* libgomp's schedule(static) without a chunk. */
static void gomp_static(int64_t n, int64_t th, int64_t t, int64_t *lo, int64_t *hi) {
  int64_t q = n / th, r = n % th;
  if (t < r) *lo = t * (q + 1), *hi = *lo + q + 1;
  else *lo = q * t + r, *hi = *lo + q;
}

/* transpose: tiles, blocks, elements in the schedule's order; streamed
** stores fill no line. */
static void walk_transpose(trace *tr, sp_space *sp, const int *cfg, int64_t M, int64_t N) {
  int64_t TI = param(sp, cfg, "ti"), TJ = param(sp, cfg, "tj"), B = param(sp, cfg, "block");
  int ij = !strcmp(kn_param_str(sp, cfg, "order"), "ij"), nt = param(sp, cfg, "nt") != 0;
  int64_t nti = (M + TI - 1) / TI, ntj = (N + TJ - 1) / TJ;
  for (int64_t a = 0; a < (ij ? nti : ntj); a++)
    for (int64_t b = 0; b < (ij ? ntj : nti); b++) {
      int64_t ti = ij ? a : b, tj = ij ? b : a;
      int64_t i0 = ti * TI, j0 = tj * TJ, ie = min64(i0 + TI, M), je = min64(j0 + TJ, N);
      for (int64_t x = ij ? i0 : j0; x < (ij ? ie : je); x += B)
        for (int64_t y = ij ? j0 : i0; y < (ij ? je : ie); y += B) {
          int64_t bi = ij ? x : y, bj = ij ? y : x;
          int64_t ni = min64(B, ie - bi), nj = min64(B, je - bj);
          for (int64_t p = 0; p < (ij ? ni : nj); p++)
            for (int64_t q = 0; q < (ij ? nj : ni); q++) {
              int64_t i = bi + (ij ? p : q), j = bj + (ij ? q : p);
              touch(tr, B_IN, i * N + j);
              if (!nt) touch(tr, B_OUT, j * M + i);
              else wc_store(&tr->wc, (uint64_t)(j * M + i) * 4 / LINE);
            }
        }
    }
}

/* reduction: each thread's ranges in order (threads one after another),
** then the sum; the reference's additions: N - 1. */
static void walk_reduction(trace *tr, sp_space *sp, const int *cfg, int64_t N) {
  int64_t chunk = param(sp, cfg, "chunk"), th = param(sp, cfg, "threads");
  for (int64_t t = 0; t < th; t++) {
    int64_t lo, hi;
    if (chunk == 0) {
      int64_t per = (N + th - 1) / th;
      lo = t * per, hi = min64(lo + per, N);
    } else {
      int64_t c0, c1;
      gomp_static((N + chunk - 1) / chunk, th, t, &c0, &c1);
      lo = c0 * chunk, hi = min64(c1 * chunk, N);
    }
    for (int64_t i = lo; i < hi; i++) touch(tr, B_IN, i);
  }
  touch(tr, B_OUT, 0);
  for (int64_t i = 1; i < N; i++) tr->useful++;
  tr->flops = tr->useful;
}

/* stencil: one sweep of interior rows [x0, x1) x [y0, y1) from s to d
** (row stride ld). */
static void sweep(trace *tr, int s, int d, int64_t so, int64_t dof, int64_t ld,
                  int64_t x0, int64_t x1, int64_t y0, int64_t y1) {
  for (int64_t x = x0; x < x1; x++)
    for (int64_t y = y0; y < y1; y++) {
      touch(tr, s, so + x * ld + y);
      touch(tr, s, so + (x - 1) * ld + y);
      touch(tr, s, so + (x + 1) * ld + y);
      touch(tr, s, so + x * ld + y - 1);
      touch(tr, s, so + x * ld + y + 1);
      touch(tr, d, dof + x * ld + y);
      tr->flops += 6;
    }
}

static void copy_row(trace *tr, int s, int64_t so, int d, int64_t dof, int64_t n) {
  for (int64_t i = 0; i < n; i++) touch(tr, s, so + i), touch(tr, d, dof + i);
}

static void walk_stencil(trace *tr, sp_space *sp, const int *cfg, int64_t NX, int64_t NY,
                         int64_t STEPS) {
  int64_t TX = param(sp, cfg, "tx"), TY = param(sp, cfg, "ty"), TB = param(sp, cfg, "tb");
  int64_t LD = NY + 2, LY = TY + 2 * TB;
  for (int64_t x = 0; x < NX + 2; x++)
    for (int64_t y = 0; y < NY + 2; y += (x == 0 || x == NX + 1) ? 1 : NY + 1) {
      touch(tr, B_IN, x * LD + y);
      touch(tr, B_SCRATCH, x * LD + y);
      touch(tr, B_OUT, x * LD + y);
    }
  int64_t nb = (STEPS + TB - 1) / TB;
  for (int64_t blk = 0; blk < nb; blk++) {
    int src = blk == 0 ? B_IN : (nb - blk) % 2 == 0 ? B_OUT : B_SCRATCH;
    int dst = (nb - 1 - blk) % 2 == 0 ? B_OUT : B_SCRATCH;
    int64_t nt = min64(TB, STEPS - blk * TB);
    for (int64_t tx = 0; tx < (NX + TX - 1) / TX; tx++)
      for (int64_t ty = 0; ty < (NY + TY - 1) / TY; ty++) {
        int64_t x0 = 1 + tx * TX, y0 = 1 + ty * TY;
        int64_t x1 = min64(x0 + TX, NX + 1), y1 = min64(y0 + TY, NY + 1);
        if (TB == 1) {
          sweep(tr, src, dst, 0, 0, LD, x0, x1, y0, y1);
          continue;
        }
        int64_t ax = max64(0, x0 - nt), bx = min64(NX + 2, x1 + nt);
        int64_t ay = max64(0, y0 - nt), by = min64(NY + 2, y1 + nt);
        int a = B_A, b = B_B;
        for (int64_t x = ax; x < bx; x++) {
          copy_row(tr, src, x * LD + ay, a, (x - ax) * LY, by - ay);
          copy_row(tr, src, x * LD + ay, b, (x - ax) * LY, by - ay);
        }
        for (int64_t k = 1; k <= nt; k++) {
          int64_t g = nt - k;
          /* buffer coordinates: offset so that (x, y) of the grid is
          ** (x - ax, y - ay) of the buffer */
          sweep(tr, a, b, -ax * LY - ay, -ax * LY - ay, LY, max64(1, x0 - g),
                min64(NX + 1, x1 + g), max64(1, y0 - g), min64(NY + 1, y1 + g));
          int t = a;
          a = b, b = t;
        }
        for (int64_t x = x0; x < x1; x++)
          copy_row(tr, a, (x - ax) * LY + (y0 - ay), dst, x * LD + y0, y1 - y0);
      }
  }
  tr->useful = 6.0 * NX * NY * STEPS;
}

/* conv2d: the padding copy, then the tiles, channel tiles, k blocks and
** rows (in the schedule's order), q blocks (full ones only when the k
** block is full), and the register block's loads and stores. */
typedef struct cv_dims {
  int64_t n, h, w, c, k, r, s, st, pad, p, q, hp, wp;
  int nhwc;
} cv_dims;

static cv_dims cv_get(const kn_problem *pb) {
  cv_dims d = {kn_int(pb, "N"), kn_int(pb, "H"), kn_int(pb, "W"), kn_int(pb, "C"),
               kn_int(pb, "K"), kn_int(pb, "R"), kn_int(pb, "S"), kn_int(pb, "stride"),
               kn_int(pb, "pad"), 0, 0, 0, 0, !strcmp(kn_str(pb, "layout"), "nhwc")};
  d.p = (d.h + 2 * d.pad - d.r) / d.st + 1;
  d.q = (d.w + 2 * d.pad - d.s) / d.st + 1;
  d.hp = d.h + 2 * d.pad, d.wp = d.w + 2 * d.pad;
  return d;
}

static int64_t cv_in(const cv_dims *d, int64_t n, int64_t c, int64_t h, int64_t w) {
  int64_t hp = d->pad ? d->hp : d->h, wp = d->pad ? d->wp : d->w;
  return d->nhwc ? ((n * hp + h) * wp + w) * d->c + c : ((n * d->c + c) * hp + h) * wp + w;
}

static int64_t cv_fl(const cv_dims *d, int64_t k, int64_t c, int64_t r, int64_t s) {
  return d->nhwc ? ((r * d->s + s) * d->c + c) * d->k + k : ((k * d->c + c) * d->r + r) * d->s + s;
}

static int64_t cv_out(const cv_dims *d, int64_t n, int64_t k, int64_t p, int64_t q) {
  return d->nhwc ? ((n * d->p + p) * d->q + q) * d->k + k : ((n * d->k + k) * d->p + p) * d->q + q;
}

typedef struct cv_sched {
  cv_dims d;
  int64_t kb, qb, ct, kt, pt;
  const char *red;
  int kp;
} cv_sched;

/* The register block of kn x qn outputs at (n, k0, p, q0) over channels
** [c0, c1): accumulators loaded from out unless c0 == 0, the reduction
** loops in red order around the block (nhwc: q outer, k inner), stores. */
static void cv_mk(trace *tr, const cv_sched *s, int64_t n, int64_t k0, int64_t kn, int64_t p,
                  int64_t q0, int64_t qn, int64_t c0, int64_t c1) {
  const cv_dims *d = &s->d;
  int xin = d->pad ? B_XPAD : B_IN;
  int64_t na = d->nhwc ? qn : kn, nb = d->nhwc ? kn : qn;
  for (int64_t a = 0; a < na; a++)
    for (int64_t b = 0; b < nb; b++)
      if (c0 != 0) touch(tr, B_OUT, cv_out(d, n, k0 + (d->nhwc ? b : a), p, q0 + (d->nhwc ? a : b)));
  int64_t lim[3] = {c1 - c0, d->r, d->s}, ix[3];
  int pos[3];                         /* position of c, r, s in red order */
  for (int i = 0; i < 3; i++) pos[i] = (int)(strchr("crs", s->red[i]) - "crs");
  for (ix[0] = 0; ix[0] < lim[pos[0]]; ix[0]++)
    for (ix[1] = 0; ix[1] < lim[pos[1]]; ix[1]++)
      for (ix[2] = 0; ix[2] < lim[pos[2]]; ix[2]++) {
        int64_t v[3];
        for (int i = 0; i < 3; i++) v[pos[i]] = ix[i];
        int64_t c = c0 + v[0], r = v[1], ss = v[2];
        for (int64_t a = 0; a < na; a++)
          for (int64_t b = 0; b < nb; b++) {
            int64_t kk = d->nhwc ? b : a, qq = d->nhwc ? a : b;
            touch(tr, xin, cv_in(d, n, c, p * d->st + r, (q0 + qq) * d->st + ss));
            touch(tr, B_FILTER, cv_fl(d, k0 + kk, c, r, ss));
            tr->flops += 2;
          }
      }
  for (int64_t a = 0; a < na; a++)
    for (int64_t b = 0; b < nb; b++)
      touch(tr, B_OUT, cv_out(d, n, k0 + (d->nhwc ? b : a), p, q0 + (d->nhwc ? a : b)));
}

static void walk_conv2d(trace *tr, sp_space *sp, const int *cfg, const kn_problem *pb) {
  cv_sched s = {cv_get(pb), param(sp, cfg, "kb"), param(sp, cfg, "qb"), param(sp, cfg, "ct"),
                param(sp, cfg, "kt"), param(sp, cfg, "pt"), kn_param_str(sp, cfg, "red_order"),
                !strcmp(kn_param_str(sp, cfg, "loop_order"), "kp")};
  const cv_dims *d = &s.d;
  if (d->pad > 0) {
    if (d->nhwc)
      for (int64_t n = 0; n < d->n; n++)
        for (int64_t h = 0; h < d->h; h++)
          copy_row(tr, B_IN, (n * d->h + h) * d->w * d->c, B_XPAD,
                   cv_in(d, n, 0, h + d->pad, d->pad), d->w * d->c);
    else
      for (int64_t n = 0; n < d->n; n++)
        for (int64_t c = 0; c < d->c; c++)
          for (int64_t h = 0; h < d->h; h++)
            copy_row(tr, B_IN, ((n * d->c + c) * d->h + h) * d->w, B_XPAD,
                     cv_in(d, n, c, h + d->pad, d->pad), d->w);
  }
  for (int64_t n = 0; n < d->n; n++)
    for (int64_t kt = 0; kt < (d->k + s.kt - 1) / s.kt; kt++)
      for (int64_t pt = 0; pt < (d->p + s.pt - 1) / s.pt; pt++) {
        int64_t k1 = min64(kt * s.kt + s.kt, d->k), p1 = min64(pt * s.pt + s.pt, d->p);
        for (int64_t c0 = 0; c0 < d->c; c0 += s.ct) {
          int64_t c1 = min64(c0 + s.ct, d->c);
          int64_t nk = (k1 - kt * s.kt + s.kb - 1) / s.kb, np = p1 - pt * s.pt;
          for (int64_t a = 0; a < (s.kp ? nk : np); a++)
            for (int64_t b = 0; b < (s.kp ? np : nk); b++) {
              int64_t k0 = kt * s.kt + (s.kp ? a : b) * s.kb, p = pt * s.pt + (s.kp ? b : a);
              int64_t kn = min64(s.kb, k1 - k0), q0 = 0;
              if (kn == s.kb)
                for (; q0 + s.qb <= d->q; q0 += s.qb) cv_mk(tr, &s, n, k0, s.kb, p, q0, s.qb, c0, c1);
              for (; q0 < d->q; q0 += s.qb)
                cv_mk(tr, &s, n, k0, kn, p, q0, min64(s.qb, d->q - q0), c0, c1);
            }
        }
      }
  /* the reference loop nest: its multiply-adds, padding zeros included
  ** (hk counts them; the schedule computes them) */
  for (int64_t n = 0; n < d->n; n++)
    for (int64_t k = 0; k < d->k; k++)
      for (int64_t p = 0; p < d->p; p++)
        for (int64_t q = 0; q < d->q; q++)
          for (int64_t c = 0; c < d->c; c++)
            for (int64_t r = 0; r < d->r; r++)
              for (int64_t ss = 0; ss < d->s; ss++) tr->useful += 2;
}

/* ---- Threads: each thread's work, enumerated ---- */

/* Work of each thread of schedule cfg (threads given by the schedule),
** by walking the parallel loop's iterations and dealing them out as
** libgomp's schedule(static) does; returns the number of threads. */
static int thread_work(const char *name, sp_space *sp, const int *cfg, const kn_problem *pb,
                       double *work) {
  int64_t th = param(sp, cfg, "threads");
  for (int64_t t = 0; t < th; t++) work[t] = 0;
  if (!strcmp(name, "reduction")) {
    int64_t N = kn_int(pb, "N"), chunk = param(sp, cfg, "chunk");
    for (int64_t t = 0; t < th; t++) {
      int64_t lo, hi;
      if (chunk == 0) {
        int64_t per = (N + th - 1) / th;
        lo = t * per, hi = min64(lo + per, N);
      } else {
        int64_t c0, c1;
        gomp_static((N + chunk - 1) / chunk, th, t, &c0, &c1);
        lo = c0 * chunk, hi = min64(c1 * chunk, N);
      }
      for (int64_t i = lo; i < hi; i++) work[t]++;
    }
  } else if (!strcmp(name, "transpose")) {
    int64_t M = kn_int(pb, "M"), N = kn_int(pb, "N"), TI = param(sp, cfg, "ti"),
            TJ = param(sp, cfg, "tj");
    int ij = !strcmp(kn_param_str(sp, cfg, "order"), "ij");
    int col = !strcmp(kn_param_str(sp, cfg, "parallel"), "collapse");
    int64_t nti = (M + TI - 1) / TI, ntj = (N + TJ - 1) / TJ;
    int64_t no = ij ? nti : ntj, nn = ij ? ntj : nti;
    for (int64_t t = 0; t < th; t++) {
      int64_t lo, hi;
      gomp_static(col ? no * nn : no, th, t, &lo, &hi);
      for (int64_t x = lo; x < hi; x++)
        for (int64_t y = col ? 0 : 0; y < (col ? 1 : nn); y++) {
          int64_t a = col ? x / nn : x, b = col ? x % nn : y;
          int64_t ti = ij ? a : b, tj = ij ? b : a;
          for (int64_t i = ti * TI; i < min64(ti * TI + TI, M); i++)
            for (int64_t j = tj * TJ; j < min64(tj * TJ + TJ, N); j++) work[t]++;
        }
    }
  } else if (!strcmp(name, "stencil")) {
    int64_t NX = kn_int(pb, "NX"), NY = kn_int(pb, "NY"), TX = param(sp, cfg, "tx"),
            TY = param(sp, cfg, "ty");
    int col = !strcmp(kn_param_str(sp, cfg, "parallel"), "tiles");
    int64_t ntx = (NX + TX - 1) / TX, nty = (NY + TY - 1) / TY;
    for (int64_t t = 0; t < th; t++) {
      int64_t lo, hi;
      gomp_static(col ? ntx * nty : ntx, th, t, &lo, &hi);
      for (int64_t x = lo; x < hi; x++)
        for (int64_t y = 0; y < (col ? 1 : nty); y++) {
          int64_t tx = col ? x / nty : x, ty = col ? x % nty : y;
          for (int64_t i = 1 + tx * TX; i < min64(1 + tx * TX + TX, NX + 1); i++)
            for (int64_t j = 1 + ty * TY; j < min64(1 + ty * TY + TY, NY + 1); j++) work[t]++;
        }
    }
  } else {
    cv_dims d = cv_get(pb);
    int64_t KT = param(sp, cfg, "kt"), PT = param(sp, cfg, "pt");
    int cd = (int)strlen(kn_param_str(sp, cfg, "parallel"));
    int64_t nkt = (d.k + KT - 1) / KT, npt = (d.p + PT - 1) / PT;
    int64_t dims[3] = {d.n, nkt, npt}, iters = 1;
    for (int i = 0; i < cd; i++) iters *= dims[i];
    for (int64_t t = 0; t < th; t++) {
      int64_t lo, hi;
      gomp_static(iters, th, t, &lo, &hi);
      for (int64_t x = lo; x < hi; x++) {
        /* the collapsed index, then the loops left inside each iteration */
        int64_t idx[3], r = x;
        for (int i = cd - 1; i >= 0; i--) idx[i] = r % dims[i], r /= dims[i];
        for (int64_t n = 0; n < d.n; n++)
          for (int64_t kt = 0; kt < nkt; kt++)
            for (int64_t pt = 0; pt < npt; pt++) {
              int64_t v[3] = {n, kt, pt};
              int mine = 1;
              for (int i = 0; i < cd; i++) mine &= v[i] == idx[i];
              if (!mine) continue;
              for (int64_t k = kt * KT; k < min64(kt * KT + KT, d.k); k++)
                for (int64_t p = pt * PT; p < min64(pt * PT + PT, d.p); p++) work[t]++;
            }
      }
    }
  }
  return (int)th;
}

/* ---- One case: the walk and the model side by side ---- */

typedef struct result {
  double model[CM_NLEVEL], sim[3], distinct;   /* bytes */
  double mflops, hkflops, walkflops, useful, wc_writes;
  double imbalance;                            /* enumerated */
  int active;                                  /* threads with work */
  cm_work w;
} result;

static const cm_kmodel *kmodel(const char *name) {
  return !strcmp(name, "conv2d") ? &cm_conv2d : !strcmp(name, "stencil") ? &cm_stencil
         : !strcmp(name, "transpose") ? &cm_transpose : &cm_reduction;
}

/* Walk schedule cfg_text of kernel name on workload set under LRU levels
** of caps bytes (L1, L2, L3), and run its model on the same machine (cold,
** capacity shares 1, fully associative, coefficient nt_write set to
** nt_write). */
static result run_case(const char *name, const char *set, const char *cfg_text,
                       const double caps[3], double nt_write) {
  const kn_kernel *k = hk_find(name);
  const cm_kmodel *km = kmodel(name);
  assert_non_null(k);
  sp_space *sp = load_space(k, set);
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  int cfg[64];
  config(sp, cfg_text, cfg);
  kn_buf bufs[KN_MAXBUF];
  long total = 0;
  for (int i = 0, nb = k->buffers(&pb, bufs); i < nb; i++) total += (long)bufs[i].n;
  trace tr;
  trace_init(&tr, caps, 3, 4 * total / 16 + 4096);
  if (!strcmp(name, "transpose")) walk_transpose(&tr, sp, cfg, kn_int(&pb, "M"), kn_int(&pb, "N"));
  else if (!strcmp(name, "reduction")) walk_reduction(&tr, sp, cfg, kn_int(&pb, "N"));
  else if (!strcmp(name, "stencil"))
    walk_stencil(&tr, sp, cfg, kn_int(&pb, "NX"), kn_int(&pb, "NY"), kn_int(&pb, "STEPS"));
  else walk_conv2d(&tr, sp, cfg, &pb);
  result r;
  memset(&r, 0, sizeof r);
  cm_machine m = machine(caps[0], caps[1], caps[2]);
  cm_coefs c;
  cm_coefs_default(km, &c);
  for (int i = 0; i < km->ncoef; i++) {
    if (!strncmp(km->coefs[i].name, "cap_", 4)) c.v[i] = 1.0;
    if (!strncmp(km->coefs[i].name, "ways_", 5)) c.v[i] = 1e12;   /* fully associative */
    if (!strcmp(km->coefs[i].name, "nt_write")) c.v[i] = nt_write;
    /* the simulated buffers: 10, a whole line or the oldest dropped */
    if (!strcmp(km->coefs[i].name, "wc_buffers")) c.v[i] = 10;
    if (!strcmp(km->coefs[i].name, "wc_exp")) c.v[i] = 1e3;
    if (!strcmp(km->coefs[i].name, "nt_partial")) c.v[i] = 1;
  }
  memset(&r.w, 0, sizeof r.w);
  r.w.threads = 1, r.w.imbalance = 1;
  for (int j = 0; j < CM_MAXEFF; j++) r.w.eff[j] = 1;
  rt_err err = {0};
  if (km->work(&pb, sp, cfg, &m, &c, &r.w, &err)) fail_msg("%s: %s", name, err.msg);
  for (int l = 0; l < CM_NLEVEL; l++) r.model[l] = r.w.bytes[l];
  for (int l = 0; l < 3; l++) r.sim[l] = tr.lev[l].misses * LINE;
  r.distinct = seen_bytes(&tr);
  assert_true(tr.seen.n < tr.seen.cap);      /* it never dropped a line */
  r.mflops = r.w.flops, r.hkflops = k->flops(&pb), r.walkflops = tr.flops, r.useful = tr.useful;
  r.wc_writes = tr.wc.writes + tr.wc.used;
  double work[256], sum = 0, mx = 0;
  int th = thread_work(name, sp, cfg, &pb, work);
  for (int t = 0; t < th; t++) sum += work[t], mx = fmax(mx, work[t]), r.active += work[t] > 0;
  r.imbalance = r.active ? mx / (sum / r.active) : 1;
  trace_free(&tr);
  sp_free(sp);
  return r;
}

/* ---- Tests ---- */

typedef struct kcase {
  const char *kernel, *set, *cfg;
} kcase;

/* Small workloads with sizes that are not multiples of the tiles,
** edge blocks, padding, strides, both layouts, temporal blocks that do
** not divide the steps, streamed stores, threads. */
static const kcase small_cases[] = {
  {"conv2d", "N=2,H=7,W=13,C=3,K=5,R=3,S=3,pad=1", "kb=4,qb=8"},
  {"conv2d", "N=1,H=13,W=7,C=7,K=17,R=3,S=2,stride=2,layout='nhwc'",
   "kb=16,qb=4,ct=8,kt=16,pt=4,red_order='rsc',loop_order='pk'"},
  {"conv2d", "N=3,H=9,W=11,C=40,K=33,R=1,S=1,stride=3,pad=1", "kb=8,qb=4,ct=8,threads=2,parallel='nk'"},
  {"conv2d", "N=1,H=31,W=31,C=13,K=20,R=5,S=5,pad=2,layout='nhwc'", "kb=16,qb=8,ct=8,kt=16"},
  {"conv2d", "N=1,H=2,W=3,C=5,K=2,R=4,S=5,pad=1", "kb=1,qb=1"},
  {"stencil", "NX=7,NY=13,STEPS=3", "tx=4,ty=16,tb=2"},
  {"stencil", "NX=40,NY=300,STEPS=17", "tx=16,ty=64,tb=8,threads=2,parallel='tiles'"},
  {"stencil", "NX=31,NY=5,STEPS=8", "tx=8"},
  {"stencil", "NX=13,NY=31,STEPS=9", "tx=4,ty=16,tb=2"},
  {"stencil", "NX=1,NY=1,STEPS=1", "tx=32"},
  {"transpose", "M=7,N=13", "ti=8,tj=8,block=4"},
  {"transpose", "M=100,N=90", "ti=32,tj=64,block=8,order='ij',nt=True,threads=2,parallel='collapse'"},
  {"transpose", "M=33,N=65", "ti=16,tj=16,block=16,order='ji'"},
  {"reduction", "N=1", "vec=1,accs=1"},
  {"reduction", "N=7", "vec=4,accs=1"},
  {"reduction", "N=1000", "vec=16,accs=8,unroll=2"},
  {"reduction", "N=70001", "chunk=16384,threads=2"},
  {NULL, NULL, NULL},
};

static const double huge[3] = {1e12, 1e12, 1e12};

/* The model's flops are the kernel's own count and the count of the
** reference loop nest walked here; conv2d's schedule computes exactly
** those (padding zeros included); the stencil's redundant-work term is
** the useful share of the points the temporal blocks compute. */
static void test_flops(void **state) {
  (void)state;
  for (const kcase *c = small_cases; c->kernel; c++) {
    result r = run_case(c->kernel, c->set, c->cfg, huge, 1);
    if (r.mflops != r.hkflops || r.useful != r.hkflops)
      fail_msg("%s %s %s: flops model %.0f, hk %.0f, reference walk %.0f", c->kernel, c->set,
               c->cfg, r.mflops, r.hkflops, r.useful);
    if (!strcmp(c->kernel, "conv2d")) assert_true(r.walkflops == r.hkflops);
    if (!strcmp(c->kernel, "stencil"))
      assert_true(fabs(r.w.eff[1] - r.useful / r.walkflops) < 1e-12);
  }
}

/* Threads: the model's thread count and imbalance are those of the work
** dealt out by enumerating the parallel loop's iterations. */
static void test_threads(void **state) {
  (void)state;
  static const kcase cases[] = {
    {"conv2d", "N=3,H=9,W=11,C=40,K=33,R=1,S=1,stride=3,pad=1,threads_max=3", "kb=8,qb=4,ct=8,kt=16,threads=3,parallel='nk'"},
    {"conv2d", "N=1,H=20,W=9,C=4,K=70,R=3,S=3,threads_max=4", "kt=16,pt=4,threads=4,parallel='nkp'"},
    {"conv2d", "N=5,H=6,W=6,C=4,K=8,R=3,S=3,threads_max=3", "threads=3,parallel='n'"},
    {"stencil", "NX=40,NY=300,STEPS=3,threads_max=3", "tx=16,ty=64,threads=3,parallel='tiles'"},
    {"stencil", "NX=70,NY=40,STEPS=2,threads_max=4", "tx=16,ty=16,threads=4,parallel='rows'"},
    {"transpose", "M=100,N=90,threads_max=3", "ti=32,tj=16,threads=3,parallel='collapse'"},
    {"transpose", "M=100,N=90,threads_max=4", "ti=16,tj=64,order='ji',threads=4,parallel='outer'"},
    {"reduction", "N=70001,threads_max=3", "chunk=4096,threads=3"},
    {"reduction", "N=1001,threads_max=4", "chunk=0,threads=4"},
    {NULL, NULL, NULL},
  };
  for (const kcase *c = cases; c->kernel; c++) {
    result r = run_case(c->kernel, c->set, c->cfg, huge, 1);
    if (r.w.threads != r.active || fabs(r.w.imbalance - r.imbalance) > 1e-9 * r.imbalance)
      fail_msg("%s %s %s: model %d threads, imbalance %.6f; enumerated %d, %.6f", c->kernel,
               c->set, c->cfg, r.w.threads, r.w.imbalance, r.active, r.imbalance);
  }
}

/* Caches flushed: the DRAM bytes are the distinct lines the walk touches
** (the kernel's buffers and the schedule's own: conv2d's padded copy,
** the stencil's scratch grid and private buffers); caches that hold the
** whole working set fill exactly those lines too. One thread (threads
** sharing a line would each count it). Streamed stores fill no line:
** their DRAM charge (nt_write) is zero here. */
static void test_compulsory(void **state) {
  (void)state;
  double worst = 0;
  for (const kcase *c = small_cases; c->kernel; c++) {
    if (strstr(c->cfg, "threads=")) continue;
    result r = run_case(c->kernel, c->set, c->cfg, huge, 0);
    for (int l = 1; l < CM_NLEVEL; l++) {
      double d = fabs(r.model[l] - r.distinct) / LINE;
      worst = fmax(worst, d);
      if (d > fmax(3, 0.01 * r.distinct / LINE))
        fail_msg("%s %s %s: level %d fills %.1f lines, the walk touches %.0f", c->kernel,
                 c->set, c->cfg, l + 1, r.model[l] / LINE, r.distinct / LINE);
    }
  }
  print_message("compulsory traffic: largest difference %.1f lines\n", worst);
}

/* Tiles that do not fit: the model's fills of L1 and L2 against fully
** associative LRU caches of the same sizes fed the walk's trace, rows
** line-aligned. Tolerance 15%; the figures are printed. */
static void test_lru(void **state) {
  (void)state;
  static const struct {
    const char *kernel, *set, *cfg;
    double l1, l2;
  } cases[] = {
    {"transpose", "M=128,N=160", "ti=8,tj=8,block=8,order='ij'", 2048, 16384},
    {"transpose", "M=128,N=160", "ti=32,tj=8,block=4,order='ji'", 2048, 16384},
    {"transpose", "M=128,N=160", "ti=64,tj=64,block=4,order='ij'", 2048, 16384},
    {"transpose", "M=128,N=160", "ti=32,tj=32,block=1,order='ji'", 2048, 16384},
    {"transpose", "M=128,N=192", "ti=128,tj=64,block=16,order='ij'", 8192, 65536},
    {"transpose", "M=128,N=192", "ti=8,tj=64,block=4,order='ji'", 16384, 65536},
    {"stencil", "NX=64,NY=126,STEPS=5", "tx=8,ty=16", 4096, 16384},
    {"stencil", "NX=64,NY=126,STEPS=5", "tx=32,ty=32", 4096, 16384},
    {"stencil", "NX=64,NY=126,STEPS=5", "tx=32,ty=64,tb=4", 4096, 16384},
    {"stencil", "NX=64,NY=126,STEPS=5", "tx=8,ty=16,tb=4", 4096, 16384},
    {"stencil", "NX=64,NY=126,STEPS=5", "tx=16,ty=32,tb=2", 8192, 32768},
    {"stencil", "NX=62,NY=78,STEPS=4", "tx=64,ty=128,tb=2", 8192, 32768},
    {"conv2d", "N=1,H=18,W=18,C=32,K=32,R=3,S=3", "kb=4,qb=4,ct=8,pt=1,kt=16", 16384, 65536},
    {"conv2d", "N=1,H=18,W=18,C=32,K=32,R=3,S=3", "kb=16,qb=4,ct=32,pt=4,kt=16", 8192, 65536},
    {"conv2d", "N=1,H=18,W=18,C=32,K=32,R=3,S=3", "kb=16,qb=16,ct=32,pt=1,kt=16,loop_order='pk'", 8192, 131072},
    {"conv2d", "N=1,H=16,W=16,C=32,K=32,R=3,S=3,pad=1,layout='nhwc'", "kb=16,qb=4,ct=8,pt=1,kt=16", 8192, 65536},
    {"conv2d", "N=1,H=16,W=16,C=32,K=32,R=3,S=3,pad=1,layout='nhwc'", "kb=4,qb=16,ct=32,pt=4,kt=16", 8192, 131072},
    {"conv2d", "N=1,H=18,W=18,C=64,K=64,R=3,S=3", "kb=16,qb=16,ct=32,pt=4,kt=16", 36864, 262144},
    {"conv2d", "N=1,H=16,W=16,C=64,K=64,R=3,S=3,pad=1,layout='nhwc'", "kb=16,qb=4,ct=32,pt=1,kt=16", 36864, 262144},
    {"conv2d", "N=2,H=14,W=30,C=8,K=24,R=3,S=3,pad=1", "kb=16,qb=4,ct=8,kt=16,pt=1", 36864, 262144},
    {"reduction", "N=100000", "vec=16,accs=4", 8192, 65536},
    {"reduction", "N=100000", "chunk=1024,vec=8", 8192, 65536},
  };
  double worst = 0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    double caps[3] = {cases[i].l1, cases[i].l2, 1e12};
    result r = run_case(cases[i].kernel, cases[i].set, cases[i].cfg, caps, 1);
    print_message("%-9s %-52s %-45s L1 %6.0f/%6.0f lines (%.3f)  L2 %6.0f/%6.0f (%.3f)\n",
                  cases[i].kernel, cases[i].set, cases[i].cfg, r.model[1] / LINE,
                  r.sim[0] / LINE, r.model[1] / r.sim[0], r.model[2] / LINE, r.sim[1] / LINE,
                  r.model[2] / r.sim[1]);
    for (int l = 0; l < 2; l++) {
      double e = fabs(r.model[l + 1] / r.sim[l] - 1);
      worst = fmax(worst, e);
      if (e > 0.15)
        fail_msg("%s %s %s: L%d fills %.0f lines, LRU %.0f", cases[i].kernel, cases[i].set,
                 cases[i].cfg, l + 1, r.model[l + 1] / LINE, r.sim[l] / LINE);
    }
  }
  print_message("LRU: largest relative difference %.3f\n", worst);
}

/* Streamed stores: the model's DRAM charge for them (nt_write 1) is the
** number of line writes of ten write-combining buffers fed the walk's
** streamed stores (whole lines written at once, the oldest dropped when
** a new line needs a buffer). */
static void test_streamed(void **state) {
  (void)state;
  static const char *const cfgs[] = {
    "ti=32,tj=64,block=8,order='ij'", "ti=32,tj=64,block=16,order='ij'",
    "ti=32,tj=64,block=4,order='ji'", "ti=32,tj=64,block=1,order='ij'",
    "ti=32,tj=8,block=1,order='ij'", "ti=32,tj=64,block=16,order='ji'",
    "ti=8,tj=16,block=8,order='ji'", "ti=8,tj=8,block=8,order='ji'",
    "ti=8,tj=8,block=4,order='ij'", "ti=16,tj=8,block=4,order='ji'", NULL,
  };
  for (int i = 0; cfgs[i]; i++) {
    char cfg[128];
    snprintf(cfg, sizeof cfg, "%s,nt=True", cfgs[i]);
    result r = run_case("transpose", "M=128,N=96", cfg, huge, 1);
    double streamed = (r.model[3] - r.distinct) / LINE;
    if (fabs(streamed - r.wc_writes) > 0.01 * r.wc_writes)
      fail_msg("%s: model %.0f streamed lines, buffers %.0f", cfg, streamed, r.wc_writes);
  }
}

/* 200 sampled schedules of each kernel at realistic sizes on this
** machine's caches: every term finite and in range, and the predicted
** time finite and positive. */
static void test_sampled(void **state) {
  (void)state;
  static const kcase loads[] = {
    {"conv2d", "N=1,H=56,W=56,C=64,K=64,R=3,S=3,pad=1", NULL},
    {"conv2d", "N=1,H=56,W=56,C=64,K=64,R=3,S=3,pad=1,layout='nhwc'", NULL},
    {"conv2d", "N=8,H=28,W=28,C=128,K=128,R=3,S=3,stride=2,pad=1", NULL},
    {"stencil", "NX=1024,NY=1024,STEPS=16", NULL},
    {"transpose", "M=4096,N=4096", NULL},
    {"reduction", "N=10000000", NULL},
    {NULL, NULL, NULL},
  };
  cm_ceilings ce;
  memset(&ce, 0, sizeof ce);
  ce.threads = 2;
  ce.peak[0] = ce.peak[1] = 230e9;
  double bw[CM_NLEVEL] = {300e9, 100e9, 40e9, 15e9}, cache[CM_NLEVEL] = {48 << 10, 2 << 20, 260 << 20, 0};
  for (int l = 0; l < CM_NLEVEL; l++) ce.bw[l][0] = ce.bw[l][1] = bw[l], ce.cache[l] = cache[l];
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 20261130);
  for (const kcase *c = loads; c->kernel; c++) {
    const cm_kmodel *km = kmodel(c->kernel);
    sp_space *sp = load_space(hk_find(c->kernel), c->set);
    kn_problem pb;
    kn_problem_from_space(&pb, sp);
    int np = sp_nparams(sp), n = 200;
    int *cfgs = malloc((size_t)n * (size_t)np * sizeof *cfgs);
    rt_err err = {0};
    if (sp_sample(sp, rng, n, 0, cfgs, &err)) fail_msg("%s", err.msg);
    cm_coefs co;
    cm_coefs_default(km, &co);
    for (int i = 0; i < n; i++)
      for (int flush = 0; flush < 2; flush++) {
        cm_pred p;
        if (cm_predict(km, &pb, sp, cfgs + (size_t)i * np, &ce, &co, flush, &p, &err))
          fail_msg("%s: %s", c->kernel, err.msg);
        const cm_work *w = &p.w;
        int ok = isfinite(w->flops) && w->flops >= 0 && w->threads >= 1 &&
                 isfinite(w->imbalance) && w->imbalance >= 1 - 1e-12 &&
                 isfinite(w->trips) && w->trips >= 0 && isfinite(p.time) && p.time > 0;
        for (int l = 0; l < CM_NLEVEL; l++) ok &= isfinite(w->bytes[l]) && w->bytes[l] >= 0;
        for (int j = 0; j < km->neff; j++) ok &= w->eff[j] > 0 && w->eff[j] <= 1;
        if (!ok) {
          char *js = sp_config_json(sp, cfgs + (size_t)i * np);
          fail_msg("%s %s %s: a term out of range (flops %g, bytes %g %g %g %g, "
                   "threads %d, imbalance %g, trips %g, time %g)", c->kernel, c->set, js,
                   w->flops, w->bytes[0], w->bytes[1], w->bytes[2], w->bytes[3], w->threads,
                   w->imbalance, w->trips, p.time);
        }
      }
    free(cfgs);
    sp_free(sp);
  }
  gsl_rng_free(rng);
}

/* The real generated code of one schedule per kernel under cachegrind
** (this machine's cache sizes, its associativity, one thread, cold): the
** model (capacity shares 1) against the counted fills. Lines filled into
** L2 and L3 and from DRAM within 10%; into L1 within 30% (the L1 term is
** the roughest: sliding windows and set conflicts the model does not
** see). Skipped when valgrind is missing. */
static void test_cachegrind(void **state) {
  (void)state;
  const char *why;
  if (!hw_cachegrind_available(&why)) {
    print_message("cachegrind not available: %s\n", why);
    skip();
  }
  static const kcase cases[] = {
    {"transpose", "M=1024,N=512", "ti=32,tj=128,block=8,order='ij'"},
    {"transpose", "M=512,N=512", "ti=64,tj=64,block=8,order='ji'"},
    {"stencil", "NX=254,NY=254,STEPS=4", "tx=32,ty=64"},
    {"conv2d", "N=1,H=28,W=28,C=32,K=32,R=3,S=3,pad=1", "kb=4,qb=8,ct=32,kt=16,pt=4"},
    {"reduction", "N=1000000", "vec=16"},
    {NULL, NULL, NULL},
  };
  char dir[] = "/tmp/rooftune_cmk_XXXXXX";
  assert_non_null(mkdtemp(dir));
  cm_machine m = machine(48 << 10, 2 << 20, 260 << 20);
  for (const kcase *c = cases; c->kernel; c++) {
    const kn_kernel *k = hk_find(c->kernel);
    const cm_kmodel *km = kmodel(c->kernel);
    sp_space *sp = load_space(k, c->set);
    kn_problem pb;
    kn_problem_from_space(&pb, sp);
    int cfg[64];
    config(sp, c->cfg, cfg);
    char *src = k->codegen(&pb, sp, cfg);
    cm_traffic tr;
    rt_err err = {0};
    if (hw_count_cachegrind(k, &pb, src, &m, dir, &tr, &err))
      fail_msg("%s: cachegrind: %s", c->kernel, err.msg);
    cm_coefs co;
    cm_coefs_default(km, &co);
    for (int i = 0; i < km->ncoef; i++)
      if (!strncmp(km->coefs[i].name, "cap_", 4)) co.v[i] = 1;
    cm_work w;
    memset(&w, 0, sizeof w);
    if (km->work(&pb, sp, cfg, &m, &co, &w, &err)) fail_msg("%s", err.msg);
    print_message("%-9s %-40s %-34s fills L1 %7.0f/%7.0f (%.3f) L2 %7.0f/%7.0f (%.3f) "
                  "L3 %7.0f/%7.0f (%.3f)\n", c->kernel, c->set, c->cfg,
                  w.bytes[1] / LINE, tr.bytes[1] / LINE, w.bytes[1] / tr.bytes[1],
                  w.bytes[2] / LINE, tr.bytes[2] / LINE, w.bytes[2] / tr.bytes[2],
                  w.bytes[3] / LINE, tr.bytes[3] / LINE, w.bytes[3] / tr.bytes[3]);
    for (int l = 1; l < CM_NLEVEL; l++)
      if (fabs(w.bytes[l] / tr.bytes[l] - 1) > (l == 1 ? 0.30 : 0.10))
        fail_msg("%s %s %s: level %d model %.0f lines, cachegrind %.0f", c->kernel, c->set,
                 c->cfg, l + 1, w.bytes[l] / LINE, tr.bytes[l] / LINE);
    free(src);
    sp_free(sp);
  }
  /* the compile cache's files, then the directory */
  assert_int_equal(tk_rm_rf(dir), 0);
}

/* ---- The terms of issue 21, against hand-computed values ---- */

/* The work of schedule cfg_text of kernel name on workload set, caches
** flushed and large enough for everything, fully associative, capacity
** shares 1, the other coefficients at their defaults but the n named
** ones. */
static cm_work work_with(const char *name, const char *set, const char *cfg_text,
                         const char *const *names, const double *vals, int n) {
  const kn_kernel *k = hk_find(name);
  const cm_kmodel *km = kmodel(name);
  sp_space *sp = load_space(k, set);
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  int cfg[64];
  config(sp, cfg_text, cfg);
  cm_machine m = machine(1e12, 1e12, 1e12);
  cm_coefs c;
  cm_coefs_default(km, &c);
  for (int i = 0; i < km->ncoef; i++) {
    if (!strncmp(km->coefs[i].name, "cap_", 4)) c.v[i] = 1.0;
    if (!strncmp(km->coefs[i].name, "ways_", 5)) c.v[i] = 1e12;
    for (int j = 0; j < n; j++)
      if (!strcmp(km->coefs[i].name, names[j])) c.v[i] = vals[j];
  }
  cm_work w;
  memset(&w, 0, sizeof w);
  rt_err err = {0};
  if (km->work(&pb, sp, cfg, &m, &c, &w, &err)) fail_msg("%s: %s", name, err.msg);
  sp_free(sp);
  return w;
}

/* Store fills: a 64 x 64 transpose whose arrays both fit fills each
** line once, 256 of in and 256 of out (16 KiB each); the out half are
** store fills, each costing 1 + dirty_refill load fills of L2's time:
** mem_eff of the L2 bound 512 / (512 + 3 x 256) = 0.4 with dirty_refill
** 3, while its bytes stay the 512 lines filled (cm.h invariant 4). */
static void test_store_fills(void **state) {
  (void)state;
  const char *names[] = {"dirty_refill"};
  const char *cfgs[] = {"ti=32,tj=32,block=8,order='ji'", "ti=16,tj=64,block=4,order='ij'"};
  for (int i = 0; i < 2; i++) {
    cm_work w = work_with("transpose", "M=64,N=64", cfgs[i], names, (double[]){3}, 1);
    assert_float_equal(w.bytes[1], 512.0 * LINE, 1e-6);
    assert_float_equal(w.mem_eff[1], 0.4, 1e-9);
    w = work_with("transpose", "M=64,N=64", cfgs[i], names, (double[]){1}, 1);
    assert_float_equal(w.mem_eff[1], 512.0 / (512 + 256), 1e-9);
  }
}

/* Streamed stores of a block of 8 rows with 6 write-combining buffers
** (wc_exp 4, nt_partial 3, nt_write 1), 4096 elements, 16 a line. 'ji'
** writes 8-element block rows that the next block of the 32-wide tile
** would complete: a run of 8 + 8 x (6/8)^4 = 10.53125 elements, a partial
** line costing 3. 'ij' writes one element into each of the 8 rows per
** step: 8 x (6/8)^4 = 2.53125. DRAM: in's 256 lines (cold) plus
** 4096 / run x 3 lines. With 8 buffers the block's rows stay: 'ji'
** whole lines (4096 / 16), 'ij' runs of 8 (partial). */
static void test_streamed_partial(void **state) {
  (void)state;
  const char *names[] = {"wc_buffers", "wc_exp", "nt_partial", "nt_write"};
  const struct { const char *cfg; double wc, lines; } cases[] = {
    {"ti=32,tj=32,block=8,order='ji',nt=True", 6, 4096 / 10.53125 * 3},
    {"ti=32,tj=32,block=8,order='ij',nt=True", 6, 4096 / 2.53125 * 3},
    {"ti=32,tj=32,block=8,order='ji',nt=True", 8, 4096 / 16.0},
    {"ti=32,tj=32,block=8,order='ij',nt=True", 8, 4096 / 8.0 * 3},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cm_work w = work_with("transpose", "M=64,N=64", cases[i].cfg, names,
                          (double[]){cases[i].wc, 4, 3, 1}, 4);
    assert_float_equal(w.bytes[3] / LINE, 256 + cases[i].lines, 1e-6);
  }
}

/* The row's only q block (Q = 26 < QB = 32) has constant bounds once the
** micro-kernel is inlined, and R = S = 1 leaves c the innermost
** reduction loop (one trip here): two rows of three ymm FMAs and a pair
** in an xmm (GCC 12, -march=sapphirerapids: 256-bit vectors), 8 FMA
** instructions for 52 useful lanes of 8 x 16: lanes 0.40625; per step 4
** vector loads and 2 broadcasts, no spills, 8 + 4 + 2 + 3 + (3.5 x 2 +
** 3) / 1 = 27 instructions: 27 / 6 = 4.5 cycles against the FMA ports'
** 4: issue 8/9; latency 1 (4.5 >= the 4 cycles of one FMA). */
static void test_known_edge(void **state) {
  (void)state;
  cm_work w = work_with("conv2d", "N=1,H=1,W=26,C=1,K=2,R=1,S=1", "kb=2,qb=32", NULL, NULL, 0);
  assert_float_equal(w.eff[0], 52.0 / 128, 1e-12);
  assert_float_equal(w.eff[1], 1, 1e-12);
  assert_float_equal(w.eff[2], 8.0 / 9, 1e-12);
}

/* A full 16 x 16 block (issue 21's form 3): GCC's vectors are 8 lanes
** (vec_lanes), so a row takes 2 ymm FMAs: 32 FMAs for 256 lanes of 32 x
** 16, lanes 0.5 (the old form counted one zmm a row, lanes 1). 32
** accumulators, 2 input vectors and a broadcast want 35 of 32
** registers: 3 accumulators spill (a load and a store a step each); 16
** rows > gpr_rows 12 reload their filter pointers. Per step: loads 2 + 16
** + 16 + 3 = 37, stores 3, instructions 32 + 2 + 16 + 16 + 3 + 3 + (3.5 x
** 16 + 3) / 3 (crs: the s loop's 3 trips share the rows' set-up) =
** 91.67: cycles max(16, 37 / 3, 3, 91.67 / 6) = 16, the FMA ports':
** issue 1, latency 1. L1 bytes: 9 steps x (4 x (16 + 16 + 8 x 3) + 8 x 16
** + 2 x 4 x 8 x 3) = 4896, and the 256 accumulators stored once (x 4 x
** store_slots 2) = 2048. */
static void test_full_block(void **state) {
  (void)state;
  cm_work w = work_with("conv2d", "N=1,H=3,W=18,C=1,K=16,R=3,S=3", "kb=16,qb=16,kt=16", NULL,
                        NULL, 0);
  assert_float_equal(w.eff[0], 0.5, 1e-12);
  assert_float_equal(w.eff[1], 1, 1e-12);
  assert_float_equal(w.eff[2], 1, 1e-12);
  assert_float_equal(w.bytes[0], 4896 + 2048, 1e-9);
}

/* The same constant-bound block with 'crs' and R x S = 9: the r and s
** loops are unrolled into the innermost loop and GCC compiles the block
** as an edge (accumulators in memory, edge_insns 10 shuffles an FMA):
** per step 8 FMAs, loads 4 + 2 + 8, stores 8, instructions 8 + 4 + 2 + 8
** + 3 + (3.5 x 2 + 3) / 3 + 10 x 8 = 108.33: 18.06 cycles, issue 4 /
** 18.06. With 'rsc' (c innermost, one trip) as test_known_edge: 4.5
** cycles, issue 8/9 -- 4.01 times faster; the old form ranked them
** equal. */
static void test_red_order(void **state) {
  (void)state;
  const char *set = "N=1,H=3,W=28,C=1,K=2,R=3,S=3";
  cm_work crs = work_with("conv2d", set, "kb=2,qb=32,red_order='crs'", NULL, NULL, 0);
  cm_work rsc = work_with("conv2d", set, "kb=2,qb=32,red_order='rsc'", NULL, NULL, 0);
  assert_float_equal(crs.eff[0], 52.0 / 128, 1e-12);
  assert_float_equal(crs.eff[2], 4 / (325.0 / 18), 1e-12);
  assert_float_equal(rsc.eff[2], 8.0 / 9, 1e-12);
  assert_float_equal(crs.eff[1] * rsc.eff[1], 1, 1e-12);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_flops),
    cmocka_unit_test(test_threads),
    cmocka_unit_test(test_compulsory),
    cmocka_unit_test(test_lru),
    cmocka_unit_test(test_streamed),
    cmocka_unit_test(test_sampled),
    cmocka_unit_test(test_cachegrind),
    cmocka_unit_test(test_store_fills),
    cmocka_unit_test(test_streamed_partial),
    cmocka_unit_test(test_known_edge),
    cmocka_unit_test(test_full_block),
    cmocka_unit_test(test_red_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

