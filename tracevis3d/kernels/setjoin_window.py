"""What the comparison needs from one row's class pairs, read from the row's overlap counters
over its size window without listing its matches: `window_pass`, `row_candidates`,
`row_tier_entries`, `column_pairs`, `sample_positions` (TraceDiff Sec. III, Eq. 3; Sec. IV-A).

A row x of A (|x| = nx, ``cr`` calls) matches the B sets y (by size rank k) of its window
with c_k = |x ∩ y_k| ≥ `setjoin.min_overlap`(nx, |y_k|, τ) (⇔ J > τ).  At 10^6 calls of the
synthetic pair a row's window holds ~72k sets of which ~7.5k match (521M matches in all);
listing every match and visiting it one by one (its similarity, its row and column tiers, its
partner counts, its overview sample decision) cost ~7 ns a match, 2/3 of the join.  Here:

- ONE vectorised pass per run of equal |y| (`window_pass`): the match flag m_k, the partner
  calls Σ m_k·calls(y_k) (the row's ``partners_row``), the column hits m_k (a byte per
  column per part, `HITS8_ROWS` rows between flushes) and, for a row of several calls, the
  column calls m_k·(cr − 1); the column candidates m_k ∧ c_k ≥ α_k·(nx + |y_k|), α_k =
  rej_k / (1 + rej_k) rounded down (⇐ J ≥ rej_k, the part's column cutoff: a superset of the
  pairs a column's part list can take, each checked exactly after); each run's largest
  overlap.  ~0.2 ns a set of the window against ~7 ns a match.
- the row's own tiers from `row_candidates`: the k-th largest of the runs' best similarities
  is a lower bound T of the row's cutoff (k runs with a match hold ≥ k calls at J ≥ T), so
  only the sets with J ≥ T are visited (the runs whose best reaches T).
- the overview's threshold sample (Duffield, Lund, Thorup 2001: match (x, y) kept with
  p = min(1, cr·calls(y)/θ), weighted 1/p) drawn as positions of the window
  (`sample_positions`: geometric gaps at p₀ = cr/θ over the sets of one call, the sets of
  several calls by buckets of calls at their own rates), then checked for a match: ~window/θ
  positions a row instead of a hash per match.

Exact: the counts, partner sums and tiers are those of every match (the candidates are
supersets, checked in float64 with the expressions of `setjoin_rowtiers`); the sample is a
Poisson sample with the same p per match as the per-match threshold sample it replaced (another
draw).
"""
import numpy as np
from numba import njit

from .gamma import splitmix64
from .setjoin import lower_bound
from .setjoin_tiers import column_cutoffs, tier_insert, tiers_cutoff

#: rows whose column hits are added in bytes (`window_pass`) before the bytes are flushed to
#: the part's 64-bit hits: at most 255, so no byte overflows
HITS8_ROWS = 255
#: a bucket of `sample_positions` whose largest rate q is at least this draws a
#: uniform per set instead of geometric gaps (a logarithm a draw)
DENSE_Q = 0.25


@njit(cache=True, nogil=True, inline="always")
def _below32(x):
    """A float32 not above x (x ≥ 0 rounded down by more than float32's rounding)."""
    return np.float32(x * (1.0 - 1e-6)) if x > 0.0 else np.float32(x)


@njit(cache=True, nogil=True)
def need_by_total(n_total, tau):
    """need[t] = the smallest overlap o ≥ 1 with o / (t − o) > τ in float64 (t = |x| + |y|), for
    t < ``n_total``: `setjoin.min_overlap`(nx, ny, τ) without its cap at min(nx, ny) + 1 (an
    overlap never exceeds min(nx, ny), so c ≥ need[nx + ny] ⇔ c ≥ min_overlap ⇔ J > τ)."""
    out = np.empty(max(int(n_total), 1), np.int64)
    for t in range(out.shape[0]):
        o = int(np.floor(tau * t / (1.0 + tau))) - 1
        if o < 1:
            o = 1
        while o < t and not (o / (t - o) > tau):
            o += 1
        out[t] = o
    return out


