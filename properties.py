"""Scene properties: the trace path, the icicle parameters and the render settings.

Everything the panel edits lives in ``bpy.types.Scene.tracevis3d`` (a PropertyGroup), so a
saved .blend reopens the same session.  `icicle_params_dict` turns the properties into the
JSON-able dict of ``tracevis3d.layout.icicle.IcicleParams.from_dict``; `set_from_params_dict`
goes the other way (used to show what a scene was built with).
"""
from __future__ import annotations

import bpy
from bpy.props import (
    BoolProperty,
    EnumProperty,
    FloatProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)
from bpy.types import PropertyGroup

EXTRUDE_MEASURES = (
    ("constant", "Constant", "Every box has the same depth"),
    ("inclusive", "Inclusive time", "Depth grows with the call's inclusive (total) time"),
    ("self", "Self time", "Depth grows with the call's self (exclusive) time"),
    ("calls", "Calls of function", "Depth grows with how often the call's function is called"),
)
COLOR_BY = (
    ("function", "Function", "One colour per function"),
    ("module", "Module", "One colour per module (from the function's name)"),
    ("depth", "Depth", "Colour by stack depth"),
    ("inclusive", "Inclusive time", "Perceptual colour scale of inclusive time"),
    ("self", "Self time", "Perceptual colour scale of self time"),
)
RENDER_ENGINES = (
    ("BLENDER_WORKBENCH", "Workbench", "Fast, flat-lit preview render"),
    ("BLENDER_EEVEE", "EEVEE", "Real-time renderer with cushion shading and soft light"),
    ("CYCLES", "Cycles", "Path tracer (slow without a GPU)"),
)

# property name -> IcicleParams field (those not listed here map 1:1 by name)
_SCALAR_FIELDS = ("extrude_measure", "color_by", "cluster_px", "label_min_px",
                  "show_labels", "show_legend", "show_axes", "orthographic")


class TraceVis3DSettings(PropertyGroup):
    """TraceVis3D state of one scene (saved with the .blend)."""

    trace_path: StringProperty(
        name="Trace",
        description="Trace file: Chrome Trace Event JSON (.json, .json.gz) or native (.npz)",
        subtype="FILE_PATH",
        default="",
    )
    # --- IcicleParams
    extrude_measure: EnumProperty(
        name="Extrude by", items=EXTRUDE_MEASURES, default="inclusive",
        description="Measure shown by each box's extent along the third axis",
    )
    color_by: EnumProperty(name="Colour by", items=COLOR_BY, default="function",
                           description="What a box's colour encodes")
    threads: StringProperty(
        name="Threads",
        description="Threads to show: comma-separated names or indices (empty: all threads)",
        default="",
    )
    use_time_window: BoolProperty(name="Time window", default=False,
                                  description="Show only calls overlapping a time window")
    time_window_start: FloatProperty(name="From (µs)", default=0.0, min=0.0,
                                     description="Start of the time window, µs from the trace start")
    time_window_end: FloatProperty(name="To (µs)", default=0.0, min=0.0,
                                   description="End of the time window, µs from the trace start")
    use_max_depth: BoolProperty(name="Limit depth", default=False,
                                description="Show only the top stack levels")
    max_depth: IntProperty(name="Max depth", default=20, min=0, soft_max=200,
                           description="Deepest stack level shown (roots are level 0)")
    resolution_x: IntProperty(name="Width", default=1920, min=16, max=16384, subtype="PIXEL",
                              description="Figure width in pixels (also the unit of sub-pixel clustering)")
    resolution_y: IntProperty(name="Height", default=1080, min=16, max=16384, subtype="PIXEL",
                              description="Figure height in pixels")
    cluster_px: FloatProperty(
        name="Cluster below (px)", default=1.0, min=0.0, soft_max=8.0,
        description="Calls narrower than this many pixels are merged into lighter cluster boxes",
    )
    label_min_px: FloatProperty(name="Label min width (px)", default=48.0, min=0.0, soft_max=400.0,
                                description="Only calls at least this wide get a text label")
    lane_gap_auto: BoolProperty(name="Automatic lane gap", default=True,
                                description="Space thread lanes so none hides the one behind it")
    lane_gap: FloatProperty(name="Lane gap", default=1.0, min=0.0, soft_max=20.0, subtype="DISTANCE",
                            description="Extra gap between thread lanes (world units)")
    orthographic: BoolProperty(name="Orthographic camera", default=False,
                               description="Frame the icicle with an orthographic camera")
    show_labels: BoolProperty(name="Labels", default=True, description="Text labels on wide calls")
    show_legend: BoolProperty(name="Legend", default=True, description="Colour legend")
    show_axes: BoolProperty(name="Axes", default=True, description="Time axis and lane names")
    # --- render
    render_engine: EnumProperty(name="Engine", items=RENDER_ENGINES, default="BLENDER_WORKBENCH")
    render_transparent: BoolProperty(name="Transparent background", default=False)
    render_samples: IntProperty(name="Samples", default=0, min=0, soft_max=1024,
                                description="Render samples (0: the engine's default)")
    render_output: StringProperty(name="Output", subtype="FILE_PATH", default="//tracevis3d.png",
                                  description="Where Render Figure writes the PNG")
    # --- details on demand (last picked call)
    picked_call: IntProperty(name="Picked call", default=-1, options={"SKIP_SAVE"})
    picked_text: StringProperty(name="Picked call details", default="", options={"SKIP_SAVE"})


