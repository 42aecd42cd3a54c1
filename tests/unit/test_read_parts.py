"""`io._read_to_end` reads a large file as two halves side by side: the bytes are the file's,
whole, in order, with reads cut short (``os.preadv`` capped) and with a file that shrinks
between the two halves' reads; the file's position is left after the bytes read, where the
caller goes on reading a file that grew."""
from __future__ import annotations

import os

import numpy as np
import pytest

from tracevis3d import io as tio
from tracevis3d import pages

from page_advice import advice_over


@pytest.fixture
def big(tmp_path, monkeypatch):
    monkeypatch.setattr(tio, "PARALLEL_READ_BYTES", 1 << 20)
    data = np.random.default_rng(3).integers(0, 256, (5 << 20) + 12345, np.uint8).tobytes()
    p = tmp_path / "big.bin"
    p.write_bytes(data)
    return p, data


def test_two_halves_read_the_whole_file(big):
    p, data = big
    with open(p, "rb", buffering=0) as f:
        view, total = tio._read_to_end(f, len(data) + 1)
        assert f.tell() == total
    assert total == len(data) and bytes(view) == data


def test_short_reads_are_looped_over(big, monkeypatch):
    p, data = big
    real = os.preadv
    calls = []

    def capped(fd, bufs, offset):
        calls.append(offset)
        return real(fd, [memoryview(bufs[0])[:70000]], offset)

    monkeypatch.setattr(os, "preadv", capped)
    with open(p, "rb", buffering=0) as f:
        view, total = tio._read_to_end(f, len(data) + 1)
    assert total == len(data) and bytes(view) == data
    assert len(calls) >= len(data) // 70000 and 0 in calls and (2 << 20) in calls  # both halves, in pieces


def test_a_file_that_shrinks_ends_the_bytes_where_the_first_half_stopped(big, monkeypatch):
    p, data = big
    real = os.preadv
    cut = 1 << 20  # inside the first half (which ends at 2 MiB)

    def shrunk(fd, bufs, offset):  # the file as if truncated to ``cut`` bytes before any read
        if offset >= cut:
            return 0
        return real(fd, [memoryview(bufs[0])[:cut - offset]], offset)

    monkeypatch.setattr(os, "preadv", shrunk)
    with open(p, "rb", buffering=0) as f:
        view, total = tio._read_to_end(f, len(data) + 1)
        assert f.tell() == cut
    assert total == cut and bytes(view) == data[:cut]


def test_an_error_in_the_second_half_is_raised(big, monkeypatch):
    p, data = big
    real = os.preadv

    def failing(fd, bufs, offset):
        if offset >= 2 << 20:
            raise OSError(5, "Input/output error")
        return real(fd, bufs, offset)

    monkeypatch.setattr(os, "preadv", failing)
    with open(p, "rb", buffering=0) as f:
        with pytest.raises(OSError, match="Input/output"):
            tio._read_to_end(f, len(data) + 1)


def test_a_grown_file_is_read_on_by_load(big, tmp_path):
    """`_read_input` asks for the file's size + 1: a file that grew gives that many, and the
    rest is read from the position the halves left."""
    p, data = big
    with open(p, "rb", buffering=0) as f:
        view, total = tio._read_to_end(f, len(data) - 5)  # as if stat had seen 6 bytes fewer
        assert total == len(data) - 5 and f.tell() == total
        assert bytes(view) + f.read() == data


def test_one_thread_reads_it_whole_when_asked(big, monkeypatch):
    """``parallel=False`` (`io.load` while the reader is imported ahead on the other core): the
    same bytes, read by the calling thread alone."""
    import threading

    p, data = big

    def no_thread(*a, **k):
        raise AssertionError("a second read thread was started")
    monkeypatch.setattr(threading, "Thread", no_thread)
    with open(p, "rb", buffering=0) as f:
        view, total = tio._read_to_end(f, len(data) + 1, parallel=False)
        assert f.tell() == total
    assert total == len(data) and bytes(view) == data


