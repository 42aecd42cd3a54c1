"""The sub-pixel clusters of an icicle's drawn calls in one pass over them, their fields read
where they lie (`tracevis3d.layout.geometry.cluster_calls`): no array over the drawn calls but
the clusters' numbers, and a scratch table the size of the longest lane.

Drawn call k (0 ≤ k < len(pos)) stands at shown position ``p = pos[k]`` and is call
``c = p`` (``whole``: the figure of every call) or ``c = idx[p]`` of the trace; its lane is
``lane[p]``, its clipped time ``max(start[c], t0) .. min(end[c], t1)`` (numpy's maximum and
minimum: a tie keeps the call's own value), its function ``func[c]``, its level ``level[k]``.

The clusters are those of `tracevis3d.layout.cluster.cluster_subpixel_calls` run over each
lane's drawn calls in turn (SyncTrace IV-B2: a call narrower than its lane's ``min_width`` joins
the open cluster of its (lane, level) when it starts at most ``min_width`` after its end, a
wider call closes it), numbered in order of creation, and each cluster's dominant member as
`tracevis3d.kernels.dominant.dominant_members` finds it (the function with the most time,
ties to the smallest function; its last member; its share of the cluster's time), its time
the members' durations added in index order (``np.bincount``'s sums).
"""
import numpy as np
from numba import njit

from .grow import grown, room_for
from .overview_drawn import drawn_time


@njit(cache=True, nogil=True, inline="always")
def _extent(k, every, pos, idx, whole, start, end, t0, t1):
    """Drawn call k's clipped time and call: (s, e, c); ``every``: call k itself, unclipped."""
    if every:
        return start[k], end[k], k
    return drawn_time(k, pos, idx, whole, start, end, t0, t1)


@njit(cache=True, nogil=True, inline="always")
def lane_clusters(n, every, pos, idx, whole, start, end, t0, t1, key, lane, level, min_width, max_gap):
    """SyncTrace IV-B2's sub-pixel clusters of ``n`` drawn calls in per-lane pre-order (lanes
    contiguous), one pass with one open cluster per (lane, level): a call narrower than its
    lane's ``min_width`` joins the open cluster of its level when it starts at most
    ``max_gap[lane]`` after that cluster's end, else opens one; a wider call closes it.
    Drawn call k is call k itself (``every``: ``lane[k]``, ``start[k] .. end[k]``) or as the
    module doc says (``lane[pos[k]]``, clipped time); its level is ``level[k]``, its key
    (uniform clusters) ``key[c]``.  Returns ``(cluster_of, c_lane, c_level, c_start, c_end,
    c_count, c_rep, c_uniform, lane_cuts)`` (`layout.cluster.cluster_subpixel_calls`' arrays,
    clusters numbered in order of creation; ``lane_cuts`` where each lane's calls start, then
    n).  Inlined: each caller passes ``every`` as a constant, and gets a loop without its
    branches."""
    cluster_of = np.full(n, -1, np.int32)
    cap = max(n, 1) if every else 1024  # (every call: a cluster a call at most, no growth)
    c_lane = np.empty(cap, np.int32)
    c_level = np.empty(cap, np.int32)
    c_start = np.empty(cap, np.float64)
    c_end = np.empty(cap, np.float64)
    c_count = np.empty(cap, np.int32)
    c_rep = np.empty(cap, np.int32)
    c_uniform = np.empty(cap, np.bool_)
    c_rep_w = np.empty(cap, np.float64)  # the longest member's width (its clipped time)
    c_key0 = np.empty(cap, key.dtype)  # the first member's key: while uniform, every member's
    max_level = room_for(level[:n], 0, 0)
    open_k = np.full(max_level + 1, -1, np.int64)
    nc = 0
    cur_lane = -1
    lane_cuts = [0]  # where each lane's drawn calls start
    for k in range(n):
        ln = lane[k] if every else lane[pos[k]]
        if ln != cur_lane:
            if k > 0:
                lane_cuts.append(k)
            cur_lane = ln
            for d in range(max_level + 1):
                open_k[d] = -1
        d = level[k]
        s, e, c = _extent(k, every, pos, idx, whole, start, end, t0, t1)
        w = e - s
        if w >= min_width[cur_lane]:
            open_k[d] = -1
            continue
        j = open_k[d]
        if j >= 0 and s - c_end[j] <= max_gap[cur_lane]:
            if e > c_end[j]:
                c_end[j] = e
            c_count[j] += 1
            if key[c] != c_key0[j]:  # (the longest member's key while uniform: the first's)
                c_uniform[j] = False
            if w > c_rep_w[j]:
                c_rep[j] = k
                c_rep_w[j] = w
        else:
            j = nc
            nc += 1
            if not every and j >= c_lane.shape[0]:
                c_lane, c_level, c_count, c_rep = (grown(c_lane, nc), grown(c_level, nc), grown(c_count, nc),
                                                   grown(c_rep, nc))
                c_start, c_end = grown(c_start, nc), grown(c_end, nc)
                c_uniform, c_rep_w, c_key0 = grown(c_uniform, nc), grown(c_rep_w, nc), grown(c_key0, nc)
            c_lane[j] = cur_lane
            c_level[j] = d
            c_start[j] = s
            c_end[j] = e
            c_count[j] = 1
            c_rep[j] = k
            c_uniform[j] = True
            c_rep_w[j] = w
            c_key0[j] = key[c]
            open_k[d] = j
        cluster_of[k] = j
    lane_cuts.append(n)
    return (cluster_of, c_lane[:nc].copy(), c_level[:nc].copy(), c_start[:nc].copy(), c_end[:nc].copy(),
            c_count[:nc].copy(), c_rep[:nc].copy(), c_uniform[:nc].copy(), lane_cuts)


