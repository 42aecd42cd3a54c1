"""Top-k similarity tiers of the class pairs of a join: `class_pair_tiers`.

Input: the class pairs of `setjoin_tree.jaccard_join_tree_overlaps` (or
`setjoin_prefix.jaccard_join`) as a CSR over A's classes with overlaps,
J = inter / (|x| + |y| − inter) (`setjoin.overlap_similarity`).  A *tier* of a class is
the set of its partners with one similarity value; tiers are taken in descending
similarity until their partners hold at least k calls, so the top-k partners of every
call of the class lie inside them (what `kept_pairs.top_k_picks` needs to keep the call
matches of TraceDiff Sec. III under a bound).  Computed for
every row (A class) and every column (B class) in two passes over the pairs, without
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
def tier_insert(top_s, top_n, nt, k, s, n):
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
def tiers_cutoff(top_s, top_n, nt, k):
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
def column_cutoffs(col_s, col_n, col_nt, k):
    """Per column: `tiers_cutoff` of the k best distinct similarities merged over the
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
                nt = tier_insert(ms, mn, nt, k, col_s[p, q, t], col_n[p, q, t])
        cutoff[q] = tiers_cutoff(ms, mn, nt, k)
    return cutoff


@njit(cache=True, parallel=True, nogil=True)
def _wave_tops(ptr, other, inter, rows, size_row, size_other, count_row, count_other, k, cut,
               col_s, col_n, col_nt, cutoff_w, tier_len, calls_part, partners_row, partners_col):
    """Pass 1 over one wave (CSR row i = row ``rows[i]``), rows cut into parts ``cut``:
    each row's tier cutoff (`tiers_cutoff` of its k best distinct similarities,
    J = inter / (|x| + |y| − inter)) into ``cutoff_w[i]``, and the number of its entries at
    or above it into ``tier_len[i]`` (re-reading the row's pairs while they are in cache, so
    pass 2 needs no counting read); each column's k best distinct similarities with call
    counts added to part p's running lists ``col_s[p]`` / ``col_n[p]`` / ``col_nt[p]``; per
    part the call pairs Σ count_row[r] × count_other[q] (``calls_part[p]``); per row
    Σ count_other over its partners (``partners_row[r]``), per part and column Σ count_row
    over its partners (``partners_col[p, q]``)."""
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
                nrt = tier_insert(rs, rn, nrt, k, sj, count_other[q])
                nt[q] = tier_insert(ts[q], tn[q], nt[q], k, sj, cr)
                w += count_other[q]
                pc[q] += cr
            cw = tiers_cutoff(rs, rn, nrt, k)
            cutoff_w[i] = cw
            n = 0
            if cw >= 0.0:
                for j in range(ptr[i], ptr[i + 1]):
                    if overlap_similarity(inter[j], nx, size_other[other[j]]) >= cw:
                        n += 1
            tier_len[i] = n
            partners_row[r] += w
            calls += w * cr
        calls_part[p] += calls


@njit(cache=True, parallel=True, nogil=True)
def _wave_tier_entries(ptr, other, inter, rows, size_row, size_other, cut, cutoff_w, cutoff_c, tptr, cq, cr, cs):
    """Pass 2 over one wave: the row tier entries (s ≥ the row's cutoff, into the CSR ``tptr``
    whose sizes pass 1 counted; each row then stably sorted by similarity desc) and the column
    candidates (s ≥ the column's running cutoff ``cutoff_c[q]``: (column, row, s)); part p
    writes its candidates from ``ptr[cut[p]]`` on (a part has no more candidates than pairs).
    Returns (tother, tsim, n_cand): ``n_cand[p]`` candidates of part p."""
    n_parts = cut.shape[0] - 1
    n_rows = ptr.shape[0] - 1
    tother = np.empty(tptr[n_rows], np.int32)
    tsim = np.empty(tptr[n_rows], np.float64)
    n_cand = np.zeros(n_parts, np.int64)
    for p in prange(n_parts):
        c0 = ptr[cut[p]]
        c = c0
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
        n_cand[p] = c - c0
        _sort_segments_by_sim(tptr, tother, tsim, cut[p], cut[p + 1])
    return tother, tsim, n_cand


def _no_lap(stage):
    pass


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
        self._cand_room = 0
        self._cq = self._cr = self._cs = None

    def _room(self, m):
        """Candidate buffers of at least m entries (np.empty: untouched pages are never resident)."""
        if m > self._cand_room:
            self._cand_room = m
            self._cq = np.empty(m, np.int32)
            self._cr = np.empty(m, np.int32)
            self._cs = np.empty(m, np.float64)
        return self._cq, self._cr, self._cs

    def _between_passes(self, ptr, other, inter, rows, lap):
        """Run between the two passes over a wave (a subclass adds its own read of it)."""

    def add(self, ptr, other, inter, rows, lap=_no_lap):
        """Feed one wave of class pairs; ``lap(stage)`` is called after each step ("tiers",
        and whatever `_between_passes` names)."""
        m = other.shape[0]
        rows = np.ascontiguousarray(rows, np.int64)
        if rows.shape[0] == 0:
            return
        self.n_pairs += m
        cut = np.searchsorted(ptr, (m * np.arange(self.n_parts + 1)) // self.n_parts).astype(np.int64)
        cut[0], cut[-1] = 0, rows.shape[0]
        cutoff_w = np.empty(rows.shape[0], np.float64)
        tier_len = np.empty(rows.shape[0], np.int64)
        _wave_tops(ptr, other, inter, rows, self.size_row, self.size_other, self.count_row, self.count_other,
                   self.k, cut, self.col_s, self.col_n, self.col_nt, cutoff_w, tier_len, self.calls_part,
                   self.partners_row, self._partners_col)
        lap("tiers")
        self._between_passes(ptr, other, inter, rows, lap)
        cutoff_c = column_cutoffs(self.col_s, self.col_n, self.col_nt, self.k)
        tptr = np.zeros(rows.shape[0] + 1, np.int64)
        np.cumsum(tier_len, out=tptr[1:])
        cq, cr, cs = self._room(m)
        tother, tsim, n_cand = _wave_tier_entries(ptr, other, inter, rows, self.size_row, self.size_other, cut,
                                                  cutoff_w, cutoff_c, tptr, cq, cr, cs)
        lap("tiers")
        self._row_pieces.append((rows.copy(), tptr, tother, tsim))
        starts = ptr[cut[:-1]]
        pieces = [(cq[s:s + n].copy(), cr[s:s + n].copy(), cs[s:s + n].copy())
                  for s, n in zip(starts.tolist(), n_cand.tolist())]
        self._cand.append(tuple(np.concatenate(x) for x in zip(*pieces)))
        self._n_cand += int(n_cand.sum())
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
        cutoff_c = column_cutoffs(self.col_s, self.col_n, self.col_nt, self.k)
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
    overlaps ``inter``, J = inter / (|x| + |y| − inter)), in two passes over
    the pairs (no transposed copy): the exact number of call pairs, and the
    best similarity tiers of every row AND of every column (one wave of `TierStream`).

    A tier is the set of a row's partners with one similarity value.  Tiers
    are taken in descending similarity until their partners hold >= k calls
    (``count_other[q]`` calls for partner q; for a column, ``count_row[r]``),
    so at most k tiers are taken and the top-k partners of every call of the
    row lie inside them (what `kept_pairs.top_k_picks` needs).
    Pass 1 keeps, per row and per column, the k best distinct similarities
    with their call counts (columns: one list per part of rows, merged exactly);
    and counts each row's entries at or above its cutoff; pass 2 copies them, and the
    column candidates at or above the running column cutoffs;
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
