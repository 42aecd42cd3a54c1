"""Memory over time: Memcov Viz (Brandt's survey of execution visualisation, Sec. 2.16) in 3D,
`MemoryCapture` → SceneSpec (bpy-free).

Memcov Viz draws every allocated range as a Gantt chart whose width is the range's size, time
running down the screen, ranges side by side along a byte axis.  Here time runs along x (as in
every other view, so the view can sit under an icicle on the same axis), and the bands are
*stacked* along z: a band's thickness at a moment is the bytes it holds then (`kernels.memcov
.band_grid`), and the top edge of the stack is the heap, so the high-water mark is where the
stack is tallest.  Stacking, not Memcov's side-by-side placement, is a deliberate change: with
time along x a side-by-side byte axis would show the sum of every range ever made, not the
memory held.

A band is an allocation site (the frame that called the allocator; Memcov's "call site"), a
module, or a single range (``group_by``); bands are ordered by their first allocation (Memcov's
creation order; grouping by site keeps a site's ranges next to each other, its "group by call
site" option).  Bands thinner than ``min_band_px`` at their thickest are merged with their
thin neighbours into grey aggregates (`kernels.memcov.merge_thin`: Memcov's rule, its
underspecified part, the width of an aggregate of time-varying bands, taken as the sum of their
peaks).  A band's columns are in full colour where it allocated in that moment and dimmed where
it only held memory (Memcov shows accesses; memray records no accesses, so allocation is the
activity shown).  Depth into the picture is the allocation rate (allocations per second).
Leaked ranges (alive at the end) are a red cap after the run's end; the high-water mark is a
vertical line with memray's figure.

The stages (`band_plan`, `band_geometry`, `band_legend_rows`, `band_labels`, `axis_labels`) are
shared with the figure under the calls' icicle (`layout.memory_calls`).  Over 600 lines: the
bands' stages and their labels are one pipeline that both figures run, with the call strip and
the alignment of the two clocks that the icicle's figure imports from here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..io.memray import MemoryCapture
from ..kernels.memcov import band_grid, group_span, merge_thin
from ..params.memory import MemoryParams
from .annotate import LEGEND_COLUMN_FRAC, MATERIAL_TEXT_COLOURS, SWATCH_EM, hud_layers, plan_hud
from .camera import fit_camera_rect, project, world_per_pixel
from .labels import TEXT_DARK, TEXT_LIGHT, contrast_text_material, place_facing_text, text_px
from .palette import categorical, lighten
from .spec import InstanceLayer, LabelSet, LegendEntry, LightSpec, MaterialSpec, SceneSpec
from .text import cut_end, text_width

CHART_W = 16.0  # world units of the time axis
HEADROOM = 1.05  # the plot reaches this far above the heap's peak (room for the high-water mark's name)
PANEL_Y = 1.8  # the plot panel stands behind the deepest column
PANEL_RGB = (0.80, 0.80, 0.81)  # linear: a light grey plot panel, the byte grid on it
GRID_RGB = (0.62, 0.62, 0.64)
DEPTH_MIN, DEPTH_MAX = 0.15, 1.6  # depth of a column that holds bytes but does not allocate / at the highest rate
GREY = (0.42, 0.42, 0.44)
LEAK_RGB = (0.75, 0.05, 0.04)
HWM_RGB = (0.05, 0.05, 0.06)
IDLE_LIGHTEN = 0.5  # a band's colour where it allocates nothing in that moment
MAX_COLOURED = 24  # named bands get distinct colours; the rest of the big ones cycle them
MAX_LEGEND_SITES = 20
MAX_GRID_CELLS = 20_000_000  # bands × columns held at once (float64: 160 MB)


def fmt_bytes(b: float) -> str:
    b = float(b)
    for unit, f in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(b) >= f:
            v = b / f
            return f"{v:.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"
    return f"{int(b)} B"


def fmt_ms(ms: float) -> str:
    return f"{ms / 1000.0:.3g} s" if abs(ms) >= 1000 else f"{ms:.3g} ms"


def band_keys(cap: MemoryCapture, group_by: str) -> tuple:
    """(band per range, band names, band order by first allocation).  ``site``: the range's
    site; ``module``: its site's module; ``range``: the range itself."""
    if group_by == "range":
        names = None
        return np.arange(cap.n_ranges, dtype=np.int64), names
    site = cap.range_site.astype(np.int64)
    if group_by == "module":
        mods = [cap.site_module(s) for s in range(cap.n_sites)]
        uniq = {m: k for k, m in enumerate(dict.fromkeys(mods))}
        of_site = np.array([uniq[m] for m in mods], np.int64) if mods else np.zeros(0, np.int64)
        return (of_site[site] if site.size else site), list(uniq)
    return site, [cap.site_label(s) for s in range(cap.n_sites)]


def capture_span(cap: MemoryCapture) -> float:
    """The time axis' end (ms): the capture's duration, or its last range's end if later."""
    return max(float(cap.duration_ms), float(cap.range_end.max()), 1e-6)


def thickness_note(cap: MemoryCapture, params: MemoryParams) -> tuple:
    """The legend's first row: what a band's thickness is."""
    t1 = capture_span(cap)
    return (cap.meta.get("thickness_note") or  # a reader that holds no lifetimes says what a band is instead
            f"band thickness: bytes held (time-weighted per {fmt_ms(t1 / int(params.bins))} column); the stack's top "
            f"is the heap", -1, "note")


