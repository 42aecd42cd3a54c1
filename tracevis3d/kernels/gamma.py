"""Hash-consing of subtrees: Γ-set classes and exact-shape classes.

TraceDiff (Trümper et al., Sec. III, Eq. 2) compares calls by
Γ(f) = { F(f') : f' in the subtree S(f) }, the set of function ids below f.
Many calls share the same Γ-set (every leaf call of ``len`` has Γ = {len}), so
we give every distinct set one id (a *class*) and compute on classes, not calls.

The same machinery, with ordered children instead of sets, gives the classes of
*identical subtrees* that SEAT's Compact Trace Format stores once (SEAT Sec. 2.9:
"identical subtrees hashed in post-order").  The sweeps themselves are
`gamma_sweep.gamma_classes_grown` and `gamma_sweep.shape_classes_grown`; this module holds
their parts.

Both sweeps are one reverse sweep over calls in per-thread pre-order (children
have larger indices than their parent, and the children of ``i`` are
``i+1, end_index[i+1], ...`` up to ``end_index[i]``), with an open-addressing
hash table whose entries are verified element by element, so equal ids mean
equal sets/shapes, never a hash collision.

Every hash-consing table (here, `kernels.dag`, `kernels.patterns`, `kernels.cone`) is
*keyed*: its hashes start from a per-process random ``seed`` (`process_hash_seed`,
passed to the kernels as an argument, so they stay pure), so that a trace crafted to make
its keys collide under a known hash (an unkeyed splitmix64 chain: 917 KB took 84 s in the
cone tree instead of 0.04 s) costs what a random one does.  Ids are numbered in creation
order, never by hash, so results do not depend on the seed.

The probes (`find_key`, `gather_set`, `find_set`, `find_gamma`) are plain kernels, not
inlined helpers: numba passes a called kernel its arrays borrowed, but an inlined helper whose
loops return early gets its array arguments' reference counts raised and dropped at every
call, an atomic pair each (the shape sweep of 10^6 synthetic calls: 0.104 s inlined, 0.037 s
called).  The sweeps that call them rebind no array in their loops, for the same reason
(`gamma_sweep`).
"""
import os

import numpy as np
from numba import njit

_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def splitmix64(x):
    """The splitmix64 finaliser: a fixed, well-mixed 64-bit hash of ``x``."""
    z = np.uint64(x) + _GOLD
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


_SEED = []


def process_hash_seed() -> np.uint64:
    """This process's random 64-bit hash seed (from os.urandom, drawn once)."""
    if not _SEED:
        _SEED.append(np.uint64(int.from_bytes(os.urandom(8), "little")))
    return _SEED[0]


@njit(cache=True, nogil=True, inline="always")
def keyed_start(x, seed):
    """The first link of a keyed hash chain: splitmix64(x XOR seed)."""
    return splitmix64(np.uint64(x) ^ np.uint64(seed))


@njit(cache=True, nogil=True, inline="always")
def keyed_step(h, x):
    """The next link of a keyed hash chain: splitmix64(h XOR x) (h already carries the seed)."""
    return splitmix64(np.uint64(h) ^ np.uint64(x))


@njit(cache=True, nogil=True)
def table_probes(hashes, tsize):
    """Slots looked at to insert keys with these ``hashes`` (all distinct keys) one by one
    into an empty linear-probing table of ``tsize`` slots (a power of two), as every
    hash-consing table here does: n for well-spread hashes, ~n²/2 when they all collide.
    The measure of a hash flood (tests and bench), independent of the machine."""
    table = np.zeros(tsize, np.bool_)
    tmask = tsize - 1
    probes = 0
    for k in range(hashes.shape[0]):
        slot = np.int64(hashes[k] & np.uint64(tmask))
        probes += 1
        while table[slot]:
            slot = (slot + 1) & tmask
            probes += 1
        table[slot] = True
    return probes


