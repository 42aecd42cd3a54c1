"""Flow chains of a Chrome trace, in numba: the chain key of each v1 flow event
(`chain_keys`: one per distinct (category, id), numbered by first appearance) and the edges of
the chains (`chain_edges`: consecutive events of a chain, a source ``s``/``t`` then a target
``t``/``f``, both bound to calls).

`chain_keys` numbers by direct addressing when the ids are integers in a range about as long as
the events (what PyTorch and VizTracer write: counters from some base), else it declines and
the caller interns the pairs (`jsonspans.intern_pairs`, the same numbering).  Brute-force twins
in tests/test_chrome_fast.py.
"""
import numpy as np
from numba import njit

#: direct addressing when (categories x id range) is at most this many slots per event (+ 1024)
SLOTS_PER_EVENT = 4


@njit(cache=True, nogil=True)
def chain_keys(cat, fid, n_cats):
    """One key per distinct pair (``cat[k]``, ``fid[k]``), numbered 0, 1, ... in order of first
    appearance (as `jsonspans.intern_pairs` numbers them); ``cat`` in [0, n_cats).  Returns
    (keys, ok): ok False (keys empty) when the ids span more than about `SLOTS_PER_EVENT` slots
    per event: the caller interns them instead."""
    n = fid.shape[0]
    keys = np.empty(n, np.int32)
    if n == 0:
        return keys, True
    lo = fid[0]
    hi = fid[0]
    for k in range(n):
        v = fid[k]
        if v < lo:
            lo = v
        if v > hi:
            hi = v
    limit = SLOTS_PER_EVENT * n + 1024
    if hi - lo < 0 or hi - lo >= limit // max(n_cats, 1):  # (hi - lo < 0: the difference overflowed)
        return keys[:0], False
    span = hi - lo + 1
    slot_of = np.full(n_cats * span, -1, np.int32)
    m = 0
    for k in range(n):
        s = cat[k] * span + (fid[k] - lo)
        v = slot_of[s]
        if v < 0:
            v = m
            slot_of[s] = m
            m += 1
        keys[k] = v
    return keys, True


@njit(cache=True, nogil=True)
def chain_edges(fk, o, ph, bound, fid, cat):
    """The edges of the flow chains: the events in chain order ``o`` (by chain key ``fk``, then
    time, then file order), each pair of consecutive events of one chain whose first is a source
    (``ph`` ``s`` or ``t``) and second a target (``t`` or ``f``), both bound to a call
    (``bound`` >= 0).  Returns (id, from call, to call, category + 1) per edge, in chain order."""
    n = o.shape[0]
    m = max(n - 1, 0)
    e_id = np.empty(m, np.int64)
    e_from = np.empty(m, np.int32)
    e_to = np.empty(m, np.int32)
    e_cat = np.empty(m, np.int32)
    q = 0
    for j in range(n - 1):
        a = o[j]
        b = o[j + 1]
        if fk[a] != fk[b] or bound[a] < 0 or bound[b] < 0:
            continue
        pa = ph[a]
        pb = ph[b]
        if (pa == 115 or pa == 116) and (pb == 116 or pb == 102):
            e_id[q] = fid[a]
            e_from[q] = bound[a]
            e_to[q] = bound[b]
            e_cat[q] = cat[a] + 1
            q += 1
    return e_id[:q], e_from[:q], e_to[:q], e_cat[:q]
