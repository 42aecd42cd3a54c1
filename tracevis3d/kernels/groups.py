"""Call-level matches under a bound, and TraceDiff's groups (Sec. III, IV-D).

Two traces can hold ~10^10 call pairs above τ (every ``len`` call matches every
``len`` call), so call pairs are *kept* under a bound: for each call, its
``k`` best partners ranked by similarity (desc), then closeness of relative
start time (asc), then partner index (asc).  `top_k_partners` computes that from
the complete class-level join without ever enumerating all call pairs.

`bfs_groups` partitions the kept matches into groups (Sec. III): matches are
visited breadth-first over trace A; a match (u, v) joins the first-created group
G with u ∈ S(G_A) and v ∈ S(G_B), otherwise it becomes the root match
R(G) = (u, v) of a new group.
"""
import numpy as np
from numba import njit, prange

from .setjoin import _lower_bound
from .tree import group_by_key


@njit(cache=True, nogil=True, inline="always")
def _insert_best(best_v, best_d, nbest, cap, v, d):
    """Insert (d, v) into the list sorted by (d, v) holding at most ``cap``."""
    if nbest == cap:
        lv = best_v[nbest - 1]
        ld = best_d[nbest - 1]
        if d > ld or (d == ld and v >= lv):
            return nbest
        nbest -= 1
    j = nbest
    while j > 0 and (best_d[j - 1] > d or (best_d[j - 1] == d and best_v[j - 1] > v)):
        best_v[j] = best_v[j - 1]
        best_d[j] = best_d[j - 1]
        j -= 1
    best_v[j] = v
    best_d[j] = d
    return nbest + 1


@njit(cache=True, parallel=True, nogil=True)
def top_k_partners(row_of_call, rel_start, pair_ptr, pair_row, pair_sim,
                   other_ptr, other_call, other_rel, k):
    """The k best partners of every call (the call-pair bound).

    For call u with class row r = row_of_call[u] (-1: no class pairs), its
    candidate partners are the calls of the classes ``pair_row[pair_ptr[r]:
    pair_ptr[r+1]]`` (sorted by similarity desc); ``other_call[other_ptr[q]:
    other_ptr[q+1]]`` are the calls of class q of the other trace, sorted by
    their relative start ``other_rel`` (same order).  Ranking: s desc, then
    |rel_start[u] − rel_start(v)| asc, then v asc; the best k are found tier
    by tier of equal s, taking from each class only the calls nearest in time
    (binary search, then outward), so the cost per call is O(#classes of the
    tiers used × (log + k)), never the number of call pairs.
    Returns ``(partner, sim)``, shape (n, k), -1 / 0.0 where fewer exist.
    """
    n = row_of_call.shape[0]
    partner = np.full((n, k), -1, np.int32)
    sim = np.zeros((n, k), np.float64)
    n_chunks = 256
    for ch in prange(n_chunks):
        best_v = np.empty(k, np.int64)
        best_d = np.empty(k, np.float64)
        for u in range(ch, n, n_chunks):
            r = row_of_call[u]
            if r < 0:
                continue
            t = rel_start[u]
            filled = 0
            j = pair_ptr[r]
            j_end = pair_ptr[r + 1]
            while j < j_end and filled < k:
                s = pair_sim[j]
                tier_end = j
                while tier_end < j_end and pair_sim[tier_end] == s:
                    tier_end += 1
                need = k - filled
                nbest = 0
                for jj in range(j, tier_end):
                    q = pair_row[jj]
                    lo = other_ptr[q]
                    hi = other_ptr[q + 1]
                    a = _lower_bound(other_rel, lo, hi, t)     # first with other_rel >= t
                    left = a - 1
                    right = a
                    taken = 0
                    last_d = -1.0
                    while left >= lo or right < hi:
                        dl = t - other_rel[left] if left >= lo else np.inf
                        dr = other_rel[right] - t if right < hi else np.inf
                        if dl <= dr:
                            d = dl
                            v = other_call[left]
                            left -= 1
                        else:
                            d = dr
                            v = other_call[right]
                            right += 1
                        if taken >= need and d > last_d:
                            break
                        nbest = _insert_best(best_v, best_d, nbest, need, v, d)
                        taken += 1
                        last_d = d
                for i in range(nbest):
                    partner[u, filled + i] = best_v[i]
                    sim[u, filled + i] = s
                filled += nbest
                j = tier_end
    return partner, sim


