"""memray captures (``python -m memray run -o out.bin``) as arrays: `load_memory`.

Two readers give the same `MemoryCapture`:

- our own (`kernels.memray_scan.scan_capture`, numba, one pass over the bytes; LZ4-compressed
  captures, memray's default, are inflated by the ``lz4`` package first).  It reads memray 1.20's
  format (header version 13) of every capture but ``--native`` ones (whose native stacks need
  memray's symbol resolver) and ``--aggregate`` ones (another format, without the records);
  memray itself is not needed.  The figures are computed from the records the way memray's
  reader does: ``n_allocations`` counts the allocation records, ``peak_bytes`` is the high-water
  mark of the paired ranges (memray's ``HighWatermarkFinder``), ``leaked_bytes`` the ranges
  still alive at the end, the memory snapshots are the capture's MEMORY_RECORDs with the heap
  counted at their place in the stream (every ``ceil(n / 10000)``-th one past 10,000, as
  ``FileReader`` keeps them), and stack ids, frames (function, file, line from the code object's
  line table, memray's ``compat::parseLinetable`` for Python >= 3.11) and thread names are
  memray's;
- memray's own `memray.FileReader` (memray is the optional extra ``tracevis3d[memory]``): the
  fallback for what ours does not read (``reader="auto"``), or asked for (``reader="memray"``).
  ``metadata`` gives the three figures (``peak_memory``, ``total_allocations``: memray counts
  every record, frees too; the sum of ``get_leaked_allocation_records()``);
  ``get_allocation_records()`` is iterated once, five fields per record into flat arrays (no
  Python object per allocation is kept), the first record of every distinct stack gives its
  frames; ``get_memory_snapshots()`` gives the clock, each snapshot placed in the record stream
  where the paired ranges reach its heap (`kernels.memcov.snapshot_positions`).

The records carry no time: the records between two memory snapshots (about 10 ms apart) spread
evenly between their times.  Records become *ranges* (`kernels.memcov.pair_ranges`: an
allocation and the free that ends it); a range alive at the end is leaked.  Sites are the
distinct innermost frames (function, file, line: where the allocator was called, Memcov's "call
site"); stacks are the distinct Python stacks (or native ones in a ``--native`` capture without
Python frames).

Bad input (not a capture, another memray version, a capture cut short or damaged) raises
`TraceFormatError` with one line naming the file, the record or byte, and the problem.
"""
from __future__ import annotations

import array
import contextlib
import itertools
import operator
import os
import struct
import tempfile
from dataclasses import dataclass, field

import numpy as np

from ..errors import TraceFormatError

__all__ = ["MemoryCapture", "MemrayLiveStream", "load_memory", "scan_file", "scan_bytes", "MEMRAY_MAGIC", "LZ4_MAGIC"]

MEMRAY_MAGIC = b"memray"
LZ4_MAGIC = b"\x04\x22\x4d\x18"
#: the header layout this reader checks the record count of (memray 1.x, header version 13):
#: magic "memray\\0", int32 version, int32 Python version, bool native, uint8 format, uint64 n_allocations at byte 17
HEADER_VERSION = 13
HEADER_COUNT_AT = 17
#: the fields read from every `memray.AllocationRecord` (memray's native stack id too with --native)
FIELDS = ("address", "size", "allocator", "tid", "stack_id")
NATIVE_FIELDS = FIELDS + ("native_stack_id", "native_segment_generation")


