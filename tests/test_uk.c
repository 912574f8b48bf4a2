/*
** test_uk.c -- the user's own kernels (targets/user/uk.h): T1 files of
** tests/data/uk/ parsed into their fields; the launch geometry of the
** grid-divisor rule and of GlobalSize counting blocks or work items, in
** both languages, against values worked out by hand; the #define lines of
** int, float, bool and string parameters and problem variables; extern "C"
** wrapping; the plan lines of both syntaxes; the reference configuration;
** argument buffers and work counts; every bad input with the T1 field its
** error names; the registry (tg_kernel) and the command line's checks
** (the program run from an argument vector); the CUDA sources compiled by
** NVRTC here (no GPU needed; skipped with the reason without NVRTC); and
** end to end on the OpenCL device (PoCL here): a campaign through the
** program, its pinned winner read back through the reader library.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <sqlite3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "targets/cuda/gd.h"
#include "targets/opencl/oc.h"
#include "targets/tg.h"
#include "targets/user/uk.h"
#include "db/db.h"
#include "db/rtdb.h"
#include "tk_exe.h"
#include "tk_run.h"

#define DATA "tests/data/uk/"

static char tmp[64];          /* the test's folder of variant T1 files */
static char rooftune[4096];   /* the program, when built */
static char datadir[4096];    /* DATA, absolute */

/* Load T1 file path with the --set text set (NULL: none); fail on error. */
static uk_spec *load(const char *path, const char *set, const char *kdir) {
  rt_err err = {0};
  sx_arena *a = sx_arena_new();
  sp_binding *b = NULL;
  int nb = set ? sp_parse_bindings(set, a, &b, &err) : 0;
  assert_true(nb >= 0);
  uk_spec *s = uk_spec_load(path, kdir, b, nb, &err);
  free(b);
  sx_arena_free(a);
  if (!s) fail_msg("%s: %s", path, err.msg);
  return s;
}

/* The error of loading path (which must fail), into msg. */
static void load_error(const char *path, char *msg, size_t cap) {
  rt_err err = {0};
  uk_spec *s = uk_spec_load(path, NULL, NULL, 0, &err);
  if (s) fail_msg("%s loaded; expected an error", path);
  snprintf(msg, cap, "%s", err.msg);
}

/* A variant of base (in DATA): edit applied to its KernelSpecification,
** written to tmp/name; its path (static until the next call). */
static const char *variant(const char *base, const char *name, void (*edit)(json_t *ks)) {
  static char path[256];
  char in[256];
  snprintf(in, sizeof in, "%s%s", DATA, base);
  json_error_t je;
  json_t *root = json_load_file(in, 0, &je);
  assert_non_null(root);
  edit(json_object_get(root, "KernelSpecification"));
  snprintf(path, sizeof path, "%s/%s", tmp, name);
  assert_int_equal(json_dump_file(root, path, JSON_INDENT(1)), 0);
  json_decref(root);
  return path;
}

/* The space of a spec's file with bindings set, and its configuration of
** the named values (NULL-terminated name, value-text pairs; others: the
** Default). */
static sp_space *space_of(const uk_spec *s, const char *set) {
  rt_err err = {0};
  sx_arena *a = sx_arena_new();
  sp_binding *b = NULL;
  int nb = set ? sp_parse_bindings(set, a, &b, &err) : 0;
  sp_space *sp = sp_load_file(s->path, b, nb, &err);
  free(b);
  sx_arena_free(a);
  if (!sp) fail_msg("%s", err.msg);
  return sp;
}

static void config(sp_space *sp, int *cfg, ...) {
  assert_int_equal(sp_default_config(sp, cfg), 1);
  va_list ap;
  va_start(ap, cfg);
  for (const char *n; (n = va_arg(ap, const char *));) {
    const char *val = va_arg(ap, const char *);
    int p = sp_param_index(sp, n), found = 0;
    assert_true(p >= 0);
    for (int i = 0; i < sp_nvalues(sp, p); i++) {
      char buf[64];
      sx_repr(sp_value(sp, p, i), buf, sizeof buf);
      if (!strcmp(buf, val)) cfg[p] = i, found = 1;
    }
    if (!found) fail_msg("%s has no value %s", n, val);
  }
  va_end(ap);
}

static void geom(uk_spec *s, sp_space *sp, const int *cfg, uk_geom *g) {
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  rt_err err = {0};
  if (uk_geometry(s, &pb, sp, cfg, g, &err)) fail_msg("%s", err.msg);
}

static char *gen(uk_spec *s, sp_space *sp, const int *cfg) {
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  return uk_codegen(s, &pb, sp, cfg);
}

