"""The memory kernels (`tracevis3d.kernels.memcov`) against brute-force pure-Python twins."""
import numpy as np
import pytest

from tracevis3d.kernels import memcov as K


# ----------------------------------------------------------------------------- twins
def twin_pair(address, role, space):
    open_, closed_by, alloc_of = {}, [-1] * len(address), [-1] * len(address)
    unpaired = over = 0
    for i, (a, r, s) in enumerate(zip(address.tolist(), role.tolist(), space.tolist())):
        key = (a, s)
        if r > 0:
            if key in open_:
                closed_by[open_[key]] = i
                over += 1
            open_[key] = i
        elif r < 0:
            if key not in open_:
                unpaired += 1
                continue
            j = open_.pop(key)
            closed_by[j] = i
            alloc_of[i] = j
    return closed_by, alloc_of, unpaired, over


def twin_grid(band, t0, t1, size, n_bands, lo, hi, n_bins):
    held = np.zeros((n_bands, n_bins))
    allocs = np.zeros((n_bands, n_bins), np.int64)
    w = (hi - lo) / n_bins
    for b, a, z, s in zip(band, t0, t1, size):
        a, z = min(max(a, lo), hi), min(max(z, lo), hi)
        allocs[b, min(int((a - lo) / w), n_bins - 1)] += 1
        for j in range(n_bins):
            e0, e1 = lo + j * w, lo + (j + 1) * w
            ov = max(0.0, min(z, e1) - max(a, e0))
            held[b, j] += s * ov / w
    return held, allocs


def twin_merge(thick, m):
    group, agg, g, acc, open_ = [], [], -1, 0.0, False
    for t in thick:
        if t >= m:
            g += 1; agg.append(False); open_ = False
        else:
            if not open_ or acc >= m:
                g += 1; agg.append(True); acc = 0.0; open_ = True
            acc += t
        group.append(g)
    return group, agg


def twin_positions(size, role, alloc_of, heap):
    live, pos, k = 0, [-1] * len(heap), 0
    while k < len(heap) and heap[k] == 0:
        pos[k] = 0; k += 1
    for i in range(len(size)):
        if role[i] > 0:
            live += int(size[i])
        elif role[i] < 0 and alloc_of[i] >= 0:
            live -= int(size[alloc_of[i]])
        while k < len(heap) and live == heap[k]:
            pos[k] = i + 1; k += 1
    return pos, k


def _stream(seed, n=4000, n_addr=60):
    """A random allocator stream: allocations and frees over few addresses, pymalloc and mmap too."""
    rng = np.random.default_rng(seed)
    allocator = rng.choice([K.MALLOC, K.FREE, K.PYMALLOC_MALLOC, K.PYMALLOC_FREE, K.REALLOC, K.CALLOC, K.MMAP,
                            K.MUNMAP], n, p=[.2, .2, .2, .2, .05, .05, .05, .05]).astype(np.int64)
    address = rng.integers(1, n_addr, n).astype(np.uint64) * np.uint64(4096)
    size = rng.integers(1, 5000, n).astype(np.uint64)
    return address, size, allocator


@pytest.mark.parametrize("seed", range(6))
def test_pair_ranges_matches_its_twin(seed):
    address, size, allocator = _stream(seed, n_addr=[5, 60, 3000, 60, 7, 200000][seed])
    role, space = K.record_role(allocator)
    got = K.pair_ranges(address, size, role, space)
    want = twin_pair(address, role, space)
    assert got[0].tolist() == want[0] and got[1].tolist() == want[1]
    assert (got[2], got[3]) == (want[2], want[3])


def test_pair_ranges_grows_its_table_past_many_live_ranges():
    n = 50_000
    address = np.concatenate([np.arange(1, n + 1), np.arange(n, 0, -1)]).astype(np.uint64) * np.uint64(16)
    allocator = np.concatenate([np.full(n, K.MALLOC), np.full(n, K.FREE)]).astype(np.int64)
    role, space = K.record_role(allocator)
    closed_by, alloc_of, unpaired, over = K.pair_ranges(address, np.ones(2 * n, np.uint64), role, space)
    assert unpaired == over == 0
    assert np.array_equal(closed_by[:n], np.arange(2 * n - 1, n - 1, -1))


@pytest.mark.parametrize("seed", range(4))
def test_snapshot_positions_and_heap_peak_match_their_twins(seed):
    address, size, allocator = _stream(seed)
    role, space = K.record_role(allocator)
    _, alloc_of, _, _ = K.pair_ranges(address, size, role, space)
    live, curve = 0, []
    for i in range(size.size):
        if role[i] > 0:
            live += int(size[i])
        elif role[i] < 0 and alloc_of[i] >= 0:
            live -= int(size[alloc_of[i]])
        curve.append(live)
    steps = [K.live_bytes_change(size, role, alloc_of, i) for i in range(size.size)]
    assert np.cumsum(steps).tolist() == curve  # the one step every walk of the live bytes takes
    rng = np.random.default_rng(seed)
    picks = np.sort(rng.choice(size.size, 25, replace=False))
    heap = np.array([0] + [curve[p] for p in picks] + [10 ** 15], np.int64)  # the last is never reached
    pos, k = K.snapshot_positions(size, role, alloc_of, heap)
    wpos, wk = twin_positions(size, role, alloc_of, heap)
    assert k == wk == heap.size - 1 and pos.tolist() == wpos
    peak, at = K.heap_curve_peak(size, role, alloc_of)
    assert peak == max(curve) and curve[at] == peak and curve.index(peak) == at


def test_record_times_spread_records_between_their_snapshots():
    snap = np.array([0, 0, 1, 1, 1, 3, 3], np.int64)
    snap_ms = np.array([10.0, 20.0, 30.0])
    t = K.record_times(snap, snap_ms, 50.0)
    assert t.tolist() == pytest.approx([2.5, 7.5, 10 + 10 / 6, 15.0, 20 - 10 / 6, 35.0, 45.0])


@pytest.mark.parametrize("seed", range(5))
def test_band_grid_matches_its_twin(seed):
    rng = np.random.default_rng(seed)
    n, nb, bins = 300, 7, 23
    band = rng.integers(0, nb, n)
    t0 = rng.uniform(-5, 100, n)
    t1 = t0 + rng.exponential(20, n) * (rng.random(n) < 0.8)
    size = rng.integers(1, 10_000, n).astype(np.uint64)
    held, allocs = K.band_grid(band, t0, t1, size, nb, 0.0, 100.0, bins)
    wh, wa = twin_grid(band, t0, t1, size.astype(np.float64), nb, 0.0, 100.0, bins)
    assert np.allclose(held, wh, rtol=1e-9, atol=1e-6)
    assert np.array_equal(allocs, wa)


@pytest.mark.parametrize("seed", range(5))
def test_merge_thin_matches_its_twin(seed):
    rng = np.random.default_rng(seed)
    thick = rng.exponential(2.0, 200) * (rng.random(200) < 0.9)
    group, agg, n = K.merge_thin(thick, 1.5)
    wg, wa = twin_merge(thick.tolist(), 1.5)
    assert group.tolist() == wg and agg.tolist() == wa and n == len(wa)
    # Memcov's rule: a band thick enough stays itself, an aggregate only holds thin ones
    for g in range(n):
        members = thick[group == g]
        assert (members.size == 1 and not agg[g]) or (agg[g] and np.all(members < 1.5))
