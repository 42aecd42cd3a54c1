"""The dominant member of each group (a sub-pixel cluster, a group of rows): the function
holding most of the group's time, in one pass (SEAT's aggregation of what a merged box
stands for; the label of a cluster names it).

For group g with members i (``group[i] == g``) and function f: T[g, f] = Σ dur[i] over its
members of f.  The dominant function is argmax_f T[g, f] (ties: the smallest f), its share
T[g, f*] / Σ_f T[g, f], its representative the last member of f* (the highest index), and
its number of calls Σ calls[i] over the members of f*.  Members are bucketed by group with a
counting sort and each group's totals kept in a scratch table indexed by function, reset
after the group: O(members + groups + functions), no sort of (group, function) keys.
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def dominant_members(group, func, dur, calls, n_groups, n_funcs):
    """(member, share, calls) per group (member −1, share 0 for an empty group); ``group``
    −1 marks a call in no group; ``calls`` empty: one call each member."""
    n = group.shape[0]
    one_each = calls.shape[0] == 0
    ptr = np.zeros(n_groups + 1, np.int64)
    for i in range(n):
        g = group[i]
        if g >= 0:
            ptr[g + 1] += 1
    for g in range(n_groups):
        ptr[g + 1] += ptr[g]
    fill = ptr[:-1].copy()
    order = np.empty(ptr[n_groups], np.int64)
    for i in range(n):
        g = group[i]
        if g >= 0:
            order[fill[g]] = i
            fill[g] += 1
    acc = np.zeros(n_funcs, np.float64)
    acc_calls = np.zeros(n_funcs, np.float64)
    last = np.full(n_funcs, -1, np.int64)
    member = np.full(n_groups, -1, np.int64)
    share = np.zeros(n_groups, np.float64)
    n_calls = np.zeros(n_groups, np.float64)
    for g in range(n_groups):
        total = 0.0
        for j in range(ptr[g], ptr[g + 1]):
            i = order[j]
            f = func[i]
            acc[f] += dur[i]
            acc_calls[f] += 1.0 if one_each else calls[i]
            last[f] = i
            total += dur[i]
        best, best_t = -1, -1.0
        for j in range(ptr[g], ptr[g + 1]):
            f = func[order[j]]
            t = acc[f]
            if t > best_t or (t == best_t and f < best):
                best, best_t = f, t
        if best >= 0:
            member[g] = last[best]
            share[g] = best_t / max(total, 1e-300)
            n_calls[g] = acc_calls[best]
        for j in range(ptr[g], ptr[g + 1]):
            f = func[order[j]]
            acc[f] = 0.0
            acc_calls[f] = 0.0
            last[f] = -1
    return member, share, n_calls
