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

from .stacklists import mix_pair
from .tree import common_depth, group_by_key_into, open_depth

_EMPTY = np.int64(-1)


#: children a node's list holds before its children go to the hash table (`canonical_nodes`)
_LIST_CHILDREN = 8


@njit(cache=True, nogil=True)
def _parents_first(parent, depth):
    """An order of the nodes in which each parent comes before its children: the index order
    when every parent precedes its child (profilers write their tables so), else by depth,
    then index (a counting sort)."""
    n = parent.shape[0]
    forward = True
    for i in range(n):
        if parent[i] >= i:
            forward = False
            break
    if forward:
        return np.arange(n)
    maxd = 0
    for i in range(n):
        if depth[i] > maxd:
            maxd = depth[i]
    order = np.empty(n, np.int64)
    group_by_key_into(depth, maxd + 1, order)
    return order


@njit(cache=True, nogil=True)
def _slot_of(slot, mask, c_parent, c_frame, cp, f):
    """The slot of (cp, f) in the open-addressing table ``slot`` (node ids, -1 empty): the one
    holding that node, or the empty one where it goes."""
    h = mix_pair(cp + 1, f) & mask
    while True:
        c = slot[h]
        if c < 0 or (c_parent[c] == cp and c_frame[c] == f):
            return h
        h = (h + np.uint64(1)) & mask


@njit(cache=True, nogil=True)
def canonical_nodes(parent, frame, depth):
    """Merge the nodes of a stack forest that stand for the same frame path.

    ``parent[i]`` (-1 for a root; a forest without cycles, as `chrome_tree.frame_depths`
    leaves it), ``frame[i]`` (≥ 0), ``depth[i]`` (0 for a root).  Node i's canonical node is
    c(i) = C[(c(parent[i]), frame[i])]: the first node met with that (canonical parent, frame),
    nodes met parents first (`_parents_first`: index order for a table whose parents precede
    their children, else depth, then index).

    Returns (canon, c_parent, c_frame, c_depth): canon[i] the canonical node of node i; the
    canonical nodes' parent (canonical, -1 for a root), frame and depth, numbered by first
    appearance.  C is looked up in each canonical parent's list of children while it has at
    most `_LIST_CHILDREN` (the nodes of a profile's table sit near their parent: the list is
    in cache where a hash table's slot is not), and in a hash table (open addressing on
    (parent, frame)) for the children of a node with more.  O(n) expected, deterministic (the
    numbering does not depend on the hash).
    """
    n = parent.shape[0]
    order = _parents_first(parent, depth)
    canon = np.empty(n, np.int64)
    c_parent = np.empty(n, np.int64)
    c_frame = np.empty(n, np.int64)
    c_depth = np.empty(n, np.int64)
    first_child = np.full(n + 1, -1, np.int64)  # [n]: the roots' list
    next_sib = np.empty(n, np.int64)
    n_kids = np.zeros(n + 1, np.int64)  # -1: the node's children are in the hash table
    slot = np.empty(0, np.int64)
    mask = np.uint64(0)
    m = 0
    for k in range(n):
        i = order[k]
        p = parent[i]
        cp = canon[p] if p >= 0 else _EMPTY
        pk = cp if cp >= 0 else n
        f = frame[i]
        if n_kids[pk] >= 0:
            c = first_child[pk]
            while c >= 0 and c_frame[c] != f:
                c = next_sib[c]
            if c >= 0:
                canon[i] = c
                continue
        else:
            h = _slot_of(slot, mask, c_parent, c_frame, cp, f)
            if slot[h] >= 0:
                canon[i] = slot[h]
                continue
            slot[h] = m
        c_parent[m] = cp
        c_frame[m] = f
        c_depth[m] = depth[i]
        canon[i] = m
        if n_kids[pk] >= 0:
            next_sib[m] = first_child[pk]
            first_child[pk] = m
            n_kids[pk] += 1
            if n_kids[pk] > _LIST_CHILDREN:  # a wide node: its children move to the hash table
                if slot.shape[0] == 0:
                    cap = 16
                    while cap < 2 * n:
                        cap *= 2
                    slot = np.full(cap, -1, np.int64)
                    mask = np.uint64(cap - 1)
                n_kids[pk] = -1
                c = m
                while c >= 0:
                    slot[_slot_of(slot, mask, c_parent, c_frame, cp, c_frame[c])] = c
                    c = next_sib[c]
        m += 1
    return canon, c_parent[:m].copy(), c_frame[:m].copy(), c_depth[:m].copy()


@njit(cache=True, nogil=True)
def subtree_totals(c_parent, c_depth, self_weight):
    """total[i] = self_weight[i] + Σ total[children of i]: the inclusive weight of each node of
    a forest (children summed into parents in the reverse of `_parents_first`'s order: from the
    last node to the first when every parent precedes its children, else from the deepest level
    up).  O(n)."""
    n = c_parent.shape[0]
    total = self_weight.astype(np.float64).copy()
    order = _parents_first(c_parent, c_depth)
    for k in range(n - 1, -1, -1):
        i = order[k]
        p = c_parent[i]
        if p >= 0:
            total[p] += total[i]
    return total


