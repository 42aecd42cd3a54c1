"""The x axis of merged and sampled traces (issue 67, parts 3, 4, 6): `layout.annotate.XUnit`
(ticks, values and titles in a merged trace's measure instead of time), the sampled trace's
interval in titles, ``--merge`` (one parameter, `tracevis3d.merge`), the thread view's refusal
of merged stacks and its note on a trace without waits, ``tracevis3d formats``, the panel's
file filter, and the legend's place in a corner (never between lanes).

Traces: a real V8 profile (tests/data/formats/node/csv-summary.cpuprofile, Node 20) loaded
as it is (sampled), merged by `tracevis3d.merge` (time summed), and its samples merged in
samples through `io.stacks.merged_trace` (the builder every aggregated format uses)."""
from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout

import numpy as np
import pytest

import tracevis3d
from tracevis3d.io.stacks import is_merged, merge_trace
from tracevis3d.layout.annotate import (TIME, XUnit, corner_place, fmt_time, nice_ticks, occupancy_grid,
                                        sampling_interval, tick_texts, trace_kind_text, trace_title, x_unit_of)

from merged_profiles import CPUPROFILE, profile_in_samples


# ----------------------------------------------------------------------------- traces


@pytest.fixture(scope="module")
def sampled():
    return tracevis3d.load(CPUPROFILE)


@pytest.fixture(scope="module")
def in_samples():
    return profile_in_samples()


# ----------------------------------------------------------------------------- XUnit
def test_time_stays_the_default_and_writes_what_it_wrote():
    assert not TIME.merged and TIME.is_time
    for us in (0.7, 950.0, 1234.5, 8.2e6):
        assert TIME.fmt(us) == fmt_time(us)
    for span in (0.8, 30_000.0, 2.5e6, 1e300):
        assert TIME.tick_texts(*TIME.nice_ticks(span)) == tick_texts(*nice_ticks(span))
    assert TIME.window_text(5e5, 9e5) == "400 ms window from 500 ms"
    assert TIME.range_text(6940.0, 7280.0) == "6.94 – 7.28 ms"


def test_a_count_is_written_with_si_prefixes_and_its_unit():
    u = XUnit("samples")
    assert u.merged and not u.is_time and u.quantity == "samples"
    texts = u.tick_texts(*u.nice_ticks(11_000.0))
    assert texts[:3] == ["0", "2k samples", "4k samples"] and texts[-1] == "10k samples"
    assert u.fmt(734) == "734 samples" and u.fmt(12_345) == "12.3k samples" and u.fmt(2.5e6) == "2.5M samples"
    assert u.total_text(12_345) == "12,345 samples" and u.total_text(1) == "1 sample"
    assert u.total_text(3.2e9) == "3.2G samples"  # past 10^7: 3 digits
    assert u.fmt(999_600) == "1M samples" and u.fmt(999.6) == "1k samples" and u.fmt(1) == "1 sample"  # no "1e+03"
    ir = XUnit("Ir")
    assert ir.fmt(1.5e6) == "1.5M Ir" and ir.tick_texts(*ir.nice_ticks(3e9))[1] == "0.5G Ir"
    assert ir.range_text(2000.0, 4100.0) == "2k – 4.1k Ir" and ir.window_text(2e3, 4e3) == "window 2k – 4k Ir"
    # one decimal where the step needs it, the same prefix on every tick
    small = u.tick_texts(*u.nice_ticks(1500.0))
    assert small[1:3] == ["0.5k samples", "1.0k samples"] and {t.split()[-1] for t in small[1:]} == {"samples"}


def test_bytes_and_time_measures():
    b = XUnit("bytes")
    assert b.quantity == "bytes" and b.fmt(1.2e6) == "1.2 MB" and b.fmt(512) == "512 B"
    assert b.tick_texts(*b.nice_ticks(2.2e6))[:3] == ["0", "0.5 MB", "1.0 MB"]
    us = XUnit("µs")  # a merged timed trace: time summed, written as time
    assert us.merged and us.is_time and us.quantity == "time" and us.fmt(1500.0) == "1.5 ms"
    assert us.tick_texts(*us.nice_ticks(30_000.0))[:3] == ["0", "5 ms", "10 ms"]
    ns = XUnit("nanoseconds")  # pprof's cpu profile: values in ns
    assert ns.fmt(3e6) == "3 ms" and ns.tick_texts(*ns.nice_ticks(3e9))[-1].endswith(" s")
    ticks = ns.nice_ticks(3e9)[0]
    assert ticks[-1] <= 3e9 * (1 + 1e-9) and ticks[1] == 5e8  # ticks stay in the trace's unit


