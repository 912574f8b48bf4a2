/*
** gd_cubin.c -- what ptxas decided about a kernel, read from its cubin
** without a GPU: registers per thread, the stack frame (local memory per
** thread: spilled registers and local arrays), the static shared memory
** and the launch-bounds thread limit. A cubin is an ELF64 file; the
** global `.nv.info` section holds attribute records (u8 format, u8
** attribute, u16 value or payload length, then the payload, 4-byte
** aligned) of which EIATTR_REGCOUNT (0x2f), EIATTR_FRAME_SIZE (0x11),
** EIATTR_MIN_STACK_SIZE (0x12) and EIATTR_MAX_STACK_SIZE (0x23) carry
** (symbol index, value) pairs per function; `.nv.info.<kernel>` holds the
** kernel's own (EIATTR_MAX_THREADS 0x05: three u32); `.nv.shared.<kernel>`
** is NOBITS of the static shared memory's size. ptxas -v prints the same
** registers and stack frame (tests/test_gd_cubin.c compares them). Spill
** store and load bytes are in ptxas's log only, not in the cubin: the
** frame is what the cost model reads for local memory.
**
** gd_kernel_resources then ties it to the compile cache: the cubin of a
** generated source is built (or found) by gd_cubin_build under the
** campaign's build key, so a resource query and a measurement compile a
** schedule once between them.
*/
#include "gd.h"
#include "gk.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../cost_model/cm.h"
#include "../../measure/ms.h"

#define EIFMT_SVAL 0x04
enum { EI_MAX_THREADS = 0x05, EI_FRAME_SIZE = 0x11, EI_MIN_STACK = 0x12, EI_MAX_STACK = 0x23,
       EI_REGCOUNT = 0x2f };
#define SHT_SYMTAB_ 2
#define SHT_NOBITS_ 8

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const unsigned char *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

typedef struct sec {
  uint32_t name, type;
  uint64_t off, size;
  uint32_t link;
} sec;

/* Section i of the image (checked against its size); 0 or -1. */
static int section(const unsigned char *b, size_t n, int i, sec *s) {
  uint64_t shoff = rd64(b + 0x28);
  uint16_t entsize = rd16(b + 0x3a);
  uint64_t at = shoff + (uint64_t)i * entsize;
  if (entsize < 64 || at + 64 > n) return -1;
  const unsigned char *h = b + at;
  s->name = rd32(h), s->type = rd32(h + 4), s->off = rd64(h + 0x18), s->size = rd64(h + 0x20);
  s->link = rd32(h + 0x28);
  if (s->type != SHT_NOBITS_ && (s->off > n || s->size > n - s->off)) return -1;
  return 0;
}

/* The NUL-terminated string at idx of string table t, or NULL. */
static const char *str_at(const unsigned char *b, const sec *t, uint32_t idx) {
  if (idx >= t->size) return NULL;
  const char *s = (const char *)b + t->off + idx;
  return memchr(s, 0, t->size - idx) ? s : NULL;
}

