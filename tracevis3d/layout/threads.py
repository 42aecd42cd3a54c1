"""The thread view: who waits on whom (SyncTrace IV-B in 3D), Trace → SceneSpec (bpy-free).

    analysis (`Synchronisation`) → select → ring (sectors, levels, fold) → HUD plan → focused
    icicle wall → camera → clusters → ring bars → curves, circles, markers → labels → SceneSpec

- context view: every shown thread is a bended icicle in its sector of a ring lying in the
  ground plane (`layout.ring`); bars are extruded upwards by their share of waiting and I/O;
- correspondence curves inside the ring (`layout.corr_curves`), wait markers on the
  releasing threads, compound curves for clusters;
- main view: the focused thread as the straight extruded icicle (`layout.icicle`, the same
  stages as ``render-icicle``) standing as a wall behind the ring;
- title and legend as a heads-up display (`layout.annotate`).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..model import Trace
from . import palette
from .annotate import MATERIAL_TEXT_COLOURS, fmt_time, hud_layers, plan_hud
from .camera import fit_camera_rect, view_direction, world_per_pixel
from .colour import _hue_ring, colour_calls
from .corr_curves import ANCHOR_INSET, CIRCLE_PX, MARKER_BAND, build_curves, circle_ribbons, object_colour_index
from .labels import TEXT_DARK, TEXT_LIGHT
from .params import IcicleParams
from .ring import BASE_HEIGHT, bar_heights, cluster_bars, make_ring, neighbour_distinct
from .select import select_calls
from .spec import CurveLayer, LabelSet, LegendEntry, LightSpec, MaterialSpec, SceneSpec, SectorLayer
from .threads_params import ThreadsParams
from .threads_wall import focus_wall

LANE_BAND = (1.25, 0.85)  # thread colour band [Z - a, Z - b]: the curves start on it
CURVE_ALPHA, COMPOUND_ALPHA, MARKER_ALPHA, START_ALPHA = 0.55, 0.22, 0.28, 0.9
GREY = palette.srgb_to_linear([0.62, 0.62, 0.62])


def resolve_thread(trace: Trace, t) -> int:
    """A thread index from a name or an index; ValueError naming the threads otherwise."""
    if isinstance(t, (int, np.integer)) and 0 <= int(t) < trace.n_threads:
        return int(t)
    if isinstance(t, str):
        if t in trace.thread_names:
            return trace.thread_names.index(t)
        if t.isdigit() and int(t) < trace.n_threads:
            return int(t)
    raise ValueError(f"no thread {t!r}; threads: {', '.join(trace.thread_names)}")


def shown_threads(trace: Trace, params: ThreadsParams) -> list:
    ts = [resolve_thread(trace, t) for t in params.threads] if params.threads else list(range(trace.n_threads))
    hidden = {resolve_thread(trace, t) for t in params.hide_threads}
    ts = [t for t in dict.fromkeys(ts) if t not in hidden]
    if not ts:
        raise ValueError("no thread left to show (every thread is hidden)")
    return ts


def default_focus(sync, threads: list) -> int:
    """The shown thread that waited longest on others."""
    waited = sync.pair_wait_us.sum(axis=1) if sync.pair_wait_us.size else np.zeros(sync.trace.n_threads)
    return max(threads, key=lambda t: (waited[t], -threads.index(t)))


def lane_colours(n_lanes: int) -> np.ndarray:
    """(n_lanes, 3): categorical thread colours (no wait red), no two ring neighbours alike."""
    m = min(max(n_lanes, 3), 10)
    return _hue_ring(m)[neighbour_distinct(n_lanes, m)]


def _materials(prefix: str, rgb: np.ndarray, alpha: float) -> tuple:
    names = [f"{prefix}{k:02d}" for k in range(len(rgb))]
    mats = {n: MaterialSpec(n, tuple(float(c) for c in col) + (float(alpha),), kind="tube", cushion=False)
            for n, col in zip(names, rgb)}
    return names, mats


def compact_materials(lay):
    """A sector/curve layer whose material list holds only the materials it uses (fewer
    materials to write: 43 threads give ~250 possible ones)."""
    if not isinstance(lay, (SectorLayer, CurveLayer)):
        return lay
    u, inv = np.unique(lay.material_index, return_inverse=True)
    lay.material_index = inv.astype(np.int32).reshape(-1)
    lay.materials = [lay.materials[k] for k in u.tolist()]
    return lay


def ring_bar_colours(tr, sel, params, lane_rgb):
    """(slot per shown call, slot rgb, cluster rgb, legend rows, title) for the ring bars."""
    idx = sel.idx
    if params.color_by == "thread":
        depth = tr.depth[idx]
        slot = (sel.lane * 2 + (depth % 2)).astype(np.int32)
        rgb = np.repeat(lane_rgb, 2, axis=0)
        rgb[1::2] = palette.lighten(lane_rgb, 0.25)
        return slot, rgb, palette.lighten(rgb, 0.5), [], "bars: thread colours"
    col = colour_calls(tr, idx, SimpleNamespace(color_by="kind"), tr.end[idx] - tr.start[idx], None, fmt_time)
    rows = [(it.name, it.slot, "swatch") for it in col.legend]
    return col.slot, col.slot_rgb, col.cluster_rgb, rows, "bars: " + col.title


def sector_rows(ring, lane, depth, ts, te, top, min_angle):
    a0, a1 = ring.angle(lane, ts), ring.angle(lane, te)
    a1 = np.maximum(a1, a0 + min_angle)
    return (np.stack([a0, a1], 1).astype(np.float32),
            np.stack([ring.level_r0[depth], ring.level_r1[depth]], 1).astype(np.float32),
            np.stack([np.zeros_like(top), top], 1).astype(np.float32))


def _rgba(rgb, alpha):
    out = np.ones((len(rgb), 4), np.float32)
    out[:, :3] = rgb
    out[:, 3] = alpha
    return out


def ring_layers(tr, sel, ring, sync, slot, slot_rgb, cluster_rgb, clusters, px, cluster_px):
    """The ring bars (single calls) and the lighter cluster bars as SectorLayers."""
    of, c_lane, c_depth, c_start, c_end, c_count, c_rep, _ = clusters
    idx = sel.idx
    single = of < 0
    depth = tr.depth[idx].astype(np.int64)
    k = tr.kind[idx]
    top = bar_heights(sync.dur_w[idx], sync.dur_o[idx], tr.end[idx] - tr.start[idx], (k == 1) | (k == 3))
    s = np.flatnonzero(single)
    min_angle = 0.6 * px / ring.outer_radius
    ang, rad, hgt = sector_rows(ring, sel.lane[s], depth[s], np.maximum(tr.start[idx[s]], ring.t0),
                                np.minimum(tr.end[idx[s]], ring.t1), top[s], min_angle)
    names, _ = _materials("TV3D_ring_", slot_rgb, 1.0)
    bars = SectorLayer("ring", ang, rad, hgt, _rgba(slot_rgb[slot[s]], 1.0), slot[s].astype(np.int32), names,
                       {"call_index": sel.original(idx[s])})
    cslot = slot[c_rep] if c_rep.size else np.zeros(0, np.int32)
    ang, rad, hgt = sector_rows(ring, c_lane, c_depth.astype(np.int64), c_start, c_end,
                                np.full(c_start.size, BASE_HEIGHT), min_angle)
    cnames, _ = _materials("TV3D_ringc_", cluster_rgb, 1.0)
    clus = SectorLayer("ring_clusters", ang, rad, hgt, _rgba(cluster_rgb[cslot], 1.0), cslot.astype(np.int32),
                       cnames, {"call_index": sel.original(idx[c_rep]) if c_rep.size else np.zeros(0, np.int32),
                                "n_calls": c_count.astype(np.int32)})
    mats = {**_materials("TV3D_ring_", slot_rgb, 1.0)[1], **_materials("TV3D_ringc_", cluster_rgb, 1.0)[1]}
    return [bars, clus], mats


HIGHLIGHT_RGB = np.array([palette.srgb_to_linear([0.85, 0.15, 0.12]), palette.srgb_to_linear([0.55, 0.35, 0.18])])


def highlight_classes(sync, cs, call: int) -> np.ndarray:
    """Object mode with a hovered wait (IV-B3): 0 red when a curve's wait acts on the same
    set of objects as ``call``, 1 brown when it shares at least one, 2 grey otherwise."""
    mine = set(sync.objects_of(call))
    out = np.full(len(cs.wait_call), 2, np.int32)
    for k, w in enumerate(cs.wait_call.tolist()):  # one set per distinct wait call
        theirs = set(sync.objects_of(w)) if w >= 0 else set()
        out[k] = 0 if theirs == mine and mine else (1 if theirs & mine else 2)
    return out


def curve_colours(sync, cs, params, lane_rgb):
    """Colour index per curve and the palette: waiter's lane colour, or object mode (with a
    highlighted wait: red / brown / grey)."""
    if params.color_by == "object" and params.highlight is not None:
        return highlight_classes(sync, cs, int(params.highlight)), np.vstack([HIGHLIGHT_RGB, GREY[None]])
    if params.color_by == "object":
        k = object_colour_index(sync, cs.object)
        m = int(k.max()) + 1 if k.size and k.max() >= 0 else 0
        rgb = np.vstack([_hue_ring(max(m, 1))[:m], GREY[None]])
        return np.where(k >= 0, k, m).astype(np.int32), rgb
    return cs.waiter_lane.astype(np.int32), lane_rgb


def curve_layers(sync, cs, ring, params, lane_rgb, px):
    """Compound curves (beneath), single curves, release circles; wait markers + start shading."""
    ci, rgb = curve_colours(sync, cs, params, lane_rgb)
    layers, mats = [], {}
    for name, sel_rows, alpha in (("corr_compound", cs.compound, COMPOUND_ALPHA), ("corr", ~cs.compound, CURVE_ALPHA)):
        k = np.flatnonzero(sel_rows)
        col = palette.lighten(rgb, 0.35) if name == "corr_compound" else rgb
        names, m = _materials(f"TV3D_{name}_", col, alpha)
        mats.update(m)
        layers.append(CurveLayer(name, cs.left[k], cs.right[k], _rgba(col[ci[k]], alpha), ci[k], names, {
            "corr_index": cs.row[k], "wait_call": cs.wait_call[k], "release_call": cs.release_call[k],
            "n_corr": cs.n_corr[k], "object": cs.object[k]}))
    k = np.flatnonzero(~cs.compound)
    inner, outer = circle_ribbons(cs.release_xy[k], CIRCLE_PX[0] * px, CIRCLE_PX[1] * px, 0.14)
    names, m = _materials("TV3D_release_", rgb, 0.95)
    mats.update(m)
    layers.append(CurveLayer("release_circles", inner, outer, _rgba(rgb[ci[k]], 0.95), ci[k], names,
                             {"corr_index": cs.row[k], "release_call": cs.release_call[k]}))
    # wait markers on the releaser's sector, start shading at their start
    Z = ring.zero_radius
    a = cs.marker_angles
    a1 = np.maximum(a[:, 1], a[:, 0] + 1.5 * px / Z) if a.size else a[:, 1]
    shade = np.minimum(a[:, 0] + np.maximum(0.12 * (a1 - a[:, 0]), 2.5 * px / Z), a1) if a.size else a[:, 0]
    n = a.shape[0]
    ang = np.concatenate([np.stack([a[:, 0], a1], 1), np.stack([a[:, 0], shade], 1)]).astype(np.float32)
    rad = np.tile(np.array([[Z - MARKER_BAND[0], Z - MARKER_BAND[1]]], np.float32), (2 * n, 1))
    hgt = np.concatenate([np.tile([[0.0, 0.05]], (n, 1)), np.tile([[0.0, 0.07]], (n, 1))]).astype(np.float32)
    mnames, m1 = _materials("TV3D_marker_", rgb, MARKER_ALPHA)
    snames, m2 = _materials("TV3D_markstart_", rgb, START_ALPHA)
    mats.update(m1)
    mats.update(m2)
    cols = np.concatenate([_rgba(rgb[ci], MARKER_ALPHA), _rgba(rgb[ci], START_ALPHA)])
    layers.append(SectorLayer("wait_markers", ang, rad, hgt, cols,
                              np.concatenate([ci, ci + len(rgb)]).astype(np.int32), mnames + snames,
                              {"corr_index": np.concatenate([cs.row, cs.row]).astype(np.int32),
                               "start_shading": np.r_[np.zeros(n, np.int32), np.ones(n, np.int32)]}))
    return layers, mats


def lane_band_layer(ring, lane_rgb):
    """A band in each thread's colour just inside the ring, where its curves start (the
    thread's colour key of IV-B)."""
    n = ring.a0.size
    Z = ring.zero_radius
    names, mats = _materials("TV3D_lane_", lane_rgb, 1.0)
    return SectorLayer("lane_bands", np.stack([ring.a0, ring.a1], 1).astype(np.float32),
                       np.tile(np.array([[Z - LANE_BAND[0], Z - LANE_BAND[1]]], np.float32), (n, 1)),
                       np.tile(np.array([[0.0, 0.08]], np.float32), (n, 1)), _rgba(lane_rgb, 1.0),
                       np.arange(n, dtype=np.int32), names, {"lane": np.arange(n, dtype=np.int32)}), mats


