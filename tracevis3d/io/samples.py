"""A tiny valid file of each readable format, made in code: the sample its row of the table names
(`tracevis3d.io.formats.Format.sample`), which the warm-up loads so each reader's kernels are
compiled before a user's first file of that format (`tracevis3d.warmup_formats`), and the tests
check that only its sniffer claims it (tests/unit/test_formats_table.py).

The files are written here, not read from the tests (this module ships in the extension and
the wheel).  Each is the smallest file that runs its reader's whole path: stack tables, samples
with times and weights, several threads, the merged (Left Heavy) builder for aggregated
formats.  A new format may keep its sample in its own reader module instead (docs/extending.md).
"""
from __future__ import annotations

import gzip
import json
import struct

from .formats import MEMRAY_MAGIC
from .memray_capture import HEADER_VERSION as MEMRAY_HEADER_VERSION

__all__ = ["speedscope", "firefox_processed", "gecko", "cpuprofile", "stackprof", "heapprofile", "collapsed", "perf_script", "callgrind", "pprof", "instruments_text", "ghc_json", "ghc_prof", "v8log_json", "pyinstrument", "perfetto", "pstats", "memray"]


def _j(doc) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


def speedscope() -> bytes:
    frames = [{"name": n, "file": "a.py", "line": k + 1} for k, n in enumerate("abc")]
    return _j({"$schema": "https://www.speedscope.app/file-format-schema.json", "shared": {"frames": frames},
               "profiles": [
                   {"type": "sampled", "name": "t1", "unit": "seconds", "startValue": 0, "endValue": 6,
                    "samples": [[0, 1], [0, 2], [0]], "weights": [1, 2, 3]},
                   {"type": "evented", "name": "t2", "unit": "milliseconds", "startValue": 0, "endValue": 4,
                    "events": [{"type": "O", "frame": 0, "at": 0}, {"type": "O", "frame": 1, "at": 1},
                               {"type": "C", "frame": 1, "at": 2}, {"type": "C", "frame": 0, "at": 4}]},
                   {"type": "sampled", "name": "heap", "unit": "bytes", "startValue": 0, "endValue": 30,
                    "samples": [[0, 1], [0, 2]], "weights": [10, 20]}]})


def firefox_processed() -> bytes:
    th = {"name": "GeckoMain", "pid": "1", "tid": 1, "processType": "default",
          "stringArray": ["root", "f", "g", "file.js"],
          "funcTable": {"length": 3, "name": [0, 1, 2], "fileName": [None, 3, 3], "lineNumber": [None, 1, 2],
                        "isJS": [False, True, True]},
          "frameTable": {"length": 3, "func": [0, 1, 2]},
          "stackTable": {"length": 3, "frame": [0, 1, 2], "prefix": [None, 0, 1]},
          "samples": {"length": 4, "stack": [0, 1, 2, None], "time": [0.0, 1.0, 2.0, 3.0], "weight": None},
          "markers": {"length": 1, "name": [1], "startTime": [0.5], "endTime": [None], "phase": [0],
                      "data": [None], "category": [0]}}
    return _j({"meta": {"interval": 1, "startTime": 0, "preprocessedProfileVersion": 48, "version": 24},
               "threads": [th, dict(th, tid=2, name="Worker")]})


def gecko() -> bytes:
    th = {"name": "GeckoMain", "pid": 1, "tid": 1, "processType": "default",
          "stringTable": ["(root)", "f (a.js:1:1)", "g (a.js:5:1)"],
          "frameTable": {"schema": {"location": 0, "line": 1}, "data": [[0], [1], [2]]},
          "stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": [[None, 0], [0, 1], [1, 2]]},
          "samples": {"schema": {"stack": 0, "time": 1}, "data": [[0, 0.0], [1, 1.0], [2, 2.0], [None, 3.0]]},
          "markers": {"schema": {"name": 0, "startTime": 1, "endTime": 2, "phase": 3, "category": 4, "data": 5},
                      "data": [[1, 0.5, None, 0, 0, None]]}}
    return _j({"meta": {"version": 27, "interval": 1, "startTime": 1000.0}, "libs": [], "threads": [th],
               "processes": []})


def cpuprofile() -> bytes:
    nodes = [{"id": 1, "callFrame": {"functionName": "(root)", "url": "", "lineNumber": -1}, "children": [2]},
             {"id": 2, "callFrame": {"functionName": "main", "url": "file:///a.js", "lineNumber": 0}, "children": [3]},
             {"id": 3, "callFrame": {"functionName": "work", "url": "file:///a.js", "lineNumber": 4}}]
    return _j({"nodes": nodes, "startTime": 0, "endTime": 400, "samples": [2, 3, 3, 2], "timeDeltas": [0, 100, 100,
                                                                                                     100]})