# ----------------------------------------------------------------------------- titles
def test_a_merged_trace_says_so_and_gives_its_measure(in_samples):
    from tracevis3d.layout.icicle import IcicleParams, icicle_layout

    assert is_merged(in_samples) and x_unit_of(in_samples) == XUnit("samples")
    n = len(json.loads(CPUPROFILE.read_text())["samples"])
    spec = icicle_layout(in_samples, IcicleParams(resolution=(960, 540), inset="none"))
    title = spec.meta["title"]
    assert "merged stacks (left heavy)" in title and f"{n:,} samples" in title and "call paths" in title
    assert not re.search(r"\d (ms|µs|s)\b", title), title
    axis = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "axis"]
    assert axis[0] == "0" and len(axis) >= 4 and all(t.endswith(" samples") for t in axis[1:]), axis
    legend = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "legend"]
    assert "depth into the picture: self samples (deepest" in " ".join(legend), legend  # a row may wrap
    assert spec.meta["x_unit"] == "samples"
    windowed = icicle_layout(in_samples, IcicleParams(resolution=(960, 540), inset="none", time_window=(100.0, 300.0)))
    assert "window 100 – 300 samples" in windowed.meta["title"]


def test_the_cone_and_extravis_give_the_measure(in_samples):
    from tracevis3d.layout.cone import ConeParams, cone_layout
    from tracevis3d.layout.extravis import extravis_layout
    from tracevis3d.params.extravis import ExtravisParams

    cone = cone_layout(in_samples, ConeParams(resolution=(960, 540)))
    assert cone.meta["title"].endswith("call paths · merged stacks (left heavy)") and cone.meta["x_unit"] == "samples"
    legend = " ".join(t for t, k in zip(cone.labels.texts, cone.labels.kind) if k == "legend")
    n = len(json.loads(CPUPROFILE.read_text())["samples"])
    assert f"sphere area: inclusive samples (root {n} samples)" in legend, legend
    ev = extravis_layout(in_samples, ExtravisParams(resolution=(960, 540)))
    assert "call paths" in ev.meta["title"] and "merged stacks (left heavy)" in ev.meta["title"]
    marks = [t for t, k in zip(ev.labels.texts, ev.labels.kind) if k == "axis"]
    assert marks[0] == "0" and all(t.endswith(" samples") for t in marks[1:]), marks


def test_a_sampled_trace_states_its_interval(sampled):
    step, whole = sampling_interval(sampled)
    assert whole and 900.0 < step < 1300.0  # node's default: about 1 ms
    assert trace_kind_text(sampled) == f"sampled every {fmt_time(step)}"
    from tracevis3d.layout.icicle import IcicleParams
    from tracevis3d.layout.select import select_calls

    title = trace_title(sampled, select_calls(sampled, IcicleParams()), IcicleParams())
    assert title.endswith(f" · sampled every {fmt_time(step)}") and " ms · " in title


def test_merge_is_left_heavy_kept_per_trace_and_drawn_with_its_note(sampled):
    from tracevis3d.layout.icicle import IcicleParams, icicle_layout

    m = tracevis3d.merge(sampled)
    assert m is tracevis3d.merge(sampled)  # kept while the trace lives
    assert tracevis3d.merge(m) is m and is_merged(m) and m.meta["x_unit"] == "µs"
    roots = m.depth == 0
    assert np.isclose((m.end - m.start)[roots].sum(), np.maximum(sampled.self_time, 0).sum())
    spec = icicle_layout(sampled, IcicleParams(merge=True, resolution=(960, 540), inset="none"))
    assert "merged stacks (left heavy)" in spec.meta["title"] and spec.meta["x_unit"] == "µs"
    assert spec.meta["n_calls"] == len(m) < len(sampled)
    assert IcicleParams.from_dict(IcicleParams(merge=True).to_dict()).merge  # a saved session keeps it
    with pytest.raises(TypeError):
        tracevis3d.merge("trace.json")


def test_show_call_reports_the_measure(in_samples):
    pytest.importorskip("bpy")
    from tracevis3d.blender.pick import describe_call

    root = int(np.flatnonzero(in_samples.depth == 0)[0])
    d = describe_call(in_samples, root)
    assert "duration" not in d and "start" not in d
    assert d["inclusive"].endswith(" samples") and d["self"].endswith(" samples") and d["from"] == "0 samples"


# ----------------------------------------------------------------------------- views that refuse
def test_the_thread_view_refuses_merged_stacks(in_samples, sampled):
    from tracevis3d.layout.threads import threads_layout

    for tr in (in_samples, merge_trace(sampled)):
        with pytest.raises(ValueError) as e:
            threads_layout(tr)
        msg = str(e.value)
        assert "\n" not in msg and "needs calls on a clock" in msg and "render-icicle" in msg