def lane_text_materials(lane_rgb) -> dict:
    """Text materials in the thread colours, darkened for contrast on white."""
    dark = palette.oklab_to_linear_srgb(palette.linear_srgb_to_oklab(lane_rgb) * np.array([0.8, 1.0, 1.0]))
    return {f"TV3D_lane_text{k:02d}": MaterialSpec(f"TV3D_lane_text{k:02d}", tuple(float(c) for c in col) + (1.0,),
                                                   kind="text", cushion=False, from_attribute=False)
            for k, col in enumerate(dark)}


def thread_name_labels(tr, sel, ring, size, focus_lane):
    """Each thread's name just outside its own deepest level, at the middle of its sector."""
    mid = 0.5 * (ring.a0 + ring.a1)
    deepest = np.zeros(mid.size, np.int64)
    if sel.idx.size:
        np.maximum.at(deepest, sel.lane, tr.depth[sel.idx].astype(np.int64))
    R = ring.level_r1[np.minimum(deepest, ring.level_r1.size - 1)] + 3.0
    anchors = np.stack([R * np.cos(mid), R * np.sin(mid), np.full(mid.size, 0.4)], 1).astype(np.float32)
    sizes = np.full(mid.size, size, np.float32)
    if 0 <= focus_lane < mid.size:
        sizes[focus_lane] *= 1.25
    n = mid.size
    return LabelSet(list(sel.lane_names), anchors, sizes, [f"TV3D_lane_text{k:02d}" for k in range(n)],
                    np.ones(n, np.uint8), ["lane"] * n,
                    np.full(n, -1, np.int32))


