"""EXTRAVIS' input data (Cornelissen et al., Sec. 3.1): the static hierarchy of a trace and its
time-stamped call relations, bpy-free.

- **Hierarchy** (`Hierarchy`): one tree of *elements* built from the function table (never per
  call): root → package → module → class → function, plus root → "threads" → one element per
  thread.  A function's module and qualified name come from `names.parse_function_name` (C
  built-ins under their module and type: ``str.replace`` is function ``replace`` of class
  ``str`` in module ``builtins``, ``_thread.lock.acquire`` of class ``lock`` in ``_thread``).
  The package is the module's first dotted part (``docutils.parsers.rst.states`` is in
  package ``docutils``; a top-level module ``threading`` is its own package).  Functions
  outside any class hang under a pseudo class ``(functions)`` of their module, so every
  function sits at the same depth (4) and the elements of one level are a cut of the tree
  (none is an ancestor of another): the leaves of the HEB circle and the columns of the
  sequence view.  A function nested in another (``f.<locals>.g``) belongs to its enclosing
  function's class.  Elements are numbered in depth-first pre-order, children sorted by
  name (threads last, in thread-table order), so an element's subtree is the contiguous
  range ``[e, end[e])``.
- **Call relations** (`Hierarchy.relations`): per call i, the element of its caller (its
  parent call's function, lifted to the chosen level; for a root call: its thread's
  element) → the element of its own function at that level, stamped with the call's start.
- **Sequence order** (`sequence_order`): all calls by start time, ties by thread, then by the
  model's order; the Massive Sequence View's rows and the window of `call_importance`.

Everything per call is a numpy gather or a numba kernel (`kernels.extravis`); Python loops
run over the function table and the elements only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model import Trace

__all__ = ["Hierarchy", "Relations", "Pairs", "hierarchy", "call_importance", "sequence_order", "LEVELS",
           "KIND_NAMES", "level_index", "auto_level", "element_label"]

#: the levels a relation can be lifted to, top to bottom
LEVELS = ("package", "module", "class", "function")
#: element kinds (``Hierarchy.kind``): the four levels, then the threads group, a thread, the root
KIND_NAMES = ("package", "module", "class", "function", "threads", "thread", "root")
PACKAGE, MODULE, CLASS, FUNCTION, THREADS, THREAD, ROOT = range(7)
NO_MODULE = "(no module)"
NO_CLASS = "(functions)"


#: ``level="auto"``: the coarsest of module, class and function level at which no element is
#: the callee of more than this share of the calls (C++ ``RunLoop::Run``, PyTorch
#: ``cudaLaunchKernel`` and free-text event names have no module: 9 of 10 of a Chromium trace's
#: calls land in one '(no module)' element; a one-file script is one module and one class)
AUTO_MAX_SHARE = 0.5


#: the figures' name of the pseudo class of '(no module)': names with neither module nor class
#: (free-text event names, C functions), which no outer band names either (short: written
#: radially in the leaves' band, as a class name is)
UNQUALIFIED = "(no class)"


def element_label(h: "Hierarchy", e: int) -> str | None:
    """The name a figure writes on element ``e``: its name; None for the pseudo elements whose
    band above already says it (a module's ``(functions)``), `UNQUALIFIED` for the
    ``(functions)`` of '(no module)' (9 of 10 calls of a Chromium trace at class level)."""
    name = h.names[e]
    if name == NO_CLASS and h.parent[e] >= 0 and h.names[h.parent[e]] == NO_MODULE:
        return UNQUALIFIED
    if name.startswith("(") and name != NO_MODULE:
        return None
    return name


def auto_level(h: "Hierarchy", calls=None) -> str:
    """The level ``"auto"`` stands for: the first of module, class, function at which no
    element is the callee of more than `AUTO_MAX_SHARE` of ``calls`` (None: all; indices or
    a mask); function level when none is."""
    for level in ("module", "class"):
        callee = h.call_elements(level)
        if calls is not None:
            callee = callee[calls]
        if callee.size == 0 or np.bincount(callee).max() <= AUTO_MAX_SHARE * callee.size:
            return level
    return "function"


def level_index(level: str) -> int:
    """0..3 for package, module, class, function; ValueError (one line) otherwise."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    return LEVELS.index(level)


def split_qualname(qualname: str, sep: str = ".") -> tuple:
    """(class, function) of a qualified name: ``Cls.meth`` → (``Cls``, ``meth``);
    ``f.<locals>.g`` → ('', ``f.<locals>.g``); ``Cls.m.<locals>.g`` → (``Cls``, ``m.<locals>.g``)."""
    parts = [p for p in qualname.split(sep) if p] or [qualname]
    if "<locals>" in parts[1:]:
        i = parts.index("<locals>")
        return sep.join(parts[:i - 1]), sep.join(parts[i - 1:])
    return sep.join(parts[:-1]), parts[-1]


@dataclass(eq=False)
class Relations:
    """Per call i: ``caller[i]`` → ``callee[i]`` (int32 element ids at ``level``) at ``time[i]``
    (the call's start, µs).  Indexed like the trace's calls."""

    level: str
    caller: np.ndarray
    callee: np.ndarray
    time: np.ndarray

    def __len__(self) -> int:
        return int(self.caller.shape[0])


@dataclass(eq=False)
class Pairs:
    """Relations aggregated per (caller element, callee element): ``src``, ``dst`` int32,
    ``count`` int64 (calls), ``t_first``, ``t_mean`` float64 (µs), sorted by (src, dst)."""

    src: np.ndarray
    dst: np.ndarray
    count: np.ndarray
    t_first: np.ndarray
    t_mean: np.ndarray

    def __len__(self) -> int:
        return int(self.src.shape[0])


@dataclass(eq=False)
class Hierarchy:
    """The static hierarchy of a trace (module docstring) and its call relations.

    Per element e (``len(h)`` of them, pre-order; element 0 is the root):
    ``names[e]`` the short name shown on the figure (``docutils.nodes``, ``Element``,
    ``astext``, a thread's name), ``full_names[e]`` the dotted path
    (``docutils.nodes.Element.astext``), ``kind`` int8 (index into `KIND_NAMES`),
    ``parent`` int32 (-1 for the root), ``depth`` int32 (root 0, packages 1, …, functions 4;
    threads group 1, threads 2), ``end`` int32 (one past the subtree).
    ``func_element`` int32: the function element of every function id of the trace;
    ``thread_element`` int32: the element of every thread.
    """

    trace: Trace
    names: list
    full_names: list
    kind: np.ndarray
    parent: np.ndarray
    depth: np.ndarray
    end: np.ndarray
    func_element: np.ndarray
    thread_element: np.ndarray

    def __len__(self) -> int:
        return int(self.kind.shape[0])

    def __repr__(self) -> str:
        plural = ("packages", "modules", "classes", "functions")
        counts = ", ".join(f"{int((self.kind == k).sum())} {plural[k]}" for k in (PACKAGE, MODULE, CLASS, FUNCTION))
        return f"<Hierarchy of {len(self.trace):,} calls: {counts}, {self.thread_element.size} threads>"

    def lift(self, level: str) -> np.ndarray:
        """int32 (len(h),): every element's ancestor-or-self at ``level`` (threads, the threads
        group and the root map to themselves)."""
        li = level_index(level)
        up = np.arange(len(self), dtype=np.int32)
        k = self.kind
        for _ in range(FUNCTION - li):  # a function is at most 3 levels below its package
            step = (k[up] > li) & (k[up] <= FUNCTION)
            up = np.where(step, self.parent[up], up).astype(np.int32)
        return up

    def leaves(self, level: str) -> np.ndarray:
        """int32: the elements of ``level`` and the threads, in pre-order (the HEB circle and
        the columns of the sequence view, left to right)."""
        li = level_index(level)
        return np.flatnonzero((self.kind == li) | (self.kind == THREAD)).astype(np.int32)

    def call_elements(self, level: str = "function") -> np.ndarray:
        """int32 per call: the element of the call's function at ``level``."""
        return self.lift(level)[self.func_element][self.trace.func]

    def relations(self, level: str = "function") -> Relations:
        """Per call: caller element → callee element at ``level``, time-stamped (`Relations`)."""
        callee = self.call_elements(level)
        t = self.trace
        caller = np.where(t.parent >= 0, callee[np.maximum(t.parent, 0)], self.thread_element[t.thread])
        return Relations(level, caller.astype(np.int32), callee, t.start)

    def pairs(self, level: str = "function", calls=None, self_loops: bool = False) -> Pairs:
        """The relations of ``calls`` (None: all; a boolean mask or indices) aggregated per
        element pair (`Pairs`); without ``self_loops`` a pair whose caller and callee are the
        same element (a call inside one class, at class level) is left out."""
        r = self.relations(level)
        src, dst, t = r.caller, r.callee, r.time
        if calls is not None:
            src, dst, t = src[calls], dst[calls], t[calls]
        if not self_loops:
            keep = src != dst
            src, dst, t = src[keep], dst[keep], t[keep]
        e = np.int64(max(len(self), 1))
        code = src.astype(np.int64) * e + dst
        uniq, inv, count = np.unique(code, return_inverse=True, return_counts=True)
        t_sum = np.bincount(inv, weights=t, minlength=uniq.size)
        t_first = np.full(uniq.size, np.inf)
        np.minimum.at(t_first, inv, t)
        return Pairs((uniq // e).astype(np.int32), (uniq % e).astype(np.int32), count.astype(np.int64),
                     t_first, t_sum / np.maximum(count, 1))

    def ancestors(self) -> np.ndarray:
        """int32 (max depth + 1, len(h)): row d holds every element's ancestor-or-self at
        depth d (-1 where the element is shallower than d)."""
        n = len(self)
        anc = np.full((int(self.depth.max()) + 1, n), -1, np.int32)
        idx = np.arange(n)
        cur = idx.astype(np.int32)
        while True:
            ok = cur >= 0
            if not ok.any():
                return anc
            anc[self.depth[cur[ok]], idx[ok]] = cur[ok]
            cur = np.where(ok, self.parent[np.maximum(cur, 0)], -1).astype(np.int32)

    def lca(self, a, b) -> np.ndarray:
        """int32: the least common ancestor of every pair (a[k], b[k]) (vectorised)."""
        a = np.asarray(a, np.int64)
        b = np.asarray(b, np.int64)
        anc = self.ancestors()
        out = np.zeros(a.shape, np.int32)  # the root is everyone's ancestor
        for d in range(1, anc.shape[0]):
            same = (anc[d, a] == anc[d, b]) & (anc[d, a] >= 0)
            out = np.where(same, anc[d, a], out)
        return out

    def path(self, a: int, b: int) -> list:
        """The elements from ``a`` up to their LCA and down to ``b`` (both included)."""
        c = int(self.lca([a], [b])[0])
        up, q = [], int(a)
        while q != c:
            up.append(q)
            q = int(self.parent[q])
        down, q = [], int(b)
        while q != c:
            down.append(q)
            q = int(self.parent[q])
        return up + [c] + down[::-1]

    def element(self, name: str) -> int:
        """The element called ``name`` (full dotted name, or a short name that is unique);
        ValueError naming a few candidates otherwise."""
        if name in self.full_names:
            return self.full_names.index(name)
        hits = [e for e, s in enumerate(self.names) if s == name]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            hits = [e for e, s in enumerate(self.full_names) if s.endswith(name)]
            if len(hits) == 1:
                return hits[0]
        what = "ambiguous" if hits else "unknown"
        some = ", ".join(self.full_names[e] for e in hits[:3]) if hits else ", ".join(self.names[1:4])
        raise ValueError(f"{what} hierarchy element {name!r} (e.g. {some})")


def _parsed(trace: Trace) -> list:
    from ..names import parse_functions

    return parse_functions(trace)


def hierarchy(trace: Trace, thread_groups: tuple | None = None) -> Hierarchy:
    """The `Hierarchy` of ``trace`` (module docstring).  ``thread_groups``: (group of each
    thread, name of each group), threads of one group one element of that name (a server's
    5,000 request threads one element "5000× handle", not half the circle); None: an element
    per thread."""
    if not isinstance(trace, Trace):
        raise TypeError(f"hierarchy needs a Trace, got {type(trace).__name__}")
    keys: dict = {}
    names, full, kind, parent = ["(root)"], ["(root)"], [ROOT], [-1]

    def get(key, name, fname, k, par):
        e = keys.get(key)
        if e is None:
            e = keys[key] = len(names)
            names.append(name)
            full.append(fname)
            kind.append(k)
            parent.append(par)
        return e

    func_el = np.zeros(trace.n_functions, np.int32)
    for f, pn in enumerate(_parsed(trace)):  # once per distinct function, never per call
        mod, sep = pn.module or "", pn.sep or "."
        pkg = (pn.package or NO_MODULE) if mod else NO_MODULE  # a script's host, a Go package path
        p = get(("P", pkg), pkg, pkg, PACKAGE, 0)
        m = get(("M", mod), mod or NO_MODULE, mod or NO_MODULE, MODULE, p)
        cls, fn = split_qualname(pn.qualname or pn.function, sep)
        mfull = mod or NO_MODULE
        c = get(("C", mod, cls), cls or NO_CLASS, f"{mfull}{sep}{cls or NO_CLASS}", CLASS, m)
        func_el[f] = get(("F", mod, cls, fn), fn, f"{mfull}{sep}{cls + sep if cls else ''}{fn}", FUNCTION, c)
    g = get(("G",), "threads", "threads", THREADS, 0)
    if thread_groups is None:
        thread_el = np.array([get(("T", t), str(nm) or f"thread {t}", f"thread {nm}", THREAD, g)
                              for t, nm in enumerate(trace.thread_names)], np.int32).reshape(-1)
    else:
        group_of, group_names = thread_groups
        group_el = [get(("T", k), str(nm) or f"threads {k}", f"threads {nm}", THREAD, g)
                    for k, nm in enumerate(group_names)]
        thread_el = np.asarray(group_el, np.int32)[np.asarray(group_of, np.int64)].reshape(-1)
    # pre-order, children by name (threads last, in thread order)
    n = len(names)
    children: list = [[] for _ in range(n)]
    for e in range(1, n):
        children[parent[e]].append(e)
    for e in range(n):
        if kind[e] != THREADS:
            children[e].sort(key=lambda c: (kind[c] == THREADS, names[c].lower(), names[c]))
    order, stack = [], [0]
    while stack:
        e = stack.pop()
        order.append(e)
        stack.extend(reversed(children[e]))
    order = np.asarray(order, np.int64)
    new = np.empty(n, np.int32)
    new[order] = np.arange(n, dtype=np.int32)
    par = np.asarray(parent, np.int64)[order]
    par = np.where(par >= 0, new[np.maximum(par, 0)], -1).astype(np.int32)
    depth = np.zeros(n, np.int32)
    for e in range(1, n):  # parents come first in pre-order
        depth[e] = depth[par[e]] + 1
    end = np.arange(1, n + 1, dtype=np.int32)
    for e in range(n - 1, 0, -1):
        end[par[e]] = max(end[par[e]], end[e])
    return Hierarchy(trace, [names[i] for i in order], [full[i] for i in order],
                     np.asarray(kind, np.int8)[order], par, depth, end, new[func_el], new[thread_el])


def sequence_order(trace: Trace) -> np.ndarray:
    """int64: the calls in sequence order (start time, then thread, then the model's order)."""
    return np.lexsort((np.arange(len(trace)), trace.thread, trace.start))


def check_importance_args(window, power) -> tuple:
    """(window, power) checked: a window of at least 1 call, p within [-5, 5] (Sec. 5: values
    outside hardly change the picture); ValueError (one line) otherwise."""
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window must be a whole number of calls >= 1, got {window!r}")
    try:
        p = float(power)
    except (TypeError, ValueError):
        raise ValueError(f"power must be a number within [-5, 5], got {power!r}") from None
    if not (math.isfinite(p) and -5.0 <= p <= 5.0):
        raise ValueError(f"power must be a number within [-5, 5], got {power!r}")
    return int(window), p


def relation_ids(rel: Relations, n_elements: int) -> tuple:
    """(compact int64 id per call of its (caller, callee) relation, number of ids)."""
    code = rel.caller.astype(np.int64) * max(n_elements, 1) + rel.callee
    uniq, inv = np.unique(code, return_inverse=True)
    return inv.astype(np.int64), int(uniq.size)


def call_importance(trace: Trace, window: int = 25, power: float = -1.0, level: str = "function",
                    hierarchy_: Hierarchy | None = None) -> np.ndarray:
    """W_i = f_i^p (EXTRAVIS Eq. 2) per call, indexed like the trace's calls (float64).

    f_i is the share of the calls in a window of ``window`` calls centred on call i (in
    sequence order, `sequence_order`; clipped at both ends) that have call i's relation
    (caller element, callee element) at ``level`` (`kernels.extravis.window_frequency`).
    p = 0 gives W = 1 (linear anti-aliasing); p < 0 weights rare calls (outliers) up.
    """
    from ..kernels.extravis import window_frequency

    window, p = check_importance_args(window, power)
    h = hierarchy_ if hierarchy_ is not None else hierarchy(trace)
    level_index(level)
    n = len(trace)
    if n == 0:
        return np.zeros(0, np.float64)
    rid, n_rel = relation_ids(h.relations(level), len(h))
    order = sequence_order(trace)
    f = window_frequency(rid[order], n_rel, window)
    w = np.empty(n, np.float64)
    w[order] = f ** p
    return w
