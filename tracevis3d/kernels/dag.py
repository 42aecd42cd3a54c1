"""The call forest as a DAG of identical subtrees (SEAT's Compact Trace Format).

SEAT (Hamou-Lhadj, ch. 5, Sec. 2.9 and 4.1) stores a trace as the directed acyclic graph
in which every distinct subtree -- same function, same ordered children, recursively --
is one node; a call is then a pointer to its node, and a repeated subtree costs one
pointer per repetition.  `subtree_dag` builds it in O(n) by hashing in post-order (a
reverse sweep over calls in per-thread pre-order visits children before parents), the
same construction as `kernels.gamma_sweep.shape_classes_grown` but returning the DAG itself:

    key(i) = (func[i], node(c_1), ..., node(c_m))     c_j the children of i in call order
    node(i) = the id of key(i) in a hash table whose hits are verified element by element

so equal node ids mean identical subtrees, never a hash collision.  All threads go
through one table, so threads share patterns.  Node ids are numbered in creation order
(last call first): a child node is always created before its parent, so every child id
is smaller than its parent's id (the DAG is stored topologically; the loader checks it).

`dag_node_sizes` and `expand_dag` are the way back (the compact file's loader):
sizes of the subtrees, then a pre-order expansion into the Trace arrays.
"""
import numpy as np
from numba import njit

from .gamma import child_key, find_key, keys_grown, rehashed, store_new_key, table_size

#: error codes of `dag_node_sizes` (0 = fine); the node index comes with them
DAG_OK = 0
DAG_BAD_FUNC = 1
DAG_BAD_CHILD = 2
DAG_TOO_BIG = 3
DAG_BAD_PTR = 4
DAG_ERRORS = {
    DAG_BAD_FUNC: "function id outside the function table",
    DAG_BAD_CHILD: "a child that is not an earlier node (the DAG must be stored children first)",
    DAG_TOO_BIG: "expands to more calls than the file declares",
    DAG_BAD_PTR: "child list pointers out of order",
}


@njit(cache=True, nogil=True)
def subtree_dag(func, end_index, seed):
    """The DAG of identical subtrees (module docstring; SEAT Sec. 2.9); keys hashed by
    a keyed chain from ``seed`` (`gamma.process_hash_seed`: crafted collisions cost what
    random ones do; the result does not depend on it).

    Returns ``(node, node_ptr, node_keys)``: ``node[i]`` the DAG node of call i;
    node k's key is ``node_keys[node_ptr[k]:node_ptr[k+1]]`` = (function, child
    nodes in call order).  ``len(node_ptr) - 1`` is the number of distinct
    subtrees.  O(n) time and memory.
    """
    n = func.shape[0]
    node = np.empty(n, np.int32)
    # the table grows with the nodes (load <= 1/2), not with the calls: traces have far
    # fewer distinct subtrees than calls, and a small table stays in the cache
    tsize = min(table_size(n), 1 << 16)
    tmask = tsize - 1
    table = np.full(tsize, -1, np.int32)
    cap = min(max(n, 1), 1 << 16)  # node arrays grow with the nodes too (first touch is costly)
    hashes = np.empty(cap, np.uint64)
    kptr = np.zeros(cap + 1, np.int64)
    keys = np.empty(max(16, min(2 * n, 1 << 17)), np.int32)
    n_keys = 0
    n_nodes = 0
    buf = np.empty(max(n, 1) + 1, np.int32)
    n_func = 0
    for i in range(n):
        if func[i] + 1 > n_func:
            n_func = func[i] + 1
    leaf_node = np.full(n_func, -1, np.int32)  # most calls are leaves: their node by function
    for i in range(n - 1, -1, -1):
        if end_index[i] == i + 1 and leaf_node[func[i]] >= 0:
            node[i] = leaf_node[func[i]]
            continue
        if 2 * (n_nodes + 1) > tsize:
            tsize *= 2
            table, tmask = rehashed(hashes, n_nodes, tsize)
        m, h = child_key(i, func, end_index, node, buf, seed)
        slot, found = find_key(table, tmask, hashes, kptr, keys, h, buf, m)
        if found < 0:
            if n_nodes == hashes.shape[0]:
                hashes, kptr = keys_grown(hashes, kptr, n_nodes)
            found = n_nodes
            keys, n_keys = store_new_key(table, slot, hashes, h, kptr, keys, n_keys, found, buf, m)
            n_nodes += 1
        node[i] = found
        if m == 1:
            leaf_node[func[i]] = found
    return node, kptr[: n_nodes + 1].copy(), keys[:n_keys].copy()


