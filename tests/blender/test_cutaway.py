"""Cutaways (issue 25, item 4): the box from the camera to a call or lane (`layout.cutaway`),
and the Geometry Nodes modifier that removes what lies inside it in Blender, in renders
(pixels) and from the command line."""
import re
import subprocess
import sys

import numpy as np
import pytest

import tracevis3d
from tracevis3d.layout import IcicleParams, icicle_layout
from tracevis3d.layout.camera import camera_basis, project
from tracevis3d.params.trace_kinds import parse_cutaway

from cutaway_box import inside_box


def test_parse_cutaway():
    assert parse_cutaway("call:12") == ("call", 12)
    assert parse_cutaway("lane:MainThread") == ("lane", "MainThread") and parse_cutaway("lane:2") == ("lane", 2)
    assert parse_cutaway(None) is None and parse_cutaway("none") is None
    for bad in ("call:x", "lane:", "box", "call:-1"):
        with pytest.raises(ValueError, match="cutaway must be"):
            parse_cutaway(bad)
    with pytest.raises(ValueError, match="cutaway"):
        IcicleParams(cutaway="nope").validate()


def test_the_box_holds_the_way_from_the_camera_to_the_call_and_not_the_call():
    t = tracevis3d.synthetic(3000, threads=2, seed=2)
    spec0 = icicle_layout(t, IcicleParams(resolution=(960, 540)))
    calls = spec0.layer("calls")
    j = int(np.argmax(calls.scales[:, 0] * (calls.attributes["depth"] == 2)))
    ci = int(calls.attributes["call_index"][j])
    spec = icicle_layout(t, IcicleParams(resolution=(960, 540), cutaway=f"call:{ci}"))
    box = spec.meta["cutaway"]
    centre = calls.positions[j].astype(np.float64)
    eye = np.asarray(spec.camera.location)
    front = centre - np.array([0, calls.scales[j, 1] / 2, 0])  # the call's front face
    way = eye + (front - eye) * np.linspace(0.05, 0.95, 12)[:, None]
    assert inside_box(box, way).all()  # everything on the way from the camera to the call
    assert not inside_box(box, centre[None])[0]  # the call itself stays
    # the footprint covers the call's front face on the image, not far more
    r, u, f = camera_basis(eye - np.asarray(spec.camera.target), spec.camera.up)
    assert abs(np.dot(r, [1.0, 0, 0])) > 0.5 and box["perspective"] == 1.0
    far_half_width = box["scale"][0]  # at the target's distance
    assert calls.scales[j, 0] / 2 < far_half_width < 1.5 * calls.scales[j, 0]
    beside = front + np.array([3 * calls.scales[j, 0], 0, 0])  # a box beside the call is not in the way
    assert not inside_box(box, (eye + (beside - eye) * 0.9)[None]).any()
    lanes = icicle_layout(t, IcicleParams(resolution=(960, 540), cutaway="lane:1"))
    assert "cutaway" in lanes.meta
    with pytest.raises(ValueError, match="no lane"):
        icicle_layout(t, IcicleParams(resolution=(960, 540), cutaway="lane:nosuch"))
    with pytest.raises(ValueError, match="not drawn"):
        icicle_layout(t, IcicleParams(resolution=(960, 540), cutaway=f"call:{len(t) + 5}"))


def test_a_thread_name_of_several_lanes_is_refused_with_the_lanes():
    """Three renderers each with a "CrRendererMain": ``lane:CrRendererMain`` names three lanes and
    is refused with their names (it cut in front of the first, silently); a lane's whole name
    picks it."""
    t = tracevis3d.synthetic(3000, threads=3, seed=5)
    t.thread_names = ["CrRendererMain"] * 3
    t.thread_pid = np.array([10, 20, 30], np.int64)
    t.process_names = ["Renderer"] * 3
    spec = icicle_layout(t, IcicleParams(resolution=(960, 540)))
    lanes = list(spec.meta["lane_names"])
    with pytest.raises(ValueError, match="names threads in 3 lanes: " + ", ".join(map(re.escape, lanes))):
        icicle_layout(t, IcicleParams(resolution=(960, 540), cutaway="lane:CrRendererMain"))
    one = icicle_layout(t, IcicleParams(resolution=(960, 540), cutaway=f"lane:{lanes[1]}"))
    assert "cutaway" in one.meta


