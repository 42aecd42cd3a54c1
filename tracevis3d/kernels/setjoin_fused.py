"""The tree join fused with what the comparison needs from its class pairs:
`jaccard_join_tree_fused` (TraceDiff Sec. III, Eq. 2 and 3; Sec. IV-A).

`setjoin_tree.jaccard_join_tree_waves` writes every class pair (x, y) with J > τ (6 bytes) to
a wave buffer that three passes then read back: the similarity tiers (`setjoin_tiers`), the
overview (`overview`), a cut of the work.  At 10^6 calls of the synthetic pair that is 521M
pairs, 3 GB written and read three times.  Here the walk of `setjoin_walk._tree_item`
(counters inherited along A's heir forest) hands each row's overlap counters over its size
window to `_consume_window`, which takes what the comparison needs without listing the
matches (`setjoin_window`: one vectorised pass for the partner and call-pair counts, the
column hits and the column candidates; the row's tiers from the runs' best overlaps; the
overview's sample drawn as window positions, or every match read where each is certain);
a root counted through the sets its postings touch hands its match list to
`_consume_list`.  The results are those of the waves: the same class pairs, tiers, partner
and call-pair counts (exact), the same overview bars up to the order of float sums (exact
mode) or a Poisson sample of them with the same probabilities (past the overview budget).

Parallel and deterministic, two ways.  Everything a walker accumulates but the overview is
independent of which walker took which row: the rows' tiers are placed by row, the hits and
counts are integers, and the columns' cutoffs (``rej``, and the window pass's bounds α) are
shared by the walkers: each is only a lower bound that lets a walker skip pairs, so which one
raises it first changes what the walkers' column lists hold, never the merged result.  Only
the overview's float sums depend on the order they are added in.
- **Shared items** (`share_items`, the default when the comparison has an overview budget):
  the walkers take the items from one queue, dearest first, each the next as it is free (an
  atomic counter, `atomic.fetch_add`); each records its rows' kept matches (B row, J / p, 1 / p:
  `RECORD_BYTES` each, about the budget's number in all), and after the walk the overview is
  made from the record in `overview_record.OVERVIEW_PARTS` fixed parts of B's rows
  (`overview_record.deferred_overview`'s parts, run a wave of B's rows at a time by
  `fused_overview.overview_in_waves`): each part fills its own slots of B's one difference
  array, binned and given back wave by wave, its small bins added in part order.  No walker
  idles while another finishes a part dealt in advance (the dealt parts' times differed by
  10-25 % from run to run on the same estimate, leaving one core idle for 0.1-0.7 s of a 3.5 s
  walk at 10^6 calls).
- **Dealt parts** (exact overview at any size, no budget: a record would be every class
  pair): the items are dealt to `FUSED_PARTS` parts (by estimated cost, largest first, each to
  the least loaded part), each part walks its items in order with its own accumulators
  (overview bins and B difference array included, the overview made in the walk), on a pool
  of threads, added in part order.
The result does not depend on the number of threads.  Memory: per walker (or part) the
counters of the walk ((forest height + 1) × |B classes|), the column lists and state (k
similarities and counts and ~24 bytes per B class) and per part the overview's B difference
array (40 bytes per call of B); never the class pairs.

Where the time goes (10^6 synthetic pair, 521M class pairs in windows of 4.9·10^9 sets, one
thread, CPU s of ablated copies on 2 shared cores, ±15 % between runs): counting 3.5, the window
pass ~1.2, the column candidates ~0.3 (6·10^6 of the 521M pairs reach a part's list), the row
candidates ~0.3, the overview ~1.3 (positions and sweeps, at θ calibrated to the budget).
Reading the matches (a flag pass, a uniform each) instead of positions for rows of many calls
(p₀ ≥ 1/64) is no faster within the noise.  What shapes the walk:

- the counting adds 15.8·10^9 membership-row cells against 1.4·10^9 sparse postings, so it adds
  four rows a pass (`setjoin_walk._add_member_rows`); at 10^7 calls (7.8·10^10 counters read
  out, 6.2·10^10 delta postings) B's frequent elements are added through membership rows where
  their postings fill 1/8 of the window (`setjoin_walk.DENSE_RATIO`): 81 % of the postings are
  in windows they fill to 1/16 or more;
- the walk scratch is made in Python from one huge-page block per thread (`part_scratch`,
  `hugeblock.carve`) and the parts' accumulators are zeroed by their own thread: a process's
  first compare takes ~100k page faults, not 189k;
- the walkers share the items (above), so both end within milliseconds of each other;
- numba indexes a signed position with a negative-index wrap that keeps loops from vectorising
  (2 of 5 instructions of a delta posting's increment, profiled with perf through a map of
  numba's symbols), so the hot loops (increments, window pass, window copy and fills, row
  candidates, certain matches' flags) index by unsigned positions; an inlined helper's array
  arguments are reference-counted at every call, so a row's column pairs go through one kernel
  (`setjoin_window.column_pairs`); the overview sample's layers are disjoint.

Over 600 lines: one topic, the walk of the tree join with everything it hands each row to
(window and list readouts, the record or the overview, the two ways of sharing the work);
the row kernels it calls live in `setjoin_walk`, `setjoin_window`, `overview_rows` and
`overview_record`.
"""
import concurrent.futures
import queue
import time

