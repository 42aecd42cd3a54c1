"""Scene properties: the trace path, the icicle parameters, the comparison and the render settings.

Everything the panel edits lives in ``bpy.types.Scene.tracevis3d`` (a PropertyGroup), so a
saved .blend reopens the same session.  `icicle_params_dict` turns the properties into the
JSON-able dict of ``tracevis3d.layout.params.IcicleParams.from_dict``; `set_from_params_dict`
goes the other way (used to show what a scene was built with).

A .blend saved by the command line (``python -m tracevis3d ... --save``, where the extension
is not registered) has empty properties but a build record (``scene["tracevis3d_build"]``);
`restore_session`, run by the extension's ``load_post`` handler, fills the trace path and the
parameters from it, and finds a trace whose folder moved together with the .blend through the
path relative to the .blend that `note_blend_location` (``save_pre``) records.

The comparison of two runs (TraceDiff) has its own properties (``compare_*``: the second
trace, τ, λ, band, β, colour mode and viewpoint, threads, focus windows, brushing and
align) and shares the appearance ones (fold, clusters, labels, legend, title, camera,
resolution) with the icicle; `compare_params_dict` / `set_from_compare_params` convert them
to and from ``tracevis3d.layout.compare.CompareParams``.  A comparison scene saved by the
command line is restored from its record ``scene["tracevis3d_compare"]`` the same way.
Changing the colour mode or the viewpoint recolours the tubes at once
(`tracevis3d.blender.tubes.set_tube_colour_mode`: material indices, no rebuild).
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

COMPARE_COLOR_BY = (
    ("permutation", "Order changed", "Red when a match moved within its group (the order of the calls "
                                      "changed), grey when it kept its place (TraceDiff IV-D)"),
    ("trace", "Position in group", "Rainbow of each match's position in its group, seen from the "
                                   "viewpoint's run: outliers moved (TraceDiff IV-D)"),
    ("similarity", "Similarity", "Opaque and dark for strong matches, light and translucent for weak ones"),
    ("ratio", "Duration ratio", "Red when the call takes longer in B, blue when shorter, grey when alike"),
)
VIEWPOINTS = (("a", "A", "Positions within the group as seen from run A (the upper icicle)"),
              ("b", "B", "Positions within the group as seen from run B (the lower icicle)"))

# property name -> IcicleParams field (those not listed here map 1:1 by name)
_SCALAR_FIELDS = ("extrude_measure", "color_by", "cluster_px", "label_px", "label_min_px",
                  "show_labels", "show_legend", "show_axes", "show_title", "orthographic")


# Defined before the class: Blender evaluates the (string) annotations in a namespace
# that holds only what the module defined so far.
def _recolour_tubes(settings, _context) -> None:
    """Update of the tube colour and viewpoint properties (never raises: an update callback
    has nowhere to report; the operator `tracevis3d.compare_color_mode` does)."""
    try:
        recolour_tubes(settings.id_data, compare_color_mode(settings))
    except Exception as e:  # noqa: BLE001
        import sys

        print(f"tracevis3d: warning: cannot recolour the tubes: {' '.join(str(e).split())}", file=sys.stderr)


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
    compare_path_rel: StringProperty(
        name="Compare with (relative)", default="", options={"HIDDEN"},
        description="The second trace's path relative to the .blend, recorded when it is saved",
    )
    compare_lam: FloatProperty(name="Tube waist λ", default=0.2, min=0.0, max=1.0,
                               description="How much the tubes thin towards their middle: 0 thin, "
                                           "1 not at all (TraceDiff Eq. 5)")
    compare_band: FloatProperty(name="Band (levels)", default=8.0, min=0.5, max=100.0,
                                description="Height of the bundling band between the two icicles, "
                                            "in stack levels")
    compare_beta: FloatProperty(name="Bundling β", default=0.85, min=0.0, max=1.0,
                                description="Bundling strength: 0 straight tubes, 1 fully bundled")
    compare_all_tubes: BoolProperty(name="All tubes", default=False,
                                    description="Also draw wide tubes whose correspondence finer tubes "
                                                "already show (off: a tube wider than 96 px at both ends is "
                                                "left out when finer tubes start inside both of its calls)")
    compare_color_by: EnumProperty(name="Tube colour", items=COMPARE_COLOR_BY, default="permutation",
                                   update=_recolour_tubes,
                                   description="What a tube's colour says (switches without a rebuild)")
    compare_viewpoint: EnumProperty(name="Viewpoint", items=VIEWPOINTS, default="a",
                                    update=_recolour_tubes,
                                    description="The run whose group positions colour the tubes "
                                                "(tube colour 'Position in group')")
    compare_thread_a: StringProperty(name="Thread of A", default="",
                                     description="Thread of A to show, by name or index (empty: the main thread)")
    compare_thread_b: StringProperty(name="Thread of B", default="",
                                     description="Thread of B to show, by name or index (empty: the main thread)")
    use_compare_window_a: BoolProperty(name="Focus A", default=False,
                                       description="Show only a time window of A (its focus)")
    compare_window_a_start: FloatProperty(name="A from (µs)", default=0.0, min=0.0,
                                          description="Start of A's focus window, µs from the trace start")
    compare_window_a_end: FloatProperty(name="A to (µs)", default=0.0, min=0.0,
                                        description="End of A's focus window, µs from the trace start")
    use_compare_window_b: BoolProperty(name="Focus B", default=False,
                                       description="Show only a time window of B (its focus)")
    compare_window_b_start: FloatProperty(name="B from (µs)", default=0.0, min=0.0,
                                          description="Start of B's focus window, µs from the trace start")
    compare_window_b_end: FloatProperty(name="B to (µs)", default=0.0, min=0.0,
                                        description="End of B's focus window, µs from the trace start")
    compare_brush_a: StringProperty(
        name="Brush A", default="",
        description="A call of A (index, or function name: its longest call): only the groups rooted in "
                    "its stack keep their colour, the other tubes turn grey (empty: no brushing)")
    compare_brush_b: StringProperty(name="Brush B", default="",
                                    description="The same for a call of B (empty: no brushing)")
    compare_align_a: StringProperty(
        name="Align to", default="",
        description="A call of A (index, or function name: its longest call): Align moves B's focus "
                    "window onto its matches")
    compare_show_overview: BoolProperty(name="Overview bars", default=True,
                                        description="Bars of matches per time bin outside the icicles")
    compare_summary: StringProperty(name="Comparison", default="", options={"SKIP_SAVE"})
    # --- live feed (docs/live-protocol.md)
    live_endpoint: StringProperty(
        name="Endpoint", default="tcp://127.0.0.1:5599",
        description="ZeroMQ endpoint this viewer binds; programs run with `python -m tracevis3d.live run "
                    "--endpoint ...` connect to it (loopback only without CURVE keys)")
    live_connect: BoolProperty(name="Connect to a program", default=False,
                               description="Connect to a program started with --bind instead of binding")
    live_follow: BoolProperty(name="Follow now", default=True,
                              description="The camera follows the newest calls; off: the whole run so far")
    live_window_ms: FloatProperty(name="Window (ms)", default=1000.0, min=0.001, max=1e9,
                                  description="Time shown across the view while following now")
    live_status: StringProperty(name="Live status", default="", options={"SKIP_SAVE"})
    # --- details on demand (last picked call)
    picked_call: IntProperty(name="Picked call", default=-1, options={"SKIP_SAVE"})
    picked_text: StringProperty(name="Picked call details", default="", options={"SKIP_SAVE"})
    picked_side: StringProperty(name="Picked side", default="", options={"SKIP_SAVE"},
                                description="Run of the picked call in a comparison: 'a', 'b', or '' (icicle)")

    def restore_from_build(self, force: bool = False, what: str | None = None) -> bool:
        """Fill these settings from the scene's records (see `restore_session`); ``what``:
        "icicle" or "compare" for the scene just built, None for both."""
        return restore_session(self.id_data, force=force, what=what)


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


def _window_of(settings, prefix: str, what: str):
    """[t0, t1] of the window properties ``use_<prefix>``, ``<prefix>_start``/``_end``, or None
    (ValueError naming ``what`` when it is empty)."""
    if not getattr(settings, f"use_{prefix}"):
        return None
    t0, t1 = float(getattr(settings, f"{prefix}_start")), float(getattr(settings, f"{prefix}_end"))
    if not t1 > t0:
        raise ValueError(f"{what} is empty: 'To' ({t1:g} µs) must be after 'From' ({t0:g} µs)")
    return [t0, t1]


def _fold_of(settings) -> str:
    """The fold rule of the properties ("auto", "none" or level ranges)."""
    if settings.fold_mode != "levels":
        return settings.fold_mode
    levels = ",".join(p.strip() for p in settings.fold_levels.split(",") if p.strip())
    if not levels:
        raise ValueError("fold 'Levels' needs level ranges such as 3:40 or 3:40, 50:")
    return levels


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
    d["time_window"] = _window_of(settings, "time_window", "time window")
    d["fold"] = _fold_of(settings)
    d["hide"] = split_hide(settings.hide)
    d["hide_modules"] = split_modules(settings.hide_modules)
    d["title"] = settings.title if settings.title.strip() else None
    d["resolution"] = [int(settings.resolution_x), int(settings.resolution_y)]
    d["lane_gap"] = None if settings.lane_gap_auto else float(settings.lane_gap)
    d["max_depth"] = int(settings.max_depth) if settings.use_max_depth else None
    st = getattr(settings.id_data, "tracevis3d_structure", None)  # the Structure section's filters
    if st is not None:
        d["hide_utilities"] = int(st.hide_utilities)
        d["collapse_patterns"] = bool(st.collapse_patterns)
        d["highlight"] = split_hide(st.highlight)
        d["expand"] = [c for c in (int(x) for x in st.cone_expand.split(",") if x.strip().isdigit())]
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


# ------------------------------------------------------------------ the comparison
#: CompareParams fields the comparison takes from the icicle's (shared) properties as they are
_SHARED_COMPARE_FIELDS = ("cluster_px", "label_px", "label_min_px", "show_labels", "show_legend",
                          "show_title", "orthographic")


def compare_color_mode(settings) -> str:
    """``CompareParams.color_by`` of the tube colour and viewpoint properties."""
    if settings.compare_color_by == "trace":
        return f"trace-{settings.compare_viewpoint}"
    return settings.compare_color_by


def _one_thread(text: str, side: str):
    """The thread of one side (name or index), or None (the main thread)."""
    items = parse_threads(text)
    if not items:
        return None
    if len(items) > 1:
        raise ValueError(f"the comparison shows one thread of {side}; got {len(items)} ({text!r})")
    return items[0]


def _single(value) -> float:
    """A single-precision property's value as the decimal the user typed (0.2, not
    0.20000000298023224): the shortest form that is the same float32."""
    return float(f"{float(value):.7g}")


def compare_params_dict(settings) -> dict:
    """The JSON-able dict for ``CompareParams.from_dict`` (raises ValueError on bad values).
    Brushing is left out: the brush fields name calls (`compare_calls`), resolved against
    the comparison."""
    d = {name: getattr(settings, name) for name in _SHARED_COMPARE_FIELDS}
    d.update(color_by=compare_color_mode(settings), lam=_single(settings.compare_lam),
             band=_single(settings.compare_band), beta=_single(settings.compare_beta),
             window_a=_window_of(settings, "compare_window_a", "A's focus window"),
             window_b=_window_of(settings, "compare_window_b", "B's focus window"),
             thread_a=_one_thread(settings.compare_thread_a, "A"),
             thread_b=_one_thread(settings.compare_thread_b, "B"),
             resolution=[int(settings.resolution_x), int(settings.resolution_y)], fold=_fold_of(settings),
             title=settings.title if settings.title.strip() else None,
             show_overview=bool(settings.compare_show_overview),
             declutter_px=0.0 if settings.compare_all_tubes else 96.0)
    return d


def compare_calls(settings) -> dict:
    """The calls the brush fields name (a call index or a function name, None when empty):
    {"brush_a": ..., "brush_b": ...}."""
    return {"brush_a": settings.compare_brush_a.strip() or None, "brush_b": settings.compare_brush_b.strip() or None}


def set_from_compare_params(settings, d: dict) -> None:
    """Copy a ``CompareParams.to_dict()`` back into the properties (unknown keys and values
    the properties cannot hold are ignored, as in `set_from_params_dict`)."""
    shared = {k: d[k] for k in (*_SHARED_COMPARE_FIELDS, "fold", "resolution", "title") if k in d}
    set_from_params_dict(settings, shared)

    def field(name, apply):
        if name in d:
            try:
                apply(d[name])
            except (TypeError, ValueError, OverflowError, IndexError, KeyError, AttributeError):
                pass

    field("declutter_px", lambda v: setattr(settings, "compare_all_tubes", float(v) == 0.0))

    def colour(v):
        mode, _, side = str(v).partition("-")
        if mode == "trace" and side in ("a", "b"):
            settings.compare_viewpoint = side
        settings.compare_color_by = mode

    def window(side):
        def apply(w):
            if w is not None:
                setattr(settings, f"compare_window_{side}_start", float(w[0]))
                setattr(settings, f"compare_window_{side}_end", float(w[1]))
            setattr(settings, f"use_compare_window_{side}", w is not None)
        return apply

    field("color_by", colour)
    for name in ("lam", "band", "beta"):
        field(name, lambda v, name=name: setattr(settings, f"compare_{name}", float(v)))
    for side in ("a", "b"):
        field(f"window_{side}", window(side))
        field(f"thread_{side}", lambda v, side=side: setattr(settings, f"compare_thread_{side}", "" if v is None else str(v)))
        field(f"brush_{side}", lambda v, side=side: setattr(settings, f"compare_brush_{side}", "" if v is None else str(int(v))))
    field("show_overview", lambda v: setattr(settings, "compare_show_overview", bool(v)))


def tube_object(scene):
    """The comparison's tube mesh in ``scene`` (``ob["tv3d_tubes"]``), or None."""
    for ob in scene.objects:
        if ob.type == "MESH" and "tv3d_tubes" in ob:
            return ob
    return None


