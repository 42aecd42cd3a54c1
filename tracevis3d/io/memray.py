"""memray captures (``python -m memray run -o out.bin``) as arrays: `load_memray`, the memray row's
memory reader (`tracevis3d.io.formats`; `tracevis3d.io.load_memory` reads a file through the table).

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

import numpy as np

from .memray_capture import (FIELDS, LZ4_MAGIC, MEMRAY_MAGIC, NATIVE_FIELDS, MemoryCapture, assemble,
                             captured_stderr, fail, memray_version, check_head, trie_of_tuples)
from .memray_live import MemrayLiveStream
from .memray_own import load_own, own_reader_refuses, refuse_damaged, scan_bytes, scan_file

__all__ = ["MemoryCapture", "MemrayLiveStream", "load_memray", "scan_file", "scan_bytes", "MEMRAY_MAGIC", "LZ4_MAGIC"]

READERS = ("auto", "own", "memray")


def load_memray(data, source: str = "<bytes>", limits=None, warn: bool = True, reader: str = "auto") -> MemoryCapture:
    """The memray capture ``data`` (its bytes as memray wrote them; ``source`` names it, the file
    it was read from) as a `MemoryCapture` (module docstring).

    ``reader``: "own" (`kernels.memray_scan`, memray 1.20's format), "memray"
    (`memray.FileReader`, which reads the file ``source`` when it holds these bytes, else a
    temporary copy), or "auto": ours for the captures it reads, else memray's.
    """
    if reader not in READERS:
        raise ValueError(f"reader must be one of {', '.join(READERS)}, not {reader!r}")
    from .limits import resolve_limits

    limits = resolve_limits(limits)
    compressed, header_count = check_head(source, bytes(data[:64]))
    if reader != "memray":
        why_not = own_reader_refuses(data, compressed)
        if why_not is None:
            return load_own(data, source, limits, warn)
        if reader == "own":
            fail(source, "byte 0", f"{why_not}: load it with reader='memray' (memray.FileReader)")
    refuse_damaged(data, source, limits, compressed)  # memray's reader trusts what it reads
    with _file_holding(data, source) as path:
        return _load_with_filereader(path, source, len(data), header_count, limits)


@contextlib.contextmanager
def _file_holding(data, source: str):
    """A file holding ``data`` for memray's FileReader, which reads files: ``source`` when it is a
    regular file of exactly these bytes (what `io.load_memory` reads), else a temporary copy,
    removed afterwards."""
    try:
        same = os.path.isfile(source) and os.path.getsize(source) == len(data)
    except (OSError, TypeError, ValueError):  # a name that is no path
        same = False
    if same:
        yield source
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tv3d-memray-") as folder:
        path = os.path.join(folder, "capture.bin")
        with open(path, "wb") as f:
            f.write(data)
        yield path


def _load_with_filereader(path: str, source: str, nbytes: int, header_count: int, limits) -> MemoryCapture:
    try:
        import memray  # noqa: F401
    except ImportError:
        raise ImportError("reading this memray capture needs memray: pip install 'tracevis3d[memory]' "
                          "(or pip install memray)") from None
    with captured_stderr() as err:
        import memray

        try:
            reader = memray.FileReader(path)  # the file; messages name ``source``
            opened = None
        except (OSError, ValueError, RuntimeError, MemoryError) as e:
            reader, opened = None, e
    if reader is None:
        msg = " ".join(str(opened).split())
        if "does not look like" in msg or "header" in msg:
            msg = (f"memray {memray.__version__} cannot read it: not a capture, one of another memray version, or a "
                   f"compressed capture cut short ({msg})")
        fail(source, "byte 0", msg)
    with contextlib.closing(reader):
        try:
            md = reader.metadata
        except (KeyError, ValueError, OverflowError, RuntimeError) as e:  # a header field memray has no name for
            fail(source, "byte 0", f"memray {memray.__version__} cannot read its header: {type(e).__name__} {e} "
                                   f"(a field out of range: the capture is damaged)")
        n_read = int(md.total_allocations)
        if err["text"].strip():
            fail(source, f"record {n_read}", f"memray stopped reading there: {err['text'].strip().splitlines()[0]} "
                                            f"(the capture is damaged or cut short)")
        if header_count and n_read < header_count:
            fail(source, f"record {n_read}", f"the capture ends after {n_read:,} of the {header_count:,} records its "
                                            f"header announces (cut short)")
        if int(md.file_format) != 0:
            fail(source, "byte 0", "an aggregated capture (memray run --aggregate) holds no allocation records: "
                                  "record it without --aggregate")
        return _read(reader, md, source, nbytes, limits)


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


def _frames_of(rec, native: bool, most: int) -> list:
    """The frames of a record's stack, innermost first (none for a free: memray keeps no stack for
    deallocations, whose stack id is 0); ``most`` + 1 of them (the stack with memray's own frames
    on the main thread, which its default leaves out) when it holds more than ``most``: each walk
    of memray's frame tree bounded by ``most``."""
    def trace(get):
        deep = get(max_stacks=most + 1)  # bounded; memray's default leaves its own frames out
        return deep if len(deep) > most else get()

    try:
        st = trace(rec.stack_trace)
    except NotImplementedError:
        return []
    if not st and native:
        try:
            st = [(f[0], f[1], f[2]) for f in trace(rec.native_stack_trace)]
        except Exception:  # a native stack memray cannot resolve: no frames
            st = []
    return st


