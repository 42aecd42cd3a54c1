"""The comparison's two sides (TraceDiff Sec. III, IV-A): which calls have a match, the
phase groups, and each side's icicle built by the shared stages (select, fold, geometry,
labels) and placed above (A) or mirrored below (B) the band.  Part of `layout.compare`."""
from __future__ import annotations


from dataclasses import dataclass

import numpy as np

from . import palette
from .camera import world_per_pixel
from .colour import INFRA_RGB, Colouring, LegendItem, oklch_rgb
from .fold import BAND_NARROW, fold_levels
from .frame import Frame
from .geometry import drawn_calls
from ..naming import function_table
from ..params.compare import TUBE_COLOR_MODES, CompareParams  # noqa: F401
from .select import select_calls
from ..kernels.tree import single_marked_descent


MATCHED_RGB = oklch_rgb(0.83, 0.025, 250.0)
UNMATCHED_RGB = oklch_rgb(0.70, 0.17, 55.0)
OVERVIEW_RGB = (oklch_rgb(0.70, 0.0, 0.0), oklch_rgb(0.58, 0.17, 27.0), oklch_rgb(0.62, 0.15, 145.0))
REPETITION_RGB = oklch_rgb(0.55, 0.20, 27.0)
FOCUS_RGB = oklch_rgb(0.38, 0.03, 250.0)  # the focus window's bins under the overview
PHASE_SHARE = 0.9  # a group holding this share of the matches is split into phases
MAX_PHASE_SPLITS = 16  # splits of `phase_groups`, each one level deeper (a bound, never met in practice)
MARKER_CHARS = 9

# ------------------------------------------------------------------------------ matches
def matched_calls(cmp) -> tuple:
    """Per call of A and of B: does it have a match in the other run (exact, over ALL class
    pairs with similarity > τ, not only the kept ones)?"""
    return cmp.has_match("a"), cmp.has_match("b")


def _marked_before(inside) -> np.ndarray:
    """The marked calls before each call (n + 1 entries): a subtree [c, end) holds
    below[end] - below[c]."""
    return np.concatenate([[0], np.cumsum(inside, dtype=np.int64)])


def _pass_through_chain(trace, root, below) -> int:
    """Descend from ``root`` while exactly one child's subtree holds matched calls (``below``:
    `_marked_before` of them; `kernels.tree.single_marked_descent`)."""
    return int(single_marked_descent(trace.end_index, below, int(root)))


def phase_groups(cmp, shown=None) -> tuple:
    """Groups of the kept pairs that separate the program's phases.

    TraceDiff's groups (Sec. III) come from a breadth-first pass over A; when the two roots
    match (``builtins.exec`` ↔ ``builtins.exec``, or one thread's ``Thread.run`` ↔ the other
    run's) one group holds everything of them, and every match is routed through the two
    roots' control points: the tubes of two calls at the left of both runs bent to the root's
    middle and back (a 48-thread pool, one thread of each run in view).  Then (a group
    holding `PHASE_SHARE` of the pairs, or of the pairs ``shown``, a mask over them, when
    given: those of the threads in view): descend from each of its two roots while a single
    child's subtree holds all its matched calls, and make one group per child of A's
    branching call ("one level below the common root"), rooted at that child and at the
    child of B's branching call that holds most of its partners; again, one level deeper,
    for a phase holding that share of its split group's phases (a worker loop's task beside
    the loop's short wait for the next).  Returns ``(group of each
    pair, root_a, root_b)`` arrays (roots per group, as call indices of A and B).
    """
    pairs, groups = cmp.pairs, cmp.groups
    g = pairs["group"].astype(np.int64)
    ra, rb = groups["a"].astype(np.int64), groups["b"].astype(np.int64)
    if pairs.size == 0 or groups.size == 0:
        return g, ra, rb
    shown = np.ones(pairs.size, np.bool_) if shown is None else np.asarray(shown, np.bool_)
    first, total = 0, int(shown.sum())  # the groups competing, and the pairs they share
    for _ in range(MAX_PHASE_SPLITS):
        counts = np.bincount(g[shown], minlength=ra.size)[first:]
        big = first + int(np.argmax(counts))
        if counts.size == 0 or counts[big - first] == 0 or counts[big - first] < PHASE_SHARE * total:
            break
        split = _split_group(cmp, g, ra, rb, big, shown)
        if split is None:
            break
        # a phase holding the share of its split group's phases (a worker loop's task beside
        # its short wait for the next) is no separation: it is split again, one level deeper
        first = ra.size
        g, ra, rb = split
        total = int(np.count_nonzero(g[shown] >= first))
    return g, ra, rb


