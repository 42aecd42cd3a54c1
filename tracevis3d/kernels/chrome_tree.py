"""Kernels that turn Chrome begin/end events into call intervals.

The repair rules follow what careful peers do (speedscope's trace-event importer,
Perfetto's JSON importer, Catapult's trace model), written down here once:

* Events of a thread are taken in timestamp order (stable: file order breaks ties).
* ``E`` with no name, or whose name is the top of the stack: closes the top.
* ``E`` whose name is deeper in the stack: closes everything above it too
  (those calls were left open: counted as W_E_MISMATCH).
* ``E`` whose name is not on the stack (or an empty stack): held back until the
  timestamp changes, because a ``B`` of that name at the same timestamp may follow
  in the file (zero-length calls written end-first); if one comes, it becomes a
  zero-length call, otherwise the ``E`` is dropped (W_E_UNMATCHED).
* ``B`` never closed: closed at the thread's last timestamp (W_UNCLOSED).
"""
import threading

import numpy as np
from numba import njit

from .repairs import note
from .tree import common_depth, group_by_key, open_depth

W_E_MISMATCH = 0
W_E_UNMATCHED = 1
W_UNCLOSED = 2
N_BE_WARN = 3


@njit(cache=True, nogil=True)
def match_begin_end(thread, ts, is_begin, name, thread_last_ts):
    """Pair B/E events sorted by (thread, ts, file order) into intervals, by the
    rules of the module docstring.

    Returns (b_index, start, end, warn_count, warn_first) where ``b_index`` is
    the position (in the given arrays) of the B event of each interval, and
    ``warn_first[w]`` the position of the first event that triggered warning w.

    O(n): each name (``name`` ids >= -1; -1 is "no name") keeps the stack
    position of its topmost open B (each stack slot links to the slot below it
    with the same name), so an E finds its target without scanning the stack;
    the held-back E events form one queue per name (first held back, first
    matched), so a B finds its zero-length partner without scanning them.
    """
    n = ts.shape[0]
    n_keys = 1
    for k in range(n):
        if name[k] + 2 > n_keys:
            n_keys = name[k] + 2
    out_b = np.empty(n, np.int64)
    out_s = np.empty(n, np.float64)
    out_e = np.empty(n, np.float64)
    m = 0
    stack = np.empty(max(n, 1), np.int64)
    below_same = np.empty(max(n, 1), np.int64)  # slot of the next lower open B of the same name
    top_of = np.full(n_keys, -1, np.int64)  # topmost stack slot per name key (name + 1)
    sp = 0
    pend = np.empty(max(n, 1), np.int64)  # held-back unmatched E positions, in file order
    alive = np.zeros(max(n, 1), np.bool_)
    pnext = np.empty(max(n, 1), np.int64)  # next held-back E of the same name
    phead = np.full(n_keys, -1, np.int64)  # first / last held-back E per name key
    ptail = np.full(n_keys, -1, np.int64)
    np_ = 0  # entries in pend (matched ones stay, dead)
    n_alive = 0
    pend_ts = np.nan
    warn_count = np.zeros(N_BE_WARN, np.int64)
    warn_first = np.full(N_BE_WARN, -1, np.int64)
    cur = -1
    for k in range(n + 1):
        new_thread = k == n or thread[k] != cur
        # expire held-back E events when the timestamp (or thread) moves on
        if n_alive > 0 and (new_thread or ts[k] != pend_ts):
            for q in range(np_):
                key = name[pend[q]] + 1
                phead[key] = -1
                ptail[key] = -1
                if alive[q]:
                    note(warn_count, warn_first, W_E_UNMATCHED, pend[q])
            np_ = 0
            n_alive = 0
        if new_thread:
            while sp > 0:
                sp -= 1
                b = stack[sp]
                top_of[name[b] + 1] = below_same[sp]
                out_b[m] = b
                out_s[m] = ts[b]
                out_e[m] = max(thread_last_ts[cur], ts[b])
                m += 1
                note(warn_count, warn_first, W_UNCLOSED, b)
            if k == n:
                break
            cur = thread[k]
        t = ts[k]
        key = name[k] + 1
        if is_begin[k]:
            # a held-back E of this name at this timestamp closes it at once
            q = phead[key]
            if q >= 0:
                out_b[m] = k
                out_s[m] = t
                out_e[m] = t
                m += 1
                alive[q] = False
                phead[key] = pnext[q]
                if pnext[q] < 0:
                    ptail[key] = -1
                n_alive -= 1
                if n_alive == 0:
                    np_ = 0  # every queue is empty again
            else:
                stack[sp] = k
                below_same[sp] = top_of[key]
                top_of[key] = sp
                sp += 1
            continue
        # an E event: the topmost open B of its name (or the top, for an E without a name)
        target = -1
        if sp > 0:
            target = sp - 1 if name[k] < 0 else top_of[key]
        if target < 0:
            if n_alive == 0:
                pend_ts = t
            pend[np_] = k
            alive[np_] = True
            pnext[np_] = -1
            if ptail[key] >= 0:
                pnext[ptail[key]] = np_
            else:
                phead[key] = np_
            ptail[key] = np_
            np_ += 1
            n_alive += 1
            continue
        if target < sp - 1:
            note(warn_count, warn_first, W_E_MISMATCH, k)
        while sp > target:
            sp -= 1
            b = stack[sp]
            top_of[name[b] + 1] = below_same[sp]
            out_b[m] = b
            out_s[m] = ts[b]
            out_e[m] = max(t, ts[b])
            m += 1
    return out_b[:m].copy(), out_s[:m].copy(), out_e[:m].copy(), warn_count, warn_first


