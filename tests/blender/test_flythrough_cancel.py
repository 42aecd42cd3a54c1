"""Set Up Animation as a job (issue 70 follow-ups): a fly-through into a window cancelled part-way
leaves the scene exactly as it was (an earlier animation, a zoom in place), and a scene zoomed in
place (`view.zoom_to`) is unzoomed before it is animated.

The panel runs `animate.animate_job` from a modal timer and says "cancelled; nothing was
changed" (`ui.operators.common.JobOperator`); here the same job is polled and cancelled at a given
step: while level 1 is laid out in its worker, while level 2 is written, and once every level is
built.  The scene's data (objects, their places, visibility, modifiers and keys, collections,
node groups, the camera and its keys, the scene's records) are compared before and after.
"""
import json

import pytest

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

import tracevis3d  # noqa: E402

MAX_POLLS = 200_000  # a poll that never reaches its step fails the test, never hangs it


def _keys(idblock) -> list:
    from tracevis3d.blender.anim_camera import action_fcurves

    ad = getattr(idblock, "animation_data", None)
    if ad is None or ad.action is None:
        return []
    return sorted((fc.data_path, fc.array_index, tuple(round(v, 5) for kp in fc.keyframe_points for v in kp.co))
                  for fc in action_fcurves(ad.action, idblock))


def _snapshot(scene) -> dict:
    """What an animation or a zoom changes in the scene, as plain values."""
    from tracevis3d.blender.anim_refine import FLY_KEY
    from tracevis3d.blender.animate import ANIM_KEY, META_KEY
    from tracevis3d.blender.zoom_split import STATE_KEY

    obs = {}
    for ob in bpy.data.objects:
        obs[ob.name] = (ob.type, ob.parent.name if ob.parent else None, sorted(c.name for c in ob.users_collection),
                        tuple(round(v, 5) for v in ob.location), tuple(round(v, 5) for v in ob.rotation_euler),
                        ob.hide_render, ob.hide_viewport, sorted(k for k in ob.keys() if not k.startswith("_")),
                        [(m.name, getattr(getattr(m, "node_group", None), "name", None), m.show_render)
                         for m in ob.modifiers], _keys(ob))
    cam = scene.camera
    c = cam.data if cam is not None else None
    return {"objects": obs,
            "collections": {co.name: sorted(o.name for o in co.objects) for co in bpy.data.collections},
            "node_groups": sorted(ng.name for ng in bpy.data.node_groups),
            "camera": None if cam is None else (cam.name, c.lens, c.shift_x, c.shift_y, c.clip_start, c.clip_end,
                                                c.ortho_scale, _keys(c)),
            "records": {k: scene.get(k) for k in (ANIM_KEY, FLY_KEY, STATE_KEY, META_KEY)},
            "clock": sorted((k, scene[k]) for k in scene.keys() if k.startswith("TraceVis3D clock")),
            "frames": (scene.frame_start, scene.frame_end, scene.render.fps)}


def _figure(tmp_path, seed: int = 3):
    from tracevis3d.blender.hygiene import remove_startup_defaults
    from tracevis3d.blender.scene import build_icicle
    from tracevis3d.params.icicle import IcicleParams

    path = tmp_path / "run.json"
    tracevis3d.save(tracevis3d.synthetic(4000, threads=2, seed=seed), path, format="chrome")
    trace = tracevis3d.load(path)
    scene = bpy.context.scene
    remove_startup_defaults(scene)
    build_icicle(trace, IcicleParams(resolution=(320, 180)), trace_path=str(path))
    return trace, scene


def _window(trace, magnification: float) -> tuple:
    from zoom_helpers import busiest_window

    return busiest_window(trace, (float(trace.end.max()) - float(trace.start.min())) / magnification)


def _cancel_at(job, step: str) -> None:
    """Poll ``job`` until it is at ``step``, cancel it, and poll until it has stopped."""
    from tracevis3d.blender.anim_refine import STAGING_COLLECTION

    reached = {"layout 1": lambda: job._work is not None and job.text.startswith("laying out level 1"),
               "writing 2": lambda: bpy.data.collections.get(STAGING_COLLECTION.format(2)) is not None,
               "built": lambda: job.text.endswith("keying the path")}[step]
    for _ in range(MAX_POLLS):
        assert not job.finished, f"the job ended ({job.state}) before it reached {step!r}"
        if job.state != "pending" and reached():
            break
        job.poll(timeout=0.001)
    else:
        pytest.fail(f"the job never reached {step!r}: {job!r}")
    if step == "writing 2":  # in the middle of writing a level, the scene camera is the level's
        assert scene_camera_name().startswith("TV3D_zoom_camera")
    job.cancel()
    for _ in range(MAX_POLLS):
        if job.finished:
            break
        job.poll(timeout=0.01)
    assert job.state == "cancelled", job


