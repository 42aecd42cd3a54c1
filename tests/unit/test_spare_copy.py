"""The read buffer kept from one `load` to the next (`io.filecopy.recycle`, `spare_copy`).

A load reads its file into a private anonymous mapping; once the trace is made and nothing holds
the mapping, it is kept (its pages given back lazily) and the next load reads into it instead of
a fresh mapping whose pages the system must zero first.  Checked here: a second load reuses it
and equals the first; a smaller file after a larger one, and a larger one after a smaller one,
equal loads with no spare (no byte of an earlier file shows through); a copy that anything still
views or holds is never kept; loads on several threads at once each read their own bytes; a
copy past `SPARE_MAX_BYTES` is made to the file's size and never kept.
"""
from __future__ import annotations

import json
import threading

import numpy as np
import pytest

import tracevis3d
from tracevis3d.io import filecopy

pytestmark = pytest.mark.skipif(not hasattr(filecopy.mmap, "MADV_FREE"), reason="no MADV_FREE on this system")


@pytest.fixture(autouse=True)
def no_spare():
    filecopy.drop_spare()
    yield
    filecopy.drop_spare()


def _chrome(path, n: int, name: str) -> None:
    ev = [{"ph": "X", "name": f"{name}{k % 5}", "pid": 1, "tid": 1 + k % 3, "ts": 10 * k, "dur": 5,
           "args": {"k": k}} for k in range(n)]
    path.write_text(json.dumps({"traceEvents": ev}))


def _digest(t):
    return ({k: (v.dtype.str, v.tobytes()) if isinstance(v, np.ndarray) else v for k, v in vars(t).items()
             if k != "meta"}, json.dumps(t.meta, sort_keys=True, default=str))


def _alone(path):
    """``path`` loaded with no spare copy before or after."""
    filecopy.drop_spare()
    t = tracevis3d.load(path)
    filecopy.drop_spare()
    return _digest(t)


def test_a_second_load_reads_into_the_first_ones_copy_and_equals_it(tmp_path):
    p = tmp_path / "a.json"
    _chrome(p, 3000, "f")
    first = tracevis3d.load(p)
    assert filecopy._spare is not None and filecopy._spare.keepable and filecopy._spare.path is None
    kept = id(filecopy._spare)  # (its id: a reference held here would keep the copy from being kept again)
    taken = []
    real = filecopy.spare_copy

    def spy(size):
        got = real(size)
        taken.append(id(got))
        return got

    filecopy.spare_copy = spy
    try:
        second = tracevis3d.load(p)
    finally:
        filecopy.spare_copy = real
    assert taken == [kept]
    assert id(filecopy._spare) == kept  # kept again for the next one
    assert _digest(first) == _digest(second)


def test_no_byte_of_an_earlier_file_shows_through(tmp_path):
    big, small, collapsed = tmp_path / "big.json", tmp_path / "small.json", tmp_path / "s.collapsed"
    _chrome(big, 20000, "long_function_name_")
    _chrome(small, 50, "g")
    collapsed.write_text("main;a;b 3\nmain;c 2\n")
    want = {p: _alone(p) for p in (big, small, collapsed)}
    filecopy.drop_spare()
    for p in (big, small, collapsed, big, collapsed, small):  # smaller into a larger copy, and back
        assert _digest(tracevis3d.load(p)) == want[p], p
    # a larger file than the kept copy: a fresh one, the old spare unmapped
    filecopy.drop_spare()
    tracevis3d.load(small)
    small_copy = filecopy.spare_copy(0)  # (taken, then put back as a load leaves it)
    small_len = len(small_copy)
    filecopy._spare = small_copy
    del small_copy
    assert _digest(tracevis3d.load(big)) == want[big]
    assert len(filecopy._spare) > small_len


def _read(path):
    from tracevis3d.io import _read_input

    data, _, _ = _read_input(str(path), 1 << 30)
    assert isinstance(data.obj, filecopy.FileCopy)
    return data


def test_a_copy_that_is_still_viewed_or_held_is_not_kept(tmp_path):
    p = tmp_path / "a.json"
    _chrome(p, 100, "f")
    data = _read(p)
    arr = np.frombuffer(data, np.uint8)  # a reader's array over the bytes
    assert not filecopy.recycle(data) and filecopy._spare is None
    assert arr[0] == ord("{")  # still readable: nothing given back
    del arr, data

    data = _read(p)
    second = data[1:]  # another view of the same buffer
    assert not filecopy.recycle(data) and filecopy._spare is None
    assert bytes(second[:3]) == b'"tr'
    second.release()

    data = _read(p)
    holder = [data.obj]  # the mapping itself, held elsewhere
    assert not filecopy.recycle(data) and filecopy._spare is None
    assert holder[0][:1] == b"{"

    data = _read(p)
    assert filecopy.recycle(data) and filecopy._spare is not None


def test_loads_on_several_threads_each_read_their_own_bytes(tmp_path):
    paths = []
    for k in range(4):
        p = tmp_path / f"t{k}.json"
        _chrome(p, 500 * (k + 1), f"t{k}_")
        paths.append(p)
    want = {p: _alone(p) for p in paths}
    bad = []
    start = threading.Barrier(4)

    def work(k):
        start.wait()
        for r in range(6):
            p = paths[(k + r) % 4]
            if _digest(tracevis3d.load(p)) != want[p]:
                bad.append((k, r))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    assert bad == []


def test_a_copy_past_the_spare_limit_is_made_to_size_and_not_kept(tmp_path, monkeypatch):
    p = tmp_path / "a.json"
    _chrome(p, 300, "f")
    monkeypatch.setattr(filecopy, "SPARE_MAX_BYTES", 1000)
    data = _read(p)
    assert len(data.obj) == p.stat().st_size + 1 and not data.obj.keepable
    assert not filecopy.recycle(data) and filecopy._spare is None
    t = tracevis3d.load(p)
    assert filecopy._spare is None and t.func.size == 300


def test_a_kept_copy_is_made_with_room_in_whole_huge_pages(tmp_path):
    c = filecopy.fresh_copy(3 << 20)
    assert c.keepable and len(c) % (2 << 20) == 0 and len(c) >= (3 << 20) * 9 // 8
    c.close()
