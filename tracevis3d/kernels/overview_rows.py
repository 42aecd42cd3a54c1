"""TraceDiff overview bars (Sec. IV-A, Eq. 4) fed one row of A at a time: `row_overview`.

The same bars as `overview.overview_bars_both` (exact over ALL matches k(f, g); or, past
compare's overview budget, a threshold sample's estimate of them, `setjoin_window.sample_positions`):
for N equal
time intervals of each trace, bar n = Σ s(f, g) over the matches whose viewer call starts in
interval n, split by where the partner starts (aligned |t(g) − t(f)| ≤ tol, earlier, later),
and δ_n = Σ |t(f) − t(g)|.  Here the class pairs of one A class (row r: its calls' times
sorted, its matched B classes q with similarities s) are added while the join has them in
cache (`setjoin_fused`), never written to memory:
- A's side is finished within the row: the row's calls get a local difference array (the
  sweeps' step entries, `overview.sweep_pair`, at slots relative to the row), prefix-summed
  and binned when the row ends (``bins_a``: per bin earlier, aligned, later, δ);
- a one-call class of B adds its viewer sums straight to its call's bin (``bins_b1``, a few
  kilobytes, instead of a per-class row of accumulators);
- a class of B with several calls gets the sweeps' step entries in ``diff_b`` (one slot per
  call plus one per class, as `overview._overview_prepare` lays them out), binned at the end.
Per pair the float expressions are those of `overview._overview_blocks` (the one-call
relations, `sweep_pair`, `viewer_point`, `partner_steps`); only the order in which the
per-call sums are added into the bars differs, so the bars agree to rounding.  All
accumulators are per PART (fixed, not per thread) and added in part order: deterministic for
any thread count.  The parts are the join's parts of A's rows, each with its own ``diff_b``,
or (`setjoin_fused._overview_part`, the overview made after the walk) parts of B's rows that
share one ``diff_b``, each filling only its own rows' slots.
"""
import numpy as np
from numba import njit

from .gamma import splitmix64
from .overview import bin_of, bin_raw, clean_bars, gallop_up, partner_steps, segment_ends, sweep_calls, \
    sweep_pair, viewer_point


@njit(cache=True, nogil=True)
def overview_row_constants(ptr_a, time_a, ptr_b, time_b, span_a, span_b, n_bins):
    """What `row_overview` reads: prefix sums of each side's times (in class-and-time order),
    the bin of every call of A (`overview.bin_of`: interval width span / n_bins), and per
    class of B with ONE call its time and bin (NaN and −1 for the others).
    Returns (csum_a, bin_a, csum_b, x1_b, bin1_b)."""
    n_a = time_a.shape[0]
    n_b = time_b.shape[0]
    csum_a = np.zeros(n_a + 1, np.float64)
    bin_a = np.empty(n_a, np.int32)
    width_a = span_a / n_bins
    for i in range(n_a):
        csum_a[i + 1] = csum_a[i] + time_a[i]
        bin_a[i] = bin_of(time_a[i], 0.0, width_a, n_bins)
    csum_b = np.zeros(n_b + 1, np.float64)
    for i in range(n_b):
        csum_b[i + 1] = csum_b[i] + time_b[i]
    n_rows_b = ptr_b.shape[0] - 1
    x1_b = np.full(n_rows_b, np.nan)
    bin1_b = np.full(n_rows_b, -1, np.int32)
    width_b = span_b / n_bins
    for q in range(n_rows_b):
        if ptr_b[q + 1] - ptr_b[q] == 1:
            x1_b[q] = time_b[ptr_b[q]]
            bin1_b[q] = bin_of(x1_b[q], 0.0, width_b, n_bins)
    return csum_a, bin_a, csum_b, x1_b, bin1_b


@njit(cache=True, nogil=True, _nrt=False)
def _bin_row(loc, m, time_a, bin_a, f0, bins_a):
    """The row's calls f0 .. f0+m−1 into their bins: per call the prefix sum of its local
    difference array (earlier, aligned, later, c, d), δ = t·c + d (as `overview._bin_accumulated`)."""
    e = 0.0
    a = 0.0
    la = 0.0
    c = 0.0
    d = 0.0
    for i in range(m):
        e += loc[i, 0]
        a += loc[i, 1]
        la += loc[i, 2]
        c += loc[i, 3]
        d += loc[i, 4]
        t = time_a[f0 + i]
        b = bin_a[f0 + i]
        bins_a[b, 0] += e
        bins_a[b, 1] += a
        bins_a[b, 2] += la
        bins_a[b, 3] += t * c + d