int gd_cubin_resources(const void *image, size_t n, const char *kernel, gd_res *r, rt_err *err) {
  const unsigned char *b = image;
  memset(r, 0, sizeof *r);
  r->regs = -1;
  if (n < 64 || memcmp(b, "\177ELF", 4) || b[4] != 2 || b[5] != 1) {
    rt_err_set(err, "cubin: not a little-endian ELF64 image");
    return -1;
  }
  int nsec = rd16(b + 0x3c), shstr = rd16(b + 0x3e);
  sec names;
  if (shstr >= nsec || section(b, n, shstr, &names)) {
    rt_err_set(err, "cubin: section headers out of the image");
    return -1;
  }
  /* the kernel's symbol index, from .symtab */
  long symidx = -1;
  char own[300];
  snprintf(own, sizeof own, ".nv.info.%s", kernel);
  char shared[300];
  snprintf(shared, sizeof shared, ".nv.shared.%s", kernel);
  int info = -1, info_k = -1;
  for (int i = 0; i < nsec; i++) {
    sec s;
    if (section(b, n, i, &s)) {
      rt_err_set(err, "cubin: section %d out of the image", i);
      return -1;
    }
    const char *nm = str_at(b, &names, s.name);
    if (!nm) continue;
    if (!strcmp(nm, ".nv.info")) info = i;
    else if (!strcmp(nm, own)) info_k = i;
    else if (!strcmp(nm, shared)) r->smem_static = (long)s.size;
    if (s.type == SHT_SYMTAB_) {
      sec st;
      if (s.link >= (uint32_t)nsec || section(b, n, (int)s.link, &st)) continue;
      for (uint64_t k = 0; k + 24 <= s.size; k += 24) {
        const char *sn = str_at(b, &st, rd32(b + s.off + k));
        if (sn && !strcmp(sn, kernel)) symidx = (long)(k / 24);
      }
    }
  }
  if (symidx < 0 || info < 0) {
    rt_err_set(err, "cubin: no kernel '%s' (symbol or .nv.info missing)", kernel);
    return -1;
  }
  /* attribute records of .nv.info (per function) and .nv.info.<kernel> */
  for (int pass = 0; pass < 2; pass++) {
    int idx = pass ? info_k : info;
    sec s;
    if (idx < 0 || section(b, n, idx, &s)) continue;
    for (uint64_t p = 0; p + 4 <= s.size;) {
      const unsigned char *h = b + s.off + p;
      int fmt = h[0], attr = h[1];
      uint32_t len = fmt == EIFMT_SVAL ? rd16(h + 2) : 0;
      if (p + 4 + len > s.size) {
        rt_err_set(err, "cubin: attribute 0x%02x runs past its section", attr);
        return -1;
      }
      const unsigned char *d = h + 4;
      if (!pass && fmt == EIFMT_SVAL && len >= 8 && rd32(d) == (uint32_t)symidx) {
        long v = (long)rd32(d + 4);
        if (attr == EI_REGCOUNT) r->regs = (int)v;
        else if (attr == EI_FRAME_SIZE) r->frame = v;
        else if (attr == EI_MIN_STACK) r->min_stack = v;
        else if (attr == EI_MAX_STACK) r->max_stack = v;
      } else if (pass && fmt == EIFMT_SVAL && attr == EI_MAX_THREADS && len >= 12) {
        r->max_threads = (long)rd32(d) * rd32(d + 4) * rd32(d + 8);
      }
      p += 4 + len;
    }
  }
  if (r->regs < 0) {
    rt_err_set(err, "cubin: no EIATTR_REGCOUNT for kernel '%s'", kernel);
    return -1;
  }
  return 0;
}

int gd_kernel_resources(const char *src, int maj, int min, const char *cache_dir, gd_res *r,
                        rt_err *err) {
  gk_plan *plan = rt_malloc(sizeof *plan);
  char path[PATH_MAX + 64];
  rt_str log = {0};
  int hit = 0, rc = -1;
  if (gk_plan_parse(src, KN_MAXBUF, plan, err)) goto out;
  /* the first launched kernel: its entry's lowered name, or its own */
  const char *name = NULL;
  for (int i = 0; i < plan->nsteps && !name; i++)
    if (plan->step[i].kind == GK_LAUNCH) name = plan->step[i].name;
  if (!name) {
    rt_err_set(err, "resources: the source launches no kernel");
    goto out;
  }
  int b = gd_cubin_build(src, plan, maj, min, cache_dir, path, sizeof path, &hit, &log);
  if (b) {
    rt_err_set(err, "resources: %s: %.300s", b > 0 ? "compile error" : "build failed",
               log.s ? log.s : "");
    goto out;
  }
  for (int i = 0; i < plan->nentry; i++)
    if (!strcmp(plan->entry[i].name, name)) name = plan->entry[i].lowered;
  FILE *f = fopen(path, "rbe");
  if (!f) {
    rt_err_set(err, "resources: cannot read %s", path);
    goto out;
  }
  char buf[65536];
  size_t got, total = 0;
  unsigned char *data = NULL;
  while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
    data = rt_realloc(data, total + got);
    memcpy(data + total, buf, got);
    total += got;
  }
  fclose(f);
  rc = gd_cubin_resources(data, total, name, r, err);
  if (rc) rt_err_prefix(err, "%s: ", path);
  free(data);
out:
  free(plan);
  free(log.s);
  return rc;
}

/* ---- The cost model's hook (tg_backend.model_setup) ----
** Answers per (kernel, problem, configuration) are kept in this process
** (an open-addressing table keyed by a hash of the three), so that a
** calibration's thousands of predictions of one schedule compile it at
** most once and read its cubin once. */
typedef struct res_slot {
  rt_hash key;
  int known;                    /* 1: r holds it; -1: asked, unknown */
  cm_gpu_res r;
} res_slot;
static struct {
  int maj, min, compile;
  char cache_dir[PATH_MAX];
  res_slot *slot;
  size_t cap, n;
} rs;

