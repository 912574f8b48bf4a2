/*
** ts_bayes.c -- Bayesian optimisation: a Gaussian-process surrogate of the
** standardised log time over configurations mapped into [0,1]^d (each
** parameter's value index divided by its number of values minus one;
** single-valued parameters are dropped), with a Matern 5/2 kernel whose
** lengthscales (one per dimension) and noise are chosen by maximising the
** marginal likelihood over a small grid, refitted on a geometric schedule.
** Failed configurations are not given a time: a kernel-smoothed
** Beta-Bernoulli classifier over every observation gives P(feasible), and
** the next configuration maximises expected improvement x P(feasible) over
** candidates (never a list of the space). Three kinds of step: global
** (a few hundred random unknown configurations, the Hamming neighbours of
** the best ones found so far, and random 1-3-parameter mutations of the
** best ten); every BO_LOCAL-th step local (only the unevaluated Hamming
** neighbours of the incumbent, or of the next best when those are spent:
** a trust region of radius one, which polishes the incumbent the way a
** local search would); and, after BO_STAG evaluations without improvement,
** one exploring step over random candidates only (so that a run whose
** surrogate has settled on a wrong region looks elsewhere). The initial
** random design is small (d/2 + 2), since the score of a run counts every
** evaluation of the budget. The Cholesky
** factor grows by one row per observation (O(m^2)); the variance, the
** costly part of a prediction, is computed only for candidates whose
** upper bound on the acquisition can still beat the best one seen.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_erf.h>

#include "tu.h"

#define BO_NRAND 300      /* random unknown candidates per step */
#define BO_NTOP 3         /* Hamming neighbours of this many best configs */
#define BO_FITCAP 160     /* most points the hyperparameter search fits on */
#define BO_TRAINCAP 1000  /* most points in the time GP (best half + recent) */
#define BO_JITTER 1e-8
#define BO_LOO 400        /* observations the classifier is fitted on */
#define BO_PMIN 0.5       /* candidates less likely feasible are skipped */
#define BO_NEAR 8         /* points of the cheap variance bound */
#define BO_NMUT 200       /* mutations of the best configurations per step */
#define BO_MUTR 3         /* most parameters a mutation changes */
#define BO_NPAR 10        /* parents of mutations; incumbents of local steps */
#define BO_LOCAL 3        /* every this many model steps is a local one */
#define BO_STAG 15        /* evaluations without improvement before exploring */

/* Grids of the marginal-likelihood search: lengthscales per unit of the
** normalised index, noise as a fraction of the signal variance. */
static const double ell_grid[] = {0.05, 0.09, 0.15, 0.25, 0.4, 0.65, 1.0, 1.6, 2.6};
static const double noise_grid[] = {1e-5, 1e-3, 1e-2, 0.05, 0.2};
static const double ard_mult[] = {0.4, 2.5, 1e3};   /* 1e3: dimension ignored */
static const double fell_grid[] = {0.05, 0.1, 0.2, 0.35, 0.6, 1.0, 2.0};
static const double fbeta_grid[] = {0.25, 0.5, 1, 2, 4, 8};

/* ---- The Gaussian process ---- */

typedef struct gp {
  int d, m, cap;     /* input dimensions, training points, capacity */
  double *x;         /* cap * d inputs */
  double *y;         /* cap raw targets */
  double *w;         /* d inverse squared lengthscales */
  double noise;      /* noise variance / signal variance */
  double *L;         /* cap * cap, leading m x m lower: chol(C + noise I) */
  double *alpha;     /* (C + noise I)^-1 ys */
  double *ys;        /* standardised targets */
  double mean, sd;   /* y = mean + sd * ys */
  double amp;        /* signal variance of ys (profile maximum likelihood) */
  double ymin;       /* smallest ys */
  int ok;            /* L factors the current points and hyperparameters */
} gp;

/* The Matern 5/2 correlation of a and b under inverse squared
** lengthscales w. */
static double matern(const double *a, const double *b, const double *w, int d) {
  double r2 = 0;
  for (int i = 0; i < d; i++) {
    double t = a[i] - b[i];
    r2 += w[i] * t * t;
  }
  double r = sqrt(5.0 * r2);
  return (1.0 + r + r * r / 3.0) * exp(-r);
}

static void gp_init(gp *g, int d) {
  memset(g, 0, sizeof *g);
  g->d = d;
  g->w = rt_malloc((size_t)(d ? d : 1) * sizeof *g->w);
  for (int i = 0; i < d; i++) g->w[i] = 1.0 / (0.3 * 0.3);
  g->noise = 1e-3;
  g->sd = 1;
  g->amp = 1;
}

