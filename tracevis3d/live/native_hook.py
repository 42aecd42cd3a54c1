"""A compiled profile function for the live tracer (CPython's C-level ``sys.setprofile``).

A Python profile hook costs every call of the traced program a Python function call, a
tuple and a clock call, and the publisher's conversion runs in the same process under the
same GIL: on a call-heavy program that is twice VizTracer's C tracer (bench_live.py).  Here
the hook is a numba ``cfunc`` installed with ``PyEval_SetProfile`` (the function
``sys.setprofile`` installs a Python callable through).  Per event it finds the function's
id in a table the sender fills, writes one record of two int64 into its thread's buffer
and returns.  The sender swaps each thread's buffer for its spare every tick (`swap`, a few
stores under the GIL) and converts the full one in one kernel call without the GIL
(`convert_batch`): a sender that released and re-took the GIL for every numpy operation
would wait a switch interval (5 ms) for each against a busy program, and fall behind.

Record ``(head, t)``, ``t`` CLOCK_MONOTONIC in ns (the clock of ``time.perf_counter_ns`` on
Linux), ``head``'s low 3 bits CPython's PyTrace_* code (CALL 0, RETURN 3, C_CALL 4,
C_EXCEPTION 5, C_RETURN 6) and then either ``fid << 4`` (a known function) or ``obj | 8``:
the code object or C function of a function the table does not know yet, whose reference
the record owns until `release` (the sender names it from the live object; a pointer alone
may outlive its object; objects are 16-byte aligned).  A function's key: ``(code, 0)`` for
Python code; ``(PyMethodDef*, type of self)`` for builtin functions and methods (a bound
method is a new object per call, its definition and owner type are not); ``(obj, 1)`` for
any other callable, never stored in the table (one-off objects would fill it).  A full
buffer drops the event and counts it; the program never waits.

Portability: needs CPython on a 64-bit little-endian platform with ``clock_gettime``
(Linux, macOS) and a GIL; the object layouts read here (numpy's array data pointer,
``PyCFunctionObject``) are checked at start-up against live objects, and anything
unexpected makes `available` False (the pure-Python hooks are used then).
"""
from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
import weakref

import numpy as np

from ..kernels.native_layout import (ACTIVE, C_CALL, C_EXCEPTION, C_RETURN, CALL, CAP, CF_TYPE, CLOCK_ID, CM_TYPE,
                                     DROPPED, FIRST_CAP, FN_CLOCK, FN_DECREF, FN_GETCODE, FN_INCREF, GROWTH, HEADER,
                                     MASK, MAX_CAP, NF, OBJECT_FLAG, RECS, RETURN, TAB, TABLE_FIELDS, W, WHAT_BITS)

_compiled = None
_why_not: str | None = None


def _build():
    """The compiled profile function and the sender's kernels (numba; cached on disk)."""
    from ..kernels import native_trace as k

    return dict(profile=k.profile, swap=k.swap, release=k.release, unknown_keys=k.unknown_keys,
                lookup=k.lookup, insert=k.insert, first_of_each=k.first_of_each, convert_batch=k.convert_batch,
                fill_from_table=k.fill_from_table)


def c_function_types() -> tuple:
    """Addresses of ``builtin_function_or_method`` and of its METH_METHOD subtype
    (``builtin_method``: methods taking their defining class, e.g. ``re.Pattern.match``)."""
    import re

    cm = type(re.compile("").match)
    return id(type(len)), id(cm if issubclass(cm, type(len)) else type(len))


def _address(fn) -> int:
    return ctypes.cast(fn, ctypes.c_void_p).value


def _layout_ok() -> str | None:
    """Why the object layouts the profile function reads differ from this process's, or None."""
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        return "not a 64-bit process"
    if sys.implementation.name != "cpython":
        return f"not CPython ({sys.implementation.name})"
    if getattr(sys, "_is_gil_enabled", lambda: True)() is False:
        return "a free-threaded CPython (no GIL)"
    if not hasattr(time, "clock_gettime_ns") or not hasattr(time, "CLOCK_MONOTONIC"):
        return "no clock_gettime on this platform"
    a = np.zeros(4, np.int64)
    if ctypes.c_int64.from_address(id(a) + 16).value != a.ctypes.data:
        return "numpy's array layout differs"
    m = ctypes.c_int64.from_address(id(len) + 24).value
    ml = ctypes.c_void_p.from_address(id(len) + 16).value
    if m != id(sys.modules["builtins"]) or not ml or ctypes.c_char_p.from_address(ml).value != b"len":
        return "PyCFunctionObject's layout differs"
    if ctypes.c_int64.from_address(id(len) + 8).value != id(type(len)):
        return "PyObject's layout differs"
    if any(id(o) & (OBJECT_FLAG | WHAT_BITS) for o in (len, _layout_ok.__code__, a, "".join)):
        return "objects are not 16-byte aligned"
    if sys.byteorder != "little":
        return "a big-endian platform"
    return None


