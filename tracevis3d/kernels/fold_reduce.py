"""The squeeze's bisection on a reduced tree: subtrees whose place cannot change, summarised.

The squeeze (`tracevis3d.layout.fold.squeeze_parameters`) asks a dozen times for the lane
tops of the whole placement (`kernels.fold.squeezed_tops`), each time over every call.  Most
calls of a real trace are *tiny*: narrower than a name at any squeeze (``name_px`` and
``width_px`` below ``named_px``, not wide enough for a marker).  Because the squeeze's name
threshold and unfold threshold never fall below ``named_px``, a tiny call's classes are the
same at every squeeze: it is narrow; it is folded exactly when it is infrastructure or
passes its time through; its band, if it starts one, is of class 0.  So inside a subtree of
tiny calls (its root r included) every call's top is its parent's top plus

- ``heights[lane, H_SQUEEZED]`` when the call is not folded (a squeezed level),
- ``heights[lane, 0]`` when it is folded and its parent is not (it starts a thin band),
- 0 when both are folded (it joins its parent's band),

and the subtree's highest top is r's top plus max over its calls of
``a · h_sq + b · h0`` for the counts (a, b) of the two kinds on the path from r.  Only the
Pareto frontier of those (a, b) pairs can give the max for some heights, so the subtree is
replaced by r and at most ``k_max`` pairs (`tiny_subtrees`), and the tops are those of the
reduced tree (`reduced_tops`).  The whole placement is still made once, for the squeeze
chosen, over every call (`kernels.fold.squeezed_levels`).
"""
import numpy as np
from numba import njit

from .fold import H_SQUEEZED, squeeze_classes


@njit(cache=True, nogil=True)
def tiny_subtrees(parent, local_end, name_px, width_px, infra, passing, wide, named_px, k_max, max_work):
    """Which calls the reduced tree keeps, and the frontier of each summarised subtree.

    A call i is *fixed* when ``name_px[i] < named_px``, ``width_px[i] < named_px`` and not
    ``wide[i]``; a *tiny root* is a fixed call, every call of whose subtree is fixed, whose
    parent is kept.  For a tiny root r, with f = infra | passing: per call c of its
    subtree (pre-order, c ≠ r, parent p) a[c] = a[p] + (not f[c]) and
    b[c] = b[p] + (f[c] and not f[p]), a[r] = b[r] = 0; its frontier is the set of pairs
    (a, b) not dominated by another pair (a' ≥ a and b' ≥ b); when it has at most ``k_max``
    pairs (and the counts fit int16), r is kept and the rest of its subtree dropped, else r
    is kept without a frontier and its children are tried in turn.  Once ``max_work`` calls
    have been visited by such tries, no more subtrees are tried (the rest is kept whole).

    The chains of folded calls the dropped calls continue need no summary: the placement
    asks of a chain only whether it is one call long (`kernels.fold.place_folded_levels`),
    and that the kept root r decides (folded, it makes its folded parent's chain longer than
    one with or without what lies under it; its own band is of class 0, whatever its length).

    Returns ``(keep, env_first, env_count, pool_a, pool_b)``: per call, whether kept, and
    the first index and number of its frontier pairs in the int16 pools (count 0: no
    frontier).  Calls in pre-order, ``local_end[i]`` one past the
    last call of i's subtree.
    """
    n = parent.shape[0]
    fixed = np.empty(n, np.bool_)
    for i in range(n):
        fixed[i] = name_px[i] < named_px and width_px[i] < named_px and not wide[i]
    all_fixed = fixed.copy()
    for i in range(n - 1, -1, -1):
        p = parent[i]
        if not all_fixed[i] and p >= 0:
            all_fixed[p] = False
    keep = np.zeros(n, np.bool_)
    env_first = np.zeros(n, np.int32)
    env_count = np.zeros(n, np.int8)
    pool_a = np.empty(n, np.int16)
    pool_b = np.empty(n, np.int16)
    a = np.zeros(n, np.int32)
    b = np.zeros(n, np.int32)
    best = np.full(64, -1, np.int32)  # max b per a, in the subtree tried
    n_pool = 0
    work = 0
    i = 0
    while i < n:
        keep[i] = True
        if not all_fixed[i] or work >= max_work:
            i += 1
            continue
        e = local_end[i]
        work += e - i
        a[i] = 0
        b[i] = 0
        a_max = 0
        best[0] = 0
        for c in range(i + 1, e):
            p = parent[c]
            fc = infra[c] or passing[c]
            a[c] = a[p] + (0 if fc else 1)
            b[c] = b[p] + (1 if fc and not (infra[p] or passing[p]) else 0)
            if a[c] > a_max:
                if a[c] >= best.shape[0]:
                    grown = np.full(2 * a[c] + 1, -1, np.int32)
                    grown[:best.shape[0]] = best
                    best = grown
                for k in range(a_max + 1, a[c] + 1):
                    best[k] = -1
                a_max = a[c]
            if b[c] > best[a[c]]:
                best[a[c]] = b[c]
        # the staircase: from the largest a down, the pairs whose b beats every larger a's
        count = 0
        top_b = -1
        for k in range(a_max, -1, -1):
            if best[k] > top_b:
                top_b = best[k]
                count += 1
        if count <= k_max and a_max < 32767 and top_b < 32767:
            env_first[i] = n_pool
            env_count[i] = count
            top_b = -1
            for k in range(a_max, -1, -1):
                if best[k] > top_b:
                    top_b = best[k]
                    pool_a[n_pool] = k
                    pool_b[n_pool] = best[k]
                    n_pool += 1
            i = e
        else:
            i += 1
    return keep, env_first, env_count, pool_a[:n_pool], pool_b[:n_pool]


