"""A fly-through that refines along its path (issue 70, item 5): ``render-animation TRACE --kind
flythrough --zoom-window T0:T1`` (the panel's Animate section, `animate.animate_scene`) flies
from the whole figure into the window, and its frames show the detail as the camera arrives.

Before the frames, the refinement levels are built once (`refine_levels_steps`, a `Job`): K
windows nested around the target (`layout.fly_levels.nested_windows`, K at most the declared
``zoom_levels``), each laid out by the zoom's code (`zoom_inputs.context_layout`: the dedicated
``--window`` figure in the overview's colours) and written into its own collection
``TraceVis3D fly level j`` (`zoom_write.write_refinement_steps`), moved where a zoom places it
(`refine.place_refinement`).  Then everything that changes along the path is keyed, constant
from frame to frame (`key_levels`):

- each level's objects: ``hide_render`` / ``hide_viewport`` keys, shown in their phase only;
- the overview's boxes and meshes: the zoom's split (`zoom_split.split_group`) as a modifier
  ``TraceVis3D fly split`` whose Left / Right / Shift are keyed per level (each level's
  `refine.Placement`) and which is off (``show_render`` keyed) while the overview is seen whole;
- the overview's names: hidden where a level takes their stretch, moved right with what lies
  after it (as `zoom_split.apply_split` does), the lanes' names hidden while a level is seen;
- the camera: a key on every frame (`layout.fly_levels`): each level's own camera (the level's
  figure framed as its still) scaled about a point of the front plane until its frame spans
  what the next level's camera frames; lens shift and clipping keyed with it.

The levels are built into staging collections (``TraceVis3D fly staging j``, hidden) while the
scene is otherwise untouched: a job cancelled (or failed) while they are built takes them away
and leaves the scene as it was, an earlier animation and a zoom in place included
(`animate.animate_steps` removes those only once the levels are ready, then `commit_levels`
names them ``TraceVis3D fly level j``).  ``zoom_window="auto"``: the busiest window of the
figure `params.animation.ZOOM_AUTO_MAGNIFICATION` times narrower than it
(`layout.fly_levels.busiest_window`, the starts of the figure's threads' calls).

Keys only: the saved .blend plays and renders the same in a Blender with no Python (no
driver, no handler), and every frame is a function of its number alone (any split of the
frame range renders the frames of the whole).  A level's heads-up title and legend ride on its
own camera, which never renders: both are removed once its pose is read.
"""
from __future__ import annotations

import json
import time

import bpy
import numpy as np
from mathutils import Euler, Matrix, Vector

from ..jobs import Job
from ..layout import fly_levels, refine
from .compat import modifier_input_path, remove_modifier, set_modifier_input

__all__ = ["FLY_KEY", "LEVEL_COLLECTION", "STAGING_COLLECTION", "FLY_SPLIT_MODIFIER", "refine_levels_steps",
           "build_levels_steps", "commit_levels", "key_refined_flythrough", "remove_levels", "remove_staging"]

#: the scene's record of the fly-through's levels: JSON {"collections", "groups", "levels"}
FLY_KEY = "tracevis3d_fly_levels"
#: the collection of refinement level j (1..K)
LEVEL_COLLECTION = "TraceVis3D fly level {}"
FLY_SPLIT_MODIFIER = "TraceVis3D fly split"
#: a level's collection while the levels are built (`commit_levels` renames it `LEVEL_COLLECTION`)
STAGING_COLLECTION = "TraceVis3D fly staging {}"
#: a level's instancer groups, renamed so that the next level's writer makes its own
GROUP_NAME = "TV3D_fly{}_instancer_{}"
#: the same while the levels are built
STAGING_GROUP = "TV3D_flystage{}_instancer_{}"