@njit(cache=True, nogil=True)
def bfs_groups(pair_a, pair_b, parent_a, end_index_b):
    """Groups of matches (TraceDiff Sec. III), matches given in BFS order of A.

    ``pair_a``/``pair_b`` must be sorted by (depth of a, a, b): breadth-first
    over trace A and, for one call of A, by pre-order of B (so an ancestor b of
    v comes before v).  Match m = (u, v) joins the first-created group G whose
    root (G_A, G_B) has u ∈ S(G_A) (G_A is u or an ancestor) and v ∈ S(G_B)
    (G_B ≤ v < end_index_b[G_B]); if none, m is the root of a new group.
    The paper's text keeps only one "current" group, which under BFS breaks
    every nested group apart as soon as a sibling is visited; we keep all
    groups, which is what its definition of S(G_A) × S(G_B) asks for.

    The groups rooted at one call u of A are created while u's own matches are
    visited (they are contiguous), so they are a contiguous range of group ids,
    and their B roots ascend and are disjoint subtrees (a match of u inside an
    earlier root's subtree of B joins that group).  So at each ancestor a of u
    (u included) at most one group rooted there holds v: the last root b ≤ v,
    found by binary search, if v < end_index_b[b].  Every group at a shallower
    ancestor was created earlier (BFS), so the first-created group holding the
    match is the one found nearest the root.  O(depth · log(roots per call))
    per match: a call matched to 10^5 disjoint calls of B (a thread's root
    against a pool's tasks) no longer makes every match below it visit them all
    (a real 16-worker docutils trace against its perturbed copy: 50 s -> 0.3 s).
    Returns ``(group, root_a, root_b)``.
    """
    m = pair_a.shape[0]
    n_a = parent_a.shape[0]
    group = np.empty(m, np.int32)
    first = np.full(n_a, -1, np.int32)       # the first group rooted at a call of A
    n_roots = np.zeros(n_a, np.int32)        # how many are rooted there (ids first, first + 1, ...)
    root_a = np.empty(m, np.int32)
    root_b = np.empty(m, np.int32)
    ng = 0
    for i in range(m):
        u = pair_a[i]
        v = pair_b[i]
        best = -1
        a = u
        while a >= 0:
            r = n_roots[a]
            if r > 0:
                g0 = first[a]
                # the last root b <= v of the calls rooted at a (ascending, disjoint)
                j = _lower_bound(root_b, g0, g0 + r, v + 1) - 1
                if j >= g0 and v < end_index_b[root_b[j]] and (best < 0 or j < best):
                    best = j               # a shallower ancestor's group is older: keep climbing
            a = parent_a[a]
        if best < 0:
            best = ng
            root_a[ng] = u
            root_b[ng] = v
            if n_roots[u] == 0:
                first[u] = ng
            elif first[u] + n_roots[u] != ng:
                raise ValueError("bfs_groups: the matches of a call of A are not contiguous (sort by depth, a, b)")
            n_roots[u] += 1
            ng += 1
        group[i] = best
    return group, root_a[:ng].copy(), root_b[:ng].copy()


