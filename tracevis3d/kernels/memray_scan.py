"""memray's capture format read in one pass: the records of an ALL_ALLOCATIONS capture (memray 1.20,
header version 13) into flat arrays, with the stack ids memray's own reader gives them.

The format and its semantics are memray's (``src/memray/_memray/record_writer.cpp`` writes it,
``record_reader.cpp``'s ``RecordReader::nextRecordFromAllAllocationsFile`` reads it, the stacks are
``frame_tree.h``'s ``FrameTree``).  After the header, each record starts with one token byte:

- ``1ppppaaa`` ALLOCATION: pointer cache index ``pppp`` (0-14: the address at that place of a
  15-entry most-recent-first cache; 15: a zigzag varint delta of ``address >> 3`` follows and the
  address enters the cache at 0), allocator ``aaa`` (0: a full allocator byte follows); then, in a
  ``--native`` capture and unless the allocator is a simple deallocator (free, pymalloc_free), a
  delta of the native frame id; then the size as a varint unless a simple deallocator;
- ``01uuuuue`` FRAME_PUSH: varint code object id, zigzag instruction offset, ``e`` entry frame;
- ``001ppppc`` OBJECT_RECORD (object lifetimes): pointer cache as above, native id if created;
- ``0001nnnn`` FRAME_POP of ``n + 1`` frames;
- otherwise the token is the record type: 1 TRAILER, 2 MEMORY_RECORD (varint rss, varint ms since
  the start), 5 NATIVE_TRACE_INDEX (deltas of ip and index), 6 MEMORY_MAP_START, 7 SEGMENT_HEADER
  (name, varint count, 8-byte address, then count SEGMENT records: token 8, 8-byte vaddr, varint
  size), 10 THREAD_RECORD (name), 12 CONTEXT_SWITCH (8-byte thread id), 14 CODE_OBJECT (varint id,
  function name, file name, zigzag delta of the first line, varint length, the line table).

Strings end with a NUL byte; numbers are little-endian.  Every delta is added to the previous value
of its field (``RecordReader::readIntegralDelta``).  An allocation's stack id is the ``FrameTree``
node on top of its thread's stack: a push registers (code id, instruction offset, entry) as a frame
id (numbered in first-seen order, memray's ``Registry<Frame>``) and then the child of the current
top with that frame (numbered in creation order, node 0 the root); a deallocation (free,
pymalloc_free, munmap) has stack 0, native id 0 and generation 0, as memray reports them.

Every read is bounded by the buffer: a record cut short, an unknown token, a varint over 64 bits,
an allocation or frame record before any CONTEXT_SWITCH, a pop of more frames than the thread
holds, a stack deeper than ``max_depth`` or more than ``max_records`` allocations stop the scan with
an error code and the byte offset of the record (`MESSAGES`).  Memory grows with the records kept.
"""
import numpy as np
from numba import njit

from .memcov import live_bytes_change, spread_evenly

#: status codes of `scan_capture` and their one-line explanation
OK, CUT, BAD_TOKEN, BAD_VARINT, NO_THREAD, POP_EMPTY, TOO_DEEP, BAD_ALLOCATOR, BAD_SEGMENT, TOO_MANY, BAD_STRING = \
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
MESSAGES = {
    CUT: "the capture ends inside a record (cut short)",
    BAD_TOKEN: "an unknown record type (the capture is damaged)",
    BAD_VARINT: "a number longer than 64 bits (the capture is damaged)",
    NO_THREAD: "a record before any thread switch (the capture is damaged)",
    POP_EMPTY: "a frame pop of more frames than the thread's stack holds (the capture is damaged)",
    TOO_DEEP: "a stack deeper than limits.max_stack_depth",
    BAD_ALLOCATOR: "an unknown allocator code (the capture is damaged)",
    BAD_SEGMENT: "a memory-map segment record out of place (the capture is damaged)",
    TOO_MANY: "more allocation records than limits.max_events",
    BAD_STRING: "a name longer than limits.max_name_chars or without its end (the capture is damaged)",
}

