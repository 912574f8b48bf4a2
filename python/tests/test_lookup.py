"""rooftune.Reader: rtdb_lookup through ctypes, against expectations
computed here -- the fastest trial of each recorded workload, the nearest
pinned workload by brute force over log2 distances, the tagged version,
the crafted template default -- and against `rooftune db lookup --json`."""
import ctypes
import math
import os
import shutil
import sqlite3
import subprocess
import threading

import pytest

import rooftune
from conftest import ROOT, WORKLOADS, best_config


def reader(path, librtdb):
    return rooftune.Reader(path, library=librtdb)


def test_exact(toy_db, librtdb):
    path, info = toy_db
    with reader(path, librtdb) as r:
        for n, times in WORKLOADS.items():
            got = r.lookup("box", "toy", {"N": n})
            assert got.match == "exact"
            assert got.workload == "toy f32 N=%d" % n
            want = info["v2_config"] if n == 1024 else best_config(times)
            assert got.config == want
            assert got.pin_version == (2 if n == 1024 else 1)
            assert got.distance is None
            if n != 1024:
                assert got.time_s == pytest.approx(min(times) / 1000, rel=1e-12)


def nearest_by_brute_force(n):
    """The pinned workload nearest to N=n: smallest |log2 N - log2 n|, ties
    to the smallest key (rtdb.h)."""
    cands = sorted(("toy f32 N=%d" % m, abs(math.log2(m) - math.log2(n))) for m in WORKLOADS)
    return min(cands, key=lambda c: (c[1], c[0]))


def test_nearest_matches_brute_force(toy_db, librtdb):
    path, info = toy_db
    queries = [1, 100, 1023, 1025, 2047, 2048, 2049, 3000, 8191, 8192, 8193, 10000, 16383,
               16385, 1 << 20]
    with reader(path, librtdb) as r:
        for q in queries:
            got = r.lookup("box", "toy", {"N": q})
            key, dist = nearest_by_brute_force(q)
            assert got.match == "nearest", q
            assert got.workload == key, q
            assert got.distance == pytest.approx(dist, abs=1e-9), q
            n = int(key.split("=")[1])
            assert got.config == (info["v2_config"] if n == 1024 else
                                  best_config(WORKLOADS[n])), q


def test_tag_pins_the_answer(toy_db, librtdb):
    path, _ = toy_db
    with reader(path, librtdb) as r:
        got = r.lookup("box", "toy", {"N": 1024}, tag="r1")
        assert (got.match, got.pin_version, got.config) == ("exact", 1,
                                                             best_config(WORKLOADS[1024]))
        # nearest through the tag too: N=1500 is nearest 1024, whose r1 pin is version 1
        assert r.lookup("box", "toy", {"N": 1500}, tag="r1").config == \
            best_config(WORKLOADS[1024])
        with pytest.raises(rooftune.NotFound):
            r.lookup("box", "toy", {"N": 1024}, tag="nosuch")


def test_default_and_not_found(toy_db, librtdb, copy_of):
    path, _ = toy_db
    with reader(path, librtdb) as r:
        # no template default for an imported kernel: nothing to fall back to
        with pytest.raises(rooftune.NotFound) as e:
            r.lookup("elsewhere", "toy", {"N": 1024})
        assert e.value.code == 5 and e.value.name == "RTDB_NOTFOUND"
        with pytest.raises(rooftune.NotFound):
            r.lookup("box", "nosuch", {"N": 1024})
        with pytest.raises(rooftune.RtdbError) as e:
            r.lookup("box", "toy", "N=")
        assert e.value.name == "RTDB_MISUSE"
    crafted = copy_of(path)
    con = sqlite3.connect(crafted)
    con.execute("UPDATE kernels SET default_config = ? WHERE name = 'toy'", ['{"bs":64,"u":2}'])
    con.commit()
    con.close()
    with reader(crafted, librtdb) as r:
        got = r.lookup("elsewhere", "toy", {"N": 1024})
        assert (got.match, got.config, got.workload, got.pin_version, got.time_s) == \
            ("default", {"bs": 64, "u": 2}, "", 0, None)
        assert r.lookup("box", "toy", {"N": 4096}).match == "exact"   # pins still first


def test_open_errors(tmp_path, librtdb):
    with pytest.raises(rooftune.RtdbError) as e:
        reader(str(tmp_path / "missing.db"), librtdb)
    assert e.value.name == "RTDB_CANTOPEN" and "missing.db" in str(e.value)
    other = str(tmp_path / "other.db")
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE notes(x)")
    con.commit()
    con.close()
    with pytest.raises(rooftune.RtdbError) as e:
        reader(other, librtdb)
    assert e.value.name == "RTDB_NOTADB"
    with pytest.raises(OSError) as e:
        rooftune.Reader(other, library=str(tmp_path / "nolib.so"))
    assert "ROOFTUNE_LIBRTDB" in str(e.value)


