/*
** emu_run.c -- the CPU emulator of generated CUDA source for the tests
** (contract in emu_run.h; the kernel side is emu_prelude.h, the interface
** between the two emu_abi.h).
**
** Parent: rewrite and compile the source (cached .so), map the buffers
** (shared, between guard pages, canaries around), fork. Child: dlopen, run
** the plan, one block at a time, the block's threads as fibers scheduled
** round-robin; a thread runs until it waits at a barrier, and
** the last thread to arrive releases the others and runs on. Any error in
** the child writes a message into the shared record and _exits; the parent
** turns the exit status, the record, the canaries and the inputs into 0 or
** an rt_err. Under AddressSanitizer the fiber switches are announced with
** __sanitizer_start/finish_switch_fiber.
**
** Fiber switches: on x86-64 a few instructions (callee-saved registers,
** MXCSR and the x87 control word, then the stack pointer); elsewhere, or
** with -DEMU_UCONTEXT, swapcontext, whose two signal-mask system calls per
** switch make a barrier-heavy kernel several times slower.
*/
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu_abi.h"
#include "emu_run.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#define EMU_ASAN 1
#else
#define EMU_ASAN 0
#endif

#define EMU_PRELUDE "tests/cuda_emu/emu_prelude.h"
#define EMU_ABI "tests/cuda_emu/emu_abi.h"
#define EMU_CXXFLAGS "-std=gnu++17 -O1 -w -fno-strict-aliasing -shared -fPIC"
#define EMU_CANARY 0xA5
#define EMU_POISON 0x7fc0deadu  /* a quiet NaN */
#define EMU_MAXSMEM (227u * 1024) /* the H200's opt-in limit per block */

enum { EX_OK = 0, EX_FAIL = 2, EX_SIGNAL = 3 };

/* ---- contexts: ctx_init prepares a fresh stack to run fn, ctx_switch
** saves the running context into from and resumes to ---- */
#if defined(__x86_64__) && !defined(EMU_UCONTEXT)
typedef struct emu_ctx {
  void *sp;
} emu_ctx;
void emu__switch(void **from_sp, void *to_sp);
__asm__(".text\n"
        ".globl emu__switch\n"
        ".hidden emu__switch\n"
        ".type emu__switch,@function\n"
        "emu__switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  subq $8, %rsp\n  stmxcsr (%rsp)\n  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n  fldcw 4(%rsp)\n  addq $8, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size emu__switch,.-emu__switch\n");

/* The new stack, from its top: a zero return address for fn (which never
** returns), fn's address for emu__switch's ret, six zero registers, and
** the control words (MXCSR 0x1f80, x87 0x037f: the defaults). */
static void ctx_init(emu_ctx *c, char *stack, size_t size, void (*fn)(void)) {
  uint64_t *top = (uint64_t *)((uintptr_t)(stack + size) & ~(uintptr_t)15);
  uint64_t *sp = top - 9;
  memset(sp, 0, 9 * sizeof *sp);
  sp[7] = (uint64_t)(uintptr_t)fn;
  uint32_t cw[2] = {0x1f80, 0x037f};
  memcpy(sp, cw, sizeof cw);
  c->sp = sp;
}
static void ctx_switch(emu_ctx *from, emu_ctx *to) { emu__switch(&from->sp, to->sp); }
#else
#include <ucontext.h>
typedef struct emu_ctx {
  ucontext_t uc;
} emu_ctx;
static void ctx_init(emu_ctx *c, char *stack, size_t size, void (*fn)(void)) {
  getcontext(&c->uc);
  c->uc.uc_stack.ss_sp = stack;
  c->uc.uc_stack.ss_size = size;
  c->uc.uc_link = NULL;
  makecontext(&c->uc, fn, 0);
}
static void ctx_switch(emu_ctx *from, emu_ctx *to) { swapcontext(&from->uc, &to->uc); }
#endif

/* ---- the rewrite of extern __shared__ ---- */

