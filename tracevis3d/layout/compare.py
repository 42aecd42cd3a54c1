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
- one tube per visible match (Sec. IV-B/C): kept pairs whose ends are not drawn on their own
  (folded away, or merged into a sub-pixel cluster) move to the box that draws them, and
  pairs between the same two boxes become one tube (the pair with the highest similarity
  speaks for it), at most ``max_tubes`` (the widest first).  Tubes follow the group's
  control trees (`kernels.bundle`), start at the inner edge of their call in A and end at
  the inner edge of their call in B, are as wide as the two calls at their ends and thin
  towards the middle (`kernels.tubes`), and sit deeper in the picture the coarser the match
  (interpolated stack depths, IV-C), so fine matches are in front;
- groups (Sec. III): when one root match holds almost every match (``builtins.exec`` ↔
  ``builtins.exec``), the groups are formed one level below the common chain of the two
  roots instead (`phase_groups`), so the bundles separate the program's phases.
Tube colour modes (IV-D and beyond) are material switches: every tube carries its bin for
each mode (attributes ``bin_<mode>``) and the materials of all modes; ``color_by`` picks the
one shown.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field, fields

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
from .params import IcicleParams, checked_window
from .select import select_calls
from .spec import InstanceLayer, LabelSet, LegendEntry, LightSpec, MaterialSpec, SceneSpec, TubeLayer
from .text import cut_end, text_width

TUBE_COLOR_MODES = ("permutation", "trace-a", "trace-b", "similarity", "ratio")
MATCHED_RGB = oklch_rgb(0.83, 0.025, 250.0)
UNMATCHED_RGB = oklch_rgb(0.70, 0.17, 55.0)
OVERVIEW_RGB = (oklch_rgb(0.70, 0.0, 0.0), oklch_rgb(0.58, 0.17, 27.0), oklch_rgb(0.62, 0.15, 145.0))
REPETITION_RGB = oklch_rgb(0.55, 0.20, 27.0)
FOCUS_RGB = oklch_rgb(0.38, 0.03, 250.0)  # the focus window's bins under the overview
PHASE_SHARE = 0.9  # a group holding this share of the matches is split into phases
MARKER_CHARS = 9