static void gp_free(gp *g) {
  free(g->x);
  free(g->y);
  free(g->w);
  free(g->L);
  free(g->alpha);
  free(g->ys);
}

/* Room for at least n points (keeps the factor's rows). */
static void gp_reserve(gp *g, int n) {
  if (n <= g->cap) return;
  int cap = g->cap ? g->cap : 32;
  while (cap < n) cap *= 2;
  double *L = rt_calloc((size_t)cap * cap, sizeof *L);
  for (int i = 0; i < g->m; i++) memcpy(L + (size_t)i * cap, g->L + (size_t)i * g->cap, (size_t)(i + 1) * sizeof *L);
  free(g->L);
  g->L = L;
  g->x = rt_realloc(g->x, (size_t)cap * (g->d ? g->d : 1) * sizeof *g->x);
  g->y = rt_realloc(g->y, (size_t)cap * sizeof *g->y);
  g->alpha = rt_realloc(g->alpha, (size_t)cap * sizeof *g->alpha);
  g->ys = rt_realloc(g->ys, (size_t)cap * sizeof *g->ys);
  g->cap = cap;
}

/* Factor C + noise I of the current points from scratch. 0, or -1 when it
** is not positive definite (g->ok is then 0). */
static int gp_factor(gp *g) {
  int m = g->m, d = g->d;
  g->ok = 0;
  if (!m) return g->ok = 1, 0;
  for (int i = 0; i < m; i++) {
    double *row = g->L + (size_t)i * g->cap;
    for (int j = 0; j < i; j++) row[j] = matern(g->x + (size_t)i * d, g->x + (size_t)j * d, g->w, d);
    row[i] = 1.0 + g->noise + BO_JITTER;
  }
  gsl_matrix_view A = gsl_matrix_view_array_with_tda(g->L, (size_t)m, (size_t)m, (size_t)g->cap);
  gsl_error_handler_t *old = gsl_set_error_handler_off();
  int rc = gsl_linalg_cholesky_decomp1(&A.matrix);
  gsl_set_error_handler(old);
  if (rc) return -1;
  g->ok = 1;
  return 0;
}

/* Solve L z = v in place (lower, leading m x m). */
static void gp_lsolve(const gp *g, int m, double *v, CBLAS_TRANSPOSE_t tr) {
  gsl_matrix_const_view A = gsl_matrix_const_view_array_with_tda(g->L, (size_t)m, (size_t)m, (size_t)g->cap);
  gsl_vector_view z = gsl_vector_view_array(v, (size_t)m);
  gsl_blas_dtrsv(CblasLower, tr, CblasNonUnit, &A.matrix, &z.vector);
}

/* Add a point; extends the factor by one row when it is current. */
static void gp_add(gp *g, const double *x, double y) {
  gp_reserve(g, g->m + 1);
  int m = g->m, d = g->d;
  memcpy(g->x + (size_t)m * d, x, (size_t)d * sizeof *x);
  g->y[m] = y;
  g->m = m + 1;
  if (!g->ok) return;
  double *row = g->L + (size_t)m * g->cap;
  for (int j = 0; j < m; j++) row[j] = matern(x, g->x + (size_t)j * d, g->w, d);
  if (m) gp_lsolve(g, m, row, CblasNoTrans);
  double s = 1.0 + g->noise + BO_JITTER;
  for (int j = 0; j < m; j++) s -= row[j] * row[j];
  if (s < 1e-12) {   /* numerically dependent: refactor from scratch */
    gp_factor(g);
    return;
  }
  row[m] = sqrt(s);
}

/* Standardise the targets and solve for alpha (the factor must be current). */
static void gp_update(gp *g) {
  int m = g->m;
  double s = 0, s2 = 0;
  for (int i = 0; i < m; i++) s += g->y[i];
  g->mean = m ? s / m : 0;
  for (int i = 0; i < m; i++) s2 += (g->y[i] - g->mean) * (g->y[i] - g->mean);
  g->sd = m > 1 ? sqrt(s2 / (m - 1)) : 1;
  if (!(g->sd > 1e-12)) g->sd = 1;
  g->ymin = INFINITY;
  for (int i = 0; i < m; i++) {
    g->ys[i] = (g->y[i] - g->mean) / g->sd;
    g->alpha[i] = g->ys[i];
    if (g->ys[i] < g->ymin) g->ymin = g->ys[i];
  }
  if (!m) return;
  gp_lsolve(g, m, g->alpha, CblasNoTrans);
  double q = 0;
  for (int i = 0; i < m; i++) q += g->alpha[i] * g->alpha[i];
  g->amp = q / m > 1e-6 ? q / m : 1e-6;
  gp_lsolve(g, m, g->alpha, CblasTrans);
}

