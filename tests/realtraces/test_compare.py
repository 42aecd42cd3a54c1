"""TraceDiff comparison (tracevis3d.compare): every kernel against a brute-force twin.

The twins (here and in tests/support/compare_twins.py) are written from the paper's
definitions (TraceDiff Sec. III, IV-A, IV-D) in plain Python over *all* call pairs,
independently of the kernels' data structures (Γ-sets as frozensets of function NAMES, pairs
enumerated one by one).
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracevis3d
from tracevis3d.analysis.comparison import Comparison, compare_traces
from tracevis3d.kernels.gamma import process_hash_seed
from tracevis3d.kernels.gamma_sweep import gamma_classes_grown, shape_classes_grown
from tracevis3d.kernels.repetition import sibling_repetitions
from tracevis3d.kernels.setjoin import jaccard_join_bruteforce, sets_to_bitsets
from tracevis3d.kernels.setjoin_prefix import jaccard_join

from compare_twins import (NAMES_A, NAMES_B, all_pairs, assert_tiers_are_the_twins, build_trace, gammas, kept_pairs,
                           overview_bf, random_class_pairs, rel_start, repetition_rows, trace_ops)


# ----------------------------------------------------------------- brute-force twins
def groups_bf(a, b, kept):
    order = sorted(kept, key=lambda p: (a.depth[p[0]], p[0], p[1]))
    roots, group = [], {}
    for u, v in order:
        for g, (ga, gb) in enumerate(roots):
            if ga <= u < a.end_index[ga] and gb <= v < b.end_index[gb]:
                group[(u, v)] = g
                break
        else:
            group[(u, v)] = len(roots)
            roots.append((u, v))
    return roots, group


def shapes_bf(t):
    """Exact ordered subtree of each call as a nested tuple (interned by a dict)."""
    ids, out = {}, [None] * len(t)
    for i in range(len(t) - 1, -1, -1):
        kids, c = [], i + 1
        while c < t.end_index[i]:
            kids.append(out[c])
            c = t.end_index[c]
        out[i] = ids.setdefault((int(t.func[i]), tuple(kids)), len(ids))
    return out


def repetitions_bf(t, max_period):
    key = shapes_bf(t)
    seqs = []
    for th in range(t.n_threads):
        roots = [i for i in range(len(t)) if t.thread[i] == th and t.parent[i] < 0]
        seqs.append((-1, roots))
        for p in range(len(t)):
            if t.thread[p] == th:
                kids = [c for c in range(len(t)) if t.parent[c] == p]
                if len(kids) >= 2:
                    seqs.append((p, kids))
    return repetition_rows(seqs, key, max_period)


# ----------------------------------------------------------------- the twin test
def check_against_bruteforce(a, b, tau, top_k, n_bins=7, max_period=3, join="tree", wave_pairs=None):
    c = compare_traces(a, b, tau=tau, top_k=top_k, n_bins=n_bins, max_period=max_period, join=join,
                       wave_pairs=wave_pairs, keep_class_pairs=True)
    assert isinstance(c, Comparison)
    ga, gb = gammas(a), gammas(b)
    # classes: equal ids <=> equal Γ-sets, and each class's stored set is its Γ
    for cls_arr, gs in ((c.class_a, ga), (c.class_b, gb)):
        for i, g in enumerate(gs):
            assert frozenset(c.class_set(cls_arr[i])) == g
    allg = {}
    for cls_arr, gs in ((c.class_a, ga), (c.class_b, gb)):
        for i, g in enumerate(gs):
            assert allg.setdefault(g, int(cls_arr[i])) == cls_arr[i]
    # class pairs: complete and exact
    allp = all_pairs(a, b, tau)
    exp_cp = {(c.class_a[i], c.class_b[j]): s for (i, j), s in allp.items()}
    got_cp = {(int(r["a"]), int(r["b"])): float(r["sim"]) for r in c.class_pairs}
    assert got_cp == exp_cp
    assert len(got_cp) == len(c.class_pairs) == c.n_class_pairs
    assert c.n_pairs_total == len(allp)
    # kept call pairs under the documented bound
    kept = kept_pairs(a, b, allp, top_k)
    got = {(int(r["a"]), int(r["b"])) for r in c.pairs}
    assert got == kept
    assert len(c.pairs) == len(kept) <= top_k * (len(a) + len(b))
    for r in c.pairs:
        assert r["sim"] == allp[(r["a"], r["b"])]
    # groups and per-match colour measures
    roots, group = groups_bf(a, b, kept)
    assert [(int(g["a"]), int(g["b"])) for g in c.groups] == roots
    t0a, t0b = a.start.min(), b.start.min()
    for r in c.pairs:
        u, v = int(r["a"]), int(r["b"])
        g = group[(u, v)]
        assert r["group"] == g
        assert r["dt"] == pytest.approx(abs((a.start[u] - t0a) - (b.start[v] - t0b)))
        gA, gB = roots[g]
        assert r["rel_a"] == pytest.approx((a.start[u] - a.start[gA]) / (a.end[gA] - a.start[gA]))
        assert r["rel_b"] == pytest.approx((b.start[v] - b.start[gB]) / (b.end[gB] - b.start[gB]))
    assert sum(int(g["n_matches"]) for g in c.groups) == len(kept)
    # overview, from both viewpoints, over ALL matches
    for viewer_is_a, bars, delta in ((True, c.overview_a, c.overview_delta_a),
                                     (False, c.overview_b, c.overview_delta_b)):
        eb, ed = overview_bf(a, b, allp, n_bins, viewer_is_a)
        np.testing.assert_allclose(bars, eb, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(delta, ed, rtol=1e-9, atol=1e-9)
    # repetitions
    for t, reps in ((a, c.repetitions_a), (b, c.repetitions_b)):
        assert [tuple(int(x) for x in r) for r in reps] == repetitions_bf(t, max_period)
    return c


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace_ops, trace_ops, st.sampled_from([0.1, 0.2, 0.25, 0.5, 0.8]), st.integers(1, 3),
       st.sampled_from([("tree", None), ("filter", None), ("tree", 1), ("tree", 5)]))
def test_random_trees_equal_bruteforce(ops_a, ops_b, tau, top_k, join_waves):
    """Both joins, and the tree join streamed in waves of (at least one row, at most) 1 or 5
    class pairs per chunk: the same exact results."""
    a = build_trace(ops_a, NAMES_A)
    b = build_trace(ops_b, NAMES_B)
    check_against_bruteforce(a, b, tau, top_k, join=join_waves[0], wave_pairs=join_waves[1])


def test_hand_case_bruteforce_and_values():
    # A: main{ f{len len} g{len} }   B: main{ g{len} f{len} h }
    names = ["main", "f", "g", "len", "h"]
    a = build_trace([[(0, 0), (0, 1), (0, 3), (1, 3), (2, 2), (0, 3)]], names)
    b = build_trace([[(0, 0), (0, 2), (0, 3), (2, 1), (0, 3), (2, 4)]], names)
    c = check_against_bruteforce(a, b, 0.2, 1)
    # Γ(main_A) = {main,f,g,len}, Γ(main_B) = {main,f,g,len,h}: s = 4/5
    row = c.class_pairs[(c.class_pairs["a"] == c.class_a[0]) & (c.class_pairs["b"] == c.class_b[0])]
    assert row["sim"].tolist() == [0.8]
    # the len calls: 3 in A x 2 in B, all similarity 1
    assert c.n_pairs_total == len(all_pairs(a, b, 0.2))
    assert c.groups[0]["a"] == 0 and c.groups[0]["b"] == 0   # the roots' match roots group 0


def _groups_kernel(a, b, kept, n_segments=None):
    """`bfs_groups` on ``kept`` in its input order (a, b), its walk cut into ``n_segments``
    at calls of depth 0 where there are such cuts: (roots, {pair: group})."""
    from tracevis3d.kernels.groups import bfs_groups
    order = sorted(kept)
    pa = np.array([u for u, _ in order], np.int32)
    pb = np.array([v for _, v in order], np.int32)
    g, ra, rb = bfs_groups(pa, pb, a.depth, a.end_index, b.end_index, n_segments)
    return list(zip(ra.tolist(), rb.tolist())), {p: int(x) for p, x in zip(order, g)}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace_ops, trace_ops, st.data())
def test_groups_of_any_match_set_equal_bruteforce(ops_a, ops_b, data):
    """Any set of matches (not only the top-k ones a comparison keeps): the groups of
    `bfs_groups` are those of the definition's twin (`groups_bf`)."""
    a = build_trace(ops_a, NAMES_A)
    b = build_trace(ops_b, NAMES_B)
    every = [(u, v) for u in range(len(a)) for v in range(len(b))]
    kept = set(data.draw(st.lists(st.sampled_from(every), max_size=40)))
    want = groups_bf(a, b, kept)
    for n_segments in (1, 2, 5):            # one walk, or cut at calls of depth 0 and numbered together
        assert _groups_kernel(a, b, kept, n_segments) == want


