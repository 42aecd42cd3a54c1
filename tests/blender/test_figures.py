"""Figures of real, deep and multi-threaded traces, rendered headless and measured on pixels.

The traces are real VizTracer recordings, committed (tests/data/recorded): json.tool on a
deeply nested document (118 levels) and examples/threads_pipeline.py (5 threads, locks,
a bounded queue, a condition, file I/O).  Each figure is built into Blender's startup
scene, rendered with Workbench at 1920x1080, and measured with
`tracevis3d.blender.figure_report`.
"""
import re

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

import tracevis3d  # noqa: E402
from tracevis3d.blender.figure_report import backdrop_rects, figure_report, label_pixel_boxes  # noqa: E402
from tracevis3d.layout import IcicleParams, icicle_layout  # noqa: E402
from tracevis3d.layout.colour import WAIT_RGB  # noqa: E402
from tracevis3d.layout.palette import linear_to_srgb  # noqa: E402


def _render(trace, path, **params):
    from tracevis3d.blender.hygiene import remove_startup_defaults
    from tracevis3d.blender.render import render_figure
    from tracevis3d.blender.scene import build_icicle

    bpy.ops.wm.read_factory_settings()  # the startup file: Cube, Light, Camera
    remove_startup_defaults(bpy.context.scene)
    p = IcicleParams(**params)
    info = build_icicle(trace, p)
    render_figure(path, resolution=p.resolution)
    return info, icicle_layout(trace, p)


def _figure(trace_path, folder, name):
    """(trace, png, build info, spec, figure report) of the default figure of a trace."""
    tr = tracevis3d.load(trace_path)
    path = folder.mktemp("fig") / f"{name}.png"
    info, spec = _render(tr, path)
    return tr, path, info, spec, figure_report(path, content_rect=spec.meta["content_rect"],
                                                  backdrops=backdrop_rects(spec.meta))


@pytest.fixture(scope="module")
def deep(deep_trace_path, tmp_path_factory):
    return _figure(deep_trace_path, tmp_path_factory, "deep")


@pytest.fixture(scope="module")
def threads(threads_trace_path, tmp_path_factory):
    return _figure(threads_trace_path, tmp_path_factory, "threads")


def test_deep_trace_has_readable_labels(deep):
    tr, path, info, spec, rep = deep
    assert tr.max_depth >= 100
    # labels on the icicle, none below 14 px (the em, projected through the camera)
    assert rep["labels"] >= 15, rep
    assert rep["min_label_px"] >= 14.0 - 1e-3, rep
    assert rep["all_texts_min_px"] >= 14.0 - 1e-3, rep
    # labels are not only on the first levels: some name calls 10+ levels up
    kinds = spec.labels.kind
    depths = [int(tr.depth[c]) for c, k in zip(spec.labels.call_index, kinds) if k != "legend" and c >= 0]
    assert max(depths) >= 10, depths
    # the deep generator chains are folded, and said so on the figure: by a depth ("14 folded
    # levels") or by the call a band starts with and the levels it folds ("gen (40 levels)", narrower
    # "gen +40", "a › … › b")
    folded = [t for t, k in zip(spec.labels.texts, kinds) if k == "fold" or (k == "call" and (" › " in t or " levels)" in t
                                                                                       or re.search(r" \+\d+$", t)))]
    assert spec.meta["n_folded"] > 0 and folded, list(zip(spec.labels.texts, kinds))[:20]
    # ... never "gen ⋮40" (read at a label's size as a line number ":40", a Pygments trace), and
    # the legend says what "+40" counts
    legend = [t for t, k in zip(spec.labels.texts, kinds) if k == "legend"]
    assert not any("⋮" in t for t in spec.labels.texts) and "+n: n levels" in " ".join(legend), legend


def test_labels_sit_inside_their_boxes_and_face_the_camera(deep):
    tr, path, info, spec, rep = deep
    from tracevis3d.blender.figure_report import project_points

    boxes = label_pixel_boxes()
    # a name of the detail inset sits in its box of the inset (tests/test_inset.py)
    layers = {False: spec.layer("calls")}
    if spec.meta.get("inset"):
        layers[True] = spec.layer("inset_boxes")
    pos = {w: {int(c): k for k, c in enumerate(x.attributes["call_index"])
               if x.attributes.get("inset_part", np.zeros(len(x), np.int32))[k] == 0} for w, x in layers.items()}
    cam = bpy.context.scene.camera
    view = -(cam.matrix_world.to_3x3().col[2])  # camera forward
    checked = 0
    callout = spec.labels.attributes.get("callout_leader", np.full(len(spec.labels), -1))
    inset = spec.labels.attributes.get("inset", np.full(len(spec.labels), -1))
    for (kind, text, x0, y0, x1, y1, em), ci, lead, w in zip(boxes, spec.labels.call_index, callout, inset == 1):
        if kind != "call" or lead >= 0:  # a callout stands over its box (tests/test_callouts.py)
            continue
        calls = layers[bool(w)]
        k = pos[bool(w)][int(ci)]
        c, s = calls.positions[k].astype(float), calls.scales[k].astype(float)
        face = [c + np.array([sx * s[0], -0.5 * s[1], sz * s[2]]) for sx in (-.5, .5) for sz in (-.5, .5)]
        f = project_points(face)
        assert f[:, 0].min() - 1 <= x0 and x1 <= f[:, 0].max() + 1, text
        assert f[:, 1].min() - 1 <= y0 and y1 <= f[:, 1].max() + 1, text
        checked += 1
    assert checked >= 5
    # texts face the camera: their normal (local +z) points against the view direction
    for ob in bpy.data.collections["TraceVis3D"].objects:
        if ob.type == "FONT" and ob.get("tv3d_kind") == "call":
            n = ob.matrix_world.to_3x3().col[2].normalized()
            assert n.dot(view) < -0.97, ob.data.body


