/*
** test_sx.c -- tests of the space-expression language (search_spaces/sx.h):
** the golden cases of tests/data/expr_cases.tsv (made from real Python by
** tests/gen_expr_cases.py), compile errors and their columns, names bound
** to slots and constants and the slots a program reports, agreement of the
** slot, constant and stack forms of every operator, runtime messages, VM
** reuse, copies that outlive evaluations, repr, and malformed input.
** Run from the repository root.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <gsl/gsl_rng.h>

#include "search_spaces/sx.h"
#include "search_spaces/sx_int.h"   /* white-box: sx_prog.int_ok; sx__run: the step budget */

#define TSV "tests/data/expr_cases.tsv"

/* Compile src and evaluate it with slots. Returns 0 and the repr in buf,
** 1 when it raised (message in buf), -1 when it did not compile. */
static int run_src(sx_vm *vm, const char *src, const sx_name *names, int nnames,
                   const sx_value *slots, char *buf, size_t cap) {
  rt_err err = {0};
  sx_prog *p = sx_compile(src, names, nnames, &err);
  if (!p) {
    snprintf(buf, cap, "%s", err.msg);
    return -1;
  }
  sx_value v;
  int rc = sx_eval(vm, p, slots, &v, &err);
  if (rc == 0) sx_repr(&v, buf, cap);
  else snprintf(buf, cap, "%s", err.msg);
  sx_prog_free(p);
  return rc ? 1 : 0;
}

/* The value of a constant expression, copied into a. */
static sx_value value_of(sx_arena *a, const char *src) {
  sx_vm *vm = sx_vm_new();
  rt_err err = {0};
  sx_prog *p = sx_compile(src, NULL, 0, &err);
  assert_non_null(p);
  sx_value v;
  assert_int_equal(sx_eval(vm, p, NULL, &v, &err), 0);
  sx_value r = sx_value_copy(a, &v);
  sx_prog_free(p);
  sx_vm_free(vm);
  return r;
}

/* ---- golden cases --------------------------------------------------- */

static void test_golden_cases(void **state) {
  (void)state;
  FILE *f = fopen(TSV, "r");
  assert_non_null(f);
  sx_vm *vm = sx_vm_new();
  char line[4096], got[4096];
  int n = 0, bad = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    char *tab = strchr(line, '\t');
    assert_non_null(tab);
    *tab = 0;
    const char *src = line, *want = tab + 1;
    n++;
    rt_err err = {0};
    sx_prog *p = sx_compile(src, NULL, 0, &err);
    if (!p) {
      printf("  %s: compile error %s\n", src, err.msg);
      bad++;
      continue;
    }
    sx_value v;
    int rc = sx_eval(vm, p, NULL, &v, &err);
    if (!strcmp(want, "RAISES")) {
      if (rc != -1 || !err.msg[0] || sx_eval_bool(vm, p, NULL) != 0) {
        printf("  %s: expected RAISES, got rc=%d\n", src, rc);
        bad++;
      }
    } else if (rc != 0) {
      printf("  %s: expected %s, raised %s\n", src, want, err.msg);
      bad++;
    } else {
      sx_repr(&v, got, sizeof got);
      int truth = sx_truth(&v);
      if (strcmp(got, want) || sx_eval_bool(vm, p, NULL) != truth) {
        printf("  %s: expected %s, got %s\n", src, want, got);
        bad++;
      }
    }
    sx_prog_free(p);
  }
  fclose(f);
  sx_vm_free(vm);
  printf("  %d golden cases, %d failed\n", n, bad);
  assert_int_equal(bad, 0);
  assert_true(n >= 300);
}

/* ---- compile errors ------------------------------------------------- */

static void test_compile_errors(void **state) {
  (void)state;
  static const struct { const char *src; int col; const char *msg; } cases[] = {
    {"1 +", 4, "unexpected end of expression"},
    {"", 1, "unexpected end of expression"},
    {"(1, 2", 1, "'(' was never closed"},
    {"x + [1, 2", 5, "'[' was never closed"},
    {"len(1", 4, "'(' was never closed"},
    {"foo + 1", 1, "name 'foo' is not defined"},
    {"1 + foo", 5, "name 'foo' is not defined"},
    {"1 +* 2", 4, "unexpected '*'"},
    {"1 2", 3, "unexpected '2'"},
    {"(1))", 4, "unexpected ')'"},
    {"'abc", 1, "unterminated string literal"},
    {"1 + \"abc", 5, "unterminated string literal"},
    {"'''abc''", 1, "unterminated triple-quoted string literal"},
    {"range", 1, "builtin 'range' can only be called"},
    {"2 * len", 5, "builtin 'len' can only be called"},
    {"len(1, 2)", 1, "len() takes exactly 1 argument(s) (2 given)"},
    {"range()", 1, "range() takes 1 to 3 argument(s) (0 given)"},
    {"min()", 1, "min() takes at least 1 argument(s) (0 given)"},
    {"x(1)", 1, "'x' is not callable"},
    {"[i(1) for i in x]", 2, "'i' is not callable"},
    {"nope(1)", 1, "name 'nope' is not defined"},
    {"x[0](1)", 5, "only builtin functions can be called"},
    {"'a'.upper()", 4, "attribute access is not supported"},
    {"x[1:2]", 4, "slices are not supported"},
    {"x is None", 3, "'is' is not supported"},
    {"x = 1", 3, "unexpected '='"},
    {"0x", 1, "invalid hexadecimal literal"},
    {"0b102", 1, "invalid binary literal"},
    {"012", 1, "leading zeros in decimal integer literals"},
    {"1_", 1, "invalid decimal literal"},
    {"1__0", 1, "invalid decimal literal"},
    {"1j", 1, "complex literals are not supported"},
    {"1 $ 2", 3, "invalid character '$'"},
    {"1 + \x80", 5, "invalid character (byte 0x80)"},
    {"'\\x4'", 2, "truncated \\x escape"},
    {"'\\U00110000'", 2, "illegal Unicode character"},
    {"f'x'", 1, "f-string literals are not supported"},
    {"(i for i in x)", 4, "generator expressions are only supported"},
    {"len(i for i in x)", 5, "a generator expression cannot be the argument of len()"},
    {"[i for (i) in x]", 8, "unexpected '('"},
    {"[i for i, j in x]", 9, "only a single name can be a comprehension variable"},
    {"1 if 2", 7, "unexpected end of expression"},
    {"1 if 2 else", 12, "unexpected end of expression"},
    {"[i for i in x if]", 17, "unexpected ']'"},
    {"not", 4, "unexpected end of expression"},
  };
  const sx_name names[] = {{"x", 0, {0}}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    rt_err err = {0};
    sx_prog *p = sx_compile(cases[i].src, names, 1, &err);
    if (p || err.col != cases[i].col || err.line != 1 || !strstr(err.msg, cases[i].msg))
      printf("  %s: col %d, %s\n", cases[i].src, err.col, err.msg);
    assert_null(p);
    assert_int_equal(err.line, 1);
    assert_int_equal(err.col, cases[i].col);
    assert_non_null(strstr(err.msg, cases[i].msg));
  }
}

