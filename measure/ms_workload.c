/*
** ms_workload.c -- workloads (the data every candidate of one problem
** runs on), verification, and the once-computed reference outputs of
** kernels whose reference is NULL (ms_backend.h).
**
** A workload is made only after its sizes passed ms_workload_check (every
** size variable of the kernel an integer in [0, KN_SIZE_MAX], the buffers'
** shapes consistent with their kinds, their sizes computed without
** overflow, twice their bytes within ms_mem_limit, every raw file of the
** size its buffer needs). Its buffers are typed (kn_buf.elem) and filled
** as kn_buf.fill says (kn.h): KN_FILL_RANDOM with seed 0 draws from the
** harness's one stream (GSL mt19937 seeded 42, shared by the buffers in
** order: every built-in kernel's float32 inputs uniform in [-1, 1), as
** before types existed), a nonzero seed from a stream of its own;
** KN_FILL_CONSTANT and KN_FILL_FILE as they say. A value converted to an
** integer type is truncated toward zero and clamped to the type's range;
** f16 is rounded to nearest even. The reference outputs are the given
** ones (has_ref), the host reference's (k->reference run on a copy of the
** inputs, plain outputs zeroed first, inout outputs at their initial
** contents), or left NULL for the backend (ms__ref_once).
*/
#include "ms.h"
#include "ms_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

/* ---- element values ---- */

/* IEEE binary16 bits of f, rounded to nearest even (overflow: infinity). */
static uint16_t f16_from_float(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16) & 0x8000u, mant = x & 0x7fffffu;
  int exp = (int)((x >> 23) & 0xff);
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
  int e = exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {   /* a subnormal half (or zero): value / 2^-24 */
    if (e < -10) return (uint16_t)sign;
    mant |= 0x800000u;
    int shift = 14 - e;
    uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)e << 10) | (mant >> 13), rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;   /* a carry may make it infinity */
  return (uint16_t)(sign | h);
}

static double f16_value(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
  return h & 0x8000 ? -v : v;
}

/* Element j of data p of type e, as a double. */
static double elem_get(const void *p, kn_elem e, int64_t j) {
  switch (e) {
  case KN_F32: return ((const float *)p)[j];
  case KN_F64: return ((const double *)p)[j];
  case KN_F16: return f16_value(((const uint16_t *)p)[j]);
  case KN_I8: return ((const int8_t *)p)[j];
  case KN_U8: return ((const uint8_t *)p)[j];
  case KN_I16: return ((const int16_t *)p)[j];
  case KN_U16: return ((const uint16_t *)p)[j];
  case KN_I32: return ((const int32_t *)p)[j];
  case KN_U32: return ((const uint32_t *)p)[j];
  case KN_I64: return (double)((const int64_t *)p)[j];
  case KN_U64: return (double)((const uint64_t *)p)[j];
  }
  return 0;
}

/* v truncated toward zero and clamped to [lo, hi] (NaN: 0), as an integer
** of at most 64 bits; the C conversion of an out-of-range double is
** undefined, so the clamp comes first. */
static int64_t clamp_int(double v, double lo, double hi) {
  if (v != v) return 0;
  v = trunc(v);
  if (v <= lo) v = lo;
  if (v >= hi) v = hi;
  if (v >= 9223372036854775808.0) return INT64_MAX;
  return (int64_t)v;
}

static uint64_t clamp_u64(double v) {
  if (v != v || v <= 0) return 0;
  if (v >= 18446744073709551616.0) return UINT64_MAX;
  return (uint64_t)trunc(v);
}