@dataclass
class CompareParams:
    """Parameters of `compare_layout`; JSON-able through `to_dict`/`from_dict`.

    ``color_by``: what a tube's colour says: ``permutation`` (|relative start in A −
    relative start in B| within the group, red when permuted, grey when aligned; IV-D),
    ``trace-a`` / ``trace-b`` (rainbow of the relative start within the group, from A's or
    B's side; IV-D), ``similarity`` (light and translucent for weak matches, dark and
    opaque for strong ones), ``ratio`` (duration in B ÷ duration in A on a diverging map:
    red slower in B, blue faster).  ``lam``: the tube's waist λ (TraceDiff Eq. 5);
    ``band``: the bundling band's thickness in level heights; ``beta``: bundling strength
    (0 straight, 1 fully bundled); ``window_a`` / ``window_b``: focus windows (µs);
    ``thread_a`` / ``thread_b``: the thread shown on each side (default: the main thread).
    ``tube_partners``: a tube for each call's best ``tube_partners`` matches, both ways (the
    comparison keeps ``top_k``; with equally similar calls, e.g. the steps of a training
    loop, the second partner only crosses the picture).  ``brush_a`` / ``brush_b``: a call
    whose stack's groups keep their colour while every other tube turns grey (IV-E).
    """

    color_by: str = "permutation"
    lam: float = 0.2
    band: float = 8.0
    beta: float = 0.85
    window_a: tuple | None = None
    window_b: tuple | None = None
    thread_a: object = None
    thread_b: object = None
    resolution: tuple = (1920, 1080)
    fold: str = "auto"
    cluster_px: float = 1.0
    label_px: float = 16.0
    label_min_px: float = 0.0
    max_labels: int = 300
    max_tubes: int = 20000
    #: a tube wider than this (pixels) at both ends is left out when finer tubes start inside
    #: both of its calls: they show the same correspondence without covering the view
    #: (0: draw every tube, as the paper does)
    declutter_px: float = 96.0
    #: widest tube end (pixels; 0: as wide as its call, as the paper draws it)
    max_tube_px: float = 40.0
    tube_partners: int = 1  # tubes for each call's best partners, both ways (≤ the comparison's top_k)
    brush_a: int | None = None  # a call of A: colour only the groups rooted in its stack (IV-E)
    brush_b: int | None = None  # the same from B
    samples: int = 50  # per tube (TraceDiff IV-C: 50–100)
    tube_sides: int = 8
    show_labels: bool = True
    show_legend: bool = True
    show_title: bool = True
    show_overview: bool = True
    title: str | None = None
    orthographic: bool = False
    time_length: float = 20.0
    lane_depth: float = 4.0
    azimuth: float = -5.0
    elevation: float = 15.0
    lens_mm: float = 100.0

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("resolution", "window_a", "window_b"):
            d[k] = None if d[k] is None else list(d[k])
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, d: dict) -> "CompareParams":
        if not isinstance(d, dict):
            raise ValueError(f"compare parameters must be a dict, got {type(d).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown compare parameter(s) {unknown}; known: {sorted(known)}")
        kw = dict(d)
        for k in ("resolution", "window_a", "window_b"):
            if kw.get(k) is not None:
                kw[k] = tuple(kw[k])
        return cls(**kw).validate()

    def validate(self) -> "CompareParams":
        if self.color_by not in TUBE_COLOR_MODES:
            raise ValueError(f"color_by must be one of {TUBE_COLOR_MODES}, got {self.color_by!r}")
        for name, lo, hi in (("lam", 0.0, 1.0), ("beta", 0.0, 1.0), ("band", 0.5, 100.0)):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and lo <= v <= hi):
                raise ValueError(f"{name} must be within {lo}..{hi}, got {v!r}")
        if not (isinstance(self.declutter_px, (int, float)) and math.isfinite(self.declutter_px)
                and self.declutter_px >= 0):
            raise ValueError(f"declutter_px must be a number of pixels >= 0, got {self.declutter_px!r}")
        if not (isinstance(self.max_tube_px, (int, float)) and math.isfinite(self.max_tube_px)
                and self.max_tube_px >= 0):
            raise ValueError(f"max_tube_px must be a number of pixels >= 0, got {self.max_tube_px!r}")
        if not (isinstance(self.max_tubes, (int, np.integer)) and 1 <= self.max_tubes <= 500_000):
            raise ValueError(f"max_tubes must be within 1..500000, got {self.max_tubes!r}")
        if not (isinstance(self.tube_partners, (int, np.integer)) and 1 <= self.tube_partners <= 64):
            raise ValueError(f"tube_partners must be within 1..64, got {self.tube_partners!r}")
        for name in ("brush_a", "brush_b"):
            v = getattr(self, name)
            if v is not None and not (isinstance(v, (int, np.integer)) and v >= 0):
                raise ValueError(f"{name} must be a call index >= 0 or None, got {v!r}")
        if not (isinstance(self.samples, (int, np.integer)) and 4 <= self.samples <= 200):
            raise ValueError(f"samples must be within 4..200, got {self.samples!r}")
        for name in ("window_a", "window_b"):
            setattr(self, name, checked_window(getattr(self, name), name))
        self.side_params("a")  # validates the shared fields through IcicleParams
        return self

    def side_params(self, side: str) -> IcicleParams:
        """The icicle stages' parameters for one side."""
        thread = self.thread_a if side == "a" else self.thread_b
        return IcicleParams(
            threads=None if thread is None else [thread], time_window=self.window_a if side == "a" else self.window_b,
            fold=self.fold, resolution=self.resolution, cluster_px=self.cluster_px, label_px=self.label_px,
            label_min_px=self.label_min_px, max_labels=self.max_labels, show_labels=self.show_labels,
            time_length=self.time_length, lane_depth=self.lane_depth, azimuth=self.azimuth,
            elevation=self.elevation, lens_mm=self.lens_mm, orthographic=self.orthographic).validate()


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
    roots_b = []
    for k, ca in enumerate(phases):  # one entry per phase (tens): the B child holding most partners
        bs = child_of_b[pairs["b"][moved & (p_a == k)]]
        bs = bs[bs >= 0]
        roots_b.append(int(np.bincount(bs).argmax()) if bs.size else top_b)
    ra2 = np.concatenate([ra, np.asarray(phases, np.int64)])
    rb2 = np.concatenate([rb, np.asarray(roots_b, np.int64)])
    # the pairs of the root chain itself stay in the big group, rooted at the branching calls
    ra2[big], rb2[big] = top_a, top_b
    return new_g, ra2, rb2


