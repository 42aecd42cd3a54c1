"""cProfile / profile / yappi ``pstats`` dumps → one merged `Trace`, estimated from a call graph.

``python -m cProfile -o out.prof prog.py`` (and ``pstats.Stats.dump_stats``, the ``profile``
module, yappi's ``save(type="pstat")``, pytest-profiling...) writes Python's ``marshal`` of
one dict::

    {(file, line, function): (cc, nc, tt, ct, {caller key: (nc, cc, tt, ct)})}

cc: primitive (not recursive) calls, nc: all calls, tt: seconds in the function's own body,
ct: seconds from its outermost calls' entry to their exit; each caller's tuple is the same
for the calls made from that caller (the ``profile`` module writes only the call count
there, an int).  It holds no stacks, so the tree shown is an estimate, as snakeviz, tuna and
flameprof draw it: ``meta["estimated_from"]`` is "a call graph (cProfile)" and titles say
"estimated from a call graph".

**Reading the bytes**: `tracevis3d.io.safe_marshal.read_marshal` (never `marshal.loads`).

**The profile's shape.**  An entry whose key is not (str, int, str) or whose value is not
(int, int, number, number, dict) is left out (repair ``pstats_entry``); a caller item that
is malformed or names no entry of the profile is left out (``pstats_caller``); a number that
is negative or not finite, or a time past ``limits.max_abs_time`` (1e15 s by default: no run
lasts that long, and sums of such times stay far from float overflow), is 0
(``pstats_number``).  A callers dict shared by two entries
(a marshal ref) is an error (no profiler writes one; it would make the reading quadratic).

**The call graph → a tree** (flameprof's and snakeviz's reading):

- edges caller → callee weigh the callee's ct when called from that caller (the caller
  tuple's ct); from an int (``profile``: call counts only), see `_count_edges`: the callee's
  ct shared out by calls under each caller's ct − tt, or, for a callee that recursed, up to
  its whole ct per caller;
- roots: the functions with no callers, and those called more often than their callers
  record (cProfile's ``{built-in method builtins.exec}``: its first call came from outside
  the profile), in the file's order; a root weighs its ct (cProfile counts ct only for the
  outermost calls, so the nested ones are inside it), or, when that is 0 (the ``profile``
  module's own root ``profiler``), what its callees take;
- a function whose calls mix contexts (cProfile's ``exec``: the program, runpy's inner run of
  it, every import's module) is split into a copy per caller, each given the callees that
  explain its time (`_split_contexts`): the program is not shared out among the modules;
- a node of function f weighing w gives each callee c ``w × edge(f → c) / D(f)``, D(f) =
  max(ct(f), Σ edges out of f): callees that add up to more than the caller's ct (recursion
  through other functions counts them again) are scaled down (repair ``pstats_scaled``);
  what the callees do not take is the node's self time;
- a callee already on the node's path (recursion, a cycle) is not expanded again: its share
  stays in the node's self time (repair ``pstats_recursion``, counting the edges so cut);
- at most ``limits.max_callgraph_nodes`` nodes: the smallest shares are left out (the tree
  keeps the heaviest nodes: the threshold is found by bisection over
  `kernels.callgrind_scan.callgraph_tree`, speedscope's walk for callgrind) and each node's
  left-out shares are one child "…other" (repair ``pstats_other``).  Half the limit goes
  to real nodes, so the "…other" children fit too; a diamond graph of any depth stays
  inside the limit;
- only a function's ``max_callees_per_function`` heaviest callees are walked; the rest
  join "…other".

x is time summed (``meta["x_unit"]`` "µs", converted from pstats' seconds).  The roots' total
is ``meta["pstats_root_total_s"]``; pstats' own total (Σ tt) is ``meta["pstats_total_s"]``.
They agree for cProfile; when the roots weigh more (a profiler that left callers out, yappi
without builtins: a module's ``<module>`` has no caller there, so it is a root and also in
the importer's time) repair ``pstats_roots_overlap`` says so.

Names: a Python function is (function, file, line) (its module comes from the file, see
`tracevis3d.names`); a builtin (cProfile's file ``~``) is written as pstats prints it,
``{built-in method builtins.exec}``, ``{method 'append' of 'list' objects}``.
"""
from __future__ import annotations

