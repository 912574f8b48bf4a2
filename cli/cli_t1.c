/*
** cli_t1.c -- the user's own kernel on the command line: --t1 FILE loads
** a T1 file's KernelSpecification (targets/user/uk.h) and registers it, so
** that the command then finds it by name on its target like a built-in
** template; the target defaults from its Language, and a target of
** another backend or a built-in kernel's name is refused.
*/
#include <stdlib.h>
#include <string.h>

#include "../targets/tg.h"
#include "../targets/user/uk.h"
#include "cli.h"

int cli_t1_load(const cli_spec *s, const cli_t1 *t, const char *set, const char **kernel,
                const char **target, int target_given, int check_target) {
  if (!t->file) {
    const char *opt = t->dir ? "--kernel-dir" : t->atol_given ? "--atol" : t->rtol_given ? "--rtol" : NULL;
    return opt ? cli_usage(s, "%s applies to a kernel given with --t1 FILE (a built-in kernel has its own "
                           "files and tolerance)", opt) : 0;
  }
  if (*kernel) return cli_usage(s, "--t1 names the kernel: give --t1 FILE or --kernel K, not both");
  rt_err err = {0};
  sx_arena *arena = sx_arena_new();
  sp_binding *b = NULL;
  int nb = set ? sp_parse_bindings(set, arena, &b, &err) : 0;
  const kn_kernel *k = nb < 0 ? NULL : uk_load(t->file, t->dir, b, nb, &err);
  free(b);
  sx_arena_free(arena);
  if (!k) return cli_fail(s->cmd, "%s", err.msg);
  uk_spec *u = uk_spec_of(k);
  uk_set_tolerance(k, t->atol_given ? t->atol : k->atol, t->rtol_given ? t->rtol : k->rtol);
  *kernel = k->name;
  if (!target_given) *target = uk_spec_default_target(u);
  if (!check_target) return 0;
  tg_target tt;
  int rc = cli_find_target(s, *target, &tt);
  if (rc) return rc;
  if (strcmp(tt.be->name, uk_spec_backend(u))) {
    const tg_backend *be = tg_backend_find(uk_spec_backend(u));
    return cli_fail(s->cmd, "%s: KernelSpecification.Language is %s: kernel %s runs on %s, not on target %s",
                    t->file, uk_spec_language(u), k->name, be ? be->syntax : "?", tt.name);
  }
  if (tg_kernel(&tt, k->name) != k)
    return cli_fail(s->cmd, "%s: General.BenchmarkName: %s is the name of a built-in kernel of %s; give "
                    "your kernel another name", t->file, k->name, tt.name);
  return 0;
}
