"""What a trace carries besides its calls, on the icicle's clock (bpy-free):
statistics tracks of counters under the lanes, flows as arcs between the calls they bind;
instants as markers on their lanes are `layout.instants`.

The execution-visualization survey (seed 003, Sec. 3.1, 4.3) names the combination:
*statistics* (values over time) under the *actions* (calls) and the *relationships*
(flows) on one time axis.  Stages, each one rule:

- `choose_series`: which counter series get a track (``counters`` patterns, else the
  ``max_counters`` that vary most inside the window; the rest are named in the legend);
- `column_peaks`: a series' step function reduced to one value per pixel column (its peak,
  so a spike narrower than a column still shows);
- `track_plan` / `track_geometry`: the tracks' share of the content height (the frame's
  block below the lanes and the time axis) and their boxes, names and ranges;
- `layout.flow_arcs.flow_arcs`: flows bound to calls, bundled per pixel cell of both ends,
  as arcs in front of the lanes, their width by how many flows they carry;
- `layout.instants.instant_markers`: thin upright markers at each instant (a thread's in a
  rug under its lane, a process's over its lanes, a global one across every lane).

Every element carries the attributes ``tv3d_kind`` (`SIDE_KINDS`) and ``side_index`` (the
series, the first flow of an arc, the instant), so picking can report it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import re

import numpy as np

from .spec import InstanceLayer, LabelSet, MaterialSpec

SIDE_KINDS = {"counter": 1, "flow": 2, "instant": 3, "async": 4}
TRACK_SHARE = 0.09  # of the content height per counter track
MAX_TRACKS_SHARE = 0.3  # all tracks together
TRACK_GAP = 0.25  # gap between tracks, in track heights
COLUMN_PX = 3.0  # width of a track's column in pixels
TRACK_TEXT = 0.85  # track names, in label sizes (`labels.side_text_share`: never under 14 px)
TWO_LINE_TRACK_SIZES = 2.6  # a track this many label sizes tall has its name and range on two lines
MAX_OTHERS_NAMED = 16  # series not drawn that the plan names (the legend shows a few)
TRACK_DEPTH = 0.35  # depth of a track, in lane depths
INSTANT_RGB = (0.85, 0.33, 0.05)
TRACK_RGB = ((0.16, 0.42, 0.55), (0.42, 0.30, 0.58), (0.30, 0.50, 0.22), (0.62, 0.40, 0.14),
             (0.55, 0.22, 0.34), (0.20, 0.45, 0.45))


def series_label(tr, s: int) -> str:
    """``memory · rss_mb`` (the counter's name, then the series' args key when it differs)."""
    counter = tr.counter_names[int(tr.series_counter[s])]
    key = tr.series_names[s]
    return counter if key in ("", counter, "value") else f"{counter} · {key}"


def series_bounds(tr) -> np.ndarray:
    """(n_series + 1,) start of each series' samples in the (series, ts)-sorted arrays."""
    return np.searchsorted(tr.counter_series, np.arange(len(tr.series_names) + 1), side="left")


def column_peaks(ts: np.ndarray, values: np.ndarray, t0: float, t1: float, n_cols: int) -> np.ndarray:
    """Peak of a counter's step function over each of ``n_cols`` equal columns of [t0, t1).

    The series holds ``values[k]`` from ``ts[k]`` until ``ts[k+1]`` (the last value until
    the end; Chrome's counter semantics), so column c = [a_c, a_c + w) gets
    max({v(a_c)} ∪ {values[k] : a_c ≤ ts[k] < a_c + w}) with v(a_c) the value held at its
    start; NaN where the series has not started yet.  ``ts`` sorted ascending."""
    w = (t1 - t0) / n_cols
    edges = t0 + w * np.arange(n_cols + 1)
    out = np.full(n_cols, np.nan)
    if ts.size == 0:
        return out
    held = np.searchsorted(ts, edges[:-1], side="right") - 1  # the sample in force at each column start
    ok = held >= 0
    out[ok] = values[held[ok]]
    a, z = np.searchsorted(ts, [t0, t1], side="left")  # the samples inside [t0, t1)
    if z > a:
        c = np.minimum(((ts[a:z] - t0) / w).astype(np.int64), n_cols - 1)  # non-decreasing
        runs = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])  # first sample of each column's run
        out[c[runs]] = np.fmax(out[c[runs]], np.maximum.reduceat(values[a:z], runs))
    return out