static rt_hash res_key(const char *kernel, const kn_problem *pb, const sp_space *sp,
                       const int *cfg) {
  rt_hash h = rt_hash_bytes(RT_HASH_INIT, kernel, strlen(kernel) + 1);
  for (int i = 0; i < pb->n; i++) {
    int64_t v = kn_int(pb, pb->name[i]);
    h = rt_hash_bytes(rt_hash_bytes(h, pb->name[i], strlen(pb->name[i]) + 1), &v, sizeof v);
  }
  h = rt_hash_bytes(h, &rs.maj, sizeof rs.maj);
  h = rt_hash_bytes(h, &rs.min, sizeof rs.min);
  return rt_hash_bytes(h, cfg, (size_t)sp_nparams(sp) * sizeof *cfg);
}

static res_slot *res_find(rt_hash key) {
  if (2 * (rs.n + 1) > rs.cap) {
    res_slot *old = rs.slot;
    size_t oc = rs.cap;
    rs.cap = oc ? 2 * oc : 1024;
    rs.slot = rt_calloc(rs.cap, sizeof *rs.slot);
    for (size_t i = 0; i < oc; i++)
      if (old[i].known) {
        size_t j = (size_t)old[i].key & (rs.cap - 1);
        while (rs.slot[j].known) j = (j + 1) & (rs.cap - 1);
        rs.slot[j] = old[i];
      }
    free(old);
  }
  size_t j = (size_t)key & (rs.cap - 1);
  while (rs.slot[j].known && rs.slot[j].key != key) j = (j + 1) & (rs.cap - 1);
  return &rs.slot[j];
}

/* The hook: the memo, else the cubin (built when compiling is on, else
** only when the compile cache holds it). */
static int res_hook(void *ctx, const char *kernel, const kn_problem *pb, const sp_space *sp,
                    const int *cfg, cm_gpu_res *out) {
  (void)ctx;
  const kn_kernel *k = gk_find(kernel);
  if (!k) return -1;
  rt_hash key = res_key(kernel, pb, sp, cfg);
  res_slot *s = res_find(key);
  if (s->known) {
    *out = s->r;
    return s->known > 0 ? 0 : -1;
  }
  char *src = k->codegen(pb, sp, cfg);
  int known = -1;
  gd_res r;
  rt_err err = {0};
  if (src) {
    char dir[PATH_MAX], path[PATH_MAX + 64], hex[33];
    ms_cache_path(rs.cache_dir[0] ? rs.cache_dir : NULL, dir, sizeof dir);
    gd_build_key_arch(src, rs.maj, rs.min, hex);
    snprintf(path, sizeof path, "%s/%s.cubin", dir, hex);
    if ((rs.compile || !access(path, R_OK)) &&
        !gd_kernel_resources(src, rs.maj, rs.min, rs.cache_dir[0] ? rs.cache_dir : NULL, &r, &err))
      known = 1;
  }
  free(src);
  s->key = key;
  s->known = known;
  if (known > 0) s->r = (cm_gpu_res){.regs = r.regs, .local = (double)r.frame};
  rs.n++;
  *out = s->r;
  return known > 0 ? 0 : -1;
}

void gd_model_setup(const tg_target *t, const cm_ceilings *ce, const char *cache_dir, int compile) {
  (void)t;
  if (!gd_nvrtc_available(NULL)) return;
  /* ceilings without the device's properties (measured before they were
  ** kept): the H200 (sm_90) that cm_gpu_props assumes for them too */
  cm_gpu g;
  cm_machine m;
  kn_problem none = {0};
  cm_machine_from_ceilings(&m, ce);
  cm_gpu_props(&m, &none, &g);
  if (rs.maj != g.cc_major || rs.min != g.cc_minor) {
    free(rs.slot);
    rs.slot = NULL, rs.cap = rs.n = 0;
  }
  rs.maj = g.cc_major, rs.min = g.cc_minor, rs.compile = compile;
  snprintf(rs.cache_dir, sizeof rs.cache_dir, "%s", cache_dir ? cache_dir : "");
  cm_gpu_resources_set(res_hook, NULL);
}