# ------------------------------------------------------------------------------- sides
@dataclass
class Side:
    """One icicle of the comparison: the shared stages' results and where they are drawn."""

    name: str  # "a" | "b"
    trace: object
    sel: object
    fold: object
    colouring: Colouring
    drawn: object
    lane_levels: float
    frame: Frame = None
    clusters: object = None
    top: float = 0.0  # the outer edge (A: top, B: bottom) in world z
    sign: float = 1.0  # +1: grows down from its top (A), -1: grows up from its bottom (B)


def match_colouring(sel, fold, matched, infra) -> Colouring:
    """Icicle colours of a comparison: matched / no match / runtime.  (Waits keep the
    matched/unmatched colour here: red belongs to the tubes' permutation scale.)"""
    idx = sel.idx
    slot = np.where(matched[idx], 0, 1).astype(np.int32)
    slot[infra[sel.trace.func[idx]] & matched[idx]] = 2
    rgb = np.array([MATCHED_RGB, UNMATCHED_RGB, INFRA_RGB])
    names = ["has a match in the other run", "no match: where the runs differ", "runtime (imports, start-up)"]
    present = np.bincount(slot, minlength=3) > 0
    legend = [LegendItem(names[k], k, 0.0) for k in range(3) if present[k]]
    return Colouring("match", "calls", slot, rgb, [f"TV3D_m{k}" for k in range(3)], legend,
                     palette.lighten(rgb, 0.5), True)


def build_side(name, trace, params: CompareParams, matched, tpx) -> Side:
    """Select, fold and colour one side with the icicle stages."""
    ip = params.side_params(name)
    if ip.threads is None and trace.n_threads > 1:
        from .select import order_threads

        ip.threads = [int(order_threads(trace, np.arange(trace.n_threads, dtype=np.int32), "default")[0])]
    sel = select_calls(trace, ip)
    tr = sel.trace
    if sel.orig is not None:  # hiding is not offered here; keep the indices of the comparison
        raise ValueError("compare_layout does not hide calls")
    W = params.resolution[0]
    est_us_per_px = (sel.t1 - sel.t0) / (0.8 * W)
    width_px = (np.minimum(tr.end[sel.idx], sel.t1) - np.maximum(tr.start[sel.idx], sel.t0)) / est_us_per_px
    fold = fold_levels(tr, sel.idx, sel.parent, sel.lane, 1, params.fold, width_px, MARKER_CHARS * 0.5 * tpx,
                       tpx, est_us_per_px)
    ft = function_table(tr)
    colouring = match_colouring(sel, fold, matched, ft.infra)
    ext = np.maximum(tr.self_time[sel.idx], 0.0)
    ext_unit = 0.12 + 0.88 * (ext / ext.max() if ext.size and ext.max() > 0 else np.zeros_like(ext))
    d = drawn_calls(sel, fold, colouring.slot, ext_unit)
    return Side(name, tr, sel, fold, colouring, d, float(max(fold.lane_levels.max(), 1.0)))


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
def representative(side: Side, calls):
    """Per call of a side's trace: the drawn call (index into the drawn arrays) that shows it
    — itself, the band of its folded run, or -1 when it is not shown — and the cluster it
    is merged into (-1 when drawn as its own box)."""
    sel, fold, d = side.sel, side.fold, side.drawn
    local = np.full(len(side.trace), -1, np.int64)
    local[sel.idx] = np.arange(sel.idx.size)
    loc = local[calls]
    ok = loc >= 0
    loc_rep = loc.copy()
    folded = ok & (fold.run_start[np.maximum(loc, 0)] >= 0)
    loc_rep[folded] = fold.run_start[loc[folded]]
    drawn_of_local = np.full(sel.idx.size, -1, np.int64)
    drawn_of_local[d.local] = np.arange(d.local.size)
    rep = np.where(ok, drawn_of_local[np.maximum(loc_rep, 0)], -1)
    cl = np.where(rep >= 0, side.clusters.cluster_of[np.maximum(rep, 0)], -1)
    return rep, cl


