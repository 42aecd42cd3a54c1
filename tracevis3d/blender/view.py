"""Fly into any moment (issue 70): a stretch of an icicle figure laid out again at full detail in
place of the overview's merged geometry, from a script, headless, or as the viewport moves.

    from tracevis3d.blender import view
    info = view.zoom_to(bpy.context.scene, window=(t0_us, t1_us))   # frame and refine
    info["names"], info["calls_drawn"], info["seconds"]
    view.zoom_to(bpy.context.scene, window=None)                   # the whole figure again

How (`layout.refine`): the stretch's dedicated ``--window`` figure (the same layout code, the
overview's colours) is written into its own collection ``TraceVis3D zoom`` (`writer`), moved so
its frame starts where the stretch starts in the overview; every world-space object of the
overview gets the Geometry Nodes modifier ``TraceVis3D zoom split`` (first in its stack) that
keeps what lies left of the stretch, drops what lies in it, moves what lies right of it to make
room (boxes crossing a cut are clipped to their parts outside); overview names in the stretch
are hidden, those after it moved with it, the overview's heads-up title and legend hidden.  The
scene camera becomes the refined figure's (its heads-up items ride on it).  A second zoom
replaces the first (the collection is rewritten, the split's values set again): objects and
memory stay bounded; ``window=None`` removes all of it, the scene is the overview again.

The state lives in ``scene["tracevis3d_zoom"]`` (JSON), so a saved .blend that was zoomed goes
back to its overview in another Blender; the trace is found from the build record
(``scene["tracevis3d_build"]``, `hygiene.recorded_trace_path`) and loaded through `session`.

`refine_steps` is the job (`tracevis3d.jobs`): the layout runs in a worker, the writing in short
main-thread steps; given a view (``persp``: a world → clip matrix, ``region``: its pixel size),
it works out the window the view sees (`refine.view_window`) and refines, keeps, or goes back
to the overview (`refine.refine_decision`).  The viewport's "Refine as you fly" drives it.

The thread view and the comparison refine a window given to `zoom_to` (`_refine_beside_steps`):
their dedicated figure of the window (the comparison: A's window and B's aligned to it) beside
the overview, which stays whole (the ring's time runs along a fixed arc; the comparison's two
sides have two clocks and tubes between them: neither has one straight axis to split).  A cone
tree scene is refused with a ValueError that says why (`NOT_REFINED`), and an animation's
camera path (``--kind flythrough``) flies over the overview as built.

The first zoom costs what the later ones cost: a refined stretch keeps the overview's colours,
which the overview's colour stage ranks over the whole trace (~0.5 s at 10^6 calls, ~10 s at
10^7).  The build has them at hand (`keep_overview_steps`, run by `tasks.build_steps`): it keeps
them and the loaded trace in memory for this session's zooms.  When the scene is saved (a
``save_pre`` handler, `persist_zoom_inputs`: the panel's save, ``--save``, a script's
``save_as_mainfile``), they go into a file beside the trace's content (`refine.OverviewColours`,
named by `refine.content_fingerprint` and the figure's parameters) in the user cache
(`colours_cache_dir`: the extension's user folder, never the add-on folder), with a native copy
of a trace read from text (JSON), so a fresh Blender that opens the saved .blend maps the copy
and reads the colours instead of parsing the text and computing them.  A figure rendered and
never saved (``render-icicle -o fig.png`` in a pipeline) writes nothing to the cache.  A figure built before (or from a merged trace) computes the colours at its
first zoom and keeps that file; the cache is bounded (`COLOURS_KEPT`, `COLOURS_BYTES`).
"""
from __future__ import annotations

import json
import time

import bpy
import numpy as np

from ..jobs import Job
from ..layout import refine

__all__ = ["zoom_to", "zoom_to_view", "zoom_job", "refine_steps", "unzoom", "zoom_state", "camera_persp", "STATE_KEY",
           "keep_overview_steps", "persist_zoom_inputs", "colours_cache_dir", "COLOURS_KEY",
           "ZOOM_COLLECTION", "SPLIT_MODIFIER"]

STATE_KEY = "tracevis3d_zoom"
ZOOM_COLLECTION = "TraceVis3D zoom"
SPLIT_GROUP = "TV3D_zoom_split"
SPLIT_MODIFIER = "TraceVis3D zoom split"
NAME_KINDS = ("call", "run", "row", "group", "cluster", "fold")  # labels that name calls (`figure_report`)

#: the scene's record of its overview's kept colours: JSON {"file": [mtime_ns, size], "fingerprint"}
COLOURS_KEY = "tracevis3d_zoom_colours"
#: the user cache folder's sub-folder for the kept colours; ``TRACEVIS3D_ZOOM_CACHE`` overrides the folder
COLOURS_DIR = "zoom_cache"
#: the kept files stay within this many files and bytes (colours: a byte a call; a trace's copy: ~46 bytes a call)
COLOURS_KEPT, COLOURS_BYTES = 32, 1 << 30

# (trace file key, params) -> {"trace", "params", "colouring_of"}: the overview's inputs, kept
_contexts: dict = {}


# ------------------------------------------------------------------------------ the overview
def zoom_state(scene) -> dict | None:
    """The refinement in ``scene`` now ({"window", "thread", "placement", "camera", "hidden",
    "moved"}), or None."""
    try:
        st = json.loads(scene.get(STATE_KEY) or "null")
    except (TypeError, ValueError):
        return None
    return st if isinstance(st, dict) else None


def _overview_objects(coll):
    return [ob for ob in coll.all_objects if ob.parent is None]


