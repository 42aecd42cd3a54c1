"""Instant events in the icicle's scene (bpy-free): an upright orange
marker at each instant's time -- a tick in a rug under its thread's lane, a bar over its
process's lanes (one per run of adjacent lanes of that process), a bar over every lane for
a global one -- carrying ``tv3d_kind`` instant and the instant's index (``side_index``) for
picking.

A thread's ticks hang under its lane's base, in the gap to the next lane, never over its
calls: a browser's 18,000 instants on lanes folded to about one level each (Chromium's
page load) made ticks 2.5 levels tall that covered every box of the busiest lanes and the
names on them.  Process and global instants stay bars while they are few (18 and 8 in that
JSON trace); more than `MAX_BARS` of one kind (Chrome's start-up in Perfetto's format: 105
global "PeakMemoryTracking" and 140 process instants) are ticks in the rug of the lowest lane
they span.
"""
from __future__ import annotations

import numpy as np

from .side_tracks import INSTANT_RGB, SIDE_KINDS
from .spec import InstanceLayer

#: markers at most (one per pixel column and lane or run of lanes); beyond, bars first, then
#: ticks evenly over the window (not the earliest)
MAX_INSTANTS = 6000
#: a process's (or the global) instants are bars over its lanes up to this many in a figure; more
#: are ticks in the rug of its lowest lane (`instant_markers`)
MAX_BARS = 12
RUG_FILL = 0.75  # a thread's ticks: this much of the free room under its lane...
RUG_MAX_LEVELS = 0.6  # ...at most this many levels tall
LAST_LANE_ROOM_LEVELS = 0.2  # the free room under the last lane (its time axis runs 0.25 below)


def instant_markers(sel, frame, params, t0: float, t1: float, name_prefix: str = ""):
    """(instance layer or None, count) of the instants inside the window: a thin upright tick
    under its thread's lane (`_group_heights`: in the rug under the lane's base), a bar over
    the lanes of its process for a process's instant (one per run of adjacent lanes of that
    process: never over another process's lanes), over every lane for a global one; one per
    pixel column and lane or run of lanes, at most `MAX_INSTANTS` (the bars first, then ticks
    spread evenly over the window)."""
    tr = sel.trace
    if not params.show_instants or tr.instant_ts.size == 0:
        return None, 0
    ts = tr.instant_ts
    inst, group, run_of_lane = _instant_groups(sel)
    z_lo, z_hi = _group_heights(frame, run_of_lane)
    ok = (ts[inst] >= t0) & (ts[inst] <= t1)
    inst, group = inst[ok], group[ok]
    if inst.size == 0:
        return None, 0
    px = float(np.median(frame.px))
    x = (ts[inst] - t0) * frame.scale_t
    _, first = np.unique(np.stack([np.floor(x / px), group], 1).astype(np.int64), axis=0, return_index=True)
    first = np.sort(first)
    if first.size > MAX_INSTANTS:
        is_bar = group[first] >= sel.lane_threads.size
        bars, ticks = first[is_bar][:MAX_INSTANTS], first[~is_bar]
        room = MAX_INSTANTS - bars.size
        pick = np.unique(np.linspace(0, ticks.size - 1, room).astype(np.int64)) if room > 0 else np.zeros(0, np.int64)
        first = np.sort(np.concatenate([bars, ticks[pick]]))
    ii, x, g = inst[first], x[first], group[first]
    z0, z1 = z_lo[g].copy(), z_hi[g].copy()
    # a process's or the global instants, when many (Chrome's start-up: 105 global and 140 process
    # instants, full-height lines over every call), are ticks in the rug of the lowest lane they
    # span instead of bars: a few bars mark moments, a hundred hide the figure
    n_lanes = int(sel.lane_threads.size)
    bar = g >= n_lanes
    if bar.any():
        per_group = np.bincount(g[bar] - n_lanes, minlength=z_lo.size - n_lanes)
        crowded = bar & (per_group[np.maximum(g - n_lanes, 0)] > MAX_BARS)
        if crowded.any():
            lowest = _lowest_lane_of_groups(frame, sel, z_lo.size)
            low = lowest[g[crowded]]
            z0[crowded], z1[crowded] = z_lo[low], z_hi[low]
    n = ii.size
    pos = np.stack([x, np.full(n, -0.5 * px), (z0 + z1) / 2], 1).astype(np.float32)
    sc = np.stack([np.full(n, 1.5 * px), np.full(n, px), z1 - z0], 1).astype(np.float32)
    col = np.tile(np.array(INSTANT_RGB + (1.0,), np.float32), (n, 1))
    layer = InstanceLayer(f"{name_prefix}instants", pos, sc, col, np.zeros(n, np.int32), ["TV3D_instant"],
                          {"call_index": np.full(n, -1, np.int32),
                           "tv3d_kind": np.full(n, SIDE_KINDS["instant"], np.int32),
                           "side_index": ii.astype(np.int32)})
    return layer, int(n)


