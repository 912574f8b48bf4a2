#!/usr/bin/env python3
"""Kernel Tuner's search strategies on the shared T4 recordings, scored with the
Willemsen et al. methodology in rooftune's evaluation-budget convention.

For issue 5 (compare rooftune's strategies with Kernel Tuner's, same files and
budgets).  Steps:

  1. convert each data/t4/*.json.gz recording (plus its T1 space) into
     a Kernel Tuner cache file (caches/<name>.json) that Kernel Tuner's
     simulation mode replays; failed configurations keep Kernel Tuner's own
     error markers ("__error__": "RuntimeFailedConfig" / "CompilationFailedConfig"),
     and the T1 Conditions are passed to tune_kernel as restrictions;
  2. run every Kernel Tuner strategy R times per file with
     tune_kernel(..., simulation_mode=True, cache=..., strategy=S,
     strategy_options={"max_fevals": B}), B = ceil(5% of the recording);
  3. turn the ordered results into a best-so-far curve over evaluations 1..B
     (evaluation = first visit of a recorded configuration, exactly what Kernel
     Tuner's simulation runner counts against max_fevals; failed ones count);
  4. score every curve against the exact expected best-so-far of random search
     without replacement (independent re-implementation of the methodology,
     checked by brute force in --self-test).

Run `python run_kt.py --help` for options, `python run_kt.py --self-test` for
the self-test.  See README.md in this directory.
"""

import argparse
import csv
import gzip
import itertools
import json
import math
import multiprocessing as mp
import os
import random
import statistics
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(REPO, "data")   # the hub's files, copied into the repository

# recording -> (T1 space, device name written into the cache)
FILES = {
    "convolution_milo_A100": ("convolution_milo.json", "A100"),
    "convolution_milo_A4000": ("convolution_milo.json", "A4000"),
    "dedispersion_milo_A100": ("dedispersion_milo.json", "A100"),
    "pnpoly_RTX_3090": ("pnpoly.json", "RTX_3090"),
}

STRATEGIES = [
    "random_sample", "genetic_algorithm", "simulated_annealing", "diff_evo", "pso",
    "firefly_algorithm", "greedy_ils", "greedy_mls", "mls", "ordered_greedy_mls",
    "dual_annealing", "basinhopping", "bayes_opt", "minimize",
]

# Kernel Tuner's error markers (kernel_tuner/util.py read_cache / store_cache)
T4_ERROR = {"runtime": "RuntimeFailedConfig", "compile": "CompilationFailedConfig"}


# --------------------------------------------------------------------------
# T1 / T4 reading and conversion to a Kernel Tuner cache
# --------------------------------------------------------------------------

def load_t1(path):
    """Read a T1 space: ordered tune_params (values evaluated the way Kernel
    Tuner's tune_kernel_T1 does), the Condition expressions, kernel name and
    problem size."""
    with open(path) as f:
        t1 = json.load(f)
    tune_params = {}
    for p in t1["ConfigurationSpace"]["TuningParameters"]:
        if p["Type"] not in ("int", "float"):
            raise ValueError(f"unsupported parameter type in {path}: {p}")
        tune_params[p["Name"]] = list(eval(p["Values"], {}))
    conditions = [c["Expression"] for c in t1["ConfigurationSpace"]["Conditions"]]
    ks = t1["KernelSpecification"]
    return {"tune_params": tune_params, "conditions": conditions,
            "kernel_name": ks["KernelName"], "problem_size": ks["ProblemSize"]}


def t1_valid(config, conditions):
    """True iff every Condition holds under Python semantics (an expression
    that raises counts as false), as in data/README.md."""
    for expr in conditions:
        try:
            if not eval(expr, {}, dict(config)):
                return False
        except Exception:
            return False
    return True


