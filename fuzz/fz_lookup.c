/*
** fz_lookup.c -- fuzz target lookup: the reader library (rtdb_lookup,
** rtdb_pins) on a well-formed database whose rows hold text of any
** content, and on any vars text. Byte mutations of a database file (the
** rtdb target) seldom get past SQLite's page checks; this target puts the
** input straight into the columns the reader parses itself. Input: lines
**   1   the vars of the lookups ("M=1024,N=64,dtype='f32'")
**   2   the kernel's default config (empty line: none)
**   3.. one pinned workload each, fields separated by tabs:
**       KEY  SIZES  DTYPE  CONFIG  TIME
** All on target "host", kernel "gemm": version 1 and current, every
** second one also in tag "v1", its trial's time TIME (a REAL when it is a
** number, else the text). Rows SQLite refuses (a key given twice) are
** left out.
**
** Checked: the answers are well formed (fz_check_result), the same when
** asked again (the memo), and taken from the rows: a pin's config and
** workload are those of one stored row, a default's is the default; an
** unknown target gets the default or NOTFOUND; rtdb_pins visits only
** stored rows. Families: the target has model "m", arch "a", backend
** "host"; a caller of another fingerprint and that model gets a pin at
** level 2 from it or the default, one of another backend the default.
** Caps: at most MAXROWS rows; inputs at most libFuzzer's -max_len.
*/
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../db/db.h"
#include "../db/rtdb.h"
#include "fz.h"

#define MAXROWS 24

typedef struct row { const char *key, *sizes, *dtype, *config, *time; int stored; } row;

typedef struct input {
  char *text;
  const char *vars, *def;
  row r[MAXROWS];
  int n;
} input;

/* Split the text in place into lines and fields. */
static void parse(input *in) {
  char *p = in->text, *line;
  const char **field;
  in->vars = in->def = "";
  for (int k = 0; (line = strsep(&p, "\n")); k++) {
    if (k == 0) in->vars = line;
    else if (k == 1) in->def = line;
    else if (line[0] && in->n < MAXROWS) {   /* an empty line (the last one) is no row */
      row *r = &in->r[in->n++];
      const char **f[5] = {&r->key, &r->sizes, &r->dtype, &r->config, &r->time};
      for (int j = 0; j < 5; j++) {
        field = f[j];
        *field = line ? strsep(&line, "\t") : NULL;
        if (!*field) *field = "";
      }
    }
  }
}

/* The empty database every input starts from (db_open's schema, made once). */
static uint8_t *template_db;
static size_t template_size;

static void make_template(const char *path) {
  rt_err err = {0};
  db *d = db_open(path, DB_CREATE, &err);
  FZ_CHECK(d, "template database: %s", err.msg);
  db_close(d);
  FILE *f = fopen(path, "rb");
  FZ_CHECK(f, "template database: cannot read it back");
  fseek(f, 0, SEEK_END);
  template_size = (size_t)ftell(f);
  rewind(f);
  template_db = rt_malloc(template_size);
  FZ_CHECK(fread(template_db, 1, template_size, f) == template_size, "template: short read");
  fclose(f);
}

static void exec(sqlite3 *h, const char *sql) {
  char *msg = NULL;
  FZ_CHECK(sqlite3_exec(h, sql, NULL, NULL, &msg) == SQLITE_OK, "%s: %s", sql, msg);
}

/* Write the rows into path (a copy of the template); row i stored or not. */
static void fill(const char *path, input *in) {
  fz_write_file(path, template_db, template_size);
  sqlite3 *h;
  FZ_CHECK(sqlite3_open(path, &h) == SQLITE_OK, "open %s", path);
  exec(h, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"
          "INSERT INTO targets(id, name, fingerprint, description, model, arch, backend)"
          " VALUES(1, 'host', 'fp', '{}', 'm', 'a', 'host');"
          "INSERT INTO spaces(id, spec, hash) VALUES(1, '{}', '0');"
          "INSERT INTO tags(id, name, note) VALUES(1, 'v1', '')");
  sqlite3_stmt *st;
  FZ_CHECK(sqlite3_prepare_v2(h, "INSERT INTO kernels(id, name, template_version, default_config)"
                              " VALUES(1, 'gemm', '1', ?1)", -1, &st, NULL) == SQLITE_OK, "prepare");
  if (in->def[0]) sqlite3_bind_text(st, 1, in->def, -1, SQLITE_STATIC);
  FZ_CHECK(sqlite3_step(st) == SQLITE_DONE, "kernel row");
  sqlite3_finalize(st);
  static const char *const sql[] = {
    "INSERT INTO workloads(id, kernel_id, key, sizes, dtype, layout, hash)"
    " VALUES(?1, 1, ?2, ?3, ?4, '', 'h' || ?1)",
    "INSERT INTO campaigns(id, target_id, workload_id, space_id, strategy, options, seed, budget,"
    " rooftune_version, source, compiler, flags, state)"
    " VALUES(?1, 1, ?1, 1, 'random', '{}', 0, 1, '0', 'measured', 'cc', '', 'done')",
    "INSERT INTO trials(id, campaign_id, config, config_hash, status, time, created)"
    " VALUES(?1, ?1, ?5, 'c' || ?1, 'ok', ?6, '2026-01-01')",
    "INSERT INTO pins(id, target_id, workload_id, version, trial_id, config, pinned_by, reason)"
    " VALUES(?1, 1, ?1, 1, ?1, ?5, 'fuzz', 'fuzz')",
    "INSERT INTO pin_current(target_id, workload_id, pin_id) VALUES(1, ?1, ?1)",
    "INSERT INTO tag_pins(tag_id, pin_id) SELECT 1, ?1 WHERE ?1 % 2 = 0",
  };
  for (int i = 0; i < in->n; i++) {
    row *r = &in->r[i];
    exec(h, "SAVEPOINT r");
    r->stored = 1;
    for (size_t k = 0; k < sizeof sql / sizeof *sql && r->stored; k++) {
      FZ_CHECK(sqlite3_prepare_v2(h, sql[k], -1, &st, NULL) == SQLITE_OK, "prepare %s", sql[k]);
      const char *text[] = {r->key, r->sizes, r->dtype, r->config, r->time};
      sqlite3_bind_int(st, 1, i + 1);
      for (int j = 0; j < 5; j++)   /* ?2..?6; those a statement lacks: SQLITE_RANGE, no harm */
        sqlite3_bind_text(st, 2 + j, text[j], -1, SQLITE_STATIC);
      char *end;
      double t = strtod(r->time, &end);   /* a number as a REAL, as rooftune stores it */
      if (r->time[0] && !*end) sqlite3_bind_double(st, 6, t);
      r->stored = sqlite3_step(st) == SQLITE_DONE;
      sqlite3_finalize(st);
    }
    exec(h, r->stored ? "RELEASE r" : "ROLLBACK TO r; RELEASE r");
  }
  exec(h, "COMMIT");
  FZ_CHECK(sqlite3_close(h) == SQLITE_OK, "close");
}

