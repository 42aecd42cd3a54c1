"""Fly into a comparison (issue 70): `tracevis3d.blender.view.zoom_to` on a comparison scene
of two real recordings (a JSON tool run on two documents, committed: tests/data/recorded).

A zoom lays out the dedicated ``render-compare --window-a --window-b`` figure of A's window
and B's window aligned to it (as wide, moved by the median offset of the matches of A's
calls in it, `refine.aligned_window`) beside the overview, and puts the scene camera on it.
Measured through the camera: names of calls at >= 14 px (at 1080 lines) at least 0.7x what
the dedicated figure places; the whole figure comes back with the overview's objects.
"""
import os
import shutil

import pytest

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

from tracevis3d.blender import view  # noqa: E402
from tracevis3d.blender.figure_report import view_measures  # noqa: E402
from zoom_helpers import busiest_window, names_in_frame  # noqa: E402


@pytest.mark.timeout(1200)
def test_the_comparison_zooms_both_sides_to_an_aligned_window(json_pair_paths, tmp_path):
    from tracevis3d.blender.hygiene import remove_startup_defaults
    from tracevis3d.blender.render import render_figure
    from tracevis3d.blender.tasks import compare_build_job, compare_job
    from tracevis3d.layout.compare import CompareParams, compare_layout

    pa, pb = (str(p) for p in json_pair_paths[:2])
    bpy.ops.wm.read_factory_settings(use_empty=True)
    remove_startup_defaults(bpy.context.scene)
    cmp = compare_job(pa, pb, tau=0.2).run(interval=0.02)
    compare_build_job(cmp, {}, scene=bpy.context.scene, paths=(pa, pb)).run(interval=0.02)
    scene = bpy.context.scene
    n_objects, overview_cam = len(bpy.data.objects), scene.camera.name
    span = float(cmp.a.end.max() - cmp.a.start.min())
    keep = os.environ.get("TV3D_ZOOM_PNG_DIR")
    for width in (2000.0, 0.25 * span):
        window = busiest_window(cmp.a, width)
        out = view.zoom_to(scene, window=window)
        m = out["meta"]
        assert out["action"] == "refine" and m["layout"] == "compare"
        assert m["window_a"] == pytest.approx(window, abs=1e-6 * span)
        wb = m["window_b"]
        assert wb[1] - wb[0] == pytest.approx(window[1] - window[0], rel=1e-6) or wb[0] <= float(cmp.b.start.min())
        dedicated = compare_layout(cmp, CompareParams(window_a=window, window_b=tuple(wb)).validate())
        n_dedicated = sum(1 for k in dedicated.labels.kind if k in view.NAME_KINDS)
        names = names_in_frame(scene)
        assert len(names) >= 0.7 * n_dedicated, (width, len(names), n_dedicated)
        assert out["offset"][0] > 0 and scene.camera.name != overview_cam
        png = str(tmp_path / f"compare_zoom_{width / 1000:g}ms.png")
        render_figure(png, scene=scene, resolution=(960, 540))
        assert view_measures(png, view.ZOOM_COLLECTION, scene)["empty_share"] <= 0.5
        if keep:
            shutil.copy(png, keep)
    out = view.zoom_to(scene, window=None)
    assert out["action"] == "overview" and view.zoom_state(scene) is None
    assert abs(len(bpy.data.objects) - n_objects) <= 0.1 * n_objects and scene.camera.name == overview_cam
