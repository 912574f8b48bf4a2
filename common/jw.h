/*
** jw.h -- the one way rooftune writes JSON as it goes: a small streaming
** writer over a FILE (jansson's dump needs the whole tree in memory, and
** cannot print exact integers above 2^63, which counts of configurations
** exceed). Strings are escaped (invalid UTF-8 is replaced by a marker),
** non-finite doubles are written as null.
*/
#ifndef JW_H
#define JW_H

#include <stdio.h>

#include "rt.h"

/* Values are separated and nested automatically; depth at most 31. */
typedef struct jw {
  FILE *f;
  int depth;
  int first[32];   /* no element written yet at this depth */
  int after_key;
} jw;
void jw_init(jw *w, FILE *f);
void jw_begin(jw *w, char open);           /* '{' or '[' */
void jw_end(jw *w, char close);            /* '}' or ']' */
void jw_key(jw *w, const char *key);
void jw_str(jw *w, const char *s);
void jw_int(jw *w, long long v);
void jw_count(jw *w, rt_count v);          /* exact, any size */
void jw_double(jw *w, double v);          /* 6 significant digits */
void jw_bool(jw *w, int v);
void jw_raw(jw *w, const char *json);      /* an already-encoded value */

#endif
