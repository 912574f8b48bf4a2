/*
** fz_config.c -- fuzz target config: the configuration JSON parser
** (sp_config_parse) against a fixed space whose values are the hard cases
** (an int and a float that are equal, ints beyond 2^53, strings with
** quotes, a NUL and non-ASCII bytes, bools). Input: the JSON text.
**
** A parse either fails with a message or gives value indices in range
** whose canonical JSON (sp_config_json) parses to the same indices and
** prints identically. Once per process, every value of every parameter is
** checked the same way (canonical JSON of each index parses back to it).
** Caps: none needed (one parse and two prints per input).
*/
#include <stdlib.h>
#include <string.h>

#include "../search_spaces/sp.h"
#include "fz.h"

/* The fixed space (also fuzz/corpus/t1/config_space.json, so that the t1
** target starts from it too). */
static const char space_text[] =
  "{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"i\", \"Type\": \"int\", \"Values\": \"[-3, 0, 1, 2, 2**53 + 1, 9223372036854775807, -9223372036854775808]\"}, "
  "{\"Name\": \"f\", \"Type\": \"float\", \"Values\": \"[1, 1.0, 2.5, 0.1, 1e300, -0.0, 2.0**53, 2**53 + 1, 5e-324]\"}, "
  "{\"Name\": \"s\", \"Type\": \"string\", \"Values\": \"['a', '', 'a b', 'q\\\\'\\\"', 'nul\\\\x00x', '\\\\u00e9\\\\U0001F600', '1']\"}, "
  "{\"Name\": \"b\", \"Type\": \"bool\", \"Values\": \"[False, True]\"}]}}";

static sp_space *space(void) {
  static sp_space *sp;
  if (sp) return sp;
  rt_err e = {0};
  sp = sp_load_string(space_text, "config_space.json", NULL, 0, &e);
  FZ_CHECK(sp, "the fixed space does not load: %s", e.msg);
  int np = sp_nparams(sp), *cfg = rt_calloc((size_t)np, sizeof *cfg), *back = rt_calloc((size_t)np, sizeof *back);
  for (int p = 0; p < np; p++)
    for (int i = 0; i < sp_nvalues(sp, p); i++) {
      cfg[p] = i;
      char *js = sp_config_json(sp, cfg);
      FZ_CHECK(js && sp_config_parse(sp, js, back, &e) == 0, "%s does not parse: %s", js, e.msg);
      FZ_CHECK(!memcmp(back, cfg, (size_t)np * sizeof *cfg),
               "%s parses to value %d of '%s', printed from value %d", js, back[p],
               sp_param_name(sp, p), i);
      free(js);
      cfg[p] = 0;
    }
  free(cfg);
  free(back);
  return sp;
}

FZ_TARGET(config) {
  const sp_space *sp = space();
  int np = sp_nparams(sp);
  char *text = fz_text(data, size);
  int *cfg = rt_calloc((size_t)np, sizeof *cfg), *again = rt_calloc((size_t)np, sizeof *again);
  rt_err e = {0};
  if (sp_config_parse(sp, text, cfg, &e)) {
    FZ_CHECK(e.msg[0], "failed without a message");
  } else {
    for (int p = 0; p < np; p++)
      FZ_CHECK(cfg[p] >= 0 && cfg[p] < sp_nvalues(sp, p), "'%s': index %d out of range",
               sp_param_name(sp, p), cfg[p]);
    char *js = sp_config_json(sp, cfg);
    FZ_CHECK(js && sp_config_parse(sp, js, again, &e) == 0, "canonical %s does not parse: %s", js,
             e.msg);
    FZ_CHECK(!memcmp(again, cfg, (size_t)np * sizeof *cfg), "canonical %s parses to other values",
             js);
    char *js2 = sp_config_json(sp, again);
    FZ_CHECK(!strcmp(js, js2), "canonical JSON printed twice differs: %s, %s", js, js2);
    free(js2);
    free(js);
  }
  free(again);
  free(cfg);
  free(text);
  return 0;
}
