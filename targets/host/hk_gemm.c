/*
** hk_gemm.c -- the host gemm kernel: C = A*B in float32, row-major, with
** A M x K, B K x N, C M x N. The code generator turns a schedule of
** targets/host/gemm.json into AVX-512 C in the style of BLIS/GotoBLAS:
** three cache-block loops (mc, nc, kc) in a chosen order, optional packing
** of A into mr-row panels and of B into nr-column panels, a macro-kernel
** walking the mr-row and nr-column panels of a block (either outer), and a
** register-blocked micro-kernel
** (mr rows x nr_vecs zmm vectors of accumulators, A broadcast, B loaded,
** k unrolled). Threads each take a contiguous slice of M or N (aligned to
** the register tile) and run the whole nest on it with private buffers.
**
** Edges: every block start is a multiple of the register tile, so the only
** partial tiles are the last row panel (M % mr rows) and the last column
** panel (N % nr columns); both get micro-kernels specialised at generation
** time (fewer rows; fewer vectors, the last one masked).
*/
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "hk.h"

#define VW 16   /* floats in a zmm register */

/* The schedule of one configuration, and the sizes it is generated for. */
typedef struct gemm_sched {
  long m, n, k;
  long mc, nc, kc, mr, nv, uk;    /* nv: vectors per register-tile row */
  const char *order;              /* cache loops outermost first: "nkm" */
  int pack_a, pack_b;
  int inner_m;                    /* macro-kernel: row panels outer */
  int threads;
  char par;                       /* 'm', 'n' or 0 (no split) */
} gemm_sched;

static int gemm_buffers(const kn_problem *pb, kn_buf *b) {
  int64_t m = kn_int(pb, "M"), n = kn_int(pb, "N"), k = kn_int(pb, "K");
  b[0] = (kn_buf){.name = "A", .n = kn_size_mul(m, k), .out = 0};
  b[1] = (kn_buf){.name = "B", .n = kn_size_mul(k, n), .out = 0};
  b[2] = (kn_buf){.name = "C", .n = kn_size_mul(m, n), .out = 1};
  return 3;
}

/* Emit micro-kernel uk_<rows>x<vecs>[m]: C[rows x vecs*16] (+)= a-panel *
** b-panel over kb steps of k. mask (0xffff: none, else suffix m) applies to
** the last vector's columns; a and b are packed panels or the matrices. */
static void gen_ukernel(rt_str *s, const gemm_sched *g, long rows, long vecs,
                        unsigned mask) {
  long ars = g->pack_a ? 1 : g->k, aks = g->pack_a ? g->mr : 1;
  long bks = g->pack_b ? g->nv * VW : g->n;
  int masked = mask != 0xffffu;
  rt_str_printf(s,
      "static inline __attribute__((always_inline)) void uk_%ldx%ld%s(long kb, "
      "const float *restrict a, const float *restrict b, float *restrict c, "
      "int first) {\n", rows, vecs, masked ? "m" : "");
  for (long i = 0; i < rows; i++)
    for (long j = 0; j < vecs; j++)
      rt_str_printf(s, "  _mm_prefetch((const char *)(c + %ld), _MM_HINT_T0);\n"
                    "  __m512 c%ld_%ld = _mm512_setzero_ps();\n",
                    i * g->n + j * VW, i, j);
  /* The main loop takes uk steps per trip; the tail loop (if any) one. */
  rt_str_printf(s, "  long k = 0, kmain = kb - kb %% %ld;\n", g->uk);
  for (int tail = 0; tail < 1 + (g->uk > 1); tail++) {
    long steps = tail ? 1 : g->uk;
    if (tail)
      rt_str_printf(s, "  for (; k < kb; k++) {\n");
    else
      rt_str_printf(s, "  for (; k < kmain; k += %ld) {\n", steps);
    for (long u = 0; u < steps; u++) {
      for (long j = 0; j < vecs; j++) {
        if (masked && !g->pack_b && j == vecs - 1)
          rt_str_printf(s, "    __m512 b%ld_%ld = _mm512_maskz_loadu_ps(0x%x, "
                        "b + (k + %ld) * %ld + %ld);\n", u, j, mask, u, bks,
                        j * VW);
        else
          rt_str_printf(s, "    __m512 b%ld_%ld = _mm512_loadu_ps(b + (k + %ld)"
                        " * %ld + %ld);\n", u, j, u, bks, j * VW);
      }
      for (long i = 0; i < rows; i++) {
        rt_str_printf(s, "    __m512 a%ld_%ld = _mm512_set1_ps(a[(k + %ld) * %ld"
                      " + %ld]);\n", u, i, u, aks, i * ars);
        for (long j = 0; j < vecs; j++)
          rt_str_printf(s, "    c%ld_%ld = _mm512_fmadd_ps(a%ld_%ld, b%ld_%ld, "
                        "c%ld_%ld);\n", i, j, u, i, u, j, i, j);
      }
    }
    rt_str_printf(s, "  }\n");
  }
  /* Store: the first k block overwrites C, the later ones add to it. */
  for (long i = 0; i < rows; i++)
    for (long j = 0; j < vecs; j++) {
      long off = i * g->n + j * VW;
      if (masked && j == vecs - 1)
        rt_str_printf(s, "  _mm512_mask_storeu_ps(c + %ld, 0x%x, first ? c%ld_%ld"
                      " : _mm512_add_ps(c%ld_%ld, _mm512_maskz_loadu_ps(0x%x, "
                      "c + %ld)));\n", off, mask, i, j, i, j, mask, off);
      else
        rt_str_printf(s, "  _mm512_storeu_ps(c + %ld, first ? c%ld_%ld : "
                      "_mm512_add_ps(c%ld_%ld, _mm512_loadu_ps(c + %ld)));\n",
                      off, i, j, i, j, off);
    }
  rt_str_printf(s, "}\n\n");
}

