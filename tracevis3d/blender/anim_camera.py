"""The animations' camera paths, by F-curve keyframes: nothing runs per frame.

- **flythrough**: from the still's whole figure on frame 1 (an establishing shot over the
  first `INTRO_SHARE` of the frames, when there are `INTRO_MIN_FRAMES` or more), the camera
  goes `ZOOM` times closer and moves along the time axis over the middle 99 % of the area of
  the boxes narrower than a loop (not over the idle end of a run); its speed is inverse to the
  "interest" at its position (box count and box area, i.e. call density and, with the
  default extrusion, self time, over a 30 % floor), so it slows down where the most
  happens; its height follows the interest in view.  It passes the target (the largest box
  at most `TARGET_MAX_WIDTH` of the figure wide: not a thread's loop over the whole run) at
  a keyframe centred on it (recorded in ``scene["tracevis3d_animation"]``).  Its near clip
  is keyed with it (`path_near_clip`: as far out as the figure allows, for a fine depth buffer).
  The lanes' names keep to the left edge of the picture while the camera flies past the
  figure's start (`sticky_lane_names`: keyframes of their x, one a frame), so every frame
  says which thread is which.
- **turntable**: the camera is parented to an empty at the figure's centre whose z
  rotation goes 0 → 360° (linear keyframes, frame 1 to N: the first and last frames are
  the same view); the camera, aimed at the centre from the still's direction, is moved to
  where the figure's bounding sphere fills the image's shorter side, so every angle keeps
  it framed.
"""
from __future__ import annotations

import math

import bpy
import numpy as np
from mathutils import Vector

from .meshobj import tag_datablock

ZOOM = 3.0  # the fly-through's camera: this many times closer than the still's
INTRO_SHARE = 0.2  # the fly-through's first frames: from the whole figure to the path
INTRO_MIN_FRAMES = 10  # fewer frames: no establishing shot
TARGET_MAX_WIDTH = 0.25  # the fly-through's target: the largest box at most this share of the figure wide


def box_extent(boxes: dict) -> tuple:
    """(lo, hi) corners of the boxes of ``boxes`` (layer name → (object, centres, sizes))."""
    lo = np.full(3, np.inf)
    hi = np.full(3, -np.inf)
    for _ob, pos, sc in boxes.values():
        if len(pos):
            lo = np.minimum(lo, (pos - sc / 2).min(axis=0))
            hi = np.maximum(hi, (pos + sc / 2).max(axis=0))
    return lo, hi


def _placed(scene):
    """The scene's camera, its ``matrix_world`` brought up to date: that follows its location and
    rotation only through an evaluation of the view layer, which a build on bpy 4.2-4.4 never
    runs (4.5 and 5.0 evaluate it while they convert point clouds); the still's camera read as
    the identity made the fly-through and the turntable look at nothing."""
    cam = scene.camera
    if cam is None:
        raise ValueError("the scene has no camera")
    (bpy.context.view_layer if scene == bpy.context.scene else scene.view_layers[0]).update()
    return cam


def _view(cam) -> tuple:
    """(forward, right, up) unit vectors of the camera object."""
    m = cam.matrix_world.to_3x3()
    return (m @ Vector((0, 0, -1))).normalized(), (m @ Vector((1, 0, 0))).normalized(), \
        (m @ Vector((0, 1, 0))).normalized()


def _key(ob, path: str, frame: int, interpolation: str | None = None) -> None:
    ob.keyframe_insert(path, frame=frame)
    if interpolation:
        interpolate(ob, path, interpolation)


def interpolate(ob, path: str, interpolation: str) -> None:
    """Every keyframe of ``ob``'s F-curves of ``path`` interpolated as ``interpolation``."""
    for fc in action_fcurves(ob.animation_data.action, ob):
        if fc.data_path == path:
            for kp in fc.keyframe_points:
                kp.interpolation = interpolation


def action_fcurves(action, ob):
    """The F-curves of ``ob`` in ``action`` (Blender 5's layered actions, or the old list)."""
    if hasattr(action, "fcurves") and not hasattr(action, "layers"):
        return list(action.fcurves)
    slot = ob.animation_data.action_slot
    out = []
    for layer in action.layers:
        for strip in layer.strips:
            bag = strip.channelbag(slot)
            if bag is not None:
                out.extend(bag.fcurves)
    return out