/* Profile log marginal likelihood of the standardised targets (after
** gp_factor and gp_update). */
static double gp_loglik(const gp *g) {
  double ld = 0;
  for (int i = 0; i < g->m; i++) ld += log(g->L[(size_t)i * g->cap + i]);
  return -0.5 * g->m * (log(2 * M_PI * g->amp) + 1.0) - ld;
}

/* Posterior mean of ys at x; k (m scratch) gets the correlations. */
static double gp_mean(const gp *g, const double *x, double *k) {
  double mu = 0;
  for (int i = 0; i < g->m; i++) {
    k[i] = matern(x, g->x + (size_t)i * g->d, g->w, g->d);
    mu += k[i] * g->alpha[i];
  }
  return mu;
}

/* Posterior variance of the latent ys at the point whose correlations are
** in k (overwritten). */
static double gp_var(const gp *g, double *k) {
  gp_lsolve(g, g->m, k, CblasNoTrans);
  double q = 0;
  for (int i = 0; i < g->m; i++) q += k[i] * k[i];
  double v = g->amp * (1.0 + BO_JITTER - q);
  return v > 1e-12 * g->amp ? v : 1e-12 * g->amp;
}

/* An upper bound of the posterior variance at the point whose correlations
** are in k: the variance given only the BO_NEAR most correlated training
** points (conditioning on more points never raises it). O(m + BO_NEAR^3). */
static double gp_var_bound(const gp *g, const double *k) {
  int s[BO_NEAR], ns = 0;
  for (int i = 0; i < g->m; i++) {   /* the largest k, by insertion */
    if (ns == BO_NEAR && k[i] <= k[s[ns - 1]]) continue;
    int j = ns < BO_NEAR ? ns++ : ns - 1;
    while (j > 0 && k[s[j - 1]] < k[i]) s[j] = s[j - 1], j--;
    s[j] = i;
  }
  double A[BO_NEAR * BO_NEAR], z[BO_NEAR], q = 0;
  for (int a = 0; a < ns; a++) {   /* Cholesky of A_SS, forward solve of k_S */
    for (int c = 0; c <= a; c++) {
      double v = c == a ? 1.0 + g->noise + BO_JITTER
                        : matern(g->x + (size_t)s[a] * g->d, g->x + (size_t)s[c] * g->d, g->w, g->d);
      for (int e = 0; e < c; e++) v -= A[a * BO_NEAR + e] * A[c * BO_NEAR + e];
      if (c == a) {
        if (!(v > 1e-12)) return g->amp;   /* no useful bound */
        A[a * BO_NEAR + a] = sqrt(v);
      } else {
        A[a * BO_NEAR + c] = v / A[c * BO_NEAR + c];
      }
    }
    double t = k[s[a]];
    for (int e = 0; e < a; e++) t -= A[a * BO_NEAR + e] * z[e];
    z[a] = t / A[a * BO_NEAR + a];
    q += z[a] * z[a];
  }
  double v = g->amp * (1.0 + BO_JITTER - q);
  return v > 1e-12 * g->amp ? v : 1e-12 * g->amp;
}

/* Set the hyperparameters and refactor, raising the noise until the
** factor exists. */
static void gp_set(gp *g, const double *w, double noise) {
  memcpy(g->w, w, (size_t)g->d * sizeof *w);
  g->noise = noise;
  while (gp_factor(g) && g->noise < 1) g->noise = g->noise * 10 + 1e-6;
  gp_update(g);
}

/* The log likelihood of hyperparameters (w, noise) on the points of s. */
static double gp_try(gp *s, const double *w, double noise) {
  memcpy(s->w, w, (size_t)s->d * sizeof *w);
  s->noise = noise;
  if (gp_factor(s)) return -INFINITY;
  gp_update(s);
  return gp_loglik(s);
}