/* Nesting limits turn deep input into errors, never into a stack overflow. */
static void test_deep_nesting(void **state) {
  (void)state;
  enum { N = 20000 };
  char *src = malloc(3 * N + 8);
  const char *reps[] = {"(", "-", "not ", "[", "x if x else "};
  for (size_t r = 0; r < sizeof reps / sizeof reps[0]; r++) {
    size_t len = 0;
    for (int i = 0; i < N; i++) {
      memcpy(src + len, reps[r], strlen(reps[r]));
      len += strlen(reps[r]);
      if (len > 2 * N) break;
    }
    strcpy(src + len, "1");
    rt_err err = {0};
    assert_null(sx_compile(src, NULL, 0, &err));
    assert_non_null(strstr(err.msg, "nested too deeply"));
  }
  /* a long flat chain nests in the AST, not in the parser */
  size_t len = 1;
  src[0] = '1';
  for (int i = 0; i < 5000; i++) {
    memcpy(src + len, "+1", 2);
    len += 2;
  }
  src[len] = 0;
  rt_err err = {0};
  assert_null(sx_compile(src, NULL, 0, &err));
  assert_non_null(strstr(err.msg, "nested too deeply"));
  /* ...but 500 terms are fine */
  src[1 + 2 * 499] = 0;
  sx_prog *p = sx_compile(src, NULL, 0, &err);
  assert_non_null(p);
  sx_vm *vm = sx_vm_new();
  sx_value v;
  assert_int_equal(sx_eval(vm, p, NULL, &v, &err), 0);
  assert_int_equal(v.u.i, 500);
  sx_vm_free(vm);
  sx_prog_free(p);
  free(src);
}

/* ---- names, slots and constants ------------------------------------ */