@njit(cache=True, nogil=True)
def drawn_clusters(pos, idx, whole, start, end, t0, t1, func, lane, level, min_width, n_funcs):
    """``(cluster_of, c_lane, c_level, c_start, c_end, c_count, c_rep, c_uniform, c_dom,
    c_share, c_time)`` of the drawn calls (module doc; `lane_clusters` with ``max_gap`` =
    ``min_width``): ``cluster_of`` int32 per drawn call (-1: a box of its own), then per
    cluster its lane and level (int32), extent, number of calls (int32), longest member
    (int32, the first on ties), whether its members share one function, its dominant member
    (int64), that function's share and the cluster's time."""
    cluster_of, c_lane, c_level, c_start, c_end, c_count, c_rep, c_uniform, lane_cuts = lane_clusters(
        pos.shape[0], False, pos, idx, whole, start, end, t0, t1, func, lane, level, min_width, min_width)
    c_dom, c_share, c_time = _dominant(cluster_of, lane_cuts, c_lane.shape[0], pos, idx, whole, start, end, t0, t1,
                                       func, n_funcs)
    return cluster_of, c_lane, c_level, c_start, c_end, c_count, c_rep, c_uniform, c_dom, c_share, c_time


@njit(cache=True, nogil=True)
def _dominant(cluster_of, lane_cuts, nc, pos, idx, whole, start, end, t0, t1, func, n_funcs):
    """Per cluster: its dominant member, that function's share and the cluster's time (module
    doc), a lane at a time: the lane's members bucketed by cluster (a lane's clusters are
    numbered consecutively) in a scratch table of int32 the size of the longest lane; each
    cluster's members read once, its distinct functions compared and cleared after."""
    c_dom = np.full(nc, -1, np.int64)
    c_share = np.zeros(nc, np.float64)
    c_time = np.zeros(nc, np.float64)
    longest = 0
    for q in range(len(lane_cuts) - 1):
        longest = max(longest, lane_cuts[q + 1] - lane_cuts[q])
    order = np.empty(longest, np.int32)
    acc = np.zeros(n_funcs, np.float64)
    last = np.full(n_funcs, -1, np.int64)
    touched = np.empty(n_funcs, np.int64)  # a cluster's distinct functions, in order of first member
    for q in range(len(lane_cuts) - 1):
        a, b = lane_cuts[q], lane_cuts[q + 1]
        g0, g1 = nc, -1  # the lane's clusters: [g0, g1]
        for k in range(a, b):
            g = cluster_of[k]
            if g >= 0:
                g0 = min(g0, g)
                g1 = max(g1, g)
        if g1 < 0:
            continue
        ptr = np.zeros(g1 - g0 + 2, np.int64)
        for k in range(a, b):
            g = cluster_of[k]
            if g >= 0:
                ptr[g - g0 + 1] += 1
        for g in range(g1 - g0 + 1):
            ptr[g + 1] += ptr[g]
        fill = ptr[:-1].copy()
        for k in range(a, b):
            g = cluster_of[k]
            if g >= 0:
                order[fill[g - g0]] = k
                fill[g - g0] += 1
        for g in range(g1 - g0 + 1):
            total = 0.0
            nt = 0
            for j in range(ptr[g], ptr[g + 1]):  # the members, read once: each function's time
                k = order[j]
                s, e, c = drawn_time(k, pos, idx, whole, start, end, t0, t1)
                f = func[c]
                if last[f] < 0:  # (a member's position is >= 0: the function's first member)
                    touched[nt] = f
                    nt += 1
                acc[f] += e - s
                last[f] = k
                total += e - s
            # the most time, ties to the smallest function: the same over the distinct
            # functions as over the members, whatever their order (a NaN time is never taken)
            best, best_t = -1, -1.0
            for q in range(nt):
                f = touched[q]
                t = acc[f]
                if t > best_t or (t == best_t and f < best):
                    best, best_t = f, t
            if best >= 0:
                c_dom[g0 + g] = last[best]
                c_share[g0 + g] = best_t / max(total, 1e-300)
            else:  # (no member of a finite time: `dominant_members`' -1, taken as the lane's first)
                c_dom[g0 + g] = a
            c_time[g0 + g] = total
            for q in range(nt):
                acc[touched[q]] = 0.0
                last[touched[q]] = -1
    return c_dom, c_share, c_time
