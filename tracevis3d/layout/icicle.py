"""The extruded 3D icicle layout: Trace → SceneSpec (bpy-free).

Geometry (world units, z up):
- x = time: the shown time window maps to ``[0, params.time_length]``;
- z = stack depth: level d occupies ``[d·h, (d+1)·h)`` (roots at the bottom, deeper calls
  higher, as in a flame graph), boxes are ``0.86·h`` tall so levels stay separated;
- y = the extruded measure: every box starts at its lane's front plane and extends
  backwards by ``lane_depth·(0.12 + 0.88·m)`` with m the chosen measure normalised to
  [0, 1] (constant, inclusive time, self time, or number of calls of the function);
- threads are parallel lanes along y; the lane pitch is chosen so that, seen from the
  default camera elevation, a lane never hides the one behind it
  (gap after lane j ≥ lane_depth + H_j / tan(elevation), H_j the height of lane j,
  which is as tall as its own deepest stack).

Calls narrower than ``cluster_px`` pixels at the render resolution and default framing
are merged into lighter cluster boxes per (lane, depth) by
`tracevis3d.layout.cluster.cluster_subpixel_calls` (SyncTrace Sec. IV-B2).  Colours
come from `palette` (categorical for functions/modules, a viridis-like ramp for depth
and measures); the cushion profile (TraceDiff Sec. IV-B, van Wijk & van de Wetering)
is applied by the material from each box's local coordinate, not baked here.
"""
from __future__ import annotations

import math

import numpy as np

from ..model import Trace
from ..names import parse_function_name
from . import palette
from .camera import fit_camera, project, view_direction, world_per_pixel
from .cluster import cluster_subpixel_calls
from .params import COLOR_BY, EXTRUDE_MEASURES, IcicleParams  # noqa: F401
from .spec import InstanceLayer, LabelSet, LegendEntry, LightSpec, MaterialSpec, SceneSpec

SEQ_BINS = 16  # materials for continuous colours (Workbench shows the bin colour)
CLUSTER_BINS = 4
MIN_TEXT_PX = 8.0  # labels whose text would be shorter than this are not drawn
CHAR_WIDTH = 0.60  # average advance of Blender's default font, in units of the text size
OTHER_COLOR = (0.36, 0.36, 0.36)  # linear grey for "other"
TEXT_DARK = (0.012, 0.012, 0.015, 1.0)
TEXT_LIGHT = (0.95, 0.95, 0.95, 1.0)
TEXT_UI = (0.03, 0.03, 0.035, 1.0)


def short_name(full: str) -> str:
    """The readable part of a function name (``fib (/a/b.py:3)`` → ``fib``)."""
    return parse_function_name(full).function or full


def fit_label(text: str, width: float, size: float) -> str:
    """``text`` truncated (with an ellipsis) to fit ``width`` at text height ``size``."""
    n = int(width / (CHAR_WIDTH * size))
    if n >= len(text):
        return text
    if n < 3:
        return ""
    return text[: n - 1] + "…"


def _select(trace: Trace, params: IcicleParams):
    """Indices of the shown calls (pre-order kept, closed under parents) and the window."""
    n = len(trace)
    mask = np.ones(n, bool)
    if params.threads is not None and len(params.threads):
        try:
            th = trace._resolve_threads(params.threads)
        except (KeyError, IndexError) as e:
            raise ValueError(str(e).strip("'\"")) from None
        mask &= np.isin(trace.thread, th)
    if params.time_window is not None:
        t0, t1 = params.time_window
        mask &= (trace.end >= t0) & (trace.start <= t1)
    if params.max_depth is not None:
        mask &= trace.depth <= params.max_depth
    idx = np.flatnonzero(mask).astype(np.int64)
    if idx.size == 0:
        raise ValueError("no calls to show: the trace is empty or the thread/time selection matches nothing")
    if params.time_window is not None:
        t0, t1 = params.time_window
    else:
        t0, t1 = float(trace.start[idx].min()), float(trace.end[idx].max())
        if not t1 > t0:
            t1 = t0 + 1.0
    return idx, float(t0), float(t1)


