/*
** rtdb_adapt.c -- online adaptation in the reader library (rtdb.h, the
** section "Online adaptation", invariants A1-A5): a conservative bandit
** per site (target, kernel, vars, tag) over the pinned schedule and a few
** verified alternatives, with a side log for `rooftune db adapt-import`.
** Depends only on SQLite, libc, libm and pthreads, like rtdb.c.
**
** A site is built once (its warm-up, under the adapter's lock:
** rtdb_lookup, then the alternatives read through the handle's connection
** with this file's own statement) and kept in an open-addressing table of the
** site texts; its arms, their statistics (Welford's running mean and
** variance) and its texts live in one allocation. After that a call
** hashes the text on the stack, finds the site and decides under the
** adapter's mutex; reports update the arm and append a line to a fixed
** buffer. Nothing on those paths allocates or reads the database.
*/
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include "rtdb.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rtdb_int.h"

#define SITE_KEY 1024       /* longest (target, kernel, vars, tag) text */
#define LOG_BUF 65536       /* the log's buffer */
#define MAX_TOPK 16
#define MAX_NEIGHBOURS 16
#define MAX_ARMS 64         /* alternatives; arm 0 is the lookup's answer */

enum { ARM_LIVE, ARM_DROPPED, ARM_RETIRED, ARM_REPLACED };

typedef struct arm {
  const char *config, *workload;   /* in the site's text block */
  long long trial;
  int pin_version, state;
  long long n, fails;
  double mean, m2;                 /* Welford */
} arm;

struct rtdb_adapt_site {
  rtdb_adapt *owner;
  uint64_t hash;
  size_t klen;
  const char *key;                 /* the site text, in the text block */
  int id, narms, inc, replacements;
  rtdb_match match;
  long long calls, explored;
  arm arms[];                      /* narms, then the text block */
};

struct rtdb_adapt {
  rtdb *db;
  pthread_mutex_t mu;
  sqlite3_stmt *top;               /* the top-k verified trials of a workload */
  sqlite3_stmt *wls;               /* the stored workloads of a kernel */
  rtdb_adapt_opts o;
  rtdb_adapt_site **slot;          /* open addressing, linear probing; cap a power of 2 */
  size_t cap, n;
  int fd, log_err;
  size_t used;
  char buf[LOG_BUF];
  char msg[1024];
};

/* The top_k fastest verified trials of (target name, kernel, workload key)
** made here (A1): ok, timed, not from another machine or tool. */
static const char top_sql[] =
    "SELECT t.id, t.config FROM trials t JOIN campaigns c ON c.id = t.campaign_id"
    " JOIN targets g ON g.id = c.target_id JOIN workloads w ON w.id = c.workload_id"
    " JOIN kernels k ON k.id = w.kernel_id"
    " WHERE g.name = ?1 AND k.name = ?2 AND w.key = ?3 AND t.status = 'ok' AND t.time IS NOT NULL"
    " AND g.fingerprint <> 'external' AND k.template_version <> 'external'"
    " ORDER BY t.time, t.id LIMIT ?4";

/* The stored workloads of a kernel, the newest template version first. */
static const char wls_sql[] = "SELECT w.key, w.sizes, w.dtype FROM workloads w JOIN kernels k ON k.id = w.kernel_id"
                              " WHERE k.name = ?1 ORDER BY k.id DESC, w.id";

static int seterr(rtdb_adapt *a, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int seterr(rtdb_adapt *a, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->msg, sizeof a->msg, fmt, ap);
  va_end(ap);
  return code;
}

const char *rtdb_adapt_errmsg(const rtdb_adapt *a) { return a ? a->msg : "no adapter"; }

/* ---- Welch's test (rtdb_int.h) ---- */

/* The continued fraction of the regularized incomplete beta function
** (modified Lentz), converging for x < (a + 1) / (a + b + 2). */
static double betacf(double a, double b, double x) {
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 500; m++) {
    double m2 = 2.0 * m, aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d, c = 1 + aa / c;
    if (fabs(d) < tiny) d = tiny;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d, h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d, c = 1 + aa / c;
    if (fabs(d) < tiny) d = tiny;
    if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1) < 1e-15) break;
  }
  return h;
}