@dataclass
class MemoryCapture:
    """A memray capture as arrays.  Times are ms on the capture's clock (0 = its start).

    Figures: ``peak_bytes``, ``n_allocations``, ``leaked_bytes`` (memray's own, exactly).
    Ranges (one per allocating record, record order): ``range_address``, ``range_size``,
    ``range_start``/``range_end`` (ms; a leaked range ends at ``duration_ms``),
    ``range_leaked``, ``range_stack`` (into the stacks), ``range_thread`` (into ``thread_names``),
    ``range_allocator`` (memray's `AllocatorType` code), ``range_record``/``range_freed_by``
    (record indices; -1: never freed).
    Stacks: ``stack_frames[s]`` frame ids innermost first (into ``frame_function``,
    ``frame_file``, ``frame_line``), ``stack_site[s]``.  Sites (innermost frames): ``site_function``,
    ``site_file``, ``site_line``; per site ``site_start``/``site_end`` (first allocation, last
    moment it held bytes), ``site_bytes``/``site_count`` (allocated in all).
    Snapshots: ``snap_ms``, ``snap_rss``, ``snap_heap``.  High-water mark: ``hwm_ms``.
    """

    source: str
    peak_bytes: int
    n_allocations: int
    leaked_bytes: int
    duration_ms: float
    start_epoch_ms: float
    command_line: str
    pid: int
    python_allocator: str
    native: bool
    trace_python_allocators: bool
    n_records: int
    range_address: np.ndarray
    range_size: np.ndarray
    range_start: np.ndarray
    range_end: np.ndarray
    range_leaked: np.ndarray
    range_stack: np.ndarray
    range_thread: np.ndarray
    range_allocator: np.ndarray
    range_record: np.ndarray
    range_freed_by: np.ndarray
    stack_frames: list
    stack_site: np.ndarray
    frame_function: list
    frame_file: list
    frame_line: np.ndarray
    site_function: list
    site_file: list
    site_line: np.ndarray
    site_start: np.ndarray
    site_end: np.ndarray
    site_bytes: np.ndarray
    site_count: np.ndarray
    thread_ids: np.ndarray
    thread_names: list
    snap_ms: np.ndarray
    snap_rss: np.ndarray
    snap_heap: np.ndarray
    hwm_ms: float
    clock: str  # "snapshots" (memray's temporal records) or "records" (record order, a repair)
    meta: dict = field(default_factory=dict)

    @property
    def n_ranges(self) -> int:
        return int(self.range_size.shape[0])

    @property
    def n_sites(self) -> int:
        return len(self.site_function)

    @property
    def range_site(self) -> np.ndarray:
        """int32 per range: its site."""
        return self.stack_site[self.range_stack] if self.stack_site.size else np.zeros(self.n_ranges, np.int32)

    def site_label(self, s: int) -> str:
        """``function (file:line)`` of site ``s``, the file by its name alone (a frozen module's
        ``<frozen importlib._bootstrap>`` by its last dotted part)."""
        f = _short_file(self.site_file[s])
        return f"{self.site_function[s]} ({f}:{int(self.site_line[s])})" if f else self.site_function[s]

    def site_module(self, s: int) -> str:
        """The module of site ``s``: its file's name without the extension (a package's
        ``__init__`` as the package), or the function for frames without a file."""
        f = self.site_file[s].replace("\\", "/")
        if not f:
            return self.site_function[s]
        parts = f.split("/")
        base = parts[-1].rsplit(".", 1)[0]
        if base == "__init__" and len(parts) > 1:
            base = parts[-2]
        return base or f

    def stack_text(self, s: int, max_frames: int = 30) -> list:
        """Stack ``s`` as ``function (file:line)`` lines, innermost first."""
        out = []
        for fr in self.stack_frames[s][:max_frames]:
            f = _short_file(self.frame_file[fr])
            out.append(f"{self.frame_function[fr]} ({f}:{int(self.frame_line[fr])})" if f else self.frame_function[fr])
        return out


def _short_file(path: str) -> str:
    if not path:
        return ""
    if path.startswith("<frozen ") and path.endswith(">"):
        return path[8:-1].rsplit(".", 1)[-1]
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _fail(path: str, where: str, problem: str):
    raise TraceFormatError(f"{path}: {where}: {' '.join(str(problem).split())}") from None


@contextlib.contextmanager
def _captured_stderr():
    """memray's C++ reader reports a damaged record on file descriptor 2 ("Memray ERROR: ...");
    that text is kept (it names the problem) instead of reaching the terminal."""
    buf = tempfile.TemporaryFile()
    box = {"text": ""}
    try:
        saved = os.dup(2)
    except OSError:  # no stderr to redirect
        yield box
        return
    try:
        os.dup2(buf.fileno(), 2)
        yield box
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        buf.seek(0)
        box["text"] = buf.read(4096).decode("utf-8", "replace")
        buf.close()


