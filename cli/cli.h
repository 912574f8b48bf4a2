/*
** cli.h -- what the command-line front end's files share: the command
** table entry, exit codes, error/usage reporting, and a small streaming
** JSON writer (jansson cannot print exact integers above 2^63, and counts
** of configurations go far beyond).
*/
#ifndef CLI_H
#define CLI_H

#include <stdint.h>
#include <stdio.h>

#include "../common/rt.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* One entry of a command table: `rooftune NAME ...` or a subcommand. */
typedef struct cli_cmd {
  const char *name;
  int (*fn)(int argc, char **argv);  /* argv[0] is the command's name */
  const char *args;                  /* usage after the name */
  const char *summary;               /* one line for the command list */
} cli_cmd;

/* Dispatch argv[1] among cmds (prefix is "rooftune space" etc. for
** messages); handles --help/-h/help and unknown names. */
int cli_dispatch(const char *prefix, const cli_cmd *cmds, int argc, char **argv);
void cli_list(FILE *f, const char *prefix, const cli_cmd *cmds);

/* The row of a subcommand table for `rooftune GROUP SUB ...` (rows of
** stride bytes whose first member is the name; a NULL name ends the table).
** Handles a missing name, --help and unknown names: then NULL, with the
** exit code in *rc. */
const void *cli_pick(const char *group, const void *table, size_t stride, int argc,
                     char **argv, void (*help)(FILE *f), int *rc);

/* Report "rooftune CMD: message" on stderr; return EXIT_FAIL. */
int cli_fail(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Report a usage error and the usage line; return EXIT_USAGE. */
int cli_usage(const char *cmd, const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A number >= lo from option text: 0 with *out set, -1 when the text is
** not a whole number literal or is below lo (NaN included). */
int cli_double(const char *s, double lo, double *out);

/* The long name of option value `val` in a getopt_long table ("" if
** absent): for messages, since argv[optind - 1] is the option's value when
** it was given as a separate word. */
struct option;
const char *cli_optname(const struct option *table, int val);

/* Workload keys ("KERNEL DTYPE VAR=VALUE ...", db_workload_key): the
** bindings text "VAR=VALUE,..." of a key (NULL when it has no variables;
** caller frees), and whether a key binds every variable of set as set
** does. */
struct sp_binding;
char *cli_key_bindings(const char *key);
int cli_key_matches(const char *key, const struct sp_binding *set, int nset);

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

/* Streaming JSON writer: values separated and nested automatically. */
typedef struct jw {
  FILE *f;
  int depth;
  int first[32];   /* no element written yet at this depth */
  int after_key;
} jw;
void jw_init(jw *w, FILE *f);
void jw_begin(jw *w, char open);           /* '{' or '[' */
void jw_end(jw *w, char close);            /* '}' or ']' */
void jw_key(jw *w, const char *key);
void jw_str(jw *w, const char *s);
void jw_int(jw *w, long long v);
void jw_count(jw *w, rt_count v);          /* exact, any size */
void jw_double(jw *w, double v);          /* 6 significant digits */
void jw_bool(jw *w, int v);
void jw_raw(jw *w, const char *json);      /* an already-encoded value */

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

#endif
