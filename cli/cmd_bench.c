/*
** cmd_bench.c -- `rooftune bench`: a target's measured ceilings (peak
** FLOP/s per instruction class, bandwidth per memory level, one thread and
** all threads; the target's row measures them: tg_bench), stored with the
** target (name + fingerprint) in the database and reused until --force
** measures again. Prints a table, or the stored JSON with --json. The
** target's backend row measures them (tg_bench); on a GPU the figures are
** one SM and all SMs.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cost_model/cm.h"
#include "../db/db.h"
#include "../targets/tg.h"
#include "cli.h"

typedef struct bench_args {
  tg_target t;
  const char *target, *db_path;
  int json, quick, threads, force;
} bench_args;

/* Parse into *a; 0, CLI_HELP or a usage error's exit code. */
static int parse(int argc, char **argv, bench_args *a) {
  *a = (bench_args){.target = "host", .db_path = "rooftune.db"};
  const cli_opt opts[] = {
    CLI_OPT_STRING("target", &a->target, "T", "the target (default host; rooftune targets lists them)"),
    CLI_OPT_STRING("db", &a->db_path, "F", "the database (default rooftune.db, created when missing)"),
    CLI_OPT_FLAG("json", &a->json, "the ceilings as JSON on stdout"),
    CLI_OPT_FLAG("quick", &a->quick, "a short, coarse run (a CPU: a sweep to 64 MiB; a GPU: to\n"
                 "256 MiB; 10 ms points)"),
    CLI_OPT_INT("threads", &a->threads, "N", 1, 256, "threads of the multi-thread figures (default: every\n"
                "CPU; CPU targets only)"),
    CLI_OPT_FLAG("force", &a->force, "measure even when ceilings are stored"),
    CLI_OPT_END,
  };
  cli_spec spec = {
    .cmd = "bench", .usage = "[--target T] [--db F] [--json] [--quick] [--threads N] [--force]",
    .about = "Measure the target's ceilings -- peak FP32 FLOP/s of each instruction class and\n"
             "read bandwidth of each memory level, on one thread and on all -- and store them\n"
             "with the target in the database. Stored ceilings of the same target (name and\n"
             "fingerprint) are shown instead of measuring again, whatever --quick and\n"
             "--threads say, unless --force is given. On a GPU the figures are one SM and\n"
             "all SMs, and L1 is shared memory.",
    .opts = opts};
  int nop, rc = cli_parse(&spec, argc, argv, &nop);
  if (rc) return rc;
  if ((rc = cli_find_target(&spec, a->target, &a->t))) return rc;
  if (a->t.be->gpu && a->threads)
    return cli_usage(&spec, "--threads applies to CPU targets only, not to '%s'", a->target);
  return 0;
}

/* "48 KiB", "2 MiB", "1.5 GiB" into buf. */
static const char *fmt_bytes(double b, char *buf, size_t cap) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, u++;
  snprintf(buf, cap, b == floor(b) ? "%.0f %s" : "%.3g %s", b, unit[u]);
  return buf;
}

static const char *const level_names[CM_NLEVEL] = {"L1", "L2", "L3", "DRAM"};

/* The working set (per thread) the sweep gave bw of level l at: the
** sweep point whose figure m it is (the first, smallest, when several). */
static double level_ws(const cm_ceilings *c, int l, int m) {
  for (int k = 0; k < c->nsweep; k++)
    if (c->sweep[k].bw[m] == c->bw[l][m]) return c->sweep[k].bytes;
  return NAN;
}

