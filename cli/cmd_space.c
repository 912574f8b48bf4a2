/*
** cmd_space.c -- `rooftune space ...`: the search-space engine on the
** command line. One table lists the subcommands with the options each
** accepts; a shared parser reads the options and loads the space, then the
** subcommand's function prints its result (text, or JSON with --json).
*/
#include <getopt.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../search_spaces/sp.h"
#include "cli.h"

/* Options, as bits so that each subcommand lists the ones it accepts. */
enum {
  O_SET = 1 << 0, O_JSON = 1 << 1, O_FORMAT = 1 << 2, O_OFFSET = 1 << 3,
  O_LIMIT = 1 << 4, O_N = 1 << 5, O_SEED = 1 << 6, O_REPLACE = 1 << 7,
  O_ADJACENT = 1 << 8,
};

typedef struct sopts {
  const char *file, *set, *arg; /* arg: CONFIG_JSON or RANK where taken */
  int json, csv, replace, adjacent, has_limit, has_n, has_seed;
  rt_count offset, limit;
  long n;
  unsigned long seed;
} sopts;

typedef struct space_cmd {
  const char *name;
  int (*fn)(sp_space *sp, const sopts *o);
  int takes_arg;      /* a positional argument after FILE */
  unsigned opts;
  const char *args, *summary;
} space_cmd;

static int sc_count(sp_space *sp, const sopts *o);
static int sc_enum(sp_space *sp, const sopts *o);
static int sc_sample(sp_space *sp, const sopts *o);
static int sc_check(sp_space *sp, const sopts *o);
static int sc_rank(sp_space *sp, const sopts *o);
static int sc_unrank(sp_space *sp, const sopts *o);
static int sc_neighbours(sp_space *sp, const sopts *o);
static int sc_info(sp_space *sp, const sopts *o);

static const space_cmd subcommands[] = {
  {"count", sc_count, 0, O_SET | O_JSON,
   "FILE [--set VAR=VAL,...] [--json]",
   "exact number of valid configurations (and the Cartesian size)"},
  {"enum", sc_enum, 0, O_SET | O_OFFSET | O_LIMIT | O_FORMAT,
   "FILE [--set ...] [--offset N] [--limit N] [--format jsonl|csv]",
   "list valid configurations in canonical order"},
  {"sample", sc_sample, 0, O_SET | O_N | O_SEED | O_REPLACE | O_FORMAT,
   "FILE -n N --seed S [--set ...] [--replace] [--format jsonl|csv]",
   "uniform random valid configurations (distinct unless --replace)"},
  {"check", sc_check, 1, O_SET | O_JSON,
   "FILE CONFIG_JSON [--set ...] [--json]",
   "is a configuration valid? (exit 1 if not, naming the false condition)"},
  {"rank", sc_rank, 1, O_SET | O_JSON,
   "FILE CONFIG_JSON [--set ...] [--json]",
   "position of a valid configuration in canonical order"},
  {"unrank", sc_unrank, 1, O_SET | O_FORMAT,
   "FILE RANK [--set ...] [--format jsonl|csv]",
   "the configuration at a position in canonical order"},
  {"neighbours", sc_neighbours, 1, O_SET | O_ADJACENT | O_FORMAT,
   "FILE CONFIG_JSON [--set ...] [--adjacent] [--format jsonl|csv]",
   "valid configurations differing in one parameter"},
  {"info", sc_info, 0, O_SET | O_JSON, "FILE [--set ...] [--json]",
   "parameters, problem variables, conditions, groups and sizes"},
  {NULL, NULL, 0, 0, NULL, NULL},
};

static const struct { unsigned bit; const char *help; } option_help[] = {
  {O_SET, "--set VAR=VAL,...  bind problem variables (values are Python literals/expressions)"},
  {O_JSON, "--json             machine-readable output"},
  {O_FORMAT, "--format jsonl|csv  output format of configurations (default jsonl)"},
  {O_OFFSET, "--offset N         skip the first N configurations"},
  {O_LIMIT, "--limit N          print at most N configurations"},
  {O_N, "-n N               number of configurations to draw"},
  {O_SEED, "--seed S           seed of the generator (GSL mt19937); required"},
  {O_REPLACE, "--replace          sample with replacement"},
  {O_ADJACENT, "--adjacent         only the neighbouring value in each parameter's list"},
};