static int is_ident(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* s starts the word w (whole word). */
static int word_at(const char *src, const char *s, const char *w) {
  size_t n = strlen(w);
  return (s == src || !is_ident(s[-1])) && !strncmp(s, w, n) && !is_ident(s[n]);
}

/* The type of a declaration `T name[]` given as text d (n bytes), without
** alignment attributes, into t; its name into name. 0 or -1. */
static int split_decl(const char *d, size_t n, rt_str *t, char *name, size_t cap) {
  while (n && (d[n - 1] == ' ' || d[n - 1] == '\t' || d[n - 1] == '\n' || d[n - 1] == '\r')) n--;
  if (!n || d[n - 1] != ']') return -1;
  n--;
  while (n && (d[n - 1] == ' ' || d[n - 1] == '\t')) n--;
  if (!n || d[n - 1] != '[') return -1;
  n--;
  while (n && (d[n - 1] == ' ' || d[n - 1] == '\t')) n--;
  size_t e = n;
  while (n && is_ident(d[n - 1])) n--;
  if (n == e || e - n >= cap) return -1;
  memcpy(name, d + n, e - n);
  name[e - n] = 0;
  /* the type: the words before the name, attributes dropped */
  for (size_t i = 0; i < n;) {
    if (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') { i++; continue; }
    size_t j = i;
    while (j < n && (is_ident(d[j]) || d[j] == ':' || d[j] == '*')) j++;
    if (j == i) return -1;
    int attr = (j - i == 9 && !strncmp(d + i, "__align__", 9)) ||
               (j - i == 7 && !strncmp(d + i, "alignas", 7)) ||
               (j - i == 13 && !strncmp(d + i, "__attribute__", 13));
    if (attr) {
      while (j < n && (d[j] == ' ' || d[j] == '\t')) j++;
      if (j >= n || d[j] != '(') return -1;
      int depth = 0;
      for (; j < n; j++) {
        if (d[j] == '(') depth++;
        if (d[j] == ')' && --depth == 0) break;
      }
      if (j >= n) return -1;
      j++;
    } else {
      rt_str_printf(t, "%s%.*s", t->n ? " " : "", (int)(j - i), d + i);
    }
    i = j;
  }
  return t->n ? 0 : -1;
}

char *emu_rewrite(const char *src, rt_err *err) {
  rt_str out = {0};
  rt_str_printf(&out, "%s", "");
  const char *s = src, *copied = src;
  int depth = 0, line = 1;
  while (*s) {
    if (s[0] == '/' && s[1] == '/') {
      while (*s && *s != '\n') s++;
      continue;
    }
    if (s[0] == '/' && s[1] == '*') {
      for (s += 2; *s && !(s[0] == '*' && s[1] == '/'); s++)
        if (*s == '\n') line++;
      if (*s) s += 2;
      continue;
    }
    if (*s == '"' || *s == '\'') {
      char q = *s++;
      while (*s && *s != q && *s != '\n') s += s[0] == '\\' && s[1] ? 2 : 1;
      if (*s == q) s++;
      continue;
    }
    if (*s == '\n') line++;
    if (*s == '{') depth++;
    if (*s == '}') depth--;
    if (*s == 'e' && word_at(src, s, "extern")) {
      const char *q = s + 6;
      while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r') q++;
      if (word_at(src, q, "__shared__")) {
        const char *d = q + 10, *end = strchr(d, ';');
        rt_str type = {0};
        char name[128];
        if (!end || split_decl(d, (size_t)(end - d), &type, name, sizeof name)) {
          free(type.s);
          free(out.s);
          rt_err_set(err, "line %d: cannot read this extern __shared__ declaration "
                     "(expected 'extern __shared__ [__align__(N)] TYPE NAME[];')", line);
          return NULL;
        }
        int nl = 0;
        for (const char *c = s; c < end; c++) nl += *c == '\n';
        rt_str_printf(&out, "%.*s", (int)(s - copied), copied);
        if (depth > 0) {
          rt_str_printf(&out, "%s *const %s = (%s *)emu_rt.dyn_smem;", type.s, name, type.s);
          for (int i = 0; i < nl; i++) rt_str_printf(&out, "\n");
        } else {
          rt_str_printf(&out, "\n#define %s ((%s *)emu_rt.dyn_smem)\n#line %d\n", name,
                        type.s, line + nl);
        }
        free(type.s);
        line += nl;
        s = copied = end + 1;
        continue;
      }
    }
    s++;
  }
  rt_str_printf(&out, "%s", copied);
  return out.s;
}

/* ---- compiling, with a cache ---- */

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  rt_str b = {0};
  rt_str_printf(&b, "%s", "");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) rt_str_printf(&b, "%.*s", (int)n, buf);
  fclose(f);
  return b.s;
}

static int write_all(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t n = strlen(text);
  int bad = fwrite(text, 1, n, f) != n;
  bad |= fclose(f) != 0;
  return bad ? -1 : 0;
}

