"""The tree join fused with what the comparison needs from its class pairs:
`jaccard_join_tree_fused` (TraceDiff Sec. III, Eq. 2 and 3; Sec. IV-A).

`setjoin_tree.jaccard_join_tree_waves` writes every class pair (x, y) with J > τ (6 bytes) to
a wave buffer that three passes then read back: the similarity tiers (`setjoin_tiers`), the
overview (`overview`), a cut of the work.  At 10^6 calls of the synthetic pair that is 521M
pairs, 3 GB written and read three times.  Here the walk of `setjoin_walk._tree_item`
(counters inherited along A's heir forest, readout over the size window) hands each row's
matches, still in cache, to `setjoin_rowtiers.row_tiers` and `overview_rows.row_overview`:
the pairs are never stored.  The results are those of the waves: the same class pairs, tiers,
partner and call-pair counts (exact), the same overview bars up to the order of float sums.

Parallel and deterministic: the work items of the join plan (`setjoin_tree._join_plan`) are
dealt to a FIXED number of parts (`FUSED_PARTS`, by estimated cost, largest first, each to
the least loaded part), each part walks its items in order with its own accumulators (column
tier lists, overview bins and B difference array), and the parts run on a pool of threads
(the kernels release the GIL) and are added in part order.  The result does not depend on
the number of threads.  Memory: per part the counters of the walk ((forest height + 1) × |B
classes|), the column lists (k similarities and counts per B class) and the overview's B
difference array (40 bytes per call of B); never the class pairs.

Where the time goes (issue 26; 10^6 synthetic pair, 521M class pairs, one thread, CPU s of
ablated copies on 2 shared cores, ±15 % between runs): the walk without consumers ~12 (the
counters' increments ~8.8: 5.7·10^9 postings of the rows' deltas, 47k tail rows hold 4.2·10^9,
mostly of the ~500 most frequent functions, spread so that no few of them dominate: 64 hold
60 %; the readout's window scans and emission ~3); the tiers +5.5; the overview +21, by the
kind of pair: one-call A × one-call B 416M pairs ~5–7, one-call A × several-call B 36M ~6–7
(~150 ns a pair: cache misses into B's per-call times, prefix sums and difference array),
several × one 62M ~2.5–3.5, several × several 8M ~2.5–3.5.  Tried and dropped: deferring the
pairs against several-call B classes as per-call events (50M), counting-sorted by class and
swept per class: slower (37–39 s against 31–32), its flush alone ~100 ns an event (scatter
~20, per-class sorts ~30, sweeps ~50) on this machine.

Past compare's overview budget (``overview_theta`` > 1) the overview takes a threshold
sample of each row's matches (`overview_rows.sample_matches`; the heavy matches it keeps for
certain sweep a sample of their calls, `overview_rows.sweep_pair_sampled`); the tiers, counts
and partners still take every match.  Stop 58, the same synthetic pair, wall seconds of the
join on 2 cores: exact 12.4–14.3, θ = 55 (the default budget, 2·10^7 matches visited)
9.7, the sample's pass alone (θ huge) 7.7, the overview left out altogether 6.7–7.2.  At
10^7 calls (4.7·10^9 class pairs): exact 210, θ = 467 118.5 (walk 109.5), the sample's pass
alone walk 104.8, no overview walk 94.7; the sample's decisions taken inside `row_tiers`' pass
(the records' loop, memory-bound at that size) made its walk 115.4 s.

Stop 59, 10^7 calls (211k A rows, 533k B rows, windows of 368k B rows on average: 7.8·10^10
counters read out, 6.2·10^10 delta postings counted, 4.7·10^9 matches), the walk 109.5 → 85 s:
- the column records shrank from 32 to 16 bytes (`setjoin_rowtiers.COLUMN_DTYPE`; the
  overview's one-call time and bin are arrays of their own, read only for the sampled
  matches): the two running parts' records (2 × 17 MB) had outgrown the 32 MB L3; walk
  109.5 → 96 s;
- B's frequent elements are added through membership rows where their postings fill 1/8 of
  the window (`setjoin_walk.DENSE_RATIO`): 81 % of the postings are in windows they fill to
  1/16 or more; walk 96 → 85-88 s.  A single-thread replay of an eighth of the rows (counting
  and readout only) puts the rest at: counting 6.2 s, readout 4.8 s (4.4 s with the flags
  kept in L1 by blocks of 1024, not taken: 10 %), i.e. ~90 s of the ~170 s of CPU; the
  consumers the other ~80.
"""
import concurrent.futures
import time