def _lanes_z(coll) -> tuple:
    """The lowest and highest z of the overview's boxes (its call and cluster layers)."""
    lo, hi = np.inf, -np.inf
    for ob in coll.all_objects:
        if ob.type != "POINTCLOUD" or ob.get("tv3d_layer") not in ("calls", "clusters") or ob.parent is not None:
            continue
        a = ob.data.attributes
        n = len(ob.data.points)
        if not n or "tv_scale" not in a:
            continue
        pos, sc = np.empty(3 * n, np.float32), np.empty(3 * n, np.float32)
        a["position"].data.foreach_get("vector", pos)
        a["tv_scale"].data.foreach_get("vector", sc)
        z, dz = pos[2::3] + ob.location.z, 0.5 * sc[2::3]
        lo, hi = min(lo, float((z - dz).min())), max(hi, float((z + dz).max()))
    if not np.isfinite(lo):
        raise ValueError("the scene has no icicle to refine (no call boxes in its collection)")
    return lo, hi


def _overview(scene, coll) -> refine.Overview:
    from .animate import META_KEY

    meta = json.loads(scene.get(META_KEY) or "{}")
    if meta.get("layout", "icicle") != "icicle" or "world_per_us" not in meta:
        raise ValueError("only an icicle figure refines (this scene has no icicle's time axis)")
    z_lo, z_hi = _lanes_z(coll)
    return refine.Overview.from_meta(meta, z_lo, z_hi, scene.render.resolution_x)


def colours_cache_dir() -> str:
    """Where the overview colours are kept: ``$TRACEVIS3D_ZOOM_CACHE``, else the extension's user
    folder (``bpy.utils.extension_path_user``), else, outside an extension (the bpy module, a
    legacy add-on), the user cache folder beside numba's (`_numba_env.default_cache_dir`)."""
    import os

    env = os.environ.get("TRACEVIS3D_ZOOM_CACHE")
    if env:
        return env
    pkg = (__package__ or "").rsplit(".", 2)[0]  # the add-on's package: <add-on>.tracevis3d.blender
    if pkg.startswith("bl_ext."):
        try:
            return bpy.utils.extension_path_user(pkg, path=COLOURS_DIR, create=True)
        except (ValueError, AttributeError):
            pass
    from .._numba_env import default_cache_dir

    return os.path.join(os.path.dirname(default_cache_dir()), COLOURS_DIR)


def _context_key(file_key, params) -> tuple:
    return (tuple(file_key), json.dumps(params.to_dict(), sort_keys=True, default=str))


def _save_colours(colours, fingerprint: str, params) -> str | None:
    """Write the kept colours (atomically), the folder's oldest files beyond `COLOURS_KEPT`
    files or `COLOURS_BYTES` bytes removed; None when the cache folder cannot be written."""
    import os

    from ..io.atomic import write_whole

    folder = colours_cache_dir()
    path = os.path.join(folder, refine.colours_file_name(fingerprint, params))
    try:
        os.makedirs(folder, exist_ok=True)
        write_whole(path, colours.to_bytes())
    except (OSError, ValueError, RuntimeError):
        return None
    refine.prune_colours(folder, path, COLOURS_KEPT, COLOURS_BYTES)
    return path


def persist_zoom_inputs(scene) -> bool:
    """Write what the first zoom of ``scene``'s figure needs into the user cache, once (its
    colours kept by `keep_overview_steps`, a native copy of a trace read from text), and record
    their fingerprint in ``scene[COLOURS_KEY]``; run before the scene is saved
    (`_persist_on_save`).  False when the session keeps nothing for this scene's figure (built
    elsewhere, of merged stacks, its trace file changed since) or the cache cannot be written."""
    import os

    from . import session
    from .hygiene import read_build_record

    ctx = next((c for c in _contexts.values() if c.get("colours") is not None), None)
    rec = read_build_record(scene) or {}
    if ctx is None or not rec.get("trace_path") or os.path.abspath(rec["trace_path"]) != ctx["path"]:
        return False
    try:
        key = session.file_key(ctx["path"])
    except Exception:  # noqa: BLE001 - the trace file went away: nothing to keep
        return False
    if tuple(key) != tuple(ctx["file_key"]):
        return False
    if ctx.get("fingerprint") is None:
        fingerprint = refine.content_fingerprint(ctx["path"])
        if _save_colours(ctx["colours"], fingerprint, ctx["params"]) is None:
            return False
        _save_trace_copy(ctx["trace"], ctx["path"], fingerprint)
        ctx["fingerprint"] = fingerprint
    scene[COLOURS_KEY] = json.dumps({"file": [key[1], key[2]], "fingerprint": ctx["fingerprint"]})
    return True


@bpy.app.handlers.persistent
def _persist_on_save(*_args) -> None:
    """``save_pre``: `persist_zoom_inputs` for every scene; never blocks the save."""
    for scene in bpy.data.scenes:
        try:
            persist_zoom_inputs(scene)
        except Exception as e:  # noqa: BLE001 - a cache that cannot be written only costs the first zoom time
            import sys

            sys.stderr.write(f"TraceVis3D: the zoom inputs of scene {scene.name!r} were not kept: {e}\n")


def _install_save_handler() -> None:
    if _persist_on_save not in bpy.app.handlers.save_pre:
        bpy.app.handlers.save_pre.append(_persist_on_save)


