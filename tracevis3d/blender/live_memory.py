"""The memory view growing as the program runs (issue 71, item 4): memray's live mode
(``python -m memray run --live-remote --live-port PORT program.py``) read by
`io.memray_live.MemrayLiveStream`, the figure rebuilt from what has arrived by the same code as
``render-memory`` (`memory_tasks.memory_build_steps`: `layout.memory.memory_layout`, then the
scene written into the collection, replacing the previous figure's objects).

`LiveMemoryView.poll` does bounded work and is what a timer calls in Blender and a loop calls
headless (``bpy.app.timers`` never fire in background mode): it takes note of the bytes the
stream's receiving thread has read (that thread keeps the socket drained, so memray's tracker,
which blocks when its socket is full, never waits on the viewer), advances a rebuild
already under way by one short step (its scan and layout run in a worker thread), and starts the
next rebuild when one is due.  Rebuilds are rate-bounded: the next starts no earlier than
``max(rebuild_seconds, last rebuild's wall time / COST_SHARE)`` after the last one started, so
however long the capture grows (each rebuild reads every byte received: memray's records are
delta-coded) the view spends at most about `COST_SHARE` of the time rebuilding; once the stream
ends, the last rebuild comes at once and draws every record.

Beside the live call feed (a `live.session.LiveSession` passed as ``calls``): each rebuild takes
a snapshot of the calls received so far and draws them above the bands on the capture's time
axis (`layout.memory.align_calls`), aligned on the two wall clocks (the feed's HELLO carries
the program's clock origin in ns since the epoch, memray's header its start in ms since the
epoch), so a presenter sees which calls held the memory as the program runs.  What is drawn
above the bands is the memory view's own call strip (the busiest thread, `STRIP_DEPTH` levels),
not the chunked live icicle of `live_view.LiveView`.  Both tracers use CPython's profile hook
(one per thread on 3.11: the last installed wins), so memray's sites are wrong beside the live
tracer; its figures and clock are not (docs/live-memory.md).
"""
from __future__ import annotations

import time

import bpy

from ..jobs import FAILED, Job
from .memory_tasks import memory_build_steps

#: share of the time the view may spend rebuilding: the next rebuild waits the last one's wall
#: time divided by this
COST_SHARE = 0.5


def wall_clock_offset_us(cap, calls) -> float | None:
    """The live feed's time (µs since its clock origin) at the capture's 0: memray's start (ms
    since the epoch, its header) on the feed's clock (its HELLO's origin, ns since the epoch, kept
    as µs in ``meta["clock_origin"]``); None when either is unknown."""
    origin_us = float(calls.meta.get("clock_origin") or 0.0)
    if not origin_us or not cap.start_epoch_ms:
        return None
    return 1000.0 * float(cap.start_epoch_ms) - origin_us


