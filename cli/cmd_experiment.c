/*
** cmd_experiment.c -- `rooftune experiment list|run NAME [--quick]`: the
** reproducible experiments. Each is a folder experiments/NAME/ with a
** README (question, method, the paper it follows, how to read the result)
** and run.sh, which does the whole experiment with rooftune's own commands
** and writes raw data (CSV and the database it used), gnuplot plots (PNG
** and SVG) and report.md into its output folder. This file holds the table
** of experiments and runs one: it prepares the output folder (default
** experiments/results/<first 12 hex digits of the host's fingerprint>/NAME/)
** under the rules below, sets the environment the script reads
** (experiments/lib.sh documents it), runs the script with an argument
** vector (never a shell command line), and checks that a report came out.
**
** The output folder. Invariants:
**  1. rooftune empties only a folder holding its stamp: a regular file
**     .rooftune-experiment whose first line starts "rooftune experiment ",
**     written into every folder an experiment makes or takes.
**  2. Emptying removes what is inside the folder and nothing else: the
**     folder itself stays, a symbolic link is removed as a link (its
**     target is never reached), another file system mounted inside stops
**     it with an error; it works on descriptors (openat, unlinkat), so a
**     path swapped for a link meanwhile cannot lead it out of the folder.
**  3. `/`, $HOME, the project root, the working directory and the
**     folders above these three are refused, even with --force.
**  4. An existing folder without the stamp: an empty one is taken (and
**     stamped); any other is refused, or with --force written into as it
**     is: nothing in it is deleted and no stamp is written (a later run
**     refuses it again), though the files the script writes replace files
**     of the same names.
**  5. A path that is a symbolic link, or whose absolute form holds a
**     character the scripts' shell, gnuplot and awk programs would read
**     as syntax (quotes, backquote, $, backslash, |, control characters),
**     is refused: the scripts embed it in such programs.
*/
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
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

/* A stop signal during a run: end the script's process group, then die of
** the signal as rooftune would have (async-signal-safe). */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
static void end_script(int sig) {
  rt_child_kill_all();
  signal(sig, SIG_DFL);
  raise(sig);
}

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
  {"backends", "one kernel on every target here (rooftune targets: every backend's devices); "
               "tuned in one run, winners re-measured alternately"},
  {"t1", "a kernel of your own from its T1 file: every configuration, the pin, T4, the "
         "winner's roofline, portability against recordings"},
  {"scaling", "distributed campaigns on MPI, emulated: wall time at 1-8 worker ranks and the "
              "batch rule's loss in score (replay --mpi)"},
  {"load", "the load guard: one calibration quiet and beside a competing job, guard on and "
           "off (held-out Spearman)"},
  {NULL, NULL},
};

static const experiment *find(const char *name) {
  for (const experiment *e = experiments; e->name; e++)
    if (!strcmp(e->name, name)) return e;
  return NULL;
}

/* The subcommands: list and run. */
static int list(int argc, char **argv);
static int run(int argc, char **argv);
typedef struct experiment_cmd {
  cli_sub sub;
  int (*fn)(int argc, char **argv);
} experiment_cmd;
static const experiment_cmd subcommands[] = {
  {{"list", "[--json]", "the experiments, and whether their scripts are here"}, list},
  {{"run", "NAME [--quick] [--out DIR] [--force] [-- ARGS...]",
    "run experiment NAME end to end: data, plots and report.md"}, run},
  {{NULL, NULL, NULL}, NULL},
};
const cli_group cmd_experiment_group = CLI_GROUP_OF(subcommands);