/* Store v into element j of data p of type e (the file comment's rule). */
static void elem_set(void *p, kn_elem e, int64_t j, double v) {
  switch (e) {
  case KN_F32: ((float *)p)[j] = (float)v; break;
  case KN_F64: ((double *)p)[j] = v; break;
  case KN_F16: ((uint16_t *)p)[j] = f16_from_float((float)v); break;
  case KN_I8: ((int8_t *)p)[j] = (int8_t)clamp_int(v, INT8_MIN, INT8_MAX); break;
  case KN_U8: ((uint8_t *)p)[j] = (uint8_t)clamp_int(v, 0, UINT8_MAX); break;
  case KN_I16: ((int16_t *)p)[j] = (int16_t)clamp_int(v, INT16_MIN, INT16_MAX); break;
  case KN_U16: ((uint16_t *)p)[j] = (uint16_t)clamp_int(v, 0, UINT16_MAX); break;
  case KN_I32: ((int32_t *)p)[j] = (int32_t)clamp_int(v, INT32_MIN, INT32_MAX); break;
  case KN_U32: ((uint32_t *)p)[j] = (uint32_t)clamp_int(v, 0, UINT32_MAX); break;
  case KN_I64:
    ((int64_t *)p)[j] = v >= 9223372036854775808.0 ? INT64_MAX
                        : clamp_int(v, -9223372036854775808.0, 9223372036854775807.0);
    break;
  case KN_U64: ((uint64_t *)p)[j] = clamp_u64(v); break;
  }
}

/* Element j of p as text: integers exactly, floats with %.9g. */
static const char *elem_text(const void *p, kn_elem e, int64_t j, char *buf, size_t cap) {
  if (e == KN_I64) snprintf(buf, cap, "%lld", (long long)((const int64_t *)p)[j]);
  else if (e == KN_U64) snprintf(buf, cap, "%llu", (unsigned long long)((const uint64_t *)p)[j]);
  else if (kn_elem_float(e)) snprintf(buf, cap, "%.9g", elem_get(p, e, j));
  else snprintf(buf, cap, "%.0f", elem_get(p, e, j));
  return buf;
}

/* ---- sizes ---- */

size_t ms__buf_bytes(const kn_buf *b) {
  size_t es = kn_elem_size(b->elem);
  return (size_t)(b->n > 0 ? b->n : 1) * (es ? es : 1);
}

/* Whether buffer b has host data (everything but KN_LOCAL), and whether
** w->in holds some (inputs and inout outputs). */
static int has_data(const kn_buf *b) { return b->kind != KN_LOCAL; }
static int has_in(const kn_buf *b) { return has_data(b) && (!b->out || b->inout); }

/* "K1=V1 K2=V2" of the kernel's size variables, into buf. */
static const char *size_text(const kn_kernel *k, const kn_problem *pb, char *buf, size_t cap) {
  buf[0] = 0;
  for (const char *s = k->sizes ? k->sizes : ""; *s;) {
    size_t len = strcspn(s, " ");
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)(len < 31 ? len : 31), s);
    size_t at = strlen(buf);
    if (len) snprintf(buf + at, cap - at, "%s%s=%lld", at ? " " : "", name, (long long)kn_int(pb, name));
    s += len + (s[len] == ' ');
  }
  return buf;
}

/* Whether pb binds name to an integer (kn_int reads 0 otherwise). */
static int int_var(const kn_problem *pb, const char *name, int64_t *v) {
  for (int i = 0; i < pb->n; i++)
    if (!strcmp(pb->name[i], name)) {
      *v = pb->val[i].u.i;
      return pb->val[i].t == SX_INT;
    }
  return 0;
}

/* Size in bytes from the text of ROOFTUNE_MEM_LIMIT: digits, then K, M, G
** or T (powers of 1024, an optional trailing "B" or "iB"). 0: not one. */
static uint64_t parse_size(const char *s) {
  char *end;
  if (!s || *s < '0' || *s > '9') return 0;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno) return 0;
  int shift = 0;
  switch (*end == 0 ? 0 : end[0] & ~0x20) {
  case 0: break;
  case 'K': shift = 10; end++; break;
  case 'M': shift = 20; end++; break;
  case 'G': shift = 30; end++; break;
  case 'T': shift = 40; end++; break;
  default: return 0;
  }
  if (shift && (!strcmp(end, "iB") || !strcmp(end, "B"))) end += strlen(end);
  if (*end || v == 0 || v > (UINT64_MAX >> shift)) return 0;
  return (uint64_t)v << shift;
}