def test_groups_of_a_call_matched_to_many_disjoint_calls():
    """A thread's root matched to each of B's many task calls, and every call below it
    matched into them: each task's group holds the matches inside it, as the twin says;
    matches not sorted by (a, b), or repeated, are refused."""
    n = 300
    names = ["run", "task", "leaf"]
    # A: run{ task{leaf} × n }, B: run{ task{leaf} × n }
    ops = [(0, 0), (0, 1), (0, 2)] + [x for _ in range(n - 1) for x in ((2, 1), (0, 2))]
    a = build_trace([ops], names)
    b = build_trace([ops], names)
    tasks_b = [v for v in range(len(b)) if b.func[v] == 1]
    kept = {(0, v) for v in tasks_b}                                   # run_A × each task of B
    kept |= {(u, u) for u in range(1, len(a))}                         # each call with its twin
    kept |= {(u, tasks_b[(u * 7) % n] + 1) for u in range(1, len(a), 2)}  # tasks × other leaves
    roots, group = _groups_kernel(a, b, kept)
    assert (roots, group) == groups_bf(a, b, kept)
    assert roots[:n] == [(0, v) for v in tasks_b] and len(roots) == n
    from tracevis3d.kernels.groups import bfs_groups
    for pa, pb in (([0, 1, 0], [1, 3, 5]), ([0, 0], [3, 3]), ([1, 1], [5, 3])):
        with pytest.raises(ValueError, match="not sorted"):
            bfs_groups(np.array(pa, np.int32), np.array(pb, np.int32), a.depth, a.end_index, b.end_index)


def test_groups_of_deep_recursions():
    """Two 700-deep recursions in A (one per thread) against a 1400-deep one in B: each level
    of A matched to the mirrored level of B (so every level roots a group: B's deeper call
    is outside the groups above), and some levels also to a random call of B below their
    mirror (which joins the group of the shallowest level whose B root is above it): the
    groups of the twin.  The matches deeper than `FEW_LEVELS` groups are found by the
    segment tree, and the second thread's must not see the first one's groups (undone when
    the walk left them).  (Visiting each match's ancestors was O(depth) a match: 16 s for two
    10^5-deep chains.)"""
    from tracevis3d.kernels.groups import FEW_LEVELS
    n = 1400
    h = n // 2
    a = build_trace([[(0, 0)] * h, [(0, 0)] * h], ["rec"])
    b = build_trace([[(0, 0)] * n], ["rec"])
    assert a.depth.max() == h - 1 > FEW_LEVELS
    rng = np.random.default_rng(4)
    kept = {(u, n - 1 - int(a.depth[u])) for u in range(len(a))}
    kept |= {(int(u), int(rng.integers(n - 1 - a.depth[u], n))) for u in rng.integers(0, len(a), 300)}
    want = groups_bf(a, b, kept)
    for n_segments in (1, 2):               # the second thread's walk apart, or after the first's
        assert _groups_kernel(a, b, kept, n_segments) == want
    assert len(want[0]) >= len(a)
    from tracevis3d.kernels.groups import _segment_cuts
    pa = np.array(sorted(u for u, _ in kept), np.int32)
    assert _segment_cuts(pa, a.depth, 2) == [0, int(np.searchsorted(pa, h)), pa.size]   # at the second root
    assert _segment_cuts(pa, a.depth, 1) == [0, pa.size]
    assert _segment_cuts(pa[pa < h], a.depth, 4) == [0, int((pa < h).sum())]            # one root: no cut


# ----------------------------------------------------------------- edge cases
def test_identical_traces_every_call_matches_its_twin():
    rng = np.random.default_rng(5)
    ops = [[(int(rng.integers(0, 3)), int(rng.integers(0, 6))) for _ in range(60)] for _ in range(2)]
    a = build_trace(ops, NAMES_A)
    c = compare_traces(a, a, tau=0.2, top_k=1)
    assert np.array_equal(c.class_a, c.class_b)
    got = {(int(r["a"]), int(r["b"])): r for r in c.pairs}
    for i in range(len(a)):
        assert got[(i, i)]["sim"] == 1.0 and got[(i, i)]["dt"] == 0.0
    assert c.overview_a.sum(axis=0)[1] == pytest.approx(c.overview_a.sum(axis=0)[2])
    np.testing.assert_allclose(c.overview_a, c.overview_b)


def test_disjoint_function_sets_have_no_matches():
    a = build_trace([[(0, 0), (0, 1), (1, 2), (0, 3)]], ["a0", "a1", "a2", "a3"])
    b = build_trace([[(0, 0), (0, 1), (0, 2)]], ["b0", "b1", "b2"])
    c = compare_traces(a, b)
    assert c.n_pairs_total == 0 and len(c.class_pairs) == 0 and len(c.pairs) == 0
    assert len(c.groups) == 0 and c.overview_a.sum() == 0 and c.overview_b.sum() == 0
    assert not set(c.class_a.tolist()) & set(c.class_b.tolist())


def test_one_call_traces():
    one = build_trace([[(0, 0)]], ["main"])
    c = compare_traces(one, one)
    assert c.n_pairs_total == 1
    assert c.pairs[["a", "b", "sim", "group"]].tolist() == [(0, 0, 1.0, 0)]
    assert c.groups.tolist() == [(0, 0, 1)]
    assert c.overview_a.sum() == 1.0 and c.overview_a[0, 0] == 1.0
    other = build_trace([[(0, 0)]], ["other"])
    assert compare_traces(one, other).n_pairs_total == 0


def test_threads_and_windows_select_subsets():
    rng = np.random.default_rng(11)
    ops = [[(int(rng.integers(0, 3)), int(rng.integers(0, 6))) for _ in range(30)] for _ in range(3)]
    a = build_trace(ops, NAMES_A)
    b = build_trace(ops[::-1], NAMES_B)
    c = compare_traces(a, b, threads_a=[1], threads_b="t2", window_b=(120.0, 170.0))
    assert len(c.a) == 30 and c.a.n_threads == 1
    assert c.b.n_threads == 1 and len(c.b) < 30
    check = compare_traces(a.subset(thread=[1]), b.subset(thread="t2", time_window=(120.0, 170.0)))
    assert np.array_equal(c.class_pairs, check.class_pairs)
    assert np.array_equal(c.pairs, check.pairs)
    # across threads: a thread of A against a different thread of B
    check_against_bruteforce(a.subset(thread=[0, 2]), b.subset(thread=[1]), 0.2, 2)


def test_deterministic():
    rng = np.random.default_rng(3)
    ops = [[(int(rng.integers(0, 3)), int(rng.integers(0, 6))) for _ in range(200)]]
    a = build_trace(ops, NAMES_A)
    b = build_trace([ops[0][::-1]], NAMES_B)
    c1, c2 = compare_traces(a, b), compare_traces(a, b)
    for name in ("class_a", "class_b", "class_pairs", "pairs", "groups", "overview_a",
                 "overview_b", "repetitions_a", "repetitions_b"):
        assert np.array_equal(getattr(c1, name), getattr(c2, name)), name


@pytest.mark.parametrize("tau", [0, 1, -0.5, 1.5, float("nan")])
def test_tau_outside_open_interval_is_rejected(tau):
    a = build_trace([[(0, 0)]], ["main"])
    with pytest.raises(ValueError, match="tau"):
        compare_traces(a, a, tau=tau)


def test_bad_parameters_and_empty_traces():
    a = build_trace([[(0, 0), (0, 1)]], ["main", "f"])
    with pytest.raises(TypeError, match="tau"):
        compare_traces(a, a, tau="high")
    with pytest.raises(TypeError, match="trace b"):
        compare_traces(a, [1, 2, 3])
    with pytest.raises(ValueError, match="join"):
        compare_traces(a, a, join="magic")
    for kw in ({"top_k": 0}, {"n_bins": 0}, {"max_period": 0}, {"top_k": 1.5}):
        with pytest.raises(ValueError, match=next(iter(kw))):
            compare_traces(a, a, **kw)
    with pytest.raises(ValueError, match="aligned_tol"):
        compare_traces(a, a, aligned_tol=-1)
    empty = a.subset(time_window=(100.0, 200.0))
    with pytest.raises(ValueError, match="trace b has no calls"):
        compare_traces(a, empty)
    with pytest.raises(ValueError, match="trace a has no calls"):
        compare_traces(a, a, window_a=(100.0, 200.0))


def test_package_level_compare():
    a = build_trace([[(0, 0), (0, 1)]], ["main", "f"])
    c = tracevis3d.compare(a, a, tau=0.3)
    assert c.tau == 0.3 and c.n_pairs_total == 4


# ----------------------------------------------------------------- kernels directly
def test_join_equals_bitset_bruteforce_on_larger_sets():
    rng = np.random.default_rng(7)
    n_items = 150
    sets = [np.unique(rng.zipf(1.6, size=rng.integers(1, 40)) % n_items).astype(np.int32)
            for _ in range(400)]
    ptr = np.zeros(len(sets) + 1, np.int64)
    ptr[1:] = np.cumsum([len(s) for s in sets])
    items = np.concatenate(sets).astype(np.int32)
    rows_a = np.arange(0, 250, dtype=np.int32)
    rows_b = np.arange(150, 400, dtype=np.int32)
    size = np.diff(ptr)
    bits_a = sets_to_bitsets(ptr, items, rows_a, 3)
    bits_b = sets_to_bitsets(ptr, items, rows_b, 3)
    # every path: window popcount always / cost model / filter always / no B bitsets
    paths = [dict(brute_factor=0.0), dict(), dict(brute_factor=1e18), dict(max_bitset_bytes=0)]
    for tau in (0.1, 0.2, 0.5, 0.9):
        exp = jaccard_join_bruteforce(bits_a, size[rows_a], bits_b, size[rows_b], tau)
        assert len(exp[0]) > 0
        for kw in paths:
            cptr, cb, cs = jaccard_join(ptr, items, rows_a, rows_b, tau, n_items, n_chunks=7,
                                        chunk_cap=300, **kw)   # tiny chunks: resume rounds
            got = (np.repeat(np.arange(len(rows_a), dtype=np.int32), np.diff(cptr)), cb, cs)
            for g, e in zip(got, exp):
                assert np.array_equal(g, e), (tau, kw)


