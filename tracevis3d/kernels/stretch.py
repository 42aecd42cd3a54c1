"""The stretch of a lane that a magnified detail would name most (`layout.inset`).

Given candidate calls (one lane's or several lanes', sorted by lane then start), each with
its function and whether it would be wide enough for its name at the magnification
tried (``ok``), a stretch of width ``span[lane]`` starting at candidate i's start
s_i holds the candidates j of i's lane with s_i ≤ s_j and e_j ≤ s_i + span; its value is
the number of distinct functions among its ``ok`` candidates:

    value(i) = |{ func[j] : lane[j] = lane[i], s_i ≤ s_j, e_j ≤ s_i + span[lane[i]], ok[j] }|

and the best stretch is the first i of the largest value.  Only stretches that start at a
candidate need be tried: moving a stretch right until its left edge meets a candidate
loses none of the candidates it holds.
"""
import numpy as np
from numba import njit

from .grow import room_for


@njit(cache=True, nogil=True)
def best_stretch(lane, start, end, func, ok, span):
    """(value, i) of the best stretch (module docstring); (0, -1) when no candidate is ``ok``.

    ``lane``, ``func`` int64 and ``start``, ``end`` float64 per candidate, sorted by
    (lane, start); ``ok`` bool per candidate; ``span`` float64 per lane (its stretch width,
    µs; a lane whose span is not positive is not tried).

    One sweep per lane, O(C log C): as the stretch's left edge moves right over the
    candidates' starts, a candidate enters when the right edge passes its end (if it does
    not start left of the stretch by then: it never will be inside again) and leaves when
    the left edge passes its start; a count per function keeps the distinct ones."""
    n = start.shape[0]
    n_funcs = room_for(func, 1, 1)
    count = np.zeros(n_funcs, np.int64)
    entered = np.zeros(n, np.bool_)
    best, best_i = 0, -1
    a = 0
    while a < n:
        b = a
        while b < n and lane[b] == lane[a]:
            b += 1
        w = span[lane[a]]
        if w > 0.0:
            by_end = a + np.argsort(end[a:b], kind="mergesort")
            p = 0  # next to enter, in order of ends
            q = a  # next to leave, in order of starts
            distinct = 0
            for i in range(a, b):
                while q < b and start[q] < start[i]:  # left of the stretch: out for good
                    if entered[q]:
                        f = func[q]
                        count[f] -= 1
                        if count[f] == 0:
                            distinct -= 1
                        entered[q] = False
                    q += 1
                edge = start[i] + w
                while p < b - a and end[by_end[p]] <= edge:
                    j = by_end[p]
                    if ok[j] and start[j] >= start[i]:
                        entered[j] = True
                        f = func[j]
                        if count[f] == 0:
                            distinct += 1
                        count[f] += 1
                    p += 1
                if distinct > best:
                    best, best_i = distinct, i
            for j in range(a, b):  # clear the lane's counts
                if entered[j]:
                    count[func[j]] -= 1
                    entered[j] = False
        a = b
    return best, best_i
