"""Fly into any moment (issue 70): `tracevis3d.blender.view.zoom_to` on saved scenes of real
traces, measured in pixels through the camera.

The overview of a real multi-thread trace (docutils in a thread pool, recorded at test time,
tests/support/realtraces.py) is built headless and saved; windows from 0.2 ms to 50 ms of its
busiest stretches are refined: every zoomed view names calls at >= 14 px (the labels' em
projected through the scene camera, `figure_report.label_pixel_boxes`) at least 20 times and at
least 0.7x as often as a dedicated ``--window`` figure of the same window (its layout), its frame
is at most half blank (rendered), refinements replace each other (objects bounded), and the
whole figure comes back with the overview's objects.  The GUI's path runs the same job with a
view matrix instead of the camera; a fresh Blender process opens the saved .blend alone, finds
the trace from its build record and zooms.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

import tracevis3d  # noqa: E402
from tracevis3d.blender import view  # noqa: E402
from tracevis3d.blender.figure_report import view_measures  # noqa: E402
from zoom_helpers import GOAL_NAMES, box_x_extents, busiest_window, names_enough, names_in_frame  # noqa: E402

WINDOWS_US = (200.0, 2000.0, 50000.0)


def _dedicated_names(trace, params, window) -> int:
    """Names of calls a dedicated ``render-icicle --window`` figure of the window places."""
    from tracevis3d.layout.icicle import icicle_layout
    from tracevis3d.layout.refine import window_params

    spec = icicle_layout(trace, window_params(params, window))
    return sum(1 for k in spec.labels.kind if k in view.NAME_KINDS)


@pytest.fixture(scope="module")
def saved(docutils_pool_paths, tmp_path_factory):
    """(trace, .blend path, overview object count, params) of the pool's figure, built and saved."""
    from tracevis3d.blender.hygiene import remember_blend_location, remove_startup_defaults
    from tracevis3d.blender.scene import build_icicle
    from tracevis3d.params.icicle import IcicleParams

    path = str(docutils_pool_paths[0])
    # the overview's colours kept by the build go to a folder of this test run (`view.colours_cache_dir`)
    os.environ["TRACEVIS3D_ZOOM_CACHE"] = str(tmp_path_factory.mktemp("zoom_cache"))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    remove_startup_defaults(bpy.context.scene)
    trace = tracevis3d.load(path)
    build_icicle(trace, trace_path=path)
    blend = str(tmp_path_factory.mktemp("zoom") / "pool.blend")
    remember_blend_location(bpy.context.scene, blend)
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    return trace, blend, len(bpy.data.objects), IcicleParams()


@pytest.mark.timeout(900)
def test_zoomed_views_name_what_a_dedicated_window_figure_names(saved, tmp_path):
    trace, blend, n_objects, params = saved
    bpy.ops.wm.open_mainfile(filepath=blend)
    scene = bpy.context.scene
    counts = []
    for width in WINDOWS_US:
        window = busiest_window(trace, width)
        out = view.zoom_to(scene, window=window)
        assert out["action"] == "refine" and out["window"] == pytest.approx(window)
        names = names_in_frame(scene)
        dedicated = _dedicated_names(trace, params, window)
        # the goal's 20 names, unless the window holds fewer nameable calls than that (then the
        # dedicated figure names fewer too: a recording's 200 µs window named 19 in CI)
        assert names_enough(len(names), dedicated), (width, dedicated, names)
        counts.append(len(bpy.data.objects))
    # refinements replace each other: objects stay bounded by the overview and one refinement
    assert max(counts) <= n_objects + max(counts[0] - n_objects, 0) * 2 + 20, counts
    # the frame of a zoomed view is at most half blank (rendered at half size)
    from tracevis3d.blender.render import render_figure

    png = str(tmp_path / "zoomed.png")
    render_figure(png, scene=scene, resolution=(960, 540))
    m = view_measures(png, view.ZOOM_COLLECTION, scene)
    assert m["empty_share"] <= 0.5, m
    assert m["names"] >= min(GOAL_NAMES, dedicated), m
    # one thread of the stretch: its lane alone
    lane = out["meta"]["lane_names"][-1]
    one = view.zoom_to(scene, window=window, thread=lane)
    assert one["meta"]["lane_names"] == [lane] and one["thread"] == lane
    # back at the whole figure: the overview's objects, its camera, no split left behind
    out = view.zoom_to(scene, window=None)
    assert out["action"] == "overview"
    assert abs(len(bpy.data.objects) - n_objects) <= 0.1 * n_objects
    assert view.ZOOM_COLLECTION not in bpy.data.collections and view.zoom_state(scene) is None
    assert not any(m.name == view.SPLIT_MODIFIER for ob in bpy.data.objects for m in getattr(ob, "modifiers", ()))
    assert scene.camera is not None and not scene.camera.get("tv3d_zoom")


