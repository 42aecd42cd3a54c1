"""Filters over a trace (SEAT Sec. 2.9.1), usable by every view.

- `function_mask`: functions matched by regexes (raw or display name) or modules;
- `repeated_patterns`: classes of repeated subtrees, exact or relaxed
  (`kernels.patterns.relaxed_classes`);
- `utilities` / `top_utilities`: fan-in, fan-out, caller scatter and the utility score
  (`kernels.utility.utility_scores`, formula there);
- `filter_trace`: hide (regex, modules, top utilities; children promoted as in
  `transform.merge_calls`) and collapse the repeated instances of patterns, with the
  partially-expanded flag of every kept call (`kernels.patterns.partially_expanded`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model import Trace

__all__ = ["function_mask", "call_graph", "Patterns", "repeated_patterns", "Utilities", "utilities",
           "top_utilities", "FilterSpec", "Filtered", "filter_trace"]


def function_mask(trace: Trace, regexes=(), modules=()) -> np.ndarray:
    """bool per function: its raw or display name matches one of ``regexes``, or its
    module is one of ``modules`` or below one.  Once per distinct function."""
    from ..naming import function_table

    matches = name_matcher(regexes, modules)
    out = np.zeros(trace.n_functions, np.bool_)
    if matches is None:
        return out
    ft = function_table(trace)
    for f in range(trace.n_functions):
        out[f] = matches(trace.function_names[f], ft.display[f], ft.module[f])
    return out


def name_matcher(regexes=(), modules=()):
    """The rule of `function_mask` for one function at a time (the live view's functions
    arrive as the program runs): ``matches(raw, display, module)``, or None when there is
    nothing to match."""
    from ..userregex import user_regex

    rxs = [user_regex(r) for r in regexes]  # linear time: a user's pattern never backtracks
    mods = [m.strip().rstrip(".") for m in modules if m.strip()]
    if not rxs and not mods:
        return None

    def matches(raw: str, disp: str, mod: str) -> bool:
        if any(r.search(raw) or r.search(disp) for r in rxs):
            return True
        mod = mod or ""
        return any(mod == m or mod.startswith(m + ".") for m in mods)

    return matches


def call_graph(trace: Trace) -> tuple:
    """Distinct (caller function, callee function) pairs and how many calls each made:
    ``(caller, callee, count)`` int64 arrays.  O(n log n) (one sort of int64 keys)."""
    p = trace.parent
    m = p >= 0
    nf = max(trace.n_functions, 1)
    key = trace.func[p[m]].astype(np.int64) * nf + trace.func[m]
    uk, count = np.unique(key, return_counts=True)
    return uk // nf, uk % nf, count.astype(np.int64)


@dataclass
class Patterns:
    """Repeated-pattern classes: ``cls`` int32 per call, ``count`` instances per class,
    ``size`` calls in the class's first instance, ``first`` that instance's call."""

    cls: np.ndarray
    n_classes: int
    count: np.ndarray
    size: np.ndarray
    first: np.ndarray
    criteria: dict = field(default_factory=dict)

    def repeated(self, min_calls: int = 2, min_count: int = 2) -> np.ndarray:
        """Classes with at least ``min_count`` instances of at least ``min_calls`` calls."""
        return np.flatnonzero((self.count >= min_count) & (self.size >= min_calls))


def repeated_patterns(trace: Trace, ignore_order: bool = False, collapse_runs: bool = False,
                      max_depth: int | None = None) -> Patterns:
    """Pattern classes of every call (SEAT 2.9.1.1): exact (identical subtrees), or relaxed:
    ``ignore_order`` (children as a multiset), ``collapse_runs`` (consecutive repetitions
    of a child count once), ``max_depth`` (compare only that many levels below a call;
    0 = the function alone).  See `kernels.patterns`."""
    from ..kernels.dag import node_first_call
    from ..kernels.gamma import process_hash_seed
    from ..kernels.patterns import relaxed_classes

    if max_depth is not None and max_depth < 0:
        raise ValueError(f"max_depth must be >= 0 or None, got {max_depth}")
    if max_depth is None:
        cls, k = relaxed_classes(trace.func, trace.end_index, trace.func, False, ignore_order, collapse_runs,
                                 process_hash_seed())
    else:
        _, cls = np.unique(trace.func, return_inverse=True)
        cls = cls.astype(np.int32)
        k = int(cls.max()) + 1 if len(trace) else 0
        for _ in range(max_depth):
            cls, k = relaxed_classes(trace.func, trace.end_index, cls, True, ignore_order, collapse_runs,
                                     process_hash_seed())
    first, count = node_first_call(cls, k)
    size = trace.subtree_size[first] if k else np.zeros(0, np.int32)
    return Patterns(cls, int(k), count, size.astype(np.int64), first,
                    dict(ignore_order=ignore_order, collapse_runs=collapse_runs, max_depth=max_depth))


@dataclass
class Utilities:
    """Per function: ``fan_in``, ``fan_out``, ``scatter``, ``score`` (`kernels.utility`), ``calls``."""

    fan_in: np.ndarray
    fan_out: np.ndarray
    scatter: np.ndarray
    score: np.ndarray
    calls: np.ndarray
    function_names: list

    def top(self, k: int = 10, min_fan_in: int = 3) -> np.ndarray:
        """The ``k`` best-scoring functions with at least ``min_fan_in`` callers."""
        ok = np.flatnonzero((self.fan_in >= min_fan_in) & (self.score > 0))
        return ok[np.argsort(-self.score[ok], kind="stable")][:k]

    def table(self, k: int = 10, min_fan_in: int = 3) -> list[dict]:
        return [dict(function=int(f), name=self.function_names[f], score=float(self.score[f]),
                     fan_in=int(self.fan_in[f]), fan_out=int(self.fan_out[f]),
                     scatter=float(self.scatter[f]), calls=int(self.calls[f]))
                for f in self.top(k, min_fan_in)]


def utilities(trace: Trace) -> Utilities:
    from ..kernels.utility import utility_scores

    caller, callee, count = call_graph(trace)
    calls = np.bincount(trace.func, minlength=trace.n_functions)
    fi, fo, sc, score = utility_scores(caller, callee, count.astype(np.float64), trace.n_functions, calls > 0)
    return Utilities(fi, fo, sc, score, calls, trace.function_names)


def top_utilities(trace: Trace, k: int = 10, min_fan_in: int = 3) -> list[dict]:
    """The ``k`` likeliest utility routines, best first, as dicts (name, score, fan_in, ...)."""
    return utilities(trace).table(k, min_fan_in)


@dataclass(frozen=True)
class FilterSpec:
    """What `filter_trace` hides.  ``hide``: regexes on names; ``hide_modules``: dotted
    modules; ``hide_utilities``: hide the top N utilities (0: none); ``collapse_patterns``:
    collapse every later instance of a repeated pattern of at least ``pattern_min_calls``
    calls (``pattern_*``: the relaxed criteria of `repeated_patterns`); ``expand``: calls
    (indices) shown fully expanded: their children are never hidden (the "partially
    expanded" state undone on demand, SEAT ch. 5)."""

    hide: tuple = ()
    hide_modules: tuple = ()
    hide_utilities: int = 0
    collapse_patterns: bool = False
    pattern_min_calls: int = 4
    pattern_ignore_order: bool = False
    pattern_collapse_runs: bool = False
    pattern_max_depth: int | None = None
    expand: tuple = ()

    @property
    def empty(self) -> bool:
        return not (self.hide or self.hide_modules or self.hide_utilities or self.collapse_patterns)


@dataclass
class Filtered:
    """The result of `filter_trace`: the kept calls as a valid ``trace``, ``orig`` (index of
    each in the input; None when nothing was hidden), ``partial`` (bool per kept call: some
    of its subtree is hidden), ``collapsed`` (kept calls that are collapsed instances),
    ``hidden_functions`` (function ids hidden by regex/module/utility)."""

    trace: Trace
    orig: np.ndarray | None
    partial: np.ndarray
    collapsed: np.ndarray
    hidden_functions: np.ndarray
    n_hidden: int


def filter_trace(trace: Trace, spec: FilterSpec) -> Filtered:
    from ..kernels.patterns import collapse_repeats, partially_expanded
    from ..transform import merge_calls

    n = len(trace)
    bad = [int(c) for c in spec.expand if not 0 <= int(c) < n]
    if bad:  # e.g. an index into another, larger trace: expanding other calls would mislead
        raise ValueError(f"expand: no call {bad[0]:,} in the trace "
                         + (f"(its calls are 0–{n - 1:,})" if n else "(it has no calls)"))
    none = np.zeros(n, np.bool_)
    if spec.empty or n == 0:
        return Filtered(trace, None, none, none, np.zeros(0, np.int64), 0)
    fmask = function_mask(trace, spec.hide, spec.hide_modules)
    if spec.hide_utilities:
        fmask[utilities(trace).top(int(spec.hide_utilities))] = True
    hidden = fmask[trace.func]
    collapsed = none
    if spec.collapse_patterns:
        pat = repeated_patterns(trace, spec.pattern_ignore_order, spec.pattern_collapse_runs, spec.pattern_max_depth)
        eligible = np.zeros(pat.n_classes, np.bool_)
        eligible[pat.repeated(spec.pattern_min_calls)] = True
        below, collapsed = collapse_repeats(trace.end_index, pat.cls, eligible)
        hidden = hidden | below
        collapsed = collapsed & ~hidden
    if spec.expand:  # expanded on demand: every child of these calls is shown
        asked = np.asarray(spec.expand, np.int64)
        is_asked = np.zeros(n, np.bool_)
        is_asked[asked] = True
        has_parent = trace.parent >= 0
        child_of_asked = np.zeros(n, np.bool_)
        child_of_asked[has_parent] = is_asked[trace.parent[has_parent]]
        hidden = hidden & ~child_of_asked & ~is_asked
        collapsed = collapsed & ~is_asked
    if not hidden.any():
        return Filtered(trace, None, none, none, np.flatnonzero(fmask), 0)
    partial = partially_expanded(trace.parent, hidden)
    keep = ~hidden
    out = merge_calls(trace, hidden)
    return Filtered(out, np.flatnonzero(keep), partial[keep], collapsed[keep], np.flatnonzero(fmask),
                    int(hidden.sum()))
