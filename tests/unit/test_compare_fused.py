"""The fused tree join (kernels.setjoin_fused, setjoin_window, overview_rows): each kernel
against a plain-Python twin written from TraceDiff's definitions (Sec. III: J > τ, tiers;
Sec. IV-A: overview bars), and the fused comparison against the brute force and against the
streamed one (``keep_class_pairs=False`` takes the fused way, True the streamed)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracevis3d.analysis.comparison import compare_traces
from tracevis3d.kernels.setjoin import min_overlap

from compare_twins import (NAMES_A, NAMES_B, all_pairs, assert_tiers_are_the_twins, build_trace, kept_pairs,
                           overview_bf, random_class_pairs, tiers_twin, trace_ops)


# ----------------------------------------------------------------- the readout
def matches_twin(nx, sizes, cnt, k0, k1, tau):
    """The size ranks kk in [k0, k1) with cnt / (nx + |y| − cnt) > τ (float64), ascending."""
    return [kk for kk in range(k0, k1) if cnt[kk] > 0 and cnt[kk] / (nx + sizes[kk] - cnt[kk]) > tau]


@pytest.mark.parametrize("tau", [0.1, 0.2, 0.5, 0.8])
def test_window_pass_equals_twin(tau):
    """`setjoin_window.window_pass` over random windows against the definition: the matches
    m_k (J > τ in float64, `matches_twin`) added to the column hits (and m_k·(cr − 1) to the
    column calls), Σ m_k·calls(y_k), the candidates m_k ∧ float32(c_k) ≥ α_k·(nx + |y_k|), each
    run's first rank, need (`setjoin.min_overlap` where a match is possible), largest overlap
    and any-candidate; `need_by_total` is min_overlap wherever an overlap can reach it."""
    from tracevis3d.kernels.setjoin_forest import size_runs
    from tracevis3d.kernels.setjoin_window import need_by_total, window_pass

    need_t = need_by_total(100, tau)
    for nx in range(1, 45):
        for ny in range(1, 45):
            o = min_overlap(nx, ny, tau)
            assert need_t[nx + ny] == o or (o > min(nx, ny) and need_t[nx + ny] > min(nx, ny)), (nx, ny)
    rng = np.random.default_rng(int(tau * 10) + 3)
    for _ in range(40):
        nb = int(rng.integers(1, 300))
        sizes = np.sort(rng.integers(1, 40, nb)).astype(np.int64)
        nx, cr = int(rng.integers(1, 40)), int(rng.choice([1, 1, 3, 70]))
        cnt = np.minimum(rng.integers(0, 40, nb), np.minimum(sizes, nx)).astype(np.uint16)
        count_k = np.where(rng.random(nb) < 0.7, 1, rng.integers(2, 9, nb)).astype(np.uint32)
        alpha = np.where(rng.random(nb) < 0.3, -1.0, rng.uniform(0.0, 0.5, nb)).astype(np.float32)
        k0 = int(rng.integers(0, nb))
        k1 = int(rng.integers(k0, nb + 1))
        hits8, extra = rng.integers(0, 9, nb).astype(np.uint8), rng.integers(0, 9, nb).astype(np.uint32)
        h0, e0 = hits8.copy(), extra.copy()
        cand = np.full(((nb >> 3) + 2) * 8, 7, np.uint8)
        run_lo, run_need, run_max = (np.full(nb + 1, -1, np.int64) for _ in range(3))
        run_any = np.zeros(nb + 1, np.uint8)
        n_runs, w = window_pass(nx, cr, k0, k1, need_t, sizes, size_runs(sizes), cnt, count_k, alpha, hits8, extra,
                                cand, run_lo, run_need, run_max, run_any)
        m = np.zeros(nb, bool)
        m[matches_twin(nx, sizes, cnt, k0, k1, tau)] = True
        assert w == int(count_k[m].sum())
        assert (hits8.astype(int) - h0).tolist() == m.astype(int).tolist()
        assert (extra.astype(int) - e0).tolist() == (m * (cr - 1)).tolist()
        tot = (nx + sizes).astype(np.float32)
        want_cand = m & (cnt.astype(np.float32) >= alpha * tot)
        assert cand[k0:k1].tolist() == want_cand[k0:k1].astype(int).tolist()
        starts = [k for k in range(k0, k1) if k == k0 or sizes[k] != sizes[k - 1]]
        assert run_lo[:n_runs].tolist() == starts
        for j, lo in enumerate(starts):
            hi = starts[j + 1] if j + 1 < len(starts) else k1
            assert run_max[j] == cnt[lo:hi].max()
            assert run_any[j] == int(want_cand[lo:hi].any())
            assert all((cnt[kk] >= run_need[j]) == m[kk] for kk in range(lo, hi))



@pytest.mark.parametrize("dtype", [np.uint16, np.int32])
def test_add_postings_through_membership_rows_equals_twin(dtype):
    """Counting a row's elements into the window's counters (`setjoin_walk.add_postings`): with
    the frequent elements' membership rows (`dense_membership`, added over the window where
    their postings fill 1/DENSE_RATIO of it) the counters are |x ∩ y| of the definition, added
    and then removed again (δ = −1, as an undone delta), and untouched outside the window;
    the rows are the frequent elements' only, and a byte cap keeps the most frequent."""
    from tracevis3d.kernels.setjoin_forest import full_index_by_size_rank
    from tracevis3d.kernels.setjoin_walk import add_postings, dense_membership

    rng = np.random.default_rng(9)
    n_items, n_sets = 40, 300
    weights = 1.0 / np.arange(1, n_items + 1) ** 1.2          # a few elements in most sets
    sets_b = [np.sort(rng.choice(n_items, int(rng.integers(1, 12)), replace=False, p=weights / weights.sum()))
              for _ in range(n_sets)]
    b_ptr = np.concatenate([[0], np.cumsum([len(s) for s in sets_b])]).astype(np.int64)
    post_ptr, post_k, b_by_size, _ = full_index_by_size_rank(b_ptr, np.concatenate(sets_b).astype(np.int32), n_items)
    by_rank = [set(sets_b[q].tolist()) for q in b_by_size]
    row, member = dense_membership(post_ptr, post_k, n_sets)
    plen = np.diff(post_ptr)
    assert set(np.flatnonzero(row >= 0).tolist()) == set(np.flatnonzero(plen * 32 >= n_sets).tolist())
    assert member.shape[0] >= 3 and all(member[row[e]].sum() == plen[e] for e in np.flatnonzero(row >= 0))
    capped, capped_member = dense_membership(post_ptr, post_k, n_sets, max_bytes=2 * n_sets)
    assert capped_member.shape[0] == 2 and set(np.flatnonzero(capped >= 0).tolist()) == set(np.argsort(-plen,
                                                                                                     kind="stable")[:2].tolist())
    used = 0
    rows_per_add = set()
    for _ in range(150):
        x = np.sort(rng.choice(n_items, int(rng.integers(1, 16)), replace=False)).astype(np.int32)
        k0, k1 = sorted(rng.integers(0, n_sets + 1, 2).tolist())
        cnt = np.full(n_sets, 7, dtype)
        cnt[k0:k1] = 0
        for r_, m_ in ((row, member), (np.zeros(0, np.int32), np.zeros((0, 0), np.uint8))):
            add_postings(x, 0, len(x), post_ptr, post_k, k0, k1, cnt, 1, r_, m_)
            want = [len(set(x.tolist()) & by_rank[k]) for k in range(k0, k1)]
            assert cnt[k0:k1].tolist() == want
            assert (cnt[:k0] == 7).all() and (cnt[k1:] == 7).all()
            add_postings(x, 0, len(x), post_ptr, post_k, k0, k1, cnt, -1, r_, m_)
            assert not cnt[k0:k1].any()
        n_rows = sum(1 for e in x if row[e] >= 0 and np.count_nonzero(member[row[e], k0:k1]) * 8 >= k1 - k0 > 0)
        used += n_rows
        rows_per_add.add(min(n_rows, 9))
    assert used > 20                                          # the membership rows were taken
    assert set(range(1, 10)) <= rows_per_add                  # 1-4 at a time, and past 4 (`_add_member_rows`)


