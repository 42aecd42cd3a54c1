"""The process's advice of huge pages (transparent huge pages, 2 MiB) for the large arrays numpy
allocates: on or off for a block of code (`huge_pages`), and off while fresh huge pages are dear
to fault in (`set_huge_pages_cheap`, which a large file's read judges: `io._PageCheck`).  numpy
only: `io.load` reads a file before it imports a reader (and numba).  `kernels.hugeblock` cuts a
kernel's scratch from one such array (`carve`).

On the benches' virtual machines (Firecracker guests with free page reporting: the guest hands
free blocks of 2 MiB and more back to the host) a huge page cut from a block handed back is
backed by the host on its first touch.  A process started after the machine had been idle a few
seconds paid 4.4-6.4 s a GiB for fresh huge pages past the first few tens of MB (those came from
blocks freed moments before, 0.1-0.3 s a GiB), against 0.45 s a GiB in 4 KiB pages every time:
so no small probe foretells the cost of a large allocation there (32 MiB probed at 0.11-0.36 s a
GiB, then 1 GiB at 4.4-6.4 s, five of six fresh processes), and the read of a large file judges
its own blocks as it goes.
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
        _OPEN.append((token, bool(advise)))
        _apply_advice()
    try:
        yield
    finally:
        with _ADVICE_LOCK:
            _OPEN.remove(next(x for x in _OPEN if x[0] is token))
            _apply_advice()


#: the `huge_pages` blocks open now, oldest first: (token, advice)
_OPEN: list = []
_ADVICE_LOCK = threading.Lock()


def _numpy_own_advice():
    """numpy's own setting of its advice (on by default on Linux, off with
    ``NUMPY_MADVISE_HUGEPAGE=0``), or None where it has no switch."""
    if _NUMPY_ADVICE is None:
        return None
    own = _NUMPY_ADVICE(True)
    _NUMPY_ADVICE(own)
    return bool(own)


_NUMPY_OWN = _numpy_own_advice()
#: whether fresh huge pages are cheap to fault in now (`set_huge_pages_cheap`); while not, no huge
#: pages are advised, by numpy or by a `huge_pages` block
_FRESH_HUGE_CHEAP = [True]


def _apply_advice() -> None:
    """numpy's advice set to the newest open block's, else numpy's own, and off while fresh huge
    pages are dear (`_FRESH_HUGE_CHEAP`).  Called holding `_ADVICE_LOCK`."""
    want = _OPEN[-1][1] if _OPEN else _NUMPY_OWN
    _NUMPY_ADVICE(bool(want) and _FRESH_HUGE_CHEAP[0])


def huge_pages_cheap() -> bool:
    """Whether fresh huge pages were cheap at the last look (a large file's read timed them:
    `io._PageCheck`)."""
    return _FRESH_HUGE_CHEAP[0]


def set_huge_pages_cheap(cheap: bool) -> None:
    """Record whether fresh huge pages are cheap to fault in now: while not, numpy advises none
    and `huge_pages` blocks advise none; on again, each advises as it asks."""
    with _ADVICE_LOCK:
        _FRESH_HUGE_CHEAP[0] = bool(cheap)
        if _NUMPY_ADVICE is not None:
            _apply_advice()


#: CPU seconds a GiB of fresh memory advised huge may always cost to fault in without counting as
#: dear (`dear`): what a GiB in 4 KiB pages costs on the benches' virtual machines (0.45 s touched,
#: 0.5-0.6 s read into); in huge pages the system has backed 0.09-0.33 there, in huge pages the
#: host backs afresh 0.9-6.4
SLOW_HUGE_S_PER_GIB = 0.6
#: how many times what 4 KiB pages cost in this process (`small_page_cost`) huge pages may cost
#: without counting as dear (`dear`), where that is more than `SLOW_HUGE_S_PER_GIB`
DEAR_OVER_SMALL = 1.25
#: bytes of fresh memory judged at a time (`dear`: a read's blocks, `io._PageCheck`; a one-shot
#: command's heap, `allocator.judge_heap_pages`)
JUDGE_BLOCK_BYTES = 16 << 20
#: fresh memory in 4 KiB pages `small_page_cost` touches
SMALL_REF_BYTES = 4 << 20
_SMALL_COST: list = []


def touch_seconds(block) -> float:
    """This thread's CPU seconds to write one byte of each 4 KiB page of the uint8 array ``block``
    (fresh memory: what faulting its pages in costs)."""
    import time

    t = time.thread_time()
    block[::4096] = 1
    return time.thread_time() - t


def small_page_cost() -> float:
    """CPU seconds a GiB of fresh memory in 4 KiB pages costs this process to fault in (once per
    4 KiB page), measured the first time on `SMALL_REF_BYTES` advised ``MADV_NOHUGEPAGE`` (~1-2
    ms) and kept; 0.0 where it cannot be measured."""
    if _SMALL_COST:
        return _SMALL_COST[0]
    import mmap

    cost = 0.0
    try:
        m = mmap.mmap(-1, SMALL_REF_BYTES, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except (OSError, ValueError, AttributeError):
        m = None
    if m is not None:
        block = None
        try:
            if hasattr(mmap, "MADV_NOHUGEPAGE"):
                m.madvise(mmap.MADV_NOHUGEPAGE)
            block = np.frombuffer(m, np.uint8)
            cost = touch_seconds(block) * (1 << 30) / SMALL_REF_BYTES
        except (OSError, ValueError):
            pass
        finally:
            del block
            m.close()
    _SMALL_COST.append(cost)
    return cost


def dear(cpu_s: float, nbytes: int) -> bool:
    """Whether ``nbytes`` of fresh memory advised huge that took ``cpu_s`` of a thread's CPU to
    fault in cost more than 4 KiB pages would: more than `SLOW_HUGE_S_PER_GIB` a GiB and more than
    `DEAR_OVER_SMALL` times what they cost here (`small_page_cost`: on a machine whose 4 KiB pages
    are slower than the benches', huge pages a little faster than those are still the cheap kind)."""
    limit = SLOW_HUGE_S_PER_GIB
    if cpu_s * (1 << 30) > limit * nbytes:
        limit = max(limit, DEAR_OVER_SMALL * small_page_cost())
    return cpu_s * (1 << 30) > limit * nbytes
