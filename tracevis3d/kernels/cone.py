"""Cone-tree kernels: the calling-context tree and Carrière–Kazman cone radii.

Calling-context tree (CCT): calls merged by their path of functions from the root (one
node per distinct path; recursion gives one node per level), built in one pre-order sweep
with a verified hash table keyed on (parent node, function): ctx(i) = node of
(ctx(parent(i)), func(i)), roots under a per-thread pseudo node (or one shared root).

Cone tree (Robertson et al. 1991; SEAT Sec. 2.4.5): a node at the apex, its children
evenly around the base circle of its cone one level below.  Carrière & Kazman (1995)
size each cone from its subtrees' *footprints* so that sibling cones never collide: a
leaf's footprint is a disc of its own radius s; a node with children of footprint radii
r_1..r_m gives child i the angular share φ_i = 2π r_i / Σ r (bigger subtrees get more of
the circle), centres at α_i = Σ_{j<i} φ_j + φ_i/2, and the smallest base radius R with

    2 R sin(Δ_ij / 2) ≥ (r_i + r_j)(1 + gap)   for every pair i < j,   Δ_ij = min(|α_i - α_j|, 2π - |α_i - α_j|)

(chord ≥ sum of the two footprint radii: the footprint discs, hence the whole subtrees
projected on the ground plane, are disjoint).  The node's footprint is then
max(s, R + max_i r_i).  Carrière & Kazman state the radius from the circumference,
R ≈ Σ r_i / π, which lets neighbours overlap when shares are uneven (a chord is shorter
than its arc); we solve for the chord instead.  And we keep siblings apart level by level
(`cone_footprints`: a disc per band of levels below a node), since two subtrees can only
collide at a level both reach: a leaf beside a deep sibling need not clear its whole footprint.
"""
import math

import numpy as np
from numba import njit

from .gamma import table_size, keyed_start, keyed_step


@njit(cache=True, nogil=True, inline="always")
def _push(i, f, k, top, stack, replaced, nearest, open_calls):
    """Call i (function f, node k) opens on the stack of `calling_context_tree`: the nearest
    open call of f is now i (the one it replaces is restored when i is popped)."""
    stack[top] = i
    replaced[top] = nearest[f]
    nearest[f] = top
    open_calls[k] += 1
    return top + 1