def memory_title(cap: MemoryCapture, params: MemoryParams) -> str:
    return params.title if params.title is not None else cap.meta.get("figure_title") or (
        f"{capture_program(cap)} · memory over time · peak {fmt_bytes(cap.peak_bytes)} · {cap.n_allocations:,} allocator "
        f"records · leaked {fmt_bytes(cap.leaked_bytes)} · memray {cap.meta.get('memray_version', '')}")


@dataclass
class BandPlan:
    """The bands of a capture for a chart ``chart_px`` pixels tall (`band_plan`): which band
    each range is in, the grey aggregates, bytes held and allocations per group and column,
    and the named groups' names and colours."""

    band: np.ndarray  # band of each range
    n_bands: int
    rank: np.ndarray  # bands in creation order
    pos_of: np.ndarray  # position of each band in that order
    t1: float  # the time axis' end (ms)
    n_bins: int
    group: np.ndarray  # group of each band in creation order
    is_agg: np.ndarray  # per group: a grey aggregate
    gheld: np.ndarray  # (groups, bins) bytes held
    galloc: np.ndarray  # (groups, bins) allocations
    members: list  # per group: its bands
    named: list  # the groups named and coloured, largest (bytes × time) first
    g_rgb: np.ndarray  # per group: its colour
    g_name: list  # per group: its name

    @property
    def n_groups(self) -> int:
        return int(self.is_agg.size)


def band_plan(cap: MemoryCapture, params: MemoryParams, chart_px: float) -> BandPlan:
    """Bands in creation order, the thin ones merged into grey aggregates at a chart of
    ``chart_px`` pixels (`_grouped_grid`), named and coloured largest first."""
    band, names = band_keys(cap, params.group_by)
    n_bands = int(band.max()) + 1
    # bands in creation order: the first allocation of each
    first, _ = group_span(band, cap.range_start, cap.range_end, n_bands)
    rank = np.argsort(first, kind="stable")
    pos_of = np.empty(n_bands, np.int64)
    pos_of[rank] = np.arange(n_bands)
    n_bins = int(params.bins)
    t1 = capture_span(cap)
    group, is_agg, n_groups, gheld, galloc = _grouped_grid(cap, params, band, pos_of[band], rank, n_bands, t1, n_bins,
                                                           chart_px, float(params.min_band_px))
    members = [[] for _ in range(n_groups)]
    for b in range(n_bands):
        members[group[b]].append(int(rank[b]))
    area = gheld.sum(axis=1)
    # names and colours: the largest named (non-aggregate) groups by bytes × time
    named = [g for g in np.argsort(-area, kind="stable").tolist() if not is_agg[g] and area[g] > 0]
    palette = categorical(MAX_COLOURED)
    g_rgb = np.tile(np.asarray(GREY, np.float64), (n_groups, 1))
    for k, g in enumerate(named):
        g_rgb[g] = palette[k % MAX_COLOURED]
    g_name = [_group_name(cap, names, members[g], bool(is_agg[g])) for g in range(n_groups)]
    return BandPlan(band, n_bands, rank, pos_of, t1, n_bins, group, is_agg, gheld, galloc, members, named, g_rgb,
                    g_name)


def band_legend_rows(cap: MemoryCapture, params: MemoryParams, bp: BandPlan, n_legend: int, room_em: float,
                     slot0: int = 0) -> tuple:
    """(legend rows, the rows naming sites): the heading, the ``n_legend`` largest named
    groups with their peaks (swatch slots from ``slot0``), how many more, the grey
    aggregates and what pale and depth mean."""
    rows = []
    # a capture whose bands are not allocation sites names what they are (memory-infra: allocators or heap stacks)
    site_noun = str(cap.meta.get("site_noun") or "allocation site")
    what = {"site": site_noun, "module": "module", "range": "range"}[params.group_by]
    rows.append((f"colour: {what}, largest first", -1, "heading"))
    site_rows = []
    for k, g in enumerate(bp.named[:n_legend]):
        size = "" if params.group_by == "range" else f" · {fmt_bytes(bp.gheld[g].max())}"  # a range's name has it
        site_rows.append(cut_end(bp.g_name[g], room_em - text_width(size)) + size)
        rows.append((site_rows[-1], slot0 + k, "swatch"))
    if len(bp.named) > n_legend:
        rows.append((f"{len(bp.named) - n_legend} more {what}s in colour", -1, "note"))
    if bp.is_agg.any():
        rows.append((f"grey: {int(bp.is_agg.sum())} aggregates of bands under {params.min_band_px:g} px (Memcov)",
                     -1, "note"))
    rows.append((cap.meta.get("activity_note") or "pale: holding, not allocating; depth: allocations per second",
                 -1, "note"))
    return rows, site_rows


def leak_rows(cap: MemoryCapture, has_leaks: bool) -> list:
    """The legend's row for the red cap (none without leaks)."""
    if not has_leaks:
        return []
    return [(f"{cap.meta['leak_note']}, {fmt_bytes(cap.leaked_bytes)} in all" if cap.meta.get("leak_note")
             else f"red cap: held now, {fmt_bytes(cap.leaked_bytes)} in all (the program runs on)"
             if cap.meta.get("running") else f"red cap: leaked at exit, {fmt_bytes(cap.leaked_bytes)} in all",
             -1, "note")]


