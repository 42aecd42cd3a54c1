"""The calling-context tree (calls merged by their path from the root), and its pruning to
what a person can read (cone trees clutter past ~1000 nodes, SEAT Sec. 2.4.5)."""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..model import Trace

__all__ = ["ContextTree", "calling_context_tree", "PrunedTree", "prune_by_time"]


@dataclass(eq=False)
class ContextTree:
    """Node 0 is the root (the whole trace); with ``per_thread`` nodes 1..T are the threads.
    Per node: ``parent`` (-1 for the root), ``func`` (-1 for root/thread nodes), ``thread``,
    ``time`` (summed inclusive µs of its calls), ``calls``, ``first`` (its first call, -1
    for pseudo nodes).  ``ctx``: the node of every call of ``trace`` (-1 for a call merged
    into its caller)."""

    trace: Trace
    ctx: np.ndarray
    parent: np.ndarray
    func: np.ndarray
    thread: np.ndarray
    time: np.ndarray
    calls: np.ndarray
    first: np.ndarray
    per_thread: bool
    recursion: np.ndarray = None  # per node: depth of the recursion folded into it (1: none)
    probes: int = 0  # hash-table slots looked at while building it (len(trace) when hashes spread)
    #: with thread groups (`calling_context_tree`'s ``thread_groups``): ``thread`` holds a
    #: group per node, and this names each group
    group_names: list = None

    def __len__(self) -> int:
        return int(self.parent.shape[0])

    @functools.cached_property
    def time_order(self) -> np.ndarray:
        """Nodes by inclusive time, largest first (ties: lower id first)."""
        return np.argsort(-self.time, kind="stable")

    def name(self, k: int) -> str:
        if k == 0:
            if self.per_thread:
                return "all threads"
            if self.group_names is not None and len(self) > 1 and self.thread[1] >= 0:
                return self.group_names[int(self.thread[1])]
            return self.trace.thread_label(int(self.thread[1]), 1) if len(self) > 1 and self.thread[1] >= 0 \
                else "trace"
        if self.func[k] < 0:
            if self.group_names is not None:
                return self.group_names[int(self.thread[k])]
            return self.trace.thread_label(int(self.thread[k]))
        return self.trace.function_names[self.func[k]]

    def calls_of(self, k: int) -> np.ndarray:
        """Call indices (of ``trace``) merged into node ``k`` (picking a node → its calls)."""
        return np.flatnonzero(self.ctx == k)


def calling_context_tree(trace: Trace, per_thread: bool | None = None, fold_recursion: bool = False,
                         merged: np.ndarray | None = None, thread_groups: tuple | None = None) -> ContextTree:
    """The CCT of ``trace`` (`kernels.cone.calling_context_tree`, O(n)); ``per_thread``
    defaults to True when the trace has more than one thread with calls;
    ``fold_recursion``: recursion (direct or through other calls) stays in one node; ``merged`` (bool per call):
    calls folded into their callers (no node of their own, ``ctx`` -1); ``thread_groups``:
    (group of each thread, name of each group): the threads of a group share one node and
    their calls' contexts merge (`layout.select.thread_groups`), as calls of one thread do."""
    from ..kernels.cone import calling_context_tree as cct
    from ..kernels.gamma import process_hash_seed

    thread, n_threads, group_names = trace.thread, trace.n_threads, None
    if thread_groups is not None:
        group_of, group_names = thread_groups
        thread = np.asarray(group_of, np.int32)[trace.thread]
        n_threads, group_names = len(group_names), list(group_names)
        per_thread = True if per_thread is None else per_thread
    if per_thread is None:
        # threads hold contiguous blocks of calls: their ranges say which have calls (a
        # sort of every call's thread took 45 ms of a 1M-call cone tree)
        rng = trace.thread_ranges()
        per_thread = int(np.count_nonzero(rng[:, 1] > rng[:, 0])) > 1
    ctx, par, func, thr, time, calls, first, rec, probes = cct(
        trace.func, trace.parent, thread, trace.end - trace.start,
        np.zeros(0, np.bool_) if merged is None else np.ascontiguousarray(merged, np.bool_), n_threads,
        bool(per_thread),
        bool(fold_recursion), process_hash_seed())
    return ContextTree(trace, ctx, par, func, thr, time, calls, first, bool(per_thread), rec, int(probes),
                       group_names)


