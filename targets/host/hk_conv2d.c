/*
** hk_conv2d.c -- "conv2d": direct 2D convolution (cross-correlation) in
** fp32, the compute-bound kernel next to gemm:
**   out[n][k][p][q] = sum_{c,r,s} in[n][c][p*stride+r-pad][q*stride+s-pad] * f[k][c][r][s]
** with P = (H+2*pad-R)/stride+1, Q = (W+2*pad-S)/stride+1 and zero padding.
** Layouts (problem variable `layout`):
**   'nchw': in N,C,H,W; filter K,C,R,S (KCRS); out N,K,P,Q.
**   'nhwc': in N,H,W,C; filter R,S,C,K (RSCK, TensorFlow's HWIO, so that
**           output channels, the contiguous dimension of out, are also
**           contiguous in the filter); out N,P,Q,K.
** Schedule: padding is materialised once per call into a static zero-
** bordered copy of the input; output tiles of KT channels x PT rows (all
** of Q) are independent and split across threads (collapse over n, k
** tiles, p tiles: 'n', 'nk', 'nkp'); inside a tile, channel tiles of CT
** accumulate into out; a KB x QB register block (micro-kernel with
** constant bounds; edges with min() bounds) sums over (c, r, s) in order
** 'crs' or 'rsc'; k blocks and rows are walked in order 'kp' or 'pk'.
**
** Tolerance: each output is a dot product of L = C*R*S terms; the
** reference sums in double, so the error is the schedule's fp32 summation,
** which behaves as in hk_reduction.c (statistical bound, see there):
** 32*FLT_EPSILON*sqrt(L), at least 4 ulps.
*/
#include <float.h>
#include <math.h>
#include <string.h>

#include "hk.h"

typedef struct conv_dims {
  int64_t n, h, w, c, k, r, s, stride, pad, p, q;
  int nhwc;
} conv_dims;

/* (in + 2*pad - f) / stride + 1, or -1 where that is no output size
** (stride < 1, in + 2*pad < f, overflow). */
static int64_t out_dim(int64_t in, int64_t pad, int64_t f, int64_t stride) {
  int64_t t;
  if (stride < 1 || __builtin_mul_overflow(pad, 2, &t) || __builtin_add_overflow(in, t, &t) ||
      __builtin_sub_overflow(t, f, &t) || t < 0)
    return -1;
  return t / stride + 1;
}

static conv_dims dims(const kn_problem *pb) {
  conv_dims d = {
    kn_int(pb, "N"), kn_int(pb, "H"), kn_int(pb, "W"), kn_int(pb, "C"),
    kn_int(pb, "K"), kn_int(pb, "R"), kn_int(pb, "S"), kn_int(pb, "stride"),
    kn_int(pb, "pad"), 0, 0, !strcmp(kn_str(pb, "layout"), "nhwc"),
  };
  d.p = out_dim(d.h, d.pad, d.r, d.stride);
  d.q = out_dim(d.w, d.pad, d.s, d.stride);
  return d;
}

static int cv_buffers(const kn_problem *pb, kn_buf *b) {
  conv_dims d = dims(pb);
  b[0] = (kn_buf){.name = "input", .n = kn_size_mul(kn_size_mul(d.n, d.c), kn_size_mul(d.h, d.w)), .out = 0};
  b[1] = (kn_buf){.name = "filter", .n = kn_size_mul(kn_size_mul(d.k, d.c), kn_size_mul(d.r, d.s)), .out = 0};
  b[2] = (kn_buf){.name = "out", .n = kn_size_mul(kn_size_mul(d.n, d.k), kn_size_mul(d.p, d.q)), .out = 1};
  return 3;
}

/* Index macros of the generated code, by layout: input (padded dims HP,
** WP), filter, output, and the accumulator block (vector dimension last). */
static const char *const layout_macros[2] = {
  "#define IN(n, c, h, w) xin[(((n) * C + (c)) * HP + (h)) * WP + (w)]\n"
  "#define FL(k, c, r, s) f[(((k) * C + (c)) * R + (r)) * S + (s)]\n"
  "#define OUT(n, k, p, q) y[(((n) * K + (k)) * P + (p)) * Q + (q)]\n"
  "#define ACC(kk, qq) acc[kk][qq]\n#define ACC_DIMS [KB][QB]\n",
  "#define IN(n, c, h, w) xin[(((n) * HP + (h)) * WP + (w)) * C + (c)]\n"
  "#define FL(k, c, r, s) f[(((r) * S + (s)) * C + (c)) * K + (k)]\n"
  "#define OUT(n, k, p, q) y[(((n) * P + (p)) * Q + (q)) * K + (k)]\n"
  "#define ACC(kk, qq) acc[qq][kk]\n#define ACC_DIMS [QB][KB]\n",
};