@dataclass
class BandGeometry:
    """The chart's boxes in its own world (x in [0, `CHART_W`], z from 0 up, the panel
    lowered by ``drop``; `band_geometry`)."""

    panel: InstanceLayer
    bands: InstanceLayer
    marks: InstanceLayer  # the high-water mark's line
    leaks: InstanceLayer | None  # the red caps
    band_mats: list
    mat_rgb: np.ndarray
    zs: float  # world z per byte
    base: np.ndarray  # (groups, bins) bytes under each group
    hx: float  # the high-water mark's x
    cap_w: float  # the red caps' width
    drop: float  # how far the panel is lowered
    top: float  # the heap's peak in the columns (bytes)

    def layers(self) -> list:
        return [self.panel, self.bands, self.marks] + ([self.leaks] if self.leaks is not None else [])


def band_geometry(cap: MemoryCapture, params: MemoryParams, bp: BandPlan, chart_h: float) -> BandGeometry:
    """A box per group and column that holds bytes (as thick as the bytes, as deep as the
    allocation rate, full colour where it allocated, pale where it only held), the red caps
    of leaked bytes after the last column, the high-water mark's line and the plot panel, for
    a chart ``chart_h`` world units tall whose heap peak is its top."""
    gheld, galloc, t1, n_bins = bp.gheld, bp.galloc, bp.t1, bp.n_bins
    top = max(float(gheld.sum(axis=0).max()), 1.0)
    zs = chart_h / top
    w = CHART_W / n_bins
    base = np.cumsum(gheld, axis=0) - gheld
    gi, bi = np.nonzero(gheld > 0)
    rate = galloc / max(t1 / n_bins / 1000.0, 1e-9)  # allocations per second
    rmax = max(float(rate.max()), 1.0)
    depth = DEPTH_MIN + (DEPTH_MAX - DEPTH_MIN) * np.sqrt(rate[gi, bi] / rmax)
    active = galloc[gi, bi] > 0
    # a material per colour slot, full and pale (Workbench shows a material's colour): slot k of
    # the named colours, the grey aggregates last
    palette = categorical(MAX_COLOURED)
    n_slots = min(len(bp.named), MAX_COLOURED) + 1
    g_slot = np.full(bp.n_groups, n_slots - 1, np.int64)
    for k, g in enumerate(bp.named):
        g_slot[g] = k % MAX_COLOURED
    slot_rgb = np.vstack([palette[:n_slots - 1], np.asarray(GREY)[None]])
    mat_rgb = np.vstack([slot_rgb, lighten(slot_rgb, IDLE_LIGHTEN)])
    band_mats = [f"TV3D_memory_{k:02d}" for k in range(n_slots)] + [f"TV3D_memory_{k:02d}_pale" for k in range(n_slots)]
    mat_index = (g_slot[gi] + np.where(active, 0, n_slots)).astype(np.int32)
    z0 = base[gi, bi] * zs
    dz = gheld[gi, bi] * zs
    positions = np.stack([(bi + 0.5) * w, 0.5 * depth, z0 + 0.5 * dz], 1).astype(np.float32)
    scales = np.stack([np.full(gi.size, w), depth, dz], 1).astype(np.float32)
    colors = np.ones((gi.size, 4), np.float32)
    colors[:, :3] = mat_rgb[mat_index]
    bands_layer = InstanceLayer("memory_bands", positions, scales, colors, mat_index, band_mats,
                                {"call_index": np.full(gi.size, -1, np.int32), "band_index": gi.astype(np.int32),
                                 "bin_index": bi.astype(np.int32)})
    # leaks: per group, the bytes of its ranges alive at the end, a red cap after the last column
    leak_b = np.zeros(bp.n_groups)
    lk = cap.range_leaked
    if lk.any():
        np.add.at(leak_b, bp.group[bp.pos_of[bp.band[lk]]], cap.range_size[lk].astype(np.float64))
    lg = np.flatnonzero(leak_b > 0)
    cap_w = 0.012 * CHART_W
    lz0 = base[lg, -1] * zs
    ldz = np.minimum(leak_b[lg], np.maximum(gheld[lg, -1], leak_b[lg])) * zs
    leak_layer = InstanceLayer(
        "memory_leaks", np.stack([np.full(lg.size, CHART_W + 0.5 * cap_w), np.full(lg.size, 0.4), lz0 + 0.5 * ldz],
                                 1).astype(np.float32),
        np.stack([np.full(lg.size, cap_w), np.full(lg.size, 0.8), np.maximum(ldz, 0.004 * chart_h)], 1).astype(
            np.float32),
        np.tile(np.array(LEAK_RGB + (1.0,), np.float32), (lg.size, 1)), np.zeros(lg.size, np.int32),
        ["TV3D_memory_leak"], {"call_index": np.full(lg.size, -1, np.int32), "band_index": lg.astype(np.int32),
                               "bin_index": np.full(lg.size, n_bins - 1, np.int32)}) if lg.size else None
    # the high-water mark: a vertical line at its moment, as tall as the heap's peak
    hx = float(np.clip(cap.hwm_ms / t1, 0.0, 1.0)) * CHART_W
    marks = InstanceLayer("memory_marks", np.array([[hx, -0.02, 0.5 * chart_h * HEADROOM]], np.float32),
                          np.array([[0.035, 0.04, chart_h * HEADROOM]], np.float32),
                          np.array([HWM_RGB + (1.0,)], np.float32), np.zeros(1, np.int32), ["TV3D_memory_mark"],
                          {"call_index": np.full(1, -1, np.int32)})
    drop = PANEL_Y * np.tan(np.radians(params.elevation))
    panel = _plot_panel(chart_h, top, zs, drop)
    return BandGeometry(panel, bands_layer, marks, leak_layer, band_mats, mat_rgb, zs, base, hx, cap_w, drop, top)


