"""Loading a big pprof profile and a big V8 ``.cpuprofile`` against a simple peer on the same bytes.

    PYTHONPATH=. .venv/bin/python bench/bench_profile_load.py [--samples 1000000] [--nodes 1000000]
        [--repeat 3] [--only pprof|cpuprofile] [--profile]

Prints ONE table.  Rows:

- pprof, ``--samples`` samples of ~12 locations (bench_text_load's generated file: packed, as Go
  writes them): the whole load (`tracevis3d.load`) against google.protobuf's ``ParseFromString``
  of the same bytes (the upb C decoder; no stacks built);
- .cpuprofile, ``--nodes`` nodes in the form ``node --cpu-prof`` writes (``children`` lists,
  ``callFrame`` with ``scriptId``, ``hitCount``, some ``positionTicks``; a tree grown as a
  program's calls grow: 2 000 scripts, 20 000 functions, stacks up to 64 deep) and as many
  samples in the order of the walk that grew the tree (a stack changes a little from one sample
  to the next; every 50th is ``(program)``), ~100 µs apart: the whole load against ``orjson.loads`` of the same bytes (the JSON parse
  alone, no stacks built).

Each time is the least CPU time of ``--repeat`` runs (the process's CPU time: the machine may be
shared, and wall time then measures the other processes).  ``--profile`` adds cProfile's ten
costliest functions of one load of each file.  The generated files are kept in build/bench-text/
and reused.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys

import numpy as np

REPO = pathlib.Path(__file__).resolve().parent.parent
OUT = REPO / "build" / "bench-text"
sys.path.insert(0, str(REPO / "bench"))

from bench_text_load import _pprof_row, best, pprof_file  # noqa: E402


def cpuprofile_file(n_nodes: int) -> pathlib.Path:
    """A ``node --cpu-prof`` style profile of ``n_nodes`` nodes and as many samples."""
    path = OUT / f"node-{n_nodes}.cpuprofile"
    if path.exists():
        return path
    import orjson

    rng = np.random.default_rng(5)
    n_fn, n_script = 20_000, 2_000
    fn_name = [f"fn{i}" if i % 11 else "" for i in range(n_fn)]
    fn_script = rng.integers(0, n_script, n_fn)
    fn_line = rng.integers(0, 3000, n_fn)
    fn_col = rng.integers(0, 80, n_fn)
    # parents: a random walk of the call stack (a node per step: pop 0-3 frames, push one; at most
    # 64 deep), so the nodes are in the order a depth-first walk meets them
    pops = rng.geometric(0.5, n_nodes) - 1
    parent = np.zeros(n_nodes, np.int64)
    stack = [0]
    for k, r in enumerate(pops.tolist()[1:], 1):
        del stack[max(1, len(stack) - r - (len(stack) >= 64)):]
        parent[k] = stack[-1]
        if k > 3:  # (nodes 1-3: V8's pseudo frames, children of the root)
            stack.append(k)
    fn_of = rng.integers(0, n_fn, n_nodes)
    kids: list = [[] for _ in range(n_nodes)]
    for k, p in enumerate(parent.tolist()[1:], 1):
        kids[p].append(k + 1)
    nodes = []
    special = {0: "(root)", 1: "(program)", 2: "(idle)", 3: "(garbage collector)"}
    for k in range(n_nodes):
        if k in special:
            cf = {"functionName": special[k], "scriptId": "0", "url": "", "lineNumber": -1, "columnNumber": -1}
        else:
            f = int(fn_of[k])
            s = int(fn_script[f])
            cf = {"functionName": fn_name[f], "scriptId": str(s + 1),
                  "url": f"file:///srv/app/lib/module{s}.js" if s % 7 else f"node:internal/mod{s}",
                  "lineNumber": int(fn_line[f]), "columnNumber": int(fn_col[f])}
        nd = {"id": k + 1, "callFrame": cf, "hitCount": k % 3}
        if kids[k]:
            nd["children"] = kids[k]
        if k % 5 == 4:
            nd["positionTicks"] = [{"line": int(fn_line[fn_of[k]]) + 1, "ticks": 1}]
        nodes.append(nd)
    samples = (np.sort(rng.integers(4, n_nodes, n_nodes)) + 1).tolist()  # the walk's order: stacks change a little
    samples[::50] = [2] * len(samples[::50])  # (program) now and then
    deltas = rng.integers(90, 110, n_nodes).tolist()
    doc = {"nodes": nodes, "startTime": 1_000_000, "endTime": 1_000_000 + int(sum(deltas)), "samples": samples,
           "timeDeltas": deltas}
    path.write_bytes(orjson.dumps(doc))
    return path


def _profile(path) -> str:
    import cProfile
    import io
    import pstats

    import tracevis3d

    pr = cProfile.Profile()
    pr.enable()
    tracevis3d.load(path, warn=False)
    pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(10)
    return s.getvalue()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--nodes", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", choices=("pprof", "cpuprofile"))
    ap.add_argument("--profile", action="store_true", help="also cProfile's costliest functions of one load")
    a = ap.parse_args(argv)
    os.environ.setdefault("NUMBA_CACHE_DIR", str(REPO / "build" / "numba-cache"))
    OUT.mkdir(parents=True, exist_ok=True)
    import orjson

    import tracevis3d

    rows, profiles = [], []
    if a.only in (None, "pprof"):
        row = _pprof_row(a)  # (its split-time column is not this table's)
        rows.append(row[:4] + row[5:])
        if a.profile:
            profiles.append(("pprof", _profile(pprof_file(a.samples))))
    if a.only in (None, "cpuprofile"):
        path = cpuprofile_file(a.nodes)
        data = path.read_bytes()
        tracevis3d.load(path, warn=False)
        full = best(lambda: tracevis3d.load(path, warn=False), a.repeat)
        n_calls = len(tracevis3d.load(path, warn=False))
        peer = best(lambda: orjson.loads(data), a.repeat)
        rows.append((f".cpuprofile {a.nodes:,} nodes", len(data), "orjson.loads", peer, full, n_calls))
        if a.profile:
            profiles.append((".cpuprofile", _profile(path)))

    print(f"bench_profile_load ({os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
          f"least CPU s of {a.repeat})")
    print(f"{'case':<28} {'MB':>7} {'peer':<26} {'peer s':>7} {'load s':>7} {'load/peer':>9} {'calls':>10}")
    for name, nb, pname, p, f, nc in rows:
        print(f"{name:<28} {nb / 1e6:>7.1f} {pname:<26} {p:>7.3f} {f:>7.3f} {f / p:>9.2f} {nc:>10,}")
    for name, text in profiles:
        print(f"\n--- cProfile of one {name} load ---\n{text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