static void test_slots_and_constants(void **state) {
  (void)state;
  sx_arena *tmp = sx_arena_new();
  sx_name names[] = {
    {"x", 0, {0}}, {"N", -1, sx_int(1024)}, {"y", 2, {0}},
    {"s", -1, {0}}, {"L", -1, {0}}, {"z", 1, {0}}};
  names[3].value = value_of(tmp, "'abc'");
  names[4].value = value_of(tmp, "[1, 2]");
  static const struct {
    const char *src;
    int64_t x, y;
    const char *want;
    int nslots, slots[2];
  } cases[] = {
    {"x * N", 3, 0, "3072", 1, {0}},
    {"N * 2", 0, 0, "2048", 0, {0}},
    {"y + x + y", 1, 10, "21", 2, {0, 2}},
    {"y - x", 1, 10, "9", 2, {0, 2}},
    {"[x for x in range(3)]", 9, 9, "[0, 1, 2]", 0, {0}},
    {"[x + i for i in range(y)]", 5, 3, "[5, 6, 7]", 2, {0, 2}},
    {"[i * j for i in range(y) for j in range(i)]", 0, 4, "[0, 0, 2, 0, 3, 6]", 1, {2}},
    {"N < 0 and x > 1", 5, 0, "False", 0, {0}},
    {"N > 0 or x", 5, 0, "True", 0, {0}},
    {"x if N > 0 else y", 7, 8, "7", 1, {0}},
    {"x if N < 0 else y", 7, 8, "8", 1, {2}},
    {"s + 'd'", 0, 0, "'abcd'", 0, {0}},
    {"L * 2", 0, 0, "[1, 2, 1, 2]", 0, {0}},
    {"x in L", 2, 0, "True", 1, {0}},
    {"len(s) + x", 1, 0, "4", 1, {0}},
    {"[N for N in range(2)]", 0, 0, "[0, 1]", 0, {0}},
    {"max(x, y) // N", 2048, 4096, "4", 2, {0, 2}},
    {"32 <= x * y <= N", 8, 8, "True", 2, {0, 2}},
    {"32 <= x * y <= N", 64, 64, "False", 2, {0, 2}},
    {"1 < x < 1 / 0", 0, 0, "False", 1, {0}},
    {"x // y", 7, 0, "ZeroDivisionError: integer division or modulo by zero", 2, {0, 2}},
  };
  sx_vm *vm = sx_vm_new();
  char buf[sizeof(((rt_err *)0)->msg)];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    rt_err err = {0};
    sx_prog *p = sx_compile(cases[i].src, names, 6, &err);
    assert_non_null(p);
    assert_string_equal(sx_prog_text(p), cases[i].src);
    int n = -1;
    const int *sl = sx_prog_slots(p, &n);
    if (n != cases[i].nslots) printf("  %s: %d slots\n", cases[i].src, n);
    assert_int_equal(n, cases[i].nslots);
    for (int k = 0; k < n; k++) assert_int_equal(sl[k], cases[i].slots[k]);
    sx_value slots[3] = {sx_int(cases[i].x), sx_int(-1), sx_int(cases[i].y)};
    sx_value v;
    if (sx_eval(vm, p, slots, &v, &err) == 0) sx_repr(&v, buf, sizeof buf);
    else snprintf(buf, sizeof buf, "%s", err.msg);
    if (strcmp(buf, cases[i].want)) printf("  %s: %s\n", cases[i].src, buf);
    assert_string_equal(buf, cases[i].want);
    sx_prog_free(p);
  }
  /* Python 3 scoping: the first iterable is read outside the comprehension. */
  sx_value slots[3] = {value_of(tmp, "[[1, 2], [3]]"), sx_int(0), sx_int(0)};
  assert_int_equal(run_src(vm, "[x for x in x for x in x]", names, 6, slots, buf, sizeof buf), 0);
  assert_string_equal(buf, "[1, 2, 3]");
  /* sx_compile copied the constants: they survive their arena. */
  sx_prog *p = sx_compile("s * 2 + 'x' + str_c", (sx_name[]){names[3], {"str_c", -1, names[3].value}}, 2, NULL);
  assert_non_null(p);
  sx_arena_free(tmp);
  sx_value v;
  assert_int_equal(sx_eval(vm, p, NULL, &v, NULL), 0);
  sx_repr(&v, buf, sizeof buf);
  assert_string_equal(buf, "'abcabcxabc'");
  sx_prog_free(p);
  sx_vm_free(vm);
}

/* ---- the three operand forms of every operator agree --------------- */

static void test_operand_forms_agree(void **state) {
  (void)state;
  static const char *const vals[] = {"-7", "7", "2", "-2", "0", "3.5", "-0.0", "True",
                                     "'ab'", "[1, 2]", "(1,)", "None", "62"};
  static const char *const ops[] = {"+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&",
                                    "|", "^", "<", "<=", ">", ">=", "==", "!=", "in",
                                    "not in"};
  enum { NV = sizeof vals / sizeof vals[0] };
  sx_arena *a = sx_arena_new();
  sx_value v[NV];
  for (int i = 0; i < NV; i++) v[i] = value_of(a, vals[i]);
  sx_name slot_names[] = {{"x", 0, {0}}, {"y", 1, {0}}};
  sx_vm *vm = sx_vm_new();
  int checked = 0;
  for (int i = 0; i < NV; i++)
    for (int j = 0; j < NV; j++)
      for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        char src[4][128], res[4][256];
        int rc[4];
        snprintf(src[0], sizeof src[0], "(%s) %s (%s)", vals[i], ops[o], vals[j]);
        snprintf(src[1], sizeof src[1], "x %s y", ops[o]);         /* slot operand */
        snprintf(src[2], sizeof src[2], "x %s [y][0]", ops[o]);    /* stack operand */
        snprintf(src[3], sizeof src[3], "x %s (%s)", ops[o], vals[j]);  /* constant */
        sx_name const_names[] = {{"x", -1, v[i]}, {"y", -1, v[j]}};
        sx_value slots[2] = {v[i], v[j]};
        rc[0] = run_src(vm, src[0], NULL, 0, NULL, res[0], sizeof res[0]);
        rc[1] = run_src(vm, src[1], slot_names, 2, slots, res[1], sizeof res[1]);
        rc[2] = run_src(vm, src[2], slot_names, 2, slots, res[2], sizeof res[2]);
        rc[3] = run_src(vm, src[1], const_names, 2, NULL, res[3], sizeof res[3]);
        for (int k = 1; k < 4; k++) {
          if (rc[k] != rc[0] || strcmp(res[k], res[0]))
            printf("  %s: %s (%d) vs %s: %s (%d)\n", src[0], res[0], rc[0], src[k], res[k], rc[k]);
          assert_int_equal(rc[k], rc[0]);
          assert_string_equal(res[k], res[0]);
        }
        /* a constant right operand in a slot program */
        sx_value sl[2] = {v[i], v[j]};
        char r4[256];
        assert_int_equal(run_src(vm, src[3], slot_names, 2, sl, r4, sizeof r4), rc[0]);
        assert_string_equal(r4, res[0]);
        checked++;
      }
  assert_int_equal(checked, NV * NV * 20);
  sx_vm_free(vm);
  sx_arena_free(a);
}

/* ---- runtime errors ------------------------------------------------- */

