"""The cone tree's framing stage (bpy-free): the levels' spacing, the tree stretched and turned
until its projection fills the figure's rectangle, the camera of that fit, and which
orientation to keep (`framed_tree`, `oversized_orientation`).  `layout.cone` frames the
candidate shapes (both orientations, eight spins) with these and picks among them."""
from __future__ import annotations

import math

import numpy as np

from ..kernels.cone import cone_positions
from .camera import view_direction
from .spec import CameraSpec

R_MIN, R_MAX = 0.22, 1.0  # sphere radii (world units) of the smallest and the root's time


def axis_down(orientation: str) -> np.ndarray:
    """The tree's axis from a node towards its children's level."""
    return np.array([0.0, 0.0, -1.0]) if orientation == "vertical" else np.array([1.0, 0.0, 0.0])


def orient(pos: np.ndarray, orientation: str) -> np.ndarray:
    """Vertical cone-tree coordinates → the chosen orientation (horizontal: the depth axis
    becomes +x, the base circles stand in y–z planes)."""
    if orientation == "vertical":
        return pos
    out = np.empty_like(pos)
    out[:, 0] = -pos[:, 2]
    out[:, 1] = pos[:, 1]
    out[:, 2] = pos[:, 0]
    return out


#: neighbouring levels' largest spheres are this much of their radii apart, at least
LEVEL_GAP = 0.35
FIT_ROUNDS = 6


def level_spacing(depth: np.ndarray, radius: np.ndarray, n_levels: int) -> np.ndarray:
    """The least distance between stack level d and d + 1 of the tree (d = 0 .. n-1): the
    largest spheres of the two levels do not touch, plus `LEVEL_GAP` of the larger one.
    Deep levels hold small spheres, so a long chain of small calls packs closer than the
    root's level."""
    big = np.zeros(n_levels + 1)
    np.maximum.at(big, np.minimum(depth, n_levels), radius)
    return (1.0 + LEVEL_GAP) * (big[:-1] + big[1:]) + 0.25 * R_MIN


def framed_tree(orientation, pruned, radius, base, angle, n_levels, foot_root, rect, params, spin: float = 0.0,
                k_start: float = 1.0, cache: dict | None = None) -> tuple:
    """The tree laid out in ``orientation`` to fill ``rect`` and its camera:
    ``(orientation, positions, level height, camera, to_camera, turn, score)``.

    The levels are `level_spacing` apart, stretched by one factor k ≥ 1 until the
    projected tree has the aspect of ``rect`` (a few rounds of: fit the camera, measure
    the projected bounding box, scale k by the aspect ratio it misses; vertical trees grow
    taller with k, horizontal ones wider), at most until a level is as far from the next
    as the tree is wide: `kernels.cone_frame.stretch_rounds`, in one kernel call, with the camera
    of the k found (`_rect_camera`).  ``spin``: the whole tree turned about its axis by this angle
    (radians; which subtree stands beside which on the image); ``k_start``: the stretch the
    rounds start from (a similar shape's, so they converge sooner).  The score is the size of
    the root sphere on the image (pixels per world unit): the orientation that shows the
    tree larger wins (unless its spheres come out far too large: `oversized_orientation`).
    ``cache``: what the candidate framings of one tree share (the level spacing, the extent
    points' offsets per orientation, the fit's camera frame per orientation and rectangle),
    filled here."""
    from ..kernels.cone_frame import stretch_rounds
    from .camera import world_per_pixel

    cache = {} if cache is None else cache
    res = tuple(params.resolution)
    aspect = (rect[2] - rect[0]) / max(rect[3] - rect[1], 1.0)
    to_cam = view_direction(params.azimuth, params.elevation)
    if orientation == "horizontal":
        to_cam = view_direction(params.azimuth - 10.0, params.elevation - 8.0)
    width = 2.0 * foot_root + 2.0 * R_MAX
    if "spacing" not in cache:
        cache["spacing"] = level_spacing(pruned.depth, radius, n_levels)
    spacing = cache["spacing"]
    if ("extent", orientation) not in cache:
        cache["extent", orientation] = _extent_offsets(radius, base, pruned.child_ptr, orientation)
    extent = cache["extent", orientation]
    frame_key = ("frame", orientation, tuple(float(v) for v in rect))
    if frame_key not in cache:
        cache[frame_key] = _fit_frame(to_cam, res, rect, params.lens_mm)
    frame = cache[frame_key]
    k_max = max(width / max(float(spacing.max()), 1e-9), 1.0) if spacing.size else 1.0
    vpos, turn = cone_positions(pruned.parent, base, angle, 1.0)
    if spin:
        c, sn = math.cos(spin), math.sin(spin)
        vpos[:, 0], vpos[:, 1] = c * vpos[:, 0] - sn * vpos[:, 1], sn * vpos[:, 0] + c * vpos[:, 1]
        turn = turn + spin
    depth = np.minimum(pruned.depth, n_levels)
    around, has, ring = extent
    k_fit, k, centre, dist, ext = stretch_rounds(
        vpos, depth.astype(np.int64), spacing, orientation == "horizontal", float(k_start), float(k_max), around,
        has.astype(np.int64), ring if ring is not None else np.zeros((16, 0, 3)), *frame, float(aspect), FIT_ROUNDS)
    pos = stretched(vpos, spacing, depth, k_fit, orientation)
    nearest = float((_extent_points(pos, None, None, None, orientation, extent) @ frame[2]).min()
                    - np.dot(centre, frame[2]) + dist)  # the nearest extent point's depth
    cam = _rect_camera(centre, dist, ext, frame[2], res, rect, params.lens_mm, nearest)
    cam.clip_end = max(cam.clip_end, 4.0 * float(np.linalg.norm(np.asarray(cam.location) - np.asarray(cam.target))))
    lh = float(np.median(spacing * k)) if spacing.size else 1.0
    score = R_MAX / float(world_per_pixel(cam, pos[:1], res)[0])
    return orientation, pos, lh, cam, to_cam, turn, score