def _save_trace_copy(trace, path: str, fingerprint: str) -> str | None:
    """A native copy of a trace read from a text file, in the user cache: a fresh Blender that
    opens the saved .blend maps it (~0.1 s at 10^6 calls) instead of parsing the text again
    (seconds to minutes); ~46 bytes a call.  None for a native source or an unwritable folder."""
    import os

    from ..io.native import save_native
    from ..io.sniff import is_native_file

    if is_native_file(path):
        return None
    folder = colours_cache_dir()
    copy = os.path.join(folder, refine.trace_copy_name(fingerprint))
    if os.path.isfile(copy):
        os.utime(copy)
        return copy
    try:
        os.makedirs(folder, exist_ok=True)
        save_native(trace, copy)
    except (OSError, ValueError, RuntimeError):
        return None
    refine.prune_colours(folder, copy, COLOURS_KEPT, COLOURS_BYTES)
    return copy


def keep_overview_steps(job: Job, scene, trace, params, path, stages):
    """Keep what a zoom of the figure just built needs (module doc): the trace and the
    overview's colours (``stages``: the build's `icicle.IcicleStages`) for this session; saving
    the scene writes them to the user cache (`persist_zoom_inputs`).  Nothing for a figure
    without a trace file or of merged stacks (its first zoom computes them)."""
    from . import session
    from ..model import TraceFormatError

    if COLOURS_KEY in scene:
        del scene[COLOURS_KEY]
    if path is None or stages is None or params.merge:
        return
    try:
        key = session.file_key(path)
    except TraceFormatError:
        return
    job.report(job.fraction, "keeping the overview's colours for zooms")
    colours = yield job.off_main(refine.OverviewColours.from_stages, stages, len(trace))
    _contexts.clear()
    _contexts[_context_key(key, params)] = {"path": key[0], "file_key": tuple(key), "params": params, "trace": trace,
                                            "colours": colours, "colouring_of": colours.colouring_of,
                                            "fingerprint": None}
    _install_save_handler()  # the cache files are written only when the scene is saved


def _recorded_fingerprint(scene, key) -> str | None:
    """The fingerprint the build recorded, when the trace file is still the one it read."""
    try:
        rec = json.loads(scene.get(COLOURS_KEY) or "null")
    except (TypeError, ValueError):
        return None
    if isinstance(rec, dict) and rec.get("file") == [key[1], key[2]] and isinstance(rec.get("fingerprint"), str):
        return rec["fingerprint"]
    return None


def _trace_context(scene) -> dict:
    """The overview's trace and parameters (the build record), loaded once per file version."""
    from ..layout.params import IcicleParams
    from . import session
    from .hygiene import read_build_record, recorded_trace_path

    rec = read_build_record(scene) or {}
    found, recorded = recorded_trace_path(scene)
    if found is None:
        raise FileNotFoundError(f"the figure's trace file is not there: {recorded or '(no build record)'}")
    fkey = session.file_key(found)
    params = IcicleParams.from_dict(rec.get("params") or {}).validate()
    key = _context_key(fkey, params)
    ctx = _contexts.get(key)
    if ctx is None:
        _contexts.clear()  # one overview's inputs at a time (memory stays bounded)
        ctx = _contexts[key] = {"path": found, "params": params, "trace": None, "colouring_of": None,
                                "fingerprint": _recorded_fingerprint(scene, fkey)}
    return ctx


def _prepare(ctx: dict) -> dict:
    """Worker: the trace (merged when the figure merges stacks) and the overview's colouring."""
    from ..io.stacks import merged_stacks
    from . import session

    if ctx["trace"] is None:
        trace = _kept_trace(ctx) or session.get_trace(ctx["path"])
        ctx["trace"] = merged_stacks(trace) if ctx["params"].merge else trace
    if ctx["colouring_of"] is None:
        ctx["colouring_of"] = _kept_or_computed_colours(ctx).colouring_of
    return ctx


def _kept_trace(ctx: dict):
    """Worker: the native copy of the trace the build kept (`_save_trace_copy`), when the file
    is still the one it read (the recorded fingerprint); else None."""
    import os

    from ..io import load as load_file

    if not ctx.get("fingerprint"):
        return None
    copy = os.path.join(colours_cache_dir(), refine.trace_copy_name(ctx["fingerprint"]))
    if not os.path.isfile(copy):
        return None
    try:
        return load_file(copy)
    except Exception:  # noqa: BLE001 - a damaged cache file: the trace file itself is read instead
        return None


def _kept_or_computed_colours(ctx: dict):
    """Worker: the overview's colours from the user cache, else computed and kept there."""
    import os

    params, trace = ctx["params"], ctx["trace"]
    fingerprint = ctx.get("fingerprint") or refine.content_fingerprint(ctx["path"])
    ctx["fingerprint"] = fingerprint
    kept = refine.OverviewColours.from_file(
        os.path.join(colours_cache_dir(), refine.colours_file_name(fingerprint, params)), len(trace))
    if kept is None:
        kept = refine.overview_colours(trace, params)
        _save_colours(kept, fingerprint, params)
    return kept


def _layout(ctx: dict, window, thread):
    _prepare(ctx)
    params = ctx["params"]
    if params.merge:  # the trace is merged already: the layout must not merge it again
        import dataclasses

        params = dataclasses.replace(params, merge=False)
    return refine.refined_layout(ctx["trace"], params, window, thread, ctx["colouring_of"])


