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
