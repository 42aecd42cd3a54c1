"""The comparison scene (TraceDiff Sec. IV): two mirrored icicles joined by bundled tubes (bpy-free).

    compare_layout(comparison, CompareParams()) → SceneSpec

Geometry (world units, z up, y into the picture):
- A above, B below, a band of ``band`` levels between them around z = 0 where bundling
  happens; A's roots at its top edge and deeper calls downwards towards the band, B
  mirrored (roots at the bottom).  Each icicle comes from the shared stages (select, fold,
  geometry, labels) with its own focus window mapped to x in [0, time_length];
- icicle colours say where the runs differ: a call with a match in the other run (its
  Γ-class has a partner with similarity > τ, exactly, Sec. III) is drawn in a light slate,
  a call without one in a strong orange, runtime infrastructure in sand;
- the overview (Sec. IV-A) on the outer side of each icicle: one stacked bar per time bin of
  the whole trace, its height the sum of match similarities in the bin, split into aligned
  (grey), partner earlier (red, "past") and partner later (green, "future"); the focus
  window is marked under it;
- repetitions (Sec. III, IV-B) outlined in red;
- tubes for the visible matches (Sec. IV-B/C), aggregated at the figure's resolution: a
  match starts at the nearest *key box* of its call in A (a box of its own, on a full
  level, at least `KEY_PX` wide: TraceDiff's key nodes) and ends at that of its call in B;
  matches between the same two key boxes become one tube (aligned and moved ones apart),
  as wide as the calls it carries and at least `COUNT_PX`·√n pixels for n matches, so a
  10^5-match band shows its structure instead of a curtain (`tube_stage`), at most
  ``max_tubes`` (moved first, then the widest).  Tubes follow the group's control trees
  (`kernels.bundle`), start at the inner edge of their key box in A and end at the inner
  edge of theirs in B, thin towards the middle (`kernels.tubes`), and sit deeper in the
  picture the coarser the match (interpolated stack depths, IV-C); the moved tubes lie in
  front of every aligned one and the aligned ones are translucent, so dense aligned
  bundles never hide what moved;
- groups (Sec. III): when one root match holds almost every match (``builtins.exec`` ↔
  ``builtins.exec``), the groups are formed one level below the common chain of the two
  roots instead (`phase_groups`), so the bundles separate the program's phases.
Tube colour modes (IV-D and beyond) are material switches: every tube carries its bin for
each mode (attributes ``bin_<mode>``) and the materials of all modes; ``color_by`` picks the
one shown.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..kernels.bundle import attach_leaves, bundled_curves, clamp_to_matched_descendants, key_tree
from ..kernels.tubes import arclength_parameter, tube_half_widths
from . import palette
from .annotate import hud_layers, plan_hud
from .camera import fit_camera_rect, view_direction, world_per_pixel
from .colour import INFRA_RGB, Colouring, LegendItem, oklch_rgb
from .fold import BAND_WIDE, fold_levels
from .frame import Frame
from .geometry import BOX_FILL, box_layer, cluster_calls, cluster_layer, cluster_material_names, drawn_calls
from .labels import TEXT_DARK, TEXT_LIGHT, LabelPlacer, icicle_labels, place_facing_text, text_px
from .naming import function_table
from ..params.compare import TUBE_COLOR_MODES, CompareParams  # noqa: F401
from .select import select_calls
from .spec import InstanceLayer, LabelSet, LegendEntry, LightSpec, MaterialSpec, SceneSpec, TubeLayer
from .text import cut_end, text_width

MATCHED_RGB = oklch_rgb(0.83, 0.025, 250.0)
UNMATCHED_RGB = oklch_rgb(0.70, 0.17, 55.0)
OVERVIEW_RGB = (oklch_rgb(0.70, 0.0, 0.0), oklch_rgb(0.58, 0.17, 27.0), oklch_rgb(0.62, 0.15, 145.0))
REPETITION_RGB = oklch_rgb(0.55, 0.20, 27.0)
FOCUS_RGB = oklch_rgb(0.38, 0.03, 250.0)  # the focus window's bins under the overview
PHASE_SHARE = 0.9  # a group holding this share of the matches is split into phases
MARKER_CHARS = 9


# ------------------------------------------------------------------------------ matches
def matched_calls(cmp) -> tuple:
    """Per call of A and of B: does it have a match in the other run (exact, over ALL class
    pairs with similarity > τ, not only the kept ones)?"""
    ptr = cmp.class_pair_ptr
    has_a = np.zeros(cmp.n_classes, np.bool_)
    has_a[cmp.class_rows_a[np.diff(ptr) > 0]] = True
    has_b = np.zeros(cmp.n_classes, np.bool_)
    if cmp.class_pair_row_b.size:  # rows of B's classes with a partner (a mask: no sort)
        row_has = np.zeros(cmp.class_rows_b.size, np.bool_)
        row_has[cmp.class_pair_row_b] = True
        has_b[cmp.class_rows_b[row_has]] = True
    return has_a[cmp.class_a], has_b[cmp.class_b]


def _pass_through_chain(trace, root, inside) -> int:
    """Descend from ``root`` while exactly one child's subtree holds matched calls."""
    node = int(root)
    while True:
        kids = []
        c = node + 1
        while c < trace.end_index[node]:
            if inside[c:trace.end_index[c]].any():
                kids.append(c)
                if len(kids) > 1:
                    break
            c = int(trace.end_index[c])
        if len(kids) != 1:
            return node
        node = kids[0]


