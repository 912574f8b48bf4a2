/*
** hw.c -- the host CPU's description, detected at run time: model, logical
** CPUs (online, and those this process may run on), physical cores, NUMA
** nodes, the SIMD extensions that matter to code generation (from
** /proc/cpuinfo flags), the cache hierarchy (sysfs), the compiler and the
** code-generation flags; and the fingerprint that keys every result
** measured here.
**
** The fingerprint (recipe 2, 2026-12; since issue 17 tg.c computes it for
** every backend, tg.h) is FNV-1a 128 (rt_hash) of every "key=value" pair
** of the description, NUL-terminated, in the order `rooftune targets`
** prints them: model, cpus, usable_cpus, cores,
** numa_nodes, isa, simd_bits, each data/unified cache level (size and the
** CPUs sharing it), compiler, cflags. Whatever changes a ceiling (the
** thread count the all-thread figures use, SMT, cache sizes and sharing,
** ISA, compiler) changes it; so a larger VM of the same CPU model does not
** reuse a smaller one's ceilings. Recipe 1 (before 2026-12) hashed only
** model, ISA, compiler and flags: databases recorded then keep those
** fingerprints, and commands on recorded data take the target from the
** data (cli_data_target), so they still work.
**
** ROOFTUNE_TEST_HOST_FINGERPRINT (TEST-ONLY; the host row's
** test_fingerprint_env, applied by tg_describe): when set, its value (32 hex
** digits, lower case) replaces the fingerprint, and the description says
** so (key fingerprint_override). The tests use it to show that commands on
** recorded data do not depend on the machine that runs them. Never set it
** for real measurements: results would be filed under a machine they were
** not measured on.
*/
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hw.h"

/* Flags worth knowing for code generation, widest last per family. */
static const char *const isa_flags[] = {
  "sse4_2", "avx", "f16c", "bmi2", "avx2", "fma", "avx_vnni", "avx512f", "avx512cd",
  "avx512dq", "avx512bw", "avx512vl", "avx512ifma", "avx512vbmi", "avx512_vbmi2",
  "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8",
  "amx_fp16",
};

#define HW_CFLAGS "-O3 -march=native"

/* Value of the first "key : value" line of /proc/cpuinfo (or ""). */
static void cpuinfo(const char *key, char *out, size_t cap) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[8192];
  size_t klen = strlen(key);
  out[0] = 0;
  while (f && fgets(line, sizeof line, f)) {
    if (strncmp(line, key, klen) || !strchr(line, ':')) continue;
    const char *v = strchr(line, ':') + 1;
    while (*v == ' ') v++;
    snprintf(out, cap, "%s", v);
    out[strcspn(out, "\n")] = 0;
    break;
  }
  if (f) fclose(f);
}

static int has_flag(const char *flags, const char *flag) {
  size_t n = strlen(flag);
  for (const char *p = flags; (p = strstr(p, flag)); p += n)
    if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return 1;
  return 0;
}

/* First line of a sysfs file into out (or ""). */
static void sysfs(const char *path, char *out, size_t cap) {
  FILE *f = fopen(path, "r");
  out[0] = 0;
  if (f && fgets(out, (int)cap, f)) out[strcspn(out, "\n")] = 0;
  if (f) fclose(f);
}

/* Number of CPUs in a sysfs list such as "0-3,8,10-11" (at least 1). */
static int cpu_list_count(const char *s) {
  int n = 0;
  while (*s) {
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (end == s) break;
    if (*end == '-') b = strtol(end + 1, &end, 10);
    n += (int)(b - a + 1);
    s = *end == ',' ? end + 1 : end;
  }
  return n > 0 ? n : 1;
}

int hw_caches(hw_cache *c, int max) {
  int n = 0;
  for (int i = 0; i < 16 && n < max; i++) {
    char base[96], path[160], level[16], ways[16];
    snprintf(base, sizeof base, "/sys/devices/system/cpu/cpu0/cache/index%d", i);
    snprintf(path, sizeof path, "%s/level", base);
    sysfs(path, level, sizeof level);
    if (!level[0]) break;
    hw_cache *h = &c[n++];
    memset(h, 0, sizeof *h);
    h->level = atoi(level);
    snprintf(path, sizeof path, "%s/type", base);
    sysfs(path, h->type, sizeof h->type);
    h->instruction = !strcmp(h->type, "Instruction");
    snprintf(path, sizeof path, "%s/size", base);
    sysfs(path, h->size, sizeof h->size);
    char *end;
    h->bytes = strtod(h->size, &end);
    h->bytes *= *end == 'K' ? 1024.0 : *end == 'M' ? 1048576.0 : *end == 'G' ? 1073741824.0 : 1.0;
    snprintf(path, sizeof path, "%s/shared_cpu_list", base);
    sysfs(path, h->shared, sizeof h->shared);
    h->sharers = cpu_list_count(h->shared);
    snprintf(path, sizeof path, "%s/ways_of_associativity", base);
    sysfs(path, ways, sizeof ways);
    h->ways = atoi(ways) > 0 ? atoi(ways) : 0;
  }
  return n;
}

