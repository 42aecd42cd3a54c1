"""The fused join's deferred overview (TraceDiff Sec. IV-A, Eq. 4) in bounded waves of B's rows:
`overview_in_waves`.

`overview_record.deferred_overview` makes the bars of the walkers' record in
`overview_record.OVERVIEW_PARTS` fixed parts of B's rows, every part filling the slots of its
rows in ONE difference array over all of B's calls (40 bytes a call of B: 4 GB at 10^8 calls),
which `overview_rows.overview_rows_finish` then bins (`overview.bin_raw`).  Here the same parts
run a few at a time (a *wave*: consecutive parts whose slots take at most
`OVERVIEW_WAVE_BYTES`), each wave's rows are binned as soon as its parts are done
(`bin_rows`) and their pages given back, so the array is resident one wave at a time.

Bit for bit the bars of `deferred_overview` + `overview_rows_finish`: the parts are the same
(same record, same cuts), each fills the same slots; `_bin_raw` adds row r into chunk
accumulator r mod 64, rows of a chunk ascending, and `bin_rows` does exactly that over the
waves' row ranges taken in ascending order, then adds the 64 chunks in order as `_bin_raw`
does.  Where one wave holds every part (10^7 calls and below, by default) it is the same
computation in the same order.
"""
import numpy as np
from numba import njit, prange

from .lazybuf import lazy_empty, release_range
from .overview import bin_of, clean_bars
from .overview_record import OVERVIEW_PARTS, overview_parts

#: the most bytes of B's difference array (5 float64 per slot: a call of B, or a B row's end)
#: that one wave of the deferred overview's parts fills before its rows are binned and its pages
#: given back (a wave holds at least one part)
OVERVIEW_WAVE_BYTES = 512 << 20
#: `overview.bin_raw`'s chunk accumulators (row r into chunk r mod `BIN_CHUNKS`)
BIN_CHUNKS = 64


@njit(cache=True, parallel=True, nogil=True)
def bin_rows(diff, ptr, time, t0, span, n_bins, q_lo, q_hi, acc):
    """`overview.bin_raw` of B's rows [q_lo, q_hi) only, into its chunk accumulators ``acc``
    (`BIN_CHUNKS`, n_bins, 4): per call of row r, the running sums of the row's difference
    slots (slot = position + r) into the call's bin of chunk r mod `BIN_CHUNKS`: (earlier,
    aligned, later) += the running sums, δ += t·c + d.  Ranges binned in ascending order add
    each chunk's rows in `_bin_raw`'s order (its sums, bit for bit)."""
    width = span / n_bins
    for ch in prange(BIN_CHUNKS):
        r = q_lo + (ch - q_lo) % BIN_CHUNKS
        while r < q_hi:
            r0 = r1 = r2 = r3 = r4 = 0.0
            for i in range(ptr[r], ptr[r + 1]):
                r0 += diff[i + r, 0]
                r1 += diff[i + r, 1]
                r2 += diff[i + r, 2]
                r3 += diff[i + r, 3]
                r4 += diff[i + r, 4]
                t = time[i]
                b = bin_of(t, t0, width, n_bins)
                acc[ch, b, 0] += r0
                acc[ch, b, 1] += r1
                acc[ch, b, 2] += r2
                acc[ch, b, 3] += t * r3 + r4
            r += BIN_CHUNKS


@njit(cache=True, nogil=True)
def chunks_added(acc):
    """The chunk accumulators of `bin_rows` added in chunk order (`_bin_raw`'s result)."""
    n_bins = acc.shape[1]
    out = np.zeros((n_bins, 4), np.float64)
    for ch in range(acc.shape[0]):
        for b in range(n_bins):
            for x in range(4):
                out[b, x] += acc[ch, b, x]
    return out


def _waves(bounds, ptr_b, wave_bytes):
    """Consecutive parts (j0, j1) whose B slots take at most ``wave_bytes`` (at least one part)."""
    slots = ptr_b[bounds] + bounds              # slot offset of each part's first row
    waves, j0 = [], 0
    n_parts = bounds.shape[0] - 1
    for j in range(1, n_parts + 1):
        if j == n_parts or (slots[j + 1] - slots[j0]) * 40 > wave_bytes:
            waves.append((j0, j))
            j0 = j
    return waves


def overview_in_waves(outs, ptr_a, ptr_b, time_b, span_b, n_bins, inv_theta, oc, pool, n_workers, tau,
                      wave_bytes=None):
    """The bars (bars_a, delta_a, bars_b, delta_b) of the walkers' record (``outs``: their
    `setjoin_fused._fused_part` results), as `overview_record.deferred_overview` then
    `overview_rows.overview_rows_finish` make them (the module docstring), with B's
    difference array resident one wave (``wave_bytes``, default `OVERVIEW_WAVE_BYTES`) at a
    time.  Returns (the bars, the parts' seconds)."""
    wave_bytes = OVERVIEW_WAVE_BYTES if wave_bytes is None else wave_bytes
    nb = ptr_b.shape[0] - 1
    flat, mapping = lazy_empty((time_b.shape[0] + nb) * 5, np.float64)
    diff_b = flat.reshape(-1, 5)
    bounds, bins, seconds, run = overview_parts(outs, ptr_a, ptr_b, n_bins, inv_theta, oc, n_workers, diff_b)
    acc = np.zeros((BIN_CHUNKS, int(n_bins), 4))
    for j0, j1 in _waves(bounds, ptr_b, wave_bytes):
        list(pool.map(run, range(j0, j1)))
        q_lo, q_hi = int(bounds[j0]), int(bounds[j1])
        bin_rows(diff_b, ptr_b, time_b, 0.0, float(span_b), int(n_bins), q_lo, q_hi, acc)
        release_range(mapping, (ptr_b[q_lo] + q_lo) * 40, (ptr_b[q_hi] + q_hi) * 40)
    # `overview_rows.overview_rows_finish`'s sums, in its order
    acc_a = np.zeros((n_bins, 4))
    acc_b = np.zeros((n_bins, 4))
    for p in range(OVERVIEW_PARTS):
        acc_a += bins[p][0]
        acc_b += bins[p][1]
    acc_b += chunks_added(acc)
    bars_a, delta_a = clean_bars(acc_a, tau)
    bars_b, delta_b = clean_bars(acc_b, tau)
    return (bars_a, delta_a, bars_b, delta_b), seconds
