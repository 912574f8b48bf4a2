/*
** test_t1_files.c -- the T1 files the repository ships for kernels
** (examples/t1/: our own; data/t1k/: the benchmark hub's kernels) against
** independent expectations: the published T1 JSON schema
** (tests/data/TuningSchema.json through tests/t1_validate.py), the valid
** counts of their spaces (the hub's published brute-force counts, and our
** spaces' counted by hand), and the data files that scripts generate
** (data/t1k/make_shifts.py, examples/t1/pnpoly_vertices.py) byte for byte
** against the committed copies. The kernels themselves run in the T1
** loader's tests; the hub's kernel sources are not needed here.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "search_spaces/sp.h"
#include "tk_run.h"

#define SCHEMA "tests/data/TuningSchema.json"

static const char *const files[] = {
  "examples/t1/blur1d.json", "examples/t1/fir.json", "examples/t1/pnpoly.json",
  "data/t1k/convolution_milo.json", "data/t1k/dedispersion_milo.json", "data/t1k/gemm_milo.json",
};
#define NFILES (sizeof files / sizeof *files)

/* Run tests/t1_validate.py SCHEMA paths... with the first python3 that has
** jsonschema; its exit status (0 valid, 1 not) and output in *r. Skips
** when no python3 runs; fails when none has jsonschema. */
static int validate(const char *const *paths, int n, tk_result *r) {
  static const char *const pythons[] = {"python3", "/usr/bin/python3"};
  int saw_python = 0;
  for (size_t p = 0; p < sizeof pythons / sizeof *pythons; p++) {
    const char *argv[16] = {pythons[p], "tests/t1_validate.py", SCHEMA};
    for (int i = 0; i < n && i < 12; i++) argv[3 + i] = paths[i];
    *r = tk_capture(argv, NULL, NULL);
    if (r->rc == 0 || r->rc == 1) return r->rc;
    saw_python |= r->rc == 77;
    tk_result_free(r);
  }
  if (!saw_python) {
    print_message("SKIPPED: no python3 to run the JSON-schema validator\n");
    skip();
  }
  fail_msg("python3 has no jsonschema package: install python3-jsonschema (scripts/deps.sh does)");
  return -1;
}

/* Every shipped T1 file is valid; those whose sizes are expressions over
** problem variables are named as using rooftune's extension, the others
** (fixed sizes, as the hub's kernels) are strictly valid. */
static void shipped_files_valid(void **state) {
  (void)state;
  tk_result r;
  int rc = validate(files, (int)NFILES, &r);
  if (rc) fail_msg("%s%s", r.out, r.err);
  static const char *const want[] = {
    "examples/t1/blur1d.json: valid with rooftune expressions",
    "examples/t1/fir.json: valid with rooftune expressions",
    "examples/t1/pnpoly.json: valid\n",
    "data/t1k/convolution_milo.json: valid\n",
    "data/t1k/dedispersion_milo.json: valid\n",
    "data/t1k/gemm_milo.json: valid with rooftune expressions (KernelSpecification.Arguments[0].FillValue",
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    if (!strstr(r.out, want[i])) fail_msg("missing \"%s\" in:\n%s", want[i], r.out);
  tk_result_free(&r);
}

/* The validator rejects what the schema rejects: an unknown argument Type,
** a missing LocalSize, and a Size that is neither a number nor a string. */
static void validator_rejects(void **state) {
  (void)state;
  char dir[] = "/tmp/rt-t1files-XXXXXX", path[64];
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/bad.json", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"a\", \"Type\": \"int\", "
        "\"Values\": \"[1]\"}]}, \"KernelSpecification\": {\"Language\": \"CUDA\", "
        "\"KernelName\": \"k\", \"KernelFile\": \"k.cu\", \"GlobalSize\": {\"X\": \"1\"}, "
        "\"Arguments\": [{\"Type\": \"short\", \"MemoryType\": \"Vector\"}, "
        "{\"Type\": \"float\", \"MemoryType\": \"Vector\", \"Size\": [4]}]}}\n", f);
  fclose(f);
  const char *p = path;
  tk_result r;
  int rc = validate(&p, 1, &r);
  tk_rm_rf(dir);
  assert_int_equal(rc, 1);
  assert_non_null(strstr(r.out, "KernelSpecification: 'LocalSize' is a required property"));
  assert_non_null(strstr(r.out, "KernelSpecification.Arguments[0].Type: 'short' is not one of"));
  assert_non_null(strstr(r.out, "KernelSpecification.Arguments[1].Size: [4] is not of type 'integer'"));
  tk_result_free(&r);
}

/* Valid counts: the hub's spaces as published (data/README.md: brute-force
** enumeration); ours by hand: blur1d and fir are 4 x 3 block/item pairs
** less the one product over the limit (128*4 > 256, 256*4 > 512), times
** 2 x 2 for the string and the bool; pnpoly 4 * 31 * 11 * 3 unconditioned. */
static void space_counts(void **state) {
  (void)state;
  static const unsigned long long want[] = {11 * 2 * 2, 11 * 2 * 2, 4 * 31 * 11 * 3, 4362, 11130, 116928};
  for (size_t i = 0; i < NFILES; i++) {
    rt_err err = {0};
    sp_space *sp = sp_load_file(files[i], NULL, 0, &err);
    if (!sp) fail_msg("%s: %s", files[i], err.msg);
    unsigned long long n = (unsigned long long)sp_count(sp);
    if (n != want[i]) fail_msg("%s: %llu valid configurations, expected %llu", files[i], n, want[i]);
    sp_free(sp);
  }
}

/* Read a whole file; NULL when it cannot be read. */
static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *s = tk__slurp(f);
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fclose(f);
  return s;
}

/* The generated data files are what their scripts write, byte for byte. */
static void generated_data(void **state) {
  (void)state;
  static const char *const gen[][2] = {
    {"data/t1k/make_shifts.py", "data/t1k/dedispersion_shifts.f32"},
    {"examples/t1/pnpoly_vertices.py", "examples/t1/pnpoly_vertices.bin"},
  };
  static const size_t bytes[] = {1536 * 4, 600 * 8};
  char dir[] = "/tmp/rt-t1files-XXXXXX", out[96];
  assert_non_null(mkdtemp(dir));
  for (size_t i = 0; i < 2; i++) {
    snprintf(out, sizeof out, "%s/out%zu", dir, i);
    const char *argv[] = {"python3", gen[i][0], out, NULL};
    tk_result r = tk_capture(argv, NULL, NULL);
    if (r.rc == 127) {
      tk_result_free(&r);
      tk_rm_rf(dir);
      print_message("SKIPPED: no python3\n");
      skip();
    }
    if (r.rc) fail_msg("%s: exit %d: %s", gen[i][0], r.rc, r.err);
    tk_result_free(&r);
    size_t na = 0, nb = 0;
    char *a = slurp(out, &na), *b = slurp(gen[i][1], &nb);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(na, bytes[i]);
    assert_int_equal(nb, bytes[i]);
    if (memcmp(a, b, na)) fail_msg("%s does not write %s", gen[i][0], gen[i][1]);
    free(a);
    free(b);
  }
  tk_rm_rf(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(shipped_files_valid),
    cmocka_unit_test(validator_rejects),
    cmocka_unit_test(space_counts),
    cmocka_unit_test(generated_data),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