def test_a_first_json_load_reads_on_one_thread_while_the_reader_is_imported(tmp_path):
    """In a fresh process whose first load of a large JSON file imports the reader ahead, the
    file is read by one thread (`io._read_input(parallel=False)`); the trace is the one a
    second load (two read threads, no import ahead) gives."""
    import subprocess
    import sys

    child = r"""
import sys, threading, warnings
warnings.simplefilter("ignore")
import tracevis3d, tracevis3d.io as tio
tio.IMPORT_AHEAD_BYTES = 0
tio.PARALLEL_READ_BYTES = 1 << 16
seen = []
real = threading.Thread
def counted(*a, **k):
    seen.append(getattr(k.get("target"), "__name__", "?"))
    return real(*a, **k)
threading.Thread = counted
first = tracevis3d.load(sys.argv[1])
n_first = seen.count("read_second")
second = tracevis3d.load(sys.argv[1])
print("READ_THREADS", n_first, seen.count("read_second") - n_first)
print("SAME", all(getattr(first, c).tobytes() == getattr(second, c).tobytes() for c in ("start", "end", "parent")))
"""
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents": [' + ",".join(
        f'{{"ph": "X", "name": "f{k % 9}", "pid": 1, "tid": {k % 3}, "ts": {k}, "dur": 0.5}}' for k in range(4000))
        + "]}")
    r = subprocess.run([sys.executable, "-c", child, str(path)], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    out = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    assert out["READ_THREADS"] == "0 1" and out["SAME"] == "True"


# --- the huge-page advice checked as the file is read (`io._PageCheck`)

@pytest.fixture(autouse=True)
def _cheap_pages_after():
    """Each test starts and ends with fresh huge pages taken as cheap (the process's record,
    `pages.set_huge_pages_cheap`, which a slow read clears)."""
    pages.set_huge_pages_cheap(True)
    yield
    pages.set_huge_pages_cheap(True)


def _advice_of(view) -> list:
    """The huge-page advice of each mapping that overlaps ``view``'s memory (`advice_over`)."""
    a = np.frombuffer(view, np.uint8)
    lo, hi = a.ctypes.data, a.ctypes.data + a.nbytes
    del a
    return advice_over(lo, hi)


def _read_checked(p, data, parallel):
    from tracevis3d.io import filecopy

    filecopy.drop_spare()
    with open(p, "rb", buffering=0) as f:
        view, total = tio._read_to_end(f, len(data) + 1, parallel=parallel)
        assert f.tell() == total
    assert total == len(data) and bytes(view) == data
    return view


@pytest.mark.parametrize("parallel", [True, False])
def test_huge_pages_that_fault_slowly_give_way_to_small_ones(big, monkeypatch, parallel):
    """A block read into huge pages that proves dear (`pages.dear`; here every block) has the rest
    of its span advised ``MADV_NOHUGEPAGE``; the blocks before keep huge pages, and the bytes are
    the file's.  Where no block is dear the whole buffer stays advised."""
    if not os.path.exists("/proc/self/smaps"):
        pytest.skip("no /proc/self/smaps to read the advice from (not Linux)")
    p, data = big
    monkeypatch.setattr(pages, "JUDGE_BLOCK_BYTES", 1 << 20)
    monkeypatch.setattr(pages, "dear", lambda cpu_s, nbytes: False)
    kept = _advice_of(_read_checked(p, data, parallel))
    if kept != ["hg"]:
        pytest.skip(f"no transparent huge pages to advise here (the buffer's mappings: {kept})")
    assert pages.huge_pages_cheap()
    monkeypatch.setattr(pages, "dear", lambda cpu_s, nbytes: True)
    given = _advice_of(_read_checked(p, data, parallel))
    # the first block of each span keeps its advice; the rest of it is given none
    assert given == (["hg", "nh", "hg", "nh"] if parallel else ["hg", "nh"])
    # and huge pages count as dear from then on (numpy's arrays too): a read too short to judge
    # them (under two blocks) has its buffer advised none; a longer one judges them again
    assert not pages.huge_pages_cheap()
    monkeypatch.setattr(pages, "dear", lambda cpu_s, nbytes: False)
    small = p.with_name("small.bin")
    small.write_bytes(data[:3 << 19])
    assert _advice_of(_read_checked(small, data[:3 << 19], parallel)) == ["nh"]
    assert not pages.huge_pages_cheap()
    assert _advice_of(_read_checked(p, data, parallel)) == ["hg"]
    assert pages.huge_pages_cheap()


def test_the_check_reads_through_short_reads(big, monkeypatch):
    """Short reads inside a checked block (``os.preadv`` capped) are looped over: a block is
    judged once whole, and the bytes are the file's with the advice taken back or not."""
    p, data = big
    real = os.preadv
    monkeypatch.setattr(os, "preadv", lambda fd, bufs, offset: real(fd, [memoryview(bufs[0])[:70000]], offset))
    monkeypatch.setattr(pages, "JUDGE_BLOCK_BYTES", 1 << 20)
    judged = []
    check = tio._PageCheck.block
    monkeypatch.setattr(tio._PageCheck, "block", lambda self, at, hi, cpu, nb: (judged.append((at, nb)),
                                                                               check(self, at, hi, cpu, nb)))
    for slow in (-1.0, float("inf")):
        monkeypatch.setattr(pages, "dear", lambda cpu_s, nbytes, slow=slow: slow < 0)
        pages.set_huge_pages_cheap(True)  # (the slow read before took them as dear)
        judged.clear()
        _read_checked(p, data, True)
        # whole blocks judged: the halves' blocks ending at 1 MiB, and at 3, 4 and 5 MiB (the
        # first half ends at 2 MiB, the file at 5 MiB + 12345: last blocks, not judged)
        ends = sorted(at >> 20 for at, nb in judged if nb)
        assert all(at % (1 << 20) == 0 for at, nb in judged if nb)
        assert ends == ([1, 3] if slow < 0 else [1, 3, 4, 5])



def test_a_kept_copy_is_not_judged_and_keeps_the_verdict(big, monkeypatch):
    """The last load's copy kept for this one (`filecopy.recycle`) holds its pages still: its read
    faults nothing to judge huge pages by, so it neither judges them (read as cheap, that had turned
    numpy's advice back on for the load's fresh arrays) nor takes them as cheap again."""
    from tracevis3d.io import filecopy

    p, data = big
    monkeypatch.setattr(pages, "JUDGE_BLOCK_BYTES", 1 << 20)
    judged = []
    block = tio._PageCheck.block
    monkeypatch.setattr(tio._PageCheck, "block", lambda self, *a: (judged.append(a), block(self, *a)))
    view = _read_checked(p, data, True)  # a fresh copy: judged
    assert judged
    try:
        for cheap in (False, True):
            assert filecopy.recycle(view)
            del view
            pages.set_huge_pages_cheap(cheap)
            judged.clear()
            with open(p, "rb", buffering=0) as f:
                view, total = tio._read_to_end(f, len(data) + 1)
            assert bytes(view[:total]) == data and view.obj.judge_pages is False
            assert not judged and pages.huge_pages_cheap() is cheap
    finally:
        del view
        filecopy.drop_spare()
