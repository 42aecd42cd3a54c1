"""Top-k similarity tiers of the class pairs of a join: `class_pair_tiers`.

Input: the class pairs of `setjoin_tree.jaccard_join_tree_overlaps` (or
`setjoin_prefix.jaccard_join`) as a CSR over A's classes with overlaps,
J = inter / (|x| + |y| − inter) (`setjoin.overlap_similarity`).  A *tier* of a class is
the set of its partners with one similarity value; tiers are taken in descending
similarity until their partners hold at least k calls, so the top-k partners of every
call of the class lie inside them (what `groups.top_k_partners` needs to keep the call
matches of TraceDiff Sec. III under a bound).  Computed for
every row (A class) and every column (B class) in three passes over the pairs, without
a transposed copy.
"""
import numpy as np
from numba import njit, prange

from .setjoin import overlap_similarity


@njit(cache=True, nogil=True, inline="always")
def _tier_insert(top_s, top_n, nt, k, s, n):
    """Add n calls at similarity s to the list of the k best distinct
    similarities (``top_s`` descending, ``top_n`` their call counts, ``nt``
    used); returns the new nt."""
    if nt == k and s < top_s[nt - 1]:
        return nt
    p = 0
    while p < nt and top_s[p] > s:
        p += 1
    if p < nt and top_s[p] == s:
        top_n[p] += n
        return nt
    if nt < k:
        nt += 1
    for t in range(nt - 1, p, -1):
        top_s[t] = top_s[t - 1]
        top_n[t] = top_n[t - 1]
    top_s[p] = s
    top_n[p] = n
    return nt


@njit(cache=True, nogil=True, inline="always")
def _tiers_cutoff(top_s, top_n, nt, k):
    """Lowest similarity of the best tiers holding >= k calls (all tiers if
    fewer); -1.0 when there is none."""
    got = 0
    cutoff = -1.0
    for t in range(nt):
        got += top_n[t]
        cutoff = top_s[t]
        if got >= k:
            break
    return cutoff


@njit(cache=True, nogil=True)
def _sort_segments_by_sim(ptr, idx, sim, lo_seg, hi_seg):
    """Stable sort of each CSR segment in [lo_seg, hi_seg) by similarity desc."""
    for r in range(lo_seg, hi_seg):
        lo = ptr[r]
        hi = ptr[r + 1]
        if hi - lo > 1:
            order = np.argsort(-sim[lo:hi], kind="mergesort")
            i2 = idx[lo:hi][order]
            s2 = sim[lo:hi][order]
            idx[lo:hi] = i2
            sim[lo:hi] = s2


