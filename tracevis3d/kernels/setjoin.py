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


_SAFE = 1e-9  # relative slack so float rounding can only widen a filter, never narrow it


@njit(cache=True, nogil=True)
def frequency_rank(set_ptr, set_items, classes_a, classes_b, n_items):
    """Global element order of the prefix filter: rank by how many of the sets
    contain the element (rarest first, ties by id), as in AllPairs/PPJoin."""
    freq = np.zeros(n_items, np.int64)
    for rows in (classes_a, classes_b):
        for r in range(rows.shape[0]):
            c = rows[r]
            for j in range(set_ptr[c], set_ptr[c + 1]):
                freq[set_items[j]] += 1
    order = np.argsort(freq, kind="mergesort")
    rank = np.empty(n_items, np.int32)
    for i in range(n_items):
        rank[order[i]] = i
    return rank


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


@njit(cache=True, nogil=True, inline="always")
def prefix_length(n, tau):
    """|x| − ⌊τ|x|⌋: J(x, y) > τ needs |x ∩ y| > τ|x|, i.e. ≥ ⌊τ|x|⌋ + 1 common
    elements, so one of them lies in the first |x| − ⌊τ|x|⌋ elements of x in
    any fixed global order (prefix filter).  (τ|x| is shrunk by 1e-9 first so a
    rounding error can only lengthen the prefix.)"""
    return n - int(np.floor(tau * n * (1.0 - _SAFE)))


@njit(cache=True, nogil=True)
def build_prefix_index(ptr, items, n_items, tau):
    """Inverted index of the *prefixes* of ranked sets, each posting list sorted
    by set size (ties by row), sizes alongside: ``(post_ptr, post_row, post_size, size)``."""
    k = ptr.shape[0] - 1
    size = np.empty(k, np.int64)
    for q in range(k):
        size[q] = ptr[q + 1] - ptr[q]
    order = np.argsort(size, kind="mergesort")
    post_ptr = np.zeros(n_items + 1, np.int64)
    for q in range(k):
        for j in range(ptr[q], ptr[q] + prefix_length(size[q], tau)):
            post_ptr[items[j] + 1] += 1
    for e in range(n_items):
        post_ptr[e + 1] += post_ptr[e]
    post_row = np.empty(post_ptr[n_items], np.int32)
    post_size = np.empty(post_ptr[n_items], np.int64)
    fill = post_ptr[:-1].copy()
    for oi in range(k):
        q = order[oi]
        for j in range(ptr[q], ptr[q] + prefix_length(size[q], tau)):
            e = items[j]
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
def min_overlap(nx, ny, tau):
    """Smallest o with o / (nx + ny − o) > tau in float64 (the test every twin
    uses); J is increasing in the overlap, so J > τ ⇔ |x ∩ y| ≥ min_overlap."""
    o = int(np.floor(tau * (nx + ny) / (1.0 + tau))) - 1
    if o < 1:
        o = 1
    while o <= min(nx, ny) and not (o / (nx + ny - o) > tau):
        o += 1
    return o


