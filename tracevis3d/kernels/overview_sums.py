"""Sums and marks over every call of an overview in one pass, no temporaries over the calls
(`tracevis3d.layout.colour`: a function's area, the shown calls' colour slots, the legend's
areas and the functions coloured "other").

Each sum adds its terms one at a time in call order, into an accumulator that starts at 0.0:
the sums ``np.add.at`` (and ``np.bincount``) give, bit for bit.
"""
import numpy as np
from numba import njit

from .tree import call_self_time


@njit(cache=True, nogil=True)
def add_at(out, index, values):
    """``np.add.at(out, index, values)``: ``out[index[i]] += values[i]`` for i in order."""
    for i in range(index.shape[0]):
        out[index[i]] += values[i]


@njit(cache=True, nogil=True)
def add_at_marked(out, present, index, values):
    """`add_at`, and ``present[index[i]] = True`` for every i."""
    for i in range(index.shape[0]):
        k = index[i]
        out[k] += values[i]
        present[k] = True


@njit(cache=True, nogil=True)
def function_areas(out, func, kind, start, end, folded, infra, kind_wait, folded_area):
    """Per function f: ``out[f] += a_i`` over the calls i of f in order, with
    ``a_i = (end[i] - start[i]) · (folded_area if folded[i] else 1.0)`` where the call neither
    waits (``kind[i] == kind_wait``) nor is the runtime's (``infra[func[i]]``), else 0.0
    (`layout.colour.function_area`'s formula, term for term)."""
    for i in range(func.shape[0]):
        f = func[i]
        if kind[i] == kind_wait or infra[f]:
            a = 0.0
        else:
            a = (end[i] - start[i]) * (folded_area if folded[i] else 1.0)
        out[f] += a


@njit(cache=True, nogil=True)
def categorical_slots(out, func, kind, idx, slot_of_func, infra, kind_wait, wait_slot, infra_slot, other_slot):
    """The colour slot of each shown call i (call c = ``idx[i]``, function f = ``func[c]``) in one
    pass (`layout.colour._categorical`'s rule, a dozen numpy passes over chunks before):
    ``wait_slot`` when it waits (``kind[c] == kind_wait``), else ``infra_slot`` when f is the
    runtime's (``infra[f]``), else f's slot ``slot_of_func[f]`` when it has one (>= 0), else
    ``other_slot``; written into ``out[i]``.  A function outside the tables (never in a valid
    trace) has neither a slot nor the runtime's mark."""
    n_slot = slot_of_func.shape[0]
    n_infra = infra.shape[0]
    for i in range(idx.shape[0]):
        c = idx[i]
        f = func[c]
        if kind[c] == kind_wait:
            s = wait_slot
        elif 0 <= f < n_infra and infra[f]:
            s = infra_slot
        else:
            s = slot_of_func[f] if 0 <= f < n_slot else -1
            if s < 0:
                s = other_slot
        out[i] = s


@njit(cache=True, nogil=True)
def functions_in_slot(present, func, idx, slot, which):
    """``present[func[idx[i]]] = True`` for every shown call i whose ``slot[i] == which``."""
    for i in range(idx.shape[0]):
        if slot[i] == which:
            present[func[idx[i]]] = True


@njit(cache=True, nogil=True)
def max_at(out, index, values):
    """``np.maximum.at(out, index, values)``: ``out[index[i]] = maximum(out[index[i]], values[i])``
    for i in order, numpy's maximum (a tie keeps the value held, a NaN held stays, a NaN met
    is taken)."""
    for i in range(index.shape[0]):
        k = index[i]
        held = out[k]
        if not (held >= values[i] or held != held):
            out[k] = values[i]


@njit(cache=True, nogil=True)
def lane_busy_times(start, end, end_index, kind, idx, whole, lane, n_lanes, wait_kind):
    """Per lane: the sum of its shown calls' self times (`kernels.tree.call_self_time`, less than
    0 taken as 0, numpy's maximum; a wait's as 0.0), added in call order as ``np.bincount``
    adds them (`layout.budget.lane_busy`'s formula): shown call k is call ``k`` (``whole``)
    or ``idx[k]``."""
    out = np.zeros(n_lanes, np.float64)
    for k in range(lane.shape[0]):
        c = k if whole else idx[k]
        st = call_self_time(start, end, end_index, c)
        if not (st >= 0.0 or st != st):
            st = 0.0
        if kind[c] == wait_kind:
            st = 0.0
        out[lane[k]] += st
    return out