def bands_meta(cap: MemoryCapture, bp: BandPlan) -> list | None:
    """What picking says, per group (None past 5000 groups): its ranges found once by a sort."""
    if bp.n_groups > 5000:
        return None
    rg = bp.group[bp.pos_of[bp.band]]
    by = np.argsort(rg, kind="stable")
    cut = np.searchsorted(rg[by], np.arange(bp.n_groups + 1))
    return [_band_meta(cap, by[cut[g]:cut[g + 1]], len(bp.members[g]), bool(bp.is_agg[g]), bp.g_name[g], bp.gheld[g])
            for g in range(bp.n_groups)]


def memory_layout(cap: MemoryCapture, params: MemoryParams | None = None, calls=None,
                  calls_offset_us: float | None = None) -> SceneSpec:
    """The memory view of ``cap`` (module docstring); with ``calls`` (a `Trace` of the same run)
    under a strip of its outermost calls on the same time axis (`align_calls`, `_call_strip`;
    `memory_calls.memory_figure` chooses this or the whole icicle by ``calls_view``).
    ``calls_offset_us``: the trace's time at the capture's 0 when the two clocks are known to
    each other, as the live feed's and memray's wall clocks are."""
    params = (params or MemoryParams()).validate()
    if cap.n_ranges == 0:
        raise ValueError(f"no allocations to show in {cap.source}")
    res = tuple(params.resolution)
    tpx = text_px(params)
    t1 = capture_span(cap)
    rows = [thickness_note(cap, params)]
    title = memory_title(cap, params)
    # the HUD plan first (it sets the chart's pixels, and so which bands are too thin)
    plan0 = plan_hud(res, tpx, title, rows + [("x", 0, "swatch")] * (MAX_LEGEND_SITES + 6), params.show_title,
                     params.show_legend)
    bp = band_plan(cap, params, (plan0.rect[3] - plan0.rect[1]) * 0.86)
    named, g_rgb, g_name = bp.named, bp.g_rgb, bp.g_name

    # the legend: the named sites (their swatches are their bands' colours), then what the marks mean
    room_em = (LEGEND_COLUMN_FRAC * res[0] - SWATCH_EM * tpx) / tpx - 0.5
    n_legend = min(len(named), MAX_LEGEND_SITES)
    site_legend, site_rows = band_legend_rows(cap, params, bp, n_legend, room_em)
    legend_rows = rows + site_legend
    plan = plan_hud(res, tpx, title, legend_rows, params.show_title, params.show_legend)
    to_cam = to_camera(params.azimuth, params.elevation)
    x0r, y0r, x1r, y1r = plan.rect
    rect = (x0r + 4.0 * tpx, y0r + 1.6 * tpx, x1r, y1r - 2.0 * tpx)
    # the chart's height: the rectangle's shape, so the chart fills it
    strip = align_calls(cap, calls, t1, calls_offset_us) if calls is not None else None
    strip_rows = int(strip["depth"].max()) + 1 if strip is not None and strip["depth"].size else 0
    chart_h = CHART_W * (rect[3] - rect[1]) / max(rect[2] - rect[0], 1.0) / (HEADROOM + STRIP_ROW * strip_rows
                                                                              + (STRIP_GAP if strip_rows else 0.0))
    geo = band_geometry(cap, params, bp, chart_h)
    zs, hx, drop = geo.zs, geo.hx, geo.drop
    leak_note = leak_rows(cap, geo.leaks is not None)
    if leak_note:
        plan = plan_hud(res, tpx, title, legend_rows + leak_note, params.show_title, params.show_legend)
    strip_top = chart_h * (HEADROOM + (STRIP_GAP + STRIP_ROW * strip_rows if strip_rows else 0.0))
    corners = np.array([[x, y, z] for x in (0.0, CHART_W + geo.cap_w) for y in (0.0, PANEL_Y)
                        for z in (-drop, strip_top - drop)])
    cam = fit_camera_rect(corners, to_cam, res, rect, orthographic=True)
    strip_layer = strip_labels = None
    if strip_rows:
        strip_layer, strip_labels, strip_mats = _call_strip(strip, calls, t1, chart_h, cam, res, tpx, to_cam)

    labels = []
    if params.show_labels:
        labels.append(band_labels(cam, res, tpx, to_cam, named[:int(params.max_labels)], g_name, g_rgb, bp.gheld,
                                   geo.base, zs, CHART_W / bp.n_bins, hx,
                                   group_kind="range" if params.group_by == "range" else "site"))
    labels.append(axis_labels(cam, res, tpx, to_cam, t1, geo.top, zs, hx, cap, chart_h))
    swatch_rgb = np.array([g_rgb[g] for g in named[:n_legend]] or [GREY], np.float64)
    swatch_mats = [f"TV3D_memory_sw{k:02d}" for k in range(len(swatch_rgb))]
    hud_labels, legend_layer, hud_dist = hud_layers(plan, cam, res, swatch_rgb, swatch_mats)
    site_kinds(hud_labels, site_rows, params.group_by)
    layers = [geo.panel, geo.bands, geo.marks]
    if strip_layer is not None:
        layers.append(strip_layer)
        labels.append(strip_labels)
    if geo.leaks is not None:
        layers.append(geo.leaks)
    if legend_layer is not None:
        layers.append(legend_layer)
    mats = memory_materials(geo.band_mats, geo.mat_rgb, strip_mats if strip_layer is not None else {}, swatch_mats,
                      swatch_rgb)
    all_labels = LabelSet.concat(labels + [hud_labels])
    spec = SceneSpec(
        layers=layers, labels=all_labels, legend=[LegendEntry(g_name[g], tuple(g_rgb[g])) for g in named[:n_legend]],
        materials=mats, camera=cam, lights=memory_lights(params), resolution=res, background=(1.0, 1.0, 1.0),
        meta={**memory_meta(cap, params, bp, geo, 1.0 / zs),
              "calls_offset_us": None if strip is None else strip["offset_us"],
              "calls_alignment": None if strip is None else strip["how"],
              "n_calls_drawn": 0 if strip is None else int(strip["depth"].size),
              "n_labels": len(all_labels), "title": plan.title, "content_rect": list(plan.rect),
              "hud_distance": hud_dist, "text_px": tpx},
    )
    return spec.validate()


