"""The tree join of Γ-set classes (TraceDiff Sec. III, Eq. 2 and 3): `jaccard_join_tree`,
`jaccard_join_tree_overlaps`, the default join of `compare`.

Every (x, y), x a class of trace A and y one of B, with J(x, y) = |x ∩ y| / |x ∪ y| > τ,
the same output as `setjoin_prefix.jaccard_join`, computed along A's tree.
Γ of a call ⊇ Γ of each child (Eq. 2), so every class of A
has a *base* class that is a proper subset (`setjoin_forest.heir_forest_weighted`: the child
class with the most postings, so the delta costs least); walking that forest
depth-first with one overlap counter per set of B, a class adds only the
postings of its few new elements to its base's counts, only over the B
sizes its subtree can still match (`setjoin_forest.subtree_windows`).  A base's counters
are handed to its last child in place, copied (one vectorised window copy)
for children with heavy deltas, and shared-then-undone for light ones
(`setjoin_walk._tree_item`).  The readout compares the size window τ|x| < |y| < |x|/τ
with one exact integer threshold per distinct |y| (`setjoin.min_overlap`) in a
branch-free flag loop, then visits only the set flags, 8 at a time.
Overlaps are counted exactly and stored (uint16) instead of similarities:
s = inter / (|x| + |y| − inter) is recomputed bit-identically.
Measured at 1M calls (39k × 70k classes, 120M class pairs, 2 cores): 15 s
(first version) → ~6 s (weighted base, integer thresholds) → 3.0-4.5 s
(counter hand-down instead of undo, vectorised readout, matches emitted in
B's size order, pairs compacted in place); of that, about 0.9 s counting,
0.9 s readout scan and the rest writing 720 MB of pairs.
This module: the driver (work items dealt to parallel chunks, rounds with resumable
output slices in lazily mapped buffers, `lazybuf`) and the collection of the output.
Two ways out: `jaccard_join_tree_overlaps` returns the complete CSR (the pairs compacted in
place chunk by chunk, each chunk's slice given back to the OS once read: peak = pairs (6
bytes each) plus one chunk); `jaccard_join_tree_waves` STREAMS them: every round has a fixed
room (`WAVE_PAIRS` class pairs, 768 MiB) and hands its rows, compacted in place, to a
consumer before the next round reuses the buffers, so the join's memory no longer grows
with the class pairs.  They grow faster than the calls (14M, 128M, 521M, ~930M, ~4.7G
sampled at 10^5, 5·10^5, 10^6, 2·10^6, 10^7 calls of bench/bench_compare_memory.py's
4-thread synthetic pair): the complete CSR of a 10^7-call pair (~26 GiB) does not fit 16 GiB,
its waves do (`analysis.comparison` feeds them to its tiers, partner counts and overview).
"""
import concurrent.futures
import time

import numba
import numpy as np
from numba import njit, prange

from .lazybuf import lazy_empty, release_after, release_range
from .setjoin import overlap_dtype, overlaps_to_similarity, ranked_sets
from .setjoin_forest import (tree_plan, full_index_by_size_rank, heir_forest_weighted,
                             order_kids_by_delta_cost, size_runs, subtree_windows)
from .setjoin_walk import sample_match_count, tree_round, dense_membership


@njit(cache=True, parallel=True, nogil=True)
def _scatter_headed_rows(out_q, out_i, cap, written, ptr, res_q, res_i, c0, c1):
    """Copy each header-led row of the chunk slices c0..c1-1 to its CSR place (chunks in
    parallel: every row lies in one chunk, so their targets are disjoint)."""
    for c in prange(c0, c1):
        k = 0
        for j in range(c * cap, c * cap + written[c]):
            q = out_q[j]
            if q < 0:
                k = ptr[-q - 1]
            else:
                res_q[k] = q
                res_i[k] = out_i[j]
                k += 1


@njit(cache=True, nogil=True)
def _compact_headed_chunk(out_q, out_i, j0, j1, dst, nr, order, ptr, seen):
    """In place: the header-led rows of one chunk slice ``out_q[j0:j1]`` appended to the
    CSR at the front of out_q / out_i (its next entry at ``dst``, its next row ``nr``),
    rows in the order they were written.  Safe forward copy: the write position never
    passes the read position.  Returns the new (dst, nr)."""
    for j in range(j0, j1):
        q = out_q[j]
        if q < 0:
            r = -q - 1
            order[nr] = r
            seen[r] = True
            ptr[nr] = dst
            nr += 1
        else:
            out_q[dst] = q
            out_i[dst] = out_i[j]
            dst += 1
    return dst, nr


