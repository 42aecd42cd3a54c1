"""Where a figure has free room: occupancy grids of the image in cells of a few pixels, their
summed-area tables, and whether a rectangle lies on free cells (bpy-free).  The legend's
corner (`annotate.corner_place`), the callouts' free room above stacks (`callouts`) and the
detail inset's panel (`inset_plan`) ask these.
"""
from __future__ import annotations

import numpy as np


def occupancy_grid(res, cell: float, points=None, radii=None, rects=None) -> np.ndarray:
    """bool (rows, cols) grid of ``cell``-pixel cells of the image touched by discs
    (``points`` (n, 2) pixel centres, ``radii`` pixels) or rectangles (x0, y0, x1, y1)."""
    w, h = res
    ny, nx = int(np.ceil(h / cell)), int(np.ceil(w / cell))
    boxes = []
    if points is not None and len(points):
        p = np.asarray(points, np.float64).reshape(-1, 2)
        r = np.broadcast_to(np.asarray(radii if radii is not None else 0.0, np.float64), (p.shape[0],))
        boxes.append(np.stack([p[:, 0] - r, p[:, 1] - r, p[:, 0] + r, p[:, 1] + r], 1))
    if rects is not None and len(rects):
        boxes.append(np.asarray(rects, np.float64).reshape(-1, 4))
    if not boxes:
        return np.zeros((ny, nx), np.bool_)
    b = np.concatenate(boxes)
    return rects_grid(res, cell, b[:, 0], b[:, 1], b[:, 2], b[:, 3])


def rects_grid(res, cell: float, x0, y0, x1, y1) -> np.ndarray:
    """`occupancy_grid` of rectangles given as four columns of pixel coordinates (no
    (n, 4) copy: the icicle passes one rectangle per drawn call); a rectangle with a NaN
    coordinate covers nothing."""
    from ..kernels.raster import covered_cells_px

    w, h = res
    ny, nx = int(np.ceil(h / cell)), int(np.ceil(w / cell))
    f = [np.ascontiguousarray(v, np.float64) for v in (x0, y0, x1, y1)]
    return covered_cells_px(ny, nx, float(cell), *f)


def summed_area(grid: np.ndarray) -> np.ndarray:
    """The summed-area table of an occupancy grid (`free_corner`): (rows + 1, cols + 1),
    entry (r, c) the number of covered cells above and left of cell (r, c)."""
    ny, nx = grid.shape
    sat = np.zeros((ny + 1, nx + 1), np.int64)
    sat[1:, 1:] = np.cumsum(np.cumsum(grid, 0), 1)
    return sat


def cells_free(sat, cell: float, x0, y0, x1, y1) -> np.ndarray:
    """Per pixel rectangle (x0, y0, x1, y1, arrays): no covered cell of the summed-area table
    ``sat`` (`summed_area`, cells of ``cell`` pixels) under it (a rectangle reaching off the
    grid is not free)."""
    ny, nx = sat.shape[0] - 1, sat.shape[1] - 1
    c0 = np.floor(np.asarray(x0) / cell).astype(np.int64)
    r0 = np.floor(np.asarray(y0) / cell).astype(np.int64)
    c1 = np.ceil(np.asarray(x1) / cell).astype(np.int64)
    r1 = np.ceil(np.asarray(y1) / cell).astype(np.int64)
    inside = (c0 >= 0) & (r0 >= 0) & (c1 <= nx) & (r1 <= ny) & (c1 > c0) & (r1 > r0)
    c0, r0 = np.clip(c0, 0, nx), np.clip(r0, 0, ny)
    c1, r1 = np.clip(c1, 0, nx), np.clip(r1, 0, ny)
    n = sat[r1, c1] - sat[r0, c1] - sat[r1, c0] + sat[r0, c0]
    return inside & (n == 0)
