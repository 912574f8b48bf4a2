"""rooftune.Database: the read-only records against what the tests put in
(conftest's T4 files: counts, statuses, times, configurations, pins), the
file left byte for byte as it was, and the refusals (another program's
file, a newer or older schema, a missing file)."""
import hashlib
import os
import re
import sqlite3

import pytest

import rooftune
from conftest import CONFIGS, FAILED, ROOT, WORKLOADS, best_config


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_trials_are_what_was_imported(toy_db):
    path, info = toy_db
    with rooftune.Database(path) as db:
        for n, times in WORKLOADS.items():
            rows = db.trials(target="box", kernel="toy", workload="toy f32 N=%d" % n)
            assert [r["campaign"] for r in rows] == [info["campaigns"][n]] * (len(CONFIGS) + 1)
            ok = [r for r in rows if r["status"] == "ok"]
            assert [(r["config"]["bs"], r["config"]["u"]) for r in ok] == CONFIGS
            assert [r["time_s"] for r in ok] == pytest.approx([t / 1000 for t in times],
                                                             rel=1e-12)
            assert all(r["runtimes"] == pytest.approx([r["time_s"]]) for r in ok)
            failed = [r for r in rows if r["status"] != "ok"]
            assert len(failed) == 1 and failed[0]["status"] == "compile_error"
            assert failed[0]["config"] == {"bs": FAILED[0], "u": FAILED[1]}
            assert failed[0]["time_s"] is None
        assert len(db.trials()) == len(WORKLOADS) * (len(CONFIGS) + 1)
        assert len(db.trials(status="compile_error")) == len(WORKLOADS)


def test_campaigns(toy_db):
    path, info = toy_db
    with rooftune.Database(path) as db:
        rows = db.campaigns(kernel="toy")
        assert [r["id"] for r in rows] == sorted(info["campaigns"].values())
        for r in rows:
            n = int(r["workload"].split("=")[1])
            assert r["id"] == info["campaigns"][n]
            assert (r["target"], r["state"], r["trials"], r["ok"]) == \
                ("box", "imported", len(CONFIGS) + 1, len(CONFIGS))
            assert r["fingerprint"] == "external"
            assert r["provenance"]["format"] == "t4"
        assert db.campaigns(state="done") == []
        assert [w["sizes"] for w in db.workloads(kernel="toy")] == [{"N": n} for n in WORKLOADS]
        (t,) = db.targets(name="box")
        # the first import made the target row, and says where it came from
        assert (t["fingerprint"], t["description"]) == (
            "external", {"imported_from": os.path.join(info["dir"], "toy_1024.json")})
        (k,) = db.kernels(name="toy")
        assert (k["template_version"], k["default_config"]) == ("external", None)


def test_pins_current_history_and_tag(toy_db):
    path, info = toy_db
    with rooftune.Database(path) as db:
        cur = db.pins(kernel="toy")
        assert {p["workload"]: (p["version"], p["config"]) for p in cur} == {
            "toy f32 N=%d" % n: ((2, info["v2_config"]) if n == 1024 else (1, best_config(t)))
            for n, t in WORKLOADS.items()}
        assert all(p["current"] and p["foreign_origin"] for p in cur)
        hist = db.pins(kernel="toy", workload="toy f32 N=1024", history=True)
        assert [(p["version"], p["current"]) for p in hist] == [(1, False), (2, True)]
        assert hist[0]["config"] == best_config(WORKLOADS[1024])
        assert hist[0]["time_s"] == pytest.approx(min(WORKLOADS[1024]) / 1000)
        assert hist[1]["reason"] == "test: version 2"
        tagged = db.pins(tag="r1")
        assert sorted((p["workload"], p["version"]) for p in tagged) == \
            sorted(("toy f32 N=%d" % n, 1) for n in WORKLOADS)
        assert db.tags() == [{"name": "r1", "note": "first release",
                              "created": db.tags()[0]["created"], "pins": len(WORKLOADS)}]
        with pytest.raises(rooftune.DatabaseError, match="no release tag 'r2'"):
            db.pins(tag="r2")


def test_read_only(toy_db, copy_of):
    """Reading changes no byte and makes nothing beside the file; a write
    through the package's connection is refused by SQLite."""
    path = copy_of(toy_db[0])
    before, files = digest(path), sorted(os.listdir(os.path.dirname(path)))
    with rooftune.Database(path) as db:
        db.trials(), db.campaigns(), db.pins(history=True), db.tags(), db.targets()
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            db._con.execute("DELETE FROM trials")
    assert digest(path) == before
    assert sorted(os.listdir(os.path.dirname(path))) == files


