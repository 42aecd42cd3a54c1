"""Publish the calls of this Python process: ``with tracevis3d.live.publish(endpoint): ...``.

Traced threads append raw events to their own lists (tracer.Hooks); full lists go to a
bounded queue (full: the batch is dropped and counted, the program never waits); one
background sender thread turns them into protocol records and sends them (wire.WireSender).
"""
from __future__ import annotations

import collections
import os
import sys
import threading
import time
from contextlib import contextmanager

import numpy as np

from . import protocol as P
from .convert import Converter
from .tracer import BATCH, make_hooks
from .transport import Curve, check_endpoint

class Publisher:
    """Trace this process and send its calls to ``endpoint`` (see docs/live-protocol.md).

    ``max_pending``: events queued at most (beyond: dropped and counted); ``wait_subscriber``:
    seconds to hold events at start until a viewer subscribes; ``linger``: seconds the exit
    may wait for queued messages; ``flush_interval``: seconds between the sender's sends of
    what the threads gathered (the latency bound)."""

    def __init__(self, endpoint: str, bind: bool = False, curve: Curve | None = None,
                 program: str | None = None, max_pending: int = 1 << 20, batch: int = BATCH,
                 wait_subscriber: float = 1.0, linger: float = 2.0, flush_interval: float = 0.02):
        check_endpoint(endpoint, curve)
        self.endpoint, self.bind, self.curve = endpoint, bind, curve
        self.program = program or os.path.basename(sys.argv[0] or "python")
        self.max_pending = max_pending
        self.wait_subscriber, self.linger = wait_subscriber, linger
        self.queue: collections.deque = collections.deque()
        self.pending = 0
        self.dropped_events = 0     # dropped in the traced program (queue full)
        self.dropped_batches = 0
        self.hooks = make_hooks(self._sink, batch=batch)
        self.converter = Converter(self.hooks.origin)
        self._wake = threading.Event()
        self.flush_interval = flush_interval
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None
        self.stats: dict = {}

    # ---------------------------------------------------------- traced side
    def _sink(self, slot, batch) -> None:
        n = len(batch)
        if self.pending + n > self.max_pending:
            self.dropped_events += n
            self.dropped_batches += 1
            return
        self.pending += n
        self.queue.append((slot, batch))
        if not self._wake.is_set():
            self._wake.set()

    # ---------------------------------------------------------- sender side
    def _announce_threads(self, wire) -> None:
        for s in self.hooks.slots[len(wire.threads):]:
            wire.set_thread(s.index, (os.getpid(), s.native_id, s.name, self.program))
        for s in self.hooks.refresh_names():
            wire.set_thread(s.index, (os.getpid(), s.native_id, s.name, self.program))

    def _send(self, wire, thread: int, records: np.ndarray) -> None:
        new = self.converter.funcs.entries[len(wire.functions):]
        if new:
            wire.add_functions(new)
        self._announce_threads(wire)
        if thread <= P.MAX_THREADS - 1:
            wire.send_events(records)

    def _drain(self, wire, partial: bool = True) -> None:
        """Send the queued batches, then (``partial``) what the threads have gathered since:
        an event waits at most one sender tick (`flush_interval`), not a full batch."""
        with self.hooks.handover_lock:
            items = list(self.queue)
            self.queue.clear()
            self.pending = 0
            if partial and self.hooks.active:
                items += self.hooks.take_partial()
        for slot, batch in items:
            if not wire.subscribed and self._waited:  # nobody listens: drop before converting
                wire.poll_subscriptions()
                if not wire.subscribed:
                    wire._drop(len(batch), 1)
                    self.converter.forget(slot.index)
                    continue
            self._send(wire, slot.index, self.converter.convert(slot.index, batch))
        if self.dropped_events != self._told_drops[0]:  # the traced side dropped: tell the viewers
            wire.dropped_events += self.dropped_events - self._told_drops[0]
            wire.dropped_batches += self.dropped_batches - self._told_drops[1]
            self._told_drops = (self.dropped_events, self.dropped_batches)

    def _run(self) -> None:
        sys.setprofile(None)
        from .wire import WireSender

        wire = None
        self._told_drops = (0, 0)
        self._waited = False
        try:
            wire = WireSender(self.endpoint, bind=self.bind, curve=self.curve, program=self.program,
                              clock_origin_ns=self._origin_wall, linger_ms=int(self.linger * 1000))
            self._announce_threads(wire)
            wire.wait_subscriber(self.wait_subscriber)
            self._waited = True
            while True:
                self._wake.wait(self.flush_interval)
                self._wake.clear()
                self._drain(wire)
                if self._stopping and not self.queue:
                    break
            for thread, records in self.converter.close_all(self._stop_ns):
                self._send(wire, thread, records)
            if wire.dropped_events != wire._reported_drops:
                wire.send_drops()
        except BaseException as e:  # never let the sender thread kill the program
            self.error = e
        finally:
            if wire is not None:
                self.stats = dict(events_sent=wire.events_sent, dropped_events=wire.dropped_events,
                                  dropped_batches=wire.dropped_batches, messages=wire.seq,
                                  subscriptions=wire.subscriptions)
                try:
                    wire.close()
                except Exception as e:  # pragma: no cover
                    self.error = self.error or e

    # ---------------------------------------------------------- lifecycle
    def start(self) -> "Publisher":
        self._origin_wall = time.time_ns() - (time.perf_counter_ns() - self.hooks.origin)
        self._thread = threading.Thread(target=self._run, name="tracevis3d-live-sender", daemon=True)
        self._thread._tv3d_untraced = True  # sys.monitoring is process-wide: skip our own sender
        self._thread.start()
        self.hooks.start()
        return self

    def stop(self) -> dict:
        """Stop tracing, flush (bounded by wait_subscriber + linger) and return the counters."""
        rest = self.hooks.stop()
        self._stop_ns = self.hooks.clock()
        with self.hooks.handover_lock:
            for slot, batch in rest:
                self.pending += len(batch)
                self.queue.append((slot, batch))
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(self.wait_subscriber + self.linger + 10.0)
        if self.error is not None:
            sys.stderr.write(f"tracevis3d.live: the sender failed: {self.error!r}\n")
        return self.stats


@contextmanager
def publish(endpoint: str, **options):
    """Trace the calls made inside the ``with`` block (all threads) and publish them live."""
    pub = Publisher(endpoint, **options).start()
    try:
        yield pub
    finally:
        pub.stop()
