"""TraceDiff: exact call-stack matching of two traces, groups, overview, colours.

Trümper, Döllner, Telea, "Multiscale visual comparison of execution traces":
Sec. III (Γ-sets, Jaccard matches above τ, groups), Sec. IV-A (overview bars),
IV-B (repetitions), IV-D (permutation and trace-centric colour measures).
The kernels live in `tracevis3d.kernels` (gamma, setjoin and setjoin_*, groups, overview,
repetition); this module validates input, wires them and documents the result.

Over 600 lines: the `Comparison` object is the analysis' documented contract (arrays, queries,
picking, serialisation) that the layout, the CLI and the panel share; its methods are small.
"""
from __future__ import annotations

import concurrent.futures
import math
import mmap
import time
from dataclasses import dataclass, field

import numpy as np

from ..model import Trace
from ..names import intern_all
from ..transform import longest_named_call
from ..kernels.gamma import merge_gamma_classes, process_hash_seed, renumber_sets_by_size
from ..kernels.gamma_sweep import gamma_classes_grown, shape_classes_grown
from ..pages import huge_pages
from ..kernels.lazybuf import lazy_empty, release_range
from ..kernels.groups import bfs_groups
from ..kernels.kept_pairs import calls_by_class_time, fill_pair_fields, picks_by_call, top_k_picks, union_of_picks
from ..kernels.repetition import sibling_repetitions
from ..kernels.setjoin import overlaps_to_similarity
from ..kernels.setjoin_tree import WAVE_PAIRS  # noqa: F401  (the default wave, named here for callers)
from .compare_join import FILTER_JOIN_BYTES_PER_CLASS_PAIR, WAVE_BYTES_PER_CLASS_PAIR, join_class_pairs  # noqa: F401

__all__ = ["Comparison", "compare_traces", "CLASS_PAIR_DTYPE", "PAIR_DTYPE", "GROUP_DTYPE",
           "REPETITION_DTYPE", "CALL_DTYPE", "MATCH_DTYPE", "to_dicts"]

CLASS_PAIR_DTYPE = np.dtype([("a", np.int32), ("b", np.int32), ("sim", np.float64)])
PAIR_DTYPE = np.dtype([
    ("a", np.int32), ("b", np.int32), ("sim", np.float64), ("dt", np.float64),
    ("rel_a", np.float64), ("rel_b", np.float64), ("group", np.int32),
])
GROUP_DTYPE = np.dtype([("a", np.int32), ("b", np.int32), ("n_matches", np.int32)])
REPETITION_DTYPE = np.dtype([("parent", np.int32), ("start", np.int32), ("period", np.int32),
                             ("count", np.int32)])
#: rows of `Comparison.unmatched_calls`: one call of one side (times in µs from that trace's
#: first start; ``calls`` = calls in its subtree, itself included)
CALL_DTYPE = np.dtype([("call", np.int32), ("name", object), ("thread", object), ("start", np.float64),
                       ("duration", np.float64), ("depth", np.int32), ("calls", np.int32)])
#: rows of `Comparison.top_matches`, `slower_in_b`, `faster_in_b`, `partners`: a call of A
#: and a call of B whose subtrees match (similarity > τ); ``ratio`` = duration in B ÷
#: duration in A; ``partners_a`` / ``partners_b``: how many calls of the OTHER run match
#: the call of A / of B (exact, over all matches, not only the kept ones)
MATCH_DTYPE = np.dtype([
    ("call_a", np.int32), ("call_b", np.int32), ("name_a", object), ("name_b", object),
    ("similarity", np.float64), ("start_a", np.float64), ("start_b", np.float64),
    ("duration_a", np.float64), ("duration_b", np.float64), ("ratio", np.float64),
    ("calls_a", np.int32), ("calls_b", np.int32), ("partners_a", np.int64), ("partners_b", np.int64),
])
TOP_MATCH_ORDERS = ("size", "duration", "similarity")


def to_dicts(rows: np.ndarray) -> list:
    """The rows of a structured array (e.g. `Comparison.top_matches`) as a list of dicts of
    plain Python values."""
    names = rows.dtype.names
    return [dict(zip(names, (v.item() if hasattr(v, "item") else v for v in row))) for row in rows]


