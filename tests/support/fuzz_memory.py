"""Structure-aware mutations of memory captures (the fuzzer's ``memray``, ``memdump`` and ``memlive``
kinds, issue 78): real captures parsed and damaged in their structure, then read the way the
memory view reads them.

- ``memray``: a memray capture of tests/data/memray/ (recorded by ``memray run`` from
  `memray_captures.SEED_PROGRAM`: LZ4-compressed, raw, ``--trace-python-allocators``,
  ``--native``, ``--aggregate``) inflated, its header and records parsed (`records`: memray's
  format as `kernels.memray_scan`'s docstring gives it) and damaged: a record's type byte, a
  varint field at its maximum or past 64 bits, a line table's length past the end, a name
  without its end or 10^5 bytes long or not UTF-8, a frame push of a code object no record
  defines, thread ids at their edges and thousands of new threads, a stack 10^3 to 2 x 10^5 frames
  deep (with thousands of leaves on it, pops missing or too many), memory records out of order
  and past `memray_own.MAX_SNAPSHOTS`, the header's counts, times, version, flags and skipped
  frames at their edges, records repeated, dropped or swapped, the capture cut inside or between
  records, its trailer dropped or zero bytes after it; written back, LZ4-compressed again (or its
  frame damaged) at random.  `tracevis3d.load_memory` must give a `MemoryCapture` that
  `check_capture` accepts and the memory view lays out (`layout.memory.memory_layout`), or a
  one-line `TraceFormatError` naming the file.
- ``memdump``: Chrome memory-infra dumps (tests/data/formats/chromium/chromium-memory-infra.json.gz,
  cut to a few of its dumps; and ``heaps_v2`` dumps written here as Chrome writes them) with their
  dumps damaged: hex values that are not hex (non-ASCII digits, fullwidth letters, 2^64, 2^53 + 1,
  floats), heap node ids huge, negative, strings or non-ASCII digits, parent chains thousands deep
  or looping, maps redefined by later dumps, list lengths that differ, thousands of processes,
  ``args.dumps`` as JSON text, plus `fuzz_structured.mutate_json` inside a dump.  Both readers
  of the file must answer: `tracevis3d.load_memory` (the memory view) and `tracevis3d.load` (the
  dumps' counters).
- ``memlive``: a ``memray`` input (uncompressed, the header's counts 0 as memray's live mode
  writes them) sent by a real loopback peer to `MemrayLiveStream` in pieces, a capture asked after
  each piece; the peer closes, resets the connection, or stalls with the socket open (then the
  reader closes it).  Every `capture` gives None (before the header), a `MemoryCapture`, or a
  one-line `TraceFormatError` naming the peer.

`build(rng, family)` returns (bytes, load options, label); `run_case` (in the fuzzer's worker)
says "ok", "error" or what went wrong.
"""
from __future__ import annotations

import gzip
import json
import pathlib
import random
import socket
import struct
import threading

HERE = pathlib.Path(__file__).resolve().parent
MEMRAY_DIR = HERE.parent / "data" / "memray"
CHROME_DUMPS = HERE.parent / "data" / "formats" / "chromium" / "chromium-memory-infra.json.gz"

#: the most bytes a mutation may add: memory stays linear in the input
MAX_GROWTH = 2_000_000
LZ4_MAGIC = b"\x04\x22\x4d\x18"

_cache: dict = {}


# ============================================================================ memray's format
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


def zigzag(v: int) -> bytes:
    return varint(((v << 1) ^ (v >> 63)) & ((1 << 64) - 1))


def _read_varint(data: bytes, p: int):
    """(value, next position); position past the end when the varint is cut."""
    v = shift = 0
    while p < len(data):
        b = data[p]
        p += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            return v, p
        shift += 7
        if shift > 70:
            return v, p
    return v, len(data) + 1


def _string_end(data: bytes, p: int) -> int:
    q = data.find(b"\0", p)
    return len(data) + 1 if q < 0 else q + 1


def header(data: bytes) -> tuple:
    """({field: (start, end)}, end of the header) of an uncompressed capture's header (memray's
    ``HeaderRecord``, `memray_own._header`); None when it is cut."""
    if len(data) < 49 or not data.startswith(b"memray\0"):
        return None
    f = {"version": (7, 11), "python_version": (11, 15), "native": (15, 16), "file_format": (16, 17),
         "n_allocations": (17, 25), "n_frames": (25, 33), "start": (33, 41), "end": (41, 49)}
    q = _string_end(data, 49)
    f["command_line"] = (49, q - 1)
    p = q
    if p + 23 > len(data):
        return None
    f.update(pid=(p, p + 4), main_tid=(p + 4, p + 12), skipped=(p + 12, p + 20), python_allocator=(p + 20, p + 21),
             trace_python=(p + 21, p + 22))
    p = _string_end(data, p + 23)
    for _ in range(2):  # site-packages, sys.path: strings up to an empty one
        while p < len(data):
            q = _string_end(data, p)
            if q == p + 1:
                p = q
                break
            p = q
    return (f, p) if p <= len(data) else None