def test_sample_match_count_equals_twin():
    """The join's sampled estimate counts the sampled rows' class pairs exactly (J > τ of the
    definition over all of B), with and without B's membership rows, on any number of threads'
    parts (`setjoin_walk.sample_match_count`), and histograms them by the call pairs each
    stands for (`sample_match_weights`, what the overview's θ is calibrated from)."""
    from tracevis3d.kernels.setjoin import ranked_sets
    from tracevis3d.kernels.setjoin_forest import full_index_by_size_rank, size_runs
    from tracevis3d.kernels.setjoin_walk import (WEIGHT_BINS_PER_OCTAVE, sample_match_count, sample_match_weights,
                                                 dense_membership)

    rng = np.random.default_rng(13)
    n_items = 30
    weights = 1.0 / np.arange(1, n_items + 1)
    def sets(n):
        return [np.sort(rng.choice(n_items, int(rng.integers(1, 14)), replace=False, p=weights / weights.sum()))
                for _ in range(n)]
    sets_a, sets_b = sets(50), sets(400)
    ptr = np.concatenate([[0], np.cumsum([len(x) for x in sets_a + sets_b])]).astype(np.int64)
    items = np.concatenate(sets_a + sets_b).astype(np.int32)
    ident = np.arange(n_items, dtype=np.int32)
    a_ptr, a_items = ranked_sets(ptr, items, np.arange(50, dtype=np.int32), ident)
    b_ptr, b_items = ranked_sets(ptr, items, np.arange(50, 450, dtype=np.int32), ident)
    post_ptr, post_k, b_by_size, b_size_sorted = full_index_by_size_rank(b_ptr, b_items, n_items)
    row, member = dense_membership(post_ptr, post_k, 400)
    assert member.shape[0] > 0
    ys = [set(b_items[b_ptr[q]:b_ptr[q + 1]].tolist()) for q in range(400)]
    count_a, count_q = rng.integers(1, 40, 50), np.where(rng.random(400) < 0.7, 1, rng.integers(2, 300, 400))
    n_bins = 64 * WEIGHT_BINS_PER_OCTAVE
    for tau in (0.2, 0.5):
        for sample in (np.arange(50, dtype=np.int32), np.arange(3, 50, 7, dtype=np.int32)):
            want, want_n, want_w = 0, np.zeros(n_bins), np.zeros(n_bins)
            for r in sample:
                x = set(a_items[a_ptr[r]:a_ptr[r + 1]].tolist())
                for q, y in enumerate(ys):
                    if len(x & y) / len(x | y) > tau:
                        want += 1
                        w = float(count_a[r] * count_q[q])
                        b = int(np.floor(np.log2(w) * WEIGHT_BINS_PER_OCTAVE))
                        want_n[b] += 1
                        want_w[b] += w
            for r_, m_ in ((row, member), (np.zeros(0, np.int32), np.zeros((0, 0), np.uint8))):
                assert sample_match_count(sample, a_ptr, a_items, tau, post_ptr, post_k, b_size_sorted,
                                           size_runs(b_size_sorted), r_, m_) == want
                got_n, got_w = sample_match_weights(sample, a_ptr, a_items, tau, post_ptr, post_k, b_size_sorted,
                                                     size_runs(b_size_sorted), r_, m_, count_a.astype(np.int64),
                                                     count_q[b_by_size].astype(np.int64))
                assert got_n.tolist() == want_n.tolist()
                np.testing.assert_allclose(got_w, want_w, rtol=1e-12)