import numba
import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.typed import List

from .overview_rows import overview_row_constants, overview_rows_finish, row_keys, row_overview, sample_matches
from .setjoin import _lower_bound, min_overlap
from .setjoin_rowtiers import column_records, finish_row_tiers, prune_candidates, row_tiers
from .setjoin_walk import SPARSE_RATIO, _add_postings, _flag_matches, _next_row, _postings_in, _set_frame

#: parts the rows of A are dealt to (fixed, so the sums are added in the same order on every
#: machine); each holds its own accumulators (about 40 bytes per call of B)
FUSED_PARTS = 4


@njit(cache=True, nogil=True)
def _row_matches(nx, k0, k1, tau, b_size_sorted, run_end, cnt, flags, mk, mi):
    """The B sets (size ranks kk in [k0, k1), ascending) that match a row of |x| = nx from its
    exact overlaps ``cnt``: cnt[kk] ≥ `setjoin.min_overlap`(nx, |y|, τ) (⇔ J > τ in float64),
    flagged as `setjoin_walk._readout` flags them (`_flag_matches`), the flags then read 8 at a
    time and cleared.  Writes (kk, overlap) to ``mk`` / ``mi``; returns their number."""
    _flag_matches(nx, k0, k1, tau, b_size_sorted, run_end, cnt, flags)
    fw = flags.view(np.uint64)
    n = 0
    for w in range(k0 >> 3, (k1 + 7) >> 3):
        word = fw[w]
        if word == np.uint64(0):
            continue
        fw[w] = np.uint64(0)
        while word != np.uint64(0):
            kk = (w << 3) + (np.int64(trailing_zeros(word)) >> 3)
            mk[n] = kk
            mi[n] = cnt[kk]
            n += 1
            word &= word - np.uint64(1)
    return n


@njit(cache=True, nogil=True)
def _sparse_matches(nx, items, lo, hi, post_ptr, post_k, k0, k1, tau, b_size_sorted, cnt, touched, mk, mi):
    """`_row_matches` of a row counted from scratch through the sets its postings touch (as
    `setjoin_walk._sparse_root`): ``cnt`` is zero over [k0, k1) before and after."""
    n_t = 0
    for j in range(lo, hi):
        e = items[j]
        p0 = _lower_bound(post_k, post_ptr[e], post_ptr[e + 1], k0)
        p1 = _lower_bound(post_k, p0, post_ptr[e + 1], k1)
        for p in range(p0, p1):
            k = post_k[p]
            if cnt[k] == 0:
                touched[n_t] = k
                n_t += 1
            cnt[k] += 1
    need_c = np.empty(1, cnt.dtype)
    n = 0
    for t in range(n_t):
        k = touched[t]
        need_c[0] = min_overlap(nx, b_size_sorted[k], tau)
        if cnt[k] >= need_c[0]:
            mk[n] = k
            n += 1
    mk[:n].sort()
    for j in range(n):
        mi[j] = cnt[mk[j]]
    for t in range(n_t):
        cnt[touched[t]] = 0
    return n


@njit(cache=True, nogil=True)
def _room(lst, i, need):
    """``lst[i]`` with room for at least ``need`` entries (doubled and copied when short)."""
    a = lst[i]
    if a.shape[0] < need:
        b = np.empty(max(need, 2 * a.shape[0]), a.dtype)
        b[:a.shape[0]] = a
        lst[i] = b
        a = b
    return a


