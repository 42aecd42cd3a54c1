"""Numba kernels that generate and perturb synthetic traces.

`generate_calls` runs a static "program" (a call graph: functions with loop blocks of
call sites, see `tracevis3d.synthetic`) as a depth-first simulation, one explicit stack
per thread, writing each thread's calls straight into its contiguous pre-order range
(the Trace model: TraceDiff Sec. III, f = (F, t_s, t_e, parent, children)).
`perturb_plan` / `perturb_apply` make the "second run" of a trace.

All loops are iterative; a 100 000-deep recursion chain never touches Python's stack.
Randomness comes from numba's own generator, seeded at the top of each kernel, so a
kernel's output depends only on its arguments.

Over 600 lines: the numba kernels of the synthetic generator and its perturbation, one topic;
`generate_calls` is one loop over calls.  Its per-call work and its arrays stay in it: the
same loop ran 5 % slower with its arrays made by a helper and returned in a tuple, and 2.3x
slower split into stages numba inlined, each taking its arrays out of tuples; the helpers it
calls take scalars and arrays as plain arguments and return scalars (a grown list excepted),
and run once per task (`_task_callee`), wait or I/O call (`_owe_release`, `_emit_leaf`),
release (`_pay_release`) or list entry (`_appended`), never once per call.
"""
import numpy as np
from numba import njit

from .grow import room_for

KIND_OTHER = 0
KIND_WAIT = 1
KIND_RELEASE = 2
KIND_IO = 3

OWED_MAX = 4          # releases one thread may owe at a time
DRIVER_BLOCK = -2     # st_block marker of an entry frame (main / Thread.run)


@njit(cache=True, nogil=True)
def self_segment(scale, sigma):
    """One piece of a call's self time: ``0.5 * scale * exp(sigma * N(0,1))`` (lognormal).

    A call's self time is split into the gap before each child and the tail after the
    last one; with the scale itself lognormal per call, self times are lognormal.
    """
    return 0.5 * scale * np.exp(sigma * np.random.normal(0.0, 1.0))


@njit(cache=True, nogil=True)
def loop_count(mean_reps):
    """Times a loop block runs in one call: 1 when ``mean_reps <= 1``, else
    ``1 + Poisson(mean_reps - 1)`` (random variation around the static loop count)."""
    if mean_reps <= 1.0:
        return 1
    return 1 + np.random.poisson(mean_reps - 1.0)


@njit(cache=True, nogil=True)
def recursion_levels(mean_levels, max_levels):
    """How many more times a recursive function calls itself below a fresh entry:
    ``min(Geometric(1/(mean+1)) - 1, max_levels)`` (so the mean is ~``mean_levels``)."""
    k = np.random.geometric(1.0 / (mean_levels + 1.0)) - 1
    return k if k < max_levels else max_levels


@njit(cache=True, nogil=True)
def pick_cdf(cdf):
    """Index drawn from the distribution with cumulative weights ``cdf`` (last = 1)."""
    u = np.random.random()
    a = 0
    b = cdf.shape[0] - 1
    while a < b:
        m = (a + b) // 2
        if cdf[m] < u:
            a = m + 1
        else:
            b = m
    return a


