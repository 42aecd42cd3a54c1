"""Our reader of memray's capture format (`kernels.memray_scan`, `io.memray.scan_file`) against its
twin, memray's own `memray.FileReader`, on programs recorded here with ``python -m memray run``:
every field read equals FileReader's (the records' address, size, allocator, thread, stack id,
native id and generation; the memory snapshots; the frames of every stack; thread names; peak,
count and leaks), the two `load_memory` paths give the same capture, the captures ours does not
read fall back to FileReader, and damaged input is one line naming the file and the byte."""
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from memray_captures import memray_available, record, recorded

pytestmark = pytest.mark.skipif(not memray_available(), reason="memray is not installed (pip install memray)")

#: the captures of `memray_captures.CAPTURES` these tests read
CAPTURES = ("pydoc", "json", "json-raw", "pool")

FORK_PROGRAM = textwrap.dedent('''
    import os
    kept = [bytes(100 + i) for i in range(2000)]
    pid = os.fork()
    if pid == 0:
        child = [str(i) * 50 for i in range(5000)]
        os._exit(0)
    os.waitpid(pid, 0)
    print(len(kept))
''')


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    return recorded(tmp_path_factory, CAPTURES)


@pytest.fixture(scope="module")
def fork_captures(tmp_path_factory):
    """The parent's and the child's capture of a program that forks (``--follow-fork``)."""
    folder = tmp_path_factory.mktemp("fork")
    prog = folder / "forks.py"
    prog.write_text(FORK_PROGRAM)
    out = folder / "fork.bin"
    r = subprocess.run([sys.executable, "-m", "memray", "run", "-q", "-f", "--follow-fork", "-o", str(out), str(prog)],
                       cwd=folder, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    children = sorted(p for p in folder.iterdir() if p.name.startswith("fork.bin."))
    assert children, "memray --follow-fork wrote no child capture"
    return str(out), str(children[0])


def _twin(path):
    """Everything our reader reads, as memray's FileReader gives it."""
    import memray

    r = memray.FileReader(path)
    try:
        md = r.metadata
        recs = list(r.get_allocation_records())
        rows = np.array([(x.tid, x.address, x.size, x.allocator, x.stack_id, x.native_stack_id,
                          x.native_segment_generation) for x in recs], np.uint64).reshape(-1, 7)
        stacks = {}
        for x in recs:
            if x.stack_id not in stacks and x.allocator not in (1, 5, 15):
                stacks[x.stack_id] = (x.tid, x.stack_trace())
        names = {x.tid: x.thread_name for x in recs}  # the names the reader holds once it has read them all
        leaked = sum(int(x.size) for x in r.get_leaked_allocation_records(merge_threads=False))
        snaps = [(s.time - md.start_time.timestamp() * 1000, s.rss, s.heap) for s in r.get_memory_snapshots()]
        return {"rows": rows, "stacks": stacks, "names": names, "snaps": snaps, "peak": int(md.peak_memory),
                "total": int(md.total_allocations), "leaked": leaked, "main_tid": int(md.main_thread_id)}
    finally:
        r.close()


def _ours(path):
    from tracevis3d.io.memray import scan_file

    raw = scan_file(path)
    _, _, _, trailer, allocs, memory, threads, frames, nodes, codes, _ = raw["scan"]
    th_tid = threads[0]
    rows = np.stack([th_tid[allocs[3]], allocs[0], allocs[1], allocs[2].astype(np.uint64),
                     allocs[4].astype(np.uint64), allocs[5], allocs[6].astype(np.uint64)], 1)
    return raw, rows, trailer


@pytest.mark.timeout(900)
@pytest.mark.parametrize("key", list(CAPTURES) + ["fork-parent", "fork-child"])
def test_every_field_equals_filereaders(captures, fork_captures, key):
    from tracevis3d.io import load_memory

    path = {"fork-parent": fork_captures[0], "fork-child": fork_captures[1]}.get(key) or captures[key]
    want = _twin(path)
    raw, rows, trailer = _ours(path)
    assert trailer == (key != "fork-child"), "a child leaving by os._exit does not finish its capture"
    assert rows.shape == want["rows"].shape and rows.shape[0] > (10 if key == "fork-child" else 1000)
    bad = np.flatnonzero((rows != want["rows"]).any(1))
    assert bad.size == 0, f"record {bad[:1]}: ours {rows[bad[:1]]} memray {want['rows'][bad[:1]]}"

    cap = load_memory(path, reader="own", warn=False)
    assert cap.meta["reader"].startswith("tracevis3d")
    assert ("no_trailer" in cap.meta["repairs"]) == (not trailer)
    assert (cap.peak_bytes, cap.n_allocations, cap.leaked_bytes) == (want["peak"], want["total"], want["leaked"])
    got_snaps = list(zip(cap.snap_ms.tolist(), cap.snap_rss.tolist(), cap.snap_heap.tolist()))
    assert got_snaps == [(float(t), int(r), int(h)) for t, r, h in want["snaps"]]
    # the frames of every stack: memray's stack_trace() of its first allocation
    first = {}
    for i, rec in enumerate(cap.range_record.tolist()):
        first.setdefault(int(rows[rec, 4]), i)
    assert set(first) == set(want["stacks"])
    for sid, i in first.items():
        frames = [(cap.frame_function[f], cap.frame_file[f], int(cap.frame_line[f]))
                  for f in cap.stack_frames[int(cap.range_stack[i])]]
        assert frames == [(f, p, ln) for f, p, ln in want["stacks"][sid][1]], sid
    # thread names
    for t, name in want["names"].items():
        k = int(np.flatnonzero(cap.thread_ids == t)[0])
        assert cap.thread_names[k] == (name or ("main thread" if t == want["main_tid"] else f"thread {t}"))


@pytest.mark.timeout(900)
@pytest.mark.parametrize("key", ["pydoc", "pool", "json-raw"])
def test_both_paths_give_the_same_capture(captures, key):
    from tracevis3d.io import load_memory

    a = load_memory(captures[key], reader="own", warn=False)
    b = load_memory(captures[key], reader="memray")
    assert b.meta["reader"].startswith("memray.FileReader")
    for name in ("peak_bytes", "n_allocations", "leaked_bytes", "n_records", "stack_frames", "frame_function",
                 "frame_file", "site_function", "site_file", "command_line", "pid", "python_allocator",
                 "trace_python_allocators", "duration_ms", "start_epoch_ms", "clock"):
        assert getattr(a, name) == getattr(b, name), name
    for name in ("range_address", "range_size", "range_leaked", "range_stack", "range_thread", "range_allocator",
                 "range_record", "range_freed_by", "stack_site", "frame_line", "site_line", "site_bytes",
                 "site_count", "thread_ids", "snap_ms", "snap_rss", "snap_heap"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    # the clock: ours knows where each snapshot is; memray's path finds it by the heap: both on one clock
    assert np.all(np.diff(a.range_start) >= -1e-9) and a.range_end.max() <= a.duration_ms + 1e-6


@pytest.mark.timeout(600)
def test_captures_ours_does_not_read_go_through_filereader(tmp_path):
    from tracevis3d.errors import TraceFormatError
    from tracevis3d.io import load_memory

    native = record("json", str(tmp_path / "native"), ["--native"])
    cap = load_memory(native)
    assert cap.meta["reader"].startswith("memray.FileReader") and cap.native
    with pytest.raises(TraceFormatError, match=r"--native.*reader='memray'") as e:
        load_memory(native, reader="own")
    assert "\n" not in str(e.value)
    agg = record("json", str(tmp_path / "aggregate"), ["--aggregate"])
    with pytest.raises(TraceFormatError, match=r"aggregate") as e:
        load_memory(agg, reader="own")
    assert "\n" not in str(e.value) and "reader='memray'" in str(e.value)
    with pytest.raises(TraceFormatError, match=r"aggregate"):
        load_memory(agg)  # memray's path: an aggregated capture holds no records


# ----------------------------------------------------------------------------- bad input
def _check_one_line(path, reader="own"):
    from tracevis3d.errors import TraceFormatError
    from tracevis3d.io import load_memory

    t = time.perf_counter()
    try:
        load_memory(path, reader=reader, warn=False)
    except TraceFormatError as e:
        msg = str(e)
        assert "\n" not in msg and msg.startswith(f"{path}: "), msg
        assert "byte " in msg, msg
        return msg
    finally:
        assert time.perf_counter() - t < 5.0
    return None


@pytest.mark.timeout(600)
def test_cut_and_damaged_captures_are_one_line_naming_the_byte(captures, tmp_path):
    raw = open(captures["json-raw"], "rb").read().rstrip(b"\0")
    compressed = open(captures["json"], "rb").read()
    rng = np.random.default_rng(11)
    p = tmp_path / "bad.bin"
    # cut anywhere: always refused (the header's record count, or a record cut short)
    for at in sorted(set(rng.integers(1, len(raw) - 1, 60).tolist()) | {8, 20, 48, 60, len(raw) - 1}):
        p.write_bytes(raw[:at])
        assert _check_one_line(p) is not None, at
    for at in rng.integers(1, len(compressed) - 1, 20).tolist():
        p.write_bytes(compressed[:at])
        msg = _check_one_line(p)
        assert msg is not None, at
    # damaged bytes: a one-line error or a capture, never another exception or a hang
    refused = 0
    for _ in range(60):
        data = bytearray(raw)
        for at in rng.integers(200, len(raw), 3).tolist():
            data[at] = int(rng.integers(0, 256))
        p.write_bytes(bytes(data))
        refused += _check_one_line(p) is not None
    assert refused > 0
    # another header version: refused by ours with the way out
    p.write_bytes(raw[:7] + bytes([raw[7] + 1]) + raw[8:])
    assert "reader='memray'" in _check_one_line(p)


@pytest.mark.timeout(300)
def test_hostile_records_stay_bounded(captures, tmp_path):
    """A valid header followed by records built to hurt: deep pushes, pops of an empty stack,
    a huge segment count, overlong varints, names without their end."""
    from tracevis3d.io.memray_own import _header

    raw = open(captures["json-raw"], "rb").read()
    _, start = _header("x", raw, str)
    head = raw[:start]
    switch = bytes([12]) + (1).to_bytes(8, "little")
    bodies = {
        "deep": switch + bytes([0x40, 1, 0]) * 300_000,
        "pop empty": switch + bytes([0x10]),
        "segments": switch + bytes([7]) + b"lib\0" + b"\xff" * 9 + b"\x01" + bytes(8),
        "varint": switch + bytes([0x82]) + b"\xff" * 20,
        "no name end": switch + bytes([10]) + b"a" * 10_000,
        "no switch": bytes([0x82, 5]),
        "unknown": switch + bytes([3]),
    }
    p = tmp_path / "hostile.bin"
    for name, body in bodies.items():
        p.write_bytes(head + body)
        msg = _check_one_line(p)
        assert msg is not None, name
