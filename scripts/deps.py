#!/usr/bin/env python3
"""deps.py -- the include-and-call graph of rooftune's source files, and its
circles. Nodes are the files of the library and the CLI (X.c, with its
header X.h folded into it when one exists; a header with no .c of its own
is a node of its own). Edges:
  * calls: A -> B when A's object file uses a symbol that B's object file
    defines (nm on the objects of BUILD, default build/);
  * includes: A -> B when A's source includes B's header (the -MMD files).
A circle is a strongly connected component of more than one node.
Also checks the backend rule: outside targets/ (and the backend table
targets/tg_table.c) no source names a backend (BACKEND_WORDS).

usage: scripts/deps.py [--build DIR] [--dot FILE] [--no-names]
Exit 0: no circle and no backend name outside targets/; 1 otherwise (the
circles and the lines are printed)."""
import os
import re
import subprocess
import sys

ROOMS = ["common", "search_spaces", "tuner", "cost_model", "measure", "db", "targets", "cli", "mpi"]
# Stored data, not code: the counters table's vocabulary of sources is in
# an old migration of db/db.c (never edited; db.h: db_counters_put).
STORED_DATA = {("db/db.c", "CHECK(source IN ('papi','cachegrind','cupti'))")}
BACKEND_WORDS = re.compile(r"\bgd_\w+|cuda|cupti|opencl|(?-i:\bcl[A-Z]\w+)|device >= 0|\bhw_\w+|\bgk_\w+|\bpapi\b|PAPI_|\brv_\w+|(?-i:\brvv\b)", re.I)


def node_of(path):
    path = os.path.normpath(path)
    stem, ext = os.path.splitext(path)
    if ext == ".h" and os.path.exists(stem + ".c"):
        return stem + ".c"
    return path


def sources():
    out = []
    for room in ROOMS:
        for dirpath, _, files in os.walk(room):
            for f in sorted(files):
                if f.endswith(".c") or f.endswith(".h"):
                    out.append(os.path.join(dirpath, f))
    return sorted(out)


def nm_symbols(obj):
    r = subprocess.run(["nm", "--defined-only", "-g", obj], capture_output=True, text=True, check=True)
    defined = {l.split()[-1] for l in r.stdout.splitlines() if len(l.split()) >= 3}
    r = subprocess.run(["nm", "-u", obj], capture_output=True, text=True, check=True)
    used = {l.split()[-1] for l in r.stdout.splitlines() if l.strip()}
    return defined, used


def main():
    build, dot, names = "build", None, True
    args = sys.argv[1:]
    while args:
        a = args.pop(0)
        if a == "--build":
            build = args.pop(0)
        elif a == "--dot":
            dot = args.pop(0)
        elif a == "--no-names":
            names = False
        else:
            sys.exit(__doc__)
    files = sources()
    nodes = sorted({node_of(f) for f in files})
    edges = {n: set() for n in nodes}
    why = {}
    # calls
    defs, uses = {}, {}
    for f in files:
        if not f.endswith(".c"):
            continue
        obj = os.path.join(build, f[:-2] + ".o")
        if not os.path.exists(obj):
            sys.exit("deps.py: %s is missing (make first)" % obj)
        d, u = nm_symbols(obj)
        uses[f] = u
        for s in d:
            defs[s] = f
    for f, u in uses.items():
        for s in u:
            g = defs.get(s)
            if g and g != f:
                edges[f].add(g)
                why.setdefault((f, g), "calls " + s)
    # includes
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    for f in files:
        with open(f, errors="replace") as fh:
            text = fh.read()
        for h in inc.findall(text):
            p = os.path.normpath(os.path.join(os.path.dirname(f), h))
            if not os.path.exists(p):
                p = os.path.normpath(h)
            if not os.path.exists(p):
                continue
            a, b = node_of(f), node_of(p)
            if a != b:
                edges[a].add(b)
                why.setdefault((a, b), "includes " + p)
    # Tarjan's strongly connected components
    index, low, stack, on, sccs = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            c = []
            while True:
                w = stack.pop()
                on.discard(w)
                c.append(w)
                if w == v:
                    break
            if len(c) > 1:
                sccs.append(sorted(c))

    for v in nodes:
        if v not in index:
            visit(v)
    bad = 0
    for c in sccs:
        bad = 1
        print("circle of %d files:" % len(c))
        for a in c:
            for b in sorted(edges[a]):
                if b in c:
                    print("  %s -> %s (%s)" % (a, b, why[(a, b)]))
    if names:
        for f in files:
            if f.startswith("targets/"):
                continue
            with open(f, errors="replace") as fh:
                for i, line in enumerate(fh, 1):
                    m = BACKEND_WORDS.search(line)
                    if m and any(f == sf and s in line for sf, s in STORED_DATA):
                        continue
                    if m:
                        bad = 1
                        print("%s:%d: names a backend (%s): %s" % (f, i, m.group(0), line.strip()))
    if dot:
        with open(dot + ".tmp", "w") as fh:
            fh.write("digraph rooftune {\n  rankdir=LR;\n")
            for a in nodes:
                for b in sorted(edges[a]):
                    fh.write('  "%s" -> "%s";\n' % (a, b))
            fh.write("}\n")
        os.replace(dot + ".tmp", dot)
    print("%d files, %d edges, %d circles" % (len(nodes), sum(len(e) for e in edges.values()), len(sccs)))
    return bad


if __name__ == "__main__":
    sys.exit(main())
