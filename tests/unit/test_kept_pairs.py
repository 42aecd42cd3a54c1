"""The kept call pairs' kernels (kernels.kept_pairs) against plain-Python twins written from
TraceDiff's definitions (Sec. III: each call's k best partners by similarity, then closeness of
relative start, then index; their union sorted by (a, b); Sec. IV-D: dt and the relative
starts in the group roots), and the comparison whose pair records go to a file against the
one that keeps them in memory."""
import numpy as np
import pytest

import tracevis3d
from tracevis3d.analysis import comparison as cmpmod
from tracevis3d.kernels.kept_pairs import (calls_by_class_time, fill_pair_fields, picks_by_call, top_k_picks,
                                           union_of_picks)


def _random_side(rng, n, n_rows, ties):
    row_of = rng.integers(0, n_rows, n).astype(np.int32)
    start = rng.integers(0, 40 if ties else 10 ** 6, n).astype(np.float64) * 0.25 + 1000.0
    return row_of, start


@pytest.mark.parametrize("ties", [True, False])
def test_calls_by_class_time_is_lexsort_of_row_time_index(ties):
    """Order = np.lexsort((index, start − t0, row)), groups small (insertion sort) and large
    (merge sort); the times are start − t0 at the same positions, bit for bit."""
    rng = np.random.default_rng(3 + ties)
    for n, n_rows in ((1, 1), (50, 7), (3000, 40), (3000, 3)):
        row_of, start = _random_side(rng, n, n_rows, ties)
        t0 = float(start.min())
        order, ptr, time = calls_by_class_time(row_of, n_rows, start, t0)
        want = np.lexsort((np.arange(n), start - t0, row_of))
        assert order.dtype == np.int32 and order.tolist() == want.tolist()
        assert ptr.tolist() == [0] + np.cumsum(np.bincount(row_of, minlength=n_rows)).tolist()
        assert time.tobytes() == (start - t0)[want].tobytes()


def _tiers(rng, n_rows, n_other):
    """Per row: partner rows of the other side by similarity descending (ties: several rows of
    one similarity), as the tier CSR (ptr, partner, similarity)."""
    ptr, part, sim = [0], [], []
    levels = [0.9, 0.75, 0.5, 0.3]
    for _ in range(n_rows):
        q = rng.choice(n_other, size=int(rng.integers(0, min(n_other, 6) + 1)), replace=False)
        s = np.sort(rng.choice(levels, size=q.size))[::-1]
        part += q.tolist()
        sim += s.tolist()
        ptr.append(len(part))
    return np.array(ptr, np.int64), np.array(part, np.int32), np.array(sim, np.float64)


def _top_k_twin(row_of, rel, tptr, tpart, tsim, other_row_of, other_rel, k):
    """Each call's k best partners: all calls v of its tier classes ranked by (−s, |rel(u) −
    rel(v)|, v); [(v, s)] per call."""
    out = []
    for u in range(row_of.size):
        r = row_of[u]
        cand = []
        for j in range(tptr[r], tptr[r + 1]):
            for v in np.flatnonzero(other_row_of == tpart[j]):
                cand.append((-tsim[j], abs(rel[u] - other_rel[v]), int(v)))
        out.append([(v, -s) for s, _, v in sorted(cand)[:k]])
    return out


@pytest.mark.parametrize("k", [1, 2, 3])
def test_top_k_picks_equal_the_twin(k):
    """`top_k_picks`: partners and their similarities (``tsim[pos]``) are the twin's, for any
    thread's chunk of the calls; −1 where fewer exist; relative starts (start − t0) / span."""
    rng = np.random.default_rng(k)
    for ties in (True, False):
        n_a, n_b, rows_a, rows_b = 300, 260, 12, 9
        row_a, start_a = _random_side(rng, n_a, rows_a, ties)
        row_b, start_b = _random_side(rng, n_b, rows_b, ties)
        t0_a, t0_b = float(start_a.min()), float(start_b.min())
        den_a, den_b = float(start_a.max() + 3.0 - t0_a), float(start_b.max() + 5.0 - t0_b)
        tptr, tpart, tsim = _tiers(rng, rows_a, rows_b)
        by_a, _, _ = calls_by_class_time(row_a, rows_a, start_a, t0_a)
        by_b, ptr_b, time_b = calls_by_class_time(row_b, rows_b, start_b, t0_b)
        partner, pos = np.empty((n_a, k), np.int32), np.empty((n_a, k), np.int32)
        top_k_picks(row_a, start_a, t0_a, den_a, tptr, tpart, tsim, ptr_b, by_b, time_b, den_b, k, by_a, partner,
                    pos)
        want = _top_k_twin(row_a, (start_a - t0_a) / den_a, tptr, tpart, tsim, row_b, (start_b - t0_b) / den_b, k)
        for u in range(n_a):
            got = [(int(v), float(tsim[p])) for v, p in zip(partner[u], pos[u]) if v >= 0]
            assert got == want[u], u
            assert (partner[u, len(want[u]):] == -1).all() and (pos[u, len(want[u]):] == -1).all()


