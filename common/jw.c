/*
** jw.c -- the streaming JSON writer (jw.h): separators and nesting handled
** for the caller, strings escaped by jansson, exact integers of any size.
*/
#include "jw.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void jw_init(jw *w, FILE *f) {
  memset(w, 0, sizeof *w);
  w->f = f;
  w->first[0] = 1;
}

static void sep(jw *w) {
  if (w->after_key) {
    w->after_key = 0;
    return;
  }
  if (!w->first[w->depth]) fputc(',', w->f);
  w->first[w->depth] = 0;
}

void jw_begin(jw *w, char open) {
  sep(w);
  fputc(open, w->f);
  w->first[++w->depth] = 1;
}

void jw_end(jw *w, char close) {
  fputc(close, w->f);
  w->depth--;
  if (w->depth == 0) fputc('\n', w->f);
}

void jw_str(jw *w, const char *s) {
  sep(w);
  json_t *j = json_string(s);
  if (!j) j = json_string("(invalid UTF-8)");
  char *t = json_dumps(j, JSON_ENCODE_ANY);
  fputs(t, w->f);
  free(t);
  json_decref(j);
}

void jw_key(jw *w, const char *key) {
  jw_str(w, key);
  fputc(':', w->f);
  w->after_key = 1;
}

void jw_int(jw *w, long long v) { sep(w); fprintf(w->f, "%lld", v); }
void jw_bool(jw *w, int v) { sep(w); fputs(v ? "true" : "false", w->f); }
void jw_raw(jw *w, const char *json) { sep(w); fputs(json, w->f); }

void jw_count(jw *w, rt_count v) {
  char buf[48];
  sep(w);
  fputs(rt_count_str(v, buf), w->f);
}

void jw_double(jw *w, double v) {
  sep(w);
  if (isfinite(v)) fprintf(w->f, "%.6g", v);
  else fputs("null", w->f);   /* JSON has no inf or nan */
}

