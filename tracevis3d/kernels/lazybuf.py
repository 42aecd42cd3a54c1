"""Lazily resident buffers: an uninitialised array on its own anonymous mapping.

Pages become resident only when written, the mapping reserves no swap
(``MAP_NORESERVE``), and the unused tail can be given back to the OS while the front
stays in use (`release_after`), or any range once read (`release_range`).  Used for the
tree join's match buffers (`setjoin_tree`), which are sized for the most a chunk can write,
far more than is ever written, and compacted in place chunk by chunk.
"""
import mmap
import platform
import sys

import numpy as np


def _noreserve_flag() -> int:
    """``MAP_NORESERVE`` where the platform has it (Python's mmap module names it only from
    3.13 on; 0x4000 on Linux x86-64 and arm64), else 0."""
    flag = getattr(mmap, "MAP_NORESERVE", None)
    if flag is not None:
        return int(flag)
    if sys.platform.startswith("linux") and platform.machine().lower() in ("x86_64", "amd64", "aarch64", "arm64"):
        return 0x4000
    return 0


def lazy_empty(n, dtype):
    """(array, mapping): an uninitialised array of n items on its own anonymous
    mapping, so pages become resident only when written and the unused tail
    can be given back (`release_after`) while the front stays in use.

    The mapping reserves no swap (``MAP_NORESERVE``): it is sized for the most a chunk can
    write, far more than is ever written, and Linux's default overcommit heuristic refuses
    a reserving mapping larger than RAM and swap however little of it is touched (a 10^7
    call comparison failed so).  Where the system still refuses (strict overcommit), a
    `TraceTooLargeError` says how much was asked."""
    from ..errors import TraceTooLargeError

    dtype = np.dtype(dtype)
    size = max(1, int(n) * dtype.itemsize)
    flags = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0) | _noreserve_flag()
    try:
        mm = mmap.mmap(-1, size, flags=flags) if flags else mmap.mmap(-1, size)
    except OSError as e:
        raise TraceTooLargeError(
            f"the comparison's join needs {size / 2 ** 30:.1f} GiB of address space for its match buffer and the "
            f"system refused it ({e.strerror or e}): compare a time window, one thread or fewer levels of each "
            f"trace") from None
    return np.frombuffer(mm, dtype, count=int(n)), mm


def release_after(mm, n_bytes):
    """Give the pages of mapping ``mm`` beyond its first n_bytes back to the OS."""
    if not hasattr(mm, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return
    start = -(-int(n_bytes) // mmap.PAGESIZE) * mmap.PAGESIZE
    if start < len(mm):
        mm.madvise(mmap.MADV_DONTNEED, start, len(mm) - start)


def release_range(mm, lo_bytes, hi_bytes):
    """Give the whole pages of mapping ``mm`` inside bytes [lo_bytes, hi_bytes) back to the
    OS (the partial pages at either end stay); later writes there find zeroed pages."""
    if not hasattr(mm, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return
    start = -(-int(lo_bytes) // mmap.PAGESIZE) * mmap.PAGESIZE
    stop = min(int(hi_bytes), len(mm)) // mmap.PAGESIZE * mmap.PAGESIZE
    if start < stop:
        mm.madvise(mmap.MADV_DONTNEED, start, stop - start)
