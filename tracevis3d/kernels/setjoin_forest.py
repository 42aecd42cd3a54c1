"""The plan of the tree join (`setjoin_tree.jaccard_join_tree`): heir forest, delta sets,
work items and size windows (TraceDiff Sec. III, Eq. 2 and 3).

Γ(i) = {F(i)} ∪ ⋃ Γ(children) (Eq. 2), so every class row r of trace A has a *base* row
whose set is a proper subset (`heir_forest_weighted`); base links form a forest rooted
at leaf classes.  Then |x_r ∩ y| = |x_base ∩ y| + |(x_r ∖ x_base) ∩ y| for every set y of B,
and the join counts each row from its base's counters plus the postings of its *delta*
x_r ∖ x_base (`tree_plan`), children ordered by delta cost (`order_kids_by_delta_cost`),
over the B sizes its subtree can still match, τ|x| < |y| < |x|/τ (`subtree_windows`),
with B indexed by size rank (`full_index_by_size_rank`, `size_runs`).
"""
import numpy as np
from numba import njit

from .setjoin import SAFE, first_greater


@njit(cache=True, nogil=True)
def heir_forest_weighted(row_of_call, end_index, set_size, weight):
    """For each class row r of a trace, a *base* row whose set is a proper subset.

    Γ(i) = {F(i)} ∪ ⋃ Γ(children) (Eq. 2), so for a call i none of whose children
    has i's own class, each child class is a proper subset of Γ(i).  Over ALL
    calls of r, the base is the child class with the largest ``weight`` (ties:
    larger set, then lower row); leaf classes have base −1.  With weight = the
    postings cost of a set, the tree join's delta cost of r, W(x_r) − W(base)
    (base ⊂ x_r), is the smallest any child offers.  Bases have smaller sets,
    so base links form a forest rooted at leaf classes.  O(calls).
    Returns ``base`` (int32 per row).
    """
    n_rows = set_size.shape[0]
    base = np.full(n_rows, -1, np.int32)
    n = row_of_call.shape[0]
    for i in range(n):
        r = row_of_call[i]
        best = base[r]
        same = False
        c = i + 1
        while c < end_index[i]:
            q = row_of_call[c]
            if q == r:
                same = True
                break
            if best < 0 or weight[q] > weight[best] or (weight[q] == weight[best] and (
                    set_size[q] > set_size[best] or (set_size[q] == set_size[best] and q < best))):
                best = q
            c = end_index[c]
        if same:
            continue
        base[r] = best
    return base


@njit(cache=True, nogil=True)
def heir_forest(row_of_call, end_index, set_size):
    """`heir_forest_weighted` with weight = set size: each class row's base is
    its largest child class over all its calls (a proper subset)."""
    return heir_forest_weighted(row_of_call, end_index, set_size,
                                set_size.astype(np.float64))


@njit(cache=True, nogil=True)
def tree_plan(base, a_ptr, a_items, subtree_limit, n_items):
    """Forest children (CSR), each row's delta set (its elements not in its base)
    and the work items: roots of subtrees with <= subtree_limit rows whose
    parent's subtree is bigger (or forest roots), plus every row of a bigger
    subtree as a one-row item.  Returns (kid_ptr, kids, d_ptr, d_items,
    item_root, item_single)."""
    n_rows = base.shape[0]
    kid_ptr = np.zeros(n_rows + 1, np.int64)
    for r in range(n_rows):
        if base[r] >= 0:
            kid_ptr[base[r] + 1] += 1
    for r in range(n_rows):
        kid_ptr[r + 1] += kid_ptr[r]
    kids = np.empty(kid_ptr[n_rows], np.int32)
    fill = kid_ptr[:-1].copy()
    for r in range(n_rows):
        if base[r] >= 0:
            kids[fill[base[r]]] = r
            fill[base[r]] += 1
    # delta sets
    mark = np.full(n_items, -1, np.int64)
    d_ptr = np.zeros(n_rows + 1, np.int64)
    for r in range(n_rows):
        b = base[r]
        if b >= 0:
            for j in range(a_ptr[b], a_ptr[b + 1]):
                mark[a_items[j]] = r
        cnt = 0
        for j in range(a_ptr[r], a_ptr[r + 1]):
            if mark[a_items[j]] != r:
                cnt += 1
        d_ptr[r + 1] = d_ptr[r] + cnt
    d_items = np.empty(d_ptr[n_rows], np.int32)
    mark[:] = -1
    for r in range(n_rows):
        b = base[r]
        if b >= 0:
            for j in range(a_ptr[b], a_ptr[b + 1]):
                mark[a_items[j]] = r
        k = d_ptr[r]
        for j in range(a_ptr[r], a_ptr[r + 1]):
            if mark[a_items[j]] != r:
                d_items[k] = a_items[j]
                k += 1
    # subtree sizes: a base's set is smaller, so visit rows by size descending
    size = np.empty(n_rows, np.int64)
    for r in range(n_rows):
        size[r] = a_ptr[r + 1] - a_ptr[r]
    order = np.argsort(-size, kind="mergesort")
    sub = np.ones(n_rows, np.int64)
    for t in range(n_rows):
        r = order[t]
        if base[r] >= 0:
            sub[base[r]] += sub[r]
    n_items_ = 0
    item_root = np.empty(n_rows, np.int32)
    item_single = np.empty(n_rows, np.bool_)
    for r in range(n_rows):
        if sub[r] > subtree_limit:
            item_root[n_items_] = r
            item_single[n_items_] = True
            n_items_ += 1
        elif base[r] < 0 or sub[base[r]] > subtree_limit:
            item_root[n_items_] = r
            item_single[n_items_] = False
            n_items_ += 1
    return kid_ptr, kids, d_ptr, d_items, item_root[:n_items_].copy(), item_single[:n_items_].copy()