def test_sparse_matches_equals_twin():
    """Counting through the postings of a row's elements: the same matches as the dense readout, and
    the counters left clean."""
    from tracevis3d.kernels.setjoin_forest import full_index_by_size_rank
    from tracevis3d.kernels.setjoin_fused import _sparse_matches

    rng = np.random.default_rng(5)
    n_items = 30
    sets_b = [np.sort(rng.choice(n_items, int(rng.integers(1, 8)), replace=False)) for _ in range(80)]
    b_ptr = np.concatenate([[0], np.cumsum([len(s) for s in sets_b])]).astype(np.int64)
    b_items = np.concatenate(sets_b).astype(np.int32)
    post_ptr, post_k, b_by_size, b_size_sorted = full_index_by_size_rank(b_ptr, b_items, n_items)
    by_rank = [set(sets_b[q].tolist()) for q in b_by_size]
    cnt = np.zeros(len(sets_b), np.uint16)
    touched = np.empty(len(sets_b), np.int64)
    mk, mi = np.empty(len(sets_b), np.int32), np.empty(len(sets_b), np.uint16)
    for tau in (0.2, 0.4):
        for _ in range(40):
            x = np.sort(rng.choice(n_items, int(rng.integers(1, 8)), replace=False)).astype(np.int32)
            k0, k1 = sorted(rng.integers(0, len(sets_b) + 1, 2).tolist())
            n = _sparse_matches(len(x), x, 0, len(x), post_ptr, post_k, k0, k1, tau, b_size_sorted, cnt, touched,
                                mk, mi)
            inter = [len(set(x.tolist()) & y) for y in by_rank]
            want = [k for k in range(k0, k1) if inter[k] and inter[k] / (len(x) + len(by_rank[k]) - inter[k]) > tau]
            assert mk[:n].tolist() == want and mi[:n].tolist() == [inter[k] for k in want]
            assert not cnt.any()
            assert all(min_overlap(len(x), int(b_size_sorted[k]), tau) <= inter[k] for k in want)


# ----------------------------------------------------------------- the tiers, row by row
@pytest.mark.parametrize("direct", [True, False])
def test_row_candidates_give_the_rows_tiers(direct):
    """A row's tier entries from `row_candidates` (the sets at or above the k-th largest run
    best: `window_pass`' runs) through `row_tier_entries` are those of all its matches
    (`tiers_twin`), for k = 1, 2, 3, B rows in size order or not; the candidates hold every
    tier entry and are matches."""
    from tracevis3d.kernels.setjoin_forest import size_runs
    from tracevis3d.kernels.setjoin_window import need_by_total, row_candidates, row_tier_entries, window_pass

    rng = np.random.default_rng(21 + direct)
    tau = 0.2
    need_t = need_by_total(100, tau)
    for _ in range(60):
        nb = int(rng.integers(1, 200))
        sizes = np.sort(rng.integers(1, 30, nb)).astype(np.int64)
        run_end = size_runs(sizes)
        nx = int(rng.integers(1, 30))
        cnt = np.minimum(rng.integers(0, 30, nb), np.minimum(sizes, nx)).astype(np.uint16)
        count_k = np.where(rng.random(nb) < 0.7, 1, rng.integers(2, 4, nb)).astype(np.uint32)
        b_by_size = (np.arange(nb) if direct else rng.permutation(nb)).astype(np.int32)
        runs = [np.empty(nb + 1, np.int64) for _ in range(3)] + [np.empty(nb + 1, np.uint8)]
        n_runs, _ = window_pass(nx, 1, 0, nb, need_t, sizes, run_end, cnt, count_k, np.full(nb, -1.0, np.float32),
                                np.zeros(nb, np.uint8), np.zeros(nb, np.uint32), np.zeros(((nb >> 3) + 2) * 8, np.uint8),
                                *runs)
        want_k = matches_twin(nx, sizes, cnt, 0, nb, tau)
        others = np.array(sorted(b_by_size[want_k]), np.int32)
        k_of_q = np.argsort(b_by_size)
        inter = cnt[k_of_q[others]]
        for k in (1, 2, 3):
            top = np.empty(k)
            ck, cs = np.empty(nb, np.int64), np.empty(nb)
            n_c = row_candidates(nx, k, n_runs, runs[0], runs[1], runs[2], nb, run_end, sizes, cnt, top, ck, cs)
            assert set(ck[:n_c].tolist()) <= set(want_k)
            tq, ts = np.empty(nb, np.int32), np.empty(nb)
            n_t = row_tier_entries(n_c, ck, cs, count_k, k, b_by_size, direct, np.empty(k), np.empty(k, np.int64),
                                   tq, ts)
            size_q = np.empty(nb, np.int64)
            size_q[b_by_size] = sizes
            count_q = np.empty(nb, np.int64)
            count_q[b_by_size] = count_k
            want = tiers_twin([0, others.size], others, inter, [nx], size_q, count_q, k)[0]
            assert list(zip(tq[:n_t].tolist(), ts[:n_t].tolist())) == want, (k, n_c)