def phase_groups(cmp) -> tuple:
    """Groups of the kept pairs that separate the program's phases.

    TraceDiff's groups (Sec. III) come from a breadth-first pass over A; when the two roots
    match (``builtins.exec`` ↔ ``builtins.exec``) one group holds everything.  Then (a group
    holding `PHASE_SHARE` of the pairs): descend from each of its two roots while a single
    child's subtree holds all its matched calls, and make one group per child of A's
    branching call ("one level below the common root"), rooted at that child and at the
    child of B's branching call that holds most of its partners.  Returns ``(group of each
    pair, root_a, root_b)`` arrays (roots per group, as call indices of A and B).
    """
    pairs, groups = cmp.pairs, cmp.groups
    g = pairs["group"].astype(np.int64)
    ra, rb = groups["a"].astype(np.int64), groups["b"].astype(np.int64)
    if pairs.size == 0 or groups.size == 0:
        return g, ra, rb
    counts = np.bincount(g, minlength=groups.size)
    big = int(np.argmax(counts))
    if counts[big] < PHASE_SHARE * pairs.size:
        return g, ra, rb
    a, b = cmp.a, cmp.b
    in_a = np.zeros(len(a), np.bool_)
    in_b = np.zeros(len(b), np.bool_)
    sel = g == big
    in_a[pairs["a"][sel]] = True
    in_b[pairs["b"][sel]] = True
    top_a = _pass_through_chain(a, ra[big], in_a)
    top_b = _pass_through_chain(b, rb[big], in_b)
    # the children of A's branching call with matched calls: each a phase
    phase_of_a = np.full(len(a), -1, np.int64)
    phases = []
    c = top_a + 1
    while c < a.end_index[top_a]:
        if in_a[c:a.end_index[c]].any():
            phase_of_a[c:a.end_index[c]] = len(phases)
            phases.append(c)
        c = int(a.end_index[c])
    if len(phases) < 2:
        return g, ra, rb
    child_of_b = np.full(len(b), -1, np.int64)
    c = top_b + 1
    while c < b.end_index[top_b]:
        child_of_b[c:b.end_index[c]] = c
        c = int(b.end_index[c])
    new_g = g.copy()
    p_a = phase_of_a[pairs["a"]]
    moved = sel & (p_a >= 0)
    base = groups.size
    new_g[moved] = base + p_a[moved]
    # per phase, the child of B's branching call holding most of its partners (one pass
    # over the pairs: count (phase, child) keys, the largest count per phase wins)
    roots_b = np.full(len(phases), top_b, np.int64)
    pk = p_a[moved]
    bs = child_of_b[pairs["b"][moved]]
    ok = bs >= 0
    if ok.any():
        key = pk[ok].astype(np.int64) * (len(b) + 1) + bs[ok]
        uk, cnt = np.unique(key, return_counts=True)
        ph, ch = uk // (len(b) + 1), uk % (len(b) + 1)
        order = np.lexsort((ch, -cnt, ph))  # per phase: most partners first, then the earliest child
        first = order[np.r_[True, ph[order][1:] != ph[order][:-1]]]
        roots_b[ph[first]] = ch[first]
    ra2 = np.concatenate([ra, np.asarray(phases, np.int64)])
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
    `fold.fold_levels` (the side is one lane)."""
    ip = params.side_params(name)
    if ip.threads is None and trace.n_threads > 1:
        from .select import working_thread

        ip.threads = [working_thread(trace)]
    sel = select_calls(trace, ip)
    tr = sel.trace
    est_us_per_px = (sel.t1 - sel.t0) / (0.8 * params.resolution[0])
    width_px = (np.minimum(tr.end[sel.idx], sel.t1) - np.maximum(tr.start[sel.idx], sel.t0)) / est_us_per_px
    fold = fold_levels(tr, sel.idx, sel.parent, sel.lane, 1, params.fold, width_px, MARKER_CHARS * 0.5 * tpx,
                       tpx, est_us_per_px, budget_of=budget_of)
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
    ext = np.maximum(tr.self_time[sel.idx], 0.0)
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


# ------------------------------------------------------------------------------- tubes
#: in the similarity mode, tubes at least this wide (pixels) show similarity as a specular
#: highlight (opaque, glossier for stronger matches), thinner ones as transparency (IV-D)
SIMILARITY_GLOSS_PX = 16.0


def _tube_colour_bins(sim, rel_a, rel_b, ratio, tau, width_px=None, perm=None):
    """Bin of every tube in each colour mode, and the materials (name, rgb, alpha, gloss) of
    all modes; ``width_px``: each tube's widest cross-section in pixels (similarity mode);
    ``perm``: each tube's permutation (default |rel_a − rel_b|)."""
    mats, bins = [], {}
    perm = np.abs(rel_a - rel_b) if perm is None else np.asarray(perm, np.float64)
    nb = PERM_BINS
    # grey up to 5 % of the group (the other run's phases shift things a little), full red
    # from half of the group on
    v = np.clip((perm - PERM_GREY) / (PERM_FULL - PERM_GREY), 0.0, 1.0)
    bins["permutation"] = np.minimum((v * nb).astype(np.int64), nb - 1)
    for k in range(nb):  # grey when aligned (translucent) → red when permuted by half the group or more
        t = k / (nb - 1)
        mats.append((f"TV3D_tube_perm{k}", oklch_rgb(0.80 - 0.28 * t, 0.01 + 0.19 * t, 27.0),
                     ALIGNED_ALPHA if k == 0 else 1.0))
    nr = 8
    for mode, rel in (("trace-a", rel_a), ("trace-b", rel_b)):
        bins[mode] = len(mats) + np.minimum((np.clip(rel, 0, 1) * nr).astype(np.int64), nr - 1)
        for k in range(nr):  # blue (early in the group) → red (late)
            mats.append((f"TV3D_tube_{mode}{k}", oklch_rgb(0.66, 0.14, 260.0 - 235.0 * k / (nr - 1)), 1.0))
    ns = 5
    s = (np.clip(sim, tau, 1.0) - tau) / max(1.0 - tau, 1e-9)
    s_bin = np.minimum((s * ns).astype(np.int64), ns - 1)
    wide = np.zeros(s_bin.shape, np.bool_) if width_px is None else width_px >= SIMILARITY_GLOSS_PX
    bins["similarity"] = len(mats) + s_bin + np.where(wide, ns, 0)
    for k in range(ns):  # thin tubes; weak: light and translucent; strong: deep and opaque
        t = (k + 0.5) / ns
        mats.append((f"TV3D_tube_sim{k}", oklch_rgb(0.85 - 0.35 * t, 0.04 + 0.12 * t, 300.0), 0.35 + 0.65 * t))
    for k in range(ns):  # wide tubes: opaque, the highlight sharper and brighter for stronger matches
        t = (k + 0.5) / ns  # (Workbench shows no specular light: the colour still deepens)
        mats.append((f"TV3D_tube_simgloss{k}", oklch_rgb(0.85 - 0.35 * t, 0.04 + 0.12 * t, 300.0), 1.0, t))
    nd = 7
    lr = np.clip(np.log2(np.maximum(ratio, 1e-12)), -3, 3)
    bins["ratio"] = len(mats) + np.clip(np.round(lr / 1.0).astype(np.int64) + 3, 0, nd - 1)
    for k in range(nd):  # log2 ratio −3..+3: blue faster in B, grey same, red slower in B
        v = (k - 3) / 3.0
        hue = 27.0 if v > 0 else 250.0
        mats.append((f"TV3D_tube_ratio{k}", oklch_rgb(0.75 - 0.2 * abs(v), 0.01 + 0.17 * abs(v), hue), 1.0))
    return bins, mats


def _finer_tube_inside(trace, calls, ask) -> np.ndarray:
    """For each tube end call ``calls[i]`` with ``ask[i]``: does another tube end lie strictly
    inside its subtree (pre-order: in (call, end_index[call]))?  O(m log m)."""
    ends = np.sort(calls)
    out = np.zeros(calls.size, np.bool_)
    c = calls[ask]
    lo = np.searchsorted(ends, c, side="right")
    hi = np.searchsorted(ends, trace.end_index[c].astype(np.int64), side="left")
    out[ask] = hi > lo
    return out


