#!/usr/bin/env python3
"""kt_simulate.py CACHE STRATEGY FEVALS SEED -- run Kernel Tuner's
simulation mode (kernel_tuner.tune_cache: the kernel, problem size, tunable
parameters and restrictions taken from the cache file) with one strategy on
a cache file rooftune exported, for tests/test_interchange.c; the README's
db section says how to enable it.

Checks, independently of rooftune: the run evaluated at least one and at
most FEVALS distinct configurations, every one of them is an entry of the
cache, and the time Kernel Tuner reports for each is the cache's. Prints
"ok: N configurations, best T ms at KEY" and exits 0; exits 1 on a failed
check, 77 when kernel_tuner cannot be imported."""
import json
import random
import sys

try:
    import numpy
    import kernel_tuner
except ImportError as e:
    print(f"kt_simulate.py: kernel_tuner cannot be imported ({e})", file=sys.stderr)
    sys.exit(77)


def main():
    path, strategy, fevals, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    with open(path) as f:
        cache = json.load(f)
    keys = cache["tune_params_keys"]
    random.seed(seed)
    numpy.random.seed(seed)
    results, _env = kernel_tuner.tune_cache(path, strategy=strategy,
                                            strategy_options={"max_fevals": fevals},
                                            quiet=True, verbose=False)
    seen, best = set(), None
    for r in results:
        key = ",".join(str(r[k]) for k in keys)
        entry = cache["cache"].get(key)
        if entry is None:
            print(f"FAIL: Kernel Tuner evaluated {key}, which is not in the cache")
            return 1
        seen.add(key)
        if "__error__" in r:
            continue
        if r["time"] != entry["time"]:
            print(f"FAIL: {key}: Kernel Tuner says {r['time']} ms, the cache {entry['time']} ms")
            return 1
        if best is None or r["time"] < best[0]:
            best = (r["time"], key)
    if not 1 <= len(seen) <= fevals:
        print(f"FAIL: {len(seen)} distinct configurations evaluated, expected 1 to {fevals}")
        return 1
    print(f"ok: kernel_tuner {kernel_tuner.__version__ if hasattr(kernel_tuner, '__version__') else ''}"
          f" {strategy}: {len(seen)} configurations, best "
          f"{best[0] if best else 'none'} ms at {best[1] if best else '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
