/*
** cli_opt.h -- the exit codes of every command and the option tables every
** command parses by (cli_opt.c), with "did you mean" suggestions. It needs
** nothing else of the command line (cli.h includes it), so that cli.c's
** dispatch can use the suggestions without a circle of files.
*/
#ifndef CLI_OPT_H
#define CLI_OPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

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

#endif
