"""Why did it take this long: the critical path across threads, as one object of arrays.

    >>> cp = tracevis3d.critical_path(trace)
    >>> print(cp.summary())            # "62 % of the wall time on parse_0: ..."
    >>> cp.thread, cp.start, cp.end, cp.call, cp.why      # one entry per segment, in time order

The path walks back from the end of the run: while the current thread runs, the path stays
on it; where the thread waited and a known hand-off woke it, the path jumps to whoever woke
it, at the moment of the release (Perfetto follows wakers along thread states the same way;
HTA's ``critical_path_analysis`` takes the longest path of its graph of CPU operators, GPU
kernels and launch/sync edges).  Its segments tile the run, from its first timestamp T0 to its
last T1, without gaps or overlaps.

**Hand-offs** (`critical_path_handoffs`: SyncTrace's sync objects, thread start, join,
device sync, queues by type, the trace's flow events) wake a *woken interval* of a thread T:
the wait call T was blocked in, or the time before one of its root calls (since T0 or since
its previous root call), by a release on thread U != T at ``tr`` inside it, woken at ``we``,
its end; of several, the release that came last.

**The model** (what "longest" means; the tests' twin builds it): per thread a chain of nodes
(T0, the wake of each woken interval, the release of each hand-off the thread made, T1),
in time order, a thread's wake-ups before its releases at equal times; program-order edges
weigh the time elapsed except the *blocked part* of each woken interval -- from the later
of its start and the thread's own last release inside it, to its end -- which weighs 0 (the
other thread explains it; a thread that releases inside its own wait, as
``Condition.wait``'s ``_release_save`` does, runs until then); a hand-off edge weighs
``we - tr``.  No path weighs more than T1 - T0, and the walk (`kernels.critical_path`) finds
one that does.  At equal timestamps a chain of zero-length hand-offs may bring the walk back
to a thread at the instant it left it; each hand-off is used at most once, so the walk ends.

**Segments** (arrays, time order): ``thread``, ``start``, ``end``, ``call`` (the innermost
call active on the thread; for a hand-off the call it woke), ``why`` (`WHY_NAMES`: running;
waiting with no known waker, in a wait call; hand-off, from ``from_thread`` by
``release_call``, of kind ``handoff_kind`` (`HANDOFF_KINDS`); idle: in no call, with no
known waker).  Running pieces are cut where the innermost call changes, so
``by_function()`` is each function's own time on the path.

Threads whose calls are all a profiler's own span of the recording (PyTorch's
``PyTorch Profiler (0)``, category ``Trace``: `PROFILER_SPAN_CATS`) are left out, as HTA
leaves them out; ``threads`` chooses the threads explicitly.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model import KIND_WAIT, Trace
from .critical_path_handoffs import (HANDOFF, HANDOFF_KINDS, HK_NONE, IDLE, RUNNING, WAITING,  # noqa: F401
                                     WHY_NAMES)  # (re-exported)

#: categories of a profiler's own span over the whole recording (PyTorch writes "PyTorch Profiler (0)")
PROFILER_SPAN_CATS = ("Trace",)


@dataclass(eq=False)
class CriticalPath:
    """The critical path of one trace (see the module docstring).  Per segment k (time order):
    ``thread``, ``start``, ``end``, ``call``, ``why``, ``from_thread``, ``release_call``,
    ``handoff_kind``; ``t_first``/``t_last`` the run's span (T0, T1); ``threads`` the threads
    the path may take; ``n_handoffs_known`` the woken intervals it could use."""

    trace: Trace
    thread: np.ndarray
    start: np.ndarray
    end: np.ndarray
    call: np.ndarray
    why: np.ndarray
    from_thread: np.ndarray
    release_call: np.ndarray
    handoff_kind: np.ndarray
    t_first: float
    t_last: float
    threads: np.ndarray
    n_handoffs_known: int = 0
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.thread.shape[0])

    @property
    def span(self) -> float:
        return float(self.t_last - self.t_first)

    @property
    def duration(self) -> np.ndarray:
        return self.end - self.start

    @property
    def handoffs(self) -> np.ndarray:
        """Rows of the hand-off segments, in time order."""
        return np.flatnonzero(self.why == HANDOFF)

    def __repr__(self) -> str:
        return (f"<CriticalPath {len(self)} segments, {self.handoffs.size} hand-offs, "
                f"{self.span:.0f} µs over {np.unique(self.thread[self.why != HANDOFF]).size} threads>")

    def by_thread(self) -> np.ndarray:
        """µs of the path on each thread (n_threads,): running, waiting and idle there;
        hand-offs are counted apart (`by_why`)."""
        on = self.why != HANDOFF
        return np.bincount(self.thread[on], weights=self.duration[on], minlength=self.trace.n_threads)

    def by_why(self) -> np.ndarray:
        """µs of the path per `WHY_NAMES` entry."""
        return np.bincount(self.why, weights=self.duration, minlength=len(WHY_NAMES))

    def by_function(self, thread: int | None = None) -> np.ndarray:
        """µs of the path with each function the innermost call (n_functions,): its own time
        on the path (running or waiting in it), on ``thread`` or on every thread."""
        m = self.call >= 0
        m &= self.why != HANDOFF
        if thread is not None:
            m &= self.thread == thread
        f = self.trace.func[self.call[m]]
        return np.bincount(f, weights=self.duration[m], minlength=self.trace.n_functions)

    def summary(self, max_threads: int = 6, max_functions: int = 5) -> str:
        """The path's share of the wall time per thread and, on each, per function, as text."""
        from .critical_path_text import summary_text

        return summary_text(self, max_threads, max_functions)