import math

import numpy as np

from ..model import TraceFormatError
from .collapsed import Repairs, frame_table
from .limits import DEFAULT_LIMITS
from .safe_marshal import MAX_LONG_DIGITS, MAX_MARSHAL_DEPTH, read_marshal
from .stacks import StackProfile, merged_trace, source_name

__all__ = ["load_pstats", "read_marshal", "MAX_MARSHAL_DEPTH", "MAX_LONG_DIGITS", "OTHER_NAME"]

#: the name of the child that holds a node's left-out callees
OTHER_NAME = "…other"


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _good_key(k) -> bool:
    return (isinstance(k, tuple) and len(k) == 3 and isinstance(k[0], str) and isinstance(k[1], int)
            and not isinstance(k[1], bool) and isinstance(k[2], str))


def _frame_name(key) -> tuple:
    """(name, file, line) of a pstats key, named as pstats prints it (``pstats.func_std_string``)."""
    file, line, name = key
    if file == "~" and line == 0:  # a builtin: pstats writes <...> as {...}
        if name.startswith("<") and name.endswith(">"):
            name = "{" + name[1:-1] + "}"
        return name, "", -1
    if file == "" and line == 0:  # the profile module's builtins
        return name, "", -1
    return name, file, line


def _graph(stats: dict, offsets: list, source: str, rep: Repairs, max_seconds: float) -> tuple:
    """The checked call graph: (keys, nc, tt, ct per function; caller, callee, seconds, calls
    per edge; the calls its callers record per function).  A time or count that is negative or
    not finite, or a time past ``max_seconds``, is 0 (repair ``pstats_number``)."""
    keys, cc, nc, tt, ct, callers = [], [], [], [], [], []
    seen_dicts: set = set()
    bad_num = []

    def num(x, where, is_time):
        if not _number(x):
            return None
        if isinstance(x, float) and not math.isfinite(x) or x < 0 or (is_time and x > max_seconds):
            bad_num.append(where)
            return 0
        return x

    for j, (k, v) in enumerate(stats.items()):
        where = f"entry {j} (byte {offsets[j]})" if j < len(offsets) else f"entry {j}"
        ok = _good_key(k) and isinstance(v, tuple) and len(v) == 5 and isinstance(v[4], dict)
        vals = [num(x, where, col >= 2) for col, x in enumerate(v[:4])] if ok else None
        if not ok or any(x is None for x in vals) or isinstance(vals[0], float) or isinstance(vals[1], float):
            rep.add("pstats_entry", 1, where, "an entry that is not (file, line, name): (cc, nc, tt, ct, callers): "
                                              "left out")
            continue
        if id(v[4]) in seen_dicts:
            raise TraceFormatError(f"{source}: {where}: a callers dict shared with another entry (a marshal ref): "
                                   f"no profiler writes one")
        seen_dicts.add(id(v[4]))
        keys.append(k)
        cc.append(vals[0])
        nc.append(vals[1])
        tt.append(float(vals[2]))
        ct.append(float(vals[3]))
        callers.append((v[4], where))
    index = {k: i for i, k in enumerate(keys)}
    e_from, e_to, e_ct, e_nc, e_int = [], [], [], [], []
    for i, (cd, where) in enumerate(callers):
        for ck, cv in cd.items():
            g = index.get(ck)
            if isinstance(cv, tuple) and len(cv) == 4 and g is not None:
                vals = [num(x, where, col >= 2) for col, x in enumerate(cv)]
                if any(x is None for x in vals) or isinstance(vals[0], float):
                    g = None
                else:
                    e_from.append(g)
                    e_to.append(i)
                    e_ct.append(float(vals[3]))
                    e_nc.append(vals[0])
                    e_int.append(False)
                    continue
            elif _number(cv) and not isinstance(cv, float) and g is not None:
                e_from.append(g)
                e_to.append(i)
                e_ct.append(0.0)
                e_nc.append(max(cv, 0))
                e_int.append(True)
                continue
            rep.add("pstats_caller", 1, where, "a caller that is malformed or not in the profile: left out")
    rep.add("pstats_number", len(bad_num), bad_num[0] if bad_num else "",
            f"a time or count that is negative or not finite, or a time past {max_seconds:g} s (max_abs_time=): 0")
    if not keys:
        raise TraceFormatError(f"{source}: no function entries: an empty profile, nothing to show")
    ct_a = np.asarray(ct, np.float64)
    nc_a = np.asarray([min(x, 2 ** 62) for x in nc], np.float64)
    ef = np.asarray(e_from, np.int64)
    et = np.asarray(e_to, np.int64)
    ew = np.asarray(e_ct, np.float64)
    en = np.asarray([min(x, 2 ** 62) for x in e_nc], np.float64)
    ei = np.asarray(e_int, np.bool_)
    if ei.any():  # the profile module's callers: call counts only
        cc_a = np.asarray([min(x, 2 ** 62) for x in cc], np.float64)
        ew[ei] = _count_edges(ef[ei], et[ei], en[ei], cc_a, nc_a, np.asarray(tt, np.float64), ct_a)
    caller_calls = np.bincount(et, weights=en, minlength=len(keys))
    return keys, nc_a, np.asarray(tt, np.float64), ct_a, ef, et, ew, en, caller_calls


