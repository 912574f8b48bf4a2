/*
** tk_space.h -- for the kernel tests: a kernel's space file loaded with
** "VAR=VAL,..." bindings, failing the test (cmocka's fail_msg) with the
** loader's message when it does not load. Include after cmocka.h and the
** kernel headers.
*/
#ifndef TK_SPACE_H
#define TK_SPACE_H

static sp_space *load_space(const kn_kernel *k, const char *set) {
  rt_err err = {0};
  sx_arena *a = sx_arena_new();
  sp_binding *b = NULL;
  int nb = sp_parse_bindings(set, a, &b, &err);
  sp_space *sp = nb < 0 ? NULL : sp_load_file(k->space, b, nb, &err);
  free(b);
  sx_arena_free(a);
  if (!sp) fail_msg("%s %s: %s", k->name, set, err.msg);
  return sp;
}

#endif
