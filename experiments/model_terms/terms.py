#!/usr/bin/env python3
"""terms.py -- which term of a host cost model mis-ranks its schedules: for
every measured schedule of a kernel in a rooftune database, the model's work
per level and bound times (`rooftune model explain --json`), the measured time
(median of its ok trials), the residual log(measured / predicted), and the
traffic cachegrind counted where the database holds it; then, per workload,
Spearman's rho and the median residual per value of each tuning parameter
(a parameter whose values have different medians is one whose effect the
model's form misses: calibration cannot move it), and the model's bytes
against the counted ones. Nothing is timed. Standard library only.

usage: terms.py --kernel K [--db F] [--rooftune BIN] [--version N|--defaults]
                [--csv FILE] [--by PARAM,...]
"""
import argparse
import json
import math
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile


def ranks(v):
    """Mid-ranks of v (ties share the mean rank)."""
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(x, y):
    rx, ry = ranks(x), ranks(y)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--db", default="experiments/cost_model/results/cost_model.db")
    ap.add_argument("--rooftune", default="build/rooftune")
    ap.add_argument("--version", type=int, default=0, help="calibration (default the latest)")
    ap.add_argument("--defaults", action="store_true", help="the model's default coefficients")
    ap.add_argument("--csv", help="every schedule's row")
    ap.add_argument("--by", default="", help="extra groupings: PARAM+PARAM,... (joint values)")
    a = ap.parse_args()

    # rooftune opens a database for writing (schema, ceilings): work on a copy
    tmp = tempfile.mkdtemp()
    src, a.db = a.db, os.path.join(tmp, "terms.db")
    shutil.copyfile(src, a.db)
    con = sqlite3.connect(a.db)
    rows = con.execute(
        "SELECT w.id, w.key, t.config_hash, t.config, t.time FROM trials t "
        "JOIN campaigns c ON c.id = t.campaign_id JOIN workloads w ON w.id = c.workload_id "
        "JOIN kernels k ON k.id = w.kernel_id WHERE k.name = ? AND t.status = 'ok'",
        (a.kernel,)).fetchall()
    if not rows:
        sys.exit("terms.py: %s holds no ok trial of kernel %s" % (a.db, a.kernel))
    times, cfgs, keys = {}, {}, {}
    for wid, key, h, cfg, t in rows:
        times.setdefault((wid, h), []).append(t)
        cfgs[(wid, h)] = cfg
        keys[wid] = key
    counted = {}
    for wid, h, data in con.execute(
            "SELECT workload_id, config_hash, data FROM counters WHERE source = 'cachegrind'"):
        counted[(wid, h)] = json.loads(data)

    pts = []
    for (wid, h), ts in sorted(times.items()):
        key = keys[wid]
        sets = ",".join(key.split(" ")[2:])           # "conv2d f32 N=1 H=28 ..." -> N=1,H=28,...
        cmd = [a.rooftune, "model", "explain", "--db", a.db, "--kernel", a.kernel, "--set", sets,
               "--config", cfgs[(wid, h)], "--json"]
        if a.defaults:
            cmd.append("--defaults")
        elif a.version:
            cmd += ["--version", str(a.version)]
        ex = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        meas = statistics.median(ts)
        pts.append({"workload": key, "config": json.loads(cfgs[(wid, h)]), "measured": meas,
                    "predicted": ex["predicted_s"], "bound": ex["bound"], "bounds": ex["bounds"],
                    "eff": ex.get("efficiency", {}), "counted": counted.get((wid, h)),
                    "resid": math.log(meas / ex["predicted_s"])})
    coefs = ex["coefficients"]

    levels = ["L1", "L2", "L3", "DRAM"]
    if a.csv:
        with open(a.csv, "w") as f:
            params = list(pts[0]["config"].keys())
            effs = sorted(pts[0]["eff"].keys())
            f.write(",".join(["workload"] + params + ["measured_s", "predicted_s", "resid", "bound"]
                             + ["bytes_" + l for l in levels] + ["t_" + b for b in ["compute"] + levels]
                             + ["eff_" + e for e in effs]
                             + ["cg_" + l for l in levels[1:]]) + "\n")
            for p in pts:
                c = p["counted"] or {}
                f.write(",".join(['"%s"' % p["workload"]] + [str(p["config"][k]) for k in params]
                                 + ["%.6g" % p["measured"], "%.6g" % p["predicted"], "%.4f" % p["resid"],
                                    p["bound"]]
                                 + ["%.6g" % p["bounds"][l]["work"] for l in levels]
                                 + ["%.4g" % p["bounds"][b]["time_s"] for b in ["compute"] + levels]
                                 + ["%.4g" % p["eff"][e] for e in effs]
                                 + ["%.6g" % c[l] if l in c else "" for l in levels[1:]]) + "\n")

    shutil.rmtree(tmp)
    print("# %s: model terms against measurements (%s; %s)\n" % (a.kernel, src, coefs))
    for key in sorted(set(p["workload"] for p in pts)):
        w = [p for p in pts if p["workload"] == key]
        rho = spearman([p["predicted"] for p in w], [p["measured"] for p in w])
        res = [p["resid"] for p in w]
        print("## %s\n\n%d schedules; Spearman %.3f; residual log(measured/predicted) median %.3f, "
              "MAD %.3f\n" % (key, len(w), rho, statistics.median(res),
                               statistics.median([abs(r - statistics.median(res)) for r in res])))
        groups = [[k] for k in w[0]["config"]] + [g.split("+") for g in a.by.split(",") if g]
        print("| parameter | value | n | median residual | median measured (ms) | median predicted (ms) |")
        print("|---|---|---|---|---|---|")
        for g in groups:
            vals = {}
            for p in w:
                vals.setdefault(tuple(str(p["config"][k]) for k in g), []).append(p)
            if len(vals) < 2:
                continue
            for v in sorted(vals, key=lambda v: [float(x) if x.replace(".", "").isdigit() else x
                                                 for x in v] if all(x.replace(".", "").isdigit()
                                                                    for x in v) else v):
                s = vals[v]
                print("| %s | %s | %d | %+.3f | %.3f | %.3f |" % (
                    "+".join(g), "+".join(v), len(s), statistics.median(p["resid"] for p in s),
                    1e3 * statistics.median(p["measured"] for p in s),
                    1e3 * statistics.median(p["predicted"] for p in s)))
        print()
        bd = {}
        for p in w:
            bd.setdefault(p["bound"], []).append(p["resid"])
        print("limiting bound: " + ", ".join("%s %d (median residual %+.3f)" % (b, len(r), statistics.median(r))
                                             for b, r in sorted(bd.items())) + "\n")
        cg = [p for p in w if p["counted"]]
        if cg:
            print("counted traffic (cachegrind, one thread, cold) against the model's fills:\n")
            print("| config | level | model bytes | counted bytes | model / counted |")
            print("|---|---|---|---|---|")
            for p in cg:
                for l in levels[1:]:
                    mb, cb = p["bounds"][l]["work"], p["counted"].get(l)
                    if cb:
                        print("| `%s` | %s | %.4g | %.4g | %.2f |" % (
                            json.dumps(p["config"], separators=(",", ":")), l, mb, cb, mb / cb))
            print("\n(the counts are of a cold run: DRAM counts compulsory traffic the warm model "
                  "leaves at 0 when the problem fits L3)\n")


if __name__ == "__main__":
    main()
