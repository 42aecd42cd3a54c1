"""The memory view under the calls of the same run (issue 71 item 3): `MemoryCapture` + `Trace`
→ one SceneSpec (bpy-free), so a presenter can show which calls held the memory.

Two clocks, one axis.  memray's clock starts with its tracker, a call tracer's with its own
start; `memory.align_calls` maps the trace's µs onto the capture's ms (on the program's own first
call and first allocation, on the two wall clocks of the live feed, or on the ends of the run) and
says how, which the legend repeats.

`memory_under_icicle`: the trace's icicle -- render-icicle's own stages (`icicle.icicle_stages`:
select, fold within a height budget, measure, colour; `frame.frame_lanes`; `icicle.icicle_geometry`:
boxes, sub-pixel clusters, names, recursion names, callouts) on the window of the capture's span,
so its time axis is the capture's -- above the memory bands (`memory.band_plan`,
`memory.band_geometry`, their labels), which stand in the frame's block under the lanes and their
time axis (`Frame.below`, where the icicle puts its counter tracks), ``calls_share`` of the height
to the icicle.  The camera is orthographic and its right vector horizontal, so a call's box and
the columns of memory of its moment line up on the picture.  The bands are made in the memory
view's own world (x in [0, `CHART_W`]) and moved into the icicle's by one similarity (scale
``time_length / CHART_W``, a lift in z, `_Similarity`); their labels are placed with the figure's
camera as seen from that world, so they keep their pixel sizes.

`memory_figure` is the one entry: the icicle (``calls_view`` "icicle"), else `memory.memory_layout`
(no calls, or the older strip of the busiest thread's six outermost levels, ``calls_view``
"strip": a cheap layout, for the live view's frequent rebuilds).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..io.memray import MemoryCapture
from ..params.icicle import IcicleParams
from ..params.memory import CALLS_ICICLE, MemoryParams
from .annotate import LEGEND_COLUMN_FRAC, SWATCH_EM, content_height, hud_layers, occupancy_grid, plan_hud
from .camera import project
from .frame import frame_lanes, lane_gap_levels
from .geometry import cluster_material_names
from .icicle import (OCCUPANCY_CELL_PX, figure_materials, hud_rects, icicle_geometry, icicle_stages, label_materials,
                     lane_name_em, lanes_occupancy, legend_rows)
from .labels import text_px
from .memory import (CHART_W, GREY, HEADROOM, MAX_LEGEND_SITES, axis_labels, band_labels, memory_materials, nice,
                     to_camera, align_calls, band_geometry, band_legend_rows, band_plan, capture_span, fmt_bytes,
                     leak_rows, memory_layout, memory_lights, memory_meta, memory_title, site_kinds, thickness_note)
from .spec import CameraSpec, InstanceLayer, LabelSet, LegendEntry, SceneSpec
from .text import text_width

MIN_LEGEND_SITES = 6  # the memory legend keeps at least this many sites when the icicle's legend is long
HWM_ROOM_SIZES = 1.7  # room above the chart for the high-water mark's name, in text sizes


def memory_figure(cap: MemoryCapture, params: MemoryParams | None = None, calls=None,
                  calls_offset_us: float | None = None) -> SceneSpec:
    """The memory view of ``cap``; with ``calls`` (a `Trace` of the same run) under its icicle
    (``calls_view`` "icicle", `memory_under_icicle`) or its call strip ("strip",
    `memory.memory_layout`)."""
    params = (params or MemoryParams()).validate()
    if calls is not None and params.calls_view == "icicle":
        return memory_under_icicle(cap, params, calls, calls_offset_us)
    return memory_layout(cap, params, calls, calls_offset_us)


def icicle_params_of(params: MemoryParams, window: tuple) -> IcicleParams:
    """render-icicle's parameters for the icicle above the bands: the icicle's own options the
    memory view takes (`params.memory.CALLS_ICICLE`: colour, fold, filters, threads, ...), the
    memory view's resolution, text, labels and camera angles, the capture's span as the window, an
    orthographic camera (calls and columns line up), no title of its own, no detail inset; the
    icicle's defaults for the rest."""
    return IcicleParams(**{name: getattr(params, name) for name in CALLS_ICICLE},
                        resolution=tuple(params.resolution), label_px=params.label_px,
                        show_labels=params.show_labels, show_legend=params.show_legend, show_title=False,
                        time_window=tuple(float(x) for x in window), orthographic=True, azimuth=params.azimuth,
                        elevation=params.elevation, inset="none").validate()


