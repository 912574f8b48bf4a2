/*
** cmd_space.c -- `rooftune space ...`: the search-space engine on the
** command line. One table lists the subcommands with the options each
** accepts; a shared parser reads the options and loads the space, then the
** subcommand's function prints its result (text, or JSON with --json).
*/
#include <gsl/gsl_rng.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../search_spaces/sp.h"
#include "cli.h"

/* The subcommands, as bits: each option row names those that accept it. */
enum {
  S_COUNT = 1 << 0, S_ENUM = 1 << 1, S_SAMPLE = 1 << 2, S_CHECK = 1 << 3, S_RANK = 1 << 4,
  S_UNRANK = 1 << 5, S_NEIGHBOURS = 1 << 6, S_INFO = 1 << 7,
};

typedef struct sopts {
  const char *file, *set, *arg; /* arg: CONFIG_JSON or RANK where taken */
  int json, csv, replace, adjacent, has_limit;
  rt_count offset, limit, rank;
  int n;
  uint64_t seed;
} sopts;

typedef struct space_cmd {
  cli_sub sub;
  int (*fn)(sp_space *sp, const sopts *o);
  unsigned bit;
  const char *operands;
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
  {{"count", "FILE [--set VAR=VAL,...] [--json]",
    "exact number of valid configurations (and the Cartesian size)"}, sc_count, S_COUNT, "FILE"},
  {{"enum", "FILE [--set ...] [--offset N] [--limit N] [--format jsonl|csv]",
    "list valid configurations in canonical order"}, sc_enum, S_ENUM, "FILE"},
  {{"sample", "FILE -n N --seed S [--set ...] [--replace] [--format jsonl|csv]",
    "uniform random valid configurations (distinct unless --replace)"}, sc_sample, S_SAMPLE, "FILE"},
  {{"check", "FILE CONFIG_JSON [--set ...] [--json]",
    "is a configuration valid? (exit 1 if not, naming the false condition)"}, sc_check, S_CHECK,
   "FILE CONFIG_JSON"},
  {{"rank", "FILE CONFIG_JSON [--set ...] [--json]", "position of a valid configuration in canonical order"},
   sc_rank, S_RANK, "FILE CONFIG_JSON"},
  {{"unrank", "FILE RANK [--set ...] [--format jsonl|csv]", "the configuration at a position in canonical order"},
   sc_unrank, S_UNRANK, "FILE RANK"},
  {{"neighbours", "FILE CONFIG_JSON [--set ...] [--adjacent] [--format jsonl|csv]",
    "valid configurations differing in one parameter"}, sc_neighbours, S_NEIGHBOURS, "FILE CONFIG_JSON"},
  {{"info", "FILE [--set ...] [--json]", "parameters, problem variables, conditions, groups and sizes"}, sc_info,
   S_INFO, "FILE"},
  {{NULL, NULL, NULL}, NULL, 0, NULL},
};
const cli_group cmd_space_group = CLI_GROUP_OF(subcommands);

static const char *const formats[] = {"jsonl", "csv", NULL};

/* An rt_count option (--offset, --limit): exact, any size. */
static int count_cb(const cli_opt *o, const char *arg, char *msg, size_t cap) {
  if (!rt_count_parse(arg, o->value)) return 0;
  snprintf(msg, cap, "expected a whole number >= 0, got '%s'", arg);
  return -1;
}

int cmd_space(int argc, char **argv) {
  int rc;
  const space_cmd *c = cli_pick("space", &cmd_space_group, argc, argv, &rc);
  if (!c) return rc;
  char cmd[64];
  snprintf(cmd, sizeof cmd, "space %s", c->sub.name);
  sopts o = {0};
  const cli_opt opts[] = {
    CLI_OPT_STRING("set", &o.set, "VAR=VAL,...", "bind problem variables (values are Python\n"
                   "literals or constant expressions)", .check = cli_check_set),
    CLI_OPT_FLAG("json", &o.json, "machine-readable output", .mask = S_COUNT | S_CHECK | S_RANK | S_INFO),
    CLI_OPT_CHOICE("format", &o.csv, NULL, formats, "output format of configurations (default jsonl)",
                   .mask = S_ENUM | S_SAMPLE | S_UNRANK | S_NEIGHBOURS),
    CLI_OPT_CALLBACK("offset", &o.offset, "N", count_cb, "skip the first N configurations", .mask = S_ENUM),
    CLI_OPT_CALLBACK("limit", &o.limit, "N", count_cb, "print at most N configurations", .mask = S_ENUM,
                     .given = &o.has_limit),
    CLI_OPT_INT(NULL, &o.n, "N", 0, 100000000, "number of configurations to draw", .short_name = 'n',
                .mask = S_SAMPLE, .required = S_SAMPLE),
    CLI_OPT_UINT64("seed", &o.seed, "S", "seed of the generator (GSL mt19937); results are\n"
                   "reproducible only with a fixed seed", .mask = S_SAMPLE, .required = S_SAMPLE),
    CLI_OPT_FLAG("replace", &o.replace, "sample with replacement", .mask = S_SAMPLE),
    CLI_OPT_FLAG("adjacent", &o.adjacent, "only the neighbouring value in each parameter's list",
                 .mask = S_NEIGHBOURS),
    CLI_OPT_END,
  };
  cli_spec spec = {.cmd = cmd, .usage = c->sub.usage, .about = c->sub.summary, .opts = opts, .mask = c->bit,
                   .operands = c->operands};
  int nop;
  argc--, argv++;   /* the subcommand's name is its argv[0] */
  if ((rc = cli_parse(&spec, argc, argv, &nop))) return rc == CLI_HELP ? EXIT_OK : rc;
  o.file = argv[1];
  o.arg = nop > 1 ? argv[2] : NULL;
  if (c->bit == S_UNRANK && rt_count_parse(o.arg, &o.rank))
    return cli_usage(&spec, "RANK: expected a whole number >= 0, got '%s'", o.arg);

  rt_err err = {0};
  sx_arena *arena = sx_arena_new();
  sp_binding *set = NULL;
  int nset = o.set ? sp_parse_bindings(o.set, arena, &set, &err) : 0;   /* checked: cli_check_set */
  sp_space *sp = NULL;
  if (nset < 0) {
    rc = cli_fail(cmd, "%s", err.msg);
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
  int rc = sp_sample(sp, rng, o->n, !o->replace, cfgs, &err);
  if (rc == 0) {
    print_header(sp, o);
    for (int i = 0; i < o->n; i++) print_config(sp, o, cfgs + (size_t)i * np);
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
  rt_count r = o->rank;
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
