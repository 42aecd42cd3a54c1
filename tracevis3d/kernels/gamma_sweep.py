"""The comparison's two hash-consing sweeps with their tables grown with the keys:
`gamma_classes_grown`, `shape_classes_grown` (TraceDiff Sec. III Eq. 2; SEAT Sec. 2.9).

Sized by the calls (as the first versions of these sweeps were: tests/support/gamma_twins.py)
(a probe table of 2n slots, class stamps, hashes and key offsets of n each, all written once
when made: 3.2 GB and 2.3 GB of a 10^8-call trace, before a single class is found), though a
trace has far fewer classes than calls (2.8·10^6 Γ-sets in 10^8 synthetic calls).  Here they
start small and double as the classes come (the probe table rehashed at half load), so the
sweeps hold about what their classes need.  The classes are the same, numbered the same: a
class id is its order of creation, and a key is found by its hash and confirmed item by item
whatever the table's size (the same keyed hash, `gamma.keyed_start` / `keyed_step`)."""
import numpy as np
from numba import njit

from .gamma import child_key, find_gamma, find_key, keys_grown, rehashed, set_scratch, store_new_key

#: the sweeps' first capacities (keys, probe slots); each doubles as it fills
FIRST_KEYS = 1 << 12


@njit(cache=True, nogil=True)
def _first_tables():
    """The sweeps' tables at their first capacities: (probe table, its mask, hashes, key
    offsets with ``ptr[0]`` = 0, key items)."""
    table, tmask = rehashed(np.empty(0, np.uint64), 0, 4 * FIRST_KEYS)
    ptr = np.empty(FIRST_KEYS + 1, np.int64)
    ptr[0] = 0
    return table, tmask, np.empty(FIRST_KEYS, np.uint64), ptr, np.empty(4 * FIRST_KEYS, np.int32)


@njit(cache=True, nogil=True)
def _stamps_grown(stamp, n_keys):
    """``stamp`` with twice the room, the new part −1."""
    s2 = np.full(2 * stamp.shape[0], -1, np.int64)
    s2[:n_keys] = stamp[:n_keys]
    return s2


@njit(cache=True, nogil=True, inline="always")
def _new_class(table, tmask, slot, hashes, h, ptr, items, n_items, k, buf, m):
    """Class ``k`` (the next one) made for the key ``buf[:m]`` (hash ``h``) in the empty probe
    ``slot``, the tables grown with the classes: hashes and key offsets doubled when full
    (`gamma.keys_grown`), the key stored (`gamma.store_new_key`), the probe table rehashed at
    twice the size past half load (`gamma.rehashed`).  Returns (table, mask, hashes, ptr,
    items, n_items)."""
    if k == hashes.shape[0]:
        hashes, ptr = keys_grown(hashes, ptr, k)
    items, n_items = store_new_key(table, slot, hashes, h, ptr, items, n_items, k, buf, m)
    if 2 * (k + 1) + 2 > table.shape[0]:
        table, tmask = rehashed(hashes, k + 1, 2 * table.shape[0])
    return table, tmask, hashes, ptr, items, n_items


@njit(cache=True, nogil=True, inline="always")
def _has_room(table, hashes, items, n_items, k, m):
    """Whether class ``k`` with a key of ``m`` items is stored without growing a table
    (`_new_class`' three tests, none true)."""
    return k < hashes.shape[0] and n_items + m <= items.shape[0] and 2 * (k + 1) + 2 <= table.shape[0]


@njit(cache=True, nogil=True, inline="always")
def _store_in_place(table, slot, hashes, h, ptr, items, n_items, k, buf, m):
    """`gamma.store_new_key` where ``items`` has room (`_has_room`): returns the new n_items."""
    table[slot] = k
    hashes[k] = h
    items[n_items: n_items + m] = buf[:m]
    ptr[k + 1] = n_items + m
    return n_items + m


@njit(cache=True, nogil=True)
def _gamma_run(i, func, end_index, cls, table, tmask, hashes, ptr, items, n_items, n_cls, stamp_f, stamp_c, zob,
               buf):
    """`gamma_classes_grown`'s sweep from call ``i`` down while its tables have room: stops
    at the first call whose new class needs a table grown, its key in ``buf[:m]``.  No array
    is rebound here, so numba counts no references per call (a loop that may rebind one
    raises and drops every such array's count on every pass: 4·10^6 atomic pairs a compare
    of 10^6 calls).  Returns (that call or -1, n_items, n_cls, slot, h, m)."""
    while i >= 0:
        found, slot, h, m = find_gamma(i, func, end_index, cls, ptr, items, stamp_f, stamp_c, zob, buf, table, tmask,
                                       hashes)
        if found < 0:
            if not (_has_room(table, hashes, items, n_items, n_cls, m) and n_cls < stamp_c.shape[0]):
                return i, n_items, n_cls, slot, h, m
            n_items = _store_in_place(table, slot, hashes, h, ptr, items, n_items, n_cls, buf, m)
            found = n_cls
            n_cls += 1
        cls[i] = found
        i -= 1
    return i, n_items, n_cls, np.int64(0), np.uint64(0), np.int64(0)


