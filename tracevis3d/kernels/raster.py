"""Coverage of an image by rectangles, on a coarse grid (the legend's search for room).

A rectangle covers the grid cells [r0, r1) × [c0, c1); the grid says which cells any
rectangle covers.  Built with a 2-D difference array (+1 at (r0, c0) and (r1, c1), −1 at
(r0, c1) and (r1, c0), then prefix sums over rows and columns): O(rectangles + cells),
however large the rectangles.
"""
import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def covered_cells(ny, nx, r0, c0, r1, c1):
    """bool (ny, nx): cell (r, c) is covered when r0[k] <= r < r1[k] and c0[k] <= c < c1[k]
    for some k (indices clipped to the grid; empty rectangles cover nothing)."""
    diff = np.zeros((ny + 1, nx + 1), np.int64)
    for k in range(r0.shape[0]):
        _add_rect(diff, ny, nx, r0[k], c0[k], r1[k], c1[k])
    return _covered(diff, ny, nx)


@njit(cache=True, nogil=True)
def _add_rect(diff, ny, nx, a, c, b, d):
    """Rows [a, b) × columns [c, d), clipped to the grid, into the difference array."""
    a, b, c, d = max(a, 0), min(b, ny), max(c, 0), min(d, nx)
    if a < b and c < d:
        diff[a, c] += 1
        diff[a, d] -= 1
        diff[b, c] -= 1
        diff[b, d] += 1


@njit(cache=True, nogil=True)
def _covered(diff, ny, nx):
    """The cells the difference array's rectangles cover (prefix sums over rows and columns)."""
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
def project_points(p, loc, right, up, fwd, two_t, m, half_w, half_h, shift_x, shift_y, ortho_s):
    """Pixel coordinates (x right, y down) of world points ``p`` (n, 3) seen from ``loc``
    with axes ``right``, ``up``, ``fwd`` (`layout.camera.camera_basis`): for q = p − loc,
    a = q·right, b = q·up, z = q·fwd, perspective x = half_w + a/(z·two_t)·m − shift_x,
    y = half_h − (b/(z·two_t)·m − shift_y) (two_t: twice the half-tangent of the larger
    side m); orthographic (``ortho_s`` > 0, world per pixel) a/ortho_s and b/ortho_s.  One
    pass, the arithmetic of `layout.camera.project`'s formula in its order."""
    n = p.shape[0]
    out = np.empty((n, 2))
    for i in range(n):
        qx, qy, qz = p[i, 0] - loc[0], p[i, 1] - loc[1], p[i, 2] - loc[2]
        a = qx * right[0] + qy * right[1] + qz * right[2]
        b = qx * up[0] + qy * up[1] + qz * up[2]
        if ortho_s > 0.0:
            px, py = a / ortho_s, b / ortho_s
        else:
            z = qx * fwd[0] + qy * fwd[1] + qz * fwd[2]
            px = a / (z * two_t) * m
            py = b / (z * two_t) * m
        out[i, 0] = half_w + (px - shift_x)
        out[i, 1] = half_h - (py - shift_y)
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
        px0[i], py0[i], px1[i], py1[i] = box_rect(x0[i], x1[i], y1[i], z0[i], z1[i], loc, right, up, fwd, k, half_w,
                                                  half_h, shift_x, shift_y, ortho)
    return px0, py0, px1, py1