import numba
import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.typed import List

from .atomic import fetch_add
from .hugeblock import carve
from .fused_overview import OVERVIEW_WAVE_BYTES, overview_in_waves
from .overview_record import add_row
from .overview_rows import overview_row_constants, overview_rows_finish, row_key
from .setjoin import first_greater
from .setjoin_walk import SPARSE_RATIO, add_postings, next_row, postings_in, set_frame, sparse_counts, zero_range
from .setjoin_window import (HITS8_ROWS, column_pairs, finish_row_tiers, heavy_buckets, need_by_total,
                             row_candidates, row_tier_entries, sample_positions, uniform, window_pass)

#: parts the rows of A are dealt to (fixed, so the sums are added in the same order on every
#: machine); each holds its own accumulators (about 40 bytes per call of B)
FUSED_PARTS = 4
#: bytes per kept match of the overview's record when the walkers share the items (B row
#: int32, J / p and 1 / p float64; `_overview_row`)
RECORD_BYTES = 20


@njit(cache=True, nogil=True)
def _sparse_matches(nx, items, lo, hi, post_ptr, post_k, k0, k1, tau, b_size_sorted, cnt, touched, mk, mi):
    """The matches of a row counted from scratch through the sets its postings touch (as
    `setjoin_walk._sparse_root`, `setjoin_walk.sparse_counts`): ``cnt`` is zero over [k0, k1)
    before and after.  Returns their number, the B sets ascending in ``mk``, their overlaps in
    ``mi``."""
    n_t, n = sparse_counts(nx, items, lo, hi, post_ptr, post_k, k0, k1, tau, b_size_sorted, cnt, touched)
    mk[:n] = touched[:n]
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


@njit(cache=True, nogil=True, _nrt=False)
def _prune(cq, cr, cs, n, rej):
    """In place: keep the column candidates (size rank, row, J) with J ≥ the part's cutoff of
    their column (``rej``, −1 while the part's list holds fewer than k calls); returns their
    number."""
    m = 0
    for i in range(n):
        if cs[i] >= rej[cq[i]]:
            cq[m] = cq[i]
            cr[m] = cr[i]
            cs[m] = cs[i]
            m += 1
    return m


@njit(cache=True, nogil=True)
def _emit(v, n_t, tq, ts, nc, cq, cs, rej, out):
    """Row v's tier entries and column candidates appended to the part's growing outputs
    (l32 = [rows, tier B rows, candidate size ranks, candidate rows], l64 = [tier lengths],
    lf = [tier J, candidate J]; cur = [rows, entries, candidates, after the last prune])."""
    l32, l64, lf, cur = out
    r0, e0, c0 = cur[0], cur[1], cur[2]
    _room(l32, np.int64(0), r0 + 1)[r0] = v
    _room(l64, np.int64(0), r0 + 1)[r0] = n_t
    _room(l32, np.int64(1), e0 + n_t)[e0:e0 + n_t] = tq[:n_t]
    _room(lf, np.int64(0), e0 + n_t)[e0:e0 + n_t] = ts[:n_t]
    _room(l32, np.int64(2), c0 + nc)[c0:c0 + nc] = cq[:nc]
    _room(l32, np.int64(3), c0 + nc)[c0:c0 + nc] = v
    _room(lf, np.int64(1), c0 + nc)[c0:c0 + nc] = cs[:nc]
    cur[0] = r0 + 1
    cur[1] = e0 + n_t
    cur[2] = c0 + nc
    if cur[2] > max(1 << 20, 2 * cur[3]):
        cur[2] = cur[3] = _prune(l32[2], l32[3], lf[1], cur[2], rej)