/* The memory limit of this process's cgroup (v2), or 0. */
static uint64_t cgroup_limit(void) {
  char line[512], path[700];
  FILE *f = fopen("/proc/self/cgroup", "re");
  uint64_t lim = 0;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "0::", 3)) {
      line[strcspn(line, "\n")] = 0;
      snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", line + 3);
      FILE *m = fopen(path, "re");
      unsigned long long v;
      if (m && fscanf(m, "%llu", &v) == 1) lim = v;
      if (m) fclose(m);
    }
  if (f) fclose(f);
  return lim;
}

uint64_t ms_mem_limit(const char **what, rt_err *err) {
  const char *e = getenv("ROOFTUNE_MEM_LIMIT");
  if (e && *e) {
    uint64_t v = parse_size(e);
    if (!v) rt_err_set(err, "ROOFTUNE_MEM_LIMIT: expected a size in bytes such as 16G, 512M or "
                       "1000000 (K, M, G, T: powers of 1024), got '%.100s'", e);
    if (what) *what = "ROOFTUNE_MEM_LIMIT";
    return v;
  }
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t phys = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : (uint64_t)1 << 32;
  uint64_t cg = cgroup_limit();
  if (what) *what = cg && cg < phys ? "3/4 of this cgroup's memory limit" : "3/4 of physical memory";
  return (cg && cg < phys ? cg : phys) / 4 * 3;
}

/* A raw file of buffer b (what: "file" or "reference file") must hold
** exactly its bytes. 0, or -1 with err. */
static int check_file(const kn_kernel *k, const kn_buf *b, const char *path, const char *what,
                      rt_err *err) {
  struct stat st;
  if (!path || !*path) {
    rt_err_set(err, "%s: argument %s: no %s given for its raw fill", k->name, b->name, what);
    return -1;
  }
  if (stat(path, &st) || !S_ISREG(st.st_mode)) {
    int e = errno;
    rt_err_set(err, "%s: argument %s: %s %s: %s", k->name, b->name, what, path,
               stat(path, &st) ? strerror(e) : "not a regular file");
    return -1;
  }
  rt_count want = (rt_count)b->n * kn_elem_size(b->elem);
  if ((rt_count)st.st_size != want) {
    char nb[48];
    rt_err_set(err, "%s: argument %s: %s %s holds %lld bytes, expected exactly %s (%lld "
               "elements of %s)", k->name, b->name, what, path, (long long)st.st_size,
               rt_count_str(want, nb), (long long)b->n, kn_elem_name(b->elem));
    return -1;
  }
  return 0;
}

/* Buffer b's kind, element type and flags agree (kn.h); 0 or -1 with err. */
static int check_shape(const kn_kernel *k, const kn_buf *b, rt_err *err) {
  const char *bad = NULL;
  if ((unsigned)b->elem > KN_U64) bad = "has an unknown element type";
  else if ((unsigned)b->kind > KN_LOCAL) bad = "has an unknown kind";
  else if (b->kind == KN_SCALAR && b->n != 1) bad = "is a scalar of more than one element";
  else if (b->kind != KN_VECTOR && b->out)
    bad = "is an output but not a vector (scalars, symbols and local memory cannot be)";
  else if (b->inout && !b->out) bad = "is read-write but not an output";
  else if (b->has_ref && !b->out) bad = "has a given reference but is not an output";
  else if ((unsigned)b->fill > KN_FILL_FILE || (b->has_ref && b->ref_fill == KN_FILL_RANDOM))
    bad = "has a fill the harness does not know (a given reference is a constant or a file)";
  if (bad) rt_err_set(err, "%s: argument %s %s", k->name, b->name, bad);
  return bad ? -1 : 0;
}

