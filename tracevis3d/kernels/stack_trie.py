"""Stacks kept as a trie (a parent array): every walk linear in the trie, never stacks × depth.

A trie here is ``parent`` (int64 per node, -1 for a root; every parent numbered before its
children: ``parent[k] < k``) and ``label`` (a frame per node).  A stack is a node and a length:
the first ``length`` nodes of the chain from that node through its parents (innermost first).
Walking every stack from its node to the root costs the sum of the stacks' depths, which a
capture of a few hundred kB makes 10^9 (thousands of stacks sharing one 10^5-frame prefix,
issue 78); these kernels visit each node a bounded number of times instead (a trie of the
frames' paths: Knuth, TAOCP vol. 3, 6.3; the memo per node is the usual dynamic programme over
a forest in topological order).
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def trie_depths(parent):
    """Per node its depth (1 for a root): ``depth[k] = depth[parent[k]] + 1``, one forward pass
    (parents come first)."""
    n = parent.shape[0]
    depth = np.ones(n, np.int64)
    for k in range(n):
        p = parent[k]
        if p >= 0:
            depth[k] = depth[p] + 1
    return depth


@njit(cache=True, nogil=True)
def first_seen_labels(parent, label, stack_node, stack_len, n_labels):
    """The labels in the order a walk of every stack meets them first (stack order, each stack
    innermost first): ``(rank, order)``, ``rank[l]`` the place of label ``l`` (-1: on no stack),
    ``order`` the labels met, in that order.

    Each node remembers how many frames from it up have been walked (``walked``); a stack's walk
    stops at a node walked at least as far before, whose frames were all met then.  So the result
    is that of the full walk of every stack, at the cost of the nodes walked: a node is walked
    again only for a longer length, and the lengths a node is reached with are its depth less the
    few frames a reader leaves off the top of a stack (memray's skipped frames)."""
    n = parent.shape[0]
    walked = np.zeros(n, np.int64)
    rank = np.full(n_labels, -1, np.int64)
    order = np.empty(n_labels, np.int64)
    k = 0
    for s in range(stack_node.shape[0]):
        x = stack_node[s]
        r = stack_len[s]
        while x >= 0 and r > 0 and walked[x] < r:
            walked[x] = r
            lab = label[x]
            if rank[lab] < 0:
                rank[lab] = k
                order[k] = lab
                k += 1
            x = parent[x]
            r -= 1
    return rank, order[:k]


@njit(cache=True, nogil=True)
def stacks_touching(parent, hit, stack_node, stack_len):
    """Per stack: whether any of its nodes (its first ``stack_len`` from ``stack_node`` up) has
    ``hit``.  One forward pass gives each node the depth of the deepest hit node on its chain
    (0: none); a stack of node ``x`` and length ``L`` holds the nodes deeper than
    ``depth[x] - L``."""
    n = parent.shape[0]
    depth = np.ones(n, np.int64)
    near = np.zeros(n, np.int64)
    for k in range(n):
        p = parent[k]
        if p >= 0:
            depth[k] = depth[p] + 1
            near[k] = near[p]
        if hit[k]:
            near[k] = depth[k]
    out = np.zeros(stack_node.shape[0], np.bool_)
    for s in range(stack_node.shape[0]):
        x = stack_node[s]
        if x >= 0 and stack_len[s] > 0:
            out[s] = near[x] > depth[x] - stack_len[s]
    return out
