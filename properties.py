"""Scene properties: the trace path, the icicle parameters and the render settings.

Everything the panel edits lives in ``bpy.types.Scene.tracevis3d`` (a PropertyGroup), so a
saved .blend reopens the same session.  `icicle_params_dict` turns the properties into the
JSON-able dict of ``tracevis3d.layout.params.IcicleParams.from_dict``; `set_from_params_dict`
goes the other way (used to show what a scene was built with).

A .blend saved by the command line (``python -m tracevis3d ... --save``, where the extension
is not registered) has empty properties but a build record (``scene["tracevis3d_build"]``);
`restore_session`, run by the extension's ``load_post`` handler, fills the trace path and the
parameters from it, and finds a trace whose folder moved together with the .blend through the
path relative to the .blend that `note_blend_location` (``save_pre``) records.
"""
from __future__ import annotations

import os

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
    ("auto", "Automatic", "By module for large traces, by function for small ones"),
    ("function", "Function", "One colour per function"),
    ("module", "Module", "One colour per module (from the function's file path)"),
    ("kind", "Waits and I/O", "SyncTrace's scheme: brown when neither the call nor its subtree waits "
                              "or does I/O, else red to green by the share of I/O in the waiting"),
    ("depth", "Depth", "Colour by stack depth"),
    ("inclusive", "Inclusive time", "Perceptual colour scale of inclusive time"),
    ("self", "Self time", "Perceptual colour scale of self time"),
)
THREAD_ORDERS = (
    ("default", "Default", "Main thread first, then by first activity"),
    ("start", "Start", "By first activity"),
    ("name", "Name", "By thread name"),
    ("busy", "Busiest first", "By the time the thread is busy"),
    ("list", "These first", "The threads listed below first, the others after them"),
)
FOLD_MODES = (
    ("auto", "Automatic", "Fold levels that carry little information (a call whose single child "
                          "covers nearly all of its time; runs of import machinery) into thin bands"),
    ("none", "None", "Every stack level at full height"),
    ("levels", "Levels", "Fold the stack level ranges given below"),
)
RENDER_ENGINES = (
    ("BLENDER_WORKBENCH", "Workbench", "Fast, flat-lit preview render"),
    ("BLENDER_EEVEE", "EEVEE", "Real-time renderer with cushion shading and soft light"),
    ("CYCLES", "Cycles", "Path tracer (slow without a GPU)"),
)

# property name -> IcicleParams field (those not listed here map 1:1 by name)
_SCALAR_FIELDS = ("extrude_measure", "color_by", "cluster_px", "label_px", "label_min_px",
                  "show_labels", "show_legend", "show_axes", "show_title", "orthographic")


