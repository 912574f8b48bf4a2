/*
** rt.c -- implementation of the shared error record, exact 128-bit counts
** and checked allocation declared in rt.h.
*/
#include "rt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rt_err_set(rt_err *e, const char *fmt, ...) {
  if (!e) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
}

void rt_err_prefix(rt_err *e, const char *fmt, ...) {
  if (!e) return;
  char buf[2 * sizeof e->msg];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof e->msg, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if ((size_t)n >= sizeof e->msg) n = (int)sizeof e->msg - 1;
  memcpy(buf + n, ": ", 2);
  memcpy(buf + n + 2, e->msg, sizeof e->msg);  /* e->msg is NUL-terminated */
  memcpy(e->msg, buf, sizeof e->msg - 1);
  e->msg[sizeof e->msg - 1] = 0;
}

int rt_count_mul(rt_count a, rt_count b, rt_count *r) {
  return __builtin_mul_overflow(a, b, r) ? -1 : 0;
}

int rt_count_add(rt_count a, rt_count b, rt_count *r) {
  return __builtin_add_overflow(a, b, r) ? -1 : 0;
}

char *rt_count_str(rt_count c, char *buf) {
  char tmp[48];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + (int)(c % 10));
    c /= 10;
  } while (c);
  for (int i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
  buf[n] = 0;
  return buf;
}

int rt_count_parse(const char *s, rt_count *out) {
  rt_count v = 0;
  if (!s || !*s) return -1;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return -1;
    if (rt_count_mul(v, 10, &v) || rt_count_add(v, (rt_count)(*s - '0'), &v))
      return -1;
  }
  *out = v;
  return 0;
}

static void *oom(size_t n) {
  fprintf(stderr, "rooftune: out of memory (%zu bytes)\n", n);
  abort();
}

void *rt_malloc(size_t n) {
  void *p = malloc(n ? n : 1);
  return p ? p : oom(n);
}

void *rt_calloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  return p ? p : oom(n * size);
}

void *rt_realloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  return q ? q : oom(n);
}

char *rt_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  return memcpy(rt_malloc(n), s, n);
}
