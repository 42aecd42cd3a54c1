"""The EXTRAVIS time window follows its handles: move a handle of the
sequence view's bar in the viewport, let go, and the views are rebuilt for the window the
handles now stand for — no Build press.

In the UI a ``depsgraph_update_post`` handler notices a handle's transform change (cheap:
the names of the updated objects) and starts a timer; the timer waits until the handles
have been still for `SETTLE_S` seconds, no transform is being dragged and no job runs,
then runs the EXTRAVIS build (`operators.extravis_ops`, non-blocking) for the window of the
handles (`blender.extravis_tasks.window_from_handles`).  ``bpy.app.timers`` never fire in
background mode: there, and for scripts, `poll` does one such step at once.  The panel's
"Follow Handles" switch (``scene.tracevis3d.extravis_follow_handles``) turns it off."""
from __future__ import annotations

import sys
import time

import bpy

SETTLE_S = 0.5  # the handles stand still this long before the rebuild
RETRY_S = 0.2
_state = {"moved_at": None, "timer": False}


def _handle_names() -> set:
    from ..tracevis3d.blender.extravis_tasks import GRIPS

    return set(GRIPS) | {"TV3D_window_handles"}


def _following(scene) -> bool:
    s = getattr(scene, "tracevis3d", None)
    return bool(s is not None and s.extravis_follow_handles and scene.get("tracevis3d_extravis"))


@bpy.app.handlers.persistent
def on_depsgraph_update(scene, depsgraph=None):
    """A handle moved: remember when, and (UI) start the settle timer.  Never raises."""
    try:
        if depsgraph is None or not _following(scene):
            return
        names = _handle_names()
        if not any(isinstance(u.id, bpy.types.Object) and u.is_updated_transform and u.id.name in names
                   for u in depsgraph.updates):
            return
        _state["moved_at"] = time.monotonic()
        if not bpy.app.background and not _state["timer"]:
            _state["timer"] = True
            bpy.app.timers.register(_tick, first_interval=SETTLE_S)
    except Exception as e:  # noqa: BLE001  a depsgraph handler must never break editing
        print(f"tracevis3d: warning: following the EXTRAVIS handles: {e}", file=sys.stderr)


def _dragging() -> bool:
    wm = bpy.context.window_manager
    return wm is not None and any(op.bl_idname.startswith("TRANSFORM_OT") for w in wm.windows
                                  for op in w.modal_operators)


def _view3d_override():
    """A context override with a window and a 3D viewport (an operator run from a timer
    has none), or {} when Blender has no window."""
    wm = bpy.context.window_manager
    for w in (wm.windows if wm is not None else []):
        for area in w.screen.areas:
            if area.type == "VIEW_3D":
                return {"window": w, "screen": w.screen, "area": area}
    return {}


def poll(scene=None, now: float | None = None) -> str | None:
    """One step of following the handles: ``"rebuilt"`` (the build of the handles' window
    started or, headless, done), ``"waiting"`` (they moved less than `SETTLE_S` ago, are
    being dragged, or a job runs), ``"meet"`` (the handles meet: nothing built), or None
    (nothing moved)."""
    from ..tracevis3d.blender.extravis_tasks import window_from_handles
    from ..tracevis3d.blender.tasks import QUEUE
    from .operators.extravis_ops import rebuild_shown_views

    scene = scene or bpy.context.scene
    if not _following(scene):
        return None
    now = time.monotonic() if now is None else now
    moved = _state["moved_at"]
    if moved is not None and (now - moved < SETTLE_S or _dragging()):
        return "waiting"
    if QUEUE.busy():
        return "waiting"
    _state["moved_at"] = None
    try:
        window = window_from_handles(scene)
    except ValueError:
        return "meet"
    if window is None:
        return None
    with bpy.context.temp_override(**_view3d_override()):
        rebuild_shown_views(scene)
    return "rebuilt"


def _tick():
    try:
        if poll() == "waiting":
            return RETRY_S
    except Exception as e:  # noqa: BLE001  a timer must never raise into Blender
        print(f"tracevis3d: warning: following the EXTRAVIS handles: {e}", file=sys.stderr)
    _state["timer"] = False
    return None


def register():
    if on_depsgraph_update not in bpy.app.handlers.depsgraph_update_post:
        bpy.app.handlers.depsgraph_update_post.append(on_depsgraph_update)


def unregister():
    while on_depsgraph_update in bpy.app.handlers.depsgraph_update_post:
        bpy.app.handlers.depsgraph_update_post.remove(on_depsgraph_update)
    if bpy.app.timers.is_registered(_tick):
        bpy.app.timers.unregister(_tick)
    _state.update(moved_at=None, timer=False)