@pytest.mark.blender
def test_the_modifier_removes_boxes_inside_in_renders_and_keyframes_reveal(tmp_path):
    bpy = pytest.importorskip("bpy")
    from tracevis3d.blender.cutaway import EMPTY, MODIFIER, animate_reveal, apply_cutaway, remove_cutaway
    from tracevis3d.blender.figure_report import load_image
    from tracevis3d.blender.hygiene import remove_startup_defaults
    from tracevis3d.blender.render import render_figure, save_blend
    from tracevis3d.blender.scene import build_icicle

    t = tracevis3d.synthetic(3000, threads=2, seed=2)
    bpy.ops.wm.read_factory_settings()
    remove_startup_defaults(bpy.context.scene)
    p = IcicleParams(resolution=(640, 360), show_labels=False)
    build_icicle(t, p)
    spec = icicle_layout(t, p)
    calls = spec.layer("calls")
    j = int(np.argmax(calls.scales[:, 0] * (calls.attributes["depth"] == 1)))
    c = calls.positions[j]
    front = c - np.array([0, calls.scales[j, 1] / 2 - 1e-3, 0])
    px = project(spec.camera, front[None], p.resolution)[0].round().astype(int)
    render_figure(str(tmp_path / "a.png"), engine="workbench", resolution=p.resolution)
    coll = bpy.data.collections["TraceVis3D"]
    # a pyramid from in front of the call through its centre: the call is gone, what was behind it shows
    from tracevis3d.layout.camera import euler_xyz

    D = 3.0 * float(calls.scales[j, 2])
    rot = euler_xyz([1.0, 0, 0], [0, 0, 1.0], [0, -1.0, 0])  # local -z looks along +y, into the picture
    box = {"location": (c - np.array([0, D, 0])).tolist(), "rotation": rot.tolist(),
           "scale": [float(calls.scales[j, 0]) * 0.3, float(calls.scales[j, 2]) * 0.3, D * 1.2], "perspective": 1.0}
    ob = apply_cutaway(box, coll)
    assert all(MODIFIER in o.modifiers for o in coll.all_objects if o.type == "POINTCLOUD" and o.parent is None)
    render_figure(str(tmp_path / "b.png"), engine="workbench", resolution=p.resolution)
    a, b = load_image(tmp_path / "a.png", channels=3), load_image(tmp_path / "b.png", channels=3)
    y, x = px[1], px[0]
    assert np.abs(a[y, x] - b[y, x]).max() > 0.1, (a[y, x], b[y, x])
    assert np.mean(np.abs(a - b).max(axis=2) > 0.05) < 0.2  # the rest of the figure stays
    # a reveal: from nothing at frame 1 to the box at frame 10, plain keyframes in the .blend
    animate_reveal(ob, 1, 10)
    scene = bpy.context.scene
    scene.frame_set(1)
    render_figure(str(tmp_path / "c.png"), engine="workbench", resolution=p.resolution)
    c0 = load_image(tmp_path / "c.png", channels=3)
    assert np.abs(c0[y, x] - a[y, x]).max() < 0.02 and np.mean(np.abs(c0 - a).max(axis=2) > 0.05) < 1e-3  # nothing cut yet
    assert ob.animation_data.action is not None
    save_blend(str(tmp_path / "cut.blend"), scene)
    remove_cutaway(coll)
    assert bpy.data.objects.get(EMPTY) is None
    assert not any(MODIFIER in o.modifiers for o in coll.all_objects if o.type == "POINTCLOUD")


def test_cli_option(tmp_path):
    t = tracevis3d.synthetic(500, threads=1, seed=1)
    path = tmp_path / "t.tv3d.npz"
    tracevis3d.save(t, path)
    r = subprocess.run([sys.executable, "-m", "tracevis3d", "render-icicle", str(path), "-o", str(tmp_path / "x.png"),
                        "--cutaway", "box:1"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "cutaway must be" in r.stderr and r.stderr.count("\n") <= 2, r.stderr