def built_colour_mode(scene, ob) -> str | None:
    """The colour mode the tubes show: the last switch, else the one they were built with."""
    from ..tracevis3d.blender.session import read_compare_record

    if "tv3d_colour_mode" in ob:
        return str(ob["tv3d_colour_mode"])
    return ((read_compare_record(scene) or {}).get("params") or {}).get("color_by")


def recolour_tubes(scene, mode: str) -> bool:
    """Show the tubes of ``scene`` in colour mode ``mode`` (material indices from the bins
    stored per face: no rebuild); False when there are no tubes or they show it already."""
    ob = tube_object(scene)
    if ob is None or built_colour_mode(scene, ob) == mode:
        return False
    from ..tracevis3d.blender.tubes import set_tube_colour_mode

    set_tube_colour_mode(ob, mode)
    return True


# ------------------------------------------------------------------ saved scenes
def _absolute(path: str, blend_path: str) -> str:
    """A trace path as stored in the properties, made absolute ('//' is next to the .blend)."""
    from ..tracevis3d.blender.hygiene import from_blend_relative

    path = (path or "").strip()
    if path.startswith("//"):
        return from_blend_relative(path, blend_path) or ""
    return os.path.abspath(os.path.expanduser(path)) if path else ""


def restore_session(scene, force: bool = False, blend_path: str | None = None, what: str | None = None) -> bool:
    """Make ``scene.tracevis3d`` point at its traces after a .blend was opened; True if changed.

    - Empty trace path (a .blend saved by the command line) or ``force``: the trace path and
      the parameters come from the build record ``scene["tracevis3d_build"]``.
    - A trace path that does not exist any more: the same file relative to the .blend
      (recorded when it was saved) is used when it exists (the folder moved).
    - The same for the comparison (`restore_compare`): the second trace, and with it the
      first when the trace path is empty, τ and the comparison's parameters come from
      ``scene["tracevis3d_compare"]``.
    An existing trace path is never changed (unless ``force``).  ``what``: "icicle" or
    "compare" restores only that record (the command line: the scene it just built).
    """
    s = getattr(scene, "tracevis3d", None)
    if s is None:
        return False
    blend = bpy.data.filepath if blend_path is None else blend_path
    changed = False
    if what in (None, "icicle"):
        changed |= _restore_icicle(scene, s, force, blend)
    if what in (None, "compare"):
        changed |= restore_compare(scene, s, force, blend)
    return changed


