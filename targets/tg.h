/*
** tg.h -- the target table: where code can run. Each target describes
** itself as ordered key/value pairs (hardware, toolchain) plus a
** fingerprint that identifies results measured on it, and lists its kernel
** templates. The host CPU is the first target; "cuda" is the CUDA GPUs,
** one instance per device ("cuda:0", ...; "cuda" means "cuda:0").
*/
#ifndef TG_H
#define TG_H

#include "../common/rt.h"

#define TG_MAXKV 32

typedef struct tg_desc {
  int n;
  char key[TG_MAXKV][32];
  char val[TG_MAXKV][256];
  char fingerprint[33];   /* hex hash of what makes results comparable
                          ** (the host's recipe: hw_describe) */
} tg_desc;

struct kn_kernel;
struct ms_workload;
struct ms_opts;
struct ms_result;
struct cm_bench_opts;
struct cm_ceilings;
typedef struct tg_target {
  const char *name;       /* "host", "cuda", "opencl" */
  const char *summary;
  /* Describe instance (the name as given: "host", "cuda:1"); -1 with err
  ** when it is not available here. */
  int (*describe)(const char *instance, tg_desc *d, rt_err *err);
  const struct kn_kernel *const *kernels;   /* NULL-terminated */
  /* The backend operations of a row that brings its own (OpenCL); NULL
  ** in the host's and CUDA's rows, whose paths are still in measure/ and
  ** cost_model/ (ms_opts.device). */
  /* ms_measure of a candidate on instance (ms_opts.target). */
  int (*measure)(struct ms_workload *w, const char *src, const char *instance,
                 const struct ms_opts *o, struct ms_result *r);
  /* ms_build_key of src on instance; the compiler's identity. */
  void (*build_key)(const char *src, const char *instance, char key[33]);
  const char *(*compiler)(const char *instance, char *buf, size_t cap);
  /* The ceilings bench of instance; 0 or -1 with err. */
  int (*bench)(const char *instance, const struct cm_bench_opts *o, struct cm_ceilings *c,
               rt_err *err);
  const char *model_family;   /* cm_kmodel.target of its kernels' models */
  /* The device-limit bindings of its spaces (tg_limit_bindings). */
  int (*limits)(const char *instance, const char *user_set, rt_str *out, rt_err *err);
  /* The instances here, at most max names into names; how many (0: none,
  ** then describe(name) says why). */
  int (*instances)(char (*names)[32], int max);
} tg_target;

extern const tg_target tg_targets[];        /* ends with a NULL name */
/* The target of a name ("host", "cuda", "cuda:N"); NULL if unknown. */
const tg_target *tg_find(const char *name);
/* Kernel template name of target t; NULL if it has none of that name. */
const struct kn_kernel *tg_kernel(const tg_target *t, const char *name);
/* The CUDA device ordinal of a target name; -1 for the host (ms_opts.device). */
int tg_device(const char *name);
/* The model family of target name: its row's model_family, else "cuda"
** for a CUDA device and "host" otherwise (cm_kmodel_find_on's kind). */
const char *tg_model_family(const char *name);
/* Describe the target named name (an instance); -1 with err. */
int tg_describe(const char *name, tg_desc *d, rt_err *err);
/* Problem-variable bindings "VAR=VAL,..." for the device limits a space of
** this target declares (max_threads, max_smem, regs_block, sms on CUDA),
** from the device, leaving out any variable user_set binds; appended to
** out (comma-separated), which is returned. Host: nothing. 0, or -1 with
** err when the device cannot be asked. */
int tg_limit_bindings(const char *name, const char *user_set, rt_str *out, rt_err *err);
/* user_set (may be NULL) followed by the limit bindings: the --set text a
** space of target name is loaded with (caller frees); NULL with err. */
char *tg_bindings(const char *name, const char *user_set, rt_err *err);
void tg_desc_add(tg_desc *d, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *tg_desc_get(const tg_desc *d, const char *key); /* "" if absent */
/* The description as a JSON object of its key/value pairs, in order
** (caller frees). */
char *tg_desc_json(const tg_desc *d);

/* The host CPU (targets/host/hw.c): model, cpus (online), usable_cpus
** (this process's affinity), cores, numa_nodes, isa, simd_bits, the
** data/unified caches (L1d, L2, L3: size and sharing CPUs), compiler,
** cflags. Its fingerprint is the FNV-1a 128 of every "key=value" pair in
** that order (recipe 2; hw.c says what changed). TEST-ONLY: the
** environment variable ROOFTUNE_TEST_HOST_FINGERPRINT (32 lower-case hex
** digits) replaces the fingerprint (-1 with err for another value). */
int hw_describe(tg_desc *d, rt_err *err);

/* One of cpu0's caches as sysfs lists it (the text as sysfs writes it,
** and parsed: bytes 0 when unreadable, ways 0 when unknown). */
typedef struct hw_cache {
  int level;                 /* 1, 2, 3, ... */
  int instruction;           /* 1: an instruction cache */
  char type[16], size[16], shared[64];   /* "Data", "48K", "0-1" */
  double bytes;
  int ways;
  int sharers;               /* CPUs in shared (at least 1) */
} hw_cache;
/* cpu0's caches in sysfs index order, at most max into c; how many. */
int hw_caches(hw_cache *c, int max);
/* The data or unified (instr: the instruction) cache of a level, or NULL. */
const hw_cache *hw_cache_find(const hw_cache *c, int n, int level, int instr);

#endif
