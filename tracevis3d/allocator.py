"""The C allocator's settings for a one-shot command-line render (``python -m tracevis3d render-…``).

A figure of 10^7 calls is made by numpy passes over arrays of 40-80 MB, each pass allocating
and freeing its own temporaries.  glibc's malloc serves every block above 32 MB with a fresh
``mmap`` and gives it back with ``munmap`` when freed, so each pass's output is new memory the
kernel must fault in and zero page by page; and a worker thread (`jobs.Job`) allocates from an
arena of its own, which maps its blocks the same way.  Measured on the 10^7-call icicle
(bench/bench_scale.py, 2 cores): 5.5-6.7 s of the run's 15-16 s were system time, the layout
7.9 s warm; with the three settings below 4.4 s, the whole render 12.6 s against 14.9 s, the
peak resident memory +2.5 % (3.97 → 4.07 GB).

`tune_for_batch` makes freed memory stay with the process for the next pass:

- ``M_ARENA_MAX`` = 1: worker threads allocate from the main arena, which grows by ``brk``;
- ``M_MMAP_MAX`` = 0: no block is served by a mapping of its own (glibc still maps when the
  heap cannot grow);
- ``M_TRIM_THRESHOLD`` = never: the free top of the heap is not handed back between passes.

Then `judge_heap_pages` faults in the first of that memory and judges what its huge pages cost:
where they are dear (a virtual machine whose host backs each fresh one anew: `tracevis3d.pages`),
numpy advises none for the rest of the command.

The memory is given back when the process ends, so this suits the one-shot ``render-*``
commands only: never Blender's own process (the add-on does not call it) nor a long-running
live feed.  ``TRACEVIS3D_MALLOC=system`` keeps the system's settings.  Only glibc has these
parameters; elsewhere (macOS, Windows, musl) nothing is changed.
"""
from __future__ import annotations

import ctypes
import os
import sys

# glibc's <malloc.h> parameter numbers
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
M_ARENA_MAX = -8

#: (parameter, value) set by `tune_for_batch`; mallopt takes an int, and glibc reads the trim
#: threshold as a size_t, so -1 is the largest threshold: the heap's top is never trimmed
BATCH_SETTINGS = ((M_ARENA_MAX, 1), (M_MMAP_MAX, 0), (M_TRIM_THRESHOLD, -1))


def _glibc():
    """The process's C library when it is glibc (it has ``gnu_get_libc_version``), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 (absent from musl and the others)
        libc.mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
        libc.mallopt.restype = ctypes.c_int
    except (OSError, AttributeError):
        return None
    return libc


def tune_for_batch() -> dict:
    """Apply `BATCH_SETTINGS` (see the module docstring) unless ``TRACEVIS3D_MALLOC=system``.
    Returns {parameter: value} of the settings glibc accepted ({} when none were made)."""
    if os.environ.get("TRACEVIS3D_MALLOC", "").strip().lower() == "system":
        return {}
    libc = _glibc()
    if libc is None:
        return {}
    return {param: value for param, value in BATCH_SETTINGS if libc.mallopt(param, value) == 1}


#: bytes of the heap a one-shot command faults in before its work to judge huge pages by
#: (`judge_heap_pages`), in blocks of `pages.JUDGE_BLOCK_BYTES`
JUDGE_HEAP_BYTES = 128 << 20


def judge_heap_pages() -> bool:
    """After `tune_for_batch` (the heap keeps what it is given back, so what is faulted in here is
    what the command's arrays are cut from next): fault in up to `JUDGE_HEAP_BYTES` of it in one
    numpy block (numpy advises huge pages for it, as for every block of 4 MiB and more), a block of
    `pages.JUDGE_BLOCK_BYTES` at a time (`pages.touch_seconds`), each judged by this thread's CPU
    time (`pages.dear`); at the first dear block, fresh huge pages count as dear for the process
    (`pages.set_huge_pages_cheap`: numpy advises none after this) and the rest is left untouched.  Returns whether they were cheap.

    A one-shot render takes all its memory fresh from the system, which on the benches' virtual
    machines, after a few idle seconds, backs each fresh huge page past the first few tens of MB
    anew (4-6 s a GiB against 0.45 s in 4 KiB pages: `pages`).  Costs 13-40 ms where huge pages
    are cheap (memory the command then uses), ~0.1 s where they are dear."""
    import numpy as np

    from . import pages

    if not pages.huge_pages_cheap():
        return False
    block = np.empty(JUDGE_HEAP_BYTES, np.uint8)
    try:
        step = pages.JUDGE_BLOCK_BYTES
        for at in range(0, JUDGE_HEAP_BYTES, step):
            part = block[at: at + step]
            if pages.dear(pages.touch_seconds(part), part.nbytes):
                pages.set_huge_pages_cheap(False)
                _no_huge_pages(block)  # (numpy's advice stays on the heap's range it was given for)
                return False
    finally:
        del block
    return True


#: Linux's ``MADV_NOHUGEPAGE`` (<sys/mman.h>)
MADV_NOHUGEPAGE = 15


def _no_huge_pages(block) -> None:
    """``madvise(MADV_NOHUGEPAGE)`` over the whole pages of numpy array ``block``'s memory: the heap
    keeps a range's advice after the array is freed, and hands the range to the next arrays."""
    import mmap

    libc = _glibc()
    if libc is None:
        return
    page = mmap.PAGESIZE
    lo = -(-block.ctypes.data // page) * page
    hi = (block.ctypes.data + block.nbytes) // page * page
    if hi > lo:
        libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        libc.madvise.restype = ctypes.c_int
        libc.madvise(lo, hi - lo, MADV_NOHUGEPAGE)

