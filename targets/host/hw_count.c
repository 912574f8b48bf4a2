/*
** hw_count.c -- (moved from cost_model/cm_counters.c: counting traffic is
** the host row's operation, traffic_count) cache traffic counted on the
** real code of a schedule,
** to fit or check the byte terms of the kernel models (cm.h invariant 4:
** lines filled into a level), from cachegrind where the host has no PMU
** and from PAPI where it has one. Cachegrind: valgrind 3.19 decodes no
** AVX-512, so the candidate is built through the compile cache (ms_build)
** for x86-64-v3 with cost_model/cm_shim512.h force-included, which maps the
** _mm512 intrinsics onto 64-byte GCC vectors with the same memory footprint
** (masked accesses element by element) and memcpy/memset onto inline
** copies. Cachegrind counts an access that straddles two lines as one miss
** even when both lines miss (valgrind's cg_sim.c), so this build makes no
** straddling access: auto-vectorisation is off (aligned scalar floats never
** straddle) and the shim's vector accesses are 32-byte aligned halves or
** single elements. A generic driver (built once per compiler, in the same
** cache) dlopens the candidate, maps its buffers from a data file written
** here (page-aligned; inputs from GSL mt19937 seed 42 in [-1, 1] like the
** harness, outputs zero), calls rk_run once and exits. The buffers are
** filled by the kernel's page cache, not by simulated stores, and mapped at
** a fixed address the process never used before (cachegrind indexes by
** virtual address and forgets nothing at munmap: a range ld.so had used
** would come back partly warm), so the run is cold: each line of the
** buffers first comes from memory (only the candidate's static data, e.g.
** packing buffers in .bss, may start partly warm: ld.so zeroes the rest of
** the page where .data ends). valgrind --tool=cachegrind runs the driver
** twice, concurrently: last level = L2, then = L3 (cachegrind needs a
** power-of-two set count: the largest one not above the real count, with
** as many ways as fit; the geometry used goes to tr->config). Capacities
** and associativities come from the caller's cm_machine (the target's
** stored ceilings: the target may be another machine), associativities
** from sysfs (cpu0) where it does not know them.
** Only the candidate's functions count: those cachegrind lists under the
** candidate's source file, including their code inlined from headers (the
** shim, immintrin); the driver, ld.so, libc and libgomp are left out. L2
** bytes = D1 misses x line, L3 bytes = LL misses of the L2 run x line, DRAM
** bytes = LL misses of the L3 run x line; L1 bytes are NAN (cachegrind
** counts accesses, not bytes); instructions = Ir of this x86-64-v3 build
** (not of the AVX-512 one). Cachegrind runs an OpenMP schedule's threads
** one at a time over one simulated hierarchy (one core): counts mean what
** they should for threads=1 schedules (those used for calibration); more
** threads share one simulated L1 and L2. PAPI: the harness's counter pass
** (hw_measure with counters on: a warm run, since the worker runs rk_run
** once before counting; the calling thread only) with PAPI_L1_DCM,
** PAPI_L2_TCM, PAPI_L3_TCM times the line size; on a machine without
** counters it fails with "no hardware counters: ...", and the caller falls
** back to cachegrind.
*/
#include "hw.h"

#include "../../cost_model/cm.h"
#include "../../measure/ms.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

#define CG_TIMEOUT_S 300.0      /* a valgrind run is killed after this */
#define DRV_TIMEOUT_S 60.0      /* a native driver run, a compile */
#define TAIL_CHARS 400          /* stderr excerpt in error messages */
#define SHIM_REL "cost_model/cm_shim512.h"
#define CG_CFLAGS "-O3 -march=x86-64-v3 -fopenmp -fPIC -g -fno-tree-vectorize " \
                  "-fno-tree-loop-distribute-patterns"
#define DRV_MAXBUF 8            /* buffers the driver's header holds */
#define DRV_MAGIC "rtcgdrv1"
#define CG_DIRMAX 3072          /* longest compile-cache path (+ names < PATH_MAX) */

/* ---- The driver (one source for every kernel; built once) ---- */

