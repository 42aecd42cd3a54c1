"""Annotation stages: time axis, lane names, title and legend (bpy-free).

The time axis and the lane names belong to the geometry (world space, facing the camera,
sized in pixels at their place).  The title and the legend are a heads-up display in
camera space (`spec` ``space="camera"``), laid out in pixels around the content
rectangle, so they never overlap the icicle and stay framed when the camera moves.  A
legend placed in the content's free room stands in one of its corners (`corner_place`),
never in a gap between lanes.

x is time unless the trace is merged stacks: every view formats x through one `XUnit`
resolved from the trace (`layout.xunit`, re-exported here): ticks, values, titles, legends.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from .camera import camera_local_from_pixels, camera_pixel_size, centre_content
from .labels import TEXT_MUTED, TEXT_UI, place_facing_text
from .spec import CameraSpec, InstanceLayer, LabelSet
from .free_room import cells_free, occupancy_grid, rects_grid, summed_area  # noqa: F401  (re-exported)
from .xunit import (  # noqa: F401  (the x axis' words: re-exported for the views)
    UNITS, TIME, XUnit, fmt_time, merged_total, nice_ticks, sampling_interval, tick_texts, trace_kind_text,
    window_text, x_unit_of,
)
from .text import ASCENT, DESCENT, cut_end, cut_thread_name, fit_lane_name, fit_text, name_candidates, text_width

MAX_LANE_NAME_EM = 14.0  # a lane name longer than this (in label sizes) is shortened (`text.fit_lane_name`)


def complete_from(trace) -> float | None:
    """µs from which the trace holds every call that ended (``meta["complete_from"]``, `io.chrome`:
    VizTracer's buffer was full and kept only the calls that ended last), or None."""
    v = trace.meta.get("complete_from") if isinstance(trace.meta, dict) else None
    return None if v is None else float(v)


def incomplete_rows(trace, window_start: float | None = None, on_axis: bool = False) -> list:
    """Legend rows saying that the trace lost its early calls (`complete_from`): the calls that
    ended before that time are missing and the figure's early part is hollow, only its long outer
    calls kept.  No rows when the shown span (from ``window_start``, default the trace's start)
    starts after it.  ``on_axis``: the figure's time axis marks the stretch (`time_axis`'
    ``hollow_until``)."""
    cut = complete_from(trace)
    if cut is None or not len(trace):
        return []
    first = float(trace.start.min())
    if cut <= (first if window_start is None else float(window_start)):
        return []
    into = cut - first
    where = " (thick on the time axis)" if on_axis else ""
    return [(f"VizTracer's buffer was full: calls that ended in the first {fmt_time(into)} are missing{where}",
             -1, "note")]


def time_axis(t0, t1, scale_t, z_axis, cam, res, to_cam, size_world, px_world, time_length, hollow_until=None,
              unit: XUnit = TIME):
    """Tick labels (world) and tick marks (an InstanceLayer) under the lanes; ``hollow_until`` (µs,
    as ``t0``): the axis is drawn thick up to it, the stretch whose calls a tracer dropped
    (`incomplete_rows`); ``unit``: what x measures (`x_unit_of`: a merged trace's ticks are
    in its measure, "0, 2k samples, 4k samples")."""
    ticks, scale, tick_unit, dec = unit.nice_ticks(t1 - t0)
    texts = unit.tick_texts(ticks, scale, tick_unit, dec)
    x = ticks * scale_t
    keep = x <= time_length * (1 + 1e-6)
    x, texts = x[keep], [t for t, k in zip(texts, keep) if k]
    n = x.size
    face = np.stack([x, np.zeros(n), np.full(n, z_axis - 0.95 * size_world)], 1)
    anchor, rot = place_facing_text(face, cam, np.full(n, size_world), to_cam)
    align = np.ones(n, np.uint8)
    if n:
        align[0] = 0
        anchor[0, 0] -= 0.0
    labels = LabelSet(texts, anchor.astype(np.float32), np.full(n, size_world, np.float32),
                      ["TV3D_text_ui"] * n, align, ["axis"] * n, np.full(n, -1, np.int32),
                      rot.astype(np.float32), ["world"] * n)
    # marks: a thin axis line and a short tick at every label
    tick_len = 0.35 * size_world
    thick = max(1.2 * px_world, 1e-6)
    pos = [[time_length / 2, thick / 2, z_axis - thick / 2]]
    sc = [[time_length, thick, thick]]
    for xi in x:
        pos.append([xi, thick / 2, z_axis - tick_len / 2])
        sc.append([thick, thick, tick_len])
    if hollow_until is not None and hollow_until > t0:
        xh = min((float(hollow_until) - t0) * scale_t, time_length)
        pos.append([xh / 2, thick / 2, z_axis - 2.0 * thick])  # under the line, three times as thick
        sc.append([xh, thick, 3.0 * thick])
    pos, sc = np.array(pos, np.float32), np.array(sc, np.float32)
    m = pos.shape[0]
    marks = InstanceLayer("axis", pos, sc, np.tile(np.array([TEXT_MUTED], np.float32), (m, 1)),
                          np.zeros(m, np.int32), ["TV3D_axis"], {"call_index": np.full(m, -1, np.int32)})
    return labels, marks, (ticks, tick_unit)


def lane_labels(names, z_base, z_top, cam, res, to_cam, size_world, gap_world, runs=()):
    """Lane names right-aligned left of the time origin, at the bottom of each lane; a block of
    lanes of one kind (``runs``: (first, last, name), `lane_blocks.lane_names_by_run`, whose lanes'
    ``names`` are '') named once, at the block's middle."""
    z_base, z_top = np.asarray(z_base, np.float64), np.asarray(z_top, np.float64)
    keep = [k for k, nm in enumerate(names) if nm]
    zc = list(np.minimum(z_base[keep] + 0.6 * size_world, z_top[keep]))
    names = [fit_lane_name(names[k], MAX_LANE_NAME_EM) for k in keep]
    for a, b, name in runs:
        names.append(fit_lane_name(name, MAX_LANE_NAME_EM))
        zc.append(0.5 * (min(z_base[a], z_base[b]) + max(z_top[a], z_top[b])) - 0.3 * size_world)
    n = len(names)
    if n == 0:
        return LabelSet.empty()
    zc = np.asarray(zc, np.float64)
    face = np.stack([np.full(n, -gap_world), np.zeros(n), zc], 1)
    anchor, rot = place_facing_text(face, cam, np.full(n, size_world), to_cam)
    return LabelSet(list(names), anchor.astype(np.float32), np.full(n, size_world, np.float32),
                    ["TV3D_text_ui"] * n, np.full(n, 2, np.uint8), ["lane"] * n, np.full(n, -1, np.int32),
                    rot.astype(np.float32), ["world"] * n)


def with_run_brackets(marks: InstanceLayer, runs, z_base, z_top, x: float, px_world: float) -> InstanceLayer:
    """``marks`` (the axis' boxes) and a thin upright bar at ``x`` beside each block of lanes
    named once (``runs``: (first, last, name), `lane_labels`), with short feet towards the
    lanes: the block's extent, so its one name is read as the name of all its lanes."""
    if not runs:
        return marks
    thick = max(1.2 * px_world, 1e-6)
    foot = 6.0 * px_world
    pos, sc = [], []
    for a, b, _ in runs:
        z0, z1 = min(z_base[a], z_base[b]), max(z_top[a], z_top[b])
        pos += [[x, thick / 2, 0.5 * (z0 + z1)], [x + foot / 2, thick / 2, z0 + thick / 2],
                [x + foot / 2, thick / 2, z1 - thick / 2]]
        sc += [[thick, thick, z1 - z0], [foot, thick, thick], [foot, thick, thick]]
    m = len(pos)
    return InstanceLayer(marks.name, np.concatenate([marks.positions, np.array(pos, np.float32)]),
                         np.concatenate([marks.scales, np.array(sc, np.float32)]),
                         np.concatenate([marks.colors, np.tile(np.array([TEXT_MUTED], np.float32), (m, 1))]),
                         np.concatenate([marks.material_index, np.zeros(m, np.int32)]), marks.materials,
                         {"call_index": np.concatenate([marks.attributes["call_index"], np.full(m, -1, np.int32)])},
                         marks.space)


def threads_shown_text(n_threads: int, left_out: int) -> str:
    """"5 threads", or "24 of 83 threads (the busiest)" where ``left_out`` were not drawn."""
    if left_out:
        return f"{n_threads} of {n_threads + left_out} threads (the busiest)"
    return f"{n_threads} thread{'s' if n_threads != 1 else ''}"


def trace_title(trace, sel, params) -> str:
    """``json_tool · 113,078 calls · 1 thread · 39.2 ms`` (plus the window when there is one);
    a sampled trace adds its interval (``· sampled every 1 ms``); a merged one says so and
    gives its measure instead of a span (``prog · 310 call paths · 1 thread · merged stacks
    (left heavy) · 12,345 samples``, `trace_kind_text`)."""
    if params.title is not None:
        return params.title
    name = trace.title_name
    threads = threads_shown_text(int(sel.threads.size), int(getattr(sel, "n_threads_left_out", 0) or 0))
    unit = x_unit_of(trace)
    kind = trace_kind_text(trace)
    if unit.merged:
        parts = [name, f"{sel.idx.size:,} call paths", threads, kind]
        parts.append(unit.window_text(sel.t0, sel.t1) if sel.windowed else unit.total_text(merged_total(sel)))
        return " · ".join(parts)
    parts = [name, f"{sel.idx.size:,} calls", threads]
    if sel.windowed:
        parts.append(window_text(sel.t0, sel.t1))
    else:
        parts.append(fmt_time(sel.t1 - sel.t0))
    if kind:
        parts.append(kind)
    return " · ".join(parts)


@dataclass
class HudPlan:
    """The heads-up display in pixels: where the content goes and what is drawn around it."""

    rect: tuple  # content rectangle (x0, y0, x1, y1), pixels, y down
    title: str
    title_px: float
    legend_rows: list  # (text, slot or -1, kind) per row; kind: "heading" | "swatch" | "note" | "ramp" (slots a tuple)
    legend_x: float  # left edge of the legend column
    legend_y: float
    text_px: float
    row_px: float
    splits: tuple = ()  # rows from each of these on start the next column (none: one column)
    column_w: float = 0.0  # pixels from one column's left edge to the next's


HUD_MARGIN_FRAC = 0.03  # page margin, as a fraction of the image height
#: the title's text is this many times the labels' size (as large as a grown legend's heading)
TITLE_SCALE = 1.5


def hud_top(res, text_px: float, has_title: bool, margin_frac: float = HUD_MARGIN_FRAC) -> float:
    """Top edge (pixels) of the content rectangle: below the title row when there is one."""
    m = margin_frac * res[1]
    return m + TITLE_SCALE * text_px * (ASCENT + DESCENT) + 0.9 * text_px if has_title else m


def content_height(res, text_px: float, has_title: bool, margin_frac: float = HUD_MARGIN_FRAC) -> float:
    """Height (pixels) of the content rectangle `plan_hud` leaves (the legend is a column
    at the side, so it does not change the height)."""
    return res[1] - margin_frac * res[1] - hud_top(res, text_px, has_title, margin_frac)


#: the legend's column is at most this share of the image width (rows are fitted to it)
LEGEND_COLUMN_FRAC = 0.2
#: a legend row's swatch takes this many text sizes before its text; a ramp's swatches
#: (one per bin of a scale, touching) are `RAMP_SWATCH_EM` wide each
SWATCH_EM, RAMP_SWATCH_EM = 1.5, 0.9


def swatch_room(kind: str, slot, text_px: float) -> float:
    """Pixels a legend row's swatches take before its text."""
    if kind == "swatch":
        return SWATCH_EM * text_px
    if kind == "ramp":
        return (RAMP_SWATCH_EM * len(slot) + SWATCH_EM - RAMP_SWATCH_EM) * text_px
    return 0.0


def plan_hud(res, text_px, title, legend_rows, show_title: bool, show_legend: bool,
             margin_frac: float = HUD_MARGIN_FRAC, max_legend_frac: float = LEGEND_COLUMN_FRAC,
             fit_height: bool = True) -> HudPlan:
    """Reserve the title row and the legend column; the rest is the content rectangle.
    ``fit_height``: the legend's rows are cut to the column's height (False: all kept, for
    a legend placed in free room in one or more columns, `legend_placement`, which checks
    that it fits)."""
    w, h = res
    m = margin_frac * h
    title_px = TITLE_SCALE * text_px
    top = hud_top(res, text_px, bool(show_title and title), margin_frac)
    if show_title and title:
        title = cut_end(title, (w - 2 * m) / title_px)
    row_px = 1.45 * text_px
    legend_x = w - m
    rows = []
    if show_legend and legend_rows:
        max_w = max_legend_frac * w
        rows_fit = []
        avail_rows = int(max((h - top - m) / row_px, 1))
        for text, slot, kind in legend_rows:
            room = (max_w - swatch_room(kind, slot, text_px)) / text_px
            if kind == "ramp":
                rows_fit.append((text if text_width(text) <= room else cut_end(text, room), slot, kind))
            elif kind == "swatch":  # a name, or the ways to write a thread's (a tuple, most informative first)
                if isinstance(text, tuple):  # a thread: its number kept, where it stands (`cut_thread_name`)
                    fitted = fit_text(list(text), room) or cut_thread_name(text[-1], room)
                else:
                    fitted = fit_text(name_candidates(text), room) or cut_end(text, room)
                rows_fit.append((fitted, slot, kind))
            else:  # headings and notes wrap at spaces
                for k, line in enumerate(_wrap(text, room)):
                    rows_fit.append((line, slot if k == 0 else -1, kind if k == 0 else "note"))
        if fit_height:
            rows_fit = rows_fit[:avail_rows]
        width = max((text_width(t) * text_px * (1.05 if k == "heading" else 1.0)
                     + swatch_room(k, sl, text_px)) for t, sl, k in rows_fit)
        legend_x = w - m - width
        rows = rows_fit
    x1 = (legend_x - 1.5 * text_px) if rows else w - m
    rect = (m, top, x1, h - m)
    return HudPlan(rect, title if show_title else "", title_px, rows, legend_x, top, text_px, row_px)


def _row_h(plan: HudPlan, kind: str) -> float:
    return plan.row_px * (1.25 if kind == "heading" else 1.0)


def legend_size(plan: HudPlan, res, columns: int = 1) -> tuple:
    """(width, height) in pixels of a plan's legend block (0, 0 without one), in one column
    or in ``columns`` (`column_splits`), each as wide as the plan's column."""
    if not plan.legend_rows:
        return 0.0, 0.0
    m = HUD_MARGIN_FRAC * res[1]
    w = float(res[0] - m - plan.legend_x)
    if columns == 1:
        return w, float(sum(_row_h(plan, k) for _, _, k in plan.legend_rows))
    heights = [sum(_row_h(plan, k) for _, _, k in rows) for rows in _columns(plan.legend_rows,
                                                                             column_splits(plan, columns))]
    return columns * w + (columns - 1) * plan.text_px, float(max(heights))


def _columns(rows: list, splits) -> list:
    edges = [0, *splits, len(rows)]
    return [rows[a:b] for a, b in zip(edges[:-1], edges[1:])]


def column_splits(plan: HudPlan, columns: int) -> tuple:
    """Where a legend of ``columns`` columns breaks (the first row of each column after the
    first): the breaks that make the tallest column least tall, a column that does not
    start at a heading costing `SPLIT_OFF_HEADING_ROWS` rows more (a section reads whole
    where that costs little); a wrapped note's continued line never starts a column."""
    from itertools import combinations

    rows = plan.legend_rows
    n = len(rows)
    columns = min(int(columns), n)
    if columns < 2:
        return ()
    top = np.concatenate([[0.0], np.cumsum([_row_h(plan, k) for _, _, k in rows])])  # y of each row's top
    allowed = [i for i in range(1, n) if not (rows[i][2] == "note" and rows[i - 1][2] == "note"
                                              and not isinstance(rows[i][1], tuple) and rows[i][1] < 0)]
    if len(allowed) < columns - 1:
        return ()
    penalty = SPLIT_OFF_HEADING_ROWS * plan.row_px
    best, best_cost = (), np.inf
    for cut in combinations(allowed, columns - 1):
        edges = (0, *cut, n)
        cost = max(top[b] - top[a] for a, b in zip(edges[:-1], edges[1:]))
        cost += penalty * sum(rows[i][2] != "heading" for i in cut)
        if cost < best_cost - 1e-9:
            best, best_cost = cut, cost
    return tuple(best)


#: a legend column that starts elsewhere than at a heading costs this many rows of height
SPLIT_OFF_HEADING_ROWS = 1.5


def free_corner(grid: np.ndarray, cell: float, rect, size, pad: float, sat=None) -> tuple | None:
    """Top-left pixel of a ``size`` (w, h) block, ``pad`` pixels clear all round, inside
    ``rect`` where ``grid`` (`occupancy_grid`) has nothing, as near a corner of ``rect`` as
    can be (the top right preferred, then bottom right, top left, bottom left); None when
    there is no such place.  Every cell position is tested with a summed-area table
    (``sat``: `summed_area` of ``grid`` when the caller has it) in one kernel sweep
    (`kernels.raster.nearest_free_window`)."""
    x0, y0, x1, y1 = rect
    w, h = size
    if w <= 0 or h <= 0 or w + 2 * pad > x1 - x0 or h + 2 * pad > y1 - y0:
        return None
    ny, nx = grid.shape
    sat = summed_area(grid) if sat is None else sat
    ww = int(np.ceil((w + 2 * pad) / cell))
    hh = int(np.ceil((h + 2 * pad) / cell))
    c_lo, c_hi = int(np.ceil(x0 / cell)), int(np.floor(x1 / cell)) - ww + 1  # window's first cell
    r_lo, r_hi = int(np.ceil(y0 / cell)), int(np.floor(y1 / cell)) - hh + 1
    c_lo, r_lo = max(c_lo - 1, 0), max(r_lo - 1, 0)  # the pad may reach into the page margin
    c_hi, r_hi = min(c_hi + 1, nx - ww), min(r_hi + 1, ny - hh)
    if c_hi < c_lo or r_hi < r_lo:
        return None
    from ..kernels.raster import nearest_free_window

    found, bx, by = nearest_free_window(sat, r_lo, r_hi, c_lo, c_hi, hh, ww, float(cell), float(pad), float(x0),
                                        float(y0), float(x1), float(y1), float(w), float(h))
    return (float(bx), float(by)) if found else None


#: a legend in the content's free room stands in one of its corners: at most this share of the
#: room's width (height) from its right or left (top or bottom) edge
CORNER_SLACK = 0.04


def corner_place(grid: np.ndarray, cell: float, room, size, pad: float, sat=None) -> tuple | None:
    """`free_corner` limited to the corners of ``room``: a ``size`` block, ``pad`` clear all
    round, with its sides within `CORNER_SLACK` of the room's at one corner (the top right
    first, then bottom right, top left, bottom left); None when no corner is free.  Free room
    between lanes (a browser's trace: a sparse renderer lane between busy ones) is no place
    for a legend: read there, it is taken for part of the figure."""
    x0, y0, x1, y1 = (float(v) for v in room)
    w, h = size
    span_w = w + 2 * pad + CORNER_SLACK * (x1 - x0)
    span_h = h + 2 * pad + CORNER_SLACK * (y1 - y0)
    sat = summed_area(grid) if sat is None else sat
    for right, top in ((True, True), (True, False), (False, True), (False, False)):
        sub = (max(x1 - span_w, x0) if right else x0, y0 if top else max(y1 - span_h, y0),
               x1 if right else min(x0 + span_w, x1), min(y0 + span_h, y1) if top else y1)
        at = free_corner(grid, cell, sub, size, pad, sat)
        if at is not None:
            return at
    return None


def legend_in_corner(plan_full: HudPlan, plan_column: HudPlan, corner, res, columns: int = 1) -> HudPlan:
    """``plan_column``'s legend moved to ``corner`` (`free_corner`) of ``plan_full``'s
    content rectangle (the whole width), in one or more columns: the content keeps the
    legend's column, the title stays ``plan_full``'s (a grown legend does not grow it)."""
    splits = column_splits(plan_column, columns)
    col_w = legend_size(plan_column, res, 1)[0] + plan_column.text_px if splits else 0.0
    return HudPlan(plan_full.rect, plan_full.title, plan_full.title_px, plan_column.legend_rows, corner[0],
                   corner[1], plan_column.text_px, plan_column.row_px, splits, col_w)


def legend_box(plan: HudPlan) -> tuple:
    """(x0, y0, x1, y1) pixels of a plan's legend block where it is drawn (`hud_layers`),
    in one column or more (``plan.splits``)."""
    if not plan.legend_rows:
        return (plan.legend_x, plan.legend_y, plan.legend_x, plan.legend_y)
    def width(rows):
        return max(text_width(t) * plan.text_px * (1.05 if k == "heading" else 1.0) + swatch_room(k, sl, plan.text_px)
                   for t, sl, k in rows)

    cols = _columns(plan.legend_rows, plan.splits)
    w = max(k * plan.column_w + width(rows) for k, rows in enumerate(cols))
    h = max(sum(_row_h(plan, k) for _, _, k in rows) for rows in cols)
    return (plan.legend_x, plan.legend_y, plan.legend_x + w, plan.legend_y + h)


#: a two-column legend's columns are at most this share of the image width (rows wrap)
TWO_COLUMN_FRAC = 0.13

#: a legend placed in free room of the content is drawn this many times the labels' text
#: size where the room takes it (the largest that fits, else the next; its heading stays
#: below the title's `TITLE_SCALE`): the page's empty room goes to a legend that reads from
#: the back of a room
LEGEND_GROWTH = (1.4, 1.25, 1.12)
#: a legend placed in free room is tried in up to this many narrow columns
MAX_LEGEND_COLUMNS = 3


def title_box(plan: HudPlan, res) -> tuple:
    """(x0, y0, x1, y1) pixels the title row of ``plan`` takes: from the page's corner to the
    title's end, down to the content rectangle."""
    m = HUD_MARGIN_FRAC * res[1]
    return (0.0, 0.0, m + text_width(plan.title) * plan.title_px, plan.rect[1])


def legend_placement(plan_full: HudPlan, plan_column: HudPlan, grid: np.ndarray, cell: float, res, replan=None):
    """``plan_column``'s legend in a free corner of ``plan_full``'s content (`corner_place`):
    one column, else one narrower column, else two narrower ones (``replan(max_legend_frac,
    scale)`` makes the plan with rows fitted to ``max_legend_frac`` of the width at ``scale``
    times the text size, `free_room_replan`; `TWO_COLUMN_FRAC`), each tried first grown
    (`LEGEND_GROWTH`, the rows and the width fitted as at the plain size, nothing cut) and
    then plain; last `MAX_LEGEND_COLUMNS` narrower ones at the plain size (a long legend in
    a wide, low room: above a thread that idles); None when none fits."""
    plain = [(plan_column, 1)]
    grown = []
    if replan is not None:
        narrow = replan(TWO_COLUMN_FRAC, 1.0)
        plain += [(narrow, c) for c in range(1, MAX_LEGEND_COLUMNS + 1)]
        shapes = ((LEGEND_COLUMN_FRAC, replan(LEGEND_COLUMN_FRAC, 1.0), (1,)), (TWO_COLUMN_FRAC, narrow, tuple(range(1, MAX_LEGEND_COLUMNS + 1))))
        for k in LEGEND_GROWTH:
            for frac, at_plain, columns in shapes:
                big = replan(frac * k, k)
                if [r[0] for r in big.legend_rows] == [r[0] for r in at_plain.legend_rows]:  # the same rows
                    grown += [(big, c) for c in columns]
    # the legend may rise into the title row beside the title (the title keeps its box)
    m = HUD_MARGIN_FRAC * res[1]
    x0, y0, x1, y1 = plan_full.rect
    room = (x0, min(m, y0), x1, y1)
    if plan_full.title and y0 > m:
        grid = grid | occupancy_grid(res, cell, rects=[title_box(plan_full, res)])
    sat = summed_area(grid)  # one table for every shape tried
    for plan, columns in grown + plain:
        if not plan.legend_rows:
            continue
        corner = corner_place(grid, cell, room, legend_size(plan, res, columns), 0.8 * plan.text_px, sat)
        if corner is not None:
            return legend_in_corner(plan_full, plan, corner, res, columns)
    return None


def free_room_replan(res, text_px: float, title, legend_rows, show_title: bool):
    """The ``replan(max_legend_frac, scale)`` of `legend_placement` for a view's legend: its
    rows fitted to that share of the width at ``scale`` times ``text_px``, none cut (the
    placement checks that the block fits where it goes)."""
    return lambda frac, scale: plan_hud(res, text_px * scale, title, legend_rows, show_title, True,
                                        max_legend_frac=frac, fit_height=False)


#: a word that is a unit of the number before it: the two stay on one line ("11.1 s",
#: not "11.1" at a line's end and "s)" under it)
_UNIT_WORD = re.compile(r"(?:s|ms|µs|us|ns|min|h|%|B|kB|KB|MB|GB|TB|KiB|MiB|GiB|calls?|samples?|Ir)(?!\w)")
#: a number a unit may follow: digits, or a measure's SI prefix after them ("1.2k samples")
_NUMBER_END = re.compile(r"\d[kMGT]?$")


def _words(text: str) -> list:
    """``text`` split at spaces, a number and its unit one word (`_UNIT_WORD`)."""
    out: list = []
    for word in text.split(" "):
        if out and _NUMBER_END.search(out[-1]) and _UNIT_WORD.match(word):
            out[-1] = f"{out[-1]} {word}"
        else:
            out.append(word)
    return out


def _wrap(text: str, width_em: float) -> list:
    """``text`` broken at spaces into lines of at most ``width_em`` (a long word is cut), never
    between a number and its unit (`_words`)."""
    lines, cur = [], ""
    for word in _words(text):
        trial = f"{cur} {word}" if cur else word
        if text_width(trial) <= width_em or not cur:
            cur = trial
        else:
            lines.append(cur)
            cur = word
    lines.append(cur)
    return [ln if text_width(ln) <= width_em else cut_end(ln, width_em) for ln in lines]


def hud_layers(plan: HudPlan, cam: CameraSpec, res, swatch_rgb, swatch_materials):
    """Title and legend as camera-space labels and swatches (``slot`` of a legend row
    indexes ``swatch_rgb`` / ``swatch_materials``)."""
    dist = 0.05 * float(np.linalg.norm(np.asarray(cam.location) - np.asarray(cam.target)))
    dist = max(dist, 4.0 * cam.clip_start)
    px = camera_pixel_size(cam, res, dist)
    texts, pix, sizes, mats, kinds = [], [], [], [], []
    if plan.title:
        texts.append(plan.title)
        pix.append((res[1] * 0.03, res[1] * 0.03 + plan.title_px * ASCENT))
        sizes.append(plan.title_px)
        mats.append("TV3D_text_ui")
        kinds.append("title")
    sw_pos, sw_mat, sw_col = [], [], []
    y = plan.legend_y
    for i, (text, slot, kind) in enumerate(plan.legend_rows):
        column = sum(i >= s for s in plan.splits)
        if i in plan.splits:
            y = plan.legend_y
        base = y + plan.text_px * ASCENT
        x = plan.legend_x + column * plan.column_w
        slots = slot if kind == "ramp" else (slot,) if kind == "swatch" and slot >= 0 else ()
        for j, sl in enumerate(slots):  # a ramp's swatches touch: one scale
            cx, cy = x + (0.5 + RAMP_SWATCH_EM * j) * plan.text_px, base - 0.5 * plan.text_px * 0.9
            sw_pos.append((cx, cy))
            sw_mat.append(sl)
            sw_col.append(sl)
        x += swatch_room(kind, slot, plan.text_px) if slots else 0.0
        texts.append(text)
        pix.append((x, base))
        sizes.append(plan.text_px * (1.05 if kind == "heading" else 1.0))
        mats.append("TV3D_text_muted" if kind == "note" else "TV3D_text_ui")
        kinds.append("legend")
        y += plan.row_px * (1.25 if kind == "heading" else 1.0)
    n = len(texts)
    local = camera_local_from_pixels(cam, np.array(pix, np.float64).reshape(-1, 2), res, dist)
    labels = LabelSet(texts, local.astype(np.float32), (np.array(sizes) * px).astype(np.float32), mats,
                      np.zeros(n, np.uint8), kinds, np.full(n, -1, np.int32),
                      np.zeros((n, 3), np.float32), ["camera"] * n)
    layer = None
    if sw_pos:
        k = len(sw_pos)
        c = camera_local_from_pixels(cam, np.array(sw_pos), res, dist * 1.001)
        side = 0.9 * plan.text_px * px
        sc = np.tile(np.array([side, side, side * 0.05], np.float32), (k, 1))
        cols = np.ones((k, 4), np.float32)
        cols[:, :3] = np.asarray(swatch_rgb)[np.array(sw_col)]
        layer = InstanceLayer("legend", c.astype(np.float32), sc, cols, np.array(sw_mat, np.int32),
                              list(swatch_materials), {"call_index": np.full(k, -1, np.int32)}, space="camera")
    return labels, layer, dist


MATERIAL_TEXT_COLOURS = {"TV3D_text_ui": TEXT_UI, "TV3D_text_muted": TEXT_MUTED}


def centre_with_legend(cam: CameraSpec, grid: np.ndarray, cell: float, plan: HudPlan, full_rect, res,
                       pad: float) -> HudPlan:
    """`camera.centre_content` of what ``grid`` holds, with ``plan``'s legend: a legend placed
    in the content's free room (``plan.rect`` is ``full_rect``, the whole width) moves with
    the content (one translation keeps them apart) where it stays on the page and off the
    title (a legend beside a cone blocked the tree's move to the middle: unittest's 9 %
    empty margin); else the content moves as far as it stays clear of the legend.  Returns
    the plan (its legend moved or not); changes ``cam`` in place."""
    keep_out = legend_box(plan) if plan.legend_rows else None
    if keep_out is not None and tuple(plan.rect) == tuple(full_rect):
        shift = (cam.shift_x, cam.shift_y)
        dx, dy = centre_content(cam, grid, cell, plan.rect, res)
        m = HUD_MARGIN_FRAC * res[1]
        bx0, by0, bx1, by1 = keep_out
        beside_title = by0 < full_rect[1]  # risen into the title row: it may not move towards the title
        if (dx or dy) and (bx0 + dx >= m and bx1 + dx <= res[0] - m and by1 + dy <= res[1] - m
                           and by0 + dy >= min(by0, full_rect[1]) and not (beside_title and dx < 0)):
            return replace(plan, legend_x=plan.legend_x + dx, legend_y=plan.legend_y + dy)
        cam.shift_x, cam.shift_y = shift
    centre_content(cam, grid, cell, plan.rect, res, keep_out, pad)
    return plan