@njit(cache=True, nogil=True)
def generate_calls(func, start, end, parent, depth, end_index, kind,
                   seed, budgets, thread_t0, entry_fn, interleave,
                   fn_block_ptr, block_site_ptr, block_reps,
                   site_callee, site_prob, site_obj,
                   fn_kind, fn_rec, fn_self_mu, release_fn_of,
                   task_ids, task_cdf,
                   self_sigma, gap_sigma, outlier_rate, outlier_factor,
                   rec_mean, rec_max, rec_binary_max, depth_cap,
                   deep_fn, deep_len, io_median, wake_median, release_median):
    """Simulate the program on ``len(budgets)`` threads; thread t emits exactly
    ``budgets[t]`` calls, into the range ``[sum(budgets[:t]), sum(budgets[:t+1]))``.

    Per thread, a stack of frames: the entry frame (``entry_fn[t]``) loops forever over
    task functions (``task_ids`` drawn with ``task_cdf``); a normal frame walks its
    function's blocks (a block = a run of call sites repeated `loop_count` times, each
    site taken with ``site_prob``).  A push emits a call (start = cursor + a self
    segment of the parent), a pop closes it (end = cursor + a self segment).  When the
    thread's budget is spent, its open frames are closed: the last task is cut short.

    Sync (``interleave``): the runnable thread with the smallest clock moves next.  A
    wait site on thread A is taken only if another thread B is running, has started and
    has budget left for one more release; B then owes the release, which is the next call
    it emits, with ``t_s(release) >= t_s(wait)``; the wait ends at ``t_s(release)`` plus
    a wake-up latency.  So every wait fw has a release fr on another thread with the same
    object and ``t_s(fr) in [t_s(fw), t_e(fw)]``: SyncTrace Sec. IV-B, Eqs. (6)-(7).
    A thread never waits while it owes a release, so there is always a runnable
    creditor: no deadlock.

    The per-call arrays ``func, start, end, parent, depth, end_index, kind`` (length
    ``sum(budgets)``, any contents) are written in place, every entry: they may be a file's
    mapped pages (`tracevis3d.io.synthesis.save_synthetic`).  What only some calls have is
    returned as lists: ``(obj_call, obj_id, outlier_call, pair_wait, pair_release)``: the
    calls with an object (each has one) and that object, the outlier calls, the sync pairs;
    in emission order (call order when ``interleave`` is off).
    """
    np.random.seed(seed)
    n_threads = budgets.shape[0]
    # growing lists (`_appended`)
    obj_call, obj_id, outlier_call = np.empty(1024, np.int64), np.empty(1024, np.int32), np.empty(1024, np.int64)
    pair_wait, pair_rel = np.empty(1024, np.int64), np.empty(1024, np.int64)
    n_obj = n_out = n_pairs = 0
    # per-thread state: first call, calls emitted and left, clock, waiting, done, stack depth;
    # its frames are [base, base + cap) of the frame stacks (thread 0 has room for the deep chain)
    off = np.zeros(n_threads, np.int64)
    off[1:] = np.cumsum(budgets)[:-1]
    count, left = np.zeros(n_threads, np.int64), budgets.astype(np.int64).copy()
    cursor = thread_t0.astype(np.float64).copy()
    blocked, finished, sp = np.zeros(n_threads, np.bool_), np.zeros(n_threads, np.bool_), np.zeros(n_threads, np.int64)
    cap = np.full(n_threads, depth_cap + 3, np.int64)
    cap[0] += deep_len
    base = np.cumsum(cap) - cap
    n = base[-1] + cap[-1]
    # frame stacks: call, function, block (DRIVER_BLOCK: entry frame), end of its blocks, next site
    # (-1: block starts), repetitions left, recursion budget, self-time scale
    st_call, st_fn, st_block = np.empty(n, np.int64), np.empty(n, np.int32), np.empty(n, np.int32)
    st_block_end, st_site, st_reps = np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.int64)
    st_rec, st_scale = np.empty(n, np.int64), np.empty(n, np.float64)
    # releases owed per thread: the wait call and its object
    owed, owed_obj = np.empty((n_threads, OWED_MAX), np.int64), np.empty((n_threads, OWED_MAX), np.int32)
    owed_n = np.zeros(n_threads, np.int64)
    deep_done = deep_len <= 0
    n_finished = seq_t = 0

    while n_finished < n_threads:
        # ---- choose the thread that moves
        t = -1
        if interleave:
            best = np.inf
            for u in range(n_threads):
                if not blocked[u] and not finished[u] and cursor[u] < best:
                    best = cursor[u]
                    t = u
            if t < 0:
                raise RuntimeError("synthetic generator deadlock (bug): all threads wait")
        else:
            while finished[seq_t]:
                seq_t += 1
            t = seq_t
        k = base[t] + sp[t] - 1  # top frame (when sp > 0)

        if owed_n[t] > 0:  # pay an owed release first (B's next call is the release)
            i, w, ow = _pay_release(t, k, func, start, end, parent, depth, end_index, kind, off, count, left,
                                    cursor, blocked, sp, st_call, st_scale, owed, owed_obj, owed_n, release_fn_of,
                                    gap_sigma, wake_median, release_median)
            obj_call, obj_id, n_obj = _appended(obj_call, n_obj, i), _appended(obj_id, n_obj, ow), n_obj + 1
            pair_wait, pair_rel = _appended(pair_wait, n_pairs, w), _appended(pair_rel, n_pairs, i)
            n_pairs += 1
            continue

        # ---- choose what to call next (callee c with recursion budget rec), or pop
        c = -1
        rec = 0
        s = -1
        if left[t] == 0:  # budget spent: close open frames, then the thread is done
            if sp[t] == 0:
                finished[t] = True
                n_finished += 1
                continue
        elif sp[t] == 0:
            c = entry_fn[t]
        elif st_block[k] == DRIVER_BLOCK:
            c, rec, deep_done = _task_callee(t, deep_done, deep_fn, deep_len, task_ids, task_cdf, fn_rec,
                                             rec_mean, rec_max, rec_binary_max)
        else:
            f = st_fn[k]
            while True:
                # next site of the frame's blocks (loop blocks repeat)
                b = st_block[k]
                if b >= st_block_end[k]:
                    break
                si = st_site[k]
                if si < 0:
                    r = loop_count(block_reps[b])
                    st_reps[k] = r
                    st_site[k] = block_site_ptr[b]
                    continue
                if si >= block_site_ptr[b + 1]:
                    st_reps[k] -= 1
                    if st_reps[k] > 0:
                        st_site[k] = block_site_ptr[b]
                    else:
                        st_block[k] = b + 1
                        st_site[k] = -1
                    continue
                st_site[k] = si + 1
                if np.random.random() >= site_prob[si]:
                    continue
                cc = site_callee[si]
                kc = fn_kind[cc]
                if kc == KIND_WAIT or kc == KIND_IO:  # a wait is taken only with a creditor
                    if kc == KIND_WAIT and not (interleave and _owe_release(
                            t, off[t] + count[t], site_obj[si], blocked, finished, sp, left, owed, owed_obj, owed_n)):
                        continue
                    c = cc
                    s = si
                    break
                if (sp[t] > depth_cap and cc != deep_fn) or sp[t] >= cap[t]:
                    continue
                if cc == f:
                    if st_rec[k] <= 0:
                        continue
                    rec = st_rec[k] - 1
                elif fn_rec[cc] > 0:
                    rec = recursion_levels(rec_mean, rec_max if fn_rec[cc] == 1 else rec_binary_max)
                else:
                    rec = 0
                c = cc
                s = si
                break
        if c < 0:  # no more sites, or no budget left: return from the call
            i = st_call[k]
            end[i] = cursor[t] + self_segment(st_scale[k], gap_sigma)
            cursor[t] = end[i]
            end_index[i] = off[t] + count[t]
            sp[t] -= 1
            continue

        # ---- emit call i of function c
        i = off[t] + count[t]
        count[t] += 1
        left[t] -= 1
        func[i] = c
        depth[i] = sp[t]
        if sp[t] == 0:
            parent[i] = -1
            st = cursor[t]
        else:
            parent[i] = st_call[k]
            st = cursor[t] + self_segment(st_scale[k], gap_sigma)
        start[i] = st
        cursor[t] = st
        is_out = outlier_rate > 0.0 and sp[t] > 0 and np.random.random() < outlier_rate
        fk = fn_kind[c]
        if is_out and fk != KIND_WAIT:  # a wait's length is its release's: never an outlier
            outlier_call, n_out = _appended(outlier_call, n_out, i), n_out + 1
        if fk == KIND_WAIT or fk == KIND_IO:
            obj_call, obj_id, n_obj = _appended(obj_call, n_obj, i), _appended(obj_id, n_obj, site_obj[s]), n_obj + 1
            _emit_leaf(t, i, fk, is_out, io_median, outlier_factor, kind, end, end_index, blocked, cursor)
        else:
            kind[i] = KIND_OTHER
            kn = base[t] + sp[t]
            sp[t] += 1
            st_call[kn] = i
            st_fn[kn] = c
            if depth[i] == 0:
                st_block[kn] = DRIVER_BLOCK
                st_block_end[kn] = DRIVER_BLOCK
            else:
                st_block[kn] = fn_block_ptr[c]
                st_block_end[kn] = fn_block_ptr[c + 1]
            st_site[kn], st_reps[kn], st_rec[kn] = -1, 0, rec
            sc = np.exp(fn_self_mu[c] + self_sigma * np.random.normal(0.0, 1.0))
            if is_out:
                sc *= outlier_factor
            st_scale[kn] = sc
    return (obj_call[:n_obj].copy(), obj_id[:n_obj].copy(), outlier_call[:n_out].copy(),
            pair_wait[:n_pairs].copy(), pair_rel[:n_pairs].copy())


