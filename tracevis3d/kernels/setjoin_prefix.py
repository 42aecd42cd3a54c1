"""The filter join of Γ-set classes (TraceDiff Sec. III, Eq. 3): `jaccard_join`, and
`jaccard_join_waves` (the same pairs streamed in waves of bounded room, as overlaps).

Every (x, y), x a class of trace A and y one of B, with J(x, y) = |x ∩ y| / |x ∪ y| > τ,
found with the set-similarity-join filters of AllPairs (Bayardo, Ma, Srikant, "Scaling
up all pairs similarity search", WWW 2007) and PPJoin (Xiao, Wang, Lin, Yu, "Efficient
similarity joins for near duplicate detection", WWW 2008):

- size filter: J > τ needs τ|x| < |y| < |x|/τ;
- prefix filter in a global rarest-first order on both sides: J > τ needs
  |x ∩ y| > τ|x|, so x and y share an element among the first |x| − ⌊τ|x|⌋ of x
  (`prefix_length`); only the prefixes of B's sets are indexed (`build_prefix_index`);
- verification with bitsets and popcount (or element lookups with early termination
  at `setjoin.min_overlap`), and a per-row switch to popcounting the whole size window
  when the posting slices would cost more.
Rows of A are dealt to parallel chunks with resumable output slices; the result is a
CSR over A rows, the same as `setjoin_tree.jaccard_join_tree`'s, and the same pairs and
similarities as `setjoin.jaccard_join_bruteforce`; or, streamed, each round's rows handed to
a consumer before the next round reuses the buffers (`jaccard_join_waves`, what
``compare(..., join="filter")`` uses: its memory no longer grows with the class pairs).
"""
import numpy as np
from numba import njit, prange

from .setjoin import SAFE, first_greater, min_overlap, overlap_dtype, popcount64, ranked_sets, sets_to_bitsets


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


@njit(cache=True, nogil=True, inline="always")
def prefix_length(n, tau):
    """|x| − ⌊τ|x|⌋: J(x, y) > τ needs |x ∩ y| > τ|x|, i.e. ≥ ⌊τ|x|⌋ + 1 common
    elements, so one of them lies in the first |x| − ⌊τ|x|⌋ elements of x in
    any fixed global order (prefix filter).  (τ|x| is shrunk by 1e-9 first so a
    rounding error can only lengthen the prefix.)"""
    return n - int(np.floor(tau * n * (1.0 - SAFE)))


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
        lo_size = tau * nx * (1.0 - SAFE)
        hi_size = nx / tau * (1.0 + SAFE)
        n_pre = prefix_length(nx, tau)
        scan_cost = 0
        for t in range(n_pre):
            e = a_items[a_ptr[r] + t]
            k0 = first_greater(post_size, post_ptr[e], post_ptr[e + 1], lo_size)
            k1 = k0
            while k1 < post_ptr[e + 1] and post_size[k1] < hi_size:
                k1 += 1
            seg[2 * t] = k0
            seg[2 * t + 1] = k1
            scan_cost += k1 - k0
        w0 = first_greater(b_size_sorted, 0, nb, lo_size)
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


@njit(cache=True, parallel=True, nogil=True)
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


def _sample_pairs(args, na, nb, n_chunks, brute_factor):
    """Estimated number of result pairs: the filter join run on every 100th row."""
    sample = np.arange(0, na, 100, dtype=np.int32)
    s_chunks = max(1, min(n_chunks, sample.size))
    s_rows = np.concatenate([sample[c::s_chunks] for c in range(s_chunks)]).astype(np.int32)
    s_ptr = np.zeros(s_chunks + 1, np.int64)
    s_ptr[1:] = np.cumsum([sample[c::s_chunks].size for c in range(s_chunks)])
    s_cap = int(np.diff(s_ptr).max()) * nb + 1
    out = [np.empty(s_chunks * s_cap, dt) for dt in (np.int32, np.int32, np.float64)]
    _, w = _join_round(s_ptr, s_rows, np.zeros(s_chunks, np.int64), *args, *out, s_cap,
                       float(brute_factor))
    return float(w.sum()) * na / sample.size