static const char driver_src[] =
  "/* rooftune's cachegrind driver (targets/host/hw_count.c): dlopen the\n"
  "** candidate SO, map the buffers of DATA (page-aligned, never touched\n"
  "** here before the call, at an address the process never used before:\n"
  "** a cold run), call rk_run once, write the\n"
  "** output buffers to OUT when given. Exit 0, or 2/3 with a message. */\n"
  "#include <dlfcn.h>\n#include <fcntl.h>\n#include <stdint.h>\n"
  "#include <stdio.h>\n#include <string.h>\n#include <sys/mman.h>\n"
  "#include <sys/stat.h>\n#include <unistd.h>\n"
  "typedef struct hdr { char magic[8]; int64_t nbuf, off[8], bytes[8], out[8]; } hdr;\n"
  "int main(int argc, char **argv) {\n"
  "  if (argc < 3) { fprintf(stderr, \"usage: driver SO DATA [OUT]\\n\"); return 2; }\n"
  "  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);\n"
  "  if (!h) { fprintf(stderr, \"driver: dlopen: %s\\n\", dlerror()); return 2; }\n"
  "  int (*run)(float *const *);\n"
  "  *(void **)&run = dlsym(h, \"rk_run\");\n"
  "  if (!run) { fprintf(stderr, \"driver: the candidate defines no rk_run\\n\"); return 2; }\n"
  "  int fd = open(argv[2], O_RDONLY);\n"
  "  struct stat st;\n"
  "  if (fd < 0 || fstat(fd, &st)) { perror(argv[2]); return 2; }\n"
  "  /* a fresh address (a hint): no line of it is in the simulated caches */\n"
  "  char *base = mmap((void *)0x200000000000UL, (size_t)st.st_size,\n"
  "                    PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);\n"
  "  if (base == MAP_FAILED) { perror(\"driver: mmap\"); return 2; }\n"
  "  const hdr *hd = (const hdr *)base;\n"
  "  if (memcmp(hd->magic, \"" DRV_MAGIC "\", 8) || hd->nbuf < 1 || hd->nbuf > 8) {\n"
  "    fprintf(stderr, \"driver: %s is not a data file\\n\", argv[2]); return 2; }\n"
  "  float *bufs[8];\n"
  "  for (int i = 0; i < hd->nbuf; i++) bufs[i] = (float *)(base + hd->off[i]);\n"
  "  int rc = run(bufs);\n"
  "  if (rc) { fprintf(stderr, \"driver: rk_run returned %d\\n\", rc); return 3; }\n"
  "  if (argc > 3) {\n"
  "    int o = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0600);\n"
  "    if (o < 0) { perror(argv[3]); return 2; }\n"
  "    for (int i = 0; i < hd->nbuf; i++) {\n"
  "      if (!hd->out[i]) continue;\n"
  "      const char *p = (const char *)bufs[i];\n"
  "      for (int64_t done = 0; done < hd->bytes[i];) {\n"
  "        ssize_t k = write(o, p + done, (size_t)(hd->bytes[i] - done));\n"
  "        if (k <= 0) { perror(argv[3]); return 2; }\n"
  "        done += k;\n"
  "      }\n"
  "    }\n"
  "    if (close(o)) { perror(argv[3]); return 2; }\n"
  "  }\n"
  "  return 0;\n"
  "}\n";

/* The data file's header (the driver's struct hdr, field for field). */
typedef struct drv_hdr {
  char magic[8];
  int64_t nbuf, off[DRV_MAXBUF], bytes[DRV_MAXBUF], out[DRV_MAXBUF];
} drv_hdr;

/* ---- Small helpers ---- */

/* Whole file into a NUL-terminated malloc'ed string (NULL: errno set). */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rbe");
  if (!f) return NULL;
  rt_str s = {0};
  char buf[65536];
  size_t k;
  rt_str_printf(&s, "%s", "");
  while ((k = fread(buf, 1, sizeof buf, f)) > 0) {
    if (s.n + k + 1 > s.cap) {
      s.cap = 2 * (s.n + k + 1);
      s.s = rt_realloc(s.s, s.cap);
    }
    memcpy(s.s + s.n, buf, k);
    s.n += k;
    s.s[s.n] = 0;
  }
  fclose(f);
  if (len) *len = s.n;
  return s.s;
}

/* Write n bytes to path through a temporary name and rename(): complete
** or absent, whoever else writes the same content-addressed name. */
static int write_atomic(const char *path, const void *p, size_t n, int mode) {
  static unsigned seq;
  char tmp[PATH_MAX + 64];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), seq++);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return -1;
  int ok = rt_write_all(fd, p, n) == 0;
  if (close(fd)) ok = 0;
  if (ok && rename(tmp, path) == 0) return 0;
  int e = errno;
  unlink(tmp);
  errno = e;
  return -1;
}

/* The last TAIL_CHARS characters of the log at path, without valgrind's
** notes about the cache geometry it detected (ours overrides it). */
static void log_tail(const char *path, char *out, size_t cap) {
  char *s = slurp(path, NULL);
  rt_str kept = {0};
  rt_str_printf(&kept, "%s", "");
  for (char *line = s; line && *line;) {
    char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    int note = strstr(line, "-- warning:") && strstr(line, "-- warning:") < line + len;
    /* valgrind's empty "==PID== " lines */
    size_t lead = strspn(line, "=0123456789");
    int blank = lead == len || (lead + 1 == len && line[lead] == ' ');
    if (!note && !blank) rt_str_printf(&kept, "%.*s\n", (int)len, line);
    line = end ? end + 1 : line + len;
  }
  const char *t = kept.n > TAIL_CHARS ? kept.s + kept.n - TAIL_CHARS : kept.s;
  snprintf(out, cap, "%s%s", kept.n > TAIL_CHARS ? "..." : "", t);
  size_t n = strlen(out);
  while (n && out[n - 1] == '\n') out[--n] = 0;
  free(s);
  free(kept.s);
}

/* ---- Child processes ---- */

typedef struct child {
  pid_t pid;
  double t0;                   /* when it started */
  char log[PATH_MAX];
} child;