/* Emit pack_a (mb x kb block of A into mr-row panels, k-major inside a
** panel) and/or pack_b (kb x nb block of B into nr-column panels, zero
** padded to nr) as the schedule asks. */
static void gen_packers(rt_str *s, const gemm_sched *g) {
  if (g->pack_a)
    rt_str_printf(s,
        "static void pack_a(long mb, long kb, const float *restrict a, "
        "float *restrict pa) {\n"
        "  for (long ip = 0; ip < mb; ip += MR) {\n"
        "    long r = mb - ip < MR ? mb - ip : MR;\n"
        "    float *restrict d = pa + ip * kb;\n"
        "    for (long k = 0; k < kb; k++)\n"
        "      for (long i = 0; i < r; i++) d[k * MR + i] = a[(ip + i) * K + k];\n"
        "  }\n"
        "}\n\n");
  if (g->pack_b)
    rt_str_printf(s,
        "static void pack_b(long kb, long nb, const float *restrict b, "
        "float *restrict pb) {\n"
        "  for (long jp = 0; jp < nb; jp += NR) {\n"
        "    long w = nb - jp < NR ? nb - jp : NR;\n"
        "    float *restrict d = pb + jp * kb;\n"
        "    for (long k = 0; k < kb; k++) {\n"
        "      for (long j = 0; j < w; j++) d[k * NR + j] = b[k * N + jp + j];\n"
        "      for (long j = w; j < NR; j++) d[k * NR + j] = 0.0f;\n"
        "    }\n"
        "  }\n"
        "}\n\n");
}

/* Emit the macro-kernel: an mb x nb block of C from a (packed block or
** A + ic*K + pc) and b (packed block or B + pc*N + jc); row panels outer
** when g->inner_m (A's micro-panel stays in L1, B's block streams). */
static void gen_macro(rt_str *s, const gemm_sched *g) {
  long me = g->m % g->mr, ne = g->n % (g->nv * VW);
  long nve = (ne + VW - 1) / VW;
  const char *rloop = "for (long ir = 0; ir < mb; ir += MR)";
  const char *cloop = "for (long jr = 0; jr < nb; jr += NR)";
  rt_str_printf(s,
      "static void macro(long mb, long nb, long kb, const float *a, "
      "const float *b, float *c, int first) {\n"
      "  %s\n"
      "    %s {\n"
      "      const float *ap = a + ir * %s;\n"
      "      const float *bp = b + jr%s;\n"
      "      float *cp = c + ir * N + jr;\n",
      g->inner_m ? rloop : cloop, g->inner_m ? cloop : rloop,
      g->pack_a ? "kb" : "K", g->pack_b ? " * kb" : "");
  /* Up to four micro-kernels: full or edge rows x full or edge columns. */
  for (int er = 0; er <= (me > 0); er++) {
    if (me > 0)
      rt_str_printf(s, "      %s {\n", er ? "else" : "if (mb - ir >= MR)");
    for (int ec = 0; ec <= (ne > 0); ec++)
      rt_str_printf(s, "      %s uk_%ldx%ld%s(kb, ap, bp, cp, first);\n",
                    ne == 0 ? "" : ec ? "else" : "if (nb - jr >= NR)",
                    er ? me : g->mr, ec ? nve : g->nv, ec && ne % VW ? "m" : "");
    if (me > 0) rt_str_printf(s, "      }\n");
  }
  rt_str_printf(s, "    }\n}\n\n");
}

