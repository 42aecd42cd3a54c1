"""Byte spans of a scanned file, in numba: interning (equal strings → one id), gathering.

`intern_spans` gives equal byte strings ``buf[off:off+ln]`` the same id by open addressing
with verification (8 bytes at a time; ids exact, in order of first appearance), hashing with the
cheap `span_word_hash` (FNV-1a's prime over the length and the first and last 16 bytes as words)
and, once probing and failed comparisons pass 2 × (bytes + rows), again with the keyed
`span_full_hash` (FNV-1a from a seeded basis, then the splitmix64 finaliser `_mix64`,
Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014), whose
expected probes are O(1): linear time even for names built to collide.  `intern_pairs`
does the same for (int64, int64) pairs.  `gather_spans` / `gather_fixed` copy spans into
one blob or a fixed-width matrix (numpy's bulk string→float conversion);
`renumber_by_first_use` renumbers ids by first appearance.
"""
import numpy as np
from numba import njit

from .sidetables import same_bytes, word8


@njit(cache=True, nogil=True)
def span_word_hash(buf, off, ln):
    """A cheap hash of a byte span for interning: FNV-1a's basis and prime over its length and
    the words at its start, start + 8, end - 16 and end - 8 (its first and last 16 bytes, four
    loads), each word's high bits folded down; a span shorter than 16 bytes byte by byte.
    Callers verify equality, so a weak hash costs probes, never correctness; names that differ
    only in the middle just probe more (`intern_spans` bounds that work).  (Bytes one at a time,
    as before issue 79, interning a million VizTracer names of 60 bytes took a fifth of a load.)"""
    h = np.uint64(14695981039346656037) ^ np.uint64(ln)
    p = np.uint64(1099511628211)
    if ln < 16:
        for k in range(off, off + ln):
            h = (h ^ np.uint64(buf[k])) * p
        return np.int64(h)
    a = np.uint64(off)
    b = np.uint64(off + ln - 16)
    for w in (word8(buf, a), word8(buf, a + np.uint64(8)), word8(buf, b), word8(buf, b + np.uint64(8))):
        h = (h ^ w) * p
        h ^= h >> np.uint64(29)
    return np.int64(h)