def _filter_structures(set_ptr, set_items, classes_a, classes_b, tau, n_items, max_bitset_bytes):
    rank = frequency_rank(set_ptr, set_items, classes_a, classes_b, n_items)
    a_ptr, a_items = ranked_sets(set_ptr, set_items, classes_a, rank)
    b_ptr, b_items = ranked_sets(set_ptr, set_items, classes_b, rank)
    post_ptr, post_row, post_size, size_b = build_prefix_index(b_ptr, b_items, n_items, tau)
    nb = classes_b.shape[0]
    n_words = (int(n_items) >> 6) + 1
    if nb * n_words * 8 <= max_bitset_bytes:
        b_bits = sets_to_bitsets(b_ptr, b_items, np.arange(nb, dtype=np.int32), n_words)
    else:  # huge vocabulary: no B bitsets, verify element by element
        b_bits = np.zeros((0, n_words), np.uint64)
    b_by_size = np.argsort(size_b, kind="mergesort").astype(np.int32)
    b_size_sorted = size_b[b_by_size]
    return (a_ptr, a_items, b_ptr, b_items, float(tau), post_ptr, post_row, post_size, b_bits,
            b_by_size, b_size_sorted, int(n_items))


def _join_setup(set_ptr, set_items, classes_a, classes_b, tau, n_items, max_bitset_bytes, n_chunks) -> tuple:
    """What both drivers of the filter join start from: (|A|, |B|, `_filter_structures`,
    chunks, A's rows dealt round-robin to them in chunk order (int32), chunk offsets)."""
    classes_a = np.ascontiguousarray(classes_a, np.int32)
    classes_b = np.ascontiguousarray(classes_b, np.int32)
    na, nb = classes_a.shape[0], classes_b.shape[0]
    args = _filter_structures(set_ptr, set_items, classes_a, classes_b, tau, n_items, max_bitset_bytes)
    n_chunks = max(1, min(int(n_chunks), na))
    order = np.arange(na, dtype=np.int32)
    chunk_rows = np.concatenate([order[c::n_chunks] for c in range(n_chunks)]).astype(np.int32)
    chunk_ptr = np.zeros(n_chunks + 1, np.int64)
    chunk_ptr[1:] = np.cumsum([len(order[c::n_chunks]) for c in range(n_chunks)])
    return na, nb, args, n_chunks, chunk_rows, chunk_ptr


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
    na, nb, args, n_chunks, chunk_rows, chunk_ptr = _join_setup(set_ptr, set_items, classes_a, classes_b, tau,
                                                                n_items, max_bitset_bytes, n_chunks)
    if chunk_cap:
        cap = int(chunk_cap)
    else:
        # size the chunks' room from a 1% sample, so one parallel round normally
        # suffices (a short second round would run on few cores)
        cap = int(1.3 * _sample_pairs(args, na, nb, n_chunks, brute_factor) / n_chunks) + 1024
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
def _round_to_csr(out_r, out_q, out_s, cap, written, a_ptr, b_ptr, rows, ptr, res_q, res_i):
    """The rows of one round's chunk slices ``out_*[c*cap : c*cap+written[c]]`` (each row
    whole and contiguous, marked by its A row in ``out_r``) as one CSR over the rows in
    ascending order (as `jaccard_join`'s): ``rows[i]`` = the A row of CSR row i, ``ptr`` its
    offsets, ``res_q`` the B rows and ``res_i`` the overlaps |x ∩ y| of the similarities:
    s = i / (|x| + |y| − i) ⇔ i = s (|x| + |y|) / (1 + s), rounded to the nearest integer
    (exact: the float expression's error is far below 1/2).  Returns (rows, pairs)."""
    most = rows.shape[0]  # a round writes each A row at most once
    row = np.empty(most, np.int64)
    start = np.empty(most, np.int64)
    stop = np.empty(most, np.int64)
    n = 0
    for c in range(written.shape[0]):
        j = c * cap
        end = c * cap + written[c]
        while j < end:
            r = out_r[j]
            row[n] = r
            start[n] = j
            while j < end and out_r[j] == r:
                j += 1
            stop[n] = j
            n += 1
    order = np.argsort(row[:n])
    dst = 0
    for k in range(n):
        i = order[k]
        r = row[i]
        rows[k] = r
        ptr[k] = dst
        nx = a_ptr[r + 1] - a_ptr[r]
        for j in range(start[i], stop[i]):
            q = out_q[j]
            sj = out_s[j]
            res_q[dst] = q
            res_i[dst] = np.rint(sj * (nx + (b_ptr[q + 1] - b_ptr[q])) / (1.0 + sj))
            dst += 1
    ptr[n] = dst
    return n, dst