def records(data: bytes, p: int, native: bool) -> tuple:
    """([(kind, start, end, {field: (start, end)})], where parsing stopped): the records of an
    ALL_ALLOCATIONS capture from ``p`` (memray's format: `kernels.memray_scan`); parsing stops at
    the trailer, an unknown type or a record cut by the end."""
    out = []
    n = len(data)
    while p < n:
        s, tok = p, data[p]
        p += 1
        f: dict = {}

        def vi(name):
            nonlocal p
            a = p
            _, p = _read_varint(data, p)
            f[name] = (a, p)

        def st(name):
            nonlocal p
            a = p
            p = _string_end(data, p)
            f[name] = (a, p - 1)

        if tok & 0x80:
            kind = "alloc"
            if (tok >> 3) & 15 == 15:
                vi("pointer")
            al = tok & 7
            if al == 0:
                f["allocator"] = (p, p + 1)
                al = data[p] if p < n else 0
                p += 1
            simple = al in (1, 5)
            if native and not simple:
                vi("native")
            if not simple:
                vi("size")
        elif tok & 0x40:
            kind = "push"
            vi("code")
            vi("offset")
        elif tok & 0x20:
            kind = "object"
            if ((tok & 0x1F) >> 1) & 15 == 15:
                vi("pointer")
            if native and tok & 1:
                vi("native")
        elif tok & 0x10:
            kind = "pop"
        elif tok == 1:
            out.append(("trailer", s, p, f))
            return out, p
        elif tok == 2:
            kind = "memory"
            vi("rss")
            vi("ms")
        elif tok == 5:
            kind = "native_index"
            vi("ip")
            vi("index")
        elif tok == 6:
            kind = "map_start"
        elif tok == 7:
            kind = "segments"
            st("name")
            a = p
            count, p = _read_varint(data, p)
            f["count"] = (a, p)
            p += 8
            for _ in range(min(count, n)):
                if p >= n or data[p] != 8:
                    break
                _, p = _read_varint(data, p + 9)
        elif tok == 10:
            kind = "thread"
            st("name")
        elif tok == 12:
            kind = "switch"
            f["tid"] = (p, p + 8)
            p += 8
        elif tok == 14:
            kind = "code"
            vi("id")
            st("function")
            st("file")
            vi("firstline")
            a = p
            ln, p = _read_varint(data, p)
            f["table_len"] = (a, p)
            f["table"] = (p, p + ln)
            p += ln
        else:
            return out, s
        if p > n:
            return out, s
        out.append((kind, s, p, f))
    return out, p


def _switch(tid: int) -> bytes:
    return bytes([12]) + struct.pack("<Q", tid & ((1 << 64) - 1))


def _malloc(delta: int, size: int) -> bytes:
    """An allocation (malloc) of an address that missed the pointer cache."""
    return bytes([0x80 | (15 << 3) | 3]) + zigzag(delta) + varint(size)


def _pops(n: int) -> bytes:
    out = bytearray()
    while n > 0:
        k = min(n, 16)
        out.append(0x10 | (k - 1))
        n -= k
    return bytes(out)


#: varint values at their edges: unsigned 64-bit limits, past int64 and int32, zigzag's largest
_VARINT_EDGES = [(1 << 64) - 1, 1 << 63, (1 << 63) - 1, 1 << 32, (1 << 32) - 1, 1 << 31, (1 << 31) - 1, 0, 1,
                 10 ** 18, (1 << 53) + 1]
#: varints written longer than memray writes them: 10 bytes ending past 64 bits, 11 bytes, a never-ending one
_RAW_VARINTS = [b"\xff" * 9 + b"\x7f", b"\x80" * 10 + b"\x00", b"\xff" * 12, b"\x80\x00", b"\xff" * 9 + b"\x01"]
#: names: not UTF-8, lone surrogates, right-to-left marks, non-ASCII digits, NUL-less and long
_NAMES = [b"\xff\xfe", "\ud800".encode("utf-8", "surrogatepass"), "\u202eevil\u202c".encode(), "\u0661\u0662".encode(),
          "\uff11\uff12\u00b2".encode(), b"", b"x" * 100_000, b"<module>", "e\u0301".encode() * 3000]


def _field(data: bytes, span) -> bytes:
    return data[span[0]:span[1]]


def _replace(rec: bytes, base: int, span, new: bytes) -> bytes:
    a, b = span[0] - base, span[1] - base
    return rec[:a] + new + rec[b:]