@njit(cache=True, nogil=True, inline="always")
def _close_calls(open_call, sp, common, t, nc, o_start, o_end, o_eix):
    """The open calls at depths ``common`` to ``sp - 1`` (``open_call``) ended at time ``t``, their
    end index ``nc``; returns how many of them last no time (end ≤ start)."""
    zero = 0
    while sp > common:
        sp -= 1
        c = open_call[sp]
        o_end[c] = t
        o_eix[c] = nc
        if not t > o_start[c]:
            zero += 1
    return zero


@njit(cache=True, nogil=True)
def count_calls(s_node, c_parent, c_depth):
    """How many calls `expand_into` opens for the samples ``s_node`` (their stacks' top nodes,
    -1 for an empty stack, in time order) of a forest of canonical nodes: the frames each
    sample's stack holds that the previous one's does not hold at the same place.  The same
    walk as `expand_into`, without its writes: the outputs are allocated once, at their size."""
    n = s_node.shape[0]
    open_node = np.empty(open_depth(c_depth), np.int64)
    sp = 0
    nc = 0
    for k in range(n):
        f = s_node[k]
        if f < 0:
            sp = 0
            continue
        common = common_depth(f, sp, open_node, c_parent, c_depth)
        x = f
        d = c_depth[f]
        while d >= common:
            open_node[d] = x
            x = c_parent[x]
            d -= 1
            nc += 1
        sp = c_depth[f] + 1
    return nc


@njit(cache=True, nogil=True)
def expand_into(s_ts, s_node, c_parent, c_depth, c_frame, base, o_func, o_start, o_end, o_par, o_dep, o_eix):
    """The calls of one thread's samples, in pre-order with their tree: speedscope's time order
    (``appendSampleWithWeight`` in its ``profile.ts``: a frame continues while consecutive
    stacks agree up to it).

    Samples in time order, sample k at ``s_ts[k]`` with its stack's top node ``s_node[k]`` (-1:
    an empty stack) in a forest of canonical nodes (`canonical_nodes`: one node per frame path,
    so equal paths are equal nodes).  A node on the stack of consecutive samples is one call,
    from the first sample whose stack holds it to the first sample whose stack does not (the
    stacks compared from the bottom: the common part is found by walking up from the new top
    only over the frames that change); the last sample closes every call.

    The calls are written at ``base`` on in the outputs (sized by `count_calls`): frame
    (``c_frame`` of the node), start, end, parent and end_index (indices into the outputs, -1
    for a root), depth.  Returns (calls written, calls that last no time): those (samples at
    one instant) are taken out afterwards with their subtrees (`drop_instant_calls`).
    O(samples + calls)."""
    n = s_ts.shape[0]
    maxd = open_depth(c_depth)
    open_node = np.empty(maxd, np.int64)
    open_call = np.empty(maxd, np.int64)
    sp = 0
    nc = base
    zero = 0
    for k in range(n):
        t = s_ts[k]
        f = s_node[k]
        common = 0
        if f >= 0:
            common = common_depth(f, sp, open_node, c_parent, c_depth)
        zero += _close_calls(open_call, sp, common, t, nc, o_start, o_end, o_eix)
        sp = min(sp, common)
        if f >= 0:
            d = c_depth[f]
            m = d + 1 - common
            x = f
            q = nc + m - 1
            while d >= common:  # the new calls, from the top of the stack down
                o_func[q] = c_frame[x]
                o_start[q] = t
                o_dep[q] = d
                open_node[d] = x
                open_call[d] = q
                x = c_parent[x]
                d -= 1
                q -= 1
            for q in range(nc, nc + m):
                dq = o_dep[q]
                o_par[q] = open_call[dq - 1] if dq > 0 else -1
            nc += m
            sp = c_depth[f] + 1
    last = s_ts[n - 1] if n else 0.0
    zero += _close_calls(open_call, sp, 0, last, nc, o_start, o_end, o_eix)
    return nc - base, zero


@njit(cache=True, nogil=True)
def drop_instant_calls(func, start, end, par, dep, eix, thread):
    """The calls (in pre-order, `expand_into`'s outputs) without those that last no time
    (end ≤ start), with their subtrees (all inside one instant): parent and end_index
    renumbered (int32).  Returns the kept (func, start, end, parent, depth, end_index, thread),
    the others in the dtypes they come in."""
    nc = func.shape[0]
    before = np.empty(nc + 1, np.int32)  # kept calls before index i
    kept = 0
    for i in range(nc):
        before[i] = kept
        if end[i] > start[i]:
            kept += 1
    before[nc] = kept
    keep = end > start
    o_par = np.empty(kept, np.int32)
    o_eix = np.empty(kept, np.int32)
    j = 0
    for i in range(nc):
        if keep[i]:
            p = par[i]
            o_par[j] = before[p] if p >= 0 else np.int32(-1)
            o_eix[j] = before[eix[i]]
            j += 1
    return func[keep], start[keep], end[keep], o_par, dep[keep], o_eix, thread[keep]