@pytest.mark.parametrize("n_parts", [1, 2, 3])
def test_column_pairs_in_parts_equal_twin(n_parts):
    """Rows fed in random order to ``n_parts`` parts sharing the columns' cutoffs and bounds
    (as the fused join's parts share them): each row's pairs through `column_pairs` (into its
    part's lists), each row's tiers through `row_tier_entries` over all its pairs; after
    `finish_row_tiers` the tiers of the Python twin both ways, exact; every bound α kept below
    the column cutoff it stands for."""
    from tracevis3d.kernels.setjoin_window import column_pairs, finish_row_tiers, row_tier_entries

    rng = np.random.default_rng(11 + n_parts)
    n_rows, n_other = 60, 25
    pairs = random_class_pairs(rng, n_rows, n_other, 10, 4)
    rows, others, ptr, inter, size_row, size_other, count_row, count_other, tptr, by_col = pairs
    ident = np.arange(n_other, dtype=np.int32)
    for k in (1, 2, 3):
        owner = rng.integers(0, n_parts, n_rows)
        rej, alpha = np.full(n_other, -1.0, np.float32), np.full(n_other, -1.0, np.float32)
        lists = [(np.empty((n_other, k)), np.empty((n_other, k), np.int64), np.zeros(n_other, np.int64))
                 for _ in range(n_parts)]
        got = [dict(rows=[], row_len=[], tq=[], ts=[], cq=[], cr=[], cs=[]) for _ in range(n_parts)]
        calls = 0
        for r in rng.permutation(n_rows):        # the parts interleaved, as threads run them
            lo, hi = ptr[r], ptr[r + 1]
            if hi == lo:
                continue
            p, g = owner[r], got[owner[r]]
            sims = np.array([int(c) / (size_row[r] + size_other[q] - int(c)) for q, c in zip(others[lo:hi], inter[lo:hi])])
            cq, cs = np.empty(n_other, np.int64), np.empty(n_other)
            nc = column_pairs(hi - lo, others[lo:hi].astype(np.int64), sims, int(count_row[r]), k, rej, alpha,
                              *lists[p], cq, cs)
            tq, ts = np.empty(n_other, np.int32), np.empty(n_other)
            n_t = row_tier_entries(hi - lo, others[lo:hi].astype(np.int64), sims, count_other, k, ident, True,
                                   np.empty(k), np.empty(k, np.int64), tq, ts)
            calls += int(count_row[r] * count_other[others[lo:hi]].sum())
            g["rows"].append(r)
            g["row_len"].append(n_t)
            g["tq"] += tq[:n_t].tolist()
            g["ts"] += ts[:n_t].tolist()
            g["cq"] += cq[:nc].tolist()
            g["cr"] += [r] * nc
            g["cs"] += cs[:nc].tolist()
        pieces = [dict(rows=np.array(g["rows"], np.int64), row_len=np.array(g["row_len"], np.int64),
                       tq=np.array(g["tq"], np.int32), ts=np.array(g["ts"]), cq=np.array(g["cq"], np.int32),
                       cr=np.array(g["cr"], np.int32), cs=np.array(g["cs"]), col_s=cl[0], col_n=cl[1], col_nt=cl[2])
                  for g, cl in zip(got, lists)]
        rp, ro, rsim, cp, cr, csim = finish_row_tiers(n_rows, n_other, k, pieces)
        assert_tiers_are_the_twins(pairs, k, (rp, ro, rsim), (cp, cr, csim), calls)
        set_ = rej >= 0
        assert np.all(alpha[set_] * (1 + rej[set_].astype(np.float64)) <= rej[set_]), k


