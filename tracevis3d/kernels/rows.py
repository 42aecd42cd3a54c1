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


@njit(cache=True, nogil=True)
def merge_row_boxes(x0, x1, row, n_rows, px):
    """The boxes a lane of rows draws: boxes of one row that overlap (``x0 < b``, where ``b`` is
    the right end of the row's box being built) or that are narrower than a pixel ``px`` and
    begin within a pixel of it are one box, as sub-pixel calls are in the icicle: a tower of
    nested slices overflowing into one row is one box, not one box per slice (60,000 coincident
    boxes took minutes to draw).  Boxes are given by ascending ``x0``; touching boxes of a row
    (``x0 == b``) stay apart when each is at least a pixel wide.

    Returns (first, x0, x1, count) per drawn box, in the order they close: the index of its
    first (leftmost) input box, its extent, how many input boxes it holds.  At most one box
    per row per ``px`` of width, plus one per row per gap.  O(n)."""
    n = x0.shape[0]
    first = np.empty(n, np.int64)
    ox0 = np.empty(n, np.float64)
    ox1 = np.empty(n, np.float64)
    cnt = np.empty(n, np.int64)
    cur = np.full(max(n_rows, 1), -1, np.int64)  # the row's box being built: its first input box
    a = np.zeros(max(n_rows, 1))
    b = np.zeros(max(n_rows, 1))
    c = np.zeros(max(n_rows, 1), np.int64)
    m = 0
    for i in range(n):
        r = row[i]
        if cur[r] >= 0:
            small = x1[i] - x0[i] < px or b[r] - a[r] < px
            if x0[i] < b[r] or (small and x0[i] < b[r] + px):
                if x1[i] > b[r]:
                    b[r] = x1[i]
                c[r] += 1
                continue
            first[m] = cur[r]
            ox0[m] = a[r]
            ox1[m] = b[r]
            cnt[m] = c[r]
            m += 1
        cur[r] = i
        a[r] = x0[i]
        b[r] = x1[i]
        c[r] = 1
    for r in range(n_rows):
        if cur[r] >= 0:
            first[m] = cur[r]
            ox0[m] = a[r]
            ox1[m] = b[r]
            cnt[m] = c[r]
            m += 1
    return first[:m].copy(), ox0[:m].copy(), ox1[:m].copy(), cnt[:m].copy()
