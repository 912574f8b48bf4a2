"""rooftune.CLI: a real (small) tuning campaign on this machine read back
through the records and the reader; T4 export and re-import giving back
every trial; replay on a T4 file whose optimum is known here; the CLI's
exit statuses as CLIError."""
import json

import pytest

import rooftune
from conftest import CONFIGS, WORKLOADS, best_config, write_t4

HARNESS = ["--time-cap", "0.05", "--min-reps", "3"]


def test_tune_then_read(tmp_path, exe, librtdb):
    db = str(tmp_path / "tune.db")
    cli = rooftune.CLI(db=db, exe=exe)
    rep = cli.tune(kernel="reduction", set={"N": 4096}, budget=3, seed=2, extra=HARNESS)
    assert rep["kernel"] == "reduction" and rep["evaluations"] == 3
    with rooftune.Database(db) as d:
        (c,) = d.campaigns(kernel="reduction")
        assert (c["id"], c["state"], c["strategy"], c["seed"], c["budget"], c["trials"]) == \
            (rep["campaign"], "done", rep["strategy"], 2, 3, 3)
        trials = d.trials(campaign=c["id"])
        assert trials[0]["config"] == rep["default"]["config"]   # the default comes first
        ok = [t for t in trials if t["status"] == "ok"]
        assert len(ok) == rep["status"]["ok"]
        fastest = min(ok, key=lambda t: (t["time_s"], t["id"]))
        assert rep["best"]["config"] == fastest["config"]
        (pin,) = d.pins(kernel="reduction")
        assert (pin["version"], pin["config"]) == (rep["pin_version"], rep["decision"]["config"])
        (k,) = d.kernels(name="reduction")
        assert k["default_config"] == rep["default"]["config"]
    with rooftune.Reader(db, library=librtdb) as r:
        got = r.lookup("host", "reduction", {"N": 4096})
        assert (got.match, got.config, got.pin_version) == \
            ("exact", rep["decision"]["config"], rep["pin_version"])
        assert r.lookup("host", "reduction", {"N": 8192}).match == "nearest"
        # on a target with no pins: the template default the campaign recorded
        got = r.lookup("elsewhere", "reduction", {"N": 4096})
        assert (got.match, got.config) == ("default", rep["default"]["config"])
    with pytest.raises(rooftune.CLIError) as e:
        cli.resume(rep["campaign"])
    assert e.value.rc == 1 and "nothing to resume" in e.value.stderr


def test_family_levels(tmp_path, exe, librtdb):
    """Reader.lookup(on=...) walks the caller's family chain (rtdb_lookup_on):
    the campaign's own fingerprint answers at the target level; another
    machine of the same model, architecture or (when asked) backend gets the
    same pin at that level, naming the host row; another backend gets the
    default. Each answer as `rooftune db lookup` gives it for the same chain."""
    db = str(tmp_path / "fam.db")
    cli = rooftune.CLI(db=db, exe=exe)
    rep = cli.tune(kernel="reduction", set={"N": 4096}, budget=3, seed=2, extra=HARNESS)
    with rooftune.Database(db) as d:
        (t,) = d.targets(name="host")
    assert t["backend"] == "host" and t["model"] and t["arch"]
    other = "0" * 32
    cases = [("host", {"fingerprint": t["fingerprint"]}, "target"),
             (None, {"fingerprint": other, "model": t["model"], "arch": t["arch"],
                     "backend": "host"}, "model"),
             (None, {"fingerprint": other, "arch": t["arch"], "backend": "host"}, "arch"),
             (None, {"fingerprint": other, "backend": "host", "max_level": 4}, "backend"),
             (None, {"fingerprint": other, "backend": "host"}, "default"),
             (None, {"fingerprint": other, "arch": t["arch"], "backend": "cuda"}, "default")]
    flags = {"fingerprint": "--fingerprint", "model": "--model", "arch": "--arch",
             "backend": "--backend", "max_level": "--max-level"}
    with rooftune.Reader(db, library=librtdb) as r:
        for name, on, level in cases:
            got = r.lookup(name, "reduction", {"N": 4096}, on=on)
            assert got.level == level, (on, got)
            if level == "default":
                assert (got.match, got.target, got.config) == \
                    ("default", "", rep["default"]["config"])
            else:
                assert (got.match, got.target, got.fingerprint, got.config) == \
                    ("exact", "host", t["fingerprint"], rep["decision"]["config"])
            args = ["db", "lookup", "--db", db, "--target", name or "nowhere", "--kernel",
                    "reduction", "--set", "N=4096", "--json"]
            for k, v in on.items():
                args += [flags[k], str(v)]
            via_cli = cli.run(*args)
            assert (via_cli["level"], via_cli["config"]) == (got.level, got.config)
        with pytest.raises(TypeError):
            r.lookup(None, "reduction", {"N": 4096}, on={"gpu": "h200"})


def test_usage_error(tmp_path, exe):
    cli = rooftune.CLI(db=str(tmp_path / "u.db"), exe=exe)
    with pytest.raises(rooftune.CLIError) as e:
        cli.tune(kernel="reductio", set={"N": 64}, budget=1)
    assert e.value.rc == 2 and "did you mean 'reduction'" in e.value.stderr
    assert not (tmp_path / "u.db").exists()   # a usage error opens nothing


def test_t4_round_trip(toy_db, tmp_path, exe):
    path, _ = toy_db
    src = rooftune.CLI(db=path, exe=exe)
    doc = src.export_t4("box", "toy", set={"N": 4096})
    assert doc["schema_version"] == "1.0.0" and len(doc["results"]) == len(CONFIGS) + 1
    out = str(tmp_path / "exported.json")
    assert src.export_t4("box", "toy", set={"N": 4096}, out=out) == out
    with open(out) as f:
        assert json.load(f)["results"] == doc["results"]
    copy = str(tmp_path / "copy.db")
    cid = rooftune.CLI(db=copy, exe=exe).import_t4(out, target="copybox", kernel="toy",
                                                   set={"N": 4096})
    keep = ("config", "status", "time_s", "runtimes")
    with rooftune.Database(path) as a, rooftune.Database(copy) as b:
        want = [{k: t[k] for k in keep} for t in a.trials(workload="toy f32 N=4096")]
        got = [{k: t[k] for k in keep} for t in b.trials(campaign=cid)]
    assert got == want   # times exactly: the export writes what imports back as the same double


def test_import_refused(tmp_path, exe):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema_version": "1.0.0", "results": [{"configuration": {"x": 1}}]}')
    db = tmp_path / "b.db"
    with pytest.raises(rooftune.CLIError) as e:
        rooftune.CLI(db=str(db), exe=exe).import_t4(str(bad), target="t", kernel="k")
    assert e.value.rc == 1 and "results[0]" in e.value.stderr
    assert not db.exists()   # nothing imported, no database made


def test_replay(tmp_path, exe):
    t4 = str(tmp_path / "r.json")
    write_t4(t4, WORKLOADS[16384])
    rep = rooftune.CLI(exe=exe).replay("exhaustive", t4=t4, budget=len(CONFIGS))
    assert rep["optimum_s"] == pytest.approx(min(WORKLOADS[16384]) / 1000)
    assert rep["best"]["config"] == best_config(WORKLOADS[16384])
    assert rep["evaluations"] == len(CONFIGS)
