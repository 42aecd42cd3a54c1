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

from .hooks import BATCH, Hooks, ThreadSlot  # noqa: F401 (the tracer's API)

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
