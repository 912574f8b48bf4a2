/*
** rt.c -- implementation of the shared error record, exact 128-bit counts
** and checked allocation declared in rt.h.
*/
#include "rt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

rt_hash rt_hash_bytes(rt_hash h, const void *p, size_t n) {
  const rt_hash prime = ((rt_hash)1 << 88) | 0x13b;
  for (const unsigned char *b = p; n--; b++) h = (h ^ *b) * prime;
  return h;
}

char *rt_hash_hex(rt_hash h, char *buf) {
  for (int i = 31; i >= 0; i--, h >>= 4) buf[i] = "0123456789abcdef"[h & 15];
  buf[32] = 0;
  return buf;
}

void rt_str_printf(rt_str *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int need = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (need < 0) return;
  if (b->n + (size_t)need + 1 > b->cap) {
    b->cap = 2 * (b->n + (size_t)need + 1);
    b->s = rt_realloc(b->s, b->cap);
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
  va_end(ap);
  b->n += (size_t)need;
}

const char *rt_project_path(const char *rel, char *out, size_t cap) {
  if (rel[0] == '/') {   /* a user's file (a T1 kernel's space): as it is */
    snprintf(out, cap, "%s", rel);
    return out;
  }
  const char *home = getenv("ROOFTUNE_HOME");
  if (home && *home) {
    snprintf(out, cap, "%s/%s", home, rel);
    return out;
  }
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;         /* build/ in a checkout, bin/ when installed */
    static const char *const under[] = {"..", "../share/rooftune"};
    for (size_t i = 0; i < sizeof under / sizeof *under; i++) {
      snprintf(out, cap, "%s/%s/%s", exe, under[i], rel);
      if (access(out, R_OK) == 0) return out;
    }
  }
  snprintf(out, cap, "%s", rel);
  return out;
}

double rt_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
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