@njit(cache=True, nogil=True)
def calling_context_tree(func, parent, thread, dur, merged, n_threads, per_thread, fold_recursion, seed):
    """The CCT of calls in per-thread pre-order (module docstring).

    ``merged`` (bool per call, or empty: none): calls folded into their caller, as if the
    trace had been rebuilt without them (`transform.merge_calls`): a merged call opens no
    node and counts no time, ``ctx`` is -1 for it, and its children hang from its nearest
    unmerged ancestor's node (the roots of their thread when there is none).  This is the
    cone tree's fold at the cost of one sweep instead of a copy of the trace.

    ``fold_recursion``: a call of a function that is already open on its stack (recursion,
    direct or through other calls: ``walk › <genexpr> › walk``) joins the node of the
    nearest open call of that function instead of opening new levels, so a 1000-deep
    recursion is one node, or a cycle of a few (its calls' time is counted once, at the
    outermost); ``node_depth`` says how deep the folded recursion went (1: none).  Direct
    recursion only left a recursive descent through two or more functions (a parser, a
    visitor, ``json``'s encoder) as a stick of 2,700 levels, whose largest contexts took the
    whole node budget: the cone of three such threads drew 7 of 5,516 contexts.  A call joins
    a node already open on its stack only through recursion, and then its time is not added
    again.  The open calls are kept on a stack, with the nearest open call of each function
    (`_push`), so the sweep stays O(n).

    Node 0 is the root (the whole trace); with ``per_thread`` nodes 1..T are the threads
    and a thread's root calls hang below its node, else below node 0.  Returns
    ``(ctx, node_parent, node_func, node_thread, node_time, node_calls, node_first, node_depth)``:
    ``ctx[i]`` the node of call i; ``node_func`` -1 for the root and thread nodes;
    ``node_time`` the summed inclusive time of the node's calls (µs), ``node_calls`` their
    number, ``node_first`` the first of them (-1 for pseudo nodes), and ``probes``: the
    table slots looked at (n when hashes spread; the flood measure).  The table is keyed
    by ``seed`` (`gamma.process_hash_seed`), so crafted collisions cost what random ones
    do; the result does not depend on it.  O(n)."""
    n = func.shape[0]
    n_pseudo = 1 + (n_threads if per_thread else 0)
    cap = n + n_pseudo
    ctx = np.empty(n, np.int32)
    npar = np.full(cap, -1, np.int32)
    nfunc = np.full(cap, -1, np.int32)
    nthr = np.full(cap, -1, np.int32)
    ntime = np.zeros(cap, np.float64)
    ncalls = np.zeros(cap, np.int64)
    nfirst = np.full(cap, -1, np.int64)
    nrec = np.ones(cap, np.int64)
    rec = np.ones(n, np.int64)
    has_mask = merged.shape[0] == n
    anchor = np.empty(n if has_mask else 0, np.int32)  # nearest unmerged call at or above i
    # the open (unmerged) calls of the current stack, the nearest open call of each function
    # (a stack position), what each push replaced, and the open calls per node
    stack = np.empty(n, np.int32)
    replaced = np.empty(n, np.int32)
    nearest = np.full(int(func.max()) + 1 if n else 1, -1, np.int32)
    open_calls = np.zeros(cap, np.int32)
    top = 0
    for t in range(n_threads if per_thread else 0):
        npar[1 + t] = 0
        nthr[1 + t] = t
    tsize = table_size(cap)
    tmask = tsize - 1
    table = np.full(tsize, -1, np.int32)
    n_nodes = n_pseudo
    probes = 0
    for i in range(n):
        p = parent[i]
        if has_mask:
            if p >= 0:
                p = anchor[p]
            if merged[i]:
                anchor[i] = p
                ctx[i] = -1
                continue
            anchor[i] = i
        while top > 0 and stack[top - 1] != p:  # back to the caller: the calls that ended
            top -= 1
            c = stack[top]
            nearest[func[c]] = replaced[top]
            open_calls[ctx[c]] -= 1
        f = func[i]
        if fold_recursion and nearest[f] >= 0:
            a = stack[nearest[f]]
            k = ctx[a]
            ctx[i] = k
            rec[i] = rec[a] + 1
            if rec[i] > nrec[k]:
                nrec[k] = rec[i]
            ncalls[k] += 1
            top = _push(i, f, k, top, stack, replaced, nearest, open_calls)
            continue
        if p >= 0:
            up = ctx[p]
        else:
            up = 1 + thread[i] if per_thread else 0
        h = keyed_step(keyed_start(up, seed), f)
        slot = np.int64(h & np.uint64(tmask))
        found = -1
        while True:
            probes += 1
            k = table[slot]
            if k < 0:
                break
            if npar[k] == up and nfunc[k] == f:
                found = k
                break
            slot = (slot + 1) & tmask
        if found < 0:
            found = n_nodes
            table[slot] = found
            npar[found] = up
            nfunc[found] = f
            nthr[found] = thread[i]
            nfirst[found] = i
            n_nodes += 1
        ctx[i] = found
        if open_calls[found] == 0:  # not re-entered through recursion
            ntime[found] += dur[i]
        ncalls[found] += 1
        top = _push(i, f, found, top, stack, replaced, nearest, open_calls)
        if p < 0:
            ntime[up] += dur[i]
            if per_thread:
                ntime[0] += dur[i]
    return (ctx, npar[:n_nodes].copy(), nfunc[:n_nodes].copy(), nthr[:n_nodes].copy(),
            ntime[:n_nodes].copy(), ncalls[:n_nodes].copy(), nfirst[:n_nodes].copy(), nrec[:n_nodes].copy(),
            probes)


@njit(cache=True, nogil=True)
def close_under_parents(keep, parent):
    """``keep`` closed under ``parent`` (every ancestor of a kept node kept), in O(n):
    each node is marked at most once, walking up from every kept node until a node
    already marked (its ancestors are then marked too).  Was one numpy pass per level:
    O(depth × nodes), 30-39 s to expand the deepest call of a 100 K-deep chain."""
    n = keep.shape[0]
    closed = np.zeros(n, np.bool_)
    for k in range(n):
        if keep[k]:
            j = k
            while j >= 0 and not closed[j]:
                closed[j] = True
                j = parent[j]
    return closed