@njit(cache=True, nogil=True)
def dag_node_sizes(node_ptr, node_keys, n_func, cap):
    """Calls in one instance of each node, size(k) = 1 + Σ size(child), and the
    height of each node (a leaf has height 0), in one pass over the nodes in id
    order (children first).  Checks every node while it goes; sizes saturate at
    ``cap + 1`` so a hostile DAG that doubles at every level (2^60 calls in 60
    nodes) cannot overflow.  Returns ``(size, height, code, bad_node)``; ``code``
    is one of DAG_* (0 when the DAG is well formed)."""
    n_nodes = node_ptr.shape[0] - 1
    size = np.zeros(max(n_nodes, 0), np.int64)
    height = np.zeros(max(n_nodes, 0), np.int64)
    for k in range(n_nodes):
        a = node_ptr[k]
        b = node_ptr[k + 1]
        if a < 0 or b <= a or b > node_keys.shape[0]:
            return size, height, DAG_BAD_PTR, k
        f = node_keys[a]
        if f < 0 or f >= n_func:
            return size, height, DAG_BAD_FUNC, k
        s = np.int64(1)
        h = np.int64(0)
        for j in range(a + 1, b):
            c = node_keys[j]
            if c < 0 or c >= k:
                return size, height, DAG_BAD_CHILD, k
            s += size[c]
            if s > cap:
                s = cap + 1
            if height[c] + 1 > h:
                h = height[c] + 1
        size[k] = s
        height[k] = h
    return size, height, DAG_OK, -1


@njit(cache=True, nogil=True)
def expand_dag(node_ptr, node_keys, size, height, roots, roots_per_thread, n):
    """The Trace arrays of the forest whose roots (in thread order) are the DAG
    nodes ``roots``: a depth-first pre-order walk with an explicit stack of
    ``max height + 1`` entries, so deep chains never recurse.  Returns
    ``(func, parent, depth, end_index, thread, node)``; ``n`` must equal
    Σ size(root) (the caller checks it)."""
    func = np.empty(n, np.int32)
    parent = np.empty(n, np.int32)
    depth = np.empty(n, np.int32)
    end_index = np.empty(n, np.int32)
    thread = np.empty(n, np.int32)
    node = np.empty(n, np.int32)
    hmax = 0
    for r in range(roots.shape[0]):
        if height[roots[r]] > hmax:
            hmax = height[roots[r]]
    stk_node = np.empty(hmax + 1, np.int64)
    stk_call = np.empty(hmax + 1, np.int64)
    stk_next = np.empty(hmax + 1, np.int64)
    pos = 0
    r = 0
    for t in range(roots_per_thread.shape[0]):
        for _ in range(roots_per_thread[t]):
            k = roots[r]
            r += 1
            func[pos] = node_keys[node_ptr[k]]
            parent[pos] = -1
            depth[pos] = 0
            end_index[pos] = pos + size[k]
            thread[pos] = t
            node[pos] = k
            top = 0
            stk_node[0] = k
            stk_call[0] = pos
            stk_next[0] = node_ptr[k] + 1
            pos += 1
            while top >= 0:
                k = stk_node[top]
                j = stk_next[top]
                if j < node_ptr[k + 1]:
                    stk_next[top] = j + 1
                    c = node_keys[j]
                    func[pos] = node_keys[node_ptr[c]]
                    parent[pos] = stk_call[top]
                    depth[pos] = top + 1
                    end_index[pos] = pos + size[c]
                    thread[pos] = t
                    node[pos] = c
                    top += 1
                    stk_node[top] = c
                    stk_call[top] = pos
                    stk_next[top] = node_ptr[c] + 1
                    pos += 1
                else:
                    top -= 1
    return func, parent, depth, end_index, thread, node


@njit(cache=True, nogil=True)
def node_first_call(node, n_nodes):
    """A representative call of every node (its first call in trace order) and the
    number of calls that are instances of it.  O(n)."""
    first = np.full(n_nodes, -1, np.int64)
    count = np.zeros(n_nodes, np.int64)
    for i in range(node.shape[0]):
        k = node[i]
        if first[k] < 0:
            first[k] = i
        count[k] += 1
    return first, count
