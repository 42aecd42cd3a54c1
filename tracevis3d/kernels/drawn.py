"""The drawn calls' arrays gathered in one pass (`tracevis3d.layout.geometry.drawn_calls`)."""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def gather_drawn(drawn, sel_idx, orig, sel_lane, start, end, func, slot, folded, run_levels, bottom, height,
                 ext_unit, t0, t1, level_scale):
    """For the drawn positions ``drawn`` (indices among the shown calls), with i = sel_idx[k]
    (a call of the selection's trace) for each k = drawn[j]:

    ``idx[j] = i``; ``call_id[j] = orig[i]`` (int32; ``i`` when ``orig`` is empty: no
    hiding); ``lane, slot, folded, run_levels, level_bottom, level_height, ext_unit`` at k;
    ``start[j] = max(start[i], t0)``, ``end[j] = min(end[i], t1)``, ``func[j] = func[i]``;
    ``level_key[j] = round(bottom[k] · level_scale)`` (int64, equal for calls drawn at one
    height).  Returns those arrays in that order (numpy's gathers made one by one cost a
    pass, and a temporary, each: 10^6 drawn calls, 0.1 s)."""
    n = drawn.shape[0]
    idx = np.empty(n, np.int64)
    call_id = np.empty(n, np.int32)
    lane = np.empty(n, sel_lane.dtype)
    st = np.empty(n, np.float64)
    en = np.empty(n, np.float64)
    fn = np.empty(n, func.dtype)
    sl = np.empty(n, slot.dtype)
    fo = np.empty(n, folded.dtype)
    rl = np.empty(n, run_levels.dtype)
    bo = np.empty(n, np.float64)
    he = np.empty(n, np.float64)
    ex = np.empty(n, ext_unit.dtype)
    key = np.empty(n, np.int64)
    has_orig = orig.shape[0] > 0
    for j in range(n):
        k = drawn[j]
        i = sel_idx[k]
        idx[j] = i
        call_id[j] = orig[i] if has_orig else i
        lane[j] = sel_lane[k]
        st[j] = max(start[i], t0)
        en[j] = min(end[i], t1)
        fn[j] = func[i]
        sl[j] = slot[k]
        fo[j] = folded[k]
        rl[j] = run_levels[k]
        bo[j] = bottom[k]
        he[j] = height[k]
        ex[j] = ext_unit[k]
        key[j] = round(bottom[k] * level_scale)  # half to even, as numpy rounds
    return idx, call_id, lane, st, en, fn, sl, fo, rl, bo, he, ex, key


@njit(cache=True, nogil=True)
def dense_ranks_in_range(v, lo, hi):
    """rank[i] = the number of distinct values of ``v`` below v[i] (``np.unique``'s inverse),
    int32, for integer values in [lo, hi]: a presence table over the range, its prefix
    sums, one gather (O(n + hi − lo), no sort)."""
    table = np.zeros(hi - lo + 1, np.int32)
    for i in range(v.shape[0]):
        table[v[i] - lo] = 1
    r = 0
    for k in range(table.shape[0]):
        if table[k]:
            table[k] = r
            r += 1
    out = np.empty(v.shape[0], np.int32)
    for i in range(v.shape[0]):
        out[i] = table[v[i] - lo]
    return out


@njit(cache=True, nogil=True)
def level_key_ranks(bottom, local, level_scale, lo, hi):
    """``(ok, rank)``: the drawn calls' level keys ``round(bottom[local[j]] · level_scale)``
    (half to even, as ``np.rint``) ranked among the distinct keys (`dense_ranks_in_range`'s
    ranks, int32), read where they lie in two passes over ``local`` (a presence table over [lo,
    hi], its prefix counts, then each key's rank): no array of keys over the drawn calls.
    ``ok`` is False (and ``rank`` empty) when a key is not a finite value in [lo, hi]."""
    table = np.zeros(hi - lo + 1, np.int32)
    n = local.shape[0]
    for j in range(n):
        x = bottom[local[j]] * level_scale
        if not (x >= lo - 1.0 and x <= hi + 1.0):  # (a NaN too) before it is rounded
            return False, np.zeros(0, np.int32)
        k = round(x)
        if k < lo or k > hi:
            return False, np.zeros(0, np.int32)
        table[k - lo] = 1
    r = 0
    for k in range(table.shape[0]):
        if table[k]:
            table[k] = r
            r += 1
    out = np.empty(n, np.int32)
    for j in range(n):
        out[j] = table[round(bottom[local[j]] * level_scale) - lo]
    return True, out