static int list(int argc, char **argv) {
  int json = 0, nop;
  const cli_opt opts[] = {CLI_OPT_FLAG("json", &json, "machine-readable output"), CLI_OPT_END};
  cli_spec spec = {.cmd = "experiment list", .usage = subcommands[0].sub.usage, .about = subcommands[0].sub.summary,
                   .opts = opts};
  int rc = cli_parse(&spec, argc, argv, &nop);
  if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
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

/* ---- The output folder (the invariants above) ---- */

#define STAMP ".rooftune-experiment"
#define STAMP_HEAD "rooftune experiment "
#define MAX_DEPTH 256   /* folders nested deeper are not emptied */

/* The first character of path that the scripts would read as syntax
** (invariant 5), or NULL. */
static const char *unsafe_char(const char *path) {
  for (const char *c = path; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f || strchr("'\"`$\\|", *c)) return c;
  return NULL;
}

static int check_chars(const char *what, const char *path, rt_err *e) {
  const char *c = unsafe_char(path);
  if (!c) return 0;
  if ((unsigned char)*c < 0x20 || *c == 0x7f)
    rt_err_set(e, "%s %s: holds the control character 0x%02x; the experiment scripts embed this path in "
               "shell, gnuplot and awk programs: choose a path without quotes, backquotes, $, \\, | or "
               "control characters", what, path, (unsigned char)*c);
  else
    rt_err_set(e, "%s %s: holds the character %c; the experiment scripts embed this path in shell, gnuplot "
               "and awk programs: choose a path without quotes, backquotes, $, \\, | or control characters",
               what, path, *c);
  return -1;
}

/* The folders never taken (invariant 3): device and inode of each. */
typedef struct fence {
  dev_t dev[256];
  ino_t ino[256];
  const char *why[256];
  int n;
} fence;

static void fence_add(fence *f, const char *path, const char *why) {
  struct stat st;
  if (!path || !*path || f->n == 256 || stat(path, &st) || !S_ISDIR(st.st_mode)) return;
  f->dev[f->n] = st.st_dev, f->ino[f->n] = st.st_ino, f->why[f->n] = why;
  f->n++;
}

/* path (absolute or relative; NULL: none) and each folder above it, up
** to `/`. */
static void fence_add_up(fence *f, const char *path, const char *self, const char *above) {
  char real[PATH_MAX];
  if (!path || !*path || !realpath(path, real)) return;
  fence_add(f, real, self);
  for (char *slash; (slash = strrchr(real, '/')) && real[1];) {
    slash[slash == real] = 0;   /* "/a" -> "/", "/a/b" -> "/a" */
    fence_add(f, real, above);
  }
}

static void fence_init(fence *f, const char *root) {
  f->n = 0;
  fence_add(f, "/", "the root folder");
  fence_add_up(f, getenv("HOME"), "your home folder ($HOME)", "a folder holding your home folder");
  const struct passwd *pw = getpwuid(getuid());
  if (pw) fence_add_up(f, pw->pw_dir, "your home folder", "a folder holding your home folder");
  fence_add_up(f, root, "rooftune's project root", "a folder holding rooftune's project root");
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd))
    fence_add_up(f, cwd, "the working directory", "a folder holding the working directory");
}

static const char *fence_hit(const fence *f, const struct stat *st) {
  for (int i = 0; i < f->n; i++)
    if (f->dev[i] == st->st_dev && f->ino[i] == st->st_ino) return f->why[i];
  return NULL;
}

/* Whether the folder open as dfd holds rooftune's stamp (invariant 1). */
static int has_stamp(int dfd) {
  int fd = openat(dfd, STAMP, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return 0;
  struct stat st;
  char head[sizeof STAMP_HEAD] = "";
  ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, head, sizeof head - 1) : -1;
  close(fd);
  return n == (ssize_t)sizeof head - 1 && !memcmp(head, STAMP_HEAD, sizeof head - 1);
}

/* Whether the folder open as dfd has no entry; -1 on error. */
static int is_empty(int dfd) {
  int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd < 0 ? NULL : fdopendir(fd);
  if (!d) {
    if (fd >= 0) close(fd);
    return -1;
  }
  int empty = 1;
  for (struct dirent *de; empty && (de = readdir(d));)
    empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
  closedir(d);
  return empty;
}

