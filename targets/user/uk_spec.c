/*
** uk_spec.c -- parse a T1 file's KernelSpecification (and rooftune's
** extension block) into a uk_spec: jansson for the JSON, the space
** language for the expressions (compiled once here), the kernel files
** read and concatenated; then every expression checked for the bindings
** given (uk.h invariant 7). Every error names the T1 field:
** "KernelSpecification.Arguments[2].Size: `foo * 2`: name 'foo' is not a
** parameter, ProblemSize or a problem variable".
*/
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "uk.h"

/* T1's argument types (invariant 5): name, element, lanes. The vector
** forms NAME2, NAME3, NAME4, NAME8, NAME16 of the rows marked vec. */
static const struct { const char *name; kn_elem elem; int vec; } uk_types[] = {
  {"bool", KN_U8, 0},    {"int8", KN_I8, 0},     {"uint8", KN_U8, 0},   {"int16", KN_I16, 0},
  {"uint16", KN_U16, 0}, {"int32", KN_I32, 0},   {"uint32", KN_U32, 0}, {"int64", KN_I64, 0},
  {"uint64", KN_U64, 0}, {"half", KN_F16, 1},    {"float", KN_F32, 1},  {"double", KN_F64, 1},
  {"char", KN_I8, 1},    {"uchar", KN_U8, 1},    {"short", KN_I16, 1},  {"ushort", KN_U16, 1},
  {"int", KN_I32, 1},    {"uint", KN_U32, 1},    {"long", KN_I64, 1},   {"ulong", KN_U64, 1},
};

static const char *const fill_ok = "Constant, Random or BinaryRaw";

/* ---- small helpers ---- */

static char *read_file(const char *path, size_t *len, rt_err *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    rt_err_set(err, "cannot read %s: %s", path, strerror(errno));
    return NULL;
  }
  rt_str s = {0};
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) rt_str_printf(&s, "%.*s", (int)n, buf);
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(s.s);
    rt_err_set(err, "read error on %s", path);
    return NULL;
  }
  if (!s.s) s.s = rt_strdup("");
  if (strlen(s.s) != s.n) {
    free(s.s);
    rt_err_set(err, "%s contains a NUL byte: not a text file", path);
    return NULL;
  }
  if (len) *len = s.n;
  return s.s;
}

/* dir/rel, or rel when it is absolute (malloc'ed). */
static char *join(const char *dir, const char *rel) {
  rt_str s = {0};
  if (rel[0] == '/') rt_str_printf(&s, "%s", rel);
  else rt_str_printf(&s, "%s/%s", dir, rel);
  return s.s;
}

/* The folder of an absolute path (malloc'ed). */
static char *dir_of(const char *path) {
  char *d = rt_strdup(path);
  char *slash = strrchr(d, '/');
  if (slash == d) slash[1] = 0;
  else if (slash) *slash = 0;
  return d;
}

static int is_ident(const char *s) {
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
      return 0;
  return 1;
}

/* A T1 element type into *elem, *lanes; 0, or -1. */
static int parse_type(const char *t, uk_lang lang, kn_elem *elem, int *lanes) {
  for (size_t i = 0; i < sizeof uk_types / sizeof *uk_types; i++) {
    size_t n = strlen(uk_types[i].name);
    if (strncmp(t, uk_types[i].name, n)) continue;
    const char *suf = t + n;
    int l = !*suf ? 1 : !uk_types[i].vec ? 0 : !strcmp(suf, "2") ? 2 : !strcmp(suf, "3") ? 3
          : !strcmp(suf, "4") ? 4 : !strcmp(suf, "8") ? 8 : !strcmp(suf, "16") ? 16 : 0;
    if (!l) continue;
    *elem = uk_types[i].elem;
    *lanes = l == 3 && lang == UK_OPENCL ? 4 : l;   /* OpenCL's 3-vectors take 4 */
    return 0;
  }
  return -1;
}

/* The slot layout of every expression: parameters 0..np-1, ProblemSize
** np, problem variables np+1... `what` 0: ProblemSize's own entries
** (problem variables only). */
static sx_prog *compile_text(uk_spec *s, const char *field, const char *text, int what, rt_err *err) {
  int n = 0;
  sx_name *names = rt_calloc((size_t)(s->np + s->nv + 1), sizeof *names);
  if (what) {
    for (int p = 0; p < s->np; p++) names[n++] = (sx_name){.name = s->pname[p], .slot = p};
    names[n++] = (sx_name){.name = "ProblemSize", .slot = s->np};
  }
  for (int v = 0; v < s->nv; v++) names[n++] = (sx_name){.name = s->vname[v], .slot = s->np + 1 + v};
  rt_err e = {0};
  sx_prog *p = sx_compile(text, names, n, &e);
  free(names);
  if (p) return p;
  char unknown[128];
  if (sscanf(e.msg, "name '%127[^']' is not defined", unknown) == 1)
    rt_err_set(err, "%s: `%s`: name '%s' is not %s", field, text, unknown,
               what ? "a parameter, ProblemSize or a problem variable" : "a problem variable");
  else
    rt_err_set(err, "%s: `%s`: %s (column %d)", field, text, e.msg, e.col);
  return NULL;
}