/* I_x(a, b). */
static double ibeta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double lf = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return exp(lf) * betacf(a, b, x) / a;
  return 1 - exp(lf) * betacf(b, a, 1 - x) / b;
}

/* P(T > t) for Student's t with df degrees of freedom. */
static double t_upper(double t, double df) {
  if (isinf(t)) return t > 0 ? 0 : 1;
  double q = 0.5 * ibeta(df / 2, 0.5, df / (df + t * t));
  return t >= 0 ? q : 1 - q;
}

double rtdb__welch_p(double na, double ma, double va, double nb, double mb, double vb) {
  double sa = va / na, sb = vb / nb, se2 = sa + sb;
  if (!(se2 > 0)) return ma > mb ? 0 : ma < mb ? 1 : 0.5;
  return t_upper((ma - mb) / sqrt(se2), fmin(na, nb) - 1);
}

/* ---- The log (A5) ---- */

/* Write the buffer whole; a failure is kept (log_err) and reported once. */
static int log_flush(rtdb_adapt *a) {
  size_t off = 0;
  while (off < a->used && !a->log_err) {
    ssize_t w = write(a->fd, a->buf + off, a->used - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      a->log_err = 1;
      seterr(a, RTDB_ERROR, "adapt log: write: %s", w < 0 ? strerror(errno) : "nothing written");
      a->used = 0;
      return RTDB_ERROR;
    }
    off += (size_t)w;
  }
  a->used = 0;
  return a->log_err ? RTDB_ERROR : RTDB_OK;
}

/* Append one line of n bytes (flushing first when it does not fit). */
static int log_put(rtdb_adapt *a, const char *line, size_t n) {
  if (a->fd < 0) return RTDB_OK;
  if (a->log_err) return RTDB_ERROR;
  if (a->used + n > sizeof a->buf && log_flush(a)) return RTDB_ERROR;
  if (n > sizeof a->buf) {   /* a long site line: straight through */
    size_t off = 0;
    while (off < n) {
      ssize_t w = write(a->fd, line + off, n - off);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        a->log_err = 1;
        return seterr(a, RTDB_ERROR, "adapt log: write: %s", w < 0 ? strerror(errno) : "nothing written");
      }
      off += (size_t)w;
    }
    return RTDB_OK;
  }
  memcpy(a->buf + a->used, line, n);
  a->used += n;
  return RTDB_OK;
}

/* printf one short line into the buffer (no allocation). */
static int log_printf(rtdb_adapt *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int log_printf(rtdb_adapt *a, const char *fmt, ...) {
  if (a->fd < 0) return RTDB_OK;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof line) return seterr(a, RTDB_ERROR, "adapt log: line too long");
  return log_put(a, line, (size_t)n);
}

/* A growing text for the site line (warm-up only). */
typedef struct text {
  char *p;
  size_t n, cap;
  int oom;
} text;

static void put(text *t, const char *s, size_t n) {
  if (t->oom) return;
  if (t->n + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 1024;
    while (cap < t->n + n + 1) cap *= 2;
    char *p = realloc(t->p, cap);
    if (!p) {
      t->oom = 1;
      return;
    }
    t->p = p, t->cap = cap;
  }
  memcpy(t->p + t->n, s, n);
  t->n += n;
  t->p[t->n] = 0;
}

static void puts_(text *t, const char *s) { put(t, s, strlen(s)); }

/* s as a JSON string (NULL: null). */
static void put_json(text *t, const char *s) {
  if (!s) {
    puts_(t, "null");
    return;
  }
  puts_(t, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    char e[8];
    if (c == '"' || c == '\\') e[0] = '\\', e[1] = (char)c, put(t, e, 2);
    else if (c < 0x20) put(t, e, (size_t)snprintf(e, sizeof e, "\\u%04x", c));
    else put(t, s, 1);
  }
  puts_(t, "\"");
}

static const char *const match_name[] = {[RTDB_EXACT] = "exact", [RTDB_NEAREST] = "nearest",
                                          [RTDB_DEFAULT] = "default"};