/* The line of src starting with prefix (static copy), or "" */
static const char *line_of(const char *src, const char *prefix) {
  static char buf[1024];
  buf[0] = 0;
  for (const char *l = src; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    if (!strncmp(l, prefix, strlen(prefix))) {
      size_t n = strcspn(l, "\n");
      snprintf(buf, sizeof buf, "%.*s", (int)n, l);
      break;
    }
  return buf;
}

/* ---- parsing ---- */

static void test_parse_fields(void **state) {
  (void)state;
  uk_spec *s = load(DATA "vadd_cl.json", NULL, NULL);
  assert_string_equal(s->name, "uk_vadd_cl");
  assert_int_equal(s->lang, UK_OPENCL);
  assert_string_equal(uk_spec_backend(s), "opencl");
  assert_string_equal(uk_spec_default_target(s), "opencl");
  assert_string_equal(s->kernel_name, "vadd");
  assert_null(s->entry);
  assert_non_null(strstr(s->source, "__kernel void vadd("));
  assert_int_equal(s->np, 2);
  assert_int_equal(s->nv, 1);
  assert_int_equal(s->narg, 4);
  assert_false(s->gs_blocks);   /* OpenCL's default GlobalSizeType: work items */
  assert_string_equal(s->dtype, "f32");
  /* a: Random with FillValue 1 (the range), seed 42 + 0; b: RandomSeed 7 */
  assert_int_equal(s->arg[0].fill, KN_FILL_RANDOM);
  assert_true(s->arg[0].value == 1.0);
  assert_int_equal(s->arg[0].seed, 42);
  assert_int_equal(s->arg[1].seed, 7);
  assert_int_equal(s->arg[2].fill, KN_FILL_CONSTANT);
  assert_true(s->arg[2].out && !s->arg[2].inout);
  assert_int_equal(s->arg[3].kind, KN_SCALAR);
  assert_int_equal(s->arg[3].fill, KN_FILL_CONSTANT);   /* FillValue without FillType */
  assert_true(s->arg[3].value == 2.5);
  assert_true(s->atol == 1e-6 && s->rtol == 1e-5);
  /* the include path of the kernel file's folder */
  char want[4200];
  snprintf(want, sizeof want, "-I%s", datadir);
  assert_string_equal(s->options, want);
  uk_spec_free(s);

  s = load(DATA "conv_cu.json", NULL, NULL);
  assert_int_equal(s->lang, UK_CUDA);
  assert_true(s->gs_blocks);
  assert_string_equal(uk_spec_default_target(s), "cuda:0");
  assert_int_equal(s->arg[2].kind, KN_SYMBOL);   /* MemType Constant */
  assert_int_equal(s->arg[3].kind, KN_SCALAR);
  assert_int_equal(s->arg[3].elem, KN_I32);
  assert_int_equal(s->arg[2].seed, 44);
  snprintf(want, sizeof want, "-DMAXF=7 --use_fast_math --include-path=%s", datadir);
  assert_string_equal(s->options, want);
  uk_spec_free(s);
}

/* The name without BenchmarkName is the file's; vector types count lanes. */
static void edit_types(json_t *ks) {
  json_t *a = json_object_get(ks, "Arguments");
  json_object_set_new(json_array_get(a, 0), "Type", json_string("float4"));
  json_object_set_new(json_array_get(a, 0), "Size", json_string("n // 4"));
  json_object_set_new(json_array_get(a, 1), "Type", json_string("float3"));
  json_object_set_new(json_array_get(a, 2), "Type", json_string("half"));
  json_object_set_new(json_array_get(a, 2), "AccessType", json_string("ReadWrite"));
  json_object_set_new(json_array_get(a, 3), "Type", json_string("uint16"));
}

static void test_types_and_name(void **state) {
  (void)state;
  char path[256];
  snprintf(path, sizeof path, "%s", variant("vadd_cl.json", "my_vadd.json", edit_types));
  json_t *root = json_load_file(path, 0, NULL);
  json_object_del(json_object_get(root, "General"), "BenchmarkName");
  json_dump_file(root, path, 0);
  json_decref(root);
  uk_spec *s = load(path, NULL, DATA);
  assert_string_equal(s->name, "my_vadd");
  sp_space *sp = space_of(s, "n=100");
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  kn_buf b[KN_MAXBUF];
  rt_err err = {0};
  assert_int_equal(uk_buffers(s, &pb, sp, b, &err), 4);
  assert_int_equal(b[0].elem, KN_F32);
  assert_int_equal(b[0].n, 100);        /* 25 float4 */
  assert_int_equal(b[1].n, 400);        /* 100 float3, 4 floats each in OpenCL */
  assert_int_equal(b[2].elem, KN_F16);
  assert_true(b[2].out && b[2].inout);  /* ReadWrite output */
  assert_int_equal(b[3].elem, KN_U16);
  assert_string_equal(s->dtype, "f16");
  sp_free(sp);
  uk_spec_free(s);
}

/* ---- buffers and work ---- */

static void test_buffers_and_work(void **state) {
  (void)state;
  uk_spec *s = load(DATA "conv_cu.json", NULL, NULL);
  sp_space *sp = space_of(s, "nx=500");
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  kn_buf b[KN_MAXBUF];
  rt_err err = {0};
  assert_int_equal(uk_buffers(s, &pb, sp, b, &err), 4);
  assert_int_equal(b[0].n, 500);
  assert_int_equal(b[1].n, 500 + 7 - 1);   /* max(filter_width) over [3, 5, 7] */
  assert_int_equal(b[2].n, 7);
  assert_int_equal(b[2].kind, KN_SYMBOL);
  assert_string_equal(b[2].name, "d_filter");
  assert_int_equal(b[3].n, 1);
  assert_true(b[3].value == 1000);
  /* no rooftune block: flops 0; bytes: every vector and symbol once */
  assert_true(uk_work(s, &pb, sp, 0, &err) == 0);
  sp_free(sp);
  uk_spec_free(s);

  rt_err e2 = {0};
  const kn_kernel *k = uk_load(DATA "conv_cu.json", NULL, NULL, 0, &e2);
  assert_non_null(k);
  kn_problem p2 = {.n = 1, .name = {"nx"}, .val = {sx_int(500)}};
  assert_true(k->flops(&p2) == 0);
  assert_true(k->min_bytes(&p2) == (500 + 506 + 7) * 4.0);
  assert_int_equal(k->buffers(&p2, b), 4);
  assert_int_equal(b[1].n, 506);
  uk_unload(k);

  k = uk_load(DATA "vadd_cl.json", NULL, NULL, 0, &e2);
  assert_non_null(k);
  kn_problem p3 = {.n = 1, .name = {"n"}, .val = {sx_int(777)}};
  assert_true(k->flops(&p3) == 2 * 777.0);     /* rooftune.Flops "2 * n" */
  assert_true(k->min_bytes(&p3) == 12 * 777.0);
  assert_int_equal(k->buffers(&p3, b), 4);
  assert_int_equal(b[0].n, 777);
  assert_int_equal(b[1].seed, 7);
  /* a workload whose size does not evaluate: -1 elements, for the harness to refuse */
  kn_problem p4 = {.n = 1, .name = {"n"}, .val = {sx_int(-3)}};
  assert_int_equal(k->buffers(&p4, b), 4);
  assert_int_equal(b[0].n, -1);
  assert_null(k->reference);
  assert_null(k->tolerance);
  assert_string_equal(k->space, uk_spec_of(k)->path);
  uk_unload(k);
}

static void edit_fill_expr(json_t *ks) {
  json_t *a = json_object_get(ks, "Arguments");
  json_object_set_new(json_array_get(a, 3), "FillValue", json_string("n / 400 + len(unroll)"));
}

/* FillValue as an expression: per workload, as Size (a scalar passing a
** problem size). */
static void test_fill_value_expression(void **state) {
  (void)state;
  uk_spec *s = load(variant("vadd_cl.json", "fv.json", edit_fill_expr), NULL, DATA);
  sp_space *sp = space_of(s, "n=1000");
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  kn_buf b[KN_MAXBUF];
  rt_err err = {0};
  assert_int_equal(uk_buffers(s, &pb, sp, b, &err), 4);
  assert_true(b[3].value == 1000 / 400.0 + 3);   /* 5.5 */
  sp_free(sp);
  uk_spec_free(s);
}

/* ---- geometry ---- */

static void test_geometry_griddiv(void **state) {
  (void)state;
  uk_spec *s = load(DATA "vadd_cl.json", NULL, NULL);
  sp_space *sp = space_of(s, "n=1000");
  int cfg[2];
  uk_geom g;
  /* blocks = ceil(1000 / (block_size_x * unroll)); global = blocks * local */
  static const struct { const char *bs, *un; int64_t blocks; } want[] = {
    {"16", "1", 63}, {"32", "1", 32}, {"64", "1", 16}, {"16", "4", 16}, {"64", "4", 4}, {"32", "2", 16},
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    config(sp, cfg, "block_size_x", want[i].bs, "unroll", want[i].un, NULL);
    geom(s, sp, cfg, &g);
    assert_int_equal(g.blocks[0], want[i].blocks);
    assert_int_equal(g.local[0], atoi(want[i].bs));
    assert_int_equal(g.global[0], want[i].blocks * atoi(want[i].bs));
    assert_int_equal(g.blocks[1] * g.blocks[2] * g.local[1] * g.local[2], 1);
  }
  sp_free(sp);
  uk_spec_free(s);

  /* CUDA: X by GridDivX (GlobalSize.X is not used), Y from GlobalSize in blocks */
  s = load(DATA "conv_cu.json", NULL, NULL);
  sp = space_of(s, NULL);
  int c6[6];
  config(sp, c6, "block_size_x", "128", "tile_x", "2", NULL);
  geom(s, sp, c6, &g);
  assert_int_equal(g.blocks[0], 4);   /* ceil(1000 / 256) */
  assert_int_equal(g.blocks[1], 2);
  assert_int_equal(g.blocks[2], 1);
  assert_int_equal(g.local[0], 128);
  assert_int_equal(g.smem, 0);
  config(sp, c6, "block_size_x", "32", "use_shared", "True", NULL);
  geom(s, sp, c6, &g);
  assert_int_equal(g.blocks[0], 32);  /* ceil(1000 / 32) */
  assert_int_equal(g.smem, 128);      /* block_size_x * 4 * use_shared */
  sp_free(sp);
  uk_spec_free(s);
}

static void edit_no_griddiv(json_t *ks) { json_object_del(ks, "GridDivX"); }
static void edit_no_griddiv_items(json_t *ks) {
  json_object_del(ks, "GridDivX");
  json_object_set_new(ks, "GlobalSizeType", json_string("OpenCL"));
}
static void edit_cl_global_items(json_t *ks) {
  json_object_del(ks, "GridDivX");
  json_object_set_new(ks, "GlobalSize", json_pack("{s:s}", "X", "n"));
}
static void edit_cl_global_blocks(json_t *ks) {
  json_object_del(ks, "GridDivX");
  json_object_set_new(ks, "GlobalSize", json_pack("{s:i}", "X", 10));
  json_object_set_new(ks, "GlobalSizeType", json_string("CUDA"));
  json_object_del(ks, "LocalSize");   /* the parameter block_size_x stands for LocalSize.X */
}

static void test_geometry_globalsize(void **state) {
  (void)state;
  uk_geom g;
  /* CUDA, GlobalSize counts blocks: X = 999 blocks whatever the block */
  uk_spec *s = load(variant("conv_cu.json", "c1.json", edit_no_griddiv), NULL, DATA);
  sp_space *sp = space_of(s, NULL);
  int c6[6];
  config(sp, c6, "block_size_x", "64", NULL);
  geom(s, sp, c6, &g);
  assert_int_equal(g.blocks[0], 999);
  assert_int_equal(g.blocks[1], 2);
  sp_free(sp);
  uk_spec_free(s);
  /* CUDA, GlobalSizeType OpenCL: 999 threads in blocks of 64: 16 blocks */
  s = load(variant("conv_cu.json", "c2.json", edit_no_griddiv_items), NULL, DATA);
  sp = space_of(s, NULL);
  config(sp, c6, "block_size_x", "64", NULL);
  geom(s, sp, c6, &g);
  assert_int_equal(g.blocks[0], 16);
  assert_int_equal(g.blocks[1], 2);   /* 2 items in groups of 1 */
  sp_free(sp);
  uk_spec_free(s);
  /* OpenCL, items: global n = 1000 in groups of 32: 32 groups, 1024 items */
  s = load(variant("vadd_cl.json", "c3.json", edit_cl_global_items), NULL, DATA);
  sp = space_of(s, NULL);
  int c2[2];
  config(sp, c2, "block_size_x", "32", NULL);
  geom(s, sp, c2, &g);
  assert_int_equal(g.blocks[0], 32);
  assert_int_equal(g.global[0], 1024);
  char *src = gen(s, sp, c2);
  assert_string_equal(line_of(src, "//@oc launch"), "//@oc launch vadd 1024 1 1 32 1 1 b0 b1 b2 s3");
  free(src);
  sp_free(sp);
  uk_spec_free(s);
  /* OpenCL, GlobalSizeType CUDA: 10 work-groups of block_size_x (no LocalSize) */
  s = load(variant("vadd_cl.json", "c4.json", edit_cl_global_blocks), NULL, DATA);
  sp = space_of(s, NULL);
  config(sp, c2, "block_size_x", "64", NULL);
  geom(s, sp, c2, &g);
  assert_int_equal(g.blocks[0], 10);
  assert_int_equal(g.local[0], 64);
  assert_int_equal(g.global[0], 640);
  sp_free(sp);
  uk_spec_free(s);
}

/* ---- code generation ---- */

static void test_defines(void **state) {
  (void)state;
  uk_spec *s = load(DATA "conv_cu.json", NULL, NULL);
  sp_space *sp = space_of(s, "nx=1000");
  int c6[6];
  config(sp, c6, "block_size_x", "128", "use_shared", "True", "SCALE", "1.0", NULL);
  char *src = gen(s, sp, c6);
  const char *want =
    "#define block_size_x 128\n"
    "#define tile_x 1\n"
    "#define filter_width 5\n"
    "#define use_shared 1\n"
    "#define T float\n"
    "#define SCALE 1.0\n"
    "#define nx 1000\n"
    "#define block_size_y 1\n"
    "#define block_size_z 1\n"
    "#define grid_size_x 8\n"
    "#define grid_size_y 2\n"
    "#define grid_size_z 1\n"
    "extern \"C\" {\n";
  const char *at = strstr(src, "#define block_size_x");
  assert_non_null(at);
  assert_memory_equal(at, want, strlen(want));
  assert_non_null(strstr(src, "__global__ void conv(T *out"));
  free(src);
  config(sp, c6, "SCALE", "0.5", NULL);   /* use_shared False */
  src = gen(s, sp, c6);
  assert_non_null(strstr(src, "#define SCALE 0.5\n"));
  assert_non_null(strstr(src, "#define use_shared 0\n"));
  free(src);
  sp_free(sp);
  uk_spec_free(s);
}

static void test_plan_lines(void **state) {
  (void)state;
  uk_spec *s = load(DATA "conv_cu.json", NULL, NULL);
  sp_space *sp = space_of(s, NULL);
  int c6[6];
  config(sp, c6, "block_size_x", "128", "use_shared", "True", NULL);
  char *src = gen(s, sp, c6);
  char want[4200];
  snprintf(want, sizeof want, "//@rk options -DMAXF=7 --use_fast_math --include-path=%s", datadir);
  assert_string_equal(line_of(src, "//@rk options"), want);
  assert_string_equal(line_of(src, "//@rk symbol"), "//@rk symbol d_filter b2");
  /* ceil(1000/128) = 8 blocks, Y 2 blocks, 128 threads, 512 B dynamic shared memory;
  ** d_filter (a symbol) is no launch argument, nout goes by value */
  assert_string_equal(line_of(src, "//@rk launch"), "//@rk launch conv 8 2 1 128 1 1 512 b0 b1 s3");
  assert_string_equal(line_of(src, "//@rk entry"), "");
  /* the plan lines come after the source: the last lines */
  assert_true(strstr(src, "//@rk options") > strstr(src, "__global__"));
  free(src);
  sp_free(sp);
  uk_spec_free(s);

  s = load(DATA "vadd_cl.json", NULL, NULL);
  sp = space_of(s, "n=100");
  int c2[2];
  config(sp, c2, "block_size_x", "16", "unroll", "2", NULL);
  src = gen(s, sp, c2);
  assert_string_equal(line_of(src, "//@oc launch"), "//@oc launch vadd 64 1 1 16 1 1 b0 b1 b2 s3");   /* 4 groups */
  snprintf(want, sizeof want, "//@oc options -I%s", datadir);
  assert_string_equal(line_of(src, "//@oc options"), want);
  assert_null(strstr(src, "extern \"C\""));   /* OpenCL is never wrapped */
  assert_null(strstr(src, "//@rk"));
  free(src);
  sp_free(sp);
  uk_spec_free(s);
}

static void edit_template(json_t *ks) {
  json_object_set_new(ks, "KernelTypeNames", json_pack("[s]", "float"));
}
static void edit_local(json_t *ks) {
  json_t *a = json_object_get(ks, "Arguments");
  json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s}", "Name", "scratch", "Type", "float",
                                     "MemoryType", "Local", "Size", "max(block_size_x)"));
}

