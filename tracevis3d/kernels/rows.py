"""Rows of overlapping intervals: async slices packed into the few rows of their lane.

Async slices (Chrome ``b``/``e``) of one category overlap freely (many ids at once, each
nested); drawn as a lane they need rows so that no two slices of one row overlap.
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def pack_rows(start, end, max_rows):
    """First-fit rows of intervals given in ascending ``start`` order.

    Interval i goes to the lowest row r < ``max_rows`` whose last interval ended at or
    before start[i] (row_end[r] <= start[i]); when every row is taken it goes to the row
    that frees first (the least row_end), and counts as overflow.  Nested slices stack
    upwards (a child starts inside its parent, whose row is still taken), as in an icicle.
    Returns ``(row int32 per interval, number of rows used, overflow count)``.
    O(n · max_rows)."""
    n = start.shape[0]
    row = np.empty(n, np.int32)
    row_end = np.full(max_rows, -np.inf)
    used = 0
    overflow = 0
    for i in range(n):
        r = -1
        for k in range(max_rows):
            if row_end[k] <= start[i]:
                r = k
                break
        if r < 0:
            overflow += 1
            r = 0
            for k in range(1, max_rows):
                if row_end[k] < row_end[r]:
                    r = k
        row[i] = r
        if end[i] > row_end[r]:
            row_end[r] = end[i]
        if r + 1 > used:
            used = r + 1
    return row, used, overflow