/* The site's line (A5); the caller holds the lock. */
static int log_site(rtdb_adapt *a, const rtdb_adapt_site *s, const char *target, const char *kernel,
                    const char *vars, const char *tag) {
  if (a->fd < 0) return RTDB_OK;
  text t = {0};
  char num[64];
  snprintf(num, sizeof num, "{\"site\":%d,\"target\":", s->id);
  puts_(&t, num);
  put_json(&t, target);
  puts_(&t, ",\"kernel\":");
  put_json(&t, kernel);
  puts_(&t, ",\"vars\":");
  put_json(&t, vars);
  puts_(&t, ",\"tag\":");
  put_json(&t, tag);
  puts_(&t, ",\"match\":");
  put_json(&t, s->match >= RTDB_EXACT && s->match <= RTDB_DEFAULT ? match_name[s->match] : "other");
  puts_(&t, ",\"arms\":[");
  for (int i = 0; i < s->narms; i++) {
    puts_(&t, i ? ",{\"config\":" : "{\"config\":");
    put_json(&t, s->arms[i].config);
    puts_(&t, ",\"workload\":");
    put_json(&t, s->arms[i].workload);
    snprintf(num, sizeof num, ",\"trial\":%lld,\"pin_version\":%d}", s->arms[i].trial, s->arms[i].pin_version);
    puts_(&t, num);
  }
  puts_(&t, "]}\n");
  int rc = t.oom ? seterr(a, RTDB_NOMEM, "out of memory") : log_put(a, t.p, t.n);
  free(t.p);
  return rc;
}

/* ---- Open and close ---- */