# ------------------------------------------------------------------------------ the split
def split_group() -> bpy.types.NodeTree:
    """Geometry + Left, Right, Shift → what lies left of Left, and what lies right of Right
    moved by Shift; a box (point with ``tv_scale``) crossing a cut clipped to its part outside
    (a box crossing both kept as two); vertices of meshes (arcs, rings) kept or moved alike."""
    ng = bpy.data.node_groups.get(SPLIT_GROUP)
    if ng is not None:
        return ng
    ng = bpy.data.node_groups.new(SPLIT_GROUP, "GeometryNodeTree")
    io = ng.interface
    io.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    for name in ("Left", "Right", "Shift"):
        io.new_socket(name, in_out="INPUT", socket_type="NodeSocketFloat")
    io.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    N, L = ng.nodes, ng.links
    gi, go = N.new("NodeGroupInput"), N.new("NodeGroupOutput")

    def math(op, a, b):
        n = N.new("ShaderNodeMath")
        n.operation = op
        for k, v in enumerate((a, b)):
            if isinstance(v, (int, float)):
                n.inputs[k].default_value = v
            else:
                L.new(v, n.inputs[k])
        return n.outputs[0]

    pos = N.new("GeometryNodeInputPosition").outputs[0]
    scale_attr = N.new("GeometryNodeInputNamedAttribute")
    scale_attr.data_type = "FLOAT_VECTOR"
    scale_attr.inputs["Name"].default_value = "tv_scale"
    sp, ss = N.new("ShaderNodeSeparateXYZ"), N.new("ShaderNodeSeparateXYZ")
    L.new(pos, sp.inputs[0])
    L.new(scale_attr.outputs["Attribute"], ss.inputs[0])
    half = math("MULTIPLY", ss.outputs["X"], 0.5)
    x0, x1 = math("SUBTRACT", sp.outputs["X"], half), math("ADD", sp.outputs["X"], half)
    left, right, shift = gi.outputs["Left"], gi.outputs["Right"], gi.outputs["Shift"]
    joined = N.new("GeometryNodeJoinGeometry")
    # (drop when, new x0, new x1, moved by)
    for drop, a, b, moved in ((math("GREATER_THAN", x0, left), x0, math("MINIMUM", x1, left), None),
                              (math("LESS_THAN", x1, right), math("MAXIMUM", x0, right), x1, shift)):
        # ">=" / "<=" via the strict compare of the other side: a zero-width point on a cut stays once
        delete = N.new("GeometryNodeDeleteGeometry")
        delete.domain = "POINT"
        L.new(gi.outputs["Geometry"], delete.inputs["Geometry"])
        L.new(drop, delete.inputs["Selection"])
        cx = math("MULTIPLY", math("ADD", a, b), 0.5)
        if moved is not None:
            cx = math("ADD", cx, moved)
        # fields are evaluated on the geometry of the node that reads them: the new centre and
        # width are stored while position and scale are still the old ones, the point moved last
        geo = delete.outputs[0]
        for name, dtype, value in (("tv_zoom_x", "FLOAT", cx), ("tv_scale", "FLOAT_VECTOR", None)):
            store = N.new("GeometryNodeStoreNamedAttribute")
            store.data_type = dtype
            store.domain = "POINT"
            store.inputs["Name"].default_value = name
            if value is None:
                newscale = N.new("ShaderNodeCombineXYZ")
                L.new(math("SUBTRACT", b, a), newscale.inputs["X"])
                L.new(ss.outputs["Y"], newscale.inputs["Y"])
                L.new(ss.outputs["Z"], newscale.inputs["Z"])
                value = newscale.outputs[0]
            L.new(geo, store.inputs["Geometry"])
            L.new(value, store.inputs["Value"])
            geo = store.outputs[0]
        stored_x = N.new("GeometryNodeInputNamedAttribute")
        stored_x.data_type = "FLOAT"
        stored_x.inputs["Name"].default_value = "tv_zoom_x"
        newpos = N.new("ShaderNodeCombineXYZ")
        L.new(stored_x.outputs["Attribute"], newpos.inputs["X"])
        L.new(sp.outputs["Y"], newpos.inputs["Y"])
        L.new(sp.outputs["Z"], newpos.inputs["Z"])
        setp = N.new("GeometryNodeSetPosition")
        L.new(geo, setp.inputs["Geometry"])
        L.new(newpos.outputs[0], setp.inputs["Position"])
        L.new(setp.outputs[0], joined.inputs[0])
    L.new(joined.outputs[0], go.inputs["Geometry"])
    return ng


def _split_targets(coll) -> list:
    """The overview's world-space geometry: boxes (point clouds), arcs and rings (meshes)."""
    return [ob for ob in _overview_objects(coll) if ob.type in ("MESH", "POINTCLOUD")]


def _apply_split(coll, placement: refine.Placement, state: dict) -> None:
    """Cut the overview at the stretch (modifiers), hide its names in the stretch and move those
    after it, hide its heads-up items; what was changed is recorded in ``state``."""
    ng = split_group()
    ident = {s.name: s.identifier for s in ng.interface.items_tree if s.in_out == "INPUT"}
    xa, xb, shift = placement.xa, placement.xb, placement.shift
    for ob in _split_targets(coll):
        mod = ob.modifiers.get(SPLIT_MODIFIER)
        if mod is None:
            mod = ob.modifiers.new(SPLIT_MODIFIER, "NODES")
            mod.node_group = ng
            ob.modifiers.move(len(ob.modifiers) - 1, 0)  # before the instancer: it clips the points
        mod[ident["Left"]], mod[ident["Right"]], mod[ident["Shift"]] = xa, xb, shift
        ob.update_tag()
    hidden, moved = [], []
    cam = bpy.data.objects.get(state.get("camera") or "")
    for ob in list(coll.all_objects):
        if ob.type == "FONT" and ob.parent is None:
            lo, hi = _label_x_range(ob)
            if hi > xa and lo < xb:  # in the stretch (or crossing a cut): the refined figure names it
                hidden.append([ob.name, ob.hide_render, ob.hide_viewport])
                ob.hide_render = ob.hide_viewport = True
            elif lo >= xb:
                ob.location.x += shift
                moved.append(ob.name)
        elif cam is not None and ob.parent == cam:  # the overview's title and legend
            hidden.append([ob.name, ob.hide_render, ob.hide_viewport])
            ob.hide_render = ob.hide_viewport = True
    state["hidden"], state["moved"], state["shift"] = hidden, moved, shift


