"""Memory ranges over time: the kernels behind `io.memray` and the memory view (`layout.memory`).

A memray capture is a stream of allocator records (allocations, frees, reallocs, mmaps) without
timestamps; the clock comes from memray's memory snapshots (about every 10 ms), which memray's
own `FileReader.get_temporal_allocation_records` places allocations between.  These kernels turn
the record stream into *ranges* (one allocated block: its size, the record that made it and the
one that freed it), put each record on the snapshot clock, and turn ranges into *bands*: Memcov
Viz's Gantt charts (Brandt's survey of execution visualisation, Sec. 2.16: "a region is a vertical
Gantt chart with a width equal to the range's size"; adjacent ranges too thin to display are
combined into grey aggregates that still show when any of their ranges was touched).
"""
import numpy as np
from numba import njit

#: memray's `AllocatorType` codes (memray 1.x, `memray._memray.AllocatorType`)
PYMALLOC_FREE, PYMALLOC_MALLOC, PYMALLOC_CALLOC, PYMALLOC_REALLOC = 1, 2, 3, 4
FREE, MALLOC, REALLOC, CALLOC, POSIX_MEMALIGN, ALIGNED_ALLOC, MEMALIGN, VALLOC, PVALLOC = 5, 6, 7, 8, 9, 10, 11, 12, 13
MMAP, MUNMAP = 14, 15


@njit(cache=True, nogil=True)
def record_role(allocator):
    """(role, space) per allocator code: role 1 allocates, -1 frees, 0 neither; space 0 the C
    allocator (malloc family), 1 pymalloc, 2 mmap.  A free only closes a range of its own space
    (pymalloc blocks live inside malloc'd or mmap'd arenas, so their addresses can coincide)."""
    n = allocator.shape[0]
    role = np.zeros(n, np.int8)
    space = np.zeros(n, np.int8)
    for i in range(n):
        a = allocator[i]
        if a == PYMALLOC_FREE:
            role[i] = -1; space[i] = 1
        elif a == PYMALLOC_MALLOC or a == PYMALLOC_CALLOC or a == PYMALLOC_REALLOC:
            role[i] = 1; space[i] = 1
        elif a == FREE:
            role[i] = -1
        elif a == MUNMAP:
            role[i] = -1; space[i] = 2
        elif a == MMAP:
            role[i] = 1; space[i] = 2
        elif a >= MALLOC and a <= PVALLOC:
            role[i] = 1
    return role, space