static void test_runtime_messages(void **state) {
  (void)state;
  static const struct { const char *src, *msg; } cases[] = {
    {"1 // 0", "ZeroDivisionError: integer division or modulo by zero"},
    {"1 % 0", "ZeroDivisionError: integer division or modulo by zero"},
    {"1 / 0", "ZeroDivisionError: division by zero"},
    {"1.0 / 0", "ZeroDivisionError: float division by zero"},
    {"1.0 // 0", "ZeroDivisionError: float floor division by zero"},
    {"0 ** -1", "ZeroDivisionError: 0.0 cannot be raised to a negative power"},
    {"1 + 'a'", "TypeError: unsupported operand type(s) for +: 'int' and 'str'"},
    {"'a' + 1", "TypeError: can only concatenate str (not \"int\") to str"},
    {"2 ** 'a'", "TypeError: unsupported operand type(s) for ** or pow(): 'int' and 'str'"},
    {"[1] * 1.5", "TypeError: can't multiply sequence by non-int of type 'float'"},
    {"-'a'", "TypeError: bad operand type for unary -: 'str'"},
    {"1 < 'a'", "TypeError: '<' not supported between instances of 'int' and 'str'"},
    {"[1, 'a'] >= [1, 2]", "TypeError: '>=' not supported between instances of 'str' and 'int'"},
    {"1 in 'a'", "TypeError: 'in <string>' requires string as left operand, not int"},
    {"1 in 2", "TypeError: argument of type 'int' is not iterable"},
    {"[1][5]", "IndexError: list index out of range"},
    {"'a'[1.0]", "TypeError: string indices must be integers, not 'float'"},
    {"5[0]", "TypeError: 'int' object is not subscriptable"},
    {"2 ** 63", "OverflowError: integer result does not fit in 64 bits"},
    {"9223372036854775808", "OverflowError: int literal does not fit in 64 bits"},
    {"10.0 ** 400", "OverflowError: (34, 'Numerical result out of range')"},
    {"(-8) ** 0.5", "ValueError: negative number cannot be raised to a fractional power"},
    {"1 << -1", "ValueError: negative shift count"},
    {"range(1, 10, 0)", "ValueError: range() arg 3 must not be zero"},
    {"range(1.5)", "TypeError: 'float' object cannot be interpreted as an integer"},
    {"len(range(10000001))", "MemoryError"},
    {"'ab' * 10000000", "MemoryError"},
    /* weights (sx.h invariant 4): shared sublists and strings count each time */
    {"len([[0] * 1000] * 100000)", "MemoryError: sequences are limited to 10000000 elements (nested"},
    {"[['x' * 1000000] * 2] * 5", "MemoryError"},
    {"[[[[[[[[[[[[[[[[[[[[[[[[0] * 2] * 2] * 2] * 2] * 2] * 2] * 2] * 2] * 2] * 2] * 2] * 2]"
     " * 2] * 2] * 2] * 2] * 2] * 2] * 2] * 2] * 2] * 2] * 2] * 2", "MemoryError"},
    {"len(5)", "TypeError: object of type 'int' has no len()"},
    {"list(5)", "TypeError: 'int' object is not iterable"},
    {"[i for i in 5]", "TypeError: 'int' object is not iterable"},
    {"min([])", "ValueError: min() arg is an empty sequence"},
    {"int('1.5')", "ValueError: invalid literal for int() with base 10: '1.5'"},
    {"int(float('nan'))", "ValueError: cannot convert float NaN to integer"},
    {"float('x')", "ValueError: could not convert string to float: 'x'"},
    {"abs('a')", "TypeError: bad operand type for abs(): 'str'"},
  };
  sx_vm *vm = sx_vm_new();
  char buf[512];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int rc = run_src(vm, cases[i].src, NULL, 0, NULL, buf, sizeof buf);
    if (rc != 1 || strncmp(buf, cases[i].msg, strlen(cases[i].msg)))
      printf("  %s: rc %d, %s\n", cases[i].src, rc, buf);
    assert_int_equal(rc, 1);
    assert_memory_equal(buf, cases[i].msg, strlen(cases[i].msg));
  }
  sx_vm_free(vm);
}

/* The largest allowed range works; constant work beyond the fold budget
** is left to run time and still gives the right answer. */
static void test_big_sequences(void **state) {
  (void)state;
  sx_vm *vm = sx_vm_new();
  char buf[64];
  assert_int_equal(run_src(vm, "len(range(10000000))", NULL, 0, NULL, buf, sizeof buf), 0);
  assert_string_equal(buf, "10000000");
  assert_int_equal(run_src(vm, "sum([i % 3 for i in range(2000000)])", NULL, 0, NULL, buf, sizeof buf), 0);
  assert_string_equal(buf, "1999999");
  assert_int_equal(run_src(vm, "len('ab' * 5000000)", NULL, 0, NULL, buf, sizeof buf), 0);
  assert_string_equal(buf, "10000000");
  /* nested: up to the weight limit, shared sublists work as in Python */
  assert_int_equal(run_src(vm, "sum(len(x) for x in [[0] * 1000] * 9000)", NULL, 0, NULL, buf,
                           sizeof buf), 0);
  assert_string_equal(buf, "9000000");
  assert_int_equal(run_src(vm, "[[0] * 1000] * 1000 == [[0] * 1000] * 1000", NULL, 0, NULL, buf,
                           sizeof buf), 0);
  assert_string_equal(buf, "True");
  sx_vm_free(vm);
}