#: a root sphere of a larger radius than this share of the image's height shows no more, and an
#: orientation that shows it more than OVERSIZE_RATIO times as large as the other is dropped
#: (`oversized_orientation`)
ROOT_SPHERE_MAX_FRAC = 0.045
OVERSIZE_RATIO = 2.0


def oversized_orientation(best_root_px: dict, res) -> str | None:
    """The orientation to keep when the other's best framing shows the root sphere more than
    `OVERSIZE_RATIO` times as large and past `ROOT_SPHERE_MAX_FRAC` of the image's height (radius,
    pixels per orientation in ``best_root_px``), else None (both stay candidates; the larger
    wins as before).  A small, narrow tree (a script's profile: a chain of calls that each take
    the whole run) turned to grow to the right filled the width with its spheres, 163 px against
    68 upright at 1920x1080, touching and covering their names; upright it read well."""
    (_, r1), (o2, r2) = sorted(best_root_px.items(), key=lambda kv: -kv[1])
    cap = ROOT_SPHERE_MAX_FRAC * float(res[1])
    return o2 if r1 > cap and r1 > OVERSIZE_RATIO * r2 else None


def _rect_camera(centre, dist: float, extent: float, f, res, rect, lens_mm: float, nearest: float) -> CameraSpec:
    """The camera `camera.fit_camera_rect` makes of a perspective fit (`kernels.cone_frame._extent_fit`:
    at centre − f · dist looking at centre), its lens shift putting ``rect`` in its place and its
    near clip at `camera.near_clip` of ``nearest`` (the nearest extent point's depth)."""
    from .camera import near_clip

    w, h = res
    m = float(max(w, h))
    x0, y0, x1, y1 = (float(v) for v in rect)
    return CameraSpec(tuple(centre - f * dist), tuple(centre), orthographic=False, lens_mm=lens_mm,
                      sensor_width_mm=36.0, clip_start=near_clip(dist, nearest), clip_end=float(dist + extent * 2),
                      shift_x=(w / 2.0 - 0.5 * (x0 + x1)) / m, shift_y=(0.5 * (y0 + y1) - h / 2.0) / m)


def stretched(vpos, spacing, depth, k: float, orientation) -> np.ndarray:
    """Node positions with the levels ``spacing`` × k apart (`framed_tree`; the same sums
    as `kernels.cone_frame.stretch_rounds`)."""
    offsets = np.concatenate([[0.0], np.cumsum(spacing * k)])
    p = vpos.copy()
    p[:, 2] = -offsets[depth]
    return orient(p, orientation)


def _fit_frame(to_cam, res, rect, lens_mm) -> tuple:
    """``(r, u, f, tx, ty)``: the camera basis and half-tangents `camera.fit_camera_rect`
    fits with (perspective, the default sensor)."""
    from .camera import half_tans, camera_basis

    w, h = res
    x0, y0, x1, y1 = (float(v) for v in rect)
    wc, hc = max(x1 - x0, 1.0), max(y1 - y0, 1.0)
    tx, ty = half_tans((wc, hc), lens_mm * float(max(w, h)) / float(max(wc, hc)), 36.0)
    r, u, f = camera_basis(to_cam)
    return r, u, f, float(tx), float(ty)


def _extent_offsets(radius, base, child_ptr, orientation) -> tuple:
    """What `_extent_points` adds to the node centres: ``(around, has, ring)``: the six
    points ± radius along the axes (6, n, 3), the nodes with a base circle, and 16 points
    on each of their circles (16, len(has), 3)."""
    axes = np.vstack([np.eye(3), -np.eye(3)])
    around = axes[:, None, :] * radius[None, :, None]
    has = np.flatnonzero(np.diff(child_ptr) >= 2)
    ring = None
    if has.size:
        ang = np.linspace(0.0, 2 * math.pi, 16, endpoint=False)
        ring = np.zeros((ang.size, has.size, 3))
        ring[:, :, 0 if orientation == "vertical" else 2] = np.cos(ang)[:, None] * base[has][None, :]
        ring[:, :, 1] = np.sin(ang)[:, None] * base[has][None, :]
    return around, has, ring


def _extent_points(pos, radius, base, child_ptr, orientation, offsets=None) -> np.ndarray:
    """Points whose hull holds every sphere and base circle (for the camera fit);
    ``offsets``: `_extent_offsets` of these arguments when the caller has them."""
    around, has, ring = _extent_offsets(radius, base, child_ptr, orientation) if offsets is None else offsets
    pts = [(pos[None, :, :] + around).reshape(-1, 3)]
    if has.size:
        pts.append((pos[has][None, :, :] + ring).reshape(-1, 3))
    return np.vstack(pts)
