"""side_by_side.py REPEATS OURS_DIR KT_RUNS_CSV -- the markdown table of
rooftune's and Kernel Tuner's scores per file (mean +- sd over the repeats,
and the standard error of the mean), from KT_RUNS_CSV (run_kt.py's runs.csv)
and OURS_DIR/<file>/scores.csv (side_by_side.sh)."""
import csv, math, statistics, sys
from collections import defaultdict

FILES = ["convolution_milo_A100", "convolution_milo_A4000", "dedispersion_milo_A100", "pnpoly_RTX_3090"]
OURS, KT_RUNS = sys.argv[2], sys.argv[3]

def ours(f):
    s = defaultdict(list)
    for r in csv.DictReader(open(f"{OURS}/{f}/scores.csv")):
        s[r["strategy"]].append(float(r["score"]))
    return s

def kt(f):
    s = defaultdict(list)
    for r in csv.DictReader(open(KT_RUNS)):
        if r["file"] == f:
            s[r["strategy"]].append(float(r["score"]))
    return s

def cell(x):
    m, sd = statistics.mean(x), statistics.stdev(x) if len(x) > 1 else 0
    return f"{m:.3f} ± {sd:.3f} (se {sd / math.sqrt(len(x)):.3f})", m

print(f"# rooftune against Kernel Tuner 1.5.0: Willemsen et al. score, 5% budget, seeds 1..{sys.argv[1]}\n")
print("Mean ± sd over the repeats, with the standard error of the mean. 0 = random search's exact")
print("expectation, 1 = the optimum from the first evaluation. rooftune: `rooftune compare`;")
print("Kernel Tuner: `run_kt.py` (simulation mode, default strategy options).\n")
for f in FILES:
    a, b = ours(f), kt(f)
    print(f"## {f}\n")
    print("| rooftune strategy | score | | Kernel Tuner strategy | score |")
    print("|---|---|---|---|---|")
    ra = sorted(a, key=lambda k: -statistics.mean(a[k]))
    rb = sorted(b, key=lambda k: -statistics.mean(b[k]))
    for i in range(max(len(ra), len(rb))):
        x = f"{ra[i]} | {cell(a[ra[i]])[0]}" if i < len(ra) else " | "
        y = f"{rb[i]} | {cell(b[rb[i]])[0]}" if i < len(rb) else " | "
        print(f"| {x} | | {y} |")
    ba, bb = ra[0], rb[0]
    ma, mb = statistics.mean(a[ba]), statistics.mean(b[bb])
    se = math.sqrt(statistics.variance(a[ba]) / len(a[ba]) + statistics.variance(b[bb]) / len(b[bb]))
    print(f"\nBest: rooftune `{ba}` {ma:.3f} against Kernel Tuner `{bb}` {mb:.3f}: difference "
          f"{ma - mb:+.3f} (standard error {se:.3f}, {abs(ma - mb) / se:.1f} se).\n")
