"""Animate a built figure: growth, fly-through, turntable, a comparison's
reveal (`anim_reveal`) — as data.

`animate_scene` turns the scene a view's build wrote (`writer.write_scene_steps`) into an
animation of ``seconds`` at ``fps`` (scene frames 1..N).  Nothing runs per frame in
Python: no frame-change handler, no driver.

- **growth**: every world-space box layer gets a ``TV3D_growth`` Geometry Nodes modifier
  before its instancer (`anim_nodes`), reading the point attributes ``t_start``/``t_end``
  (µs from the figure's left edge, written here from the boxes' x extents with
  foreach_get/foreach_set, one numpy pass); a ``TV3D_now`` object draws the "now" line and
  the clock.  Trace time runs linearly or eased (smoothstep 3u² − 2u³: slow at both ends)
  from the window's start at frame 1 to its end at frame N.  A call's name appears once
  the box has grown past the name's estimated end, or is whole (its ``hide_render`` /
  ``hide_viewport`` driven by the clock, `anim_nodes.hide_while_before`); a callout's
  leader with its name (the ``TV3D_appear`` modifier on the leaders' mesh).  The clock lives
  in five scene custom properties that every modifier and every name read
  (`anim_nodes.write_clock`): editing them retimes everything.
- **flythrough**, **turntable**: camera paths by F-curve keyframes (`anim_camera`); a
  fly-through given a ``zoom_window`` flies into it through refinement levels built once
  before the frames, their visibility keyed (`anim_refine`).

A moving camera hides the legend (the still placed it where the figure left room); the
fly-through, whose boxes fill the frame, hides the title too.
"""
from __future__ import annotations

import json

import bpy
import numpy as np
from mathutils import Vector

from .anim_nodes import (GROWTH_MODIFIER, appear_group, clear_clock, clock_seconds, growth_group, hide_while_before,
                         read_clock, set_inputs, trace_time)
from .anim_camera import box_extent, flythrough, sticky_lane_names, turntable
from .anim_clock import clock_after_title, now_mesh_object
from .anim_handoffs import HANDOFF_MODIFIER, handoffs
from .anim_reveal import REVEAL_MODIFIER, reveal
from .anim_threads import ARC_MODIFIER, grow_rings, ring_label_times
from .anim_inset import grow_inset, inset_boxes, inset_label_times, inset_labels
from ..views import ANIMATIONS, VIEWS
from ..layout.inset import INSET_ATTRIBUTE
from ..layout.inset import PREFIX as INSET_PREFIX
from .compat import positions_and_scales
from .meshobj import TAG, set_float_attribute

ANIM_KEY = "tracevis3d_animation"
META_KEY = "tracevis3d_meta"  # the layout's time axis, recorded by the build (`remember_meta`)
META_FIELDS = ("layout", "t0", "t1", "world_per_us", "world_per_pixel", "world_per_px", "text_px",
               "world_per_us_a", "world_per_us_b", "window_a", "window_b",
               "wall_world_per_us", "lane_angles", "ring_origin", "ring_stretch",  # the thread view's wall and rings
               "focus_thread", "lane_threads",  # the thread view's focus and lanes: a zoom keeps them (`view`)
               "inset",  # the icicle's detail inset: its own time axis (`layout.inset`)
               "x_unit")  # a merged trace's measure: its x is no clock (`layout.annotate.XUnit`)
KINDS = ANIMATIONS  # every kind; which a view offers: its registry entry (`tracevis3d.views.View.animations`)
APPEAR_MODIFIER = "TraceVis3D appear"  # the cone tree's growth
NOT_GROWN = ("axis", "legend")  # instance layers that stay as they are in a growth


def _collection(scene, name: str = "TraceVis3D"):
    coll = bpy.data.collections.get(name)
    if coll is None or coll.name not in scene.collection.children:
        raise ValueError("the scene holds no TraceVis3D figure: build one first")
    return coll


def _layer_objects(coll) -> dict:
    return {ob["tv3d_layer"]: ob for ob in coll.objects
            if "tv3d_layer" in ob and ob.type in ("POINTCLOUD", "MESH") and "tv3d_tubes" not in ob}


def _points(ob) -> tuple:
    """(positions (n,3), scales (n,3)) float32 of an instance layer's points."""
    return positions_and_scales(ob, len(ob.data.attributes["position"].data))


