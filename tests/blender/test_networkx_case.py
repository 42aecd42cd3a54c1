"""The networkx case of issues 67 and 82: a graph-analysis program whose figures must name enough calls.

`tools/record_networkx.py` runs betweenness centrality, Louvain communities, the minimum
spanning tree and all-pairs shortest path lengths on networkx's karate-club graph (175k
calls, 82 levels under VizTracer's defaults; importing networkx is four fifths of the run)
and the same driver on the Les Misérables graph.  Both are committed (tests/data/recorded,
recorded at nice -20 on an idle machine by `tools/record_test_traces.py networkx`), and the icicle of
the karate run and the comparison of the two runs are built with their defaults at
1920×1080 (the jobs the panel and the CLI drive), rendered with Workbench and measured on
the rendered scene (`figure_report.view_measures`: names of calls or groups whose projected
text is at least 14 px).  Issue 67's goals: the icicle names 25 calls, the comparison 20.

Over eleven recordings the icicle named 33 to 46 calls (21 to 46 before: the import's share
of the run, and so every width, moves with the machine's load; the low ones had no detail
inset, or one that named nothing new, because the inset's figure of a stretch spent its few
levels on the chain of calls running across the whole stretch, ``exec › <module> ›
report``, which `layout.fold`'s rule 5 folds now), the comparison 25 to 35, its sides'
bands of import machinery drawn thin (`layout.compare_sides.side_fold`; as tall as a level,
each reading "13 folded levels", they took 20-32 % of a side's drawn area).  Those counts were of
recordings made during the session; the figures of the committed pair are the same on every run
(icicle 39 names: 32 in the figure, 7 in its detail inset; comparison 29: 12 on side A, 17 on
side B), so the bounds below are set by the failures they catch, not by the spread of recordings.
"""
import importlib.util
import pathlib

import numpy as np
import pytest

import tracevis3d

REPO = pathlib.Path(__file__).resolve().parents[2]
RES = (1920, 1080)
#: issue 67's goals: readable names (≥ 14 px) in the icicle of the karate run and in the comparison
GOALS = {"icicle": 25, "compare": 20}
#: the committed pair's icicle names 39 (32 + 7 in the inset): at least 34 fails a figure that
#: loses its inset's names (32 left) or the 12 names of the call groups over the import's crowded
#: stretch (27), and passes a layout change that moves a name or two
ICICLE_NAMES = 34
#: ... and its inset names 7, 5 of them functions the figure leaves unnamed: an inset that spends
#: its levels on the chain across its stretch (issue 67: it named nothing new) fails
INSET_NEW_FUNCTIONS = 3
#: the comparison names 29 (A 12, B 17): at least 25 in all and 10 on each side fails a side that
#: names its import only, not the program's own calls (A's report, analyse and 4× func: 9 left;
#: B's 11 names of report › analyse › the algorithms: 6 left), and passes a name or two moved.
#: (Bands as tall as a level, issue 67's bug, leave the count at 29: MAX_BAND_SHARE catches them.)
COMPARE_NAMES = 25
COMPARE_SIDE_NAMES = 10
#: the most of a comparison side's drawn area that folded bands may take.  Those bands fold
#: levels that carry little information; drawn as tall as a level with their "13 folded levels"
#: marker they took 20-32 % of a side over five recordings (a third of its wide levels: the
#: issue's "sides mostly folded-level bands"), drawn thin 8-13 % over seven on a quiet machine.
#: A recording made beside busy cores has preempted calls widened (VizTracer's wall clock):
#: 0.2006 and 0.214 were seen there with the thin bands (CI of 2026-11-28), hence 0.22 -- which
#: lets the lower end of the old bug's range (0.20-0.22) through.  On the committed pair (one
#: recording, the same on every run) side A's share is 0.186 with thin bands and 0.273 with bands as
#: tall as a level (`compare_sides.BAND_NARROW` set to 1): 0.22 stands between the two.
MAX_BAND_SHARE = 0.22


