/*
** cli.h -- what the command-line front end's files share: the command
** table and subcommand groups, exit codes, error reporting, the option
** tables every command parses by (cli_opt.h), the target of recorded data
** (cli_target.c) (the JSON writer is common/jw.h).
*/
#ifndef CLI_H
#define CLI_H

#include <stdint.h>
#include <stdio.h>

#include "../common/jw.h"
#include "../common/rt.h"
#include "cli_opt.h"   /* the exit codes and the option tables */

/* The rows of a command group's subcommand table (space, db, model,
** experiment) start with this; a NULL name ends the table. */
typedef struct cli_sub {
  const char *name;
  const char *usage;     /* after "usage: rooftune GROUP NAME " */
  const char *summary;   /* one line for the lists */
} cli_sub;
/* A subcommand table: rows of stride bytes, each starting with a cli_sub. */
typedef struct cli_group {
  const void *rows;
  size_t stride;
} cli_group;
#define CLI_GROUP_OF(table) {(table), sizeof *(table)}

/* One entry of the top-level command table: `rooftune NAME ...`. */
typedef struct cli_cmd {
  const char *name;
  int (*fn)(int argc, char **argv);  /* argv[0] is the command's name */
  const char *summary;               /* one line for the command list */
  const cli_group *group;            /* a group's subcommands, named after the
                                     ** summary in the list (NULL: none) */
} cli_cmd;

/* Dispatch argv[1] among cmds (prefix is "rooftune"); handles
** --help/-h/help and unknown names ("did you mean"). */
int cli_dispatch(const char *prefix, const cli_cmd *cmds, int argc, char **argv);
void cli_list(FILE *f, const char *prefix, const cli_cmd *cmds);

/* The row of group g for `rooftune GROUP SUB ...`. Handles a missing
** name, --help/-h/help (the list of g's rows) and unknown names ("did you
** mean"): then NULL, with the exit code in *rc. */
const void *cli_pick(const char *group, const cli_group *g, int argc, char **argv, int *rc);
/* The i-th row of g (no bounds check). */
const cli_sub *cli_group_row(const cli_group *g, int i);

/* Report "rooftune CMD: message" on stderr; return EXIT_FAIL. */
int cli_fail(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* rt_out_open(o, path) for an output file of command cmd, refusing its
** inputs: the database db (NULL: none) with SQLite's files beside it (-wal,
** -shm, -journal) and the NULL-terminated list inputs (NULL: none); the
** README's "Output files" states the rule. 0, or EXIT_FAIL after
** reporting "rooftune CMD: why". */
int cli_out_open(rt_out *o, const char *cmd, const char *path, const char *db,
                 const char *const *inputs);

/* Workload keys ("KERNEL DTYPE VAR=VALUE ...", db_workload_key): the
** bindings text "VAR=VALUE,..." of a key (NULL when it has no variables;
** caller frees), and whether a key binds every variable of set as set
** does. */
struct sp_binding;
char *cli_key_bindings(const char *key);
int cli_key_matches(const char *key, const struct sp_binding *set, int nset);

/* Checks of option texts (cli_opt.check), found without reading any
** input: --set VAR=VALUE,... (sp_parse_bindings' syntax), --budget N|P%
** (N >= 1 evaluations, 0 < P <= 100), --fingerprint P (1 to 32 letters
** or digits: hex, or "external"). */
int cli_check_set(const char *arg, char *msg, size_t cap);
int cli_check_budget(const char *arg, char *msg, size_t cap);
int cli_check_fingerprint(const char *arg, char *msg, size_t cap);