def _count_edges(ef, et, en, cc, nc, tt, ct) -> np.ndarray:
    """Seconds of edges known only by their call counts (the ``profile`` module).  A caller g
    cannot spend more in its callees than ct(g) − tt(g) (no cap when ct(g) is 0: ``profile``'s
    own root).  A callee f that recursed (cc < nc) gives each caller min(cap, ct(f)): its
    outermost call contains the others, so one caller may hold all of ct(f) (``exec``: runpy's
    one call of it runs the whole program, its 14 calls from imports little).  Any other callee's
    ct is shared out by calls (gprof's assumption that calls last alike), water-filled under
    the caps: a caller capped passes what it cannot hold to the others."""
    cap = np.where(ct[ef] > 0, np.maximum(ct[ef] - tt[ef], 0.0), np.inf)
    w = np.minimum(cap, ct[et])
    plain = cc[et] >= nc[et]  # no recursive calls: water-filled
    order = np.lexsort((np.where(en > 0, cap / np.maximum(en, 1e-300), np.inf), et))
    order = order[plain[order]]
    if order.size:
        bounds = np.flatnonzero(np.diff(et[order])) + 1
        for grp in np.split(order, bounds):
            total = ct[et[grp[0]]]
            n_left = float(en[grp].sum())
            for e in grp.tolist():  # by cap per call, smallest first: the rate only grows
                rate = total / n_left if n_left > 0 else 0.0
                w[e] = min(cap[e], en[e] * rate)
                total -= w[e]
                n_left -= en[e]
    return w


def _heaviest_callees(ef, et, ew, nf: int, k: int) -> tuple:
    """CSR of the edges by caller, heaviest first, at most ``k`` per caller: (child_ptr, child,
    weight, number of edges left out)."""
    order = np.lexsort((-ew, ef))
    ef, et, ew = ef[order], et[order], ew[order]
    ptr = np.zeros(nf + 1, np.int64)
    np.add.at(ptr, ef + 1, 1)
    ptr = np.cumsum(ptr)
    rank = np.arange(ef.size, dtype=np.int64) - ptr[ef]
    keep = rank < k
    n_out = int((~keep).sum())
    if n_out:
        ef, et, ew = ef[keep], et[keep], ew[keep]
        ptr = np.zeros(nf + 1, np.int64)
        np.add.at(ptr, ef + 1, 1)
        ptr = np.cumsum(ptr)
    return ptr, et, ew, n_out


