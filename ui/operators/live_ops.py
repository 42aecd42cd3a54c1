"""The live feed's operators: Connect (a `LiveSession` and a `LiveView`, polled by a timer
that does bounded work per tick so the UI stays responsive) and Disconnect.  The scene
built so far stays when disconnecting.  `live_tick` is what the timer calls (tests call it
directly: timers never fire headless)."""
from __future__ import annotations

import time

import bpy
from bpy.types import Operator

from ..properties import group_of, params_of


TICK = 0.1            # seconds between polls
POLL_BUDGET = 0.02    # seconds of message handling per poll
_LIVE: dict = {}      # "session", "view", "rate": (time, events) of the last status


def live_state() -> dict:
    return _LIVE


def live_tick(scene=None):
    """Poll once, grow the scene, refresh the status line; the timer's next interval."""
    sess, view = _LIVE.get("session"), _LIVE.get("view")
    if sess is None:
        return None  # disconnected: stop the timer
    scene = scene or _LIVE.get("scene") or bpy.context.scene
    try:
        s = scene.tracevis3d
        follow = bool(group_of(scene, "live").follow)
        view.layout.p.follow = follow
        ch = sess.poll_once(max_messages=200, max_seconds=POLL_BUDGET)
        if ch.changed or ch.events or _LIVE.get("follow") != follow:
            view.update(sess)
            _LIVE["follow"] = follow
        t, ev = time.monotonic(), sess.events
        t0, ev0 = _LIVE.get("rate", (t, ev))
        if t - t0 >= 1.0 or "rate" not in _LIVE:
            _LIVE["rate"] = (t, ev)
            _LIVE["eps"] = (ev - ev0) / max(t - t0, 1e-9) if t > t0 else 0.0
        s.live_status = (f"{_LIVE.get('eps', 0.0):,.0f} ev/s · {sess.n_calls:,} calls · "
                         f"{len(sess.threads)} threads · {sess.dropped:,} dropped · "
                         f"{sess.gaps} lost · {sum(sess.bad.values())} bad")
        _redraw_viewports()
    except Exception as e:  # never let a timer raise into Blender
        _LIVE["error"] = f"{type(e).__name__}: {e}"
        try:
            scene.tracevis3d.live_status = f"Live error: {_LIVE['error']}"
        except Exception:
            pass
    return TICK


def _redraw_viewports() -> None:
    """Ask every 3D viewport to draw again (nothing to do headless: no screen)."""
    for area in getattr(bpy.context.screen, "areas", []) or []:
        if area.type == "VIEW_3D":
            area.tag_redraw()


def disconnect() -> None:
    sess = _LIVE.pop("session", None)
    _LIVE.pop("view", None)
    _LIVE.pop("rate", None)
    if bpy.app.timers.is_registered(live_tick):
        bpy.app.timers.unregister(live_tick)
    if sess is not None:
        sess.close()


class TRACEVIS3D_OT_live_connect(Operator):
    """Listen for live calls at the endpoint and grow the scene as they arrive"""

    bl_idname = "tracevis3d.live_connect"
    bl_label = "Connect"
    bl_options = {"REGISTER"}

    def execute(self, context):
        from ...tracevis3d.blender.live_view import LiveView
        from ...tracevis3d.live.session import LiveSession

        s = context.scene.tracevis3d
        disconnect()
        try:
            sess = LiveSession(s.live_endpoint.strip(), bind=not s.live_connect)
        except Exception as e:  # bad endpoint, not loopback, address in use
            self.report({"ERROR"}, f"Live: {s.live_endpoint}: {e}")
            return {"CANCELLED"}
        try:
            view = LiveView(params_of(context.scene, "live"), scene=context.scene)
        except Exception as e:
            sess.close()
            self.report({"ERROR"}, f"Live: could not make the scene: {e}")
            return {"CANCELLED"}
        _LIVE.update(session=sess, view=view, scene=context.scene)
        s.live_status = f"listening at {sess.endpoint}"
        if not bpy.app.timers.is_registered(live_tick):
            bpy.app.timers.register(live_tick, first_interval=TICK)
        return {"FINISHED"}


class TRACEVIS3D_OT_live_disconnect(Operator):
    """Stop listening; the calls received so far stay in the scene"""

    bl_idname = "tracevis3d.live_disconnect"
    bl_label = "Disconnect"
    bl_options = {"REGISTER"}

    def execute(self, context):
        sess = _LIVE.get("session")
        disconnect()
        if sess is not None:
            context.scene.tracevis3d.live_status = f"disconnected: {sess.status()}"
        return {"FINISHED"}


def live_memory_tick(scene=None):
    """Poll the live memory view once (bounded: `LiveMemoryView.poll`); the timer's next interval."""
    view = _LIVE.get("memory")
    if view is None:
        return None
    scene = scene or _LIVE.get("scene") or bpy.context.scene
    try:
        more = view.poll()
        s = view.stats
        scene.tracevis3d.live_status = (f"memory: {s['bytes_received']:,} bytes, {s['records_drawn']:,} records drawn, "
                                        f"{s['builds']} rebuilds" + ("" if more else " · program ended"))
        _redraw_viewports()
    except Exception as e:  # never let a timer raise into Blender: one line in the status
        more = False
        scene.tracevis3d.live_status = f"Live memory: {' '.join(str(e).split())}"
    if not more:
        disconnect_memory()
        return None
    return TICK


def disconnect_memory() -> None:
    view = _LIVE.pop("memory", None)
    if bpy.app.timers.is_registered(live_memory_tick):
        bpy.app.timers.unregister(live_memory_tick)
    if view is not None:
        view.close()


class TRACEVIS3D_OT_live_memory_connect(Operator):
    """Connect to memray's live tracker at the port and grow the memory view as the program runs"""

    bl_idname = "tracevis3d.live_memory_connect"
    bl_label = "Watch Memory"
    bl_options = {"REGISTER"}

    def execute(self, context):
        from ...tracevis3d.blender.live_memory import LiveMemoryView

        s = context.scene.tracevis3d
        disconnect_memory()
        try:
            view = LiveMemoryView(s.live_memray_port, params_of(context.scene, "memory"), scene=context.scene,
                                  connect_timeout=2.0)
        except Exception as e:  # no tracker listening: one line
            self.report({"ERROR"}, f"Live memory: {' '.join(str(e).split())}")
            return {"CANCELLED"}
        _LIVE.update(memory=view, scene=context.scene)
        s.live_status = f"memory: connected to {view.stream.source}"
        if not bpy.app.timers.is_registered(live_memory_tick):
            bpy.app.timers.register(live_memory_tick, first_interval=TICK)
        return {"FINISHED"}


class TRACEVIS3D_OT_live_memory_disconnect(Operator):
    """Stop watching memory; the figure drawn so far stays"""

    bl_idname = "tracevis3d.live_memory_disconnect"
    bl_label = "Stop Memory"
    bl_options = {"REGISTER"}

    def execute(self, context):
        disconnect_memory()
        return {"FINISHED"}


CLASSES = (TRACEVIS3D_OT_live_connect, TRACEVIS3D_OT_live_disconnect, TRACEVIS3D_OT_live_memory_connect,
           TRACEVIS3D_OT_live_memory_disconnect)
