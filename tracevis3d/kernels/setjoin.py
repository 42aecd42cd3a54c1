"""Exact Jaccard set-similarity join of Γ-set classes (TraceDiff Sec. III, Eq. 3): the
test every join shares, and the brute-force baseline.

TraceDiff: Trümper, Döllner, Telea, "Multiscale visual comparison of execution traces".
A match is a pair (x, y), x a Γ-set of trace A and y one of trace B, with
J(x, y) = |x ∩ y| / |x ∪ y| > τ.  We join *distinct* sets (classes), never calls.
Two exact joins with the same output, and a brute-force baseline:

- `setjoin_tree.jaccard_join_tree` / `setjoin_tree.jaccard_join_tree_overlaps` (the
  default of `compare`): uses the tree, Γ of a call ⊇ Γ of each child (Eq. 2); its plan
  (heir forest, delta sets, windows) is `setjoin_forest`, its counting walk and readout
  `setjoin_walk`;
- `setjoin_prefix.jaccard_join`: the set-similarity-join filters (size filter, prefix
  filter, bitset verification);
- `jaccard_join_bruteforce` (here): popcount over every pair (the twin and baseline).
`setjoin_tiers.class_pair_tiers` reads the joined class pairs as top-k similarity tiers.

This module holds what they share: the test J > τ in float64 and its exact integer form
(`min_overlap`: J > τ ⇔ |x ∩ y| ≥ min_overlap(|x|, |y|, τ)), similarities recomputed from
stored overlaps (`overlap_similarity`, `overlaps_to_similarity`, `overlap_dtype`), the
size filter's margin (τ|x| < |y| < |x|/τ, widened by 1e-9) and binary searches, class
sets as ranked CSR rows and as bitsets, and the brute-force join over bitsets.

Tried and not used: pruning B's class DAG per query (a class p with
|Γ_p ∩ x| ≤ τ|x| rules out every class below it).  Exact, but measured on a
synthetic pair (9k × 9k classes, 4M pairs) it cost 1.9× the filter join
(0.32 s vs 0.17 s): at τ = 0.2 about 5% of all class pairs match and the walk
still visits every match and its frontier with a popcount each.
The comparison J > τ is done as ``inter / union > tau`` in float64, the same
expression the brute-force twins use, so results agree bit for bit.
"""
import numpy as np
from numba import njit, prange


@njit(cache=True, nogil=True)
def sets_to_bitsets(set_ptr, set_items, classes, n_words):
    """Row r = bitset of the set of class ``classes[r]`` (bit f set ⇔ f ∈ set)."""
    k = classes.shape[0]
    bits = np.zeros((k, n_words), np.uint64)
    for r in range(k):
        c = classes[r]
        for j in range(set_ptr[c], set_ptr[c + 1]):
            f = set_items[j]
            bits[r, f >> 6] |= np.uint64(1) << np.uint64(f & 63)
    return bits