def _find_moved(s, prop: str, rec, rec_key: str, blend: str) -> str | None:
    """The file of path property ``prop`` when it no longer exists where it was: the same
    file relative to the .blend (``<prop>_rel``, or the record's ``<rec_key>_rel`` when the
    record names the same path), if that exists."""
    from ..tracevis3d.blender import hygiene

    current = _absolute(getattr(s, prop), blend)
    candidates = [hygiene.from_blend_relative(getattr(s, f"{prop}_rel"), blend)]
    if rec and rec.get(rec_key) and os.path.abspath(rec[rec_key]) == current:
        candidates.append(hygiene.from_blend_relative(rec.get(f"{rec_key}_rel"), blend))
    return hygiene.find_trace(candidates)


def _set_path(s, prop: str, path: str, blend: str) -> None:
    """Set path property ``prop`` and its path relative to the .blend."""
    from ..tracevis3d.blender import hygiene

    setattr(s, prop, path)
    setattr(s, f"{prop}_rel", hygiene.relative_to_blend(path, blend) or "")


def _restore(s, prop: str, rec, rec_key: str, force: bool, blend: str, recorded, apply) -> bool:
    """Restore path property ``prop`` from a record: keep an existing file (unless
    ``force``), find a moved one, else take ``recorded()`` (the record's path, found or
    not) and ``apply(rec)`` its parameters.  True if a property changed."""
    current = _absolute(getattr(s, prop), blend)
    if current and not force:
        if os.path.isfile(current):
            return False
        found = _find_moved(s, prop, rec, rec_key, blend)
        if found is not None:
            setattr(s, prop, found)
        return found is not None
    path = recorded() if rec is not None else None
    if not path:
        return False
    _set_path(s, prop, path, blend)
    apply(rec)
    return True