static void print_sub_help(const space_cmd *c) {
  printf("usage: rooftune space %s %s\n\n%s\n\noptions:\n", c->name, c->args,
         c->summary);
  for (size_t i = 0; i < sizeof option_help / sizeof *option_help; i++)
    if (c->opts & option_help[i].bit) printf("  %s\n", option_help[i].help);
  printf("  --help             this text\n");
}

static void print_help(FILE *f) {
  fprintf(f, "usage: rooftune space SUBCOMMAND FILE [options]\n\nsubcommands:\n");
  for (const space_cmd *c = subcommands; c->name; c++)
    fprintf(f, "  %-11s %s\n", c->name, c->summary);
  fprintf(f, "\nRun 'rooftune space SUBCOMMAND --help' for its options.\n");
}

static int parse_count(const char *s, rt_count *out) { return rt_count_parse(s, out); }

static int parse_opts(const space_cmd *c, int argc, char **argv, sopts *o,
                      const char *cmd) {
  static const struct option longopts[] = {
    {"set", required_argument, 0, 's'}, {"json", no_argument, 0, 'j'},
    {"format", required_argument, 0, 'f'}, {"offset", required_argument, 0, 'o'},
    {"limit", required_argument, 0, 'l'}, {"seed", required_argument, 0, 'S'},
    {"replace", no_argument, 0, 'r'}, {"adjacent", no_argument, 0, 'a'},
    {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
  };
  static const struct { int ch; unsigned bit; } bits[] = {
    {'s', O_SET}, {'j', O_JSON}, {'f', O_FORMAT}, {'o', O_OFFSET},
    {'l', O_LIMIT}, {'n', O_N}, {'S', O_SEED}, {'r', O_REPLACE},
    {'a', O_ADJACENT},
  };
  memset(o, 0, sizeof *o);
  optind = 0;
  opterr = 0;
  int ch;
  while ((ch = getopt_long(argc, argv, "n:h", longopts, NULL)) != -1) {
    if (ch == 'h') {
      print_sub_help(c);
      return -1;
    }
    if (ch == '?')
      return cli_usage_text(cmd, c->args, "unknown option or missing value: %s",
                       argv[optind - 1]);
    unsigned bit = 0;
    for (size_t i = 0; i < sizeof bits / sizeof *bits; i++)
      if (bits[i].ch == ch) bit = bits[i].bit;
    if (!(c->opts & bit))
      return cli_usage_text(cmd, c->args, "option %s does not apply here", argv[optind - 1]);
    char *end;
    switch (ch) {
    case 's': o->set = optarg; break;
    case 'j': o->json = 1; break;
    case 'r': o->replace = 1; break;
    case 'a': o->adjacent = 1; break;
    case 'f':
      if (!strcmp(optarg, "csv")) o->csv = 1;
      else if (strcmp(optarg, "jsonl"))
        return cli_usage_text(cmd, c->args, "--format: expected jsonl or csv, got '%s'", optarg);
      break;
    case 'o':
    case 'l':
      if (parse_count(optarg, ch == 'o' ? &o->offset : &o->limit))
        return cli_usage_text(cmd, c->args, "--%s: expected a non-negative integer, got '%s'",
                         ch == 'o' ? "offset" : "limit", optarg);
      o->has_limit |= ch == 'l';
      break;
    case 'n':
      o->n = strtol(optarg, &end, 10);
      if (*end || end == optarg || o->n < 0 || o->n > 100000000)
        return cli_usage_text(cmd, c->args, "-n: expected an integer in 0..1e8, got '%s'", optarg);
      o->has_n = 1;
      break;
    case 'S':
      o->seed = strtoul(optarg, &end, 10);
      if (*end || end == optarg || optarg[0] == '-')
        return cli_usage_text(cmd, c->args, "--seed: expected a non-negative integer, got '%s'", optarg);
      o->has_seed = 1;
      break;
    }
  }
  int need = 1 + c->takes_arg;
  if (argc - optind != need)
    return cli_usage_text(cmd, c->args, "expected %s, got %d argument%s",
                     need == 1 ? "FILE" : "FILE and one more argument",
                     argc - optind, argc - optind == 1 ? "" : "s");
  o->file = argv[optind];
  o->arg = c->takes_arg ? argv[optind + 1] : NULL;
  if ((c->opts & O_N) && !o->has_n)
    return cli_usage_text(cmd, c->args, "-n N is required");
  if ((c->opts & O_SEED) && !o->has_seed)
    return cli_usage_text(cmd, c->args, "--seed S is required (results are reproducible only with a fixed seed)");
  return 0;
}

int cmd_space(int argc, char **argv) {
  int rc;
  const space_cmd *c = cli_pick_old("space", subcommands, sizeof *subcommands, argc, argv, print_help, &rc);
  if (!c) return rc;
  char cmd[64];
  snprintf(cmd, sizeof cmd, "space %s", c->name);
  sopts o;
  rc = parse_opts(c, argc - 1, argv + 1, &o, cmd);
  if (rc) return rc < 0 ? EXIT_OK : rc;

  rt_err err = {0};
  sx_arena *arena = sx_arena_new();
  sp_binding *set = NULL;
  int nset = o.set ? sp_parse_bindings(o.set, arena, &set, &err) : 0;
  sp_space *sp = NULL;
  if (nset < 0) {
    rc = cli_usage_text(cmd, c->args, "%s", err.msg);
  } else if (!(sp = sp_load_file(o.file, set, nset, &err))) {
    rc = cli_fail(cmd, "%s", err.msg);
  } else {
    for (int w = 0; w < sp_nwarnings(sp); w++)
      fprintf(stderr, "rooftune %s: warning: %s\n", cmd, sp_warning(sp, w));
    rc = c->fn(sp, &o);
  }
  sp_free(sp);
  free(set);
  sx_arena_free(arena);
  return rc;
}

/* ---- Printing configurations ---- */

static void csv_field(const sx_value *v) {
  char buf[256];
  if (v->t == SX_STR) {
    const char *s = v->u.s->s;
    if (strpbrk(s, ",\"\n\r")) {
      putchar('"');
      for (; *s; s++) {
        if (*s == '"') putchar('"');
        putchar(*s);
      }
      putchar('"');
    } else {
      fputs(s, stdout);
    }
    return;
  }
  sx_repr(v, buf, sizeof buf);
  fputs(buf, stdout);
}

static void print_header(const sp_space *sp, const sopts *o) {
  if (!o->csv) return;
  for (int p = 0; p < sp_nparams(sp); p++)
    printf("%s%s", p ? "," : "", sp_param_name(sp, p));
  putchar('\n');
}

static void print_config(const sp_space *sp, const sopts *o, const int *cfg) {
  if (o->csv) {
    for (int p = 0; p < sp_nparams(sp); p++) {
      if (p) putchar(',');
      csv_field(sp_value(sp, p, cfg[p]));
    }
    putchar('\n');
  } else {
    char *s = sp_config_json(sp, cfg);
    puts(s);
    free(s);
  }
}

/* Parse the CONFIG_JSON argument (or fail naming the problem). */
static int *parse_config(const sp_space *sp, const char *text, const char *cmd) {
  int *cfg = rt_malloc((size_t)sp_nparams(sp) * sizeof *cfg);
  rt_err err = {0};
  if (sp_config_parse(sp, text, cfg, &err)) {
    cli_fail(cmd, "%s", err.msg);
    free(cfg);
    return NULL;
  }
  return cfg;
}

/* ---- Subcommands ---- */

static int sc_count(sp_space *sp, const sopts *o) {
  double t0 = rt_now();
  rt_count valid = sp_count(sp);
  double secs = rt_now() - t0;
  if (o->json) {
    jw w;
    jw_init(&w, stdout);
    jw_begin(&w, '{');
    jw_key(&w, "file"); jw_str(&w, o->file);
    jw_key(&w, "name"); jw_str(&w, sp_name(sp));
    jw_key(&w, "valid"); jw_count(&w, valid);
    jw_key(&w, "cartesian"); jw_count(&w, sp_cartesian(sp));
    jw_key(&w, "groups"); jw_int(&w, sp_ngroups(sp));
    jw_key(&w, "seconds"); jw_double(&w, secs);
    jw_end(&w, '}');
  } else {
    char buf[48];
    puts(rt_count_str(valid, buf));
  }
  if (valid == 0) fprintf(stderr, "rooftune space count: note: the space is empty\n");
  return EXIT_OK;
}

static int sc_enum(sp_space *sp, const sopts *o) {
  int *cfg = rt_malloc((size_t)sp_nparams(sp) * sizeof *cfg);
  print_header(sp, o);
  if (!o->has_limit || o->limit > 0) {
    int more = sp_unrank(sp, o->offset, cfg) == 0;
    for (rt_count k = 0; more && (!o->has_limit || k < o->limit); k++) {
      print_config(sp, o, cfg);
      more = sp_next(sp, cfg);
    }
  }
  free(cfg);
  return EXIT_OK;
}

static int sc_sample(sp_space *sp, const sopts *o) {
  int np = sp_nparams(sp);
  int *cfgs = rt_malloc((size_t)(o->n ? o->n : 1) * (size_t)np * sizeof *cfgs);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, o->seed);
  rt_err err = {0};
  int rc = sp_sample(sp, rng, (int)o->n, !o->replace, cfgs, &err);
  if (rc == 0) {
    print_header(sp, o);
    for (long i = 0; i < o->n; i++) print_config(sp, o, cfgs + (size_t)i * np);
  }
  gsl_rng_free(rng);
  free(cfgs);
  return rc ? cli_fail("space sample", "%s", err.msg) : EXIT_OK;
}