def _world_boxes(coll) -> dict:
    """layer name -> (object, positions, scales) of the world-space box layers that grow."""
    out = {}
    for name, ob in _layer_objects(coll).items():
        if name in NOT_GROWN or ob.get("tv3d_space") == "camera":
            continue
        if "tv_scale" not in ob.data.attributes:  # a mesh layer; boxes: points (a mesh of them in 4.2-4.4)
            continue
        out[name] = (ob,) + _points(ob)
    return out


def _mesh_bounds(coll) -> dict:
    """The mesh layers (the thread view's rings and curves, the cone tree's tubes, a
    comparison's tubes): each world-space object's bounding box as one box, for the camera paths."""
    out = {}
    for ob in coll.objects:
        name = ob.get("tv3d_layer")
        if (name is None or ob.type != "MESH" or ob.get("tv3d_space") == "camera" or ob.parent is not None
                or "tv_scale" in ob.data.attributes):  # the last: boxes as a mesh of points (bpy 4.2-4.4)
            continue
        corners = np.array([tuple(ob.matrix_world @ Vector(c)) for c in ob.bound_box], np.float32)
        lo, hi = corners.min(axis=0), corners.max(axis=0)
        out[name] = (ob, ((lo + hi) / 2)[None], (hi - lo)[None])
    return out


def clear_animation(scene) -> None:
    """Remove an earlier animation of the figure (modifiers, objects, keyframes)."""
    from .anim_refine import remove_levels

    remove_levels(scene)  # a fly-through's refinement levels
    coll = bpy.data.collections.get("TraceVis3D")
    if coll is None:
        return
    for ob in list(coll.objects):
        for mod in [m for m in ob.modifiers if m.name in (GROWTH_MODIFIER, REVEAL_MODIFIER, HANDOFF_MODIFIER,
                                                          ARC_MODIFIER, APPEAR_MODIFIER)]:
            ob.modifiers.remove(mod)
        if ob.animation_data is not None:
            ob.animation_data_clear()
            if ob.type == "FONT":  # a name the growth kept hidden for a while: shown again
                ob.hide_render = ob.hide_viewport = False
        if "tv3d_home_x" in ob:  # a lane's name a fly-through kept in the picture: back in its place
            ob.location.x = float(ob["tv3d_home_x"])
            del ob["tv3d_home_x"]
    cam = scene.camera
    if cam is not None and "tv3d_still" in cam:
        still = json.loads(cam["tv3d_still"])
        cam.animation_data_clear()
        cam.data.animation_data_clear()  # a fly-through's zoom of an orthographic camera
        world = cam.matrix_world.copy()
        cam.parent = None
        cam.matrix_world = world
        cam.location, cam.rotation_euler = still["location"], still["rotation"]
        cam.data.shift_x, cam.data.shift_y = still["shift"]
        cam.data.ortho_scale = still["ortho_scale"]
        if "clip" in still:  # keyed by a fly-through that refines
            cam.data.lens, (cam.data.clip_start, cam.data.clip_end) = still["lens"], still["clip"]
    for ob in coll.objects:
        if ob.get("tv3d_anim_hidden"):
            ob.hide_render = ob.hide_viewport = False
            del ob["tv3d_anim_hidden"]
    if cam is not None and "tv3d_still" in cam:
        _names_over_arcs(coll, json.loads(cam["tv3d_still"])["location"], back_home=False)
    gone = [ob for ob in coll.objects if ob.get("tv3d_anim")]
    if gone:
        bpy.data.batch_remove(gone)
    if ANIM_KEY in scene:
        del scene[ANIM_KEY]
    clear_clock(scene)


def remember_meta(scene, meta: dict) -> None:
    """Record what an animation of the figure just built needs (``scene[META_KEY]``, JSON)."""
    scene[META_KEY] = json.dumps({k: meta[k] for k in META_FIELDS if k in meta})


def _remember_still_camera(cam) -> None:
    if "tv3d_still" not in cam:
        cam["tv3d_still"] = json.dumps({"location": list(cam.location), "rotation": list(cam.rotation_euler),
                                        "shift": [cam.data.shift_x, cam.data.shift_y],
                                        "ortho_scale": cam.data.ortho_scale, "lens": cam.data.lens,
                                        "clip": [cam.data.clip_start, cam.data.clip_end]})