def _fmt_time(us: float) -> str:
    a = abs(us)
    if a >= 1e6:
        return f"{us / 1e6:.3g} s"
    if a >= 1e3:
        return f"{us / 1e3:.3g} ms"
    if a >= 1:
        return f"{us:.3g} µs"
    return f"{us * 1e3:.3g} ns"


def _measure(trace: Trace, idx: np.ndarray, which: str) -> np.ndarray:
    if which == "constant":
        return np.ones(idx.size)
    if which == "inclusive":
        return trace.end[idx] - trace.start[idx]
    if which == "self":
        return np.maximum(trace.self_time[idx], 0.0)
    if which == "calls":
        f = trace.func[idx]
        return np.bincount(f, minlength=trace.n_functions)[f].astype(np.float64)
    raise ValueError(which)


def _log_norm(v: np.ndarray, decades: float = 4.0) -> np.ndarray:
    """log10(v / max) mapped from [-decades, 0] to [0, 1] (durations are heavy-tailed)."""
    vmax = float(v.max()) if v.size else 0.0
    if vmax <= 0:
        return np.zeros_like(v)
    with np.errstate(divide="ignore"):
        x = np.log10(np.maximum(v, vmax * 10 ** -decades) / vmax)
    return 1.0 + x / decades


def icicle_layout(trace: Trace, params: IcicleParams | None = None) -> SceneSpec:
    """Turn ``trace`` into the extruded icicle SceneSpec (see module docstring)."""
    if not isinstance(trace, Trace):
        raise TypeError(f"icicle_layout needs a Trace, got {type(trace).__name__}")
    params = (params or IcicleParams()).validate()
    idx, t0, t1 = _select(trace, params)
    res = params.resolution
    L = float(params.time_length)
    D = float(params.lane_depth)
    scale_t = L / (t1 - t0)  # world units per µs

    start = trace.start[idx]
    end = trace.end[idx]
    depth = trace.depth[idx].astype(np.int32)
    func = trace.func[idx]
    thr = trace.thread[idx]
    lane_threads, lane = np.unique(thr, return_inverse=True)  # lanes in thread-table order
    lane = lane.astype(np.int32)
    n_lanes = lane_threads.size
    levels = int(depth.max()) + 1

    # --- colours
    n_func = trace.n_functions
    materials: dict = {}
    legend: list = []
    box_mat_names: list = []
    color_by = {"auto": "function", "kind": "function"}.get(params.color_by, params.color_by)
    if color_by in ("function", "module"):
        if color_by == "function":
            key_of_func = np.arange(n_func)
            key_names = [short_name(s) for s in trace.function_names]
        else:
            mods = [".".join(p[:-1]) if len(p) > 1 else "(top level)" for p in trace.function_paths]
            key_names, key_of_func = np.unique(np.asarray(mods, dtype=object), return_inverse=True)
            key_names = list(key_names)
        key = key_of_func[func]
        weight = np.bincount(key, weights=end - start, minlength=len(key_names))
        present = np.bincount(key, minlength=len(key_names)) > 0
        order = np.argsort(-weight, kind="stable")  # heaviest (total inclusive time) first
        order = order[present[order]]
        k = int(params.max_colors)
        top = order[: k] if order.size <= k else order[: k - 1]
        cat_of_key = np.full(len(key_names), len(top), np.int64)
        cat_of_key[top] = np.arange(len(top))
        cols = palette.categorical(len(top))
        has_other = order.size > len(top)
        if has_other:
            cols = np.vstack([cols, [OTHER_COLOR]])
        cat = cat_of_key[key]
        rgb = cols[cat]
        mat_of_box = cat
        for j in range(cols.shape[0]):
            name = f"TV3D_cat{j:02d}"
            materials[name] = MaterialSpec(name, tuple(cols[j]) + (1.0,))
            box_mat_names.append(name)
        for j, kk in enumerate(top):
            legend.append(LegendEntry(str(key_names[kk]), tuple(cols[j])))
        if has_other:
            legend.append(LegendEntry(f"other ({order.size - len(top)})", OTHER_COLOR))
    else:
        if color_by == "depth":
            v = depth / max(levels - 1, 1)
            shown = np.arange(levels) if levels <= 8 else np.unique(np.linspace(0, levels - 1, 5).round().astype(int))
            ticks = [(d_ / max(levels - 1, 1), f"depth {d_}") for d_ in shown.tolist()]
        else:
            m = _measure(trace, idx, color_by)
            v = _log_norm(m)
            mmax = float(m.max())
            ticks = [(1.0 - j / 4.0, ("≤ " if j == 4 else "") + _fmt_time(mmax * 10 ** -j)) for j in range(5)]
        rgb = palette.sequential(v)
        mat_of_box = np.minimum((v * SEQ_BINS).astype(np.int64), SEQ_BINS - 1)
        bins = palette.sequential((np.arange(SEQ_BINS) + 0.5) / SEQ_BINS)
        for j in range(SEQ_BINS):
            name = f"TV3D_seq{j:02d}"
            materials[name] = MaterialSpec(name, tuple(bins[j]) + (1.0,))
            box_mat_names.append(name)
        for vv, txt in sorted(ticks, key=lambda x: -x[0]):
            legend.append(LegendEntry(txt,
                                      tuple(palette.sequential([vv])[0])))
    legend_title = {"function": "function", "module": "module", "depth": "stack depth",
                    "inclusive": "inclusive time", "self": "self time"}[color_by]

    # --- extrusion
    mv = _measure(trace, idx, params.extrude_measure)
    mmax = float(mv.max()) if mv.size else 1.0
    ext_unit = 0.12 + 0.88 * (mv / mmax if mmax > 0 else np.zeros_like(mv))  # × lane depth

    el = math.radians(params.elevation)
    # share the image height among the lanes: each lane shows H·cos(el) of front face and
    # D·sin(el) of extrusion; aim for ~80 % of a frame of the render aspect, 70/30 split
    # each lane is as tall as its own deepest stack (shallow threads leave room for deep ones)
    lane_levels = np.zeros(n_lanes, np.int64)
    np.maximum.at(lane_levels, lane, depth.astype(np.int64) + 1)
    avail = 0.8 * L * res[1] / res[0] / n_lanes
    h_max = min(0.1 * L, 0.45 * L / levels)  # a lane is at most about half as tall as it is long
    h = float(np.clip(0.7 * avail * n_lanes / (float(lane_levels.sum()) * math.cos(el)), 0.02, h_max))
    D = float(min(D, max(0.3 * avail / math.sin(el), 0.1)))
    D_max = float(params.lane_depth)
    for _attempt in range(3):  # grow the levels when the frame has height to spare
        H = levels * h
        # a lane must not hide the one behind it: the gap after lane j grows with lane j's height
        lane_H = lane_levels * h
        if params.lane_gap is None:
            gaps = D + lane_H / math.tan(el) + 0.6 * h
        else:
            gaps = np.full(n_lanes, D + float(params.lane_gap))
        lane_y = np.concatenate([[0.0], np.cumsum(gaps)[:-1]])  # front plane of each lane

        # --- camera (provisional: boxes only) → world size of a pixel per lane
        to_cam = view_direction(params.azimuth, params.elevation)
        corners = np.array([[x, y, z] for x in (0.0, L) for y in (0.0, lane_y[-1] + D) for z in (0.0, H)])
        lane_centres = np.stack([np.full(n_lanes, L / 2), lane_y + D / 2, np.full(n_lanes, H / 2)], 1)
        cam0 = fit_camera(corners, to_cam, res, params.orthographic, params.lens_mm)
        px0 = world_per_pixel(cam0, lane_centres, res)
        ui_size = float(max(14.0 * px0.max(), min(0.6 * h, 22.0 * px0.max())))  # lane names, legend, axis

        # --- lane names, axis ticks, legend: their extents enter the final framing
        labels_ui = []
        ui_pts = [corners]
        ui_kept = ("lane", "axis") if params.show_axes else ()
        lane_names = []
        for j, t in enumerate(lane_threads):
            nm = trace.thread_names[t] if t < len(trace.thread_names) else f"thread {t}"
            pn = trace.process_names[t] if t < len(trace.process_names) else ""
            lane_names.append(f"{pn}: {nm}" if pn and n_lanes > 1 and pn != nm else (nm or f"thread {t}"))
        lane_anchor = np.stack([np.full(n_lanes, -0.4 * ui_size), lane_y - 0.02, np.full(n_lanes, 0.15 * h)], 1)
        labels_ui.append(LabelSet(lane_names, lane_anchor.astype(np.float32),
                                  np.full(n_lanes, ui_size, np.float32), ["TV3D_text_ui"] * n_lanes,
                                  np.full(n_lanes, 2, np.uint8), ["lane"] * n_lanes, np.full(n_lanes, -1, np.int32)))
        if params.show_axes:
            ui_pts.append(lane_anchor - np.array([CHAR_WIDTH * ui_size * max(len(s) for s in lane_names), 0, 0]))
        # time axis under the front lane: 5 ticks
        tick_t = np.linspace(t0, t1, 5)
        tick_x = (tick_t - t0) * scale_t
        tick_txt = [_fmt_time(t - t0) if j else (_fmt_time(t0) if t0 else "0") for j, t in enumerate(tick_t)]
        tick_anchor = np.stack([tick_x, np.full(5, -0.02), np.full(5, -1.25 * ui_size)], 1)
        labels_ui.append(LabelSet(tick_txt, tick_anchor.astype(np.float32), np.full(5, ui_size * 0.85, np.float32),
                                  ["TV3D_text_ui"] * 5, np.array([0, 1, 1, 1, 2], np.uint8), ["axis"] * 5,
                                  np.full(5, -1, np.int32)))
        if params.show_axes:
            ui_pts.append(tick_anchor - np.array([0, 0, ui_size]))
        legend_layer = None
        if params.show_legend and legend:
            s = ui_size
            nl = len(legend)
            x0 = L + 1.5 * s
            ztop = max(H, (nl + 1) * 1.5 * s)
            zs = ztop - 1.5 * s * (np.arange(nl) + 1)
            lpos = np.stack([np.full(nl, x0 + s / 2), np.full(nl, s / 2), zs + s / 2], 1).astype(np.float32)
            lsc = np.tile(np.array([s, s, s], np.float32), (nl, 1))
            lcol = np.array([tuple(e.color)[:3] + (1.0,) for e in legend], np.float32)
            if color_by in ("function", "module"):
                lmat = np.arange(nl, dtype=np.int32)
            else:
                vv = palette.linear_srgb_to_oklab(np.array([e.color[:3] for e in legend]))
                binl = palette.linear_srgb_to_oklab(palette.sequential((np.arange(SEQ_BINS) + 0.5) / SEQ_BINS))
                lmat = np.argmin(((vv[:, None, :] - binl[None]) ** 2).sum(-1), axis=1).astype(np.int32)
            legend_layer = InstanceLayer("legend", lpos, lsc, lcol, lmat, list(box_mat_names),
                                         {"call_index": np.full(nl, -1, np.int32)})
            names = [e.name for e in legend]
            anchors = np.stack([np.full(nl, x0 + 1.5 * s), np.full(nl, -0.02), zs + 0.2 * s], 1)
            labels_ui.append(LabelSet(names, anchors.astype(np.float32), np.full(nl, s, np.float32),
                                      ["TV3D_text_ui"] * nl, np.zeros(nl, np.uint8), ["legend"] * nl,
                                      np.full(nl, -1, np.int32)))
            title_anchor = np.array([[x0, -0.02, ztop + 0.2 * s]], np.float32)
            labels_ui.append(LabelSet([legend_title], title_anchor, np.array([s * 1.1], np.float32),
                                      ["TV3D_text_ui"], np.zeros(1, np.uint8), ["legend"], np.full(1, -1, np.int32)))
            wmax = CHAR_WIDTH * s * max(len(x) for x in names + [legend_title])
            ui_pts.append(np.array([[x0 + 1.5 * s + wmax, 0, ztop + 1.5 * s], [x0, 0, 0]]))

        # --- final framing, pixel size per lane, clustering
        cam = fit_camera(np.vstack(ui_pts), to_cam, res, params.orthographic, params.lens_mm)
        pr = project(cam, np.vstack(ui_pts), res)
        fill_x = (pr[:, 0].max() - pr[:, 0].min()) / res[0]
        fill_y = (pr[:, 1].max() - pr[:, 1].min()) / res[1]
        grow = min(fill_x / max(fill_y, 1e-6), h_max / max(h, 1e-9)) * 0.97
        if grow < 1.08:
            break
        h *= grow
        D = min(D * grow, D_max)
    ext = D * ext_unit
    px = world_per_pixel(cam, lane_centres, res)
    r = np.cross(-to_cam, [0.0, 0.0, 1.0])
    r /= np.linalg.norm(r)
    foreshorten = max(abs(float(r[0])), 1e-3)  # a time length Δ appears as Δ·|x·right|
    px_time_us = px / foreshorten / scale_t  # µs per pixel, per lane
    min_w = params.cluster_px * px_time_us
    s_cl = np.maximum(start, t0)
    e_cl = np.minimum(end, t1)
    if params.cluster_px > 0:
        cluster_of, c_lane, c_depth, c_start, c_end, c_count, c_rep = cluster_subpixel_calls(
            s_cl, e_cl, depth, lane, min_w.astype(np.float64), min_w.astype(np.float64))
    else:
        cluster_of = np.full(idx.size, -1, np.int32)
        c_lane = c_depth = c_count = c_rep = np.zeros(0, np.int32)
        c_start = c_end = np.zeros(0)
    single = cluster_of < 0

    # --- call boxes
    xs = (s_cl[single] - t0) * scale_t
    xe = (e_cl[single] - t0) * scale_t
    ls = lane[single]
    ds = depth[single]
    es = ext[single]
    nb = xs.size
    pos = np.empty((nb, 3), np.float32)
    pos[:, 0] = (xs + xe) / 2
    pos[:, 1] = lane_y[ls] + es / 2
    pos[:, 2] = (ds + 0.5) * h
    sc = np.empty((nb, 3), np.float32)
    sc[:, 0] = np.maximum(xe - xs, 1e-6)
    sc[:, 1] = es
    sc[:, 2] = 0.86 * h
    col = np.ones((nb, 4), np.float32)
    col[:, :3] = rgb[single]
    calls_layer = InstanceLayer(
        "calls", pos, sc, col, mat_of_box[single].astype(np.int32), list(box_mat_names),
        {"call_index": idx[single].astype(np.int32), "depth": ds.astype(np.int32),
         "lane": ls.astype(np.int32)})

    # --- cluster boxes: lighter, lighter with depth (SyncTrace IV-B2)
    nc = c_start.size
    cxs = (c_start - t0) * scale_t
    cxe = (c_end - t0) * scale_t
    cw_min = params.cluster_px * px[c_lane] / foreshorten if nc else np.zeros(0)
    cw = np.maximum(cxe - cxs, cw_min)
    cext = np.zeros(nc)
    if nc:
        np.maximum.at(cext, cluster_of[~single], ext[~single])
    cpos = np.empty((nc, 3), np.float32)
    cpos[:, 0] = np.minimum(np.maximum((cxs + cxe) / 2, cw / 2), L - cw / 2) if nc else 0
    cpos[:, 1] = lane_y[c_lane] + cext / 2 if nc else 0
    cpos[:, 2] = (c_depth + 0.5) * h
    csc = np.empty((nc, 3), np.float32)
    csc[:, 0] = cw
    csc[:, 1] = cext
    csc[:, 2] = 0.86 * h
    lightness = 0.45 + 0.4 * (c_depth / max(levels - 1, 1))
    base = np.array([[0.30, 0.33, 0.40]])
    ccol = np.ones((nc, 4), np.float32)
    if nc:
        ccol[:, :3] = palette.lighten(base, lightness)
    cbin = np.minimum(((lightness - 0.45) / 0.4 * CLUSTER_BINS).astype(np.int64), CLUSTER_BINS - 1)
    cl_mats = []
    for j in range(CLUSTER_BINS):
        name = f"TV3D_cluster{j}"
        lj = 0.45 + 0.4 * (j + 0.5) / CLUSTER_BINS
        materials[name] = MaterialSpec(name, tuple(palette.lighten(base, lj)[0]) + (1.0,), kind="cluster")
        cl_mats.append(name)
    clusters_layer = InstanceLayer(
        "clusters", cpos, csc, ccol, cbin.astype(np.int32), cl_mats,
        {"call_index": idx[c_rep].astype(np.int32) if nc else np.zeros(0, np.int32),
         "depth": c_depth.astype(np.int32), "lane": c_lane.astype(np.int32),
         "call_count": c_count.astype(np.int32)})

    # --- labels on calls wide enough to read
    label_sets = [ls for ls in labels_ui if ls.kind[0] in ui_kept + ("legend",)]
    if params.show_labels and nb:
        wpx = sc[:, 0] * foreshorten / px[ls]
        # text height: 60 % of the box height, but not above 24 px (labels, not posters)
        size = np.minimum(0.6 * 0.86 * h, 24.0 * px[ls])
        size_px = size / px[ls]
        ok = np.flatnonzero((wpx >= params.label_min_px) & (size_px >= MIN_TEXT_PX))
        ok = ok[np.argsort(-wpx[ok], kind="stable")][: params.max_labels]
        names_cache: dict = {}
        func_single = func[single]
        texts, keep = [], []
        for j in ok:  # at most max_labels iterations
            f = int(func_single[j])
            nm = names_cache.get(f)
            if nm is None:
                nm = names_cache[f] = short_name(trace.function_names[f])
            t = fit_label(nm, float(sc[j, 0]) - 0.6 * float(size[j]), float(size[j]))
            if t:
                texts.append(t)
                keep.append(j)
        keep = np.asarray(keep, np.int64)
        if keep.size:
            anchors = np.stack([pos[keep, 0], lane_y[ls[keep]] - 0.01, pos[keep, 2] - 0.36 * size[keep]], 1)
            lum = palette.relative_luminance(col[keep, :3])
            mats = ["TV3D_text_dark" if v > 0.18 else "TV3D_text_light" for v in lum]
            label_sets.append(LabelSet(texts, anchors.astype(np.float32), size[keep].astype(np.float32),
                                       mats, np.ones(keep.size, np.uint8), ["call"] * keep.size,
                                       calls_layer.attributes["call_index"][keep]))
    labels = LabelSet.concat(label_sets)
    for name, c in (("TV3D_text_dark", TEXT_DARK), ("TV3D_text_light", TEXT_LIGHT), ("TV3D_text_ui", TEXT_UI)):
        materials[name] = MaterialSpec(name, c, kind="text", cushion=False, from_attribute=False)

    layers = [calls_layer, clusters_layer]
    if legend_layer is not None:
        layers.append(legend_layer)
    sun_dir = -view_direction(params.azimuth - 35.0, 55.0)
    lights = [LightSpec("TV3D_key", "SUN", tuple(sun_dir), 3.0),
              LightSpec("TV3D_fill", "SUN", tuple(-view_direction(params.azimuth + 60.0, 20.0)), 0.8)]
    spec = SceneSpec(
        layers=layers, labels=labels, legend=legend, materials=materials, camera=cam, lights=lights,
        resolution=res, background=(1.0, 1.0, 1.0),
        meta={
            "layout": "icicle", "t0": t0, "t1": t1, "world_per_us": scale_t, "level_height": h,
            "box_height": 0.86 * h, "lane_pitch": float(np.max(gaps)) if n_lanes else 0.0, "lane_y": lane_y.tolist(),
            "lane_threads": lane_threads.tolist(), "lane_names": lane_names,
            "world_per_pixel": px.tolist(), "us_per_pixel": px_time_us.tolist(),
            "n_calls": int(idx.size), "n_boxes": int(nb), "n_clusters": int(nc),
            "n_clustered_calls": int((~single).sum()), "legend_title": legend_title,
            "params": params.to_dict(), "levels": levels,
        },
    )
    return spec.validate()