_C1 = np.uint64(0x9E3779B97F4A7C15)
_C2 = np.uint64(0xC2B2AE3D27D4EB4F)
_C3 = np.uint64(0x165667B19E3779F9)


@njit(cache=True, nogil=True)
def _varint(buf, p, end):
    """(value, next position, status) of the LEB128 varint at ``p`` (memray's ``readVarint``)."""
    val = np.uint64(0)
    shift = 0
    while True:
        if p >= end:
            return val, p, CUT
        b = buf[p]
        p += 1
        val |= np.uint64(b & 0x7F) << np.uint64(shift)
        if (b & 0x80) == 0:
            return val, p, OK
        shift += 7
        if shift >= 64:
            return val, p, BAD_VARINT


@njit(cache=True, nogil=True)
def _zigzag(z):
    """memray's ``readSignedVarint``: ``(z >> 1) ^ -(z & 1)``, as the uint64 bit pattern."""
    return (z >> np.uint64(1)) ^ (np.uint64(0) - (z & np.uint64(1)))


@njit(cache=True, nogil=True)
def _u64le(buf, p):
    v = np.uint64(0)
    for k in range(8):
        v |= np.uint64(buf[p + k]) << np.uint64(8 * k)
    return v


@njit(cache=True, nogil=True)
def _string_end(buf, p, end, max_len):
    """Position of the NUL that ends the string at ``p``; -1 when none within ``max_len`` bytes."""
    stop = min(end, p + max_len + 1)
    for q in range(p, stop):
        if buf[q] == 0:
            return q
    return -1


@njit(cache=True, nogil=True)
def _hash3(a, b, c):
    h = (a * _C1) ^ (b * _C2) ^ (c * _C3)
    return h ^ (h >> np.uint64(29))


@njit(cache=True, nogil=True)
def _probe(keys, val, a, b, c):
    """The slot of key (a, b, c) in an open-addressing table (``keys`` (cap, 3), ``val`` -1: empty;
    linear probing)."""
    mask = val.shape[0] - 1
    j = np.int64(_hash3(a, b, c) & np.uint64(mask))
    while val[j] >= 0 and not (keys[j, 0] == a and keys[j, 1] == b and keys[j, 2] == c):
        j = (j + 1) & mask
    return j


@njit(cache=True, nogil=True)
def _intern(keys, val, count, a, b, c):
    """The id of key (a, b, c), numbered in first-seen order (memray's ``Registry``): returns
    ``(id, is_new)``; the caller doubles the table (`_rehash`) once it is half full."""
    j = _probe(keys, val, a, b, c)
    if val[j] >= 0:
        return val[j], False
    keys[j, 0] = a
    keys[j, 1] = b
    keys[j, 2] = c
    val[j] = count
    return count, True


@njit(cache=True, nogil=True)
def _rehash(keys, val):
    """The table twice as large, every key moved."""
    cap = val.shape[0] * 2
    nk = np.zeros((cap, 3), np.uint64)
    nv = np.full(cap, -1, np.int64)
    for q in range(val.shape[0]):
        if val[q] >= 0:
            i = _probe(nk, nv, keys[q, 0], keys[q, 1], keys[q, 2])
            nk[i] = keys[q]
            nv[i] = val[q]
    return nk, nv


@njit(cache=True, nogil=True)
def _grow(a, n):
    """``a`` (1-D or 2-D) with room for at least ``n`` rows (doubling)."""
    if n <= a.shape[0]:
        return a
    shape = (max(2 * a.shape[0], n, 16),) + a.shape[1:]
    out = np.zeros(shape, a.dtype)
    out[:a.shape[0]] = a
    return out


@njit(cache=True, nogil=True)
def _pointer(buf, p, end, cache, last):
    """The address of an ALLOCATION or OBJECT_RECORD that missed the pointer cache: a delta of
    ``address >> 3`` read at ``p``; the address enters the cache at its front.  Returns (address,
    p, status)."""
    z, p, st = _varint(buf, p, end)
    if st != OK:
        return np.uint64(0), p, st
    last[0] = last[0] + _zigzag(z)
    address = last[0] << np.uint64(3)
    for k in range(14, 0, -1):
        cache[k] = cache[k - 1]
    cache[0] = address
    return address, p, OK