@njit(cache=True, nogil=True)
def _overview_row(v, n_o, sc, rc, oc, os_, calls, out):
    """The row's kept matches (``sc``'s B rows, J / p and 1 / p) added to the overview
    (`overview_record.add_row`), or, when the overview is deferred (``rc[12]``), recorded in the
    part's outputs for `overview_record.overview_part` (l32[4] = rows, l64[1] = their numbers
    of matches, l32[5] / lf[2] / lf[3] = B rows, J / p, 1 / p; cur[4] / cur[5] = rows, matches)."""
    oq, os2, ou = sc[13], sc[14], sc[15]
    calls[2] += n_o
    if rc[12]:
        if n_o > 0:
            l32, l64, lf, cur = out
            r0, e0 = cur[4], cur[5]
            _room(l32, np.int64(4), r0 + 1)[r0] = v
            _room(l64, np.int64(1), r0 + 1)[r0] = n_o
            _room(l32, np.int64(5), e0 + n_o)[e0:e0 + n_o] = oq[:n_o]
            _room(lf, np.int64(2), e0 + n_o)[e0:e0 + n_o] = os2[:n_o]
            _room(lf, np.int64(3), e0 + n_o)[e0:e0 + n_o] = ou[:n_o]
            cur[4] = r0 + 1
            cur[5] = e0 + n_o
        return
    loc, bins_a, bins_b1, diff_b = os_
    add_row(v, n_o, oq, os2, ou, rc[10], oc, loc, bins_a, bins_b1, diff_b)


@njit(cache=True, nogil=True, inline="always")
def _kept(s, p):
    """A match at J = s kept by the overview's sample at probability p: (J / p, 1 / p), or (s, 1)
    when p ≥ 1, a certain match.  Scalars only: an inlined helper's array arguments are
    reference-counted at every call."""
    if p >= 1.0:
        return s, 1.0
    return s / p, 1.0 / p


@njit(cache=True, nogil=True, inline="always")
def _flagged(fw, lo, hi, out, n):
    """The size ranks k in [lo, hi) with their flag set (bytes 0 / 1, read as ``fw``, their
    uint64 view, 8 at a time: only the set ones visited), ascending, into ``out`` from ``n``.
    Returns the new n."""
    for wd in range(lo >> 3, (hi + 7) >> 3):
        word = fw[wd]
        while word != np.uint64(0):
            kk = (wd << 3) + (np.int64(trailing_zeros(word)) >> 3)
            word &= word - np.uint64(1)
            if lo <= kk < hi:
                out[n] = kk
                n += 1
    return n


@njit(cache=True, nogil=True)
def _consume_window(v, k0, k1, cnt, wk, rc, cs_, oc, os_, sc, out):
    """Row v, its overlap counters ``cnt`` over its size window [k0, k1) (B size ranks): the
    window pass (`setjoin_window.window_pass`: partner calls, column hits and calls, column
    candidates, the runs' best overlaps), the column candidates into their part lists
    (`column_pairs`), the row's tiers from its candidates (`row_candidates`,
    `row_tier_entries`) and the overview's sample (`sample_positions`; every match when
    p₀ = cr / θ ≥ 1), then the outputs (`_emit`)."""
    b_size_sorted, run_end = wk[13], wk[14]
    (size_a, count_a, top_k, count_k, b_by_size, direct, heavy_calls, heavy_ptr, heavy_k, p_scale, _, need_t, _,
     heavy_bits) = rc
    alpha, rej, col_s, col_n, col_nt, hits8, hits, extra, partners_row, calls = cs_
    (run_lo, run_need, run_max, run_any, cand_k, cand_s, rs, rn, tq, ts, cq, csim, flags, oq, os2, ou, pos, fw) = sc
    nx = size_a[v]
    cr = count_a[v]
    n_runs, w = window_pass(nx, cr, k0, k1, need_t, b_size_sorted, run_end, cnt, count_k, alpha, hits8, extra, flags,
                            run_lo, run_need, run_max, run_any)
    calls[1] += 1
    if calls[1] == HITS8_ROWS:
        for i in range(hits.shape[0]):
            hits[i] += hits8[i]
            hits8[i] = 0
        calls[1] = 0
    if w == 0:
        return
    partners_row[v] += w
    calls[0] += w * cr
    # the column candidates (few), gathered in ``cand_k`` / ``cand_s`` (row_candidates reuses them)
    n_cc = 0
    for j in range(n_runs):
        if run_any[j]:
            lo = run_lo[j]
            ny = b_size_sorted[lo]
            n0 = n_cc
            n_cc = _flagged(fw, lo, min(run_end[lo], k1), cand_k, n_cc)
            for t in range(n0, n_cc):
                c = np.int64(cnt[cand_k[t]])
                cand_s[t] = c / (nx + ny - c)
    nc = column_pairs(n_cc, cand_k, cand_s, cr, top_k, rej, alpha, col_s, col_n, col_nt, cq, csim)
    n_c = row_candidates(nx, top_k, n_runs, run_lo, run_need, run_max, k1, run_end, b_size_sorted, cnt, rs, cand_k,
                         cand_s)
    n_t = row_tier_entries(n_c, cand_k, cand_s, count_k, top_k, b_by_size, direct, rs, rn, tq, ts)
    p0 = cr * p_scale
    n_o = 0
    if p0 >= 1.0:
        # every match certain: the matches flagged again (vectorised) and read 8 at a time
        for j in range(n_runs):
            if run_max[j] < run_need[j]:
                continue
            lo = run_lo[j]
            hi = min(run_end[lo], k1)
            ny = b_size_sorted[lo]
            need = cnt.dtype.type(run_need[j])
            for i in range(np.uint64(lo), np.uint64(hi)):      # unsigned: vectorised, no slices
                flags[i] = np.uint8(cnt[i] >= need)
            for t in range(_flagged(fw, lo, hi, pos, 0)):
                kk = pos[t]
                c = np.int64(cnt[kk])
                oq[n_o] = kk if direct else b_by_size[kk]
                os2[n_o], ou[n_o] = _kept(c / (nx + ny - c), 1.0)
                n_o += 1
    else:
        n_p, n_base = sample_positions(k0, k1, p0, heavy_bits, heavy_ptr, heavy_k, heavy_calls, row_key(v), pos)
        j = 0
        for t in range(n_p):
            kk = pos[t]
            # its run: the base layer's positions ascend (a moving index), the buckets' searched
            if t < n_base:
                while j + 1 < n_runs and run_lo[j + 1] <= kk:
                    j += 1
            else:
                j = first_greater(run_lo, 0, n_runs, kk) - 1
            c = np.int64(cnt[kk])
            if c >= run_need[j]:
                ny = b_size_sorted[kk]
                oq[n_o] = kk if direct else b_by_size[kk]
                os2[n_o], ou[n_o] = _kept(c / (nx + ny - c), p0 * np.float64(count_k[kk]))
                n_o += 1
    _overview_row(np.int64(v), np.int64(n_o), sc, rc, oc, os_, calls, out)
    _emit(v, n_t, tq, ts, nc, cq, csim, rej, out)


