"""Hostile Perfetto protobuf traces for `tracevis3d.io.perfetto` (and the hostile-input fuzzer).

`CASES` is a list of (name, bytes factory, expected regex).  A factory takes no argument (or a
size ``n``, where the case scales) and returns the file's bytes, written here with a few lines of
protobuf wire encoding (no protobuf package needed).  `outcome` loads the bytes the way
`tracevis3d.load` does and says in one line what happened: the `TraceFormatError`'s message, or
"loaded: <Trace ...>" followed by the repairs' warnings; the regex is searched in that line.
Every refusal names the file (`SOURCE`) and a byte offset.
"""
from __future__ import annotations

import random
import struct
import warnings

SOURCE = "hostile.pftrace"


# ------------------------------------------------------------------ protobuf wire encoding
def varint(v: int) -> bytes:
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def fv(num: int, v: int) -> bytes:
    """A varint field."""
    return varint(num << 3) + varint(v)


def fb(num: int, payload: bytes) -> bytes:
    """A length-delimited field (bytes, string, message)."""
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def ff64(num: int, v: int) -> bytes:
    return varint(num << 3 | 1) + struct.pack("<Q", v & ((1 << 64) - 1))


def packet(*fields: bytes) -> bytes:
    """A Trace.packet."""
    return fb(1, b"".join(fields))


SEQ = 7
THREAD_UUID = 10


def head(seq: int = SEQ, uuid: int = THREAD_UUID, pid: int = 1, tid: int = 2) -> bytes:
    """A sequence cleared with its default track, and that track's descriptor (a thread)."""
    cleared = packet(fv(10, seq), fv(13, 1), fb(59, fb(11, fv(11, uuid))))
    thread = fb(4, fv(1, pid) + fv(2, tid) + fb(5, b"main"))
    desc = packet(fv(10, seq), fv(13, 2), fb(60, fv(1, uuid) + thread))
    return cleared + desc


def event(ts: int, ev_type: int, name: bytes | None = None, name_iid: int | None = None, extra: bytes = b"",
          seq: int = SEQ, interned: bytes = b"") -> bytes:
    """A TrackEvent packet at ``ts`` ns (BEGIN 1, END 2, INSTANT 3, COUNTER 4)."""
    te = fv(9, ev_type)
    if name is not None:
        te += fb(23, name)
    if name_iid is not None:
        te += fv(10, name_iid)
    pk = [fv(8, ts), fv(10, seq), fv(13, 2), fb(11, te + extra)]
    if interned:
        pk.append(fb(12, interned))
    return packet(*pk)


def good(n: int = 3) -> bytes:
    """A valid trace: ``n`` slices on one thread."""
    out = [head()]
    for k in range(n):
        out.append(event(1000 + 100 * k, 1, b"work"))
        out.append(event(1050 + 100 * k, 2))
    return b"".join(out)


# ------------------------------------------------------------------ the cases
def truncated() -> bytes:
    d = good(5)
    return d[: len(d) - 3]  # inside the last packet


def truncated_first() -> bytes:
    return good(1)[:5]


def varint_never_ends() -> bytes:
    return head() + packet(fv(10, SEQ)) + b"\x0a" + b"\xff" * 16


def varint_never_ends_inside() -> bytes:
    return good(1) + packet(b"\x40" + b"\xff" * 12, fv(10, SEQ))


def length_past_end() -> bytes:
    body = varint(11 << 3 | 2) + varint(100) + fv(9, 1)  # a TrackEvent of 100 bytes in a packet of 5
    return good(1) + packet(fv(10, SEQ), body)


def nested_length_overflow() -> bytes:
    ann = varint(4 << 3 | 2) + varint(60) + fb(10, b"k")  # a debug annotation longer than its TrackEvent
    return good(1) + packet(fv(8, 5000), fv(10, SEQ), fv(13, 2), fb(11, fv(9, 3) + fb(23, b"i") + ann),
                            fb(12, b"x" * 80))


def wrong_wire_type() -> bytes:
    return good(1) + packet(fb(8, b"\x01\x02"), fv(10, SEQ))  # timestamp (varint) as bytes


def many_interned(n: int = 1_000_000) -> bytes:
    names = b"".join(fb(2, fv(1, k + 1) + fb(2, b"n%d" % k)) for k in range(n))
    return head() + event(1000, 1, name_iid=n, interned=names) + event(2000, 2)


def iid_undefined() -> bytes:
    return good(1) + event(5000, 1, name_iid=42) + event(6000, 2)


def iid_out_of_range() -> bytes:
    return good(1) + event(5000, 1, name_iid=(1 << 64) - 1) + event(6000, 2)


def end_without_begin() -> bytes:
    return good(1) + event(5000, 2)


