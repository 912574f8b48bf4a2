/*
** rv_tool.c -- the RISC-V toolchain of the rvv backend (rv.h): the
** compiler and its identity, qemu's version, the runner's argument vector
** from its environment variable, the driver every artefact ends with, and
** the compile cache of artefacts (KEY.rvv.c and KEY.rvv in the harness's
** cache directory, each written under a temporary name and renamed, as
** measure/ms_build.c does for shared objects).
*/
#include "rv.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../measure/ms_backend.h"

/* The driver (rv.h: the protocol). Reads the buffer shapes and bytes from
** stdin, runs rk_run once (the checked run), keeps the outputs, runs
** WARMUP untimed and REPS timed runs, answers. */
const char rv_driver_source[] =
  "\n/* ---- rooftune rvv driver (targets/rvv/rv.h: the protocol) ---- */\n"
  "#include <riscv_vector.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <time.h>\n"
  "static double rv__now(void) {\n"
  "  struct timespec ts;\n  clock_gettime(CLOCK_MONOTONIC, &ts);\n"
  "  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;\n}\n"
  "int main(int argc, char **argv) {\n"
  "  if (argc != 3) { fprintf(stderr, \"usage: %s REPS WARMUP < buffers\\n\", argv[0]); return 2; }\n"
  "  long reps = atol(argv[1]), warm = atol(argv[2]);\n"
  "  int nbuf = 0, out[16];\n  long long bytes[16];\n  float *bufs[16], *keep[16];\n"
  "  if (reps < 0 || warm < 0 || scanf(\"rooftune-rvv-in %d\", &nbuf) != 1 || nbuf < 1 || nbuf > 16)\n"
  "    { printf(\"rvv-error bad arguments or input header\\n\"); return 1; }\n"
  "  for (int i = 0; i < nbuf; i++)\n"
  "    if (scanf(\" %lld %d\", &bytes[i], &out[i]) != 2 || bytes[i] < 1)\n"
  "      { printf(\"rvv-error bad input header\\n\"); return 1; }\n"
  "  if (getchar() != '\\n') { printf(\"rvv-error bad input header\\n\"); return 1; }\n"
  "  for (int i = 0; i < nbuf; i++) {\n"
  "    bufs[i] = aligned_alloc(64, (size_t)(bytes[i] + 63) / 64 * 64);\n"
  "    keep[i] = out[i] ? malloc((size_t)bytes[i]) : NULL;\n"
  "    if (!bufs[i] || (out[i] && !keep[i])) { printf(\"rvv-error out of memory\\n\"); return 1; }\n"
  "    if (fread(bufs[i], 1, (size_t)bytes[i], stdin) != (size_t)bytes[i])\n"
  "      { printf(\"rvv-error short input\\n\"); return 1; }\n  }\n"
  "  int rc = rk_run(bufs);\n"
  "  for (int i = 0; i < nbuf; i++) if (out[i]) memcpy(keep[i], bufs[i], (size_t)bytes[i]);\n"
  "  double *t = malloc(sizeof *t * (size_t)(reps + 1));\n"
  "  for (long r = 0; !rc && r < warm; r++) rc = rk_run(bufs);\n"
  "  for (long r = 0; !rc && r < reps; r++) {\n"
  "    double t0 = rv__now();\n    rc = rk_run(bufs);\n    t[r] = rv__now() - t0;\n  }\n"
  "  for (int i = 0; i < nbuf; i++)\n"
  "    fwrite(out[i] ? keep[i] : bufs[i], 1, (size_t)bytes[i], stdout);\n"
  "  printf(\"rvv-vlen %d\\n\", (int)(__riscv_vlenb() * 8));\n"
  "  if (rc) { printf(\"rvv-error rk_run returned %d\\n\", rc); return 1; }\n"
  "  for (long r = 0; r < reps; r++) printf(\"rvv-time %.9e\\n\", t[r]);\n"
  "  printf(\"rvv-end %ld\\n\", reps);\n  return 0;\n}\n";

const char *rv_cc(void) {
  const char *cc = getenv("ROOFTUNE_RVV_CC");
  return cc && *cc ? cc : RV_CC_DEFAULT;
}

/* The first line of argv's output (stdout and stderr), "" when it fails. */
static void first_line(char *const *argv, char *buf, size_t cap) {
  rt_str out = {0};
  int st = rt_capture(argv, 1, 4096, &out);
  buf[0] = 0;
  if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && out.s)
    snprintf(buf, cap, "%.*s", (int)strcspn(out.s, "\n"), out.s);
  free(out.s);
}

/* The absolute path of an executable name from $PATH ("" when absent). */
static void which(const char *name, char *out, size_t cap) {
  out[0] = 0;
  if (strchr(name, '/')) {
    if (access(name, X_OK) == 0) snprintf(out, cap, "%s", name);
    return;
  }
  for (const char *p = getenv("PATH"); p && *p;) {
    size_t len = strcspn(p, ":");
    char cand[PATH_MAX];
    snprintf(cand, sizeof cand, "%.*s/%s", (int)len, p, name);
    if (len && access(cand, X_OK) == 0) {
      snprintf(out, cap, "%s", cand);
      return;
    }
    p += len + (p[len] == ':');
  }
}