@njit(cache=True, nogil=True, _nrt=False)
def window_pass(nx, cr, k0, k1, need_t, b_size_sorted, run_end, cnt, count_k, alpha, hits8, extra, cand,
                run_lo, run_need, run_max, run_any):
    """One pass over the window [k0, k1) (B size ranks) of a row with |x| = ``nx`` and ``cr``
    calls, counters ``cnt`` (c_k = |x ∩ y_k|), run by run of equal |y| (``run_end``):
    m_k = c_k ≥ need (one exact integer per run, ``need_t[nx + |y|]``: `need_by_total`);
    ``hits8[k]`` += m_k; ``extra[k]`` += m_k·(cr − 1) (rows of several calls only);
    ``cand[k]`` = m_k ∧ float32(c_k) ≥ ``alpha[k]``·float32(nx + |y_k|) (written over the whole
    window); per run j: ``run_lo[j]`` its first rank, ``run_need[j]``, ``run_max[j]`` = max c_k,
    ``run_any[j]`` = any cand.  Returns (runs, Σ m_k·``count_k[k]``)."""
    top = np.iinfo(cnt.dtype).max
    n_runs = 0
    w = 0
    k = k0
    while k < k1:
        e = min(run_end[k], k1)
        ny = b_size_sorted[k]
        need = cnt.dtype.type(min(need_t[nx + ny], min(nx, ny) + 1, top))  # (no overlap exceeds min(nx, ny))
        tot = np.float32(nx + ny)
        # indexed by unsigned positions of the whole arrays: no negative-index wrap, so the
        # loops vectorise, and no slice per run (a slice is a new array whose reference count,
        # shared by the walkers, is raised and dropped atomically: 5 per run, 10.9M runs at
        # 10^6 calls); the lanes kept narrow (numba widens integer arithmetic to 64 bits: cast back)
        ku, eu = np.uint64(k), np.uint64(e)
        wr = count_k.dtype.type(0)
        mx = cnt.dtype.type(0)
        anyc = np.uint8(0)
        if cr == 1:
            for i in range(ku, eu):
                ci = cnt[i]
                m = np.uint8(ci >= need)
                hits8[i] = np.uint8(hits8[i] + m)
                wr = count_k.dtype.type(wr + count_k[i] * m)
                cd = np.uint8(m & np.uint8(np.float32(ci) >= alpha[i] * tot))
                cand[i] = cd
                anyc = np.uint8(anyc | cd)
                mx = cnt.dtype.type(max(mx, ci))
        else:
            more = extra.dtype.type(cr - 1)
            for i in range(ku, eu):
                ci = cnt[i]
                m = np.uint8(ci >= need)
                hits8[i] = np.uint8(hits8[i] + m)
                extra[i] = extra.dtype.type(extra[i] + more * m)
                wr = count_k.dtype.type(wr + count_k[i] * m)
                cd = np.uint8(m & np.uint8(np.float32(ci) >= alpha[i] * tot))
                cand[i] = cd
                anyc = np.uint8(anyc | cd)
                mx = cnt.dtype.type(max(mx, ci))
        run_lo[n_runs] = k
        run_need[n_runs] = need
        run_max[n_runs] = mx
        run_any[n_runs] = anyc
        w += wr
        n_runs += 1
        k = e
    return n_runs, w