int rtdb_adapt_open(rtdb *db, const rtdb_adapt_opts *given, rtdb_adapt **out, char *msg, size_t cap) {
  char none[1];
  if (!msg || !cap) msg = none, cap = sizeof none;
  msg[0] = 0;
  if (!out) return RTDB_MISUSE;
  *out = NULL;
  rtdb_adapt_opts o = given ? *given : (rtdb_adapt_opts){0};
  if (!o.top_k) o.top_k = 3;
  if (!o.neighbours) o.neighbours = 2;
  if (!o.max_arms) o.max_arms = 8;
  if (o.cap == 0) o.cap = 0.05;
  if (o.confidence == 0) o.confidence = 0.99;
  if (!o.min_samples) o.min_samples = 8;
  if (!o.max_samples) o.max_samples = 256;
  if (!db || o.top_k < 0 || o.top_k > MAX_TOPK || o.neighbours < 0 || o.neighbours > MAX_NEIGHBOURS ||
      o.max_arms < 0 || o.max_arms > MAX_ARMS || !(o.cap > 0 && o.cap <= 0.5) ||
      !(o.confidence >= 0.5 && o.confidence < 1) || o.min_samples < 2 || o.max_samples < o.min_samples) {
    snprintf(msg, cap, "rtdb_adapt_open: %s", !db ? "NULL handle" : "an option out of range (see rtdb.h)");
    return RTDB_MISUSE;
  }
  rtdb_adapt *a = calloc(1, sizeof *a);
  if (!a) {
    snprintf(msg, cap, "out of memory");
    return RTDB_NOMEM;
  }
  a->db = db, a->o = o, a->fd = -1;
  a->o.log_path = NULL;   /* not kept: the caller's string */
  pthread_mutex_init(&a->mu, NULL);
  int code = RTDB_OK;
  if (sqlite3_prepare_v3(rtdb__sqlite(db), top_sql, -1, SQLITE_PREPARE_PERSISTENT, &a->top, NULL) != SQLITE_OK ||
      sqlite3_prepare_v3(rtdb__sqlite(db), wls_sql, -1, SQLITE_PREPARE_PERSISTENT, &a->wls, NULL) != SQLITE_OK)
    code = seterr(a, RTDB_NOTADB, "adapt: %s", sqlite3_errmsg(rtdb__sqlite(db)));
  struct stat st;
  if (!code && o.log_path) {
    a->fd = open(o.log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (a->fd < 0)
      code = seterr(a, RTDB_CANTOPEN, "%s: cannot open the adapt log: %s", o.log_path, strerror(errno));
    else if (fstat(a->fd, &st) || !S_ISREG(st.st_mode))
      code = seterr(a, RTDB_CANTOPEN, "%s: the adapt log is not a regular file", o.log_path);
    else if (flock(a->fd, LOCK_EX | LOCK_NB))
      code = seterr(a, RTDB_CANTOPEN, "%s: the adapt log is in use by another process (%s)", o.log_path,
                    strerror(errno));
  }
  if (!code && a->fd >= 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    code = log_printf(a, "{\"rtdb_adapt\":1,\"session\":\"%ld-%lld.%09ld\",\"cap\":%.17g,\"confidence\":%.17g,"
                      "\"min_samples\":%d,\"max_samples\":%d}\n",
                      (long)getpid(), (long long)ts.tv_sec, ts.tv_nsec, o.cap, o.confidence, o.min_samples,
                      o.max_samples);
    if (!code) code = log_flush(a);
  }
  if (code) {
    snprintf(msg, cap, "%s", a->msg);
    rtdb_adapt_close(a);
    return code;
  }
  *out = a;
  return RTDB_OK;
}

int rtdb_adapt_flush(rtdb_adapt *a) {
  if (!a) return RTDB_MISUSE;
  pthread_mutex_lock(&a->mu);
  int rc = a->fd >= 0 ? log_flush(a) : RTDB_OK;
  pthread_mutex_unlock(&a->mu);
  return rc;
}

int rtdb_adapt_close(rtdb_adapt *a) {
  if (!a) return RTDB_OK;
  int rc = RTDB_OK;
  if (a->fd >= 0) {
    rc = log_flush(a);
    if (close(a->fd) && !rc) rc = seterr(a, RTDB_ERROR, "adapt log: close: %s", strerror(errno));
  }
  for (size_t i = 0; i < a->cap; i++) free(a->slot[i]);
  free(a->slot);
  sqlite3_finalize(a->top);
  sqlite3_finalize(a->wls);
  pthread_mutex_destroy(&a->mu);
  free(a);
  return rc;
}

/* ---- Warm-up: a site's arms (A1) ---- */

typedef struct cand {
  char *config, *workload;
  long long trial;
  int pin_version;
} cand;

typedef struct nb {   /* a pinned workload near the site */
  double d;
  char *key, *config;
  int version;
} nb;

typedef struct build {
  rtdb_adapt *a;
  const char *vars, *self;   /* self: the answer's workload, not a neighbour */
  cand c[1 + MAX_ARMS];
  int nc, oom;
  nb near[MAX_NEIGHBOURS];
  int nnear, code;
} build;

static void cand_free(build *b) {
  for (int i = 0; i < b->nc; i++) free(b->c[i].config), free(b->c[i].workload);
  for (int i = 0; i < b->nnear; i++) free(b->near[i].key), free(b->near[i].config);
}

/* Add a candidate unless its schedule is there already or the site is full. */
static void add_cand(build *b, const char *config, const char *workload, long long trial, int version) {
  if (b->nc == 1 + b->a->o.max_arms) return;
  for (int i = 0; i < b->nc; i++)
    if (!strcmp(b->c[i].config, config)) return;
  cand *c = &b->c[b->nc];
  c->config = strdup(config), c->workload = strdup(workload);
  if (!c->config || !c->workload) {
    free(c->config), free(c->workload);
    b->oom = 1;
    return;
  }
  c->trial = trial, c->pin_version = version;
  b->nc++;
}

/* The top_k verified trials of workload key (the caller holds the lock:
** the statement is the adapter's). */
static int add_top(build *b, const char *target, const char *kernel, const char *key) {
  rtdb_adapt *a = b->a;
  sqlite3_stmt *st = a->top;
  int rc, code = RTDB_OK;
  sqlite3_bind_text(st, 1, target, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, kernel, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, key, -1, SQLITE_STATIC);
  sqlite3_bind_int(st, 4, a->o.top_k);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *config = (const char *)sqlite3_column_text(st, 1);
    if (sqlite3_column_type(st, 1) != SQLITE_TEXT || !config || config[0] != '{' ||
        (size_t)sqlite3_column_bytes(st, 1) >= RTDB_MAXCONFIG) {
      code = seterr(a, RTDB_NOTADB, "unexpected config of trial %lld", (long long)sqlite3_column_int64(st, 0));
      break;
    }
    add_cand(b, config, key, sqlite3_column_int64(st, 0), 0);
  }
  if (!code && rc != SQLITE_DONE)
    code = seterr(a, RTDB_ERROR, "adapt: read: %s", sqlite3_errmsg(rtdb__sqlite(a->db)));
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  return code;
}

