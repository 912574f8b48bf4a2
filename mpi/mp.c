/*
** mp.c -- the MPI pool (mp.h): initialisation only under a launcher, the
** worker loop (set-ups, measurements through the backend table, emulated
** sleeps), rank 0's dispatch (lowest idle worker first, a queue, results
** collected as they come) and the fingerprint check. Messages are byte
** strings packed here (int64, double, length-prefixed strings, raw
** ms_result: every rank runs the same binary). Built without HAVE_MPI
** the functions keep their contracts for a pool of no workers.
*/
#include <errno.h>
#include <jansson.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../search_spaces/sp.h"
#include "../targets/kn.h"
#include "../targets/tg.h"
#include "mp.h"

#ifdef HAVE_MPI
#include <mpi.h>

/* ---- Messages ---- */

enum { MP_SETUP = 1, MP_READY, MP_JOB, MP_DONE, MP_QUIT };   /* tags */
enum { MP_TUNE = 1, MP_SLEEP };                              /* set-ups and jobs */

typedef struct mp_buf {
  char *p;
  size_t n, cap, at;   /* bytes, capacity, read position */
} mp_buf;

static void put(mp_buf *b, const void *v, size_t n) {
  if (b->n + n > b->cap) b->p = rt_realloc(b->p, b->cap = 2 * (b->n + n) + 64);
  memcpy(b->p + b->n, v, n);
  b->n += n;
}
static void put_i64(mp_buf *b, int64_t v) { put(b, &v, sizeof v); }
static void put_f64(mp_buf *b, double v) { put(b, &v, sizeof v); }
static void put_str(mp_buf *b, const char *s) {   /* NULL travels as length -1 */
  put_i64(b, s ? (int64_t)strlen(s) : -1);
  if (s) put(b, s, strlen(s) + 1);
}
/* Readers: a short message reads as zeros and NULL (never past the end). */
static int get(mp_buf *b, void *v, size_t n) {
  if (b->at + n > b->n) {
    memset(v, 0, n);
    return -1;
  }
  memcpy(v, b->p + b->at, n);
  b->at += n;
  return 0;
}
static int64_t get_i64(mp_buf *b) {
  int64_t v;
  get(b, &v, sizeof v);
  return v;
}
static double get_f64(mp_buf *b) {
  double v;
  get(b, &v, sizeof v);
  return v;
}
static const char *get_str(mp_buf *b) {   /* points into b */
  int64_t n = get_i64(b);
  if (n < 0 || b->at + (size_t)n + 1 > b->n || b->p[b->at + (size_t)n]) return NULL;
  const char *s = b->p + b->at;
  b->at += (size_t)n + 1;
  return s;
}

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, us % 1000000 * 1000};
  while (nanosleep(&ts, &ts) && errno == EINTR) {}
}

