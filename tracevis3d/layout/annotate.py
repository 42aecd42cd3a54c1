"""Annotation stages: time axis, lane names, title and legend (bpy-free).

The time axis and the lane names belong to the geometry (world space, facing the camera,
sized in pixels at their place).  The title and the legend are a heads-up display in
camera space (`spec` ``space="camera"``), laid out in pixels around the content
rectangle, so they never overlap the icicle and stay framed when the camera moves.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from .camera import camera_local_from_pixels, camera_pixel_size
from .labels import TEXT_MUTED, TEXT_UI, place_facing_text
from .spec import CameraSpec, InstanceLayer, LabelSet
from .text import ASCENT, DESCENT, cut_end, fit_text, name_candidates, text_width

_UNITS = ((1e6, "s"), (1e3, "ms"), (1.0, "µs"), (1e-3, "ns"))
MAX_LANE_NAME_EM = 14.0  # a lane name longer than this (in label sizes) is cut at its end


def fmt_time(us: float) -> str:
    """A duration in µs with a unit chosen for its size (3 significant digits)."""
    a = abs(us)
    for scale, unit in _UNITS:
        if a >= scale or scale == 1e-3:
            return f"{us / scale:.3g} {unit}"
    return f"{us:.3g} µs"  # pragma: no cover


def nice_ticks(span_us: float, target: int = 6) -> tuple:
    """(tick values in µs from 0, unit scale, unit name, decimals): a 1-2-5 step giving about
    ``target`` ticks over ``span_us``, every tick written in the same unit."""
    span_us = max(float(span_us), 1e-9)
    raw = span_us / target
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    ticks = np.arange(0.0, span_us * (1 + 1e-9), step)
    scale, unit = next(((s, u) for s, u in _UNITS if ticks[-1] >= s), (1e-3, "ns"))
    dec = max(0, -int(math.floor(math.log10(step / scale) + 1e-9)))
    return ticks, scale, unit, dec


def tick_texts(ticks, scale, unit, dec) -> list:
    return [("0" if t == 0 else f"{t / scale:.{dec}f} {unit}") for t in ticks]


def time_axis(t0, t1, scale_t, z_axis, cam, res, to_cam, size_world, px_world, time_length):
    """Tick labels (world) and tick marks (an InstanceLayer) under the lanes."""
    ticks, scale, unit, dec = nice_ticks(t1 - t0)
    texts = tick_texts(ticks, scale, unit, dec)
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
    pos, sc = np.array(pos, np.float32), np.array(sc, np.float32)
    m = pos.shape[0]
    marks = InstanceLayer("axis", pos, sc, np.tile(np.array([TEXT_MUTED], np.float32), (m, 1)),
                          np.zeros(m, np.int32), ["TV3D_axis"], {"call_index": np.full(m, -1, np.int32)})
    return labels, marks, (ticks, unit)


def lane_labels(names, z_base, z_top, cam, res, to_cam, size_world, gap_world):
    """Lane names right-aligned left of the time origin, at the bottom of each lane."""
    n = len(names)
    if n == 0:
        return LabelSet.empty()
    names = [cut_end(nm, MAX_LANE_NAME_EM) for nm in names]
    zc = np.minimum(np.asarray(z_base) + 0.6 * size_world, np.asarray(z_top))
    face = np.stack([np.full(n, -gap_world), np.zeros(n), zc], 1)
    anchor, rot = place_facing_text(face, cam, np.full(n, size_world), to_cam)
    return LabelSet(list(names), anchor.astype(np.float32), np.full(n, size_world, np.float32),
                    ["TV3D_text_ui"] * n, np.full(n, 2, np.uint8), ["lane"] * n, np.full(n, -1, np.int32),
                    rot.astype(np.float32), ["world"] * n)


def trace_title(trace, sel, params) -> str:
    """``json_tool · 113,078 calls · 1 thread · 39.2 ms`` (plus the window when there is one)."""
    if params.title is not None:
        return params.title
    src = str(trace.meta.get("source") or trace.meta.get("subset_of") or "trace")
    name = os.path.basename(src)
    for ext in (".gz", ".json", ".npz", ".tv3d"):
        if name.lower().endswith(ext):
            name = name[: -len(ext)]
    for ext in (".json", ".tv3d"):
        if name.lower().endswith(ext):
            name = name[: -len(ext)]
    n_threads = int(sel.lane_threads.size)
    parts = [name, f"{sel.idx.size:,} calls", f"{n_threads} thread{'s' if n_threads != 1 else ''}"]
    if sel.windowed:
        parts.append(f"{fmt_time(sel.t1 - sel.t0)} window from {fmt_time(sel.t0)}")
    else:
        parts.append(fmt_time(sel.t1 - sel.t0))
    return " · ".join(parts)


@dataclass
class HudPlan:
    """The heads-up display in pixels: where the content goes and what is drawn around it."""

    rect: tuple  # content rectangle (x0, y0, x1, y1), pixels, y down
    title: str
    title_px: float
    legend_rows: list  # (text, slot or -1, kind) per row; kind: "heading" | "swatch" | "note"
    legend_x: float  # left edge of the legend column
    legend_y: float
    text_px: float
    row_px: float


HUD_MARGIN_FRAC = 0.03  # page margin, as a fraction of the image height


def hud_top(res, text_px: float, has_title: bool, margin_frac: float = HUD_MARGIN_FRAC) -> float:
    """Top edge (pixels) of the content rectangle: below the title row when there is one."""
    m = margin_frac * res[1]
    return m + 1.25 * text_px * (ASCENT + DESCENT) + 0.9 * text_px if has_title else m


def content_height(res, text_px: float, has_title: bool, margin_frac: float = HUD_MARGIN_FRAC) -> float:
    """Height (pixels) of the content rectangle `plan_hud` leaves (the legend is a column
    at the side, so it does not change the height)."""
    return res[1] - margin_frac * res[1] - hud_top(res, text_px, has_title, margin_frac)


def plan_hud(res, text_px, title, legend_rows, show_title: bool, show_legend: bool,
             margin_frac: float = HUD_MARGIN_FRAC, max_legend_frac: float = 0.2) -> HudPlan:
    """Reserve the title row and the legend column; the rest is the content rectangle."""
    w, h = res
    m = margin_frac * h
    title_px = 1.25 * text_px
    top = hud_top(res, text_px, bool(show_title and title), margin_frac)
    if show_title and title:
        title = cut_end(title, (w - 2 * m) / title_px)
    row_px = 1.45 * text_px
    legend_x = w - m
    rows = []
    if show_legend and legend_rows:
        max_w = max_legend_frac * w
        swatch = 1.5 * text_px
        rows_fit = []
        avail_rows = int(max((h - top - m) / row_px, 1))
        for text, slot, kind in legend_rows:
            room = (max_w - (swatch if kind == "swatch" else 0.0)) / text_px
            if kind == "swatch":
                rows_fit.append((fit_text(name_candidates(text), room) or cut_end(text, room), slot, kind))
            else:  # headings and notes wrap at spaces
                for k, line in enumerate(_wrap(text, room)):
                    rows_fit.append((line, slot if k == 0 else -1, kind if k == 0 else "note"))
        rows_fit = rows_fit[:avail_rows]
        width = max((text_width(t) * text_px * (1.05 if k == "heading" else 1.0)
                     + (swatch if k == "swatch" else 0.0)) for t, _, k in rows_fit)
        legend_x = w - m - width
        rows = rows_fit
    x1 = (legend_x - 1.5 * text_px) if rows else w - m
    rect = (m, top, x1, h - m)
    return HudPlan(rect, title if show_title else "", title_px, rows, legend_x, top, text_px, row_px)


def _wrap(text: str, width_em: float) -> list:
    """``text`` broken at spaces into lines of at most ``width_em`` (a long word is cut)."""
    lines, cur = [], ""
    for word in text.split(" "):
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
    swatch = 1.5 * plan.text_px
    y = plan.legend_y
    for text, slot, kind in plan.legend_rows:
        base = y + plan.text_px * ASCENT
        x = plan.legend_x
        if kind == "swatch" and slot >= 0:
            cx, cy = x + 0.5 * plan.text_px, base - 0.5 * plan.text_px * 0.9
            sw_pos.append((cx, cy))
            sw_mat.append(slot)
            sw_col.append(slot)
            x += swatch
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
