"""Mapped trace files that cannot take a process down.

A native file of `native.MAP_FROM_BYTES` or more is memory-mapped (its pages read when used).
If another program cuts such a file short while it is mapped, the next touch of a page past the
new end raises SIGBUS, which no Python handler can turn into an exception: the process dies,
inside Blender with the user's whole session.  Two ways out, chosen per process:

- **a private copy** (the default, and always inside Blender): the file is first copied into an
  unlinked temporary file that no other program can reach by a name (a reflink when the file
  system can: instant and sharing the blocks; else ``copy_file_range`` in the kernel, about a
  second per GB here), checked unchanged during the copy (size and modification time), and that
  copy is mapped.  Costs the copy's time and, without reflinks, its disk space until the trace is
  dropped; files that fit well in memory are read instead (`native.load_native`).
- **the file itself, guarded** (the one-shot command line, `exit_on_sigbus`): a signal handler
  compiled by numba (`kernels.sigbus_guard`: machine code, async-signal-safe, no Python, no GIL,
  loaded from the kernel cache) writes one line to stderr and exits with status 1.  The fast
  path for windows of 10^8-call files; a process that installs it accepts dying, cleanly, when
  its input is cut under it.
"""
from __future__ import annotations

import os
import signal
import sys

__all__ = ["exit_on_sigbus", "prefer_guard", "guarded", "private_copy", "available_memory"]

_installed = False
_wanted = False  # the process asked for the guard (`prefer_guard`): installed when a file is first mapped
_keep = []  # the handler and libc's handle stay alive as long as the process


def prefer_guard() -> None:
    """This process (a one-shot command) maps files in place under `exit_on_sigbus`, installed
    when a file is first mapped (loading the handler imports numba: only when needed)."""
    global _wanted
    _wanted = True


def guarded() -> bool:
    """May this process map a file in place: `exit_on_sigbus` installed, or wanted
    (`prefer_guard`) and installed now?"""
    if not _installed and _wanted:
        exit_on_sigbus()
    return _installed


def exit_on_sigbus() -> bool:
    """Install a SIGBUS handler (`kernels.sigbus_guard.on_sigbus`) that writes its one line to
    stderr and ``_exit(1)``s: for one-shot processes (the CLI) that map input files in place.
    Idempotent; False where it cannot be installed (no POSIX signals, numba cannot compile it):
    files are then copied."""
    global _installed
    if _installed:
        return True
    if os.name != "posix" or not hasattr(signal, "SIGBUS"):
        return False
    try:
        import ctypes

        from ..kernels.sigbus_guard import on_sigbus

        libc = ctypes.CDLL(None)
        libc.signal.argtypes = [ctypes.c_int, ctypes.c_void_p]
        libc.signal.restype = ctypes.c_void_p
        libc.signal(int(signal.SIGBUS), ctypes.c_void_p(on_sigbus.address))
        _keep.extend([on_sigbus, libc])
    except Exception as e:  # noqa: BLE001 (any failure: fall back to private copies)
        sys.stderr.write(f"tracevis3d: note: no SIGBUS guard ({type(e).__name__}: {e}); mapped files are copied\n")
        return False
    _installed = True
    return True


def _copy(src: int, dst: int, size: int) -> int:
    """Bytes copied from fd ``src`` to fd ``dst`` (in the kernel where it can: `copy_file_range`)."""
    off = 0
    if hasattr(os, "copy_file_range"):
        while off < size:
            k = os.copy_file_range(src, dst, min(size - off, 1 << 30), off, off)
            if k <= 0:
                break
            off += k
        return off
    while off < size:
        chunk = os.pread(src, min(size - off, 16 << 20), off)
        if not chunk:
            break
        os.pwrite(dst, chunk, off)
        off += len(chunk)
    return off


def available_memory() -> int:
    """Bytes of memory the system can give without swapping (Linux ``MemAvailable``; elsewhere the
    free pages), 0 when unknown."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0


def private_copy(path: str, source: str):
    """An unlinked copy of the file ``path`` (a binary file object open for reading), that no
    other program can cut short: a reflink where the file system has them, else a copy in the
    kernel (`copy_file_range`), beside the file (same file system) or, where that folder cannot
    take it, in the temporary folder.  Raises `TraceFormatError` naming ``source`` when the file
    changes while it is copied or no folder has room for the copy."""
    import errno
    import fcntl
    import tempfile

    from ..model import TraceFormatError

    src = os.open(path, os.O_RDONLY)
    try:
        before = os.fstat(src)
        size = before.st_size
        last = None
        for folder in (os.path.dirname(os.path.abspath(path)), tempfile.gettempdir()):
            try:
                f = tempfile.TemporaryFile(dir=folder)
            except OSError as e:
                last = e
                continue
            try:
                try:
                    fcntl.ioctl(f.fileno(), 0x40049409, src)  # FICLONE: share the blocks, copy on write
                except OSError:
                    off = _copy(src, f.fileno(), size)
                    if off != size:
                        raise OSError(errno.EIO, f"copied {off} of {size} bytes")
                after = os.fstat(src)
                if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
                    f.close()
                    raise TraceFormatError(f"{source}: the file changed while it was opened (another program is "
                                           f"writing it); open it again once it is written")
                f.seek(0)
                return f
            except OSError as e:
                f.close()
                last = e
        cause = os.strerror(last.errno) if isinstance(last, OSError) and last.errno else str(last)
        raise TraceFormatError(f"{source}: cannot make the private copy a mapped file is read from "
                               f"({size / 2**30:.1f} GiB; {cause}): free disk space beside it or in "
                               f"{tempfile.gettempdir()}, or use the tracevis3d command line, which maps it "
                               f"in place")
    finally:
        os.close(src)