def begin_never_ended() -> bytes:
    return good(1) + event(5000, 1, b"open") + event(6000, 3, b"mark")


def timestamps_backwards() -> bytes:
    return head() + event(9000, 1, b"late") + event(9500, 2) + event(1000, 1, b"early") + event(1500, 2)


def huge_timestamps() -> bytes:
    return good(1) + event((1 << 64) - 5, 1, b"huge") + event((1 << 64) - 1, 2)


def huge_clock_unit() -> bytes:
    """A sequence clock whose unit makes every time overflow int64 nanoseconds."""
    snap = fb(6, fb(1, fv(1, 64) + fv(2, 1 << 40) + fv(3, 1) + fv(4, 1 << 40)))
    return good(1) + packet(fv(10, SEQ), snap) + packet(fv(8, 5), fv(58, 64), fv(10, SEQ), fv(13, 2),
                                                        fb(11, fv(9, 3) + fb(23, b"far")))


def track_cycle() -> bytes:
    a = packet(fv(10, SEQ), fv(13, 2), fb(60, fv(1, 100) + fv(5, 101) + fb(2, b"A")))
    b = packet(fv(10, SEQ), fv(13, 2), fb(60, fv(1, 101) + fv(5, 100) + fb(2, b"B")))
    on_a = event(3000, 1, b"async", extra=fv(11, 100)) + event(4000, 2, extra=fv(11, 100))
    return good(1) + a + b + on_a


def zero_length() -> bytes:
    return b""


def random_0a(seed: int = 1, n: int = 4096) -> bytes:
    rng = random.Random(seed)
    return b"\x0a" + bytes(rng.randrange(256) for _ in range(n))


CASES = [
    ("truncated", truncated, r"loaded: <Trace 5 calls.*the file ends inside a packet"),
    ("truncated_first", truncated_first, r"hostile\.pftrace: cut short: the first packet \(at byte 0\)"),
    ("varint_never_ends", varint_never_ends, r"hostile\.pftrace: .*varint longer than 10 bytes.* at byte \d+"),
    ("varint_never_ends_inside", varint_never_ends_inside,
     r"hostile\.pftrace: .*varint longer than 10 bytes.* at byte \d+ \(in a TracePacket"),
    ("length_past_end", length_past_end,
     r"hostile\.pftrace: .*length runs past the end of its enclosing message at byte \d+ \(in a TracePacket, field 11"),
    ("nested_length_overflow", nested_length_overflow,
     r"hostile\.pftrace: .*length runs past the end of its enclosing message at byte \d+ \(in a TrackEvent, field 4"),
    ("wrong_wire_type", wrong_wire_type,
     r"hostile\.pftrace: .*known field with the wrong wire type at byte \d+ \(in a TracePacket, field 8"),
    ("many_interned", many_interned, r"^loaded: <Trace 1 calls[^;]*>; warnings: none$"),
    ("iid_undefined", iid_undefined, r"loaded: <Trace 2 calls.*name_iid that its sequence never interned.*byte \d+"),
    ("iid_out_of_range", iid_out_of_range,
     r"loaded: <Trace 2 calls.*name_iid that its sequence never interned.*byte \d+"),
    ("end_without_begin", end_without_begin, r"loaded: <Trace 1 calls.*TYPE_SLICE_END with no open slice.*byte \d+"),
    ("begin_never_ended", begin_never_ended, r"loaded: <Trace 2 calls.*never ended: closed it at its track's last"),
    ("timestamps_backwards", timestamps_backwards, r"loaded: <Trace 2 calls.*timestamps going backwards.*byte \d+"),
    ("huge_timestamps", huge_timestamps, r"loaded: <Trace 1 calls.*time beyond the range.*byte \d+"),
    ("huge_clock_unit", huge_clock_unit, r"loaded: <Trace 1 calls.*time beyond the range.*byte \d+"),
    ("track_cycle", track_cycle, r"loaded: <Trace 1 calls.*parent_uuid links form a cycle"),
    ("zero_length", zero_length, r"hostile\.pftrace: empty file"),
    ("random_0a", random_0a, r"hostile\.pftrace: .*byte \d+"),
]


def outcome(data: bytes, source: str = SOURCE) -> str:
    """What loading ``data`` (as `tracevis3d.load` reads a file's bytes) gives, in one line: the
    error's message, or "loaded: <Trace ...>; warnings: ..." (the repairs' warnings, or none)."""
    from tracevis3d.io import load_bytes
    from tracevis3d.model import TraceFormatError, TraceWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            tr = load_bytes(data, source=source)
        except TraceFormatError as e:
            return str(e)
    said = [str(w.message) for w in caught if issubclass(w.category, TraceWarning)]
    return f"loaded: {tr!r}; warnings: {' | '.join(said) or 'none'}"
