"""Correspondences between wait and release calls (SyncTrace Sec. IV-B1, Eq. 6-7).

    corr(f_w, f_r)  ⇔  f_w ∈ S_w, f_r ∈ S_r, thread(f_w) ≠ thread(f_r),
                       ∃ o ∈ O(f_w) ∩ O(f_r)                       (Eq. 6)
                       and t_s(f_r) ∈ [t_s(f_w), t_e(f_w)]          (Eq. 7)

Found by a sweep per object: the (call, object) pairs of waits and of releases are each
sorted by (object, start); inside one object's run, the releases whose start lies in a
wait's interval are a contiguous range of the sorted release starts (two binary searches),
so the cost is O((|W|+|R|) log |R| + output), never |W|×|R|.  The output per wait is capped
(``cap``, the latest releases in the wait are kept: the last one is the release that ended
it), which keeps memory linear in the input; the count of dropped ones is returned.

Also here: the pre-order propagations the object attribution needs (nearest named
ancestor, outermost call of a kind, "has a sync call below") and the filter that keeps,
per hand-off, the outermost pair of calls.
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def nearest_named(parent, named):
    """``out[i]`` = ``named[a]`` for the nearest ancestor-or-self ``a`` of i with
    ``named[a] >= 0`` (-1 when none): one pass over the pre-order (parents first)."""
    n = parent.shape[0]
    out = np.full(n, -1, np.int32)
    for i in range(n):
        if named[i] >= 0:
            out[i] = named[i]
        elif parent[i] >= 0:
            out[i] = out[parent[i]]
    return out


@njit(cache=True, nogil=True)
def outermost_of_kind(kind, parent, which):
    """``out[i]`` = the outermost ancestor-or-self of i whose kind is ``which`` (-1 when
    none); pre-order propagation."""
    n = parent.shape[0]
    out = np.full(n, -1, np.int32)
    for i in range(n):
        p = parent[i]
        if p >= 0 and out[p] >= 0:
            out[i] = out[p]
        elif kind[i] == which:
            out[i] = i
    return out


@njit(cache=True, nogil=True)
def nearest_strict_of_kind(kind, parent, which):
    """``out[i]`` = the nearest strict ancestor of i whose kind is ``which`` (-1 when none)."""
    n = parent.shape[0]
    out = np.full(n, -1, np.int32)
    for i in range(n):
        p = parent[i]
        if p >= 0:
            out[i] = p if kind[p] == which else out[p]
    return out


@njit(cache=True, nogil=True)
def sync_below(kind, parent):
    """True for every wait or release call and every ancestor of one (a reverse sweep)."""
    n = parent.shape[0]
    out = np.zeros(n, np.bool_)
    for i in range(n - 1, -1, -1):
        if kind[i] == 1 or kind[i] == 2:
            out[i] = True
        if out[i] and parent[i] >= 0:
            out[parent[i]] = True
    return out


@njit(cache=True, nogil=True)
def _sweep(w_call, w_obj, r_call, r_obj, start, end, thread, cap, fill, out_w, out_r, out_o):
    """Count (fill=False) or write (fill=True) the correspondences; returns (count, dropped).
    Both pair lists are sorted by (object, start)."""
    nw = w_call.shape[0]
    nr = r_call.shape[0]
    rs = np.empty(nr, np.float64)
    for k in range(nr):
        rs[k] = start[r_call[k]]
    count = 0
    dropped = 0
    a = 0  # first release of the current object
    for k in range(nw):
        o = w_obj[k]
        while a < nr and r_obj[a] < o:
            a += 1
        b = a
        # the object's releases are r[a:b_end); find b_end lazily by binary search on r_obj
        lo_o, hi_o = a, nr
        while lo_o < hi_o:
            mid = (lo_o + hi_o) >> 1
            if r_obj[mid] <= o:
                lo_o = mid + 1
            else:
                hi_o = mid
        b = lo_o
        if a == b:
            continue
        w = w_call[k]
        ts, te, tw = start[w], end[w], thread[w]
        lo = a + np.searchsorted(rs[a:b], ts, side="left")
        hi = a + np.searchsorted(rs[a:b], te, side="right")
        taken = 0
        for j in range(hi - 1, lo - 1, -1):  # latest first: the release that ended the wait is kept
            r = r_call[j]
            if thread[r] == tw:
                continue
            if taken >= cap:
                dropped += 1
                continue
            if fill:
                out_w[count] = w
                out_r[count] = r
                out_o[count] = o
            count += 1
            taken += 1
    return count, dropped


@njit(cache=True, nogil=True)
def correspondences(w_call, w_obj, r_call, r_obj, start, end, thread, cap):
    """All corr(f_w, f_r) of Eq. 6-7 as (wait call, release call, object) rows, at most
    ``cap`` per (wait, object) (the latest releases); returns (w, r, o, dropped).
    ``w_*``/``r_*`` are the (call, object) pairs of waits / releases sorted by
    (object, t_s).  A pair sharing several objects appears once per object."""
    dummy_i = np.zeros(0, np.int32)
    n, dropped = _sweep(w_call, w_obj, r_call, r_obj, start, end, thread, cap, False, dummy_i, dummy_i, dummy_i)
    out_w = np.empty(n, np.int32)
    out_r = np.empty(n, np.int32)
    out_o = np.empty(n, np.int32)
    _sweep(w_call, w_obj, r_call, r_obj, start, end, thread, cap, True, out_w, out_r, out_o)
    return out_w, out_r, out_o, dropped


@njit(cache=True, nogil=True)
def _has_pair(keys, key):
    k = np.searchsorted(keys, key)
    return k < keys.shape[0] and keys[k] == key


@njit(cache=True, nogil=True)
def outermost_pairs(w, r, up_wait, up_release, n_calls, max_chain):
    """Mark the correspondences that no other one dominates: (w, r) is dominated when a
    correspondence (w', r') ≠ (w, r) exists with w' an ancestor-or-self of w among waits
    and r' an ancestor-or-self of r among releases (e.g. ``Condition.wait`` inside
    ``Queue.get`` released by ``Condition.notify`` inside ``Queue.put``: the hand-off is
    reported once, by its outermost pair).  Chains are followed through ``up_wait`` /
    ``up_release`` (nearest strict ancestor of that kind) for at most ``max_chain`` steps
    each, so the cost is O(m · max_chain² · log m).  ``w, r`` must be unique pairs."""
    m = w.shape[0]
    keys = np.empty(m, np.int64)
    for k in range(m):
        keys[k] = np.int64(w[k]) * n_calls + r[k]
    keys = np.sort(keys)
    keep = np.ones(m, np.bool_)
    for k in range(m):
        wa = w[k]
        found = False
        for _ in range(max_chain + 1):
            if wa < 0 or found:
                break
            ra = r[k]
            for _ in range(max_chain + 1):
                if ra < 0:
                    break
                if (wa != w[k] or ra != r[k]) and _has_pair(keys, np.int64(wa) * n_calls + ra):
                    found = True
                    break
                ra = up_release[ra]
            wa = up_wait[wa]
        keep[k] = not found
    return keep


@njit(cache=True, nogil=True)
def latest_release_per_wait(top, r, start, n_calls):
    """For each correspondence row (grouped by ``top``, the outermost wait above its wait
    call), the row whose release starts last: ``best[t]`` = row index or -1 (length
    n_calls).  That release is the one that ended the wait."""
    best = np.full(n_calls, -1, np.int32)
    for k in range(top.shape[0]):
        t = top[k]
        if t < 0:
            continue
        b = best[t]
        if b < 0 or start[r[k]] > start[r[b]]:
            best[t] = k
    return best