def object_legend(sync, sel, lane_of_thread):
    """Legend rows (name, colour index, "swatch") of the objects of the shown hand-offs in
    object mode, most waited first (at most 6; grey ones left out)."""
    from .corr_curves import shown_rows

    objs = np.unique(sync.object[shown_rows(sync, sel, lane_of_thread)])
    k = object_colour_index(sync, objs)
    keep = np.argsort(k[k >= 0])[:6]
    objs, k = objs[k >= 0][keep], k[k >= 0][keep]
    return [(sync.object_names[o], int(c), "swatch") for o, c in zip(objs.tolist(), k.tolist())]


def legend_rows(params, bar_rows, bar_title, sel, object_rows, focus_name, has_compound):
    rows = [(bar_title, -1, "heading")] + bar_rows
    rows.append(("height: share of time waiting or in I/O", -1, "note"))
    if params.color_by == "object":
        rows.append(("curves: colour of the object", -1, "heading"))
        rows += [(name, 2000 + c, "swatch") for name, c, _ in object_rows]
        rows.append(("grey: an object only one thread waited on", -1, "note"))
    else:
        rows.append(("curves: the waiting thread", -1, "heading"))
        rows += [(name, 1000 + k, "swatch") for k, name in enumerate(sel.lane_names[:10])]
    rows.append(("wide end: the wait; dot: the release", -1, "note"))
    rows.append(("band inside the ring: the wait, on the releaser", -1, "note"))
    if has_compound:
        rows.append(("pale fans: waits of merged tiny calls", -1, "note"))
    if params.show_icicle and focus_name:
        rows.append((f"wall: {focus_name} as a straight icicle", -1, "note"))
    return rows


