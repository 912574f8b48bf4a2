#!/usr/bin/env python3
"""summarise.py OUT -- the tables of experiments/cost_model/run.sh from what it
wrote under OUT: the ceilings, the accuracy of each calibrated model on its
held-out schedules (defaults against calibrated, per workload), and, per fully
measured space, how many trials each strategy needs to come within 5% of the
space's best schedule (median and quartiles over the seeds; a run that never
gets there counts as needing more than the whole space). Standard library only."""
import csv
import glob
import gzip
import json
import os
import statistics
import sys

out = sys.argv[1] if len(sys.argv) > 1 else "experiments/cost_model/results"


def quartiles(v):
    v = sorted(v)
    if len(v) < 2:
        return v[0], v[0], v[0]
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], statistics.median(v), q[2]


print("# Cost model quality (issue 6)\n")
print("Produced by `sh experiments/cost_model/run.sh`; every figure below is computed from the files"
      " next to this one.\n")
ce = os.path.join(out, "ceilings.txt")
if os.path.exists(ce):
    print("## Ceilings of this machine (`rooftune bench --force`)\n\n```")
    with open(ce) as f:
        print(f.read().split("\nsweep")[0].rstrip())
    print("```\n")

print("## Accuracy on held-out schedules\n")
print("Calibrated on 70% of each workload's random sample, scored on the other 30% (seed 1)."
      " top-k: a schedule within 5% of the best measured one is among the model's k fastest"
      " predictions.\n")
print("| kernel | workload | held out | coefficients | Spearman | Kendall | top-1 | top-5 | top-10"
      " | median rel. error |")
print("|---|---|---|---|---|---|---|---|---|---|")
for path in sorted(glob.glob(os.path.join(out, "calibrate_*.json"))):
    with open(path) as f:
        j = json.load(f)
    for w in j["fit"]["accuracy"]:
        for which in ("defaults", "calibrated"):
            a = w[which]
            print("| %s | %s | %d | %s | %.3f | %.3f | %s | %s | %s | %.1f%% |" % (
                j["kernel"], w["workload"].split(" ", 2)[2], a["n"],
                which if which == "defaults" else "version %d" % j["version"],
                a["spearman"], a["kendall"],
                *("yes" if a["top%d_within_5pct" % k] else "no" for k in (1, 5, 10)),
                100 * a["median_rel_error"]))
print()

print("## Trials to come within 5% of the best schedule (replay over fully measured spaces)\n")
print("20 seeds per strategy; the model-guided strategy starts from the calibration above (made on"
      " other workloads of the kernel) and recalibrates as its results arrive.\n")
print("| kernel | space | strategy | median trials | quartiles | runs within 5% | vs random (median) |")
print("|---|---|---|---|---|---|---|")
for d in sorted(glob.glob(os.path.join(out, "*", "curves.csv*"))):
    kernel = os.path.basename(os.path.dirname(d))
    runs = {}
    with (gzip.open(d, "rt") if d.endswith(".gz") else open(d)) as f:
        for r in csv.DictReader(f):
            runs.setdefault((r["strategy"], int(r["repeat"])), []).append((int(r["k"]), float(r["best_s"])))
    opt = min(b for v in runs.values() for _, b in v)
    size = max(k for v in runs.values() for k, _ in v)
    need = {}
    for (s, _), v in runs.items():
        hit = [k for k, b in sorted(v) if b <= 1.05 * opt]
        need.setdefault(s, []).append(hit[0] if hit else size + 1)
    rnd = statistics.median(need.get("random", [float("nan")]))
    for s in sorted(need, key=lambda s: (s != "model", s != "random", s)):
        q1, med, q3 = quartiles(need[s])
        ok = sum(n <= size for n in need[s])
        print("| %s | %d schedules | %s | %g | [%g, %g] | %d/%d | %.2f |" % (
            kernel, size, s, med, q1, q3, ok, len(need[s]), med / rnd))
