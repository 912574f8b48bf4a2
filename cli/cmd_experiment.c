/*
** cmd_experiment.c -- `rooftune experiment list|run NAME [--quick]`: the
** reproducible experiments. Each is a folder experiments/NAME/ with a
** README (question, method, the paper it follows, how to read the result)
** and run.sh, which does the whole experiment with rooftune's own commands
** and writes raw data (CSV and the database it used), gnuplot plots (PNG
** and SVG) and report.md into its output folder. This file holds the table
** of experiments and runs one: it fixes the output folder (default
** experiments/results/<first 12 hex digits of the host's fingerprint>/NAME/,
** emptied first), the environment the script reads (experiments/lib.sh
** documents it), and checks that a report came out.
*/
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../measure/ms.h"
#include "../targets/tg.h"
#include "cli.h"

typedef struct experiment {
  const char *name, *title;
} experiment;

/* The table: experiments/NAME/run.sh and README.md for each row. */
static const experiment experiments[] = {
  {"strategies", "comparing optimisation algorithms on T4 recordings (Willemsen et al. score, "
                 "curves over the budget)"},
  {"portability", "portability of tuned configurations across GPUs (BAT 2.0): a matrix and a "
                  "heat map"},
  {"roofline", "the roofline of tuned host kernels (Williams, Waterman and Patterson)"},
  {"fidelity", "cost-model fidelity: predicted against measured, defaults against calibrated"},
  {"search", "model-guided search efficiency: tuning curves and trials to within 5%"},
  {"vendor", "tuned kernels against vendor libraries: host gemm vs OpenBLAS, GPU gemm vs cuBLAS"},
  {NULL, NULL},
};

static const experiment *find(const char *name) {
  for (const experiment *e = experiments; e->name; e++)
    if (!strcmp(e->name, name)) return e;
  return NULL;
}

static const char usage[] = "list [--json] | run NAME [--quick] [--out DIR] [-- ARGS...]";

static int list(int argc, char **argv) {
  int json = argc > 1 && !strcmp(argv[1], "--json");
  if (argc > 1 + json) return cli_usage("experiment list", "[--json]", "unexpected argument '%s'",
                                        argv[1 + json]);
  jw w;
  jw_init(&w, stdout);
  if (json) jw_begin(&w, '[');
  for (const experiment *e = experiments; e->name; e++) {
    char dir[4096], rel[256];
    snprintf(rel, sizeof rel, "experiments/%s/run.sh", e->name);
    int present = access(rt_project_path(rel, dir, sizeof dir), R_OK) == 0;
    if (json) {
      jw_begin(&w, '{');
      jw_key(&w, "name"); jw_str(&w, e->name);
      jw_key(&w, "title"); jw_str(&w, e->title);
      jw_key(&w, "script"); jw_str(&w, rel);
      jw_key(&w, "present"); jw_bool(&w, present);
      jw_end(&w, '}');
    } else {
      printf("%-12s %s%s\n", e->name, e->title, present ? "" : " (script missing)");
    }
  }
  if (json) jw_end(&w, ']');
  return EXIT_OK;
}

/* rm -rf dir's contents (dir itself stays); 0 or -1. */
static int empty_dir(const char *dir) {
  char cmd[2 * PATH_MAX + 64];
  snprintf(cmd, sizeof cmd, "rm -rf -- '%s'/* '%s'/.[!.]* 2>/dev/null; true", dir, dir);
  return system(cmd) == 0 ? 0 : -1;
}