def stackprof() -> bytes:
    return _j({"version": 1.2, "mode": "wall", "interval": 1000, "samples": 3,
               "frames": {"11": {"name": "main", "file": "a.rb", "line": 1}, "12": {"name": "work", "file": "a.rb"}},
               "raw": [2, 11, 12, 2, 1, 11, 1], "raw_timestamp_deltas": [10, 20, 30]})


def heapprofile() -> bytes:
    def node(name, size, kids=()):
        return {"callFrame": {"functionName": name, "scriptId": "1", "url": "a.js", "lineNumber": 0,
                              "columnNumber": 0}, "selfSize": size, "id": 1, "children": list(kids)}
    return _j({"head": node("(root)", 0, [node("main", 100, [node("alloc", 400)])]), "samples": []})


def collapsed() -> bytes:
    return b"main;work;leaf 3\nmain;work 2\nmain;other;leaf 1\n"


def perf_script() -> bytes:
    ev = []
    for k, (tid, top) in enumerate(((10, "leaf"), (10, "work"), (11, "leaf"))):
        ev.append(f"prog {tid} [000] {1 + k * 0.001:.6f}: 1000 cycles:\n"
                  f"\t    1000 {top}+0x10 (/usr/bin/prog)\n\t    2000 work+0x20 (/usr/bin/prog)\n"
                  f"\t    3000 main+0x30 (/usr/bin/prog)\n\n")
    return "".join(ev).encode()


def callgrind() -> bytes:
    return (b"# callgrind format\nversion: 1\ncreator: warmup\nevents: Ir Dr\n"
            b"fl=(1) a.c\nfn=(1) main\n1 10 2\ncfn=(2) work\ncalls=2 1\n2 30 4\n"
            b"fn=(2)\n3 30 4\ncfn=(3) leaf\ncalls=1 1\n4 5 1\nfn=(3)\n5 5 1\n")


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | 0x80 if v else b)
        if not v:
            return bytes(out)


def _field(num: int, payload) -> bytes:
    if isinstance(payload, int):
        return _varint(num << 3) + _varint(payload)
    return _varint((num << 3) | 2) + _varint(len(payload)) + payload


def pprof() -> bytes:
    strings = ["", "samples", "count", "cpu", "nanoseconds", "main", "work", "a.go"]
    vt = lambda t, u: _field(1, t) + _field(2, u)  # noqa: E731
    body = _field(1, vt(1, 2)) + _field(1, vt(3, 4))
    for loc, fn in ((1, 5), (2, 6)):
        body += _field(4, _field(1, loc) + _field(4, _field(1, fn) + _field(2, 3)))
        body += _field(5, _field(1, fn) + _field(2, fn) + _field(4, 7))
    packed = lambda vals: b"".join(_varint(v) for v in vals)  # noqa: E731
    body += _field(2, _field(1, packed([2, 1])) + _field(2, packed([3, 3000])))
    body += _field(2, _field(1, packed([1])) + _field(2, packed([1, 1000])))
    body += b"".join(_field(6, s.encode()) for s in strings)
    body += _field(11, vt(3, 4)) + _field(12, 1000)
    return gzip.compress(body, mtime=0)


def instruments_text() -> bytes:
    return ("Weight\tSelf Weight\t\tSymbol Name\n5.00 ms  100.0%\t0 s\t \tmain\n"
            "4.00 ms  80.0%\t1.00 ms\t \t work\n3.00 ms  60.0%\t3.00 ms\t \t  leaf\n").encode()


def ghc_json() -> bytes:
    ccs = [{"id": 1, "label": "MAIN", "module": "MAIN", "src_loc": "<built-in>", "is_caf": False},
           {"id": 2, "label": "main", "module": "Main", "src_loc": "a.hs:1:1", "is_caf": False}]
    tree = {"id": 1, "entries": 1, "alloc": 10, "ticks": 1,
            "children": [{"id": 2, "entries": 1, "alloc": 100, "ticks": 5, "children": []}]}
    return _j({"program": "a", "arguments": ["a"], "rts_arguments": ["-pj"], "end_time": "", "initial_capabilities": 0,
               "total_time": 0.1, "total_ticks": 6, "tick_interval": 1000, "total_alloc": 110, "cost_centres": ccs,
               "profile": tree})