/* The least budget with which sx__run evaluates src (slot a = 7). */
static int64_t least_budget(sx_vm *vm, const char *src) {
  sx_name names[] = {{"a", 0, {0}}};
  sx_value slots[] = {sx_int(7)}, v;
  rt_err err = {0};
  sx_prog *p = sx_compile(src, names, 1, &err);
  assert_non_null(p);
  int64_t lo = 0, hi = 1 << 24;   /* sx__run fails with lo, works with hi */
  assert_int_equal(sx__run(vm, p, slots, &v, &err, hi), 0);
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (sx__run(vm, p, slots, &v, &err, mid) == 0) hi = mid;
    else lo = mid;
  }
  sx_prog_free(p);
  return hi;
}

/* The budget of sx__run pays for walks too, so it bounds the work: ==
** and `in` over 10^5 elements cost 10^5 beyond making the lists, and a
** list of lists pays for its nested weight when it is made. */
static void test_budget(void **state) {
  (void)state;
  sx_vm *vm = sx_vm_new();
  assert_true(least_budget(vm, "[a] * 100000 == [a] * 100000") -
                  least_budget(vm, "len([a] * 100000) + len([a] * 100000)") >= 100000);
  assert_true(least_budget(vm, "a in [a + 1] * 100000") -
                  least_budget(vm, "len([a + 1] * 100000)") >= 100000);
  assert_true(least_budget(vm, "len([[a] * 1000] * 100)") >= 100 * 1000);
  sx_vm_free(vm);
}

/* ---- VM reuse and copies -------------------------------------------- */

static void test_vm_reuse(void **state) {
  (void)state;
  const sx_name names[] = {{"x", 0, {0}}, {"y", 1, {0}}, {"s", 2, {0}}};
  rt_err err = {0};
  sx_prog *cond = sx_compile("x * y >= 32 and x % 3 != 1", names, 3, &err);
  sx_prog *list = sx_compile("[i * x for i in range(y)]", names, 3, &err);
  sx_prog *str = sx_compile("s * y + 'z'", names, 3, &err);
  assert_non_null(cond);
  assert_non_null(list);
  assert_non_null(str);
  sx_arena *a = sx_arena_new();
  sx_value s = value_of(a, "'ab'");
  sx_vm *vm = sx_vm_new();
  for (int64_t i = 0; i < 20000; i++) {
    int64_t x = i % 37 - 18, y = i % 11;
    sx_value slots[3] = {sx_int(x), sx_int(y), s}, v;
    int64_t m = ((x % 3) + 3) % 3;
    assert_int_equal(sx_eval_bool(vm, cond, slots), x * y >= 32 && m != 1);
    assert_int_equal(sx_eval(vm, list, slots, &v, &err), 0);
    assert_int_equal(v.t, SX_LIST);
    assert_int_equal(v.u.l->n, y);
    for (int64_t k = 0; k < y; k++) assert_int_equal(v.u.l->v[k].u.i, k * x);
    assert_int_equal(sx_eval(vm, str, slots, &v, &err), 0);
    assert_int_equal(v.u.s->len, 2 * y + 1);
    assert_int_equal(v.u.s->s[2 * y], 'z');
  }
  sx_vm_free(vm);
  sx_arena_free(a);
  sx_prog_free(cond);
  sx_prog_free(list);
  sx_prog_free(str);
}

static void test_value_copy(void **state) {
  (void)state;
  const sx_name names[] = {{"x", 0, {0}}};
  sx_prog *p = sx_compile("[x, 'abc' * x, (x, [x]), x / 2]", names, 1, NULL);
  sx_prog *churn = sx_compile("[[i, 'q' * i] for i in range(x * 20)]", names, 1, NULL);
  assert_non_null(p);
  assert_non_null(churn);
  sx_vm *vm = sx_vm_new();
  sx_arena *keep = sx_arena_new();
  sx_value slots[1] = {sx_int(3)}, v, kept[2];
  assert_int_equal(sx_eval(vm, p, slots, &v, NULL), 0);
  kept[0] = sx_value_copy(keep, &v);
  slots[0] = sx_int(2);
  assert_int_equal(sx_eval(vm, p, slots, &v, NULL), 0);
  kept[1] = sx_value_copy(keep, &v);
  for (int i = 0; i < 50; i++) {
    slots[0] = sx_int(i);
    assert_int_equal(sx_eval(vm, churn, slots, &v, NULL), 0);
  }
  char buf[256];
  sx_repr(&kept[0], buf, sizeof buf);
  assert_string_equal(buf, "[3, 'abcabcabc', (3, [3]), 1.5]");
  sx_repr(&kept[1], buf, sizeof buf);
  assert_string_equal(buf, "[2, 'abcabc', (2, [2]), 1.0]");
  sx_arena_free(keep);
  sx_vm_free(vm);
  sx_prog_free(p);
  sx_prog_free(churn);
}

static void test_eval_bool(void **state) {
  (void)state;
  const sx_name names[] = {{"x", 0, {0}}};
  static const struct { const char *src; int64_t x; int want; } cases[] = {
    {"x > 3", 5, 1}, {"x > 3", 2, 0}, {"1 / x", 0, 0}, {"1 / x", 2, 1},
    {"[]", 0, 0}, {"[x]", 0, 1}, {"x and 'a'", 1, 1}, {"x or ''", 0, 0},
    {"None", 0, 0}, {"0.0 + x", 0, 0}, {"x < 'a'", 1, 0}, {"not x", 0, 1},
  };
  sx_vm *vm = sx_vm_new();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    sx_prog *p = sx_compile(cases[i].src, names, 1, NULL);
    assert_non_null(p);
    sx_value slots[1] = {sx_int(cases[i].x)};
    assert_int_equal(sx_eval_bool(vm, p, slots), cases[i].want);
    sx_prog_free(p);
  }
  sx_vm_free(vm);
}

