"""Call-level matches under a bound, and TraceDiff's groups (Sec. III, IV-D).

Two traces can hold ~10^10 call pairs above τ (every ``len`` call matches every
``len`` call), so call pairs are *kept* under a bound: for each call, its
``k`` best partners ranked by similarity (desc), then closeness of relative
start time (asc), then partner index (asc).  `kept_pairs.top_k_picks` computes that
from the complete class-level join without ever enumerating all call pairs.

`bfs_groups` partitions the kept matches into groups (Sec. III): matches are
visited breadth-first over trace A; a match (u, v) joins the first-created group
G with u ∈ S(G_A) and v ∈ S(G_B), otherwise it becomes the root match
R(G) = (u, v) of a new group.
"""
import concurrent.futures

import numpy as np
from numba import njit

from .setjoin import lower_bound
from .tree import group_by_key


#: `bfs_groups` looks for a match's group at this many of the shallowest calls rooting groups
#: above it by binary search, and asks its segment tree (all of them at once) past that
FEW_LEVELS = 32
#: why `_bfs_run` stopped: every match walked, the segment tree to be made, a table to grow
_RUN_DONE, _RUN_TREE, _RUN_ROOM = 0, 1, 2
#: the log's room a match needs: one `_tree_add` logs at most two nodes per level
_LOG_ROOM = 2 * 64


@njit(cache=True, nogil=True, inline="always")
def _chmin(tree, node, key, log_node, log_old, n_log):
    """tree[node] = min(tree[node], key), the old value logged (undone when the walk leaves
    the group's call) when it changes; returns the log's new length (the log arrays are sized
    by the caller)."""
    if key < tree[node]:
        log_node[n_log] = node
        log_old[n_log] = tree[node]
        tree[node] = key
        n_log += 1
    return n_log


@njit(cache=True, nogil=True)
def _grown(a, need):
    """``a`` with room for ``need`` entries (doubled and copied when short)."""
    if a.shape[0] >= need:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), a.dtype)
    b[:a.shape[0]] = a
    return b


@njit(cache=True, nogil=True, inline="always")
def _tree_add_logged(tree, size, lo, hi, key, log_node, log_old, n_log):
    """Leaves [lo, hi) of the segment tree (``size`` leaves from index ``size``): every node
    of the range's cover gets min(its key, ``key``), each change logged in the log's room
    (`_LOG_ROOM` past ``n_log``, made by the caller).  Returns the log's new length."""
    lo += size
    hi += size
    while lo < hi:
        if lo & 1:
            n_log = _chmin(tree, lo, key, log_node, log_old, n_log)
            lo += 1
        if hi & 1:
            hi -= 1
            n_log = _chmin(tree, hi, key, log_node, log_old, n_log)
        lo >>= 1
        hi >>= 1
    return n_log


@njit(cache=True, nogil=True)
def _tree_add(tree, size, lo, hi, key, log_node, log_old, n_log):
    """`_tree_add_logged` with the log grown first when short.  Returns (n_log, log_node,
    log_old)."""
    log_node = _grown(log_node, n_log + _LOG_ROOM)
    log_old = _grown(log_old, n_log + _LOG_ROOM)
    n_log = _tree_add_logged(tree, size, lo, hi, key, log_node, log_old, n_log)
    return n_log, log_node, log_old