def load_t4(path):
    """Read a T4 recording: list of dicts (config, status, time or None, times)."""
    with gzip.open(path, "rt") as f:
        t4 = json.load(f)
    out = []
    for r in t4["results"]:
        (m,) = [m for m in r["measurements"] if m["name"] == "time"]
        ok = r["invalidity"] == "correct"
        if ok and not isinstance(m["value"], (int, float)):
            raise ValueError(f"correct result without numeric time in {path}")
        out.append({"config": r["configuration"], "status": r["invalidity"],
                    "time": float(m["value"]) if ok else None, "times": r["times"],
                    "timestamp": r.get("timestamp")})
    return out


def cache_key(config, names):
    """Kernel Tuner's cache key: ','.join(str(v) for v in the configuration)."""
    return ",".join(str(config[n]) for n in names)


def convert(name, cache_path):
    """Write the Kernel Tuner cache for recording `name`; return its metadata.

    Entry layout follows what Kernel Tuner 1.5's SequentialRunner stores via
    util.store_cache: the parameters, the objective "time" (ok results), the
    per-repeat "times", compile/verification/benchmark/framework/strategy
    times in ms, a timestamp; failures carry "__error__" set to the error
    class name instead of a time (read back by util.read_cache)."""
    t1_file, device = FILES[name]
    t1 = load_t1(os.path.join(DATA, "t1", t1_file))
    rec = load_t4(os.path.join(DATA, "t4", name + "_T4.json.gz"))
    names = list(t1["tune_params"])
    cache = {}
    for r in rec:
        cfg = r["config"]
        if list(cfg) != names and sorted(cfg) != sorted(names):
            raise ValueError(f"{name}: parameters {list(cfg)} differ from T1 {names}")
        for n in names:
            if cfg[n] not in t1["tune_params"][n]:
                raise ValueError(f"{name}: value {cfg[n]} of {n} not in T1 space")
        if not t1_valid(cfg, t1["conditions"]):
            raise ValueError(f"{name}: recorded configuration {cfg} violates the T1 Conditions")
        key = cache_key(cfg, names)
        if key in cache:
            raise ValueError(f"{name}: duplicate configuration {key}")
        tm = r["times"]
        runtimes = tm.get("runtimes", [])
        e = {n: cfg[n] for n in names}
        if r["status"] == "correct":
            e["time"] = r["time"]
            e["times"] = runtimes
        elif r["status"] in T4_ERROR:
            e["__error__"] = T4_ERROR[r["status"]]
        else:
            raise ValueError(f"{name}: unknown invalidity {r['status']}")
        e["compile_time"] = tm.get("compilation", 0) or 0
        e["verification_time"] = tm.get("validation", 0) or 0
        e["benchmark_time"] = sum(runtimes)  # T4 files hold no wall benchmark time; sum of run times
        e["framework_time"] = tm.get("framework", 0) or 0
        e["strategy_time"] = tm.get("search_algorithm", 0) or 0
        e["timestamp"] = r["timestamp"]
        cache[key] = e
    doc = {"device_name": device, "kernel_name": t1["kernel_name"],
           "problem_size": t1["problem_size"], "tune_params_keys": names,
           "tune_params": t1["tune_params"], "objective": "time", "cache": cache}
    os.makedirs(os.path.dirname(cache_path), exist_ok=True)
    with open(cache_path, "w") as f:
        json.dump(doc, f)
    times = [r["time"] for r in rec if r["time"] is not None]
    return {"name": name, "cache": cache_path, "names": names, "t1": t1,
            "keys": set(cache), "n": len(rec), "n_ok": len(times),
            "n_fail": len(rec) - len(times),
            "time_by_key": {cache_key(r["config"], names): r["time"] for r in rec},
            "values": [r["time"] for r in rec]}


# --------------------------------------------------------------------------
# Scoring (Willemsen et al. 2024, rooftune evaluation-budget convention)
# --------------------------------------------------------------------------

def space_values(times):
    """All recorded values; a failure (None) becomes the worst ok time."""
    worst = max(t for t in times if t is not None)
    return [worst if t is None else t for t in times]


