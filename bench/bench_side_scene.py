"""Benchmark (issue 25, goal): the icicle scene of a trace with 10^5 flows and 10^6 counter
samples against the scene of the same calls without them, measured in the same run.

Prints one table: seconds (best of 3) of the layout (`icicle_layout`, the SceneSpec) and of
the Blender scene (`blender.scene.build_icicle`, layout + writing), and the ratio to the same
trace without flows and counters (the peer).  Goal: the scene of 10^5 flows builds in <= 1 s
more than without them.

Usage:  PYTHONPATH=. .venv/bin/python bench/bench_side_scene.py [--calls 1000000] [--flows 100000]
        [--counters 1000000]
"""
from __future__ import annotations

import argparse
import copy

import numpy as np
from bench_load import best_of  # noqa: E402  (the bench scripts' best-of-N timer; runs from bench/)


def with_side(t, n_flows: int, n_samples: int, seed: int = 2):
    """``t`` with ``n_flows`` flows from calls of thread 0 to later calls of other threads and
    ``n_samples`` samples of 3 counter series."""
    rng = np.random.default_rng(seed)
    u = copy.copy(t)
    src = np.flatnonzero(t.thread == 0)
    dst = np.flatnonzero(t.thread != 0)
    a = np.sort(rng.choice(src, n_flows))
    b = dst[np.minimum(np.searchsorted(t.start[dst], t.start[a]), dst.size - 1)]
    u.flow_id = np.arange(n_flows, dtype=np.int64)
    u.flow_from, u.flow_to = a.astype(np.int32), b.astype(np.int32)
    span = float(t.end.max())
    per = n_samples // 3
    ts = np.linspace(0, span, per)
    u.counter_names = ["memory", "load"]
    u.series_names, u.series_units = ["rss", "heap", "cpu"], ["MB", "MB", "%"]
    u.series_counter = np.array([0, 0, 1], np.int32)
    u.series_pid = np.zeros(3, np.int64)
    u.counter_ts = np.concatenate([ts, ts, ts])
    u.counter_value = np.concatenate([100 + np.cumsum(rng.normal(0, 1, per)), 50 + 10 * np.sin(ts / span * 20),
                                      rng.uniform(0, 100, per)])
    u.counter_series = np.repeat(np.arange(3, dtype=np.int32), per)
    return u.check()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=1_000_000)
    ap.add_argument("--flows", type=int, default=100_000)
    ap.add_argument("--counters", type=int, default=1_000_000)
    a = ap.parse_args()

    import bpy

    from tracevis3d.blender.scene import build_icicle
    from tracevis3d.io.synthesis import synthetic_trace
    from tracevis3d.layout import IcicleParams, icicle_layout

    plain = synthetic_trace(a.calls, threads=4, seed=1)
    full = with_side(plain, a.flows, a.counters)
    p = IcicleParams()
    icicle_layout(full, p)  # compile / warm

    def scene(t):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        return build_icicle(t, p)

    rows = []
    for name, t in (("calls only", plain), (f"+ {a.flows:,} flows, {a.counters:,} counter samples", full)):
        s_lay, spec = best_of(lambda: icicle_layout(t, p))
        s_scene, _ = best_of(lambda: scene(t))
        rows.append((name, s_lay, s_scene, spec.meta.get("n_flow_arcs", 0), spec.meta.get("n_counter_tracks", 0)))
    print(f"{'trace':48} {'layout s':>9} {'× peer':>7} {'scene s':>8} {'× peer':>7} {'+ s':>6} {'arcs':>5} {'tracks':>6}")
    for name, sl, ss, arcs, tracks in rows:
        print(f"{name:48} {sl:9.3f} {sl / rows[0][1]:7.2f} {ss:8.3f} {ss / rows[0][2]:7.2f} "
              f"{ss - rows[0][2]:6.2f} {arcs:5d} {tracks:6d}")


if __name__ == "__main__":
    main()