def mutate_memray(data: bytes, rng: random.Random, live: bool = False):
    """(bytes, op label): one structural mutation of an uncompressed memray capture."""
    parsed = header(data)
    if parsed is None:
        return _bytes_damage(data, rng)
    hf, hend = parsed
    native = data[15] != 0
    if data[16] != 0:  # an aggregated capture: another record format; its header and bytes
        return (_header_op(data, hf, rng) if rng.random() < 0.5 else _bytes_damage(data, rng))
    recs, stop = records(data, hend, native)
    tail = data[stop:]
    if not recs or rng.random() < 0.12:
        return _header_op(data, hf, rng)
    parts = [data[s:e] for _, s, e, _ in recs]
    kinds = [k for k, _, _, _ in recs]
    op = rng.choice(["token", "varint", "varint", "rawvarint", "length", "name", "frame", "thread", "threads",
                     "deep", "deep", "pops", "memory", "snapshots", "repeat", "drop", "swap", "cut", "cut",
                     "trailer", "zeros", "alloc", "table"])
    i = rng.randrange(len(recs))
    kind, s, e, f = recs[i]
    label = op
    if op == "token":
        new_tok = rng.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0x10, 0x20, 0x40, 0x80, 0xFF])
        parts[i] = bytes([new_tok]) + parts[i][1:]
        label += f" {kind}->{new_tok}"
    elif op in ("varint", "rawvarint"):
        cands = [(j, name) for j, (_k, _s, _e, ff) in enumerate(recs) for name in ff
                 if name not in ("function", "file", "name", "table", "tid", "allocator")]
        if not cands:
            return _header_op(data, hf, rng)
        j, name = rng.choice(cands)
        _k, sj, _e, ff = recs[j]
        new = varint(rng.choice(_VARINT_EDGES)) if op == "varint" else rng.choice(_RAW_VARINTS)
        parts[j] = _replace(parts[j], sj, ff[name], new)  # a table's length: its bytes stay, the length lies
        label += f" {recs[j][0]}.{name}"
    elif op == "length":  # a line table's (or segment count's) length past the end or huge
        cands = [j for j, r in enumerate(recs) if r[0] in ("code", "segments")]
        if not cands:
            return _header_op(data, hf, rng)
        j = rng.choice(cands)
        _k, sj, _e, ff = recs[j]
        key = "table_len" if recs[j][0] == "code" else "count"
        v = rng.choice([len(data) - sj + rng.randrange(1, 50), 1 << 31, 1 << 62, 0, (1 << 64) - 1])
        parts[j] = _replace(parts[j], sj, ff[key], varint(v))
        label += f" {recs[j][0]}={v}"
    elif op == "name":
        cands = [(j, nm) for j, r in enumerate(recs) for nm in ("function", "file", "name") if nm in r[3]]
        if not cands:
            return _header_op(data, hf, rng)
        j, nm = rng.choice(cands)
        _k, sj, _e, ff = recs[j]
        if rng.random() < 0.25:  # its end removed: the name runs on into the next records
            a, b = ff[nm]
            parts[j] = parts[j][:b - sj] + b"\x01" + parts[j][b - sj + 1:]
            label += f" {recs[j][0]}.{nm} unended"
        else:
            new = rng.choice(_NAMES)
            parts[j] = _replace(parts[j], sj, ff[nm], new)
            label += f" {recs[j][0]}.{nm} {new[:8]!r}"
    elif op == "frame":  # a push of a code object no record defines, or at an edge offset
        cands = [j for j, r in enumerate(recs) if r[0] == "push"]
        if not cands:
            return _header_op(data, hf, rng)
        j = rng.choice(cands)
        _k, sj, _e, ff = recs[j]
        if rng.random() < 0.5:
            parts[j] = _replace(parts[j], sj, ff["code"], varint(rng.choice([10 ** 6, (1 << 64) - 1, 0, 1 << 40])))
        else:
            parts[j] = _replace(parts[j], sj, ff["offset"], zigzag(rng.choice([-1, -(1 << 40), 1 << 31, 1 << 40, 3])))
        label += " push"
    elif op == "thread":
        cands = [j for j, r in enumerate(recs) if r[0] == "switch"]
        if not cands:
            return _header_op(data, hf, rng)
        j = rng.choice(cands)
        if rng.random() < 0.3:
            parts[j] = b""  # a switch dropped: the records after it on the wrong thread (or none)
            label += " dropped"
        else:
            main_tid = struct.unpack_from("<Q", data, hf["main_tid"][0])[0]
            tid = rng.choice([0, (1 << 64) - 1, 1 << 63, 1, main_tid])
            parts[j] = _switch(tid)
            label += f" tid={tid}"
    elif op == "threads":  # thousands of new threads, then back to the thread that was current
        k = rng.choice([100, 5000, 50_000])
        cur = _current_tid(data, recs, i)
        base = rng.randrange(1 << 40)
        parts[i] = b"".join(_switch(base + t) + (bytes([10]) + b"t%d\0" % t if t % 7 == 0 else b"")
                            for t in range(k)) + (_switch(cur) if cur is not None else b"") + parts[i]
        label += f" x{k}"
    elif op == "deep":  # a stack d deep on the current thread, leaves and an allocation on it
        codes = [struct_id for struct_id in _code_ids(data, recs)] or [1]
        d = rng.choice([1000, 10_000, 99_999, 100_001, 200_000])
        leaves = rng.choice([1, 10, 3000])
        code = rng.choice(codes)
        push = bytes([0x40]) + varint(code) + zigzag(rng.choice([0, 2, 4]))
        body = push * d
        for k in range(leaves):
            body += bytes([0x40]) + varint(rng.choice(codes)) + zigzag(2 * k) + _malloc(8 * (k + 1), 32 + k % 50) \
                + _pops(1)
        pops = rng.choice([d, d, d - 1, d + 1, 0])
        body += _pops(pops)
        at = max(i, _first_switch(recs) + 1)
        if at > len(parts):
            at = len(parts)
        parts.insert(at, body)
        label += f" {d} leaves {leaves} pops {pops}"
    elif op == "pops":
        parts.insert(i, _pops(rng.choice([1, 16, 17, 1000])))
    elif op == "memory":
        cands = [j for j, r in enumerate(recs) if r[0] == "memory"]
        if cands:
            j = rng.choice(cands)
            _k, sj, _e, ff = recs[j]
            parts[j] = _replace(parts[j], sj, ff[rng.choice(["rss", "ms"])], varint(rng.choice(_VARINT_EDGES)))
        else:
            parts.insert(i, bytes([2]) + varint(rng.choice(_VARINT_EDGES)) + varint(rng.choice(_VARINT_EDGES)))
    elif op == "snapshots":  # memory records past memray's 10,000, times going back
        k = rng.choice([100, 12_000, 40_000])
        back = rng.random() < 0.5
        parts.insert(i, b"".join(bytes([2]) + varint(1 << 20) + varint((k - t) if back else t) for t in range(k)))
        label += f" x{k}{' backwards' if back else ''}"
    elif op == "repeat":
        j = rng.randrange(len(parts))
        m = rng.randint(1, min(50, len(parts) - j))
        chunk = b"".join(parts[j:j + m])
        times = max(2, min(1000, MAX_GROWTH // max(len(chunk), 1)))
        parts[j:j + m] = [chunk * times]
        label += f" {m} records x{times}"
    elif op == "drop":
        del parts[i:i + rng.randint(1, 20)]
    elif op == "swap":
        j = rng.randrange(len(parts))
        parts[i], parts[j] = parts[j], parts[i]
    elif op == "cut":
        body = b"".join(parts)
        at = rng.randrange(len(body) + 1)
        return data[:hend] + body[:at], f"cut at {hend + at} of {len(data)}"
    elif op == "trailer":
        if kinds and kinds[-1] == "trailer":
            parts.pop()
        tail = b""
        label += " dropped"
    elif op == "zeros":
        tail = tail + b"\0" * rng.choice([1, 7, 4096])
    elif op == "alloc":
        cands = [j for j, r in enumerate(recs) if r[0] == "alloc"]
        j = rng.choice(cands) if cands else i
        a = rng.choice([0, 16, 255, 15, 6, 7])
        size = rng.choice(_VARINT_EDGES)
        ci = rng.choice([0, 3, 14, 15])
        new = bytes([0x80 | (ci << 3)]) + (zigzag(rng.choice([-(1 << 62), 1 << 62, -1, 1])) if ci == 15 else b"") \
            + bytes([a]) + (varint(size) if a not in (1, 5) else b"")
        parts.insert(j, new)
        label += f" allocator {a} size {size} cache {ci}"
    elif op == "table":
        cands = [j for j, r in enumerate(recs) if r[0] == "code"]
        if not cands:
            return _header_op(data, hf, rng)
        j = rng.choice(cands)
        _k, sj, _e, ff = recs[j]
        n = rng.choice([0, 1, 100, 1000, 200_000])
        table = bytes(rng.randrange(256) for _ in range(min(n, 1000))) * max(1, n // 1000)
        if rng.random() < 0.5:
            table = bytes([0xE8, 0x02]) * (len(table) // 2)
        new = varint(len(table)) + table
        a = ff["table_len"][0] - sj
        b = ff["table"][1] - sj
        parts[j] = parts[j][:a] + new + parts[j][b:]
        if rng.random() < 0.5:
            parts[j] = _replace(parts[j], sj, ff["firstline"], zigzag(rng.choice([1 << 31, -(1 << 31), 1 << 40, -1])))
        label += f" {len(table)}"
    out = data[:hend] + b"".join(parts) + tail
    return out, label


def _code_ids(data: bytes, recs: list) -> list:
    out = []
    for kind, _s, _e, f in recs:
        if kind == "code":
            out.append(_read_varint(data, f["id"][0])[0])
    return out


def _first_switch(recs: list) -> int:
    for j, r in enumerate(recs):
        if r[0] == "switch":
            return j
    return 0


def _current_tid(data: bytes, recs: list, i: int):
    tid = None
    for kind, s, _e, _f in recs[:i]:
        if kind == "switch":
            tid = struct.unpack_from("<Q", data, s + 1)[0]
    return tid


#: header fields and values at their edges (memray_own._header reads them)
_HEADER_EDGES = {
    "version": [12, 14, 0, -1, 1 << 30], "python_version": [0x030A0000, 0x03070000, 0x04000000, -1, 0],
    "native": [1, 2, 255], "file_format": [1, 2, 255],
    "n_allocations": [0, 1, (1 << 64) - 1, 1 << 63, 10 ** 9], "n_frames": [(1 << 64) - 1],
    "start": [0, -1, -(1 << 63), (1 << 63) - 1, 10 ** 18], "end": [0, -1, -(1 << 63), (1 << 63) - 1, 10 ** 18],
    "pid": [-1, 0, (1 << 31) - 1, -(1 << 31)], "main_tid": [0, (1 << 64) - 1],
    "skipped": [1, 5, 1000, (1 << 64) - 1, 1 << 63], "python_allocator": [0, 7, 255], "trace_python": [2, 255],
}
_FORMATS = {"version": "<i", "python_version": "<i", "native": "<B", "file_format": "<B", "n_allocations": "<Q",
            "n_frames": "<Q", "start": "<q", "end": "<q", "pid": "<i", "main_tid": "<Q", "skipped": "<Q",
            "python_allocator": "<B", "trace_python": "<B"}


def _header_op(data: bytes, hf: dict, rng: random.Random):
    """A header field at an edge, or its command line long / not UTF-8 / without its end."""
    if rng.random() < 0.15:
        a, b = hf["command_line"]
        new = rng.choice(_NAMES + [b"python \xd9\xa1\xd9\xa2.py"])
        return data[:a] + new + data[b:], f"header command_line {new[:8]!r}"
    name = rng.choice(sorted(_HEADER_EDGES))
    v = rng.choice(_HEADER_EDGES[name])
    a, b = hf[name]
    return data[:a] + struct.pack(_FORMATS[name], v) + data[b:], f"header {name}={v}"


def _bytes_damage(data: bytes, rng: random.Random):
    out = bytearray(data)
    if out and rng.random() < 0.5:
        del out[rng.randrange(len(out)):]
        return bytes(out), "bytes cut"
    for _ in range(rng.randint(1, 8)):
        if out:
            out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out), "bytes flipped"


def inflate(data: bytes) -> tuple:
    """(uncompressed bytes, whether they were LZ4-compressed)."""
    if data.startswith(LZ4_MAGIC):
        import lz4.frame

        return lz4.frame.decompress(data), True
    return data, False


def memray_seeds() -> list:
    """(name, inflated bytes, compressed) of the captures in tests/data/memray/ (cached)."""
    if "memray" not in _cache:
        out = []
        for p in sorted(MEMRAY_DIR.glob("*.bin")):
            raw, comp = inflate(p.read_bytes())
            out.append((p.name, raw, comp))
        _cache["memray"] = out
    return _cache["memray"]


def build_memray(rng: random.Random, live: bool = False):
    """(bytes, label): a capture of `memray_seeds` with 1-3 mutations (`mutate_memray`)."""
    seeds = memray_seeds()
    if live:  # the live stream is what ``memray run --live-remote`` sends: uncompressed, ALL_ALLOCATIONS
        seeds = [s for s in seeds if s[1][16:17] == b"\0" and s[1][15:16] == b"\0"] or seeds
    name, data, comp = seeds[rng.randrange(len(seeds))]
    ops = []
    if live and rng.random() < 0.8:  # memray's live header: the counts and the end time left 0
        if header(data):
            data = data[:17] + bytes(16) + data[33:41] + bytes(8) + data[49:]
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        data, op = mutate_memray(data, rng, live)
        ops.append(op)
    if not live and (comp or rng.random() < 0.1) and rng.random() < 0.8:
        import lz4.frame

        data = lz4.frame.compress(data)
        ops.append("lz4")
        if rng.random() < 0.15:
            data, op = _bytes_damage(data, rng)
            ops.append("lz4 " + op)
    return data, f"{name}: " + " + ".join(ops)


# ============================================================================ Chrome memory-infra dumps
#: memory-infra values that are not what Chrome writes: non-hex, non-ASCII digits, past 2^53 and 2^64
_HEX_EDGES = ["", "x", "-1", "\u0661\u0662", "\uff46\uff46", "\u00b2", "0x10", "f" * 17, "ffffffffffffffff",
              "20000000000001", "1fffffffffffff", " 10", "10 ", "1_0", "nan", 1e308, -1, 2 ** 64, 2 ** 53 + 1, 0.5,
              True, None, [], {}, "9" * 5000]
#: heap node ids at their edges (a JSON number Python's json reads as a big int, a float, strings)
_ID_EDGES = [-1, 0, 2 ** 31, 2 ** 63, 2 ** 64 + 1, 10 ** 30, 1.5, 1e308, "1", "\u0661", None, True, [], "x" * 1000]


def _heaps_v2_doc(rng: random.Random, n_proc: int = 2, n_dumps: int = 3) -> dict:
    """A Chrome trace with heap-profiling dumps as Chrome writes them (``heaps_v2``: maps that grow
    from dump to dump, several allocators, types)."""
    events = []
    for p in range(n_proc):
        pid = 100 + p
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": pid, "ts": 0,
                       "args": {"name": ["Browser", "Renderer", "GPU Process"][p % 3]}})
        events.append({"ph": "X", "name": "RunTask", "pid": pid, "tid": pid, "ts": 0, "dur": 9000})
        node_id = 1
        nodes_all: list = []
        for d in range(n_dumps):
            strings = [{"id": 10 * d + k + 1, "string": f"fn_{d}_{k}"} for k in range(8)]
            nodes = []
            for k in range(12):
                parent = rng.choice([None] + [n["id"] for n in nodes_all[-20:] + nodes]) if (nodes or nodes_all) \
                    else None
                nd = {"id": node_id, "name_sid": strings[k % 8]["id"]}
                if parent is not None:
                    nd["parent"] = parent
                nodes.append(nd)
                node_id += 1
            nodes_all += nodes
            types = [{"id": t, "name_sid": strings[t]["id"]} for t in range(3)]
            allocs = {}
            for a in ("malloc", "partition_alloc", "blink_gc"):
                at = rng.sample([n["id"] for n in nodes_all], min(10, len(nodes_all)))
                allocs[a] = {"nodes": at, "sizes": [format(rng.randrange(1, 1 << 20), "x") for _ in at],
                             "counts": [format(rng.randrange(1, 500), "x") for _ in at],
                             "types": [rng.randrange(3) for _ in at]}
            events.append({"ph": "v", "name": "periodic_interval", "pid": pid, "tid": pid, "ts": 1000 * (d + 1),
                           "id": f"0x{d}", "args": {"dumps": {
                               "level_of_detail": "detailed",
                               "process_totals": {"private_footprint_bytes": format(rng.randrange(1 << 30), "x")},
                               "allocators": {"malloc": {"attrs": {"size": {"type": "scalar", "units": "bytes",
                                                                            "value": format(rng.randrange(1 << 28),
                                                                                            "x")}}}},
                               "heaps_v2": {"version": 1, "maps": {"strings": strings, "nodes": nodes, "types": types},
                                            "allocators": allocs}}}})
    return {"traceEvents": events}


def memdump_seeds() -> list:
    """(name, parsed document) of the Chrome memory-dump seeds (cached): the recorded trace cut
    to its process names and 8 of its dumps (the whole inflates to 6 MB), and heaps_v2 traces."""
    if "memdump" not in _cache:
        out = []
        if CHROME_DUMPS.exists():
            doc = json.loads(gzip.decompress(CHROME_DUMPS.read_bytes()))
            ev = doc["traceEvents"] if isinstance(doc, dict) else doc
            meta = [e for e in ev if e.get("ph") == "M"]
            dumps = [e for e in ev if e.get("ph") in ("v", "V")]
            step = max(1, len(dumps) // 8)
            others = [e for e in ev if e.get("ph") == "X"][:50]
            out.append((CHROME_DUMPS.name, {"traceEvents": meta + others + dumps[::step][:8]}))
        for k in range(3):
            out.append((f"heaps_v2-{k}", _heaps_v2_doc(random.Random(k), n_proc=1 + k, n_dumps=2 + k)))
        _cache["memdump"] = out
    return _cache["memdump"]


def _dump_events(doc) -> list:
    ev = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    return [e for e in ev if isinstance(e, dict) and e.get("ph") in ("v", "V")]


def _heaps(e) -> dict | None:
    try:
        h = e["args"]["dumps"]["heaps_v2"]
        return h if isinstance(h, dict) else None
    except (KeyError, TypeError):
        return None


def mutate_memdump(doc: dict, rng: random.Random):
    """(doc, op label): one mutation of a Chrome trace's memory-infra dumps."""
    from fuzz_structured import _RAW, mutate_json

    dumps = _dump_events(doc)
    if not dumps:
        return doc, "memdump(no dumps)"
    d = rng.choice(dumps)
    heaps = [e for e in dumps if _heaps(e) is not None]
    op = rng.choice(["hex", "hex", "json", "json", "pid", "chain", "cycle", "redefine", "lengths", "ids", "strings",
                     "processes", "repeat", "as_text"] if heaps else ["hex", "hex", "json", "json", "pid",
                                                                      "processes", "repeat", "as_text"])
    if op == "hex":
        vals = []

        def collect(x, path):
            if isinstance(x, dict):
                for k, v in x.items():
                    if k in ("value", "sizes", "counts") or path and path[-1] == "process_totals":
                        vals.append((x, k))
                    collect(v, path + [k])
            elif isinstance(x, list):
                for k, v in enumerate(x[:50]):
                    if isinstance(v, str):
                        vals.append((x, k))
                    else:
                        collect(v, path)

        collect(d.get("args"), [])
        if not vals:
            return doc, "hex(none)"
        box, k = rng.choice(vals)
        v = rng.choice(_HEX_EDGES)
        if isinstance(v, str) and v == "9" * 5000:
            v = _RAW.format(v)
        box[k] = v
        return doc, f"hex {str(k)[:20]}={str(v)[:12]!r}"
    if op == "json":
        tree, label = mutate_json(d, rng, 200)
        return doc, "json " + label
    if op == "pid":
        key = rng.choice(["pid", "ts", "ph", "args"])
        d[key] = rng.choice(_ID_EDGES + [float("inf")] if key != "ph" else ["V", "v", "x", ""])
        return doc, f"{key}={str(d[key])[:12]!r}"
    if op == "processes":  # the dump copied under thousands of pids
        k = rng.choice([100, 5000, 50_000])
        size = len(json.dumps(d))
        k = max(2, min(k, MAX_GROWTH // max(size, 1)))
        ev = doc["traceEvents"]
        text = json.dumps(d)
        ev += [dict(json.loads(text), pid=100_000 + j) for j in range(k)]  # copies: a later op changes one
        return doc, f"processes x{k}"
    if op == "repeat":
        size = len(json.dumps(d))
        k = max(2, min(1000, MAX_GROWTH // max(size, 1)))
        doc["traceEvents"] += [json.loads(json.dumps(d)) for _ in range(k - 1)]
        return doc, f"repeat dump x{k}"
    if op == "as_text":
        args = d.get("args")
        if isinstance(args, dict):
            inner = json.dumps(args.get("dumps"))
            if rng.random() < 0.3:
                inner = "[" * 100_000 + "]" * 100_000
            args["dumps"] = inner
        return doc, "dumps as text"
    h = _heaps(rng.choice(heaps))
    maps = h.setdefault("maps", {})
    nodes = maps.get("nodes") if isinstance(maps.get("nodes"), list) else []
    allocs = h.get("allocators") if isinstance(h.get("allocators"), dict) else {}
    if op == "chain":  # the nodes one parent chain d deep, the entries at its deepest nodes
        depth = rng.choice([1000, 10_000, 99_999, 100_001, 150_000])
        sid = nodes[0]["name_sid"] if nodes and isinstance(nodes[0], dict) else 1
        base = 1_000_000
        maps["nodes"] = nodes + [{"id": base, "name_sid": sid}] + [
            {"id": base + k, "name_sid": sid, "parent": base + k - 1} for k in range(1, depth)]
        n_at = rng.choice([1, 100, 3000])
        for a in allocs.values():
            if isinstance(a, dict):
                a["nodes"] = [base + depth - 1 - k for k in range(n_at)]
                a["sizes"] = ["40"] * n_at
                a["counts"] = ["1"] * n_at
                a["types"] = [0] * n_at
        return doc, f"chain {depth} entries {n_at}"
    if op == "cycle" and len(nodes) > 2:
        a, b = rng.sample(range(len(nodes)), 2)
        if isinstance(nodes[a], dict) and isinstance(nodes[b], dict):
            nodes[a]["parent"] = nodes[b].get("id")
            nodes[b]["parent"] = nodes[a].get("id") if rng.random() < 0.5 else nodes[b].get("id")
        return doc, "cycle"
    if op == "redefine":  # a later dump redefines nodes and strings an earlier one defined
        later = json.loads(json.dumps(h))
        for nd in later.get("maps", {}).get("nodes", []) if isinstance(later.get("maps"), dict) else []:
            if isinstance(nd, dict):
                nd["name_sid"] = rng.choice([1, 2, 10 ** 9])
                nd["parent"] = rng.choice([None, 1, 2, nd.get("id")])
        doc["traceEvents"].append({"ph": "v", "name": "periodic_interval", "pid": d.get("pid"), "ts": 10 ** 7,
                                   "id": "0x9", "args": {"dumps": {"level_of_detail": "detailed", "heaps_v2": later}}})
        return doc, "redefine"
    if op == "lengths":
        for a in allocs.values():
            if isinstance(a, dict) and isinstance(a.get(rng.choice(["nodes", "sizes", "counts", "types"])), list):
                key = rng.choice(["nodes", "sizes", "counts", "types"])
                if isinstance(a.get(key), list) and a[key]:
                    a[key] = a[key][:-1] if rng.random() < 0.5 else a[key] + a[key][:1]
        return doc, "lengths"
    if op == "ids":
        v = rng.choice(_ID_EDGES)
        where = rng.choice(["node", "parent", "entry", "type", "name_sid"])
        if where in ("node", "parent", "name_sid") and nodes and isinstance(nodes[0], dict):
            nd = rng.choice(nodes)
            if isinstance(nd, dict):
                nd[{"node": "id", "parent": "parent", "name_sid": "name_sid"}[where]] = v
        else:
            for a in allocs.values():
                if isinstance(a, dict) and isinstance(a.get("nodes"), list) and a["nodes"]:
                    key = "nodes" if where == "entry" else "types"
                    if isinstance(a.get(key), list) and a[key]:
                        a[key][rng.randrange(len(a[key]))] = v
        return doc, f"ids {where}={str(v)[:12]!r}"
    if op == "strings":
        strings = maps.get("strings") if isinstance(maps.get("strings"), list) else []
        if strings and isinstance(strings[0], dict):
            s = rng.choice(strings)
            if isinstance(s, dict):
                if rng.random() < 0.5:
                    s["string"] = rng.choice(["\ud800", "x" * 100_000, "", None, 5, "\u202eevil"])
                else:
                    s["id"] = rng.choice(_ID_EDGES)
        return doc, "strings"
    return doc, f"{op}(none)"


def build_memdump(rng: random.Random):
    """(bytes, label): a memory-dump seed with 1-3 mutations (`mutate_memdump`), as JSON text."""
    from fuzz_structured import _json_bytes

    seeds = memdump_seeds()
    name, doc = seeds[rng.randrange(len(seeds))]
    doc = json.loads(json.dumps(doc))
    ops = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        doc, op = mutate_memdump(doc, rng)
        ops.append(op)
    data = _json_bytes(doc, rng)
    if rng.random() < 0.15:
        data = gzip.compress(data, 1)
        ops.append("gzip")
    return data, f"{name}: " + " + ".join(ops)


# ============================================================================ the kinds
def build(rng: random.Random, family: str):
    """(bytes, load options, label) of one input of ``family`` ("memray", "memdump", "memlive")."""
    if family == "memray":
        data, label = build_memray(rng)
        opts = {"__memory": True}
        if rng.random() < 0.1:
            opts["reader"] = rng.choice(["own", "memray"])
            label += f" reader={opts['reader']}"
        return data, opts, "memray " + label
    if family == "memdump":
        data, label = build_memdump(rng)
        return data, {"__memory": True, "__calls": True}, "memdump " + label
    data, label = build_memray(rng, live=True)
    n_pieces = rng.choice([1, 2, 3, 8])
    cuts = sorted(rng.randrange(len(data) + 1) for _ in range(n_pieces - 1))
    end = rng.choice(["close", "close", "close", "reset", "stall"])
    return data, {"__live": {"cuts": cuts, "end": end}}, f"memlive {label} pieces={n_pieces} end={end}"


# ============================================================================ the worker's side
def check_capture(cap) -> str:
    """"ok", or the first way the `MemoryCapture` ``cap`` is inconsistent (arrays of one length,
    indices in range, times ordered and finite)."""
    import numpy as np

    n = cap.n_ranges
    for k in ("range_address", "range_size", "range_start", "range_end", "range_leaked", "range_stack", "range_thread",
              "range_allocator", "range_record", "range_freed_by"):
        if getattr(cap, k).shape[0] != n:
            return f"{k} has {getattr(cap, k).shape[0]} rows for {n} ranges"
    n_stacks = len(cap.stack_frames)
    if n and (cap.range_stack.min() < 0 or cap.range_stack.max() >= max(n_stacks, 1)):
        return "range_stack out of range"
    if n and (cap.range_thread.min() < 0 or cap.range_thread.max() >= len(cap.thread_names)):
        return "range_thread out of range"
    if cap.stack_site.shape[0] != n_stacks:
        return "stack_site is not one per stack"
    if n_stacks and cap.n_sites and (cap.stack_site.min() < 0 or cap.stack_site.max() >= cap.n_sites):
        return "stack_site out of range"
    if not (np.isfinite(cap.range_start).all() and np.isfinite(cap.range_end).all()):
        return "a range time is not finite"
    if n and (cap.range_end < cap.range_start).any():
        return "a range ends before it starts"
    if not np.isfinite(cap.duration_ms):
        return "duration_ms is not finite"
    for k in ("site_function", "site_file", "site_line", "site_start", "site_end", "site_bytes", "site_count"):
        if len(getattr(cap, k)) != cap.n_sites:
            return f"{k} is not one per site"
    if len(cap.frame_function) != len(cap.frame_file) or len(cap.frame_function) != cap.frame_line.shape[0]:
        return "frame tables of different lengths"
    nf = len(cap.frame_function)
    for s in range(min(n_stacks, 5)):
        fr = cap.stack_frames.frames(s, 50)
        if any(not 0 <= f < nf for f in fr):
            return f"stack {s} names a frame out of range"
        cap.stack_text(s, 5)
    for s in range(min(cap.n_sites, 5)):
        cap.site_label(s)
        cap.site_module(s)
    for x in cap.thread_names[:5] + cap.site_function[:5]:
        x.encode("utf-8", "surrogatepass")
    return "ok"


def _layout(cap) -> None:
    from tracevis3d.layout.memory import memory_layout

    memory_layout(cap)


def memory_case(path: str, opts: dict) -> str:
    """Load ``path`` as the memory view does (and, for ``__calls``, as a trace too): "ok",
    "error" (a one-line `TraceFormatError` naming the file) or what went wrong."""
    import tracevis3d
    from tracevis3d import TraceFormatError

    res = []
    extra = {"reader": opts["reader"]} if "reader" in opts else {}
    try:
        cap = tracevis3d.load_memory(path, warn=False, **extra)
        r = check_capture(cap)
        if r == "ok":
            _layout(cap)
        res.append(r)
    except TraceFormatError as e:
        res.append(_judge(e, path))
    if opts.get("__calls"):
        try:
            t = tracevis3d.load(path, warn=False)
            t.check()
            res.append("ok")
        except TraceFormatError as e:
            res.append(_judge(e, path))
    bad = [r for r in res if r not in ("ok", "error")]
    return bad[0] if bad else ("ok" if "ok" in res else "error")


def _judge(e, source: str) -> str:
    msg = str(e)
    if not msg.startswith(source) or "\n" in msg:
        return "bad error: " + msg[:300]
    return "error"


class _Peer:
    """memray's live tracker's place on loopback: sends ``data`` in pieces (``cuts``), each after
    the reader has taken the one before; then closes, resets (RST) or stalls until `stop`."""

    def __init__(self, data: bytes, cuts: list, end: str):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(1)
        self.port = self.srv.getsockname()[1]
        self.pieces = [data[a:b] for a, b in zip([0] + cuts, cuts + [len(data)])]
        self.end = end
        self.taken = threading.Semaphore(0)
        self.stop = threading.Event()
        self.sent = 0
        self.t = threading.Thread(target=self._serve, daemon=True)
        self.t.start()

    def _serve(self):
        conn = None
        try:
            self.srv.settimeout(30)
            conn, _ = self.srv.accept()
            for k, piece in enumerate(self.pieces):
                if k and not self.taken.acquire(timeout=60):
                    return
                conn.sendall(piece)
                self.sent += len(piece)
            if self.end == "stall":
                self.stop.wait(60)
            elif self.end == "reset":
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        finally:
            if conn is not None:
                conn.close()

    def close(self):
        self.stop.set()
        for _ in self.pieces:
            self.taken.release()
        self.t.join(10)
        self.srv.close()


def live_case(data: bytes, plan: dict) -> str:
    """The bytes from a loopback peer (`_Peer`) read by `MemrayLiveStream`, a capture after each
    piece: "ok", "error" (a one-line error naming the peer) or what went wrong."""
    from tracevis3d import TraceFormatError
    from tracevis3d.io.memray_live import MemrayLiveStream

    peer = _Peer(data, plan["cuts"], plan["end"])
    source = f"memray live 127.0.0.1:{peer.port}"
    outcome = "ok"
    try:
        with MemrayLiveStream(peer.port, connect_timeout=10) as stream:
            want = 0
            for k, piece in enumerate(peer.pieces):
                want += len(piece)
                while stream.n_bytes < want and not stream.finished:
                    stream.poll(timeout=0.2)
                cap = stream.capture()
                if cap is not None:
                    r = check_capture(cap)
                    if r != "ok":
                        return f"piece {k}: {r}"
                if k < len(peer.pieces) - 1:
                    peer.taken.release()
            if plan["end"] != "stall":  # the peer ends the stream: the reader sees it end
                while not stream.finished:
                    stream.poll(timeout=0.2)
            cap = stream.capture()
            if cap is not None:
                r = check_capture(cap)
                if r != "ok":
                    return f"end: {r}"
                _layout(cap)
                if stream.finished and cap.meta.get("running"):
                    return "a finished stream's capture says the program still runs"
            elif stream.finished and len(data) > 64:
                return "a finished stream of a whole header gave no capture"
    except TraceFormatError as e:
        outcome = _judge(e, source)
    finally:
        peer.close()
    return outcome


def warm() -> None:
    """Read one seed of each family once (compiles or loads the memray kernels outside the alarms)."""
    import os
    import tempfile
    import warnings

    import tracevis3d

    with tempfile.TemporaryDirectory() as d:
        for name, data, comp in [s for s in memray_seeds() if s[0] == "seed-raw.bin"]:
            p = os.path.join(d, "w.bin")
            with open(p, "wb") as f:
                f.write(data)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _layout(tracevis3d.load_memory(p, warn=False))