@njit(cache=True, nogil=True)
def union_of_partners(partner_of_a, sim_of_a, partner_of_b, sim_of_b):
    """The kept call pairs: {(u, partner_of_a[u, i])} ∪ {(partner_of_b[v, i], v)}
    (entries −1 skipped), each once, sorted by (a, b), with their similarity
    (a pair picked from both sides has the same similarity on both: that of
    its class pair).  B's picks are first grouped by their call of A (counting
    sort, v ascending), then merged per u with u's own ≤ k picks, sorted in
    place: O(n·k) and no global sort.  Returns (pair_a, pair_b, sim)."""
    n_a, k = partner_of_a.shape
    n_b = partner_of_b.shape[0]
    rptr = np.zeros(n_a + 1, np.int64)
    for v in range(n_b):
        for i in range(k):
            u = partner_of_b[v, i]
            if u >= 0:
                rptr[u + 1] += 1
    for u in range(n_a):
        rptr[u + 1] += rptr[u]
    rv = np.empty(rptr[n_a], np.int32)
    rs = np.empty(rptr[n_a], np.float64)
    fill = rptr[:-1].copy()
    for v in range(n_b):
        for i in range(k):
            u = partner_of_b[v, i]
            if u >= 0:
                rv[fill[u]] = v
                rs[fill[u]] = sim_of_b[v, i]
                fill[u] += 1
    cap = rptr[n_a] + n_a * k
    out_a = np.empty(cap, np.int32)
    out_b = np.empty(cap, np.int32)
    out_s = np.empty(cap, np.float64)
    own_v = np.empty(k, np.int64)
    own_s = np.empty(k, np.float64)
    m = 0
    for u in range(n_a):
        n_own = 0
        for i in range(k):                     # u's own picks, sorted by v
            v = partner_of_a[u, i]
            if v < 0:
                continue
            j = n_own
            while j > 0 and own_v[j - 1] > v:
                own_v[j] = own_v[j - 1]
                own_s[j] = own_s[j - 1]
                j -= 1
            own_v[j] = v
            own_s[j] = sim_of_a[u, i]
            n_own += 1
        i = 0
        j = rptr[u]
        j_end = rptr[u + 1]
        last = -1
        while i < n_own or j < j_end:
            if j >= j_end or (i < n_own and own_v[i] <= rv[j]):
                v = own_v[i]
                s = own_s[i]
                i += 1
            else:
                v = rv[j]
                s = rs[j]
                j += 1
            if v == last:
                continue
            out_a[m] = u
            out_b[m] = v
            out_s[m] = s
            m += 1
            last = v
    return out_a[:m].copy(), out_b[:m].copy(), out_s[:m].copy()


@njit(cache=True, parallel=True, nogil=True)
def fill_pair_records(pair_a, pair_b, sim, group, root_a, root_b, start_a, end_a, start_b,
                      end_b, t0_a, t0_b, out_a, out_b, out_sim, out_group, dt, rel_a, rel_b):
    """Write the kept pairs' fields (any layout: the fields of the structured
    result, filled in one parallel pass): call of A and of B, similarity,
    group, and the measures of TraceDiff Sec. IV-D: dt = |t_s(a) − t_s(b)|
    with each time from its trace's first start (permutation colouring), and
    the relative start of each side within its group root, rel = (t_s(call) −
    t_s(root)) / (t_e(root) − t_s(root)) (0 when the root has zero duration;
    trace-centric colouring)."""
    for i in prange(pair_a.shape[0]):
        u = pair_a[i]
        v = pair_b[i]
        g = group[i]
        out_a[i] = u
        out_b[i] = v
        out_sim[i] = sim[i]
        out_group[i] = g
        dt[i] = abs((start_a[u] - t0_a) - (start_b[v] - t0_b))
        ga = root_a[g]
        gb = root_b[g]
        da = end_a[ga] - start_a[ga]
        db = end_b[gb] - start_b[gb]
        rel_a[i] = (start_a[u] - start_a[ga]) / da if da > 0 else 0.0
        rel_b[i] = (start_b[v] - start_b[gb]) / db if db > 0 else 0.0


@njit(cache=True, nogil=True)
def calls_by_class_and_time(row_of_call, n_rows, time):
    """Calls grouped by class row, each group by (time, call index) ascending:
    returns (order, ptr) with the calls of row r at order[ptr[r]:ptr[r+1]].
    A stable counting sort by row, then a stable sort of each group by time
    (most groups are tiny); the same order as np.lexsort((index, time, row))."""
    order, ptr = group_by_key(row_of_call, n_rows)
    for r in range(n_rows):
        lo = ptr[r]
        hi = ptr[r + 1]
        if hi - lo < 2:
            continue
        if hi - lo <= 16:
            for j in range(lo + 1, hi):        # insertion sort, stable
                x = order[j]
                t = time[x]
                k = j
                while k > lo and time[order[k - 1]] > t:
                    order[k] = order[k - 1]
                    k -= 1
                order[k] = x
        else:
            seg = order[lo:hi].copy()
            o = np.argsort(time[seg], kind="mergesort")
            for j in range(hi - lo):
                order[lo + j] = seg[o[j]]
    return order, ptr