def _children(trace, node) -> np.ndarray:
    """The children of call ``node`` (pre-order indices, ascending)."""
    lo, hi = int(node) + 1, int(trace.end_index[node])
    return (np.flatnonzero(trace.parent[lo:hi] == node) + lo).astype(np.int64)


def _child_holding(trace, kids, calls) -> np.ndarray:
    """Per call of ``calls``: the position in ``kids`` (children of one call, ascending, or a
    subset of them) of the one whose subtree holds it; -1 for calls under none of them."""
    calls = np.asarray(calls, np.int64)
    if kids.size == 0:
        return np.full(calls.size, -1, np.int64)
    k = np.searchsorted(kids, calls, side="right") - 1
    kc = np.maximum(k, 0)
    inside = (k >= 0) & (calls < trace.end_index[kids[kc]])
    return np.where(inside, k, -1)


def _split_group(cmp, g, ra, rb, big, shown):
    """`phase_groups`' split of group ``big`` (its ``shown`` pairs) below its branching calls:
    (group of each pair, root_a, root_b) with one group more per phase, or None when A's
    branching call has fewer than two children with matched calls."""
    pairs = cmp.pairs
    a, b = cmp.a, cmp.b
    in_a = np.zeros(len(a), np.bool_)
    in_b = np.zeros(len(b), np.bool_)
    sel = (g == big) & shown
    in_a[pairs["a"][sel]] = True
    in_b[pairs["b"][sel]] = True
    below_a = _marked_before(in_a)
    top_a = _pass_through_chain(a, ra[big], below_a)
    top_b = _pass_through_chain(b, rb[big], _marked_before(in_b))
    # the children of A's branching call with matched calls: each a phase
    kids_a = _children(a, top_a)
    phases = kids_a[below_a[a.end_index[kids_a]] > below_a[kids_a]]
    if len(phases) < 2:
        return None
    kids_b = _children(b, top_b)
    new_g = g.copy()
    p_a = _child_holding(a, phases, pairs["a"])
    moved = sel & (p_a >= 0)
    base = ra.size
    new_g[moved] = base + p_a[moved]
    # per phase, the child of B's branching call holding most of its partners (one pass
    # over the pairs: count (phase, child) keys, the largest count per phase wins)
    roots_b = np.full(len(phases), top_b, np.int64)
    pk = p_a[moved]
    kb = _child_holding(b, kids_b, pairs["b"][moved])
    bs = np.where(kb >= 0, kids_b[np.maximum(kb, 0)], -1) if kids_b.size else kb
    ok = bs >= 0
    if ok.any():
        key = pk[ok].astype(np.int64) * (len(b) + 1) + bs[ok]
        uk, cnt = np.unique(key, return_counts=True)
        ph, ch = uk // (len(b) + 1), uk % (len(b) + 1)
        order = np.lexsort((ch, -cnt, ph))  # per phase: most partners first, then the earliest child
        first = order[np.r_[True, ph[order][1:] != ph[order][:-1]]]
        roots_b[ph[first]] = ch[first]
    ra2 = np.concatenate([ra, phases.astype(np.int64)])
    rb2 = np.concatenate([rb, roots_b])
    # the pairs of the root chain itself stay in the big group, rooted at the branching calls
    ra2[big], rb2[big] = top_a, top_b
    return new_g, ra2, rb2


