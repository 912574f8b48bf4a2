#!/usr/bin/env python3
"""python_lookup.py -- pick a kernel's launch configuration from a rooftune
database the way a Triton or Kernel Tuner user does: look up the pinned
configuration for the shape being launched, and fall back to the
application's own default when the database has nothing for it (no file,
no library, an unknown kernel, nothing pinned near enough).

    python3 examples/python_lookup.py --db tuned.db --target host --kernel gemm \\
        --default '{"mc":128,"nc":256,"kc":256}' M=1000 N=1000 K=1000

prints one JSON line: the configuration to launch with, and where it came
from ("exact" / "nearest" pin with its workload and version, the database's
"default" for the kernel template, or "fallback" with the reason). In an
application the same function feeds the meta-parameters, e.g. Triton's

    cfg = tuned_config(...)["config"]
    matmul_kernel[grid](a, b, c, M, N, K, BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"])

or Kernel Tuner's `tune_params` narrowed to the pinned values. --exact-only
refuses a neighbour's pin (a shape-specialised kernel may want that).
"""
import argparse
import json
import sys

import rooftune


def tuned_config(db, target, kernel, shape, default, tag=None, exact_only=False, library=None):
    """The configuration to launch kernel with for shape (a dict of problem
    variables): the database's answer, or default with the reason."""
    try:
        with rooftune.Reader(db, library=library) as r:
            hit = r.lookup(target, kernel, shape, tag=tag)
    except (OSError, rooftune.RtdbError) as e:   # no library, no file, nothing to fall back to
        return {"config": default, "source": "fallback", "why": str(e)}
    if exact_only and hit.match != "exact":
        return {"config": default, "source": "fallback",
                "why": "no pin of this exact shape (the database offers the %s: %s)"
                       % (hit.match, hit.workload or "template default")}
    return {"config": hit.config, "source": hit.match, "workload": hit.workload,
            "pin_version": hit.pin_version, "time_s": hit.time_s, "distance": hit.distance}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--default", required=True, help="the application's own configuration (JSON)")
    ap.add_argument("--tag", help="a release tag (reproducible answers)")
    ap.add_argument("--exact-only", action="store_true")
    ap.add_argument("--library", help="librtdb.so (default: $ROOFTUNE_LIBRTDB or the installed one)")
    ap.add_argument("shape", nargs="+", help="VAR=VALUE (integers, numbers, True/False, text)")
    a = ap.parse_args(argv)
    shape = {}
    for kv in a.shape:
        name, sep, text = kv.partition("=")
        if not sep or not name:
            ap.error("shape: expected VAR=VALUE, got %r" % kv)
        for conv in (int, float):
            try:
                shape[name] = conv(text)
                break
            except ValueError:
                continue
        else:
            shape[name] = {"True": True, "False": False}.get(text, text)
    print(json.dumps(tuned_config(a.db, a.target, a.kernel, shape, json.loads(a.default),
                                  a.tag, a.exact_only, a.library)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