def _stack_tuples(path: str, nbytes: int, first: dict, keys: list, native: bool, limits) -> tuple:
    """(frames of each stack key's first record, {thread id: name}): each stack at most
    ``limits.max_stack_depth`` frames and all of them at most `Limits.sample_calls` of the file's
    size (memray gives every stack whole, so deep stacks that share a prefix would cost stacks ×
    depth); a capture past either is refused in one line naming the limit."""
    most = limits.max_stack_depth
    budget = limits.sample_calls(nbytes)
    thread_name: dict = {}
    stack_tuples, total = [], 0
    for k in keys:
        r = first[k]
        frames = _frames_of(r, native, most)
        if len(frames) > most:
            fail(path, f"stack {len(stack_tuples):,}", f"a stack deeper than limits.max_stack_depth ({most:,})")
        total += len(frames)
        if total > budget:
            fail(path, f"stack {len(stack_tuples):,}", f"the distinct stacks hold more than {budget:,} frames in all "
                                                        f"(limits.sample_calls of the file's size)")
        stack_tuples.append([(str(fr[0]), str(fr[1] or ""), int(fr[2] or 0)) for fr in frames])
        try:
            thread_name.setdefault(int(r.tid), r.thread_name or "")
        except Exception:  # a thread memray has no name for
            thread_name.setdefault(int(r.tid), "")
    return stack_tuples, thread_name


def _read(reader, md, path: str, nbytes: int, limits) -> MemoryCapture:
    """The `MemoryCapture` of a capture memray's `FileReader` opened."""
    native = bool(md.has_native_traces)
    rec, first = _records(reader, native)
    address, size, allocator, tid = rec[:, 0], rec[:, 1], rec[:, 2], rec[:, 3]  # views: no copies
    skey = rec[:, 4:7] if native else rec[:, 4]
    leaked_bytes = int(sum(int(r.size) for r in reader.get_leaked_allocation_records(merge_threads=False)))
    snaps = list(reader.get_memory_snapshots())
    start_ms = md.start_time.timestamp() * 1000.0
    keys = list(first)
    stack_tuples, thread_name = _stack_tuples(path, nbytes, first, keys, native, limits)
    return assemble(
        path, address=address, size=size, allocator=allocator, tid=tid, skey=skey,
        keys=np.array(keys, np.uint64).reshape(len(keys), -1), stacks=trie_of_tuples(stack_tuples),
        thread_name=thread_name,
        leaked_bytes=leaked_bytes, peak_bytes=int(md.peak_memory), n_allocations=int(md.total_allocations),
        snap_ms=np.array([s.time - start_ms for s in snaps], np.float64),
        snap_rss=np.array([s.rss for s in snaps], np.int64), snap_heap=np.array([s.heap for s in snaps], np.int64),
        snap_pos=None, start_ms=start_ms, end_ms=max(md.end_time.timestamp() * 1000.0 - start_ms, 0.0),
        command_line=str(md.command_line), pid=int(md.pid), python_allocator=str(md.python_allocator),
        native=native, trace_python_allocators=bool(md.trace_python_allocators), main_tid=int(md.main_thread_id),
        repairs={}, reader_name=f"memray.FileReader {memray_version()}", warn=False)