def bfs_groups(pair_a, pair_b, depth_a, end_index_a, end_index_b, n_segments=None):
    """Groups of matches (TraceDiff Sec. III): the breadth-first partition.

    Definition (what `tests/test_compare.groups_bf` computes): the matches are visited
    breadth-first over trace A (by depth of a, a, b); match m = (u, v) joins the
    first-created group G whose root (G_A, G_B) has u ∈ S(G_A) (G_A is u or an ancestor)
    and v ∈ S(G_B) (G_B ≤ v < end_index_b[G_B]); if none, m is the root of a new group.
    The paper's text keeps only one "current" group, which under BFS breaks every nested
    group apart as soon as a sibling is visited; we keep all groups, which is what its
    definition of S(G_A) × S(G_B) asks for.

    ``pair_a``/``pair_b``: the matches sorted by (a, b) (A's pre-order, then B's; a
    ValueError otherwise).  Whether (u, v) roots a group depends only on the groups rooted
    at u's proper ancestors (all of them were created before it, at smaller depths) and at
    u itself (created by u's earlier matches).  Those are the same in pre-order, so the
    matches are visited in pre-order of A with a stack of u's ancestors that root groups:
    each group's B subtree [G_B, end_index_b[G_B]) is a range of B's pre-order, and a
    segment tree over the distinct partners v keeps, per range, the least key
    (depth of G_A, group) with range-min updates and point queries (the min along the leaf's
    path), undone from a log when the walk leaves G_A's subtree.  A match first looks at the
    `FEW_LEVELS` shallowest calls of the stack, one binary search each, and asks the tree
    only past them (most matches of real traces lie in a group of a thread's first levels:
    the tree's deep leaves are cache misses); the tree is made the first time a match gets
    past them, from the groups of the calls then on the stack.  Among the groups holding
    (u, v) the first-created is the one rooted at the shallowest call (BFS), and the groups
    rooted at one call have disjoint B subtrees (a match of u inside an earlier root's subtree
    joins it), so the least key is that group.  The groups are numbered in creation order of
    the breadth-first visit: by (depth of G_A, G_A, G_B).

    O((matches + groups) · log matches), memory linear in the matches (the log: at most
    one entry per tree node an update changed, ~2 log per group on the stack).  A visit
    over ancestor lists is O(depth) per match: a 10^5-deep recursion against
    another takes 16 s, a 10^6-deep one hours, and a call rooting 10^5 groups (a thread's
    root matched to a pool's tasks) makes every match below it visit them all (a real
    16-worker docutils trace against its perturbed copy: 50 s).
    No group spans two calls of depth 0 (the walk's stack is empty between them, and its tree
    back to its first state), so the matches are cut there into up to ``n_segments`` runs of
    about equal length (default: `GROUP_SEGMENTS` from `GROUP_SEGMENT_MATCHES` matches on,
    else one), walked on threads (`_bfs_walk`) and numbered together (`_number_groups`): the
    groups of one walk, in the same order.
    Returns ``(group, root_a, root_b)``: ``group`` per match in the given order.
    """
    pair_a = np.ascontiguousarray(pair_a, np.int32)
    pair_b = np.ascontiguousarray(pair_b, np.int32)
    m = pair_a.shape[0]
    if m == 0:
        return np.empty(0, np.int32), np.empty(0, np.int32), np.empty(0, np.int32)
    if n_segments is None:
        n_segments = GROUP_SEGMENTS if m >= GROUP_SEGMENT_MATCHES else 1
    cuts = _segment_cuts(pair_a, depth_a, int(n_segments))
    for c in cuts[1:-1]:                # each walk checks the order within its run; here across the cuts
        _check_sorted(pair_a[c - 1:c + 1], pair_b[c - 1:c + 1])
    # each walk writes its matches' groups (numbered within the walk) into its slice of one
    # int32 array, which `_number_groups` renumbers in place: 4 bytes a match in all
    group = np.empty(m, np.int32)
    walk = [(pair_a[i:j], pair_b[i:j], depth_a, end_index_a, end_index_b, group[i:j])
            for i, j in zip(cuts[:-1], cuts[1:])]
    if len(walk) == 1:
        walked = [_bfs_walk(*walk[0])]
    else:
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(walk)) as pool:   # the kernel releases the GIL
            walked = list(pool.map(lambda w: _bfs_walk(*w), walk))
    offset = np.cumsum([0] + [w[0].shape[0] for w in walked]).astype(np.int64)
    root_a, root_b = np.concatenate([w[0] for w in walked]), np.concatenate([w[1] for w in walked])
    del walked
    return _number_groups(group, np.asarray(cuts, np.int64), offset, root_a, root_b, depth_a)


#: `bfs_groups` walks the matches in this many runs at once (cut at calls of depth 0) ...
GROUP_SEGMENTS = 2
#: ... from this many matches on (below, one walk costs less than a thread)
GROUP_SEGMENT_MATCHES = 1 << 16


def _segment_cuts(pair_a, depth_a, n_segments):
    """Where `bfs_groups` cuts the matches (sorted by a): for j = 1 … n_segments − 1, at the
    match nearest to j·m / n_segments whose call of A lies under another call of depth 0 than
    the match before it (each cut past the last; none where no such match is left).
    Returns the cut indices, 0 and m included."""
    m = pair_a.shape[0]
    # the first match under each call of depth 0 (pre-order: a call's subtree follows it)
    starts = np.unique(np.searchsorted(pair_a, np.flatnonzero(np.asarray(depth_a) == 0)))
    starts = starts[(starts > 0) & (starts < m)]
    cuts = [0]
    for j in range(1, max(1, int(n_segments))):
        starts = starts[starts > cuts[-1]]
        if starts.size == 0:
            break
        t = m * j // n_segments
        k = min(int(np.searchsorted(starts, t)), starts.size - 1)
        if k > 0 and t - starts[k - 1] < abs(starts[k] - t):
            k -= 1
        cuts.append(int(starts[k]))
    return cuts + [m]


