/*
** db_merge.c -- copy the campaigns and trials of another rooftune file
** into this one. The source is attached read-only in spirit (ATTACH with
** a bound file name; nothing is written to it) after its schema version
** is checked. Entities are matched by natural key -- target (name,
** fingerprint), kernel (name, template_version), workload (kernel, key),
** space (hash) -- and inserted when missing; ids are never carried over.
**
** Identical trials: a source trial is a duplicate when the destination
** already held, before this merge, a trial with the same target (name,
** fingerprint), kernel (name, template_version), workload key,
** config_hash, status, time (both NULL counts as equal) and timestamp
** (`created`). Duplicates are skipped, and a campaign whose trials are all
** duplicates is not copied; duplicates inside one source are kept (a merge
** into an empty file copies the source as it is). Pins and tags are not
** merged: they are decisions about one file's trials, and a copied
** trial's pin history would not mean the same in another file.
**
** From schema 5 on, the cost model's measurements come along too: ceilings
** (a row identical to one the destination holds for the same target --
** measured date and data -- is skipped) and counted traffic (the
** destination's count of a (target, workload, config, source) is kept).
** Model coefficient versions are not merged, for the reason pins are not:
** they are one file's fit history.
*/
#include <sqlite3.h>
#include <stdlib.h>

#include "db.h"
#include "rtdb_int.h"

