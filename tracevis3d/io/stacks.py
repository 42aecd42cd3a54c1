"""Profiles of stacks → `Trace`: the one builder under every sampled and aggregated format.

A profiler writes, per thread (or per profile), a table of stacks (each a frame on top of a
parent stack) and samples that point into it.  The readers (speedscope, Firefox, V8
``.cpuprofile``, pprof, perf script, collapsed stacks, callgrind, ...) only translate their
file into `FrameTable` + `StackProfile`; this module makes the calls, the same way for all:

- **Timed samples** (`timed_trace`): speedscope's time-ordered view ("Time Order").  Samples
  in time order; a frame is one call from the first sample whose stack holds it to the first
  later sample whose stack does not hold it at the same place (stacks compared frame by frame
  from the bottom: `kernels.stacks.canonical_nodes` merges nodes of the same frame path first).
  Each sample lasts until the next; the last one until the profile's end or one sampling
  interval (the median step between samples).  Samples without times but with weights
  (speedscope's sampled profiles) are laid end to end, each as long as its weight.
- **Aggregated stacks** (`merged_trace`): speedscope's "Left Heavy" view, a trace whose x axis
  is the measure (samples, bytes, instructions...) instead of time: every distinct stack
  path is one call as wide as its inclusive weight, children side by side from the parent's
  left edge, the heaviest first, the parent's own weight at its right end
  (`kernels.left_heavy.left_heavy_calls`).  ``meta["x_unit"]`` names the measure and
  ``meta["merged"]`` is True: every view says so on its axis and in its title.
- `merge_trace` gives any timed trace the same merged view (the CLI's ``--merge``): each
  thread's calls merged by their frame path, weighted by self time.

Bounds: calls ≤ ``limits.sample_calls(input bytes)`` (each sample may open a whole stack);
stack depth ≤ ``limits.max_stack_depth`` (deeper chains are cut, a cycle in a parent table is
cut where it closes: both counted as repairs); times past ``limits.max_abs_time`` are left out
with a repair; lanes ≤ ``limits.max_lanes_read`` (`lanes.cap_profiles`: the heaviest kept, the rest
one lane "other threads", repair ``lanes_capped``).  Memory: a few arrays of the samples' and stacks' length.
"""
from __future__ import annotations

import gc
import math
import os
import warnings
import weakref
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ..model import Trace, TraceFormatError, TraceWarning
from .lanes import OTHER_LANES, cap_profiles

__all__ = ["FrameTable", "StackProfile", "timed_trace", "merged_trace", "merge_trace", "is_merged", "x_unit",
           "gc_paused", "OTHER_LANES"]