@njit(cache=True, nogil=True, inline="always")
def popcount64(x):
    """Number of set bits of a uint64 (SWAR popcount)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True, nogil=True, inline="always")
def _and_popcount(bits_a, ra, bits_b, rb, w0, w1):
    s = 0
    for w in range(w0, w1):
        s += popcount64(bits_a[ra, w] & bits_b[rb, w])
    return s


@njit(cache=True, parallel=True, nogil=True)
def jaccard_join_bruteforce(bits_a, size_a, bits_b, size_b, tau):
    """All (r, q) with |a_r ∩ b_q| / |a_r ∪ b_q| > tau, by popcount over every pair.

    The plain numba bitset baseline (no filters): O(|A| |B| words).  Returns
    ``(row_a, row_b, sim)`` sorted by (row_a, row_b).
    """
    na = bits_a.shape[0]
    nb = bits_b.shape[0]
    nw = bits_a.shape[1]
    counts = np.zeros(na, np.int64)
    for r in prange(na):
        c = 0
        for q in range(nb):
            inter = _and_popcount(bits_a, r, bits_b, q, 0, nw)
            if inter > 0 and inter / (size_a[r] + size_b[q] - inter) > tau:
                c += 1
        counts[r] = c
    off = np.zeros(na + 1, np.int64)
    for r in range(na):
        off[r + 1] = off[r] + counts[r]
    out_a = np.empty(off[na], np.int32)
    out_b = np.empty(off[na], np.int32)
    out_s = np.empty(off[na], np.float64)
    for r in prange(na):
        j = off[r]
        for q in range(nb):
            inter = _and_popcount(bits_a, r, bits_b, q, 0, nw)
            if inter > 0:
                s = inter / (size_a[r] + size_b[q] - inter)
                if s > tau:
                    out_a[j] = r
                    out_b[j] = q
                    out_s[j] = s
                    j += 1
    return out_a, out_b, out_s


SAFE = 1e-9  # relative slack so float rounding can only widen a filter, never narrow it


@njit(cache=True, nogil=True)
def ranked_sets(set_ptr, set_items, classes, rank):
    """CSR of the sets of ``classes`` with elements replaced by rank, ascending."""
    k = classes.shape[0]
    ptr = np.zeros(k + 1, np.int64)
    for r in range(k):
        ptr[r + 1] = ptr[r] + set_ptr[classes[r] + 1] - set_ptr[classes[r]]
    items = np.empty(ptr[k], np.int32)
    for r in range(k):
        c = classes[r]
        lo = ptr[r]
        for j in range(set_ptr[c], set_ptr[c + 1]):
            items[lo + j - set_ptr[c]] = rank[set_items[j]]
        items[lo: ptr[r + 1]].sort()
    return ptr, items


@njit(cache=True, nogil=True, _nrt=False)
def first_greater(a, lo, hi, v):
    """Smallest j in [lo, hi) with a[j] > v (hi if none); a sorted ascending."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] > v:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True, nogil=True, _nrt=False)
def min_overlap(nx, ny, tau):
    """Smallest o with o / (nx + ny − o) > tau in float64 (the test every twin
    uses); J is increasing in the overlap, so J > τ ⇔ |x ∩ y| ≥ min_overlap."""
    o = int(np.floor(tau * (nx + ny) / (1.0 + tau))) - 1
    if o < 1:
        o = 1
    while o <= min(nx, ny) and not (o / (nx + ny - o) > tau):
        o += 1
    return o


@njit(cache=True, nogil=True, inline="always")
def overlap_similarity(inter, nx, ny):
    """J = inter / (|x| + |y| − inter) in float64 (the expression of every join
    and twin, so a similarity made from a stored overlap is bit-identical)."""
    c = np.int64(inter)
    return c / (nx + ny - c)


@njit(cache=True, nogil=True, inline="always")
def lower_bound(a, lo, hi, v):
    """Smallest j in [lo, hi) with a[j] >= v (hi if none); a sorted ascending."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] >= v:
            hi = mid
        else:
            lo = mid + 1
    return lo


def overlap_dtype(set_ptr, classes_a, classes_b):
    """The dtype of the overlap counters and stored overlaps of a join of sets ``classes_a``
    with ``classes_b``: no overlap |x ∩ y| exceeds the smaller of the two sides' largest sets,
    so uint16 while that bound + 1 fits (the readouts' "never" threshold, min(|x|, |y|) + 1,
    must too), else int32.  Bounded by the sets, not the vocabulary: a trace of more than 65535
    function names keeps 16-bit counters while its classes stay below that size (the synthetic
    10^6 pair with 66,000 unused names: its join 2.99 s on int32, 2.24 s on uint16)."""
    size = np.diff(set_ptr)

    def largest(classes):
        classes = np.asarray(classes)
        return int(size[classes].max()) if classes.size else 0
    bound = min(largest(classes_a), largest(classes_b))
    return np.dtype(np.uint16) if bound < np.iinfo(np.uint16).max else np.dtype(np.int32)


@njit(cache=True, parallel=True, nogil=True)
def overlaps_to_similarity(ptr, other, inter, size_row, size_other):
    """J = inter / (|x| + |y| − inter) per CSR entry, float64 (the same
    expression as the joins and twins, so bit-identical)."""
    n_rows = ptr.shape[0] - 1
    sim = np.empty(other.shape[0], np.float64)
    for r in prange(n_rows):
        nx = size_row[r]
        for j in range(ptr[r], ptr[r + 1]):
            c = np.int64(inter[j])
            sim[j] = c / (nx + size_other[other[j]] - c)
    return sim
