"""The extruded 3D icicle: Trace → SceneSpec (bpy-free), as a pipeline of shared stages.

    select → fold → measure → colour → HUD plan → frame (lanes, camera) →
    boxes + clusters → labels → axes, lane names, title, legend → SceneSpec

Geometry (world units, z up):
- x = time: the shown window maps to ``[0, params.time_length]``;
- z = stack: lanes (threads) are stacked top to bottom in lane order (the main thread on
  top); inside a lane calls grow upwards from its base, one level per call, folded runs
  in thin bands (`layout.fold`); boxes fill 88 % of their slot so levels stay apart;
- y = the extruded measure: every box starts at the front plane y = 0 and reaches back
  ``lane_depth·h·(0.12 + 0.88·m)`` (h the level height, m the measure normalised to
  [0, 1]: constant, inclusive time, self time, or calls of the function).
The camera looks slightly down and from the left; it is fitted so the content fills the
frame's content rectangle exactly (lens shift), next to the title and legend, which are
a heads-up display in camera space.  Calls narrower than ``cluster_px`` pixels are merged
per (lane, level) into lighter cluster boxes (SyncTrace IV-B2).  The cushion profile
(TraceDiff IV-B) is applied by the material, not baked here.
"""
from __future__ import annotations

import math

import numpy as np

from ..model import Trace
from .annotate import (MATERIAL_TEXT_COLOURS, fmt_time, hud_layers, lane_labels, plan_hud, time_axis,
                       trace_title)
from .camera import fit_camera_rect, project, view_direction, world_per_pixel
from .cluster import cluster_subpixel_calls
from .colour import colour_calls, log_norm  # noqa: F401  (log_norm: public helper)
from .fold import BAND_WIDE, fold_levels
from .labels import TEXT_DARK, TEXT_LIGHT, LabelPlacer, text_px
from .naming import function_table
from .params import COLOR_BY, EXTRUDE_MEASURES, IcicleParams  # noqa: F401
from .select import select_calls
from .spec import InstanceLayer, LabelSet, LegendEntry, LightSpec, MaterialSpec, SceneSpec
from .text import name_candidates, text_width

BOX_FILL = 0.88  # a box's height relative to its slot
LANE_GAP_LEVELS = 0.9  # gap between stacked lanes, in levels
MAX_LEVEL_FRAC = 0.16  # a level is at most this fraction of the image height
MARKER_CHARS = 9  # a folded run this many characters wide gets a marker band


def short_name(full: str) -> str:
    """The readable end of a function name (``fib (/a/b.py:3)`` → ``fib``)."""
    from .naming import describe_function

    return describe_function(full)[4]


def fit_label(text: str, width: float, size: float) -> str:
    """``text`` shortened to its informative end to fit ``width`` at text size ``size``."""
    from .text import fit_text

    return fit_text(name_candidates(text), width / size if size > 0 else 0.0)


def _measure(tr: Trace, idx: np.ndarray, which: str) -> np.ndarray:
    if which == "constant":
        return np.ones(idx.size)
    if which == "inclusive":
        return tr.end[idx] - tr.start[idx]
    if which == "self":
        return np.maximum(tr.self_time[idx], 0.0)
    if which == "calls":
        f = tr.func[idx]
        return np.bincount(tr.func, minlength=tr.n_functions)[f].astype(np.float64)
    raise ValueError(which)


def _per_lane_max(values, lane, n_lanes) -> np.ndarray:
    """Max of ``values`` per lane; lanes are contiguous runs of ``lane``."""
    out = np.zeros(n_lanes, np.float64)
    if values.size == 0:
        return out
    starts = np.flatnonzero(np.r_[True, lane[1:] != lane[:-1]])
    out[lane[starts]] = np.maximum.reduceat(values, starts)
    return out