@njit(cache=True, nogil=True)
def _emit_leaf(t, i, fk, is_out, io_median, outlier_factor, kind, end, end_index, blocked, cursor):
    """Call ``i`` of thread ``t``, started at ``cursor[t]``, is a wait (``fk`` = `KIND_WAIT`: it
    ends when its release comes; the thread blocks) or an I/O call (a lognormal ``io_median``
    long, times ``outlier_factor`` for an outlier; the thread's clock moves to its end)."""
    st = cursor[t]
    end_index[i] = i + 1
    if fk == KIND_WAIT:
        kind[i] = KIND_WAIT
        end[i] = st  # set when the release comes
        blocked[t] = True
    else:
        kind[i] = KIND_IO
        d = io_median * np.exp(np.random.normal(0.0, 1.0))
        if is_out:
            d *= outlier_factor
        end[i] = st + d
        cursor[t] = end[i]


@njit(cache=True, nogil=True)
def _task_callee(t, deep_done, deep_fn, deep_len, task_ids, task_cdf, fn_rec, rec_mean, rec_max, rec_binary_max):
    """The next call of thread ``t``'s entry frame: the deep recursion chain first (thread 0, once),
    else a task function drawn from ``task_cdf``.  Returns ``(callee, recursion budget, deep_done)``."""
    if t == 0 and not deep_done:
        return deep_fn, deep_len - 1, True
    c = task_ids[pick_cdf(task_cdf)]
    rec = 0
    if fn_rec[c] > 0:
        rec = recursion_levels(rec_mean, rec_max if fn_rec[c] == 1 else rec_binary_max)
    return c, rec, deep_done