/* Cached per process and per compiler name. */
const char *rv_compiler(char *buf, size_t cap) {
  static char who[256], line[512];
  const char *cc = rv_cc();
  if (strcmp(who, cc)) {
    char path[PATH_MAX], ver[256];
    which(cc, path, sizeof path);
    char *argv[] = {(char *)cc, "--version", NULL};
    if (path[0]) first_line(argv, ver, sizeof ver);
    snprintf(line, sizeof line, "%.200s: %.200s", path[0] ? path : cc,
             path[0] && ver[0] ? ver : "(not found)");
    snprintf(who, sizeof who, "%s", cc);
  }
  snprintf(buf, cap, "%s", line);
  return buf;
}

const char *rv_qemu_version(void) {
  static int done;
  static char ver[256];
  if (!done) {
    char path[PATH_MAX];
    which(RV_QEMU, path, sizeof path);
    char *argv[] = {RV_QEMU, "--version", NULL};
    if (path[0]) first_line(argv, ver, sizeof ver);
    done = 1;
  }
  return ver;
}

int rv_available(const char **why) {
  static char msg[256];
  char c[768];
  rv_compiler(c, sizeof c);
  if (strstr(c, "(not found)")) {
    snprintf(msg, sizeof msg, "the RISC-V compiler %s does not run here (apt-get install clang-16 "
             "binutils-riscv64-linux-gnu libc6-dev-riscv64-cross)", rv_cc());
  } else if (!rv_qemu_version()[0]) {
    snprintf(msg, sizeof msg, "%s does not run here (apt-get install qemu-user)", RV_QEMU);
  } else {
    return 1;
  }
  if (why) *why = msg;
  return 0;
}

int rv_runner(char *buf, size_t cap, char **argv) {
  const char *s = getenv(RV_RUNNER_ENV);
  snprintf(buf, cap, "%s", s ? s : "");
  int n = 0;
  for (char *p = strtok(buf, " \t\n"); p; p = strtok(NULL, " \t\n")) {
    if (n == RV_MAXARGV - 4) return -1;
    argv[n++] = p;
  }
  argv[n] = NULL;
  return n;
}

/* ---- The compile cache (invariant 2) ---- */

static rt_hash field(rt_hash h, const char *s) {
  uint64_t len = strlen(s);
  return rt_hash_bytes(rt_hash_bytes(h, &len, sizeof len), s, len);
}

void rv_build_key(const char *src, char key[33]) {
  char who[768];
  rt_hash h = field(RT_HASH_INIT, "rvv artefact 1");
  h = field(field(field(h, src), rv_driver_source), RV_CFLAGS);
  rt_hash_hex(field(h, rv_compiler(who, sizeof who)), key);
}

int rv_build(const char *src, const ms_opts *o, char *exe, size_t cap, int *hit, rt_str *log) {
  char key[33], dir[PATH_MAX], cpath[PATH_MAX + 64], path[PATH_MAX + 64], tmp[PATH_MAX + 128];
  static unsigned seq;
  rv_build_key(src, key);
  ms_cache_path(o->cache_dir, dir, sizeof dir);
  snprintf(cpath, sizeof cpath, "%s/%s.rvv.c", dir, key);
  snprintf(path, sizeof path, "%s/%s.rvv", dir, key);
  *hit = 0;
  if (strlen(path) >= cap) {
    rt_str_printf(log, "cache path %s is too long\n", path);
    return -1;
  }
  snprintf(exe, cap, "%s", path);
  if (access(path, X_OK) == 0) return *hit = 1, 0;
  if (ms_mkdirs(dir)) {
    rt_str_printf(log, "cannot create cache directory %s: %s\n", dir, strerror(errno));
    return -1;
  }
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", cpath, (long)getpid(), seq++);
  FILE *f = fopen(tmp, "w");
  int ok = f && fputs(src, f) >= 0 && fputs(rv_driver_source, f) >= 0;
  if (f && fclose(f)) ok = 0;
  if (!ok || rename(tmp, cpath)) {
    rt_str_printf(log, "cannot write %s: %s\n", cpath, strerror(errno));
    unlink(tmp);
    return -1;
  }
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), seq++);
  char flags[] = RV_CFLAGS, *argv[16];
  int n = 0;
  argv[n++] = (char *)rv_cc();
  for (char *p = strtok(flags, " "); p; p = strtok(NULL, " ")) argv[n++] = p;
  argv[n++] = "-o", argv[n++] = tmp, argv[n++] = cpath, argv[n++] = "-lm", argv[n] = NULL;
  rt_str out = {0};
  int st = rt_capture(argv, 1, 8192, &out), rc = -1;
  if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && rename(tmp, path) == 0) {
    rc = 0;
  } else {
    for (int i = 0; i < n; i++) rt_str_printf(log, "%s ", argv[i]);
    rt_str_printf(log, "\n%s", out.s ? out.s : "");
    if (st >= 0 && WIFEXITED(st)) rt_str_printf(log, "(compiler exit status %d)\n", WEXITSTATUS(st));
    unlink(tmp);
  }
  free(out.s);
  return rc;
}

static void build_one(const char *src, void *ctx) {
  char exe[PATH_MAX];
  rt_str log = {0};
  int hit;
  rv_build(src, ctx, exe, sizeof exe, &hit, &log);
  free(log.s);
}

void rv_prebuild(const char *const *srcs, int n, const ms_opts *o, int jobs) {
  ms_prebuild_with(srcs, n, jobs, build_one, (void *)o);
}
