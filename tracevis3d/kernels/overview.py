"""TraceDiff overview bars (Sec. IV-A), exact over ALL matches.

For N equal time intervals of one trace (the "viewer"), bar n holds the sum of
similarities s(f, g) of every match k(f, g) whose call f of the viewer starts in
interval n, split by where g starts in the other trace:
aligned |t(g) − t(f)| ≤ tol, earlier t(g) < t(f) − tol (matches into the other
trace's past: red), later t(g) > t(f) + tol (its future: green); plus Eq. 4,
δ_n = Σ |t(f) − t(g)| over the same matches.  Times are relative to each trace's
first call start.  All pairs are counted (the complete class-level join), with
binary searches over each class's sorted start times, never one pair at a time,
and both viewpoints come from one pass over A's class pairs (`overview_bars_both`).
"""
import numpy as np
from numba import njit, prange

from .gamma import splitmix64
from .setjoin import overlap_similarity


@njit(cache=True, nogil=True, _nrt=False)
def bin_of(t, t0, width, n_bins):
    """The bin of time ``t``: floor((t - t0) / width) clamped to [0, n_bins); bin 0 when ``width`` <= 0."""
    b = int((t - t0) / width) if width > 0 else 0
    if b < 0:
        b = 0
    if b >= n_bins:
        b = n_bins - 1
    return b


# ---------------------------------------------------------------------------
# Both viewpoints in one pass over the A-side class pairs (no transposition).

@njit(cache=True, nogil=True, inline="always")
def _test(x, v, tol, mode):
    """The monotone tests of the overview (false for small x, true for large),
    each exactly the float expression of the relation it decides, whichever
    side's calls are iterated.  mode 0: x ≥ v; 1: x > v; 2: x − tol > v; 3: x +
    tol ≥ v."""
    if mode == 0:
        return x >= v
    if mode == 1:
        return x > v
    if mode == 2:
        return x - tol > v
    return x + tol >= v


@njit(cache=True, nogil=True, _nrt=False)
def _first_true(a, lo, hi, v, tol, mode):
    """Smallest j in [lo, hi) with `_test`(a[j]) (hi if none), binary search."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if _test(a[mid], v, tol, mode):
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True, nogil=True, _nrt=False)
def gallop_up(a, lo, hi, v, tol, mode):
    """`_first_true` over [lo, hi), probing lo, lo+1, lo+3, lo+7, ... first:
    O(log distance) when the answer is near lo."""
    if lo >= hi or _test(a[lo], v, tol, mode):
        return lo
    prev = lo
    step = 1
    while True:
        nxt = prev + step
        if nxt >= hi:
            return _first_true(a, prev + 1, hi, v, tol, mode)
        if _test(a[nxt], v, tol, mode):
            return _first_true(a, prev + 1, nxt, v, tol, mode)
        prev = nxt
        step *= 2


@njit(cache=True, nogil=True)
def _gallop_down(a, lo, hi, v, tol, mode):
    """`_first_true` over [lo, hi), probing from hi − 1 downwards: O(log
    distance) when the answer is near hi."""
    if lo >= hi or not _test(a[hi - 1], v, tol, mode):
        return hi
    k = hi - 1                   # known true
    step = 1
    while True:
        nxt = k - step
        if nxt < lo:
            return _first_true(a, lo, k, v, tol, mode)
        if not _test(a[nxt], v, tol, mode):
            return _first_true(a, nxt + 1, k, v, tol, mode)
        k = nxt
        step *= 2


@njit(cache=True, nogil=True, inline="always")
def _add_point(diff, k, e, a, l, c, d):
    """Add (earlier, aligned, later, c, d) to the one call at slot k of a
    difference array (entries at k and k + 1)."""
    diff[k, 0] += e
    diff[k, 1] += a
    diff[k, 2] += l
    diff[k, 3] += c
    diff[k, 4] += d
    diff[k + 1, 0] -= e
    diff[k + 1, 1] -= a
    diff[k + 1, 2] -= l
    diff[k + 1, 3] -= c
    diff[k + 1, 4] -= d


@njit(cache=True, nogil=True, inline="always")
def viewer_point(large_t, l0, l1, mid, t, tol_small, s, csum_large, u):
    """A small-side call at time t as the viewer: (earlier, aligned, later, c, d) of its
    partners on the large side ``large_t[l0:l1]`` (``mid``: the first x >= t), see
    `sweep_pair`; δ's terms c, d weighted by ``u``."""
    e1 = _gallop_down(large_t, l0, mid, t - tol_small, 0.0, 0)
    e2 = gallop_up(large_t, mid, l1, t + tol_small, 0.0, 1)
    return (s * (e1 - l0), s * (e2 - e1), s * (l1 - e2), u * ((mid - l0) - (l1 - mid)),
            u * ((csum_large[l1] - csum_large[mid]) - (csum_large[mid] - csum_large[l0])))


