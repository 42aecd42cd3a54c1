"""The sending end of the protocol: one XPUB socket, sequence numbers, tables re-sent to
late joiners, non-blocking sends whose failures are counted as drops."""
from __future__ import annotations

import os
import random
import time

import numpy as np

from . import protocol as P
from .transport import Curve, publisher_socket


#: a connecting sender with no subscriber connects again this often (s): longer than a
#: viewer's handshake timeout (`transport.HANDSHAKE_MS`), so a refused connection has ended
REDIAL_SECONDS = 3.0


class WireSender:
    """Owns the socket; use from ONE thread only (the publisher's sender thread, or replay)."""

    def __init__(self, endpoint: str, bind: bool = False, curve: Curve | None = None,
                 program: str = "", pid: int | None = None, clock_origin_ns: int | None = None,
                 ticks_per_second: int = 10 ** 9, linger_ms: int = 2000, sndhwm: int = 256,
                 context=None, events_per_message: int = P.MAX_EVENTS_PER_MESSAGE // 4):
        import zmq

        #: a viewer handles one message at a time: 1 MiB of events by default (a few ms);
        #: the publisher sends 2 MiB (each send costs the sender a GIL hand-off)
        self.events_per_message = max(1, min(int(events_per_message), P.MAX_EVENTS_PER_MESSAGE))
        self._zmq = zmq
        self._own_ctx = context is None
        self.ctx = context or zmq.Context()
        self.sock = publisher_socket(self.ctx, endpoint, bind=bind, curve=curve, sndhwm=sndhwm,
                                     linger_ms=linger_ms)
        self._endpoint, self._bind, self._last_dial = endpoint, bind, time.monotonic()
        self._linger_s = max(linger_ms, 0) / 1000.0
        self.session = random.getrandbits(64) or 1
        self.seq = 0
        self.program, self.pid = program, os.getpid() if pid is None else pid
        self.clock_origin_ns = time.time_ns() if clock_origin_ns is None else clock_origin_ns
        self.ticks_per_second = ticks_per_second
        self.functions: list = []   # (name, file, line)
        self.threads: list = []     # (pid, tid, name, process_name)
        self.sent_functions = 0     # how many of the tables the subscribers have
        self.sent_threads = 0
        self.tables_dirty = True    # HELLO + all tables must go (again) before the next events
        self.subscribed = False
        self.subscriptions = 0
        self.on_subscribe = None      # called when a new subscription is noticed
        self._in_subscribe = False
        self.events_sent = 0
        self.dropped_events = 0
        self.dropped_batches = 0
        self._reported_drops = 0
        #: > 0: wait up to this long for room instead of dropping (replay; never a traced program)
        self.block_seconds = 0.0
        #: subscription notices read per `poll_subscriptions` (a peer looping on subscriptions
        #: must not keep the sender reading them), and the least time between two re-sends of
        #: HELLO and the tables (notices in between are coalesced into the next re-send); while
        #: notices keep coming (a peer looping on subscriptions) the gap doubles, up to
        #: `max_resend_interval`, and falls back once they stop
        self.max_notices = 64
        self.resend_interval = 0.1
        self.max_resend_interval = 5.0
        self.table_resends = 0
        self._resend_wanted = False
        self._resend_deferred = False
        self._backoff = 0.0
        self._last_resend = -float("inf")

    # -------------------------------------------------------------- sockets
    def _send(self, mtype: int, payload: bytes) -> bool:
        deadline = None
        while True:
            try:
                self.sock.send_multipart([P.header(mtype, self.session, self.seq), payload],
                                         flags=self._zmq.NOBLOCK)  # copying: no pyzmq GC thread in the traced program
                break
            except self._zmq.Again:
                if self.block_seconds <= 0:
                    return False
                now = time.monotonic()
                deadline = deadline or now + self.block_seconds
                if now >= deadline:
                    return False
                time.sleep(0.001)
        self.seq += 1
        return True

    def poll_subscriptions(self, timeout_ms: int = 0) -> bool:
        """Read at most `max_notices` subscription notices; new subscribers get HELLO and the
        tables again -- at most once per `resend_interval`, whatever the peers send."""
        new = False
        for _ in range(self.max_notices):
            if not self.sock.poll(timeout_ms, self._zmq.POLLIN):
                break
            msg = self.sock.recv()
            timeout_ms = 0
            if msg[:1] == b"\x01":
                new = True
                self.subscriptions += 1
                self.subscribed = True
            elif msg[:1] == b"\x00" and msg[1:] in (b"", P.MAGIC):
                self.subscribed = False
        now = time.monotonic()
        if not self._bind and not self.subscribed and now - self._last_dial >= REDIAL_SECONDS:
            self._redial(now)
        gap = max(self.resend_interval, self._backoff)
        if new:
            self._resend_wanted = True
            if now - self._last_resend < gap:
                self._resend_deferred = True  # another notice inside the gap: a flood, or a burst
        new = self._resend_wanted and now - self._last_resend >= gap
        if new:
            self._backoff = min(2 * gap, self.max_resend_interval) if self._resend_deferred else 0.0
            self._resend_wanted = self._resend_deferred = False
            self._last_resend = now
            self.table_resends += 1
            self.tables_dirty = True
            if self.on_subscribe is not None and not self._in_subscribe:
                self._in_subscribe = True  # the callback sends: no second notice inside it
                try:
                    self.on_subscribe()
                finally:
                    self._in_subscribe = False
        return new

    def _redial(self, now: float) -> None:
        """Connect again: a viewer full of peers refuses a connection at its handshake, and
        ZeroMQ 4.3 does not always try again by itself once a slot is free."""
        self._last_dial = now
        try:
            self.sock.disconnect(self._endpoint)
        except self._zmq.ZMQError:
            pass
        try:
            self.sock.connect(self._endpoint)
        except self._zmq.ZMQError:
            pass

    def wait_subscriber(self, seconds: float, tick=None, interval: float = 0.05) -> bool:
        """Wait up to ``seconds`` for a subscription, calling ``tick()`` every ``interval``."""
        deadline = time.monotonic() + seconds
        while not self.subscribed:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self.poll_subscriptions(int(min(left, interval) * 1000) + 1)
            if tick is not None:
                tick()
        return self.subscribed

    # -------------------------------------------------------------- tables
    def add_functions(self, entries) -> None:
        self.functions.extend(entries)

    def set_thread(self, index: int, entry) -> None:
        """Announce thread ``index`` (appended, or renamed when known)."""
        if index < len(self.threads):
            if self.threads[index] != entry:
                self.threads[index] = entry
                self.sent_threads = min(self.sent_threads, index)
        else:
            assert index == len(self.threads)
            self.threads.append(entry)

    def flush_tables(self) -> bool:
        """Send what subscribers lack (everything after a new subscription); False when refused."""
        if self.tables_dirty:
            hello = P.hello_payload(self.pid, self.clock_origin_ns, self.ticks_per_second, self.program)
            if not self._send(P.HELLO, hello):
                return False
            self.sent_functions = self.sent_threads = 0
            self.tables_dirty = False
        for attr, table, payload, mtype, chunk in (
                ("sent_functions", self.functions, P.functions_payload, P.FUNCTIONS, 128),
                ("sent_threads", self.threads, P.threads_payload, P.THREADS, 256)):
            while getattr(self, attr) < len(table):
                first = getattr(self, attr)
                part = table[first: first + chunk]
                if not self._send(mtype, payload(first, part)):
                    # refused (the pipes are full): the events wait (never send events that name
                    # what nobody was told), the re-send goes on from here at the next flush
                    # (starting over from HELLO each time, a busy viewer never caught up)
                    return False
                setattr(self, attr, first + len(part))
        return True

    # -------------------------------------------------------------- events
    def send_events(self, records: np.ndarray) -> int:
        """Send EVENT_DTYPE records (split into messages); returns how many were dropped."""
        self.poll_subscriptions()
        n = records.shape[0]
        if n == 0:
            return 0
        if not self.subscribed or not self.flush_tables():
            self._drop(n, 1)
            return n
        dropped = 0
        for part, sent in self._send_records(P.EVENTS, records):
            if sent:
                self.events_sent += part.shape[0]
            else:
                self._drop(part.shape[0], 1)
                dropped += part.shape[0]
        if self.dropped_events != self._reported_drops:
            self.send_drops()
        return dropped

    def _send_records(self, mtype: int, records: np.ndarray):
        """(part, sent) of each message of at most `events_per_message` records."""
        step = self.events_per_message
        for k in range(0, records.shape[0], step):
            part = records[k: k + step]
            yield part, self._send(mtype, P.events_payload(part))

    def send_open(self, records: np.ndarray) -> bool:
        """OPEN: the calls open now (ENTER records), for viewers that joined since they began
        (a viewer applies them only to threads it has no calls of; docs/live-protocol.md)."""
        if records.shape[0] == 0 or not self.subscribed or not self.flush_tables():
            return False
        return all([sent for _, sent in self._send_records(P.OPEN, records)])

    def _drop(self, n_events: int, n_batches: int) -> None:
        self.dropped_events += n_events
        self.dropped_batches += n_batches

    def send_drops(self) -> None:
        if self._send(P.DROPS, P.counts_payload(self.dropped_events, self.dropped_batches)):
            self._reported_drops = self.dropped_events

    def close(self, bye: bool = True) -> None:
        if bye:
            self.poll_subscriptions()
            if self.subscribed:
                self.flush_tables()
            self.send_drops()
            # BYE waits for room in the pipe up to the linger time: a viewer that is still
            # reading the last tables would otherwise never learn that the run ended
            block, self.block_seconds = self.block_seconds, max(self.block_seconds, self._linger_s)
            try:
                self._send(P.BYE, P.counts_payload(self.events_sent, self.dropped_events))
            finally:
                self.block_seconds = block
        from .transport import close_socket

        close_socket(self.sock)  # LINGER bounds how long queued messages may still take
        if self._own_ctx:
            self.ctx.term()