def _fitting_tree(denom, ptr, child, weight, roots, root_w, budget: int) -> tuple:
    """`callgraph_tree` with the smallest threshold whose tree has at most ``budget`` nodes
    (0 when the whole tree fits): (parent, frame, self, threshold)."""
    from ..kernels.callgrind_scan import callgraph_tree

    def tree(th):
        return callgraph_tree(denom, ptr, child, weight, roots, root_w, float(th), int(budget))

    res = tree(0.0)
    if res[3] == 0:
        return res[0], res[1], res[2], 0.0
    hi = float(root_w.max()) * (1.0 + 1e-9)  # no node is this heavy: an empty tree
    if not 0.0 < hi < math.inf:  # the reader keeps weights finite (max_abs_time): never, but never a hang
        raise ValueError(f"the call tree's heaviest root weighs {hi!r}: not a weight")
    lo = hi * 1e-15
    best, best_th = tree(hi), hi
    for _ in range(45):  # very small weights: go lower first (45 steps of 1e-15 span every float)
        if tree(lo)[3] != 0 or lo <= 1e-300:
            break
        lo *= 1e-15
    for _ in range(48):  # bisection in log space: tree(lo) overflows, tree(hi) fits
        if hi / lo < 1.0 + 1e-3:
            break
        mid = math.sqrt(lo * hi)
        r = tree(mid)
        if r[3] == 0:
            hi, best, best_th = mid, r, mid
        else:
            lo = mid
    return best[0], best[1], best[2], best_th


def _forest(parent: np.ndarray, self_w: np.ndarray) -> tuple:
    """(inclusive weight, one past the last descendant) of each node of a pre-order forest
    (every parent before its children, each subtree contiguous)."""
    from ..kernels import chrome_tree as ctk
    from ..kernels import stacks as ks

    p = parent.astype(np.int64)
    _, depth, _, _ = ctk.frame_depths(p, max(int(p.size), 1))
    w = ks.subtree_totals(p, depth, self_w.astype(np.float64))
    size = ks.subtree_totals(p, depth, np.ones(p.size, np.float64))
    return w, np.arange(p.size, dtype=np.int64) + size.astype(np.int64)


def _recursion_share(frame, w_node, end, ptr, child, weight, denom, chunk: int = 1 << 20) -> tuple:
    """Per node, the share of its weight that goes to callees already on its path (cut as
    recursion), and how many such (node, callee) pairs there are.  Node i (frame f) has an
    ancestor-or-self of frame c exactly when the last node of frame c at or before i in
    pre-order has its subtree reaching past i (recursion is cut, so nodes of one frame never
    nest).  The (node, callee) pairs are walked in chunks of ``chunk``: memory stays bounded."""
    n = frame.size
    by_frame = np.lexsort((np.arange(n), frame))
    sorted_key = frame[by_frame].astype(np.int64) * (n + 1) + by_frame
    rec = np.zeros(n, np.float64)
    n_pairs = 0
    deg = ptr[frame + 1] - ptr[frame]
    starts = np.concatenate([[0], np.cumsum(deg)])
    lo = 0
    while lo < n:
        hi = int(np.searchsorted(starts, starts[lo] + chunk, side="right")) - 1
        hi = min(max(hi, lo + 1), n)
        cnt = deg[lo:hi]
        tot = int(cnt.sum())
        if tot:
            node = np.repeat(np.arange(lo, hi, dtype=np.int64), cnt)
            e = np.arange(tot, dtype=np.int64) - np.repeat(starts[lo:hi] - starts[lo], cnt) + \
                np.repeat(ptr[frame[lo:hi]], cnt)
            c = child[e]
            k = np.searchsorted(sorted_key, c * (n + 1) + node, side="right") - 1
            kk = np.maximum(k, 0)
            anc = by_frame[kk]
            on_path = (k >= 0) & (frame[anc] == c) & (end[anc] > node)
            if on_path.any():
                nd = node[on_path]
                np.add.at(rec, nd, w_node[nd] * weight[e[on_path]] / denom[frame[nd]])
                n_pairs += int(on_path.sum())
        lo = hi
    return rec, n_pairs