/* ---- the int fast path of sx_eval_bool ---------------------------- */

/* A random expression over x, y, z and int/bool constants, from the
** operators the int fast path runs and a few it does not (/, **, in). */
static void random_expr(gsl_rng *rng, int depth, char *out, size_t cap) {
  static const char *const leaves[] = {"x", "y", "z", "0", "1", "-1", "2", "3", "7", "True", "False",
                                       "9223372036854775807", "4611686018427387904", "3037000500"};
  static const char *const bin[] = {"+", "-", "*", "//", "%", "<", "<=", ">", ">=", "==", "!=",
                                    "and", "or", "+", "*", "%", "//", "/", "**", "in"};
  unsigned long r = gsl_rng_uniform_int(rng, 10);
  if (depth == 0 || r < 3) {
    snprintf(out, cap, "%s", leaves[gsl_rng_uniform_int(rng, sizeof leaves / sizeof *leaves)]);
    return;
  }
  char a[512], b[512], c[512];
  random_expr(rng, depth - 1, a, sizeof a);
  random_expr(rng, depth - 1, b, sizeof b);
  const char *op = bin[gsl_rng_uniform_int(rng, sizeof bin / sizeof *bin)];
  if (r == 3) snprintf(out, cap, "not (%s)", a);
  else if (r == 4) snprintf(out, cap, "-(%s)", a);
  else if (r == 5) {
    random_expr(rng, depth - 1, c, sizeof c);
    snprintf(out, cap, "(%s) if (%s) else (%s)", a, b, c);
  } else if (r == 6) {
    random_expr(rng, depth - 1, c, sizeof c);
    snprintf(out, cap, "(%s) < (%s) <= (%s)", a, b, c);   /* chained: CMPKEEP */
  } else if (!strcmp(op, "in")) {
    snprintf(out, cap, "(%s) in [%s]", a, b);
  } else {
    snprintf(out, cap, "(%s) %s (%s)", a, op, b);
  }
}

/* sx_eval_bool takes an int-only path for programs of int arithmetic and
** comparisons (and falls back on the full VM for overflow, division by a
** non-positive number, non-int slots): on random expressions and values,
** extremes included, it agrees with the truth of sx_eval's result (false
** where sx_eval raises), and it is taken where it applies. */
static void test_int_fast_path(void **state) {
  (void)state;
  const sx_name names[] = {{"x", 0, {0}}, {"y", 1, {0}}, {"z", 2, {0}}};
  static const int64_t ints[] = {0, 1, -1, 2, -2, 3, 7, -7, 1000, 3037000499, 3037000500,
                                 INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1};
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 15);
  sx_vm *vm = sx_vm_new();
  int fast = 0, cases = 0;
  for (int t = 0; t < 3000; t++) {
    char src[2048];
    random_expr(rng, 4, src, sizeof src);
    sx_prog *p = sx_compile(src, names, 3, NULL);
    assert_non_null(p);
    fast += p->int_ok;
    for (int k = 0; k < 12; k++) {
      sx_value slots[3];
      for (int i = 0; i < 3; i++) {
        unsigned long w = gsl_rng_uniform_int(rng, 20);
        slots[i] = w < 15 ? sx_int(ints[w]) : w < 17 ? sx_bool((int)(w & 1))
                 : w < 19 ? sx_float((double)w - 17.5) : sx_int((int64_t)gsl_rng_get(rng) - 2147483648);
      }
      sx_value v;
      int want = sx_eval(vm, p, slots, &v, NULL) == 0 && sx_truth(&v);
      int got = sx_eval_bool(vm, p, slots);
      if (got != want)
        fail_msg("%s with x=%lld y=%lld z=%lld (types %d %d %d): %d, expected %d", src,
                 (long long)slots[0].u.i, (long long)slots[1].u.i, (long long)slots[2].u.i,
                 slots[0].t, slots[1].t, slots[2].t, got, want);
      cases++;
    }
    sx_prog_free(p);
  }
  assert_true(fast > 1000);   /* most draws are int-only programs */
  assert_true(cases == 36000);
  /* the edges, each with every pair of extreme values */
  static const char *const edges[] = {"-x", "x + y", "x - y", "x * y", "x // y", "x % y",
                                      "-x < 0", "x * y == 0", "x // y <= 0", "x % y >= 0",
                                      "not -x", "~x < 0", "+x and y"};
  for (size_t e = 0; e < sizeof edges / sizeof *edges; e++) {
    sx_prog *p = sx_compile(edges[e], names, 3, NULL);
    assert_non_null(p);
    assert_true(p->int_ok);
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
      for (size_t j = 0; j < sizeof ints / sizeof *ints; j++) {
        sx_value slots[3] = {sx_int(ints[i]), sx_int(ints[j]), sx_int(0)}, v;
        int want = sx_eval(vm, p, slots, &v, NULL) == 0 && sx_truth(&v);
        if (sx_eval_bool(vm, p, slots) != want)
          fail_msg("%s with x=%lld y=%lld: expected %d", edges[e], (long long)ints[i],
                   (long long)ints[j], want);
      }
    sx_prog_free(p);
  }
  /* which programs take the path */
  static const struct { const char *src; int ok; } kinds[] = {
    {"x * y + 3 <= z // 2 and not x % 4", 1}, {"1 < x < y != z", 1}, {"x if y else -z", 1},
    {"x / 2 > 1", 0}, {"x ** 2 > 1", 0}, {"x in [1, 2]", 0}, {"x < 2.5", 0},
    {"1 < x in [1]", 0}, {"x & 1", 0},
  };
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
    sx_prog *p = sx_compile(kinds[i].src, names, 3, NULL);
    assert_non_null(p);
    if (p->int_ok != kinds[i].ok) fail_msg("%s: int_ok %d", kinds[i].src, p->int_ok);
    sx_prog_free(p);
  }
  sx_vm_free(vm);
  gsl_rng_free(rng);
}

