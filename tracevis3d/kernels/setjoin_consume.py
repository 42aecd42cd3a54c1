"""One wave of class pairs consumed for the tiers and the overview: `WaveConsumer` (the
similarity tiers of `setjoin_tiers.TierStream` and the overview bars of
`overview.overview_add_pairs`).

TraceDiff Sec. III (tiers of J = inter / (|x| + |y| − inter) behind the kept call matches,
partner-call counts, the number of call pairs Σ count_x · count_y) and Sec. IV-A / Eq. 4 (the
overview bars, exact over all matches).  `TierStream.add` reads every class pair of a wave
three times (`_wave_tops`, then counting and copying in `_wave_tier_entries`); here twice:

- pass 1 (`_wave_tops_counted`): `_wave_tops`, and at each row's end, re-reading that row's
  pairs while they are in cache, the number of its tier entries (s ≥ its cutoff);
- pass 2 (`_wave_tier_entries_counted`): the row tier entries (sizes known) and the column
  candidates at or above the merged running column cutoffs in one read (each part writes
  its candidates from its first pair's offset on, so no counting read is needed).

The overview keeps its own read of the pairs (`overview._overview_blocks`): folded into
pass 1 it measured slower (2.3 s against 0.5 + 1.6 s, one thread, 48M class pairs of a
3·10^5-call pair: the inlined sweeps and tier inserts in one loop); it is cut into its own
(fixed) parts as `overview_add_pairs` cuts them, so its bars are identical.  The tiers'
parts are cut by entries as `TierStream` cuts them (exact whatever the cut:
`setjoin_tiers._column_cutoffs`).

Measured (bench/bench_compare_memory.py, 4-thread synthetic pair, 2 shared cores under a
varying load; the join's code is unchanged, so (tiers + overview) ÷ join compares runs):
10^6 calls, 521M class pairs: 1.16–1.57 before, 0.80–1.07 after (one-call B classes
against multi-call A classes summed into `overview._sweep_one`'s compact rows, one read
of the tiers fewer); 10^7 calls, 4.66·10^9 class pairs: 1.61 before, 1.48 after.  What
remains is per class pair, not per read: one thread, 48M class pairs of a 3·10^5-call pair,
the similarity alone costs 1.5 ns, the tiers 12 ns, the overview 8–12 ns for a one-call
class against one-call classes and 65–120 ns (before `_sweep_one`) when either side has more
calls (cache misses into the per-call difference arrays, 40 bytes per call).
"""
import numpy as np
from numba import njit, prange

from .overview import _overview_blocks, _overview_cut
from .setjoin import overlap_similarity
from .setjoin_tiers import TierStream, _column_cutoffs, _sort_segments_by_sim, _tier_insert, _tiers_cutoff


@njit(cache=True, parallel=True, nogil=True)
def _wave_tops_counted(ptr, other, inter, rows, size_row, size_other, count_row, count_other, k, cut,
                       col_s, col_n, col_nt, cutoff_w, tier_len, calls_part, partners_row, partners_col):
    """Pass 1 of the tiers over one wave (CSR row i = A row ``rows[i]``, parts ``cut``): as
    `setjoin_tiers._wave_tops` (s = J(x, y) = inter / (|x| + |y| − inter); the row's k best
    distinct similarities with call counts → its cutoff ``cutoff_w[i]``; the column's into
    part p's running lists; ``partners_row[r]`` += Σ count_other, ``partners_col[p, q]`` +=
    count_row[r], ``calls_part[p]`` += Σ count_row · count_other), and at each row's end the
    number of its tier entries (s ≥ cutoff) ``tier_len[i]``, re-reading the row's pairs while
    they are in cache (so pass 2 needs no counting read)."""
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
            cw = _tiers_cutoff(rs, rn, nrt, k)
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
def _wave_tier_entries_counted(ptr, other, inter, rows, size_row, size_other, cut, cutoff_w, cutoff_c,
                               tptr, cq, cr, cs):
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


class WaveConsumer(TierStream):
    """`TierStream` whose ``add`` also adds the wave to the overview's accumulators
    ``overview`` (`overview.overview_start`; finished by `overview.overview_finish`): the same
    tiers, partner counts and call-pair count as `TierStream.add` and the same bars, bit for
    bit, as `overview.overview_add_pairs` on every wave, with one read of the pairs fewer
    (see the module docstring).  ``n_parts``: the tiers' parts (`TierStream`); the overview
    keeps its accumulators' parts."""

    def __init__(self, size_row, size_other, count_row, count_other, k, overview, calls_ptr_a, time_a,
                 calls_ptr_b, time_b, tol_a, tol_b, n_parts=2):
        super().__init__(size_row, size_other, count_row, count_other, k, n_parts)
        self.overview = overview
        self.calls_ptr_a = calls_ptr_a
        self.time_a = time_a
        self.calls_ptr_b = calls_ptr_b
        self.time_b = time_b
        self.tol_a = float(tol_a)
        self.tol_b = float(tol_b)
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

    def add(self, ptr, other, inter, rows, lap=_no_lap):
        """Feed one wave of class pairs (CSR row i = A row ``rows[i]``, every row in one wave);
        ``lap(stage)`` is called at the end of each step ("tiers", "overview", "tiers")."""
        m = other.shape[0]
        rows = np.ascontiguousarray(rows, np.int64)
        if rows.shape[0] == 0:
            return
        self.n_pairs += m
        cut = np.searchsorted(ptr, (m * np.arange(self.n_parts + 1)) // self.n_parts).astype(np.int64)
        cut[0], cut[-1] = 0, rows.shape[0]
        cutoff_w = np.empty(rows.shape[0], np.float64)
        tier_len = np.empty(rows.shape[0], np.int64)
        _wave_tops_counted(ptr, other, inter, rows, self.size_row, self.size_other, self.count_row,
                           self.count_other, self.k, cut, self.col_s, self.col_n, self.col_nt, cutoff_w,
                           tier_len, self.calls_part, self.partners_row, self._partners_col)
        lap("tiers")
        n_ov = self.overview[3].shape[0]
        cut_ov = _overview_cut(ptr, other, rows, self.calls_ptr_a, self.calls_ptr_b, n_ov)
        _overview_blocks(ptr, other, inter, rows, self.size_row, self.size_other, self.calls_ptr_a, self.time_a,
                         self.calls_ptr_b, self.time_b, self.tol_a, self.tol_b, n_ov, cut_ov, *self.overview)
        lap("overview")
        cutoff_c = _column_cutoffs(self.col_s, self.col_n, self.col_nt, self.k)
        tptr = np.zeros(rows.shape[0] + 1, np.int64)
        np.cumsum(tier_len, out=tptr[1:])
        cq, cr, cs = self._room(m)
        tother, tsim, n_cand = _wave_tier_entries_counted(ptr, other, inter, rows, self.size_row,
                                                          self.size_other, cut, cutoff_w, cutoff_c, tptr,
                                                          cq, cr, cs)
        lap("tiers")
        self._row_pieces.append((rows.copy(), tptr, tother, tsim))
        starts = ptr[cut[:-1]]
        pieces = [(cq[s:s + n].copy(), cr[s:s + n].copy(), cs[s:s + n].copy())
                  for s, n in zip(starts.tolist(), n_cand.tolist())]
        self._cand.append(tuple(np.concatenate(x) for x in zip(*pieces)))
        self._n_cand += int(n_cand.sum())
        if self._n_cand > max(1 << 20, 2 * self._n_cand_pruned):
            self._prune(cutoff_c)

