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
  {"version", cmd_version, "", "print the version"},
  {NULL, NULL, NULL, NULL},
};

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "--version")) return cmd_version(0, NULL);
  return cli_dispatch("rooftune", commands, argc, argv);
}