/* Emit loops over the dimensions named by the characters of order, from
** indentation ind: c (the channel tile), r, s, k (block), q (block). The
** register block's loops are unrolled completely (constant bounds in the
** full blocks) so that the accumulators live in registers: without that
** GCC keeps them in memory, 12x slower. */
static void nest(rt_str *s, const char *order, int ind) {
  static const struct { char dim; const char *v, *lo, *hi; int unroll; } loops[] = {
    {'c', "c", "c0", "c1", 0}, {'r', "r", "0", "R", 0}, {'s', "s", "0", "S", 0},
    {'k', "kk", "0", "kn", 1}, {'q', "qq", "0", "qn", 1},
  };
  for (int d = 0; order[d]; d++)
    for (size_t i = 0; i < sizeof loops / sizeof *loops; i++)
      if (loops[i].dim == order[d])
        rt_str_printf(s, "%s%*sfor (long %s = %s; %s < %s; %s++)\n",
                      loops[i].unroll ? "#pragma GCC unroll 64\n" : "", ind + 2 * d, "",
                      loops[i].v, loops[i].lo, loops[i].v, loops[i].hi, loops[i].v);
}

static char *cv_codegen(const kn_problem *pb, const sp_space *sp, const int *cfg) {
  conv_dims d = dims(pb);
  const char *par = kn_param_str(sp, cfg, "parallel");
  int kp = !strcmp(kn_param_str(sp, cfg, "loop_order"), "kp");
  rt_str s = {0};
  rt_str_printf(&s, "#include <string.h>\n");
  const struct { const char *name; int64_t v; } defs[] = {
    {"N", d.n}, {"H", d.h}, {"W", d.w}, {"C", d.c}, {"K", d.k}, {"R", d.r},
    {"S", d.s}, {"ST", d.stride}, {"PAD", d.pad}, {"P", d.p}, {"Q", d.q},
    {"HP", d.h + 2 * d.pad}, {"WP", d.w + 2 * d.pad},
    {"KB", kn_param_int(sp, cfg, "kb")}, {"QB", kn_param_int(sp, cfg, "qb")},
    {"CT", kn_param_int(sp, cfg, "ct")}, {"KT", kn_param_int(sp, cfg, "kt")},
    {"PT", kn_param_int(sp, cfg, "pt")},
  };
  for (size_t i = 0; i < sizeof defs / sizeof *defs; i++)
    rt_str_printf(&s, "#define %s %lldL\n", defs[i].name, (long long)defs[i].v);
  rt_str_printf(&s, "#define MIN(a, b) ((a) < (b) ? (a) : (b))\n%s", layout_macros[d.nhwc]);
  if (d.pad > 0)
    rt_str_printf(&s, "static float xpad[N * C * HP * WP];   /* borders stay 0 */\n");
  rt_str_printf(&s,
    "static inline __attribute__((always_inline)) void mk(\n"
    "    const float *restrict xin, const float *restrict f, float *restrict y, long n,\n"
    "    long k0, long kn, long p, long q0, long qn, long c0, long c1) {\n"
    "  float acc ACC_DIMS;\n");
  nest(&s, d.nhwc ? "qk" : "kq", 2);
  rt_str_printf(&s, "      ACC(kk, qq) = c0 == 0 ? 0.0f : OUT(n, k0 + kk, p, q0 + qq);\n");
  nest(&s, kn_param_str(sp, cfg, "red_order"), 2);
  nest(&s, d.nhwc ? "qk" : "kq", 8);
  rt_str_printf(&s,
    "            ACC(kk, qq) += IN(n, c, p * ST + r, (q0 + qq) * ST + s) * FL(k0 + kk, c, r, s);\n");
  nest(&s, d.nhwc ? "qk" : "kq", 2);
  rt_str_printf(&s, "      OUT(n, k0 + kk, p, q0 + qq) = ACC(kk, qq);\n}\n"
                "int rk_run(float *const *bufs) {\n"
                "  const float *f = bufs[1];\n  float *y = bufs[2];\n");
  if (d.pad > 0)
    rt_str_printf(&s, "  float *xin = xpad;\n%s",
      d.nhwc ? "  for (long n = 0; n < N; n++)\n    for (long h = 0; h < H; h++)\n"
               "      memcpy(&IN(n, 0, h + PAD, PAD), bufs[0] + (n * H + h) * W * C, W * C * sizeof *xin);\n"
             : "  for (long n = 0; n < N; n++)\n    for (long c = 0; c < C; c++)\n"
               "      for (long h = 0; h < H; h++)\n"
               "        memcpy(&IN(n, c, h + PAD, PAD), bufs[0] + ((n * C + c) * H + h) * W, W * sizeof *xin);\n");
  else
    rt_str_printf(&s, "  const float *xin = bufs[0];\n");
  rt_str_printf(&s,
    "#pragma omp parallel for num_threads(%lld) schedule(static) collapse(%d)\n"
    "  for (long n = 0; n < N; n++)\n"
    "    for (long kt = 0; kt < (K + KT - 1) / KT; kt++)\n"
    "      for (long pt = 0; pt < (P + PT - 1) / PT; pt++) {\n"
    "        long k1 = MIN(kt * KT + KT, K), p1 = MIN(pt * PT + PT, P);\n"
    "        for (long c0 = 0; c0 < C; c0 += CT) {\n"
    "          long c1 = MIN(c0 + CT, C);\n",
    (long long)kn_param_int(sp, cfg, "threads"), (int)strlen(par));
  const char *kloop = "for (long k0 = kt * KT; k0 < k1; k0 += KB)",
             *ploop = "for (long p = pt * PT; p < p1; p++)";
  rt_str_printf(&s,
    "          %s\n            %s {\n"
    "              long kn = MIN(KB, k1 - k0), q0 = 0;\n"
    "              if (kn == KB)\n"
    "                for (; q0 + QB <= Q; q0 += QB) mk(xin, f, y, n, k0, KB, p, q0, QB, c0, c1);\n"
    "              for (; q0 < Q; q0 += QB) mk(xin, f, y, n, k0, kn, p, q0, MIN(QB, Q - q0), c0, c1);\n"
    "            }\n        }\n      }\n  return 0;\n}\n",
    kp ? kloop : ploop, kp ? ploop : kloop);
  return s.s;
}