#: a tube ends on a box at least this many pixels wide on a full level (a key box, TraceDiff
#: IV-B's key nodes); a match of calls below it (narrower, squeezed, merged into clusters)
#: starts at its nearest key box: at the figure's resolution that is where its calls are
KEY_PX = 6.0
#: a merged tube is at least this many pixels wide per √(matches it carries)
COUNT_PX = 1.5
#: permutation colour scale (IV-D): grey up to PERM_GREY of the group, full red from
#: PERM_FULL, in PERM_BINS materials
PERM_GREY, PERM_FULL, PERM_BINS = 0.05, 0.5, 6
#: a match whose relative start in its group moved by more than this (past the grey bin)
#: gets a tube of its own, in front of the aligned ones
MOVED = PERM_GREY + (PERM_FULL - PERM_GREY) / PERM_BINS
#: the aligned tubes (grey in the permutation mode) are this opaque, the moved ones fully
ALIGNED_ALPHA = 0.55
#: depth (y, in levels) of the moved tubes' centres at most and of their cross-section's half
#: depth at most; the aligned tubes' cross-sections start behind ALIGNED_Y: so no aligned
#: tube passes in front of a moved one anywhere along the curves (MOVED_Y + MOVED_HALF_Y < ALIGNED_Y)
MOVED_Y, MOVED_HALF_Y, ALIGNED_Y = 0.8, 0.3, 1.15


def key_boxes(side: Side, key_px: float = KEY_PX) -> np.ndarray:
    """Bool per shown call: a box of its own (not in a cluster), on a full level (not
    squeezed), at least ``key_px`` pixels wide: where a tube can end."""
    d, fr = side.drawn, side.frame
    key = np.zeros(side.sel.idx.size, np.bool_)
    wpx = (d.end - d.start) * fr.scale_t * fr.foreshorten / fr.px[d.lane]
    ok = side.clusters.single & (d.level_height >= 0.99) & (wpx >= key_px)
    key[d.local[ok]] = True
    return key


