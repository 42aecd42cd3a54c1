"""speedscope's own JSON format (``https://www.speedscope.app/file-format-schema.json``), which
py-spy (``--format speedscope``), pyinstrument (``-r speedscope``), rbspy, samply and speedscope's
own export write.

The file (speedscope's ``src/lib/file-format-spec.ts``): ``shared.frames`` (name, file, line,
col), and ``profiles``, each one thread here (its ``name`` the thread's name), of two types:

- **evented**: open (``O``) and close (``C``) events of frames at values ``at`` between
  ``startValue`` and ``endValue``.  The calls are exact: each event is a sample of the stack
  left after it (`kernels.stacklists.evented_stacks`), at the event's value, the last lasting
  until ``endValue``; two calls of one frame, one closed where the next opens, stay two (as
  speedscope's ``CallTreeProfileBuilder`` freezes a closed node).
- **sampled**: ``samples`` (stacks as lists of frame indices, root first) and ``weights``; no
  times: the samples are laid end to end from ``startValue``, each as long as its weight
  (speedscope's ``StackListProfileBuilder.appendSampleWithWeight``: a weight of 0 is skipped).

The ``unit`` decides the x axis.  A time unit (nanoseconds ... seconds) is a clock: the calls
are on it in µs (`stacks.timed_trace`, speedscope's Time Order).  ``bytes`` and ``none`` are
measures, not clocks: the profile is merged (`stacks.merged_trace`, speedscope's Left Heavy;
``x_unit`` "bytes", or "samples" for ``none``).  A file whose profiles mix the two keeps those
of the kind of its first profile (``meta["skipped"]`` says how many were left out).

Frames are told apart by their index in ``shared.frames``, as speedscope does
(`profile_json.KeyedFrames`).  What speedscope refuses is refused, naming the place: a close
event whose frame is not the one on top (``out-of-order-events.json`` of its samples), a close
with nothing open, values going backwards, negative weights, frame indices out of range.
Frames still open at the end (``incomplete-trace.json``: speedscope refuses it) are closed at
``endValue``, a repair that is counted and warned.

More profiles than ``limits.max_lanes_read``: the max_lanes_read - 1 of the most samples (or events) are
lanes of their own, the others one lane "other threads" (repair ``lanes_capped``); sampled ones
are read together in C-level passes (`_sampled_rest`), each profile's samples from its own
``startValue``, so 100,000 profiles cost what their samples cost, not 100,000 readings.
"""
from __future__ import annotations

import itertools
import operator
import re

import numpy as np

from ..filenumbers import read_id
from ..model import TraceFormatError
from .limits import resolve_limits
from .profile_json import (KeyedFrames, end_to_end, fail, finite_number, float_column, gather, int_column, kind_of,
                           need_dict, need_list, parse_json)
from .lanes import OTHER_LANES, kept_lanes, lanes_capped_action, merge_profiles, note_repair
from .stacks import StackProfile, merged_trace, timed_trace

__all__ = ["load_speedscope", "TIME_UNITS"]

#: µs per unit of the file's time units
TIME_UNITS = {"nanoseconds": 1e-3, "microseconds": 1.0, "milliseconds": 1e3, "seconds": 1e6}
_MEASURES = {"bytes": "bytes", "none": "samples"}
_PYSPY_THREAD = re.compile(r"^Thread (0x[0-9a-fA-F]+|[0-9]+)\b")


