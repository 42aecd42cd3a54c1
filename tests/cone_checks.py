"""Geometric invariants of a cone-tree layout (shared by the cone tests)."""
import numpy as np


def subtree_lists(parent):
    n = parent.size
    kids = [[] for _ in range(n)]
    for k in range(1, n):
        kids[parent[k]].append(k)
    return kids


def check_cone(parent, pos, turn, foot, off, base, level_h, tol=1e-6):
    """Every child on its parent's base circle one level down; sibling footprints disjoint;
    every node of a subtree inside its root's footprint disc (so sibling cones cannot collide).
    Returns the number of sibling pairs checked."""
    n = parent.size
    kids = subtree_lists(parent)
    centre = pos[:, :2] + off[:, None] * np.stack([np.cos(turn), np.sin(turn)], 1)
    pairs = 0
    for k in range(n):
        ks = kids[k]
        for c in ks:
            d = np.hypot(*(pos[c, :2] - pos[k, :2]))
            assert abs(d - base[k]) <= tol * max(1.0, base[k]), (k, c, d, base[k])
            assert abs(pos[k, 2] - pos[c, 2] - level_h) <= tol * max(1.0, level_h)
        for i, a in enumerate(ks):
            for b in ks[i + 1:]:
                gap = np.hypot(*(centre[a] - centre[b])) - foot[a] - foot[b]
                assert gap >= -tol * max(1.0, foot[a] + foot[b]), (k, a, b, gap)
                pairs += 1
    # every node inside the footprint of each ancestor
    for c in range(1, n):
        a = c
        while a >= 0:
            d = np.hypot(*(pos[c, :2] - centre[a]))
            assert d <= foot[a] + tol * max(1.0, foot[a]), (c, a, d, foot[a])
            a = parent[a] if a > 0 else -1
    return pairs