@njit(cache=True, nogil=True)
def _consume(v, n, mk, mi, mapping, tc, ts_, oc, os_, sc, out):
    """Row v's matches (size ranks ``mk[:n]``, overlaps ``mi[:n]``) to the tiers
    (`setjoin_rowtiers.row_tiers`), the counts and the overview (`overview_rows.row_overview`);
    its tier entries and column candidates appended to the part's growing outputs."""
    if n == 0:
        return
    b_by_size, direct = mapping
    mq, ms, rs, rn, tq, tsim, cq, cs = sc
    size_a, count_a, k = tc
    cols, col_s, col_n, col_nt, partners_row, calls = ts_
    l32, l64, lf, cur = out
    if direct:
        mq = mk                        # B rows are numbered by size rank
    else:
        for j in range(n):
            mk[j] = b_by_size[mk[j]]
        order = np.argsort(mk[:n], kind="mergesort")
        mi_c = mi[:n].copy()
        for j in range(n):
            mq[j] = mk[order[j]]
            mi[j] = mi_c[order[j]]
    ptr_a, time_a, csum_a, bin_a, ptr_b, time_b, csum_b, tol_a, tol_b, key_a, inv_theta, x1_b, bin1_b = oc
    loc, bins_a, bins_b1, diff_b, oq, os2, ou, ones, mc = os_
    n_t, nc, w = row_tiers(v, n, mq, mi, ms, size_a[v], count_a[v], cols, k, col_s, col_n, col_nt, rs, rn, tq,
                           tsim, cq, cs, mc)
    partners_row[v] += w
    calls[0] += w * count_a[v]
    calls[1] += n
    if inv_theta > 0.0:
        # past the overview's budget: a threshold sample of the row's matches, weighted
        n_o = sample_matches(n, mq, ms, mc, count_a[v], key_a[v, 0], key_a[v, 1], inv_theta, oq, os2, ou)
        calls[2] += n_o
        row_overview(v, n_o, oq, os2, ou, x1_b, bin1_b, ptr_a, time_a, csum_a, bin_a, ptr_b, time_b, csum_b, tol_a, tol_b,
                     loc, bins_a, bins_b1, diff_b, inv_theta, key_a[v, 0])
    else:
        calls[2] += n
        row_overview(v, n, mq, ms, ones, x1_b, bin1_b, ptr_a, time_a, csum_a, bin_a, ptr_b, time_b, csum_b, tol_a, tol_b,
                     loc, bins_a, bins_b1, diff_b, 0.0, np.uint64(0))
    # outputs: l32 = [rows, tier B rows, candidate columns, candidate rows], l64 = [tier lengths],
    # lf = [tier similarities, candidate similarities]; cur = [rows, entries, candidates, after last prune]
    r0, e0, c0 = cur[0], cur[1], cur[2]
    _room(l32, 0, r0 + 1)[r0] = v
    _room(l64, 0, r0 + 1)[r0] = n_t
    _room(l32, 1, e0 + n_t)[e0:e0 + n_t] = tq[:n_t]
    _room(lf, 0, e0 + n_t)[e0:e0 + n_t] = tsim[:n_t]
    _room(l32, 2, c0 + nc)[c0:c0 + nc] = cq[:nc]
    _room(l32, 3, c0 + nc)[c0:c0 + nc] = v
    _room(lf, 1, c0 + nc)[c0:c0 + nc] = cs[:nc]
    cur[0] = r0 + 1
    cur[1] = e0 + n_t
    cur[2] = c0 + nc
    if cur[2] > max(1 << 20, 2 * cur[3]):
        cur[2] = cur[3] = prune_candidates(l32[2], l32[3], lf[1], cur[2], cols)