def load_speedscope(data, *, source: str = "<speedscope>", limits=None, kind_rules=None, warn: bool = True,
                    **_options):
    """A speedscope JSON file's bytes → `Trace` (module docstring)."""
    from ..kernels import stacklists as sl

    lim = resolve_limits(limits)
    doc = need_dict(parse_json(data, source), source, "the document")
    shared = need_dict(doc.get("shared"), source, "shared")
    frame_list = need_list(shared.get("frames"), source, "shared.frames")
    profiles = need_list(doc.get("profiles"), source, "profiles")
    if not profiles:
        raise fail(source, "profiles", "empty: no profile to show")
    n_frames = len(frame_list)
    units = []
    for i, p in enumerate(profiles):
        need_dict(p, source, f"profiles[{i}]")
        u = p.get("unit", "none")
        if u is None:
            u = "none"
        if not isinstance(u, str) or (u not in TIME_UNITS and u not in _MEASURES):  # a list: unhashable
            raise fail(source, f"profiles[{i}].unit",
                       f"{repr(u)[:60]} is not one of {', '.join([*TIME_UNITS, *_MEASURES])}")
        units.append(u)
    timed = units[0] in TIME_UNITS
    keep = [i for i, u in enumerate(units) if (u in TIME_UNITS) == timed]
    x_unit = None if timed else ("bytes" if all(units[i] == "bytes" for i in keep) else "samples")
    group = doc.get("name") if isinstance(doc.get("name"), str) else ""
    unclosed = []
    n_read = len(keep)
    rest = []  # past max_lanes_read: the profiles of the fewest samples (or events), one lane `OTHER_LANES`
    if len(keep) > lim.max_lanes_read:
        mask = kept_lanes(np.fromiter((_n_samples(profiles[i]) for i in keep), np.float64, len(keep)),
                          lim.max_lanes_read - 1)
        rest = [i for i, k in zip(keep, mask.tolist()) if not k]
        keep = [i for i, k in zip(keep, mask.tolist()) if k]

    def read(i: int) -> StackProfile:
        p = profiles[i]
        where = f"profiles[{i}]"
        scale = TIME_UNITS.get(units[i], 1.0)
        kind = p.get("type")
        start_v, end_v = _start_end(p, where, scale, units[i], source, lim)
        if kind == "evented":
            prof = _evented(p, where, frame_list, scale, end_v, timed, source, lim, sl)
        elif kind == "sampled":
            prof = _sampled(p, where, n_frames, scale, start_v, timed, source, lim, sl)
        else:
            raise fail(source, f"{where}.type", f"{kind!r} is not 'evented' or 'sampled'")
        name = p.get("name")
        prof.thread_name = name if isinstance(name, str) and name else f"profile {i}"
        prof.process_name = group
        m = _PYSPY_THREAD.match(prof.thread_name)  # py-spy's "Thread 1234 "MainThread""
        prof.tid = read_id(m.group(1), i + 1, hex_ok=True) if m else i + 1  # too long: the profile's number
        if prof.extra.get("unclosed_frames"):
            unclosed.append((where, prof.extra["unclosed_frames"]))
        return prof

    built = [read(i) for i in keep]
    if rest:  # the sampled ones read together, the evented ones too; what cannot be, one by one
        parts = []
        for kind, batch in (("sampled", _sampled_rest), ("evented", _evented_rest)):
            ids = [i for i in rest if profiles[i].get("type") == kind]
            lane = batch(profiles, ids, units, n_frames, timed, source, lim, sl) if ids else None
            parts += [lane] if lane is not None else [read(i) for i in ids]
        parts += [read(i) for i in rest if profiles[i].get("type") not in ("sampled", "evented")]
        built.append(merge_profiles(parts, source))
    frames = _used_frames(frame_list, built, source, lim)
    meta = {"exporter": doc.get("exporter") if isinstance(doc.get("exporter"), str) else "",
            "profile_group": group, "value_unit": units[keep[0]]}
    skipped = len(profiles) - n_read
    common = dict(source=source, fmt="speedscope", limits=lim, input_bytes=len(data), kind_rules=kind_rules,
                  meta=meta, warn=warn, cat="speedscope")
    trace = timed_trace(frames, built, **common) if timed else merged_trace(frames, built, unit=x_unit, **common)
    if skipped:
        trace.meta.setdefault("skipped", {})["profiles of another unit"] = skipped
    if rest:
        _repair(trace, "lanes_capped", len(rest), "profiles", lanes_capped_action("profiles", len(keep) + len(rest),
                                                                                  len(rest), lim.max_lanes_read), source, warn)
    if unclosed:
        _repair(trace, "unclosed_frames", sum(n for _, n in unclosed), unclosed[0][0],
                "frames still open at the end of the events: closed at endValue", source, warn)
    return trace