def test_deep_figure_fills_the_frame_with_little_grey(deep):
    tr, path, info, spec, rep = deep
    assert rep["max_margin"] <= 0.08, rep["margins"]
    assert rep["grey_share"] <= 0.35, rep


def test_no_startup_objects_in_the_figure(deep):
    names = {ob.name for ob in bpy.context.scene.objects}
    assert not names & {"Cube", "Light", "Camera"}, names


def test_threads_figure_shows_waits_and_names_lanes(threads):
    tr, path, info, spec, rep = threads
    assert tr.n_threads >= 5
    names = spec.meta["lane_names"]
    assert names[0] == "MainThread" and len(names) == tr.n_threads
    assert {"writer", "parse_0"} <= set(names)
    # waits have their own colour, and it is on the image
    from tracevis3d.blender.figure_report import load_image

    img = load_image(path)
    want = linear_to_srgb(WAIT_RGB)
    close = np.abs(img - want).max(-1) < 0.06
    assert close.mean() > 0.01, close.mean()
    assert any("waiting" in e.name for e in spec.legend)
    assert rep["max_margin"] <= 0.08 and rep["grey_share"] <= 0.35, rep
    assert rep["labels"] >= 10 and rep["min_label_px"] >= 14.0 - 1e-3, rep


def test_colours_are_stable_across_threads(threads):
    """A function keeps its colour in every thread's figure of the trace.  A time window's
    figure is the window's own (colours ranked over its calls, clipped to it: issue 26,
    tests/test_window_render.py), so a function's colour may change from window to window."""
    tr, path, info, spec, rep = threads

    def colour_of(spec):
        calls = spec.layer("calls")
        out = {}
        for ci, col in zip(calls.attributes["call_index"], calls.colors[:, :3]):
            out.setdefault(int(tr.func[ci]), tuple(np.round(col, 5)))
        return out

    full = colour_of(icicle_layout(tr, IcicleParams(color_by="function")))
    one = colour_of(icicle_layout(tr, IcicleParams(color_by="function", threads=["writer"])))
    shared = set(one) & set(full)
    assert len(shared) >= 3
    assert all(one[f] == full[f] for f in shared)
    mod_full = colour_of(icicle_layout(tr, IcicleParams(color_by="module")))
    mod_one = colour_of(icicle_layout(tr, IcicleParams(color_by="module", threads=["parse_1"])))
    assert all(mod_one[f] == mod_full[f] for f in set(mod_one) & set(mod_full))


def test_grey_share_counts_an_inset_panel_as_page_not_its_grey_boxes(tmp_path):
    """`figure_report`'s grey share: a backdrop's light achromatic pixels (the detail inset's
    panel, ~0.9 as Workbench lights it) are page; the grey boxes on it still count."""
    w, h = 200, 100
    img = np.ones((h, w, 4), np.float32)
    img[60:90, 10:190, :3] = (0.20, 0.45, 0.80)  # a coloured box
    img[5:55, 100:190, :3] = 0.90  # the inset's panel
    img[20:40, 110:150, :3] = 0.55  # a grey box on it
    im = bpy.data.images.new("grey_probe", w, h)
    im.pixels.foreach_set(img[::-1].ravel())
    im.filepath_raw = str(tmp_path / "probe.png")
    im.file_format = "PNG"
    im.save()
    bpy.data.images.remove(im)
    rect = (0, 0, w, h)
    plain = figure_report(tmp_path / "probe.png", content_rect=rect)["grey_share"]
    panel = figure_report(tmp_path / "probe.png", content_rect=rect, backdrops=[(100, 5, 190, 55)])["grey_share"]
    coloured, panel_px, grey_px = 30 * 180, 50 * 90 - 20 * 40, 20 * 40
    assert abs(plain - (panel_px + grey_px) / (coloured + panel_px + grey_px)) < 0.02, plain
    assert abs(panel - grey_px / (coloured + grey_px)) < 0.02, panel
    assert backdrop_rects({"inset": {"rect": [1.0, 2.0, 3.0, 4.0]}}) == [(1.0, 2.0, 3.0, 4.0)]
    assert backdrop_rects({"inset": None}) == []
