"""The squeeze's reduced tree (`kernels.fold_reduce`), the fold's name widths
(`kernels.runs.name_widths`) and the drawn calls' gather (`kernels.drawn`) against
brute-force twins (bpy-free)."""
import numpy as np
from hypothesis import given, settings, strategies as st

from tracevis3d.kernels.drawn import clipped_widths, dense_ranks_in_range, gather_drawn
from tracevis3d.kernels.fold import squeezed_levels
from tracevis3d.kernels.fold_reduce import envelope_tops, kept_tree, reduced_tops, subpixel_stubs, tiny_subtrees
from tracevis3d.kernels.runs import child_rows, name_widths, sibling_runs
from tracevis3d.kernels.tree import depth_and_end_from_parent

NAMED = 50.0


def _preorder_forest(rng, n_max=400):
    """A forest in per-lane depth-first pre-order (subtrees contiguous, lanes contiguous),
    with deep narrow towers: widths shrink with depth, most calls below ``NAMED``."""
    n_lanes = int(rng.integers(1, 4))
    parent, lane, width = [], [], []
    for ln in range(n_lanes):
        stack = []  # open calls: (index, width)
        for _ in range(int(rng.integers(1, n_max // n_lanes + 2))):
            while stack and rng.random() < 0.3:
                stack.pop()
            p, pw = stack[-1] if stack else (-1, rng.uniform(20, 400))
            w = pw * rng.uniform(0.2, 1.0)
            parent.append(p)
            lane.append(ln)
            width.append(w)
            stack.append((len(parent) - 1, w))
    n = len(parent)
    parent, lane, width = np.array(parent, np.int32), np.array(lane, np.int32), np.array(width)
    name_px = width * np.where(rng.random(n) < 0.1, rng.uniform(1, 3, n), 1.0)  # runs and rows: wider
    infra, passing = rng.random(n) < 0.25, rng.random(n) < 0.35
    passing &= ~infra
    wide = width >= 60.0
    return n, n_lanes, parent, lane, name_px, width, infra, passing, wide


def _dirty_work(m):
    """`reduced_tops`' work arrays for ``m`` calls, dirty (as an earlier call leaves them)."""
    return (np.ones(m, np.bool_), np.full(m, 2, np.int8), np.full(m, 7.0), np.full(m, 5, np.int32),
            np.full(m, 3.0), np.full(m, 2.0), np.ones(m, np.bool_), np.full(m, 9, np.int32))


def _no_envelopes(n):
    """The envelopes-in arguments of `tiny_subtrees` when no cut came before it."""
    return np.zeros(n, np.int32), np.zeros(n, np.int8), np.zeros(0, np.int16), np.zeros(0, np.int16), np.zeros(0, np.int8)


def _frontier(pairs):
    pairs = set(pairs)
    return sorted(p for p in pairs if not any(q != p and q[0] >= p[0] and q[1] >= p[1] for q in pairs))


def _subtree(parent, r):
    """r and its descendants (brute force: ancestors walked up from every call)."""
    out = []
    for c in range(len(parent)):
        x = c
        while x >= 0 and x != r:
            x = parent[x]
        if x == r:
            out.append(c)
    return out


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(1, 8), st.sampled_from([0, 7, 10 ** 6]))
def test_tiny_subtrees_match_their_definition(seed, k_max, max_work):
    """Each summarised subtree: a fixed root whose subtree is all fixed, its frontier the
    Pareto frontier of the documented (a, b) counts, its calls dropped; every other call kept; no subtree tried once
    ``max_work`` is spent (0: none)."""
    rng = np.random.default_rng(seed)
    n, n_lanes, parent, lane, name_px, width, infra, passing, wide = _preorder_forest(rng)
    _, local_end = depth_and_end_from_parent(parent)
    keep, env_first, env_count, pool_a, pool_b, pool_u = tiny_subtrees(
        parent, local_end, name_px, width, infra, passing, wide, NAMED, k_max, max_work, *_no_envelopes(n))
    fixed = (name_px < NAMED) & (width < NAMED) & ~wide
    f = infra | passing
    dropped = np.zeros(n, bool)
    for r in np.flatnonzero(env_count > 0):
        sub = _subtree(parent, r)
        assert keep[r] and fixed[sub].all() and (r == 0 or parent[r] < 0 or keep[parent[r]])
        a, b = {r: 0}, {r: 0}
        for c in sub[1:]:
            p = parent[c]
            a[c] = a[p] + (not f[c])
            b[c] = b[p] + (f[c] and not f[p])
        got = sorted(zip(pool_a[env_first[r]: env_first[r] + env_count[r]].tolist(),
                         pool_b[env_first[r]: env_first[r] + env_count[r]].tolist()))
        assert got == _frontier((a[c], b[c]) for c in sub) and len(got) <= k_max
        dropped[sub[1:]] = True
    assert np.array_equal(keep, ~dropped)
    if max_work == 0:
        assert keep.all()


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(1, 8))
def test_reduced_tops_are_the_tops_of_the_whole_placement(seed, k_max):
    """The tops of the reduced tree (`tiny_subtrees`, `kept_tree`, `reduced_tops`) against
    the last output of `squeezed_levels` over every call, for squeezes whose thresholds are
    at least ``NAMED`` (as the squeeze's always are), with dirty work arrays."""
    rng = np.random.default_rng(seed)
    n, n_lanes, parent, lane, name_px, width, infra, passing, wide = _preorder_forest(rng)
    _, local_end = depth_and_end_from_parent(parent)
    keep, env_first, env_count, pool_a, pool_b, pool_u = tiny_subtrees(
        parent, local_end, name_px, width, infra, passing, wide, NAMED, k_max, 4 * n, *_no_envelopes(n))
    kept, kept_parent = kept_tree(keep, parent)
    assert np.array_equal(kept, np.flatnonzero(keep))
    new_of = np.cumsum(keep) - 1
    assert np.array_equal(kept_parent, np.where(parent[kept] >= 0, new_of[np.maximum(parent[kept], 0)], -1))
    m = kept.size
    work = _dirty_work(m)
    for _ in range(3):
        unfold = NAMED + np.where(rng.random(n_lanes) < 0.3, np.inf, rng.uniform(0, 300, n_lanes))
        thr = NAMED + rng.uniform(0, 200, n_lanes)
        heights = rng.uniform(0.01, 1.0, (n_lanes, 5))
        want = squeezed_levels(parent, lane, name_px, width, infra, passing, wide, unfold, thr, heights)[-1]
        got = reduced_tops(kept_parent, lane[kept], name_px[kept], width[kept], infra[kept], passing[kept],
                           wide[kept], env_first[kept], env_count[kept], pool_a, pool_b, pool_u, unfold,
                           thr, heights, *work)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


RHO = 8.0  # the cut's width in these forests' pixels (below NAMED: dropped calls are narrow, never wide)


def _pareto_split(triples):
    """The envelope of a stub by its definition: per u, the Pareto frontier of (a, b), less
    the u = 0 pairs a u = 1 pair dominates."""
    triples = list(triples)
    one = _frontier((a, b) for a, b, u in triples if u == 1)
    zero = [(a, b) for a, b in _frontier((a, b) for a, b, u in triples if u == 0)
            if not any(a1 >= a and b1 >= b for a1, b1 in one)]
    return sorted([(a, b, 0) for a, b in zero] + [(a, b, 1) for a, b in one])


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10 ** 6), st.sampled_from([1, 3, 24]), st.sampled_from([0, 9, 10 ** 6]))
def test_subpixel_stubs_match_their_definition(seed, k_max, max_work):
    """`subpixel_stubs` against its docstring, brute force: each stub is a kept call whose
    subtree is all narrower than the cut and has more than itself, its envelope the split
    frontier of the (a, b, u) of its subtree's paths, every call under it dropped and counted;
    every other call kept; nothing dropped once ``max_work`` is spent (0: nothing at all)."""
    rng = np.random.default_rng(seed)
    n, n_lanes, parent, lane, name_px, width, infra, passing, wide = _preorder_forest(rng)
    _, local_end = depth_and_end_from_parent(parent)
    f = infra | passing
    keep, first, count, pool_a, pool_b, pool_u, n_under = subpixel_stubs(
        parent, local_end, width, f, RHO, k_max, max_work)
    dropped = np.zeros(n, bool)
    for r in np.flatnonzero(count > 0):
        sub = _subtree(parent, r)
        assert keep[r] and len(sub) > 1 and (width[sub] < RHO).all()
        assert parent[r] < 0 or keep[parent[r]]
        a, b, u = {r: 0}, {r: 0}, {r: 0}
        for c in sub[1:]:
            p = parent[c]
            if p == r:
                u[c], a[c], b[c] = int(not f[c]), 0, int(f[c] and not f[r])
            else:
                u[c], a[c], b[c] = u[p], a[p] + int(not f[c]), b[p] + int(f[c] and not f[p])
        got = sorted(zip(pool_a[first[r]: first[r] + count[r]].tolist(), pool_b[first[r]: first[r] + count[r]].tolist(),
                         pool_u[first[r]: first[r] + count[r]].tolist()))
        assert got == _pareto_split((a[c], b[c], u[c]) for c in sub) and len(got) <= k_max
        assert n_under[r] == len(sub) - 1
        dropped[sub[1:]] = True
    assert np.array_equal(keep, ~dropped)
    assert (n_under[count == 0] == 0).all()
    if max_work == 0:
        assert keep.all()


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(1, 8))
def test_a_cut_tree_places_and_tops_as_the_whole_tree(seed, k_max):
    """The ring's cut is exact: after `subpixel_stubs`, the kept calls' places
    (`squeezed_levels` over the kept tree) are their places in the whole tree, each stub's
    `envelope_tops` is the highest top of its subtree in the whole placement, and the lane
    tops of the squeeze's reduced tree built on the cut tree (`tiny_subtrees` taking the
    envelopes in, `reduced_tops`) are the whole placement's, for squeezes whose thresholds
    are at least ``NAMED``.  Kept calls get wide name widths at random (runs and rows: a
    stub that is not narrow puts its first level under it at the first-narrow height)."""
    rng = np.random.default_rng(seed)
    n, n_lanes, parent, lane, name_px, width, infra, passing, wide = _preorder_forest(rng)
    _, local_end = depth_and_end_from_parent(parent)
    f = infra | passing
    keep, first, count, pool_a, pool_b, pool_u, _ = subpixel_stubs(parent, local_end, width, f, RHO, 24, 4 * n)
    name_px = np.where(keep, name_px * np.where(rng.random(n) < 0.3, 40.0, 1.0), np.minimum(name_px, width))
    kept, kept_parent = kept_tree(keep, parent)
    _, kept_end = depth_and_end_from_parent(kept_parent.astype(np.int32))
    cols = tuple(c[kept] for c in (lane, name_px, width, infra, passing, wide))
    env = (first[kept], count[kept], pool_a, pool_b, pool_u)
    tk, t_first, t_count, t_a, t_b, t_u = tiny_subtrees(kept_parent, kept_end, *cols[1:], NAMED, k_max,
                                                        4 * kept.size, *env)
    t_kept, t_parent = kept_tree(tk, kept_parent)
    work = _dirty_work(t_kept.size)
    for _ in range(3):
        unfold = NAMED + np.where(rng.random(n_lanes) < 0.3, np.inf, rng.uniform(0, 300, n_lanes))
        thr = NAMED + rng.uniform(0, 200, n_lanes)
        heights = rng.uniform(0.01, 1.0, (n_lanes, 5))
        whole = squeezed_levels(parent, lane, name_px, width, infra, passing, wide, unfold, thr, heights)
        part = squeezed_levels(kept_parent, *cols, unfold, thr, heights)
        np.testing.assert_allclose(part[0], whole[0][kept], atol=1e-12)  # bottoms
        np.testing.assert_allclose(part[1], whole[1][kept], atol=1e-12)  # heights
        reach = envelope_tops(part[0] + part[1], cols[0], cols[1], thr, heights, *env)
        tops = whole[0] + whole[1]
        for j in np.flatnonzero(count[kept] > 0):
            sub = _subtree(parent, int(kept[j]))
            assert abs(reach[j] - tops[sub].max()) < 1e-9, (j, reach[j], tops[sub].max())
        got = reduced_tops(t_parent, *(c[t_kept] for c in cols), t_first[t_kept], t_count[t_kept], t_a, t_b, t_u,
                           unfold, thr, heights, *work)
        np.testing.assert_allclose(got, whole[-1], rtol=1e-12, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10 ** 6))
