"""`kernels.sorted_lookup.positions_in_sorted` against its brute-force twin (searchsorted and a
check), on ascending, repeated, descending and random queries, and the layout's use of it."""
import numpy as np
import pytest

from tracevis3d.kernels.sorted_lookup import positions_in_sorted


def _twin(keys, queries):
    at = np.searchsorted(keys, queries)
    found = (at < keys.size) & (keys[np.minimum(at, max(keys.size - 1, 0))] == queries) if keys.size else \
        np.zeros(queries.size, bool)
    return np.where(found, at, -1)


@pytest.mark.parametrize("seed", range(12))
def test_positions_in_sorted_equals_its_twin(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 3000))
    keys = np.unique(rng.integers(-50, 10_000, n)).astype(np.int32 if seed % 2 else np.int64)
    m = int(rng.integers(0, 2000))
    q = rng.integers(-100, 10_100, m).astype(np.int64)
    if seed % 3 == 0:
        q = np.sort(q)  # ascending with repeats: the layout's case
    elif seed % 3 == 1:
        q = np.sort(q)[::-1].copy()  # descending: every query starts again from 0
    if keys.size and seed % 4 == 0:
        q = np.concatenate([q, keys[:: max(1, keys.size // 50)].astype(np.int64)])  # hits
    out = np.empty(q.size, np.int64)
    positions_in_sorted(keys, q, out)
    assert np.array_equal(out, _twin(keys, q))


def test_positions_in_sorted_ends_and_every_key():
    keys = np.arange(0, 2000, 3, dtype=np.int64)
    q = np.arange(-5, 2010, dtype=np.int64)
    out = np.empty(q.size, np.int64)
    positions_in_sorted(keys, q, out)
    assert np.array_equal(out, _twin(keys, q))
    assert (out >= 0).sum() == keys.size
