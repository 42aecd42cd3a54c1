"""A Chromium trace's async lanes are named by the process as its thread lanes name it
("async · navigation (Renderer #2)"), not by a pid the figure shows nowhere else ("(pid
15990)"): tests/data/formats/recorded/chromium/chromium_json.json.gz, 10 processes."""
from pathlib import Path

import pytest

import tracevis3d
from tracevis3d.layout import IcicleParams, icicle_layout

CHROMIUM = Path(__file__).resolve().parents[1] / "data" / "formats" / "recorded" / "chromium" / "chromium_json.json.gz"


@pytest.mark.timeout(300)
def test_async_lanes_name_their_process_as_the_thread_lanes_do():
    trace = tracevis3d.load(CHROMIUM)
    spec = icicle_layout(trace, IcicleParams(resolution=(1920, 1080)))
    lanes = spec.meta["async_lanes"]
    assert len(lanes) >= 2, lanes
    counts = trace.thread_name_counts()
    processes = {trace.thread_label(t, 2, counts).split(": ", 1)[0] for t in range(trace.n_threads)}
    for lane in lanes:
        proc = lane.rsplit(" (", 1)[1].rstrip(")")
        assert proc in processes and not proc.startswith("pid "), (lane, sorted(processes))
    assert any(lane.endswith("(Browser)") for lane in lanes) and any("(Renderer #" in lane for lane in lanes), lanes