def _label_x_range(ob) -> tuple:
    """The x a name takes, from its text's advance width (`layout.text`), without evaluating
    the scene (an evaluation would also rebuild the overview's boxes)."""
    from ..layout.text import text_width

    w = text_width(ob.data.body) * float(ob.data.size) * max(ob.scale.x, 0.0)
    x = ob.location.x
    return {"LEFT": (x, x + w), "RIGHT": (x - w, x)}.get(ob.data.align_x, (x - 0.5 * w, x + 0.5 * w))


def _undo_split(coll, state: dict) -> None:
    for name, hr, hv in state.get("hidden", ()):
        ob = bpy.data.objects.get(name)
        if ob is not None:
            ob.hide_render, ob.hide_viewport = bool(hr), bool(hv)
    for name in state.get("moved", ()):
        ob = bpy.data.objects.get(name)
        if ob is not None:
            ob.location.x -= float(state.get("shift", 0.0))
    state["hidden"], state["moved"] = [], []


def _remove_split(coll) -> None:
    for ob in _split_targets(coll):
        mod = ob.modifiers.get(SPLIT_MODIFIER)
        if mod is not None:
            ob.modifiers.remove(mod)
    ng = bpy.data.node_groups.get(SPLIT_GROUP)
    if ng is not None and ng.users == 0:
        bpy.data.node_groups.remove(ng)


def unzoom(scene=None, collection_name: str = "TraceVis3D") -> dict:
    """The whole figure again: the refinement's objects removed, the overview as it was built."""
    from .meshobj import TAG
    from .writer import clear_collection

    t0 = time.perf_counter()
    scene = scene or bpy.context.scene
    state = zoom_state(scene)
    coll = bpy.data.collections.get(collection_name)
    zoom = bpy.data.collections.get(ZOOM_COLLECTION)
    if zoom is not None:
        clear_collection(zoom)
        bpy.data.collections.remove(zoom)
    orphans = [ng for ng in bpy.data.node_groups if ng.get(TAG) and ng.users == 0]
    if orphans:
        bpy.data.batch_remove(orphans)
    if coll is not None:
        if state:
            _undo_split(coll, state)
        _remove_split(coll)
    if state:
        cam = bpy.data.objects.get(state.get("camera") or "")
        if cam is not None:
            scene.camera = cam
    if STATE_KEY in scene:
        del scene[STATE_KEY]
    return {"window": None, "calls_drawn": 0, "names": [], "seconds": {"total": time.perf_counter() - t0}}


# ------------------------------------------------------------------------------ the job
def camera_persp(scene, cam_ob=None) -> tuple:
    """(world → clip matrix, (width, height)) of the scene camera at the render size (from the
    camera's data, without evaluating the scene)."""
    cam_ob = cam_ob or scene.camera
    w = int(scene.render.resolution_x * scene.render.resolution_percentage / 100)
    h = int(scene.render.resolution_y * scene.render.resolution_percentage / 100)
    c = cam_ob.data
    proj = refine.projection_matrix(c.type == "ORTHO", c.lens, c.sensor_width, c.ortho_scale, c.shift_x, c.shift_y,
                                    c.clip_start, c.clip_end, (w, h))
    return proj @ np.array(_world_matrix(cam_ob).normalized().inverted()), (w, h)


def _world_matrix(ob):
    """The object's world matrix now: ``matrix_world`` is only brought up to date by an
    evaluation of the scene, the basis of an object without a parent is its location and
    rotation as just set."""
    return ob.matrix_basis if ob.parent is None else ob.matrix_world


