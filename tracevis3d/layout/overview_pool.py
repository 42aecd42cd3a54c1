"""The overview's passes over every call on the machine's cores (a 10^7-call icicle in
seconds): `in_parts` runs a function over parts of the calls on a small pool of threads and
gives the results in the parts' order.  The work in a part runs in numba kernels that release
the GIL (``nogil=True``) and in numpy's loops, so two parts run at once on two cores.

What a part computes never depends on the others', and the caller combines the results in the
parts' order (a concatenation, integer sums, maxima): the same values, bit for bit, as one
pass, whatever the number of threads.  A part never sums floats across parts (an order of
additions the single pass does not make).
"""
from __future__ import annotations

import atexit
import os
import threading
from concurrent.futures import ThreadPoolExecutor

#: threads of the pool (the layout's worker is one of them only while it waits): the cores, at most
#: this many (``TRACEVIS3D_LAYOUT_THREADS`` overrides; 1: every part in the calling thread)
MAX_THREADS = 4
#: parts of fewer calls than this run in the calling thread (a small figure gains nothing)
MIN_PARALLEL_CALLS = 1 << 20

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def layout_threads() -> int:
    """How many threads `in_parts` uses: ``TRACEVIS3D_LAYOUT_THREADS``, else the cores, at most
    `MAX_THREADS`."""
    env = os.environ.get("TRACEVIS3D_LAYOUT_THREADS", "").strip()
    if env.isdigit() and int(env) >= 1:
        return int(env)
    return max(1, min(MAX_THREADS, os.cpu_count() or 1))


def _executor(n: int) -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None or _pool._max_workers != n:  # noqa: SLF001  (the size asked for)
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="tracevis3d-layout")
        return _pool


@atexit.register
def _shutdown() -> None:
    if _pool is not None:
        _pool.shutdown(wait=False)


def in_parts(fn, parts: list, n_calls: int) -> list:
    """``[fn(part) for part in parts]``, the parts on `layout_threads` threads where they hold
    at least `MIN_PARALLEL_CALLS` calls in all (``n_calls``); in the parts' order."""
    n = layout_threads()
    if n <= 1 or len(parts) <= 1 or n_calls < MIN_PARALLEL_CALLS:
        return [fn(p) for p in parts]
    out = list(_executor(n).map(fn, parts))
    _trim()
    return out


def _trim() -> None:
    """Hand the memory the parts freed back (glibc's ``malloc_trim``): parts that allocate in
    several threads at once leave holes among the heap's pages that a later pass of one thread
    does not fill (the 10^7-call overview's peak went from 63 to 85 bytes a call without)."""
    global _libc
    if _libc is None:
        import ctypes
        import sys

        try:
            _libc = ctypes.CDLL(None) if sys.platform.startswith("linux") else False
            _libc.malloc_trim  # noqa: B018  (glibc only)
        except (OSError, AttributeError):
            _libc = False
    if _libc:
        _libc.malloc_trim(0)


_libc = None


def split(n: int, k: int) -> list:
    """``[(a, b), ...]``: ``range(n)`` in ``k`` parts of nearly equal size (none empty)."""
    k = max(1, min(k, n))
    cuts = [n * j // k for j in range(k + 1)]
    return [(cuts[j], cuts[j + 1]) for j in range(k) if cuts[j + 1] > cuts[j]]
