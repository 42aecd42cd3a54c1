"""The comparison's two hash-consing sweeps with tables sized by the calls: the first versions
of `kernels.gamma_sweep.gamma_classes_grown` and `shape_classes_grown` (which start small and
grow their tables with the classes), kept as their twins: the same classes, numbered the same
(tests/unit/test_gamma_sweep.py).  Built from `kernels.gamma`'s parts."""
import numpy as np
from numba import njit

from tracevis3d.kernels.gamma import child_key, find_gamma, find_key, key_table, set_scratch, store_new_key, table_size


@njit(cache=True, nogil=True)
def subtree_gamma_classes(func, end_index, n_func, seed):
    """Γ-set class of every call (TraceDiff Sec. III, Eq. 2), hash-consed.

    Γ(i) = {func[i]} ∪ ⋃_{c child of i} Γ(c).  Reverse sweep i = n-1 .. 0: the
    union is built from the *distinct* classes of i's children (each class's set
    is stored once), marking functions with a stamp array; the set's hash is the
    XOR of ``keyed_start(f, seed)`` over its elements (order-free, so no sort is needed
    to look it up), and a table hit is confirmed element by element.  Work is
    O(n + Σ_i Σ_{distinct child classes c of i} |Γ(c)|), no allocation per call.

    Returns ``(cls, set_ptr, set_items)``: ``cls[i]`` the class of call i; the
    set of class k is ``set_items[set_ptr[k]:set_ptr[k+1]]``, sorted ascending.
    Class ids are numbered in order of creation (last call first), which is
    deterministic.
    """
    n = func.shape[0]
    cls = np.empty(n, np.int32)
    tsize = table_size(n)
    tmask = tsize - 1
    table = np.full(tsize, -1, np.int32)
    cap_classes = max(n, 1)
    hashes = np.empty(cap_classes, np.uint64)
    ptr = np.zeros(cap_classes + 1, np.int64)
    items = np.empty(max(16, 4 * n), np.int32)
    n_items = 0
    n_cls = 0
    stamp_f, zob, buf = set_scratch(n_func, seed)
    stamp_c = np.full(cap_classes, -1, np.int64)
    for i in range(n - 1, -1, -1):
        found, slot, h, m = find_gamma(i, func, end_index, cls, ptr, items, stamp_f, stamp_c, zob, buf, table, tmask,
                                       hashes)
        if found < 0:
            found = n_cls
            items, n_items = store_new_key(table, slot, hashes, h, ptr, items, n_items, found, buf, m)
            n_cls += 1
        cls[i] = found
    set_ptr = ptr[: n_cls + 1].copy()
    set_items = items[:n_items].copy()
    for k in range(n_cls):
        set_items[set_ptr[k]: set_ptr[k + 1]].sort()
    return cls, set_ptr, set_items


@njit(cache=True, nogil=True)
def subtree_shape_classes(func, end_index, seed):
    """Class of every call's *ordered* subtree: equal ids ⇔ identical subtrees.

    The key of call i is the sequence (func[i], shape(c_1), ..., shape(c_m)) over
    its children in call order (SEAT Sec. 2.9, the Compact Trace Format's
    "identical subtrees stored once"); one reverse sweep, keyed hash chain
    (``seed``: `process_hash_seed`) verified against the stored key.  O(n) total.  Returns ``(shape, n_shapes)``.
    """
    n = func.shape[0]
    shape = np.empty(n, np.int32)
    table, tmask, hashes, kptr, keys, buf = key_table(n)
    n_keys = 0
    n_cls = 0
    for i in range(n - 1, -1, -1):
        m, h = child_key(i, func, end_index, shape, buf, seed)
        slot, found = find_key(table, tmask, hashes, kptr, keys, h, buf, m)
        if found < 0:
            found = n_cls
            keys, n_keys = store_new_key(table, slot, hashes, h, kptr, keys, n_keys, found, buf, m)
            n_cls += 1
        shape[i] = found
    return shape, n_cls
