"""Zoom into the cone tree (issue 70): `tracevis3d.blender.view.zoom_to(scene, call=...)` on a
saved cone tree of a real deep trace (json.tool on a 105-level document, committed: tests/data/recorded).

The cone tree's "window" is a subtree: the zoom lays out the dedicated ``render-cone --root CALL``
figure beside the overview (`blender.cone_zoom`) and puts the scene camera on it.  Measured in
pixels through the camera: the zoomed view names calls at >= 14 px (at 1080 lines) at least 0.7x
as often as the dedicated figure places names, its frame is at most half blank (rendered), zooms
replace each other, the whole tree comes back with the overview's objects (within 10 %); a fresh
Blender process opens the saved .blend alone and zooms by a function name.  One rendered PNG per
zoom is kept for a look where ``TV3D_ZOOM_PNG_DIR`` names a folder.
"""
import json
import os
import shutil
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
from zoom_helpers import names_enough, names_in_frame  # noqa: E402


def _subtree_calls(trace) -> list:
    """Two calls whose subtrees are worth a cone of their own: the largest subtree of at most a
    quarter of the trace's calls (by calls: their number is the same in every recording, their
    times are not), and the largest of 300+ calls inside it holding at most half of it (a zoom
    further in).  Both are imports here (bushy subtrees: json.tool's argument parsing is a
    narrow chain that frames two thirds blank, as its dedicated figure does)."""
    size = trace.end_index.astype(np.int64) - np.arange(len(trace))
    ok = np.flatnonzero((size >= 300) & (size <= 0.25 * len(trace)))
    first = int(ok[np.argsort(-size[ok], kind="stable")[0]])
    inside = np.arange(first + 1, int(trace.end_index[first]))
    inside = inside[(size[inside] >= 300) & (2 * size[inside] <= size[first])]
    return [first, int(inside[np.argsort(-size[inside], kind="stable")[0]])]


def _dedicated(trace, call: int):
    """The dedicated ``render-cone --root CALL`` figure (its layout)."""
    from tracevis3d.layout.cone import ConeParams, cone_layout

    return cone_layout(trace, ConeParams(root=call))


@pytest.fixture(scope="module")
def saved(deep_trace_path, tmp_path_factory):
    """(trace, .blend path, overview object count, trace path) of the deep trace's cone tree, built and saved."""
    from tracevis3d.blender.cone_tasks import cone_build_job
    from tracevis3d.blender.hygiene import remove_startup_defaults

    path = str(deep_trace_path)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    remove_startup_defaults(bpy.context.scene)
    trace = tracevis3d.load(path)
    cone_build_job(trace, {}, scene=bpy.context.scene, trace_path=path).run(interval=0.02)
    blend = str(tmp_path_factory.mktemp("zoom_cone") / "deep_cone.blend")
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    return trace, blend, len(bpy.data.objects), path