@njit(cache=True, nogil=True, inline="always")
def partner_steps(large_t, l0, l1, mid, o_large, t, tol_large, s, diff_large, u):
    """A small-side call at time t as a partner of the large side's calls: its step
    entries in ``diff_large`` (see `sweep_pair`), less the two segment ends' per-call
    constants, which the caller writes once; δ's entries weighted by ``u``."""
    h2 = _gallop_down(large_t, l0, mid, t, tol_large, 3)      # x + tol >= t
    h1 = gallop_up(large_t, mid, l1, t, tol_large, 2)        # x - tol > t
    k = h2 + o_large                                          # later -> aligned
    diff_large[k, 1] += s
    diff_large[k, 2] -= s
    k = h1 + o_large                                          # aligned -> earlier
    diff_large[k, 0] += s
    diff_large[k, 1] -= s
    k = mid + o_large                                         # t - x -> x - t
    diff_large[k, 3] += 2.0 * u
    diff_large[k, 4] -= 2.0 * (u * t)
    diff_large[l0 + o_large, 4] += u * t
    diff_large[l1 + o_large, 4] += u * t


@njit(cache=True, nogil=True, inline="always")
def segment_ends(l0, l1, o_large, s, n, diff_large, u):
    """The entries at the large segment's two ends that every one of ``n`` small-side calls
    adds alike (see `sweep_pair`), written once; δ's weighted by ``u``."""
    lo_slot = l0 + o_large
    hi_slot = l1 + o_large
    diff_large[lo_slot, 2] += s * n
    diff_large[lo_slot, 3] -= u * n
    diff_large[hi_slot, 0] -= s * n
    diff_large[hi_slot, 3] -= u * n


@njit(cache=True, nogil=True, inline="always")
def _call_unit(key, i):
    """u in [0, 1) of call i within the pair of ``key``: multiply-add-shift hashing of i
    (strongly universal, Dietzfelbinger 1996) with the multiplier `gamma.splitmix64`(key)
    and offset `gamma.splitmix64`(key + 1), so the calls of one pair are sampled independently."""
    return np.float64((splitmix64(key) * np.uint64(i) + splitmix64(key + np.uint64(1))) >> np.uint64(32)) * \
        (1.0 / 4294967296.0)


@njit(cache=True, nogil=True, inline="always")
def sweep_calls(small_t, s0, s1, o_small, large_t, l0, l1, o_large, csum_large, s, tol_small, tol_large,
                 diff_small, diff_large, u, pc, key):
    """The loop of `sweep_pair` over the small side's calls, each with relations weighted
    ``s`` and δ terms ``u``; with ``pc`` < 1 only the calls with `_call_unit`(``key``, i) < pc
    (`overview_rows.sweep_pair_sampled`), pc = 1: all of them."""
    mid = l0
    kept = 0
    for i in range(s0, s1):
        if pc < 1.0 and _call_unit(key, i) >= pc:
            continue
        t = small_t[i]
        mid = gallop_up(large_t, mid, l1, t, 0.0, 0)             # first x >= t
        e, a, la, c, d = viewer_point(large_t, l0, l1, mid, t, tol_small, s, csum_large, u)
        _add_point(diff_small, i + o_small, e, a, la, c, d)
        partner_steps(large_t, l0, l1, mid, o_large, t, tol_large, s, diff_large, u)
        kept += 1
    segment_ends(l0, l1, o_large, s, kept, diff_large, u)