def animate_scene(scene, kind: str = "growth", seconds: float = 10.0, fps: int = 30, easing: str = "eased",
                  meta: dict | None = None, reveal_order: str = "time", call_end=None, zoom_window=None,
                  zoom_levels: int | None = None) -> dict:
    """Animate the figure in ``scene`` (`animate_steps`, run to its end here)."""
    return animate_job(scene, kind, seconds, fps, easing, meta, reveal_order, call_end, zoom_window,
                       zoom_levels).run(interval=0.005)


def animate_job(scene, kind: str = "growth", seconds: float = 10.0, fps: int = 30, easing: str = "eased",
                meta: dict | None = None, reveal_order: str = "time", call_end=None, zoom_window=None,
                zoom_levels: int | None = None):
    """A `Job` that animates the figure (`animate_steps`): the panel's Set Up Animation polls it
    from a timer (a fly-through's refinement levels are laid out in a worker meanwhile)."""
    from ..jobs import Job

    return Job("animate", animate_steps, scene, kind, seconds, fps, easing, meta, reveal_order, call_end,
               zoom_window, zoom_levels)


def animate_steps(job, scene, kind: str = "growth", seconds: float = 10.0, fps: int = 30, easing: str = "eased",
                  meta: dict | None = None, reveal_order: str = "time", call_end=None, zoom_window=None,
                  zoom_levels: int | None = None):
    """Animate the figure in ``scene`` (module docstring); ``meta``: the layout's meta of
    the build (``t0``, ``t1``, ``world_per_us``, ``world_per_pixel``, ``text_px``); None:
    the one recorded by the build.  ``reveal``: a comparison's tubes appear in
    ``reveal_order`` (`anim_reveal`); ``handoffs``: the thread view's curves appear when
    their waits end (``call_end``: the trace's call end times, `anim_handoffs`).  A
    ``flythrough`` of an icicle given ``zoom_window`` (t0, t1) µs or "auto" flies into it through at
    most ``zoom_levels`` refinement levels (`anim_refine`; defaults: `params.animation`), built
    before the scene changes (cancelled meanwhile, it is as it was).  A scene zoomed in place
    (`view.zoom_to`) is unzoomed first (``info["unzoomed"]``: the window it showed).  Returns
    and stores (``scene[ANIM_KEY]``, JSON) what a test or a farm needs: kind, frames, fps,
    the clock's inputs, the fly-through's target."""
    from ..params.animation import frame_count

    meta = dict(meta or json.loads(scene.get(META_KEY, "{}")))
    compare = meta.get("layout") == "compare"
    layout = meta.get("layout", "icicle")
    offered = _offered(layout)
    if kind == "auto":  # the view's first animation (`tracevis3d.views`); hand-offs need the trace's call ends
        kind = offered[0] if offered[0] != "handoffs" or call_end is not None else "turntable"
    if kind not in KINDS:
        raise ValueError(f"unknown animation kind {kind!r}; use {', '.join(KINDS)}")
    if kind in ("growth", "handoffs") and meta.get("x_unit"):  # merged stacks: x is a measure, not time
        raise ValueError(f"{kind} plays the calls over time, and this figure is merged stacks (x in "
                         f"{meta['x_unit']}, no clock): use flythrough or turntable")
    if kind == "reveal" and not compare:
        raise ValueError("reveal needs a comparison of two traces (give TRACE and TRACE_B)")
    if kind == "growth" and "growth" not in offered:
        raise ValueError(f"growth of the {layout} view is not available yet: use flythrough or turntable")
    if kind == "handoffs" and (layout != "threads" or call_end is None):
        raise ValueError("handoffs needs the thread view and its trace (render-animation --view threads)")
    if zoom_window is not None and (kind != "flythrough" or layout != "icicle"):
        raise ValueError(f"a zoom window is flown into by the icicle's flythrough (not the {layout} view's {kind})")
    coll = _collection(scene)
    n = frame_count(seconds, fps)
    built = None
    if zoom_window is not None:  # its levels built first, hidden: cancelled meanwhile, the scene as it was
        from .anim_refine import build_levels_steps, commit_levels

        built = yield from build_levels_steps(job, scene, meta, _world_boxes(coll), n, zoom_window, zoom_levels)
    # from here on one step on the main thread: the scene changes only here
    unzoomed = _unzoom(scene)
    clear_animation(scene)
    if built is not None:  # the levels the animation's; failed while keying: the still figure, not half a path
        commit_levels(built[1])
        job.on_cleanup(lambda: clear_animation(scene))
    r = scene.render
    r.fps, r.fps_base = int(fps), 1.0
    scene.frame_start, scene.frame_end = 1, n
    scene.frame_current = 1
    boxes = _world_boxes(coll)
    framed = {**_mesh_bounds(coll), **boxes}  # what the camera paths keep in view
    if not framed:
        raise ValueError("the figure has nothing to animate")
    info = {"kind": kind, "frames": [1, n], "fps": int(fps), "seconds": float(seconds), "easing": easing}
    if unzoomed is not None:
        info["unzoomed"] = list(unzoomed)
    if scene.camera is not None:
        _remember_still_camera(scene.camera)
    if kind == "growth" and layout == "cone":
        info.update(_cone_growth(scene, coll, meta, n, fps, easing))
    elif kind == "growth":
        info.update(_growth(scene, coll, boxes, meta, n, fps, easing, call_end))
    elif kind == "reveal":
        info.update(reveal(scene, coll, n, fps, reveal_order))
    elif kind == "handoffs":
        clock = clock_inputs(n, fps, easing, float(meta["t1"]) - float(meta["t0"]))
        info.update(handoffs(coll, clock, call_end, float(meta["t0"])), clock=clock)
    else:
        # placed where the still's figure left room: a moving camera puts boxes behind them
        _hide_hud(coll, ("legend", "title") if kind == "flythrough" else ("legend",))
        if scene.camera is not None:  # names the still brought in front of its arcs: back on their boxes
            _names_over_arcs(coll, json.loads(scene.camera["tv3d_still"])["location"], back_home=True)
        if kind == "flythrough":  # the detail inset too: a still's magnifier, in the room its camera left
            _hide_inset(coll)
            framed = {k: v for k, v in framed.items() if not k.startswith(INSET_PREFIX)}
        if kind == "flythrough" and built is not None:
            from .anim_refine import key_refined_flythrough

            info.update(key_refined_flythrough(scene, coll, framed, n, *built))
        else:
            info.update(flythrough(scene, framed, n) if kind == "flythrough" else turntable(scene, coll, framed, n))
        if kind == "flythrough":
            info["sticky_lane_names"] = sticky_lane_names(scene, coll)
    scene[ANIM_KEY] = json.dumps(info)
    return info