# ------------------------------------------------------------------------------- sides
@dataclass
class Side:
    """One icicle of the comparison: the shared stages' results and where they are drawn."""

    name: str  # "a" | "b"
    trace: object  # the trace the side shows (its calls hidden by the filters merged away)
    sel: object
    fold: object
    colouring: Colouring
    drawn: object
    lane_levels: float
    frame: Frame = None
    clusters: object = None
    top: float = 0.0  # the outer edge (A: top, B: bottom) in world z
    sign: float = 1.0  # +1: grows down from its top (A), -1: grows up from its bottom (B)
    source: object = None  # the compared trace (the comparison's call indices refer to it)

    def local_of(self, calls) -> np.ndarray:
        """Position among the shown calls of calls of the compared trace; -1 when not shown
        (hidden calls are shown by their nearest kept ancestor)."""
        from ..kernels.reshape import nearest_kept_ancestor

        if not hasattr(self, "_local"):
            local = np.full(len(self.source), -1, np.int64)
            local[self.sel.original(self.sel.idx)] = np.arange(self.sel.idx.size)
            if self.sel.orig is not None:  # a hidden call: its nearest kept ancestor shows it
                kept = np.zeros(len(self.source), np.bool_)
                kept[self.sel.orig] = True
                up = nearest_kept_ancestor(self.source.parent, ~kept)
                hid = ~kept
                local[hid] = np.where(up[hid] >= 0, local[np.maximum(up[hid], 0)], -1)
            self._local = local
        return self._local[np.asarray(calls, np.int64)]


def match_colouring(sel, fold, matched, infra) -> Colouring:
    """Icicle colours of a comparison: matched / no match / runtime.  (Waits keep the
    matched/unmatched colour here: red belongs to the tubes' permutation scale.)"""
    idx = sel.idx
    m = matched[sel.original(idx)]
    slot = np.where(m, 0, 1).astype(np.int32)
    slot[infra[sel.trace.func[idx]] & m] = 2
    rgb = np.array([MATCHED_RGB, UNMATCHED_RGB, INFRA_RGB])
    names = ["has a match in the other run", "no match: where the runs differ", "runtime (imports, start-up)"]
    present = np.bincount(slot, minlength=3) > 0
    legend = [LegendItem(names[k], k, 0.0) for k in range(3) if present[k]]
    return Colouring("match", "calls", slot, rgb, [f"TV3D_m{k}" for k in range(3)], legend,
                     palette.lighten(rgb, 0.5), True)


def side_fold(name, trace, params: CompareParams, tpx, budget_of=None) -> tuple:
    """One side's select and fold stages: ``(selection, folding)``; ``budget_of`` as in
    `fold.fold_levels` (the side is one lane).  A band of runtime infrastructure is drawn
    thin (`fold.BAND_NARROW`, no "13 folded levels" marker): a side compares calls, and
    the import machinery between a program's modules makes every other wide level of an
    import-heavy run such a band (networkx on two graphs: drawn as tall as a
    level, they took a fifth to a third of each side's drawn area and a third of its texts)."""
    from .select import section_members, thread_sections
    from .thread_work import working_thread

    ip = params.side_params(name)
    if ip.threads is None and trace.n_threads > 1:
        ip.threads = [working_thread(trace, thread_sections(trace) if ip.pack_threads else None)]
    if ip.pack_threads and ip.threads is not None and len(ip.threads) == 1 and trace.n_threads > 1:
        # the thread's section: threads that never ran at once, in the side's one lane (a
        # thread that does not resolve is left to `select_calls`, whose error names it)
        try:
            thread = int(trace._resolve_threads(list(ip.threads))[0])
        except (KeyError, IndexError, ValueError):
            thread = None
        if thread is not None:
            ip.threads = section_members(trace, thread)
    sel = select_calls(trace, ip, pack_min_lanes=1)
    tr = sel.trace
    est_us_per_px = (sel.t1 - sel.t0) / (0.8 * params.resolution[0])
    width_px = (np.minimum(tr.end[sel.idx], sel.t1) - np.maximum(tr.start[sel.idx], sel.t0)) / est_us_per_px
    fold = fold_levels(tr, sel.idx, sel.parent, sel.lane, 1, params.fold, width_px, MARKER_CHARS * 0.5 * tpx,
                       tpx, est_us_per_px, budget_of=budget_of, nameless_band=BAND_NARROW)
    return sel, fold


