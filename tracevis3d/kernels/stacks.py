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
    # children of each node (and the roots, under a virtual node n) grouped by a counting sort,
    # then each group ordered heaviest first, ties by ``tie`` (most groups hold one or two)
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
        elif hi - lo > 2:
            g = o[lo:hi].copy()
            g = g[np.argsort(tie[g], kind="mergesort")]
            g = g[np.argsort(-total[g], kind="mergesort")]
            o[lo:hi] = g
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


@njit(cache=True, nogil=True)
def expand_stacks(s_ts, s_node, c_parent, c_depth, max_calls):
    """The calls of one thread's samples, in pre-order with their tree: speedscope's time order.

    Samples in time order, sample k at ``s_ts[k]`` with its stack's top node ``s_node[k]`` (-1:
    an empty stack) in a forest of canonical nodes (`canonical_nodes`: one node per frame path,
    so equal paths are equal nodes).  A node on the stack of consecutive samples is one call,
    from the first sample whose stack holds it to the first sample whose stack does not (the
    stacks compared from the bottom: the common part is found by walking up from the new top
    only over the frames that change); the last sample closes every call.  Calls that last no
    time (samples at one instant) are left out with their subtrees.

    Returns (node, start, end, parent, depth, end_index, status): calls in pre-order; parent
    and end_index as indices into these calls (-1 for a root); status -1 when more than
    ``max_calls`` calls were opened.  O(samples + calls)."""
    n = s_ts.shape[0]
    cap = max(16, min(2 * n, max_calls))
    c_node = np.empty(cap, np.int64)
    c_start = np.empty(cap, np.float64)
    c_end = np.empty(cap, np.float64)
    c_par = np.empty(cap, np.int32)
    c_dep = np.empty(cap, np.int32)
    c_eix = np.empty(cap, np.int32)
    maxd = 1
    for f in range(c_depth.shape[0]):
        if c_depth[f] + 2 > maxd:
            maxd = c_depth[f] + 2
    open_node = np.empty(maxd, np.int64)
    open_call = np.empty(maxd, np.int64)
    path = np.empty(maxd, np.int64)
    sp = 0
    nc = 0
    for k in range(n):
        t = s_ts[k]
        f = s_node[k]
        common = 0
        if f >= 0:
            x = f
            dx = c_depth[f]
            while dx > sp - 1:
                x = c_parent[x]
                dx -= 1
            while dx >= 0 and open_node[dx] != x:
                x = c_parent[x]
                dx -= 1
            common = dx + 1
        while sp > common:
            sp -= 1
            c = open_call[sp]
            c_end[c] = t
            c_eix[c] = nc
        if f >= 0:
            m = 0
            x = f
            d = c_depth[f]
            while d >= common:
                path[m] = x
                m += 1
                x = c_parent[x]
                d -= 1
            if nc + m > max_calls:
                return (c_node[:0], c_start[:0], c_end[:0], c_par[:0], c_dep[:0], c_eix[:0], -1)
            if nc + m > cap:
                while nc + m > cap:
                    cap *= 2
                cap = min(cap, max_calls)
                c_node2 = np.empty(cap, np.int64)
                c_start2 = np.empty(cap, np.float64)
                c_end2 = np.empty(cap, np.float64)
                c_par2 = np.empty(cap, np.int32)
                c_dep2 = np.empty(cap, np.int32)
                c_eix2 = np.empty(cap, np.int32)
                c_node2[:nc] = c_node[:nc]
                c_start2[:nc] = c_start[:nc]
                c_end2[:nc] = c_end[:nc]
                c_par2[:nc] = c_par[:nc]
                c_dep2[:nc] = c_dep[:nc]
                c_eix2[:nc] = c_eix[:nc]
                c_node, c_start, c_end, c_par, c_dep, c_eix = c_node2, c_start2, c_end2, c_par2, c_dep2, c_eix2
            for q in range(m - 1, -1, -1):
                c_node[nc] = path[q]
                c_start[nc] = t
                c_end[nc] = t
                c_par[nc] = open_call[sp - 1] if sp > 0 else -1
                c_dep[nc] = sp
                open_node[sp] = path[q]
                open_call[sp] = nc
                sp += 1
                nc += 1
    last = s_ts[n - 1] if n else 0.0
    while sp > 0:
        sp -= 1
        c = open_call[sp]
        c_end[c] = last
        c_eix[c] = nc
    # calls that last no time go, with their subtrees (all inside one instant): indices renumbered
    before = np.empty(nc + 1, np.int32)  # kept calls before index i
    kept = 0
    for i in range(nc):
        before[i] = kept
        if c_end[i] > c_start[i]:
            kept += 1
    before[nc] = kept
    if kept == nc:  # the usual case: nothing to take out
        return c_node[:nc], c_start[:nc], c_end[:nc], c_par[:nc], c_dep[:nc], c_eix[:nc], 0
    o_node = np.empty(kept, np.int64)
    o_start = np.empty(kept, np.float64)
    o_end = np.empty(kept, np.float64)
    o_par = np.empty(kept, np.int32)
    o_dep = np.empty(kept, np.int32)
    o_eix = np.empty(kept, np.int32)
    j = 0
    for i in range(nc):
        if c_end[i] > c_start[i]:
            o_node[j] = c_node[i]
            o_start[j] = c_start[i]
            o_end[j] = c_end[i]
            p = c_par[i]
            o_par[j] = before[p] if p >= 0 else np.int32(-1)
            o_dep[j] = c_dep[i]
            o_eix[j] = before[c_eix[i]]
            j += 1
    return o_node, o_start, o_end, o_par, o_dep, o_eix, 0
