"""Importers and exporters: every file format → `Trace`, and the memory a file records →
`MemoryCapture`.

`load(path)` reads the input once (a file, a pipe or a FIFO; at most
``max_bytes``) and sniffs the format from its first bytes, not the file name:
a wrapper (gzip) is opened under the limits of `tracevis3d.io.limits`
(`tracevis3d.io.containers`), then the table of formats
(`tracevis3d.io.formats.FORMATS`: Chrome JSON, Perfetto protobuf, V8 ``.cpuprofile``,
speedscope, Firefox, pprof, perf script, collapsed stacks, callgrind, the native and
compact files, ...) says which format the bytes are and which reader loads them.  A
format the table reads in place (the native file, a zip) is given the file's path.
`load_memory(path)` reads a memray capture or Chrome's memory-infra dumps the same way,
through the table's memory readers.
"""
from __future__ import annotations

import mmap
import os
import stat
import time

import numpy as np

from .. import pages
from ..model import Trace, TraceFormatError
from . import filecopy
from .filecopy import FileCopy, stamp_of
from .limits import DEFAULT_LIMITS, Limits, resolve_limits

#: kept for callers that used it; see tracevis3d.io.limits
DEFAULT_MAX_BYTES = DEFAULT_LIMITS.max_bytes

_CHUNK = 1 << 20


def _read_input(path: str, max_bytes: int, in_place: bool = True, as_bytes: bool = False,
                parallel: bool = True) -> tuple:
    """All bytes of ``path`` (at most ``max_bytes``) through one open file, so a
    pipe or FIFO loses nothing to sniffing.  Returns (data, is_regular_file, the
    format read in place or None); data is None for a regular file of a format the
    table reads in place (`formats.in_place_format`: its reader is given the path;
    ``in_place`` False: every file's bytes are read).  ``as_bytes``: a regular file's
    data as one bytes object (for readers that use bytes' methods: no second copy).

    Read, not memory-mapped (issue 26 asked for a map): a mapped file that another program
    truncates or rewrites while it is scanned raises SIGBUS inside the numba kernels, which no
    Python handler can catch -- it would take Blender down.  A private read costs the file's
    size in memory, counted in the load's peak (file + 0.88 GiB at 10^7 calls,
    bench/bench_json_load.py)."""
    try:
        f = open(path, "rb", buffering=0)
    except IsADirectoryError:
        raise TraceFormatError(f"{path}: is a directory, not a trace file") from None
    with f:
        st = os.fstat(f.fileno())
        if stat.S_ISDIR(st.st_mode):
            raise TraceFormatError(f"{path}: is a directory, not a trace file")
        regular = stat.S_ISREG(st.st_mode)
        if regular:
            if in_place:
                from .formats import IN_PLACE_HEAD_BYTES, in_place_format

                fmt = in_place_format(f.read(IN_PLACE_HEAD_BYTES))
                if fmt is not None:  # its reader applies the limit to what it reads
                    return None, True, fmt
            if st.st_size > max_bytes:
                raise TraceFormatError(f"{path}: file is {st.st_size} bytes, over the limit of {max_bytes} "
                                       f"(max_bytes= to allow more)")
            f.seek(0)
            if as_bytes:
                first = f.readall()  # one bytes object of the file's size (short reads looped over)
                total = len(first)
            else:
                first, total = _read_to_end(f, st.st_size + 1, parallel)  # + 1: notice a file that grew meanwhile
            parts = [first]
        else:
            parts, total = [], 0
        while True:
            if total > max_bytes:
                raise TraceFormatError(f"{path}: more than {max_bytes} bytes to read, over the limit "
                                       f"(max_bytes= to allow more)")
            if regular and total <= st.st_size:
                break
            b = f.read(min(_CHUNK, max_bytes + 1 - total))
            if not b:
                break
            parts.append(b)
            total += len(b)
    return (parts[0] if len(parts) == 1 else b"".join(parts)), regular, None


