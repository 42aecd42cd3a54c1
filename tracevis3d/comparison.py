"""TraceDiff: exact call-stack matching of two traces, groups, overview, colours.

Trümper, Döllner, Telea, "Multiscale visual comparison of execution traces":
Sec. III (Γ-sets, Jaccard matches above τ, groups), Sec. IV-A (overview bars),
IV-B (repetitions), IV-D (permutation and trace-centric colour measures).
The kernels live in `tracevis3d.kernels` (gamma, setjoin, groups, overview,
repetition); this module validates input, wires them and documents the result.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numba
import numpy as np

from .model import Trace
from .kernels.gamma import renumber_sets_by_size, subtree_gamma_classes, subtree_shape_classes
from .kernels.groups import (bfs_groups, calls_by_class_and_time, fill_pair_records,
                             top_k_partners, union_of_partners)
from .kernels.overview import overview_bars_both
from .kernels.repetition import sibling_repetitions
from .kernels.tree import group_by_key
from .kernels.setjoin import (class_pair_tiers, jaccard_join, jaccard_join_tree_overlaps,
                              overlap_dtype, overlaps_to_similarity)

__all__ = ["Comparison", "compare_traces", "CLASS_PAIR_DTYPE", "PAIR_DTYPE", "GROUP_DTYPE",
           "REPETITION_DTYPE"]

CLASS_PAIR_DTYPE = np.dtype([("a", np.int32), ("b", np.int32), ("sim", np.float64)])
PAIR_DTYPE = np.dtype([
    ("a", np.int32), ("b", np.int32), ("sim", np.float64), ("dt", np.float64),
    ("rel_a", np.float64), ("rel_b", np.float64), ("group", np.int32),
])
GROUP_DTYPE = np.dtype([("a", np.int32), ("b", np.int32), ("n_matches", np.int32)])
REPETITION_DTYPE = np.dtype([("parent", np.int32), ("start", np.int32), ("period", np.int32),
                             ("count", np.int32)])


@dataclass(eq=False)
class Comparison:
    """The result of `compare_traces` (a stable, documented set of numpy arrays).

    Classes (hash-consed Γ-sets, Sec. III Eq. 2), ids shared by both traces and
      numbered by (set size, creation order), so ascending ids are ascending sizes:
      ``class_a[i]`` / ``class_b[j]``: class of call i of A / call j of B (int32);
      the function set of class k is ``functions[class_items[class_ptr[k]:class_ptr[k+1]]]``
      (``functions`` is the union of both function tables, by name).
    Class pairs (COMPLETE and exact), stored as a CSR over A's classes:
      ``class_rows_a`` / ``class_rows_b`` the classes occurring in A / B (B's
      ascending; A's in the order the join wrote its rows, each once),
      ``class_pair_ptr`` (len(class_rows_a)+1), ``class_pair_row_b`` (int32 index
      into class_rows_b) and ``class_pair_overlap`` (|x ∩ y|, uint16, or int32 for
      vocabularies over 65535 functions): row r's pairs are
      ``class_pair_ptr[r]:class_pair_ptr[r+1]``.  Every pair of a class of A and a
      class of B with Jaccard > tau is there, each row's by B row ascending
      (rows in the join's order: the pairs are compacted in place, never
      re-sorted; ``join="filter"`` gives A's rows ascending).  The similarity is
      exact from the overlap: s = inter / (|x| + |y| − inter) (float64, the same
      expression the join tests, so bit-identical); storing 6 bytes per pair
      instead of 12 is what keeps 10^8 class pairs in memory.  Made on first
      access (each a full-length array): ``class_pair_sim`` (float64),
      ``class_pair_a`` / ``class_pair_b`` (int32 class ids per pair) and
      ``class_pairs`` (structured a, b, sim).
    ``n_pairs_total``: the exact number of call pairs (f_A, f_B) with s > tau,
      Σ over class pairs of (#calls of a in A) × (#calls of b in B).
    Call pairs (KEPT under a bound): ``pairs`` structured
      (a, b, sim, dt, rel_a, rel_b, group), sorted by (a, b).
      The bound: a call pair is kept iff it is among the ``top_k`` best partners
      of its call of A, or among the ``top_k`` best partners of its call of B;
      "best" = similarity desc, then |relative start(a) − relative start(b)| asc
      (relative start = (t_s − first start) / span of its own trace), then index.
      So ``len(pairs) ≤ top_k · (len(a) + len(b))``; ``n_pairs_kept`` = len(pairs).
      ``dt`` = |t_s(a) − t_s(b)| in µs, each time from its trace's first start
      (Sec. IV-D permutation colouring); ``rel_a`` = (t_s(a) − t_s(G_A)) /
      (t_e(G_A) − t_s(G_A)) and ``rel_b`` likewise in G_B, for the root match
      (G_A, G_B) of the pair's group (trace-centric colouring, Sec. IV-D; 0 when
      the root has zero duration).
    Groups (Sec. III) over the kept pairs: ``groups`` structured (a, b, n_matches),
      the root match R(G) = (G_A, G_B) of group g in row g, groups numbered in
      breadth-first order of A; ``pairs['group']`` gives each pair's group.
    Overview (Sec. IV-A), exact over ALL n_pairs_total matches: ``overview_a``
      (n_bins, 3) sums of s of matches whose call of A starts in bin n, split into
      aligned / earlier / later (where the partner starts in B, ±``aligned_tol``);
      ``overview_delta_a`` (n_bins,) Eq. 4's Σ|t_s(f) − t_s(g)|; ``overview_edges_a``
      (n_bins+1,) bin edges (µs since A's first start); the same for B.
    Repetitions (Sec. IV-B): ``repetitions_a`` / ``_b`` structured
      (parent, start, period, count) of repeated identical sibling subtrees.
    """

    a: Trace
    b: Trace
    tau: float
    top_k: int
    functions: list
    class_a: np.ndarray
    class_b: np.ndarray
    class_ptr: np.ndarray
    class_items: np.ndarray
    class_rows_a: np.ndarray
    class_rows_b: np.ndarray
    class_pair_ptr: np.ndarray
    class_pair_row_b: np.ndarray
    class_pair_overlap: np.ndarray
    n_pairs_total: int
    pairs: np.ndarray
    groups: np.ndarray
    overview_a: np.ndarray
    overview_b: np.ndarray
    overview_delta_a: np.ndarray
    overview_delta_b: np.ndarray
    overview_edges_a: np.ndarray
    overview_edges_b: np.ndarray
    repetitions_a: np.ndarray
    repetitions_b: np.ndarray
    params: dict = field(default_factory=dict)

    @property
    def n_classes(self) -> int:
        return int(self.class_ptr.shape[0] - 1)

    def _cached(self, name, make):
        v = self.__dict__.get(name)
        if v is None:
            v = self.__dict__[name] = make()
        return v

    @property
    def class_pair_sim(self) -> np.ndarray:
        """Jaccard similarity of each class pair (float64), from its overlap, made on first access."""
        def make():
            size = np.diff(self.class_ptr)
            return overlaps_to_similarity(self.class_pair_ptr, self.class_pair_row_b,
                                          self.class_pair_overlap,
                                          size[self.class_rows_a].astype(np.int64),
                                          size[self.class_rows_b].astype(np.int64))
        return self._cached("_cps", make)

    @property
    def class_pair_a(self) -> np.ndarray:
        """Class of A of each class pair (int32), made on first access."""
        return self._cached("_cpa", lambda: np.repeat(self.class_rows_a, np.diff(self.class_pair_ptr)))

    @property
    def class_pair_b(self) -> np.ndarray:
        """Class of B of each class pair (int32), made on first access."""
        return self._cached("_cpb", lambda: self.class_rows_b[self.class_pair_row_b])

    @property
    def class_pairs(self) -> np.ndarray:
        """Structured (a, b, sim) view of the class pairs (a copy, made once)."""
        cp = self.__dict__.get("_class_pairs")
        if cp is None:
            cp = np.empty(self.class_pair_a.shape[0], CLASS_PAIR_DTYPE)
            cp["a"] = self.class_pair_a
            cp["b"] = self.class_pair_b
            cp["sim"] = self.class_pair_sim
            self.__dict__["_class_pairs"] = cp
        return cp

    @property
    def n_class_pairs(self) -> int:
        return int(self.class_pair_row_b.shape[0])

    @property
    def n_pairs_kept(self) -> int:
        return int(self.pairs.shape[0])

    def class_set(self, k: int) -> list:
        """Function names of class k (its Γ-set)."""
        return [self.functions[f] for f in self.class_items[self.class_ptr[k]: self.class_ptr[k + 1]]]

    def summary(self) -> dict:
        return {
            "calls_a": len(self.a), "calls_b": len(self.b),
            "classes_a": int(np.unique(self.class_a).size),
            "classes_b": int(np.unique(self.class_b).size),
            "class_pairs": self.n_class_pairs, "pairs_total": int(self.n_pairs_total),
            "pairs_kept": self.n_pairs_kept, "groups": int(self.groups.shape[0]),
            "repetitions_a": int(self.repetitions_a.shape[0]),
            "repetitions_b": int(self.repetitions_b.shape[0]),
        }

    def __repr__(self) -> str:
        s = self.summary()
        return (f"<Comparison tau={self.tau} {s['calls_a']}×{s['calls_b']} calls, "
                f"{s['class_pairs']} class pairs, {s['pairs_total']} call pairs "
                f"({s['pairs_kept']} kept), {s['groups']} groups>")


def _check_params(a, b, tau, top_k, n_bins, aligned_tol, max_period):
    for name, t in (("a", a), ("b", b)):
        if not isinstance(t, Trace):
            raise TypeError(f"compare: trace {name} must be a tracevis3d.Trace, got {type(t).__name__}")
    try:
        tau = float(tau)
    except (TypeError, ValueError):
        raise TypeError(f"compare: tau must be a number in (0, 1), got {tau!r}") from None
    if not (0.0 < tau < 1.0) or math.isnan(tau):
        raise ValueError(f"compare: tau must lie strictly between 0 and 1, got {tau}")
    for name, v, lo in (("top_k", top_k, 1), ("n_bins", n_bins, 1), ("max_period", max_period, 1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"compare: {name} must be an integer >= {lo}, got {v!r}")
    if aligned_tol is not None:
        aligned_tol = float(aligned_tol)
        if not (aligned_tol >= 0.0) or not math.isfinite(aligned_tol):
            raise ValueError(f"compare: aligned_tol must be a finite number >= 0, got {aligned_tol}")
    return tau, aligned_tol


def gamma_classes(a: Trace, b: Trace):
    """Γ-set classes of the calls of A then B, with one function vocabulary (by name).

    Returns ``(functions, cls, class_ptr, class_items)``: ``cls[:len(a)]`` are A's
    classes, ``cls[len(a):]`` B's; the set of class k is
    ``class_items[class_ptr[k]:class_ptr[k+1]]`` (indices into ``functions``).
    Class ids are numbered by (set size, creation order) ascending, deterministic.
    """
    functions: list = []
    index: dict = {}
    maps = []
    for t in (a, b):
        m = np.empty(len(t.function_names), np.int32)
        for i, nm in enumerate(t.function_names):   # per function, not per call
            j = index.get(nm)
            if j is None:
                j = index[nm] = len(functions)
                functions.append(nm)
            m[i] = j
        maps.append(m)
    func = np.concatenate([maps[0][a.func], maps[1][b.func]]).astype(np.int32)
    end = np.concatenate([a.end_index, b.end_index.astype(np.int64) + len(a)]).astype(np.int32)
    cls, class_ptr, class_items = renumber_sets_by_size(*subtree_gamma_classes(func, end,
                                                                               len(functions)))
    return functions, cls, class_ptr, class_items


def compare_traces(a: Trace, b: Trace, tau: float = 0.2, *, top_k: int = 2, n_bins: int = 200,
                   aligned_tol: float | None = None, max_period: int = 8,
                   threads_a=None, threads_b=None, window_a=None, window_b=None,
                   join: str = "tree") -> Comparison:
    """Compare two traces as TraceDiff does (Sec. III, IV-A, IV-D); see `Comparison`.

    Every call f gets Γ(f), the set of function names in its subtree (functions
    of A and B are identified by name).  Distinct Γ-sets (classes) are joined
    EXACTLY: ``class_pairs`` lists every class pair with Jaccard > ``tau``, and
    ``n_pairs_total`` the exact number of call pairs above ``tau``.

    Call-pair bound: call pairs can number ~10^10, so ``pairs`` keeps, for every
    call of A and every call of B, its ``top_k`` best partners (similarity desc,
    then closeness of relative start time, then index): at most
    ``top_k * (len(a) + len(b))`` pairs, memory linear in that.  Groups (Sec. III)
    are built over the kept pairs; the overview bars count ALL matches.

    Parameters: ``tau`` in (0, 1); ``n_bins`` overview intervals per trace;
    ``aligned_tol`` µs within which a partner counts as aligned (default: one bin
    width of the viewer trace); ``max_period`` longest repeated sibling block;
    ``threads_a``/``threads_b`` and ``window_a``/``window_b`` (µs, (t0, t1))
    restrict each side with `Trace.subset` first (call indices in the result then
    refer to ``result.a`` / ``result.b``, the subset traces).
    ``join``: "tree" (`kernels.setjoin.jaccard_join_tree`, overlaps inherited
    along A's call tree) or "filter" (`jaccard_join`, prefix/size filters); both
    exact, same result.
    Deterministic: same inputs give the same arrays.
    Raises TypeError / ValueError naming the bad parameter or the empty trace.
    """
    tau, aligned_tol = _check_params(a, b, tau, top_k, n_bins, aligned_tol, max_period)
    if join not in ("tree", "filter"):
        raise ValueError(f"compare: join must be 'tree' or 'filter', got {join!r}")
    if threads_a is not None or window_a is not None:
        a = a.subset(thread=threads_a, time_window=window_a)
    if threads_b is not None or window_b is not None:
        b = b.subset(thread=threads_b, time_window=window_b)
    for name, t in (("a", a), ("b", b)):
        if len(t) == 0:
            raise ValueError(f"compare: trace {name} has no calls (after thread/window selection)")
    n_a, n_b = len(a), len(b)
    timings: dict = {}
    clock = [time.perf_counter()]

    def lap(stage):
        now = time.perf_counter()
        timings[stage] = timings.get(stage, 0.0) + now - clock[0]
        clock[0] = now

    functions, cls, class_ptr, class_items = gamma_classes(a, b)
    class_a = cls[:n_a]
    class_b = cls[n_a:]
    rows_a = np.unique(class_a).astype(np.int32)       # class of each A row
    rows_b = np.unique(class_b).astype(np.int32)
    row_of_a = np.searchsorted(rows_a, class_a).astype(np.int32)
    row_of_b = np.searchsorted(rows_b, class_b).astype(np.int32)
    count_a = np.bincount(row_of_a, minlength=rows_a.size).astype(np.int64)
    count_b = np.bincount(row_of_b, minlength=rows_b.size).astype(np.int64)

    del cls
    set_size = np.diff(class_ptr)
    size_a = set_size[rows_a].astype(np.int64)           # |Γ| per class row
    size_b = set_size[rows_b].astype(np.int64)
    lap("classes")

    # exact class-level join (Eq. 3): a CSR over A's class rows, overlaps stored
    if join == "tree":
        order, ptr_a, part_a, inter_a = jaccard_join_tree_overlaps(
            class_ptr, class_items, rows_a, rows_b, tau, len(functions), row_of_a, a.end_index,
            join_order=True)
        # A's rows in the order the join wrote them (its pairs compacted in place)
        rows_a, size_a, count_a = rows_a[order], size_a[order], count_a[order]
        new_row = np.empty(order.size, np.int32)
        new_row[order] = np.arange(order.size, dtype=np.int32)
        row_of_a = new_row[row_of_a]
        del order, new_row
    else:
        ptr_a, part_a, sim_a = jaccard_join(class_ptr, class_items, rows_a, rows_b, tau,
                                            len(functions))
        # s = i / (nx + ny − i)  ⇔  i = s (nx + ny) / (1 + s): exact after rounding
        nxy = np.repeat(size_a, np.diff(ptr_a)) + size_b[part_a]
        inter_a = np.rint(sim_a * nxy / (1.0 + sim_a)).astype(overlap_dtype(len(functions)))
        del nxy, sim_a
    lap("join")
    # the exact call-pair count and both sides' best similarity tiers, in three
    # passes over A's pairs (no transposed copy)
    n_parts = max(1, numba.get_num_threads())
    n_pairs_total, tptr_a, tpart_a, tsim_a, tptr_b, tpart_b, tsim_b = class_pair_tiers(
        ptr_a, part_a, inter_a, size_a, size_b, count_a, count_b, int(top_k), n_parts)
    n_pairs_total = int(n_pairs_total)

    # times: µs since each trace's first start; relative start in [0, 1]
    t0_a, t0_b = float(a.start.min()), float(b.start.min())
    span_a = max(float(a.end.max()) - t0_a, 0.0)
    span_b = max(float(b.end.max()) - t0_b, 0.0)
    ts_a = a.start - t0_a
    ts_b = b.start - t0_b
    rel_a = ts_a / (span_a if span_a > 0 else 1.0)
    rel_b = ts_b / (span_b if span_b > 0 else 1.0)
    idx_a = np.arange(n_a, dtype=np.int32)
    idx_b = np.arange(n_b, dtype=np.int32)
    by_a, calls_ptr_a = calls_by_class_and_time(row_of_a, rows_a.size, ts_a)
    by_b, calls_ptr_b = calls_by_class_and_time(row_of_b, rows_b.size, ts_b)
    lap("tiers+call_order")

    # overview (exact over all matches)
    tol_a = aligned_tol if aligned_tol is not None else span_a / n_bins
    tol_b = aligned_tol if aligned_tol is not None else span_b / n_bins
    ov_a, dl_a, ov_b, dl_b = overview_bars_both(ptr_a, part_a, inter_a, size_a, size_b,
                                                calls_ptr_a, ts_a[by_a], calls_ptr_b, ts_b[by_b],
                                                span_a, span_b, int(n_bins), tol_a, tol_b, tau)
    lap("overview")

    # kept call pairs: top-k both ways
    pv, ps = top_k_partners(row_of_a, rel_a, tptr_a, tpart_a, tsim_a,
                            calls_ptr_b, idx_b[by_b], rel_b[by_b], int(top_k))
    pu, pus = top_k_partners(row_of_b, rel_b, tptr_b, tpart_b, tsim_b,
                             calls_ptr_a, idx_a[by_a], rel_a[by_a], int(top_k))
    lap("top_k")
    pa, pb, psim = union_of_partners(pv, ps, pu, pus)
    del pv, ps, pu, pus
    lap("kept_pairs")

    # groups over the kept pairs, breadth-first over A: (depth of a, a, b), a
    # stable sort by depth of pairs already sorted by (a, b)
    bfs, _ = group_by_key(a.depth[pa], int(a.depth.max()) + 1 if n_a else 1)
    g_bfs, root_a, root_b = bfs_groups(pa[bfs], pb[bfs], a.parent, b.end_index)
    group = np.empty(pa.size, np.int32)
    group[bfs] = g_bfs
    del bfs, g_bfs
    groups = np.empty(root_a.size, GROUP_DTYPE)
    groups["a"] = root_a
    groups["b"] = root_b
    groups["n_matches"] = np.bincount(group, minlength=root_a.size)
    lap("groups")

    pairs = np.empty(pa.size, PAIR_DTYPE)
    fill_pair_records(pa, pb, psim, group, root_a, root_b, a.start, a.end, b.start, b.end, t0_a,
                      t0_b, pairs["a"], pairs["b"], pairs["sim"], pairs["group"], pairs["dt"],
                      pairs["rel_a"], pairs["rel_b"])
    del pa, pb, psim
    lap("pair_fields")

    # repetitions of identical sibling subtrees
    reps = []
    for t in (a, b):
        shape, _ = subtree_shape_classes(t.func, t.end_index)
        r = sibling_repetitions(shape, t.parent, t.end_index, t.thread, int(max_period))
        rec = np.empty(r.shape[0], REPETITION_DTYPE)
        for j, nm in enumerate(REPETITION_DTYPE.names):
            rec[nm] = r[:, j]
        reps.append(rec)
    lap("repetitions")

    return Comparison(
        a=a, b=b, tau=tau, top_k=int(top_k), functions=functions,
        class_a=class_a, class_b=class_b, class_ptr=class_ptr, class_items=class_items,
        class_rows_a=rows_a, class_rows_b=rows_b, class_pair_ptr=ptr_a, class_pair_row_b=part_a,
        class_pair_overlap=inter_a,
        n_pairs_total=n_pairs_total, pairs=pairs, groups=groups,
        overview_a=ov_a, overview_b=ov_b, overview_delta_a=dl_a, overview_delta_b=dl_b,
        overview_edges_a=np.linspace(0.0, span_a, int(n_bins) + 1),
        overview_edges_b=np.linspace(0.0, span_b, int(n_bins) + 1),
        repetitions_a=reps[0], repetitions_b=reps[1],
        params=dict(tau=tau, top_k=int(top_k), n_bins=int(n_bins), aligned_tol_a=tol_a,
                    aligned_tol_b=tol_b, max_period=int(max_period), timings=timings),
    )