/* An int or expression-string field; NULL with err (a missing one too). */
static sx_prog *compile_field(uk_spec *s, const char *field, json_t *j, int what, rt_err *err) {
  char buf[32];
  const char *text;
  if (json_is_integer(j)) {
    snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(j));
    text = buf;
  } else if (json_is_string(j)) {
    text = json_string_value(j);
  } else {
    rt_err_set(err, "%s: %s", field, j ? "expected an integer or an expression string" : "missing field");
    return NULL;
  }
  return compile_text(s, field, text, what, err);
}

/* Field f of object o as a string: *out (NULL when absent and optional);
** 0, or -1 with err. */
static int get_str(json_t *o, const char *f, const char *field, int required, const char **out, rt_err *err) {
  json_t *j = json_object_get(o, f);
  *out = NULL;
  if (!j || json_is_null(j)) {
    if (!required) return 0;
    rt_err_set(err, "%s.%s: missing field", field, f);
    return -1;
  }
  if (!json_is_string(j)) {
    rt_err_set(err, "%s.%s: expected a string", field, f);
    return -1;
  }
  *out = json_string_value(j);
  return 0;
}

/* Refuse keys of o not in keys (our own block: a typo is an error). */
static int only_keys(json_t *o, const char *field, const char *const *keys, rt_err *err) {
  const char *k;
  json_t *v;
  json_object_foreach(o, k, v) {
    int ok = 0;
    for (const char *const *q = keys; *q; q++) ok |= !strcmp(k, *q);
    if (!ok) {
      rt_str l = {0};
      for (const char *const *q = keys; *q; q++) rt_str_printf(&l, "%s%s", q == keys ? "" : ", ", *q);
      rt_err_set(err, "%s: unknown field \"%s\" (expected %s)", field, k, l.s);
      free(l.s);
      return -1;
    }
  }
  return 0;
}

/* Append file (resolved against dir) to the source unless *seen holds it. */
static int add_source(rt_str *src, char ***seen, int *nseen, const char *dir, const char *rel,
                      const char *field, rt_err *err) {
  char *path = join(dir, rel);
  for (int i = 0; i < *nseen; i++)
    if (!strcmp((*seen)[i], path)) {
      free(path);
      return 0;
    }
  rt_err e = {0};
  char *text = read_file(path, NULL, &e);
  if (!text) {
    rt_err_set(err, "%s: %s", field, e.msg);
    free(path);
    return -1;
  }
  rt_str_printf(src, "%s", text);
  if (text[0] && text[strlen(text) - 1] != '\n') rt_str_printf(src, "\n");
  free(text);
  *seen = rt_realloc(*seen, (size_t)(*nseen + 1) * sizeof **seen);
  (*seen)[(*nseen)++] = path;
  return 0;
}

/* A FillType (or ReferenceArguments' FillType) into *fill. */
static int parse_fill(const char *t, const char *field, kn_fill *fill, rt_err *err) {
  if (!strcmp(t, "Constant")) *fill = KN_FILL_CONSTANT;
  else if (!strcmp(t, "Random")) *fill = KN_FILL_RANDOM;
  else if (!strcmp(t, "BinaryRaw")) *fill = KN_FILL_FILE;
  else {
    rt_err_set(err, "%s: FillType \"%s\" is not supported: rooftune fills arguments by %s%s", field, t,
               fill_ok, !strcmp(t, "Generator") || !strcmp(t, "Script") || !strcmp(t, "BinaryHDF")
                            ? " (write the data to a raw file and use BinaryRaw)" : "");
    return -1;
  }
  return 0;
}

/* A number field, or (prog not NULL) an expression string compiled into
** *prog (evaluated per workload: a scalar passing a problem size). */
static int get_number(uk_spec *s, json_t *o, const char *f, const char *field, double *out, sx_prog **prog,
                      rt_err *err) {
  json_t *j = json_object_get(o, f);
  if (!j || json_is_null(j)) return 0;
  if (json_is_boolean(j)) *out = json_is_true(j);
  else if (json_is_number(j)) *out = json_number_value(j);
  else if (json_is_string(j) && prog) {
    char f2[128];
    snprintf(f2, sizeof f2, "%s.%s", field, f);
    return (*prog = compile_text(s, f2, json_string_value(j), 1, err)) ? 0 : -1;
  } else {
    rt_err_set(err, "%s.%s: expected a number%s", field, f, prog ? " or an expression" : "");
    return -1;
  }
  return 0;
}

/* ---- the parts of a KernelSpecification ---- */

