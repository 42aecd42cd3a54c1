"""Tree kernels over calls stored in depth-first pre-order.

All loops are iterative (explicit stacks), so 100k-deep recursion in a trace
never touches Python's recursion limit.
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def depth_and_end_from_parent(parent):
    """Given ``parent`` of calls in pre-order, return ``(depth, end_index)``.

    depth[i] = 0 if parent[i] < 0 else depth[parent[i]] + 1;
    end_index[i] = 1 + the largest index in i's subtree (a reverse sweep:
    end[p] = max(end[p], end[i]) for each child i of p, children after parents).
    """
    n = parent.shape[0]
    depth = np.zeros(n, np.int32)
    end = np.empty(n, np.int32)
    for i in range(n):
        p = parent[i]
        depth[i] = 0 if p < 0 else depth[p] + 1
        end[i] = i + 1
    for i in range(n - 1, -1, -1):
        p = parent[i]
        if p >= 0 and end[i] > end[p]:
            end[p] = end[i]
    return depth, end


@njit(cache=True, nogil=True)
def nest_sorted_intervals(thread, start, end):
    """Nest intervals already sorted by (thread, start asc, end desc, tie order).

    A stack sweep: pop while the top ends at or before this start; what is left
    on top is the parent.  An interval that sticks out of its parent is clipped
    to the parent's end (the overlap repair; `clipped` flags those).  The sorted
    order is then the depth-first pre-order.  Each thread's run of calls is swept on
    its own (`nest_thread_calls`).
    Returns ``(parent, depth, end_index, new_end, clipped)``.
    """
    n = start.shape[0]
    parent = np.empty(n, np.int32)
    depth = np.empty(n, np.int32)
    end_index = np.empty(n, np.int32)
    new_end = np.empty_like(end)
    clipped = np.empty(n, np.bool_)
    stack = np.empty(max(n, 1), np.int64)
    lo = 0
    while lo < n:
        hi = lo + 1
        while hi < n and thread[hi] == thread[lo]:
            hi += 1
        nest_thread_calls(start, end, lo, hi, parent, depth, end_index, new_end, clipped, stack)
        lo = hi
    return parent, depth, end_index, new_end, clipped


@njit(cache=True, nogil=True, inline="always")
def nest_thread_calls(start, end, lo, hi, parent, depth, end_index, new_end, clipped, stack):
    """`nest_sorted_intervals`' sweep over one thread's calls ``[lo, hi)`` (sorted by start asc,
    end desc, tie order), every output written at ``[lo, hi)`` with indices into the whole
    arrays: parent[i] = the call on top of the stack of open calls once those ending at or before
    start[i] are popped (touching calls are siblings), -1 if none; depth[i] = the stack's height
    then; end_index[i] = the index at which i is popped (``hi`` for those still open at the end);
    new_end[i] = min(end[i], new_end[parent[i]]), clipped[i] where that cut it.  ``stack``:
    room for ``hi - lo`` indices."""
    sp = 0
    for i in range(lo, hi):
        s = start[i]
        while sp > 0:
            top = stack[sp - 1]
            if new_end[top] <= s:
                sp -= 1
                end_index[top] = i
            else:
                break
        e = end[i]
        cut = False
        if sp > 0:
            top = stack[sp - 1]
            parent[i] = top
            if e > new_end[top]:
                e = new_end[top]
                cut = True
        else:
            parent[i] = -1
        depth[i] = sp
        new_end[i] = e
        clipped[i] = cut
        stack[sp] = i
        sp += 1
    while sp > 0:
        sp -= 1
        end_index[stack[sp]] = hi


@njit(cache=True, nogil=True)
def open_depth(depth):
    """Room for the open calls of the stacks of a forest whose nodes are at ``depth``: its
    greatest depth + 2 (at least 1)."""
    maxd = 1
    for f in range(depth.shape[0]):
        if depth[f] + 2 > maxd:
            maxd = depth[f] + 2
    return maxd


@njit(cache=True, nogil=True, inline="always")
def common_depth(f, sp, open_node, parent, depth):
    """How many frames the stack of top node ``f`` (a forest of ``parent``, ``depth``) shares from
    the bottom with the open stack ``open_node[:sp]`` (node at each depth): walked up from ``f`` to
    depth ``sp - 1``, then on up while the nodes differ (equal paths are equal nodes, so the first
    equal one ends the walk).  O(frames that change)."""
    x = f
    dx = depth[f]
    while dx > sp - 1:
        x = parent[x]
        dx -= 1
    while dx >= 0 and open_node[dx] != x:
        x = parent[x]
        dx -= 1
    return dx + 1


@njit(cache=True, nogil=True)
def enclosing_call(start, end, parent, lo, hi, ts, strict_end):
    """Deepest call in ``[lo, hi)`` (one thread, pre-order) whose interval holds ts.

    Binary search for the last call starting at or before ts, then walk up the
    parents until one ends after ts (or at ts unless strict_end).  -1 if none.
    """
    a = lo
    b = hi
    while a < b:
        m = (a + b) // 2
        if start[m] <= ts:
            a = m + 1
        else:
            b = m
    i = a - 1
    while i >= lo:
        if end[i] > ts or (not strict_end and end[i] == ts):
            return i
        i = parent[i]
        if i < lo:
            return -1
    return -1


@njit(cache=True, nogil=True)
def _sort_run(idx, lo, hi, end, order_key):
    """Sort idx[lo:hi] (equal thread and start) by (-end, order_key), stably."""
    m = hi - lo
    if m <= 32:  # insertion sort: runs of equal start are short in real traces
        for a in range(lo + 1, hi):
            v = idx[a]
            b = a - 1
            while b >= lo and (end[idx[b]] < end[v] or (end[idx[b]] == end[v] and order_key[idx[b]] > order_key[v])):
                idx[b + 1] = idx[b]
                b -= 1
            idx[b + 1] = v
        return
    seg = idx[lo:hi].copy()
    o1 = np.argsort(order_key[seg], kind="mergesort")
    seg = seg[o1]
    o2 = np.argsort(-end[seg], kind="mergesort")
    idx[lo:hi] = seg[o2]


@njit(cache=True, nogil=True)
def group_by_key(key, n_keys):
    """Stable counting sort by a small integer key in [0, n_keys): returns
    ``(order, ptr)``, the positions with key k at ``order[ptr[k]:ptr[k+1]]`` in
    their input order.  O(n + n_keys)."""
    order = np.empty(key.shape[0], np.int64)
    return order, group_by_key_into(key, n_keys, order)


@njit(cache=True, nogil=True, inline="always")
def group_by_key_into(key, n_keys, order):
    """`group_by_key` written into ``order`` (one per key, of any integer type: int32 where
    the positions fit); returns ptr."""
    n = key.shape[0]
    ptr = np.zeros(n_keys + 1, np.int64)
    for i in range(n):
        ptr[key[i] + 1] += 1
    for k in range(n_keys):
        ptr[k + 1] += ptr[k]
    fill = ptr[:-1].copy()
    for i in range(n):
        k = key[i]
        order[fill[k]] = i
        fill[k] += 1
    return ptr


@njit(cache=True, nogil=True)
def _precedes(a, b, start, end, order_key):
    """Call ``a`` comes strictly before call ``b`` in (start asc, end desc, order_key asc)."""
    sa = start[a]
    sb = start[b]
    if sa != sb:
        return sa < sb
    ea = end[a]
    eb = end[b]
    if ea != eb:
        return ea > eb
    return order_key[a] < order_key[b]


@njit(cache=True, nogil=True)
def _run_shape(idx, lo, hi, start, end, order_key):
    """How the calls ``idx[lo:hi]`` (one thread, in input order) stand: 1 when already strictly
    in (start asc, end desc, order_key asc) order, 2 when not but their ends never decrease
    (calls listed as they end, each after the calls it encloses: post-order, as VizTracer and
    other tracers that write a call when it returns), else 0.  One pass, left early."""
    pre = True
    post = True
    for k in range(lo + 1, hi):
        a = idx[k - 1]
        b = idx[k]
        if pre and not _precedes(a, b, start, end, order_key):
            pre = False
        if post and end[b] < end[a]:
            post = False
        if not (pre or post):
            return 0
    return 1 if pre else 2


@njit(cache=True, nogil=True)
def _preorder_from_postorder(idx, lo, hi, start, end, order_key):
    """Put ``idx[lo:hi]`` (one thread's calls in post-order: each after the calls it encloses)
    into pre-order in O(n), or return False with ``idx`` unchanged.

    Read backwards, post-order is the pre-order of the mirrored tree (a call before its
    children, the children last to first), so a stack of the calls still open gives each
    call's enclosing call (the nearest one whose [start, end] holds its own).  Subtree sizes
    are summed forwards (children before their parent), and positions handed out backwards:
    the roots from the end of the run, each child at the end of what is left of its parent's
    range.  The result is accepted only when it is strictly in (start asc, end desc,
    order_key asc) order: a strict order of distinct keys is the one and only sorted order,
    the same permutation the merge sort of `preorder_sort` gives.  Anything else (overlaps,
    equal keys, input not in post-order) returns False and the caller sorts."""
    m = hi - lo
    seg = idx[lo:hi].copy()
    par = np.empty(m, np.int32)
    size = np.ones(m, np.int32)  # subtree sizes, then the next free end inside each call's range
    stack = np.empty(m, np.int32)
    sp = 0
    for j in range(m - 1, -1, -1):
        x = seg[j]
        sx = start[x]
        ex = end[x]
        while sp > 0:
            p = seg[stack[sp - 1]]
            if start[p] <= sx and ex <= end[p]:
                break
            sp -= 1
        par[j] = stack[sp - 1] if sp > 0 else -1
        stack[sp] = j
        sp += 1
    for j in range(m):
        if par[j] >= 0:
            size[par[j]] += size[j]
    root_end = m
    for j in range(m - 1, -1, -1):
        p = par[j]
        if p < 0:
            pos = root_end - size[j]
            root_end = pos
        else:
            pos = size[p] - size[j]
            size[p] = pos
        if pos < 0 or pos >= m:
            idx[lo:hi] = seg
            return False
        idx[lo + pos] = seg[j]
        size[j] = pos + size[j]
    for k in range(lo + 1, hi):
        if not _precedes(idx[k - 1], idx[k], start, end, order_key):
            idx[lo:hi] = seg
            return False
    return True


@njit(cache=True, nogil=True)
def preorder_sort(thread, start, end, order_key, n_threads):
    """Permutation that sorts calls by (thread, start asc, end desc, order_key asc).

    With intervals that nest, this order is the depth-first pre-order (a parent
    starts no later and ends no earlier than its children; file order breaks
    exact ties).  A counting sort by thread, then each thread's calls put in order
    (`preorder_thread_calls`).  O(n log n) at worst, no 4-key lexsort.
    """
    idx, counts = group_by_key(thread, n_threads)
    for t in range(n_threads):
        preorder_thread_calls(idx, counts[t], counts[t + 1], start, end, order_key)
    return idx


@njit(cache=True, nogil=True, inline="always")
def preorder_thread_calls(idx, lo, hi, start, end, order_key):
    """One thread's calls ``idx[lo:hi]`` put in (start asc, end desc, order_key asc) order, in
    place: nothing more when they are in that order already (`_run_shape`), an O(n) rebuild when
    they come in post-order (`_preorder_from_postorder`), else a merge sort by start and a
    fix-up of the runs of equal start (`_sort_run`)."""
    if hi - lo < 2:
        return
    shape = _run_shape(idx, lo, hi, start, end, order_key)
    if shape == 1 or (shape == 2 and _preorder_from_postorder(idx, lo, hi, start, end, order_key)):
        return
    seg = idx[lo:hi].copy()
    o = np.argsort(start[seg], kind="mergesort")
    idx[lo:hi] = seg[o]
    a = lo
    while a < hi:
        b = a + 1
        s = start[idx[a]]
        while b < hi and start[idx[b]] == s:
            b += 1
        if b - a > 1:
            _sort_run(idx, a, b, end, order_key)
        a = b


@njit(cache=True, nogil=True)
def sort_and_nest_threads(idx, counts, threads, start, end, order_key, row,
                          s_start, s_end, s_row, parent, depth, end_index, new_end, clipped):
    """`preorder_sort` then `nest_sorted_intervals`, for the threads listed in ``threads`` only:
    two callers given disjoint lists of threads may run side by side, each writing its own
    threads' ranges.  ``idx``, ``counts``: the calls grouped by thread (`group_by_key`; thread
    t's at ``idx[counts[t]:counts[t + 1]]``), each thread's put in pre-order in place
    (`preorder_thread_calls`); ``s_start, s_end, s_row`` = ``start, end, row`` gathered in that
    order; then the sweep of `nest_thread_calls` over each thread's range writes ``parent,
    depth, end_index, new_end, clipped`` (indices in the sorted order; ``new_end`` may be
    ``s_end`` itself, clipped in place: each call's end is read before it is written, and only
    earlier calls' clipped ends after).  The same numbers as the two kernels over all threads,
    bit for bit."""
    most = 1
    for q in range(threads.shape[0]):
        t = threads[q]
        most = max(most, counts[t + 1] - counts[t])
    stack = np.empty(most, np.int64)
    for q in range(threads.shape[0]):
        t = threads[q]
        lo = counts[t]
        hi = counts[t + 1]
        preorder_thread_calls(idx, lo, hi, start, end, order_key)
        for k in range(lo, hi):
            j = idx[k]
            s_start[k] = start[j]
            s_end[k] = end[j]
            s_row[k] = row[j]
        nest_thread_calls(s_start, s_end, lo, hi, parent, depth, end_index, new_end, clipped, stack)


#: codes of `first_bad_call`
BAD_CALL = {
    1: "func outside the function table",
    2: "thread outside the thread table",
    3: "threads not contiguous",
    4: "kind out of range",
    5: "start or end not a time (non-finite or beyond the time range)",
    6: "end < start",
    7: "parent must be -1 or an earlier call",
    8: "parent on another thread",
    9: "depth differs from the parent's depth + 1",
    10: "end_index outside (i, end of its thread]",
    11: "the call after it is in its subtree but is not its child",
    12: "subtree ends past its parent's end",
    13: "the call right after its subtree is not its sibling",
    14: "times not inside its parent's",
    15: "it ends after its next sibling starts",
}


@njit(cache=True, nogil=True)
def call_self_time(start, end, end_index, i):
    """Exclusive time of call ``i``: ``(end[i] - start[i]) - sum(end[c] - start[c])`` over its
    direct children c, found in pre-order (the first at i + 1, each next one at the previous
    one's ``end_index``) and summed in index order (`self_times`)."""
    s = 0.0
    j = i + 1
    while j < end_index[i]:
        s += end[j] - start[j]
        j = end_index[j]
    return (end[i] - start[i]) - s


@njit(cache=True, nogil=True)
def self_times(start, end, end_index, idx):
    """Exclusive time of the calls ``idx`` (`call_self_time` each): equal, bit for bit, to
    `Trace.self_time` (numpy's bincount adds the children in the same order) but
    O(len(idx) + their children) instead of O(calls) -- a time window of a huge trace."""
    out = np.empty(idx.shape[0], np.float64)
    for k in range(idx.shape[0]):
        out[k] = call_self_time(start, end, end_index, idx[k])
    return out


@njit(cache=True, nogil=True)
def working_waits_mask(kind, start, end, end_index, wait_kind, io_kind, share):
    """bool per call i (pre-order, ``end_index`` as in `self_times`): ``kind[i] == wait_kind`` and
    W(i) > ``share`` * max(end[i] - start[i], 0), W(i) the sum over its subtree [i, end_index[i])
    of max(self time, 0) (`self_times`' sum) of the calls whose kind is neither ``wait_kind`` nor
    ``io_kind`` -- `kinds.working_waits`.  W(i) = P[end_index[i]] - P[i] with P the running sum
    of those self times in call order (as numpy's cumsum adds them: the same bits), read when
    the walk enters a wait and when it leaves its subtree (a stack of the open waits: subtrees
    nest).  Memory: the mask and the stack (the numpy form made five call-sized temporaries,
    the 10^7-call load's peak)."""
    n = kind.shape[0]
    out = np.zeros(n, np.bool_)
    stack = np.empty(64, np.int64)
    entered = np.empty(64, np.float64)
    top = 0
    acc = 0.0
    for i in range(n + 1):
        while top > 0 and end_index[stack[top - 1]] <= i:  # subtrees left: innermost first
            top -= 1
            w = stack[top]
            dur = end[w] - start[w]
            if not dur > 0.0:
                dur = 0.0
            out[w] = acc - entered[top] > share * dur
        if i == n:
            break
        if kind[i] == wait_kind:
            if top == stack.shape[0]:
                stack = np.concatenate((stack, np.empty(stack.shape[0], np.int64)))
                entered = np.concatenate((entered, np.empty(entered.shape[0], np.float64)))
            stack[top] = i
            entered[top] = acc
            top += 1
        elif kind[i] != io_kind:
            own = call_self_time(start, end, end_index, i)
            if own > 0.0:
                acc += own
    return out


@njit(cache=True, nogil=True)
def first_bad_call(func, start, end, depth, parent, end_index, thread, kind, n_func, n_threads, n_kinds, max_abs):
    """The first call that violates a per-call invariant of the Trace model, as
    (code, call) with a code of `BAD_CALL`, or (0, -1).  The same local
    conditions as `Trace.check()` (first child, next sibling, depth, nesting),
    plus |time| <= ``max_abs``: a pass over the threads, then one over the calls
    (a call's parent is earlier, so it is checked before it is used as an
    index).  O(n), for the native loader, which must not hand an unchecked
    trace on."""
    n = func.shape[0]
    thread_end = np.zeros(max(n_threads, 1), np.int64)  # one past the last call of each thread
    for i in range(n):
        t = thread[i]
        if t < 0 or t >= n_threads:
            return 2, i
        if i > 0 and t < thread[i - 1]:
            return 3, i
        thread_end[t] = i + 1
    for i in range(n):
        if func[i] < 0 or func[i] >= n_func:
            return 1, i
        if kind[i] >= n_kinds:
            return 4, i
        s = start[i]
        e = end[i]
        if not (np.isfinite(s) and np.isfinite(e) and abs(s) <= max_abs and abs(e) <= max_abs):
            return 5, i
        if e < s:
            return 6, i
        p = parent[i]
        if p < -1 or p >= i:
            return 7, i
        t_end = thread_end[thread[i]]
        if p >= 0:
            if thread[p] != thread[i]:
                return 8, i
            if depth[i] != depth[p] + 1:
                return 9, i
        elif depth[i] != 0:
            return 9, i
        ei = end_index[i]
        if ei <= i or ei > t_end:
            return 10, i
        if i + 1 < ei and parent[i + 1] != i:
            return 11, i
        limit = end_index[p] if p >= 0 else t_end
        if p >= 0 and ei > limit:
            return 12, i
        if ei < limit and parent[ei] != p:
            return 13, i
        if p >= 0 and (s < start[p] or e > end[p]):
            return 14, i
        if ei < limit and start[ei] < e:
            return 15, i
    return 0, -1


@njit(cache=True, nogil=True)
def single_marked_descent(end_index, below, root):
    """From ``root`` down while exactly one child's subtree holds a marked call; the call
    where that stops.  ``below[i]``: the marked calls before call i in pre-order (a prefix
    count, n + 1 entries; ``end_index``: each call's subtree end), so each subtree is asked
    in O(1): O(calls under ``root`` visited) at most, not a scan of each child's subtree per
    level (a 10^6-deep recursion took 7 s in numpy slices)."""
    node = root
    while True:
        only = -1
        c = node + 1
        two = False
        while c < end_index[node]:
            if below[end_index[c]] > below[c]:
                if only >= 0:
                    two = True
                    break
                only = c
            c = end_index[c]
        if two or only < 0:
            return node
        node = only
