"""Wire codec of the live trace protocol, version 1 (docs/live-protocol.md).

Encoders build the two frames of a message; decoders validate every field and raise
`BadMessage(reason, detail)` for anything the document does not allow.  Event records are
decoded as one numpy structured array (no Python loop per event).
"""
from __future__ import annotations

import struct

import numpy as np

MAGIC = b"TV3L"
VERSION = 1
HELLO, FUNCTIONS, THREADS, EVENTS, DROPS, BYE, OPEN = 1, 2, 3, 4, 5, 6, 7
TYPE_NAMES = {HELLO: "hello", FUNCTIONS: "functions", THREADS: "threads", EVENTS: "events",
              DROPS: "drops", BYE: "bye", OPEN: "open"}
ENTER, EXIT = 1, 2
FLAG_C = 1

HEADER = struct.Struct("<4sHHQQ")
HELLO_FIXED = struct.Struct("<IqII")
TABLE_HEAD = struct.Struct("<II")
FUNC_ENTRY = struct.Struct("<iHH")
THREAD_ENTRY = struct.Struct("<IQHH")
COUNTS = struct.Struct("<QQ")
EVENT_DTYPE = np.dtype([("type", "<u1"), ("flags", "<u1"), ("thread", "<u2"),
                        ("func", "<u4"), ("ts", "<i8")])
assert EVENT_DTYPE.itemsize == 16 and HEADER.size == 24

MAX_MESSAGE = 4 * 1024 * 1024 + 64
MAX_EVENTS_PER_MESSAGE = (4 * 1024 * 1024 - TABLE_HEAD.size) // EVENT_DTYPE.itemsize
MAX_FUNCTIONS = 1 << 24
MAX_THREADS = 65535
MAX_NAME = 4096
MAX_TICKS_PER_SECOND = 10 ** 9