/* Start argv (rt_fork: its own process group, dies with rooftune, no
** other descriptor), stdout and stderr into log, with
** OMP_WAIT_POLICY=passive (threads waiting at a barrier sleep instead of
** spinning: valgrind runs one thread at a time). 0, or -1 with err. */
static int spawn(child *c, char *const *argv, const char *log, rt_err *err) {
  snprintf(c->log, sizeof c->log, "%s", log);
  int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    rt_err_set(err, "cannot create %s: %s", log, strerror(errno));
    return -1;
  }
  c->t0 = rt_now();
  int keep[1] = {fd};
  c->pid = rt_fork(0, keep, 1);
  if (c->pid < 0) {
    rt_err_set(err, "fork: %s", strerror(errno));
    close(fd);
    return -1;
  }
  if (c->pid == 0) {
    dup2(keep[0], 1);
    dup2(keep[0], 2);
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execvp(argv[0], argv);
    dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(fd);
  return 0;
}

/* Wait for c until deadline; on timeout kill its process group. 0: it
** exited with status 0; -1: err says how it ended, with the log's tail. */
static int finish(child *c, double deadline, const char *what, rt_err *err) {
  int st = 0, timed_out = 0;
  for (;;) {
    pid_t r = rt_child_wait(c->pid, &st, WNOHANG);
    if (r == c->pid) break;
    if (r < 0) {
      rt_err_set(err, "%s: waitpid: %s", what, strerror(errno));
      return -1;
    }
    if (rt_now() >= deadline) {
      st = rt_child_kill(c->pid);
      timed_out = 1;
      break;
    }
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
  }
  if (!timed_out && WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
  char tail[TAIL_CHARS + 8];
  log_tail(c->log, tail, sizeof tail);
  if (timed_out)
    rt_err_set(err, "%s: timed out, killed after %.0f s; its output: %s", what,
               rt_now() - c->t0, tail);
  else if (WIFSIGNALED(st))
    rt_err_set(err, "%s: killed by signal %d (%s); its output: %s", what,
               WTERMSIG(st), strsignal(WTERMSIG(st)), tail);
  else
    rt_err_set(err, "%s: exit status %d; its output: %s", what,
               WIFEXITED(st) ? WEXITSTATUS(st) : -1, tail);
  return -1;
}

/* Run argv to completion (timeout secs), output into log. */
static int run_cmd(char *const *argv, const char *log, double timeout,
                   const char *what, rt_err *err) {
  child c;
  if (spawn(&c, argv, log, err)) return -1;
  return finish(&c, rt_now() + timeout, what, err);
}

/* ---- cachegrind's availability ---- */

int hw_cachegrind_available(const char **why) {
  static int probed, avail;
  static char reason[600];
  if (!probed) {
    probed = 1;
    char dir[] = "/tmp/rooftune_cgprobe_XXXXXX", log[64];
    if (!mkdtemp(dir)) {
      snprintf(reason, sizeof reason, "cannot create a temporary directory: %s",
               strerror(errno));
    } else {
      snprintf(log, sizeof log, "%s/log", dir);
      char *argv[] = {"valgrind", "--version", NULL};
      rt_err err = {0};
      if (run_cmd(argv, log, 30, "valgrind --version", &err) == 0) {
        char *out = slurp(log, NULL);
        avail = out && !strncmp(out, "valgrind-", 9);
        if (!avail)
          snprintf(reason, sizeof reason, "valgrind --version printed \"%.80s\"",
                   out ? out : "");
        free(out);
      } else if (strstr(err.msg, "exit status 127")) {
        snprintf(reason, sizeof reason, "valgrind is not on PATH (%.400s)", err.msg);
      } else {
        snprintf(reason, sizeof reason, "%.500s", err.msg);
      }
      unlink(log);
      rmdir(dir);
    }
  }
  if (why) *why = avail ? "" : reason;
  return avail;
}

/* ---- Cache geometry ---- */

/* Associativity of cpu0's cache of this level (instr: the instruction
** cache, else the data or unified one); 0 when unknown. */
static int sysfs_ways(int level, int instr) {
  hw_cache hc[16];
  const hw_cache *h = hw_cache_find(hc, hw_caches(hc, 16), level, instr);
  return h ? h->ways : 0;
}

/* Size in bytes of cpu0's instruction cache (sysfs "32K"); 0 unknown. */
static long sysfs_icache(void) {
  for (int i = 0; i < 16; i++) {
    char path[96], type[32] = "";
    long kb = 0;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
    FILE *f = fopen(path, "re");
    if (!f) break;
    int ok = fscanf(f, "%31s", type) == 1;
    fclose(f);
    if (!ok || strcmp(type, "Instruction")) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if (!(f = fopen(path, "re"))) return 0;
    ok = fscanf(f, "%ldK", &kb) == 1;
    fclose(f);
    return ok ? kb << 10 : 0;
  }
  return 0;
}

/* A cache as cachegrind simulates it. */
typedef struct cg_cache {
  long size;
  int ways, line;
  long real_size;     /* what was asked for */
  int real_ways;
} cg_cache;

/* The geometry for a cache of size bytes and ways ways: as is when its
** set count is a power of two, else the largest power-of-two set count
** not above the real one with as many ways as fit in size (never larger
** than the real cache). -1 when size holds no line. */
static int cg_geometry(double size, int ways, int line, cg_cache *c) {
  if (!(size >= line) || size > 1e15) return -1;
  long sz = (long)size;
  if (ways < 1) ways = 1;
  *c = (cg_cache){.size = sz, .ways = ways, .line = line, .real_size = sz,
                  .real_ways = ways};
  long sets = sz / ((long)line * ways);
  if (sets < 1) {   /* fewer lines than ways: fully associative */
    c->ways = (int)(sz / line);
    c->size = (long)c->ways * line;
    return 0;
  }
  long p2 = 1;
  while (p2 * 2 <= sets) p2 *= 2;
  if (p2 == sets && sz % ((long)line * ways) == 0) return 0;
  c->ways = (int)(sz / (p2 * line));
  c->size = p2 * line * (long)c->ways;
  return 0;
}

static void cg_opt(char *out, size_t cap, const char *name, const cg_cache *c) {
  snprintf(out, cap, "--%s=%ld,%d,%d", name, c->size, c->ways, c->line);
}

/* ---- Building ---- */

/* Copy the shim into the cache under a content-addressed name (so the
** compile-cache key, which hashes the flags, changes with its content). */
static int install_shim(const char *dir, char *out, size_t cap, rt_err *err) {
  char where[PATH_MAX];
  rt_project_path(SHIM_REL, where, sizeof where);
  size_t n = 0;
  char *text = slurp(where, &n);
  if (!text) {
    rt_err_set(err, "cannot read the AVX-512 shim %s: %s", where, strerror(errno));
    return -1;
  }
  char key[33];
  rt_hash_hex(rt_hash_bytes(RT_HASH_INIT, text, n), key);
  snprintf(out, cap, "%s/cm_shim512-%s.h", dir, key);
  int rc = 0;
  if (access(out, R_OK) && write_atomic(out, text, n, 0644)) {
    rt_err_set(err, "cannot write %s: %s", out, strerror(errno));
    rc = -1;
  }
  free(text);
  return rc;
}

/* The driver executable in dir (built on first use per compiler). */
static int build_driver(const char *dir, char *exe, size_t cap, rt_err *err) {
  char cc[1024];
  ms_compiler(cc, sizeof cc);
  rt_hash h = rt_hash_bytes(RT_HASH_INIT, driver_src, sizeof driver_src - 1);
  h = rt_hash_bytes(h, cc, strlen(cc));
  char key[33], csrc[PATH_MAX], tmp[PATH_MAX + 64], log[PATH_MAX + 64];
  rt_hash_hex(h, key);
  snprintf(exe, cap, "%s/cm_cgdriver-%s", dir, key);
  if (access(exe, X_OK) == 0) return 0;
  snprintf(csrc, sizeof csrc, "%s/cm_cgdriver-%s.c", dir, key);
  if (write_atomic(csrc, driver_src, sizeof driver_src - 1, 0644)) {
    rt_err_set(err, "cannot write %s: %s", csrc, strerror(errno));
    return -1;
  }
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", exe, (long)getpid());
  snprintf(log, sizeof log, "%s.log.%ld", exe, (long)getpid());
  /* $CC split at blanks, as ms_build does */
  const char *ccenv = getenv("CC");
  char words[1024];
  snprintf(words, sizeof words, "%s", ccenv && *ccenv ? ccenv : "cc");
  char *argv[32];
  int n = 0;
  for (char *w = strtok(words, " \t"); w && n < 20; w = strtok(NULL, " \t"))
    argv[n++] = w;
  char *rest[] = {"-O1", "-g", "-o", tmp, csrc, "-ldl", NULL};
  for (int i = 0; rest[i]; i++) argv[n++] = rest[i];
  argv[n] = NULL;
  int rc = run_cmd(argv, log, DRV_TIMEOUT_S, "compiling the cachegrind driver", err);
  if (rc == 0 && rename(tmp, exe)) {
    rt_err_set(err, "rename %s: %s", tmp, strerror(errno));
    rc = -1;
  }
  unlink(tmp);
  unlink(log);
  return rc;
}

/* What a count or a native run needs: the candidate built with the shim
** (its .so and the basename of its source in the cache), the driver, and
** a private temporary directory. */
typedef struct prep {
  char dir[CG_DIRMAX];         /* the compile cache */
  char so[PATH_MAX];
  char src_base[64];           /* KEY.c: cachegrind's fl= of the candidate */
  char driver[PATH_MAX];
  char tmp[64];                /* mkdtemp'ed */
} prep;

static int prepare(const char *src, const char *cache_dir, prep *p, rt_err *err) {
  memset(p, 0, sizeof *p);
  ms_cache_path(cache_dir, p->dir, sizeof p->dir);
  if (strlen(p->dir) + 1 >= sizeof p->dir) {
    rt_err_set(err, "the compile cache path %.80s... is too long", p->dir);
    return -1;
  }
  if (strpbrk(p->dir, " \t\n")) {
    rt_err_set(err, "the compile cache %s has a blank in its path (compiler "
               "flags are split at blanks)", p->dir);
    return -1;
  }
  if (ms_mkdirs(p->dir)) {
    rt_err_set(err, "cannot create the compile cache %s: %s", p->dir, strerror(errno));
    return -1;
  }
  char shim[PATH_MAX], flags[PATH_MAX + 256];
  if (install_shim(p->dir, shim, sizeof shim, err)) return -1;
  snprintf(flags, sizeof flags, "%s -include %s", CG_CFLAGS, shim);
  ms_opts o;
  ms_opts_default(&o);
  o.cache_dir = p->dir;
  o.cflags = flags;
  rt_str log = {0};
  int hit = 0;
  if (ms_build(src, NULL, &o, p->so, sizeof p->so, &hit, &log)) {
    const char *l = log.s ? log.s : "";
    const char *e = strstr(l, "error");
    while (e && e > l && e[-1] != '\n') e--;
    rt_err_set(err, "compiling the candidate for cachegrind (%s + shim): %.400s",
               CG_CFLAGS, e ? e : l);
    free(log.s);
    return -1;
  }
  free(log.s);
  const char *b = strrchr(p->so, '/');
  b = b ? b + 1 : p->so;
  snprintf(p->src_base, sizeof p->src_base, "%.*sc", (int)strlen(b) - 2, b);
  if (build_driver(p->dir, p->driver, sizeof p->driver, err)) return -1;
  const char *t = getenv("TMPDIR");
  snprintf(p->tmp, sizeof p->tmp, "%s/rooftune_cg_XXXXXX",
           t && *t && strlen(t) < 30 ? t : "/tmp");
  if (!mkdtemp(p->tmp)) {
    rt_err_set(err, "mkdtemp %s: %s", p->tmp, strerror(errno));
    p->tmp[0] = 0;
    return -1;
  }
  return 0;
}

/* Remove the temporary directory and the files named in it. */
static void cleanup(prep *p) {
  static const char *const names[] = {"data", "out", "cg.L2", "cg.L3",
                                      "log.L2", "log.L3", "log.native"};
  if (!p->tmp[0]) return;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char f[PATH_MAX];
    snprintf(f, sizeof f, "%s/%s", p->tmp, names[i]);
    unlink(f);
  }
  rmdir(p->tmp);
}