def compiled():
    """The compiled functions, or None (reason in `why_not`)."""
    global _compiled, _why_not
    if _compiled is None and _why_not is None:
        try:
            _why_not = _layout_ok()
            if _why_not is None:
                ctypes.CDLL(None).clock_gettime  # noqa: B018  (present?)
                _compiled = _build()
        except Exception as e:  # numba missing, no clock_gettime, a compile error: use Python hooks
            _why_not = f"{type(e).__name__}: {e}"
    return _compiled


def available() -> bool:
    return compiled() is not None


def why_not() -> str | None:
    compiled()
    return _why_not


def clock_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


class Buffers:
    """One traced thread: its header (the profile function's ``obj``; CPython keeps a
    reference while the function is installed), the buffer being written and a spare."""

    __slots__ = ("hdr", "current", "spare", "dropped_seen", "ended", "retired")

    def __init__(self, template: np.ndarray, cap: int):
        self.hdr = template.copy()
        self.current = np.zeros((cap, NF), np.int64)
        self.spare: np.ndarray | None = None
        self.hdr[RECS] = self.current.ctypes.data
        self.hdr[CAP] = cap
        self.dropped_seen = 0
        self.ended = self.retired = False

    def give_back(self, buf: np.ndarray) -> None:
        """A taken buffer becomes the spare (the larger one is kept)."""
        if self.spare is None or self.spare.shape[0] < buf.shape[0]:
            self.spare = buf


class NativeBatch:
    """The records of one swap: ``recs`` (n, 2) views the thread's buffer, which goes back
    to the thread as its spare on `NativeRecorder.release` (after the objects of unknown
    functions are given back)."""

    __slots__ = ("recs", "buf", "owner", "released")

    def __init__(self, recs, buf, owner):
        self.recs, self.buf, self.owner, self.released = recs, buf, owner, False

    def __len__(self) -> int:
        return self.recs.shape[0]


