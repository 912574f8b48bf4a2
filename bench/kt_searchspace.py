#!/usr/bin/env python3
"""Time Kernel Tuner's Searchspace construction on a T1 space file: the
optional baseline of bench/bench_space.c (`make bench`).

usage: kt_searchspace.py FILE REPEATS
       kt_searchspace.py --version     (prints Kernel Tuner's version)
prints one JSON line: {"valid": N, "seconds": [...], "cpu": [...],
"kernel_tuner": VERSION}: the wall and the process CPU time of each
construction, in this process; exit 3 with a message on stderr when
kernel_tuner cannot be imported.

The space is given to Kernel Tuner as its own users would: tune_params
from the Values expressions (evaluated with Python's eval, as Kernel
Tuner's T1 reader does), the Condition expressions as string restrictions,
and max_threads = 10**9 so that Kernel Tuner adds no thread-block limit of
its own (the count must equal rooftune's, which bench_space checks).
"""
import json
import sys
import time

try:
    from importlib.metadata import version
    from kernel_tuner.searchspace import Searchspace
except Exception as e:  # ImportError, or a broken installation
    print(f"kernel_tuner is not importable here ({type(e).__name__}: {e})", file=sys.stderr)
    sys.exit(3)


def load(path):
    with open(path) as f:
        cs = json.load(f)["ConfigurationSpace"]
    tune_params = {}
    for p in cs["TuningParameters"]:
        v = p["Values"]
        tune_params[p["Name"]] = list(eval(v, {}) if isinstance(v, str) else v)
    return tune_params, [c["Expression"] for c in cs.get("Conditions", [])]


def main():
    if sys.argv[1:] == ["--version"]:
        print(version("kernel_tuner"))
        return
    path, repeats = sys.argv[1], int(sys.argv[2])
    tune_params, restrictions = load(path)
    seconds, cpu, valid = [], [], None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        ss = Searchspace(tune_params, restrictions, 10**9)
        cpu.append(time.process_time() - c0)
        seconds.append(time.perf_counter() - t0)
        valid = ss.size
    print(json.dumps({"valid": valid, "seconds": seconds, "cpu": cpu,
                      "kernel_tuner": version("kernel_tuner")}))


if __name__ == "__main__":
    main()
