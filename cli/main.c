/*
** main.c -- the `rooftune` program: the top-level command table. Adding a
** command: write cmd_NAME(argc, argv) in cli/cmd_NAME.c returning an exit
** code (0 ok, 1 the thing asked failed, 2 usage), declare it in cli.h, add
** one row below, add a CLI test family in tests/test_cli.c, and document it
** in README.md.
*/
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int cmd_version(int argc, char **argv) {
  (void)argc;
  (void)argv;
  printf("rooftune %s\n", RT_VERSION);
  return EXIT_OK;
}

static const cli_cmd commands[] = {
  {"space", cmd_space, "SUBCOMMAND FILE [options]",
   "search spaces: count, enum, sample, check, rank, unrank, neighbours, info"},
  {"targets", cmd_targets, "[--json]", "targets available here, their hardware and fingerprint"},
  {"kernels", cmd_kernels, "[--target T] [--json]", "kernel templates and their problem variables"},
  {"measure", cmd_measure, "--kernel K --set ... --config JSON|default",
   "build, verify and time one schedule in an isolated worker"},
  {"baseline", cmd_baseline, "--kernel K --set ...",
   "the vendor library (or best available code) through the same harness"},
  {"db", cmd_db, "SUBCOMMAND [--db F] [options]",
   "the tuned-config database: init, check, stats, import, best, list"},
  {"tune", cmd_tune, "--kernel K --set VAR=VAL,... [--strategy S] [--budget N|P%] [--resume ID]",
   "a tuning campaign: search, measure, store every trial, pin the winner"},
  {"replay", cmd_replay, "(--t4 FILE --space T1 | --db F --kernel K) --strategy S [--budget N|P%]",
   "run a strategy against recorded results (simulation: no hardware needed)"},
  {"compare", cmd_compare, "(--t4 FILE --space T1 | --db F --kernel K) --strategies A,B|all",
   "score strategies over repeats against random search and the optimum"},
  {"bench", cmd_bench, "[--target host] [--db F] [--json] [--quick] [--threads N] [--force]",
   "measure the target's ceilings (peak FLOP/s, bandwidth per memory level) and store them"},
  {"model", cmd_model, "SUBCOMMAND --kernel K [options]",
   "the cost model: predict, explain, calibrate, accuracy, history, roofline"},
  {"experiment", cmd_experiment, "list | run NAME [--quick]",
   "the reproducible experiments: data, plots and a report under experiments/results/"},
  {"version", cmd_version, "", "print the version"},
  {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "--version")) return cmd_version(0, NULL);
  return cli_dispatch("rooftune", commands, argc, argv);
}