/* The key of the one stored workload of kernel that vars name (distance
** 0), into key (RTDB_MAXKEY bytes; "" when none, or several tie). */
static int exact_key(build *b, const char *kernel, char *key) {
  rtdb_adapt *a = b->a;
  sqlite3_stmt *st = a->wls;
  int rc, code = RTDB_OK, found = 0;
  key[0] = 0;
  sqlite3_bind_text(st, 1, kernel, -1, SQLITE_STATIC);
  while (!code && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *k = (const char *)sqlite3_column_text(st, 0), *sizes = (const char *)sqlite3_column_text(st, 1),
               *dtype = (const char *)sqlite3_column_text(st, 2);
    double d;
    if (!k || !sizes || !dtype || (size_t)sqlite3_column_bytes(st, 0) >= RTDB_MAXKEY) {
      code = seterr(a, RTDB_NOTADB, "adapt: unexpected workload row of %.100s", kernel);
    } else if ((code = rtdb__distance(b->vars, sizes, dtype, &d))) {
      seterr(a, code, "adapt: the workload '%.200s' %s", k,
             code == RTDB_MISUSE ? "cannot be compared with these vars" : "is not what rooftune writes");
    } else if (d == 0 && found++ == 0) {
      strcpy(key, k);
    }
  }
  if (!code && rc != SQLITE_DONE) code = seterr(a, RTDB_ERROR, "adapt: read: %s", sqlite3_errmsg(rtdb__sqlite(a->db)));
  if (found > 1) key[0] = 0;
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  return code;
}

/* rtdb_pins' callback: keep the `neighbours` nearest other pinned
** workloads (distance, then key). */
static int near_fn(void *ctx, const char *key, const char *sizes, const char *dtype, const char *config,
                   int version, double time_s) {
  (void)time_s;
  build *b = ctx;
  double d;
  int rc = rtdb__distance(b->vars, sizes, dtype, &d);
  if (rc) {
    b->code = seterr(b->a, rc, "adapt: the pinned workload '%.200s' %s", key,
                     rc == RTDB_MISUSE ? "cannot be compared with these vars" : "is not what rooftune writes");
    return 1;
  }
  if (d < 0 || !strcmp(key, b->self)) return 0;
  int n = b->nnear, lim = b->a->o.neighbours, i = n;
  while (i > 0 && (b->near[i - 1].d > d || (b->near[i - 1].d == d && strcmp(b->near[i - 1].key, key) > 0))) i--;
  if (i >= lim) return 0;
  char *k = strdup(key), *c = strdup(config);
  if (!k || !c) {
    free(k), free(c);
    b->oom = 1;
    return 1;
  }
  if (n == lim) {   /* the farthest goes */
    free(b->near[n - 1].key), free(b->near[n - 1].config);
    n--;
  }
  memmove(&b->near[i + 1], &b->near[i], (size_t)(n - i) * sizeof *b->near);
  b->near[i] = (nb){d, k, c, version};
  b->nnear = n + 1;
  return 0;
}