@njit(cache=True, nogil=True)
def _enclosing_circle(px, py, pr, m, iters):
    """A small circle holding the discs (px[i], py[i], pr[i]), i < m: Bădoiu–Clarkson
    steps towards the farthest disc from the centroid; the radius returned is exact for
    the centre found (every disc inside), the centre only near-optimal."""
    cx = 0.0
    cy = 0.0
    for i in range(m):
        cx += px[i]
        cy += py[i]
    cx /= m
    cy /= m
    for t in range(iters):
        best = -1.0
        j = 0
        for i in range(m):
            d = np.sqrt((px[i] - cx) ** 2 + (py[i] - cy) ** 2) + pr[i]
            if d > best:
                best = d
                j = i
        dx = px[j] - cx
        dy = py[j] - cy
        dl = np.sqrt(dx * dx + dy * dy)
        if dl < 1e-12:
            break
        # move towards the far side of the farthest disc
        step = 1.0 / (t + 2.0)
        fx = px[j] + dx / dl * pr[j]
        fy = py[j] + dy / dl * pr[j]
        cx += (fx - cx) * step
        cy += (fy - cy) * step
    rad = 0.0
    for i in range(m):
        d = np.sqrt((px[i] - cx) ** 2 + (py[i] - cy) ** 2) + pr[i]
        if d > rad:
            rad = d
    return cx, cy, rad


