"""The calls of a `Trace` that overlap a time window, found without a pass over the trace
(a memory-mapped trace larger than the memory, opened and drawn in a
window, touches the window's calls only).

Inside a thread the calls are in depth-first pre-order with times nested in their parent and
siblings not overlapping (`Trace.check`), so their starts never decrease.  The calls that
overlap ``[t0, t1]`` (``end >= t0`` and ``start <= t1``) are then

- those starting in ``[t0, t1]``: one contiguous range ``[a, b)``, two binary searches;
- those starting before ``t0`` and still running at ``t0``: a call ``c`` with
  ``start[c] < t0 <= end[c]`` contains the start of call ``a - 1`` (the last one starting
  before ``t0``, which starts after ``c`` or is ``c``), so it is ``a - 1`` or one of its
  ancestors: a walk up the parent chain, at most the stack's depth.

The result is closed under taking the parent (a parent overlaps every window its child
does), what `Trace.subset` needs.  Cost: O(threads · log n + window + depth) time, and the
window's indices as the only memory that grows.
"""
from __future__ import annotations

import bisect

import numpy as np


def window_calls(trace, t0: float, t1: float, threads=None) -> np.ndarray:
    """Ascending int64 indices of the calls of ``trace`` (of ``threads``, thread indices;
    default all) with ``end >= t0`` and ``start <= t1`` (see module doc)."""
    t0, t1 = float(t0), float(t1)
    rng = trace.thread_ranges()
    start, end, parent = trace.start, trace.end, trace.parent
    pieces = []
    for t in (range(trace.n_threads) if threads is None else sorted({int(x) for x in threads})):
        lo, hi = int(rng[t, 0]), int(rng[t, 1])
        if hi <= lo or t1 < t0:
            continue
        # bisect, not np.searchsorted: a mapped file's arrays are not aligned (a .npz member
        # starts anywhere), and numpy copies an unaligned array whole before searching it
        # (200 MB per thread of a 10^8-call file); bisect reads O(log n) values in place
        a = bisect.bisect_left(start, t0, lo, hi)
        b = bisect.bisect_right(start, t1, lo, hi)
        running = []  # a - 1 and its ancestors still running at t0, deepest first
        p = a - 1
        while p >= lo:
            if end[p] >= t0:
                running.append(p)
            p = int(parent[p])
        pieces.append(np.asarray(running[::-1], np.int64))
        pieces.append(np.arange(a, b, dtype=np.int64))
    return np.concatenate(pieces) if pieces else np.zeros(0, np.int64)
