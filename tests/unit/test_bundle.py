"""Control trees, bundled curves and swept tubes (TraceDiff IV-B/C) against brute-force twins."""
import numpy as np
from hypothesis import given, settings, strategies as st

from tracevis3d.kernels.bundle import (attach_leaves, bundled_curves, clamp_to_matched_descendants,
                                       key_tree)
from tracevis3d.kernels.tubes import arclength_parameter, ring_keep, tube_edges, tube_half_widths, tube_mesh
from tree_factory import random_trace


def _children(parent):
    ch = {i: [] for i in range(len(parent))}
    for i, p in enumerate(parent):
        if p >= 0:
            ch[int(p)].append(i)
    return ch


def clamp_brute(parent, x, key, matched):
    ch = _children(parent)
    cx = x.astype(float).copy()

    def visit(i):  # returns (lo, hi) of matched key controls strictly below i
        lo, hi = np.inf, -np.inf
        for c in ch[i]:
            clo, chi = visit(c)
            lo, hi = min(lo, clo), max(hi, chi)
            if key[c] and matched[c]:
                lo, hi = min(lo, cx[c]), max(hi, cx[c])
        if key[i] and lo <= hi:
            cx[i] = min(max(cx[i], lo), hi)
        return lo, hi

    for r in np.flatnonzero(parent < 0):
        visit(int(r))
    return cx


def key_parent_brute(parent, key):
    out = np.full(len(parent), -1)
    for i in range(len(parent)):
        if key[i]:
            a = parent[i]
            while a >= 0 and not key[a]:
                a = parent[a]
            out[i] = a
    return out


def bspline_brute(poly, samples):
    """Uniform cubic B-spline through a polygon (ends already repeated), by the matrix form."""
    M = np.array([[1, 4, 1, 0], [-3, 0, 3, 0], [3, -6, 3, 0], [-1, 3, -3, 1]]) / 6.0
    segs = len(poly) - 3
    out = []
    for s in range(samples):
        u = s / (samples - 1) * segs
        i = min(int(u), segs - 1)
        t = u - i
        T = np.array([1, t, t * t, t ** 3])
        out.append(T @ M @ poly[i:i + 4])
    return np.array(out)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), p_key=st.floats(0.2, 1.0), p_match=st.floats(0.0, 1.0))