def _unzoom(scene):
    """A zoom in place (`view.zoom_to`) taken away first: an animation moves the overview's own
    camera over the whole figure (`view.unzoom`).  The window that was zoomed, or None."""
    from .zoom_split import unzoom, zoom_state

    state = zoom_state(scene)
    return None if state is None else (unzoom(scene), state.get("window"))[1]


def _offered(layout: str) -> tuple:
    """The animations the view that built the figure offers (its registry entry); the camera
    moves (fly-through, turntable) for a figure of a view that offers none."""
    for v in VIEWS:
        if v.name == layout and v.animations:
            return v.animations
    return ("flythrough", "turntable")


def clock_inputs(n: int, fps: int, easing: str, span_us: float) -> dict:
    """The clock's modifier inputs (`anim_nodes`): trace time 0 at frame 1, ``span_us`` at
    frame ``n``, linear or eased."""
    return {"Start (s)": 1.0 / fps, "Duration (s)": (n - 1) / fps, "Ease": 1.0 if easing == "eased" else 0.0,
            "Trace Start (µs)": 0.0, "Trace End (µs)": float(span_us)}


def _hide_hud(coll, kinds) -> None:
    for ob in coll.objects:
        if ob.get("tv3d_layer") in kinds or ob.get("tv3d_kind") in kinds:
            ob.hide_render = ob.hide_viewport = True
            ob["tv3d_anim_hidden"] = True