def test_union_of_picks_is_the_sorted_union_with_each_pairs_similarity():
    """`picks_by_call` + `union_of_picks`: {(u, A's picks)} ∪ {(B's picks, v)} each once, by
    (a, b); a pair's position reads its similarity from A's tiers (≥ 0) or B's (~pos)."""
    rng = np.random.default_rng(7)
    for n_a, n_b, k in ((1, 1, 1), (40, 30, 2), (200, 300, 3)):
        sim_a, sim_b = rng.random(50), rng.random(60)
        pa = np.where(rng.random((n_a, k)) < 0.7, rng.integers(0, n_b, (n_a, k)), -1).astype(np.int32)
        pb = np.where(rng.random((n_b, k)) < 0.7, rng.integers(0, n_a, (n_b, k)), -1).astype(np.int32)
        for side in (pa, pb):       # distinct partners per call, as the top-k gives them
            for row in side:
                seen = set()
                for i, x in enumerate(row):
                    if x in seen:
                        row[i] = -1
                    seen.add(x)
        sa = rng.integers(0, 50, (n_a, k)).astype(np.int32)
        sb = rng.integers(0, 60, (n_b, k)).astype(np.int32)
        # a pair both sides picked has one similarity (its class pair's): B's made equal to A's
        own = {(u, int(v)): float(sim_a[sa[u, i]]) for u in range(n_a) for i, v in enumerate(pa[u]) if v >= 0}
        for v in range(n_b):
            for i, u in enumerate(pb[v]):
                if (int(u), v) in own:
                    sim_b[sb[v, i]] = own[(int(u), v)]
        want = dict(own)
        for v in range(n_b):
            for i, u in enumerate(pb[v]):
                if u >= 0:
                    want.setdefault((int(u), v), float(sim_b[sb[v, i]]))
        rv, rp = np.empty(pb.size, np.int32), np.empty(pb.size, np.int32)
        ptr = picks_by_call(pb, sb, n_a, rv, rp)
        keys = sorted(want)
        for chunk in (None, 1, 7):       # in passes of `chunk` calls of A, each reported consumed
            seen = []
            got_a, got_b, got_p = union_of_picks(pa, sa, ptr, rv, rp, chunk, lambda u0, u1: seen.append((u0, u1)))
            assert list(zip(got_a.tolist(), got_b.tolist())) == keys
            got_s = [float(sim_a[p]) if p >= 0 else float(sim_b[~p]) for p in got_p.tolist()]
            assert got_s == [want[x] for x in keys]
            assert [u for r in seen for u in range(*r)] == list(range(n_a))


def test_fill_pair_fields_are_the_definitions_in_any_range():
    """dt = |(t_s(a) − t0_a) − (t_s(b) − t0_b)|, rel = (t_s − t_s(root)) / (t_e(root) − t_s(root))
    (0 for a zero-length root), the similarity from the signed position, written at i − i0."""
    rng = np.random.default_rng(11)
    n_a, n_b, m, ng = 50, 40, 120, 9
    start_a, start_b = rng.random(n_a) * 100, rng.random(n_b) * 100
    end_a, end_b = start_a + rng.integers(0, 3, n_a) * rng.random(n_a), start_b + rng.random(n_b)
    pa, pb = rng.integers(0, n_a, m).astype(np.int32), rng.integers(0, n_b, m).astype(np.int32)
    sim_a, sim_b = rng.random(20), rng.random(30)
    pos = np.where(rng.random(m) < 0.5, rng.integers(0, 20, m), ~rng.integers(0, 30, m)).astype(np.int32)
    group = rng.integers(0, ng, m).astype(np.int32)
    root_a, root_b = rng.integers(0, n_a, ng).astype(np.int32), rng.integers(0, n_b, ng).astype(np.int32)
    t0_a, t0_b = float(start_a.min()), float(start_b.min())
    i0, i1 = 17, 101
    out = np.zeros(i1 - i0, cmpmod.PAIR_DTYPE)
    fill_pair_fields(i0, i1, pa, pb, pos, sim_a, sim_b, group, root_a, root_b, start_a, end_a, start_b, end_b,
                     t0_a, t0_b, out["a"], out["b"], out["sim"], out["group"], out["dt"], out["rel_a"], out["rel_b"])
    for o, i in enumerate(range(i0, i1)):
        u, v, g = pa[i], pb[i], group[i]
        ga, gb = root_a[g], root_b[g]
        da, db = end_a[ga] - start_a[ga], end_b[gb] - start_b[gb]
        want = (u, v, sim_a[pos[i]] if pos[i] >= 0 else sim_b[~pos[i]], abs((start_a[u] - t0_a) - (start_b[v] - t0_b)),
                (start_a[u] - start_a[ga]) / da if da > 0 else 0.0, (start_b[v] - start_b[gb]) / db if db > 0 else 0.0,
                g)
        assert tuple(out[o].tolist()) == tuple(x.item() if hasattr(x, "item") else x for x in want)