@njit(cache=True, nogil=True)
def _bucket(x, a, scale, nb):
    """The bucket of time ``x`` among ``nb`` equal buckets from ``a`` (``scale``: buckets per unit),
    clamped to [0, nb): non-decreasing in ``x`` (rounding included)."""
    v = (x - a) * scale
    if not (v < nb):
        return nb - 1
    if not (v >= 0.0):
        return 0
    return int(v)


@njit(cache=True, nogil=True, inline="always")
def _first_start(call_start, lo, hi, ts, after):
    """The first index in [lo, hi) of sorted ``call_start`` whose start is at or after ``ts``
    (``after``: strictly after), ``hi`` when none: a binary search."""
    a = lo
    b = hi
    while a < b:
        mid = (a + b) // 2
        if call_start[mid] < ts or (after and call_start[mid] == ts):
            a = mid + 1
        else:
            b = mid
    return a


@njit(cache=True, nogil=True)
def thread_start_spans(call_thread, call_start, n_threads):
    """Per thread (``call_thread``: 0 .. n_threads-1, any order of the calls): its number of calls
    and its least and greatest start.  Returns (count, first, last)."""
    count = np.zeros(n_threads, np.int64)
    first = np.full(n_threads, np.inf)
    last = np.full(n_threads, -np.inf)
    for c in range(call_thread.shape[0]):
        t = call_thread[c]
        if t < 0 or t >= n_threads:
            continue
        count[t] += 1
        x = call_start[c]
        if x < first[t]:
            first[t] = x
        if x > last[t]:
            last[t] = x
    return count, first, last


