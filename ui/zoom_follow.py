"""Refine as you fly: the icicle's detail follows the 3D viewport (`tracevis3d.blender.view`).

A timer reads the first 3D viewport's view matrix every `TICK_S` seconds (a few numbers: no
cost while nothing moves).  When the view has been still for `SETTLE_S` seconds and no other
job runs, the refine job (`view.zoom_job` with the viewport's ``perspective_matrix`` and region
size) starts: it works out the stretch of time the viewport sees and lays it out at full detail
(or keeps the refinement in place, or goes back to the overview when the view is pulled back).
The job's layout runs in a worker; the timer polls it, so the UI is never blocked; a move of the
view while it runs cancels it.  A finished refinement moves the viewport smoothly (`FLY_S`) onto
the refined stretch, which now stands where the view was looking, wider.  "Zoom to…"
(`operators.zoom_ops`) uses the same flight.  The panel's "Refine as you fly"
(``scene.tracevis3d.zoom_follow``) turns the following off.  ``bpy.app.timers`` never fire in
background mode: scripts call `poll` (or the job itself)."""
from __future__ import annotations

import sys
import time

import bpy

SETTLE_S = 0.3  # the view stands still this long before the refinement starts
TICK_S = 0.1
FLY_S = 0.5  # the viewport's flight onto a refined stretch
_state: dict = {"last": None, "moved_at": None, "job": None, "job_key": None, "flight": None}


def _following(scene) -> bool:
    s = getattr(scene, "tracevis3d", None)
    return bool(s is not None and getattr(s, "zoom_follow", False) and scene.get("tracevis3d_build"))


def viewport(context=None):
    """(area, region, region_3d) of the first 3D viewport of the open windows, or None."""
    wm = (context or bpy.context).window_manager
    for w in (wm.windows if wm is not None else []):
        for area in w.screen.areas:
            if area.type != "VIEW_3D":
                continue
            region = next((r for r in area.regions if r.type == "WINDOW"), None)
            rv3d = area.spaces.active.region_3d if area.spaces.active is not None else None
            if region is not None and rv3d is not None:
                return area, region, rv3d
    return None


def _key(rv3d) -> tuple:
    return tuple(round(float(v), 6) for row in rv3d.perspective_matrix for v in row)


def fly_to_camera(cam_ob, scene=None, seconds: float = FLY_S) -> bool:
    """Move the first 3D viewport onto what ``cam_ob`` frames, smoothly (timer), or at once
    (``seconds`` 0, or headless).  False without a viewport."""
    from ..tracevis3d.blender.view import viewport_pose

    vp = viewport()
    if vp is None or cam_ob is None:
        return False
    area, region, rv3d = vp
    pose = viewport_pose(cam_ob, scene or bpy.context.scene, rv3d.window_matrix)
    if rv3d.view_perspective == "CAMERA":
        rv3d.view_perspective = "PERSP"
    start = (rv3d.view_location.copy(), rv3d.view_rotation.copy(), float(rv3d.view_distance))
    _state["flight"] = {"start": start, "pose": pose, "t0": time.monotonic(), "seconds": max(seconds, 0.0)}
    if seconds <= 0 or bpy.app.background:
        _advance_flight(vp, 1.0)
    else:
        _ensure_timer()
    return True


def _advance_flight(vp, f: float) -> None:
    from mathutils import Quaternion, Vector

    fl = _state["flight"]
    area, region, rv3d = vp
    (loc0, rot0, dist0), pose = fl["start"], fl["pose"]
    e = f * f * (3.0 - 2.0 * f)  # eased
    rv3d.view_location = loc0.lerp(Vector(pose["location"]), e)
    rv3d.view_rotation = rot0.slerp(Quaternion(pose["rotation"]), e)
    d1 = max(pose["distance"], 1e-6)
    rv3d.view_distance = dist0 * (d1 / max(dist0, 1e-6)) ** e  # geometric: the zoom feels even
    area.tag_redraw()
    if f >= 1.0:
        _state["flight"] = None
        _state["last"], _state["moved_at"] = _key(rv3d), None  # our own move: nothing to refine


def poll(scene=None, now: float | None = None) -> str | None:
    """One step of following the viewport: "flying", "moving", "waiting", "started",
    "refining", "cancelled", "refined", "kept", "overview", "failed", or None (nothing to do)."""
    import numpy as np

    from ..tracevis3d.blender import view
    from ..tracevis3d.blender.tasks import QUEUE

    scene = scene or bpy.context.scene
    vp = viewport()
    if vp is None:
        return None
    now = time.monotonic() if now is None else now
    fl = _state["flight"]
    if fl is not None:
        _advance_flight(vp, min((now - fl["t0"]) / max(fl["seconds"], 1e-6), 1.0))
        return "flying"
    if not _following(scene):
        return None
    area, region, rv3d = vp
    key = _key(rv3d)
    job = _state["job"]
    if job is not None:
        if key != _state["job_key"]:  # the view moved on: this refinement is stale
            job.cancel()
            _state["job"] = None
            _state["last"], _state["moved_at"] = key, now
            return "cancelled"
        job.poll()
        if not job.finished:
            return "refining"
        _state["job"] = None
        if job.state != "done":
            return "failed"
        res = job.result or {}
        if res.get("action") == "refine":
            fly_to_camera(bpy.data.objects.get(res.get("camera", "")), scene)
            return "refined"
        return {"keep": "kept", "overview": "overview"}.get(res.get("action"), "kept")
    if key != _state["last"]:
        _state["last"], _state["moved_at"] = key, now
        return "moving"
    if _state["moved_at"] is None:
        return None
    if now - _state["moved_at"] < SETTLE_S or QUEUE.busy():
        return "waiting"
    _state["moved_at"] = None
    persp = np.array([list(row) for row in rv3d.perspective_matrix], np.float64)
    _state["job"] = view.zoom_job(scene, persp=persp, region=(region.width, region.height))
    _state["job_key"] = key
    _state["job"].poll()
    return "started"


def _tick():
    try:
        poll()
    except Exception as e:  # noqa: BLE001  a timer must never raise into Blender
        print(f"tracevis3d: warning: refining the view: {e}", file=sys.stderr)
        _state["job"] = _state["flight"] = None
    return TICK_S


def _ensure_timer() -> None:
    if not bpy.app.background and not bpy.app.timers.is_registered(_tick):
        bpy.app.timers.register(_tick, first_interval=TICK_S, persistent=True)


def register():
    _ensure_timer()


def unregister():
    if bpy.app.timers.is_registered(_tick):
        bpy.app.timers.unregister(_tick)
    job = _state["job"]
    if job is not None:
        job.cancel()
    _state.update(last=None, moved_at=None, job=None, job_key=None, flight=None)
