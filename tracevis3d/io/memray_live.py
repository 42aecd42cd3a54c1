"""memray's live mode read as it runs (`MemrayLiveStream`: ``memray run --live-remote``), each
snapshot a `MemoryCapture` of what has arrived (`tracevis3d.io.memray_own`'s scanner)."""
from __future__ import annotations



from ..errors import TraceFormatError
from .memray_capture import MEMRAY_MAGIC, _fail
from .memray_own import _capture_of, scan_bytes


class MemrayLiveStream:
    """memray's live mode read while the program runs.

    ``python -m memray run --live-remote --live-port PORT program.py`` waits for one client on
    127.0.0.1:PORT, then streams its capture to it: the same records as a capture file (memray's
    ``SocketSink`` behind the same ``StreamingRecordWriter``), uncompressed, the header's counts
    left at 0.  `poll` receives what has arrived; `capture` is the `MemoryCapture` of the records so
    far (`scan_bytes` over the bytes received, a record still arriving left for the next call), so
    the memory view of it grows as the program runs; `finished` once memray closed the stream (its
    trailer written when the program ended normally); `save` writes the bytes as a capture file
    that memray's own ``FileReader`` reads too.

    Cost: a capture is the scan of every byte received so far (memray's records are delta-coded
    against a pointer cache and per-thread frame stacks, so a later record cannot be read without
    the earlier ones), O(bytes) each time; `capture` returns the same object while no byte has
    arrived, and `blender.live_memory.LiveMemoryView` bounds how often it is asked (its rebuild
    interval grows with the cost of the last one).  The bytes are bounded by ``limits.max_bytes``.
    A peer whose first bytes are not memray's magic is refused at once (one line).
    """

    def __init__(self, port: int, host: str = "127.0.0.1", connect_timeout: float = 30.0, limits=None):
        import socket
        import time

        from .limits import resolve_limits

        self.source = f"memray live {host}:{port}"
        self.limits = resolve_limits(limits)
        self.finished = False  # memray closed the stream
        self._closed = False
        self._buf = bytearray()
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
        self._sock.setblocking(False)

    def poll(self, timeout: float = 0.0) -> int:
        """Receive the bytes that arrive within ``timeout`` seconds (all that is there, at least);
        the number received."""
        import select

        got = 0
        ready = not self._closed and select.select([self._sock], [], [], timeout)[0]
        while ready:
            try:
                chunk = self._sock.recv(1 << 20)
            except BlockingIOError:
                break
            except OSError:
                chunk = b""
            if not chunk:
                self.finished = True
                self.close()
                break
            had = len(self._buf)
            self._buf += chunk
            got += len(chunk)
            if had < len(MEMRAY_MAGIC) and not self._buf.startswith(MEMRAY_MAGIC[:len(self._buf)]):
                self.close()
                _fail(self.source, "byte 0", "not a memray live stream (no 'memray' magic): is the peer "
                                             "`python -m memray run --live-remote`?")
            if len(self._buf) > self.limits.max_bytes:
                self.close()
                _fail(self.source, f"byte {len(self._buf)}", "the stream passed limits.max_bytes")
            ready = select.select([self._sock], [], [], 0)[0]
        return got

    @property
    def n_bytes(self) -> int:
        return len(self._buf)

    def snapshot(self) -> tuple:
        """(the bytes received so far, a copy; `finished`): what `capture_of` reads, taken on the
        thread that polls so that a worker can read it while more arrives."""
        return bytes(self._buf), self.finished

    def capture_of(self, data: bytes, finished: bool, warn: bool = False):
        """The `MemoryCapture` of a `snapshot` (None before the header arrived); safe in a worker
        thread (it reads only ``data``)."""
        if finished and len(data) < len(MEMRAY_MAGIC) + 1:
            _fail(self.source, f"byte {len(data)}", "the peer closed the stream before memray's header")
        raw = scan_bytes(data, self.source, self.limits, partial=not finished)
        if raw is None:
            if finished:
                _fail(self.source, f"byte {len(data)}", "the peer closed the stream inside memray's header")
            return None
        cap = _capture_of(raw, self.source, self.limits, warn, live=not finished)
        cap.meta["live"] = self.source
        cap.meta["running"] = not finished  # its "leaks" are what is held now
        return cap

    def capture(self, warn: bool = False):
        """The `MemoryCapture` of the records received so far (None before the header arrived);
        the same object again while nothing more arrived."""
        n, fin, cap = self._cached
        if n == len(self._buf) and fin == self.finished and cap is not None:
            return cap
        cap = self.capture_of(*self.snapshot(), warn=warn)
        self._cached = (len(self._buf), self.finished, cap)
        return cap

    def save(self, path) -> None:
        with open(path, "wb") as f:
            f.write(self._buf)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