@njit(cache=True, nogil=True, _nrt=False)
def sweep_pair(small_t, s0, s1, o_small, large_t, l0, l1, o_large, csum_large, s, tol_small,
                tol_large, diff_small, diff_large, u):
    """All call pairs of one class pair, iterating the side with fewer calls
    (both sides' times sorted, so each search starts where the last one ended).

    Per small-side call (time t):
      - as the viewer: its partners x on the large side split into earlier (x <
        t − tol_small), aligned and later (x > t + tol_small), and Σ|t − x| comes
        from prefix sums; added to that call alone in ``diff_small`` (earlier,
        aligned, later weights, delta coefficient c, delta offset d);
      - as a partner: it is earlier for the large-side calls with x − tol_large
        > t, later for those with x + tol_large < t, aligned for the rest, and
        adds |x − t| (= x − t after it, t − x before it) to each: a step
        function over the large side's calls, written as point entries of the
        difference array ``diff_large`` (slot = call position + ``o_large``, the
        row offset, so each class segment has its own end slot).  The entries at
        the segment's two ends are the same for every call, so they are summed
        and written once per pair.
    Viewer delta = t_viewer · c + d.  ``u`` weighs δ's terms as ``s`` weighs the relations'
    (1: every call pair once; a sampled pair's 1/p, `setjoin_window.sample_positions`).
    """
    sweep_calls(small_t, s0, s1, o_small, large_t, l0, l1, o_large, csum_large, s, tol_small, tol_large,
                 diff_small, diff_large, u, 1.0, np.uint64(0))


@njit(cache=True, nogil=True)
def _sweep_one(x, large_t, l0, l1, o_large, csum_large, s, tol_small, tol_large, one, diff_large):
    """`sweep_pair` for a small side of ONE call (time x, a one-call class of B against
    the l1 − l0 > 1 calls of an A class): the same searches and float expressions, but the
    viewer's point (earlier, aligned, later, c, d) is added to the class's compact row
    ``one`` (5 entries: `_overview_prepare`'s ``one_b[p, q]``, put in the difference array
    once by `_overview_finish`) instead of the large difference array, so the pair touches a
    small, cached array (the bars change by rounding only: the same terms, summed in another
    order)."""
    mid = gallop_up(large_t, l0, l1, x, 0.0, 0)
    e, a, la, c, d = viewer_point(large_t, l0, l1, mid, x, tol_small, s, csum_large, 1.0)
    one[0] += e
    one[1] += a
    one[2] += la
    one[3] += c
    one[4] += d
    partner_steps(large_t, l0, l1, mid, o_large, x, tol_large, s, diff_large, 1.0)
    segment_ends(l0, l1, o_large, s, 1, diff_large, 1.0)


@njit(cache=True, parallel=True, nogil=True)
def bin_raw(diff, ptr, time, t0, span, n_bins):
    """Per call: the prefix sum of the difference array over its class segment (slot = position
    + row; every step lies in one segment, so rounding never leaks across classes); then into
    its bin: (earlier, aligned, later) += the running sums, δ += t·c + d.  Returns the
    (n_bins, 4) sums (earlier, aligned, later, δ), 64 fixed chunks of rows added in order."""
    n_rows = ptr.shape[0] - 1
    width = span / n_bins
    n_chunks = 64
    acc = np.zeros((n_chunks, n_bins, 4), np.float64)
    for ch in prange(n_chunks):
        for r in range(ch, n_rows, n_chunks):
            run = np.zeros(5, np.float64)
            for i in range(ptr[r], ptr[r + 1]):
                for x in range(5):
                    run[x] += diff[i + r, x]
                t = time[i]
                b = bin_of(t, t0, width, n_bins)
                acc[ch, b, 0] += run[0]
                acc[ch, b, 1] += run[1]
                acc[ch, b, 2] += run[2]
                acc[ch, b, 3] += t * run[3] + run[4]
    out = np.zeros((n_bins, 4), np.float64)
    for ch in range(n_chunks):
        for b in range(n_bins):
            for x in range(4):
                out[b, x] += acc[ch, b, x]
    return out