def test_name_widths_match_their_formula(seed):
    """`name_widths` against the formula written per call (its docstring)."""
    rng = np.random.default_rng(seed)
    n, n_lanes, parent, lane, name_px, width, infra, passing, wide = _preorder_forest(rng, 200)
    func = rng.integers(0, 4, n).astype(np.int32)
    start = np.sort(rng.uniform(0, 1000, n))
    end = start + rng.uniform(0, 50, n)
    upx = float(rng.uniform(0.1, 3.0))
    head, run_end, _ = sibling_runs(func, start, end, parent, lane, np.full(n_lanes, upx))
    _, local_end = depth_and_end_from_parent(parent)
    nch, r0, r1, dom_f, dom_t, _, total = child_rows(func, start, end, local_end, 4)
    got_name, got_row = name_widths(parent, func, start, width, head, run_end, nch, r0, r1, dom_f, dom_t, total,
                                    upx, 0.5, NAMED)
    for i in range(n):
        ok = lambda k: nch[k] >= 2 and dom_t[k] >= 0.5 * max(total[k], 1e-300)  # noqa: E731
        row_px = lambda k: (r1[k] - r0[k]) / upx  # noqa: E731
        w = max(width[i], (run_end[head[i]] - start[head[i]]) / upx)
        p = parent[i]
        if p >= 0 and ok(p) and func[i] == dom_f[p]:
            w = max(w, row_px(p))
        assert got_name[i] == w
        assert got_row[i] == (ok(i) and row_px(i) >= NAMED)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10 ** 6))
