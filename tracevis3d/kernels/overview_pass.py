"""Per-call columns of an overview made in one pass each, with no temporaries over the calls
(`tracevis3d.layout.icicle`, `layout.select`, `layout.fold`: at 10^7 calls each numpy form
made two or three arrays of 40-80 MB, and their pages, for one result).

Every value is the numpy form's, bit for bit: the same IEEE operations on the same operands
(a difference, then a quotient; comparisons and maxima), no sum across calls.  Brute-force
twins: tests/unit/test_overview_pass.py.
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def clipped_widths(start, end, idx, whole, t0, t1, us_per_px):
    """``(np.minimum(end[i], t1) - np.maximum(start[i], t0)) / us_per_px`` for i = ``idx[k]``
    (every call, i = k, where ``whole``): a call's width inside the window [t0, t1], in pixels
    of ``us_per_px``.  A NaN end or start stays NaN, as numpy's minimum and maximum keep it."""
    n = start.shape[0] if whole else idx.shape[0]
    out = np.empty(n, np.float64)
    for k in range(n):
        i = k if whole else idx[k]
        e = end[i]
        s = start[i]
        hi = t1 if e > t1 else e
        lo = t0 if s < t0 else s
        out[k] = (hi - lo) / us_per_px
    return out


@njit(cache=True, nogil=True)
def lane_of_calls(lane_of_thread, thread, idx, whole):
    """``lane_of_thread[thread[idx]]`` as int32 (``thread`` itself where ``whole``): the lane
    of each shown call from its thread's lane."""
    n = thread.shape[0] if whole else idx.shape[0]
    out = np.empty(n, np.int32)
    for k in range(n):
        out[k] = lane_of_thread[thread[k if whole else idx[k]]]
    return out


@njit(cache=True, nogil=True)
def widest_per_lane(name_px, folded_a, folded_b, kind, lane, n_lanes, kind_work):
    """Per lane l of ``n_lanes``, the widest nameable call: with v[i] = 0 where ``folded_a[i]``
    or ``folded_b[i]``, else ``name_px[i]``, ``(work[l], any[l])`` = the maximum of 0 and of
    v[i] over the calls of lane l whose ``kind[i] == kind_work`` (``work``), and over all of
    them (``any``): ``np.maximum.at`` of those values into zeros (NaN kept, as numpy's
    maximum keeps it); ``ok`` False when a lane is outside [0, n_lanes) (numpy's IndexError)."""
    work = np.zeros(n_lanes, np.float64)
    every = np.zeros(n_lanes, np.float64)
    for i in range(name_px.shape[0]):
        ln = lane[i]
        if ln < 0 or ln >= n_lanes:
            return work, every, False
        v = 0.0 if folded_a[i] or folded_b[i] else name_px[i]
        if v > every[ln] or v != v:
            every[ln] = v
        if kind[i] == kind_work and (v > work[ln] or v != v):
            work[ln] = v
    return work, every, True


@njit(cache=True, nogil=True)
def view_areas_in_place(width, table, lane, code, drawn):
    """``width[k] = (width[k] · table[lane[k], code[k]]) · drawn[k]`` in place, each shown
    call's view area (`layout.icicle.icicle_stages`: its width, times its fold height, read
    from its lane's row of the height table, `layout.fold_heights.LevelHeights`, times whether
    it is drawn, 1.0 or 0.0): numpy's two multiplies, term for term, in one pass."""
    for k in range(width.shape[0]):
        width[k] = (width[k] * table[lane[k], code[k]]) * (1.0 if drawn[k] else 0.0)


@njit(cache=True, nogil=True)
def is_every_position(idx):
    """Whether ``idx[k] == k`` for every k (shown calls that are every call of their trace, in
    order: `layout.fold.every_call`), read once and left at the first that differs (numpy's
    form compared a fresh ``arange`` a chunk at a time)."""
    for k in range(idx.shape[0]):
        if idx[k] != k:
            return False
    return True