def test_the_build_keeps_what_the_first_zoom_needs(saved):
    """The build keeps the overview's colours (a file named by the trace's content and the
    figure's parameters, recorded in the scene): the first zoom neither loads the trace again
    nor runs the overview's stages over the whole trace."""
    from tracevis3d.layout import refine

    trace, blend, n_objects, params = saved
    bpy.ops.wm.open_mainfile(filepath=blend)
    scene = bpy.context.scene
    rec = json.loads(scene[view.COLOURS_KEY])
    kept = os.path.join(view.colours_cache_dir(), refine.colours_file_name(rec["fingerprint"], params))
    assert os.path.isfile(kept) and refine.OverviewColours.from_file(kept, len(trace)) is not None
    copy = os.path.join(view.colours_cache_dir(), refine.trace_copy_name(rec["fingerprint"]))
    assert len(tracevis3d.load(copy)) == len(trace)  # the JSON trace kept as a native file
    # built in this session: the trace and the colours are at hand
    from tracevis3d.blender.scene import build_icicle

    build_icicle(trace, trace_path=view.trace_context(scene)["path"])
    ctx = view.trace_context(scene)
    assert ctx["trace"] is trace and ctx["colouring_of"] is not None
    real = refine.overview_colours
    refine.overview_colours = None  # calling it would fail the zoom
    window = busiest_window(trace, 1000.0)
    try:
        out = view.zoom_to(scene, window=window)
    finally:
        refine.overview_colours = real
    dedicated = _dedicated_names(trace, params, window)
    assert out["action"] == "refine" and names_enough(len(out["names"]), dedicated), (out["names"], dedicated)
    view.zoom_to(scene, window=None)


def test_a_figure_never_saved_writes_nothing_to_the_cache(tmp_path, monkeypatch):
    """The build keeps the zoom's inputs in memory only; the user cache gets its files when the
    scene is saved (a ``save_pre`` handler, whoever saves), so a pipeline that renders figures
    and never saves them leaves no files behind."""
    from tracevis3d.blender.hygiene import remove_startup_defaults
    from tracevis3d.blender.scene import build_icicle

    cache = tmp_path / "cache"
    monkeypatch.setenv("TRACEVIS3D_ZOOM_CACHE", str(cache))
    path = tmp_path / "run.json"
    tracevis3d.save(tracevis3d.synthetic(3000, threads=2, seed=3), path, format="chrome")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    remove_startup_defaults(bpy.context.scene)
    scene = bpy.context.scene
    build_icicle(tracevis3d.load(path), trace_path=str(path))
    assert not cache.exists() or not any(cache.iterdir())
    assert view.COLOURS_KEY not in scene
    bpy.ops.wm.save_as_mainfile(filepath=str(tmp_path / "fig.blend"))
    from tracevis3d.layout import refine
    from tracevis3d.params.icicle import IcicleParams

    rec = json.loads(scene[view.COLOURS_KEY])
    assert (cache / refine.colours_file_name(rec["fingerprint"], IcicleParams())).is_file()
    assert (cache / refine.trace_copy_name(rec["fingerprint"])).is_file()  # the JSON kept as a native file