@njit(cache=True, nogil=True)
def _consume_list(v, n, mk, mi, wk, rc, cs_, oc, os_, sc, out):
    """Row v given as its list of matches (size ranks ``mk[:n]`` ascending, overlaps
    ``mi[:n]``: a root counted through the sets its postings touch): what `_consume_window`
    takes from a window, match by match; the overview's sample drawn per match (u < p from the
    row's stream, `setjoin_window.uniform`)."""
    if n == 0:
        return
    b_size_sorted = wk[13]
    size_a, count_a, top_k, count_k, b_by_size, direct, _, _, _, p_scale, _, _, _, _ = rc
    alpha, rej, col_s, col_n, col_nt, hits8, hits, extra, partners_row, calls = cs_
    (run_lo, run_need, run_max, run_any, cand_k, cand_s, rs, rn, tq, ts, cq, csim, flags, oq, os2, ou, pos, fw) = sc
    nx = size_a[v]
    cr = count_a[v]
    w = 0
    for j in range(n):
        kk = mk[j]
        c = np.int64(mi[j])
        s = c / (nx + b_size_sorted[kk] - c)
        cand_k[j] = kk
        cand_s[j] = s
        w += np.int64(count_k[kk])
        hits[kk] += 1
        extra[kk] += cr - 1
    nc = column_pairs(n, cand_k, cand_s, cr, top_k, rej, alpha, col_s, col_n, col_nt, cq, csim)
    partners_row[v] += w
    calls[0] += w * cr
    n_t = row_tier_entries(n, cand_k, cand_s, count_k, top_k, b_by_size, direct, rs, rn, tq, ts)
    p0 = cr * p_scale
    n_o = 0
    key = row_key(v)
    for j in range(n):
        kk = cand_k[j]
        p = p0 * np.float64(count_k[kk])
        if p >= 1.0 or uniform(key, j) < p:
            oq[n_o] = kk if direct else b_by_size[kk]
            os2[n_o], ou[n_o] = _kept(cand_s[j], p)
            n_o += 1
    _overview_row(np.int64(v), np.int64(n_o), sc, rc, oc, os_, calls, out)
    _emit(v, n_t, tq, ts, nc, cq, csim, rej, out)