int ms_workload_check(const kn_kernel *k, const kn_problem *pb, rt_err *err) {
  char sizes[512];
  /* 1. every size variable an integer in [0, KN_SIZE_MAX] */
  for (const char *s = k->sizes ? k->sizes : ""; *s;) {
    size_t len = strcspn(s, " ");
    char name[32];
    int64_t v = 0;
    snprintf(name, sizeof name, "%.*s", (int)(len < 31 ? len : 31), s);
    s += len + (s[len] == ' ');
    if (!len) continue;
    if (!int_var(pb, name, &v)) {
      rt_err_set(err, "%s: problem variable %s must be an integer (it sets buffer sizes)", k->name,
                 name);
      return -1;
    }
    if (v < 0 || v > KN_SIZE_MAX) {
      rt_err_set(err, "%s: problem variable %s = %lld is out of range: a size must be in [0, "
                 "2^40 = %lld]", k->name, name, (long long)v, (long long)KN_SIZE_MAX);
      return -1;
    }
  }
  /* 2. buffers that exist and are what their kind says, 3. within the
  ** memory limit (exact in 128 bits; KN_LOCAL holds nothing here) */
  kn_buf b[KN_MAXBUF];
  int n = k->buffers(pb, b);
  if (n < 1 || n > KN_MAXBUF) {
    rt_err_set(err, "%s: internal error: %d buffers", k->name, n);
    return -1;
  }
  rt_count total = 0;
  for (int i = 0; i < n; i++) {
    if (b[i].n < 1) {
      rt_err_set(err, "%s: these sizes make no workload: buffer %s would hold %lld elements (%s)",
                 k->name, b[i].name, (long long)b[i].n, size_text(k, pb, sizes, sizeof sizes));
      return -1;
    }
    if (check_shape(k, &b[i], err)) return -1;
    if (has_data(&b[i])) total += (rt_count)b[i].n * kn_elem_size(b[i].elem);
  }
  const char *what;
  uint64_t limit = ms_mem_limit(&what, err);
  if (!limit) return -1;
  rt_count need = 2 * total;
  if (need > limit || total > SIZE_MAX / 4) {
    char detail[256] = "", nb[48];
    for (int i = 0; i < n; i++)
      snprintf(detail + strlen(detail), sizeof detail - strlen(detail), "%s%s %.3g %s",
               i ? ", " : "", b[i].name, (double)b[i].n, kn_elem_name(b[i].elem));
    rt_err_set(err, "%s: the workload is too large (%s): its buffers hold %s elements, and the "
               "harness needs twice their %s bytes (%.3g GiB), over the memory limit of %.3g GiB "
               "(%s; set ROOFTUNE_MEM_LIMIT, e.g. 64G, to change it)",
               k->name, size_text(k, pb, sizes, sizeof sizes), detail, rt_count_str(total, nb),
               (double)need / 1073741824.0, (double)limit / 1073741824.0, what);
    return -1;
  }
  /* 4. raw files of exactly the bytes their buffers need */
  for (int i = 0; i < n; i++) {
    if (has_in(&b[i]) && b[i].fill == KN_FILL_FILE && check_file(k, &b[i], b[i].file, "file", err))
      return -1;
    if (b[i].has_ref && b[i].ref_fill == KN_FILL_FILE &&
        check_file(k, &b[i], b[i].ref_file, "reference file", err))
      return -1;
  }
  return 0;
}

/* Read path's bytes (exactly `bytes`: ms_workload_check saw its size)
** into p; 0 or -1 with err. */
static int read_file(const kn_kernel *k, const kn_buf *b, const char *path, void *p, size_t bytes,
                     rt_err *err) {
  FILE *f = fopen(path, "rbe");
  if (!f) {
    rt_err_set(err, "%s: argument %s: %s: %s", k->name, b->name, path, strerror(errno));
    return -1;
  }
  size_t got = fread(p, 1, bytes, f);
  int more = got == bytes && fgetc(f) != EOF;
  fclose(f);
  if (got != bytes || more) {
    rt_err_set(err, "%s: argument %s: %s no longer holds exactly %zu bytes", k->name, b->name,
               path, bytes);
    return -1;
  }
  return 0;
}

