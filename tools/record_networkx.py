#!/usr/bin/env python3
"""Record the networkx case: a graph-analysis program under VizTracer.

    .venv/bin/python tools/record_networkx.py [--out build/traces] [--graph karate|lesmis|both]

The program (`PROGRAM`) runs four of networkx's pure-Python algorithms on one of its bundled
social graphs: betweenness centrality (Brandes), Louvain communities (seeded), the minimum
spanning tree (Kruskal) and all-pairs shortest path lengths (breadth-first).  The
two graphs, Zachary's karate club (34 nodes, 78 edges) and Les Misérables (77 nodes, 254
edges), make a comparison of the same driver on another input.

VizTracer runs with its defaults as `tools/record_traces.py` uses them (C functions and the
import machinery kept, ``--quiet``, ``--tracer_entries`` large enough that nothing is dropped),
under the interpreter given (default: this one; networkx must be importable there:
``pip install networkx==3.6.1``).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRAPHS = ("karate", "lesmis")
#: VizTracer's buffer: several times what the Les Misérables run records, so nothing is dropped
TRACER_ENTRIES = 3_000_000
#: seconds a recording may take (a few seconds each on one core)
TIMEOUT = 600

PROGRAM = '''\
"""networkx on a bundled social graph: betweenness, Louvain, minimum spanning tree and
all-pairs shortest paths."""
import sys

import networkx as nx

GRAPHS = {"karate": nx.karate_club_graph, "lesmis": nx.les_miserables_graph}


def analyse(G):
    bc = nx.betweenness_centrality(G)
    comms = nx.community.louvain_communities(G, seed=1)
    mst = nx.minimum_spanning_tree(G)
    paths = dict(nx.all_pairs_shortest_path_length(G))
    return bc, comms, mst, paths


def report(name):
    G = GRAPHS[name]()
    bc, comms, mst, paths = analyse(G)
    top = max(bc, key=bc.get)
    hops = sum(len(d) for d in paths.values())
    print(f"{name}: {G.number_of_nodes()} nodes, {G.number_of_edges()} edges, most between {top!r}, "
          f"{len(comms)} communities, MST {mst.number_of_edges()} edges, {hops} shortest paths")


report(sys.argv[1] if len(sys.argv) > 1 else "karate")
'''


def networkx_missing(python: str = sys.executable) -> str | None:
    """Why ``python`` cannot run the program (networkx or VizTracer missing), or None."""
    if python == sys.executable:
        ok = all(importlib.util.find_spec(m) is not None for m in ("networkx", "viztracer"))
    else:
        ok = subprocess.run([python, "-c", "import networkx, viztracer"], capture_output=True).returncode == 0
    if not ok:
        return f"networkx or viztracer is not importable by {python} (pip install networkx==3.6.1 viztracer==1.1.1)"
    return None


def overflowed(path: str) -> bool:
    """Whether VizTracer's metadata (after the event array, at the file's end) says its buffer
    overflowed (the run's start dropped)."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(0, f.tell() - (1 << 22)))
        tail = f.read()
    k = tail.rfind(b'"viztracer_metadata"')
    return k >= 0 and re.search(rb'"overflow"\s*:\s*true', tail[k: k + 4096]) is not None


def record(out_dir, graph: str = "karate", python: str = sys.executable, timeout: float = TIMEOUT) -> str:
    """Record `PROGRAM` on ``graph`` ("karate" or "lesmis") with VizTracer into
    ``out_dir/networkx_<graph>.json``; return its path.  The program is written to
    ``out_dir/networkx-input/networkx_case.py`` and run from there (a folder whose name is no
    identifier: the program is module ``networkx_case``, not ``<out_dir>.networkx_case``,
    `tracevis3d.names.module_from_file`).  Raises RuntimeError naming the
    command, its exit status and its output's tail when the recording fails, times out or
    VizTracer's buffer overflowed."""
    if graph not in GRAPHS:
        raise ValueError(f"graph must be one of {GRAPHS}, not {graph!r}")
    out_dir = os.path.abspath(os.fspath(out_dir))
    if os.sep in python:  # the command runs from another folder
        python = os.path.abspath(python)
    work = os.path.join(out_dir, "networkx-input")
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(work, "networkx_case.py")
    with open(prog, "w", encoding="utf-8") as f:
        f.write(PROGRAM)
    out = os.path.join(out_dir, f"networkx_{graph}.json")
    if os.path.exists(out):
        os.remove(out)
    cmd = [python, "-m", "viztracer", "--quiet", "--tracer_entries", str(TRACER_ENTRIES), "-o", out,
           "--", prog, graph]
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PYTHONHASHSEED"] = "0"
    try:
        p = subprocess.run(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                           env=env)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"recording timed out after {timeout:.0f} s: {' '.join(cmd)}") from None
    # VizTracer exits 0 when its dump fails: the file says whether it was written
    if p.returncode != 0 or not os.path.exists(out) or os.path.getsize(out) == 0:
        tail = p.stdout.decode("utf-8", "replace")[-2000:]
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{tail}")
    if overflowed(out):
        raise RuntimeError(f"VizTracer's buffer overflowed (the run's start dropped): {' '.join(cmd)}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO, "build", "traces"), help="output folder")
    ap.add_argument("--graph", choices=GRAPHS + ("both",), default="both")
    ap.add_argument("--python", default=sys.executable, help="interpreter that runs the program")
    args = ap.parse_args(argv)
    why = networkx_missing(args.python)
    if why:
        print(f"record_networkx: {why}", file=sys.stderr)
        return 1
    if REPO not in sys.path:  # the trace's size, measured with this checkout's package
        sys.path.insert(0, REPO)
    import warnings

    import tracevis3d

    for graph in GRAPHS if args.graph == "both" else (args.graph,):
        path = record(args.out, graph, args.python)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = tracevis3d.load(path)
        print(f"{path}: {len(t)} calls, {int(t.max_depth) + 1} levels, {t.n_threads} thread(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