static void cv_reference(const kn_problem *pb, float *const *bufs) {
  conv_dims d = dims(pb);
  const float *x = bufs[0], *f = bufs[1];
  for (int64_t n = 0; n < d.n; n++)
    for (int64_t k = 0; k < d.k; k++)
      for (int64_t p = 0; p < d.p; p++)
        for (int64_t q = 0; q < d.q; q++) {
          double acc = 0;
          for (int64_t c = 0; c < d.c; c++)
            for (int64_t r = 0; r < d.r; r++)
              for (int64_t s = 0; s < d.s; s++) {
                int64_t h = p * d.stride + r - d.pad, w = q * d.stride + s - d.pad;
                if (h < 0 || h >= d.h || w < 0 || w >= d.w) continue;
                acc += (double)(d.nhwc ? x[((n * d.h + h) * d.w + w) * d.c + c]
                                       : x[((n * d.c + c) * d.h + h) * d.w + w]) *
                       (d.nhwc ? f[((r * d.s + s) * d.c + c) * d.k + k]
                               : f[((k * d.c + c) * d.r + r) * d.s + s]);
              }
          bufs[2][d.nhwc ? ((n * d.p + p) * d.q + q) * d.k + k
                         : ((n * d.k + k) * d.p + p) * d.q + q] = (float)acc;
        }
}

/* 2*N*K*P*Q*C*R*S: every multiply-add, padding zeros included. */
static double cv_flops(const kn_problem *pb) {
  conv_dims d = dims(pb);
  return 2.0 * (double)d.n * (double)d.k * (double)d.p * (double)d.q *
         (double)d.c * (double)d.r * (double)d.s;
}

/* Read input and filter once, write out once. */
static double cv_min_bytes(const kn_problem *pb) {
  conv_dims d = dims(pb);
  return 4.0 * ((double)d.n * d.c * d.h * d.w + (double)d.k * d.c * d.r * d.s +
                (double)d.n * d.k * d.p * d.q);
}

static double cv_tolerance(const kn_problem *pb) {
  conv_dims d = dims(pb);
  return FLT_EPSILON * fmax(4.0, 32.0 * sqrt((double)d.c * d.r * d.s));
}

const kn_kernel hk_conv2d = {
  .name = "conv2d",
  .summary = "direct 2D convolution, nchw (KCRS filter) or nhwc (RSCK): register "
             "block, channel tile, output tiles, reduction order, threads",
  .space = "targets/host/conv2d.json",
  .dtype = "f32",
  .sizes = "N H W C K R S stride pad",
  .buffers = cv_buffers,
  .codegen = cv_codegen,
  .reference = cv_reference,
  .flops = cv_flops,
  .min_bytes = cv_min_bytes,
  .tolerance = cv_tolerance,
  .baseline = NULL,
};