def _file_buffer(size: int):
    """A writable buffer of ``size`` bytes for a file's contents.  On Linux a private anonymous
    map advised to use transparent huge pages: reading a 177 MB trace into it takes 0.03 s
    against 0.1 s for ``read`` into a new bytes object, whose 4 KiB pages each fault on first
    touch (and the scanner's walk over it misses the TLB less).  Elsewhere an uninitialised
    numpy array (a bytearray would be zeroed first)."""
    if hasattr(mmap, "MADV_HUGEPAGE") and size > 0:
        m = filecopy.spare_copy(size)  # the last load's copy, kept for this one (`filecopy.recycle`)
        fresh = m is None
        if fresh:
            try:  # (a `FileCopy`: a reader may give its pages back once read, `filecopy.release`)
                m = filecopy.fresh_copy(size)
            except (OSError, ValueError):
                return np.empty(size, np.uint8)
            if size >= 2 * pages.JUDGE_BLOCK_BYTES:  # read long enough to judge huge pages again
                pages.set_huge_pages_cheap(True)
        cheap = pages.huge_pages_cheap()
        try:  # (a spare too: a read may have taken the advice off part of it, `_PageCheck`)
            m.madvise(mmap.MADV_HUGEPAGE if cheap else mmap.MADV_NOHUGEPAGE)
            # (a kept spare's pages are the last load's, still there: its read faults nothing to
            # judge by, and read as cheap it had turned numpy's advice on for fresh arrays)
            m.judge_pages = cheap and fresh
        except (OSError, AttributeError):  # a kernel without transparent huge pages: plain pages
            m.judge_pages = False
        return m
    return np.empty(size, np.uint8)


#: a file at least this large is read in two parts side by side (`_read_to_end`)
PARALLEL_READ_BYTES = 32 << 20


def _read_span(fd: int, view: memoryview, lo: int, hi: int, page_check: _PageCheck | None = None) -> int:
    """``view[lo:hi]`` filled from the file at offset ``lo`` on (``os.preadv``, looped over short
    reads) until ``hi`` or the file's end; returns where it stopped.  ``page_check``: the buffer's
    huge pages judged as they are read (`_PageCheck`)."""
    at = lo
    step = pages.JUDGE_BLOCK_BYTES
    while at < hi and page_check is not None and page_check.huge:
        stop = min(hi, at + step)
        t = time.thread_time()
        while at < stop:
            k = os.preadv(fd, [view[at:stop]], at)
            if not k:
                return at
            at += k
        page_check.block(at, hi, time.thread_time() - t, step if stop < hi else 0)
    while at < hi:
        k = os.preadv(fd, [view[at:hi]], at)
        if not k:
            break
        at += k
    return at