/* gpu: the figures are one SM and all SMs, L1 is shared memory, and there
** is no L3. Ceilings without a sweep (a bench that measures each level
** once) show the levels they have, without working sets; the others are
** left out (0: not measured). */
static void print_table(const cm_ceilings *c, const char *target, const char *fingerprint, int gpu) {
  char a[32], b[32], t[32];
  const char *one = gpu ? "1 SM" : "1 thread", *unit = gpu ? "SM" : "thread";
  snprintf(t, sizeof t, "%d %s%s", c->threads, unit, c->threads == 1 ? "" : "s");
  printf("ceilings of %s (fingerprint %.12s), measured %s in %.1f s\n\n", target, fingerprint,
         c->measured, c->seconds);
  printf("compute, FP32 GFLOP/s  %10s %12s\n", one, t);
  for (int k = 0; k < c->nclass; k++)
    printf("  %-12s %4d bits %10.2f %12.2f\n", c->cls[k].name, c->cls[k].bits,
           c->cls[k].flops[0] * 1e-9, c->cls[k].flops[1] * 1e-9);
  printf("  %-20s %10.2f %12.2f\n\n", "peak", c->peak[0] * 1e-9, c->peak[1] * 1e-9);
  printf("memory, read GB/s      %10s %12s  working set%s\n", one, t, gpu ? "" : " per thread");
  for (int l = 0; l < CM_NLEVEL; l++) {
    if (gpu && l == 2) continue;
    if (!c->nsweep && !(c->bw[l][0] > 0) && !(c->bw[l][1] > 0)) continue;
    if ((gpu || !c->nsweep) && l == 3 && c->dram_copy[1] > 0)
      printf("  %-20s %10.2f %12.2f  copy, bytes read + written\n", "DRAM copy",
             c->dram_copy[0] * 1e-9, c->dram_copy[1] * 1e-9);
    char cap[32] = "";
    if (c->cache[l] > 0) fmt_bytes(c->cache[l], cap, sizeof cap);
    if (!c->nsweep)
      printf("  %-4s %-15s %10.2f %12.2f\n", level_names[l], cap, c->bw[l][0] * 1e-9,
             c->bw[l][1] * 1e-9);
    else if (gpu && l != 1)   /* shared memory, DRAM: not one sweep point */
      printf("  %-4s %-15s %10.2f %12.2f  %s\n", l ? level_names[l] : "smem", cap,
             c->bw[l][0] * 1e-9, c->bw[l][1] * 1e-9, l ? "read or copy, the faster" : "");
    else
      printf("  %-4s %-15s %10.2f %12.2f  %s / %s\n", level_names[l], cap, c->bw[l][0] * 1e-9,
             c->bw[l][1] * 1e-9, fmt_bytes(level_ws(c, l, 0), a, sizeof a),
             fmt_bytes(level_ws(c, l, 1), b, sizeof b));
  }
  /* The levels come out in order on sane hardware; say so when not. */
  static const int host_lv[] = {0, 1, 2, 3}, gpu_lv[] = {0, 1, 3};
  const int *lv = gpu ? gpu_lv : host_lv;
  int nlv = gpu ? 3 : 4;
  for (int m = 0; m < 2; m++)
    for (int i = 0; i + 1 < nlv; i++) {
      int l = lv[i], u = lv[i + 1];
      if (c->bw[l][m] > 0 && c->bw[u][m] > c->bw[l][m])
        printf("  note: %s is faster than %s on %s (%.2f > %.2f GB/s): the levels are out of "
               "order%s\n", level_names[u], level_names[l], m ? t : one, c->bw[u][m] * 1e-9,
               c->bw[l][m] * 1e-9, u == 3 ? "; the DRAM working set may still be partly cached" : "");
    }
  if (!c->nsweep) return;
  if (gpu) printf("\nsweep, read GB/s (working set: %s / %s)\n", one, t);
  else printf("\nsweep, read GB/s (working set per thread: 1 thread / %s)\n", t);
  for (int k = 0; k < c->nsweep; k++)
    printf(k % 3 == 2 || k + 1 == c->nsweep ? "  %9s %7.1f / %.1f\n" : "  %9s %7.1f / %-7.1f",
           fmt_bytes(c->sweep[k].bytes, a, sizeof a), c->sweep[k].bw[0] * 1e-9, c->sweep[k].bw[1] * 1e-9);
}

int cmd_bench(int argc, char **argv) {
  bench_args a;
  int rc = parse(argc, argv, &a);
  if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
  tg_desc desc;
  rt_err err = {0};
  if (tg_describe(&a.t, &desc, &err)) return cli_fail("bench", "%s: %s", a.target, err.msg);
  db *d = db_open(a.db_path, DB_CREATE, &err);   /* stores the ceilings */
  if (!d) return cli_fail("bench", "%s", err.msg);
  char *dj = tg_desc_json(&desc), *json = NULL, measured[32];
  int64_t target_id;
  cm_ceilings c;
  rc = EXIT_FAIL;
  int found = db_begin(d, &err) || db_target_id(d, a.t.name, desc.fingerprint, dj, &target_id, &err) ||
                      db_commit(d, &err)
                  ? -1
                  : a.force ? 0 : db_ceilings_get(d, target_id, &json, measured, &err);
  if (found < 0) {
    db_rollback(d);
    cli_fail("bench", "%s: %s", a.db_path, err.msg);
    goto out;
  }
  if (found) {
    if (cm_ceilings_parse(json, &c, &err)) {
      cli_fail("bench", "%s: stored ceilings of %s: %s (--force measures again)", a.db_path, a.target,
               err.msg);
      goto out;
    }
    if (a.json) fprintf(stderr, "rooftune bench: stored on %s; --force re-measures\n", measured);
    else printf("stored on %s; --force re-measures\n", measured);
  } else {
    cm_bench_opts o;
    cm_bench_opts_default(&o);
    o.threads = a.threads;
    if (a.quick) o.quick = 1, o.time_per_point = 0.01, o.repeats = 3;
    if (isatty(STDERR_FILENO))
      fprintf(stderr, "rooftune bench: measuring the ceilings of %s (%s)...\n", a.target,
              a.quick ? "a few seconds" : a.t.be->gpu ? "under a minute" : "about a minute");
    if (tg_bench(&a.t, &o, &c, &err)) {
      cli_fail("bench", "%s", err.msg);
      goto out;
    }
    json = cm_ceilings_json(&c);
    if (db_ceilings_put(d, target_id, c.measured, json, NULL, &err)) {
      cli_fail("bench", "%s: %s", a.db_path, err.msg);
      goto out;
    }
  }
  if (a.json) printf("%s\n", json);
  else print_table(&c, a.target, desc.fingerprint, a.t.be->gpu);
  rc = EXIT_OK;
out:
  free(dj);
  free(json);
  db_close(d);
  return rc;
}
