"""Scene hygiene with real bpy: Blender's untouched startup Cube, Light and Camera leave a
figure built into a fresh file; anything a user made or edited stays (issue 8, item 7).

In-process (the bpy module, factory startup: the conftest isolates Blender's user folders).
"""
import json
import math

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")

from tracevis3d.blender import hygiene  # noqa: E402

STARTUP = ("Cube", "Light", "Camera")


def factory_scene(empty=False):
    bpy.ops.wm.read_homefile(use_factory_startup=True, use_empty=empty)
    return bpy.context.scene


def names():
    return sorted(ob.name for ob in bpy.context.scene.objects)


def write_trace(path):
    """Two threads, a few calls wide enough to be boxes with labels."""
    ev = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "MainThread"}},
          {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "worker"}},
          {"ph": "X", "name": "main (app.py:1)", "ts": 0, "dur": 1000, "pid": 1, "tid": 1},
          {"ph": "X", "name": "load (app.py:10)", "ts": 10, "dur": 300, "pid": 1, "tid": 1},
          {"ph": "X", "name": "compute (app.py:30)", "ts": 400, "dur": 550, "pid": 1, "tid": 1},
          {"ph": "X", "name": "loop (pool.py:3)", "ts": 100, "dur": 800, "pid": 1, "tid": 2},
          {"ph": "X", "name": "kernel (math.py:7)", "ts": 200, "dur": 500, "pid": 1, "tid": 2}]
    path.write_text(json.dumps({"traceEvents": ev}))
    return path


def test_startup_objects_are_recognised_and_removed_with_their_data():
    scene = factory_scene()
    assert names() == sorted(STARTUP)
    assert all(hygiene.is_startup_default(ob, scene) for ob in scene.objects)
    removed = hygiene.remove_startup_defaults(scene)
    assert sorted(removed) == sorted(STARTUP) and names() == []
    assert "Cube" not in bpy.data.meshes and "Light" not in bpy.data.lights and "Camera" not in bpy.data.cameras
    assert "Material" not in bpy.data.materials
    assert hygiene.remove_startup_defaults(scene) == []  # idempotent


def _move(ob):
    ob.location.x += 0.5


def _rename(ob):
    ob.name = ob.name + "_mine"


def _scale(ob):
    ob.scale = (1.0, 1.0, 3.0)


def _prop(ob):
    ob["note"] = "keep me"


def _hide(ob):
    ob.hide_render = True


def _data_edit(ob):
    if ob.type == "MESH":
        ob.data.vertices[0].co.z += 0.25
    elif ob.type == "LIGHT":
        ob.data.energy = 250.0
    else:
        ob.data.lens = 85.0


def _material(ob):
    if ob.type == "MESH":
        ob.data.materials[0].diffuse_color = (1.0, 0.0, 0.0, 1.0)
    elif ob.type == "LIGHT":
        ob.data.color = (1.0, 0.5, 0.5)
    else:
        ob.data.clip_end = 500.0


def _modifier(ob):
    ob.constraints.new("TRACK_TO") if ob.type != "MESH" else ob.modifiers.new("bevel", "BEVEL")


def _parent(ob):
    empty = bpy.data.objects.new("anchor", None)
    bpy.context.scene.collection.objects.link(empty)
    ob.parent = empty


def _other_collection(ob):
    coll = bpy.data.collections.new("Mine")
    bpy.context.scene.collection.children.link(coll)
    coll.objects.link(ob)
    bpy.data.collections["Collection"].objects.unlink(ob)


def _tiny_move(ob):  # within float32 noise of the factory value: still a default
    ob.location.x += 1e-7


EDITS = {"moved": _move, "renamed": _rename, "scaled": _scale, "custom property": _prop,
         "hidden": _hide, "data edited": _data_edit, "material/colour edited": _material,
         "modifier or constraint": _modifier, "parented": _parent, "other collection": _other_collection}


@pytest.mark.parametrize("edit", sorted(EDITS))
@pytest.mark.parametrize("which", STARTUP)
def test_an_edited_startup_object_stays(which, edit):
    scene = factory_scene()
    ob = scene.objects[which]
    EDITS[edit](ob)
    name = ob.name
    removed = hygiene.remove_startup_defaults(scene)
    assert name in scene.objects, f"{edit} {which} was removed"
    assert sorted(removed) == sorted(set(STARTUP) - {which})


def test_float_noise_is_not_an_edit():
    scene = factory_scene()
    _tiny_move(scene.objects["Cube"])
    assert sorted(hygiene.remove_startup_defaults(scene)) == sorted(STARTUP)


def test_user_objects_stay_even_a_new_default_cube():
    """Add > Mesh > Cube at the origin looks like the startup cube but carries no material;
    an object the user made from scratch is never touched."""
    scene = factory_scene(empty=True)
    bpy.ops.mesh.primitive_cube_add(size=2.0, location=(0, 0, 0))
    me = bpy.data.meshes.new("mine")
    mine = bpy.data.objects.new("MyThing", me)
    scene.collection.objects.link(mine)
    assert hygiene.remove_startup_defaults(scene) == []
    assert names() == ["Cube", "MyThing"]


def _image(path):
    img = bpy.data.images.load(str(path), check_existing=False)
    try:
        w, h = img.size
        a = np.empty(w * h * 4, np.float32)
        img.pixels.foreach_get(a)
        return a.reshape(h, w, 4)[::-1, :, :3]
    finally:
        bpy.data.images.remove(img)


