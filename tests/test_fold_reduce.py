"""The squeeze's reduced tree (`kernels.fold_reduce`), the fold's name widths
(`kernels.runs.name_widths`) and the drawn calls' gather (`kernels.drawn`) against
brute-force twins (bpy-free)."""
import numpy as np
from hypothesis import given, settings, strategies as st

from tracevis3d.kernels.drawn import dense_ranks_in_range, gather_drawn
from tracevis3d.kernels.fold import squeezed_levels
from tracevis3d.kernels.fold_reduce import kept_tree, reduced_tops, tiny_subtrees
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
    keep, env_first, env_count, pool_a, pool_b = tiny_subtrees(
        parent, local_end, name_px, width, infra, passing, wide, NAMED, k_max, max_work)
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
    keep, env_first, env_count, pool_a, pool_b = tiny_subtrees(
        parent, local_end, name_px, width, infra, passing, wide, NAMED, k_max, 4 * n)
    kept, kept_parent = kept_tree(keep, parent)
    assert np.array_equal(kept, np.flatnonzero(keep))
    new_of = np.cumsum(keep) - 1
    assert np.array_equal(kept_parent, np.where(parent[kept] >= 0, new_of[np.maximum(parent[kept], 0)], -1))
    m = kept.size
    work = (np.ones(m, np.bool_), np.full(m, 2, np.int8), np.full(m, 7.0), np.full(m, 5, np.int32),
            np.full(m, 3.0), np.full(m, 2.0), np.ones(m, np.bool_), np.full(m, 9, np.int32))
    for _ in range(3):
        unfold = NAMED + np.where(rng.random(n_lanes) < 0.3, np.inf, rng.uniform(0, 300, n_lanes))
        thr = NAMED + rng.uniform(0, 200, n_lanes)
        heights = rng.uniform(0.01, 1.0, (n_lanes, 5))
        want = squeezed_levels(parent, lane, name_px, width, infra, passing, wide, unfold, thr, heights)[-1]
        got = reduced_tops(kept_parent, lane[kept], name_px[kept], width[kept], infra[kept], passing[kept],
                           wide[kept], env_first[kept], env_count[kept], pool_a, pool_b, unfold,
                           thr, heights, *work)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


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