def _start_end(p: dict, where: str, scale: float, unit: str, source: str, lim) -> tuple:
    """(startValue, endValue) of a profile, checked: numbers within max_abs_time µs."""
    start_v = finite_number(p.get("startValue"), source, f"{where}.startValue", default=0.0)
    end_v = finite_number(p.get("endValue"), source, f"{where}.endValue", default=start_v)
    for what, v in (("startValue", start_v), ("endValue", end_v)):
        if abs(v * scale) > lim.max_abs_time:
            raise fail(source, f"{where}.{what}", f"{v:g} {unit} is past the limit of "
                                                  f"{lim.max_abs_time:g} µs (max_abs_time=)")
    return start_v, end_v


def _starts_ends(profiles: list, ids: list, units: list, source: str, lim) -> tuple:
    """(startValue, endValue) × the unit's µs of the profiles ``ids``, checked as `_start_end`
    checks one, in C-level passes (a profile at a time only to name a bad value)."""
    scale = np.fromiter((TIME_UNITS.get(units[i], 1.0) for i in ids), np.float64, len(ids))
    raw_s = [profiles[i].get("startValue", 0.0) for i in ids]
    raw_e = [profiles[i].get("endValue") for i in ids]
    raw_e = [s if e is None else e for s, e in zip(raw_s, raw_e)]
    if set(map(type, raw_s)) | set(map(type, raw_e)) <= {int, float}:
        with np.errstate(over="ignore", invalid="ignore"):
            s, e = np.array(raw_s, np.float64) * scale, np.array(raw_e, np.float64) * scale
        if np.isfinite(s).all() and np.isfinite(e).all() and max(np.abs(s).max(), np.abs(e).max()) <= lim.max_abs_time:
            return s, e
    se = [_start_end(profiles[i], f"profiles[{i}]", TIME_UNITS.get(units[i], 1.0), units[i], source, lim) for i in ids]
    return np.array([x[0] for x in se]) * scale, np.array([x[1] for x in se]) * scale


def _n_samples(p: dict) -> int:
    """How many samples (or events) a profile holds: the lanes past max_lanes_read are those of the fewest."""
    s = p.get("samples") if p.get("type") == "sampled" else p.get("events")
    return len(s) if isinstance(s, list) else 0


def _evented_rest(profiles: list, rest: list, units: list, n_frames: int, timed: bool, source: str, lim,
                  sl) -> StackProfile | None:
    """The evented profiles ``rest`` (past max_lanes_read) read as one lane in C-level passes over
    their events together: what `_evented` makes of each, merged as `lanes.merge_profiles`
    merges them.  Only when each profile's events are as speedscope asks and balanced (every
    frame it opens, it closes): else None, and the caller reads them one by one."""
    events, counts = [], []
    for i in rest:
        ev = profiles[i].get("events")
        if type(ev) is not list or not ev:
            return None
        events += ev
        counts.append(len(ev))
    scales = [TIME_UNITS.get(units[i], 1.0) for i in rest]
    ends = _starts_ends(profiles, rest, units, source, lim)[1]
    try:
        types = gather(events, "type", source, "")
        at = float_column(gather(events, "at", source, ""), source, "")
        frame = int_column(gather(events, "frame", source, ""), source, "", lo=0, hi=n_frames)
    except TraceFormatError:
        return None
    if not set(map(type, types)) <= {str}:
        return None
    types = np.array(types)
    if not ((types == "O") | (types == "C")).all():
        return None
    is_open = types == "O"
    t = at * np.repeat(np.asarray(scales), counts)
    first = np.concatenate([[0], np.cumsum(counts)])
    seg = np.repeat(np.arange(len(counts)), counts)
    depth = np.cumsum(np.where(is_open, 1, -1))
    depth = depth - np.concatenate([[0], depth[first[1:-1] - 1]])[seg]  # each profile's from 0
    back = np.diff(t) < 0
    back[first[1:-1] - 1] = False  # (a profile may start before the one before ends)
    if (~np.isfinite(t)).any() or (np.abs(t) > lim.max_abs_time).any() or back.any() or depth.min() < 0 \
            or (depth[first[1:] - 1] != 0).any():
        return None
    parent, node_frame, after, status, _, open_left = sl.evented_stacks(is_open, frame)
    if status != sl.OK or open_left:
        return None
    end_t = np.maximum(ends, t[first[1:] - 1])  # each profile's end (`_evented`)
    if not timed:  # each event's stack lasts until the profile's next event, the last until its end
        nxt = np.append(t[1:], 0.0)
        nxt[first[1:] - 1] = end_t
        return StackProfile(OTHER_LANES, parent, node_frame, after, sample_weight=np.maximum(nxt - t, 0.0))
    o = np.lexsort((after >= 0, t))  # at one time an empty stack first (`lanes.merge_profiles`)
    return StackProfile(OTHER_LANES, parent, node_frame, after[o], sample_time=t[o], end_time=float(end_t.max()))