const hw_cache *hw_cache_find(const hw_cache *c, int n, int level, int instr) {
  for (int i = 0; i < n; i++)
    if (c[i].level == level && c[i].instruction == !!instr) return &c[i];
  return NULL;
}

/* Number of distinct (package, core) pairs: physical cores. */
static int physical_cores(int cpus) {
  int n = 0, *ids = calloc((size_t)cpus, sizeof *ids);
  for (int c = 0; c < cpus; c++) {
    char path[128], core[32], pkg[32];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
    sysfs(path, core, sizeof core);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
    sysfs(path, pkg, sizeof pkg);
    if (!core[0]) continue;
    int id = atoi(pkg) * 65536 + atoi(core), seen = 0;
    for (int k = 0; k < n; k++) seen |= ids[k] == id;
    if (!seen) ids[n++] = id;
  }
  free(ids);
  return n ? n : cpus;
}

/* The first line of `$CC --version` ($CC split at blanks, no shell). */
static void compiler_version(char *out, size_t cap) {
  const char *cc = getenv("CC");
  char words[256], *argv[32], *save = NULL;
  int n = 0;
  snprintf(words, sizeof words, "%s", cc && *cc ? cc : "cc");
  for (char *w = strtok_r(words, " \t\n", &save); w && n < 30; w = strtok_r(NULL, " \t\n", &save))
    argv[n++] = w;
  argv[n++] = "--version";
  argv[n] = NULL;
  rt_str text = {0};
  out[0] = 0;
  if (rt_capture(argv, 0, 4096, &text) >= 0 && text.s)
    snprintf(out, cap, "%.*s", (int)strcspn(text.s, "\n"), text.s);
  free(text.s);
  if (!out[0]) snprintf(out, cap, "unknown (%s not found)", cc && *cc ? cc : "cc");
}

/* Number of NUMA nodes online (sysfs; 1 when it does not say). */
static int numa_nodes(void) {
  char list[256];
  sysfs("/sys/devices/system/node/online", list, sizeof list);
  return list[0] ? cpu_list_count(list) : 1;
}

/* Number of CPUs this process may run on (its affinity mask; at least 1):
** the all-thread ceilings use that many threads. */
static int usable_cpus(int online) {
  cpu_set_t set;
  int n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : online;
  return n > 0 ? n : 1;
}

void hw_family(const tg_desc *d, tg_family *f) {
  static const struct { const char *flag, *arch; } widest[] = {
    {"avx512f", "x86-64 AVX-512"}, {"avx2", "x86-64 AVX2"}, {"avx", "x86-64 AVX"},
    {"sse4_2", "x86-64 SSE4.2"},
  };
  const char *model = tg_desc_get(d, "model"), *isa = tg_desc_get(d, "isa");
  if (strcmp(model, "unknown")) snprintf(f->model, sizeof f->model, "%s", model);
  for (size_t i = 0; i < sizeof widest / sizeof *widest && !f->arch[0]; i++)
    if (has_flag(isa, widest[i].flag)) snprintf(f->arch, sizeof f->arch, "%s", widest[i].arch);
}

int hw_describe(tg_desc *d, rt_err *err) {
  (void)err;
  char model[256], flags[8192], isa[512] = "", cc[256];
  memset(d, 0, sizeof *d);
  cpuinfo("model name", model, sizeof model);
  cpuinfo("flags", flags, sizeof flags);
  int cpus = (int)sysconf(_SC_NPROCESSORS_ONLN), simd = 128;
  for (size_t i = 0; i < sizeof isa_flags / sizeof *isa_flags; i++)
    if (has_flag(flags, isa_flags[i]))
      snprintf(isa + strlen(isa), sizeof isa - strlen(isa), "%s%s", *isa ? " " : "", isa_flags[i]);
  if (has_flag(flags, "avx")) simd = 256;
  if (has_flag(flags, "avx512f")) simd = 512;
  compiler_version(cc, sizeof cc);
  tg_desc_add(d, "model", "%s", model[0] ? model : "unknown");
  tg_desc_add(d, "cpus", "%d", cpus);
  tg_desc_add(d, "usable_cpus", "%d", usable_cpus(cpus));
  tg_desc_add(d, "cores", "%d", physical_cores(cpus));
  tg_desc_add(d, "numa_nodes", "%d", numa_nodes());
  tg_desc_add(d, "isa", "%s", isa);
  tg_desc_add(d, "simd_bits", "%d", simd);
  hw_cache caches[8];
  int nc = hw_caches(caches, 8);
  for (int i = 0; i < nc; i++) {
    if (caches[i].instruction) continue;
    char key[32];
    snprintf(key, sizeof key, "L%d%s", caches[i].level, strcmp(caches[i].type, "Data") ? "" : "d");
    tg_desc_add(d, key, "%s (shared by cpus %s)", caches[i].size, caches[i].shared);
  }
  tg_desc_add(d, "compiler", "%s", cc);
  tg_desc_add(d, "cflags", "%s", HW_CFLAGS);
  return 0;
}
