"""The per-thread record of the profile hooks: `ThreadSlot` (one traced thread) and `Hooks`
(``sys.setprofile`` / ``threading.setprofile``, batches handed to a sink), shared by the
pure-Python tracer (`live.tracer`) and the compiled one (`live.native_hook`)."""
from __future__ import annotations

import sys
import threading
import time
import weakref

BATCH = 4096


class ThreadSlot:
    """One traced thread: its index in the session's thread table, name and batch list."""

    __slots__ = ("index", "ident", "native_id", "name", "buf", "batches", "thread")

    def __init__(self, index: int, thread: threading.Thread):
        self.index = index
        self.ident = thread.ident
        self.native_id = getattr(thread, "native_id", None) or thread.ident or 0
        self.name = thread.name
        self.thread = weakref.ref(thread)  # not by ident: idents are re-used after a thread ends
        self.buf: list = []
        self.batches = 0


class Hooks:
    """Install/remove the hooks; ``sink(slot, batch)`` receives full batches."""

    def __init__(self, sink, batch: int = BATCH, clock=time.perf_counter_ns):
        self.sink = sink
        self.batch = batch
        self.clock = clock
        self.origin = clock()
        self.slots: list[ThreadSlot] = []
        self._lock = threading.Lock()
        self.handover_lock = threading.Lock()
        self.active = False

    # ------------------------------------------------------------ per thread
    def _slot(self, thread=None) -> ThreadSlot:
        with self._lock:
            s = ThreadSlot(len(self.slots), thread or threading.current_thread())
            self.slots.append(s)
        return s

    def _hand_over(self, slot: ThreadSlot) -> None:
        buf = slot.buf
        if not self.active:
            sys.setprofile(None)  # a thread still running after stop(): stop tracing it
            buf.clear()
            return
        with self.handover_lock:  # once per batch; orders batches with `take_partial`
            batch = buf[:]
            del buf[: len(batch)]
            slot.batches += 1
            self.sink(slot, batch)

    def take_partial(self) -> list:
        """[(slot, events so far)] of every thread's unfinished batch, taken by the sender
        (bounded latency for slow threads).  Call with `handover_lock` held, after taking the
        queue, so that each thread's events stay in order."""
        out = []
        for s in list(self.slots):
            buf = s.buf
            if buf:
                batch = buf[:]
                del buf[: len(batch)]
                out.append((s, batch))
        return out

    def _make_profiler(self):
        slot = self._slot()
        limit, clock, hand_over = self.batch, self.clock, self._hand_over
        buf = slot.buf
        append = buf.append

        def profile(frame, event, arg):
            if event[1] == "_":  # c_call / c_return / c_exception: arg is the C function
                append((event, arg, clock()))
            else:  # call / return
                append((event, frame.f_code, clock()))
            if len(buf) >= limit:
                hand_over(slot)

        return profile

    def _bootstrap(self, frame, event, arg):  # first event of a new thread
        prof = self._make_profiler()
        sys.setprofile(prof)
        prof(frame, event, arg)

    # ------------------------------------------------------------ start/stop
    def start(self) -> None:
        self.active = True
        self._main = self._make_profiler()
        threading.setprofile(self._bootstrap)
        sys.setprofile(self._main)

    def stop(self) -> list:
        """Remove the hooks; returns [(slot, last batch)] of every thread (what is left)."""
        sys.setprofile(None)
        threading.setprofile(None)
        with self.handover_lock:
            self.active = False
            return self.take_partial()

    def release(self, batch) -> None:
        """Nothing to give back (the compiled hook's batches own references)."""

    def refresh_names(self) -> list:
        """Slots whose thread was renamed since we last looked (names are read off the hot path)."""
        changed = []
        for s in self.slots:
            t = s.thread()
            if t is not None and t.name != s.name:
                s.name = t.name
                changed.append(s)
        return changed


#: callables whose calls the profile hooks report as ``c_call`` (what ``sys.setprofile``
#: calls C functions); a class call or a Python function is not one