def _sampled_rest(profiles: list, rest: list, units: list, n_frames: int, timed: bool, source: str, lim,
                  sl) -> StackProfile | None:
    """The sampled profiles ``rest`` (past max_lanes_read) read as one lane `OTHER_LANES`, in C-level
    passes over their samples together (a profile at a time would cost each its own tables:
    100,000 profiles took 10 s): the stacks of all, each sample as long as its weight, each
    profile's samples end to end from its own startValue (in a merged trace only the weights
    count).  None when one of them is evented or anything is not as speedscope asks: the caller
    then reads them one by one, which names the place."""
    samples, weights, counts = [], [], []
    for i in rest:
        p = profiles[i]
        s, w = p.get("samples"), p.get("weights")
        if p.get("type") != "sampled" or type(s) is not list or not (w is None or (type(w) is list and len(w) == len(s))):
            return None
        samples += s
        weights += [1] * len(s) if w is None else w
        counts.append(len(s))
    scales = [TIME_UNITS.get(units[i], 1.0) for i in rest]
    starts = _starts_ends(profiles, rest, units, source, lim)[0]
    try:
        w = float_column(weights, source, "")
    except TraceFormatError:
        return None
    scale = np.repeat(np.asarray(scales), counts)
    d = w * scale
    if ((w < 0) | ~np.isfinite(d) | (d > lim.max_abs_time)).any():
        return None
    try:
        flat, offsets, repeat = _stack_lists(samples, n_frames, source, "")
    except TraceFormatError:
        return None
    parent, frame, stack = sl.stack_paths(flat, offsets)
    stack = stack[repeat]
    if not timed:
        return StackProfile(OTHER_LANES, parent, frame, stack, sample_weight=w)
    # each profile's samples end to end from its start, then an empty sample where it ends
    first = np.concatenate([[0], np.cumsum(counts)])
    seg = np.repeat(np.arange(len(counts)), counts)
    cum = np.concatenate([[0.0], np.cumsum(d)])
    t = cum[:-1] - cum[first[:-1]][seg] + np.asarray(starts)[seg]
    ends = cum[first[1:]] - cum[first[:-1]] + np.asarray(starts)
    if (np.abs(ends) > lim.max_abs_time).any():
        return None
    # profile by profile, its samples then its end (the order `lanes.cap_profiles` merges them in)
    at = np.arange(t.size) + seg  # each sample moved by the ends of the profiles before
    time = np.empty(t.size + ends.size)
    sk = np.empty(time.size, np.int64)
    time[at], sk[at] = t, stack
    time[first[1:] + np.arange(ends.size)], sk[first[1:] + np.arange(ends.size)] = ends, -1
    on = np.ones(time.size, np.bool_)
    on[at] = d > 0  # a sample of weight 0 is skipped, as speedscope skips it
    time, sk = time[on], sk[on]
    o = np.lexsort((sk >= 0, time))  # at one time an empty sample (a profile's end) first
    step = float(np.median(d[d > 0])) if (d > 0).any() else 0.0
    return StackProfile(OTHER_LANES, parent, frame, sk[o], sample_time=time[o],
                        end_time=float(ends.max()) + (step or 1.0), interval_us=step or None)


