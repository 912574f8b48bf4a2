/*
** codegen_gemm.c -- a tiny code generator on the reader library: it asks
** rtdb which schedule gemm should use for M, N, K on a target and prints
** a C source whose #defines carry the schedule (one per config field),
** with the kind of match it used. Depends on rtdb and SQLite only:
**
**   cc -O2 -I. examples/codegen_gemm.c db/rtdb.c -lsqlite3 -lpthread -lm -o codegen_gemm
**   ./codegen_gemm tuned.db host 1024 1024 1024 [--tag TAG] > gemm_tuned.c
*/
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <rtdb.h>

static const char *const match_names[] = {"?", "exact", "nearest", "default"};

/* Print "#define GEMM_NAME value" for every field of a flat JSON object
** (rtdb hands back rooftune's canonical config JSON). */
static void defines(const char *p) {
  while (*p && *p != '"') p++;
  while (*p == '"') {
    const char *name = ++p;
    while (*p && *p != '"') p++;
    printf("#define GEMM_");
    for (const char *q = name; q < p; q++) putchar(toupper((unsigned char)*q));
    p += *p ? 1 : 0;
    while (*p == ':' || *p == ' ') p++;
    const char *v = p;
    if (*p == '"') for (p++; *p && *p != '"'; p += p[0] == '\\' && p[1] ? 2 : 1) {}
    while (*p && *p != ',' && *p != '}') p++;
    printf(" %.*s\n", (int)(p - v), v);
    while (*p && *p != '"') p++;
  }
}

int main(int argc, char **argv) {
  const char *tag = NULL;
  if (argc == 8 && !strcmp(argv[6], "--tag")) tag = argv[7];
  else if (argc != 6) {
    fprintf(stderr, "usage: %s DB TARGET M N K [--tag TAG]\n", argv[0]);
    return 2;
  }
  rtdb *db;
  int rc = rtdb_open(argv[1], &db);
  if (rc) {
    fprintf(stderr, "%s: %s\n", argv[1], rtdb_errstr(rc));
    return 1;
  }
  char vars[256];
  snprintf(vars, sizeof vars, "M=%s,N=%s,K=%s", argv[3], argv[4], argv[5]);
  rtdb_result r;
  rc = rtdb_lookup(db, argv[2], "gemm", vars, tag, &r);
  if (rc) {
    fprintf(stderr, "lookup %s: %s: %s\n", vars, rtdb_errstr(rc), rtdb_errmsg(db));
    rtdb_close(db);
    return 1;
  }
  printf("/* gemm for %s on %s: %s match", vars, argv[2], match_names[r.match]);
  if (r.match != RTDB_DEFAULT) printf(" (workload \"%s\", pin version %d)", r.workload, r.pin_version);
  printf(" */\n#define GEMM_MATCH \"%s\"\n", match_names[r.match]);
  defines(r.config);
  printf("\nvoid gemm_tuned(int M, int N, int K, const float *A, const float *B, float *C);\n");
  rtdb_close(db);
  return 0;
}