@njit(cache=True, nogil=True)
def _number_groups(group, cuts, offset, root_a, root_b, depth_a):
    """The groups numbered as the breadth-first visit creates them: by (depth of G_A, G_A, G_B).
    ``group``: each match's group as its walk numbered it (`_bfs_walk`: creation order within
    the walk of matches [cuts[s], cuts[s+1]), whose groups are ``offset[s]`` on in the
    concatenated roots), renumbered in place.  Returns (group per match, root_a, root_b) in
    that numbering."""
    ng = root_a.shape[0]
    depth_r = depth_a[root_a]
    order, _ = group_by_key(depth_r, int(depth_r.max()) + 1 if ng else 1)   # stable: (a, b) within a depth
    rank = np.empty(ng, np.int32)
    for j in range(ng):
        rank[order[j]] = j
    for s in range(cuts.shape[0] - 1):
        o = offset[s]
        for i in range(cuts[s], cuts[s + 1]):
            group[i] = rank[group[i] + o]
    return group, root_a[order].copy(), root_b[order].copy()


@njit(cache=True, nogil=True)
def _check_sorted(pair_a, pair_b):
    """ValueError unless the matches are sorted by (a, b), each once."""
    for i in range(1, pair_a.shape[0]):
        if pair_a[i] < pair_a[i - 1] or (pair_a[i] == pair_a[i - 1] and pair_b[i] <= pair_b[i - 1]):
            raise ValueError("bfs_groups: the matches are not sorted by (a, b), each once")


@njit(cache=True, nogil=True)
def _bfs_run(i, pair_a, pair_b, depth_a, end_index_a, end_index_b, local, have_tree, leaf_of, size, tree, log_node,
             log_old, stack_a, stack_log, stack_g0, stack_g1, root_a, root_b, st):
    """`_bfs_walk`'s matches from ``i`` on with the state ``st`` = [n_log, sp, ng], until they
    are all walked or a match needs what only the caller makes: the segment tree (the first
    match that reaches past FEW_LEVELS) or more room in the stacks or the log.  A match that
    stops it is left as it was met (its walk starts again from the top: popping the finished
    calls again pops nothing).  No array is rebound here, so numba counts no references per
    match (a loop that may rebind an array raises and drops its count on every pass).
    Returns (the match to walk next, why it stopped: `_RUN_DONE`, `_RUN_TREE`, `_RUN_ROOM`)."""
    m = pair_a.shape[0]
    big = np.iinfo(np.int64).max
    n_log, sp, ng = st[0], st[1], st[2]
    why = _RUN_DONE
    while i < m:
        if sp + 1 > stack_a.shape[0] or (have_tree and n_log + _LOG_ROOM > log_node.shape[0]):
            why = _RUN_ROOM
            break
        u = pair_a[i]
        v = pair_b[i]
        while sp > 0 and end_index_a[stack_a[sp - 1]] <= u:   # left that call's subtree
            sp -= 1
            while n_log > stack_log[sp]:
                n_log -= 1
                tree[log_node[n_log]] = log_old[n_log]
        # the shallowest few calls on the stack first: the groups rooted at one call have
        # ascending, disjoint B roots, so one binary search each (most matches lie in a group
        # of a thread's first levels); deeper than that, the segment tree (every level at once)
        found = -1
        for s_ in range(min(sp, FEW_LEVELS)):
            g0 = stack_g0[s_]
            g1 = stack_g1[s_] if stack_g1[s_] >= 0 else ng
            j = lower_bound(root_b, g0, g1, v + 1) - 1
            if j >= g0 and v < end_index_b[root_b[j]]:
                found = j
                break
        if found < 0 and sp > FEW_LEVELS:
            if not have_tree:
                why = _RUN_TREE
                break
            best = big
            x = np.int64(leaf_of[v]) + size
            while x >= 1:
                if tree[x] < best:
                    best = tree[x]
                x >>= 1
            if best != big:
                found = best & 0xFFFFFFFF
        if found >= 0:
            local[i] = found
            i += 1
            continue
        root_a[ng] = u
        root_b[ng] = v
        local[i] = ng
        if sp == 0 or stack_a[sp - 1] != u:
            if sp > 0 and stack_g1[sp - 1] < 0:
                stack_g1[sp - 1] = ng        # its call's matches are done: its groups end here
            stack_a[sp] = u
            stack_log[sp] = n_log
            stack_g0[sp] = ng
            stack_g1[sp] = -1
            sp += 1
        if have_tree:                         # the group's B subtree [G_B, end) over the leaves
            n_log = _tree_add_logged(tree, size, np.int64(leaf_of[v]), np.int64(leaf_of[end_index_b[v]]),
                                     (np.int64(depth_a[u]) << 32) | ng, log_node, log_old, n_log)
        ng += 1
        i += 1
    st[0], st[1], st[2] = n_log, sp, ng
    return i, why


