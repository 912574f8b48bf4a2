/*
** test_common.c -- the shared layer and the target table: exact 128-bit
** counts (text round trips, overflow), the FNV-1a 128 hash against its
** published test vectors, the growing string, and the host description
** checked against what the kernel reports through other files; the host
** fingerprint recomputed from its documented recipe, changing with the
** CPUs the process may use, and its test-only override.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "common/rt.h"
#include "targets/tg.h"

static void test_counts(void **state) {
  (void)state;
  rt_count c;
  char buf[48];
  assert_int_equal(rt_count_parse("340282366920938463463374607431768211455", &c), 0);
  assert_true(c == RT_COUNT_MAX);
  assert_string_equal(rt_count_str(c, buf), "340282366920938463463374607431768211455");
  assert_int_equal(rt_count_parse("340282366920938463463374607431768211456", &c), -1);
  assert_int_equal(rt_count_parse("12x", &c), -1);
  assert_int_equal(rt_count_parse("", &c), -1);
  assert_int_equal(rt_count_parse("0", &c), 0);
  assert_string_equal(rt_count_str(c, buf), "0");
  rt_count r;
  assert_int_equal(rt_count_mul((rt_count)1 << 64, (rt_count)1 << 63, &r), 0);
  assert_int_equal(rt_count_mul((rt_count)1 << 64, (rt_count)1 << 64, &r), -1);
  assert_int_equal(rt_count_add(RT_COUNT_MAX, 1, &r), -1);
}

/* FNV-1a 128 of "" and "a", and of "foobar": the published vectors. */
static void test_hash_vectors(void **state) {
  (void)state;
  static const struct { const char *in, *hex; } v[] = {
    {"", "6c62272e07bb014262b821756295c58d"},
    {"a", "d228cb696f1a8caf78912b704e4a8964"},
    {"foobar", "343e1662793c64bf6f0d3597ba446f18"},
  };
  char buf[33];
  for (size_t i = 0; i < sizeof v / sizeof *v; i++)
    assert_string_equal(rt_hash_hex(rt_hash_bytes(RT_HASH_INIT, v[i].in, strlen(v[i].in)), buf), v[i].hex);
}

static void test_str(void **state) {
  (void)state;
  rt_str s = {0};
  for (int i = 0; i < 1000; i++) rt_str_printf(&s, "%d,", i % 10);
  assert_int_equal(s.n, 2000);
  assert_int_equal(strlen(s.s), 2000);
  assert_memory_equal(s.s, "0,1,2,", 6);
  free(s.s);
}

/* The host description: its CPU count agrees with the processors listed
** in /proc/cpuinfo, its caches with sysfs sizes, and its fingerprint is
** stable and changes with the compiler. */
static void test_host_description(void **state) {
  (void)state;
  tg_target tt, *t = &tt;
  tg_desc d, e;
  rt_err err = {0};
  assert_int_equal(tg_resolve("host", t, &err), 0);
  assert_int_equal(tg_describe(t, &d, &err), 0);
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[4096];
  int procs = 0;
  while (fgets(line, sizeof line, f)) procs += !strncmp(line, "processor", 9);
  fclose(f);
  assert_int_equal(atoi(tg_desc_get(&d, "cpus")), procs);
  assert_true(atoi(tg_desc_get(&d, "cores")) >= 1);
  assert_true(atoi(tg_desc_get(&d, "cores")) <= procs);
  assert_true(strlen(tg_desc_get(&d, "model")) > 0);
  assert_true(strlen(tg_desc_get(&d, "L1d")) > 0);
  assert_true(strlen(tg_desc_get(&d, "L2")) > 0);
  assert_int_equal(strlen(d.fingerprint), 32);
  assert_int_equal(tg_describe(t, &e, &err), 0);
  assert_string_equal(d.fingerprint, e.fingerprint);
  setenv("CC", "/nonexistent/cc", 1);
  assert_int_equal(tg_describe(t, &e, &err), 0);
  unsetenv("CC");
  assert_string_not_equal(d.fingerprint, e.fingerprint);
}

