"""Fixtures of the Python package's tests: the rooftune program and the
reader library of a build ($ROOFTUNE, $ROOFTUNE_LIBRTDB, set by
tests/test_python.c; else the source tree's build/), and databases made
with them from T4 files these tests write, so that every expectation
(fastest trial, nearest workload, counts) is computed here from the data
itself, not by rooftune.
"""
import json
import os
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))   # the package as it is in the tree

import rooftune  # noqa: E402


def _path(env, default):
    p = os.environ.get(env) or os.path.join(ROOT, "build", default)
    if not os.path.exists(p):
        pytest.exit("%s not built (make %s, or set %s)" % (p, "build/" + default, env), 1)
    return os.path.abspath(p)


@pytest.fixture(scope="session")
def exe():
    return _path("ROOFTUNE", "rooftune")


@pytest.fixture(scope="session")
def librtdb():
    return _path("ROOFTUNE_LIBRTDB", "librtdb.so")


# The toy kernel's recorded configurations (bs, u) and, per workload N, the
# time in ms of each; one compile failure per workload (bs=256, u=4).
CONFIGS = [(32, 1), (32, 2), (64, 1), (64, 2), (128, 1), (128, 2)]
WORKLOADS = {1024: [1.5, 1.0, 2.0, 2.5, 3.0, 3.5],       # fastest (32, 2)
             4096: [6.0, 5.5, 4.0, 4.5, 5.0, 7.0],       # fastest (64, 1)
             16384: [30.0, 29.0, 28.0, 27.0, 20.0, 21.0]}  # fastest (128, 1)
FAILED = (256, 4)


def write_t4(path, times_ms):
    """A T4 results file of CONFIGS with these times, and FAILED as a
    compile error."""
    res = []
    for (bs, u), t in zip(CONFIGS, times_ms):
        res.append({"configuration": {"bs": bs, "u": u}, "invalidity": "correct",
                    "correctness": 1, "times": {"runtimes": [t]},
                    "measurements": [{"name": "time", "value": t, "unit": "ms"}]})
    res.append({"configuration": {"bs": FAILED[0], "u": FAILED[1]}, "invalidity": "compile",
                "correctness": 0, "times": {}, "measurements": []})
    with open(path, "w") as f:
        json.dump({"schema_version": "1.0.0", "metadata": {"timeunit": "milliseconds"},
                   "results": res}, f)


def best_config(times_ms):
    i = min(range(len(times_ms)), key=lambda k: times_ms[k])
    return {"bs": CONFIGS[i][0], "u": CONFIGS[i][1]}


@pytest.fixture(scope="session")
def toy_db(tmp_path_factory, exe):
    """A database with kernel "toy" on target "box": one imported campaign
    per workload N of WORKLOADS, each pinned (its fastest trial), then
    release tag "r1"; then N=1024 pinned again (version 2) on its slowest
    trial. Returns (path, info)."""
    d = tmp_path_factory.mktemp("toy")
    path = str(d / "toy.db")
    cli = rooftune.CLI(db=path, exe=exe)
    campaigns = {}
    for n, times in WORKLOADS.items():
        t4 = str(d / ("toy_%d.json" % n))
        write_t4(t4, times)
        campaigns[n] = cli.import_t4(t4, target="box", kernel="toy", set={"N": n})
        cli.pin("box", "toy", set={"N": n})
    cli.tag("r1", note="first release")
    slowest = max(range(len(CONFIGS)), key=lambda k: WORKLOADS[1024][k])
    trial = [t for t in rooftune.Database(path).trials(campaign=campaigns[1024])
             if t["config"] == {"bs": CONFIGS[slowest][0], "u": CONFIGS[slowest][1]}][0]
    cli.pin("box", "toy", set={"N": 1024}, trial=trial["id"], reason="test: version 2")
    return path, {"campaigns": campaigns, "v2_config": trial["config"], "dir": str(d)}


@pytest.fixture
def copy_of(tmp_path):
    """copy_of(path): a byte copy of a closed database in this test's folder
    (to craft; the session's files stay as made)."""
    def make(src):
        dst = str(tmp_path / os.path.basename(src))
        shutil.copyfile(src, dst)
        return dst
    return make