def _split_contexts(keys, nc, tt, ct, ef, et, ew, en, has_caller, caller_calls) -> tuple:
    """The graph with each function whose calls mix contexts split into one copy per caller
    (plus one for its outer calls), and the roots.

    cProfile's ``exec`` is called once from outside the profile (``python -m cProfile`` runs the
    program in it), by runpy inside that (``-m``: the program again), and by every import (the
    modules): its callees are the program and the modules, and their times add up to far more
    than exec's ct (nested imports count again).  Shared out in proportion, the program would
    be drawn at a fraction of its width.  So a function that has callers and either outer calls
    (k = nc − the calls its callers record > 0) or callees that weigh more than its ct, and is
    not its own callee, gets a copy per context: per caller g, as wide as the edge g → f, and
    for the outer calls, as wide as ct.  The contexts, heaviest first, take the callees,
    heaviest first, each up to its width less its share of tt (a greedy fill: the one call
    that explains the time gets the callee of that time); a callee that fits whole in what is
    left of the width is taken whole, since its edge is measured and the share of tt is only a
    guess; what is left of the callees (counted again) is dropped.  An estimate, like the rest of the tree.

    Returns (keys, nc, tt, ct, edge from, edge to, edge weight, roots, the original function of
    each), the copies after the original functions (which keep no edges).  The tree is walked
    over the copies (recursion is cut per copy); its nodes are then named by the originals, so
    a function keeps one name and one colour."""
    nf = len(keys)
    out_sum = np.bincount(ef, weights=ew, minlength=nf)
    outer = has_caller & (nc > caller_calls) & (ct > 0)
    self_edge = np.zeros(nf, np.bool_)
    self_edge[ef[ef == et]] = True
    n_ctx = np.bincount(et, minlength=nf) + outer
    cand = has_caller & (outer | (out_sum > ct * (1.0 + 1e-6) + 1e-12)) & (n_ctx >= 2) & ~self_edge
    plain_roots = np.flatnonzero(~has_caller | (outer & ~cand))
    if not cand.any():
        return keys, nc, tt, ct, ef, et, ew, plain_roots, np.arange(nf, dtype=np.int64)
    keys = list(keys)
    nc_l, tt_l, ct_l = list(nc), list(tt), list(ct)
    orig = list(range(nf))
    copy_of: dict = {}  # (function, caller or -1 for the outer calls) -> copy id
    outer_roots = []
    by_target = np.argsort(et, kind="stable")
    t_ptr = np.searchsorted(et[by_target], np.arange(nf + 1))
    by_source = np.argsort(ef, kind="stable")
    s_ptr = np.searchsorted(ef[by_source], np.arange(nf + 1))
    new_f, new_c, new_w = [], [], []
    for f in np.flatnonzero(cand).tolist():
        ctx = [(float(ew[e]), int(ef[e]), float(en[e])) for e in by_target[t_ptr[f]: t_ptr[f + 1]].tolist()]
        if outer[f]:
            ctx.append((float(ct[f]), -1, float(nc[f] - caller_calls[f])))
        ctx.sort(key=lambda x: -x[0])
        mine = by_source[s_ptr[f]: s_ptr[f + 1]]
        mine = mine[np.argsort(-ew[mine], kind="stable")]
        left = ew[mine].tolist()
        callee = et[mine].tolist()
        j = 0
        for budget, caller, calls in ctx:
            cid = len(keys)
            copy_of[(f, caller)] = cid
            keys.append(keys[f])
            orig.append(f)
            share = calls / nc[f] if nc[f] > 0 else 0.0
            nc_l.append(calls)
            tt_l.append(tt[f] * share)
            ct_l.append(budget)
            if caller < 0:
                outer_roots.append(cid)
            self_guess = tt[f] * share  # this context's self time is not in the file: a guess
            room = budget - self_guess
            while room > 0 and j < len(left):
                # a callee that fits whole in what is left of the width is taken whole: its edge is
                # measured, the guess is not (the outer exec's self time is often under tt / calls)
                take = left[j] if left[j] <= room + self_guess else room
                if take > 0:
                    new_f.append(cid)
                    new_c.append(callee[j])
                    new_w.append(take)
                room -= take
                left[j] -= take
                if left[j] <= 0:
                    j += 1
    keep = ~cand[ef]  # the edges of functions not split, as they are
    src = np.concatenate([ef[keep], np.asarray(new_f, np.int64)])
    dst = np.concatenate([et[keep], np.asarray(new_c, np.int64)])
    wgt = np.concatenate([ew[keep], np.asarray(new_w, np.float64)])
    orig_a = np.asarray(orig, np.int64)
    to_copy = cand[dst]
    if to_copy.any():  # an edge into a split function goes to its caller's copy
        idx = np.flatnonzero(to_copy)
        dst = dst.copy()
        dst[idx] = [copy_of[(c, g)] for c, g in zip(dst[idx].tolist(), orig_a[src[idx]].tolist())]
    roots = np.concatenate([plain_roots, np.asarray(outer_roots, np.int64)])
    return (keys, np.asarray(nc_l, np.float64), np.asarray(tt_l, np.float64), np.asarray(ct_l, np.float64),
            src, dst, wgt, roots, orig_a)


