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


@njit(cache=True, nogil=True)
def nearest_marked(parent, marked):
    """For each node: the nearest of itself and its ancestors (``parent``: index, -1 none) with
    ``marked`` set, or -1.  Each node is visited once (the walk stops at a node already resolved);
    a parent link that closes a cycle is cut.  Returns (nearest, cut: the nodes whose parent link
    was cut)."""
    n = parent.shape[0]
    out = np.full(n, -1, np.int64)
    state = np.zeros(n, np.uint8)  # 0 new, 1 on the current path, 2 resolved
    cut = np.zeros(n, np.bool_)
    stack = np.empty(max(n, 1), np.int64)
    for i in range(n):
        if state[i] == 2:
            continue
        sp = 0
        j = i
        base = np.int64(-1)
        while True:
            if j < 0:
                break
            if state[j] == 2:
                base = out[j]
                break
            if state[j] == 1:  # back on the path: the last node's link closes a cycle
                cut[stack[sp - 1]] = True
                break
            state[j] = 1
            stack[sp] = j
            sp += 1
            j = parent[j]
        cur = base
        for k in range(sp - 1, -1, -1):
            node = stack[k]
            if marked[node]:
                cur = node
            out[node] = cur
            state[node] = 2
    return out, cut


@njit(cache=True, nogil=True)
def enclosing_calls(start, end, parent, thread_lo, thread_hi, p_thread, p_ts):
    """The deepest call of thread ``p_thread[k]`` (calls in per-thread pre-order, thread t's in
    ``[thread_lo[t], thread_hi[t])``) whose interval holds ``p_ts[k]`` (start <= ts <= end), or -1:
    a binary search for the last call starting at or before ts, then up its parents (as
    `tree.enclosing_call`)."""
    m = p_ts.shape[0]
    out = np.full(m, -1, np.int64)
    for k in range(m):
        t = p_thread[k]
        if t < 0:
            continue
        lo = thread_lo[t]
        hi = thread_hi[t]
        ts = p_ts[k]
        a = lo
        b = hi
        while a < b:
            mid = (a + b) // 2
            if start[mid] <= ts:
                a = mid + 1
            else:
                b = mid
        i = a - 1
        while i >= lo:
            if end[i] >= ts:
                out[k] = i
                break
            i = parent[i]
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
