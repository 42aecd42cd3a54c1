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
import contextlib
import importlib
import threading

import numpy as np


def _advice_switch():
    """numpy's switch of its huge-page advice (it returns the previous setting), or None where
    it has none.  numpy 1.26 has a stub ``numpy._core`` too: the module is named by version."""
    name = "numpy._core.multiarray" if int(np.__version__.split(".")[0]) >= 2 else "numpy.core.multiarray"
    try:
        return getattr(importlib.import_module(name), "_set_madvise_hugepage", None)
    except ImportError:
        return None


#: numpy's huge-page switch (`huge_pages`)
_NUMPY_ADVICE = _advice_switch()

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


@contextlib.contextmanager
def huge_pages(advise: bool):
    """numpy's huge-page advice for the large arrays it allocates in the block: on (numpy's
    default on Linux) or off, restored after.  On the benches' virtual machines (Firecracker
    guests with free page reporting: the guest hands freed blocks of 8 MiB back to the host) a
    fresh huge page is often cut from such a block, which the host backs again on its first
    touch; it is not compaction (``compact_stall`` in /proc/vmstat stayed 0; an earlier note here
    guessed so): the comparison's 140 MB of pair records took 0.12-0.21 s to fill in huge pages
    against 0.06 s in 4 KiB pages (4 alternated fresh processes each).  So `compare_traces`
    turns the advice off for the arrays it writes once and reads in order, and on again for its
    join, whose plan, postings and membership rows are read at random (fewer TLB misses: with
    the advice off there too the walk takes ~4 % longer), as `carve` does for any kernel's
    scratch; the JSON reader's join of a large scan's columns (`io.chrome_rows._columns`) turns
    it off for the same reason as the comparison's records.  The advice is process-wide: another
    thread's allocations meanwhile get the same (their contents are the same either way); blocks
    open on several threads at once end in any order, the advice of the newest still open one in
    force, numpy's own setting back when the last ends."""
    if _NUMPY_ADVICE is None:
        yield
        return
    token = object()
    with _ADVICE_LOCK:
        if not _OPEN:
            _OPEN.append((None, _NUMPY_ADVICE(bool(advise))))      # numpy's own setting, first
        else:
            _NUMPY_ADVICE(bool(advise))
        _OPEN.append((token, bool(advise)))
    try:
        yield
    finally:
        with _ADVICE_LOCK:
            _OPEN.remove(next(x for x in _OPEN if x[0] is token))
            _NUMPY_ADVICE(_OPEN[-1][1])
            if len(_OPEN) == 1:
                _OPEN.clear()


#: the `huge_pages` blocks open now, oldest first, after numpy's own setting: (token, advice)
_OPEN: list = []
_ADVICE_LOCK = threading.Lock()