# ------------------------------------------------------------------------------ the levels, built once
def _pose(cam_ob, offset=(0.0, 0.0, 0.0)) -> dict:
    c = cam_ob.data
    return {"location": [float(v) + float(d) for v, d in zip(cam_ob.location, offset)],
            "rotation": [float(v) for v in cam_ob.rotation_euler], "ortho": c.type == "ORTHO", "lens": float(c.lens),
            "sensor": float(c.sensor_width), "ortho_scale": float(c.ortho_scale), "shift_x": float(c.shift_x),
            "shift_y": float(c.shift_y), "clip_start": float(c.clip_start), "clip_end": float(c.clip_end)}


def overview_axis(scene, meta: dict, boxes: dict) -> refine.Overview:
    """The overview's time axis (``meta``: the build's, `animate.META_KEY`) and its lanes' z (the
    call and cluster boxes of ``boxes``: layer name -> (object, centres, sizes)), as the zoom
    reads them (`view._overview`)."""
    if meta.get("layout", "icicle") != "icicle" or "world_per_us" not in meta:
        raise ValueError("only an icicle figure flies into a window (this scene has no icicle's time axis)")
    lo, hi = np.inf, -np.inf
    for name in ("calls", "clusters"):
        if name in boxes and len(boxes[name][1]):
            ob, pos, sc = boxes[name]
            z, dz = pos[:, 2] + ob.location.z, 0.5 * sc[:, 2]
            lo, hi = min(lo, float((z - dz).min())), max(hi, float((z + dz).max()))
    if not np.isfinite(lo):
        raise ValueError("the scene has no icicle to refine (no call boxes in its collection)")
    return refine.Overview.from_meta(meta, lo, hi, scene.render.resolution_x)


def _auto_window(ctx: dict, span) -> tuple:
    """Worker: ``zoom_window="auto"`` (module doc): the trace loaded as the zoom loads it."""
    from ..params.animation import ZOOM_AUTO_MAGNIFICATION
    from .zoom_inputs import prepare

    prepare(ctx)
    trace, threads = ctx["trace"], ctx["params"].threads
    start = trace.start
    if threads is not None and len(threads):
        start = start[np.isin(trace.thread, trace._resolve_threads(threads))]
    return fly_levels.auto_window(start, span, ZOOM_AUTO_MAGNIFICATION)


def build_levels_steps(job: Job, scene, meta: dict, boxes: dict, n_frames: int, window, max_levels=None):
    """The levels of a fly-through into ``window`` of the icicle whose build recorded ``meta``
    (``boxes``: `animate._world_boxes`), built hidden (`refine_levels_steps`), then one step more
    in which a cancel still leaves the scene as it was.  (Overview, levels, seconds.)"""
    from ..params.animation import ANIMATION

    max_levels = ANIMATION["zoom_levels"].default if max_levels is None else int(max_levels)
    t = time.perf_counter()
    ov = overview_axis(scene, meta, boxes)
    levels = yield from refine_levels_steps(job, scene, ov, window, max_levels, n_frames)
    seconds = time.perf_counter() - t
    job.report(1.0, f"{len(levels)} refinement levels built: keying the path")
    yield  # the last moment a cancel leaves the scene as it was
    return ov, levels, seconds