@njit(cache=True, nogil=True)
def _slot(keys, key, mask):
    h = (key * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(20)
    j = np.int64(h & np.uint64(mask))
    while keys[j] != 0 and keys[j] != key:
        j = (j + 1) & mask
    return j


@njit(cache=True, nogil=True)
def pair_ranges(address, size, role, space):
    """Pair every freeing record with the open range it closes, in record order.

    An allocation of (address, space) opens a range; the next free of the same address in the
    same space closes it (what memray's own aggregators do: `memray/_memray/snapshot.cpp`'s
    `SnapshotAllocationAggregator`, keyed by address).  An allocation over an address already
    open closes the old range there (a free memray never saw).  A ``munmap`` closes the mapping
    that starts at its address; one of part of a mapping (it starts elsewhere) is not paired.
    The open ranges live in an open-addressing table (linear probing, backward-shift delete)
    that grows with the number of ranges open at once: memory is linear in the live ranges,
    not in the records.

    Returns ``(closed_by, alloc_of, n_unpaired_frees, n_overwritten)``: per allocating record
    the record that freed it (-1: still alive at the end, a leak), per freeing record the
    allocation it closed (-1: none).
    """
    n = address.shape[0]
    closed_by = np.full(n, -1, np.int64)
    alloc_of = np.full(n, -1, np.int64)
    cap = 1024
    keys = np.zeros(cap, np.uint64)
    vals = np.zeros(cap, np.int64)
    used = 0
    n_unpaired = 0
    n_over = 0
    for i in range(n):
        r = role[i]
        if r == 0:
            continue
        key = ((address[i] << np.uint64(2)) | np.uint64(space[i])) + np.uint64(1)
        mask = cap - 1
        j = _slot(keys, key, mask)
        if r > 0:
            if keys[j] == key:  # an address allocated twice: the first range ends here
                closed_by[vals[j]] = i
                n_over += 1
                vals[j] = i
                continue
            keys[j] = key
            vals[j] = i
            used += 1
            if 2 * used > cap:  # grow: rehash every open range
                old_k, old_v = keys, vals
                cap *= 2
                keys = np.zeros(cap, np.uint64)
                vals = np.zeros(cap, np.int64)
                for q in range(old_k.shape[0]):
                    if old_k[q] != 0:
                        s = _slot(keys, old_k[q], cap - 1)
                        keys[s] = old_k[q]
                        vals[s] = old_v[q]
        else:
            if keys[j] != key:
                n_unpaired += 1
                continue
            a = vals[j]
            closed_by[a] = i
            alloc_of[i] = a
            # backward-shift deletion keeps every probe chain unbroken
            keys[j] = 0
            used -= 1
            k = (j + 1) & mask
            while keys[k] != 0:
                h = np.int64(((keys[k] * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(20)) & np.uint64(mask))
                # move k into the hole at j when its home h is not cyclically in (j, k]
                if (k > j and (h <= j or h > k)) or (k < j and (h <= j and h > k)):
                    keys[j] = keys[k]
                    vals[j] = vals[k]
                    keys[k] = 0
                    j = k
                k = (k + 1) & mask
    return closed_by, alloc_of, n_unpaired, n_over


@njit(cache=True, nogil=True)
def live_bytes_change(size, role, alloc_of, i):
    """How record ``i`` changes the bytes the paired ranges hold: ``+size[i]`` at an allocation
    (role 1), ``-size[alloc_of[i]]`` at a free that closes a range (role -1, `pair_ranges`), 0
    otherwise.  The one step of every walk of the live bytes (`snapshot_positions`,
    `heap_curve_peak`, `memray_scan.heap_at`): memray's ``HighWatermarkFinder`` counts the same
    (``memray/_memray/snapshot.cpp``), which is what its snapshots' ``heap`` and its peak are."""
    if role[i] > 0:
        return np.int64(size[i])
    if role[i] < 0 and alloc_of[i] >= 0:
        return -np.int64(size[alloc_of[i]])
    return np.int64(0)


@njit(cache=True, nogil=True)
def snapshot_positions(size, role, alloc_of, heap):
    """Where each memory snapshot falls in the record stream.

    memray's reader writes, at every memory record of the stream, the heap its
    `HighWatermarkFinder` had counted there (`MemorySnapshot.heap`: bytes of the live ranges).
    Walking the records with the same count (+size at an allocation, -size of the closed range
    at a free), snapshot k sits after the first record, at or after snapshot k-1's place, where
    the count equals ``heap[k]`` (0: before any record).  Returns ``(pos, n_placed)``: per snapshot
    the number of records before it (-1 past ``n_placed``, the snapshots never reached).
    """
    m = heap.shape[0]
    pos = np.full(m, -1, np.int64)
    k = 0
    live = np.int64(0)
    while k < m and heap[k] == 0:
        pos[k] = 0
        k += 1
    for i in range(size.shape[0]):
        if k >= m:
            break
        live += live_bytes_change(size, role, alloc_of, i)
        while k < m and live == heap[k]:
            pos[k] = i + 1
            k += 1
    return pos, k


@njit(cache=True, nogil=True, inline="always")
def spread_evenly(t, a, b, lo, hi):
    """Records a .. b-1 (b > a) spread evenly over [lo, max(hi, lo)]: t[k] = lo + w·(k − a + ½),
    w = (max(hi, lo) − lo) / (b − a) (each in the middle of its equal share)."""
    if hi < lo:
        hi = lo
    w = (hi - lo) / (b - a)
    for k in range(a, b):
        t[k] = lo + w * (k - a + 0.5)


@njit(cache=True, nogil=True)
def record_times(snap, snap_ms, end_ms):
    """Each record's time on the capture's clock (ms since its start): the records before
    snapshot s (and after snapshot s-1) spread evenly over [t(s-1), t(s)] in file order,
    t(-1) = 0 and t(len) = ``end_ms``; ``snap`` non-decreasing (`snapshot_positions`)."""
    n = snap.shape[0]
    m = snap_ms.shape[0]
    t = np.empty(n, np.float64)
    i = 0
    while i < n:
        s = snap[i]
        j = i
        while j < n and snap[j] == s:
            j += 1
        spread_evenly(t, i, j, 0.0 if s <= 0 else snap_ms[min(s - 1, m - 1)], end_ms if s >= m else snap_ms[s])
        i = j
    return t


@njit(cache=True, nogil=True)
def heap_curve_peak(size, role, alloc_of):
    """The high-water mark of the bytes the paired ranges hold, and the record where it is
    first reached: +size at an allocation, -size of the range closed at a free (memray's
    `HighWatermarkFinder` does the same over its own pairing).  Returns (peak, record)."""
    live = np.int64(0)
    peak = np.int64(0)
    at = -1
    for i in range(size.shape[0]):
        live += live_bytes_change(size, role, alloc_of, i)
        if live > peak:  # only an allocation raises it
            peak = live
            at = i
    return peak, at


@njit(cache=True, nogil=True)
def group_span(group, start, end, n_groups):
    """Per group, the earliest ``start`` and the latest ``end`` of its members (0, 0 for a group
    without members): a site's lifetime from its ranges'."""
    lo = np.full(n_groups, np.inf)
    hi = np.zeros(n_groups)
    for i in range(group.shape[0]):
        g = group[i]
        if start[i] < lo[g]:
            lo[g] = start[i]
        if end[i] > hi[g]:
            hi[g] = end[i]
    for g in range(n_groups):
        if lo[g] == np.inf:
            lo[g] = 0.0
    return lo, hi


@njit(cache=True, nogil=True)
def band_grid(band, t0, t1, nbytes, n_bands, lo, hi, n_bins):
    """Bytes held per band and time bin, and allocations per band and bin.

    Range k (band ``band[k]``, ``nbytes[k]`` bytes, alive over [t0[k], t1[k]) ) adds to each
    bin it overlaps its bytes times the share of the bin it covers: the band's width in a bin
    is the time-weighted mean of the bytes it holds there (a Gantt chart of width = size,
    Memcov Viz, summed over the band's ranges).  Its allocation counts in the bin of t0.
    Returns ``(held (n_bands, n_bins) float64, allocs (n_bands, n_bins) int64)``.
    """
    held = np.zeros((n_bands, n_bins), np.float64)
    allocs = np.zeros((n_bands, n_bins), np.int64)
    diff = np.zeros((n_bands, n_bins + 1), np.float64)
    w = (hi - lo) / n_bins
    if w <= 0:
        w = 1.0
    for k in range(band.shape[0]):
        b = band[k]
        if b < 0:
            continue
        a = (min(max(t0[k], lo), hi) - lo) / w
        z = (min(max(t1[k], lo), hi) - lo) / w
        ia = min(int(a), n_bins - 1)
        iz = min(int(z), n_bins - 1)
        allocs[b, ia] += 1
        s = float(nbytes[k])
        if z <= a:
            continue
        if ia == iz:
            held[b, ia] += s * (z - a)
            continue
        held[b, ia] += s * (ia + 1 - a)
        held[b, iz] += s * (z - iz)
        if iz > ia + 1:  # whole bins in between: a difference array, summed once below
            diff[b, ia + 1] += s
            diff[b, iz] -= s
    for b in range(n_bands):
        run = 0.0
        for j in range(n_bins):
            run += diff[b, j]
            held[b, j] += run
    return held, allocs


@njit(cache=True, nogil=True)
def merge_thin(thickness, min_thickness):
    """Memcov Viz's aggregation: walking the bands in their drawing order, a band at least
    ``min_thickness`` thick stays itself; runs of adjacent thinner bands are combined until
    the combination reaches ``min_thickness`` (then the next thin band starts a new one).
    ``thickness`` per band is its thickest moment; an aggregate's is taken as the sum of its
    members' (Memcov's ranges have one width for life; bands over time do not, so the sum of
    their peaks stands for the aggregate's width: it never merges too little).
    Returns ``(group per band, is_aggregate per group, n_groups)``; a lone thin band at the end
    of a run stays a group of its own (flagged as an aggregate: it is drawn grey).
    """
    n = thickness.shape[0]
    group = np.empty(n, np.int64)
    agg = np.zeros(n, np.bool_)
    g = -1
    acc = 0.0
    open_agg = False
    for i in range(n):
        if thickness[i] >= min_thickness:
            g += 1
            group[i] = g
            open_agg = False
            continue
        if not open_agg or acc >= min_thickness:
            g += 1
            agg[g] = True
            acc = 0.0
            open_agg = True
        group[i] = g
        acc += thickness[i]
    return group, agg[:g + 1], g + 1
