"""TraceVis3D's own reader of memray 1.20's capture format (header version 13, lz4-compressed or
not): the header here, the records by the numba scanner `kernels.memray_scan`, checked against
memray's FileReader in the tests (`tracevis3d.io.memray` picks the reader)."""
from __future__ import annotations

import os
import struct

import numpy as np

from ..errors import TraceFormatError
from .memray_capture import (HEADER_COUNT_AT, HEADER_VERSION, MEMRAY_MAGIC, MemoryCapture, StackInput, assemble,
                             fail, check_head, int32_lines)


# ----------------------------------------------------------------------------- our own reader
#: the Python allocator names memray's metadata gives (``_memray.pyx``'s ``_create_metadata``)
PYTHON_ALLOCATORS = {1: "pymalloc", 2: "pymalloc debug", 3: "malloc", 4: "unknown", 5: "mimalloc",
                     6: "mimalloc debug"}
#: memray's ``FileReader`` keeps at most this many memory snapshots (``max_memory_records``)
MAX_SNAPSHOTS = 10000
#: the most bytes one call of lz4's decompressor gives (and allocates) when a capture is inflated
INFLATE_STEP = 16 << 20


def own_reader_refuses(data, compressed: bool):
    """Why our reader does not read the capture ``data`` (None: it does), from its first bytes
    (``compressed``: an LZ4 frame, `memray_capture.check_head`)."""
    if compressed:
        try:
            import lz4.frame  # noqa: F401
        except ImportError:
            return "a compressed capture needs the lz4 package (pip install lz4) for this reader"
        first = bytes(data[:1 << 16])
        try:  # the header's first bytes, inflated from the frame's start
            head = lz4.frame.LZ4FrameDecompressor().decompress(first, max_length=HEADER_COUNT_AT)
        except RuntimeError:
            return None  # a damaged frame: our reader says where
        return _header_refuses(head) if head.startswith(MEMRAY_MAGIC) else None
    return _header_refuses(bytes(data[:HEADER_COUNT_AT]))


def _header_refuses(head: bytes):
    if len(head) < HEADER_COUNT_AT:
        return None  # cut short: the reader says where
    version, python_version = struct.unpack_from("<ii", head, 7)
    native, file_format = head[15], head[16]
    if version != HEADER_VERSION:
        return (f"a capture of header version {version}; this reader reads version {HEADER_VERSION} "
                f"(memray 1.20)")
    if file_format != 0:
        return "an aggregated capture (memray run --aggregate) is another format"
    if native:
        return "a --native capture's native stacks need memray's symbol resolver"
    if python_version < 0x030B0000:
        return f"a capture of Python {python_version >> 24}.{(python_version >> 16) & 255}: this reader reads " \
               f"the line tables of Python 3.11 and later"
    return None


def _inflate(path: str, data: bytes, limits) -> bytes:
    """memray's LZ4 frame inflated (at most ``limits.max_bytes``), fed in 1 MiB pieces so that a
    damaged frame is named by the piece it fails in, and taken out at most `INFLATE_STEP` bytes
    at a time (lz4 allocates the ``max_length`` it is given: 4 GiB asked at once failed under a
    2 GiB address space, issue 78)."""
    import lz4.frame

    d = lz4.frame.LZ4FrameDecompressor()
    out = []
    total = 0
    step = 1 << 20
    for at in range(0, len(data), step):
        try:
            piece = d.decompress(data[at:at + step], max_length=min(INFLATE_STEP, limits.max_bytes + 1 - total))
        except RuntimeError as e:
            fail(path, f"byte {at}", f"the LZ4 frame is damaged in the {min(step, len(data) - at):,} bytes from here "
                                      f"({e})")
        out.append(piece)
        total += len(piece)
        while not d.eof and not d.needs_input and total <= limits.max_bytes:
            piece = d.decompress(b"", max_length=min(INFLATE_STEP, limits.max_bytes + 1 - total))
            out.append(piece)
            total += len(piece)
        if total > limits.max_bytes:
            fail(path, f"byte {at}", f"the capture inflates past limits.max_bytes ({limits.max_bytes:,} bytes)")
        if d.eof:
            break
    if not d.eof:
        fail(path, f"byte {len(data)}", "the LZ4 frame ends before its end mark (a compressed capture cut short)")
    return b"".join(out)


