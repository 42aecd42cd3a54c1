"""speedscope's Left Heavy view of a weighted stack forest, written as calls in one walk.

The view can be stated as a sequence of samples that `stacks.expand_into` turns into calls
(the way every sampled profile is expanded: tests/support/left_heavy_twin.py).  For the Left
Heavy view the calls follow from the walk itself: every node of weight > 0 is one call, opened
where the walk enters it (at the weight drawn so far) and closed where it leaves it (after its
children and its own weight), so `left_heavy_calls` writes them as it walks, with the same
numbers (positions summed in the same order), without the samples in between.
tests/unit/test_left_heavy_calls.py holds it to the twin's samples + ``expand_into``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .grow import room_for

#: sibling groups up to this size are ordered by insertion sort (`children_heaviest_first`)
_INSERTION_GROUP = 24


@njit(cache=True, nogil=True)
def children_heaviest_first(c_parent, total, tie):
    """The children of every node grouped by a counting sort, each group heaviest first (ties
    by ``tie`` ascending, then by node id): node p's children are ``order[first[p]:first[p +
    1]]``, the roots under the virtual node n (``first`` has n + 2 entries).  O(n) plus the
    sorting of the groups (insertion sort up to `_INSERTION_GROUP`, stable merge sorts above)."""
    n = c_parent.shape[0]
    first = np.zeros(n + 2, np.int64)
    for i in range(n):
        first[(c_parent[i] if c_parent[i] >= 0 else n) + 1] += 1
    for p in range(n + 1):
        first[p + 1] += first[p]
    fill = first[:n + 1].copy()
    o = np.empty(n, np.int64)
    for i in range(n):
        p = c_parent[i] if c_parent[i] >= 0 else n
        o[fill[p]] = i
        fill[p] += 1
    for p in range(n + 1):
        lo = first[p]
        hi = first[p + 1]
        if hi - lo == 2:
            a = o[lo]
            b = o[lo + 1]
            if total[b] > total[a] or (total[b] == total[a] and tie[b] < tie[a]):
                o[lo] = b
                o[lo + 1] = a
        elif hi - lo <= _INSERTION_GROUP:  # a stable insertion sort in place: no allocation
            for x in range(lo + 1, hi):
                v = o[x]
                y = x
                while y > lo and (total[v] > total[o[y - 1]] or (total[v] == total[o[y - 1]]
                                                                 and tie[v] < tie[o[y - 1]])):
                    o[y] = o[y - 1]
                    y -= 1
                o[y] = v
        elif hi - lo > 2:
            g = o[lo:hi].copy()
            g = g[np.argsort(tie[g], kind="mergesort")]
            g = g[np.argsort(-total[g], kind="mergesort")]
            o[lo:hi] = g
    return first, o


@njit(cache=True, nogil=True)
def left_heavy_calls(c_parent, c_depth, c_frame, total, self_weight, tie, base, o_func, o_start, o_end, o_par, o_dep,
                     o_eix):
    """The calls of speedscope's Left Heavy view of a forest (``total``: inclusive weights,
    `stacks.subtree_totals`; ``self_weight``; ``tie``: the order of equal siblings), written
    at ``base`` on in the outputs in pre-order: frame, start, end, parent and end_index
    (indices into the outputs, -1 for a root), depth.

    Depth-first from the roots, children heaviest first (`children_heaviest_first`), only
    nodes with ``total > 0``: x = the weight drawn so far; a node's call starts at x when the
    walk enters it and ends at x when it leaves it, after its children and after x += its self
    weight.  Returns (calls written, calls that last no time: weights too small to move x,
    which `stacks.drop_instant_calls` takes out with their subtrees), as `stacks.expand_into`
    of the view's samples does.  O(n) plus the sibling sorts."""
    n = c_parent.shape[0]
    first, o = children_heaviest_first(c_parent, total, tie)
    room = room_for(c_depth, 2, 2)
    st_node = np.empty(room, np.int64)
    st_next = np.empty(room, np.int64)
    st_call = np.empty(room, np.int64)
    st_node[0] = n
    st_next[0] = first[n]
    st_call[0] = -1
    sp = 1
    x = 0.0
    nc = base
    zero = 0
    while sp > 0:
        v = st_node[sp - 1]
        j = st_next[sp - 1]
        if j < first[v + 1]:
            st_next[sp - 1] = j + 1
            c = o[j]
            if total[c] > 0.0:
                o_func[nc] = c_frame[c]
                o_start[nc] = x
                o_dep[nc] = c_depth[c]
                o_par[nc] = st_call[sp - 1]
                st_node[sp] = c
                st_next[sp] = first[c]
                st_call[sp] = nc
                nc += 1
                sp += 1
            continue
        sp -= 1
        if v < n:
            if self_weight[v] > 0.0:
                x += self_weight[v]
            q = st_call[sp]
            o_end[q] = x
            o_eix[q] = nc
            if not x > o_start[q]:
                zero += 1
    return nc - base, zero