/* Build the site of key (klen bytes, hash h): lookup, alternatives, one
** allocation. The caller holds the lock (the adapter's statement). */
static int build_site(rtdb_adapt *a, const char *target, const char *kernel, const char *vars,
                      const char *tag, const char *key, size_t klen, uint64_t h, rtdb_adapt_site **out) {
  rtdb_result *r = malloc(sizeof *r);
  build *b = calloc(1, sizeof *b);
  char *def = malloc(RTDB_MAXCONFIG + RTDB_MAXKEY), *self = def + RTDB_MAXCONFIG;
  int code = RTDB_OK;
  *out = NULL;
  if (!r || !b || !def) {
    free(r), free(b), free(def);
    return seterr(a, RTDB_NOMEM, "out of memory");
  }
  b->a = a, b->vars = vars;
  if ((code = rtdb_lookup(a->db, target, kernel, vars, tag, r))) {
    seterr(a, code, "%s", rtdb_errmsg(a->db));
  } else {
    b->self = r->workload;
    add_cand(b, r->config, r->workload, 0, r->pin_version);
    if (r->match != RTDB_EXACT && !(code = exact_key(b, kernel, self)) && self[0])
      code = add_top(b, target, kernel, self);   /* the asked workload's, stored but not pinned */
    if (!code && r->match != RTDB_DEFAULT) code = add_top(b, target, kernel, r->workload);
    if (!code && a->o.neighbours) {
      int rc = rtdb_pins(a->db, target, kernel, tag, near_fn, b, def);
      if (b->code) code = b->code;
      else if (rc) code = seterr(a, rc, "%s", rtdb_errmsg(a->db));
    }
    for (int i = 0; i < b->nnear && !code; i++) {
      add_cand(b, b->near[i].config, b->near[i].key, 0, b->near[i].version);
      code = add_top(b, target, kernel, b->near[i].key);
    }
    if (!code && b->oom) code = seterr(a, RTDB_NOMEM, "out of memory");
  }
  if (!code) {
    size_t texts = klen;
    for (int i = 0; i < b->nc; i++) texts += strlen(b->c[i].config) + strlen(b->c[i].workload) + 2;
    rtdb_adapt_site *s = calloc(1, sizeof *s + (size_t)b->nc * sizeof(arm) + texts);
    if (!s) {
      code = seterr(a, RTDB_NOMEM, "out of memory");
    } else {
      char *p = (char *)&s->arms[b->nc];
      memcpy(p, key, klen);
      *s = (rtdb_adapt_site){.owner = a, .hash = h, .klen = klen, .key = p, .narms = b->nc, .match = r->match};
      p += klen;
      for (int i = 0; i < b->nc; i++) {
        arm *m = &s->arms[i];
        size_t lc = strlen(b->c[i].config) + 1, lw = strlen(b->c[i].workload) + 1;
        m->config = memcpy(p, b->c[i].config, lc), p += lc;
        m->workload = memcpy(p, b->c[i].workload, lw), p += lw;
        m->trial = b->c[i].trial, m->pin_version = b->c[i].pin_version;
      }
      *out = s;
    }
  }
  cand_free(b);
  free(r), free(b), free(def);
  return code;
}

/* ---- The site table ---- */

static uint64_t fnv(const char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  while (n--) h = (h ^ (unsigned char)*p++) * 0x100000001b3ull;
  return h;
}

static rtdb_adapt_site **site_find(rtdb_adapt *a, uint64_t h, const char *key, size_t klen) {
  for (size_t i = h & (a->cap - 1);; i = (i + 1) & (a->cap - 1)) {
    rtdb_adapt_site *s = a->slot[i];
    if (!s || (s->hash == h && s->klen == klen && !memcmp(s->key, key, klen))) return &a->slot[i];
  }
}

/* Make room for one more site (grows the table: warm-up only). */
static int site_room(rtdb_adapt *a) {
  if (2 * (a->n + 1) <= a->cap) return RTDB_OK;
  size_t cap = a->cap ? 2 * a->cap : 64, ocap = a->cap;
  rtdb_adapt_site **old = a->slot, **slot = calloc(cap, sizeof *slot);
  if (!slot) return seterr(a, RTDB_NOMEM, "out of memory");
  a->slot = slot, a->cap = cap;
  for (size_t i = 0; i < ocap; i++)
    if (old[i]) *site_find(a, old[i]->hash, old[i]->key, old[i]->klen) = old[i];
  free(old);
  return RTDB_OK;
}

/* ---- The bandit (A2, A3) ---- */

/* The arm to run at this call; the caller holds the lock. */
static int pick(rtdb_adapt *a, rtdb_adapt_site *s, int *explore) {
  s->calls++;
  *explore = 0;
  if ((double)(s->explored + 1) <= a->o.cap * (double)s->calls) {
    int best = -1;
    for (int i = 0; i < s->narms; i++)
      if (i != s->inc && s->arms[i].state == ARM_LIVE && (best < 0 || s->arms[i].n < s->arms[best].n)) best = i;
    if (best >= 0) {
      s->explored++;
      *explore = 1;
      return best;
    }
  }
  return s->inc;
}

