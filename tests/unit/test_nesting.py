"""`io.nesting.sort_and_nest` (its threads dealt to two workers, `kernels.tree.sort_and_nest_threads`)
and `kernels.tree.nest_sorted_intervals` against brute-force twins: a 4-key ``np.lexsort`` for the
order, and the stack of open calls walked in plain Python, one thread at a time, for the nesting
and the overlap repair."""
import numpy as np
import pytest

from tracevis3d.io import nesting
from tracevis3d.kernels.tree import nest_sorted_intervals


def _twin_order(thread, start, end, key):
    return np.lexsort((np.arange(thread.size), key, -end, start, thread))


def _twin_nest(thread, start, end):
    """Calls sorted by (thread, start asc, end desc): walk each thread's calls keeping the calls
    still open; a call ending at or before this one's start is closed (touching calls are
    siblings); the innermost open call is the parent, and a child is cut at its parent's end."""
    n = start.size
    parent = np.full(n, -1, np.int64)
    depth = np.zeros(n, np.int64)
    end_index = np.zeros(n, np.int64)
    new_end = end.astype(float)
    clipped = np.zeros(n, bool)
    open_calls: list = []
    for i in range(n + 1):
        if i == n or (i > 0 and thread[i] != thread[i - 1]):
            for j in open_calls:
                end_index[j] = i
            open_calls = []
        if i == n:
            break
        while open_calls and new_end[open_calls[-1]] <= start[i]:
            end_index[open_calls.pop()] = i
        if open_calls:
            p = open_calls[-1]
            parent[i], depth[i] = p, len(open_calls)
            if new_end[i] > new_end[p]:
                new_end[i], clipped[i] = new_end[p], True
        open_calls.append(i)
    return parent, depth, end_index, new_end, clipped


def _calls(rng, n, n_threads, grid):
    """Calls of random lengths on a coarse grid (equal starts, equal ends, zero lengths, calls
    that stick out of others), in shuffled order, on threads of uneven sizes."""
    weights = rng.uniform(0.1, 1.0, n_threads)
    thread = rng.choice(n_threads, n, p=weights / weights.sum()).astype(np.int32)
    start = grid * np.floor(rng.uniform(0, n / 4, n) / grid)
    end = start + grid * np.floor(rng.exponential(8.0, n) / grid)
    return thread, start, end, rng.permutation(n).astype(np.int64)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("parallel", [False, True])
def test_sort_and_nest_matches_its_twins(seed, parallel, monkeypatch):
    monkeypatch.setattr(nesting, "PARALLEL_NEST_CALLS", 0)  # small inputs through the two workers too
    rng = np.random.default_rng(seed)
    n_threads = int(rng.integers(1, 7))
    thread, start, end, key = _calls(rng, int(rng.integers(0, 3000)), n_threads, float(rng.choice([1.0, 0.25])))
    row = rng.integers(0, 1 << 40, thread.size)
    order, s_thread, s_start, new_end, s_row, parent, depth, end_index, clipped = nesting.sort_and_nest(
        thread, start, end, key, row, n_threads, parallel=parallel)
    want = _twin_order(thread, start, end, key)
    np.testing.assert_array_equal(order, want)
    np.testing.assert_array_equal(s_thread, thread[want])
    np.testing.assert_array_equal(s_start, start[want])
    np.testing.assert_array_equal(s_row, row[want])
    for got, twin in zip((parent, depth, end_index, new_end, clipped), _twin_nest(s_thread, s_start, end[want])):
        np.testing.assert_array_equal(got, twin)
    assert s_thread.dtype == thread.dtype and parent.dtype == depth.dtype == end_index.dtype == np.int32


@pytest.mark.parametrize("seed", range(4))
def test_nest_sorted_intervals_matches_its_twin(seed):
    rng = np.random.default_rng(100 + seed)
    thread, start, end, key = _calls(rng, 2000, 4, 1.0)
    o = _twin_order(thread, start, end, key)
    got = nest_sorted_intervals(thread[o], start[o], end[o])
    for g, twin in zip(got, _twin_nest(thread[o], start[o], end[o])):
        np.testing.assert_array_equal(g, twin)


def test_two_workers_give_the_numbers_of_one_on_a_large_input():
    rng = np.random.default_rng(7)
    thread, start, end, key = _calls(rng, 300_000, 5, 1.0)
    row = np.arange(thread.size, dtype=np.int64)
    one = nesting.sort_and_nest(thread, start, end, key, row, 5, parallel=False)
    two = nesting.sort_and_nest(thread, start, end, key, row, 5, parallel=True)
    assert one[-1].any() and not one[-1].all() and one[6].max() > 3  # (calls cut, and nested deep)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)


def test_threads_dealt_largest_first_to_the_lighter_worker():
    dealt = nesting.deal_threads(np.array([439, 261, 268, 79, 0]))
    assert [d.tolist() for d in dealt] == [[0, 3, 4], [1, 2]]
    assert [d.tolist() for d in nesting.deal_threads(np.array([5]))] == [[0], []]
    assert [d.tolist() for d in nesting.deal_threads(np.zeros(0, np.int64))] == [[], []]


def test_many_threads_dealt_evenly_without_a_loop_over_each():
    rng = np.random.default_rng(3)
    sizes = np.concatenate([[2_000_000], rng.integers(0, 50, 200_000)])  # the rest: ~4.9M calls
    a, b = nesting.deal_threads(sizes)
    assert np.array_equal(np.sort(np.concatenate([a, b])), np.arange(sizes.size))  # each thread once
    assert abs(int(sizes[a].sum()) - int(sizes[b].sum())) <= 50
    small = rng.integers(1, 1000, 5000)
    a, b = nesting.deal_threads(small)
    assert abs(int(small[a].sum()) - int(small[b].sum())) <= small.max()
