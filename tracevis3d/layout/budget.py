"""Height budget stage: how many readable levels a figure has, and how each lane shares them
(bpy-free).

A name can be read on a box whose front face is at least as tall as its text (the label
stage needs ``(ASCENT + DESCENT) · 1.08`` of the text size).  So a figure of content height
``rect_h`` pixels holds about ``rect_h / level_px`` levels at which names can be read
(`readable_levels`).  Deep stacks in several lanes need more: five lanes of 100 levels in
1,000 pixels leave 2 pixels a level, and nothing can be named.  Then every lane gets a
budget of levels (`lane_budgets`), by what it holds: lanes share the room by their busy
time (time in calls that are not waits: `lane_busy`), a lane never gets more than it
needs, and every lane keeps at least `MIN_LANE_LEVELS` (its root call and a name).  The
fold stage (`layout.fold.fold_levels`) then squeezes each lane into its budget: the calls
too narrow to carry a name shrink first, then the narrower of the named ones
(SyncTrace IV-C's fisheye over stack levels, per lane and per call).
"""
from __future__ import annotations

import numpy as np

from ..model import KIND_WAIT
from .geometry import BOX_FILL
from .text import ASCENT, DESCENT

#: a readable level is this much taller than the text it must hold (room around the face)
READABLE_MARGIN = 1.1
#: every lane keeps at least this many levels (its root call and a name), if it has them
MIN_LANE_LEVELS = 2.5
#: busy time counts with this power when lanes share the height (a lane twice as busy gets
#: 2^0.5 times the levels: the less busy lanes stay readable)
BUSY_POWER = 0.5


def level_px(text_px: float) -> float:
    """Pixels one level needs so a box's face (BOX_FILL of the level) holds a name."""
    return text_px * (ASCENT + DESCENT) * 1.08 / BOX_FILL * READABLE_MARGIN


def readable_levels(content_h_px: float, text_px: float, n_lanes: int, lane_gap_levels: float,
                    reserved_px: float = 0.0) -> float:
    """Levels (all lanes together, gaps not counted) that fit ``content_h_px`` pixels at a
    readable height, after ``reserved_px`` (the time axis) and the gaps between lanes."""
    free = max(content_h_px - reserved_px, 0.0) / level_px(text_px)
    return max(free - lane_gap_levels * max(n_lanes - 1, 0), 1.0)


def lane_busy(trace, idx: np.ndarray, lane: np.ndarray, n_lanes: int) -> np.ndarray:
    """Per lane: time (µs) in the shown calls' self time, waits left out (one pass,
    `kernels.overview_sums.lane_busy_times`: the sums ``np.bincount`` gives, no arrays over the
    shown calls)."""
    from ..kernels.overview_sums import lane_busy_times
    from .fold import every_call

    lane = np.asarray(lane)
    if lane.size == 0 or int(lane.max()) >= n_lanes or int(lane.min()) < 0:  # (lanes past ``n_lanes``: numpy's)
        st = np.maximum(trace.self_time_of(idx), 0.0)
        st = np.where(trace.kind[idx] == KIND_WAIT, 0.0, st)
        return np.bincount(lane, weights=st, minlength=n_lanes)[:n_lanes]
    whole = every_call(idx, len(trace))
    return lane_busy_times(trace.start, trace.end, trace.end_index, trace.kind, np.asarray(idx), whole, lane,
                           int(n_lanes), int(KIND_WAIT))


def lane_budgets(demand, weight, total: float, min_levels: float = MIN_LANE_LEVELS) -> np.ndarray:
    """Levels per lane: ``clip(λ · weight, min(demand, min_levels), demand)`` with λ such
    that the budgets add up to ``total`` (water-filling); the demands when they fit.  When
    even the minimums do not fit (many lanes: 17 threads of a pool), the lanes share
    ``total`` equally instead, ``min(λ, demand, min_levels)`` (water-filling with equal
    weights): a budget over ``total`` would shrink every level of the figure until no name
    can be read, while the squeeze can still keep each lane's widest calls readable."""
    demand = np.asarray(demand, np.float64)
    w = np.maximum(np.asarray(weight, np.float64), 0.0)
    lo = np.minimum(demand, min_levels)
    if demand.sum() <= total:
        return demand.copy()
    if lo.sum() >= total:  # equal shares of the minimums
        demand, lo, w = lo, np.zeros_like(lo), np.ones_like(lo)
    if not (w > 0).any():
        w = np.ones_like(w)

    def spend(lam):
        return np.clip(lam * w, lo, demand)

    a, b = 0.0, 1.0
    while spend(b).sum() < total:
        b *= 2.0
        if b > 1e300:
            break
    for _ in range(100):
        m = 0.5 * (a + b)
        if spend(m).sum() < total:
            a = m
        else:
            b = m
    return spend(b)


def weights_from_busy(busy) -> np.ndarray:
    """Lane weights for `lane_budgets` from busy time (`BUSY_POWER`)."""
    busy = np.maximum(np.asarray(busy, np.float64), 0.0)
    top = float(busy.max()) if busy.size else 0.0
    return (busy / top) ** BUSY_POWER if top > 0 else np.ones_like(busy)