def test_the_thread_view_of_a_trace_without_waits_says_so(sampled):
    from tracevis3d.layout.threads import NO_WAITS_MEANS, ThreadsParams, threads_layout

    spec = threads_layout(sampled, ThreadsParams(resolution=(960, 540)))
    assert spec.meta["no_waits"] == "no waits: no wait or release calls"
    assert "no hand-offs or flows" in spec.meta["title"] and "sampled every" in spec.meta["title"]
    legend = [t for t, k in zip(spec.labels.texts, spec.labels.kind) if k == "legend"]
    assert legend[0].startswith("no waits") and NO_WAITS_MEANS.split(":")[0] in " ".join(legend)


def test_animations_over_time_refuse_a_merged_figure():
    pytest.importorskip("bpy")
    import bpy

    from tracevis3d.blender.animate import animate_scene

    for kind in ("growth", "handoffs"):
        with pytest.raises(ValueError, match="merged stacks"):
            animate_scene(bpy.context.scene, kind, meta={"layout": "icicle", "x_unit": "samples", "t0": 0, "t1": 1})


# ----------------------------------------------------------------------------- the legend's place
def test_a_legend_goes_to_a_free_corner_never_between_lanes():
    cell, res = 8.0, (800, 400)
    lanes = occupancy_grid(res, cell, rects=[(0, 0, 800, 100), (0, 300, 800, 400)])  # busy top and bottom lanes
    room, size = (0, 0, 800, 400), (200, 80)
    from tracevis3d.layout.annotate import free_corner

    assert free_corner(lanes, cell, room, size, 6.0) is not None  # the old search: the gap between the lanes
    assert corner_place(lanes, cell, room, size, 6.0) is None
    right_free = occupancy_grid(res, cell, rects=[(0, 0, 500, 100), (0, 300, 800, 400)])
    x, y = corner_place(right_free, cell, room, size, 6.0)
    assert x + size[0] >= 800 - 0.04 * 800 - 12 and y <= 0.04 * 400 + 12  # the top right corner


# ----------------------------------------------------------------------------- command line, panel
def _main(argv) -> tuple:
    from tracevis3d.cli import main

    out = io.StringIO()
    with redirect_stdout(out):
        rc = main(argv)
    return rc, out.getvalue()


def test_formats_command_prints_the_format_table():
    from tracevis3d.io.formats import describe_formats

    rc, out = _main(["formats"])
    assert rc == 0 and out.strip() == describe_formats().strip() and "collapsed" in out and "measure" in out


def test_merge_is_one_declaration_on_the_commands_that_draw_merged_stacks(capsys):
    from tracevis3d.cli import make_parser
    from tracevis3d.params.icicle import ICICLE
    from tracevis3d.params.shared import MERGE

    assert ICICLE["merge"] is MERGE
    p = make_parser()
    assert p.parse_args(["render-icicle", "t.json", "-o", "f.png", "--merge"]).merge is True
    assert p.parse_args(["render-compare", "a.json", "b.json", "-o", "f.png", "--merge"]).merge is True
    assert p.parse_args(["render-icicle", "t.json", "-o", "f.png"]).merge is False
    for cmd in ("render-threads", "render-cone"):  # a thread view of merged stacks is refused; a cone merges anyway
        assert _main([cmd, "t.json", "-o", "/tmp/f.png", "--merge"])[0] == 2
    assert "--merge" in capsys.readouterr().err


def test_the_panel_filter_is_the_format_tables():
    pytest.importorskip("bpy")
    import importlib

    from addon_loader import load_addon
    from tracevis3d.io.formats import file_filter

    load_addon()
    ops = importlib.import_module("tv3d_addon.ui.operators.trace_ops")
    assert ops.TRACE_FILTER == file_filter() and "*.cpuprofile" in ops.TRACE_FILTER and "*.pb.gz" in ops.TRACE_FILTER


def test_a_comparison_of_merged_stacks_says_so(in_samples, sampled):
    """The comparison of two merged traces (`render-compare --merge`, or two pprof/collapsed files)
    says "merged stacks" and counts call paths in its title, like the other views; of two timed
    traces it does not."""
    from tracevis3d.layout.compare import CompareParams, compare_layout

    p = CompareParams(resolution=(960, 540))
    merged = compare_layout(tracevis3d.compare(in_samples, tracevis3d.merge(sampled)), p).meta["title"]
    assert "merged stacks (left heavy)" in merged and "call paths with a match" in merged, merged
    timed = compare_layout(tracevis3d.compare(sampled, sampled), p).meta["title"]
    assert "merged" not in timed and "calls with a match" in timed, timed
