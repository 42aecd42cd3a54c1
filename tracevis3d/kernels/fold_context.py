"""A time window's context chain (`tracevis3d.layout.fold.window_context`, the fold's rule 5) in
two passes over the shown calls, no temporaries over them.

All kernels take calls in per-thread depth-first pre-order with ``parent`` as indices into the
same arrays (-1 for roots) and ``lane`` the lane of each call (0 ≤ lane < ``n_lanes``).
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def lane_extents(start, end, lane, n_lanes):
    """Per lane, its first start and its last end: ``(lo, hi)``, ``inf`` / ``-inf`` for a lane
    without calls.  The values ``np.minimum.at(lo, lane, start)`` and ``np.maximum.at(hi, lane,
    end)`` give, bit for bit: each call is taken in turn, a tie keeps the value held (numpy's
    ``a <= b ? a : b``) and a NaN, once met, stays."""
    lo = np.full(n_lanes, np.inf)
    hi = np.full(n_lanes, -np.inf)
    for i in range(start.shape[0]):
        ln = lane[i]
        s, e = start[i], end[i]
        if not (lo[ln] <= s or lo[ln] != lo[ln]):  # numpy's minimum(held, s)
            lo[ln] = s
        if not (hi[ln] >= e or hi[ln] != hi[ln]):  # maximum(held, e)
            hi[ln] = e
    return lo, hi


@njit(cache=True, nogil=True)
def context_flags(start, end, parent, lane, kind, n_lanes, share, kind_other):
    """bool per call: it is its window's context (`layout.fold.window_context`).  A call
    *spans* its lane when ``end - start >= share · (hi - lo)`` of its lane's extent
    (`lane_extents`) and it starts at ``lo`` or ends at ``hi``, its kind ``kind_other``; a
    spanning call with a spanning child is context.  The same float operations as the
    numpy formula it replaces (a subtraction, a product, comparisons)."""
    n = start.shape[0]
    lo, hi = lane_extents(start, end, lane, n_lanes)
    spans = np.empty(n, np.bool_)
    has_spanning_child = np.zeros(n, np.bool_)
    for i in range(n):
        ln = lane[i]
        lc, hc = lo[ln], hi[ln]
        s, e = start[i], end[i]
        sp = (e - s) >= share * (hc - lc) and (s == lc or e == hc) and kind[i] == kind_other
        spans[i] = sp
        p = parent[i]
        if sp and p >= 0:
            has_spanning_child[p] = True
    for i in range(n):
        spans[i] = spans[i] and has_spanning_child[i]
    return spans
