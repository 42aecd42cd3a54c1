"""Build the icicle scene in Blender from a Trace (layout → SceneSpec → Blender data)."""
from __future__ import annotations

import os
import time

import bpy
from mathutils import Vector

from ..layout.icicle import icicle_layout
from ..layout.params import IcicleParams
from ..model import Trace
from .hygiene import BUILD_KEY, read_build_record, write_build_record
from .writer import is_layer_object, write_scene_spec

__all__ = ["build_icicle", "build_info", "frame_view", "BUILD_KEY"]


def build_icicle(trace: Trace, params: IcicleParams | dict | None = None,
                 collection_name: str = "TraceVis3D", progress=None, scene=None,
                 trace_path=None) -> dict:
    """Write (or replace) the extruded icicle of ``trace`` into the scene.

    ``progress(fraction, text)`` is called for the long steps.  Returns the names of the
    created objects, per-step timings (s) and layout figures; stores
    ``scene["tracevis3d_build"]`` = JSON {trace_path, trace_path_rel, params} so a saved
    .blend knows how it was built (see `hygiene`).  ``trace_path`` is the file the trace was
    read from (default: the trace's ``meta["source"]``, which for a native .npz names the
    original JSON); it is stored absolute.
    """
    scene = scene or bpy.context.scene
    if isinstance(params, dict):
        params = IcicleParams.from_dict(params)
    params = (params or IcicleParams()).validate()
    report = progress or (lambda f, t: None)
    t0 = time.perf_counter()
    report(0.0, f"layout of {len(trace)} calls")
    spec = icicle_layout(trace, params)
    t_layout = time.perf_counter() - t0
    out = write_scene_spec(spec, collection_name, progress=lambda f, t: report(0.2 + 0.8 * f, t),
                           scene=scene)
    out["timings"]["layout"] = t_layout
    out["timings"]["total"] = time.perf_counter() - t0
    out["meta"] = {k: v for k, v in spec.meta.items() if k != "params"}
    path = trace_path if trace_path is not None else trace.meta.get("source")
    path = os.path.abspath(os.fspath(path)) if path and not str(path).startswith("<") else None
    write_build_record(scene, {"trace_path": path, "trace_path_rel": None, "params": params.to_dict()})
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