def test_format_vars():
    assert rooftune.format_vars({"M": 1024, "x": 0.5, "t": True, "s": "it's"}) == \
        "M=1024,x=0.5,t=True,s='it\\'s'"
    assert rooftune.format_vars("M=1,N=2") == "M=1,N=2"
    with pytest.raises(TypeError):
        rooftune.format_vars({"M": [1]})


def test_string_variables(tmp_path, exe, librtdb):
    """A workload keyed by a string variable: the dict's quoting reaches it,
    a quote inside the value included."""
    from conftest import write_t4
    t4 = str(tmp_path / "s.json")
    write_t4(t4, WORKLOADS[4096])
    db = str(tmp_path / "s.db")
    cli = rooftune.CLI(db=db, exe=exe)
    cli.import_t4(t4, target="box", kernel="lay", set="N=64,layout='nh\\'wc'")
    cli.pin("box", "lay", set="N=64")
    cli.import_t4(t4, target="box", kernel="lay2", set={"N": 64, "layout": "nchw"})
    cli.pin("box", "lay2", set={"layout": "nchw"})
    with reader(db, librtdb) as r:
        got = r.lookup("box", "lay", {"N": 64, "layout": "nh'wc"})
        assert got.match == "exact" and got.config == best_config(WORKLOADS[4096])
        got = r.lookup("box", "lay2", {"N": 64, "layout": "nchw"})
        assert (got.match, got.workload) == ("exact", "lay2 f32 N=64 layout='nchw'")
        # another string value is not comparable: no pin applies, no default
        with pytest.raises(rooftune.NotFound):
            r.lookup("box", "lay", {"N": 64, "layout": "nchw"})


def test_same_as_cli(toy_db, exe, librtdb):
    path, _ = toy_db
    cli = rooftune.CLI(db=path, exe=exe)
    with reader(path, librtdb) as r:
        for q in (1024, 3000, 70000):
            for tag in (None, "r1"):
                a = r.lookup("box", "toy", {"N": q}, tag=tag).as_dict()
                b = cli.lookup("box", "toy", {"N": q}, tag=tag)
                assert a["match"] == b["match"] and a["config"] == b["config"]
                assert a["workload"] == b["workload"] and a["pin_version"] == b["pin_version"]


def test_threads(toy_db, librtdb):
    """One handle, several threads: every answer is the single-threaded one."""
    path, _ = toy_db
    queries = [{"N": q} for q in (512, 1024, 3000, 4096, 9000, 16384, 50000)]
    with reader(path, librtdb) as r:
        want = [r.lookup("box", "toy", q).as_dict() for q in queries]
        bad = []

        def work(k):
            for i in range(300):
                q = (i + k) % len(queries)
                if r.lookup("box", "toy", queries[q]).as_dict() != want[q]:
                    bad.append((k, i))
        ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert bad == []


def test_struct_mirror_matches_rtdb_h(tmp_path):
    """RESULT_FIELDS against the C compiler's layout of rtdb_result: the size
    and every field's offset (a field rtdb.h appends and the mirror lacks
    fails here)."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to read rtdb_result's layout")
    from rooftune import _rtdb
    names = [n for n, _ in _rtdb.RESULT_FIELDS]
    src = tmp_path / "layout.c"
    src.write_text('#include <stdio.h>\n#include <stddef.h>\n#include "rtdb.h"\n'
                   "int main(void) {\n"
                   '  printf("size %zu\\n", sizeof(rtdb_result));\n' +
                   "".join('  printf("%s %%zu\\n", offsetof(rtdb_result, %s));\n' % (n, n)
                           for n in names) +
                   "  return 0;\n}\n")
    exe = str(tmp_path / "layout")
    subprocess.run([cc, "-std=c11", "-I", os.path.join(ROOT, "db"), str(src), "-o", exe],
                   check=True)
    got = dict(line.split() for line in subprocess.run(
        [exe], stdout=subprocess.PIPE, check=True).stdout.decode().splitlines())
    assert int(got["size"]) == ctypes.sizeof(_rtdb.RtdbResult), \
        "sizeof(rtdb_result) differs from python/rooftune/_rtdb.py's RESULT_FIELDS: append " \
        "the fields rtdb.h added"
    for n in names:
        assert int(got[n]) == getattr(_rtdb.RtdbResult, n).offset, n