static int parse_arg(uk_spec *s, int i, json_t *a, const char *t1dir, rt_err *err) {
  char field[96];
  snprintf(field, sizeof field, "KernelSpecification.Arguments[%d]", i);
  uk_arg *g = &s->arg[i];
  if (!json_is_object(a)) {
    rt_err_set(err, "%s: expected an object", field);
    return -1;
  }
  const char *name, *type, *mt, *memt, *at, *ft, *ds;
  if (get_str(a, "Name", field, 1, &name, err) || get_str(a, "Type", field, 1, &type, err) ||
      get_str(a, "MemoryType", field, 0, &mt, err) || get_str(a, "MemType", field, 0, &memt, err) ||
      get_str(a, "AccessType", field, 0, &at, err) || get_str(a, "FillType", field, 0, &ft, err) ||
      get_str(a, "DataSource", field, 0, &ds, err))
    return -1;
  if (!is_ident(name)) {
    rt_err_set(err, "%s.Name: \"%s\" is not an identifier", field, name);
    return -1;
  }
  g->name = rt_strdup(name);
  g->type = rt_strdup(type);
  if (parse_type(type, s->lang, &g->elem, &g->lanes)) {
    rt_err_set(err, "%s.Type: unknown type \"%s\" (expected bool, int8 ... uint64, half, float, double, "
               "or a vector type such as float4)", field, type);
    return -1;
  }
  const char *cuda_only = NULL, *ocl_only = NULL;
  if (!mt || !strcmp(mt, "Vector")) g->kind = KN_VECTOR;
  else if (!strcmp(mt, "Scalar")) g->kind = KN_SCALAR;
  else if (!strcmp(mt, "Local")) g->kind = KN_LOCAL, ocl_only = "MemoryType Local (OpenCL __local memory)";
  else if (!strcmp(mt, "Symbol")) g->kind = KN_SYMBOL, cuda_only = "MemoryType Symbol (a CUDA __constant__ variable)";
  else {
    rt_err_set(err, "%s.MemoryType: expected Vector, Scalar, Local or Symbol, got \"%s\"", field, mt);
    return -1;
  }
  if (memt && !strcmp(memt, "Constant") && s->lang == UK_CUDA) {
    if (g->kind == KN_SCALAR || g->kind == KN_LOCAL) {
      rt_err_set(err, "%s.MemType: Constant is for a Vector argument (a CUDA __constant__ symbol)", field);
      return -1;
    }
    g->kind = KN_SYMBOL;
  }
  if (cuda_only && s->lang != UK_CUDA) {
    rt_err_set(err, "%s.MemoryType: %s needs Language CUDA", field, cuda_only);
    return -1;
  }
  if (ocl_only && s->lang != UK_OPENCL) {
    rt_err_set(err, "%s.MemoryType: %s needs Language OpenCL", field, ocl_only);
    return -1;
  }
  if (g->kind == KN_SCALAR && g->lanes != 1) {
    rt_err_set(err, "%s.Type: a Scalar of the vector type %s is not supported (pass a Vector)", field, type);
    return -1;
  }
  json_t *out = json_object_get(a, "Output");
  if (out && !json_is_null(out)) {
    if (!json_is_integer(out) && !json_is_boolean(out)) {
      rt_err_set(err, "%s.Output: expected 0 or 1", field);
      return -1;
    }
    g->out = json_is_integer(out) ? json_integer_value(out) != 0 : json_is_true(out);
  }
  if (at && strcmp(at, "ReadOnly") && strcmp(at, "WriteOnly") && strcmp(at, "ReadWrite")) {
    rt_err_set(err, "%s.AccessType: expected ReadOnly, WriteOnly or ReadWrite, got \"%s\"", field, at);
    return -1;
  }
  if (g->out && (g->kind == KN_SCALAR || g->kind == KN_LOCAL || g->kind == KN_SYMBOL)) {
    rt_err_set(err, "%s.Output: a %s argument cannot be an output", field,
               g->kind == KN_SCALAR ? "Scalar" : g->kind == KN_LOCAL ? "Local" : "constant-memory");
    return -1;
  }
  if (g->out && at && !strcmp(at, "ReadOnly")) {
    rt_err_set(err, "%s.AccessType: ReadOnly, but Output is 1 (an output is WriteOnly or ReadWrite)", field);
    return -1;
  }
  g->inout = g->out && at && !strcmp(at, "ReadWrite");
  if (g->kind != KN_SCALAR) {
    char f2[112];
    snprintf(f2, sizeof f2, "%s.Size", field);
    if (!(g->size = compile_field(s, f2, json_object_get(a, "Size"), 1, err))) return -1;
  }
  if (get_number(s, a, "FillValue", field, &g->value, &g->fill_expr, err)) return -1;
  int has_value = json_object_get(a, "FillValue") && !json_is_null(json_object_get(a, "FillValue"));
  if (ft) {
    char f2[112];
    snprintf(f2, sizeof f2, "%s.FillType", field);
    if (parse_fill(ft, f2, &g->fill, err)) return -1;
  } else {
    g->fill = has_value ? KN_FILL_CONSTANT : KN_FILL_RANDOM;
  }
  if (g->fill == KN_FILL_FILE) {
    if (!ds) {
      rt_err_set(err, "%s.DataSource: missing field (FillType BinaryRaw reads it)", field);
      return -1;
    }
    g->file = join(t1dir, ds);
    if (access(g->file, R_OK)) {
      rt_err_set(err, "%s.DataSource: cannot read %s: %s", field, g->file, strerror(errno));
      return -1;
    }
  }
  if (g->kind == KN_SCALAR && g->fill == KN_FILL_FILE) {
    rt_err_set(err, "%s.FillType: a Scalar takes FillValue (Constant) or Random, not BinaryRaw", field);
    return -1;
  }
  json_t *seed = json_object_get(a, "RandomSeed");
  g->seed = 42 + (uint64_t)i;
  if (seed && !json_is_null(seed)) {
    if (!json_is_integer(seed) || json_integer_value(seed) < 0) {
      rt_err_set(err, "%s.RandomSeed: expected a non-negative integer", field);
      return -1;
    }
    g->seed = (uint64_t)json_integer_value(seed);
  }
  return 0;
}