@njit(cache=True, nogil=True, inline="always")
def row_key(r):
    """A row r's sampling key a_r = `gamma.splitmix64`(2r + `ROW_SALT`): it seeds the row's
    stream of the overview's sample (`setjoin_window.uniform`) and, XOR B's, a heavy pair's
    call sample.  Computed where it is used (a table of them was a kernel of its own whose
    first load from numba's cache cost 0.15-0.19 s of the first sampled comparison)."""
    return splitmix64(np.uint64(2 * r) + np.uint64(ROW_SALT))


#: the salt of the rows' keys (`row_key`) and of B's in a heavy pair's call sample
ROW_SALT, ROW_SALT_B = 0x243F6A8885A308D3, 0x13198A2E03707344


@njit(cache=True, nogil=True, _nrt=False)
def sweep_pair_sampled(small_t, s0, s1, o_small, large_t, l0, l1, o_large, csum_large, s, tol_small, tol_large,
                       diff_small, diff_large, pc, key):
    """`overview.sweep_pair` over a threshold sample of the small side's calls: call i is
    swept iff `overview._call_unit`(``key``, i) < ``pc`` and then weighs 1 / ``pc`` (its relations s / pc,
    its δ terms 1 / pc), so every bar and δ it feeds is a Horvitz-Thompson estimate of the
    whole pair's.  For a class pair certain in the sample (w = m·g ≥ θ, m ≤ g calls)
    whose small side's calls each stand for g < θ call pairs: pc = g / θ (each call kept as a
    match of g call pairs would be), so a heavy pair costs ~pc · m searches instead of m."""
    w = 1.0 / pc
    sweep_calls(small_t, s0, s1, o_small, large_t, l0, l1, o_large, csum_large, s * w, tol_small, tol_large,
                 diff_small, diff_large, w, pc, key)