def _restore_icicle(scene, s, force: bool, blend: str) -> bool:
    """`restore_session` for the icicle's build record."""
    from ..tracevis3d.blender import hygiene

    def recorded():
        found, path = hygiene.recorded_trace_path(scene, blend)
        return found or path

    def apply(rec):
        if isinstance(rec.get("params"), dict):
            set_from_params_dict(s, rec["params"])

    return _restore(s, "trace_path", hygiene.read_build_record(scene), "trace_path", force, blend, recorded, apply)


def restore_compare(scene, s, force: bool, blend: str) -> bool:
    """`restore_session` for the comparison's record: the second trace, the first when the
    trace path is empty (or ``force``), τ and the parameters.  True if a property changed."""
    from ..tracevis3d.blender import session

    path_a, path_b = session.recorded_compare_paths(scene, blend)

    def apply(rec):
        if path_a and (force or not s.trace_path.strip()):
            _set_path(s, "trace_path", path_a, blend)
        try:
            s.compare_tau = float(rec.get("tau", s.compare_tau))
        except (TypeError, ValueError):
            pass
        if isinstance(rec.get("params"), dict):
            set_from_compare_params(s, rec["params"])

    return _restore(s, "compare_path", session.read_compare_record(scene), "trace_b", force, blend,
                    lambda: path_b, apply)