/* Choose lengthscales and noise by maximum marginal likelihood: an
** isotropic grid, then one pass over the dimensions trying a shorter, a
** longer and an infinite lengthscale for each. Fits on at most BO_FITCAP
** points (the best half and a random rest), then refactors g on all. */
static void gp_fit(gp *g, const gsl_rng *rng) {
  int m = g->m, d = g->d, n = m < BO_FITCAP ? m : BO_FITCAP;
  if (m < 2 || d == 0) {
    gp_set(g, g->w, g->noise);
    return;
  }
  int *pick = rt_malloc((size_t)m * sizeof *pick);
  for (int i = 0; i < m; i++) pick[i] = i;
  if (n < m) {
    /* the n/2 best by y (partial selection), then a random rest */
    for (int i = 0; i < n / 2; i++) {
      int b = i;
      for (int j = i + 1; j < m; j++)
        if (g->y[pick[j]] < g->y[pick[b]]) b = j;
      int t = pick[i]; pick[i] = pick[b]; pick[b] = t;
    }
    for (int i = n / 2; i < n; i++) {
      int j = i + (int)gsl_rng_uniform_int(rng, (unsigned long)(m - i));
      int t = pick[i]; pick[i] = pick[j]; pick[j] = t;
    }
  }
  gp s;
  gp_init(&s, d);
  gp_reserve(&s, n);
  for (int i = 0; i < n; i++) {
    memcpy(s.x + (size_t)i * d, g->x + (size_t)pick[i] * d, (size_t)d * sizeof *s.x);
    s.y[i] = g->y[pick[i]];
  }
  s.m = n;
  double *w = rt_malloc((size_t)d * sizeof *w), *bw = rt_malloc((size_t)d * sizeof *bw);
  double best = -INFINITY, bnoise = g->noise;
  memcpy(bw, g->w, (size_t)d * sizeof *bw);
  for (size_t a = 0; a < sizeof ell_grid / sizeof *ell_grid; a++)
    for (size_t b = 0; b < sizeof noise_grid / sizeof *noise_grid; b++) {
      for (int i = 0; i < d; i++) w[i] = 1.0 / (ell_grid[a] * ell_grid[a]);
      double ll = gp_try(&s, w, noise_grid[b]);
      if (ll > best) {
        best = ll;
        memcpy(bw, w, (size_t)d * sizeof *bw);
        bnoise = noise_grid[b];
      }
    }
  for (int i = 0; i < d && d > 1; i++) {
    double w0 = bw[i], wbest = w0;
    memcpy(w, bw, (size_t)d * sizeof *w);
    for (size_t a = 0; a < sizeof ard_mult / sizeof *ard_mult; a++) {
      w[i] = w0 / (ard_mult[a] * ard_mult[a]);
      double ll = gp_try(&s, w, bnoise);
      if (ll > best) {
        best = ll;
        wbest = w[i];
      }
    }
    bw[i] = wbest;
  }
  gp_set(g, bw, bnoise);
  gp_free(&s);
  free(w);
  free(bw);
  free(pick);
}

/* Expected improvement below f of a normal(mu, sigma^2). */
static double ei(double f, double mu, double sigma) {
  double t = f - mu;
  if (!(sigma > 0)) return t > 0 ? t : 0;
  double z = t / sigma;
  return t * gsl_cdf_ugaussian_P(z) + sigma * gsl_ran_ugaussian_pdf(z);
}

/* log EI, accurate where EI underflows: EI = sigma h(z) with h(z) =
** z Phi(z) + phi(z); for z < 0, h(z) = phi(z) (1 - t / hazard(t)), t = -z,
** and for t > 40 the asymptotic series 1/t^2 - 3/t^4 + 15/t^6. */
static double log_ei(double f, double mu, double sigma) {
  double t0 = f - mu;
  if (!(sigma > 0)) return t0 > 0 ? log(t0) : -INFINITY;
  double z = t0 / sigma;
  if (z > -1) return log(ei(f, mu, sigma));
  double t = -z, lphi = -0.5 * z * z - 0.5 * log(2 * M_PI), r;
  if (t < 40) r = 1 - t / gsl_sf_hazard(t);
  else r = (1 - 3 / (t * t) + 15 / (t * t * t * t)) / (t * t);
  return log(sigma) + lphi + log(r);
}

/* ---- The strategy ---- */

typedef struct bo {
  const tu_ctx *ctx;
  sp_space *sp;
  int np, d, ninit;
  int *dim;           /* d: the parameter of each input dimension */
  double *scale;      /* d: 1 / (number of values - 1) */
  /* every observation */
  int n, cap, nok;
  int *cfg;           /* cap * np */
  double *x;          /* cap * d */
  double *ly;         /* log time (ok only) */
  unsigned char *ok;
  gp g;               /* the time GP over ok observations */
  int next_fit;       /* refit when nok reaches this */
  double *fw;         /* d: the classifier's inverse squared lengthscales */
  double fbeta;       /* the classifier's weight of evidence */
  double best;        /* fastest ok time so far */
  int since;          /* evaluations since it improved */
  int steps;          /* model steps taken (local ones are every BO_LOCAL-th) */
  /* scratch */
  int ccap;
  int *cand;          /* ccap * np */
  double *cx, *mu, *ub, *pf;
  int *order;
  double *k;          /* training-set sized */
} bo;

