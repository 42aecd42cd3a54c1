"""Profile hooks that record the calls of every thread into per-thread batches.

The hot path (one call per Python/C call and return) only appends a tuple to the thread's
own list; a full list is handed to ``sink(thread_slot, batch)`` which must not block (the
publisher's bounded queue drops and counts).  Python 3.11: ``sys.setprofile`` in the thread
that starts, ``threading.setprofile`` for threads started later (each installs its own
closure on its first event).  Python ≥ 3.12: ``sys.monitoring`` (`MonitoringHooks`, chosen
by `make_hooks`), the same raw events.
"""
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
C_CALLABLES = (type(len), type(str.split), type("".split.__call__), type(dict.__dict__["fromkeys"]),
               type(object.__init__))


class MonitoringHooks(Hooks):
    """The same events through ``sys.monitoring`` (PEP 669, Python ≥ 3.12), as the profiler
    tool: PY_START, PY_RESUME and PY_THROW are ``call``; PY_RETURN, PY_YIELD and PY_UNWIND
    are ``return`` (a generator's resume and yield, as ``setprofile`` reports them); CALL of
    a C callable is ``c_call``, its C_RETURN / C_RAISE ``c_return`` / ``c_exception`` (the
    same type test on both sides keeps them balanced; class calls are skipped on both).
    Events are global to the process: every thread appends to its own list (looked up in a
    ``threading.local``), threads marked ``_tv3d_untraced`` (the publisher's sender) are
    skipped.  Events raised inside a callback are not monitored (CPython does not re-enter)."""

    TOOL_NAME = "tracevis3d"

    def start(self) -> None:
        mon = sys.monitoring
        self.tool = mon.PROFILER_ID
        try:
            mon.use_tool_id(self.tool, self.TOOL_NAME)
        except ValueError:
            raise RuntimeError(f"sys.monitoring's profiler slot is taken by {mon.get_tool(self.tool)!r} "
                               "(another profiler or debugger is running)") from None
        self.active = True
        local = threading.local()
        limit, clock, hand_over, new_slot = self.batch, self.clock, self._hand_over, self._slot
        registered, get_ident = threading._active, threading.get_ident  # noqa: SLF001

        def emit(event, obj):
            d = local.__dict__
            buf = d.get("buf")
            if buf is None:
                if "buf" in d:  # a thread we do not trace
                    return
                # not through current_thread(): during a thread's bootstrap (before it is
                # registered) that would make a dummy Thread; those first events are skipped
                # as `threading.setprofile` skips them (their exits are dropped as unmatched)
                thread = registered.get(get_ident())
                if thread is None:
                    return
                if getattr(thread, "_tv3d_untraced", False):
                    d["buf"] = None
                    return
                slot = new_slot(thread)
                d["slot"], d["buf"] = slot, slot.buf
                buf = slot.buf
            buf.append((event, obj, clock()))
            if len(buf) >= limit:
                hand_over(d["slot"])

        def on_enter(code, offset, *_):
            emit("call", code)

        def on_exit(code, offset, *_):
            emit("return", code)

        def on_call(code, offset, func, arg0):
            if isinstance(func, C_CALLABLES):
                emit("c_call", func)

        def on_c_return(code, offset, func, arg0):
            if isinstance(func, C_CALLABLES):
                emit("c_return", func)

        def on_c_raise(code, offset, func, arg0):
            if isinstance(func, C_CALLABLES):
                emit("c_exception", func)

        ev = mon.events
        self._callbacks = {ev.PY_START: on_enter, ev.PY_RESUME: on_enter, ev.PY_THROW: on_enter,
                           ev.PY_RETURN: on_exit, ev.PY_YIELD: on_exit, ev.PY_UNWIND: on_exit,
                           ev.CALL: on_call, ev.C_RETURN: on_c_return, ev.C_RAISE: on_c_raise}
        mask = 0
        for event, fn in self._callbacks.items():
            mon.register_callback(self.tool, event, fn)
            mask |= event
        mon.set_events(self.tool, mask)

    def stop(self) -> list:
        mon = sys.monitoring
        mon.set_events(self.tool, 0)
        for event in self._callbacks:
            mon.register_callback(self.tool, event, None)
        mon.free_tool_id(self.tool)
        with self.handover_lock:
            self.active = False
            return self.take_partial()

    def _hand_over(self, slot) -> None:
        if not self.active:  # events after stop(): nothing more to send
            slot.buf.clear()
            return
        with self.handover_lock:
            batch = slot.buf[:]
            del slot.buf[: len(batch)]
            slot.batches += 1
            self.sink(slot, batch)


HOOK_KINDS = ("native", "monitoring", "setprofile")


def make_hooks(sink, batch: int = BATCH, clock=time.perf_counter_ns, native: bool = True,
               max_events: int | None = None):
    """The hooks for this interpreter, or those named by ``TRACEVIS3D_LIVE_HOOKS``:

    * ``native``: the compiled profile function (native_hook.py), the default wherever it is
      available (CPython, 64 bit, clock_gettime, numba) and ``native`` is true; batches are
      drained by the caller's `take_partial` (no ``sink`` calls); ``max_events`` bounds each
      thread's buffer.  On Python ≥ 3.12 CPython runs it from its own ``sys.monitoring``
      events (the legacy profile bridge), 4x faster than Python ``sys.monitoring`` callbacks
      on bench/live_workload.py;
    * ``monitoring``: `MonitoringHooks` (Python ``sys.monitoring`` callbacks, PEP 669), the
      default on Python ≥ 3.12 without the compiled function;
    * ``setprofile``: the Python ``setprofile`` `Hooks` (the fallback below 3.12).
    """
    import os

    kind = os.environ.get("TRACEVIS3D_LIVE_HOOKS", "").strip().lower()
    if kind and kind not in HOOK_KINDS:
        raise ValueError(f"TRACEVIS3D_LIVE_HOOKS={kind!r}: expected one of {', '.join(HOOK_KINDS)}")
    if kind in ("", "native") and native:
        from . import native_hook

        if native_hook.available():
            return native_hook.NativeHooks(sink, batch, max_events=max_events)
        if kind:
            sys.stderr.write(f"tracevis3d.live: no compiled hook here ({native_hook.why_not()}); "
                             "using the Python hooks\n")
    if kind == "monitoring" or (kind != "setprofile" and sys.version_info >= (3, 12)):
        if sys.version_info < (3, 12):
            raise ValueError("TRACEVIS3D_LIVE_HOOKS=monitoring needs Python ≥ 3.12 (sys.monitoring)")
        return MonitoringHooks(sink, batch, clock)
    return Hooks(sink, batch, clock)