@njit(cache=True, nogil=True, _nrt=False)
def row_candidates(nx, top_k, n_runs, run_lo, run_need, run_max, k1, run_end, b_size_sorted, cnt, top, out_k,
                   out_s):
    """The matches of a row that can be in its tiers, from `window_pass`' runs: T = the
    ``top_k``-th largest best similarity of a run with a match (−1 with fewer such runs), and
    every set k of the window with J = c / (nx + |y| − c) ≥ T (and c ≥ the run's need) in
    ``out_k`` (ascending) / ``out_s``.  The row's cutoff (`setjoin_tiers.tiers_cutoff`) is ≥ T:
    the k runs' best sets hold ≥ k calls at J ≥ T; so its tiers from these candidates are those
    from all its matches.  ``top``: scratch of ``top_k``.  Returns the number of candidates."""
    n_top = 0
    for j in range(n_runs):
        c = run_max[j]
        if c < run_need[j]:
            continue
        s = c / (nx + b_size_sorted[run_lo[j]] - c)
        if n_top == top_k and s <= top[n_top - 1]:
            continue
        p = n_top if n_top < top_k else top_k - 1
        while p > 0 and top[p - 1] < s:
            top[p] = top[p - 1]
            p -= 1
        top[p] = s
        if n_top < top_k:
            n_top += 1
    t = top[top_k - 1] if n_top == top_k else -1.0
    n = 0
    for j in range(n_runs):
        c = run_max[j]
        if c < run_need[j]:
            continue
        ny = b_size_sorted[run_lo[j]]
        if c / (nx + ny - c) < t:
            continue
        need_t = run_need[j]
        if t > 0.0:
            need_t = max(need_t, np.int64(np.floor(t * (nx + ny) / (1.0 + t))) - 1)
        for kk in range(np.uint64(run_lo[j]), np.uint64(min(run_end[run_lo[j]], k1))):   # unsigned: no wrap
            ck = np.int64(cnt[kk])
            if ck >= need_t:
                s = ck / (nx + ny - ck)
                if s >= t:
                    out_k[n] = np.int64(kk)
                    out_s[n] = s
                    n += 1
    return n


@njit(cache=True, nogil=True, _nrt=False)
def row_tier_entries(n, cand_k, cand_s, count_k, top_k, b_by_size, direct, rs, rn, tq, ts):
    """A row's tier entries from its candidates (`row_candidates`, or all its matches):
    the cutoff of its ``top_k`` best distinct similarities with their calls
    (`setjoin_tiers.tiers_cutoff`), and the candidates at or above it as (B row, J) in ``tq`` /
    ``ts`` by J descending, then B row ascending (``b_by_size`` maps a size rank to its B row
    unless ``direct``).  Returns their number."""
    nrt = 0
    for j in range(n):
        nrt = tier_insert(rs, rn, nrt, top_k, cand_s[j], np.int64(count_k[cand_k[j]]))
    cw = tiers_cutoff(rs, rn, nrt, top_k)
    if cw < 0.0:
        return 0
    n_t = 0
    for j in range(n):
        if cand_s[j] >= cw:
            tq[n_t] = cand_k[j] if direct else b_by_size[cand_k[j]]
            ts[n_t] = cand_s[j]
            n_t += 1
    # (J desc, B row asc): insertion sort, the entries are few
    for j in range(1, n_t):
        q = tq[j]
        s = ts[j]
        i = j
        while i > 0 and (ts[i - 1] < s or (ts[i - 1] == s and tq[i - 1] > q)):
            tq[i] = tq[i - 1]
            ts[i] = ts[i - 1]
            i -= 1
        tq[i] = q
        ts[i] = s
    return n_t