@njit(cache=True, nogil=True)
def _fused_item(root, single, wk, bufs, frames, flags, touched, dirty, mk, mi, mapping, tc, ts_, oc, os_, sc, out):
    """One work item of the join (the heir-forest subtree of ``root``, or ``root`` alone when
    ``single``) walked as `setjoin_walk._tree_item` walks it (counters in place for the last
    child, shared-then-undone for light deltas, copied for heavy ones; a sparse root through
    the sets its postings touch), every row's matches consumed (`_consume`) as soon as read."""
    (a_ptr, a_items, d_ptr, d_items, d_cost, kid_ptr, kids, tau, post_ptr, post_k, k_lo, k_hi, own_hi,
     b_size_sorted, run_end, copy_ratio, dense_row, dense_map) = wk
    lo = k_lo[root]
    hi = own_hi[root] if single else k_hi[root]
    cnt0 = bufs[0]
    nx = a_ptr[root + 1] - a_ptr[root]
    if single or kid_ptr[root] == kid_ptr[root + 1]:
        k1 = own_hi[root]
        if _postings_in(a_items, a_ptr[root], a_ptr[root + 1], post_ptr, post_k, lo, k1) * SPARSE_RATIO < k1 - lo:
            if dirty[0] < dirty[1]:
                cnt0[dirty[0]:dirty[1]] = 0
                dirty[0] = 0
                dirty[1] = 0
            n = _sparse_matches(nx, a_items, a_ptr[root], a_ptr[root + 1], post_ptr, post_k, lo, k1, tau,
                                b_size_sorted, cnt0, touched, mk, mi)
            _consume(root, n, mk, mi, mapping, tc, ts_, oc, os_, sc, out)
            return
    dirty[0] = min(dirty[0], lo) if dirty[0] < dirty[1] else lo
    dirty[1] = max(dirty[1], hi)
    cnt0[lo:hi] = 0
    _add_postings(a_items, a_ptr[root], a_ptr[root + 1], post_ptr, post_k, lo, hi, cnt0, 1, dense_row, dense_map)
    n = _row_matches(nx, k_lo[root], own_hi[root], tau, b_size_sorted, run_end, cnt0, flags, mk, mi)
    _consume(root, n, mk, mi, mapping, tc, ts_, oc, os_, sc, out)
    if single:
        return
    _set_frame(frames, 0, root, kid_ptr[root], 0, 1, 0, 0)
    sp = 1
    n_bufs = 1
    while True:
        w, b, sp, n_bufs = _next_row(frames, sp, n_bufs, bufs, kids, kid_ptr, d_items, d_ptr, d_cost, post_ptr,
                                     post_k, k_lo, k_hi, copy_ratio, dense_row, dense_map)
        if w < 0:
            return
        n = _row_matches(a_ptr[w + 1] - a_ptr[w], k_lo[w], own_hi[w], tau, b_size_sorted, run_end, bufs[b], flags,
                         mk, mi)
        _consume(w, n, mk, mi, mapping, tc, ts_, oc, os_, sc, out)


@njit(cache=True, nogil=True)
def _fused_part(roots, singles, height, odt, wk, mapping, tc, ts_, oc, os_):
    """The work items ``roots`` / ``singles`` of one part, in order (`_fused_item`), with this
    part's walk buffers and outputs.  Returns (rows, tier lengths, tier B rows, tier
    similarities, candidate columns, candidate rows, candidate similarities), the rows in the
    order walked, the candidates pruned to the part's cutoffs."""
    nb = wk[13].shape[0]
    k = tc[2]
    bufs = np.empty((height + 1, nb), odt.dtype)
    frames = np.empty((height + 1, 6), np.int64)
    flags = np.zeros(((nb >> 3) + 2) * 8, np.uint8)
    touched = np.empty(nb, np.int64)
    dirty = np.zeros(2, np.int64)
    dirty[1] = nb
    mk = np.empty(nb, np.int32)
    mi = np.empty(nb, odt.dtype)
    sc = (np.empty(nb, np.int32), np.empty(nb, np.float64), np.empty(k, np.float64), np.empty(k, np.int64),
          np.empty(nb, np.int32), np.empty(nb, np.float64), np.empty(nb, np.int32), np.empty(nb, np.float64))
    l32 = List()
    for _ in range(4):
        l32.append(np.empty(1024, np.int32))
    l64 = List()
    l64.append(np.empty(1024, np.int64))
    lf = List()
    for _ in range(2):
        lf.append(np.empty(1024, np.float64))
    cur = np.zeros(4, np.int64)
    out = (l32, l64, lf, cur)
    for i in range(roots.shape[0]):
        _fused_item(roots[i], singles[i], wk, bufs, frames, flags, touched, dirty, mk, mi, mapping, tc, ts_, oc,
                    os_, sc, out)
    n_c = prune_candidates(l32[2], l32[3], lf[1], cur[2], ts_[0])
    return (l32[0][:cur[0]].copy(), l64[0][:cur[0]].copy(), l32[1][:cur[1]].copy(), lf[0][:cur[1]].copy(),
            l32[2][:n_c].copy(), l32[3][:n_c].copy(), lf[1][:n_c].copy())


