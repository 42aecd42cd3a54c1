"""Exact Jaccard set-similarity join of Γ-set classes (TraceDiff Sec. III, Eq. 3).

A match is a pair (x, y), x a Γ-set of trace A and y one of trace B, with
J(x, y) = |x ∩ y| / |x ∪ y| > τ.  We join *distinct* sets (classes), never calls.

Filters used (all exact, none drops a true pair):
- size filter: J > τ ⇒ τ|y| < |x ∩ y| ≤ |x| and τ|x| < |y|, so |y| ∈ (τ|x|, |x|/τ);
- overlap bound: J > τ ⇔ |x ∩ y| (1+τ) > τ(|x| + |y|), so a candidate needs at least
  o_min(|x|, |y|) common elements;
- the tree (Γ of a child call ⊆ Γ of its parent, Eq. 2): in the class DAG of
  trace B, a class p with |Γ_p ∩ x| ≤ τ|x| has no descendant d with J(x, d) > τ
  (J(x, d) ≤ |Γ_d ∩ x| / |x| ≤ |Γ_p ∩ x| / |x| ≤ τ), so the whole sub-DAG is skipped;
- bitsets with popcount for the intersections (vocabularies here are ~10^3).
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


@njit(cache=True, parallel=True)
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


@njit(cache=True, nogil=True)
def build_size_sorted_index(set_ptr, set_items, classes, n_items):
    """Inverted index of the sets of ``classes``: element → rows, by size.

    Postings of element e are ``post_row[post_ptr[e]:post_ptr[e+1]]`` (row =
    position in ``classes``), sorted by set size (ties by row), with the sizes
    alongside in ``post_size`` so a size window is two binary searches.
    Returns ``(post_ptr, post_row, post_size, size)``.
    """
    k = classes.shape[0]
    size = np.empty(k, np.int64)
    for q in range(k):
        size[q] = set_ptr[classes[q] + 1] - set_ptr[classes[q]]
    order = np.argsort(size, kind="mergesort")
    post_ptr = np.zeros(n_items + 1, np.int64)
    for q in range(k):
        c = classes[q]
        for j in range(set_ptr[c], set_ptr[c + 1]):
            post_ptr[set_items[j] + 1] += 1
    for e in range(n_items):
        post_ptr[e + 1] += post_ptr[e]
    post_row = np.empty(post_ptr[n_items], np.int32)
    post_size = np.empty(post_ptr[n_items], np.int64)
    fill = post_ptr[:-1].copy()
    for oi in range(k):
        q = order[oi]
        c = classes[q]
        for j in range(set_ptr[c], set_ptr[c + 1]):
            e = set_items[j]
            post_row[fill[e]] = q
            post_size[fill[e]] = size[q]
            fill[e] += 1
    return post_ptr, post_row, post_size, size


@njit(cache=True, nogil=True)
def _first_greater(a, lo, hi, v):
    """Smallest j in [lo, hi) with a[j] > v (hi if none); a sorted ascending."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] > v:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True, nogil=True)
def _first_not_less(a, lo, hi, v):
    """Smallest j in [lo, hi) with a[j] >= v (hi if none); a sorted ascending."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] >= v:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True, nogil=True)
def _scan_row(r, set_ptr, set_items, classes_a, tau, post_ptr, post_row, post_size, size_b,
              stamp, counter, cand, out_b, out_s, write):
    """Matches of row r of A: ScanCount over the size window, exact overlaps.

    For x = the set of A's row r, every y with J(x, y) > τ has τ|x| < |y| < |x|/τ
    (size filter).  Scanning the postings of each e ∈ x restricted to that size
    window counts |x ∩ y| exactly for every y in the window; then
    J = |x ∩ y| / (|x| + |y| − |x ∩ y|).  Returns the number of matches; when
    ``write`` the matched rows of B and similarities go to out_b/out_s (unsorted).
    """
    c = classes_a[r]
    nx = set_ptr[c + 1] - set_ptr[c]
    lo_size = tau * nx          # |y| must be > lo_size
    hi_size = nx / tau          # |y| must be < hi_size
    nc = 0
    for j in range(set_ptr[c], set_ptr[c + 1]):
        e = set_items[j]
        a = post_ptr[e]
        b = post_ptr[e + 1]
        k = _first_greater(post_size, a, b, lo_size)
        while k < b and post_size[k] < hi_size:
            q = post_row[k]
            if stamp[q] != r:
                stamp[q] = r
                counter[q] = 0
                cand[nc] = q
                nc += 1
            counter[q] += 1
            k += 1
    m = 0
    for t in range(nc):
        q = cand[t]
        inter = counter[q]
        s = inter / (nx + size_b[q] - inter)
        if s > tau:
            if write:
                out_b[m] = q
                out_s[m] = s
            m += 1
    return m


@njit(cache=True, parallel=True)
def jaccard_join(set_ptr, set_items, classes_a, classes_b, tau, n_items):
    """Every (r, q) with J(set(classes_a[r]), set(classes_b[q])) > tau, exactly.

    TraceDiff Sec. III, Eq. 3 on distinct Γ-sets.  An inverted index of B sorted
    by set size turns the size filter τ|x| < |y| < |x|/τ into a contiguous slice
    of each posting list; ScanCount over those slices gives |x ∩ y| exactly
    (no verification step, no vocabulary limit).  Rows of A run in parallel in
    two passes (count, then fill), so the output order is deterministic: sorted
    by (r, q).  Returns ``(row_a, row_b, sim)``.
    """
    na = classes_a.shape[0]
    nb = classes_b.shape[0]
    post_ptr, post_row, post_size, size_b = build_size_sorted_index(
        set_ptr, set_items, classes_b, n_items)
    n_chunks = 256
    counts = np.zeros(na, np.int64)
    dummy_i = np.empty(0, np.int32)
    dummy_f = np.empty(0, np.float64)
    for ch in prange(n_chunks):
        stamp = np.full(nb, -1, np.int64)
        counter = np.zeros(nb, np.int64)
        cand = np.empty(nb, np.int32)
        for r in range(ch, na, n_chunks):
            counts[r] = _scan_row(r, set_ptr, set_items, classes_a, tau, post_ptr, post_row,
                                  post_size, size_b, stamp, counter, cand, dummy_i, dummy_f, False)
    off = np.zeros(na + 1, np.int64)
    for r in range(na):
        off[r + 1] = off[r] + counts[r]
    out_a = np.empty(off[na], np.int32)
    out_b = np.empty(off[na], np.int32)
    out_s = np.empty(off[na], np.float64)
    for ch in prange(n_chunks):
        stamp = np.full(nb, -1, np.int64)
        counter = np.zeros(nb, np.int64)
        cand = np.empty(nb, np.int32)
        for r in range(ch, na, n_chunks):
            lo = off[r]
            hi = off[r + 1]
            _scan_row(r, set_ptr, set_items, classes_a, tau, post_ptr, post_row, post_size,
                      size_b, stamp, counter, cand, out_b[lo:hi], out_s[lo:hi], True)
            order = np.argsort(out_b[lo:hi])
            ob = out_b[lo:hi][order]
            os_ = out_s[lo:hi][order]
            out_b[lo:hi] = ob
            out_s[lo:hi] = os_
            out_a[lo:hi] = r
    return out_a, out_b, out_s
