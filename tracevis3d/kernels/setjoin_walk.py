"""The counting walk and readout of the tree join (`setjoin_tree.jaccard_join_tree`):
`tree_round`, `_tree_item`, `_readout` (TraceDiff Sec. III, Eq. 2 and 3).

One overlap counter per set y of B (by size rank): a row x counts |x ∩ y| from its base's
counters plus the postings of its delta (`add_postings`, over its subtree's size window
only; B's frequent elements through membership rows, `dense_membership`, where their
postings fill the window densely); counters are handed down the heir forest
(`setjoin_forest`) in place, copied or shared-then-undone (`_tree_item`).  The readout keeps
y when |x ∩ y| ≥ min_overlap(|x|, |y|, τ) (`setjoin.min_overlap`: exactly
J = inter / (|x| + |y| − inter) > τ in float64)
over the size window τ|x| < |y| < |x|/τ, one integer threshold per run of equal |y|, with
a branch-free flag loop read back 8 flags at a time (`_readout`).
"""
import numpy as np
from numba import njit, prange
from numba.cpython.unsafe.numbers import trailing_zeros

from .setjoin import SAFE, first_greater, lower_bound, min_overlap


#: an element whose postings fill at least 1/`DENSE_RATIO` of the window they are added over is
#: added through its membership row (`dense_membership`) instead: a vectorised add of the
#: window's bytes beats the scattered increments there (the counting alone, 10^7-call synthetic
#: pair, one thread over an eighth of the rows: 8.7 s → 6.2 s; ratio 16: 6.3 s, 32: 6.8 s)
DENSE_RATIO = 8
#: the elements given a membership row: those in at least 1/`DENSE_MAP_RATIO` of B's sets (so
#: the rows take at most `DENSE_MAP_RATIO` bytes per posting), at most `DENSE_MAP_BYTES` in all
DENSE_MAP_RATIO = 32
DENSE_MAP_BYTES = 256 << 20