def ghc_prof() -> bytes:
    return ("\tTime and Allocation Profiling Report  (Final)\n\n\t   a +RTS -P -RTS\n\n"
            "COST CENTRE MODULE SRC no. entries %time %alloc %time %alloc ticks bytes\n\n"
            "MAIN MAIN <built-in> 1 0 10.0 10.0 100.0 100.0 1 10\n main Main a.hs:1:1 2 1 90.0 90.0 90.0 90.0 5 100\n"
            ).encode()


def v8log_json() -> bytes:
    code = [{"name": "main /a.js:1:1", "type": "JS", "kind": "Opt"}, {"name": "work /a.js:5:1", "type": "JS"},
            {"name": "v8::internal::Heap::Scavenge()", "type": "CPP"}]
    return _j({"code": code, "functions": [], "ticks": [{"tm": 1000, "vm": 0, "s": [1, 0, 0, 0]},
                                                        {"tm": 2000, "vm": 0, "s": [2, 0, 1, 0, 0, 0]},
                                                        {"tm": 3000, "vm": 0, "s": [0, 0]}], "scripts": []})


def pyinstrument() -> bytes:
    leaf = {"function": "work", "file_path": "/a/app.py", "line_no": 5, "time": 0.5, "children": []}
    return _j({"start_time": 0, "duration": 1.0, "sample_count": 10, "cpu_time": 1.0,
               "root_frame": {"function": "main", "file_path": "/a/app.py", "line_no": 1, "time": 1.0,
                              "children": [leaf]}})


def perfetto() -> bytes:
    """Two threads of one process (track descriptors), interned names and categories on a sequence
    that clears its state, nested slices, an instant, a counter track and a flow between threads,
    a debug annotation: the field numbers of perfetto_trace.proto."""
    f = _field
    seq = 7

    def packet(*fields, ts=None):
        body = b"".join(fields) + f(10, seq) + (f(8, ts) if ts is not None else b"")
        return f(1, body)

    def event(ts, kind, track, name_iid=None, extra=b""):
        te = f(9, kind) + f(11, track) + (f(10, name_iid) if name_iid else b"") + extra
        return packet(f(11, te), f(13, 2), ts=ts)

    out = [packet(f(60, f(1, 1) + f(3, f(1, 100) + f(6, b"warmup"))), f(13, 1)),
           packet(f(60, f(1, 2) + f(5, 1) + f(4, f(1, 100) + f(2, 101) + f(5, b"main")))),
           packet(f(60, f(1, 3) + f(5, 1) + f(4, f(1, 100) + f(2, 102) + f(5, b"worker")))),
           packet(f(60, f(1, 4) + f(5, 1) + f(2, b"queue") + f(8, b""))),
           packet(f(12, f(2, f(1, 1) + f(2, b"main_loop")) + f(2, f(1, 2) + f(2, b"work"))
                  + f(1, f(1, 1) + f(2, b"cat")) + f(3, f(1, 1) + f(2, b"n"))), f(13, 2))]
    fixed64 = lambda num, v: _varint((num << 3) | 1) + v.to_bytes(8, "little")  # noqa: E731 (flow ids)
    out += [event(1000, 1, 2, 1, f(3, 1) + f(4, f(1, 1) + f(4, 5))), event(2000, 1, 2, 2, fixed64(47, 9)),
            event(3000, 3, 2, 2), event(4000, 2, 2), event(5000, 2, 2),
            event(2500, 1, 3, 2, fixed64(48, 9)), event(3500, 2, 3),
            event(1500, 4, 4, None, f(30, 3)), event(4500, 4, 4, None, f(30, 1))]
    return b"".join(out)


def pstats() -> bytes:
    """cProfile's shape: ``exec`` called from outside and by runpy (its calls split by context),
    a cycle, a builtin."""
    import marshal

    ex, mod, run, work = ("~", 0, "<built-in method builtins.exec>"), ("a.py", 1, "<module>"), \
        ("<frozen runpy>", 65, "_run_code"), ("a.py", 3, "work")
    return marshal.dumps({ex: (1, 2, 0.01, 1.0, {run: (1, 1, 0.0, 0.9)}), run: (1, 1, 0.0, 1.0, {ex: (1, 1, 0.1, 1.0)}),
                          mod: (1, 1, 0.1, 0.9, {ex: (1, 1, 0.1, 0.9)}),
                          work: (1, 1, 0.8, 0.8, {mod: (1, 1, 0.8, 0.8), work: (1, 0, 0.1, 0.1)})})


