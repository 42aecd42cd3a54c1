"""memray captures (``python -m memray run -o out.bin``) as arrays: `load_memory`.

Everything is read through memray's own `memray.FileReader` (memray is the optional extra
``tracevis3d[memory]``):

- ``metadata``: the three figures the view shows and the tests hold to memray's own exactly:
  ``peak_bytes`` = ``metadata.peak_memory``, ``n_allocations`` = ``metadata.total_allocations``
  (memray counts every record: frees too), ``leaked_bytes`` = the sum of the sizes of
  ``get_leaked_allocation_records()``;
- ``get_allocation_records()`` iterated once, five fields per record into flat arrays (no Python
  object per allocation is kept);
  the first record of every distinct stack gives its frames;
- ``get_memory_snapshots()``: the clock (ms) with the process's RSS and the heap memray's reader
  had counted at that point of the stream; each snapshot is placed in the record stream where the
  paired ranges reach that heap (`kernels.memcov.snapshot_positions`), and the records between two
  snapshots spread evenly between their times (the records themselves carry no time).

Records become *ranges* (`kernels.memcov.pair_ranges`: an allocation and the free that ends it);
a range alive at the end is leaked.  Sites are the distinct innermost frames (function, file,
line: where the allocator was called, Memcov's "call site"); stacks are the distinct Python
stacks (or native ones in a ``--native`` capture without Python frames).

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

__all__ = ["MemoryCapture", "load_memory", "MEMRAY_MAGIC", "LZ4_MAGIC"]

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


def load_memory(path, warn: bool = True) -> MemoryCapture:
    """Read the memray capture at ``path`` into a `MemoryCapture` (module docstring)."""
    try:
        import memray  # noqa: F401
    except ImportError:
        raise ImportError("reading memray captures needs memray: pip install 'tracevis3d[memory]' "
                          "(or pip install memray)") from None
    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(path):
        raise TraceFormatError(f"{path}: not a file")
    compressed, header_count = _head_check(path)
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
    from ..kernels.memcov import (group_span, heap_curve_peak, pair_ranges, record_role, record_times,
                                  snapshot_positions)

    native = bool(md.has_native_traces)
    rec, first = _records(reader, native)
    n = rec.shape[0]
    address, size, allocator, tid = rec[:, 0], rec[:, 1], rec[:, 2], rec[:, 3]  # views: no copies
    skey = rec[:, 4:7] if native else rec[:, 4]
    role, space = record_role(allocator)
    closed_by, alloc_of, n_unpaired, n_over = pair_ranges(address, size, role, space)
    leaked_bytes = int(sum(int(r.size) for r in reader.get_leaked_allocation_records(merge_threads=False)))

    # the clock: memray's memory snapshots, each placed in the record stream where the heap the
    # reader had counted then (`MemorySnapshot.heap`) is reached (`kernels.memcov.snapshot_positions`)
    snaps = list(reader.get_memory_snapshots())
    start_ms = md.start_time.timestamp() * 1000.0
    end_ms = max(md.end_time.timestamp() * 1000.0 - start_ms, 0.0)
    snap_ms = np.array([s.time - start_ms for s in snaps], np.float64)
    snap_rss = np.array([s.rss for s in snaps], np.int64)
    snap_heap = np.array([s.heap for s in snaps], np.int64)
    if snap_ms.size:
        end_ms = max(end_ms, float(snap_ms.max()))
    repairs: dict = {}
    pos, n_placed = snapshot_positions(size, role, alloc_of, snap_heap)
    clock = "snapshots"
    if n_placed < snap_heap.size:
        clock = "snapshots (partly)" if n_placed else "records"
        repairs["snapshot_not_placed"] = {
            "count": int(snap_heap.size - n_placed), "first": int(n_placed),
            "action": "memory snapshots whose heap the records never reach: the records after the last placed "
                      "snapshot spread evenly up to the end"}
    snap_of = np.cumsum(np.bincount(np.minimum(pos[:n_placed], n), minlength=n + 1))[:n]  # snapshots at or before
    placed_ms = snap_ms[:n_placed].copy()
    t_rec = record_times(snap_of.astype(np.int64), placed_ms, end_ms)
    if n_unpaired:
        repairs["free_without_allocation"] = {"count": int(n_unpaired), "first": int(np.flatnonzero(
            (role < 0) & (alloc_of < 0))[0]), "action": "ignored (a block allocated before tracking started)"}
    if n_over:
        repairs["allocation_over_live_range"] = {"count": int(n_over), "first": -1,
                                                 "action": "the earlier range ends where the address is reused"}

    # stacks (distinct memray stack ids), their frames; threads
    frames: dict = {}
    frame_function, frame_file, frame_line = [], [], []
    stack_frames: list = []
    keys = list(first)
    thread_name: dict = {}
    for k in keys:
        r = first[k]
        ids = []
        for fr in _frames_of(r, native):
            f = frames.get(fr)
            if f is None:
                f = frames[fr] = len(frame_function)
                frame_function.append(str(fr[0]))
                frame_file.append(str(fr[1] or ""))
                frame_line.append(int(fr[2] or 0))
            ids.append(f)
        stack_frames.append(ids)
        try:
            thread_name.setdefault(int(r.tid), r.thread_name or "")
        except Exception:  # a thread memray has no name for
            thread_name.setdefault(int(r.tid), "")
    for t in np.unique(tid).tolist():
        thread_name.setdefault(int(t), "")
    allocating = role > 0
    idx = np.flatnonzero(allocating)
    r_stack = _lookup(np.array(keys, np.uint64).reshape(len(keys), -1), skey[idx])

    freed_by = closed_by[idx]
    leaked = freed_by < 0
    r_start = t_rec[idx]
    r_end = np.where(leaked, end_ms, t_rec[np.maximum(freed_by, 0)])
    r_end = np.maximum(r_end, r_start)
    tids = np.array(sorted(thread_name), np.int64)
    r_thread = _lookup(tids.astype(np.uint64)[:, None], tid[idx])
    peak_pairs, at = heap_curve_peak(size, role, alloc_of)
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
    return MemoryCapture(
        source=path, peak_bytes=int(md.peak_memory), n_allocations=int(md.total_allocations),
        leaked_bytes=leaked_bytes, duration_ms=float(end_ms), start_epoch_ms=float(start_ms),
        command_line=str(md.command_line), pid=int(md.pid), python_allocator=str(md.python_allocator),
        native=native, trace_python_allocators=bool(md.trace_python_allocators), n_records=int(n),
        range_address=address[idx], range_size=r_size, range_start=r_start, range_end=r_end,
        range_leaked=leaked, range_stack=r_stack, range_thread=r_thread,
        range_allocator=allocator[idx].astype(np.int8), range_record=idx.astype(np.int64), range_freed_by=freed_by,
        stack_frames=stack_frames, stack_site=stack_site, frame_function=frame_function, frame_file=frame_file,
        frame_line=np.array(frame_line, np.int32), site_function=site_function, site_file=site_file,
        site_line=np.array(site_line, np.int32), site_start=np.where(np.isfinite(site_start), site_start, 0.0),
        site_end=site_end, site_bytes=site_bytes, site_count=site_count, thread_ids=tids,
        thread_names=[thread_name[int(t)] or ("main thread" if int(t) == int(md.main_thread_id) else f"thread {int(t)}")
                      for t in tids],
        snap_ms=snap_ms, snap_rss=snap_rss, snap_heap=snap_heap, hwm_ms=hwm_ms, clock=clock,
        meta={"repairs": repairs, "peak_bytes_paired": int(peak_pairs), "hwm_record": int(at),
              "snapshots_placed": int(n_placed), "memray_version": _memray_version()})


def _memray_version() -> str:
    try:
        import memray

        return str(memray.__version__)
    except Exception:  # pragma: no cover
        return "?"