static int sc_check(sp_space *sp, const sopts *o) {
  int *cfg = parse_config(sp, o->arg, "space check");
  if (!cfg) return EXIT_FAIL;
  int failed;
  int ok = sp_valid(sp, cfg, &failed);
  rt_count rank = 0;
  if (ok) sp_rank(sp, cfg, &rank);
  if (o->json) {
    jw w;
    jw_init(&w, stdout);
    jw_begin(&w, '{');
    jw_key(&w, "valid"); jw_bool(&w, ok);
    if (ok) {
      jw_key(&w, "rank"); jw_count(&w, rank);
    } else {
      jw_key(&w, "condition"); jw_int(&w, failed);
      jw_key(&w, "expression"); jw_str(&w, sp_cond_text(sp, failed));
    }
    jw_end(&w, '}');
  } else if (ok) {
    char buf[48];
    printf("valid (rank %s)\n", rt_count_str(rank, buf));
  } else {
    printf("invalid: condition %d is false: %s\n", failed, sp_cond_text(sp, failed));
  }
  free(cfg);
  return ok ? EXIT_OK : EXIT_FAIL;
}

static int sc_rank(sp_space *sp, const sopts *o) {
  int *cfg = parse_config(sp, o->arg, "space rank");
  if (!cfg) return EXIT_FAIL;
  rt_count r;
  int failed, rc = EXIT_OK;
  if (!sp_valid(sp, cfg, &failed)) {
    rc = cli_fail("space rank", "the configuration is invalid: condition %d is false: %s",
                  failed, sp_cond_text(sp, failed));
  } else {
    sp_rank(sp, cfg, &r);
    if (o->json) {
      jw w;
      jw_init(&w, stdout);
      jw_begin(&w, '{');
      jw_key(&w, "rank"); jw_count(&w, r);
      jw_end(&w, '}');
    } else {
      char buf[48];
      puts(rt_count_str(r, buf));
    }
  }
  free(cfg);
  return rc;
}

