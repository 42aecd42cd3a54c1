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

import numpy as np

from ..params.compare import TUBE_COLOR_MODES, CompareParams  # noqa: F401
from .annotate import TWO_COLUMN_FRAC, hud_layers, plan_hud
from .colour import legend_swatch_rows
from .camera import fit_camera_rect, view_direction
from .compare_sides import (  # noqa: F401
    FOCUS_RGB,
    MARKER_CHARS,
    MATCHED_RGB,
    OVERVIEW_GAP,
    OVERVIEW_LEVELS,
    OVERVIEW_RGB,
    PHASE_SHARE,
    REPETITION_RGB,
    UNMATCHED_RGB,
    Side,
    build_side,
    match_colouring,
    matched_calls,
    phase_groups,
    place_side,
    side_budgets,
    side_fold,
    side_frame,
)
from .compare_tubes import (  # noqa: F401
    SIMILARITY_GLOSS_PX,
    align_window_b,
    best_partners,
    brushed_groups,
    call_indices,
    call_options,
    key_boxes,
    merge_tubes,
    resolve_calls,
    tube_ends,
    tube_sides_by_width,
    tube_stage,
)
from .cutaway import compare_cutaway
from .fold import BAND_WIDE
from .geometry import box_layer, cluster_calls, cluster_layer, cluster_material_names
from .labels import TEXT_DARK, TEXT_LIGHT, LabelPlacer, icicle_labels, place_facing_text, text_px
from ..naming import function_table
from .spec import InstanceLayer, LabelSet, LegendEntry, LightSpec, MaterialSpec, SceneSpec
from .text import cut_end, fit_lane_name, text_width
from .xunit import x_unit_of


# -------------------------------------------------------------------- overview, repetitions

#: width of a side's name left of its icicle, in label sizes
SIDE_NAME_EM = 16.0


def pair_titles(a, b) -> tuple:
    """The two runs' names in a comparison's title and lane names: their `Trace.title_name`s,
    each followed by the folder that tells them apart where those are the same
    (``chromium_page (rec-1)`` vs ``chromium_page (rec-2)``: two recordings of one program
    under one file name); unchanged for one file compared with itself or without sources."""
    name_a, name_b = a.title_name, b.title_name
    if name_a != name_b:
        return name_a, name_b
    src_a = str(a.meta.get("source") or "").replace("\\", "/").split("/")[:-1]
    src_b = str(b.meta.get("source") or "").replace("\\", "/").split("/")[:-1]
    while src_a and src_b and src_a[-1] == src_b[-1]:
        src_a, src_b = src_a[:-1], src_b[:-1]
    if not (src_a and src_b and src_a[-1] and src_b[-1]):
        return name_a, name_b
    return f"{name_a} ({src_a[-1]})", f"{name_b} ({src_b[-1]})"