def refine_levels_steps(job: Job, scene, ov: refine.Overview, window, max_levels: int, n_frames: int):
    """Build the fly-through's refinement levels of the overview ``ov`` into hidden staging
    collections (module doc; ``window`` (t0, t1) µs or "auto"); returns [level: {"window",
    "placement", "pose", "collection", "objects", "calls_drawn", "names", "seconds"}].  The
    scene camera stays what it was; nothing else of the scene changes."""
    from .figure_report import NAME_KINDS
    from .zoom_inputs import context_layout, trace_context
    from .zoom_write import GROUP_PREFIX, write_refinement_steps

    ctx = trace_context(scene)
    still_camera = scene.camera
    remove_staging(scene)  # a build stopped by a crash (never part of an animation)
    job.on_cleanup(lambda: remove_staging(scene, still_camera))  # stopped half-way: the scene as it was
    if isinstance(window, str) and window == "auto":
        job.report(0.0, "finding the busiest window")
        window = yield job.off_main(_auto_window, ctx, (ov.t0, ov.t1))
    lo, hi = max(float(window[0]), ov.t0), min(float(window[1]), ov.t1)
    if not hi > lo:
        raise ValueError(f"the zoom window {window[0]:g}..{window[1]:g} µs lies outside the figure "
                         f"({ov.t0:g}..{ov.t1:g} µs)")
    k = fly_levels.level_count((ov.t1 - ov.t0) / (hi - lo), max_levels, n_frames)
    windows = fly_levels.nested_windows((ov.t0, ov.t1), (lo, hi), k)
    levels = []
    for j, w in enumerate(windows, 1):
        job.report((j - 1) / k, f"laying out level {j} of {k}: {w[0]:,.0f}..{w[1]:,.0f} µs")
        t = time.perf_counter()
        _wparams, spec = yield job.off_main(context_layout, ctx, w, None)
        t_layout = time.perf_counter() - t
        placement = refine.place_refinement(ov, spec.meta, spec.camera, spec.resolution, w)
        t = time.perf_counter()
        name = STAGING_COLLECTION.format(j)
        out = yield from write_refinement_steps(spec, name, scene)
        level_coll = bpy.data.collections[name]
        cam_ob = bpy.data.objects[out["objects"]["camera"]]
        for ob in level_coll.objects:
            if ob.parent is None and ob != cam_ob:
                ob.location += Vector(placement.offset)
            ob["tv3d_fly_level"] = j
        pose = _pose(cam_ob, placement.offset)
        pose["clip_end"] = max(pose["clip_end"], 4.0 * (placement.width + abs(placement.shift) + 100.0))
        groups = _own_groups(level_coll, j, GROUP_PREFIX)
        hud = [ob for ob in level_coll.objects if ob.parent == cam_ob]
        cam_data = cam_ob.data
        bpy.data.batch_remove(hud + [cam_ob])
        if cam_data.users == 0:
            bpy.data.cameras.remove(cam_data)
        unused = [bpy.data.node_groups[g] for g in groups if bpy.data.node_groups[g].users == 0]  # the HUD's
        groups = [g for g in groups if bpy.data.node_groups[g].users > 0]
        if unused:
            bpy.data.batch_remove(unused)
        scene.camera = still_camera
        for ob in level_coll.objects:  # out of sight until the path shows it (`key_levels`)
            ob.hide_render = ob.hide_viewport = True
        names = [txt for txt, kind in zip(spec.labels.texts, spec.labels.kind) if kind in NAME_KINDS]
        levels.append({"level": j, "window": tuple(w), "placement": placement, "pose": pose,
                       "resolution": tuple(spec.resolution), "collection": name,
                       "objects": len(level_coll.objects), "groups": groups,
                       "calls_drawn": int(spec.meta["n_boxes"]), "names": len(names),
                       "seconds": {"layout": t_layout, "write": time.perf_counter() - t}})
    job.report(1.0, f"{k} refinement levels built")
    return levels


def _own_groups(level_coll, j: int, prefix: str) -> list:
    """The level's instancer groups made its own (the next level's writer would rebuild the
    zoom's groups in place): renamed `STAGING_GROUP`, or copied first where another object
    uses them too (a zoom in place's: it stays as it is).  Their names."""
    mods = [m for ob in level_coll.objects for m in ob.modifiers
            if getattr(m, "node_group", None) is not None and m.node_group.name.startswith(prefix)]
    own: dict = {}
    for m in mods:
        ng = m.node_group
        if ng.name not in own:
            here = sum(1 for x in mods if x.node_group == ng)
            mine = ng.copy() if ng.users > here else ng
            mine.name = STAGING_GROUP.format(j, ng.name[len(prefix):])
            mine["tv3d_fly"] = True
            own[ng.name] = mine
        m.node_group = own[ng.name]
    return sorted(g.name for g in own.values())