@dataclass
class _Similarity:
    """The map from the memory view's world to the figure's: ``x · scale + (0, 0, lift)``."""

    scale: float
    lift: float

    def point(self, p) -> np.ndarray:
        return np.asarray(p, np.float64) * self.scale + np.array([0.0, 0.0, self.lift])

    def camera_seen_from_memory(self, cam: CameraSpec) -> CameraSpec:
        """The figure's camera in the memory view's world (the inverse map): the same pixels."""
        back = lambda p: tuple((np.asarray(p, np.float64) - np.array([0.0, 0.0, self.lift])) / self.scale)  # noqa: E731
        return replace(cam, location=back(cam.location), target=back(cam.target),
                       ortho_scale=cam.ortho_scale / self.scale, clip_start=cam.clip_start / self.scale,
                       clip_end=cam.clip_end / self.scale)

    def layer(self, lay: InstanceLayer) -> InstanceLayer:
        return replace(lay, positions=self.point(lay.positions).astype(np.float32),
                       scales=(lay.scales * self.scale).astype(np.float32))

    def labels(self, ls: LabelSet) -> LabelSet:
        if not len(ls):
            return ls
        return replace(ls, anchors=self.point(ls.anchors).astype(np.float32),
                       sizes=(ls.sizes * self.scale).astype(np.float32))


def _memory_legend(cap, params, bp, tpx, res, title, icicle_rows, n_slot0, has_leaks, how_row) -> tuple:
    """(HUD plan, rows naming sites, sites in the legend): the icicle's legend, the alignment,
    then the bands' (`band_legend_rows`), as many sites as the column holds after the icicle's
    rows (at least `MIN_LEGEND_SITES`)."""
    room_em = (LEGEND_COLUMN_FRAC * res[0] - SWATCH_EM * tpx) / tpx - 0.5
    n_max = min(len(bp.named), MAX_LEGEND_SITES)
    for n_legend in range(n_max, -1, -1):
        site_legend, site_rows = band_legend_rows(cap, params, bp, n_legend, room_em, slot0=n_slot0)
        rows = icicle_rows + [how_row, thickness_note(cap, params)] + site_legend + leak_rows(cap, has_leaks)
        plan = plan_hud(res, tpx, title, rows, params.show_title, params.show_legend, fit_height=False)
        height = sum(plan.row_px * (1.25 if k == "heading" else 1.0) for _, _, k in plan.legend_rows)
        if plan.legend_y + height <= plan.rect[3] or n_legend <= min(MIN_LEGEND_SITES, n_max):
            break
    return plan_hud(res, tpx, title, rows, params.show_title, params.show_legend), site_rows, n_legend


def _without_kind(ls: LabelSet, kind: str) -> LabelSet:
    keep = np.array([k != kind for k in ls.kind], bool)
    if keep.all():
        return ls
    idx = np.flatnonzero(keep)
    return LabelSet([ls.texts[i] for i in idx], ls.anchors[idx], ls.sizes[idx], [ls.material[i] for i in idx],
                    ls.align[idx], [ls.kind[i] for i in idx], ls.call_index[idx], ls.rotation[idx],
                    [ls.space[i] for i in idx], {k: v[idx] for k, v in ls.attributes.items()})