/* Write the data file: k's buffers for pb, each page-aligned, with the
** contents of bufs (NULL: inputs from mt19937 seed 42 in [-1, 1], outputs
** zero). nbuf/b get the buffers. */
static int write_data(const char *path, const kn_kernel *k, const kn_problem *pb,
                      float *const *bufs, kn_buf *b, int *nbuf, rt_err *err) {
  int n = k->buffers(pb, b);
  if (n < 1 || n > KN_MAXBUF || n > DRV_MAXBUF) {
    rt_err_set(err, "kernel %s: %d buffers (expected 1..%d)", k->name, n, KN_MAXBUF);
    return -1;
  }
  *nbuf = n;
  long page = sysconf(_SC_PAGESIZE);
  if (page < 64) page = 4096;
  drv_hdr h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, DRV_MAGIC, 8);
  h.nbuf = n;
  int64_t off = page;
  for (int i = 0; i < n; i++) {
    if (b[i].n < 0) {
      rt_err_set(err, "kernel %s: buffer %s has %lld elements", k->name,
                 b[i].name, (long long)b[i].n);
      return -1;
    }
    h.off[i] = off;
    h.bytes[i] = b[i].n * (int64_t)sizeof(float);
    h.out[i] = b[i].out;
    off += ((h.bytes[i] > 64 ? h.bytes[i] : 64) + page - 1) / page * page;
  }
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    rt_err_set(err, "cannot create %s: %s", path, strerror(errno));
    return -1;
  }
  int ok = ftruncate(fd, off) == 0 && pwrite(fd, &h, sizeof h, 0) == (ssize_t)sizeof h;
  gsl_rng *rng = bufs ? NULL : gsl_rng_alloc(gsl_rng_mt19937);
  if (rng) gsl_rng_set(rng, 42);
  float *chunk = rt_malloc(65536 * sizeof *chunk);
  for (int i = 0; i < n && ok; i++) {
    if (!bufs && b[i].out) continue;   /* zero: the file's hole */
    for (int64_t j = 0; j < b[i].n && ok; j += 65536) {
      int64_t m = b[i].n - j < 65536 ? b[i].n - j : 65536;
      const float *src = bufs ? bufs[i] + j : chunk;
      if (!bufs)
        for (int64_t q = 0; q < m; q++)
          chunk[q] = (float)(2.0 * gsl_rng_uniform(rng) - 1.0);
      size_t want = (size_t)m * sizeof(float);
      ok = pwrite(fd, src, want, h.off[i] + j * (int64_t)sizeof(float)) == (ssize_t)want;
    }
  }
  free(chunk);
  if (rng) gsl_rng_free(rng);
  if (close(fd)) ok = 0;
  if (!ok) rt_err_set(err, "cannot write %s: %s", path, strerror(errno));
  return ok ? 0 : -1;
}