@njit(cache=True, nogil=True)
def _allocation(buf, p, end, tok, native, cache, last):
    """An ALLOCATION record's body: returns (status, p, address, allocator, size, native id);
    ``last`` holds the delta-coded fields (pointer, native frame id, ip, index)."""
    flags = tok & 0x7F
    ci = (flags >> 3) & 0x0F
    if ci == 0x0F:
        address, p, st = _pointer(buf, p, end, cache, last)
        if st != OK:
            return st, p, address, 0, np.uint64(0), np.uint64(0)
    else:
        address = cache[ci]
    a = np.int64(flags & 7)
    if a == 0:
        if p >= end:
            return CUT, p, address, 0, np.uint64(0), np.uint64(0)
        a = np.int64(buf[p])
        p += 1
        if a < 1 or a > 15:
            return BAD_ALLOCATOR, p, address, a, np.uint64(0), np.uint64(0)
    simple_free = a == 1 or a == 5
    nid = np.uint64(0)
    if native and not simple_free:
        z, p, st = _varint(buf, p, end)
        if st != OK:
            return st, p, address, a, np.uint64(0), nid
        last[1] = last[1] + _zigzag(z)
        nid = last[1]
    size = np.uint64(0)
    if not simple_free:
        size, p, st = _varint(buf, p, end)
        if st != OK:
            return st, p, address, a, size, nid
    return OK, p, address, a, size, nid


@njit(cache=True, nogil=True)
def _object(buf, p, end, tok, native, cache, last):
    """An OBJECT_RECORD's body (object lifetimes: parsed for the pointer cache, not kept)."""
    flags = tok & 0x1F
    if ((flags >> 1) & 0x0F) == 0x0F:
        _, p, st = _pointer(buf, p, end, cache, last)
        if st != OK:
            return st, p
    if native and (flags & 1):
        z, p, st = _varint(buf, p, end)
        if st != OK:
            return st, p
        last[1] = last[1] + _zigzag(z)
    return OK, p


@njit(cache=True, nogil=True)
def _code_object(buf, p, end, max_name, firstline):
    """A CODE_OBJECT's body: returns (status, p, id, row) with row = (function start, end, file
    start, end, first line, line table start, end); the first line is an int delta-coded
    modulo 2**32 from ``firstline``."""
    row = np.zeros(7, np.int64)
    code, p, st = _varint(buf, p, end)
    if st != OK:
        return st, p, code, row
    q1 = _string_end(buf, p, end, max_name)
    q2 = _string_end(buf, q1 + 1, end, max_name) if q1 >= 0 else -1
    if q2 < 0:
        return BAD_STRING, p, code, row
    row[0], row[1], row[2], row[3] = p, q1, q1 + 1, q2
    z, p, st = _varint(buf, q2 + 1, end)
    if st != OK:
        return st, p, code, row
    s = (np.uint64(firstline) + _zigzag(z)) & np.uint64(0xFFFFFFFF)
    row[4] = np.int64(s) - (np.int64(1) << 32 if s & np.uint64(0x80000000) else np.int64(0))
    n, p, st = _varint(buf, p, end)
    if st != OK:
        return st, p, code, row
    if n > np.uint64(end - p):
        return CUT, p, code, row
    row[5], row[6] = p, p + np.int64(n)
    return OK, p + np.int64(n), code, row


@njit(cache=True, nogil=True)
def _segments(buf, p, end, max_name):
    """A SEGMENT_HEADER and its SEGMENT records (skipped: native symbols are not resolved here)."""
    q = _string_end(buf, p, end, max_name)
    if q < 0:
        return BAD_STRING, p
    n_seg, p, st = _varint(buf, q + 1, end)
    if st != OK:
        return st, p
    if p + 8 > end or n_seg > np.uint64(end - p):  # each segment takes at least 10 bytes
        return CUT, p
    p += 8
    for _ in range(np.int64(n_seg)):
        if p + 9 > end:
            return CUT, p
        if buf[p] != 8:
            return BAD_SEGMENT, p
        _, p, st = _varint(buf, p + 9, end)
        if st != OK:
            return st, p
    return OK, p


