"""Raw profile events → protocol records, off the traced threads (the publisher's sender).

A raw event is ``(event name, code object or C function, perf_counter_ns)``; the compiled
profile function's batches (native_hook.py) carry function ids already, and their
conversion is one kernel call (`_convert_native`).  Conversion of raw events is
vectorised per batch: names → ±1 with a dict, objects → function ids with a dict (C methods
bound to instances are keyed by (type, name): they are new objects at every call), then
the exits of calls entered before tracing began are dropped and the open-call stack is
carried to the next batch with prefix sums:

* with ``s`` the running depth change after each event, an exit is unmatched iff it takes
  ``d0 + s`` (``d0``: calls open before the batch) to a new minimum below 0;
* after dropping those, the batch closes ``-min(0, min s)`` calls of the old stack, and an
  enter stays open iff ``s`` never goes below its own value later (suffix minimum).
"""
from __future__ import annotations

import types

import numpy as np

from . import protocol as P

_DELTA = {"call": 1, "c_call": 1, "return": -1, "c_return": -1, "c_exception": -1}


class FunctionTable:
    """Python code objects and C functions → dense function ids with protocol entries."""

    def __init__(self):
        self.by_obj: dict = {}
        self.by_ckey: dict = {}
        self.by_name: dict = {}
        self.entries: list = []   # (name, file, line)
        self.is_c: list = []

    def _add(self, name: str, file: str, line: int, is_c: bool) -> int:
        fid = self.by_name.get(name)
        if fid is None:
            fid = self.by_name[name] = len(self.entries)
            self.entries.append((name, file, line))
            self.is_c.append(is_c)
        return fid

    def id_of(self, obj) -> int:
        if isinstance(obj, types.CodeType):
            name = getattr(obj, "co_qualname", obj.co_name)
            fid = self._add(f"{name} ({obj.co_filename}:{obj.co_firstlineno})", obj.co_filename,
                            obj.co_firstlineno, False)
            self.by_obj[obj] = fid
            return fid
        owner = getattr(obj, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType):
            key = (type(owner), getattr(obj, "__name__", ""))
            fid = self.by_ckey.get(key)
            if fid is not None:
                return fid
        qual = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
        mod = getattr(obj, "__module__", None)
        fid = self._add(f"{mod}.{qual}" if mod and "." not in qual else str(qual), "", -1, True)
        if owner is None or isinstance(owner, types.ModuleType):
            self.by_obj[obj] = fid   # the same object at every call (len, math.sqrt, ...)
        else:
            self.by_ckey[key] = fid  # bound methods are new objects per call
        return fid

    def fid_of(self, obj) -> int:
        """`id_of` with the lookups first (a known object, a known C method of a type)."""
        fid = self.by_obj.get(obj)
        if fid is not None:
            return fid
        owner = getattr(obj, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType):
            fid = self.by_ckey.get((type(owner), getattr(obj, "__name__", "")))
            if fid is not None:
                return fid
        return self.id_of(obj)