static void test_extern_c_and_entry(void **state) {
  (void)state;
  /* a template (KernelTypeNames): not wrapped, an entry line */
  uk_spec *s = load(variant("conv_cu.json", "tpl.json", edit_template), NULL, DATA);
  sp_space *sp = space_of(s, NULL);
  int c6[6];
  config(sp, c6, NULL);
  char *src = gen(s, sp, c6);
  assert_null(strstr(src, "extern \"C\""));
  assert_string_equal(line_of(src, "//@rk entry"), "//@rk entry conv conv<float>");
  free(src);
  sp_free(sp);
  uk_spec_free(s);
  /* source that says extern "C" itself: not wrapped again */
  char kpath[128], tpath[128];
  snprintf(kpath, sizeof kpath, "%s/k.cu", tmp);
  FILE *f = fopen(kpath, "w");
  fputs("extern \"C\" __global__ void conv(float *o, const float *i, int n) { o[0] = i[0] * n; }\n", f);
  fclose(f);
  json_t *root = json_load_file(DATA "conv_cu.json", 0, NULL);
  json_object_set_new(json_object_get(root, "KernelSpecification"), "KernelFile", json_string("k.cu"));
  snprintf(tpath, sizeof tpath, "%s/k.json", tmp);
  json_dump_file(root, tpath, 0);
  json_decref(root);
  s = load(tpath, NULL, NULL);
  sp = space_of(s, NULL);
  config(sp, c6, NULL);
  src = gen(s, sp, c6);
  assert_non_null(strstr(src, "\nextern \"C\" __global__ void conv("));
  assert_null(strstr(src, "extern \"C\" {"));
  free(src);
  sp_free(sp);
  uk_spec_free(s);
  /* a comment or a string that only mentions it: wrapped all the same
  ** (our fir.cu's comment once made its kernel C++-mangled: "no kernel
  ** 'fir'" on the H200) */
  static const char *const mentions[] = {
    "/* no `extern \"C\"`: rooftune wraps it */\n__global__ void conv(float *o, const float *i, int n) { o[0] = i[0] * n; }\n",
    "// extern \"C\" here\n__global__ void conv(float *o, const float *i, int n) { o[0] = i[0] * n; }\n",
    "__device__ const char *why = \"extern \\\"C\\\"\";\n__global__ void conv(float *o, const float *i, int n) { o[0] = i[0] * n; }\n",
  };
  for (size_t m = 0; m < sizeof mentions / sizeof *mentions; m++) {
    f = fopen(kpath, "w");
    fputs(mentions[m], f);
    fclose(f);
    s = load(tpath, NULL, NULL);
    sp = space_of(s, NULL);
    config(sp, c6, NULL);
    src = gen(s, sp, c6);
    if (!strstr(src, "extern \"C\" {\n")) fail_msg("not wrapped: %s", mentions[m]);
    free(src);
    sp_free(sp);
    uk_spec_free(s);
  }
  /* with blanks between the tokens: its own */
  f = fopen(kpath, "w");
  fputs("extern  \"C\"\n__global__ void conv(float *o, const float *i, int n) { o[0] = i[0] * n; }\n", f);
  fclose(f);
  s = load(tpath, NULL, NULL);
  sp = space_of(s, NULL);
  config(sp, c6, NULL);
  src = gen(s, sp, c6);
  assert_null(strstr(src, "extern \"C\" {"));
  free(src);
  sp_free(sp);
  uk_spec_free(s);
  /* OpenCL local memory: an lN launch argument */
  s = load(variant("vadd_cl.json", "loc.json", edit_local), NULL, DATA);
  sp = space_of(s, NULL);
  int c2[2];
  config(sp, c2, NULL);
  src = gen(s, sp, c2);
  assert_string_equal(line_of(src, "//@oc launch"), "//@oc launch vadd 1024 1 1 32 1 1 b0 b1 b2 s3 l4");
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  kn_buf b[KN_MAXBUF];
  rt_err err = {0};
  assert_int_equal(uk_buffers(s, &pb, sp, b, &err), 5);
  assert_int_equal(b[4].kind, KN_LOCAL);
  assert_int_equal(b[4].n, 64);   /* Size is per workload: the largest of block_size_x's values */
  free(src);
  sp_free(sp);
  uk_spec_free(s);
}

