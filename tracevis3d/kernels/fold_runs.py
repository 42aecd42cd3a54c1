"""`kernels.runs.sibling_runs` with 4-byte indices and counts (the fold's runs of repeated
siblings over a 10^8-call overview: 20 bytes a call, not 32).

Call i continues the run of its previous sibling j (the previous child of the same parent, or
the previous root of the same lane) when func[i] == func[j] and start[i] - end[j] <=
max_gap[lane[i]]; otherwise it starts a run.  Calls in per-thread depth-first pre-order, fewer
than 2^31 of them.
"""
import numpy as np
from numba import njit

from .runs import dominant_child, runs_into


@njit(cache=True, nogil=True)
def sibling_runs32(func, start, end, parent, lane, max_gap):
    """``(head, run_end, run_count)`` as `kernels.runs.sibling_runs` gives them, ``head`` and
    ``run_count`` int32: ``head[i]`` the first call of i's run; for heads, the end of the
    run's last call and its number of calls (0 elsewhere)."""
    n = func.shape[0]
    return runs_into(np.empty(n, np.int32), np.zeros(n, np.int32), func, start, end, parent, lane, max_gap)


@njit(cache=True, nogil=True)
def _grow_rows(cap, n_children, row_start, row_end, dom_func, dom_time, dom_count, total, calls):
    m = 2 * cap
    out = (np.empty(m, np.int64), np.empty(m, np.float64), np.empty(m, np.float64), np.empty(m, np.int64),
           np.empty(m, np.float64), np.empty(m, np.int64), np.empty(m, np.float64), np.empty(m, np.int64))
    out[0][:cap] = n_children
    out[1][:cap] = row_start
    out[2][:cap] = row_end
    out[3][:cap] = dom_func
    out[4][:cap] = dom_time
    out[5][:cap] = dom_count
    out[6][:cap] = total
    out[7][:cap] = calls
    return out


@njit(cache=True, nogil=True, _nrt=False)
def _rows_run(p0, m, parent, end_index, head, func, start, end, width_px, run_end, us_per_px, row_share, named_px,
              name_px, row_named, acc, cnt, touched, r_n, r_s, r_e, r_df, r_dt, r_dc, r_t, r_c):
    """`rows_and_name_widths`' calls from ``p0`` on, ``m`` named rows kept so far, until every
    call is read or the rows' arrays are full before a call (the call is left for the caller,
    which grows them: `_grow_rows`).  Rebinds no array and counts no reference (a loop that may
    rebind one raises and drops every such array's count on every pass).  Returns (the next
    call, rows kept)."""
    n = parent.shape[0]
    cap = r_n.shape[0]
    for p in range(p0, n):
        if m == cap:
            return p, m
        if parent[p] < 0:  # a root: itself or its run (no parent's row)
            h = head[p]
            name_px[p] = max(width_px[p], (run_end[h] - start[h]) / us_per_px)
        c = p + 1
        if c >= end_index[p]:
            continue
        nc, rs, re_, tot, best, dt, dc = dominant_child(p, func, start, end, end_index, acc, cnt, touched)
        dominated = nc >= 2 and dt >= row_share * max(tot, 1e-300)
        row_px = (re_ - rs) / us_per_px
        # its children's widths: themselves, their runs, and this row where they are of its function
        c = p + 1
        while c < end_index[p]:
            h = head[c]
            w = max(width_px[c], (run_end[h] - start[h]) / us_per_px)
            if dominated and func[c] == best:
                w = max(w, row_px)
            name_px[c] = w
            c = end_index[c]
        if dominated and row_px >= named_px:
            row_named[p] = True
            r_n[m], r_s[m], r_e[m], r_df[m], r_dt[m], r_dc[m], r_t[m], r_c[m] = nc, rs, re_, best, dt, dc, tot, p
            m += 1
    return n, m


@njit(cache=True, nogil=True)
def rows_and_name_widths(parent, end_index, head, func, start, end, width_px, run_end, n_func, us_per_px, row_share,
                         named_px):
    """`kernels.runs.child_rows` and `kernels.runs.name_widths` of the same calls in one pass,
    without the rows' seven arrays over every call: ``(name_px, row_named, rows, row_calls)``,
    ``rows`` the seven row arrays (n_children, row_start, row_end, dom_func, dom_time,
    dom_count, total: their dtypes) at the calls whose row is named (``row_calls``, ascending).
    Call p's children are visited when p is (its row, then its children's widths from it); the
    same additions in the same order, the same comparisons: the values of the two kernels.
    The calls are read by `_rows_run`; here, between its runs, the rows' arrays grow."""
    n = parent.shape[0]
    name_px = np.empty(n, np.float64)
    row_named = np.zeros(n, np.bool_)
    acc = np.zeros(max(n_func, 1), np.float64)
    cnt = np.zeros(max(n_func, 1), np.int64)
    touched = np.empty(max(n_func, 1), np.int64)
    cap = 1024
    r_n, r_s, r_e, r_df, r_dt, r_dc, r_t, r_c = (np.empty(cap, np.int64), np.empty(cap, np.float64),
                                                 np.empty(cap, np.float64), np.empty(cap, np.int64),
                                                 np.empty(cap, np.float64), np.empty(cap, np.int64),
                                                 np.empty(cap, np.float64), np.empty(cap, np.int64))
    p = m = 0
    while True:
        p, m = _rows_run(p, m, parent, end_index, head, func, start, end, width_px, run_end, us_per_px, row_share,
                         named_px, name_px, row_named, acc, cnt, touched, r_n, r_s, r_e, r_df, r_dt, r_dc, r_t, r_c)
        if p >= n:
            break
        r_n, r_s, r_e, r_df, r_dt, r_dc, r_t, r_c = _grow_rows(cap, r_n, r_s, r_e, r_df, r_dt, r_dc, r_t, r_c)
        cap *= 2
    rows = (r_n[:m].copy(), r_s[:m].copy(), r_e[:m].copy(), r_df[:m].copy(), r_dt[:m].copy(), r_dc[:m].copy(),
            r_t[:m].copy())
    return name_px, row_named, rows, r_c[:m].copy()