def _used_frames(frame_list: list, built: list, source: str, lim) -> KeyedFrames:
    """The frames of ``shared.frames`` that the profiles' stacks use, in the file's order, and the
    profiles' stack frames renumbered into them: a file may list many more frames than its
    samples reach (only those cost a function)."""
    used = np.flatnonzero(np.bincount(np.concatenate([p.stack_frame for p in built]), minlength=len(frame_list))) \
        if built else np.zeros(0, np.int64)
    fmap = np.full(len(frame_list) + 1, -1, np.int64)
    frames = KeyedFrames(lim.max_name_chars)
    for i in used.tolist():  # the distinct frames used
        fr = frame_list[i]
        if not isinstance(fr, dict):
            raise fail(source, f"shared.frames[{i}]", f"expected an object, got {kind_of(fr)}")
        name, file, line = fr.get("name"), fr.get("file"), fr.get("line")
        fmap[i] = frames.add_keyed(i, name if isinstance(name, str) else ("" if name is None else str(name)),
                                   file if isinstance(file, str) else "",
                                   line if isinstance(line, int) and not isinstance(line, bool) else -1)
    for p in built:
        p.stack_frame = fmap[p.stack_frame] if p.stack_frame.size else p.stack_frame
    return frames


def _repair(trace, code: str, count: int, first: str, action: str, source: str, warn: bool) -> None:
    """Count a repair made by the reader itself in ``trace.meta["repairs"]``; warn once."""
    note_repair(trace, code, count, first, action, source, warn)


def _stack_lists(samples: list, n_frames: int, source: str, where: str) -> tuple:
    """The frame indices of ``samples`` (a list of lists) flattened: (flat, offsets, repeat) where
    ``repeat[k]`` is the index into (flat, offsets) of sample k's list.  A list equal to the one
    before it is stored once (profilers sample the same stack many times running), found by
    C-level list comparisons; the rest is two C-level passes (``map(len)``,
    ``itertools.chain``).  The list is walked element by element only to name a bad element."""
    n = len(samples)
    try:
        same = np.fromiter(map(operator.eq, samples[1:], samples[:-1]), bool, max(n - 1, 0))
        first = np.ones(n, bool)
        first[1:] = ~same
        repeat = np.cumsum(first) - 1
        distinct = list(map(samples.__getitem__, np.flatnonzero(first).tolist())) if not first.all() else samples
        lens = np.fromiter(map(len, distinct), np.int64, len(distinct))
        offsets = np.zeros(len(distinct) + 1, np.int64)
        np.cumsum(lens, out=offsets[1:])
        flat = np.fromiter(itertools.chain.from_iterable(distinct), np.int64, int(offsets[-1]))
        ok = not flat.size or (int(flat.min()) >= 0 and int(flat.max()) < n_frames)
    except (TypeError, ValueError, OverflowError):
        ok = False
    if ok and _all_lists(samples):
        return flat, offsets, repeat
    for k, s in enumerate(samples):
        if not isinstance(s, list):
            raise fail(source, f"{where}[{k}]", f"expected a list of frame indices, got {kind_of(s)}")
        for j, f in enumerate(s):
            if isinstance(f, bool) or not isinstance(f, int):
                raise fail(source, f"{where}[{k}][{j}]", f"expected a frame index, got {kind_of(f)}")
            if not 0 <= f < n_frames:
                raise fail(source, f"{where}[{k}][{j}]", f"frame {f} is out of range [0, {n_frames - 1}]")
    raise fail(source, where, "cannot read its stacks")


def _all_lists(samples: list) -> bool:
    return set(map(type, samples)) <= {list}


def _sampled(p: dict, where: str, n_frames: int, scale: float, start_v: float, timed: bool, source: str, lim,
             sl) -> StackProfile:
    samples = need_list(p.get("samples"), source, f"{where}.samples")
    weights = p.get("weights")
    if weights is None:
        w = np.ones(len(samples))
    else:
        w = float_column(weights, source, f"{where}.weights")
    if w.size != len(samples):
        raise fail(source, f"{where}.weights", f"{w.size} weights for {len(samples)} samples "
                                               f"(speedscope asks for one each)")
    bad = (w < 0) | ~np.isfinite(w) | (w * scale > lim.max_abs_time)
    if bad.any():
        k = int(np.argmax(bad))
        raise fail(source, f"{where}.weights[{k}]", f"{w[k]:g} is not a weight (speedscope asks for weights ≥ 0"
                                                    f"{'' if w[k] < 0 else ' and within max_abs_time'})")
    flat, offsets, repeat = _stack_lists(samples, n_frames, source, f"{where}.samples")
    parent, frame, stack = sl.stack_paths(flat, offsets)
    stack = stack[repeat]
    if not timed:
        return StackProfile("", parent, frame, stack, sample_weight=w)
    return end_to_end(parent, frame, stack, w * scale, start_v * scale, lim, source, f"{where}.weights")


