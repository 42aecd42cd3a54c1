"""Calls sorted into per-thread pre-order and nested, the trace's threads shared between two
cores (`sort_and_nest`).

Sorting and nesting are independent from one thread of the trace to the next, so the threads
are dealt to two workers by their calls (`deal_threads`: the largest first, each to the worker
with fewer so far) and each worker runs `kernels.tree.sort_and_nest_threads` over its own
threads' ranges; the kernel releases the GIL.  The numbers are those of `kernels.tree.preorder_sort`, the gathers and
`kernels.tree.nest_sorted_intervals` over all threads, bit for bit (tests/unit/test_nesting.py).
"""
from __future__ import annotations

import threading

import numpy as np

from ..kernels.tree import group_by_key, sort_and_nest_threads

#: calls from which the sort and nest run on two threads (below, a second thread's start costs
#: more than it saves)
PARALLEL_NEST_CALLS = 1 << 16
#: the smaller worker's least share of the calls for two threads (one thread of the trace
#: holding nearly every call leaves nothing to share)
PARALLEL_NEST_SHARE = 0.1
#: the largest threads dealt one by one (`deal_threads`); the smaller rest split in one cut
DEAL_ONE_BY_ONE = 256


def deal_threads(sizes: np.ndarray) -> list[np.ndarray]:
    """The trace's threads dealt to two workers by their calls ``sizes``: the `DEAL_ONE_BY_ONE`
    largest first, each to the worker with fewer calls so far (ties to the first); then the rest,
    largest first, cut once: the lighter worker takes the longest run of them that does not pass
    half of what is left after evening the two out (so the workers differ by at most one of those
    threads' calls, and a trace of 10^6 threads costs no Python loop over them).  Returns each
    worker's thread numbers, ascending."""
    sizes = np.asarray(sizes, np.int64)
    order = np.argsort(-sizes, kind="stable")
    load = [0, 0]
    dealt: list = [[], []]
    for t in order[:DEAL_ONE_BY_ONE].tolist():
        w = 0 if load[0] <= load[1] else 1
        dealt[w].append(t)
        load[w] += int(sizes[t])
    rest = order[DEAL_ONE_BY_ONE:]
    if rest.size:
        light = 0 if load[0] <= load[1] else 1
        gap = abs(load[0] - load[1])
        total = int(sizes[rest].sum())
        share = gap + (total - gap) / 2 if total > gap else total
        take = np.cumsum(sizes[rest]) <= share  # (a prefix: the sizes fall)
        dealt[light].extend(rest[take].tolist())
        dealt[1 - light].extend(rest[~take].tolist())
    return [np.sort(np.array(d, np.int64)) for d in dealt]


def sort_and_nest(thread, start, end, order_key, row, n_threads: int, parallel: bool = True):
    """The calls (``thread`` in [0, ``n_threads``), ``start``, ``end``, tie order ``order_key``,
    and ``row``, carried along) sorted by (thread, start asc, end desc, order_key asc) -- each
    thread's depth-first pre-order where intervals nest -- and nested.

    Returns ``(order, thread, start, new_end, row, parent, depth, end_index, clipped)``: the
    permutation, the columns in its order, ``end`` in its order clipped to each enclosing call's
    (``end[order]`` is the unclipped), then `kernels.tree.nest_sorted_intervals`' other outputs
    over them.  With ``parallel`` and `PARALLEL_NEST_CALLS` calls or more, the threads are dealt
    to two workers (`deal_threads`) unless the smaller would get under `PARALLEL_NEST_SHARE` of the
    calls."""
    n = start.shape[0]
    idx, counts = group_by_key(thread, n_threads)
    s_start = np.empty(n, start.dtype)
    new_end = np.empty(n, end.dtype)  # (the sorted ends, clipped in place: `sort_and_nest_threads`)
    s_row = np.empty(n, row.dtype)
    parent = np.empty(n, np.int32)
    depth = np.empty(n, np.int32)
    end_index = np.empty(n, np.int32)
    clipped = np.empty(n, np.bool_)
    sizes = np.diff(counts)
    outs = (s_start, new_end, s_row, parent, depth, end_index, new_end, clipped)
    dealt = deal_threads(sizes) if parallel and n >= PARALLEL_NEST_CALLS else []
    if dealt and min(int(sizes[d].sum()) for d in dealt) >= PARALLEL_NEST_SHARE * n:
        failed: list = []

        def second():
            try:
                sort_and_nest_threads(idx, counts, dealt[1], start, end, order_key, row, *outs)
            except BaseException as e:  # raised below, in the caller's thread
                failed.append(e)

        worker = threading.Thread(target=second, name="tracevis3d-nest", daemon=True)
        worker.start()
        try:
            sort_and_nest_threads(idx, counts, dealt[0], start, end, order_key, row, *outs)
        finally:
            worker.join()
        if failed:
            raise failed[0]
    else:
        sort_and_nest_threads(idx, counts, np.arange(n_threads, dtype=np.int64), start, end, order_key, row, *outs)
    s_thread = np.repeat(np.arange(n_threads, dtype=thread.dtype), sizes)
    return idx, s_thread, s_start, new_end, s_row, parent, depth, end_index, clipped
