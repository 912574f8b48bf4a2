/*
** tu_strategies.c -- the strategy table: every search strategy rooftune
** knows, by its command-line name. Adding a strategy: write ts_NAME.c
** exposing one `const tu_strategy ts_NAME`, declare it in tu.h, add one
** row here, and test it in tests/.
*/
#include <string.h>

#include "tu.h"

const tu_strategy *const tu_strategies[] = {
  &ts_exhaustive,
  &ts_random,
  &ts_annealing,
  &ts_genetic,
  &ts_de,
  &ts_pso,
  &ts_bayes,
  &ts_bandit,
  &ts_model,
  NULL,
};

const tu_strategy *tu_strategy_find(const char *name) {
  for (int i = 0; tu_strategies[i]; i++)
    if (!strcmp(tu_strategies[i]->name, name)) return tu_strategies[i];
  return NULL;
}
