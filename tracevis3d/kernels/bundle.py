"""Edge bundling along control trees (TraceDiff Sec. IV-B; EXTRAVIS Sec. 4, Eq. 1).

Holten's hierarchical edge bundling routes an edge along the path between its two end nodes
in a hierarchy: the control points of the nodes on that path form a spline control polygon,
and a bundling strength β straightens it towards the straight line between its ends.
TraceDiff adapts it to matches between two mirrored icicle plots:

- one control tree per group G of matches and per trace (A and B), built from *key nodes*:
  calls of the group's root subtree that are wider than a pixel and not inside the band B
  around the mid-line where bundling happens;
- each key node's control x is clamped to the x range of the control points of the matched
  nodes below it, so parents sit above their matched children and bundles do not twist;
- a node that is not a key node (narrower than a pixel, or inside B) hangs as a leaf under
  the control node of its own tree geometrically closest to it, found by descending from
  its nearest key ancestor;
- a match (f, g) is routed f → … → root(G_A) → root(G_B) → … → g.

All kernels take the calls of ONE trace in depth-first pre-order with ``parent`` (-1 for a
root) and work on arrays; the curves of all matches come out of one call.
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def clamp_to_matched_descendants(parent, x, key, matched):
    """Control x of every node: x clamped to the range of its matched descendants' controls.

    Bottom-up (reverse pre-order): lo[i], hi[i] = min, max of the control x over the
    matched key nodes strictly below i (each child contributes its own control x when it
    is matched and key, and its own range); a key node with such descendants gets
    cx[i] = clip(x[i], lo[i], hi[i]), other nodes keep x[i].  Children are clamped before
    their parent, so the ranges use clamped positions (TraceDiff IV-B).
    Returns ``(cx, lo, hi)`` (lo = +inf, hi = -inf where there is no matched descendant).
    """
    n = parent.shape[0]
    lo = np.full(n, np.inf)
    hi = np.full(n, -np.inf)
    cx = x.copy()
    for i in range(n - 1, -1, -1):
        if key[i] and lo[i] <= hi[i]:
            if cx[i] < lo[i]:
                cx[i] = lo[i]
            elif cx[i] > hi[i]:
                cx[i] = hi[i]
        p = parent[i]
        if p >= 0:
            a, b = lo[i], hi[i]
            if key[i] and matched[i]:
                if cx[i] < a:
                    a = cx[i]
                if cx[i] > b:
                    b = cx[i]
            if a < lo[p]:
                lo[p] = a
            if b > hi[p]:
                hi[p] = b
    return cx, lo, hi


@njit(cache=True, nogil=True)
def key_tree(parent, key):
    """The control tree of the key nodes: each key node's nearest key ancestor (-1 at the
    top), and the key children of every node as a CSR (``child_ptr``, ``child_idx``)."""
    n = parent.shape[0]
    up = np.full(n, -1, np.int64)  # nearest key ancestor-or-self of each node's parent chain
    kparent = np.full(n, -1, np.int64)
    count = np.zeros(n + 1, np.int64)
    for i in range(n):
        p = parent[i]
        a = -1
        if p >= 0:
            a = p if key[p] else up[p]
        up[i] = a
        if key[i]:
            kparent[i] = a
            if a >= 0:
                count[a + 1] += 1
    for i in range(n):
        count[i + 1] += count[i]
    child_idx = np.empty(count[n], np.int64)
    fill = count[:n].copy()
    for i in range(n):
        if key[i] and kparent[i] >= 0:
            child_idx[fill[kparent[i]]] = i
            fill[kparent[i]] += 1
    return up, kparent, count, child_idx


@njit(cache=True, nogil=True)
def attach_leaves(nodes, up, key, child_ptr, child_idx, cx, cy, px, py):
    """The control node each of ``nodes`` hangs from.

    A key node hangs from itself.  Another node n = nodes[k] starts at its nearest key
    ancestor q (``up[n]``) and descends the control tree greedily: while one of q's key
    children has its control point closer to n's position (px[k], py[k]) than q's, move to
    the closest
    such child (TraceDiff: "scan the control tree downwards ... the node geometrically
    closest").  Returns the control node per entry of ``nodes`` (-1 when n has no key
    ancestor).  Cost per node: the children looked at along one downward path.
    """
    out = np.full(nodes.shape[0], -1, np.int64)
    for k in range(nodes.shape[0]):
        n = nodes[k]
        if key[n]:
            out[k] = n
            continue
        q = up[n]
        if q < 0:
            continue
        dq = (cx[q] - px[k]) ** 2 + (cy[q] - py[k]) ** 2
        while True:
            best = -1
            bd = dq
            for j in range(child_ptr[q], child_ptr[q + 1]):
                c = child_idx[j]
                d = (cx[c] - px[k]) ** 2 + (cy[c] - py[k]) ** 2
                if d < bd:
                    bd = d
                    best = c
            if best < 0:
                break
            q = best
            dq = bd
        out[k] = q
    return out


@njit(cache=True, nogil=True)
def _path_up(node, root, kparent, buf):
    """Control nodes from ``node`` up to ``root`` (both included) into buf; their count."""
    m = 0
    q = node
    while q >= 0:
        buf[m] = q
        m += 1
        if q == root:
            break
        q = kparent[q]
    return m


@njit(cache=True, nogil=True)
def bundled_curves(ca, cb, ra, rb, kparent_a, kparent_b, cxa, cya, cza, cxb, cyb, czb,
                   ea, eb, beta, samples):
    """Bundled centre curves of matches, ``samples`` points each (TraceDiff IV-B, EXTRAVIS Eq. 1).

    Match k runs from its end point ``ea[k]`` (on A's node) through the control points of
    ``ca[k]`` and its control ancestors up to ``ra[k]`` (the group root in A), then
    ``rb[k]`` down to ``cb[k]`` in B, to ``eb[k]``.  With P_0..P_{N-1} that polygon, the
    straightened polygon is (Holten; EXTRAVIS Eq. 1)

        P'_i = β·P_i + (1 − β)·(P_0 + i/(N−1)·(P_{N−1} − P_0)),

    and the curve is the uniform cubic B-spline of P' with its end points repeated three
    times (so it starts at ea and ends at eb), sampled at ``samples`` equal parameter
    steps (β = 0: the straight chord; β = 1: the full bundle).  A control path that leaves its group root's subtree stops at the top of the
    tree.  Returns (n_matches, samples, 3) float64.
    """
    m = ca.shape[0]
    out = np.empty((m, samples, 3))
    buf_a = np.empty(kparent_a.shape[0] + 1, np.int64)
    buf_b = np.empty(kparent_b.shape[0] + 1, np.int64)
    cap = kparent_a.shape[0] + kparent_b.shape[0] + 8
    poly = np.empty((cap, 3))
    for k in range(m):
        na = _path_up(ca[k], ra[k], kparent_a, buf_a) if ca[k] >= 0 else 0
        nb = _path_up(cb[k], rb[k], kparent_b, buf_b) if cb[k] >= 0 else 0
        # the control polygon ea, A's path upwards, B's path downwards, eb, starting at index 2
        n = 2
        poly[n, 0], poly[n, 1], poly[n, 2] = ea[k, 0], ea[k, 1], ea[k, 2]
        n += 1
        for j in range(na):
            q = buf_a[j]
            poly[n, 0], poly[n, 1], poly[n, 2] = cxa[q], cya[q], cza[q]
            n += 1
        for j in range(nb - 1, -1, -1):
            q = buf_b[j]
            poly[n, 0], poly[n, 1], poly[n, 2] = cxb[q], cyb[q], czb[q]
            n += 1
        poly[n, 0], poly[n, 1], poly[n, 2] = eb[k, 0], eb[k, 1], eb[k, 2]
        n += 1
        # straighten towards the chord (EXTRAVIS Eq. 1), then repeat the ends twice more so
        # the spline starts at ea and ends at eb
        last = n - 1
        for i in range(2, n):
            f = (i - 2) / (last - 2)
            for d in range(3):
                poly[i, d] = beta * poly[i, d] + (1.0 - beta) * (poly[2, d] + f * (poly[last, d] - poly[2, d]))
        for d in range(3):
            poly[0, d] = poly[2, d]
            poly[1, d] = poly[2, d]
            poly[n, d] = poly[last, d]
            poly[n + 1, d] = poly[last, d]
        n += 2
        # uniform cubic B-spline over the n - 3 segments
        segs = n - 3
        for s in range(samples):
            u = s / (samples - 1) * segs
            i = int(u)
            if i >= segs:
                i = segs - 1
            t = u - i
            t2 = t * t
            t3 = t2 * t
            b0 = (1.0 - 3.0 * t + 3.0 * t2 - t3) / 6.0
            b1 = (4.0 - 6.0 * t2 + 3.0 * t3) / 6.0
            b2 = (1.0 + 3.0 * t + 3.0 * t2 - 3.0 * t3) / 6.0
            b3 = t3 / 6.0
            for d in range(3):
                out[k, s, d] = b0 * poly[i, d] + b1 * poly[i + 1, d] + b2 * poly[i + 2, d] + b3 * poly[i + 3, d]
    return out
