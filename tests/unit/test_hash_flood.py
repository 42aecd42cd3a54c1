"""Keyed hash-consing tables (issue 20): keys crafted to collide under a known hash (seed 0,
like the old unkeyed splitmix64) flood a linear-probing table -- counted in probes, not
seconds -- and cost what random keys do under the process's random seed; results never
depend on the seed; the cone tree's expand closes its kept set in one pass."""
import numpy as np
import pytest

from tracevis3d.kernels import gamma
from tracevis3d.kernels.cone import calling_context_tree, close_under_parents
from tracevis3d.kernels.dag import subtree_dag
from tracevis3d.kernels.gamma import keyed_start, keyed_step, process_hash_seed, table_probes
from tracevis3d.kernels.gamma_sweep import gamma_classes_grown, shape_classes_grown
from tracevis3d.kernels.patterns import relaxed_classes
from tree_factory import random_trace

M64 = (1 << 64) - 1


def splitmix64_np(x: np.ndarray) -> np.ndarray:
    """Brute-force twin of gamma.splitmix64 in numpy (wrapping uint64 arithmetic)."""
    with np.errstate(over="ignore"):
        z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def test_keyed_hash_twin():
    rng = np.random.default_rng(3)
    xs = rng.integers(0, 1 << 62, 50, dtype=np.int64).astype(np.uint64)
    seed = np.uint64(0xDEADBEEF12345678)
    for x in xs:
        assert keyed_start(x, seed) == splitmix64_np(np.array([x ^ seed]))[0]
        assert keyed_step(x, np.uint64(7)) == splitmix64_np(np.array([x ^ np.uint64(7)]))[0]


def test_process_seed_is_random_and_fixed():
    s = process_hash_seed()
    assert s == process_hash_seed() and isinstance(s, np.uint64)


def crafted_leaf_functions(n: int, tsize: int, known_seed=np.uint64(0), up=None) -> np.ndarray:
    """``n`` function ids whose hash under ``known_seed`` lands in slot 0 of a ``tsize`` table:
    as a key alone (keyed_start(f)) or, with ``up``, as the cone tree's (up, f) key."""
    out = []
    start = 0
    while len(out) < n:
        f = np.arange(start, start + (1 << 22), dtype=np.uint64)
        if up is None:
            h = splitmix64_np(f ^ known_seed)
        else:
            h0 = splitmix64_np(np.array([np.uint64(up) ^ known_seed]))[0]
            h = splitmix64_np(f ^ h0)
        out.extend(f[(h & np.uint64(tsize - 1)) == 0].tolist())
        start += 1 << 22
    return np.array(out[:n], np.int64)


def test_cone_tree_flood_costs_what_random_keys_cost():
    """One root call with N leaf children whose (node, function) keys all hash to one slot
    under seed 0: N²/2 probes there, about N under random seeds; same tree either way."""
    N = 2000
    n = N + 1
    tsize = gamma.table_size(n + 1)
    funcs = crafted_leaf_functions(N, tsize, up=1)  # the root call's node is 1 (after the root pseudo node)
    func = np.concatenate([[0], funcs]).astype(np.int32)
    parent = np.concatenate([[-1], np.zeros(N)]).astype(np.int32)
    thread = np.zeros(n, np.int32)
    dur = np.ones(n)
    known = calling_context_tree(func, parent, thread, dur, np.zeros(0, np.bool_), 1, False, False, np.uint64(0))
    assert known[-1] >= N * (N - 1) // 2  # the flood, measured in probes
    for seed in (process_hash_seed(), np.uint64(12345), np.uint64(M64)):
        got = calling_context_tree(func, parent, thread, dur, np.zeros(0, np.bool_), 1, False, False, seed)
        assert got[-1] <= 3 * n, got[-1]
        for a, b in zip(known[:-1], got[:-1]):
            assert np.array_equal(a, b)


def test_subtree_tables_flood_costs_what_random_keys_cost():
    """The chained keys of dag/patterns/shape/gamma start with keyed_start(func): leaves of
    crafted functions collide under seed 0 only."""
    N = 3000
    tsize = gamma.table_size(N)
    funcs = crafted_leaf_functions(N, tsize)
    known = np.array([keyed_start(f, np.uint64(0)) for f in funcs], np.uint64)
    keyed = np.array([keyed_start(f, process_hash_seed()) for f in funcs], np.uint64)
    assert table_probes(known, tsize) >= N * (N - 1) // 2
    assert table_probes(keyed, tsize) <= 3 * N


@pytest.mark.parametrize("seed", [0, 1, 99])
def test_results_do_not_depend_on_the_seed(seed):
    t = random_trace(n_roots=20, fanout=3, max_depth=4, threads=2, seed=seed, n_func=5)
    s0, s1 = np.uint64(0), process_hash_seed()
    for a, b in [(subtree_dag(t.func, t.end_index, s0), subtree_dag(t.func, t.end_index, s1)),
                 (shape_classes_grown(t.func, t.end_index, s0), shape_classes_grown(t.func, t.end_index, s1)),
                 (gamma_classes_grown(t.func, t.end_index, t.n_functions, s0),
                  gamma_classes_grown(t.func, t.end_index, t.n_functions, s1)),
                 (relaxed_classes(t.func, t.end_index, t.func, False, True, True, s0),
                  relaxed_classes(t.func, t.end_index, t.func, False, True, True, s1))]:
        for x, y in zip(a, b):
            assert np.array_equal(np.asarray(x), np.asarray(y))


def close_brute(keep, parent):
    """The old closure: one pass per level until nothing changes."""
    keep = keep.copy()
    while True:
        up = parent[np.flatnonzero(keep)]
        up = up[up >= 0]
        if keep[up].all():
            return keep
        keep[up] = True


def test_close_under_parents_twin():
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        parent = np.array([-1] + [int(rng.integers(0, k)) for k in range(1, n)], np.int64)
        keep = rng.random(n) < 0.2
        assert np.array_equal(close_under_parents(keep, parent), close_brute(keep, parent))


def test_expand_deepest_call_of_a_deep_chain():
    """A 100 000-deep recursion (one CCT node per level): expanding its deepest call keeps
    the whole chain, the same set as the old per-level closure."""
    from tracevis3d.analysis.context import calling_context_tree as cct_of
    from tracevis3d.analysis.context import prune_by_time
    from tracevis3d.io.synthesis import synthetic_trace

    tr = synthetic_trace(110_000, threads=1, seed=2, deep_recursion=100_000)
    root, length = tr.meta["deep_chain"]
    cct = cct_of(tr)
    deepest = root + length - 1
    pruned = prune_by_time(cct, 50, expand_calls=[deepest])
    kept = set(pruned.node.tolist())
    assert int(cct.ctx[deepest]) in kept and int(cct.ctx[root]) in kept
    assert len(pruned) >= length
    keep = np.zeros(len(cct), bool)
    keep[np.asarray(sorted(kept))] = True
    assert np.array_equal(close_under_parents(keep, cct.parent), keep)  # closed
    assert cct.probes <= 3 * len(tr)
