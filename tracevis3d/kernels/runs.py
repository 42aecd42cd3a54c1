"""Runs of repeated calls: consecutive siblings of the same function.

A loop that calls ``Element.__init__`` fifty times leaves fifty adjacent boxes under one
parent, each too narrow to be named; together they are one wide *run* that a figure can
name once ("50× docutils.nodes.Element.__init__").  Runs are found on the calls in
per-thread depth-first pre-order (the `Trace` order).
"""
import numpy as np
from numba import njit

from .grow import room_for


@njit(cache=True, nogil=True)
def sibling_runs(func, start, end, parent, lane, max_gap):
    """Group consecutive siblings of the same function into runs.

    Call i continues the run of its previous sibling j (the previous child of the same
    parent, or the previous root of the same lane) when func[i] == func[j] and
    start[i] - end[j] <= max_gap[lane[i]]; otherwise it starts a run.
    Returns ``(head, run_end, run_count)``: ``head[i]`` the first call of i's run; for
    heads, the end of the run's last call and its number of calls (0 elsewhere).
    """
    n = func.shape[0]
    return runs_into(np.empty(n, np.int64), np.zeros(n, np.int64), func, start, end, parent, lane, max_gap)


@njit(cache=True, nogil=True)
def runs_into(head, run_count, func, start, end, parent, lane, max_gap):
    """`sibling_runs` with the caller's ``head`` and ``run_count`` (zeros), whose dtype sets
    the indices' (`sibling_runs`' int64, `kernels.fold_runs.sibling_runs32`'s int32): call i
    continues the run of its previous sibling j when func[i] == func[j] and
    start[i] - end[j] <= max_gap[lane[i]].  Returns ``(head, run_end, run_count)``."""
    n = func.shape[0]
    run_end = np.zeros(n, np.float64)
    last_child = np.full(n, -1, head.dtype)
    last_root = np.full(room_for(lane, 1, 1), -1, np.int64)
    for i in range(n):
        p = parent[i]
        j = last_child[p] if p >= 0 else last_root[lane[i]]
        if j >= 0 and func[j] == func[i] and start[i] - end[j] <= max_gap[lane[i]]:
            h = head[j]
        else:
            h = i
        head[i] = h
        run_count[h] += 1
        if end[i] > run_end[h]:
            run_end[h] = end[i]
        if p >= 0:
            last_child[p] = i
        else:
            last_root[lane[i]] = i
    return head, run_end, run_count


@njit(cache=True, nogil=True)
def child_rows(func, start, end, end_index, n_func):
    """The row of children under every call: its extent and its dominant function.

    The children of call i are i+1, end_index[i+1], ... (pre-order, ``end_index`` one past
    each subtree).  For each call with children: ``n_children``; the row's extent
    [start of the first child, end of the last child]; the function whose children take
    the most time (``dom_func``), that time and how many children call it, and the total
    time of all children.  Every call is visited once as a child: O(n + distinct
    functions per row).
    """
    n = func.shape[0]
    n_children = np.zeros(n, np.int64)
    row_start = np.zeros(n, np.float64)
    row_end = np.zeros(n, np.float64)
    dom_func = np.full(n, -1, np.int64)
    dom_time = np.zeros(n, np.float64)
    dom_count = np.zeros(n, np.int64)
    total = np.zeros(n, np.float64)
    acc = np.zeros(max(n_func, 1), np.float64)
    cnt = np.zeros(max(n_func, 1), np.int64)
    touched = np.empty(max(n, 1), np.int64)
    for p in range(n):
        if p + 1 >= end_index[p]:
            continue
        n_children[p], row_start[p], row_end[p], total[p], dom_func[p], dom_time[p], dom_count[p] = \
            dominant_child(p, func, start, end, end_index, acc, cnt, touched)
    return n_children, row_start, row_end, dom_func, dom_time, dom_count, total


@njit(cache=True, nogil=True, inline="always")
def dominant_child(p, func, start, end, end_index, acc, cnt, touched):
    """The row of call p's children (p + 1, end_index[p + 1], ...; at least one):
    ``(n_children, row_start, row_end, total, dom_func, dom_time, dom_count)``: how many,
    the first child's start, the last child's end, the sum of (end - start) over them, and
    the function whose children take the most time (the first met on ties), that time and
    its number of children.  ``acc`` and ``cnt`` (one a function) are zero on entry and
    on return; ``touched`` holds the functions met (scratch)."""
    c = p + 1
    rs = start[c]
    re_ = 0.0
    tot = 0.0
    nc = 0
    nt = 0
    while c < end_index[p]:
        f = func[c]
        d = end[c] - start[c]
        if cnt[f] == 0:
            touched[nt] = f
            nt += 1
        acc[f] += d
        cnt[f] += 1
        tot += d
        nc += 1
        re_ = end[c]
        c = end_index[c]
    best = -1
    for k in range(nt):
        f = touched[k]
        if best < 0 or acc[f] > acc[best]:
            best = f
    dt, dc = acc[best], cnt[best]
    for k in range(nt):
        f = touched[k]
        acc[f] = 0.0
        cnt[f] = 0
    return nc, rs, re_, tot, best, dt, dc


@njit(cache=True, nogil=True)
def name_widths(parent, func, start, width_px, head, run_end, n_children, row_start, row_end, dom_func, dom_time,
                total, us_per_px, row_share, named_px):
    """The widest thing that can carry each call's name, in pixels, and which rows are named.

    With `sibling_runs` (``head``, ``run_end``) and `child_rows` (the row arrays) of the
    same calls, ``u`` = ``us_per_px``:

    - a row is *dominated* when it has at least 2 calls and ``dom_time ≥ row_share ·
      total``; ``row_px[i] = (row_end[i] − row_start[i]) / u``;
      ``row_named[i]`` = dominated and ``row_px[i] ≥ named_px``;
    - ``run_px[i] = (run_end[h] − start[h]) / u`` for i's run head h;
    - ``parent_row_px[i] = row_px[p]`` when i's parent p has a dominated row and i is of
      its dominant function (the row "120× Body.paragraph" carries those calls' names, not
      their siblings'), else 0;
    - ``name_px[i] = max(width_px[i], run_px[i], parent_row_px[i])``.

    Returns ``(name_px, row_named)`` (one pass; the fold's input, `layout.fold.fold_levels`)."""
    n = parent.shape[0]
    name_px = np.empty(n, np.float64)
    row_named = np.empty(n, np.bool_)
    for i in range(n):
        h = head[i]
        w = max(width_px[i], (run_end[h] - start[h]) / us_per_px)
        p = parent[i]
        if p >= 0 and n_children[p] >= 2 and dom_time[p] >= row_share * max(total[p], 1e-300) \
                and func[i] == dom_func[p]:
            w = max(w, (row_end[p] - row_start[p]) / us_per_px)
        name_px[i] = w
        row_named[i] = n_children[i] >= 2 and dom_time[i] >= row_share * max(total[i], 1e-300) and \
            (row_end[i] - row_start[i]) / us_per_px >= named_px
    return name_px, row_named
