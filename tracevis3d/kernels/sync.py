"""Synchronisation measures (SyncTrace Sec. III-A).

SyncTrace classes calls as wait (S_w), release (S_r), I/O (S_o) or other, and defines, for
x in {w, r, o} (Eq. 3-4)::

    dur(f)   = t_e(f) - t_s(f)
    dur_x(f) = dur(f)                       if f in S_x
             = sum over children c of dur_x(c)   otherwise

so a wait call counts its whole duration once, whatever it calls, and an ancestor sums the
waits below it without counting nested ones twice.
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def kind_durations(kind, start, end, parent, which):
    """dur_x of every call for the kind code ``which`` (SyncTrace Eq. 4).

    A reverse sweep over the pre-order (children before their parent): a call of kind
    ``which`` takes its own duration, any other call the sum its children pushed up.
    """
    n = kind.shape[0]
    acc = np.zeros(n, np.float64)
    for i in range(n - 1, -1, -1):
        if kind[i] == which:
            acc[i] = end[i] - start[i]
        p = parent[i]
        if p >= 0:
            acc[p] += acc[i]
    return acc


@njit(cache=True, nogil=True)
def kind_slots(dur_w, dur_o, start, end, idx, bins, negligible):
    """SyncTrace IV-B3's colour slot of each call ``idx[j]``: with w = dur_w, o = dur_o (Eq. 4)
    and d = max(end − start, 1e-300), I/O wins when o ≥ w (the equal-share split,
    `layout.colour._kind`), share = (o if it wins else w) / d;
    slot 0 when share < ``negligible``, else 1 + b for waits or 1 + ``bins`` + b for I/O,
    b = min(⌊clip(share, 0, 1) · bins⌋, bins − 1).  One pass (the numpy form made ten over
    millions of calls)."""
    out = np.empty(idx.shape[0], np.int32)
    for j in range(idx.shape[0]):
        i = idx[j]
        d = end[i] - start[i]
        if d < 1e-300:
            d = 1e-300
        w = dur_w[i]
        o = dur_o[i]
        io = o >= w
        share = (o if io else w) / d
        if share < negligible:
            out[j] = 0
            continue
        c = min(max(share, 0.0), 1.0)
        b = int(c * bins)
        if b > bins - 1:
            b = bins - 1
        out[j] = 1 + bins + b if io else 1 + b
    return out
