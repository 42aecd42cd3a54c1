"""Instant events in the icicle's scene (issue 25, item 3; bpy-free): an upright orange
marker at each instant's time -- a tick on its thread's lane, a bar over its process's
lanes (one per run of adjacent lanes of that process), a bar over every lane for a global
one -- carrying ``tv3d_kind`` instant and the instant's index (``side_index``) for picking.
"""
from __future__ import annotations

import numpy as np

from .side_tracks import INSTANT_RGB, SIDE_KINDS
from .spec import InstanceLayer

MAX_INSTANTS = 2000
INSTANT_LEVELS = 2.5  # a thread's instant marker, in levels


def instant_markers(sel, frame, params, t0: float, t1: float, name_prefix: str = ""):
    """(instance layer or None, count) of the instants inside the window: a thin upright tick
    in front of its thread's lane (`INSTANT_LEVELS` from the lane's base), a bar over the
    lanes of its process for a process's instant (one per run of adjacent lanes of that
    process: never over another process's lanes), over every lane for a global one; at most
    `MAX_INSTANTS` (one per pixel column and lane or run of lanes)."""
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
    first = np.sort(first)[:MAX_INSTANTS]
    ii, x, g = inst[first], x[first], group[first]
    z0, z1 = z_lo[g], z_hi[g]
    n = ii.size
    pos = np.stack([x, np.full(n, -0.5 * px), (z0 + z1) / 2], 1).astype(np.float32)
    sc = np.stack([np.full(n, 1.5 * px), np.full(n, px), z1 - z0], 1).astype(np.float32)
    col = np.tile(np.array(INSTANT_RGB + (1.0,), np.float32), (n, 1))
    layer = InstanceLayer(f"{name_prefix}instants", pos, sc, col, np.zeros(n, np.int32), ["TV3D_instant"],
                          {"call_index": np.full(n, -1, np.int32),
                           "tv3d_kind": np.full(n, SIDE_KINDS["instant"], np.int32),
                           "side_index": ii.astype(np.int32)})
    return layer, int(n)


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
    """(bottom, top) of every `_instant_groups` group: a tick `INSTANT_LEVELS` tall from a
    lane's base; the span of a run of a process's lanes; the span of all lanes."""
    n_lanes = run_of_lane.size
    n_runs = int(run_of_lane.max()) + 1 if n_lanes else 0
    base = np.asarray(frame.z_base, np.float64)[:n_lanes]
    top = base + np.asarray(frame.lane_heights, np.float64)[:n_lanes]
    z_lo = np.full(n_lanes + n_runs + 1, np.inf)
    z_hi = np.full(n_lanes + n_runs + 1, -np.inf)
    z_lo[:n_lanes] = base
    z_hi[:n_lanes] = np.minimum(base + INSTANT_LEVELS * frame.h, top)
    np.minimum.at(z_lo, n_lanes + run_of_lane, base)
    np.maximum.at(z_hi, n_lanes + run_of_lane, top)
    if n_lanes:
        z_lo[-1], z_hi[-1] = base.min(), top.max()
    return z_lo, z_hi


def instants_in_window(sel, t0: float, t1: float) -> int:
    """Instants inside [t0, t1] that `instant_markers` places (their lane or process shown)."""
    tr = sel.trace
    if tr.instant_ts.size == 0:
        return 0
    inst = np.unique(_instant_groups(sel)[0])
    ts = tr.instant_ts[inst]
    return int(((ts >= t0) & (ts <= t1)).sum())