def _header(path: str, buf: bytes, where) -> tuple:
    """memray's ``HeaderRecord`` (``RecordReader::readHeader``) as a dict and the offset after it."""
    def cut(at):
        fail(path, where(at), "the capture ends inside its header")

    if len(buf) < 49:
        cut(len(buf))
    version, python_version = struct.unpack_from("<ii", buf, 7)
    n_alloc, n_frames, start, end = struct.unpack_from("<QQqq", buf, 17)

    def string(at):
        q = buf.find(b"\0", at, at + (1 << 20))
        if q < 0:
            cut(len(buf)) if len(buf) - at < (1 << 20) else fail(path, where(at), "a header string without its end")
        return buf[at:q].decode("utf-8", "replace"), q + 1

    command_line, p = string(49)
    if p + 23 > len(buf):
        cut(len(buf))
    pid, main_tid, skipped = struct.unpack_from("<iQQ", buf, p)
    python_allocator, trace_py = buf[p + 20], buf[p + 21]
    _, p = string(p + 23)  # libdest
    for _ in range(2):  # site-packages, sys.path: strings up to an empty one
        while True:
            entry, p = string(p)
            if not entry:
                break
    return dict(version=version, python_version=python_version, native=bool(buf[15]), file_format=buf[16],
                n_allocations=n_alloc, start_ms=start, end_ms=end, command_line=command_line, pid=pid,
                main_tid=main_tid, skipped=skipped, python_allocator=python_allocator,
                trace_python_allocators=bool(trace_py)), p


def _line_311(table: bytes, offset: int, firstlineno: int) -> int:
    """The line of instruction ``offset`` in a Python >= 3.11 location table, or 0 when the
    table does not cover it: memray's ``compat::parseLinetable311`` (which stops at a zero byte
    where an entry starts, the table being read as a C string)."""
    n = len(table)
    p = 0
    addrq = offset // 2
    addr = 0
    line = firstlineno

    def byte(i):
        return table[i] if i < n else 0

    def varint():
        nonlocal p
        read = byte(p); p += 1
        val = read & 63
        shift = 0
        while read & 64:
            read = byte(p); p += 1
            shift += 6
            val |= (read & 63) << shift
        return val & 0xFFFFFFFF

    def signed():
        u = varint()
        return -(u >> 1) if u & 1 else (u >> 1)

    while p < n and table[p] != 0:
        first = table[p]; p += 1
        code = (first >> 3) & 15
        end_addr = addr + (first & 7) + 1
        if code == 14:
            line += signed()
            varint(); varint(); varint()
        elif code == 13:
            line += signed()
        elif 10 <= code <= 12:
            line += code - 10
            p += 2
        elif code != 15:
            p += 1
        if addr <= addrq < end_addr:
            return line
        addr = end_addr
    return 0


def scan_file(path, limits=None) -> dict:
    """The raw records of a capture our reader reads, as `kernels.memray_scan.scan_capture` gives
    them: ``header`` (memray's ``HeaderRecord`` fields), ``data`` (the inflated bytes), ``scan``
    (the kernel's tuple), checked (one-line `TraceFormatError` on bad input)."""
    from .limits import resolve_limits

    limits = resolve_limits(limits)
    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(path):
        raise TraceFormatError(f"{path}: not a file")
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError as e:
        fail(path, "byte 0", f"cannot read it: {e.strerror or e}")
    check_head(path, head)
    if os.path.getsize(path) > limits.max_bytes:
        fail(path, "byte 0", f"larger than limits.max_bytes ({limits.max_bytes:,} bytes)")
    with open(path, "rb") as f:
        data = f.read()
    return scan_capture_bytes(data, path, limits)


