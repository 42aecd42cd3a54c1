"""Lanes past ``limits.max_lanes_read``: which are kept, and the others merged into one.

Every lane (a thread, a profile) a reader makes costs its own tables, in the reader and in
`stacks.timed_trace`/`merged_trace`: 200,000 perf script threads of one event each took 13 s,
100,000 speedscope profiles 10 s.  So at most ``limits.max_lanes_read`` lanes are made: the heaviest
(`kept_lanes`: the most samples, or in a merged trace the most weight) keep theirs, the others
are one lane `OTHER_LANES` (`merge_profiles`), repair ``lanes_capped`` naming the cap
(`lanes_capped_action`).  The builder applies it to any list of profiles (`cap_profiles`); a
reader that splits one stack table into lanes caps the lane ids before (`cap_lane_ids`: perf
script); a reader whose lanes each cost a reading caps before reading (speedscope reads the
rest in one pass, Firefox leaves the rest unread).  `note_repair` counts a repair a reader
makes after the builder.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np

from ..model import TraceFormatError, TraceWarning

__all__ = ["OTHER_LANES", "kept_lanes", "lanes_capped_action", "cap_lane_ids", "cap_profiles", "merge_profiles",
           "lanes_to_read", "note_repair"]

#: the lane that holds the threads (profiles) past ``limits.max_lanes_read``
OTHER_LANES = "other threads"


def lanes_capped_action(what: str, n: int, n_merged: int, max_lanes_read: int) -> str:
    """The repair ``lanes_capped``'s action: the cap, and how many lanes it merged."""
    return (f"more than {max_lanes_read} {what} ({n}; max_lanes_read=): the {n_merged} lightest merged into one lane "
            f"'{OTHER_LANES}'")


def kept_lanes(weight: np.ndarray, n_keep: int) -> np.ndarray:
    """Which of the lanes weighing ``weight`` are kept: the ``n_keep`` heaviest (ties: the
    first), as a mask in the lanes' order."""
    keep = np.zeros(weight.size, np.bool_)
    order = np.lexsort((np.arange(weight.size), -weight))  # heaviest first, then the first
    keep[order[: max(int(n_keep), 0)]] = True
    return keep


def lanes_to_read(items: list, weight_of, limits, left_out: list) -> list:
    """The indices of the lanes ``items`` a reader reads: all up to ``limits.max_lanes_read``; past it
    the max_lanes_read heaviest by ``weight_of(item)``, the others left unread and counted in
    ``left_out`` as (lanes, left out, their weight)."""
    if len(items) <= limits.max_lanes_read:
        return list(range(len(items)))
    w = np.fromiter(map(weight_of, items), np.float64, len(items))
    keep = kept_lanes(w, limits.max_lanes_read)
    left_out.append((len(items), int((~keep).sum()), int(w[~keep & np.isfinite(w)].sum())))
    return np.flatnonzero(keep).tolist()


def note_repair(trace, code: str, count: int, first: str, action: str, source: str, warn: bool) -> None:
    """Count a repair a reader made after the builder (``trace.meta["repairs"]``); warn once."""
    if count <= 0:
        return
    r = trace.meta.setdefault("repairs", {}).setdefault(code, {"count": 0, "first": first, "action": action})
    r["count"] += int(count)
    if warn:
        warnings.warn(TraceWarning(f"{source}: {count} × {code} (first: {first}): {action}"), stacklevel=3)


def cap_lane_ids(order: list, node_lane: np.ndarray, sample_lane: np.ndarray, limits, rep, what: str = "threads"):
    """At most ``limits.max_lanes_read`` of the lanes ``order`` (lane ids 0..len(order)-1), for a
    reader that splits one stack table into lanes (``node_lane``, ``sample_lane``: each node's
    and sample's lane): past it, the lanes of the most samples keep theirs and the rest become
    one lane, id ``len(order)`` (named `OTHER_LANES`; their nodes keep their parents, each
    thread's stacks stay whole in it), with the repair ``lanes_capped`` added to ``rep``.
    Returns (lanes, node_lane, sample_lane), as given when nothing is capped."""
    n = len(order)
    if n <= int(limits.max_lanes_read):
        return order, node_lane, sample_lane
    counts = np.bincount(sample_lane[sample_lane >= 0], minlength=n)[:n].astype(np.float64)
    keep = kept_lanes(counts, int(limits.max_lanes_read) - 1)
    lane_map = np.where(keep, np.arange(n), n).astype(np.int64)
    lane_map = np.append(lane_map, -1)  # index -1 (no lane) stays -1
    rep.add("lanes_capped", int(n - keep.sum()), "the whole file", lanes_capped_action(what, n, int(n - keep.sum()),
                                                                          int(limits.max_lanes_read)))
    return [order[k] for k in np.flatnonzero(keep).tolist()] + [n], lane_map[node_lane], lane_map[sample_lane]


