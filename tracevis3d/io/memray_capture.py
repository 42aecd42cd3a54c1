"""A memray capture as arrays (`MemoryCapture`), and what every reader of captures shares: the
format's magic numbers, one-line errors naming the file and position, and `assemble`, which
turns the records' columns into ranges, sites and stacks (`tracevis3d.io.memray`)."""
from __future__ import annotations

import contextlib
import operator
import os
import struct
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import TraceFormatError
from .formats import LZ4_MAGIC, MEMRAY_MAGIC  # noqa: F401  (the table's: memray's magic, its LZ4 frame's)

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
    ``frame_file``, ``frame_line``; a `StackFrames`: the stacks as a trie, a stack's list made
    when asked), ``stack_site[s]``.  Sites (innermost frames): ``site_function``,
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
    stack_frames: "StackFrames"
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
        for fr in self.stack_frames.frames(s, max_frames):
            f = _short_file(self.frame_file[fr])
            out.append(f"{self.frame_function[fr]} ({f}:{int(self.frame_line[fr])})" if f else self.frame_function[fr])
        return out


class StackFrames(Sequence):
    """A capture's stacks as a trie (`kernels.stack_trie`): ``node_frame`` (a frame id per node),
    ``node_parent`` (-1: a root; parents first), and per stack its innermost node
    (``stack_node``, -1: no frames) and its number of frames (``stack_len``).  As a sequence,
    ``stacks[s]`` is stack ``s``'s frame ids innermost first (a list made when asked: O(its
    depth)); thousands of stacks that share a deep prefix keep that prefix once, so the table is
    linear in the capture, not stacks × depth (issue 78)."""

    __slots__ = ("node_frame", "node_parent", "stack_node", "stack_len")

    def __init__(self, node_frame, node_parent, stack_node, stack_len):
        self.node_frame = np.asarray(node_frame, np.int64)
        self.node_parent = np.asarray(node_parent, np.int64)
        self.stack_node = np.asarray(stack_node, np.int64)
        self.stack_len = np.asarray(stack_len, np.int64)

    def __len__(self) -> int:
        return int(self.stack_node.shape[0])

    def __getitem__(self, s):
        if isinstance(s, slice):
            return [self.frames(i) for i in range(*s.indices(len(self)))]
        return self.frames(s)

    def frames(self, s: int, limit: int | None = None) -> list:
        """Stack ``s``'s frame ids, innermost first, at most ``limit`` of them."""
        s = operator.index(s)
        n = len(self)
        if s < 0:
            s += n
        if not 0 <= s < n:
            raise IndexError(f"stack {s} of {n}")
        x, r = int(self.stack_node[s]), int(self.stack_len[s])
        if limit is not None:
            r = min(r, int(limit))
        out = []
        frame, parent = self.node_frame, self.node_parent
        while x >= 0 and r > 0:
            out.append(int(frame[x]))
            x = int(parent[x])
            r -= 1
        return out

    def touching(self, frames) -> np.ndarray:
        """bool per stack: it holds one of ``frames`` (frame ids), in one pass over the trie."""
        from ..kernels.stack_trie import stacks_touching

        want = np.zeros(int(self.node_frame.max()) + 1 if self.node_frame.size else 1, bool)
        ids = np.asarray(sorted(int(f) for f in frames if 0 <= int(f) < want.size), np.int64)
        want[ids] = True
        hit = np.zeros(self.node_frame.size, bool)
        ok = self.node_frame >= 0
        hit[ok] = want[self.node_frame[ok]]
        return stacks_touching(self.node_parent, hit, self.stack_node, self.stack_len)

    def __eq__(self, other):
        if not isinstance(other, (StackFrames, list, tuple)):
            return NotImplemented
        return len(self) == len(other) and all(list(a) == list(b) for a, b in zip(self, other))

    __hash__ = None

    def __repr__(self) -> str:
        return f"StackFrames({len(self)} stacks, {self.node_frame.size} trie nodes)"


@dataclass
class StackInput:
    """What a reader gives `assemble` of its stacks: distinct locations (``loc_function``,
    ``loc_file``, ``loc_line``), a trie of them (``node_loc``, ``node_parent``: parents first)
    and per stack key its innermost node and number of frames (``stack_node``, ``stack_len``)."""

    loc_function: list
    loc_file: list
    loc_line: np.ndarray
    node_loc: np.ndarray
    node_parent: np.ndarray
    stack_node: np.ndarray
    stack_len: np.ndarray


