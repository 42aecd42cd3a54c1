"""Arrays that grow by doubling: the one growth rule for the kernels' tables of unknown size
(amortised O(1) appends, at most twice the room used)."""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def grown(a, need):
    """``a`` itself when it holds ``need`` entries, else a new 1-D array of its dtype of
    max(2·len(a), need) entries with ``a`` in front (the rest unset)."""
    if a.shape[0] >= need:
        return a
    b = np.empty(max(2 * a.shape[0], need), a.dtype)
    b[:a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def room_for(a, plus, least):
    """max(least, max(a) + plus) (``least`` for an empty ``a``): the entries a table indexed
    by ``a``'s values needs (``plus`` = 1: one a value; a stack as deep as the greatest
    depth, with ``plus`` spare)."""
    room = least
    for i in range(a.shape[0]):
        if a[i] + plus > room:
            room = a[i] + plus
    return room