class LiveMemoryView:
    """The memory view of a running program, rebuilt as its allocations arrive (module doc).

    ``source``: a `MemrayLiveStream`, or the port memray's tracker listens at (connected here,
    waiting up to ``connect_timeout`` s for it).  ``params``: `MemoryParams` or their dict.
    ``calls``: a `LiveSession` of the same program's call feed (polled here too), or None.
    ``rebuild_seconds``: the shortest time between two rebuilds.

    After each `poll`: ``capture`` (the `MemoryCapture` drawn last), ``info`` (the last build's
    result: ``meta``, ``timings``), ``stats`` (``builds``, ``bytes_drawn``, ``records_drawn``,
    ``last_build_s``, ``longest_build_s``, ``longest_step_s``, ``bytes_received``), ``done``
    (the stream ended and its every record is drawn).  A stream that is not memray's, is cut
    inside a record or passes the limits raises `TraceFormatError` (one line) from `poll`; the
    figure drawn before stays.
    """

    def __init__(self, source, params=None, scene=None, collection_name: str = "TraceVis3D", calls=None,
                 rebuild_seconds: float = 1.0, connect_timeout: float = 30.0, limits=None):
        from ..io.memray_live import MemrayLiveStream
        from ..params.memory import MemoryParams

        self.stream = source if isinstance(source, MemrayLiveStream) else MemrayLiveStream(
            int(source), connect_timeout=connect_timeout, limits=limits)
        self.params = MemoryParams.given(params)
        self.scene = scene or bpy.context.scene
        self.collection_name = collection_name
        self.calls = calls
        self.rebuild_seconds = float(rebuild_seconds)
        self.capture = None
        self.info = None
        self.error: BaseException | None = None  # what stopped the view (raised once by `poll`)
        self.job: Job | None = None
        self._job_data = (0, False)  # (bytes, finished) the running rebuild reads
        self._drawn = (-1, False)  # (bytes, finished) the figure on screen was built from
        self._last_start = -float("inf")
        self._wait = 0.0
        self.stats = dict(builds=0, bytes_drawn=0, records_drawn=0, last_build_s=0.0, longest_build_s=0.0,
                          longest_step_s=0.0, bytes_received=0)

    # ------------------------------------------------------------------ driving
    @property
    def done(self) -> bool:
        """The stream ended and the figure holds all it sent (or no rebuild can add anything)."""
        return self.error is not None or (self.stream.finished and self.job is None
                                          and self._drawn == (self.stream.n_bytes, True))

    def poll(self, timeout: float = 0.0) -> bool:
        """One bounded step (module doc); True while there is more to come."""
        if self.error is not None:
            return False
        busy = self.job is not None
        try:
            self.stream.poll(0.0 if busy else timeout)
        except Exception as e:
            self.error = e
            self.close()
            raise
        self.stats["bytes_received"] = self.stream.n_bytes
        if self.calls is not None:
            self.calls.poll_once(max_messages=500, max_seconds=0.02)
        if self.job is not None:
            self.job.poll(timeout=timeout if busy else 0.0)
            self.stats["longest_step_s"] = max(self.stats["longest_step_s"], self.job.longest_step)
            if self.job.finished:
                self._finish_build()
        if self.job is None and self._due():
            self._start_build()
        return not self.done

    def run(self, seconds: float = 600.0, on_build=None) -> bool:
        """Poll until the stream ended and is drawn, at most ``seconds``; ``on_build(view)``
        after each rebuild.  True when it ended within the time."""
        deadline = time.monotonic() + seconds
        builds = self.stats["builds"]
        while self.poll(timeout=0.05):
            if on_build is not None and self.stats["builds"] != builds:
                builds = self.stats["builds"]
                on_build(self)
            if time.monotonic() > deadline:
                return False
        if on_build is not None and self.stats["builds"] != builds:
            on_build(self)
        return True

    def close(self) -> None:
        """Stop: a rebuild under way is cancelled (the figure drawn before stays), the socket closed."""
        if self.job is not None and not self.job.finished:
            self.job.cancel()
        self.job = None
        self.stream.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------------ internals
    def _due(self) -> bool:
        n, fin = self.stream.n_bytes, self.stream.finished
        if (n, fin) == self._drawn:
            return False
        if fin:
            return True  # the last rebuild: at once (a stream that ended too early says so there)
        return n > 0 and time.monotonic() - self._last_start >= self._wait

    def _start_build(self) -> None:
        data, finished, arrived_ms = self.stream.snapshot()
        calls = self.calls.snapshot() if self.calls is not None and self.calls.n_calls else None
        self._job_data = (len(data), finished)
        self._last_start = time.monotonic()
        self.job = Job("live memory view", self._build_steps, data, finished, arrived_ms, calls)
        self.job.poll()

    def _build_steps(self, job: Job, data: bytes, finished: bool, arrived_ms: float, calls):
        cap = yield job.off_main(self.stream.capture_of, data, finished, arrived_ms)
        if cap is None or cap.n_ranges == 0:  # the header only, or no allocation yet: nothing to draw
            return cap, None
        offset = wall_clock_offset_us(cap, calls) if calls is not None else None
        out = yield from memory_build_steps(job, cap, self._params_for(cap, finished), self.scene,
                                            self.collection_name, calls=calls, calls_offset_us=offset)
        return cap, out

    def _finish_build(self) -> None:
        job, self.job = self.job, None
        cost = time.monotonic() - self._last_start
        self.stats["last_build_s"] = cost
        self.stats["longest_build_s"] = max(self.stats["longest_build_s"], cost)
        self._wait = max(self.rebuild_seconds, cost / COST_SHARE)
        if job.state == FAILED:  # the figure drawn before stays; the stream is given up
            self.error = job.error
            self.stream.close()
            raise job.error
        cap, out = job.result if job.result is not None else (None, None)
        self._drawn = self._job_data
        if out is not None:
            self.capture, self.info = cap, out
            self.stats["builds"] += 1
            self.stats["bytes_drawn"] = self._job_data[0]
            self.stats["records_drawn"] = cap.n_records

    def _params_for(self, cap, finished: bool):
        """The view's parameters; while the program runs, a title that says so."""
        if self.params.title is not None or finished:
            return self.params
        from ..layout.memory import capture_program, fmt_bytes, fmt_ms

        title = (f"{capture_program(cap)} · live, {fmt_ms(cap.duration_ms)} so far · peak {fmt_bytes(cap.peak_bytes)} · "
                 f"{cap.n_allocations:,} allocator records · held now {fmt_bytes(cap.leaked_bytes)}")
        return type(self.params).from_dict({**self.params.to_dict(), "title": title}).validate()


__all__ = ["LiveMemoryView", "COST_SHARE", "wall_clock_offset_us"]