#: in the similarity mode, tubes at least this wide (pixels) show similarity as a specular
#: highlight (opaque, glossier for stronger matches), thinner ones as transparency (IV-D)
SIMILARITY_GLOSS_PX = 16.0


def _tube_colour_bins(sim, rel_a, rel_b, ratio, tau, width_px=None):
    """Bin of every tube in each colour mode, and the materials (name, rgb, alpha, gloss) of
    all modes; ``width_px``: each tube's widest cross-section in pixels (similarity mode)."""
    mats, bins = [], {}
    perm = np.abs(rel_a - rel_b)
    nb = 6
    # grey up to 5 % of the group (the other run's phases shift things a little), full red
    # from half of the group on
    v = np.clip((perm - 0.05) / 0.45, 0.0, 1.0)
    bins["permutation"] = np.minimum((v * nb).astype(np.int64), nb - 1)
    for k in range(nb):  # grey when aligned → red when permuted by half the group or more
        t = k / (nb - 1)
        mats.append((f"TV3D_tube_perm{k}", oklch_rgb(0.80 - 0.28 * t, 0.01 + 0.19 * t, 27.0), 1.0))
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


def tube_stage(cmp, sa: Side, sb: Side, params: CompareParams, h: float, band: float):
    """The tubes of the visible matches (see module doc); returns (TubeLayer or None, info)."""
    pairs = cmp.pairs
    empty = (None, {"n_tubes": 0, "n_pairs_shown": 0})
    if pairs.size == 0:
        return empty
    group, root_a, root_b = phase_groups(cmp)
    rep_a, cl_a = representative(sa, pairs["a"].astype(np.int64))
    rep_b, cl_b = representative(sb, pairs["b"].astype(np.int64))
    ok = (rep_a >= 0) & (rep_b >= 0) & best_partners(pairs, params.tube_partners)
    if not ok.any():
        return empty
    # a tube end is a box (drawn call) or a cluster: one key per end
    n_da = sa.drawn.idx.size
    end_a = np.where(cl_a >= 0, n_da + cl_a, rep_a)[ok]
    n_db = sb.drawn.idx.size
    end_b = np.where(cl_b >= 0, n_db + cl_b, rep_b)[ok]
    pk = np.flatnonzero(ok)
    sim = pairs["sim"][pk]
    key = end_a.astype(np.int64) * (n_db + len(sb.clusters) + 1) + end_b
    order = np.lexsort((-sim, key))  # best pair first within each (end_a, end_b)
    first = order[np.r_[True, key[order][1:] != key[order][:-1]]]
    n_merged = np.bincount(np.searchsorted(key[first], key), minlength=first.size) if first.size else first
    ea_key, eb_key = end_a[first], end_b[first]
    p = pk[first]  # the pair speaking for each tube
    xa0, xa1, za, wa = _end_geometry(sa, ea_key)
    xb0, xb1, zb, wb = _end_geometry(sb, eb_key)
    # declutter: wide tubes whose correspondence finer tubes already show
    if params.declutter_px > 0 and first.size:
        a_calls = pairs["a"][p].astype(np.int64)
        b_calls = pairs["b"][p].astype(np.int64)
        wide = np.minimum(wa, wb) > params.declutter_px * float(sa.frame.px[0])
        covered = wide & _finer_tube_inside(cmp.a, a_calls, wide) & _finer_tube_inside(cmp.b, b_calls, wide)
        if covered.any() and not covered.all():
            keep = ~covered
            ea_key, eb_key, p, n_merged = ea_key[keep], eb_key[keep], p[keep], n_merged[keep]
            xa0, xa1, za, wa, xb0, xb1, zb, wb = (v[keep] for v in (xa0, xa1, za, wa, xb0, xb1, zb, wb))
    # bound: the widest tubes first
    if p.size > params.max_tubes:
        keep = np.argsort(-(np.minimum(wa, wb)), kind="stable")[:params.max_tubes]
        keep.sort()
        ea_key, eb_key, p, n_merged = ea_key[keep], eb_key[keep], p[keep], n_merged[keep]
        xa0, xa1, za, wa, xb0, xb1, zb, wb = (v[keep] for v in (xa0, xa1, za, wa, xb0, xb1, zb, wb))
    m = p.size
    # stack depth in [0, 1] (0 root) → depth into the picture: coarse behind, fine in front
    rel_depth_a = _rel_depth(sa, ea_key)
    rel_depth_b = _rel_depth(sb, eb_key)
    y_back = 1.5 * h
    ya, yb = y_back * (1.0 - rel_depth_a), y_back * (1.0 - rel_depth_b)
    ea = np.stack([0.5 * (xa0 + xa1), ya, za], 1)
    eb = np.stack([0.5 * (xb0 + xb1), yb, zb], 1)
    # control trees (one per side, paths stop at each group's roots)
    ctrl_a = _control_tree(sa, ea_key, band, h, y_back, +1.0)
    ctrl_b = _control_tree(sb, eb_key, band, h, y_back, -1.0)
    g = group[p]
    gra = _control_node_of_call(sa, ctrl_a, root_a[g])
    grb = _control_node_of_call(sb, ctrl_b, root_b[g])
    ca = ctrl_a["end_node"]
    cb = ctrl_b["end_node"]
    curves = bundled_curves(ca, cb, gra, grb, ctrl_a["kparent"], ctrl_b["kparent"], ctrl_a["x"], ctrl_a["y"],
                            ctrl_a["z"], ctrl_b["x"], ctrl_b["y"], ctrl_b["z"], ea, eb, float(params.beta),
                            int(params.samples))
    t = arclength_parameter(curves)
    # a tube's ends are as wide as its calls (the paper), up to `max_tube_px`: wider ends
    # would turn the band into sheets that hide every other tube; the end still sits on
    # the middle of its call
    w_cap = params.max_tube_px * float(sa.frame.px[0]) if params.max_tube_px > 0 else np.inf
    half_x = tube_half_widths(t, np.minimum(wa, w_cap), np.minimum(wb, w_cap), float(params.lam))
    half_y = np.minimum(half_x, 0.45 * h)
    # colours
    a_calls, b_calls = pairs["a"][p].astype(np.int64), pairs["b"][p].astype(np.int64)
    dur_a = np.maximum(cmp.a.end[a_calls] - cmp.a.start[a_calls], 1e-9)
    dur_b = np.maximum(cmp.b.end[b_calls] - cmp.b.start[b_calls], 1e-9)
    ratio = dur_b / dur_a
    width_px = 2.0 * half_x.max(axis=1) / max(float(sa.frame.px[0]), 1e-12)
    bins, mats = _tube_colour_bins(pairs["sim"][p], pairs["rel_a"][p], pairs["rel_b"][p], ratio, cmp.tau, width_px)
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
             "group": g.astype(np.int32), "merged_pairs": n_merged.astype(np.int32)}
    for mode, b in bins.items():
        attrs[f"bin_{mode.replace('-', '_')}"] = b.astype(np.int32)
    layer = TubeLayer("tubes", curves.astype(np.float32), half_x.astype(np.float32), half_y.astype(np.float32),
                      col, mat_idx, [mt[0] for mt in mats], attrs,
                      sides=tube_sides_by_width(half_x, float(sa.frame.px[0]), int(params.tube_sides)),
                      face_colors=False,  # one material per colour bin
                      ring_tolerance=RING_TOLERANCE_PX * float(sa.frame.px[0]))
    info = {"n_tubes": int(m), "n_pairs_shown": int(ok.sum()), "tube_materials": mats,
            "n_groups": int(np.unique(g).size)}
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


