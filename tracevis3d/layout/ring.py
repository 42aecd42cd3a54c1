"""The ring stage of the thread view: bended icicles (SyncTrace IV-B, context view), bpy-free.

Every shown thread (a *lane*) gets a sector of the ring around the centre, in lane order
counter-clockwise, the focused lane centred at the front (-y, nearest the camera) and
``focus_scale`` times wider than the others (Fig. 7); sectors are separated by a small gap.
Inside a sector, time maps linearly to angle over the shown window [t0, t1] (the same
window for every thread, so a wait and its release are drawn at the moments they happened);
stack level l maps to the radius band [r0(l), r1(l)]: level 0 at the zero-level radius Z,
deeper levels outward, the first ``fold`` levels folded to `FOLDED` of a level (the stack
folding fisheye of IV-C).  In 3D the ring lies in the ground plane and bars are extruded
upwards: a wait or I/O call itself stands `SYNC_HEIGHT` tall, any other call grows by a
quarter of that with the share of its time spent waiting or doing I/O below it
((dur_w + dur_o) / dur, Eq. 3-4): the waits stand out, their callers less.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FOLDED = 0.25  # a folded level's width, in level widths
BAR_FILL = 0.88  # a bar fills this much of its level band
GAP_DEG = 2.5  # gap between sectors (at most 15 % of a sector)
BASE_HEIGHT = 0.18  # height of a bar that neither waits nor does I/O (level widths)
SYNC_HEIGHT = 1.1  # extra height of a bar that only waits or does I/O


@dataclass
class Ring:
    """Sector angles per lane and radii per level; ``angle(lane, t)`` places a moment."""

    a0: np.ndarray  # (n_lanes,) start angle of each lane's sector (radians)
    a1: np.ndarray  # (n_lanes,) end angle
    level_r0: np.ndarray  # (levels,) inner radius of each level's band
    level_r1: np.ndarray  # (levels,) outer radius
    zero_radius: float
    t0: float
    t1: float

    @property
    def outer_radius(self) -> float:
        return float(self.level_r1[-1]) if self.level_r1.size else self.zero_radius

    def angle(self, lane, t) -> np.ndarray:
        lane = np.asarray(lane)
        f = (np.clip(np.asarray(t, np.float64), self.t0, self.t1) - self.t0) / max(self.t1 - self.t0, 1e-300)
        return self.a0[lane] + f * (self.a1[lane] - self.a0[lane])

    def us_per_radian(self) -> np.ndarray:
        return (self.t1 - self.t0) / np.maximum(self.a1 - self.a0, 1e-12)


def sector_angles(n_lanes: int, focus_lane: int, focus_scale: float) -> tuple:
    """(a0, a1) per lane: the focus lane centred at -90° (front), lanes counter-clockwise."""
    if n_lanes == 0:
        return np.zeros(0), np.zeros(0)
    gap = min(np.radians(GAP_DEG), 0.15 * 2 * np.pi / n_lanes) if n_lanes > 1 else 0.0
    w = np.ones(n_lanes)
    if 0 <= focus_lane < n_lanes and n_lanes > 1:
        w[focus_lane] = focus_scale
    span = (2 * np.pi - n_lanes * gap) * w / w.sum()
    order = (np.arange(n_lanes) + max(focus_lane, 0)) % n_lanes  # focus first
    a0 = np.zeros(n_lanes)
    cur = -np.pi / 2 - span[order[0]] / 2
    for lane in order.tolist():
        a0[lane] = cur
        cur += span[lane] + gap
    return a0, a0 + span


def level_radii(levels: int, zero_radius: float, fold: int) -> tuple:
    """(r0, r1) per level: width 1 per level, ``FOLDED`` for the first ``fold`` levels."""
    width = np.where(np.arange(levels) < fold, FOLDED, 1.0)
    r0 = zero_radius + np.concatenate([[0.0], np.cumsum(width)[:-1]]) if levels else np.zeros(0)
    return r0, r0 + BAR_FILL * width


def make_ring(n_lanes: int, levels: int, focus_lane: int, focus_scale: float, zero_radius: float, fold: int,
              t0: float, t1: float) -> Ring:
    a0, a1 = sector_angles(n_lanes, focus_lane, focus_scale)
    r0, r1 = level_radii(max(levels, 1), zero_radius, fold)
    return Ring(a0, a1, r0, r1, float(zero_radius), float(t0), float(t1))


def bar_heights(dur_w, dur_o, dur, is_sync) -> np.ndarray:
    """Extrusion of each bar (level widths): BASE + SYNC for a wait/I/O call, else
    BASE + SYNC/4 × (dur_w + dur_o)/dur."""
    share = np.clip((dur_w + dur_o) / np.maximum(dur, 1e-300), 0.0, 1.0)
    return BASE_HEIGHT + SYNC_HEIGHT * np.where(is_sync, 1.0, 0.25 * share)


def cluster_bars(sel, ring: Ring, world_per_px: float, cluster_px: float):
    """Sub-pixel calls merged per (lane, level) (SyncTrace IV-B2, `cluster.cluster_subpixel_calls`):
    a call is small when its arc at the zero-level radius is under ``cluster_px`` pixels.
    Returns the kernel's tuple (cluster_of, lane, depth, start, end, count, rep, uniform)."""
    from .cluster import cluster_subpixel_calls

    tr, idx = sel.trace, sel.idx
    n_lanes = sel.lane_threads.size
    if cluster_px <= 0 or idx.size == 0:
        z = np.zeros(0, np.int32)
        return (np.full(idx.size, -1, np.int32), z, z, np.zeros(0), np.zeros(0), z, z, np.zeros(0, bool))
    us_per_px = ring.us_per_radian() * world_per_px / max(ring.zero_radius, 1e-9)
    min_w = (cluster_px * us_per_px).astype(np.float64)[:n_lanes]
    start = np.maximum(tr.start[idx], ring.t0)
    end = np.minimum(tr.end[idx], ring.t1)
    return cluster_subpixel_calls(start, end, tr.depth[idx].astype(np.int32), sel.lane.astype(np.int32), min_w,
                                  min_w, tr.func[idx].astype(np.int32))


def neighbour_distinct(n: int, m: int) -> np.ndarray:
    """Colour index per lane from ``m`` colours such that no two neighbours on the ring
    (lane k and k+1, and the last and the first) share one (SyncTrace IV-B)."""
    if n == 0:
        return np.zeros(0, np.int64)
    m = max(int(m), 3)
    out = np.arange(n) % m
    if n > 1 and out[-1] == out[0]:
        out[-1] = next(c for c in range(m) if c not in (out[0], out[-2]))
    return out