def _cube_region(scene, w, h):
    """Pixel box (x0, x1, y0, y1) of the startup cube ([-1, 1]^3) seen by the scene camera."""
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    pts = [world_to_camera_view(scene, scene.camera, Vector((x, y, z)))
           for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
    xs = [p.x * w for p in pts]
    ys = [(1 - p.y) * h for p in pts]  # image rows from the top
    return (max(0, math.floor(min(xs))), min(w, math.ceil(max(xs))),
            max(0, math.floor(min(ys))), min(h, math.ceil(max(ys))))


@pytest.mark.blender
def test_render_of_a_fresh_file_shows_no_startup_object(tmp_path):
    """Built into the startup scene, the figure is pixel for pixel the figure built into an
    empty file; a cube where the startup cube was would show (the check is not vacuous)."""
    from tracevis3d import load
    from tracevis3d.blender.render import render_figure
    from tracevis3d.blender.scene import build_icicle
    from tracevis3d.params.icicle import IcicleParams

    trace_file = write_trace(tmp_path / "t.json")
    trace = load(str(trace_file))
    w, h = 320, 180
    params = IcicleParams(resolution=(w, h))

    def figure(startup: bool, name: str, add_cube=False):
        scene = factory_scene(empty=not startup)
        if startup:
            assert sorted(hygiene.remove_startup_defaults(scene)) == sorted(STARTUP)
        build_icicle(trace, params, scene=scene, trace_path=str(trace_file))
        assert not set(STARTUP) & set(names())
        if add_cube:
            bpy.ops.mesh.primitive_cube_add(size=2.0, location=(0, 0, 0))
        out = render_figure(tmp_path / name, resolution=(w, h))
        return _image(out), scene

    fresh, scene = figure(True, "fresh.png")
    x0, x1, y0, y1 = _cube_region(scene, w, h)
    empty, _ = figure(False, "empty.png")
    with_cube, _ = figure(False, "cube.png", add_cube=True)
    assert x1 - x0 >= 4 and y1 - y0 >= 4, "the startup cube's place is inside the frame"
    assert np.abs(fresh - empty).max() < 2 / 255, "the fresh-file figure differs from the empty-file one"
    diff = np.abs(with_cube - empty).max(-1) > 0.05
    assert diff[y0:y1, x0:x1].mean() > 0.2, "a cube at the origin would be visible in the figure"


# ------------------------------------------------------------------ where the trace is
def test_relative_paths_round_trip(tmp_path):
    blend = tmp_path / "proj" / "scene.blend"
    trace = tmp_path / "proj" / "data" / "t.json"
    rel = hygiene.relative_to_blend(trace, blend)
    assert rel == "//data/t.json"
    assert hygiene.from_blend_relative(rel, blend) == str(trace)
    assert hygiene.relative_to_blend(tmp_path / "elsewhere.json", blend) == "//../elsewhere.json"
    assert hygiene.relative_to_blend(trace, "") is None and hygiene.from_blend_relative(rel, "") is None
    assert hygiene.from_blend_relative("/abs/t.json", blend) is None


def test_recorded_trace_path_prefers_the_absolute_path_then_the_moved_folder(tmp_path):
    scene = factory_scene(empty=True)
    a = tmp_path / "a"
    a.mkdir()
    trace = write_trace(a / "t.json")
    hygiene.write_build_record(scene, {"trace_path": str(trace), "trace_path_rel": None, "params": {}})
    hygiene.remember_blend_location(scene, str(a / "scene.blend"))
    assert hygiene.read_build_record(scene)["trace_path_rel"] == "//t.json"
    assert hygiene.recorded_trace_path(scene, str(a / "scene.blend")) == (str(trace), str(trace))
    b = tmp_path / "b"
    a.rename(b)  # the folder moved: the absolute path is gone, the relative one finds it
    assert hygiene.recorded_trace_path(scene, str(b / "scene.blend")) == (str(b / "t.json"), str(trace))
    (b / "t.json").unlink()
    assert hygiene.recorded_trace_path(scene, str(b / "scene.blend")) == (None, str(trace))


@pytest.mark.parametrize("raw", ["", "not json {", "[1, 2]", "null", json.dumps({"params": 5})])
def test_unreadable_build_records_are_ignored(raw):
    scene = factory_scene(empty=True)
    scene[hygiene.BUILD_KEY] = raw
    rec = hygiene.read_build_record(scene)
    assert rec is None or isinstance(rec, dict)
    found, recorded = hygiene.recorded_trace_path(scene, "/tmp/x.blend")
    assert found is None and recorded is None
    hygiene.remember_blend_location(scene, "/tmp/x.blend")  # no error, nothing invented
    assert scene[hygiene.BUILD_KEY] == raw


@pytest.mark.blender
def test_build_records_the_trace_file_absolute(tmp_path, monkeypatch):
    """An .npz's meta names the original JSON: the record names the file actually read."""
    from tracevis3d import load
    from tracevis3d.blender.scene import build_icicle, build_info
    from tracevis3d.params.icicle import IcicleParams

    trace_file = write_trace(tmp_path / "t.json")
    monkeypatch.chdir(tmp_path)
    trace = load("t.json")  # a relative path as given on a command line
    scene = factory_scene(empty=True)
    build_icicle(trace, IcicleParams(resolution=(160, 90), color_by="kind"), scene=scene)
    info = build_info(scene)
    assert info["trace_path"] == str(trace_file) and info["params"]["color_by"] == "kind"
    build_icicle(trace, IcicleParams(resolution=(160, 90)), scene=scene, trace_path=str(tmp_path / "t.tv3d.npz"))
    assert build_info(scene)["trace_path"] == str(tmp_path / "t.tv3d.npz")
