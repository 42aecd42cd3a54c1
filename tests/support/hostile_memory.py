"""Hostile memory captures (issue 78, case 2): memray captures and Chrome memory-infra dumps whose
stacks are deep and shared, written here byte by byte (memray's format as ``record_writer.cpp``
writes it: header version 13, Python 3.12; see `kernels.memray_scan`'s docstring).

- `deep_leaves`: one stack ``depth`` frames deep and ``leaves`` allocations each under its own
  leaf frame on top of it (``leaves`` distinct stacks that share ``depth`` frames): a walk of
  every stack from its leaf to the root is ``leaves × depth``;
- `long_line_table`: a code object whose line table holds ``entries`` one-byte entries, and
  ``frames`` frames of it at offsets near the table's end: a table walk per frame is
  ``frames × entries``;
- `threads_then_deep`: ``threads`` threads, then one stack ``depth`` deep on the last: a stack
  array per thread as deep as the deepest is ``threads × depth``;
- `deep_heaps_v2`: a Chrome trace with one memory-infra dump whose ``heaps_v2`` maps hold a
  parent chain of ``depth`` nodes and ``entries`` heap entries at nodes along it.

Each returns the file's bytes (a few hundred kB to a few MB)."""
from __future__ import annotations

import json
import struct

#: memray's header: magic, version 13, Python 3.12, not native, all-allocations format
HEADER_VERSION = 13
PYTHON_312 = 0x030C0000