def _interest(boxes: dict, lo, hi, bins: int = 256) -> tuple:
    """Per x bin over [lo.x, hi.x]: interest (count share + area share over a 30 % floor; the
    area of the boxes at most `TARGET_MAX_WIDTH` of the figure wide), its height-weighted z
    sum and weight; and the target box (the largest in area of those boxes; the largest where
    none is)."""
    edges = np.linspace(lo[0], hi[0], bins + 1)
    count = np.zeros(bins)
    area = np.zeros(bins)
    zsum = np.zeros(bins)
    best = (None, None)
    for _ob, pos, sc in boxes.values():
        if not len(pos):
            continue
        b = np.clip(np.searchsorted(edges, pos[:, 0], side="right") - 1, 0, bins - 1)
        a = sc[:, 0].astype(np.float64) * sc[:, 1]
        # neither the target nor the area in a bin: a box over much of the run (a thread's
        # loop, idle: Chrome's RunLoop::Run), whose whole area would land in its centre's bin
        narrow = sc[:, 0] <= TARGET_MAX_WIDTH * (hi[0] - lo[0])
        a_n = np.where(narrow, a, 0.0)
        count += np.bincount(b, minlength=bins)
        area += np.bincount(b, weights=a_n, minlength=bins)
        zsum += np.bincount(b, weights=a_n * pos[:, 2], minlength=bins)
        j = int(np.argmax(np.where(narrow, a, -1.0)))
        key = (bool(narrow[j]), float(a[j]))  # a narrow box before any wide one, then the largest
        if best[1] is None or key > best[0]:
            best = (key, tuple(float(v) for v in pos[j]))
    share = 0.35 * count / max(count.sum(), 1) + 0.35 * area / max(area.sum(), 1e-30) + 0.30 / bins
    return edges, share, area, zsum, best[1]