@dataclass
class TrackPlan:
    series: np.ndarray  # int32 series shown, top to bottom
    labels: list
    lo: np.ndarray  # range of each shown series inside the window
    hi: np.ndarray
    others: list  # labels of the series not shown
    share: float  # of the content height the tracks and async lanes take
    asyncs: object = None  # `async_lanes.AsyncPlan`: drawn above the counter tracks
    after_lane: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # per track: its lane
    # (`track_places`); -1: under the time axis

    def __len__(self) -> int:
        return int(self.series.size)

    @property
    def units(self) -> list:
        """Height of each block under the lanes, top to bottom (async lanes, then counter
        tracks), in counter-track heights."""
        return [lane.units for lane in (self.asyncs.lanes if self.asyncs else [])] + [1.0] * len(self)

    @property
    def empty(self) -> bool:
        return not self.units


def window_ranges(tr, t0: float, t1: float) -> tuple:
    """(lo, hi) of every series over [t0, t1]: the values it takes there, counting the value
    it holds at t0 (its last sample at or before t0); NaN for a series with no sample up to
    t1.  Vectorised over all samples (a file may hold a million series)."""
    ns = len(tr.series_names)
    lo, hi = np.full(ns, np.nan), np.full(ns, np.nan)
    s, ts, v = tr.counter_series, tr.counter_ts, tr.counter_value
    if ts.size == 0:
        return lo, hi
    le = ts <= t0
    nxt_other = np.r_[s[1:] != s[:-1], True]  # the series' last sample
    held = le & (nxt_other | ~np.r_[le[1:], False])  # the last sample at or before t0
    first = np.r_[True, s[1:] != s[:-1]]
    no_held = np.ones(ns, bool)
    no_held[s[held]] = False
    # a series that starts after t0 counts from its first sample (as the step function does not)
    sel = (ts <= t1) & ((ts > t0) | held | (first & no_held[s]))
    if not sel.any():
        return lo, hi
    ss, vv = s[sel], v[sel]
    runs = np.flatnonzero(np.r_[True, ss[1:] != ss[:-1]])
    lo[ss[runs]] = np.minimum.reduceat(vv, runs)
    hi[ss[runs]] = np.maximum.reduceat(vv, runs)
    return lo, hi


#: counters that are running totals by what they are, not by their samples (a memory counter
#: may only grow in a run and still be the figure's point): Chrome's per-thread CPU time and
#: instruction counts, which Perfetto traces of Chrome carry for every thread
RUNNING_TOTALS = re.compile(r"^(?:thread_time|thread_instruction_count)\b")


def cumulative_series(tr) -> np.ndarray:
    """bool per series: its counter is a running total (`RUNNING_TOTALS`)."""
    names = tr.counter_names
    by_counter = np.array([bool(RUNNING_TOTALS.match(str(nm))) for nm in names], bool) if names else \
        np.zeros(0, bool)
    sc = np.asarray(tr.series_counter, np.int64)
    return by_counter[sc] if by_counter.size else np.zeros(sc.size, bool)