def _names_over_arcs(coll, camera_location, back_home: bool) -> int:
    """The names `layout.flow_arcs.labels_over_arcs` brought in front of the arcs (scaled by k
    about the still's camera, attribute ``ARC_SCALE_KEY``) put back on their boxes
    (``back_home``: scaled by 1/k, for a camera that moves: seen from elsewhere they would
    float in front of their boxes; their halos, which would lie in the names' own planes, hidden)
    or in front again (the still).  Returns how many."""
    from ..layout.flow_arcs import ARC_SCALE_KEY
    from ..layout.spec import HALO_KEY

    cam = Vector(camera_location)
    n = 0
    for ob in coll.objects:
        ppm = ob.get(ARC_SCALE_KEY, -1)
        if ob.type != "FONT" or ppm <= 0 or bool(ob.get("tv3d_arc_home")) == back_home:
            continue
        f = 1e6 / ppm if back_home else ppm / 1e6
        ob.location = cam + (ob.location - cam) * f
        ob.data.size *= f
        ob["tv3d_arc_home"] = back_home
        if ob.get(HALO_KEY, -1) > 0:  # a name's halo: at home it would lie in the name's own plane
            ob.hide_render = ob.hide_viewport = back_home
        n += 1
    return n


def _hide_inset(coll) -> None:
    """Hides the icicle's detail inset (its layers, names and caption), as `_hide_hud` does."""
    for ob in coll.objects:
        layer = ob.get("tv3d_layer")
        if (isinstance(layer, str) and layer.startswith(INSET_PREFIX)) or ob.get(INSET_ATTRIBUTE, -1) == 1 \
                or ob.get("tv3d_kind") == "inset":
            ob.hide_render = ob.hide_viewport = True
            ob["tv3d_anim_hidden"] = True


# ---------------------------------------------------------------------------- growth
def _growth_groups(boxes: dict, meta: dict) -> list:
    """(name suffix, boxes, world units per µs, window start µs, window length µs) of each
    time axis: one for an icicle, A's and B's for a comparison (each side its own scale)."""
    if meta.get("layout") == "compare":
        out = []
        for side in "ab":
            part = {name: v for name, v in boxes.items() if name.endswith(f"_{side}")}
            w0, w1 = meta[f"window_{side}"]
            if part:
                out.append((f"_{side}", part, float(meta[f"world_per_us_{side}"]), float(w0), float(w1) - float(w0)))
        return out
    k = float(meta.get("world_per_us") or meta.get("wall_world_per_us") or 0.0)  # an icicle's, the thread view's wall
    if not k > 0:
        raise ValueError("the figure's build record has no time scale (world_per_us): rebuild it")
    return [("", boxes, k, float(meta["t0"]), float(meta["t1"]) - float(meta["t0"]))]


def _growth(scene, coll, boxes: dict, meta: dict, n: int, fps: int, easing: str, call_end=None) -> dict:
    """Every time axis's boxes grow by one clock: a comparison's two runs in their own time
    (the faster finishes first); its tubes appear once both their calls have started; the
    thread view's rings along their arcs and its hand-offs at their times (`anim_threads`)."""
    threads = meta.get("layout") == "threads"
    if threads:  # the focused thread's icicle (not its time axis)
        boxes = {k: v for k, v in boxes.items() if k.startswith("wall_") and k != "wall_axis"}
    if not boxes:
        raise ValueError("the figure has no boxes to grow" + (" (the thread view without its icicle: "
                                                              "--no-icicle)" if threads else ""))
    inset, boxes = inset_boxes(boxes)  # a detail inset: its own times (`anim_inset`)
    groups = _growth_groups(boxes, meta)
    clock = clock_inputs(n, fps, easing, max(g[4] for g in groups))
    group = growth_group()
    grow_inset([v[0] for v in inset.values()], group, clock)
    nows = []
    for suffix, part, k, t0, span in groups:
        for ob, pos, sc in part.values():
            x0 = pos[:, 0].astype(np.float64) - sc[:, 0] / 2.0
            set_float_attribute(ob.data, "t_start", "POINT", x0 / k)
            set_float_attribute(ob.data, "t_end", "POINT", (x0 + sc[:, 0]) / k)
            mod = ob.modifiers.new(GROWTH_MODIFIER, "NODES")
            mod.node_group = group
            set_inputs(mod, clock)
            ob.modifiers.move(len(ob.modifiers) - 1, 0)  # before the instancer
        nows.append(_now_object(scene, coll, part, meta, clock, k, span, t0, f"TV3D_now{suffix}").name)
    labels = _call_labels(coll)
    out = {}
    if threads:
        out.update(grow_rings(coll, meta, clock))
        lo, hi = box_extent(boxes)
        on_ring = [ob for ob in labels if not lo[2] - 1e-6 <= ob.location.z <= hi[2] + 1e-6]
        labels = [ob for ob in labels if ob not in on_ring]
        ring_t = ring_label_times(on_ring, call_end, float(meta["t0"])) if on_ring and call_end is not None else []
        out["ring_labels_timed"] = _hide_before(scene, on_ring, ring_t, clock) if len(ring_t) else 0
        # (a callout's name above the wall is timed with these: its leader follows it, below)
        ring_named = {int(ob["call_index"]): float(t) for ob, t in zip(on_ring, ring_t)}
        if call_end is not None and any(ob.get("tv3d_layer") in ("corr", "corr_compound") for ob in coll.objects):
            try:
                out.update(handoffs(coll, clock, call_end, float(meta["t0"])))
            except ValueError:  # no hand-off drawn: nothing to time
                pass
    in_inset, labels = inset_labels(labels)
    shown, label_t = _time_labels(scene, coll, groups, clock, labels)
    out["inset_labels_timed"] = _hide_before(scene, in_inset, inset_label_times(in_inset, meta["inset"]), clock) \
        if in_inset and meta.get("inset") else 0
    shown += out["inset_labels_timed"]
    out["callout_leaders_timed"] = _time_leaders(coll, {**ring_named, **label_t} if threads else label_t, clock)
    out["flow_arcs_timed"] = _time_flow_arcs(coll, groups, clock, threads)
    out.update({"clock": clock, "world_per_us": groups[0][2], "t0": groups[0][3], "now_object": nows[0],
                "now_objects": nows, "labels_timed": shown})
    if meta.get("layout") == "compare" and len(groups) == 2:
        ka, kb = groups[0][2], groups[1][2]
        tubes = reveal(scene, coll, n, fps, "time",
                       timing=lambda xa, xb: clock_seconds(np.maximum(xa / ka, xb / kb), clock))
        out.update(tubes=tubes["tubes"], tube_object=tubes["tube_object"])
    return out