@njit(cache=True, nogil=True)
def cone_footprints(child_ptr, child_ids, size, gap, n_bands):
    """Carrière–Kazman footprints, bottom-up (module docstring), per band of levels: two
    sibling subtrees can only collide at a level both reach, so a leaf beside a deep
    sibling need only clear that sibling's own sphere, not the disc of everything below it
    (the ring stays small and the leaves sit beside the deep sibling, not across a wide
    empty ring from it).

    Band b of a node (b < B - 1, B = ``n_bands`` ≥ 2) is the smallest circle (found by
    `_enclosing_circle`) holding the spheres of its subtree b levels below it; the last
    band holds every level from B - 1 down.  Band 0 is the node's own sphere (radius
    ``size``) at its apex; band b + 1 encloses its children's bands b (the last band also
    their last bands).  Centres are in the node's own frame, apex at the origin.  Children
    are spaced around the base circle by the share φ_i = 2π w_i / Σ w, w_i the largest of
    child i's band radii over the levels it shares with a sibling (the bands up to
    min(h_i, h₂), h the deepest band of a child, h₂ the second deepest among the siblings:
    Carrière–Kazman's footprint radius when all siblings are as deep), centres at
    α_i = Σ_{j<i} φ_j + φ_i/2.  R is the smallest base radius at which every pair's bands
    at every shared band b are apart,

        |R (u_i − u_j) + e_ij| ≥ (F_ib + F_jb)(1 + gap),   u = (cos α, sin α),
        e_ij = rot(α_i) c_ib − rot(α_j) c_jb,

    a quadratic in R per pair and band (R at least its larger root).  A node's footprint
    encloses its bands, at offset ``off`` from its apex; each child's frame is turned so
    that this offset points away from its parent's axis.  Nodes are numbered so that
    children come after their parent; ``child_ptr`` CSR of children in drawing order.
    Returns ``(footprint, offset, base_radius, angle, band_radius, band_x, band_y)``:
    angle of each node on its parent's base circle (radians, in the parent's frame);
    bands (n × B) in the node's turned frame, radius -1 where the subtree has no such
    level."""
    n = size.shape[0]
    nb = n_bands
    foot = np.zeros(n, np.float64)
    off = np.zeros(n, np.float64)
    base = np.zeros(n, np.float64)
    angle = np.zeros(n, np.float64)
    bf = np.full((n, nb), -1.0)
    bx = np.zeros((n, nb))
    by = np.zeros((n, nb))
    high = np.zeros(n, np.int64)  # the deepest band a node's subtree reaches
    mmax = 1
    for k in range(n):
        if child_ptr[k + 1] - child_ptr[k] + 1 > mmax:
            mmax = child_ptr[k + 1] - child_ptr[k] + 1
    px = np.empty(2 * mmax + nb)
    py = np.empty(2 * mmax + nb)
    pr = np.empty(2 * mmax + nb)
    cs_a = np.empty(mmax)
    sn_a = np.empty(mmax)
    for k in range(n - 1, -1, -1):
        a, b = child_ptr[k], child_ptr[k + 1]
        m = b - a
        bf[k, 0] = size[k]
        if m == 0:
            foot[k] = size[k]
            continue
        h1 = -1
        h2 = -1
        for j in range(a, b):
            h = high[child_ids[j]]
            if h > h1:
                h2 = h1
                h1 = h
            elif h > h2:
                h2 = h
        total = 0.0
        for j in range(a, b):
            c = child_ids[j]
            w = bf[c, 0]
            for t in range(1, min(high[c], h2) + 1):
                if bf[c, t] > w:
                    w = bf[c, t]
            pr[j - a] = w
            total += w
        acc = 0.0
        for j in range(a, b):
            phi = 2.0 * np.pi * pr[j - a] / total
            angle[child_ids[j]] = acc + 0.5 * phi
            acc += phi
            cs_a[j - a] = np.cos(angle[child_ids[j]])
            sn_a[j - a] = np.sin(angle[child_ids[j]])
        R = 0.0
        for j1 in range(a, b):
            c1 = child_ids[j1]
            i1 = j1 - a
            for j2 in range(j1 + 1, b):
                c2 = child_ids[j2]
                i2 = j2 - a
                dx = cs_a[i1] - cs_a[i2]
                dy = sn_a[i1] - sn_a[i2]
                qa = dx * dx + dy * dy
                if qa < 1e-12:
                    continue
                for t in range(min(high[c1], high[c2]) + 1):
                    ex = (cs_a[i1] * bx[c1, t] - sn_a[i1] * by[c1, t]) - (cs_a[i2] * bx[c2, t] - sn_a[i2] * by[c2, t])
                    ey = (sn_a[i1] * bx[c1, t] + cs_a[i1] * by[c1, t]) - (sn_a[i2] * bx[c2, t] + cs_a[i2] * by[c2, t])
                    dd = (bf[c1, t] + bf[c2, t]) * (1.0 + gap)
                    qb = 2.0 * (dx * ex + dy * ey)
                    qc = ex * ex + ey * ey - dd * dd
                    disc = qb * qb - 4.0 * qa * qc
                    if disc < 0.0:
                        continue
                    r = (-qb + np.sqrt(disc)) / (2.0 * qa)
                    if r > R:
                        R = r
        base[k] = R
        high[k] = min(h1 + 1, nb - 1)
        # the bands of k: band t + 1 encloses the children's bands t (the last: also theirs)
        for t in range(1, high[k] + 1):
            q = 0
            for j in range(a, b):
                c = child_ids[j]
                i = j - a
                for s in range(t - 1, nb if t == nb - 1 else t):
                    if bf[c, s] < 0.0:
                        continue
                    px[q] = R * cs_a[i] + cs_a[i] * bx[c, s] - sn_a[i] * by[c, s]
                    py[q] = R * sn_a[i] + sn_a[i] * bx[c, s] + cs_a[i] * by[c, s]
                    pr[q] = bf[c, s]
                    q += 1
            cx, cy, rad = _enclosing_circle(px, py, pr, q, 64)
            bf[k, t] = rad
            bx[k, t] = cx
            by[k, t] = cy
        for t in range(high[k] + 1):
            px[t] = bx[k, t]
            py[t] = by[k, t]
            pr[t] = bf[k, t]
        cx, cy, rad = _enclosing_circle(px, py, pr, high[k] + 1, 64)
        foot[k] = rad
        off[k] = np.sqrt(cx * cx + cy * cy)
        # turn the node's frame so that its footprint's offset points along +x
        base_dir = np.arctan2(cy, cx) if off[k] > 1e-12 else 0.0
        ct = np.cos(base_dir)
        st = np.sin(base_dir)
        for t in range(high[k] + 1):
            x = bx[k, t]
            y = by[k, t]
            bx[k, t] = ct * x + st * y
            by[k, t] = -st * x + ct * y
        for j in range(a, b):
            angle[child_ids[j]] -= base_dir
    return foot, off, base, angle, bf, bx, by


