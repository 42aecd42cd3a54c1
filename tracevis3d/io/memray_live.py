"""memray's live mode read as it runs (`MemrayLiveStream`: ``memray run --live-remote``), each
snapshot a `MemoryCapture` of what has arrived (`tracevis3d.io.memray_own`'s scanner)."""
from __future__ import annotations

import threading
import time

from ..errors import TraceFormatError
from .memray_capture import MEMRAY_MAGIC, fail
from .memray_own import capture_of, scan_bytes

#: bytes asked of the socket at a time by the receiving thread
RECV_BYTES = 1 << 20


class MemrayLiveStream:
    """memray's live mode read while the program runs.

    ``python -m memray run --live-remote --live-port PORT program.py`` waits for one client on
    127.0.0.1:PORT, then streams its capture to it: the same records as a capture file (memray's
    ``SocketSink`` behind the same ``StreamingRecordWriter``), uncompressed, the header's counts
    left at 0.  A thread of this object receives the bytes as they come (memray's tracker blocks
    the program when its socket is full, so whatever the reader's own thread is doing -- a
    capture, a Blender rebuild -- the program never waits on it); `poll` takes note of what has
    arrived; `capture` is the `MemoryCapture` of the records so far (`scan_bytes` over the bytes
    received, a record still arriving left for the next call), so the memory view of it grows as
    the program runs; `finished` once memray closed the stream (its trailer written when the
    program ended normally).  The live stream's header leaves memray's end time 0, so a capture's
    end is when its last byte arrived (our wall clock against the header's start: one clock on
    loopback): the records after memray's last memory snapshot spread up to it, not all at that
    snapshot's instant (a short program may end before memray's second snapshot).  `save` writes
    the bytes as a capture file that memray's own ``FileReader`` reads too.

    Cost: a capture is the scan of every byte received so far (memray's records are delta-coded
    against a pointer cache and per-thread frame stacks, so a later record cannot be read without
    the earlier ones), O(bytes) each time; `capture` returns the same object while no byte has
    arrived, and `blender.live_memory.LiveMemoryView` bounds how often it is asked (its rebuild
    interval grows with the cost of the last one).  The bytes are bounded by ``limits.max_bytes``.
    A peer whose first bytes are not memray's magic is refused at once; either error is raised
    by the next `poll` (one line).
    """

    def __init__(self, port: int, host: str = "127.0.0.1", connect_timeout: float = 30.0, limits=None):
        import socket
        import time

        from .limits import resolve_limits

        self.source = f"memray live {host}:{port}"
        self.limits = resolve_limits(limits)
        self.finished = False  # memray closed the stream (and every byte it sent is in the buffer)
        self._closed = False
        self._buf = bytearray()
        self._seen = 0  # bytes `poll` has reported
        self._seen_ms = 0.0  # when the last of them arrived (ms since the epoch)
        self._arrived_ms = 0.0  # when the last byte in the buffer arrived (ms since the epoch)
        self._eof = False
        self._error: TraceFormatError | None = None
        self._arrived = threading.Condition()  # guards _buf, _eof, _error
        self._stop = threading.Event()
        self._cached = (-1, False, None)  # (bytes, finished, capture) of the last `capture`
        deadline = time.monotonic() + connect_timeout
        while True:
            try:
                self._sock = socket.create_connection((host, int(port)), timeout=max(connect_timeout, 0.1))
                break
            except OSError as e:  # the tracker is not listening yet: retry until the deadline
                if time.monotonic() > deadline:
                    raise TraceFormatError(f"{self.source}: byte 0: no memray tracker accepted a connection "
                                           f"within {connect_timeout:g} s ({e})") from None
                time.sleep(0.05)
        self._sock.settimeout(0.1)  # the receiving thread looks at `_stop` this often
        self._thread = threading.Thread(target=self._receive, name="tracevis3d memray live", daemon=True)
        self._thread.start()

    def _receive(self) -> None:
        """The receiving thread: every byte into the buffer until the peer closes, the bytes break
        a rule (not memray's magic, past ``limits.max_bytes``) or `close` is called."""
        import socket

        while not self._stop.is_set():
            try:
                chunk = self._sock.recv(RECV_BYTES)
            except socket.timeout:
                continue
            except OSError:
                chunk = b""
            with self._arrived:
                if not chunk:
                    self._eof = True
                else:
                    had = len(self._buf)
                    self._buf += chunk
                    self._arrived_ms = 1000.0 * time.time()
                    if had < len(MEMRAY_MAGIC) and not self._buf.startswith(MEMRAY_MAGIC[:len(self._buf)]):
                        self._error = _error(self.source, "byte 0", "not a memray live stream (no 'memray' magic): "
                                                                    "is the peer `python -m memray run --live-remote`?")
                    elif len(self._buf) > self.limits.max_bytes:
                        self._error = _error(self.source, f"byte {len(self._buf)}",
                                             "the stream passed limits.max_bytes")
                self._arrived.notify_all()
                if self._eof or self._error is not None:
                    return

    def poll(self, timeout: float = 0.0) -> int:
        """Wait up to ``timeout`` seconds for bytes (none if some already arrived); the number
        that arrived since the last poll.  Raises the stream's error (one line) once it broke a
        rule; then the stream is closed."""
        with self._arrived:
            if timeout > 0 and len(self._buf) == self._seen and not (self._eof or self._error or self._closed):
                self._arrived.wait(timeout)
            error, n = self._error, len(self._buf)
            self._seen_ms = self._arrived_ms
            if self._eof:
                self.finished = True
        got, self._seen = n - self._seen, n
        if error is not None:
            self.close()
            raise error
        if self.finished:
            self.close()
        return got

    @property
    def n_bytes(self) -> int:
        """Bytes received as of the last `poll`."""
        return self._seen

    def snapshot(self) -> tuple:
        """(the bytes `poll` has seen, a copy; `finished`; when the last of them arrived, ms since
        the epoch): what `capture_of` reads (a worker can read it while more arrives)."""
        with self._arrived:  # one copy when the buffer holds no more than `poll` saw (the usual case)
            data = bytes(self._buf) if self._seen == len(self._buf) else bytes(self._buf[:self._seen])
            return data, self.finished, self._seen_ms

    def capture_of(self, data: bytes, finished: bool, arrived_ms: float | None = None, warn: bool = False):
        """The `MemoryCapture` of a `snapshot` (None before the header arrived), its end when its
        last byte arrived (``arrived_ms``, ms since the epoch; None: its last memory snapshot); safe
        in a worker thread (it reads only its arguments)."""
        if finished and len(data) < len(MEMRAY_MAGIC) + 1:
            fail(self.source, f"byte {len(data)}", "the peer closed the stream before memray's header")
        raw = scan_bytes(data, self.source, self.limits, partial=not finished)
        if raw is None:
            if finished:
                fail(self.source, f"byte {len(data)}", "the peer closed the stream inside memray's header")
            return None
        cap = capture_of(raw, self.source, self.limits, warn, live=not finished, end_epoch_ms=arrived_ms)
        cap.meta["live"] = self.source
        cap.meta["running"] = not finished  # its "leaks" are what is held now
        return cap

    def capture(self, warn: bool = False):
        """The `MemoryCapture` of the records received so far (None before the header arrived);
        the same object again while nothing more arrived."""
        n, fin, cap = self._cached
        if n == self._seen and fin == self.finished and cap is not None:
            return cap
        data, finished, arrived_ms = self.snapshot()
        cap = self.capture_of(data, finished, arrived_ms, warn=warn)
        self._cached = (len(data), finished, cap)
        return cap

    def save(self, path) -> None:
        """The bytes `poll` has seen, as a capture file."""
        data = self.snapshot()[0]
        with open(path, "wb") as f:
            f.write(data)

    def close(self) -> None:
        """Stop receiving (the bytes received stay) and close the socket."""
        if not self._closed:
            self._closed = True
            self._stop.set()
            if self._thread is not threading.current_thread():
                self._thread.join(5.0)
            self._sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _error(source: str, where: str, problem: str) -> TraceFormatError:
    try:
        fail(source, where, problem)
    except TraceFormatError as e:
        return e
