"""Zoom into a cone tree (issue 70): a call's subtree laid out as a cone tree of its own, at
full detail, beside the overview, with the scene camera on it (`view.zoom_to(scene, call=...)`).

    from tracevis3d.blender import view
    info = view.zoom_to(scene, call=1234)         # or call="exec_module": that name's longest call
    info["names"], info["calls_drawn"], info["seconds"]
    view.zoom_to(scene, call=None)                # the whole tree again

The cone tree has no time axis: its "window" is a subtree.  The zoom is the figure
``render-cone --root CALL`` draws (`layout.cone.cone_layout` with ``root``: the overview's
parameters, the subtree of the call as the tree, its own node budget, framing and names),
written into the zoom's collection (`zoom_write`) and moved right of the overview camera's
frame; the overview stays whole beside it, the context a pulled-back view sees.

Beside, not in place: the overview's node of the call is a sphere among its siblings' cones,
drawn at the overview's scale; the subtree at full detail is a whole cone tree framed for its
own camera (its orientation and turn chosen for it).  Shrunk into the node's footprint it
would stand among the siblings' spheres and edges, which would then lie between the camera and
its names; beside the overview it is exactly the dedicated figure.  Zooms replace each other
(the collection is rewritten); ``call=None`` removes the zoom (`zoom_split.unzoom`).

The trace is found from the cone's build record (``scene[CONE_KEY]``: its path, else the path
relative to the open .blend), so a .blend saved by ``render-cone --save`` zooms in a fresh
Blender.  It is the one the build kept in memory, else the native copy of a text trace that
saving the scene wrote into the user cache (`zoom_inputs.keep_trace`, as the icicle's zoom
keeps its trace: a fresh Blender maps it instead of parsing a large JSON again), else the file
itself; the result's ``trace_file`` names the file read (None: the build's, in memory).  The viewport's "Refine as you fly" does not
follow the cone (`view.NOT_REFINED`): the panel's Zoom to… with a call does.
"""
from __future__ import annotations

import json
import os
import time

import bpy

from ..jobs import Job
from ..layout import refine
from .cone_tasks import CONE_KEY
from .zoom_inputs import build_record, kept_trace_context
from .zoom_split import STATE_KEY, ZOOM_COLLECTION, unzoom, zoom_state

__all__ = ["cone_zoom_steps", "cone_trace_path", "GAP_SHARE"]

#: the gap between the overview's frame and the zoomed tree's, a share of the wider frame
GAP_SHARE = 0.15


def cone_trace_path(scene) -> tuple:
    """(the cone's trace file, its parameters as a dict) from ``scene[CONE_KEY]``: the recorded
    path while it exists, else the file of that name beside the open .blend."""
    from .hygiene import find_trace, from_blend_relative

    rec = build_record(scene, CONE_KEY, "the cone tree")
    recorded = rec.get("trace_path")
    beside = os.path.join(os.path.dirname(bpy.data.filepath), os.path.basename(recorded)) \
        if recorded and bpy.data.filepath else None
    found = find_trace([recorded, from_blend_relative(rec.get("trace_path_rel"), bpy.data.filepath), beside])
    if found is None:
        raise FileNotFoundError(f"the cone tree's trace file is not there: {recorded or '(not recorded)'}")
    return found, rec.get("params") or {}


def _subtree_layout(kept: dict, params: dict, call):
    """Worker: the call's index and the dedicated ``render-cone --root CALL`` figure of its subtree
    with the overview's parameters (its cutaway, which names a call of the whole tree, left out);
    ``kept``: the trace's `zoom_inputs.kept_trace_context`."""
    import dataclasses

    from ..layout.cone import ConeParams, cone_layout
    from ..transform import find_call
    from .zoom_inputs import kept_trace

    trace = kept_trace(kept)
    root = find_call(trace, call)
    p = dataclasses.replace(ConeParams.from_dict(params), root=root, cutaway=None).validate()
    spec = cone_layout(trace, p)
    return root, dataclasses.replace(spec, lights=[])


def _frame_x(persp) -> tuple:
    """(left, right) x of a camera's frame at half height, on the plane y = y of the point its
    centre ray meets on y = 0 (the tree's axis stands on x = y = 0)."""
    o, d = refine.unproject(persp, 0.0, 0.0)
    s = -o[1] / d[1] if abs(d[1]) > 1e-12 else 0.0
    return refine.frame_x_range(persp, float((o + s * d)[2]))


def cone_zoom_steps(job: Job, scene, call, collection_name: str, t_start: float, camera_persp, name_kinds):
    """The cone tree's zoom (module doc); the result of `view.zoom_to`.  ``camera_persp``:
    `view.camera_persp` (a camera's world → clip matrix), ``name_kinds``: `view.NAME_KINDS`
    (the labels that name calls), given by `view` (which imports this module)."""
    from .zoom_write import write_refinement_steps

    if call is None:
        out = unzoom(scene, collection_name)
        out["action"] = "overview"
        return out
    state = zoom_state(scene)
    path, params = cone_trace_path(scene)
    kept = kept_trace_context(scene, path, CONE_KEY)
    job.report(0.05, f"laying out the subtree of {call!r}")
    t = time.perf_counter()
    try:
        root, spec = yield job.off_main(_subtree_layout, kept, params, call)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    t_layout = time.perf_counter() - t
    overview_cam = (state or {}).get("camera") or (scene.camera.name if scene.camera else None)
    cam_ob = bpy.data.objects.get(overview_cam or "")
    ov_l, ov_r = _frame_x(camera_persp(scene, cam_ob)[0]) if cam_ob is not None else (0.0, 0.0)
    new_l, new_r = _frame_x(refine.camera_matrix(spec.camera, spec.resolution))
    gap = GAP_SHARE * max(abs(ov_r - ov_l), abs(new_r - new_l))
    offset = (max(ov_l, ov_r) + gap - min(new_l, new_r), 0.0, 0.0)
    job.report(0.5, f"writing the subtree of call {root:,}")
    t = time.perf_counter()
    job.on_cleanup(lambda: unzoom(scene, collection_name))  # stopped half-way: the overview, whole
    out = yield from write_refinement_steps(spec, ZOOM_COLLECTION, scene)
    for ob in bpy.data.collections[ZOOM_COLLECTION].objects:
        if ob.parent is None:
            ob.location.x += offset[0]
        ob["tv3d_zoom"] = True
    cam = bpy.data.objects.get(out["objects"]["camera"])
    if cam is not None:
        cam.data.clip_end = max(cam.data.clip_end, 4.0 * (abs(offset[0]) + abs(new_r - new_l) + 100.0))
    t_write = time.perf_counter() - t
    lab = spec.labels
    names = [txt for txt, k in zip(lab.texts, lab.kind) if k in name_kinds]
    calls = int(spec.meta["n_calls"])
    scene[STATE_KEY] = json.dumps({"call": root, "window": None, "thread": None, "camera": overview_cam,
                                   "layout": "cone", "offset": list(offset), "calls_drawn": calls,
                                   "names": names[:2000]})
    job.report(1.0, f"the subtree of call {root:,}: {spec.meta['n_nodes']:,} nodes, {len(names)} names")
    return {"call": root, "window": None, "thread": None, "action": "refine", "calls_drawn": calls, "calls": calls,
            "nodes": int(spec.meta["n_nodes"]), "names": names, "camera": out["objects"]["camera"],
            "collection": ZOOM_COLLECTION, "placement": None, "offset": offset, "meta": spec.meta,
            "trace_file": kept["read"],
            "seconds": {"layout": t_layout, "write": t_write, "total": time.perf_counter() - t_start}}