@njit(cache=True, nogil=True)
def bucket_scales(count, first, last):
    """The buckets of `bind_index` from each thread's number of calls and first and last start
    (`thread_start_spans`): about 4 calls per bucket of equal time (``base[t]``: the thread's first
    bucket, ``base[t + 1] - base[t] - 1`` of them plus one end slot; ``t_a[t]``: its first start;
    ``t_scale[t]``: buckets per µs).  Returns (base, t_a, t_scale)."""
    n_threads = count.shape[0]
    base = np.zeros(n_threads + 1, np.int64)
    t_a = np.zeros(n_threads)
    t_scale = np.zeros(n_threads)
    for t in range(n_threads):
        m = count[t]
        base[t + 1] = base[t] + (max(1, m // 4) + 1 if m > 0 else 0)
        if m > 0:
            nb = base[t + 1] - base[t] - 1
            t_a[t] = first[t]
            t_scale[t] = nb / (last[t] - first[t]) if last[t] > first[t] else 0.0
    return base, t_a, t_scale


@njit(cache=True, nogil=True)
def bind_index(call_start, thread_lo, thread_hi):
    """The bucket index `bind_points` searches, over the calls sorted per thread (``thread_lo``,
    ``thread_hi``; starts ascending): the buckets of `bucket_scales` and ``idx[base[t] + q]``, the
    first call of the thread's bucket >= q.  Returns (base, idx, t_a, t_scale)."""
    n_threads = thread_lo.shape[0]
    count = thread_hi - thread_lo
    first = np.zeros(n_threads)
    last = np.zeros(n_threads)
    for t in range(n_threads):
        if count[t] > 0:
            first[t] = call_start[thread_lo[t]]
            last[t] = call_start[thread_hi[t] - 1]
    base, t_a, t_scale = bucket_scales(count, first, last)
    idx = np.empty(base[n_threads], np.int64)
    for t in range(n_threads):
        lo = thread_lo[t]
        hi = thread_hi[t]
        if hi <= lo:
            continue
        nb = base[t + 1] - base[t] - 1
        q = 0
        for c in range(lo, hi):
            bc = _bucket(call_start[c], t_a[t], t_scale[t], nb)
            while q <= bc:
                idx[base[t] + q] = c
                q += 1
        while q <= nb:
            idx[base[t] + q] = hi
            q += 1
    return base, idx, t_a, t_scale


@njit(cache=True, nogil=True)
def bucket_points(base, t_a, t_scale, f_thread, f_ts, f_next):
    """The flow points grouped by the bucket of `bucket_scales` (``base, t_a, t_scale``: those of
    `bind_index`) their time falls in (`tree.group_by_key`: a stable counting sort, file order
    within a bucket), so that `bind_bucketed` reads the calls of each bucket once, in order,
    instead of at random per point (10^6 points between random calls: 2x faster on one thread).
    A point on no thread, or on a thread without calls, goes to the last bucket ``base[-1]``
    (bound to none).  Returns ``(ptr, point, ts, nxt)``: bucket q's points are ``ptr[q] ..
    ptr[q + 1] - 1`` of the point numbers ``point``, their times ``ts`` and ``f_next`` flags
    ``nxt``."""
    n_threads = base.shape[0] - 1
    nq = base[n_threads]
    q_of = np.empty(f_ts.shape[0], np.int64)
    for k in range(f_ts.shape[0]):
        t = f_thread[k]
        q = nq
        if t >= 0 and t < n_threads and base[t + 1] > base[t]:
            q = base[t] + _bucket(f_ts[k], t_a[t], t_scale[t], base[t + 1] - base[t] - 1)
        q_of[k] = q
    point, ptr = group_by_key(q_of, nq + 1)
    return ptr, point, f_ts[point], f_next[point]


@njit(cache=True, nogil=True)
def bind_bucketed(call_start, call_end, call_parent, thread_lo, thread_hi, index, bucketed, q0, q1, out, budget):
    """`bind_flow_points` for the points of buckets ``q0 .. q1-1`` (`bucket_points`), bucket by
    bucket: a point's call is searched among its bucket's calls (a binary search: uneven times
    cost O(log n), never more), then up the parents of the last call started.  Writes ``out``
    at those points' numbers (-1: none).  Returns False when the walks up took more than
    ``budget`` steps (deep chains passed by many points): the caller then sweeps."""
    base, idx, t_a, t_scale = index
    ptr, point, pts, nxt = bucketed
    n_threads = thread_lo.shape[0]
    steps = 0
    t = 0
    for q in range(q0, q1):
        j0, j1 = ptr[q], ptr[q + 1]
        if j0 == j1:
            continue
        while t < n_threads and base[t + 1] <= q:
            t += 1
        if t >= n_threads:  # the last bucket: points on no thread with calls
            out[point[j0:j1]] = -1
            continue
        lo = thread_lo[t]
        hi = thread_hi[t]
        lo2 = idx[q]  # starts before lo2 are < the bucket's times, from hi2 on >
        hi2 = idx[q + 1]
        for j in range(j0, j1):
            ts = pts[j]
            k = point[j]
            out[k] = -1
            if nxt[j]:  # the first call starting at or after ts
                a = _first_start(call_start, lo2, hi2, ts, False)
                if a < hi:
                    out[k] = a
                    continue
            c = _first_start(call_start, lo2, hi2, ts, True) - 1  # the last call starting at or before ts
            while c >= lo and call_end[c] < ts:
                c = call_parent[c]
                steps += 1
            if steps > budget:
                return False
            if c >= lo:
                out[k] = c
    return True


@njit(cache=True, nogil=True)
def _bind_by_search(call_start, call_end, call_parent, thread_lo, thread_hi, f_thread, f_ts, f_next, budget):
    """`bind_bucketed` over every point on this thread.  Returns (bound, ok)."""
    out = np.full(f_ts.shape[0], -1, np.int32)
    index = bind_index(call_start, thread_lo, thread_hi)
    bucketed = bucket_points(index[0], index[2], index[3], f_thread, f_ts, f_next)
    ok = bind_bucketed(call_start, call_end, call_parent, thread_lo, thread_hi, index, bucketed, 0,
                       bucketed[0].shape[0] - 1, out, budget)
    return out, ok


@njit(cache=True, nogil=True)
def bind_flow_points(call_start, call_end, call_parent, thread_lo, thread_hi, f_thread, f_ts, f_next,
                     walk_budget=-1):
    """Bind flow points to calls (Chrome flow semantics).

    ``f_next[k]`` True: the first call on the thread starting at or after ts
    (a flow end without ``bp: "e"``), falling back to the enclosing call;
    otherwise the enclosing call: from the last call (in pre-order) starting at
    or before ts, the nearest ancestor-or-self ending at or after ts.  -1 when none.

    Bucket by bucket (`_bind_by_search`: the points grouped by time bucket in O(m), no sort)
    while the walks up the parents stay within ``walk_budget`` steps (-1: 4 per point + 1024;
    0: the sweep alone); past that, O(m log m + n): the enclosing-call queries are answered in (thread, ts) order
    by one sweep per thread that keeps the open ancestor chain of the last call
    started on a stack; a call that ended before a query's ts is popped for good
    (later queries are no earlier), so no parent chain is walked twice.  (Times that
    are NaN go to the sweep too: its answer for them is the reference.)
    """
    budget = 4 * f_ts.shape[0] + 1024 if walk_budget < 0 else walk_budget
    if budget > 0 and not np.isnan(f_ts).any():
        out, ok = _bind_by_search(call_start, call_end, call_parent, thread_lo, thread_hi, f_thread, f_ts,
                                  f_next, budget)
        if ok:
            return out
    n = f_ts.shape[0]
    out = np.full(n, -1, np.int32)
    n_threads = thread_lo.shape[0]
    need = np.zeros(n, np.bool_)
    for k in range(n):
        t = f_thread[k]
        if t < 0 or t >= n_threads:
            continue
        lo = thread_lo[t]
        hi = thread_hi[t]
        if hi <= lo:
            continue
        ts = f_ts[k]
        if f_next[k]:
            a2 = _first_start(call_start, lo, hi, ts, False)  # first call starting at or after ts
            if a2 < hi:
                out[k] = a2
                continue
        need[k] = True
    q_rows = np.flatnonzero(need)
    if q_rows.shape[0] == 0:
        return out
    by_ts = q_rows[np.argsort(f_ts[q_rows], kind="mergesort")]
    order, ptr = group_by_key(f_thread[by_ts], n_threads)
    stack = np.empty(max(call_start.shape[0], 1), np.int64)
    for t in range(n_threads):
        if ptr[t + 1] == ptr[t]:
            continue
        lo = thread_lo[t]
        hi = thread_hi[t]
        nxt = lo
        sp = 0
        for j in range(ptr[t], ptr[t + 1]):
            k = by_ts[order[j]]
            ts = f_ts[k]
            while nxt < hi and call_start[nxt] <= ts:
                p = call_parent[nxt]
                while sp > 0 and stack[sp - 1] > p:  # not an ancestor of nxt
                    sp -= 1
                stack[sp] = nxt
                sp += 1
                nxt += 1
            while sp > 0 and call_end[stack[sp - 1]] < ts:  # ended before ts: for good
                sp -= 1
            out[k] = stack[sp - 1] if sp > 0 else -1
    return out


#: flow points from which `bind_flow_points_threaded` splits the search over two threads
PARALLEL_BIND_POINTS = 1 << 16


def bucket_points_early(call_thread, call_start, n_threads, f_thread, f_ts, f_next):
    """`bucket_points` before the calls are sorted (``call_thread``, ``call_start``: any order;
    the buckets from `thread_start_spans`), to be handed to `bind_flow_points_threaded` once they
    are: the importer groups the points while it sorts and nests the calls.  None where the
    threaded search would not bucket (fewer than `PARALLEL_BIND_POINTS` points, a NaN time).
    Returns ((base, t_a, t_scale), bucketed)."""
    if f_ts.shape[0] < PARALLEL_BIND_POINTS or np.isnan(f_ts).any():
        return None
    scales = bucket_scales(*thread_start_spans(call_thread, call_start, n_threads))
    return scales, bucket_points(*scales, f_thread, f_ts, f_next)


def bind_flow_points_threaded(call_start, call_end, call_parent, thread_lo, thread_hi, f_thread, f_ts, f_next,
                              early=None):
    """`bind_flow_points` (the same result) with the search split in two halves of the
    buckets (`bucket_points`), the second on a second thread (the kernels release the GIL),
    from `PARALLEL_BIND_POINTS` points on.  A half whose walks pass its budget (4 steps a
    point + 512) sends all points to the sweep, as the sequential search does.  ``early``: the
    points' buckets from `bucket_points_early`, used when they are those of these calls (else,
    e.g. after calls were dropped, the points are grouped again)."""
    n = f_ts.shape[0]
    if n < PARALLEL_BIND_POINTS or np.isnan(f_ts).any():
        return bind_flow_points(call_start, call_end, call_parent, thread_lo, thread_hi, f_thread, f_ts, f_next)
    index = bind_index(call_start, thread_lo, thread_hi)
    if early is not None and all(np.array_equal(x, y) for x, y in zip(early[0], (index[0], index[2], index[3]))):
        bucketed = early[1]
    else:
        bucketed = bucket_points(index[0], index[2], index[3], f_thread, f_ts, f_next)
    ptr = bucketed[0]
    n_buckets = ptr.shape[0] - 1
    qm = min(int(np.searchsorted(ptr, n // 2)), n_buckets)  # buckets 0 .. qm-1 hold about half
    out = np.empty(n, np.int32)
    ok = [False, False]

    def half(j, q0, q1):
        ok[j] = bind_bucketed(call_start, call_end, call_parent, thread_lo, thread_hi, index, bucketed, q0, q1, out,
                              4 * int(ptr[q1] - ptr[q0]) + 512)

    second = threading.Thread(target=half, args=(1, qm, n_buckets), daemon=True)
    second.start()
    half(0, 0, qm)
    second.join()
    if ok[0] and ok[1]:
        return out
    return bind_flow_points(call_start, call_end, call_parent, thread_lo, thread_hi, f_thread, f_ts, f_next, 0)


@njit(cache=True, nogil=True)
def frame_depths(parent, max_depth):
    """Depth of every frame of a sampled profile's ``stackFrames`` forest
    (``parent[f]`` = -1 for a root).  A link that closes a cycle, or that would
    put a frame deeper than ``max_depth``, is cut (that frame becomes a root).

    Returns (parent, depth, n_cycles_cut, n_deep_cut); O(n): every frame is
    walked once, on an explicit path stack.
    """
    n = parent.shape[0]
    par = parent.copy()
    depth = np.zeros(n, np.int64)
    state = np.zeros(n, np.int8)  # 0 new, 1 on the current path, 2 done
    path = np.empty(max(n, 1), np.int64)
    n_cyc = 0
    n_deep = 0
    for f0 in range(n):
        if state[f0] != 0:
            continue
        m = 0
        x = f0
        base = -1
        while True:
            state[x] = 1
            path[m] = x
            m += 1
            p = par[x]
            if p < 0 or p >= n:
                par[x] = -1
                break
            if state[p] == 2:
                base = depth[p]
                break
            if state[p] == 1:  # closes a cycle: x becomes a root
                par[x] = -1
                n_cyc += 1
                break
            x = p
        d = base
        for q in range(m - 1, -1, -1):
            x = path[q]
            d += 1
            if d > max_depth:
                par[x] = -1
                d = 0
                n_deep += 1
            depth[x] = d
            state[x] = 2
    return par, depth, n_cyc, n_deep


@njit(cache=True, nogil=True)
def expand_samples(s_thread, s_ts, s_frame, f_parent, f_depth, max_calls):
    """Calls of a sampled profile: samples sorted by (thread, ts, file order),
    each with its leaf frame (-1: none).  Each sample's stack (the leaf and its
    ``f_parent`` chain) is compared with the previous sample's on the thread:
    frames that left are closed and new ones opened at the sample's timestamp;
    a thread's last stack is closed at its last sample (the usual flame-chart
    reading of samples).

    Returns (frame, start, end, thread, status): calls in the order they were
    opened (a pre-order per thread), status -1 if more than ``max_calls``.
    O(samples + calls): the common part of two stacks is found by walking up from
    both ends only over the frames that are closed or opened.
    """
    n = s_ts.shape[0]
    cap = max(16, 2 * n)
    c_frame = np.empty(cap, np.int64)
    c_start = np.empty(cap, np.float64)
    c_end = np.empty(cap, np.float64)
    c_thread = np.empty(cap, np.int64)
    maxd = open_depth(f_depth)
    open_frame = np.empty(maxd, np.int64)
    open_call = np.empty(maxd, np.int64)
    path = np.empty(maxd, np.int64)
    sp = 0
    nc = 0
    cur = -1
    last_t = 0.0
    for k in range(n):
        th = s_thread[k]
        t = s_ts[k]
        if th != cur:
            while sp > 0:
                sp -= 1
                c_end[open_call[sp]] = last_t
            cur = th
        f = s_frame[k]
        common = 0
        if f >= 0:
            common = common_depth(f, sp, open_frame, f_parent, f_depth)
        while sp > common:
            sp -= 1
            c_end[open_call[sp]] = t
        if f >= 0:
            m = 0
            x = f
            d = f_depth[f]
            while d >= common:
                path[m] = x
                m += 1
                x = f_parent[x]
                d -= 1
            if nc + m > max_calls:
                return c_frame[:0], c_start[:0], c_end[:0], c_thread[:0], -1
            if nc + m > cap:
                while nc + m > cap:
                    cap *= 2
                cap = min(cap, max_calls)
                c_frame2 = np.empty(cap, np.int64)
                c_start2 = np.empty(cap, np.float64)
                c_end2 = np.empty(cap, np.float64)
                c_thread2 = np.empty(cap, np.int64)
                c_frame2[:nc] = c_frame[:nc]
                c_start2[:nc] = c_start[:nc]
                c_end2[:nc] = c_end[:nc]
                c_thread2[:nc] = c_thread[:nc]
                c_frame, c_start, c_end, c_thread = c_frame2, c_start2, c_end2, c_thread2
            for q in range(m - 1, -1, -1):
                c_frame[nc] = path[q]
                c_start[nc] = t
                c_end[nc] = t
                c_thread[nc] = th
                open_frame[sp] = path[q]
                open_call[sp] = nc
                sp += 1
                nc += 1
        last_t = t
    while sp > 0:
        sp -= 1
        c_end[open_call[sp]] = last_t
    return c_frame[:nc].copy(), c_start[:nc].copy(), c_end[:nc].copy(), c_thread[:nc].copy(), 0
