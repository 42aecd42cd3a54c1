"""callgrind's numbers in numba (`tracevis3d.io.callgrind`): one cost column of its cost lines
(`callgrind_costs`) and the expansion of its call graph into speedscope's call tree
(`callgraph_tree`, callgrind.ts's reading, with the thread roots it misses).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .perf_lines import next_token
from .textscan import grow_f64, grow_i64


@njit(cache=True, nogil=True, inline="always")
def _number(buf, z, y, base):
    """The value of the digits ``buf[z:y]`` in ``base`` (10: ``0-9``; 16: also ``a-f``, ``A-F``),
    v = v × base + digit from the first, as float64, and whether they are all digits (and there is
    one); at the first other byte, the value so far and False."""
    v = 0.0
    if z == y:
        return v, False
    while z < y:
        d = buf[z]
        if 48 <= d <= 57:
            v = v * base + (d - 48)
        elif base == 16 and 97 <= d <= 102:
            v = v * base + (d - 87)
        elif base == 16 and 65 <= d <= 70:
            v = v * base + (d - 55)
        else:
            return v, False
        z += 1
    return v, True


@njit(cache=True, nogil=True)
def callgrind_costs(buf, starts, ends, column):
    """The value in column ``column`` (0-based, positions first) of each callgrind cost line
    ``buf[starts[k]:ends[k]]``, with speedscope's reading of subposition compression
    (``callgrind.ts`` ``parseCostLine``) applied to every column: ``*`` is the previous cost
    line's value in that column, ``+n``/``-n`` that value plus or minus n; numbers are
    decimal or ``0x`` hex; a missing column is 0.  Returns (values, ok): ok[k] is False for
    a line with a token that is none of these."""
    n = starts.shape[0]
    out = np.zeros(n, np.float64)
    ok = np.ones(n, np.bool_)
    prev = 0.0
    for k in range(n):
        a = starts[k]
        e = ends[k]
        col = 0
        val = 0.0
        good = True
        x = a
        while x < e:
            x, y = next_token(buf, x, e)
            if x >= e:
                break
            # every token is checked; only the wanted column's value is kept
            c = buf[x]
            rel = 0
            z = x
            if c == 42:  # '*'
                if y != x + 1:
                    good = False
                v = 0.0
                rel = 2
            else:
                if c == 43 or c == 45:
                    rel = 1 if c == 43 else -1
                    z += 1
                base = 10
                if z + 1 < y and buf[z] == 48 and (buf[z + 1] == 120 or buf[z + 1] == 88):
                    z += 2
                    base = 16
                v, digits = _number(buf, z, y, base)
                if not digits:
                    good = False
            if col == column:
                if rel == 2:
                    val = prev
                elif rel == 1:
                    val = prev + v
                elif rel == -1:
                    val = prev - v
                else:
                    val = v
            col += 1
            x = y
        if not good:
            ok[k] = False
            continue
        out[k] = val if col > column else 0.0
        prev = out[k]
    return out, ok


# the columns of `callgraph_tree`'s walk stack: integers (frame, next child edge, node) and
# floats (weight, self weight left, cumulative self weight before its children)
_S_F, _S_NEXT, _S_NODE = 0, 1, 2
_S_W, _S_SELF, _S_MARK = 0, 1, 2


@njit(cache=True, nogil=True, inline="always")
def _enter(c, w, parent, sp, nn, n_cut, cum, threshold, max_nodes, total, child_ptr, on_stack, n_parent, n_frame,
           n_self, st_i, st_x):
    """Function ``c`` entered with weight ``w`` under node ``parent`` (-1: a root) unless it is on
    the walk's stack, its weight is below ``threshold`` or its total is 0 (then nothing changes)
    or there are ``max_nodes`` nodes already (then ``n_cut`` counts it): node ``nn`` made,
    pushed on the walk's stack at ``sp`` (its self weight w until its children take their
    shares), the node arrays and the stack grown by doubling when full.  Returns (sp, nn,
    n_cut, node arrays, stack), sp and nn one more when it was entered."""
    if on_stack[c] or w < threshold or total[c] == 0.0:
        return sp, nn, n_cut, n_parent, n_frame, n_self, st_i, st_x
    if nn >= max_nodes:
        return sp, nn, n_cut + 1, n_parent, n_frame, n_self, st_i, st_x
    if nn == n_parent.shape[0]:
        n_parent = grow_i64(n_parent, nn + 1)
        n_frame = grow_i64(n_frame, nn + 1)
        n_self = grow_f64(n_self, nn + 1)
    if sp == st_i.shape[0]:
        i2 = np.empty((2 * sp, 3), np.int64)
        i2[:sp] = st_i
        x2 = np.empty((2 * sp, 3), np.float64)
        x2[:sp] = st_x
        st_i, st_x = i2, x2
    n_parent[nn] = parent
    n_frame[nn] = c
    st_i[sp, _S_F] = c
    st_i[sp, _S_NEXT] = child_ptr[c]
    st_i[sp, _S_NODE] = nn
    st_x[sp, _S_W] = w
    st_x[sp, _S_SELF] = w
    st_x[sp, _S_MARK] = cum
    on_stack[c] = True
    return sp + 1, nn + 1, n_cut, n_parent, n_frame, n_self, st_i, st_x


@njit(cache=True, nogil=True)
def callgraph_tree(total, child_ptr, child, child_weight, roots, root_weight, threshold, max_nodes):
    """speedscope's call tree of a weighted call graph (``callgrind.ts``, ``CallGraph.toProfile``):
    from each root in order, with its weight ``root_weight``, a depth-first walk that gives
    each call-graph child of a node the share of the node's weight that the child's edge has
    of the function's total, ``w(child) = w(node) × edge(f → child) / total(f)``, children in
    ``child_ptr`` order; a function already on the walk's stack (recursion) or a share below
    ``threshold`` (speedscope: 1e-4 of the heaviest function's total) or a function whose
    total is 0 is not entered; what the children did not take is the node's self weight.

    Returns (node_parent, node_frame, node_self, n_cut): the tree's nodes in pre-order (parent
    -1 for a root's node) and each one's self weight; past ``max_nodes`` nodes no node is made
    (their weight stays with their parent) and n_cut counts the shares so dropped.  An explicit
    stack, so deep call graphs cannot overflow anything."""
    nf = total.shape[0]
    on_stack = np.zeros(nf, np.bool_)
    cap = 1024
    n_parent = np.empty(cap, np.int64)
    n_frame = np.empty(cap, np.int64)
    n_self = np.empty(cap, np.float64)
    nn = 0
    # the walk's stack, a row per level (`_enter`)
    st_i = np.empty((64, 3), np.int64)
    st_x = np.empty((64, 3), np.float64)
    cum = 0.0
    n_cut = 0
    for r in range(roots.shape[0]):
        sp, nn, n_cut, n_parent, n_frame, n_self, st_i, st_x = _enter(
            roots[r], root_weight[r], -1, 0, nn, n_cut, cum, threshold, max_nodes, total, child_ptr, on_stack,
            n_parent, n_frame, n_self, st_i, st_x)
        while sp > 0:
            t = sp - 1
            f = st_i[t, _S_F]
            e = st_i[t, _S_NEXT]
            if e < child_ptr[f + 1]:
                st_i[t, _S_NEXT] = e + 1
                sp, nn, n_cut, n_parent, n_frame, n_self, st_i, st_x = _enter(
                    child[e], st_x[t, _S_W] * (child_weight[e] / total[f]), st_i[t, _S_NODE], sp, nn, n_cut, cum,
                    threshold, max_nodes, total, child_ptr, on_stack, n_parent, n_frame, n_self, st_i, st_x)
                continue
            # leave f: its self weight is what its children did not take
            cum += st_x[t, _S_SELF]
            n_self[st_i[t, _S_NODE]] = st_x[t, _S_SELF]
            on_stack[f] = False
            sp -= 1
            if sp > 0:
                st_x[sp - 1, _S_SELF] -= cum - st_x[t, _S_MARK]
    return n_parent[:nn].copy(), n_frame[:nn].copy(), n_self[:nn].copy(), n_cut