/* Emit rk_run: the thread slice, then the cache loops in g->order with
** each packing placed where both of its dimensions' loops are open. */
static void gen_run(rt_str *s, const gemm_sched *g) {
  long t = g->threads;
  if (g->pack_a)
    rt_str_printf(s, "static float pa_buf[%ld][(MC * KC + 15) / 16 * 16] "
                  "__attribute__((aligned(64)));\n", t);
  if (g->pack_b)
    rt_str_printf(s, "static float pb_buf[%ld][(NC * KC + 15) / 16 * 16] "
                  "__attribute__((aligned(64)));\n", t);
  rt_str_printf(s,
      "\nint rk_run(float *const *bufs) {\n"
      "  const float *A = bufs[0], *B = bufs[1];\n"
      "  float *C = bufs[2];\n");
  if (t > 1) {
    /* Slice of the split dimension: equal shares rounded up to the tile. */
    long tile = g->par == 'n' ? g->nv * VW : g->mr;
    long ext = g->par == 'n' ? g->n : g->m;
    long share = ((ext + t - 1) / t + tile - 1) / tile * tile;
    rt_str_printf(s,
        "#pragma omp parallel num_threads(%ld)\n  {\n"
        "  long t = omp_get_thread_num();\n"
        "  long lo = t * %ld, hi = lo + %ld < %ld ? lo + %ld : %ld;\n"
        "  long m0 = %s, m1 = %s, n0 = %s, n1 = %s;\n",
        t, share, share, ext, share, ext,
        g->par == 'm' ? "lo" : "0", g->par == 'm' ? "hi" : "M",
        g->par == 'n' ? "lo" : "0", g->par == 'n' ? "hi" : "N");
  } else {
    rt_str_printf(s, "  {\n  const long m0 = 0, m1 = M, n0 = 0, n1 = N;\n");
  }
  if (g->pack_a) rt_str_printf(s, "  float *pa = pa_buf[%s];\n", t > 1 ? "t" : "0");
  if (g->pack_b) rt_str_printf(s, "  float *pb = pb_buf[%s];\n", t > 1 ? "t" : "0");
  int open_m = 0, open_n = 0, open_k = 0;
  for (int l = 0; l < 3; l++) {
    char d = g->order[l];
    const char *ind = l == 0 ? "  " : l == 1 ? "    " : "      ";
    if (d == 'n')
      rt_str_printf(s, "%sfor (long jc = n0; jc < n1; jc += NC) {\n%s  long nb = "
                    "n1 - jc < NC ? n1 - jc : NC;\n", ind, ind);
    else if (d == 'm')
      rt_str_printf(s, "%sfor (long ic = m0; ic < m1; ic += MC) {\n%s  long mb = "
                    "m1 - ic < MC ? m1 - ic : MC;\n", ind, ind);
    else
      rt_str_printf(s, "%sfor (long pc = 0; pc < K; pc += KC) {\n%s  long kb = "
                    "K - pc < KC ? K - pc : KC;\n", ind, ind);
    int was_b = open_n && open_k, was_a = open_m && open_k;
    open_m |= d == 'm', open_n |= d == 'n', open_k |= d == 'k';
    if (g->pack_b && open_n && open_k && !was_b)
      rt_str_printf(s, "%s  pack_b(kb, nb, B + pc * N + jc, pb);\n", ind);
    if (g->pack_a && open_m && open_k && !was_a)
      rt_str_printf(s, "%s  pack_a(mb, kb, A + ic * K + pc, pa);\n", ind);
  }
  rt_str_printf(s, "        macro(mb, nb, kb, %s, %s, C + ic * N + jc, pc == 0);\n",
                g->pack_a ? "pa" : "A + ic * K + pc",
                g->pack_b ? "pb" : "B + pc * N + jc");
  rt_str_printf(s, "  }}}}\n  return 0;\n}\n");
}

