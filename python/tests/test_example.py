"""examples/python_lookup.py run as a user runs it: the pin of the exact
shape, a neighbour's pin, the release's, and the application's fallback
(no database, --exact-only off the pinned shapes)."""
import json
import os
import subprocess
import sys

from conftest import ROOT, WORKLOADS, best_config

EXAMPLE = os.path.join(ROOT, "examples", "python_lookup.py")
MINE = {"bs": 16, "u": 1}


def run(db, librtdb, *args):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, EXAMPLE, "--db", db, "--target", "box", "--kernel",
                        "toy", "--default", json.dumps(MINE), "--library", librtdb] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert r.returncode == 0, r.stderr.decode()
    return json.loads(r.stdout)


def test_example(toy_db, librtdb, tmp_path):
    db, info = toy_db
    got = run(db, librtdb, "N=4096")
    assert (got["source"], got["config"], got["pin_version"]) == \
        ("exact", best_config(WORKLOADS[4096]), 1)
    got = run(db, librtdb, "N=12000")   # log2 distance 0.45 to 16384, 1.55 to 4096
    assert (got["source"], got["workload"], got["config"]) == \
        ("nearest", "toy f32 N=16384", best_config(WORKLOADS[16384]))
    assert run(db, librtdb, "N=1024")["config"] == info["v2_config"]
    assert run(db, librtdb, "--tag", "r1", "N=1024")["config"] == best_config(WORKLOADS[1024])
    got = run(db, librtdb, "--exact-only", "N=12000")
    assert (got["source"], got["config"]) == ("fallback", MINE)
    assert "nearest" in got["why"]
    got = run(str(tmp_path / "none.db"), librtdb, "N=4096")
    assert (got["source"], got["config"]) == ("fallback", MINE)
    assert "RTDB_CANTOPEN" in got["why"]