def test_pair_records_in_a_file_equal_those_in_memory(monkeypatch):
    """Past `SPILL_PAIRS_BYTES` the pairs are written, a pass at a time, to a mapped temporary
    file: the same records (and every other array) as in memory."""
    a = tracevis3d.synthetic(4000, threads=2, seed=5)
    b = tracevis3d.perturb(a, seed=2)
    mem = tracevis3d.compare(a, b, keep_class_pairs=False)
    monkeypatch.setattr(cmpmod, "SPILL_PAIRS_BYTES", 0)
    monkeypatch.setattr(cmpmod, "SPILL_CHUNK_PAIRS", 333)
    filed = tracevis3d.compare(a, b, keep_class_pairs=False)
    assert filed.params["pairs_in_file"] and not mem.params["pairs_in_file"]
    assert filed.pairs.size > 1000 and filed.pairs.tobytes() == mem.pairs.tobytes()
    for name in ("groups", "class_a", "class_b", "overview_a", "overview_b", "partner_calls_a", "partner_calls_b"):
        assert getattr(filed, name).tobytes() == getattr(mem, name).tobytes(), name
    filed.pairs["sim"][0] = 0.5          # writable, as an array in memory is


def test_bin_rows_over_ascending_ranges_is_bin_raw_bit_for_bit():
    """`fused_overview.bin_rows` over B's rows cut into ranges (binned in ascending order) then
    `chunks_added` gives `overview.bin_raw`'s sums exactly."""
    from tracevis3d.kernels.fused_overview import BIN_CHUNKS, bin_rows, chunks_added
    from tracevis3d.kernels.overview import bin_raw

    rng = np.random.default_rng(5)
    n_rows = 300
    ptr = np.concatenate([[0], np.cumsum(rng.integers(0, 9, n_rows))]).astype(np.int64)
    time = np.sort(rng.random(ptr[-1]) * 1e4)
    diff = rng.standard_normal((ptr[-1] + n_rows, 5))
    want = bin_raw(diff, ptr, time, 0.0, 1e4, 37)
    for cuts in ([0, n_rows], [0, 1, 64, 65, 200, n_rows], list(range(0, n_rows + 1, 7)) + [n_rows]):
        acc = np.zeros((BIN_CHUNKS, 37, 4))
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            bin_rows(diff, ptr, time, 0.0, 1e4, 37, lo, hi, acc)
        assert chunks_added(acc).tobytes() == want.tobytes()


def test_overview_in_one_part_waves_equals_one_wave(monkeypatch):
    """The deferred overview's parts run one wave each (B's difference array given back after
    each) or all in one: the same bars, bit for bit."""
    from tracevis3d.kernels import fused_overview

    a = tracevis3d.synthetic(6000, threads=2, seed=9)
    b = tracevis3d.perturb(a, seed=2)
    one = tracevis3d.compare(a, b, keep_class_pairs=False, overview_budget=1000)
    assert one.params["join"]["overview_theta"] > 1.0      # sampled: the deferred (shared) way
    monkeypatch.setattr(fused_overview, "OVERVIEW_WAVE_BYTES", 1)
    many = tracevis3d.compare(a, b, keep_class_pairs=False, overview_budget=1000)
    for name in ("overview_a", "overview_b", "overview_delta_a", "overview_delta_b"):
        assert getattr(one, name).tobytes() == getattr(many, name).tobytes(), name
    assert one.overview_a.sum() > 0 and one.overview_b.sum() > 0
