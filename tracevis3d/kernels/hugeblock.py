"""Large arrays whose memory the kernel may back with 2 MiB pages (transparent huge pages).

Fresh memory is faulted in on first touch, one fault per page: with 4 KiB pages a 44 MB
array is 10,700 faults, a few µs each on a virtual machine and serialised between threads
(the process's memory-map lock).  numpy's ``np.empty`` advises huge pages
(``madvise(MADV_HUGEPAGE)``) for blocks of 4 MiB and more on Linux, which the kernel honours
in its default "madvise" mode; ``np.zeros`` does not (it maps zero pages through ``calloc``,
even reading them faults), nor does an array allocated inside a numba kernel.  So a large
zeroed array is ``np.empty`` then filled (`zeros`: 523 faults instead of 10,743 for 44 MB, 8
instead of 20-26 ms), and a kernel's scratch arrays are cut from one such block made in
Python (`carve`) and handed in, where they can also be reused from one call to the next.
Elsewhere (other systems, THP "never") these are plain arrays: the same results.
"""
import numpy as np

#: byte alignment of each array `carve` cuts (a cache line; any dtype's alignment divides it)
ALIGN = 64


def zeros(shape, dtype=np.float64):
    """``np.zeros(shape, dtype)`` from ``np.empty`` (huge pages advised from 4 MiB) filled with 0."""
    a = np.empty(shape, dtype)
    a.fill(0)
    return a


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
    block = np.empty(total + ALIGN, np.uint8)
    skip = -block.ctypes.data % ALIGN
    if zero:
        block.fill(0)
    return [block[skip + o:skip + o + n].view(dt).reshape(shape)
            for o, n, (shape, dt) in zip(offsets, sizes, specs)]
