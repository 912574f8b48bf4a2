"""Read-only records of a rooftune database: targets, kernels, workloads,
campaigns, trials, pins and tags as lists of plain dicts (pandas-friendly:
`pandas.DataFrame(records)`, or as_frame=True when pandas is importable).

The file is opened through SQLite's URI `mode=ro`: nothing is written, no
database is created. The tables and columns read here are those
db/SCHEMA.md documents (the readers' view of the schema); JSON columns
come back parsed (dicts/lists), times in seconds (None when unknown),
flags as bools. Schema versions read: SCHEMA_MIN..SCHEMA_MAX (a newer file
is refused, as every rooftune reader refuses one: its meaning may have
changed; an older one is migrated by `rooftune db init --db F`).
Read-only places follow rtdb.h's rule (rtdb_open): a WAL-mode file whose
-wal/-shm SQLite cannot make is read as immutable on read-only media when
it has no -wal, and refused elsewhere with a message saying what to do.
"""
import json
import os
import sqlite3
import urllib.parse

# The schema versions this package reads (db/db.h's DB_SCHEMA_VERSION is the
# newest; python/tests/test_records.py checks that SCHEMA_MAX is it).
SCHEMA_MIN = 7
SCHEMA_MAX = 10


class DatabaseError(Exception):
    """A file that is not a rooftune database this package reads, or an
    SQLite error while reading it (never reported as "no rows")."""


def _json(text):
    return None if text is None else json.loads(text)