@njit(cache=True, nogil=True)
def _owe_release(t, wait_call, obj, blocked, finished, sp, left, owed, owed_obj, owed_n):
    """Find a creditor for thread ``t``'s wait ``wait_call`` on object ``obj``: another running
    thread that has started and has budget for one more release, drawn at random; it then owes
    the release.  False when there is none (the wait site is skipped)."""
    n_ok = 0
    for u in range(sp.shape[0]):
        if u != t and not blocked[u] and not finished[u] and sp[u] > 0 \
                and left[u] - owed_n[u] >= 1 and owed_n[u] < OWED_MAX:
            n_ok += 1
    if n_ok == 0:
        return False
    pick = np.random.randint(0, n_ok)
    bt = -1
    for u in range(sp.shape[0]):
        if u != t and not blocked[u] and not finished[u] and sp[u] > 0 \
                and left[u] - owed_n[u] >= 1 and owed_n[u] < OWED_MAX:
            if pick == 0:
                bt = u
                break
            pick -= 1
    owed[bt, owed_n[bt]] = wait_call
    owed_obj[bt, owed_n[bt]] = obj
    owed_n[bt] += 1
    return True


@njit(cache=True, nogil=True)
def _pay_release(t, k, func, start, end, parent, depth, end_index, kind, off, count, left, cursor,
                 blocked, sp, st_call, st_scale, owed, owed_obj, owed_n, release_fn_of,
                 gap_sigma, wake_median, release_median):
    """Thread ``t`` (top frame ``k``) emits the first release it owes: no earlier than its wait's
    start (plus a hair), lasting a lognormal ``release_median``; the waiter wakes a lognormal
    ``wake_median`` after the release starts.  Returns ``(release call, wait call, object)``."""
    w = owed[t, 0]
    ow = owed_obj[t, 0]
    for q in range(owed_n[t] - 1):
        owed[t, q] = owed[t, q + 1]
        owed_obj[t, q] = owed_obj[t, q + 1]
    owed_n[t] -= 1
    i = off[t] + count[t]
    count[t] += 1
    left[t] -= 1
    func[i] = release_fn_of[func[w]]
    parent[i] = st_call[k]
    depth[i] = sp[t]
    s0 = cursor[t] + self_segment(st_scale[k], gap_sigma)
    wait_s = start[w] + 1e-3 * (1.0 + np.random.random())
    if s0 < wait_s:
        s0 = wait_s
    start[i] = s0
    end[i] = s0 + release_median * np.exp(0.5 * np.random.normal(0.0, 1.0))
    end_index[i] = i + 1
    kind[i] = KIND_RELEASE
    cursor[t] = end[i]
    a = 0  # the waiter: the thread whose range holds w
    for u in range(off.shape[0]):
        if off[u] <= w:
            a = u
    end[w] = s0 + wake_median * np.exp(0.5 * np.random.normal(0.0, 1.0))
    cursor[a] = end[w]
    blocked[a] = False
    return i, w, ow