class BadMessage(Exception):
    """A message the protocol does not allow; ``reason`` is a short counter key."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


# ------------------------------------------------------------------ encoders
def header(mtype: int, session: int, seq: int) -> bytes:
    return HEADER.pack(MAGIC, VERSION, mtype, session, seq)


def _utf8(s: str, limit: int = 65535) -> bytes:
    b = s.encode("utf-8", "surrogatepass")
    if len(b) > limit:  # cut on a character boundary
        b = b[:limit].decode("utf-8", "ignore").encode("utf-8")
    return b


def hello_payload(pid: int, clock_origin_ns: int, ticks_per_second: int, program: str) -> bytes:
    name = _utf8(program, MAX_NAME)
    return HELLO_FIXED.pack(pid & 0xFFFFFFFF, clock_origin_ns, ticks_per_second, len(name)) + name


def functions_payload(first_id: int, entries) -> bytes:
    """``entries``: iterable of (name, file, line)."""
    parts = []
    for name, file, line in entries:
        n, f = _utf8(name), _utf8(file)
        parts.append(FUNC_ENTRY.pack(int(line), len(n), len(f)) + n + f)
    return TABLE_HEAD.pack(first_id, len(parts)) + b"".join(parts)


def threads_payload(first_id: int, entries) -> bytes:
    """``entries``: iterable of (pid, tid, name, process_name)."""
    parts = []
    for pid, tid, name, pname in entries:
        n, p = _utf8(name), _utf8(pname)
        parts.append(THREAD_ENTRY.pack(pid & 0xFFFFFFFF, tid & 0xFFFFFFFFFFFFFFFF, len(n), len(p)) + n + p)
    return TABLE_HEAD.pack(first_id, len(parts)) + b"".join(parts)


def events_payload(records: np.ndarray) -> bytes:
    """``records``: an EVENT_DTYPE array (≤ MAX_EVENTS_PER_MESSAGE)."""
    records = np.ascontiguousarray(records, EVENT_DTYPE)
    return TABLE_HEAD.pack(records.shape[0], 0) + records.tobytes()


def counts_payload(a: int, b: int) -> bytes:
    return COUNTS.pack(a, b)


# ------------------------------------------------------------------ decoders
def decode_header(frame) -> tuple[int, int, int]:
    """(type, session, seq) of a header frame, or BadMessage."""
    if len(frame) != HEADER.size:
        raise BadMessage("header_size", f"{len(frame)} bytes, expected {HEADER.size}")
    magic, version, mtype, session, seq = HEADER.unpack(frame)
    if magic != MAGIC:
        raise BadMessage("magic", repr(bytes(magic)))
    if version != VERSION:
        raise BadMessage("version", f"version {version}, this viewer reads {VERSION}")
    if mtype not in TYPE_NAMES:
        raise BadMessage("message_type", str(mtype))
    if session == 0:
        raise BadMessage("session", "session id 0")
    return mtype, session, seq


def _text(buf, off: int, n: int, what: str) -> str:
    try:
        return bytes(buf[off: off + n]).decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadMessage("utf8", f"{what} at byte {off + e.start}") from None


def decode_hello(p) -> tuple[int, int, int, str]:
    if len(p) < HELLO_FIXED.size:
        raise BadMessage("truncated", f"hello of {len(p)} bytes")
    pid, origin, tps, n = HELLO_FIXED.unpack_from(p, 0)
    if not 1 <= tps <= MAX_TICKS_PER_SECOND:
        raise BadMessage("ticks_per_second", str(tps))
    if n > MAX_NAME or len(p) != HELLO_FIXED.size + n:
        raise BadMessage("payload_size", f"hello of {len(p)} bytes with a {n}-byte name")
    return pid, origin, tps, _text(p, HELLO_FIXED.size, n, "program name")


def table_head(p, entry: struct.Struct, limit: int, what: str) -> tuple[int, int]:
    """(first id, entry count) of a FUNCTIONS/THREADS payload, checked against ``limit``
    and the payload's size -- before any entry is decoded (a viewer checks its quotas
    between this and `table_entries`)."""
    if len(p) < TABLE_HEAD.size:
        raise BadMessage("truncated", f"{what} of {len(p)} bytes")
    first, count = TABLE_HEAD.unpack_from(p, 0)
    if first + count > limit:
        raise BadMessage(f"{what}_id", f"ids {first}..{first + count - 1} over the limit {limit}")
    if count * entry.size > len(p) - TABLE_HEAD.size:
        raise BadMessage("payload_size", f"{count} {what} entries cannot fit in {len(p)} bytes")
    return first, count


def table_entries(p, entry: struct.Struct, n_text: int, count: int, what: str):
    """The entries of a table payload one by one (a generator: a viewer decodes a big
    table in slices across polls); BadMessage where one is bad, or after the last when
    bytes follow it."""
    off = TABLE_HEAD.size
    for _ in range(count):
        if off + entry.size > len(p):
            raise BadMessage("truncated", f"{what} entry at byte {off}")
        fields = entry.unpack_from(p, off)
        off += entry.size
        texts = []
        for n in fields[-n_text:]:
            if off + n > len(p):
                raise BadMessage("truncated", f"{what} text at byte {off}")
            texts.append(_text(p, off, n, what))
            off += n
        yield fields[:-n_text] + tuple(texts)
    if off != len(p):
        raise BadMessage("payload_size", f"{len(p) - off} bytes after the last {what} entry")


def _table(p, entry: struct.Struct, n_text: int, limit: int, what: str):
    first, count = table_head(p, entry, limit, what)
    out, off = [], TABLE_HEAD.size
    for _ in range(count):
        if off + entry.size > len(p):
            raise BadMessage("truncated", f"{what} entry at byte {off}")
        fields = entry.unpack_from(p, off)
        off += entry.size
        lens = fields[-n_text:]
        texts = []
        for k, n in enumerate(lens):
            if off + n > len(p):
                raise BadMessage("truncated", f"{what} text at byte {off}")
            texts.append(_text(p, off, n, what))
            off += n
        out.append(fields[:-n_text] + tuple(texts))
    if off != len(p):
        raise BadMessage("payload_size", f"{len(p) - off} bytes after the last {what} entry")
    return first, out


def decode_functions(p):
    """(first_id, [(line, name, file), ...])."""
    return _table(p, FUNC_ENTRY, 2, MAX_FUNCTIONS, "function")


def decode_threads(p):
    """(first_id, [(pid, tid, name, process_name), ...])."""
    return _table(p, THREAD_ENTRY, 2, MAX_THREADS, "thread")


def decode_events(p, n_threads: int, n_functions: int) -> np.ndarray:
    """The EVENT_DTYPE records of an EVENTS payload, every field validated (vectorised)."""
    if len(p) < TABLE_HEAD.size:
        raise BadMessage("truncated", f"events of {len(p)} bytes")
    count, reserved = TABLE_HEAD.unpack_from(p, 0)
    if reserved:
        raise BadMessage("reserved", "events header reserved field is not 0")
    if count > MAX_EVENTS_PER_MESSAGE or len(p) != TABLE_HEAD.size + 16 * count:
        raise BadMessage("payload_size", f"{count} events need {TABLE_HEAD.size + 16 * count} bytes, got {len(p)}")
    ev = np.frombuffer(p, EVENT_DTYPE, count, TABLE_HEAD.size)
    if count == 0:
        return ev
    t = ev["type"]
    if np.any((t != ENTER) & (t != EXIT)):
        i = int(np.flatnonzero((t != ENTER) & (t != EXIT))[0])
        raise BadMessage("event_type", f"event {i}: type {t[i]}")
    if np.any(ev["flags"] & ~np.uint8(FLAG_C)):
        raise BadMessage("reserved", "event flags other than bit 0")
    th = ev["thread"]
    if int(th.max()) >= n_threads:
        i = int(np.flatnonzero(th >= n_threads)[0])
        raise BadMessage("thread_id", f"event {i}: thread {th[i]}, {n_threads} known")
    fn = ev["func"]
    if int(fn.max()) >= n_functions:
        i = int(np.flatnonzero(fn >= n_functions)[0])
        raise BadMessage("func_id", f"event {i}: function {fn[i]}, {n_functions} known")
    ts = ev["ts"]
    if int(ts.min()) < 0:
        raise BadMessage("timestamp", f"event {int(np.argmin(ts))}: negative timestamp")
    order = np.argsort(th, kind="stable")
    ts_o, th_o = ts[order], th[order]
    back = (ts_o[1:] < ts_o[:-1]) & (th_o[1:] == th_o[:-1])
    if np.any(back):
        raise BadMessage("timestamp", f"event {int(order[np.flatnonzero(back)[0] + 1])}: "
                                      "time goes backwards within its thread")
    return ev


def decode_counts(p, what: str) -> tuple[int, int]:
    if len(p) != COUNTS.size:
        raise BadMessage("payload_size", f"{what} of {len(p)} bytes, expected {COUNTS.size}")
    return COUNTS.unpack(p)
