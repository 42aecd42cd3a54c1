"""The comparison's tubes (TraceDiff Sec. IV-B..IV-E): key boxes, tube ends and merging,
bundled centre curves along the groups' control trees, widths, colour bins per mode,
brushing and align.  Part of `layout.compare`."""
from __future__ import annotations



import numpy as np

from ..kernels.bundle import attach_leaves, bundled_curves, clamp_to_matched_descendants, key_tree
from ..kernels.tubes import arclength_parameter, tube_half_widths
from .colour import oklch_rgb
from .geometry import BOX_FILL
from ..params.compare import TUBE_COLOR_MODES, CompareParams  # noqa: F401
from .spec import TubeLayer
from .compare_sides import Side, phase_groups


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
    # grey when aligned (translucent), then red from the first moved bin on (a clear light red,
    # not a pinkish grey that a grey bundle behind it swallows), deeper the more it moved
    mats.append(("TV3D_tube_perm0", oklch_rgb(0.80, 0.01, 27.0), ALIGNED_ALPHA))
    for k in range(1, nb):
        u = (k - 1) / max(nb - 2, 1)
        mats.append((f"TV3D_tube_perm{k}", oklch_rgb(0.72 - 0.20 * u, 0.10 + 0.10 * u, 27.0), 1.0))
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
#: on a side with no key box, an icicle's top box this wide can still end a tube (`key_boxes`)
ROOT_KEY_PX = 2.0
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
    squeezed), at least ``key_px`` pixels wide: where a tube can end.  A side with no such
    box (a lane of hundreds of threads' icicles packed side by side: levels squeezed, each
    icicle a few pixels wide) takes its boxes of that width on any level, and each icicle's
    top box from `ROOT_KEY_PX`: the tubes then say which thread's work matches which (pairs
    of 1024 and 4096 synthetic threads had no tube at all)."""
    d, fr = side.drawn, side.frame
    key = np.zeros(side.sel.idx.size, np.bool_)
    if d.local.size == 0:
        return key
    wpx = (d.end - d.start) * fr.scale_t * fr.foreshorten / fr.px[d.lane]
    ok = side.clusters.single & (d.level_height >= 0.99) & (wpx >= key_px)
    if not ok.any():
        top = side.sel.parent[d.local] < 0
        ok = side.clusters.single & ((wpx >= key_px) | (top & (wpx >= ROOT_KEY_PX)))
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
    key_a, key_b = key_boxes(sa), key_boxes(sb)
    end_a = tube_ends(sa, pairs["a"].astype(np.int64), key_a)
    end_b = tube_ends(sb, pairs["b"].astype(np.int64), key_b)
    ok = (end_a >= 0) & (end_b >= 0) & best_partners(pairs, params.tube_partners)
    if not ok.any():
        return empty
    group, root_a, root_b = phase_groups(cmp, ok)  # the phases of the matches in view
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
                            float(params.beta), int(params.tube_samples))
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


def call_indices(cmp, params: CompareParams) -> dict:
    """The calls ``brush_a``, ``brush_b`` and ``align_a`` name (an index, or a function name:
    its longest call) as indices of the comparison's runs: {parameter: index} of those set;
    ValueError naming the parameter."""
    out = {}
    for name, side in (("brush_a", "a"), ("brush_b", "b"), ("align_a", "a")):
        what = getattr(params, name)
        if what is not None:
            try:
                out[name] = cmp.find_call(side, what)
            except ValueError as e:
                raise ValueError(f"{name}: {e}") from None
    return out


def call_options(cmp, params: CompareParams) -> dict:
    """The calls ``brush_a``, ``brush_b`` and ``align_a`` name as indices (`call_indices`) and,
    for ``align_a``, B's focus window on its matches (``window_b``, `align_window_b`):
    {parameter: value} of those set; ValueError naming the parameter.  The command line, the
    panel and the layout resolve these options here."""
    out = call_indices(cmp, params)
    if out.get("align_a") is not None:
        try:
            out["window_b"] = align_window_b(cmp, out["align_a"])
        except ValueError as e:
            raise ValueError(f"align_a: {e}") from None
    return out


def resolve_calls(cmp, params: CompareParams) -> CompareParams:
    """``params`` with its calls as indices and B's focus window set by ``align_a``
    (`call_options`); a copy, ValueError naming the parameter."""
    import dataclasses

    changes = call_options(cmp, params)
    changes.update(side_threads(cmp, params))
    if "window_b" in changes:
        changes["align_a"] = None  # done: B's window is set
    return dataclasses.replace(params, **changes) if changes else params


def side_threads(cmp, params: CompareParams) -> dict:
    """The threads the two sides show where ``params`` leaves them open: A's the thread that
    does its work (`thread_work.working_thread`), B's the one that does the same work
    (`thread_work.corresponding_thread`; a pool's workers swap tasks between runs), not B's own
    busiest thread, which may do something else entirely.  With ``pack_threads``, by
    sections (`select.thread_sections`: a server's request threads), each side then showing
    its thread's whole section in its one lane (`compare_sides.side_fold`)."""
    from .select import resolve_in_order, thread_sections
    from .thread_work import corresponding_thread, working_thread

    out = {}
    sec_a = thread_sections(cmp.a) if params.pack_threads and cmp.a.n_threads > 1 else None
    sec_b = thread_sections(cmp.b) if params.pack_threads and cmp.b.n_threads > 1 else None
    ta = params.thread_a
    if ta is None and cmp.a.n_threads > 1:
        ta = out["thread_a"] = working_thread(cmp.a, sec_a)
    if params.thread_b is None and cmp.b.n_threads > 1:
        try:
            ia = 0 if ta is None else resolve_in_order(cmp.a, [ta])[0]
        except ValueError as e:  # the parameter the user gave, not the lane order's
            raise ValueError(str(e).replace("thread_order:", "thread_a:", 1)) from None
        out["thread_b"] = corresponding_thread(cmp.b, cmp.a, ia, sec_b, sec_a)
    return out


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