def flythrough(scene, boxes: dict, n: int) -> dict:
    cam = _placed(scene)
    lo, hi = box_extent(boxes)
    centre = (lo + hi) / 2
    fwd, _right, _up = _view(cam)
    loc = Vector(cam.location)
    dist = (Vector(tuple(centre)) - loc).dot(fwd)
    edges, share, area, zsum, target = _interest(boxes, lo, hi)
    width = (hi[0] - lo[0]) / ZOOM
    height = (hi[2] - lo[2]) / ZOOM
    b0, b1 = 0, share.size - 1
    if area.sum() > 0:  # the path stays where the boxes narrower than a loop are (the middle 99 % of their
        # area: a browser's page load has its activity in the first second of 3.5, then idle loops)
        c = np.cumsum(area) / area.sum()
        b0, b1 = int(np.searchsorted(c, 0.005)), min(int(np.searchsorted(c, 0.995)), share.size - 1)
    cdf = np.concatenate([[0.0], np.cumsum(share[b0:b1 + 1])])
    cdf /= cdf[-1]
    n_keys = max(6, min(24, n // 10))
    us = np.linspace(0.0, 1.0, n_keys)
    xs = np.interp(us, cdf, edges[b0:b1 + 2])
    # the target: a keyframe centred on the largest box, at the time the path reaches it
    u_t = float(np.interp(target[0], edges[b0:b1 + 2], cdf))
    keep = np.abs(us - u_t) > 0.5 / (n_keys - 1)
    us = np.concatenate([us[keep], [u_t]])
    xs = np.concatenate([xs[keep], [target[0]]])
    order = np.argsort(us)
    us, xs = us[order], xs[order]
    xs = np.clip(xs, lo[0] + width / 2, hi[0] - width / 2) if hi[0] - lo[0] > width else np.full_like(xs, centre[0])
    zs = np.empty_like(xs)
    for j, x in enumerate(xs):  # keyframes, a few dozen
        m = (edges[:-1] >= x - width / 2) & (edges[1:] <= x + width / 2)
        w = area[m].sum()
        zs[j] = zsum[m].sum() / w if w > 0 else centre[2]
    zs = np.clip(zs, lo[2] + height / 2, hi[2] - height / 2) if hi[2] - lo[2] > height else np.full_like(zs, centre[2])
    # an establishing shot: the still's whole figure on frame 1, the path from there on
    first = 1 + (int(round(INTRO_SHARE * n)) if n >= INTRO_MIN_FRAMES else 0)
    frames = np.round(first + us * (n - first)).astype(int)
    j_t = int(np.flatnonzero(us == u_t)[0])
    xs[j_t], zs[j_t] = target[0], target[2]
    frames, idx = np.unique(frames, return_index=True)
    xs, zs = xs[idx], zs[idx]
    back = fwd * (dist / ZOOM)
    cam.data.shift_x = cam.data.shift_y = 0.0  # centred on the path (the still's shift made room for the HUD)
    if first > 1:
        cam.location = Vector((centre[0], centre[1], centre[2])) - fwd * dist  # the still's distance, centred
        _key(cam, "location", 1)
        if cam.data.type == "ORTHO":
            _key(cam.data, "ortho_scale", 1)
    if cam.data.type == "ORTHO":
        cam.data.ortho_scale = cam.data.ortho_scale / ZOOM
        _key(cam.data, "ortho_scale", int(frames[0]))
    for f, x, z in zip(frames.tolist(), xs.tolist(), zs.tolist()):
        cam.location = Vector((x, centre[1], z)) - back
        _key(cam, "location", f)
    f_t = int(frames[np.argmin(np.abs(xs - target[0]) + np.abs(zs - target[2]))])
    clips = []
    if cam.data.type != "ORTHO":  # the near clip keyed with the path: the still's on the establishing shot
        still = float(cam.data.clip_start)
        keys = [(1, still)] if first > 1 else []
        keys += [(f, path_near_clip(cam, [Vector((x, centre[1], z)) - back], lo, hi, still))
                 for f, x, z in zip(frames.tolist(), xs.tolist(), zs.tolist())]
        for f, clip in keys:
            cam.data.clip_start = clip
            _key(cam.data, "clip_start", f)
        cam.data.clip_start = still  # outside the animation (and once it is cleared): the still's
        clips = [clip for _f, clip in keys]
    return {"target": {"frame": f_t, "world": list(target)}, "keyframes": len(frames), "zoom": ZOOM,
            "clip_start": [min(clips), max(clips)] if clips else None}


def path_near_clip(cam, eyes, lo, hi, still: float) -> float:
    """The near clip of a perspective camera at all the ``eyes`` (its rotation fixed; the
    fly-through keys one per key of its path): `layout.camera.near_clip` of the least depth at
    which its view may meet the figure's bounding box (``lo``, ``hi``) from any of them, at most
    the still's ``still``.  The box's face towards the camera (the plane y = lo.y for a camera in front of
    it, y = hi.y behind it) is met first by every ray that reaches the box, and along a plane
    the nearest point in view lies on one of the four corner rays of the frame: the least
    depth of those corners over the eyes bounds the nearest geometry from below.  A corner ray
    that never meets the plane (looking away from it or along it) gives no bound: the still's
    clip stays.  The bigger the near clip the finer the depth buffer (issue 72: a near clip
    of 1e-3 of the distance let neighbouring calls' faces tie from render to render)."""
    from ..layout.camera import near_clip

    m = cam.matrix_world.to_3x3()
    fwd = np.array(m @ Vector((0, 0, -1)), np.float64)
    right = np.array(m @ Vector((1, 0, 0)), np.float64)
    up = np.array(m @ Vector((0, 1, 0)), np.float64)
    fwd, right, up = (v / np.linalg.norm(v) for v in (fwd, right, up))
    frame = [Vector(c) for c in cam.data.view_frame(scene=bpy.context.scene)]  # camera-local corners
    rays = np.array([right * (c.x / -c.z) + up * (c.y / -c.z) + fwd for c in frame])  # depth 1 each
    nearest = math.inf
    for eye in eyes:
        e = np.array(eye, np.float64)
        if e[1] < lo[1]:
            plane = lo[1]
        elif e[1] > hi[1]:
            plane = hi[1]
        else:
            return still  # the eye inside the box's depth: no plane bounds the view
        t = (plane - e[1]) / rays[:, 1]  # the corner rays' depths at the plane
        if not np.all(np.isfinite(t)) or t.min() <= 0.0:
            return still
        nearest = min(nearest, float(t.min()))
    if not math.isfinite(nearest):
        return still
    return min(still, near_clip(0.0, nearest))


def turntable(scene, coll, boxes: dict, n: int) -> dict:
    cam = _placed(scene)
    lo, hi = box_extent(boxes)
    centre = Vector(tuple((lo + hi) / 2))
    size = hi - lo
    r_xy = 0.5 * math.hypot(float(size[0]), float(size[1]))  # the circle the figure sweeps around z
    h_half = 0.5 * float(size[2])
    pivot = tag_datablock(bpy.data.objects.new("TV3D_turntable", None))
    pivot["tv3d_anim"] = True
    pivot.location = centre
    coll.objects.link(pivot)
    r = scene.render
    wide = r.resolution_x * r.pixel_aspect_x >= r.resolution_y * r.pixel_aspect_y
    aspect = (r.resolution_y * r.pixel_aspect_y) / max(r.resolution_x * r.pixel_aspect_x, 1e-9)
    if cam.data.type == "ORTHO":
        need = (2.0 * r_xy, 2.0 * h_half / aspect) if wide else (2.0 * r_xy * aspect, 2.0 * h_half)
        cam.data.ortho_scale = 1.05 * max(need)  # the longer side's extent (sensor fit AUTO)
        grow = 1.0
    else:
        tan_long = cam.data.sensor_width / (2.0 * cam.data.lens)  # sensor fit AUTO: the longer side
        tan_x, tan_y = (tan_long, tan_long * aspect) if wide else (tan_long / aspect, tan_long)
        # the swept circle inside the horizontal field of view; the top and bottom, at the
        # nearest the figure comes (r_xy closer), inside the vertical one
        dist = max(1.05 * r_xy / math.sin(math.atan(tan_x)), 1.15 * (r_xy + h_half / tan_y))  # 15 %: the elevation
        away = (Vector(cam.location) - centre).normalized()
        grow = dist / max((Vector(cam.location) - centre).length, 1e-9)
        cam.location = centre + away * dist
    cam.data.shift_x = cam.data.shift_y = 0.0
    cam.rotation_euler = (centre - Vector(cam.location)).to_track_quat("-Z", "Y").to_euler()
    bpy.context.view_layer.update()
    world = cam.matrix_world.copy()
    cam.parent = pivot
    cam.matrix_parent_inverse = pivot.matrix_world.inverted()
    cam.matrix_world = world
    pivot.rotation_euler = (0.0, 0.0, 0.0)
    _key(pivot, "rotation_euler", 1, "LINEAR")
    pivot.rotation_euler = (0.0, 0.0, 2 * math.pi)
    _key(pivot, "rotation_euler", n, "LINEAR")
    scene.frame_set(1)
    return {"pivot": pivot.name, "distance_factor": grow}


#: `sticky_lane_names`: the gap between the picture's left edge and a lane's name, in the name's heights
STICKY_MARGIN = 0.6


def sticky_lane_names(scene, coll) -> int:
    """Keyframes that keep the lanes' names (FONT objects of ``tv3d_kind`` lane, right-aligned
    left of the lanes) inside the picture while the camera flies along the figure: at every frame
    (linear between them), a name's x is where its left end stands `STICKY_MARGIN` of its
    height in from the picture's left edge, or its own place when that is further right (the
    establishing shot).  The left edge at a name: the plane through the camera and the left edge
    of its frame (`Camera.view_frame`; orthographic: the plane of the frame's left edge, its
    ``ortho_scale`` as keyed) met at the name's y and z.  The place in the still is kept in
    ``tv3d_home_x`` (`clear_animation` puts it back).  Returns how many names were keyed."""
    cam = scene.camera
    if cam is None or cam.animation_data is None or cam.animation_data.action is None:
        return 0
    curves = {(fc.data_path, fc.array_index): fc for fc in action_fcurves(cam.animation_data.action, cam)}
    loc_curves = [curves.get(("location", k)) for k in range(3)]
    if any(fc is None for fc in loc_curves):
        return 0
    # every frame, linear between them: a name's x is the larger of two values (its place, the
    # edge), which the camera's smooth keys between the establishing shot and the path would not give
    frames = list(range(int(scene.frame_start), int(scene.frame_end) + 1))
    names = [ob for ob in coll.objects if ob.type == "FONT" and ob.get("tv3d_kind") == "lane" and ob.parent is None
             and not ob.hide_render]
    if not names or not frames:
        return 0
    bpy.context.view_layer.update()
    rot = cam.matrix_world.to_3x3()  # a fly-through moves the camera, never turns it
    ortho = cam.data.type == "ORTHO"
    corners = [Vector(c) for c in cam.data.view_frame(scene=scene)]
    left = sorted(corners, key=lambda c: c.x)[:2]
    scale_fc = None  # an orthographic fly-through keys its zoom on the camera's data
    if ortho and cam.data.animation_data is not None and cam.data.animation_data.action is not None:
        scale_fc = next((fc for fc in action_fcurves(cam.data.animation_data.action, cam.data)
                         if fc.data_path == "ortho_scale"), None)
    n_world = (rot @ Vector((1.0, 0.0, 0.0))) if ortho else (rot @ left[0].cross(left[1]))
    if abs(n_world.x) < 1e-9:
        return 0
    for ob in names:
        ob["tv3d_home_x"] = float(ob.get("tv3d_home_x", ob.location.x))
    for f in frames:
        eye = Vector(tuple(fc.evaluate(f) for fc in loc_curves))
        if ortho:
            s = (scale_fc.evaluate(f) if scale_fc is not None else cam.data.ortho_scale) / cam.data.ortho_scale
            d = n_world.dot(eye) + left[0].x * s
        else:
            d = n_world.dot(eye)
        for ob in names:
            y, z = ob.location.y, ob.location.z
            x_edge = (d - n_world.y * y - n_world.z * z) / n_world.x
            width = ob.dimensions.x
            ob.location.x = max(float(ob["tv3d_home_x"]), x_edge + width + STICKY_MARGIN * ob.data.size)
            ob.keyframe_insert("location", index=0, frame=f)
    for ob in names:
        interpolate(ob, "location", "LINEAR")
    return len(names)