/* The answer comes from the rows: a stored row's (key, config), or the default. */
static void check_source(const input *in, int rc, const rtdb_result *r, size_t i) {
  if (rc != RTDB_OK) return;
  if (r->match == RTDB_DEFAULT) {
    FZ_CHECK(!strcmp(r->config, in->def), "lookup %zu: default %s, stored %s", i, r->config,
             in->def);
    return;
  }
  int found = 0;
  for (int k = 0; k < in->n && !found; k++)
    found = in->r[k].stored && !strcmp(in->r[k].key, r->workload) &&
            !strcmp(in->r[k].config, r->config);
  FZ_CHECK(found, "lookup %zu: pin %s of workload %s is no stored row", i, r->config, r->workload);
}

static int pin_seen(void *ctx, const char *workload, const char *sizes_json, const char *dtype,
                    const char *config, int pin_version, double time_s) {
  (void)sizes_json, (void)dtype, (void)time_s;
  const input *in = ctx;
  int found = 0;
  for (int k = 0; k < in->n && !found; k++)
    found = in->r[k].stored && !strcmp(in->r[k].key, workload) && !strcmp(in->r[k].config, config);
  FZ_CHECK(found && pin_version == 1, "rtdb_pins: %s of %s (version %d) is no stored row", config,
           workload, pin_version);
  return 0;
}

FZ_TARGET(lookup) {
  char path[512];
  snprintf(path, sizeof path, "%s/lookup.db", fz_tmpdir());
  if (!template_db) make_template(path);
  input in = {.text = fz_text(data, size)};
  parse(&in);
  fill(path, &in);
  rtdb *rd = NULL;
  char msg[512];
  int rc = rtdb_open_msg(path, &rd, msg, sizeof msg);
  FZ_CHECK(rc == RTDB_OK, "rtdb_open of a well-formed database: %s", msg);
  static const char *const targets[] = {"host", "host", "other"}, *const tags[] = {NULL, "v1", NULL};
  for (size_t i = 0; i < 3; i++) {
    rtdb_result r, again;
    int rc1 = rtdb_lookup(rd, targets[i], "gemm", in.vars, tags[i], &r);
    fz_check_result(rc1, &r, rd, i);
    check_source(&in, rc1, &r, i);
    if (i == 2)
      FZ_CHECK(rc1 != RTDB_OK || r.match == RTDB_DEFAULT, "an unknown target got a pin");
    int rc2 = rtdb_lookup(rd, targets[i], "gemm", in.vars, tags[i], &again);
    FZ_CHECK(rc2 == rc1 && (rc1 || fz_same_result(&r, &again)), "lookup %zu: a second answer differs",
             i);
  }
  static const rtdb_target chains[] = {{.fingerprint = "fp2", .model = "m", .backend = "host"},
                                       {.fingerprint = "fp2", .model = "m", .backend = "cuda"}};
  for (size_t i = 0; i < 2; i++) {
    rtdb_result r, again;
    int rc1 = rtdb_lookup_on(rd, &chains[i], "gemm", in.vars, NULL, &r);
    fz_check_result(rc1, &r, rd, 3 + i);
    check_source(&in, rc1, &r, 3 + i);
    FZ_CHECK(rc1 != RTDB_OK || r.level == (i ? RTDB_LEVEL_DEFAULT : r.match == RTDB_DEFAULT ? RTDB_LEVEL_DEFAULT
                                                                                           : RTDB_LEVEL_MODEL),
             "family lookup %zu: level %d", i, r.level);
    int rc2 = rtdb_lookup_on(rd, &chains[i], "gemm", in.vars, NULL, &again);
    FZ_CHECK(rc2 == rc1 && (rc1 || fz_same_result(&r, &again)), "family lookup %zu: a second answer differs", i);
  }
  for (size_t i = 0; i < 2; i++) {
    char def[RTDB_MAXCONFIG];
    rc = rtdb_pins(rd, "host", "gemm", tags[i], pin_seen, &in, def);
    FZ_CHECK(rc >= RTDB_OK && rc <= RTDB_READONLY, "rtdb_pins: code %d", rc);
    if (!rc) FZ_CHECK(!strcmp(def, in.def), "rtdb_pins: default %s, stored %s", def, in.def);
  }
  FZ_CHECK(rtdb_close(rd) == RTDB_OK, "rtdb_close failed");
  unlink(path);
  free(in.text);
  return 0;
}
