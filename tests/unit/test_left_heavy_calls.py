"""`kernels.left_heavy.left_heavy_calls` (the merged builder's one-walk Left Heavy calls) against
its twin: tests/support/left_heavy_twin.py's samples expanded by `kernels.stacks.expand_into`
(and `drop_instant_calls`), the way io/stacks.py built them before; on random weighted forests
with ties, zero weights, weights too small to move x, several threads in one set of arrays."""
from __future__ import annotations

import numpy as np
from left_heavy_twin import left_heavy_order

from tracevis3d.io.stacks import _expand_all, _left_heavy_all
from tracevis3d.kernels import stacks as ks


def _forest(rng, n):
    parent = np.full(n, -1, np.int64)
    for i in range(1, n):
        parent[i] = rng.integers(-1, i) if rng.random() < 0.9 else -1
    depth = np.zeros(n, np.int64)
    for i in range(n):
        depth[i] = depth[parent[i]] + 1 if parent[i] >= 0 else 0
    frame = rng.integers(0, max(2, n // 3), n)
    kind = rng.integers(0, 4)
    if kind == 0:
        w = rng.integers(0, 4, n).astype(np.float64)  # ties and zeros
    elif kind == 1:
        w = rng.choice([0.0, 1e-300, 1.0, 1e20], n)  # weights that do not move x
    else:
        w = rng.random(n) * (rng.random(n) < 0.6)
    return parent, depth, frame, w


def test_one_walk_equals_samples_expanded():
    rng = np.random.default_rng(67)
    for trial in range(300):
        items, known, old_items = [], [], []
        for _ in range(int(rng.integers(1, 4))):
            parent, depth, frame, w = _forest(rng, int(rng.integers(1, 60)))
            total = ks.subtree_totals(parent, depth, w)
            items.append((parent, depth, frame, total, w))
            known.append(int(np.count_nonzero(total > 0)))
            node, pos = left_heavy_order(parent, total, w, frame)
            old_items.append((pos, node, parent, depth, frame))
        got = _left_heavy_all(items, known, 10 ** 6, "too many")
        want = _expand_all(old_items, 10 ** 6, "too many", known)
        for a, b in zip(got, want):
            assert a.dtype == b.dtype and np.array_equal(a, b), trial