def refine_steps(job: Job, scene=None, window=None, thread=None, persp=None, region=None,
                 collection_name: str = "TraceVis3D"):
    """Refine ``scene``'s figure for ``window`` (µs), or for the view ``persp`` / ``region``
    (module doc); the result of `zoom_to`.  ``window=None`` without a view: the overview."""
    from .zoom_write import write_refinement_steps

    t_start = time.perf_counter()
    scene = scene or bpy.context.scene
    coll = bpy.data.collections.get(collection_name)
    if coll is None:
        raise ValueError(f"the scene has no figure to refine (no collection {collection_name!r})")
    layout = _scene_layout(scene)
    if layout in ("threads", "compare"):
        if persp is not None:
            raise ValueError(f"the {BESIDE[layout]} refines a window given to zoom_to (following the viewport is "
                             "the icicle's)")
        out = yield from _refine_beside_steps(job, scene, window, thread, coll, collection_name, t_start, layout)
        return out
    if layout != "icicle":
        raise ValueError(NOT_REFINED.get(layout, f"a {layout} figure does not refine (only the icicle and the "
                                                 "thread view do)"))
    state = zoom_state(scene)
    if persp is not None:
        ov = _overview(scene, coll)
        placement = refine.Placement.from_dict(state["placement"]) if state else None
        win, us_px = refine.view_window(np.asarray(persp, np.float64), region, ov, placement)
        action, win = refine.refine_decision(win, us_px, ov, state["window"] if state else None)
        if action == "keep" and (thread is None or thread == state.get("thread")):
            return {"window": tuple(state["window"]), "action": "keep", "calls_drawn": state.get("calls_drawn", 0),
                    "names": state.get("names", []), "seconds": {"total": time.perf_counter() - t_start}}
        if action == "overview":
            out = unzoom(scene, collection_name)
            out["action"] = "overview"
            return out
        window = win
    if window is None:
        out = unzoom(scene, collection_name)
        out["action"] = "overview"
        return out
    ctx = _trace_context(scene)
    ov = _overview(scene, coll)  # its boxes' own data: the split is a modifier, the data stay as built
    lo, hi = max(float(window[0]), ov.t0), min(float(window[1]), ov.t1)
    if not hi > lo:
        raise ValueError(f"the window {window[0]:g}..{window[1]:g} µs lies outside the trace "
                         f"({ov.t0:g}..{ov.t1:g} µs)")
    job.report(0.05, f"laying out {lo:,.0f}..{hi:,.0f} µs")
    t = time.perf_counter()
    wparams, spec = yield job.off_main(_layout, ctx, (lo, hi), thread)
    t_layout = time.perf_counter() - t
    placement = refine.place_refinement(ov, spec.meta, spec.camera, spec.resolution, (lo, hi))
    job.report(0.5, f"writing {spec.meta['n_boxes']:,} calls of the stretch")
    t = time.perf_counter()
    overview_cam = (state or {}).get("camera") or (scene.camera.name if scene.camera else None)
    job.on_cleanup(lambda: unzoom(scene, collection_name))  # stopped half-way: the overview, whole
    if state:  # the previous refinement's changes to the overview's names undone (the split is set anew)
        _undo_split(coll, state)
        scene[STATE_KEY] = json.dumps(state)
    out = yield from write_refinement_steps(spec, ZOOM_COLLECTION, scene)
    zoom = bpy.data.collections[ZOOM_COLLECTION]
    dx, dy, dz = placement.offset
    for ob in zoom.objects:
        if ob.parent is None:
            ob.location.x += dx
            ob.location.y += dy
            ob.location.z += dz
        ob["tv3d_zoom"] = True
    cam = bpy.data.objects.get(out["objects"]["camera"])
    if cam is not None:
        cam.data.clip_end = max(cam.data.clip_end, 4.0 * (placement.width + abs(placement.shift) + 100.0))
    new_state = {"window": [lo, hi], "thread": thread, "placement": placement.to_dict(), "camera": overview_cam}
    _apply_split(coll, placement, new_state)
    t_write = time.perf_counter() - t
    lab = spec.labels
    names = [txt for txt, k in zip(lab.texts, lab.kind) if k in NAME_KINDS]
    new_state.update(calls_drawn=int(spec.meta["n_boxes"]), names=names[:2000])
    scene[STATE_KEY] = json.dumps(new_state)
    job.report(1.0, f"refined {lo:,.0f}..{hi:,.0f} µs: {spec.meta['n_boxes']:,} calls, {len(names)} names")
    return {"window": (lo, hi), "thread": thread, "action": "refine", "calls_drawn": int(spec.meta["n_boxes"]),
            "calls": int(spec.meta["n_calls"]), "names": names, "camera": out["objects"]["camera"],
            "collection": ZOOM_COLLECTION, "placement": placement, "meta": spec.meta,
            "seconds": {"layout": t_layout, "write": t_write, "total": time.perf_counter() - t_start}}


#: a thread view packs threads of one kind into shared lanes only above this many lanes (`params.shared.PACK_THREADS`)
PACK_LANES = 8
#: why a view does not refine
NOT_REFINED = {
    "cone": "the cone tree does not refine: it has no time axis (a call's children sit on a cone around it, "
            "sized by their share of it); its zoom would be a subtree laid out as a cone of its own, which "
            "render-cone's root option draws (a `zoom_to(call=...)` is not built)",
}
#: the views that refine beside their overview (`_refine_beside_steps`)
BESIDE = {"threads": "thread view", "compare": "comparison"}


def _scene_layout(scene) -> str:
    from .animate import META_KEY

    try:
        meta = json.loads(scene.get(META_KEY) or "{}")
    except (TypeError, ValueError):
        meta = {}
    return str(meta.get("layout", "icicle")) if isinstance(meta, dict) else "icicle"


def _threads_context(scene) -> dict:
    """The thread view's trace, parameters and analysis (``scene[THREADS_KEY]``), kept per file version."""
    import os

    from . import session
    from ..layout.threads_params import ThreadsParams
    from .threads_tasks import THREADS_KEY

    try:
        rec = json.loads(scene.get(THREADS_KEY) or "null")
    except (TypeError, ValueError):
        rec = None
    if not isinstance(rec, dict):
        raise ValueError("the thread view's build record is missing: build the thread view again")
    src = rec.get("source")
    if not src or not os.path.isfile(str(src)):
        raise FileNotFoundError(f"the thread view's trace file is not there: {src or '(not recorded)'}")
    fkey = session.file_key(src)
    params = ThreadsParams.from_dict(rec.get("params") or {}).validate()
    key = ("threads",) + _context_key(fkey, params)
    ctx = _contexts.get(key)
    if ctx is None:
        _contexts.clear()
        ctx = _contexts[key] = {"path": fkey[0], "params": params, "trace": None, "sync": None}
    if ctx["trace"] is None:  # built in this session: its trace and analysis are at hand
        from .threads_tasks import last_sync, analysed_traces

        for tr in analysed_traces():
            if os.path.abspath(str(tr.meta.get("source") or "")) == fkey[0]:
                ctx["trace"], ctx["sync"] = tr, last_sync(tr)
                break
    return ctx


