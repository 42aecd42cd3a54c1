"""Trace → Trace transforms shared by every view (bpy-free)."""
from __future__ import annotations

import numpy as np

from .kernels.reshape import nearest_kept_ancestor
from .kernels.tree import depth_and_end_from_parent
from .model import Trace


def merge_calls(trace: Trace, hidden) -> Trace:
    """``trace`` without the calls flagged in ``hidden``, their children promoted.

    The children of a hidden call are attached to its nearest kept ancestor (or become
    roots), as Firefox Profiler's "merge function" does; times are unchanged, so the
    result keeps every invariant of `Trace.check()` (a child lies inside every ancestor,
    and promoted siblings cannot overlap because their old parents did not).  Objects,
    args and instants of kept calls are kept; flows with a hidden end are dropped.
    Returns ``trace`` itself when nothing is hidden.
    """
    hidden = np.asarray(hidden, dtype=np.bool_)
    if hidden.shape != (len(trace),):
        raise ValueError(f"hidden must be a bool array of length {len(trace)}, got shape {hidden.shape}")
    if not hidden.any():
        return trace
    keep = ~hidden
    up = nearest_kept_ancestor(trace.parent, hidden)
    out = trace._take(keep, np.arange(trace.n_threads, dtype=np.int32))
    newpos = np.cumsum(keep, dtype=np.int64) - 1
    up_kept = up[keep]
    out.parent = np.where(up_kept >= 0, newpos[np.maximum(up_kept, 0)], -1).astype(np.int32)
    out.depth, out.end_index = depth_and_end_from_parent(out.parent)
    out.meta["merged_calls"] = int(hidden.sum())
    return out


def find_call(trace: Trace, what) -> int:
    """A call of ``trace`` given as an index (int or digits) or a function name (its longest
    call, `longest_named_call`).  ValueError naming ``what`` when there is none."""
    if isinstance(what, (int, np.integer)) or (isinstance(what, str) and what.strip().isdigit()):
        i = int(what)
        if not 0 <= i < len(trace):
            raise ValueError(f"no call {i} in the trace (its calls are 0–{len(trace) - 1})")
        return i
    text = str(what).strip()
    if not text:
        raise ValueError("no call given")
    call = longest_named_call(trace, text)
    if call is None:
        raise ValueError(f"no call in the trace is named like {text!r} (a function's name, or part of it)")
    return call


def longest_named_call(trace: Trace, text: str) -> int | None:
    """The longest call (then the earliest) of the functions named ``text`` exactly, else of
    those whose names contain it; None when no call has such a name."""
    names = trace.function_names  # per function, not per call
    funcs = [k for k, nm in enumerate(names) if nm == text] or [k for k, nm in enumerate(names) if text in nm]
    calls = np.flatnonzero(np.isin(trace.func, np.asarray(funcs, np.int32))) if funcs else np.zeros(0, np.int64)
    if calls.size == 0:
        return None
    dur = trace.end[calls] - trace.start[calls]
    return int(calls[np.lexsort((calls, -dur))[0]])


def subtree_trace(trace: Trace, call: int) -> Trace:
    """The subtree of ``call`` (calls ``[call, end_index[call])`` of its thread) as a trace of
    its own: ``call`` is its root (depth 0, no parent), call ``k`` of it is call ``call + k``
    of ``trace``; times keep their origin, the thread table keeps ``call``'s thread.  Flows
    with both ends inside, that thread's instants and the side tracks are kept (`Trace._take`)."""
    call = int(call)
    if not 0 <= call < len(trace):
        raise ValueError(f"no call {call} in the trace (its calls are 0–{len(trace) - 1})")
    keep = np.arange(call, int(trace.end_index[call]), dtype=np.int64)
    out = trace._take(keep, np.asarray([trace.thread[call]], np.int32))
    out.parent = out.parent.copy()
    out.parent[0] = -1  # its caller is not in the subtree
    out.depth = (out.depth - out.depth[0]).astype(trace.depth.dtype)
    out.meta["subtree_of"] = call
    return out
