"""`kernels.box_trim`: widened boxes trimmed off their neighbours, against a brute-force twin
that finds the overlapping pairs by comparing every pair."""
import numpy as np
import pytest

from tracevis3d.kernels.box_trim import trim_boxes


def _overlap(x0, x1, z0, z1, i, j):
    return x0[i] < x1[j] and x0[j] < x1[i] and min(z1[i], z1[j]) > max(z0[i], z0[j])


def _twin(lane, x0, x1, z0, z1, movable, gap):
    """The module docstring's semantics with the pairs found pair by pair (O(n²))."""
    order = sorted(range(len(lane)), key=lambda i: (lane[i], x0[i]))
    pairs = []
    for k, i in enumerate(order):
        before = [j for j in order[:k] if lane[j] == lane[i] and _overlap(x0, x1, z0, z1, i, j)]
        if movable[i]:
            pairs += [(j, i) for j in before if not movable[j]]
        pairs += [(j, i) for j in before if movable[j]]
    a0, a1 = list(map(float, x0)), list(map(float, x1))
    for i, j in pairs:
        if movable[i] and movable[j]:
            continue
        m, f = (i, j) if movable[i] else (j, i)
        if not (a0[m] < a1[f] and a0[f] < a1[m]):
            continue
        left, right = a0[f] - a0[m], a1[m] - a1[f]
        if left <= 0 and right <= 0:
            a1[m] = a0[m]
        elif left >= right:
            a1[m] = max(a0[m], a0[f] - gap)
        else:
            a0[m] = min(a1[m], a1[f] + gap)
    for i, j in pairs:
        if not (movable[i] and movable[j]):
            continue
        if not (a0[i] < a1[i] and a0[j] < a1[j] and a0[i] < a1[j] and a0[j] < a1[i]):
            continue
        if a1[j] > a1[i]:
            a0[j] = min(a1[j], a1[i] + gap)
        else:
            a1[j] = a0[j]
    return np.array(a0), np.array(a1)


def _boxes(rng, n):
    lane = rng.integers(0, 3, n)
    level = rng.integers(0, 6, n)
    x0 = np.round(rng.uniform(0, 20, n), 1)  # rounded: equal starts and touching edges happen
    x1 = x0 + np.round(rng.uniform(0.1, 4, n), 1)
    z0 = level + np.where(rng.random(n) < 0.3, 0.5, 0.0)  # some levels shifted: heights overlap
    z1 = z0 + 0.88
    movable = rng.random(n) < 0.5
    return lane, x0, x1, z0, z1, movable


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("gap", [0.0, 1e-3])
def test_trim_equals_the_pairwise_twin_and_leaves_no_overlap(seed, gap):
    rng = np.random.default_rng(seed)
    lane, x0, x1, z0, z1, movable = _boxes(rng, int(rng.integers(1, 60)))
    a0, a1 = trim_boxes(lane, x0, x1, z0, z1, movable, gap)
    t0, t1 = _twin(lane, x0, x1, z0, z1, movable, gap)
    assert np.array_equal(a0, t0) and np.array_equal(a1, t1)
    assert np.array_equal(a0[~movable], x0[~movable]) and np.array_equal(a1[~movable], x1[~movable])
    assert np.all(a0 >= x0) and np.all(a1 <= x1) and np.all(a1 >= a0)  # only shrunk
    n = len(lane)
    for i in range(n):
        for j in range(i + 1, n):
            if lane[i] == lane[j] and (movable[i] or movable[j]) and a1[i] > a0[i] and a1[j] > a0[j]:
                assert not _overlap(a0, a1, z0, z1, i, j), (i, j)


def test_cluster_keeps_its_larger_side_and_the_earlier_cluster_its_extent():
    # a call [0, 4) and a cluster [3, 5) at the same height: the cluster keeps [4, 5)
    a0, a1 = trim_boxes([0, 0], [0.0, 3.0], [4.0, 5.0], [0, 0], [1, 1], [False, True])
    assert (a0[1], a1[1]) == (4.0, 5.0)
    # two clusters [0, 2) and [1, 3): the second starts at 2; one inside the first is emptied
    a0, a1 = trim_boxes([0, 0], [0.0, 1.0], [2.0, 3.0], [0, 0], [1, 1], [True, True])
    assert list(a1) == [2.0, 3.0] and list(a0) == [0.0, 2.0]
    a0, a1 = trim_boxes([0, 0], [0.0, 0.5], [2.0, 1.5], [0, 0], [1, 1], [True, True])
    assert a0[1] == a1[1]
    # other heights, other lanes: untouched
    a0, a1 = trim_boxes([0, 0, 1], [0.0, 1.0, 1.0], [2.0, 3.0, 3.0], [0, 1, 0], [1, 2, 1], [True, True, True])
    assert list(a0) == [0.0, 1.0, 1.0] and list(a1) == [2.0, 3.0, 3.0]
    # a cluster the call covers is emptied
    a0, a1 = trim_boxes([0, 0], [0.0, 1.0], [4.0, 2.0], [0, 0], [1, 1], [False, True])
    assert a0[1] == a1[1]


@pytest.mark.parametrize("seed", range(3))
def test_many_boxes_past_the_sweeps_compaction(seed):
    rng = np.random.default_rng(100 + seed)
    lane, x0, x1, z0, z1, movable = _boxes(rng, 200)
    lane[:] = 0
    x1 = x0 + np.round(rng.uniform(0.1, 30, 200), 1)  # long boxes: more than 64 active at once
    a0, a1 = trim_boxes(lane, x0, x1, z0, z1, movable, 0.0)
    t0, t1 = _twin(lane, x0, x1, z0, z1, movable, 0.0)
    assert np.array_equal(a0, t0) and np.array_equal(a1, t1)