def int32_lines(lines) -> np.ndarray:
    """Line numbers as int32 the way C's ``int`` holds them (modulo 2**32): a line table can add
    up to any number; memray's reader keeps it in an ``int``."""
    a = np.asarray(lines, np.int64)
    return ((a + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32)


def trie_of_tuples(stack_tuples: list) -> StackInput:
    """The `StackInput` of stacks given as lists of (function, file, line), innermost first (what
    memray's ``stack_trace()`` gives): each location and each (parent, location) once; linear in
    the frames given."""
    locs: dict = {}
    nodes: dict = {}
    node_loc, node_parent, stack_node, stack_len = [], [], [], []
    for tuples in stack_tuples:
        x = -1
        for fr in reversed(tuples):
            loc = locs.setdefault(fr, len(locs))
            y = nodes.get((x, loc))
            if y is None:
                y = nodes[(x, loc)] = len(node_loc)
                node_loc.append(loc)
                node_parent.append(x)
            x = y
        stack_node.append(x)
        stack_len.append(len(tuples))
    keys = list(locs)
    return StackInput([k[0] for k in keys], [k[1] for k in keys], np.array([k[2] for k in keys], np.int64),
                      np.array(node_loc, np.int64), np.array(node_parent, np.int64), np.array(stack_node, np.int64),
                      np.array(stack_len, np.int64))


def stack_table(st: StackInput) -> tuple:
    """(`StackFrames`, frame_function, frame_file, frame_line) of a `StackInput`: the frames
    numbered in the order a walk of the stacks meets them (stack order, innermost first), each
    node walked once (`kernels.stack_trie.first_seen_labels`)."""
    from ..kernels.stack_trie import first_seen_labels

    rank, order = first_seen_labels(st.node_parent, st.node_loc, st.stack_node, st.stack_len, len(st.loc_function))
    ids = order.tolist()
    frame_function = [st.loc_function[k] for k in ids]
    frame_file = [st.loc_file[k] for k in ids]
    frame_line = int32_lines(np.asarray(st.loc_line, np.int64)[order]) if order.size else np.zeros(0, np.int32)
    node_frame = rank[st.node_loc] if st.node_loc.size else np.zeros(0, np.int64)
    return StackFrames(node_frame, st.node_parent, st.stack_node, st.stack_len), frame_function, frame_file, frame_line


def _sites(stacks: StackFrames, frame_function, frame_file, frame_line) -> tuple:
    """(stack_site, site_function, site_file, site_line): the distinct innermost frames (a stack
    without frames: "<no Python frames>"), numbered in stack order."""
    n = len(stacks)
    has = (stacks.stack_len > 0) & (stacks.stack_node >= 0)
    inner = np.full(n, -1, np.int64)
    inner[has] = stacks.node_frame[stacks.stack_node[has]]
    if not n:
        return np.zeros(0, np.int32), [], [], np.zeros(0, np.int32)
    uniq, first, inv = np.unique(inner, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    site_of = np.empty(uniq.size, np.int32)
    site_of[order] = np.arange(uniq.size, dtype=np.int32)
    keys = uniq[order].tolist()
    site_function = [frame_function[k] if k >= 0 else "<no Python frames>" for k in keys]
    site_file = [frame_file[k] if k >= 0 else "" for k in keys]
    site_line = np.array([int(frame_line[k]) if k >= 0 else 0 for k in keys], np.int32)
    return site_of[inv.reshape(-1)], site_function, site_file, site_line


def _short_file(path: str) -> str:
    if not path:
        return ""
    if path.startswith("<frozen ") and path.endswith(">"):
        return path[8:-1].rsplit(".", 1)[-1]
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def fail(path: str, where: str, problem: str):
    """Raise the one-line `TraceFormatError` of a capture: the file, the position, the problem."""
    raise TraceFormatError(f"{path}: {where}: {' '.join(str(problem).split())}") from None


@contextlib.contextmanager
def captured_stderr():
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


def assemble(path: str, *, address, size, allocator, tid, skey, keys, stacks, thread_name,
              leaked_bytes, peak_bytes, n_allocations, snap_ms, snap_rss, snap_heap, snap_pos, start_ms, end_ms,
              command_line, pid, python_allocator, native, trace_python_allocators, main_tid, repairs,
              reader_name, warn, threads_complete=False) -> MemoryCapture:
    """The `MemoryCapture` from either reader's records (one row per allocator record: address,
    size, allocator, thread id, stack key), the distinct stack keys (``keys``, their frames in
    ``stacks``, a `StackInput` of the same order) and the memory snapshots.
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

    stack_frames, frame_function, frame_file, frame_line = stack_table(stacks)
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
    tid_order = sorted(thread_name)  # memray's thread ids are uint64: kept bit for bit (a view as int64)
    tids = np.array(tid_order, np.uint64).view(np.int64)
    r_thread = _lookup(tids.view(np.uint64)[:, None], tid[idx])
    hwm_ms = float(t_rec[at]) if at >= 0 else 0.0

    stack_site, site_function, site_file, site_line = _sites(stack_frames, frame_function, frame_file, frame_line)
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
        frame_line=frame_line, site_function=site_function, site_file=site_file,
        site_line=site_line, site_start=np.where(np.isfinite(site_start), site_start, 0.0),
        site_end=site_end, site_bytes=site_bytes, site_count=site_count, thread_ids=tids,
        thread_names=[thread_name[t] or ("main thread" if t == main_tid else f"thread {t}") for t in tid_order],
        snap_ms=snap_ms, snap_rss=snap_rss, snap_heap=snap_heap, hwm_ms=hwm_ms, clock=clock,
        meta={"repairs": repairs, "peak_bytes_paired": int(peak_pairs), "hwm_record": int(at),
              "snapshots_placed": int(n_placed), "memray_version": memray_version(), "reader": reader_name})


def check_head(path: str, head: bytes) -> tuple:
    """(compressed, the record count the header announces or 0) from a capture's first 64 bytes
    ``head``; a file that is neither a memray capture nor an LZ4 frame fails here (byte 0)."""
    if not head:
        fail(path, "byte 0", "empty file, not a memray capture")
    if head.startswith(LZ4_MAGIC):
        if MEMRAY_MAGIC not in head[:40]:
            fail(path, "byte 0", "an LZ4 frame that does not hold a memray capture")
        return True, 0
    if not head.startswith(MEMRAY_MAGIC):
        fail(path, "byte 0", "not a memray capture (no 'memray' magic)")
    if len(head) < HEADER_COUNT_AT + 8:
        fail(path, f"byte {len(head)}", "the capture ends inside its header")
    version = struct.unpack_from("<i", head, 7)[0]
    count = struct.unpack_from("<Q", head, HEADER_COUNT_AT)[0] if version == HEADER_VERSION else 0
    return False, count


def memray_version() -> str:
    """The installed memray's version ("?" when it cannot be told)."""
    try:
        import memray

        return str(memray.__version__)
    except Exception:  # pragma: no cover
        return "?"