def load_pstats(data, *, source: str = "<bytes>", limits=None, kind_rules=None, warn: bool = True, **_common):
    """Load a pstats dump (``data``: its bytes) as one merged trace estimated from its call
    graph (module docstring)."""
    lim = limits if limits is not None else DEFAULT_LIMITS
    rep = Repairs()
    n_input = len(data) if not isinstance(data, np.ndarray) else data.nbytes
    stats, offsets = read_marshal(data, source)
    if not isinstance(stats, dict):
        raise TraceFormatError(f"{source}: byte 0: a marshalled {type(stats).__name__}, not a pstats dict")
    keys, nc, tt, ct, ef, et, ew, en, caller_calls = _graph(stats, offsets, source, rep, lim.max_abs_time * 1e-6)
    has_caller = np.zeros(len(keys), np.bool_)
    has_caller[et] = True
    n_functions = len(keys)
    total_tt = float(tt.sum())
    keys, nc, tt, ct, ef, et, ew, roots, orig = _split_contexts(keys, nc, tt, ct, ef, et, ew, en, has_caller,
                                                                    caller_calls)
    nf = len(keys)
    # D(f): the caller's weight its callees' shares are taken of
    out_sum = np.bincount(ef, weights=ew, minlength=nf)
    denom = np.maximum(ct, out_sum)
    scaled = out_sum > ct * (1.0 + 1e-6) + 1e-12
    rep.add("pstats_scaled", int(scaled.sum()), repr(keys[int(np.argmax(scaled))][2]) if scaled.any() else "",
            "a function whose callees' times add up to more than its own cumulative time (recursion "
            "counted again): its callees' shares scaled down to fit")
    # a root weighs its ct; the profile module's fake root "profiler" (ct 0) what its callees take
    root_w_all = np.where(ct > 0, ct, out_sum)
    roots = roots[root_w_all[roots] > 0]
    if not roots.size:
        bad = rep.items.get("pstats_number")
        why = f" (its {bad['count']} times or counts that are negative, not finite or past {lim.max_abs_time * 1e-6:g} s " \
              f"are 0; first: {bad['first']})" if bad else ""
        raise TraceFormatError(f"{source}: no function takes time{why}: nothing to show")
    root_w = root_w_all[roots]
    ptr, child, weight, n_capped = _heaviest_callees(ef, et, ew, nf, int(lim.max_callees_per_function))
    budget = max(int(lim.max_callgraph_nodes) // 2, 1)
    n_parent, n_frame, n_self, threshold = _fitting_tree(denom, ptr, child, weight, roots.astype(np.int64),
                                                         root_w.astype(np.float64), budget)
    if not n_parent.size:
        raise TraceFormatError(f"{source}: no call tree fits in max_callgraph_nodes={lim.max_callgraph_nodes}")
    w_node, end = _forest(n_parent, n_self)
    # what each node's callees should take, what they took, and what recursion cut
    full_out = np.bincount(ef, weights=ew, minlength=nf)
    expected = w_node * np.divide(full_out[n_frame], denom[n_frame], out=np.zeros(n_frame.size),
                                  where=denom[n_frame] > 0)
    taken = np.bincount(n_parent[n_parent >= 0], weights=w_node[n_parent >= 0], minlength=n_parent.size)
    rec, n_rec = _recursion_share(n_frame, w_node, end, ptr, child, weight, denom)
    rep.add("pstats_recursion", n_rec, "the call tree",
            "a callee already on the caller's path (recursion or a cycle): not expanded again, its time left "
            "in the caller's self time")
    other = expected - taken - rec
    tol = 1e-9 * (np.maximum(w_node, 0.0) + float(root_w.sum()))  # rounding, and what no view can show
    other = np.where(other > tol, np.minimum(other, n_self), 0.0)
    has_other = other > 0
    n_other = int(has_other.sum())
    rep.add("pstats_other", n_other, "the call tree",
            f"callees whose shares are under {threshold:.3g} s (the tree's limit, max_callgraph_nodes="
            f"{lim.max_callgraph_nodes}) or past a caller's {lim.max_callees_per_function} heaviest "
            f"(max_callees_per_function=): one child '{OTHER_NAME}' per caller" if n_other else "")
    names, files, lines = [], [], []
    for k in keys[:n_functions]:
        nm, fl, ln = _frame_name(k)
        names.append(nm)
        files.append(fl)
        lines.append(ln)
    parent = n_parent.astype(np.int64)
    frame = orig[n_frame]  # a copy of a split function is that function
    self_w = np.where(has_other, n_self - other, n_self)
    if n_other:
        names.append(OTHER_NAME)
        files.append("")
        lines.append(-1)
        ids = np.flatnonzero(has_other)
        # each "…other" right after its parent's subtree would break pre-order; stacks.merged_trace
        # needs only parents before children: appended at the end
        parent = np.concatenate([parent, ids])
        frame = np.concatenate([frame, np.full(ids.size, n_functions, np.int64)])
        self_w = np.concatenate([self_w, other[ids]])
    frames = frame_table(names, lim, files=files, lines=lines)
    prog = "cProfile" if any(k[0] == "~" for k in keys) else \
        "profile" if ("profile", 0, "profiler") in stats else "pstats"
    root_total = float(root_w.sum())
    if root_total > total_tt * 1.01 + 1e-9:
        rep.add("pstats_roots_overlap", 1, "the roots",
                f"the roots' cumulative times add up to {root_total:.4g} s, more than the profile's total "
                f"{total_tt:.4g} s: the profiler left callers out (yappi without builtins), so a root's time "
                f"is also inside other roots")
    name = source_name(source)
    profile = StackProfile(thread_name=name, stack_parent=parent, stack_frame=frame,
                           sample_stack=np.arange(parent.size, dtype=np.int64),
                           sample_weight=np.maximum(self_w, 0.0) * 1e6)
    meta = {"estimated_from": f"a call graph ({prog})", "pstats_functions": n_functions, "pstats_calls": int(ef.size),
            "pstats_roots": int(roots.size), "pstats_total_s": total_tt, "pstats_root_total_s": root_total,
            "pstats_threshold_s": float(threshold), "pstats_program": prog, "pstats_callees_left_out": n_capped,
            "pstats_split_copies": int(nf - n_functions)}
    trace = merged_trace(frames, [profile], unit="µs", source=source, fmt="pstats", limits=lim,
                         input_bytes=n_input, kind_rules=kind_rules,
                         meta=meta, warn=warn)
    return rep.apply(trace, source, warn)