def path_threads(trace: Trace, threads=None) -> np.ndarray:
    """The threads the path may take (bool per thread): ``threads`` (indices or names), else
    every thread with calls except those whose calls are all a profiler's span
    (`PROFILER_SPAN_CATS`)."""
    nt = trace.n_threads
    if threads is not None:
        ok = np.zeros(nt, bool)
        ok[trace._resolve_threads(threads)] = True
        return ok
    has = np.bincount(trace.thread, minlength=nt) > 0
    span_func = np.array([c in PROFILER_SPAN_CATS for c in trace.function_cats], bool)
    if span_func.any():
        other = np.bincount(trace.thread, weights=~span_func[trace.func], minlength=nt)
        has &= other > 0
    return has


def critical_path(trace: Trace, sync=None, threads=None, end=None) -> CriticalPath:
    """The critical path of ``trace`` (see the module docstring); ``sync`` reuses a
    `Synchronisation` of it; ``threads`` the threads it may take (default: `path_threads`);
    ``end``: (thread, time) to walk back from (default: the thread whose last call ends last,
    at that end): the path then covers [T0, time]."""
    from ..kernels.critical_path import backward_walk, innermost_timeline, split_pieces
    from .critical_path_handoffs import woken_intervals
    from .synchronisation import synchronisation

    if not isinstance(trace, Trace):
        raise TypeError(f"critical_path needs a Trace, got {type(trace).__name__}")
    ok = path_threads(trace, threads)
    if len(trace) == 0 or not ok.any():
        raise ValueError("critical_path needs a trace with calls on the threads chosen")
    sync = synchronisation(trace) if sync is None else sync
    on = ok[trace.thread]
    t0 = float(trace.start[on].min())
    t1 = float(trace.end[on].max())
    ranges = trace.thread_ranges()
    lo = np.ascontiguousarray(ranges[:, 0])
    hi = np.where(ok, ranges[:, 1], ranges[:, 0]).astype(np.int64)  # threads left out: no calls
    timeline = innermost_timeline(trace.start, trace.end, lo, hi, t0, t1)
    iv = woken_intervals(trace, sync, ok, t0, timeline)
    if end is None:
        ends = np.where(on, trace.end, -np.inf)
        end_thread = int(trace.thread[int(np.argmax(ends))])  # the first of the threads that end last
    else:
        end_thread = int(trace._resolve_threads(end[0])[0])
        t1 = float(end[1])
        if not ok[end_thread] or not t0 <= t1 <= float(trace.end[on].max()):
            raise ValueError(f"critical_path: end {end!r} is not a chosen thread at a time in "
                             f"[{t0}, {float(trace.end[on].max())}]")
    pieces = backward_walk(iv["ptr"], iv["we"], iv["tr"], iv["from"], end_thread, t0, t1)
    s_t, s_a, s_b, s_c, s_h = split_pieces(*pieces, *timeline)
    cp = _segments(trace, iv, s_t, s_a, s_b, s_c, s_h, t0, t1, ok, end_thread)
    cp.meta["pieces"] = pieces  # (thread, a, b, interval row taken after it): the walk itself
    return cp


def _segments(trace: Trace, iv: dict, s_t, s_a, s_b, s_c, s_h, t0: float, t1: float, ok, end_thread: int):
    """The `CriticalPath` of the split pieces: hand-off segments get their waiter, woken
    call, releaser, release call and kind; the others why they are on the path (idle: in no
    call; waiting: in its own time of a wait call no known hand-off woke; else running)."""
    hand = s_h >= 0
    h = s_h[hand]
    thread = s_t.astype(np.int32)
    thread[hand] = iv["waiter"][h]
    call = s_c.astype(np.int32)
    call[hand] = iv["woken"][h]
    from_thread = np.full(s_t.size, -1, np.int32)
    from_thread[hand] = iv["from"][h]
    release = np.full(s_t.size, -1, np.int32)
    release[hand] = iv["release"][h]
    hkind = np.zeros(s_t.size, np.uint8)
    hkind[hand] = iv["kind"][h]
    woken = np.zeros(len(trace), bool)
    wk = iv["key"]
    woken[wk[wk % 2 == 0] // 2] = True
    c = np.maximum(call, 0)
    why = np.full(s_t.size, RUNNING, np.uint8)
    why[(call >= 0) & (trace.kind[c] == KIND_WAIT) & ~woken[c]] = WAITING
    why[call < 0] = IDLE
    why[hand] = HANDOFF
    return CriticalPath(trace=trace, thread=thread, start=s_a, end=s_b, call=call, why=why, from_thread=from_thread,
                        release_call=release, handoff_kind=hkind, t_first=t0, t_last=t1,
                        threads=np.flatnonzero(ok).astype(np.int32), n_handoffs_known=int(wk.size),
                        meta={"intervals": iv, "end_thread": end_thread})