@njit(cache=True, nogil=True)
def clean_bars(acc, min_weight):
    """(bars (n_bins, 3) = aligned, earlier, later; delta) from binned sums (earlier, aligned,
    later, δ).  Every nonzero bar is a sum of similarities > ``min_weight`` (= τ), so a bar
    below min_weight / 2 is rounding residue of the difference arrays and is set to exactly 0;
    a negative δ (residue of a true 0) is set to 0."""
    n_bins = acc.shape[0]
    bars = np.zeros((n_bins, 3), np.float64)
    delta = np.zeros(n_bins, np.float64)
    for b in range(n_bins):
        bars[b, 0] = acc[b, 1]
        bars[b, 1] = acc[b, 0]
        bars[b, 2] = acc[b, 2]
        delta[b] = acc[b, 3]
        for x in range(3):
            if bars[b, x] < 0.5 * min_weight:
                bars[b, x] = 0.0
        if delta[b] < 0.0:
            delta[b] = 0.0
    return bars, delta


@njit(cache=True, nogil=True)
def _bin_accumulated(diff, ptr, time, t0, span, n_bins, min_weight):
    """`bin_raw` then `clean_bars`: (bars (n_bins, 3) aligned / earlier / later, delta)."""
    return clean_bars(bin_raw(diff, ptr, time, t0, span, n_bins), min_weight)


@njit(cache=True, parallel=True, nogil=True)
def _overview_cut(pair_ptr, pair_row, rows, ptr_a, ptr_b, n_parts):
    """The cut of the CSR's rows (A row ``rows[i]`` for CSR row i) into ``n_parts`` parts of
    about equal estimated work: a one-call pair costs 1, others about (fewer calls) × (the
    searches over the other side's calls, 4 + log2(1 + their number)); the logarithms
    are taken once per B class, not per pair (log2(1 + max) = max of the two logs)."""
    n_rows = pair_ptr.shape[0] - 1
    n_rows_b = ptr_b.shape[0] - 1
    calls_b = np.empty(n_rows_b, np.int64)
    log_b = np.empty(n_rows_b, np.float64)
    for q in range(n_rows_b):
        calls_b[q] = ptr_b[q + 1] - ptr_b[q]
        log_b[q] = np.log2(1.0 + calls_b[q])
    cost = np.zeros(n_rows + 1, np.float64)
    for i in prange(n_rows):
        r = rows[i]
        nf = ptr_a[r + 1] - ptr_a[r]
        log_f = np.log2(1.0 + nf)
        c = 0.0
        for j in range(pair_ptr[i], pair_ptr[i + 1]):
            q = pair_row[j]
            ng = calls_b[q]
            if nf == 1 and ng == 1:
                c += 1.0
            else:
                c += min(nf, ng) * (4.0 + max(log_f, log_b[q]))
        cost[i + 1] = c
    for i in range(n_rows):
        cost[i + 1] += cost[i]
    cut = np.empty(n_parts + 1, np.int64)
    for p in range(n_parts + 1):
        cut[p] = np.searchsorted(cost, cost[n_rows] * p / n_parts)
    cut[0] = 0
    cut[n_parts] = n_rows
    return cut


@njit(cache=True, nogil=True)
def _overview_prepare(ptr_a, time_a, ptr_b, time_b, n_parts):
    """Prefix sums of each side's times, one-call B classes' times, and zeroed
    accumulators (sized by the calls and classes, never by the class pairs)."""
    n_a = time_a.shape[0]
    n_b = time_b.shape[0]
    m_a = n_a + ptr_a.shape[0] - 1     # difference slots: one extra per class row
    m_b = n_b + ptr_b.shape[0] - 1
    csum_a = np.zeros(n_a + 1, np.float64)
    for i in range(n_a):
        csum_a[i + 1] = csum_a[i] + time_a[i]
    csum_b = np.zeros(n_b + 1, np.float64)
    for i in range(n_b):
        csum_b[i + 1] = csum_b[i] + time_b[i]
    diff_a = np.zeros((m_a, 5), np.float64)
    diff_b = np.zeros((n_parts, m_b, 5), np.float64)
    # classes with one call (most pairs at scale join two of them): B's time and
    # sums per ROW, small enough to stay in cache, added to diff_b at the end
    n_rows_b = ptr_b.shape[0] - 1
    t1_b = np.empty(n_rows_b, np.float64)
    for q in range(n_rows_b):
        t1_b[q] = time_b[ptr_b[q]] if ptr_b[q + 1] - ptr_b[q] == 1 else np.nan
    one_b = np.zeros((n_parts, n_rows_b, 5), np.float64)
    return csum_a, csum_b, diff_a, diff_b, t1_b, one_b


