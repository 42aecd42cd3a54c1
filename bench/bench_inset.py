"""Benchmark: what the detail inset (`layout.inset`, ``inset``) costs the icicle's layout.

For each recorded trace (tools/record_traces.py; build/traces by default), the icicle layout
(bpy-free: select, fold, colour, frame, geometry, labels, recursion names, the inset,
callouts) is timed with the default ``inset=auto`` and with ``inset=none`` (the peer: the same
layout without the inset), best of 3 in one process, after a warm-up; the table gives both,
their ratio, and what the inset shows (its stretch's magnification and the functions it names
that the figure does not; "-" where the figure takes none).

Usage:  cd bench; PYTHONPATH=.. ../.venv/bin/python bench_inset.py [--traces DIR] [NAME ...]
"""
from __future__ import annotations

import argparse
import pathlib

from bench_load import best_of  # noqa: E402  (the bench scripts' best-of-N timer; runs from bench/)

DEFAULT = ("json_tool", "pydoc", "unittest", "docutils", "networkx", "sympy", "pip_show", "deep_recursion",
           "threads", "docutils_pool", "sympy_pool", "ast_pool", "http_threads", "black_pool", "jinja_procs",
           "mixed_pool")


def main() -> None:
    import tracevis3d
    from tracevis3d.layout.icicle import icicle_layout
    from tracevis3d.params.icicle import IcicleParams

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", default=list(DEFAULT))
    ap.add_argument("--traces", default=str(pathlib.Path(__file__).resolve().parent.parent / "build" / "traces"))
    args = ap.parse_args()
    print("| trace | calls | layout, no inset (s) | with the inset (s) | × | inset: zoom, functions named |")
    print("|---|---|---|---|---|---|")
    for name in args.names:
        path = pathlib.Path(args.traces) / f"{name}.json"
        if not path.exists():
            print(f"| {name} | (not recorded: {path}) |||||")
            continue
        trace = tracevis3d.load(path)
        with_p, without_p = IcicleParams(), IcicleParams(inset="none")
        icicle_layout(trace, with_p)  # warm-up: compiled kernels, caches of the trace
        t_without, _ = best_of(lambda: icicle_layout(trace, without_p))
        t_with, spec = best_of(lambda: icicle_layout(trace, with_p))
        ins = spec.meta.get("inset")
        what = f"{ins['zoom']:.0f}×, {ins['new_functions']}" if ins else "-"
        print(f"| {name} | {len(trace):,} | {t_without:.3f} | {t_with:.3f} | {t_with / t_without:.2f} | {what} |")


if __name__ == "__main__":
    main()