@njit(cache=True, nogil=True)
def _join_rows(rows, pos, a_ptr, a_items, b_ptr, b_items, tau, post_ptr, post_row, post_size,
               b_bits, b_by_size, b_size_sorted, xbits, stamp, cand, seg, out_r, out_q, out_s,
               lo, cap, brute_factor):
    """Matches of A rows ``rows[pos:]`` written to out_*[lo:lo+cap] (row order, q ascending).

    Per row x, two exact ways, the cheaper one is taken (cost model, not a filter):
    - filter: rows q of B in the size window τ|x| < |y| < |x|/τ whose indexed
      prefix shares an element with x's prefix; each candidate verified against
      a bitset of x (popcount of x & y when B's bitsets are there and |y| ≥ words/4, else y's
      elements looked up with early termination at `min_overlap`);
    - window scan: every B row of the size window (contiguous in size order),
      popcount of x & y; taken when the posting slices to scan are longer than
      ``brute_factor`` × (rows in the window × words per bitset).
    A row is written whole or not at all: the loop stops before a row when fewer
    than |B| slots are left.  Returns (next pos, entries written).
    """
    nb = b_ptr.shape[0] - 1
    nw = b_bits.shape[1]
    have_bits = b_bits.shape[0] == nb and nb > 0
    m = lo
    i = pos
    while i < rows.shape[0]:
        if (m - lo) + nb > cap:
            return i, m - lo
        r = rows[i]
        nx = a_ptr[r + 1] - a_ptr[r]
        for j in range(a_ptr[r], a_ptr[r + 1]):
            e = a_items[j]
            xbits[e >> 6] |= np.uint64(1) << np.uint64(e & 63)
        lo_size = tau * nx * (1.0 - _SAFE)
        hi_size = nx / tau * (1.0 + _SAFE)
        n_pre = prefix_length(nx, tau)
        scan_cost = 0
        for t in range(n_pre):
            e = a_items[a_ptr[r] + t]
            k0 = _first_greater(post_size, post_ptr[e], post_ptr[e + 1], lo_size)
            k1 = k0
            while k1 < post_ptr[e + 1] and post_size[k1] < hi_size:
                k1 += 1
            seg[2 * t] = k0
            seg[2 * t + 1] = k1
            scan_cost += k1 - k0
        w0 = _first_greater(b_size_sorted, 0, nb, lo_size)
        w1 = w0
        while w1 < nb and b_size_sorted[w1] < hi_size:
            w1 += 1
        nc = 0
        if have_bits and scan_cost > brute_factor * (w1 - w0) * nw:
            # the whole size window, in row order (a sweep beats sorting it)
            for q in range(nb):
                sy = b_ptr[q + 1] - b_ptr[q]
                if sy > lo_size and sy < hi_size:
                    cand[nc] = q
                    nc += 1
        else:
            for t in range(n_pre):
                for k in range(seg[2 * t], seg[2 * t + 1]):
                    q = post_row[k]
                    if stamp[q] != r:
                        stamp[q] = r
                        cand[nc] = q
                        nc += 1
            if nc > 1:
                if nc * 8 > nb:   # many candidates: read them back in row order
                    nc = 0
                    for q in range(nb):
                        if stamp[q] == r:
                            cand[nc] = q
                            nc += 1
                else:
                    cand[:nc].sort()
        for t in range(nc):
            q = cand[t]
            ny = b_ptr[q + 1] - b_ptr[q]
            inter = 0
            if have_bits and nw <= 4 * ny:
                for w in range(nw):
                    inter += popcount64(xbits[w] & b_bits[q, w])
                if inter > 0:
                    sim = inter / (nx + ny - inter)
                    if sim > tau:
                        out_r[m] = r
                        out_q[m] = q
                        out_s[m] = sim
                        m += 1
            else:
                need = min_overlap(nx, ny, tau)
                if need > nx or need > ny:
                    continue
                rem = ny
                for j in range(b_ptr[q], b_ptr[q + 1]):
                    e = b_items[j]
                    if (xbits[e >> 6] >> np.uint64(e & 63)) & np.uint64(1):
                        inter += 1
                    rem -= 1
                    if inter + rem < need:
                        break
                if inter >= need:
                    out_r[m] = r
                    out_q[m] = q
                    out_s[m] = inter / (nx + ny - inter)
                    m += 1
        for j in range(a_ptr[r], a_ptr[r + 1]):
            e = a_items[j]
            xbits[e >> 6] = np.uint64(0)
        i += 1
    return i, m - lo


@njit(cache=True, parallel=True)
def _join_round(chunk_ptr, chunk_rows, chunk_pos, a_ptr, a_items, b_ptr, b_items, tau,
                post_ptr, post_row, post_size, b_bits, b_by_size, b_size_sorted, n_items,
                out_r, out_q, out_s, cap, brute_factor):
    """One parallel round: chunk c works on rows chunk_rows[chunk_ptr[c]:...]
    from chunk_pos[c], writing into its own slice [c*cap, (c+1)*cap)."""
    n_chunks = chunk_ptr.shape[0] - 1
    nb = b_ptr.shape[0] - 1
    max_a = 1
    for r in range(a_ptr.shape[0] - 1):
        max_a = max(max_a, a_ptr[r + 1] - a_ptr[r])
    written = np.zeros(n_chunks, np.int64)
    new_pos = chunk_pos.copy()
    for c in prange(n_chunks):
        rows = chunk_rows[chunk_ptr[c]:chunk_ptr[c + 1]]
        if chunk_pos[c] >= rows.shape[0]:
            continue
        xbits = np.zeros((n_items >> 6) + 1, np.uint64)
        stamp = np.full(nb, -1, np.int64)
        cand = np.empty(nb, np.int32)
        seg = np.empty(2 * max_a, np.int64)
        p, w = _join_rows(rows, chunk_pos[c], a_ptr, a_items, b_ptr, b_items, tau, post_ptr,
                          post_row, post_size, b_bits, b_by_size, b_size_sorted, xbits, stamp,
                          cand, seg, out_r, out_q, out_s, c * cap, cap, brute_factor)
        new_pos[c] = p
        written[c] = w
    return new_pos, written


