"""memray's live mode over a real socket (`io.memray.MemrayLiveStream`): a program run with
``python -m memray run --live-remote`` streams its records while it runs; the captures read from
what has arrived grow as it allocates, and once it ends the whole stream, saved as a file, gives
memray's own FileReader the same figures and records."""
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from memray_captures import memray_available

pytestmark = pytest.mark.skipif(not memray_available(), reason="memray is not installed (pip install memray)")

PROGRAM = textwrap.dedent('''
    import os, sys, time
    kept = []
    # at least 60 rounds; then on until the test has seen the view grow (its stop file), at most
    # 2400 rounds: the test's first captures may compile kernels for longer than 60 rounds take
    for round_ in range(2400):
        if round_ >= 60 and os.path.exists(sys.argv[1]):
            break
        block = bytearray(100_000 + 1000 * (round_ % 60))
        if round_ % 4 == 0 and len(kept) < 15:
            kept.append(block)
        time.sleep(0.05)
    print(len(kept))
''')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.timeout(300)
def test_live_captures_grow_and_end_as_memrays_own(tmp_path):
    import memray

    from tracevis3d.io import load_memory
    from tracevis3d.io.memray import MemrayLiveStream

    prog = tmp_path / "grows.py"
    prog.write_text(PROGRAM)
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "memray", "run", "-q", "--live-remote", "--live-port", str(port),
                             str(prog), str(tmp_path / "stop")], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        seen = []
        with MemrayLiveStream(port, connect_timeout=60) as stream:
            while not stream.finished:
                stream.poll(timeout=0.2)
                cap = stream.capture()
                if cap is not None and (not seen or cap.n_records > seen[-1][0]):
                    seen.append((cap.n_records, cap.peak_bytes, cap.duration_ms))
                    if len(seen) >= 4:  # grown enough: the program may end
                        (tmp_path / "stop").touch()
            final = stream.capture()
            saved = tmp_path / "live.bin"
            stream.save(saved)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-2000:]
    # the view grew while the program ran: several captures, more records and a longer clock each time
    assert len(seen) >= 3, seen
    counts = [n for n, _, _ in seen]
    assert counts == sorted(counts) and counts[-1] > counts[0]
    # (the first captures may all come before memray's first memory snapshot: their clock is still 0)
    clock = [d for _, _, d in seen]
    assert clock == sorted(clock) and clock[-1] > clock[0], ("the clock runs on", clock)
    # the ended stream is a capture: memray's own reader agrees with ours on it
    assert final.n_records >= counts[-1]
    assert "no_trailer" not in final.meta["repairs"]
    r = memray.FileReader(str(saved))
    try:
        md = r.metadata
        leaked = sum(int(x.size) for x in r.get_leaked_allocation_records(merge_threads=False))
        assert (final.peak_bytes, final.n_allocations, final.leaked_bytes) == (
            int(md.peak_memory), int(md.total_allocations), leaked)
    finally:
        r.close()
    again = load_memory(saved, reader="own", warn=False)
    assert np.array_equal(again.range_size, final.range_size) and again.stack_frames == final.stack_frames
    assert final.peak_bytes >= 15 * 100_000, "the kept blocks are held together at the high-water mark"