@njit(cache=True, nogil=True, _nrt=False)
def row_overview(r, n, mq, ms, mu, x1_b, bin1_b, ptr_a, time_a, csum_a, bin_a, ptr_b, time_b, csum_b, tol_a, tol_b, loc,
                 bins_a, bins_b1, diff_b, inv_theta, key_r):
    """Add the matches of A row r (its calls ``time_a[ptr_a[r]:ptr_a[r+1]]``, sorted) with the
    B rows ``mq[:n]`` at similarities ``ms[:n]`` to the overview of both sides (Sec. IV-A),
    δ's terms weighted by ``mu[:n]`` (ones, or a sample's 1/p: `setjoin_window.sample_positions`).  With
    ``inv_theta`` = 1/θ > 0 (the sample's), a match of several calls on both sides that the
    sample kept for certain (weight 1) sweeps a sample of its smaller side's calls
    (`sweep_pair_sampled`, keyed by ``key_r`` (the row's a_r, `row_key`) XOR B's; 0: every call;
    ``x1_b[q]`` / ``bin1_b[q]``: the time and bin of B row q's call when it has one (NaN / −1
    otherwise, `overview_row_constants`).

    Viewer call at t, partner at x: earlier x < t − tol, later x > t + tol, aligned otherwise
    (tol of the viewer's trace); δ += |t − x| (Eq. 4).  One call of A against one call of B:
    both relations directly (A's sums in registers, B's into its call's bin of ``bins_b1``);
    against more calls on either side, `overview.sweep_pair` iterates the side with fewer
    calls over the other's sorted times (step entries in ``loc`` for A, at slots relative to
    the row, and in ``diff_b`` for B); a one-call B class against several A calls adds its
    viewer sums (`overview.viewer_point`) to its bin and its steps to ``loc``
    (`overview.partner_steps`).  ``loc`` (≥ calls of the row + 1 rows of 5) is scratch:
    the row's calls are binned into ``bins_a`` (earlier, aligned, later, δ) before returning."""
    f0 = ptr_a[r]
    f1 = ptr_a[r + 1]
    m = f1 - f0
    for i in range(m + 1):
        for x in range(5):
            loc[i, x] = 0.0
    if m == 1:
        t = time_a[f0]
        lo_t = t - tol_a
        hi_t = t + tol_a
        ae = 0.0
        aa = 0.0
        al = 0.0
        ac = 0.0
        ad = 0.0
        for j in range(n):
            q = mq[j]
            s = ms[j]
            u = mu[j]
            x = x1_b[q]
            if x != x:                 # NaN: B's class has more calls: sweep them
                sweep_pair(time_a, f0, f1, -f0, time_b, ptr_b[q], ptr_b[q + 1], q, csum_b, s, tol_a, tol_b,
                            loc, diff_b, u)
                continue
            # branch-free (on real times these relations are coin flips), as `_overview_blocks`
            ia = np.int64(x >= lo_t) + np.int64(x > hi_t)   # 0 earlier, 1 aligned, 2 later
            ae += s * (ia == 0)
            aa += s * (ia == 1)
            al += s * (ia == 2)
            sg = u if x >= t else -u
            ac -= sg
            ad += sg * x
            bq = bin1_b[q]
            bins_b1[bq, 2 - np.int64(x + tol_b >= t) - np.int64(x - tol_b > t)] += s
            bins_b1[bq, 3] += sg * (x - t)
        loc[0, 0] += ae
        loc[0, 1] += aa
        loc[0, 2] += al
        loc[0, 3] += ac
        loc[0, 4] += ad
    else:
        for j in range(n):
            q = mq[j]
            s = ms[j]
            u = mu[j]
            g0 = ptr_b[q]
            g1 = ptr_b[q + 1]
            pc = 1.0
            if inv_theta > 0.0 and u == 1.0 and g1 - g0 > 1:
                pc = max(m, g1 - g0) * inv_theta
            if pc < 1.0:
                key = key_r ^ splitmix64(np.uint64(q) + np.uint64(ROW_SALT_B))
                if m <= g1 - g0:
                    sweep_pair_sampled(time_a, f0, f1, -f0, time_b, g0, g1, q, csum_b, s, tol_a, tol_b, loc, diff_b,
                                       pc, key)
                else:
                    sweep_pair_sampled(time_b, g0, g1, q, time_a, f0, f1, -f0, csum_a, s, tol_b, tol_a, diff_b, loc,
                                       pc, key)
            elif m <= g1 - g0:
                sweep_pair(time_a, f0, f1, -f0, time_b, g0, g1, q, csum_b, s, tol_a, tol_b, loc, diff_b, u)
            elif g1 - g0 == 1:
                x = time_b[g0]
                mid = gallop_up(time_a, f0, f1, x, 0.0, 0)
                e, a, la, c, d = viewer_point(time_a, f0, f1, mid, x, tol_b, s, csum_a, u)
                bq = bin1_b[q]
                bins_b1[bq, 0] += e
                bins_b1[bq, 1] += a
                bins_b1[bq, 2] += la
                bins_b1[bq, 3] += x * c + d
                partner_steps(time_a, f0, f1, mid, -f0, x, tol_a, s, loc, u)
                segment_ends(f0, f1, -f0, s, 1, loc, u)
            else:
                sweep_pair(time_b, g0, g1, q, time_a, f0, f1, -f0, csum_a, s, tol_b, tol_a, diff_b, loc, u)
    _bin_row(loc, m, time_a, bin_a, f0, bins_a)


def overview_rows_finish(bins_a, bins_b1, diff_b, ptr_b, time_b, span_b, n_bins, tau):
    """(bars_a, delta_a, bars_b, delta_b) as `overview.overview_finish` returns them, from the
    parts' accumulators of `row_overview` (``bins_a`` / ``bins_b1``: per part (n_bins, 4);
    ``diff_b``: per part (slots, 5), the first one added to in place, or one shared by parts
    that fill disjoint slots), added in part order; then the bars' rounding residue
    cleared as `overview._bin_accumulated` does (every nonzero bar is a sum of s > τ)."""
    acc_a = np.zeros((n_bins, 4))
    acc_b = np.zeros((n_bins, 4))
    for p in range(len(bins_a)):
        acc_a += bins_a[p]
        acc_b += bins_b1[p]
    total = diff_b[0]
    for p in range(1, len(diff_b)):
        total += diff_b[p]
    acc_b += bin_raw(total, ptr_b, time_b, 0.0, span_b, int(n_bins))
    bars_a, delta_a = clean_bars(acc_a, tau)
    bars_b, delta_b = clean_bars(acc_b, tau)
    return bars_a, delta_a, bars_b, delta_b