/* The inputs of cfg. */
static void bo_x(const bo *b, const int *cfg, double *x) {
  for (int i = 0; i < b->d; i++) x[i] = cfg[b->dim[i]] * b->scale[i];
}

static void *bo_create(const tu_ctx *ctx, rt_err *err) {
  (void)err;
  bo *b = rt_calloc(1, sizeof *b);
  b->ctx = ctx;
  b->sp = ctx->sp;
  b->np = sp_nparams(ctx->sp);
  b->dim = rt_malloc((size_t)(b->np ? b->np : 1) * sizeof *b->dim);
  b->scale = rt_malloc((size_t)(b->np ? b->np : 1) * sizeof *b->scale);
  for (int p = 0; p < b->np; p++)
    if (sp_nvalues(ctx->sp, p) > 1) {
      b->dim[b->d] = p;
      b->scale[b->d++] = 1.0 / (sp_nvalues(ctx->sp, p) - 1);
    }
  b->ninit = b->d / 2 + 2;
  b->best = INFINITY;
  if (ctx->budget > 0 && b->ninit > ctx->budget / 4 && ctx->budget / 4 >= 3) b->ninit = (int)(ctx->budget / 4);
  gp_init(&b->g, b->d);
  b->next_fit = 0;
  b->fw = rt_malloc((size_t)(b->d ? b->d : 1) * sizeof *b->fw);
  for (int i = 0; i < b->d; i++) b->fw[i] = 1.0 / (0.2 * 0.2);
  b->fbeta = 1;
  return b;
}

static void bo_destroy(void *st) {
  bo *b = st;
  if (!b) return;
  gp_free(&b->g);
  free(b->dim);
  free(b->scale);
  free(b->fw);
  free(b->cfg);
  free(b->x);
  free(b->ly);
  free(b->ok);
  free(b->cand);
  free(b->cx);
  free(b->mu);
  free(b->ub);
  free(b->pf);
  free(b->order);
  free(b->k);
  free(b);
}

/* The kernel-weighted evidence of feasibility at x: +k(x, x_i) for each ok
** observation, -k(x, x_i) for each failed one (i = skip left out). */
static double bo_evidence(const bo *b, const double *x, const double *w, int from, int skip) {
  double e = 0;
  for (int i = from; i < b->n; i++)
    if (i != skip) e += (b->ok[i] ? 1 : -1) * matern(x, b->x + (size_t)i * b->d, w, b->d);
  return e;
}

/* The log-odds of feasibility with nothing known: the overall rate. */
static double bo_prior_logit(const bo *b) { return log((b->nok + 1.0) / (b->n - b->nok + 1.0)); }

/* P(feasible) at x: a kernel logistic classifier, logit p = logit p0 +
** beta * evidence, so that p tends to the overall rate far from any
** observation and to 0 or 1 as same-label evidence accumulates. */
static double bo_pfeas(const bo *b, const double *x) {
  double s = bo_prior_logit(b) + b->fbeta * bo_evidence(b, x, b->fw, 0, -1);
  return 1.0 / (1.0 + exp(-s));
}

/* The leave-one-out log likelihood of the classifier with lengthscales w
** over observations from..n-1, at its best beta (into *beta). */
static double bo_loo(const bo *b, const double *w, int from, double *e, double *beta) {
  double best = -INFINITY, l0 = bo_prior_logit(b);
  for (int i = from; i < b->n; i++) e[i] = bo_evidence(b, b->x + (size_t)i * b->d, w, from, i);
  for (size_t c = 0; c < sizeof fbeta_grid / sizeof *fbeta_grid; c++) {
    double ll = 0;
    for (int i = from; i < b->n; i++) {
      double s = (l0 + fbeta_grid[c] * e[i]) * (b->ok[i] ? 1 : -1);
      ll -= s > 0 ? log1p(exp(-s)) : -s + log1p(exp(s));   /* log sigmoid(s) */
    }
    if (ll > best) {
      best = ll;
      *beta = fbeta_grid[c];
    }
  }
  return best;
}