@njit(cache=True, nogil=True)
def _appended(a, n, value):
    """``a`` (a growing list of ``n`` entries) with ``value`` at ``a[n]``: ``a`` itself, or a copy
    of twice the capacity when it is full."""
    if n == a.shape[0]:
        a = _grown(a, n, 2 * n)
    a[n] = value
    return a


@njit(cache=True, nogil=True)
def _grown(a, n, cap):
    """``a[:n]`` in a new array of ``cap`` entries (a growing list; capacity doubles)."""
    b = np.empty(cap, a.dtype)
    b[:n] = a[:n]
    return b


# ------------------------------------------------------------------ perturbation
DROPPED = 1      # flags: this call's subtree is left out of the second run
SWAP_SECOND = 2  # this call is the later one of a swapped pair
WRAP_NEW = 4     # the subtree inserted before this call sits under a new function


@njit(cache=True, nogil=True)
def perturb_plan(seed, parent, end_index, start, end, thread_lo, thread_hi,
                 p_reorder, p_shift, p_drop, p_insert, p_stretch, p_new_function,
                 max_subtree):
    """Decide, per call, what the "second run" does (TraceDiff Sec. V: the same program
    run twice, executions shifted in time, reordered, partly different).

    One pre-order pass per thread; a dropped subtree is skipped whole.  For call i:
    drop (depth >= 1, subtree <= max_subtree calls) with p_drop; else swap with its next
    sibling with p_reorder (a call is in at most one swap); insert a copy of a random
    subtree (<= max_subtree calls, same thread) before i with p_insert, under a new
    function with p_new_function; shift i's leading gap by a signed lognormal amount with
    p_shift; stretch i's self time by a factor in [1.3, 3] (or its inverse) with p_stretch.

    Returns ``(flags, swap_partner, donor, shift, stretch, n_out_per_thread)``.
    """
    np.random.seed(seed)
    n = parent.shape[0]
    n_threads = thread_lo.shape[0]
    flags = np.zeros(n, np.uint8)
    swap_partner = np.full(n, -1, np.int32)
    donor = np.full(n, -1, np.int32)
    shift = np.zeros(n, np.float64)
    stretch = np.ones(n, np.float64)
    n_out = np.zeros(n_threads, np.int64)
    for t in range(n_threads):
        lo = thread_lo[t]
        hi = thread_hi[t]
        kept = hi - lo
        i = lo
        while i < hi:
            p = parent[i]
            size = end_index[i] - i
            if p >= 0 and (flags[i] & SWAP_SECOND) == 0 and size <= max_subtree \
                    and np.random.random() < p_drop:
                flags[i] |= DROPPED
                kept -= size
                i = end_index[i]
                continue
            if (flags[i] & SWAP_SECOND) == 0 and np.random.random() < p_reorder:
                limit = end_index[p] if p >= 0 else hi
                j = end_index[i]
                if j < limit:
                    swap_partner[i] = j
                    flags[j] |= SWAP_SECOND
            if np.random.random() < p_insert:
                for _ in range(8):
                    d = np.random.randint(lo, hi)
                    if end_index[d] - d <= max_subtree:
                        donor[i] = d
                        kept += end_index[d] - d
                        if np.random.random() < p_new_function:
                            flags[i] |= WRAP_NEW
                            kept += 1
                        break
            if np.random.random() < p_shift:
                scale = 0.5 * (end[i] - start[i]) + 1.0
                delta = scale * np.exp(np.random.normal(0.0, 1.0))
                if np.random.random() < 0.3:
                    delta = -delta
                shift[i] = delta
            if np.random.random() < p_stretch:
                fac = np.exp(np.random.uniform(np.log(1.3), np.log(3.0)))
                if np.random.random() < 0.2:
                    fac = 1.0 / fac
                stretch[i] = fac
            i += 1
        n_out[t] = kept
    return flags, swap_partner, donor, shift, stretch, n_out


