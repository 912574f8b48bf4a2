#!/usr/bin/env python3
"""kt_compare.py -- Kernel Tuner beside rooftune on the same GPU: time the same
configurations of the benchmark hub's convolution with Kernel Tuner's
cuda-python backend ("nvcuda"), and compare with rooftune's T4 export.

Two subcommands:

  kt_compare.py tune --kernel-dir DIR --out KT.json [--configs T4] [--sample N]
                     [--limit N] [--t1 FILE] [--iterations 32] [--seed 1] [--no-verify]
      On the GPU machine. Kernel Tuner 1.5.0 tunes convolution_kernel of
      DIR/convolution_milo.cu (the hub's file) exactly as the hub's
      convolution_milo.py sets it up: a 4096x4096 image, a 15x15 filter also
      copied to the __constant__ d_filter, arguments (output, input, filter),
      grid divisors (block_size_x, tile_size_x) and (block_size_y,
      tile_size_y), 32 iterations, brute force, lang "nvcuda". The
      configurations timed are those of the T4 file --configs (rooftune's
      export: the same configurations rooftune measured), else every valid
      configuration of the T1 space --t1 (default data/t1k/convolution_milo
      .json: parameters and Conditions); --sample N draws N of them at random
      (Python's random.Random(--seed)), --limit keeps the first N.
      Outputs are verified against a NumPy reference (atol 1e-3: a sum of
      225 float32 products) unless --no-verify. Writes KT.json: Kernel
      Tuner's version, the device, the wall time of tune_kernel and per
      configuration, and per configuration its status, time (Kernel Tuner's
      mean over the iterations, ms), the run times and Kernel Tuner's
      compile, verification, benchmark and framework times (ms); and
      KT.json's name with .T4.json: Kernel Tuner's own T4 file.

  kt_compare.py compare KT.json ROOFTUNE_T4 [--json OUT]
      Anywhere (no NumPy needed). Pairs the configurations both measured
      correctly and prints the ratio Kernel Tuner time / rooftune time
      (median, quartiles, 5% and 95%, min, max), the Spearman rank
      correlation of the two timings, the best configuration of each, and
      the tuning wall time per configuration of both (rooftune's from its
      T4 times: compilation + framework + validation + run times).

Run from the project root. Packages on the GPU machine: see README.md
("Kernel Tuner side by side").
"""
import argparse
import gzip
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_T1 = os.path.join(REPO, "data", "t1k", "convolution_milo.json")

IMAGE = 4096          # convolution_milo.cu's image_width/height (fixed in the source)
FILTER = 15           # filter_width/height: the space's single values


def load_json(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)


def t1_space(path):
    """(parameter names in order, {name: values}, [condition expressions]) of a T1 file.
    The Values strings are Python list expressions (our own files'): evaluated with
    range and nothing else in scope."""
    t1 = load_json(path)
    cs = t1["ConfigurationSpace"]
    names, params = [], {}
    for p in cs["TuningParameters"]:
        v = p["Values"]
        values = eval(v, {"__builtins__": {}}, {"range": range}) if isinstance(v, str) else v
        names.append(p["Name"])
        params[p["Name"]] = list(values)
    conds = [c["Expression"] for c in cs.get("Conditions", [])]
    return names, params, conds


def valid(conds, cfg):
    """Every condition true under Python semantics; one that raises counts as false."""
    for c in conds:
        try:
            if not eval(c, {"__builtins__": {}}, dict(cfg)):
                return False
        except Exception:
            return False
    return True


def key(names, cfg):
    return tuple(cfg[n] for n in names)


def t4_results(path):
    """{configuration key: (status, time ms or None, record)} of a T4 file, with the
    parameter order of its first configuration."""
    doc = load_json(path)
    res = doc["results"]
    out = {}
    names = list(res[0]["configuration"].keys()) if res else []
    for r in res:
        t = None
        for m in r.get("measurements", []):
            if m.get("name") == "time" and isinstance(m.get("value"), (int, float)):
                t = float(m["value"])
        out[key(names, r["configuration"])] = (r.get("invalidity", "correct" if t is not None else "?"), t, r)
    return names, out


# ---------------------------------------------------------------- tune