/* Choose the classifier's lengthscales and beta by leave-one-out log
** likelihood over the last BO_LOO observations: an isotropic grid, then
** one pass over the dimensions as in gp_fit. */
static void bo_fit_feas(bo *b) {
  if (b->nok == b->n) return;
  int from = b->n > BO_LOO ? b->n - BO_LOO : 0, d = b->d;
  double *w = rt_malloc((size_t)(d ? d : 1) * sizeof *w), *e = rt_malloc((size_t)b->n * sizeof *e);
  double best = -INFINITY, beta;
  for (size_t a = 0; a < sizeof fell_grid / sizeof *fell_grid; a++) {
    for (int t = 0; t < d; t++) w[t] = 1.0 / (fell_grid[a] * fell_grid[a]);
    double ll = bo_loo(b, w, from, e, &beta);
    if (ll > best) {
      best = ll;
      memcpy(b->fw, w, (size_t)d * sizeof *w);
      b->fbeta = beta;
    }
  }
  for (int i = 0; i < d && d > 1; i++) {
    memcpy(w, b->fw, (size_t)d * sizeof *w);
    double w0 = w[i];
    for (size_t a = 0; a < sizeof ard_mult / sizeof *ard_mult; a++) {
      w[i] = w0 / (ard_mult[a] * ard_mult[a]);
      double ll = bo_loo(b, w, from, e, &beta);
      if (ll > best) {
        best = ll;
        b->fw[i] = w[i];
        b->fbeta = beta;
      }
    }
  }
  free(w);
  free(e);
}

/* Rebuild the time GP's training set when it is full: the best half of the
** ok observations and the most recent ones. */
static void bo_trim(bo *b) {
  int keep = BO_TRAINCAP / 2, m = 0;
  int *idx = rt_malloc((size_t)b->n * sizeof *idx);
  unsigned char *in = rt_calloc((size_t)b->n, 1);
  for (int i = 0; i < b->n; i++)
    if (b->ok[i]) idx[m++] = i;
  for (int i = 0; i < keep && i < m; i++) {   /* partial selection of the best */
    int bi = i;
    for (int j = i + 1; j < m; j++)
      if (b->ly[idx[j]] < b->ly[idx[bi]]) bi = j;
    int t = idx[i]; idx[i] = idx[bi]; idx[bi] = t;
    in[idx[i]] = 1;
  }
  int room = BO_TRAINCAP - (keep < m ? keep : m);
  for (int i = b->n - 1; i >= 0 && room > 0; i--)
    if (b->ok[i] && !in[i]) in[i] = 1, room--;
  b->g.m = 0;
  b->g.ok = 0;
  for (int i = 0; i < b->n; i++)
    if (in[i]) gp_add(&b->g, b->x + (size_t)i * b->d, b->ly[i]);
  free(idx);
  free(in);
}

static void bo_observe(void *st, const int *cfg, const tu_obs *obs) {
  bo *b = st;
  if (b->n == b->cap) {
    b->cap = b->cap ? 2 * b->cap : 64;
    b->cfg = rt_realloc(b->cfg, (size_t)b->cap * b->np * sizeof *b->cfg);
    b->x = rt_realloc(b->x, (size_t)b->cap * (b->d ? b->d : 1) * sizeof *b->x);
    b->ly = rt_realloc(b->ly, (size_t)b->cap * sizeof *b->ly);
    b->ok = rt_realloc(b->ok, (size_t)b->cap);
  }
  int i = b->n++;
  memcpy(b->cfg + (size_t)i * b->np, cfg, (size_t)b->np * sizeof *cfg);
  bo_x(b, cfg, b->x + (size_t)i * b->d);
  b->ok[i] = obs->ok != 0;
  b->ly[i] = obs->ok ? log(obs->value > 1e-300 ? obs->value : 1e-300) : NAN;
  b->since++;
  if (obs->ok && obs->value < b->best) b->best = obs->value, b->since = 0;
  if (obs->ok) {
    b->nok++;
    if (b->g.m >= BO_TRAINCAP) {
      bo_trim(b);
      b->next_fit = 0;   /* refit (and refactor) at the next proposal */
    } else {
      gp_add(&b->g, b->x + (size_t)i * b->d, b->ly[i]);
    }
  }
}

/* Add cfg to the candidates unless known to the run or already there. */
static void bo_cand_add(bo *b, tu_cfgmap *seen, const int *cfg, int *nc) {
  int added;
  tu_cfgmap_put(seen, cfg, &added);
  if (!added || b->ctx->known(b->ctx->run, cfg, NULL)) return;
  if (*nc == b->ccap) {
    b->ccap = b->ccap ? 2 * b->ccap : 512;
    b->cand = rt_realloc(b->cand, (size_t)b->ccap * b->np * sizeof *b->cand);
    b->cx = rt_realloc(b->cx, (size_t)b->ccap * (b->d ? b->d : 1) * sizeof *b->cx);
    b->mu = rt_realloc(b->mu, (size_t)b->ccap * sizeof *b->mu);
    b->ub = rt_realloc(b->ub, (size_t)b->ccap * sizeof *b->ub);
    b->pf = rt_realloc(b->pf, (size_t)b->ccap * sizeof *b->pf);
    b->order = rt_realloc(b->order, (size_t)b->ccap * sizeof *b->order);
  }
  memcpy(b->cand + (size_t)*nc * b->np, cfg, (size_t)b->np * sizeof *cfg);
  bo_x(b, cfg, b->cx + (size_t)*nc * b->d);
  (*nc)++;
}

