"""Benchmark: does a zoom (`tracevis3d.blender.view.zoom_to`, issue 70 item 4) cost the window
and not the trace?  Zooms after the first, at 10^6, 10^7 and (``--huge``, or
``TV3D_BENCH_HUGE=1``: it takes long) 10^8 calls, as ratios to a peer measured in the same run.

Per trace: a 4-thread `tracevis3d.synthetic` trace written straight into a native file
(`tracevis3d.save_synthetic`; 10^8 calls: 4.5 GB, opened memory-mapped: the process never
holds it), or a recorded trace (``--trace PATH``, any format); the default overview built
headless (bpy module, `build_icicle`: it keeps the trace and the overview's colours for the
zooms); a first zoom (0.4 ms, the middle of the figure), then windows of 0.2, 1, 5 and 50 ms at
30, 40, 60 and 70 % of the figure's time (synthetic traces are as busy everywhere; a recorded
one: its busiest stretch of each width).  The peer of a zoom is the same window's dedicated
``render-icicle --window`` layout alone (`icicle_layout` of `window_params`, bpy-free: what the
zoom lays out before it writes), run right after it: the machine is shared (2 cores, other
jobs), so each row gives the load average and the ratio to that peer, in wall seconds and in
the process's CPU seconds (all its threads).  "write" is the zoom's Blender side (its objects,
the overview's split); "peak MB" is the process's peak resident set during the zoom and its
peer (``VmHWM`` reset before: a mapped file's pages read count too), "+ MB" how much above
the resident set before them it went.

Usage:  NUMBA_CACHE_DIR=build/numba-cache PYTHONPATH=. .venv/bin/python bench/bench_zoom_scale.py \\
            [--sizes 1e6,1e7] [--huge] [--trace PATH ...] [--profile DIR] [--keep]
        (--huge: hold the machine's heavy-run lock, flock /tmp/tv3d-heavy.lock; the 10^8 file
        goes to --dir, default the system's temporary folder, and is removed after unless --keep)

The whole overview of the 10^8-call file first held 17 GB of its own memory (20 GB resident)
4.5 minutes in, on this 23 GB machine, and was stopped; the layout's peak has since gone from 320 to 190, then 122 bytes a call (docs/performance.md, "Zoom"), ~12 GB at
10^8 (and ~1 GB the load holds).  With ``--huge-overview-s 0`` the whole overview now builds
here (189.9 s, peak resident 15.2 GB with the file's pages, later zooms 0.11-0.21 s; the table
in docs/performance.md); by default, so as not to take the machine's memory, its overview is the
middle 2 s of the trace (``--huge-overview-s``: ~1.7·10^6 calls drawn), the zooms' trace is the
whole mapped file.  Measured 2026-11-29 01:01 UTC (this 2-core machine shared with five other
jobs; ``--trace build/traces/sympy.json --huge``; "first" = the first zoom, "later" = the
0.2, 1, 5 and 50 ms windows, each against its peer):

    | trace (calls)               | overview build s | first zoom s | later zooms s | × peer (wall) | × peer (CPU) | write s   | load |
    |-----------------------------|------------------|--------------|---------------|---------------|--------------|-----------|------|
    | sympy (1,135,589, recorded) | 5.26             | 1.45         | 0.09..0.43    | 1.36..1.60    | 1.38..1.64   | 0.03..0.07| 7.5  |
    | synthetic 10^6              | 2.70             | 1.56         | 0.12..0.34    | 0.80..1.53    | 1.21..1.65   | 0.03..0.07| 7.2  |
    | synthetic 10^7              | 39.0             | 2.15         | 0.25..0.84    | 0.77..3.03    | 1.13..1.44   | 0.06..0.17| 6.6  |
    | synthetic 10^8, mapped      | 3.85 (2 s of it) | 1.14         | 0.20..0.34    | 0.91..1.95    | 1.13..1.58   | 0.03..0.06| 6.3  |

A later zoom costs its window, not the trace: 0.1-0.8 s from 10^6 to 10^8 calls, 1.1-1.6× the
window's own layout in CPU time (the rest is writing its objects, 0.03-0.17 s); the zoom adds at
most 31 MB to the process.  Before this run's change (`zoom_write._instancer`), every zoom built
its layers' instancer groups again (one Geometry Nodes branch per material, ~30 materials a
layer, building one grows faster than its size): the same windows, same run order, load 9, the
writer of 8573f62 against this one: write 0.13-0.88 s → 0.06-0.08 s and later zooms 0.23-1.28 s
→ 0.17-0.43 s at synthetic 10^6; sympy 0.16-0.71 s → 0.16-0.63 s.  The first zoom now builds
the one shared group (64 branches, ~0.7 s unloaded, 1-2 s here): headless it is in the first
zoom's time (before: 0.4-0.8 s); a figure built in Blender's window builds it with the figure.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import tempfile
import time

import numpy as np

WINDOWS_MS = (0.2, 1.0, 5.0, 50.0)
PLACES = (0.3, 0.4, 0.6, 0.7)  # where each window sits on the figure's time axis (synthetic traces)
HUGE = 100_000_000


def _status_kb(field: str) -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def reset_peak() -> float:
    """Reset the process's peak resident set (``VmHWM``; Linux: ``clear_refs`` 5); its resident
    set now, MB."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    return _status_kb("VmRSS") / 1024.0