#: bytes one class pair takes in a wave of `jaccard_join_waves`: A row, B row, similarity
#: (int32, int32, float64) in the chunk slices, then B row and overlap (at most int32)
FILTER_WAVE_BYTES_PER_CLASS_PAIR = 4 + 4 + 8 + 4 + 4


def jaccard_join_waves(set_ptr, set_items, classes_a, classes_b, tau, n_items, consume, wave_pairs,
                       n_chunks=64, brute_factor=4.0, max_bitset_bytes=256 << 20, check_pairs=None,
                       stats=None):
    """The join of `jaccard_join`, streamed: ``consume(rows, ptr, row_b, inter)`` is called per
    round with the rows that round wrote (CSR row i = A row ``rows[i]``, rows ascending, its
    pairs by B row ascending with their overlaps |x ∩ y| (`setjoin.overlap_dtype`), as
    `setjoin_tree.jaccard_join_tree_waves` hands them; every A row with a match in exactly one wave, all its pairs there; rows
    without a match are never handed).  The arrays are views of the join's own buffers,
    overwritten by the next round: ``consume`` copies what it keeps.

    Every round has a fixed room of ``wave_pairs / n_chunks`` entries per chunk (at least
    one row's worst case, |B| + 1, and no more than the sampled estimate asks for); a chunk
    out of room resumes in the next round at its next row (`_join_rows` writes rows whole),
    so the memory is one wave's buffers (`FILTER_WAVE_BYTES_PER_CLASS_PAIR` each) whatever
    the number of class pairs.  ``check_pairs``: called with the sampled estimate of the
    class pairs before the rounds.  Returns (waves, class pairs)."""
    na, nb, args, n_chunks, chunk_rows, chunk_ptr = _join_setup(set_ptr, set_items, classes_a, classes_b, tau,
                                                                n_items, max_bitset_bytes, n_chunks)
    est = _sample_pairs(args, na, nb, n_chunks, brute_factor)
    if check_pairs is not None:
        check_pairs(float(est))
    cap = min(int(1.3 * est / n_chunks) + 1024, max(1, int(wave_pairs) // n_chunks))
    cap = max(cap, nb + 1)
    # np.empty: pages never written are never resident, so a smaller wave stays smaller
    out_r = np.empty(n_chunks * cap, np.int32)
    out_q = np.empty(n_chunks * cap, np.int32)
    out_s = np.empty(n_chunks * cap, np.float64)
    res_q = np.empty(n_chunks * cap, np.int32)
    res_i = np.empty(n_chunks * cap, overlap_dtype(set_ptr, classes_a, classes_b))
    rows = np.empty(na, np.int64)
    ptr = np.empty(na + 1, np.int64)
    pos = np.zeros(n_chunks, np.int64)
    waves = 0
    n_pairs = 0
    while (pos < np.diff(chunk_ptr)).any():
        pos, written = _join_round(chunk_ptr, chunk_rows, pos, *args, out_r, out_q, out_s, cap,
                                   float(brute_factor))
        nr, m = _round_to_csr(out_r, out_q, out_s, cap, written, args[0], args[2], rows, ptr, res_q, res_i)
        if nr:
            consume(rows[:nr], ptr[:nr + 1], res_q[:m], res_i[:m])
        waves += 1
        n_pairs += int(m)
    if stats is not None:
        stats.update(waves=waves, cap=int(cap), estimate=float(est))
    return waves, n_pairs