static void test_reference(void **state) {
  (void)state;
  rt_err err = {0};
  /* ReferenceConfig names block_size_x 32 and filter_width 7; the rest take their Default */
  const kn_kernel *k = uk_load(DATA "conv_cu.json", NULL, NULL, 0, &err);
  assert_non_null(k);
  kn_problem pb = {.n = 1, .name = {"nx"}, .val = {sx_int(1000)}};
  char *src = k->device_reference(&pb);
  assert_non_null(strstr(src, "#define block_size_x 32\n"));
  assert_non_null(strstr(src, "#define filter_width 7\n"));
  assert_non_null(strstr(src, "#define tile_x 1\n"));
  assert_string_equal(line_of(src, "//@rk launch"), "//@rk launch conv 32 2 1 32 1 1 0 b0 b1 s3");
  free(src);
  uk_unload(k);
  /* no ReferenceConfig: the default configuration */
  k = uk_load(DATA "vadd_cl.json", NULL, NULL, 0, &err);
  assert_non_null(k);
  kn_problem p2 = {.n = 1, .name = {"n"}, .val = {sx_int(100)}};
  src = k->device_reference(&p2);
  assert_string_equal(line_of(src, "//@oc launch"), "//@oc launch vadd 128 1 1 32 1 1 b0 b1 b2 s3");
  assert_non_null(strstr(src, "#define unroll 1\n"));
  free(src);
  uk_unload(k);
}