def _cone_growth(scene, coll, meta: dict, n: int, fps: int, easing: str) -> dict:
    """The cone tree grows as the program enters its calling contexts: every node, its edge,
    its base circle and its stub appear when the context's first call starts (the tubes'
    ``t_appear``, `layout.cone_geometry.node_appear_us`, made a face attribute read by a
    ``TV3D_appear`` modifier); a node's name with it; the clock above the tree."""
    from .tubes import face_tubes, tube_values

    if "t0" not in meta or "t1" not in meta:
        raise ValueError("the cone tree's build record has no time window: rebuild it")
    t0, span = float(meta["t0"]), float(meta["t1"]) - float(meta["t0"])
    clock = clock_inputs(n, fps, easing, span)
    group = appear_group()
    n_faces, call_t = 0, {}
    for ob in coll.objects:
        if ob.type != "MESH" or "tv3d_tubes" not in ob or ob.get("tv3d_space") == "camera":
            continue
        t = tube_values(ob.data, "t_appear")
        if t is None or not len(ob.data.polygons):
            continue
        me = ob.data
        _appear_by_face(ob, t[face_tubes(me)], clock, group)
        n_faces += len(me.polygons)
        calls = tube_values(me, "call_index")
        if calls is not None:
            call_t.update(zip(calls.tolist(), t.tolist()))
    if not n_faces:
        raise ValueError("the cone tree carries no appearance times: rebuild it")
    labels = [ob for ob in _call_labels(coll) if int(ob["call_index"]) in call_t]
    shown = _hide_before(scene, labels, [call_t[int(ob["call_index"])] for ob in labels], clock)
    now = clock_after_title(scene, coll, clock, span, t0)
    return {"clock": clock, "t0": t0, "appear_faces": n_faces, "labels_timed": shown, "now_object": now.name,
            "now_objects": [now.name]}


def _now_object(scene, coll, boxes, meta, clock, k: float, span: float, t0: float, name: str = "TV3D_now"):
    lo, hi = box_extent(boxes)
    px = meta.get("world_per_pixel") or meta.get("world_per_px") or [(hi[0] - lo[0]) / 1600.0]
    px = float(min(px) if isinstance(px, (list, tuple)) else px)
    size = 1.5 * float(meta.get("text_px", 16.0)) * px  # the clock: half as large again as the names
    front = lo[1] - 2 * px
    return now_mesh_object(coll, name, clock, span, t0, {
        "World per µs": k, "Bottom": lo[2], "Top": _seen_top(scene.camera, lo, hi, front), "Front": front,
        "Thickness": 2.5 * px, "Text Size": size, "Left": lo[0], "Right": hi[0]})