def choose_series(tr, t0: float, t1: float, patterns, max_counters: int) -> tuple:
    """(shown series int32, their (lo, hi) in [t0, t1], labels of the others).

    With ``patterns`` (regular expressions searched in `series_label`), the matching series
    in the trace's order, at most ``max_counters``; without, the ``max_counters`` series
    that vary most inside the window, by relative range (hi - lo) / max(|hi|, |lo|), the
    most varying series of each counter before a second one of any (memory, objects and
    garbage collection rather than three series of one), running totals (`RUNNING_TOTALS`)
    only when ``patterns`` name them; a series that does not vary
    inside the window gets no track.  Shown series keep their counter's
    order so a counter's series stay together."""
    ns = len(tr.series_names)
    if ns == 0 or max_counters <= 0:
        return np.zeros(0, np.int32), np.zeros(0), np.zeros(0), [series_label(tr, s) for s in range(ns)]
    lo, hi = window_ranges(tr, t0, t1)
    var = np.zeros(ns)
    ok = np.isfinite(lo)
    var[ok] = (hi[ok] - lo[ok]) / np.maximum(np.maximum(np.abs(hi[ok]), np.abs(lo[ok])), 1e-300)
    if patterns:  # a regular expression per label (user regexes are linear-time: `tracevis3d.userregex`)
        from ..userregex import user_regex

        rx = [user_regex(p, "counters") for p in patterns]
        pick = []
        for s in np.flatnonzero(np.isfinite(lo)).tolist():
            if any(r.search(series_label(tr, s)) for r in rx):
                pick.append(s)
                if len(pick) == max_counters:
                    break
    else:
        # by variation (ties: by label), among the series that vary; numpy orders them all.  A
        # running total (Chrome's per-thread "thread_time") is drawn only when asked for by name:
        # a ramp from its first value to its last varies most by this measure and says least
        # (Chrome's start-up drew two of them over the GPU process's memory)
        cumulative = cumulative_series(tr)
        cand = np.flatnonzero((var > 0) & ~cumulative)
        cand = cand[np.argsort(-var[cand], kind="stable")]
        # the most varying series of each counter first, then the rest
        _, first_of_counter = np.unique(tr.series_counter[cand], return_index=True)
        firsts = cand[np.sort(first_of_counter)]
        rest = cand[~np.isin(cand, firsts)]
        # labels break ties among the chosen and the next ones only
        first_set = set(firsts.tolist())
        tied = [int(x) for x in np.concatenate([firsts, rest])[:max_counters + 8]]
        tied.sort(key=lambda s: (s not in first_set, -var[s], series_label(tr, s)))
        pick = sorted(tied[:max_counters])
    shown = np.asarray(pick, np.int32)
    chosen = np.zeros(ns, bool)
    chosen[shown] = True
    others = [series_label(tr, s) for s in np.flatnonzero(~chosen)[:MAX_OTHERS_NAMED].tolist()]
    return shown, lo[shown], hi[shown], others


def track_plan(tr, t0: float, t1: float, params, lane_threads) -> TrackPlan:
    """The counter tracks of a figure (`choose_series`), where each stands (`track_places`,
    ``lane_threads``: the thread of each lane) and their share of the content."""
    from .async_lanes import async_plan

    shown, lo, hi, others = choose_series(tr, t0, t1, list(params.counters), int(params.max_counters))
    plan = TrackPlan(shown, [series_label(tr, int(s)) for s in shown], lo, hi, others, 0.0,
                     async_plan(tr, t0, t1, params.show_async), track_places(tr, shown, lane_threads))
    plan.share = min(TRACK_SHARE * sum(plan.units), MAX_TRACKS_SHARE)
    return plan


def below_levels(plan: TrackPlan, lane_levels_total: float) -> float:
    """Levels the tracks take under the lanes so that they are ``plan.share`` of the content."""
    return 0.0 if plan.empty else plan.share / (1.0 - plan.share) * lane_levels_total


def track_places(tr, series, lane_threads) -> np.ndarray:
    """Each counter track under the lanes of its process: per series in ``series``, the
    last lane of its process, or -1 (the block under the time axis) when that lane is the
    bottom one, when the process has no lane, or when every lane is of one process."""
    lane_pid = np.asarray(tr.thread_pid)[np.asarray(lane_threads, np.int64)]
    n = lane_pid.size
    after = np.full(len(series), -1, np.int64)
    if n > 1 and np.unique(lane_pid).size > 1:
        for k, s in enumerate(series):  # a few tracks
            mine = np.flatnonzero(lane_pid == tr.series_pid[int(s)])
            if mine.size and mine[-1] < n - 1:
                after[k] = mine[-1]
    return after


def split_levels(plan: TrackPlan, total: float, n_lanes: int) -> tuple:
    """(levels of the block under the time axis, levels of the room under each lane or
    None) that the plan's units take, ``total`` levels in all (`below_levels`): each unit
    the same height wherever it stands, a gap of `TRACK_GAP` units between neighbours."""
    units = np.asarray(plan.units, np.float64)
    if not (plan.after_lane >= 0).any():
        return total, None
    per_unit = total / (units.sum() + TRACK_GAP * max(units.size - 1, 0))
    where = unit_places(plan)
    after = np.zeros(n_lanes)
    for j in np.unique(where[where >= 0]):
        u = units[where == j]
        after[j] = (u.sum() + TRACK_GAP * u.size) * per_unit  # its gaps, and one above it
    u = units[where < 0]
    below = (u.sum() + TRACK_GAP * max(u.size - 1, 0)) * per_unit if u.size else 0.0
    return below, after