/* Fill p (buffer b's data) as fill/value/file say (kn.h; shared: the
** harness's stream). 0 or -1 with err. */
static int fill_data(const kn_kernel *k, const kn_buf *b, kn_fill fill, double value,
                     const char *file, void *p, gsl_rng *shared, rt_err *err) {
  if (fill == KN_FILL_FILE) return read_file(k, b, file, p, ms__buf_bytes(b), err);
  if (fill == KN_FILL_CONSTANT) {
    for (int64_t j = 0; j < b->n; j++) elem_set(p, b->elem, j, value);
    return 0;
  }
  gsl_rng *own = NULL, *rng = shared;
  if (b->seed) {
    own = rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, (unsigned long)b->seed);
  }
  int fp = kn_elem_float(b->elem);
  double range = value != 0 ? value : fp ? 0 : 100;
  for (int64_t j = 0; j < b->n; j++) {
    double u = gsl_rng_uniform(rng);
    elem_set(p, b->elem, j, fp ? (value == 0 ? 2.0 * u - 1.0 : u * range) : floor(u * range));
  }
  if (own) gsl_rng_free(own);
  return 0;
}

ms_workload *ms_workload_new(const kn_kernel *k, const kn_problem *pb, rt_err *err) {
  if (ms_workload_check(k, pb, err)) return NULL;
  kn_buf b[KN_MAXBUF];
  int n = k->buffers(pb, b);
  ms_workload *w = rt_calloc(1, sizeof *w);
  w->k = k;
  w->pb = *pb;
  w->nbuf = n;
  memcpy(w->b, b, (size_t)n * sizeof *b);
  w->tol = k->tolerance ? k->tolerance(pb) : 0;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 42);
  int bad = 0;
  for (int i = 0; i < n && !bad; i++) {
    if (has_in(&b[i])) {   /* a scalar padded: a kernel may read a wider parameter */
      w->in[i] = rt_calloc(1, ms__buf_bytes(&b[i]) + (b[i].kind == KN_SCALAR ? 16 : 0));
      bad = fill_data(k, &b[i], b[i].fill, b[i].value, b[i].file, w->in[i], rng, err);
    }
    if (!bad && b[i].has_ref) {
      w->ref[i] = rt_malloc(ms__buf_bytes(&b[i]));
      bad = fill_data(k, &b[i], b[i].ref_fill, b[i].ref_value, b[i].ref_file, w->ref[i], NULL, err);
    }
  }
  gsl_rng_free(rng);
  if (bad) {
    ms_workload_free(w);
    return NULL;
  }
  /* The host reference, when the kernel has one: device kernels are
  ** verified against their device reference, and only small workloads
  ** also get the host's, which checks the device reference itself in
  ** every measurement (the backend's worker). */
  double bytes = 0;
  for (int i = 0; i < n; i++) bytes += (double)ms__buf_bytes(&b[i]);
  if (!k->reference ||
      (k->device_reference && (k->flops(pb) > MS_HOST_CHECK_FLOPS || bytes > 256e6)))
    return w;
  void *work[KN_MAXBUF] = {0};
  for (int i = 0; i < n; i++) {
    work[i] = rt_calloc(1, ms__buf_bytes(&b[i]));
    if (w->in[i]) memcpy(work[i], w->in[i], ms__buf_bytes(&b[i]));
  }
  k->reference(pb, (float *const *)work);
  for (int i = 0; i < n; i++) {
    if (b[i].out && !w->ref[i]) w->ref[i] = work[i];
    else free(work[i]);
  }
  return w;
}

