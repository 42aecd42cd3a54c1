"""The memory view under the whole icicle of the same run (``render-memory --trace``, issue 71
item 3): py-spy samples a JSON-heavy program 100+ levels deep that ``memray run`` runs (one
process, two recorders that share no profile hook: VizTracer's and memray's would), and the
figure draws render-icicle's icicle of the calls above the bands on one time axis.  Measured on
the layout through its camera and on the rendered PNG."""

import numpy as np
import pytest

from memray_captures import committed_memory_and_calls, memray_available

pytestmark = [pytest.mark.blender, pytest.mark.skipif(not memray_available(), reason="needs memray")]


@pytest.fixture(scope="module")
def run():
    """The committed run (`memray_captures.COMMITTED_MEMORY_AND_CALLS`), not one recorded here."""
    return committed_memory_and_calls()


def _png(path):
    """(h, w, 4) stored floats of a rendered PNG, row 0 at the top (`figure_report.load_image`)."""
    pytest.importorskip("bpy")
    from tracevis3d.blender.figure_report import load_image

    return load_image(path, 4)


@pytest.mark.timeout(1200)
def test_the_icicle_sits_above_the_bands_on_one_time_axis(run, tmp_path):
    pytest.importorskip("bpy")
    import tracevis3d
    from tracevis3d.cli import main
    from tracevis3d.layout.camera import project, world_per_pixel
    from tracevis3d.layout.memory_calls import memory_figure

    cap, calls = tracevis3d.load_memory(run[0]), tracevis3d.load(run[1])
    assert int(calls.depth.max()) >= 100  # the program is 100+ levels deep
    spec = memory_figure(cap, None, calls)
    m = spec.meta
    assert spec.camera.orthographic and m["calls_view"] == "icicle"
    assert m["calls_alignment"] == "first call and first allocation in deep_json.py"
    # render-icicle's objects (boxes, merged sub-pixel calls, its time axis) and the bands
    names = {x.name for x in spec.layers}
    assert {"calls", "clusters", "axis", "memory_bands", "memory_panel", "memory_marks"} <= names, names
    calls_lay, bands = spec.layer("calls"), spec.layer("memory_bands")
    zb, ztop = m["memory_z"]
    assert calls_lay.positions[:, 2].min() > ztop > bands.positions[:, 2].max(), "the icicle above the bands"
    # a call box and the memory of its moment line up through the camera: the widest call's
    # edges and the bands' columns at the call's start and end (on the capture's clock), projected
    res = spec.resolution
    index = calls_lay.attributes["call_index"]  # into the trace as loaded
    rounds = [k for k, i in enumerate(index.tolist()) if "round_trip" in calls.function_names[int(calls.func[i])]]
    assert len(rounds) >= 3, "the program's four round trips are drawn"
    k = max(rounds, key=lambda k: float(calls_lay.scales[k, 0]))
    call = int(index[k])
    cx, cz = float(calls_lay.positions[k, 0]), float(calls_lay.positions[k, 2])
    half = 0.5 * float(calls_lay.scales[k, 0])
    col_left = bands.positions[:, 0] - 0.5 * bands.scales[:, 0]
    bins = bands.attributes["bin_index"]
    for edge, t_us in ((cx - half, calls.start[call]), (cx + half, calls.end[call])):
        ms = (float(t_us) - m["calls_offset_us"]) / 1000.0
        b = int(np.clip(ms // m["bin_ms"], 0, m["bins"] - 1))
        j = np.flatnonzero(bins == b)
        assert j.size, f"no column of memory at {ms:.1f} ms"
        x_band = float(col_left[j[0]]) + (ms - b * m["bin_ms"]) / m["bin_ms"] * float(bands.scales[j[0], 0])
        z_band = float(bands.positions[j[0], 2])
        px = project(spec.camera, np.array([[edge, 0.0, cz], [x_band, 0.0, z_band]]), res)
        assert abs(px[0, 0] - px[1, 0]) < 1.0, (edge, x_band, px)
        assert px[0, 1] < px[1, 1] - 100  # the call well above its memory
    # the icicle names its calls: at least 10 names of calls at least 14 px high
    wpp = world_per_pixel(spec.camera, spec.labels.anchors.astype(np.float64), res)
    call_px = [s / p for s, p, kd, sp in zip(spec.labels.sizes, wpp, spec.labels.kind, spec.labels.space)
               if kd == "call" and sp == "world"]
    assert sum(p >= 14.0 - 1e-3 for p in call_px) >= 10, sorted(call_px)
    assert sum(k == "site" for k in spec.labels.kind) >= 8  # the bands are named (in them and in the legend)
    # no name of the icicle overlaps a name of the bands on the picture (text boxes from the
    # anchors: a label's size is its line's height, its width the text's)
    from tracevis3d.layout.text import text_width

    world = [i for i, sp in enumerate(spec.labels.space) if sp == "world"]
    at = project(spec.camera, spec.labels.anchors[world].astype(np.float64), res)
    boxes = []
    for j, i in enumerate(world):
        h = float(spec.labels.sizes[i] / wpp[i])
        w = text_width(spec.labels.texts[i]) * h
        x0 = at[j, 0] - w * 0.5 * int(spec.labels.align[i])
        boxes.append((x0, at[j, 1] - 1.2 * h, x0 + w, at[j, 1] + 0.4 * h, spec.labels.anchors[i, 2] > ztop))
    ice = [b for b in boxes if b[4]]
    mem = [b for b in boxes if not b[4]]
    assert ice and mem
    clash = [(a, b) for a in ice for b in mem if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]]
    assert not clash, clash[:3]
    # the figure: 1920 × 1080, no more than half of it blank, the icicle's colours above the bands'
    out = tmp_path / "memory_icicle.png"
    assert main(["render-memory", str(run[0]), "--trace", str(run[1]), "-o", str(out)]) == 0
    img = _png(out)
    assert img.shape[:2] == (1080, 1920)
    blank = float((img[..., :3] > 0.96).all(axis=2).mean())
    assert blank <= 0.5, f"{blank:.0%} of the frame blank"
    top_band = int(project(spec.camera, np.array([[0.0, 0.0, ztop]]), res)[0, 1])
    lanes = img[int(m["content_rect"][1]):top_band - 60, int(m["content_rect"][0]):int(m["content_rect"][2]), :3]
    chart = img[top_band:int(m["content_rect"][3]), int(m["content_rect"][0]):int(m["content_rect"][2]), :3]
    for part, what in ((lanes, "the icicle"), (chart, "the bands")):
        coloured = (part.max(axis=2) - part.min(axis=2)) > 0.15
        assert coloured.mean() > 0.15, f"{what}: {coloured.mean():.0%} of its part in colour"


@pytest.mark.timeout(900)
def test_the_strip_stays_an_option_and_the_job_takes_the_choice(run):
    bpy = pytest.importorskip("bpy")
    import tracevis3d
    from tracevis3d.blender.memory_tasks import memory_build_job
    from tracevis3d.cli.common import run_job
    from tracevis3d.params.memory import MemoryParams

    cap, calls = tracevis3d.load_memory(run[0]), tracevis3d.load(run[1])
    scene = bpy.context.scene
    out = run_job(memory_build_job(cap, MemoryParams(resolution=(960, 540), calls_view="strip"), scene=scene,
                                   calls=calls))
    assert out["meta"]["n_calls_drawn"] > 0
    assert any("memory_calls" in ob.name for ob in bpy.data.collections["TraceVis3D"].all_objects)
    from tracevis3d.blender.memory_tasks import build_memory

    out = build_memory(cap, {"resolution": [960, 540]}, calls=calls, scene=scene)  # the scripting entry
    assert out["meta"]["calls_view"] == "icicle" and out["meta"]["n_calls_drawn"] > 1000
    assert not any("memory_calls" in ob.name for ob in bpy.data.collections["TraceVis3D"].all_objects)


@pytest.mark.timeout(900)
def test_the_panels_memory_section_draws_the_icicle_of_its_calls_trace(run):
    """The panel's Memory section (the add-on registered): its Calls trace field names the call
    trace, and its Build draws the icicle above the bands as the command does."""
    bpy = pytest.importorskip("bpy")
    import json

    from addon_loader import registered_addon

    gen = registered_addon()
    next(gen)
    try:
        scene = bpy.context.scene
        scene.tracevis3d.trace_path = str(run[0])
        group = scene.tracevis3d_memory_params
        group.calls_trace = str(run[1])
        group.resolution_x, group.resolution_y = 960, 540
        assert bpy.ops.tracevis3d.build_view(view="memory") == {"FINISHED"}
        record = json.loads(scene["tracevis3d_memory"])
        assert record["params"]["calls_trace"] == str(run[1]) and record["params"]["calls_view"] == "icicle"
        names = [ob.name for ob in bpy.data.collections["TraceVis3D"].all_objects]
        assert any("memory_bands" in n for n in names), names
        assert any("clusters" in n for n in names) and not any("memory_calls" in n for n in names), names
    finally:
        next(gen, None)
