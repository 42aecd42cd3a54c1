"""Scene properties, generated from the parameter schemas, and saved sessions.

One property group per view of the view registry (`tracevis3d.views`), its properties what
the view's schema says (`tracevis3d.params`, through `props.schema_table`)::

    scene.tracevis3d_icicle_params    IcicleParams      scene.tracevis3d_threads_params  ThreadsParams
    scene.tracevis3d_compare_params   CompareParams     scene.tracevis3d_cone_params     ConeParams
    scene.tracevis3d_extravis_params  ExtravisParams    scene.tracevis3d_live_params     LiveParams

(``_params``: the build records ``scene["tracevis3d_compare"]`` and ``scene["tracevis3d_cone"]``
have the plain names, and before Blender 5.0 custom and Python-defined properties share one
namespace: a pointer of the same name would make writing the record a TypeError.)

and ``scene.tracevis3d``, the session: the trace paths (and their ``_rel`` twins, the path
relative to the .blend recorded when it is saved), the live feed's endpoint, follow and
window, the picked call, the summaries, the search pattern, the bookmark note (the
`SESSION` table) and the render options (the `RENDER` schema's output, engine, samples,
transparent).  `params_of` / `put_params` convert a view's group to and from its
parameter object (``XParams.from_props`` / ``to_props``).

The comparison's tube colour is a restyle parameter: changing it recolours the tubes at
once (`recolour_tubes`: material indices stored per face, no rebuild).

Saved scenes: a .blend saved by the command line (``python -m tracevis3d ... --save``, where
the extension is not registered) has empty properties but build records
(``scene["tracevis3d_build"]``, ``scene["tracevis3d_compare"]``); `restore_session`, run by
the extension's ``load_post`` handler, fills the trace paths and the view groups from them
(``XParams.from_known(record["params"]).to_props``), and finds a trace whose folder moved
together with the .blend through the path relative to the .blend that `note_blend_location`
(``save_pre``) records.  A .blend saved by the previous version of the add-on (its old
property names) is mapped onto these groups first (`legacy.migrate`).
"""
from __future__ import annotations

import os
import sys

import bpy

from ..tracevis3d.params.animation import ANIMATION
from ..tracevis3d.params.cluster import CLUSTER_PANEL_FIELDS, CLUSTER_SCHEMA
from ..tracevis3d.params.render import RENDER
from ..tracevis3d.views import VIEWS as VIEW_REGISTRY
from . import props

#: view -> its parameter class, for every view of the registry (`tracevis3d.views`); its group is
#: ``scene.tracevis3d_<view>_params``
VIEWS = {v.name: v.params_class for v in VIEW_REGISTRY}
#: the render options the panel edits: output, engine, samples, transparent (``save``, the
#: command line's, has ``ui=False``)
RENDER_FIELDS = tuple(p.name for p in RENDER if p.ui)
DEFAULT_OUTPUT = "//tracevis3d.png"
#: the animation options the panel's Animate section edits: kind, seconds, fps, easing
ANIMATION_FIELDS = tuple(p.name for p in ANIMATION if p.ui)
DEFAULT_FRAMES = "//tracevis3d_frames"

_SKIP = {"SKIP_SAVE"}
#: the session's own properties: (name, type, options) as `props.make_property` takes them
SESSION = [
    ("trace_path", "String", dict(name="Trace", subtype="FILE_PATH", default="",
                                  description="Trace file: Chrome Trace Event JSON (.json, .json.gz) or native (.npz)")),
    ("trace_path_rel", "String", dict(name="Trace (relative)", default="", options={"HIDDEN"},
                                      description="The trace path relative to the .blend, recorded when it is saved "
                                                  "(used when the folder moved)")),
    ("compare_path", "String", dict(name="Compare with", subtype="FILE_PATH", default="",
                                    description="A second run of the program (.json, .json.gz, .npz) to compare the "
                                                "trace with")),
    ("compare_path_rel", "String", dict(name="Compare with (relative)", default="", options={"HIDDEN"},
                                        description="The second trace's path relative to the .blend, recorded when "
                                                    "it is saved")),
    ("compare_summary", "String", dict(name="Comparison", default="", options=_SKIP)),
    ("threads_summary", "String", dict(name="Thread view", default="", options=_SKIP)),
    ("threads_picked_text", "String", dict(name="Picked wait", default="", options=_SKIP)),
    ("highlight_picked", "Bool", dict(name="Highlight picked wait", default=False,
                                      description="Object colours: curves red when their wait acts on the picked "
                                                  "call's objects, brown when they share one, grey otherwise")),
    ("search_pattern", "String", dict(name="Search", default="",
                                      description="Regular expression on function names and modules; Search flies "
                                                  "to the first hit")),
    ("bookmark_note", "String", dict(name="Note", default="", description="Note of the next bookmark")),
    ("live_endpoint", "String", dict(name="Endpoint", default="tcp://127.0.0.1:5599",
                                     description="ZeroMQ endpoint this viewer binds; programs run with `python -m "
                                                 "tracevis3d.live run --endpoint ...` connect to it (loopback only "
                                                 "without CURVE keys)")),
    ("live_connect", "Bool", dict(name="Connect to a program", default=False,
                                  description="Connect to a program started with --bind instead of binding")),
    ("live_status", "String", dict(name="Live status", default="", options=_SKIP)),
    ("live_memray_port", "Int", dict(name="memray port", default=12345, min=1, max=65535,
                                     description="Port of memray's live tracker (python -m memray run --live-remote "
                                                 "--live-port PORT program.py): the memory view grows as it runs")),
    ("picked_call", "Int", dict(name="Picked call", default=-1, options=_SKIP)),
    ("picked_text", "String", dict(name="Picked call details", default="", options=_SKIP)),
    ("picked_side", "String", dict(name="Picked side", default="", options=_SKIP,
                                   description="Run of the picked call in a comparison: 'a', 'b', or '' (icicle)")),
    ("zoom_follow", "Bool", dict(name="Refine as you fly", default=True,
                                 description="Lay out the stretch of the icicle the viewport shows at full detail "
                                             "when the view pauses (a background job; the next move cancels it)")),
    ("extravis_follow_handles", "Bool", dict(name="Follow Handles", default=True,
                                              description="Rebuild the EXTRAVIS views when a window handle is moved "
                                                          "and let go (no Build press)")),
    ("picked_element", "String", dict(name="Picked element", default="", options=_SKIP,
                                      description="Dotted name of the hierarchy element last picked in the "
                                                  "EXTRAVIS views ('' when the last pick was not one)")),
]