/* Static SQL (no parameters) run with sqlite3_exec. */
static int exec(db *d, const char *sql, rt_err *err) {
  return sqlite3_exec(db__sqlite(d), sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : db__fail(d, err, "merge");
}

/* The source trials that are not duplicates, and their campaigns. */
static const char new_trials_sql[] =
    "DROP TABLE IF EXISTS temp.merge_new; DROP TABLE IF EXISTS temp.merge_campaigns;"
    " DROP TABLE IF EXISTS temp.merge_map;"
    "CREATE TEMP TABLE merge_new AS SELECT t.id AS id, t.campaign_id AS campaign_id"
    " FROM src.trials t JOIN src.campaigns c ON c.id = t.campaign_id"
    " JOIN src.targets g ON g.id = c.target_id JOIN src.workloads w ON w.id = c.workload_id"
    " JOIN src.kernels k ON k.id = w.kernel_id"
    " WHERE NOT EXISTS (SELECT 1 FROM main.targets mg JOIN main.campaigns mc ON mc.target_id = mg.id"
    "  JOIN main.workloads mw ON mw.id = mc.workload_id JOIN main.kernels mk ON mk.id = mw.kernel_id"
    "  JOIN main.trials mt ON mt.campaign_id = mc.id AND mt.config_hash = t.config_hash"
    "  WHERE mg.name = g.name AND mg.fingerprint = g.fingerprint AND mk.name = k.name"
    "  AND mk.template_version = k.template_version AND mw.key = w.key"
    "  AND mt.status = t.status AND mt.time IS t.time AND mt.created = t.created);"
    "CREATE TEMP TABLE merge_campaigns AS SELECT DISTINCT campaign_id AS id FROM temp.merge_new;"
    "CREATE TEMP TABLE merge_map(src_id INTEGER PRIMARY KEY, dst_id INTEGER NOT NULL);";

/* The entities the copied campaigns need, in dependency order. */
static const char entities_sql[] =
    "INSERT INTO main.targets(name, fingerprint, description, created)"
    " SELECT s.name, s.fingerprint, s.description, s.created FROM src.targets s"
    " WHERE s.id IN (SELECT target_id FROM src.campaigns WHERE id IN temp.merge_campaigns)"
    " AND NOT EXISTS (SELECT 1 FROM main.targets m WHERE m.name = s.name AND m.fingerprint = s.fingerprint);"
    "INSERT INTO main.kernels(name, template_version)"
    " SELECT s.name, s.template_version FROM src.kernels s"
    " WHERE s.id IN (SELECT w.kernel_id FROM src.workloads w JOIN src.campaigns c ON c.workload_id = w.id"
    "  WHERE c.id IN temp.merge_campaigns)"
    " AND NOT EXISTS (SELECT 1 FROM main.kernels m WHERE m.name = s.name"
    "  AND m.template_version = s.template_version);"
    "INSERT INTO main.workloads(kernel_id, key, sizes, dtype, layout, hash)"
    " SELECT mk.id, w.key, w.sizes, w.dtype, w.layout, w.hash FROM src.workloads w"
    " JOIN src.kernels k ON k.id = w.kernel_id"
    " JOIN main.kernels mk ON mk.name = k.name AND mk.template_version = k.template_version"
    " WHERE w.id IN (SELECT workload_id FROM src.campaigns WHERE id IN temp.merge_campaigns)"
    " AND NOT EXISTS (SELECT 1 FROM main.workloads m WHERE m.kernel_id = mk.id AND m.key = w.key);"
    "INSERT INTO main.spaces(spec, hash) SELECT s.spec, s.hash FROM src.spaces s"
    " WHERE s.id IN (SELECT space_id FROM src.campaigns WHERE id IN temp.merge_campaigns)"
    " AND NOT EXISTS (SELECT 1 FROM main.spaces m WHERE m.hash = s.hash);";

/* Schema 5: the targets, kernels and workloads of the ceilings and
** counters, then the rows themselves (one statement each, so that
** sqlite3_changes counts them). */
static const char model_entities_sql[] =
    "INSERT INTO main.targets(name, fingerprint, description, created)"
    " SELECT s.name, s.fingerprint, s.description, s.created FROM src.targets s"
    " WHERE (s.id IN (SELECT target_id FROM src.ceilings) OR s.id IN (SELECT target_id FROM src.counters))"
    " AND NOT EXISTS (SELECT 1 FROM main.targets m WHERE m.name = s.name AND m.fingerprint = s.fingerprint);"
    "INSERT INTO main.kernels(name, template_version)"
    " SELECT s.name, s.template_version FROM src.kernels s"
    " WHERE s.id IN (SELECT w.kernel_id FROM src.workloads w JOIN src.counters n ON n.workload_id = w.id)"
    " AND NOT EXISTS (SELECT 1 FROM main.kernels m WHERE m.name = s.name"
    "  AND m.template_version = s.template_version);"
    "INSERT INTO main.workloads(kernel_id, key, sizes, dtype, layout, hash)"
    " SELECT mk.id, w.key, w.sizes, w.dtype, w.layout, w.hash FROM src.workloads w"
    " JOIN src.kernels k ON k.id = w.kernel_id"
    " JOIN main.kernels mk ON mk.name = k.name AND mk.template_version = k.template_version"
    " WHERE w.id IN (SELECT workload_id FROM src.counters)"
    " AND NOT EXISTS (SELECT 1 FROM main.workloads m WHERE m.kernel_id = mk.id AND m.key = w.key);";
static const char ceilings_sql[] =
    "INSERT INTO main.ceilings(target_id, measured, data, created)"
    " SELECT mg.id, c.measured, c.data, c.created FROM src.ceilings c"
    " JOIN src.targets g ON g.id = c.target_id"
    " JOIN main.targets mg ON mg.name = g.name AND mg.fingerprint = g.fingerprint"
    " WHERE NOT EXISTS (SELECT 1 FROM main.ceilings m WHERE m.target_id = mg.id"
    "  AND m.measured = c.measured AND m.data = c.data) ORDER BY c.id";
static const char counters_sql[] =
    "INSERT INTO main.counters(target_id, workload_id, config_hash, config, source, data, created)"
    " SELECT mg.id, mw.id, n.config_hash, n.config, n.source, n.data, n.created FROM src.counters n"
    " JOIN src.targets g ON g.id = n.target_id"
    " JOIN main.targets mg ON mg.name = g.name AND mg.fingerprint = g.fingerprint"
    " JOIN src.workloads w ON w.id = n.workload_id JOIN src.kernels k ON k.id = w.kernel_id"
    " JOIN main.kernels mk ON mk.name = k.name AND mk.template_version = k.template_version"
    " JOIN main.workloads mw ON mw.kernel_id = mk.id AND mw.key = w.key"
    " WHERE 1 ORDER BY n.id ON CONFLICT(target_id, workload_id, config_hash, source) DO NOTHING";

/* Copy the ceilings and counters of a schema-5 source. */
static int merge_model(db *d, db_merge_stats *s, rt_err *err) {
  if (exec(d, model_entities_sql, err) || db__run(d, db__query(d, err, ceilings_sql, ""), NULL, err) < 0)
    return -1;
  s->ceilings = sqlite3_changes(db__sqlite(d));
  if (db__run(d, db__query(d, err, counters_sql, ""), NULL, err) < 0) return -1;
  s->counters = sqlite3_changes(db__sqlite(d));
  return 0;
}

/* Schema 2 added kernels.default_config: fill the destination's gaps. */
static const char defaults_sql[] =
    "UPDATE main.kernels SET default_config = (SELECT s.default_config FROM src.kernels s"
    "  WHERE s.name = kernels.name AND s.template_version = kernels.template_version)"
    " WHERE default_config IS NULL AND EXISTS (SELECT 1 FROM src.kernels s"
    "  WHERE s.name = kernels.name AND s.template_version = kernels.template_version"
    "  AND s.default_config IS NOT NULL);";

/* A copied campaign with its destination ids; inserted by ins_campaign. */
#define CAMPAIGNS_SQL(commit, report, provenance)                                          \
    "SELECT c.id, mg.id, mw.id, ms.id, c.strategy, c.options, c.seed, c.budget,"           \
    " c.rooftune_version, c.source, c.compiler, c.flags, c.started, c.ended, c.state, "    \
    commit ", " report ", " provenance                                                     \
    " FROM src.campaigns c JOIN src.targets g ON g.id = c.target_id"                       \
    " JOIN main.targets mg ON mg.name = g.name AND mg.fingerprint = g.fingerprint"         \
    " JOIN src.workloads w ON w.id = c.workload_id JOIN src.kernels k ON k.id = w.kernel_id" \
    " JOIN main.kernels mk ON mk.name = k.name AND mk.template_version = k.template_version" \
    " JOIN main.workloads mw ON mw.kernel_id = mk.id AND mw.key = w.key"                   \
    " JOIN src.spaces s ON s.id = c.space_id JOIN main.spaces ms ON ms.hash = s.hash"      \
    " WHERE c.id IN temp.merge_campaigns ORDER BY c.id"
/* campaigns.rooftune_commit exists from schema 3 on, campaigns.report and
** trials.source_hash/origin from schema 4 on, campaigns.provenance and
** trials.measurements/runtimes/strategy_s from schema 7 on. */
static const char *const campaigns_sql[] = {
  CAMPAIGNS_SQL("NULL", "NULL", "NULL"), CAMPAIGNS_SQL("c.rooftune_commit", "NULL", "NULL"),
  CAMPAIGNS_SQL("c.rooftune_commit", "c.report", "NULL"),
  CAMPAIGNS_SQL("c.rooftune_commit", "c.report", "c.provenance")};
static const char ins_campaign[] =
    "INSERT INTO main.campaigns(target_id, workload_id, space_id, strategy, options, seed, budget,"
    " rooftune_version, source, compiler, flags, started, ended, state, rooftune_commit, report,"
    " provenance) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)";

#define TRIALS_SQL(source_hash, origin, imported, loaded)                                    \
    "INSERT INTO main.trials(campaign_id, config, config_hash, status, time, mean, sd, min, ci_lo," \
    " ci_hi, repeats, noisy, counters, predicted, compile_s, verify_s, bench_s, framework_s,"    \
    " created, source_hash, origin, measurements, runtimes, strategy_s, loaded)"              \
    " SELECT m.dst_id, t.config, t.config_hash, t.status, t.time, t.mean, t.sd, t.min, t.ci_lo," \
    " t.ci_hi, t.repeats, t.noisy, t.counters, t.predicted, t.compile_s, t.verify_s, t.bench_s," \
    " t.framework_s, t.created, " source_hash ", " origin ", " imported ", " loaded           \
    " FROM src.trials t JOIN temp.merge_new n ON n.id = t.id"                                 \
    " JOIN temp.merge_map m ON m.src_id = t.campaign_id ORDER BY t.id"
static const char *const trials_sql[] = {
  TRIALS_SQL("NULL", "NULL", "NULL, NULL, NULL", "0"),
  TRIALS_SQL("t.source_hash", "t.origin", "NULL, NULL, NULL", "0"),
  TRIALS_SQL("t.source_hash", "t.origin", "t.measurements, t.runtimes, t.strategy_s", "0"),
  TRIALS_SQL("t.source_hash", "t.origin", "t.measurements, t.runtimes, t.strategy_s", "t.loaded")};

/* Copy each needed campaign, recording src id -> new id in merge_map. */
static int copy_campaigns(db *d, int version, int *n, rt_err *err) {
  sqlite3_stmt *sel = db__query(d, err, campaigns_sql[(version >= 3) + (version >= 4) + (version >= 7)], "");
  if (!sel) return -1;
  int rc, bad = 0;
  *n = 0;
  while (!bad && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
    sqlite3_stmt *ins = db__query(d, err, ins_campaign, "");
    for (int i = 1; ins && i < sqlite3_column_count(sel); i++)
      sqlite3_bind_value(ins, i, sqlite3_column_value(sel, i));
    int64_t id;
    bad = db__run(d, ins, &id, err) ||
          db__run(d, db__query(d, err, "INSERT INTO temp.merge_map(src_id, dst_id) VALUES(?1, ?2)", "ii",
                               sqlite3_column_int64(sel, 0), id), NULL, err);
    ++*n;
  }
  if (!bad && rc != SQLITE_DONE) bad = db__fail(d, err, "read");
  sqlite3_finalize(sel);
  return bad ? -1 : 0;
}

static int merge_in(db *d, int version, db_merge_stats *s, rt_err *err) {
  int64_t total, fresh;
  if (exec(d, new_trials_sql, err) ||
      db__run(d, db__query(d, err, "SELECT count(*) FROM src.trials", ""), &total, err) < 0 ||
      db__run(d, db__query(d, err, "SELECT count(*) FROM temp.merge_new", ""), &fresh, err) < 0 ||
      exec(d, entities_sql, err) || (version >= 2 && exec(d, defaults_sql, err)) ||
      copy_campaigns(d, version, &s->campaigns, err) || db__run(d, db__query(d, err, trials_sql[(version >= 4) + (version >= 7) + (version >= 9)], ""), NULL, err) < 0)
    return -1;
  s->trials = sqlite3_changes(db__sqlite(d));
  s->duplicates = (int)(total - fresh);
  if (s->trials != fresh) {
    rt_err_set(err, "copied %d trials of %lld: the source's entities are inconsistent",
               s->trials, (long long)fresh);
    return -1;
  }
  if (version >= 5 && merge_model(d, s, err)) return -1;
  if (db__fill_families(d, err)) return -1;
  return exec(d, "DROP TABLE temp.merge_new; DROP TABLE temp.merge_campaigns; DROP TABLE temp.merge_map", err);
}

int db_merge(db *d, const char *path, db_merge_stats *stats, rt_err *err) {
  *stats = (db_merge_stats){0};
  /* Open it read-only first: a missing file, one SQLite cannot read here
  ** (rtdb_int.h), or not rooftune's, is refused before anything is
  ** attached; then attach it read-only (immutable where the probe had to). */
  sqlite3 *probe;
  rt_err e = {0};
  int v0 = 0;
  if (rtdb__open_ro(path, 0, 10000, &probe, &v0, e.msg, sizeof e.msg) != SQLITE_OK) {
    rt_err_set(err, "%s", e.msg);
    return -1;
  }
  int immutable = sqlite3_uri_boolean(sqlite3_db_filename(probe, "main"), "immutable", 0);
  sqlite3_close(probe);
  char *uri = rtdb__uri(path, immutable ? "mode=ro&immutable=1" : "mode=ro");
  if (!uri || db__run(d, db__query(d, err, "ATTACH ?1 AS src", "s", uri), NULL, err) < 0) {
    if (!uri) rt_err_set(err, "out of memory");
    free(uri);
    rt_err_prefix(err, "%s", path);
    return -1;
  }
  free(uri);
  int64_t v = -1;
  int rc = db__run(d, db__query(d, err, "PRAGMA src.user_version", ""), &v, err) ? -1 : 0;
  if (!rc && v > DB_SCHEMA_VERSION) {
    rt_err_set(err, "schema version %lld is newer than this rooftune's (%d): upgrade rooftune",
               (long long)v, DB_SCHEMA_VERSION);
    rc = -1;
  } else if (!rc && v < 1) {
    rt_err_set(err, "not a rooftune database (schema version %lld)", (long long)v);
    rc = -1;
  }
  if (!rc && !(rc = db_begin(d, err))) {
    if ((rc = merge_in(d, (int)v, stats, err))) db_rollback(d);
    else rc = db_commit(d, err);
  }
  if (rc) {
    rt_err_prefix(err, "%s", path);
    *stats = (db_merge_stats){0};
  }
  sqlite3_exec(db__sqlite(d), "DETACH src", NULL, NULL, NULL);
  return rc;
}