def site_kinds(hud_labels: LabelSet, site_rows: list, group_by: str) -> None:
    """A legend row naming a site is a site's name (kind ``site``, or ``range``)."""
    kinds = list(hud_labels.kind)
    site_set = set(site_rows)
    for i, t in enumerate(hud_labels.texts):
        if kinds[i] == "legend" and t in site_set:
            kinds[i] = "site" if group_by != "range" else "range"
    hud_labels.kind = kinds


def memory_lights(params: MemoryParams) -> list:
    return [LightSpec("TV3D_key", "SUN", tuple(-to_camera(params.azimuth - 35.0, 50.0)), 3.0),
            LightSpec("TV3D_fill", "SUN", tuple(-to_camera(params.azimuth + 60.0, 15.0)), 0.8)]


def memory_meta(cap: MemoryCapture, params: MemoryParams, bp: BandPlan, geo: BandGeometry, bytes_per_unit: float,
                chart_w: float = CHART_W) -> dict:
    """The figure's record of the bands (`SceneSpec.meta`): the capture's figures, the
    groups, the columns and what a world unit of height holds (``bytes_per_unit``)."""
    return {"layout": "memory", "t0": 0.0, "t1": bp.t1, "x_unit": "ms", "source": cap.source,
            "peak_bytes": cap.peak_bytes, "n_allocations": cap.n_allocations, "leaked_bytes": cap.leaked_bytes,
            "hwm_ms": cap.hwm_ms, "n_bands": bp.n_bands, "n_groups": bp.n_groups,
            "n_aggregates": int(bp.is_agg.sum()), "n_named": len(bp.named), "n_boxes": len(geo.bands),
            "bin_ms": bp.t1 / bp.n_bins, "bins": bp.n_bins, "chart_w": chart_w, "bytes_per_unit": bytes_per_unit,
            "bands": bands_meta(cap, bp), "group_by": params.group_by, "params": params.to_dict()}


def _grouped_grid(cap, params, band, ordered, rank, n_bands, t1, n_bins, chart_px, min_px) -> tuple:
    """(group of each band in creation order, is_agg per group, n_groups, bytes held and
    allocations per group and column): the bands thinner than ``min_px`` at the chart's
    ``chart_px`` merged into grey aggregates (`merge_thin`, Memcov's rule)."""
    if params.group_by == "range":
        # a range is as thick as its size for all its life (Memcov's Gantt charts): the thin ones
        # are merged before any grid is made (the peak heap stands for the chart's top); where the
        # groups would still make too large a grid the threshold doubles until they do not
        while True:
            group, is_agg, n_groups = merge_thin(cap.range_size[rank] * (chart_px / max(cap.peak_bytes, 1)), min_px)
            if n_groups * n_bins <= MAX_GRID_CELLS:
                break
            min_px *= 2.0
        g_of_band = np.empty(n_bands, np.int64)
        g_of_band[rank] = group
        gheld, galloc = band_grid(g_of_band[band], cap.range_start, cap.range_end, cap.range_size, n_groups, 0.0,
                                  t1, n_bins)
    else:
        held, allocs = band_grid(ordered, cap.range_start, cap.range_end, cap.range_size, n_bands, 0.0, t1, n_bins)
        top0 = max(float(held.sum(axis=0).max()), 1.0)
        group, is_agg, n_groups = merge_thin(held.max(axis=1) * chart_px / top0, min_px)
        gheld = np.zeros((n_groups, n_bins))
        np.add.at(gheld, group, held)
        galloc = np.zeros((n_groups, n_bins), np.int64)
        np.add.at(galloc, group, allocs)
    return group, is_agg, n_groups, gheld, galloc