@njit(cache=True, nogil=True)
def cone_positions(parent, base, angle, level_height):
    """Node centres (x, y, z) of a vertical cone tree, top-down: the root at the origin,
    child c of k at k's centre + R_k (cos θ, sin θ) one level lower, θ = angle(c) plus
    the turn of k's own frame (`cone_footprints` turns every frame so that its footprint's
    offset points away from its parent).  ``parent`` < node.  Returns ``(pos, turn)``."""
    n = parent.shape[0]
    pos = np.zeros((n, 3), np.float64)
    turn = np.zeros(n, np.float64)
    for k in range(1, n):
        p = parent[k]
        th = angle[k] + turn[p]
        turn[k] = th
        pos[k, 0] = pos[p, 0] + base[p] * np.cos(th)
        pos[k, 1] = pos[p, 1] + base[p] * np.sin(th)
        pos[k, 2] = pos[p, 2] - level_height
    return pos, turn


@njit(cache=True, nogil=True)
def _segment_meets_box(ax, ay, bx, by, x0, y0, x1, y1):
    """Whether the segment (ax, ay)–(bx, by) meets the closed box [x0, x1] × [y0, y1]
    (Liang–Barsky clipping: the segment's parameter range inside each slab, intersected)."""
    t0, t1 = _slab(ax, bx - ax, x0, x1, 0.0, 1.0)
    if t0 > t1:
        return False
    t0, t1 = _slab(ay, by - ay, y0, y1, t0, t1)
    return t0 <= t1


@njit(cache=True, nogil=True, inline="always")
def _slab(a, d, lo, hi, t0, t1):
    """``(t0, t1)`` narrowed to the parameters t where a + t d lies in [lo, hi] (empty:
    t0 > t1)."""
    if d == 0.0:
        if a < lo or a > hi:
            return 1.0, 0.0
        return t0, t1
    ta = (lo - a) / d
    tb = (hi - a) / d
    if ta > tb:
        ta, tb = tb, ta
    return max(t0, ta), min(t1, tb)


@njit(cache=True, nogil=True, inline="always")
def _box_meets_a_sphere(x0, y0, x1, y1, k, c0, c1, r0, r1, nx, s_ptr, s_ids, centre_x, centre_y, radius,
                        min_radius):
    """Whether the box [x0, x1] × [y0, y1] comes nearer than radius[j] to the centre of a
    sphere j ≠ k with radius[j] > ``min_radius`` among those bucketed in the grid cells
    [c0, c1] × [r0, r1] (``s_ptr``, ``s_ids``: `_bucket_boxes`)."""
    for r in range(r0, r1 + 1):
        for c in range(c0, c1 + 1):
            g = r * nx + c
            for e in range(s_ptr[g], s_ptr[g + 1]):
                j = s_ids[e]
                if j == k or radius[j] <= min_radius:
                    continue
                dx = max(max(x0 - centre_x[j], centre_x[j] - x1), 0.0)
                dy = max(max(y0 - centre_y[j], centre_y[j] - y1), 0.0)
                if math.hypot(dx, dy) < radius[j]:
                    return True
    return False


@njit(cache=True, nogil=True, inline="always")
def _box_meets_a_segment(x0, y0, x1, y1, c0, c1, r0, r1, nx, g_ptr, g_ids, seg_x0, seg_y0, seg_x1, seg_y1):
    """Whether a segment bucketed in the grid cells [c0, c1] × [r0, r1] (``g_ptr``,
    ``g_ids``: `_bucket_boxes`) meets the box [x0, x1] × [y0, y1] (`_segment_meets_box`)."""
    for r in range(r0, r1 + 1):
        for c in range(c0, c1 + 1):
            g = r * nx + c
            for e in range(g_ptr[g], g_ptr[g + 1]):
                j = g_ids[e]
                if _segment_meets_box(seg_x0[j], seg_y0[j], seg_x1[j], seg_y1[j], x0, y0, x1, y1):
                    return True
    return False


@njit(cache=True, nogil=True, inline="always")
def _label_box(side, k, anchor_x, anchor_y, align, width, ascent, descent):
    """(x0, y0, x1, y1) of node k's label at place ``side`` (see `place_side_labels`)."""
    x0 = anchor_x[side, k]
    if align[side] == 2:
        x0 -= width[k]
    elif align[side] == 1:
        x0 -= 0.5 * width[k]
    return x0, anchor_y[side, k] - ascent, x0 + width[k], anchor_y[side, k] + descent