@njit(cache=True, parallel=True, nogil=True)
def _overview_blocks(pair_ptr, pair_row, pair_inter, rows, size_a, size_b, ptr_a, time_a, ptr_b,
                     time_b, tol_a, tol_b, n_parts, cut, csum_a, csum_b, diff_a, diff_b, t1_b, one_b):
    """The pass over the class pairs, part by part (see `overview_bars_both`); CSR row i
    is A row ``rows[i]``; B's accumulators are one copy per part."""
    for p in prange(n_parts):
        db = diff_b[p]
        o1 = one_b[p]
        for i in range(cut[p], cut[p + 1]):
            r = rows[i]
            f0 = ptr_a[r]
            f1 = ptr_a[r + 1]
            if f0 == f1:
                continue
            if f1 - f0 == 1:
                # one call of A against one call of B: one relation each way,
                # the same float expressions as `sweep_pair`; against more calls of B,
                # `sweep_pair` at once (one pass over the row's pairs)
                t = time_a[f0]
                lo_t = t - tol_a
                hi_t = t + tol_a
                ae = 0.0
                aa = 0.0
                al = 0.0
                ac = 0.0
                ad = 0.0
                for j in range(pair_ptr[i], pair_ptr[i + 1]):
                    q = pair_row[j]
                    x = t1_b[q]
                    s = overlap_similarity(pair_inter[j], size_a[r], size_b[q])
                    if x != x:                 # NaN: B's class has more calls: sweep them
                        sweep_pair(time_a, f0, f1, r, time_b, ptr_b[q], ptr_b[q + 1], q, csum_b, s,
                                    tol_a, tol_b, diff_a, db, 1.0)
                        continue
                    # branch-free (on real times these relations are coin flips): adding
                    # 0.0, or ±1.0 · v, gives the bits of the branches they replace
                    ia = np.int64(x >= lo_t) + np.int64(x > hi_t)   # 0 earlier, 1 aligned, 2 later
                    ae += s * (ia == 0)
                    aa += s * (ia == 1)
                    al += s * (ia == 2)
                    sg = 1.0 if x >= t else -1.0
                    ac -= sg
                    ad += sg * x
                    o1[q, 3] += sg
                    o1[q, 4] -= sg * t
                    o1[q, 2 - np.int64(x + tol_b >= t) - np.int64(x - tol_b > t)] += s   # 0 earlier, 1 aligned, 2 later
                _add_point(diff_a, f0 + r, ae, aa, al, ac, ad)
                continue
            for j in range(pair_ptr[i], pair_ptr[i + 1]):
                q = pair_row[j]
                g0 = ptr_b[q]
                g1 = ptr_b[q + 1]
                if g0 == g1:
                    continue
                s = overlap_similarity(pair_inter[j], size_a[r], size_b[q])
                if f1 - f0 <= g1 - g0:
                    sweep_pair(time_a, f0, f1, r, time_b, g0, g1, q, csum_b, s, tol_a, tol_b,
                                diff_a, db, 1.0)
                elif g1 - g0 == 1:
                    _sweep_one(time_b[g0], time_a, f0, f1, r, csum_a, s, tol_b, tol_a, o1[q], diff_a)
                else:
                    sweep_pair(time_b, g0, g1, q, time_a, f0, f1, r, csum_a, s, tol_b, tol_a,
                                db, diff_a, 1.0)


@njit(cache=True, parallel=True, nogil=True)
def _overview_finish(ptr_a, time_a, ptr_b, time_b, span_a, span_b, n_bins, tau, diff_a, diff_b,
                     one_b):
    """Add the threads' B accumulators, then bin both sides."""
    n_parts = diff_b.shape[0]
    m_b = diff_b.shape[1]
    n_rows_b = ptr_b.shape[0] - 1
    for p in range(1, n_parts):
        for i in prange(m_b):
            for x in range(5):
                diff_b[0, i, x] += diff_b[p, i, x]
    for p in range(n_parts):
        for q in prange(n_rows_b):
            if ptr_b[q + 1] - ptr_b[q] == 1:
                o = one_b[p, q]
                _add_point(diff_b[0], ptr_b[q] + q, o[0], o[1], o[2], o[3], o[4])
    bars_a, delta_a = _bin_accumulated(diff_a, ptr_a, time_a, 0.0, span_a, n_bins, tau)
    bars_b, delta_b = _bin_accumulated(diff_b[0], ptr_b, time_b, 0.0, span_b, n_bins, tau)
    return bars_a, delta_a, bars_b, delta_b