class NativeRecorder:
    """The threads' buffers, the function table the profile function reads, and the calls
    that install the function."""

    def __init__(self, first_cap: int = FIRST_CAP, max_cap: int = MAX_CAP):
        k = compiled()
        if k is None:
            raise RuntimeError(f"the compiled profile function is not available here: {_why_not}")
        self.k = k
        self.first_cap, self.max_cap = first_cap, max_cap
        api = ctypes.pythonapi
        self._set_profile = api.PyEval_SetProfile
        self._set_profile.argtypes = [ctypes.c_void_p, ctypes.py_object]
        self._set_profile.restype = None
        self.fn_decref = _address(api.Py_DecRef)
        self.c_types = c_function_types()
        t = np.zeros(HEADER, np.int64)
        t[FN_GETCODE] = _address(api.PyFrame_GetCode)
        t[FN_INCREF] = _address(api.Py_IncRef)
        t[FN_DECREF] = self.fn_decref
        t[FN_CLOCK] = _address(ctypes.CDLL(None).clock_gettime)
        t[CLOCK_ID] = time.CLOCK_MONOTONIC
        t[CF_TYPE], t[CM_TYPE] = self.c_types
        t[ACTIVE] = 1
        self.template = t
        self.table = np.full((1 << 12, TABLE_FIELDS), -1, np.int64)
        self.table_count = 0
        self.keep: list = []    # the objects behind the table's pointers stay alive
        self._set_table(self.table)
        self.address = k["profile"].address
        self.threads: list = []  # every thread's buffers: alive while a thread may call the function
        self._warm_up()

    def _warm_up(self) -> None:
        """Load every kernel now (from numba's cache, or compile), not at the first tick:
        meanwhile a busy program would fill its buffer."""
        k, none = self.k, np.zeros((0, NF), np.int64)
        b = Buffers(self.template, 4)
        k["swap"](b.hdr, b.current)
        k["release"](none, self.fn_decref)
        idx, k1, k2, fids, first = k["unknown_keys"](none, *self.c_types, self.table)
        k["fill_from_table"](k1, k2, fids, self.table)
        scratch = np.full((16, TABLE_FIELDS), -1, np.int64)
        k["insert"](scratch, 16, 0, 0)
        k["convert_batch"](none, idx, k1, np.zeros(16, np.int64), np.zeros(16, np.int64), 0, np.zeros(1, np.int64),
                           0, 0, 1, 2)

    # ---------------------------------------------------------------- the table
    def _set_table(self, table: np.ndarray) -> None:
        """Point the template and every thread at ``table``: its address before its mask, so
        that a profile function running in between probes inside the table (a miss at
        worst, which only costs a reference)."""
        self.table = table
        for hdr in [self.template] + [b.hdr for b in getattr(self, "threads", [])]:
            hdr[TAB] = table.ctypes.data
            hdr[MASK] = table.shape[0] - 1

    def add(self, k1: int, k2: int, fid: int, keep) -> None:
        if 2 * (self.table_count + 1) > self.table.shape[0]:
            bigger = np.full((self.table.shape[0] * 2, TABLE_FIELDS), -1, np.int64)
            for a, b, v in self.table[self.table[:, 2] >= 0].tolist():
                self.k["insert"](bigger, a, b, v)
            old = self.table
            self._set_table(bigger)
            del old
        self.k["insert"](self.table, k1, k2, fid)
        self.table_count += 1
        self.keep.append(keep)

    def function_ids(self, batch: NativeBatch, fid_of) -> tuple:
        """(record indices, function ids) of a batch's records that carry an object: looked
        up (the table may know them by now), else named with ``fid_of(obj)`` and added; two
        kernel calls without the GIL, Python only for the functions new in this batch."""
        recs = batch.recs
        idx, k1, k2, fids, first = self.k["unknown_keys"](recs, *self.c_types, self.table)
        if not idx.shape[0]:
            return idx, fids
        obj_at = lambda m: ctypes.cast(int(recs[idx[m], 0]) & ~(OBJECT_FLAG | WHAT_BITS),  # noqa: E731
                                       ctypes.py_object).value
        for m in first.tolist():
            obj = obj_at(m)
            # keep a code object / a C function without self, or the owner's type (never a
            # bound method: it would keep its instance alive)
            self.add(int(k1[m]), int(k2[m]), fid_of(obj), obj if k2[m] == 0 else type(getattr(obj, "__self__", None)))
        if first.shape[0]:
            fids = self.k["fill_from_table"](k1, k2, fids, self.table)
        generic = np.flatnonzero(fids < 0)
        for m in generic.tolist():  # a one-off callable (key (obj, 1)): named record by record
            fids[m] = fid_of(obj_at(m))
        return idx, fids

    # ---------------------------------------------------------------- threads
    def new_thread(self) -> Buffers:
        b = Buffers(self.template, self.first_cap)
        b.hdr[TAB], b.hdr[MASK] = self.table.ctypes.data, self.table.shape[0] - 1
        self.threads.append(b)
        return b

    def install(self, b: Buffers) -> None:
        """The profile function installed in the calling thread, writing into ``b``."""
        self._set_profile(self.address, b.hdr)

    def take(self, b: Buffers) -> NativeBatch | None:
        """The records written since the last take (None: none); the thread continues in its
        spare buffer (4x larger when this one was more than half full)."""
        if b.hdr[W] == 0:
            return None
        cap = b.current.shape[0]
        if not b.hdr[ACTIVE]:  # stopped: the function returns before looking at the buffer
            spare = np.zeros((0, NF), np.int64)
        else:
            want = min(cap * GROWTH, self.max_cap) if 2 * b.hdr[W] > cap else cap
            spare = b.spare if b.spare is not None and b.spare.shape[0] >= want else np.zeros((want, NF), np.int64)
        full, b.current, b.spare = b.current, spare, None
        n = self.k["swap"](b.hdr, spare)
        return NativeBatch(full[:n], full, b)

    def release(self, batch: NativeBatch) -> None:
        """Give back the references of the batch's objects; its buffer becomes the spare."""
        if batch.released:
            return
        batch.released = True
        self.k["release"](batch.recs, self.fn_decref)
        if batch.buf is not None:
            batch.owner.give_back(batch.buf)

    @staticmethod
    def detach(batch: NativeBatch) -> NativeBatch:
        """The batch with its records copied and its buffer given back as the spare (for
        batches that wait in a queue: a buffer is as large as the busiest tick)."""
        out = NativeBatch(batch.recs.copy(), None, batch.owner)
        batch.owner.give_back(batch.buf)
        return out

    def retire(self, b: Buffers) -> None:
        """Free the buffers of an ended thread; its header stays (a stray call, if any, finds
        no room and returns: the capacity goes to 0 before the records)."""
        b.hdr[CAP] = 0
        b.hdr[W] = 0
        b.current = np.zeros((0, NF), np.int64)
        b.hdr[RECS] = b.current.ctypes.data
        b.spare = None
        b.retired = True

    def dropped(self, b: Buffers) -> int:
        """Events dropped by a full buffer since the last call."""
        d = int(b.hdr[DROPPED])
        new, b.dropped_seen = d - b.dropped_seen, d
        return new

    def deactivate(self) -> None:
        """Every thread's function returns at once from now on (it cannot be removed from
        other threads on Python 3.11); the records stay until taken."""
        for b in self.threads:
            b.hdr[ACTIVE] = 0