/* ---- cachegrind's output ---- */

typedef struct cg_counts {
  double ir, d1, ll;           /* Ir, D1mr + D1mw, DLmr + DLmw */
} cg_counts;

/* Whether the word after "fl=" names the candidate's source (its
** basename is the content-addressed KEY.c). */
static int is_candidate_file(const char *fl, size_t len, const char *base) {
  size_t bl = strlen(base);
  return len >= bl && !memcmp(fl + len - bl, base, bl) &&
         (len == bl || fl[len - bl - 1] == '/');
}

/* Sum the events of the candidate's functions in cachegrind output text
** (fl=/fn= lines, count lines "LINE v1 v2 ..." in the order of the
** events: header, missing trailing values 0). The candidate's functions
** are the fn= names seen under its source file; their lines under any
** file (inlined headers) count. want names the D1/LL geometry the file
** must report. 0, or -1 with err. */
static int cg_parse(char *text, const char *base, const cg_cache *d1,
                    const cg_cache *ll, cg_counts *out, rt_err *err) {
  enum { E_IR, E_D1MR, E_D1MW, E_DLMR, E_DLMW, E_N };
  static const char *const want_ev[E_N] = {"Ir", "D1mr", "D1mw", "DLmr", "DLmw"};
  int col[E_N] = {-1, -1, -1, -1, -1}, nev = 0;
  /* the functions under the candidate's file (few: a small list) */
  char **fns = NULL;
  int nfn = 0;
  char desc_d1[128], desc_ll[128];
  snprintf(desc_d1, sizeof desc_d1, " %ld B, %d B, %d-way", d1->size, d1->line, d1->ways);
  snprintf(desc_ll, sizeof desc_ll, " %ld B, %d B, %d-way", ll->size, ll->line, ll->ways);
  int saw_d1 = 0, saw_ll = 0, rc = -1;
  for (int pass = 0; pass < 2; pass++) {
    int in_cand_file = 0, counting = 0;
    memset(out, 0, sizeof *out);
    for (char *line = text; *line;) {
      char *end = strchr(line, '\n');
      size_t len = end ? (size_t)(end - line) : strlen(line);
      char *next = end ? end + 1 : line + len;
      if (pass == 0 && !strncmp(line, "events:", 7)) {
        char *p = line + 7;
        while (p < line + len) {
          while (p < line + len && *p == ' ') p++;
          size_t wl = 0;
          while (p + wl < line + len && p[wl] != ' ') wl++;
          if (!wl) break;
          for (int e = 0; e < E_N; e++)
            if (strlen(want_ev[e]) == wl && !memcmp(p, want_ev[e], wl)) col[e] = nev;
          nev++;
          p += wl;
        }
      } else if (pass == 0 && !strncmp(line, "desc: D1 cache:", 15)) {
        saw_d1 = strstr(line, desc_d1) && strstr(line, desc_d1) < line + len ? 1 : -1;
      } else if (pass == 0 && !strncmp(line, "desc: LL cache:", 15)) {
        saw_ll = strstr(line, desc_ll) && strstr(line, desc_ll) < line + len ? 1 : -1;
      } else if (!strncmp(line, "fl=", 3)) {
        in_cand_file = is_candidate_file(line + 3, len - 3, base);
      } else if (!strncmp(line, "fn=", 3)) {
        const char *name = line + 3;
        size_t nl = len - 3;
        int known = 0;
        for (int i = 0; i < nfn && !known; i++)
          known = strlen(fns[i]) == nl && !memcmp(fns[i], name, nl);
        if (pass == 0 && in_cand_file && !known) {
          fns = rt_realloc(fns, (size_t)(nfn + 1) * sizeof *fns);
          fns[nfn] = rt_malloc(nl + 1);
          memcpy(fns[nfn], name, nl);
          fns[nfn++][nl] = 0;
        }
        counting = pass == 1 && known;
      } else if (counting && len && *line >= '0' && *line <= '9') {
        double v[E_N] = {0};
        char *p = line, *q;
        strtoll(p, &q, 10);   /* the source line */
        for (int i = 0; i < nev && q > p; i++) {
          p = q;
          long long x = strtoll(p, &q, 10);
          if (q == p) break;
          for (int e = 0; e < E_N; e++)
            if (col[e] == i) v[e] = (double)x;
        }
        out->ir += v[E_IR];
        out->d1 += v[E_D1MR] + v[E_D1MW];
        out->ll += v[E_DLMR] + v[E_DLMW];
      }
      line = next;
    }
    if (pass == 0) {
      for (int e = 0; e < E_N; e++)
        if (col[e] < 0) {
          rt_err_set(err, "cachegrind output has no %s event (events: line "
                     "missing or cache simulation off)", want_ev[e]);
          goto done;
        }
      if (saw_d1 != 1 || saw_ll != 1) {
        rt_err_set(err, "cachegrind did not simulate the caches asked for "
                   "(D1 %s, LL %s)", desc_d1, desc_ll);
        goto done;
      }
      if (!nfn) {
        rt_err_set(err, "cachegrind output attributes nothing to the "
                   "candidate's source %s (no debug information?)", base);
        goto done;
      }
    }
  }
  rc = 0;
done:
  for (int i = 0; i < nfn; i++) free(fns[i]);
  free(fns);
  return rc;
}