@njit(cache=True, nogil=True)
def mark_drawn_and_named(drawn, named, pos, idx, whole, folded, ids, ids_of_drawn, is_named):
    """For the drawn calls read where they lie (drawn call k at position ``p = pos[k]`` of
    ``folded``, call ``c = p`` (``whole``) or ``idx[p]``): ``drawn[c] = True`` unless
    ``folded[p]`` (a folded run's band), and ``named[c] = True`` where its id in the loaded
    trace is marked in ``is_named`` (an id past its end is not).  The id: ``ids[k]``
    (``ids_of_drawn``: one a drawn call), else ``ids[c]``, or c itself where ``ids`` is empty."""
    by_call = ids.shape[0] > 0
    n_named = is_named.shape[0]
    for k in range(pos.shape[0]):
        p = pos[k]
        c = p if whole else idx[p]
        if not folded[p]:
            drawn[c] = True
        cid = ids[k] if ids_of_drawn else (ids[c] if by_call else c)
        if 0 <= cid < n_named and is_named[cid]:
            named[c] = True


@njit(cache=True, nogil=True)
def clipped_widths(idx, lane, start, end, t0, t1, px_per_us):
    """``width[k] = (min(end[i], t1) − max(start[i], t0)) · px_per_us[lane[k]]`` for
    i = idx[k]: each shown call's width in pixels, its time clipped to the window [t0, t1]
    and its lane's scale (one pass: numpy's gathers and clips, a temporary each, cost 30 ms
    over 2·10^6 calls)."""
    n = idx.shape[0]
    out = np.empty(n, np.float64)
    for k in range(n):
        i = idx[k]
        out[k] = (min(end[i], t1) - max(start[i], t0)) * px_per_us[lane[k]]
    return out


@njit(cache=True, nogil=True)
def range_by_key(key, value, n_keys):
    """``(lo, hi)``: per key k in [0, n_keys), the least and the greatest ``value[i]`` over
    the i with ``key[i] == k`` (int64; lo = 2^63 − 1 and hi = −1 where no i has it): e.g.
    the lowest and highest colour slot of each function's drawn boxes, in one pass
    (numpy's ``minimum.at`` and ``maximum.at``: 50-80 ms over 10^6 boxes)."""
    lo = np.full(n_keys, np.iinfo(np.int64).max, np.int64)
    hi = np.full(n_keys, -1, np.int64)
    for i in range(key.shape[0]):
        k = key[i]
        v = value[i]
        if v < lo[k]:
            lo[k] = v
        if v > hi[k]:
            hi[k] = v
    return lo, hi


@njit(cache=True, nogil=True)
def nearest_drawn_rows(parent, memo, calls):
    """Per call in ``calls``: its row among the drawn calls, or its nearest drawn ancestor's
    (-1: none).  ``memo`` starts as the drawn row of every call (-1: not drawn) and is
    overwritten along each walked path with what was found -- ``-(row + 3)``, or ``-2`` for
    "no drawn ancestor" -- so every undrawn call is walked through once in all: O(calls +
    the undrawn calls above them), where a walk per call and level costs O(calls × depth)
    (flows through every level of a 10^5-deep tower: 10^10 steps).  Twin: the level-by-level
    walk `tracevis3d.layout.flow_arcs.drawn_ancestor_by_levels`."""
    out = np.full(calls.shape[0], -1, np.int64)
    path = np.empty(64, np.int64)
    for q in range(calls.shape[0]):
        c = calls[q]
        n = 0
        found = -1
        while c >= 0:
            m = memo[c]
            if m >= 0:
                found = m
                break
            if m == -2:
                break
            if m <= -3:
                found = -m - 3
                break
            if n == path.shape[0]:
                grown = np.empty(2 * n, np.int64)
                grown[:n] = path
                path = grown
            path[n] = c
            n += 1
            c = parent[c]
        code = -2 if found < 0 else -(found + 3)
        for k in range(n):
            memo[path[k]] = code
        out[q] = found
    return out