@njit(cache=True, nogil=True, inline="always")
def box_rect(x0, x1, y1, z0, z1, loc, right, up, fwd, k, half_w, half_h, shift_x, shift_y, ortho):
    """One box's pixel bounding rectangle (`box_pixel_rects`, whose docstring gives the
    projection): the least and greatest pixel x and y of its four corners (x0|x1, 0, z0)
    and (x0|x1, y1, z1).  Returns (lo_x, lo_y, hi_x, hi_y)."""
    lx, rx, ux, fx = loc[0], right[0], up[0], fwd[0]
    ly, ry, uy, fy = loc[1], right[1], up[1], fwd[1]
    lz, rz, uz, fz = loc[2], right[2], up[2], fwd[2]
    lo_x, lo_y, hi_x, hi_y = np.inf, np.inf, -np.inf, -np.inf
    for c in range(4):
        x = x0 if c % 2 == 0 else x1
        y = 0.0 if c < 2 else y1
        z = z0 if c < 2 else z1
        qx, qy, qz = x - lx, y - ly, z - lz
        a = k * (qx * rx + qy * ry + qz * rz)
        b = k * (qx * ux + qy * uy + qz * uz)
        if not ortho:  # orthographic: d = 1 (k·a/1 is k·a, to the bit)
            d = qx * fx + qy * fy + qz * fz
            if d < 1e-12:
                d = 1e-12
            a /= d
            b /= d
        sx = half_w + a - shift_x
        sy = half_h - (b - shift_y)
        lo_x = min(lo_x, sx)
        hi_x = max(hi_x, sx)
        lo_y = min(lo_y, sy)
        hi_y = max(hi_y, sy)
    return lo_x, lo_y, hi_x, hi_y


@njit(cache=True, nogil=True)
def covered_cells_px(ny, nx, cell, x0, y0, x1, y1):
    """`covered_cells` of pixel rectangles [x0, x1) × [y0, y1): rectangle k covers columns
    floor(x0/cell) .. floor(x1/cell) and rows floor(y0/cell) .. floor(y1/cell) (inclusive),
    clipped to the grid; a rectangle with a NaN coordinate covers nothing, ±inf are clipped.
    One pass, no per-rectangle arrays (10^7 boxes of a 10^7-call icicle)."""
    diff = np.zeros((ny + 1, nx + 1), np.int64)
    big = 4.0 * (nx + ny + 2) * cell
    for k in range(x0.shape[0]):
        add_px_rect(diff, ny, nx, cell, big, x0[k], y0[k], x1[k], y1[k])
    return _covered(diff, ny, nx)


@njit(cache=True, nogil=True, inline="always")
def add_px_rect(diff, ny, nx, cell, big, x0, y0, x1, y1):
    """The pixel rectangle [x0, x1) × [y0, y1) into the difference array ``diff`` as
    `covered_cells_px` marks it: columns floor(x0/cell) .. floor(x1/cell) and rows
    floor(y0/cell) .. floor(y1/cell), inclusive, coordinates clipped to ±``big`` first;
    nothing when a coordinate is NaN."""
    if not (x0 != x0 or y0 != y0 or x1 != x1 or y1 != y1):
        c = int(np.floor(min(max(x0, -big), big) / cell))
        a = int(np.floor(min(max(y0, -big), big) / cell))
        d = int(np.floor(min(max(x1, -big), big) / cell)) + 1
        b = int(np.floor(min(max(y1, -big), big) / cell)) + 1
        _add_rect(diff, ny, nx, a, c, b, d)