/* ---- Counting ---- */

int hw_count_cachegrind(const kn_kernel *k, const kn_problem *pb,
                        const char *src, const cm_machine *m,
                        const char *cache_dir, cm_traffic *tr, rt_err *err) {
  const char *why;
  memset(tr, 0, sizeof *tr);
  for (int i = 0; i < CM_NLEVEL; i++) tr->bytes[i] = NAN;
  tr->instructions = NAN;
  if (!hw_cachegrind_available(&why)) {
    rt_err_set(err, "cachegrind is not available: %s", why);
    return -1;
  }
  int line = m->line > 0 ? m->line : 64;
  if (line < 16 || (line & (line - 1))) {
    rt_err_set(err, "cache line of %d bytes: cachegrind needs a power of two >= 16", line);
    return -1;
  }
  int have_l3 = m->cache[2] > 0;
  cg_cache i1, d1, l2, l3;
  long isz = sysfs_icache();
  int iw = sysfs_ways(1, 1);
  int ways[3];   /* the machine's (its stored ceilings), else this one's (sysfs), else a default */
  for (int l = 0; l < 3; l++)
    ways[l] = m->ways[l] > 0 ? (int)m->ways[l] : sysfs_ways(l + 1, 0) > 0 ? sysfs_ways(l + 1, 0) : l ? 16 : 8;
  if (cg_geometry(isz > 0 ? (double)isz : 32768.0, iw > 0 ? iw : 8, line, &i1) ||
      cg_geometry(m->cache[0], ways[0], line, &d1) || cg_geometry(m->cache[1], ways[1], line, &l2) ||
      (have_l3 && cg_geometry(m->cache[2], ways[2], line, &l3))) {
    rt_err_set(err, "cache sizes L1 %.0f, L2 %.0f, L3 %.0f bytes: L1 and L2 "
               "must hold at least one %d-byte line", m->cache[0], m->cache[1],
               m->cache[2], line);
    return -1;
  }
  prep p;
  int rc = -1;
  if (prepare(src, cache_dir, &p, err)) goto out;
  char data[PATH_MAX], cgout[2][PATH_MAX], log[2][PATH_MAX];
  snprintf(data, sizeof data, "%s/data", p.tmp);
  kn_buf b[KN_MAXBUF];
  int nbuf;
  if (write_data(data, k, pb, NULL, b, &nbuf, err)) goto out;
  /* both runs at once: L2 as the last level, then L3 */
  const cg_cache *lls[2] = {&l2, &l3};
  int nrun = have_l3 ? 2 : 1;
  child c[2];
  int started = 0;
  for (int r = 0; r < nrun; r++) {
    char o_i1[64], o_d1[64], o_ll[64], o_out[PATH_MAX + 32];
    snprintf(cgout[r], sizeof cgout[r], "%s/cg.%s", p.tmp, r ? "L3" : "L2");
    snprintf(log[r], sizeof log[r], "%s/log.%s", p.tmp, r ? "L3" : "L2");
    cg_opt(o_i1, sizeof o_i1, "I1", &i1);
    cg_opt(o_d1, sizeof o_d1, "D1", &d1);
    cg_opt(o_ll, sizeof o_ll, "LL", lls[r]);
    snprintf(o_out, sizeof o_out, "--cachegrind-out-file=%s", cgout[r]);
    char *argv[] = {"valgrind", "-q", "--tool=cachegrind", "--cache-sim=yes",
                    o_i1, o_d1, o_ll, o_out, p.driver, p.so, data, NULL};
    if (spawn(&c[r], argv, log[r], err)) break;
    started++;
  }
  /* the first failure ends the other run at once */
  double deadline = rt_now() + CG_TIMEOUT_S;
  int failed = started < nrun;
  rt_err e2 = {0};
  for (int r = 0; r < started; r++) {
    char what[64];
    snprintf(what, sizeof what, "cachegrind (last level %s)", r ? "L3" : "L2");
    if (finish(&c[r], failed ? 0 : deadline, what, failed ? &e2 : err)) failed = 1;
  }
  if (failed) goto out;
  cg_counts cnt[2];
  for (int r = 0; r < nrun; r++) {
    char *text = slurp(cgout[r], NULL);
    if (!text) {
      rt_err_set(err, "cachegrind wrote no %s: %s", cgout[r], strerror(errno));
      goto out;
    }
    int bad = cg_parse(text, p.src_base, &d1, lls[r], &cnt[r], err);
    free(text);
    if (bad) {
      rt_err_prefix(err, "%s", cgout[r]);
      goto out;
    }
  }
  snprintf(tr->source, sizeof tr->source, "cachegrind");
  tr->instructions = cnt[0].ir;
  tr->bytes[CM_L2 - CM_L1] = cnt[0].d1 * line;
  if (have_l3) {
    tr->bytes[CM_L3 - CM_L1] = cnt[0].ll * line;
    tr->bytes[CM_DRAM - CM_L1] = cnt[1].ll * line;
    snprintf(tr->config, sizeof tr->config,
             "cold run, threads serialised: D1=%ld,%d L2=%ld,%d L3=%ld,%d line=%d",
             d1.size, d1.ways, l2.size, l2.ways, l3.size, l3.ways, line);
  } else {
    tr->bytes[CM_DRAM - CM_L1] = cnt[0].ll * line;
    snprintf(tr->config, sizeof tr->config,
             "cold run, threads serialised: D1=%ld,%d L2=%ld,%d no L3 line=%d",
             d1.size, d1.ways, l2.size, l2.ways, line);
  }
  const cg_cache *all[3] = {&d1, &l2, &l3};
  for (int i = 0; i < 2 + have_l3; i++)
    if (all[i]->size != all[i]->real_size || all[i]->ways != all[i]->real_ways) {
      size_t n = strlen(tr->config);
      snprintf(tr->config + n, sizeof tr->config - n, " (%s real %ld,%d)",
               i == 0 ? "D1" : i == 1 ? "L2" : "L3", all[i]->real_size,
               all[i]->real_ways);
    }
  rc = 0;
out:
  cleanup(&p);
  return rc;
}