def build_side(name, trace, params: CompareParams, matched, tpx, budget=None) -> Side:
    """Select, fold and colour one side with the icicle stages; ``budget``: the levels the
    side may take at a readable height (`layout.budget`), None for no limit."""
    sel, fold = side_fold(name, trace, params, tpx,
                          None if budget is None else (lambda demand: np.minimum(demand, budget)))
    tr = sel.trace
    ft = function_table(tr)
    colouring = match_colouring(sel, fold, matched, ft.infra)
    if params.highlight:
        from ..analysis.filters import function_mask
        from .colour import highlight_colouring

        colouring = highlight_colouring(colouring, function_mask(tr, params.highlight)[tr.func[sel.idx]],
                                        "matching " + ", ".join(params.highlight))
    ext = np.maximum(tr.self_time_of(sel.idx), 0.0)
    ext_unit = 0.12 + 0.88 * (ext / ext.max() if ext.size and ext.max() > 0 else np.zeros_like(ext))
    d = drawn_calls(sel, fold, colouring.slot, ext_unit)
    return Side(name, tr, sel, fold, colouring, d, float(max(fold.lane_levels.max(), 1.0)), source=trace)


#: overview strip height and its gap to the icicle, in levels
OVERVIEW_LEVELS, OVERVIEW_GAP = 2.5, 0.6


def side_budgets(cmp, params: CompareParams, tpx: float) -> tuple:
    """Levels each icicle may take so both stay readable (`layout.budget`): the content
    height's readable levels less the band and the overview strips, shared by what the two
    sides need (with every wide pass-through chain open), at least a third each."""
    from .annotate import content_height
    from .budget import lane_budgets, readable_levels

    h_px = content_height(params.resolution, tpx, params.show_title)
    fixed = params.band + (2 * (OVERVIEW_LEVELS + OVERVIEW_GAP) if params.show_overview else 0.0) + 1.0
    avail = max(readable_levels(h_px, tpx, 1, 0.0) - fixed, 4.0)
    demand = np.array([_side_demand("a", cmp.a, params, tpx), _side_demand("b", cmp.b, params, tpx)])
    return tuple(lane_budgets(demand, np.ones(2), avail, min_levels=avail / 3.0))


def _side_demand(name, trace, params: CompareParams, tpx) -> float:
    """Levels one side takes with every wide pass-through chain open (its need)."""
    got = []

    def record(demand):
        got.append(float(np.max(demand)))
        return demand

    side_fold(name, trace, params, tpx, record)
    return got[0] if got else 1.0


def place_side(side: Side, h, top, sign, depth) -> None:
    """World z of one side's slots: A (sign +1) hangs down from ``top``, B (sign -1) stands
    up from ``top`` (its bottom edge)."""
    d = side.drawn
    if sign > 0:
        d.bottom = top - (d.level_bottom + d.level_height) * h
    else:
        d.bottom = top + d.level_bottom * h
    d.height = d.level_height * h
    d.ext = depth * d.ext_unit
    side.top, side.sign = top, sign


def side_frame(side: Side, cam, to_cam, res, h, depth, L) -> Frame:
    """The `Frame` the shared geometry and label stages need, for one side."""
    zc = side.top - side.sign * 0.5 * side.lane_levels * h
    px = world_per_pixel(cam, np.array([[L / 2, 0.0, zc]]), res)
    scale_t = L / (side.sel.t1 - side.sel.t0)
    right = np.cross(-to_cam, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    fs = max(abs(float(right[0])), 1e-3)
    return Frame(h, np.array([zc]), np.array([side.lane_levels * h]), depth, cam, to_cam, px, scale_t,
                 px / fs / scale_t, fs)


