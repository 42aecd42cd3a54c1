"""speedscope's Left Heavy view of a weighted stack forest as a sequence of samples, in plain
Python: the twin that `kernels.left_heavy.left_heavy_calls` (the one-walk builder) is held to,
through `kernels.stacks.expand_into` (tests/unit/test_left_heavy_calls.py), and that
`kernels.stacks.count_calls` counts (tests/unit/test_collapsed_speed.py)."""
from __future__ import annotations

import numpy as np


def left_heavy_order(c_parent, total, self_weight, tie):
    """Every node with ``total > 0`` drawn once, as wide as its total; its children side by side
    from its left edge, the heaviest first (ties by ``tie`` ascending, then by node id), its own
    (self) weight last, at its right end; roots likewise.  Returned as the samples that
    `expand_into` turns into exactly those calls: (node, position) per sample, position = Σ
    weights before it, a sample per node whose self weight is > 0 in depth-first order (each
    node's children's samples before its own), and a closing empty sample (node -1) at the end."""
    n = len(c_parent)
    kids = [[] for _ in range(n + 1)]          # the roots under a virtual node n
    for i in range(n):
        kids[int(c_parent[i]) if c_parent[i] >= 0 else n].append(i)
    for group in kids:
        group.sort(key=lambda c: (-total[c], tie[c]))   # stable: node id among equals
    nodes, positions, pos = [], [], 0.0
    stack = [(n, iter(kids[n]))]
    while stack:
        v, it = stack[-1]
        c = next((c for c in it if total[c] > 0.0), None)
        if c is not None:
            stack.append((c, iter(kids[c])))
            continue
        stack.pop()
        if v < n and self_weight[v] > 0.0:
            nodes.append(v)
            positions.append(pos)
            pos += self_weight[v]
    nodes.append(-1)
    positions.append(pos)
    return np.array(nodes, np.int64), np.array(positions, np.float64)
