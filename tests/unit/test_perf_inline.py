"""``perf script --inline`` (issue 82 §2): a frame perf marks ``(inlined)`` is a frame of its own,
in the dso of the frame it was inlined into (the next frame line of the same address), not in a
dso named "inlined".  The recording: tests/data/formats/perf/inline (README there)."""
from __future__ import annotations

import gzip
import pathlib

from collapsed_twins import calls_of
from perf_twins import naive_perf

from tracevis3d.io import load, load_bytes

INLINE = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats" / "perf" / "inline" / "inl.perf.txt.gz"


def test_inlined_frames_of_a_recording():
    t = load(INLINE, warn=False)
    assert calls_of(t) == naive_perf(gzip.decompress(INLINE.read_bytes()).decode())
    names, files = t.function_names, t.function_files
    binary = "/tmp/perfinline/inl"
    for name in ("mix", "step", "work", "main"):
        assert files[names.index(name)] == binary, name
    assert "inlined" not in files
    # inlined with no frame of its address after it: no dso
    assert files[names.index("__libc_start_main_impl")] == ""
    # 369 of the 378 samples stand in mix (its self time), inlined into step, inlined into work, as
    # perf report --inline shows them; 5 more have the kernel on top of it
    mix = [i for i in range(len(t)) if names[t.func[i]] == "mix"]
    assert sum(float(t.self_time[i]) for i in mix) == 369.0
    assert sum(float(t.end[i] - t.start[i]) for i in mix) == 374.0
    for i in mix:
        p = int(t.parent[i])
        assert names[t.func[p]] == "step" and names[t.func[int(t.parent[p])]] == "work"
    assert t.meta["n_samples"] == 378


def test_inlined_frame_takes_the_dso_of_its_address():
    data = (b"p 1 1.0: 1 cycles:\n"
            b"\t 11b6 leaf+0x2 (inlined)\n\t 11b6 outer+0x2 (/bin/a)\n\t 22 main (/bin/a)\n"
            b"\t 33 lib_inl (inlined)\n\t 44 start (/lib/c.so)\n\n"
            b"p 1 1.1: 1 cycles:\n\t 11b6 leaf+0x6 (inlined)\n")
    t = load_bytes(data, source="x", format="perf-script", warn=False)
    # (the second sample: an inlined frame that ends the chain has no dso, a frame of its own)
    assert set(zip(t.function_names, t.function_files)) == {
        ("leaf", "/bin/a"), ("outer", "/bin/a"), ("main", "/bin/a"), ("lib_inl", ""), ("start", "/lib/c.so"),
        ("leaf", "")}
    assert calls_of(t) == {("p", ("start", "lib_inl", "main", "outer", "leaf"), 0.0, 1.0),
                           ("p", ("start", "lib_inl", "main", "outer"), 0.0, 1.0),
                           ("p", ("start", "lib_inl", "main"), 0.0, 1.0), ("p", ("start", "lib_inl"), 0.0, 1.0),
                           ("p", ("start",), 0.0, 1.0), ("p", ("leaf",), 1.0, 2.0)}


def test_a_run_of_inlined_frames_past_the_first_room():
    """300 inlined frames in a row (more than the scan keeps room for at first: `perf_scan`
    grows it to the count of lines ending in ``(inlined)``, `perf_lines.block`), a comment among
    them, then the frame they were inlined into: each takes its dso; twice, the second event
    after a comment that interrupts its chain."""
    chain = "".join(f"\t 11b6 inl{k}+0x2 (inlined)  \n" + ("# a comment\n" if k == 150 else "") for k in range(300))
    data = (f"p 1 1.0: 1 cycles:\n{chain}\t 11b6 outer+0x2 (/bin/a)\n\t 22 main (/bin/a)\n\n"
            f"p 1 1.1: 1 cycles:\n{chain}\t 11b6 outer+0x9 (/bin/a)\n\t 22 main (/bin/a)\n").encode()
    import numpy as np

    from tracevis3d.kernels.perf_lines import block

    lines = np.frombuffer((chain.replace("# a comment\n", "") + "\t 9 a foo(inlined)\n\t 9 b (x)\n").encode(), np.uint8)
    assert block(lines, 0, lines.size, np.uint64(1))[-1] == 301  # (an overcount is only room: "foo(inlined)")
    t = load_bytes(data, source="x", format="perf-script", warn=False)
    assert set(zip(t.function_names, t.function_files)) == {(f"inl{k}", "/bin/a") for k in range(300)} | {
        ("outer", "/bin/a"), ("main", "/bin/a")}
    leaf_first = tuple(f"inl{k}" for k in range(300)) + ("outer", "main")
    assert calls_of(t) == {("p", leaf_first[k:][::-1], 0.0, 2.0) for k in range(302)}