def scan_capture_bytes(data, source: str, limits) -> dict:
    """`scan_file` of a whole capture's bytes as they are on disk (an LZ4 frame is inflated here;
    its first bytes `memray_capture.check_head` checked)."""
    compressed, _ = check_head(source, bytes(data[:64]))
    if len(data) > limits.max_bytes:
        fail(source, "byte 0", f"larger than limits.max_bytes ({limits.max_bytes:,} bytes)")
    data = bytes(data)
    if compressed:
        data = _inflate(source, data, limits)
        if not data.startswith(MEMRAY_MAGIC + b"\0"):
            fail(source, "byte 0", "an LZ4 frame that does not hold a memray capture")
    return scan_bytes(data, source, limits, inflated=compressed)


def scan_bytes(data: bytes, source: str, limits, inflated: bool = False, partial: bool = False,
               native: bool = False) -> dict:
    """`scan_file` of a capture's bytes (``inflated``: they came out of an LZ4 frame, positions are
    named in them).  ``partial``: the bytes that have arrived so far of a stream still being
    written (memray's live mode): a record cut by their end is left for later; None while the
    header itself is incomplete.  ``native``: any capture of this format version, ``--native`` ones
    and those of older Pythons too (only checked: `refuse_damaged`)."""
    from ..kernels.memray_scan import BAD_STRING, CUT, MESSAGES, OK, TOO_DEEP, TOO_MANY, scan_capture

    def where(at):
        return f"byte {at} of the inflated capture" if inflated else f"byte {at}"

    if partial and len(data) < HEADER_COUNT_AT:
        return None
    why_not = None if native else _header_refuses(data[:HEADER_COUNT_AT])
    if why_not is not None:
        fail(source, where(7), f"{why_not}: load it with reader='memray' (memray.FileReader)")
    if partial:
        try:
            head, start = _header(source, data, where)
        except TraceFormatError:
            if len(data) > (4 << 20):  # no header is that long: not the start of a capture
                raise
            return None  # the header has not fully arrived
    else:
        head, start = _header(source, data, where)
    end = len(data)
    if not inflated and not partial:  # memray's FileSource ignores the zero bytes a killed tracker leaves
        end = len(data.rstrip(b"\0"))
    buf = np.frombuffer(data, np.uint8)
    header_count = int(head["n_allocations"])
    cap_hint = header_count if 0 < header_count <= end else max(end // 4, 16)
    scan = scan_capture(buf, start, end, bool(head["native"]), cap_hint, limits.max_events, limits.max_stack_depth,
                        limits.max_name_chars)
    status, err_at, stop_at = scan[0], scan[1], scan[2]
    if partial and status == BAD_STRING and 0 <= end - err_at <= 2 * limits.max_name_chars + 64:
        status = CUT  # a name still arriving (its NUL not yet within reach of the end): judged once it has
    if partial and status == CUT:  # the last record has not fully arrived: the records before it
        scan = scan_capture(buf, start, err_at, False, cap_hint, limits.max_events, limits.max_stack_depth,
                            limits.max_name_chars)
        status, err_at, stop_at = scan[0], scan[1], scan[2]
    n = scan[4][0].shape[0]
    if status != OK:
        limit = {TOO_DEEP: limits.max_stack_depth, TOO_MANY: limits.max_events}.get(status)
        fail(source, where(err_at), f"record {n:,}: {MESSAGES[status]}" + (f" ({limit:,})" if limit else ""))
    if header_count and n != header_count:
        fail(source, where(stop_at), f"the capture holds {n:,} allocation records where its header announces "
                                      f"{header_count:,} (cut short or damaged)")
    if header_count and not scan[3]:  # a finished capture (its header counts the records) ends with a trailer
        fail(source, where(stop_at), "the capture ends without its trailer (cut short)")
    return {"header": head, "data": data, "scan": scan}


def refuse_damaged(data, source: str, limits, compressed: bool) -> None:
    """Before memray's FileReader reads a capture (``--native`` ones, or ``reader='memray'``): a
    capture of the format version ours reads has its records scanned by ours (native stacks too,
    `scan_bytes`), and a damaged one is refused in one line; an aggregated one is refused from its
    header.  memray's C++ reader trusts its input: a context switch to thread 0 corrupted its heap
    (a crash of the process, issue 78's fuzzer).  Other versions go to memray as they are (it
    reads only its own, and says so)."""
    raw = bytes(data)
    if compressed:
        raw = _inflate(source, raw, limits)
    if len(raw) < HEADER_COUNT_AT or not raw.startswith(MEMRAY_MAGIC + b"\0"):
        return
    if struct.unpack_from("<i", raw, 7)[0] != HEADER_VERSION:
        return
    if raw[16] != 0:
        fail(source, "byte 16", "an aggregated capture (memray run --aggregate) holds no allocation records: "
                                "record it without --aggregate")
    scan_bytes(raw, source, limits, inflated=compressed, native=True)


def _code_rows(co_id: np.ndarray, fr_code: np.ndarray) -> np.ndarray:
    """Per frame the row of its code object's CODE_OBJECT record (the last of its id, as a dict
    filled in stream order keeps it); -1 when the capture has none."""
    if not co_id.size:
        return np.full(fr_code.shape[0], -1, np.int64)
    order = np.argsort(co_id, kind="stable")
    ids = co_id[order]
    last = np.flatnonzero(np.r_[ids[1:] != ids[:-1], True])  # the last row of each id
    ids, rows = ids[last], order[last]
    at = np.minimum(np.searchsorted(ids, fr_code), ids.size - 1)
    return np.where(ids[at] == fr_code, rows[at], -1).astype(np.int64)


def _stack_input(data: bytes, codes, frames, nodes, keys, key_tid, main_tid: int, skipped: int) -> StackInput:
    """The `StackInput` of our scan: memray's FrameTree nodes (node 0, the root, left out) as the
    trie, a frame's location (function, file, line) once per frame id and deduplicated; per stack
    key its node and depth, less memray's skipped outermost frames on the main thread (as memray's
    reader leaves them out).  Linear in the nodes, frames and code objects."""
    from ..kernels.memray_scan import frame_lines
    from ..kernels.stack_trie import trie_depths

    co_id, co = codes
    fr_code, fr_off, _fr_entry = frames
    nd_frame, nd_parent = nodes
    row = _code_rows(co_id, fr_code)
    buf = np.frombuffer(data, np.uint8)
    line = int32_lines(frame_lines(buf, co[:, 5].copy(), co[:, 6].copy(), co[:, 4].copy(), row, fr_off)) \
        if fr_code.size else np.zeros(0, np.int32)
    # (function, file) once per code object a frame uses; a frame of an unknown code: ("", "", 0)
    names: dict = {("", ""): 0}
    name_of_row = np.zeros(max(co.shape[0], 1), np.int64)
    for r in np.unique(row[row >= 0]).tolist():
        c = co[r]
        key = (data[c[0]:c[1]].decode("utf-8", "replace"), data[c[2]:c[3]].decode("utf-8", "replace"))
        name_of_row[r] = names.setdefault(key, len(names))
    fname = np.where(row >= 0, name_of_row[np.maximum(row, 0)], 0)
    loc_key = (fname.astype(np.uint64) << np.uint64(32)) | (line.astype(np.uint32).astype(np.uint64))
    uniq, loc_of_frame = np.unique(loc_key, return_inverse=True)
    name_list = list(names)
    u_name = (uniq >> np.uint64(32)).astype(np.int64).tolist()
    loc_line = (uniq & np.uint64(0xFFFFFFFF)).astype(np.uint32).astype(np.int32).astype(np.int64)
    # the trie: memray's nodes 1.. as 0.., a child of the root a root
    node_parent = nd_parent[1:].astype(np.int64) - 1
    node_loc = loc_of_frame.reshape(-1)[nd_frame[1:]] if nd_frame.size > 1 else np.zeros(0, np.int64)
    depth = trie_depths(node_parent)
    stack_node = keys.astype(np.int64) - 1
    stack_len = np.where(stack_node >= 0, depth[np.maximum(stack_node, 0)] if depth.size else 0, 0)
    if skipped:
        on_main = np.asarray(key_tid, np.uint64) == np.uint64(main_tid)
        stack_len = np.where(on_main, np.maximum(stack_len - skipped, 0), stack_len)
    return StackInput([name_list[k][0] for k in u_name], [name_list[k][1] for k in u_name], loc_line,
                      node_loc.astype(np.int64), node_parent, stack_node, stack_len.astype(np.int64))


def load_own(data, source: str, limits, warn: bool) -> MemoryCapture:
    """The `MemoryCapture` our reader makes of the capture ``data`` (its bytes on disk)."""
    return capture_of(scan_capture_bytes(data, source, limits), source, limits, warn)


def capture_of(raw: dict, path: str, limits, warn: bool, live: bool = False,
                end_epoch_ms: float | None = None) -> MemoryCapture:
    """The `MemoryCapture` of `scan_bytes`'s records (``live``: of a stream still running, whose
    missing trailer is no repair; ``end_epoch_ms``: when its last byte arrived, ms since the epoch,
    its end where the header leaves it 0 as memray's live stream does)."""
    head, data = raw["header"], raw["data"]
    (status, err_at, stop_at, trailer, allocs, memory, threads, frames, nodes, codes, _native_frames) = raw["scan"]
    n = allocs[0].shape[0]
    repairs: dict = {}
    if not trailer and not live:
        repairs["no_trailer"] = {"count": 1, "first": int(stop_at),
                                 "action": "read up to the end (the tracked process did not finish its capture)"}
    address, size, allocator, t_index, stack_id = allocs[0], allocs[1], allocs[2], allocs[3], allocs[4]
    th_tid, th_n0, th_n1 = threads
    tid = th_tid[t_index] if th_tid.size else np.zeros(n, np.uint64)
    thread_name = {int(t): (data[a:b].decode("utf-8", "replace") if a >= 0 else "")
                   for t, a, b in zip(th_tid.tolist(), th_n0.tolist(), th_n1.tolist())}

    # stacks: the distinct stack ids in first-seen order, frees too (stack 0, as memray's path keys
    # them), and their frames: memray's FrameTree as a trie, each node's location computed once
    from ..kernels.memray_scan import first_records

    first = first_records(stack_id, nodes[0].shape[0])
    keys = np.flatnonzero(first >= 0)
    keys = keys[np.argsort(first[keys], kind="stable")]
    main_tid, skipped = int(head["main_tid"]), int(head["skipped"])
    stacks = _stack_input(data, codes, frames, nodes, keys, tid[first[keys]] if n else np.zeros(0, np.uint64),
                          main_tid, skipped)

    # the end from the last byte's arrival: our clock is memray's on loopback (a peer's clock ahead
    # of ours gives a span below 0: not used, its last snapshot is the end)
    arrived = float(end_epoch_ms) - float(head["start_ms"]) if end_epoch_ms and head["start_ms"] > 0 else 0.0

    # the clock: the memory records where they are in the stream, every stride-th past 10,000
    m_pos, m_rss, m_ms = memory
    if m_pos.size > MAX_SNAPSHOTS:
        stride = -(-m_pos.size // MAX_SNAPSHOTS)
        m_pos, m_rss, m_ms = m_pos[::stride], m_rss[::stride], m_ms[::stride]
    return assemble(
        path, address=address, size=size, allocator=allocator, tid=tid, skey=stack_id,
        keys=keys.reshape(-1, 1), stacks=stacks, thread_name=thread_name, leaked_bytes=None,
        peak_bytes=None, n_allocations=n, snap_ms=m_ms.astype(np.float64), snap_rss=m_rss.astype(np.int64),
        snap_heap=None, snap_pos=m_pos, start_ms=float(head["start_ms"]),
        end_ms=max(float(head["end_ms"] - head["start_ms"]), arrived, 0.0), command_line=head["command_line"],
        pid=int(head["pid"]), python_allocator=PYTHON_ALLOCATORS.get(int(head["python_allocator"]), "unknown"),
        native=False, trace_python_allocators=head["trace_python_allocators"], main_tid=main_tid, repairs=repairs,
        reader_name="tracevis3d (kernels.memray_scan)", warn=warn, threads_complete=True)
