"""Build the icicle scene in Blender from a Trace (layout → SceneSpec → Blender data)."""
from __future__ import annotations

import time

import bpy
from mathutils import Vector

from ..params.icicle import IcicleParams
from ..model import Trace
from .hygiene import BUILD_KEY, read_build_record
from .writer import is_layer_object

__all__ = ["build_icicle", "build_compare", "build_info", "frame_view", "BUILD_KEY"]


def build_icicle(trace: Trace, params: IcicleParams | dict | None = None,
                 collection_name: str = "TraceVis3D", progress=None, scene=None,
                 trace_path=None) -> dict:
    """Write (or replace) the extruded icicle of ``trace`` into the scene.

    Runs the build job (`tasks.build_steps`: the layout in a worker thread, the scene in
    short main-thread steps) to its end: the same code the panel's Build drives.
    ``progress(fraction, text)`` is called for every step.  Returns the names of the
    created objects, per-step timings (s) and layout figures; stores
    ``scene["tracevis3d_build"]`` = JSON {trace_path, trace_path_rel, params} so a saved
    .blend knows how it was built (see `hygiene`).  ``trace_path`` is the file the trace was
    read from (default: the trace's ``meta["source"]``, which for a native .npz names the
    original JSON); it is stored absolute.
    """
    from ..jobs import Job
    from .tasks import build_steps

    params = IcicleParams.given(params)
    t0 = time.perf_counter()
    job = Job("build", build_steps, trace, params, scene or bpy.context.scene, collection_name, trace_path)
    if progress is not None:
        job.listeners.append(lambda j: progress(j.fraction, j.text))
    out = job.run(interval=0.02)
    out["timings"]["total"] = time.perf_counter() - t0
    return out


def build_compare(cmp, params=None, collection_name: str = "TraceVis3D", progress=None, scene=None,
                  paths=(None, None)) -> dict:
    """Write (or replace) the comparison scene of ``cmp`` (a `Comparison`) into the scene:
    the build job (`tasks.compare_build_steps`) run to its end, as the panel drives it."""
    from ..jobs import Job
    from .tasks import compare_build_steps

    t0 = time.perf_counter()
    job = Job("compare scene", compare_build_steps, cmp, params, scene or bpy.context.scene, collection_name,
              paths)
    if progress is not None:
        job.listeners.append(lambda j: progress(j.fraction, j.text))
    out = job.run(interval=0.02)
    out["timings"]["total"] = time.perf_counter() - t0
    return out


def build_info(scene=None) -> dict | None:
    """The {trace_path, trace_path_rel, params} stored by `build_icicle`, or None."""
    return read_build_record(scene or bpy.context.scene)


def frame_view(context=None, collection_name: str = "TraceVis3D") -> bool:
    """Point every 3D viewport of the screen at the scene's camera view (or the boxes).

    Headless (no window) this is a no-op and returns False.
    """
    context = context or bpy.context
    screen = getattr(context, "screen", None)
    scene = context.scene
    if screen is None:
        return False
    done = False
    for area in screen.areas:
        if area.type != "VIEW_3D":
            continue
        for space in area.spaces:
            if space.type != "VIEW_3D":
                continue
            rv3d = space.region_3d
            cam = scene.camera
            if cam is not None:
                rv3d.view_location = _camera_target(cam, collection_name)
                rv3d.view_rotation = cam.matrix_world.to_quaternion()
                rv3d.view_distance = (cam.matrix_world.translation - rv3d.view_location).length
                rv3d.view_perspective = "PERSP" if cam.data.type == "PERSP" else "ORTHO"
                done = True
        area.tag_redraw()
    return done


def _camera_target(cam, collection_name: str = "TraceVis3D") -> Vector:
    """The point the camera looks at: along its -Z, at the distance of the scene's boxes."""
    m = cam.matrix_world
    fwd = -(m.to_3x3() @ Vector((0, 0, 1))).normalized()
    coll = bpy.data.collections.get(collection_name)
    pts = []
    if coll is not None:
        for ob in coll.objects:
            if is_layer_object(ob):
                pts.extend(ob.matrix_world @ Vector(c) for c in ob.bound_box)
    if not pts:
        return m.translation + fwd * 10.0
    centre = sum(pts, Vector()) / len(pts)
    d = (centre - m.translation).dot(fwd)
    return m.translation + fwd * d