def _head_check(path: str) -> tuple:
    """(compressed, the record count the header announces or 0) from the first bytes; a file
    that is neither a memray capture nor an LZ4 frame fails here (byte 0)."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError as e:
        _fail(path, "byte 0", f"cannot read it: {e.strerror or e}")
    if not head:
        _fail(path, "byte 0", "empty file, not a memray capture")
    if head.startswith(LZ4_MAGIC):
        if MEMRAY_MAGIC not in head[:40]:
            _fail(path, "byte 0", "an LZ4 frame that does not hold a memray capture")
        return True, 0
    if not head.startswith(MEMRAY_MAGIC):
        _fail(path, "byte 0", "not a memray capture (no 'memray' magic)")
    if len(head) < HEADER_COUNT_AT + 8:
        _fail(path, f"byte {len(head)}", "the capture ends inside its header")
    version = struct.unpack_from("<i", head, 7)[0]
    count = struct.unpack_from("<Q", head, HEADER_COUNT_AT)[0] if version == HEADER_VERSION else 0
    return False, count


READERS = ("auto", "own", "memray")


def load_memory(path, warn: bool = True, reader: str = "auto", limits=None) -> MemoryCapture:
    """Read the memray capture at ``path`` into a `MemoryCapture` (module docstring).

    ``reader``: "own" (`kernels.memray_scan`, memray 1.20's format), "memray"
    (`memray.FileReader`), or "auto": ours for the captures it reads, else memray's.
    """
    if reader not in READERS:
        raise ValueError(f"reader must be one of {', '.join(READERS)}, not {reader!r}")
    from .limits import resolve_limits

    limits = resolve_limits(limits)
    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(path):
        raise TraceFormatError(f"{path}: not a file")
    compressed, header_count = _head_check(path)
    if reader != "memray":
        why_not = _own_reader_refuses(path, compressed)
        if why_not is None:
            return _load_own(path, limits, warn)
        if reader == "own":
            _fail(path, "byte 0", f"{why_not}: load it with reader='memray' (memray.FileReader)")
    return _load_with_filereader(path, header_count)


def _load_with_filereader(path: str, header_count: int) -> MemoryCapture:
    try:
        import memray  # noqa: F401
    except ImportError:
        raise ImportError("reading this memray capture needs memray: pip install 'tracevis3d[memory]' "
                          "(or pip install memray)") from None
    with _captured_stderr() as err:
        import memray

        try:
            reader = memray.FileReader(path)
            opened = None
        except (OSError, ValueError, RuntimeError, MemoryError) as e:
            reader, opened = None, e
    if reader is None:
        msg = " ".join(str(opened).split())
        if "does not look like" in msg or "header" in msg:
            msg = (f"memray {memray.__version__} cannot read it: not a capture, one of another memray version, or a "
                   f"compressed capture cut short ({msg})")
        _fail(path, "byte 0", msg)
    with contextlib.closing(reader):
        md = reader.metadata
        n_read = int(md.total_allocations)
        if err["text"].strip():
            _fail(path, f"record {n_read}", f"memray stopped reading there: {err['text'].strip().splitlines()[0]} "
                                            f"(the capture is damaged or cut short)")
        if header_count and n_read < header_count:
            _fail(path, f"record {n_read}", f"the capture ends after {n_read:,} of the {header_count:,} records its "
                                            f"header announces (cut short)")
        if int(md.file_format) != 0:
            _fail(path, "byte 0", "an aggregated capture (memray run --aggregate) holds no allocation records: "
                                  "record it without --aggregate")
        return _read(reader, md, path)


# ----------------------------------------------------------------------------- our own reader
#: the Python allocator names memray's metadata gives (``_memray.pyx``'s ``_create_metadata``)
PYTHON_ALLOCATORS = {1: "pymalloc", 2: "pymalloc debug", 3: "malloc", 4: "unknown", 5: "mimalloc",
                     6: "mimalloc debug"}
#: memray's ``FileReader`` keeps at most this many memory snapshots (``max_memory_records``)
MAX_SNAPSHOTS = 10000


def _own_reader_refuses(path: str, compressed: bool):
    """Why our reader does not read this capture (None: it does), from its first bytes."""
    if compressed:
        try:
            import lz4.frame  # noqa: F401
        except ImportError:
            return "a compressed capture needs the lz4 package (pip install lz4) for this reader"
        with open(path, "rb") as f:
            first = f.read(1 << 16)
        try:  # the header's first bytes, inflated from the frame's start
            head = lz4.frame.LZ4FrameDecompressor().decompress(first, max_length=HEADER_COUNT_AT)
        except RuntimeError:
            return None  # a damaged frame: our reader says where
        return _header_refuses(head) if head.startswith(MEMRAY_MAGIC) else None
    with open(path, "rb") as f:
        head = f.read(HEADER_COUNT_AT)
    return _header_refuses(head)


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
    damaged frame is named by the piece it fails in."""
    import lz4.frame

    d = lz4.frame.LZ4FrameDecompressor()
    out = []
    total = 0
    step = 1 << 20
    for at in range(0, len(data), step):
        try:
            piece = d.decompress(data[at:at + step], max_length=limits.max_bytes + 1 - total)
        except RuntimeError as e:
            _fail(path, f"byte {at}", f"the LZ4 frame is damaged in the {min(step, len(data) - at):,} bytes from here "
                                      f"({e})")
        out.append(piece)
        total += len(piece)
        while not d.eof and not d.needs_input and total <= limits.max_bytes:
            piece = d.decompress(b"", max_length=limits.max_bytes + 1 - total)
            out.append(piece)
            total += len(piece)
        if total > limits.max_bytes:
            _fail(path, f"byte {at}", f"the capture inflates past limits.max_bytes ({limits.max_bytes:,} bytes)")
        if d.eof:
            break
    if not d.eof:
        _fail(path, f"byte {len(data)}", "the LZ4 frame ends before its end mark (a compressed capture cut short)")
    return b"".join(out)


def _header(path: str, buf: bytes, where) -> tuple:
    """memray's ``HeaderRecord`` (``RecordReader::readHeader``) as a dict and the offset after it."""
    def cut(at):
        _fail(path, where(at), "the capture ends inside its header")

    if len(buf) < 49:
        cut(len(buf))
    version, python_version = struct.unpack_from("<ii", buf, 7)
    n_alloc, n_frames, start, end = struct.unpack_from("<QQqq", buf, 17)

    def string(at):
        q = buf.find(b"\0", at, at + (1 << 20))
        if q < 0:
            cut(len(buf)) if len(buf) - at < (1 << 20) else _fail(path, where(at), "a header string without its end")
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
    compressed, _ = _head_check(path)
    size_on_disk = os.path.getsize(path)
    if size_on_disk > limits.max_bytes:
        _fail(path, "byte 0", f"larger than limits.max_bytes ({limits.max_bytes:,} bytes)")
    with open(path, "rb") as f:
        data = f.read()
    if compressed:
        data = _inflate(path, data, limits)
        if not data.startswith(MEMRAY_MAGIC + b"\0"):
            _fail(path, "byte 0", "an LZ4 frame that does not hold a memray capture")
    return scan_bytes(data, path, limits, inflated=compressed)


def scan_bytes(data: bytes, source: str, limits, inflated: bool = False, partial: bool = False) -> dict:
    """`scan_file` of a capture's bytes (``inflated``: they came out of an LZ4 frame, positions are
    named in them).  ``partial``: the bytes that have arrived so far of a stream still being
    written (memray's live mode): a record cut by their end is left for later; None while the
    header itself is incomplete."""
    from ..kernels.memray_scan import CUT, MESSAGES, OK, scan_capture

    def where(at):
        return f"byte {at} of the inflated capture" if inflated else f"byte {at}"

    if partial and len(data) < HEADER_COUNT_AT:
        return None
    why_not = _header_refuses(data[:HEADER_COUNT_AT])
    if why_not is not None:
        _fail(source, where(7), f"{why_not}: load it with reader='memray' (memray.FileReader)")
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
    scan = scan_capture(buf, start, end, False, cap_hint, limits.max_events, limits.max_stack_depth,
                        limits.max_name_chars)
    status, err_at, stop_at = scan[0], scan[1], scan[2]
    if partial and status == CUT:  # the last record has not fully arrived: the records before it
        scan = scan_capture(buf, start, err_at, False, cap_hint, limits.max_events, limits.max_stack_depth,
                            limits.max_name_chars)
        status, err_at, stop_at = scan[0], scan[1], scan[2]
    n = scan[4][0].shape[0]
    if status != OK:
        _fail(source, where(err_at), f"record {n:,}: {MESSAGES[status]}")
    if header_count and n != header_count:
        _fail(source, where(stop_at), f"the capture holds {n:,} allocation records where its header announces "
                                      f"{header_count:,} (cut short or damaged)")
    if header_count and not scan[3]:  # a finished capture (its header counts the records) ends with a trailer
        _fail(source, where(stop_at), "the capture ends without its trailer (cut short)")
    return {"header": head, "data": data, "scan": scan}


def _load_own(path: str, limits, warn: bool) -> MemoryCapture:
    return _capture_of(scan_file(path, limits), path, limits, warn)


def _capture_of(raw: dict, path: str, limits, warn: bool, live: bool = False) -> MemoryCapture:
    """The `MemoryCapture` of `scan_bytes`'s records (``live``: of a stream still running, whose
    missing trailer is no repair)."""
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
    # them), and their frames
    from ..kernels.memray_scan import first_records

    first = first_records(stack_id, nodes[0].shape[0])
    keys = np.flatnonzero(first >= 0)
    keys = keys[np.argsort(first[keys], kind="stable")]
    first_rec = first[keys]
    code_info = {}
    co_id, co = codes
    for c, row in zip(co_id.tolist(), co.tolist()):
        code_info[c] = (data[row[0]:row[1]].decode("utf-8", "replace"), data[row[2]:row[3]].decode("utf-8", "replace"),
                        row[4], data[row[5]:row[6]])
    fr_code, fr_off, _fr_entry = frames
    nd_frame, nd_parent = nodes
    location: dict = {}

    def frame_location(fid: int) -> tuple:
        loc = location.get(fid)
        if loc is None:
            fn, file, firstline, table = code_info.get(int(fr_code[fid]), ("", "", 0, b""))
            off = int(fr_off[fid])
            line = _line_311(table, off, firstline) if table and off >= 0 else 0
            loc = location[fid] = (fn, file, line)
        return loc

    main_tid, skipped = int(head["main_tid"]), int(head["skipped"])
    stack_tuples = []
    for k, r in zip(keys.tolist(), first_rec.tolist()):
        fids = []
        node = k
        while node != 0 and len(fids) <= limits.max_stack_depth:
            fids.append(int(nd_frame[node]))
            node = int(nd_parent[node])
        if skipped and int(tid[r]) == main_tid:
            del fids[max(len(fids) - skipped, 0):]
        stack_tuples.append([frame_location(f) for f in fids])

    # the clock: the memory records where they are in the stream, every stride-th past 10,000
    m_pos, m_rss, m_ms = memory
    if m_pos.size > MAX_SNAPSHOTS:
        stride = -(-m_pos.size // MAX_SNAPSHOTS)
        m_pos, m_rss, m_ms = m_pos[::stride], m_rss[::stride], m_ms[::stride]
    return _assemble(
        path, address=address, size=size, allocator=allocator, tid=tid, skey=stack_id,
        keys=keys.reshape(-1, 1), stack_tuples=stack_tuples, thread_name=thread_name, leaked_bytes=None,
        peak_bytes=None, n_allocations=n, snap_ms=m_ms.astype(np.float64), snap_rss=m_rss.astype(np.int64),
        snap_heap=None, snap_pos=m_pos, start_ms=float(head["start_ms"]),
        end_ms=max(float(head["end_ms"] - head["start_ms"]), 0.0), command_line=head["command_line"],
        pid=int(head["pid"]), python_allocator=PYTHON_ALLOCATORS.get(int(head["python_allocator"]), "unknown"),
        native=False, trace_python_allocators=head["trace_python_allocators"], main_tid=main_tid, repairs=repairs,
        reader_name="tracevis3d (kernels.memray_scan)", warn=warn, threads_complete=True)


def _records(reader, native: bool) -> tuple:
    """The records' fields as a (n, 5 or 7) uint64 array, and the first record of every distinct
    stack (its frames are read later): one pass over memray's iterator, the fields pulled by a
    C-level getter into a growing C array, the stack's first record kept by a C-level
    ``dict.setdefault`` on a copy of the stream (``itertools.tee``); no Python object per record
    is kept."""
    fields = NATIVE_FIELDS if native else FIELDS
    get = operator.attrgetter(*fields)
    stack_key = operator.attrgetter("stack_id", "native_stack_id", "native_segment_generation") if native \
        else operator.attrgetter("stack_id")
    first: dict = {}
    a, b, c = itertools.tee(reader.get_allocation_records(), 3)
    pairs = zip(map(get, a), map(first.setdefault, map(stack_key, b), c))
    buf = array.array("Q")
    buf.extend(itertools.chain.from_iterable(map(operator.itemgetter(0), pairs)))
    k = len(fields)
    rec = np.frombuffer(buf, np.uint64).reshape(-1, k) if len(buf) else np.zeros((0, k), np.uint64)
    return rec, first


def _frames_of(rec, native: bool) -> list:
    """The frames of a record's stack, innermost first (none for a free: memray keeps no stack
    for deallocations, whose stack id is 0)."""
    try:
        st = rec.stack_trace()
    except NotImplementedError:
        return []
    if not st and native:
        try:
            st = [(f[0], f[1], f[2]) for f in rec.native_stack_trace()]
        except Exception:  # a native stack memray cannot resolve: no frames
            st = []
    return st


_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9),
        np.uint64(0x27D4EB2F165667C5))