def random_expectation(values, B):
    """R(k), k=1..B: exact expected best-so-far of random search without
    replacement = sum_i v_(i) C(n-i,k-1)/C(n,k) over ascending v_(1..n).
    Weights by the ratio recurrence w_1 = k/n, w_{i+1} = w_i (n-i-k+1)/(n-i)."""
    v = sorted(values)
    n = len(v)
    out = []
    for k in range(1, B + 1):
        w = k / n
        s = 0.0
        for i in range(1, n - k + 2):  # C(n-i,k-1) = 0 for i > n-k+1
            s += v[i - 1] * w
            if i < n:
                w *= (n - i - k + 1) / (n - i)
        out.append(s)
    return out


def random_expectation_exact(values, B):
    """Same as random_expectation with exact integer binomials (for tests)."""
    v = sorted(values)
    n = len(v)
    return [sum(v[i - 1] * math.comb(n - i, k - 1) for i in range(1, n + 1)) / math.comb(n, k)
            for k in range(1, B + 1)]


def best_so_far(eval_times, worst, B):
    """S(k), k=1..B: fastest ok time among the first k evaluations (None =
    failed), `worst` before the first ok one; a run that stopped after m < B
    evaluations keeps its final best for k > m."""
    out, best = [], None
    for k in range(B):
        if k < len(eval_times) and eval_times[k] is not None:
            best = eval_times[k] if best is None else min(best, eval_times[k])
        out.append(worst if best is None else best)
    return out


def score(S, R, opt):
    """Mean over k of (R(k)-S(k))/(R(k)-opt), skipping k with R(k)-opt <= 1e-12|opt|."""
    terms = [(r - s) / (r - opt) for s, r in zip(S, R) if r - opt > 1e-12 * abs(opt)]
    return sum(terms) / len(terms) if terms else float("nan")


# --------------------------------------------------------------------------
# One Kernel Tuner run
# --------------------------------------------------------------------------

_LHS_PATCHED = False


def seed_latin_hypercube():
    """Make scipy.stats.qmc.LatinHypercube deterministic under np.random.seed.

    Kernel Tuner 1.5.0's bayes_opt (initial sample) and Searchspace.get_LHS_sample
    (diff_evo's initial population) build LatinHypercube(d) with no rng, which
    scipy seeds from OS entropy; runs were then not reproducible.  When no rng or
    seed is given, this draws one from NumPy's (seeded) global RandomState."""
    global _LHS_PATCHED
    if _LHS_PATCHED:
        return
    import numpy as np
    import scipy.stats.qmc as qmc
    from kernel_tuner.strategies import bayes_opt as bo
    base = qmc.LatinHypercube

    class SeededLatinHypercube(base):
        def __init__(self, d, **kw):
            if kw.get("rng") is None and kw.get("seed") is None:
                kw["rng"] = np.random.default_rng(np.random.randint(0, 2**31 - 1))
            super().__init__(d, **kw)
    qmc.LatinHypercube = SeededLatinHypercube
    bo.LatinHypercube = SeededLatinHypercube
    _LHS_PATCHED = True


