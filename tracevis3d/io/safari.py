"""Safari's timeline recordings (Web Inspector → Timelines → Export: ``*-recording.json``).

The file: ``version`` (1), ``recording`` with ``sampleStackTraces`` (each a ``timestamp`` in
seconds, when the sample ends, and ``stackFrames``, the leaf first: name, url, line, column)
and ``sampleDurations`` (seconds, one per sample).  Read as speedscope's ``safari.ts`` reads
it: the samples laid end to end (`stacks.timed_trace`, speedscope's Time Order), each as long
as its duration; where a sample starts more than 2 ms after the previous one ended, an empty
sample of that gap comes first (Safari's times and durations do not line up exactly, so
shorter gaps are taken as none).  A frame without a name is "(anonymous FILE:LINE)"; frames
are told apart by name, url, line and column.
"""
from __future__ import annotations

import itertools
from operator import methodcaller

import numpy as np

from .limits import resolve_limits
from .profile_json import (KeyedFrames, end_to_end, fail, float_column, gather, kind_of, need_dict, need_list,
                           parse_json)
from .stacks import timed_trace

__all__ = ["load_safari"]

#: a gap between samples longer than this (s) is idle time (speedscope's ``safari.ts``)
IDLE_GAP_S = 0.002


def load_safari(data, *, source: str = "<safari>", limits=None, kind_rules=None, warn: bool = True, **_options):
    """A Safari timeline recording's bytes → `Trace` (module docstring)."""
    from ..kernels import stacklists as sl

    lim = resolve_limits(limits)
    doc = need_dict(parse_json(data, source), source, "the document")
    rec = need_dict(doc.get("recording"), source, "recording")
    samples = need_list(rec.get("sampleStackTraces"), source, "recording.sampleStackTraces")
    if not samples:
        raise fail(source, "recording.sampleStackTraces", "empty: the recording holds no samples")
    dur_s = float_column(need_list(rec.get("sampleDurations"), source, "recording.sampleDurations"), source,
                         "recording.sampleDurations")
    n = len(samples)
    if dur_s.size != n:
        raise fail(source, "recording.sampleDurations", f"{dur_s.size} durations for {n} samples")
    sw = "recording.sampleStackTraces"
    ts = float_column(gather(samples, "timestamp", source, sw), source, sw, field=".timestamp")
    stacks = gather(samples, "stackFrames", source, sw)
    bad = ~np.isfinite(ts) | (np.abs(ts * 1e6) > lim.max_abs_time)
    if bad.any():
        k = int(np.argmax(bad))
        raise fail(source, f"{sw}[{k}].timestamp", f"{ts[k]:g} s is past the limit of {lim.max_abs_time:g} µs")
    neg = (dur_s < 0) | (dur_s * 1e6 > lim.max_abs_time)
    if neg.any():
        k = int(np.argmax(neg))
        raise fail(source, f"recording.sampleDurations[{k}]", f"{dur_s[k]:g} s is not a duration "
                                                              f"(speedscope asks for weights ≥ 0)")
    if not set(map(type, stacks)) <= {list}:
        k = next(i for i, s in enumerate(stacks) if not isinstance(s, list))
        raise fail(source, f"{sw}[{k}].stackFrames", f"expected a list of frames, got {kind_of(stacks[k])}")
    lens = np.fromiter(map(len, stacks), np.int64, n)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    entries = list(itertools.chain.from_iterable(stacks))
    if not set(map(type, entries)) <= {dict}:
        j = next(i for i, e in enumerate(entries) if not isinstance(e, dict))
        k = int(np.searchsorted(offsets, j, side="right")) - 1
        raise fail(source, f"{sw}[{k}].stackFrames[{j - offsets[k]}]", f"expected a frame, got {kind_of(entries[j])}")
    keys = list(zip(*(map(methodcaller("get", f), entries) for f in ("name", "url", "line", "column"))))
    try:
        distinct = dict.fromkeys(keys)  # the distinct frames, in order of appearance
    except TypeError:  # a list or object where a name or number should be
        keys = list(map(_hashable, keys))
        distinct = dict.fromkeys(keys)
    frames = KeyedFrames(lim.max_name_chars)
    for key in distinct:  # the distinct frames
        name, url, line, col = key
        distinct[key] = frames.add_keyed(key, _frame_name(name, url, line),
                                         url if isinstance(url, str) else "",
                                         line if isinstance(line, int) and not isinstance(line, bool) else -1)
    flat_leaf_first = np.fromiter(map(distinct.__getitem__, keys), np.int64, len(keys))
    # each stack is written leaf first: reversed within each sample
    owner = np.repeat(np.arange(n, dtype=np.int64), lens)
    pos = np.arange(len(keys), dtype=np.int64)
    flat = flat_leaf_first[offsets[owner] + offsets[owner + 1] - 1 - pos] if len(keys) else flat_leaf_first
    parent, frame, stack = sl.stack_paths(flat, offsets)
    # speedscope's layout: an idle sample before any gap over IDLE_GAP_S, then the sample
    start_s = ts - dur_s
    prev_end = np.concatenate([[np.inf], ts[:-1]])
    idle = start_s - prev_end
    gap = idle > IDLE_GAP_S
    slot = np.arange(n) + np.cumsum(gap)
    m = n + int(gap.sum())
    all_stack = np.full(m, -1, np.int64)
    all_dur = np.zeros(m)
    all_stack[slot] = stack
    all_dur[slot] = dur_s
    all_dur[slot[gap] - 1] = idle[gap]
    prof = end_to_end(parent, frame, all_stack, all_dur * 1e6, float(start_s[0]) * 1e6, lim, source,
                      "recording.sampleDurations")
    name = rec.get("displayName")
    prof.thread_name = name if isinstance(name, str) and name else "Safari recording"
    meta = {"safari_version": doc.get("version") if isinstance(doc.get("version"), (int, float)) else None}
    return timed_trace(frames, [prof], source=source, fmt="safari", limits=lim, input_bytes=len(data),
                       kind_rules=kind_rules, meta=meta, warn=warn, cat="js")


def _hashable(key: tuple) -> tuple:
    """A frame's key with any unhashable value (a list or object where a name or number should
    be) made text."""
    return tuple(x if isinstance(x, (str, int, float, type(None))) else repr(x) for x in key)


def _frame_name(name, url, line) -> str:
    """speedscope's name of a Safari frame: its name, else "(anonymous FILE:LINE)" from its url."""
    if isinstance(name, str) and name:
        return name
    if isinstance(url, str) and url:
        return f"(anonymous {url.split('/')[-1]}:{line})"
    return "(anonymous)"