@njit(cache=True, nogil=True)
def _close_headed_rows(dst, nr, order, ptr, seen):
    """The rows without a match (never headed) appended, empty, after the compacted ones;
    ``ptr``'s last entry set.  In place."""
    n_rows = seen.shape[0]
    for r in range(n_rows):
        if not seen[r]:
            order[nr] = r
            ptr[nr] = dst
            nr += 1
    ptr[n_rows] = dst


def _compact_headed_rows(out_q, out_i, cap, written, n_rows, map_q=None, map_i=None):
    """In place: the chunk slices of header-led rows become one CSR at the
    front of out_q / out_i, rows in the order they were written (chunk by
    chunk), then the rows without a match (empty).  Returns (order, ptr).
    With the mappings ``map_q`` / ``map_i`` (`lazybuf.lazy_empty`), every chunk's slice
    beyond the compacted front is given back to the OS as soon as it has been read, so the
    resident size stays at the pairs plus one chunk instead of growing by the part of the
    front that was not yet resident (measured at 10^6 calls: 5.2 GB → see
    bench/bench_compare_memory.py)."""
    order = np.empty(n_rows, np.int64)
    ptr = np.zeros(n_rows + 1, np.int64)
    seen = np.zeros(n_rows, np.bool_)
    dst, nr = 0, 0
    for c in range(written.shape[0]):
        j0 = c * cap
        dst, nr = _compact_headed_chunk(out_q, out_i, j0, j0 + int(written[c]), dst, nr, order, ptr, seen)
        if map_q is not None:
            lo, hi = max(int(dst), j0), j0 + cap
            release_range(map_q, lo * out_q.itemsize, hi * out_q.itemsize)
            release_range(map_i, lo * out_i.itemsize, hi * out_i.itemsize)
    _close_headed_rows(dst, nr, order, ptr, seen)
    return order, ptr


@njit(cache=True, nogil=True)
def _compact_wave_rows(out_q, out_i, cap, written, rows, ptr, seen):
    """In place: the header-led rows of the chunk slices ``out_q[c*cap : c*cap+written[c]]``
    become one CSR at the front of out_q / out_i (`_compact_headed_chunk`, chunk by chunk);
    ``rows[i]`` = the A row of CSR row i, ``ptr`` its offsets (``seen`` marks the rows met,
    unread here: a wave's unmatched rows are not listed).  Returns (rows written, pairs)."""
    dst = 0
    nr = 0
    for c in range(written.shape[0]):
        j0 = c * cap
        dst, nr = _compact_headed_chunk(out_q, out_i, j0, j0 + written[c], dst, nr, rows, ptr, seen)
    ptr[nr] = dst
    return nr, dst