static char *gemm_codegen(const kn_problem *pb, const sp_space *sp,
                          const int *cfg) {
  gemm_sched g = {
    .m = kn_int(pb, "M"), .n = kn_int(pb, "N"), .k = kn_int(pb, "K"),
    .mc = kn_param_int(sp, cfg, "mc"), .nc = kn_param_int(sp, cfg, "nc"),
    .kc = kn_param_int(sp, cfg, "kc"), .mr = kn_param_int(sp, cfg, "mr"),
    .nv = kn_param_int(sp, cfg, "nr_vecs"),
    .uk = kn_param_int(sp, cfg, "unroll_k"),
    .order = kn_param_str(sp, cfg, "loop_order"),
    .inner_m = !strcmp(kn_param_str(sp, cfg, "macro_order"), "mn"),
    .pack_a = (int)kn_param_int(sp, cfg, "pack_a"),
    .pack_b = (int)kn_param_int(sp, cfg, "pack_b"),
    .threads = (int)kn_param_int(sp, cfg, "threads"),
  };
  const char *par = kn_param_str(sp, cfg, "parallel_loop");
  g.par = g.threads > 1 && (*par == 'm' || *par == 'n') ? *par : 0;
  if (!g.par) g.threads = 1;
  rt_str s = {0};
  rt_str_printf(&s,
      "/* rooftune gemm M=%ld N=%ld K=%ld: mc=%ld nc=%ld kc=%ld mr=%ld "
      "nr_vecs=%ld unroll_k=%ld order=%s macro=%s pack_a=%d pack_b=%d "
      "threads=%d split=%c */\n"
      "#include <immintrin.h>\n%s"
      "#ifndef __AVX512F__\n#error \"this schedule needs AVX-512F\"\n#endif\n"
      "#define M %ldL\n#define N %ldL\n#define K %ldL\n"
      "#define MC %ldL\n#define NC %ldL\n#define KC %ldL\n"
      "#define MR %ldL\n#define NR %ldL\n\n",
      g.m, g.n, g.k, g.mc, g.nc, g.kc, g.mr, g.nv, g.uk, g.order,
      g.inner_m ? "mn" : "nm", g.pack_a,
      g.pack_b, g.threads, g.par ? g.par : '-',
      g.threads > 1 ? "#include <omp.h>\n" : "",
      g.m, g.n, g.k, g.mc, g.nc, g.kc, g.mr, g.nv * VW);
  long me = g.m % g.mr, ne = g.n % (g.nv * VW);
  unsigned emask = ne % VW ? (1u << (ne % VW)) - 1 : 0xffffu;
  for (int er = 0; er <= (me > 0); er++)
    for (int ec = 0; ec <= (ne > 0); ec++)
      gen_ukernel(&s, &g, er ? me : g.mr, ec ? (ne + VW - 1) / VW : g.nv,
                  ec ? emask : 0xffffu);
  gen_packers(&s, &g);
  gen_macro(&s, &g);
  gen_run(&s, &g);
  return s.s;
}

/* Triple loop (i, k, j) accumulating a row of C in double. */
static void gemm_reference(const kn_problem *pb, float *const *bufs) {
  int64_t m = kn_int(pb, "M"), n = kn_int(pb, "N"), k = kn_int(pb, "K");
  const float *a = bufs[0], *b = bufs[1];
  float *c = bufs[2];
  double *row = rt_malloc(sizeof *row * (size_t)n);
  for (int64_t i = 0; i < m; i++) {
    for (int64_t j = 0; j < n; j++) row[j] = 0;
    for (int64_t p = 0; p < k; p++) {
      double aip = a[i * k + p];
      for (int64_t j = 0; j < n; j++) row[j] += aip * b[p * n + j];
    }
    for (int64_t j = 0; j < n; j++) c[i * n + j] = (float)row[j];
  }
  free(row);
}

static double gemm_flops(const kn_problem *pb) {
  return 2.0 * kn_int(pb, "M") * kn_int(pb, "N") * kn_int(pb, "K");
}

static double gemm_min_bytes(const kn_problem *pb) {
  double m = kn_int(pb, "M"), n = kn_int(pb, "N"), k = kn_int(pb, "K");
  return 4.0 * (m * k + k * n + 2.0 * m * n);
}

/* A float32 dot product of length K summed in any blocked order has error
** at most about K*u*sum|a_k*b_k| (u = FLT_EPSILON/2); with inputs in [-1, 1]
** the error grows like sqrt(K)*u in practice, so 2*K*FLT_EPSILON relative to
** max|C| leaves a wide margin for rounding yet catches a lost k block. */
static double gemm_tolerance(const kn_problem *pb) {
  return 2.0 * (double)kn_int(pb, "K") * FLT_EPSILON;
}

static char *gemm_baseline(const kn_problem *pb, const char **ldflags) {
  rt_str s = {0};
  *ldflags = "-lopenblas";
  rt_str_printf(&s,
      "#include <cblas.h>\n\n"
      "int rk_run(float *const *bufs) {\n"
      "  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, %ld, %ld, %ld,"
      " 1.0f, bufs[0], %ld, bufs[1], %ld, 0.0f, bufs[2], %ld);\n"
      "  return 0;\n}\n",
      (long)kn_int(pb, "M"), (long)kn_int(pb, "N"), (long)kn_int(pb, "K"),
      (long)kn_int(pb, "K"), (long)kn_int(pb, "N"), (long)kn_int(pb, "N"));
  return s.s;
}

const kn_kernel hk_gemm = {
  .name = "gemm",
  .summary = "C = A*B, float32 row-major; cache, register and thread tiling",
  .space = "targets/host/gemm.json",
  .dtype = "f32",
  .sizes = "M N K",
  .buffers = gemm_buffers,
  .codegen = gemm_codegen,
  .reference = gemm_reference,
  .flops = gemm_flops,
  .min_bytes = gemm_min_bytes,
  .tolerance = gemm_tolerance,
  .baseline = gemm_baseline,
};