void ms_workload_free(ms_workload *w) {
  if (!w) return;
  for (int i = 0; i < w->nbuf; i++) {
    free(w->in[i]);
    free(w->ref[i]);
  }
  free(w);
}

void ms__buf_init(const ms_workload *w, int i, void *dst) {
  const kn_buf *b = &w->b[i];
  size_t bytes = ms__buf_bytes(b);
  if (w->in[i]) {
    memcpy(dst, w->in[i], bytes);
  } else if (b->elem == KN_F32 || b->elem == KN_F64 || b->elem == KN_F16) {
    for (int64_t j = 0; j < b->n; j++) elem_set(dst, b->elem, j, b->elem == KN_F16 ? 65504 : MS_POISON);
  } else {
    memset(dst, 0xCA, bytes);
  }
}

int ms__changed_input(const ms_workload *w, void *const *bufs) {
  for (int i = 0; i < w->nbuf; i++)
    if (!w->b[i].out && w->in[i] && bufs[i] && memcmp(bufs[i], w->in[i], ms__buf_bytes(&w->b[i])))
      return i;
  return -1;
}

/* ---- verification ---- */

int ms__verify(const ms_workload *w, void *const *bufs, void *const *ref, double *max_err,
               char *msg, size_t cap) {
  const kn_kernel *k = w->k;
  double worst = 0;
  int failed = 0;
  for (int i = 0; i < w->nbuf; i++) {
    const kn_buf *b = &w->b[i];
    if (!b->out) continue;
    kn_elem e = b->elem;
    size_t es = kn_elem_size(e);
    int fp = kn_elem_float(e);
    double emax = 0, rmax = 0;
    int64_t at = 0, first = -1, nbad = 0;
    for (int64_t j = 0; j < b->n; j++) {
      double o = elem_get(bufs[i], e, j), r = elem_get(ref[i], e, j);
      double d = isfinite(o) ? fabs(o - r) : INFINITY;
      if (d != d) d = INFINITY;
      if (d > emax) emax = d, at = j;
      if (fabs(r) > rmax) rmax = fabs(r);
      if (k->tolerance) continue;
      int ok = fp ? (isfinite(o) && isfinite(r) ? fabs(o - r) <= k->atol + k->rtol * fabs(r)
                                                : o == r)   /* the same infinity; never NaN */
                  : !memcmp((const char *)bufs[i] + j * (int64_t)es,
                            (const char *)ref[i] + j * (int64_t)es, es);
      if (!ok && first < 0) first = j;
      nbad += !ok;
    }
    double rel = emax / fmax(rmax, 1e-30);
    if (rel != rel) rel = INFINITY;
    if (rel > worst) worst = rel;
    char ov[48], rv[48];
    if (k->tolerance && rel > w->tol) {
      if (!failed)
        snprintf(msg, cap, "output %s wrong: max|out-ref|/max|ref| = %.3g > tolerance %.3g (at "
                 "element %lld: %s, expected %s)", b->name, rel, w->tol, (long long)at,
                 elem_text(bufs[i], e, at, ov, sizeof ov), elem_text(ref[i], e, at, rv, sizeof rv));
      failed = 1;
    } else if (!k->tolerance && first >= 0) {
      if (!failed && fp)
        snprintf(msg, cap, "output %s wrong at element %lld: %s, expected %s (|out-ref| > atol %g "
                 "+ rtol %g x |ref|; %lld of %lld elements differ)", b->name, (long long)first,
                 elem_text(bufs[i], e, first, ov, sizeof ov),
                 elem_text(ref[i], e, first, rv, sizeof rv), k->atol, k->rtol, (long long)nbad,
                 (long long)b->n);
      else if (!failed)
        snprintf(msg, cap, "output %s wrong at element %lld: %s, expected %s (%s: exact; %lld of "
                 "%lld elements differ)", b->name, (long long)first,
                 elem_text(bufs[i], e, first, ov, sizeof ov),
                 elem_text(ref[i], e, first, rv, sizeof rv), kn_elem_name(e), (long long)nbad,
                 (long long)b->n);
      failed = 1;
    }
  }
  *max_err = worst;
  return failed ? -1 : 0;
}

