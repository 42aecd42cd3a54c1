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

A view can also cut its calls before the fold (`subpixel_stubs`): the subtree of a call
narrower than a fraction of a pixel is drawn as that call and a *stalk* over it, never call
by call, so it is dropped and the call (a *stub*) keeps its *envelope*: the frontier of the
same counts, split by whether the path's first call under the stub is a level of its own
(``u``: that call is ``heights[l, H_FIRST_NARROW]`` tall when the stub is not narrow, a
squeezed level when it is).  A pair (a, b, u) of a stub i adds
``a · h_sq + b · h0 + u · (h_sq if narrow(i) else h_first)`` on top of i
(`envelope_value`).  `tiny_subtrees` takes such envelopes in (``in_*``) and keeps them, and
`reduced_tops` and `envelope_tops` raise a call's top by its envelope.
"""
import numpy as np
from numba import njit

from .fold import H_FIRST_NARROW, H_SQUEEZED, squeeze_classes


@njit(cache=True, nogil=True)
def whole_subtrees(flag, parent):
    """Per call: ``flag`` holds for it and for every call of its subtree (a reverse sweep,
    children after their parent in pre-order; ``flag`` is overwritten and returned)."""
    for i in range(flag.shape[0] - 1, -1, -1):
        p = parent[i]
        if not flag[i] and p >= 0:
            flag[p] = False
    return flag


#: `_tiny_run`'s state: the pools' pairs, the calls visited by tries, the room ``best`` needs
_T_POOL, _T_WORK, _T_NEED = 0, 1, 2


@njit(cache=True, nogil=True, _nrt=False)
def _tiny_run(i, st, parent, local_end, infra, passing, k_max, max_work, in_first, in_count, in_a, in_b, in_u,
              all_fixed, keep, env_first, env_count, pool_a, pool_b, pool_u, a, b, best):
    """`tiny_subtrees`' calls from ``i`` on, its state in ``st``, until every call is read or a
    subtree's counts need more room in ``best`` than it has (``st[_T_NEED]``: the subtree is
    left whole, its work uncounted, for the caller to grow ``best`` and try it again).  Rebinds
    no array and counts no reference (a loop that may rebind one raises and drops every such
    array's count on every pass).  Returns the next call."""
    n = parent.shape[0]
    n_pool, work = st[_T_POOL], st[_T_WORK]
    st[_T_NEED] = 0
    while i < n:
        keep[i] = True
        reduced = False
        if all_fixed[i] and work < max_work:
            e = local_end[i]
            a_max = 0
            best[0] = 0
            short = 0
            for c in range(i, e):
                if c == i:
                    a[c] = 0
                    b[c] = 0
                else:
                    p = parent[c]
                    fc = infra[c] or passing[c]
                    a[c] = a[p] + (0 if fc else 1)
                    b[c] = b[p] + (1 if fc and not (infra[p] or passing[p]) else 0)
                for k in range(-1, in_count[c]):
                    av = a[c] if k < 0 else a[c] + in_a[in_first[c] + k] + in_u[in_first[c] + k]
                    bv = b[c] if k < 0 else b[c] + in_b[in_first[c] + k]
                    if av > a_max:
                        if av >= best.shape[0]:
                            short = 2 * av + 1
                            break
                        for q in range(a_max + 1, av + 1):
                            best[q] = -1
                        a_max = av
                    if bv > best[av]:
                        best[av] = bv
                if short:
                    break
            if short:
                st[_T_NEED] = short
                break
            work += e - i
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
                        pool_u[n_pool] = 0
                        n_pool += 1
                reduced = True
                i = e
        if not reduced:
            if in_count[i] > 0:  # kept as it is: its own envelope
                env_first[i] = n_pool
                env_count[i] = in_count[i]
                for k in range(in_count[i]):
                    pool_a[n_pool] = in_a[in_first[i] + k]
                    pool_b[n_pool] = in_b[in_first[i] + k]
                    pool_u[n_pool] = in_u[in_first[i] + k]
                    n_pool += 1
            i += 1
    st[_T_POOL], st[_T_WORK] = n_pool, work
    return i


@njit(cache=True, nogil=True)
def tiny_subtrees(parent, local_end, name_px, width_px, infra, passing, wide, named_px, k_max, max_work,
                  in_first, in_count, in_a, in_b, in_u):
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

    Envelopes in (``in_first``, ``in_count`` per call into the pools ``in_a``, ``in_b``,
    ``in_u``; all counts 0: none): a call c of a summarised subtree with an envelope adds
    the pairs (a[c] + a' + u', b[c] + b') for its pairs (a', b', u') (c is fixed, hence
    narrow: its first level over it is a squeezed one); a call kept without a summary keeps
    its envelope as it is.

    Returns ``(keep, env_first, env_count, pool_a, pool_b, pool_u)``: per call, whether
    kept, and the first index and number of its frontier pairs in the int16 pools (count
    0: no frontier), ``pool_u`` the pairs' u (0 for the pairs of a summary).  Calls in
    pre-order, ``local_end[i]`` one past the last call of i's subtree.  The calls are read by
    `_tiny_run`; here, between its runs, ``best`` (max b per a in the subtree tried) grows.
    """
    n = parent.shape[0]
    fixed = np.empty(n, np.bool_)
    for i in range(n):
        fixed[i] = name_px[i] < named_px and width_px[i] < named_px and not wide[i]
    all_fixed = whole_subtrees(fixed, parent)
    keep = np.zeros(n, np.bool_)
    env_first = np.zeros(n, np.int32)
    env_count = np.zeros(n, np.int8)
    cap = n + in_a.shape[0]
    pool_a = np.empty(cap, np.int16)
    pool_b = np.empty(cap, np.int16)
    pool_u = np.zeros(cap, np.int8)
    a = np.zeros(n, np.int32)
    b = np.zeros(n, np.int32)
    best = np.full(64, -1, np.int32)  # max b per a, in the subtree tried
    st = np.zeros(3, np.int64)  # (`_tiny_run`'s state)
    i = 0
    while True:
        i = _tiny_run(i, st, parent, local_end, infra, passing, k_max, max_work, in_first, in_count, in_a, in_b, in_u,
                      all_fixed, keep, env_first, env_count, pool_a, pool_b, pool_u, a, b, best)
        if i >= n:
            break
        grown_best = np.full(max(2 * best.shape[0], st[_T_NEED]), -1, np.int32)
        grown_best[:best.shape[0]] = best
        best = grown_best
    n_pool = st[_T_POOL]
    return keep, env_first, env_count, pool_a[:n_pool], pool_b[:n_pool], pool_u[:n_pool]


@njit(cache=True, nogil=True)
def envelope_value(first, count, pool_a, pool_b, pool_u, heights, lane, narrow):
    """The height an envelope adds on top of its call in lane ``lane``:
    max over its pairs (a, b, u) of ``a · h_sq + b · h0 + u · (h_sq if narrow else
    h_first)``, with h_sq, h0, h_first = ``heights[lane, H_SQUEEZED]``, ``heights[lane, 0]``,
    ``heights[lane, H_FIRST_NARROW]`` (`kernels.fold.squeeze_classes`: a narrow call on a
    narrow parent is a squeezed level, on a parent that is not narrow the first narrow
    level); 0 for an empty envelope."""
    h_sq, h0, h_first = heights[lane, H_SQUEEZED], heights[lane, 0], heights[lane, H_FIRST_NARROW]
    h_u = h_sq if narrow else h_first
    extra = 0.0
    for k in range(first, first + count):
        v = pool_a[k] * h_sq + pool_b[k] * h0 + pool_u[k] * h_u
        if v > extra:
            extra = v
    return extra


@njit(cache=True, nogil=True)
def envelope_tops(top, lane, name_px, threshold, heights, env_first, env_count, pool_a, pool_b, pool_u):
    """Per call: the top of what its envelope stands for (``top[i]`` + `envelope_value`),
    -inf where it has none (``env_count[i]`` 0).  ``top[i]`` is where its children would
    stand (bottom + height of its place, its slab's for a call inside a folded run)."""
    n = top.shape[0]
    out = np.full(n, -np.inf)
    for i in range(n):
        if env_count[i] > 0:
            out[i] = top[i] + envelope_value(env_first[i], env_count[i], pool_a, pool_b, pool_u, heights, lane[i],
                                             name_px[i] < threshold[lane[i]])
    return out


@njit(cache=True, nogil=True)
def _split_staircase(best, reach, a_max, pool_a, pool_b, pool_u, at, write):
    """The pairs of a split envelope (`subpixel_stubs`) from ``best[u, a]`` (the largest b
    per a, -1 for none) and ``reach[a]`` (the largest u = 1 b at a or above): per u, from
    the largest a down, the pairs whose b beats every larger a's, less the u = 0 pairs a
    u = 1 pair dominates.  Returns (their number, the largest b); with ``write``, writes
    them into the pools from ``at``."""
    count = 0
    b_max = -1
    for uu in range(2):
        top_b = -1
        for k in range(a_max, -1, -1):
            if best[uu, k] > top_b:
                top_b = best[uu, k]
                if uu == 1 or reach[k] < best[0, k]:
                    if write:
                        pool_a[at + count] = k
                        pool_b[at + count] = top_b
                        pool_u[at + count] = uu
                    count += 1
                    b_max = max(b_max, top_b)
    return count, b_max


@njit(cache=True, nogil=True)
def subpixel_stubs(parent, local_end, width_px, folded, rho, k_max, max_work):
    """The cut of a view that draws sub-pixel subtrees as stalks: which calls it keeps, and
    the envelope of each *stub* (a kept call narrower than ``rho`` pixels whose subtree is
    dropped).

    A call is *under* when it and every call of its subtree are narrower than ``rho``
    (``width_px``).  Walking pre-order, a kept call that is under and has children is tried:
    per call c of its subtree (c ≠ i, parent p, f = ``folded``) u[c] = 1 − f[c],
    a[c] = 0, b[c] = f[c] ∧ ¬f[i] when p = i, else u[c] = u[p], a[c] = a[p] + ¬f[c],
    b[c] = b[p] + (f[c] ∧ ¬f[p]); its envelope is the Pareto frontier of the (a, b) of each
    u, with (0, 0, 0) for i itself, less the u = 0 pairs some u = 1 pair dominates (its
    value is at least theirs).  With at most ``k_max`` pairs (counts within int16) the
    subtree is dropped and i keeps the envelope, else i is kept without one and its
    children are tried in turn; past ``max_work`` calls visited by tries, nothing more is
    dropped.  The calls under a stub are all narrower than a name (their runs and rows lie
    inside it), folded exactly by ``folded`` and never wide, which is what the pairs count
    (`envelope_value`).

    Returns ``(keep, env_first, env_count, pool_a, pool_b, pool_u, n_under)``: per call
    whether kept, its envelope in the pools, and the number of calls dropped under it."""
    n = parent.shape[0]
    under = np.empty(n, np.bool_)
    for i in range(n):
        under[i] = width_px[i] < rho
    under = whole_subtrees(under, parent)
    keep = np.zeros(n, np.bool_)
    env_first = np.zeros(n, np.int32)
    env_count = np.zeros(n, np.int8)
    n_under = np.zeros(n, np.int64)
    pool_a = np.empty(n, np.int16)
    pool_b = np.empty(n, np.int16)
    pool_u = np.empty(n, np.int8)
    a = np.zeros(n, np.int32)
    b = np.zeros(n, np.int32)
    u = np.zeros(n, np.int8)
    best = np.full((2, 64), -1, np.int32)  # max b per a, for u = 0 and u = 1
    reach = np.full(65, -1, np.int32)  # max b of the u = 1 pairs at a or more
    n_pool = 0
    work = 0
    i = 0
    while i < n:
        keep[i] = True
        e = local_end[i]
        if not under[i] or e <= i + 1 or work >= max_work:
            i += 1
            continue
        work += e - i
        a_max = 0
        best[0, 0] = 0
        best[1, 0] = -1
        for c in range(i + 1, e):
            p = parent[c]
            fc = folded[c]
            if p == i:
                u[c] = 0 if fc else 1
                a[c] = 0
                b[c] = 1 if fc and not folded[i] else 0
            else:
                u[c] = u[p]
                a[c] = a[p] + (0 if fc else 1)
                b[c] = b[p] + (1 if fc and not folded[p] else 0)
            av = a[c]
            if av > a_max:
                if av >= best.shape[1]:
                    grown = np.full((2, 2 * av + 1), -1, np.int32)
                    grown[:, :best.shape[1]] = best
                    best = grown
                for q in range(a_max + 1, av + 1):
                    best[0, q] = -1
                    best[1, q] = -1
                a_max = av
            if b[c] > best[u[c], av]:
                best[u[c], av] = b[c]
        if reach.shape[0] < a_max + 2:
            reach = np.full(2 * a_max + 2, -1, np.int32)
        reach[a_max + 1] = -1
        for k in range(a_max, -1, -1):
            reach[k] = max(reach[k + 1], best[1, k])
        count, b_max = _split_staircase(best, reach, a_max, pool_a, pool_b, pool_u, n_pool, False)
        if count <= k_max and a_max < 32767 and b_max < 32767:
            env_first[i] = n_pool
            env_count[i] = count
            n_pool += _split_staircase(best, reach, a_max, pool_a, pool_b, pool_u, n_pool, True)[0]
            n_under[i] = e - i - 1
            i = e
        else:
            i += 1
    return keep, env_first, env_count, pool_a[:n_pool], pool_b[:n_pool], pool_u[:n_pool], n_under


@njit(cache=True, nogil=True)
def reduced_tops(parent, lane, name_px, width_px, infra, passing, wide, env_first, env_count,
                 pool_a, pool_b, pool_u, unfold, threshold, heights, folded, band_class, base, down, bottom, height,
                 eff, run_start):
    """The lane tops of `kernels.fold.squeezed_levels` (its last output) from the reduced
    tree of `tiny_subtrees`: the same formulas (`squeeze_classes`, then
    `place_folded_levels`) over the kept calls, and a kept call's top raised by the max of
    its frontier's `envelope_value` (``a · heights[l, H_SQUEEZED] + b · heights[l, 0]`` for
    the pairs of a summary).  Requires, per lane,
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
            t += envelope_value(env_first[i], env_count[i], pool_a, pool_b, pool_u, heights, lane[i],
                                name_px[i] < threshold[lane[i]])
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