/* Run argv with stdout and stderr into log; the exit status, or -1. */
static int run_logged(char *const *argv, const char *log) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    execvp(argv[0], argv);
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int emu_available(const char **why) {
  char prelude[4096];
  rt_project_path(EMU_PRELUDE, prelude, sizeof prelude);
  if (access(prelude, R_OK)) {
    *why = "tests/cuda_emu/emu_prelude.h not found (run from the project root)";
    return 0;
  }
  char *argv[] = {getenv("EMU_CXX") ? getenv("EMU_CXX") : "g++", "--version", NULL};
  if (run_logged(argv, "/dev/null") != 0) {
    *why = "no C++ compiler (g++, or $EMU_CXX) to build emulated kernels";
    return 0;
  }
  return 1;
}

/* Compile src (already rewritten) into a cached .so; its path into so. */
static int emu_compile(const char *src, char *so, size_t cap, rt_err *err) {
  char prelude[4096], abi[4096];
  rt_project_path(EMU_PRELUDE, prelude, sizeof prelude);
  rt_project_path(EMU_ABI, abi, sizeof abi);
  char *pt = read_all(prelude), *at = read_all(abi);
  if (!pt || !at) {
    free(pt);
    free(at);
    rt_err_set(err, "cannot read %s (run from the project root or set ROOFTUNE_HOME)", prelude);
    return -1;
  }
  const char *cxx = getenv("EMU_CXX") ? getenv("EMU_CXX") : "g++";
  rt_hash h = rt_hash_bytes(RT_HASH_INIT, src, strlen(src) + 1);
  h = rt_hash_bytes(h, pt, strlen(pt) + 1);
  h = rt_hash_bytes(h, at, strlen(at) + 1);
  h = rt_hash_bytes(h, EMU_CXXFLAGS, sizeof EMU_CXXFLAGS);
  h = rt_hash_bytes(h, cxx, strlen(cxx) + 1);
  free(pt);
  free(at);
  char hex[33], dir[4096], cpp[4200], tmp[4200], log[4200];
  rt_hash_hex(h, hex);
  const char *td = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  snprintf(dir, sizeof dir, "%s/rooftune-emu-%u", td, (unsigned)getuid());
  if (mkdir(dir, 0700) && errno != EEXIST) {
    rt_err_set(err, "cannot create %s: %s", dir, strerror(errno));
    return -1;
  }
  snprintf(so, cap, "%s/%s.so", dir, hex);
  if (access(so, R_OK) == 0) return 0;
  snprintf(cpp, sizeof cpp, "%s/%s.cpp", dir, hex);
  snprintf(tmp, sizeof tmp, "%s/%s.%ld.so", dir, hex, (long)getpid());
  snprintf(log, sizeof log, "%s/%s.log", dir, hex);
  if (write_all(cpp, src)) {
    rt_err_set(err, "cannot write %s", cpp);
    return -1;
  }
  char flags[] = EMU_CXXFLAGS;
  char *argv[32];
  int n = 0;
  argv[n++] = (char *)cxx;
  for (char *w = strtok(flags, " "); w; w = strtok(NULL, " ")) argv[n++] = w;
  argv[n++] = "-include";
  argv[n++] = prelude;
  argv[n++] = "-x";
  argv[n++] = "c++";
  argv[n++] = cpp;
  argv[n++] = "-o";
  argv[n++] = tmp;
  argv[n] = NULL;
  int rc = run_logged(argv, log);
  if (rc != 0 || rename(tmp, so)) {
    char *l = read_all(log);
    rt_err_set(err, "%s failed on the emulated source %s (status %d): %.380s", cxx, cpp, rc,
               l ? l : "(no log)");
    free(l);
    unlink(tmp);
    return -1;
  }
  return 0;
}

/* ---- guarded shared areas (buffers, workspace, dynamic shared memory) ---- */

