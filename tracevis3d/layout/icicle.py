"""The extruded 3D icicle: Trace → SceneSpec (bpy-free), as a pipeline of shared stages.

    select → fold → measure → colour → HUD plan → frame (lanes, camera) →
    boxes + clusters → labels → recursion names → detail inset → callouts → axes, lane
    names, title, legend → SceneSpec

Geometry (world units, z up):
- x = time: the shown window maps to ``[0, params.time_length]``;
- z = stack: lanes (threads) are stacked top to bottom in lane order (the main thread on
  top); inside a lane calls grow upwards from its base, one level per call, folded runs
  in bands (`layout.fold`); boxes fill 88 % of their slot so levels stay apart;
- y = the extruded measure: every box starts at the front plane y = 0 and reaches back
  ``lane_depth·h·(0.12 + 0.88·m)`` (h the level height, m the measure normalised to
  [0, 1]: constant, inclusive time, self time, or calls of the function).
The camera looks slightly down and from the left; it is fitted so the content fills the
frame's content rectangle exactly (lens shift), next to the title and legend, which are
a heads-up display in camera space (`layout.frame`, `layout.annotate`).  Calls narrower
than ``cluster_px`` pixels are merged into lighter cluster boxes (`layout.geometry`,
SyncTrace IV-B2).  The cushion profile (TraceDiff IV-B) is applied by the material.

Over 600 lines: the icicle's pipeline (stages, frame, occupancy of the lanes, geometry and the
composition of the figure), one topic; its parameters live in `params.icicle`, its measures in
`icicle_measure`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.overview_pass import clipped_widths, view_areas_in_place
from ..model import Trace
from .annotate import (MATERIAL_TEXT_COLOURS, MAX_LANE_NAME_EM, complete_from, free_room_replan, hud_layers,
                       incomplete_rows, lane_labels, legend_box, legend_placement, occupancy_grid, plan_hud, rects_grid,
                       time_axis, title_box, trace_title, with_run_brackets, x_unit_of)
from .camera import view_direction
from .colour import colour_calls, highlight_colouring, legend_swatch_rows, log_norm  # noqa: F401  (log_norm: public helper)
from .fold import BAND_WIDE, every_call, fold_levels
from .icicle_measure import MEASURE_CHUNK, MeasureUnits, extrusion, measure_calls, per_lane_max  # noqa: F401
from .frame import frame_lanes, lane_gap_levels
from .geometry import (BOX_FILL, AtIndex, PARTIAL_MATERIAL, PARTIAL_RGBA, box_layer, cluster_calls, cluster_layer,
                       cluster_material_names, drawn_calls, partial_marker_layer)
from .labels import TEXT_DARK, TEXT_LIGHT, LabelPlacer, icicle_labels, leader_material, name_plate_material, text_px
from ..naming import function_table
from ..params.icicle import COLOR_BY, EXTRUDE_MEASURES, IcicleParams  # noqa: F401
from . import flow_arcs as arcs
from . import side_tracks as side
from .instants import instant_markers, instants_in_window
from .cutaway import figure_cutaway
from .callouts import LEADER_MATERIAL, callout_labels
from .inset import MARK_MATERIAL, PANEL_MATERIAL, detail_inset, mark_material, panel_material
from .recursion import recursion_labels
from .lane_blocks import lane_names_by_run
from .select import select_calls
from .spec import InstanceLayer, LabelSet, LegendEntry, LightSpec, MaterialSpec, SceneSpec
from .text import fit_lane_name, name_candidates, text_width

MARKER_CHARS = 9  # a folded run this many characters wide gets a marker band
EXTRUSION_LEVELS = 1.0  # the extruded top faces of the top lane take about this many levels of the frame


def short_name(full: str) -> str:
    """The readable end of a function name (``fib (/a/b.py:3)`` → ``fib``)."""
    from ..naming import describe_function

    return describe_function(full)[4]


def fit_label(text: str, width: float, size: float) -> str:
    """``text`` shortened to its informative end to fit ``width`` at text size ``size``."""
    from .text import fit_text

    return fit_text(name_candidates(text), width / size if size > 0 else 0.0)


def lane_budget_of(sel, params, tpx: float, content_h_px: float | None = None):
    """The height budget stage for the lanes of ``sel`` (`layout.budget`): a function from
    the levels each lane needs to the levels it gets, sharing the readable levels of the
    content rectangle (``content_h_px``, default: the icicle's) by busy time."""
    from .annotate import content_height
    from .budget import lane_budgets, lane_busy, readable_levels, weights_from_busy

    n_lanes = int(sel.lane_threads.size)
    if content_h_px is None:
        content_h_px = content_height(params.resolution, tpx, params.show_title)
    axis_px = 2.2 * tpx if params.show_axes else 0.0
    avail = readable_levels(content_h_px, tpx, n_lanes, lane_gap_levels(n_lanes), axis_px) - EXTRUSION_LEVELS
    weight = weights_from_busy(lane_busy(sel.trace, sel.idx, sel.lane, n_lanes))
    return lambda demand: lane_budgets(demand, weight, max(avail, 1.0))


def legend_rows(colouring, params, n_folded: int, ext_label, n_partial: int = 0) -> list:
    """The legend: heading, one swatch per colour slot shown, then what else the figure uses."""
    rows = [(f"colour: {colouring.title}", -1, "heading")]
    rows += legend_swatch_rows(colouring.legend)
    if params.cluster_px > 0:
        rows.append(("lighter: calls under a pixel, merged", len(colouring.slot_rgb), "swatch"))
    if n_folded:
        rows.append(("thin bands: folded levels (wrappers, imports; +n: n levels)", -1, "note"))
    if params.fold == "auto":
        rows.append(("low bars: calls too narrow for a name", -1, "note"))
    if ext_label:
        rows.append((ext_label, -1, "note"))
    if n_partial:
        rows.append(("dark corner: partially expanded (calls hidden)", -1, "note"))
    return rows


def figure_materials(colouring) -> dict:
    """Box, cluster and text materials (Workbench shows each material's colour)."""
    materials: dict = {}
    for name, rgb in zip(colouring.slot_names, colouring.slot_rgb):
        materials[name] = MaterialSpec(name, tuple(float(c) for c in rgb) + (1.0,))
    materials[PARTIAL_MATERIAL] = MaterialSpec(PARTIAL_MATERIAL, PARTIAL_RGBA, cushion=False)
    for name, rgb in zip(cluster_material_names(colouring), colouring.cluster_rgb):
        materials[name] = MaterialSpec(name, tuple(float(c) for c in rgb) + (1.0,), kind="cluster")
    materials["TV3D_axis"] = MaterialSpec("TV3D_axis", MATERIAL_TEXT_COLOURS["TV3D_text_muted"], kind="text",
                                          cushion=False, from_attribute=False)
    for name, c in (("TV3D_text_dark", TEXT_DARK), ("TV3D_text_light", TEXT_LIGHT), *MATERIAL_TEXT_COLOURS.items()):
        materials[name] = MaterialSpec(name, c, kind="text", cushion=False, from_attribute=False)
    return materials


def figure_lights(params) -> list:
    sun_dir = -view_direction(params.azimuth - 35.0, 55.0)
    return [LightSpec("TV3D_key", "SUN", tuple(sun_dir), 3.0),
            LightSpec("TV3D_fill", "SUN", tuple(-view_direction(params.azimuth + 60.0, 20.0)), 0.8)]


@dataclass
class IcicleStages:
    """The icicle's stages before the frame (select → fold → measure → colour → drawn), for
    `icicle_layout` and for views that draw an icicle inside a larger scene (the thread
    view's wall)."""

    sel: object
    fold: object
    colouring: object
    drawn: object
    ext_label: str | None
    n_folded: int
    n_partial: int
    lane_levels: np.ndarray
    lane_ext: np.ndarray
    tracks: object = None  # `side_tracks.TrackPlan` under the lanes (the icicle's own figure only)
    inset: dict | None = None  # the detail inset's record (`layout.inset`), once placed
    inset_note: str | None = None  # why a window asked for (``inset=T0:T1``) got no inset

    @property
    def trace(self):
        return self.sel.trace


def icicle_stages(trace: Trace, params: IcicleParams, tpx: float, content_h_px: float | None = None,
                  window_first: bool = False, pack_min_lanes: int | None = None,
                  name_members: bool = False, colouring_of=None, max_lanes: int | None = None) -> IcicleStages:
    """Select, fold (within the height budget of ``content_h_px`` pixels, default the
    icicle's content rectangle less the share its counter tracks and async lanes take,
    `side_tracks.track_plan`), measure and colour the calls; the drawn calls.
    ``window_first``: a time window cuts the trace before anything else (`select_calls`);
    ``pack_min_lanes``, ``name_members``, ``max_lanes``: as in `select_calls`; ``colouring_of``: a function
    from the `Selection` to its `Colouring`, instead of the colour stage (a detail inset
    keeps the figure's colours, `layout.inset`)."""
    res = params.resolution
    sel = select_calls(trace, params, window_first=window_first, pack_min_lanes=pack_min_lanes,
                       name_members=name_members, max_lanes=max_lanes)
    tr, idx, t0, t1 = sel.trace, sel.idx, sel.t0, sel.t1
    tracks = None
    if content_h_px is None:  # the icicle's own figure: what goes under its lanes is planned first
        from .annotate import content_height

        tracks = side.track_plan(tr, t0, t1, params, sel.lane_threads)
        content_h_px = content_height(res, tpx, params.show_title) * (1.0 - tracks.share)
    n_lanes = sel.lane_threads.size
    est_us_per_px = (t1 - t0) / (0.8 * res[0])  # the content takes ~80 % of the width
    whole = every_call(idx, len(tr))  # the figure of every call: the trace's own (mapped) columns, no gathers
    # (min(end, t1) - max(start, t0)) / est_us_per_px in one pass (`kernels.overview_pass`)
    width_px = clipped_widths(tr.start, tr.end, idx, whole, float(t0), float(t1), float(est_us_per_px))
    fold = fold_levels(tr, idx, sel.parent, sel.lane, n_lanes, params.fold, width_px, MARKER_CHARS * 0.5 * tpx,
                       tpx, est_us_per_px, budget_of=lane_budget_of(sel, params, tpx, content_h_px))
    ext_unit, ext_label = extrusion(tr, idx, params.extrude_measure, fold.drawn, sel.lane, n_lanes)
    # width × height × drawn, made in the widths' array in one pass (no second array over the shown calls)
    view_area = width_px
    h = fold.height  # (`fold_heights.LevelHeights`: a code a call into its lane's row of the table)
    view_areas_in_place(width_px, np.ascontiguousarray(h.table, np.float64), h.lane, h.code, fold.drawn)
    if colouring_of is not None:
        colouring = colouring_of(sel)
    else:
        colouring = colour_calls(tr, idx, params, view_area, lambda m: measure_calls(tr, idx, m), x_unit_of(tr).fmt)
    if params.highlight and colouring_of is None:
        from ..analysis.filters import function_mask

        colouring = highlight_colouring(colouring, function_mask(tr, params.highlight)[tr.func[idx]],
                                        "matching " + ", ".join(params.highlight))
    if getattr(params, "critical_path", False) and colouring_of is None:  # the path lit, the rest pale
        from .critical_path import path_colouring

        colouring = path_colouring(trace, sel, colouring)
    del width_px, view_area  # arrays over the shown calls: gone before the drawn calls' are made
    d = drawn_calls(sel, fold, colouring.slot, ext_unit, gathered=idx.size <= GATHERED_MAX_CALLS)
    n_folded = int((fold.folded & ~fold.drawn).sum())
    n_partial = int(sel.partial[d.idx].sum()) if sel.partial is not None else 0
    return IcicleStages(sel, fold, colouring, d, ext_label, n_folded, n_partial, np.maximum(fold.lane_levels, 1.0),
                        ext_unit.lane_units(), tracks)  # (`per_lane_max` of the drawn calls' units)


#: a selection of more calls than this keeps its drawn calls' fields unheld (`geometry.shown_drawn_calls`:
#: read from the shown calls where indexed, 81 bytes a drawn call less; a whole-trace overview of
#: 10^8 calls); a smaller one gathers them into arrays (each stage's reads cost no gather through
#: the selection)
GATHERED_MAX_CALLS = 4_000_000

#: a block of this many lanes or more names a call once over a stretch (`LabelPlacer.repeat_zones`);
#: a smaller one (5 rows of a server's requests) names each lane's calls, which differ
REPEAT_ZONE_LANES = 8


def lane_name_em(sel, params) -> float:
    """Width (in label sizes) the lane names take left of the lanes."""
    if not params.show_axes:
        return 0.0
    names, runs = lane_names_by_run(sel)
    return max(text_width(fit_lane_name(s, MAX_LANE_NAME_EM)) for s in names + [r[2] for r in runs])


def icicle_geometry(st: IcicleStages, frame, params: IcicleParams, tpx: float, name_prefix: str = "",
                    callout_room: tuple | None = None) -> tuple:
    """Boxes, clusters, partial markers, labels, the time axis and lane names of the icicle
    in ``frame`` (its camera is the scene's): ``(layers, label sets, clusters)``.  With
    ``callout_room`` (the content rectangle, the HUD's pixel rectangles and the lanes'
    `lanes_occupancy` in ``frame``, or None to compute it), recursion towers are named once
    (`layout.recursion`), a crowded stretch the names miss is magnified in the free room
    (``params.inset``, `layout.inset`), then calls too narrow for their names are named in
    the free room above them (`layout.callouts`)."""
    sel, d, colouring, fold = st.sel, st.drawn, st.colouring, st.fold
    tr, t0, t1 = sel.trace, sel.t0, sel.t1
    res = params.resolution
    d.place(frame)
    cl = cluster_calls(d, frame, params.cluster_px)
    layers = [box_layer(d, cl, frame, t0, colouring, lambda i: tr.depth[i], name=f"{name_prefix}calls")]
    clusters_layer, cluster_x = cluster_layer(d, cl, frame, t0, colouring, params.cluster_px, params.time_length,
                                              name=f"{name_prefix}clusters")
    layers.append(clusters_layer)
    if sel.partial is not None:
        layers.append(partial_marker_layer(d, cl, frame, t0, sel.partial, name=f"{name_prefix}partial"))
    placer = LabelPlacer(frame.cam, res, frame.to_cam, tpx, params.max_labels if params.show_labels else 0,
                         params.label_min_px, repeat_gap=0.9 * frame.h)
    z_top = frame.z_base + frame.lane_heights
    lane_names, runs = lane_names_by_run(sel)  # blocks of one kind's lanes, named once
    placer.repeat_zones([(min(frame.z_base[a], frame.z_base[b]), max(z_top[a], z_top[b]))
                         for a, b, _ in runs if b - a + 1 >= REPEAT_ZONE_LANES])
    tags = member_tags(placer, sel, frame, tpx, name_prefix) if params.show_axes else None
    icicle_labels(placer, d, cl, cluster_x, fold, colouring, function_table(tr), frame, t0, t1, BAND_WIDE * frame.h,
                  group_gap_px=0.5 * tpx,
                  shown_func=AtIndex(lambda k: tr.func[sel.idx[k]]))
    plates = placer.plate_layer(f"{name_prefix}label_plates", colouring.slot_rgb, colouring.slot_names)
    if plates is not None:
        layers.append(plates)
    label_sets = [placer.labels()]
    if callout_room is not None and params.show_labels:
        content_rect, hud, occupied = callout_room
        if occupied is None:
            occupied = lanes_occupancy(st, frame, params, tpx)
        occupied = occupied | occupancy_grid(res, OCCUPANCY_CELL_PX, rects=hud)
        towers, tower_plates, taken = recursion_labels(sel, d, function_table(tr), frame, t0, tpx, res, occupied,
                                                       OCCUPANCY_CELL_PX, content_rect, label_sets[0], placer.rects,
                                                       name_prefix, placer.max_labels - placer.count)
        label_sets.append(towers)
        if tower_plates is not None:
            layers.append(tower_plates)
        occupied = occupied | occupancy_grid(res, OCCUPANCY_CELL_PX, rects=taken)
        inset = None
        if getattr(params, "inset", "none") != "none":
            inset, st.inset_note = detail_inset(st, frame, params, tpx, occupied, OCCUPANCY_CELL_PX, content_rect,
                                                LabelSet.concat(label_sets), cl, stretch_figure)
        also_named = ()
        if inset is not None:
            layers += inset.layers
            label_sets += inset.labels
            occupied = occupied | occupancy_grid(res, OCCUPANCY_CELL_PX, rects=[inset.rect], points=inset.line_points,
                                                 radii=np.full(len(inset.line_points), 0.5 * tpx))
            also_named = inset.meta["named_functions"]
            st.inset = inset.meta
        if params.max_callouts > 0:
            calls_named, leaders = callout_labels(placer, tr, d, cl.single, function_table(tr), frame, t0, tpx, res,
                                                  occupied, OCCUPANCY_CELL_PX, content_rect, params.max_callouts,
                                                  taken, also_named)
            label_sets.append(calls_named)
            if leaders is not None:
                layers.append(leaders)
    if tags is not None:
        label_sets.append(tags[0])
        layers.append(tags[1])
    size_w = tpx * float(np.median(frame.px))
    if params.show_axes:
        axis_labels, axis_marks, _ = time_axis(t0, t1, frame.scale_t, -0.25 * frame.h + frame.z_axis, frame.cam,
                                               res, frame.to_cam, size_w, float(np.median(frame.px)),
                                               params.time_length, hollow_until=complete_from(tr), unit=x_unit_of(tr))
        axis_marks.name = f"{name_prefix}axis"
        label_sets += [axis_labels, lane_labels(lane_names, frame.z_base, z_top, frame.cam, res, frame.to_cam,
                                                size_w, 0.6 * size_w, runs)]
        axis_marks = with_run_brackets(axis_marks, runs, frame.z_base, z_top, -0.3 * size_w,
                                       float(np.median(frame.px)))
        layers.append(axis_marks)
    return layers, label_sets, cl


def stretch_figure(trace: Trace, params: IcicleParams, tpx: float, rect, colouring_of, name_prefix: str) -> tuple:
    """The icicle of a stretch on its own (``params.time_window``), laid out for the pixel
    rectangle ``rect`` of an image of ``params.resolution`` (its height budget, its frame),
    coloured by ``colouring_of``, with its names and recursion names (no callouts): the
    detail inset's content (`layout.inset`).  (stages, frame, layers, label sets); a
    ValueError when the stretch shows no call."""
    st = icicle_stages(trace, params, tpx, content_h_px=rect[3] - rect[1], window_first=True, colouring_of=colouring_of)
    fr = frame_lanes(st.lane_levels, st.lane_ext, rect, params, tpx, 0.0, st.sel.t0, st.sel.t1)
    layers, label_sets, _ = icicle_geometry(st, fr, params, tpx, name_prefix=name_prefix, callout_room=(rect, [], None))
    return st, fr, layers, label_sets


def member_tags(placer: LabelPlacer, sel, frame, tpx: float, name_prefix: str = ""):
    """The names of the threads that share a lane by name (``sel.member_named``, `select_calls`'
    ``name_members``) after its first, whose name the lane carries: each on a white plate
    at its first call's start on the lane's base, as tall as a name, its text left-aligned
    (kind ``lane``), cut to the thread's stretch of the lane (left out where not even its
    shortest form fits).  The plates' faces are reserved in ``placer`` before the calls are
    named (a call whose face they overlap goes unnamed, `LabelPlacer.reserve`).  Returns
    (LabelSet, plate InstanceLayer ``<prefix>member_plates``) or None."""
    from .labels import PAD, PLATE_DEPTH, place_facing_text
    from .spec import InstanceLayer
    from .text import ASCENT, DESCENT, fit_text, thread_name_candidates

    if sel.member_named is None:
        return None
    tr = sel.trace
    counts = tr.thread_name_counts()
    n_lanes = sel.lane_threads.size
    texts, x0s, x1s, zs, sizes = [], [], [], [], []
    for lane in np.flatnonzero(sel.member_named).tolist():
        members = sel.lane_members[lane]
        lo, hi = np.searchsorted(sel.lane, [lane, lane + 1])  # lanes are contiguous (`select_calls`)
        calls = sel.idx[lo:hi]
        start, end, thread = tr.start[calls], tr.end[calls], tr.thread[calls]
        for k, t in enumerate(members[1:], 1):
            mine = thread == t
            if not mine.any():
                continue
            a = max(float(start[mine].min()), sel.t0)
            b = float(end[mine].max()) if k + 1 == len(members) else float(start[thread == members[k + 1]].min())
            xa, xb = (a - sel.t0) * frame.scale_t, (min(b, sel.t1) - sel.t0) * frame.scale_t
            px = float(frame.px[lane])
            size = tpx * px
            text = fit_text(thread_name_candidates(tr.thread_label(int(t), n_lanes, counts)),
                            (xb - xa) / size - 2 * PAD)
            if not text:
                continue
            texts.append(text)
            x0s.append(xa)
            x1s.append(xa + (text_width(text) + 2 * PAD) * size)
            zs.append(float(frame.z_base[lane]))
            sizes.append(size)
    if not texts:
        return None
    x0, x1, zb, size = (np.asarray(v, np.float64) for v in (x0s, x1s, zs, sizes))
    z1 = zb + (ASCENT + DESCENT) * 1.08 * size
    placer.reserve(x0, x1, zb, z1)
    n = len(texts)
    centre = np.stack([x0 + PAD * size, np.zeros(n), 0.5 * (zb + z1)], 1)
    anchor, rot = place_facing_text(centre, frame.cam, size, frame.to_cam, clearance=2.0 * PLATE_DEPTH)
    labels = LabelSet(texts, anchor.astype(np.float32), size.astype(np.float32), ["TV3D_text_ui"] * n,
                      np.zeros(n, np.uint8), ["lane"] * n, np.full(n, -1, np.int32), rot.astype(np.float32),
                      ["world"] * n)
    depth = PLATE_DEPTH * size
    pos = np.stack([0.5 * (x0 + x1), -0.5 * depth, 0.5 * (zb + z1)], 1).astype(np.float32)
    scale = np.stack([x1 - x0, depth, z1 - zb], 1).astype(np.float32)
    plates = InstanceLayer(f"{name_prefix}member_plates", pos, scale, np.ones((n, 4), np.float32),
                           np.zeros(n, np.int32), ["TV3D_name_plate"], {"call_index": np.full(n, -1, np.int32)})
    return labels, plates


OCCUPANCY_CELL_PX = 8.0  # the grid on which the legend looks for room among the lanes
OCCUPANCY_CHUNK = 1 << 18  # drawn calls projected at a time by `lanes_occupancy` (bounded temporaries)
#: from this many drawn calls the legend's free corner is first looked for among every
#: `OCCUPANCY_SAMPLE_EVERY`-th box (`icicle_layout`): a failed look costs 1/64 of a pass
OCCUPANCY_SAMPLE_MIN = 1 << 20
OCCUPANCY_SAMPLE_EVERY = 64


def label_materials(layers) -> dict:
    """The materials the label stages' own layers use among ``layers`` (the callouts'
    leaders, the white plates of member tags and recursion names), by the material names
    those layers carry."""
    makers = {LEADER_MATERIAL: lambda: leader_material(LEADER_MATERIAL), "TV3D_name_plate": name_plate_material,
              MARK_MATERIAL: mark_material, PANEL_MATERIAL: panel_material}
    used = {m for x in layers for m in getattr(x, "materials", ())}
    return {m: make() for m, make in makers.items() if m in used}


def tube_occupancy(tubes, cam, res, cell: float) -> np.ndarray:
    """`annotate.occupancy_grid` of a tube layer's centre curves (flow arcs), each sample a
    disc of its half-width."""
    from .camera import project, world_per_pixel

    c = tubes.centres.reshape(-1, 3).astype(np.float64)
    if c.shape[0] == 0:
        return occupancy_grid(res, cell)
    r = tubes.half_x.reshape(-1).astype(np.float64) / world_per_pixel(cam, c, res) + 1.0
    return occupancy_grid(res, cell, points=project(cam, c, res), radii=r)


def hud_rects(plan, res) -> list:
    """Pixel rectangles of the title and the legend of ``plan`` (what callouts keep off)."""
    out = []
    if plan.title:
        out.append(title_box(plan, res))
    if plan.legend_rows:
        out.append(legend_box(plan))
    return out


def lanes_occupancy(st: IcicleStages, frame, params: IcicleParams, tpx: float, every: int = 1) -> np.ndarray:
    """Where the lanes are drawn in ``frame`` (`annotate.occupancy_grid`): every drawn box,
    front face and extruded top, merged clusters included (a box's rectangle), the lane
    names and the time axis.  ``every``: only every ``every``-th drawn box (of the boxes read
    where they lie, `Drawn.source`): a grid inside the whole one, for a test that more
    occupied cells can only fail too."""
    from .camera import box_rects, project

    from .geometry import BOX_FILL

    d, sel = st.drawn, st.sel
    d.place(frame)
    res = params.resolution
    if d.source is not None:  # one pass over the drawn calls' fields where they lie
        grid = _drawn_occupancy(d, frame, res, every)
    else:
        grid = rects_grid(res, OCCUPANCY_CELL_PX, *(np.zeros(0),) * 4)
    for a in range(0, d.start.size if d.source is None else 0, OCCUPANCY_CHUNK):  # a chunk's temporaries at a time, not the calls'
        b = a + OCCUPANCY_CHUNK
        x0 = (d.start[a:b] - sel.t0) * frame.scale_t
        x1 = (d.end[a:b] - sel.t0) * frame.scale_t
        bottom, height = d.bottom[a:b], d.height[a:b]  # `Drawn.face_low`, `face_high` of the chunk
        # the front face's lower edge and the extruded top's back edge bound a box on the image
        rx0, ry0, rx1, ry1 = box_rects(frame.cam, res, x0, x1, d.ext[a:b], bottom + (1 - BOX_FILL) / 2 * height,
                                       bottom + (1 + BOX_FILL) / 2 * height)
        grid |= rects_grid(res, OCCUPANCY_CELL_PX, rx0, ry0, rx1 + 1.0, ry1 + 1.0)
    extra = []
    if params.show_axes:  # the axis under the lanes and the names left of them
        zb = float(frame.z_base.min())
        ax = project(frame.cam, np.array([[0.0, 0.0, zb], [params.time_length, 0.0, zb]]), res)
        extra.append((ax[:, 0].min() - 4 * tpx, ax[:, 1].min(), ax[:, 0].max() + 2 * tpx, ax[:, 1].max() + 2.6 * tpx))
        nm = project(frame.cam, np.stack([np.zeros_like(frame.z_base), np.zeros_like(frame.z_base), frame.z_base], 1),
                     res)
        w = lane_name_em(sel, params) * tpx
        extra += [(x - w - 1.2 * tpx, y - 1.5 * tpx, x, y + 0.5 * tpx) for x, y in nm]
    return grid | occupancy_grid(res, OCCUPANCY_CELL_PX, rects=np.asarray(extra).reshape(-1, 4))


def _drawn_occupancy(d, frame, res, every: int = 1) -> np.ndarray:
    """`lanes_occupancy`'s grid of the drawn boxes in one pass over their fields where they lie
    (`kernels.overview_drawn.drawn_occupancy`: the rectangles the chunked projection makes,
    marked into one grid)."""
    from ..kernels.overview_drawn import covered_of, drawn_occupancy
    from .camera import box_rect_camera
    from .geometry import BOX_FILL

    src = d.source
    ny, nx = int(np.ceil(res[1] / OCCUPANCY_CELL_PX)), int(np.ceil(res[0] / OCCUPANCY_CELL_PX))
    from .overview_pool import in_parts, layout_threads

    f64 = lambda a: np.asarray(a, np.float64)  # noqa: E731
    camera = box_rect_camera(frame.cam, res)

    def part(chunks):  # the measures of a chunk at a time (`MeasureUnits`), the chunks' cells' marks
        diff = np.zeros((ny + 1, nx + 1), np.int64)
        for a in chunks:
            pos = src.pos[a:a + OCCUPANCY_CHUNK]
            if every > 1:  # (contiguous: the kernel's one signature)
                pos = np.ascontiguousarray(pos[::every])
            drawn_occupancy(diff, pos, src.idx, bool(src.whole), f64(src.start), f64(src.end), float(src.t0),
                            float(src.t1), src.lane, f64(src.bottom), src.hcode, f64(src.htable),
                            np.ascontiguousarray(src.ext_unit[pos], np.float64), f64(frame.z_base), float(frame.h),
                            float(frame.depth), float(frame.scale_t), (1 - BOX_FILL) / 2, (1 + BOX_FILL) / 2,
                            *camera, ny, nx, float(OCCUPANCY_CELL_PX))
        return diff

    # the chunks dealt to the cores (`overview_pool`): their marks are counts, added exactly in any order
    k = layout_threads()
    chunks = list(range(0, src.pos.size, OCCUPANCY_CHUNK))
    diffs = in_parts(part, [chunks[j::k] for j in range(k)], src.pos.size // every)
    return covered_of(sum(diffs) if diffs else np.zeros((ny + 1, nx + 1), np.int64), ny, nx)


def icicle_layout(trace: Trace, params: IcicleParams | None = None, colouring_of=None,
                  stages_out: dict | None = None) -> SceneSpec:
    """Turn ``trace`` into the extruded icicle SceneSpec (see module docstring).
    ``colouring_of``: as in `icicle_stages` (a refined stretch keeps its overview's colours,
    `layout.refine`); ``stages_out``: a dict that gets the figure's `IcicleStages` as
    ``"stages"`` (a build keeps its colours for later zooms, `refine.OverviewColours`)."""
    if not isinstance(trace, Trace):
        raise TypeError(f"icicle_layout needs a Trace, got {type(trace).__name__}")
    params = (params or IcicleParams()).validate()
    if params.merge:  # the trace's stacks merged (`tracevis3d.merge`: speedscope's left heavy view)
        from ..io.stacks import merged_stacks

        trace = merged_stacks(trace)
    res = params.resolution
    tpx = text_px(params)
    # a time window: the figure of the window on its own (colours ranked, levels folded and
    # measures taken over the window's calls), at the cost of the window, not of the trace
    st = icicle_stages(trace, params, tpx, window_first=True, name_members=True, colouring_of=colouring_of)
    if stages_out is not None:
        stages_out["stages"] = st
    sel, colouring = st.sel, st.colouring
    tr, idx, t0, t1 = sel.trace, sel.idx, sel.t0, sel.t1
    title = trace_title(trace, sel, params)
    tracks = st.tracks
    shown = sel.lane_of_thread() >= 0 if sel.n_threads_left_out else None  # flows to lanes left out: none drawn
    n_flows = arcs.flows_in_window(tr, t0, t1, shown) if params.show_flows else 0
    n_instants, instant_bars = instants_in_window(sel, t0, t1) if params.show_instants else (0, False)
    rows = legend_rows(colouring, params, st.n_folded, st.ext_label, st.n_partial) + incomplete_rows(
        trace, t0, on_axis=params.show_axes)
    rows += getattr(colouring, "rows", [])  # the critical path's shares (`layout.critical_path`)
    if sel.lane_members is not None:
        from .select import PACKED_NOTE, PACKED_NAMED_NOTE

        named = sel.member_named if sel.member_named is not None else np.zeros(len(sel.lane_members), np.bool_)
        if any(len(m) > 1 and not named[k] for k, m in enumerate(sel.lane_members)):
            rows.append((PACKED_NOTE, -1, "note"))
        if sel.member_named is not None:
            rows.append((PACKED_NAMED_NOTE, -1, "note"))
    flow_cls = arcs.flow_colours(tr, t0, t1, shown) if n_flows else None
    flow_slot0 = len(colouring.slot_rgb) + 1  # after the calls' colours and the merged calls' swatch
    rows += side.side_legend_rows(tracks, n_flows, n_instants,
                                  arcs.flow_category_rows(tr, flow_cls, flow_slot0) if flow_cls is not None else None,
                                  arcs.MIN_ICICLE_FLOW_ARCS, instant_bars)
    name_em = max(lane_name_em(sel, params), side.track_name_em(tr, tracks, params) if not tracks.empty else 0.0)
    n_lanes = st.lane_levels.size
    below = side.below_levels(tracks, float(st.lane_levels.sum()) + lane_gap_levels(n_lanes) * (n_lanes - 1))
    below, after = side.split_levels(tracks, below, st.lane_levels.size)  # a track under its process's lanes
    plan = plan_hud(res, tpx, title, rows, params.show_title, params.show_legend)
    lane_levels = st.lane_levels
    frame = occupied = None
    if plan.legend_rows:  # the legend where the lanes leave room, the lanes over the whole width
        full = plan_hud(res, tpx, title, rows, params.show_title, False)
        frame = frame_lanes(lane_levels, st.lane_ext, full.rect, params, tpx, name_em, t0, t1,
                            below_levels=below, after_levels=after, below_depth=side.TRACK_DEPTH)
        replan = free_room_replan(res, tpx, title, rows, params.show_title)
        track_cells = side.track_occupancy(frame, params, res, tpx, OCCUPANCY_CELL_PX) if not tracks.empty else None
        # a sample of the drawn boxes first: its cells are among the whole grid's, so where it
        # leaves the legend no corner the whole grid leaves none (`legend_placement` only looks
        # for free cells); the whole grid only where the sample leaves a corner (at 10^7 calls
        # the lanes fill the frame: one pass over every drawn call instead of two)
        sample = lanes_occupancy(st, frame, params, tpx, every=OCCUPANCY_SAMPLE_EVERY) \
            if st.drawn.local.size >= OCCUPANCY_SAMPLE_MIN else None
        if sample is not None and track_cells is not None:
            sample |= track_cells
        if sample is not None and legend_placement(full, plan, sample, OCCUPANCY_CELL_PX, res, replan) is None:
            placed = None
        else:
            occupied = lanes_occupancy(st, frame, params, tpx)
            if track_cells is not None:
                occupied |= track_cells
            placed = legend_placement(full, plan, occupied, OCCUPANCY_CELL_PX, res, replan)
        if placed is not None:
            plan = placed
        else:
            frame = occupied = None
    if frame is None:
        frame = frame_lanes(lane_levels, st.lane_ext, plan.rect, params, tpx, name_em, t0, t1,
                            below_levels=below, after_levels=after, below_depth=side.TRACK_DEPTH)
    if occupied is None:  # what the label stages in the free room keep off: lanes, tracks, flow arcs
        occupied = lanes_occupancy(st, frame, params, tpx)
        if not tracks.empty:
            occupied |= side.track_occupancy(frame, params, res, tpx, OCCUPANCY_CELL_PX)
    flows, flow_info = arcs.flow_arcs(sel, st.drawn, frame, params, t0, t1, flow_cls)
    if flows is not None:
        occupied = occupied | tube_occupancy(flows, frame.cam, res, OCCUPANCY_CELL_PX)
    layers, label_sets, cl = icicle_geometry(st, frame, params, tpx,
                                             callout_room=(plan.rect, hud_rects(plan, res), occupied))
    if flows is not None:  # the names arcs cross, in front of them (the same pixels)
        over = [arcs.labels_over_arcs(ls, flows, frame.cam, res) for ls in label_sets]
        label_sets = [ls for ls, _ in over]
        flow_info["n_labels_over_arcs"] = sum(k for _, k in over)
    materials = figure_materials(colouring)
    materials.update(label_materials(layers))
    if getattr(colouring, "path", None) is not None:  # its ribbon and hand-off arcs
        from .critical_path import icicle_path_layers, path_materials

        layers += icicle_path_layers(colouring.path, sel, frame, t0, t1)
        materials.update(path_materials())
    side_meta = {"n_counter_tracks": len(tracks), "counter_tracks": tracks.labels, "n_instant_markers": 0}
    if not tracks.empty:
        below_layers, below_labels, below_mats, below_meta = side.below_geometry(tr, tracks, frame, params, t0, t1,
                                                                                 tpx)
        layers += below_layers
        label_sets += below_labels
        materials.update(below_mats)
        side_meta.update(below_meta)
    instants, side_meta["n_instant_markers"] = instant_markers(sel, frame, params, t0, t1)
    side_meta.update(flow_info)
    cut = figure_cutaway(params, sel, st.drawn, frame)
    if cut is not None:
        side_meta["cutaway"] = cut
    layers += [x for x in (flows, instants) if x is not None]
    if flows is not None or instants is not None or flow_cls is not None:
        materials.update(arcs.side_materials())
    swatch_rgb = np.vstack([colouring.slot_rgb, colouring.cluster_rgb[:1]])
    swatch_mats = list(colouring.slot_names) + cluster_material_names(colouring)[:1]
    if flow_cls is not None:  # the flows' category swatches (slots from flow_slot0)
        flow_names, flow_rgb = arcs.flow_materials()
        swatch_rgb = np.vstack([swatch_rgb, flow_rgb])
        swatch_mats += flow_names
    hud_labels, legend_layer, hud_dist = hud_layers(plan, frame.cam, res, swatch_rgb, swatch_mats)
    label_sets.append(hud_labels)
    if legend_layer is not None:
        layers.append(legend_layer)

    legend = [LegendEntry(it.name, tuple(float(c) for c in colouring.slot_rgb[it.slot])) for it in colouring.legend]
    layers = [x.pruned() if isinstance(x, InstanceLayer) else x for x in layers]  # a written figure keeps its colours
    spec = SceneSpec(
        layers=layers, labels=LabelSet.concat(label_sets), legend=legend, materials=materials,
        camera=frame.cam, lights=figure_lights(params), resolution=res, background=(1.0, 1.0, 1.0),
        meta={
            "layout": "icicle", "t0": t0, "t1": t1, "world_per_us": frame.scale_t, "level_height": frame.h,
            "x_unit": x_unit_of(tr).measure,  # a merged trace's measure ("" on a clock)
            "box_height": BOX_FILL * frame.h, "lane_z": frame.z_base.tolist(), "lane_levels": lane_levels.tolist(),
            "lane_threads": sel.lane_threads.tolist(), "lane_names": sel.lane_names,
            "world_per_pixel": frame.px.tolist(), "us_per_pixel": frame.us_per_px.tolist(),
            "n_calls": int(idx.size), "n_threads_left_out": int(sel.n_threads_left_out),
            "n_boxes": int(cl.single.sum()), "n_clusters": len(cl),
            "n_clustered_calls": int((~cl.single).sum()), "legend_title": colouring.title,
            "color_mode": colouring.mode, "fold_rule": st.fold.rule, "n_folded": st.n_folded,
            "content_rect": list(plan.rect), "title": plan.title, "hud_distance": hud_dist,
            "text_px": tpx, "params": params.to_dict(), "levels": int(tr.depth[idx].max()) + 1,
            "folded_levels": float(lane_levels.max()), "n_partial": st.n_partial, "inset": st.inset,
            **({"inset_note": st.inset_note} if st.inset_note else {}), **side_meta,
        },
    )
    return spec.validate()
