"""Stack folding kernels (SyncTrace Sec. IV-C): which calls fold, and where every call sits.

SyncTrace folds stack levels "successively ... to a minimum size" (a graphical fisheye over
the levels) so that deep traces fit without scrolling.  We fold per call instead of per
level, because in real traces the uninformative levels are not the same at every moment
(import machinery is 40 levels deep during an import and absent afterwards):

- a call is *folded* when a rule says it carries little information (`tracevis3d.layout.fold`
  documents the rules: import machinery and other runtime infrastructure, pass-through calls
  whose one child covers nearly all of their time, or user-given level ranges);
- a *run* is a maximal chain of folded calls, parent to child; the run is drawn as one band
  whose height is shared equally by the levels of its longest chain, so a run of 40 import
  frames takes the room of one band, not of 40 levels;
- every other call takes one full level.

All kernels take calls in per-thread depth-first pre-order (parents before children, the
`Trace` order) with ``parent`` as indices into the same arrays (-1 for roots).
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def dominant_child_share(start, end, parent):
    """Share of each call's duration covered by its longest child.

    share[i] = max over children c of (end[c] - start[c]) / (end[i] - start[i]); 0 for a
    leaf; 1 for a zero-length call that has a child (it passes everything through).
    """
    n = start.shape[0]
    best = np.zeros(n, np.float64)
    has_child = np.zeros(n, np.bool_)
    for i in range(n):
        p = parent[i]
        if p >= 0:
            has_child[p] = True
            d = end[i] - start[i]
            if d > best[p]:
                best[p] = d
    share = np.zeros(n, np.float64)
    for i in range(n):
        if has_child[i]:
            d = end[i] - start[i]
            share[i] = best[i] / d if d > 0 else 1.0
    return share


@njit(cache=True, nogil=True)
def fold_chain_length(folded, parent):
    """Longest chain of folded calls starting at each call and going down (0 if unfolded).

    down[i] = 0 when not folded[i], else 1 + max over folded children c of down[c]
    (a reverse sweep: children come after their parent in pre-order).
    """
    n = folded.shape[0]
    down = np.zeros(n, np.int32)
    for i in range(n - 1, -1, -1):
        if folded[i]:
            down[i] += 1  # holds the max over folded children so far
            p = parent[i]
            if p >= 0 and folded[p] and down[i] > down[p]:
                down[p] = down[i]
    return down


@njit(cache=True, nogil=True)
def place_folded_levels(folded, parent, wide, band_wide, band_narrow, base_height):
    """Vertical place of every call, folded runs collapsed into one band each (in levels).

    A *run start* is a folded call whose parent is not (effectively) folded; with
    K = `fold_chain_length` of the start, the whole run (every folded call below the start
    that is reached through folded calls only) is drawn as ONE slab: the start's box,
    ``band_wide`` levels tall when ``wide[start]`` (room for a marker saying "K levels")
    else ``band_narrow``.  A wide run start with K == 1 is not folded (its band would be as
    tall as its level and only hide its name).  The other calls of a run are not drawn
    (they take the slab's place); an unfolded call whose parent lies in a run sits on top
    of the run's slab; every other call sits on its parent: bottom[i] = bottom[p] + height[p]
    and is ``base_height[i]`` levels tall (1, or less for calls too narrow to be named).

    Returns ``(bottom, height, eff_folded, run_start, run_levels)``: float64 bottom and
    height in levels, the effective fold flag, the start of each folded call's run (-1
    when unfolded) and, for run starts, K (0 elsewhere).  Drawn calls are those with
    ``run_start == -1`` or ``run_start == i``.
    """
    n = folded.shape[0]
    down = fold_chain_length(folded, parent)
    bottom = np.zeros(n, np.float64)
    height = np.ones(n, np.float64)
    eff = np.zeros(n, np.bool_)
    run_start = np.full(n, -1, np.int32)
    run_levels = np.zeros(n, np.int32)
    for i in range(n):
        p = parent[i]
        if p >= 0:
            if eff[p]:
                r = run_start[p]
                bottom[i] = bottom[r] + height[r]
            else:
                bottom[i] = bottom[p] + height[p]
        if not folded[i]:
            height[i] = base_height[i]
            continue
        if p >= 0 and eff[p]:  # inside a run: takes the slab's place
            r = run_start[p]
            eff[i] = True
            run_start[i] = r
            bottom[i] = bottom[r]
            height[i] = height[r]
            continue
        k = down[i]
        if k == 1 and wide[i]:
            height[i] = base_height[i]
            continue
        eff[i] = True
        height[i] = band_wide if wide[i] else band_narrow
        run_start[i] = i
        run_levels[i] = k
    return bottom, height, eff, run_start, run_levels


@njit(cache=True, nogil=True)
def squeezed_levels(parent, lane, name_px, width_px, infra, passing, wide, unfold, threshold, squeezed,
                    band_wide, band_narrow):
    """`place_folded_levels` under a per-lane squeeze (`tracevis3d.layout.fold.squeeze_parameters`).

    Per call i in lane l = lane[i]: it is folded when ``infra[i]``, or when ``passing[i]``
    and width_px[i] < unfold[l]; it is *narrow* when name_px[i] < threshold[l], and a
    narrow call whose parent is narrow too is ``squeezed[l]`` levels tall (1 otherwise).
    Returns place_folded_levels' tuple and the top of every lane (max of bottom + height).
    """
    n = parent.shape[0]
    folded = np.zeros(n, np.bool_)
    base = np.ones(n, np.float64)
    narrow = np.zeros(n, np.bool_)
    n_lanes = threshold.shape[0]
    for i in range(n):
        l = lane[i]
        folded[i] = infra[i] or (passing[i] and width_px[i] < unfold[l])
        narrow[i] = name_px[i] < threshold[l]
        p = parent[i]
        if narrow[i] and p >= 0 and narrow[p]:
            base[i] = squeezed[l]
    bottom, height, eff, run_start, run_levels = place_folded_levels(folded, parent, wide, band_wide, band_narrow,
                                                                     base)
    top = np.zeros(n_lanes, np.float64)
    for i in range(n):
        t = bottom[i] + height[i]
        if t > top[lane[i]]:
            top[lane[i]] = t
    return bottom, height, eff, run_start, run_levels, top


@njit(cache=True, nogil=True)
def squeezed_tops(parent, lane, name_px, width_px, infra, passing, wide, unfold, threshold, squeezed,
                  band_wide, band_narrow, folded, narrow, base, down, bottom, height, eff, run_start):
    """The lane tops of `squeezed_levels` (its last output) alone, the same formulas
    (`place_folded_levels` under the squeeze), in the work arrays given: the squeeze's
    bisection asks for the tops a dozen times and reuses the arrays instead of allocating
    the whole placement each step (10^7 calls: 0.25 s a step, most of it fresh pages)."""
    n = parent.shape[0]
    for i in range(n):
        l = lane[i]
        folded[i] = infra[i] or (passing[i] and width_px[i] < unfold[l])
        narrow[i] = name_px[i] < threshold[l]
        p = parent[i]
        base[i] = squeezed[l] if (narrow[i] and p >= 0 and narrow[p]) else 1.0
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
        b = 0.0
        if p >= 0:
            if eff[p]:
                r = run_start[p]
                b = bottom[r] + height[r]
            else:
                b = bottom[p] + height[p]
        bottom[i] = b
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
        elif down[i] == 1 and wide[i]:
            h = base[i]
        else:
            eff[i] = True
            run_start[i] = i
            h = band_wide if wide[i] else band_narrow
        height[i] = h
        t = bottom[i] + h
        if t > top[lane[i]]:
            top[lane[i]] = t
    return top