# ----------------------------------------------------------------- the overview, row by row
def test_row_overview_in_parts_equals_twin():
    """Random classes of 1–6 calls on each side at random times (ties included), random class
    pairs fed row by row to 2 parts: the bars and deltas of both sides equal the pair-by-pair
    sums of the definition (Sec. IV-A, Eq. 4); in half the trials each pair's δ terms carry a
    weight of its own (a sampled pair's 1 / p, `setjoin_window.sample_positions`), which reaches
    every path (one call against one, against several, several against one or several)."""
    from tracevis3d.kernels.overview_rows import overview_row_constants, overview_rows_finish, row_overview

    rng = np.random.default_rng(21)
    n_bins = 9
    for trial in range(6):
        n_ra, n_rb = 30, 25
        ca = rng.integers(1, 7, n_ra) if trial % 2 else np.where(rng.random(n_ra) < 0.7, 1, rng.integers(2, 7, n_ra))
        cb = rng.integers(1, 7, n_rb) if trial % 3 else np.where(rng.random(n_rb) < 0.7, 1, rng.integers(2, 7, n_rb))
        ptr_a = np.concatenate([[0], np.cumsum(ca)]).astype(np.int64)
        ptr_b = np.concatenate([[0], np.cumsum(cb)]).astype(np.int64)
        time_a = np.round(rng.random(ptr_a[-1]) * 100.0, 1)
        time_b = np.round(rng.random(ptr_b[-1]) * 120.0, 1)
        for p in (ptr_a, ptr_b):
            t = time_a if p is ptr_a else time_b
            for r in range(len(p) - 1):
                t[p[r]:p[r + 1]].sort()
        span_a, span_b = 100.0, 120.0
        tol_a, tol_b = span_a / n_bins, span_b / n_bins
        pairs = {(r, q): float(rng.choice([0.25, 0.5, 1.0 / 3.0, 0.9])) for r in range(n_ra) for q in range(n_rb)
                 if rng.random() < 0.3}
        weight = {rq: (float(rng.choice([1.0, 2.5, 8.0, 1.0 / 0.3])) if trial >= 3 else 1.0) for rq in pairs}
        csum_a, bin_a, csum_b, x1_b, bin1_b = overview_row_constants(ptr_a, time_a, ptr_b, time_b, span_a, span_b,
                                                                     n_bins)
        parts = [dict(loc=np.empty((8, 5)),
                      bins_a=np.zeros((n_bins, 4)), bins_b1=np.zeros((n_bins, 4)),
                      diff_b=np.zeros((ptr_b[-1] + n_rb, 5))) for _ in range(2)]
        for r in range(n_ra):
            mq = np.array([q for q in range(n_rb) if (r, q) in pairs], np.int32)
            ms = np.array([pairs[(r, q)] for q in mq])
            mu = np.array([weight[(r, q)] for q in mq])
            p = parts[r % 2]
            row_overview(r, mq.size, mq, ms, mu, x1_b, bin1_b, ptr_a, time_a, csum_a, bin_a, ptr_b, time_b, csum_b, tol_a,
                         tol_b, p["loc"], p["bins_a"], p["bins_b1"], p["diff_b"], 0.0, np.uint64(0))
        got = overview_rows_finish([p["bins_a"] for p in parts], [p["bins_b1"] for p in parts],
                                   [p["diff_b"] for p in parts], ptr_b, time_b, span_b, n_bins, 0.2)
        for side in (0, 1):
            bars, delta = np.zeros((n_bins, 3)), np.zeros(n_bins)
            span, tol = (span_a, tol_a) if side == 0 else (span_b, tol_b)
            for (r, q), s in pairs.items():
                va, vb = time_a[ptr_a[r]:ptr_a[r + 1]], time_b[ptr_b[q]:ptr_b[q + 1]]
                viewer, other = (va, vb) if side == 0 else (vb, va)
                for t in viewer:
                    k = min(max(int(t / (span / n_bins)), 0), n_bins - 1)
                    for x in other:
                        bars[k, 0 if abs(x - t) <= tol else 1 if x < t - tol else 2] += s
                        delta[k] += weight[(r, q)] * abs(t - x)
            np.testing.assert_allclose(got[2 * side], bars, rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(got[2 * side + 1], delta, rtol=1e-9, atol=1e-9)


# ----------------------------------------------------------------- the fused comparison
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace_ops, trace_ops, st.sampled_from([0.1, 0.2, 0.25, 0.5, 0.8]), st.integers(1, 3))
def test_fused_comparison_equals_bruteforce(ops_a, ops_b, tau, top_k):
    """The fused way (class pairs not kept): the call-pair and class-pair counts, the kept
    call pairs, partner counts and overview bars of the brute force (Sec. III, IV-A)."""
    a = build_trace(ops_a, NAMES_A)
    b = build_trace(ops_b, NAMES_B)
    n_bins = 7
    c = compare_traces(a, b, tau=tau, top_k=top_k, n_bins=n_bins, keep_class_pairs=False)
    assert c.params["join"]["way"] == "fused" and not c.class_pairs_kept
    allp = all_pairs(a, b, tau)
    assert c.n_pairs_total == len(allp)
    assert c.n_class_pairs == len({(c.class_a[i], c.class_b[j]) for i, j in allp})
    assert {(int(r["a"]), int(r["b"])) for r in c.pairs} == kept_pairs(a, b, allp, top_k)
    for r in c.pairs:
        assert r["sim"] == allp[(r["a"], r["b"])]
    for side, t in (("a", a), ("b", b)):
        want = np.bincount([p[0] if side == "a" else p[1] for p in allp], minlength=len(t))
        assert c._partner_counts(side).tolist() == want.tolist()
    for viewer_is_a, bars, delta in ((True, c.overview_a, c.overview_delta_a),
                                     (False, c.overview_b, c.overview_delta_b)):
        eb, ed = overview_bf(a, b, allp, n_bins, viewer_is_a)
        np.testing.assert_allclose(bars, eb, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(delta, ed, rtol=1e-9, atol=1e-9)


EXACT = ("class_a", "class_b", "class_ptr", "class_items", "class_rows_b", "n_pairs_total", "pairs", "groups",
         "partner_calls_a", "partner_calls_b", "repetitions_a", "repetitions_b", "overview_edges_a",
         "overview_edges_b")
BARS = ("overview_a", "overview_b", "overview_delta_a", "overview_delta_b")


def test_fused_equals_streamed_on_synthetic_and_any_thread_count():
    """A synthetic pair both ways: every array equal (the bars to rounding); the fused way is
    bit-identical whatever the number of threads (fixed parts)."""
    import numba

    from tracevis3d.io.synthesis import perturb, synthetic_trace

    a = synthetic_trace(6000, threads=2, seed=61)
    b = perturb(a, seed=62)
    kept = compare_traces(a, b, keep_class_pairs=True)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = compare_traces(a, b, keep_class_pairs=False)
    finally:
        numba.set_num_threads(before)
    fused = compare_traces(a, b, keep_class_pairs=False)
    assert fused.params["join"]["way"] == "fused" and kept.params["join"]["way"] == "streamed"
    assert fused.n_class_pairs == kept.n_class_pairs > 0
    for name in EXACT:
        x, y = np.asarray(getattr(kept, name)), np.asarray(getattr(fused, name))
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), name
    for name in BARS:
        np.testing.assert_allclose(getattr(fused, name), getattr(kept, name), rtol=1e-9, atol=0)
    for name in EXACT + BARS:
        assert np.asarray(getattr(one, name)).tobytes() == np.asarray(getattr(fused, name)).tobytes(), name


