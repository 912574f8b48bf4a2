/*
** cli.h -- what the command-line front end's files share: the command
** table and subcommand groups, exit codes, error reporting, the option
** tables every command parses by (cli_opt.c), the target of recorded data
** (cli_target.c) (the JSON writer is common/jw.h).
*/
#ifndef CLI_H
#define CLI_H

#include <stdint.h>
#include <stdio.h>

#include "../common/jw.h"
#include "../common/rt.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

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

/* ---- Option tables (cli_opt.c) ----
** One table per command produces both its parsing and its --help, as git's
** parse-options does. Invariants:
**  1. Every option is one row; the help text is generated from the rows,
**     so what a command accepts and what its help says cannot drift. A
**     group's subcommands share one table, each row naming the
**     subcommands it applies to (mask) and those that require it.
**  2. Every command and subcommand accepts -h and --help (help on stdout,
**     exit 0), wherever they appear before "--".
**  3. A usage error prints "rooftune CMD: message", "usage: ..." and
**     "(rooftune CMD --help lists the options)" on stderr and gives
**     EXIT_USAGE: an unknown option (with "did you mean"), a missing
**     value, a value that is not of the option's type or range, a value
**     outside a fixed list of choices (with "did you mean"), a value its
**     check refuses, a flag given a value, an option given twice that is
**     not a list, a required option missing, an operand missing or one
**     too many. A command's own checks after parsing report through
**     cli_usage, in the same shape.
**  4. Values are stored only through the row's pointer; nothing is
**     allocated but a list's array (cli_strv_free after a 0 return; on
**     any other return cli_parse has freed it).
**  5. Options and operands may be mixed; "--" ends the options. Long
**     options are never abbreviated (a prefix is an unknown option with
**     a suggestion): a script means what it says.
** Exit codes across commands (the README's "The command line"): EXIT_USAGE
** (2) for anything wrong in how a command was called that is found without
** reading its input files or database: the above, plus unknown kernel,
** strategy, target and experiment names (cli_kernel, cli_strategy: with
** "did you mean"), the syntax of --set (cli_check_set), --budget and
** --fingerprint. EXIT_FAIL (1) when what was asked fails on its inputs: a
** file or database that cannot be read or is wrong, a --set value the
** space refuses (an unknown variable, a float for an int), a configuration
** that is not one of the space's, no data matching the request. */
typedef enum cli_kind {
  CLI_END = 0,
  CLI_FLAG,      /* int*: set to 1 */
  CLI_STRING,    /* const char**: the argument as given */
  CLI_INT,       /* int*: a whole number in [lo, hi] (hi <= lo: INT_MAX) */
  CLI_INT64,     /* int64_t*: a whole number in [lo, hi] (hi <= lo: INT64_MAX) */
  CLI_UINT64,    /* uint64_t*: a whole number in [lo, hi] (hi <= lo: UINT64_MAX) */
  CLI_DOUBLE,    /* double*: a finite number in [lo, hi] (hi <= lo: none);
                 ** flags CLI_OPEN_LO/HI exclude an end */
  CLI_LIST,      /* cli_strv*: every occurrence, in order */
  CLI_CHOICE,    /* int*: the index of the argument in choices[] */
  CLI_CALLBACK,  /* cb(row, arg, msg) checks and stores; value is its own */
  CLI_GROUP,     /* a heading in the help; name is the heading */
} cli_kind;

enum { CLI_OPEN_LO = 1, CLI_OPEN_HI = 2 };
/* .required of an option every command of its table requires. */
#define CLI_ALL (~0u)

typedef struct cli_strv {
  const char **v;
  int n;
} cli_strv;
void cli_strv_free(cli_strv *l);

typedef struct cli_opt cli_opt;
struct cli_opt {
  cli_kind kind;
  const char *name;          /* long name without "--" (NULL: short only) */
  char short_name;           /* 0: none */
  void *value;
  const char *arg;           /* the value's name in help: "FILE", "N" */
  const char *help;          /* '\n' starts an indented continuation line */
  double lo, hi;             /* numeric range */
  int flags;                 /* CLI_OPEN_LO, CLI_OPEN_HI */
  const char *const *choices;  /* CLI_CHOICE: NULL-terminated */
  /* CLI_CALLBACK: 0, or -1 with a message (without the option's name) */
  int (*cb)(const cli_opt *o, const char *arg, char *msg, size_t cap);
  /* CLI_STRING, CLI_LIST: the text is refused (-1 with a message, without
  ** the option's name) before it is stored; NULL: any text */
  int (*check)(const char *arg, char *msg, size_t cap);
  unsigned mask;             /* subcommands that accept it (0: all) */
  unsigned required;         /* subcommands that require it (CLI_ALL: every one) */
  int *given;                /* optional: set to 1 when the option appears */
};

