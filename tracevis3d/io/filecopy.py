"""A file's bytes read into private memory, which a reader may give back before it is done.

`load(path)` reads a file into private memory, never maps it (a mapped file that another program
truncates raises SIGBUS inside the numba kernels, which no Python handler can catch).  Read so,
the bytes cost the file's size until the reader ends: at 10^7 calls the Chrome JSON reader held
the 1.35 GB of the file while it built the calls, whose arrays need as much again.

`FileCopy` is that memory (a private anonymous mapping) and says which file it copies (path and
`stamp`).  A reader that owns it (`owned`: the bytes `load` read, never a caller's) may give its
pages back (`release`: ``madvise(MADV_DONTNEED)``, after which the mapping reads as zeros: wrong
bytes, never a crash) once only a few of its bytes are still needed; those it reads again from
the file (`LateFile`: ``os.pread`` of a span, the line and column of a byte), after checking the
file is the one it read (device, inode, size, modification time), else a `TraceFormatError`.
"""
from __future__ import annotations

import mmap
import os
import sys
import threading

import numpy as np

from ..model import TraceFormatError


class FileCopy(mmap.mmap):
    """A private anonymous mapping holding a file's bytes (`io._read_to_end`): ``path`` and
    ``stamp`` (`stamp_of`) of the file they came from, set once read."""
    path: str | None = None
    stamp: tuple | None = None
    #: made with room to be kept for the next load (`fresh_copy`, `recycle`)
    keepable: bool = False
    #: fresh and advised to use huge pages (`io._file_buffer`): its read judges what they cost and
    #: may take the advice back from part of it (`io._PageCheck`)
    judge_pages: bool = False


def stamp_of(st: os.stat_result) -> tuple:
    """What tells one version of a file from another: device, inode, size, modification time."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def owned(data) -> FileCopy | None:
    """The `FileCopy` behind ``data`` (a memoryview of the whole of one, as `io.load` hands its
    reader) when it holds a file read whole and unchanged, else None."""
    obj = getattr(data, "obj", None)
    if not isinstance(obj, FileCopy) or obj.path is None or obj.stamp is None or len(data) != obj.stamp[2]:
        return None
    return obj


def unchanged(copy: FileCopy) -> bool:
    """Whether the file at ``copy.path`` is still the version ``copy`` holds."""
    try:
        return stamp_of(os.stat(copy.path)) == copy.stamp
    except OSError:
        return False


def release(copy: FileCopy) -> bool:
    """Give the pages of ``copy`` back to the system (they read as zeros after this); False where
    the system cannot (no ``madvise``: the bytes stay)."""
    if not hasattr(mmap, "MADV_DONTNEED"):
        return False
    try:
        copy.madvise(mmap.MADV_DONTNEED)
    except (OSError, ValueError):
        return False
    return True


#: bytes read at a time when a line number is counted from the file (`LateFile.line_col`)
LINE_BLOCK = 16 << 20


class LateFile:
    """The bytes of a released `FileCopy`, read again from its file: `read` (a span), `line_col`
    (of a byte, as `kernels.jsontokens.line_col` gives it); ``known``: spans kept before the
    release ((offset, length) -> bytes), served without reading.  Every read first checks that the
    file is still the version that was read (`stamp_of`), else raises `TraceFormatError`."""

    def __init__(self, path: str, stamp: tuple, source: str, known: dict):
        self.path, self.stamp, self.source, self.known = path, stamp, source, known
        self._lines: list = []  # newlines in each LINE_BLOCK of the file, from the start

    def _fd(self) -> int:
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError as e:
            raise TraceFormatError(f"{self.source}: the file could not be read again while it was loaded "
                                   f"({e.strerror or e})") from None
        if stamp_of(os.fstat(fd)) != self.stamp:
            os.close(fd)
            raise TraceFormatError(f"{self.source}: the file changed while it was loaded (another program "
                                   f"wrote it): load it again")
        return fd

    def read(self, off: int, ln: int) -> bytes:
        """The file's bytes [off, off + ln) (fewer past its end)."""
        got = self.known.get((int(off), int(ln)))
        if got is not None:
            return got
        return self.read_many([(off, ln)])[0]

    def read_many(self, spans) -> list:
        """The bytes of each (offset, length) of ``spans``, through one open file."""
        fd = self._fd()
        try:
            return [os.pread(fd, max(int(ln), 0), int(off)) if int(off) >= 0 else b"" for off, ln in spans]
        finally:
            os.close(fd)

    def line_col(self, pos: int) -> tuple:
        """(line, column) of byte ``pos``, both from 1 (`kernels.jsontokens.line_col`): the newlines
        before it counted from the file, a block at a time, the blocks' counts kept."""
        pos = max(int(pos), 0)
        fd = self._fd()
        try:
            whole = pos // LINE_BLOCK
            while len(self._lines) < whole:
                b = os.pread(fd, LINE_BLOCK, len(self._lines) * LINE_BLOCK)
                self._lines.append((b.count(b"\n"), b.rfind(b"\n")))
            start = whole * LINE_BLOCK
            part = os.pread(fd, pos - start, start)
        finally:
            os.close(fd)
        n = sum(c for c, _ in self._lines[:whole]) + part.count(b"\n")  # (blocks past pos counted earlier: not)
        last = part.rfind(b"\n")
        if last >= 0:
            last += start
        else:
            last = -1
            for k in range(whole - 1, -1, -1):
                if self._lines[k][1] >= 0:
                    last = k * LINE_BLOCK + self._lines[k][1]
                    break
        return n + 1, pos - last