@njit(cache=True, nogil=True)
def _first_free_place(k, test_edges, anchor_x, anchor_y, align, width, ascent, descent, lim, bx0, by0, bx1, by1, q,
                      cell, nx, ny, s_ptr, s_ids, centre_x, centre_y, radius, min_radius, seg_pad, g_ptr, g_ids,
                      seg_x0, seg_y0, seg_x1, seg_y1):
    """The first of node k's places whose box (see `place_side_labels`) lies inside ``lim``,
    off the ``q`` boxes placed, off every other sphere and, with ``test_edges``, off every
    segment; -1 if none."""
    for side in range(anchor_x.shape[0]):
        x0, y0, x1, y1 = _label_box(side, k, anchor_x, anchor_y, align, width, ascent, descent)
        if x0 < lim[0] or x1 > lim[2] or y0 < lim[1] or y1 > lim[3]:
            continue
        hit = False
        for j in range(q):
            if x0 < bx1[j] and bx0[j] < x1 and y0 < by1[j] and by0[j] < y1:
                hit = True
                break
        if hit:
            continue
        c0, c1, r0, r1 = _cells_of(x0, y0, x1, y1, lim[0], lim[1], cell, nx, ny)
        if _box_meets_a_sphere(x0, y0, x1, y1, k, c0, c1, r0, r1, nx, s_ptr, s_ids, centre_x, centre_y,
                               radius, min_radius):
            continue
        if test_edges and _box_meets_a_segment(x0 - seg_pad, y0 - seg_pad, x1 + seg_pad, y1 + seg_pad, c0, c1, r0,
                                               r1, nx, g_ptr, g_ids, seg_x0, seg_y0, seg_x1, seg_y1):
            continue
        return side
    return -1


@njit(cache=True, nogil=True)
def place_side_labels(order, anchor_x, anchor_y, align, width, ascent, descent, lim, centre_x, centre_y, radius,
                      min_radius, seg_x0, seg_y0, seg_x1, seg_y1, seg_pad, max_labels, over_edges):
    """Greedy label placement beside spheres (Christensen et al. 1995's greedy baseline:
    the most important first, each at the first free candidate place).  Nodes are taken in
    ``order``; node k's label (``width`` pixels wide, ``ascent`` above and ``descent``
    below its baseline) is tried at its candidate places s = 0 .. S - 1 in turn, anchored at
    (anchor_x[s, k], anchor_y[s, k]) and aligned by ``align[s]`` (0: the anchor is the box's
    left end, 1: its middle, 2: its right end): its box [x0, x0 + w] × [y − ascent, y + descent]
    must lie inside ``lim`` = (x0, y0, x1, y1), overlap no box placed before (open
    intervals), lie farther than radius[j] from the centre of every other sphere j with
    radius[j] > ``min_radius`` (tiny spheres may sit behind text), and meet none of the
    segments (seg_x0, seg_y0)–(seg_x1, seg_y1) (the tree's edges; the box grown by
    ``seg_pad`` on every side, `_segment_meets_box`).  A node with ``over_edges[k]`` (a
    thread: its name matters more than a clean line) that finds no such place tries its
    places again, edges allowed under its name.  At most ``max_labels`` are placed.
    Returns ``(node, place)`` of the labels placed, in placement order.  Spheres and
    segments are looked up in a grid of `LABEL_GRID_PX` cells (`_bucket_boxes`; a segment
    with a NaN end meets nothing): O(tried × (placed + spheres and segments near the box)
    + spheres + segments)."""
    n = order.shape[0]
    m = radius.shape[0]
    n_seg = seg_x0.shape[0]
    # spheres and segments bucketed by the cells of a grid over ``lim`` their bounding boxes
    # meet: a box is tested against those of the cells it meets (a sphere or a segment that
    # meets a box has its bounding box meet it); outside ``lim`` no box is tested
    cell = LABEL_GRID_PX
    nx = max(int(math.ceil((lim[2] - lim[0]) / cell)), 1)
    ny = max(int(math.ceil((lim[3] - lim[1]) / cell)), 1)
    sx0 = np.empty(m)
    sy0 = np.empty(m)
    sx1 = np.empty(m)
    sy1 = np.empty(m)
    for j in range(m):
        sx0[j] = centre_x[j] - radius[j]
        sy0[j] = centre_y[j] - radius[j]
        sx1[j] = centre_x[j] + radius[j]
        sy1[j] = centre_y[j] + radius[j]
    s_ptr, s_ids = _bucket_boxes(sx0, sy0, sx1, sy1, lim[0], lim[1], cell, nx, ny)
    gx0 = np.empty(n_seg)
    gy0 = np.empty(n_seg)
    gx1 = np.empty(n_seg)
    gy1 = np.empty(n_seg)
    for j in range(n_seg):
        gx0[j] = min(seg_x0[j], seg_x1[j]) - seg_pad
        gy0[j] = min(seg_y0[j], seg_y1[j]) - seg_pad
        gx1[j] = max(seg_x0[j], seg_x1[j]) + seg_pad
        gy1[j] = max(seg_y0[j], seg_y1[j]) + seg_pad
    g_ptr, g_ids = _bucket_boxes(gx0, gy0, gx1, gy1, lim[0], lim[1], cell, nx, ny)
    bx0 = np.empty(max_labels)
    by0 = np.empty(max_labels)
    bx1 = np.empty(max_labels)
    by1 = np.empty(max_labels)
    out_node = np.empty(max_labels, np.int64)
    out_side = np.empty(max_labels, np.int64)
    q = 0
    for t in range(n):
        if q >= max_labels:
            break
        k = order[t]
        for attempt in range(2 if over_edges[k] else 1):
            side = _first_free_place(k, attempt == 0, anchor_x, anchor_y, align, width, ascent, descent, lim,
                                     bx0, by0, bx1, by1, q, cell, nx, ny, s_ptr, s_ids, centre_x, centre_y, radius,
                                     min_radius, seg_pad, g_ptr, g_ids, seg_x0, seg_y0, seg_x1, seg_y1)
            if side >= 0:
                bx0[q], by0[q], bx1[q], by1[q] = _label_box(side, k, anchor_x, anchor_y, align, width, ascent, descent)
                out_node[q] = k
                out_side[q] = side
                q += 1
                break
    return out_node[:q].copy(), out_side[:q].copy()


