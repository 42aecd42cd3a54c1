"""The fly-through's near clip follows the figure's depth along its path (issue 72: the farther
the near clip, the finer the depth buffer, and no two neighbouring faces tie).  Brute force: rays
through a grid of the frame's pixels from every eye, met with the figure's bounding box."""
import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

from mathutils import Vector  # noqa: E402

from tracevis3d.blender.anim_camera import path_near_clip  # noqa: E402
from tracevis3d.layout.camera import NEAR_CLIP_SHARE, view_direction  # noqa: E402

LO, HI = np.array([0.0, 0.0, 0.0]), np.array([100.0, 1.2, 30.0])  # an icicle's slab: long, tall, thin


def _camera(azimuth: float, elevation: float):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.resolution_x, scene.render.resolution_y = 1920, 1080
    ob = bpy.data.objects.new("cam", bpy.data.cameras.new("cam"))
    scene.collection.objects.link(ob)
    scene.camera = ob
    fwd = -Vector(tuple(view_direction(azimuth, elevation)))
    ob.rotation_euler = fwd.to_track_quat("-Z", "Y").to_euler()
    bpy.context.view_layer.update()
    return ob, fwd


def _nearest_in_view(ob, eyes, n: int = 64) -> float:
    """The least depth at which a ray through the frame (an n x n grid of its pixels) from an
    eye meets the box (slab method), the camera's rotation fixed."""
    m = np.array(ob.matrix_world.to_3x3())
    corners = np.array([tuple(c) for c in ob.data.view_frame(scene=bpy.context.scene)])
    c = corners / -corners[:, 2:3]  # at depth 1
    u = np.linspace(0.0, 1.0, n)
    xs = np.interp(u, [0, 1], [c[:, 0].min(), c[:, 0].max()])
    ys = np.interp(u, [0, 1], [c[:, 1].min(), c[:, 1].max()])
    local = np.array([(x, y, -1.0) for x in xs for y in ys])
    rays = local @ m.T  # world directions, one unit deep along the view each
    best = np.inf
    for eye in eyes:
        e = np.array(eye)
        with np.errstate(divide="ignore", invalid="ignore"):
            t0, t1 = (LO - e) / rays, (HI - e) / rays
        enter = np.nanmax(np.minimum(t0, t1), axis=1)
        leave = np.nanmin(np.maximum(t0, t1), axis=1)
        hit = (enter <= leave) & (leave > 0)
        if hit.any():
            best = min(best, float(np.maximum(enter[hit], 0.0).min()))
    return best


@pytest.mark.timeout(120)
def test_the_near_clip_is_an_eighth_of_the_nearest_box_in_view_over_the_path():
    ob, fwd = _camera(-18.0, 12.0)
    # the still's eye far out, then a path 3x closer along the figure (the fly-through's keys)
    eyes = [Vector((50.0, 0.6, 15.0)) - fwd * 150.0] + [Vector((x, 0.6, 15.0)) - fwd * 50.0 for x in (20, 50, 80)]
    clip = path_near_clip(ob, eyes, LO, HI, still=100.0)
    want = NEAR_CLIP_SHARE * _nearest_in_view(ob, eyes)
    assert clip <= want * (1 + 1e-6)  # never in front of what is in view...
    assert clip >= 0.9 * want  # ...and not far from it (the frame's corners lie inside the slab)
    # the still's own clip when it is nearer; an eye inside the slab's depth bounds nothing
    assert path_near_clip(ob, eyes, LO, HI, still=0.5) == 0.5
    assert path_near_clip(ob, eyes + [Vector((50.0, 0.5, 15.0))], LO, HI, still=7.0) == 7.0


@pytest.mark.timeout(120)
def test_a_view_along_the_front_plane_keeps_the_stills_clip():
    ob, _fwd = _camera(-90.0, 0.0)  # looking along +x: corner rays never meet the plane y = 0 ahead
    assert path_near_clip(ob, [Vector((-50.0, -1.0, 15.0))], LO, HI, still=0.25) == 0.25


def _depths(cam) -> tuple:
    """(least depth of what the world draws, greatest depth of what hangs on the camera (the
    heads-up display)): every rendered mesh, text and curve, instances included, by the corners
    of its bounding box along the camera's view."""
    dg = bpy.context.evaluated_depsgraph_get()
    loc = cam.matrix_world.translation
    fwd = (cam.matrix_world.to_3x3() @ Vector((0, 0, -1))).normalized()
    world, hud = np.inf, -np.inf
    for inst in dg.object_instances:
        ob = inst.object
        if ob.type not in ("MESH", "FONT", "CURVE") or ob.original.hide_render:
            continue
        d = [(inst.matrix_world @ Vector(c) - loc).dot(fwd) for c in ob.bound_box]
        if ob.original.parent is not None and ob.original.parent.name == cam.name:
            hud = max(hud, max(d))
        else:
            world = min(world, min(d))
    return world, hud


@pytest.mark.timeout(400)
@pytest.mark.parametrize("command", ["render-icicle", "render-threads", "render-cone", "render-extravis",
                                     "render-compare"])
def test_every_view_draws_beyond_its_near_clip_and_its_hud_in_front(command, realdata, tmp_path):
    from tracevis3d.cli import main

    trace = realdata / "viztracer-examples" / "multithread.json"
    other = [str(realdata / "viztracer-examples" / "multi_process_pool.json")] if command == "render-compare" else []
    assert main([command, str(trace), *other, "-o", str(tmp_path / "f.png"), "--resolution", "480x270"]) == 0
    cam = bpy.context.scene.camera
    near = cam.data.clip_start
    world, hud = _depths(cam)
    assert near <= world / 4.0 and hud < world, (near, hud, world)  # nothing clipped; the HUD in front
    assert near >= 0.1 * world, (near, world)  # not the old 1e-3 of the distance: a fine depth buffer
