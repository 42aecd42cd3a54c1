"""The names under the lanes read on a slide: the async lanes of a real Chromium trace (10
processes, async slices by category and process) and counter tracks are named at 14 px or more
on a 1920×1080 Workbench render (`tracevis3d.blender.figure_report`), not at the 0.8 or 0.85
of the label size they were drawn at (12.6 px and 13.6 px at the default 16 px: the async lane
names of tests/data/formats/recorded/chromium/chromium_json.json.gz measured 12.5-12.7 px).
"""
from __future__ import annotations

import pathlib

import pytest

bpy = pytest.importorskip("bpy")
pytestmark = [pytest.mark.blender, pytest.mark.slow]

import tracevis3d  # noqa: E402
from icicle_render import render_icicle  # noqa: E402
from tracevis3d.blender.figure_report import READABLE_PX  # noqa: E402

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats"
CHROMIUM = DATA / "recorded" / "chromium" / "chromium_json.json.gz"
RES = (1920, 1080)


def _icicle(trace, out, **params) -> tuple:
    """`icicle_render.render_icicle`: (layout meta, `view_measures`, label boxes)."""
    return render_icicle(trace, out, RES, **params)


def _inside(b) -> bool:
    return b[2] >= -1 and b[3] >= -1 and b[4] <= RES[0] + 1 and b[5] <= RES[1] + 1


@pytest.mark.timeout(600)
def test_async_lane_names_of_a_real_chromium_trace_are_readable(tmp_path):
    trace = tracevis3d.load(CHROMIUM)
    assert trace.async_start.size > 100
    meta, rep, boxes = _icicle(trace, tmp_path / "chromium.png")
    lanes = [b for b in boxes if b[0] == "async" and b[1].startswith("async · ")]
    assert len(lanes) >= 2, [b[1] for b in boxes if b[0] == "async"]
    small = [(b[1], round(b[6], 2)) for b in boxes if b[0] == "async" and b[6] < READABLE_PX]
    assert not small, small
    assert all(_inside(b) for b in lanes), lanes
    # the thread lanes' names stay at the label size, larger than the async lanes' names
    threads = [b[6] for b in boxes if b[0] == "lane"]
    assert threads and min(threads) >= READABLE_PX and max(threads) >= max(b[6] for b in lanes) - 0.5
    assert rep["small_names"] == 0 and rep["max_margin"] <= 0.08, rep


@pytest.mark.timeout(600)
def test_counter_track_names_are_readable(tmp_path):
    """Counter tracks (two counters, three series: `side_traces.with_side_tracks`) under the
    lanes of a real Node profile: every track name and range is at least 14 px."""
    from side_traces import with_side_tracks

    trace = with_side_tracks(tracevis3d.load(DATA / "node" / "workload.cpuprofile.gz"))
    t0, t1 = float(trace.start.min()), float(trace.end.max())
    trace.counter_ts = t0 + (t1 - t0) * trace.counter_ts / 10.0  # spread over the profile
    trace.async_start = t0 + (t1 - t0) * trace.async_start / 10.0
    trace.async_end = t0 + (t1 - t0) * trace.async_end / 10.0
    trace.check()
    meta, rep, boxes = _icicle(trace, tmp_path / "counters.png", inset="none")
    tracks = [b for b in boxes if b[0] == "counter"]
    assert len(tracks) >= 2, sorted({b[0] for b in boxes})
    small = [(b[0], b[1], round(b[6], 2)) for b in boxes if b[0] in ("counter", "async") and b[6] < READABLE_PX]
    assert not small, small
    assert all(_inside(b) for b in tracks), tracks