def dense_membership(post_ptr, post_k, n_sets, ratio=DENSE_MAP_RATIO, max_bytes=DENSE_MAP_BYTES):
    """Membership rows of B's frequent elements for `add_postings`: ``row[e]`` (int32, −1 for
    none) and ``member[row[e], k]`` = 1 iff set k (size rank) holds e (uint8), for the elements
    in at least ``n_sets`` / ``ratio`` sets, most frequent first, within ``max_bytes``."""
    plen = np.diff(post_ptr)
    n_sets = int(n_sets)
    cand = np.flatnonzero(plen * int(ratio) >= max(n_sets, 1)) if n_sets else np.zeros(0, np.int64)
    cand = cand[np.argsort(-plen[cand], kind="stable")][:max(0, int(max_bytes) // max(n_sets, 1))]
    cand.sort()
    row = np.full(plen.shape[0], -1, np.int32)
    row[cand] = np.arange(cand.shape[0], dtype=np.int32)
    member = np.zeros((cand.shape[0], n_sets), np.uint8)
    _fill_membership(cand, post_ptr, post_k, member)
    return row, member


@njit(cache=True, nogil=True)
def _fill_membership(elems, post_ptr, post_k, member):
    """member[r, k] = 1 for every set k in element elems[r]'s postings."""
    for r in range(elems.shape[0]):
        e = elems[r]
        for p in range(post_ptr[e], post_ptr[e + 1]):
            member[r, post_k[p]] = 1


@njit(cache=True, nogil=True, inline="always")
def _add_member_rows(c, dense_map, r0, r1, r2, r3, n, k_lo, k_hi, delta):
    """c[i] += delta · Σ_{j < n} ``dense_map[r_j, k_lo + i]`` over the window (``c`` = its
    counters), n in 1..4 membership rows added in one vectorised pass: their bytes summed
    per set (≤ 4, a byte) and the counters read and written once for the n rows, not n
    times (`add_postings`: 1.8x a row's add alone, one thread, isolated)."""
    if n >= 2:
        m0 = dense_map[r0, k_lo:k_hi]          # slices from 0: the loops vectorise
        m1 = dense_map[r1, k_lo:k_hi]
        if n == 4:
            m2 = dense_map[r2, k_lo:k_hi]
            m3 = dense_map[r3, k_lo:k_hi]
            if delta > 0:
                for i in range(c.shape[0]):
                    c[i] = c.dtype.type(c[i] + np.uint8(np.uint8(m0[i] + m1[i]) + np.uint8(m2[i] + m3[i])))
            else:
                for i in range(c.shape[0]):
                    c[i] = c.dtype.type(c[i] - np.uint8(np.uint8(m0[i] + m1[i]) + np.uint8(m2[i] + m3[i])))
            return
        if delta > 0:
            for i in range(c.shape[0]):
                c[i] = c.dtype.type(c[i] + np.uint8(m0[i] + m1[i]))
        else:
            for i in range(c.shape[0]):
                c[i] = c.dtype.type(c[i] - np.uint8(m0[i] + m1[i]))
        if n == 2:
            return
        r0 = r2                                # n = 3: the third row alone
    m = dense_map[r0, k_lo:k_hi]
    if delta > 0:
        for i in range(c.shape[0]):
            c[i] += m[i]
    else:
        for i in range(c.shape[0]):
            c[i] -= m[i]


@njit(cache=True, nogil=True, inline="always")
def add_postings(items, lo, hi, post_ptr, post_k, k_lo, k_hi, cnt, delta, dense_row, dense_map):
    """cnt[k] += delta for every B set k in [k_lo, k_hi) (size ranks) containing an
    element of items[lo:hi]; each posting list is sorted by k, so the range is
    two binary searches per element and sets outside the window are never touched.
    An element with a membership row (``dense_row`` ≥ 0, `dense_membership`; empty arrays:
    none) whose postings fill 1/`DENSE_RATIO` of the window adds its row over the window,
    four such rows at a time (`_add_member_rows`)."""
    has_dense = dense_row.shape[0] > 0
    n_rows = 0
    r0 = r1 = r2 = np.int32(0)
    for j in range(lo, hi):
        e = items[j]
        p0 = lower_bound(post_k, post_ptr[e], post_ptr[e + 1], k_lo)
        p1 = lower_bound(post_k, p0, post_ptr[e + 1], k_hi)
        if has_dense and dense_row[e] >= 0 and (p1 - p0) * DENSE_RATIO >= k_hi - k_lo:
            r = dense_row[e]
            if n_rows == 3:
                _add_member_rows(cnt[k_lo:k_hi], dense_map, r0, r1, r2, r, 4, k_lo, k_hi, delta)
                n_rows = 0
                continue
            if n_rows == 0:
                r0 = r
            elif n_rows == 1:
                r1 = r
            else:
                r2 = r
            n_rows += 1
            continue
        for p in range(np.uint64(p0), np.uint64(p1)):      # unsigned: no negative-index wrap
            cnt[np.uint64(post_k[p])] += delta                # (2 of 5 instructions an increment)
    if n_rows > 0:
        _add_member_rows(cnt[k_lo:k_hi], dense_map, r0, r1, r2, r2, n_rows, k_lo, k_hi, delta)


@njit(cache=True, nogil=True, inline="always")
def zero_range(c, lo, hi):
    """c[lo:hi] = 0 by unsigned positions: no negative-index wrap, a vectorised fill (the walks'
    window fills, `_tree_item` and `setjoin_fused._fused_item`)."""
    for i in range(np.uint64(lo), np.uint64(hi)):
        c[i] = 0


#: a row's counters are counted and read through the list of the B sets its postings touch
#: (`_sparse_root`) when that list is shorter than its size window by this factor
SPARSE_RATIO = 16


@njit(cache=True, nogil=True)
def postings_in(items, lo, hi, post_ptr, post_k, k_lo, k_hi):
    """How many postings of items[lo:hi] fall in the window [k_lo, k_hi) (`add_postings`'
    count, two binary searches per element)."""
    n = 0
    for j in range(lo, hi):
        e = items[j]
        p0 = lower_bound(post_k, post_ptr[e], post_ptr[e + 1], k_lo)
        p1 = lower_bound(post_k, p0, post_ptr[e + 1], k_hi)
        n += p1 - p0
    return n


@njit(cache=True, nogil=True, inline="always")
def sparse_counts(nx, items, lo, hi, post_ptr, post_k, k0, k1, tau, b_size_sorted, cnt, touched):
    """A row's overlaps counted from scratch through the sets its postings touch: the counters
    ``cnt`` of a clean window (all zero) raised through the postings of items[lo:hi] in
    [k0, k1) (`add_postings`' ranges), the sets touched listed in ``touched``, those that
    match (counter ≥ `min_overlap`, in the counters' dtype) moved to its front.  Returns
    (touched, matched); the caller zeroes the touched counters."""
    n_t = 0
    for j in range(lo, hi):
        e = items[j]
        p0 = lower_bound(post_k, post_ptr[e], post_ptr[e + 1], k0)
        p1 = lower_bound(post_k, p0, post_ptr[e + 1], k1)
        for p in range(p0, p1):
            k = post_k[p]
            if cnt[k] == 0:
                touched[n_t] = k
                n_t += 1
            cnt[k] += 1
    need_c = np.empty(1, cnt.dtype)
    n_m = 0
    for t in range(n_t):
        k = touched[t]
        need_c[0] = min_overlap(nx, b_size_sorted[k], tau)
        if cnt[k] >= need_c[0]:
            touched[t] = touched[n_m]
            touched[n_m] = k
            n_m += 1
    return n_t, n_m


@njit(cache=True, nogil=True)
def _sparse_root(v, nx, items, lo, hi, post_ptr, post_k, k0, k1, tau, b_size_sorted, b_by_size, cnt, touched,
                 qbits, i_by_q, out_q, out_i, m, limit, row_n, direct):
    """`_readout` of a row counted from scratch whose postings touch few B sets: the counters
    of a clean window (all zero) are raised through the postings of items[lo:hi] in
    [k0, k1) (`add_postings`' ranges), the touched sets listed in ``touched``; a set
    matches when its counter reaches `min_overlap` (the same threshold, in the counters'
    dtype, as the dense scan: a set no posting touched has overlap 0 and never matches),
    and the matches are emitted in the dense readout's order (B row ascending: by size
    rank when ``direct``, else through ``qbits``).  Every touched counter is zero again
    afterwards (the window stays clean).  Stops without writing when the row's matches
    and header do not fit below ``limit``.  O(postings + matches·log + |B|/64 at most),
    not O(window): 100,000 one-function rows against as many B sets were 10^10 steps.
    Returns (m, wrote)."""
    n_t, n_m = sparse_counts(nx, items, lo, hi, post_ptr, post_k, k0, k1, tau, b_size_sorted, cnt, touched)
    if n_m and m + n_m + 1 > limit:
        for t in range(n_t):
            cnt[touched[t]] = 0
        return m, False
    if n_m == 0:
        row_n[v] = 0
    elif direct:
        matched = np.sort(touched[:n_m])
        out_q[m] = -(v + 1)
        out_i[m] = 0
        m += 1
        for k in matched:
            out_q[m] = k
            out_i[m] = cnt[k]
            m += 1
        row_n[v] = n_m
    else:
        w_lo = 1 << 62
        w_hi = -1
        for t in range(n_m):
            k = touched[t]
            q = b_by_size[k]
            qbits[q >> 6] |= np.uint64(1) << np.uint64(q & 63)
            i_by_q[q] = cnt[k]
            w_lo = min(w_lo, q >> 6)
            w_hi = max(w_hi, q >> 6)
        out_q[m] = -(v + 1)
        out_i[m] = 0
        m += 1
        m = _emit_bitmap(v, w_lo, w_hi, qbits, i_by_q, out_q, out_i, m, row_n)
    for t in range(n_t):
        cnt[touched[t]] = 0
    return m, True


@njit(cache=True, nogil=True, inline="always")
def _emit_bitmap(v, w_lo, w_hi, qbits, i_by_q, out_q, out_i, m, row_n):
    """The (B row, overlap) entries of the rows set in ``qbits`` words [w_lo, w_hi], by B row
    ascending (the words cleared); ``row_n[v]`` their number."""
    m0 = m
    for w in range(w_lo, w_hi + 1):
        word = qbits[w]
        if word == 0:
            continue
        qbits[w] = np.uint64(0)
        while word != np.uint64(0):
            low = word & (~word + np.uint64(1))          # lowest set bit
            q = (w << 6) + np.int64(trailing_zeros(word))
            out_q[m] = q
            out_i[m] = i_by_q[q]
            m += 1
            word ^= low
    row_n[v] = m - m0
    return m


@njit(cache=True, nogil=True, inline="always")
def _flag_matches(nx, k0, k1, tau, b_size_sorted, run_end, cnt, flags):
    """flags[kk] = 1 where cnt[kk] ≥ `min_overlap`(nx, |y_kk|, τ) (⇔ J > τ in float64), 0
    elsewhere, over the size ranks [k0, k1): one exact integer threshold per run of equal |y|
    (``run_end``), compared over the run in a branch-free loop (vectorised)."""
    need_c = np.empty(1, cnt.dtype)
    k = k0
    while k < k1:
        e = min(run_end[k], k1)
        need_c[0] = min_overlap(nx, b_size_sorted[k], tau)
        need = need_c[0]
        run_c = cnt[k:e]      # slices indexed from 0: the loop vectorises (20x the indexed form)
        run_f = flags[k:e]
        for i in range(run_c.shape[0]):
            run_f[i] = run_c[i] >= need
        k = e


@njit(cache=True, nogil=True)
def _readout(v, nx, k0, k1, tau, b_size_sorted, run_end, b_by_size, cnt, flags, qbits, i_by_q,
             out_q, out_i, m, row_n, direct):
    """Matches of row v (|x| = nx) from its exact overlaps ``cnt`` (by B size
    rank) over its size window [k0, k1) (τ|x| < |y| < |x|/τ).  Per run of equal
    |y| one exact integer threshold (`min_overlap`: c >= need ⇔ c / (nx + ny −
    c) > τ in float64, as every twin), compared over the run in a branch-free
    loop that writes one flag byte per B set (vectorised); the flags are then
    read 8 at a time and only the set ones visited (and cleared: ``flags`` is
    all zero between calls).  Matches are emitted by B row ascending through the
    bitmap ``qbits`` (O(window/8 + |B|/64 + matches), no sort), or straight from
    the scan when ``direct`` (B rows already in size-rank order, as `compare`'s
    size-ordered class ids give).  Output: a header
    ``out_q = -(v+1)`` then (B row, overlap) entries, nothing without a match;
    ``row_n[v]`` = the number of matches."""
    _flag_matches(nx, k0, k1, tau, b_size_sorted, run_end, cnt, flags)
    fw = flags.view(np.uint64)
    if direct:
        # B rows are numbered in size-rank order: emit straight from the scan
        m0 = m
        for w in range(k0 >> 3, (k1 + 7) >> 3):
            word = fw[w]
            if word == np.uint64(0):
                continue
            fw[w] = np.uint64(0)
            if m == m0:
                out_q[m] = -(v + 1)
                out_i[m] = 0
                m += 1
            while word != np.uint64(0):
                low = word & (~word + np.uint64(1))
                kk = (w << 3) + (np.int64(trailing_zeros(word)) >> 3)
                out_q[m] = kk
                out_i[m] = cnt[kk]
                m += 1
                word ^= low
        row_n[v] = m - m0 - 1 if m > m0 else 0
        return m
    w_lo = 1 << 62
    w_hi = -1
    for w in range(k0 >> 3, (k1 + 7) >> 3):
        word = fw[w]
        if word == np.uint64(0):
            continue
        fw[w] = np.uint64(0)
        while word != np.uint64(0):
            low = word & (~word + np.uint64(1))          # lowest set bit (bit 8·j of byte j)
            kk = (w << 3) + (np.int64(trailing_zeros(word)) >> 3)
            q = b_by_size[kk]
            qbits[q >> 6] |= np.uint64(1) << np.uint64(q & 63)
            i_by_q[q] = cnt[kk]
            if (q >> 6) < w_lo:
                w_lo = q >> 6
            if (q >> 6) > w_hi:
                w_hi = q >> 6
            word ^= low
    if w_hi < 0:
        row_n[v] = 0
        return m
    out_q[m] = -(v + 1)
    out_i[m] = 0
    m += 1
    return _emit_bitmap(v, w_lo, w_hi, qbits, i_by_q, out_q, out_i, m, row_n)


@njit(cache=True, nogil=True, inline="always")
def set_frame(frames, sp, row, next_kid, buf, owns, undo, allocated):
    """Frame ``sp`` of `_tree_item`'s walk: row, next kid, counter buffer, owns
    the buffer (may hand it to its last child), undo its delta when popped,
    allocated the buffer (release it when popped)."""
    frames[sp, 0] = row
    frames[sp, 1] = next_kid
    frames[sp, 2] = buf
    frames[sp, 3] = owns
    frames[sp, 4] = undo
    frames[sp, 5] = allocated


@njit(cache=True, nogil=True, inline="always")
def next_row(frames, sp, n_bufs, bufs, kids, kid_ptr, d_items, d_ptr, d_cost, post_ptr, post_k, k_lo, k_hi,
              copy_ratio, dense_row, dense_map):
    """One step of `_tree_item`'s walk below the root (frames from `set_frame`, ``sp`` of
    them, ``n_bufs`` buffers in use): finished frames popped (a light delta undone, a copied
    buffer released), then the next row w taken as the tail, undo or copy child of its base
    (`_tree_item`'s three ways) and its delta's postings added to its counters.  Returns
    (w, its counter buffer's index in ``bufs``, sp, n_bufs); w = -1 when the walk is done.
    The streamed join (`_tree_item`) and the fused one (`setjoin_fused._fused_item`) read the
    rows it hands them, each its own way."""
    while sp > 0:
        top = sp - 1
        v = frames[top, 0]
        nxt = frames[top, 1]
        if nxt == kid_ptr[v + 1]:
            if frames[top, 4]:
                add_postings(d_items, d_ptr[v], d_ptr[v + 1], post_ptr, post_k, k_lo[v],
                              k_hi[v], bufs[frames[top, 2]], -1, dense_row, dense_map)
            if frames[top, 5]:
                n_bufs -= 1
            sp -= 1
            continue
        frames[top, 1] = nxt + 1
        w = kids[nxt]
        b = frames[top, 2]
        if nxt + 1 == kid_ptr[v + 1] and frames[top, 3]:
            frames[top, 0] = w                # tail: this frame becomes w's
            frames[top, 1] = kid_ptr[w]
        elif d_cost[w] <= copy_ratio * (k_hi[w] - k_lo[w]):
            set_frame(frames, sp, w, kid_ptr[w], b, 0, 1, 0)  # undo: share the buffer
            sp += 1
        else:
            src = bufs[b]                     # copy the base's window, by unsigned positions:
            dst = bufs[n_bufs]                # vectorised (the slice copy of a 2D array's rows
            for i in range(np.uint64(k_lo[w]), np.uint64(k_hi[w])):   # was element by element)
                dst[i] = src[i]
            set_frame(frames, sp, w, kid_ptr[w], n_bufs, 1, 0, 1)
            b = n_bufs
            n_bufs += 1
            sp += 1
        add_postings(d_items, d_ptr[w], d_ptr[w + 1], post_ptr, post_k, k_lo[w], k_hi[w], bufs[b], 1, dense_row,
                      dense_map)
        return w, b, sp, n_bufs
    return -1, 0, sp, n_bufs


@njit(cache=True, nogil=True)
def _tree_item(root, single, skip, a_ptr, a_items, d_ptr, d_items, d_cost, kid_ptr, kids, tau,
               post_ptr, post_k, k_lo, k_hi, own_hi, b_size_sorted, run_end, b_by_size, bufs,
               frames, flags, qbits, i_by_q, out_q, out_i, m, limit, copy_ratio, row_n, direct,
               touched, dirty, dense_row, dense_map):
    """One work item of the tree join (see `setjoin_tree.jaccard_join_tree`): the rows of the
    heir-forest subtree of ``root`` (only ``root`` when ``single``) in DFS order,
    skipping the readout of the first ``skip`` rows (written in an earlier round).

    Counters: ``bufs[i][k]`` = |x ∩ y_k| for the B rows y_k (by size rank) in
    the current row's window (`setjoin_forest.subtree_windows`; outside it they are stale and
    never read).  The root's window is zeroed and counted from its postings;
    every descendant w starts from its base's counts plus the postings of its
    delta (elements not in its base), one of three ways:
      - tail: the base's last child takes over the base's own buffer (the base
        is finished), so nothing is ever undone for it;
      - undo: a child whose delta postings cost less than ``copy_ratio`` × its
        window adds them in the shared buffer and removes them when its subtree
        is done;
      - copy: other children copy the base's window to a fresh buffer (a
        vectorised copy, cheaper than undoing a heavy delta).
    Children are ordered by delta cost (`setjoin_forest.tree_plan`), so the dearest is the tail.
    Stops before a readout when fewer output slots remain below ``limit`` than the row
    can write (a header and one per B set of its own size window [k_lo, own_hi)).
    A root without rows under it (``single``, or no kids) whose postings touch fewer than
    1/`SPARSE_RATIO` of its window is counted and read through the sets they touch
    (`_sparse_root`), on a clean window: ``dirty`` = [from, to) of ``bufs[0]`` that may hold
    stale counts (cleaned before such a root; a dense item adds its window to it).
    Returns (rows passed, m, finished).
    """
    lo = k_lo[root]
    hi = own_hi[root] if single else k_hi[root]
    cnt0 = bufs[0]
    if skip == 0 and (single or kid_ptr[root] == kid_ptr[root + 1]):
        k1 = own_hi[root]
        n_post = postings_in(a_items, a_ptr[root], a_ptr[root + 1], post_ptr, post_k, lo, k1)
        if n_post * SPARSE_RATIO < k1 - lo:
            if dirty[0] < dirty[1]:  # a dense item's counts may lie in this window: clean once
                zero_range(cnt0, dirty[0], dirty[1])
                dirty[0] = 0
                dirty[1] = 0
            m, wrote = _sparse_root(root, a_ptr[root + 1] - a_ptr[root], a_items, a_ptr[root], a_ptr[root + 1],
                                    post_ptr, post_k, lo, k1, tau, b_size_sorted, b_by_size, cnt0, touched,
                                    qbits, i_by_q, out_q, out_i, m, limit, row_n, direct)
            return (1, m, True) if wrote else (0, m, False)
    dirty[0] = min(dirty[0], lo) if dirty[0] < dirty[1] else lo
    dirty[1] = max(dirty[1], hi)
    zero_range(cnt0, lo, hi)
    add_postings(a_items, a_ptr[root], a_ptr[root + 1], post_ptr, post_k, lo, hi, cnt0, 1, dense_row, dense_map)
    if skip == 0:
        if m + own_hi[root] - k_lo[root] + 1 > limit:
            return 0, m, False
        m = _readout(root, a_ptr[root + 1] - a_ptr[root], k_lo[root], own_hi[root], tau,
                     b_size_sorted, run_end, b_by_size, cnt0, flags, qbits, i_by_q, out_q, out_i, m,
                     row_n, direct)
    if single:
        return 1, m, True
    rows_done = 1
    set_frame(frames, 0, root, kid_ptr[root], 0, 1, 0, 0)
    sp = 1
    n_bufs = 1
    while True:
        w, b, sp, n_bufs = next_row(frames, sp, n_bufs, bufs, kids, kid_ptr, d_items, d_ptr, d_cost, post_ptr,
                                     post_k, k_lo, k_hi, copy_ratio, dense_row, dense_map)
        if w < 0:
            break
        cnt = bufs[b]
        if rows_done >= skip:
            if m + own_hi[w] - k_lo[w] + 1 > limit:
                return rows_done, m, False    # counters are rebuilt from the root next round
            m = _readout(w, a_ptr[w + 1] - a_ptr[w], k_lo[w], own_hi[w], tau, b_size_sorted,
                         run_end, b_by_size, cnt, flags, qbits, i_by_q, out_q, out_i, m, row_n,
                         direct)
        rows_done += 1
    return rows_done, m, True


@njit(cache=True, parallel=True, nogil=True)
def tree_round(chunk_ptr, chunk_items, chunk_pos, chunk_skip, item_root, item_single,
                a_ptr, a_items, d_ptr, d_items, d_cost, kid_ptr, kids, tau, post_ptr, post_k,
                k_lo, k_hi, own_hi, b_size_sorted, run_end, b_by_size, out_q, out_i, cap,
                height, copy_ratio, row_n, direct, dense_row, dense_map):
    """One parallel round of the tree join: chunk c runs its items from
    chunk_pos[c] (skipping chunk_skip[c] rows of that item) into its own slice
    [c*cap, (c+1)*cap) of out_q/out_i (row headers, then (B row, overlap))."""
    n_chunks = chunk_ptr.shape[0] - 1
    nb = b_size_sorted.shape[0]
    new_pos = chunk_pos.copy()
    new_skip = chunk_skip.copy()
    written = np.zeros(n_chunks, np.int64)
    for c in prange(n_chunks):
        lo = chunk_ptr[c]
        hi = chunk_ptr[c + 1]
        pos = chunk_pos[c]
        if lo + pos >= hi:
            continue
        skip = chunk_skip[c]
        # overlap counters in out_i's dtype (uint16 while the overlaps fit,
        # `setjoin.overlap_dtype`: half the cache footprint of int32); one buffer per open forest level at most
        # (np.empty: only the pages a traversal touches become resident)
        bufs = np.empty((height + 1, nb), out_i.dtype)
        frames = np.empty((height + 1, 6), np.int64)
        flags = np.zeros(((nb >> 3) + 2) * 8, np.uint8)
        qbits = np.zeros((nb >> 6) + 1, np.uint64)
        i_by_q = np.empty(nb, np.int32)
        touched = np.empty(nb, np.int64)
        dirty = np.zeros(2, np.int64)
        dirty[1] = nb  # np.empty: every counter may be stale
        m = c * cap
        while lo + pos < hi:
            it = chunk_items[lo + pos]
            done, m, fin = _tree_item(item_root[it], item_single[it], skip, a_ptr, a_items,
                                      d_ptr, d_items, d_cost, kid_ptr, kids, tau, post_ptr,
                                      post_k, k_lo, k_hi, own_hi, b_size_sorted, run_end,
                                      b_by_size, bufs, frames, flags, qbits, i_by_q, out_q,
                                      out_i, m, c * cap + cap, copy_ratio, row_n, direct, touched, dirty,
                                      dense_row, dense_map)
            if not fin:
                skip = done
                break
            pos += 1
            skip = 0
        new_pos[c] = pos
        new_skip[c] = skip
        written[c] = m - c * cap
    return new_pos, new_skip, written


#: threads' shares of `sample_match_count`'s rows (fixed: the same sum on any machine)
SAMPLE_PARTS = 8


@njit(cache=True, nogil=True, inline="always")
def _count_sampled_row(r, a_ptr, a_items, tau, post_ptr, post_k, b_size_sorted, run_end, dense_row, dense_map, cnt,
                       flags):
    """A row of the join's sample counted from scratch over its own size window [k0, k1)
    (`add_postings` into ``cnt``, zero there before) and its matches flagged as `_readout`
    flags them (`_flag_matches`, every flag of the window written).  Returns (k0, k1)."""
    nb = b_size_sorted.shape[0]
    nx = a_ptr[r + 1] - a_ptr[r]
    k0 = first_greater(b_size_sorted, 0, nb, tau * nx * (1.0 - SAFE))
    k1 = lower_bound(b_size_sorted, k0, nb, nx / tau * (1.0 + SAFE))
    add_postings(a_items, a_ptr[r], a_ptr[r + 1], post_ptr, post_k, k0, k1, cnt, 1, dense_row, dense_map)
    _flag_matches(nx, k0, k1, tau, b_size_sorted, run_end, cnt, flags)
    return k0, k1


@njit(cache=True, parallel=True, nogil=True)
def sample_match_count(sample, a_ptr, a_items, tau, post_ptr, post_k, b_size_sorted, run_end, dense_row,
                        dense_map):
    """Exact number of class pairs of the A rows ``sample``, each counted from
    its postings over its own size window (`add_postings`, through the membership rows
    where given) and read as `_readout` reads them (`_flag_matches`), no output: a cheap sample
    for sizing the join.  The rows are shared among `SAMPLE_PARTS` parts on numba's threads,
    each with its own counters."""
    nb = b_size_sorted.shape[0]
    n_parts = max(1, min(SAMPLE_PARTS, sample.shape[0]))
    totals = np.zeros(n_parts, np.int64)
    for c in prange(n_parts):
        cnt = np.zeros(nb, np.int32)
        flags = np.zeros(nb, np.uint8)
        total = 0
        for i in range(c, sample.shape[0], n_parts):
            r = sample[i]
            k0, k1 = _count_sampled_row(r, a_ptr, a_items, tau, post_ptr, post_k, b_size_sorted, run_end, dense_row,
                                        dense_map, cnt, flags)
            got = 0
            window_f = flags[k0:k1]
            for j in range(window_f.shape[0]):
                got += window_f[j]
            total += got
            cnt[k0:k1] = 0    # (the flags need no clearing: `_flag_matches` writes all of [k0, k1))
        totals[c] = total
    return totals.sum()


#: bins per octave of `sample_match_weights`' histogram of call pairs per match
WEIGHT_BINS_PER_OCTAVE = 8


@njit(cache=True, parallel=True, nogil=True)
def sample_match_weights(sample, a_ptr, a_items, tau, post_ptr, post_k, b_size_sorted, run_end, dense_row,
                          dense_map, count_row, count_k):
    """The matches of the A rows ``sample`` (counted and read as `sample_match_count` does)
    by the call pairs w = ``count_row[r]`` · ``count_k[k]`` each stands for (B by size rank):
    a histogram over bins of `WEIGHT_BINS_PER_OCTAVE` per octave of w (bin i holds
    2^(i/8) ≤ w < 2^((i+1)/8)), its matches and their Σ w.  Returns (matches, Σ w) per bin."""
    nb = b_size_sorted.shape[0]
    n_bins = 64 * WEIGHT_BINS_PER_OCTAVE
    n_parts = max(1, min(SAMPLE_PARTS, sample.shape[0]))
    got_n = np.zeros((n_parts, n_bins), np.float64)
    got_w = np.zeros((n_parts, n_bins), np.float64)
    for c in prange(n_parts):
        cnt = np.zeros(nb, np.int32)
        flags = np.zeros(nb, np.uint8)
        for i in range(c, sample.shape[0], n_parts):
            r = sample[i]
            k0, k1 = _count_sampled_row(r, a_ptr, a_items, tau, post_ptr, post_k, b_size_sorted, run_end, dense_row,
                                        dense_map, cnt, flags)
            cr = np.float64(count_row[r])
            for k in range(k0, k1):
                if flags[k]:
                    w = cr * np.float64(count_k[k])
                    b = min(n_bins - 1, np.int64(np.floor(np.log2(w) * WEIGHT_BINS_PER_OCTAVE)))
                    got_n[c, b] += 1.0
                    got_w[c, b] += w
            cnt[k0:k1] = 0
    return got_n.sum(axis=0), got_w.sum(axis=0)