def _recolour_tubes(group, _context) -> None:
    """The update of the comparison's restyle parameters (the tube colour); never raises (an
    update callback has nowhere to report; the operator `tracevis3d.compare_color_mode`
    does)."""
    try:
        recolour_tubes(group.id_data, group.color_by)
    except Exception as e:  # noqa: BLE001
        print(f"tracevis3d: warning: cannot recolour the tubes: {' '.join(str(e).split())}", file=sys.stderr)


#: view -> the update callback of its restyle parameters
RESTYLE = {"compare": _recolour_tubes}


def _view_class(view: str, cls):
    schema = cls.SCHEMA
    return props.group_class(f"TraceVis3D{view.capitalize()}Settings", props.schema_table(schema),
                             doc=f"TraceVis3D {view} parameters of one scene (saved with the .blend)",
                             update=RESTYLE.get(view), updated=props.restyle_names(schema))


def _restore_from_build(self, force: bool = False, what: str | None = None) -> bool:
    """Fill the scene's groups from its records (`restore_session`); ``what``: "icicle" or
    "compare" for the scene just built (the command line), None for both."""
    return restore_session(self.id_data, force=force, what=what)


SessionSettings = props.group_class(
    "TraceVis3DSettings", SESSION + props.schema_table(RENDER, only=RENDER_FIELDS)
    + props.schema_table(ANIMATION, only=ANIMATION_FIELDS)
    + props.schema_table(CLUSTER_SCHEMA, only=CLUSTER_PANEL_FIELDS),
    doc="TraceVis3D session of one scene: trace paths, live feed, picked call, render and animation options",
    methods={"restore_from_build": _restore_from_build})
VIEW_CLASSES = {view: _view_class(view, cls) for view, cls in VIEWS.items()}
CLASSES = (SessionSettings, *VIEW_CLASSES.values())
#: scene attribute -> group class
POINTERS = {"tracevis3d": SessionSettings, **{f"tracevis3d_{v}_params": c for v, c in VIEW_CLASSES.items()}}


# ------------------------------------------------------------------ groups <-> parameter objects
def group_of(scene, view: str):
    """``scene.tracevis3d_<view>_params`` (ValueError when the extension is not registered)."""
    g = getattr(scene, f"tracevis3d_{view}_params", None)
    if g is None:
        raise ValueError("the TraceVis3D extension's properties are not registered")
    return g


def from_group(cls, group, only=None):
    """``cls.from_props`` of a property group (ValueError naming the field)."""
    return cls.from_props(lambda name: getattr(group, name), only=only)


def to_group(params, group, only=None) -> None:
    params.to_props(lambda name, value: setattr(group, name, value), only=only)


def params_of(scene, view: str, only=None):
    """The validated parameter object of the view's panel fields."""
    return from_group(VIEWS[view], group_of(scene, view), only)


def put_params(scene, view: str, params, only=None) -> None:
    to_group(params, group_of(scene, view), only)


def render_options(settings) -> dict:
    """The panel's render options: {output, engine, device, samples, transparent}."""
    return {p.name: p.kind.from_props(p, lambda name: getattr(settings, name)) for p in RENDER if p.name in RENDER_FIELDS}


def animation_options(settings) -> dict:
    """The panel's animation options: {kind, seconds, fps, easing}."""
    return {p.name: p.kind.from_props(p, lambda name: getattr(settings, name)) for p in ANIMATION
            if p.name in ANIMATION_FIELDS}