def _recorder():
    spec = importlib.util.spec_from_file_location("record_networkx", REPO / "tools" / "record_networkx.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def networkx_pair(tmp_path_factory):
    """(karate, lesmis): the two runs as committed (tests/data/recorded/networkx_*.json.gz,
    `tools/record_test_traces.py networkx`), inflated and loaded: the same bytes on every run."""
    import gzip
    import json
    import warnings

    folder = REPO / "tests" / "data" / "recorded"
    entry = json.loads((folder / "manifest.json").read_text())["networkx"]
    out = tmp_path_factory.mktemp("networkx-recorded")
    paths = []
    for f in entry["files"]:
        target = out / f["file"][: -len(".gz")]
        target.write_bytes(gzip.decompress((folder / f["file"]).read_bytes()))
        paths.append(target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        karate, lesmis = (tracevis3d.load(p) for p in paths)
    assert [len(karate), len(lesmis)] == [f["calls"] for f in entry["files"]]
    return karate, lesmis


@pytest.mark.slow
def test_the_recorder_records_the_case(tmp_path):
    """`tools/record_networkx.py` still records the case the committed files are of."""
    rec = _recorder()
    why = rec.networkx_missing()
    if why:
        pytest.skip(why)
    try:
        path = rec.record(tmp_path, "karate", python=_raised_priority_python(tmp_path))
    except RuntimeError as e:
        pytest.fail(f"could not record the networkx case: {e}", pytrace=False)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        karate = tracevis3d.load(path)
    # the case of the issue: ~166k calls, 82 levels (the count moves with the packages
    # installed: networkx's backends scan the installed distributions at import)
    assert 1.2e5 <= len(karate) <= 2.5e5 and karate.max_depth + 1 >= 60, (len(karate), karate.max_depth)
    names = {n.split(" (")[0] for n in karate.function_names}
    assert {"analyse", "betweenness_centrality", "louvain_communities"} <= names


def _raised_priority_python(out) -> str:
    """This interpreter, run at a raised scheduling priority (``nice -n -10``; where that is not
    permitted, nice says so and runs it as it is): the recording's times are its own.

    VizTracer stamps calls with the wall clock and the traced program runs ~0.3 s; on a loaded
    machine preemptions of tens of ms land in it at random (its span went from 0.3-0.5 s to
    1.0-2.1 s beside four busy processes) and the calls they land in widen, which moves the
    fold decisions.  The layout of one recording is the same on every build; the figure moved
    with the recording: the fold-band share of side A was 0.214 once under load, 0.203 beside
    four busy processes with the least disturbed of three recordings kept, and below 0.2 in
    three runs out of three beside them once the recording ran at this priority."""
    import shutil
    import stat
    import sys

    wrapper = out / "python-raised-priority"
    nice = shutil.which("nice")
    wrapper.write_text(f'#!/bin/sh\nexec {nice} -n -10 "{sys.executable}" "$@"\n' if nice else
                       f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return str(wrapper)


def _build_and_render(view: str, traces, out) -> tuple:
    """The view built with its defaults by the job the panel drives, rendered; (meta, measures, boxes)."""
    import bpy

    from tracevis3d.blender.figure_report import label_pixel_boxes, view_measures
    from tracevis3d.blender.render import render_figure

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    if view == "icicle":
        from tracevis3d.blender.tasks import build_job

        job = build_job(traces[0], None, scene=scene)
    else:
        from tracevis3d.blender.tasks import compare_build_job

        job = compare_build_job(tracevis3d.compare(traces[0], traces[1]), None, scene=scene)
    info = job.run(interval=0.01)
    render_figure(str(out), engine="workbench", resolution=RES)
    boxes = label_pixel_boxes()
    return info["meta"], view_measures(str(out), boxes=boxes), boxes


def side_band_shares(collection: str = "TraceVis3D") -> dict:
    """Per comparison side ("a", "b"): the share of its drawn area (the projected front faces
    of its boxes and merged-call boxes) that folded bands take (boxes whose ``folded_levels``
    attribute is 2 or more: a run of folded calls drawn as one band)."""
    import bpy

    from tracevis3d.blender.figure_report import project_points

    coll = bpy.data.collections[collection]
    area = {"a": [0.0, 0.0], "b": [0.0, 0.0]}
    for ob in coll.all_objects:
        layer = str(ob.get("tv3d_layer", ""))
        side = layer.rsplit("_", 1)[-1]
        if layer.rsplit("_", 1)[0] not in ("calls", "clusters") or side not in area:
            continue
        attrs = ob.data.attributes
        n = len(ob.data.points)
        if n == 0:
            continue
        pos, scale = np.empty(3 * n, np.float32), np.empty(3 * n, np.float32)
        attrs["position"].data.foreach_get("vector", pos)
        attrs["tv_scale"].data.foreach_get("vector", scale)
        pos, scale = pos.reshape(n, 3).astype(np.float64), scale.reshape(n, 3).astype(np.float64)
        folded = np.zeros(n, np.int32)
        if "folded_levels" in attrs:
            attrs["folded_levels"].data.foreach_get("value", folded)
        front = pos[:, 1] - 0.5 * scale[:, 1]
        lo = np.stack([pos[:, 0] - 0.5 * scale[:, 0], front, pos[:, 2] - 0.5 * scale[:, 2]], 1)
        hi = np.stack([pos[:, 0] + 0.5 * scale[:, 0], front, pos[:, 2] + 0.5 * scale[:, 2]], 1)
        p = project_points(np.concatenate([lo, hi]))
        px = np.abs(p[:n] - p[n:]).prod(1)
        area[side][0] += float(px[folded >= 2].sum())
        area[side][1] += float(px.sum())
    return {s: (a / t if t > 0 else 0.0) for s, (a, t) in area.items()}


def _check_names(boxes):
    from tracevis3d.blender.figure_report import NAME_KINDS

    names = [b for b in boxes if b[0] in NAME_KINDS]
    assert names and min(b[6] for b in names) >= 14.0 - 1e-3


@pytest.mark.slow
@pytest.mark.blender
def test_the_icicle_of_the_karate_run_names_enough_calls(networkx_pair, tmp_path):
    pytest.importorskip("bpy")
    meta, rep, boxes = _build_and_render("icicle", networkx_pair, tmp_path / "icicle.png")
    assert rep["names"] >= max(GOALS["icicle"], ICICLE_NAMES), (rep["names_by_kind"], meta.get("inset"))
    inset = meta.get("inset")
    assert inset is not None and inset["new_functions"] >= INSET_NEW_FUNCTIONS, inset
    _check_names(boxes)
    assert rep["max_margin"] <= 0.08, rep["margins"]


@pytest.mark.slow
@pytest.mark.blender
def test_the_comparison_names_enough_calls_on_sides_not_mostly_bands(networkx_pair, tmp_path):
    pytest.importorskip("bpy")
    meta, rep, boxes = _build_and_render("compare", networkx_pair, tmp_path / "compare.png")
    assert rep["names"] >= max(GOALS["compare"], COMPARE_NAMES), rep["names_by_kind"]
    _check_names(boxes)
    shares = side_band_shares()
    assert max(shares.values()) < MAX_BAND_SHARE, shares
    # the names stand on both sides, not on one
    from tracevis3d.blender.figure_report import NAME_KINDS

    kinds = [b for b in boxes if b[0] in NAME_KINDS]
    mid = 0.5 * (min(b[3] for b in kinds) + max(b[5] for b in kinds))
    per_side = (sum(b[5] < mid for b in kinds), sum(b[3] > mid for b in kinds))
    assert min(per_side) >= COMPARE_SIDE_NAMES, (per_side, [b[1] for b in kinds])


@pytest.mark.slow
def test_a_stretch_figure_spends_its_levels_on_the_stretch(networkx_pair):
    """The figure of a window that is ``analyse``'s time (what a detail inset magnifies), in
    the height of an inset (150 px: ~6 readable levels): the chain that runs across the whole
    window (``exec › <module> › report``) folds into a thin band (`layout.fold`'s rule 5),
    ``analyse`` keeps its level right on it, and the levels above go to the algorithms (before:
    the chain took 3 full levels under ``analyse``, which kept its wrappers and strata of
    0.01 of a level: no algorithm was named in the inset)."""
    from tracevis3d.layout.icicle import icicle_stages
    from tracevis3d.params.icicle import IcicleParams

    karate = networkx_pair[0]
    names = karate.function_names
    analyse = next(i for i in range(len(karate)) if names[karate.func[i]].startswith("analyse "))
    window = (float(karate.start[analyse] - karate.start.min()), float(karate.end[analyse] - karate.start.min()))
    # as a detail inset lays out its stretch (`layout.inset.build_inset`): no axes, title or legend
    params = IcicleParams(time_window=window, show_axes=False, show_title=False, show_legend=False).validate()
    st = icicle_stages(karate, params, 16.0, content_h_px=150.0, window_first=True)
    d, tr = st.drawn, st.sel.trace
    drawn_names = [tr.function_names[f].split(" (")[0] for f in d.func]
    # at a full level: a box of its own, or the band that starts with it (a named band: the
    # wrappers ``argmap_minimum_spanning_tree_36 › … › minimum_spanning_tree``)
    full = {n for n, h, f, r in zip(drawn_names, d.level_height, d.folded, d.run_levels)
            if h >= 1.0 - 1e-9 and (not f or r >= 2)}
    assert "report" not in full and "<module>" not in full and "builtins.exec" not in full, sorted(full)
    k = drawn_names.index("analyse")
    assert d.level_height[k] >= 1.0 - 1e-9 and d.level_bottom[k] <= 0.1, (d.level_bottom[k], d.level_height[k])
    # the widest algorithms (their shares of the run move from recording to recording)
    assert any(a in n for n in full for a in ("betweenness_centrality", "louvain_communities")), sorted(full)
    assert st.fold.lane_levels[0] - d.level_bottom[k] >= 5.0, st.fold.lane_levels


def test_window_context_is_the_chain_across_a_lane_above_its_deepest_call():
    """`fold.window_context` on a hand-made lane: a window cut a root, its child and its
    grandchild at both ends (the clipped times equal the lane's), the grandchild has two
    children; in a second lane a wrapper starts and ends a little inside its root, as in the
    figure of a whole trace (no end shared: nothing is context there)."""
    from tracevis3d.layout.fold import window_context

    #            root  mid   deep  c1    c2    root2 child2
    start = np.array([0.0, 0.0, 0.0, 0.0, 60.0, 5.0, 6.0])
    end = np.array([100.0, 100.0, 100.0, 50.0, 100.0, 90.0, 89.0])
    parent = np.array([-1, 0, 1, 2, 2, -1, 5])
    lane = np.array([0, 0, 0, 0, 0, 1, 1])
    kind = np.zeros(7, np.int8)
    got = window_context(start, end, parent, lane, kind, 2)
    assert got.tolist() == [True, True, False, False, False, False, False]
    kind[1] = 1  # a wait is never context (nor does it pass the chain on)
    assert window_context(start, end, parent, lane, kind, 2).tolist() == [False] * 7
