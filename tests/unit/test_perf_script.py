"""``perf script`` text (`tracevis3d.io.perf_script`, `tracevis3d.kernels.perf_scan.perf_scan`)
against a naive reading in plain Python written from speedscope's ``linux-tools-perf.ts``
(events split at blank lines, the event line and frame lines read by regular expressions),
with this reader's choices: one lane per (comm, pid, tid), x = samples, the first event type
(the twin: tests/support/perf_twins.py; a recording made now by perf: tests/realtraces/
test_recorded_perf.py)."""
from __future__ import annotations

import gzip
import pathlib

import pytest

from collapsed_twins import calls_of
from perf_twins import naive_perf

from tracevis3d.io import load, load_bytes
from tracevis3d.model import TraceFormatError

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats"
SAMPLES = DATA / "speedscope-samples" / "linux-perf"
RECORDED = DATA / "perf"
FILES = sorted(SAMPLES.glob("*.txt*")) + sorted(RECORDED.glob("*.perf.txt"))


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_against_naive(path):
    t = load(path, warn=False)
    assert t.meta["format"] == "perf-script" and t.meta["x_unit"] == "samples"
    raw = path.read_bytes()
    assert calls_of(t) == naive_perf((gzip.decompress(raw) if path.suffix == ".gz" else raw).decode())


def test_lanes_and_events_of_a_recording():
    t = load(RECORDED / "prog-pid-header.perf.txt", warn=False)
    lanes = sorted(zip(t.thread_pid.tolist(), t.thread_tid.tolist()))
    pid = min(p for p, _ in lanes)
    assert len(lanes) == 4 and sum(1 for p, _ in lanes if p == pid) == 3  # the process's 3 threads and the child
    assert set(t.thread_names) == {"prog"} and t.meta["n_samples"] == 110
    t = load(RECORDED / "prog-two-events.perf.txt", warn=False)
    assert t.meta["perf_event"] == "page-faults" and t.meta["perf_events"] == {"page-faults": 10, "cpu-clock": 51}
    t2 = load(RECORDED / "prog-two-events.perf.txt", warn=False, event="cpu-clock")
    assert t2.meta["n_samples"] == 51
    assert calls_of(t2) == naive_perf((RECORDED / "prog-two-events.perf.txt").read_text(), "cpu-clock")
    with pytest.raises(TraceFormatError, match="no 'cycles' events; its events: page-faults"):
        load(RECORDED / "prog-two-events.perf.txt", event="cycles")


def test_unknown_frames_are_named_by_dso():
    t = load(SAMPLES / "simple.linux-perf.txt", warn=False)
    assert "??? ([unknown])" in t.function_names
    i = t.function_names.index("__libc_start_main")
    assert t.function_files[i] == "/lib/x86_64-linux-gnu/libc-2.27.so"


def test_rust_symbols_kept_as_written():
    t = load(SAMPLES / "rust-mangled.linux-perf.txt", warn=False)
    assert any(n.startswith("_RNv") for n in t.function_names)
    assert not any("+0x" in n for n in t.function_names)


def test_event_line_frame_without_callchain():
    data = b"prog 7 1.5: 1 cycles:  11ad leaf+0x3 (/bin/prog)\n\nprog 7 1.6: 1 cycles:  11ad leaf+0x9 (/bin/prog)\n"
    t = load_bytes(data, source="x", format="perf-script", warn=False)
    assert calls_of(t) == {("prog", ("leaf",), 0.0, 2.0)}


def test_comm_with_spaces_and_cpu():
    data = (b"V8 WorkerThread 24636/25607 [000] 94564.109216: cycles:\n\t 1 f (/x)\n\t 2 main (/x)\n\n"
            b"V8 WorkerThread 24636/25607 [001] 94564.109218: cycles:\n\t 1 g (/x)\n\t 2 main (/x)\n")
    t = load_bytes(data, source="x", format="perf-script", warn=False)
    assert t.thread_names == ["V8 WorkerThread"] and int(t.thread_pid[0]) == 24636 and int(t.thread_tid[0]) == 25607
    assert calls_of(t) == naive_perf(data.decode())


def test_events_past_every_first_capacity():
    """A file that outgrows every table the scan starts with (`perf_scan._perf_run` stops before
    an event that needs more room, its caller grows them, the event is read again): 150 threads,
    300 event names, 5,000 distinct frames with long names, 2,000 samples, a 700-deep stack,
    comments among the frame lines, against the naive twin."""
    import random

    rng = random.Random(11)
    out = []
    for ev in range(2000):
        th = rng.randrange(150)
        name = "cycles" if ev == 0 or rng.random() < 0.7 else f"ev{rng.randrange(300)}"
        out.append(f"comm {th} {th + 1}/{th + 2} [00{ev % 4}] {ev}.{ev % 1000:06d}: 1000 {name}: ")
        depth = 700 if ev == 1500 else rng.choice([1, 3, 8, 30])
        base = rng.randrange(5000)
        for k in range(depth):
            if rng.random() < 0.01:
                out.append("# a comment among the frames")
            sym = (base + k * 7 + (ev if k == 0 else 0)) % 5000  # (its dso one of its own: the twin keys by name)
            out.append(f"\t    {k * 16 + 0x1000:x} {'f' * 40}{sym}+0x{k % 97:x} (/usr/lib/lib{sym % 9}.so)")
        out.append("")
    text = "\n".join(out)
    t = load_bytes(text.encode(), source="x", format="perf-script", warn=False)
    assert len(t.thread_names) > 140 and len(t.meta["perf_events"]) == 256  # (the names told apart)
    assert calls_of(t) == naive_perf(text)