def varint(v: int) -> bytes:
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
    return varint(((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF)


def header(n_allocations: int = 0, start_ms: int = 1_700_000_000_000, end_ms: int = 1_700_000_001_000,
           main_tid: int = 1, skipped: int = 0) -> bytes:
    """memray's ``HeaderRecord`` (``RecordReader::readHeader``): ``n_allocations`` 0 leaves the
    record count unchecked (as a live stream's header does)."""
    out = bytearray(b"memray\0")
    out += struct.pack("<ii", HEADER_VERSION, PYTHON_312) + bytes([0, 0])
    out += struct.pack("<QQqq", n_allocations, 0, start_ms, end_ms)
    out += b"python hostile.py\0"
    out += struct.pack("<iQQ", 4242, main_tid, skipped) + bytes([3, 0, 0])
    out += b"/usr/lib\0"  # libdest
    out += b"\0"  # site-packages: none
    out += b"\0"  # sys.path: none
    return bytes(out)


def switch(tid: int) -> bytes:
    return bytes([12]) + struct.pack("<Q", tid)


def push(code: int, offset: int) -> bytes:
    return bytes([0x40]) + varint(code) + zigzag(offset)


def pop(n: int) -> bytes:
    out = bytearray()
    while n:
        k = min(n, 16)
        out.append(0x10 | (k - 1))
        n -= k
    return bytes(out)


def malloc(address: int, size: int, last_ptr: list) -> bytes:
    """An allocation (malloc, allocator 3) of a new address (the pointer cache missed)."""
    new = address >> 3
    body = zigzag(new - last_ptr[0])
    last_ptr[0] = new
    return bytes([0x80 | (15 << 3) | 3]) + body + varint(size)


def code_object(code: int, function: str, file: str, firstline: int, table: bytes, last_line: list) -> bytes:
    out = bytes([14]) + varint(code) + function.encode() + b"\0" + file.encode() + b"\0" \
        + zigzag(firstline - last_line[0]) + varint(len(table)) + table
    last_line[0] = firstline
    return out


def memory_record(rss: int, ms: int) -> bytes:
    return bytes([2]) + varint(rss) + varint(ms)


def deep_leaves(depth: int = 100_000, leaves: int = 3000, trailer: bool = True) -> bytes:
    """`header`, a main thread, ``depth`` frames of one code object (a recursion), then
    ``leaves`` times: a leaf frame of another code object at its own offset, a malloc, a pop."""
    last_ptr, last_line = [0], [0]
    out = bytearray(header())
    out += switch(1) + bytes([10]) + b"main\0"
    out += code_object(1, "recurse", "/app/deep.py", 10, b"", last_line)
    out += code_object(2, "leaf", "/app/deep.py", 40, b"", last_line)
    out += memory_record(50 << 20, 0)
    out += push(1, 4) * depth
    for k in range(leaves):
        out += push(2, 2 * k) + malloc(0x100000 + 64 * k, 32 + k % 50, last_ptr) + pop(1)
    out += memory_record(60 << 20, 5)
    out += pop(depth)
    if trailer:
        out.append(1)
    return bytes(out)


def long_line_table(entries: int = 1_000_000, frames: int = 2000, first_line: int = 1) -> bytes:
    """A code object whose location table holds ``entries`` two-byte entries (code 13, "one
    instruction, the line one more": instruction ``i`` is on line ``first_line + i + 1``), and
    ``frames`` pushes of it at distinct offsets among its last instructions, each with a malloc."""
    last_ptr, last_line = [0], [0]
    table = bytes([0xE8, 0x02]) * entries  # code 13, one instruction; signed varint 2: +1
    out = bytearray(header())
    out += switch(1)
    out += code_object(1, "long", "/app/long.py", first_line, table, last_line)
    for k in range(frames):
        off = 2 * (entries - 1 - k)
        out += push(1, off) + malloc(0x200000 + 64 * k, 100, last_ptr) + pop(1)
    out.append(1)
    return bytes(out)


def threads_then_deep(threads: int = 20_000, depth: int = 100_000) -> bytes:
    """``threads`` context switches to new threads (9 bytes each), then a stack ``depth`` deep
    on the last one, with one malloc at its top."""
    last_ptr, last_line = [0], [0]
    out = bytearray(header())
    out += code_object(1, "f", "/app/t.py", 1, b"", last_line)
    for t in range(threads):
        out += switch(t + 1)
    out += push(1, 2) * depth + malloc(0x300000, 64, last_ptr) + pop(depth)
    out.append(1)
    return bytes(out)


def deep_heaps_v2(depth: int = 100_000, entries: int = 3000) -> bytes:
    """A Chrome trace: one process, one detailed dump whose ``heaps_v2`` maps a parent chain of
    ``depth`` nodes (node i's parent i - 1) and whose malloc holds ``entries`` heap entries, at
    the ``entries`` deepest nodes."""
    strings = [{"id": 1, "string": "Recurse"}, {"id": 2, "string": "main"}]
    nodes = [{"id": 1, "name_sid": 2}] + [{"id": i, "name_sid": 1, "parent": i - 1} for i in range(2, depth + 1)]
    at = list(range(depth, depth - entries, -1))
    heaps = {"version": 1, "maps": {"strings": strings, "nodes": nodes, "types": []},
             "allocators": {"malloc": {"nodes": at, "sizes": [format(64 + k, "x") for k in range(entries)],
                                       "counts": ["1"] * entries, "types": [0] * entries}}}
    dump = {"ph": "v", "name": "periodic_interval", "pid": 7, "tid": 7, "ts": 1000, "id": "0x1",
            "args": {"dumps": {"level_of_detail": "detailed", "heaps_v2": heaps}}}
    meta = {"ph": "M", "name": "process_name", "pid": 7, "tid": 7, "ts": 0, "args": {"name": "renderer"}}
    end = {"ph": "X", "name": "work", "pid": 7, "tid": 7, "ts": 0, "dur": 5000}
    return json.dumps({"traceEvents": [meta, end, dump]}, separators=(",", ":")).encode()


_CHILD = r"""
import json, os, sys, time, warnings
sys.path.insert(0, os.environ["TV3D_REPO"])
warnings.simplefilter("ignore")
out = {}
t0 = time.perf_counter()
try:
    exec(compile(os.environ["TV3D_SNIPPET"], "<snippet>", "exec"), {"out": out})
    out.setdefault("outcome", "ok")
except MemoryError:
    out["outcome"] = "MemoryError"
except BaseException as e:
    out["outcome"] = type(e).__name__
    out["message"] = " ".join(str(e).split())[:2000]
out["seconds"] = time.perf_counter() - t0
with open("/proc/self/status") as st:
    out["peak_mb"] = next(int(ln.split()[1]) for ln in st if ln.startswith("VmHWM:")) / 1024
print("TV3D-RESULT " + json.dumps(out))
"""


def run_bounded(snippet: str, *, timeout: float = 120.0, max_address_space: int = 2 << 30) -> dict:
    """Run ``snippet`` (Python; it fills the dict ``out``) in a fresh process of this interpreter
    with at most ``max_address_space`` bytes of address space, killed after ``timeout`` s (a hang
    guard, not a timing).  Returns ``out`` with "outcome" ("ok", an exception's name, "timeout",
    "exit N"), "message", "seconds" and "peak_mb" (the child's peak resident memory)."""
    import os
    import pathlib
    import resource
    import subprocess
    import sys

    repo = pathlib.Path(__file__).resolve().parents[2]
    env = dict(os.environ, TV3D_REPO=str(repo), TV3D_SNIPPET=snippet)
    env.setdefault("NUMBA_CACHE_DIR", str(repo / "build" / "numba-cache"))

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (max_address_space, max_address_space))

    try:
        r = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=timeout,
                           preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return {"outcome": "timeout", "message": f"no answer in {timeout:g} s", "seconds": timeout}
    for line in r.stdout.splitlines():
        if line.startswith("TV3D-RESULT "):
            return json.loads(line[len("TV3D-RESULT "):])
    return {"outcome": f"exit {r.returncode}", "message": r.stderr[-2000:]}


def heaps_v2_redefined(depth: int = 99_000, dumps: int = 1000) -> bytes:
    """`deep_heaps_v2`'s chain in a first dump, then ``dumps`` small dumps that each redefine the
    chain's root (another name) and hold one heap entry at its deepest node: each redefinition
    makes every stack through the root resolve again (bounded by a work budget)."""
    doc = json.loads(deep_heaps_v2(depth, 1))
    events = doc["traceEvents"]
    for k in range(dumps):
        heaps = {"version": 1, "maps": {"strings": [{"id": 3 + k % 2, "string": f"root{k % 2}"}],
                                        "nodes": [{"id": 1, "name_sid": 3 + k % 2}]},
                 "allocators": {"malloc": {"nodes": [depth], "sizes": ["40"], "counts": ["1"], "types": [0]}}}
        events.append({"ph": "v", "name": "periodic_interval", "pid": 7, "tid": 7, "ts": 2000 + k, "id": "0x1",
                       "args": {"dumps": {"level_of_detail": "detailed", "heaps_v2": heaps}}})
    return json.dumps(doc, separators=(",", ":")).encode()