static void send_buf(const mp_buf *b, int dest, int tag) {
  MPI_Send(b->p, (int)b->n, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
}

/* Wait (sleeping between polls: invariant 5) for a message from src with
** tag (MPI_ANY_* allowed) and receive it into *b; its source and tag. */
static void recv_buf(int src, int tag, mp_buf *b, int *from, int *got) {
  MPI_Status st;
  for (int flag = 0;;) {
    MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag, &st);
    if (flag) break;
    sleep_us(MP_POLL_US);
  }
  int n = 0;
  MPI_Get_count(&st, MPI_BYTE, &n);
  b->n = b->at = 0;
  if ((size_t)n > b->cap) b->p = rt_realloc(b->p, b->cap = (size_t)n);
  MPI_Recv(b->p, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  b->n = (size_t)n;
  if (from) *from = st.MPI_SOURCE;
  if (got) *got = st.MPI_TAG;
}

/* ---- The process ---- */

static int inited, finished, rank, size;
static int node_widx, node_nw;   /* this worker's index among its node's workers, their count */

void mp_init(int *argc, char ***argv) {
  if (inited || !(getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK")))
    return;
  MPI_Init(argc, argv);
  inited = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* the workers sharing this node (rank 0 is not a worker) */
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int nn;
  MPI_Comm_size(node, &nn);
  int *ranks = rt_malloc((size_t)nn * sizeof *ranks);
  MPI_Allgather(&rank, 1, MPI_INT, ranks, 1, MPI_INT, node);
  for (int i = 0; i < nn; i++) {
    if (ranks[i] == 0) continue;
    node_widx += ranks[i] < rank;
    node_nw++;
  }
  free(ranks);
  MPI_Comm_free(&node);
}

int mp_built(void) { return 1; }
int mp_rank(void) { return inited ? rank : 0; }
int mp_workers(void) { return inited && size > 1 ? size - 1 : 0; }

void mp_end(void) {
  if (!inited || finished) return;
  finished = 1;
  if (rank == 0) {
    mp_buf b = {0};
    put_i64(&b, 0);
    for (int w = 1; w < size; w++) send_buf(&b, w, MP_QUIT);
    free(b.p);
  }
  MPI_Finalize();
}

/* ---- The worker ---- */

typedef struct worker {
  int kind;                 /* MP_TUNE, MP_SLEEP, 0: not set up */
  mp_buf setup;             /* the set-up message: ms's strings point into it */
  tg_target tg;
  sp_space *sp;
  ms_workload *w;
  ms_opts ms;
  int jobs, die_after;      /* measurements received; the test hook (-1: none) */
  double slow;              /* test hook: seconds slept before each measurement */
} worker;

static void worker_reset(worker *wk) {
  ms_workload_free(wk->w);
  sp_free(wk->sp);
  wk->w = NULL, wk->sp = NULL, wk->kind = 0;
}

/* The CPUs this worker is bound to (invariant 6), into cpus. */
static void bind_cpus(char *cpus, size_t cap) {
  cpu_set_t all, mine;
  CPU_ZERO(&mine);
  snprintf(cpus, cap, "all");
  if (sched_getaffinity(0, sizeof all, &all)) return;
  int n = CPU_COUNT(&all), list[CPU_SETSIZE], k = 0;
  for (int c = 0; c < CPU_SETSIZE && k < n; c++)
    if (CPU_ISSET(c, &all)) list[k++] = c;
  if (node_nw < 1 || n < node_nw) {
    snprintf(cpus, cap, "shared (%d CPUs, %d workers on this node)", n, node_nw);
    return;
  }
  int lo = node_widx * n / node_nw, hi = (node_widx + 1) * n / node_nw;
  for (int i = lo; i < hi; i++) CPU_SET(list[i], &mine);
  if (sched_setaffinity(0, sizeof mine, &mine)) {
    snprintf(cpus, cap, "shared (binding failed: %s)", strerror(errno));
    return;
  }
  if (hi - lo == 1) snprintf(cpus, cap, "CPU %d", list[lo]);
  else snprintf(cpus, cap, "CPUs %d-%d", list[lo], list[hi - 1]);
}

/* Set up for a campaign (mp_start_tune's message); 0, or -1 with err. */
static int worker_tune(worker *wk, mp_buf *b, tg_desc *desc, char *cpus, size_t cap, rt_err *err) {
  const char *target = get_str(b), *devices = get_str(b), *kernel = get_str(b), *set = get_str(b);
  ms_opts *o = &wk->ms;
  ms_opts_default(o);
  o->ci_target = get_f64(b), o->time_cap = get_f64(b), o->timeout = get_f64(b);
  o->min_reps = (int)get_i64(b), o->max_reps = (int)get_i64(b), o->warmup = (int)get_i64(b);
  o->flush_cache = (int)get_i64(b), o->counters = (int)get_i64(b);
  o->cache_dir = get_str(b), o->cflags = get_str(b), o->events = get_str(b), o->guard = get_str(b);
  if (!target || !kernel) {
    rt_err_set(err, "a malformed set-up message");
    return -1;
  }
  char name[TG_NAME + 16];
  snprintf(name, sizeof name, "%s", target);
  if (devices && *devices) {   /* devices[(rank - 1) % n] */
    int n = 1;
    for (const char *p = devices; *p; p++) n += *p == ',';
    const char *p = devices;
    for (int i = (rank - 1) % n; i > 0; i--) p = strchr(p, ',') + 1;
    snprintf(name, sizeof name, "%.*s", (int)strcspn(p, ","), p);
  } else if (!tg_resolve(target, &wk->tg, err) && wk->tg.be->gpu && !strchr(target, ':')) {
    snprintf(name, sizeof name, "%s:%d", wk->tg.be->name, node_widx);   /* one GPU per local rank */
  }
  if (tg_resolve(name, &wk->tg, err) || tg_describe(&wk->tg, desc, err)) return -1;
  if (!wk->tg.be->gpu) bind_cpus(cpus, cap);
  else snprintf(cpus, cap, "-");
  const kn_kernel *k = tg_kernel(&wk->tg, kernel);
  if (!k) {
    rt_err_set(err, "unknown kernel '%s' on target %s", kernel, wk->tg.name);
    return -1;
  }
  char *bound = tg_kernel_bindings(&wk->tg, k, set, err), path[4096];
  if (!bound) return -1;
  sx_arena *arena = sx_arena_new();
  sp_binding *bd = NULL;
  int nb = *bound ? sp_parse_bindings(bound, arena, &bd, err) : 0;
  if (nb >= 0) wk->sp = sp_load_file(rt_project_path(k->space, path, sizeof path), bd, nb, err);
  free(bd);
  free(bound);
  if (wk->sp) {
    kn_problem pb;
    kn_problem_from_space(&pb, wk->sp);
    wk->w = ms_workload_new(k, &pb, err);
  }
  sx_arena_free(arena);
  return wk->w ? 0 : -1;
}

int mp_serve(void) {
  if (!inited) return EXIT_FAILURE;
  worker wk = {.die_after = -1};
  const char *kill = getenv("ROOFTUNE_TEST_MPI_KILL");   /* "RANK:N" (tests only) */
  int kr, kn;
  if (kill && sscanf(kill, "%d:%d", &kr, &kn) == 2 && kr == rank) wk.die_after = kn;
  const char *slow = getenv("ROOFTUNE_TEST_MPI_SLOW");   /* "RANK:SECONDS" (tests only) */
  double ks;
  if (slow && sscanf(slow, "%d:%lf", &kr, &ks) == 2 && kr == rank && ks > 0 && ks < 60) wk.slow = ks;
  mp_buf in = {0}, out = {0};
  for (;;) {
    int tag;
    recv_buf(0, MPI_ANY_TAG, &in, NULL, &tag);
    out.n = 0;
    if (tag == MP_QUIT) break;
    if (tag == MP_SETUP) {
      worker_reset(&wk);
      free(wk.setup.p);
      wk.setup = in;
      in = (mp_buf){0};
      int kind = (int)get_i64(&wk.setup);
      rt_err err = {0};
      tg_desc desc = {0};
      char host[256] = "?", cpus[128] = "-";
      gethostname(host, sizeof host - 1);
      int ok = kind == MP_SLEEP || (kind == MP_TUNE && !worker_tune(&wk, &wk.setup, &desc, cpus,
                                                                      sizeof cpus, &err));
      if (kind != MP_SLEEP && kind != MP_TUNE) rt_err_set(&err, "unknown set-up %d", kind);
      if (ok) wk.kind = kind;
      put_i64(&out, ok);
      put_str(&out, err.msg);
      put_str(&out, desc.fingerprint);
      put_str(&out, host);
      put_str(&out, kind == MP_TUNE ? wk.tg.name : "sleep");
      put_str(&out, cpus);
      send_buf(&out, 0, MP_READY);
      continue;
    }
    if (tag != MP_JOB) continue;
    int64_t id = get_i64(&in), kind = get_i64(&in);
    put_i64(&out, id);
    if (kind == MP_SLEEP) {
      double s = get_f64(&in);
      if (s > 0) sleep_us((long)(s * 1e6));
      put_i64(&out, 0);
    } else {
      const char *src = get_str(&in), *ldflags = get_str(&in);
      ms_result r;
      memset(&r, 0, sizeof r);
      if (wk.die_after >= 0 && wk.jobs++ >= wk.die_after) raise(SIGKILL);   /* the kill test */
      if (wk.slow > 0) sleep_us((long)(wk.slow * 1e6));                     /* the slow test */
      int rc = -1;
      if (wk.kind != MP_TUNE || !src) snprintf(r.msg, sizeof r.msg, "worker %d is not set up", rank);
      else rc = tg_measure(&wk.tg, wk.w, src, ldflags, &wk.ms, &r);
      put_i64(&out, rc);
      put(&out, &r, sizeof r);
    }
    send_buf(&out, 0, MP_DONE);
  }
  worker_reset(&wk);
  free(wk.setup.p);
  free(in.p);
  free(out.p);
  return EXIT_SUCCESS;
}

/* ---- Rank 0: the pool ---- */

typedef struct job {
  int64_t id;
  mp_buf msg;
} job;

static struct {
  int64_t *busy;            /* per worker (index w - 1): its job's id, -1 idle */
  job *queue;               /* waiting jobs, in submission order */
  int nq, capq, pending;
  char *list;               /* mp_worker_list's text */
  char **host, **target, **cpus;
  int64_t *jobs;            /* per worker: results it sent since the last set-up */
  int kind;                 /* the last set-up: MP_TUNE or MP_SLEEP */
} pool;

static void pool_grow(void) {
  if (pool.busy) return;
  pool.busy = rt_malloc((size_t)size * sizeof *pool.busy);
  pool.host = rt_calloc((size_t)size, sizeof *pool.host);
  pool.target = rt_calloc((size_t)size, sizeof *pool.target);
  pool.cpus = rt_calloc((size_t)size, sizeof *pool.cpus);
  pool.jobs = rt_calloc((size_t)size, sizeof *pool.jobs);
  for (int w = 0; w < size; w++) pool.busy[w] = -1;
}

/* Send every worker the set-up b and check their answers (invariant 3
** when fingerprint is not NULL). */
static int setup_all(mp_buf *b, const char *fingerprint, rt_err *err) {
  pool_grow();
  if (pool.pending) {
    rt_err_set(err, "the MPI pool is busy");
    return -1;
  }
  for (int w = 1; w < size; w++) send_buf(b, w, MP_SETUP), pool.jobs[w] = 0;
  int64_t kind;
  memcpy(&kind, b->p, sizeof kind);   /* the set-up's first field */
  pool.kind = (int)kind;
  mp_buf in = {0};
  int rc = 0;
  for (int got = 1; got < size; got++) {
    int from;
    recv_buf(MPI_ANY_SOURCE, MP_READY, &in, &from, NULL);
    int ok = (int)get_i64(&in);
    const char *msg = get_str(&in), *fp = get_str(&in), *host = get_str(&in), *tgt = get_str(&in),
               *cpus = get_str(&in);
    free(pool.host[from]), free(pool.target[from]), free(pool.cpus[from]);
    pool.host[from] = rt_strdup(host ? host : "?");
    pool.target[from] = rt_strdup(tgt ? tgt : "?");
    pool.cpus[from] = rt_strdup(cpus ? cpus : "-");
    if (rc) continue;   /* the first error is the one reported */
    if (!ok) {
      rt_err_set(err, "MPI worker rank %d on %s could not set up: %s", from, pool.host[from],
                 msg ? msg : "?");
      rc = -1;
    } else if (fingerprint && (!fp || strcmp(fp, fingerprint))) {
      rt_err_set(err, "MPI worker rank %d on %s describes target %s with fingerprint %s, not the "
                 "campaign's %s: the workers must be identical targets", from, pool.host[from],
                 pool.target[from], fp ? fp : "?", fingerprint);
      rc = -1;
    }
  }
  free(in.p);
  return rc;
}

int mp_start_tune(const char *target, const char *devices, const char *kernel, const char *set,
                  const ms_opts *ms, const char *fingerprint, rt_err *err) {
  if (!mp_workers()) return 0;
  mp_buf b = {0};
  put_i64(&b, MP_TUNE);
  put_str(&b, target), put_str(&b, devices), put_str(&b, kernel), put_str(&b, set);
  put_f64(&b, ms->ci_target), put_f64(&b, ms->time_cap), put_f64(&b, ms->timeout);
  put_i64(&b, ms->min_reps), put_i64(&b, ms->max_reps), put_i64(&b, ms->warmup);
  put_i64(&b, ms->flush_cache), put_i64(&b, ms->counters);
  put_str(&b, ms->cache_dir), put_str(&b, ms->cflags), put_str(&b, ms->events), put_str(&b, ms->guard);
  int rc = setup_all(&b, fingerprint, err);
  free(b.p);
  return rc;
}

int mp_start_sleep(rt_err *err) {
  if (!mp_workers()) {
    rt_err_set(err, "no MPI workers: run under mpirun -n N with N >= 2%s",
               mp_built() ? "" : " (this rooftune was built without MPI)");
    return -1;
  }
  mp_buf b = {0};
  put_i64(&b, MP_SLEEP);
  int rc = setup_all(&b, NULL, err);
  free(b.p);
  return rc;
}

const char *mp_worker_list(void) {
  if (!pool.host) return NULL;
  rt_str list = {0};
  for (int w = 1; w < size; w++)
    rt_str_printf(&list, "%srank %d on %s: %s, %s; %lld %s%s", w > 1 ? "\n" : "", w, pool.host[w],
                  pool.target[w], pool.cpus[w], (long long)pool.jobs[w],
                  pool.kind == MP_SLEEP ? "sleep" : "measurement", pool.jobs[w] == 1 ? "" : "s");
  free(pool.list);
  return pool.list = list.s;
}

char *mp_worker_json(void) {
  json_t *a = json_array();
  for (int w = 1; pool.host && w < size; w++)
    json_array_append_new(a, json_pack("{s:i, s:s, s:s, s:s, s:I}", "rank", w, "host", pool.host[w],
                                       "target", pool.target[w], "cpus", pool.cpus[w],
                                       "jobs", (json_int_t)pool.jobs[w]));
  char *s = json_dumps(a, JSON_COMPACT);
  json_decref(a);
  return s;
}

/* Hand job j (its message) to the lowest idle worker, or queue it. */
static void submit(int64_t id, mp_buf *msg) {
  pool_grow();
  pool.pending++;
  for (int w = 1; w < size; w++)
    if (pool.busy[w] < 0) {
      pool.busy[w] = id;
      send_buf(msg, w, MP_JOB);
      free(msg->p);
      return;
    }
  if (pool.nq == pool.capq)
    pool.queue = rt_realloc(pool.queue, (size_t)(pool.capq = pool.capq ? 2 * pool.capq : 16) * sizeof *pool.queue);
  pool.queue[pool.nq++] = (job){id, *msg};
}

/* Wait for the next result into *in; its job id. The worker that sent it
** gets the next queued job unless `hold` (a stopped batch). */
static int64_t collect(mp_buf *in, int hold) {
  int from;
  recv_buf(MPI_ANY_SOURCE, MP_DONE, in, &from, NULL);
  int64_t id = get_i64(in);
  pool.busy[from] = -1;
  pool.jobs[from]++;
  pool.pending--;
  if (pool.nq && !hold) {
    job j = pool.queue[0];
    memmove(pool.queue, pool.queue + 1, (size_t)--pool.nq * sizeof *pool.queue);
    pool.busy[from] = j.id;
    send_buf(&j.msg, from, MP_JOB);
    free(j.msg.p);
  }
  return id;
}

int mp_pending(void) { return pool.pending; }

static void measure_msg(mp_buf *b, int64_t id, const char *src, const char *ldflags) {
  put_i64(b, id), put_i64(b, MP_TUNE), put_str(b, src), put_str(b, ldflags);
}

static int take_result(mp_buf *in, ms_result *r) {
  int rc = (int)get_i64(in);
  if (get(in, r, sizeof *r)) {
    memset(r, 0, sizeof *r);
    snprintf(r->msg, sizeof r->msg, "a malformed result from an MPI worker");
    return -1;
  }
  return rc;
}

int mp_measure(const char *src, const char *ldflags, ms_result *r) {
  if (pool.pending) {
    memset(r, 0, sizeof *r);
    snprintf(r->msg, sizeof r->msg, "the MPI pool is busy");
    return -1;
  }
  mp_buf b = {0}, in = {0};
  measure_msg(&b, 0, src, ldflags);
  submit(0, &b);
  collect(&in, 0);
  int rc = take_result(&in, r);
  free(in.p);
  return rc;
}

int mp_measure_batch(const char *const *srcs, int n, ms_result *r,
                     const volatile sig_atomic_t *stop, rt_err *err) {
  if (pool.pending) {
    rt_err_set(err, "the MPI pool is busy");
    return -1;
  }
  int *done = rt_calloc((size_t)(n ? n : 1), sizeof *done), bad = 0;
  for (int i = 0; i < n; i++) {
    mp_buf b = {0};
    measure_msg(&b, i, srcs[i], NULL);
    submit(i, &b);
  }
  mp_buf in = {0};
  while (pool.pending) {
    int stopped = stop && *stop;
    if (stopped) {   /* what has not left stays unmeasured */
      for (int q = 0; q < pool.nq; q++) free(pool.queue[q].msg.p);
      pool.pending -= pool.nq, pool.nq = 0;
      if (!pool.pending) break;
    }
    int64_t id = collect(&in, stopped);
    if (id < 0 || id >= n) {
      bad = 1;
      continue;
    }
    if (take_result(&in, &r[id]) < 0) {
      if (!bad) rt_err_set(err, "MPI worker: %s", r[id].msg);
      bad = 1;
    }
    done[id] = 1;
  }
  int k = 0;
  while (k < n && done[k]) k++;
  free(done);
  free(in.p);
  return bad ? -1 : k;
}

int mp_measure_submit(int64_t id, const char *src, const char *ldflags, rt_err *err) {
  if (!mp_workers() || pool.kind != MP_TUNE) {
    rt_err_set(err, "no MPI workers set up to measure");
    return -1;
  }
  mp_buf b = {0};
  measure_msg(&b, id, src, ldflags);
  submit(id, &b);
  return 0;
}

int mp_measure_collect(int64_t *id, int *rc, ms_result *r, rt_err *err) {
  if (!pool.pending) {
    rt_err_set(err, "no measurement is in flight");
    return -1;
  }
  mp_buf in = {0};
  *id = collect(&in, 0);
  *rc = take_result(&in, r);
  free(in.p);
  return 0;
}

int mp_sleep_submit(int64_t id, double seconds, rt_err *err) {
  if (!mp_workers()) {
    rt_err_set(err, "no MPI workers");
    return -1;
  }
  mp_buf b = {0};
  put_i64(&b, id), put_i64(&b, MP_SLEEP), put_f64(&b, seconds);
  submit(id, &b);
  return 0;
}

int mp_sleep_collect(int64_t *id, rt_err *err) {
  if (!pool.pending) {
    rt_err_set(err, "no emulated evaluation is in flight");
    return -1;
  }
  mp_buf in = {0};
  *id = collect(&in, 0);
  free(in.p);
  return 0;
}

#else /* !HAVE_MPI: a pool of no workers */

void mp_init(int *argc, char ***argv) { (void)argc, (void)argv; }
int mp_built(void) { return 0; }
int mp_rank(void) { return 0; }
int mp_workers(void) { return 0; }
void mp_end(void) {}
int mp_serve(void) { return EXIT_FAILURE; }
int mp_start_tune(const char *target, const char *devices, const char *kernel, const char *set,
                  const ms_opts *ms, const char *fingerprint, rt_err *err) {
  (void)target, (void)devices, (void)kernel, (void)set, (void)ms, (void)fingerprint, (void)err;
  return 0;
}
int mp_start_sleep(rt_err *err) {
  rt_err_set(err, "no MPI workers: this rooftune was built without MPI (libopenmpi-dev: see the README)");
  return -1;
}
const char *mp_worker_list(void) { return NULL; }
char *mp_worker_json(void) { return rt_strdup("[]"); }
int mp_measure(const char *src, const char *ldflags, ms_result *r) {
  (void)src, (void)ldflags;
  memset(r, 0, sizeof *r);
  snprintf(r->msg, sizeof r->msg, "built without MPI");
  return -1;
}
int mp_measure_batch(const char *const *srcs, int n, ms_result *r,
                     const volatile sig_atomic_t *stop, rt_err *err) {
  (void)srcs, (void)n, (void)r, (void)stop;
  rt_err_set(err, "built without MPI");
  return -1;
}
int mp_measure_submit(int64_t id, const char *src, const char *ldflags, rt_err *err) {
  (void)id, (void)src, (void)ldflags;
  rt_err_set(err, "built without MPI");
  return -1;
}
int mp_measure_collect(int64_t *id, int *rc, ms_result *r, rt_err *err) {
  (void)id, (void)rc, (void)r;
  rt_err_set(err, "built without MPI");
  return -1;
}
int mp_sleep_submit(int64_t id, double seconds, rt_err *err) {
  (void)id, (void)seconds;
  rt_err_set(err, "built without MPI");
  return -1;
}
int mp_sleep_collect(int64_t *id, rt_err *err) {
  (void)id;
  rt_err_set(err, "built without MPI");
  return -1;
}
int mp_pending(void) { return 0; }

#endif