@njit(cache=True, nogil=True)
def item_costs(item_root, item_single, kid_ptr, kids, row_cost):
    """Estimated work of each item: Σ ``row_cost`` over the rows it walks (its root alone when
    single, else the root's whole heir-forest subtree)."""
    n = item_root.shape[0]
    cost = np.zeros(n, np.float64)
    stack = np.empty(kid_ptr.shape[0], np.int64)
    for i in range(n):
        if item_single[i]:
            cost[i] = row_cost[item_root[i]]
            continue
        sp = 1
        stack[0] = item_root[i]
        c = 0.0
        while sp > 0:
            sp -= 1
            v = stack[sp]
            c += row_cost[v]
            for j in range(kid_ptr[v], kid_ptr[v + 1]):
                stack[sp] = kids[j]
                sp += 1
        cost[i] = c
    return cost


def deal_items(cost, n_parts):
    """Items to parts: largest estimated cost first, each to the part with the least so far
    (ties: lower part); each part's items in ascending order.  Returns a list of index arrays."""
    order = np.argsort(-cost, kind="stable")
    load = np.zeros(n_parts)
    owner = np.empty(cost.shape[0], np.int64)
    for i in order.tolist():
        p = int(np.argmin(load))
        owner[i] = p
        load[p] += cost[i]
    return [np.flatnonzero(owner == p) for p in range(n_parts)]


def fused_part_bytes(height, n_rows_b, n_calls_b, max_calls_a, k, overlap_bytes=2):
    """Bytes one part of `jaccard_join_tree_fused` holds beyond its outputs: the walk's counters
    and scratch, the column lists and the overview's B difference array (what `compare`'s
    memory check adds per part)."""
    return int((height + 1) * n_rows_b * overlap_bytes + n_rows_b * (16 * k + 96)
               + 40 * (n_calls_b + n_rows_b) + 40 * (max_calls_a + 1))