static int parse_refargs(uk_spec *s, json_t *ra, const char *t1dir, rt_err *err) {
  if (!ra || json_is_null(ra)) return 0;
  if (!json_is_array(ra)) {
    rt_err_set(err, "KernelSpecification.ReferenceArguments: expected an array");
    return -1;
  }
  size_t i;
  json_t *r;
  json_array_foreach(ra, i, r) {
    char field[96];
    snprintf(field, sizeof field, "KernelSpecification.ReferenceArguments[%zu]", i);
    const char *tn, *ft, *ds;
    if (!json_is_object(r)) {
      rt_err_set(err, "%s: expected an object", field);
      return -1;
    }
    if (get_str(r, "TargetName", field, 1, &tn, err) || get_str(r, "FillType", field, 1, &ft, err) ||
        get_str(r, "DataSource", field, 0, &ds, err))
      return -1;
    uk_arg *g = NULL;
    for (int a = 0; a < s->narg; a++)
      if (!strcmp(s->arg[a].name, tn)) g = &s->arg[a];
    if (!g || !g->out) {
      rt_err_set(err, "%s.TargetName: \"%s\" is not %s", field, tn,
                 g ? "an output (Output 1)" : "an argument's Name");
      return -1;
    }
    char f2[112];
    snprintf(f2, sizeof f2, "%s.FillType", field);
    if (parse_fill(ft, f2, &g->ref_fill, err)) return -1;
    if (g->ref_fill == KN_FILL_RANDOM) {
      rt_err_set(err, "%s: a reference output is Constant or BinaryRaw, not Random", f2);
      return -1;
    }
    if (get_number(s, r, "FillValue", field, &g->ref_value, NULL, err)) return -1;
    if (g->ref_fill == KN_FILL_FILE) {
      if (!ds) {
        rt_err_set(err, "%s.DataSource: missing field (FillType BinaryRaw reads it)", field);
        return -1;
      }
      g->ref_file = join(t1dir, ds);
      if (access(g->ref_file, R_OK)) {
        rt_err_set(err, "%s.DataSource: cannot read %s: %s", field, g->ref_file, strerror(errno));
        return -1;
      }
    }
    g->has_ref = 1;
  }
  return 0;
}

/* LocalSize / GlobalSize: {X, Y, Z}, each int or expression. */
static int parse_xyz(uk_spec *s, json_t *o, const char *f, sx_prog **out, rt_err *err) {
  static const char *const xyz[] = {"X", "Y", "Z", NULL};
  char field[64];
  snprintf(field, sizeof field, "KernelSpecification.%s", f);
  if (!o || json_is_null(o)) return 0;
  if (!json_is_object(o)) {
    rt_err_set(err, "%s: expected an object with X, Y, Z", field);
    return -1;
  }
  if (only_keys(o, field, xyz, err)) return -1;
  for (int d = 0; d < 3; d++) {
    json_t *j = json_object_get(o, xyz[d]);
    if (!j || json_is_null(j)) continue;
    char f2[80];
    snprintf(f2, sizeof f2, "%s.%s", field, xyz[d]);
    if (!(out[d] = compile_field(s, f2, j, 1, err))) return -1;
  }
  return 0;
}

static int parse_griddiv(uk_spec *s, json_t *ks, rt_err *err) {
  static const char *const f[] = {"GridDivX", "GridDivY", "GridDivZ"};
  for (int d = 0; d < 3; d++) {
    json_t *j = json_object_get(ks, f[d]);
    s->ndiv[d] = -1;
    if (!j || json_is_null(j)) continue;
    char field[64];
    snprintf(field, sizeof field, "KernelSpecification.%s", f[d]);
    if (json_is_string(j) || json_is_integer(j)) {
      s->ndiv[d] = 1;
      if (!(s->div[d][0] = compile_field(s, field, j, 1, err))) return -1;
      continue;
    }
    if (!json_is_array(j) || json_array_size(j) > UK_MAXDIV) {
      rt_err_set(err, "%s: expected a list of at most %d expressions", field, UK_MAXDIV);
      return -1;
    }
    s->ndiv[d] = 0;
    size_t i;
    json_t *e;
    json_array_foreach(j, i, e) {
      char f2[112];
      snprintf(f2, sizeof f2, "%s[%zu]", field, i);
      if (!(s->div[d][s->ndiv[d]++] = compile_field(s, f2, e, 1, err))) return -1;
    }
  }
  return 0;
}

