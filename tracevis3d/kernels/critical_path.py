"""The critical path across threads: the backward walk and the innermost-call timeline.

The model (`tracevis3d.analysis.critical_path` states it in full): each thread's timeline runs
from the run's first timestamp T0 to its last T1; a *waiting interval* of thread T (an
outermost wait call, or time between its calls) may have a known *waker*: a hand-off from a
release on thread U at time ``tr`` to T's wake time ``we`` (the interval's end), with
``ws <= tr <= we``.  The graph has program-order edges along each thread (weight: the time
elapsed, except the blocked part of a woken wait: from the later of its start and the thread's
own last release inside it, to its end, weight 0) and one edge per hand-off (weight
``we - tr``).  Every edge's weight is at most the time it spans, so no path weighs more than
T1 - T0; the walk below finds one that weighs exactly that (a longest path):

    T = the thread whose last call ends last, t = T1
    loop: the latest woken interval of T with we <= t not used yet (each is used once)
          found:  piece (T, we, t); hand-off (U -> T, tr, we); T, t = U, tr
          none:   piece (T, T0, t); stop

Time never moves forward (tr <= we <= t) and each interval is taken at most once, so the walk
ends after at most as many steps as there are woken intervals, even where timestamps are
equal.  The pieces and hand-offs tile [T0, T1] without gaps or overlaps.  This is the walk
Perfetto's thread-state critical path and HTA's ``critical_path_analysis`` both compute over
their own graphs (HTA: the longest path of its CPU-operator / GPU-kernel DAG with networkx).
The tests' twin builds the graph explicitly and checks the walk's path is a longest one.
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def innermost_timeline(start, end, thread_lo, thread_hi, t0, t1):
    """Per thread k (calls ``[thread_lo[k], thread_hi[k])`` in pre-order), the intervals on
    which its innermost active call is constant, tiling [t0, t1]: (ptr, a, b, call) with the
    intervals of thread k at ``[ptr[k], ptr[k+1])``, ``call`` -1 where the thread is in no
    call.  A stack sweep of the pre-order: before call i starts, the calls on the stack that
    end by ``start[i]`` are closed (each closing ends an interval of the call on top), then
    the interval up to ``start[i]`` belongs to the call on top (or none).  A child that
    sticks out of its parent is cut at the parent's end (times only grow: ``cursor``).  At
    most 2 n + 2 intervals per thread; empty ones are not written."""
    nt = thread_lo.shape[0]
    n_all = 0
    for k in range(nt):
        n_all += 2 * (thread_hi[k] - thread_lo[k]) + 2
    a_out = np.empty(n_all, np.float64)
    b_out = np.empty(n_all, np.float64)
    c_out = np.empty(n_all, np.int32)
    ptr = np.zeros(nt + 1, np.int64)
    m = 0
    stack = np.empty(max(1, n_all), np.int64)
    for k in range(nt):
        lo = thread_lo[k]
        hi = thread_hi[k]
        cursor = t0
        sp = 0
        for i in range(lo, hi + 1):
            s = t1 if i == hi else start[i]
            if s > t1:
                s = t1
            while sp > 0 and (i == hi or end[stack[sp - 1]] <= s):
                top = stack[sp - 1]
                sp -= 1
                e = end[top]
                if e > t1:
                    e = t1
                if e > cursor:
                    a_out[m] = cursor
                    b_out[m] = e
                    c_out[m] = top
                    m += 1
                    cursor = e
            if s > cursor:
                a_out[m] = cursor
                b_out[m] = s
                c_out[m] = stack[sp - 1] if sp > 0 else -1
                m += 1
                cursor = s
            if i < hi:
                stack[sp] = i
                sp += 1
        ptr[k + 1] = m
    return ptr, a_out[:m].copy(), b_out[:m].copy(), c_out[:m].copy()


@njit(cache=True, nogil=True)
def backward_walk(iv_ptr, iv_we, iv_tr, iv_from, end_thread, t_first, t_last):
    """The walk of the module docstring.  Woken intervals of thread k are rows
    ``[iv_ptr[k], iv_ptr[k+1])``, sorted by wake time ``iv_we`` (ties: program order);
    ``iv_tr`` the release time, ``iv_from`` the releasing thread.  Returns, in time order,
    the pieces on threads (thread, a, b) and the interval row taken after each piece (-1
    after the last): piece j is followed by hand-off ``taken[j]`` from ``b[j]`` (its release)
    to ``a[j + 1]`` (its wake)."""
    nt = iv_ptr.shape[0] - 1
    n_iv = iv_we.shape[0]
    pos = iv_ptr[1:].copy()  # per thread: rows below pos are not used yet
    p_thread = np.empty(n_iv + 1, np.int32)
    p_a = np.empty(n_iv + 1, np.float64)
    p_b = np.empty(n_iv + 1, np.float64)
    taken = np.empty(n_iv + 1, np.int64)
    T = end_thread
    t = t_last
    m = 0
    while True:
        p = pos[T]
        lo = iv_ptr[T]
        while p > lo and iv_we[p - 1] > t:
            p -= 1
        p_thread[m] = T
        p_b[m] = t
        if p > lo:
            j = p - 1
            pos[T] = j
            p_a[m] = iv_we[j]
            taken[m] = j
            m += 1
            t = iv_tr[j]
            T = iv_from[j]
            if T < 0 or T >= nt:  # no releasing thread: cannot happen for a well-formed table
                break
        else:
            pos[T] = p
            p_a[m] = t_first
            taken[m] = -1
            m += 1
            break
    # reverse into time order: piece j then the hand-off that woke piece j + 1
    out_t = np.empty(m, np.int32)
    out_a = np.empty(m, np.float64)
    out_b = np.empty(m, np.float64)
    out_h = np.empty(m, np.int64)
    for j in range(m):
        r = m - 1 - j
        out_t[j] = p_thread[r]
        out_a[j] = p_a[r]
        out_b[j] = p_b[r]
        out_h[j] = taken[r - 1] if r > 0 else -1
    return out_t, out_a, out_b, out_h


@njit(cache=True, nogil=True)
def split_pieces(p_thread, p_a, p_b, p_handoff, tl_ptr, tl_a, tl_b, tl_call):
    """The path's segments in time order: each piece (thread, a, b) cut where its thread's
    innermost call changes (`innermost_timeline`: a binary search for ``a``, then the
    intervals up to ``b``), each followed by its hand-off (``p_handoff[j] >= 0``: a segment
    of kind -2 from the piece's end to the next piece's start).  Returns (thread, a, b,
    call, handoff): ``handoff`` the interval row for hand-off segments, else -1; empty
    pieces are not written (a hand-off is, even when it takes no time)."""
    n_p = p_thread.shape[0]
    cap = 0
    for j in range(n_p):
        k = p_thread[j]
        cap += tl_ptr[k + 1] - tl_ptr[k] + 2
    s_t = np.empty(cap, np.int32)
    s_a = np.empty(cap, np.float64)
    s_b = np.empty(cap, np.float64)
    s_c = np.empty(cap, np.int32)
    s_h = np.empty(cap, np.int64)
    m = 0
    for j in range(n_p):
        k = p_thread[j]
        a = p_a[j]
        b = p_b[j]
        lo = tl_ptr[k]
        hi = tl_ptr[k + 1]
        # first interval whose end is past a
        x = lo + np.searchsorted(tl_b[lo:hi], a, side="right")
        while x < hi and a < b:
            e = tl_b[x]
            if e > b:
                e = b
            if e > a:
                s_t[m] = k
                s_a[m] = a
                s_b[m] = e
                s_c[m] = tl_call[x]
                s_h[m] = -1
                m += 1
                a = e
            x += 1
        if a < b:  # past the thread's timeline (cannot happen when it tiles [t0, t1])
            s_t[m] = k
            s_a[m] = a
            s_b[m] = b
            s_c[m] = -1
            s_h[m] = -1
            m += 1
        h = p_handoff[j]
        if h >= 0:
            s_t[m] = -2
            s_a[m] = p_b[j]
            s_b[m] = p_a[j + 1]
            s_c[m] = -1
            s_h[m] = h
            m += 1
    return s_t[:m].copy(), s_a[:m].copy(), s_b[:m].copy(), s_c[:m].copy(), s_h[:m].copy()