/* The kinds of proposal step (see the file comment). */
enum { BO_GLOBAL, BO_EXPLORE, BO_LOCALSTEP };

/* Candidates of a step of kind `kind`: global, the Hamming neighbours of
** the BO_NTOP best observations, BO_NMUT mutations of the BO_NPAR best and
** BO_NRAND random unknown configurations; exploring, only the random ones;
** local, the unknown Hamming neighbours of the best observation that has
** any (among the BO_NPAR best; none: a global step). Returns their number. */
static int bo_candidates(bo *b, int kind) {
  tu_cfgmap seen;
  tu_cfgmap_init(&seen, b->np);
  int nc = 0, top[BO_NPAR], ntop = 0;
  for (int t = 0; t < BO_NPAR && kind != BO_EXPLORE; t++) {   /* the best, in order */
    int bi = -1;
    for (int i = 0; i < b->n; i++) {
      if (!b->ok[i]) continue;
      int taken = 0;
      for (int j = 0; j < ntop; j++) taken |= top[j] == i;
      if (!taken && (bi < 0 || b->ly[i] < b->ly[bi])) bi = i;
    }
    if (bi < 0) break;
    top[ntop++] = bi;
  }
  for (int t = 0; t < ntop && (t < BO_NTOP || kind == BO_LOCALSTEP); t++) {
    if (kind == BO_LOCALSTEP && nc > 0) break;
    int *nb = NULL, k = sp_neighbours(b->sp, b->cfg + (size_t)top[t] * b->np, SP_NB_HAMMING, &nb);
    for (int i = 0; i < k; i++) bo_cand_add(b, &seen, nb + (size_t)i * b->np, &nc);
    free(nb);
  }
  if (kind == BO_LOCALSTEP && nc > 0) {
    tu_cfgmap_free(&seen);
    return nc;
  }
  int *c = rt_malloc((size_t)(b->np ? b->np : 1) * sizeof *c);
  for (int i = 0; i < BO_NMUT && ntop > 0; i++) {
    /* a parent among the best, biased to the very best (rank ~ ntop u^2);
    ** 1..BO_MUTR parameters set to random values; a few tries at validity */
    double u = gsl_rng_uniform(b->ctx->rng);
    int par = top[(int)(ntop * u * u)];
    for (int tr = 0; tr < 8; tr++) {
      memcpy(c, b->cfg + (size_t)par * b->np, (size_t)b->np * sizeof *c);
      int r = 1 + (int)gsl_rng_uniform_int(b->ctx->rng, BO_MUTR);
      for (int j = 0; j < r; j++) {
        int p = b->dim[gsl_rng_uniform_int(b->ctx->rng, (unsigned long)b->d)];
        c[p] = (int)gsl_rng_uniform_int(b->ctx->rng, (unsigned long)sp_nvalues(b->sp, p));
      }
      if (sp_valid(b->sp, c, NULL)) {
        bo_cand_add(b, &seen, c, &nc);
        break;
      }
    }
  }
  for (int i = 0; i < BO_NRAND; i++)
    if (tu_random_unknown(b->ctx, c, 4)) bo_cand_add(b, &seen, c, &nc);
  free(c);
  tu_cfgmap_free(&seen);
  return nc;
}

/* Order candidate indices by upper bound, descending (ties: by index). */
static int by_ub(const void *pa, const void *pb, void *key) {
  const double *ub = key;
  int a = *(const int *)pa, c = *(const int *)pb;
  if (ub[a] != ub[c]) return ub[a] < ub[c] ? 1 : -1;
  return (a > c) - (a < c);
}