/* ---- the once-computed reference outputs ---- */

#define REF_MAGIC "rooftune-ref-1\n"   /* 16 bytes with its NUL */

int ms__ref_missing(const ms_workload *w) {
  for (int i = 0; i < w->nbuf; i++)
    if (w->b[i].out && !w->ref[i]) return 1;
  return 0;
}

static rt_hash hash_str(rt_hash h, const char *s) {
  uint64_t len = s ? strlen(s) : 0;
  h = rt_hash_bytes(h, &len, sizeof len);
  return len ? rt_hash_bytes(h, s, len) : h;
}

void ms__ref_key(const ms_workload *w, const char *build_key, const char *compiler, char key[33]) {
  rt_hash h = hash_str(RT_HASH_INIT, REF_MAGIC);
  h = hash_str(h, build_key);
  h = hash_str(h, compiler);
  for (int i = 0; i < w->nbuf; i++) {
    const kn_buf *b = &w->b[i];
    int64_t shape[5] = {i, b->elem, b->kind, b->n, b->out + 2 * b->inout};
    h = rt_hash_bytes(h, shape, sizeof shape);
    if (w->in[i]) h = rt_hash_bytes(h, w->in[i], ms__buf_bytes(b));
  }
  rt_hash_hex(h, key);
}

/* The header of a reference file: magic, output count, then per output
** its index, element type and count. */
typedef struct ref_head {
  char magic[16];
  int64_t nout;
} ref_head;
typedef struct ref_entry {
  int64_t index, elem, n;
} ref_entry;

/* Fill w's missing references from path: 0; -1: absent or not this
** workload's (size or header). */
static int ref_read(ms_workload *w, const char *path) {
  ref_head h, want = {REF_MAGIC, 0};
  ref_entry ent[KN_MAXBUF];
  size_t total = sizeof h;
  for (int i = 0; i < w->nbuf; i++)
    if (w->b[i].out && !w->ref[i]) {
      ent[want.nout++] = (ref_entry){i, w->b[i].elem, w->b[i].n};
      total += sizeof(ref_entry) + ms__buf_bytes(&w->b[i]);
    }
  struct stat st;
  FILE *f = fopen(path, "rbe");
  if (!f) return -1;
  ref_entry got[KN_MAXBUF];
  int ok = !fstat(fileno(f), &st) && (size_t)st.st_size == total && fread(&h, sizeof h, 1, f) == 1 &&
           !memcmp(&h, &want, sizeof h) &&
           fread(got, sizeof *got, (size_t)want.nout, f) == (size_t)want.nout &&
           !memcmp(got, ent, sizeof *got * (size_t)want.nout);
  void *data[KN_MAXBUF] = {0};
  for (int64_t o = 0; ok && o < want.nout; o++) {
    size_t bytes = ms__buf_bytes(&w->b[ent[o].index]);
    data[o] = rt_malloc(bytes);
    ok = fread(data[o], 1, bytes, f) == bytes;
  }
  fclose(f);
  for (int64_t o = 0; o < want.nout; o++) {
    if (ok) w->ref[ent[o].index] = data[o];
    else free(data[o]);
  }
  return ok ? 0 : -1;
}

