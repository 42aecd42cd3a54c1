"""Top-k similarity tiers of the class pairs of a join: `class_pair_tiers`.

Input: the class pairs of `setjoin_tree.jaccard_join_tree_overlaps` (or
`setjoin_prefix.jaccard_join`) as a CSR over A's classes with overlaps,
J = inter / (|x| + |y| − inter) (`setjoin.overlap_similarity`).  A *tier* of a class is
the set of its partners with one similarity value; tiers are taken in descending
similarity until their partners hold at least k calls, so the top-k partners of every
call of the class lie inside them (what `groups.top_k_partners` needs to keep the call
matches of TraceDiff Sec. III under a bound).  Computed for
every row (A class) and every column (B class) in three passes over the pairs, without
a transposed copy, and from class pairs fed in WAVES (`TierStream`: any partition of A's
rows, each row's pairs complete in one wave), so the class pairs never need to be held all
at once: a row's tiers are final within its wave; a column keeps its k best distinct
similarities with their call counts across waves, and its candidate partners at or above
its running cutoff (the cutoff only rises once the column holds k calls, so nothing it
drops can be in the final tiers).
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
def _wave_tops(ptr, other, inter, rows, size_row, size_other, count_row, count_other, k, cut,
               col_s, col_n, col_nt, cutoff_w, calls_part, partners_row, partners_col):
    """Pass 1 over one wave (CSR row i = row ``rows[i]``), rows cut into parts ``cut``:
    each row's tier cutoff (`_tiers_cutoff` of its k best distinct similarities,
    J = inter / (|x| + |y| − inter)) into ``cutoff_w[i]``; each column's k best distinct
    similarities with call counts added to part p's running lists ``col_s[p]`` /
    ``col_n[p]`` / ``col_nt[p]``; per part the call pairs Σ count_row[r] × count_other[q]
    (``calls_part[p]``); per row Σ count_other over its partners (``partners_row[r]``),
    per part and column Σ count_row over its partners (``partners_col[p, q]``)."""
    n_parts = cut.shape[0] - 1
    for p in prange(n_parts):
        rs = np.empty(k, np.float64)
        rn = np.empty(k, np.int64)
        ts = col_s[p]
        tn = col_n[p]
        nt = col_nt[p]
        pc = partners_col[p]
        calls = 0
        for i in range(cut[p], cut[p + 1]):
            r = rows[i]
            nx = size_row[r]
            cr = count_row[r]
            nrt = 0
            w = 0
            for j in range(ptr[i], ptr[i + 1]):
                q = other[j]
                sj = overlap_similarity(inter[j], nx, size_other[q])
                nrt = _tier_insert(rs, rn, nrt, k, sj, count_other[q])
                nt[q] = _tier_insert(ts[q], tn[q], nt[q], k, sj, cr)
                w += count_other[q]
                pc[q] += cr
            cutoff_w[i] = _tiers_cutoff(rs, rn, nrt, k)
            partners_row[r] += w
            calls += w * cr
        calls_part[p] += calls


@njit(cache=True, parallel=True, nogil=True)
def _column_cutoffs(col_s, col_n, col_nt, k):
    """Per column: `_tiers_cutoff` of the k best distinct similarities merged over the
    parts' lists (exact: a value among the column's k best distinct ones is among the k
    best of every part it occurs in, so its count is complete); -1.0 without partners."""
    n_parts, n_cols = col_nt.shape
    cutoff = np.empty(n_cols, np.float64)
    for q in prange(n_cols):
        ms = np.empty(k, np.float64)
        mn = np.empty(k, np.int64)
        nt = 0
        for p in range(n_parts):
            for t in range(col_nt[p, q]):
                nt = _tier_insert(ms, mn, nt, k, col_s[p, q, t], col_n[p, q, t])
        cutoff[q] = _tiers_cutoff(ms, mn, nt, k)
    return cutoff


@njit(cache=True, parallel=True, nogil=True)
def _wave_tier_entries(ptr, other, inter, rows, size_row, size_other, cut, cutoff_w, cutoff_c):
    """Passes 2 and 3 over one wave: the entries at or above their row's cutoff (the row
    tiers, a CSR over the wave's rows, each row stably sorted by similarity desc) and
    those at or above their column's running cutoff ``cutoff_c`` (column candidates,
    (column, row, similarity), parts in order).  Returns (tptr, tother, tsim, cq, cr, cs)."""
    n_rows = ptr.shape[0] - 1
    n_parts = cut.shape[0] - 1
    tptr = np.zeros(n_rows + 1, np.int64)
    n_cand = np.zeros(n_parts + 1, np.int64)
    for p in prange(n_parts):
        nc = 0
        for i in range(cut[p], cut[p + 1]):
            nx = size_row[rows[i]]
            cw = cutoff_w[i]
            n = 0
            for j in range(ptr[i], ptr[i + 1]):
                q = other[j]
                sj = overlap_similarity(inter[j], nx, size_other[q])
                if cw >= 0.0 and sj >= cw:
                    n += 1
                if cutoff_c[q] >= 0.0 and sj >= cutoff_c[q]:
                    nc += 1
            tptr[i + 1] = n
        n_cand[p + 1] = nc
    for i in range(n_rows):
        tptr[i + 1] += tptr[i]
    for p in range(n_parts):
        n_cand[p + 1] += n_cand[p]
    tother = np.empty(tptr[n_rows], np.int32)
    tsim = np.empty(tptr[n_rows], np.float64)
    cq = np.empty(n_cand[n_parts], np.int32)
    cr = np.empty(n_cand[n_parts], np.int32)
    cs = np.empty(n_cand[n_parts], np.float64)
    for p in prange(n_parts):
        c = n_cand[p]
        for i in range(cut[p], cut[p + 1]):
            r = rows[i]
            nx = size_row[r]
            cw = cutoff_w[i]
            o = tptr[i]
            for j in range(ptr[i], ptr[i + 1]):
                q = other[j]
                sj = overlap_similarity(inter[j], nx, size_other[q])
                if cw >= 0.0 and sj >= cw:
                    tother[o] = q
                    tsim[o] = sj
                    o += 1
                if cutoff_c[q] >= 0.0 and sj >= cutoff_c[q]:
                    cq[c] = q
                    cr[c] = r
                    cs[c] = sj
                    c += 1
        _sort_segments_by_sim(tptr, tother, tsim, cut[p], cut[p + 1])
    return tptr, tother, tsim, cq, cr, cs


class TierStream:
    """`class_pair_tiers` fed in waves: ``add`` the class pairs of each wave (a CSR whose
    row i is row ``rows[i]``; every row in one wave, with all its pairs), then ``finish``.

    Memory: per column k (similarity, count) per part, per row and column one call count,
    the row tiers, and the column candidates (pruned to the running cutoffs whenever they
    double), never the class pairs themselves.  ``n_parts``: rows of a wave are cut into
    that many contiguous parts of about equal entries, run in parallel (fixed, not the
    thread count, so the result does not depend on the machine)."""

    def __init__(self, size_row, size_other, count_row, count_other, k, n_parts=2):
        self.size_row = np.ascontiguousarray(size_row, np.int64)
        self.size_other = np.ascontiguousarray(size_other, np.int64)
        self.count_row = np.ascontiguousarray(count_row, np.int64)
        self.count_other = np.ascontiguousarray(count_other, np.int64)
        self.k = int(k)
        self.n_parts = max(1, int(n_parts))
        n_cols = self.size_other.shape[0]
        self.col_s = np.empty((self.n_parts, n_cols, self.k), np.float64)
        self.col_n = np.empty((self.n_parts, n_cols, self.k), np.int64)
        self.col_nt = np.zeros((self.n_parts, n_cols), np.int64)
        self.calls_part = np.zeros(self.n_parts, np.int64)
        #: per row: Σ over its partners of their calls (exact partner-call counts)
        self.partners_row = np.zeros(self.size_row.shape[0], np.int64)
        self._partners_col = np.zeros((self.n_parts, n_cols), np.int64)
        self._row_pieces = []
        self._cand = []            # (cq, cr, cs) arrays, pruned when they double
        self._n_cand = 0
        self._n_cand_pruned = 0
        self.n_pairs = 0

    def add(self, ptr, other, inter, rows):
        """Feed one wave of class pairs."""
        m = other.shape[0]
        rows = np.ascontiguousarray(rows, np.int64)
        if rows.shape[0] == 0:
            return
        self.n_pairs += m
        cut = np.searchsorted(ptr, (m * np.arange(self.n_parts + 1)) // self.n_parts).astype(np.int64)
        cut[0], cut[-1] = 0, rows.shape[0]
        cutoff_w = np.empty(rows.shape[0], np.float64)
        _wave_tops(ptr, other, inter, rows, self.size_row, self.size_other, self.count_row,
                   self.count_other, self.k, cut, self.col_s, self.col_n, self.col_nt, cutoff_w,
                   self.calls_part, self.partners_row, self._partners_col)
        cutoff_c = _column_cutoffs(self.col_s, self.col_n, self.col_nt, self.k)
        tptr, tother, tsim, cq, cr, cs = _wave_tier_entries(ptr, other, inter, rows, self.size_row,
                                                            self.size_other, cut, cutoff_w, cutoff_c)
        self._row_pieces.append((rows.copy(), tptr, tother, tsim))
        self._cand.append((cq, cr, cs))
        self._n_cand += cq.shape[0]
        if self._n_cand > max(1 << 20, 2 * self._n_cand_pruned):
            self._prune(cutoff_c)

    def _prune(self, cutoff_c):
        cq, cr, cs = (np.concatenate(x) for x in zip(*self._cand))
        keep = cs >= cutoff_c[cq]
        self._cand = [(cq[keep], cr[keep], cs[keep])]
        self._n_cand = self._n_cand_pruned = int(keep.sum())

    @property
    def partners_col(self) -> np.ndarray:
        """Per column: Σ over its partners of their calls."""
        return self._partners_col.sum(axis=0)

    def finish(self):
        """``(n_call_pairs, tptr_r, tother_r, tsim_r, tptr_c, trow_c, tsim_c)`` as
        `class_pair_tiers` returns them (rows never fed have no tiers)."""
        n_rows = self.size_row.shape[0]
        n_cols = self.size_other.shape[0]
        lens = np.zeros(n_rows, np.int64)
        for rows, tptr, _, _ in self._row_pieces:
            lens[rows] = np.diff(tptr)
        tptr_r = np.zeros(n_rows + 1, np.int64)
        np.cumsum(lens, out=tptr_r[1:])
        tother_r = np.empty(tptr_r[-1], np.int32)
        tsim_r = np.empty(tptr_r[-1], np.float64)
        for rows, tptr, tother, tsim in self._row_pieces:
            n = np.diff(tptr)
            dest = np.repeat(tptr_r[rows] - tptr[:-1], n) + np.arange(tptr[-1])
            tother_r[dest] = tother
            tsim_r[dest] = tsim
        self._row_pieces = []
        cutoff_c = _column_cutoffs(self.col_s, self.col_n, self.col_nt, self.k)
        if self._cand:
            cq, cr, cs = (np.concatenate(x) for x in zip(*self._cand))
        else:
            cq, cr, cs = np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0)
        self._cand = []
        keep = (cutoff_c[cq] >= 0.0) & (cs >= cutoff_c[cq])
        cq, cr, cs = cq[keep], cr[keep], cs[keep]
        order = np.lexsort((cr, -cs, cq))
        tptr_c = np.zeros(n_cols + 1, np.int64)
        np.cumsum(np.bincount(cq, minlength=n_cols), out=tptr_c[1:])
        return (int(self.calls_part.sum()), tptr_r, tother_r, tsim_r, tptr_c,
                np.ascontiguousarray(cr[order]), np.ascontiguousarray(cs[order]))


def class_pair_tiers(ptr, other, inter, size_row, size_other, count_row, count_other, k,
                     n_parts=2):
    """From the CSR of class pairs (rows = A classes, ``other`` = B classes,
    overlaps ``inter``, J = inter / (|x| + |y| − inter)), in three passes over
    the pairs (no transposed copy): the exact number of call pairs, and the
    best similarity tiers of every row AND of every column (one wave of `TierStream`).

    A tier is the set of a row's partners with one similarity value.  Tiers
    are taken in descending similarity until their partners hold >= k calls
    (``count_other[q]`` calls for partner q; for a column, ``count_row[r]``),
    so at most k tiers are taken and the top-k partners of every call of the
    row lie inside them (what `groups.top_k_partners` needs).
    Pass 1 keeps, per row and per column, the k best distinct similarities
    with their call counts (columns: one list per part of rows, merged exactly);
    pass 2 counts the entries at or above each cutoff, pass 3 copies them;
    rows are stably sorted by similarity descending, columns by (similarity desc, row asc).
    Rows are cut into ``n_parts`` contiguous ranges of about equal entries, run in parallel.
    Returns ``(n_call_pairs, tptr_r, tother_r, tsim_r, tptr_c, trow_c, tsim_c)``:
    n_call_pairs = Σ over pairs of count_row[r] × count_other[q]; then a CSR
    over rows (partners by (sim desc, q asc)) and one over columns (partners by
    (sim desc, r asc)), float64 similarities.
    """
    stream = TierStream(size_row, size_other, count_row, count_other, k, n_parts)
    stream.add(ptr, other, inter, np.arange(ptr.shape[0] - 1, dtype=np.int64))
    return stream.finish()