static int parse_sources(uk_spec *s, json_t *ks, json_t *rb, const char *t1dir, const char *kdir,
                         rt_err *err) {
  const char *kf;
  if (get_str(ks, "KernelFile", "KernelSpecification", 0, &kf, err)) return -1;
  json_t *more = rb ? json_object_get(rb, "KernelFiles") : NULL;
  if (more && (!json_is_array(more) || !json_array_size(more))) {
    rt_err_set(err, "rooftune.KernelFiles: expected a non-empty list of file names");
    return -1;
  }
  if (!kf && !more) {
    rt_err_set(err, "KernelSpecification.KernelFile: missing field");
    return -1;
  }
  const char *dir = kdir ? kdir : t1dir;
  rt_str src = {0};
  char **seen = NULL;
  int nseen = 0, rc = 0;
  if (kf) rc = add_source(&src, &seen, &nseen, dir, kf, "KernelSpecification.KernelFile", err);
  size_t i;
  json_t *e;
  json_array_foreach(more, i, e) {
    if (rc) break;
    char field[64];
    snprintf(field, sizeof field, "rooftune.KernelFiles[%zu]", i);
    if (!json_is_string(e)) {
      rt_err_set(err, "%s: expected a file name", field);
      rc = -1;
    } else {
      rc = add_source(&src, &seen, &nseen, dir, json_string_value(e), field, err);
    }
  }
  /* the include path: the first kernel file's folder (invariant 4) */
  if (!rc) {
    char *d = dir_of(seen[0]);
    rt_str opt = {0};
    json_t *co = json_object_get(ks, "CompilerOptions");
    if (co && !json_is_null(co) && !json_is_array(co)) {
      rt_err_set(err, "KernelSpecification.CompilerOptions: expected a list of strings");
      rc = -1;
    }
    json_array_foreach(co, i, e) {
      if (rc) break;
      const char *t = json_is_string(e) ? json_string_value(e) : NULL;
      if (!t || !*t || strpbrk(t, " \t\n\r")) {
        rt_err_set(err, "KernelSpecification.CompilerOptions[%zu]: expected one option without blanks "
                   "(write \"-D\", \"X=1\" as \"-DX=1\")", i);
        rc = -1;
      } else {
        rt_str_printf(&opt, "%s%s", opt.n ? " " : "", t);
      }
    }
    if (!strpbrk(d, " \t\n\r"))
      rt_str_printf(&opt, "%s%s%s", opt.n ? " " : "", s->lang == UK_CUDA ? "--include-path=" : "-I", d);
    s->options = opt.s;
    free(d);
  }
  for (int k = 0; k < nseen; k++) free(seen[k]);
  free(seen);
  s->source = src.s ? src.s : rt_strdup("");
  return rc;
}

/* KernelTypeNames: a list of template arguments, or the whole name
** expression as a string. */
static int parse_typenames(uk_spec *s, json_t *tn, rt_err *err) {
  if (!tn || json_is_null(tn)) return 0;
  const char *f = "KernelSpecification.KernelTypeNames";
  if (s->lang != UK_CUDA) {
    rt_err_set(err, "%s: template kernels are CUDA's (Language is OpenCL)", f);
    return -1;
  }
  rt_str e = {0};
  if (json_is_string(tn)) {
    const char *t = json_string_value(tn);
    if (strchr(t, '<')) rt_str_printf(&e, "%s", t);
    else rt_str_printf(&e, "%s<%s>", s->kernel_name, t);
  } else if (json_is_array(tn) && json_array_size(tn)) {
    rt_str_printf(&e, "%s<", s->kernel_name);
    size_t i;
    json_t *a;
    json_array_foreach(tn, i, a) {
      if (!json_is_string(a) && !json_is_integer(a)) {
        free(e.s);
        rt_err_set(err, "%s[%zu]: expected a type name or an integer", f, i);
        return -1;
      }
      if (json_is_string(a)) rt_str_printf(&e, "%s%s", i ? ", " : "", json_string_value(a));
      else rt_str_printf(&e, "%s%lld", i ? ", " : "", (long long)json_integer_value(a));
    }
    rt_str_printf(&e, ">");
  } else {
    rt_err_set(err, "%s: expected a list of template arguments or a name expression", f);
    return -1;
  }
  if (strchr(e.s, '\n')) {
    free(e.s);
    rt_err_set(err, "%s: a name expression is one line", f);
    return -1;
  }
  s->entry = e.s;
  return 0;
}