@njit(cache=True, nogil=True, _nrt=False)
def column_pairs(n, ks, ss, cr, top_k, rej, alpha, col_s, col_n, col_nt, cand_q, cand_s):
    """A row's pairs (its ``cr`` calls, columns ``ks[:n]`` at J = ``ss[:n]``), in order, each
    added to its column's part list (the ``top_k`` best distinct similarities with calls, as
    `setjoin_tiers.tier_insert`: skipped below ``rej[kk]``, the part's cutoff rounded down to
    float32, −1 until the list holds ``top_k`` calls), the cutoff and ``alpha[kk]``
    (`window_pass`' bound) raised with it, and the pair written as a candidate (kk, s) when s
    is at or above the part's cutoff after the insert.  The parts' lists merge exactly at the
    end (`finish_row_tiers`): a pair below a part's cutoff, of any part, is neither in the
    final tiers nor moves the final cutoff.  Returns the candidates written.
    One loop with the insert written out, no helper: an inlined helper's array arguments are
    reference-counted at every call (an atomic add and subtract each, on counts the walkers
    share), which at 6·10^6 pairs (10^6 calls) was half the walk's reference counting."""
    nc = 0
    for i in range(n):
        kk = ks[i]
        s = ss[i]
        if s < rej[kk]:
            continue
        nt = col_nt[kk]
        if not (nt == top_k and s < col_s[kk, nt - 1]):
            p = 0
            while p < nt and col_s[kk, p] > s:
                p += 1
            if p < nt and col_s[kk, p] == s:
                col_n[kk, p] += cr
            else:
                if nt < top_k:
                    nt += 1
                for t in range(nt - 1, p, -1):
                    col_s[kk, t] = col_s[kk, t - 1]
                    col_n[kk, t] = col_n[kk, t - 1]
                col_s[kk, p] = s
                col_n[kk, p] = cr
                col_nt[kk] = nt
        got = 0
        cut = -1.0
        for t in range(nt):
            got += col_n[kk, t]
            cut = col_s[kk, t]
            if got >= top_k:
                break
        if got >= top_k:
            r = _below32(cut)
            if r > rej[kk]:         # shared by the parts: any part's cutoff bounds the column's from below
                rej[kk] = r
                alpha[kk] = _below32(np.float64(r) / (1.0 + np.float64(r)))
        if s >= cut:
            cand_q[nc] = kk
            cand_s[nc] = s
            nc += 1
    return nc


@njit(cache=True, nogil=True, inline="always")
def uniform(seed, i):
    """The i-th uniform of the stream ``seed``: splitmix64(seed + i) to 53 bits, in [0, 1)."""
    return np.float64(splitmix64(seed + np.uint64(i)) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, nogil=True, _nrt=False)