class _PageCheck:
    """The huge-page advice of a read buffer (``copy``, a fresh `FileCopy` advised ``MADV_HUGEPAGE``
    by `_file_buffer`) withdrawn from the rest of a span once a block of `pages.JUDGE_BLOCK_BYTES`
    read into it proves dear (`pages.dear`: ``MADV_NOHUGEPAGE``, 4 KiB pages from there on), and
    from numpy's large arrays too until the next large read judges them again
    (`pages.set_huge_pages_cheap`).  16 MiB blocks of the 10^7-call file and of sympy's trace on the
    benches' virtual machines: 0.16-0.33 s a GiB where the system's huge pages are backed, 0.95-3.2
    s where the host backs them afresh, which it does for most fresh memory after a few idle
    seconds (`tracevis3d.pages`): a fresh process's first load of the 10^7-call JSON file (1.26 GB)
    had spent 8.6-12 s in its read, nearly all of it system time.  Each thread judges its own span;
    the advice of the blocks already read stays."""

    def __init__(self, copy: FileCopy):
        self.copy = copy
        self.huge = True

    def block(self, at: int, hi: int, cpu_s: float, nbytes: int) -> None:
        """The block up to ``at`` of a span ending at ``hi`` was read in ``cpu_s`` (of this
        thread); ``nbytes``: its size, 0 for a span's last block (too short to judge)."""
        if not nbytes or not pages.dear(cpu_s, nbytes):
            return
        self.huge = False  # (this span's reads from here: one `preadv` loop, unchecked)
        pages.set_huge_pages_cheap(False)
        page = mmap.PAGESIZE
        lo, end = -(-at // page) * page, min(-(-hi // page) * page, len(self.copy))
        try:
            if lo < end:
                self.copy.madvise(mmap.MADV_NOHUGEPAGE, lo, end - lo)
        except (OSError, ValueError, AttributeError):  # (no such advice here: the read goes on as it was)
            pass


def _read_to_end(f, size: int, parallel: bool = True) -> tuple[memoryview, int]:
    """Up to ``size`` bytes of the open file ``f``, read until it ends: (a view of them, their
    count), the file's position left after them.  One ``read`` never returns more than 2 GiB on
    Linux (so a single call cut a larger file short); this loops until the end of the file or
    ``size`` bytes.  A file of `PARALLEL_READ_BYTES` or more is read as two halves on two
    threads (``os.preadv`` releases the GIL): each half's pages are faulted in, zeroed and
    copied by its own core, 0.069-0.078 -> 0.044-0.049 s for the 177 MB of sympy's trace here.
    Its bytes are those of one ``read`` whenever the file does not change meanwhile; a first half
    cut short (the file shrank) ends the bytes there.  ``parallel=False``: one thread reads.
    Each thread checks what its huge pages cost as it reads (`_PageCheck`)."""
    st = os.fstat(f.fileno())
    whole = _file_buffer(size)
    if isinstance(whole, FileCopy):
        whole.path, whole.stamp = f.name, stamp_of(st)
    view = memoryview(whole)[:size]  # (a kept copy may be longer: `filecopy.fresh_copy`)
    checked = isinstance(whole, FileCopy) and whole.judge_pages and hasattr(mmap, "MADV_NOHUGEPAGE")
    if parallel and size >= PARALLEL_READ_BYTES and hasattr(os, "preadv") and f.tell() == 0:
        import threading

        half = size // 2 & ~((2 << 20) - 1)  # (a huge page's boundary: each half faults its own)
        got: list = [0, None]  # where the second half stopped, its error

        def read_second():
            try:
                got[0] = _read_span(f.fileno(), view, half, size, _PageCheck(whole) if checked else None)
            except BaseException as e:  # raised below, in the caller's thread
                got[1] = e

        second = threading.Thread(target=read_second, daemon=True)
        second.start()
        try:
            first = _read_span(f.fileno(), view, 0, half, _PageCheck(whole) if checked else None)
        finally:
            second.join()
        if got[1] is not None:
            raise got[1]
        total = first if first < half else got[0]
        f.seek(total)
        return view[:total], total
    if checked and hasattr(os, "preadv") and f.tell() == 0:
        total = _read_span(f.fileno(), view, 0, size, _PageCheck(whole))
        f.seek(total)
        return view[:total], total
    total = 0
    while total < size:
        k = f.readinto(view[total:])
        if not k:
            break
        total += k
    return view[:total], total


def load(path, *, limits: Limits | None = None, **options) -> Trace:
    """Load ``path`` (str or PathLike) into a `Trace`; format sniffed from content.

    Limits (``max_bytes=``, ``max_events=``, ...; or ``limits=``) are described in
    `tracevis3d.io.limits`; ``window=(t0, t1)`` (µs) keeps the calls that overlap it (a
    native file is memory-mapped, so one larger than the memory can be opened this way);
    other options go to `tracevis3d.io.chrome.load_chrome`.
    """
    path = os.fspath(path)
    window = options.pop("window", None)
    lim = resolve_limits(limits, options)
    if window is not None:
        fmt = _in_place_file(path)
        return _windowed(load(path, limits=lim, **options), window) if fmt is None else \
            _read_in_place(fmt, path, lim, window=tuple(float(x) for x in window))
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    if os.path.isdir(path):
        raise TraceFormatError(f"{path}: is a directory, not a trace file")
    ahead = _import_reader_ahead(path)
    # while the reader is imported on the other core, the file is read on this one only: its
    # second read thread took CPU from the import, which is the longer of the two (a first
    # load of sympy's 175 MB: 0.745 -> 0.707 s, medians of 20 fresh processes, alternated)
    data, regular, fmt = _read_input(path, lim.max_bytes, parallel=ahead is None)
    if ahead is not None:
        ahead.join()
    if fmt is None:
        from .formats import in_place_format

        fmt = in_place_format(data)  # a pipe's bytes of a format read in place
    if fmt is not None:
        return _read_in_place(fmt, path if data is None else data, lim, source=path)
    trace = load_bytes(data, source=path, limits=lim, **options)
    # the copy kept for the next load when nothing holds it any more: its pages written again
    # in place, not mapped afresh and zeroed by the system as the read faults them in
    filecopy.recycle(data)
    return trace


#: a JSON file at least this large has its reader imported on a second thread while it is read
IMPORT_AHEAD_BYTES = 16 << 20


def _import_reader_ahead(path: str):
    """A process's first large JSON file: the Chrome reader (numba, the kernels' modules: 0.2 s of
    CPU) imported on a thread of its own while the file is read (the read releases the GIL);
    the started thread, or None (the reader imported already, a small file or not JSON).  Any
    error there is left for the import that follows to raise."""
    import sys

    name = __name__ + ".chrome"
    if name in sys.modules:
        return None
    try:
        if os.path.getsize(path) < IMPORT_AHEAD_BYTES:
            return None
        with open(path, "rb") as f:
            head = f.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return None
    if head[:1] not in (b"{", b"["):
        return None
    import importlib
    import threading

    def work():
        try:
            importlib.import_module(name)
        except BaseException:  # raised again, where it belongs, by the reader's own import
            pass

    t = threading.Thread(target=work, daemon=True)
    t.start()
    return t


def _in_place_file(path: str):
    """The format of the file at ``path`` when the table reads it in place, else None."""
    from .formats import IN_PLACE_HEAD_BYTES, in_place_format

    try:
        with open(path, "rb") as f:
            return in_place_format(f.read(IN_PLACE_HEAD_BYTES))
    except OSError:
        return None


def _read_in_place(fmt, data, lim, source=None, window=None):
    """``fmt``'s in-place reader of ``data`` (the file's path, or a pipe's bytes)."""
    from .formats import resolve

    return resolve(fmt.in_place)(data, limits=lim, source=source if source is not None else data, window=window)


def _windowed(trace: Trace, window) -> Trace:
    return trace.subset(time_window=tuple(float(x) for x in window))


def load_bytes(data, source: str = "<bytes>", **options) -> Trace:
    """Parse trace bytes (a wrapper, gzip, is opened first: `containers.open_whole`) into a
    `Trace`; the format is the first of `tracevis3d.io.formats.FORMATS` that recognises the bytes
    (`formats.fallback` when none does).  ``format=KEY`` skips the sniffing.  A format that is
    recognised but not read is refused, naming it."""
    from .containers import open_whole
    from .formats import Head, by_key, detect, fallback, loader_of, reader_options, resolve

    lim = resolve_limits(options.pop("limits", None), options)
    fmt_key = options.pop("format", None)
    data, facts = open_whole(data, source, lim)
    data = _read_only(data)
    fmt = by_key(fmt_key) if fmt_key is not None else detect(Head(data, whole=True, name=source)) or fallback()
    if not fmt.readable:
        raise TraceFormatError(f"{source}: a {fmt.title} file, which TraceVis3D recognises but does not read: "
                               f"{fmt.why_not}")
    options = reader_options(fmt, options, facts)
    from .stacks import gc_paused

    with gc_paused():  # a reader's objects live on: the collector would walk them all, for nothing
        trace = loader_of(fmt)(data, source=source, limits=lim, **options)
        for step in fmt.conventions:
            trace = resolve(step)(trace)
    trace.meta.setdefault("format", fmt.key)
    trace.meta["format_title"] = fmt.title
    _fit_text_tables(trace, lim.max_name_chars)
    return trace


def _read_only(data):
    """``data`` as the readers get it: a read-only view where it is a writable array or view (a
    file read by `load`, inflated gzip data), as bytes already are.  A numba kernel compiles once
    per argument type, and a read-only array is another type than a writable one: given one
    type whichever way the bytes came, each reader's kernels compile once, and the warm-up's
    signatures are the ones every later load meets (before, a file's first load by path after
    the warm-up's bytes compiled the scanners again: perf script's 68 s CPU)."""
    if isinstance(data, np.ndarray) and data.flags.writeable:
        data = data.view()
        data.flags.writeable = False
    elif isinstance(data, memoryview) and not data.readonly:
        data = data.toreadonly()
    return data


#: what a cut name adds past ``max_name_chars``: "…" and 8 hex digits of its hash (the Chrome
#: reader's cut; the native and compact readers accept that much)
_CUT_MARK = 9


def _fit_text(s: str, cap: int) -> str:
    """``s`` at most ``cap`` + 9 characters (cut as the Chrome reader cuts: its first ``cap``, "…"
    and a hash of the whole) and valid Unicode (a lone surrogate becomes U+FFFD)."""
    if not s.isascii():
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            s = s.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if len(s) > cap + _CUT_MARK:
        import hashlib

        s = s[:cap] + "…" + hashlib.blake2s(s.encode("utf-8"), digest_size=4).hexdigest()
    return s


def _fit_text_tables(trace: Trace, cap: int) -> None:
    """Every text of the trace's tables (`model.STRING_TABLES`, function paths) fit for the
    native and compact files, whose readers refuse a text longer than ``max_name_chars`` + 9 or
    not valid Unicode: what a reader accepted is saved and read back (issue 68's round trip),
    whichever reader left a long file name, thread name or lone surrogate in its tables.
    O(number of texts): one join and length scan when all are short ASCII strings (the usual
    case: 2 ms of CPU instead of 5 for the 23k names and path parts of a 177 MB JSON trace), else a
    length test and, for non-ASCII texts, one encode each."""
    from ..model import STRING_TABLES

    def unfit(s) -> bool:
        if not isinstance(s, str):
            return False
        if len(s) > cap + _CUT_MARK:  # (a name a reader cut already: cap, "…" and 8 hex digits)
            return True
        if s.isascii():
            return False
        try:
            s.encode("utf-8")
            return False
        except UnicodeEncodeError:
            return True

    def all_fit(texts) -> bool:
        """Whether every item is a short ASCII str, told at C speed (one join, one max); False
        (the caller then tests each) when one is not, or is no str."""
        try:
            return "".join(texts).isascii() and max(map(len, texts), default=0) <= cap + _CUT_MARK
        except TypeError:
            return False

    n = 0
    for k in STRING_TABLES:
        v = getattr(trace, k, None)
        if v is None:
            continue
        bad = [] if isinstance(v, (list, tuple)) and all_fit(v) else [j for j, s in enumerate(v) if unfit(s)]
        if bad:
            v = list(v)
            for j in bad:
                v[j] = _fit_text(v[j], cap)
            setattr(trace, k, v)
            n += len(bad)
    paths = trace.function_paths
    bad = [] if all_fit([x for pth in paths for x in pth]) else \
        [j for j, pth in enumerate(paths) if any(unfit(x) for x in pth)]
    if bad:
        paths = list(paths)
        for j in bad:
            paths[j] = tuple(_fit_text(x, cap) if isinstance(x, str) else x for x in paths[j])
        trace.function_paths = paths
        n += len(bad)
    if n:
        reps = trace.meta.setdefault("repairs", {})
        if isinstance(reps, dict):
            r = reps.setdefault("text_unfit", {"count": 0, "first": "the trace's text tables",
                                               "action": "a text longer than max_name_chars or not valid "
                                                         "Unicode: cut with a hash, U+FFFD for a lone surrogate"})
            if isinstance(r, dict):
                r["count"] = r.get("count", 0) + n


def load_memory(path, *, limits: Limits | None = None, **options):
    """The memory the file at ``path`` records, as a `MemoryCapture`: its bytes read as `load`
    reads them, then `load_memory_bytes`.  ``options`` go to the reader (``warn=``; memray's
    ``reader=``)."""
    lim = resolve_limits(limits, options)
    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(path):
        raise TraceFormatError(f"{path}: not a file")
    data, _, _ = _read_input(path, lim.max_bytes, in_place=False, as_bytes=True)
    return load_memory_bytes(data, source=path, limits=lim, **options)


def load_memory_bytes(data, source: str = "<bytes>", *, limits: Limits | None = None, **options):
    """The memory that bytes of a capture record, as a `MemoryCapture` (a wrapper, gzip, opened
    first: `containers.open_whole`, and handed on read-only as `load_bytes` hands them): the
    format the first of the table's formats with a memory reader that recognises them
    (`formats.detect` with ``memory=True``; a memray capture, Chrome JSON with memory-infra
    dumps), else `formats.fallback`'s (memray's reader, which says why the bytes are no
    capture).  ``options`` go to the reader."""
    from .containers import open_whole
    from .formats import Head, detect, fallback, resolve

    lim = resolve_limits(limits, options)
    data, _ = open_whole(data, source, lim)
    data = _read_only(data)  # (the kernels' one type for bytes, as `load_bytes` gives them)
    fmt = detect(Head(data, whole=True, name=source), memory=True) or fallback(memory=True)
    return resolve(fmt.memory)(data, source=source, limits=lim, **options)


__all__ = ["load", "load_bytes", "load_memory", "load_memory_bytes", "Limits", "DEFAULT_MAX_BYTES"]