@njit(cache=True, nogil=True)
def gamma_classes_grown(func, end_index, n_func, seed):
    """Γ-set class of every call (TraceDiff Sec. III, Eq. 2): Γ(i) = {func[i]} ∪ ⋃ Γ(children),
    hash-consed in a reverse sweep over calls in per-thread pre-order: the union is built from
    the distinct classes of i's children (each class's set stored once), marking functions with
    a stamp array (`gamma.find_gamma`); the set's hash is the XOR of ``keyed_start(f, seed)``
    over its elements (order-free), and a table hit is confirmed element by element.  Its
    tables grow with the classes (the module docstring), between runs of `_gamma_run`.
    Returns ``(cls, set_ptr, set_items)``: the set of class k is
    ``set_items[set_ptr[k]:set_ptr[k+1]]``, sorted ascending; class ids in order of creation
    (last call first)."""
    n = func.shape[0]
    cls = np.empty(n, np.int32)
    table, tmask, hashes, ptr, items = _first_tables()
    n_items = 0
    n_cls = 0
    stamp_f, zob, buf = set_scratch(n_func, seed)
    stamp_c = np.full(FIRST_KEYS, -1, np.int64)
    i = n - 1
    while i >= 0:
        i, n_items, n_cls, slot, h, m = _gamma_run(i, func, end_index, cls, table, tmask, hashes, ptr, items, n_items,
                                                   n_cls, stamp_f, stamp_c, zob, buf)
        if i < 0:
            break
        # call i's new class needs room: the tables grown as before, its key stored
        if n_cls == stamp_c.shape[0]:
            stamp_c = _stamps_grown(stamp_c, n_cls)
        table, tmask, hashes, ptr, items, n_items = _new_class(table, tmask, slot, hashes, h, ptr, items, n_items,
                                                               n_cls, buf, m)
        cls[i] = n_cls
        n_cls += 1
        i -= 1
    set_ptr = ptr[: n_cls + 1].copy()
    set_items = items[:n_items].copy()
    for k in range(n_cls):
        set_items[set_ptr[k]: set_ptr[k + 1]].sort()
    return cls, set_ptr, set_items


@njit(cache=True, nogil=True)
def _shape_run(i, func, end_index, shape, table, tmask, hashes, kptr, keys, n_keys, n_cls, buf, seed):
    """`shape_classes_grown`'s sweep from call ``i`` down while its tables have room (as
    `_gamma_run`).  Returns (the call that stopped it or -1, n_keys, n_cls, slot, h, m)."""
    while i >= 0:
        m, h = child_key(i, func, end_index, shape, buf, seed)
        slot, found = find_key(table, tmask, hashes, kptr, keys, h, buf, m)
        if found < 0:
            if not _has_room(table, hashes, keys, n_keys, n_cls, m):
                return i, n_keys, n_cls, slot, h, m
            n_keys = _store_in_place(table, slot, hashes, h, kptr, keys, n_keys, n_cls, buf, m)
            found = n_cls
            n_cls += 1
        shape[i] = found
        i -= 1
    return i, n_keys, n_cls, np.int64(0), np.uint64(0), np.int64(0)


@njit(cache=True, nogil=True)
def shape_classes_grown(func, end_index, seed):
    """Class of every call's *ordered* subtree (SEAT Sec. 2.9, the Compact Trace Format's
    "identical subtrees stored once"): equal ids ⇔ identical subtrees.  The key of call i is
    (func[i], shape(c_1), ..., shape(c_m)) over its children in call order, hash-consed in
    one reverse sweep (keyed hash chain, ``seed``: `gamma.process_hash_seed`, verified
    against the stored key), its tables grown with the classes (the module docstring),
    between runs of `_shape_run`.  Returns ``(shape, n_shapes)``."""
    n = func.shape[0]
    shape = np.empty(n, np.int32)
    table, tmask, hashes, kptr, keys = _first_tables()
    buf = np.empty(max(n, 1) + 1, np.int32)
    n_keys = 0
    n_cls = 0
    i = n - 1
    while i >= 0:
        i, n_keys, n_cls, slot, h, m = _shape_run(i, func, end_index, shape, table, tmask, hashes, kptr, keys, n_keys,
                                                  n_cls, buf, seed)
        if i < 0:
            break
        table, tmask, hashes, kptr, keys, n_keys = _new_class(table, tmask, slot, hashes, h, kptr, keys, n_keys,
                                                              n_cls, buf, m)
        shape[i] = n_cls
        n_cls += 1
        i -= 1
    return shape, n_cls