def remove_staging(scene=None, camera=None) -> int:
    """Take away levels being built (`STAGING_COLLECTION`) and their groups; ``camera`` (if it
    still exists) the scene camera again.  Returns how many collections were removed."""
    from .writer import clear_collection

    scene = scene or bpy.context.scene
    prefix = STAGING_COLLECTION.format("")
    n = 0
    for c in [c for c in bpy.data.collections if c.name.startswith(prefix)]:
        clear_collection(c)
        bpy.data.collections.remove(c)
        n += 1
    gone = [ng for ng in bpy.data.node_groups if ng.name.startswith(STAGING_GROUP.split("{}")[0])
            and ng.get("tv3d_fly") and ng.users == 0]
    if gone:
        bpy.data.batch_remove(gone)
    if camera is not None:
        try:
            scene.camera = camera
        except ReferenceError:  # removed meanwhile
            pass
    return n


def commit_levels(levels: list) -> None:
    """The staging levels become the animation's: collections `LEVEL_COLLECTION`, groups
    `GROUP_NAME` (after `remove_levels` took the earlier ones away)."""
    for lv in levels:
        j = lv["level"]
        bpy.data.collections[lv["collection"]].name = LEVEL_COLLECTION.format(j)
        lv["collection"] = LEVEL_COLLECTION.format(j)
        names = []
        for g in lv["groups"]:
            ng = bpy.data.node_groups[g]
            ng.name = GROUP_NAME.format(j, g.split("_instancer_", 1)[1])
            names.append(ng.name)
        lv["groups"] = names


def remove_levels(scene=None) -> int:
    """Take the fly-through's levels away: their collections and objects, their groups, the
    overview's fly split (a new build of the figure, `clear_animation`).  Returns how many
    levels were removed."""
    from .writer import clear_collection

    scene = scene or bpy.context.scene
    try:
        rec = json.loads(scene.get(FLY_KEY) or "{}")
    except (TypeError, ValueError):
        rec = {}
    names = set(rec.get("collections", ())) | {c.name for c in bpy.data.collections
                                               if c.name.startswith(LEVEL_COLLECTION.format(""))}
    n = 0
    for name in names:
        c = bpy.data.collections.get(name)
        if c is not None:
            clear_collection(c)
            bpy.data.collections.remove(c)
            n += 1
    remove_modifier(bpy.data.objects, FLY_SPLIT_MODIFIER)
    gone = [ng for ng in bpy.data.node_groups if ng.get("tv3d_fly") and ng.users == 0]
    if gone:
        bpy.data.batch_remove(gone)
    from .zoom_split import SPLIT_GROUP

    ng = bpy.data.node_groups.get(SPLIT_GROUP)
    if ng is not None and ng.users == 0:
        bpy.data.node_groups.remove(ng)
    if FLY_KEY in scene:
        del scene[FLY_KEY]
    return n


# ------------------------------------------------------------------------------ the camera's path
def _plain_first_frame(scene, cam, framed: dict, n: int) -> dict:
    """The camera's pose on the plain fly-through's first frame (`anim_camera.flythrough`: its
    establishing shot, no lens shift, its near clip for the path): its keys made, read at frame
    1 and removed, so the refined path starts on the very same frame."""
    from .anim_camera import action_fcurves, flythrough

    flythrough(scene, framed, n)
    pose = _pose(cam)
    curves = {(fc.data_path, fc.array_index): fc for fc in action_fcurves(cam.animation_data.action, cam)}
    pose["location"] = [float(curves[("location", k)].evaluate(1)) for k in range(3)]
    ad = cam.data.animation_data
    if pose["ortho"] and ad is not None and ad.action is not None:
        scale = {fc.data_path: fc for fc in action_fcurves(ad.action, cam.data)}.get("ortho_scale")
        if scale is not None:
            pose["ortho_scale"] = float(scale.evaluate(1))
    cam.animation_data_clear()
    cam.data.animation_data_clear()
    cam.location = pose["location"]
    cam.data.ortho_scale = pose["ortho_scale"]
    return pose