@njit(cache=True, nogil=True)
def _grow_int32(a, need):
    if need <= a.shape[0]:
        return a
    cap = a.shape[0] * 2
    while cap < need:
        cap *= 2
    b = np.empty(cap, np.int32)
    b[: a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def table_size(n):
    """The open-addressing table's size for ``n`` keys: the least power of two (at least 16) >= 2n + 2, so the load
    stays under one half."""
    size = 16
    while size < 2 * n + 2:
        size *= 2
    return size


@njit(cache=True, nogil=True)
def key_table(n):
    """An empty hash-consing table for up to ``n`` keys of a reverse sweep over ``n``
    calls: (table (load <= 1/2), mask, hashes, key pointers, key items, a key buffer)."""
    tsize = table_size(n)
    return (np.full(tsize, -1, np.int32), tsize - 1, np.empty(max(n, 1), np.uint64),
            np.zeros(max(n, 1) + 1, np.int64), np.empty(max(16, 2 * n), np.int32),
            np.empty(max(n, 1) + 1, np.int32))


@njit(cache=True, nogil=True)
def find_key(table, tmask, hashes, ptr, items, h, buf, m):
    """Linear probe of the open-addressing ``table`` for key ``buf[:m]`` with hash h:
    (the slot the probe stopped at, the key's class or -1).  A hash hit is confirmed item
    by item against ``items[ptr[k]:ptr[k+1]]``, so equal classes mean equal keys."""
    slot = np.int64(h & np.uint64(tmask))
    while True:
        k = table[slot]
        if k < 0:
            return slot, -1
        if hashes[k] == h and ptr[k + 1] - ptr[k] == m:
            same = True
            for j in range(m):
                if items[ptr[k] + j] != buf[j]:
                    same = False
                    break
            if same:
                return slot, k
        slot = (slot + 1) & tmask


@njit(cache=True, nogil=True, inline="always")
def store_new_key(table, slot, hashes, h, ptr, items, n_items, k, buf, m):
    """Store key ``buf[:m]`` (hash h) as class k in the empty table slot the
    probe stopped at: its items appended to ``items`` (grown if needed),
    ``ptr[k + 1]`` set.  Returns (items, n_items)."""
    table[slot] = k
    hashes[k] = h
    items = _grow_int32(items, n_items + m)
    items[n_items: n_items + m] = buf[:m]
    n_items += m
    ptr[k + 1] = n_items
    return items, n_items


@njit(cache=True, nogil=True)
def gather_set(i, func, end_index, cls, ptr, items, stamp_f, stamp_c, zob, buf):
    """Γ(i) = {func[i]} ∪ the sets of i's children's classes, gathered into ``buf[:m]`` in the
    order met, each function once (stamped ``i`` in ``stamp_f``; each child class once, in
    ``stamp_c``), with its order-free hash h = XOR of ``zob`` over the set.  Returns (m, h, the
    number of distinct child classes, the last of them or -1)."""
    f = func[i]
    stamp_f[f] = i
    buf[0] = f
    m = 1
    h = zob[f]
    c = i + 1
    e_i = end_index[i]
    only = -1  # the single distinct child class, if there is just one
    n_distinct = 0
    while c < e_i:
        k = cls[c]
        if stamp_c[k] != i:
            stamp_c[k] = i
            n_distinct += 1
            only = k
            for j in range(ptr[k], ptr[k + 1]):
                e = items[j]
                if stamp_f[e] != i:
                    stamp_f[e] = i
                    buf[m] = e
                    m += 1
                    h ^= zob[e]
        c = end_index[c]
    return m, h, n_distinct, only


@njit(cache=True, nogil=True)
def find_set(table, tmask, hashes, ptr, items, stamp_f, i, h, m):
    """Linear probing from slot ``h & tmask`` for the stored set equal to the ``m`` functions
    stamped ``i`` in ``stamp_f``: same hash, same size, every item stamped.  Returns (the slot
    where it was found or the empty slot that ends the probe, its class or -1)."""
    slot = np.int64(h & np.uint64(tmask))
    found = -1
    while True:
        k = table[slot]
        if k < 0:
            break
        if hashes[k] == h and ptr[k + 1] - ptr[k] == m:
            same = True
            for j in range(ptr[k], ptr[k + 1]):
                if stamp_f[items[j]] != i:
                    same = False
                    break
            if same:
                found = k
                break
        slot = (slot + 1) & tmask
    return slot, found


@njit(cache=True, nogil=True)
def rehashed(hashes, n_keys, tsize):
    """A linear-probing table of ``tsize`` slots (a power of two) holding keys 0..n_keys-1 by
    their ``hashes`` (slot = hash & (tsize - 1), then the next free one): (table, mask)."""
    table = np.full(tsize, -1, np.int32)
    tmask = tsize - 1
    for k in range(n_keys):
        slot = np.int64(hashes[k] & np.uint64(tmask))
        while table[slot] >= 0:
            slot = (slot + 1) & tmask
        table[slot] = k
    return table, tmask


@njit(cache=True, nogil=True)
def keys_grown(hashes, ptr, n_keys):
    """``hashes`` / ``ptr`` (key offsets, ``ptr[0]`` = 0) with twice the room, the first
    ``n_keys`` kept (``ptr`` past ``n_keys`` is written when a key is stored)."""
    cap = 2 * hashes.shape[0]
    h2 = np.empty(cap, np.uint64)
    h2[:n_keys] = hashes[:n_keys]
    p2 = np.empty(cap + 1, np.int64)
    p2[:n_keys + 1] = ptr[:n_keys + 1]
    return h2, p2


@njit(cache=True, nogil=True)
def child_key(i, func, end_index, cls, buf, seed):
    """The ordered key of call i over its children c_1..c_k in call order (SEAT Sec. 2.9):
    ``buf[:m]`` = (func[i], cls[c_1], ..., cls[c_k]), m = k + 1, and its keyed hash chain
    h = keyed_step(... keyed_step(keyed_start(func[i], seed), cls[c_1]) ..., cls[c_k]).
    Returns (m, h)."""
    buf[0] = func[i]
    m = 1
    h = keyed_start(func[i], seed)
    c = i + 1
    while c < end_index[i]:
        buf[m] = cls[c]
        m += 1
        h = keyed_step(h, cls[c])
        c = end_index[c]
    return m, h


@njit(cache=True, nogil=True)
def set_scratch(n_func, seed):
    """A Γ-set sweep's per-function scratch: stamps (all -1), each function's order-free key
    ``zob[f] = keyed_start(f, seed)`` (a set's hash is their XOR) and a set buffer."""
    stamp_f = np.full(n_func, -1, np.int64)
    zob = np.empty(n_func, np.uint64)
    for f in range(n_func):
        zob[f] = keyed_start(f, seed)
    return stamp_f, zob, np.empty(max(n_func, 1), np.int32)


@njit(cache=True, nogil=True)
def find_gamma(i, func, end_index, cls, ptr, items, stamp_f, stamp_c, zob, buf, table, tmask, hashes):
    """Γ(i) gathered (`gather_set`) and looked up: (class, slot, h, m).  The class is the only
    distinct child class when Γ(i) = Γ(child) (func[i] already in it), else the stored set
    equal to ``buf[:m]`` (`find_set`: by its order-free hash h, confirmed by the stamps), or
    -1 when the set is new (to be stored at ``slot``)."""
    m, h, n_distinct, only = gather_set(i, func, end_index, cls, ptr, items, stamp_f, stamp_c, zob, buf)
    if n_distinct == 1 and m == ptr[only + 1] - ptr[only]:
        return only, -1, h, m
    slot, found = find_set(table, tmask, hashes, ptr, items, stamp_f, i, h, m)
    return found, slot, h, m


@njit(cache=True, nogil=True, inline="always")
def _set_hash(zob, items, lo, hi):
    """The order-free hash of the set items[lo:hi]: the XOR of its elements' keys ``zob``
    (`keyed_start`), as `gamma_sweep.gamma_classes_grown` builds it element by element."""
    h = np.uint64(0)
    for j in range(lo, hi):
        h ^= zob[items[j]]
    return h


@njit(cache=True, nogil=True)
def merge_gamma_classes(cls_a, ptr_a, items_a, cls_b, ptr_b, items_b, n_func, seed):
    """The classes of two traces swept apart (`gamma_sweep.gamma_classes_grown` of A and of B, the same
    function ids and seed) as ONE sweep of A's calls followed by B's would number them: B's
    classes keep their ids (that sweep meets B's calls first, as the reverse sweep of the
    concatenation does), then A's sets not among B's, in A's order of creation.  Each A set is
    looked up among B's by its order-free hash and confirmed item by item (both sorted:
    `find_key`).
    Returns ``(cls, set_ptr, set_items)`` over A's calls then B's."""
    nb = ptr_b.shape[0] - 1
    na = ptr_a.shape[0] - 1
    tsize = table_size(nb)
    tmask = tsize - 1
    table = np.full(tsize, -1, np.int32)
    hashes = np.empty(max(nb, 1), np.uint64)
    _, zob, _ = set_scratch(n_func, seed)
    for k in range(nb):
        h = _set_hash(zob, items_b, ptr_b[k], ptr_b[k + 1])
        hashes[k] = h
        slot, _ = find_key(table, tmask, hashes, ptr_b, items_b, h, items_b[ptr_b[k]:ptr_b[k + 1]],
                            ptr_b[k + 1] - ptr_b[k])
        table[slot] = k
    to = np.empty(max(na, 1), np.int32)
    n_new = 0
    n_new_items = 0
    for k in range(na):
        m = ptr_a[k + 1] - ptr_a[k]
        h = _set_hash(zob, items_a, ptr_a[k], ptr_a[k + 1])
        _, found = find_key(table, tmask, hashes, ptr_b, items_b, h, items_a[ptr_a[k]:ptr_a[k + 1]], m)
        if found < 0:
            found = nb + n_new
            n_new += 1
            n_new_items += m
        to[k] = found
    set_ptr = np.empty(nb + n_new + 1, np.int64)
    set_ptr[:nb + 1] = ptr_b
    set_items = np.empty(ptr_b[nb] + n_new_items, np.int32)
    set_items[:ptr_b[nb]] = items_b
    t = nb
    for k in range(na):
        if to[k] >= nb:
            m = ptr_a[k + 1] - ptr_a[k]
            set_items[set_ptr[t]:set_ptr[t] + m] = items_a[ptr_a[k]:ptr_a[k + 1]]
            set_ptr[t + 1] = set_ptr[t] + m
            t += 1
    n_a_calls = cls_a.shape[0]
    cls = np.empty(n_a_calls + cls_b.shape[0], np.int32)
    for i in range(n_a_calls):
        cls[i] = to[cls_a[i]]
    cls[n_a_calls:] = cls_b
    return cls, set_ptr, set_items


@njit(cache=True, nogil=True)
def renumber_sets_by_size(cls, set_ptr, set_items):
    """Renumber set classes by (set size, old id) ascending: returns new
    ``(cls, set_ptr, set_items)`` with the same sets.  With ids in size order,
    any ascending list of classes is also in size order, which lets the
    Jaccard join emit matches straight from its size-ranked counters
    (`kernels.setjoin_walk._readout`)."""
    n_cls = set_ptr.shape[0] - 1
    size = np.empty(n_cls, np.int64)
    for k in range(n_cls):
        size[k] = set_ptr[k + 1] - set_ptr[k]
    order = np.argsort(size, kind="mergesort")
    new_id = np.empty(n_cls, np.int32)
    new_ptr = np.zeros(n_cls + 1, np.int64)
    for t in range(n_cls):
        new_id[order[t]] = t
        new_ptr[t + 1] = new_ptr[t] + size[order[t]]
    new_items = np.empty(set_items.shape[0], np.int32)
    for t in range(n_cls):
        k = order[t]
        j = new_ptr[t]
        for i in range(set_ptr[k], set_ptr[k + 1]):
            new_items[j] = set_items[i]
            j += 1
    new_cls = np.empty(cls.shape[0], np.int32)
    for i in range(cls.shape[0]):
        new_cls[i] = new_id[cls[i]]
    return new_cls, new_ptr, new_items