/* ---- values --------------------------------------------------------- */

static void test_repr(void **state) {
  (void)state;
  static const struct { double d; const char *want; } floats[] = {
    {0.1, "0.1"}, {1.0, "1.0"}, {1e16, "1e+16"}, {1e15, "1000000000000000.0"},
    {1e-5, "1e-05"}, {1e-4, "0.0001"}, {-0.0, "-0.0"}, {INFINITY, "inf"},
    {-INFINITY, "-inf"}, {NAN, "nan"}, {5e-324, "5e-324"}, {123.456, "123.456"},
    {1.7976931348623157e308, "1.7976931348623157e+308"}, {-2.5e-3, "-0.0025"},
    {0x1p-1017, "7.120236347223045e-307"}, {1.0 / 3, "0.3333333333333333"},
    {123456789012345680.0, "1.2345678901234568e+17"}, {100.0, "100.0"},
  };
  char buf[64];
  for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++) {
    sx_value v = sx_float(floats[i].d);
    assert_int_equal(sx_repr(&v, buf, sizeof buf), strlen(floats[i].want));
    assert_string_equal(buf, floats[i].want);
  }
  sx_arena *a = sx_arena_new();
  static const struct { const char *src, *want; } vals[] = {
    {"\"it's\"", "\"it's\""}, {"'a\\'b\"c'", "'a\\'b\"c'"}, {"'\\t\\n\\r\\x01\\\\'", "'\\t\\n\\r\\x01\\\\'"},
    {"[]", "[]"}, {"()", "()"}, {"(1,)", "(1,)"}, {"[(1, 2), [None, True, False]]", "[(1, 2), [None, True, False]]"},
    {"-9223372036854775807 - 1", "-9223372036854775808"},
  };
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    sx_value v = value_of(a, vals[i].src);
    sx_repr(&v, buf, sizeof buf);
    assert_string_equal(buf, vals[i].want);
  }
  /* snprintf contract */
  sx_value l = value_of(a, "[1, 2, 3]");
  assert_int_equal(sx_repr(&l, buf, 4), 9);
  assert_string_equal(buf, "[1,");
  assert_int_equal(sx_repr(&l, NULL, 0), 9);
  buf[0] = 'q';
  assert_int_equal(sx_repr(&l, buf, 1), 9);
  assert_int_equal(buf[0], 0);
  sx_arena_free(a);
}

/* repr of random doubles reads back exactly */
static void test_float_repr_round_trip(void **state) {
  (void)state;
  uint64_t seed = 88172645463325252u;
  char buf[64];
  for (int i = 0; i < 200000; i++) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    double d;
    memcpy(&d, &seed, sizeof d);
    if (isnan(d)) continue;
    sx_value v = sx_float(d);
    sx_repr(&v, buf, sizeof buf);
    double back = isinf(d) ? d : strtod(buf, NULL);
    assert_memory_equal(&back, &d, sizeof d);
  }
}

static void test_truth_equal_names(void **state) {
  (void)state;
  sx_arena *a = sx_arena_new();
  static const struct { const char *src; int truth; } truths[] = {
    {"0", 0}, {"1", 1}, {"-1", 1}, {"0.0", 0}, {"float('nan')", 1}, {"''", 0},
    {"'a'", 1}, {"[]", 0}, {"[0]", 1}, {"()", 0}, {"None", 0}, {"True", 1}, {"False", 0}};
  for (size_t i = 0; i < sizeof truths / sizeof truths[0]; i++) {
    sx_value v = value_of(a, truths[i].src);
    assert_int_equal(sx_truth(&v), truths[i].truth);
  }
  static const struct { const char *a, *b; int eq; } eqs[] = {
    {"1", "1.0", 1}, {"True", "1", 1}, {"1", "'1'", 0}, {"[1, 2]", "(1, 2)", 0},
    {"[1, [2]]", "[1.0, [2]]", 1}, {"None", "None", 1}, {"None", "0", 0},
    {"9007199254740993", "9007199254740992.0", 0}, {"float('nan')", "float('nan')", 0},
    {"'ab'", "'a' + 'b'", 1}, {"()", "()", 1}, {"[1]", "[1, 2]", 0}};
  for (size_t i = 0; i < sizeof eqs / sizeof eqs[0]; i++) {
    sx_value x = value_of(a, eqs[i].a), y = value_of(a, eqs[i].b);
    assert_int_equal(sx_equal(&x, &y), eqs[i].eq);
    assert_int_equal(sx_equal(&y, &x), eqs[i].eq);
  }
  static const char *const tn[] = {"NoneType", "bool", "int", "float", "str", "list", "tuple"};
  for (int t = SX_NONE; t <= SX_TUPLE; t++) assert_string_equal(sx_type_name((sx_type)t), tn[t]);
  sx_arena_free(a);
}

