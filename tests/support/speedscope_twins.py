"""Naive twins of speedscope's views, shared by the profile-format tests (speedscope, Firefox,
Chrome/Safari/... profiles): the time-ordered view of weighted or sampled stacks
(``StackListProfileBuilder``), the exact calls of open/close events, the Left Heavy view, and a
trace's calls as (path, start, end) to compare with them (``profile.ts``'s semantics)."""
from __future__ import annotations

import gzip
import json
import pathlib
import warnings

import tracevis3d
from tracevis3d.model import TraceWarning


def time_order(stacks, durations, start=0.0):
    """speedscope's time-ordered view of weighted stacks (``StackListProfileBuilder``): stacks
    (tuples of frame keys, root first) laid end to end from ``start``; a weight-0 stack is
    skipped; a frame continues while consecutive stacks agree up to it.  Returns [(path, start,
    end)] with path the tuple of frame keys."""
    calls, open_ = [], []  # open_: [(frame, start)]
    x = start
    for st, d in list(zip(stacks, durations)) + [((), None)]:
        if d is not None and d == 0:
            continue
        common = 0
        while common < len(open_) and common < len(st) and open_[common][0] == st[common]:
            common += 1
        while len(open_) > common:
            path = tuple(f for f, _ in open_)
            _, s0 = open_.pop()
            calls.append((path, s0, x))
        for f in st[common:]:
            open_.append((f, x))
        if d is not None:
            x += d
    return calls


def timed_samples(stacks, times, end):
    """The time-ordered view of stacks sampled at ``times`` (each lasting until the next; the last
    until ``end``): [(path, start, end)]."""
    calls, open_ = [], []
    for st, t in list(zip(stacks, times)) + [((), end)]:
        common = 0
        while common < len(open_) and common < len(st) and open_[common][0] == st[common]:
            common += 1
        while len(open_) > common:
            path = tuple(f for f, _ in open_)
            _, s0 = open_.pop()
            calls.append((path, s0, t))
        for f in st[common:]:
            open_.append((f, t))
    return calls


def events_calls(events, scale=1.0):
    """The exact calls of open/close events [(type, frame, at)]: [(path, start, end)]."""
    calls, open_ = [], []
    for typ, f, at in events:
        if typ == "O":
            open_.append((f, at * scale))
        else:
            path = tuple(g for g, _ in open_)
            _, s0 = open_.pop()
            calls.append((path, s0, at * scale))
    return calls


def left_heavy(stacks, weights, rank):
    """speedscope's Left Heavy view: every frame path once, as wide as its weight and its
    descendants', children side by side from the parent's left edge, the heaviest first (ties:
    ``rank`` of the frame), the parent's own weight at its right end: [(path, start, end)]."""
    total = {}
    for st, w in zip(stacks, weights):
        for d in range(1, len(st) + 1):
            total[st[:d]] = total.get(st[:d], 0.0) + w
    kids = {}
    for p in total:
        kids.setdefault(p[:-1], []).append(p)
    calls = []

    def lay(prefix, x):
        for p in sorted(kids.get(prefix, []), key=lambda p: (-total[p], rank(p[-1]))):
            if total[p] <= 0:
                continue
            calls.append((p, x, x + total[p]))
            lay(p, x)
            x += total[p]

    lay((), 0.0)
    return calls


def calls_of(trace, thread=None, key=None):
    """[(path, start, end)] of ``trace``'s calls (on ``thread``, or all), path the tuple of
    ``key(func)`` (the function's name by default) from the root, times on the file's clock
    (``clock_origin`` added back)."""
    key = key or (lambda f: trace.function_names[f])
    origin = float(trace.meta.get("clock_origin") or 0.0)
    out = []
    for i in range(len(trace)):
        if thread is not None and int(trace.thread[i]) != thread:
            continue
        p, x = [], i
        while x >= 0:
            p.append(key(int(trace.func[x])))
            x = int(trace.parent[x])
        out.append((tuple(reversed(p)), float(trace.start[i]) + origin, float(trace.end[i]) + origin))
    return out


def same_calls(got, want, rel=1e-9, what=""):
    """``got`` and ``want`` hold the same calls (zero-length ones left out), times equal within
    ``rel`` of the largest time."""
    want = [c for c in want if c[2] > c[1]]
    scale = max([1.0] + [abs(c[2]) for c in want] + [abs(c[2]) for c in got])
    tol = rel * scale

    def norm(cs):
        return sorted(cs, key=lambda c: (c[0], round(c[1] / tol) if tol else c[1]))

    g, w = norm(got), norm(want)
    assert len(g) == len(w), f"{what}: {len(g)} calls, the twin has {len(w)}"
    for a, b in zip(g, w):
        assert a[0] == b[0] and abs(a[1] - b[1]) <= tol and abs(a[2] - b[2]) <= tol, f"{what}: {a} != {b}"


def load_quiet(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        return tracevis3d.load(path, **kw)


def read_json(path):
    raw = pathlib.Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)
