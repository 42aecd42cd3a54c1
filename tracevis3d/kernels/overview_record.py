"""The fused join's overview made after its walk, from the walkers' record of their kept
matches (TraceDiff Sec. IV-A, Eq. 4; `setjoin_fused`, shared items): `deferred_overview`.

When the walkers of `setjoin_fused.jaccard_join_tree_fused` share one queue of items, which
walker takes a row depends on their timing, and the overview's float sums must not.  Each
walker records its rows' kept matches (B row, J / p, 1 / p); afterwards the record is cut into
`OVERVIEW_PARTS` fixed parts by B row, of about equal estimated work (`overview_work`), and
each part (`overview_part`) adds the matches of its B rows, rows ascending, with
`overview_rows.row_overview`, the same per-pair sums as during a walk: B's side into the
slots of its own rows of ONE shared difference array (a B row's calls and its end slot are
contiguous: no other part writes there), A's side binned per part (binning is linear: a row
whose matches fall in several parts is binned by each), and the parts' bins (a few kilobytes)
added in part order by `overview_rows.overview_rows_finish`.  The parts are taken by whichever
thread is free; the result does not depend on the threads.

On the 10^6 synthetic pair (1.18M recorded matches, 2 cores) the 16 parts take ~0.65 CPU-s,
0.32-0.36 s of wall.  Parts with a difference array each (44 MB for 4 parts of A's rows) would
spend 0.1 s per part on the first touch of that array alone (0.84 CPU-s in all): hence the one
shared array.
"""
import queue
import time

import numpy as np
from numba import njit

from .overview_rows import row_key, row_overview

#: parts of B's rows the deferred overview is made in (fixed: their bins are added in part
#: order), taken by whichever thread is free (`deferred_overview`)
OVERVIEW_PARTS = 16


@njit(cache=True, nogil=True, _nrt=False)
def add_row(v, n, mq, ms, mu, inv_theta, oc, loc, bins_a, bins_b1, diff_b):
    """A row v's ``n`` kept matches (B rows ``mq``, J / p ``ms``, 1 / p ``mu``) added to the
    overview by `overview_rows.row_overview`, with the fused join's constants ``oc`` (ptr_a,
    time_a, csum_a, bin_a, ptr_b, time_b, csum_b, tol_a, tol_b, x1_b, bin1_b) and, when the
    overview samples (``inv_theta`` = 1/θ > 0), the row's key (`overview_rows.row_key`): what
    the walk does for each row (`setjoin_fused._overview_row`) and a part after it
    (`overview_part`)."""
    ptr_a, time_a, csum_a, bin_a, ptr_b, time_b, csum_b, tol_a, tol_b, x1_b, bin1_b = oc
    key = row_key(v) if inv_theta > 0.0 else np.uint64(0)
    row_overview(v, n, mq, ms, mu, x1_b, bin1_b, ptr_a, time_a, csum_a, bin_a, ptr_b, time_b, csum_b, tol_a, tol_b,
                 loc, bins_a, bins_b1, diff_b, inv_theta, key)


@njit(cache=True, nogil=True)
def overview_part(rows, start, count, rec_q, rec_s, rec_u, q_lo, q_hi, inv_theta, oc, scratch, bins_a, bins_b1,
                  diff_b):
    """The deferred overview of the matches with B rows in [``q_lo``, ``q_hi``): of each row
    ``rows[i]`` (ascending), those among its recorded matches ``rec_*[start[i]:start[i] +
    count[i]]`` (B rows, J / p, 1 / p) added as the walk adds them (`add_row`): A's side to
    this part's ``bins_a`` (a row's sums split between the parts its matches fall in; binning
    is linear), B's to ``bins_b1`` and to the slots of B rows [q_lo, q_hi) of the shared
    ``diff_b`` (row q's calls and end slot: [ptr_b[q] + q, ptr_b[q + 1] + q + 1)), which no
    other part writes.  Each accumulator is zeroed here (the slots by the thread that fills
    them).  ``scratch``: (loc, B rows, J / p, 1 / p) of a row."""
    ptr_b = oc[4]
    loc, fq, fs, fu = scratch
    diff_b[ptr_b[q_lo] + q_lo:ptr_b[q_hi] + q_hi] = 0.0
    bins_a[:] = 0.0
    bins_b1[:] = 0.0
    for i in range(rows.shape[0]):
        n = 0
        for e in range(start[i], start[i] + count[i]):
            q = rec_q[e]
            if q_lo <= q < q_hi:
                fq[n] = q
                fs[n] = rec_s[e]
                fu[n] = rec_u[e]
                n += 1
        if n > 0:
            add_row(np.int64(rows[i]), np.int64(n), fq, fs, fu, inv_theta, oc, loc, bins_a, bins_b1, diff_b)


