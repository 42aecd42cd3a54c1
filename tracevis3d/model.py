"""The in-memory model of an execution trace: one struct of numpy arrays.

Calls of each thread are stored contiguously, threads in thread-table order, and
inside a thread in depth-first pre-order, so the subtree of call ``i`` is the
contiguous range ``[i, end_index[i])`` (DESIGN.md, "The Trace model").

No Python object is kept per call: every per-call quantity is a numpy array.
Per-function and per-thread tables are small Python lists (one entry per
distinct function / thread), which is what the views need for labels.

Over 600 lines: one topic, the `Trace` struct — its fields, constructors, the cuts
(subset, window, merge) and the invariant check every loader ends with; what the trace
carries besides calls (counters, async slices, instants, flows) is in `model_side`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from .errors import TraceError, TraceFormatError, TraceInvariantError, TraceTooLargeError, TraceWarning  # noqa: F401
from .model_window import window_calls
from .model_side import (ADDED_TABLES, OPTIONAL_TABLES, SIDE_DTYPES, SIDE_FIELDS, check_side, cut_side,
                         fill_flow_cats, fill_instant_pids, fill_track_defaults)

__all__ = [
    "Trace",
    "TraceError",
    "TraceFormatError",
    "TraceInvariantError",
    "TraceWarning",
    "KIND_OTHER",
    "KIND_WAIT",
    "KIND_RELEASE",
    "KIND_IO",
    "KIND_NAMES",
]

KIND_OTHER = 0
KIND_WAIT = 1
KIND_RELEASE = 2
KIND_IO = 3
KIND_NAMES = ("other", "wait", "release", "io")


# dtype of every per-call array, the single source of truth for check()/save()/load()
CALL_DTYPES = {
    "func": np.int32,
    "start": np.float64,
    "end": np.float64,
    "depth": np.int32,
    "parent": np.int32,
    "end_index": np.int32,
    "thread": np.int32,
    "kind": np.uint8,
}
OTHER_DTYPES = {
    "obj_ptr": np.int64,
    "obj_ids": np.int32,
    "function_lines": np.int32,
    "thread_pid": np.int64,
    "thread_tid": np.int64,
    "thread_sort": np.int32,
    "instant_ts": np.float64,
    "instant_name": np.int32,
    "instant_thread": np.int32,
    "instant_scope": np.uint8,
    "instant_pid": np.int64,
    "flow_id": np.int64,
    "flow_from": np.int32,
    "flow_to": np.int32,
    "flow_cat": np.int32,
    "args_call": np.int32,
    "args_ptr": np.int64,
    "args_blob": np.uint8,
    **SIDE_DTYPES,
}
ARRAY_DTYPES = {**CALL_DTYPES, **OTHER_DTYPES}
# Python lists of strings (one entry per function/thread/object/instant name)
STRING_TABLES = (
    "function_names",
    "function_files",
    "function_cats",
    "thread_names",
    "process_names",
    "object_names",
    "instant_names",
    *OPTIONAL_TABLES,
    *ADDED_TABLES,
)


def _empty(name: str) -> np.ndarray:
    return np.zeros(0, dtype=ARRAY_DTYPES[name])


@dataclass(eq=False)
class Trace:
    """A trace: calls as a struct of numpy arrays plus small tables.

    Per call ``i`` (length ``n = len(trace)``):
      ``func`` int32 index into the function table; ``start``/``end`` float64 µs
      from the trace origin; ``depth`` int32 (0 for roots); ``parent`` int32 (-1 for
      roots); ``end_index`` int32 (one past the last call of i's subtree);
      ``thread`` int32 index into the thread table; ``kind`` uint8 (KIND_*).
    Objects each call operates on (SyncTrace Sec. III-A), CSR: the objects of call i
    are ``obj_ids[obj_ptr[i]:obj_ptr[i+1]]`` (indices into ``object_names``).
    Function table: ``function_names``, ``function_files`` ('' when unknown),
    ``function_lines`` (-1 when unknown), ``function_cats``, ``function_paths``
    (tuple of names from module to function, parsed from the name).
    Thread table: ``thread_pid``, ``thread_tid``, ``thread_names``, ``thread_sort``,
    ``process_names`` (one per thread, the name of its process).
    Instants: ``instant_ts``, ``instant_name`` (into ``instant_names``),
    ``instant_thread`` (-1 for global/process scope), ``instant_scope`` (b'g','p','t'),
    ``instant_pid`` (the event's process: what a process-scope instant spans; -1 unknown).
    Flows: ``flow_id``, ``flow_from``, ``flow_to`` (call indices), ``flow_cat`` (into
    ``flow_cat_names``: the Chrome flow event's ``cat``; "" where it has none).
    Counters (Chrome ``C`` events; each ``args`` key one series, ``name`` [+ ``id``] and
    process one counter): samples ``counter_ts`` (µs on the trace clock), ``counter_value``,
    ``counter_series`` (into the series table), sorted by (series, ts). Series table:
    ``series_names`` (the args key), ``series_units`` ('' when unknown), ``series_counter``
    (into ``counter_names``), ``series_pid``.
    Async slices (Chrome ``b``/``e``, ``n`` as zero-length slices): ``async_start``,
    ``async_end``, ``async_name`` (into ``async_names``), ``async_track``, ``async_depth``
    (nesting inside the track), sorted by (track, start). Track table: ``async_track_cats``,
    ``async_track_ids`` (the id's text as in the file, '' for none), ``async_track_scopes``
    (the events' ``scope``, '' for none), ``async_track_id_kind`` (uint8: 0 no id, 1 ``id``,
    2 ``id2.global``, 3 ``id2.local``), ``async_track_pid`` (the process of a local id or of
    the track's first event).
    Args (only where present): call ``args_call[k]`` has the JSON bytes
    ``args_blob[args_ptr[k]:args_ptr[k+1]]``; ``args_call`` is sorted.
    ``meta``: source, format, clock_origin (absolute µs of t=0), repairs, ...
    """

    func: np.ndarray
    start: np.ndarray
    end: np.ndarray
    depth: np.ndarray
    parent: np.ndarray
    end_index: np.ndarray
    thread: np.ndarray
    kind: np.ndarray
    obj_ptr: np.ndarray
    obj_ids: np.ndarray
    function_names: list
    function_files: list
    function_lines: np.ndarray
    function_cats: list
    function_paths: list
    thread_pid: np.ndarray
    thread_tid: np.ndarray
    thread_names: list
    thread_sort: np.ndarray
    process_names: list
    object_names: list = field(default_factory=list)
    instant_ts: np.ndarray = field(default_factory=lambda: _empty("instant_ts"))
    instant_name: np.ndarray = field(default_factory=lambda: _empty("instant_name"))
    instant_thread: np.ndarray = field(default_factory=lambda: _empty("instant_thread"))
    instant_scope: np.ndarray = field(default_factory=lambda: _empty("instant_scope"))
    instant_pid: np.ndarray = field(default_factory=lambda: _empty("instant_pid"))
    instant_names: list = field(default_factory=list)
    flow_id: np.ndarray = field(default_factory=lambda: _empty("flow_id"))
    flow_from: np.ndarray = field(default_factory=lambda: _empty("flow_from"))
    flow_to: np.ndarray = field(default_factory=lambda: _empty("flow_to"))
    flow_cat: np.ndarray = field(default_factory=lambda: _empty("flow_cat"))
    flow_cat_names: list = field(default_factory=list)
    counter_ts: np.ndarray = field(default_factory=lambda: _empty("counter_ts"))
    counter_value: np.ndarray = field(default_factory=lambda: _empty("counter_value"))
    counter_series: np.ndarray = field(default_factory=lambda: _empty("counter_series"))
    series_counter: np.ndarray = field(default_factory=lambda: _empty("series_counter"))
    series_pid: np.ndarray = field(default_factory=lambda: _empty("series_pid"))
    series_names: list = field(default_factory=list)
    series_units: list = field(default_factory=list)
    counter_names: list = field(default_factory=list)
    async_start: np.ndarray = field(default_factory=lambda: _empty("async_start"))
    async_end: np.ndarray = field(default_factory=lambda: _empty("async_end"))
    async_name: np.ndarray = field(default_factory=lambda: _empty("async_name"))
    async_track: np.ndarray = field(default_factory=lambda: _empty("async_track"))
    async_depth: np.ndarray = field(default_factory=lambda: _empty("async_depth"))
    async_track_pid: np.ndarray = field(default_factory=lambda: _empty("async_track_pid"))
    async_track_id_kind: np.ndarray = field(default_factory=lambda: _empty("async_track_id_kind"))
    async_names: list = field(default_factory=list)
    async_track_cats: list = field(default_factory=list)
    async_track_ids: list = field(default_factory=list)
    async_track_scopes: list = field(default_factory=list)
    args_call: np.ndarray = field(default_factory=lambda: _empty("args_call"))
    args_ptr: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    args_blob: np.ndarray = field(default_factory=lambda: _empty("args_blob"))
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        fill_track_defaults(self)  # files from before the track's id kind and scope
        fill_instant_pids(self)  # files from before the instants' process
        fill_flow_cats(self)  # files from before the flows' category

    # ------------------------------------------------------------------ basics
    def __len__(self) -> int:
        return int(self.func.shape[0])

    def __repr__(self) -> str:
        src = self.meta.get("source", "")
        return (
            f"<Trace {len(self)} calls, {self.n_threads} threads, "
            f"{self.n_functions} functions, span {self.span:.6g} µs{', ' + src if src else ''}>"
        )

    @property
    def n_threads(self) -> int:
        return int(self.thread_pid.shape[0])

    @property
    def n_functions(self) -> int:
        return len(self.function_names)

    @property
    def span(self) -> float:
        """Time from the trace origin to the last call end (µs)."""
        return float(self.end.max()) if len(self) else 0.0

    # ------------------------------------------------------------ constructors
    @classmethod
    def from_arrays(
        cls,
        func,
        start,
        end,
        parent,
        thread=None,
        function_names: Sequence[str] | None = None,
        thread_names: Sequence[str] | None = None,
        kind=None,
        meta: dict | None = None,
        **tables,
    ) -> "Trace":
        """Build a Trace from calls already in per-thread pre-order with parents.

        ``depth`` and ``end_index`` are derived from ``parent``.  Tables that are
        not given get neutral defaults.  Use `Trace.check()` to validate.
        """
        from .kernels.tree import depth_and_end_from_parent

        func = np.ascontiguousarray(func, dtype=np.int32)
        n = func.shape[0]
        parent = np.ascontiguousarray(parent, dtype=np.int32)
        thread = (
            np.zeros(n, np.int32) if thread is None else np.ascontiguousarray(thread, np.int32)
        )
        depth, end_index = depth_and_end_from_parent(parent)
        n_func = int(func.max()) + 1 if n else 0
        if function_names is None:
            function_names = [f"f{i}" for i in range(n_func)]
        function_names = list(function_names)
        n_threads = int(thread.max()) + 1 if n else 0
        if thread_names is not None:
            n_threads = max(n_threads, len(thread_names))
        kw = dict(
            func=func,
            start=np.ascontiguousarray(start, np.float64),
            end=np.ascontiguousarray(end, np.float64),
            depth=depth,
            parent=parent,
            end_index=end_index,
            thread=thread,
            kind=np.zeros(n, np.uint8) if kind is None else np.ascontiguousarray(kind, np.uint8),
            obj_ptr=np.zeros(n + 1, np.int64),
            obj_ids=np.zeros(0, np.int32),
            function_names=function_names,
            function_files=[""] * len(function_names),
            function_lines=np.full(len(function_names), -1, np.int32),
            function_cats=[""] * len(function_names),
            function_paths=None,
            thread_pid=np.zeros(n_threads, np.int64),
            thread_tid=np.arange(n_threads, dtype=np.int64),
            thread_names=list(thread_names) if thread_names is not None
            else [f"thread {i}" for i in range(n_threads)],
            thread_sort=np.arange(n_threads, dtype=np.int32),
            process_names=[""] * n_threads,
            meta=dict(meta or {}),
        )
        kw.update(tables)
        if kw["function_paths"] is None:
            from .names import parse_function_name

            kw["function_paths"] = [parse_function_name(s).path for s in kw["function_names"]]
        return cls(**kw)

    # ---------------------------------------------------------- derived arrays
    @property
    def duration(self) -> np.ndarray:
        """Inclusive time of each call, ``end - start`` (µs)."""
        return self.end - self.start

    @property
    def children_count(self) -> np.ndarray:
        """Number of direct children of each call (int32)."""
        p = self.parent
        return np.bincount(p[p >= 0], minlength=len(self)).astype(np.int32)

    @property
    def self_time(self) -> np.ndarray:
        """Exclusive time: duration minus the durations of the direct children."""
        d = self.duration
        p = self.parent
        m = p >= 0
        child_sum = np.bincount(p[m], weights=d[m], minlength=len(self))
        return d - child_sum

    def self_time_of(self, idx) -> np.ndarray:
        """``self_time[idx]`` computed for those calls alone: O(len(idx) + their children)
        (`kernels.tree.self_times`), the same values bit for bit."""
        from .kernels.tree import self_times

        return self_times(self.start, self.end, self.end_index, np.asarray(idx, np.int64))

    @property
    def subtree_size(self) -> np.ndarray:
        """Number of calls in each call's subtree, itself included (int32)."""
        return (self.end_index - np.arange(len(self), dtype=np.int32)).astype(np.int32)

    @property
    def max_depth(self) -> int:
        return int(self.depth.max()) if len(self) else 0

    def thread_ranges(self) -> np.ndarray:
        """(n_threads, 2) int64 array: calls of thread t are ``[r[t,0], r[t,1])``."""
        t = np.arange(self.n_threads + 1, dtype=self.thread.dtype)  # its dtype: no int64 copy of thread
        b = np.searchsorted(self.thread, t, side="left")
        return np.stack([b[:-1], b[1:]], axis=1).astype(np.int64)

    @property
    def title_name(self) -> str:
        """The trace's name in figure titles: its file's name without the folder and the
        trace extensions (``docutils_pool.json.gz`` → ``docutils_pool``); a trace made by
        `tracevis3d.synthetic` or `tracevis3d.perturb`, whose source records every parameter,
        by its generators alone (``perturb(synthetic)``); "trace" without a source."""
        src = str(self.meta.get("source") or self.meta.get("subset_of") or "trace")
        if src.startswith(("synthetic(", "perturb(")):
            names = []
            while len(names) < 4 and src.startswith(("synthetic(", "perturb(")):
                head, src = src.split("(", 1)
                names.append(head)
            return "(".join(names) + ")" * (len(names) - 1)
        name = src.replace("\\", "/").rsplit("/", 1)[-1] or src
        for ext in (".gz", ".npz", ".json", ".tv3d", ".tv3c"):
            if name.lower().endswith(ext) and len(name) > len(ext):
                name = name[: -len(ext)]
        return name

    def roots(self) -> np.ndarray:
        return np.flatnonzero(self.parent < 0).astype(np.int32)

    def objects_of(self, i: int) -> list[str]:
        return [self.object_names[k] for k in self.obj_ids[self.obj_ptr[i]: self.obj_ptr[i + 1]]]

    def args_of(self, i: int) -> Any:
        """The decoded ``args`` of call i, or None when it had none."""
        k = np.searchsorted(self.args_call, i)
        if k >= len(self.args_call) or self.args_call[k] != i:
            return None
        import json

        raw = self.args_blob[self.args_ptr[k]: self.args_ptr[k + 1]].tobytes()
        return json.loads(raw.decode("utf-8", "replace"))

    def name(self, i: int) -> str:
        return self.function_names[self.func[i]]

    def thread_label(self, t: int, n_shown: int = 2, name_counts: tuple | None = None) -> str:
        """Thread ``t``'s name in a figure that shows ``n_shown`` threads: with its process's
        name in front ("ForkPoolWorker-2: MainThread") when the trace has several processes
        and either several threads are shown or the name alone is ambiguous (every worker
        process of a pool has its "MainThread"); "thread t" when it has no name.
        ``name_counts``: `thread_name_counts`, for a caller that labels many threads (counted
        per label, labelling every lane of a trace of 20,000 threads was quadratic)."""
        nm = self.thread_names[t] if t < len(self.thread_names) else ""
        n_processes, name_count, process_label, number = name_counts if name_counts is not None else \
            self.thread_name_counts()
        shared = name_count.get(nm, 0) > 1
        if nm and t < len(number) and number[t]:
            nm = f"{nm} #{number[t]}"
        pn = process_label[t] if t < len(process_label) else ""
        if pn and pn != nm and n_processes > 1 and (n_shown > 1 or shared):
            return f"{pn}: {nm}" if nm else pn
        return nm or f"thread {t}"

    def thread_name_counts(self) -> tuple:
        """What `thread_label` asks of every thread: (the number of distinct process labels,
        `collections.Counter` of the thread names, each thread's process label, each thread's
        number among its process's threads of the same name).  A process's label is its name,
        followed by "#k" where several processes share that name (the k-th of them by pid: a
        pool's spawned workers are each "python -c"), so that their threads ("python -c #2:
        MainThread") tell apart.  Threads of one process that share a name (JAX names its
        main thread and every Python worker thread "python", Chrome has many
        "ThreadPoolForegroundWorker") are numbered by their busy time, the longest first (the
        time their root calls span; ties by index; 0: a name no other thread of its process
        has): "python #1" is the main thread of a JAX program in every run of it, where the
        order of first calls changed from run to run (the profiler dates a worker's
        ``_bootstrap`` from the start of the trace)."""
        from collections import Counter, defaultdict

        names = list(self.process_names)
        pids = [int(p) for p in self.thread_pid[:len(names)]] if len(names) else []
        by_name: dict = defaultdict(set)
        for nm, pid in zip(names, pids):
            if nm:
                by_name[nm].add(pid)
        rank = {nm: {pid: k + 1 for k, pid in enumerate(sorted(ps))} for nm, ps in by_name.items() if len(ps) > 1}
        labels = [f"{nm} #{rank[nm][pid]}" if nm in rank else nm for nm, pid in zip(names, pids)]
        n_t = len(self.thread_names)
        pid_of = [int(p) for p in self.thread_pid[:n_t]] + [0] * max(0, n_t - len(self.thread_pid))
        same: dict = defaultdict(list)
        for t, nm in enumerate(self.thread_names):
            if nm:
                same[(pid_of[t], labels[t] if t < len(labels) else "", nm)].append(t)
        number = [0] * n_t
        shared = [ts for ts in same.values() if len(ts) > 1]
        if shared:
            roots = np.flatnonzero(self.depth == 0)
            busy = np.bincount(self.thread[roots], weights=self.end[roots] - self.start[roots], minlength=n_t)
            for ts in shared:
                for k, t in enumerate(sorted(ts, key=lambda t: (-busy[t], t))):
                    number[t] = k + 1
        return len(set(labels)), Counter(self.thread_names), labels, number

    @property
    def nbytes(self) -> int:
        """Bytes held by the per-call arrays (what scales with the trace)."""
        per_call = sum(getattr(self, k).nbytes for k in CALL_DTYPES)
        return per_call + self.obj_ptr.nbytes + self.obj_ids.nbytes + self.args_blob.nbytes \
            + self.args_ptr.nbytes + self.args_call.nbytes

    # ------------------------------------------------------------- invariants
    def check(self) -> "Trace":
        """Verify every invariant; raise `TraceInvariantError` on the first violation.

        Local conditions that together imply the global tree structure:
        first-child (i+1 < end[i] ⇒ parent[i+1] = i), next-sibling
        (end[i] < end[parent[i]] ⇒ parent[end[i]] = parent[i]), depth = depth of
        parent + 1, times nested in the parent and siblings not overlapping.
        Flows set without categories (a script that sets ``flow_id``/``flow_from``/``flow_to``
        on a trace) get one unnamed category first (`model_side.fill_flow_cats`).
        """
        fill_flow_cats(self)
        _check(self)
        return self

    # ----------------------------------------------------------------- subset
    def subset(
        self,
        thread: int | str | Iterable[int | str] | None = None,
        time_window: tuple[float, float] | None = None,
        max_depth: int | None = None,
    ) -> "Trace":
        """A valid Trace with the calls of the chosen threads that overlap
        ``time_window`` (µs, closed interval) and have ``depth <= max_depth``.

        Times keep the same origin (not re-based, not clipped) so positions stay
        comparable with the full trace.  The thread table keeps only the chosen
        threads; functions and objects keep their ids.  What else the trace carries is
        cut alike: flows whose both calls are kept, instants inside the window (global
        and process ones whatever the threads), counters and async slices of the chosen
        threads' processes inside the window (`model_side.cut_side`: each series keeps
        its last sample before the window, slices are clipped to it).
        """
        threads = np.arange(self.n_threads)
        pids = None
        window = None
        if thread is not None:
            threads = self._resolve_threads(thread)
            pids = np.unique(self.thread_pid[threads])
        if time_window is not None:
            t0, t1 = float(time_window[0]), float(time_window[1])
            if not t0 <= t1:
                raise ValueError(f"time_window must be (t0, t1) with t0 <= t1, got {time_window}")
            # found by binary search per thread, not a pass: a mapped trace may be huge
            keep = window_calls(self, t0, t1, threads)
            window = (t0, t1)
        else:
            keep = np.ones(len(self), bool) if thread is None else np.isin(self.thread, threads)
        if max_depth is not None:
            if max_depth < 0:
                raise ValueError(f"max_depth must be >= 0, got {max_depth}")
            keep = keep[self.depth[keep] <= max_depth] if window is not None else keep & (self.depth <= max_depth)
        instants = None
        if window is not None:
            instants = (self.instant_ts >= window[0]) & (self.instant_ts <= window[1])
        return self._take(keep, threads, side=cut_side(self, window, pids), instants=instants)

    def _resolve_threads(self, spec) -> np.ndarray:
        if isinstance(spec, (int, np.integer, str)):
            spec = [spec]
        out = []
        for s in spec:
            if isinstance(s, str):
                hits = [i for i, nm in enumerate(self.thread_names) if nm == s]
                if not hits:
                    hits = [i for i, tid in enumerate(self.thread_tid) if str(tid) == s]
                if not hits:
                    raise KeyError(f"no thread named {s!r}; threads: {self.thread_names}")
                out.extend(hits)
            else:
                s = int(s)
                if not 0 <= s < self.n_threads:
                    raise IndexError(f"thread index {s} out of range 0..{self.n_threads - 1}")
                out.append(s)
        return np.unique(np.asarray(out, dtype=np.int32))

    def _take(self, calls: np.ndarray, threads: np.ndarray, side: dict | None = None,
              instants: np.ndarray | None = None) -> "Trace":
        """Keep ``calls`` (a bool mask over the calls, or their ascending indices; closed
        under taking the parent), the instants of the kept threads (and of ``instants``
        when given: a mask over them) and the side tracks ``side`` (default: all of them,
        they index no call).  Beyond a mask, nothing here is as long as the trace."""
        keep = (np.flatnonzero(calls) if calls.dtype == np.bool_ else calls).astype(np.int64)

        def newpos(ix):  # new index of kept calls (of any call: the kept calls before it)
            return np.searchsorted(keep, ix)

        def kept(ix):  # is each call of ``ix`` kept?
            return keep[np.minimum(newpos(ix), keep.size - 1)] == ix if keep.size else np.zeros(np.shape(ix), bool)

        thread_map = np.full(self.n_threads, -1, np.int32)
        thread_map[threads] = np.arange(len(threads), dtype=np.int32)
        par = self.parent[keep]
        new_parent = np.where(par >= 0, newpos(par), -1).astype(np.int32)
        new_end = newpos(self.end_index[keep]).astype(np.int32)
        # objects (CSR) of kept calls
        counts = self.obj_ptr[keep + 1] - self.obj_ptr[keep]
        obj_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        obj_sel = csr_gather(self.obj_ptr, keep)
        # args of kept calls
        a_mask = kept(self.args_call) if len(self.args_call) else np.zeros(0, bool)
        a_keep = np.flatnonzero(a_mask)
        a_counts = (self.args_ptr[1:] - self.args_ptr[:-1])[a_keep]
        args_ptr = np.concatenate([[0], np.cumsum(a_counts)]).astype(np.int64)
        args_blob = self.args_blob[csr_gather(self.args_ptr, a_keep)]
        # flows whose both ends survive
        f_ok = np.zeros(len(self.flow_id), bool)
        if len(self.flow_id):
            f_ok = kept(self.flow_from) & kept(self.flow_to)
        # instants on kept threads, of the processes of kept threads, and global ones
        it = self.instant_thread
        on_thread = it >= 0
        i_ok = (self.instant_scope == ord("g")) | (~on_thread & np.isin(self.instant_pid, self.thread_pid[threads]))
        i_ok[on_thread] = thread_map[it[on_thread]] >= 0
        if instants is not None:
            i_ok &= instants
        meta = dict(self.meta)
        meta["subset_of"] = meta.get("source", "")
        return Trace(
            func=self.func[keep],
            start=self.start[keep],
            end=self.end[keep],
            depth=self.depth[keep],
            parent=new_parent,
            end_index=new_end,
            thread=thread_map[self.thread[keep]],
            kind=self.kind[keep],
            obj_ptr=obj_ptr,
            obj_ids=self.obj_ids[obj_sel],
            function_names=self.function_names,
            function_files=self.function_files,
            function_lines=self.function_lines,
            function_cats=self.function_cats,
            function_paths=self.function_paths,
            thread_pid=self.thread_pid[threads],
            thread_tid=self.thread_tid[threads],
            thread_names=[self.thread_names[t] for t in threads],
            thread_sort=self.thread_sort[threads],
            process_names=[self.process_names[t] for t in threads],
            object_names=self.object_names,
            instant_ts=self.instant_ts[i_ok],
            instant_name=self.instant_name[i_ok],
            instant_thread=np.where(it[i_ok] >= 0, thread_map[np.maximum(it[i_ok], 0)], -1).astype(np.int32),
            instant_scope=self.instant_scope[i_ok],
            instant_pid=self.instant_pid[i_ok],
            instant_names=self.instant_names,
            flow_id=self.flow_id[f_ok],
            flow_from=newpos(self.flow_from[f_ok]).astype(np.int32),
            flow_to=newpos(self.flow_to[f_ok]).astype(np.int32),
            flow_cat=self.flow_cat[f_ok],
            flow_cat_names=self.flow_cat_names,
            args_call=newpos(self.args_call[a_keep]).astype(np.int32),
            args_ptr=args_ptr,
            args_blob=args_blob,
            meta=meta,
            **(self.side_tracks() if side is None else side),
        )

    def side_tracks(self) -> dict:
        """The counters and async slices as keyword arguments of `Trace`: they index no call
        (only their own tables), so a subset of the calls keeps them whole."""
        return {k: getattr(self, k) for k in SIDE_FIELDS}


def csr_gather(ptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Indices of the CSR entries of ``rows`` (in row order), vectorized."""
    lo = ptr[rows]
    cnt = ptr[rows + 1] - lo
    total = int(cnt.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    starts = np.repeat(lo - np.concatenate([[0], np.cumsum(cnt)[:-1]]), cnt)
    return starts + np.arange(total, dtype=np.int64)


def _fail(msg: str):
    raise TraceInvariantError(msg)



def _check_calls(t: Trace, n: int, nf: int, nt: int) -> None:
    """The per-call invariants: one numba pass (`kernels.tree.first_bad_call`: the same local
    conditions); only when it finds a violation, the numpy passes below say which, in words
    (about 20 passes over every array: 0.5 s at 1.5M calls, most of a sampled file's load)."""
    from .kernels.tree import BAD_CALL, first_bad_call

    code, i = first_bad_call(t.func, t.start, t.end, t.depth, t.parent, t.end_index, t.thread, t.kind, nf, nt,
                             len(KIND_NAMES), np.inf)
    if code == 0:
        return
    _explain_bad_call(t, n, nf, nt)
    _fail(f"call {i}: {BAD_CALL[int(code)]}")


def _explain_bad_call(t: Trace, n: int, nf: int, nt: int) -> None:
    """The per-call invariants in numpy, each violation in its own words (`_check_calls`)."""
    idx = np.arange(n, dtype=np.int64)
    if t.func.min() < 0 or t.func.max() >= nf:
        i = _first((t.func < 0) | (t.func >= nf))
        _fail(f"call {i}: func {t.func[i]} outside the function table (0..{nf - 1})")
    if t.thread.min() < 0 or t.thread.max() >= nt:
        i = _first((t.thread < 0) | (t.thread >= nt))
        _fail(f"call {i}: thread {t.thread[i]} outside the thread table (0..{nt - 1})")
    if np.any(np.diff(t.thread) < 0):
        i = _first(np.diff(t.thread) < 0) + 1
        _fail(f"call {i}: threads not contiguous (thread {t.thread[i]} after {t.thread[i - 1]})")
    if t.kind.max() >= len(KIND_NAMES):
        _fail(f"call {_first(t.kind >= len(KIND_NAMES))}: kind out of range")
    if not (np.all(np.isfinite(t.start)) and np.all(np.isfinite(t.end))):
        _fail(f"call {_first(~(np.isfinite(t.start) & np.isfinite(t.end)))}: non-finite time")
    if np.any(t.end < t.start):
        _fail(f"call {_first(t.end < t.start)}: end < start")
    p = t.parent.astype(np.int64)
    if np.any((p < -1) | (p >= idx)):
        _fail(f"call {_first((p < -1) | (p >= idx))}: parent must be -1 or an earlier call")
    has_p = p >= 0
    pp = np.where(has_p, p, 0)
    if np.any(has_p & (t.thread[pp] != t.thread)):
        _fail(f"call {_first(has_p & (t.thread[pp] != t.thread))}: parent on another thread")
    exp_depth = np.where(has_p, t.depth[pp].astype(np.int64) + 1, 0)
    if np.any(t.depth != exp_depth):
        i = _first(t.depth != exp_depth)
        _fail(f"call {i}: depth {t.depth[i]} but parent depth implies {exp_depth[i]}")
    e = t.end_index.astype(np.int64)
    rng = t.thread_ranges()
    thread_end = rng[t.thread, 1]
    if np.any((e <= idx) | (e > thread_end)):
        i = _first((e <= idx) | (e > thread_end))
        _fail(f"call {i}: end_index {e[i]} outside ({i}, {thread_end[i]}]")
    # first child: i+1 < e[i] => parent[i+1] == i
    nxt = np.minimum(idx + 1, n - 1)
    bad = (idx + 1 < e) & (p[nxt] != idx)
    if np.any(bad):
        i = _first(bad)
        _fail(f"call {i}: subtree [{i}, {e[i]}) but call {i + 1} has parent {p[i + 1]}")
    # next sibling: e[i] < limit => parent[e[i]] == parent[i]
    limit = np.where(has_p, e[pp], thread_end)
    if np.any(has_p & (e > limit)):
        i = _first(has_p & (e > limit))
        _fail(f"call {i}: subtree ends at {e[i]} past its parent's end {limit[i]}")
    sib = np.minimum(e, n - 1)
    bad = (e < limit) & (p[sib] != p)
    if np.any(bad):
        i = _first(bad)
        _fail(f"call {i}: call {e[i]} right after its subtree is not its sibling")
    # times: nested in parent, siblings ordered and not overlapping
    if np.any(has_p & ((t.start < t.start[pp]) | (t.end > t.end[pp]))):
        i = _first(has_p & ((t.start < t.start[pp]) | (t.end > t.end[pp])))
        _fail(f"call {i} [{t.start[i]}, {t.end[i]}] not inside its parent {p[i]} "
              f"[{t.start[p[i]]}, {t.end[p[i]]}]")
    bad = (e < limit) & (t.start[sib] < t.end)
    if np.any(bad):
        i = _first(bad)
        _fail(f"call {i} ends at {t.end[i]} after its next sibling {e[i]} starts at {t.start[e[i]]}")

def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def length_mismatch(t: Trace) -> str | None:
    """The first table of ``t`` whose length disagrees with the others, as a message: the per-call
    arrays against ``len(func)``, the function tables against ``function_names``, the thread
    tables against ``thread_pid``; None when all agree (`Trace.check`, `io.native.validate_trace`)."""
    n, nf, nt = len(t), len(t.function_names), t.thread_pid.shape[0]
    for name in CALL_DTYPES:
        if getattr(t, name).shape[0] != n:
            return f"{name} has length {getattr(t, name).shape[0]}, expected {n} (len(func))"
    for name in ("function_files", "function_cats", "function_paths"):
        if len(getattr(t, name)) != nf:
            return f"{name} has {len(getattr(t, name))} entries, expected {nf}"
    if t.function_lines.shape[0] != nf:
        return f"function_lines has {t.function_lines.shape[0]} entries, expected {nf}"
    for name in ("thread_tid", "thread_sort"):
        if getattr(t, name).shape[0] != nt:
            return f"{name} has {getattr(t, name).shape[0]} entries, expected {nt}"
    for name in ("thread_names", "process_names"):
        if len(getattr(t, name)) != nt:
            return f"{name} has {len(getattr(t, name))} entries, expected {nt}"
    return None


def flow_instant_mismatch(t: Trace, n: int, nt: int) -> str | None:
    """The first flow or instant table of ``t`` that disagrees, as a message: flow_from/flow_to/
    flow_cat against ``flow_id``'s length, a flow end outside the ``n`` calls, a flow category
    outside its names, an instant table against ``instant_ts``'s length, an instant's name or
    thread (-1: none) outside its table (``nt`` threads); None when all agree (`Trace.check`,
    `io.native.validate_trace`)."""
    for name in ("flow_from", "flow_to"):
        a = getattr(t, name)
        if a.shape[0] != t.flow_id.shape[0]:
            return f"{name} length differs from flow_id"
        if a.size and (a.min() < 0 or a.max() >= n):
            return f"{name} refers to a call outside 0..{n - 1}"
    if t.flow_cat.shape[0] != t.flow_id.shape[0]:
        return "flow_cat length differs from flow_id"
    if t.flow_cat.size and (t.flow_cat.min() < 0 or t.flow_cat.max() >= len(t.flow_cat_names)):
        return "flow_cat outside flow_cat_names"
    ni = t.instant_ts.shape[0]
    for name in ("instant_name", "instant_thread", "instant_scope", "instant_pid"):
        if getattr(t, name).shape[0] != ni:
            return f"{name} length differs from instant_ts"
    if ni and (t.instant_name.min() < 0 or t.instant_name.max() >= len(t.instant_names)):
        return "instant_name outside instant_names"
    if ni and (t.instant_thread.min() < -1 or t.instant_thread.max() >= nt):
        return "instant_thread outside the thread table"
    return None


def _check(t: Trace) -> None:
    n = len(t)
    for name, dt in ARRAY_DTYPES.items():
        a = getattr(t, name)
        if not isinstance(a, np.ndarray):
            _fail(f"{name} is {type(a).__name__}, not a numpy array")
        if a.dtype != dt:
            _fail(f"{name} has dtype {a.dtype}, expected {np.dtype(dt)}")
        if a.ndim != 1:
            _fail(f"{name} must be 1-D, has shape {a.shape}")
    problem = length_mismatch(t)
    if problem:
        _fail(problem)
    nf, nt = len(t.function_names), t.thread_pid.shape[0]
    # objects CSR
    if t.obj_ptr.shape[0] != n + 1:
        _fail(f"obj_ptr has length {t.obj_ptr.shape[0]}, expected {n + 1}")
    # (non-decreasing from 0 to 0: all zeros, one pass that makes no array; a trace without
    # objects is the common case, and np.diff of its n + 1 offsets made 9 bytes a call)
    if t.obj_ptr[0] != 0 or t.obj_ptr[-1] != t.obj_ids.shape[0] or \
            (np.any(t.obj_ptr[1:] < t.obj_ptr[:-1]) if t.obj_ids.shape[0] else t.obj_ptr.any()):
        _fail("obj_ptr must start at 0, be non-decreasing and end at len(obj_ids)")
    if t.obj_ids.size and (t.obj_ids.min() < 0 or t.obj_ids.max() >= len(t.object_names)):
        _fail(f"obj_ids out of range 0..{len(t.object_names) - 1}")
    if n == 0:
        return
    _check_calls(t, n, nf, nt)
    # flows, instants, args
    problem = flow_instant_mismatch(t, n, nt)
    if problem:
        _fail(problem)
    check_side(t, nt, _fail)
    na = t.args_call.shape[0]
    if t.args_ptr.shape[0] != na + 1 or t.args_ptr[0] != 0 or t.args_ptr[-1] != t.args_blob.shape[0]:
        _fail("args_ptr must have len(args_call)+1 entries, start at 0 and end at len(args_blob)")
    if np.any(t.args_ptr[1:] < t.args_ptr[:-1]):
        _fail("args_ptr must be non-decreasing")
    if na and (np.any(t.args_call[1:] <= t.args_call[:-1]) or t.args_call[0] < 0 or t.args_call[-1] >= n):
        _fail("args_call must be strictly increasing call indices")