def _lane_weight(p, merged: bool) -> float:
    """A profile's weight when lanes are ranked: its samples' weight (in a merged trace, x is
    weight), else its number of samples."""
    n = int(np.asarray(p.sample_stack).size)
    if not merged or p.sample_weight is None:
        return float(n)
    w = np.asarray(p.sample_weight, np.float64)
    return float(w[np.isfinite(w) & (w > 0)].sum()) if w.size == n else float(n)


def cap_profiles(profiles: list, limits, rep, merged: bool, source: str = "<profile>") -> list:
    """``profiles`` with at most ``limits.max_lanes_read`` lanes: past it the heaviest (samples, or
    in a ``merged`` trace their weight) are kept in their order and the others are merged,
    last, into one profile `OTHER_LANES` (repair ``lanes_capped``): their stack tables one
    after another (each stack's parent and each sample's stack moved by the tables before it;
    one out of range stays out of range, for `_stack_forest` and `_samples` to count), their samples in
    time order (without times, laid end to end by weight; at one time, empty samples first, then
    in the profiles' order)."""
    m = int(limits.max_lanes_read)
    if len(profiles) <= m:
        return profiles
    weight = np.fromiter((_lane_weight(p, merged) for p in profiles), np.float64, len(profiles))
    keep = kept_lanes(weight, m - 1)
    rest = [p for p, k in zip(profiles, keep.tolist()) if not k]
    rep.add("lanes_capped", len(rest), "the whole file", lanes_capped_action("threads", len(profiles), len(rest), m))
    return [p for p, k in zip(profiles, keep.tolist()) if k] + [merge_profiles(rest, source)]


def merge_profiles(rest: list, source: str):
    """One profile `OTHER_LANES` of the stacks and samples of the profiles ``rest`` (as
    `cap_profiles` merges the lanes past max_lanes_read)."""
    parents, frames_, stacks, times, weights = [], [], [], [], []
    timed = any(p.sample_time is not None for p in rest)
    has_w = any(p.sample_weight is not None for p in rest)
    base = 0
    for p in rest:
        par = np.asarray(p.stack_parent).astype(np.int64, copy=False)
        s = np.asarray(p.sample_stack).astype(np.int64, copy=False)
        n = par.size
        # out of range stays out of range (-2), so `_stack_forest` and `_samples` count it as they would
        parents.append(np.where((par >= 0) & (par < n), par + base, np.where(par == -1, -1, -2)))
        frames_.append(np.asarray(p.stack_frame).astype(np.int64, copy=False))
        stacks.append(np.where((s >= 0) & (s < n), s + base, np.where(s == -1, -1, -2)))
        w = np.ones(s.size) if p.sample_weight is None else np.asarray(p.sample_weight, np.float64)
        for what, a in (("weights", w), ("times", p.sample_time)):
            if a is not None and np.asarray(a).size != s.size:  # as `_samples` and `timed_trace` refuse it
                raise TraceFormatError(f"{source}: thread {p.thread_name!r}: {np.asarray(a).size} sample {what} for "
                                       f"{s.size} samples")
        weights.append(w)
        if timed:  # a profile without times: its samples end to end from 0, each as long as its weight
            times.append(np.asarray(p.sample_time, np.float64) if p.sample_time is not None else
                         np.concatenate([[0.0], np.cumsum(np.where(np.isfinite(w) & (w > 0), w, 0.0))])[:-1])
        base += n
    stack = np.concatenate(stacks)
    weight = np.concatenate(weights) if has_w else None
    time = None
    if timed:
        time = np.concatenate(times)
        o = np.lexsort((stack >= 0, time))  # at one time an empty sample (a thread's end) first
        time, stack = time[o], stack[o]
        weight = None if weight is None else weight[o]
    ends = [p.end_time for p in rest if p.end_time is not None and math.isfinite(p.end_time)]
    steps = [p.interval_us for p in rest if p.interval_us]
    return replace(rest[0], thread_name=OTHER_LANES, process_name="", pid=0, tid=0,
                   stack_parent=np.concatenate(parents), stack_frame=np.concatenate(frames_), sample_stack=stack,
                   sample_time=time, sample_weight=weight, end_time=max(ends) if timed and ends else None,
                   interval_us=min(steps) if steps else None, distinct_paths=False, extra={})
