#!/usr/bin/env python3
"""pair_verify.py HOST.db DEVICE.db -- the verification time of the same
configurations measured twice (experiments/h200/run.sh vcheck: on the host,
then on the GPU): each configuration's verify_s paired by config_hash over
the trials that verified (status ok, measured here), with the medians,
quartiles and the per-configuration ratio host / device. Reads gzipped
databases too (decompressed into a temporary file)."""
import gzip
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile


def trials(path):
    tmp = None
    if path.endswith(".gz"):
        fd, tmp = tempfile.mkstemp(suffix=".db")
        with gzip.open(path, "rb") as src, os.fdopen(fd, "wb") as dst:
            shutil.copyfileobj(src, dst)
        path = tmp
    try:
        con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        rows = con.execute("SELECT config_hash, verify_s FROM trials "
                           "WHERE status = 'ok' AND origin = 'measured'").fetchall()
        con.close()
    finally:
        if tmp:
            os.unlink(tmp)
    return dict(rows)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: pair_verify.py HOST.db DEVICE.db")
    host, dev = trials(sys.argv[1]), trials(sys.argv[2])
    both = sorted(set(host) & set(dev))
    if not both:
        sys.exit("no configuration verified in both")
    for name, t in (("host", host), ("device", dev)):
        v = [t[h] * 1e3 for h in both]
        q = statistics.quantiles(v, n=4)
        print("%-6s median %.1f ms [q1 %.1f, q3 %.1f]" % (name, statistics.median(v), q[0], q[2]))
    r = [host[h] / dev[h] for h in both if dev[h] > 0]
    print("pairs %d: host / device median %.0fx (range %.0f to %.0f)"
          % (len(both), statistics.median(r), min(r), max(r)))


if __name__ == "__main__":
    main()