@njit(cache=True, nogil=True)
def _switch(buf, p, t_keys, t_val, threads, top, depth, n_threads):
    """A CONTEXT_SWITCH: the thread's index (new threads get a row in ``threads`` (tid, name
    start, name end) and an empty stack: top node 0, depth 0).  Returns (index, threads, top,
    depth, n_threads, t_keys, t_val)."""
    tid = _u64le(buf, p)
    cur, new = _intern(t_keys, t_val, n_threads, tid, np.uint64(0), np.uint64(0))
    if new:
        if 2 * (n_threads + 1) > t_val.shape[0]:
            t_keys, t_val = _rehash(t_keys, t_val)
        threads = _grow(threads, n_threads + 1)
        top = _grow(top, n_threads + 1)
        depth = _grow(depth, n_threads + 1)
        threads[cur, 0] = np.int64(tid)
        threads[cur, 1] = -1
        threads[cur, 2] = -1
        top[cur] = 0
        depth[cur] = 0
        n_threads += 1
    return cur, threads, top, depth, n_threads, t_keys, t_val


@njit(cache=True, nogil=True)
def scan_capture(buf, start, end, native, cap_hint, max_records, max_depth, max_name):
    """Read the records of ``buf[start:end]`` (the bytes after the header).

    Returns ``(status, err_at, stop_at, saw_trailer, allocs, memory, threads, frames, nodes,
    codes, native_frames)``:

    - ``allocs`` = (address u64, size u64, allocator u8, thread index i32, stack id i64, native
      frame id u64, native segment generation i64): one row per ALLOCATION record, memray's
      ``AllocationRecord`` fields (the thread as an index into ``threads``);
    - ``memory`` = (allocation records before it, rss, ms since the start) per MEMORY_RECORD;
    - ``threads`` = (thread id u64, name start i64, name end i64; -1: no name), in first-switch
      order, the last THREAD_RECORD's name;
    - ``frames`` = (code object id u64, instruction offset i64, entry u8) per frame id;
    - ``nodes`` = (frame id i64, parent i64) per FrameTree node (node 0 the root);
    - ``codes`` = (ids u64, rows i64 (n, 7): `_code_object`'s) per CODE_OBJECT record;
    - ``native_frames`` = (ip u64, index u64) per NATIVE_TRACE_INDEX record.

    ``status`` is `OK` or an error code (`MESSAGES`) with ``err_at`` the byte offset of the record
    it stopped in; ``stop_at`` is where reading stopped.
    """
    rec_u = np.empty((max(16, cap_hint), 3), np.uint64)  # address, size, native frame id
    rec_i = np.empty((max(16, cap_hint), 4), np.int64)  # allocator, thread, stack id, generation
    mem = np.zeros((64, 3), np.uint64)
    t_keys, t_val = np.zeros((16, 3), np.uint64), np.full(16, -1, np.int64)
    threads = np.zeros((8, 3), np.int64)
    top = np.zeros(8, np.int64)  # per thread the FrameTree node on top of its stack (0: the root)
    depth = np.zeros(8, np.int64)  # per thread its stack's depth
    f_keys, f_val = np.zeros((1024, 3), np.uint64), np.full(1024, -1, np.int64)
    frames = np.zeros((256, 3), np.int64)  # code id, instruction offset, entry
    e_keys, e_val = np.zeros((1024, 3), np.uint64), np.full(1024, -1, np.int64)
    nodes = np.zeros((256, 2), np.int64)  # frame id, parent
    codes, code_ids = np.zeros((16, 7), np.int64), np.zeros(16, np.uint64)
    nf = np.zeros((16, 2), np.uint64)
    last = np.zeros(4, np.uint64)  # delta-coded: pointer, native frame id, ip, index
    cache = np.zeros(15, np.uint64)
    n = n_mem = n_threads = n_frames = n_codes = n_nf = generation = firstline = 0
    n_nodes = 1
    cur = -1
    status = OK
    trailer = False
    p = rec_at = start
    while p < end and status == OK:
        rec_at = p
        tok = buf[p]
        p += 1
        if tok & 0x80:  # ALLOCATION
            status, p, address, a, size, nid = _allocation(buf, p, end, tok, native, cache, last)
            if status == OK and cur < 0:
                status = NO_THREAD
            elif status == OK and n >= max_records:
                status = TOO_MANY
            elif status == OK:
                if n >= rec_u.shape[0]:
                    rec_u = _grow(rec_u, n + 1)
                    rec_i = _grow(rec_i, n + 1)
                rec_u[n, 0] = address
                rec_u[n, 1] = size
                rec_i[n, 0] = a
                rec_i[n, 1] = cur
                if not (a == 1 or a == 5 or a == 15):  # a deallocator: memray keeps no stack for it
                    rec_i[n, 2] = top[cur]
                    rec_u[n, 2] = nid
                    rec_i[n, 3] = generation
                else:
                    rec_i[n, 2] = 0
                    rec_u[n, 2] = 0
                    rec_i[n, 3] = 0
                n += 1
        elif tok & 0x40:  # FRAME_PUSH
            code, p, status = _varint(buf, p, end)
            if status == OK:
                z, p, status = _varint(buf, p, end)
            if status == OK and cur < 0:
                status = NO_THREAD
            if status != OK:
                break
            off = np.int64(np.int32(np.int64(_zigzag(z))))  # an int field: the low 32 bits
            fid, new = _intern(f_keys, f_val, n_frames, code, np.uint64(off), np.uint64(tok & 1))
            if new:
                if 2 * (n_frames + 1) > f_val.shape[0]:
                    f_keys, f_val = _rehash(f_keys, f_val)
                if n_frames >= frames.shape[0]:
                    frames = _grow(frames, n_frames + 1)
                frames[fid, 0] = np.int64(code)
                frames[fid, 1] = off
                frames[fid, 2] = tok & 1
                n_frames += 1
            d = depth[cur]
            parent = top[cur]
            node, new = _intern(e_keys, e_val, n_nodes, np.uint64(parent), np.uint64(fid), np.uint64(0))
            if new:
                if 2 * (n_nodes + 1) > e_val.shape[0]:
                    e_keys, e_val = _rehash(e_keys, e_val)
                if n_nodes >= nodes.shape[0]:
                    nodes = _grow(nodes, n_nodes + 1)
                nodes[node, 0] = fid
                nodes[node, 1] = parent
                n_nodes += 1
            if d >= max_depth:
                status = TOO_DEEP
                break
            top[cur] = node
            depth[cur] = d + 1
        elif tok & 0x20:  # OBJECT_RECORD
            status, p = _object(buf, p, end, tok, native, cache, last)
        elif tok & 0x10:  # FRAME_POP of (tok & 15) + 1 frames
            if cur < 0:
                status = NO_THREAD
            elif depth[cur] < (tok & 0x0F) + 1:
                status = POP_EMPTY
            else:  # a node's parent is the node below it on its thread's stack
                for _ in range((tok & 0x0F) + 1):
                    top[cur] = nodes[top[cur], 1]
                depth[cur] -= (tok & 0x0F) + 1
        elif tok == 1:  # TRAILER
            trailer = True
            break
        elif tok == 2:  # MEMORY_RECORD
            rss, p, status = _varint(buf, p, end)
            if status == OK:
                ms, p, status = _varint(buf, p, end)
            if status == OK:
                if n_mem >= mem.shape[0]:
                    mem = _grow(mem, n_mem + 1)
                mem[n_mem, 0] = n
                mem[n_mem, 1] = rss
                mem[n_mem, 2] = ms
                n_mem += 1
        elif tok == 12:  # CONTEXT_SWITCH
            if p + 8 > end:
                status = CUT
            else:
                cur, threads, top, depth, n_threads, t_keys, t_val = _switch(buf, p, t_keys, t_val, threads, top,
                                                                              depth, n_threads)
                p += 8
        elif tok == 10:  # THREAD_RECORD
            q = _string_end(buf, p, end, max_name)
            if q < 0:
                status = BAD_STRING
            elif cur < 0:
                status = NO_THREAD
            else:
                threads[cur, 1] = p
                threads[cur, 2] = q
                p = q + 1
        elif tok == 14:  # CODE_OBJECT
            status, p, code, row = _code_object(buf, p, end, max_name, firstline)
            if status == OK:
                codes = _grow(codes, n_codes + 1)
                code_ids = _grow(code_ids, n_codes + 1)
                codes[n_codes] = row
                code_ids[n_codes] = code
                firstline = row[4]
                n_codes += 1
        elif tok == 5:  # NATIVE_TRACE_INDEX
            z, p, status = _varint(buf, p, end)
            if status == OK:
                last[2] = last[2] + _zigzag(z)
                z, p, status = _varint(buf, p, end)
            if status == OK:
                last[3] = last[3] + _zigzag(z)
                nf = _grow(nf, n_nf + 1)
                nf[n_nf, 0] = last[2]
                nf[n_nf, 1] = last[3]
                n_nf += 1
        elif tok == 6:  # MEMORY_MAP_START: a new segment generation
            generation += 1
        elif tok == 7:  # SEGMENT_HEADER and its SEGMENT records
            status, p = _segments(buf, p, end, max_name)
        else:
            status = BAD_TOKEN
    err_at = rec_at if status != OK else -1
    allocs = (rec_u[:n, 0].copy(), rec_u[:n, 1].copy(), rec_i[:n, 0].astype(np.uint8), rec_i[:n, 1].astype(np.int32),
              rec_i[:n, 2].copy(), rec_u[:n, 2].copy(), rec_i[:n, 3].copy())
    memory = (mem[:n_mem, 0].astype(np.int64), mem[:n_mem, 1].copy(), mem[:n_mem, 2].copy())
    thread_cols = (threads[:n_threads, 0].astype(np.uint64), threads[:n_threads, 1].copy(),
                   threads[:n_threads, 2].copy())
    frame_cols = (frames[:n_frames, 0].astype(np.uint64), frames[:n_frames, 1].copy(),
                  frames[:n_frames, 2].astype(np.uint8))
    node_cols = (nodes[:n_nodes, 0].copy(), nodes[:n_nodes, 1].copy())
    return (status, err_at, p, trailer, allocs, memory, thread_cols, frame_cols, node_cols,
            (code_ids[:n_codes].copy(), codes[:n_codes].copy()), (nf[:n_nf, 0].copy(), nf[:n_nf, 1].copy()))


