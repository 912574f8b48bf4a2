/*
** tg_desc.c -- the key/value description helpers (tg_desc.h). Depends on
** nothing of rooftune's but common/, so that every backend can fill a
** description without depending on the table.
*/
#include "tg_desc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

void tg_desc_add(tg_desc *d, const char *key, const char *fmt, ...) {
  if (d->n == TG_MAXKV) return;
  snprintf(d->key[d->n], sizeof d->key[0], "%s", key);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->val[d->n], sizeof d->val[0], fmt, ap);
  va_end(ap);
  d->n++;
}

const char *tg_desc_get(const tg_desc *d, const char *key) {
  for (int i = 0; i < d->n; i++)
    if (!strcmp(d->key[i], key)) return d->val[i];
  return "";
}

char *tg_desc_json(const tg_desc *d) {
  json_t *j = json_object();
  for (int i = 0; i < d->n; i++) json_object_set_new(j, d->key[i], json_string(d->val[i]));
  char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(j);
  return s;
}

int tg_desc_parse(const char *text, tg_desc *d) {
  memset(d, 0, sizeof *d);
  json_t *j = json_loads(text, 0, NULL), *v;
  const char *k;
  int rc = json_is_object(j) ? 0 : -1;
  json_object_foreach(j, k, v) {
    if (!json_is_string(v) || d->n == TG_MAXKV) {
      rc = -1;
      break;
    }
    tg_desc_add(d, k, "%s", json_string_value(v));
  }
  json_decref(j);
  return rc;
}

/* ---- for the rows' limit bindings ---- */

int tg_binds(const char *set, const char *var) {
  size_t n = strlen(var);
  for (const char *p = set; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
    while (*p == ' ') p++;
    if (!strncmp(p, var, n) && (p[n] == '=' || p[n] == ' ')) return 1;
  }
  return 0;
}