typedef struct emu_area {
  char *map;      /* guard page, data pages, guard page */
  size_t len;     /* of the whole mapping */
  char *p;        /* the buffer: 256-byte aligned, ending near the guard */
  size_t n;       /* its bytes */
} emu_area;

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static int area_new(emu_area *a, size_t n) {
  size_t pg = page_size(), data = (n + 255 + pg - 1) / pg * pg;
  a->len = data + 2 * pg;
  a->map = mmap(NULL, a->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (a->map == MAP_FAILED) return a->map = NULL, -1;
  mprotect(a->map, pg, PROT_NONE);
  mprotect(a->map + pg + data, pg, PROT_NONE);
  memset(a->map + pg, EMU_CANARY, data);
  a->p = (char *)((uintptr_t)(a->map + pg + data - n) & ~(uintptr_t)255);
  a->n = n;
  return 0;
}

static void area_free(emu_area *a) {
  if (a->map) munmap(a->map, a->len);
  a->map = NULL;
}

static void poison(void *p, size_t n) {
  uint32_t v = EMU_POISON;
  for (size_t i = 0; i + 4 <= n; i += 4) memcpy((char *)p + i, &v, 4);
}

/* Bytes around the buffer that are no longer canaries: 0 if none. */
static size_t canary_damage(const emu_area *a, size_t *before) {
  size_t pg = page_size();
  const char *lo = a->map + pg, *hi = a->map + a->len - pg;
  size_t bad = 0;
  *before = 0;
  for (const char *c = lo; c < a->p; c++)
    if ((unsigned char)*c != EMU_CANARY) bad++, (*before)++;
  for (const char *c = a->p + a->n; c < hi; c++)
    if ((unsigned char)*c != EMU_CANARY) bad++;
  return bad;
}

/* ---- the child: fibers and the scheduler ---- */

typedef void (*emu_kfn)(void *, void *, void *, void *, void *, void *, void *, void *);

enum { F_READY, F_WAIT_BLOCK, F_WAIT_WARP, F_DONE };

typedef struct emu_fiber {
  emu_ctx ctx;
  emu_u3 tid;
  unsigned lane, warp;
  int state, line;
  void *fake;  /* AddressSanitizer's fake stack while switched out */
} emu_fiber;

typedef struct emu_warp {
  uint64_t slot[2][33];  /* [phase][lane]; [32]: the lanes that took part */
  int phase, line;
  unsigned exist, live, arrived, mask;
} emu_warp;

/* What the child tells the parent (shared mapping). */
typedef struct emu_shared {
  int sig;
  void *addr;
  int step;                 /* plan step running (-1: none) */
  emu_u3 bid, tid;          /* block and thread running */
  char *stacks;             /* the fiber stacks, to name a stack overflow */
  size_t stacks_len, stack_bytes;
  char msg[1024];
} emu_shared;

static struct {
  emu_rt_t *rt;
  emu_shared *sh;
  const char *kname;
  emu_kfn kernel;
  void *args[GK_MAXARG];
  emu_fiber *f;
  emu_warp *w;
  int nthr, cur, reverse;
  int live, arrived, bline, exited;
  emu_u3 exited_tid;
  char *stacks;
  size_t stack_bytes, stacks_len;
  emu_ctx main;
  void *main_fake;
  const void *main_bottom;
  size_t main_size;
} E;

static void child_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void child_fail(const char *fmt, ...) {
  char m[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m, sizeof m, fmt, ap);
  va_end(ap);
  if (E.sh->step >= 0) {
    emu_u3 b = E.rt->bid, t = E.f ? E.f[E.cur].tid : E.rt->tid;
    snprintf(E.sh->msg, sizeof E.sh->msg, "kernel %s, block (%u,%u,%u), thread (%u,%u,%u): %s",
             E.kname, b.x, b.y, b.z, t.x, t.y, t.z, m);
  } else {
    snprintf(E.sh->msg, sizeof E.sh->msg, "%s", m);
  }
  _exit(EX_FAIL);
}

static void on_signal(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  E.sh->sig = sig;
  E.sh->addr = si->si_addr;
  if (E.rt) E.sh->bid = E.rt->bid;
  if (E.f) E.sh->tid = E.f[E.cur].tid;
  _exit(EX_SIGNAL);
}

/* Switch from the scheduler to fiber i until it waits or ends. */
static void switch_to(int i) {
  emu_fiber *f = &E.f[i];
  E.cur = i;
  E.rt->tid = f->tid;
  E.rt->lane = f->lane;
#if EMU_ASAN
  __sanitizer_start_switch_fiber(&E.main_fake, E.stacks + (size_t)i * E.stack_bytes + page_size(),
                                 E.stack_bytes - page_size());
#endif
  ctx_switch(&E.main, &f->ctx);
#if EMU_ASAN
  __sanitizer_finish_switch_fiber(E.main_fake, NULL, NULL);
#endif
}

/* From the running fiber back to the scheduler; returns when resumed. */
static void yield(void) {
  emu_fiber *f = &E.f[E.cur];
#if EMU_ASAN
  __sanitizer_start_switch_fiber(&f->fake, E.main_bottom, E.main_size);
#endif
  ctx_switch(&f->ctx, &E.main);
#if EMU_ASAN
  __sanitizer_finish_switch_fiber(f->fake, NULL, NULL);
#endif
}

static void cb_syncthreads(int line) {
  emu_fiber *f = &E.f[E.cur];
  if (E.exited)
    child_fail("__syncthreads() at line %d after thread (%u,%u,%u) of the block exited "
               "(a barrier some threads skip)", line, E.exited_tid.x, E.exited_tid.y,
               E.exited_tid.z);
  if (E.arrived == 0)
    E.bline = line;
  else if (line != E.bline)
    child_fail("divergent __syncthreads(): this thread is at line %d while %d threads wait "
               "at line %d", line, E.arrived, E.bline);
  if (++E.arrived == E.live) {
    E.arrived = 0;
    for (int i = 0; i < E.nthr; i++)
      if (E.f[i].state == F_WAIT_BLOCK) E.f[i].state = F_READY;
    return;
  }
  f->state = F_WAIT_BLOCK;
  f->line = line;
  yield();
}

static const uint64_t *cb_xchg(unsigned mask, uint64_t val, int line) {
  emu_fiber *f = &E.f[E.cur];
  emu_warp *w = &E.w[f->warp];
  unsigned bit = 1u << f->lane, m = mask & w->exist;
  if (!(mask & bit))
    child_fail("warp exchange at line %d with mask 0x%08x, which leaves out the calling lane %u",
               line, mask, f->lane);
  if (m & ~w->live)
    child_fail("warp exchange at line %d: mask 0x%08x names lanes that exited (0x%08x)", line,
               mask, m & ~w->live);
  if (w->arrived == 0) {
    w->mask = m;
    w->line = line;
  } else if (w->mask != m) {
    child_fail("warp exchange at line %d with mask 0x%08x while lanes 0x%08x wait at line %d "
               "with mask 0x%08x", line, m, w->arrived, w->line, w->mask);
  }
  const uint64_t *res = w->slot[w->phase];
  w->slot[w->phase][f->lane] = val;
  w->arrived |= bit;
  if (w->arrived == w->mask) {
    w->slot[w->phase][32] = w->arrived;
    for (unsigned l = 0; l < 32; l++)
      if ((w->arrived >> l & 1) && l != f->lane) E.f[f->warp * 32 + l].state = F_READY;
    w->arrived = 0;
    w->phase ^= 1;
    return res;
  }
  f->state = F_WAIT_WARP;
  f->line = line;
  yield();
  return res;
}

static void cb_fail(const char *msg, int line) {
  child_fail("%s (line %d)", msg, line);
}

static void fiber_main(void) {
#if EMU_ASAN
  __sanitizer_finish_switch_fiber(NULL, &E.main_bottom, &E.main_size);
#endif
  void **a = E.args;
  E.kernel(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
  emu_fiber *f = &E.f[E.cur];
  emu_warp *w = &E.w[f->warp];
  unsigned bit = 1u << f->lane;
  if (E.arrived)
    child_fail("the thread exited while %d threads wait at __syncthreads() line %d "
               "(a barrier some threads skip)", E.arrived, E.bline);
  if (w->arrived && (w->mask & bit))
    child_fail("the thread exited while lanes 0x%08x of its warp wait for it in a warp "
               "exchange at line %d", w->arrived, w->line);
  w->live &= ~bit;
  if (!E.exited++) E.exited_tid = f->tid;
  E.live--;
  f->state = F_DONE;
#if EMU_ASAN
  __sanitizer_start_switch_fiber(NULL, E.main_bottom, E.main_size);
#endif
  ctx_switch(&f->ctx, &E.main);
  abort(); /* never resumed */
}

static void deadlock(void) {
  int nb = 0, nw = 0, lb = 0, lw = 0, fb = -1, fw = -1;
  for (int i = 0; i < E.nthr; i++) {
    if (E.f[i].state == F_WAIT_BLOCK && !nb++) lb = E.f[i].line, fb = i;
    if (E.f[i].state == F_WAIT_WARP && !nw++) lw = E.f[i].line, fw = i;
  }
  E.cur = fb >= 0 ? fb : fw >= 0 ? fw : 0;
  child_fail("deadlock: %d threads wait at __syncthreads() (first at line %d), %d in warp "
             "exchanges (first at line %d, thread %d)", nb, lb, nw, lw, fw);
}

static void run_block(void) {
  size_t pg = page_size();
  for (int i = 0; i < E.nthr; i++) {
    emu_fiber *f = &E.f[i];
    ctx_init(&f->ctx, E.stacks + (size_t)i * E.stack_bytes + pg, E.stack_bytes - pg, fiber_main);
    f->state = F_READY;
  }
  int nwarp = (E.nthr + 31) / 32;
  for (int i = 0; i < nwarp; i++) {
    int n = E.nthr - 32 * i < 32 ? E.nthr - 32 * i : 32;
    E.w[i].exist = E.w[i].live = n == 32 ? 0xffffffffu : (1u << n) - 1;
    E.w[i].arrived = 0;
    E.w[i].phase = 0;
  }
  E.live = E.nthr;
  E.arrived = E.exited = 0;
  while (E.live > 0) {
    int ran = 0;
    for (int k = 0; k < E.nthr; k++) {
      int i = E.reverse ? E.nthr - 1 - k : k;
      if (E.f[i].state == F_READY) {
        ran = 1;
        switch_to(i);
      }
    }
    if (!ran) deadlock();
  }
}

static void run_launch(void *so, const gk_step *st, void *const *bufp, void *ws, size_t stack) {
  E.kname = st->name;
  E.kernel = (emu_kfn)(uintptr_t)dlsym(so, st->name);
  if (!E.kernel)
    child_fail("no kernel named %s in the source (extern \"C\" __global__?)", st->name);
  uint64_t nthr = (uint64_t)st->block[0] * st->block[1] * st->block[2];
  if (nthr > 1024) child_fail("a block of %llu threads (at most 1024)", (unsigned long long)nthr);
  if (st->block[2] > 64) child_fail("blockDim.z %u (at most 64)", st->block[2]);
  if (st->grid[1] > 65535 || st->grid[2] > 65535)
    child_fail("gridDim (%u,%u,%u): y and z at most 65535", st->grid[0], st->grid[1], st->grid[2]);
  if (st->smem > EMU_MAXSMEM)
    child_fail("%u bytes of dynamic shared memory (the H200 allows %u)", st->smem, EMU_MAXSMEM);
  for (int i = 0; i < GK_MAXARG; i++)
    E.args[i] = i < st->nargs ? (st->arg[i] == GK_WS ? ws : bufp[st->arg[i]]) : NULL;
  emu_area smem;
  if (area_new(&smem, st->smem)) child_fail("out of memory for shared memory");
  size_t pg = page_size();
  E.nthr = (int)nthr;
  E.stack_bytes = (stack + pg - 1) / pg * pg + pg;
  E.stacks_len = E.stack_bytes * nthr;
  E.stacks = mmap(NULL, E.stacks_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (E.stacks == MAP_FAILED) child_fail("out of memory for %llu fiber stacks", (unsigned long long)nthr);
  for (int i = 0; i < E.nthr; i++) mprotect(E.stacks + (size_t)i * E.stack_bytes, pg, PROT_NONE);
  E.sh->stacks = E.stacks;
  E.sh->stacks_len = E.stacks_len;
  E.sh->stack_bytes = E.stack_bytes;
  E.f = calloc((size_t)nthr, sizeof *E.f);
  E.w = calloc((size_t)(nthr + 31) / 32, sizeof *E.w);
  if (!E.f || !E.w) child_fail("out of memory");
  for (int i = 0; i < E.nthr; i++) {
    unsigned x = (unsigned)i % st->block[0], y = (unsigned)i / st->block[0] % st->block[1],
             z = (unsigned)i / (st->block[0] * st->block[1]);
    E.f[i].tid = (emu_u3){x, y, z};
    E.f[i].lane = (unsigned)i % 32;
    E.f[i].warp = (unsigned)i / 32;
  }
  E.rt->bdim = (emu_u3){st->block[0], st->block[1], st->block[2]};
  E.rt->gdim = (emu_u3){st->grid[0], st->grid[1], st->grid[2]};
  E.rt->dyn_smem = smem.p;
  E.rt->dyn_smem_bytes = st->smem;
  for (unsigned bz = 0; bz < st->grid[2]; bz++)
    for (unsigned by = 0; by < st->grid[1]; by++)
      for (unsigned bx = 0; bx < st->grid[0]; bx++) {
        E.rt->bid = (emu_u3){bx, by, bz};
        poison(smem.p, smem.n);
        run_block();
      }
  size_t before;
  if (canary_damage(&smem, &before))
    child_fail("writes out of bounds of the %u bytes of dynamic shared memory", st->smem);
  free(E.f);
  free(E.w);
  E.f = NULL;
  E.w = NULL;
  munmap(E.stacks, E.stacks_len);
  E.sh->stacks = NULL;
  area_free(&smem);
}

static void child_main(const char *so_path, const gk_plan *p, emu_area *buf, int nbuf,
                       emu_area *ws, const kn_buf *b, const emu_opts *o, emu_shared *sh) {
  memset(&E, 0, sizeof E);
  E.sh = sh;
  E.reverse = o->reverse;
  sh->step = -1;
  alarm(o->timeout_s);
  static char altstack[1 << 16];
  stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
  sigaltstack(&ss, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) sigaction(sigs[i], &sa, NULL);
  void *so = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
  if (!so) child_fail("dlopen %s: %s", so_path, dlerror());
  E.rt = dlsym(so, "emu_rt");
  if (!E.rt || E.rt->abi != EMU_ABI_VERSION)
    child_fail("%s: no emu_rt of ABI %d (a stale prelude?)", so_path, EMU_ABI_VERSION);
  E.rt->syncthreads = cb_syncthreads;
  E.rt->xchg = cb_xchg;
  E.rt->fail = cb_fail;
  void *bufp[GK_MAXARG];
  for (int i = 0; i < nbuf; i++) bufp[i] = buf[i].p;
  for (int r = 0; r < o->runs; r++) {
    for (int i = 0; i < p->nsteps; i++)
      if (p->step[i].kind == GK_ZERO) {
        int a = p->step[i].arg[0];
        if (a == GK_WS)
          memset(ws->p, 0, ws->n);
        else
          memset(buf[a].p, 0, (size_t)b[a].n * sizeof(float));
      }
    for (int i = 0; i < p->nsteps; i++)
      if (p->step[i].kind == GK_LAUNCH) {
        sh->step = i;
        run_launch(so, &p->step[i], bufp, ws->p, o->stack_bytes);
        sh->step = -1;
      }
  }
  _exit(EX_OK);
}

/* ---- the parent ---- */

/* Name what address a lies in: a buffer's guard page, a fiber stack's. */
static void name_address(const emu_shared *sh, const emu_area *buf, int nbuf,
                         const emu_area *ws, char *out, size_t cap) {
  const char *a = sh->addr;
  size_t pg = page_size();
  for (int i = -1; i < nbuf; i++) {
    const emu_area *r = i < 0 ? ws : &buf[i];
    char nm[16];
    snprintf(nm, sizeof nm, i < 0 ? "ws" : "b%d", i);
    if (!r->map) continue;
    if (a >= r->map && a < r->map + pg) {
      snprintf(out, cap, " (out of bounds: before the start of %s)", nm);
      return;
    }
    if (a >= r->map + r->len - pg && a < r->map + r->len) {
      snprintf(out, cap, " (out of bounds: past the end of %s)", nm);
      return;
    }
  }
  if (sh->stacks && a >= sh->stacks && a < sh->stacks + sh->stacks_len &&
      (size_t)(a - sh->stacks) % sh->stack_bytes < pg) {
    snprintf(out, cap, " (a fiber stack overflowed: raise emu_opts.stack_bytes)");
    return;
  }
  snprintf(out, cap, "%s", "");
}

int emu_run(const char *src, const gk_plan *p, const kn_buf *b, int nbuf,
            float *const *data, const emu_opts *o, rt_err *err) {
  emu_opts opt = o ? *o : (emu_opts){0};
  if (!opt.timeout_s) opt.timeout_s = 120;
  if (opt.runs <= 0) opt.runs = 1;
  if (!opt.stack_bytes) opt.stack_bytes = 256 * 1024;
  if (nbuf < 0 || nbuf > GK_MAXARG) {
    rt_err_set(err, "emu_run: %d buffers (at most %d)", nbuf, GK_MAXARG);
    return -1;
  }
  for (int i = 0; i < p->nsteps; i++) {
    const gk_step *st = &p->step[i];
    if (st->kind == GK_LIBRARY) {
      rt_err_set(err, "emu_run: plan step %d calls the library routine %s, which is not emulated",
                 i + 1, st->name);
      return -1;
    }
    for (int a = 0; a < st->nargs; a++) {
      if (st->arg[a] != GK_WS && (st->arg[a] < 0 || st->arg[a] >= nbuf)) {
        rt_err_set(err, "emu_run: plan step %d names b%d of %d buffers", i + 1, st->arg[a], nbuf);
        return -1;
      }
      if (st->how[a] != GK_ARG_BUF) {
        rt_err_set(err, "emu_run: plan step %d passes s%d by value, which is not emulated", i + 1,
                   st->arg[a]);
        return -1;
      }
    }
  }
  if (p->nsym || p->nentry || p->options[0]) {
    rt_err_set(err, "emu_run: symbol, entry and options lines are not emulated");
    return -1;
  }
  char *rw = emu_rewrite(src, err);
  if (!rw) return -1;
  char so[4400];
  int rc = emu_compile(rw, so, sizeof so, err);
  free(rw);
  if (rc) return -1;

  emu_area buf[GK_MAXARG], ws;
  memset(buf, 0, sizeof buf);
  memset(&ws, 0, sizeof ws);
  emu_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  int ret = -1;
  if (sh == MAP_FAILED) {
    rt_err_set(err, "emu_run: mmap: %s", strerror(errno));
    return -1;
  }
  memset(sh, 0, sizeof *sh);
  for (int i = 0; i < nbuf; i++) {
    if (area_new(&buf[i], (size_t)b[i].n * sizeof(float))) {
      rt_err_set(err, "emu_run: cannot map b%d (%lld floats)", i, (long long)b[i].n);
      goto out;
    }
    if (b[i].out)
      poison(buf[i].p, buf[i].n);
    else
      memcpy(buf[i].p, data[i], buf[i].n);
  }
  if (area_new(&ws, p->workspace)) {
    rt_err_set(err, "emu_run: cannot map a workspace of %zu bytes", p->workspace);
    goto out;
  }
  poison(ws.p, ws.n);

  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    rt_err_set(err, "emu_run: fork: %s", strerror(errno));
    goto out;
  }
  if (pid == 0) child_main(so, p, buf, nbuf, &ws, b, &opt, sh);
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) {
      rt_err_set(err, "emu_run: waitpid: %s", strerror(errno));
      goto out;
    }
  const char *kn = sh->step >= 0 ? p->step[sh->step].name : "(none)";
  if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) {
    rt_err_set(err, "emulated kernel %s timed out after %u s (an endless loop?)", kn, opt.timeout_s);
    goto out;
  }
  if (WIFSIGNALED(st)) {
    rt_err_set(err, "emulator child killed by signal %d in kernel %s", WTERMSIG(st), kn);
    goto out;
  }
  if (WEXITSTATUS(st) == EX_FAIL) {
    rt_err_set(err, "%s", sh->msg);
    goto out;
  }
  if (WEXITSTATUS(st) == EX_SIGNAL) {
    char where[128];
    name_address(sh, buf, nbuf, &ws, where, sizeof where);
    rt_err_set(err, "kernel %s, block (%u,%u,%u), thread (%u,%u,%u): %s at address %p%s", kn,
               sh->bid.x, sh->bid.y, sh->bid.z, sh->tid.x, sh->tid.y, sh->tid.z,
               strsignal(sh->sig), sh->addr, where);
    goto out;
  }
  if (WEXITSTATUS(st) != EX_OK) {
    rt_err_set(err, "emulator child exited with status %d in kernel %s (a sanitizer report?)",
               WEXITSTATUS(st), kn);
    goto out;
  }
  for (int i = -1; i < nbuf; i++) {
    const emu_area *r = i < 0 ? &ws : &buf[i];
    size_t before, bad = canary_damage(r, &before);
    if (bad) {
      char nm[16];
      snprintf(nm, sizeof nm, i < 0 ? "ws" : "b%d", i);
      rt_err_set(err, "writes out of bounds of %s: %zu bytes before its start, %zu after its end "
                 "changed", nm, before, bad - before);
      goto out;
    }
  }
  for (int i = 0; i < nbuf; i++)
    if (!b[i].out && memcmp(buf[i].p, data[i], buf[i].n)) {
      rt_err_set(err, "input b%d (%s) was written by the kernels", i, b[i].name ? b[i].name : "?");
      goto out;
    }
  for (int i = 0; i < nbuf; i++)
    if (b[i].out) memcpy(data[i], buf[i].p, buf[i].n);
  ret = 0;
out:
  for (int i = 0; i < nbuf; i++) area_free(&buf[i]);
  area_free(&ws);
  munmap(sh, sizeof *sh);
  return ret;
}

int emu_run_src(const char *src, const kn_buf *b, int nbuf, float *const *data,
                const emu_opts *o, rt_err *err) {
  gk_plan p;
  if (gk_plan_parse(src, nbuf, &p, err)) return -1;
  return emu_run(src, &p, b, nbuf, data, o, err);
}
