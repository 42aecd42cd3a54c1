"""Byte spans hashed and compared inline, for the scanners' hot loops (`cpuprofile_scan`,
`pprof_scan`, `perf_lines`): the same work as `textscan.span_hash` and `textscan._same_bytes`
(the arena comparison is `textscan.same_as_arena`, inlined too), but inlined into their caller, so a loop compiled without reference
counting (``_nrt=False``) calls no function that counts them: a call of a compiled function that
takes arrays costs two atomic operations per array (measured: a third of the .cpuprofile scan).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .textscan import K1, K2, mix64, load_u64


@njit(cache=True, nogil=True, inline="always")
def hash_bytes(buf, lo, hi, basis):
    """A keyed hash of ``buf[lo:hi]``: h = (h XOR word) × K, rotated, over its 8-byte words
    from ``basis`` (which carries the seed), the last partial word read byte by byte, then the
    splitmix64 finaliser of h and the length (as `textscan.span_hash`, not equal to it)."""
    h = basis
    k = lo
    while k + 8 <= hi:
        h = (h ^ load_u64(buf, k)) * K1
        h = (h << np.uint64(31)) | (h >> np.uint64(33))
        k += 8
    w = np.uint64(0)
    for x in range(hi - k):
        w |= np.uint64(buf[k + x]) << np.uint64(8 * x)
    return mix64((h ^ w) * K2 ^ np.uint64(hi - lo))


@njit(cache=True, nogil=True, inline="always")
def to_arena(arena, used, buf, a, b):
    """``buf[a:b]`` copied into ``arena`` at ``used`` (the caller keeps room); the new ``used``."""
    for x in range(b - a):
        arena[used + x] = buf[a + x]
    return used + (b - a)