def memory_under_icicle(cap: MemoryCapture, params: MemoryParams, calls, calls_offset_us: float | None = None
                        ) -> SceneSpec:
    """The icicle of ``calls`` over the capture's span above the memory bands of ``cap`` on one
    time axis (module docstring).  A ValueError when no call of the trace falls in the span, or
    naming the trace with render-icicle's message when an icicle option does not fit it."""
    params = params.validate()
    if cap.n_ranges == 0:
        raise ValueError(f"no allocations to show in {cap.source}")
    res = tuple(params.resolution)
    tpx = text_px(params)
    t1 = capture_span(cap)
    aligned = align_calls(cap, calls, t1, calls_offset_us)
    offset, how = float(aligned["offset_us"]), aligned["how"]
    ip = icicle_params_of(params, (offset, offset + 1000.0 * t1))
    share = float(params.calls_share)
    content_h = content_height(res, tpx, params.show_title)
    try:
        st = icicle_stages(calls, ip, tpx, content_h_px=share * content_h, window_first=True, name_members=True)
    except ValueError as e:
        source = calls.meta.get('source', 'the call trace')
        if not str(e).startswith("no calls to show"):  # an option the trace cannot take (a thread it lacks)
            raise ValueError(f"{source}: {e}") from None  # render-icicle's line
        raise ValueError(f"{source}: no calls inside the capture's {t1 / 1000.0:.3g} s aligned on {how} ({e})") \
            from None
    sel, colouring = st.sel, st.colouring
    bp = band_plan(cap, params, 0.8 * (1.0 - share) * content_h)
    title = memory_title(cap, params)
    how_row = (f"one time axis, the capture's: the calls aligned on {how} (trace time = capture time + "
               f"{offset / 1e6:.3f} s)", -1, "note")
    ice_rows = legend_rows(colouring, ip, st.n_folded, st.ext_label, st.n_partial)
    n_ice_slots = len(colouring.slot_rgb) + 1  # the calls' colours, then the merged calls' swatch
    has_leaks = bool(cap.range_leaked.any())
    plan, site_rows, n_legend = _memory_legend(cap, params, bp, tpx, res, title, ice_rows, n_ice_slots, has_leaks,
                                               how_row)

    # the frame: the icicle's lanes on top, a block under them and their axis for the bands
    n_lanes = st.lane_levels.size
    ice_levels = float(st.lane_levels.sum()) + lane_gap_levels(n_lanes) * (n_lanes - 1) + 2.0
    below = ice_levels * (1.0 - share) / share
    byte_em = max(text_width(fmt_bytes(v)) for v in nice(0.0, float(bp.gheld.sum(axis=0).max()), 5) or [0.0])
    one_lane = n_lanes == 1  # its name (a thread's, often a number) would widen the margin of both parts
    name_em = max(0.0 if one_lane else lane_name_em(sel, ip), 0.85 * byte_em + 0.5)
    frame = frame_lanes(st.lane_levels, st.lane_ext, plan.rect, ip, tpx, name_em, sel.t0, sel.t1,
                        below_levels=below)
    L = float(ip.time_length)
    wpp = float(np.median(frame.px))
    zb, ztop = frame.below
    sim = _Similarity(L / CHART_W, zb)
    chart_h = max((ztop - zb - HWM_ROOM_SIZES * tpx * wpp) / HEADROOM, 1e-6) / sim.scale  # the memory view's units
    geo = band_geometry(cap, params, bp, chart_h)
    cam_m = sim.camera_seen_from_memory(frame.cam)
    to_cam = to_camera(params.azimuth, params.elevation)
    mem_labels = []
    if params.show_labels:
        mem_labels.append(band_labels(cam_m, res, tpx, to_cam, bp.named[:int(params.max_labels)], bp.g_name,
                                       bp.g_rgb, bp.gheld, geo.base, geo.zs, CHART_W / bp.n_bins, geo.hx,
                                       group_kind="range" if params.group_by == "range" else "site"))
    axis = axis_labels(cam_m, res, tpx, to_cam, t1, geo.top, geo.zs, geo.hx, cap, chart_h)
    n_time = len(nice(0.0, t1 / 1000.0, 7))  # the time ticks: the icicle's axis is the figure's
    keep = np.arange(n_time, len(axis))
    mem_labels.append(LabelSet([axis.texts[k] for k in keep], axis.anchors[keep], axis.sizes[keep],
                               [axis.material[k] for k in keep], axis.align[keep], [axis.kind[k] for k in keep],
                               axis.call_index[keep], axis.rotation[keep], [axis.space[k] for k in keep]))
    mem_layers = [sim.layer(x) for x in geo.layers()]
    mem_labels = [sim.labels(x) for x in mem_labels]

    # the icicle: render-icicle's boxes, clusters, names and callouts, the bands' block kept free
    occupied = lanes_occupancy(st, frame, ip, tpx)
    corners = np.array([[x, 0.0, z] for x in (-(name_em + 1.0) * tpx * wpp, L + geo.cap_w * sim.scale)
                        for z in (zb - geo.drop * sim.scale, ztop)])
    pr = project(frame.cam, corners, res)
    block_px = (pr[:, 0].min(), pr[:, 1].min() - 0.5 * tpx, pr[:, 0].max(), pr[:, 1].max())
    occupied = occupied | occupancy_grid(res, OCCUPANCY_CELL_PX, rects=np.array([block_px]))
    layers, label_sets, cl = icicle_geometry(st, frame, ip, tpx, callout_room=(plan.rect, hud_rects(plan, res),
                                                                               occupied))
    if one_lane:  # the lane's name left out (the legend says what the calls are)
        label_sets = [_without_kind(ls, "lane") for ls in label_sets]
    # the HUD: the calls' swatches, then the named bands'
    ice_sw_rgb = np.vstack([colouring.slot_rgb, colouring.cluster_rgb[:1]])
    ice_sw_mats = list(colouring.slot_names) + cluster_material_names(colouring)[:1]
    mem_sw_rgb = np.array([bp.g_rgb[g] for g in bp.named[:n_legend]] or [GREY], np.float64)
    mem_sw_mats = [f"TV3D_memory_sw{k:02d}" for k in range(len(mem_sw_rgb))]
    hud_labels, legend_layer, hud_dist = hud_layers(plan, frame.cam, res, np.vstack([ice_sw_rgb, mem_sw_rgb]),
                                                    ice_sw_mats + mem_sw_mats)
    site_kinds(hud_labels, site_rows, params.group_by)
    layers = layers + mem_layers + ([legend_layer] if legend_layer is not None else [])
    layers = [x.pruned() if isinstance(x, InstanceLayer) else x for x in layers]
    materials = figure_materials(colouring)
    materials.update(label_materials(layers))
    materials.update(memory_materials(geo.band_mats, geo.mat_rgb, {}, mem_sw_mats, mem_sw_rgb))
    all_labels = LabelSet.concat(label_sets + mem_labels + [hud_labels])
    legend = ([LegendEntry(it.name, tuple(float(c) for c in colouring.slot_rgb[it.slot])) for it in colouring.legend]
              + [LegendEntry(bp.g_name[g], tuple(bp.g_rgb[g])) for g in bp.named[:n_legend]])
    meta = memory_meta(cap, params, bp, geo, 1.0 / (geo.zs * sim.scale), chart_w=L)
    meta.update({
        "calls_view": "icicle", "calls_offset_us": offset, "calls_alignment": how,
        "n_calls_drawn": int(sel.idx.size), "n_calls": int(sel.idx.size), "icicle_t0": float(sel.t0),
        "world_per_us": frame.scale_t, "world_per_ms": L / t1, "level_height": frame.h,
        "lane_z": frame.z_base.tolist(), "lane_threads": sel.lane_threads.tolist(),
        "memory_z": [float(zb), float(ztop)], "memory_scale": sim.scale, "calls_share": share,
        "n_call_boxes": int(cl.single.sum()), "n_call_clusters": len(cl), "fold_rule": st.fold.rule,
        "n_folded": st.n_folded, "levels": int(sel.trace.depth[sel.idx].max()) + 1,
        "legend_title": colouring.title, "n_labels": len(all_labels), "title": plan.title,
        "content_rect": list(plan.rect), "hud_distance": hud_dist, "text_px": tpx,
        "icicle_params": ip.to_dict()})
    spec = SceneSpec(layers=layers, labels=all_labels, legend=legend, materials=materials, camera=frame.cam,
                     lights=memory_lights(params), resolution=res, background=(1.0, 1.0, 1.0), meta=meta)
    return spec.validate()