def run_kt(meta, strategy, B, seed):
    """Run one Kernel Tuner simulation; return (ordered unique evaluated keys,
    number of raw results, wall seconds).  Raises if our count of evaluations
    differs from Kernel Tuner's own budget counter (TuningBudget.num_fevals).  Seeds Python's `random` and NumPy's
    global RNG (the only RNGs Kernel Tuner 1.5's strategies and scipy/sklearn
    use here) and passes seed= to tune_kernel."""
    import numpy as np
    from kernel_tuner import tune_kernel, util as ktu
    seed_latin_hypercube()
    budgets = []  # capture Kernel Tuner's TuningBudget to cross-check our evaluation count
    init0 = ktu.TuningBudget.__init__

    def init(self, *args, **kw):
        init0(self, *args, **kw)
        budgets.append(self)
    ktu.TuningBudget.__init__ = init
    kt_strategy = strategy
    if strategy == "bayes_opt+failfix":
        # Opt-in variant, NOT Kernel Tuner as shipped: KT 1.5.0's bayes_opt marks
        # invalid observations with 1e20, but CostFunc returns sys.float_info.max
        # for compile/runtime failures, so failures enter its GP as valid
        # observations.  Map CostFunc's failure value onto bayes_opt's sentinel.
        from kernel_tuner.strategies import bayes_opt as bo
        bo_eval0 = bo.BayesianOptimization.evaluate_objective_function
        bo_evalp0 = bo.BayesianOptimization.evaluate_parallel_objective_function

        def fix(self, v):
            return self.invalid_value if v == sys.float_info.max else v

        def bo_eval(self, *args, **kw):
            return fix(self, bo_eval0(self, *args, **kw))

        def bo_evalp(self, *args, **kw):
            return [fix(self, v) for v in bo_evalp0(self, *args, **kw)]
        bo.BayesianOptimization.evaluate_objective_function = bo_eval
        bo.BayesianOptimization.evaluate_parallel_objective_function = bo_evalp
        kt_strategy = "bayes_opt"
    random.seed(seed)
    np.random.seed(seed)
    t1 = meta["t1"]
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _env = tune_kernel(
            t1["kernel_name"], "", t1["problem_size"], [], t1["tune_params"],
            restrictions=t1["conditions"], cache=meta["cache"], simulation_mode=True,
            strategy=kt_strategy, strategy_options={"max_fevals": B},
            quiet=True, verbose=False, seed=seed)
    wall = time.perf_counter() - t0
    ktu.TuningBudget.__init__ = init0
    if strategy == "bayes_opt+failfix":
        bo.BayesianOptimization.evaluate_objective_function = bo_eval0
        bo.BayesianOptimization.evaluate_parallel_objective_function = bo_evalp0
    seen, order = set(), []
    for r in results:
        key = cache_key(r, meta["names"])
        if key not in meta["keys"]:   # restriction-violating proposal: not an evaluation
            continue
        if key not in seen:            # revisits are served free, not counted
            seen.add(key)
            order.append(key)
    if len(budgets) != 1 or budgets[0].num_fevals != len(order):
        raise RuntimeError(f"evaluation count mismatch: ours {len(order)}, Kernel Tuner's "
                           f"{[b.num_fevals for b in budgets]}")
    return order, len(results), wall


def _worker(meta, strategy, B, seed, conn):
    try:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        sys.stdout = open(os.devnull, "w")
        order, nraw, wall = run_kt(meta, strategy, B, seed)
        conn.send(("ok", order, nraw, wall, ""))
    except BaseException as e:  # report any crash of the strategy
        conn.send(("crash", [], 0, 0.0, f"{type(e).__name__}: {e}"[:300]))
    finally:
        conn.close()


def run_jobs(jobs, njobs, timeout):
    """Run (key, meta, strategy, B, seed) jobs in forked processes, at most
    njobs at once, each killed after `timeout` s.  Yields (key, outcome)."""
    ctx = mp.get_context("fork")
    pending = list(jobs)
    running = []  # (key, proc, conn, t_start)
    while pending or running:
        while pending and len(running) < njobs:
            key, meta, strategy, B, seed = pending.pop(0)
            rd, wr = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_worker, args=(meta, strategy, B, seed, wr), daemon=True)
            p.start()
            wr.close()
            running.append((key, p, rd, time.perf_counter()))
        time.sleep(0.02)
        still = []
        for key, p, rd, t0 in running:
            if rd.poll():
                try:
                    out = rd.recv()
                except EOFError:
                    out = ("crash", [], 0, 0.0, "worker died")
                p.join()
                yield key, out
            elif not p.is_alive():
                p.join()
                yield key, ("crash", [], 0, 0.0, f"worker exited rc={p.exitcode}")
            elif time.perf_counter() - t0 > timeout:
                p.kill()
                p.join()
                yield key, ("timeout", [], 0, time.perf_counter() - t0, f"killed after {timeout} s")
            else:
                still.append((key, p, rd, t0))
        running = still