@dataclass(eq=False)
class Comparison:
    """The result of `compare_traces` (a stable, documented set of numpy arrays).

    Classes (hash-consed Γ-sets, Sec. III Eq. 2), ids shared by both traces and
      numbered by (set size, creation order), so ascending ids are ascending sizes:
      ``class_a[i]`` / ``class_b[j]``: class of call i of A / call j of B (int32);
      the function set of class k is ``functions[class_items[class_ptr[k]:class_ptr[k+1]]]``
      (``functions`` is the union of both function tables, by name).
    Class pairs (COMPLETE and exact; KEPT only up to a size, see ``keep_class_pairs`` of
      `compare_traces`: the join hands them to everything below as it reads them, so a pair
      of 10^7-call traces never holds its billions of class pairs; ``class_pairs_kept``
      says whether they are here, else ``class_pair_ptr`` / ``_row_b`` / ``_overlap`` are
      None and the derived arrays raise ValueError), stored as a CSR over A's classes:
      ``class_rows_a`` / ``class_rows_b`` the classes occurring in A / B (B's
      ascending; A's in the order the join wrote its rows, each once; ascending when
      the class pairs are not kept),
      ``class_pair_ptr`` (len(class_rows_a)+1), ``class_pair_row_b`` (int32 index
      into class_rows_b) and ``class_pair_overlap`` (|x ∩ y|, uint16, or int32 where a
      class of each side has 65535 functions or more: `setjoin.overlap_dtype`): row r's pairs are
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
      Σ over class pairs of (#calls of a in A) × (#calls of b in B); ``class_pair_count``
      the exact number of class pairs (kept or not); ``partner_calls_a`` / ``_b`` per
      class id: how many calls of the other run match a call of that class (exact, from
      all class pairs; 0 = no match).
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

    Plain names (the fields above keep the paper's terms; these say the same in words):

    ==============================  ============================================  ==================
    plain name                      what it is                                    paper / field
    ==============================  ============================================  ==================
    ``subtree_set_a`` / ``_b``      per call: id of the set of functions called    Γ(f) class,
                                    in its subtree                                 ``class_a``/``_b``
    ``subtree_function_sets``       those sets as a CSR (ptr, function indices)    Γ-sets,
                                                                                   ``class_ptr``/``_items``
    ``functions_in_set(k)``         the function names of set k                    ``class_set(k)``
    ``matching_set_pairs``          every pair of sets with Jaccard > τ            ``class_pairs``
    ``n_matching_call_pairs``       the exact number of matching call pairs        |K|, ``n_pairs_total``
    ``matches``                     the call pairs kept (best partners both ways)  k(f_A, f_B), ``pairs``
    ``match_groups``                root match and size of each group              G, R(G), ``groups``
    ==============================  ============================================  ==================

    Questions answered directly (each a small structured array, see `to_dicts`):
    `has_match`, `unmatched_calls` (where the runs differ), `best_partners`,
    `top_matches` (the largest matched calls and their partners), `slower_in_b` /
    `faster_in_b` (matched calls whose partner took much longer / shorter), `partners`
    (every kept partner of one call), `find_call` (a call by index or function name);
    `describe()` says it all in a few lines of text.
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
    class_pair_count: int = 0
    partner_calls_a: np.ndarray = None
    partner_calls_b: np.ndarray = None

    @property
    def class_pairs_kept(self) -> bool:
        """Whether the class pairs themselves are held (``keep_class_pairs`` of `compare_traces`)."""
        return self.class_pair_ptr is not None

    def _kept_pairs(self):
        if self.class_pair_ptr is None:
            raise ValueError(
                f"compare: the {self.class_pair_count:,} class pairs were streamed, not kept (they would take "
                f"{_gib(6 * self.class_pair_count)}): compare(..., keep_class_pairs=True) keeps them")

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
            self._kept_pairs()
            size = np.diff(self.class_ptr)
            return overlaps_to_similarity(self.class_pair_ptr, self.class_pair_row_b,
                                          self.class_pair_overlap,
                                          size[self.class_rows_a].astype(np.int64),
                                          size[self.class_rows_b].astype(np.int64))
        return self._cached("_cps", make)

    @property
    def class_pair_a(self) -> np.ndarray:
        """Class of A of each class pair (int32), made on first access."""
        self._kept_pairs()
        return self._cached("_cpa", lambda: np.repeat(self.class_rows_a, np.diff(self.class_pair_ptr)))

    @property
    def class_pair_b(self) -> np.ndarray:
        """Class of B of each class pair (int32), made on first access."""
        self._kept_pairs()
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
        """The exact number of class pairs (J > τ), kept or not; ``class_pair_count``."""
        return int(self.class_pair_count)

    @property
    def n_pairs_kept(self) -> int:
        return int(self.pairs.shape[0])

    def class_set(self, k: int) -> list:
        """Function names of class k (its Γ-set)."""
        return [self.functions[f] for f in self.class_items[self.class_ptr[k]: self.class_ptr[k + 1]]]

    # ------------------------------------------------------------ plain names
    @property
    def subtree_set_a(self) -> np.ndarray:
        """Per call of A: the id of the set of functions called in its subtree (its Γ-set
        class, Sec. III Eq. 2; equal ids, equal sets); ``class_a``."""
        return self.class_a

    @property
    def subtree_set_b(self) -> np.ndarray:
        """Per call of B: the id of its subtree's function set; ``class_b``."""
        return self.class_b

    @property
    def subtree_function_sets(self) -> tuple:
        """(ptr, functions): set k holds ``functions[ptr[k]:ptr[k+1]]`` (indices into
        ``self.functions``); ``class_ptr``, ``class_items``."""
        return self.class_ptr, self.class_items

    @property
    def n_sets(self) -> int:
        """Number of distinct subtree function sets over both runs; ``n_classes``."""
        return self.n_classes

    def functions_in_set(self, k: int) -> list:
        """Function names of set k; ``class_set``."""
        return self.class_set(k)

    @property
    def matching_set_pairs(self) -> np.ndarray:
        """Every (set of A, set of B, similarity) with Jaccard similarity > τ; ``class_pairs``."""
        return self.class_pairs

    @property
    def n_matching_call_pairs(self) -> int:
        """The exact number of call pairs (call of A, call of B) whose subtrees match;
        ``n_pairs_total``."""
        return int(self.n_pairs_total)

    @property
    def matches(self) -> np.ndarray:
        """The kept call pairs (each call's best ``top_k`` partners, both ways); ``pairs``."""
        return self.pairs

    @property
    def match_groups(self) -> np.ndarray:
        """Root match (a, b) and number of matches of each group; ``groups``."""
        return self.groups

    # ------------------------------------------------------------ questions
    def _side(self, side) -> str:
        s = str(side).lower()
        if s not in ("a", "b"):
            raise ValueError(f"side must be 'a' or 'b', got {side!r}")
        return s

    def trace(self, side) -> Trace:
        """The trace of ``side`` ('a' or 'b')."""
        return self.a if self._side(side) == "a" else self.b

    def has_match(self, side="a") -> np.ndarray:
        """Per call of ``side``: does some call of the other run match it (similarity > τ)?
        Exact, from all class pairs (not only the kept call pairs)."""
        return self._partner_counts(side) > 0

    def _rows(self, side, calls) -> np.ndarray:
        """`CALL_DTYPE` rows of some calls of one side."""
        tr = self.trace(side)
        calls = np.asarray(calls, np.int64)
        out = np.empty(calls.size, CALL_DTYPE)
        out["call"] = calls
        out["name"] = np.asarray(tr.function_names, dtype=object)[tr.func[calls]] if calls.size else []
        out["thread"] = np.asarray(tr.thread_names, dtype=object)[tr.thread[calls]] if calls.size else []
        out["start"] = tr.start[calls] - (float(tr.start.min()) if len(tr) else 0.0)
        out["duration"] = tr.end[calls] - tr.start[calls]
        out["depth"] = tr.depth[calls]
        out["calls"] = tr.end_index[calls] - calls
        return out

    def unmatched_calls(self, side="a", outermost: bool = False, n: int | None = None) -> np.ndarray:
        """The calls of ``side`` that no call of the other run matches (no partner with
        similarity > τ): where the two runs differ.  Exact (`has_match`).

        ``outermost``: only those whose caller has a match (or that are roots), i.e. the
        top of each differing subtree.  Rows (`CALL_DTYPE`) longest first (then by call
        index); ``n`` keeps the first n.
        """
        tr = self.trace(side)
        no = ~self.has_match(side)
        if outermost:
            p = tr.parent
            no &= (p < 0) | ~no[np.maximum(p, 0)]
        calls = np.flatnonzero(no)
        dur = tr.end[calls] - tr.start[calls]
        calls = calls[np.lexsort((calls, -dur))]
        return self._rows(side, calls[:n] if n is not None else calls)

    def _rel_start(self, side) -> np.ndarray:
        """Start of each call relative to its trace's span (the kept pairs' tie-break)."""
        tr = self.trace(side)
        t0 = float(tr.start.min())
        span = max(float(tr.end.max()) - t0, 0.0)
        return (tr.start - t0) / (span if span > 0 else 1.0)

    def best_partners(self, side="a") -> tuple:
        """(calls, partner, similarity): every call of ``side`` that has a match, with its
        best partner in the other run, by the comparison's own order: highest similarity,
        then the closest relative start time, then the lowest call index.  Exact: each
        call's best partner is always among the kept pairs."""
        side = self._side(side)
        other = "b" if side == "a" else "a"
        p = self.pairs
        if p.size == 0:
            e = np.zeros(0, np.int32)
            return e, e.copy(), np.zeros(0)
        close = np.abs(self._rel_start("a")[p["a"]] - self._rel_start("b")[p["b"]])
        order = np.lexsort((p[other], close, -p["sim"], p[side]))
        own = p[side][order]
        first = order[np.r_[True, own[1:] != own[:-1]]]
        return p[side][first].astype(np.int32), p[other][first].astype(np.int32), p["sim"][first]

    def _partner_counts(self, side) -> np.ndarray:
        """Per call of ``side``: how many calls of the other run match it (exact, from the
        per-class counts the join's waves summed, ``partner_calls_a`` / ``_b``)."""
        if self._side(side) == "a":
            return self.partner_calls_a[self.class_a]
        return self.partner_calls_b[self.class_b]

    def _match_rows(self, ca, cb, sim) -> np.ndarray:
        """`MATCH_DTYPE` rows of call pairs (ca[i], cb[i]) with similarity sim[i]."""
        ca, cb = np.asarray(ca, np.int64), np.asarray(cb, np.int64)
        ra, rb = self._rows("a", ca), self._rows("b", cb)
        out = np.empty(ca.size, MATCH_DTYPE)
        out["call_a"], out["call_b"] = ca, cb
        out["name_a"], out["name_b"] = ra["name"], rb["name"]
        out["similarity"] = sim
        out["start_a"], out["start_b"] = ra["start"], rb["start"]
        out["duration_a"], out["duration_b"] = ra["duration"], rb["duration"]
        out["ratio"] = duration_ratio(ra["duration"], rb["duration"])
        out["calls_a"], out["calls_b"] = ra["calls"], rb["calls"]
        if ca.size:
            out["partners_a"] = self._partner_counts("a")[ca]
            out["partners_b"] = self._partner_counts("b")[cb]
        return out

    def top_matches(self, n: int = 10, by: str = "size") -> np.ndarray:
        """The ``n`` largest matched calls of A, each with its best partner in B
        (`MATCH_DTYPE`).  ``by``: ``size`` (calls in the subtree of the call of A),
        ``duration`` (of the call of A) or ``similarity``; ties by call index."""
        if by not in TOP_MATCH_ORDERS:
            raise ValueError(f"by must be one of {TOP_MATCH_ORDERS}, got {by!r}")
        ca, cb, sim = self.best_partners("a")
        tr = self.a
        key = {"size": lambda: tr.end_index[ca] - ca, "duration": lambda: tr.end[ca] - tr.start[ca],
               "similarity": lambda: sim}[by]()
        order = np.lexsort((ca, -np.asarray(key, np.float64)))[: max(int(n), 0)]
        return self._match_rows(ca[order], cb[order], sim[order])

    def _by_ratio(self, min_ratio, n, slower: bool) -> np.ndarray:
        try:
            min_ratio = float(min_ratio)
        except (TypeError, ValueError):
            raise ValueError(f"min_ratio must be a number >= 1, got {min_ratio!r}") from None
        if not (min_ratio >= 1.0 and math.isfinite(min_ratio)):
            raise ValueError(f"min_ratio must be a finite number >= 1, got {min_ratio}")
        ca, cb, sim = self.best_partners("a")
        da, db = self.a.end[ca] - self.a.start[ca], self.b.end[cb] - self.b.start[cb]
        ratio = duration_ratio(da, db)
        keep = ratio >= min_ratio if slower else ratio <= 1.0 / min_ratio
        gain = (db - da) if slower else (da - db)
        idx = np.flatnonzero(keep)
        idx = idx[np.lexsort((ca[idx], -gain[idx]))]
        if n is not None:
            idx = idx[: max(int(n), 0)]
        return self._match_rows(ca[idx], cb[idx], sim[idx])

    def slower_in_b(self, min_ratio: float = 2.0, n: int | None = None) -> np.ndarray:
        """Matched calls of A whose best partner in B took at least ``min_ratio`` times as
        long (`MATCH_DTYPE`, ``ratio`` = duration in B ÷ in A), the most time added first."""
        return self._by_ratio(min_ratio, n, slower=True)

    def faster_in_b(self, min_ratio: float = 2.0, n: int | None = None) -> np.ndarray:
        """Matched calls of A whose best partner in B took at most 1/``min_ratio`` of the
        time (`MATCH_DTYPE`), the most time saved first."""
        return self._by_ratio(min_ratio, n, slower=False)

    def partners(self, call: int, side="a") -> np.ndarray:
        """The kept partners of one call of ``side`` (`MATCH_DTYPE`, most similar first)."""
        side = self._side(side)
        tr = self.trace(side)
        call = int(call)
        if not 0 <= call < len(tr):
            raise ValueError(f"call {call} of {side.upper()} is outside 0..{len(tr) - 1}")
        p = self.pairs
        sel = np.flatnonzero(p[side] == call)
        sel = sel[np.lexsort((p["b" if side == "a" else "a"][sel], -p["sim"][sel]))]
        return self._match_rows(p["a"][sel], p["b"][sel], p["sim"][sel])

    def find_call(self, side, what) -> int:
        """A call of ``side`` given as an index (int or digits) or a function name: the
        exact name, else the names containing it; of those calls the longest (then the
        earliest).  ValueError naming ``what`` when there is none."""
        side = self._side(side)
        tr = self.trace(side)
        if isinstance(what, (int, np.integer)) or (isinstance(what, str) and what.strip().isdigit()):
            i = int(what)
            if not 0 <= i < len(tr):
                raise ValueError(f"call {i} of {side.upper()} is outside 0..{len(tr) - 1}")
            return i
        text = str(what).strip()
        if not text:
            raise ValueError(f"no call of {side.upper()} given")
        call = longest_named_call(tr, text)
        if call is None:
            raise ValueError(f"no call of {side.upper()} is named like {text!r}")
        return call

    def describe(self, n: int = 3) -> str:
        """A few lines of plain text: the two runs, how much matches, where they differ
        (the longest unmatched calls), the biggest slow-downs and speed-ups in B."""
        def ms(us):
            return f"{us / 1e3:,.3g} ms" if us < 1e6 else f"{us / 1e6:,.3g} s"

        def run(t):
            return (f"{_source_name(t)}: {len(t):,} calls, {t.n_threads} thread{'s' if t.n_threads != 1 else ''}, "
                    f"{ms(float(t.end.max() - t.start.min()) if len(t) else 0.0)}")

        lines = [f"A = {run(self.a)}", f"B = {run(self.b)}",
                 f"{self.n_matching_call_pairs:,} call pairs match (similarity of their subtrees' function "
                 f"sets > τ = {self.tau:g}); {self.n_pairs_kept:,} kept in {self.groups.shape[0]:,} groups"]
        for side in ("a", "b"):
            un = self.unmatched_calls(side, outermost=True)
            total = int((~self.has_match(side)).sum())
            top = ", ".join(f"{_short(r['name'])} ({ms(r['duration'])})" for r in un[:n])
            lines.append(f"{total:,} calls of {side.upper()} match nothing in the other run"
                         + (f"; largest: {top}" if total else ""))
        for what, rows in (("slower", self.slower_in_b(2.0, n)), ("faster", self.faster_in_b(2.0, n))):
            if rows.size:
                lines.append(f"{what} in B (≥ 2×): " + ", ".join(
                    f"{_short(r['name_a'])} {ms(r['duration_a'])} → {ms(r['duration_b'])}" for r in rows))
        return "\n".join(lines)

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
        un_a, un_b = (int((~self.has_match(x)).sum()) for x in ("a", "b"))
        return (f"<Comparison of {_source_name(self.a)} ({s['calls_a']:,} calls) with {_source_name(self.b)} "
                f"({s['calls_b']:,} calls), τ={self.tau:g}: {s['pairs_total']:,} matching call pairs "
                f"({s['pairs_kept']:,} kept, {s['groups']:,} groups, {s['class_pairs']:,} set pairs); "
                f"no match for {un_a:,} calls of A and {un_b:,} of B>")


