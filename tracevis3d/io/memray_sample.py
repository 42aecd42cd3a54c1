"""A tiny valid memray capture made in code, for the warm-up (`tracevis3d.warmup.warm_memory`):
memray 1.20's uncompressed ALL_ALLOCATIONS format, header version 13, written record by record as
``record_writer.cpp`` writes it (the records and their tokens: `kernels.memray_scan`'s docstring).

It holds what a real capture's scan meets (two named threads, three code objects with Python 3.11
line tables, pushes and pops a few frames deep, allocations that hit and miss the pointer cache,
frees, memory records, a trailer), so that loading it runs our reader's kernels and the memory
view's layout on the very types a user's first capture does.
"""
from __future__ import annotations

import struct

from .memray_capture import HEADER_VERSION, MEMRAY_MAGIC

__all__ = ["sample_capture"]

#: the capture's Python (3.11: the line tables below are 3.11's, `memray_own._line_311`)
PYTHON_311 = 0x030B0000
#: memray's allocator codes used here (``AllocatorType``): free, malloc, calloc
FREE, MALLOC, CALLOC = 1, 3, 4
#: the pointer cache's "missed" index: a delta of the address follows
POINTER_MISSED = 15


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _zigzag(v: int) -> bytes:
    return _varint(((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF)


def _header(n_allocations: int, main_tid: int) -> bytes:
    """``HeaderRecord``: magic, version, Python, not native, ALL_ALLOCATIONS, the counts, the clock,
    the command line, pid, main thread, skipped frames, allocator (malloc), no trace_python_allocators,
    then libdest, site-packages and sys.path (empty)."""
    out = bytearray(MEMRAY_MAGIC + b"\0")
    out += struct.pack("<ii", HEADER_VERSION, PYTHON_311) + bytes([0, 0])
    out += struct.pack("<QQqq", n_allocations, 2, 1_700_000_000_000, 1_700_000_000_040)
    out += b"python warmup.py\0"
    out += struct.pack("<iQQ", 4242, main_tid, 0) + bytes([MALLOC, 0, 0])
    out += b"/usr/lib/python3.11\0\0\0"
    return bytes(out)


def sample_capture() -> bytes:
    """The capture's bytes (~300): allocations on two threads under stacks up to three frames deep,
    half of them freed, between two memory records."""
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

    def alloc(address, size, allocator=MALLOC):
        nonlocal n_alloc
        new = address >> 3
        out.extend(bytes([0x80 | (POINTER_MISSED << 3) | allocator]) + _zigzag(new - last_ptr[0]) + _varint(size))
        last_ptr[0] = new
        n_alloc += 1

    def free_recent(k):  # a free of the address k places back in the pointer cache (a hit: no body)
        nonlocal n_alloc
        out.append(0x80 | (k << 3) | FREE)
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
        alloc(0x20000 + 64 * k, 32 + 16 * k, CALLOC if k % 3 == 0 else MALLOC)
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
    return _header(n_alloc, main) + bytes(out)
