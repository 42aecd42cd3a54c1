"""Coverage of an image by rectangles, on a coarse grid (the legend's search for room).

A rectangle covers the grid cells [r0, r1) × [c0, c1); the grid says which cells any
rectangle covers.  Built with a 2-D difference array (+1 at (r0, c0) and (r1, c1), −1 at
(r0, c1) and (r1, c0), then prefix sums over rows and columns): O(rectangles + cells),
however large the rectangles.
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def covered_cells(ny, nx, r0, c0, r1, c1):
    """bool (ny, nx): cell (r, c) is covered when r0[k] <= r < r1[k] and c0[k] <= c < c1[k]
    for some k (indices clipped to the grid; empty rectangles cover nothing)."""
    diff = np.zeros((ny + 1, nx + 1), np.int64)
    for k in range(r0.shape[0]):
        a, b = max(r0[k], 0), min(r1[k], ny)
        c, d = max(c0[k], 0), min(c1[k], nx)
        if a >= b or c >= d:
            continue
        diff[a, c] += 1
        diff[a, d] -= 1
        diff[b, c] -= 1
        diff[b, d] += 1
    out = np.zeros((ny, nx), np.bool_)
    run = np.zeros(nx + 1, np.int64)
    for r in range(ny):
        acc = 0
        for c in range(nx + 1):
            acc += diff[r, c]
            run[c] += acc
        for c in range(nx):
            out[r, c] = run[c] > 0
    return out


@njit(cache=True, nogil=True)
def box_pixel_rects(x0, x1, y1, z0, z1, loc, right, up, fwd, k, half_w, half_h, shift_x, shift_y, ortho):
    """Pixel bounding rectangle of each box's front-lower edge and back-upper edge: the
    corners (x0|x1, 0, z0) and (x0|x1, y1, z1) projected through a camera at ``loc`` with
    axes ``right``, ``up``, ``fwd`` (`layout.camera.camera_basis`): for q = p − loc,
    a = q·right, b = q·up, d = q·fwd, pixel = (half_w + k·a/d − shift_x,
    half_h − (k·b/d − shift_y)) (orthographic: d = 1).  Returns (px0, py0, px1, py1)."""
    n = x0.shape[0]
    px0 = np.empty(n)
    py0 = np.empty(n)
    px1 = np.empty(n)
    py1 = np.empty(n)
    for i in range(n):
        lo_x, lo_y, hi_x, hi_y = np.inf, np.inf, -np.inf, -np.inf
        for c in range(4):
            x = x0[i] if c % 2 == 0 else x1[i]
            y = 0.0 if c < 2 else y1[i]
            z = z0[i] if c < 2 else z1[i]
            qx, qy, qz = x - loc[0], y - loc[1], z - loc[2]
            a = qx * right[0] + qy * right[1] + qz * right[2]
            b = qx * up[0] + qy * up[1] + qz * up[2]
            d = 1.0
            if not ortho:
                d = qx * fwd[0] + qy * fwd[1] + qz * fwd[2]
                if d < 1e-12:
                    d = 1e-12
            sx = half_w + k * a / d - shift_x
            sy = half_h - (k * b / d - shift_y)
            lo_x = min(lo_x, sx)
            hi_x = max(hi_x, sx)
            lo_y = min(lo_y, sy)
            hi_y = max(hi_y, sy)
        px0[i], py0[i], px1[i], py1[i] = lo_x, lo_y, hi_x, hi_y
    return px0, py0, px1, py1