/* ---- bad input ---- */

static void test_bad_inputs(void **state) {
  (void)state;
  static const struct { const char *file, *want; } cases[] = {
    {"bad_kernel_file.json", "KernelSpecification.KernelFile: cannot read "},
    {"bad_type.json", "KernelSpecification.Arguments[1].Type: unknown type \"float5\""},
    {"bad_name.json", "KernelSpecification.Arguments[2].Size: `foo * 2`: name 'foo' is not a parameter, "
                      "ProblemSize or a problem variable"},
    {"bad_size.json", "KernelSpecification.Arguments[0].Size: `n // (len(unroll) - 3)` raised ZeroDivisionError"},
    {"bad_size_float.json", "KernelSpecification.Arguments[0].Size: `n / 3` is 333.3333333333333 (float), "
                            "not an integer"},
    {"bad_fill.json", "KernelSpecification.Arguments[1].FillType: FillType \"Generator\" is not supported"},
    {"bad_language.json", "KernelSpecification.Language: expected \"CUDA\" or \"OpenCL\""},
    {"bad_problem_size.json", "KernelSpecification.ProblemSize[0]: `n * block_size_x`: name 'block_size_x' "
                              "is not a problem variable"},
    {"bad_no_output.json", "KernelSpecification.Arguments: no argument has Output 1"},
    {"bad_symbol_opencl.json", "KernelSpecification.Arguments[0].MemoryType: MemoryType Symbol"},
    {"bad_local_cuda.json", "KernelSpecification.Arguments[1].MemoryType: MemoryType Local"},
    {"bad_griddiv.json", "KernelSpecification.GridDivX[1]: `unroll - 1` is 0"},
    {"bad_refconfig.json", "rooftune.ReferenceConfig.unroll: 3 is not one of the parameter's Values"},
    {"bad_rooftune_key.json", "rooftune: unknown field \"Flop\""},
    {"bad_datasource.json", "KernelSpecification.Arguments[0].DataSource: "},
    {"bad_no_spec.json", "KernelSpecification: missing field"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char path[256], msg[600];
    snprintf(path, sizeof path, "%s%s", DATA, cases[i].file);
    load_error(path, msg, sizeof msg);
    /* "PATH: FIELD: ..." */
    if (strncmp(msg, path, strlen(path)) || !strstr(msg, cases[i].want))
      fail_msg("%s: got \"%s\", expected \"%s: ...%s...\"", cases[i].file, msg, path, cases[i].want);
  }
  char msg[600];
  load_error(DATA "missing.json", msg, sizeof msg);
  assert_non_null(strstr(msg, "missing.json: cannot open"));
  /* a --set the space refuses names the variable */
  rt_err err = {0};
  sp_binding b = {.name = "m", .value = sx_int(3)};
  assert_null(uk_spec_load(DATA "vadd_cl.json", NULL, &b, 1, &err));
  assert_non_null(strstr(err.msg, "--set m: unknown problem variable"));
  /* a size that does not evaluate for the workload given */
  sp_binding neg = {.name = "n", .value = sx_int(0)};
  assert_null(uk_spec_load(DATA "vadd_cl.json", NULL, &neg, 1, &err));
  assert_non_null(strstr(err.msg, "KernelSpecification.GridDivX: 0 work-groups in dimension X"));
}

/* ---- the registry ---- */

static void test_registry(void **state) {
  (void)state;
  rt_err err = {0};
  const kn_kernel *k = uk_load(DATA "vadd_cl.json", NULL, NULL, 0, &err);
  assert_non_null(k);
  tg_target cl, cu, host;
  assert_int_equal(tg_resolve("opencl", &cl, &err), 0);
  assert_int_equal(tg_resolve("cuda:0", &cu, &err), 0);
  assert_int_equal(tg_resolve("host", &host, &err), 0);
  assert_ptr_equal(tg_kernel(&cl, "uk_vadd_cl"), k);
  assert_null(tg_kernel(&cu, "uk_vadd_cl"));      /* another backend */
  assert_null(tg_kernel(&host, "uk_vadd_cl"));
  assert_non_null(tg_kernel(&cl, "transpose"));    /* built-ins unchanged */
  assert_ptr_not_equal(tg_kernel(&cl, "transpose"), k);
  /* the same kernel twice is refused; another name takes another slot */
  assert_null(uk_load(DATA "vadd_cl.json", NULL, NULL, 0, &err));
  assert_non_null(strstr(err.msg, "is loaded already"));
  const kn_kernel *k2 = uk_load(DATA "conv_cu.json", NULL, NULL, 0, &err);
  assert_non_null(k2);
  assert_ptr_equal(tg_kernel(&cu, "uk_conv_cu"), k2);
  /* the slots' trampolines reach their own kernel */
  kn_buf b[KN_MAXBUF];
  kn_problem pb = {0};
  assert_int_equal(k->buffers(&pb, b), 4);
  assert_string_equal(b[3].name, "alpha");
  assert_int_equal(k2->buffers(&pb, b), 4);
  assert_string_equal(b[3].name, "nout");
  uk_set_tolerance(k, 0.5, 0.25);
  assert_true(k->atol == 0.5 && k->rtol == 0.25);
  uk_unload(k);
  assert_null(tg_kernel(&cl, "uk_vadd_cl"));
  uk_unload(k2);
  /* every slot taken: refused with the limit */
  const kn_kernel *all[UK_SLOTS];
  for (int i = 0; i < UK_SLOTS; i++) {
    char path[128];
    snprintf(path, sizeof path, "%s/slot%d.json", tmp, i);
    json_t *root = json_load_file(DATA "vadd_cl.json", 0, NULL);
    json_object_set_new(json_object_get(root, "General"), "BenchmarkName", json_sprintf("s%d", i));
    json_dump_file(root, path, 0);
    json_decref(root);
    all[i] = uk_load(path, DATA, NULL, 0, &err);
    assert_non_null(all[i]);
  }
  assert_null(uk_load(DATA "conv_cu.json", NULL, NULL, 0, &err));
  assert_non_null(strstr(err.msg, "UK_SLOTS"));
  for (int i = 0; i < UK_SLOTS; i++) {
    kn_problem p = {.n = 1, .name = {"n"}, .val = {sx_int(10 + i)}};
    assert_int_equal(all[i]->buffers(&p, b), 4);
    assert_int_equal(b[0].n, 10 + i);
    assert_string_equal(all[i]->name, uk_spec_of(all[i])->name);
  }
  for (int i = 0; i < UK_SLOTS; i++) uk_unload(all[i]);
}

/* ---- NVRTC: the generated CUDA compiles (no GPU needed) ---- */

/* The text after "//@rk options " in src (static), or NULL. */
static const char *options_of(const char *src) {
  const char *l = line_of(src, "//@rk options ");
  return *l ? l + strlen("//@rk options ") : NULL;
}

static void compile_ok(const char *src) {
  void *img = NULL;
  size_t size = 0;
  rt_str log = {0};
  rt_err err = {0};
  char opts[1200];
  snprintf(opts, sizeof opts, "%s", options_of(src) ? options_of(src) : "");
  int rc = gd_nvrtc_compile(src, 9, 0, opts, &img, &size, &log, &err);
  if (rc) fail_msg("NVRTC: rc %d: %s %s\n--- source:\n%s", rc, err.msg, log.s ? log.s : "", src);
  assert_true(size > 0);
  free(img);
  free(log.s);
}

static void test_nvrtc(void **state) {
  (void)state;
  const char *why;
  if (!gd_nvrtc_available(&why)) {
    print_message("skipped: NVRTC is not available here: %s\n", why);
    skip();
  }
  uk_spec *s = load(DATA "conv_cu.json", NULL, NULL);
  sp_space *sp = space_of(s, NULL);
  int c6[6];
  static const char *const bs[] = {"32", "128"}, *const sh[] = {"False", "True"};
  for (int i = 0; i < 2; i++) {
    config(sp, c6, "block_size_x", bs[i], "use_shared", sh[i], "tile_x", i ? "2" : "1", NULL);
    char *src = gen(s, sp, c6);
    compile_ok(src);
    free(src);
  }
  sp_free(sp);
  uk_spec_free(s);
  rt_err err = {0};
  const kn_kernel *k = uk_load(DATA "conv_cu.json", NULL, NULL, 0, &err);
  kn_problem pb = {.n = 1, .name = {"nx"}, .val = {sx_int(300)}};
  char *ref = k->device_reference(&pb);
  compile_ok(ref);
  free(ref);
  uk_unload(k);
  /* KernelTypeNames: the source as C++, not wrapped, still compiles */
  s = load(variant("conv_cu.json", "tpl2.json", edit_template), NULL, DATA);
  sp = space_of(s, NULL);
  config(sp, c6, NULL);
  char *src = gen(s, sp, c6);
  assert_null(strstr(src, "extern \"C\""));
  compile_ok(src);
  free(src);
  sp_free(sp);
  uk_spec_free(s);
}

/* ---- the command line ---- */

static void test_cli(void **state) {
  (void)state;
  if (!rooftune[0]) {
    print_message("skipped: the rooftune program is not built\n");
    skip();
  }
  struct { const char *argv[12]; int rc; const char *err; } cases[] = {
    {{"measure", "--t1", DATA "conv_cu.json", "--target", "opencl", "--config", "default"}, 1,
     "KernelSpecification.Language is CUDA: kernel uk_conv_cu runs on cuda:N, not on target opencl:0.0"},
    {{"tune", "--t1", DATA "vadd_cl.json", "--target", "host"}, 1,
     "KernelSpecification.Language is OpenCL: kernel uk_vadd_cl runs on opencl"},
    {{"measure", "--t1", DATA "vadd_cl.json", "--kernel", "gemm", "--config", "default"}, 2,
     "give --t1 FILE or --kernel K, not both"},
    {{"measure", "--atol", "0.1", "--kernel", "gemm", "--config", "default"}, 2,
     "--atol applies to a kernel given with --t1 FILE"},
    {{"tune", "--kernel-dir", "x", "--kernel", "gemm"}, 2, "--kernel-dir applies to a kernel given with --t1"},
    {{"measure", "--config", "default"}, 2, "--kernel K or --t1 FILE is required"},
    {{"tune", "--t1", DATA "bad_type.json"}, 1, "KernelSpecification.Arguments[1].Type: unknown type"},
    {{"model", "explain", "--t1", DATA "bad_name.json", "--config", "default", "--db", "/nonexistent/x.db"}, 1,
     "name 'foo' is not a parameter"},
    {{"measure", "--t1", DATA "vadd_cl.json", "--set", "n=0", "--config", "default"}, 1,
     "KernelSpecification.GridDivX: 0 work-groups"},
    {{"measure", "--t1", DATA "vadd_cl.json", "--atol", "-1", "--config", "default"}, 2, "--atol"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *argv[16] = {rooftune};
    int n = 1;
    for (int j = 0; cases[i].argv[j]; j++) argv[n++] = cases[i].argv[j];
    tk_result r = tk_capture(argv, NULL, NULL);
    if (r.rc != cases[i].rc || !strstr(r.err, cases[i].err))
      fail_msg("case %zu (%s %s): exit %d, stderr: %s; expected exit %d and \"%s\"", i, cases[i].argv[0],
               cases[i].argv[1], r.rc, r.err, cases[i].rc, cases[i].err);
    tk_result_free(&r);
  }
  /* the built-in's name is refused for a T1 kernel */
  char path[128];
  snprintf(path, sizeof path, "%s/transpose.json", tmp);
  json_t *root = json_load_file(DATA "vadd_cl.json", 0, NULL);
  json_object_del(json_object_get(root, "General"), "BenchmarkName");
  json_dump_file(root, path, 0);
  json_decref(root);
  const char *argv[] = {rooftune, "measure", "--t1", path, "--kernel-dir", DATA, "--config", "default", NULL};
  tk_result r = tk_capture(argv, NULL, NULL);
  assert_int_equal(r.rc, 1);
  if (!strstr(r.err, "General.BenchmarkName: transpose is the name of a built-in kernel of opencl:0.0"))
    fail_msg("%s", r.err);
  tk_result_free(&r);
}

/* rooftune ARGS in folder dir; its stdout and stderr into out. */
static int run_in(const char *dir, const char *const *args, char *out, size_t cap) {
  const char *argv[40] = {rooftune};
  int n = 1;
  for (; args[n - 1] && n < 39; n++) argv[n] = args[n - 1];
  argv[n] = NULL;
  tk_io io = {.cwd = dir, .out = out, .cap = cap, .both = 1};
  return tk_run(argv, &io);
}

/* A target named other than canonically ("opencl" is opencl:0.0, the
** name a T1 OpenCL kernel's target defaults to) is stored and pinned under
** its canonical name: the pin found its trials (it failed with "trial N is
** not a trial of ... on opencl" when the campaign pinned under the name
** as given). */
static void test_tune_target_alias(void **state) {
  (void)state;
  const char *why;
  if (!rooftune[0] || !oc_available(&why)) {
    print_message("skipped: %s\n", rooftune[0] ? why : "the rooftune program is not built");
    skip();
  }
  char out[16384];
  const char *tune[] = {"tune", "--target", "opencl", "--kernel", "reduction", "--set", "N=4096",
                        "--strategy", "random", "--budget", "2", "--time-cap", "0.02", "--db", "alias.db",
                        NULL};
  if (run_in(tmp, tune, out, sizeof out)) fail_msg("%s", out);
  if (!strstr(out, "on opencl:0.0") || !strstr(out, "pinned     version 1")) fail_msg("%s", out);
}

/* End to end on the OpenCL device (PoCL here): `rooftune tune --t1` of
** tests/data/uk/e2e_cl.json through the program, the target from its
** Language; every configuration measured (12: exhaustive), the six with
** bug 1 wrong_result against the given reference (6.5 everywhere: the
** inputs are constants), the six others ok; then the pinned winner read
** back through the reader library, one of the correct ones, and measure
** of it through the program. */
static void test_end_to_end_opencl(void **state) {
  (void)state;
  const char *why;
  if (!rooftune[0] || !oc_available(&why)) {
    print_message("skipped: %s\n", rooftune[0] ? why : "the rooftune program is not built");
    skip();
  }
  char out[16384], t1[4200];
  snprintf(t1, sizeof t1, "%s/e2e_cl.json", datadir);
  const char *tune[] = {"tune", "--t1", t1, "--set", "n=1000", "--strategy", "exhaustive", "--budget", "12",
                        "--time-cap", "0.02", "--db", "e2e.db", NULL};
  if (run_in(tmp, tune, out, sizeof out)) fail_msg("%s", out);
  if (!strstr(out, "workload   uk_e2e_cl f32 n=1000 on opencl:0.0") ||
      !strstr(out, "trials     12: ok 6 compile_error 0 runtime_error 0 timeout 0 wrong_result 6 invalid 0") ||
      !strstr(out, "pinned     version 1"))
    fail_msg("%s", out);
  char dbpath[128];
  snprintf(dbpath, sizeof dbpath, "%s/e2e.db", tmp);
  rtdb *r = NULL;
  assert_int_equal(rtdb_open(dbpath, &r), RTDB_OK);
  rtdb_result res;
  assert_int_equal(rtdb_lookup(r, "opencl:0.0", "uk_e2e_cl", "n=1000", NULL, &res), RTDB_OK);
  assert_int_equal(res.match, RTDB_EXACT);
  if (!strstr(res.config, "\"bug\":0")) fail_msg("pinned %s", res.config);
  rtdb_close(r);
  /* the campaign records where the kernel came from: the T1 file, its
  ** hash (recomputed here from the file), each input's fill */
  sqlite3 *sq = NULL;
  sqlite3_stmt *st = NULL;
  assert_int_equal(sqlite3_open_v2(dbpath, &sq, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(sq, "SELECT options FROM campaigns", -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  json_t *opt = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
  sqlite3_finalize(st);
  sqlite3_close(sq);
  json_t *ks = json_object_get(opt, "kernel_source");
  assert_true(json_is_object(ks));
  assert_string_equal(json_string_value(json_object_get(ks, "t1")), t1);
  FILE *tf = fopen(t1, "rb");
  char text[8192];
  size_t tn = fread(text, 1, sizeof text, tf);
  fclose(tf);
  char hex[33];
  rt_hash_hex(rt_hash_bytes(RT_HASH_INIT, text, tn), hex);
  assert_string_equal(json_string_value(json_object_get(ks, "t1_fnv128")), hex);
  json_t *in = json_object_get(ks, "inputs");
  assert_int_equal(json_array_size(in), 4);
  json_t *a0 = json_array_get(in, 0), *a3 = json_array_get(in, 3);
  assert_string_equal(json_string_value(json_object_get(a0, "name")), "a");
  assert_string_equal(json_string_value(json_object_get(a0, "fill")), "Constant");
  assert_true(json_real_value(json_object_get(a0, "value")) == 1.5);
  assert_string_equal(json_string_value(json_object_get(a3, "kind")), "scalar");
  assert_true(json_real_value(json_object_get(a3, "value")) == 2.5);
  json_decref(opt);
  /* the pinned schedule measured again: verified */
  const char *measure[] = {"measure", "--t1", t1, "--set", "n=1000", "--config", res.config,
                           "--time-cap", "0.02", NULL};
  if (run_in(tmp, measure, out, sizeof out)) fail_msg("%s", out);
  if (!strstr(out, "status   ok") || !strstr(out, "verified |out - ref| <= 1e-06 + 1e-05 |ref|"))
    fail_msg("%s", out);
  /* a wrong one: wrong_result naming the output, exit 1 */
  const char *wrong[] = {"measure", "--t1", t1, "--set", "n=1000", "--config",
                         "{\"block_size_x\":16,\"unroll\":2,\"bug\":1}", "--time-cap", "0.02", NULL};
  assert_int_equal(run_in(tmp, wrong, out, sizeof out), 1);
  if (!strstr(out, "wrong_result")) fail_msg("%s", out);
  /* the winner on the roofline (its cost model: the stated work, uk.h
  ** invariant 6): the work is the file's rooftune block at n = 1000 (2n
  ** FLOP, 12n bytes), the bound one of the model's, and each achieved
  ** fraction the work over the measured time over the ceiling, recomputed
  ** here from the numbers the command prints */
  const char *bench[] = {"bench", "--target", "opencl", "--db", "e2e.db", "--quick", NULL};
  if (run_in(tmp, bench, out, sizeof out)) fail_msg("%s", out);
  const char *explain[] = {"model", "explain", "--t1", t1, "--set", "n=1000", "--db", "e2e.db",
                           "--config", res.config, "--json", NULL};
  if (run_in(tmp, explain, out, sizeof out)) fail_msg("%s", out);
  json_error_t je;
  json_t *j = json_loads(out, 0, &je);
  if (!j) fail_msg("not JSON (%s): %s", je.text, out);
  json_t *bounds = json_object_get(j, "bounds"), *meas = json_object_get(j, "measured");
  assert_non_null(bounds);
  assert_true(json_is_object(meas));
  double t = json_number_value(json_object_get(meas, "time_s"));
  assert_true(t > 0);
  static const struct { const char *bound; double work; } want[] = {{"compute", 2000}, {"DRAM", 12000}};
  for (int i = 0; i < 2; i++) {
    json_t *b = json_object_get(bounds, want[i].bound);
    double work = json_number_value(json_object_get(b, "work"));
    double ceil = json_number_value(json_object_get(b, "ceiling"));
    double frac = json_number_value(json_object_get(json_object_get(meas, "achieved"), want[i].bound));
    if (fabs(work - want[i].work) > 1e-9 * want[i].work) fail_msg("%s work %g", want[i].bound, work);
    assert_true(ceil > 0);
    /* the JSON writer keeps 6 significant digits of each of the four */
    if (!(fabs(frac - work / t / ceil) <= 1e-5 * frac)) fail_msg("%s achieved %g", want[i].bound, frac);
  }
  const char *bound = json_string_value(json_object_get(j, "bound"));
  assert_non_null(bound);
  assert_non_null(json_object_get(bounds, bound));
  /* counted work (as tune --counters stores CUPTI's for a trial; written
  ** here by hand for the pinned schedule): explain places the measured
  ** time by it, FP32 FLOP = 2 FFMA + FADD + FMUL = 1150, DRAM 24000 B */
  double tc = json_number_value(json_object_get(json_object_get(bounds, "compute"), "ceiling"));
  double td = json_number_value(json_object_get(json_object_get(bounds, "DRAM"), "ceiling"));
  char hash[33], sql[8192];
  db_config_hash(res.config, hash);
  snprintf(sql, sizeof sql,
           "INSERT INTO counters(target_id, workload_id, config_hash, config, source, data) "
           "SELECT t.id, w.id, '%s', '%s', 'cupti', '{\"L2\": 30000, \"DRAM\": 24000, \"metrics\": "
           "{\"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\": 500, "
           "\"sm__sass_thread_inst_executed_op_fadd_pred_on.sum\": 100, "
           "\"sm__sass_thread_inst_executed_op_fmul_pred_on.sum\": 50}}' "
           "FROM targets t, workloads w WHERE t.name = 'opencl:0.0'", hash, res.config);
  assert_int_equal(sqlite3_open(dbpath, &sq), SQLITE_OK);
  char *emsg = NULL;
  if (sqlite3_exec(sq, sql, NULL, NULL, &emsg) != SQLITE_OK) fail_msg("%s", emsg);
  sqlite3_close(sq);
  const char *explain_text[] = {"model", "explain", "--t1", t1, "--set", "n=1000", "--db", "e2e.db",
                                "--config", res.config, NULL};
  if (run_in(tmp, explain_text, out, sizeof out)) fail_msg("%s", out);
  const char *line = strstr(out, "achieved   cupti counts:");
  if (!line || !strstr(out, "FP32 1150 FLOP")) fail_msg("%s", out);
  double gf, pf, gb, pb;
  if (sscanf(line, "achieved   cupti counts:  compute %lf GFLOP/s = %lf%%", &gf, &pf) != 2 ||
      !strstr(line, "DRAM ") || sscanf(strstr(line, "DRAM "), "DRAM %lf GB/s = %lf%%", &gb, &pb) != 2)
    fail_msg("%s", line);
  if (fabs(gf - 1150 / t * 1e-9) > 1e-3 * gf || fabs(pf - 100 * 1150 / t / tc) > 0.06 + 1e-3 * pf ||
      fabs(gb - 24000 / t * 1e-9) > 1e-3 * gb || fabs(pb - 100 * 24000 / t / td) > 0.06 + 1e-3 * pb)
    fail_msg("counted: %s (t %g, ceilings %g %g)", line, t, tc, td);
  json_decref(j);
}

/* tune --resume of a T1 kernel whose problem variable has no Default: the
** kernel is loaded with the campaign's own stored --set (it failed with
** "problem variable 'n' is unbound" before the campaign was read). */
static void test_resume_without_default(void **state) {
  (void)state;
  const char *why;
  if (!rooftune[0] || !oc_available(&why)) {
    print_message("skipped: %s\n", rooftune[0] ? why : "the rooftune program is not built");
    skip();
  }
  char src[4200], t1[4200], out[16384];
  snprintf(src, sizeof src, "%s/e2e_cl.json", datadir);
  snprintf(t1, sizeof t1, "%s/nodefault.json", tmp);
  json_t *root = json_load_file(src, 0, NULL);
  assert_non_null(root);
  json_t *pv = json_array_get(json_object_get(json_object_get(root, "ConfigurationSpace"), "ProblemVariables"), 0);
  assert_int_equal(json_object_del(pv, "Default"), 0);
  assert_int_equal(json_dump_file(root, t1, 0), 0);
  json_decref(root);
  const char *tune[] = {"tune", "--t1", t1, "--kernel-dir", datadir, "--set", "n=1000", "--budget", "2",
                        "--time-cap", "0.01", "--no-pin", "--db", "resume.db", NULL};
  if (run_in(tmp, tune, out, sizeof out)) fail_msg("%s", out);
  const char *resume[] = {"tune", "--resume", "1", "--t1", t1, "--kernel-dir", datadir, "--db", "resume.db", NULL};
  assert_int_equal(run_in(tmp, resume, out, sizeof out), 1);
  if (!strstr(out, "campaign 1 is done already") || strstr(out, "unbound")) fail_msg("%s", out);
}

static int setup(void **state) {
  (void)state;
  snprintf(tmp, sizeof tmp, "/tmp/test_uk-XXXXXX");
  if (!mkdtemp(tmp)) return -1;
  if (!realpath("tests/data/uk", datadir)) return -1;
  char cache[96];
  snprintf(cache, sizeof cache, "%s/cache", tmp);
  setenv("ROOFTUNE_CACHE", cache, 1);   /* the programs' compile cache: the test's own */
  if (find_rooftune("test_uk", rooftune, sizeof rooftune)) rooftune[0] = 0;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tk_rm_rf(tmp);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_parse_fields),
    cmocka_unit_test(test_types_and_name),
    cmocka_unit_test(test_buffers_and_work),
    cmocka_unit_test(test_fill_value_expression),
    cmocka_unit_test(test_geometry_griddiv),
    cmocka_unit_test(test_geometry_globalsize),
    cmocka_unit_test(test_defines),
    cmocka_unit_test(test_plan_lines),
    cmocka_unit_test(test_extern_c_and_entry),
    cmocka_unit_test(test_reference),
    cmocka_unit_test(test_bad_inputs),
    cmocka_unit_test(test_registry),
    cmocka_unit_test(test_nvrtc),
    cmocka_unit_test(test_cli),
    cmocka_unit_test(test_tune_target_alias),
    cmocka_unit_test(test_end_to_end_opencl),
    cmocka_unit_test(test_resume_without_default),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