def cluster_options(settings) -> dict:
    """The panel's cluster options: {scheduler} (None: render in Blender)."""
    return {p.name: p.kind.from_props(p, lambda name: getattr(settings, name)) for p in CLUSTER_SCHEMA
            if p.name in CLUSTER_PANEL_FIELDS}


def restore_view(scene, view: str, d, extra=None) -> bool:
    """Put a record's parameters (``XParams.to_dict()`` of this or an older version; keys
    of a newer version are left out, ``extra`` added) into the view's group: only the
    fields the record names change.  A record that does not validate as a whole gives the
    fields that do one by one; nothing raises.  True if it was a dict."""
    if not isinstance(d, dict):
        return False
    cls = VIEWS[view]
    d = {**d, **(extra or {})}
    known = set(cls.SCHEMA.by_name) | set(cls.SCHEMA.renamed)
    d = {k: v for k, v in d.items() if k in known}
    try:
        params = cls.from_known(d)
        good = d
    except ValueError:
        good = {}
        for k, v in d.items():
            try:
                cls.from_known({k: v})
                good[k] = v
            except ValueError:
                pass
        try:
            params = cls.from_known(good)
        except ValueError:
            return True
    names = {cls.SCHEMA.renamed.get(k, k) for k in good}
    put_params(scene, view, params, only=names)
    return True


# ------------------------------------------------------------------ the comparison's tubes
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


def on_load(scene) -> bool:
    """After a .blend was opened: map the previous version's properties onto the groups
    (`legacy.migrate`), then `restore_session`.  True if something changed."""
    from . import legacy

    changed = legacy.migrate(scene)
    return restore_session(scene) or changed


def restore_session(scene, force: bool = False, blend_path: str | None = None, what: str | None = None) -> bool:
    """Make ``scene.tracevis3d`` point at its traces after a .blend was opened; True if changed.

    - Empty trace path (a .blend saved by the command line) or ``force``: the trace path and
      the icicle's parameters come from the build record ``scene["tracevis3d_build"]``.
    - A trace path that does not exist any more: the same file relative to the .blend
      (recorded when it was saved) is used when it exists (the folder moved).
    - The same for the comparison (`restore_compare`): the second trace, and with it the
      first when the trace path is empty, and the comparison's parameters come from
      ``scene["tracevis3d_compare"]``.
    - Every other view of the registry with a build record (`tracevis3d.views.View.scene_key`):
      its trace and parameters, when the trace path is empty or ``force`` (`_restore_record`).
    An existing trace path is never changed (unless ``force``).  ``what``: a view's name
    restores only that view's record (the command line: the scene it just built).
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
    for view in VIEW_REGISTRY:
        if view.name not in ("icicle", "compare") and view.scene_key and what in (None, view.name):
            changed |= _restore_record(scene, s, view, force, blend)
    return changed


#: where a view's build record names the file it was built from (the first key present)
RECORD_PATH_KEYS = ("trace_path", "capture_path", "source")


def _restore_record(scene, s, view, force: bool, blend: str) -> bool:
    """`restore_session` for the build record of a view other than the icicle and the
    comparison (JSON in ``scene[view.scene_key]``: the file it was built from under one of
    `RECORD_PATH_KEYS`, its ``params``): when the trace path is empty (a .blend saved by the
    command line) or ``force``, its file and its parameters go into the panel.  An unreadable
    record changes nothing.  True if a property changed."""
    import json

    raw = scene.get(view.scene_key)
    try:
        rec = json.loads(raw) if isinstance(raw, str) and raw else None
    except ValueError:
        return False
    if not isinstance(rec, dict) or not (force or not s.trace_path.strip()):
        return False
    path = next((rec[k] for k in RECORD_PATH_KEYS if isinstance(rec.get(k), str) and rec[k]), None)
    if path is None:
        return False
    _set_path(s, "trace_path", path, blend)
    restore_view(scene, view.name, rec.get("params"))
    return True


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

    return _restore(s, "trace_path", hygiene.read_build_record(scene), "trace_path", force, blend, recorded,
                    lambda rec: restore_view(scene, "icicle", rec.get("params")))


def restore_compare(scene, s, force: bool, blend: str) -> bool:
    """`restore_session` for the comparison's record: the second trace, the first when the
    trace path is empty (or ``force``), τ and the parameters.  True if a property changed."""
    from ..tracevis3d.blender import session

    path_a, path_b = session.recorded_compare_paths(scene, blend)

    def apply(rec):
        if path_a and (force or not s.trace_path.strip()):
            _set_path(s, "trace_path", path_a, blend)
        extra = {"tau": rec["tau"]} if "tau" in rec else None
        restore_view(scene, "compare", rec.get("params") if isinstance(rec.get("params"), dict) else {}, extra)

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


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    for attr, cls in POINTERS.items():
        setattr(bpy.types.Scene, attr, props.pointer(cls))


def unregister():
    for attr in POINTERS:
        if hasattr(bpy.types.Scene, attr):
            delattr(bpy.types.Scene, attr)
    for cls in reversed(CLASSES):
        if getattr(cls, "is_registered", False):
            bpy.utils.unregister_class(cls)
