"""The critical path drawn (``critical_path``: `render-icicle --critical-path`,
`render-threads --critical-path`, the panel's "Critical path"): a stage of the icicle and the
thread view, bpy-free.

- **colour** (`path_colouring`, `dim_slots`): the calls on the path (active on their thread
  while the path is there: the innermost call of a segment and its callers) keep their
  colour, every other call is pale (SEAT's highlighting, `colour.highlight_colouring`);
- **ribbon** (`icicle_path_layers`, `ring_path_layers`): one tube along each stretch of the
  path on a thread -- thick where the thread ran, thin where it waited or idled with no known
  waker -- under the lane's level 0 (the icicle) or just inside the ring's level 0 (the
  thread view), in `PATH_RGB`;
- **hand-offs**: an arc from the release on one lane to the wake-up on the other, bowed
  towards the camera (the icicle) or into the semicircle (the thread view), so the ribbon
  reads as one line across the lanes;
- **legend** (`path_legend_rows`): the path's wall time, its share per thread (most first)
  and, on each, per function (the innermost calls' own time), as `tracevis3d.critical_path`'s
  ``summary()`` says it.

The path is computed once per trace (`path_of`, kept with the trace object) on the trace the
user loaded, so the icicle, the thread view's ring and its focused icicle light the same path.
"""
from __future__ import annotations

import weakref

import numpy as np

from . import palette
from .colour import Colouring
from .spec import MaterialSpec, TubeLayer

#: the path's colour (sRGB): a magenta none of the calls' palettes uses, strong against pale calls
PATH_SRGB = (0.80, 0.02, 0.55)
PATH_RGB = tuple(float(c) for c in palette.srgb_to_linear(PATH_SRGB))
PATH_MATERIAL = "TV3D_critical_path"
#: ribbon half widths in pixels: where the thread ran, where it waited or idled, a hand-off's arc
RUN_PX, REST_PX, ARC_PX = 3.0, 1.2, 1.6
#: running stretches closer than this many pixels are one tube
MERGE_PX = 1.0
#: at most this many ribbon tubes (the merge gap doubles until they are fewer)
MAX_TUBES = 4000
ARC_SAMPLES = 16
#: threads and functions the legend names
LEGEND_THREADS, LEGEND_FUNCTIONS = 4, 3

_PATHS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def path_of(trace, sync=None):
    """`tracevis3d.critical_path` of ``trace``, computed once per trace object."""
    cp = _PATHS.get(trace)
    if cp is None:
        from ..analysis.critical_path import critical_path

        cp = _PATHS[trace] = critical_path(trace, sync=sync)
    return cp


#: a call keeps its colour when the path is on it for at least this share of its time
ON_PATH_SHARE = 0.5


