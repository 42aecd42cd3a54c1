"""`kernels.overview_pass` against the numpy forms it replaced (icicle's widths, select's lanes,
fold's widest nameable call per lane, whether a selection is every call): the same bits, NaN
included."""
import numpy as np
import pytest

from tracevis3d.kernels.overview_pass import (clipped_widths, is_every_position, lane_of_calls, view_areas_in_place,
                                              widest_per_lane)
from tracevis3d.layout.fold import _lane_max, _widest_per_lane
from tracevis3d.model import KIND_OTHER


def _same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_clipped_widths_equal_numpy():
    rng = np.random.default_rng(1)
    for trial in range(200):
        n = int(rng.integers(0, 300))
        start = rng.uniform(-50, 150, n)
        end = start + rng.choice([0.0, 1e-3, 5.0, 80.0], n) * rng.random(n)
        if trial % 4 == 0 and n:
            start[rng.integers(0, n)] = np.nan
            end[rng.integers(0, n)] = np.nan
        t0, t1 = sorted(rng.uniform(-20, 120, 2))
        scale = float(rng.choice([1e-3, 0.37, 3.0, 1e6]))
        for dt in (np.int32, np.int64):
            idx = np.sort(rng.choice(n, int(rng.integers(0, n + 1)), replace=False)).astype(dt) if n else np.zeros(0, dt)
            want = (np.minimum(end[idx], t1) - np.maximum(start[idx], t0)) / scale
            assert _same_bits(clipped_widths(start, end, idx, False, t0, t1, scale), want), trial
        want = (np.minimum(end, t1) - np.maximum(start, t0)) / scale
        assert _same_bits(clipped_widths(start, end, np.arange(n, dtype=np.int32), True, t0, t1, scale), want)


def test_lane_of_calls_equals_numpy():
    rng = np.random.default_rng(2)
    for _ in range(100):
        n, nt = int(rng.integers(0, 400)), int(rng.integers(1, 9))
        thread = np.sort(rng.integers(0, nt, n)).astype(np.int32)
        table = rng.integers(-1, 5, nt).astype(np.int32)
        idx = np.flatnonzero(rng.random(n) < 0.6).astype(np.int32)
        assert _same_bits(lane_of_calls(table, thread, idx, False), table[thread[idx]].astype(np.int32))
        assert _same_bits(lane_of_calls(table, thread, np.arange(n, dtype=np.int64), True), table[thread])


def _numpy_widest(name_px, infra, passing, kind, lane, n_lanes):
    nameable = np.where(infra | passing, 0.0, name_px)
    work = np.where(kind == KIND_OTHER, nameable, 0.0)
    return _lane_max(work, lane, n_lanes), _lane_max(nameable, lane, n_lanes)


def test_widest_per_lane_equals_numpy():
    rng = np.random.default_rng(3)
    for trial in range(300):
        n, n_lanes = int(rng.integers(1, 300)), int(rng.integers(1, 7))
        lane = np.sort(rng.integers(0, n_lanes, n)).astype(np.int32)
        name_px = rng.choice([0.0, 3.5, 40.0, 1e4], n) * rng.random(n)
        if trial % 5 == 0:
            name_px[rng.integers(0, n)] = np.nan
        infra, passing = rng.random(n) < 0.2, rng.random(n) < 0.2
        kind = rng.choice([KIND_OTHER, KIND_OTHER, 1, 2], n).astype(np.int8)
        got = _widest_per_lane(name_px, infra, passing, kind, lane, n_lanes)
        want = _numpy_widest(name_px, infra, passing, kind, lane, n_lanes)
        assert _same_bits(got[0], want[0]) and _same_bits(got[1], want[1]), trial
    assert not widest_per_lane(np.ones(2), np.zeros(2, bool), np.zeros(2, bool), np.zeros(2, np.int8),
                               np.array([0, 3], np.int32), 2, int(KIND_OTHER))[2]
    with pytest.raises(IndexError):
        _widest_per_lane(np.ones(2), np.zeros(2, bool), np.zeros(2, bool), np.zeros(2, np.int8),
                         np.array([0, 2], np.int32), 2)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_every_position_is_the_arange_comparison(dtype):
    """`is_every_position` against ``np.array_equal(idx, np.arange(len(idx)))`` (the chunked
    comparison `layout.fold.every_call` made): the identity, one changed place anywhere, a
    gap, a swap and the empty selection."""
    rng = np.random.default_rng(4)
    for n in (0, 1, 2, 7, 1000):
        base = np.arange(n, dtype=dtype)
        cases = [base]
        if n:
            k = int(rng.integers(0, n))
            changed = base.copy()
            changed[k] += 1
            cases += [changed, np.arange(1, n + 1, dtype=dtype)]
        if n > 1:
            swapped = base.copy()
            swapped[[0, n - 1]] = swapped[[n - 1, 0]]
            cases.append(swapped)
        for idx in cases:
            assert is_every_position(idx) == np.array_equal(idx, np.arange(idx.size))


def test_view_areas_in_place_are_the_two_numpy_multiplies():
    """`view_areas_in_place` against the chunked numpy form `icicle_stages` made: width ×
    `LevelHeights` × drawn, the same bits (inf × 0 is NaN, a negative width × 0 is -0.0)."""
    from tracevis3d.layout.fold_heights import LevelHeights

    rng = np.random.default_rng(8)
    n, n_lanes, n_codes = 4000, 5, 7
    width = rng.uniform(-2.0, 300.0, n) * rng.choice([1e-6, 1.0, 1e3], n)
    width[rng.random(n) < 0.02] = np.inf
    width[rng.random(n) < 0.02] = np.nan
    table = rng.choice([0.0, 0.25, 0.5, 1.0, 3.0], (n_lanes, n_codes))
    lane = rng.integers(0, n_lanes, n).astype(np.int32)
    code = rng.integers(0, n_codes, n).astype(np.uint8)
    drawn = rng.random(n) < 0.7
    want = width.copy()
    np.multiply(np.multiply(want, LevelHeights(code, lane, table)[:], out=want), drawn, out=want)
    got = width.copy()
    view_areas_in_place(got, table, lane, code, drawn)
    assert _same_bits(got, want)