# --------------------------------------------------------------------------
# Self-test
# --------------------------------------------------------------------------

def self_test(check_kt=True):
    """Brute-force check of R(k), hand checks of S(k) and the score, and (with
    Kernel Tuner installed) checks of the cache conversion and evaluation count."""
    # 1. R(k) against all orders of a tiny hand-made recording (ties, a failure)
    times = [3.0, 1.0, None, 2.0, 2.0, 5.0]
    vals = space_values(times)
    assert vals == [3.0, 1.0, 5.0, 2.0, 2.0, 5.0]
    n = len(vals)
    perms = list(itertools.permutations(vals))
    brute = [sum(min(p[:k]) for p in perms) / len(perms) for k in range(1, n + 1)]
    for a, b, c in zip(random_expectation(vals, n), random_expectation_exact(vals, n), brute):
        assert abs(a - c) < 1e-12 and abs(b - c) < 1e-12, (a, b, c)
    assert brute[0] == sum(vals) / n and brute[-1] == 1.0
    # 2. a second list, float recurrence vs exact binomials on a larger space
    rng = random.Random(7)
    big = [rng.uniform(1, 10) for _ in range(500)]
    for a, b in zip(random_expectation(big, 40), random_expectation_exact(big, 40)):
        assert abs(a - b) < 1e-9 * b
    # 3. S(k): failures, worst before the first ok result, flat after an early stop
    assert best_so_far([None, 4.0, None, 2.0, 3.0], 9.0, 7) == [9.0, 4.0, 4.0, 2.0, 2.0, 2.0, 2.0]
    # 4. score: S = opt everywhere -> 1; S = R -> 0; hand value; skipped k
    R = random_expectation(vals, 4)
    assert abs(score([1.0] * 4, R, 1.0) - 1.0) < 1e-12
    assert abs(score(R, R, 1.0)) < 1e-12
    R2 = [5.0, 3.0, 1.0]  # k=3 has R = opt -> skipped
    assert abs(score([5.0, 2.0, 1.0], R2, 1.0) - (0.0 + 0.5) / 2) < 1e-12
    print("self-test: R(k) brute force over %d orders, S(k), score: ok" % len(perms))
    if not check_kt:
        return
    # 5. conversion + Kernel Tuner: search space equals the recording, errors read back
    from kernel_tuner import util as ktu
    from kernel_tuner.searchspace import Searchspace
    for name in FILES:
        cpath = os.path.join(HERE, "caches", name + ".json")
        meta = convert(name, cpath)
        c = ktu.read_cache(cpath, open_cache=False)["cache"]
        nerr = sum("__error__" in e for e in c.values())
        assert nerr == meta["n_fail"], (name, nerr, meta["n_fail"])
        assert all(isinstance(e["__error__"], ktu.ErrorConfig) for e in c.values() if "__error__" in e)
        ss = Searchspace(meta["t1"]["tune_params"], meta["t1"]["conditions"], 1_000_000_000)
        space = {",".join(str(v) for v in cfg) for cfg in ss.list}
        assert ss.size == meta["n"] and space == meta["keys"], (name, ss.size, meta["n"])
        print(f"self-test: {name}: cache {meta['n']} configs ({nerr} failed), "
              f"Kernel Tuner space with T1 restrictions = recording: ok")
    # 6. evaluation counting: random_sample returns exactly B distinct recorded
    #    configurations, and the same seed gives the same order
    meta = convert("pnpoly_RTX_3090", os.path.join(HERE, "caches", "pnpoly_RTX_3090.json"))
    o1, nraw, _ = run_kt(meta, "random_sample", 37, 5)
    o2, _, _ = run_kt(meta, "random_sample", 37, 5)
    assert len(o1) == 37 and nraw == 37 and o1 == o2, (len(o1), nraw)
    o3, nraw3, _ = run_kt(meta, "greedy_ils", 37, 5)
    o4, _, _ = run_kt(meta, "greedy_ils", 37, 5)
    assert len(o3) == 37 and o3 == o4, (len(o3), nraw3)
    for strat in ("diff_evo", "bayes_opt"):  # these use scipy's LatinHypercube
        a1, _, _ = run_kt(meta, strat, 37, 5)
        a2, _, _ = run_kt(meta, strat, 37, 5)
        assert len(a1) == 37 and a1 == a2, strat
    print(f"self-test: max_fevals=37 gives 37 evaluations (greedy_ils: {nraw3} raw results "
          f"incl. revisits); determinism per seed (random_sample, greedy_ils, diff_evo, bayes_opt): ok")


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def fmt(x, d=3):
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{d}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--self-test", action="store_true", help="run the self-test and exit")
    ap.add_argument("--files", default=",".join(FILES), help="comma list of recordings")
    ap.add_argument("--strategies", default=",".join(STRATEGIES),
                    help="comma list of Kernel Tuner strategies (also: bayes_opt+failfix, see README)")
    ap.add_argument("--repeats", type=int, default=10, help="runs per file x strategy (default 10)")
    ap.add_argument("--repeats-for", default="", help="per-strategy override, e.g. bayes_opt=5,pso=3")
    ap.add_argument("--budget-fraction", type=float, default=0.05, help="B = ceil(f * n) (default 0.05)")
    ap.add_argument("--seed", type=int, default=1, help="run r uses seed + r (default 1)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel runs")
    ap.add_argument("--timeout", type=float, default=300, help="seconds before a run is killed")
    ap.add_argument("--out", default=os.path.join(HERE, "results"), help="output directory")
    a = ap.parse_args()
    if a.self_test:
        self_test()
        return
    t_start = time.perf_counter()
    files = [f for f in a.files.split(",") if f]
    strategies = [s for s in a.strategies.split(",") if s]
    rep_for = dict((kv.split("=")[0], int(kv.split("=")[1])) for kv in a.repeats_for.split(",") if kv)
    os.makedirs(a.out, exist_ok=True)

    metas, info = {}, {}
    for name in files:
        meta = convert(name, os.path.join(HERE, "caches", name + ".json"))
        vals = space_values(meta["values"])
        B = math.ceil(a.budget_fraction * meta["n"] - 1e-9)
        opt, worst = min(vals), max(vals)
        R = random_expectation(vals, B)
        metas[name] = meta
        info[name] = {"B": B, "opt": opt, "worst": worst, "R": R}
        print(f"{name}: n={meta['n']} (failed {meta['n_fail']}), B={B}, opt={opt:.6g}, worst ok={worst:.6g}",
              flush=True)
    with open(os.path.join(a.out, "random_expectation.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["file", "k", "R"])
        for name in files:
            for k, r in enumerate(info[name]["R"], 1):
                w.writerow([name, k, repr(r)])

    jobs = []
    for s in strategies:
        for name in files:
            for rep in range(rep_for.get(s, a.repeats)):
                jobs.append(((name, s, rep), metas[name], s, info[name]["B"], a.seed + rep))
    runs = []
    fc = gzip.open(os.path.join(a.out, "curves.csv.gz"), "wt", newline="")
    wc = csv.writer(fc)
    wc.writerow(["file", "strategy", "repeat", "k", "best"])
    done = 0
    for (name, s, rep), (status, order, nraw, wall, msg) in run_jobs(jobs, a.jobs, a.timeout):
        done += 1
        inf = info[name]
        sc, nev = float("nan"), len(order)
        if status == "ok":
            tb = metas[name]["time_by_key"]
            S = best_so_far([tb[k] for k in order[:inf["B"]]], inf["worst"], inf["B"])
            sc = score(S, inf["R"], inf["opt"])
            for k, b in enumerate(S, 1):
                wc.writerow([name, s, rep, k, repr(b)])
            if nev > inf["B"]:
                status, msg = "over_budget", f"{nev} evaluations > B"
        runs.append({"file": name, "strategy": s, "repeat": rep, "seed": a.seed + rep, "status": status,
                     "evaluations": nev, "raw_results": nraw, "wall_s": wall, "score": sc, "message": msg})
        print(f"[{done}/{len(jobs)}] {name} {s} rep {rep}: {status} evals={nev} "
              f"score={fmt(sc)} wall={wall:.2f}s {msg}", flush=True)
    fc.close()
    runs.sort(key=lambda r: (files.index(r["file"]), strategies.index(r["strategy"]), r["repeat"]))
    with open(os.path.join(a.out, "runs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(runs[0]))
        w.writeheader()
        w.writerows(runs)

    # per file x strategy summary
    rows = []
    for name in files:
        for s in strategies:
            rr = [r for r in runs if r["file"] == name and r["strategy"] == s]
            ok = [r for r in rr if r["status"] == "ok"]
            scs = [r["score"] for r in ok]
            rows.append({
                "file": name, "strategy": s, "B": info[name]["B"], "runs_ok": len(ok), "runs_total": len(rr),
                "mean": statistics.fmean(scs) if scs else float("nan"),
                "std": statistics.stdev(scs) if len(scs) > 1 else float("nan"),
                "min": min(scs) if scs else float("nan"), "max": max(scs) if scs else float("nan"),
                "min_evals": min((r["evaluations"] for r in ok), default=0),
                "mean_wall_s": statistics.fmean([r["wall_s"] for r in rr]) if rr else float("nan"),
                "notes": "; ".join(sorted({r["status"] + ": " + r["message"] for r in rr if r["status"] != "ok"}))[:200],
            })
    with open(os.path.join(a.out, "scores.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in r.items()})
    total = time.perf_counter() - t_start
    from importlib.metadata import version
    md = [f"# Kernel Tuner {version('kernel_tuner')} strategies on the shared T4 recordings",
          "",
          f"Score: Willemsen et al. methodology, evaluation budget B = ceil({a.budget_fraction} n); "
          f"0 = random search without replacement, 1 = optimum from the first evaluation. "
          f"Repeats: {a.repeats} (overrides: {a.repeats_for or 'none'}), seeds {a.seed}..; "
          f"total wall time {total:.0f} s with {a.jobs} parallel runs.",
          ""]
    for name in files:
        md += [f"## {name} (n = {metas[name]['n']}, B = {info[name]['B']})", "",
               "| strategy | mean | std | min | max | runs | min evals | wall s/run | notes |",
               "|---|---|---|---|---|---|---|---|---|"]
        fr = sorted([r for r in rows if r["file"] == name],
                    key=lambda r: -r["mean"] if not math.isnan(r["mean"]) else 1e9)
        for r in fr:
            md.append(f"| {r['strategy']} | {fmt(r['mean'])} | {fmt(r['std'])} | {fmt(r['min'])} | {fmt(r['max'])} "
                      f"| {r['runs_ok']}/{r['runs_total']} | {r['min_evals']} | {fmt(r['mean_wall_s'], 2)} | {r['notes']} |")
        md.append("")
    md += ["## Best Kernel Tuner strategy per file (highest mean score)", "",
           "| file | strategy | mean ± std |", "|---|---|---|"]
    for name in files:
        fr = [r for r in rows if r["file"] == name and not math.isnan(r["mean"])]
        if fr:
            b = max(fr, key=lambda r: r["mean"])
            md.append(f"| {name} | {b['strategy']} | {fmt(b['mean'])} ± {fmt(b['std'])} |")
    md.append("")
    with open(os.path.join(a.out, "scores.md"), "w") as f:
        f.write("\n".join(md))
    print("\n".join(md))
    print(f"total wall time {total:.1f} s")


if __name__ == "__main__":
    main()