def unit_places(plan: TrackPlan) -> np.ndarray:
    """Per unit (async lanes, then counter tracks): the lane it stands under, -1: below."""
    na = len(plan.units) - len(plan)
    return np.concatenate([np.full(na, -1, np.int64), np.asarray(plan.after_lane, np.int64)])


def unit_rows(plan: TrackPlan, frame) -> tuple:
    """(bottoms, tops) of every unit of the plan (async lanes, then counter tracks): those
    under the time axis stacked in the frame's block below, the others in the room under
    their lane (`frame.Frame.rooms`)."""
    units = np.asarray(plan.units, np.float64)
    where = unit_places(plan)
    bottoms, tops = np.zeros(units.size), np.zeros(units.size)
    for j in np.unique(where):
        k = np.flatnonzero(where == j)
        block = frame.below if j < 0 else tuple(frame.rooms[j])
        bottoms[k], tops[k] = track_rows(block, units[k])
    return bottoms, tops


def fmt_value(v: float) -> str:
    a = abs(v)
    if a >= 1e9:
        return f"{v / 1e9:.3g}G"
    if a >= 1e6:
        return f"{v / 1e6:.3g}M"
    if a >= 1e4:
        return f"{v / 1e3:.3g}k"
    return f"{v:.4g}" if a >= 1 else f"{v:.3g}"


def track_rows(below: tuple, units: list) -> tuple:
    """(bottoms, tops) of blocks ``units`` tall (relative), stacked top to bottom in the
    block ``below`` = (z0, z1) with a gap of `TRACK_GAP` of a unit between them."""
    zb, zt = below
    u = np.asarray(units, np.float64)
    unit_h = (zt - zb) / (u.sum() + TRACK_GAP * (u.size - 1))
    tops = zt - unit_h * (np.concatenate([[0.0], np.cumsum(u[:-1])]) + TRACK_GAP * np.arange(u.size))
    return tops - u * unit_h, tops


def track_geometry(tr, plan: TrackPlan, frame, params, t0: float, t1: float, tpx: float, name_prefix: str = ""):
    """(boxes layer, label set, materials) of the tracks in the frame's block below the lanes:
    one box per column of a track (`column_peaks`), from the track's base to its value
    (base 0 when the series never goes below 0, else its minimum), extruded in depth; the
    track's name and range left of it, like a lane name."""
    from .annotate import lane_labels
    from .labels import side_text_share

    n = len(plan)
    bases, tops = unit_rows(plan, frame)
    bases, tops = bases[-n:], tops[-n:]  # under the async lanes
    track_h = float(tops[0] - bases[0])
    px = float(np.median(frame.px))
    n_cols = int(max(8, min(4096, params.time_length / (COLUMN_PX * px))))
    b = series_bounds(tr)
    pos, sc, col, mat, sidx = [], [], [], [], []
    w = params.time_length / n_cols
    xc = (np.arange(n_cols) + 0.5) * w
    depth = TRACK_DEPTH * frame.depth
    for k, s in enumerate(plan.series):  # a few tracks; the columns vectorised
        s = int(s)
        peaks = column_peaks(tr.counter_ts[b[s]:b[s + 1]], tr.counter_value[b[s]:b[s + 1]], t0, t1, n_cols)
        base = 0.0 if plan.lo[k] >= 0 else float(plan.lo[k])
        span = max(float(plan.hi[k]) - base, 1e-300)
        bottom = bases[k]
        frac = np.clip((peaks - base) / span, 0.0, 1.0)
        ok = np.isfinite(peaks) & (frac > 0)
        hgt = np.maximum(frac[ok] * track_h, 0.02 * track_h)
        m = int(ok.sum())
        p = np.empty((m, 3))
        p[:, 0], p[:, 1], p[:, 2] = xc[ok], depth / 2, bottom + hgt / 2
        q = np.empty((m, 3))
        q[:, 0], q[:, 1], q[:, 2] = w * 0.999, depth, hgt
        pos.append(p)
        sc.append(q)
        c = np.ones((m, 4))
        c[:, :3] = TRACK_RGB[k % len(TRACK_RGB)]
        col.append(c)
        mat.append(np.full(m, k % len(TRACK_RGB), np.int32))
        sidx.append(np.full(m, s, np.int32))
    pos_a = np.concatenate(pos).astype(np.float32)
    mats = [f"TV3D_track_{k}" for k in range(len(TRACK_RGB))]
    layer = InstanceLayer(f"{name_prefix}counters", pos_a, np.concatenate(sc).astype(np.float32),
                          np.concatenate(col).astype(np.float32), np.concatenate(mat), mats,
                          {"call_index": np.full(len(pos_a), -1, np.int32),
                           "tv3d_kind": np.full(len(pos_a), SIDE_KINDS["counter"], np.int32),
                           "side_index": np.concatenate(sidx)})
    size_w = side_text_share(params, TRACK_TEXT) * tpx * px
    names, ranges = track_texts(tr, plan)
    if track_h >= TWO_LINE_TRACK_SIZES * size_w:
        # the name in the track's upper half, its range under it, right-aligned left of the track
        labels = LabelSet.concat([
            lane_labels(names, np.maximum(tops - 1.5 * size_w, bases), tops, frame.cam, params.resolution,
                        frame.to_cam, size_w, 0.7 * size_w),
            lane_labels(ranges, bases, tops, frame.cam, params.resolution, frame.to_cam, size_w, 0.7 * size_w)])
    else:  # too low for two lines (a track in the room under a lane of many): "name  range" on one
        labels = lane_labels(one_line_texts(names, ranges), bases, tops, frame.cam, params.resolution, frame.to_cam,
                             size_w, 0.7 * size_w)
    labels.kind = ["counter"] * len(labels)
    materials = {nm: MaterialSpec(nm, tuple(TRACK_RGB[k]) + (1.0,), cushion=False)
                 for k, nm in enumerate(mats)}
    return layer, labels, materials