@njit(cache=True, nogil=True)
def reduced_tops(parent, lane, name_px, width_px, infra, passing, wide, env_first, env_count,
                 pool_a, pool_b, unfold, threshold, heights, folded, band_class, base, down, bottom, height, eff,
                 run_start):
    """The lane tops of `kernels.fold.squeezed_levels` (its last output) from the reduced
    tree of `tiny_subtrees`: the same formulas (`squeeze_classes`, then
    `place_folded_levels`) over the kept calls, and a kept call's top raised by its frontier's
    max of ``a · heights[l, H_SQUEEZED] + b · heights[l, 0]``.  Requires, per lane,
    ``unfold`` and ``threshold`` at least the ``named_px`` the reduction was made with (the
    squeeze never goes below it).  With no call dropped (every ``env_count`` 0) these
    are the tops of the whole placement.  The work arrays (folded …
    run_start) are overwritten; the bisection reuses them."""
    n = parent.shape[0]
    squeeze_classes(parent, lane, name_px, width_px, infra, passing, wide, unfold, threshold, heights,
                    folded, band_class, base)
    for i in range(n):
        down[i] = 0
    for i in range(n - 1, -1, -1):  # fold_chain_length
        if folded[i]:
            down[i] += 1
            p = parent[i]
            if p >= 0 and folded[p] and down[i] > down[p]:
                down[p] = down[i]
    top = np.zeros(threshold.shape[0], np.float64)
    for i in range(n):
        p = parent[i]
        bt = 0.0
        if p >= 0:
            if eff[p]:
                r = run_start[p]
                bt = bottom[r] + height[r]
            else:
                bt = bottom[p] + height[p]
        bottom[i] = bt
        eff[i] = False
        run_start[i] = -1
        if not folded[i]:
            h = base[i]
        elif p >= 0 and eff[p]:  # inside a run: the slab's place
            r = run_start[p]
            eff[i] = True
            run_start[i] = r
            bottom[i] = bottom[r]
            h = height[r]
        elif down[i] == 1 and band_class[i] >= 1:
            h = base[i]
        else:
            eff[i] = True
            run_start[i] = i
            h = heights[lane[i], band_class[i]]
        height[i] = h
        t = bottom[i] + h
        if env_count[i] > 0:
            l = lane[i]
            h_sq, h0 = heights[l, H_SQUEEZED], heights[l, 0]
            extra = 0.0
            for k in range(env_first[i], env_first[i] + env_count[i]):
                v = pool_a[k] * h_sq + pool_b[k] * h0
                if v > extra:
                    extra = v
            t += extra
        if t > top[lane[i]]:
            top[lane[i]] = t
    return top


@njit(cache=True, nogil=True)
def kept_tree(keep, parent):
    """The kept calls (``keep``, closed under parents, pre-order) as a tree of their own:
    ``(kept, kept_parent)``, the kept indices in order and each one's parent as an index
    into ``kept`` (-1 for a root)."""
    n = keep.shape[0]
    m = 0
    for i in range(n):
        if keep[i]:
            m += 1
    kept = np.empty(m, np.int64)
    kept_parent = np.empty(m, np.int64)
    new_of = np.empty(n, np.int64)  # written (and read) at kept calls only
    j = 0
    for i in range(n):
        if keep[i]:
            new_of[i] = j
            kept[j] = i
            p = parent[i]
            kept_parent[j] = new_of[p] if p >= 0 else -1
            j += 1
    return kept, kept_parent