static int parse_refconfig(uk_spec *s, json_t *rc, const sp_space *sp, rt_err *err) {
  if (!rc || json_is_null(rc)) return 0;
  if (!json_is_object(rc)) {
    rt_err_set(err, "rooftune.ReferenceConfig: expected an object of parameter values");
    return -1;
  }
  s->ref_name = rt_calloc(json_object_size(rc) + 1, sizeof *s->ref_name);
  s->ref_val = rt_calloc(json_object_size(rc) + 1, sizeof *s->ref_val);
  const char *k;
  json_t *v;
  json_object_foreach(rc, k, v) {
    int p = sp_param_index(sp, k);
    sx_value x = {0};
    if (json_is_boolean(v)) x = sx_bool(json_is_true(v));
    else if (json_is_integer(v)) x = sx_int(json_integer_value(v));
    else if (json_is_real(v)) x = sx_float(json_real_value(v));
    else if (json_is_string(v)) {
      x.t = SX_STR;
      x.u.s = sx_arena_str(s->arena, json_string_value(v), json_string_length(v));
    }
    int found = 0;
    for (int i = 0; p >= 0 && i < sp_nvalues(sp, p); i++) found |= sx_equal(sp_value(sp, p, i), &x);
    if (p < 0) {
      rt_err_set(err, "rooftune.ReferenceConfig.%s: not a tuning parameter", k);
      return -1;
    }
    if (!found) {
      char *t = json_dumps(v, JSON_ENCODE_ANY);
      rt_err_set(err, "rooftune.ReferenceConfig.%s: %s is not one of the parameter's Values (%s)", k, t,
                 sp_param_values_text(sp, p));
      free(t);
      return -1;
    }
    s->ref_name[s->nref] = rt_strdup(k);
    s->ref_val[s->nref++] = x;
  }
  return 0;
}

/* ---- the whole file ---- */