@pytest.mark.parametrize("tau", [0.1, 0.2, 0.45])
def test_tree_join_equals_filter_join_and_bruteforce_on_synthetic(tau):
    from tracevis3d.analysis.comparison import gamma_classes
    from tracevis3d.kernels.setjoin_forest import heir_forest
    from tracevis3d.kernels.setjoin_tree import jaccard_join_tree
    from tracevis3d.io.synthesis import perturb, synthetic_trace

    a = synthetic_trace(4000, threads=2, seed=12)
    b = perturb(a, seed=13)
    functions, cls, ptr, items = gamma_classes(a, b)
    rows_a = np.unique(cls[:len(a)]).astype(np.int32)
    rows_b = np.unique(cls[len(a):]).astype(np.int32)
    row_of = np.searchsorted(rows_a, cls[:len(a)]).astype(np.int32)
    # every base is a proper subset of its row's set
    base = heir_forest(row_of, a.end_index, np.diff(ptr)[rows_a])
    for r, q in enumerate(base):
        x = set(items[ptr[rows_a[r]]:ptr[rows_a[r] + 1]].tolist())
        if q >= 0:
            y = set(items[ptr[rows_a[q]]:ptr[rows_a[q] + 1]].tolist())
            assert y < x
        else:
            assert len(x) == 1
    nw = (len(functions) + 63) // 64
    size = np.diff(ptr)
    # B's classes in a shuffled order: their size ranks are not their row order,
    # so the join takes its bitmap readout path instead of the direct one
    rows_b_mixed = np.random.default_rng(3).permutation(rows_b).astype(np.int32)
    exp_mixed = jaccard_join_bruteforce(sets_to_bitsets(ptr, items, rows_a, nw), size[rows_a],
                                        sets_to_bitsets(ptr, items, rows_b_mixed, nw),
                                        size[rows_b_mixed], tau)
    for kw in (dict(), dict(subtree_limit=10 ** 9, chunk_cap=len(rows_b) + 5, n_chunks=2)):
        cptr, cb, cs = jaccard_join_tree(ptr, items, rows_a, rows_b_mixed, tau, len(functions),
                                         row_of, a.end_index, **kw)
        got = (np.repeat(np.arange(len(rows_a), dtype=np.int32), np.diff(cptr)), cb, cs)
        for g, e in zip(got, exp_mixed):
            assert np.array_equal(g, e), kw
    exp = jaccard_join_bruteforce(sets_to_bitsets(ptr, items, rows_a, nw), size[rows_a],
                                  sets_to_bitsets(ptr, items, rows_b, nw), size[rows_b], tau)
    # default / single rows, resumed / one chunk; counters handed down by copy
    # only, by undo only (besides the tail child), each also resumed mid-subtree
    for kw in (dict(), dict(subtree_limit=1, chunk_cap=len(rows_b) + 5, n_chunks=3),
               dict(subtree_limit=10 ** 9, n_chunks=1),
               dict(copy_ratio=0.0), dict(copy_ratio=1e18),
               dict(copy_ratio=0.0, subtree_limit=10 ** 9, chunk_cap=len(rows_b) + 5, n_chunks=2),
               dict(copy_ratio=1e18, subtree_limit=10 ** 9, chunk_cap=len(rows_b) + 5, n_chunks=2)):
        cptr, cb, cs = jaccard_join_tree(ptr, items, rows_a, rows_b, tau, len(functions), row_of,
                                         a.end_index, **kw)
        got = (np.repeat(np.arange(len(rows_a), dtype=np.int32), np.diff(cptr)), cb, cs)
        for g, e in zip(got, exp):
            assert np.array_equal(g, e), kw
    fptr, fb, fs = jaccard_join(ptr, items, rows_a, rows_b, tau, len(functions))
    assert np.array_equal(fptr, cptr) and np.array_equal(fb, cb) and np.array_equal(fs, cs)
    # in the join's own row order (compacted in place; several rounds fall back
    # to the ordered copy): the same rows, each once
    from tracevis3d.kernels.setjoin_tree import jaccard_join_tree_overlaps
    for kw in (dict(chunk_cap=10 ** 6), dict(subtree_limit=10 ** 9, chunk_cap=len(rows_b) + 5,
                                           n_chunks=2)):
        st = {}
        order, optr, ob, oi = jaccard_join_tree_overlaps(ptr, items, rows_a, rows_b, tau,
                                                         len(functions), row_of, a.end_index,
                                                         join_order=True, stats=st, **kw)
        assert sorted(order.tolist()) == list(range(len(rows_a)))
        assert (st["rounds"] == 1) == ("n_chunks" not in kw)
        for i, r in enumerate(order.tolist()):
            assert np.array_equal(ob[optr[i]:optr[i + 1]], fb[fptr[r]:fptr[r + 1]])
            x, y = size[rows_a[r]], size[rows_b[ob[optr[i]:optr[i + 1]]]]
            c_ = oi[optr[i]:optr[i + 1]].astype(np.int64)
            assert np.array_equal(c_ / (x + y - c_), fs[fptr[r]:fptr[r + 1]])


@pytest.mark.parametrize("tau", [0.1, 0.2, 0.45])
def test_tree_join_of_many_small_sets_equals_bruteforce(tau):
    """Rows whose postings touch few of the B sets in their size window are counted and read
    through the sets they touch (`setjoin_walk._sparse_root`): a trace of thousands of
    leaf calls of distinct functions (one-element sets, every B set in each window), mixed
    with deeper calls whose rows are walked densely in the same chunks (stale counters
    cleaned), in B's size order and shuffled (the direct and the bitmap readouts), in one
    round and resumed in small slices: equal to the brute force and the filter join."""
    from tracevis3d.analysis.comparison import gamma_classes
    from tracevis3d.kernels.setjoin_tree import jaccard_join_tree
    from tracevis3d.model import Trace

    rng = np.random.default_rng(int(tau * 100))
    func, start, end, parent = [], [], [], []
    t = 0.0
    for k in range(3000):  # leaves of distinct functions, and every 50th a call with children
        if k % 50 == 0:
            p = len(func)
            func.append(int(rng.integers(0, 40)))
            start.append(t)
            end.append(t + 10.0)
            parent.append(-1)
            for j in range(3):
                func.append(int(rng.integers(0, 40)))
                start.append(t + 1 + 3 * j)
                end.append(t + 3 + 3 * j)
                parent.append(p)
            t += 11.0
        func.append(40 + k)
        start.append(t)
        end.append(t + 1.0)
        parent.append(-1)
        t += 2.0
    names = [f"f{k} (/app/m.py:{k})" for k in range(3040)]
    a = Trace.from_arrays(func, start, end, parent, function_names=names).check()
    b = tracevis3d.perturb(a, seed=int(tau * 100))
    functions, cls, ptr, items = gamma_classes(a, b)
    rows_a = np.unique(cls[:len(a)]).astype(np.int32)
    rows_b = np.unique(cls[len(a):]).astype(np.int32)
    row_of = np.searchsorted(rows_a, cls[:len(a)]).astype(np.int32)
    nw = (len(functions) + 63) // 64
    size = np.diff(ptr)
    for rb in (rows_b, np.random.default_rng(5).permutation(rows_b).astype(np.int32)):
        exp = jaccard_join_bruteforce(sets_to_bitsets(ptr, items, rows_a, nw), size[rows_a],
                                      sets_to_bitsets(ptr, items, rb, nw), size[rb], tau)
        assert len(exp[1]) > 1000
        for kw in (dict(), dict(subtree_limit=1, chunk_cap=len(rb) + 5, n_chunks=3),
                   dict(subtree_limit=10 ** 9, chunk_cap=len(rb) + 5, n_chunks=2)):
            cptr, cb, cs = jaccard_join_tree(ptr, items, rows_a, rb, tau, len(functions), row_of, a.end_index,
                                             **kw)
            got = (np.repeat(np.arange(len(rows_a), dtype=np.int32), np.diff(cptr)), cb, cs)
            for g, e in zip(got, exp):
                assert np.array_equal(g, e), kw
        fptr, fb, fs = jaccard_join(ptr, items, rows_a, rb, tau, len(functions))
        assert np.array_equal(fb, cb) and np.array_equal(fs, cs)


def test_gamma_classes_of_two_sweeps_are_those_of_one():
    """`comparison.gamma_classes` sweeps A and B apart (two threads) and merges them
    (`gamma.merge_gamma_classes`): the classes, sets and numbering are exactly those of one
    sweep over A's calls followed by B's, renumbered by size, for pairs that share all, some
    or none of their sets."""
    from tracevis3d.analysis.comparison import gamma_classes
    from tracevis3d.io.synthesis import perturb, synthetic_trace
    from tracevis3d.kernels.gamma import renumber_sets_by_size
    from tracevis3d.names import intern_all

    base = synthetic_trace(3000, threads=3, seed=8)
    other = synthetic_trace(2000, threads=2, seed=9)
    for a, b in ((base, perturb(base, seed=3)), (base, base), (base, other), (other, base.subset(thread=[0]))):
        functions, index, maps = [], {}, []
        for t in (a, b):
            maps.append(np.array(intern_all(t.function_names, index, functions), np.int32))
        func = np.concatenate([maps[0][a.func], maps[1][b.func]]).astype(np.int32)
        end = np.concatenate([a.end_index, b.end_index.astype(np.int64) + len(a)]).astype(np.int32)
        want = renumber_sets_by_size(*gamma_classes_grown(func, end, len(functions), process_hash_seed()))
        got_functions, *got = gamma_classes(a, b)
        assert got_functions == functions
        for g, w in zip(got, want):
            assert np.array_equal(g, w)