def _persp(pose: dict, resolution) -> np.ndarray:
    """World -> clip of a camera pose at ``resolution``."""
    m = Matrix.Translation(Vector(pose["location"])) @ Euler(pose["rotation"]).to_matrix().to_4x4()
    proj = refine.projection_matrix(pose["ortho"], pose["lens"], pose["sensor"], pose["ortho_scale"],
                                    pose["shift_x"], pose["shift_y"], pose["clip_start"], pose["clip_end"], resolution)
    return proj @ np.array(m.inverted())


def _front_row(pose: dict, resolution) -> tuple:
    """Where the picture's middle row meets the front plane y = 0: its left and right ends (3D)."""
    persp = _persp(pose, resolution)
    out = []
    for u in (-1.0, 1.0):
        o, d = refine.unproject(persp, u, 0.0)
        s = -o[1] / d[1] if abs(d[1]) > 1e-12 else 0.0
        out.append(o + s * d)
    return out[0], out[1]


def _scaled(pose: dict, point, s: float) -> dict:
    fwd = Euler(pose["rotation"]).to_matrix() @ Vector((0.0, 0.0, -1.0))
    out = dict(pose)
    out["location"] = [float(v) for v in fly_levels.scaled_pose(pose["location"], fwd, point, s, pose["ortho"])]
    out["ortho_scale"] = pose["ortho_scale"] * s
    out["clip_start"] = pose["clip_start"] * s
    return out


def _time_to_x(ov, level):
    """The time -> world x of the overview (``level`` None) or of a level's refined figure."""
    if level is None:
        return lambda t: (float(t) - ov.t0) * ov.world_per_us
    pl = level["placement"]
    return lambda t: pl.origin + (float(t) - pl.window[0]) * pl.world_per_us


def _x_to_time(level):
    pl = level["placement"]
    return lambda x: pl.window[0] + (float(x) - pl.origin) / pl.world_per_us


def camera_path(ov, levels: list, overview_pose: dict, resolution, n_frames: int) -> list:
    """The camera's pose on every frame 1..n (module doc): (level shown, pose) per frame."""
    phases = fly_levels.phase_frames(n_frames, len(levels))
    out = []
    stations = [(None, overview_pose)] + [(lv, lv["pose"]) for lv in levels]
    for j, (a, b) in enumerate(phases):
        level, pose = stations[j]
        if j == len(levels):  # the last level, held
            out.extend((j, pose) for _f in range(a, b + 1))
            break
        left, right = _front_row(pose, resolution)
        nxt = levels[j]
        nl, nr = _front_row(nxt["pose"], resolution)
        to_t, to_x = _x_to_time(nxt), _time_to_x(ov, level)
        s_end, x_p = fly_levels.zoom_about((left[0], right[0]), (to_x(to_t(nl[0])), to_x(to_t(nr[0]))))
        k = (x_p - left[0]) / (right[0] - left[0]) if abs(right[0] - left[0]) > 1e-12 else 0.5
        point = left + (right - left) * k
        for f in range(a, b + 1):
            tau = (f - a) / (b - a) if b > a else 1.0
            out.append((j, _scaled(pose, point, s_end ** tau)))
    return out


# ------------------------------------------------------------------------------ keys
def _constant(ob, paths) -> None:
    from .anim_camera import action_fcurves

    ad = ob.animation_data
    if ad is None or ad.action is None:
        return
    for fc in action_fcurves(ad.action, ob):
        if fc.data_path in paths:
            for kp in fc.keyframe_points:
                kp.interpolation = "CONSTANT"


