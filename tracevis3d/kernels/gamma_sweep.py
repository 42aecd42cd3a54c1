"""The comparison's two hash-consing sweeps with their tables grown with the keys:
`gamma_classes_grown`, `shape_classes_grown` (TraceDiff Sec. III Eq. 2; SEAT Sec. 2.9).

`gamma.subtree_gamma_classes` and `gamma.subtree_shape_classes` size their tables by the calls
(a probe table of 2n slots, class stamps, hashes and key offsets of n each, all written once
when made: 3.2 GB and 2.3 GB of a 10^8-call trace, before a single class is found), though a
trace has far fewer classes than calls (2.8·10^6 Γ-sets in 10^8 synthetic calls).  Here they
start small and double as the classes come (the probe table rehashed at half load), so the
sweeps hold about what their classes need.  The classes are the same, numbered the same: a
class id is its order of creation, and a key is found by its hash and confirmed item by item
whatever the table's size (the same keyed hash, `gamma.keyed_start` / `keyed_step`)."""
import numpy as np
from numba import njit

from .gamma import find_key, find_set, gather_set, keyed_start, keyed_step, store_new_key

#: the sweeps' first capacities (keys, probe slots); each doubles as it fills
FIRST_KEYS = 1 << 12


@njit(cache=True, nogil=True)
def _rehashed(hashes, n_keys, tsize):
    """A linear-probing table of ``tsize`` slots (a power of two) holding keys 0..n_keys-1 by
    their ``hashes``: (table, mask)."""
    table = np.full(tsize, -1, np.int32)
    tmask = tsize - 1
    for k in range(n_keys):
        slot = np.int64(hashes[k] & np.uint64(tmask))
        while table[slot] >= 0:
            slot = (slot + 1) & tmask
        table[slot] = k
    return table, tmask


@njit(cache=True, nogil=True)
def _keys_grown(hashes, ptr, n_keys):
    """``hashes`` / ``ptr`` (key offsets, ``ptr[0]`` = 0) with twice the room, the first
    ``n_keys`` kept."""
    cap = 2 * hashes.shape[0]
    h2 = np.empty(cap, np.uint64)
    h2[:n_keys] = hashes[:n_keys]
    p2 = np.empty(cap + 1, np.int64)
    p2[:n_keys + 1] = ptr[:n_keys + 1]
    return h2, p2


@njit(cache=True, nogil=True)
def _stamps_grown(stamp, n_keys):
    """``stamp`` with twice the room, the new part −1."""
    s2 = np.full(2 * stamp.shape[0], -1, np.int64)
    s2[:n_keys] = stamp[:n_keys]
    return s2


@njit(cache=True, nogil=True)
def gamma_classes_grown(func, end_index, n_func, seed):
    """`gamma.subtree_gamma_classes` (Γ(i) = {func[i]} ∪ ⋃ Γ(children), hash-consed in a reverse
    sweep; the same ``(cls, set_ptr, set_items)``, class ids in order of creation) with its
    tables grown with the classes (the module docstring)."""
    n = func.shape[0]
    cls = np.empty(n, np.int32)
    cap = FIRST_KEYS
    table, tmask = _rehashed(np.empty(0, np.uint64), 0, 4 * cap)
    hashes = np.empty(cap, np.uint64)
    ptr = np.empty(cap + 1, np.int64)
    ptr[0] = 0
    items = np.empty(4 * cap, np.int32)
    n_items = 0
    n_cls = 0
    stamp_f = np.full(n_func, -1, np.int64)
    stamp_c = np.full(cap, -1, np.int64)
    zob = np.empty(n_func, np.uint64)
    for f in range(n_func):
        zob[f] = keyed_start(f, seed)
    buf = np.empty(max(n_func, 1), np.int32)
    for i in range(n - 1, -1, -1):
        m, h, n_distinct, only = gather_set(i, func, end_index, cls, ptr, items, stamp_f, stamp_c, zob, buf)
        if n_distinct == 1 and m == ptr[only + 1] - ptr[only]:
            cls[i] = only  # f already in the only child's set: Γ(i) = Γ(child)
            continue
        # the set is looked up by its order-free hash and confirmed by the stamps (its items
        # are stored in the order met: the set, not the sequence)
        slot, found = find_set(table, tmask, hashes, ptr, items, stamp_f, i, h, m)
        if found < 0:
            if n_cls == hashes.shape[0]:
                hashes, ptr = _keys_grown(hashes, ptr, n_cls)
                stamp_c = _stamps_grown(stamp_c, n_cls)
            found = n_cls
            items, n_items = store_new_key(table, slot, hashes, h, ptr, items, n_items, found, buf, m)
            n_cls += 1
            if 2 * n_cls + 2 > table.shape[0]:
                table, tmask = _rehashed(hashes, n_cls, 2 * table.shape[0])
        cls[i] = found
    set_ptr = ptr[: n_cls + 1].copy()
    set_items = items[:n_items].copy()
    for k in range(n_cls):
        set_items[set_ptr[k]: set_ptr[k + 1]].sort()
    return cls, set_ptr, set_items


@njit(cache=True, nogil=True)
def shape_classes_grown(func, end_index, seed):
    """`gamma.subtree_shape_classes` (the class of every call's ordered subtree: the key
    (func[i], shape(c_1), ..., shape(c_m)) hash-consed in a reverse sweep; the same
    ``(shape, n_shapes)``) with its tables grown with the classes (the module docstring)."""
    n = func.shape[0]
    shape = np.empty(n, np.int32)
    cap = FIRST_KEYS
    table, tmask = _rehashed(np.empty(0, np.uint64), 0, 4 * cap)
    hashes = np.empty(cap, np.uint64)
    kptr = np.empty(cap + 1, np.int64)
    kptr[0] = 0
    keys = np.empty(4 * cap, np.int32)
    buf = np.empty(max(n, 1) + 1, np.int32)
    n_keys = 0
    n_cls = 0
    for i in range(n - 1, -1, -1):
        buf[0] = func[i]
        m = 1
        h = keyed_start(func[i], seed)
        c = i + 1
        while c < end_index[i]:
            buf[m] = shape[c]
            m += 1
            h = keyed_step(h, shape[c])
            c = end_index[c]
        slot, found = find_key(table, tmask, hashes, kptr, keys, h, buf, m)
        if found < 0:
            if n_cls == hashes.shape[0]:
                hashes, kptr = _keys_grown(hashes, kptr, n_cls)
            found = n_cls
            keys, n_keys = store_new_key(table, slot, hashes, h, kptr, keys, n_keys, found, buf, m)
            n_cls += 1
            if 2 * n_cls + 2 > table.shape[0]:
                table, tmask = _rehashed(hashes, n_cls, 2 * table.shape[0])
        shape[i] = found
    return shape, n_cls
