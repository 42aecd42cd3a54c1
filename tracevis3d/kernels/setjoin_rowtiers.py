"""Similarity tiers fed one row of class pairs at a time: `row_tiers` (TraceDiff Sec. III).

The same results as `setjoin_tiers.TierStream` (the tiers behind the kept call matches of
`groups.top_k_partners`, the partner-call counts and the call-pair count Σ count_x · count_y),
but from the join's rows while they are in cache (`setjoin_fused`), so the class pairs are
never written.  J = inter / (|x| + |y| − inter) (`setjoin.overlap_similarity`'s expression).
A *tier* of a class is the set of its partners with one similarity value; tiers are taken in
descending similarity until their partners hold at least k calls.
- A row's tiers are final when its row ends: its k best distinct similarities with call
  counts give its cutoff, and its entries at or above it are the row's tier entries.
- A column (class of B) keeps, per PART of the rows, its k best distinct similarities with
  call counts (`setjoin_tiers._tier_insert`) and emits a candidate (column, row, s) whenever
  s is at or above the part's cutoff after the insert.  Once the part's list holds k calls,
  its cutoff is a lower bound of the column's final cutoff (the merged list holds those k
  calls too) and only rises, so a pair below it can neither be in the final tiers nor change
  the final cutoff: it is skipped (one comparison with `COLUMN_DTYPE`'s ``rej``) instead of inserted.  The
  parts' lists merge exactly (`setjoin_tiers._column_cutoffs`) and the candidates are cut to
  the final cutoffs (`finish_row_tiers`), as `TierStream.finish` does.
"""
import numpy as np
from numba import njit

from .setjoin_tiers import _column_cutoffs, _tier_insert, _tiers_cutoff

#: per class of B (a column), one 16-byte record, so a pair touches a quarter of a cache line
#: for it (the pairs of a row sweep B's classes in order: separate arrays cost a line each; a
#: 32-byte record with the overview's fields put the records of the two running parts of a
#: 10^7-call pair, 2 × 17 MB, past the 32 MB L3 cache): ``rej`` this part's cutoff rounded
#: DOWN to float32 (−1 while the part's list holds fewer than k calls), ``size`` |Γ|,
#: ``count`` its calls, ``calls`` the partner calls summed so far (this part's; at most the
#: calls of the side whose rows are walked: `COLUMN_DTYPE_WIDE` where they reach 2^32)
COLUMN_DTYPE = np.dtype([("rej", np.float32), ("size", np.int32), ("count", np.int32), ("calls", np.uint32)])
#: `COLUMN_DTYPE` with 64-bit partner calls (other sides of 2^32 calls or more), 32 bytes
COLUMN_DTYPE_WIDE = np.dtype([("rej", np.float32), ("size", np.int32), ("count", np.int32), ("pad", np.int32),
                              ("calls", np.int64), ("pad2", np.int64)])


def column_records(size_other, count_other, calls_rows=0):
    """A fresh `COLUMN_DTYPE` array (no partner calls, no cutoff yet); `COLUMN_DTYPE_WIDE`
    when ``calls_rows`` (the calls of the side whose rows are walked, what a column's
    partner calls sum to at most) reaches 2^32."""
    rec = np.zeros(len(size_other), COLUMN_DTYPE if int(calls_rows) < 2 ** 32 else COLUMN_DTYPE_WIDE)
    rec["size"] = size_other
    rec["count"] = count_other
    rec["rej"] = -1.0
    return rec


@njit(cache=True, nogil=True, inline="always")
def _below(x):
    """A float32 not above x (x ≥ 0 rounded down by more than float32's rounding)."""
    return np.float32(x * (1.0 - 1e-6)) if x > 0.0 else np.float32(x)


@njit(cache=True, nogil=True)
def _sort_tier(tq, ts, n):
    """Stable sort of the entries ``tq[:n]`` / ``ts[:n]`` by similarity descending
    (insertion sort: a row's tier entries are few)."""
    for j in range(1, n):
        q = tq[j]
        s = ts[j]
        i = j
        while i > 0 and ts[i - 1] < s:
            tq[i] = tq[i - 1]
            ts[i] = ts[i - 1]
            i -= 1
        tq[i] = q
        ts[i] = s