def _seen_top(cam, lo, hi, front: float) -> float:
    """The height on the plane y = ``front`` (in front of the figure) that the camera sees
    where it sees the figure's top back edge (y = hi[1], z = hi[2], at either end): seen from
    above, the top faces of the highest boxes rise above their front edge on the picture, and
    the clock written just above ``hi[2]`` stood on the top bar (a growth of a PyTorch profile:
    red "2.828 s" on the blue profiler span)."""
    top = float(hi[2])
    if cam is None:
        return top
    bpy.context.view_layer.update()  # the camera's matrix as placed
    eye = np.array(cam.matrix_world.translation, np.float64)
    view = -np.array(cam.matrix_world.to_3x3().col[2], np.float64)  # the camera looks along its −z
    for x in (lo[0], hi[0]):
        q = np.array([x, hi[1], hi[2]], np.float64)
        ray = view if cam.data.type == "ORTHO" else q - eye
        if abs(ray[1]) < 1e-12:
            continue
        z = q[2] + (front - q[1]) / ray[1] * ray[2]  # where the ray through q meets y = front
        if np.isfinite(z):
            top = max(top, float(z))
    return top


def _call_labels(coll) -> list:
    return [ob for ob in coll.objects if ob.type == "FONT" and ob.get("call_index", -1) >= 0 and ob.parent is None]


def _appear_by_face(ob, t_appear, clock: dict, group) -> None:
    """Each face of mesh ``ob`` shows once the clock reaches its time ``t_appear`` (µs): the
    face attribute and a ``TV3D_appear`` modifier of ``group`` (`anim_nodes.appear_group`,
    one for every object of a figure)."""
    set_float_attribute(ob.data, "t_appear", "FACE", np.asarray(t_appear, np.float64))
    mod = ob.modifiers.new(APPEAR_MODIFIER, "NODES")
    mod.node_group = group
    set_inputs(mod, clock)


def _time_leaders(coll, label_t: dict, clock: dict) -> int:
    """The callouts' leaders (`layout.callouts`, the mesh ``TV3D_callout_leaders``) appear
    with their names: each leader's faces get its name's time (``label_t``: call → µs) as
    ``t_appear``, read by the ``TV3D_appear`` modifier; the number of leaders timed."""
    ob = coll.objects.get("TV3D_callout_leaders")
    if ob is None or ob.type != "MESH" or "call_index" not in ob.data.attributes or not len(ob.data.polygons):
        return 0
    me = ob.data
    calls = np.empty(len(me.polygons), np.int32)
    me.attributes["call_index"].data.foreach_get("value", calls)
    start = clock["Trace Start (µs)"]
    t = np.array([label_t.get(int(c), start) for c in calls], np.float64)  # a name shown at once: its leader too
    t = np.minimum(t, _last_time(clock))
    _appear_by_face(ob, t, clock, appear_group())
    return len(np.unique(calls[t > start]))


def _time_flow_arcs(coll, groups: list, clock: dict, threads: bool = False) -> int:
    """The flow arcs (`layout.flow_arcs`, `layout.threads_flows`: the tube mesh ``TV3D_flows``)
    appear when the clock reaches the call each one reaches, every face of an arc at once: its
    ``t_reach`` (µs from the figure's start), or in an icicle built before that was kept its
    last x (flows run forward in time) on the time axis.  The number of arcs timed.  Without
    this they stood over the empty lanes from frame 1."""
    from .tubes import face_tubes, face_values

    ob = coll.objects.get("TV3D_flows")
    if ob is None or ob.type != "MESH" or "tube_index" not in ob.data.attributes or not len(ob.data.polygons):
        return 0
    me = ob.data
    arc = face_tubes(me)
    t = face_values(me, "t_reach")
    if t is None and threads:
        return 0
    if t is None:
        co = np.empty(len(me.vertices) * 3, np.float64)
        me.vertices.foreach_get("co", co)
        m = np.array(ob.matrix_world, np.float64)
        x = co.reshape(-1, 3) @ m[0, :3] + m[0, 3]  # world x
        loop_start = np.empty(len(me.polygons), np.int32)
        me.polygons.foreach_get("loop_start", loop_start)
        corner = np.empty(len(me.loops), np.int32)
        me.loops.foreach_get("vertex_index", corner)
        order = np.argsort(loop_start, kind="stable")
        face_x = np.empty(len(me.polygons))
        face_x[order] = np.maximum.reduceat(x[corner], loop_start[order])
        arc_x = np.full(int(arc.max()) + 1, -np.inf)
        np.maximum.at(arc_x, arc, face_x)
        t = arc_x[arc] / float(groups[0][2])
    t = np.clip(np.asarray(t, np.float64), clock["Trace Start (µs)"], _last_time(clock))
    _appear_by_face(ob, t, clock, appear_group())
    return int(np.unique(arc).size)