def _end_member(side: Side, end_key) -> tuple:
    """(is a cluster, index of the box or cluster, drawn call that gives its level) per tube end
    (ends are drawn boxes, numbered first, then clusters)."""
    n_d = side.drawn.idx.size
    cl = side.clusters
    is_cl = end_key >= n_d
    k = np.where(is_cl, end_key - n_d, end_key)
    if len(cl):
        member = np.where(is_cl, cl.rep[np.clip(k, 0, len(cl) - 1)], k)
    else:
        member = k
    return is_cl, k, member


def _end_geometry(side: Side, end_key):
    """x range, inner-edge z and width of tube ends (boxes, then clusters after n_drawn)."""
    d, cl, fr = side.drawn, side.clusters, side.frame
    n_d = d.idx.size
    t0 = side.sel.t0
    is_cl, k, member = _end_member(side, end_key)
    kb = np.clip(k, 0, n_d - 1)
    if len(cl):
        kc = np.clip(k, 0, len(cl) - 1)
        x0 = np.where(is_cl, (cl.start[kc] - t0) * fr.scale_t, (d.start[kb] - t0) * fr.scale_t)
        x1 = np.where(is_cl, (cl.end[kc] - t0) * fr.scale_t, (d.end[kb] - t0) * fr.scale_t)
    else:
        x0, x1 = (d.start[kb] - t0) * fr.scale_t, (d.end[kb] - t0) * fr.scale_t
    width = np.maximum(x1 - x0, fr.px[0] / fr.foreshorten)  # at least a pixel
    lo = d.bottom[member] + (1 - BOX_FILL) / 2 * d.height[member]
    hi = d.bottom[member] + (1 + BOX_FILL) / 2 * d.height[member]
    z = lo if side.sign > 0 else hi  # the edge that faces the band
    return x0, x1, z, width


