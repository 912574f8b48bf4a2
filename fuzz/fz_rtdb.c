/*
** fz_rtdb.c -- fuzz target rtdb: the reader library (rtdb.h) and `db
** check` (db_check, which also reads every pin the reader can reach) on
** a database file of any content. Input: the file's bytes (seeds: small
** rooftune databases made by fuzz/seeds.sh, 512-byte pages).
**
** rtdb.h guarantee 2: whatever the file, rtdb_open and rtdb_lookup return
** a code of the enum with a message, never crash. A result is well formed
** (match, NUL-terminated texts, distance and version as the match says);
** the same lookup twice (the memo) answers the same; rtdb_pins visits
** only pins with texts. Guarantee 1: after the reader and db_check (a
** DB_READ open) are done, the file holds exactly the input's bytes.
** Caps: inputs are at most libFuzzer's -max_len; a fixed list of lookups.
*/
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../db/db.h"
#include "../db/rtdb.h"
#include "fz.h"

/* Lookups that reach what the seeds hold: exact, tagged, nearest, string
** variables, defaults, unknown targets, kernels and tags. */
static const char *const lookups[][4] = {
  {"host", "gemm", "M=1024,N=1024,K=1024", NULL},
  {"host", "gemm", "M=1024,N=1024,K=1024", "v1"},
  {"host", "gemm", "M=300,N=3000,K=30", NULL},
  {"host", "gemm", "K=512 M=256,N=2048.0,dtype='f32'", NULL},
  {"host", "gemm", "M=0,N=1,K=1", NULL},
  {"host", "transpose", "M=1000,layout=nchw", NULL},
  {"host", "transpose", "M=1000,layout='nhwc'", "v1"},
  {"host", "conv2d", "N=1,H=56", NULL},
  {"other", "gemm", "M=1,N=1,K=1", NULL},
  {"host", "nodefault", "M=1", NULL},
  {"host", "gemm", "M=1", "nosuchtag"},
  {"gpu", "pnpoly", "", NULL},
};
#define NLOOKUP (sizeof lookups / sizeof *lookups)

static int pin_seen(void *ctx, const char *workload, const char *sizes_json, const char *dtype,
                    const char *config, int pin_version, double time_s) {
  (void)time_s;
  FZ_CHECK(workload && sizes_json && dtype && config, "rtdb_pins: a NULL text");
  FZ_CHECK(pin_version >= 1, "rtdb_pins: version %d", pin_version);
  ++*(int *)ctx;
  return 0;
}

static void read_with_rtdb(const char *path) {
  rtdb *rd = NULL;
  char msg[512];
  int rc = rtdb_open_msg(path, &rd, msg, sizeof msg);
  FZ_CHECK(rc >= RTDB_OK && rc <= RTDB_READONLY, "rtdb_open: code %d", rc);
  if (rc) {
    FZ_CHECK(!rd && msg[0], "rtdb_open failed (%s) without a message, or with a handle",
             rtdb_errstr(rc));
    return;
  }
  for (size_t i = 0; i < NLOOKUP; i++) {
    rtdb_result r, again;
    const char *const *q = lookups[i];
    int rc1 = rtdb_lookup(rd, q[0], q[1], q[2], q[3], &r);
    fz_check_result(rc1, &r, rd, i);
    int rc2 = rtdb_lookup(rd, q[0], q[1], q[2], q[3], &again);
    FZ_CHECK(rc2 == rc1 && (rc1 || fz_same_result(&r, &again)), "lookup %zu: a second answer differs",
             i);
  }
  for (size_t i = 0; i < 3; i++) {
    int n = 0;
    char def[RTDB_MAXCONFIG];
    const char *kernel = i < 2 ? "gemm" : "transpose", *tag = i == 1 ? "v1" : NULL;
    rc = rtdb_pins(rd, "host", kernel, tag, pin_seen, &n, def);
    FZ_CHECK(rc >= RTDB_OK && rc <= RTDB_READONLY, "rtdb_pins: code %d", rc);
    if (!rc) FZ_CHECK(memchr(def, 0, sizeof def), "rtdb_pins: default not NUL-terminated");
  }
  FZ_CHECK(rtdb_close(rd) == RTDB_OK, "rtdb_close failed");
}

static void read_with_db_check(const char *path) {
  rt_err err = {0};
  db *d = db_open(path, DB_READ, &err);
  if (!d) {
    FZ_CHECK(err.msg[0], "db_open failed without a message");
    return;
  }
  rt_str report = {0};
  int rc = db_check(d, &report, &err);
  FZ_CHECK(rc == 0 || rc == 1 || (rc < 0 && err.msg[0]), "db_check returned %d", rc);
  FZ_CHECK(rc != 1 || (report.s && report.s[0]), "db_check found problems but reports none");
  free(report.s);
  db_close(d);
}

FZ_TARGET(rtdb) {
  char path[512], side[540];
  snprintf(path, sizeof path, "%s/input.db", fz_tmpdir());
  fz_write_file(path, data, size);
  read_with_rtdb(path);
  read_with_db_check(path);
  /* guarantee 1 (and db.h's DB_READ): not a byte changed */
  FILE *f = fopen(path, "rb");
  FZ_CHECK(f, "the input file is gone");
  unsigned char *back = rt_malloc(size + 1);
  size_t got = fread(back, 1, size + 1, f);
  fclose(f);
  FZ_CHECK(got == size && (!size || !memcmp(back, data, size)),
           "the file changed: %zu bytes, %zu read back", size, got);
  free(back);
  static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
  for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
    snprintf(side, sizeof side, "%s%s", path, suffixes[i]);
    unlink(side);
  }
  return 0;
}
