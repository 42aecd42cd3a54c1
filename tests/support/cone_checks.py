"""Geometric invariants of a cone-tree layout (shared by the cone tests)."""
import numpy as np


def subtree_lists(parent):
    n = parent.size
    kids = [[] for _ in range(n)]
    for k in range(1, n):
        kids[parent[k]].append(k)
    return kids


def check_cone(parent, pos, turn, size, foot, off, base, bands, level_h, gap, tol=1e-6):
    """Every child on its parent's base circle one level down; sibling subtrees' bands
    (`kernels.cone.cone_footprints`: the discs of their levels) apart at every band both
    reach; every node's sphere inside the band of each ancestor at its level, and inside the
    ancestor's footprint disc; by brute force, no two spheres of one level closer than their
    radii and the gap (so sibling cones cannot collide).  Returns the number of sibling pairs
    checked."""
    band_r, band_x, band_y = (np.asarray(b) for b in bands)
    n, n_bands = band_r.shape
    kids = subtree_lists(parent)
    cos_t, sin_t = np.cos(turn), np.sin(turn)
    centre = pos[:, :2] + off[:, None] * np.stack([cos_t, sin_t], 1)
    band_c = pos[:, None, :2] + np.stack([cos_t[:, None] * band_x - sin_t[:, None] * band_y,
                                          sin_t[:, None] * band_x + cos_t[:, None] * band_y], 2)
    depth = np.zeros(n, np.int64)
    for k in range(1, n):
        depth[k] = depth[parent[k]] + 1
    pairs = 0
    for k in range(n):
        ks = kids[k]
        for c in ks:
            d = np.hypot(*(pos[c, :2] - pos[k, :2]))
            assert abs(d - base[k]) <= tol * max(1.0, base[k]), (k, c, d, base[k])
            assert abs(pos[k, 2] - pos[c, 2] - level_h) <= tol * max(1.0, level_h)
        for i, a in enumerate(ks):
            for b in ks[i + 1:]:
                for t in range(n_bands):
                    if band_r[a, t] < 0 or band_r[b, t] < 0:
                        continue
                    gap_ab = np.hypot(*(band_c[a, t] - band_c[b, t])) - band_r[a, t] - band_r[b, t]
                    assert gap_ab >= -tol * max(1.0, band_r[a, t] + band_r[b, t]), (k, a, b, t, gap_ab)
                pairs += 1
    # every node inside the band at its level and the footprint of each ancestor
    for c in range(1, n):
        a = c
        while a >= 0:
            t = min(depth[c] - depth[a], n_bands - 1)
            d = np.hypot(*(pos[c, :2] - band_c[a, t])) + size[c]
            assert d <= band_r[a, t] + tol * max(1.0, band_r[a, t]), (c, a, t, d, band_r[a, t])
            d = np.hypot(*(pos[c, :2] - centre[a]))
            assert d <= foot[a] + tol * max(1.0, foot[a]), (c, a, d, foot[a])
            a = parent[a] if a > 0 else -1
    # brute force: the spheres of one level are apart
    for lv in np.unique(depth):
        k = np.flatnonzero(depth == lv)
        dist = np.hypot(*(pos[k, None, :2] - pos[None, k, :2]).transpose(2, 0, 1))
        need = (size[k, None] + size[None, k]) * (1.0 + gap)
        np.fill_diagonal(dist, np.inf)
        assert (dist >= need * (1.0 - tol)).all(), lv
    return pairs