@njit(cache=True, nogil=True)
def overview_work(rows, count, rec_q, ptr_a, ptr_b):
    """The estimated work of the deferred overview per B row q: Σ over its recorded matches of
    1 + the smaller side's calls, + 0.1 · (q's calls + 1) for its slots.  The matches' terms are
    integers, summed exactly in int64 (their order depends on the walkers' timing; the parts
    cut from this estimate must not)."""
    nb = ptr_b.shape[0] - 1
    per_q = np.zeros(nb, np.int64)
    e = 0
    for i in range(rows.shape[0]):
        m = ptr_a[rows[i] + 1] - ptr_a[rows[i]]
        for _ in range(count[i]):
            q = rec_q[e]
            per_q[q] += 1 + min(m, ptr_b[q + 1] - ptr_b[q])
            e += 1
    work = np.empty(nb)
    for q in range(nb):
        work[q] = np.float64(per_q[q]) + 0.1 * np.float64(ptr_b[q + 1] - ptr_b[q] + 1)
    return work


def overview_parts(outs, ptr_a, ptr_b, n_bins, inv_theta, oc, n_workers, diff_b):
    """The walkers' record (``outs``: their `setjoin_fused._fused_part` results) cut into
    `OVERVIEW_PARTS` fixed parts by B row, of about equal estimated work (`overview_work`: per
    match 1 + the smaller side's calls, per B call 0.1 for its slot): returns (bounds, bins,
    seconds, run), the parts' B rows [bounds[j], bounds[j + 1]), each part's (bins_a, bins_b1),
    the seconds each part took, and ``run(j)``, which makes part j (`overview_part`) into its
    bins and its slots of ``diff_b`` on whichever thread calls it (``n_workers`` scratches)."""
    rows = np.concatenate([o[8] for o in outs])
    count = np.concatenate([o[9] for o in outs])
    start = np.zeros(count.shape[0] + 1, np.int64)
    np.cumsum(count, out=start[1:])
    rec_q = np.concatenate([o[10] for o in outs])
    rec_s = np.concatenate([o[11] for o in outs])
    rec_u = np.concatenate([o[12] for o in outs])
    nb = ptr_b.shape[0] - 1
    work = overview_work(rows, count, rec_q, ptr_a, ptr_b)
    by_row = np.argsort(rows, kind="stable")
    rows, count, start = rows[by_row], count[by_row], start[:-1][by_row]
    cum = np.cumsum(work)
    n_parts = OVERVIEW_PARTS
    cuts = np.searchsorted(cum, cum[-1] * np.arange(1, n_parts) / n_parts) if nb else np.zeros(n_parts - 1, np.int64)
    bounds = np.concatenate([[0], np.minimum(cuts, nb), [nb]]).astype(np.int64)
    bins = [(np.empty((n_bins, 4)), np.empty((n_bins, 4))) for _ in range(n_parts)]
    seconds = [0.0] * n_parts
    width = int(count.max(initial=0))
    scratch = queue.SimpleQueue()
    for _ in range(n_workers):
        scratch.put((np.empty((int(np.diff(ptr_a).max(initial=0)) + 1, 5)), np.empty(width, np.int32),
                     np.empty(width), np.empty(width)))

    def run(j):
        t = time.perf_counter()
        mine = scratch.get()
        try:
            overview_part(rows, start, count, rec_q, rec_s, rec_u, bounds[j], bounds[j + 1], inv_theta, oc, mine,
                          bins[j][0], bins[j][1], diff_b)
        finally:
            scratch.put(mine)
        seconds[j] = time.perf_counter() - t
    return bounds, bins, seconds, run


def deferred_overview(outs, ptr_a, ptr_b, time_b, n_bins, inv_theta, oc, pool, n_workers):
    """The overview of the matches the walkers recorded (`setjoin_fused._overview_row`) in
    `OVERVIEW_PARTS` fixed parts by B row (`overview_parts`), taken from ``pool`` by whichever
    thread is free (`overview_part`): B's difference array is one, each part filling its own
    slots; the parts' bins (a few kilobytes each) are added in part order.  Returns (bins_a,
    bins_b1 per part, diff_b) for `overview_rows.overview_rows_finish`, and the parts' seconds."""
    diff_b = np.empty((time_b.shape[0] + ptr_b.shape[0] - 1, 5))
    _, bins, seconds, run = overview_parts(outs, ptr_a, ptr_b, n_bins, inv_theta, oc, n_workers, diff_b)
    list(pool.map(run, range(OVERVIEW_PARTS)))
    return [x[0] for x in bins], [x[1] for x in bins], diff_b, seconds