def jaccard_join_tree_fused(plan, size_a, size_b, count_a, count_b, k, ptr_a, time_a, ptr_b, time_b, span_a,
                            span_b, n_bins, tol_a, tol_b, tau, n_parts=FUSED_PARTS, n_threads=None, stats=None,
                            overview_theta=1.0):
    """The class pairs of the tree join (`setjoin_tree._join_plan`: rows = A's classes,
    ``size_a``/``count_a`` their |Γ| and calls; B's likewise, numbered as the plan's B rows)
    consumed as they are read, never stored (see the module docstring).  Returns a dict:
    ``class_pairs`` (how many, J > τ), ``call_pairs`` (Σ count_a · count_b over them),
    ``tiers`` (``(tptr_r, tother_r, tsim_r, tptr_c, trow_c, tsim_c)`` as
    `setjoin_tiers.TierStream.finish`), ``partners_row`` / ``partners_col`` (per class: the
    calls of the other side it matches), ``overview`` ((bars_a, delta_a, bars_b, delta_b) as
    `overview.overview_finish`: calls of A at ``time_a[ptr_a[r]:ptr_a[r+1]]`` per row, sorted;
    B likewise; exact when ``overview_theta`` ≤ 1, else estimated from the threshold sample of
    the matches `overview_rows.sample_matches` takes at that θ: ``overview_pairs`` says how
    many class pairs it visited).  ``n_parts`` fixed parts (`FUSED_PARTS`) on ``n_threads`` threads (default
    numba's): the same result for any number of threads.  ``stats``: receives the seconds of
    the walk and of the finish, the parts' estimated loads and seconds."""
    t0 = time.perf_counter()
    p = plan
    na, nb = p["na"], p["nb"]
    n_parts = max(1, int(n_parts))
    k = int(k)
    # the estimated work of each item: its rows' windows and delta postings, a root's postings
    plen = np.diff(p["post_ptr"]).astype(np.float64)
    row_cost = (p["own_hi"] - p["k_lo"]).astype(np.float64) + p["d_cost"]
    roots = p["item_root"]
    row_cost_root = row_cost.copy()
    a_ptr, a_items = p["a_ptr"], p["a_items"]
    full = np.add.reduceat(plen[a_items], a_ptr[:-1]) if a_items.size else np.zeros(na)
    full[np.diff(a_ptr) == 0] = 0.0
    row_cost_root[roots] += full[roots]
    cost = item_costs(roots, p["item_single"], p["kid_ptr"], p["kids"], row_cost_root)
    parts = deal_items(cost, n_parts)
    wk = (p["a_ptr"], p["a_items"], p["d_ptr"], p["d_items"], p["d_cost"], p["kid_ptr"], p["kids"], float(tau),
          p["post_ptr"], p["post_k"], p["k_lo"], p["k_hi"], p["own_hi"], p["b_size_sorted"], p["run_end"], 0.25,
          p["dense_row"], p["dense_map"])
    mapping = (p["b_by_size"].astype(np.int32), bool(p["direct"]))
    tc = (np.ascontiguousarray(size_a, np.int64), np.ascontiguousarray(count_a, np.int64), k)
    csum_a, bin_a, csum_b, x1_b, bin1_b = overview_row_constants(ptr_a, time_a, ptr_b, time_b, float(span_a),
                                                                 float(span_b), int(n_bins))
    # A's row keys of `overview_rows.sample_matches` when it samples (empty: exact)
    key_a = row_keys(na) if overview_theta > 1.0 else np.zeros((0, 2), np.uint64)
    oc = (ptr_a, time_a, csum_a, bin_a, ptr_b, time_b, csum_b, float(tol_a), float(tol_b), key_a,
          1.0 / float(overview_theta) if overview_theta > 1.0 else 0.0, x1_b, bin1_b)
    partners_row = np.zeros(na, np.int64)          # rows are disjoint between parts
    max_calls_a = int(np.diff(ptr_a).max()) if na else 0
    odt = np.zeros(0, p["odt"])
    states = []
    for _ in range(n_parts):
        ts_ = (column_records(size_b, count_b, int(count_a.sum())), np.empty((nb, k)), np.empty((nb, k), np.int64),
               np.zeros(nb, np.int64), partners_row, np.zeros(3, np.int64))
        os_ = (np.empty((max_calls_a + 1, 5)), np.zeros((int(n_bins), 4)), np.zeros((int(n_bins), 4)),
               np.zeros((time_b.shape[0] + nb, 5)), np.empty(nb, np.int32), np.empty(nb), np.empty(nb),
               np.ones(nb), np.empty(nb, np.int32))
        states.append((ts_, os_))
    seconds = [0.0] * n_parts

    def run(i):
        t = time.perf_counter()
        ts_, os_ = states[i]
        sel = parts[i]
        out = _fused_part(np.ascontiguousarray(roots[sel], np.int32), np.ascontiguousarray(p["item_single"][sel]),
                          int(p["height"]), odt, wk, mapping, tc, ts_, oc, os_)
        seconds[i] = time.perf_counter() - t
        return out

    n_threads = numba.get_num_threads() if n_threads is None else int(n_threads)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(n_parts, n_threads))) as pool:
        outs = list(pool.map(run, range(n_parts)))
    t1 = time.perf_counter()
    pieces = []
    for (ts_, _), o in zip(states, outs):
        pieces.append(dict(rows=o[0], row_len=o[1], tq=o[2], ts=o[3], cq=o[4], cr=o[5], cs=o[6], col_s=ts_[1],
                           col_n=ts_[2], col_nt=ts_[3]))
    tiers = finish_row_tiers(na, nb, k, pieces)
    del pieces
    partners_col = np.sum([ts_[0]["calls"].astype(np.int64) for ts_, _ in states], axis=0)
    calls = np.sum([ts_[5] for ts_, _ in states], axis=0)
    overview = overview_rows_finish([os_[1] for _, os_ in states], [os_[2] for _, os_ in states],
                                    [os_[3] for _, os_ in states], ptr_b, time_b, float(span_b), int(n_bins), tau)
    if stats is not None:
        stats.update(walk_s=t1 - t0, finish_s=time.perf_counter() - t1, parts=n_parts,
                     part_cost=[float(cost[s].sum()) for s in parts], part_s=seconds)
    return dict(class_pairs=int(calls[1]), call_pairs=int(calls[0]), tiers=tiers, partners_row=partners_row,
                partners_col=partners_col, overview=overview, overview_pairs=int(calls[2]))