int hw_run_shimmed(const kn_kernel *k, const kn_problem *pb, const char *src,
                   const char *cache_dir, float *const *bufs, rt_err *err) {
  prep p;
  int rc = -1;
  char data[PATH_MAX], outf[PATH_MAX], log[PATH_MAX];
  kn_buf b[KN_MAXBUF];
  int nbuf;
  if (prepare(src, cache_dir, &p, err)) goto out;
  snprintf(data, sizeof data, "%s/data", p.tmp);
  snprintf(outf, sizeof outf, "%s/out", p.tmp);
  snprintf(log, sizeof log, "%s/log.native", p.tmp);
  if (write_data(data, k, pb, bufs, b, &nbuf, err)) goto out;
  char *argv[] = {p.driver, p.so, data, outf, NULL};
  if (run_cmd(argv, log, DRV_TIMEOUT_S, "the shimmed candidate under the driver", err))
    goto out;
  FILE *f = fopen(outf, "rbe");
  if (!f) {
    rt_err_set(err, "the driver wrote no %s: %s", outf, strerror(errno));
    goto out;
  }
  int ok = 1;
  for (int i = 0; i < nbuf && ok; i++)
    if (b[i].out)
      ok = fread(bufs[i], sizeof(float), (size_t)b[i].n, f) == (size_t)b[i].n;
  fclose(f);
  if (!ok) {
    rt_err_set(err, "the driver's output %s is short", outf);
    goto out;
  }
  rc = 0;
out:
  cleanup(&p);
  return rc;
}