def _threads_window_layout(ctx: dict, window, focus, threads):
    """Worker: the dedicated ``render-threads --window`` figure of ``window``: the overview's
    threads (``threads``: its lanes' threads, None: as it chose them) and focus (``focus``:
    the thread whose icicle stands on top; the window's own choice where it has no calls in it)."""
    import dataclasses

    from ..analysis.synchronisation import synchronisation
    from ..layout.threads import threads_layout
    from . import session
    from .threads_tasks import last_sync

    if ctx["trace"] is None:
        ctx["trace"] = session.get_trace(ctx["path"])
    trace = ctx["trace"]
    if ctx["sync"] is None:
        ctx["sync"] = last_sync(trace) or synchronisation(trace)
    changes = {"time_window": (float(window[0]), float(window[1])), "window": "all"}
    if threads is not None and ctx["params"].threads is None:
        changes["threads"] = [int(t) for t in threads]
    params = dataclasses.replace(ctx["params"], **changes)
    if focus is not None:
        try:
            spec = threads_layout(trace, dataclasses.replace(params, focus=focus).validate(), ctx["sync"])
            return params, dataclasses.replace(spec, lights=[])
        except ValueError:  # the focused thread has no calls in the window: the window's own focus
            pass
    spec = threads_layout(trace, params.validate(), ctx["sync"])
    return params, dataclasses.replace(spec, lights=[])


def _compare_context(scene) -> dict:
    """The comparison's trace files, τ and parameters (``scene[COMPARE_KEY]``), its `Comparison` kept."""
    from . import session
    from ..layout.compare import CompareParams
    from .tasks import COMPARE_KEY

    try:
        rec = json.loads(scene.get(COMPARE_KEY) or "null")
    except (TypeError, ValueError):
        rec = None
    if not isinstance(rec, dict) or not rec.get("trace_a") or not rec.get("trace_b"):
        raise ValueError("the comparison's build record (its two trace files) is missing: compare them again")
    ka, kb = session.file_key(rec["trace_a"]), session.file_key(rec["trace_b"])
    params = CompareParams.from_dict(rec.get("params") or {}).validate()
    key = ("compare", ka, kb, float(rec.get("tau", 0.2)), json.dumps(params.to_dict(), sort_keys=True, default=str))
    ctx = _contexts.get(key)
    if ctx is None:
        _contexts.clear()
        ctx = _contexts[key] = {"paths": (ka[0], kb[0]), "tau": float(rec.get("tau", 0.2)), "params": params,
                                "cmp": None}
    return ctx


def _compare_window_layout(ctx: dict, window, thread):
    """Worker: the dedicated ``render-compare --window-a`` figure of A's ``window`` with B's
    window aligned to it (`refine.aligned_window`); ``thread``: A's thread shown (its matches'
    thread on B stays the comparison's choice)."""
    import dataclasses

    from ..layout.compare import compare_layout

    cmp = ctx["cmp"]
    a, b = cmp.a, cmp.b
    wb = refine.aligned_window(a.start, a.end, b.start, b.end, cmp.pairs["a"], cmp.pairs["b"], window,
                               (float(a.start.min()), float(b.start.min())))
    changes = {"window_a": (float(window[0]), float(window[1])), "window_b": wb, "align_a": None}
    if thread is not None:
        changes["thread_a"] = thread
    params = dataclasses.replace(ctx["params"], **changes).validate()
    spec = compare_layout(cmp, params)
    return params, dataclasses.replace(spec, lights=[])


def _frame_x(persp) -> tuple:
    return refine.frame_x_range(np.asarray(persp, np.float64), 0.0)


def _refine_beside_steps(job: Job, scene, window, thread, coll, collection_name: str, t_start: float,
                         layout: str = "threads"):
    """The thread view's and the comparison's refinement.

    The comparison: both sides' figures of the window (A's ``window``, B's aligned to it by
    the matches of A's calls in it, `refine.aligned_window`: `compare_layout` with
    ``window_a``/``window_b``) beside the overview, the scene camera on them.  The thread view: the dedicated figure of the window (its ring and its
    focused icicle at the window's scale, `threads_layout` with ``time_window``) beside the
    overview, right of its camera's frame, the scene camera on it.  The overview is not split:
    its time runs along the ring's arc (a fixed half circle), so a window of it is the whole
    figure laid out again; the overview stays whole beside it as the context a pulled-back
    view sees.  The lanes keep their colours: the window shows the overview's threads in its
    order (``lane_threads``), its bars coloured by the same absolute scale (waiting and I/O)."""
    from .animate import META_KEY
    from .zoom_write import write_refinement_steps

    state = zoom_state(scene)
    if window is None:
        out = unzoom(scene, collection_name)
        out["action"] = "overview"
        return out
    meta = json.loads(scene.get(META_KEY) or "{}")
    lo, hi = float(window[0]), float(window[1])
    if not hi > lo:
        raise ValueError(f"an empty window: {lo:g}..{hi:g} µs")
    t = time.perf_counter()
    if layout == "compare":
        from . import session

        ctx = _compare_context(scene)
        if ctx["cmp"] is None:  # the comparison the scene was built from (kept by the session when it made it)
            ctx["cmp"] = yield from session.compare_steps(job, *ctx["paths"], tau=ctx["tau"], span=(0.0, 0.05),
                                                          merge=bool(ctx["params"].merge))
        job.report(0.05, f"laying out the comparison of {lo:,.0f}..{hi:,.0f} µs of A")
        params, spec = yield job.off_main(_compare_window_layout, ctx, (lo, hi), thread)
    else:
        ctx = _threads_context(scene)
        focus = thread if thread is not None else meta.get("focus_thread")  # an index or a name
        lanes = meta.get("lane_threads")
        if lanes is not None and ctx["params"].pack_threads and len(lanes) > PACK_LANES:
            lanes = None  # its lanes may be packed: the window packs its own
        job.report(0.05, f"laying out the thread view of {lo:,.0f}..{hi:,.0f} µs")
        params, spec = yield job.off_main(_threads_window_layout, ctx, (lo, hi), focus, lanes)
    t_layout = time.perf_counter() - t
    overview_cam = (state or {}).get("camera") or (scene.camera.name if scene.camera else None)
    cam_ob = bpy.data.objects.get(overview_cam or "")
    ov_l, ov_r = _frame_x(camera_persp(scene, cam_ob)[0]) if cam_ob is not None else (0.0, 0.0)
    new_l, new_r = _frame_x(refine.camera_matrix(spec.camera, spec.resolution))
    gap = 0.05 * max(ov_r - ov_l, new_r - new_l)
    offset = (max(ov_l, ov_r) + gap - min(new_l, new_r), 0.0, 0.0)
    job.report(0.5, f"writing the {BESIDE[layout]} of {lo:,.0f}..{hi:,.0f} µs")
    t = time.perf_counter()
    job.on_cleanup(lambda: unzoom(scene, collection_name))
    out = yield from write_refinement_steps(spec, ZOOM_COLLECTION, scene)
    zoom = bpy.data.collections[ZOOM_COLLECTION]
    for ob in zoom.objects:
        if ob.parent is None:
            ob.location.x += offset[0]
        ob["tv3d_zoom"] = True
    cam = bpy.data.objects.get(out["objects"]["camera"])
    if cam is not None:
        cam.data.clip_end = max(cam.data.clip_end, 4.0 * (abs(offset[0]) + (new_r - new_l) + 100.0))
    t_write = time.perf_counter() - t
    lab = spec.labels
    names = [txt for txt, k in zip(lab.texts, lab.kind) if k in NAME_KINDS]
    if layout == "compare":
        calls = int(spec.meta["n_calls_a"]) + int(spec.meta["n_calls_b"])
    else:
        calls = int(spec.meta["n_calls"]) - int(spec.meta.get("n_cut", 0))
    scene[STATE_KEY] = json.dumps({"window": [lo, hi], "thread": thread, "camera": overview_cam, "layout": layout,
                                   "offset": list(offset), "calls_drawn": calls, "names": names[:2000]})
    job.report(1.0, f"refined {lo:,.0f}..{hi:,.0f} µs: {calls:,} calls, {len(names)} names")
    return {"window": (lo, hi), "thread": thread, "action": "refine", "calls_drawn": calls, "calls": calls,
            "names": names, "camera": out["objects"]["camera"], "collection": ZOOM_COLLECTION, "placement": None,
            "offset": offset, "meta": spec.meta,
            "seconds": {"layout": t_layout, "write": t_write, "total": time.perf_counter() - t_start}}


