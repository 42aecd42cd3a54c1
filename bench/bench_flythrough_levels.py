"""Benchmark: the precomputation of a fly-through into a window (`render-animation --kind
flythrough --zoom-window auto`, issue 70 item 5) and what it adds to the scene, on 4-thread
`tracevis3d.synthetic` traces (bpy module, headless).

Per size: the default overview is built (`build_icicle`, at 1920x1080), then a 10 s, 30 fps
fly-through is set up twice on it (`animate_scene`): the plain one (the peer, measured in the
same run: its path only) and the one into the busiest window 128x narrower than the figure
(``zoom_window="auto"``: the window found, the refinement levels (at most 4) laid out and written,
the path keyed).  One table: seconds of each set-up and their ratio, the levels' own seconds
(layout in the worker, writing on the main thread), and the scene's objects, box instances and
vertices (8 per box; every object counted, the levels hidden on most frames included) of the
overview, of the animated scene, and after the animation is removed.

Usage:  NUMBA_CACHE_DIR=build/numba-cache PYTHONPATH=. .venv/bin/python bench/bench_flythrough_levels.py \\
            [--sizes 1e6,1e7]

Measured 2026-11-28 22:08 UTC (this 2-core machine shared with five other jobs, load average 8):

    | trace         | calls      | what                               | set-up s | plain s | ×      | levels s | objects | boxes   | vertices  |
    |---------------|------------|------------------------------------|----------|---------|--------|----------|---------|---------|-----------|
    | synthetic 1e6 | 1,000,000  | overview (build)                   | 9.08     | -       | -      | -        | 76      | 44,599  | 356,892   |
    | synthetic 1e6 | 1,000,000  | plain fly-through                  | 0.38     | -       | -      | -        | 76      | 44,599  | 356,892   |
    | synthetic 1e6 | 1,000,000  | into auto window (128x, 4 levels)  | 9.75     | 0.38    | 25.6   | 8.51     | 540     | 115,943 | 927,894   |
    | synthetic 1e6 | 1,000,000  | level 1..4: 3x, 11x, 38x, 128x     | 2.96, 2.09, 1.50, 1.84 | - | - | -   | 68, 125, 141, 130 | 7,884, 7,354, 4,890, 2,847 | - |
    | synthetic 1e6 | 1,000,000  | animation removed                  | -        | -       | -      | -        | 76      | 44,599  | 356,892   |
    | synthetic 1e7 | 10,000,000 | overview (build)                   | 29.83    | -       | -      | -        | 73      | 94,981  | 759,942   |
    | synthetic 1e7 | 10,000,000 | plain fly-through                  | 0.15     | -       | -      | -        | 73      | 94,981  | 759,942   |
    | synthetic 1e7 | 10,000,000 | into auto window (128x, 4 levels)  | 19.14    | 0.15    | 124    | 18.51    | 385     | 238,250 | 1,906,292 |
    | synthetic 1e7 | 10,000,000 | level 1..4: 3x, 11x, 38x, 128x     | 12.57, 2.83, 1.62, 1.25 | - | - | -  | 39, 75, 100, 98 | 9,111, 8,801, 7,573, 5,635 | - |
    | synthetic 1e7 | 10,000,000 | animation removed                  | -        | -       | -      | -        | 73      | 94,981  | 759,942   |

(levels: layout + write seconds per level, its objects and boxes; names at 1e7: 23, 54, 81, 81.)
The precomputation costs the windows, not the trace, except level 1: a window 3.4x narrower
than the figure holds a third of the calls (12.6 s of the 18.5 s at 10^7: its layout cuts and
lays out ~3·10^6 calls); the rest of it, 0.24 s, is the busiest window (a histogram of 10^7
starts) and the overview's axis, and keying the path adds 0.6 s.  The scene holds every level at once (385 objects, 2.4x the overview's boxes at 10^7),
but on any frame only the overview (split) and one level are shown; removing the animation
brings back exactly the overview's objects.
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time


def log(msg: str) -> None:
    sys.stderr.write(f"[bench] {msg}\n")
    sys.stderr.flush()


def counts(bpy) -> tuple:
    """(objects, box instances, vertices) of every object: 8 vertices per instanced box."""
    boxes = verts = 0
    for ob in bpy.data.objects:
        if ob.type not in ("POINTCLOUD", "MESH"):
            continue
        if any(m.name == "TraceVis3D instancer" for m in ob.modifiers):
            n = len(ob.data.points) if ob.type == "POINTCLOUD" else len(ob.data.vertices)
            boxes += n
            verts += 8 * n
        else:
            verts += len(ob.data.vertices)
    return len(bpy.data.objects), boxes, verts


def run(size: str, rows: list) -> None:
    import bpy

    import tracevis3d
    from tracevis3d.blender.animate import animate_scene, clear_animation
    from tracevis3d.blender.hygiene import remove_startup_defaults
    from tracevis3d.blender.scene import build_icicle

    n = int(float(size))
    path = pathlib.Path(tempfile.gettempdir()) / f"bench_fly_levels_synthetic_{n}.tv3d.npz"
    if not path.exists():
        log(f"writing {path}")
        tracevis3d.save(tracevis3d.synthetic(n, threads=4), str(path))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    remove_startup_defaults(scene)
    trace = tracevis3d.load(path)
    log(f"{size}: building the overview of {len(trace):,} calls")
    t = time.perf_counter()
    build_icicle(trace, trace_path=str(path))
    rows.append((size, len(trace), "overview (build)", time.perf_counter() - t, None, None, *counts(bpy)))
    del trace
    log(f"{size}: plain fly-through")
    t = time.perf_counter()
    animate_scene(scene, "flythrough", 10.0, 30)
    t_plain = time.perf_counter() - t
    rows.append((size, n, "plain fly-through", t_plain, None, None, *counts(bpy)))
    log(f"{size}: fly-through into the busiest window")
    t = time.perf_counter()
    info = animate_scene(scene, "flythrough", 10.0, 30, zoom_window="auto")
    t_zoom = time.perf_counter() - t
    z = info["refine"]
    rows.append((size, n, f"into auto window ({z['magnification']:.0f}x, {len(z['levels'])} levels)", t_zoom, t_plain,
                 z["seconds"], *counts(bpy)))
    for j, lv in enumerate(z["levels"], 1):
        s = lv["seconds"]
        rows.append((size, n, f"  level {j}: {lv['magnification']:.0f}x, {lv['calls_drawn']:,} boxes, "
                              f"{lv['names']} names", s["layout"] + s["write"], None, None, lv["objects"], None, None))
    clear_animation(scene)
    rows.append((size, n, "animation removed", None, None, None, *counts(bpy)))


def fmt(v, spec=".2f") -> str:
    return "-" if v is None else (f"{v:,}" if isinstance(v, int) else format(v, spec))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e6,1e7", help="calls of the synthetic traces, e.g. 1e6,1e7")
    args = ap.parse_args(argv)
    rows: list = []
    for size in [s.strip() for s in args.sizes.split(",") if s.strip()]:
        run(size, rows)
    print("| trace | calls | what | set-up s | plain fly-through s | × | levels s | objects | boxes | vertices |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for size, n, what, t, peer, lv, objs, boxes, verts in rows:
        ratio = t / peer if t is not None and peer else None
        print(f"| synthetic {size} | {n:,} | {what} | {fmt(t)} | {fmt(peer)} | {fmt(ratio)} | {fmt(lv)} | {fmt(objs)} "
              f"| {fmt(boxes)} | {fmt(verts)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