@njit(cache=True, nogil=True)
def _bfs_walk(pair_a, pair_b, depth_a, end_index_a, end_index_b, local):
    """`bfs_groups`' walk over matches sorted by (a, b) (its docstring): each match's group in
    creation order, written to ``local`` (int32, one per match), and the groups' roots.  The
    matches are walked by `_bfs_run`; here, between its runs, the segment tree is made and the
    stacks and the log grown.  Returns (root_a, root_b)."""
    m = pair_a.shape[0]
    _check_sorted(pair_a, pair_b)
    big = np.iinfo(np.int64).max
    # the segment tree, made the first time a match reaches past FEW_LEVELS: its leaves are
    # the distinct partners v in B's pre-order (leaf_of[x]: how many of them are below x)
    have_tree = False
    leaf_of = np.empty(0, np.int32)          # (int32: at most one leaf per call of B)
    size = 1
    tree = np.empty(0, np.int64)
    log_node = np.empty(1024, np.int64)
    log_old = np.empty(1024, np.int64)
    stack_a = np.empty(64, np.int64)         # ancestors of u (or u) rooting groups, root first
    stack_log = np.empty(64, np.int64)       # the log's length when each was entered
    stack_g0 = np.empty(64, np.int64)        # its groups: [g0, g1), g1 = -1 while still made
    stack_g1 = np.empty(64, np.int64)
    root_a = np.empty(m, np.int32)           # (pages resident only as far as groups are made)
    root_b = np.empty(m, np.int32)
    st = np.zeros(3, np.int64)               # n_log, sp, ng
    i = 0
    while True:
        i, why = _bfs_run(i, pair_a, pair_b, depth_a, end_index_a, end_index_b, local, have_tree, leaf_of, size, tree,
                          log_node, log_old, stack_a, stack_log, stack_g0, stack_g1, root_a, root_b, st)
        if why == _RUN_DONE:
            break
        n_log, sp, ng = st[0], st[1], st[2]
        if why == _RUN_ROOM:
            stack_a = _grown(stack_a, sp + 1)
            stack_log = _grown(stack_log, sp + 1)
            stack_g0 = _grown(stack_g0, sp + 1)
            stack_g1 = _grown(stack_g1, sp + 1)
            log_node = _grown(log_node, n_log + _LOG_ROOM)
            log_old = _grown(log_old, n_log + _LOG_ROOM)
            continue
        have_tree = True
        leaf_of = np.zeros(end_index_b.shape[0] + 1, np.int32)
        for x in range(m):
            leaf_of[pair_b[x] + 1] = 1
        for x in range(end_index_b.shape[0]):
            leaf_of[x + 1] += leaf_of[x]
        # as many leaves as partners, not the next power of two: the bottom-up tree's range
        # cover and its leaf-to-root queries are exact for any size with min (commutative)
        size = max(1, np.int64(leaf_of[-1]))
        tree = np.full(2 * size, big, np.int64)
        for s_ in range(sp):          # the groups of the calls on the stack
            stack_log[s_] = n_log
            g1 = stack_g1[s_] if stack_g1[s_] >= 0 else ng
            for g in range(stack_g0[s_], g1):
                n_log, log_node, log_old = _tree_add(tree, size, np.int64(leaf_of[root_b[g]]),
                                                     np.int64(leaf_of[end_index_b[root_b[g]]]),
                                                     (np.int64(depth_a[stack_a[s_]]) << 32) | g,
                                                     log_node, log_old, n_log)
        st[0] = n_log
    ng = st[2]
    return root_a[:ng].copy(), root_b[:ng].copy()
