"""Repeated patterns and their filters (SEAT Sec. 2.9.1.1), pure kernels.

Exact patterns are the nodes of the compact DAG (`kernels.dag`).  The relaxed criteria
SEAT lists -- "ignoring the order of calls, ignoring the number of repetitions, and
limiting comparison to certain depth" -- are the same post-order hash-consing with a
different key per call i (children c_1..c_m in call order, cls(c) their classes):

    key(i) = (func[i], K(cls(c_1), ..., cls(c_m)))
    K = the sequence as is                    (exact)
      = the sequence sorted                   (ignore_order: a multiset of child patterns)
      = consecutive equal entries merged      (collapse_runs: a loop of 3 or 30 iterations
                                               of the same child is the same pattern)
      = sorted, then merged                   (both: the set of child patterns)

With a depth limit d the classes are computed level by level: cls_0(i) = func[i], and
cls_l uses cls_{l-1} of the children (d passes, each O(n + Σ m log m)), so two calls are in
the same class when their subtrees agree on their first d levels below them.
"""
import numpy as np
from numba import njit

from .gamma import find_key, key_table, store_new_key, keyed_start, keyed_step
from .reshape import kept_ancestor_step


@njit(cache=True, nogil=True)
def relaxed_classes(func, end_index, prev, use_prev, ignore_order, collapse_runs, seed):
    """One pass of the relaxed pattern classes (module docstring): the key of call i
    is built from ``prev[c]`` of its children when ``use_prev`` (a depth-limited pass),
    else from the classes this pass gives them (unlimited depth).  Keys are hashed by a
    keyed chain from ``seed`` (`gamma.process_hash_seed`) and hits verified key by key.  Returns ``(cls, n_classes)``."""
    n = func.shape[0]
    cls = np.empty(n, np.int32)
    table, tmask, hashes, kptr, keys, buf = key_table(n)
    n_keys = 0
    n_cls = 0
    for i in range(n - 1, -1, -1):
        buf[0] = func[i]
        m = 1
        c = i + 1
        while c < end_index[i]:
            buf[m] = prev[c] if use_prev else cls[c]
            m += 1
            c = end_index[c]
        if ignore_order and m > 2:
            buf[1:m].sort()
        if collapse_runs and m > 2:
            w = 2
            for j in range(2, m):
                if buf[j] != buf[w - 1]:
                    buf[w] = buf[j]
                    w += 1
            m = w
        h = keyed_start(buf[0], seed)
        for j in range(1, m):
            h = keyed_step(h, buf[j])
        slot, found = find_key(table, tmask, hashes, kptr, keys, h, buf, m)
        if found < 0:
            found = n_cls
            keys, n_keys = store_new_key(table, slot, hashes, h, kptr, keys, n_keys, found, buf, m)
            n_cls += 1
        cls[i] = found
    return cls, n_cls


@njit(cache=True, nogil=True)
def collapse_repeats(end_index, cls, eligible):
    """Collapse the repeated instances of the patterns flagged in ``eligible`` (indexed by
    class): in pre-order, the first instance of a class stays expanded, every later
    instance keeps its root call and hides its descendants (SEAT's "collapse a pattern's
    instances").  Patterns nested in a collapsed instance are hidden with it.
    Returns ``(hidden, collapsed)``: bool per call (hidden descendants; instance roots
    that were collapsed).  O(n)."""
    n = end_index.shape[0]
    hidden = np.zeros(n, np.bool_)
    collapsed = np.zeros(n, np.bool_)
    seen = np.zeros(eligible.shape[0], np.bool_)
    i = 0
    while i < n:
        k = cls[i]
        if eligible[k]:
            if seen[k]:
                if end_index[i] > i + 1:
                    collapsed[i] = True
                    for j in range(i + 1, end_index[i]):
                        hidden[j] = True
                i = end_index[i]
                continue
            seen[k] = True
        i += 1
    return hidden, collapsed


@njit(cache=True, nogil=True)
def partially_expanded(parent, hidden):
    """SEAT's partially-expanded state: a kept call is partial when some call of its
    subtree is hidden and that hidden call's nearest kept ancestor is this call (so its
    shown children are not all it had).  One pre-order sweep (parents before
    children): up(i) = parent if kept else up(parent) (`reshape.kept_ancestor_step`).  Returns
    bool per call."""
    n = parent.shape[0]
    up = np.empty(n, np.int64)
    partial = np.zeros(n, np.bool_)
    for i in range(n):
        kept_ancestor_step(parent, hidden, up, i)
        if hidden[i] and up[i] >= 0:
            partial[up[i]] = True
    return partial