@njit(cache=True, nogil=True)
def _fused_item(root, single, wk, bufs, frames, touched, dirty, mk, mi, rc, cs_, oc, os_, sc, out):
    """One work item of the join (the heir-forest subtree of ``root``, or ``root`` alone when
    ``single``) walked as `setjoin_walk._tree_item` walks it (counters in place for the last
    child, shared-then-undone for light deltas, copied for heavy ones; a sparse root through
    the sets its postings touch), every row consumed (`_consume_window`, `_consume_list`) as
    soon as its counters are complete."""
    (a_ptr, a_items, d_ptr, d_items, d_cost, kid_ptr, kids, tau, post_ptr, post_k, k_lo, k_hi, own_hi,
     b_size_sorted, run_end, copy_ratio, dense_row, dense_map) = wk
    root = np.int64(root)  # (an int64 row for the consumers, as the walk's: one signature each, compiled once)
    lo = k_lo[root]
    hi = own_hi[root] if single else k_hi[root]
    cnt0 = bufs[0]
    nx = a_ptr[root + 1] - a_ptr[root]
    if single or kid_ptr[root] == kid_ptr[root + 1]:
        k1 = own_hi[root]
        if postings_in(a_items, a_ptr[root], a_ptr[root + 1], post_ptr, post_k, lo, k1) * SPARSE_RATIO < k1 - lo:
            if dirty[0] < dirty[1]:
                zero_range(cnt0, dirty[0], dirty[1])
                dirty[0] = 0
                dirty[1] = 0
            n = _sparse_matches(nx, a_items, a_ptr[root], a_ptr[root + 1], post_ptr, post_k, lo, k1, tau,
                                b_size_sorted, cnt0, touched, mk, mi)
            _consume_list(root, n, mk, mi, wk, rc, cs_, oc, os_, sc, out)
            return
    dirty[0] = min(dirty[0], lo) if dirty[0] < dirty[1] else lo
    dirty[1] = max(dirty[1], hi)
    zero_range(cnt0, lo, hi)
    add_postings(a_items, a_ptr[root], a_ptr[root + 1], post_ptr, post_k, lo, hi, cnt0, 1, dense_row, dense_map)
    _consume_window(root, k_lo[root], own_hi[root], cnt0, wk, rc, cs_, oc, os_, sc, out)
    if single:
        return
    set_frame(frames, 0, root, kid_ptr[root], 0, 1, 0, 0)
    sp = 1
    n_bufs = 1
    while True:
        w, b, sp, n_bufs = next_row(frames, sp, n_bufs, bufs, kids, kid_ptr, d_items, d_ptr, d_cost, post_ptr,
                                     post_k, k_lo, k_hi, copy_ratio, dense_row, dense_map)
        if w < 0:
            return
        _consume_window(w, k_lo[w], own_hi[w], bufs[b], wk, rc, cs_, oc, os_, sc, out)


@njit(cache=True, nogil=True)
def _fused_part(roots, singles, next_item, wk, rc, cs_, oc, os_, scratch):
    """Work items of ``roots`` / ``singles`` walked (`_fused_item`) with this part's
    accumulators (``cs_``: column state, hits, calls; ``os_``: overview bins and B difference
    array; zeroed here) and a walk scratch (`part_scratch`, reused by the next part on this
    thread): item ``next_item[0]``, taken and counted up atomically (`atomic.fetch_add`), until
    they are all taken.  A part alone on its counter walks its items in order; parts sharing
    one counter share the items, each taking the next as it is free.
    Returns (rows, tier lengths, tier B rows, tier similarities, candidate columns (size
    ranks), candidate rows, candidate similarities, items walked, and the overview's record
    when deferred: rows, their numbers of matches, B rows, J / p, 1 / p), the rows in the order
    walked, the candidates pruned to the part's cutoffs; the part's column hits are all in its
    64-bit ``hits`` after."""
    # the part's accumulators zeroed here, on its own thread (fresh pages: the first touch is
    # the dear one), then its walk scratch made clean
    _, rej, _, _, col_nt, hits8, hits, extra, _, calls = cs_
    _, bins_a, bins_b1, diff_b = os_
    col_nt[:] = 0
    hits8[:] = 0
    hits[:] = 0
    extra[:] = 0
    calls[:] = 0
    bins_a[:] = 0.0
    bins_b1[:] = 0.0
    diff_b[:] = 0.0
    bufs, frames, touched, dirty, mk, mi, sc = scratch
    dirty[0] = 0
    dirty[1] = wk[13].shape[0]          # every counter may be stale
    sc[12][:] = 0                       # the flags
    l32 = List()
    for _ in range(6):
        l32.append(np.empty(1024, np.int32))
    l64 = List()
    for _ in range(2):
        l64.append(np.empty(1024, np.int64))
    lf = List()
    for _ in range(4):
        lf.append(np.empty(1024, np.float64))
    cur = np.zeros(6, np.int64)
    out = (l32, l64, lf, cur)
    n_items = roots.shape[0]
    walked = 0
    while True:
        i = fetch_add(next_item, 0, 1)
        if i >= n_items:
            break
        _fused_item(roots[i], singles[i], wk, bufs, frames, touched, dirty, mk, mi, rc, cs_, oc, os_, sc, out)
        walked += 1
    for i in range(hits.shape[0]):
        hits[i] += hits8[i]
        hits8[i] = 0
    n_c = _prune(l32[2], l32[3], lf[1], cur[2], rej)
    return (l32[0][:cur[0]].copy(), l64[0][:cur[0]].copy(), l32[1][:cur[1]].copy(), lf[0][:cur[1]].copy(),
            l32[2][:n_c].copy(), l32[3][:n_c].copy(), lf[1][:n_c].copy(), walked, l32[4][:cur[4]].copy(),
            l64[1][:cur[4]].copy(), l32[5][:cur[5]].copy(), lf[2][:cur[5]].copy(), lf[3][:cur[5]].copy())


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