def _evented(p: dict, where: str, frame_list: list, scale: float, end_v: float, timed: bool, source: str, lim,
             sl) -> StackProfile:
    n_frames = len(frame_list)
    events = need_list(p.get("events"), source, f"{where}.events")
    ew = f"{where}.events"
    raw_types = gather(events, "type", source, ew)
    try:
        types = np.array(raw_types) if raw_types else np.zeros(0, "U1")
    except ValueError:  # lists among the types (an inhomogeneous array): each is not 'O' or 'C'
        types = np.array([x if isinstance(x, str) else "" for x in raw_types])
    bad_t = ((types != "O") & (types != "C")) if types.dtype.kind == "U" else \
        np.array([x not in ("O", "C") for x in raw_types])
    if bad_t.any():
        k = int(np.argmax(bad_t))
        raise fail(source, f"{ew}[{k}].type", f"{raw_types[k]!r} is not 'O' or 'C'"[:120])
    is_open = types == "O"
    at = float_column(gather(events, "at", source, ew), source, ew, field=".at")
    frame = int_column(gather(events, "frame", source, ew), source, ew, lo=0, hi=n_frames, field=".frame")
    bad = ~np.isfinite(at) | (np.abs(at * scale) > lim.max_abs_time)
    if bad.any():
        k = int(np.argmax(bad))
        raise fail(source, f"{ew}[{k}].at", f"{at[k]:g} is past the limit of {lim.max_abs_time:g} µs (max_abs_time=)")
    back = np.diff(at) < 0
    if back.any():
        k = int(np.argmax(back)) + 1
        raise fail(source, f"{ew}[{k}].at", f"{at[k]:g} comes before the previous event's {at[k - 1]:g} "
                                            f"(speedscope asks for values in increasing order)")
    parent, node_frame, after, status, at_k, open_left = sl.evented_stacks(is_open, frame)

    def named(f: int) -> str:
        fr = frame_list[f] if 0 <= f < n_frames else None
        nm = fr.get("name") if isinstance(fr, dict) else None
        return f"frame {f} ({nm[:60]!r})" if isinstance(nm, str) else f"frame {f}"

    if status == sl.CLOSE_EMPTY:
        raise fail(source, f"{ew}[{at_k}]", f"closes {named(int(frame[at_k]))} when no frame is open")
    if status == sl.CLOSE_MISMATCH:
        k = int(at_k)
        top = _top_frame(is_open[:k], frame[:k])
        raise fail(source, f"{ew}[{k}]", f"closes {named(int(frame[k]))} while {named(top)} is on top at {at[k]:g} "
                                         f"(events out of order)")
    t = at * scale
    end_t = max(end_v * scale, float(t[-1]) if t.size else end_v * scale)
    extra = {}
    if open_left:
        extra = {"unclosed_frames": int(open_left)}
        after = np.append(after, -1)  # close what is left open where the profile ends
        t = np.append(t, end_t)
    if not timed:
        w = np.diff(np.append(t, end_t))
        return StackProfile("", parent, node_frame, after, sample_weight=np.maximum(w, 0.0), extra=extra)
    return StackProfile("", parent, node_frame, after, sample_time=t, end_time=end_t, extra=extra)


def _top_frame(is_open: np.ndarray, frame: np.ndarray) -> int:
    """The frame on top of the stack after the events given (they are balanced so far)."""
    from ..kernels import stacklists as sl

    parent, node_frame, after, _, _, _ = sl.evented_stacks(is_open, frame)
    return int(node_frame[after[-1]]) if after.size and after[-1] >= 0 else -1