def test_control_tree_kernels_match_brute_force(seed, p_key, p_match):
    tr = random_trace(n_roots=3, seed=seed, max_depth=6, threads=1)
    rng = np.random.default_rng(seed)
    x = rng.random(len(tr)) * 100
    key = rng.random(len(tr)) < p_key
    matched = rng.random(len(tr)) < p_match
    cx, lo, hi = clamp_to_matched_descendants(tr.parent, x, key, matched)
    np.testing.assert_allclose(cx, clamp_brute(tr.parent, x, key, matched))
    up, kparent, ptr, idx = key_tree(tr.parent, key)
    assert np.array_equal(kparent, key_parent_brute(tr.parent, key))
    for q in range(len(tr)):  # the CSR lists exactly the key children
        assert sorted(idx[ptr[q]:ptr[q + 1]].tolist()) == sorted(np.flatnonzero(kparent == q).tolist())
    # leaves: greedy descent from the nearest key ancestor, as documented
    cy = tr.depth.astype(float)
    px, py = rng.random(len(tr)) * 100, tr.depth.astype(float) + 0.5
    nodes = rng.permutation(len(tr))[: max(1, len(tr) // 2)]  # positions are per entry, not per node
    got_all = attach_leaves(nodes, up, key, ptr, idx, cx, cy, px[nodes], py[nodes])
    got = dict(zip(nodes.tolist(), got_all.tolist()))
    for n in nodes.tolist():
        if key[n]:
            assert got[n] == n
            continue
        q = up[n]
        if q < 0:
            assert got[n] == -1
            continue
        while True:
            kids = idx[ptr[q]:ptr[q + 1]]
            d = lambda c: (cx[c] - px[n]) ** 2 + (cy[c] - py[n]) ** 2  # noqa: E731
            best = min(kids, key=d, default=None)
            if best is None or d(best) >= d(q):
                break
            q = best
        assert got[n] == q


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), beta=st.floats(0.0, 1.0), samples=st.integers(4, 40))
def test_bundled_curves_match_brute_force(seed, beta, samples):
    rng = np.random.default_rng(seed)
    ta = random_trace(n_roots=2, seed=seed, max_depth=5, threads=1)
    tb = random_trace(n_roots=2, seed=seed + 1, max_depth=5, threads=1)
    key_a = np.ones(len(ta), bool)
    key_b = np.ones(len(tb), bool)
    _, kpa, _, _ = key_tree(ta.parent, key_a)
    _, kpb, _, _ = key_tree(tb.parent, key_b)
    ca_pts = rng.random((len(ta), 3))
    cb_pts = rng.random((len(tb), 3)) - [0, 0, 2]
    m = 12
    ca = rng.integers(0, len(ta), m)
    cb = rng.integers(0, len(tb), m)
    root_a = np.array([c if rng.random() < 0.3 else _root(ta.parent, c) for c in ca])
    root_b = np.array([_root(tb.parent, c) for c in cb])
    ea = rng.random((m, 3))
    eb = rng.random((m, 3)) - [0, 0, 3]
    got = bundled_curves(ca, cb, root_a, root_b, kpa, kpb, ca_pts[:, 0], ca_pts[:, 1], ca_pts[:, 2],
                         cb_pts[:, 0], cb_pts[:, 1], cb_pts[:, 2], ea, eb, beta, samples)
    for k in range(m):
        path_a, q = [], ca[k]
        while q >= 0:
            path_a.append(ca_pts[q])
            if q == root_a[k]:
                break
            q = kpa[q]
        path_b, q = [], cb[k]
        while q >= 0:
            path_b.append(cb_pts[q])
            if q == root_b[k]:
                break
            q = kpb[q]
        poly = np.array([ea[k]] + path_a + path_b[::-1] + [eb[k]])
        chord = poly[0] + np.linspace(0, 1, len(poly))[:, None] * (poly[-1] - poly[0])
        poly = beta * poly + (1 - beta) * chord
        poly = np.vstack([poly[:1], poly[:1], poly, poly[-1:], poly[-1:]])
        np.testing.assert_allclose(got[k], bspline_brute(poly, samples), atol=1e-9)
        np.testing.assert_allclose(got[k, 0], ea[k], atol=1e-12)
        np.testing.assert_allclose(got[k, -1], eb[k], atol=1e-12)
    # β = 0 is the straight chord between the ends
    flat = bundled_curves(ca, cb, root_a, root_b, kpa, kpb, ca_pts[:, 0], ca_pts[:, 1], ca_pts[:, 2],
                          cb_pts[:, 0], cb_pts[:, 1], cb_pts[:, 2], ea, eb, 0.0, samples)
    for k in range(m):
        d = eb[k] - ea[k]
        rel = (flat[k] - ea[k]) @ d / (d @ d)
        np.testing.assert_allclose(flat[k], ea[k] + rel[:, None] * d, atol=1e-9)


def _root(parent, c):
    while parent[c] >= 0:
        c = parent[c]
    return c


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), lam=st.floats(0.05, 1.0), s=st.integers(3, 60))
def test_tube_widths_blend_between_the_ends_without_twisting(seed, lam, s):
    rng = np.random.default_rng(seed)
    m = 5
    curves = np.cumsum(rng.random((m, s, 3)), axis=1)
    wf, wg = rng.random(m) * 5 + 0.01, rng.random(m) * 5 + 0.01
    t = arclength_parameter(curves)
    assert np.allclose(t[:, 0], 0) and np.allclose(t[:, -1], 1) and np.all(np.diff(t, axis=1) >= 0)
    hw = tube_half_widths(t, wf, wg, lam)
    np.testing.assert_allclose(hw[:, 0], wf / 2)  # φ(0) = 1
    np.testing.assert_allclose(hw[:, -1], wg / 2)  # φ(1) = 1
    # twin: the documented formula
    phi = lam + (1 - lam) / 2 * (1 + np.cos(2 * np.pi * t))
    np.testing.assert_allclose(hw, phi * ((1 - t) * wf[:, None] / 2 + t * wg[:, None] / 2))
    # the left border stays left of the right one everywhere (the paper's sign would cross)
    assert np.all(hw > 0)
    # at mid-length the profile is λ
    mid = np.array([[0.5]])
    np.testing.assert_allclose(tube_half_widths(mid, wf[:1], wg[:1], lam)[0, 0], lam * (wf[0] + wg[0]) / 4)