#: the least run of pages `GiveBack` gives back at once (fewer are kept: one system call each)
MIN_RUN_PAGES = 16


class GiveBack:
    """A `FileCopy` given back from its start as a reader moves through it (`upto`): the pages of
    [0, ``done``) are given back except those that hold a span the reader still compares (the
    first occurrence of each distinct name, kept in place) and runs shorter than `MIN_RUN_PAGES`.
    ``released``: the (offset, length) runs given back, which `restore` reads again from the file
    (a reader that needs the whole copy after all: after checking that the file is the version
    read, else a `TraceFormatError` naming ``source``)."""

    def __init__(self, copy: FileCopy, source: str):
        self.copy, self.source = copy, source
        self.page = mmap.PAGESIZE
        self.done = 0
        self.released: list = []

    def upto(self, end: int, keep_off, keep_end) -> None:
        """Give back the whole pages of [``done``, ``end``) but those that bytes [keep_off[k],
        keep_end[k]) of any k fall on (int64 arrays; spans outside the range are ignored)."""
        p = self.page
        lo_page, hi_page = self.done // p, int(end) // p
        if hi_page <= lo_page:
            return
        keep_off, keep_end = np.asarray(keep_off, np.int64), np.asarray(keep_end, np.int64)
        inside = (keep_end > keep_off) & (keep_end > lo_page * p) & (keep_off < hi_page * p)
        a = np.maximum(keep_off[inside] // p, lo_page) - lo_page
        b = np.minimum((keep_end[inside] - 1) // p + 1, hi_page) - lo_page
        edge = np.zeros(hi_page - lo_page + 1, np.int64)  # +1 where a kept span's pages start, -1 after them
        np.add.at(edge, a, 1)
        np.add.at(edge, b, -1)
        free = np.cumsum(edge[:-1]) == 0
        # runs of free pages: starts where free begins, ends where it stops
        step = np.diff(np.concatenate([[False], free, [False]]).astype(np.int8))
        starts, stops = np.flatnonzero(step == 1), np.flatnonzero(step == -1)
        for s, e in zip(starts.tolist(), stops.tolist()):
            if e - s >= MIN_RUN_PAGES and release_span(self.copy, (lo_page + s) * p, (e - s) * p):
                self.released.append(((lo_page + s) * p, (e - s) * p))
        self.done = hi_page * p

    def restore(self) -> None:
        """Read every run given back again from the file (`LateFile`'s checks), the copy whole again."""
        if self.released:
            late = LateFile(self.copy.path, self.copy.stamp, self.source, {})
            fd = late._fd()
            try:
                view = memoryview(self.copy)
                try:
                    for off, ln in self.released:
                        for at in range(off, off + ln, LINE_BLOCK):
                            want = min(LINE_BLOCK, off + ln - at)
                            got = os.pread(fd, want, at)
                            if len(got) != want:
                                raise TraceFormatError(f"{self.source}: the file changed while it was loaded "
                                                       f"(another program wrote it): load it again")
                            view[at: at + want] = got
                finally:
                    view.release()
            finally:
                os.close(fd)
        self.released = []
        self.done = 0


def release_span(copy: FileCopy, off: int, ln: int) -> bool:
    """Give back the pages of bytes [``off``, ``off + ln``) of ``copy`` (whole pages) as `release`."""
    if not hasattr(mmap, "MADV_DONTNEED"):
        return False
    try:
        copy.madvise(mmap.MADV_DONTNEED, off, ln)
    except (OSError, ValueError):
        return False
    return True


# --- the spare copy: one read buffer kept from one `load` to the next

#: the largest file whose copy is kept for the next load (`recycle`): larger ones are given back
#: while they are read (`chrome.RELEASE_BYTES`), and their memory is what the 10^7 row counts
SPARE_MAX_BYTES = 256 << 20
#: room a kept copy is made with past its file's size, so that a file a little larger (a trace
#: recorded again) fits it too: untouched pages cost no memory
SPARE_ROOM_FRACTION = 8
#: a huge page: what a spare copy's length is rounded up to
_HUGE_PAGE = 2 << 20

_spare_lock = threading.Lock()
_spare: FileCopy | None = None


def spare_copy(size: int) -> FileCopy | None:
    """A private anonymous mapping of at least ``size`` bytes for a file's copy: the spare one a
    finished load left (`recycle`) when it is large enough, else None (the caller maps a fresh
    one, `fresh_copy`).  A fresh mapping's pages are zeroed by the system as a read first writes
    them (the 176 MB sympy trace: 13 % of all CPU of five loads in a row here, ``clear_page_erms``
    under the read); the spare's pages, given back lazily (``MADV_FREE``), are written in place
    when the system has not taken them meanwhile.  A spare too small is unmapped here."""
    global _spare
    with _spare_lock:
        got, _spare = _spare, None
    if got is None:
        return None
    if len(got) >= size:
        return got
    got.close()
    return None


def fresh_copy(size: int) -> FileCopy:
    """A new private anonymous mapping for a file of ``size`` bytes: of exactly ``size`` where the
    copy cannot be kept for the next load (past `SPARE_MAX_BYTES`, or no ``MADV_FREE``), else with
    room to spare (`SPARE_ROOM_FRACTION`, whole huge pages).  Raises OSError or ValueError."""
    keepable = size <= SPARE_MAX_BYTES and hasattr(mmap, "MADV_FREE")
    if keepable:
        size = -(-(size + size // SPARE_ROOM_FRACTION) // _HUGE_PAGE) * _HUGE_PAGE
    copy = FileCopy(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    copy.keepable = keepable
    return copy


def recycle(data) -> bool:
    """Keep the `FileCopy` behind ``data`` (the memoryview `io.load` read a file into and handed
    its reader, the load done) as the spare for the next load (`spare_copy`), its pages given
    back lazily (``MADV_FREE``: the system takes them when it needs memory, else the next read
    writes over them).  Only when nothing can reach it any more: ``data`` released (a reader that
    kept a view of it, or an array over it, makes that fail) and no other reference to the
    mapping, nor any buffer exported from it.  Returns whether it was kept; ``data`` is released
    either way when nothing else uses it."""
    obj = getattr(data, "obj", None)
    if not isinstance(obj, FileCopy) or not obj.keepable:
        return False
    try:
        data.release()
    except BufferError:  # a view of it lives on
        return False
    if sys.getrefcount(obj) > 2:  # (this name and the call's argument): someone else holds it
        return False
    try:
        obj.resize(len(obj))  # raises BufferError while any buffer of it is exported (no-op otherwise)
        obj.madvise(mmap.MADV_FREE)
    except (BufferError, OSError, ValueError, SystemError, TypeError):
        return False
    obj.path = obj.stamp = None
    _set_spare(obj)
    return True


def _set_spare(copy: FileCopy | None) -> None:
    """``copy`` (or none) as the spare from now on; the one it replaces unmapped."""
    global _spare
    with _spare_lock:
        old, _spare = _spare, copy
    if old is not None:
        old.close()


def drop_spare() -> None:
    """Unmap the spare copy now (`recycle`), if one is kept: what a long-lived process calls once
    it loads no more traces (its pages are the system's to take anyway)."""
    _set_spare(None)