def path_time_within(cp, thread: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """µs of the path on each call's thread within the call's time (its thread, start, end):
    the path's cumulative time on a thread, interpolated at the call's ends (its segments on a
    thread are disjoint and in time order)."""
    from ..analysis.critical_path import HANDOFF

    out = np.zeros(np.asarray(start).shape, np.float64)
    seg = cp.why != HANDOFF
    th, a, b = cp.thread[seg], cp.start[seg], cp.end[seg]
    for k in np.unique(th).tolist():
        m = np.flatnonzero(thread == k)
        if not m.size:
            continue
        sa, sb = a[th == k], b[th == k]
        xs = np.ravel(np.stack([sa, sb], 1))  # each segment's start and end
        cum = np.ravel(np.stack([np.r_[0.0, np.cumsum(sb - sa)[:-1]], np.cumsum(sb - sa)], 1))
        out[m] = np.interp(end[m], xs, cum) - np.interp(start[m], xs, cum)
    return out


def on_path(cp, thread: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """bool per call (its thread, start, end): on the path for at least `ON_PATH_SHARE` of its
    time (a call the path passes through is its segments' innermost call or one of their
    callers; a root call the path visits for a moment is not lit for it)."""
    thread, start, end = np.asarray(thread), np.asarray(start, np.float64), np.asarray(end, np.float64)
    d = end - start
    lit = (path_time_within(cp, thread, start, end) >= ON_PATH_SHARE * d) & (d > 0)
    zero = np.flatnonzero(d <= 0)  # an instant: on the path when the path is on its thread then
    if zero.size:
        eps = 1e-9 * max(1.0, abs(cp.t_last))
        lit[zero] = path_time_within(cp, thread[zero], start[zero] - eps, end[zero] + eps) > 0
    return lit


def shown_on_path(cp, sel) -> np.ndarray:
    """`on_path` of the shown calls of selection ``sel`` (through their indices in the trace
    the user loaded, whose path ``cp`` is)."""
    tr = cp.trace
    calls = sel.original(sel.idx).astype(np.int64)
    return on_path(cp, tr.thread[calls], tr.start[calls], tr.end[calls])


def path_legend_rows(cp, swatch: int, max_threads: int = LEGEND_THREADS, max_functions: int = LEGEND_FUNCTIONS) -> list:
    """HUD legend rows (text, slot, kind): a heading with the path's wall time, the ribbon's
    swatch (slot ``swatch``), then per thread its share of the wall time and its functions'."""
    from ..analysis.critical_path_text import fmt_us, function_label, pct, thread_rows

    span = cp.span
    tr = cp.trace
    n = cp.handoffs.size
    rows = [(f"critical path: {fmt_us(span)}, {n} hand-off{'s' if n != 1 else ''}", -1, "heading"),
            ("the path: thick where it runs, thin where it waits", swatch, "swatch")]
    for k, us, fs in thread_rows(cp, max_threads, max_functions):
        rows.append((f"{pct(us, span)} of the wall time on {tr.thread_names[k]}", -1, "note"))
        if fs:
            rows.append((", ".join(f"{function_label(tr, f)} {pct(x, span)}" for f, x in fs), -1, "note"))
    rest = span - sum(us for _, us, _ in thread_rows(cp, max_threads, 0))
    if rest > 0.005 * span:
        rows.append((f"{pct(rest, span)} on other threads and in hand-offs", -1, "note"))
    return rows


def path_colouring(trace, sel, colouring):
    """The colouring with the calls off the path pale and a slot for the ribbon
    (`PathColouring`)."""
    from .colour import highlight_colouring

    cp = path_of(trace)
    keep = shown_on_path(cp, sel)
    pale = highlight_colouring(colouring, keep, "on the critical path") if not keep.all() else colouring
    rgb = np.vstack([pale.slot_rgb, np.asarray(PATH_RGB)[None, :]])
    slot = len(pale.slot_rgb)
    return PathColouring(pale.mode, pale.title, pale.slot, rgb, list(pale.slot_names) + [PATH_MATERIAL + "_swatch"],
                         list(pale.legend), np.vstack([pale.cluster_rgb, np.asarray(PATH_RGB)[None, :]]),
                         pale.categorical, path=cp, rows=path_legend_rows(cp, slot))


class PathColouring(Colouring):
    """A `Colouring` that carries the critical path (``path``) and its legend rows (``rows``)."""

    def __init__(self, *args, path=None, rows=(), **kw):
        super().__init__(*args, **kw)
        self.path = path
        self.rows = list(rows)


def dim_slots(slot: np.ndarray, slot_rgb: np.ndarray, cluster_rgb: np.ndarray, keep: np.ndarray) -> tuple:
    """(slot, slot_rgb, cluster_rgb) with the calls not ``keep`` in a pale slot of their own
    (`colour.PALE_RGB`, slot ``len(slot_rgb)``), and the path's colour after it (a legend
    swatch: the thread view's ring bars)."""
    from .colour import PALE_RGB

    pale = len(slot_rgb)
    rgb = np.vstack([slot_rgb, np.asarray(PALE_RGB)[None, :], np.asarray(PATH_RGB)[None, :]])
    crgb = np.vstack([cluster_rgb, np.asarray(PALE_RGB)[None, :], np.asarray(PATH_RGB)[None, :]])
    return np.where(keep, slot, pale).astype(np.int32), rgb, crgb


#: the thread view's hand-off curves under a critical path: this much paler, this much as opaque
CURVE_DIM_LIGHTEN, CURVE_DIM_ALPHA = 0.8, 0.25


class ThreadsPath:
    """The thread view's critical-path stage: its ring bars recoloured (`recolour`), its
    legend rows (``rows``, once recoloured), its layers (`layers`: the ribbon on the ring and
    on the focused icicle, SyncTrace's curves dimmed) and ``materials``."""

    def __init__(self, trace, sync, sel):
        self.cp = path_of(trace, sync)
        self.sel = sel
        self.rows: list = []
        self.materials = path_materials()

    def recolour(self, slot, slot_rgb, cluster_rgb, bar_rows) -> tuple:
        slot, rgb, crgb = dim_slots(slot, slot_rgb, cluster_rgb, shown_on_path(self.cp, self.sel))
        self.rows = path_legend_rows(self.cp, len(rgb) - 1)
        return slot, rgb, crgb, list(bar_rows) + [("pale: not on the critical path", len(rgb) - 2, "swatch")]

    def layers(self, curve_layers, curve_materials: dict, comp, ring, place, px_units: float) -> list:
        """The ribbon's layers; SyncTrace's curves, markers and circles (``curve_layers``, their
        ``curve_materials``) paler and fainter, in place: behind the path."""
        from dataclasses import replace

        for lay in curve_layers:
            lay.colors[:, :3] = palette.lighten(lay.colors[:, :3], CURVE_DIM_LIGHTEN).astype(np.float32)
            lay.colors[:, 3] *= CURVE_DIM_ALPHA
        for name, ms in list(curve_materials.items()):
            rgb = palette.lighten(np.asarray(ms.color[:3], np.float64)[None, :], CURVE_DIM_LIGHTEN)[0]
            alpha = (float(ms.color[3]) if len(ms.color) == 4 else 1.0) * CURVE_DIM_ALPHA
            curve_materials[name] = replace(ms, color=tuple(float(c) for c in rgb) + (alpha,), blended=True)
        out = ring_path_layers(self.cp, self.sel, ring, place, px_units)
        st = getattr(comp, "st", None)
        if st is not None and getattr(st.colouring, "path", None) is not None and comp.frame is not None:
            out += icicle_path_layers(st.colouring.path, st.sel, comp.frame, st.sel.t0, st.sel.t1, "wall_")
        return out


def path_materials() -> dict:
    """The ribbon's and the arcs' material (a tube, opaque) and the legend swatch's."""
    rgba = PATH_RGB + (1.0,)
    return {PATH_MATERIAL: MaterialSpec(PATH_MATERIAL, rgba, kind="tube", cushion=False, gloss=0.2,
                                        from_attribute=False),
            PATH_MATERIAL + "_swatch": MaterialSpec(PATH_MATERIAL + "_swatch", rgba, cushion=False)}


def ribbon_runs(cp, t0: float, t1: float, gap_us: float) -> tuple:
    """(thread, a, b, thick) of the ribbon's tubes inside [t0, t1]: per stretch of the path on
    a thread (between hand-offs) one thin tube over all of it, and one thick tube per run of
    running segments closer than ``gap_us`` (doubled while there are more than `MAX_TUBES`)."""
    from ..analysis.critical_path import HANDOFF, RUNNING

    p_t, p_a, p_b, _ = cp.meta["pieces"]
    keep = (p_b > t0) & (p_a < t1)
    rail = (p_t[keep], np.clip(p_a[keep], t0, t1), np.clip(p_b[keep], t0, t1))
    run = (cp.why == RUNNING) & (cp.end > t0) & (cp.start < t1)
    th, a, b = cp.thread[run], np.clip(cp.start[run], t0, t1), np.clip(cp.end[run], t0, t1)
    # the stretch each segment belongs to: hand-offs before it
    stretch = np.cumsum(cp.why == HANDOFF)[run]
    gap = max(gap_us, 0.0)
    while True:
        new = np.ones(th.size, bool)
        if th.size:
            new[1:] = (stretch[1:] != stretch[:-1]) | (a[1:] - b[:-1] > gap)
        if int(new.sum()) + rail[0].size <= MAX_TUBES or gap >= (t1 - t0):
            break
        gap = 2 * gap if gap > 0 else (t1 - t0) / MAX_TUBES
    first = np.flatnonzero(new)
    last = np.r_[first[1:] - 1, th.size - 1] if first.size else first
    return (np.r_[rail[0], th[first]].astype(np.int64), np.r_[rail[1], a[first]], np.r_[rail[2], b[last]],
            np.r_[np.zeros(rail[0].size, bool), np.ones(first.size, bool)])


def _tubes(name: str, centres: np.ndarray, radius: np.ndarray, kind: np.ndarray, index: np.ndarray) -> TubeLayer:
    m = centres.shape[0]
    half = np.repeat(np.asarray(radius, np.float32).reshape(m, 1), centres.shape[1], 1)
    col = np.tile(np.array(PATH_RGB + (1.0,), np.float32), (m, 1))
    return TubeLayer(name, centres.astype(np.float32), half, half.copy(), col, np.zeros(m, np.int32),
                     [PATH_MATERIAL], {"match_index": np.full(m, -1, np.int32),
                                       "path_part": np.asarray(kind, np.int32), "path_index": index.astype(np.int32)},
                     sides=6, face_colors=False, cross_section="normal")


def handoff_rows(cp, t0: float, t1: float, lane_of_thread: np.ndarray) -> np.ndarray:
    """Rows of the hand-offs whose two ends are on shown lanes and inside [t0, t1]."""
    h = cp.handoffs
    ok = (cp.start[h] >= t0) & (cp.end[h] <= t1)
    ok &= (lane_of_thread[cp.from_thread[h]] >= 0) & (lane_of_thread[cp.thread[h]] >= 0)
    return h[ok]


def icicle_path_layers(cp, sel, frame, t0: float, t1: float, name_prefix: str = "") -> list:
    """The ribbon and the hand-off arcs on an icicle's lanes (``frame``: `layout.frame`): a
    lane's ribbon runs a third of a level under its level 0, a little in front of the boxes;
    an arc leaves the releasing lane's ribbon at the release and reaches the waking lane's
    at the wake-up, bowed towards the camera by a quarter of its length."""
    lane_of = sel.lane_of_thread()
    px = np.asarray(frame.px, np.float64)
    us_per_px = float(np.median(frame.us_per_px))
    th, a, b, thick = ribbon_runs(cp, t0, t1, MERGE_PX * us_per_px)
    lane = lane_of[th]
    ok = lane >= 0
    th, a, b, thick, lane = th[ok], a[ok], b[ok], thick[ok], lane[ok]
    h = float(frame.h)
    z_of = np.asarray(frame.z_base, np.float64) - 0.35 * h
    y_front = -0.25 * h
    m = th.size
    centres = np.zeros((m, 2, 3))
    centres[:, 0, 0] = (a - t0) * frame.scale_t
    centres[:, 1, 0] = (b - t0) * frame.scale_t
    centres[:, :, 1] = y_front
    centres[:, :, 2] = z_of[lane][:, None]
    radius = np.where(thick, RUN_PX, REST_PX) * px[lane]
    layers = [_tubes(f"{name_prefix}critical_path", centres, radius, thick.astype(np.int32), np.arange(m))] if m else []
    hr = handoff_rows(cp, t0, t1, lane_of)
    if hr.size:
        lu, lt = lane_of[cp.from_thread[hr]], lane_of[cp.thread[hr]]
        p0 = np.stack([(cp.start[hr] - t0) * frame.scale_t, np.full(hr.size, y_front), z_of[lu]], 1)
        p2 = np.stack([(cp.end[hr] - t0) * frame.scale_t, np.full(hr.size, y_front), z_of[lt]], 1)
        length = np.linalg.norm(p2 - p0, axis=1)
        p1 = 0.5 * (p0 + p2)
        p1[:, 1] -= 0.25 * length + 4 * px[lt]
        layers.append(_tubes(f"{name_prefix}critical_path_handoffs", _bezier(p0, p1, p2),
                             ARC_PX * px[lt], np.full(hr.size, 2), hr))
    return layers


def _bezier(p0, p1, p2) -> np.ndarray:
    u = np.linspace(0.0, 1.0, ARC_SAMPLES)
    a, bb, c = (1 - u) ** 2, 2 * u * (1 - u), u ** 2
    return a[None, :, None] * p0[:, None, :] + bb[None, :, None] * p1[:, None, :] + c[None, :, None] * p2[:, None, :]


#: the ribbon on the thread view's ring runs this many levels inside level 0: on the threads'
#: colour band (`threads.LANE_BAND`), where SyncTrace's curves start
RING_BAND_LEVELS = 1.05


def ring_path_layers(cp, sel, ring, place, px_units: float) -> list:
    """The ribbon along the thread view's ring, on the threads' colour band inside level 0 and
    in front of it (each stretch an arc of `ARC_SAMPLES` points per ~3° of its section), and the
    hand-offs as curves through the inside of the semicircle, from the release on one
    section to the wake-up on the other."""
    from .ring import polar

    lane_of = sel.lane_of_thread()
    us_per_px = float(np.median(ring.us_per_radian() * px_units / max(ring.zero_radius, 1e-9)))
    th, a, b, thick = ribbon_runs(cp, ring.t0, ring.t1, MERGE_PX * us_per_px)
    lane = lane_of[th]
    ok = lane >= 0
    th, a, b, thick, lane = th[ok], a[ok], b[ok], thick[ok], lane[ok]
    R = float(ring.zero_radius) - RING_BAND_LEVELS
    hdepth = -0.3
    layers = []
    if th.size:
        a0, a1 = ring.angle(lane, a), ring.angle(lane, b)
        f = np.linspace(0.0, 1.0, ARC_SAMPLES)
        ang = a0[:, None] + f[None, :] * (a1 - a0)[:, None]
        centres = place.to_world(polar(ang, R, hdepth))
        radius = np.where(thick, RUN_PX, REST_PX) * px_units * place.scale
        layers.append(_tubes("critical_path", centres, radius, thick.astype(np.int32), np.arange(th.size)))
    hr = handoff_rows(cp, ring.t0, ring.t1, lane_of)
    if hr.size:
        au = ring.angle(lane_of[cp.from_thread[hr]], cp.start[hr])
        at = ring.angle(lane_of[cp.thread[hr]], cp.end[hr])
        p0, p2 = polar(au, R, hdepth), polar(at, R, hdepth)
        # into the semicircle, by a third of the chord: near ends make a shallow arc, not a loop
        mid = 0.5 * (p0 + p2)
        chord = np.linalg.norm(p2 - p0, axis=1)
        inward = -mid / np.maximum(np.linalg.norm(mid, axis=1), 1e-9)[:, None]
        inward[:, 2] = 0.0
        p1 = mid + inward * np.minimum(0.35 * chord, 0.8 * R)[:, None]
        centres = place.to_world(_bezier(p0, p1, p2))
        layers.append(_tubes("critical_path_handoffs", centres, np.full(hr.size, ARC_PX * px_units * place.scale),
                             np.full(hr.size, 2), hr))
    return layers
