"""Reference scenes for the render tests, and their regeneration.

    .venv/bin/python tools/regen_reference_images.py        # rewrite tests/reference_images/*.png

The render tests import `reference_trace`, `REFERENCE_CASES`, `render_case`, `load_png`
and `project_boxes` from here, so the images are always made by the same code.
Look at the regenerated PNGs before committing them.
"""
from __future__ import annotations

import os
import pathlib
import sys

import numpy as np

REPO = pathlib.Path(__file__).resolve().parent.parent
REF_DIR = REPO / "tests" / "reference_images"

# the reference trace: one thread, 4 named functions over 3 levels, plus a run of 40
# calls of 1 µs (sub-pixel at 320 px) under C that must turn into a cluster box.
TINY_N = 40


def reference_trace():
    from tracevis3d.model import Trace

    func = [0, 1, 3, 2]
    start = [0.0, 50.0, 100.0, 500.0]
    end = [1000.0, 450.0, 300.0, 950.0]
    parent = [-1, 0, 1, 0]
    for k in range(TINY_N):
        func.append(4)
        start.append(600.0 + 2.0 * k)
        end.append(601.0 + 2.0 * k)
        parent.append(3)
    names = ["alpha (/src/app/main.py:1)", "beta (/src/app/main.py:20)",
             "gamma (/src/app/work.py:5)", "delta (/src/app/work.py:40)", "tiny (/src/app/work.py:90)"]
    return Trace.from_arrays(func, start, end, parent, function_names=names,
                             thread_names=["MainThread"], meta={"source": "reference"}).check()


REFERENCE_CASES = {
    # name: IcicleParams overrides (all 320x180 Workbench)
    "icicle_small": dict(resolution=(320, 180)),
    "icicle_small_ortho_depth": dict(resolution=(320, 180), orthographic=True, color_by="depth",
                                     extrude_measure="inclusive"),
}


def render_case(params: dict, path, engine="workbench", trace=None):
    """Build the reference trace's icicle with ``params`` and render it; returns build info."""
    import bpy

    from tracevis3d.blender.render import render_figure
    from tracevis3d.blender.scene import build_icicle
    from tracevis3d.layout import IcicleParams

    bpy.ops.wm.read_factory_settings(use_empty=True)
    p = IcicleParams(**params)
    info = build_icicle(trace if trace is not None else reference_trace(), p)
    render_figure(path, engine=engine, resolution=p.resolution)
    return info


def load_png(path) -> np.ndarray:
    """(h, w, 4) float array, row 0 at the TOP, raw stored (sRGB) values in [0, 1]."""
    from tracevis3d.blender.figure_report import load_image

    return load_image(path, channels=4)


def project_points(points, scene=None) -> np.ndarray:
    """Pixel coordinates (x right, y down) of world points through the scene camera."""
    from tracevis3d.blender.figure_report import project_points as project

    return project(points, scene)


def box_corners(centre, size) -> np.ndarray:
    s = np.array([[x, y, z] for x in (-.5, .5) for y in (-.5, .5) for z in (-.5, .5)])
    return np.asarray(centre)[None] + s * np.asarray(size)[None]


def _hull(pts):
    pts = sorted(map(tuple, pts))
    if len(pts) < 3:
        return pts

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower, upper = [], []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


def polygon_mask(poly, shape, grow=0.0) -> np.ndarray:
    """Pixels whose centre lies inside the convex polygon (CCW in y-down pixel space),
    with the edges pushed out by ``grow`` px (negative shrinks)."""
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w]
    px, py = xx + 0.5, yy + 0.5
    inside = np.ones(shape, bool)
    n = len(poly)
    if n < 3:
        return np.zeros(shape, bool)
    area = sum(poly[i][0] * poly[(i + 1) % n][1] - poly[(i + 1) % n][0] * poly[i][1] for i in range(n))
    sgn = 1.0 if area > 0 else -1.0
    for i in range(n):
        (x0, y0), (x1, y1) = poly[i], poly[(i + 1) % n]
        ex, ey = x1 - x0, y1 - y0
        ln = max(np.hypot(ex, ey), 1e-9)
        c = sgn * (ex * (py - y0) - ey * (px - x0)) / ln  # signed distance, >0 inside
        inside &= c >= -grow
    return inside


def box_mask(centre, size, shape, grow=0.0, scene=None) -> np.ndarray:
    return polygon_mask(_hull(project_points(box_corners(centre, size), scene)), shape, grow)


def face_pixel_box(centre, size, scene=None) -> tuple:
    """Pixel bounding box (x0, y0, x1, y1) of a box's front face (its -y side)."""
    c = np.asarray(centre, float)
    s = np.asarray(size, float)
    pts = [c + np.array([sx * s[0], -0.5 * s[1], sz * s[2]]) for sx in (-.5, .5) for sz in (-.5, .5)]
    p = project_points(pts, scene)
    return p[:, 0].min(), p[:, 1].min(), p[:, 0].max(), p[:, 1].max()


def main() -> int:
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("TRACEVIS3D_QUIET", "1")
    REF_DIR.mkdir(parents=True, exist_ok=True)
    for name, params in REFERENCE_CASES.items():
        path = REF_DIR / f"{name}.png"
        render_case(params, path)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
