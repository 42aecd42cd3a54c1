"""Benchmark: EXTRAVIS analysis and kernels on a 1M-call trace (issue 24).

Prints one table: building the hierarchy, the call relations, the call importance (Eq. 2),
the IBAA mural at 1920x1080 (Eq. 3) and the bundles + tube geometry of up to 10^4 element
pairs; each as a ratio to peers measured in the same run on the same trace: a numpy argsort
of as many random float64 values as the trace has calls and loading the trace from its native file.

Usage (from the repository root):
  PYTHONPATH=. .venv/bin/python bench/bench_extravis.py [TRACE] [--calls 1000000]
Without TRACE a synthetic trace of --calls calls in 4 threads is used.
"""
from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np
from bench_load import best_of  # noqa: E402  (the bench scripts' best-of-N timer; runs from bench/)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="?")
    ap.add_argument("--calls", type=int, default=1_000_000)
    args = ap.parse_args()
    import tracevis3d
    from tracevis3d.analysis.hierarchy import call_importance, hierarchy
    from tracevis3d.layout.extravis import mural_image
    from tracevis3d.layout.extravis_heb import (GRADIENT_STEPS, bundle_curves, control_points, leaf_arcs,
                                                tube_layer)

    trace = tracevis3d.load(args.trace) if args.trace else tracevis3d.synthetic(args.calls, threads=4, seed=1)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.tv3d.npz")
        tracevis3d.save(trace, path)
        t_load, _ = best_of(lambda: tracevis3d.load(path))
    shuffled = np.random.default_rng(0).random(len(trace))
    t_sort, _ = best_of(lambda: np.argsort(shuffled))
    h = hierarchy(trace)  # warm (numba compiled, names parsed once)
    call_importance(trace, hierarchy_=h)
    rows = []
    t_h, h = best_of(lambda: hierarchy(trace))
    rows.append(("hierarchy (elements from the function table)", t_h))
    t_r, rel = best_of(lambda: h.relations("function"))
    rows.append(("call relations, function level", t_r))
    rows.append(("hierarchy + relations (goal <= 1 s)", t_h + t_r))
    t_w, W = best_of(lambda: call_importance(trace, 25, -1.0, "function", hierarchy_=h))
    rows.append(("call importance W = f^p (window 25)", t_w))
    order = np.lexsort((np.arange(len(trace)), trace.thread, trace.start))
    caller, callee = rel.caller[order], rel.callee[order]
    touch = np.bincount(caller, minlength=len(h)) + np.bincount(callee, minlength=len(h))
    leaves = np.flatnonzero(touch > 0).astype(np.int32)
    arcs = leaf_arcs(h, leaves, touch[leaves].astype(float))
    mural_image(h, arcs, caller[:1000], callee[:1000], W[order][:1000], trace.start[order][:1000], None,
                "gradient", 64, 64)
    t_m, _ = best_of(lambda: mural_image(h, arcs, caller, callee, W[order], trace.start[order], None, "gradient",
                                         1920, 1080))
    rows.append(("mural 1920x1080, IBAA (goal <= 1 s)", t_m))
    pairs = h.pairs("function")
    k = np.argsort(-pairs.count)[:10_000]
    src, dst = pairs.src[k], pairs.dst[k]
    cx, cz = control_points(h, arcs, 3, 10.0)

    def heb():
        c = bundle_curves(h, src, dst, cx, cz, 0.85)
        return tube_layer(c, np.full(src.size, 0.05), np.tile(np.arange(GRADIENT_STEPS), (src.size, 1)),
                          [f"m{i}" for i in range(GRADIENT_STEPS)], 0.5, {}).validate()

    heb()
    t_b, _ = best_of(heb)
    rows.append((f"HEB: {src.size:,} pairs bundled + tube geometry (goal <= 2 s)", t_b))
    print(f"EXTRAVIS on {len(trace):,} calls, {trace.n_functions:,} functions, {len(h):,} elements, "
          f"{len(pairs):,} function pairs ({args.trace or 'synthetic'})")
    print(f"peers: argsort of {len(trace):,} random float64 {t_sort * 1e3:.1f} ms; native load {t_load * 1e3:.1f} ms")
    print(f"{'step':<58} {'time':>9} {'× argsort':>10} {'× load':>8}")
    for name, t in rows:
        print(f"{name:<58} {t * 1e3:7.1f} ms {t / t_sort:10.2f} {t / t_load:8.2f}")


if __name__ == "__main__":
    main()