/* The target (tg.h: an instance name, resolved into *t) and the kernel
** template of names given to command s: 0, or the exit code of a usage
** error (an unknown or malformed target or kernel, with "did you mean");
** cli_kernel: NULL after one, *rc set. */
struct tg_target;
int cli_find_target(const cli_spec *s, const char *name, struct tg_target *t);
struct kn_kernel;
const struct kn_kernel *cli_kernel(const cli_spec *s, const char *target, const char *kernel, int *rc);
/* ---- A T1 kernel on the command line (cli_t1.c) ----
** --t1 FILE (the user's own kernel: targets/user/uk.h), --kernel-dir DIR,
** --atol A, --rtol R: the same rows in every command's table that
** generates a kernel's code (CLI_OPTS_T1, for subcommands mask). */
typedef struct cli_t1 {
  const char *file, *dir;
  double atol, rtol;
  int atol_given, rtol_given;
} cli_t1;
#define CLI_OPTS_T1(t, m)                                                                          \
  CLI_OPT_STRING("t1", &(t)->file, "FILE", "your own kernel: a T1 file's KernelSpecification (the\n"   \
                 "file is its space; the target defaults from its Language);\ninstead of --kernel",   \
                 .mask = (m)),                                                                     \
  CLI_OPT_STRING("kernel-dir", &(t)->dir, "DIR", "the T1 kernel's source files are under DIR (default:\n" \
                 "beside the T1 file)", .mask = (m)),                                              \
  CLI_OPT_DOUBLE("atol", &(t)->atol, "A", 0, 1e300, "a T1 kernel's outputs match when |out - ref| <= A +\n" \
                 "R * |ref| (default A 1e-6)", .given = &(t)->atol_given, .mask = (m)),            \
  CLI_OPT_DOUBLE("rtol", &(t)->rtol, "R", 0, 1e300, "(default R 1e-5; integers: exactly)",          \
                 .given = &(t)->rtol_given, .mask = (m))
/* After cli_parse: load t->file (with the --set text set) and register
** it; *kernel gets its name, and *target (when target_given is 0) the
** target its Language runs on. check_target 0: the target is not known
** yet (tune --resume). 0 when --t1 is absent (and none of the others is
** given); else 0 or an exit code after reporting: a usage error (--t1 with
** --kernel, the others without --t1), the file's errors, a target of
** another backend, or a built-in kernel's name (EXIT_FAIL). */
int cli_t1_load(const cli_spec *s, const cli_t1 *t, const char *set, const char **kernel,
                const char **target, int target_given, int check_target);

/* The strategy of a name: NULL after a usage error, *rc set. */
struct tu_strategy;
const struct tu_strategy *cli_strategy(const cli_spec *s, const char *name, int *rc);

/* ---- The target of recorded data (cli_target.c) ---- */

/* What a command on recorded data asks for: --target and --fingerprint as
** given (NULL: not given), the kernel (NULL: any) and the workloads (--set
** texts; none: every workload of the kernel). */
typedef struct cli_target_req {
  const char *name, *fingerprint, *kernel;
  const char *const *sets;
  int nsets;
} cli_target_req;
/* The target found: its row, name, fingerprint, CPU model or device (from
** the stored description), whether it is this machine (its fingerprint is
** the one tg_describe gives here now), and the workloads of the kernel it
** holds trials of that the request matches (keys sorted) with their trials
** and those of status ok. Strings malloc'ed: cli_target_free. */
typedef struct cli_target {
  int64_t id, trials, ok;
  char *name, *fingerprint, *model;
  int here;
  char **keys;
  int nkeys;
} cli_target;
/* The target of the recorded data in database d (file dbpath) a command
** works on: with --fingerprint, the one stored target (named --target when
** given) whose fingerprint starts with it; else the one target holding
** trials of the kernel in the workloads asked for. 0 with *t; CLI_NO_DATA
** when no stored target holds such trials (nothing reported: a command
** that needs no recorded trial may then take this machine); otherwise an exit code
** after reporting: no match, or several (listed with their trial counts,
** asking for --fingerprint). Never this machine for someone else's data. */
#define CLI_NO_DATA (-1)
struct db;
int cli_data_target(struct db *d, const char *dbpath, const cli_target_req *q, cli_target *t,
                    const char *cmd);
void cli_target_free(cli_target *t);


/* Commands (cmd_space.c, cmd_host.c, cmd_db.c, cmd_replay.c, cmd_tune.c). */
int cmd_space(int argc, char **argv);
int cmd_targets(int argc, char **argv);
int cmd_kernels(int argc, char **argv);
int cmd_measure(int argc, char **argv);
int cmd_baseline(int argc, char **argv);
int cmd_db(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_bench(int argc, char **argv);     /* cmd_bench.c */
int cmd_model(int argc, char **argv);     /* cmd_model.c */
int cmd_experiment(int argc, char **argv);   /* cmd_experiment.c */
/* model subcommands (cli/cmd_model*.c) */
int cmd_model_roofline(int argc, char **argv);   /* cmd_model_plot.c */
extern const char cmd_model_roofline_usage[];     /* its usage line, for the table */
int cmd_model_whatif(int argc, char **argv);     /* cmd_model_whatif.c */
extern const char cmd_model_whatif_usage[];

/* The subcommand tables of the groups, for `rooftune --help`. */
extern const cli_group cmd_space_group, cmd_db_group, cmd_model_group, cmd_experiment_group;

#endif
