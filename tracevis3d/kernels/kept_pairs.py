"""The kept call pairs of a comparison in compact arrays (TraceDiff Sec. III, IV-D):
`calls_by_class_time`, `top_k_picks`, `picks_by_call`, `union_of_picks` (`union_count`,
`union_fill`), `fill_pair_fields`.

Two traces can hold ~10^10 call pairs above τ, so call pairs are *kept* under a bound: each
call's k best partners (`top_k_picks`), and the union of both sides' picks (`union_of_picks`),
found tier by tier of the class-level join without ever enumerating all call pairs.  Little is
held per call and per pair, so that 10^8 calls fit:
- no per-call copies of the start times: a call's time is ``start[x] − t0`` and its relative
  start ``(start[x] − t0) / denom`` (``denom`` = the trace's span, 1 when it is 0), computed
  where they are read (float64);
- call order as int32 (a trace holds fewer than 2^31 calls);
- a pick's similarity as its position in the tier arrays of `setjoin_tiers` (int32 where they
  are shorter than 2^31; the similarity is ``tier_sim[pos]``), a pair's as a signed position
  (``pos`` ≥ 0: A's tiers, ``~pos``: B's), 4 bytes instead of 8;
- the union counted first and written once at its exact size (no oversized buffer and copy),
  a range of A's calls at a time, so that the picks it has read can be given back as it goes.
tests/unit/test_kept_pairs.py holds them to plain-Python twins.
"""
import numpy as np
from numba import njit, prange

from .tree import group_by_key_into


@njit(cache=True, nogil=True, inline="always")
def _insert_best(best_v, best_d, nbest, cap, v, d):
    """Insert (d, v) into the list sorted by (d, v) holding at most ``cap``."""
    if nbest == cap:
        lv = best_v[nbest - 1]
        ld = best_d[nbest - 1]
        if d > ld or (d == ld and v >= lv):
            return nbest
        nbest -= 1
    j = nbest
    while j > 0 and (best_d[j - 1] > d or (best_d[j - 1] == d and best_v[j - 1] > v)):
        best_v[j] = best_v[j - 1]
        best_d[j] = best_d[j - 1]
        j -= 1
    best_v[j] = v
    best_d[j] = d
    return nbest + 1


