"""A memray capture as arrays (`MemoryCapture`), and what every reader of captures shares: the
format's magic numbers, one-line errors naming the file and position, and `_assemble`, which
turns the records' columns into ranges, sites and stacks (`tracevis3d.io.memray`)."""
from __future__ import annotations

import contextlib
import os
import struct
import tempfile
from dataclasses import dataclass, field

import numpy as np

from ..errors import TraceFormatError


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



#: memray's tracker writes a memory snapshot this often (``Tracker(memory_interval_ms=10)``, the
#: default ``memray run`` keeps)
SNAPSHOT_INTERVAL_MS = 10.0


def _end_past_the_snapshots(end_ms: float, pos, snap_ms, n_placed: int, n: int, repairs: dict) -> float:
    """The capture's end (ms since its start) when records follow the last placed snapshot.  A
    capture that does not know its end (memray's live stream leaves the header's end time 0, and so
    does a tracker killed before it rewrote its header) gets ``end_ms`` = its last snapshot's time,
    which would put every record after that snapshot at one instant: ranges of no width, a figure
    of no bands.  Those records then spread over one snapshot interval past the last snapshot (the
    median interval of the snapshots, `SNAPSHOT_INTERVAL_MS` with fewer than two): memray writes a
    snapshot every interval while the program runs, so its end came about that soon after the last
    (repair ``no_end_time``).  A known end is kept."""
    last_ms = float(snap_ms[n_placed - 1]) if n_placed else 0.0
    after = n - (min(int(pos[n_placed - 1]), n) if n_placed else 0)
    if after <= 0 or end_ms > last_ms:
        return end_ms
    steps = np.diff(np.asarray(snap_ms[:n_placed], np.float64))
    steps = steps[steps > 0]
    step = float(np.median(steps)) if steps.size else SNAPSHOT_INTERVAL_MS
    repairs["no_end_time"] = {"count": after, "first": n - after,
                              "action": f"the capture does not say when it ended: the records after the last "
                                        f"memory snapshot spread over one snapshot interval ({step:g} ms)"}
    return last_ms + step


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
    end_ms = _end_past_the_snapshots(end_ms, pos, snap_ms, n_placed, n, repairs)
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


def _memray_version() -> str:
    try:
        import memray

        return str(memray.__version__)
    except Exception:  # pragma: no cover
        return "?"
