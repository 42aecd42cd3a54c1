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
def recursive_in_run(func, idx, parent, a, b, infra, n_funcs):
    """`recursion_depth` over the shown calls a..b-1, a run of whole trees (shown call j is call
    ``idx[j]`` of function ``func[idx[j]]``, its parent the shown call ``parent[j]``; one
    before a: none), read where they lie: ``(deep, outer)``, the shown calls j (ascending)
    with ``rec`` > 1 whose function is not the runtime's (``infra[f]``; an empty ``infra``:
    none left out), and the outermost call of each one's chain.  The open calls' function,
    ``rec`` and ``outer`` are kept on the stack only (`layout.recursion.recursive_calls`: no
    gathered functions, shifted parents or arrays of rec and outer over the run)."""
    m = b - a
    stack = np.empty(m, np.int64)     # the open calls (positions in the run), outermost first
    replaced = np.empty(m, np.int64)  # the nearest open call of its function before each push
    s_func = np.empty(m, np.int64)
    s_rec = np.empty(m, np.int64)
    s_outer = np.empty(m, np.int64)
    nearest = np.full(max(n_funcs, 1), -1, np.int64)  # stack position per function
    deep = np.empty(m, np.int64)
    outer = np.empty(m, np.int64)
    use_infra = infra.shape[0] > 0
    nd = 0
    top = 0
    for i in range(m):
        p = parent[a + i] - a
        if p < 0:
            p = -1
        while top > 0 and stack[top - 1] != p:  # back to the caller: the calls that ended
            top -= 1
            nearest[s_func[top]] = replaced[top]
        f = func[idx[a + i]]
        k = nearest[f]
        r = 1
        o = i
        if k >= 0:
            r = s_rec[k] + 1
            o = s_outer[k]
        stack[top] = i
        replaced[top] = k
        s_func[top] = f
        s_rec[top] = r
        s_outer[top] = o
        nearest[f] = top
        top += 1
        if r > 1 and not (use_infra and infra[f]):
            deep[nd] = i + a
            outer[nd] = o + a
            nd += 1
    return deep[:nd].copy(), outer[:nd].copy()


@njit(cache=True, nogil=True)
def running_max_by_segment(values, first):
    """Running maximum of ``values`` that restarts where ``first`` (bool) is set: out[i] =
    max(values[j] for j in [s, i]), s the last index <= i with first[s] (s = 0 if none)."""
    out = np.empty(values.shape[0], values.dtype)
    for i in range(values.shape[0]):
        out[i] = values[i] if first[i] or i == 0 else max(out[i - 1], values[i])
    return out