def note_blend_location(scene, blend_path: str) -> None:
    """Before saving to ``blend_path``: record the trace paths relative to it (and remap a
    '//' trace path to the new location, as Blender does with its own relative paths)."""
    from ..tracevis3d.blender import hygiene
    from ..tracevis3d.blender.session import remember_compare_location

    s = getattr(scene, "tracevis3d", None)
    for prop in ("trace_path", "compare_path"):
        if s is not None and getattr(s, prop).strip():
            current = _absolute(getattr(s, prop), bpy.data.filepath)
            rel = hygiene.relative_to_blend(current, blend_path) or ""
            setattr(s, f"{prop}_rel", rel)
            if getattr(s, prop).strip().startswith("//") and rel:
                setattr(s, prop, rel)
    hygiene.remember_blend_location(scene, blend_path)
    remember_compare_location(scene, blend_path)


CLASSES = (TraceVis3DSettings,)


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Scene.tracevis3d = PointerProperty(type=TraceVis3DSettings)
    from . import threads_properties

    threads_properties.register()


def unregister():
    from . import threads_properties

    threads_properties.unregister()
    if hasattr(bpy.types.Scene, "tracevis3d"):
        del bpy.types.Scene.tracevis3d
    for cls in reversed(CLASSES):
        if getattr(cls, "is_registered", False):
            bpy.utils.unregister_class(cls)
