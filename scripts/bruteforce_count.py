#!/usr/bin/env python3
"""bruteforce_count.py FILE [VAR=VAL ...] -- count the valid configurations of
a T1 space the naive way: itertools.product over every parameter, each
condition evaluated with Python's eval (one that raises counts as false).
It is the independent reference and the baseline of `make bench`; problem
variables (rooftune's extension) take their Default unless given."""
import itertools, json, sys, time

def main():
    spec = json.load(open(sys.argv[1]))["ConfigurationSpace"]
    env = {v["Name"]: v.get("Default") for v in spec.get("ProblemVariables", [])}
    for kv in sys.argv[2:]:
        k, v = kv.split("=", 1)
        env[k] = eval(v, {})
    names = [p["Name"] for p in spec["TuningParameters"]]
    values = []
    for p in spec["TuningParameters"]:
        vals = p["Values"]
        vals = eval(vals, dict(env)) if isinstance(vals, str) else vals
        values.append(list(dict.fromkeys(vals)))
    conds = [compile(c["Expression"], "<cond>", "eval") for c in spec.get("Conditions", [])]
    t0 = time.perf_counter()
    valid = cart = 0
    for combo in itertools.product(*values):
        cart += 1
        scope = dict(env)
        scope.update(zip(names, combo))
        ok = True
        for c in conds:
            try:
                if not eval(c, scope):
                    ok = False
                    break
            except Exception:
                ok = False
                break
        valid += ok
    print(json.dumps({"valid": valid, "cartesian": cart, "seconds": time.perf_counter() - t0}))

main()