def peak_mb() -> float:
    return _status_kb("VmHWM") / 1024.0


def timed(fn, *args, **kw):
    """(result, wall s, CPU s of the process: every thread)."""
    w, c = time.perf_counter(), time.process_time()
    out = fn(*args, **kw)
    return out, time.perf_counter() - w, time.process_time() - c


def busiest(trace, width_us: float) -> tuple:
    """The window of ``width_us`` where most calls start (a recorded trace)."""
    t0, t1 = float(trace.start.min()), float(trace.end.max())
    n = max(int((t1 - t0) // width_us), 1)
    counts, edges = np.histogram(trace.start, bins=n, range=(t0, t0 + n * width_us))
    k = int(counts.argmax())
    return (float(edges[k]), float(edges[k] + width_us))


def middle_window(trace, seconds: float) -> tuple:
    """``seconds`` of the trace's clock (µs) around its middle, found without a pass over it
    (each thread's first call and last call)."""
    rng = trace.thread_ranges()
    rng = rng[rng[:, 1] > rng[:, 0]]
    t0 = float(min(trace.start[int(a)] for a in rng[:, 0]))
    t1 = float(max(trace.end[int(b) - 1] for b in rng[:, 1]))
    c = 0.5 * (t0 + t1)
    return (c - 0.5e6 * seconds, c + 0.5e6 * seconds)


def run_trace(name: str, path: str, rows: list, synthetic: bool, profile_dir: str = "",
              overview_s: float = 0.0) -> None:
    import bpy

    import tracevis3d
    from tracevis3d.blender import view
    from tracevis3d.blender.animate import META_KEY
    from tracevis3d.blender.hygiene import remove_startup_defaults
    from tracevis3d.blender.scene import build_icicle
    from tracevis3d.layout import select
    from tracevis3d.layout.icicle import icicle_layout
    from tracevis3d.params.icicle import IcicleParams
    from tracevis3d.layout.refine import window_params

    bpy.ops.wm.read_factory_settings(use_empty=True)
    remove_startup_defaults(bpy.context.scene)
    reset_peak()
    trace, t_load, _ = timed(tracevis3d.load, path)
    n = len(trace)
    params = IcicleParams()
    if overview_s:  # the overview of a stretch of the trace (the whole one's build is too large)
        params = IcicleParams(time_window=middle_window(trace, overview_s))
        name = f"{name} ({overview_s:g} s overview)"
    _, t_build, c_build = timed(build_icicle, trace, params, trace_path=path)
    rows.append(dict(trace=name, calls=n, window="overview build", zoom=t_build, zoom_cpu=c_build, load_s=t_load,
                     peak=peak_mb(), loadavg=os.getloadavg()[0]))
    scene = bpy.context.scene
    meta = json.loads(scene[META_KEY])
    T0, T1 = float(meta["t0"]), float(meta["t1"])

    def at(place: float, ms: float) -> tuple:
        c = T0 + place * (T1 - T0)
        return (c - 500.0 * ms, c + 500.0 * ms)

    before = reset_peak()
    out, t, c = timed(view.zoom_to, scene, window=at(0.5, 0.4) if synthetic else busiest(trace, 400.0))
    rows.append(dict(trace=name, calls=n, window="first zoom", zoom=t, zoom_cpu=c, layout=out["seconds"]["layout"],
                     write=out["seconds"]["write"], drawn=out["calls_drawn"], peak=peak_mb(),
                     grew=peak_mb() - before, loadavg=os.getloadavg()[0]))
    for place, ms in zip(PLACES, WINDOWS_MS):
        window = at(place, ms) if synthetic else busiest(trace, ms * 1000.0)
        before = reset_peak()
        load = os.getloadavg()[0]
        prof = None
        if profile_dir:
            import cProfile

            prof = cProfile.Profile()
            prof.enable()
        out, t, c = timed(view.zoom_to, scene, window=window)
        if prof is not None:
            prof.disable()
            prof.dump_stats(os.path.join(profile_dir, f"zoom_{n}_{ms:g}ms.prof"))
        select._CUT_CACHE.clear()  # the peer cuts the window itself, as a dedicated figure does
        _, tp, cp = timed(icicle_layout, trace, window_params(params, window))
        rows.append(dict(trace=name, calls=n, window=f"{ms:g} ms", zoom=t, zoom_cpu=c, layout=out["seconds"]["layout"],
                         write=out["seconds"]["write"], peer=tp, peer_cpu=cp, drawn=out["calls_drawn"],
                         names=len(out["names"]), peak=peak_mb(), grew=peak_mb() - before,
                         loadavg=max(load, os.getloadavg()[0])))
    view.zoom_to(scene, window=None)


def fmt(v, spec=".2f") -> str:
    if v is None:
        return "-"
    return f"{v:,}" if isinstance(v, (int, np.integer)) else format(v, spec)


def print_table(rows: list) -> None:
    print("| trace | calls | window | zoom s | layout s | write s | peer s | × peer | × peer (CPU) "
          "| calls drawn | names | peak MB | + MB | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = r["zoom"] / r["peer"] if r.get("peer") else None
        ratio_cpu = r["zoom_cpu"] / r["peer_cpu"] if r.get("peer_cpu") else None
        print(f"| {r['trace']} | {r['calls']:,} | {r['window']} | {fmt(r['zoom'])} | {fmt(r.get('layout'))} "
              f"| {fmt(r.get('write'))} | {fmt(r.get('peer'))} | {fmt(ratio)} | {fmt(ratio_cpu)} "
              f"| {fmt(r.get('drawn'))} | {fmt(r.get('names'))} | {fmt(r['peak'], '.0f')} | {fmt(r.get('grew'), '.0f')} "
              f"| {fmt(r['loadavg'], '.1f')} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e6,1e7", help="synthetic trace sizes (calls), comma-separated")
    ap.add_argument("--huge", action="store_true", default=os.environ.get("TV3D_BENCH_HUGE") == "1",
                    help="also 10^8 calls (a 4.5 GB native file, opened mapped; env TV3D_BENCH_HUGE=1)")
    ap.add_argument("--trace", action="append", default=[], help="a recorded trace too (repeatable)")
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where the synthetic native files go")
    ap.add_argument("--keep", action="store_true", help="keep the 10^8-call file")
    ap.add_argument("--huge-overview-s", type=float, default=2.0,
                    help="the 10^8-call figure's overview: this many seconds of its middle (0: all of it, "
                         "~12 GB of the process's own memory, 190 s here)")
    ap.add_argument("--profile", default="", help="write cProfile stats of each later zoom into this folder")
    ap.add_argument("--json", default="", help="also write the rows to this JSON file")
    args = ap.parse_args()
    import tracevis3d

    sizes = [int(float(s)) for s in args.sizes.split(",") if s.strip()]
    if args.huge and HUGE not in sizes:
        sizes.append(HUGE)
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
    rows: list = []
    for path in args.trace:
        run_trace(pathlib.Path(path).name, str(path), rows, synthetic=False, profile_dir=args.profile)
    for n in sizes:
        path = os.path.join(args.dir, f"bench_zoom_scale_{n}.tv3d.npz")
        if not os.path.exists(path):
            tracevis3d.save_synthetic(path, n, threads=4, seed=1)
        try:
            run_trace(f"synthetic {n:.0e}", path, rows, synthetic=True, profile_dir=args.profile,
                      overview_s=args.huge_overview_s if n >= HUGE else 0.0)
        finally:
            if n >= HUGE and not args.keep:
                os.remove(path)
        print_table(rows)  # so far (a long run shows its rows as they come)
        print()
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows))


if __name__ == "__main__":
    main()
