"""Benchmark: what the callouts (`layout.callouts`, ``max_callouts``) cost in the views that have them.

For each recorded trace (tools/record_traces.py; build/traces by default), the icicle layout
(bpy-free: select, fold, colour, frame, geometry, labels, callouts) and the thread view's
layout (its wall takes callouts) are timed with the default ``max_callouts`` and with
``max_callouts=0`` (the peer: the same layout without callouts), best of 3 in one process,
after a warm-up; the table gives both, their ratio and the callouts placed.

Usage:  cd bench; PYTHONPATH=.. ../.venv/bin/python bench_callouts.py [--traces DIR] [NAME ...]
"""
from __future__ import annotations

import argparse
import pathlib

from bench_load import best_of  # noqa: E402  (the bench scripts' best-of-N timer; runs from bench/)

DEFAULT = ("json_tool", "pydoc", "docutils", "networkx", "sympy_pool", "black_pool", "jinja_procs")


def main() -> None:
    import tracevis3d
    from tracevis3d.layout.icicle import icicle_layout
    from tracevis3d.params.icicle import IcicleParams
    from tracevis3d.layout.threads import threads_layout
    from tracevis3d.params.threads import ThreadsParams

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", default=list(DEFAULT))
    ap.add_argument("--traces", default=str(pathlib.Path(__file__).resolve().parent.parent / "build" / "traces"))
    args = ap.parse_args()
    views = (("icicle", icicle_layout, IcicleParams), ("threads", threads_layout, ThreadsParams))
    print("| view | trace | calls | layout, no callouts (s) | with callouts (s) | × | callouts |")
    print("|---|---|---|---|---|---|---|")
    for name in args.names:
        path = pathlib.Path(args.traces) / f"{name}.json"
        if not path.exists():
            print(f"| | {name} | (not recorded: {path}) |||||")
            continue
        trace = tracevis3d.load(path)
        for view, layout, params in views:
            with_p, without_p = params(), params(max_callouts=0)
            layout(trace, with_p)  # warm-up: compiled kernels, caches of the trace
            t_without, _ = best_of(lambda: layout(trace, without_p))
            t_with, spec = best_of(lambda: layout(trace, with_p))
            n = len(spec.layer("callout_leaders")) if any(x.name == "callout_leaders" for x in spec.layers) else 0
            print(f"| {view} | {name} | {len(trace):,} | {t_without:.3f} | {t_with:.3f} | {t_with / t_without:.2f} "
                  f"| {n} |")


if __name__ == "__main__":
    main()