static int parse(uk_spec *s, json_t *root, const char *kdir, const sp_binding *set, int nset, rt_err *err) {
  json_t *ks = json_object_get(root, "KernelSpecification");
  if (!json_is_object(ks)) {
    rt_err_set(err, "KernelSpecification: %s", ks ? "expected an object"
               : "missing field (a T1 file given with --t1 describes its kernel there)");
    return -1;
  }
  json_t *rb = json_object_get(root, "rooftune");
  static const char *const rb_keys[] = {"Flops", "Bytes", "ReferenceConfig", "KernelFiles", NULL};
  if (rb && (!json_is_object(rb) || only_keys(rb, "rooftune", rb_keys, err))) {
    if (!json_is_object(rb)) rt_err_set(err, "rooftune: expected an object");
    return -1;
  }
  /* the space: names, and the check of invariant 7 */
  sp_space *sp = sp_load_string(s->text, s->path, set, nset, err);
  if (!sp) return -1;
  s->np = sp_nparams(sp);
  s->nv = sp_nvars(sp);
  s->pname = rt_calloc((size_t)s->np + 1, sizeof *s->pname);
  s->vname = rt_calloc((size_t)s->nv + 1, sizeof *s->vname);
  for (int p = 0; p < s->np; p++) s->pname[p] = rt_strdup(sp_param_name(sp, p));
  for (int v = 0; v < s->nv; v++) s->vname[v] = rt_strdup(sp_var_name(sp, v));
  int rc = -1;
  const char *lang, *kname, *gst;
  if (get_str(ks, "Language", "KernelSpecification", 1, &lang, err)) goto out;
  if (!strcmp(lang, "CUDA")) s->lang = UK_CUDA;
  else if (!strcmp(lang, "OpenCL")) s->lang = UK_OPENCL;
  else {
    rt_err_set(err, "KernelSpecification.Language: expected \"CUDA\" or \"OpenCL\" (the languages rooftune "
               "compiles), got \"%s\"", lang);
    goto out;
  }
  if (get_str(ks, "KernelName", "KernelSpecification", 1, &kname, err)) goto out;
  if (!is_ident(kname)) {
    rt_err_set(err, "KernelSpecification.KernelName: \"%s\" is not an identifier", kname);
    goto out;
  }
  s->kernel_name = rt_strdup(kname);
  char *t1dir = dir_of(s->path);
  int bad = parse_sources(s, ks, rb, t1dir, kdir, err) ||
            parse_typenames(s, json_object_get(ks, "KernelTypeNames"), err);
  if (bad) {
    free(t1dir);
    goto out;
  }
  /* ProblemSize */
  json_t *ps = json_object_get(ks, "ProblemSize");
  if (json_is_integer(ps) || json_is_string(ps)) {
    s->nps = 1;
    bad = !(s->ps[0] = compile_field(s, "KernelSpecification.ProblemSize", ps, 0, err));
  } else if (ps && !json_is_null(ps)) {
    if (!json_is_array(ps) || json_array_size(ps) > UK_MAXPS) {
      rt_err_set(err, "KernelSpecification.ProblemSize: expected a list of at most %d ints or expressions",
                 UK_MAXPS);
      bad = 1;
    }
    size_t i;
    json_t *e;
    json_array_foreach(ps, i, e) {
      if (bad) break;
      char f[64];
      snprintf(f, sizeof f, "KernelSpecification.ProblemSize[%zu]", i);
      bad = !(s->ps[s->nps++] = compile_field(s, f, e, 0, err));
    }
  }
  if (bad || parse_xyz(s, json_object_get(ks, "LocalSize"), "LocalSize", s->local, err) ||
      parse_xyz(s, json_object_get(ks, "GlobalSize"), "GlobalSize", s->global, err) ||
      parse_griddiv(s, ks, err) || get_str(ks, "GlobalSizeType", "KernelSpecification", 0, &gst, err)) {
    free(t1dir);
    goto out;
  }
  s->gs_blocks = s->lang == UK_CUDA;
  if (gst) {
    if (strcmp(gst, "CUDA") && strcmp(gst, "OpenCL")) {
      rt_err_set(err, "KernelSpecification.GlobalSizeType: expected \"CUDA\" (GlobalSize counts blocks) or "
                 "\"OpenCL\" (work items), got \"%s\"", gst);
      free(t1dir);
      goto out;
    }
    s->gs_blocks = !strcmp(gst, "CUDA");
  }
  json_t *sm = json_object_get(ks, "SharedMemory");
  if (sm && !json_is_null(sm) && !(s->smem = compile_field(s, "KernelSpecification.SharedMemory", sm, 1, err))) {
    free(t1dir);
    goto out;
  }
  /* Arguments */
  json_t *args = json_object_get(ks, "Arguments");
  if (!json_is_array(args) || !json_array_size(args) || json_array_size(args) > KN_MAXBUF) {
    rt_err_set(err, "KernelSpecification.Arguments: %s", !args ? "missing field"
               : !json_is_array(args) ? "expected a list of arguments"
               : json_array_size(args) ? "more than 16 arguments (rooftune's limit, KN_MAXBUF)"
               : "an empty list (a kernel rooftune can verify has an output)");
    free(t1dir);
    goto out;
  }
  size_t i;
  json_t *a;
  json_array_foreach(args, i, a) {
    if (parse_arg(s, (int)i, a, t1dir, err)) {
      free(t1dir);
      goto out;
    }
    for (int b = 0; b < (int)i; b++)
      if (!strcmp(s->arg[b].name, s->arg[i].name)) {
        rt_err_set(err, "KernelSpecification.Arguments[%zu].Name: \"%s\" is Arguments[%d]'s name too", i,
                   s->arg[i].name, b);
        free(t1dir);
        goto out;
      }
    s->narg++;
  }
  bad = parse_refargs(s, json_object_get(ks, "ReferenceArguments"), t1dir, err);
  free(t1dir);
  if (bad) goto out;
  int nout = 0;
  for (int k = 0; k < s->narg; k++)
    if (s->arg[k].out && !nout++) snprintf(s->dtype, sizeof s->dtype, "%s", kn_elem_name(s->arg[k].elem));
  if (!nout) {
    rt_err_set(err, "KernelSpecification.Arguments: no argument has Output 1 (rooftune verifies every "
               "configuration's outputs)");
    goto out;
  }
  /* the rooftune block */
  json_t *fl = rb ? json_object_get(rb, "Flops") : NULL, *by = rb ? json_object_get(rb, "Bytes") : NULL;
  if ((fl && !(s->flops = compile_field(s, "rooftune.Flops", fl, 1, err))) ||
      (by && !(s->bytes = compile_field(s, "rooftune.Bytes", by, 1, err))) ||
      parse_refconfig(s, rb ? json_object_get(rb, "ReferenceConfig") : NULL, sp, err))
    goto out;
  /* invariant 7: evaluate what this workload needs */
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  kn_buf b[KN_MAXBUF];
  int *cfg = rt_calloc((size_t)s->np + 1, sizeof *cfg);
  uk_geom g;
  if (uk_buffers(s, &pb, sp, b, err) < 0 || uk_reference_config(s, sp, cfg, err) ||
      uk_geometry(s, &pb, sp, cfg, &g, err)) {
    free(cfg);
    goto out;
  }
  free(cfg);
  for (int k = 0; k < 2; k++)
    if ((k ? s->bytes : s->flops) && isnan(uk_work(s, &pb, sp, k, err))) goto out;
  for (int k = 0; k < s->narg; k++) {
    const uk_arg *ak = &s->arg[k];
    for (int r = 0; r < 2; r++) {
      const char *file = r ? (ak->has_ref && ak->ref_fill == KN_FILL_FILE ? ak->ref_file : NULL)
                           : (ak->fill == KN_FILL_FILE ? ak->file : NULL);
      struct stat st = {0};
      if (!file) continue;
      long long want = (long long)b[k].n * (long long)kn_elem_size(b[k].elem);
      if (stat(file, &st) || (long long)st.st_size != want) {
        char field[96];
        if (r) snprintf(field, sizeof field, "ReferenceArguments (TargetName \"%s\")", ak->name);
        else snprintf(field, sizeof field, "Arguments[%d]", k);
        rt_err_set(err, "KernelSpecification.%s.DataSource: %s holds %lld bytes; Size says %lld elements "
                   "of %s (%lld bytes)", field, file, (long long)st.st_size,
                   (long long)(b[k].n / ak->lanes), ak->type, want);
        goto out;
      }
    }
  }
  rc = 0;
out:
  sp_free(sp);
  return rc;
}