@dataclass(eq=False)
class PrunedTree:
    """The kept nodes of a `ContextTree`, renumbered in pre-order (children after their
    parent, siblings in call order): ``node`` (id in the full tree), ``parent`` (new ids),
    ``depth``, ``child_ptr``/``child_ids`` (CSR), ``hidden_below`` (children in the full tree
    that are not drawn), ``partial`` (SEAT's partially-expanded state: some of its children
    are not drawn, pruned here or hidden by a filter before)."""

    cct: ContextTree
    node: np.ndarray
    parent: np.ndarray
    depth: np.ndarray
    child_ptr: np.ndarray
    child_ids: np.ndarray
    hidden_below: np.ndarray
    partial: np.ndarray

    def __len__(self) -> int:
        return int(self.node.shape[0])


def prune_by_time(cct: ContextTree, max_nodes: int, call_partial: np.ndarray | None = None,
                  expand_calls=()) -> PrunedTree:
    """Keep the ``max_nodes`` nodes of largest inclusive time (a node's time is at least
    each child's, so the kept set is closed under parents; ties and pseudo nodes are made
    closed explicitly).  ``call_partial``: per call of the trace, flags from a filter
    (`analysis.filters.filter_trace`) that mark their nodes partial.  ``expand_calls``:
    calls whose nodes are fully expanded on demand (all their children kept, beyond
    ``max_nodes``).  Calls merged into their callers (``ctx`` -1) mark and expand nothing."""
    n = len(cct)
    max_nodes = max(1, int(max_nodes))
    order = cct.time_order
    keep = np.zeros(n, bool)
    keep[order[:max_nodes]] = True
    keep[0] = True
    exp = np.asarray([int(c) for c in expand_calls if 0 <= int(c) < cct.ctx.size], np.int64)
    exp = exp[cct.ctx[exp] >= 0]  # a call merged into its caller has no node of its own
    if exp.size:
        want = np.zeros(n, bool)
        want[cct.ctx[exp]] = True
        keep[cct.ctx[exp]] = True
        keep[want[np.maximum(cct.parent, 0)] & (cct.parent >= 0)] = True
    from ..kernels.cone import close_under_parents

    keep = close_under_parents(keep, cct.parent)  # one linear pass (an expanded deep call's whole chain)
    kept = np.flatnonzero(keep)
    # children lists in the full tree, siblings in call order (first call)
    par = cct.parent
    kids_of = {}
    first_key = np.where(cct.first >= 0, cct.first, np.arange(n))
    kk = kept[kept > 0]
    kk = kk[np.lexsort((first_key[kk], par[kk]))]
    for k in kk.tolist():
        kids_of.setdefault(int(par[k]), []).append(k)
    new_of = np.full(n, -1, np.int64)
    nodes, parents, depths = [], [], []
    stack = [(0, -1, 0)]
    while stack:
        k, p, d = stack.pop()
        new_of[k] = len(nodes)
        nodes.append(k)
        parents.append(p)
        depths.append(d)
        for c in reversed(kids_of.get(k, [])):
            stack.append((c, new_of[k], d + 1))
    node = np.asarray(nodes, np.int64)
    parent = np.asarray(parents, np.int64)
    m = node.size
    counts = np.bincount(parent[1:], minlength=m) if m > 1 else np.zeros(m, np.int64)
    child_ptr = np.zeros(m + 1, np.int64)
    np.cumsum(counts, out=child_ptr[1:])
    child_ids = np.argsort(parent[1:], kind="stable") + 1 if m > 1 else np.zeros(0, np.int64)
    # children of each kept node (in the full tree) that are not drawn
    dropped = np.flatnonzero(~keep)
    hidden_below = np.bincount(par[dropped], minlength=n)[node] if dropped.size else np.zeros(m, np.int64)
    partial = hidden_below > 0
    if call_partial is not None and call_partial.any():
        pn = np.zeros(n, bool)
        at = cct.ctx[call_partial]
        pn[at[at >= 0]] = True  # a merged call's flag goes to no node
        partial |= pn[node]
    return PrunedTree(cct, node, parent, np.asarray(depths, np.int64), child_ptr, child_ids.astype(np.int64),
                      hidden_below, partial)
