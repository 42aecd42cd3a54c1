"""Growing call storage of the live subscriber and its materialised `Trace` view.

Each thread owns capacity-doubling arrays (amortised O(1) append) filled in pre-order by
`kernels.live.apply_thread_events`.  The Trace model needs all calls in ONE set of arrays,
threads one after another; `TraceView.materialise` keeps such global arrays (capacity
doubling too) and per poll copies only

* the calls new since the last poll, when the blocks before them did not move;
* whole blocks of the threads that come after a thread that grew (their offset moved);
* the end / end_index of the calls that were open at the last poll (O(open calls)).

So a poll costs O(new calls + open calls) when only the last-announced threads grow (one
thread, or a program whose older threads have finished), and O(calls of the threads after
the first one that grew) in general -- a memcpy, never a rebuild of the tree.
Open calls get the provisional end "now" (the session's latest timestamp) and
end_index = the end of their thread's block, so every view passes `Trace.check()`.
"""
from __future__ import annotations

import numpy as np

from ..kinds import working_waits
from ..model import KIND_OTHER, Trace

_COLS = {"func": np.int32, "start": np.float64, "end": np.float64, "depth": np.int32,
         "parent": np.int32, "endi": np.int32}


def grow_rows(a: np.ndarray, need: int, fill=None) -> np.ndarray:
    """``a`` with room for ``need`` rows (capacity doubling; the rows kept, the new ones
    unset, or ``fill``)."""
    if need <= a.shape[0]:
        return a
    b = np.empty((max(need, 2 * a.shape[0], 64),) + a.shape[1:], a.dtype)
    b[: a.shape[0]] = a
    if fill is not None:
        b[a.shape[0]:] = fill
    return b


class ThreadCalls:
    """The calls of one thread (local indices), the open-call stack and the thread's names."""

    def __init__(self, pid: int, tid: int, name: str, process: str, session: int):
        self.pid, self.tid, self.name, self.process, self.session = pid, tid, name, process, session
        #: the program's threads this record holds, one after another: more than one where a
        #: thread past the session's quota took the record of a finished one of its kind
        self.members = 1
        self.n = 0
        self.sp = 0
        self.last_ts = -np.inf
        self.stack = np.zeros(16, np.int32)
        for k, dt in _COLS.items():
            setattr(self, k, np.zeros(16, dt))

    def reserve(self, enters: int) -> None:
        need = self.n + enters
        if need > self.func.shape[0]:
            for k in _COLS:
                setattr(self, k, grow_rows(getattr(self, k), need))
        self.stack = grow_rows(self.stack, self.sp + enters)

    @property
    def nbytes(self) -> int:
        return sum(getattr(self, k).nbytes for k in _COLS) + self.stack.nbytes


class TraceView:
    """Global Trace arrays kept in step with the per-thread stores (see module doc)."""

    def __init__(self):
        self.n = 0
        self.cols = {k: np.zeros(64, dt) for k, dt in
                     (("func", np.int32), ("start", np.float64), ("end", np.float64),
                      ("depth", np.int32), ("parent", np.int32), ("end_index", np.int32),
                      ("thread", np.int32), ("kind", np.uint8))}
        self.obj_ptr = np.zeros(65, np.int64)
        self.offset: list[int] = []
        self.copied: list[int] = []
        self.prev_open: list[np.ndarray] = []
        self.copied_calls = 0  # total calls copied (for the cost accounting in bench/tests)

    def _reserve(self, n: int) -> None:
        if n > self.cols["func"].shape[0]:
            for k in self.cols:
                self.cols[k] = grow_rows(self.cols[k], n)
        if n + 1 > self.obj_ptr.shape[0]:
            self.obj_ptr = np.zeros(max(n + 1, 2 * self.obj_ptr.shape[0]), np.int64)

    def materialise(self, threads: list, now: list, fkind: np.ndarray) -> None:
        """Bring the global arrays up to date; ``now[t]``: provisional end of thread t's open calls."""
        while len(self.offset) < len(threads):
            self.offset.append(-1)
            self.copied.append(0)
            self.prev_open.append(np.zeros(0, np.int32))
        total = sum(t.n for t in threads)
        self._reserve(total)
        c = self.cols
        off = 0
        for ti, T in enumerate(threads):
            lo = self.copied[ti] if self.offset[ti] == off else 0
            hi = T.n
            if hi > lo:
                g = slice(off + lo, off + hi)
                c["func"][g] = T.func[lo:hi]
                c["start"][g] = T.start[lo:hi]
                c["end"][g] = T.end[lo:hi]
                c["depth"][g] = T.depth[lo:hi]
                par = T.parent[lo:hi]
                c["parent"][g] = np.where(par >= 0, par + off, -1)
                c["end_index"][g] = T.endi[lo:hi] + off  # open ones fixed below
                c["thread"][g] = ti
                c["kind"][g] = fkind[T.func[lo:hi]]
                self.copied_calls += hi - lo
            prev = self.prev_open[ti]
            prev = prev[prev < lo] if lo else prev[:0]
            if prev.size:  # closed since the last poll (or still open: overwritten below)
                c["end"][off + prev] = T.end[prev]
                c["end_index"][off + prev] = T.endi[prev] + off
            opened = T.stack[: T.sp].copy()
            if opened.size:
                c["end"][off + opened] = now[ti]
                c["end_index"][off + opened] = off + T.n
            self.prev_open[ti] = opened
            self.offset[ti] = off
            self.copied[ti] = T.n
            off += T.n
        self.n = total

    def trace(self, threads: list, functions, meta: dict) -> Trace:
        """A Trace over the global arrays (views: valid until the next materialise)."""
        n = self.n
        c = {k: v[:n] for k, v in self.cols.items()}
        # a call named like a wait that works is not a wait, as the loaders say (`kinds.working_waits`:
        # recomputed each time, an open call's subtree still grows)
        kind = c["kind"].copy()
        kind[working_waits(kind, c["start"], c["end"], c["end_index"])] = KIND_OTHER
        c["kind"] = kind
        names, files, lines, paths = functions
        return Trace(
            func=c["func"], start=c["start"], end=c["end"], depth=c["depth"], parent=c["parent"],
            end_index=c["end_index"], thread=c["thread"], kind=c["kind"],
            obj_ptr=self.obj_ptr[: n + 1], obj_ids=np.zeros(0, np.int32),
            function_names=list(names), function_files=list(files),
            function_lines=np.array(lines, np.int32), function_cats=[""] * len(names),
            function_paths=list(paths),
            thread_pid=np.array([t.pid for t in threads], np.int64),
            thread_tid=np.array([t.tid for t in threads], np.int64),
            thread_names=[t.name for t in threads],
            thread_sort=np.arange(len(threads), dtype=np.int32),
            process_names=[t.process for t in threads], meta=meta)
