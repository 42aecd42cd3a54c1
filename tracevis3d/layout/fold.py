"""Fold stage: levels that carry little information get little height (SyncTrace IV-C).

The rule (``fold="auto"``, the default) folds a call when it is not a wait, release or
I/O call and

1. it is runtime infrastructure (`naming.INFRA_MODULES` / `INFRA_FUNCTIONS`: the import
   machinery, program and thread start-up, the tracer), or
2. it passes its time through: its longest child covers at least `PASS_THROUGH_SHARE`
   (90 %) of its duration, and its parent is infrastructure or passes through too, so
   the first call of a pass-through chain keeps its level and its name (``main`` stays,
   the ``run → _run → __call__`` wrappers under it fold).

``fold="A:B[,C:D]"`` folds every call whose stack level lies in a range (inclusive);
``fold="none"`` folds nothing.

Folded calls are drawn as bands (`kernels.fold.place_folded_levels`): a run of folded
calls, parent to child, becomes ONE slab (the box of its first call): as tall as a level
(`BAND_WIDE`) when the run is wide enough to carry a marker that says how many levels it
holds, else a thin slab (`BAND_NARROW` of a level); what the run calls that is not folded
sits on the slab.  A single wide folded call is not folded (its band would take its level
anyway, and hide its name).  Times and order are untouched: folding only moves boxes down
and leaves the folded calls out of the drawing (they remain in the trace and the data).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ..kernels.fold import dominant_child_share, place_folded_levels
from ..model import KIND_OTHER, Trace
from .naming import function_table
from .params import parse_fold

PASS_THROUGH_SHARE = 0.9
BAND_WIDE = 1.0
BAND_NARROW = 0.25

_RULE_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


@dataclass
class Folding:
    """Vertical placement of the shown calls, in levels (one level = one unfolded call)."""

    bottom: np.ndarray  # float64 per shown call
    height: np.ndarray  # float64 per shown call
    folded: np.ndarray  # bool, effectively folded
    run_start: np.ndarray  # int32 (index into the shown calls), -1 when not folded
    run_levels: np.ndarray  # int32, levels of the run at run starts, 0 elsewhere
    drawn: np.ndarray  # bool: unfolded calls and run starts (the slabs)
    lane_levels: np.ndarray  # float64 per lane: height of the lane's tallest stack
    rule: str  # "auto", "none" or "levels"


def auto_fold_rule(trace: Trace) -> np.ndarray:
    """Per call of ``trace``: does the automatic rule fold it (see module doc)?  Cached."""
    hit = _RULE_CACHE.get(trace)
    if hit is not None:
        return hit
    ft = function_table(trace)
    infra = ft.infra[trace.func] & (trace.kind == KIND_OTHER)
    share = dominant_child_share(trace.start, trace.end, trace.parent)
    passing = (share >= PASS_THROUGH_SHARE) & (trace.kind == KIND_OTHER)
    p = trace.parent
    has_p = p >= 0
    pp = np.maximum(p, 0)
    parent_ok = has_p & (passing[pp] | infra[pp])
    rule = infra | (passing & parent_ok)
    _RULE_CACHE[trace] = rule
    return rule


def fold_mask(trace: Trace, idx: np.ndarray, fold) -> tuple:
    """(rule name, bool per shown call) for the ``fold`` parameter."""
    kind, ranges = parse_fold(fold)
    if kind == "none":
        return kind, np.zeros(idx.size, np.bool_)
    if kind == "auto":
        return kind, auto_fold_rule(trace)[idx]
    d = trace.depth[idx]
    m = np.zeros(idx.size, np.bool_)
    for a, b in ranges:
        m |= (d >= a) & (d <= b)
    return kind, m


def fold_levels(trace: Trace, idx: np.ndarray, parent: np.ndarray, lane: np.ndarray, n_lanes: int,
                fold, width_px: np.ndarray, marker_px: float) -> Folding:
    """Place the shown calls ``idx`` (with local ``parent``) in levels, folding by ``fold``.

    ``width_px`` is each call's (estimated) width in pixels; a run whose first call is at
    least ``marker_px`` wide gets a band tall enough for its marker.
    """
    rule, mask = fold_mask(trace, idx, fold)
    wide = np.asarray(width_px) >= marker_px
    bottom, height, eff, run_start, run_levels = place_folded_levels(
        mask, parent, wide, BAND_WIDE, BAND_NARROW)
    drawn = (run_start < 0) | (run_start == np.arange(idx.size))
    top = bottom + height
    lane_levels = np.zeros(n_lanes, np.float64)
    np.maximum.at(lane_levels, lane, top)
    return Folding(bottom, height, eff, run_start, run_levels, drawn, lane_levels, rule)
