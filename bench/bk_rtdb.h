/*
** bk_rtdb.h -- the database the reader's benchmarks share (bench_rtdb,
** bench_adapt): nwork gemm workloads on target "host" (fingerprint "fp"),
** sizes 128..2048 in powers of two per dimension (bk_size_of), each with
** one campaign of ntrials ok trials at distinct times and its fastest trial
** pinned, the kernel's default {"mc":384}. Written through db.h; the pins
** through SQL (the pin commands are not part of db.h). Header-only: each
** benchmark is one translation unit.
*/
#ifndef BK_RTDB_H
#define BK_RTDB_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "db/db.h"

/* Workload i's size along dimension d (0 M, 1 N, 2 K). */
static inline int bk_size_of(int i, int d) {
  return 128 << (d == 0 ? i % 5 : d == 1 ? i / 5 % 5 : i / 25 % 5);
}

/* Build the database at path; key_extra and sizes_extra are appended to
** each workload's key and sizes object (" threads_max=2" and
** ",\"threads_max\":2": "" for none). die(what, why) does not return. */
static inline void bk_build_pinned(const char *path, int nwork, int ntrials, const char *key_extra,
                                   const char *sizes_extra, void (*die)(const char *, const char *)) {
  rt_err err = {0};
  db *d = db_open(path, DB_CREATE, &err);
  if (!d) die(path, err.msg);
  int64_t tid, kid, sid;
  if (db_begin(d, &err) || db_target_id(d, "host", "fp", "{}", &tid, &err) ||
      db_kernel_id(d, "gemm", "1", &kid, &err) ||
      db_kernel_set_default(d, kid, "{\"mc\":384}", &err) || db_space_id(d, "{}", &sid, &err))
    die("build", err.msg);
  int64_t *wids = malloc((size_t)nwork * sizeof *wids), *bests = malloc((size_t)nwork * sizeof *bests);
  if (!wids || !bests) die("build", "out of memory");
  for (int w = 0; w < nwork; w++) {
    char key[160], sizes[160];
    int m = bk_size_of(w, 0), n = bk_size_of(w, 1), k = bk_size_of(w, 2) + w / 125;
    snprintf(key, sizeof key, "gemm f32 M=%d N=%d K=%d%s", m, n, k, key_extra);
    snprintf(sizes, sizeof sizes, "{\"M\":%d,\"N\":%d,\"K\":%d%s}", m, n, k, sizes_extra);
    int64_t wid, cid, best = 0;
    if (db_workload_id(d, kid, key, sizes, "f32", "", &wid, &err)) die("workload", err.msg);
    db_campaign c = {tid, wid, sid, "random", "{}", 1, ntrials, "measured", "cc", "-O2", "done"};
    if (db_campaign_new(d, &c, &cid, &err)) die("campaign", err.msg);
    for (int t = 0; t < ntrials; t++) {
      char cfg[96];
      snprintf(cfg, sizeof cfg, "{\"kc\":%d,\"mc\":%d,\"nc\":%d}", 64 + t % 7, 24 * (1 + t % 11), t);
      db_trial tr;
      db_trial_init(&tr);
      tr.campaign_id = cid, tr.config_json = cfg, tr.status = "ok", tr.time_s = 1 + (t * 7919) % ntrials;
      int64_t id;
      if (db_trial_add(d, &tr, &id, &err)) die("trial", err.msg);
      if ((t * 7919) % ntrials == 0) best = id;
    }
    wids[w] = wid, bests[w] = best;
  }
  if (db_commit(d, &err)) die("commit", err.msg);
  db_close(d);
  sqlite3 *h;
  sqlite3_open(path, &h);
  sqlite3_exec(h, "BEGIN", NULL, NULL, NULL);
  for (int w = 0; w < nwork; w++) {
    char *q = sqlite3_mprintf(
        "INSERT INTO pins(target_id, workload_id, version, trial_id, config, pinned_by, reason)"
        " SELECT %lld, %lld, 1, id, config, 'bench', 'best' FROM trials WHERE id = %lld;"
        "INSERT INTO pin_current VALUES(%lld, %lld, last_insert_rowid());",
        (long long)tid, (long long)wids[w], (long long)bests[w], (long long)tid, (long long)wids[w]);
    if (sqlite3_exec(h, q, NULL, NULL, NULL) != SQLITE_OK) die("pin", sqlite3_errmsg(h));
    sqlite3_free(q);
  }
  if (sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) die("pin", sqlite3_errmsg(h));
  sqlite3_close(h);
  free(wids), free(bests);
}

#endif