def _rel_depth(side: Side, end_key):
    d = side.drawn
    _, _, member = _end_member(side, end_key)
    return np.clip((d.level_bottom[member] + 0.5 * d.level_height[member]) / side.lane_levels, 0.0, 1.0)


def _control_tree(side: Side, end_key, band, h, y_back, sign) -> dict:
    """Control points of one side (TraceDiff IV-B): key nodes are the drawn boxes; their x
    is clamped to their matched descendants' range; they sit in the side's half of the band,
    the group roots near the mid-line and deeper calls towards the band's edge, so every
    curve runs monotonously from A to B.  Tube ends hang from their control node
    (`kernels.bundle.attach_leaves`)."""
    sel, fold, d, cl, fr = side.sel, side.fold, side.drawn, side.clusters, side.frame
    n = sel.idx.size
    x = np.zeros(n)
    key = np.zeros(n, np.bool_)
    single = cl.single
    dl = d.local
    x[dl] = (0.5 * (d.start + d.end) - sel.t0) * fr.scale_t
    key[dl[single]] = True
    is_cl, _, member = _end_member(side, end_key)
    end_local = dl[member]
    matched = np.zeros(n, np.bool_)
    matched[end_local[~is_cl]] = True
    cx, _, _ = clamp_to_matched_descendants(sel.parent, x, key, matched)
    level = np.zeros(n)
    level[dl] = d.level_bottom + 0.5 * d.level_height
    rel = np.clip(level / side.lane_levels, 0.0, 1.0)
    cz = sign * (0.06 + 0.94 * rel) * 0.5 * band
    cy = y_back * (1.0 - rel)
    up, kparent, ptr, child = key_tree(sel.parent, key)
    px = x[end_local]
    pz = cz[end_local]
    node = attach_leaves(end_local, up, key, ptr, child, cx, cz, px, pz)
    return {"x": cx, "y": cy, "z": cz, "kparent": kparent, "up": up, "key": key, "end_node": node}