uk_spec *uk_spec_load(const char *path, const char *kernel_dir, const sp_binding *set, int nset,
                      rt_err *err) {
  uk_spec *s = rt_calloc(1, sizeof *s);
  s->atol = 1e-6;
  s->rtol = 1e-5;
  s->arena = sx_arena_new();
  s->vm = sx_vm_new();
  char *abs = realpath(path, NULL);
  rt_err e = {0};
  if (!abs) {
    rt_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    uk_spec_free(s);
    return NULL;
  }
  s->path = rt_strdup(abs);
  free(abs);
  char *kdir = kernel_dir ? realpath(kernel_dir, NULL) : NULL;
  if (kernel_dir && !kdir) {
    rt_err_set(err, "--kernel-dir %s: %s", kernel_dir, strerror(errno));
    uk_spec_free(s);
    return NULL;
  }
  if (!(s->text = read_file(s->path, NULL, &e))) {
    rt_err_set(err, "%s: %s", path, e.msg);
    free(kdir);
    uk_spec_free(s);
    return NULL;
  }
  json_error_t je;
  json_t *root = json_loads(s->text, JSON_REJECT_DUPLICATES, &je);
  int rc = -1;
  if (!root) {
    rt_err_set(&e, "%d:%d: JSON syntax error: %s", je.line, je.column, je.text);
  } else if (!json_is_object(root)) {
    rt_err_set(&e, "expected a JSON object at the top level");
  } else {
    rc = parse(s, root, kdir, set, nset, &e);
    json_t *bn = json_object_get(json_object_get(root, "General"), "BenchmarkName");
    if (!rc && json_is_string(bn) && json_string_length(bn)) {
      s->name = rt_strdup(json_string_value(bn));
    } else if (!rc) {
      const char *base = strrchr(s->path, '/') + 1;
      size_t n = strlen(base);
      if (n > 5 && !strcmp(base + n - 5, ".json")) n -= 5;
      s->name = rt_calloc(1, n + 1);
      memcpy(s->name, base, n);
    }
    if (!rc && (strpbrk(s->name, " \t\n\r") || !*s->name)) {
      rt_err_set(&e, "General.BenchmarkName: \"%s\": a kernel's name has no blanks", s->name);
      rc = -1;
    }
  }
  json_decref(root);
  free(kdir);
  if (rc) {
    /* sp_load's own errors already start with the file's name */
    if (strncmp(e.msg, s->path, strlen(s->path))) rt_err_set(err, "%s: %s", path, e.msg);
    else rt_err_set(err, "%s", e.msg);
    uk_spec_free(s);
    return NULL;
  }
  return s;
}

void uk_spec_free(uk_spec *s) {
  if (!s) return;
  for (int a = 0; a < KN_MAXBUF; a++) {   /* a half-parsed one too */
    uk_arg *g = &s->arg[a];
    free(g->name), free(g->type), free(g->file), free(g->ref_file);
    sx_prog_free(g->size), sx_prog_free(g->fill_expr);
  }
  for (int i = 0; i < UK_MAXPS; i++) sx_prog_free(s->ps[i]);
  for (int d = 0; d < 3; d++) {
    sx_prog_free(s->local[d]), sx_prog_free(s->global[d]);
    for (int i = 0; i < UK_MAXDIV; i++) sx_prog_free(s->div[d][i]);
  }
  sx_prog_free(s->smem), sx_prog_free(s->flops), sx_prog_free(s->bytes);
  for (int p = 0; s->pname && p < s->np; p++) free(s->pname[p]);
  for (int v = 0; s->vname && v < s->nv; v++) free(s->vname[v]);
  for (int r = 0; r < s->nref; r++) free(s->ref_name[r]);
  free(s->ref_name), free(s->ref_val);
  free(s->pname), free(s->vname);
  free(s->path), free(s->text), free(s->name), free(s->kernel_name), free(s->entry);
  free(s->source), free(s->options);
  sx_vm_free(s->vm);
  sx_arena_free(s->arena);
  free(s);
}

const char *uk_spec_backend(const uk_spec *s) { return s->lang == UK_CUDA ? "cuda" : "opencl"; }
const char *uk_spec_default_target(const uk_spec *s) { return s->lang == UK_CUDA ? "cuda:0" : "opencl"; }
const char *uk_spec_language(const uk_spec *s) { return s->lang == UK_CUDA ? "CUDA" : "OpenCL"; }