def duration_ratio(dur_a, dur_b) -> np.ndarray:
    """dur_b / dur_a per pair: inf when only A's call has zero duration, 1 when both do."""
    dur_a, dur_b = np.asarray(dur_a, np.float64), np.asarray(dur_b, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = dur_b / dur_a
    return np.where((dur_a == 0) & (dur_b == 0), 1.0, r)


def _short(name: str, limit: int = 60) -> str:
    """A function name cut to ``limit`` characters (C++ signatures run to thousands)."""
    name = str(name)
    return name if len(name) <= limit else name[: limit - 1] + "…"


def _source_name(t: Trace) -> str:
    """A trace's file name (or "trace")."""
    import os

    src = str(t.meta.get("source") or t.meta.get("subset_of") or "trace")
    return os.path.basename(src) or src


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


#: Peak memory of a comparison (`check_compare_memory`): its phases never hold each other's
#: arrays, so its peak is that of its largest phase, not their sum.  Resident bytes each
#: phase adds to the two traces (n = calls of A + B, m = kept call pairs ≤ top_k · n):
#:
#:   phase        alive together                                                   bytes
#:   classes      the Γ sweeps of A and B (hashes, sets), class ids and rows;      `CLASSES_BYTES_PER_CALL` · n
#:                the repetitions' shape classes (their own thread)
#:   join         class ids, rows and sets, each side's calls by class and time   `JOIN_HELD_BYTES_PER_CALL` · n
#:                (after the walk), held class pairs; + the join's buffers: the    + buffers (`compare_join`)
#:                walkers' counters and plan, or after the walk the overview's
#:                per-call constants and one wave of B's difference array
#:   kept pairs   class ids; top-k picks of both sides (lazily resident, given     `KEPT_BYTES_PER_CALL` · n +
#:                back as the union reads them); then the kept pairs' calls and    `KEPT_BYTES_PER_PAIR` · m
#:                similarity positions (12 B a pair), their groups (4 B) and the  + records held in memory
#:                groups walks' roots, leaf counts and segment trees; the records
#:                (`PAIR_DTYPE`, 44 B) in memory up to `SPILL_PAIRS_BYTES`, past it in a file
#:
#: Measured (RssAnon above the traces sampled every 5 ms, the synthetic pairs of
#: bench/bench_compare_goal.py --goal): peak bytes a call of the classes / join / kept pairs at
#: 10^7 calls 39 / 74 (its buffers 45) / 87 (143 once the records, in memory there, are filled);
#: at 10^8 the classes 32, the join's walk 31.  A fixed part (`COMPARE_FIXED_BYTES`) covers the
#: small sizes (at 10^6 the kept pairs' phase holds 172 B a call, records included).  A trace
#: mapped from its file (`load` of a native file) needs its pages resident besides:
#: `mapped_input_bytes`.
CLASSES_BYTES_PER_CALL = 44
#: (see `CLASSES_BYTES_PER_CALL`) what every phase holds whatever the size: the threads' stacks
#: and pools, the kernels' first allocations, the allocator's slack
COMPARE_FIXED_BYTES = 256 << 20
#: (see `CLASSES_BYTES_PER_CALL`) held through the join besides its own buffers
JOIN_HELD_BYTES_PER_CALL = 24
#: (see `CLASSES_BYTES_PER_CALL`) the kept pairs' phase, per call and per kept pair (taken at
#: their bound, top_k a call)
KEPT_BYTES_PER_CALL = 16
KEPT_BYTES_PER_PAIR = 18
#: resident bytes per KEPT class pair: 4 (B row, int32) + 2 (overlap, uint16) in the waves'
#: copies, then their concatenation (the result's CSR); the margin covers the sampled
#: estimate's error.  Streamed class pairs cost only the wave's buffers (`WAVE_PAIRS` × 6 B)
COMPARE_BYTES_PER_CLASS_PAIR = 12 * 1.3
#: ``keep_class_pairs=None`` (auto) keeps the class pairs while there are at most this many
#: (6 bytes each: 192 MiB); beyond, they are streamed into the results and dropped
KEEP_CLASS_PAIRS_AUTO = 32 << 20
#: the class pairs the overview bars visit, at most (about), when the class pairs are not kept:
#: past it (by the join's sampled estimate) the bars are a threshold sample's estimate
#: (`compare_join.overview_theta`).  Only the fused way samples, i.e. pairs of more than
#: `KEEP_CLASS_PAIRS_AUTO` class pairs: real traces of 10^6-10^7 calls have 0.2-9·10^6 and stay
#: exact.  Chosen by what the bars show: on the synthetic 10^6-call pair (5.2·10^8 class pairs)
#: the largest error of a bar, as a share of the largest bar, and the compare's wall seconds on
#: 2 cores are
#:   budget 10^7  1.0-1.3·10^-4  8.8 s      budget 10^6  3.8-5.2·10^-4  7.2 s
#:   budget 3·10^6 2.1-3.3·10^-4 7.6 s      budget 3·10^5 2.5-2.9·10^-3  6.5 s    (exact: 11.3 s)
#: The largest bar is ~50 px tall at 1080 lines (`render-compare`), so 5·10^-4 of it is 0.03 px
#: there and 0.4 px at the largest resolution (16384 lines): a larger budget buys accuracy no
#: picture shows.  θ is calibrated so that about the budget's matches are visited
#: (`compare_join.calibrated_theta`; on that pair 1.18·10^6 are visited, the largest bar error
#: 6.9-7.5·10^-4 of the largest: 0.04 px at 1080 lines)
OVERVIEW_BUDGET = 1_000_000


def cgroup_room_bytes(root: str = "/sys/fs/cgroup") -> int | None:
    """Bytes left under the memory limit of the cgroup mounted at ``root`` (a container's
    own, where /proc/meminfo shows the host's): cgroup v2 ``memory.max − memory.current``,
    else v1 ``memory/memory.limit_in_bytes − memory/memory.usage_in_bytes``; None without a
    limit or where neither is readable."""
    import os

    for limit_name, usage_name in (("memory.max", "memory.current"),
                                   (os.path.join("memory", "memory.limit_in_bytes"),
                                    os.path.join("memory", "memory.usage_in_bytes"))):
        try:
            with open(os.path.join(root, limit_name)) as f:
                limit = f.read().strip()
            with open(os.path.join(root, usage_name)) as f:
                usage = int(f.read().strip())
        except (OSError, ValueError):
            continue
        if limit == "max" or not limit.isdigit() or int(limit) >= 1 << 60:   # v1 "no limit" is ~2^63
            return None
        return max(0, int(limit) - usage)
    return None


def available_memory_bytes() -> int:
    """Memory the system can still give this process: ``MemAvailable`` of /proc/meminfo
    (else free physical pages, ``SC_AVPHYS_PAGES``), at most what the process' cgroup
    limit leaves (`cgroup_room_bytes`); a very large number where nothing is known."""
    import os

    have = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    have = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    if have is None:
        try:
            have = int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            have = 1 << 62
    room = cgroup_room_bytes()
    return have if room is None else min(have, room)


def _gib(n_bytes) -> str:
    """A memory size in GiB (MiB below 1 GiB)."""
    return f"{n_bytes / 2 ** 30:.1f} GiB" if n_bytes >= 2 ** 30 else f"{n_bytes / 2 ** 20:.1f} MiB"


def calls_need_bytes(n_calls: int, top_k: int = 2) -> int:
    """The peak of comparing ``n_calls`` calls (A + B) besides its join's buffers and class pairs:
    its largest phase (`CLASSES_BYTES_PER_CALL`), `compare_need_bytes` without the join's."""
    return compare_need_bytes(n_calls, top_k)[0]


def compare_need_bytes(n_calls: int, top_k: int = 2, join_bytes: float = 0.0, n_class_pairs: float = 0.0,
                       bytes_per_class_pair: float = COMPARE_BYTES_PER_CLASS_PAIR) -> tuple:
    """(bytes, phase): the resident bytes comparing ``n_calls`` calls (A + B) adds to its traces
    at its peak, the largest of its phases (`CLASSES_BYTES_PER_CALL`'s table), and that phase's
    name.  The join's phase holds ``join_bytes`` (its buffers, `compare_join`) and ``n_class_pairs``
    held class pairs × ``bytes_per_class_pair``; the kept pairs' phase their records while they
    stay in memory (at most ``top_k`` a call both ways, `PAIR_DTYPE` each; past
    `SPILL_PAIRS_BYTES` they are written to a file, a pass of `SPILL_CHUNK_PAIRS` at a time)."""
    n, k = int(n_calls), int(top_k)
    phases = {"classes": n * CLASSES_BYTES_PER_CALL,
              "join": n * JOIN_HELD_BYTES_PER_CALL + float(join_bytes)
              + float(n_class_pairs) * float(bytes_per_class_pair),
              "kept pairs": max(_kept_pairs_bytes(n, m) for m in (n * k, min(n * k, _IN_MEMORY_PAIRS)))}
    phase = max(phases, key=phases.get)
    return COMPARE_FIXED_BYTES + int(phases[phase]), phase


def _kept_pairs_bytes(n_calls: int, m: int) -> int:
    """The kept pairs' phase of `compare_need_bytes` for ``m`` kept pairs: per call and per pair,
    and the records with their similarity positions while they stay in memory (else one pass of
    `SPILL_CHUNK_PAIRS` records: the others are in the file)."""
    in_memory = m <= _IN_MEMORY_PAIRS
    records = m * (PAIR_DTYPE.itemsize + 8) if in_memory else SPILL_CHUNK_PAIRS * PAIR_DTYPE.itemsize
    return n_calls * KEPT_BYTES_PER_CALL + m * KEPT_BYTES_PER_PAIR + records


#: the arrays of a `Trace` that a comparison reads (Γ-sets, times, groups, repetitions)
COMPARE_READS = ("func", "start", "end", "depth", "parent", "end_index", "thread")


def _file_mapped(arr) -> bool:
    """Whether ``arr``'s memory is a mapping (`np.memmap`, `mmap.mmap`) rather than its own."""
    base = arr
    while base is not None:
        if isinstance(base, (np.memmap, mmap.mmap)):
            return True
        base = getattr(base, "base", None)
    return False


def mapped_input_bytes(*traces) -> int:
    """Bytes of the arrays a comparison reads (`COMPARE_READS`) that the traces map from their
    files (`load` of a native file): the system counts those pages as free (it can drop them),
    but the comparison reads them throughout, so they count in its need; traces in memory are
    already off the available memory."""
    return sum(int(getattr(t, name).nbytes) for t in traces for name in COMPARE_READS
               if getattr(t, name, None) is not None and _file_mapped(getattr(t, name)))


def own_anon_bytes() -> int:
    """This process's anonymous resident bytes (``RssAnon`` of /proc/self/status; 0 where
    unknown): what it already holds of the memory the system gave it."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def check_compare_memory(n_calls: int, n_class_pairs: float = 0.0,
                         bytes_per_class_pair: float = COMPARE_BYTES_PER_CLASS_PAIR,
                         wave_bytes: float = 0.0, top_k: int = 2, *, mapped_bytes: int = 0,
                         held_bytes: int = 0, available: int | None = None) -> int:
    """Raise `TraceTooLargeError` if comparing ``n_calls`` calls (A + B) with about
    ``n_class_pairs`` class pairs needs more memory than there is: the clear error before the
    long work, instead of a MemoryError or the OS killing the process mid-join.  Needed = the
    peak of its largest phase (`compare_need_bytes`: ``wave_bytes`` = the join's buffers: the
    streamed join's one wave, the fused join's walkers or overview,
    `setjoin_fused.fused_join_bytes`) + ``mapped_bytes`` (`mapped_input_bytes`); there is
    ``available`` (default `available_memory_bytes`) + ``held_bytes``, what the comparison
    already holds (a check after its start: its arrays are part of its need, and off the
    available memory already).  Returns the need in bytes."""
    from ..model import TraceTooLargeError

    peak, phase = compare_need_bytes(n_calls, top_k, wave_bytes, n_class_pairs, bytes_per_class_pair)
    need = peak + int(mapped_bytes)
    have = (available_memory_bytes() if available is None else int(available)) + max(0, int(held_bytes))
    if need <= have:
        return need
    pairs = (f" and about {n_class_pairs:,.0f} pairs of similar subtree function sets" if n_class_pairs
             else "")
    mapped = f", {_gib(mapped_bytes)} of it the traces' mapped files" if mapped_bytes else ""
    raise TraceTooLargeError(
        f"compare: {int(n_calls):,} calls{pairs} need about {_gib(need)} of memory (at its {phase} phase"
        f"{mapped}), {_gib(have)} available: compare a time window or one thread of each trace, fewer levels "
        f"or a larger tau (compare(..., window_a=, window_b=, threads_a=, threads_b=), "
        f"Trace.subset(max_depth=...))")


def check_spill_room(n_pairs: int, pos_bytes: int, free: int | None = None, at_most: bool = False) -> None:
    """Raise `TraceTooLargeError` if the kept pairs' records (`PAIR_DTYPE`) and their similarity
    positions (``pos_bytes`` each), written to unlinked files in the temporary folder past
    `SPILL_PAIRS_BYTES` (`_pair_records`, `_parked`), do not fit in its ``free`` bytes (default:
    what the file system has): a clear error, not a SIGBUS when a page of the file cannot be
    written.  ``at_most``: ``n_pairs`` is their bound before the join (``top_k`` a call of
    either trace), checked first so that a compare too large for the disk is refused at once,
    not after its join (41 minutes at 10^8 calls)."""
    import shutil
    import tempfile

    from ..model import TraceTooLargeError

    folder = tempfile.gettempdir()
    need = int(n_pairs) * (PAIR_DTYPE.itemsize + int(pos_bytes))
    have = shutil.disk_usage(folder).free if free is None else int(free)
    if need > have:
        raise TraceTooLargeError(
            f"compare: {'up to ' if at_most else 'its '}{int(n_pairs):,} kept call pairs "
            f"{'(top_k a call of either trace) ' if at_most else ''}need about {_gib(need)} of disk in {folder} "
            f"(written there past {_gib(SPILL_PAIRS_BYTES)}), {_gib(have)} free: set TMPDIR to a folder with more "
            f"room, or compare a time window or one thread of each trace (compare(..., window_a=, threads_a=))")


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
        maps.append(np.array(intern_all(t.function_names, index, functions), np.int32))  # per function, not call
    seed = process_hash_seed()
    # A's and B's sweeps on two threads (the kernel releases the GIL), merged as one sweep of
    # the concatenation would number them (`merge_gamma_classes`)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        swept_a = pool.submit(gamma_classes_grown, maps[0][a.func],
                              np.ascontiguousarray(a.end_index, np.int32), len(functions), seed)
        swept_b = gamma_classes_grown(maps[1][b.func], np.ascontiguousarray(b.end_index, np.int32),
                                        len(functions), seed)
        swept_a = swept_a.result()
    cls, class_ptr, class_items = renumber_sets_by_size(*merge_gamma_classes(*swept_a, *swept_b, len(functions),
                                                                             seed))
    return functions, cls, class_ptr, class_items


def _class_rows(cls: np.ndarray, n_classes: int):
    """The classes one side's calls use, as rows: ``(rows, row_of_call, calls_per_row)``, rows
    ascending (`np.unique`'s order, and ``row_of_call`` its `searchsorted` index), by counting
    over the class ids instead of sorting the calls (10^7 calls: 1.3 s → 0.1 s)."""
    counts = np.bincount(cls, minlength=n_classes)
    rows = np.flatnonzero(counts).astype(np.int32)
    rank = np.cumsum(counts > 0, dtype=np.int32) - 1
    return rows, rank[cls], counts[rows].astype(np.int64)


def _repetitions(a: Trace, b: Trace, max_period: int) -> list:
    """Repetitions of identical sibling subtrees in A and in B (`sibling_repetitions`), as
    `REPETITION_DTYPE` records."""
    reps = []
    for t in (a, b):
        shape, _ = shape_classes_grown(t.func, t.end_index, process_hash_seed())
        r = sibling_repetitions(shape, t.parent, t.end_index, t.thread, int(max_period))
        rec = np.empty(r.shape[0], REPETITION_DTYPE)
        for j, nm in enumerate(REPETITION_DTYPE.names):
            rec[nm] = r[:, j]
        reps.append(rec)
    return reps


def compare_traces(a: Trace, b: Trace, tau: float = 0.2, *, top_k: int = 2, n_bins: int = 200,
                   aligned_tol: float | None = None, max_period: int = 8,
                   threads_a=None, threads_b=None, window_a=None, window_b=None,
                   join: str = "tree", keep_class_pairs: bool | None = None,
                   wave_pairs: int | None = None, overview_budget: int | None = OVERVIEW_BUDGET) -> Comparison:
    """Compare two traces as TraceDiff does (Sec. III, IV-A, IV-D); see `Comparison`.

    Every call f gets Γ(f), the set of function names in its subtree (functions
    of A and B are identified by name).  Distinct Γ-sets (classes) are joined
    EXACTLY into the call-pair count ``n_pairs_total``, the similarity tiers behind
    ``pairs``, the partner counts and the overview bars, all exact over every class pair
    with Jaccard > ``tau`` (`compare_join`; the bars estimated past ``overview_budget``): each row's class pairs consumed as the tree
    join reads them (fused, never stored), or streamed in waves of at most ``wave_pairs``
    class pairs (default `setjoin_tree.WAVE_PAIRS`) when they are kept, when
    ``wave_pairs`` is given or for ``join="filter"``.  ``keep_class_pairs``: also keep the
    class pairs themselves (``class_pairs``, 6 bytes each: gigabytes at 10^6 calls and
    more): True always, False never, None (default) while there are at most
    `KEEP_CLASS_PAIRS_AUTO`.

    Call-pair bound: call pairs can number ~10^10, so ``pairs`` keeps, for every
    call of A and every call of B, its ``top_k`` best partners (similarity desc,
    then closeness of relative start time, then index): at most
    ``top_k * (len(a) + len(b))`` pairs, memory linear in that.  Groups (Sec. III)
    are built over the kept pairs; the overview bars count ALL matches (estimated from a
    weighted sample of them past ``overview_budget``, below).

    Parameters: ``tau`` in (0, 1); ``n_bins`` overview intervals per trace;
    ``aligned_tol`` µs within which a partner counts as aligned (default: one bin
    width of the viewer trace); ``max_period`` longest repeated sibling block;
    ``threads_a``/``threads_b`` and ``window_a``/``window_b`` (µs, (t0, t1))
    restrict each side with `Trace.subset` first (call indices in the result then
    refer to ``result.a`` / ``result.b``, the subset traces).
    ``overview_budget``: where the class pairs are consumed as the join reads them (the fused
    way) and the join's estimate of them exceeds it, the overview bars and δ are estimated
    from a threshold sample of the matches (`setjoin_window.sample_positions`: a match of w call
    pairs kept with probability min(1, w / θ), weighted 1 / p, θ = estimate / budget; the
    expectation of every bar is its exact value, and matches of many call pairs are always
    kept); ``params["join"]`` holds ``overview_theta`` and ``overview_pairs`` (visited).  None:
    exact at any size.  Everything else (counts, tiers, pairs, groups) is exact always.
    ``join``: "tree" (`kernels.setjoin_tree.jaccard_join_tree`, overlaps inherited
    along A's call tree) or "filter" (`jaccard_join_waves`, prefix/size filters); both
    exact, same result.
    Deterministic: same inputs give the same arrays.
    Raises TypeError / ValueError naming the bad parameter or the empty trace, and
    `TraceTooLargeError` (a MemoryError) before the long work when the pair cannot fit in the
    available memory (`check_compare_memory`: the largest of its phases, from the calls, then from
    the join's buffers and, where they are kept, its sampled number of class pairs; the mapped
    inputs' pages included), and before writing its kept pairs to a file when the temporary
    folder lacks the room (`check_spill_room`).
    """
    tau, aligned_tol = _check_params(a, b, tau, top_k, n_bins, aligned_tol, max_period)
    if join not in ("tree", "filter"):
        raise ValueError(f"compare: join must be 'tree' or 'filter', got {join!r}")
    if overview_budget is not None and (isinstance(overview_budget, bool)
                                        or not isinstance(overview_budget, (int, np.integer)) or overview_budget < 1):
        raise ValueError(f"compare: overview_budget must be an integer >= 1 or None (exact), got {overview_budget!r}")
    if threads_a is not None or window_a is not None:
        a = a.subset(thread=threads_a, time_window=window_a)
    if threads_b is not None or window_b is not None:
        b = b.subset(thread=threads_b, time_window=window_b)
    for name, t in (("a", a), ("b", b)):
        if len(t) == 0:
            raise ValueError(f"compare: trace {name} has no calls (after thread/window selection)")
    # numpy's huge-page advice off for the arrays the comparison writes once and reads in order
    # (`hugeblock.huge_pages`), on for the join's, which it reads at random
    with huge_pages(False):
        return _compare_checked(a, b, tau, top_k, n_bins, aligned_tol, max_period, join, keep_class_pairs, wave_pairs,
                                overview_budget)


#: kept call pairs whose records (`PAIR_DTYPE`, 44 bytes each) would take more than this are
#: written to an unlinked temporary file (`tempfile.TemporaryFile`, in ``TMPDIR``) and the
#: result's ``pairs`` is that file mapped: a pair of 10^8-call traces keeps ~3·10^8 pairs
#: (14 GB), which then live in the page cache (written back and dropped by the system as it
#: needs the memory), never in the process's own memory; smaller results stay in memory
SPILL_PAIRS_BYTES = 2 << 30
#: kept pairs filled per pass when they are written to a file (each pass's pages then given
#: back: the process holds one pass of records at a time)
SPILL_CHUNK_PAIRS = 1 << 22
#: the most kept pairs whose records stay in memory (`SPILL_PAIRS_BYTES`)
_IN_MEMORY_PAIRS = SPILL_PAIRS_BYTES // PAIR_DTYPE.itemsize
#: calls of A whose kept pairs the union writes per pass before the pages of the picks it has
#: read are given back (`kept_pairs.union_of_picks`)
UNION_CHUNK_CALLS = 1 << 22


def _pair_records(m: int):
    """An array of ``m`` `PAIR_DTYPE` records: in memory, or past `SPILL_PAIRS_BYTES` a
    shared mapping of an unlinked temporary file (returned as the second value, else None)."""
    import tempfile

    nbytes = int(m) * PAIR_DTYPE.itemsize
    if nbytes <= SPILL_PAIRS_BYTES:
        return np.empty(int(m), PAIR_DTYPE), None
    with tempfile.TemporaryFile(prefix="tracevis3d-pairs-") as f:
        f.truncate(nbytes)
        mm = mmap.mmap(f.fileno(), nbytes)       # its own handle on the file: it outlives f
    return np.frombuffer(mm, PAIR_DTYPE), mm


def _parked(arr: np.ndarray):
    """(``arr`` written to an unlinked temporary file and mapped copy-on-write, the mapping): the
    same values, in the page cache instead of the process's own memory until they are read."""
    import tempfile

    with tempfile.TemporaryFile(prefix="tracevis3d-") as f:
        arr.tofile(f)
        f.flush()
        mm = mmap.mmap(f.fileno(), max(1, arr.nbytes), access=mmap.ACCESS_COPY)
    return np.frombuffer(mm, arr.dtype, count=arr.shape[0]), mm


def _kept_pairs(sides, top_k, lap):
    """The kept call pairs (`PAIR_DTYPE`, sorted by (a, b)) and the groups (`GROUP_DTYPE`) of
    `_compare_checked`: each call's ``top_k`` best partners both ways (`kept_pairs.top_k_picks`),
    their union (`union_of_picks`), the groups over it (`groups.bfs_groups`) and the pairs'
    fields (`fill_pair_fields`), and whether they went to a file.  Each side = (trace, class row per call, calls by class and
    time, their row offsets, their times, t0, span, tier offsets, partner rows, similarities) in
    the list ``sides`` = [side_a, side_b], emptied here (so that each array is freed when done)."""
    a, row_of_a, by_a, calls_ptr_a, time_a, t0_a, span_a, tptr_a, tpart_a, tsim_a = sides[0]
    b, row_of_b, by_b, calls_ptr_b, time_b, t0_b, span_b, tptr_b, tpart_b, tsim_b = sides[1]
    sides.clear()
    n_a, n_b = len(a), len(b)
    denom_a, denom_b = (span_a if span_a > 0 else 1.0), (span_b if span_b > 0 else 1.0)
    pos_dtype = np.int32 if max(tsim_a.shape[0], tsim_b.shape[0]) < 2 ** 31 - 1 else np.int64
    pick_b, pos_b = np.empty((n_b, top_k), np.int32), np.empty((n_b, top_k), pos_dtype)
    top_k_picks(row_of_b, b.start, t0_b, denom_b, tptr_b, tpart_b, tsim_b, calls_ptr_a, by_a, time_a, denom_a,
                top_k, by_b, pick_b, pos_b)
    del row_of_b, time_a
    # B's picks by call of A, and A's picks, on mappings whose pages the union gives back as it
    # reads them (room for every pick: the pages never written are never resident)
    (rv, map_v), (rp, map_p) = lazy_empty(n_b * top_k, np.int32), lazy_empty(n_b * top_k, pos_dtype)
    rptr = picks_by_call(pick_b, pos_b, n_a, rv, rp)
    del pick_b, pos_b
    (pick_a, map_a), (pos_a, map_pa) = lazy_empty(n_a * top_k, np.int32), lazy_empty(n_a * top_k, pos_dtype)
    pick_a, pos_a = pick_a.reshape(n_a, top_k), pos_a.reshape(n_a, top_k)
    top_k_picks(row_of_a, a.start, t0_a, denom_a, tptr_a, tpart_a, tsim_a, calls_ptr_b, by_b, time_b, denom_b,
                top_k, by_a, pick_a, pos_a)
    del row_of_a, by_a, by_b, time_b, calls_ptr_a, calls_ptr_b, tptr_a, tpart_a, tptr_b, tpart_b
    lap("top_k")

    # (mapping, bytes per unit, offsets of the units by call of A or None: a unit per call)
    held = [(map_a, 4 * top_k, None), (map_pa, pos_a.itemsize * top_k, None), (map_v, 4, rptr),
            (map_p, rp.itemsize, rptr)]

    def consumed(u0, u1):
        for mm, size, ptr in held:
            lo, hi = (u0, u1) if ptr is None else (ptr[u0], ptr[u1])
            release_range(mm, int(lo) * size, int(hi) * size)
    pa, pb, ppos = union_of_picks(pick_a, pos_a, rptr, rv, rp, UNION_CHUNK_CALLS, consumed)
    held.clear()
    del pick_a, pos_a, rptr, rv, rp, map_a, map_pa, map_v, map_p
    to_file = pa.shape[0] * PAIR_DTYPE.itemsize > SPILL_PAIRS_BYTES
    if to_file:       # the records will go to a file: their similarities' positions wait in one
        check_spill_room(pa.shape[0], ppos.itemsize)
        ppos, pos_map = _parked(ppos)
    lap("kept_pairs")

    # groups over the kept pairs (sorted by (a, b)), numbered breadth-first over A
    group, root_a, root_b = bfs_groups(pa, pb, a.depth, a.end_index, b.end_index)
    groups = np.empty(root_a.size, GROUP_DTYPE)
    groups["a"] = root_a
    groups["b"] = root_b
    groups["n_matches"] = np.bincount(group, minlength=root_a.size)
    lap("groups")

    m = pa.shape[0]
    pairs, spill = _pair_records(m)
    step = m if spill is None else SPILL_CHUNK_PAIRS
    for i0 in range(0, m, max(1, step)):
        i1 = min(m, i0 + step)
        part = pairs[i0:i1]
        fill_pair_fields(i0, i1, pa, pb, ppos, tsim_a, tsim_b, group, root_a, root_b, a.start, a.end, b.start,
                         b.end, t0_a, t0_b, part["a"], part["b"], part["sim"], part["group"], part["dt"],
                         part["rel_a"], part["rel_b"])
        if to_file:
            release_range(pos_map, i0 * ppos.itemsize, i1 * ppos.itemsize)
        if spill is not None and hasattr(mmap, "MADV_DONTNEED"):   # the pass's whole pages given
            lo = -(-i0 * PAIR_DTYPE.itemsize // mmap.PAGESIZE) * mmap.PAGESIZE    # back (they stay in the
            hi = (i1 * PAIR_DTYPE.itemsize // mmap.PAGESIZE) * mmap.PAGESIZE      # file's page cache)
            if i1 == m:
                hi = len(spill)
            if hi > lo:
                spill.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
    lap("pair_fields")
    return pairs, groups, spill is not None


def _compare_checked(a: Trace, b: Trace, tau, top_k, n_bins, aligned_tol, max_period, join, keep_class_pairs,
                     wave_pairs, overview_budget) -> Comparison:
    """`compare_traces` of checked parameters and the selected traces."""
    n_a, n_b = len(a), len(b)
    mapped = mapped_input_bytes(a, b)
    own0 = own_anon_bytes()
    needs = [check_compare_memory(n_a + n_b, top_k=int(top_k), mapped_bytes=mapped)]
    most_pairs = int(top_k) * (n_a + n_b)      # the kept pairs' bound: top_k a call, both ways
    if most_pairs * PAIR_DTYPE.itemsize > SPILL_PAIRS_BYTES:
        check_spill_room(most_pairs, 4, at_most=True)   # the file they will go to, before the join
    # the repetitions need only the two traces: they run on a thread of their own while the
    # classes are built (one core's work) and are collected at the end
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    reps_done = pool.submit(_repetitions, a, b, int(max_period))
    timings: dict = {}
    laps: list = []        # the stages in the order their laps ended (the join's repeat per wave)
    clock = [time.perf_counter()]

    def lap(stage):
        now = time.perf_counter()
        timings[stage] = timings.get(stage, 0.0) + now - clock[0]
        laps.append(stage)
        clock[0] = now

    functions, cls, class_ptr, class_items = gamma_classes(a, b)
    class_a = cls[:n_a]
    class_b = cls[n_a:]
    rows_a, row_of_a, count_a = _class_rows(class_a, class_ptr.shape[0] - 1)
    rows_b, row_of_b, count_b = _class_rows(class_b, class_ptr.shape[0] - 1)

    del cls
    set_size = np.diff(class_ptr)
    size_a = set_size[rows_a].astype(np.int64)           # |Γ| per class row
    size_b = set_size[rows_b].astype(np.int64)
    lap("classes")

    # times: µs since each trace's first start (t − t0), relative start (t − t0) / span, both
    # computed by the kernels where they read them (no per-call copies)
    t0_a, t0_b = float(a.start.min()), float(b.start.min())
    span_a = max(float(a.end.max()) - t0_a, 0.0)
    span_b = max(float(b.end.max()) - t0_b, 0.0)
    pool.shutdown(wait=False)                  # nothing more to submit; the repetitions still run
    # each side's calls by class row and time (`kept_pairs.calls_by_class_time`): the rows'
    # offsets now, the order and times when the join first reads them (the fused join: after
    # its walk, which does not, so that they are not held through it: 12 bytes a call)
    calls_ptr_a, calls_ptr_b = (np.concatenate([[0], np.cumsum(c)]).astype(np.int64) for c in (count_a, count_b))
    ordered: list = []
    row_of = [row_of_a, row_of_b]        # (in a list: emptied when the pair stage takes them)
    del row_of_a, row_of_b

    def call_times():
        if not ordered:
            lap("join")
            with concurrent.futures.ThreadPoolExecutor(max_workers=1) as one:   # the kernel releases the GIL
                order_b = one.submit(calls_by_class_time, row_of[1], rows_b.size, b.start, t0_b)
                ordered.append(calls_by_class_time(row_of[0], rows_a.size, a.start, t0_a))
                ordered.append(order_b.result())
            lap("call_order")
        return ordered[0][2], ordered[1][2]

    # exact class-level join (Eq. 3) and what the comparison needs from its class pairs: the
    # exact call-pair count, both sides' best similarity tiers and partner-call counts and the
    # overview bars (Sec. IV-A, over all matches: exact, or a sample's estimate past the overview
    # budget); the class pairs kept only when asked
    # or few (`compare_join`: fused into the join, or streamed in waves)
    tol_a = aligned_tol if aligned_tol is not None else span_a / n_bins
    tol_b = aligned_tol if aligned_tol is not None else span_b / n_bins

    def check_memory(held, extra_bytes):
        needs.append(check_compare_memory(n_a + n_b, held, wave_bytes=extra_bytes, top_k=int(top_k),
                                          mapped_bytes=mapped, held_bytes=own_anon_bytes() - own0))

    with huge_pages(True):     # the join's plan, postings and membership rows are read at random
        got = join_class_pairs(class_ptr, class_items, len(functions), rows_a, rows_b, row_of[0], a.end_index,
                               size_a, size_b, count_a, count_b, calls_ptr_a, None, calls_ptr_b, None, span_a, span_b,
                               n_bins, tol_a, tol_b, tau, top_k, join, keep_class_pairs, wave_pairs,
                               KEEP_CLASS_PAIRS_AUTO, check_memory, lap, overview_budget, call_times)
    call_times()                               # (made by now on every way of the join)
    (by_a, _, time_a_by_class), (by_b, _, time_b_by_class) = ordered
    ordered.clear()
    n_pairs_total, n_class_pairs, join_stats = got.n_pairs_total, got.n_class_pairs, got.stats
    join_stats["way"] = got.way
    tptr_a, tpart_a, tsim_a, tptr_b, tpart_b, tsim_b = got.tiers
    partner_calls_a = np.zeros(class_ptr.shape[0] - 1, np.int64)
    partner_calls_b = np.zeros(class_ptr.shape[0] - 1, np.int64)
    partner_calls_a[rows_a] = got.partners_row
    partner_calls_b[rows_b] = got.partners_col
    ov_a, dl_a, ov_b, dl_b = got.overview
    if got.kept is not None:
        ptr_a, part_a, inter_a, class_rows_a_out = got.kept
    else:
        ptr_a = part_a = inter_a = None
        class_rows_a_out = rows_a
    del got
    lap("kept_class_pairs")

    # kept call pairs (top-k both ways), their groups (Sec. III) and fields (Sec. IV-D)
    # (handed over in a list that _kept_pairs empties: it frees each per-call array when done)
    sides = [(a, row_of[0], by_a, calls_ptr_a, time_a_by_class, t0_a, span_a, tptr_a, tpart_a, tsim_a),
             (b, row_of[1], by_b, calls_ptr_b, time_b_by_class, t0_b, span_b, tptr_b, tpart_b, tsim_b)]
    row_of.clear()
    del by_a, by_b, time_a_by_class, time_b_by_class, calls_ptr_a, calls_ptr_b
    del tptr_a, tpart_a, tsim_a, tptr_b, tpart_b, tsim_b       # (the tiers: read by the top-k picks only)
    pairs, groups, pairs_in_file = _kept_pairs(sides, int(top_k), lap)

    reps = reps_done.result()
    lap("repetitions")

    return Comparison(
        a=a, b=b, tau=tau, top_k=int(top_k), functions=functions,
        class_a=class_a, class_b=class_b, class_ptr=class_ptr, class_items=class_items,
        class_rows_a=class_rows_a_out, class_rows_b=rows_b, class_pair_ptr=ptr_a, class_pair_row_b=part_a,
        class_pair_overlap=inter_a,
        n_pairs_total=n_pairs_total, pairs=pairs, groups=groups,
        overview_a=ov_a, overview_b=ov_b, overview_delta_a=dl_a, overview_delta_b=dl_b,
        overview_edges_a=np.linspace(0.0, span_a, int(n_bins) + 1),
        overview_edges_b=np.linspace(0.0, span_b, int(n_bins) + 1),
        repetitions_a=reps[0], repetitions_b=reps[1],
        params=dict(tau=tau, top_k=int(top_k), n_bins=int(n_bins), aligned_tol_a=tol_a,
                    aligned_tol_b=tol_b, max_period=int(max_period), timings=timings, laps=laps,
                    join=join_stats, pairs_in_file=pairs_in_file, memory_need=max(needs), mapped_bytes=mapped),
        class_pair_count=n_class_pairs, partner_calls_a=partner_calls_a, partner_calls_b=partner_calls_b,
    )