@njit(cache=True, nogil=True)
def _item_owners(order, cost, n_parts):
    """The part of each item, dealt in ``order``: each to the part with the least estimated
    cost so far (ties: the lower part)."""
    load = np.zeros(n_parts)
    owner = np.empty(cost.shape[0], np.int64)
    for t in range(order.shape[0]):
        i = order[t]
        p = 0
        for q in range(1, n_parts):
            if load[q] < load[p]:
                p = q
        owner[i] = p
        load[p] += cost[i]
    return owner


def deal_items(cost, n_parts):
    """Items to parts: largest estimated cost first, each to the part with the least so far
    (ties: lower part); each part's items in ascending order.  Returns a list of index arrays."""
    cost = np.ascontiguousarray(cost, np.float64)
    owner = _item_owners(np.argsort(-cost, kind="stable"), cost, int(n_parts))
    return [np.flatnonzero(owner == p) for p in range(n_parts)]


def part_scratch(height, nb, overlap, k):
    """The walk scratch of `_fused_part` for ``nb`` B rows, forest height ``height``, counters of
    dtype ``overlap`` and tiers of ``k``: (counter buffers, frames, touched, dirty, match ranks,
    match overlaps, the row scratch of `_consume_window`), cut from one block (`hugeblock.carve`);
    the row scratch ends with its flags' uint64 view (made once here, not per row)."""
    i8, f8, i4, u1 = np.int64, np.float64, np.int32, np.uint8
    got = carve([((height + 1, nb), overlap), ((height + 1, 6), i8), (nb, i8), (2, i8), (nb, i4), (nb, overlap),
                 (nb + 1, i8), (nb + 1, i8), (nb + 1, i8), (nb + 1, u1), (nb, i8), (nb, f8), (k, f8), (k, i8),
                 (nb, i4), (nb, f8), (nb, i4), (nb, f8), (((nb >> 3) + 2) * 8, u1), (nb, i4), (nb, f8), (nb, f8),
                 (nb, i8)])
    return tuple(got[:6]) + (tuple(got[6:]) + (got[18].view(np.uint64),),)


def fused_part_bytes(height, n_rows_b, n_calls_b, max_calls_a, k, overlap_bytes=2, own_overview=True):
    """Bytes one part of `jaccard_join_tree_fused` holds beyond its outputs: the walk's counters
    and scratch, the column lists and state and (``own_overview``: the dealt parts' way) the
    overview's B difference array."""
    return int((height + 1) * n_rows_b * overlap_bytes + n_rows_b * (16 * k + 150)
               + (40 * (n_calls_b + n_rows_b) if own_overview else 0) + 40 * (max_calls_a + 1))


def fused_join_bytes(height, n_rows_b, n_calls_a, n_calls_b, max_calls_a, k, overlap_bytes, n_workers, deferred):
    """Bytes `jaccard_join_tree_fused` adds at its peak (what `compare`'s memory check asks for):
    the dealt way, `FUSED_PARTS` parts each with its own overview; the shared (``deferred``)
    way, the larger of its ``n_workers`` walkers and, after the walk, the overview's per-call
    constants (20 bytes a call) with one wave of B's difference array
    (`fused_overview.OVERVIEW_WAVE_BYTES`, or all of it where smaller)."""
    if not deferred:
        return FUSED_PARTS * fused_part_bytes(height, n_rows_b, n_calls_b, max_calls_a, k, overlap_bytes)
    walk = max(1, int(n_workers)) * fused_part_bytes(height, n_rows_b, n_calls_b, max_calls_a, k, overlap_bytes,
                                                     own_overview=False)
    after = 20 * (n_calls_a + n_calls_b) + min(40 * (n_calls_b + n_rows_b), 2 * OVERVIEW_WAVE_BYTES)
    return int(max(walk, after))