@njit(cache=True, nogil=True)
def order_kids_by_delta_cost(kid_ptr, kids, d_ptr, d_items, post_ptr, base, set_size):
    """Delta cost of each row (postings of the elements it adds to its base,
    the work of counting it from its base's counters), each row's forest
    children re-ordered by that cost ascending (the dearest last, where the tree
    join hands it the base's own buffer) and the forest height (most rows on a
    root-to-leaf path).  Returns (d_cost, kids, height)."""
    n_rows = kid_ptr.shape[0] - 1
    d_cost = np.zeros(n_rows, np.float64)
    for r in range(n_rows):
        c = 0
        for j in range(d_ptr[r], d_ptr[r + 1]):
            e = d_items[j]
            c += post_ptr[e + 1] - post_ptr[e]
        d_cost[r] = c
    out = kids.copy()
    for r in range(n_rows):
        lo = kid_ptr[r]
        hi = kid_ptr[r + 1]
        if hi - lo > 1:
            seg = out[lo:hi].copy()
            order = np.argsort(d_cost[seg], kind="mergesort")
            for i in range(hi - lo):
                out[lo + i] = seg[order[i]]
    # depth along base links: bases have smaller sets, so visit by size ascending
    order = np.argsort(set_size, kind="mergesort")
    depth = np.ones(n_rows, np.int64)
    height = 1
    for t in range(n_rows):
        r = order[t]
        if base[r] >= 0:
            depth[r] = depth[base[r]] + 1
        if depth[r] > height:
            height = depth[r]
    return d_cost, out, height


@njit(cache=True, nogil=True)
def subtree_windows(base, set_size, b_size_sorted, tau):
    """Per A row r, the size-rank range [k_lo[r], k_hi[r]) of B that the tree
    join must count for r and its heir-forest subtree.

    Row v reads out the window τ|v| < |y| < |v|/τ (size filter).  Down a
    forest path sets grow (a base is a proper subset of its row), so the windows
    of r's subtree lie inside (τ|r|, max size in the subtree / τ); counting only
    there keeps every readout below r exact.  Margins as in `setjoin_walk._readout`
    (τ|x| shrunk, |x|/τ grown by 1e-9), so rounding only widens a range.
    Also returns ``own_hi`` (the upper end for r alone, for single-row items).
    """
    n_rows = base.shape[0]
    nb = b_size_sorted.shape[0]
    order = np.argsort(-set_size, kind="mergesort")
    mx = set_size.copy()
    for t in range(n_rows):           # rows (bigger sets) before their bases
        r = order[t]
        b = base[r]
        if b >= 0 and mx[r] > mx[b]:
            mx[b] = mx[r]
    k_lo = np.empty(n_rows, np.int64)
    k_hi = np.empty(n_rows, np.int64)
    own_hi = np.empty(n_rows, np.int64)
    for r in range(n_rows):
        k_lo[r] = first_greater(b_size_sorted, 0, nb, tau * set_size[r] * (1.0 - SAFE))
        for which in range(2):
            hi_size = (mx[r] if which == 0 else set_size[r]) / tau * (1.0 + SAFE)
            k = first_greater(b_size_sorted, 0, nb, hi_size)
            while k > 0 and b_size_sorted[k - 1] >= hi_size:
                k -= 1
            if which == 0:
                k_hi[r] = k
            else:
                own_hi[r] = k
    return k_lo, k_hi, own_hi


@njit(cache=True, nogil=True)
def size_runs(b_size_sorted):
    """run_end[k] = first k' > k with a different size (B rows by size rank)."""
    nb = b_size_sorted.shape[0]
    run_end = np.empty(nb, np.int64)
    e = nb
    for k in range(nb - 1, -1, -1):
        if k + 1 < nb and b_size_sorted[k + 1] != b_size_sorted[k]:
            e = k + 1
        run_end[k] = e
    return run_end


@njit(cache=True, nogil=True)
def full_index_by_size_rank(b_ptr, b_items, n_items):
    """Inverted index of ALL elements of B's sets, postings = B's size rank k
    (rows ordered by (size, row)), each list ascending in k; returns
    (post_ptr, post_k, b_by_size, b_size_sorted)."""
    nb = b_ptr.shape[0] - 1
    size = np.empty(nb, np.int64)
    for q in range(nb):
        size[q] = b_ptr[q + 1] - b_ptr[q]
    b_by_size = np.argsort(size, kind="mergesort").astype(np.int32)
    post_ptr = np.zeros(n_items + 1, np.int64)
    for j in range(b_items.shape[0]):
        post_ptr[b_items[j] + 1] += 1
    for e in range(n_items):
        post_ptr[e + 1] += post_ptr[e]
    post_k = np.empty(post_ptr[n_items], np.int32)
    fill = post_ptr[:-1].copy()
    b_size_sorted = np.empty(nb, np.int64)
    for k in range(nb):
        q = b_by_size[k]
        b_size_sorted[k] = size[q]
        for j in range(b_ptr[q], b_ptr[q + 1]):
            e = b_items[j]
            post_k[fill[e]] = k
            fill[e] += 1
    return post_ptr, post_k, b_by_size, b_size_sorted