class NativeHooks:
    """`tracer.Hooks`' interface over the compiled profile function: threads get buffers on
    their first event (``threading.setprofile`` installs a Python bootstrap that installs the
    compiled function and records the event that called it); the sender takes every
    thread's records with `take_partial` at each tick.  Batches are `NativeBatch`es whose
    records may own references: whoever takes a batch must `release` it."""

    native = True

    def __init__(self, sink=None, batch: int = 0, clock=None, max_events: int | None = None):
        from .hooks import ThreadSlot

        self._ThreadSlot = ThreadSlot
        cap = max(1, int(max_events)) if max_events else MAX_CAP
        self.native_rec = NativeRecorder(first_cap=min(FIRST_CAP, cap), max_cap=min(MAX_CAP, cap))
        self.sink = sink
        self.clock = clock_ns
        self.origin = clock_ns()
        self.slots: list = []
        self.buffers: list = []
        self.handover_lock = threading.Lock()
        self._lock = threading.Lock()
        self.active = False
        self.dropped_in_buffers = 0
        self.lost: set = set()

    def _install_here(self) -> Buffers:
        b = self.native_rec.new_thread()
        with self._lock:
            slot = self._ThreadSlot(len(self.slots), threading.current_thread())
            self.slots.append(slot)
            self.buffers.append(b)
        self.native_rec.install(b)
        return b

    def _bootstrap(self, frame, event, arg):  # first event of a new thread
        if not self.active:
            sys.setprofile(None)
            return
        b = self._install_here()
        # the event that brought us here: record it through the same function
        what = {"call": CALL, "return": RETURN, "c_call": C_CALL, "c_exception": C_EXCEPTION,
                "c_return": C_RETURN}.get(event)
        if what is not None:
            _PROFILE_CTYPE(self.native_rec.address)(b.hdr, frame, what, arg)

    def start(self) -> None:
        other = sys.getprofile()
        if other is not None:  # installing ours would silently replace it in this thread
            raise RuntimeError(f"a profiler is already running in this thread ({other!r}); "
                               "stop it before tracing live")
        self.active = True
        threading.setprofile(self._bootstrap)
        self._install_here()
        if hasattr(os, "register_at_fork"):  # a forked child has no sender: it stops recording
            me = weakref.ref(self)
            os.register_at_fork(after_in_child=lambda: (lambda h: h and h._forked())(me()))

    def _forked(self) -> None:
        """In a child process made by fork: tracing stops there (its buffers would fill and
        never be sent; child processes are not traced)."""
        self.active = False
        self.native_rec.deactivate()
        sys.setprofile(None)
        threading.setprofile(None)

    def take_partial(self) -> list:
        """[(slot, NativeBatch)] of every thread with new records (call with `handover_lock`).
        A thread seen ended at the previous call has its buffers retired now (its last
        records were taken then): a program that starts thousands of short threads keeps a
        16-int header per thread, not two buffers."""
        out = []
        for slot, b in zip(list(self.slots), list(self.buffers)):
            if b.retired:
                continue
            lost = self.native_rec.dropped(b)
            if lost:  # after this batch, events are missing: its open calls are unknown
                self.dropped_in_buffers += lost
                self.lost.add(slot.index)
            batch = self.native_rec.take(b)
            if batch is not None:
                out.append((slot, batch))
            if b.ended:
                self.native_rec.retire(b)
            else:
                t = slot.thread()
                b.ended = t is None or not t.is_alive()
        return out

    def stop(self) -> list:
        sys.setprofile(None)
        threading.setprofile(None)
        with self.handover_lock:
            self.active = False
            self.native_rec.deactivate()
            return self.take_partial()

    def release(self, batch) -> None:
        self.native_rec.release(batch)

    def refresh_names(self) -> list:
        from .hooks import Hooks

        return Hooks.refresh_names(self)


_PROFILE_CTYPE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.py_object, ctypes.c_int, ctypes.py_object)