def track_texts(tr, plan: TrackPlan) -> tuple:
    """(names, ranges) of the tracks: ``memory · rss_mb`` and ``0–81.9 MB`` (from the
    track's base to its peak in the window)."""
    ranges = []
    for k in range(len(plan)):
        unit = tr.series_units[int(plan.series[k])]
        lo = 0.0 if plan.lo[k] >= 0 else plan.lo[k]
        ranges.append(f"{fmt_value(lo)}–{fmt_value(plan.hi[k])}{(' ' + unit) if unit else ''}")
    return list(plan.labels), ranges


def one_line_texts(names: list, ranges: list) -> list:
    """"name  range" per track, within a lane name's width (`annotate.MAX_LANE_NAME_EM`): the
    range whole; a name that does not fit keeps its series whole and cuts its counter's name
    at the end ("cuda:0 me… · allocated"), else is cut in its middle."""
    from .annotate import MAX_LANE_NAME_EM
    from .text import cut_end, cut_middle, text_width

    out = []
    for name, rng in zip(names, ranges):
        room = max(MAX_LANE_NAME_EM - text_width(rng + "  "), 1.0)
        if text_width(name) > room:
            counter, sep, series = name.rpartition(" · ")
            rest = room - text_width(sep + series)
            if sep and rest >= text_width("mem…"):
                name = f"{cut_end(counter, rest)}{sep}{series}"
            else:
                name = cut_middle(name, room)
        out.append(f"{name}  {rng}")
    return out


def track_name_em(tr, plan: TrackPlan, params=None) -> float:
    """Width (in label sizes) the track names take left of the tracks (on two lines, or on one
    where a track is low: `one_line_texts`), at their size (`labels.side_text_share` of
    ``params``; without: `TRACK_TEXT`)."""
    from .annotate import MAX_LANE_NAME_EM
    from .text import text_width

    names, ranges = track_texts(tr, plan)
    lanes = [lane.label for lane in plan.asyncs.lanes] if plan.asyncs else []
    texts = names + ranges + lanes + one_line_texts(names, ranges)
    share = TRACK_TEXT
    if params is not None:
        from .labels import side_text_share

        share = side_text_share(params, TRACK_TEXT)
    return share * min(max((text_width(t) for t in texts), default=0.0), MAX_LANE_NAME_EM)