def test_gather_drawn_and_dense_ranks_match_numpy(seed):
    """`gather_drawn` against numpy's gathers one by one, and `dense_ranks_in_range` against
    `np.unique`'s inverse (values at exact halves round to even, as numpy's)."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 300)), int(rng.integers(1, 100))
    sel_idx = np.sort(rng.choice(10 * n, n, replace=False)).astype(np.int64)
    start, end = rng.uniform(0, 100, 10 * n), rng.uniform(100, 200, 10 * n)
    func = rng.integers(0, 9, 10 * n).astype(np.int32)
    orig = rng.permutation(20 * n)[: 10 * n].astype(np.int64) if rng.random() < 0.5 else np.zeros(0, np.int64)
    lane, slot = rng.integers(0, 3, n).astype(np.int32), rng.integers(0, 7, n).astype(np.int16)
    folded, run_levels = rng.random(n) < 0.5, rng.integers(0, 4, n).astype(np.int32)
    bottom = np.round(rng.uniform(0, 30, n) * 8) / 8 + rng.choice([0.0, 0.5 / 4096], n)
    height, ext = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    drawn = np.sort(rng.choice(n, min(m, n), replace=False))
    t0, t1 = 30.0, 170.0
    got = gather_drawn(drawn, sel_idx, orig, lane, start, end, func, slot, folded, run_levels, bottom, height, ext,
                       t0, t1, 4096.0)
    i = sel_idx[drawn]
    want = (i, (orig[i] if orig.size else i).astype(np.int32), lane[drawn], np.maximum(start[i], t0),
            np.minimum(end[i], t1), func[i], slot[drawn], folded[drawn], run_levels[drawn], bottom[drawn],
            height[drawn], ext[drawn], np.round(bottom[drawn] * 4096.0).astype(np.int64))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w)
    key = got[-1]
    assert np.array_equal(dense_ranks_in_range(key, int(key.min()), int(key.max())),
                          np.unique(key, return_inverse=True)[1])


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10 ** 6))
def test_clipped_widths_match_numpy(seed):
    """`clipped_widths` against numpy's gathers and clips."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(0, 200))
    start = rng.uniform(0, 100, 300)
    end = start + rng.uniform(0, 50, 300)
    idx = rng.integers(0, 300, m).astype(np.int64)
    lane = rng.integers(0, 3, m).astype(np.int32)
    px = rng.uniform(0.1, 5.0, 3)
    want = (np.minimum(end[idx], 90.0) - np.maximum(start[idx], 20.0)) * px[lane]
    np.testing.assert_allclose(clipped_widths(idx, lane, start, end, 20.0, 90.0, px), want, rtol=1e-15)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10 ** 6))
def test_range_by_key_matches_numpy_at(seed):
    """`range_by_key` against numpy's ``minimum.at`` / ``maximum.at``."""
    from tracevis3d.kernels.drawn import range_by_key

    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(0, 300)), int(rng.integers(1, 20))
    key, value = rng.integers(0, k, n).astype(np.int64), rng.integers(0, 50, n).astype(np.int64)
    lo, hi = np.full(k, np.iinfo(np.int64).max, np.int64), np.full(k, -1, np.int64)
    np.minimum.at(lo, key, value)
    np.maximum.at(hi, key, value)
    got = range_by_key(key, value, k)
    assert np.array_equal(got[0], lo) and np.array_equal(got[1], hi)