@njit(cache=True, nogil=True)
def nearest_free_window(sat, r_lo, r_hi, c_lo, c_hi, hh, ww, cell, pad, x0, y0, x1, y1, w, h):
    """`layout.annotate.free_corner`'s search: among the windows of ``hh`` × ``ww`` cells
    whose first cell (r, c) is in [r_lo, r_hi] × [c_lo, c_hi] and that hold no covered cell
    (summed-area table ``sat``: S[r + hh, c + ww] − S[r, c + ww] − S[r + hh, c] + S[r, c] = 0),
    the block (w × h pixels) at bx = clip(c·cell + pad, x0, x1 − w), by = clip(r·cell + pad,
    y0, y1 − h) nearest a corner of (x0, y0, x1, y1): the least of
    hypot(bx − cx, by − cy) / hypot(x1 − x0, y1 − y0) + bias over the corners (top right 0,
    bottom right 0.05, top left 0.1, bottom left 0.15), the first in row-major order of
    equals.  Returns ``(found, bx, by)``."""
    cxs = (x1 - w, x1 - w, x0, x0)
    cys = (y0, y1 - h, y0, y1 - h)
    bias = (0.0, 0.05, 0.1, 0.15)
    diag = math.hypot(x1 - x0, y1 - y0)
    found = False
    best = np.inf
    best_x = 0.0
    best_y = 0.0
    for r in range(r_lo, r_hi + 1):
        for c in range(c_lo, c_hi + 1):
            if sat[r + hh, c + ww] - sat[r, c + ww] - sat[r + hh, c] + sat[r, c] != 0:
                continue
            bx = min(max(c * cell + pad, x0), x1 - w)
            by = min(max(r * cell + pad, y0), y1 - h)
            score = np.inf
            for q in range(4):
                s = math.hypot(bx - cxs[q], by - cys[q]) / diag + bias[q]
                if s < score:
                    score = s
            if not found or score < best:
                found = True
                best = score
                best_x = bx
                best_y = by
    return found, best_x, best_y


@njit(cache=True, nogil=True)
def polygon_bands(px, py, band):
    """The edges of the closed polygon (px[k], py[k]) → (px[k+1], py[k+1]) (the last back to
    the first) bucketed by horizontal bands ``band`` pixels tall from the polygon's lowest y:
    edge k is listed in every band its y-range [min, max] meets.  Returns (y0, ptr, ids): band
    b holds ids[ptr[b]:ptr[b + 1]].  O(vertices + listed edges)."""
    n = px.shape[0]
    y0 = py.min() if n else 0.0
    n_bands = int(math.floor((py.max() - y0) / band)) + 1 if n else 1
    count = np.zeros(n_bands + 1, np.int64)
    for k in range(n):
        j = k + 1 if k + 1 < n else 0
        b0 = int(math.floor((min(py[k], py[j]) - y0) / band))
        b1 = int(math.floor((max(py[k], py[j]) - y0) / band))
        for b in range(b0, b1 + 1):
            count[b + 1] += 1
    ptr = np.cumsum(count)
    ids = np.empty(ptr[-1], np.int64)
    fill = ptr[:-1].copy()
    for k in range(n):
        j = k + 1 if k + 1 < n else 0
        b0 = int(math.floor((min(py[k], py[j]) - y0) / band))
        b1 = int(math.floor((max(py[k], py[j]) - y0) / band))
        for b in range(b0, b1 + 1):
            ids[fill[b]] = k
            fill[b] += 1
    return y0, ptr, ids


@njit(cache=True, nogil=True)
def inside_polygon_banded(qx, qy, px, py, y0, band, ptr, ids):
    """Which points (qx, qy) lie inside the closed polygon (px, py) by the even-odd rule: a
    horizontal ray to the right crosses an odd number of edges, an edge (x0, y0)–(x1, y1)
    crossed where (y0 > y) != (y1 > y) and x < x0 + t (x1 − x0), t = (y − y0) / (y1 − y0)
    (the same arithmetic as a plain test over every edge: the tests' twin), only
    the edges of the point's band tested (`polygon_bands`): an edge outside it cannot cross."""
    m = qx.shape[0]
    n = px.shape[0]
    out = np.zeros(m, np.bool_)
    n_bands = ptr.shape[0] - 1
    for i in range(m):
        x, y = qx[i], qy[i]
        b = int(math.floor((y - y0) / band)) if n else -1
        if b < 0 or b >= n_bands:
            continue
        odd = False
        for e in range(ptr[b], ptr[b + 1]):
            k = ids[e]
            j = k + 1 if k + 1 < n else 0
            ya, yb = py[k], py[j]
            if (ya > y) != (yb > y):
                t = (y - ya) / (yb - ya if yb != ya else 1.0)
                if x < px[k] + t * (px[j] - px[k]):
                    odd = not odd
        out[i] = odd
    return out
