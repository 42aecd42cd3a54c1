"""Fold stage: levels that carry little information get little height (SyncTrace IV-C).

The rule (``fold="auto"``, the default) folds a call when it is not a wait, release or
I/O call and

1. it is runtime infrastructure (`naming.INFRA_MODULES` / `INFRA_FUNCTIONS`: the import
   machinery, program and thread start-up, the tracer), or
2. it passes its time through: its longest child covers at least `PASS_THROUGH_SHARE`
   (90 %) of its duration, and its parent (not infrastructure) passes through too, so
   the first call of a pass-through chain keeps its level and its name (``main`` stays,
   the ``run → _run → __call__`` wrappers under it fold).

3. (not a fold, a squeeze) a call too narrow to carry a name (narrower than
   `NARROW_EM` label sizes) is drawn `NARROW_HEIGHT` of a level tall, so narrow deep
   stacks (recursions, import towers) do not take the height the named calls need; unless
   it can be named with others: it belongs to a wide run of repeated calls
   (`kernels.runs.sibling_runs`), or to a wide row of siblings that one function
   dominates (`ROW_SHARE` of the row's time, `kernels.runs.child_rows`): those rows are
   named "120× Body.paragraph".  The first narrow level above a call wide enough to be
   named keeps its full height too, so the frontier where the wide calls break up into
   narrow ones can still be named by groups ("58× Text.text & more").

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
from ..kernels.runs import child_rows, sibling_runs
from ..kernels.tree import depth_and_end_from_parent
from ..model import KIND_OTHER, Trace
from .naming import function_table
from .params import parse_fold

PASS_THROUGH_SHARE = 0.9
NARROW_EM = 3.5
NARROW_HEIGHT = 0.4
ROW_SHARE = 0.5
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
    rep_head: np.ndarray  # int64: first call of each call's run of repeated siblings
    rep_end: np.ndarray  # float64: at run heads, the end of the run (µs)
    rep_count: np.ndarray  # int64: at run heads, the number of calls in the run
    rows: tuple  # `kernels.runs.child_rows` of the shown calls
    row_named: np.ndarray  # bool per shown call: its children form a wide, dominated row
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
    parent_ok = has_p & passing[pp] & ~infra[pp]
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
                fold, width_px: np.ndarray, marker_px: float, label_px: float = 16.0,
                us_per_px: float = 1.0) -> Folding:
    """Place the shown calls ``idx`` (with local ``parent``) in levels, folding by ``fold``.

    ``width_px`` is each call's (estimated) width in pixels; a run whose first call is at
    least ``marker_px`` wide gets a band tall enough for its marker; with the automatic
    rule, calls narrower than `NARROW_EM` × ``label_px`` are squeezed.
    """
    rule, mask = fold_mask(trace, idx, fold)
    width_px = np.asarray(width_px, np.float64)
    wide = width_px >= marker_px
    start = trace.start[idx]
    gap = np.full(max(n_lanes, 1), float(us_per_px))
    head, rep_end, rep_count = sibling_runs(trace.func[idx], start, trace.end[idx], parent, lane, gap)
    upx = max(float(us_per_px), 1e-300)
    run_px = (rep_end[head] - start[head]) / upx
    _, local_end = depth_and_end_from_parent(parent)
    rows = child_rows(trace.func[idx], start, trace.end[idx], local_end, trace.n_functions)
    n_children, row_start, row_end, dom_func, dom_time, dom_count, total = rows
    row_named = (n_children >= 2) & ((row_end - row_start) / upx >= NARROW_EM * label_px) \
        & (dom_time >= ROW_SHARE * np.maximum(total, 1e-300))
    in_named_row = np.zeros(idx.size, np.bool_)
    has_p = parent >= 0
    in_named_row[has_p] = row_named[parent[has_p]]
    base = np.ones(idx.size, np.float64)
    if rule == "auto":
        narrow = (np.maximum(width_px, run_px) < NARROW_EM * label_px) & ~in_named_row
        parent_narrow = np.zeros(idx.size, np.bool_)
        parent_narrow[has_p] = narrow[parent[has_p]]
        base[narrow & parent_narrow] = NARROW_HEIGHT
    bottom, height, eff, run_start, run_levels = place_folded_levels(
        mask, parent, wide, BAND_WIDE, BAND_NARROW, base)
    drawn = (run_start < 0) | (run_start == np.arange(idx.size))
    top = bottom + height
    lane_levels = np.zeros(n_lanes, np.float64)
    np.maximum.at(lane_levels, lane, top)
    return Folding(bottom, height, eff, run_start, run_levels, drawn, head, rep_end, rep_count, rows, row_named,
                   lane_levels, rule)