def tube_ends(side: Side, calls: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Per call of a side's trace: the shown call (local index) of its nearest key box, itself
    included (-1 when it is not shown or has none)."""
    sel = side.sel
    up, _, _, _ = key_tree(sel.parent, key)
    anchor = np.where(key, np.arange(sel.idx.size), up)
    loc = side.local_of(calls)
    return np.where(loc >= 0, anchor[np.maximum(loc, 0)], -1)


def merge_tubes(end_a, end_b, moved, sim) -> tuple:
    """Matches with the same key boxes at both ends (and both moved or both not) become one
    tube: ``(first match of each tube, tube of each match, number of tubes)``; the first
    match of a tube is its most similar one."""
    key = np.stack([end_a, end_b, moved.astype(np.int64)])
    order = np.lexsort((-sim, key[2], key[1], key[0]))
    ks = key[:, order]
    new = np.r_[True, np.any(ks[:, 1:] != ks[:, :-1], axis=0)]
    tube_sorted = np.cumsum(new) - 1
    tube = np.empty(order.size, np.int64)
    tube[order] = tube_sorted
    return order[new], tube, int(new.sum())


def _member_extent(side: Side, calls, tube, n_tubes, anchor_local):
    """World x range of the calls each tube carries on one side, inside its key box."""
    tr, sel, fr = side.source, side.sel, side.frame
    xs = (np.maximum(tr.start[calls], sel.t0) - sel.t0) * fr.scale_t
    xe = (np.minimum(tr.end[calls], sel.t1) - sel.t0) * fr.scale_t
    x0 = np.full(n_tubes, np.inf)
    x1 = np.full(n_tubes, -np.inf)
    np.minimum.at(x0, tube, xs)
    np.maximum.at(x1, tube, xe)
    box = sel.original(sel.idx[anchor_local])
    bx0 = (np.maximum(tr.start[box], sel.t0) - sel.t0) * fr.scale_t
    bx1 = (np.minimum(tr.end[box], sel.t1) - sel.t0) * fr.scale_t
    x0, x1 = np.clip(x0, bx0, bx1), np.clip(x1, bx0, bx1)
    return x0, x1, bx0, bx1


def _inner_edge(side: Side, anchor_local) -> np.ndarray:
    """World z of the face of each key box that faces the band."""
    d = side.drawn
    drawn_of_local = np.full(side.sel.idx.size, -1, np.int64)
    drawn_of_local[d.local] = np.arange(d.local.size)
    k = drawn_of_local[anchor_local]
    lo = d.bottom[k] + (1 - BOX_FILL) / 2 * d.height[k]
    hi = d.bottom[k] + (1 + BOX_FILL) / 2 * d.height[k]
    rel = np.clip((d.level_bottom[k] + 0.5 * d.level_height[k]) / side.lane_levels, 0.0, 1.0)
    return (lo if side.sign > 0 else hi), rel


def tube_stage(cmp, sa: Side, sb: Side, params: CompareParams, h: float, band: float):
    """The tubes of the visible matches (see module doc); returns (TubeLayer or None, info).

    Every kept match (each call's best ``tube_partners``) starts at the nearest key box of
    its call in A and ends at that of its call in B (`key_boxes`, `tube_ends`); matches
    with the same two key boxes become one tube (`merge_tubes`), the aligned ones apart
    from the moved ones.  A tube's ends span the calls it carries inside their key boxes,
    at least `COUNT_PX`·√n pixels wide for n matches (so its width says how many it
    carries), at most ``max_tube_px``.  Depth (TraceDiff IV-C): coarse matches behind fine
    ones; the moved tubes in front of every aligned one, the aligned ones translucent
    (`ALIGNED_ALPHA`), so a dense aligned bundle does not hide what moved.
    """
    pairs = cmp.pairs
    empty = (None, {"n_tubes": 0, "n_pairs_shown": 0})
    if pairs.size == 0:
        return empty
    group, root_a, root_b = phase_groups(cmp)
    key_a, key_b = key_boxes(sa), key_boxes(sb)
    end_a = tube_ends(sa, pairs["a"].astype(np.int64), key_a)
    end_b = tube_ends(sb, pairs["b"].astype(np.int64), key_b)
    ok = (end_a >= 0) & (end_b >= 0) & best_partners(pairs, params.tube_partners)
    if not ok.any():
        return empty
    pk = np.flatnonzero(ok)
    perm = np.abs(pairs["rel_a"][pk] - pairs["rel_b"][pk])
    moved = perm > MOVED
    first, tube_of, m = merge_tubes(end_a[pk], end_b[pk], moved, pairs["sim"][pk])
    p = pk[first]  # the match speaking for each tube (its most similar)
    n_merged = np.bincount(tube_of, minlength=m)
    mean_perm = np.bincount(tube_of, weights=perm, minlength=m) / np.maximum(n_merged, 1)
    ea, eb = end_a[pk][first], end_b[pk][first]
    xa0, xa1, ba0, ba1 = _member_extent(sa, pairs["a"][pk].astype(np.int64), tube_of, m, ea)
    xb0, xb1, bb0, bb1 = _member_extent(sb, pairs["b"][pk].astype(np.int64), tube_of, m, eb)
    za, rel_depth_a = _inner_edge(sa, ea)
    zb, rel_depth_b = _inner_edge(sb, eb)
    px = float(sa.frame.px[0])
    w_cap = params.max_tube_px * px if params.max_tube_px > 0 else np.inf
    w_count = COUNT_PX * np.sqrt(n_merged) * px
    wa = np.minimum(np.maximum(xa1 - xa0, np.minimum(w_count, ba1 - ba0)), w_cap)
    wb = np.minimum(np.maximum(xb1 - xb0, np.minimum(w_count, bb1 - bb0)), w_cap)
    wa, wb = np.maximum(wa, px / sa.frame.foreshorten), np.maximum(wb, px / sb.frame.foreshorten)
    ca_x = np.clip(0.5 * (xa0 + xa1), ba0 + 0.5 * np.minimum(wa, ba1 - ba0), ba1 - 0.5 * np.minimum(wa, ba1 - ba0))
    cb_x = np.clip(0.5 * (xb0 + xb1), bb0 + 0.5 * np.minimum(wb, bb1 - bb0), bb1 - 0.5 * np.minimum(wb, bb1 - bb0))
    a_calls = sa.sel.original(sa.sel.idx[ea]).astype(np.int64)
    b_calls = sb.sel.original(sb.sel.idx[eb]).astype(np.int64)
    t_moved = moved[first]
    # declutter: wide aligned tubes whose correspondence finer tubes already show
    keep = np.ones(m, np.bool_)
    if params.declutter_px > 0 and m:
        wide = (np.minimum(xa1 - xa0, xb1 - xb0) > params.declutter_px * px) & ~t_moved
        covered = wide & _finer_tube_inside(cmp.a, a_calls, wide) & _finer_tube_inside(cmp.b, b_calls, wide)
        if covered.any() and not covered.all():
            keep &= ~covered
    # bound: the moved tubes first, then the widest
    if keep.sum() > params.max_tubes:
        cand = np.flatnonzero(keep)
        rank = np.lexsort((-np.minimum(wa, wb)[cand], ~t_moved[cand]))
        keep[:] = False
        keep[cand[rank[:params.max_tubes]]] = True
    sel_t = np.flatnonzero(keep)
    (p, n_merged, mean_perm, ea, eb, wa, wb, ca_x, cb_x, za, zb, rel_depth_a, rel_depth_b, a_calls, b_calls,
     t_moved) = (v[sel_t] for v in (p, n_merged, mean_perm, ea, eb, wa, wb, ca_x, cb_x, za, zb, rel_depth_a,
                                    rel_depth_b, a_calls, b_calls, t_moved))
    m = p.size
    # depth into the picture: coarse behind fine (IV-C); moved tubes in front of aligned ones
    y_a = np.where(t_moved, 0.5 * h + 0.6 * h * (1.0 - rel_depth_a), 1.3 * h + 1.4 * h * (1.0 - rel_depth_a))
    y_b = np.where(t_moved, 0.5 * h + 0.6 * h * (1.0 - rel_depth_b), 1.3 * h + 1.4 * h * (1.0 - rel_depth_b))
    y_back = 2.7 * h
    ea3 = np.stack([ca_x, y_a, za], 1)
    eb3 = np.stack([cb_x, y_b, zb], 1)
    ctrl_a = _control_tree(sa, key_a, ea, band, h, y_back, +1.0)
    ctrl_b = _control_tree(sb, key_b, eb, band, h, y_back, -1.0)
    g = group[p]
    gra = _control_node_of_call(sa, ctrl_a, root_a[g])
    grb = _control_node_of_call(sb, ctrl_b, root_b[g])
    curves = bundled_curves(ctrl_a["end_node"], ctrl_b["end_node"], gra, grb, ctrl_a["kparent"], ctrl_b["kparent"],
                            ctrl_a["x"], ctrl_a["y"], ctrl_a["z"], ctrl_b["x"], ctrl_b["y"], ctrl_b["z"], ea3, eb3,
                            float(params.beta), int(params.samples))
    # the moved tubes keep their place in front along the whole curve, the aligned ones behind
    # them (their depth half-width is at most min(max(wa, wb) / 2, 0.45 h): `tube_half_widths`' φ ≤ 1)
    behind = ALIGNED_Y * h + np.minimum(0.5 * np.maximum(wa, wb), 0.45 * h)
    curves[:, :, 1] = np.where(t_moved[:, None], np.minimum(curves[:, :, 1], MOVED_Y * h),
                               np.maximum(curves[:, :, 1], behind[:, None]))
    t = arclength_parameter(curves)
    half_x = tube_half_widths(t, wa, wb, float(params.lam))
    half_y = np.minimum(half_x, np.where(t_moved, MOVED_HALF_Y, 0.45)[:, None] * h)
    # colours (the pair speaking for the tube; the permutation of all it carries)
    dur_a = np.maximum(cmp.a.end[pairs["a"][p]] - cmp.a.start[pairs["a"][p]], 1e-9)
    dur_b = np.maximum(cmp.b.end[pairs["b"][p]] - cmp.b.start[pairs["b"][p]], 1e-9)
    ratio = dur_b / dur_a
    width_px = 2.0 * half_x.max(axis=1) / max(px, 1e-12)
    bins, mats = _tube_colour_bins(pairs["sim"][p], pairs["rel_a"][p], pairs["rel_b"][p], ratio, cmp.tau, width_px,
                                   perm=mean_perm)
    brushed = brushed_groups(cmp, group, root_a, root_b, params.brush_a, params.brush_b)
    if brushed is not None:  # IV-E: the other groups' tubes in grey
        grey = len(mats)
        mats.append(("TV3D_tube_brushed_out", oklch_rgb(0.86, 0.0, 0.0), 0.5))
        for mode in bins:
            bins[mode] = np.where(brushed[g], bins[mode], grey)
    mat_idx = bins[params.color_by].astype(np.int32)
    rgb = np.array([mt[1] for mt in mats])
    col = np.ones((m, 4), np.float32)
    col[:, :3] = rgb[mat_idx]
    col[:, 3] = np.array([mt[2] for mt in mats])[mat_idx]
    attrs = {"match_index": p.astype(np.int32), "call_a": a_calls.astype(np.int32),
             "call_b": b_calls.astype(np.int32), "similarity": pairs["sim"][p].astype(np.float32),
             "dt": pairs["dt"][p].astype(np.float32), "ratio": ratio.astype(np.float32),
             "group": g.astype(np.int32), "merged_pairs": n_merged.astype(np.int32),
             "moved": t_moved.astype(np.int32)}
    for mode, b in bins.items():
        attrs[f"bin_{mode.replace('-', '_')}"] = b.astype(np.int32)
    layer = TubeLayer("tubes", curves.astype(np.float32), half_x.astype(np.float32), half_y.astype(np.float32),
                      col, mat_idx, [mt[0] for mt in mats], attrs,
                      sides=tube_sides_by_width(half_x, px, int(params.tube_sides)),
                      face_colors=False,  # one material per colour bin
                      ring_tolerance=RING_TOLERANCE_PX * px)
    info = {"n_tubes": int(m), "n_pairs_shown": int(ok.sum()), "tube_materials": mats,
            "n_groups": int(np.unique(g).size), "n_moved_tubes": int(t_moved.sum()),
            "n_pairs_in_tubes": int(n_merged.sum())}
    return layer, info


#: (widest tube in pixels below, sides): a tube under 2 px is a triangle, under 10 px a
#: diamond, under 24 px a hexagon; wider ones get ``tube_sides`` (smooth shading hides the
#: facets of thin tubes, and 10^4 thin tubes are most of a large comparison's vertices).
TUBE_SIDES_BY_PX = ((2.0, 3), (10.0, 4), (24.0, 6))
#: a tube's ring is left out where the tube without it moves by at most this many pixels
#: (`kernels.tubes.ring_keep`, an upper bound: the curve keeps its samples, the mesh its
#: detail on screen).  On the json.tool pair at 1080p, 1 px leaves out 42 % of the rings
#: and changes 0.05 % of the pixels by more than 0.1 (0.001 % by more than 0.3).
RING_TOLERANCE_PX = 1.0


def tube_sides_by_width(half_x, world_per_px: float, most: int) -> np.ndarray:
    """int32 sides per tube from its widest cross-section in pixels (`TUBE_SIDES_BY_PX`),
    never more than ``most``."""
    width_px = 2.0 * half_x.max(axis=1) / max(world_per_px, 1e-12) if half_x.size else np.zeros(0)
    sides = np.full(width_px.shape, most, np.int32)
    for below, n in TUBE_SIDES_BY_PX[::-1]:
        sides[width_px < below] = min(n, most)
    return sides


def best_partners(pairs, k: int) -> np.ndarray:
    """Mask of the pairs that are among the ``k`` best of their call of A or of their call of
    B (similarity first, then the smaller |Δt|): the comparison's own top-k rule, with ``k``
    no larger than the comparison's."""
    from ..kernels.topk import top_k_per_key

    keep = np.zeros(pairs.size, np.bool_)
    if pairs.size == 0:
        return keep
    sim, dt = np.ascontiguousarray(pairs["sim"], np.float64), np.ascontiguousarray(pairs["dt"], np.float64)
    for side in ("a", "b"):
        call = np.ascontiguousarray(pairs[side], np.int64)
        keep |= top_k_per_key(call, sim, dt, int(k), int(call.max()) + 1)
    return keep


def brushed_groups(cmp, group, root_a, root_b, brush_a=None, brush_b=None):
    """Groups whose root lies in the stack of the brushed call (its ancestors or itself) or
    below it (IV-E: "matches contained in groups rooted in that stack"); None: no brush."""
    if brush_a is None and brush_b is None:
        return None
    keep = np.zeros(root_a.size, np.bool_)
    for tr, roots, call in ((cmp.a, root_a, brush_a), (cmp.b, root_b, brush_b)):
        if call is None:
            continue
        if not 0 <= call < len(tr):
            raise ValueError(f"brush: call {call} outside 0..{len(tr) - 1}")
        anc = np.zeros(len(tr), np.bool_)
        c = int(call)
        while c >= 0:  # the stack of the brushed call
            anc[c] = True
            c = int(tr.parent[c])
        inside = (roots >= call) & (roots < tr.end_index[call])  # rooted below it
        keep |= anc[roots] | inside
    return keep


def resolve_calls(cmp, params: CompareParams) -> CompareParams:
    """The calls ``brush_a``, ``brush_b`` and ``align_a`` name (an index, or a function name:
    its longest call) as indices of the comparison's runs, and B's focus window set by
    ``align_a`` (`align_window_b`); a copy, ValueError naming the parameter."""
    import dataclasses

    changes = {}
    for name, side in (("brush_a", "a"), ("brush_b", "b"), ("align_a", "a")):
        what = getattr(params, name)
        if what is not None:
            try:
                changes[name] = cmp.find_call(side, what)
            except ValueError as e:
                raise ValueError(f"{name}: {e}") from None
    if changes.get("align_a") is not None:
        changes["window_b"] = align_window_b(cmp, changes.pop("align_a"))
        changes["align_a"] = None  # done: B's window is set
    return dataclasses.replace(params, **changes) if changes else params


def align_window_b(cmp, call_a: int, width_b: float | None = None) -> tuple:
    """TraceDiff IV-E's "align": a focus window of B (µs) that puts the matches of a call of A
    in view: centred on the earliest and latest starts of its partners (kept pairs of the
    groups rooted in its stack), ``width_b`` wide (default: as wide as they need, plus 10 %)."""
    pairs = cmp.pairs
    group, root_a, root_b = phase_groups(cmp)
    groups = brushed_groups(cmp, group, root_a, root_b, brush_a=int(call_a))
    sel = groups[group] if groups is not None else np.zeros(pairs.size, np.bool_)
    if not sel.any():
        raise ValueError(f"align: call {call_a} of A has no matches in B")
    b = pairs["b"][sel].astype(np.int64)
    t0, t1 = float(cmp.b.start[b].min()), float(cmp.b.end[b].max())
    mid, need = 0.5 * (t0 + t1), (t1 - t0) * 1.1
    w = max(float(width_b) if width_b else need, 1e-3)
    # never before the trace's time origin (a focus window is µs from the trace start): the
    # matches stay in view, the window is cut on the left instead of padded into nothing
    origin = min(0.0, float(cmp.b.start.min())) if len(cmp.b) else 0.0
    return (max(mid - w / 2, origin), mid + w / 2)


def _control_tree(side: Side, key, end_local, band, h, y_back, sign) -> dict:
    """Control points of one side (TraceDiff IV-B): key nodes are the key boxes (`key_boxes`);
    their x is clamped to their matched descendants' range; they sit in the side's half of
    the band, the group roots near the mid-line and deeper calls towards the band's edge,
    so every curve runs monotonously from A to B.  Tube ends are key boxes, so each hangs
    from itself (`kernels.bundle.attach_leaves`)."""
    sel, d, fr = side.sel, side.drawn, side.frame
    n = sel.idx.size
    x = np.zeros(n)
    dl = d.local
    x[dl] = (0.5 * (d.start + d.end) - sel.t0) * fr.scale_t
    matched = np.zeros(n, np.bool_)
    matched[end_local] = True
    cx, _, _ = clamp_to_matched_descendants(sel.parent, x, key, matched)
    level = np.zeros(n)
    level[dl] = d.level_bottom + 0.5 * d.level_height
    rel = np.clip(level / side.lane_levels, 0.0, 1.0)
    cz = sign * (0.06 + 0.94 * rel) * 0.5 * band
    cy = y_back * (1.0 - rel)
    up, kparent, ptr, child = key_tree(sel.parent, key)
    node = attach_leaves(end_local, up, key, ptr, child, cx, cz, x[end_local], cz[end_local])
    return {"x": cx, "y": cy, "z": cz, "kparent": kparent, "up": up, "key": key, "end_node": node}


def _control_node_of_call(side: Side, ctrl: dict, calls) -> np.ndarray:
    """The control node standing for a group root call: itself when it is a key node, else
    its nearest key ancestor (-1 when it is not shown)."""
    loc = side.local_of(calls)
    ok = loc >= 0
    out = np.full(loc.size, -1, np.int64)
    lk = np.maximum(loc, 0)
    out[ok] = np.where(ctrl["key"][lk[ok]], lk[ok], ctrl["up"][lk[ok]])
    return out


# -------------------------------------------------------------------- overview, repetitions
def overview_layer(name, overview, edges, params, base_z, height, direction):
    """Stacked bars of aligned / earlier / later similarity per bin (TraceDiff IV-A), over
    the whole trace, ``height`` tall at the busiest bin, outwards (``direction``) from ``base_z``."""
    L = params.time_length
    total = overview.sum(1)
    peak = float(total.max()) if total.size else 0.0
    if peak <= 0:
        return None
    nb = overview.shape[0]
    x_scale = L / max(float(edges[-1] - edges[0]), 1e-9)
    pos, sc, mat, col = [], [], [], []
    w = (edges[1:] - edges[:-1]) * x_scale * 0.86
    xc = ((edges[:-1] + edges[1:]) / 2 - edges[0]) * x_scale
    acc = np.zeros(nb)
    for k in range(3):
        hgt = overview[:, k] / peak * height
        sel = hgt > 0
        z0 = base_z + direction * acc
        zc = z0 + direction * hgt / 2
        for i in np.flatnonzero(sel):  # bins: a few hundred at most
            pos.append((xc[i], 0.05 * height, zc[i]))
            sc.append((w[i], 0.1 * height, hgt[i]))
            mat.append(k)
            col.append(tuple(OVERVIEW_RGB[k]) + (1.0,))
        acc += hgt
    n = len(pos)
    return InstanceLayer(name, np.array(pos, np.float32).reshape(n, 3), np.array(sc, np.float32).reshape(n, 3),
                         np.array(col, np.float32).reshape(n, 4), np.array(mat, np.int32),
                         ["TV3D_ov_aligned", "TV3D_ov_earlier", "TV3D_ov_later"],
                         {"call_index": np.full(n, -1, np.int32)})


def focus_layer(name, edges, window, params, z, thickness):
    """TraceDiff IV-A: the overview bins the focus window covers, marked by a dark strip of
    ``thickness`` at height ``z`` under them (snapped to whole bins); None when the focus is
    the whole run."""
    t0, t1 = float(window[0]), float(window[1])
    lo, hi = float(edges[0]), float(edges[-1])
    if hi <= lo or (t0 <= lo and t1 >= hi):
        return None
    b0 = max(int(np.searchsorted(edges, t0, side="right")) - 1, 0)
    b1 = min(int(np.searchsorted(edges, t1, side="left")), edges.size - 1)
    if b1 <= b0:
        b1 = b0 + 1
    x_scale = params.time_length / (hi - lo)
    x0, x1 = (float(edges[b0]) - lo) * x_scale, (float(edges[b1]) - lo) * x_scale
    return InstanceLayer(name, np.array([[(x0 + x1) / 2, 0.05 * thickness, z]], np.float32),
                         np.array([[x1 - x0, 0.1 * thickness, thickness]], np.float32),
                         np.array([tuple(FOCUS_RGB) + (1.0,)], np.float32), np.zeros(1, np.int32),
                         ["TV3D_ov_focus"], {"call_index": np.full(1, -1, np.int32)})


def repetition_layer(name, reps, side: Side, max_outlines=2000):
    """Red outlines around runs of repeated identical sibling subtrees (Sec. III, IV-B)."""
    if reps.size == 0:
        return None
    tr, sel, d, fr = side.source, side.sel, side.drawn, side.frame
    local = np.full(len(tr), -1, np.int64)
    local[sel.original(sel.idx)] = np.arange(sel.idx.size)  # shown calls only: a hidden first call has no frame
    drawn_of_local = np.full(sel.idx.size, -1, np.int64)
    drawn_of_local[d.local] = np.arange(d.local.size)
    pos, sc = [], []
    thick = 1.5 * float(fr.px[0])
    children: dict = {}  # parent → its children in order (each parent walked once: linear)
    for r in reps[:max_outlines]:  # bounded
        first = int(r["start"])
        par = int(tr.parent[first])
        group_key = par if par >= 0 else -2 - int(tr.thread[first])  # roots: per thread
        kids = children.get(group_key)
        if kids is None:
            lo = par + 1 if par >= 0 else int(np.searchsorted(tr.thread, tr.thread[first]))
            hi = int(tr.end_index[par]) if par >= 0 else int(np.searchsorted(tr.thread, tr.thread[first], "right"))
            ks, c = [], lo
            while c < hi:
                ks.append(c)
                c = int(tr.end_index[c])
            kids = children[group_key] = np.asarray(ks, np.int64)
        at = int(np.searchsorted(kids, first))
        last = int(kids[min(at + int(r["period"]) * int(r["count"]) - 1, kids.size - 1)])
        k = drawn_of_local[local[first]] if local[first] >= 0 else -1
        if k < 0:
            continue
        t0 = max(float(tr.start[first]), sel.t0)
        t1 = min(float(tr.end[last]), sel.t1)
        if t1 <= t0:
            continue
        x0, x1 = (t0 - sel.t0) * fr.scale_t, (t1 - sel.t0) * fr.scale_t
        if (x1 - x0) < 4 * fr.px[0]:
            continue
        z0, z1 = d.bottom[k], d.bottom[k] + d.height[k]
        for (px, pz, sx, sz) in (((x0 + x1) / 2, z0, x1 - x0, thick), ((x0 + x1) / 2, z1, x1 - x0, thick),
                                 (x0, (z0 + z1) / 2, thick, z1 - z0), (x1, (z0 + z1) / 2, thick, z1 - z0)):
            pos.append((px, -0.01 * fr.h, pz))
            sc.append((sx, 0.02 * fr.h, sz))
    n = len(pos)
    if n == 0:
        return None
    return InstanceLayer(name, np.array(pos, np.float32), np.array(sc, np.float32),
                         np.tile(np.array([tuple(REPETITION_RGB) + (1.0,)], np.float32), (n, 1)),
                         np.zeros(n, np.int32), ["TV3D_repetition"], {"call_index": np.full(n, -1, np.int32)})


# ---------------------------------------------------------------------------- the layout
def _trace_name(tr) -> str:
    src = str(tr.meta.get("source") or tr.meta.get("subset_of") or "trace")
    name = os.path.basename(src)
    for ext in (".gz", ".json", ".npz", ".tv3d", ".json"):
        if name.lower().endswith(ext):
            name = name[: -len(ext)]
    return name


def compare_layout(cmp, params: CompareParams | None = None) -> SceneSpec:
    """The comparison scene of a `tracevis3d.comparison.Comparison` (see module doc)."""
    from ..analysis.comparison import Comparison

    if not isinstance(cmp, Comparison):
        raise TypeError(f"compare_layout needs a Comparison, got {type(cmp).__name__}")
    params = resolve_calls(cmp, (params or CompareParams()).validate())
    res = params.resolution
    H = res[1]
    L = float(params.time_length)
    ip = params.side_params("a")
    tpx = text_px(ip)
    matched_a, matched_b = matched_calls(cmp)
    budgets = side_budgets(cmp, params, tpx)
    sa = build_side("a", cmp.a, params, matched_a, tpx, budgets[0])
    sb = build_side("b", cmp.b, params, matched_b, tpx, budgets[1])
    name_a, name_b = _trace_name(cmp.a), _trace_name(cmp.b)

    # HUD: title and legend (the group count is the one in view, known after the tube stage:
    # the title is written with a placeholder width and filled in below)
    share_a = 100.0 * float(matched_a.mean()) if matched_a.size else 0.0
    share_b = 100.0 * float(matched_b.mean()) if matched_b.size else 0.0
    title_of = (lambda info: params.title if params.title is not None else (
        f"{name_a} vs {name_b} · τ {cmp.tau:g} · calls with a match: {share_a:.0f} % of A, {share_b:.0f} % of B · "
        f"{info.get('n_tubes', 0):,} tubes carry {info.get('n_pairs_in_tubes', 0):,} matches"))
    title = title_of({})
    rows = [("calls", -1, "heading")]
    rows += [(it.name, it.slot, "swatch") for it in sa.colouring.legend]
    mode_title = {"permutation": "tubes: order changed (red) or kept (grey)",
                  "trace-a": "tubes: position in the group, seen from A", "trace-b": "tubes: position in the group, seen from B",
                  "similarity": "tubes: similarity (opaque = strong)", "ratio": "tubes: slower in B (red), faster (blue)"}
    rows.append((mode_title[params.color_by], -1, "heading"))
    rows.append(("overview: matches per time bin; grey aligned, red earlier, green later in the other run", -1, "note"))
    if params.show_overview and (params.window_a is not None or params.window_b is not None):
        rows.append(("dark strip under the overview: the bins in the focus window", -1, "note"))
    if cmp.repetitions_a.size or cmp.repetitions_b.size:
        rows.append(("red frames: repeated calls", -1, "note"))
    plan = plan_hud(res, tpx, title, rows, params.show_title, params.show_legend)
    x0r, y0r, x1r, y1r = plan.rect

    # frame: A over the band over B, overview strips outside; the level height fills the rectangle
    to_cam = view_direction(params.azimuth, params.elevation)
    ov_h = OVERVIEW_LEVELS if params.show_overview else 0.0  # overview height in levels
    gap = OVERVIEW_GAP
    total_levels = sa.lane_levels + sb.lane_levels + params.band + 2 * (ov_h + gap)
    aspect = (x1r - x0r) / max(y1r - y0r, 1.0)
    h = L / aspect / total_levels
    side_names = [cut_end(f"{tag}: {name}" + (f" · {side.sel.lane_names[0]}" if side.source.n_threads > 1 else ""), 16.0)
                  for tag, name, side in (("A", name_a, sa), ("B", name_b, sb))]
    names_em = 0.6 + max(text_width(t) for t in side_names)  # the side names left of the icicles
    for _ in range(4):
        D = float(params.lane_depth) * h
        top_a = 0.5 * params.band * h + sa.lane_levels * h
        bot_b = -0.5 * params.band * h - sb.lane_levels * h
        z_hi = top_a + (gap + ov_h) * h
        z_lo = bot_b - (gap + ov_h) * h
        pts = np.array([[x, y, z] for x in (0.0, L) for y in (0.0, D) for z in (z_lo, z_hi)] +
                       [[-names_em * tpx * L / (x1r - x0r), 0.0, z] for z in (top_a, bot_b)])
        cam = fit_camera_rect(pts, to_cam, res, plan.rect, params.orthographic, params.lens_mm)
        from .camera import project

        pr = project(cam, pts, res)
        ratio = ((y1r - y0r) / max(np.ptp(pr[:, 1]), 1e-9)) / ((x1r - x0r) / max(np.ptp(pr[:, 0]), 1e-9))
        h_new = min(h * ratio, 0.16 * H * L / (x1r - x0r))
        if abs(h_new / h - 1) < 0.005:
            break
        h = h_new
    D = float(params.lane_depth) * h
    place_side(sa, h, top_a, +1.0, D)
    place_side(sb, h, bot_b, -1.0, D)
    sa.frame = side_frame(sa, cam, to_cam, res, h, D, L)
    sb.frame = side_frame(sb, cam, to_cam, res, h, D, L)
    band = params.band * h

    # geometry of both icicles (the shared stages)
    layers = []
    placer = LabelPlacer(cam, res, to_cam, tpx, params.max_labels if params.show_labels else 0,
                         params.label_min_px, repeat_gap=0.9 * h)
    for side in (sa, sb):
        side.clusters = cluster_calls(side.drawn, side.frame, params.cluster_px)
        calls = box_layer(side.drawn, side.clusters, side.frame, side.sel.t0, side.colouring,
                          lambda i, tr=side.trace: tr.depth[i], name=f"calls_{side.name}",
                          extra={"side": 0 if side.name == "a" else 1})
        clusters, cluster_x = cluster_layer(side.drawn, side.clusters, side.frame, side.sel.t0, side.colouring,
                                            params.cluster_px, L, name=f"clusters_{side.name}",
                                            extra={"side": 0 if side.name == "a" else 1})
        layers += [calls, clusters]
        icicle_labels(placer, side.drawn, side.clusters, cluster_x, side.fold, side.colouring,
                      function_table(side.trace), side.frame, side.sel.t0, side.sel.t1, BAND_WIDE * h,
                      group_gap_px=0.5 * tpx, grows_down=side.sign > 0,
                      shown_func=side.trace.func[side.sel.idx])

    # tubes
    tubes, tube_info = tube_stage(cmp, sa, sb, params, h, band)
    if tubes is not None:
        layers.append(tubes)
    if params.show_title and params.title is None:
        plan.title = cut_end(title_of(tube_info), (res[0] - 2 * 0.03 * H) / plan.title_px)

    # overview strips and repetitions
    if params.show_overview:
        for side, ov, edges, base, direction in ((sa, cmp.overview_a, cmp.overview_edges_a, top_a + gap * h, 1.0),
                                                 (sb, cmp.overview_b, cmp.overview_edges_b, bot_b - gap * h, -1.0)):
            lay = overview_layer(f"overview_{side.name}", ov, edges, params, base, ov_h * h, direction)
            if lay is not None:
                layers.append(lay)
            lay = focus_layer(f"focus_{side.name}", edges, (side.sel.t0, side.sel.t1), params,
                              base - direction * 0.3 * gap * h, 0.25 * gap * h)
            if lay is not None:
                layers.append(lay)
    for side, reps in ((sa, cmp.repetitions_a), (sb, cmp.repetitions_b)):
        lay = repetition_layer(f"repetitions_{side.name}", reps, side)
        if lay is not None:
            layers.append(lay)

    # side names, title and legend
    size_w = tpx * float(sa.frame.px[0])
    face = np.array([[-0.6 * size_w, 0.0, top_a - 0.5 * h], [-0.6 * size_w, 0.0, bot_b + 0.5 * h]])
    anchor, rot = place_facing_text(face, cam, np.full(2, size_w), to_cam)
    label_sets = [placer.labels(), LabelSet(side_names, anchor.astype(np.float32), np.full(2, size_w, np.float32),
                                            ["TV3D_text_ui"] * 2, np.full(2, 2, np.uint8), ["lane"] * 2,
                                            np.full(2, -1, np.int32), rot.astype(np.float32), ["world"] * 2)]
    swatch_rgb = np.vstack([sa.colouring.slot_rgb])
    hud_labels, legend_layer, hud_dist = hud_layers(plan, cam, res, swatch_rgb, list(sa.colouring.slot_names))
    label_sets.append(hud_labels)
    if legend_layer is not None:
        layers.append(legend_layer)

    # materials
    materials: dict = {}
    for name, rgb in zip(sa.colouring.slot_names, sa.colouring.slot_rgb):
        materials[name] = MaterialSpec(name, tuple(float(c) for c in rgb) + (1.0,))
    for name, rgb in zip(cluster_material_names(sa.colouring), sa.colouring.cluster_rgb):
        materials[name] = MaterialSpec(name, tuple(float(c) for c in rgb) + (1.0,), kind="cluster")
    materials["TV3D_ov_focus"] = MaterialSpec("TV3D_ov_focus", tuple(float(c) for c in FOCUS_RGB) + (1.0,),
                                              cushion=False, from_attribute=False)
    for k, nm in enumerate(("TV3D_ov_aligned", "TV3D_ov_earlier", "TV3D_ov_later")):
        materials[nm] = MaterialSpec(nm, tuple(float(c) for c in OVERVIEW_RGB[k]) + (1.0,), cushion=False,
                                     from_attribute=False)
    materials["TV3D_repetition"] = MaterialSpec("TV3D_repetition", tuple(float(c) for c in REPETITION_RGB) + (1.0,),
                                                kind="text", cushion=False, from_attribute=False)
    for nm, rgb, alpha, *gloss in tube_info.get("tube_materials", []):
        materials[nm] = MaterialSpec(nm, tuple(float(c) for c in rgb) + (float(alpha),), kind="tube",
                                     gloss=float(gloss[0]) if gloss else 0.0, from_attribute=False)
    from .annotate import MATERIAL_TEXT_COLOURS

    for nm, c in (("TV3D_text_dark", TEXT_DARK), ("TV3D_text_light", TEXT_LIGHT), *MATERIAL_TEXT_COLOURS.items()):
        materials[nm] = MaterialSpec(nm, c, kind="text", cushion=False, from_attribute=False)
    sun_dir = -view_direction(params.azimuth - 35.0, 55.0)
    lights = [LightSpec("TV3D_key", "SUN", tuple(sun_dir), 3.0),
              LightSpec("TV3D_fill", "SUN", tuple(-view_direction(params.azimuth + 60.0, 20.0)), 0.8)]
    legend = [LegendEntry(it.name, tuple(float(c) for c in sa.colouring.slot_rgb[it.slot]))
              for it in sa.colouring.legend]
    spec = SceneSpec(
        layers=layers, labels=LabelSet.concat(label_sets), legend=legend, materials=materials, camera=cam,
        lights=lights, resolution=res, background=(1.0, 1.0, 1.0),
        meta={"layout": "compare", "level_height": h, "band": band, "top_a": top_a, "bottom_b": bot_b,
              "world_per_px": float(sa.frame.px[0]), "side_levels": [sa.lane_levels, sb.lane_levels],
              "window_a": [sa.sel.t0, sa.sel.t1], "window_b": [sb.sel.t0, sb.sel.t1],
              "world_per_us_a": sa.frame.scale_t, "world_per_us_b": sb.frame.scale_t,
              "n_calls_a": int(sa.sel.idx.size), "n_calls_b": int(sb.sel.idx.size),
              "n_unmatched_a": int((~matched_a[sa.sel.original(sa.sel.idx)]).sum()),
              "n_unmatched_b": int((~matched_b[sb.sel.original(sb.sel.idx)]).sum()),
              "color_mode": params.color_by, "content_rect": list(plan.rect), "title": plan.title,
              "hud_distance": hud_dist, "text_px": tpx, "params": params.to_dict(),
              **{k: v for k, v in tube_info.items() if k != "tube_materials"},
              "tube_modes": {m: f"bin_{m.replace('-', '_')}" for m in TUBE_COLOR_MODES}},
    )
    return spec.validate()
