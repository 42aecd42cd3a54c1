"""Widened boxes trimmed so that no two drawn boxes overlap (a render that does not depend
on draw order).

A sub-pixel cluster is drawn at least ``cluster_px`` pixels wide (`layout.geometry.cluster_layer`),
so it can reach over its neighbours: other clusters, and calls of nearby levels whose heights
overlap its own (the fold gives a level different heights along a lane).  All boxes share the
front plane y = 0 and a level's top, so where two boxes overlap their faces are coplanar and
the depth test cannot decide between them; Blender's draw manager orders the instances of a
batch through GPU atomics, so the face that wins such a pixel changes from one render to the
next (and a frame rendered in a range differs from the same frame of the whole animation).
Trimming removes the overlaps, so every pixel has one nearest face on any GPU.

Boxes are x intervals [x0, x1] with z intervals [z0, z1] in lanes; ``movable`` marks the
widened ones (clusters).  Two boxes overlap when they share a lane and both their x and their
z intervals overlap by more than zero.  Semantics, in order:

1. every movable box overlapping a fixed box keeps its larger part on one side of it (the
   left part when the two are equal); a box the fixed one covers becomes empty (x1 = x0);
2. then, of every pair of movable boxes that still overlaps, the one earlier in the sweep (the
   smaller x0) keeps its extent and the other starts where it ends, or becomes empty when it
   ends there too (so a dense run of widened clusters still covers what it covered); an empty
   box overlaps nothing.

Each step only shrinks boxes, so a pair made disjoint stays disjoint; pairs are handled in
the order of their first box's x0 in the lane (a stable sort), so the result is a function of
the input alone.  ``gap`` is left between the trimmed faces (float32 rounding of the box's
centre and width must not bring them back into touch).  Pairs are found by one sweep per
lane over the boxes sorted by x0 with the active boxes kept apart by kind: O(n log n + pairs).
"""
import numpy as np
from numba import njit

from .grow import grown


@njit(cache=True, nogil=True, inline="always")
def _still_reaching(act, n_act, x1, xs):
    """The active boxes ``act[:n_act]`` that end past ``xs`` (x1 > xs) moved to the front of
    ``act``, in order: their number."""
    w = 0
    for t in range(n_act):
        j = act[t]
        if x1[j] > xs:
            act[w] = j
            w += 1
    return w


#: `_pairs_run`'s state: the active boxes of each kind, the pairs found, the lane swept, the
#: fixed list's bound
_ST_NF, _ST_NM, _ST_PAIRS, _ST_LANE, _ST_LIMIT = 0, 1, 2, 3, 4


@njit(cache=True, nogil=True, _nrt=False)
def _pairs_run(k0, st, order, lane, x0, x1, z0, z1, movable, act_fixed, act_mov, pa, pb):
    """`_overlap_pairs`' sweep from box ``order[k0]`` on, its state in ``st``, until every box
    is swept or the pairs' arrays may lack room for a box's pairs (at most the boxes active
    before it: it is left for the caller, which grows them).  Rebinds no array and counts no
    reference (a loop that may rebind one raises and drops every such array's count on every
    pass).  Returns the next box's place in ``order``."""
    n = order.shape[0]
    nf, nm, npairs, cur_lane, limit = st[_ST_NF], st[_ST_NM], st[_ST_PAIRS], st[_ST_LANE], st[_ST_LIMIT]
    cap = pa.shape[0]
    k = k0
    while k < n:
        if npairs + nf + nm > cap:
            break
        i = order[k]
        if lane[i] != cur_lane:
            cur_lane = lane[i]
            nf = 0
            nm = 0
        xs = x0[i]
        # drop the boxes that end before this one starts
        nm = _still_reaching(act_mov, nm, x1, xs)
        if movable[i]:
            nf = _still_reaching(act_fixed, nf, x1, xs)
        for pass_ in range(2):
            if pass_ == 0 and not movable[i]:
                continue  # a fixed box only meets the movable ones
            m = nf if pass_ == 0 else nm
            for t in range(m):
                j = act_fixed[t] if pass_ == 0 else act_mov[t]
                if x1[j] > xs and x1[i] > x0[j] and min(z1[i], z1[j]) > max(z0[i], z0[j]):
                    pa[npairs] = j
                    pb[npairs] = i
                    npairs += 1
        if movable[i]:
            act_mov[nm] = i
            nm += 1
        else:
            act_fixed[nf] = i
            nf += 1
            if nf > limit:  # keep the fixed list to the boxes still reaching past this start
                nf = _still_reaching(act_fixed, nf, x1, xs)
                limit = max(64, 2 * nf)
        k += 1
    st[_ST_NF], st[_ST_NM], st[_ST_PAIRS], st[_ST_LANE], st[_ST_LIMIT] = nf, nm, npairs, cur_lane, limit
    return k