def _loc_key(a, b, c, d, e) -> np.ndarray:
    """One uint64 per row of up to five uint64 columns (a multiplicative hash: native stacks are
    keyed by memray's (stack id, native stack id, segment generation))."""
    with np.errstate(over="ignore"):
        return (a * _MIX[0]) ^ (b * _MIX[1]) ^ (c * _MIX[2]) ^ ((d * _MIX[3]) + e)


def _lookup(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """int32 per value (one row of up to three uint64 columns, or a column): the row of ``keys``
    it equals; through a dense table when the keys are small integers (memray's stack ids and
    thread numbers are), else a hash and a sorted search."""
    if not values.shape[0]:
        return np.zeros(0, np.int32)
    values = values.reshape(values.shape[0], -1)
    if not keys.shape[0]:
        return np.zeros(values.shape[0], np.int32)
    if keys.shape[1] == 1 and int(keys.max()) < (1 << 26):
        table = np.zeros(int(keys.max()) + 1, np.int32)
        table[keys[:, 0].astype(np.int64)] = np.arange(keys.shape[0], dtype=np.int32)
        v = values[:, 0]
        return table[np.minimum(v, np.uint64(table.size - 1)).astype(np.int64)]
    z = [np.zeros(keys.shape[0], np.uint64), np.zeros(values.shape[0], np.uint64)]
    kh = _loc_key(*(keys[:, j] if j < keys.shape[1] else z[0] for j in range(3)), z[0], z[0])
    vh = _loc_key(*(values[:, j] if j < values.shape[1] else z[1] for j in range(3)), z[1], z[1])
    order = np.argsort(kh, kind="stable")
    return order[np.minimum(np.searchsorted(kh[order], vh), keys.shape[0] - 1)].astype(np.int32)


def _read(reader, md, path: str) -> MemoryCapture:
    """The `MemoryCapture` of a capture memray's `FileReader` opened."""
    native = bool(md.has_native_traces)
    rec, first = _records(reader, native)
    address, size, allocator, tid = rec[:, 0], rec[:, 1], rec[:, 2], rec[:, 3]  # views: no copies
    skey = rec[:, 4:7] if native else rec[:, 4]
    leaked_bytes = int(sum(int(r.size) for r in reader.get_leaked_allocation_records(merge_threads=False)))
    snaps = list(reader.get_memory_snapshots())
    start_ms = md.start_time.timestamp() * 1000.0
    keys = list(first)
    thread_name: dict = {}
    stack_tuples = []
    for k in keys:
        r = first[k]
        stack_tuples.append([(str(fr[0]), str(fr[1] or ""), int(fr[2] or 0)) for fr in _frames_of(r, native)])
        try:
            thread_name.setdefault(int(r.tid), r.thread_name or "")
        except Exception:  # a thread memray has no name for
            thread_name.setdefault(int(r.tid), "")
    return _assemble(
        path, address=address, size=size, allocator=allocator, tid=tid, skey=skey,
        keys=np.array(keys, np.uint64).reshape(len(keys), -1), stack_tuples=stack_tuples, thread_name=thread_name,
        leaked_bytes=leaked_bytes, peak_bytes=int(md.peak_memory), n_allocations=int(md.total_allocations),
        snap_ms=np.array([s.time - start_ms for s in snaps], np.float64),
        snap_rss=np.array([s.rss for s in snaps], np.int64), snap_heap=np.array([s.heap for s in snaps], np.int64),
        snap_pos=None, start_ms=start_ms, end_ms=max(md.end_time.timestamp() * 1000.0 - start_ms, 0.0),
        command_line=str(md.command_line), pid=int(md.pid), python_allocator=str(md.python_allocator),
        native=native, trace_python_allocators=bool(md.trace_python_allocators), main_tid=int(md.main_thread_id),
        repairs={}, reader_name=f"memray.FileReader {_memray_version()}", warn=False)


def _assemble(path: str, *, address, size, allocator, tid, skey, keys, stack_tuples, thread_name,
              leaked_bytes, peak_bytes, n_allocations, snap_ms, snap_rss, snap_heap, snap_pos, start_ms, end_ms,
              command_line, pid, python_allocator, native, trace_python_allocators, main_tid, repairs,
              reader_name, warn, threads_complete=False) -> MemoryCapture:
    """The `MemoryCapture` from either reader's records (one row per allocator record: address,
    size, allocator, thread id, stack key), the distinct stack keys (``keys``, the frames of each
    as (function, file, line) innermost first in ``stack_tuples``) and the memory snapshots.
    ``snap_pos`` (records before each snapshot) is known to our reader; memray's gives the heap at
    each snapshot instead (``snap_heap``), which places it.  Figures left None are computed from the
    paired ranges.  ``threads_complete``: ``thread_name`` has every thread of the records."""
    from ..kernels.memcov import group_span, heap_curve_peak, pair_ranges, record_role, snapshot_positions
    from ..kernels.memray_scan import heap_at, record_times_at

    n = address.shape[0]
    role, space = record_role(allocator)
    closed_by, alloc_of, n_unpaired, n_over = pair_ranges(address, size, role, space)
    peak_pairs, at = heap_curve_peak(size, role, alloc_of)
    end_ms = float(end_ms)
    if snap_ms.size:
        end_ms = max(end_ms, float(snap_ms.max()))
    if snap_pos is not None:
        pos, n_placed = snap_pos.astype(np.int64), snap_pos.size
        snap_heap = heap_at(size, role, alloc_of, pos)
    else:  # each snapshot placed where the paired ranges reach the heap the reader had counted then
        pos, n_placed = snapshot_positions(size, role, alloc_of, snap_heap)
    clock = "snapshots"
    if n_placed < snap_heap.size:
        clock = "snapshots (partly)" if n_placed else "records"
        repairs["snapshot_not_placed"] = {
            "count": int(snap_heap.size - n_placed), "first": int(n_placed),
            "action": "memory snapshots whose heap the records never reach: the records after the last placed "
                      "snapshot spread evenly up to the end"}
    t_rec = record_times_at(np.ascontiguousarray(pos[:n_placed], np.int64), snap_ms[:n_placed].copy(), n, end_ms)
    if n_unpaired:
        repairs["free_without_allocation"] = {"count": int(n_unpaired), "first": int(np.flatnonzero(
            (role < 0) & (alloc_of < 0))[0]), "action": "ignored (a block allocated before tracking started)"}
    if n_over:
        repairs["allocation_over_live_range"] = {"count": int(n_over), "first": -1,
                                                 "action": "the earlier range ends where the address is reused"}

    # frames of the distinct stacks; threads
    frames: dict = {}
    frame_function, frame_file, frame_line = [], [], []
    stack_frames: list = []
    for tuples in stack_tuples:
        ids = []
        for fr in tuples:
            f = frames.get(fr)
            if f is None:
                f = frames[fr] = len(frame_function)
                frame_function.append(fr[0])
                frame_file.append(fr[1])
                frame_line.append(fr[2])
            ids.append(f)
        stack_frames.append(ids)
    if not threads_complete:  # a name for every thread that has records
        for t in np.unique(tid).tolist():
            thread_name.setdefault(int(t), "")
    allocating = role > 0
    idx = np.flatnonzero(allocating)
    r_stack = _lookup(keys, skey[idx])

    freed_by = closed_by[idx]
    leaked = freed_by < 0
    r_start = t_rec[idx]
    r_end = np.where(leaked, end_ms, t_rec[np.maximum(freed_by, 0)])
    r_end = np.maximum(r_end, r_start)
    tids = np.array(sorted(thread_name), np.int64)
    r_thread = _lookup(tids.astype(np.uint64)[:, None], tid[idx])
    hwm_ms = float(t_rec[at]) if at >= 0 else 0.0

    # sites: distinct innermost frames
    site_of_frame: dict = {}
    site_function, site_file, site_line = [], [], []
    stack_site = np.zeros(len(stack_frames), np.int32)
    for s, ids in enumerate(stack_frames):
        key = ids[0] if ids else -1
        g = site_of_frame.get(key)
        if g is None:
            g = site_of_frame[key] = len(site_function)
            if key >= 0:
                site_function.append(frame_function[key]); site_file.append(frame_file[key])
                site_line.append(frame_line[key])
            else:
                site_function.append("<no Python frames>"); site_file.append(""); site_line.append(0)
        stack_site[s] = g
    n_sites = len(site_function)
    r_site = stack_site[r_stack] if stack_site.size else np.zeros(idx.size, np.int32)
    r_size = size[idx]
    site_start, site_end = group_span(r_site, r_start, r_end, n_sites)
    site_bytes = np.bincount(r_site, weights=r_size.astype(np.float64), minlength=n_sites).astype(np.int64)
    site_count = np.bincount(r_site, minlength=n_sites).astype(np.int64)
    if leaked_bytes is None:
        leaked_bytes = int(r_size[leaked].sum(dtype=np.uint64))
    if peak_bytes is None:
        peak_bytes = int(peak_pairs)
    # a free of a block allocated before tracking started is in every capture: counted, not warned
    odd = {k: v for k, v in repairs.items() if k != "free_without_allocation"}
    if warn and odd:
        import warnings

        from ..errors import TraceWarning

        warnings.warn(TraceWarning(f"{path}: repaired: " + "; ".join(
            f"{k} x{v['count']} ({v['action']})" for k, v in odd.items())), stacklevel=4)
    return MemoryCapture(
        source=path, peak_bytes=int(peak_bytes), n_allocations=int(n_allocations),
        leaked_bytes=int(leaked_bytes), duration_ms=float(end_ms), start_epoch_ms=float(start_ms),
        command_line=command_line, pid=pid, python_allocator=python_allocator,
        native=native, trace_python_allocators=trace_python_allocators, n_records=int(n),
        range_address=address[idx], range_size=r_size, range_start=r_start, range_end=r_end,
        range_leaked=leaked, range_stack=r_stack, range_thread=r_thread,
        range_allocator=allocator[idx].astype(np.int8), range_record=idx.astype(np.int64), range_freed_by=freed_by,
        stack_frames=stack_frames, stack_site=stack_site, frame_function=frame_function, frame_file=frame_file,
        frame_line=np.array(frame_line, np.int32), site_function=site_function, site_file=site_file,
        site_line=np.array(site_line, np.int32), site_start=np.where(np.isfinite(site_start), site_start, 0.0),
        site_end=site_end, site_bytes=site_bytes, site_count=site_count, thread_ids=tids,
        thread_names=[thread_name[int(t)] or ("main thread" if int(t) == main_tid else f"thread {int(t)}")
                      for t in tids],
        snap_ms=snap_ms, snap_rss=snap_rss, snap_heap=snap_heap, hwm_ms=hwm_ms, clock=clock,
        meta={"repairs": repairs, "peak_bytes_paired": int(peak_pairs), "hwm_record": int(at),
              "snapshots_placed": int(n_placed), "memray_version": _memray_version(), "reader": reader_name})


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
            self._buf += chunk
            got += len(chunk)
            if len(self._buf) > self.limits.max_bytes:
                self.close()
                _fail(self.source, f"byte {len(self._buf)}", "the stream passed limits.max_bytes")
            ready = select.select([self._sock], [], [], 0)[0]
        return got

    @property
    def n_bytes(self) -> int:
        return len(self._buf)

    def capture(self, warn: bool = False):
        """The `MemoryCapture` of the records received so far (None before the header arrived)."""
        raw = scan_bytes(bytes(self._buf), self.source, self.limits, partial=not self.finished)
        if raw is None:
            return None
        return _capture_of(raw, self.source, self.limits, warn, live=not self.finished)

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


def _memray_version() -> str:
    try:
        import memray

        return str(memray.__version__)
    except Exception:  # pragma: no cover
        return "?"