/* Store the outputs listed (the ones just computed) at path with rt_out. */
static int ref_write(const ms_workload *w, const int *idx, int nout, const char *path, rt_err *err) {
  rt_out out = {0};
  if (rt_out_open(&out, path, NULL, err)) return -1;
  ref_head h = {REF_MAGIC, nout};
  int ok = fwrite(&h, sizeof h, 1, out.f) == 1;
  for (int o = 0; o < nout && ok; o++) {
    ref_entry e = {idx[o], w->b[idx[o]].elem, w->b[idx[o]].n};
    ok = fwrite(&e, sizeof e, 1, out.f) == 1;
  }
  for (int o = 0; o < nout && ok; o++)
    ok = fwrite(w->ref[idx[o]], 1, ms__buf_bytes(&w->b[idx[o]]), out.f) ==
         ms__buf_bytes(&w->b[idx[o]]);
  if (!ok) {
    rt_err_set(err, "cannot write %s: %s", path, strerror(errno));
    rt_out_abort(&out);
    return -1;
  }
  return rt_out_commit(&out, err);
}


void ms__send_outputs(int fd, ms__report *rep, const ms_workload *w, void *const *bufs) {
  static const char zeros[65536];
  ms__seal(rep);
  int bad = rt_write_all(fd, rep, sizeof *rep);
  for (int i = 0; i < w->nbuf && !bad; i++) {
    if (!w->b[i].out) continue;
    size_t bytes = ms__buf_bytes(&w->b[i]);
    if (rep->status == MS_OK && bufs[i]) {
      bad = rt_write_all(fd, bufs[i], bytes);
    } else {
      for (size_t off = 0; off < bytes && !bad; off += sizeof zeros)
        bad = rt_write_all(fd, zeros, bytes - off < sizeof zeros ? bytes - off : sizeof zeros);
    }
  }
  _exit(bad ? 1 : 0);
}

int ms__ref_once(ms_workload *w, const char *build_key, const char *compiler,
                 void (*child)(int fd, void *ctx), void *ctx, const ms_opts *o, ms__report *rep) {
  memset(rep, 0, sizeof *rep);
  rep->status = MS_OK;
  if (!ms__ref_missing(w)) return 0;
  char dir[PATH_MAX], key[33], path[PATH_MAX + 64];
  ms_cache_path(o->cache_dir, dir, sizeof dir);
  ms__ref_key(w, build_key, compiler, key);
  snprintf(path, sizeof path, "%s/ref-%s.bin", dir, key);
  if (!ref_read(w, path)) {
    snprintf(rep->msg, sizeof rep->msg, "cached");
    return 0;
  }
  /* The child sends its report, then every output whole. */
  int idx[KN_MAXBUF], nout = 0;
  size_t size = sizeof(ms__report);
  for (int i = 0; i < w->nbuf; i++)
    if (w->b[i].out) size += ms__buf_bytes(&w->b[i]);
  char *buf = rt_malloc(size);
  ms__guard g;
  ms__guard_take(o->guard, &g);
  ms_child_end end;
  int rc = ms_run_child(child, ctx, o->timeout, buf, size, &end);
  if (ms__guard_check(o->guard, &g, rep->msg, sizeof rep->msg)) {
    rep->status = MS_RUNTIME_ERROR;
    free(buf);
    return -1;
  }
  if (rc) {
    ms_child_why(&end, "reference worker", rep->msg, sizeof rep->msg);
    rep->status = end.timed_out && !end.extra ? MS_TIMEOUT : MS_RUNTIME_ERROR;
    free(buf);
    return rc < 0 ? -1 : 1;
  }
  memcpy(rep, buf, sizeof *rep);
  if (ms__unseal(rep) || rep->status != MS_OK) {
    free(buf);
    return 1;
  }
  size_t off = sizeof *rep;
  for (int i = 0; i < w->nbuf; i++) {
    if (!w->b[i].out) continue;
    size_t bytes = ms__buf_bytes(&w->b[i]);
    if (!w->ref[i]) {
      w->ref[i] = rt_malloc(bytes);
      memcpy(w->ref[i], buf + off, bytes);
      idx[nout++] = i;
    }
    off += bytes;
  }
  free(buf);
  rt_err err = {0};
  if (!ms_mkdirs(dir)) ref_write(w, idx, nout, path, &err);   /* a cache: a failure costs a rerun */
  return 0;
}