static void test_arena(void **state) {
  (void)state;
  sx_arena *a = sx_arena_new();
  enum { NB = 600 };
  unsigned char *blocks[NB];
  for (size_t i = 0; i < NB; i++) {   /* sizes 0..~21000, blocks must not overlap */
    blocks[i] = sx_arena_alloc(a, i * 35);
    assert_int_equal((uintptr_t)blocks[i] % 16, 0);
    memset(blocks[i], (int)(i & 0xff), i * 35);
  }
  for (size_t i = 0; i < NB; i++)
    for (size_t k = 0; k < i * 35; k++) assert_int_equal(blocks[i][k], i & 0xff);
  const sx_str *s = sx_arena_str(a, "hello world", 5);
  assert_int_equal(s->len, 5);
  assert_string_equal(s->s, "hello");
  sx_arena_free(a);
  sx_arena_free(NULL);
  sx_vm_free(NULL);
  sx_prog_free(NULL);
}

/* ---- malformed input ------------------------------------------------ */

static uint64_t rng(uint64_t *seed) {
  *seed = *seed * 6364136223846793005u + 1442695040888963407u;
  return *seed >> 33;
}

/* Mutated golden expressions (bytes deleted, inserted, swapped, cut) and
** random bytes: compiling either succeeds or fails with a column inside
** the text; evaluating either succeeds or raises with a message. */
static void test_malformed_input(void **state) {
  (void)state;
  static const char *const frags[] = {
    "(", ")", "[", "]", ",", "+", "*", "**", "-", " not ", " and ", " or ", " if ",
    " else ", " for ", " in ", "'", "\"", "\\", "0x", "_", ":", ".", "//", "%", "0",
    "~", "x", "y", "1e", "9223372036854775807", "#", "\t", "range(", "len(", "<", "=="};
  enum { MAXSRC = 300 };
  static char srcs[700][MAXSRC];
  int nsrc = 0;
  FILE *f = fopen(TSV, "r");
  assert_non_null(f);
  char line[4096];
  while (nsrc < 700 && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\t")] = 0;
    if (strlen(line) < MAXSRC - 40) strcpy(srcs[nsrc++], line);
  }
  fclose(f);
  assert_true(nsrc > 300);
  const sx_name names[] = {{"x", 0, {0}}, {"y", -1, sx_int(2)}};
  sx_value slots[1] = {sx_int(3)};
  sx_vm *vm = sx_vm_new();
  uint64_t seed = 12345;
  int compiled = 0, failed = 0;
  for (int i = 0; i < 40000; i++) {
    char src[MAXSRC];
    size_t len;
    if (i % 8 == 7) {   /* random bytes */
      len = 1 + rng(&seed) % 24;
      for (size_t k = 0; k < len; k++) src[k] = (char)(1 + rng(&seed) % 255);
      src[len] = 0;
    } else {
      strcpy(src, srcs[rng(&seed) % (uint64_t)nsrc]);
      for (int m = 1 + (int)(rng(&seed) % 3); m > 0; m--) {
        len = strlen(src);
        size_t at = len ? rng(&seed) % len : 0;
        const char *fr = frags[rng(&seed) % (sizeof frags / sizeof frags[0])];
        switch (rng(&seed) % 4) {
        case 0: memmove(src + at, src + at + 1, len - at); break;          /* delete */
        case 1:                                                             /* insert */
          memmove(src + at + strlen(fr), src + at, len - at + 1);
          memcpy(src + at, fr, strlen(fr));
          break;
        case 2: if (len > 1) { char t = src[at]; src[at] = src[len - 1]; src[len - 1] = t; } break;
        default: src[at] = 0; break;                                        /* cut */
        }
      }
    }
    len = strlen(src);
    rt_err err = {0};
    sx_prog *p = sx_compile(src, names, 2, &err);
    if (!p) {
      failed++;
      assert_true(err.col >= 1 && err.col <= (int)len + 1);
      assert_int_equal(err.line, 1);
      assert_true(err.msg[0] != 0);
      continue;
    }
    compiled++;
    sx_value v;
    int rc = sx_eval(vm, p, slots, &v, &err);
    assert_true(rc == 0 || (rc == -1 && err.msg[0]));
    int truth = rc == 0 && sx_truth(&v);   /* before the next eval reuses memory */
    assert_int_equal(sx_eval_bool(vm, p, slots), truth);
    sx_prog_free(p);
  }
  printf("  %d compiled, %d compile errors\n", compiled, failed);
  assert_true(compiled > 5000 && failed > 5000);
  sx_vm_free(vm);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_golden_cases),
    cmocka_unit_test(test_compile_errors),
    cmocka_unit_test(test_deep_nesting),
    cmocka_unit_test(test_slots_and_constants),
    cmocka_unit_test(test_operand_forms_agree),
    cmocka_unit_test(test_runtime_messages),
    cmocka_unit_test(test_big_sequences),
    cmocka_unit_test(test_budget),
    cmocka_unit_test(test_vm_reuse),
    cmocka_unit_test(test_value_copy),
    cmocka_unit_test(test_eval_bool),
    cmocka_unit_test(test_repr),
    cmocka_unit_test(test_float_repr_round_trip),
    cmocka_unit_test(test_truth_equal_names),
    cmocka_unit_test(test_arena),
    cmocka_unit_test(test_malformed_input),
    cmocka_unit_test(test_int_fast_path),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