def cmd_tune(a):
    import numpy
    import kernel_tuner
    from kernel_tuner import util
    from importlib.metadata import version

    names, tune_params, conds = t1_space(a.t1)
    if a.configs:
        cnames, recorded = t4_results(a.configs)
        if sorted(cnames) != sorted(names):
            sys.exit(f"kt_compare.py: {a.configs} has parameters {cnames}, the T1 space {names}")
        wanted = [dict(zip(cnames, k)) for k in recorded]
    else:
        import itertools
        wanted = [dict(zip(names, v)) for v in itertools.product(*(tune_params[n] for n in names))]
        wanted = [c for c in wanted if valid(conds, c)]
    if a.sample:
        import random
        wanted = random.Random(a.seed).sample(wanted, min(a.sample, len(wanted)))
    if a.limit:
        wanted = wanted[:a.limit]
    want = {key(names, c) for c in wanted}
    # Only the chosen configurations are in Kernel Tuner's space (one old-style
    # restriction of one argument: Kernel Tuner calls it with the parameter dict).
    def restrict(p):
        return key(names, p) in want

    numpy.random.seed(a.seed)
    size = IMAGE * IMAGE
    input_size = (IMAGE + FILTER - 1) * (IMAGE + FILTER - 1)
    output_image = numpy.zeros(size).astype(numpy.float32)
    input_image = numpy.random.randn(input_size).astype(numpy.float32)
    filter_weights = numpy.random.randn(FILTER * FILTER).astype(numpy.float32)
    answer = None
    if not a.no_verify:
        w = IMAGE + FILTER - 1
        img = input_image.reshape(w, w)
        ref = numpy.zeros((IMAGE, IMAGE), dtype=numpy.float32)
        f = filter_weights.reshape(FILTER, FILTER)
        for i in range(FILTER):
            for j in range(FILTER):
                ref += img[i:i + IMAGE, j:j + IMAGE] * f[i, j]
        answer = [ref.ravel(), None, None]
    with open(os.path.join(a.kernel_dir, "convolution_milo.cu")) as fh:
        source = fh.read()

    start = time.perf_counter()
    results, env = kernel_tuner.tune_kernel(
        "convolution_kernel", source, (IMAGE, IMAGE),
        [output_image, input_image, filter_weights], tune_params,
        grid_div_x=["block_size_x", "tile_size_x"], grid_div_y=["block_size_y", "tile_size_y"],
        cmem_args={"d_filter": filter_weights}, restrictions=[restrict],
        answer=answer, atol=1e-3, lang="nvcuda", iterations=a.iterations, device=0,
        strategy="brute_force", verbose=False, quiet=True)
    wall = time.perf_counter() - start

    per = []
    for r in results:
        t = r.get("time")
        if isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t):
            status = "correct"
        else:
            status = t if isinstance(t, str) else type(t).__name__   # Kernel Tuner's ErrorConfig class
        per.append({
            "configuration": {n: r[n] for n in names},
            "status": status,
            "time_ms": t if status == "correct" else None,
            "times_ms": r.get("times"),
            "compile_time_ms": r.get("compile_time"),
            "verification_time_ms": r.get("verification_time"),
            "benchmark_time_ms": r.get("benchmark_time"),
            "framework_time_ms": r.get("framework_time"),
            "strategy_time_ms": r.get("strategy_time"),
        })
    out = {
        "tool": "kernel_tuner", "version": version("kernel_tuner"),
        "cuda_bindings": version("cuda-bindings"),
        "backend": "nvcuda", "device": env.get("device_name"),
        "kernel": "convolution_kernel (benchmark hub convolution_milo.cu)",
        "iterations": a.iterations, "verified": not a.no_verify,
        "configurations": len(per), "requested": len(want),
        "wall_s": wall, "wall_per_configuration_s": wall / max(len(per), 1),
        "results": per,
    }
    tmp = a.out + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(out, fh, indent=1, default=str)
    os.replace(tmp, a.out)
    from kernel_tuner.file_utils import store_output_file
    t4 = (a.out[:-5] if a.out.endswith(".json") else a.out) + ".T4.json"
    store_output_file(t4, results, tune_params)
    ok = sum(1 for p in per if p["status"] == "correct")
    print(f"kt_compare.py: {len(per)} configurations ({ok} correct) on {out['device']} in {wall:.1f} s "
          f"({out['wall_per_configuration_s']:.3f} s each); {a.out}, {t4}")
    return 0


# ---------------------------------------------------------------- compare