@pytest.mark.timeout(1200)
def test_the_cone_tree_zooms_to_a_subtree_beside_its_overview(saved, tmp_path):
    trace, blend, n_objects, _ = saved
    bpy.ops.wm.open_mainfile(filepath=blend)
    scene = bpy.context.scene
    overview_cam = scene.camera.name
    from tracevis3d.blender.render import render_figure

    calls = _subtree_calls(trace)
    keep = os.environ.get("TV3D_ZOOM_PNG_DIR")
    counts = []
    for call in calls + calls[:1]:  # a subtree, one inside it, the first again: zooms replace each other
        out = view.zoom_to(scene, call=call)
        assert out["action"] == "refine" and out["call"] == call and out["window"] is None
        m = out["meta"]
        assert m["layout"] == "cone" and m["root_call"] == call
        assert out["calls_drawn"] == int(trace.end_index[call]) - call - m["n_folded_calls"]
        dedicated = _dedicated(trace, call)
        assert m["n_nodes"] == dedicated.meta["n_nodes"] and m["title"] == dedicated.meta["title"]
        n_dedicated = sum(1 for k in dedicated.labels.kind if k in view.NAME_KINDS)
        names = names_in_frame(scene)
        assert names_enough(len(names), n_dedicated), (call, len(names), n_dedicated)
        # beside the overview, the scene camera on the subtree
        assert out["offset"][0] > 0 and scene.camera.name == out["camera"] != overview_cam
        # a sphere of the zoom picked from its camera is a call of the loaded trace, in the subtree
        from tracevis3d.blender.pick import pick_ray

        cam = np.array(scene.camera.matrix_basis.translation)  # no parent: its location as just moved
        node = np.asarray(m["node_positions"])[len(m["node_positions"]) // 2] + np.asarray(out["offset"])
        hit = pick_ray(cam, node - cam, collection_name=view.ZOOM_COLLECTION)
        assert hit is not None and call <= hit < trace.end_index[call], hit
        png = str(tmp_path / f"cone_zoom_{call}.png")
        render_figure(png, scene=scene, resolution=(960, 540))
        if keep:
            shutil.copy(png, keep)
        assert view_measures(png, view.ZOOM_COLLECTION, scene)["empty_share"] <= 0.5, (call, trace.name(call))
        counts.append(len(bpy.data.objects))
    assert counts[2] == counts[0], counts  # the same zoom again: the same objects, nothing piled up
    assert max(counts) <= 2 * n_objects + 200, counts
    out = view.zoom_to(scene, call=None)
    assert out["action"] == "overview" and view.zoom_state(scene) is None
    assert abs(len(bpy.data.objects) - n_objects) <= 0.1 * n_objects
    assert scene.camera.name == overview_cam


def test_the_cone_says_why_a_window_or_a_view_does_not_zoom_it(saved):
    trace, blend, n_objects, _ = saved
    bpy.ops.wm.open_mainfile(filepath=blend)
    scene = bpy.context.scene
    with pytest.raises(ValueError, match="zooms to a subtree, zoom_to"):
        view.zoom_to(scene, window=(float(trace.start[0]), float(trace.end[0])))
    persp, region = view.camera_persp(scene)
    with pytest.raises(ValueError, match="does not follow it"):
        view.zoom_to_view(scene, persp, region)
    with pytest.raises(ValueError, match="no call in the trace is named like 'no such function'"):
        view.zoom_to(scene, call="no such function")
    with pytest.raises(ValueError, match=f"no call {len(trace)} in the trace"):
        view.zoom_to(scene, call=len(trace))
    assert view.zoom_state(scene) is None and len(bpy.data.objects) == n_objects
    meta = json.loads(scene["tracevis3d_meta"])
    scene["tracevis3d_meta"] = json.dumps(dict(meta, layout="icicle"))  # a figure with a time axis
    with pytest.raises(ValueError, match=r"a subtree; this icicle figure zooms to a window \(zoom_to\(window="):
        view.zoom_to(scene, call=0)


@pytest.mark.timeout(600)
def test_a_fresh_blender_opens_the_saved_cone_tree_and_zooms(saved):
    """Another Blender opens the .blend alone, finds the trace from the cone's build record and
    zooms to a function's longest call by its name."""
    from tracevis3d.transform import find_call

    trace, blend, n_objects, _ = saved
    call = _subtree_calls(trace)[0]
    name = trace.name(call)
    script = textwrap.dedent(f"""
        import json, bpy
        bpy.ops.wm.open_mainfile(filepath={blend!r})
        from tracevis3d.blender import view
        n0 = len(bpy.data.objects)
        out = view.zoom_to(bpy.context.scene, call={name!r})
        zoomed = len(bpy.data.objects)
        back = view.zoom_to(bpy.context.scene, call=None)
        print("RESULT", json.dumps({{"n0": n0, "call": out["call"], "calls": out["calls_drawn"],
                                    "names": len(out["names"]), "zoomed": zoomed, "after": len(bpy.data.objects)}}))
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in [str(os.path.dirname(os.path.dirname(
        tracevis3d.__file__))), os.environ.get("PYTHONPATH", "")] if p))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=500, env=env)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    assert r.returncode == 0 and lines, r.stderr[-2000:]
    res = json.loads(lines[-1][7:])
    assert res["call"] == find_call(trace, name)
    n_dedicated = sum(1 for k in _dedicated(trace, res["call"]).labels.kind if k in view.NAME_KINDS)
    assert res["calls"] > 0 and res["names"] == n_dedicated and res["zoomed"] > res["n0"], res
    assert res["after"] == res["n0"] == n_objects, res


@pytest.mark.timeout(600)
def test_the_panels_zoom_to_operator_zooms_the_cone_to_the_picked_call(saved):
    """"Zoom to…" of the panel on a cone tree, headless (the job runs to its end): the picked
    call's subtree, then the whole tree; a typed time range is refused (no time axis)."""
    from addon_loader import registered_addon

    trace, blend, n_objects, _ = saved
    fixture = registered_addon()
    next(fixture)
    try:
        bpy.ops.wm.open_mainfile(filepath=blend)
        scene = bpy.context.scene
        call = _subtree_calls(trace)[1]
        scene.tracevis3d.picked_call = call
        assert bpy.ops.tracevis3d.zoom_to(target="PICKED") == {"FINISHED"}
        st = view.zoom_state(scene)
        assert st["layout"] == "cone" and st["call"] == call and scene.camera.name == "TV3D_zoom_camera"
        n_dedicated = sum(1 for k in _dedicated(trace, call).labels.kind if k in view.NAME_KINDS)
        assert names_enough(len(names_in_frame(scene)), n_dedicated)
        with pytest.raises(RuntimeError, match="no time axis"):
            bpy.ops.tracevis3d.zoom_to(target="RANGE", start="1ms", end="2ms")
        assert bpy.ops.tracevis3d.zoom_to(target="WHOLE") == {"FINISHED"}
        assert view.zoom_state(scene) is None and len(bpy.data.objects) == n_objects
    finally:
        next(fixture, None)
