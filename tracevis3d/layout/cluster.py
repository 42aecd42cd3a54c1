"""Sub-pixel aggregation of icicle bars (SyncTrace, Sec. IV-B2 "Icicle-Plot Aggregation").

SyncTrace replaces bars "too small to display" by clusters: small, adjacent bars are
grouped, and for every level the group covers one bar with the group's horizontal
extent is drawn in a lighter colour.  Here a "small" call is one narrower than the world
width of one pixel at the render resolution, and clusters are built per (lane, depth):
because the calls of each lane are stored in depth-first pre-order, the calls of one
depth appear in increasing start time, so one linear pass with one open cluster per
depth is enough (no sort).  With stack folding, pass the drawn level (calls at the same
height) as ``depth``: calls drawn at one height are disjoint, so they too appear in
increasing start time in pre-order.
"""
import numpy as np
from numba import njit

from ..kernels.overview_clusters import lane_clusters


@njit(cache=True, nogil=True)
def cluster_subpixel_calls(start, end, depth, lane, min_width, max_gap, key):
    """Merge calls narrower than one pixel into cluster bars per (lane, depth).

    ``min_width`` and ``max_gap`` are per lane (indexed by ``lane``), in the units of
    ``start``/``end``: lanes farther from a perspective camera have larger pixels.
    A call i is *small* when ``end[i] - start[i] < min_width[lane[i]]`` (SyncTrace IV-B2:
    "bars which are too small to display").  A small call joins the open cluster of its
    (lane, depth) when it starts at most ``max_gap[lane[i]]`` after that cluster's end
    ("adjacent" bars); otherwise it opens a new cluster.  A call that is not small
    closes the open cluster of its depth, so a cluster never spans a drawn bar.
    ``key`` (e.g. the function) tells whether a cluster is uniform.

    Inputs are per call, in per-lane depth-first pre-order (lanes contiguous):
    ``start``/``end`` float64, ``depth`` int32, ``lane`` int32.
    Returns ``(cluster_of, c_lane, c_depth, c_start, c_end, c_count, c_rep, c_uniform)``:
    ``cluster_of[i]`` is the cluster of call i or -1 when it is drawn as its own box;
    per cluster k: lane, depth, extent ``[c_start[k], c_end[k]]`` (min start, max end of
    its calls), number of calls, ``c_rep[k]`` the longest call (first on ties) and
    ``c_uniform[k]``: all its calls have the same ``key``.
    Clusters are numbered in order of creation (by lane, then by start within a depth).
    """
    empty = np.empty(0, np.int64)
    return lane_clusters(start.shape[0], True, empty, empty, True, start, end, -np.inf, np.inf, key, lane, depth,
                         min_width, max_gap)[:8]
