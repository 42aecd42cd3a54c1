"""`kernels.tree.preorder_sort` against its brute-force twin, a 4-key ``np.lexsort``, on calls
in every order its shortcuts look for: pre-order already, post-order (a call written when it
returns, as VizTracer does), shuffled, with ties, zero-length calls, overlaps and equal keys."""
import numpy as np
import pytest

from tracevis3d.kernels.tree import _preorder_from_postorder, _run_shape, preorder_sort


def _twin(thread, start, end, key):
    """The order by (thread, start asc, end desc, key asc), ties kept in input order."""
    return np.lexsort((np.arange(thread.size), key, -end, start, thread))


def _tree_calls(rng, n, n_threads, grid):
    """Calls that nest (each thread a random tree), in pre-order: times on a grid of ``grid`` µs
    (coarse: many equal starts and ends, zero-length calls), or (``grid`` None) no two times
    equal, every child strictly inside its parent."""
    thread, start, end = [], [], []
    for t in range(n_threads):
        m = n // n_threads
        parent = np.full(m, -1)
        depth = np.zeros(m, np.int64)
        stack = []
        for i in range(m):  # a random tree, its calls numbered in pre-order
            while stack and rng.random() < 0.35:
                stack.pop()
            parent[i] = stack[-1] if stack else -1
            depth[i] = len(stack)
            stack.append(i)
        last = np.arange(m)  # the last call of each subtree
        for i in range(m - 1, -1, -1):
            if parent[i] >= 0:
                last[parent[i]] = max(last[parent[i]], last[i])
        if grid is None:
            s = np.arange(m) + rng.uniform(0.0, 0.1, m)
            e = last + 0.9 - 0.001 * depth - rng.uniform(0.0, 0.0005, m)
        else:
            s = grid * np.floor(np.arange(m) * rng.uniform(0.0, 1.0) / 2)
            e = np.maximum(s, grid * np.floor(last * rng.uniform(0.0, 1.0) / 2))
            for i in range(m):  # clipped inside the parent: equal ends, zero lengths
                if parent[i] >= 0:
                    s[i] = max(s[i], s[parent[i]])
                    e[i] = min(max(e[i], s[i]), e[parent[i]])
        thread += [t] * m
        start += list(s)
        end += list(e)
    return np.array(thread, np.int32), np.array(start), np.array(end)


def _post_order(thread, start, end):
    """The calls reordered as a tracer that writes a call when it returns lists them: by end,
    an enclosing call after the calls it holds (pre-order position descending among equal ends)."""
    pre = np.lexsort((-end, start, thread))
    rank = np.empty(pre.size, np.int64)
    rank[pre] = np.arange(pre.size)
    return np.lexsort((-rank, end))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("grid", [1.0, 0.001, None])
def test_preorder_sort_equals_lexsort(seed, grid):
    rng = np.random.default_rng(seed)
    thread, start, end = _tree_calls(rng, 3000, 1 + seed % 4, grid)
    for order in (np.arange(thread.size), _post_order(thread, start, end), rng.permutation(thread.size)):
        t, s, e = thread[order], start[order], end[order]
        for key in (np.arange(t.size, dtype=np.int64), rng.integers(0, 5, t.size).astype(np.int64)):
            got = preorder_sort(t, s, e, key, int(t.max()) + 1)
            np.testing.assert_array_equal(got, _twin(t, s, e, key))


@pytest.mark.parametrize("seed", range(6))
def test_post_order_rebuilt_in_one_pass(seed):
    """Nested calls with distinct times, in post-order: the O(n) rebuild takes them (the path the
    test above must cover), and in pre-order the check alone does."""
    rng = np.random.default_rng(50 + seed)
    thread, start, end = _tree_calls(rng, 4000, 1, None)
    key = np.arange(thread.size, dtype=np.int64)
    assert _run_shape(np.arange(thread.size), 0, thread.size, start, end, key) == 1
    o = _post_order(thread, start, end)
    s, e = start[o], end[o]
    idx = np.arange(s.size)
    assert _run_shape(idx, 0, s.size, s, e, key) == 2
    assert _preorder_from_postorder(idx, 0, s.size, s, e, key)
    np.testing.assert_array_equal(idx, _twin(thread, s, e, key))


@pytest.mark.parametrize("seed", range(6))
def test_preorder_sort_post_order_with_overlaps(seed):
    """Calls that overlap (not nested) in post-order: the O(n) rebuild must fall back to the sort."""
    rng = np.random.default_rng(100 + seed)
    n = 2000
    start = np.sort(rng.integers(0, 500, n)).astype(float)
    end = start + rng.integers(0, 40, n)
    order = np.argsort(end, kind="stable")
    t, s, e = np.zeros(n, np.int32), start[order], end[order]
    key = np.arange(n, dtype=np.int64)
    np.testing.assert_array_equal(preorder_sort(t, s, e, key, 1), _twin(t, s, e, key))


def test_preorder_sort_small_and_empty():
    for n in (0, 1, 2):
        t = np.zeros(n, np.int32)
        s = np.arange(n, dtype=float)[::-1].copy()
        e = s + 1
        k = np.arange(n, dtype=np.int64)
        np.testing.assert_array_equal(preorder_sort(t, s, e, k, 1), _twin(t, s, e, k))