@njit(cache=True, nogil=True)
def row_tiers(r, n, mq, mi, ms, nx, cr, cols, k, col_s, col_n, col_nt, rs, rn, tq, ts, cand_q, cand_s, mc):
    """One row r of class pairs: its partners ``mq[:n]`` (B rows, ascending) with overlaps
    ``mi[:n]``; |x| = ``nx``, ``cr`` calls; ``cols`` the B rows' `COLUMN_DTYPE` records.
    Writes ``ms[j]`` = J of each pair; adds every pair to its column's part list (``col_s`` /
    ``col_n`` / ``col_nt``: the k best distinct similarities with call counts, skipped below
    the record's ``rej``) and ``cr`` to the record's ``calls``; writes the column candidates
    (s at or above the part's cutoff after the insert) to ``cand_q`` / ``cand_s`` and the
    row's tier entries (s ≥ the row's cutoff, by s descending, then B row ascending) to
    ``tq`` / ``ts``.  ``rs`` / ``rn``: scratch of k.  Writes each partner's calls to ``mc[j]``
    (what `overview_rows.sample_matches` weighs a match by, read here from the loaded record:
    a second pass reading the records cost a cache miss a match at 10^7 calls).
    Returns (tier entries, candidates, Σ count over the partners)."""
    nrt = 0
    w = 0
    nc = 0
    for j in range(n):
        q = mq[j]
        col = cols[q]
        c = np.int64(mi[j])
        s = c / (nx + np.int64(col.size) - c)
        ms[j] = s
        co = np.int64(col.count)
        mc[j] = co
        nrt = _tier_insert(rs, rn, nrt, k, s, co)
        w += co
        col.calls += cr             # the record's type (uint32 or int64) holds any sum
        if s < col.rej:
            continue
        nt = _tier_insert(col_s[q], col_n[q], col_nt[q], k, s, cr)
        col_nt[q] = nt
        got = 0
        cut = -1.0
        for t in range(nt):
            got += col_n[q, t]
            cut = col_s[q, t]
            if got >= k:
                break
        if got >= k:
            col.rej = _below(cut)
        if s >= cut:
            cand_q[nc] = q
            cand_s[nc] = s
            nc += 1
    cw = _tiers_cutoff(rs, rn, nrt, k)
    n_t = 0
    if cw >= 0.0:
        for j in range(n):
            if ms[j] >= cw:
                tq[n_t] = mq[j]
                ts[n_t] = ms[j]
                n_t += 1
        _sort_tier(tq, ts, n_t)
    return n_t, nc, w


@njit(cache=True, nogil=True)
def prune_candidates(cq, cr, cs, n, cols):
    """In place: keep the candidates (column, row, s) with s ≥ the part's cutoff of their
    column (the record's ``rej``: −1 while the part's list holds fewer than k calls); returns
    their number."""
    m = 0
    for i in range(n):
        if cs[i] >= cols[cq[i]].rej:
            cq[m] = cq[i]
            cr[m] = cr[i]
            cs[m] = cs[i]
            m += 1
    return m


def finish_row_tiers(n_rows, n_cols, k, parts):
    """``(tptr_r, tother_r, tsim_r, tptr_c, trow_c, tsim_c)`` as `setjoin_tiers.TierStream.finish`
    returns them, from the parts of `row_tiers`: each part a dict with ``rows`` / ``row_len`` (its
    rows in the order written, their tier entries' numbers), ``tq`` / ``ts`` (the entries),
    ``col_s`` / ``col_n`` / ``col_nt`` (its column lists) and ``cq`` / ``cr`` / ``cs`` (its candidates).
    Rows never written have no tiers; columns are by (similarity desc, row asc)."""
    lens = np.zeros(n_rows, np.int64)
    for p in parts:
        lens[p["rows"]] = p["row_len"]
    tptr_r = np.zeros(n_rows + 1, np.int64)
    np.cumsum(lens, out=tptr_r[1:])
    tother_r = np.empty(tptr_r[-1], np.int32)
    tsim_r = np.empty(tptr_r[-1], np.float64)
    for p in parts:
        src = np.zeros(p["rows"].shape[0] + 1, np.int64)
        np.cumsum(p["row_len"], out=src[1:])
        dest = np.repeat(tptr_r[p["rows"]] - src[:-1], p["row_len"]) + np.arange(src[-1])
        tother_r[dest] = p["tq"][:src[-1]]
        tsim_r[dest] = p["ts"][:src[-1]]
    col_s = np.stack([p["col_s"] for p in parts])
    col_n = np.stack([p["col_n"] for p in parts])
    col_nt = np.stack([p["col_nt"] for p in parts])
    cutoff_c = _column_cutoffs(col_s, col_n, col_nt, int(k))
    cq = np.concatenate([p["cq"] for p in parts])
    cr = np.concatenate([p["cr"] for p in parts])
    cs = np.concatenate([p["cs"] for p in parts])
    keep = (cutoff_c[cq] >= 0.0) & (cs >= cutoff_c[cq])
    cq, cr, cs = cq[keep], cr[keep], cs[keep]
    order = np.lexsort((cr, -cs, cq))
    tptr_c = np.zeros(n_cols + 1, np.int64)
    np.cumsum(np.bincount(cq, minlength=n_cols), out=tptr_c[1:])
    return (tptr_r, tother_r, tsim_r, tptr_c, np.ascontiguousarray(cr[order]),
            np.ascontiguousarray(cs[order]))