/* Remove every entry of the folder open as dfd (shown as `shown` in
** messages), the stamp excepted at depth 0, under invariant 2: dev is the
** output folder's device. 0, or -1 with e set. */
static int empty_at(int dfd, const char *shown, dev_t dev, int depth, rt_err *e) {
  if (depth > MAX_DEPTH) {
    rt_err_set(e, "%s: folders nested deeper than %d; not emptied", shown, MAX_DEPTH);
    return -1;
  }
  int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd < 0 ? NULL : fdopendir(fd);
  if (!d) {
    rt_err_set(e, "%s: %s", shown, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  int rc = 0;
  rt_str p = {0};
  for (struct dirent *de; !rc && (errno = 0, de = readdir(d));) {
    const char *name = de->d_name;
    if (!strcmp(name, ".") || !strcmp(name, "..") || (!depth && !strcmp(name, STAMP))) continue;
    p.n = 0;
    rt_str_printf(&p, "%s/%s", shown, name);
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
      if (errno == ENOENT) continue;
      rt_err_set(e, "%s: %s", p.s, strerror(errno));
      rc = -1;
    } else if (S_ISDIR(st.st_mode)) {
      int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (st.st_dev != dev) {
        rt_err_set(e, "%s: another file system is mounted there; rooftune does not empty it", p.s);
        rc = -1;
      } else if (sub < 0) {
        rt_err_set(e, "%s: %s", p.s, strerror(errno));
        rc = -1;
      } else {
        struct stat now;
        /* the folder removed must be the one emptied, not one put there meanwhile */
        if (fstat(sub, &now) || now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
          rt_err_set(e, "%s: changed while rooftune emptied the folder", p.s);
          rc = -1;
        } else {
          rc = empty_at(sub, p.s, dev, depth + 1, e);
        }
      }
      if (sub >= 0) close(sub);
      if (!rc && unlinkat(dfd, name, AT_REMOVEDIR) && errno != ENOENT) {
        rt_err_set(e, "%s: %s", p.s, strerror(errno));
        rc = -1;
      }
    } else if (unlinkat(dfd, name, 0) && errno != ENOENT) {   /* files and links alike */
      rt_err_set(e, "%s: %s", p.s, strerror(errno));
      rc = -1;
    }
  }
  if (!rc && errno) {
    rt_err_set(e, "%s: %s", shown, strerror(errno));
    rc = -1;
  }
  closedir(d);
  free(p.s);
  return rc;
}

/* Write the stamp into the folder open as dfd (a temporary file renamed
** over it); 0, or -1 with e set. */
static int write_stamp(int dfd, const char *dir, const char *name, rt_err *e) {
  static const char tmp[] = STAMP ".tmp";
  int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    rt_err_set(e, "%s/%s: %s", dir, tmp, strerror(errno));
    return -1;
  }
  char when[32] = "";
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  rt_str s = {0};
  rt_str_printf(&s, STAMP_HEAD "%s\nwritten by rooftune %s on %s\n"
                "rooftune made this folder for its results: `rooftune experiment run` empties it\n"
                "before each run into it. Remove this file to keep rooftune from doing that.\n",
                name, RT_VERSION, when);
  int bad = write(fd, s.s, s.n) != (ssize_t)s.n;
  bad |= close(fd) != 0;
  free(s.s);
  if (bad || renameat(dfd, tmp, dfd, STAMP)) {
    rt_err_set(e, "%s/%s: cannot write rooftune's stamp: %s", dir, STAMP, strerror(errno));
    unlinkat(dfd, tmp, 0);
    return -1;
  }
  return 0;
}

