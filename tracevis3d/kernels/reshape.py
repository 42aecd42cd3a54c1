"""Reshaping the call tree: removing calls and promoting their children.

Firefox Profiler's "merge function" transform: a hidden call disappears and its children
take its place under its parent.  In depth-first pre-order this keeps the order of the
remaining calls (a pre-order with some nodes deleted is the pre-order of the tree in which
each deleted node's children are attached to its nearest kept ancestor).
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always")
def kept_ancestor_step(parent, hidden, up, i):
    """up[i] of `nearest_kept_ancestor`, its parent's up[] known: -1 for a root, else the
    parent p if p is kept, else up[p]."""
    p = parent[i]
    if p < 0:
        up[i] = -1
    elif hidden[p]:
        up[i] = up[p]
    else:
        up[i] = p


@njit(cache=True, nogil=True)
def nearest_kept_ancestor(parent, hidden):
    """For every call, its nearest strict ancestor that is not hidden (-1 if none).

    up[i] = -1 for a root; else parent p if p is kept, else up[p] (one pre-order sweep,
    parents before children, so every call costs O(1): `kept_ancestor_step`).
    """
    n = parent.shape[0]
    up = np.empty(n, np.int32)
    for i in range(n):
        kept_ancestor_step(parent, hidden, up, i)
    return up