int hw_count_papi(const kn_kernel *k, const kn_problem *pb, const char *src,
                  const ms_opts *o, cm_traffic *tr, rt_err *err) {
  static const char *const names[3] = {"PAPI_L1_DCM", "PAPI_L2_TCM", "PAPI_L3_TCM"};
  const char *why;
  memset(tr, 0, sizeof *tr);
  for (int i = 0; i < CM_NLEVEL; i++) tr->bytes[i] = NAN;
  tr->instructions = NAN;
  if (!hw_papi_available(&why)) {
    rt_err_set(err, "%s%s", strncmp(why, "no hardware counters", 20)
                                ? "no hardware counters: " : "", why);
    return -1;
  }
  ms_workload *w = ms_workload_new(k, pb, err);
  if (!w) return -1;
  ms_opts oo = *o;
  oo.counters = 1;
  oo.events = "PAPI_L1_DCM,PAPI_L2_TCM,PAPI_L3_TCM";
  ms_result r;
  int rc = -1;
  if (hw_measure(w, src, NULL, &oo, &r)) {
    rt_err_set(err, "harness: %s", r.msg);
  } else if (r.status != MS_OK) {
    rt_err_set(err, "the candidate: %s: %s", ms_status_name(r.status), r.msg);
  } else if (!r.counters) {
    rt_err_set(err, "no counts: %s", r.msg[0] ? r.msg : "the counter pass did not run");
  } else {
    long line = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
    if (line <= 0) line = 64;
    double v[3] = {NAN, NAN, NAN};
    for (int i = 0; i < r.nev; i++)
      for (int j = 0; j < 3; j++)
        if (!strcmp(r.ev_name[i], names[j])) v[j] = (double)r.ev_val[i] * (double)line;
    snprintf(tr->source, sizeof tr->source, "papi");
    tr->bytes[CM_L2 - CM_L1] = v[0];
    tr->bytes[CM_L3 - CM_L1] = v[1];
    tr->bytes[CM_DRAM - CM_L1] = v[2];
    snprintf(tr->config, sizeof tr->config,
             "warm run (harness counter pass), calling thread: "
             "PAPI_L1_DCM/L2_TCM/L3_TCM x %ld-byte lines", line);
    rc = 0;
  }
  ms_workload_free(w);
  return rc;
}