# ----------------------------------------------------------------------------- memray
#: the memray sample's Python (3.11: the line tables below are 3.11's, `memray_own._line_311`)
MEMRAY_PYTHON_311 = 0x030B0000
#: the memray sample's allocator codes (``AllocatorType``): free, malloc, calloc
MEMRAY_FREE, MEMRAY_MALLOC, MEMRAY_CALLOC = 1, 3, 4
#: memray's pointer cache's "missed" index: a delta of the address follows
MEMRAY_POINTER_MISSED = 15


def _zigzag(v: int) -> bytes:  # memray's signed deltas
    return _varint(((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF)


def _memray_header(n_allocations: int, main_tid: int) -> bytes:
    """``HeaderRecord``: magic, version, Python, not native, ALL_ALLOCATIONS, the counts, the clock,
    the command line, pid, main thread, skipped frames, allocator (malloc), no trace_python_allocators,
    then libdest, site-packages and sys.path (empty)."""
    out = bytearray(MEMRAY_MAGIC + b"\0")
    out += struct.pack("<ii", MEMRAY_HEADER_VERSION, MEMRAY_PYTHON_311) + bytes([0, 0])
    out += struct.pack("<QQqq", n_allocations, 2, 1_700_000_000_000, 1_700_000_000_040)
    out += b"python warmup.py\0"
    out += struct.pack("<iQQ", 4242, main_tid, 0) + bytes([MEMRAY_MALLOC, 0, 0])
    out += b"/usr/lib/python3.11\0\0\0"
    return bytes(out)


def memray() -> bytes:
    """A memray capture (~300 bytes): memray 1.20's uncompressed ALL_ALLOCATIONS format, header
    version 13, written record by record as ``record_writer.cpp`` writes it (the records and their
    tokens: `kernels.memray_scan`'s docstring); memray's own FileReader reads it as ours does (the
    tests).  Allocations on two named threads under stacks up to three frames deep (Python 3.11
    line tables), some hitting the pointer cache, three freed, between two memory records."""
    main, worker = 1, 2
    out = bytearray()
    last_ptr = [0]
    n_alloc = 0

    def switch(tid):
        out.extend(bytes([12]) + struct.pack("<Q", tid))

    def push(code, offset, entry=0):
        out.extend(bytes([0x40 | entry]) + _varint(code) + _zigzag(offset))

    def pop(n):
        out.append(0x10 | (n - 1))

    def alloc(address, size, allocator=MEMRAY_MALLOC):
        nonlocal n_alloc
        new = address >> 3
        out.extend(bytes([0x80 | (MEMRAY_POINTER_MISSED << 3) | allocator]) + _zigzag(new - last_ptr[0]) + _varint(size))
        last_ptr[0] = new
        n_alloc += 1

    def free_recent(k):  # a free of the address k places back in the pointer cache (a hit: no body)
        nonlocal n_alloc
        out.append(0x80 | (k << 3) | MEMRAY_FREE)
        n_alloc += 1

    last_line = [0]

    def code_object(code, function, file, firstline, table):
        out.extend(bytes([14]) + _varint(code) + function.encode() + b"\0" + file.encode() + b"\0"
                   + _zigzag(firstline - last_line[0]) + _varint(len(table)) + table)
        last_line[0] = firstline

    switch(main)
    out.extend(bytes([10]) + b"MainThread\0")
    # 3.11 line tables: one entry each (code 13, "no column", one line further, 4 code units)
    code_object(1, "main", "/app/warmup.py", 10, bytes([0x80 | (13 << 3) | 3, 2]))
    code_object(2, "build", "/app/warmup.py", 20, bytes([0x80 | (13 << 3) | 3, 2]))
    code_object(3, "worker", "/app/warmup.py", 30, bytes([0x80 | (13 << 3) | 3, 2]))
    out.extend(bytes([2]) + _varint(40 << 20) + _varint(0))  # MEMORY_RECORD: rss, ms
    push(1, 2, entry=1)
    alloc(0x10000, 64)
    push(2, 4)
    for k in range(6):
        alloc(0x20000 + 64 * k, 32 + 16 * k, MEMRAY_CALLOC if k % 3 == 0 else MEMRAY_MALLOC)
    free_recent(0)
    free_recent(2)
    pop(1)
    switch(worker)
    out.extend(bytes([10]) + b"worker\0")
    push(3, 2, entry=1)
    push(2, 6)
    alloc(0x30000, 4096)
    alloc(0x30000 + 4096, 128)
    free_recent(1)
    pop(2)
    switch(main)
    out.extend(bytes([2]) + _varint(41 << 20) + _varint(30))
    pop(1)
    out.append(1)  # TRAILER
    return _memray_header(n_alloc, main) + bytes(out)