/* The candidate (of nc) maximising log EI x P(feasible), skipping those
** taken[] marks (NULL: none); -1 when every one is taken. */
static int bo_pick(bo *b, int nc, const char *taken) {
  b->k = rt_realloc(b->k, (size_t)(b->g.m ? b->g.m : 1) * sizeof *b->k);
  double f = b->g.ymin, pmax = 0;
  int feas = b->nok < b->n;
  for (int i = 0; i < nc; i++) {
    const double *x = b->cx + (size_t)i * b->d;
    b->mu[i] = gp_mean(&b->g, x, b->k);
    b->pf[i] = feas ? bo_pfeas(b, x) : 1.0;
    b->ub[i] = log_ei(f, b->mu[i], sqrt(gp_var_bound(&b->g, b->k))) + log(b->pf[i]);
    b->order[i] = i;
    if (b->pf[i] > pmax) pmax = b->pf[i];
  }
  /* the probabilistic constraint (Gelbart et al.): only candidates likely
  ** enough to be feasible, unless there are none */
  double pmin = pmax < BO_PMIN ? 0 : BO_PMIN;
  for (int i = 0; i < nc; i++)
    if (b->pf[i] < pmin || (taken && taken[i])) b->ub[i] = -INFINITY;
  qsort_r(b->order, (size_t)nc, sizeof *b->order, by_ub, b->ub);
  double best = -INFINITY;
  int bi = b->order[0];
  for (int r = 0; r < nc; r++) {
    int i = b->order[r];
    if (b->ub[i] <= best || b->ub[i] == -INFINITY) break;
    gp_mean(&b->g, b->cx + (size_t)i * b->d, b->k);
    double a = log_ei(f, b->mu[i], sqrt(gp_var(&b->g, b->k))) + log(b->pf[i]);
    if (a > best) {
      best = a;
      bi = i;
    }
  }
  if (taken && taken[bi]) {   /* every untaken one scored -inf: the first untaken */
    bi = -1;
    for (int r = 0; r < nc && bi < 0; r++)
      if (!taken[b->order[r]]) bi = b->order[r];
  }
  return bi;
}

static int bo_propose(void *st, int *cfgs, int max) {
  bo *b = st;
  if (max < 1) return 0;
  if (b->n < b->ninit || b->nok < 2 || b->d == 0) {   /* the initial design (a batch of them at once) */
    int k = 0, want = max < b->ctx->parallel ? max : b->ctx->parallel;
    do k += tu_random_unknown(b->ctx, cfgs + (size_t)k * b->np, 64);
    while (k > 0 && k < want && k < b->ninit - b->n);
    return k;
  }
  if (b->nok >= b->next_fit || !b->g.ok) {
    gp_fit(&b->g, b->ctx->rng);
    bo_fit_feas(b);
    b->next_fit = b->nok + (b->nok / 5 > 4 ? b->nok / 5 : 4);
  } else {
    gp_update(&b->g);
  }
  int kind = BO_GLOBAL;
  if (b->since >= BO_STAG) {
    kind = BO_EXPLORE;
    b->since = 0;
  } else if (++b->steps % BO_LOCAL == 0) {
    kind = BO_LOCALSTEP;
  }
  int nc = bo_candidates(b, kind);
  if (!nc) return 0;
  int bi = bo_pick(b, nc, NULL);
  memcpy(cfgs, b->cand + (size_t)bi * b->np, (size_t)b->np * sizeof *cfgs);
  /* Several evaluations at once (tu.h invariant 10): the constant liar
  ** (Ginsbourger et al. 2010, CL-min): each chosen configuration joins the
  ** surrogate with the best log time observed as its value, and the next
  ** is chosen by the same acquisition; the lies are dropped afterwards (the
  ** factor's leading block is the factor of the real points). */
  int want = max < b->ctx->parallel ? max : b->ctx->parallel, got = 1, m0 = b->g.m;
  if (want > 1 && b->g.ok && m0 > 0) {
    char *taken = rt_calloc((size_t)nc, 1);
    double lie = INFINITY;
    for (int i = 0; i < m0; i++)
      if (b->g.y[i] < lie) lie = b->g.y[i];
    for (taken[bi] = 1; got < want; got++) {
      gp_add(&b->g, b->cx + (size_t)bi * b->d, lie);
      gp_update(&b->g);
      if ((bi = bo_pick(b, nc, taken)) < 0) break;
      taken[bi] = 1;
      memcpy(cfgs + (size_t)got * b->np, b->cand + (size_t)bi * b->np, (size_t)b->np * sizeof *cfgs);
    }
    b->g.m = m0;
    gp_update(&b->g);
    free(taken);
  }
  return got;
}

/* Another's result: training data exactly as if observed (it counts
** towards the initial design, the refit schedule and the evaluations since
** the last improvement; nothing of a proposal is pending between calls). */
static void bo_inform(void *st, const int *cfg, const tu_obs *obs) {
  bo_observe(st, cfg, obs);
}

const tu_strategy ts_bayes = {
  .name = "bayes",
  .summary = "Bayesian optimisation: GP (Matern 5/2) on log time, EI x P(feasible)",
  .needs_model = 0,
  .create = bo_create,
  .propose = bo_propose,
  .observe = bo_observe,
  .destroy = bo_destroy,
  .inform = bo_inform,
};
