"""The ring stage of the thread view: bended icicles on a semicircle (SyncTrace IV-B, the
context view), bpy-free.

Every shown thread (a *lane*) gets a section of a semicircle around the centre C, in lane
order from left to right (SyncTrace: "all thread traces together form a semicircle where
each thread trace is assigned an equal section by default"), the focused lane
``focus_scale`` times wider than the others (Fig. 7); sections are separated by a small
gap.  Inside a section, time maps linearly to angle over the shown window [t0, t1] (the
same window for every thread, so a wait and its release are drawn at the moments they
happened, and time runs left to right along the arc); a call's stack level maps to
radius: level 0 at the zero-level radius Z, deeper levels outward, placed by the shared
fold stage (`layout.fold`: infrastructure and wrappers in bands, narrow towers squeezed,
each lane within its level budget), so the ring shows the program's own calls, not 14
levels of thread start-up.

Ring units: a level is 1 wide, Z = ``zero_radius`` levels.  The ring is built in its own
plane (x, y, with bars extruded along +h) and placed into the scene by a `RingPlacement`:
the semicircle stands upright in the figure's front plane (local angle a in [π, 2π] is
the upper half: the arc runs over the top, C at the bottom middle), scaled to world units,
its bars extruded into the picture (+y, like the icicle's measure): a wait or I/O call
stands `SYNC_HEIGHT` deep, any other call grows by a quarter of that with the share of
its time spent waiting or doing I/O below it ((dur_w + dur_o) / dur, Eq. 3-4).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BAR_FILL = 0.88  # a bar fills this much of its level band
GAP_DEG = 1.5  # gap between sections (at most 15 % of a section)
BASE_HEIGHT = 0.18  # extrusion of a bar that neither waits nor does I/O (level widths)
SYNC_HEIGHT = 1.1  # extra extrusion of a bar that only waits or does I/O
ARC_START, ARC_SPAN = np.pi, np.pi  # the semicircle: local angles π (left) … 2π (right), over the top
#: the zero-level radius of a ring without hand-off curves (level widths): room for the lane
#: band inside level 0, not for curves
MIN_ZERO_RADIUS = 4.0
#: each lane's level 0 spans at least this many level widths along the arc (many lanes keep a
#: larger inside, so their sections do not end in slivers at the centre)
LANE_ARC_LEVELS = 2.0


@dataclass
class Ring:
    """Section angles per lane and the radii; ``angle(lane, t)`` places a moment."""

    a0: np.ndarray  # (n_lanes,) start angle of each lane's section (radians, local)
    a1: np.ndarray  # (n_lanes,) end angle
    lane_levels: np.ndarray  # (n_lanes,) levels each lane takes (after folding)
    zero_radius: float
    t0: float
    t1: float

    @property
    def outer_radius(self) -> float:
        return self.zero_radius + (float(self.lane_levels.max()) if self.lane_levels.size else 0.0)

    def angle(self, lane, t) -> np.ndarray:
        lane = np.asarray(lane)
        f = (np.clip(np.asarray(t, np.float64), self.t0, self.t1) - self.t0) / max(self.t1 - self.t0, 1e-300)
        return self.a0[lane] + f * (self.a1[lane] - self.a0[lane])

    def us_per_radian(self) -> np.ndarray:
        return (self.t1 - self.t0) / np.maximum(self.a1 - self.a0, 1e-12)


def sector_angles(n_lanes: int, focus_lane: int, focus_scale: float, start: float = ARC_START,
                  span: float = ARC_SPAN) -> tuple:
    """(a0, a1) per lane: lanes in order over [start, start + span], the focus lane
    ``focus_scale`` times as wide as the others, a small gap between neighbours."""
    if n_lanes == 0:
        return np.zeros(0), np.zeros(0)
    gap = min(np.radians(GAP_DEG), 0.15 * span / n_lanes) if n_lanes > 1 else 0.0
    w = np.ones(n_lanes)
    if 0 <= focus_lane < n_lanes and n_lanes > 1:
        w[focus_lane] = focus_scale
    width = (span - (n_lanes - 1) * gap) * w / w.sum()
    a0 = start + np.concatenate([[0.0], np.cumsum(width + gap)[:-1]])
    return a0, a0 + width


def inner_radius(zero_radius: float, n_handoffs: int, n_lanes: int) -> float:
    """The zero-level radius Z of a ring with ``n_handoffs`` shown hand-off curves: the
    inside is the curves' room, so ``zero_radius`` when any is shown, else only the lane
    band's: `MIN_ZERO_RADIUS`, or more where a lane's level 0 would span less than
    `LANE_ARC_LEVELS` along the arc; never above ``zero_radius``."""
    zero_radius = float(zero_radius)
    if int(n_handoffs) > 0:
        return zero_radius
    return min(zero_radius, max(MIN_ZERO_RADIUS, LANE_ARC_LEVELS * max(int(n_lanes), 1) / ARC_SPAN))


def make_ring(n_lanes: int, lane_levels, focus_lane: int, focus_scale: float, zero_radius: float,
              t0: float, t1: float) -> Ring:
    a0, a1 = sector_angles(n_lanes, focus_lane, focus_scale)
    return Ring(a0, a1, np.asarray(lane_levels, np.float64), float(zero_radius), float(t0), float(t1))


#: local ring coordinates (x, y, h) → the front plane (x, h, −y): h into the picture, the
#: upper semicircle (y < 0 locally) above C; a rotation (determinant 1), so faces keep
#: their orientation
FRONT = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])


@dataclass
class RingPlacement:
    """Where the ring stands in the scene: world = origin + scale · FRONT · diag(stretch, 1, 1)
    · local.  ``stretch`` ≥ 1 widens the semicircle into a half-ellipse (its width
    ``stretch`` times its height's ratio): a frame wider than twice its height is filled
    instead of leaving its sides empty; 1 is SyncTrace's semicircle."""

    origin: tuple
    scale: float
    stretch: float = 1.0

    def _stretched(self, local) -> np.ndarray:
        p = np.array(local, np.float64)
        p[..., 0] *= self.stretch
        return p

    def to_world(self, local) -> np.ndarray:
        return np.asarray(self.origin, np.float64) + self.scale * (self._stretched(local) @ FRONT.T)

    def direction(self, local_dir) -> np.ndarray:
        """World directions of local ones (not normalised: a stretched one is longer)."""
        return self._stretched(local_dir) @ FRONT.T


def polar(a, radius, h=0.0) -> np.ndarray:
    """Local ring points at angles ``a`` and ``radius`` (broadcast), ``h`` deep."""
    a = np.asarray(a, np.float64)
    r = np.broadcast_to(np.asarray(radius, np.float64), a.shape)
    return np.stack([r * np.cos(a), r * np.sin(a), np.full(a.shape, float(h))], axis=-1)


def bar_heights(dur_w, dur_o, dur, is_sync) -> np.ndarray:
    """Extrusion of each bar (level widths): BASE + SYNC for a wait/I/O call, else
    BASE + SYNC/4 × (dur_w + dur_o)/dur."""
    share = np.clip((dur_w + dur_o) / np.maximum(dur, 1e-300), 0.0, 1.0)
    return BASE_HEIGHT + SYNC_HEIGHT * np.where(is_sync, 1.0, 0.25 * share)


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