def below_geometry(tr, plan: TrackPlan, frame, params, t0: float, t1: float, tpx: float) -> tuple:
    """(layers, label sets, materials, meta) of everything under the lanes: the async lanes
    (`async_lanes.async_geometry`), then the counter tracks (`track_geometry`)."""
    layers, labels, materials = [], [], {}
    bottoms, tops = unit_rows(plan, frame)
    meta = {"below_z": np.stack([bottoms, tops], 1).tolist()}
    if (plan.after_lane >= 0).any():
        meta["counter_track_lanes"] = plan.after_lane.tolist()
    na = len(plan.asyncs) if plan.asyncs else 0
    if na:
        from .async_lanes import async_geometry

        layer, lab, mats = async_geometry(tr, plan.asyncs, (bottoms[:na], tops[:na]), frame, params, t0, t1, tpx,
                                          0.5 * TRACK_DEPTH * frame.depth)
        layers.append(layer)
        labels.append(lab)
        materials.update(mats)
        meta.update(n_async_lanes=na, async_lanes=[lane.label for lane in plan.asyncs.lanes],
                    n_async_slices=int(len(layer)))
    if len(plan):
        layer, lab, mats = track_geometry(tr, plan, frame, params, t0, t1, tpx)
        layers.append(layer)
        labels.append(lab)
        materials.update(mats)
        meta["counter_track_z"] = meta["below_z"][na:]
    return layers, labels, materials, meta


def side_legend_rows(plan: TrackPlan, n_flows: int, n_instants: int, flow_rows: list | None = None,
                     min_arcs: int | None = None, instant_bars: bool = False) -> list:
    """Notes for the legend: what the tracks, arcs and markers are, and what is left out;
    ``flow_rows``: the flows' category swatches (`flow_category_rows`), where they have several;
    ``min_arcs``: the arcs always drawn (the largest bundles; more where they leave the lanes
    seen, `flow_arcs.FLOW_INK_FRAC`): with more flows, the legend says only the largest may be
    drawn; ``instant_bars``: some instants are a process's or global (bars over lanes)."""
    rows = []
    if len(plan):
        more = f"; not drawn: {', '.join(plan.others[:3])}{' …' if len(plan.others) > 3 else ''}" \
            if plan.others else ""
        rows.append((f"tracks under the lanes: counters, peak per pixel column{more}", -1, "note"))
    if plan.asyncs and len(plan.asyncs):
        over = sum(lane.overflow for lane in plan.asyncs.lanes)
        more = f"; {over:,} overlap in full rows" if over else ""
        rows.append((f"lanes under the threads: async slices by category{more}", -1, "note"))
    thick = "thicker: several" if min_arcs is None or n_flows <= min_arcs else \
        "thicker: several; where many, only the largest"
    if n_flows and flow_rows:
        rows.append((f"arcs: {n_flows:,} flows, from a call to the call it starts ({thick}), by category",
                     -1, "note"))
        rows += flow_rows
    elif n_flows:
        rows.append((f"blue arcs: {n_flows:,} flows, from a call to the call it starts ({thick})",
                     -1, "note"))
    if n_instants:
        what = f"{n_instants:,} instant event{'s' if n_instants != 1 else ''}"
        bars = "; bars: a process's or global" if instant_bars else ""
        rows.append((f"orange: {what} (ticks under their thread's lane{bars})", -1, "note"))
    return rows


def track_occupancy(frame, params, res, tpx: float, cell: float) -> np.ndarray:
    """The grid cells (`annotate.rects_grid`) the tracks and their names cover."""
    from .annotate import rects_grid
    from .camera import project

    L, D = float(params.time_length), TRACK_DEPTH * frame.depth
    blocks = ([frame.below] if frame.below is not None else []) + \
        ([tuple(r) for r in frame.rooms if r[1] > r[0]] if frame.rooms is not None else [])
    boxes = []
    for zb, zt in blocks:
        pts = np.array([[x, y, z] for x in (0.0, L) for y in (0.0, D) for z in (zb, zt)])
        pr = project(frame.cam, pts, res)
        boxes.append((pr[:, 0].min() - 28 * tpx, pr[:, 1].min(), pr[:, 0].max() + 1, pr[:, 1].max() + 1))  # + names
    b = np.array(boxes).reshape(-1, 4)
    return rects_grid(res, cell, b[:, 0], b[:, 1], b[:, 2], b[:, 3])