def memory_materials(band_mats, mat_rgb, strip_mats: dict, swatch_mats, swatch_rgb) -> dict:
    """The memory view's materials: a band's colour slots (full and pale), the marks, the panel,
    the call strip's, the legend's swatches and the text."""
    mats = {name: MaterialSpec(name, tuple(float(c) for c in rgb) + (1.0,), cushion=False, from_attribute=False)
            for name, rgb in zip(band_mats, mat_rgb)}
    for name, rgb in (("TV3D_memory_leak", LEAK_RGB), ("TV3D_memory_panel", PANEL_RGB), ("TV3D_memory_grid", GRID_RGB),
                      ("TV3D_memory_mark", HWM_RGB), *strip_mats.items(), *zip(swatch_mats, swatch_rgb)):
        mats[name] = MaterialSpec(name, tuple(float(c) for c in rgb) + (1.0,), cushion=False, from_attribute=False)
    for name, c in (("TV3D_text_dark", TEXT_DARK), ("TV3D_text_light", TEXT_LIGHT), *MATERIAL_TEXT_COLOURS.items()):
        mats[name] = MaterialSpec(name, c, kind="text", cushion=False, from_attribute=False)
    return mats


def _plot_panel(chart_h: float, top: float, zs: float, drop: float) -> InstanceLayer:
    """The plot's panel behind the bands (the run's time span × the byte range) with a line at
    every byte tick, so a band's thickness can be read off the grid.  The camera looks down on
    the chart, so the panel, behind it, is lowered by ``drop`` (its depth × tan(elevation)) to
    line its grid up with the bands' front faces and the tick labels in front."""
    ticks = [v * zs for v in nice(0.0, top, 5) if 0 < v * zs < chart_h * HEADROOM]
    n = 1 + len(ticks)
    pos = np.zeros((n, 3), np.float32)
    sc = np.zeros((n, 3), np.float32)
    pos[0] = (0.5 * CHART_W, PANEL_Y + 0.01, 0.5 * chart_h * HEADROOM - drop)
    sc[0] = (CHART_W, 0.02, chart_h * HEADROOM)
    for k, z in enumerate(ticks, 1):
        pos[k] = (0.5 * CHART_W, PANEL_Y - 0.005, z - drop)
        sc[k] = (CHART_W, 0.01, 0.0025 * chart_h)
    cols = np.ones((n, 4), np.float32)
    cols[0, :3] = PANEL_RGB
    cols[1:, :3] = GRID_RGB
    mi = np.ones(n, np.int32)
    mi[0] = 0
    return InstanceLayer("memory_panel", pos, sc, cols, mi, ["TV3D_memory_panel", "TV3D_memory_grid"],
                         {"call_index": np.full(n, -1, np.int32)})


#: the call strip (``--trace``): a row's height and the gap under it, in shares of the chart's height
STRIP_ROW, STRIP_GAP = 0.055, 0.05
STRIP_DEPTH = 6  # stack levels of the calls drawn above the bands
STRIP_COLOURS = 12


def align_calls(cap: MemoryCapture, trace, t1: float, offset_us: float | None = None) -> dict:
    """The calls of ``trace`` (the same run, traced for calls) on the capture's clock.

    memray's clock starts when its tracker starts; a call tracer's at its own start (py-spy:
    when it launched the process; VizTracer: its first event).  Neither records the other's, so
    the two are aligned on the program itself: the first call of a function in the program's own
    file (the capture's command line names it) and the first allocation with a frame of that file
    in its stack happen together; the offset between them maps the trace's µs to the capture's
    ms.  Without such a file (or a frame of it in either), the two ends are aligned (both stop when
    the program does).  The calls drawn: the busiest thread's, at most `STRIP_DEPTH` levels deep,
    inside the capture's span.  ``offset_us`` given (the trace's µs at the capture's 0): that,
    "the wall clocks".  Returns {"call", "x0", "x1" (ms), "depth", "offset_us", "how"}."""
    offset, how, top_depth = None, "", 0
    prog = capture_program(cap).split()[0] if cap.command_line else ""
    if not prog.endswith(".py"):  # a runner in front (``-m tracevis3d.live run ... program.py``): its script
        prog = next((w for w in capture_program(cap, 99).split() if w.endswith(".py")), prog)
    base = prog.rsplit("/", 1)[-1] if prog.endswith(".py") else ""
    fids = [i for i, f in enumerate(trace.function_files) if base and f and (
        f.replace("\\", "/").endswith("/" + base) or f == base)]
    m = np.isin(trace.func, fids) if fids else np.zeros(len(trace.func), bool)
    if m.any():
        top_depth = int(trace.depth[m].min())  # the program's own outermost level
    if offset_us is not None:
        offset, how = float(offset_us), "the wall clocks"
    elif m.any():
        frames = {i for i, f in enumerate(cap.frame_file) if f and (f.endswith("/" + base) or f == base)}
        stacks = cap.stack_frames.touching(frames)  # one pass over the stacks' trie, not stacks × depth
        sel = stacks[cap.range_stack] if stacks.size else np.zeros(0, bool)
        if sel.any():
            offset = float(trace.start[m].min()) - 1000.0 * float(cap.range_start[sel].min())
            how = f"first call and first allocation in {base}"
        else:
            top_depth = 0
    if offset is None:
        offset = float(trace.end.max()) - 1000.0 * float(cap.duration_ms)
        how = "the ends of the run"
    lanes = np.bincount(trace.thread, minlength=1)
    main = int(np.argmax(lanes))
    x0 = (trace.start - offset) / 1000.0
    x1 = (trace.end - offset) / 1000.0
    keep = ((trace.thread == main) & (trace.depth >= top_depth) & (trace.depth < top_depth + STRIP_DEPTH)
            & (x1 > 0.0) & (x0 < t1))
    idx = np.flatnonzero(keep)
    d = trace.depth[idx].astype(np.int64)
    if d.size:
        d = d - d.min()
    return {"call": idx, "x0": np.clip(x0[idx], 0.0, t1), "x1": np.clip(x1[idx], 0.0, t1), "depth": d,
            "offset_us": offset, "how": how}


