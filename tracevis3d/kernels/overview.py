"""TraceDiff overview bars (Sec. IV-A), exact over ALL matches.

For N equal time intervals of one trace (the "viewer"), bar n holds the sum of
similarities s(f, g) of every match k(f, g) whose call f of the viewer starts in
interval n, split by where g starts in the other trace:
aligned |t(g) − t(f)| ≤ tol, earlier t(g) < t(f) − tol (matches into the other
trace's past: red), later t(g) > t(f) + tol (its future: green); plus Eq. 4,
δ_n = Σ |t(f) − t(g)| over the same matches.  Times are relative to each trace's
first call start.  All pairs are counted (the complete class-level join), with
binary searches over each class's sorted start times, never one pair at a time.
"""
import numpy as np
from numba import njit, prange

from .setjoin import _first_greater as _upper
from .setjoin import _lower_bound as _lower
from .setjoin import overlap_similarity


@njit(cache=True, nogil=True)
def _bin_of(t, t0, width, n_bins):
    b = int((t - t0) / width) if width > 0 else 0
    if b < 0:
        b = 0
    if b >= n_bins:
        b = n_bins - 1
    return b


@njit(cache=True, parallel=True)
def overview_bars(pair_ptr, pair_row, pair_inter, size_own, size_other, own_ptr, own_time, other_ptr, other_time,
                  t0, span, n_bins, tol):
    """Overview of the viewer trace (TraceDiff Sec. IV-A, Eq. 4).

    Class-level input: for viewer class row r, its partner classes are
    ``pair_row[pair_ptr[r]:pair_ptr[r+1]]`` with overlaps ``pair_inter``
    (s = inter / (size_own[r] + size_other[q] − inter), float64);
    ``own_time[own_ptr[r]:own_ptr[r+1]]`` are the (sorted) start times of the
    viewer's calls of class r and ``other_time[other_ptr[q]:other_ptr[q+1]]``
    those of the other trace's class q.  Per (call f, partner class q) three
    binary searches give how many g start earlier / aligned / later, and prefix
    sums of times give Σ|t(f) − t(g)| (unweighted, as Eq. 4 is written); when a class row has many calls and few
    partner calls, the partners are merged into one weighted sorted list first
    (same sums, O((F + G) log) instead of O(F · Q · log)).
    Returns ``bars`` (n_bins, 3) = aligned, earlier, later sums of s, and
    ``delta`` (n_bins,) = Σ|t(f) − t(g)| (Eq. 4).
    """
    n_rows = pair_ptr.shape[0] - 1
    width = span / n_bins
    n_chunks = 64
    acc = np.zeros((n_chunks, n_bins, 4), np.float64)
    # prefix sums of the other side's times per class (for Eq. 4)
    csum = np.zeros(other_time.shape[0] + 1, np.float64)
    for i in range(other_time.shape[0]):
        csum[i + 1] = csum[i] + other_time[i]
    for ch in prange(n_chunks):
        for r in range(ch, n_rows, n_chunks):
            f_lo = own_ptr[r]
            f_hi = own_ptr[r + 1]
            n_f = f_hi - f_lo
            p_lo = pair_ptr[r]
            p_hi = pair_ptr[r + 1]
            if n_f == 0 or p_lo == p_hi:
                continue
            n_g = 0
            for j in range(p_lo, p_hi):
                q = pair_row[j]
                n_g += other_ptr[q + 1] - other_ptr[q]
            if n_f * (p_hi - p_lo) <= 4 * (n_f + n_g):
                for j in range(p_lo, p_hi):
                    q = pair_row[j]
                    s = overlap_similarity(pair_inter[j], size_own[r], size_other[q])
                    g_lo = other_ptr[q]
                    g_hi = other_ptr[q + 1]
                    for i in range(f_lo, f_hi):
                        t = own_time[i]
                        # t - tol <= t <= t + tol, so e1 <= mid <= e2: narrowed searches
                        e1 = _lower(other_time, g_lo, g_hi, t - tol)
                        mid = _lower(other_time, e1, g_hi, t)
                        e2 = _upper(other_time, mid, g_hi, t + tol)
                        below = mid - g_lo
                        above = g_hi - mid
                        dsum = (t * below - (csum[mid] - csum[g_lo])) + \
                            ((csum[g_hi] - csum[mid]) - t * above)
                        b = _bin_of(t, t0, width, n_bins)
                        acc[ch, b, 0] += s * (e2 - e1)
                        acc[ch, b, 1] += s * (e1 - g_lo)
                        acc[ch, b, 2] += s * (g_hi - e2)
                        acc[ch, b, 3] += dsum
            else:
                # merge every partner call into one list weighted by s
                gt = np.empty(n_g, np.float64)
                gw = np.empty(n_g, np.float64)
                m = 0
                for j in range(p_lo, p_hi):
                    q = pair_row[j]
                    s = overlap_similarity(pair_inter[j], size_own[r], size_other[q])
                    for i in range(other_ptr[q], other_ptr[q + 1]):
                        gt[m] = other_time[i]
                        gw[m] = s
                        m += 1
                order = np.argsort(gt, kind="mergesort")
                gt = gt[order]
                gw = gw[order]
                cw = np.zeros(n_g + 1, np.float64)
                ct = np.zeros(n_g + 1, np.float64)
                for i in range(n_g):
                    cw[i + 1] = cw[i] + gw[i]
                    ct[i + 1] = ct[i] + gt[i]
                for i in range(f_lo, f_hi):
                    t = own_time[i]
                    e1 = _lower(gt, 0, n_g, t - tol)
                    mid = _lower(gt, e1, n_g, t)
                    e2 = _upper(gt, mid, n_g, t + tol)
                    dsum = (t * mid - ct[mid]) + ((ct[n_g] - ct[mid]) - t * (n_g - mid))
                    b = _bin_of(t, t0, width, n_bins)
                    acc[ch, b, 0] += cw[e2] - cw[e1]
                    acc[ch, b, 1] += cw[e1]
                    acc[ch, b, 2] += cw[n_g] - cw[e2]
                    acc[ch, b, 3] += dsum
    bars = np.zeros((n_bins, 3), np.float64)
    delta = np.zeros(n_bins, np.float64)
    for ch in range(n_chunks):
        for b in range(n_bins):
            bars[b, 0] += acc[ch, b, 0]
            bars[b, 1] += acc[ch, b, 1]
            bars[b, 2] += acc[ch, b, 2]
            delta[b] += acc[ch, b, 3]
    return bars, delta