@pytest.mark.parametrize("budget", [None, 3000])
def test_shared_items_equal_dealt_parts_for_any_thread_count(budget, monkeypatch):
    """The walkers sharing one queue of items (`setjoin_fused._fused_part` on one counter, the
    overview deferred to fixed parts of the rows) against the items dealt to fixed parts in
    advance: exact mode (no budget) and a sampled overview (θ > 1), every array equal (the bars
    to rounding: their sums are added in another order); sharing is bit-identical on one
    thread and on all, and on a second run."""
    import numba

    from tracevis3d.analysis import compare_join
    from tracevis3d.io.synthesis import perturb, synthetic_trace

    a = synthetic_trace(6000, threads=2, seed=61)
    b = perturb(a, seed=62)
    real = compare_join.jaccard_join_tree_fused

    def run(share, threads=None):
        monkeypatch.setattr(compare_join, "jaccard_join_tree_fused",
                            lambda *x, **kw: real(*x, **dict(kw, share_items=share)))
        before = numba.get_num_threads()
        try:
            if threads:
                numba.set_num_threads(threads)
            got = compare_traces(a, b, keep_class_pairs=False, overview_budget=budget or 10**9)
        finally:
            numba.set_num_threads(before)
        assert got.params["join"]["way"] == "fused" and got.params["join"]["shared"] is share
        return got
    dealt, shared, one, again = run(False), run(True), run(True, 1), run(True)
    theta = shared.params["join"]["overview_theta"]
    assert (theta > 1.0) is (budget is not None), theta
    assert shared.params["join"]["overview_pairs"] == dealt.params["join"]["overview_pairs"]
    for name in EXACT:
        x, y = np.asarray(getattr(dealt, name)), np.asarray(getattr(shared, name))
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), name
    for name in BARS:
        np.testing.assert_allclose(getattr(shared, name), getattr(dealt, name), rtol=1e-9, atol=1e-12)
    for name in EXACT + BARS:
        for other in (one, again):
            assert np.asarray(getattr(other, name)).tobytes() == np.asarray(getattr(shared, name)).tobytes(), name