def threads_layout(trace: Trace, params: ThreadsParams | None = None, sync=None) -> SceneSpec:
    """The thread view of ``trace`` (see module docstring); ``sync`` reuses an analysis."""
    from ..analysis.synchronisation import synchronisation

    if not isinstance(trace, Trace):
        raise TypeError(f"threads_layout needs a Trace, got {type(trace).__name__}")
    params = (params or ThreadsParams()).validate()
    sync = sync if sync is not None else synchronisation(trace)
    res = params.resolution
    tpx = max(params.label_px, 10.0) * res[1] / 1080.0
    threads = shown_threads(trace, params)
    focus = resolve_thread(trace, params.focus) if params.focus is not None else default_focus(sync, threads)
    if focus not in threads:
        raise ValueError(f"the focused thread {trace.thread_names[focus]!r} is hidden")
    ip = IcicleParams(threads=threads, thread_order=threads if params.threads else "default",
                      time_window=params.time_window, max_depth=params.max_levels - 1, fold="none",
                      resolution=res).validate()
    sel = select_calls(trace, ip)
    tr = sel.trace
    n_lanes = sel.lane_threads.size
    lane_of_thread = np.full(trace.n_threads, -1, np.int64)
    lane_of_thread[sel.lane_threads] = np.arange(n_lanes)
    focus_lane = int(lane_of_thread[focus])
    levels = int(tr.depth[sel.idx].max()) + 1 if sel.idx.size else 1
    ring = make_ring(n_lanes, levels, focus_lane, params.focus_scale, params.zero_radius, params.fold, sel.t0, sel.t1)
    lane_rgb = lane_colours(n_lanes)
    slot, slot_rgb, cluster_rgb, bar_rows, bar_title = ring_bar_colours(tr, sel, params, lane_rgb)

    # HUD plan, then the wall (its extent joins the framing), then the camera
    title = params.title or (f"Who waits on whom · {trace.meta.get('source', 'trace').split('/')[-1]} · "
                             f"{n_lanes} threads, {int(sync.primary.sum()):,} hand-offs")
    obj_rows = object_legend(sync, sel, lane_of_thread) if params.color_by == "object" else []
    rows = legend_rows(params, bar_rows, bar_title, sel, obj_rows, trace.thread_names[focus], True)
    swatch_rgb = np.vstack([slot_rgb, np.zeros((0, 3))])
    n_obj = max([c for _, c, _ in obj_rows], default=-1) + 1
    obj_rgb = _hue_ring(max(n_obj, 1))[:n_obj]

    all_rgb = np.vstack([slot_rgb, lane_rgb, obj_rgb])

    def swatch(s):
        return s if s < 1000 else len(slot_rgb) + s - 1000 if s < 2000 else len(slot_rgb) + n_lanes + s - 2000

    # only the swatches the legend shows get a material (one instancer branch each)
    used = sorted({swatch(s) for _, s, _ in rows if s >= 0})
    compact = {u: k for k, u in enumerate(used)}
    plan = plan_hud(res, tpx, title, [(t, compact[swatch(s)] if s >= 0 else -1, k) for t, s, k in rows],
                    params.show_title, params.show_legend)
    R = ring.outer_radius
    wall = focus_wall(trace, focus, sel.t0, sel.t1, R, params, tpx) if params.show_icicle else None
    hmax = BASE_HEIGHT + 1.2
    pts = [[x, y, z] for x in (-R - 2, R + 2) for y in (-R - 2, R + 2) for z in (0.0, hmax)]
    if wall is not None:
        pts += wall.bbox_points.tolist()
    to_cam = view_direction(params.azimuth, params.elevation)
    cam = fit_camera_rect(np.array(pts), to_cam, res, plan.rect, lens_mm=params.lens_mm)
    px = float(world_per_pixel(cam, np.zeros((1, 3)), res)[0])

    clusters = cluster_bars(sel, ring, px, params.cluster_px)
    layers, mats = ring_layers(tr, sel, ring, sync, slot, slot_rgb, cluster_rgb, clusters, px, params.cluster_px)
    cs = build_curves(sync, sel, ring, lane_of_thread, clusters[0], clusters[3], clusters[4], clusters[6], px,
                      params.max_curves)
    clayers, cmats = curve_layers(sync, cs, ring, params, lane_rgb, px)
    band, bmats = lane_band_layer(ring, lane_rgb)
    layers = clayers[:1] + layers + [band] + clayers[1:]
    mats.update(cmats)
    mats.update(bmats)
    mats.update(lane_text_materials(lane_rgb))
    label_sets = [thread_name_labels(tr, sel, ring, 1.5 * tpx * px, focus_lane)] if params.show_labels else []
    if wall is not None:
        layers += wall.layers
        label_sets.append(wall.labels)
        mats.update(wall.materials)
    sw_rgb = all_rgb[used] if used else np.zeros((0, 3))
    sw_names = [f"TV3D_lg{k:02d}" for k in range(len(sw_rgb))]
    for n, col in zip(sw_names, sw_rgb):
        mats[n] = MaterialSpec(n, tuple(float(c) for c in col) + (1.0,), cushion=False)
    hud_labels, legend_layer, _ = hud_layers(plan, cam, res, sw_rgb, sw_names)
    label_sets.append(hud_labels)
    if legend_layer is not None:
        layers.append(legend_layer)
    for name, c in (("TV3D_text_dark", TEXT_DARK), ("TV3D_text_light", TEXT_LIGHT), *MATERIAL_TEXT_COLOURS.items()):
        mats[name] = MaterialSpec(name, c, kind="text", cushion=False, from_attribute=False)
    mats.setdefault("TV3D_axis", MaterialSpec("TV3D_axis", MATERIAL_TEXT_COLOURS["TV3D_text_muted"], kind="text",
                                              cushion=False, from_attribute=False))
    layers = [compact_materials(lay) for lay in layers]
    sun = -view_direction(params.azimuth - 35.0, 60.0)
    spec = SceneSpec(
        layers=layers, labels=LabelSet.concat(label_sets),
        legend=[LegendEntry(n, tuple(float(c) for c in col)) for n, col in zip(sel.lane_names, lane_rgb)],
        materials=mats, camera=cam,
        lights=[LightSpec("TV3D_key", "SUN", tuple(sun), 3.0),
                LightSpec("TV3D_fill", "SUN", tuple(-view_direction(params.azimuth + 60.0, 25.0)), 0.8)],
        resolution=res, background=(1.0, 1.0, 1.0),
        meta={"layout": "threads", "t0": sel.t0, "t1": sel.t1, "lane_threads": sel.lane_threads.tolist(),
              "lane_names": list(sel.lane_names), "lane_angles": np.stack([ring.a0, ring.a1], 1).tolist(),
              "zero_radius": ring.zero_radius, "outer_radius": R, "anchor_radius": ring.zero_radius - ANCHOR_INSET,
              "focus_thread": int(focus), "focus_lane": focus_lane, "world_per_pixel": px,
              "lane_rgb": lane_rgb.tolist(), "n_curves": int((~cs.compound).sum()),
              "n_compound": int(cs.compound.sum()), "n_calls": int(sel.idx.size),
              "n_clusters": int(clusters[3].size), "color_mode": params.color_by, "title": plan.title,
              "content_rect": list(plan.rect), "params": params.to_dict(), "text_px": tpx},
    )
    return spec.validate()