def jaccard_join(set_ptr, set_items, classes_a, classes_b, tau, n_items, n_chunks=64,
                 chunk_cap=None, brute_factor=4.0, max_bitset_bytes=256 << 20):
    """Every (r, q) with J(set(classes_a[r]), set(classes_b[q])) > tau, exactly.

    TraceDiff Sec. III, Eq. 3 on distinct Γ-sets, as a set-similarity join:
    global rarest-first element order, prefix filter on both sides (the index
    holds only the prefixes of B's sets, the probe only x's prefix), size
    filter as a binary-searched slice of each size-sorted posting list, and
    verification by popcount against a bitset of x (B's sets as bitsets when
    they fit in ``max_bitset_bytes``).  At low τ the prefix is ~80% of each set
    and candidates can be most of the size window; per row, when the posting
    slices are longer than ``brute_factor`` × window rows × words, the whole
    window is popcounted instead (same result, cheaper).  Rows of A are
    dealt round-robin to ``n_chunks`` parallel chunks, each filling its own
    output slice; a chunk that runs out of room resumes in a next round with
    twice the room, so memory stays linear in the result.
    Returns the result as a CSR over A rows, ``(ptr, row_b, sim)``, each row's
    entries sorted by row_b; deterministic.
    """
    classes_a = np.ascontiguousarray(classes_a, np.int32)
    classes_b = np.ascontiguousarray(classes_b, np.int32)
    na, nb = classes_a.shape[0], classes_b.shape[0]
    rank = frequency_rank(set_ptr, set_items, classes_a, classes_b, n_items)
    a_ptr, a_items = ranked_sets(set_ptr, set_items, classes_a, rank)
    b_ptr, b_items = ranked_sets(set_ptr, set_items, classes_b, rank)
    post_ptr, post_row, post_size, size_b = build_prefix_index(b_ptr, b_items, n_items, tau)
    n_words = (int(n_items) >> 6) + 1
    if nb * n_words * 8 <= max_bitset_bytes:
        b_bits = sets_to_bitsets(b_ptr, b_items, np.arange(nb, dtype=np.int32), n_words)
    else:  # huge vocabulary: no B bitsets, verify element by element
        b_bits = np.zeros((0, n_words), np.uint64)
    b_by_size = np.argsort(size_b, kind="mergesort").astype(np.int32)
    b_size_sorted = size_b[b_by_size]
    n_chunks = max(1, min(int(n_chunks), na))
    order = np.arange(na, dtype=np.int32)
    chunk_rows = np.concatenate([order[c::n_chunks] for c in range(n_chunks)]).astype(np.int32)
    chunk_ptr = np.zeros(n_chunks + 1, np.int64)
    chunk_ptr[1:] = np.cumsum([len(order[c::n_chunks]) for c in range(n_chunks)])
    args = (a_ptr, a_items, b_ptr, b_items, float(tau), post_ptr, post_row, post_size, b_bits,
            b_by_size, b_size_sorted, int(n_items))
    if chunk_cap:
        cap = int(chunk_cap)
    else:
        # size the chunks' room from a deterministic 1% sample of A's rows, so one
        # parallel round normally suffices (a short second round would run on few cores)
        sample = np.arange(0, na, 100, dtype=np.int32)
        s_chunks = max(1, min(n_chunks, sample.size))
        s_rows = np.concatenate([sample[c::s_chunks] for c in range(s_chunks)]).astype(np.int32)
        s_ptr = np.zeros(s_chunks + 1, np.int64)
        s_ptr[1:] = np.cumsum([sample[c::s_chunks].size for c in range(s_chunks)])
        s_cap = int(np.diff(s_ptr).max()) * nb + 1
        out = [np.empty(s_chunks * s_cap, dt) for dt in (np.int32, np.int32, np.float64)]
        _, w = _join_round(s_ptr, s_rows, np.zeros(s_chunks, np.int64), *args, *out, s_cap,
                           float(brute_factor))
        del out
        estimate = float(w.sum()) * na / sample.size
        cap = int(1.3 * estimate / n_chunks) + 1024
    cap = max(cap, nb + 1)
    pos = np.zeros(n_chunks, np.int64)
    rounds = []          # (out_r, out_q, out_s, cap, written) per round
    while True:
        todo = pos < np.diff(chunk_ptr)
        if not todo.any():
            break
        out_r = np.empty(n_chunks * cap, np.int32)
        out_q = np.empty(n_chunks * cap, np.int32)
        out_s = np.empty(n_chunks * cap, np.float64)
        pos, written = _join_round(chunk_ptr, chunk_rows, pos, *args, out_r, out_q, out_s, cap,
                                   float(brute_factor))
        rounds.append((out_r, out_q, out_s, cap, written))
        cap *= 2
    ptr = np.zeros(na + 1, np.int64)
    for out_r, _, _, rcap, written in rounds:
        _count_rows(out_r, rcap, written, ptr)
    np.cumsum(ptr, out=ptr)
    res_q = np.empty(ptr[na], np.int32)
    res_s = np.empty(ptr[na], np.float64)
    for out_r, out_q, out_s, rcap, written in rounds:
        _scatter_rows(out_r, out_q, out_s, rcap, written, ptr, res_q, res_s)
    return ptr, res_q, res_s