def test_tube_mesh_rings_and_quads():
    curves = np.array([[[0.0, 0.0, 0.0], [1.0, 0.0, -1.0], [1.0, 0.0, -2.0]]])
    hx = np.array([[2.0, 1.0, 0.5]])
    hy = np.array([[1.0, 1.0, 0.25]])
    v, q, tube, rings = tube_mesh(curves, hx, hy, np.array([4], np.int32), np.ones((1, 3), np.bool_))
    assert rings.tolist() == [3]
    assert v.shape == (12, 3) and q.shape == (8, 4) and tube.tolist() == [0] * 8
    np.testing.assert_allclose(v[0], [2.0, 0.0, 0.0])  # θ = 0: +x half-width
    np.testing.assert_allclose(v[1], [0.0, 1.0, 0.0], atol=1e-6)  # θ = 90°: +y depth semi-axis
    np.testing.assert_allclose(v[4:8, 2], -1.0)
    assert q.max() == 11 and q.min() == 0
    # every quad joins two consecutive rings
    ring = q // 4
    assert np.all(ring.max(1) - ring.min(1) == 1)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_tube_edges_match_the_quads(seed):
    """Twin: the edges are exactly the quads' distinct vertex pairs, and each corner's edge
    joins that corner's vertex to the next corner's (what Blender's calc_edges finds);
    tubes of different side counts in one mesh."""
    rng = np.random.default_rng(seed)
    m, s = int(rng.integers(1, 6)), int(rng.integers(2, 7))
    sides = rng.integers(3, 9, m).astype(np.int32)
    curves = rng.random((m, s, 3))
    hx, hy = rng.random((m, s)) + 0.1, rng.random((m, s)) + 0.1
    keep = rng.random((m, s)) < 0.7
    keep[:, 0] = keep[:, -1] = True
    v, q, tube, rings = tube_mesh(curves, hx, hy, sides, keep)
    assert np.array_equal(rings, keep.sum(1))
    assert v.shape[0] == int((rings * sides).sum()) and q.shape[0] == int(((rings - 1) * sides).sum())
    assert np.array_equal(np.bincount(tube, minlength=m), (rings - 1) * sides)
    edges, corner = tube_edges(rings, sides)
    want = {tuple(sorted((int(a), int(b)))) for quad in q for a, b in zip(quad, np.roll(quad, -1))}
    got = [tuple(sorted(e)) for e in edges.tolist()]
    assert len(got) == len(set(got)) and set(got) == want
    for f, quad in enumerate(q):
        for c in range(4):
            e = edges[corner[4 * f + c]]
            assert {int(quad[c]), int(quad[(c + 1) % 4])} == {int(e[0]), int(e[1])}
    # the rings sit at the kept samples: tube k's second ring is centred on its second kept sample
    k = m - 1
    first = int((rings[:k] * sides[:k]).sum())
    kept = np.flatnonzero(keep[k])
    ring1 = v[first + sides[k]: first + 2 * sides[k]]
    np.testing.assert_allclose(ring1[:, 2], curves[k, kept[1], 2], atol=1e-5)


def _ring_keep_twin(c, hx, hy, tol):
    """Brute force: from each kept ring, the farthest next sample whose left-out samples all
    lie within ``tol`` of the straight, linearly tapered tube (the documented bound)."""
    m, s, _ = c.shape
    keep = np.zeros((m, s), bool)
    for k in range(m):
        a, keep[k, 0], keep[k, -1] = 0, True, True
        while a < s - 1:
            best = a + 1
            for b in range(a + 2, s):
                u = (np.arange(a + 1, b) - a) / (b - a)
                line = c[k, a] + u[:, None] * (c[k, b] - c[k, a])
                dev = np.linalg.norm(c[k, a + 1:b] - line, axis=1)
                wx = np.abs(hx[k, a + 1:b] - (hx[k, a] + u * (hx[k, b] - hx[k, a])))
                wy = np.abs(hy[k, a + 1:b] - (hy[k, a] + u * (hy[k, b] - hy[k, a])))
                if np.any(dev + np.maximum(wx, wy) > tol):
                    break
                best = b
            keep[k, best] = True
            a = best
    return keep


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([0.0, 0.01, 0.1, 1.0]))
def test_ring_keep_matches_brute_force_and_bounds_the_error(seed, tol):
    rng = np.random.default_rng(seed)
    m, s = int(rng.integers(1, 5)), int(rng.integers(2, 30))
    t = np.linspace(0, 1, s)
    c = np.stack([np.cumsum(rng.random((m, s)), 1) * 0.1, rng.random((m, s)) * 0.05,
                  np.tile(-t, (m, 1)) * 4], 2)
    hx, hy = rng.random((m, s)) * 0.1 + 0.01, rng.random((m, s)) * 0.1 + 0.01
    keep = ring_keep(c, hx, hy, tol)
    assert np.array_equal(keep, _ring_keep_twin(c, hx, hy, tol) if tol > 0 else np.ones((m, s), bool))
    assert keep[:, 0].all() and keep[:, -1].all()
    # a straight, evenly tapered tube needs its two end rings only
    line = np.stack([np.zeros(s), np.zeros(s), -t * 4], 1)[None]
    w = (0.1 + 0.05 * t)[None]
    assert ring_keep(line, w, w, 1e-9).sum() == 2 or s == 2