def test_class_rows_are_unique_and_searchsorted():
    """`comparison._class_rows` (counting over class ids) gives np.unique's rows, searchsorted's
    row of each call and the calls per row, in their dtypes."""
    from tracevis3d.analysis.comparison import _class_rows

    rng = np.random.default_rng(0)
    for n, k in ((1000, 50), (10, 1000), (1, 1), (100000, 70000)):
        cls = rng.integers(0, k, n).astype(np.int32)
        rows, row_of, count = _class_rows(cls, k)
        want = np.unique(cls).astype(np.int32)
        assert np.array_equal(rows, want) and rows.dtype == np.int32
        assert np.array_equal(row_of, np.searchsorted(want, cls)) and row_of.dtype == np.int32
        assert np.array_equal(count, np.bincount(row_of, minlength=want.size)) and count.dtype == np.int64


def test_gamma_and_shape_classes_on_synthetic():
    from tracevis3d.io.synthesis import synthetic_trace

    t = synthetic_trace(3000, threads=2, seed=4)
    cls, ptr, items = gamma_classes_grown(t.func, t.end_index, t.n_functions, process_hash_seed())
    g = [frozenset(t.func[i:t.end_index[i]].tolist()) for i in range(len(t))]
    first = {}
    for i, s in enumerate(g):
        assert first.setdefault(s, cls[i]) == cls[i]
        assert frozenset(items[ptr[cls[i]]:ptr[cls[i] + 1]].tolist()) == s
    assert len(first) == len(ptr) - 1
    shape, n_shapes = shape_classes_grown(t.func, t.end_index, process_hash_seed())
    sb = shapes_bf(t)
    m = {}
    for i in range(len(t)):
        assert m.setdefault(sb[i], shape[i]) == shape[i]
    assert len(m) == n_shapes
    reps = sibling_repetitions(shape, t.parent, t.end_index, t.thread, 4)
    assert [tuple(r) for r in reps.tolist()] == repetitions_bf(t, 4)
    assert len(reps) > 0


# ----------------------------------------------------------------- perturbed copy
def test_perturbed_copy_drops_show_up_as_lower_similarity():
    from tracevis3d.io.synthesis import perturb, synthetic_trace

    a = synthetic_trace(3000, seed=8)
    b = perturb(a, seed=9, reorder=0.0, shift=0.0, drop=0.03, insert=0.0, stretch=0.0)
    origin = b.meta["perturb"]["origin"]
    assert len(b.meta["perturb"]["dropped"]) > 0
    c = compare_traces(a, b, tau=0.2)
    ga, gb = gammas(a), gammas(b)
    cp = {(int(r["a"]), int(r["b"])): float(r["sim"]) for r in c.class_pairs}
    lowered = 0
    for v in range(len(b)):
        u = int(origin[v])
        assert gb[v] <= ga[u]                     # dropping only removes functions
        s = len(gb[v]) / len(ga[u])
        if gb[v] == ga[u]:
            assert c.class_b[v] == c.class_a[u] and cp[(c.class_a[u], c.class_b[v])] == 1.0
        else:
            lowered += 1
            key = (int(c.class_a[u]), int(c.class_b[v]))
            assert (key in cp) == (s > 0.2)
            if s > 0.2:
                assert cp[key] == s
    assert lowered > 0


def test_perturbed_copy_shifts_show_up_in_dt_and_overview():
    from tracevis3d.io.synthesis import perturb, synthetic_trace

    a = synthetic_trace(1500, seed=21)
    b = perturb(a, seed=22, reorder=0.0, shift=0.05, drop=0.0, insert=0.0, stretch=0.0)
    origin = b.meta["perturb"]["origin"]
    assert np.array_equal(origin, np.arange(len(a)))      # same calls, only times moved
    c = compare_traces(a, b, tau=0.2, top_k=1)
    assert np.array_equal(c.class_a, c.class_b)           # Γ-sets unchanged
    disp = (b.start - b.start.min()) - (a.start - a.start.min())
    got = {(int(r["a"]), int(r["b"])): float(r["dt"]) for r in c.pairs}
    twins = [(i, i) for i in range(len(a)) if (i, i) in got]
    assert len(twins) > len(a) // 2
    for i, _ in twins:
        assert got[(i, i)] == pytest.approx(abs(disp[i]))
    assert np.abs(disp).max() > 0
    # overview totals equal the total similarity mass of all matches (exact)
    mass = sum(float(r["sim"]) * np.sum(c.class_a == r["a"]) * np.sum(c.class_b == r["b"])
               for r in c.class_pairs)
    assert c.overview_a.sum() == pytest.approx(mass) and c.overview_b.sum() == pytest.approx(mass)
    # moving B's calls later makes A see shifted-later mass, and B shifted-earlier mass
    later_a, earlier_a = c.overview_a[:, 2].sum(), c.overview_a[:, 1].sum()
    later_b, earlier_b = c.overview_b[:, 2].sum(), c.overview_b[:, 1].sum()
    if np.median(disp) > 0:
        assert later_a > earlier_a and earlier_b > later_b
    elif np.median(disp) < 0:
        assert earlier_a > later_a and later_b > earlier_b


# ----------------------------------------------------------------- real A/B pair
def test_real_hta_ab_pair(realdata):
    d = realdata / "hta-trace-diff"
    a = tracevis3d.load(d / "control.json.gz")
    b = tracevis3d.load(d / "test.json.gz")
    c = compare_traces(a, b, tau=0.2)
    s = c.summary()
    assert a.n_threads == 8 and b.n_threads == 8
    assert s["calls_a"] == len(a) and s["calls_b"] == len(b)
    assert s["class_pairs"] > 0 and s["pairs_total"] >= s["class_pairs"]
    assert 0 < s["pairs_kept"] <= 2 * (len(a) + len(b))
    # regression figures observed on this pair (see REAL_AB below)
    assert s == REAL_AB


# observed on 2026-11-21 with the Chrome importer of that day (tau=0.2, top_k=2, max_period=8)
REAL_AB = {'calls_a': 74937, 'calls_b': 68324, 'classes_a': 560, 'classes_b': 419,
           'class_pairs': 10093, 'pairs_total': 362842947, 'pairs_kept': 249281, 'groups': 120009,
           'repetitions_a': 8086, 'repetitions_b': 5592}


# ----------------------------------------------------------------- storage kernels at scale
@pytest.mark.parametrize("n_parts", [1, 2, 3])
def test_tiers_both_ways_and_call_pair_count_against_python(n_parts):
    from tracevis3d.kernels.setjoin_tiers import class_pair_tiers

    rng = np.random.default_rng(n_parts)
    n_rows, n_other = 40, 30
    pairs = random_class_pairs(rng, n_rows, n_other, 12, 3)
    rows, others, ptr, inter, size_row, size_other, count_row, count_other, tptr, by_col = pairs
    for k in (1, 2, 3):
        n_calls, rp, ro, rs, cp, cr, cs = class_pair_tiers(ptr, others, inter, size_row, size_other,
                                                           count_row, count_other, k, n_parts)
        assert_tiers_are_the_twins(pairs, k, (rp, ro, rs), (cp, cr, cs), n_calls)


@pytest.mark.parametrize("n_parts", [1, 2])
def test_tier_stream_in_waves_equals_twin_and_counts_partners(n_parts):
    """`TierStream` fed the rows in random order and random waves: the same tiers as the
    Python twin, the exact call-pair count, and per row / column the partners' calls."""
    from tracevis3d.kernels.setjoin_tiers import TierStream

    rng = np.random.default_rng(7 + n_parts)
    n_rows, n_other = 60, 25
    pairs = random_class_pairs(rng, n_rows, n_other, 10, 4)
    rows, others, ptr, inter, size_row, size_other, count_row, count_other, tptr, by_col = pairs
    for k in (1, 2, 3):
        stream = TierStream(size_row, size_other, count_row, count_other, k, n_parts)
        order = rng.permutation(n_rows)
        cuts = np.sort(rng.choice(np.arange(1, n_rows), size=6, replace=False))
        for wave in np.split(order, cuts):
            wptr = np.zeros(wave.size + 1, np.int64)
            np.cumsum(ptr[wave + 1] - ptr[wave], out=wptr[1:])
            idx = np.concatenate([np.arange(ptr[r], ptr[r + 1]) for r in wave] + [np.zeros(0, np.int64)])
            stream.add(wptr, others[idx], inter[idx], wave)
        partners = stream.partners_row, stream.partners_col
        n_calls, rp, ro, rs, cp, cr, cs = stream.finish()
        assert_tiers_are_the_twins(pairs, k, (rp, ro, rs), (cp, cr, cs), n_calls, partners)