@njit(cache=True, nogil=True)
def heap_at(size, role, alloc_of, pos):
    """The bytes the paired ranges hold after the first ``pos[k]`` records, per k (``pos``
    non-decreasing): memray's ``HighWatermarkFinder.getCurrentWatermark()`` at each memory record,
    the ``heap`` of its ``MemorySnapshot`` (each record's step: `memcov.live_bytes_change`)."""
    out = np.zeros(pos.shape[0], np.int64)
    live = np.int64(0)
    k = 0
    m = pos.shape[0]
    while k < m and pos[k] <= 0:
        k += 1
    for i in range(size.shape[0]):
        if k >= m:
            break
        live += live_bytes_change(size, role, alloc_of, i)
        while k < m and pos[k] == i + 1:
            out[k] = live
            k += 1
    return out


@njit(cache=True, nogil=True)
def first_records(ids, n_ids):
    """Per id in [0, n_ids) the index of its first occurrence in ``ids`` (-1: none): the first
    record of every stack, without sorting the records."""
    first = np.full(n_ids, -1, np.int64)
    for i in range(ids.shape[0]):
        k = ids[i]
        if first[k] < 0:
            first[k] = i
    return first


@njit(cache=True, nogil=True)
def record_times_at(pos, snap_ms, n, end_ms):
    """Each of ``n`` records' time (ms) from the snapshots' places (``pos[k]``: records before
    snapshot k, non-decreasing): the records between two snapshots spread evenly over their times,
    t(-1) = 0 and t(len) = ``end_ms``; the same times as `kernels.memcov.record_times` given each
    record's count of snapshots at or before it, without that per-record count."""
    t = np.empty(n, np.float64)
    m = pos.shape[0]
    a = 0
    for s in range(m + 1):
        b = n if s == m else min(max(pos[s], a), n)
        if b > a:
            spread_evenly(t, a, b, 0.0 if s == 0 else snap_ms[s - 1], end_ms if s == m else snap_ms[s])
            a = b
    return t


