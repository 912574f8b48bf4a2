/*
** tg.c -- the target table and the key/value description helpers.
*/
#include "tg.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

const tg_target tg_targets[] = {
  {"host", "the host CPU: C kernels compiled with the system compiler", hw_describe},
  {NULL, NULL, NULL},
};

const tg_target *tg_find(const char *name) {
  for (const tg_target *t = tg_targets; t->name; t++)
    if (!strcmp(t->name, name)) return t;
  return NULL;
}

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