def test_join_waves_hand_every_class_pair_once_in_bounded_waves():
    """`jaccard_join_tree_waves` with a small wave: every class pair of the one-round join
    exactly once, every row in one wave, no wave above its room (chunks × cap)."""
    from tracevis3d.analysis.comparison import gamma_classes
    from tracevis3d.io.synthesis import perturb, synthetic_trace
    from tracevis3d.kernels.setjoin_tree import jaccard_join_tree_overlaps, jaccard_join_tree_waves

    a = synthetic_trace(4000, threads=2, seed=41)
    b = perturb(a, seed=42)
    functions, cls, cptr, citems = gamma_classes(a, b)
    rows_a, rows_b = np.unique(cls[:len(a)]).astype(np.int32), np.unique(cls[len(a):]).astype(np.int32)
    row_of_a = np.searchsorted(rows_a, cls[:len(a)]).astype(np.int32)
    ptr, q, inter = jaccard_join_tree_overlaps(cptr, citems, rows_a, rows_b, 0.2, len(functions), row_of_a,
                                               a.end_index)
    want = {(int(r), int(x), int(i)) for r in range(rows_a.size)
            for x, i in zip(q[ptr[r]:ptr[r + 1]], inter[ptr[r]:ptr[r + 1]])}
    got, seen_rows, sizes, stats = [], [], [], {}

    def consume(rows, wptr, wq, wi):
        sizes.append(wq.size)
        seen_rows.extend(rows.tolist())
        for k, r in enumerate(rows):
            assert np.all(np.diff(wq[wptr[k]:wptr[k + 1]]) > 0)       # by B row ascending
            got.extend((int(r), int(x), int(i)) for x, i in zip(wq[wptr[k]:wptr[k + 1]], wi[wptr[k]:wptr[k + 1]]))

    waves, n = jaccard_join_tree_waves(cptr, citems, rows_a, rows_b, 0.2, len(functions), row_of_a, a.end_index,
                                       consume, wave_pairs=len(want) // 5, stats=stats)
    assert waves == stats["waves"] > 3 and n == len(want) == len(got)
    assert set(got) == want and len(seen_rows) == len(set(seen_rows))
    assert max(sizes) <= 64 * stats["cap"]


def test_overview_in_waves_equals_one_pass():
    """The overview fed any partition of A's rows into waves: the bars of one pass (up to
    rounding: the sums are added in another order)."""
    from tracevis3d.io.synthesis import perturb, synthetic_trace
    from tracevis3d.kernels.overview import overview_add_pairs, overview_bars_both, overview_finish, overview_start

    a = synthetic_trace(3000, threads=2, seed=51)
    b = perturb(a, seed=52)
    c = compare_traces(a, b, keep_class_pairs=True)
    size = np.diff(c.class_ptr).astype(np.int64)
    ra, rb = c.class_rows_a, c.class_rows_b
    ptr_a, time_a, ptr_b, time_b = [], [], [], []
    for t, cls, rws, p_out, t_out in ((a, c.class_a, ra, ptr_a, time_a), (b, c.class_b, rb, ptr_b, time_b)):
        row_of = np.full(c.n_classes, -1, np.int64)
        row_of[rws] = np.arange(rws.size)
        ts = t.start - t.start.min()
        order = np.lexsort((ts, row_of[cls]))
        p_out.append(np.concatenate([[0], np.cumsum(np.bincount(row_of[cls], minlength=rws.size))]).astype(np.int64))
        t_out.append(ts[order])
    args = (size[ra], size[rb], ptr_a[0], time_a[0], ptr_b[0], time_b[0])
    span_a, span_b = float(a.end.max() - a.start.min()), float(b.end.max() - b.start.min())
    tol_a, tol_b = span_a / 20, span_b / 20
    one = overview_bars_both(c.class_pair_ptr, c.class_pair_row_b, c.class_pair_overlap, *args, span_a, span_b, 20,
                             tol_a, tol_b, c.tau)
    acc = overview_start(ptr_a[0], time_a[0], ptr_b[0], time_b[0])
    rng = np.random.default_rng(3)
    order = rng.permutation(ra.size)
    for wave in np.array_split(order, 5):
        wptr = np.zeros(wave.size + 1, np.int64)
        np.cumsum(np.diff(c.class_pair_ptr)[wave], out=wptr[1:])
        idx = np.concatenate([np.arange(c.class_pair_ptr[r], c.class_pair_ptr[r + 1]) for r in wave])
        overview_add_pairs(acc, wptr, c.class_pair_row_b[idx], c.class_pair_overlap[idx], wave, *args, tol_a, tol_b)
    waved = overview_finish(acc, ptr_a[0], time_a[0], ptr_b[0], time_b[0], span_a, span_b, 20, c.tau)
    for x, y in zip(one, waved):
        np.testing.assert_allclose(y, x, rtol=1e-9, atol=1e-6)
        assert x.sum() > 0


def test_streamed_comparison_equals_kept_and_says_where_the_class_pairs_went():
    """``keep_class_pairs=False`` and small waves: every result equal to the kept one (the
    overview up to rounding); the class pairs themselves refused with a clear message."""
    from tracevis3d.io.synthesis import perturb, synthetic_trace

    a = synthetic_trace(5000, threads=2, seed=61)
    b = perturb(a, seed=62)
    kept = compare_traces(a, b, keep_class_pairs=True)
    streamed = compare_traces(a, b, keep_class_pairs=False, wave_pairs=kept.n_class_pairs // 7)
    assert kept.class_pairs_kept and not streamed.class_pairs_kept and streamed.params["join"]["waves"] > 3
    assert streamed.n_class_pairs == kept.n_class_pairs == len(kept.class_pairs)
    assert streamed.n_pairs_total == kept.n_pairs_total
    for name in ("pairs", "groups", "partner_calls_a", "partner_calls_b", "repetitions_a"):
        assert np.array_equal(getattr(streamed, name), getattr(kept, name)), name
    for name in ("overview_a", "overview_b", "overview_delta_a", "overview_delta_b"):
        np.testing.assert_allclose(getattr(streamed, name), getattr(kept, name), rtol=1e-9, atol=1e-6)
    for side in ("a", "b"):
        assert np.array_equal(streamed.has_match(side), kept.has_match(side))
    with pytest.raises(ValueError, match="streamed, not kept.*keep_class_pairs=True"):
        streamed.class_pairs
    assert "\n" not in streamed.describe().split("\n")[0] and repr(streamed)


def test_class_pairs_stored_as_overlaps_give_exact_similarity():
    from tracevis3d.io.synthesis import perturb, synthetic_trace

    a = synthetic_trace(3000, seed=5)
    b = perturb(a, seed=6)
    c = compare_traces(a, b, tau=0.3)
    f = compare_traces(a, b, tau=0.3, join="filter")
    assert c.class_pair_overlap.dtype == np.uint16 and c.class_pair_row_b.dtype == np.int32
    # the same class pairs (the tree join lists A's rows in its own order)
    assert np.array_equal(np.sort(f.class_rows_a), f.class_rows_a)
    assert np.array_equal(np.sort(c.class_rows_a), f.class_rows_a)
    kc = np.lexsort((c.class_pair_b, c.class_pair_a))
    for name in ("class_pair_a", "class_pair_b", "class_pair_overlap", "class_pair_sim"):
        assert np.array_equal(getattr(c, name)[kc], getattr(f, name)), name
    for name in ("pairs", "groups", "class_a", "class_b"):
        assert np.array_equal(getattr(c, name), getattr(f, name)), name
    for name in ("overview_a", "overview_b", "overview_delta_a", "overview_delta_b"):
        # the same sums, added in another row order
        np.testing.assert_allclose(getattr(c, name), getattr(f, name), rtol=1e-12, err_msg=name)
    size = np.diff(c.class_ptr)
    for i in range(0, c.n_class_pairs, max(1, c.n_class_pairs // 300)):
        x = set(c.class_set(int(c.class_pair_a[i])))
        y = set(c.class_set(int(c.class_pair_b[i])))
        assert c.class_pair_overlap[i] == len(x & y)
        assert c.class_pair_sim[i] == len(x & y) / len(x | y) > 0.3
        assert size[c.class_pair_a[i]] == len(x)


def test_weighted_heir_forest_bases_are_proper_subsets_with_max_weight():
    from tracevis3d.analysis.comparison import gamma_classes
    from tracevis3d.kernels.setjoin_forest import heir_forest_weighted
    from tracevis3d.io.synthesis import synthetic_trace

    a = synthetic_trace(2000, seed=8)
    _, cls, ptr, items = gamma_classes(a, a)
    cls = cls[:len(a)]
    rows = np.unique(cls).astype(np.int32)
    row_of = np.searchsorted(rows, cls).astype(np.int32)
    size = np.diff(ptr)[rows].astype(np.int64)
    weight = np.random.default_rng(0).random(rows.size)
    base = heir_forest_weighted(row_of, a.end_index, size, weight)
    sets = [set(items[ptr[c]:ptr[c + 1]].tolist()) for c in rows]
    cand = {}                       # twin: child classes of calls whose children differ in class
    for i in range(len(a)):
        kids = [int(row_of[j]) for j in np.nonzero(a.parent == i)[0]]
        if row_of[i] in kids:
            continue
        cand.setdefault(int(row_of[i]), set()).update(kids)
    for r in range(rows.size):
        ks = cand.get(r, set())
        if not ks:
            assert base[r] == -1
        else:
            assert sets[base[r]] < sets[r]
            assert weight[base[r]] == max(weight[q] for q in ks)


def test_vocabulary_over_65535_functions_keeps_uint16_overlaps_with_same_result():
    """Over 65535 distinct function names, classes of fewer functions keep uint16 overlaps
    (`setjoin.overlap_dtype` bounds the counters by the sets, not the vocabulary: the 10^6
    pair's join 2.99 -> 2.24 s), with the same result as without the unused names."""
    from tracevis3d.model import Trace
    from tracevis3d.io.synthesis import perturb, synthetic_trace

    a = synthetic_trace(3000, threads=2, seed=21)
    b = perturb(a, seed=22)
    pad = [f"unused_{i}" for i in range(66000)]     # shared names no call uses

    def padded(t):
        return Trace.from_arrays(t.func + len(pad), t.start, t.end, t.parent, thread=t.thread,
                                 function_names=pad + list(t.function_names),
                                 thread_names=t.thread_names)

    c16 = compare_traces(a, b, tau=0.25)
    cpad = compare_traces(padded(a), padded(b), tau=0.25)
    assert c16.class_pair_overlap.dtype == np.uint16 and cpad.class_pair_overlap.dtype == np.uint16
    assert len(cpad.functions) > 65535 and cpad.n_class_pairs == c16.n_class_pairs > 0
    set16 = {(tuple(c16.class_set(int(x))), tuple(c16.class_set(int(y))), float(s))
             for x, y, s in zip(c16.class_pair_a, c16.class_pair_b, c16.class_pair_sim)}
    setpad = {(tuple(cpad.class_set(int(x))), tuple(cpad.class_set(int(y))), float(s))
              for x, y, s in zip(cpad.class_pair_a, cpad.class_pair_b, cpad.class_pair_sim)}
    assert set16 == setpad
    assert cpad.n_pairs_total == c16.n_pairs_total
    assert np.array_equal(cpad.pairs, c16.pairs) and np.array_equal(cpad.groups, c16.groups)
    for name in ("overview_a", "overview_b", "overview_delta_a", "overview_delta_b"):
        np.testing.assert_allclose(getattr(cpad, name), getattr(c16, name), rtol=1e-12)


def _fan_trace(n_leaves, skip=()):
    """One root call over ``n_leaves`` leaf calls of distinct functions (leaf i of ``skip``
    left out) beside a small synthetic thread: its root's class holds ~``n_leaves`` functions."""
    from tracevis3d.model import Trace
    from tracevis3d.io.synthesis import synthetic_trace

    small = synthetic_trace(400, threads=1, seed=5)
    leaves = np.array([i for i in range(n_leaves) if i not in set(skip)], np.int64)
    n_small, n_fan = len(small.func), 1 + leaves.size
    names = list(small.function_names) + ["fan_root"] + [f"leaf_{i}" for i in range(n_leaves)]
    root_f = len(small.function_names)
    func = np.concatenate([small.func, [root_f], root_f + 1 + leaves]).astype(np.int32)
    t_end = float(small.end.max()) + 10.0
    start = np.concatenate([small.start, [t_end], t_end + 1.0 + 2.0 * np.arange(leaves.size)])
    end = np.concatenate([small.end, [t_end + 2.0 * leaves.size + 2.0], t_end + 2.0 + 2.0 * np.arange(leaves.size)])
    parent = np.concatenate([small.parent, [-1], np.full(leaves.size, n_small)]).astype(np.int32)
    thread = np.concatenate([small.thread, np.full(n_fan, small.thread.max() + 1)]).astype(np.int32)
    return Trace.from_arrays(func, start, end, parent, thread=thread, function_names=names,
                             thread_names=list(small.thread_names) + ["fan"])


def test_classes_of_65535_functions_or_more_use_int32_overlaps_exactly():
    """A class of 65535 functions or more on both sides: overlaps no longer fit uint16, so every
    kernel runs on int32 counters and overlaps; the class pairs are those of the filter join
    (a different algorithm) and the fan roots' overlap is the sets' own intersection."""
    a = _fan_trace(67000)
    b = _fan_trace(67000, skip=range(0, 67000, 97))
    tree = compare_traces(a, b, tau=0.25, keep_class_pairs=True)
    filt = compare_traces(a, b, tau=0.25, keep_class_pairs=True, join="filter")
    assert tree.class_pair_overlap.dtype == np.int32 and filt.class_pair_overlap.dtype == np.int32
    got = {(tuple(tree.class_set(int(x))), tuple(tree.class_set(int(y))), int(o))
           for x, y, o in zip(tree.class_pair_a, tree.class_pair_b, tree.class_pair_overlap)}
    want = {(tuple(filt.class_set(int(x))), tuple(filt.class_set(int(y))), int(o))
            for x, y, o in zip(filt.class_pair_a, filt.class_pair_b, filt.class_pair_overlap)}
    assert got == want and tree.n_pairs_total == filt.n_pairs_total
    assert np.array_equal(tree.pairs, filt.pairs)
    big = [(len(x), len(y), o) for x, y, o in got if len(x) > 65535]
    n_b = 67001 - len(range(0, 67000, 97))
    assert n_b >= 65535 and big == [(67001, n_b, n_b)]


def test_result_is_bit_identical_for_any_thread_count():
    """Parallel reductions use fixed parts and chunks, never the thread count."""
    import numba

    from tracevis3d.io.synthesis import perturb, synthetic_trace

    a = synthetic_trace(6000, threads=2, seed=31)
    b = perturb(a, seed=32)
    names = ("class_a", "class_b", "class_rows_a", "class_pair_ptr", "class_pair_row_b",
             "class_pair_overlap", "pairs", "groups", "overview_a", "overview_b",
             "overview_delta_a", "overview_delta_b")
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = compare_traces(a, b)
    finally:
        numba.set_num_threads(before)
    many = compare_traces(a, b)
    for name in names:
        x, y = getattr(one, name), getattr(many, name)
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), name
    assert one.n_pairs_total == many.n_pairs_total


# ----------------------------------------------------------------- questions users ask (plain API)
def best_bf(a, b, allp, side):
    """Per call of ``side`` with a match: (rank key, best partner, similarity), by the
    documented order (similarity desc, |relative start difference| asc, partner index asc)."""
    ra, rb = rel_start(a), rel_start(b)
    best = {}
    for (i, j), s in allp.items():
        own, other = (i, j) if side == "a" else (j, i)
        key = (-s, abs(ra[i] - rb[j]), other)
        if own not in best or key < best[own][0]:
            best[own] = (key, other, s)
    return best


def check_questions(a, b, tau, top_k, keep_class_pairs=None):
    """Every question helper of `Comparison` against the brute-force pairs."""
    from collections import Counter

    c = compare_traces(a, b, tau=tau, top_k=top_k, keep_class_pairs=keep_class_pairs, wave_pairs=8)
    allp = all_pairs(a, b, tau)
    for side, t in (("a", a), ("b", b)):
        matched = {p[0] if side == "a" else p[1] for p in allp}
        unmatched = sorted(set(range(len(t))) - matched)
        assert c.has_match(side).tolist() == [i in matched for i in range(len(t))]
        dur = t.end - t.start
        un = c.unmatched_calls(side)
        assert un["call"].tolist() == sorted(unmatched, key=lambda i: (-dur[i], i))
        assert un["name"].tolist() == [t.function_names[t.func[i]] for i in un["call"]]
        assert un["duration"].tolist() == [dur[i] for i in un["call"]]
        assert un["calls"].tolist() == [t.end_index[i] - i for i in un["call"]]
        assert un["start"].tolist() == [t.start[i] - t.start.min() for i in un["call"]]
        outer = c.unmatched_calls(side, outermost=True)
        assert set(outer["call"].tolist()) == {i for i in unmatched if t.parent[i] < 0 or t.parent[i] in matched}
        assert c.unmatched_calls(side, n=2)["call"].tolist() == un["call"].tolist()[:2]
        best = best_bf(a, b, allp, side)
        calls, partner, sim = c.best_partners(side)
        assert {int(u): (int(v), float(s)) for u, v, s in zip(calls, partner, sim)} == \
            {u: (v, s) for u, (_, v, s) in best.items()}
        counts = Counter(p[0] if side == "a" else p[1] for p in allp)
        assert c._partner_counts(side).tolist() == [counts.get(i, 0) for i in range(len(t))]
    best = best_bf(a, b, allp, "a")
    da = {i: a.end[i] - a.start[i] for i in best}
    db = {i: b.end[best[i][1]] - b.start[best[i][1]] for i in best}
    for by, key in (("size", lambda i: a.end_index[i] - i), ("duration", lambda i: da[i]),
                    ("similarity", lambda i: best[i][2])):
        rows = c.top_matches(n=4, by=by)
        expect = sorted(best, key=lambda i: (-key(i), i))[:4]
        assert rows["call_a"].tolist() == expect, by
        assert rows["call_b"].tolist() == [best[i][1] for i in expect]
        assert rows["similarity"].tolist() == [best[i][2] for i in expect]
        assert rows["partners_a"].tolist() == [sum(1 for p in allp if p[0] == i) for i in expect]
    for min_ratio in (1.0, 1.5, 3.0):
        slow = sorted((i for i in best if db[i] / da[i] >= min_ratio), key=lambda i: (-(db[i] - da[i]), i))
        fast = sorted((i for i in best if db[i] / da[i] <= 1.0 / min_ratio), key=lambda i: (-(da[i] - db[i]), i))
        got_slow, got_fast = c.slower_in_b(min_ratio), c.faster_in_b(min_ratio)
        assert got_slow["call_a"].tolist() == slow and got_fast["call_a"].tolist() == fast
        assert got_slow["ratio"].tolist() == [db[i] / da[i] for i in slow]
        assert got_slow["call_b"].tolist() == [best[i][1] for i in slow]
    return c


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace_ops, trace_ops, st.sampled_from([0.1, 0.25, 0.5]), st.integers(1, 2),
       st.sampled_from([1.0, 3.0, 0.25]), st.sampled_from([None, False]))
def test_questions_equal_bruteforce(ops_a, ops_b, tau, top_k, scale_b, keep_class_pairs):
    """The answers need no kept class pairs (``keep_class_pairs=False``: streamed only)."""
    a = build_trace(ops_a, NAMES_A)
    b = build_trace(ops_b, NAMES_B)
    b.start, b.end = b.start * scale_b, b.end * scale_b  # B runs slower / faster
    check_questions(a, b, tau, top_k, keep_class_pairs)


def test_plain_names_are_the_papers_fields():
    names = ["main", "f", "g", "len", "h"]
    a = build_trace([[(0, 0), (0, 1), (0, 3), (1, 3), (2, 2), (0, 3)]], names)
    b = build_trace([[(0, 0), (0, 2), (0, 3), (2, 1), (0, 3), (2, 4)]], names)
    c = compare_traces(a, b, tau=0.2)
    assert c.subtree_set_a is c.class_a and c.subtree_set_b is c.class_b
    assert c.subtree_function_sets == (c.class_ptr, c.class_items) and c.n_sets == c.n_classes
    assert c.functions_in_set(int(c.class_a[0])) == c.class_set(int(c.class_a[0]))
    assert np.array_equal(c.matching_set_pairs, c.class_pairs)
    assert c.n_matching_call_pairs == c.n_pairs_total and c.matches is c.pairs and c.match_groups is c.groups
    # every call with a match has its partners among the kept pairs (and only those)
    for side in ("a", "b"):
        assert np.array_equal(c.has_match(side), np.isin(np.arange(len(c.trace(side))), c.pairs[side]))
    text = repr(c)
    assert text.startswith("<Comparison of ") and "τ=0.2" in text and "no match for" in text
    d = c.describe()
    assert "A = " in d and "B = " in d and "match nothing in the other run" in d
    # h exists only in B: the calls of h have no partner; main_B's set has h but still matches
    un = c.unmatched_calls("b")
    assert un["name"].tolist() == ["h"]
    rows = c.partners(0, "a")
    assert rows["call_a"].tolist() == [0] * rows.size and rows["name_b"][0] == "main"
    from tracevis3d.analysis.comparison import to_dicts

    first = to_dicts(c.top_matches(1))[0]
    assert first["call_a"] == 0 and first["name_a"] == "main" and isinstance(first["similarity"], float)
    assert c.find_call("a", 2) == 2 and c.find_call("a", "3") == 3 and c.find_call("b", "h") == 5
    assert c.find_call("a", "len") == 2  # the longest call of len (then the earliest)
    assert c.find_call("a", "ma") == 0  # a part of the name
    for call, match in ((lambda: c.find_call("a", "nothing"), "no call of A is named like 'nothing'"),
                        (lambda: c.find_call("b", 99), "outside 0..5"),
                        (lambda: c.top_matches(by="weight"), "by must be one of"),
                        (lambda: c.slower_in_b(0.5), "min_ratio"),
                        (lambda: c.faster_in_b("x"), "min_ratio"),
                        (lambda: c.unmatched_calls("c"), "side must be")):
        with pytest.raises(ValueError, match=match):
            call()


def test_join_buffers_reserve_address_space_only():
    """The join's match buffers are sized for the most a chunk can write: a mapping larger
    than RAM and swap together must still be granted (pages become resident only when
    written), as a 10^7-call comparison needs (issue 26)."""
    import os

    from tracevis3d.kernels.lazybuf import lazy_empty, release_after

    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    n = 2 * ram // 4 + 4096  # twice the machine's memory, in int32
    try:
        a, mm = lazy_empty(n, np.int32)
    except MemoryError as e:  # strict overcommit: the clear error, not an OSError
        assert "GiB of address space" in str(e)
        return
    a[:1000] = 7
    a[-1000:] = 9
    assert a[0] == 7 and a[-1] == 9 and a.shape[0] == n
    release_after(mm, 4000)
    del a
    mm.close()


def test_released_range_reads_zero_and_keeps_the_rest():
    """`lazybuf.release_range` gives back whole pages inside the range only: the compaction
    of the join's buffers reads what lies outside it afterwards."""
    import mmap

    from tracevis3d.kernels.lazybuf import lazy_empty, release_range

    n = 4 * mmap.PAGESIZE // 4
    a, mm = lazy_empty(n, np.int32)
    a[:] = np.arange(n, dtype=np.int32)
    lo, hi = 100, 3 * mmap.PAGESIZE // 4 + 7     # in items: pages 1 and 2 lie wholly inside
    release_range(mm, lo * 4, hi * 4)
    page = mmap.PAGESIZE // 4
    if hasattr(mm, "madvise"):
        assert not a[page: 3 * page].any()       # given back: zero-filled when read again
    assert np.array_equal(a[:page], np.arange(page))              # partial first page kept
    assert np.array_equal(a[3 * page:], np.arange(3 * page, n))   # partial last page kept
    del a
    mm.close()


def _pair_for_memory_check():
    a = tracevis3d.synthetic(3000, threads=2, seed=3)
    return a, tracevis3d.perturb(a, seed=4)


def test_too_large_pair_is_refused_before_the_work(monkeypatch):
    """A comparison that cannot fit in the available memory raises `TraceTooLargeError`
    (a MemoryError) naming what it needs, what is available and how to ask for less, before
    the classes are built (calls alone) or before the join's walk (its sampled class
    pairs); the available memory is the monkeypatched function, not a real shortage."""
    from tracevis3d.analysis import comparison as cm
    from tracevis3d.kernels import setjoin_tree
    from tracevis3d.model import TraceTooLargeError

    a, b = _pair_for_memory_check()
    full = compare_traces(a, b)
    n_calls = len(a) + len(b)
    walked = []
    real_round = setjoin_tree.tree_round
    monkeypatch.setattr(setjoin_tree, "tree_round", lambda *x: walked.append(1) or real_round(*x))
    # too little for the calls alone: refused before anything is built
    monkeypatch.setattr(cm, "available_memory_bytes", lambda: cm.calls_need_bytes(n_calls) - 1)
    with pytest.raises(TraceTooLargeError) as e:
        compare_traces(a, b)
    msg = str(e.value)
    assert f"{n_calls:,} calls" in msg and "iB available" in msg and "window_a=" in msg
    assert "threads_a=" in msg and "max_depth" in msg and "\n" not in msg
    assert isinstance(e.value, MemoryError) and not walked
    # enough for the calls, not for the class pairs: refused after the sample, before the walk
    # (what the comparison already holds counted as 0: the room is exact)
    monkeypatch.setattr(cm, "own_anon_bytes", lambda: 0)
    room = cm.calls_need_bytes(n_calls) + full.n_class_pairs * cm.COMPARE_BYTES_PER_CLASS_PAIR / 10
    monkeypatch.setattr(cm, "available_memory_bytes", lambda: room)
    with pytest.raises(TraceTooLargeError, match="pairs of similar subtree function sets") as e:
        compare_traces(a, b)
    assert not walked
    # the sampled estimate is within the margin of the truth: its need and the real one agree
    est = float(str(e.value).split("about ")[1].split(" pairs")[0].replace(",", ""))
    assert 0.5 * full.n_class_pairs < est < 2.0 * full.n_class_pairs
    # enough room: the same result as without the check
    monkeypatch.setattr(cm, "available_memory_bytes", lambda: 1 << 50)
    again = compare_traces(a, b)
    assert walked and np.array_equal(again.class_pair_row_b, full.class_pair_row_b)
    assert np.array_equal(again.pairs, full.pairs)


def test_available_memory_is_positive_and_within_a_cgroup_limit(tmp_path):
    from tracevis3d.analysis.comparison import available_memory_bytes, cgroup_room_bytes

    assert available_memory_bytes() > 0
    assert cgroup_room_bytes(str(tmp_path)) is None                       # no cgroup files
    (tmp_path / "memory.max").write_text("max\n")
    (tmp_path / "memory.current").write_text("123\n")
    assert cgroup_room_bytes(str(tmp_path)) is None                       # v2, no limit
    (tmp_path / "memory.max").write_text("1000\n")
    assert cgroup_room_bytes(str(tmp_path)) == 877                        # v2 limit − usage
    (tmp_path / "memory.current").write_text("5000\n")
    assert cgroup_room_bytes(str(tmp_path)) == 0
    v1 = tmp_path / "v1"
    (v1 / "memory").mkdir(parents=True)
    (v1 / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    (v1 / "memory" / "memory.usage_in_bytes").write_text("4096\n")
    assert cgroup_room_bytes(str(v1)) is None                             # v1, no limit
    (v1 / "memory" / "memory.limit_in_bytes").write_text("8192\n")
    assert cgroup_room_bytes(str(v1)) == 4096


def test_filter_join_is_checked_too_and_the_estimate_is_its_sample_scaled(monkeypatch):
    """join="filter" is refused from the same sampled estimate (its own bytes per pair of its
    waves); the
    estimate is exactly the sampled rows' class pairs (counted here from the complete
    join) scaled to all rows."""
    from tracevis3d.analysis import comparison as cm
    from tracevis3d.kernels.setjoin_tree import estimate_class_pairs
    from tracevis3d.model import TraceTooLargeError

    a, b = _pair_for_memory_check()
    full = compare_traces(a, b, join="filter")
    functions, cls, cptr, citems = cm.gamma_classes(a, b)
    rows_a, rows_b = np.unique(cls[:len(a)]), np.unique(cls[len(a):])
    est = estimate_class_pairs(cptr, citems, rows_a, rows_b, 0.2, len(functions))
    per_row = np.zeros(rows_a.size, np.int64)   # class pairs per A class (ascending), from the result
    row_of = np.searchsorted(rows_a, full.class_rows_a)
    per_row[row_of] = np.diff(full.class_pair_ptr)
    sample = np.arange(0, rows_a.size, max(100, rows_a.size // 5000))
    assert est == per_row[sample].sum() * rows_a.size / sample.size
    n_calls = len(a) + len(b)
    assert est < cm.KEEP_CLASS_PAIRS_AUTO            # kept (auto), and all in one wave
    # the join's phase: its held class pairs and its wave's buffers (the peak is the largest
    # phase); what the comparison already holds is counted as 0 here, so the room is exact
    need, phase = cm.compare_need_bytes(n_calls, 2, min(est, cm.WAVE_PAIRS) * cm.FILTER_JOIN_BYTES_PER_CLASS_PAIR,
                                        est, cm.COMPARE_BYTES_PER_CLASS_PAIR)
    assert phase == "join"
    monkeypatch.setattr(cm, "own_anon_bytes", lambda: 0)
    monkeypatch.setattr(cm, "available_memory_bytes", lambda: need - 1)
    with pytest.raises(TraceTooLargeError, match=f"about {est:,.0f} pairs"):
        compare_traces(a, b, join="filter")
    compare_traces(a, b)   # the tree join needs less per pair: it fits


def _overview_inputs(c, a, b):
    """Per side of a kept comparison: the calls' times grouped by class row (ptr, times), as
    `compare_traces` builds them, and the set sizes of the class rows."""
    size = np.diff(c.class_ptr).astype(np.int64)
    out = []
    for t, cls, rws in ((a, c.class_a, c.class_rows_a), (b, c.class_b, c.class_rows_b)):
        row_of = np.full(c.n_classes, -1, np.int64)
        row_of[rws] = np.arange(rws.size)
        ts = t.start - t.start.min()
        order = np.lexsort((ts, row_of[cls]))
        ptr = np.concatenate([[0], np.cumsum(np.bincount(row_of[cls], minlength=rws.size))]).astype(np.int64)
        out.append((ptr, ts[order], size[rws]))
    return out


def test_wave_consumer_equals_tier_stream_and_overview_in_the_same_waves():
    """`setjoin_consume.WaveConsumer` fed random waves: the tiers, call-pair count and
    partner counts of `TierStream` (itself twinned with Python above) and the overview
    bars of `overview_add_pairs` on the same waves, bit for bit."""
    from tracevis3d.io.synthesis import perturb, synthetic_trace
    from tracevis3d.kernels.overview import overview_add_pairs, overview_finish, overview_start
    from tracevis3d.kernels.setjoin_consume import WaveConsumer
    from tracevis3d.kernels.setjoin_tiers import TierStream

    a = synthetic_trace(3000, threads=2, seed=71)
    b = perturb(a, seed=72)
    c = compare_traces(a, b, keep_class_pairs=True)
    (ptr_a, time_a, size_a), (ptr_b, time_b, size_b) = _overview_inputs(c, a, b)
    span_a, span_b = float(time_a.max()), float(time_b.max())
    tol_a, tol_b = span_a / 20, span_b / 20
    ra = c.class_rows_a
    rng = np.random.default_rng(5)
    for k in (1, 2, 3):
        old_ov = overview_start(ptr_a, time_a, ptr_b, time_b)
        new_ov = overview_start(ptr_a, time_a, ptr_b, time_b)
        old = TierStream(size_a, size_b, np.diff(ptr_a), np.diff(ptr_b), k, 2)
        new = WaveConsumer(size_a, size_b, np.diff(ptr_a), np.diff(ptr_b), k, new_ov, ptr_a, time_a, ptr_b,
                           time_b, tol_a, tol_b)
        for wave in np.array_split(rng.permutation(ra.size), 4):
            wave = wave[np.diff(c.class_pair_ptr)[wave] > 0]
            wptr = np.zeros(wave.size + 1, np.int64)
            np.cumsum(np.diff(c.class_pair_ptr)[wave], out=wptr[1:])
            idx = np.concatenate([np.arange(c.class_pair_ptr[r], c.class_pair_ptr[r + 1]) for r in wave])
            part, inter = c.class_pair_row_b[idx], c.class_pair_overlap[idx]
            old.add(wptr, part, inter, wave)
            overview_add_pairs(old_ov, wptr, part, inter, wave, size_a, size_b, ptr_a, time_a, ptr_b, time_b,
                               tol_a, tol_b)
            new.add(wptr, part, inter, wave)
        assert np.array_equal(old.partners_row, new.partners_row)
        assert np.array_equal(old.partners_col, new.partners_col)
        assert old.n_pairs == new.n_pairs == c.n_class_pairs
        for x, y in zip(old.finish(), new.finish()):
            assert np.array_equal(x, y) and (np.asarray(x).dtype == np.asarray(y).dtype)
        bars = [overview_finish(acc, ptr_a, time_a, ptr_b, time_b, span_a, span_b, 20, c.tau)
                for acc in (old_ov, new_ov)]
        for x, y in zip(*bars):
            assert np.array_equal(x, y) and x.sum() > 0


def test_sweep_of_one_call_equals_the_general_sweep():
    """`overview._sweep_one` (one call against a sorted run) against `sweep_pair` with a
    small side of one call: the same large-side difference entries bit for bit, and as the
    viewer's point the entries `sweep_pair` adds at the call's slot."""
    from tracevis3d.kernels.overview import _sweep_one, sweep_pair

    rng = np.random.default_rng(11)
    for trial in range(300):
        n = int(rng.integers(2, 40))
        large = np.sort(rng.choice([0.0, 1.0, 2.5, 3.0, 7.0, 10.0], size=n) if trial % 2
                        else rng.uniform(0, 100, n))
        csum = np.concatenate([[0.0], np.cumsum(large)])
        x = float(rng.choice(large)) if trial % 3 == 0 else float(rng.uniform(-10, 110))
        s = float(rng.uniform(0.2, 1.0))
        tol_small, tol_large = float(rng.choice([0.0, 1.0, 5.0])), float(rng.choice([0.0, 0.5, 20.0]))
        o_large = int(rng.integers(0, 3))
        want_large = np.zeros((n + o_large + 1, 5))
        want_small = np.zeros((2, 5))
        sweep_pair(np.array([x]), 0, 1, 0, large, 0, n, o_large, csum, s, tol_small, tol_large,
                    want_small, want_large, 1.0)
        got_large = np.zeros_like(want_large)
        one = np.zeros(5)
        _sweep_one(x, large, 0, n, o_large, csum, s, tol_small, tol_large, one, got_large)
        assert np.array_equal(got_large, want_large)
        assert np.array_equal(one, want_small[0]) and np.array_equal(-one, want_small[1] + 0.0)


def test_filter_join_waves_hand_every_class_pair_once_with_overlaps():
    """`setjoin_prefix.jaccard_join_waves` with a small wave: every class pair of the one-shot
    `jaccard_join` exactly once, every row in one wave whole, rows ascending in a wave, by B
    row ascending, with the
    overlap that gives back its similarity bit for bit; no wave above its room."""
    from tracevis3d.analysis.comparison import gamma_classes
    from tracevis3d.io.synthesis import perturb, synthetic_trace
    from tracevis3d.kernels.setjoin import overlap_similarity
    from tracevis3d.kernels.setjoin_prefix import jaccard_join_waves

    a = synthetic_trace(4000, threads=2, seed=43)
    b = perturb(a, seed=44)
    functions, cls, cptr, citems = gamma_classes(a, b)
    rows_a, rows_b = np.unique(cls[:len(a)]).astype(np.int32), np.unique(cls[len(a):]).astype(np.int32)
    ptr, q, sim = jaccard_join(cptr, citems, rows_a, rows_b, 0.2, len(functions))
    want = {(int(r), int(x), float(s)) for r in range(rows_a.size)
            for x, s in zip(q[ptr[r]:ptr[r + 1]], sim[ptr[r]:ptr[r + 1]])}
    size = np.diff(cptr)
    got, seen_rows, sizes, stats = [], [], [], {}

    def consume(rows, wptr, wq, wi):
        sizes.append(wq.size)
        seen_rows.extend(rows.tolist())
        assert np.all(np.diff(rows) > 0)                                 # rows ascending
        for k, r in enumerate(rows):
            lo, hi = wptr[k], wptr[k + 1]
            assert hi > lo and np.all(np.diff(wq[lo:hi]) > 0)
            got.extend((int(r), int(x), float(overlap_similarity(i, size[rows_a[r]], size[rows_b[x]])))
                       for x, i in zip(wq[lo:hi], wi[lo:hi]))

    waves, n = jaccard_join_waves(cptr, citems, rows_a, rows_b, 0.2, len(functions), consume,
                                  wave_pairs=len(want) // 5, stats=stats)
    assert waves == stats["waves"] > 3 and n == len(want) == len(got)
    assert set(got) == want and len(seen_rows) == len(set(seen_rows))
    assert max(sizes) <= 64 * stats["cap"]


def test_filter_join_in_small_waves_gives_the_tree_joins_comparison():
    """``join="filter"`` streamed in small waves: the tree join's comparison (pairs, groups,
    partner counts, totals, class pairs; the overview up to rounding)."""
    from tracevis3d.io.synthesis import perturb, synthetic_trace

    a = synthetic_trace(5000, threads=2, seed=63)
    b = perturb(a, seed=64)
    tree = compare_traces(a, b, keep_class_pairs=True)
    filt = compare_traces(a, b, join="filter", keep_class_pairs=True, wave_pairs=tree.n_class_pairs // 6)
    assert filt.params["join"]["waves"] > 3
    assert filt.n_class_pairs == tree.n_class_pairs and filt.n_pairs_total == tree.n_pairs_total
    assert sorted(map(tuple, filt.class_pairs.tolist())) == sorted(map(tuple, tree.class_pairs.tolist()))
    for name in ("pairs", "groups", "partner_calls_a", "partner_calls_b"):
        assert np.array_equal(getattr(filt, name), getattr(tree, name)), name
    for name in ("overview_a", "overview_b", "overview_delta_a", "overview_delta_b"):
        np.testing.assert_allclose(getattr(filt, name), getattr(tree, name), rtol=1e-9, atol=1e-6)
