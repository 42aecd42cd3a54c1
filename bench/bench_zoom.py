"""Benchmark: flying into a stretch of an icicle (`tracevis3d.blender.view.zoom_to`, issue 70).

For each trace (recorded ones, tools/record_traces.py: sympy, sympy_pool, docutils; and, with
``--synthetic 1e6,1e7``, 4-thread `tracevis3d.synthetic` traces), the default overview is built
headless in Blender (bpy module), then windows of 0.2, 1, 5 and 50 ms around the busiest stretch
of each width are refined in turn.  The row "first zoom" is the figure's first zoom (a window of
0.4 ms): the build keeps the overview's colours and trace for it (`view.keep_overview_steps`),
so it costs what the later zooms cost; before, it ran the overview's stages over the whole trace
again (10.6 s at 1.1·10^6 calls, 49.8 s at 10^7, same machine under load).  The peer, measured
in the same run, is the dedicated ``render-icicle --window`` layout of the same window (`icicle_layout`, bpy-free: what the
refinement lays out before writing its boxes and names into the scene; the dedicated figure
would also write a whole scene).  One table: seconds of the zoom and of the peer, their ratio,
names of calls at >= 14 px in the zoomed camera frame against the names the dedicated figure
places, and the scene's objects, box instances and vertices (8 per box: a cube; plus the mesh
layers' vertices).  The "overview" rows give the default scene itself: its build time, and the
same counts, the budget the issue asks for.

Budget of the overview scene (what Workbench or EEVEE orbits at interactive rates): the
overview draws a call as its own box only when it is at least a pixel wide at 1920 px, so its
boxes are bounded by the pixel grid (~10^5 for a deep figure), not by the calls: budget
<= 2·10^5 box instances (1.6·10^6 vertices, instanced from one cube per layer) and <= 1,000
objects (Blender's per-object cost dominates the viewport's redraw past a few thousand).

Usage:  cd bench; PYTHONPATH=.. ../.venv/bin/python bench_zoom.py [--traces DIR] [NAME ...]
        [--synthetic 1e6,1e7]

Measured 2026-11-28 (this 2-core machine shared with other jobs, load average 7-10;
``--traces`` of tools/record_traces.py sympy, sympy_pool, docutils, ``--synthetic 1e7``), abridged:

    | trace         | calls      | window      | zoom s     | dedicated layout s | ×        | names ≥ 14 px | dedicated | objects  | boxes     | vertices  |
    |---------------|------------|-------------|------------|--------------------|----------|---------------|-----------|----------|-----------|-----------|
    | sympy         | 1,131,492  | overview    | 7.472      | 4.933              | 1.51     | 83            | -         | 129      | 10,855    | 86,936    |
    | sympy         | 1,131,492  | first zoom  | 0.840      | -                  | -        | -             | -         | -        | -         | -         |
    | sympy         | 1,131,492  | 0.2 ms      | 0.293      | 0.209              | 1.40     | 26            | 26        | 195      | 11,711    | 93,784    |
    | sympy         | 1,131,492  | 1 ms        | 0.206      | 0.189              | 1.09     | 54            | 54        | 225      | 12,468    | 99,852    |
    | sympy         | 1,131,492  | 5 ms        | 0.148      | 0.261              | 0.57     | 55            | 55        | 225      | 11,720    | 93,856    |
    | sympy         | 1,131,492  | 50 ms       | 0.483      | 0.219              | 2.20     | 29            | 29        | 198      | 11,054    | 88,528    |
    | sympy         | 1,131,492  | whole again | -          | -                  | -        | -             | -         | 129      | 10,855    | 86,936    |
    | sympy_pool    | 1,047,882  | first zoom  | 1.400      | -                  | -        | -             | -         | -        | -         | -         |
    | sympy_pool    | 1,047,882  | 0.2..50 ms  | 0.26..0.96 | 0.14..0.56         | 0.9..2.1 | 24..58        | 24..59    | 223..259 | ≤ 8,020   | ≤ 64,232  |
    | docutils      | 538,546    | first zoom  | 1.621      | -                  | -        | -             | -         | -        | -         | -         |
    | docutils      | 538,546    | 0.2..50 ms  | 0.41..2.12 | 0.21..0.62         | 1.5..4.0 | 11..79        | 11..79    | 170..243 | ≤ 9,831   | ≤ 78,802  |
    | synthetic 1e7 | 10,000,000 | overview    | 115.7      | 62.7               | 1.84     | 22            | -         | 73       | 94,981    | 759,942   |
    | synthetic 1e7 | 10,000,000 | first zoom  | 1.058      | -                  | -        | -             | -         | -        | -         | -         |
    | synthetic 1e7 | 10,000,000 | 0.2..50 ms  | 0.31..0.65 | 0.11..0.24         | 2.8..4.6 | 62..102       | 62..102   | 184..228 | ≤ 104,835 | ≤ 838,832 |

Every zoom names what the dedicated figure names (its layout, written); the docutils 0.2 ms
window has 11 names to give (its dedicated figure names 11 too).  Back at the whole figure the
scene has exactly the overview's objects.  The overview's build pays for keeping its colours:
the trace file's SHA-1 (0.2 s for 190 MB), a file of one byte per call and a native copy of a
JSON trace (~46 bytes per call, written in 0.44 s at 1.1·10^6 calls) in the user cache.  A fresh
Blender that opens the saved sympy .blend zooms first in 1.98 s with them, 8.33 s without (the
JSON parsed again and the stages run; measured once by hand, the same day, load ~11).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import time

import numpy as np

DEFAULT = ("sympy", "sympy_pool", "docutils")
WINDOWS_MS = (0.2, 1.0, 5.0, 50.0)


def busiest(trace, width_us: float) -> tuple:
    """The window of ``width_us`` where most calls start."""
    t0, t1 = float(trace.start.min()), float(trace.end.max())
    n = max(int((t1 - t0) // width_us), 1)
    counts, edges = np.histogram(trace.start, bins=n, range=(t0, t0 + n * width_us))
    k = int(counts.argmax())
    return (float(edges[k]), float(edges[k] + width_us))


def scene_counts(bpy) -> tuple:
    """(objects, box instances, vertices) of the scene: 8 vertices per instanced box."""
    boxes = verts = 0
    for ob in bpy.data.objects:
        if ob.hide_render or ob.type not in ("POINTCLOUD", "MESH"):
            continue
        if "tv3d_layer" in ob and "tv3d_tubes" not in ob and any(m.name == "TraceVis3D instancer"
                                                                 for m in ob.modifiers):
            n = len(ob.data.points) if ob.type == "POINTCLOUD" else len(ob.data.vertices)
            boxes += n
            verts += 8 * n
        elif ob.type == "MESH":
            verts += len(ob.data.vertices)
    return len(bpy.data.objects), boxes, verts


def names_in_frame(scene, collection: str) -> int:
    from tracevis3d.blender import view
    from tracevis3d.blender.figure_report import label_pixel_boxes

    w, h = scene.render.resolution_x, scene.render.resolution_y
    return sum(1 for b in label_pixel_boxes(collection, scene) if b[0] in view.NAME_KINDS and b[6] >= 14 - 1e-3
               and b[2] >= -1 and b[3] >= -1 and b[4] <= w + 1 and b[5] <= h + 1)


def run_trace(name: str, path: pathlib.Path, rows: list) -> None:
    import bpy

    import tracevis3d
    from tracevis3d.blender import view
    from tracevis3d.blender.hygiene import remove_startup_defaults
    from tracevis3d.blender.scene import build_icicle
    from tracevis3d.layout.icicle import icicle_layout
    from tracevis3d.params.icicle import IcicleParams
    from tracevis3d.layout.refine import window_params

    bpy.ops.wm.read_factory_settings(use_empty=True)
    remove_startup_defaults(bpy.context.scene)
    trace = tracevis3d.load(path)
    n = len(trace)
    t = time.perf_counter()
    build_icicle(trace, trace_path=str(path))
    t_build = time.perf_counter() - t
    scene = bpy.context.scene
    objs, boxes, verts = scene_counts(bpy)
    t = time.perf_counter()
    icicle_layout(trace, IcicleParams())
    t_layout = time.perf_counter() - t
    rows.append((name, n, "overview", t_build, t_layout, names_in_frame(scene, "TraceVis3D"), None, objs, boxes, verts))
    first = True
    for ms in WINDOWS_MS:
        window = busiest(trace, ms * 1000.0)
        if first:  # the overview's colouring is computed once, by the first zoom
            t = time.perf_counter()
            view.zoom_to(scene, window=busiest(trace, 2 * ms * 1000.0))
            rows.append((name, n, "first zoom", time.perf_counter() - t, None, None, None, None, None, None))
            first = False
        t = time.perf_counter()
        view.zoom_to(scene, window=window)
        t_zoom = time.perf_counter() - t
        t = time.perf_counter()
        spec = icicle_layout(trace, window_params(IcicleParams(), window))
        t_peer = time.perf_counter() - t
        dedicated = sum(1 for k in spec.labels.kind if k in view.NAME_KINDS)
        objs, boxes, verts = scene_counts(bpy)
        rows.append((name, n, f"{ms:g} ms", t_zoom, t_peer, names_in_frame(scene, view.ZOOM_COLLECTION), dedicated,
                     objs, boxes, verts))
    view.zoom_to(scene, window=None)
    objs, boxes, verts = scene_counts(bpy)
    rows.append((name, n, "whole again", None, None, None, None, objs, boxes, verts))


def fmt(v, spec=".3f") -> str:
    return "-" if v is None else (f"{v:,}" if isinstance(v, int) else format(v, spec))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", default=list(DEFAULT))
    ap.add_argument("--traces", default=str(pathlib.Path(__file__).resolve().parent.parent / "build" / "traces"))
    ap.add_argument("--synthetic", default="", help="sizes of 4-thread synthetic traces too, e.g. 1e6,1e7")
    ap.add_argument("--json", default="", help="also write the rows to this JSON file")
    args = ap.parse_args()
    rows: list = []
    for name in args.names:
        path = pathlib.Path(args.traces) / f"{name}.json"
        if not path.exists():
            print(f"(not recorded: {path})")
            continue
        run_trace(name, path, rows)
    for size in [s for s in args.synthetic.split(",") if s.strip()]:
        import tempfile

        import tracevis3d

        n = int(float(size))
        path = pathlib.Path(tempfile.gettempdir()) / f"bench_zoom_synthetic_{n}.tv3d.npz"
        if not path.exists():
            tracevis3d.save(tracevis3d.synthetic(n, threads=4), str(path))
        run_trace(f"synthetic {size}", path, rows)
    print("| trace | calls | window | zoom s | dedicated layout s | × | names ≥ 14 px | dedicated names "
          "| objects | boxes | vertices |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, n, what, tz, tp, names, ded, objs, boxes, verts in rows:
        ratio = tz / tp if tz is not None and tp else None
        print(f"| {name} | {n:,} | {what} | {fmt(tz)} | {fmt(tp)} | {fmt(ratio, '.2f')} | {fmt(names)} | {fmt(ded)} "
              f"| {fmt(objs)} | {fmt(boxes)} | {fmt(verts)} |")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows))


if __name__ == "__main__":
    main()