/* The backend table: names resolve through the rows into canonical
** instances (each row's own syntax; "cuda" is cuda:0), a malformed name of
** a row is an error of that row and an unknown one lists the syntaxes;
** every row has the fields tg_backend.h requires and at least one kernel,
** and its list gives instances that resolve to the same row. */
static void test_backend_table(void **state) {
  (void)state;
  static const struct { const char *in, *canon; int idx; } ok[] = {
    {"host", "host", 0}, {"cuda", "cuda:0", 0}, {"cuda:0", "cuda:0", 0}, {"cuda:3", "cuda:3", 3},
  };
  tg_target t;
  rt_err err = {0};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
    assert_int_equal(tg_resolve(ok[i].in, &t, &err), 0);
    assert_string_equal(t.name, ok[i].canon);
    assert_int_equal(t.idx[0], ok[i].idx);
    assert_ptr_equal(t.be, tg_backend_find(strncmp(ok[i].in, "cuda", 4) ? "host" : "cuda"));
  }
  static const char *const bad[] = {"cuda:", "cuda:x", "cuda:-1", "cuda:2000", "cuda:1x"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    err.msg[0] = 0;
    assert_int_equal(tg_resolve(bad[i], &t, &err), -1);
    if (!strstr(err.msg, "expected cuda:N")) fail_msg("%s: %s", bad[i], err.msg);
  }
  assert_int_equal(tg_resolve("nonesuch", &t, &err), -1);
  assert_non_null(strstr(err.msg, "unknown target 'nonesuch'"));
  assert_int_equal(tg_resolve("hostx", &t, &err), -1);
  assert_int_equal(tg_resolve("cudax", &t, &err), -1);
  assert_non_null(strstr(err.msg, "unknown target 'cudax'"));
  char syn[256];
  tg_syntaxes(syn, sizeof syn);
  int rows = 0;
  for (const tg_backend *const *b = tg_backends; *b; b++, rows++) {
    const tg_backend *r = *b;
    assert_ptr_equal(tg_backend_find(r->name), r);
    assert_non_null(strstr(syn, r->syntax));
    assert_true(r->summary && r->parse && r->list && r->describe && r->compiler && r->build_key &&
                r->prebuild && r->measure && r->counter_source && r->counters_available &&
                r->default_events && r->bench && r->model_family && r->traffic &&
                r->traffic_source && r->kernels && (r->kernels[0] || r->instance_row));
    tg_target l[4];
    int n = r->list(l, 4);
    assert_true(n >= 1);
    for (int i = 0; i < n; i++) {
      assert_ptr_equal(l[i].be, r);
      assert_int_equal(tg_resolve(l[i].name, &t, &err), 0);
      if (r->instance_row) assert_ptr_equal(t.be->parse, r->parse);   /* its instance row */
      else assert_ptr_equal(t.be, r);
      assert_string_equal(t.name, l[i].name);
    }
  }
  assert_true(rows >= 2);
  assert_null(tg_backend_of("nonesuch"));
  assert_non_null(tg_kernel_of("host", "gemm"));
  assert_null(tg_kernel_of("host", "nonesuch"));
  assert_null(tg_kernel_of("nonesuch", "gemm"));
}

/* The fingerprint as tg.h documents it: FNV-1a 128 of every "key=value"
** pair of the description, NUL-terminated, in order. */
static void recipe(const tg_desc *d, char out[33]) {
  rt_hash h = RT_HASH_INIT;
  for (int i = 0; i < d->n; i++) {
    char kv[400];
    int n = snprintf(kv, sizeof kv, "%s=%s", d->key[i], d->val[i]);
    h = rt_hash_bytes(h, kv, (size_t)n + 1);
  }
  rt_hash_hex(h, out);
}

/* The host fingerprint: the documented recipe over the description, whose
** keys are the documented ones in order (usable_cpus: this process's
** affinity); one CPU fewer to run on gives another fingerprint; the
** test-only override replaces it and a malformed one is refused. */
static void test_host_fingerprint(void **state) {
  (void)state;
  unsetenv("ROOFTUNE_TEST_HOST_FINGERPRINT");
  tg_desc d, e;
  rt_err err = {0};
  char fp[33];
  assert_int_equal(tg_describe_name("host", &d, &err), 0);
  static const char *const keys[] = {"model", "cpus", "usable_cpus", "cores", "numa_nodes", "isa",
                                     "simd_bits"};
  for (int i = 0; i < 7; i++) assert_string_equal(d.key[i], keys[i]);
  assert_string_equal(d.key[d.n - 2], "compiler");
  assert_string_equal(d.key[d.n - 1], "cflags");
  for (int i = 7; i < d.n - 2; i++) assert_int_equal(d.key[i][0], 'L');   /* the caches */
  cpu_set_t all, one;
  assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
  assert_int_equal(atoi(tg_desc_get(&d, "usable_cpus")), CPU_COUNT(&all));
  assert_int_equal(atoi(tg_desc_get(&d, "cpus")), (int)sysconf(_SC_NPROCESSORS_ONLN));
  recipe(&d, fp);
  assert_string_equal(d.fingerprint, fp);
  if (CPU_COUNT(&all) > 1) {   /* a smaller machine of the same model */
    int first = 0;
    while (!CPU_ISSET(first, &all)) first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    int rc = tg_describe_name("host", &e, &err);
    assert_int_equal(sched_setaffinity(0, sizeof all, &all), 0);
    assert_int_equal(rc, 0);
    assert_string_equal(tg_desc_get(&e, "usable_cpus"), "1");
    assert_string_not_equal(e.fingerprint, d.fingerprint);
    recipe(&e, fp);
    assert_string_equal(e.fingerprint, fp);
  } else {
    print_message("[ INFO     ] one CPU here: the smaller-machine fingerprint is not checked\n");
  }
  setenv("ROOFTUNE_TEST_HOST_FINGERPRINT", "0123456789abcdef0123456789abcdef", 1);
  assert_int_equal(tg_describe_name("host", &e, &err), 0);
  assert_string_equal(e.fingerprint, "0123456789abcdef0123456789abcdef");
  assert_non_null(strstr(tg_desc_get(&e, "fingerprint_override"), d.fingerprint));
  setenv("ROOFTUNE_TEST_HOST_FINGERPRINT", "0123456789ABCDEF0123456789abcdef", 1);
  assert_int_equal(tg_describe_name("host", &e, &err), -1);
  assert_non_null(strstr(err.msg, "ROOFTUNE_TEST_HOST_FINGERPRINT: expected 32 lower-case hex digits"));
  unsetenv("ROOFTUNE_TEST_HOST_FINGERPRINT");
  assert_int_equal(tg_describe_name("host", &e, &err), 0);
  assert_string_equal(e.fingerprint, d.fingerprint);
}