def jaccard_join_tree_fused(plan, size_a, size_b, count_a, count_b, k, ptr_a, time_a, ptr_b, time_b, span_a,
                            span_b, n_bins, tol_a, tol_b, tau, n_parts=FUSED_PARTS, n_threads=None, stats=None,
                            overview_theta=1.0, share_items=None, drop_plan=False, call_times=None):
    """The class pairs of the tree join (`setjoin_tree.join_plan`: rows = A's classes,
    ``size_a``/``count_a`` their |Γ| and calls; B's likewise, numbered as the plan's B rows)
    consumed as they are read, never stored (see the module docstring).  Returns a dict:
    ``class_pairs`` (how many, J > τ), ``call_pairs`` (Σ count_a · count_b over them),
    ``tiers`` (``(tptr_r, tother_r, tsim_r, tptr_c, trow_c, tsim_c)`` as
    `setjoin_tiers.TierStream.finish`), ``partners_row`` / ``partners_col`` (per class: the
    calls of the other side it matches), ``overview`` ((bars_a, delta_a, bars_b, delta_b) as
    `overview.overview_finish`: calls of A at ``time_a[ptr_a[r]:ptr_a[r+1]]`` per row, sorted;
    B likewise; exact when ``overview_theta`` ≤ 1, else estimated from a threshold sample of
    the matches at that θ, `setjoin_window.sample_positions`: ``overview_pairs`` says how many
    class pairs it visited).  ``n_parts`` fixed parts (`FUSED_PARTS`) on ``n_threads`` threads
    (default numba's): the same result for any number of threads.  ``share_items`` (default:
    when the overview samples): the walkers share one queue of the items (the dearest first,
    each taken by whichever walker is free, `_fused_part`) instead of each walking a part dealt
    in advance, and the overview is made after the walk from what they recorded, in
    `overview_record.OVERVIEW_PARTS` fixed parts of B's rows
    (`overview_record.deferred_overview`): no walker idles at the end while another finishes
    its part, for a record of the kept matches (20 bytes each: bounded
    by the overview's budget when it samples, every class pair when exact).  ``stats``:
    receives the seconds of the walk (its preparation included, and apart), of the deferred
    overview, of the finish, the walkers' items and seconds (and the parts' estimated loads
    when dealt).  ``drop_plan``: the plan's arrays are dropped from ``plan`` once the walk is done
    (its caller does not read them again), so that the deferred overview and the finish do not
    hold them; on that way the overview's per-call constants
    (`overview_rows.overview_row_constants`, 20 bytes a call) are made only after the walk,
    which records its matches without reading them.  ``call_times``: with ``time_a`` / ``time_b``
    None, called (no arguments) for them when they are first read: after the walk on that way
    (the walk does not read them), before it on the dealt way."""
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
    wk = (p["a_ptr"], p["a_items"], p["d_ptr"], p["d_items"], p["d_cost"], p["kid_ptr"], p["kids"], float(tau),
          p["post_ptr"], p["post_k"], p["k_lo"], p["k_hi"], p["own_hi"], p["b_size_sorted"], p["run_end"], 0.25,
          p["dense_row"], p["dense_map"])
    b_by_size = p["b_by_size"].astype(np.int32)
    direct = bool(p["direct"])
    count_b = np.asarray(count_b, np.int64)
    # per size rank of B: its calls (uint32 while B's calls fit, so the window pass's sums
    # vectorise in 32-bit lanes); the sets of several calls by buckets of calls
    calls_b = int(count_b.sum())
    count_k = count_b[b_by_size].astype(np.uint32 if calls_b < 2 ** 32 else np.int64)
    bs = p["b_size_sorted"]
    heavy_ptr, heavy_k, heavy_calls, heavy_bits = heavy_buckets(count_k)
    sampling = overview_theta > 1.0
    inv_theta = 1.0 / float(overview_theta) if sampling else 0.0
    defer = bool(sampling if share_items is None else share_items)
    rc = (np.ascontiguousarray(size_a, np.int64), np.ascontiguousarray(count_a, np.int64), k, count_k, b_by_size,
          direct, heavy_calls, heavy_ptr, heavy_k, inv_theta if sampling else 1.0, inv_theta,
          need_by_total(int(np.max(size_a, initial=0)) + int(bs.max(initial=0)) + 2, float(tau)), defer, heavy_bits)
    times = [time_a, time_b]

    def overview_constants():
        if times[0] is None:
            times[:] = call_times()
        csum_a, bin_a, csum_b, x1_b, bin1_b = overview_row_constants(ptr_a, times[0], ptr_b, times[1],
                                                                     float(span_a), float(span_b), int(n_bins))
        return (ptr_a, times[0], csum_a, bin_a, ptr_b, times[1], csum_b, float(tol_a), float(tol_b), x1_b, bin1_b)
    # a deferring walk only records its matches: the times and constants, unread there, are
    # made after it
    f8, i4 = np.empty(0), np.empty(0, np.int32)
    oc = (ptr_a, f8, f8, i4, ptr_b, f8, f8, float(tol_a), float(tol_b), f8, i4) if defer else overview_constants()
    n_calls_b = int(ptr_b[-1])
    partners_row = np.zeros(na, np.int64)          # rows are disjoint between parts
    max_calls_a = int(np.diff(ptr_a).max()) if na else 0
    calls_a = int(np.asarray(count_a, np.int64).sum())

    def overview_state():
        return (np.empty((max_calls_a + 1, 5)), np.empty((int(n_bins), 4)), np.empty((int(n_bins), 4)),
                np.empty((n_calls_b + nb, 5)))
    n_threads = numba.get_num_threads() if n_threads is None else int(n_threads)
    n_workers = max(1, min(n_parts, n_threads))
    if defer:
        # one queue of every item, the dearest first, taken by whichever walker is free; the
        # overview's float sums are made afterwards in fixed parts (`overview_record.overview_part`)
        order = np.argsort(-cost, kind="stable")
        shared = np.zeros(1, np.int64)
        walks = [(order, shared)] * n_workers
        no_overview = (np.empty((1, 5)), np.empty((1, 4)), np.empty((1, 4)), np.empty((1, 5)))
    else:
        parts = deal_items(cost, n_parts)
        walks = [(sel, np.zeros(1, np.int64)) for sel in parts]
    # the columns' cutoffs (rounded down) and window bounds, shared by the parts: each part's
    # cutoff is a lower bound of the column's final one, so a pair below the largest so far
    # can be skipped by every part (a race only leaves a lower, still valid, bound)
    alpha, rej = np.full(nb, -1.0, np.float32), np.full(nb, -1.0, np.float32)
    states = []
    for _ in walks:
        col_s, col_n, col_nt, hits8, hits, extra, calls = carve(
            [((nb, k), np.float64), ((nb, k), np.int64), (nb, np.int64), (nb, np.uint8), (nb, np.int64),
             (nb, np.uint32 if calls_a < 2 ** 32 else np.int64), (3, np.int64)])
        cs_ = (alpha, rej, col_s, col_n, col_nt, hits8, hits, extra, partners_row, calls)
        states.append((cs_, no_overview if defer else overview_state()))
    seconds = [0.0] * len(walks)

    # a walk scratch per thread, handed from a part to the next
    scratch = queue.SimpleQueue()
    for _ in range(n_workers):
        scratch.put(part_scratch(int(p["height"]), nb, np.dtype(p["odt"]), k))

    item_single = p["item_single"]
    walk_in = [wk, oc]          # what the walkers read, dropped once they are done

    def run(i):
        t = time.perf_counter()
        cs_, os_ = states[i]
        sel, counter = walks[i]
        mine = scratch.get()
        try:
            out = _fused_part(np.ascontiguousarray(roots[sel], np.int32), np.ascontiguousarray(item_single[sel]),
                              counter, walk_in[0], rc, cs_, walk_in[1], os_, mine)
        finally:
            scratch.put(mine)
        seconds[i] = time.perf_counter() - t
        return out

    t_walk = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=n_workers) as pool:
        outs = list(pool.map(run, range(len(walks))))
        while not scratch.empty():          # the walk's counters freed before the overview's pass
            scratch.get()
        walk_in.clear()
        del wk, oc, a_items, plen, full
        if drop_plan:
            plan.clear()
            del p
        t1 = time.perf_counter()
        if defer:   # B's difference array a wave of B's rows at a time (`fused_overview`)
            oc = overview_constants()
            overview, view_s = overview_in_waves(outs, ptr_a, ptr_b, oc[5], span_b, int(n_bins), inv_theta, oc,
                                                 pool, n_workers, tau)
            del oc
    if not defer:
        overview = overview_rows_finish([os_[1] for _, os_ in states], [os_[2] for _, os_ in states],
                                        [os_[3] for _, os_ in states], ptr_b, times[1], float(span_b), int(n_bins),
                                        tau)
        view_s = []
    t2 = time.perf_counter()
    pieces = []
    for (cs_, _), o in zip(states, outs):
        # the column lists and candidates by B row (they were kept by size rank)
        col_s, col_n, col_nt = (np.empty_like(x) for x in cs_[2:5])
        col_s[b_by_size], col_n[b_by_size], col_nt[b_by_size] = cs_[2], cs_[3], cs_[4]
        pieces.append(dict(rows=o[0], row_len=o[1], tq=o[2], ts=o[3], cq=b_by_size[o[4]], cr=o[5], cs=o[6],
                           col_s=col_s, col_n=col_n, col_nt=col_nt))
    items = [int(o[7]) for o in outs]
    del outs
    tiers = finish_row_tiers(na, nb, k, pieces)
    del pieces
    hits = np.sum([cs_[6] for cs_, _ in states], axis=0)
    partners_col = np.zeros(nb, np.int64)
    partners_col[b_by_size] = hits + np.sum([cs_[7].astype(np.int64) for cs_, _ in states], axis=0)
    calls = np.sum([cs_[9] for cs_, _ in states], axis=0)
    if stats is not None:
        stats.update(walk_s=t1 - t0, prepare_s=t_walk - t0, overview_s=t2 - t1, finish_s=time.perf_counter() - t2,
                     parts=len(walks), shared=defer, part_items=items, part_s=seconds, overview_part_s=view_s,
                     part_cost=[float(cost[sel].sum()) for sel in parts] if not defer else [])
    return dict(class_pairs=int(hits.sum()), call_pairs=int(calls[0]), tiers=tiers, partners_row=partners_row,
                partners_col=partners_col, overview=overview, overview_pairs=int(calls[2]))
