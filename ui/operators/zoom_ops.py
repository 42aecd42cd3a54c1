"""Zoom to…: fly the view to a stretch of the trace and lay it out at full detail there
(`tracevis3d.blender.view`): a time range typed in, the picked call, the current search hit, a
bookmark's call, the call under the mouse, or the whole figure again; on a cone tree a call's
subtree (`tracevis3d.blender.cone_zoom`: no time axis, so no range).  The refinement runs as a
job (`common.JobOperator`); the viewport then flies onto it (`ui.zoom_follow.fly_to_camera`)."""
from __future__ import annotations

import bpy
from bpy.types import Operator

from ..props import with_props
from ...tracevis3d.blender import session
from .common import JobOperator, reported, settings_of, trace_path_of

TARGETS = [("RANGE", "Time range", "The range typed in (start, end: 12ms, 1.5s; no unit: µs)"),
           ("PICKED", "Picked call", "The call last picked with Show Call"),
           ("HIT", "Search hit", "The current hit of the last search"),
           ("BOOKMARK", "Bookmark", "The call of a bookmark (Index)"),
           ("MOUSE", "Call under the mouse", "The call under the mouse in the 3D viewport"),
           ("WHOLE", "Whole figure", "Back to the whole figure")]


def _call_window(context, call: int):
    """The window that shows a call; on a cone tree ``("CALL", call)``: its subtree is the zoom."""
    from ...tracevis3d.blender.view import scene_layout, window_of_call

    if scene_layout(context.scene) == "cone":
        return ("CALL", int(call))
    trace = session.get_trace(trace_path_of(context))
    if not 0 <= call < len(trace):
        raise ValueError(f"no call {call} in the trace")
    return window_of_call(trace, call)


@with_props([("target", "Enum", dict(name="Zoom to", items=TARGETS, default="RANGE")),
             ("start", "String", dict(name="Start", default="", description="Start of the range (12ms, 1.5s, µs)")),
             ("end", "String", dict(name="End", default="", description="End of the range (12ms, 1.5s, µs)")),
             ("index", "Int", dict(name="Index", default=0, min=0, description="The bookmark's number (from 0)")),
             ("mouse_x", "Int", dict(name="Mouse x", default=-1, options={"SKIP_SAVE", "HIDDEN"})),
             ("mouse_y", "Int", dict(name="Mouse y", default=-1, options={"SKIP_SAVE", "HIDDEN"}))])
class TRACEVIS3D_OT_zoom_to(JobOperator, Operator):
    """Fly the view to a stretch of the trace and lay it out at full detail there: a time range, the picked call, the search hit, a bookmark, the call under the mouse, or the whole figure (a cone tree: the call's subtree)"""

    bl_idname = "tracevis3d.zoom_to"
    bl_label = "Zoom to…"

    def invoke(self, context, event):
        if self.target == "MOUSE" and self.mouse_x < 0:
            self.mouse_x, self.mouse_y = event.mouse_region_x, event.mouse_region_y
        if self.target == "RANGE" and not (self.start and self.end):
            return context.window_manager.invoke_props_dialog(self)
        return self.execute(context)

    def _window(self, context):
        from ...tracevis3d.params.kinds import parse_time

        if self.target == "WHOLE":
            return None
        if self.target == "RANGE":
            t0, t1 = parse_time(self.start or "0"), parse_time(self.end or "0")
            if not t1 > t0:
                raise ValueError(f"the range needs start < end, got {self.start!r}..{self.end!r}")
            return (t0, t1)
        if self.target == "PICKED":
            call = settings_of(context).picked_call
            if call < 0:
                raise ValueError("no picked call: pick one with Show Call (Shift+Alt+D) first")
            return _call_window(context, call)
        if self.target in ("HIT", "BOOKMARK"):
            from ...tracevis3d.blender.landmarks import landmarks

            lm = landmarks(context.scene)
            if self.target == "HIT":
                if not lm.hits:
                    raise ValueError("no hits: search first")
                return _call_window(context, int(lm.hits[max(lm.current, 0)]))
            if self.index >= len(lm.bookmarks):
                raise ValueError(f"no bookmark {self.index} ({len(lm.bookmarks)} bookmarks)")
            b = lm.bookmarks[self.index]
            return _call_window(context, int(b["call"] if isinstance(b, dict) else b.call))
        if self.mouse_x < 0 or context.region is None or context.region_data is None:
            raise ValueError("the mouse is not over a 3D viewport")
        from ...tracevis3d.blender.pick import mouse_ray, pick_ray
        from ...tracevis3d.blender.view import ZOOM_COLLECTION

        ray = mouse_ray(context, (self.mouse_x, self.mouse_y))
        call = None
        if ray is not None:  # the refined stretch first: where it stands the overview is cut away
            call = pick_ray(*ray, collection_name=ZOOM_COLLECTION) if ZOOM_COLLECTION in bpy.data.collections else None
            call = pick_ray(*ray) if call is None else call
        if call is None:
            raise ValueError("no call under the mouse")
        return _call_window(context, call)

    @reported
    def execute(self, context):
        from ...tracevis3d.blender import view
        from .. import zoom_follow

        window = self._window(context)

        call = None
        if window is not None and window[0] == "CALL":  # a cone tree: the call's subtree
            call, window = window[1], None

        def done(context, result):
            if result.get("action") == "refine" and result.get("call") is not None:
                zoom_follow.fly_to_camera(context.scene.objects.get(result["camera"]), context.scene)
                return (f"the subtree of call {result['call']:,}: {result['nodes']:,} nodes, "
                        f"{len(result['names'])} named in {result['seconds']['total']:.2f} s")
            if result.get("action") == "refine":
                zoom_follow.fly_to_camera(context.scene.objects.get(result["camera"]), context.scene)
                t0, t1 = result["window"]
                return (f"{(t1 - t0) / 1000:.3g} ms at {t0 / 1000:.6g} ms: {result['calls_drawn']:,} calls drawn, "
                        f"{len(result['names'])} named in {result['seconds']['total']:.2f} s")
            cam = context.scene.camera
            if cam is not None:
                zoom_follow.fly_to_camera(cam, context.scene)
            return "the whole figure"

        return self.start_job(context, view.zoom_job(context.scene, window, call=call), done)


CLASSES = (TRACEVIS3D_OT_zoom_to,)
