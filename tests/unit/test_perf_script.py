"""``perf script`` text (`tracevis3d.io.perf_script`, `tracevis3d.kernels.perf_scan.perf_scan`)
against a naive reading in plain Python written from speedscope's ``linux-tools-perf.ts``
(events split at blank lines, the event line and frame lines read by regular expressions),
with this reader's choices: one lane per (comm, pid, tid), x = samples, the first event type."""
from __future__ import annotations

import gzip
import pathlib
import re
import shutil
import subprocess

import pytest

from collapsed_twins import calls_of, left_heavy

from tracevis3d.io import load, load_bytes
from tracevis3d.model import TraceFormatError

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats"
SAMPLES = DATA / "speedscope-samples" / "linux-perf"
RECORDED = DATA / "perf"
_TIME = re.compile(r"^\d+\.\d+:$")
_IDS = re.compile(r"^(\d+)(?:/(\d+))?$")


def _frame(line: str):
    """(symbol, dso) of a frame line, or None."""
    m = re.match(r"^\s*[0-9a-fA-F]+\s+(.*)$", line.rstrip())
    if not m or not line[:1].isspace():
        return None
    rest = m.group(1)
    dso = ""
    if rest.endswith(")"):
        depth = 0
        for k in range(len(rest) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(rest[k], 0)
            if depth == 0:
                break
        if depth == 0 and (k == 0 or rest[k - 1].isspace()):
            dso, rest = rest[k + 1:-1], rest[:k].rstrip()
    rest = re.sub(r"\+0x[0-9a-fA-F]+$", "", rest)
    return rest, dso


def naive_perf(text: str, event: str | None = None) -> set:
    events = []
    cur = None
    for line in text.split("\n"):
        if line.startswith("#"):
            continue
        if not line.strip():
            cur = None
            continue
        if line[0].isspace():
            if cur is not None:
                fr = _frame(line)
                if fr:
                    cur["stack"].append(fr)
            continue
        toks = line.split()
        t = next((k for k in range(1, len(toks)) if _TIME.match(toks[k])), None)
        cur = {"stack": [], "ok": t is not None}
        events.append(cur)
        if t is None:
            continue
        k = t - 1
        if toks[k].startswith("[") and toks[k].endswith("]"):
            k -= 1
        m = _IDS.match(toks[k]) if k >= 1 else None
        if m:
            pid, tid = (int(m.group(1)), int(m.group(2))) if m.group(2) else (-1, int(m.group(1)))
            comm = line[: line.index(toks[k], len(toks[0]))].strip() if k > 1 else toks[0]
        else:
            pid, tid, comm = -1, -1, line[: line.index(toks[t])].strip()
        cur["thread"] = (comm, pid, tid)
        cur["event"] = next((x[:-1] for x in toks[t + 1:] if x.endswith(":")), "")
    events = [e for e in events if e["ok"]]
    chosen = event if event is not None else events[0]["event"]
    lanes: dict = {}
    order: dict = {}
    for e in events:
        if e["event"] != chosen:
            continue
        names = tuple(f"??? ({d})" if s == "[unknown]" else s for s, d in reversed(e["stack"]))
        for s, d in e["stack"]:  # frames are numbered as the file lists them, leaf first
            order.setdefault(f"??? ({d})" if s == "[unknown]" else s, len(order))
        lanes.setdefault(e["thread"], []).append((names, 1.0))
    out = set()
    for (comm, _, _), stacks in lanes.items():
        out |= {(comm, p, s, en) for p, s, en in left_heavy(stacks, order)}
    return out


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


def test_real_recording_here(tmp_path):
    """perf record -g of a C program built here, when perf can record in this container."""
    if not (shutil.which("perf") and shutil.which("gcc")):
        pytest.skip("perf or gcc is not installed")
    exe = tmp_path / "prog"
    subprocess.run(["gcc", "-O1", "-g", "-fno-omit-frame-pointer", "-pthread", "-o", str(exe),
                    str(RECORDED / "prog.c")], check=True, capture_output=True)
    rec = subprocess.run(["perf", "record", "-g", "-F", "500", "-o", str(tmp_path / "p.data"), "--", str(exe)],
                         capture_output=True, text=True)
    if rec.returncode != 0:
        pytest.skip(f"perf record cannot record here (perf_event_paranoid?): {rec.stderr.strip()[-200:]}")
    out = subprocess.run(["perf", "script", "-i", str(tmp_path / "p.data")], capture_output=True, text=True)
    if not out.stdout.strip():
        pytest.skip("perf recorded no samples here")
    (tmp_path / "p.txt").write_text(out.stdout)
    t = load(tmp_path / "p.txt", warn=False)
    assert calls_of(t) == naive_perf(out.stdout)
    assert "leaf_work" in t.function_names
