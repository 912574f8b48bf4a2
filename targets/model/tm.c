/*
** tm.c -- the description file of a model-only target (tm.h): read whole,
** checked member by member with every error naming the file and the JSON
** field, hashed in canonical form. Looks up no backend itself (tm.h
** invariant 2): tm_row does it through the look-up it is given.
*/
#include "tm.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* The top-level members, all required (tm.h). */
static const char *const members[] = {"rooftune_target", "name", "borrows", "ceilings",
                                      "describe", "limits", "provenance"};
#define NMEMBERS (sizeof members / sizeof *members)

static int is_member(const char *key, size_t len) {
  for (size_t i = 0; i < NMEMBERS; i++)
    if (strlen(members[i]) == len && !strncmp(members[i], key, len)) return 1;
  return 0;
}

/* A string member of 1..cap-1 characters into out. */
static int get_string(json_t *v, const char *field, char *out, size_t cap, rt_err *err) {
  if (!json_is_string(v) || !json_string_length(v) || json_string_length(v) >= cap) {
    rt_err_set(err, "%s: expected a string of 1 to %d characters", field, (int)cap - 1);
    return -1;
  }
  snprintf(out, cap, "%s", json_string_value(v));
  return 0;
}

/* The ceilings through cm_ceilings_parse, its field names put under
** "ceilings." (its messages read "ceilings: FIELD: ..."). */
static int get_ceilings(json_t *v, cm_ceilings *c, rt_err *err) {
  if (!json_is_object(v)) {
    rt_err_set(err, "ceilings: expected an object (what rooftune bench --json prints)");
    return -1;
  }
  char *text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  rt_err e = {0};
  int rc = cm_ceilings_parse(text, c, &e);
  free(text);
  if (rc) {
    const char *m = e.msg;
    if (!strncmp(m, "ceilings: ", 10)) m += 10;
    rt_err_set(err, "ceilings.%s", m);
  }
  return rc;
}

static int get_describe(json_t *v, tg_desc *d, rt_err *err) {
  memset(d, 0, sizeof *d);
  if (!json_is_object(v)) {
    rt_err_set(err, "describe: expected an object of strings");
    return -1;
  }
  const char *k;
  json_t *x;
  json_object_foreach(v, k, x) {
    if (d->n == TM_MAXPAIRS) {
      rt_err_set(err, "describe: at most %d pairs", TM_MAXPAIRS);
      return -1;
    }
    if (!*k || strlen(k) >= sizeof d->key[0]) {
      rt_err_set(err, "describe.%s: a key of 1 to %d characters", k, (int)sizeof d->key[0] - 1);
      return -1;
    }
    if (!json_is_string(x) || json_string_length(x) >= sizeof d->val[0]) {
      rt_err_set(err, "describe.%s: expected a string of at most %d characters", k,
                 (int)sizeof d->val[0] - 1);
      return -1;
    }
    tg_desc_add(d, k, "%s", json_string_value(x));
  }
  return 0;
}