static int sc_unrank(sp_space *sp, const sopts *o) {
  rt_count r;
  if (rt_count_parse(o->arg, &r))
    return cli_usage_text("space unrank", "FILE RANK", "RANK: expected a non-negative integer, got '%s'", o->arg);
  int *cfg = rt_malloc((size_t)sp_nparams(sp) * sizeof *cfg);
  int rc = EXIT_OK;
  if (sp_unrank(sp, r, cfg)) {
    char a[48], b[48];
    rc = cli_fail("space unrank", "rank %s is out of range: the space has %s valid configurations",
                  rt_count_str(r, a), rt_count_str(sp_count(sp), b));
  } else {
    print_header(sp, o);
    print_config(sp, o, cfg);
  }
  free(cfg);
  return rc;
}

static int sc_neighbours(sp_space *sp, const sopts *o) {
  int *cfg = parse_config(sp, o->arg, "space neighbours");
  if (!cfg) return EXIT_FAIL;
  int *nb;
  int n = sp_neighbours(sp, cfg, o->adjacent ? SP_NB_ADJACENT : SP_NB_HAMMING, &nb);
  print_header(sp, o);
  for (int i = 0; i < n; i++) print_config(sp, o, nb + (size_t)i * sp_nparams(sp));
  free(nb);
  free(cfg);
  return EXIT_OK;
}