def sample_positions(k0, k1, p0, heavy_bits, heavy_ptr, heavy_k, heavy_calls, seed, pos):
    """Window positions k in [k0, k1), each drawn independently with probability
    p_k = min(1, p₀·calls(y_k)), 0 < p₀ < 1, in two disjoint layers:
    - the sets of one call (p_k = p₀): geometric gaps at p₀ over the window, a gap landing
      on a set of several calls (its bit set in ``heavy_bits``, `heavy_buckets`: 12 KB at
      10^6 calls, in L1) dropped;
    - the sets of several calls, by bucket (``heavy_k[heavy_ptr[b]:heavy_ptr[b + 1]]``, the
      sets with calls ``heavy_calls`` in [2^b, 2^(b+1)), ascending: `heavy_buckets`): every set
      when p₀·2^b ≥ 1 (all certain), a uniform each where the bucket's largest rate
      q = min(1, p₀·2^(b+1)) is at least `DENSE_Q`, else geometric gaps at q, each drawn set
      thinned to its own p_k (kept when u·q < p_k).
    Each set is in exactly one layer, so no draw is checked against another, and a drawn set
    of several calls is written always and kept by the count (no branch on a coin flip).  The
    former layering (every set at p₀, the sets of several calls again at their excess rate
    (p_k − p₀) / (1 − p₀), each such draw searched among the first layer's positions) took
    0.64 s of one thread over the rows of the 10^6-call pair; this 0.24 s, for as many
    positions (21.7M; another draw of the same law).  Random numbers from the stream ``seed``
    (`uniform`).  Writes the positions, distinct (the first layer's ascending, then each
    bucket's), to ``pos``; returns their number and the first layer's.  Reads the bucket
    arrays in order and nothing per size rank but the bits (it runs inside the join's walk,
    whose counters fill the caches: a list of the sets of one call, read at each draw instead,
    took 0.22 s alone but missed the cache at nearly every draw in the walk, where it was 5.5 %
    of the comparison's perf samples against 3.2 % with the bits)."""
    n = 0
    ctr = 0
    inv_lg = 1.0 / np.log1p(-p0)
    span = np.float64(k1 - k0)
    x = -1.0                        # the last position drawn, from k0
    while True:
        x += 1.0 + np.floor(np.log(1.0 - uniform(seed, ctr)) * inv_lg)
        ctr += 1
        if x >= span:
            break
        k = k0 + np.int64(x)
        pos[n] = k
        n += 1 - np.int64((heavy_bits[k >> 6] >> np.uint64(k & 63)) & np.uint64(1))
    n_base = n
    for b in range(heavy_ptr.shape[0] - 1):
        lo = lower_bound(heavy_k, heavy_ptr[b], heavy_ptr[b + 1], k0)
        hi = lower_bound(heavy_k, lo, heavy_ptr[b + 1], k1)
        if lo >= hi:
            continue
        if p0 * np.float64(np.int64(1) << b) >= 1.0:           # every set of the bucket is certain (p = 1)
            for j in range(lo, hi):
                pos[n] = heavy_k[j]
                n += 1
            continue
        q_hi = min(1.0, p0 * np.float64(np.int64(2) << b))
        if q_hi >= DENSE_Q:                 # most sets drawn: a uniform each, no gaps
            for j in range(lo, hi):          # written always, kept by the count (no branch)
                pos[n] = heavy_k[j]
                n += np.int64(uniform(seed, ctr + j - lo) < p0 * heavy_calls[j])
            ctr += hi - lo
            continue
        inv_lg_b = 1.0 / np.log1p(-q_hi)
        span_b = np.float64(hi - lo)
        x = -1.0
        while True:
            x += 1.0 + np.floor(np.log(1.0 - uniform(seed, ctr)) * inv_lg_b)
            ctr += 1
            if x >= span_b:
                break
            j = lo + np.int64(x)
            pos[n] = heavy_k[j]
            n += np.int64(uniform(seed, ctr) * q_hi < p0 * heavy_calls[j])
            ctr += 1
    return n, n_base


def heavy_buckets(count_k):
    """The layers of `sample_positions`: the sets of several calls by bucket of calls
    (``heavy_ptr``, ``heavy_k``, ``heavy_calls``: bucket b = the size ranks with calls in
    [2^b, 2^(b+1)), ascending, and their calls (float64)) and ``heavy_bits``, bit k of word
    k >> 6 set for the size ranks k of several calls (uint64).  Returns (heavy_ptr, heavy_k,
    heavy_calls, heavy_bits)."""
    count_k = np.asarray(count_k, np.int64)
    ks = np.flatnonzero(count_k > 1)
    b = (np.frexp(count_k[ks].astype(np.float64))[1] - 1).astype(np.int64)   # exact below 2^53
    n_b = int(b.max()) + 1 if ks.size else 1
    order = np.lexsort((ks, b))
    ptr = np.zeros(n_b + 1, np.int64)
    np.cumsum(np.bincount(b, minlength=n_b), out=ptr[1:])
    bits = np.zeros((count_k.shape[0] >> 6) + 1, np.uint64)
    np.bitwise_or.at(bits, ks >> 6, np.left_shift(np.uint64(1), (ks & 63).astype(np.uint64)))
    return ptr, ks[order].astype(np.int64), count_k[ks[order]].astype(np.float64), bits


def finish_row_tiers(n_rows, n_cols, k, parts):
    """``(tptr_r, tother_r, tsim_r, tptr_c, trow_c, tsim_c)`` as `setjoin_tiers.TierStream.finish`
    returns them, from the parts of a join fed row by row (`row_tier_entries`, `column_pairs`):
    each part a dict with ``rows`` / ``row_len`` (its
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
    cutoff_c = column_cutoffs(col_s, col_n, col_nt, int(k))
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