@njit(cache=True, nogil=True)
def _count_rows(out_r, cap, written, ptr):
    for c in range(written.shape[0]):
        for j in range(c * cap, c * cap + written[c]):
            ptr[out_r[j] + 1] += 1


@njit(cache=True, nogil=True)
def _scatter_rows(out_r, out_q, out_s, cap, written, ptr, res_q, res_s):
    """Copy each row's entries (contiguous in one chunk slice) to its CSR place."""
    for c in range(written.shape[0]):
        j = c * cap
        end = c * cap + written[c]
        while j < end:
            r = out_r[j]
            k = ptr[r]
            while j < end and out_r[j] == r:
                res_q[k] = out_q[j]
                res_s[k] = out_s[j]
                k += 1
                j += 1


@njit(cache=True, nogil=True)
def pairs_by_row(row, other, sim, n_rows):
    """CSR of pairs grouped by ``row`` (stable counting sort, O(m + n_rows)).

    Within a row the input order is kept, so transposing `jaccard_join`'s
    output (sorted by (row_a, row_b)) gives rows of B with row_a ascending.
    Returns ``(ptr, other_grouped, sim_grouped)``.
    """
    m = row.shape[0]
    ptr = np.zeros(n_rows + 1, np.int64)
    for j in range(m):
        ptr[row[j] + 1] += 1
    for r in range(n_rows):
        ptr[r + 1] += ptr[r]
    fill = ptr[:-1].copy()
    out_o = np.empty(m, np.int32)
    out_s = np.empty(m, np.float64)
    for j in range(m):
        r = row[j]
        out_o[fill[r]] = other[j]
        out_s[fill[r]] = sim[j]
        fill[r] += 1
    return ptr, out_o, out_s


@njit(cache=True, nogil=True)
def top_similarity_tiers(ptr, other, sim, count_other, k):
    """Per row, the entries of its best similarity tiers, just enough for k calls.

    A tier is the set of a row's partners with one similarity value.  Tiers are
    taken in descending similarity until their partners hold >= k calls in total
    (``count_other[q]`` calls for partner q), so at most k tiers are taken and
    the top-k partners of every call of the row lie inside them.  Each pass is
    one max-scan over the row: O(m · k) overall, no sort of the full rows.
    Output rows are sorted by (sim desc, other asc).  Returns a CSR
    ``(tptr, tother, tsim)``.
    """
    n_rows = ptr.shape[0] - 1
    tptr = np.zeros(n_rows + 1, np.int64)
    cap = 16
    tother = np.empty(cap, np.int32)
    tsim = np.empty(cap, np.float64)
    m = 0
    for r in range(n_rows):
        lo = ptr[r]
        hi = ptr[r + 1]
        got = 0
        ceiling = np.inf
        while got < k and lo < hi:
            best = -1.0
            for j in range(lo, hi):
                s = sim[j]
                if s < ceiling and s > best:
                    best = s
            if best < 0.0:
                break
            t_start = m
            for j in range(lo, hi):
                if sim[j] == best:
                    if m == cap:
                        cap *= 2
                        o2 = np.empty(cap, np.int32)
                        s2 = np.empty(cap, np.float64)
                        o2[:m] = tother[:m]
                        s2[:m] = tsim[:m]
                        tother = o2
                        tsim = s2
                    tother[m] = other[j]
                    tsim[m] = best
                    m += 1
                    got += count_other[other[j]]
            tother[t_start:m].sort()
            ceiling = best
        tptr[r + 1] = m
    return tptr, tother[:m].copy(), tsim[:m].copy()


@njit(cache=True, nogil=True)
def transpose_csr(ptr, other, sim, n_other):
    """The CSR ``(ptr, other, sim)`` over rows turned into a CSR over ``other``
    (counting sort, stable: each new row lists the old rows ascending)."""
    n_rows = ptr.shape[0] - 1
    m = other.shape[0]
    tptr = np.zeros(n_other + 1, np.int64)
    for j in range(m):
        tptr[other[j] + 1] += 1
    for q in range(n_other):
        tptr[q + 1] += tptr[q]
    fill = tptr[:-1].copy()
    t_other = np.empty(m, np.int32)
    t_sim = np.empty(m, np.float64)
    for r in range(n_rows):
        for j in range(ptr[r], ptr[r + 1]):
            q = other[j]
            t_other[fill[q]] = r
            t_sim[fill[q]] = sim[j]
            fill[q] += 1
    return tptr, t_other, t_sim
