"""Large arrays whose memory the kernel may back with 2 MiB pages (transparent huge pages).

Fresh memory is faulted in on first touch, one fault per page: with 4 KiB pages a 44 MB
array is 10,700 faults, a few µs each on a virtual machine and serialised between threads
(the process's memory-map lock).  numpy's ``np.empty`` advises huge pages
(``madvise(MADV_HUGEPAGE)``) for blocks of 4 MiB and more on Linux, which the kernel honours
in its default "madvise" mode; ``np.zeros`` does not (it maps zero pages through ``calloc``,
even reading them faults), nor does an array allocated inside a numba kernel.  So a kernel's
scratch and accumulators are cut from one ``np.empty`` block made in Python (`carve`) and
handed in, where they can be reused from one call to the next and zeroed by the thread that
uses them (the first touch of fresh pages, huge or not, is what costs: 44 MB zeroed took 8 ms
alone but 60-70 ms inside a comparison, on one thread).  Elsewhere (other systems, THP
"never") these are plain arrays: the same results.

Which page size is cheaper to touch first depends on the machine: on the 2-core virtual
machine of these benches, 100 MB took 60-233 ms in huge pages against 52-54 ms in 4 KiB pages
(four runs; the host backs each huge page on its first touch), and turning numpy's
huge-page advice off left the 10^6 comparison's time unchanged (4.70 against 4.77 s, 4
alternated runs each).  On bare metal huge pages are the cheaper kind (not measured here).
What `carve` gives everywhere: one allocation per kernel call instead of twenty, aligned arrays,
and scratch that a thread hands from one call to the next.
"""
import numpy as np

from ..pages import huge_pages

#: byte alignment of each array `carve` cuts (a cache line; any dtype's alignment divides it)
ALIGN = 64


def carve(specs, zero=False):
    """Arrays of the ``(shape, dtype)`` pairs ``specs``, C-contiguous, each at a multiple of
    `ALIGN` bytes of ONE ``np.empty`` block (so the block, not each array, reaches numpy's
    huge-page size); all zero when ``zero``.  Returns them as a list, in order."""
    specs = [(tuple(np.atleast_1d(np.asarray(shape, np.int64)).tolist()), np.dtype(dt)) for shape, dt in specs]
    sizes = [int(np.prod(shape, dtype=np.int64)) * dt.itemsize for shape, dt in specs]
    offsets = []
    total = 0
    for n in sizes:
        offsets.append(total)
        total += -(-max(n, 1) // ALIGN) * ALIGN
    with huge_pages(True):
        block = np.empty(total + ALIGN, np.uint8)
    skip = -block.ctypes.data % ALIGN
    if zero:
        block.fill(0)
    return [block[skip + o:skip + o + n].view(dt).reshape(shape)
            for o, n, (shape, dt) in zip(offsets, sizes, specs)]