def frame(records, expand=None):
    """records as a pandas DataFrame; expand: a column of dicts (e.g.
    "config") spread into one column per key ("config.bs"). ImportError,
    saying so, when pandas is not installed."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError("pandas is not installed (pip install pandas, or Debian's "
                          "python3-pandas); the records themselves are plain lists of "
                          "dicts: %s" % e) from None
    return pandas.DataFrame.from_records(flatten(records, expand) if expand else records)


def flatten(records, column):
    """records with the dict in `column` spread into "column.key" entries
    (the order of the first record's keys, then any others as met)."""
    out = []
    for r in records:
        d = {k: v for k, v in r.items() if k != column}
        for k, v in (r.get(column) or {}).items():
            d["%s.%s" % (column, k)] = v
        out.append(d)
    return out


def _wal_header(path):
    """Whether the file's header says WAL mode (bytes 18 and 19 are 2)."""
    try:
        with open(path, "rb") as f:
            h = f.read(20)
    except OSError:
        return False
    return len(h) == 20 and h[18] == 2 and h[19] == 2


def _read_only_fs(path):
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


class Database:
    """A rooftune database opened read-only. Every method returns a list of
    dicts (as_frame=True: a pandas DataFrame) and filters by the keyword
    arguments given (None: any). One connection: use a Database from one
    thread at a time (open one per thread to read in parallel; the Reader
    is the one to share between threads)."""

    def __init__(self, path):
        if not os.path.exists(path):
            raise DatabaseError("%s: no such file ('rooftune db init --db %s' makes a "
                                "database)" % (path, path))
        self._con = None
        try:
            version, tables = self._connect(path, "mode=ro")
        except sqlite3.OperationalError as e:
            if not _wal_header(path):
                raise DatabaseError("%s: %s" % (path, e)) from None
            # rtdb.h's rule for WAL-mode files SQLite cannot make a -shm for:
            # on read-only media, with no -wal, read the file as immutable
            wal, shm = os.path.exists(path + "-wal"), os.path.exists(path + "-shm")
            if wal or not _read_only_fs(path):
                self.close()
                raise DatabaseError(
                    "%s: SQLite cannot read this WAL-mode database here: it needs its -wal "
                    "and -shm files, %s (SQLite: %s). The last rooftune writer to close a "
                    "file leaves it readable from read-only places: run 'rooftune db init "
                    "--db %s' once where the directory is writable, or copy the file to a "
                    "writable directory" % (
                        path, "which exist but cannot be used" if wal and shm else
                        "and the -shm is missing and cannot be created here" if wal else
                        "which are missing and cannot be created (read-only directory)",
                        e, path)) from None
            self.close()
            try:
                version, tables = self._connect(path, "mode=ro&immutable=1")
            except sqlite3.Error as e2:
                raise DatabaseError("%s: %s" % (path, e2)) from None
        except sqlite3.Error as e:
            raise DatabaseError("%s: %s" % (path, e)) from None
        self.path = path
        self.schema_version = version
        if version == 0 and tables[0]:
            self.close()
            raise DatabaseError("%s: not a rooftune database (user_version 0, and tables of "
                                "its own such as '%s')" % (path, tables[1]))
        if version == 0:
            self.close()
            raise DatabaseError("%s: an empty file, not yet a rooftune database" % path)
        if version > SCHEMA_MAX or version < 0:
            self.close()
            raise DatabaseError("%s: schema version %d is newer than this package reads "
                                "(%d..%d): upgrade rooftune's Python package"
                                % (path, version, SCHEMA_MIN, SCHEMA_MAX))
        if version < SCHEMA_MIN:
            self.close()
            raise DatabaseError("%s: schema version %d is older than this package reads "
                                "(%d..%d): 'rooftune db init --db %s' migrates it"
                                % (path, version, SCHEMA_MIN, SCHEMA_MAX, path))

    def _connect(self, path, params):
        """Open path read-only with these URI parameters and read what says
        whose it is: (user_version, (tables, the first name))."""
        self.close()
        uri = "file:%s?%s" % (urllib.parse.quote(os.path.abspath(path)), params)
        self._con = sqlite3.connect(uri, uri=True, check_same_thread=False)
        version = self._con.execute("PRAGMA user_version").fetchone()[0]
        tables = self._con.execute("SELECT count(*), min(name) FROM sqlite_schema").fetchone()
        return version, tables

    def close(self):
        if getattr(self, "_con", None) is not None:
            self._con.close()
            self._con = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _rows(self, sql, args):
        try:
            cur = self._con.execute(sql, args)
            names = [c[0] for c in cur.description]
            return [dict(zip(names, row)) for row in cur.fetchall()]
        except sqlite3.Error as e:
            raise DatabaseError("%s: %s" % (self.path, e)) from None

    @staticmethod
    def _where(conds):
        """(" AND a = ? AND ...", [values]) of the conditions whose value is
        not None; the column text is ours, the values are bound."""
        sql, args = "", []
        for text, value in conds:
            if value is not None:
                sql += " AND " + text
                args.append(value)
        return sql, args

    @staticmethod
    def _out(rows, as_frame, expand=None):
        return frame(rows, expand) if as_frame else rows

    def targets(self, name=None, as_frame=False):
        """Stored targets: id, name, fingerprint, description (dict), created,
        and the family chain's model, arch and backend (None when unknown,
        and in files before schema 8)."""
        w, a = self._where([("name = ?", name)])
        fam = "model, arch, backend" if self.schema_version >= 8 else \
            "NULL AS model, NULL AS arch, NULL AS backend"
        rows = self._rows("SELECT id, name, fingerprint, description, created, " + fam +
                          " FROM targets WHERE 1" + w + " ORDER BY id", a)
        for r in rows:
            r["description"] = _json(r["description"])
        return self._out(rows, as_frame)

    def kernels(self, name=None, as_frame=False):
        """Kernels: id, name, template_version, default_config (dict or None)."""
        w, a = self._where([("name = ?", name)])
        rows = self._rows("SELECT id, name, template_version, default_config FROM kernels"
                          " WHERE 1" + w + " ORDER BY id", a)
        for r in rows:
            r["default_config"] = _json(r["default_config"])
        return self._out(rows, as_frame)

    def workloads(self, kernel=None, as_frame=False):
        """Workloads: id, kernel, key, sizes (dict), dtype, layout."""
        w, a = self._where([("k.name = ?", kernel)])
        rows = self._rows("SELECT w.id, k.name AS kernel, w.key, w.sizes, w.dtype, w.layout"
                          " FROM workloads w JOIN kernels k ON k.id = w.kernel_id"
                          " WHERE 1" + w + " ORDER BY w.id", a)
        for r in rows:
            r["sizes"] = _json(r["sizes"])
        return self._out(rows, as_frame)

    def campaigns(self, target=None, kernel=None, workload=None, state=None, as_frame=False):
        """Campaigns with their target, kernel and workload key, options,
        report and provenance parsed, and their trial counts (trials, ok)."""
        w, a = self._where([("g.name = ?", target), ("k.name = ?", kernel),
                            ("w.key = ?", workload), ("c.state = ?", state)])
        rows = self._rows(
            "SELECT c.id, g.name AS target, g.fingerprint, k.name AS kernel, w.key AS workload,"
            " c.strategy, c.options, c.seed, c.budget, c.state, c.source, c.compiler, c.flags,"
            " c.rooftune_version, c.rooftune_commit, c.started, c.ended, c.report, c.provenance,"
            " (SELECT count(*) FROM trials t WHERE t.campaign_id = c.id) AS trials,"
            " (SELECT count(*) FROM trials t WHERE t.campaign_id = c.id AND t.status = 'ok') AS ok"
            " FROM campaigns c JOIN targets g ON g.id = c.target_id"
            " JOIN workloads w ON w.id = c.workload_id JOIN kernels k ON k.id = w.kernel_id"
            " WHERE 1" + w + " ORDER BY c.id", a)
        for r in rows:
            for k in ("options", "report", "provenance"):
                r[k] = _json(r[k])
        return self._out(rows, as_frame)

    def trials(self, campaign=None, target=None, kernel=None, workload=None, status=None,
               as_frame=False, expand_config=False):
        """Trials in id order: the campaign, target, kernel and workload key,
        config (dict), status, time_s (the objective: median seconds; None
        unless ok), its statistics, phase times, counters, measurements and
        run times parsed. expand_config with as_frame: a column per parameter."""
        w, a = self._where([("t.campaign_id = ?", campaign), ("g.name = ?", target),
                            ("k.name = ?", kernel), ("w.key = ?", workload),
                            ("t.status = ?", status)])
        rows = self._rows(
            "SELECT t.id, t.campaign_id AS campaign, g.name AS target, k.name AS kernel,"
            " w.key AS workload, t.config, t.status, t.time AS time_s, t.mean AS mean_s,"
            " t.sd AS sd_s, t.min AS min_s, t.ci_lo AS ci_lo_s, t.ci_hi AS ci_hi_s, t.repeats,"
            " t.noisy, t.predicted AS predicted_s, t.compile_s, t.verify_s, t.bench_s,"
            " t.framework_s, t.strategy_s, t.created, t.source_hash, t.origin, t.counters,"
            " t.measurements, t.runtimes, " +
            ("t.loaded" if self.schema_version >= 9 else "0 AS loaded") +
            " FROM trials t JOIN campaigns c ON c.id = t.campaign_id"
            " JOIN targets g ON g.id = c.target_id JOIN workloads w ON w.id = c.workload_id"
            " JOIN kernels k ON k.id = w.kernel_id WHERE 1" + w + " ORDER BY t.id", a)
        for r in rows:
            for k in ("config", "counters", "measurements", "runtimes"):
                r[k] = _json(r[k])
            r["noisy"] = bool(r["noisy"])
            r["loaded"] = bool(r["loaded"])   # measured on a busy machine (schema 9)
        return self._out(rows, as_frame, "config" if expand_config else None)

    def pins(self, target=None, kernel=None, workload=None, tag=None, history=False,
             as_frame=False):
        """Pins: the current version of each (target, workload); history=True
        every version (oldest first per workload); tag="R" the versions
        release R binds (an unknown tag is a DatabaseError). Each: target,
        fingerprint, kernel, workload, version, current, config (dict), trial,
        time_s (its trial's; None without one), pinned_by, reason,
        foreign_origin, created, predicted (made from a model-only target's
        prediction: its trial's origin is 'predicted'; schema 10)."""
        w, a = self._where([("g.name = ?", target), ("k.name = ?", kernel),
                            ("w.key = ?", workload)])
        if tag is not None:
            if not self._rows("SELECT 1 FROM tags WHERE name = ?", [tag]):
                raise DatabaseError("%s: no release tag '%s'" % (self.path, tag))
            scope = " AND p.id IN (SELECT tp.pin_id FROM tag_pins tp JOIN tags x" \
                    " ON x.id = tp.tag_id WHERE x.name = ?)"
            a = a + [tag]
        elif history:
            scope = ""
        else:
            scope = " AND cur.pin_id IS NOT NULL"
        rows = self._rows(
            "SELECT g.name AS target, g.fingerprint, k.name AS kernel, w.key AS workload,"
            " p.version, cur.pin_id IS NOT NULL AS current, p.config, p.trial_id AS trial,"
            " t.time AS time_s, p.pinned_by, p.reason, p.foreign_origin, p.created,"
            " coalesce(t.origin = 'predicted', 0) AS predicted"
            " FROM pins p JOIN targets g ON g.id = p.target_id"
            " JOIN workloads w ON w.id = p.workload_id JOIN kernels k ON k.id = w.kernel_id"
            " LEFT JOIN trials t ON t.id = p.trial_id"
            " LEFT JOIN pin_current cur ON cur.pin_id = p.id"
            " WHERE 1" + w + scope + " ORDER BY p.target_id, p.workload_id, p.version", a)
        for r in rows:
            r["config"] = _json(r["config"])
            r["current"] = bool(r["current"])
            r["foreign_origin"] = bool(r["foreign_origin"])
            r["predicted"] = bool(r["predicted"])
        return self._out(rows, as_frame)

    def tags(self, as_frame=False):
        """Release tags, oldest first: name, note, created, pins (how many)."""
        rows = self._rows("SELECT t.name, t.note, t.created,"
                          " (SELECT count(*) FROM tag_pins tp WHERE tp.tag_id = t.id) AS pins"
                          " FROM tags t ORDER BY t.id", [])
        return self._out(rows, as_frame)
