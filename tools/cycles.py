#!/usr/bin/env python3
"""make lint: no file cycles.  Reads the objects of a build (nm), draws an
edge from file A to file B when A uses a symbol B defines, and fails when
any files of client/, cache/, ext/ or api/ reach each other in a circle (a
strongly connected component of more than one file), or when a layer calls
one above it (client -> cache/ext/api, cache -> ext/api).

    tools/cycles.py [BUILD_DIR]        (default build)
    tools/cycles.py --selftest         a made-up graph with and without a cycle
"""
import collections
import glob
import os
import subprocess
import sys

LAYER = {"client": 0, "cache": 1, "ext": 2, "api": 2}


def sccs(graph):
    """Tarjan's strongly connected components of more than one node."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def graph_of(build):
    objs = []
    for layer in LAYER:
        objs += sorted(glob.glob(os.path.join(build, layer, "*.o")))
    defs, uses = {}, collections.defaultdict(set)
    for o in objs:
        nm = subprocess.run(["nm", o], capture_output=True, text=True,
                            check=True).stdout
        for line in nm.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDBRC":
                defs[p[2]] = o
            elif len(p) == 2 and p[0] == "U":
                uses[o].add(p[1])
    name = lambda o: os.path.relpath(o, build)[:-2] + ".c"
    g = {name(o): set() for o in objs}
    why = {}
    for o in objs:
        for s in uses[o]:
            d = defs.get(s)
            if d and d != o:
                g[name(o)].add(name(d))
                why.setdefault((name(o), name(d)), s)
    return g, why


def check(g, why):
    bad = 0
    for comp in sccs(g):
        bad += 1
        print("cycles: these files call each other in a circle: "
              + ", ".join(comp))
        for a in comp:
            for b in sorted(g[a] & set(comp)):
                print("    %s -> %s (%s)" % (a, b, why.get((a, b), "?")))
    for a in sorted(g):
        for b in sorted(g[a]):
            la, lb = LAYER[a.split("/")[0]], LAYER[b.split("/")[0]]
            if lb > la:
                bad += 1
                print("cycles: %s calls %s, a layer above it (%s)"
                      % (a, b, why.get((a, b), "?")))
    return bad


def selftest():
    g = {"ext/a.c": {"ext/b.c"}, "ext/b.c": {"ext/c.c"}, "ext/c.c": set()}
    assert sccs(g) == []
    g["ext/c.c"].add("ext/a.c")
    assert sccs(g) == [["ext/a.c", "ext/b.c", "ext/c.c"]]
    assert check({"client/x.c": {"cache/y.c"}, "cache/y.c": set()}, {}) == 1
    print("cycles: selftest ok")


if __name__ == "__main__":
    if sys.argv[1:] == ["--selftest"]:
        selftest()
        sys.exit(0)
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    if not glob.glob(os.path.join(build, "ext", "*.o")):
        print("cycles: no objects under %s (make loadable first)" % build)
        sys.exit(1)
    g, why = graph_of(build)
    n = check(g, why)
    if n == 0:
        print("cycles: none among %d files of client/, cache/, ext/, api/"
              % len(g))
    sys.exit(1 if n else 0)