@njit(cache=True, nogil=True, inline="always")
def _time_lower_bound(time, lo, hi, denom, t):
    """Smallest j in [lo, hi) with time[j] / denom >= t (hi if none); time sorted ascending
    (the relative starts ``time / denom`` of the other trace's calls, each computed where it
    is read)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if time[mid] / denom >= t:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True, nogil=True)
def calls_by_class_time(row_of_call, n_rows, start, t0):
    """Calls grouped by class row, each group by (time, call index) ascending, time =
    ``start[x] − t0``: returns (order (int32), ptr, time by position (float64)), the calls of
    row r at order[ptr[r]:ptr[r+1]] with their times at the same positions: a stable
    counting sort by row (`tree.group_by_key_into`), then each group stably by time (the
    order of np.lexsort((index, time, row))), with the times taken where they are read
    instead of from a per-call array."""
    n = row_of_call.shape[0]
    order = np.empty(n, np.int32)
    ptr = group_by_key_into(row_of_call, n_rows, order)
    time = np.empty(n, np.float64)
    for r in range(n_rows):
        lo = ptr[r]
        hi = ptr[r + 1]
        for j in range(lo, hi):
            time[j] = start[order[j]] - t0
        if hi - lo < 2:
            continue
        if hi - lo <= 16:
            for j in range(lo + 1, hi):        # insertion sort, stable
                x = order[j]
                t = time[j]
                k = j
                while k > lo and time[k - 1] > t:
                    order[k] = order[k - 1]
                    time[k] = time[k - 1]
                    k -= 1
                order[k] = x
                time[k] = t
        else:
            seg = order[lo:hi].copy()
            ts = time[lo:hi].copy()
            o = np.argsort(ts, kind="mergesort")
            for j in range(hi - lo):
                order[lo + j] = seg[o[j]]
                time[lo + j] = ts[o[j]]
    return order, ptr, time


@njit(cache=True, parallel=True, nogil=True)
def top_k_picks(row_of_call, start, t0, denom, pair_ptr, pair_row, pair_sim, other_ptr, other_call, other_time,
                other_denom, k, order, partner, pos):
    """The k best partners of every call (the call-pair bound: similarity desc, then
    |rel(u) − rel(v)| asc, then v asc; rel = start time relative to its trace's span), written into ``partner`` (n, k) int32 and ``pos`` (n, k): the position in
    ``pair_sim`` of the partner's tier (its similarity is ``pair_sim[pos]``); −1 where fewer
    exist.  rel(u) = (start[u] − t0) / denom; the calls of class q of the other trace are
    ``other_call[other_ptr[q]:other_ptr[q+1]]`` with times ``other_time`` (same positions,
    ascending), rel = other_time / other_denom.  Tier by tier of equal similarity, from each
    class only the calls nearest in time (binary search, then outward): O(#classes of the tiers
    used × (log + k)) per call, never the number of call pairs.  Calls visited in ``order`` in
    256 consecutive chunks: by class and time (`calls_by_class_time`), neighbours share their
    candidate classes and search the same stretch of them."""
    n = row_of_call.shape[0]
    n_chunks = 256
    for ch in prange(n_chunks):
        best_v = np.empty(k, np.int64)
        best_d = np.empty(k, np.float64)
        for iu in range(ch * n // n_chunks, (ch + 1) * n // n_chunks):
            u = order[iu]
            for i in range(k):
                partner[u, i] = -1
                pos[u, i] = -1
            r = row_of_call[u]
            if r < 0:
                continue
            t = (start[u] - t0) / denom
            filled = 0
            j = pair_ptr[r]
            j_end = pair_ptr[r + 1]
            while j < j_end and filled < k:
                s = pair_sim[j]
                tier_end = j
                while tier_end < j_end and pair_sim[tier_end] == s:
                    tier_end += 1
                need = k - filled
                nbest = 0
                for jj in range(j, tier_end):
                    q = pair_row[jj]
                    lo = other_ptr[q]
                    hi = other_ptr[q + 1]
                    a = _time_lower_bound(other_time, lo, hi, other_denom, t)
                    left = a - 1
                    right = a
                    taken = 0
                    last_d = -1.0
                    while left >= lo or right < hi:
                        dl = t - other_time[left] / other_denom if left >= lo else np.inf
                        dr = other_time[right] / other_denom - t if right < hi else np.inf
                        if dl <= dr:
                            d = dl
                            v = other_call[left]
                            left -= 1
                        else:
                            d = dr
                            v = other_call[right]
                            right += 1
                        if taken >= need and d > last_d:
                            break
                        nbest = _insert_best(best_v, best_d, nbest, need, v, d)
                        taken += 1
                        last_d = d
                for i in range(nbest):
                    partner[u, filled + i] = best_v[i]
                    pos[u, filled + i] = j
                filled += nbest
                j = tier_end


@njit(cache=True, nogil=True)
def picks_by_call(partner_of_b, pos_of_b, n_a, rv, rp):
    """B's picks grouped by their call of A (a stable counting sort) into ``rv`` / ``rp`` (room
    for every pick): returns ptr, the picks (v, pos) of call u of A at [ptr[u], ptr[u+1]),
    v ascending.  The counts' offsets serve as the fill cursors (no second array of them)."""
    n_b, k = partner_of_b.shape
    ptr = np.zeros(n_a + 2, np.int64)
    for v in range(n_b):
        for i in range(k):
            u = partner_of_b[v, i]
            if u >= 0:
                ptr[u + 2] += 1
    for u in range(n_a):
        ptr[u + 2] += ptr[u + 1]
    for v in range(n_b):                   # ptr[u + 1]: the next free place of u's picks
        for i in range(k):
            u = partner_of_b[v, i]
            if u >= 0:
                j = ptr[u + 1]
                rv[j] = v
                rp[j] = pos_of_b[v, i]
                ptr[u + 1] = j + 1
    return ptr[:n_a + 1]


@njit(cache=True, nogil=True, inline="always")
def _own_sorted(partner_of_a, pos_of_a, u, own_v, own_p):
    """Call u's own picks (v, pos) sorted by v into own_v / own_p; returns their number."""
    k = partner_of_a.shape[1]
    n_own = 0
    for i in range(k):
        v = partner_of_a[u, i]
        if v < 0:
            continue
        j = n_own
        while j > 0 and own_v[j - 1] > v:
            own_v[j] = own_v[j - 1]
            own_p[j] = own_p[j - 1]
            j -= 1
        own_v[j] = v
        own_p[j] = pos_of_a[u, i]
        n_own += 1
    return n_own