/* "parameters": [names of the parameters ps[0..n-1]] */
static void jw_param_names(jw *w, const sp_space *sp, const int *ps, int n) {
  jw_key(w, "parameters");
  jw_begin(w, '[');
  for (int k = 0; k < n; k++) jw_str(w, sp_param_name(sp, ps[k]));
  jw_end(w, ']');
}

static void info_json(sp_space *sp, const char *file) {
  jw w;
  char buf[256];
  jw_init(&w, stdout);
  jw_begin(&w, '{');
  jw_key(&w, "file"); jw_str(&w, file);
  jw_key(&w, "name"); jw_str(&w, sp_name(sp));
  jw_key(&w, "problem_variables"); jw_begin(&w, '[');
  for (int v = 0; v < sp_nvars(sp); v++) {
    jw_begin(&w, '{');
    jw_key(&w, "name"); jw_str(&w, sp_var_name(sp, v));
    sx_repr(sp_var_value(sp, v), buf, sizeof buf);
    jw_key(&w, "value"); jw_str(&w, buf);
    jw_key(&w, "from"); jw_str(&w, sp_var_was_set(sp, v) ? "--set" : "Default");
    jw_end(&w, '}');
  }
  jw_end(&w, ']');
  jw_key(&w, "parameters"); jw_begin(&w, '[');
  for (int p = 0; p < sp_nparams(sp); p++) {
    jw_begin(&w, '{');
    jw_key(&w, "name"); jw_str(&w, sp_param_name(sp, p));
    jw_key(&w, "type"); jw_str(&w, sp_param_type(sp, p));
    jw_key(&w, "values"); jw_begin(&w, '[');
    for (int i = 0; i < sp_nvalues(sp, p); i++) {
      sx_repr(sp_value(sp, p, i), buf, sizeof buf);
      jw_str(&w, buf);
    }
    jw_end(&w, ']');
    jw_key(&w, "default");
    if (sp_default(sp, p) >= 0) {
      sx_repr(sp_value(sp, p, sp_default(sp, p)), buf, sizeof buf);
      jw_str(&w, buf);
    } else {
      jw_raw(&w, "null");
    }
    jw_key(&w, "group"); jw_int(&w, sp_group_of(sp, p));
    jw_end(&w, '}');
  }
  jw_end(&w, ']');
  jw_key(&w, "conditions"); jw_begin(&w, '[');
  for (int c = 0; c < sp_nconds(sp); c++) {
    int n;
    const int *ps = sp_cond_params(sp, c, &n);
    jw_begin(&w, '{');
    jw_key(&w, "expression"); jw_str(&w, sp_cond_text(sp, c));
    jw_param_names(&w, sp, ps, n);
    jw_end(&w, '}');
  }
  jw_end(&w, ']');
  jw_key(&w, "groups"); jw_begin(&w, '[');
  for (int g = 0; g < sp_ngroups(sp); g++) {
    int n;
    const int *ps = sp_group_params(sp, g, &n);
    jw_begin(&w, '{');
    jw_param_names(&w, sp, ps, n);
    jw_key(&w, "valid"); jw_count(&w, sp_group_count(sp, g));
    jw_key(&w, "cartesian"); jw_count(&w, sp_group_cartesian(sp, g));
    jw_end(&w, '}');
  }
  jw_end(&w, ']');
  jw_key(&w, "valid"); jw_count(&w, sp_count(sp));
  jw_key(&w, "cartesian"); jw_count(&w, sp_cartesian(sp));
  int *cfg = rt_malloc((size_t)sp_nparams(sp) * sizeof *cfg);
  jw_key(&w, "default");
  if (sp_default_config(sp, cfg)) {
    char *s = sp_config_json(sp, cfg);
    jw_begin(&w, '{');
    jw_key(&w, "config"); jw_raw(&w, s);
    jw_key(&w, "valid"); jw_bool(&w, sp_valid(sp, cfg, NULL));
    jw_end(&w, '}');
    free(s);
  } else {
    jw_raw(&w, "null");
  }
  free(cfg);
  jw_key(&w, "warnings"); jw_begin(&w, '[');
  for (int i = 0; i < sp_nwarnings(sp); i++) jw_str(&w, sp_warning(sp, i));
  jw_end(&w, ']');
  jw_end(&w, '}');
}