#define CLI_OPT_FLAG(n, v, h, ...) {.kind = CLI_FLAG, .name = (n), .value = (v), .help = (h), __VA_ARGS__}
#define CLI_OPT_STRING(n, v, a, h, ...) \
  {.kind = CLI_STRING, .name = (n), .value = (v), .arg = (a), .help = (h), __VA_ARGS__}
#define CLI_OPT_INT(n, v, a, l, u, h, ...) \
  {.kind = CLI_INT, .name = (n), .value = (v), .arg = (a), .lo = (l), .hi = (u), .help = (h), __VA_ARGS__}
#define CLI_OPT_INT64(n, v, a, l, u, h, ...) \
  {.kind = CLI_INT64, .name = (n), .value = (v), .arg = (a), .lo = (l), .hi = (u), .help = (h), __VA_ARGS__}
#define CLI_OPT_UINT64(n, v, a, h, ...) \
  {.kind = CLI_UINT64, .name = (n), .value = (v), .arg = (a), .help = (h), __VA_ARGS__}
#define CLI_OPT_DOUBLE(n, v, a, l, u, h, ...) \
  {.kind = CLI_DOUBLE, .name = (n), .value = (v), .arg = (a), .lo = (l), .hi = (u), .help = (h), __VA_ARGS__}
#define CLI_OPT_LIST(n, v, a, h, ...) \
  {.kind = CLI_LIST, .name = (n), .value = (v), .arg = (a), .help = (h), __VA_ARGS__}
#define CLI_OPT_CHOICE(n, v, a, c, h, ...) \
  {.kind = CLI_CHOICE, .name = (n), .value = (v), .arg = (a), .choices = (c), .help = (h), __VA_ARGS__}
#define CLI_OPT_CALLBACK(n, v, a, f, h, ...) \
  {.kind = CLI_CALLBACK, .name = (n), .value = (v), .arg = (a), .cb = (f), .help = (h), __VA_ARGS__}
#define CLI_OPT_GROUP(heading, ...) {.kind = CLI_GROUP, .name = (heading), __VA_ARGS__}
#define CLI_OPT_END {.kind = CLI_END}

/* What a command says about itself, for its help and its errors. */
typedef struct cli_spec {
  const char *cmd;           /* "tune", "db export": after "rooftune " */
  const char *usage;         /* after "usage: rooftune CMD " (may hold "\n   or: ...") */
  const char *about;         /* a paragraph under the usage line (NULL: none) */
  const cli_opt *opts;       /* ends with CLI_OPT_END */
  unsigned mask;             /* this subcommand's bit (0: every row applies) */
  const char *epilog;        /* printed after the options (NULL: none) */
  /* The operands' names in order, blank-separated (NULL: none): a name in
  ** brackets is optional, one ending in "..." takes the rest
  ** ("FILE CONFIG_JSON", "NAME [ARGS...]", "OTHER.db..."). */
  const char *operands;
} cli_spec;

/* Parse argv (argv[0] is the command's name) by the table. Operands keep
** their order and are moved to argv[1..*nopnd]. Returns 0; CLI_HELP when
** -h/--help printed the help (the command returns EXIT_OK); EXIT_USAGE
** after reporting a usage error. */
enum { CLI_HELP = -1 };
int cli_parse(const cli_spec *s, int argc, char **argv, int *nopnd);
/* The help text of a spec, as -h prints it. */
void cli_help(FILE *f, const cli_spec *s);
/* Report a usage error of command s in invariant 3's shape; EXIT_USAGE. */
int cli_usage(const cli_spec *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The candidate closest to word (an edit distance of at most a third of
** its length, at least 1, or word a prefix of it), or NULL: for "did you
** mean". cands is NULL-terminated, or strided rows as cli_pick's. */
const char *cli_suggest(const char *word, const char *const *cands);
const char *cli_suggest_rows(const char *word, const void *table, size_t stride);
/* "unknown WHAT 'name'; did you mean 'x'? (hint)" as a usage error of s
** (cands: NULL-terminated; hint NULL: none); EXIT_USAGE. */
int cli_unknown(const cli_spec *s, const char *what, const char *name, const char *const *cands,
                const char *hint);

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
/* The subcommand tables of the groups, for `rooftune --help`. */
extern const cli_group cmd_space_group, cmd_db_group, cmd_model_group, cmd_experiment_group;

#endif