@njit(cache=True, nogil=True, inline="always")
def _union_walk(partner_of_a, pos_of_a, rptr, rv, rp, u0, u1, out_a, out_b, out_p, m, write):
    """The kept call pairs of the calls u0 ≤ u < u1 of A, {(u, partner_of_a[u, i])} ∪ {(u, v) :
    v's picks}, each once, by (a, b): u's own picks (sorted) merged with B's picks of u
    (`picks_by_call`), written at ``m`` on when ``write`` (else only counted); pair_pos = the
    similarity's tier position, A's own (≥ 0, into A's tier similarities) where u picked v,
    else ``~pos`` of B's pick (into B's).  Returns the next m."""
    k = partner_of_a.shape[1]
    own_v = np.empty(k, np.int64)
    own_p = np.empty(k, np.int64)
    for u in range(u0, u1):
        n_own = _own_sorted(partner_of_a, pos_of_a, u, own_v, own_p)
        i = 0
        j = rptr[u]
        j_end = rptr[u + 1]
        last = -1
        while i < n_own or j < j_end:
            if j >= j_end or (i < n_own and own_v[i] <= rv[j]):
                v = own_v[i]
                p = own_p[i]
                i += 1
            else:
                v = rv[j]
                p = ~np.int64(rp[j]) if write else np.int64(0)
                j += 1
            if v != last:
                if write:
                    out_a[m] = u
                    out_b[m] = v
                    out_p[m] = p
                m += 1
                last = v
    return m


@njit(cache=True, nogil=True)
def union_count(partner_of_a, pos_of_a, rptr, rv, u0, u1):
    """How many pairs `union_fill` writes for the calls u0 ≤ u < u1 of A."""
    none = np.empty(0, np.int32)
    return _union_walk(partner_of_a, pos_of_a, rptr, rv, none, u0, u1, none, none, none, 0, False)


@njit(cache=True, nogil=True)
def union_fill(partner_of_a, pos_of_a, rptr, rv, rp, u0, u1, out_a, out_b, out_p, m):
    """The kept call pairs of the calls u0 ≤ u < u1 of A (`_union_walk`), written at ``m`` on;
    returns the next m."""
    return _union_walk(partner_of_a, pos_of_a, rptr, rv, rp, u0, u1, out_a, out_b, out_p, m, True)


def union_of_picks(partner_of_a, pos_of_a, rptr, rv, rp, chunk=None, consumed=None):
    """The kept call pairs of every call of A (`union_fill`): returns (pair_a, pair_b, pair_pos),
    counted first (`union_count`) and written once at their exact size, ``chunk`` calls of A at a
    time (default all); ``consumed(u0, u1)`` is called after each, when those calls' picks are
    read no more (the caller may give their pages back)."""
    n_a = partner_of_a.shape[0]
    chunk = max(1, n_a if chunk is None else int(chunk))
    cuts = list(range(0, n_a, chunk)) + [n_a]
    counts = [union_count(partner_of_a, pos_of_a, rptr, rv, u0, u1) for u0, u1 in zip(cuts[:-1], cuts[1:])]
    m = int(sum(counts))
    out_a, out_b, out_p = np.empty(m, np.int32), np.empty(m, np.int32), np.empty(m, rp.dtype)
    at = 0
    for u0, u1 in zip(cuts[:-1], cuts[1:]):
        at = union_fill(partner_of_a, pos_of_a, rptr, rv, rp, u0, u1, out_a, out_b, out_p, at)
        if consumed is not None:
            consumed(u0, u1)
    return out_a, out_b, out_p


@njit(cache=True, parallel=True, nogil=True)
def fill_pair_fields(i0, i1, pair_a, pair_b, pair_pos, sim_a, sim_b, group, root_a, root_b, start_a, end_a,
                     start_b, end_b, t0_a, t0_b, out_a, out_b, out_sim, out_group, dt, rel_a, rel_b):
    """Fields of the kept pairs i0 ≤ i < i1 written at out[i − i0]: calls, similarity (``sim_a[pos]``, or ``sim_b[~pos]`` for a negative position),
    group, dt = |t_s(a) − t_s(b)| with each time from its trace's first start (TraceDiff
    Sec. IV-D, permutation colouring) and each side's start relative to its group root,
    rel = (t_s(call) − t_s(root)) / (t_e(root) − t_s(root)), 0 for a zero-length root
    (trace-centric colouring)."""
    for i in prange(i0, i1):
        o = i - i0
        u = pair_a[i]
        v = pair_b[i]
        g = group[i]
        p = np.int64(pair_pos[i])
        out_a[o] = u
        out_b[o] = v
        out_sim[o] = sim_a[p] if p >= 0 else sim_b[~p]
        out_group[o] = g
        dt[o] = abs((start_a[u] - t0_a) - (start_b[v] - t0_b))
        ga = root_a[g]
        gb = root_b[g]
        da = end_a[ga] - start_a[ga]
        db = end_b[gb] - start_b[gb]
        rel_a[o] = (start_a[u] - start_a[ga]) / da if da > 0 else 0.0
        rel_b[o] = (start_b[v] - start_b[gb]) / db if db > 0 else 0.0
