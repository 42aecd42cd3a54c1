"""Fly into the thread view (issue 70): `tracevis3d.blender.view.zoom_to` on a saved thread
view of a real multi-thread trace (docutils in a thread pool, recorded at test time).

The thread view's time runs along the ring's arc, so a zoom lays out the dedicated
``render-threads --window`` figure of the window (its ring and its focused icicle at the
window's scale) beside the overview, with the overview's threads, focus and lane colours, and
puts the scene camera on it.  Measured in pixels through the camera: the zoomed view names
calls at >= 14 px (at 1080 lines) at least 0.7x as often as the dedicated figure places names;
refinements replace each other; the whole figure comes back with the overview's objects
(within 10 %); one rendered PNG per zoom is kept for a look (``TV3D_ZOOM_PNG_DIR``).
"""
import json
import os
import shutil

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

import tracevis3d  # noqa: E402
from tracevis3d.blender import view  # noqa: E402
from tracevis3d.blender.figure_report import view_measures  # noqa: E402
from zoom_helpers import busiest_window, names_enough, names_in_frame  # noqa: E402

WINDOWS_US = (2000.0, 50000.0)


@pytest.fixture(scope="module")
def saved(docutils_pool_paths, tmp_path_factory):
    """(trace, .blend path, overview object count, its meta) of the pool's thread view, built and saved."""
    from tracevis3d.blender.hygiene import remove_startup_defaults
    from tracevis3d.blender.threads_tasks import threads_build_job

    path = str(docutils_pool_paths[0])
    bpy.ops.wm.read_factory_settings(use_empty=True)
    remove_startup_defaults(bpy.context.scene)
    trace = tracevis3d.load(path)
    threads_build_job(trace, {}, scene=bpy.context.scene).run(interval=0.02)
    blend = str(tmp_path_factory.mktemp("zoom_threads") / "pool_threads.blend")
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    return trace, blend, len(bpy.data.objects), json.loads(bpy.context.scene["tracevis3d_meta"])


def _dedicated(trace, window, meta):
    """The dedicated ``render-threads --window`` figure of the window, of the overview's threads and focus."""
    from tracevis3d.layout.threads import threads_layout
    from tracevis3d.layout.threads_params import ThreadsParams

    return threads_layout(trace, ThreadsParams(time_window=window, window="all", threads=meta["lane_threads"],
                                               focus=meta["focus_thread"]).validate())


@pytest.mark.timeout(1200)
def test_the_thread_view_zooms_beside_its_overview(saved, tmp_path):
    trace, blend, n_objects, meta = saved
    bpy.ops.wm.open_mainfile(filepath=blend)
    scene = bpy.context.scene
    overview_cam = scene.camera.name
    from tracevis3d.blender.render import render_figure

    keep = os.environ.get("TV3D_ZOOM_PNG_DIR")
    counts = []
    for width in WINDOWS_US:
        window = busiest_window(trace, width)
        out = view.zoom_to(scene, window=window)
        assert out["action"] == "refine" and out["window"] == pytest.approx(window)
        m = out["meta"]
        assert m["layout"] == "threads" and m["t0"] == pytest.approx(window[0]) and m["t1"] == pytest.approx(window[1])
        # the overview's threads, focus and lane colours
        assert m["lane_threads"] == meta["lane_threads"] and m["focus_thread"] == meta["focus_thread"]
        dedicated = _dedicated(trace, window, meta)
        assert np.allclose(m["lane_rgb"], dedicated.meta["lane_rgb"])
        n_dedicated = sum(1 for k in dedicated.labels.kind if k in view.NAME_KINDS)
        names = names_in_frame(scene)
        assert names_enough(len(names), n_dedicated), (width, len(names), n_dedicated)
        # beside the overview: the overview's camera frame and the zoom's do not overlap
        assert out["offset"][0] > 0 and scene.camera.name != overview_cam
        png = str(tmp_path / f"threads_zoom_{width / 1000:g}ms.png")
        render_figure(png, scene=scene, resolution=(960, 540))
        assert view_measures(png, view.ZOOM_COLLECTION, scene)["empty_share"] <= 0.5
        if keep:
            shutil.copy(png, keep)
        counts.append(len(bpy.data.objects))
    assert max(counts) <= 2 * n_objects + 200, counts  # refinements replace each other
    out = view.zoom_to(scene, window=None)
    assert out["action"] == "overview" and view.zoom_state(scene) is None
    assert abs(len(bpy.data.objects) - n_objects) <= 0.1 * n_objects
    assert scene.camera.name == overview_cam


def test_the_viewport_path_and_the_other_views_say_why_not(saved):
    trace, blend, n_objects, meta = saved
    bpy.ops.wm.open_mainfile(filepath=blend)
    scene = bpy.context.scene
    persp, region = view.camera_persp(scene)
    with pytest.raises(ValueError, match="thread view refines a window"):
        view.zoom_to_view(scene, persp, region)
    scene["tracevis3d_meta"] = json.dumps({"layout": "cone"})
    with pytest.raises(ValueError, match="no time axis"):
        view.zoom_to(scene, window=busiest_window(trace, 2000.0))