static char *slurp_small(const char *path) {
  static char buf[256];
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  return buf;
}

static int count_entries(const char *dir) {
  int n = 0;
  DIR *d = opendir(dir);
  for (struct dirent *de; d && (de = readdir(d));) n += de->d_name[0] != '.';
  if (d) closedir(d);
  return n;
}

/* The output-file rule of rt.h, each clause against the file system. */
static void test_out_rule(void **state) {
  (void)state;
  char dir[] = "/tmp/rt_out_XXXXXX", path[600], lnk[600], other[600];
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/out.txt", dir);
  snprintf(lnk, sizeof lnk, "%s/link.txt", dir);
  snprintf(other, sizeof other, "%s/input.db", dir);
  rt_out o;
  rt_err e = {0};
  /* 1: a new file appears only at commit. */
  assert_int_equal(rt_out_open(&o, path, NULL, &e), 0);
  fputs("first", o.f);
  assert_int_equal(access(path, F_OK), -1);
  assert_int_equal(rt_out_commit(&o, &e), 0);
  assert_string_equal(slurp_small(path), "first");
  /* abort leaves the old content and no temporary file behind. */
  assert_int_equal(rt_out_open(&o, path, NULL, &e), 0);
  fputs("second", o.f);
  rt_out_abort(&o);
  assert_string_equal(slurp_small(path), "first");
  assert_int_equal(count_entries(dir), 1);
  /* 2: an existing regular file is replaced whole; a link or a folder is refused. */
  assert_int_equal(rt_out_open(&o, path, NULL, &e), 0);
  fputs("2", o.f);
  assert_int_equal(rt_out_commit(&o, &e), 0);
  assert_string_equal(slurp_small(path), "2");
  assert_int_equal(symlink(path, lnk), 0);
  assert_int_equal(rt_out_open(&o, lnk, NULL, &e), -1);
  assert_non_null(strstr(e.msg, "symbolic link"));
  assert_int_equal(rt_out_open(&o, dir, NULL, &e), -1);
  assert_non_null(strstr(e.msg, "not a regular file"));
  /* 3: the same file as an input (here reached through a hard link). */
  assert_int_equal(link(path, other), 0);
  const char *inputs[] = {"/nonexistent/x", other, NULL};
  assert_int_equal(rt_out_open(&o, path, inputs, &e), -1);
  assert_non_null(strstr(e.msg, "same file"));
  assert_string_equal(slurp_small(path), "2");
  /* A folder that does not exist: an error naming the path. */
  char bad[700];
  snprintf(bad, sizeof bad, "%s/no/such/out.txt", dir);
  assert_int_equal(rt_out_open(&o, bad, NULL, &e), -1);
  assert_non_null(strstr(e.msg, bad));
  assert_int_equal(count_entries(dir), 3);
  unlink(lnk);
  unlink(other);
  unlink(path);
  assert_int_equal(rmdir(dir), 0);
}

static void test_now_monotonic(void **state) {
  (void)state;
  double a = rt_now(), b = rt_now();
  assert_true(a > 0 && b >= a);
  usleep(20000);
  assert_true(rt_now() - a >= 0.019);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_counts),
    cmocka_unit_test(test_hash_vectors),
    cmocka_unit_test(test_str),
    cmocka_unit_test(test_host_description),
    cmocka_unit_test(test_backend_table),
    cmocka_unit_test(test_host_fingerprint),
    cmocka_unit_test(test_out_rule),
    cmocka_unit_test(test_now_monotonic),
  };
  return cmocka_run_group_tests_name("common", tests, NULL, NULL);
}
