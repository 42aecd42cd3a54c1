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

    ``max_pending``: events held at most before the sender takes them (beyond: dropped and
    counted): the queue of the Python hooks (default 2^20), and each thread's buffer of the
    compiled hook (default 2^23: it holds 16 bytes per event, not a tuple); ``wait_subscriber``:
    seconds to hold events at start until a viewer subscribes; ``linger``: seconds the exit
    may wait for queued messages; ``flush_interval``: seconds between the sender's sends of
    what the threads gathered (the latency bound)."""

    def __init__(self, endpoint: str, bind: bool = False, curve: Curve | None = None,
                 program: str | None = None, max_pending: int | None = None, batch: int = BATCH,
                 wait_subscriber: float = 1.0, linger: float = 2.0, flush_interval: float = 0.02):
        check_endpoint(endpoint, curve)
        self.endpoint, self.bind, self.curve = endpoint, bind, curve
        self.program = program or os.path.basename(sys.argv[0] or "python")
        self.wait_subscriber, self.linger = wait_subscriber, linger
        self.queue: collections.deque = collections.deque()
        self.pending = 0
        self.dropped_events = 0     # dropped in the traced program (queue full)
        self.dropped_batches = 0
        self.hooks = make_hooks(self._sink, batch=batch, max_events=max_pending)
        native = getattr(self.hooks, "native", False)
        self.max_pending = max_pending or (self.hooks.native_rec.max_cap if native else 1 << 20)
        self.converter = Converter(self.hooks.origin, native=getattr(self.hooks, "native_rec", None))
        self._wake = threading.Event()
        self.flush_interval = flush_interval
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None
        self.stats: dict = {}
        self._subs_told = 0              # subscriptions told the open calls (OPEN)
        self._tick_stacks: tuple | None = None   # the open calls at the start of the tick
        self._loss_gen: dict = {}       # thread → batches lost so far (queue side)
        self._converted_gen: dict = {}  # thread → the loss generation the converter is at
        self._buffer_drops = 0

    # ---------------------------------------------------------- traced side
    def _sink(self, slot, batch) -> None:
        """Queue a full batch (called by traced threads, or by the sender for the compiled
        hook's buffers); beyond ``max_pending`` the batch is dropped and counted.  Each queued
        batch carries its thread's loss generation: a batch queued after a loss makes the
        converter forget that thread's open calls first (in queue order)."""
        n = len(batch)
        i = slot.index
        if self.pending + n > self.max_pending:
            self.dropped_events += n
            self.dropped_batches += 1
            self.hooks.release(batch)
            self._loss_gen[i] = self._loss_gen.get(i, 0) + 1
            return
        self.pending += n
        self.queue.append((slot, batch, self._loss_gen.get(i, 0)))
        if not self._wake.is_set():
            self._wake.set()

    def _hold_buffers(self) -> None:
        """While waiting for the first viewer: move what the compiled hook's buffers gathered
        into the bounded queue (a full buffer drops)."""
        if getattr(self.hooks, "native", False):
            with self.hooks.handover_lock:
                for slot, batch in self.hooks.take_partial():
                    self._sink(slot, self.hooks.native_rec.detach(batch))
                self._note_buffer_losses()

    def _note_buffer_losses(self) -> None:
        """Count what the compiled hook's full buffers dropped; the threads' next batches start
        a new loss generation.  Call after queueing/converting the batches `take_partial` gave."""
        hooks = self.hooks
        lost = getattr(hooks, "lost", None)
        if lost:
            for i in list(lost):
                self._loss_gen[i] = self._loss_gen.get(i, 0) + 1
            lost.clear()
            self.dropped_events += hooks.dropped_in_buffers - self._buffer_drops
            self.dropped_batches += 1
            self._buffer_drops = hooks.dropped_in_buffers

    # ---------------------------------------------------------- sender side
    def _announce_threads(self, wire) -> None:
        for s in self.hooks.slots[len(wire.threads):]:
            wire.set_thread(s.index, (os.getpid(), s.native_id, s.name, self.program))
        for s in self.hooks.refresh_names():
            wire.set_thread(s.index, (os.getpid(), s.native_id, s.name, self.program))

    def _announce_tables(self, wire) -> None:
        """Functions named and threads seen (or renamed) since the last send, to the wire."""
        new = self.converter.funcs.entries[len(wire.functions):]
        if new:
            wire.add_functions(new)
        self._announce_threads(wire)

    def _tell_open_calls(self, wire) -> None:
        """A viewer joined (the wire noticed its subscription): send the calls open at the
        start of this tick (OPEN), before any further event reaches it; events it missed
        earlier in the tick are counted by the viewer as unbalanced exits, never as
        duplicates."""
        if wire.subscriptions == self._subs_told:
            return
        self._subs_told = wire.subscriptions
        self._announce_tables(wire)
        wire.send_open(self.converter.open_calls(self._tick_stacks))

    def _send(self, wire, records: np.ndarray | None) -> None:
        self._announce_tables(wire)
        if records is not None and records.shape[0]:
            wire.send_events(records)

    def _drain(self, wire, partial: bool = True) -> None:
        """Send the queued batches, then (``partial``) what the threads have gathered since:
        an event waits at most one sender tick (`flush_interval`), not a full batch."""
        hooks = self.hooks
        with hooks.handover_lock:
            items = list(self.queue)
            self.queue.clear()
            self.pending = 0
            taken = partial and hooks.active
            if taken:
                items += [(slot, batch, self._loss_gen.get(slot.index, 0)) for slot, batch in hooks.take_partial()]
        self._tick_stacks = self.converter.stack_snapshot()
        wire.poll_subscriptions()
        out = []
        for slot, batch, gen in items:
            i = slot.index
            try:
                if self._converted_gen.get(i, 0) != gen:  # events were lost before this batch
                    self.converter.forget(i)
                    self._converted_gen[i] = gen
                if not wire.subscribed and self._waited:  # nobody listens: the events are dropped
                    wire.poll_subscriptions()
                    if not wire.subscribed:
                        wire._drop(len(batch), 1)
                        if self.converter.native is not None:
                            # converted all the same (one kernel call): the functions get
                            # named (the compiled hook then records them without taking a
                            # reference) and the open calls stay known, for a viewer that
                            # joins later (OPEN)
                            self.converter.convert(i, batch)
                        else:
                            self.converter.forget(i)
                        continue
                if i <= P.MAX_THREADS - 1:
                    out.append(self.converter.convert(i, batch))
            finally:
                hooks.release(batch)
        # one send for the tick: every send gives up the GIL, and getting it back from a
        # busy program takes up to a switch interval (5 ms)
        self._send(wire, np.concatenate(out) if len(out) > 1 else (out[0] if out else None))
        if taken:
            with hooks.handover_lock:
                self._note_buffer_losses()
        if self.dropped_events != self._told_drops[0]:  # the traced side dropped: tell the viewers
            wire.dropped_events += self.dropped_events - self._told_drops[0]
            wire.dropped_batches += self.dropped_batches - self._told_drops[1]
            self._told_drops = (self.dropped_events, self.dropped_batches)

    def _run(self) -> None:
        sys.setprofile(None)
        wire = self._wire
        self._told_drops = (0, 0)
        self._waited = False
        try:
            if wire is None:
                raise self._wire_error
            self._announce_threads(wire)
            wire.on_subscribe = lambda: self._tell_open_calls(wire)
            wire.wait_subscriber(self.wait_subscriber, tick=self._hold_buffers, interval=self.flush_interval)
            self._waited = True
            while True:
                self._wake.wait(self.flush_interval)
                self._wake.clear()
                self._drain(wire)
                if self._stopping and not self.queue:
                    break
            for thread, records in self.converter.close_all(self._stop_ns):
                if thread <= P.MAX_THREADS - 1:
                    self._send(wire, records)
            if wire.dropped_events != wire._reported_drops:
                wire.send_drops()
        except BaseException as e:  # never let the sender thread kill the program
            self.error = e
        finally:
            if wire is not None:
                self.stats = dict(events_sent=wire.events_sent, dropped_events=wire.dropped_events,
                                  dropped_in_program=self.dropped_events,
                                  dropped_batches=wire.dropped_batches, messages=wire.seq,
                                  subscriptions=wire.subscriptions)
                try:
                    wire.close()
                except Exception as e:  # pragma: no cover
                    self.error = self.error or e

    # ---------------------------------------------------------- lifecycle
    def start(self) -> "Publisher":
        self._origin_wall = time.time_ns() - (self.hooks.clock() - self.hooks.origin)
        # the socket is made here, before tracing: in the sender thread, its imports and set-up
        # would wait for the GIL step by step against a busy program (over a second)
        from .wire import WireSender

        self._wire, self._wire_error = None, None
        try:
            self._wire = WireSender(self.endpoint, bind=self.bind, curve=self.curve, program=self.program,
                                    clock_origin_ns=self._origin_wall, linger_ms=int(self.linger * 1000),
                                    events_per_message=P.MAX_EVENTS_PER_MESSAGE // 2)
        except Exception as e:  # reported by the sender like its other failures; the program runs on
            self._wire_error = e
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
                self.queue.append((slot, batch, self._loss_gen.get(slot.index, 0)))
            self._note_buffer_losses()
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