def _call_strip(strip, trace, t1, chart_h, cam, res, tpx, to_cam):
    """The calls above the bands: an icicle whose rows go up from the chart's top (the outermost
    calls lowest, next to the memory they held), coloured by function, the wide ones named."""
    from .palette import categorical

    idx, d = strip["call"], strip["depth"]
    row = STRIP_ROW * chart_h
    z_base = chart_h * (HEADROOM + STRIP_GAP)
    xa = strip["x0"] / t1 * CHART_W
    xb = strip["x1"] / t1 * CHART_W
    wide = xb - xa
    func = trace.func[idx].astype(np.int64)
    slot = (func % STRIP_COLOURS).astype(np.int32)
    rgb = lighten(categorical(STRIP_COLOURS), 0.25)
    pos = np.stack([0.5 * (xa + xb), np.full(idx.size, 0.3), z_base + (d + 0.5) * row], 1).astype(np.float32)
    sc = np.stack([np.maximum(wide, 1e-4), np.full(idx.size, 0.6), np.full(idx.size, 0.94 * row)], 1).astype(
        np.float32)
    cols = np.ones((idx.size, 4), np.float32)
    cols[:, :3] = rgb[slot]
    names = [f"TV3D_memory_call{k:02d}" for k in range(STRIP_COLOURS)]
    layer = InstanceLayer("memory_calls", pos, sc, cols, slot, names,
                          {"call_index": idx.astype(np.int32)})
    wpp = float(world_per_pixel(cam, np.zeros((1, 3)), res)[0])
    size = 0.8 * tpx * wpp
    texts, pts, called = [], [], []
    for k in np.argsort(-wide, kind="stable")[:60].tolist():
        name = trace.name(int(idx[k])) if hasattr(trace, "name") else trace.function_names[int(func[k])]
        room = wide[k] / size - 0.8
        t = cut_end(name, room) if room > 3 else ""
        if t and len(t) >= 3 and row >= 1.1 * size:
            texts.append(t)
            called.append(int(idx[k]))
            pts.append((0.5 * (xa[k] + xb[k]), 0.0, z_base + (d[k] + 0.5) * row))
    n = len(texts)
    if n:
        anchor, rot = place_facing_text(np.array(pts), cam, np.full(n, size), to_cam)
        labels = LabelSet(texts, anchor.astype(np.float32), np.full(n, size, np.float32),
                          ["TV3D_text_dark"] * n, np.ones(n, np.uint8), ["call"] * n, np.array(called, np.int32),
                          rot.astype(np.float32))
    else:
        labels = LabelSet.empty()
    return layer, labels, dict(zip(names, rgb))




def to_camera(azimuth: float, elevation: float) -> np.ndarray:
    """Unit vector from the chart towards the camera: in front (-y), turned by ``azimuth`` about
    z and raised by ``elevation``."""
    a, e = np.radians(azimuth), np.radians(elevation)
    return np.array([np.sin(a) * np.cos(e), -np.cos(a) * np.cos(e), np.sin(e)])


#: options of ``memray run`` that take a value (the value is not the program)
_MEMRAY_VALUE_OPTIONS = {"-o", "--output", "-p", "--live-port"}


def capture_program(cap: MemoryCapture, n_words: int = 3) -> str:
    """The program a capture ran (its first ``n_words`` words after ``memray run``'s options)."""
    words = cap.command_line.split()
    for k, wd in enumerate(words):
        if wd == "run":
            after = words[k + 1:]
            rest = [x for j, x in enumerate(after) if not x.startswith("-") and not x.endswith(".bin")
                    and not (j and after[j - 1] in _MEMRAY_VALUE_OPTIONS)]
            if rest:
                return " ".join(rest[:n_words])
    return cap.source.rsplit("/", 1)[-1]


def _group_name(cap: MemoryCapture, names, members: list, agg: bool) -> str:
    if agg:
        return f"{len(members)} thin bands"
    m = members[0]
    if names is None:  # a range
        s = int(cap.range_site[m])
        return f"{fmt_bytes(cap.range_size[m])} at {cap.site_label(s)}"
    return names[m]


def _band_meta(cap, sel, n_members, agg, name, held_row) -> dict:
    """What picking a band says: its name, the bytes it holds at its peak, when it first
    allocated, its threads and its heaviest call stack (``sel``: its ranges)."""
    info = {"name": name, "aggregate": agg, "members": n_members, "peak_bytes": float(held_row.max())}
    if sel.size:
        sz = cap.range_size[sel].astype(np.float64)
        st = np.bincount(cap.range_stack[sel], weights=sz)
        heavy = int(np.argmax(st))
        th = np.bincount(cap.range_thread[sel], weights=sz)
        info.update({"first_ms": float(cap.range_start[sel].min()), "last_ms": float(cap.range_end[sel].max()),
                     "allocations": int(sel.size), "bytes_allocated": int(sz.sum()),
                     "leaked_bytes": int(sz[cap.range_leaked[sel]].sum()),
                     "threads": [cap.thread_names[int(t)] for t in np.argsort(-th)[:3] if th[t] > 0],
                     "stack": cap.stack_text(heavy, 12)})
        if sel.size == 1:
            k = int(sel[0])
            info.update({"size": int(cap.range_size[k]), "address": hex(int(cap.range_address[k]))})
    return info