def _lowest_lane_of_groups(frame, sel, n_groups: int) -> np.ndarray:
    """For every marker group (`_instant_groups`), the lane whose base is lowest among those it
    spans (a lane: itself; a run of a process's lanes: its lowest; the global group: the lowest
    lane of all)."""
    n_lanes = int(sel.lane_threads.size)
    base = np.asarray(frame.z_base, np.float64)[:n_lanes]
    out = np.arange(n_groups, dtype=np.int64)
    if not n_lanes:
        return np.zeros(n_groups, np.int64)
    _, _, run_of_lane = _instant_groups(sel)
    n_runs = n_groups - n_lanes - 1
    for r in range(n_runs):
        lanes = np.flatnonzero(run_of_lane == r)
        out[n_lanes + r] = lanes[np.argmin(base[lanes])] if lanes.size else 0
    out[n_groups - 1] = int(np.argmin(base))
    return out


def _instant_groups(sel) -> tuple:
    """Where the instants stand: (instant, group) pairs -- one per marker: a thread's instant
    on its lane (group k), a process's instant on each run of adjacent lanes of its process
    (group ``n_lanes + r``), a global one over every lane (``n_lanes + n_runs``); instants
    whose thread or process has no lane get none -- and the run of each lane (runs: maximal
    sequences of adjacent lanes of one process)."""
    tr = sel.trace
    n_lanes = int(sel.lane_threads.size)
    lane_of_thread = sel.lane_of_thread()
    lane_pid = np.asarray(tr.thread_pid, np.int64)[sel.lane_threads]
    new_run = np.ones(n_lanes, bool)
    new_run[1:] = lane_pid[1:] != lane_pid[:-1]
    run_of_lane = np.cumsum(new_run) - 1
    run_pid = lane_pid[new_run]
    n_runs = int(run_pid.size)
    th, scope, pid = tr.instant_thread, tr.instant_scope, tr.instant_pid
    on_thread = th >= 0
    t_inst = np.flatnonzero(on_thread)
    t_group = lane_of_thread[th[t_inst]]
    inst, group = [t_inst[t_group >= 0]], [t_group[t_group >= 0]]
    if n_runs:
        # a process's instants: one marker per run of its process (runs sorted by pid)
        by_pid = np.argsort(run_pid, kind="stable")
        sorted_pid = run_pid[by_pid]
        p_inst = np.flatnonzero(~on_thread & (scope != ord("g")))
        lo = np.searchsorted(sorted_pid, pid[p_inst], "left")
        hi = np.searchsorted(sorted_pid, pid[p_inst], "right")
        count = hi - lo
        inst.append(np.repeat(p_inst, count))
        within = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
        group.append(n_lanes + by_pid[np.repeat(lo, count) + within])
        g_inst = np.flatnonzero(~on_thread & (scope == ord("g")))
        inst.append(g_inst)
        group.append(np.full(g_inst.size, n_lanes + n_runs, np.int64))
    return np.concatenate(inst).astype(np.int64), np.concatenate(group).astype(np.int64), run_of_lane


def _group_heights(frame, run_of_lane: np.ndarray) -> tuple:
    """(bottom, top) of every `_instant_groups` group: a lane's rug, `RUG_FILL` of the free room
    under its base (to the next lane's top, or to the room of counter tracks under it;
    `LAST_LANE_ROOM_LEVELS` under the last lane), at most `RUG_MAX_LEVELS`; the span of a run
    of a process's lanes; the span of all lanes."""
    n_lanes = run_of_lane.size
    n_runs = int(run_of_lane.max()) + 1 if n_lanes else 0
    base = np.asarray(frame.z_base, np.float64)[:n_lanes]
    top = base + np.asarray(frame.lane_heights, np.float64)[:n_lanes]
    z_lo = np.full(n_lanes + n_runs + 1, np.inf)
    z_hi = np.full(n_lanes + n_runs + 1, -np.inf)
    free = np.full(n_lanes, LAST_LANE_ROOM_LEVELS * frame.h)
    free[:-1] = base[:-1] - top[1:]
    if frame.rooms is not None:  # counter tracks in a room under a lane: the rug above them
        room_top = np.asarray(frame.rooms, np.float64)[:n_lanes, 1]
        has_room = room_top < base - 1e-9 * max(float(frame.h), 1e-30)
        free[has_room] = (base - room_top)[has_room]
    rug = np.minimum(RUG_FILL * np.maximum(free, 0.0), RUG_MAX_LEVELS * frame.h)
    z_lo[:n_lanes] = base - rug
    z_hi[:n_lanes] = base
    np.minimum.at(z_lo, n_lanes + run_of_lane, base)
    np.maximum.at(z_hi, n_lanes + run_of_lane, top)
    if n_lanes:
        z_lo[-1], z_hi[-1] = base.min(), top.max()
    return z_lo, z_hi


def instants_in_window(sel, t0: float, t1: float) -> tuple:
    """(instants inside [t0, t1] that `instant_markers` places (their lane or process shown),
    whether any of them is a process's or a global one: a bar)."""
    tr = sel.trace
    if tr.instant_ts.size == 0:
        return 0, False
    inst = np.unique(_instant_groups(sel)[0])
    ts = tr.instant_ts[inst]
    inside = (ts >= t0) & (ts <= t1)
    return int(inside.sum()), bool((tr.instant_thread[inst[inside]] < 0).any())
