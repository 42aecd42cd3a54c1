"""Search, hits and bookmarks in a Blender scene (scriptable; the panel's operators call
these).  The `analysis.search.Landmarks` of a scene is stored as JSON in the scene's custom
property ``scene["tracevis3d_landmarks"]``: saved with the .blend (a .blend is a session),
readable without the extension registered, written by the command line too.

``fly_to_call`` moves the active camera so it looks at the call's box or node from the
same direction, closer; with ``frames`` it keys a short flight (location keys at the
current frame and ``frames`` later) that plays back in the viewport.
"""
from __future__ import annotations

import numpy as np

import bpy

from ..analysis.search import Landmarks
from .writer import is_layer_object

KEY = "tracevis3d_landmarks"


def landmarks(scene=None) -> Landmarks:
    scene = scene or bpy.context.scene
    return Landmarks.from_json(scene.get(KEY))


def store(lm: Landmarks, scene=None) -> None:
    scene = scene or bpy.context.scene
    scene[KEY] = lm.to_json()


def search(trace, pattern: str, scene=None) -> list:
    """Search ``trace`` for ``pattern`` (regex on names/modules), remember it in the scene's
    history and hits; the hits (call indices, in time order)."""
    lm = landmarks(scene)
    hits = lm.search(trace, pattern)
    store(lm, scene)
    return hits.tolist()


def search_steps(job, trace, pattern: str, scene=None):
    """A `Job` step generator: `search`, with the search itself off Blender's main thread
    (`search_calls` over every call of a large trace takes a while); the hits are stored
    in the scene on the main thread.  Result: the hits (call indices, in time order)."""
    from ..analysis.search import search_calls

    job.report(0.0, f"searching {pattern!r}")
    hits = yield job.off_main(search_calls, trace, pattern)
    lm = landmarks(scene)
    lm.take_hits(pattern, hits)
    store(lm, scene)
    return hits.tolist()


def add_bookmark(call: int, note: str = "", trace=None, scene=None) -> dict:
    scene = scene or bpy.context.scene
    lm = landmarks(scene)
    cam = scene.camera
    camera = None
    if cam is not None:
        target = _camera_target(cam)
        camera = [list(cam.location), list(target), list(cam.rotation_euler), [cam.data.shift_x, cam.data.shift_y]]
    b = lm.add_bookmark(trace, call, note, camera)
    store(lm, scene)
    return b.__dict__


def remove_bookmark(k: int, scene=None) -> None:
    lm = landmarks(scene)
    lm.remove_bookmark(k)
    store(lm, scene)


def _camera_target(cam, distance: float | None = None):
    from mathutils import Vector

    fwd = cam.matrix_world.to_quaternion() @ Vector((0.0, 0.0, -1.0))
    d = distance if distance is not None else max(cam.location.length, 1.0)
    return cam.location + fwd * d


def call_positions(collection_name: str = "TraceVis3D") -> tuple:
    """(call indices, world positions) of every drawn box or node that stands for a call:
    icicle boxes (point-cloud layers) and cone-tree nodes (the ``cone_nodes`` tube mesh,
    one position per node: the mean of its faces' centres)."""
    from .pick import layer_arrays

    coll = bpy.data.collections.get(collection_name)
    calls, pos = [np.zeros(0, np.int64)], [np.zeros((0, 3))]
    if coll is None:
        return calls[0], pos[0]
    for ob in coll.all_objects:
        if ob.get("tv3d_space") == "camera":
            continue
        if is_layer_object(ob):
            p, _sc, ci = layer_arrays(ob)
            mw = np.array(ob.matrix_world)
            p = p @ mw[:3, :3].T + mw[:3, 3]
            ok = ci >= 0
            calls.append(ci[ok].astype(np.int64))
            pos.append(p[ok])
        elif ob.type == "MESH" and ob.get("tv3d_layer") == "cone_nodes":
            me = ob.data
            nf = len(me.polygons)
            cen = np.empty(nf * 3, np.float32)
            me.polygons.foreach_get("center", cen)
            ci = np.empty(nf, np.int32)
            me.attributes["call_index"].data.foreach_get("value", ci)
            ok = ci >= 0
            u, inv = np.unique(ci[ok], return_inverse=True)
            s = np.zeros((u.size, 3))
            np.add.at(s, inv, cen.reshape(-1, 3)[ok])
            s /= np.bincount(inv, minlength=u.size)[:, None]
            calls.append(u.astype(np.int64))
            pos.append(s)
    return np.concatenate(calls), np.concatenate(pos)


def locate_call(call: int, trace=None, collection_name: str = "TraceVis3D"):
    """World position of ``call``'s box or node; a call not drawn on its own (merged into a
    cluster, hidden, pruned) is located at its nearest drawn ancestor.  None when nothing
    of it is drawn."""
    calls, pos = call_positions(collection_name)
    if calls.size == 0:
        return None
    order = np.argsort(calls, kind="stable")
    c = int(call)
    while c >= 0:
        k = np.searchsorted(calls[order], c)
        if k < calls.size and calls[order][k] == c:
            return pos[order][k]
        if trace is None:
            return None
        c = int(trace.parent[c])
    return None


def fly_to_call(call: int, trace=None, scene=None, frames: int = 0, closer: float = 0.35) -> bool:
    """Point the active camera at ``call`` (see module doc): same view direction, the
    distance scaled by ``closer``; lens shift reset so the call is in the middle.  False
    when the call is not drawn or there is no camera."""
    from mathutils import Vector

    scene = scene or bpy.context.scene
    cam = scene.camera
    p = locate_call(call, trace)
    if cam is None or p is None:
        return False
    target = Vector(p.tolist())
    fwd = cam.matrix_world.to_quaternion() @ Vector((0.0, 0.0, -1.0))
    old_target = _camera_target(cam)
    dist = max((old_target - cam.location).length * closer, 1e-3)
    if frames > 0:
        cam.keyframe_insert("location", frame=scene.frame_current)
    cam.location = target - fwd * dist
    cam.data.shift_x = 0.0
    cam.data.shift_y = 0.0
    if frames > 0:
        cam.keyframe_insert("location", frame=scene.frame_current + frames)
    return True


def fly_to_next_hit(trace=None, scene=None, step: int = 1, frames: int = 0):
    """Advance the scene's current hit (cyclically) and fly there; the call, or None."""
    scene = scene or bpy.context.scene
    lm = landmarks(scene)
    call = lm.next_hit(step)
    store(lm, scene)
    if call is not None:
        fly_to_call(call, trace, scene, frames)
    return call


def fly_to_bookmark(k: int, scene=None, trace=None) -> bool:
    """Restore bookmark ``k``'s camera (or fly to its call when it has none)."""
    from mathutils import Vector

    scene = scene or bpy.context.scene
    lm = landmarks(scene)
    if not 0 <= k < len(lm.bookmarks):
        raise IndexError(f"no bookmark {k} (there are {len(lm.bookmarks)})")
    b = lm.bookmarks[k]
    cam = scene.camera
    if b.get("camera") and cam is not None:
        c = b["camera"]
        cam.location = Vector(c[0])
        if len(c) >= 4:
            cam.rotation_euler = c[2]
            cam.data.shift_x, cam.data.shift_y = c[3]
        else:
            cam.rotation_euler = (Vector(c[1]) - cam.location).to_track_quat("-Z", "Y").to_euler()
        return True
    return fly_to_call(b["call"], trace, scene)
