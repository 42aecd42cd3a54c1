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
def longest_child(start, end, parent):
    """``(best, has_child)``: per call the duration of its longest child (0 for a leaf) and
    whether it has one."""
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
    return best, has_child


@njit(cache=True, nogil=True)
def dominant_child_share(start, end, parent):
    """Share of each call's duration covered by its longest child.

    share[i] = max over children c of (end[c] - start[c]) / (end[i] - start[i]); 0 for a
    leaf; 1 for a zero-length call that has a child (it passes everything through).
    """
    n = start.shape[0]
    best, has_child = longest_child(start, end, parent)
    share = np.zeros(n, np.float64)
    for i in range(n):
        if has_child[i]:
            d = end[i] - start[i]
            share[i] = best[i] / d if d > 0 else 1.0
    return share


@njit(cache=True, nogil=True)
def auto_fold_flags(func, kind, start, end, parent, infra_of_function, share_min):
    """The automatic fold rule's two parts per call (`tracevis3d.layout.fold.auto_fold_parts`)
    in three passes, no temporaries: with ``other[i] = kind[i] == 0`` (neither a wait, a
    release nor I/O) and ``share`` as `dominant_child_share`,
    ``infra[i] = infra_of_function[func[i]] ∧ other[i]``,
    ``through[i] = share[i] ≥ share_min ∧ other[i]`` and
    ``passing[i] = through[i] ∧ ¬infra[i] ∧ p ≥ 0 ∧ through[p] ∧ ¬infra[p]`` (p = parent[i]).
    Returns (infra, passing), bool arrays."""
    n = start.shape[0]
    best, has_child = longest_child(start, end, parent)
    infra = np.empty(n, np.bool_)
    through = np.empty(n, np.bool_)
    for i in range(n):
        other = kind[i] == 0
        infra[i] = infra_of_function[func[i]] and other
        if has_child[i] and other:
            d = end[i] - start[i]
            through[i] = (best[i] / d if d > 0 else 1.0) >= share_min
        else:
            through[i] = False
    passing = np.empty(n, np.bool_)
    for i in range(n):
        p = parent[i]
        passing[i] = through[i] and not infra[i] and p >= 0 and through[p] and not infra[p]
    return infra, passing


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


@njit(cache=True, nogil=True, inline="always")
def join_run(i, p, eff, run_start, bottom):
    """Folded call i, whose parent p is in a run, joins that run: it takes the place of the
    run's slab (its start r's bottom), marked folded with start r.  Returns r."""
    r = run_start[p]
    eff[i] = True
    run_start[i] = r
    bottom[i] = bottom[r]
    return r


