"""`allocator.judge_heap_pages`: a one-shot command's heap judged block by block; dear huge pages
turn numpy's advice off for the process (`pages`) and take it off the judged block's range."""
import os

import pytest

from tracevis3d import allocator, pages

from page_advice import advice_over


@pytest.fixture(autouse=True)
def _small_judge(monkeypatch):
    monkeypatch.setattr(allocator, "JUDGE_HEAP_BYTES", 8 << 20)
    monkeypatch.setattr(pages, "JUDGE_BLOCK_BYTES", 2 << 20)
    pages.set_huge_pages_cheap(True)
    yield
    pages.set_huge_pages_cheap(True)


def test_dear_pages_turn_the_advice_off_and_leave_the_block_unadvised(monkeypatch):
    if allocator._glibc() is None or not os.path.exists("/proc/self/smaps"):
        pytest.skip("glibc on Linux only (madvise, /proc/self/smaps)")
    monkeypatch.setattr(pages, "dear", lambda cpu_s, nbytes: True)  # every block dear
    seen = []
    unadvise = allocator._no_huge_pages

    def spy(block):
        unadvise(block)
        page = 4096
        lo = -(-block.ctypes.data // page) * page
        seen.append((block.nbytes, advice_over(lo, (block.ctypes.data + block.nbytes) // page * page)))

    monkeypatch.setattr(allocator, "_no_huge_pages", spy)
    assert allocator.judge_heap_pages() is False
    assert not pages.huge_pages_cheap()
    assert len(seen) == 1 and seen[0][0] == 8 << 20 and seen[0][1] and set(seen[0][1]) == {"nh"}
    seen.clear()
    assert allocator.judge_heap_pages() is False and not seen  # dear already: nothing judged again


def test_cheap_pages_leave_the_advice_as_it_was(monkeypatch):
    monkeypatch.setattr(pages, "dear", lambda cpu_s, nbytes: False)
    called = []
    monkeypatch.setattr(allocator, "_no_huge_pages", lambda block: called.append(block.nbytes))
    assert allocator.judge_heap_pages() is True
    assert pages.huge_pages_cheap() and not called