def parse_threads(text: str):
    """'' -> None (all threads); 'main, 3' -> ['main', 3] (integers are thread indices)."""
    items = [s.strip() for s in (text or "").split(",") if s.strip()]
    if not items:
        return None
    return [int(s) if s.lstrip("-").isdigit() else s for s in items]


def icicle_params_dict(settings) -> dict:
    """The JSON-able dict for ``IcicleParams.from_dict`` (raises ValueError on bad values)."""
    d = {name: getattr(settings, name) for name in _SCALAR_FIELDS}
    d["threads"] = parse_threads(settings.threads)
    if settings.use_time_window:
        t0, t1 = float(settings.time_window_start), float(settings.time_window_end)
        if not t1 > t0:
            raise ValueError(f"time window is empty: 'To' ({t1:g} µs) must be after 'From' ({t0:g} µs)")
        d["time_window"] = [t0, t1]
    else:
        d["time_window"] = None
    d["resolution"] = [int(settings.resolution_x), int(settings.resolution_y)]
    d["lane_gap"] = None if settings.lane_gap_auto else float(settings.lane_gap)
    d["max_depth"] = int(settings.max_depth) if settings.use_max_depth else None
    return d


def set_from_params_dict(settings, d: dict) -> None:
    """Copy an ``IcicleParams.to_dict()`` back into the properties (unknown keys ignored)."""
    for name in _SCALAR_FIELDS:
        if name in d and d[name] is not None:
            setattr(settings, name, d[name])
    if "lane_gap" in d:
        settings.lane_gap_auto = d["lane_gap"] is None
        if d["lane_gap"] is not None:
            settings.lane_gap = float(d["lane_gap"])
    if "max_depth" in d:
        settings.use_max_depth = d["max_depth"] is not None
        if d["max_depth"] is not None:
            settings.max_depth = int(d["max_depth"])
    threads = d.get("threads")
    settings.threads = "" if not threads else ", ".join(str(t) for t in threads)
    window = d.get("time_window")
    settings.use_time_window = window is not None
    if window is not None:
        settings.time_window_start, settings.time_window_end = float(window[0]), float(window[1])
    if d.get("resolution"):
        settings.resolution_x, settings.resolution_y = (int(v) for v in d["resolution"])


CLASSES = (TraceVis3DSettings,)


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Scene.tracevis3d = PointerProperty(type=TraceVis3DSettings)


def unregister():
    if hasattr(bpy.types.Scene, "tracevis3d"):
        del bpy.types.Scene.tracevis3d
    for cls in reversed(CLASSES):
        if getattr(cls, "is_registered", False):
            bpy.utils.unregister_class(cls)