def test_the_overview_is_cut_and_moved_around_the_refined_stretch(saved):
    """Boxes crossing the window keep their parts outside it; what lies after it moves right; a
    new build of the figure takes the refinement away."""
    trace, blend, n_objects, params = saved
    bpy.ops.wm.open_mainfile(filepath=blend)
    scene = bpy.context.scene
    ob = bpy.data.objects["TV3D_calls"]
    window = busiest_window(trace, 2000.0)
    out = view.zoom_to(scene, window=window)
    pl = out["placement"]
    ob.modifiers["TraceVis3D instancer"].show_viewport = False  # the points, not the boxes
    x0, x1 = box_x_extents(ob)
    tol = 1e-3 * pl.width
    left, right = x1 <= pl.xa + tol, x0 >= pl.xb + pl.shift - tol
    assert (left | right).all()  # nothing of the overview inside the refined stretch
    assert left.any() and right.any()
    ob.modifiers["TraceVis3D instancer"].show_viewport = True
    # building the figure again replaces the refined stretch with the rest
    from tracevis3d.blender.scene import build_icicle

    build_icicle(trace, trace_path=view.trace_context(scene)["path"])
    assert view.zoom_state(scene) is None and view.ZOOM_COLLECTION not in bpy.data.collections
    assert len(bpy.data.objects) == n_objects


def _straight_view(x0, x1, z):
    """A camera looking straight at the front plane, its frame spanning x0..x1 there (50 mm lens)."""
    from tracevis3d.layout.spec import CameraSpec

    d = 0.5 * (x1 - x0) / (18.0 / 50.0)
    return CameraSpec(location=(0.5 * (x0 + x1), -d, z), target=(0.5 * (x0 + x1), 0.0, z), lens_mm=50.0,
                      clip_start=1e-4, clip_end=1e4)


@pytest.mark.timeout(600)
def test_the_viewport_path_refines_keeps_and_returns(saved):
    """The GUI's job with a view matrix: a view closing in on a stretch refines it, the view of
    the refined stretch keeps it, the overview's view brings the whole figure back."""
    from tracevis3d.layout.refine import camera_matrix

    trace, blend, n_objects, params = saved
    bpy.ops.wm.open_mainfile(filepath=blend)
    scene = bpy.context.scene
    meta = json.loads(scene["tracevis3d_meta"])
    wpu = meta["world_per_us"]
    t0, t1 = busiest_window(trace, 5000.0)
    xa, xb = (t0 - meta["t0"]) * wpu, (t1 - meta["t0"]) * wpu
    z = 0.5 * sum(view._lanes_z(bpy.data.collections["TraceVis3D"]))
    cam = _straight_view(xa, xb, z)
    job = view.zoom_job(scene, persp=camera_matrix(cam, (1920, 1080)), region=(1920, 1080))
    while job.poll(timeout=0.01):  # as the viewport's timer drives it
        pass
    out = job.result
    assert job.state == "done" and out["action"] == "refine", (job.state, job.error)
    assert out["window"][0] == pytest.approx(t0, abs=0.02 * (t1 - t0))
    assert out["window"][1] == pytest.approx(t1, abs=0.02 * (t1 - t0))
    persp, region = view.camera_persp(scene)  # the refined stretch's own view: nothing to do
    assert view.zoom_to_view(scene, persp, region)["action"] == "keep"
    # pulled back until the whole split scene is in view: the overview again
    pl = view.zoom_state(scene)["placement"]
    far = _straight_view(-5.0, meta["world_per_us"] * (meta["t1"] - meta["t0"]) + pl["shift"] + 5.0, z)
    assert view.zoom_to_view(scene, camera_matrix(far, (1920, 1080)), (1920, 1080))["action"] == "overview"
    assert abs(len(bpy.data.objects) - n_objects) <= 0.1 * n_objects
    # a job cancelled half-way leaves the whole figure
    job = view.zoom_job(scene, window=(t0, t1))
    job.poll()
    job.cancel()
    assert view.ZOOM_COLLECTION not in bpy.data.collections or not bpy.data.collections[view.ZOOM_COLLECTION].objects


