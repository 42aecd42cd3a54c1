"""Passes over an icicle's drawn calls that read their fields where they lie (a 10^7-call
overview draws nearly every call): no array over the drawn calls.

Drawn call k stands at shown position ``p = pos[k]`` and is call ``c = p`` (``whole``: the
figure of every call) or ``c = idx[p]`` of the trace; its clipped time is
``max(start[c], t0) .. min(end[c], t1)`` (numpy's maximum and minimum), its lane ``lane[p]``,
its slot ``z_base[lane] + bottom[p]·h`` tall ``htable[lane, hcode[p]]·h`` (a code into its lane's
row of the fold's height table, `tracevis3d.layout.fold.LevelHeights`), its depth
``depth·ext_unit[p]`` (`tracevis3d.layout.geometry.Drawn.place`).
"""
import numpy as np
from numba import njit

from .raster import _covered, add_px_rect, box_rect


@njit(cache=True, nogil=True, inline="always")
def drawn_time(k, pos, idx, whole, start, end, t0, t1):
    """Drawn call k's clipped time and call (module doc): ``(s, e, c)`` with c = pos[k] (``whole``)
    or idx[pos[k]], s = max(start[c], t0), e = min(end[c], t1) as numpy's maximum and minimum
    give them (a NaN stays)."""
    p = pos[k]
    c = p if whole else idx[p]
    s, e = start[c], end[c]
    if not (s >= t0 or s != s):  # np.maximum(s, t0)
        s = t0
    if not (e <= t1 or e != e):  # np.minimum(e, t1)
        e = t1
    return s, e, c


@njit(cache=True, nogil=True)
def covered_of(diff, ny, nx):
    """The (ny, nx) cells the rectangles `drawn_occupancy` marked in ``diff`` cover."""
    return _covered(diff, ny, nx)


@njit(cache=True, nogil=True)
def drawn_occupancy(diff, pos, idx, whole, start, end, t0, t1, lane, bottom, hcode, htable, ext, z_base, h, depth,
                    scale_t, fill_lo, fill_hi, loc, right, up, fwd, k, half_w, half_h, shift_x, shift_y, ortho, ny, nx,
                    cell):
    """Mark into the difference array ``diff`` ((ny + 1) × (nx + 1), `covered_of` reads it) the
    cells of ``cell`` pixels the drawn boxes ``pos`` cover (``ext``: their measures ``ext_unit``,
    one a box; `tracevis3d.layout.icicle.lanes_occupancy`): box k from x0 = (s − t0)·scale_t to
    x1 = (e − t0)·scale_t, its front face's lower edge at z0 = b + fill_lo·g and its extruded
    top's back edge at (y1, z1) = (depth·ext_unit, b + fill_hi·g) (b, g its slot's bottom and
    height), projected as `kernels.raster.box_pixel_rects` projects, its rectangle widened by
    a pixel to the right and down and marked as `kernels.raster.covered_cells_px` marks: the
    same float operations, term for term."""
    big = 4.0 * (nx + ny + 2) * cell
    for q in range(pos.shape[0]):
        s, e, _ = drawn_time(q, pos, idx, whole, start, end, t0, t1)
        p = pos[q]
        x0 = (s - t0) * scale_t
        x1 = (e - t0) * scale_t
        b = z_base[lane[p]] + bottom[p] * h
        g = htable[lane[p], hcode[p]] * h
        y1 = depth * ext[q]
        z0 = b + fill_lo * g
        z1 = b + fill_hi * g
        lo_x, lo_y, hi_x, hi_y = box_rect(x0, x1, y1, z0, z1, loc, right, up, fwd, k, half_w, half_h, shift_x,
                                          shift_y, ortho)
        add_px_rect(diff, ny, nx, cell, big, lo_x, lo_y, hi_x + 1.0, hi_y + 1.0)


@njit(cache=True, nogil=True)
def named_functions_of(pos, idx, whole, orig, func, named_lo, named, present):
    """``present[func[c]] = True`` for every drawn call c whose call id (``orig[c]``, or c
    where ``orig`` is empty) is named: ``named[id - named_lo]`` (a presence table over the
    named ids' range)."""
    has_orig = orig.shape[0] > 0
    for q in range(pos.shape[0]):
        p = pos[q]
        c = p if whole else idx[p]
        cid = orig[c] if has_orig else c
        j = cid - named_lo
        if 0 <= j < named.shape[0] and named[j]:
            present[func[c]] = True


@njit(cache=True, nogil=True)
def unnamed_boxes(pos, idx, whole, start, end, t0, t1, func, lane, folded, cluster_of, infra, named_func,
                  us_per_px):
    """The drawn calls an inset could name (`tracevis3d.layout.inset_plan._candidates`): boxes
    of their own (``cluster_of < 0``), not folded bands, not the runtime's (``infra``), of a
    function no label names (``named_func``), at least a pixel wide: ``(k, width px)``
    ascending, width ``(e − s) / us_per_px[lane]``."""
    n = pos.shape[0]
    out_k = np.empty(1024, np.int64)
    out_w = np.empty(1024, np.float64)
    m = 0
    for q in range(n):
        if cluster_of[q] >= 0:
            continue
        p = pos[q]
        if folded[p]:
            continue
        c = p if whole else idx[p]
        f = func[c]
        if infra[f] or named_func[f]:
            continue
        s, e = start[c], end[c]
        if not (s >= t0 or s != s):
            s = t0
        if not (e <= t1 or e != e):
            e = t1
        w = (e - s) / us_per_px[lane[p]]
        if w >= 1.0:
            if m == out_k.shape[0]:
                grown_k = np.empty(2 * m, np.int64)
                grown_k[:m] = out_k
                out_k = grown_k
                grown_w = np.empty(2 * m, np.float64)
                grown_w[:m] = out_w
                out_w = grown_w
            out_k[m] = q
            out_w[m] = w
            m += 1
    return out_k[:m].copy(), out_w[:m].copy()
