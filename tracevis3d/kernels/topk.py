"""The best few entries per key, in one pass (no sort of the whole array)."""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def top_k_per_key(key, score, tie, k, n_keys):
    """Mask of the entries that are among the ``k`` best of their key.

    Entry i ranks before j (same key) when score_i > score_j, or equal scores and
    tie_i < tie_j, or both equal and i < j: the order of
    ``np.lexsort((tie, -score, key))`` within a key, whose first k entries per key are kept.
    One pass with a sorted buffer of k slots per key: O(n·k) time, O(n_keys·k) memory.
    """
    n = key.shape[0]
    best = np.full((n_keys, k), -1, np.int64)
    for i in range(n):
        row = key[i]
        # insertion into the key's sorted buffer (best first); entries later in the array
        # lose ties, so they go after equal ones
        pos = k
        for s in range(k):
            j = best[row, s]
            if j < 0 or score[i] > score[j] or (score[i] == score[j] and tie[i] < tie[j]):
                pos = s
                break
        if pos == k:
            continue
        for s in range(k - 1, pos, -1):
            best[row, s] = best[row, s - 1]
        best[row, pos] = i
    keep = np.zeros(n, np.bool_)
    for row in range(n_keys):
        for s in range(k):
            if best[row, s] >= 0:
                keep[best[row, s]] = True
    return keep