def band_labels(cam, res, tpx, to_cam, named, g_name, g_rgb, gheld, base, zs, w, hx, group_kind: str) -> LabelSet:
    """Names inside the bands: each named band, largest first, at the run of columns around its
    thickest one where it is at least a text line thick and as long as its name; no overlap."""
    wpp = float(world_per_pixel(cam, np.zeros((1, 3)), res)[0])
    texts, pts, mats = [], [], []
    taken = [(hx - 0.4 * tpx * wpp, -1e9, hx + 0.4 * tpx * wpp, 1e9)]  # the high-water mark's line
    need_z = 1.25 * tpx * wpp
    for g in named:
        bot = base[g] * zs
        topz = (base[g] + gheld[g]) * zs
        if float(np.max(topz - bot)) < need_z:
            continue
        text = g_name[g]
        for attempt in range(3):  # the whole name, then shorter: the longest run of room decides
            width_w = text_width(text) * tpx * wpp * 1.04
            L = max(int(np.ceil(width_w / w)), 1)
            if L > bot.size:
                text = cut_end(g_name[g], bot.size * w / (tpx * wpp) - 1.0)
                continue
            win_lo = np.lib.stride_tricks.sliding_window_view(bot, L).max(axis=1)
            win_hi = np.lib.stride_tricks.sliding_window_view(topz, L).min(axis=1)
            room = win_hi - win_lo
            if float(room.max()) >= need_z:
                break
            # the widest stretch where the band is a line thick says how long a name fits
            thick = (topz - bot) >= need_z
            run = best = 0
            for v in thick:
                run = run + 1 if v else 0
                best = max(best, run)
            text = cut_end(g_name[g], best * w / (tpx * wpp) - 1.0)
        else:
            continue
        if not text or len(text) < 4:
            continue
        order = np.argsort(-room, kind="stable")
        placed = None
        for j in order[:64].tolist():  # the roomiest windows first; the first that overlaps no name
            if room[j] < need_z:
                break
            cx = (j + 0.5 * L) * w
            cz = 0.5 * (win_lo[j] + win_hi[j])
            box = (cx - 0.5 * width_w, cz - 0.6 * tpx * wpp, cx + 0.5 * width_w, cz + 0.6 * tpx * wpp)
            if not any(not (box[2] < t[0] or box[0] > t[2] or box[3] < t[1] or box[1] > t[3]) for t in taken):
                placed = (cx, cz, box)
                break
        if placed is None:
            continue
        cx, cz, box = placed
        taken.append(box)
        texts.append(text)
        pts.append((cx, 0.0, cz))
        mats.append(contrast_text_material(lighten(np.asarray([g_rgb[g]]), 0.5 * IDLE_LIGHTEN))[0])
    n = len(texts)
    if not n:
        return LabelSet.empty()
    size = np.full(n, tpx * wpp)
    anchor, rot = place_facing_text(np.array(pts), cam, size, to_cam)
    return LabelSet(texts, anchor.astype(np.float32), size.astype(np.float32), mats, np.ones(n, np.uint8),
                    [group_kind] * n, np.full(n, -1, np.int32), rot.astype(np.float32))


def axis_labels(cam, res, tpx, to_cam, t1, top, zs, hx, cap, chart_h) -> LabelSet:
    """Time ticks under the chart, byte ticks at its left, and the high-water mark's name."""
    wpp = float(world_per_pixel(cam, np.zeros((1, 3)), res)[0])
    s = 0.85 * tpx * wpp
    texts, pts, align, kinds = [], [], [], []
    for v in nice(0.0, t1 / 1000.0, 7):
        texts.append(f"{v:g} s"); pts.append((v * 1000.0 / t1 * CHART_W, 0.0, -1.1 * tpx * wpp)); align.append(1)
        kinds.append("axis")
    for v in nice(0.0, top, 5):
        texts.append(fmt_bytes(v)); pts.append((-0.5 * tpx * wpp, 0.0, v * zs - 0.35 * s)); align.append(2)
        kinds.append("axis")
    texts.append(f"high-water mark {fmt_bytes(cap.peak_bytes)} at {fmt_ms(cap.hwm_ms)}")
    pts.append((hx, 0.0, chart_h * HEADROOM + 0.45 * tpx * wpp))
    align.append(1 if 0.15 * CHART_W < hx < 0.85 * CHART_W else (0 if hx <= 0.15 * CHART_W else 2))
    kinds.append("axis")
    n = len(texts)
    size = np.full(n, s)
    size[-1] = tpx * wpp
    anchor, rot = place_facing_text(np.array(pts), cam, size, to_cam)
    return LabelSet(texts, anchor.astype(np.float32), size.astype(np.float32), ["TV3D_text_ui"] * n,
                    np.array(align, np.uint8), kinds, np.full(n, -1, np.int32), rot.astype(np.float32))


def nice(lo: float, hi: float, n: int) -> list:
    """Round axis ticks in [lo, hi], about ``n`` of them, a step of 1, 2, 2.5 or 5 times a power of ten."""
    span = max(hi - lo, 1e-12)
    raw = span / max(n, 1)
    mag = 10 ** np.floor(np.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), default=10 * mag)
    k = np.arange(np.ceil(lo / step), np.floor(hi / step) + 1)
    return [float(round(v * step, 12)) for v in k]


__all__ = ["memory_layout", "fmt_bytes", "project"]