static int run(int argc, char **argv) {
  static const struct option opts[] = {
    {"quick", no_argument, 0, 'q'}, {"out", required_argument, 0, 'o'},
    {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
  };
  int quick = 0, ch;
  const char *out = NULL;
  optind = 0;
  opterr = 0;
  static const char run_usage[] = "NAME [--quick] [--out DIR] [-- ARGS...]";
  while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (ch == 'q') quick = 1;
    else if (ch == 'o') out = optarg;
    else if (ch == 'h') {
      printf("usage: rooftune experiment run %s\n\nRun experiment NAME end to end (experiments/NAME/"
             "run.sh); ARGS after -- go to the script (see its README: other inputs).\n"
             "  --quick    fewer repeats, smaller sizes (minutes; what the tests run)\n"
             "  --out DIR  the output folder (default experiments/results/<fingerprint>/NAME)\n",
             run_usage);
      return EXIT_OK;
    } else {
      return cli_usage("experiment run", run_usage, "unknown option or missing value: %s",
                       argv[optind - 1]);
    }
  }
  if (optind >= argc) return cli_usage("experiment run", run_usage, "NAME is required");
  const experiment *e = find(argv[optind]);
  if (!e)
    return cli_usage("experiment run", run_usage, "unknown experiment '%s' (rooftune experiment "
                     "list)", argv[optind]);
  optind++;   /* what follows NAME (after --) goes to the script */
  /* The host's fingerprint names the results folder. */
  tg_desc d;
  rt_err err = {0};
  if (tg_describe("host", &d, &err)) return cli_fail("experiment", "%s", err.msg);
  char root[2048], script[4096], dir[4096], rel[256], exe[4096];
  rt_project_path(".", root, sizeof root);
  snprintf(rel, sizeof rel, "experiments/%s/run.sh", e->name);
  rt_project_path(rel, script, sizeof script);
  if (access(script, R_OK))
    return cli_fail("experiment", "%s: %s", script, strerror(errno));
  if (out) snprintf(dir, sizeof dir, "%s", out);
  else {
    snprintf(rel, sizeof rel, "experiments/results/%.12s/%s", d.fingerprint, e->name);
    snprintf(dir, sizeof dir, "%s/%s", root, rel);
  }
  if (ms_mkdirs(dir) || empty_dir(dir))
    return cli_fail("experiment", "cannot make the output folder %s: %s", dir, strerror(errno));
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return cli_fail("experiment", "cannot find rooftune's own path: %s", strerror(errno));
  exe[n] = 0;
  char absdir[PATH_MAX], absroot[PATH_MAX];
  if (!realpath(dir, absdir) || !realpath(root, absroot))
    return cli_fail("experiment", "%s: %s", dir, strerror(errno));
  fflush(NULL);
  time_t t0 = time(NULL);
  pid_t pid = fork();
  if (pid < 0) return cli_fail("experiment", "fork: %s", strerror(errno));
  if (pid == 0) {
    setenv("ROOFTUNE", exe, 1);
    setenv("RT_ROOT", absroot, 1);
    setenv("RT_OUT", absdir, 1);
    setenv("RT_NAME", e->name, 1);
    setenv("RT_QUICK", quick ? "1" : "0", 1);
    setenv("RT_FINGERPRINT", d.fingerprint, 1);
    setenv("RT_VERSION", RT_VERSION, 1);
    if (chdir(absroot)) _exit(127);
    char **av = rt_calloc((size_t)(argc - optind + 3), sizeof *av);
    av[0] = "sh";
    av[1] = script;
    for (int i = optind; i < argc; i++) av[2 + i - optind] = argv[i];
    execv("/bin/sh", av);
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(st) || WEXITSTATUS(st))
    return cli_fail("experiment", "%s failed (%s %d); its output so far is in %s", e->name,
                    WIFEXITED(st) ? "exit status" : "signal",
                    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), absdir);
  char report[PATH_MAX + 16];
  snprintf(report, sizeof report, "%s/report.md", absdir);
  if (access(report, R_OK))
    return cli_fail("experiment", "%s wrote no report.md into %s", e->name, absdir);
  printf("experiment %s done in %lld s%s: %s\n", e->name, (long long)(time(NULL) - t0),
         quick ? " (quick)" : "", report);
  return EXIT_OK;
}

int cmd_experiment(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    printf("usage: rooftune experiment %s\n\n", usage);
    for (const experiment *e = experiments; e->name; e++) printf("  %-12s %s\n", e->name, e->title);
    return argc < 2 ? EXIT_USAGE : EXIT_OK;
  }
  if (!strcmp(argv[1], "list")) return list(argc - 1, argv + 1);
  if (!strcmp(argv[1], "run")) return run(argc - 1, argv + 1);
  return cli_usage("experiment", usage, "unknown subcommand '%s'", argv[1]);
}