@njit(cache=True, parallel=True, nogil=True)
def class_pair_tiers(ptr, other, inter, size_row, size_other, count_row, count_other, k,
                     n_parts=2):
    """From the CSR of class pairs (rows = A classes, ``other`` = B classes,
    overlaps ``inter``, J = inter / (|x| + |y| − inter)), in three passes over
    the pairs (no transposed copy): the exact number of call pairs, and the
    best similarity tiers of every row AND of every column.

    A tier is the set of a row's partners with one similarity value.  Tiers
    are taken in descending similarity until their partners hold >= k calls
    (``count_other[q]`` calls for partner q; for a column, ``count_row[r]``),
    so at most k tiers are taken and the top-k partners of every call of the
    row lie inside them (what `groups.top_k_partners` needs).
    Pass 1 keeps, per row and per column, the k best distinct similarities
    with their call counts (columns: one list per part of rows; merging the
    parts' lists is exact, since a value among a column's k best distinct ones
    is among the k best of every part it occurs in, so its count is complete);
    pass 2 counts the entries at or above each cutoff, pass 3 copies them
    (columns: into per-part offsets, rows ascending); then every row and column
    is stably sorted by similarity descending.  Rows are cut into ``n_parts``
    contiguous ranges of about equal entries, run in parallel.
    Returns ``(n_call_pairs, tptr_r, tother_r, tsim_r, tptr_c, trow_c, tsim_c)``:
    n_call_pairs = Σ over pairs of count_row[r] × count_other[q]; then a CSR
    over rows (partners by (sim desc, q asc)) and one over columns (partners by
    (sim desc, r asc)), float64 similarities.
    """
    n_rows = ptr.shape[0] - 1
    n_cols = size_other.shape[0]
    m = other.shape[0]
    n_parts = max(1, n_parts)
    cut = np.empty(n_parts + 1, np.int64)
    for p in range(n_parts + 1):
        cut[p] = np.searchsorted(ptr, m * p // n_parts)
    cut[0] = 0
    cut[n_parts] = n_rows
    cutoff_r = np.empty(n_rows, np.float64)
    calls_r = np.zeros(n_rows, np.int64)
    top_s = np.empty((n_parts, n_cols, k), np.float64)
    top_n = np.empty((n_parts, n_cols, k), np.int64)
    n_top = np.zeros((n_parts, n_cols), np.int64)
    for p in prange(n_parts):                                   # pass 1
        rs = np.empty(k, np.float64)
        rn = np.empty(k, np.int64)
        ts = top_s[p]
        tn = top_n[p]
        nt = n_top[p]
        for r in range(cut[p], cut[p + 1]):
            nx = size_row[r]
            cr = count_row[r]
            nrt = 0
            w = 0
            for j in range(ptr[r], ptr[r + 1]):
                q = other[j]
                sj = overlap_similarity(inter[j], nx, size_other[q])
                nrt = _tier_insert(rs, rn, nrt, k, sj, count_other[q])
                nt[q] = _tier_insert(ts[q], tn[q], nt[q], k, sj, cr)
                w += count_other[q]
            cutoff_r[r] = _tiers_cutoff(rs, rn, nrt, k)
            calls_r[r] = w * cr
    cutoff_c = np.empty(n_cols, np.float64)
    for q in prange(n_cols):
        ms = np.empty(k, np.float64)
        mn = np.empty(k, np.int64)
        nt = 0
        for p in range(n_parts):
            for t in range(n_top[p, q]):
                nt = _tier_insert(ms, mn, nt, k, top_s[p, q, t], top_n[p, q, t])
        cutoff_c[q] = _tiers_cutoff(ms, mn, nt, k)
    tptr_r = np.zeros(n_rows + 1, np.int64)
    counts = np.zeros((n_parts, n_cols), np.int64)
    for p in prange(n_parts):                                   # pass 2
        cp = counts[p]
        for r in range(cut[p], cut[p + 1]):
            nx = size_row[r]
            cr = cutoff_r[r]
            n = 0
            for j in range(ptr[r], ptr[r + 1]):
                q = other[j]
                sj = overlap_similarity(inter[j], nx, size_other[q])
                if cr >= 0.0 and sj >= cr:
                    n += 1
                if cutoff_c[q] >= 0.0 and sj >= cutoff_c[q]:
                    cp[q] += 1
            tptr_r[r + 1] = n
    for r in range(n_rows):
        tptr_r[r + 1] += tptr_r[r]
    tptr_c = np.zeros(n_cols + 1, np.int64)
    for q in range(n_cols):
        tot = tptr_c[q]
        for p in range(n_parts):
            c = counts[p, q]
            counts[p, q] = tot            # where part p starts writing column q
            tot += c
        tptr_c[q + 1] = tot
    tother_r = np.empty(tptr_r[n_rows], np.int32)
    tsim_r = np.empty(tptr_r[n_rows], np.float64)
    trow_c = np.empty(tptr_c[n_cols], np.int32)
    tsim_c = np.empty(tptr_c[n_cols], np.float64)
    for p in prange(n_parts):                                   # pass 3
        fill = counts[p]
        for r in range(cut[p], cut[p + 1]):
            nx = size_row[r]
            cr = cutoff_r[r]
            o = tptr_r[r]
            for j in range(ptr[r], ptr[r + 1]):
                q = other[j]
                sj = overlap_similarity(inter[j], nx, size_other[q])
                if cr >= 0.0 and sj >= cr:
                    tother_r[o] = q
                    tsim_r[o] = sj
                    o += 1
                if cutoff_c[q] >= 0.0 and sj >= cutoff_c[q]:
                    trow_c[fill[q]] = r
                    tsim_c[fill[q]] = sj
                    fill[q] += 1
    for p in prange(n_parts):
        _sort_segments_by_sim(tptr_r, tother_r, tsim_r, cut[p], cut[p + 1])
        _sort_segments_by_sim(tptr_c, trow_c, tsim_c, n_cols * p // n_parts,
                              n_cols * (p + 1) // n_parts)
    return calls_r.sum(), tptr_r, tother_r, tsim_r, tptr_c, trow_c, tsim_c