class Converter:
    """Batches of raw events of one thread → EVENT_DTYPE records (see module doc)."""

    def __init__(self, origin_ns: int, native=None):
        self.origin = origin_ns
        self.funcs = FunctionTable()
        self.stacks: dict[int, np.ndarray] = {}    # per thread: function ids of the open calls
        self.stack_ts: dict[int, np.ndarray] = {}  # and their record times (ns since origin)
        self.native = native  # the compiled hook's NativeRecorder (its batches), or None
        self._is_c = np.zeros(0, np.int64)

    def _convert_native(self, thread: int, batch) -> np.ndarray:
        """EVENT_DTYPE records of a `native_hook.NativeBatch`: the functions unknown when
        they ran are named (`NativeRecorder.function_ids`), then one kernel call without the
        GIL (`convert_batch`: ids, open-call stack, packing)."""
        native = self.native
        idx, fids = native.function_ids(batch, self.funcs.fid_of)
        if self._is_c.shape[0] != len(self.funcs.is_c):
            self._is_c = np.asarray(self.funcs.is_c, np.int64)
        stack = self.stacks.get(thread)
        if stack is None:
            stack, stack_t, depth = np.zeros(16, np.int64), np.zeros(16, np.int64), 0
        else:
            depth = stack.shape[0]
            stack = np.concatenate([stack, np.zeros(16, np.int64)])
            stack_t = np.concatenate([self.stack_ts[thread], np.zeros(16, np.int64)])
        packed, stack, stack_t, depth = native.k["convert_batch"](
            batch.recs, idx, fids, stack, stack_t, depth, self._is_c, thread, self.origin, P.ENTER, P.EXIT)
        self.stacks[thread] = stack[:depth].copy()
        self.stack_ts[thread] = stack_t[:depth].copy()
        return packed.view(P.EVENT_DTYPE).reshape(-1)

    def _fids(self, objs) -> np.ndarray:
        get = self.funcs.by_obj.get
        fids = np.fromiter((get(o, -1) for o in objs), np.int64, len(objs))
        miss = np.flatnonzero(fids < 0)
        if miss.size:  # mostly C methods bound to an instance: keyed by (type, name)
            fids[miss] = [self.funcs.fid_of(objs[i]) for i in miss.tolist()]
        return fids

    def forget(self, thread: int) -> None:
        """A batch of ``thread`` was dropped unconverted: its open calls are unknown now."""
        self.stacks.pop(thread, None)
        self.stack_ts.pop(thread, None)

    def convert(self, thread: int, batch) -> np.ndarray:
        if len(batch) == 0:
            return np.zeros(0, P.EVENT_DTYPE)
        if self.native is not None and not isinstance(batch, list):
            return self._convert_native(thread, batch)
        evs, objs, stamps = zip(*batch)
        n = len(evs)
        delta = np.fromiter(map(_DELTA.__getitem__, evs), np.int64, n)
        fids = self._fids(objs)
        ts = np.fromiter(stamps, np.int64, n)
        stack = self.stacks.get(thread, np.zeros(0, np.int64))
        stack_t = self.stack_ts.get(thread, np.zeros(0, np.int64))
        d0 = stack.shape[0]
        s = d0 + np.cumsum(delta)
        before = np.concatenate([[min(d0, 0)], np.minimum.accumulate(s)[:-1]])
        before = np.minimum(before, 0)
        keep = ~((delta < 0) & (s < before))  # an exit reaching a new minimum below 0
        if not keep.all():
            delta, fids, ts = delta[keep], fids[keep], ts[keep]
        s = np.cumsum(delta)
        closed = -min(0, int(s.min())) if s.size else 0
        rest = stack[: d0 - closed]
        if s.size:
            suffix = np.minimum.accumulate(s[::-1])[::-1]
            later = np.concatenate([suffix[1:], [np.iinfo(np.int64).max]])
            still_open = (delta > 0) & (s <= later)
            self.stacks[thread] = np.concatenate([rest, fids[still_open]])
            self.stack_ts[thread] = np.concatenate([stack_t[: d0 - closed],
                                                    np.maximum(ts[still_open] - self.origin, 0)])
        return self._records(thread, np.where(delta > 0, P.ENTER, P.EXIT), fids, ts)

    def close_all(self, now_ns: int) -> list:
        """Exit records closing every open call, innermost first: [(thread, records)]."""
        out = []
        for thread, stack in self.stacks.items():
            if stack.size:
                fids = stack[::-1]
                k = fids.shape[0]
                out.append((thread, self._records(thread, np.full(k, P.EXIT), fids, np.full(k, now_ns))))
        self.stacks, self.stack_ts = {}, {}
        return out

    def stack_snapshot(self) -> tuple:
        """The open calls now, for `open_calls` later: O(threads) (a conversion replaces a
        thread's stack arrays, it never changes them)."""
        return dict(self.stacks), dict(self.stack_ts)

    def open_calls(self, snapshot: tuple | None = None) -> np.ndarray:
        """ENTER records of every call open now (or at ``snapshot``; per thread, outermost
        first, at the times they were entered): what a viewer that joins late lacks (the
        protocol's OPEN)."""
        stacks, stack_ts = snapshot or (self.stacks, self.stack_ts)
        parts = []
        for thread, stack in stacks.items():
            if stack.size:
                parts.append(self._records(thread, np.full(stack.shape[0], P.ENTER), stack,
                                           stack_ts[thread] + self.origin))
        return np.concatenate(parts) if parts else np.zeros(0, P.EVENT_DTYPE)

    def _records(self, thread, kinds, fids, stamps) -> np.ndarray:
        r = np.zeros(len(kinds), P.EVENT_DTYPE)
        if len(kinds):
            r["type"] = kinds
            r["func"] = fids
            r["flags"] = np.asarray(self.funcs.is_c, np.uint8)[fids]
            r["thread"] = thread
            r["ts"] = np.maximum(np.asarray(stamps, np.int64) - self.origin, 0)
        return r


def convert_py(batches, funcs: FunctionTable) -> list:
    """Brute-force twin of `Converter.convert` over [(thread, batch)]: a Python stack per
    thread; returns [(thread, [(kind, fid, ts)])] and the final stacks."""
    stacks: dict = {}
    out = []
    for thread, batch in batches:
        st = stacks.setdefault(thread, [])
        rec = []
        for ev, obj, ts in batch:
            fid = funcs.id_of(obj) if funcs.by_obj.get(obj) is None else funcs.by_obj[obj]
            if _DELTA[ev] > 0:
                st.append(fid)
                rec.append((P.ENTER, fid, ts))
            elif st:
                st.pop()
                rec.append((P.EXIT, fid, ts))
        out.append((thread, rec))
    return out, stacks