def quantile(xs, q):
    """Linear interpolation between order statistics (numpy's default)."""
    xs = sorted(xs)
    pos = (len(xs) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def ranks(xs):
    """Average ranks (ties share the mean of their positions), 1-based."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(x, y):
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def rooftune_wall_ms(rec):
    """Tuning time of one configuration from its T4 times (ms): compilation,
    framework, validation, search algorithm, and benchmark (rooftune's export:
    the wall time of the timed runs) or, where absent, the sum of the run times."""
    t = rec.get("times", {})
    s = 0.0
    for k in ("compilation", "framework", "validation", "search_algorithm"):
        v = t.get(k)
        if isinstance(v, (int, float)):
            s += v
    b = t.get("benchmark")
    if isinstance(b, (int, float)):
        s += b
    else:
        s += sum(x for x in t.get("runtimes", []) if isinstance(x, (int, float)))
    return s


def cmd_compare(a):
    kt = load_json(a.kt)
    names, ours = t4_results(a.rooftune)
    pairs = []
    for r in kt["results"]:
        k = key(names, r["configuration"])
        if r["status"] == "correct" and k in ours and ours[k][1] is not None:
            pairs.append((k, r["time_ms"], ours[k][1]))
    if not pairs:
        sys.exit("kt_compare.py: no configuration measured correctly by both")
    ratio = [p[1] / p[2] for p in pairs]
    rho = spearman([p[1] for p in pairs], [p[2] for p in pairs])
    best_kt = min(pairs, key=lambda p: p[1])
    best_rt = min(pairs, key=lambda p: p[2])
    rt_wall = sum(rooftune_wall_ms(rec) for _, _, rec in ours.values()) / 1e3
    summary = {
        "paired": len(pairs), "kt_configurations": len(kt["results"]), "rooftune_configurations": len(ours),
        "ratio_kt_over_rooftune": {
            "median": quantile(ratio, 0.5), "q1": quantile(ratio, 0.25), "q3": quantile(ratio, 0.75),
            "p05": quantile(ratio, 0.05), "p95": quantile(ratio, 0.95), "min": min(ratio), "max": max(ratio)},
        "spearman": rho,
        "best_kt": {"configuration": dict(zip(names, best_kt[0])), "kt_ms": best_kt[1], "rooftune_ms": best_kt[2]},
        "best_rooftune": {"configuration": dict(zip(names, best_rt[0])), "kt_ms": best_rt[1], "rooftune_ms": best_rt[2]},
        "kt_wall_per_configuration_s": kt["wall_per_configuration_s"],
        "rooftune_t4_time_per_configuration_s": rt_wall / max(len(ours), 1),
    }
    q = summary["ratio_kt_over_rooftune"]
    print(f"{len(pairs)} configurations measured correctly by both ({len(kt['results'])} by Kernel Tuner, "
          f"{len(ours)} in rooftune's T4)")
    print(f"time ratio Kernel Tuner / rooftune: median {q['median']:.3f}, quartiles {q['q1']:.3f}-{q['q3']:.3f}, "
          f"5%-95% {q['p05']:.3f}-{q['p95']:.3f}, range {q['min']:.3f}-{q['max']:.3f}")
    print(f"Spearman rank correlation of the two timings: {rho:.4f}")
    print(f"best by Kernel Tuner: {summary['best_kt']}")
    print(f"best by rooftune:     {summary['best_rooftune']}")
    print(f"tuning wall time per configuration: Kernel Tuner {summary['kt_wall_per_configuration_s']:.3f} s "
          f"(tune_kernel's wall time / configurations), rooftune {summary['rooftune_t4_time_per_configuration_s']:.3f} s "
          f"(its T4 times summed; the campaign's own wall time is the fairer figure where it was taken)")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(summary, fh, indent=1)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tune", help="time the configurations with Kernel Tuner (GPU machine)")
    t.add_argument("--kernel-dir", required=True, help="folder holding the hub's convolution_milo.cu")
    t.add_argument("--out", required=True, help="the JSON to write")
    t.add_argument("--configs", help="a T4 file (rooftune's export): time its configurations")
    t.add_argument("--t1", default=DEFAULT_T1, help="the T1 space (default data/t1k/convolution_milo.json)")
    t.add_argument("--sample", type=int, default=0, help="time a uniform random sample of this many (seed --seed)")
    t.add_argument("--limit", type=int, default=0, help="time at most this many configurations")
    t.add_argument("--iterations", type=int, default=32, help="runs per configuration (the hub's: 32)")
    t.add_argument("--seed", type=int, default=1, help="seed of the inputs (NumPy) and of --sample")
    t.add_argument("--no-verify", action="store_true", help="skip the NumPy reference and verification")
    c = sub.add_parser("compare", help="compare Kernel Tuner's JSON with rooftune's T4 export")
    c.add_argument("kt")
    c.add_argument("rooftune")
    c.add_argument("--json", help="also write the summary here")
    a = ap.parse_args()
    return cmd_tune(a) if a.cmd == "tune" else cmd_compare(a)


if __name__ == "__main__":
    sys.exit(main())