def _legend_rows(colouring, params, has_clusters, n_folded, ext_label) -> list:
    rows = [(f"colour: {colouring.title}", -1, "heading")]
    rows += [(it.name, it.slot, "swatch") for it in colouring.legend]
    m = len(colouring.slot_rgb)
    if has_clusters:
        rows.append(("lighter: calls under a pixel, merged", m, "swatch"))
    if n_folded:
        rows.append(("thin bands: folded levels (wrappers, imports)", -1, "note"))
    if params.fold == "auto":
        rows.append(("low bars: calls too narrow for a name", -1, "note"))
    if ext_label:
        rows.append((ext_label, -1, "note"))
    return rows


def icicle_layout(trace: Trace, params: IcicleParams | None = None) -> SceneSpec:
    """Turn ``trace`` into the extruded icicle SceneSpec (see module docstring)."""
    if not isinstance(trace, Trace):
        raise TypeError(f"icicle_layout needs a Trace, got {type(trace).__name__}")
    params = (params or IcicleParams()).validate()
    res = params.resolution
    W, H = res
    L = float(params.time_length)

    # --- select
    sel = select_calls(trace, params)
    tr, idx, t0, t1 = sel.trace, sel.idx, sel.t0, sel.t1
    n_lanes = sel.lane_threads.size
    lane = sel.lane
    start, end = tr.start[idx], tr.end[idx]
    s_cl, e_cl = np.maximum(start, t0), np.minimum(end, t1)
    tpx = text_px(params)

    # --- fold (widths estimated on a content rectangle of ~80 % of the width)
    est_us_per_px = (t1 - t0) / (0.8 * W)
    est_px = (e_cl - s_cl) / est_us_per_px
    fold = fold_levels(tr, idx, sel.parent, lane, n_lanes, params.fold, est_px, MARKER_CHARS * 0.5 * tpx, tpx,
                       est_us_per_px)

    # --- measure: extrusion
    mv = _measure(tr, idx, params.extrude_measure)
    mmax = float(mv.max()) if mv.size else 0.0
    ext_unit = 0.12 + 0.88 * (mv / mmax if mmax > 0 else np.zeros_like(mv))
    ext_label = None
    if params.extrude_measure != "constant":
        what = {"inclusive": "inclusive time", "self": "self time", "calls": "calls of the function"}[
            params.extrude_measure]
        most = fmt_time(mmax) if params.extrude_measure != "calls" else f"{int(mmax):,}"
        ext_label = f"depth into the picture: {what} (deepest {most})"

    # --- colour
    view_area = (e_cl - s_cl) * fold.height * fold.drawn
    colouring = colour_calls(tr, idx, params, view_area, lambda m: _measure(tr, idx, m), fmt_time)

    # from here on only the drawn calls: unfolded calls and the slabs of folded runs
    dr = np.flatnonzero(fold.drawn)
    idx, lane, s_cl, e_cl = idx[dr], lane[dr], s_cl[dr], e_cl[dr]
    f_bottom, f_height, f_run_levels = fold.bottom[dr], fold.height[dr], fold.run_levels[dr]
    f_folded = fold.folded[dr]
    call_id = sel.original(idx)  # what picking and the panel report: indices in the loaded trace
    rep_count_all, rep_end_all, rep_head_all = fold.rep_count, fold.rep_end, fold.rep_head
    local_of_shown = np.full(fold.drawn.size, -1, np.int64)
    local_of_shown[dr] = np.arange(dr.size)
    slot = colouring.slot[dr]
    ext_unit = ext_unit[dr]

    # --- HUD plan: title row, legend column → content rectangle
    title = trace_title(trace, sel, params)
    n_folded = int((fold.folded & ~fold.drawn).sum())
    rows = _legend_rows(colouring, params, params.cluster_px > 0, n_folded, ext_label)
    plan = plan_hud(res, tpx, title, rows, params.show_title, params.show_legend)
    x0r, y0r, x1r, y1r = plan.rect

    # --- frame: level height h and camera so the content fills the rectangle
    to_cam = view_direction(params.azimuth, params.elevation)
    lane_levels = np.maximum(fold.lane_levels, 1.0)
    lane_ext = _per_lane_max(ext_unit, lane, n_lanes)
    name_em = max(text_width(s) for s in sel.lane_names) if params.show_axes else 0.0
    px_w = L / max(x1r - x0r, 1.0)  # world per pixel, refined below
    h = (y1r - y0r) * px_w / (lane_levels.sum() + LANE_GAP_LEVELS * (n_lanes - 1) + 2.0)
    cam = None
    for _ in range(6):
        h = min(h, MAX_LEVEL_FRAC * H * px_w)
        geo = _lane_geometry(lane_levels, h, params)
        pts = _content_points(geo, L, lane_ext, params, h, tpx * px_w, name_em)
        cam = fit_camera_rect(pts, to_cam, res, plan.rect, params.orthographic, params.lens_mm)
        pr = project(cam, pts, res)
        bw, bh = np.ptp(pr[:, 0]), np.ptp(pr[:, 1])
        px_w = float(np.median(world_per_pixel(cam, geo["centres"], res)))
        ratio = ((y1r - y0r) / max(bh, 1e-9)) / ((x1r - x0r) / max(bw, 1e-9))
        h_new = min(h * ratio, MAX_LEVEL_FRAC * H * px_w)
        if abs(h_new / h - 1.0) < 0.005:
            break
        h = h_new
    geo = _lane_geometry(lane_levels, h, params)
    pts = _content_points(geo, L, lane_ext, params, h, tpx * px_w, name_em)
    cam = fit_camera_rect(pts, to_cam, res, plan.rect, params.orthographic, params.lens_mm)
    D = float(params.lane_depth) * h
    ext = D * ext_unit
    z_base = geo["z_base"]
    px = world_per_pixel(cam, geo["centres"], res)  # world per pixel at each lane
    scale_t = L / (t1 - t0)
    right = np.cross(-to_cam, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    foreshorten = max(abs(float(right[0])), 1e-3)
    us_per_px = px / foreshorten / scale_t

    # --- clusters of sub-pixel calls, per (lane, level)
    bottom_w = z_base[lane] + f_bottom * h
    slot_h = f_height * h
    func = tr.func[idx]
    # the drawn level of a call: its height above its lane base (folding moves calls)
    _, level_id = np.unique(np.round(f_bottom * 4096.0).astype(np.int64), return_inverse=True)
    if params.cluster_px > 0:
        min_w = (params.cluster_px * us_per_px).astype(np.float64)
        cl = cluster_subpixel_calls(s_cl, e_cl, level_id.astype(np.int32), lane, min_w, min_w, func)
        cluster_of, c_lane, c_depth, c_start, c_end, c_count, c_rep, c_uniform = cl
    else:
        cluster_of = np.full(idx.size, -1, np.int32)
        c_lane = c_depth = c_count = c_rep = np.zeros(0, np.int32)
        c_uniform = np.zeros(0, np.bool_)
        c_start = c_end = np.zeros(0)
    single = cluster_of < 0

    # --- boxes
    nb = int(single.sum())
    xs, xe = (s_cl[single] - t0) * scale_t, (e_cl[single] - t0) * scale_t
    bz, bh_ = bottom_w[single], slot_h[single]
    es = ext[single]
    pos = np.empty((nb, 3), np.float32)
    pos[:, 0] = (xs + xe) / 2
    pos[:, 1] = es / 2
    pos[:, 2] = bz + bh_ / 2
    sc = np.empty((nb, 3), np.float32)
    sc[:, 0] = np.maximum(xe - xs, 1e-6)
    sc[:, 1] = es
    sc[:, 2] = BOX_FILL * bh_
    col = np.ones((nb, 4), np.float32)
    col[:, :3] = colouring.slot_rgb[slot[single]]
    calls_layer = InstanceLayer(
        "calls", pos, sc, col, slot[single].astype(np.int32), list(colouring.slot_names),
        {"call_index": call_id[single], "depth": tr.depth[idx][single].astype(np.int32),
         "lane": lane[single].astype(np.int32), "folded_levels": f_run_levels[single].astype(np.int32)})

    # --- cluster boxes: the colour of their longest call, lightened (SyncTrace IV-B2)
    nc = c_start.size
    cxs, cxe = (c_start - t0) * scale_t, (c_end - t0) * scale_t
    cw = np.maximum(cxe - cxs, params.cluster_px * px[c_lane] / foreshorten) if nc else np.zeros(0)
    cext = np.zeros(nc)
    if nc:
        np.maximum.at(cext, cluster_of[~single], ext[~single])
    cpos = np.empty((nc, 3), np.float32)
    csc = np.empty((nc, 3), np.float32)
    if nc:
        cpos[:, 0] = np.minimum(np.maximum((cxs + cxe) / 2, cw / 2), L - cw / 2)
        cpos[:, 1] = cext / 2
        cpos[:, 2] = bottom_w[c_rep] + slot_h[c_rep] / 2
        csc[:, 0] = cw
        csc[:, 1] = cext
        csc[:, 2] = BOX_FILL * slot_h[c_rep]
    c_dom, c_dom_share = _dominant_member(cluster_of, func, e_cl - s_cl, nc)
    c_slot = slot[c_dom] if nc else np.zeros(0, np.int32)
    ccol = np.ones((nc, 4), np.float32)
    if nc:
        ccol[:, :3] = colouring.cluster_rgb[c_slot]
    cl_mats = [f"{m}_cluster" for m in colouring.slot_names]
    clusters_layer = InstanceLayer(
        "clusters", cpos, csc, ccol, c_slot.astype(np.int32), cl_mats,
        {"call_index": call_id[c_rep] if nc else np.zeros(0, np.int32),
         "depth": c_depth.astype(np.int32), "lane": c_lane.astype(np.int32),
         "call_count": c_count.astype(np.int32)})

    # --- labels: named boxes, fold markers, runs of repeated calls, clusters (in that priority)
    ft = function_table(tr)
    placer = LabelPlacer(cam, res, to_cam, tpx, params.max_labels if params.show_labels else 0,
                         params.label_min_px)
    cand_cache: dict = {}

    def cands(f):
        c = cand_cache.get(f)
        if c is None:
            c = cand_cache[f] = name_candidates(ft.display[f])
        return c

    z_lo = bottom_w + (1 - BOX_FILL) / 2 * slot_h  # face of every drawn call
    z_hi = bottom_w + (1 + BOX_FILL) / 2 * slot_h
    func_single = func[single]
    slab_single = f_folded[single]
    placer.add(lambda k: [] if slab_single[k] else cands(int(func_single[k])), xs, xe, z_lo[single],
               z_hi[single], col[:, :3], call_id[single], "call", px[lane[single]])
    starts = np.flatnonzero((f_run_levels >= 2) & (f_height >= BAND_WIDE))
    if starts.size:
        placer.add(lambda k: [f"{int(f_run_levels[starts[k]])} folded levels",
                              f"{int(f_run_levels[starts[k]])} levels", f"⋮{int(f_run_levels[starts[k]])}"],
                   (s_cl[starts] - t0) * scale_t, (e_cl[starts] - t0) * scale_t, bottom_w[starts],
                   bottom_w[starts] + BAND_WIDE * h, colouring.slot_rgb[slot[starts]], call_id[starts], "fold",
                   px[lane[starts]])
    heads_shown = np.flatnonzero((rep_count_all >= 2) & fold.drawn & ~fold.folded)
    heads = local_of_shown[heads_shown]
    if heads.size:
        r_end = np.minimum(rep_end_all[heads_shown], t1)
        r_cnt = rep_count_all[heads_shown]

        def run_texts(k):
            d = ft.display[int(func[heads[k]])]
            return counted_candidates(int(r_cnt[k]), d, "")

        placer.add(run_texts, (s_cl[heads] - t0) * scale_t, (r_end - t0) * scale_t, z_lo[heads], z_hi[heads],
                   colouring.slot_rgb[slot[heads]], call_id[heads], "run", px[lane[heads]])
    # rows of siblings one function dominates ("120× Body.paragraph & more")
    n_ch, r_start, r_end_, r_dom, r_dom_t, r_dom_c, r_tot = fold.rows
    rows_shown = np.flatnonzero(fold.row_named & fold.drawn & ~fold.folded)
    rows_l = local_of_shown[rows_shown]
    if rows_l.size:
        r_share = r_dom_t[rows_shown] / np.maximum(r_tot[rows_shown], 1e-300)
        ch_bottom = bottom_w[rows_l] + slot_h[rows_l]

        def row_texts(k):
            d = ft.display[int(r_dom[rows_shown[k]])]
            more = "" if r_share[k] >= 0.99 else " & more"
            c = int(r_dom_c[rows_shown[k]])
            return counted_candidates(c, d, more)

        placer.add(row_texts, (np.maximum(r_start[rows_shown], t0) - t0) * scale_t,
                   (np.minimum(r_end_[rows_shown], t1) - t0) * scale_t, ch_bottom + (1 - BOX_FILL) / 2 * h,
                   ch_bottom + (1 + BOX_FILL) / 2 * h, colouring.slot_rgb[slot[rows_l]], call_id[rows_l], "row",
                   px[lane[rows_l]])
    # groups of adjacent boxes and clusters on one level, across parents, one function dominating
    bi = np.flatnonzero(single)
    dur_d = e_cl - s_cl
    if nc:
        c_time = np.bincount(cluster_of[~single], weights=dur_d[~single], minlength=nc)
    it_start = np.concatenate([s_cl[bi], c_start])
    it_end = np.concatenate([e_cl[bi], c_end])
    it_level = np.concatenate([level_id[bi], level_id[c_rep] if nc else np.zeros(0, np.int64)]).astype(np.int32)
    it_lane = np.concatenate([lane[bi], c_lane]).astype(np.int32)
    it_member = np.concatenate([bi, c_dom if nc else np.zeros(0, np.int64)]).astype(np.int64)
    it_calls = np.concatenate([np.ones(bi.size), c_count.astype(np.float64)])
    it_time = np.concatenate([dur_d[bi], c_time if nc else np.zeros(0)])
    if it_start.size:
        order = np.lexsort((it_start, it_lane))
        it_start, it_end, it_level, it_lane = it_start[order], it_end[order], it_level[order], it_lane[order]
        it_member, it_calls, it_time = it_member[order], it_calls[order], it_time[order]
        it_key = func[it_member]
        g_of, _, _, g_start, g_end, g_items, g_rep, g_uniform = cluster_subpixel_calls(
            it_start, it_end, it_level, it_lane, np.full(n_lanes, np.inf), us_per_px.astype(np.float64), it_key)
        multi = np.flatnonzero(g_items >= 2)
        if multi.size:
            g_dom, g_share, g_dom_calls = _dominant_member(g_of, it_key, it_time, g_items.size, it_calls)
            multi = multi[g_share[multi] >= 0.5]
            gi = it_member[g_rep[multi]]  # a drawn call on the group's level
            gd = it_member[g_dom[multi]]  # a drawn call of the dominant function

            def group_texts(k):
                more = "" if g_uniform[multi[k]] else " & more"
                return counted_candidates(int(g_dom_calls[multi[k]]), ft.display[int(func[gd[k]])], more)

            placer.add(group_texts, (g_start[multi] - t0) * scale_t, (g_end[multi] - t0) * scale_t, z_lo[gi],
                       z_hi[gi], colouring.slot_rgb[slot[gd]], call_id[gd], "group", px[lane[gi]])
    if nc:
        def cl_texts(k):
            n_calls = int(c_count[k])
            if c_dom_share[k] >= 0.6:  # one function holds most of the cluster's time
                d = ft.display[int(func[c_dom[k]])]
                mark = "×" if c_uniform[k] else "× mostly"
                return counted_candidates(n_calls, d, "" if c_uniform[k] else " & more")
            return [f"{n_calls:,} calls", f"{n_calls:,}"]

        zc0 = bottom_w[c_rep] + (1 - BOX_FILL) / 2 * slot_h[c_rep]
        placer.add(cl_texts, cpos[:, 0] - cw / 2, cpos[:, 0] + cw / 2, zc0, zc0 + BOX_FILL * slot_h[c_rep],
                   ccol[:, :3], call_id[c_rep], "cluster", px[c_lane])
    label_sets = [placer.labels()]

    # --- axes, lane names, title, legend
    layers = [calls_layer, clusters_layer]
    size_w = tpx * float(np.median(px))
    if params.show_axes:
        axis_labels, axis_marks, _ = time_axis(t0, t1, scale_t, -0.25 * h, cam, res, to_cam, size_w,
                                               float(np.median(px)), L)
        label_sets.append(axis_labels)
        layers.append(axis_marks)
        label_sets.append(lane_labels(sel.lane_names, z_base, z_base + lane_levels * h, cam, res, to_cam,
                                      size_w, 0.6 * size_w))
    swatch_rgb = np.vstack([colouring.slot_rgb, colouring.cluster_rgb[:1]])
    swatch_mats = list(colouring.slot_names) + [cl_mats[0]]
    hud_labels, legend_layer, hud_dist = hud_layers(plan, cam, res, swatch_rgb, swatch_mats)
    label_sets.append(hud_labels)
    if legend_layer is not None:
        layers.append(legend_layer)
    labels = LabelSet.concat(label_sets)

    # --- materials, lights
    materials: dict = {}
    for name, rgb in zip(colouring.slot_names, colouring.slot_rgb):
        materials[name] = MaterialSpec(name, tuple(float(c) for c in rgb) + (1.0,))
    for name, rgb in zip(cl_mats, colouring.cluster_rgb):
        materials[name] = MaterialSpec(name, tuple(float(c) for c in rgb) + (1.0,), kind="cluster")
    materials["TV3D_axis"] = MaterialSpec("TV3D_axis", MATERIAL_TEXT_COLOURS["TV3D_text_muted"], kind="text",
                                          cushion=False, from_attribute=False)
    for name, c in (("TV3D_text_dark", TEXT_DARK), ("TV3D_text_light", TEXT_LIGHT),
                    *MATERIAL_TEXT_COLOURS.items()):
        materials[name] = MaterialSpec(name, c, kind="text", cushion=False, from_attribute=False)
    sun_dir = -view_direction(params.azimuth - 35.0, 55.0)
    lights = [LightSpec("TV3D_key", "SUN", tuple(sun_dir), 3.0),
              LightSpec("TV3D_fill", "SUN", tuple(-view_direction(params.azimuth + 60.0, 20.0)), 0.8)]
    legend = [LegendEntry(it.name, tuple(float(c) for c in colouring.slot_rgb[it.slot])) for it in colouring.legend]
    spec = SceneSpec(
        layers=layers, labels=labels, legend=legend, materials=materials, camera=cam, lights=lights,
        resolution=res, background=(1.0, 1.0, 1.0),
        meta={
            "layout": "icicle", "t0": t0, "t1": t1, "world_per_us": scale_t, "level_height": h,
            "box_height": BOX_FILL * h, "lane_z": z_base.tolist(), "lane_levels": lane_levels.tolist(),
            "lane_threads": sel.lane_threads.tolist(), "lane_names": sel.lane_names,
            "world_per_pixel": px.tolist(), "us_per_pixel": us_per_px.tolist(),
            "n_calls": int(idx.size), "n_boxes": int(nb), "n_clusters": int(nc),
            "n_clustered_calls": int((~single).sum()), "legend_title": colouring.title,
            "color_mode": colouring.mode, "fold_rule": fold.rule, "n_folded": n_folded,
            "content_rect": list(plan.rect), "title": plan.title, "hud_distance": hud_dist,
            "text_px": tpx, "params": params.to_dict(), "levels": int(tr.depth[idx].max()) + 1,
            "folded_levels": float(lane_levels.max()),
        },
    )
    return spec.validate()


def counted_candidates(count: int, display: str, more: str) -> list:
    """Texts for a group of calls one function dominates, most informative first:
    ``120× docutils.nodes.Text.astext & more`` … ``120× …astext``, then without the count,
    ending with the bare name (which `fit_text` may shorten further)."""
    names = name_candidates(display)
    out = [f"{count:,}× {x}{more}" for x in names]
    out += [f"{count:,}× {names[-1]}"] if more else []
    out += [f"{x}{more}" for x in names[1:]]
    return out + [names[-1]]


def _dominant_member(cluster_of, func, dur, n_clusters, calls=None) -> tuple:
    """Per cluster: a member of the function holding most of its time, that share, and
    (with ``calls``, each member's number of calls) how many calls that function has."""
    if n_clusters == 0:
        return (np.zeros(0, np.int64), np.zeros(0)) + ((np.zeros(0),) if calls is not None else ())
    m = np.flatnonzero(cluster_of >= 0)
    key = cluster_of[m].astype(np.int64) * (int(func.max()) + 1) + func[m]
    uk, inv = np.unique(key, return_inverse=True)
    tot = np.bincount(inv, weights=dur[m])
    kc = uk // (int(func.max()) + 1)
    order = np.lexsort((-tot, kc))  # per cluster, heaviest function first
    first = order[np.r_[True, kc[order][1:] != kc[order][:-1]]]
    member = np.empty(uk.size, np.int64)
    member[inv] = m  # one member per (cluster, function)
    cl_tot = np.bincount(kc, weights=tot, minlength=n_clusters)
    dom = np.zeros(n_clusters, np.int64)
    share = np.zeros(n_clusters)
    dom[kc[first]] = member[first]
    share[kc[first]] = tot[first] / np.maximum(cl_tot[kc[first]], 1e-300)
    if calls is None:
        return dom, share
    n_calls = np.zeros(n_clusters)
    n_calls[kc[first]] = np.bincount(inv, weights=np.asarray(calls, np.float64)[m])[first]
    return dom, share, n_calls


def _lane_geometry(lane_levels, h, params) -> dict:
    """Base z of each lane (lane 0 on top), stacked with a gap, and their centres."""
    n = lane_levels.size
    gap = (LANE_GAP_LEVELS * h) if params.lane_gap is None else float(params.lane_gap)
    heights = lane_levels * h
    z_base = np.zeros(n)
    for j in range(n - 2, -1, -1):  # one iteration per lane
        z_base[j] = z_base[j + 1] + heights[j + 1] + gap
    centres = np.stack([np.full(n, params.time_length / 2), np.zeros(n), z_base + heights / 2], 1)
    return {"z_base": z_base, "heights": heights, "centres": centres}


def _content_points(geo, L, lane_ext, params, h, text_world, name_em) -> np.ndarray:
    """Points whose projection must fit the content rectangle: lane boxes, names, axis."""
    D = float(params.lane_depth) * h
    pts = []
    for zb, hh, e in zip(geo["z_base"], geo["heights"], lane_ext):
        for x in (0.0, L):
            for y in (0.0, D * max(e, 0.12)):
                for z in (zb, zb + hh):
                    pts.append((x, y, z))
    if params.show_axes:
        zb = float(geo["z_base"].min())
        pts.append((0.0, 0.0, zb - 0.25 * h - 1.6 * text_world))
        pts.append((L + 1.5 * text_world, 0.0, zb - 0.25 * h - 1.6 * text_world))
        for zb_, hh in zip(geo["z_base"], geo["heights"]):
            pts.append((-0.6 * text_world - name_em * text_world, 0.0, zb_))
    return np.asarray(pts, np.float64)