static double var_of(const arm *m) { return m->n > 1 ? m->m2 / (double)(m->n - 1) : NAN; }

/* After arm j's report: test it at its checkpoints (A3). The lock is held. */
static int decide(rtdb_adapt *a, rtdb_adapt_site *s, int j) {
  arm *m = &s->arms[j], *inc = &s->arms[s->inc];
  if (j == s->inc || m->state != ARM_LIVE || m->n < a->o.min_samples) return RTDB_OK;
  long long q = m->n / a->o.min_samples;
  int checkpoint = m->n % a->o.min_samples == 0 && (q & (q - 1)) == 0;
  int rc = RTDB_OK;
  if (checkpoint && inc->n >= a->o.min_samples) {
    int i = 0;
    while ((1LL << i) < q) i++;
    double alpha = (1 - a->o.confidence) / ((double)(s->narms - 1) * (double)(2LL << i));
    double vm = var_of(m), vi = var_of(inc);
    double p_faster = rtdb__welch_p((double)inc->n, inc->mean, vi, (double)m->n, m->mean, vm);
    double p_slower = rtdb__welch_p((double)m->n, m->mean, vm, (double)inc->n, inc->mean, vi);
    /* a drop only forgoes an alternative: it is tested at the whole level */
    const char *event = p_faster < alpha ? "replace" : p_slower < 1 - a->o.confidence ? "drop" : NULL;
    double p = p_faster < alpha ? p_faster : p_slower;
    if (event && event[0] == 'd') alpha = 1 - a->o.confidence;
    if (!event && m->n * 2 > a->o.max_samples) event = "retire";
    if (event) {
      rc = log_printf(a, "{\"s\":%d,\"a\":%d,\"event\":\"%s\",\"n\":%lld,\"mean\":%.17g,\"vs\":%d,"
                      "\"vs_n\":%lld,\"vs_mean\":%.17g,\"p\":%.17g,\"alpha\":%.17g}\n",
                      s->id, j, event, m->n, m->mean, s->inc, inc->n, inc->mean, p, alpha);
      if (event[0] == 'r' && event[2] == 'p') {
        inc->state = ARM_REPLACED;
        s->inc = j;
        s->replacements++;
      } else {
        m->state = event[0] == 'd' ? ARM_DROPPED : ARM_RETIRED;
      }
    }
  } else if (m->n >= a->o.max_samples) {
    m->state = ARM_RETIRED;
    rc = log_printf(a, "{\"s\":%d,\"a\":%d,\"event\":\"retire\",\"n\":%lld,\"mean\":%.17g,\"vs\":%d,"
                    "\"vs_n\":%lld,\"vs_mean\":%.17g,\"p\":null,\"alpha\":null}\n",
                    s->id, j, m->n, m->mean, s->inc, inc->n, inc->mean);
  }
  return rc;
}

/* ---- The calls ---- */

int rtdb_adapt_choose(rtdb_adapt *a, const char *target, const char *kernel, const char *vars,
                      const char *tag, rtdb_choice *out) {
  if (!a) return RTDB_MISUSE;
  if (!target || !kernel || !vars || !out) {
    pthread_mutex_lock(&a->mu);
    seterr(a, RTDB_MISUSE, "rtdb_adapt_choose: NULL target, kernel, vars or result");
    pthread_mutex_unlock(&a->mu);
    return RTDB_MISUSE;
  }
  char key[SITE_KEY];
  size_t lt = strlen(target), lk = strlen(kernel), lv = strlen(vars), lg = tag ? strlen(tag) + 1 : 0;
  size_t klen = lt + lk + lv + lg + 3;
  if (klen > sizeof key) {
    pthread_mutex_lock(&a->mu);
    seterr(a, RTDB_MISUSE, "rtdb_adapt_choose: target, kernel, vars and tag longer than %d bytes", SITE_KEY);
    pthread_mutex_unlock(&a->mu);
    return RTDB_MISUSE;
  }
  char *p = key;
  memcpy(p, target, lt + 1), p += lt + 1;
  memcpy(p, kernel, lk + 1), p += lk + 1;
  memcpy(p, vars, lv + 1), p += lv + 1;
  if (tag) *p++ = 't', memcpy(p, tag, lg - 1);
  uint64_t h = fnv(key, klen);
  pthread_mutex_lock(&a->mu);
  rtdb_adapt_site **slot = a->cap ? site_find(a, h, key, klen) : NULL, *s = slot ? *slot : NULL;
  int code = RTDB_OK;
  if (!s) {   /* warm-up */
    if (!(code = build_site(a, target, kernel, vars, tag, key, klen, h, &s)) && !(code = site_room(a))) {
      s->id = (int)a->n;
      *site_find(a, h, key, klen) = s;
      a->n++;
      log_site(a, s, target, kernel, vars, tag);   /* a log error is kept for flush/close */
    } else if (s) {
      free(s);
      s = NULL;
    }
  }
  if (s) {
    int explore, j = pick(a, s, &explore);
    *out = (rtdb_choice){s->arms[j].config, j, explore, s->match, s};
  }
  pthread_mutex_unlock(&a->mu);
  return code;
}

