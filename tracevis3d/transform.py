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