class TraceVis3DSettings(PropertyGroup):
    """TraceVis3D state of one scene (saved with the .blend)."""

    trace_path: StringProperty(
        name="Trace",
        description="Trace file: Chrome Trace Event JSON (.json, .json.gz) or native (.npz)",
        subtype="FILE_PATH",
        default="",
    )
    trace_path_rel: StringProperty(
        name="Trace (relative)", default="", options={"HIDDEN"},
        description="The trace path relative to the .blend, recorded when it is saved "
                    "(used when the folder moved)",
    )
    # --- IcicleParams
    extrude_measure: EnumProperty(
        name="Extrude by", items=EXTRUDE_MEASURES, default="self",
        description="Measure shown by each box's extent along the third axis",
    )
    color_by: EnumProperty(name="Colour by", items=COLOR_BY, default="auto",
                           description="What a box's colour encodes")
    threads: StringProperty(
        name="Threads",
        description="Threads to show: comma-separated names or indices (empty: all threads)",
        default="",
    )
    thread_order: EnumProperty(name="Thread order", items=THREAD_ORDERS, default="default",
                               description="Order of the thread lanes")
    thread_order_list: StringProperty(
        name="First threads", default="",
        description="Threads shown first, in this order: comma-separated names or indices",
    )
    fold_mode: EnumProperty(name="Fold", items=FOLD_MODES, default="auto",
                            description="Stack levels drawn as thin bands")
    fold_levels: StringProperty(
        name="Fold levels", default="",
        description="Level ranges to fold, inclusive: '3:40' or '3:40, 50:' (A: and :B are open)",
    )
    hide: StringProperty(
        name="Hide functions", default="",
        description="Regular expressions separated by ';': calls whose function name matches one are "
                    "hidden and their children move up (write a literal ';' as \\x3b)",
    )
    hide_modules: StringProperty(
        name="Hide modules", default="",
        description="Comma-separated modules (e.g. importlib, runpy): their calls are hidden and "
                    "their children move up",
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
    label_px: FloatProperty(name="Label size (px)", default=16.0, min=14.0, max=200.0,
                            description="Label text height in pixels at 1080 image lines "
                                        "(scaled with the resolution)")
    label_min_px: FloatProperty(name="Label min width (px)", default=0.0, min=0.0, soft_max=400.0,
                                description="Only calls at least this wide get a text label "
                                            "(0: any box with room for 3 characters)")
    lane_gap_auto: BoolProperty(name="Automatic lane gap", default=True,
                                description="Space thread lanes so none hides the one behind it")
    lane_gap: FloatProperty(name="Lane gap", default=1.0, min=0.0, soft_max=20.0, subtype="DISTANCE",
                            description="Extra gap between thread lanes (world units)")
    orthographic: BoolProperty(name="Orthographic camera", default=False,
                               description="Frame the icicle with an orthographic camera")
    show_labels: BoolProperty(name="Labels", default=True, description="Text labels on wide calls")
    show_legend: BoolProperty(name="Legend", default=True, description="Colour legend")
    show_axes: BoolProperty(name="Axes", default=True, description="Time axis and lane names")
    show_title: BoolProperty(name="Title", default=True, description="Title above the figure")
    title: StringProperty(name="Title text", default="",
                          description="Title of the figure (empty: trace name, calls, threads and time span)")
    # --- render
    render_engine: EnumProperty(name="Engine", items=RENDER_ENGINES, default="BLENDER_WORKBENCH")
    render_transparent: BoolProperty(name="Transparent background", default=False)
    render_samples: IntProperty(name="Samples", default=0, min=0, soft_max=1024,
                                description="Render samples (0: the engine's default)")
    render_output: StringProperty(name="Output", subtype="FILE_PATH", default="//tracevis3d.png",
                                  description="Where Render Figure writes the image; its extension names "
                                              "the format (.png, .jpg, .exr, .tif)")
    # --- compare two runs (TraceDiff)
    compare_path: StringProperty(
        name="Compare with", subtype="FILE_PATH", default="",
        description="A second run of the program (.json, .json.gz, .npz) to compare the trace with",
    )
    compare_tau: FloatProperty(name="Similarity τ", default=0.2, min=0.01, max=0.99,
                               description="Calls match when the Jaccard similarity of their "
                                           "function sets is above τ")
    compare_summary: StringProperty(name="Comparison", default="", options={"SKIP_SAVE"})
    # --- details on demand (last picked call)
    picked_call: IntProperty(name="Picked call", default=-1, options={"SKIP_SAVE"})
    picked_text: StringProperty(name="Picked call details", default="", options={"SKIP_SAVE"})

    def restore_from_build(self, force: bool = False) -> bool:
        """Fill these settings from the scene's build record (see `restore_session`)."""
        return restore_session(self.id_data, force=force)


def parse_threads(text: str):
    """'' -> None (all threads); 'main, 3' -> ['main', 3] (integers are thread indices)."""
    items = [s.strip() for s in (text or "").split(",") if s.strip()]
    if not items:
        return None
    return [int(s) if s.lstrip("-").isdigit() else s for s in items]


def _join_threads(threads) -> str:
    return "" if not threads else ", ".join(str(t) for t in threads)


def split_hide(text: str) -> list:
    """'^_call;importlib' -> ['^_call', 'importlib'] (';'-separated regular expressions)."""
    return [s.strip() for s in (text or "").split(";") if s.strip()]


def split_modules(text: str) -> list:
    return [s.strip() for s in (text or "").split(",") if s.strip()]


def _fold_kind(fold) -> str:
    s = "none" if fold is None else str(fold).strip().lower()
    if s in ("auto", ""):
        return "auto"
    if s in ("none", "off", "no"):
        return "none"
    return "levels"


def icicle_params_dict(settings) -> dict:
    """The JSON-able dict for ``IcicleParams.from_dict`` (raises ValueError on bad values)."""
    d = {name: getattr(settings, name) for name in _SCALAR_FIELDS}
    d["threads"] = parse_threads(settings.threads)
    if settings.thread_order == "list":
        order = parse_threads(settings.thread_order_list)
        if not order:
            raise ValueError("thread order 'These first' needs the threads to show first "
                             "(comma-separated names or indices)")
        d["thread_order"] = order
    else:
        d["thread_order"] = settings.thread_order
    if settings.use_time_window:
        t0, t1 = float(settings.time_window_start), float(settings.time_window_end)
        if not t1 > t0:
            raise ValueError(f"time window is empty: 'To' ({t1:g} µs) must be after 'From' ({t0:g} µs)")
        d["time_window"] = [t0, t1]
    else:
        d["time_window"] = None
    if settings.fold_mode == "levels":
        levels = ",".join(p.strip() for p in settings.fold_levels.split(",") if p.strip())
        if not levels:
            raise ValueError("fold 'Levels' needs level ranges such as 3:40 or 3:40, 50:")
        d["fold"] = levels
    else:
        d["fold"] = settings.fold_mode
    d["hide"] = split_hide(settings.hide)
    d["hide_modules"] = split_modules(settings.hide_modules)
    d["title"] = settings.title if settings.title.strip() else None
    d["resolution"] = [int(settings.resolution_x), int(settings.resolution_y)]
    d["lane_gap"] = None if settings.lane_gap_auto else float(settings.lane_gap)
    d["max_depth"] = int(settings.max_depth) if settings.use_max_depth else None
    return d


def set_from_params_dict(settings, d: dict) -> None:
    """Copy an ``IcicleParams.to_dict()`` back into the properties.

    Unknown keys are ignored; a value the properties cannot hold (a colour mode of a newer
    version, a hand-edited record with a wrong type) leaves that setting as it was.
    """
    def field(name, apply):
        if name not in d:
            return
        try:
            apply(d[name])
        except (TypeError, ValueError, OverflowError, IndexError, KeyError, AttributeError):
            pass

    def window(w):
        if w is not None:
            settings.time_window_start, settings.time_window_end = float(w[0]), float(w[1])
        settings.use_time_window = w is not None

    def optional(flag, name, convert, auto_when_none=False):
        def apply(v):
            if v is not None:
                setattr(settings, name, convert(v))
            setattr(settings, flag, (v is None) if auto_when_none else (v is not None))
        return apply

    def thread_order(order):
        if isinstance(order, str):
            settings.thread_order = order
        elif order:
            settings.thread_order_list = _join_threads(list(order))
            settings.thread_order = "list"

    def fold(v):
        kind = _fold_kind(v)
        if kind == "levels":
            settings.fold_levels = str(v)
        settings.fold_mode = kind

    def title(v):
        settings.title = str(v or "")
        if v == "":  # IcicleParams' "no title"
            settings.show_title = False

    def resolution(v):
        if v:
            settings.resolution_x, settings.resolution_y = (int(x) for x in v)

    for name in _SCALAR_FIELDS:
        field(name, lambda v, name=name: v is not None and setattr(settings, name, v))
    field("lane_gap", optional("lane_gap_auto", "lane_gap", float, auto_when_none=True))
    field("max_depth", optional("use_max_depth", "max_depth", int))
    field("threads", lambda v: setattr(settings, "threads", _join_threads(v)))
    field("thread_order", thread_order)
    field("fold", fold)
    def listed(v):
        return [v] if isinstance(v, str) else list(v or [])

    field("hide", lambda v: setattr(settings, "hide", "; ".join(str(x) for x in listed(v))))
    field("hide_modules", lambda v: setattr(settings, "hide_modules", ", ".join(str(x) for x in listed(v))))
    field("title", title)
    field("time_window", window)
    field("resolution", resolution)


# ------------------------------------------------------------------ saved scenes
def _absolute(path: str, blend_path: str) -> str:
    """A trace path as stored in the properties, made absolute ('//' is next to the .blend)."""
    from .tracevis3d.blender.hygiene import from_blend_relative

    path = (path or "").strip()
    if path.startswith("//"):
        return from_blend_relative(path, blend_path) or ""
    return os.path.abspath(os.path.expanduser(path)) if path else ""


def restore_session(scene, force: bool = False, blend_path: str | None = None) -> bool:
    """Make ``scene.tracevis3d`` point at its trace after a .blend was opened; True if changed.

    - Empty trace path (a .blend saved by the command line) or ``force``: the trace path and
      the parameters come from the build record ``scene["tracevis3d_build"]``.
    - A trace path that does not exist any more: the same file relative to the .blend
      (recorded when it was saved) is used when it exists (the folder moved).
    An existing trace path is never changed (unless ``force``).
    """
    from .tracevis3d.blender import hygiene

    s = getattr(scene, "tracevis3d", None)
    if s is None:
        return False
    blend = bpy.data.filepath if blend_path is None else blend_path
    rec = hygiene.read_build_record(scene)
    current = _absolute(s.trace_path, blend)
    if current and not force:
        if os.path.isfile(current):
            return False
        candidates = [hygiene.from_blend_relative(s.trace_path_rel, blend)]
        if rec and rec.get("trace_path") and os.path.abspath(rec["trace_path"]) == current:
            candidates.append(hygiene.from_blend_relative(rec.get("trace_path_rel"), blend))
        found = hygiene.find_trace(candidates)
        if found is None:
            return False
        s.trace_path = found
        return True
    if rec is None:
        return False
    found, recorded = hygiene.recorded_trace_path(scene, blend)
    path = found or recorded
    if not path:
        return False
    s.trace_path = path
    s.trace_path_rel = hygiene.relative_to_blend(path, blend) or ""
    if isinstance(rec.get("params"), dict):
        set_from_params_dict(s, rec["params"])
    return True


def note_blend_location(scene, blend_path: str) -> None:
    """Before saving to ``blend_path``: record the trace path relative to it (and remap a
    '//' trace path to the new location, as Blender does with its own relative paths)."""
    from .tracevis3d.blender import hygiene

    s = getattr(scene, "tracevis3d", None)
    if s is not None and s.trace_path.strip():
        current = _absolute(s.trace_path, bpy.data.filepath)
        rel = hygiene.relative_to_blend(current, blend_path) or ""
        s.trace_path_rel = rel
        if s.trace_path.strip().startswith("//") and rel:
            s.trace_path = rel
    hygiene.remember_blend_location(scene, blend_path)


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
