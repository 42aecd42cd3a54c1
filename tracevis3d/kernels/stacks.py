"""Kernels of sampled and aggregated stacks (`tracevis3d.io.stacks`): the stack tables every
profiler writes, read the way speedscope reads them.

A profile's stacks are a forest of nodes, each a frame on top of its parent node.  Profilers
differ in whether two nodes with the same frame under the same parent may both exist (V8
splits a function by line or by deoptimisation, perf's and collapsed stacks' text repeats
every stack whole).  speedscope compares stacks frame by frame (`appendSampleWithWeight` in
its ``profile.ts``: a frame continues while the stacks agree up to it), so two such nodes are
one: `canonical_nodes` merges them, and every reader builds on the merged forest.
"""
from __future__ import annotations

import numpy as np
from numba import njit

_EMPTY = np.int64(-1)


@njit(cache=True, nogil=True)
def _hash2(a, b):
    h = np.uint64(a) * np.uint64(0x9E3779B97F4A7C15) ^ (np.uint64(b) + np.uint64(0x632BE59BD9B4E019))
    h ^= h >> np.uint64(29)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(32)
    return h


@njit(cache=True, nogil=True)
def canonical_nodes(parent, frame, depth):
    """Merge the nodes of a stack forest that stand for the same frame path.

    ``parent[i]`` (-1 for a root; a forest without cycles, as `chrome_tree.frame_depths`
    leaves it), ``frame[i]`` (≥ 0), ``depth[i]`` (0 for a root).  Node i's canonical node is
    c(i) = C[(c(parent[i]), frame[i])]: the first node met with that (canonical parent, frame),
    nodes met in order of depth, then index, so a parent is always met before its children.

    Returns (canon, c_parent, c_frame, c_depth): canon[i] the canonical node of node i; the
    canonical nodes' parent (canonical, -1 for a root), frame and depth, numbered by first
    appearance.  O(n) expected (open addressing on (parent, frame); the numbering is
    deterministic, independent of the hash).
    """
    n = parent.shape[0]
    canon = np.full(n, -1, np.int64)
    # counting sort by depth (parents first)
    maxd = 0
    for i in range(n):
        if depth[i] > maxd:
            maxd = depth[i]
    cnt = np.zeros(maxd + 2, np.int64)
    for i in range(n):
        cnt[depth[i] + 1] += 1
    for d in range(maxd + 1):
        cnt[d + 1] += cnt[d]
    order = np.empty(n, np.int64)
    for i in range(n):
        d = depth[i]
        order[cnt[d]] = i
        cnt[d] += 1
    cap = 16
    while cap < 2 * n:
        cap *= 2
    mask = np.uint64(cap - 1)
    slot_node = np.full(cap, -1, np.int64)  # canonical node in the slot
    c_parent = np.empty(n, np.int64)
    c_frame = np.empty(n, np.int64)
    c_depth = np.empty(n, np.int64)
    m = 0
    for k in range(n):
        i = order[k]
        p = parent[i]
        cp = canon[p] if p >= 0 else _EMPTY
        f = frame[i]
        h = _hash2(cp + 1, f) & mask
        while True:
            c = slot_node[h]
            if c < 0:
                slot_node[h] = m
                c_parent[m] = cp
                c_frame[m] = f
                c_depth[m] = depth[i]
                canon[i] = m
                m += 1
                break
            if c_parent[c] == cp and c_frame[c] == f:
                canon[i] = c
                break
            h = (h + np.uint64(1)) & mask
    return canon, c_parent[:m].copy(), c_frame[:m].copy(), c_depth[:m].copy()


@njit(cache=True, nogil=True)
def subtree_totals(c_parent, c_depth, self_weight):
    """total[i] = self_weight[i] + Σ total[children of i]: the inclusive weight of each node of
    a forest (children summed into parents from the deepest level up).  O(n)."""
    n = c_parent.shape[0]
    total = self_weight.astype(np.float64).copy()
    maxd = 0
    for i in range(n):
        if c_depth[i] > maxd:
            maxd = c_depth[i]
    cnt = np.zeros(maxd + 2, np.int64)
    for i in range(n):
        cnt[c_depth[i] + 1] += 1
    for d in range(maxd + 1):
        cnt[d + 1] += cnt[d]
    order = np.empty(n, np.int64)
    for i in range(n):
        d = c_depth[i]
        order[cnt[d]] = i
        cnt[d] += 1
    for k in range(n - 1, -1, -1):
        i = order[k]
        p = c_parent[i]
        if p >= 0:
            total[p] += total[i]
    return total


@njit(cache=True, nogil=True)
def left_heavy_order(c_parent, total, self_weight, tie):
    """speedscope's Left Heavy reading of a weighted stack forest, as a sequence of samples.

    Every node with ``total > 0`` is drawn once, as wide as its total; its children side by
    side from its left edge, the heaviest first (ties by ``tie``, ascending: the frame's name
    order), its own (self) weight last, at its right end; roots likewise.  Returned as the
    samples that `chrome_tree.expand_samples` turns into exactly those calls: (node, position)
    per sample, position = Σ weights before it, with a closing empty sample (node -1) at the
    end; a sample per node whose self weight is > 0, in depth-first order, each node's
    children's samples before its own.  O(n log n) for the sorting of siblings.
    """
    n = c_parent.shape[0]
    # children of each node (and the roots, under a virtual node n), heaviest first
    key_parent = np.empty(n, np.int64)
    for i in range(n):
        key_parent[i] = c_parent[i] if c_parent[i] >= 0 else n
    o = np.argsort(tie, kind="mergesort")
    o = o[np.argsort(-total[o], kind="mergesort")]
    o = o[np.argsort(key_parent[o], kind="mergesort")]
    first = np.full(n + 2, 0, np.int64)
    for i in range(n):
        first[key_parent[i] + 1] += 1
    for p in range(n + 1):
        first[p + 1] += first[p]
    # explicit depth-first walk: (node, next child index) on a stack
    out_node = np.empty(n + 1, np.int64)
    out_pos = np.empty(n + 1, np.float64)
    m = 0
    pos = 0.0
    st_node = np.empty(n + 1, np.int64)
    st_next = np.empty(n + 1, np.int64)
    sp = 0
    st_node[0] = n
    st_next[0] = first[n]
    sp = 1
    while sp > 0:
        v = st_node[sp - 1]
        j = st_next[sp - 1]
        if j < first[v + 1]:
            st_next[sp - 1] = j + 1
            c = o[j]
            if total[c] > 0.0:
                st_node[sp] = c
                st_next[sp] = first[c]
                sp += 1
            continue
        sp -= 1
        if v < n and self_weight[v] > 0.0:
            out_node[m] = v
            out_pos[m] = pos
            m += 1
            pos += self_weight[v]
    out_node[m] = -1
    out_pos[m] = pos
    m += 1
    return out_node[:m].copy(), out_pos[:m].copy()