#: `place_side_labels` buckets spheres and segments by cells this many pixels wide
LABEL_GRID_PX = 48.0


@njit(cache=True, nogil=True)
def _cells_of(x0, y0, x1, y1, ox, oy, cell, nx, ny):
    """The columns c0..c1 and rows r0..r1 (inclusive) of the grid of ``cell``-pixel cells
    from (ox, oy), nx × ny, that the box [x0, x1] × [y0, y1] meets, clipped to the grid
    (c0 > c1 or r0 > r1 when it meets none; a NaN box meets none)."""
    if not (x0 <= x1 and y0 <= y1) or x1 < ox or y1 < oy or x0 > ox + nx * cell or y0 > oy + ny * cell:
        return 0, -1, 0, -1
    c0 = int(math.floor(min(max((x0 - ox) / cell, 0.0), nx - 1.0)))  # clipped before the cast: ±inf
    c1 = int(math.floor(min(max((x1 - ox) / cell, 0.0), nx - 1.0)))
    r0 = int(math.floor(min(max((y0 - oy) / cell, 0.0), ny - 1.0)))
    r1 = int(math.floor(min(max((y1 - oy) / cell, 0.0), ny - 1.0)))
    return c0, c1, r0, r1


@njit(cache=True, nogil=True)
def _bucket_boxes(x0, y0, x1, y1, ox, oy, cell, nx, ny):
    """CSR ``(ptr, ids)`` of the boxes meeting each cell (row-major, `_cells_of`) of an
    nx × ny grid: the boxes of cell g are ids[ptr[g]:ptr[g + 1]], in index order."""
    m = x0.shape[0]
    ptr = np.zeros(nx * ny + 1, np.int64)
    for j in range(m):
        c0, c1, r0, r1 = _cells_of(x0[j], y0[j], x1[j], y1[j], ox, oy, cell, nx, ny)
        for r in range(r0, r1 + 1):
            for c in range(c0, c1 + 1):
                ptr[r * nx + c + 1] += 1
    for g in range(nx * ny):
        ptr[g + 1] += ptr[g]
    fill = ptr[:-1].copy()
    ids = np.empty(ptr[nx * ny], np.int64)
    for j in range(m):
        c0, c1, r0, r1 = _cells_of(x0[j], y0[j], x1[j], y1[j], ox, oy, cell, nx, ny)
        for r in range(r0, r1 + 1):
            for c in range(c0, c1 + 1):
                g = r * nx + c
                ids[fill[g]] = j
                fill[g] += 1
    return ptr, ids
