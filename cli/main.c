/*
** main.c -- the `rooftune` program: the top-level command table. Adding a
** command: write cmd_NAME(argc, argv) in cli/cmd_NAME.c parsing argv with
** an option table (cli_parse, cli.h) and returning an exit code (0 ok, 1
** the thing asked failed, 2 usage), declare it in cli.h, add one row
** below, add a CLI test family in tests/test_cli.c (t15xx checks -h and
** usage errors of every command by itself), and document it in README.md.
*/
#include <stdio.h>
#include <string.h>

#include "../mpi/mp.h"
#include "cli.h"

static int cmd_version(int argc, char **argv) {
  const cli_opt none[] = {CLI_OPT_END};
  cli_spec spec = {.cmd = "version", .usage = "", .about = "Print rooftune's version.", .opts = none};
  int nop, rc = argv ? cli_parse(&spec, argc, argv, &nop) : 0;
  if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
  printf("rooftune %s\n", RT_VERSION);
  return EXIT_OK;
}

/* A group's summary is followed by its subcommands' names, taken from its
** table (NULL: not a group). */
static const cli_cmd commands[] = {
  {"space", cmd_space, "search spaces", &cmd_space_group},
  {"targets", cmd_targets, "targets available here, their hardware and fingerprint", NULL},
  {"kernels", cmd_kernels, "kernel templates and their problem variables", NULL},
  {"measure", cmd_measure, "build, verify and time one schedule in an isolated worker", NULL},
  {"baseline", cmd_baseline, "the vendor library (or best available code) through the same harness", NULL},
  {"db", cmd_db, "the tuned-config database", &cmd_db_group},
  {"tune", cmd_tune, "a tuning campaign: search, measure, store every trial, pin the winner", NULL},
  {"replay", cmd_replay, "run a strategy against recorded results (simulation: no hardware needed)", NULL},
  {"compare", cmd_compare, "score strategies over repeats against random search and the optimum", NULL},
  {"bench", cmd_bench, "measure the target's ceilings (peak FLOP/s, bandwidth per memory level) and store them",
   NULL},
  {"model", cmd_model, "the cost model", &cmd_model_group},
  {"experiment", cmd_experiment,
   "the reproducible experiments: data, plots and a report under experiments/results/", &cmd_experiment_group},
  {"version", cmd_version, "print the version", NULL},
  {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "--version")) return cmd_version(0, NULL);
  /* Under mpirun or srun (mpi/mp.h) the worker ranks serve tune and
  ** replay --mpi; any other command runs on rank 0 alone. */
  mp_init(&argc, &argv);
  int serves = argc >= 2 && (!strcmp(argv[1], "tune") || !strcmp(argv[1], "replay"));
  int rc = mp_rank() > 0 && !serves ? EXIT_OK : cli_dispatch("rooftune", commands, argc, argv);
  mp_end();
  return rc;
}
