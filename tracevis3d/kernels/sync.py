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