static int is_ident(const char *s) {
  if (!*s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') return 0;
  return 1;
}

static int get_limits(json_t *v, char *out, size_t cap, rt_err *err) {
  if (!json_is_object(v)) {
    rt_err_set(err, "limits: expected an object of integers ({} for none)");
    return -1;
  }
  const char *k;
  json_t *x;
  size_t n = 0;
  out[0] = 0;
  json_object_foreach(v, k, x) {
    if (!is_ident(k)) {
      rt_err_set(err, "limits.%s: expected a problem variable's name", k);
      return -1;
    }
    if (!json_is_integer(x) || json_integer_value(x) < 1) {
      rt_err_set(err, "limits.%s: expected an integer >= 1", k);
      return -1;
    }
    int w = snprintf(out + n, cap - n, "%s%s=%lld", n ? "," : "", k,
                     (long long)json_integer_value(x));
    if (w < 0 || (size_t)w >= cap - n) {
      rt_err_set(err, "limits: more than %d characters as VAR=VAL bindings", (int)cap - 1);
      return -1;
    }
    n += (size_t)w;
  }
  return 0;
}

static int get_provenance(json_t *v, char *out, size_t cap, rt_err *err) {
  if (!json_is_object(v)) {
    rt_err_set(err, "provenance: expected an object {field: where its numbers come from}");
    return -1;
  }
  const char *k;
  json_t *x;
  json_object_foreach(v, k, x) {
    if (!is_member(k, strcspn(k, ".")) || !strncmp(k, "provenance", 10) ||
        !strcmp(k, "rooftune_target")) {
      rt_err_set(err, "provenance.%s: not a field of the file (expected \"ceilings\", "
                      "\"describe\", \"limits\", \"name\", \"borrows\" or a dotted path in one)", k);
      return -1;
    }
    if (!json_is_string(x) || !json_string_length(x)) {
      rt_err_set(err, "provenance.%s: expected a non-empty string (a data sheet's URL and page, "
                      "or \"measured on ... by rooftune bench on DATE\")", k);
      return -1;
    }
  }
  json_t *c = json_object_get(v, "ceilings");
  if (!c) {
    rt_err_set(err, "provenance.ceilings: missing (say where the ceilings come from)");
    return -1;
  }
  char *text = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
  int rc = 0;
  if (strlen(text) >= cap) {
    rt_err_set(err, "provenance: more than %d characters of JSON", (int)cap - 1);
    rc = -1;
  } else {
    snprintf(out, cap, "%s", text);
  }
  free(text);
  return rc;
}

static int parse_root(json_t *j, tm_file *f, rt_err *err) {
  if (!json_is_object(j)) {
    rt_err_set(err, "expected a JSON object (a rooftune target description)");
    return -1;
  }
  const char *k;
  json_t *x;
  json_object_foreach(j, k, x) if (!is_member(k, strlen(k))) {
    rt_err_set(err, "%s: unknown member (expected rooftune_target, name, borrows, ceilings, "
                    "describe, limits, provenance)", k);
    return -1;
  }
  for (size_t i = 0; i < NMEMBERS; i++)
    if (!json_object_get(j, members[i])) {
      rt_err_set(err, "%s: missing", members[i]);
      return -1;
    }
  x = json_object_get(j, "rooftune_target");
  if (!json_is_integer(x) || json_integer_value(x) != TM_VERSION) {
    rt_err_set(err, "rooftune_target: expected %d (the format version this rooftune reads)",
               TM_VERSION);
    return -1;
  }
  if (get_string(json_object_get(j, "name"), "name", f->name, sizeof f->name, err) ||
      get_string(json_object_get(j, "borrows"), "borrows", f->borrows, sizeof f->borrows, err) ||
      get_ceilings(json_object_get(j, "ceilings"), &f->ce, err) ||
      get_describe(json_object_get(j, "describe"), &f->desc, err) ||
      get_limits(json_object_get(j, "limits"), f->limits, sizeof f->limits, err) ||
      get_provenance(json_object_get(j, "provenance"), f->provenance, sizeof f->provenance, err))
    return -1;
  char *canon = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
  rt_hash_hex(rt_hash_bytes(RT_HASH_INIT, canon, strlen(canon)), f->hash);
  free(canon);
  return 0;
}

int tm_parse(const char *path, const char *text, tm_file *f, rt_err *err) {
  memset(f, 0, sizeof *f);
  json_error_t je;
  json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &je);
  int rc;
  if (!j) {
    rt_err_set(err, "line %d column %d: %s", je.line, je.column, je.text);
    if (err) err->line = je.line, err->col = je.column;
    rc = -1;
  } else {
    rc = parse_root(j, f, err);
    json_decref(j);
  }
  if (rc) {
    memset(f, 0, sizeof *f);
    rt_err_prefix(err, "%s", path);
    return -1;
  }
  snprintf(f->path, sizeof f->path, "%s", path);
  return 0;
}

int tm_load(const char *path, tm_file *f, rt_err *err) {
  memset(f, 0, sizeof *f);
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    rt_err_set(err, "%s: cannot read: %s", path, strerror(errno));
    return -1;
  }
  rt_str s = {0};
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, fp)) > 0) rt_str_printf(&s, "%.*s", (int)n, buf);
  int bad = ferror(fp) || (s.s && strlen(s.s) != s.n);
  fclose(fp);
  int rc;
  if (bad) {
    rt_err_set(err, "%s: cannot read it as text", path);
    rc = -1;
  } else {
    rc = tm_parse(path, s.s ? s.s : "", f, err);
  }
  free(s.s);
  return rc;
}

int tm_row(tm_file *f, const tg_backend *(*find)(const char *name), rt_err *err) {
  const tg_backend *be = find(f->borrows);
  if (!be || !strcmp(be->name, TM_ROW_NAME)) {
    rt_err_set(err, "%s: borrows: '%s' is not a backend whose code generation a model target can "
                    "borrow (rooftune targets lists them)", f->path, f->borrows);
    return -1;
  }
  if (be->gpu && f->ce.gpu.sms <= 0) {
    rt_err_set(err, "%s: ceilings.gpu: missing: '%s' is a GPU backend, its models need the "
                    "device's properties (sms, regs_sm, smem_sm, ...)", f->path, f->borrows);
    return -1;
  }
  f->be = be;
  return 0;
}