/* Make or take dir as experiment name's output folder under the
** invariants above (root: the project root); on success absdir holds its
** absolute path. 0, or -1 with e set. */
static int prepare_out(const char *dir, const char *name, int force, const char *root, char *absdir,
                       rt_err *e) {
  char cwd[PATH_MAX] = "";
  if (check_chars("the output folder", dir, e)) return -1;
  if (dir[0] != '/' && getcwd(cwd, sizeof cwd) && check_chars("the working directory", cwd, e)) return -1;
  struct stat st;
  int made = 0;
  if (lstat(dir, &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      rt_err_set(e, "%s: is a symbolic link; name the folder itself", dir);
      return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
      rt_err_set(e, "%s: exists and is not a folder", dir);
      return -1;
    }
  } else if (errno != ENOENT) {
    rt_err_set(e, "%s: %s", dir, strerror(errno));
    return -1;
  } else {
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", dir);
    char *slash = strrchr(parent, '/');
    while (slash && slash > parent && slash[1] == 0) *slash = 0, slash = strrchr(parent, '/');
    if (slash && slash > parent) {
      *slash = 0;
      if (ms_mkdirs(parent)) {
        rt_err_set(e, "cannot make the folder %s: %s", parent, strerror(errno));
        return -1;
      }
    }
    if (mkdir(dir, 0777)) {
      rt_err_set(e, "cannot make the output folder %s: %s", dir, strerror(errno));
      return -1;
    }
    made = 1;
  }
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    rt_err_set(e, "%s: %s", dir, strerror(errno));
    return -1;
  }
  fence f;
  fence_init(&f, root);
  const char *hit;
  int rc = 0, stamp = 1;
  if (fstat(fd, &st)) {
    rt_err_set(e, "%s: %s", dir, strerror(errno));
    rc = -1;
  } else if ((hit = fence_hit(&f, &st))) {
    rt_err_set(e, "%s: is %s; rooftune never writes its results there (--force or not): choose a new "
               "folder", dir, hit);
    rc = -1;
  } else if (!made && has_stamp(fd)) {
    rc = empty_at(fd, dir, st.st_dev, 0, e);
  } else if (!made) {
    int empty = is_empty(fd);
    if (empty < 0) {
      rt_err_set(e, "%s: %s", dir, strerror(errno));
      rc = -1;
    } else if (!empty && !force) {
      rt_err_set(e, "%s: exists, is not empty and was not made by rooftune experiment (it holds no "
                 STAMP "); choose a new or empty folder, or add --force to write into it (nothing in it "
                 "is deleted; files of the names the experiment writes are replaced)", dir);
      rc = -1;
    } else if (!empty) {
      stamp = 0;
      fprintf(stderr, "rooftune experiment: --force: writing into %s, which rooftune did not make; nothing "
              "in it is deleted, files of the names the experiment writes are replaced\n", dir);
    }
  }
  if (!rc && stamp) rc = write_stamp(fd, dir, name, e);
  close(fd);
  if (!rc && !realpath(dir, absdir)) {
    rt_err_set(e, "%s: %s", dir, strerror(errno));
    rc = -1;
  }
  if (!rc) rc = check_chars("the output folder", absdir, e);
  return rc;
}