def zoom_job(scene=None, window=None, thread=None, persp=None, region=None,
             collection_name: str = "TraceVis3D") -> Job:
    """A `Job` that refines (`refine_steps`)."""
    return Job("refine", refine_steps, scene, window, thread, persp, region, collection_name)


def zoom_to(scene=None, window=None, thread=None, collection_name: str = "TraceVis3D") -> dict:
    """Frame ``window`` = (t0, t1) µs (the trace's clock) of ``thread`` (an index or a name;
    None: the figure's threads) with the scene camera and lay that stretch out at full detail
    in place of the overview there; ``window=None``: the whole figure again.  Returns what it
    did: {"window", "calls_drawn", "names", "seconds", ...} (module doc).  On a thread view
    ``thread`` is the focused thread (default: the overview's); on a comparison, A's thread
    and ``window`` is A's (B's is aligned to it)."""
    job = zoom_job(scene or bpy.context.scene, window, thread, collection_name=collection_name)
    return job.run(interval=0.005)


def zoom_to_view(scene, persp, region, collection_name: str = "TraceVis3D") -> dict:
    """What the viewport's refinement does for the view ``persp`` (world → clip, e.g.
    ``RegionView3D.perspective_matrix``) of ``region`` (width, height): refine the stretch it
    sees, keep the refinement in place, or return to the overview (``result["action"]``)."""
    return zoom_job(scene, persp=np.asarray(persp, np.float64), region=region,
                    collection_name=collection_name).run(interval=0.005)


# ------------------------------------------------------------------------------ the viewport
def window_of_call(trace, call: int, margin: float = 0.15, least_us: float = 200.0) -> tuple:
    """A window that shows call ``call`` whole with ``margin`` of its duration on each side,
    at least ``least_us`` wide (a search hit, a bookmark, the call under the mouse)."""
    s, e = float(trace.start[call]), float(trace.end[call])
    pad = max(margin * (e - s), 0.5 * max(least_us - (e - s), 0.0))
    return (s - pad, e + pad)


def viewport_pose(cam_ob, scene, region_window_matrix=None) -> dict:
    """Where a 3D viewport looks to show what camera ``cam_ob`` frames: {"location" (the point
    of the front plane at the frame's centre, lens shift included), "rotation" (quaternion
    w, x, y, z), "distance"}.  With the viewport's ``window_matrix`` the distance makes the
    viewport as wide as the camera's frame at that point (the viewport has its own lens)."""
    persp, region = camera_persp(scene, cam_ob)
    o, d = refine._unproject(persp, 0.0, 0.0)
    s = -o[1] / d[1] if abs(d[1]) > 1e-12 else 1.0
    centre = o + s * d
    loc = np.array(_world_matrix(cam_ob).translation)
    distance = float(np.linalg.norm(centre - loc))
    if region_window_matrix is not None:
        xl, xr = refine.frame_x_range(persp, float(centre[2]))
        w = abs(xr - xl)
        k = float(np.asarray(region_window_matrix)[0][0])  # 1 / tan(half the viewport's width angle)
        if w > 0 and k > 0:
            distance = 0.5 * w * k
    q = _world_matrix(cam_ob).to_quaternion()
    return {"location": [float(v) for v in centre], "rotation": [q.w, q.x, q.y, q.z], "distance": distance}