def _time_labels(scene, coll, groups: list, clock: dict, labels=None) -> tuple:
    """Hide every call's name (``labels``, else every call label of ``coll``) until its box
    has grown past the name (`_hide_before`); a name belongs to the time axis
    (`_growth_groups`) whose boxes are nearest its height.  (Names timed, {call: time µs}.)"""
    labels = _call_labels(coll) if labels is None else labels
    if not labels:
        return 0, {}
    ci = np.array([int(ob["call_index"]) for ob in labels], np.int64)
    ax = np.array([ob.location.x for ob in labels])
    az = np.array([ob.location.z for ob in labels])
    size = np.array([ob.data.size for ob in labels])
    chars = np.array([len(ob.data.body) for ob in labels])
    align = [ob.data.align_x for ob in labels]
    end_x = ax + np.where(np.array([a == "LEFT" for a in align]), 1.0,
                          np.where(np.array([a == "CENTER" for a in align]), 0.5, 0.0)) * 0.55 * chars * size
    spans = [box_extent(g[1]) for g in groups]
    gap = np.stack([np.maximum(lo[2] - az, 0.0) + np.maximum(az - hi[2], 0.0) for lo, hi in spans])
    which = np.argmin(gap, axis=0)
    k = np.array([g[2] for g in groups])[which]
    for j, (suffix, part, _k, _t0, _span) in enumerate(groups):
        calls = part.get(f"calls{suffix}") or part.get("wall_calls")  # an icicle's, the thread view's wall
        if calls is None or "call_index" not in calls[0].data.attributes or not len(calls[1]):
            continue
        ob, pos, sc = calls
        idx = np.empty(len(pos), np.int32)
        ob.data.attributes["call_index"].data.foreach_get("value", idx)
        order = np.argsort(idx, kind="stable")
        where = np.clip(np.searchsorted(idx[order], ci), 0, len(idx) - 1)
        hit = (idx[order][where] == ci) & (which == j)
        box_end = np.where(hit, pos[order][where, 0] + sc[order][where, 0] / 2, np.inf)
        end_x = np.minimum(end_x, box_end)
    return _hide_before(scene, labels, end_x / k, clock), dict(zip(ci.tolist(), (end_x / k).tolist()))


def _hide_before(scene, labels, times_us, clock: dict) -> int:
    """Each label hidden while the clock has not reached its time (`anim_nodes.
    hide_while_before`: a driver on the scene's clock, so a retime moves it too); a label
    whose time is the clock's start shows from the first frame, one whose time is after the
    window's end on the last frame.  The count timed."""
    count = 0
    for ob, t in zip(labels, np.minimum(np.asarray(times_us, np.float64), _last_time(clock)).tolist()):
        if not t > clock["Trace Start (µs)"]:
            continue
        hide_while_before(ob, t, scene)
        count += 1
    return count


def _last_time(clock: dict) -> float:
    """What shows on the last frame is timed at most this (µs): a call ending after the
    window is named on the last frame, its time a little before the end (driver variables
    are single precision: 1e-6 of the clock's values, well above it)."""
    return clock["Trace End (µs)"] - 1e-6 * max(abs(clock["Trace End (µs)"]), abs(clock["Trace Start (µs)"]), 1.0)


def growth_time(scene, frame: int) -> float:
    """The trace time (µs from the figure's left edge) the growth shows at ``frame``."""
    info = json.loads(scene[ANIM_KEY])
    c = {**info["clock"], **read_clock(scene)}  # as retimed in the scene's clock properties
    return float(trace_time([frame], scene.render.fps, c["Start (s)"], c["Duration (s)"], c["Ease"],
                            c["Trace Start (µs)"], c["Trace End (µs)"])[0])


__all__ = ["ANIM_KEY", "animate_scene", "animate_job", "animate_steps", "clear_animation", "growth_time", "TAG"]
