/*
** fz_t4.c -- fuzz target t4: T4 results import (db_import_t4), plain or
** gzip, into a fresh in-memory database, recorded on the pnpoly space of
** data/t1/pnpoly.json (the space of the seeds, slices of
** data/t4/pnpoly_RTX_3090_T4.json.gz). Input: the file's bytes, read by
** the importer from a memfd.
**
** An import is all-or-nothing (db.h invariant 2): a failed one has a
** message and stores nothing (db_stats as of a new database); a
** successful one stores exactly the trials it counts, in one campaign, and
** the database then passes db_check (SQLite's checks, the schema, the JSON
** columns, rooftune's invariants, the reader's view).
** Caps: inputs are at most libFuzzer's -max_len; the space has 4,092
** configurations, so each result costs one lookup.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../db/db.h"
#include "../search_spaces/sp.h"
#include "fz.h"

static const char space_text[] =
  "{\"General\": {\"BenchmarkName\": \"pnpoly\"}, \"ConfigurationSpace\": {"
  "\"TuningParameters\": ["
  "{\"Name\": \"between_method\", \"Type\": \"int\", \"Values\": \"[0, 1, 2, 3]\", \"Default\": 1},"
  "{\"Name\": \"block_size_x\", \"Type\": \"int\", \"Values\": \"[32 * i for i in range(1, 32)]\","
  " \"Default\": 32},"
  "{\"Name\": \"tile_size\", \"Type\": \"int\", \"Values\": \"[1] + [2 * i for i in range(1, 11)]\","
  " \"Default\": 1},"
  "{\"Name\": \"use_method\", \"Type\": \"int\", \"Values\": \"[0, 1, 2]\", \"Default\": 1}],"
  "\"Conditions\": []}}";

typedef struct tally { int64_t campaign; int n, other; } tally;

static int count_trial(void *ctx, const db_trial_row *t) {
  tally *c = ctx;
  if (t->campaign_id == c->campaign) c->n++;
  else c->other++;
  return 0;
}

FZ_TARGET(t4) {
  static sp_space *sp;
  rt_err err = {0};
  static char *empty_stats;   /* db_stats of a new database */
  if (!sp) {
    sp = sp_load_string(space_text, "pnpoly.json", NULL, 0, &err);
    FZ_CHECK(sp, "the pnpoly space does not load: %s", err.msg);
    db *d0 = db_open(":memory:", DB_CREATE, &err);
    rt_str stats = {0};
    FZ_CHECK(d0 && db_stats(d0, &stats, &err) == 0, "db_stats of a new database: %s", err.msg);
    empty_stats = stats.s;
    db_close(d0);
  }
  int fd = memfd_create("fz_t4", MFD_CLOEXEC);
  FZ_CHECK(fd >= 0, "memfd_create failed");
  FZ_CHECK(size == 0 || write(fd, data, size) == (ssize_t)size, "memfd write failed");
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  db *d = db_open(":memory:", DB_CREATE, &err);
  FZ_CHECK(d, "in-memory database: %s", err.msg);
  int64_t campaign = -1;
  int ntrials = -1;
  int rc = db_import_t4(d, path, sp, "gpu", "pnpoly", &campaign, &ntrials, &err);
  tally t = {campaign, 0, 0};
  db_trial_filter all = {0};
  rt_err e2 = {0};
  FZ_CHECK(db_trials(d, &all, count_trial, &t, &e2) >= 0, "db_trials: %s", e2.msg);
  if (rc) {
    FZ_CHECK(err.msg[0], "import failed without a message");
    FZ_CHECK(t.n + t.other == 0, "a failed import stored %d trials (%s)", t.n + t.other, err.msg);
    rt_str stats = {0};
    FZ_CHECK(db_stats(d, &stats, &e2) == 0, "db_stats: %s", e2.msg);
    FZ_CHECK(!strcmp(stats.s, empty_stats), "a failed import (%s) left rows:\n%s", err.msg, stats.s);
    free(stats.s);
  } else {
    FZ_CHECK(t.other == 0 && t.n == ntrials, "import says %d trials; the database holds %d (+%d)",
             ntrials, t.n, t.other);
    rt_str report = {0};
    FZ_CHECK(db_check(d, &report, &e2) == 0, "db_check after an import: %s%s", e2.msg,
             report.s ? report.s : "");
    free(report.s);
  }
  db_close(d);
  close(fd);
  return 0;
}