@njit(cache=True, nogil=True)
def _table_varint(buf, p, end):
    """memray's ``compat::parseLinetable311`` varint: 6-bit groups while bit 6 is set, a byte
    past the table's end read as 0; the value's low 32 bits (later groups cannot reach them)."""
    read = np.int64(buf[p]) if p < end else np.int64(0)
    p += 1
    val = np.int64(read & 63)
    shift = 0
    while read & 64:
        read = np.int64(buf[p]) if p < end else np.int64(0)
        p += 1
        shift += 6
        if shift < 32:
            val |= (read & 63) << shift
    return val & 0xFFFFFFFF, p


@njit(cache=True, nogil=True)
def frame_lines(buf, t0, t1, first_line, row, offset):
    """The line of every frame (code object ``row[f]``: its location table is ``buf[t0:t1]``, its
    first line ``first_line``; instruction byte offset ``offset[f]``): memray's
    ``compat::parseLinetable311`` for Python >= 3.11 (`io.memray_own._line_311`, its Python twin),
    0 for a frame without a code object, a negative offset or an offset the table does not
    cover (the table ends, or a zero byte starts an entry).  Each table is walked once for all
    its frames (in the order of their offsets), not once per frame (issue 78: a 10^6-entry table
    under thousands of frames).  Lines as int64 (the caller keeps them as C ints)."""
    n = row.shape[0]
    out = np.zeros(n, np.int64)
    key = np.empty(n, np.int64)
    for f in range(n):  # frames of one code object together, by offset
        key[f] = row[f] if row[f] >= 0 and offset[f] >= 0 else -1
    order = np.argsort(key * (np.int64(1) << 32) + np.where(key >= 0, offset // 2, 0), kind="mergesort")
    k = 0
    while k < n:
        r = key[order[k]]
        if r < 0:
            k += 1
            continue
        start, end = t0[r], t1[r]
        p = start
        addr = np.int64(0)
        line = np.int64(first_line[r])
        cur_lo, cur_hi = np.int64(0), np.int64(0)  # the entry last read: [lo, hi) at `line`
        valid = False
        while k < n and key[order[k]] == r:
            q = offset[order[k]] // 2
            while (not valid or q >= cur_hi) and p < end and buf[p] != 0:
                first = np.int64(buf[p])
                p += 1
                code = (first >> 3) & 15
                end_addr = addr + (first & 7) + 1
                if code == 14:
                    u, p = _table_varint(buf, p, end)
                    line += -(u >> 1) if u & 1 else (u >> 1)
                    for _ in range(3):
                        u, p = _table_varint(buf, p, end)
                elif code == 13:
                    u, p = _table_varint(buf, p, end)
                    line += -(u >> 1) if u & 1 else (u >> 1)
                elif code >= 10 and code <= 12:
                    line += code - 10
                    p += 2
                elif code != 15:
                    p += 1
                cur_lo, cur_hi, valid = addr, end_addr, True
                addr = end_addr
            if valid and cur_lo <= q < cur_hi:
                out[order[k]] = line
            k += 1
    return out