def sample_rows(n_rows: int) -> np.ndarray:
    """The A rows the join's estimate counts exactly (every 100th, or 5,000 rows past 500,000):
    `_sampled_pair_count`'s and `analysis.compare_join`'s."""
    return np.arange(0, n_rows, max(100, n_rows // 5000), dtype=np.int32)


def _sampled_pair_count(a_ptr, a_items, tau, post_ptr, post_k, b_size_sorted, dense_row=None, dense_map=None) -> float:
    """Estimated number of class pairs: every 100th A row counted exactly (at most ~5000
    rows), scaled to all rows; counted through B's membership rows where given (the plan's,
    `setjoin_walk.dense_membership`).  Each sampled row is counted from scratch over its
    whole window, so the sample costs more than 1/100 of the heir forest's walk (10^7-call
    synthetic pair: 6.9 s on one thread with postings alone; parallel and through the
    membership rows now)."""
    na = a_ptr.shape[0] - 1
    sample = sample_rows(na)
    if dense_row is None:
        dense_row, dense_map = np.zeros(0, np.int32), np.zeros((0, 0), np.uint8)
    return float(sample_match_count(sample, a_ptr, a_items, float(tau), post_ptr, post_k, b_size_sorted,
                                     size_runs(b_size_sorted), dense_row, dense_map) * na / max(1, sample.size))


def estimate_class_pairs(set_ptr, set_items, classes_a, classes_b, tau, n_items) -> float:
    """Estimated number of class pairs (x of ``classes_a``, y of ``classes_b``) with
    J > tau, from an exactly counted sample of A's rows (`_sampled_pair_count`); for
    checking a join's memory before running it."""
    ident = np.arange(int(n_items), dtype=np.int32)
    a_ptr, a_items = ranked_sets(set_ptr, set_items, np.ascontiguousarray(classes_a, np.int32), ident)
    b_ptr, b_items = ranked_sets(set_ptr, set_items, np.ascontiguousarray(classes_b, np.int32), ident)
    post_ptr, post_k, _, b_size_sorted = full_index_by_size_rank(b_ptr, b_items, int(n_items))
    return _sampled_pair_count(a_ptr, a_items, tau, post_ptr, post_k, b_size_sorted)


def join_plan(set_ptr, set_items, classes_a, classes_b, tau, n_items, row_of_call_a, end_index_a,
               n_chunks, subtree_limit):
    """The plan of the tree join (see `jaccard_join_tree_overlaps`): ranked sets, B's
    postings by size rank, the heir forest and its work items dealt to ``n_chunks`` chunks.
    Returns a dict of the arrays `_run_round` and the estimate need."""
    classes_a = np.ascontiguousarray(classes_a, np.int32)
    classes_b = np.ascontiguousarray(classes_b, np.int32)
    na, nb = classes_a.shape[0], classes_b.shape[0]
    n_items = int(n_items)
    odt = overlap_dtype(set_ptr, classes_a, classes_b)
    ident = np.arange(n_items, dtype=np.int32)

    def b_index():
        b_ptr, b_items = ranked_sets(set_ptr, set_items, classes_b, ident)
        return full_index_by_size_rank(b_ptr, b_items, n_items)
    # B's side on a second thread (the kernels release the GIL): its postings by size rank
    # beside A's ranked sets, then its membership rows beside A's heir forest
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        index = pool.submit(b_index)
        a_ptr, a_items = ranked_sets(set_ptr, set_items, classes_a, ident)
        post_ptr, post_k, b_by_size, b_size_sorted = index.result()
        membership = pool.submit(dense_membership, post_ptr, post_k, nb)
    finally:
        pool.shutdown(wait=False)
    size_a = np.diff(a_ptr)
    # base = the child class with the most postings: the smallest delta cost W(x) − W(base)
    plen = np.diff(post_ptr).astype(np.float64)
    weight = np.add.reduceat(plen[a_items], a_ptr[:-1]) if a_items.size else np.zeros(na)
    weight[size_a == 0] = 0.0
    base = heir_forest_weighted(np.ascontiguousarray(row_of_call_a, np.int32),
                                np.ascontiguousarray(end_index_a, np.int32), size_a, weight)
    n_chunks = max(1, min(int(n_chunks), na))
    if subtree_limit is None:
        subtree_limit = max(16, na // (n_chunks * 8))
    kid_ptr, kids, d_ptr, d_items, item_root, item_single = tree_plan(
        base, a_ptr, a_items, int(subtree_limit), n_items)
    k_lo, k_hi, own_hi = subtree_windows(base, size_a, b_size_sorted, float(tau))
    d_cost, kids, height = order_kids_by_delta_cost(kid_ptr, kids, d_ptr, d_items, post_ptr, base,
                                                    size_a.astype(np.int64))
    run_end = size_runs(b_size_sorted)
    direct = bool(np.array_equal(b_by_size, np.arange(nb, dtype=b_by_size.dtype)))
    dense_row, dense_map = membership.result()
    n_work = item_root.shape[0]
    n_chunks = max(1, min(n_chunks, n_work))
    chunk_items = np.concatenate([np.arange(c, n_work, n_chunks) for c in range(n_chunks)]).astype(np.int64)
    chunk_ptr = np.zeros(n_chunks + 1, np.int64)
    chunk_ptr[1:] = np.cumsum([len(range(c, n_work, n_chunks)) for c in range(n_chunks)])
    return dict(na=na, nb=nb, odt=odt, n_chunks=n_chunks, n_work=n_work, chunk_ptr=chunk_ptr,
                chunk_items=chunk_items, item_root=item_root, item_single=item_single, a_ptr=a_ptr,
                a_items=a_items, d_ptr=d_ptr, d_items=d_items, d_cost=d_cost, kid_ptr=kid_ptr, kids=kids,
                tau=float(tau), post_ptr=post_ptr, post_k=post_k, k_lo=k_lo, k_hi=k_hi, own_hi=own_hi,
                b_size_sorted=b_size_sorted, run_end=run_end, b_by_size=b_by_size, height=int(height),
                direct=direct, dense_row=dense_row, dense_map=dense_map)


def _run_round(plan, pos, skip, out_q, out_i, cap, copy_ratio, row_n):
    """One parallel round of the join (`setjoin_walk.tree_round`) into the chunk slices of
    ``out_q`` / ``out_i`` (``cap`` entries each); returns (pos, skip, written)."""
    p = plan
    # chunks handed to the threads one at a time (their work varies); set
    # here, as setting it inside a kernel makes the kernel uncachable
    previous = numba.set_parallel_chunksize(1)
    try:
        return tree_round(p["chunk_ptr"], p["chunk_items"], pos, skip, p["item_root"], p["item_single"],
                           p["a_ptr"], p["a_items"], p["d_ptr"], p["d_items"], p["d_cost"], p["kid_ptr"],
                           p["kids"], p["tau"], p["post_ptr"], p["post_k"], p["k_lo"], p["k_hi"],
                           p["own_hi"], p["b_size_sorted"], p["run_end"], p["b_by_size"], out_q, out_i,
                           cap, p["height"], float(copy_ratio), row_n, p["direct"], p["dense_row"], p["dense_map"])
    finally:
        numba.set_parallel_chunksize(previous)


def jaccard_join_tree_overlaps(set_ptr, set_items, classes_a, classes_b, tau, n_items,
                               row_of_call_a, end_index_a, n_chunks=64, subtree_limit=None,
                               chunk_cap=None, copy_ratio=0.25, stats=None, join_order=False,
                               check_pairs=None):
    """The exact join of `setjoin_prefix.jaccard_join`, computed along trace A's tree, returned
    with overlaps instead of similarities (6 bytes per class pair, not 12).

    Γ(parent) ⊇ Γ(child) (Eq. 2): every class row r of A has a *base* row whose
    set is a proper subset (`setjoin_forest.heir_forest`), so |x_r ∩ y| = |x_base ∩ y| +
    |(x_r ∖ x_base) ∩ y| for every y of B at once.  Walking the heir forest
    depth-first with one overlap counter per B set (by size rank), each row
    costs the postings of its few new elements instead of all of its elements
    (counters handed down by `setjoin_walk._tree_item`: in place, copied or
    undone), restricted to the B sizes its subtree can still match
    (`setjoin_forest.subtree_windows`: pruning on the B side by the size filter), and the
    readout scans only the size window τ|x| < |y| < |x|/τ.  Exact (overlaps are
    counted, not estimated).  Work items (subtrees of at most ``subtree_limit``
    rows, bigger ones split into single rows counted from scratch) are dealt
    round-robin to ``n_chunks`` parallel chunks with resumable output slices
    (the room sized generously from an exact count on every 100th row; a chunk out of room
    resumes in a next round with twice the room).
    Returns a CSR over A rows ``(ptr, row_b, inter)``, each row by row_b, with
    ``inter`` = |x ∩ y| (`overlap_dtype`); J = inter / (|x| + |y| − inter).
    ``stats``: a dict to receive the phase times (s) and the number of rounds.
    ``join_order=True`` returns ``(order, ptr, row_b, inter)`` instead: row i of
    the CSR is A row ``order[i]`` (the order the join wrote them); the pairs are
    then compacted in place in the join's own buffers (no second copy of all
    pairs, and the unused room is given back to the OS).
    ``check_pairs``: called with the estimated number of class pairs (from the exactly
    counted sample of rows) after the plan and before the long walk, e.g. to refuse a
    join that cannot fit in memory (`analysis.comparison` raises `TraceTooLargeError`).
    """
    t_start = time.perf_counter()
    plan = join_plan(set_ptr, set_items, classes_a, classes_b, tau, n_items, row_of_call_a,
                      end_index_a, n_chunks, subtree_limit)
    na, nb, odt, n_chunks, n_work = plan["na"], plan["nb"], plan["odt"], plan["n_chunks"], plan["n_work"]
    chunk_ptr = plan["chunk_ptr"]
    est = None
    if not chunk_cap or check_pairs is not None:
        est = _sampled_pair_count(plan["a_ptr"], plan["a_items"], tau, plan["post_ptr"], plan["post_k"],
                                  plan["b_size_sorted"], plan["dense_row"], plan["dense_map"])
        if check_pairs is not None:
            check_pairs(float(est))
    if chunk_cap:
        cap = int(chunk_cap)
    else:
        # generous: np.empty room never written is never resident (address space
        # only), while a chunk out of room costs a second round re-walking its item
        cap = int(2.5 * (est + na) / n_chunks) + 1024
    cap = max(cap, nb + 2)
    pos = np.zeros(n_chunks, np.int64)
    skip = np.zeros(n_chunks, np.int64)
    row_n = np.zeros(na, np.int64)          # matches per row, written by its readout
    rounds = []
    t_plan = time.perf_counter()
    while True:
        if not (pos < np.diff(chunk_ptr)).any():
            break
        # pages never written are never resident, so the slack costs address space only
        out_q, map_q = lazy_empty(n_chunks * cap, np.int32)
        out_i, map_i = lazy_empty(n_chunks * cap, odt)
        pos, skip, written = _run_round(plan, pos, skip, out_q, out_i, cap, copy_ratio, row_n)
        rounds.append((out_q, out_i, cap, written, map_q, map_i))
        cap *= 2
    t_rounds = time.perf_counter()
    n_rounds = len(rounds)
    if join_order and n_rounds == 1:
        out_q, out_i, rcap, written, map_q, map_i = rounds.pop()
        order, ptr = _compact_headed_rows(out_q, out_i, rcap, written, na, map_q, map_i)
        m = int(ptr[na])
        release_after(map_q, m * out_q.itemsize)
        release_after(map_i, m * out_i.itemsize)
        res_q, res_i = out_q[:m], out_i[:m]
    else:
        order = np.arange(na, dtype=np.int64)
        ptr = np.zeros(na + 1, np.int64)
        np.cumsum(row_n, out=ptr[1:])
        res_q = np.empty(ptr[na], np.int32)
        res_i = np.empty(ptr[na], odt)
        group = 8   # chunks copied in parallel, then their slices given back: peak = pairs + 8 slices
        while rounds:
            out_q, out_i, rcap, written, map_q, map_i = rounds.pop(0)
            for c0 in range(0, n_chunks, group):
                c1 = min(n_chunks, c0 + group)
                _scatter_headed_rows(out_q, out_i, rcap, written, ptr, res_q, res_i, c0, c1)
                release_range(map_q, c0 * rcap * out_q.itemsize, c1 * rcap * out_q.itemsize)
                release_range(map_i, c0 * rcap * out_i.itemsize, c1 * rcap * out_i.itemsize)
            del out_q, out_i, map_q, map_i
    if stats is not None:
        now = time.perf_counter()
        stats.update(plan_s=t_plan - t_start, rounds_s=t_rounds - t_plan, collect_s=now - t_rounds,
                     rounds=n_rounds, height=plan["height"], work_items=int(n_work))
    if join_order:
        return order, ptr, res_q, res_i
    return ptr, res_q, res_i


#: class pairs one wave of `jaccard_join_tree_waves` holds at most (6 bytes each: 768 MiB)
WAVE_PAIRS = 128 << 20


def jaccard_join_tree_waves(set_ptr, set_items, classes_a, classes_b, tau, n_items, row_of_call_a,
                            end_index_a, consume, wave_pairs=WAVE_PAIRS, n_chunks=64,
                            subtree_limit=None, copy_ratio=0.25, check_pairs=None, stats=None):
    """The join of `jaccard_join_tree_overlaps`, streamed: the class pairs are handed to
    ``consume(rows, ptr, row_b, inter)`` in waves of at most about ``wave_pairs`` pairs
    (CSR row i is A row ``rows[i]``, its pairs ``row_b[ptr[i]:ptr[i+1]]`` by B row
    ascending with overlaps ``inter``; every A row with a match in exactly one wave, all
    its pairs there; rows without a match are never handed).  The arrays are views of
    the join's own buffers, overwritten by the next wave: ``consume`` copies what it keeps.

    Each wave is one round of the join (`setjoin_walk.tree_round`) whose chunk slices
    hold ``wave_pairs / n_chunks`` entries (at least one row's worst case, |B| + 1): a chunk
    out of room resumes in the next round where it stopped (re-walking the counters of
    its current work item), so the memory is the buffers of one wave whatever the number
    of class pairs.  The same ``wave_pairs`` gives the same waves on every machine.
    ``check_pairs``: called with the sampled estimate of the class pairs before the walk.
    Returns (waves, class pairs)."""
    t_start = time.perf_counter()
    plan = join_plan(set_ptr, set_items, classes_a, classes_b, tau, n_items, row_of_call_a,
                      end_index_a, n_chunks, subtree_limit)
    na, nb, odt, n_chunks = plan["na"], plan["nb"], plan["odt"], plan["n_chunks"]
    chunk_ptr = plan["chunk_ptr"]
    est = _sampled_pair_count(plan["a_ptr"], plan["a_items"], tau, plan["post_ptr"], plan["post_k"],
                              plan["b_size_sorted"], plan["dense_row"], plan["dense_map"])
    if check_pairs is not None:
        check_pairs(float(est))
    cap = min(int(2.5 * (est + na) / n_chunks) + 1024, max(1, int(wave_pairs) // n_chunks))
    cap = max(cap, nb + 2)
    # pages never written are never resident: a wave that fits in less stays smaller
    out_q, map_q = lazy_empty(n_chunks * cap, np.int32)
    out_i, map_i = lazy_empty(n_chunks * cap, odt)
    rows = np.empty(na, np.int64)
    ptr = np.empty(na + 1, np.int64)
    seen = np.zeros(na, np.bool_)
    pos = np.zeros(n_chunks, np.int64)
    skip = np.zeros(n_chunks, np.int64)
    row_n = np.zeros(na, np.int64)
    t_plan = time.perf_counter()
    waves = 0
    n_pairs = 0
    t_walk = t_consume = t_compact = 0.0
    while (pos < np.diff(chunk_ptr)).any():
        t0 = time.perf_counter()
        pos, skip, written = _run_round(plan, pos, skip, out_q, out_i, cap, copy_ratio, row_n)
        t_compact -= time.perf_counter()
        nr, m = _compact_wave_rows(out_q, out_i, cap, written, rows, ptr, seen)
        t1 = time.perf_counter()
        t_compact += t1
        if nr:
            consume(rows[:nr], ptr[:nr + 1], out_q[:m], out_i[:m])
        t_walk += t1 - t0
        t_consume += time.perf_counter() - t1
        waves += 1
        n_pairs += int(m)
    del out_q, out_i, map_q, map_i
    if stats is not None:
        stats.update(plan_s=t_plan - t_start, walk_s=t_walk, compact_s=t_compact, consume_s=t_consume, waves=waves,
                     cap=int(cap), estimate=float(est), height=plan["height"], work_items=int(plan["n_work"]))
    return waves, n_pairs


def jaccard_join_tree(set_ptr, set_items, classes_a, classes_b, tau, n_items, row_of_call_a,
                      end_index_a, n_chunks=64, subtree_limit=None, chunk_cap=None,
                      copy_ratio=0.25):
    """`jaccard_join_tree_overlaps` with float64 similarities: same output as
    `setjoin_prefix.jaccard_join`, a CSR over A rows ``(ptr, row_b, sim)``, each row by row_b."""
    ptr, q, inter = jaccard_join_tree_overlaps(set_ptr, set_items, classes_a, classes_b, tau,
                                               n_items, row_of_call_a, end_index_a, n_chunks,
                                               subtree_limit, chunk_cap, copy_ratio)
    size = np.diff(set_ptr)
    size_a = np.ascontiguousarray(size[np.asarray(classes_a)], np.int64)
    size_b = np.ascontiguousarray(size[np.asarray(classes_b)], np.int64)
    return ptr, q, overlaps_to_similarity(ptr, q, inter, size_a, size_b)
