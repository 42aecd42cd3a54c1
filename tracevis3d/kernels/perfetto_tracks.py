"""Perfetto tracks and flows after the scan (`protoscan`), in numba: the nearest ancestor of a
track that is a thread (or has a process), with descriptor cycles cut; the call a flow point
inside a thread binds to.

A TrackDescriptor names its parent by ``parent_uuid``; trace processor resolves a track's
thread and process up that chain (``track_event_tracker.cc``: a child of a thread track belongs
to that thread's process, a track under a process track to that process).  A file may make the
parents a cycle: the walk cuts it where it first comes back to a track on its own path (that
track's parent link is dropped, counted).
"""
import numpy as np
from numba import njit

from .stacklists import nearest_kept_cut
from .tree import enclosing_call


@njit(cache=True, nogil=True)
def nearest_marked(parent, marked):
    """For each node: the nearest of itself and its ancestors (``parent``: index, -1 none) with
    ``marked`` set, or -1.  Each node is visited once (the walk stops at a node already resolved);
    a parent link that closes a cycle is cut.  Returns (nearest, cut: the nodes whose parent link
    was cut): `stacklists.nearest_kept_cut`."""
    return nearest_kept_cut(parent, marked)


@njit(cache=True, nogil=True)
def enclosing_calls(start, end, parent, thread_lo, thread_hi, p_thread, p_ts):
    """The deepest call of thread ``p_thread[k]`` (calls in per-thread pre-order, thread t's in
    ``[thread_lo[t], thread_hi[t])``) whose interval holds ``p_ts[k]`` (start <= ts <= end), or -1:
    `tree.enclosing_call` (a binary search for the last call starting at or before ts, then up
    its parents) of each."""
    m = p_ts.shape[0]
    out = np.full(m, -1, np.int64)
    for k in range(m):
        t = p_thread[k]
        if t >= 0:
            out[k] = enclosing_call(start, end, parent, thread_lo[t], thread_hi[t], p_ts[k], False)
    return out


@njit(cache=True, nogil=True)
def running_sums(key, values, incremental):
    """``values`` (sorted by key, then time) with the runs of the keys that are ``incremental``
    replaced by their running sums (a counter track whose values are deltas)."""
    out = values.copy()
    acc = 0.0
    for i in range(key.shape[0]):
        k = key[i]
        if i == 0 or key[i - 1] != k:
            acc = 0.0
        if incremental[k]:
            acc += values[i]
            out[i] = acc
    return out


@njit(cache=True, nogil=True)
def max_per_key(key, values, n_keys):
    """The largest of ``values`` per key (``key`` in [0, n_keys), -1: ignored); -inf for a key
    without values."""
    out = np.full(n_keys, -np.inf)
    for i in range(key.shape[0]):
        k = key[i]
        if k >= 0 and values[i] > out[k]:
            out[k] = values[i]
    return out


@njit(cache=True, nogil=True)
def backwards(key, values, tolerance):
    """How many rows have a value smaller by more than ``tolerance`` than the largest before it
    of the same key (``key`` in [0, max), file order), and the first such row (-1): a track
    whose times go backwards."""
    n_keys = 0
    for i in range(key.shape[0]):
        if key[i] + 1 > n_keys:
            n_keys = key[i] + 1
    last = np.full(max(n_keys, 1), -np.inf)
    count = 0
    first = -1
    for i in range(key.shape[0]):
        k = key[i]
        if values[i] < last[k] - tolerance:
            count += 1
            if first < 0:
                first = i
        elif values[i] > last[k]:
            last[k] = values[i]
    return count, first