@njit(cache=True, nogil=True)
def place_folded_levels(folded, parent, lane, band_class, heights, base_height):
    """Vertical place of every call, folded runs collapsed into one band each (in levels).

    A *run start* is a folded call whose parent is not (effectively) folded; with
    K = `fold_chain_length` of the start, the whole run (every folded call below the start
    that is reached through folded calls only) is drawn as ONE slab: the start's box,
    ``heights[lane[start], band_class[start]]`` levels tall.  The classes: 0 a run too
    narrow for a marker, 1 a run wide enough for a marker that says "K levels", 2 a wide run
    that also carries a call's name (`squeezed_levels` sets them; the heights per lane are
    the squeeze's).  A wide run start (class ≥ 1) with K == 1 is not folded (its band would
    be as tall as its level and only hide its name).  The other calls of a run are not
    drawn (they take the slab's place); an unfolded call whose parent lies in a run sits on
    top of the run's slab; every other call sits on its parent:
    bottom[i] = bottom[p] + height[p] and is ``base_height[i]`` levels tall (1, or less for
    calls too narrow to be named).

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
            height[i] = height[join_run(i, p, eff, run_start, bottom)]
            continue
        k = down[i]
        if k == 1 and band_class[i] >= 1:
            height[i] = base_height[i]
            continue
        eff[i] = True
        height[i] = heights[lane[i], band_class[i]]
        run_start[i] = i
        run_levels[i] = k
    return bottom, height, eff, run_start, run_levels


@njit(cache=True, nogil=True)
def chain_ranked_width(parent, name_px, through, keep, floor_px, step):
    """Name widths with ties along a chain broken by depth: the width by which the squeeze
    ranks calls for the few full levels of a crowded lane (`squeeze_classes`' threshold).

    ``rank[i] = min(name_px[i], max(cap[i], floor_px))`` for a call whose name_px is at
    least ``floor_px`` (the width a name needs), else (and where ``keep[i]``: waits and
    I/O, the end of a chain that says what the thread waits on) ``name_px[i]``, where
    ``cap[i] = rank[p] · (1 − step)`` for its parent p, or ``cap[p]`` when ``through[p]``
    (a parent drawn as a thin band, runtime infrastructure: it takes no level of its own),
    and +inf for a root.

    SyncTrace (Sec. IV-C) gives the stack levels a fisheye by importance; width is the
    importance here, and a chain of calls of one width (``<lambda> › doc › … ›
    publish_programmatically``, 738 px each) would otherwise pass or fail one width
    threshold together, so a crowded lane jumps from five full levels to one.  Ranked, a
    call as wide as its parent comes just after it: the threshold opens the chain one
    level at a time, shallowest first.  Never below ``floor_px``, so which calls can be
    named at all does not change.  Pre-order (parents first)."""
    n = parent.shape[0]
    rank = np.empty(n, np.float64)
    cap = np.empty(n, np.float64)
    for i in range(n):
        p = parent[i]
        if p < 0:
            cap[i] = np.inf
        elif through[p]:
            cap[i] = cap[p]
        else:
            cap[i] = rank[p] * (1.0 - step)
        w = name_px[i]
        if w >= floor_px and not keep[i]:
            rank[i] = min(w, max(cap[i], floor_px))
        else:
            rank[i] = w
    return rank


#: columns of the per-lane height table of `squeeze_classes` (in levels): a band of class
#: 0, 1 or 2 (`place_folded_levels`), a narrow call on a narrow parent, a narrow call on a
#: call that is not narrow (or a narrow root)
H_SQUEEZED, H_FIRST_NARROW = 3, 4


@njit(cache=True, nogil=True)
def squeeze_classes(parent, lane, name_px, width_px, infra, passing, wide, unfold, threshold, heights,
                    folded, band_class, base):
    """The per-call inputs of `place_folded_levels` under a per-lane squeeze
    (`tracevis3d.layout.fold.squeeze_parameters`), written into ``folded``, ``band_class``
    and ``base``.  Per call i in lane l = lane[i]: it is folded when ``infra[i]``, or when
    ``passing[i]`` and width_px[i] < unfold[l]; it is *narrow* when name_px[i] <
    threshold[l]; a narrow call is ``heights[l, H_SQUEEZED]`` levels tall when its parent is
    narrow too, else ``heights[l, H_FIRST_NARROW]`` (the level where wide calls break up
    into narrow ones, named by groups), and a call that is not narrow 1; a wide call
    (``wide[i]``, room for a marker) starts a band of class 2 (it can carry a name) when it
    is neither infrastructure nor narrow, else 1; other calls class 0; band heights
    ``heights[l, class]``."""
    n = parent.shape[0]
    for i in range(n):
        l = lane[i]
        folded[i] = infra[i] or (passing[i] and width_px[i] < unfold[l])
        narrow_i = name_px[i] < threshold[l]
        p = parent[i]
        if not narrow_i:
            base[i] = 1.0
        elif p >= 0 and name_px[p] < threshold[lane[p]]:
            base[i] = heights[l, H_SQUEEZED]
        else:
            base[i] = heights[l, H_FIRST_NARROW]
        if not wide[i]:
            band_class[i] = 0
        elif infra[i] or narrow_i:
            band_class[i] = 1
        else:
            band_class[i] = 2


@njit(cache=True, nogil=True)
def squeezed_levels(parent, lane, name_px, width_px, infra, passing, wide, unfold, threshold, heights):
    """`place_folded_levels` under a per-lane squeeze (`squeeze_classes`, whose rules and
    height table ``heights`` (lanes × 5) it applies).
    Returns place_folded_levels' tuple and the top of every lane (max of bottom + height).
    """
    n = parent.shape[0]
    folded = np.zeros(n, np.bool_)
    band_class = np.zeros(n, np.int8)
    base = np.ones(n, np.float64)
    squeeze_classes(parent, lane, name_px, width_px, infra, passing, wide, unfold, threshold, heights,
                    folded, band_class, base)
    bottom, height, eff, run_start, run_levels = place_folded_levels(folded, parent, lane, band_class, heights,
                                                                     base)
    top = np.zeros(threshold.shape[0], np.float64)
    for i in range(n):
        t = bottom[i] + height[i]
        if t > top[lane[i]]:
            top[lane[i]] = t
    return bottom, height, eff, run_start, run_levels, top