def side_name(tag: str, name: str, thread: str | None, width_em: float = SIDE_NAME_EM) -> str:
    """"A: trace · thread" in ``width_em`` label sizes: the thread's name fitted to the room
    the trace's leaves (`text.fit_lane_name`: its end kept, "ThreadPoolExe…tor-0_3", where
    threads of one program differ), at least 8 label sizes of it, the trace's name cut
    at its end when they do not both fit."""
    head = f"{tag}: {name}"
    if thread is None:
        return cut_end(head, width_em)
    room = width_em - text_width(head + " · ")
    if room >= 8.0:
        return f"{head} · {fit_lane_name(thread, room)}"
    thread = fit_lane_name(thread, 8.0)
    return f"{cut_end(head, width_em - text_width(' · ' + thread))} · {thread}"


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
    name_a, name_b = pair_titles(cmp.a, cmp.b)

    # HUD: title and legend (the group count is the one in view, known after the tube stage:
    # the title is written with a placeholder width and filled in below)
    share_a = 100.0 * float(matched_a.mean()) if matched_a.size else 0.0
    share_b = 100.0 * float(matched_b.mean()) if matched_b.size else 0.0
    # merged stacks (`--merge`, or pprof/collapsed/callgrind files): a "call" is a call path and
    # x a measure, not a clock; the title says so, as the icicle's axis does
    merged = x_unit_of(cmp.a).merged or x_unit_of(cmp.b).merged
    what = "merged stacks (left heavy) · " if merged else ""
    noun = "call paths" if merged else "calls"
    title_of = (lambda info: params.title if params.title is not None else (
        f"{name_a} vs {name_b} · {what}τ {cmp.tau:g} · {noun} with a match: {share_a:.0f} % of A, "
        f"{share_b:.0f} % of B · "
        f"{info.get('n_tubes', 0):,} tubes carry {info.get('n_pairs_in_tubes', 0):,} matches"))
    title = title_of({})
    rows = [("calls", -1, "heading")]
    rows += legend_swatch_rows(sa.colouring.legend)
    # a short heading and a note that wraps in the narrow column (a long heading broke
    # into a heading and an orphan word in the note's grey: '(grey)')
    mode_note = {"permutation": "red: order changed; grey: order kept",
                 "trace-a": "colour: position in the group, seen from A",
                 "trace-b": "colour: position in the group, seen from B",
                 "similarity": "opaque: strong similarity; translucent: weak",
                 "ratio": "red: slower in B; blue: faster in B"}
    if cmp.repetitions_a.size or cmp.repetitions_b.size:
        rows.append(("red frames: repeated calls", -1, "note"))
    rows.append(("tubes", -1, "heading"))
    rows.append((mode_note[params.color_by], -1, "note"))
    if params.show_overview:
        rows.append(("overview", -1, "heading"))
        rows.append(("matches per time bin: grey aligned, red earlier, green later in the other run", -1, "note"))
        theta = float(cmp.params.get("join", {}).get("overview_theta", 1.0))
        if theta > 1.0:
            # past compare's overview budget the bars are a sample's estimate: say so
            rows.append((f"estimated from a weighted sample of 1 in {theta:,.0f} of the matches", -1, "note"))
        if params.window_a is not None or params.window_b is not None:
            rows.append(("dark strip: the bins in the focus window", -1, "note"))
    # the legend in a narrow column (its notes wrap): the comparison is as tall as the frame,
    # so the column stands empty under the legend, and every pixel of its width is the figure's
    plan = plan_hud(res, tpx, title, rows, params.show_title, params.show_legend, max_legend_frac=TWO_COLUMN_FRAC)
    x0r, y0r, x1r, y1r = plan.rect

    # frame: A over the band over B, overview strips outside; the level height fills the rectangle
    to_cam = view_direction(params.azimuth, params.elevation)
    ov_h = OVERVIEW_LEVELS if params.show_overview else 0.0  # overview height in levels
    gap = OVERVIEW_GAP
    total_levels = sa.lane_levels + sb.lane_levels + params.band + 2 * (ov_h + gap)
    aspect = (x1r - x0r) / max(y1r - y0r, 1.0)
    h = L / aspect / total_levels
    # the runs' own names: the title tells a pair of one file name apart (`pair_titles`), "A:" and "B:" do here
    side_names = [side_name(tag, name, side.sel.lane_names[0] if side.source.n_threads > 1 else None)
                  for tag, name, side in (("A", cmp.a.title_name, sa), ("B", cmp.b.title_name, sb))]
    names_em = 0.6 + max(text_width(t) for t in side_names)  # the side names left of the icicles
    from .camera import project, world_per_pixel

    name_wpp = L / (x1r - x0r)  # world per pixel where the side names stand, refined below
    for _ in range(6):
        D = float(params.lane_depth) * h
        top_a = 0.5 * params.band * h + sa.lane_levels * h
        bot_b = -0.5 * params.band * h - sb.lane_levels * h
        z_hi = top_a + (gap + ov_h) * h
        z_lo = bot_b - (gap + ov_h) * h
        pts = np.array([[x, y, z] for x in (0.0, L) for y in (0.0, D) for z in (z_lo, z_hi)] +
                       [[-names_em * tpx * name_wpp, 0.0, z] for z in (top_a, bot_b)])
        cam = fit_camera_rect(pts, to_cam, res, plan.rect, params.orthographic, params.lens_mm)
        pr = project(cam, pts, res)
        ratio = ((y1r - y0r) / max(np.ptp(pr[:, 1]), 1e-9)) / ((x1r - x0r) / max(np.ptp(pr[:, 0]), 1e-9))
        h_new = min(h * ratio, 0.16 * H * L / (x1r - x0r))
        # the names are sized by the world per pixel at A's lane (below), not by the rectangle's
        wpp_new = float(world_per_pixel(cam, np.array([[0.5 * L, 0.0, 0.5 * (top_a + 0.5 * params.band * h)]]),
                                        res)[0])
        if abs(h_new / h - 1) < 0.005 and abs(wpp_new / name_wpp - 1) < 0.005:
            break
        h, name_wpp = h_new, wpp_new
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
        plates = placer.plate_layer(f"label_plates_{side.name}", side.colouring.slot_rgb, side.colouring.slot_names,
                                    {"side": 0 if side.name == "a" else 1})
        if plates is not None:
            layers.append(plates)

    # tubes
    tubes, tube_info = tube_stage(cmp, sa, sb, params, h, band)
    cut = compare_cutaway(params, sa, sb, cam)
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
              "side_lanes": [sa.sel.lane_names[0], sb.sel.lane_names[0]],
              "n_unmatched_a": int((~matched_a[sa.sel.original(sa.sel.idx)]).sum()),
              "n_unmatched_b": int((~matched_b[sb.sel.original(sb.sel.idx)]).sum()),
              "color_mode": params.color_by, "content_rect": list(plan.rect), "title": plan.title,
              "hud_distance": hud_dist, "text_px": tpx, "params": params.to_dict(),
              **{k: v for k, v in tube_info.items() if k != "tube_materials"},
              "tube_modes": {m: f"bin_{m.replace('-', '_')}" for m in TUBE_COLOR_MODES},
              **({"cutaway": cut} if cut is not None else {})},
    )
    return spec.validate()
