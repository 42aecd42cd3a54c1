"""`kernels.drawn.nearest_drawn_rows` (through `layout.flow_arcs.drawn_ancestor`) against its
twin, the level-by-level walk, on random forests with random drawn sets; and a flow through
every level of a deep tower answered in one pass."""
import numpy as np
import pytest
from tree_factory import random_trace

from tracevis3d.layout.flow_arcs import drawn_ancestor, drawn_ancestor_by_levels


@pytest.mark.parametrize("seed", range(6))
def test_equals_the_level_by_level_walk(seed):
    rng = np.random.default_rng(seed)
    tr = random_trace(int(rng.integers(5, 60)), fanout=int(rng.integers(1, 4)), max_depth=int(rng.integers(3, 10)),
                      seed=seed)
    n = len(tr)
    drawn = np.flatnonzero(rng.random(n) < rng.choice([0.02, 0.3, 0.9]))
    row = np.full(n, -1, np.int64)
    row[drawn] = np.arange(drawn.size)
    calls = rng.integers(0, n, int(rng.integers(1, 2 * n)))
    assert np.array_equal(drawn_ancestor(tr, row, calls), drawn_ancestor_by_levels(tr, row, calls))
    assert np.array_equal(row[drawn], np.arange(drawn.size))  # the caller's rows are left as they were


def test_a_deep_tower_with_a_query_at_every_level():
    n = 100_000
    parent = np.arange(-1, n - 1, dtype=np.int32)  # a chain: call k's parent is k - 1

    class Chain:
        pass

    tr = Chain()
    tr.parent = parent
    row = np.full(n, -1, np.int64)
    row[:3] = np.arange(3)  # the three outermost drawn
    got = drawn_ancestor(tr, row, np.arange(n - 1, -1, -1))
    assert got[0] == 2 and got[-1] == 0 and (got[: n - 3] == 2).all()
