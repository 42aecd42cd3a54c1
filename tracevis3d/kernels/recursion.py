"""Recursion depth of every call: how many calls of its own function are open around it.

``rec[i]`` = 1 + the number of proper ancestors of call i whose function is call i's
(``rec`` 1: not recursive), and ``outer[i]`` the outermost of them (i itself when ``rec`` is
1): the call that opened the recursion.  A recursion through a cycle of functions
(``walk › <genexpr> › sum › walk``; json's encoder, ``_iterencode_dict › _iterencode_list``)
gives each function of the cycle its own chain.  This is the calling-context tree's
recursion folding (`kernels.cone.calling_context_tree`, after Ammons et al.'s CCT: a call
joins the node of the nearest open call of its function) counted per call.

O(n): calls in pre-order (a parent before its children), one stack of open calls and, per
function, the stack position of its nearest open call (`layout.recursion` names the towers
this finds).
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def recursion_depth(func, parent):
    """(rec, outer) per call of the forest ``parent`` (pre-order, -1 for roots) whose
    function ids are ``func`` (see the module docstring)."""
    n = func.shape[0]
    rec = np.ones(n, np.int32)
    outer = np.arange(n).astype(np.int64)
    stack = np.empty(n, np.int64)        # the open calls, outermost first
    replaced = np.empty(n, np.int64)     # the nearest open call of its function before each push
    nearest = np.full(int(func.max()) + 1 if n else 1, -1, np.int64)  # stack position per function
    top = 0
    for i in range(n):
        p = parent[i]
        while top > 0 and stack[top - 1] != p:  # back to the caller: the calls that ended
            top -= 1
            nearest[func[stack[top]]] = replaced[top]
        f = func[i]
        k = nearest[f]
        if k >= 0:
            a = stack[k]
            rec[i] = rec[a] + 1
            outer[i] = outer[a]
        stack[top] = i
        replaced[top] = k
        nearest[f] = top
        top += 1
    return rec, outer


@njit(cache=True, nogil=True)
def running_max_by_segment(values, first):
    """Running maximum of ``values`` that restarts where ``first`` (bool) is set: out[i] =
    max(values[j] for j in [s, i]), s the last index <= i with first[s] (s = 0 if none)."""
    out = np.empty(values.shape[0], values.dtype)
    for i in range(values.shape[0]):
        out[i] = values[i] if first[i] or i == 0 else max(out[i - 1], values[i])
    return out