def _mix64_twin(x: int) -> int:
    """`gamma.splitmix64` in Python integers (splitmix64's output for state x)."""
    m = (1 << 64) - 1
    z = (x + 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


def test_sample_positions_draw_each_set_at_its_rate():
    """`setjoin_window.sample_positions`: positions distinct, inside the window, the same for
    the same stream; over 20,000 streams each position drawn at p_k = min(1, p₀·calls(y_k))
    within 4.5 standard errors (sets of one call, of every bucket of several calls, certain
    ones), for a small and a large p₀; the Horvitz-Thompson total Σ 1/p_k over the drawn
    positions estimates the window's size."""
    from tracevis3d.kernels.overview_rows import ROW_SALT, row_key
    from tracevis3d.kernels.setjoin_window import heavy_buckets, sample_positions

    m = (1 << 64) - 1                  # the rows' streams are `row_key`: splitmix64 of a salted index
    assert [int(row_key(r)) for r in range(20)] == [_mix64_twin((2 * r + ROW_SALT) & m) for r in range(20)]
    rng = np.random.default_rng(4)
    nb = 400
    count_k = np.where(rng.random(nb) < 0.6, 1, 2 ** rng.integers(1, 12, nb) + rng.integers(0, 3, nb))
    ptr, hk, hc, bits = heavy_buckets(count_k)
    assert hk.size == int((count_k > 1).sum()) and np.all(hc == count_k[hk])
    heavy = (bits[np.arange(nb) >> 6] >> (np.arange(nb) & 63).astype(np.uint64)) & np.uint64(1)
    assert np.flatnonzero(heavy).tolist() == np.flatnonzero(count_k > 1).tolist()
    k0, k1 = 37, 351
    pos = np.empty(nb, np.int64)
    for p0 in (0.004, 0.3):
        n_draws = 20000
        seen = np.zeros(nb)
        ht = []
        for seed in range(n_draws):
            n, n_base = sample_positions(k0, k1, p0, bits, ptr, hk, hc,
                                         np.uint64(seed * 0x9E3779B97F4A7C15 % 2 ** 64), pos)
            got = pos[:n]
            assert len(set(got.tolist())) == n and got.min(initial=k0) >= k0 and got.max(initial=k0) < k1
            assert np.all(np.diff(got[:n_base]) > 0) and np.all(count_k[got[:n_base]] == 1)
            seen[got] += 1
            ht.append((1.0 / np.minimum(1.0, p0 * count_k[got])).sum())
        p = np.minimum(1.0, p0 * count_k)
        rate = seen / n_draws
        se = np.sqrt(p * (1 - p) / n_draws) + 1e-12
        assert np.all(rate[:k0] == 0) and np.all(rate[k1:] == 0)
        assert np.all(np.abs(rate[k0:k1] - p[k0:k1]) <= 4.5 * se[k0:k1] + 1e-9), np.max(np.abs(rate - p) / se)
        assert abs(np.mean(ht) - (k1 - k0)) < 4.5 * np.std(ht) / np.sqrt(n_draws)
        a, _ = sample_positions(k0, k1, p0, bits, ptr, hk, hc, np.uint64(5), pos)
        first = pos[:a].copy()
        b, _ = sample_positions(k0, k1, p0, bits, ptr, hk, hc, np.uint64(5), pos)
        assert pos[:b].tolist() == first.tolist()


def test_calibrated_theta_visits_the_budget():
    """`compare_join.calibrated_theta` from a histogram of matches by call pairs w: the
    expected matches a threshold sample at that θ visits, Σ min(1, w / θ) over the matches
    themselves, is the budget within the histogram's bin (1/8 octave); θ = 1 when every match
    fits; the matches of many call pairs push θ above `overview_theta`'s estimate / budget."""
    from tracevis3d.analysis.compare_join import calibrated_theta, overview_theta
    from tracevis3d.kernels.setjoin_walk import WEIGHT_BINS_PER_OCTAVE

    rng = np.random.default_rng(8)
    w = np.where(rng.random(200_000) < 0.85, 1, rng.integers(2, 5000, 200_000)).astype(float)
    b = np.floor(np.log2(w) * WEIGHT_BINS_PER_OCTAVE).astype(int)
    n = np.bincount(b, minlength=64 * WEIGHT_BINS_PER_OCTAVE).astype(float)
    sw = np.bincount(b, weights=w, minlength=64 * WEIGHT_BINS_PER_OCTAVE)
    for budget in (1000, 10_000, 60_000):
        theta = calibrated_theta(n, sw, budget)
        visited = np.minimum(1.0, w / theta).sum()
        assert 0.9 * budget <= visited <= 1.1 * budget, (budget, theta, visited)
        assert theta > overview_theta(w.size, budget)
    assert calibrated_theta(n, sw, 300_000) == 1.0


def test_sampled_sweep_is_the_sweep_at_rate_one_and_unbiased_below():
    """`overview_rows.sweep_pair_sampled`: at pc = 1 the entries of `overview.sweep_pair`
    (every call swept), bit for bit; at pc = 0.1 the mean over 20,000 keys of every call's
    accumulated sums (both sides, the difference arrays prefix-summed) is the exact sweep's
    within 4 standard errors, and about a tenth of the small side is swept per key."""
    from tracevis3d.kernels.overview import sweep_pair
    from tracevis3d.kernels.overview import _call_unit
    from tracevis3d.kernels.overview_rows import sweep_pair_sampled

    rng = np.random.default_rng(9)
    small, large = np.sort(rng.uniform(0, 100, 30)), np.sort(rng.uniform(0, 100, 50))
    csum = np.concatenate([[0.0], np.cumsum(large)])
    s, tol_s, tol_l = 0.6, 3.0, 4.0

    def run(fn, *extra):
        ds, dl = np.zeros((small.size + 1, 5)), np.zeros((large.size + 2, 5))
        fn(small, 0, small.size, 0, large, 0, large.size, 1, csum, s, tol_s, tol_l, ds, dl, *extra)
        return np.cumsum(ds, axis=0)[:-1], np.cumsum(dl, axis=0)[1:-1]
    want = run(sweep_pair, 1.0)
    got = run(sweep_pair_sampled, 1.0, np.uint64(12345))
    assert all(np.array_equal(w, g) for w, g in zip(want, got))
    n_keys, pc = 20000, 0.1
    keys = list(rng.integers(0, 2**64 - 1, n_keys, dtype=np.uint64, endpoint=True))   # all 64 bits random
    runs = [run(sweep_pair_sampled, pc, k) for k in keys]
    swept = np.mean([sum(_call_unit(k, i) < pc for i in range(small.size)) for k in keys[:500]])
    assert 2.0 < swept < 4.0, swept
    for side in (0, 1):
        vals = np.stack([r[side] for r in runs])
        mean, se = vals.mean(axis=0), vals.std(axis=0) / np.sqrt(n_keys)
        assert np.all(np.abs(mean - want[side]) <= 4.0 * se + 1e-9), np.max(np.abs(mean - want[side]) / (se + 1e-12))


def test_overview_theta_samples_only_well_past_the_budget():
    """θ = estimate / budget once that is at least 2; exact (1) below, and with no budget."""
    from tracevis3d.analysis.compare_join import overview_theta

    assert overview_theta(5e9, None) == 1.0
    assert overview_theta(9e6, 10**7) == overview_theta(1.9e7, 10**7) == 1.0
    assert overview_theta(2e7, 10**7) == 2.0 and overview_theta(4.68e9, 10**7) == pytest.approx(468.0)


def test_overview_past_its_budget_is_a_close_deterministic_estimate():
    """A synthetic pair whose class pairs exceed a small ``overview_budget``: the bars and δ
    are estimated (θ > 1, fewer class pairs visited), within 2 % of the largest bar of the
    exact ones on either side, the same on a second run; every other result is the exact
    comparison's, bit for bit; the scene's legend says the bars are estimated."""
    from tracevis3d.io.synthesis import perturb, synthetic_trace

    a = synthetic_trace(20000, threads=2, seed=81)
    b = perturb(a, seed=82)
    exact = compare_traces(a, b, keep_class_pairs=False, overview_budget=None)
    est = compare_traces(a, b, keep_class_pairs=False, overview_budget=200_000)
    again = compare_traces(a, b, keep_class_pairs=False, overview_budget=200_000)
    je, js = exact.params["join"], est.params["join"]
    assert je["overview_theta"] == 1.0 and je["overview_pairs"] == exact.n_class_pairs
    assert js["overview_theta"] > 2.0 and js["overview_pairs"] < exact.n_class_pairs / 2, js
    for name in EXACT:
        assert np.asarray(getattr(exact, name)).tobytes() == np.asarray(getattr(est, name)).tobytes(), name
    for name in BARS:
        assert np.asarray(getattr(est, name)).tobytes() == np.asarray(getattr(again, name)).tobytes(), name
    for bars in ("overview_a", "overview_b"):
        e, g = getattr(exact, bars), getattr(est, bars)
        assert np.abs(g - e).max() <= 0.02 * e.max(), (bars, np.abs(g - e).max() / e.max())
        assert not np.array_equal(g, e)
    for delta in ("overview_delta_a", "overview_delta_b"):
        e, g = getattr(exact, delta), getattr(est, delta)
        assert np.abs(g - e).max() <= 0.02 * e.max(), (delta, np.abs(g - e).max() / e.max())
    with pytest.raises(ValueError, match="overview_budget"):
        compare_traces(a, b, overview_budget=0)
    from tracevis3d.layout.compare import CompareParams, compare_layout

    def legend(c):   # the notes wrap: their lines joined
        return " ".join(compare_layout(c, CompareParams(resolution=(960, 540))).labels.texts)
    theta = js["overview_theta"]
    assert "sample" not in legend(exact)
    assert f"estimated from a weighted sample of 1 in {theta:,.0f} of the matches" in legend(est), legend(est)


def test_fused_join_with_b_rows_not_in_size_order():
    """The fused join on B rows numbered against their size order (the mapping by size rank):
    the same tiers, counts and bars as the streamed consumer on the same rows."""
    from tracevis3d.analysis.compare_join import join_class_pairs
    from tracevis3d.analysis.comparison import gamma_classes
    from tracevis3d.kernels.kept_pairs import calls_by_class_time
    from tracevis3d.io.synthesis import perturb, synthetic_trace

    a = synthetic_trace(3000, threads=2, seed=71)
    b = perturb(a, seed=72)
    functions, cls, cptr, citems = gamma_classes(a, b)
    n_a = len(a)
    rows_a = np.unique(cls[:n_a]).astype(np.int32)
    rows_b = np.unique(cls[n_a:]).astype(np.int32)[::-1].copy()      # largest sets first
    row_of_a = np.searchsorted(rows_a, cls[:n_a]).astype(np.int32)
    row_of_b = (rows_b.size - 1 - np.searchsorted(rows_b[::-1], cls[n_a:])).astype(np.int32)
    size = np.diff(cptr)
    ts_a, ts_b = a.start - a.start.min(), b.start - b.start.min()
    _, ptr_a, time_a = calls_by_class_time(row_of_a, rows_a.size, ts_a, 0.0)
    _, ptr_b, time_b = calls_by_class_time(row_of_b, rows_b.size, ts_b, 0.0)
    span_a, span_b = float(a.end.max() - a.start.min()), float(b.end.max() - b.start.min())
    args = (cptr, citems, len(functions), rows_a, rows_b, row_of_a, a.end_index, size[rows_a].astype(np.int64),
            size[rows_b].astype(np.int64), np.bincount(row_of_a).astype(np.int64), np.bincount(row_of_b).astype(np.int64),
            ptr_a, time_a, ptr_b, time_b, span_a, span_b, 11, span_a / 11, span_b / 11, 0.2, 2, "tree")
    got = [join_class_pairs(*args, keep, None, 1 << 40, lambda held, extra: None, lambda stage: None)
           for keep in (False, True)]
    assert [g.way for g in got] == ["fused", "streamed"]
    assert got[0].n_pairs_total == got[1].n_pairs_total and got[0].n_class_pairs == got[1].n_class_pairs > 0
    for x, y in zip(got[0].tiers + (got[0].partners_row, got[0].partners_col),
                    got[1].tiers + (got[1].partners_row, got[1].partners_col)):
        assert np.array_equal(x, y)
    for x, y in zip(got[0].overview, got[1].overview):
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=0)


def test_deal_items_is_largest_first_to_the_least_loaded_part():
    """`setjoin_fused.deal_items` against its definition written out in Python: items by
    estimated cost descending (ties: lower index first), each to the part with the least cost
    so far (ties: the lower part); each part's items ascending, every item in one part."""
    from tracevis3d.kernels.setjoin_fused import deal_items

    def twin(cost, n_parts):
        load = [0.0] * n_parts
        owner = {}
        for i in sorted(range(len(cost)), key=lambda i: (-cost[i], i)):
            p = min(range(n_parts), key=lambda q: (load[q], q))
            owner[i] = p
            load[p] += cost[i]
        return [[i for i in range(len(cost)) if owner[i] == p] for p in range(n_parts)]

    rng = np.random.default_rng(5)
    for n, n_parts in [(0, 4), (1, 4), (3, 4), (50, 1), (200, 4), (500, 7)]:
        cost = rng.integers(0, 6, n).astype(np.float64)        # many ties, zeros
        got = deal_items(cost, n_parts)
        assert [g.tolist() for g in got] == twin(cost.tolist(), n_parts)
        assert sum(len(g) for g in got) == n