@njit(cache=True, nogil=True)
def _emit_copy(d, func, start, end, parent, depth, end_index,
               o, out_parent, out_depth, t0,
               o_func, o_start, o_end, o_parent, o_depth, o_end_index, o_source):
    """Copy the subtree of original call d to output index o onwards, as a child of
    out_parent at depth out_depth, translated so that it starts at t0.  Returns o + size."""
    e = end_index[d]
    dt = t0 - start[d]
    d0 = depth[d]
    for j in range(d, e):
        k = o + (j - d)
        o_func[k] = func[j]
        o_start[k] = start[j] + dt
        o_end[k] = end[j] + dt
        o_parent[k] = out_parent if j == d else o + (parent[j] - d)
        o_depth[k] = out_depth + depth[j] - d0
        o_end_index[k] = o + (end_index[j] - d)
        o_source[k] = j
    return o + (e - d)


@njit(cache=True, nogil=True)
def perturb_apply(func, start, end, parent, depth, end_index, thread_lo, thread_hi,
                  flags, swap_partner, donor, shift, stretch, n_out, new_func_base):
    """Write the second run given a plan from `perturb_plan`.

    Time model: every call keeps its *lead* (gap before it: from its parent's start for a
    first child, else from the end of the previous sibling in the original order) and its
    *tail* (from the end of its last child, or its start for a leaf, to its end); times are
    rebuilt as running sums, so a change moves everything after it on the same thread and
    nesting is kept by construction.  Leads inside a stretched call and its tail are
    multiplied by its factor; a shift adds to the call's lead (floored at 0); a swapped
    pair takes the two leads in their positions; a dropped call takes its lead with it; an
    inserted copy keeps its donor's internal times, starts half-way into the gap before
    the call it precedes, and pushes that call back by its duration.

    Returns ``(func, start, end, parent, depth, end_index, origin, source, inserted_root,
    wrap_donor)``: origin = original index of each output call (-1 if inserted),
    source = the original call it copies (-1 for a new-function call).
    """
    n_threads = thread_lo.shape[0]
    m = 0
    for t in range(n_threads):
        m += n_out[t]
    o_func = np.empty(m, np.int32)
    o_start = np.empty(m, np.float64)
    o_end = np.empty(m, np.float64)
    o_parent = np.empty(m, np.int32)
    o_depth = np.empty(m, np.int32)
    o_end_index = np.empty(m, np.int32)
    o_origin = np.full(m, -1, np.int32)
    o_source = np.full(m, -1, np.int32)
    inserted_root = np.zeros(m, np.bool_)
    wrap_donor = np.empty(m if m < 1024 else 1024, np.int32)
    n_wrap = 0
    cap = room_for(depth, 3, 3)
    f_orig = np.empty(cap, np.int64)    # original call of the frame (-1: thread level)
    f_out = np.empty(cap, np.int64)
    f_nxt = np.empty(cap, np.int64)
    f_prev = np.empty(cap, np.int64)
    f_second = np.empty(cap, np.int64)
    f_second_lead = np.empty(cap, np.float64)
    f_factor = np.empty(cap, np.float64)
    o = 0
    for t in range(n_threads):
        lo = thread_lo[t]
        hi = thread_hi[t]
        o_thread_end = o + n_out[t]
        if hi <= lo:
            continue
        cursor = start[lo]
        sp = 1
        f_orig[0] = -1
        f_out[0] = -1
        f_nxt[0] = lo
        f_prev[0] = -1
        f_second[0] = -1
        f_factor[0] = 1.0
        while sp > 0:
            k = sp - 1
            p = f_orig[k]
            limit = end_index[p] if p >= 0 else hi
            c = -1
            lead = 0.0
            if f_second[k] >= 0:
                c = f_second[k]
                f_second[k] = -1
                lead = f_second_lead[k]
            elif f_nxt[k] < limit:
                c = f_nxt[k]
                pv = f_prev[k]
                if pv >= 0:
                    lead = start[c] - end[pv]
                elif p >= 0:
                    lead = start[c] - start[p]
                else:
                    lead = 0.0
                if flags[c] & DROPPED:
                    f_prev[k] = c
                    f_nxt[k] = end_index[c]
                    continue
                s = swap_partner[c]
                if s >= 0:
                    f_second[k] = c
                    f_second_lead[k] = start[s] - end[c]
                    f_prev[k] = s
                    f_nxt[k] = end_index[s]
                    c = s
                else:
                    f_prev[k] = c
                    f_nxt[k] = end_index[c]
            else:
                if p >= 0:  # close the call
                    pv = f_prev[k]
                    tail = end[p] - (end[pv] if pv >= 0 else start[p])
                    cursor += tail * f_factor[k]
                    q = f_out[k]
                    o_end[q] = cursor
                    o_end_index[q] = o
                sp -= 1
                continue
            # emit original call c with lead `lead` inside frame k
            lead *= f_factor[k]
            out_parent = f_out[k]
            d = donor[c]
            if d >= 0:
                t0 = cursor + 0.5 * lead
                inserted_root[o] = True
                if flags[c] & WRAP_NEW:
                    w = o
                    o_func[w] = new_func_base + n_wrap
                    if n_wrap == wrap_donor.shape[0]:
                        grown = np.empty(2 * n_wrap, np.int32)
                        grown[:n_wrap] = wrap_donor
                        wrap_donor = grown
                    wrap_donor[n_wrap] = func[d]
                    n_wrap += 1
                    pad = 0.05 * (end[d] - start[d]) + 0.1
                    o_start[w] = t0
                    o_parent[w] = out_parent
                    o_depth[w] = sp - 1
                    o = _emit_copy(d, func, start, end, parent, depth, end_index,
                                   o + 1, w, sp, t0 + pad,
                                   o_func, o_start, o_end, o_parent, o_depth, o_end_index, o_source)
                    o_end[w] = o_end[w + 1] + pad
                    o_end_index[w] = o
                    cursor = o_end[w]
                else:
                    o = _emit_copy(d, func, start, end, parent, depth, end_index,
                                   o, out_parent, sp - 1, t0,
                                   o_func, o_start, o_end, o_parent, o_depth, o_end_index, o_source)
                    cursor = o_end[o - (end_index[d] - d)]
                lead = 0.5 * lead
            lead += shift[c]
            if lead < 0.0:
                lead = 0.0
            cursor += lead
            o_func[o] = func[c]
            o_start[o] = cursor
            o_parent[o] = out_parent
            o_depth[o] = sp - 1
            o_origin[o] = c
            o_source[o] = c
            f_orig[sp] = c
            f_out[sp] = o
            f_nxt[sp] = c + 1
            f_prev[sp] = -1
            f_second[sp] = -1
            f_factor[sp] = stretch[c]
            sp += 1
            o += 1
        if o != o_thread_end:
            raise RuntimeError("perturb_apply: output count differs from the plan (bug)")
    return (o_func, o_start, o_end, o_parent, o_depth, o_end_index, o_origin, o_source,
            inserted_root, wrap_donor[:n_wrap].copy())