/* 1 when c is a choice of a's (its site is in a's table). */
static int mine(rtdb_adapt *a, const rtdb_choice *c) {
  if (!c || !c->site || !a->cap) return 0;
  rtdb_adapt_site **slot = site_find(a, c->site->hash, c->site->key, c->site->klen);
  return c->site->owner == a && *slot == c->site && c->arm >= 0 && c->arm < c->site->narms;
}

int rtdb_adapt_report(rtdb_adapt *a, const rtdb_choice *c, double seconds) {
  if (!a) return RTDB_MISUSE;
  pthread_mutex_lock(&a->mu);
  int code;
  if (!mine(a, c) || !isfinite(seconds) || seconds <= 0) {
    code = seterr(a, RTDB_MISUSE, "rtdb_adapt_report: %s", mine(a, c) ? "the time must be finite and > 0"
                                                                       : "not a choice of this adapter");
  } else {
    rtdb_adapt_site *s = c->site;
    arm *m = &s->arms[c->arm];
    m->n++;
    double d = seconds - m->mean;
    m->mean += d / (double)m->n;
    m->m2 += d * (seconds - m->mean);
    log_printf(a, "{\"s\":%d,\"a\":%d,\"t\":%.9g}\n", s->id, c->arm, seconds);
    decide(a, s, c->arm);
    code = RTDB_OK;
  }
  pthread_mutex_unlock(&a->mu);
  return code;
}

int rtdb_adapt_fail(rtdb_adapt *a, const rtdb_choice *c) {
  if (!a) return RTDB_MISUSE;
  pthread_mutex_lock(&a->mu);
  int code;
  if (!mine(a, c)) {
    code = seterr(a, RTDB_MISUSE, "rtdb_adapt_fail: not a choice of this adapter");
  } else {
    rtdb_adapt_site *s = c->site;
    arm *m = &s->arms[c->arm];
    m->fails++;
    if (c->arm != s->inc && m->state == ARM_LIVE) m->state = ARM_RETIRED;
    log_printf(a, "{\"s\":%d,\"a\":%d,\"fail\":1}\n", s->id, c->arm);
    code = RTDB_OK;
  }
  pthread_mutex_unlock(&a->mu);
  return code;
}

int rtdb_adapt_stats_of(rtdb_adapt *a, const rtdb_choice *c, rtdb_adapt_stats *st, rtdb_adapt_arm *arms,
                        int cap) {
  if (!a || !st || (cap > 0 && !arms)) return RTDB_MISUSE;
  pthread_mutex_lock(&a->mu);
  int code = RTDB_OK;
  if (!mine(a, c)) {
    code = seterr(a, RTDB_MISUSE, "rtdb_adapt_stats_of: not a choice of this adapter");
  } else {
    const rtdb_adapt_site *s = c->site;
    *st = (rtdb_adapt_stats){s->calls, s->explored, s->replacements, s->narms, s->inc};
    for (int i = 0; i < s->narms && i < cap; i++) {
      const arm *m = &s->arms[i];
      arms[i] = (rtdb_adapt_arm){m->config, m->workload, m->trial, m->pin_version, m->n, m->fails,
                                 m->n ? m->mean : NAN, sqrt(var_of(m)), i == s->inc, m->state};
    }
  }
  pthread_mutex_unlock(&a->mu);
  return code;
}