def scene_camera_name() -> str:
    cam = bpy.context.scene.camera
    return "" if cam is None else cam.name


@pytest.mark.timeout(600)
@pytest.mark.parametrize("step", ["layout 1", "writing 2", "built"])
def test_a_cancelled_flythrough_changes_nothing(step, tmp_path):
    from tracevis3d.blender.anim_refine import FLY_KEY, GROUP_NAME, LEVEL_COLLECTION, STAGING_COLLECTION
    from tracevis3d.blender.animate import ANIM_KEY, animate_job, animate_scene, clear_animation

    trace, scene = _figure(tmp_path)
    n_objects = len(bpy.data.objects)
    animate_scene(scene, "flythrough", 1.0, 12, zoom_window=_window(trace, 32.0), zoom_levels=2)  # the earlier one
    scene.frame_set(5)
    before = _snapshot(scene)
    assert before["records"][FLY_KEY] and len(json.loads(before["records"][ANIM_KEY])["refine"]["levels"]) == 2

    job = animate_job(scene, "flythrough", 1.0, 12, zoom_window=_window(trace, 128.0), zoom_levels=3)
    _cancel_at(job, step)
    assert _snapshot(scene) == before
    assert not any(c.name.startswith(STAGING_COLLECTION.format("")) for c in bpy.data.collections)

    # the next one replaces the earlier animation whole: its levels and groups under their own names
    info = animate_scene(scene, "flythrough", 1.0, 12, zoom_window=_window(trace, 128.0), zoom_levels=3)
    k = len(info["refine"]["levels"])
    assert k == 3
    assert sorted(c.name for c in bpy.data.collections if c.name.startswith("TraceVis3D fly")) == \
        [LEVEL_COLLECTION.format(j) for j in range(1, k + 1)]
    groups = json.loads(scene[FLY_KEY])["groups"]
    assert groups and all(g in bpy.data.node_groups and bpy.data.node_groups[g].users > 0 for g in groups)
    assert all(any(g == GROUP_NAME.format(j, g.split("_instancer_", 1)[1]) for j in range(1, k + 1))
               for g in groups), groups
    clear_animation(scene)
    assert len(bpy.data.objects) == n_objects


@pytest.mark.timeout(600)
def test_a_zoomed_scene_is_unzoomed_first_and_kept_zoomed_when_cancelled(tmp_path):
    from tracevis3d.blender import view
    from tracevis3d.blender.animate import animate_job, animate_scene, clear_animation
    from tracevis3d.layout import fly_levels
    from tracevis3d.params.animation import ZOOM_AUTO_MAGNIFICATION

    trace, scene = _figure(tmp_path, seed=4)
    n_objects = len(bpy.data.objects)
    still_camera = scene.camera.name
    still_location = tuple(scene.camera.location)
    zoomed = _window(trace, 16.0)
    view.zoom_to(scene, window=zoomed)
    assert view.zoom_state(scene) and scene.camera.name != still_camera
    before = _snapshot(scene)

    job = animate_job(scene, "flythrough", 1.0, 12, zoom_window="auto", zoom_levels=2)
    _cancel_at(job, "built")
    assert _snapshot(scene) == before  # still zoomed, the zoom's camera active

    info = animate_scene(scene, "flythrough", 1.0, 12, zoom_window="auto", zoom_levels=2)
    assert info["unzoomed"] == pytest.approx(list(zoomed))
    assert view.zoom_state(scene) is None and bpy.data.collections.get(view.ZOOM_COLLECTION) is None
    assert scene.camera.name == still_camera
    meta = json.loads(scene["tracevis3d_meta"])
    expected = fly_levels.auto_window(trace.start, (meta["t0"], meta["t1"]), ZOOM_AUTO_MAGNIFICATION)
    assert info["refine"]["window"] == pytest.approx(list(expected))
    clear_animation(scene)
    assert len(bpy.data.objects) == n_objects
    assert tuple(scene.camera.location) == pytest.approx(still_location)

    view.zoom_to(scene, window=zoomed)  # any animation: a growth too
    info = animate_scene(scene, "growth", 1.0, 12)
    assert info["unzoomed"] == pytest.approx(list(zoomed)) and view.zoom_state(scene) is None
    assert scene.camera.name == still_camera
    clear_animation(scene)
    assert len(bpy.data.objects) == n_objects