def overview_bars_both(pair_ptr, pair_row, pair_inter, size_a, size_b, ptr_a, time_a, ptr_b,
                       time_b, span_a, span_b, n_bins, tol_a, tol_b, tau, n_parts=2):
    """Overview bars of BOTH traces (Sec. IV-A, Eq. 4) from A's class pairs only.

    Viewer call f at time t, partner g at x: earlier x < t − tol, later x > t +
    tol, aligned otherwise; δ = Σ|t − x| (Eq. 4); all matches counted, in one
    pass over the CSR of class pairs by A row
    (``pair_row`` = B row, overlaps ``pair_inter``), so no transposed copy is
    needed.  For each class pair the calls of the side with fewer calls are
    iterated against the other side's sorted start times
    (``time_a[ptr_a[r]:ptr_a[r+1]]`` for A row r, likewise B) by `sweep_pair`:
    O(min(n_f, n_g) · log) per pair, never the product.  A's rows are cut into
    ``n_parts`` contiguous ranges of about equal estimated work, run in
    parallel: A's accumulators are disjoint between parts (rows are), B's are
    one copy per part, added in part order at the end.  ``n_parts`` is fixed
    (not the thread count), so the sums are added in the same order on every
    machine: the result is bit-for-bit deterministic.
    Returns (bars_a, delta_a, bars_b, delta_b): bars (n_bins, 3) = aligned,
    earlier, later sums of s; delta (n_bins,).  ``tau``: the join threshold
    (every s > tau), used to restore exact zeros (`_bin_accumulated`).
    """
    n_parts = max(1, int(n_parts))
    acc = overview_start(ptr_a, time_a, ptr_b, time_b, n_parts)
    overview_add_pairs(acc, pair_ptr, pair_row, pair_inter, np.arange(pair_ptr.shape[0] - 1, dtype=np.int64),
                       size_a, size_b, ptr_a, time_a, ptr_b, time_b, tol_a, tol_b)
    return overview_finish(acc, ptr_a, time_a, ptr_b, time_b, span_a, span_b, n_bins, tau)


def overview_start(ptr_a, time_a, ptr_b, time_b, n_parts=2):
    """The accumulators of `overview_bars_both` (sized by the calls and classes), for
    feeding the class pairs in waves: `overview_start`, then `overview_add_pairs` per wave
    (any partition of A's rows into waves), then `overview_finish`.  The sums are added
    in the order of the waves and parts, so the same waves give bit-identical bars."""
    return _overview_prepare(ptr_a, time_a, ptr_b, time_b, max(1, int(n_parts)))


def overview_add_pairs(acc, pair_ptr, pair_row, pair_inter, rows, size_a, size_b, ptr_a, time_a,
                       ptr_b, time_b, tol_a, tol_b):
    """Add the matches of one wave of class pairs (a CSR whose row i is A row ``rows[i]``,
    each A row in one wave only) to the accumulators ``acc`` of `overview_start`."""
    csum_a, csum_b, diff_a, diff_b, t1_b, one_b = acc
    n_parts = diff_b.shape[0]
    rows = np.ascontiguousarray(rows, np.int64)
    cut = _overview_cut(pair_ptr, pair_row, rows, ptr_a, ptr_b, n_parts)
    _overview_blocks(pair_ptr, pair_row, pair_inter, rows, size_a, size_b, ptr_a, time_a, ptr_b, time_b,
                     tol_a, tol_b, n_parts, cut, csum_a, csum_b, diff_a, diff_b, t1_b, one_b)


def overview_finish(acc, ptr_a, time_a, ptr_b, time_b, span_a, span_b, n_bins, tau):
    """(bars_a, delta_a, bars_b, delta_b) from the accumulators of `overview_start`."""
    csum_a, csum_b, diff_a, diff_b, t1_b, one_b = acc
    return _overview_finish(ptr_a, time_a, ptr_b, time_b, span_a, span_b, n_bins, tau, diff_a,
                            diff_b, one_b)