def _control_node_of_call(side: Side, ctrl: dict, calls) -> np.ndarray:
    """The control node standing for a group root call: itself when it is a key node, else
    its nearest key ancestor (-1 when it is not shown)."""
    local = np.full(len(side.trace), -1, np.int64)
    local[side.sel.idx] = np.arange(side.sel.idx.size)
    loc = local[np.asarray(calls, np.int64)]
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
    tr, sel, d, fr = side.trace, side.sel, side.drawn, side.frame
    local = np.full(len(tr), -1, np.int64)
    local[sel.idx] = np.arange(sel.idx.size)
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
    from ..comparison import Comparison

    if not isinstance(cmp, Comparison):
        raise TypeError(f"compare_layout needs a Comparison, got {type(cmp).__name__}")
    params = (params or CompareParams()).validate()
    res = params.resolution
    H = res[1]
    L = float(params.time_length)
    ip = params.side_params("a")
    tpx = text_px(ip)
    matched_a, matched_b = matched_calls(cmp)
    sa = build_side("a", cmp.a, params, matched_a, tpx)
    sb = build_side("b", cmp.b, params, matched_b, tpx)
    name_a, name_b = _trace_name(cmp.a), _trace_name(cmp.b)

    # HUD: title and legend (the group count is the one in view, known after the tube stage:
    # the title is written with a placeholder width and filled in below)
    title_of = (lambda n_groups: params.title if params.title is not None else (
        f"{name_a} vs {name_b} · τ {cmp.tau:g} · {cmp.n_pairs_total:,} matching call pairs · "
        f"{n_groups:,} group{'' if n_groups == 1 else 's'} in view"))
    title = title_of(0)
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
    ov_h = 2.5 if params.show_overview else 0.0  # overview height in levels
    gap = 0.6
    total_levels = sa.lane_levels + sb.lane_levels + params.band + 2 * (ov_h + gap)
    aspect = (x1r - x0r) / max(y1r - y0r, 1.0)
    h = L / aspect / total_levels
    side_names = [cut_end(f"A: {name_a}", 14.0), cut_end(f"B: {name_b}", 14.0)]
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
                      group_gap_px=0.5 * tpx, grows_down=side.sign > 0)

    # tubes
    tubes, tube_info = tube_stage(cmp, sa, sb, params, h, band)
    if tubes is not None:
        layers.append(tubes)
    if params.show_title and params.title is None:
        plan.title = cut_end(title_of(tube_info.get("n_groups", 0)), (res[0] - 2 * 0.03 * H) / plan.title_px)

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
              "window_a": [sa.sel.t0, sa.sel.t1], "window_b": [sb.sel.t0, sb.sel.t1],
              "world_per_us_a": sa.frame.scale_t, "world_per_us_b": sb.frame.scale_t,
              "n_calls_a": int(sa.sel.idx.size), "n_calls_b": int(sb.sel.idx.size),
              "n_unmatched_a": int((~matched_a[sa.sel.idx]).sum()), "n_unmatched_b": int((~matched_b[sb.sel.idx]).sum()),
              "color_mode": params.color_by, "content_rect": list(plan.rect), "title": plan.title,
              "hud_distance": hud_dist, "text_px": tpx, "params": params.to_dict(),
              **{k: v for k, v in tube_info.items() if k != "tube_materials"},
              "tube_modes": {m: f"bin_{m.replace('-', '_')}" for m in TUBE_COLOR_MODES}},
    )
    return spec.validate()
