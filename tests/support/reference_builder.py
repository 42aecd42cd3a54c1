"""A deliberately naive, plain-Python Chrome-events → call-tree builder.

It implements the documented repair rules of tracevis3d.kernels.chrome_tree and
tracevis3d.io.chrome in the most direct way (dicts, lists, Python recursion-free
loops) so the fast importer can be checked against it event for event.  It is
also the "json.load + plain-Python tree build" peer of bench/bench_load.py.
"""
from __future__ import annotations

import math


def build_reference(events: list) -> list:
    """Return calls as a list of dicts in the model's order:
    {thread: (pid, tid), name, start, end, depth, parent} with absolute times."""
    by_thread_be: dict = {}
    intervals = []  # (key, start, end, name, order)
    last_ts: dict = {}
    for order, ev in enumerate(events):
        if not isinstance(ev, dict):
            continue
        ph = ev.get("ph")
        ts = ev.get("ts")
        if ph not in ("B", "E", "X", "i", "I", "R", "s", "t", "f") or not isinstance(ts, (int, float)):
            continue
        ts = float(ts)
        if not math.isfinite(ts):
            continue
        key = (ev.get("pid", 0), ev.get("tid", 0))
        end = ts
        if ph == "X":
            dur = ev.get("dur", ev.get("tdur"))
            if dur is None:
                dur = 0.0
            dur = float(dur)
            if not math.isfinite(dur):
                continue
            dur = max(dur, 0.0)
            end = ts + dur
            intervals.append((key, ts, end, ev.get("name"), order))
        elif ph in ("B", "E"):
            by_thread_be.setdefault(key, []).append((ts, order, ph, ev.get("name")))
        last_ts[key] = max(last_ts.get(key, -math.inf), end)
    for key, lst in by_thread_be.items():
        lst.sort(key=lambda e: (e[0], e[1]))
        stack = []  # (ts, order, name)
        pending = []  # names of held-back E events
        pending_ts = None
        for ts, order, ph, name in lst:
            if pending and ts != pending_ts:
                pending = []
            if ph == "B":
                if name in pending:
                    pending.remove(name)
                    intervals.append((key, ts, ts, name, order))
                else:
                    stack.append((ts, order, name))
                continue
            target = None
            if stack:
                if name is None or stack[-1][2] == name:
                    target = len(stack) - 1
                else:
                    for q in range(len(stack) - 2, -1, -1):
                        if stack[q][2] == name:
                            target = q
                            break
            if target is None:
                if not pending:
                    pending_ts = ts
                pending.append(name)
                continue
            while len(stack) > target:
                bts, border, bname = stack.pop()
                intervals.append((key, bts, max(ts, bts), bname, border))
        while stack:
            bts, border, bname = stack.pop()
            intervals.append((key, bts, max(last_ts[key], bts), bname, border))
    # threads sorted by (pid, tid) (no M events in the generated streams)
    intervals.sort(key=lambda c: (c[0], c[1], -c[2], c[4]))
    out = []
    stack = []  # indices into out
    cur = None
    for key, s, e, name, order in intervals:
        if key != cur:
            stack = []
            cur = key
        while stack and out[stack[-1]]["end"] <= s:
            stack.pop()
        parent = stack[-1] if stack else -1
        if parent >= 0 and e > out[parent]["end"]:
            e = out[parent]["end"]  # clip
        out.append({"thread": key, "name": name if name is not None else "(unnamed)", "start": s,
                    "end": e, "depth": len(stack), "parent": parent})
        stack.append(len(out) - 1)
    return out