@njit(cache=True, nogil=True)
def _mix64(x):
    """splitmix64's finaliser: a bijection of uint64 that spreads every input bit."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True)
def span_full_hash(buf, off, ln, seed):
    """A keyed hash of every byte of a span: FNV-1a from a seeded basis, then
    `_mix64`.  With a random seed a file cannot be made to collide on purpose."""
    h = np.uint64(14695981039346656037) ^ np.uint64(seed) ^ np.uint64(ln)
    p = np.uint64(1099511628211)
    for k in range(off, off + ln):
        h = (h ^ np.uint64(buf[k])) * p
    return np.int64(_mix64(h))


#: the interning tables start with this many slots and double when half full: they are sized
#: by the distinct values (a few thousand names in 10^7 events), not by the rows
FIRST_TABLE_SLOTS = 1024


@njit(cache=True, nogil=True)
def _rehash(table, hashes, idmap):
    """The open-addressing tables (row, hash, id per slot) at twice the size, every entry
    moved to its slot there (its hash's low bits, then linear probing)."""
    size = table.shape[0] * 2
    mask = size - 1
    t2 = np.full(size, -1, np.int64)
    h2 = np.zeros(size, np.int64)
    m2 = np.full(size, -1, np.int32)
    for s in range(table.shape[0]):
        if table[s] >= 0:
            slot = hashes[s] & mask
            while t2[slot] >= 0:
                slot = (slot + 1) & mask
            t2[slot] = table[s]
            h2[slot] = hashes[s]
            m2[slot] = idmap[s]
    return t2, h2, m2


@njit(cache=True, nogil=True)
def _grown(first, nid):
    """``first`` (row of each id) with room for twice as many ids."""
    f2 = np.empty(2 * first.shape[0], np.int64)
    f2[:nid] = first[:nid]
    return f2


@njit(cache=True, nogil=True)
def _intern_spans_pass(buf, off, ln, valid, seed, full, budget):
    """One interning pass (see `intern_spans`); with ``full`` False it gives up
    (returns nid = -1) once probing and failed byte comparisons exceed ``budget``."""
    n = off.shape[0]
    size = FIRST_TABLE_SLOTS
    table = np.full(size, -1, np.int64)  # row index of the representative
    hashes = np.zeros(size, np.int64)
    ids = np.full(n, -1, np.int32)
    first = np.empty(size // 2, np.int64)
    idmap = np.full(size, -1, np.int32)
    nid = 0
    mask = size - 1
    work = 0
    for k in range(n):
        if not valid[k]:
            continue
        h = span_full_hash(buf, off[k], ln[k], seed) if full else span_word_hash(buf, off[k], ln[k])
        slot = h & mask
        while True:
            r = table[slot]
            if r < 0:
                table[slot] = k
                hashes[slot] = h
                idmap[slot] = nid
                ids[k] = nid
                if nid >= first.shape[0]:
                    first = _grown(first, nid)
                first[nid] = k
                nid += 1
                if 2 * nid > table.shape[0]:
                    table, hashes, idmap = _rehash(table, hashes, idmap)
                    mask = table.shape[0] - 1
                break
            if hashes[slot] == h and ln[r] == ln[k]:
                if same_bytes(buf, off[r], off[k], ln[k]):
                    ids[k] = idmap[slot]
                    break
                work += ln[k] >> 3  # (words compared, at most)
            work += 1
            if not full and work > budget:
                return ids, first, -1
            slot = (slot + 1) & mask
    return ids, first, nid


@njit(cache=True, nogil=True)
def intern_spans(buf, off, ln, valid, seed=0):
    """Give equal byte strings ``buf[off[k]:off[k]+ln[k]]`` the same id.

    Open addressing with byte-wise verification, so ids are exact (collisions
    cannot merge different strings).  Ids are assigned in order of first
    appearance, whatever the hash.  Returns (ids, first) where ``first[id]`` is the
    row that introduced the string; rows with ``valid[k] == False`` get id -1.

    Linear time: the cheap `span_word_hash` serves real names (spans compared 8 bytes at a
    time, `sidetables.same_bytes`); if probing and
    failed comparisons pass 2 x (bytes + rows) -- many names that differ only in
    the middle, or built to collide -- the pass restarts with the keyed
    `span_full_hash` (pass a random ``seed``), whose expected probes are O(1).
    """
    budget = 1024
    for k in range(off.shape[0]):
        if valid[k]:
            budget += 2 * (ln[k] + 1)
    ids, first, nid = _intern_spans_pass(buf, off, ln, valid, seed, False, budget)
    if nid < 0:
        ids, first, nid = _intern_spans_pass(buf, off, ln, valid, seed, True, 0)
    return ids, first[:nid].copy()


@njit(cache=True, nogil=True)
def intern_pairs(a, b, seed=0):
    """Ids for distinct (a[k], b[k]) int64 pairs, in order of first appearance.

    The slot comes from a keyed mix of both values (pass a random ``seed``), so
    ids chosen to share low or high bits do not pile up in one probe chain.
    Returns (ids, first_row)."""
    n = a.shape[0]
    size = FIRST_TABLE_SLOTS
    mask = size - 1
    table = np.full(size, -1, np.int64)
    hashes = np.zeros(size, np.int64)
    idmap = np.full(size, -1, np.int32)
    ids = np.empty(n, np.int32)
    first = np.empty(size // 2, np.int64)
    nid = 0
    s0 = _mix64(np.uint64(seed) ^ np.uint64(0x632BE59BD9B4E019))
    for k in range(n):
        h = np.int64(_mix64(_mix64(np.uint64(a[k]) ^ s0) + np.uint64(b[k])) >> np.uint64(1))
        slot = h & mask
        while True:
            r = table[slot]
            if r < 0:
                table[slot] = k
                hashes[slot] = h
                idmap[slot] = nid
                ids[k] = nid
                if nid >= first.shape[0]:
                    first = _grown(first, nid)
                first[nid] = k
                nid += 1
                if 2 * nid > table.shape[0]:
                    table, hashes, idmap = _rehash(table, hashes, idmap)
                    mask = table.shape[0] - 1
                break
            if a[r] == a[k] and b[r] == b[k]:
                ids[k] = idmap[slot]
                break
            slot = (slot + 1) & mask
    return ids, first[:nid].copy()


@njit(cache=True, nogil=True)
def gather_spans(buf, off, ln):
    """Concatenate byte spans into one blob; returns (blob, ptr)."""
    n = off.shape[0]
    ptr = np.zeros(n + 1, np.int64)
    for k in range(n):
        ptr[k + 1] = ptr[k] + ln[k]
    blob = np.empty(ptr[n], np.uint8)
    for k in range(n):
        blob[ptr[k]: ptr[k + 1]] = buf[off[k]: off[k] + ln[k]]
    return blob, ptr


@njit(cache=True, nogil=True)
def renumber_by_first_use(ids, n_ids):
    """New ids 0..k-1 in order of first appearance in ``ids`` (all >= 0).

    Returns (new_ids int32, old_of_new int64)."""
    remap = np.full(n_ids, -1, np.int32)
    old = np.empty(n_ids, np.int64)
    out = np.empty(ids.shape[0], np.int32)
    k = 0
    for i in range(ids.shape[0]):
        v = ids[i]
        if remap[v] < 0:
            remap[v] = k
            old[k] = v
            k += 1
        out[i] = remap[v]
    return out, old[:k].copy()


@njit(cache=True, nogil=True)
def functions_of_calls(name_id, rows, n_names):
    """The functions of calls numbered by first use: call i's name is ``name_id[rows[i]]``, an
    unnamed call's (-1) taken as name ``n_names`` (the "(unnamed)" its caller then appends), and
    func[i] = the rank of that name among the distinct names in order of first appearance over
    i = 0, 1, ... (`renumber_by_first_use` of the gathered names, without the gathered array of
    every call's name, its unnamed substitution, or the three passes that found each function's
    first call from the running maximum of ``func``).  Returns (func int32 per call, the name of
    each function int64, the first call of each function int64, whether any call is unnamed)."""
    remap = np.full(n_names + 1, -1, np.int32)
    old = np.empty(n_names + 1, np.int64)
    first = np.empty(n_names + 1, np.int64)
    out = np.empty(rows.shape[0], np.int32)
    k = 0
    unnamed = False
    for i in range(rows.shape[0]):
        v = name_id[rows[i]]
        if v < 0:
            v = n_names
            unnamed = True
        if remap[v] < 0:
            remap[v] = k
            old[k] = v
            first[k] = i
            k += 1
        out[i] = remap[v]
    return out, old[:k].copy(), first[:k].copy(), unnamed


@njit(cache=True, nogil=True)
def gather_fixed(buf, off, ln, width):
    """Byte spans copied into a zero-padded (n, width) matrix (a fixed-width
    bytes array for numpy's bulk string→float conversion)."""
    n = off.shape[0]
    out = np.zeros((n, width), np.uint8)
    for r in range(n):
        m = min(ln[r], width)
        for q in range(m):
            out[r, q] = buf[off[r] + q]
    return out
