"""Scene properties of the thread view (``scene.tracevis3d_threads``, saved with the .blend):
the `ThreadsParams` of the panel's "Threads" section and the last analysis' summary."""
from __future__ import annotations

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, PointerProperty, StringProperty
from bpy.types import PropertyGroup

COLOR_BY = (("kind", "Wait / I/O", "Bars brown/red/green by wait vs I/O share; curves in the waiting thread's colour"),
            ("thread", "Thread", "Bars and curves in thread colours"),
            ("object", "Object", "Curves by object; grey when only one thread ever waited on it"))


def _names(text: str) -> list:
    return [t.strip() for t in text.split(",") if t.strip()]


class TraceVis3DThreadsSettings(PropertyGroup):
    """Thread view (SyncTrace) settings of one scene."""

    focus: StringProperty(name="Focus", default="",
                          description="Thread (name or index) drawn as the straight icicle, its sector enlarged "
                                      "(empty: the thread that waits longest)")
    color_by: EnumProperty(name="Colour", items=COLOR_BY, default="kind")
    threads: StringProperty(name="Threads", default="",
                            description="Threads to show, in ring order, comma-separated (empty: all)")
    hide_threads: StringProperty(name="Hide", default="", description="Threads to leave out, comma-separated")
    fold: StringProperty(name="Fold", default="auto",
                         description="Fold rule of the ring and the icicle: auto, none, or level ranges A:B,C:D")
    max_levels: IntProperty(name="Levels", default=14, min=1, max=1000,
                            description="Levels each thread's section of the ring may take (deeper stacks are squeezed)")
    zero_radius: FloatProperty(name="Zero radius", default=9.0, min=1.0, max=1000.0,
                               description="Radius of stack level 0, in level widths (room for the curves)")
    focus_scale: FloatProperty(name="Focus width", default=2.5, min=1.0, max=50.0,
                               description="The focused thread's sector is this many times wider")
    use_window: BoolProperty(name="Window", default=False, description="Show only a time window")
    window_start: FloatProperty(name="From (ms)", default=0.0, min=0.0)
    window_end: FloatProperty(name="To (ms)", default=100.0, min=0.0)
    show_icicle: BoolProperty(name="Focused icicle", default=True,
                              description="Draw the focused thread as a straight icicle behind the ring")
    highlight_picked: BoolProperty(name="Highlight picked wait", default=False,
                                   description="Object colours: curves red when their wait acts on the picked "
                                               "call's objects, brown when they share one, grey otherwise")
    summary: StringProperty(name="Summary", default="", options={"SKIP_SAVE"})
    picked_text: StringProperty(name="Picked", default="", options={"SKIP_SAVE"})


def threads_params_dict(s) -> dict:
    """The `ThreadsParams` fields of the panel's settings."""
    return {"focus": s.focus.strip() or None, "color_by": s.color_by, "threads": _names(s.threads) or None,
            "hide_threads": _names(s.hide_threads), "fold": s.fold.strip() or "auto", "max_levels": int(s.max_levels),
            "zero_radius": float(s.zero_radius), "focus_scale": float(s.focus_scale),
            "time_window": (1e3 * s.window_start, 1e3 * s.window_end) if s.use_window else None,
            "show_icicle": bool(s.show_icicle)}


CLASSES = (TraceVis3DThreadsSettings,)


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Scene.tracevis3d_threads = PointerProperty(type=TraceVis3DThreadsSettings)


def unregister():
    if hasattr(bpy.types.Scene, "tracevis3d_threads"):
        del bpy.types.Scene.tracevis3d_threads
    for cls in reversed(CLASSES):
        if getattr(cls, "is_registered", False):
            bpy.utils.unregister_class(cls)