def test_refusals(tmp_path, toy_db, copy_of):
    with pytest.raises(rooftune.DatabaseError, match="no such file"):
        rooftune.Database(str(tmp_path / "missing.db"))
    assert not os.path.exists(tmp_path / "missing.db")
    other = str(tmp_path / "other.db")
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE notes(x)")
    con.commit()
    con.close()
    with pytest.raises(rooftune.DatabaseError, match="not a rooftune database.*'notes'"):
        rooftune.Database(other)
    for version, what in ((rooftune.SCHEMA_MAX + 1, "newer"), (rooftune.SCHEMA_MIN - 1, "older")):
        crafted = copy_of(toy_db[0])
        con = sqlite3.connect(crafted)
        con.execute("PRAGMA user_version = %d" % version)
        con.commit()
        con.close()
        before = digest(crafted)
        with pytest.raises(rooftune.DatabaseError, match="schema version %d is %s" % (version, what)):
            rooftune.Database(crafted)
        assert digest(crafted) == before
        os.unlink(crafted)


def test_schema_max_is_the_writers():
    """SCHEMA_MAX is db/db.h's DB_SCHEMA_VERSION: a schema bump must look at
    what this package reads (db/SCHEMA.md) and raise it."""
    with open(os.path.join(ROOT, "db", "db.h")) as f:
        m = re.search(r"#define DB_SCHEMA_VERSION (\d+)", f.read())
    assert int(m.group(1)) == rooftune.SCHEMA_MAX, \
        "db.h's schema version changed: check python/rooftune/records.py against " \
        "db/SCHEMA.md and set SCHEMA_MAX"


def test_flatten_and_frame(toy_db):
    path, _ = toy_db
    with rooftune.Database(path) as db:
        rows = db.trials(workload="toy f32 N=4096", status="ok")
        flat = rooftune.flatten(rows, "config")
        assert [(r["config.bs"], r["config.u"]) for r in flat] == CONFIGS
        assert all("config" not in r for r in flat)
        try:
            import pandas  # noqa: F401
        except ImportError:
            with pytest.raises(ImportError, match="pandas is not installed"):
                db.trials(as_frame=True)
            pytest.skip("pandas is not installed: DataFrames not checked (records were)")
        df = db.trials(workload="toy f32 N=4096", status="ok", as_frame=True, expand_config=True)
        assert list(df["config.bs"]) == [c[0] for c in CONFIGS]
        assert list(df["time_s"]) == pytest.approx([t / 1000 for t in WORKLOADS[4096]])


MEDIA_CHILD = r"""
import ctypes, json, os, shutil, sys
src, mnt, pkg = sys.argv[1:4]
libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                       ctypes.c_void_p]
CLONE_NEWNS, CLONE_NEWUSER, MS_RDONLY, MS_REMOUNT, MS_REC, MS_PRIVATE = \
    0x20000, 0x10000000, 1, 32, 16384, 1 << 18
def skip(what):
    print(json.dumps({"skip": "%s: %s" % (what, os.strerror(ctypes.get_errno()))}))
    sys.exit(0)
if libc.unshare(CLONE_NEWNS if os.geteuid() == 0 else CLONE_NEWUSER | CLONE_NEWNS):
    skip("no mount namespace here")
if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None):
    skip("mount --make-rprivate /")
if libc.mount(b"tmpfs", mnt.encode(), b"tmpfs", 0, None):
    skip("mount tmpfs")
db = os.path.join(mnt, "wal.db")
shutil.copyfile(src, db)
if libc.mount(None, mnt.encode(), None, MS_REMOUNT | MS_RDONLY, None):
    skip("remount read-only")
sys.path.insert(0, pkg)
import rooftune
with rooftune.Database(db) as d:
    out = {"trials": len(d.trials()), "pins": sorted((p["workload"], p["version"]) for p in d.pins())}
out["beside"] = sorted(os.listdir(mnt))
print(json.dumps(out))
"""


def test_read_only_media(toy_db, tmp_path, copy_of):
    """A WAL-mode file with no -wal on read-only media (a tmpfs remounted
    read-only in a mount namespace of a child process) is read as
    immutable, as rtdb_open reads it; in a writable place it reads as usual."""
    import json
    import subprocess
    import sys
    wal = copy_of(toy_db[0])
    con = sqlite3.connect(wal)
    assert con.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal"
    con.close()
    with open(wal, "rb") as f:
        assert f.read(20)[18:20] == b"\x02\x02"   # WAL mode, and no -wal beside it
    assert not os.path.exists(wal + "-wal")
    with rooftune.Database(toy_db[0]) as d:
        want = {"trials": len(d.trials()),
                "pins": sorted([p["workload"], p["version"]] for p in d.pins())}
    mnt = tmp_path / "media"
    mnt.mkdir()
    r = subprocess.run([sys.executable, "-c", MEDIA_CHILD, wal, str(mnt),
                        os.path.join(ROOT, "python")], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    assert r.returncode == 0, r.stderr.decode()
    got = json.loads(r.stdout)
    if "skip" in got:
        pytest.skip("cannot test read-only media: " + got["skip"])
    assert got == dict(want, beside=["wal.db"])