static int sc_info(sp_space *sp, const sopts *o) {
  if (o->json) {
    info_json(sp, o->file);
    return EXIT_OK;
  }
  char buf[256], a[48], b[48];
  printf("space %s (%s)\n", sp_name(sp), o->file);
  if (sp_nvars(sp)) {
    printf("\nproblem variables:\n");
    for (int v = 0; v < sp_nvars(sp); v++) {
      sx_repr(sp_var_value(sp, v), buf, sizeof buf);
      printf("  %-24s = %s%s\n", sp_var_name(sp, v), buf,
             sp_var_was_set(sp, v) ? "" : "  (default)");
    }
  }
  printf("\nparameters:\n");
  for (int p = 0; p < sp_nparams(sp); p++) {
    int d = sp_default(sp, p);
    if (d >= 0) sx_repr(sp_value(sp, p, d), buf, sizeof buf);
    printf("  %-24s %-6s %4d values  group %-3d default %-8s %s\n", sp_param_name(sp, p),
           sp_param_type(sp, p), sp_nvalues(sp, p), sp_group_of(sp, p),
           d >= 0 ? buf : "-", sp_param_values_text(sp, p));
  }
  printf("\nconditions:\n");
  for (int c = 0; c < sp_nconds(sp); c++)
    printf("  [%d] %s\n", c, sp_cond_text(sp, c));
  printf("\ngroups (independent parameter sets; the space is their product):\n");
  for (int g = 0; g < sp_ngroups(sp); g++) {
    int n;
    const int *ps = sp_group_params(sp, g, &n);
    printf("  %-3d %s / %s valid:", g, rt_count_str(sp_group_count(sp, g), a),
           rt_count_str(sp_group_cartesian(sp, g), b));
    for (int k = 0; k < n; k++) printf(" %s", sp_param_name(sp, ps[k]));
    putchar('\n');
  }
  rt_count valid = sp_count(sp), cart = sp_cartesian(sp);
  printf("\nvalid %s of %s (%.4g%%)\n", rt_count_str(valid, a), rt_count_str(cart, b),
         100.0 * (double)valid / (double)cart);
  int *cfg = rt_malloc((size_t)sp_nparams(sp) * sizeof *cfg);
  if (sp_default_config(sp, cfg)) {
    char *s = sp_config_json(sp, cfg);
    printf("default %s (%s)\n", s, sp_valid(sp, cfg, NULL) ? "valid" : "invalid");
    free(s);
  } else {
    printf("default: none (some parameter has no Default among its values)\n");
  }
  free(cfg);
  return EXIT_OK;
}