def _key_shown(ob, frames_shown: list) -> None:
    """``ob`` shown on the frames of ``frames_shown`` [(a, b), ...] only (constant keys)."""
    for path in ("hide_render", "hide_viewport"):
        setattr(ob, path, True)
        ob.keyframe_insert(path, frame=1)
        for a, b in frames_shown:
            setattr(ob, path, False)
            ob.keyframe_insert(path, frame=a)
            setattr(ob, path, True)
            ob.keyframe_insert(path, frame=b + 1)
    _constant(ob, ("hide_render", "hide_viewport"))


def _key_camera(scene, cam, path: list) -> None:
    """A key on every frame (linear between: nothing between frames renders) of the camera's
    location, rotation, lens shift, clipping and, orthographic, its scale."""
    for f, (_lv, pose) in enumerate(path, 1):
        cam.location, cam.rotation_euler = pose["location"], pose["rotation"]
        cam.keyframe_insert("location", frame=f)
        cam.keyframe_insert("rotation_euler", frame=f)
        d = cam.data
        d.lens, d.shift_x, d.shift_y = pose["lens"], pose["shift_x"], pose["shift_y"]
        d.clip_start, d.clip_end, d.ortho_scale = pose["clip_start"], pose["clip_end"], pose["ortho_scale"]
        for prop in ("lens", "shift_x", "shift_y", "clip_start", "clip_end") + (("ortho_scale",) if pose["ortho"] else ()):
            d.keyframe_insert(prop, frame=f)
    from .anim_camera import interpolate

    for ob, props in ((cam, ("location", "rotation_euler")),
                      (cam.data, ("lens", "shift_x", "shift_y", "clip_start", "clip_end", "ortho_scale"))):
        if ob.animation_data is not None and ob.animation_data.action is not None:
            for p in props:
                interpolate(ob, p, "LINEAR")


def _key_split(coll, levels: list, phases: list) -> int:
    """The overview cut and moved around each level's stretch in its phase (the zoom's split
    group as a modifier whose inputs are keyed), whole while the overview is seen."""
    from .zoom_split import split_targets, split_group

    ng = split_group()
    ident = {s.name: s.identifier for s in ng.interface.items_tree if s.in_out == "INPUT"}
    first = phases[1][0]
    targets = split_targets(coll)
    for ob in targets:
        mod = ob.modifiers.new(FLY_SPLIT_MODIFIER, "NODES")
        mod.node_group = ng
        ob.modifiers.move(len(ob.modifiers) - 1, 0)  # before the instancer: it clips the points
        base = f'modifiers["{FLY_SPLIT_MODIFIER}"]'
        for on, f in ((False, 1), (True, first)):
            mod.show_render = mod.show_viewport = on
            ob.keyframe_insert(f"{base}.show_render", frame=f)
            ob.keyframe_insert(f"{base}.show_viewport", frame=f)
        for lv, (a, _b) in zip(levels, phases[1:]):
            pl = lv["placement"]
            for key, v in (("Left", pl.xa), ("Right", pl.xb), ("Shift", pl.shift)):
                set_modifier_input(mod, ident[key], float(v))
                ob.keyframe_insert(modifier_input_path(FLY_SPLIT_MODIFIER, ident[key]), frame=1 if a == first else a)
        _constant(ob, {f"{base}.show_render", f"{base}.show_viewport"}
                  | {modifier_input_path(FLY_SPLIT_MODIFIER, ident[k]) for k in ("Left", "Right", "Shift")})
    return len(targets)