@pytest.mark.timeout(600)
def test_a_fresh_blender_opens_the_saved_figure_and_zooms(saved):
    """The first zoom in another Blender reads the overview's colours the build kept (by the
    trace's content, in the user cache) instead of computing them over the whole trace, and
    maps the native copy of the trace instead of parsing its JSON again."""
    trace, blend, n_objects, params = saved
    window = busiest_window(trace, 1000.0)
    script = textwrap.dedent(f"""
        import json, bpy
        bpy.ops.wm.open_mainfile(filepath={blend!r})
        from tracevis3d.blender import view
        from tracevis3d.layout import refine

        def computed(*args):
            raise AssertionError("the overview's colours were computed again")

        refine.overview_colours = computed  # the build kept them: the first zoom reads them
        from tracevis3d.blender import session

        def parsed(*args):
            raise AssertionError("the trace file was parsed again")

        session.get_trace = parsed  # the build kept a native copy of the JSON trace: the zoom maps it
        n0 = len(bpy.data.objects)
        out = view.zoom_to(bpy.context.scene, window={window!r})
        back = view.zoom_to(bpy.context.scene, window=None)
        print("RESULT", json.dumps({{"n0": n0, "calls": out["calls_drawn"], "names": len(out["names"]),
                                    "seconds": out["seconds"]["total"], "after": len(bpy.data.objects)}}))
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in [str(os.path.dirname(os.path.dirname(
        tracevis3d.__file__))), os.environ.get("PYTHONPATH", "")] if p))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=500, env=env)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    assert r.returncode == 0 and lines, r.stderr[-2000:]
    res = json.loads(lines[-1][7:])
    dedicated = _dedicated_names(trace, params, window)
    assert res["calls"] > 0 and names_enough(res["names"], dedicated), (res, dedicated)
    assert res["after"] == res["n0"] == n_objects, res


@pytest.mark.timeout(600)
def test_the_panels_zoom_to_operator(saved):
    """"Zoom to…" of the panel, headless (the job runs to its end): a typed range, the picked
    call, then the whole figure; the viewport's follower does nothing without a viewport."""
    from addon_loader import registered_addon

    trace, blend, n_objects, params = saved
    fixture = registered_addon()
    next(fixture)
    try:
        bpy.ops.wm.open_mainfile(filepath=blend)
        scene = bpy.context.scene
        t0, t1 = busiest_window(trace, 1000.0)
        assert bpy.ops.tracevis3d.zoom_to(target="RANGE", start=f"{t0}us", end=f"{t1 / 1000}ms") == {"FINISHED"}
        st = view.zoom_state(scene)
        dedicated = _dedicated_names(trace, params, (t0, t1))
        assert st["window"] == pytest.approx([t0, t1]) and names_enough(len(names_in_frame(scene)), dedicated)
        scene.tracevis3d.trace_path = str(view.trace_context(scene)["path"])
        scene.tracevis3d.picked_call = int(np.argmax(trace.end - trace.start >= 0.5 * (t1 - t0)))
        assert bpy.ops.tracevis3d.zoom_to(target="PICKED") == {"FINISHED"}
        call = scene.tracevis3d.picked_call
        w = view.zoom_state(scene)["window"]
        assert w[0] <= trace.start[call] and trace.end[call] <= w[1]
        assert bpy.ops.tracevis3d.zoom_to(target="WHOLE") == {"FINISHED"}
        assert view.zoom_state(scene) is None and len(bpy.data.objects) == n_objects
        from tv3d_addon.ui import zoom_follow

        assert zoom_follow.poll(scene) is None  # headless: no viewport to follow
    finally:
        next(fixture, None)