@njit(cache=True, nogil=True)
def _overlap_pairs(order, lane, x0, x1, z0, z1, movable):
    """(first, second) index pairs of overlapping boxes of which one at least is movable,
    in sweep order (``order``: the boxes by (lane, x0)): `_pairs_run`, the pairs' arrays
    grown between its runs."""
    n = order.shape[0]
    act_fixed = np.empty(n, np.int64)
    act_mov = np.empty(n, np.int64)
    pa = np.empty(16, np.int64)
    pb = np.empty(16, np.int64)
    st = np.zeros(5, np.int64)
    st[_ST_LANE] = -1
    st[_ST_LIMIT] = 64
    k = 0
    while True:
        k = _pairs_run(k, st, order, lane, x0, x1, z0, z1, movable, act_fixed, act_mov, pa, pb)
        if k >= n:
            break
        need = st[_ST_PAIRS] + st[_ST_NF] + st[_ST_NM]
        pa, pb = grown(pa, need), grown(pb, need)
    npairs = st[_ST_PAIRS]
    return pa[:npairs], pb[:npairs]


@njit(cache=True, nogil=True)
def trim_overlapping_boxes(order, lane, x0, x1, z0, z1, movable, gap):
    """The movable boxes' x extents (new x0, x1) with no overlap left (module docstring);
    ``order`` sorts the boxes by (lane, x0); fixed boxes come back unchanged."""
    a0 = x0.copy()
    a1 = x1.copy()
    pa, pb = _overlap_pairs(order, lane, x0, x1, z0, z1, movable)
    for k in range(pa.shape[0]):  # 1. movable against fixed
        i, j = pa[k], pb[k]
        if movable[i] and movable[j]:
            continue
        m, f = (i, j) if movable[i] else (j, i)
        if not (a0[m] < a1[f] and a0[f] < a1[m]):
            continue
        left = a0[f] - a0[m]
        right = a1[m] - a1[f]
        if left <= 0.0 and right <= 0.0:
            a1[m] = a0[m]
        elif left >= right:
            a1[m] = max(a0[m], a0[f] - gap)
        else:
            a0[m] = min(a1[m], a1[f] + gap)
    for k in range(pa.shape[0]):  # 2. movable against movable: the earlier one keeps its extent
        i, j = pa[k], pb[k]
        if not (movable[i] and movable[j]):
            continue
        if not (a0[i] < a1[i] and a0[j] < a1[j] and a0[i] < a1[j] and a0[j] < a1[i]):
            continue
        if a1[j] > a1[i]:
            a0[j] = min(a1[j], a1[i] + gap)
        else:
            a1[j] = a0[j]
    return a0, a1


def trim_boxes(lane, x0, x1, z0, z1, movable, gap: float = 0.0):
    """`trim_overlapping_boxes` on plain arrays (sorted here); (x0, x1) float64."""
    lane = np.ascontiguousarray(lane, np.int64)
    x0 = np.ascontiguousarray(x0, np.float64)
    x1 = np.ascontiguousarray(x1, np.float64)
    order = np.lexsort((x0, lane)).astype(np.int64)
    return trim_overlapping_boxes(order, lane, x0, x1, np.ascontiguousarray(z0, np.float64),
                                  np.ascontiguousarray(z1, np.float64), np.ascontiguousarray(movable, np.bool_),
                                  float(gap))