def _key_overview_names(coll, levels: list, phases: list) -> int:
    """The overview's names under each level's stretch hidden in its phase, those after it moved
    right by its shift (`zoom_split.apply_split`); the lanes' names hidden while any level is
    seen (their x follows the camera, `anim_camera.sticky_lane_names`).  Names keyed."""
    from .zoom_split import label_x_range

    n = 0
    for ob in [o for o in coll.objects if o.type == "FONT" and o.parent is None and not o.hide_render]:
        if ob.get("tv3d_kind") == "lane":
            _key_shown(ob, [(1, phases[0][1])])
            n += 1
            continue
        lo, hi = label_x_range(ob)
        states = []
        for lv in levels:
            pl = lv["placement"]
            states.append("hide" if hi > pl.xa and lo < pl.xb else "move" if lo >= pl.xb else "home")
        if all(s == "home" for s in states):
            continue
        home = float(ob.location.x)
        ob["tv3d_home_x"] = home  # `animate.clear_animation` puts it back
        ob.keyframe_insert("location", index=0, frame=1)
        shown = [(1, phases[0][1])]
        for lv, (a, b), s in zip(levels, phases[1:], states):
            ob.location.x = home + (lv["placement"].shift if s == "move" else 0.0)
            ob.keyframe_insert("location", index=0, frame=a)
            if s != "hide":
                shown.append((a, b))
        ob.location.x = home
        _key_shown(ob, shown)
        _constant(ob, {"location"})
        n += 1
    return n


def key_levels(scene, coll, ov, levels: list, n_frames: int) -> dict:
    """Key the path, the levels' visibility, the overview's split and names (module doc)."""
    cam = scene.camera
    phases = fly_levels.phase_frames(n_frames, len(levels))
    for lv, (a, b) in zip(levels, phases[1:]):
        for ob in bpy.data.collections[lv["collection"]].objects:
            _key_shown(ob, [(a, b)])
    split = _key_split(coll, levels, phases)
    names = _key_overview_names(coll, levels, phases)
    return {"phases": phases, "split_objects": split, "overview_names_keyed": names, "camera": cam.name}


def key_refined_flythrough(scene, coll, framed: dict, n: int, ov, levels: list, t_levels: float) -> dict:
    """The fly-through into the last of ``levels`` (built by `refine_levels_steps`, committed by
    `commit_levels`; module doc): the path and the visibility keyed.  Returns what
    `animate.animate_scene` records: the levels (window, magnification, calls, names, objects,
    seconds), the target frame (the arrival), the keys made."""
    cam = scene.camera
    if cam is None:
        raise ValueError("the scene has no camera")
    overview_pose = _plain_first_frame(scene, cam, framed, n)
    resolution = levels[0]["resolution"]
    path = camera_path(ov, levels, overview_pose, resolution, n)
    _key_camera(scene, cam, path)
    keys = key_levels(scene, coll, ov, levels, n)
    scene.frame_set(1)
    cam.location, cam.rotation_euler = overview_pose["location"], overview_pose["rotation"]
    cam.data.clip_start, cam.data.clip_end = overview_pose["clip_start"], overview_pose["clip_end"]
    scene[FLY_KEY] = json.dumps({"collections": [lv["collection"] for lv in levels],
                                 "groups": [g for lv in levels for g in lv["groups"]]})
    span = ov.t1 - ov.t0
    arrival = keys["phases"][-1][0]
    return {"target": {"frame": arrival, "window": list(levels[-1]["window"])},
            "refine": {"window": list(levels[-1]["window"]), "magnification": span / (window_width(levels[-1])),
                     "seconds": t_levels, "phases": keys["phases"],
                     "levels": [{"window": list(lv["window"]), "magnification": span / window_width(lv),
                                 "calls_drawn": lv["calls_drawn"], "names": lv["names"], "objects": lv["objects"],
                                 "frames": list(ph), "seconds": lv["seconds"]}
                                for lv, ph in zip(levels, keys["phases"][1:])],
                     "split_objects": keys["split_objects"], "overview_names_keyed": keys["overview_names_keyed"]},
            "keyframes": n}


def window_width(level: dict) -> float:
    w = level["window"]
    return float(w[1]) - float(w[0])