@contextmanager
def gc_paused():
    """Python's cyclic garbage collector off inside the block (back on after it, if it was on).

    A reader makes tens of thousands of small objects per file (names, parsed names, table
    rows) that all live on; each 700 allocations the collector runs, and every tenth of tenth
    run it walks every object the process holds (numba's and the add-on's modules: 10^5 and
    more), for nothing: on the bench's collapsed file one such walk cost 0.1 s of a 1 s load.
    Nothing made in the block is garbage in a cycle for long; the collector runs again after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class FrameTable:
    """The distinct frames of one file, (name, file, line), numbered by first appearance;
    every profile of the file indexes this one table (a function keeps one colour in every
    thread).  ``max_name_chars``: longer names are cut (distinct long names stay distinct)."""

    def __init__(self, max_name_chars: int = 4096):
        self.index: dict = {}
        self.names: list = []
        self.files: list = []
        self.lines: list = []
        self.max_name_chars = int(max_name_chars)

    def __len__(self) -> int:
        return len(self.names)

    def _clean(self, s) -> str:
        s = s if isinstance(s, str) else ("" if s is None else str(s))
        if len(s) > self.max_name_chars:
            import hashlib

            s = s[: self.max_name_chars - 10] + "…" + hashlib.blake2s(s.encode("utf-8", "replace"),
                                                                       digest_size=4).hexdigest()
        return s

    def add(self, name, file="", line=-1) -> int:
        """The id of frame (name, file, line), added when new.  An empty name is "(anonymous)"."""
        key = (name, file, line)
        k = self.index.get(key)
        if k is None:
            k = self.index[key] = self.append_frame(name, file, line)
        return k

    def append_frame(self, name, file, line) -> int:
        """Append a new frame (its name cleaned, "(anonymous)" when empty; its line -1 unless an
        int in 0..2^31-2) and return its id; the caller indexes it."""
        nm = self._clean(name) or "(anonymous)"
        fl = self._clean(file)
        try:
            ln = int(line)
        except (TypeError, ValueError, OverflowError):
            ln = -1
        ln = ln if 0 <= ln < 2 ** 31 - 1 else -1
        k = len(self.names)
        self.names.append(nm)
        self.files.append(fl)
        self.lines.append(ln)
        return k


@dataclass
class StackProfile:
    """One thread's (or one profile's) samples over its table of stacks.

    ``stack_parent[s]``: the stack under stack s (-1: s is a single frame); ``stack_frame[s]``:
    the frame on top of it (into the file's `FrameTable`).  ``sample_stack[k]``: the stack of
    sample k (-1: an empty stack, the thread idle).  ``sample_time[k]``: µs on the profile's
    clock (any order: sorted here), or None: samples are consecutive, each lasting its
    weight.  ``sample_weight[k]``: the sample's weight in the file's unit (None: 1 each).
    ``end_time``: when the last sample ends (µs; None: one sampling interval after it).
    """

    thread_name: str
    stack_parent: np.ndarray
    stack_frame: np.ndarray
    sample_stack: np.ndarray
    sample_time: np.ndarray | None = None
    sample_weight: np.ndarray | None = None
    end_time: float | None = None
    process_name: str = ""
    pid: int = 0
    tid: int = 0
    #: the sampling interval (µs) when the file states it; else the median step
    interval_us: float | None = None
    #: the reader vouches that the stack table is already canonical: every parent precedes its
    #: children and no two stacks have the same (parent, frame) (a trie built by interning, as
    #: the collapsed-stack scan builds it), so `kernels.stacks.canonical_nodes` would return it
    #: unchanged and is skipped (unless the table's checks repaired something)
    distinct_paths: bool = False
    extra: dict = field(default_factory=dict)


class Repairs:
    """Repairs a reader made (code → count, first where, what was done), merged into the
    built trace's ``meta["repairs"]`` and warned once each by `apply`."""

    def __init__(self):
        self.items: dict = {}

    def add(self, code: str, count: int, first: str, action: str):
        if count <= 0:
            return
        r = self.items.setdefault(code, {"count": 0, "first": first, "action": action})
        r["count"] += int(count)

    def row_depth(self, depth: int, stack: list, max_depth: int, where: str, code: str, deeper: str):
        """The depth of a row of an indented call tree (GHC's and Instruments' text) whose rows on
        the path to it are ``stack``: at most one level below the row before (a deeper row is
        noted as ``code``, ``deeper`` saying what was done, and taken as its child); None past
        ``max_depth`` levels (noted as "stack_deep": the row is skipped).  ``stack`` is cut to it."""
        if depth > len(stack):
            self.add(code, 1, where, deeper)
            depth = len(stack)
        if depth >= max_depth:
            self.add("stack_deep", 1, where, f"a row deeper than {max_depth} levels: skipped")
            return None
        del stack[depth:]
        return depth

    def apply(self, trace, source: str, warn: bool):
        reps = trace.meta.setdefault("repairs", {})
        for code, r in self.items.items():
            if code in reps:
                reps[code]["count"] += r["count"]
            else:
                reps[code] = dict(r)
            if warn:
                warnings.warn(TraceWarning(f"{source}: {r['count']} × {code} (first: {r['first']}): {r['action']}"),
                              stacklevel=3)
        return trace


def add_row(stack: list, parent: list, frame: list, weight: list, fid: int, w: float) -> None:
    """A row of an indented call tree (frame ``fid``, weight ``w``) appended as the child of the
    row on top of ``stack`` (the rows on the path to it, `Repairs.row_depth`), and pushed."""
    parent.append(stack[-1] if stack else -1)
    frame.append(fid)
    weight.append(w)
    stack.append(len(parent) - 1)


def _as_i64(a, what: str, source: str) -> np.ndarray:
    a = np.asarray(a)
    if a.size == 0:
        return np.zeros(0, np.int64)
    if a.dtype.kind not in "iu":
        raise TraceFormatError(f"{source}: {what} must be integers, got {a.dtype}")
    return a.astype(np.int64, copy=False)


def _stack_forest(p: StackProfile, n_frames: int, limits, source: str, rep: Repairs) -> tuple:
    """The profile's stack table checked and made a forest: (parent, frame, depth) with ids out
    of range cut (a parent out of range makes a root; a frame out of range is "(unknown)"),
    cycles and chains deeper than ``limits.max_stack_depth`` cut."""
    from ..kernels import chrome_tree as ct

    parent = _as_i64(p.stack_parent, "stack parents", source)
    frame = _as_i64(p.stack_frame, "stack frames", source)
    if parent.size != frame.size:
        raise TraceFormatError(f"{source}: thread {p.thread_name!r}: {parent.size} stack parents for "
                               f"{frame.size} stack frames")
    n = parent.size
    bad_p = (parent < -1) | (parent >= n)
    rep.add("stack_parent_range", int(bad_p.sum()), f"thread {p.thread_name!r}",
            "a stack's parent out of the stack table: the stack starts there")
    any_p = bool(bad_p.any())
    if any_p:
        parent = np.where(bad_p, -1, parent)
    bad_f = (frame < 0) | (frame >= n_frames)
    rep.add("stack_frame_range", int(bad_f.sum()), f"thread {p.thread_name!r}",
            "a stack's frame out of the frame table: named (unknown frame)")
    any_f = bool(bad_f.any())
    if any_f:
        frame = np.where(bad_f, n_frames, frame)  # the extra frame "(unknown frame)"
    parent, depth, n_cyc, n_deep = ct.frame_depths(parent, int(limits.max_stack_depth))
    rep.add("stack_cycle", int(n_cyc), f"thread {p.thread_name!r}", "a cycle of stack parents: cut where it closes")
    rep.add("stack_deep", int(n_deep), f"thread {p.thread_name!r}",
            f"a stack deeper than {limits.max_stack_depth} frames: cut (max_stack_depth= to allow more)")
    intact = not (n_cyc or n_deep or any_p or any_f)
    return parent, frame, depth, any_f, intact


def _canonical(p: StackProfile, parent, frame, depth, intact: bool) -> tuple:
    """`kernels.stacks.canonical_nodes` of the checked forest, or the forest itself where the
    reader vouches it is canonical already (`StackProfile.distinct_paths`) and the checks
    changed nothing: canonical_nodes numbers the nodes by first appearance, parents first, so
    on such a table it returns the identity (tests/unit/test_collapsed_speed.py checks it)."""
    from ..kernels import stacks as ks

    if p.distinct_paths and intact:
        return np.arange(parent.size, dtype=np.int64), parent, frame, depth
    return ks.canonical_nodes(parent, frame, depth)


def _samples(p: StackProfile, n_stacks: int, limits, source: str, rep: Repairs) -> tuple:
    """(stack per sample, weight per sample) checked: a stack out of range is an empty sample,
    a weight that is negative or not finite is 0."""
    s = _as_i64(p.sample_stack, "sample stacks", source)
    bad = (s < -1) | (s >= n_stacks)
    rep.add("sample_stack_range", int(bad.sum()), f"thread {p.thread_name!r}",
            "a sample's stack out of the stack table: an empty stack")
    s = np.where(bad, -1, s)
    if p.sample_weight is None:
        w = None
    else:
        w = np.asarray(p.sample_weight, np.float64)
        if w.size != s.size:
            raise TraceFormatError(f"{source}: thread {p.thread_name!r}: {w.size} sample weights for "
                                   f"{s.size} samples")
        badw = ~np.isfinite(w) | (w < 0) | (w > limits.max_abs_time)
        rep.add("sample_weight", int(badw.sum()), f"thread {p.thread_name!r}",
                "a sample weight that is negative, not finite or past max_abs_time: weight 0")
        w = np.where(badw, 0.0, w)
    return s, w


def _function_tables(frames: FrameTable, unknown: bool, kind_rules, cat: str) -> dict:
    from ..kinds import classify_functions
    from ..names import is_php_file, is_php_pseudo, language_of_file, parse_function_name, plain_scoped_paths

    names = list(frames.names) + (["(unknown frame)"] if unknown else [])
    files = list(frames.files) + ([""] if unknown else [])
    lines = list(frames.lines) + ([-1] if unknown else [])
    # a plain scoped name without a file (most native frames) keeps its file and line, and its
    # path is its scopes (`names.plain_scoped_paths`); so does one with ``::`` in a file that tells
    # no language (a binary: perf's dso; parsed, it gives the same, tests/unit/test_stacks_names.py);
    # the others are parsed one by one
    paths = plain_scoped_paths(names)
    f_files, f_lines = list(files), list(lines)
    tells_language: dict = {}  # per file: does it tell a language (PHP's included: `names.is_php_name`)
    for k, (path, nm, fl, ln) in enumerate(zip(paths, names, files, lines)):
        if path is not None and fl and "::" in nm:
            lang = tells_language.get(fl)
            if lang is None:
                lang = tells_language[fl] = bool(language_of_file(fl)) or is_php_file(fl)
            if not lang and not is_php_pseudo(nm):
                continue
        if path is None or fl:
            p = parse_function_name(nm, file=fl, line=ln)
            paths[k] = p.path
            f_files[k] = p.file or fl
            f_lines[k] = p.line if p.line >= 0 else ln
    kind = classify_functions(names, kind_rules) if names else np.zeros(0, np.uint8)
    f_lines = [ln if -1 <= ln < 2 ** 31 else -1 for ln in f_lines]  # past int32: no line
    return dict(function_names=names, function_files=f_files, function_lines=np.array(f_lines, np.int32),
                function_cats=[cat] * len(names), function_paths=paths, _kind=kind)


def _expand_all(items: list, max_calls: int, too_many: str, known_counts: list | None = None) -> tuple:
    """The calls of every thread's samples, thread after thread in one set of arrays:
    ``items`` [(times, top node per sample, c_parent, c_depth, c_frame)] per thread
    (`kernels.stacks.expand_into`; calls that last no time taken out).  Counted first
    (`kernels.stacks.count_calls`, unless ``known_counts`` gives each thread's count): more
    than ``max_calls`` is refused with ``too_many``, and the outputs are allocated once.
    Returns (frame, start, end, parent, depth, end_index, thread) per call, parent and
    end_index as indices into these calls."""
    from ..kernels import stacks as ks

    counts = known_counts if known_counts is not None else \
        [int(ks.count_calls(lf, cp, cd)) if lf.size else 0 for _, lf, cp, cd, _ in items]
    return _write_calls(items, counts, max_calls, too_many,
                        lambda item, base, out: ks.expand_into(*item, base, *out))


def _write_calls(items: list, counts: list, max_calls: int, too_many: str, write_thread) -> tuple:
    """Every thread's calls, thread after thread in one set of arrays allocated once (more
    than ``max_calls`` in all is refused with ``too_many``): ``write_thread(item, base, out)``
    writes a thread's ``counts[k]`` calls at ``base`` into ``out`` (func, start, end, parent,
    depth, end_index) and returns (calls written, calls that last no time); those are taken
    out with their subtrees (`kernels.stacks.drop_instant_calls`).  Returns (frame, start,
    end, parent, depth, end_index, thread) per call."""
    from ..kernels import stacks as ks

    total = sum(counts)
    if total > max_calls:
        raise TraceFormatError(too_many)
    out = (np.empty(total, np.int32), np.empty(total, np.float64), np.empty(total, np.float64),
           np.empty(total, np.int32), np.empty(total, np.int32), np.empty(total, np.int32))
    base = zero = 0
    for item, c in zip(items, counts):
        if c:
            wrote, z = write_thread(item, base, out)
            base += wrote
            zero += z
    thread = np.repeat(np.arange(len(items), dtype=np.int32), counts)
    if zero:
        return ks.drop_instant_calls(*out, thread)
    return (*out, thread)


def _left_heavy_all(items: list, counts: list, max_calls: int, too_many: str) -> tuple:
    """The Left Heavy calls of every thread's forest, thread after thread in one set of arrays
    (`kernels.left_heavy.left_heavy_calls`: the calls `_expand_all` makes of
    the view's samples, written in one walk): ``items`` [(c_parent,
    c_depth, c_frame, total, self weight)] per thread, ``counts`` each one's calls (nodes of
    weight > 0); more than ``max_calls`` is refused with ``too_many``.  Returns what
    `_expand_all` returns."""
    from ..kernels.left_heavy import left_heavy_calls

    def write_thread(item, base, out):  # an item is None for a thread without samples (0 calls)
        cp, cd, cf, tot, sw = item  # ties between siblings: the frame met first
        return left_heavy_calls(cp, cd, cf, tot, sw, cf, base, *out)

    return _write_calls(items, counts, max_calls, too_many, write_thread)


def _finish(calls: tuple, profiles: list, frames: FrameTable, unknown: bool, *, source: str, fmt: str, kind_rules,
            meta: dict, rep: Repairs, cat: str, warn: bool) -> Trace:
    """The Trace of ``calls`` (`_expand_all`: every thread's calls in pre-order, thread after
    thread) on the threads ``profiles``."""
    with gc_paused():
        ft = _function_tables(frames, unknown, kind_rules, cat)
    f_kind = ft.pop("_kind")
    func, start, end, parent, depth, end_index, thread = calls
    n = int(func.size)
    m = dict(meta)
    m.setdefault("source", source)
    m["format"] = fmt
    m["repairs"] = rep.items
    m.setdefault("skipped", {})
    trace = Trace(
        func=func, start=start, end=end, depth=depth, parent=parent, end_index=end_index, thread=thread,
        kind=f_kind[func].astype(np.uint8) if n else np.zeros(0, np.uint8),
        obj_ptr=np.zeros(n + 1, np.int64), obj_ids=np.zeros(0, np.int32),
        thread_pid=np.array([p.pid for p in profiles], np.int64),
        thread_tid=np.array([p.tid for p in profiles], np.int64), thread_names=[p.thread_name for p in profiles],
        thread_sort=np.arange(len(profiles), dtype=np.int32), process_names=[p.process_name for p in profiles],
        meta=m, **ft)
    if warn and rep.items:
        for code, r in rep.items.items():
            warnings.warn(TraceWarning(f"{source}: {r['count']} × {code} (first: {r['first']}): {r['action']}"),
                          stacklevel=3)
    return trace.check()


def _median_step(t: np.ndarray) -> float:
    d = np.diff(t)
    d = d[d > 0]
    return float(np.median(d)) if d.size else 0.0


def timed_trace(frames: FrameTable, profiles: list, *, source: str, fmt: str, limits, input_bytes: int,
                kind_rules=None, meta: dict | None = None, warn: bool = True, cat: str = "sample") -> Trace:
    """The calls of sampled ``profiles`` on their clock (speedscope's time-ordered view; module
    docstring).  ``meta`` is merged into the trace's; ``meta["sampling_interval_us"]`` is set
    to the profiles' interval (the stated one, else the median step between samples) and
    ``meta["n_samples"]`` to their count.  Times are µs from the earliest sample
    (``meta["clock_origin"]``: its absolute time)."""
    rep = Repairs()
    max_calls = limits.sample_calls(input_bytes)
    unknown = False
    built = []
    n_samples = 0
    intervals = []
    t_first = math.inf
    profiles = cap_profiles(profiles, limits, rep, merged=False, source=source)
    for p in profiles:
        parent, frame, depth, unk, intact = _stack_forest(p, len(frames), limits, source, rep)
        unknown |= unk
        s, w = _samples(p, parent.size, limits, source, rep)
        if p.sample_time is None:
            ww = np.ones(s.size) if w is None else w
            t = np.concatenate([[0.0], np.cumsum(ww)])
            t, end_t = t[:-1], float(t[-1])
            step = float(np.median(ww[ww > 0])) if (ww > 0).any() else 0.0
        else:
            t = np.asarray(p.sample_time, np.float64)
            if t.size != s.size:
                raise TraceFormatError(f"{source}: thread {p.thread_name!r}: {t.size} sample times for "
                                       f"{s.size} samples")
            bad = ~np.isfinite(t) | (np.abs(t) > limits.max_abs_time)
            rep.add("sample_time", int(bad.sum()), f"thread {p.thread_name!r}",
                    f"a sample time that is not finite or past ±{limits.max_abs_time:g} µs: left out")
            if bad.any():
                t, s = t[~bad], s[~bad]
                w = None if w is None else w[~bad]
            if np.any(t[1:] < t[:-1]):
                o = np.argsort(t, kind="stable")
                rep.add("sample_order", 1, f"thread {p.thread_name!r}", "samples not in time order: sorted")
                t, s = t[o], s[o]
            step = p.interval_us if p.interval_us and p.interval_us > 0 else _median_step(t)
            step = step if step > 0 else 1.0  # one sample, or all at one time: 1 µs each
            end_t = p.end_time if (p.end_time is not None and t.size and math.isfinite(p.end_time)
                                   and t[-1] <= p.end_time <= t[-1] + 1e3 * max(step, 1.0)
                                   and abs(p.end_time) <= limits.max_abs_time) else \
                (float(t[-1]) + step if t.size else 0.0)
        n_samples += int(s.size)
        if step > 0:
            intervals.append(step)
        if t.size:
            t_first = min(t_first, float(t[0]))
        canon, c_parent, c_frame, c_depth = _canonical(p, parent, frame, depth, intact)
        leaf = np.where(s >= 0, canon[np.maximum(s, 0)] if canon.size else -1, -1)
        built.append((t, leaf, end_t, c_parent, c_depth, c_frame))
    if not n_samples:
        raise TraceFormatError(f"{source}: no samples: nothing to show")
    if not math.isfinite(t_first):
        t_first = 0.0
    items = []
    for t, leaf, end_t, c_parent, c_depth, c_frame in built:
        ts = np.empty(t.size + 1)
        np.subtract(t, t_first, out=ts[:-1])
        ts[-1] = end_t - t_first
        lf = np.empty(leaf.size + 1, np.int64)
        lf[:-1] = leaf
        lf[-1] = -1
        items.append((ts, lf, c_parent, c_depth, c_frame))
    calls = _expand_all(items, max_calls, f"{source}: its {n_samples} samples expand to more than {max_calls} calls "
                                          f"(stacks that change by many frames from sample to sample; "
                                          f"sample_bytes_per_call= or max_events= to allow more)")
    if not calls[0].size:
        raise TraceFormatError(f"{source}: its {n_samples} samples hold no stack: nothing to show")
    m = dict(meta or {})
    m.update(clock_origin=t_first, time_unit="us", n_samples=n_samples,
             sampling_interval_us=float(np.median(intervals)) if intervals else None)
    return _finish(calls, profiles, frames, unknown, source=source, fmt=fmt, kind_rules=kind_rules, meta=m, rep=rep,
                   cat=cat, warn=warn)


def merged_trace(frames: FrameTable, profiles: list, *, unit: str, source: str, fmt: str, limits,
                 input_bytes: int, kind_rules=None, meta: dict | None = None, warn: bool = True,
                 cat: str = "sample") -> Trace:
    """The Left Heavy trace of weighted stacks (module docstring): x is ``unit`` (samples,
    bytes, Ir...), not time.  ``sample_time`` of the profiles is ignored."""
    from ..kernels import stacks as ks

    rep = Repairs()
    max_calls = limits.sample_calls(input_bytes)
    unknown = False
    items = []
    known = []  # each profile's number of calls
    n_samples = 0
    total_weight = 0.0
    profiles = cap_profiles(profiles, limits, rep, merged=True, source=source)
    for p in profiles:
        parent, frame, depth, unk, intact = _stack_forest(p, len(frames), limits, source, rep)
        unknown |= unk
        s, w = _samples(p, parent.size, limits, source, rep)
        n_samples += int(s.size)
        if not s.size:
            items.append(None)
            known.append(0)
            continue
        canon, c_parent, c_frame, c_depth = _canonical(p, parent, frame, depth, intact)
        on = s >= 0
        leaf = canon[s[on]] if canon.size else np.zeros(0, np.int64)
        ww = np.ones(int(on.sum())) if w is None else w[on]
        self_w = np.bincount(leaf, weights=ww, minlength=c_parent.size).astype(np.float64)
        total = ks.subtree_totals(c_parent, c_depth, self_w)
        weight = float(total[c_parent < 0].sum()) if total.size else 0.0
        if weight > limits.max_abs_time:
            raise TraceFormatError(f"{source}: thread {p.thread_name!r}: its weights sum to "
                                   f"{weight:.3g} {unit}, past {limits.max_abs_time:g}")
        total_weight += weight
        items.append((c_parent, c_depth, c_frame, total, self_w))
        # Left Heavy opens every node of weight > 0 once (its subtree's samples are contiguous)
        known.append(int(np.count_nonzero(total > 0)))
    calls = _left_heavy_all(items, known, max_calls, f"{source}: its stacks expand to more than {max_calls} calls "
                                                     f"(sample_bytes_per_call= or max_events= to allow more)")
    if not calls[0].size:
        raise TraceFormatError(f"{source}: its {n_samples} stacks weigh nothing: nothing to show")
    m = dict(meta or {})
    m.update(merged=True, x_unit=unit, n_samples=n_samples, total_weight=total_weight, clock_origin=0.0,
             ordering="left heavy")
    return _finish(calls, profiles, frames, unknown, source=source, fmt=fmt, kind_rules=kind_rules, meta=m, rep=rep,
                   cat=cat, warn=warn)


def merge_trace(trace: Trace) -> Trace:
    """``trace`` merged (the CLI's ``--merge``): per thread, calls with the same frame path are
    one, weighted by their self time, laid out Left Heavy (`merged_trace`); x is time summed
    (µs), no longer a clock.  Counters, flows, instants and async slices, which live on the
    clock, are left out.  A merged trace is returned as it is."""
    from ..io.limits import DEFAULT_LIMITS

    if is_merged(trace):
        return trace
    frames = FrameTable()
    frames.names, frames.files, frames.lines = (list(trace.function_names), list(trace.function_files),
                                                [int(x) for x in trace.function_lines])
    frames.index = {(nm, fl, ln): k for k, (nm, fl, ln) in enumerate(zip(frames.names, frames.files, frames.lines))}
    profiles = []
    ranges = trace.thread_ranges()
    self_t = trace.self_time
    for t in range(trace.n_threads):
        lo, hi = int(ranges[t, 0]), int(ranges[t, 1])
        par = trace.parent[lo:hi].astype(np.int64)
        par = np.where(par >= 0, par - lo, -1)
        profiles.append(StackProfile(
            thread_name=trace.thread_names[t] if t < len(trace.thread_names) else f"thread {t}",
            stack_parent=par, stack_frame=trace.func[lo:hi].astype(np.int64),
            sample_stack=np.arange(hi - lo, dtype=np.int64), sample_weight=np.maximum(self_t[lo:hi], 0.0),
            process_name=trace.process_names[t] if t < len(trace.process_names) else "",
            pid=int(trace.thread_pid[t]), tid=int(trace.thread_tid[t])))
    src = str(trace.meta.get("source", ""))
    lim = DEFAULT_LIMITS
    out = merged_trace(frames, profiles, unit="µs", source=src, fmt=str(trace.meta.get("format", "")), limits=lim,
                       input_bytes=max(2 * len(trace), 1) * 8, kind_rules=None,
                       meta={"merged_from": src, "merged_of_timed": True}, warn=False)
    # the original functions' kinds and categories (merging keeps the function table)
    out.function_cats = list(trace.function_cats)
    out.kind = trace.kind[np.zeros(0, np.int64)] if not len(out) else _kinds_of(trace, out)
    return out


#: trace → its merged stacks (`merged_stacks`), kept while the trace lives
_MERGED: "weakref.WeakKeyDictionary[Trace, Trace]" = weakref.WeakKeyDictionary()


def merged_stacks(trace: Trace) -> Trace:
    """`merge_trace` of ``trace``, computed once per trace object and kept for as long as the
    trace lives, so that a view rebuilt with other parameters does not merge again (what
    `tracevis3d.merge` and the icicle's ``merge`` parameter read)."""
    hit = _MERGED.get(trace)
    if hit is None:
        hit = merge_trace(trace)
        if hit is not trace:
            _MERGED[trace] = hit
    return hit


def _kinds_of(trace: Trace, out: Trace) -> np.ndarray:
    first = np.full(max(trace.n_functions, 1), 0, np.uint8)
    first[trace.func] = trace.kind
    return first[out.func]


def is_merged(trace) -> bool:
    """Is ``trace`` aggregated stacks (x is a measure, not time)?"""
    return bool(getattr(trace, "meta", {}).get("merged"))


def x_unit(trace) -> str | None:
    """The measure on a merged trace's x axis ("samples", "bytes", "Ir", "µs" for a merged timed
    trace); None for a trace on a clock."""
    return str(trace.meta.get("x_unit") or "samples") if is_merged(trace) else None


def source_name(source) -> str:
    return os.path.basename(str(source)) or str(source)