static int run(int argc, char **argv) {
  int quick = 0, force = 0, nop;
  const char *out = NULL;
  const cli_opt opts[] = {
    CLI_OPT_FLAG("quick", &quick, "fewer repeats, smaller sizes (minutes; what the tests run)"),
    CLI_OPT_STRING("out", &out, "DIR", "the output folder (default experiments/results/<fingerprint>/NAME):\n"
                   "a new or empty folder, or one an experiment made (marked\nby its file " STAMP
                   "), which is emptied first"),
    CLI_OPT_FLAG("force", &force, "write into an existing folder rooftune did not make,\n"
                 "deleting nothing in it (files of the names the experiment\nwrites are replaced)"),
    CLI_OPT_END,
  };
  rt_str names = {0};
  for (const experiment *x = experiments; x->name; x++) rt_str_printf(&names, "  %-12s %s\n", x->name, x->title);
  rt_str epilog = {0};
  rt_str_printf(&epilog, "`/`, $HOME, the project root, the working directory and the folders above them\n"
                "are refused, --force or not. ARGS after -- go to the script (see its README).\n\n"
                "experiments:\n%s", names.s);
  free(names.s);
  cli_spec spec = {.cmd = "experiment run", .usage = subcommands[1].sub.usage,
                   .about = "Run experiment NAME end to end (experiments/NAME/run.sh).", .opts = opts,
                   .epilog = epilog.s, .operands = "NAME [ARGS...]"};
  int rc = cli_parse(&spec, argc, argv, &nop);
  const experiment *e = rc ? NULL : find(argv[1]);
  if (!rc && !e) {
    const char *cands[16];
    int n = 0;
    for (const experiment *x = experiments; x->name && n < 15; x++) cands[n++] = x->name;
    cands[n] = NULL;
    rc = cli_unknown(&spec, "experiment", argv[1], cands, "rooftune experiment list");
  }
  free(epilog.s);
  if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
  int first_arg = 2;   /* the operands after NAME go to the script */
  argc = nop + 1;
  /* The host's fingerprint names the results folder. */
  tg_desc d;
  rt_err err = {0};
  if (tg_describe_name("host", &d, &err)) return cli_fail("experiment", "%s", err.msg);
  char root[2048], script[4096], dir[4096], rel[256], exe[4096], absdir[PATH_MAX], absroot[PATH_MAX];
  rt_project_path(".", root, sizeof root);
  snprintf(rel, sizeof rel, "experiments/%s/run.sh", e->name);
  rt_project_path(rel, script, sizeof script);
  if (access(script, R_OK))   /* an installed rooftune has no experiments/ beside it */
    return cli_fail("experiment", "%s: %s: the experiments run from a source tree (a clone of "
                    "rooftune: build/rooftune experiment run %s there), or set ROOFTUNE_HOME to one",
                    script, strerror(errno), e->name);
  if (out) {   /* without trailing slashes: "link/" would name the folder the link points to */
    snprintf(dir, sizeof dir, "%s", out);
    for (size_t len = strlen(dir); len > 1 && dir[len - 1] == '/'; len--) dir[len - 1] = 0;
  } else {
    snprintf(rel, sizeof rel, "experiments/results/%.12s/%s", d.fingerprint, e->name);
    snprintf(dir, sizeof dir, "%s/%s", root, rel);
  }
  if (!realpath(root, absroot)) return cli_fail("experiment", "%s: %s", root, strerror(errno));
  if (check_chars("rooftune's project root", absroot, &err) ||
      prepare_out(dir, e->name, force, absroot, absdir, &err))
    return cli_fail("experiment", "%s", err.msg);
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return cli_fail("experiment", "cannot find rooftune's own path: %s", strerror(errno));
  exe[n] = 0;
  time_t t0 = time(NULL);
  /* The script and everything it starts form one process group (rt_fork):
  ** Ctrl-C, SIGTERM or SIGHUP to rooftune ends that group first. */
  for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++) signal(stop_signals[i], end_script);
  pid_t pid = rt_fork(0, NULL, 0);
  if (pid < 0) return cli_fail("experiment", "fork: %s", strerror(errno));
  if (pid == 0) {
    setenv("ROOFTUNE", exe, 1);
    setenv("RT_ROOT", absroot, 1);
    setenv("RT_OUT", absdir, 1);
    setenv("RT_NAME", e->name, 1);
    setenv("RT_QUICK", quick ? "1" : "0", 1);
    setenv("RT_FINGERPRINT", d.fingerprint, 1);
    setenv("RT_VERSION", RT_VERSION, 1);
    /* the script runs in the root; file operands are the user's (lib.sh rt_abs) */
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd)) setenv("RT_CWD", cwd, 1);
    else unsetenv("RT_CWD");
    if (chdir(absroot)) _exit(127);
    char **av = rt_calloc((size_t)(argc - first_arg + 3), sizeof *av);
    av[0] = "sh";
    av[1] = script;
    for (int i = first_arg; i < argc; i++) av[2 + i - first_arg] = argv[i];
    execv("/bin/sh", av);
    _exit(127);
  }
  int st = 0;
  rt_child_wait(pid, &st, 0);
  for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++) signal(stop_signals[i], SIG_DFL);
  if (!WIFEXITED(st) || WEXITSTATUS(st))
    return cli_fail("experiment", "%s failed (%s %d); its output so far is in %s", e->name,
                    WIFEXITED(st) ? "exit status" : "signal",
                    WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), absdir);
  char report[PATH_MAX + 16];
  snprintf(report, sizeof report, "%s/report.md", absdir);
  struct stat rs;   /* this run's report, not one left by an earlier run (--force) */
  if (stat(report, &rs) || !S_ISREG(rs.st_mode) || rs.st_mtime < t0 - 1)
    return cli_fail("experiment", "%s wrote no report.md into %s", e->name, absdir);
  printf("experiment %s done in %lld s%s: %s\n", e->name, (long long)(time(NULL) - t0),
         quick ? " (quick)" : "", report);
  return EXIT_OK;
}

int cmd_experiment(int argc, char **argv) {
  int rc;
  const experiment_cmd *c = cli_pick("experiment", &cmd_experiment_group, argc, argv, &rc);
  return c ? c->fn(argc - 1, argv + 1) : rc;
}
