"""Frame stage: stack the lanes, choose the level height and fit the camera (bpy-free).

The content (every lane's boxes with their extrusion, the lane names at the left and the
time axis below) must fill the content rectangle that the heads-up display leaves free.
Time always spans ``time_length`` world units; the level height h is the one free size:
the camera is fitted to the rectangle (tight on one side, `camera.fit_camera_rect`) and h
is scaled until the projected content has the rectangle's aspect, so it is tight on both
sides.  A level is never taller than `MAX_LEVEL_FRAC` of the image (shallow traces).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .camera import fit_camera_rect, project, view_direction, world_per_pixel
from .spec import CameraSpec

LANE_GAP_LEVELS = 0.9  # gap between stacked lanes, in levels
LANE_GAPS_TOTAL = 5.4  # the gaps of many lanes together take at most this many levels...
MIN_LANE_GAP_LEVELS = 0.3  # ...each gap at least this many
MAX_LEVEL_FRAC = 0.16  # a level is at most this fraction of the image height
FIT_ROUNDS = 6


@dataclass
class Frame:
    """Where lanes and levels are, and how the camera sees them."""

    h: float  # world height of one level
    z_base: np.ndarray  # base of each lane (lane 0 on top)
    lane_heights: np.ndarray  # world height of each lane
    depth: float  # world depth of the deepest box (lane_depth levels)
    cam: CameraSpec
    to_cam: np.ndarray  # unit vector towards the camera
    px: np.ndarray  # world size of a pixel at each lane
    scale_t: float  # world units per µs
    us_per_px: np.ndarray  # µs per pixel at each lane (along the time axis)
    foreshorten: float  # how much of a time length the camera sees (|x · right|)
    below: tuple | None = None  # (z bottom, z top) of the block under the lanes and the axis
    z_axis: float = 0.0  # the time axis runs at z_axis - 0.25 h
    rooms: np.ndarray | None = None  # (lanes, 2): (z bottom, z top) of the room under each lane (empty: equal)


def lane_gap_levels(n_lanes: int) -> float:
    """The gap between stacked lanes, in levels: `LANE_GAP_LEVELS`, thinner when many lanes
    would spend more than `LANE_GAPS_TOTAL` levels on gaps (17 lanes: 0.34 of a level, not
    14 levels of a 46-level figure), never under `MIN_LANE_GAP_LEVELS`."""
    return max(MIN_LANE_GAP_LEVELS, min(LANE_GAP_LEVELS, LANE_GAPS_TOTAL / max(int(n_lanes) - 1, 1)))


ROOM_MARGIN_LEVELS = 0.3  # between a lane's boxes and the room under it


def lane_geometry(lane_levels, h, params, after_levels=None) -> dict:
    """Base z of each lane (lane 0 on top), stacked with a gap, and their centres;
    ``after_levels``: per lane, a room that many levels tall right under it (a process's
    counter tracks under its last lane), before the gap to the next lane."""
    n = lane_levels.size
    gap = (lane_gap_levels(n) * h) if params.lane_gap is None else float(params.lane_gap)
    heights = lane_levels * h
    after = np.zeros(n) if after_levels is None else np.asarray(after_levels, np.float64) * h
    tops_below = np.cumsum((heights + gap + after)[::-1])[::-1]  # room taken by lane j and all below it
    z_base = np.append(tops_below[1:], 0.0) + after
    centres = np.stack([np.full(n, params.time_length / 2), np.zeros(n), z_base + heights / 2], 1)
    top = z_base - np.minimum(ROOM_MARGIN_LEVELS * h, 0.5 * after)
    rooms = np.stack([np.minimum(z_base - after, top), top], 1)
    return {"z_base": z_base, "heights": heights, "centres": centres, "rooms": rooms}


def below_block(geo, params, h, text_world, below_levels, below_depth: float = 0.0) -> tuple | None:
    """(z bottom, z top) of a block ``below_levels`` levels tall under the lanes and their
    time axis (the thread view's ring, the icicle's side tracks), or None.  ``below_depth``:
    how deep (in lane depths) what stands in the block is: its back edge, seen from above,
    rises by depth × cos(azimuth) × tan(elevation) on screen, so the block starts that much
    lower, under the axis' tick labels and not behind them."""
    if below_levels <= 0:
        return None
    top = float(geo["z_base"].min()) - 0.25 * h - ((2.4 * text_world) if params.show_axes else 0.5 * h)
    el, az = math.radians(float(params.elevation)), math.radians(float(params.azimuth))
    top -= max(below_depth * float(params.lane_depth) * h * abs(math.cos(az)) * math.tan(el), 0.0)
    return (top - below_levels * h, top)


def content_points(geo, lane_ext, params, h, text_world, name_em, below_levels: float = 0.0,
                   below_depth: float = 0.0) -> np.ndarray:
    """Points whose projection must fit the content rectangle: lane boxes, names, axis, and
    the block below them."""
    L = float(params.time_length)
    D = float(params.lane_depth) * h
    n = geo["z_base"].size
    zb, zt = geo["z_base"], geo["z_base"] + geo["heights"]
    back = D * np.maximum(lane_ext, 0.12)
    corners = [np.stack([np.full(n, x), y, z], 1) for x in (0.0, L) for y in (np.zeros(n), back) for z in (zb, zt)]
    pts = list(corners)
    if params.show_axes:
        low = float(zb.min()) - 0.25 * h - 1.6 * text_world
        pts.append(np.array([[0.0, 0.0, low], [L + 1.5 * text_world, 0.0, low]]))
        pts.append(np.stack([np.full(n, -(0.6 + name_em) * text_world), np.zeros(n), zb], 1))
    blk = below_block(geo, params, h, text_world, below_levels, below_depth)
    if blk is not None:
        pts.append(np.array([[x, 0.0, z] for x in (0.0, L) for z in blk]))
    return np.concatenate(pts)


def frame_lanes(lane_levels, lane_ext, rect, params, text_px: float, name_em: float, t0: float, t1: float,
                below_levels: float = 0.0, after_levels=None, below_depth: float = 0.0) -> Frame:
    """Level height, lane bases and camera that make the content fill ``rect`` (pixels);
    ``below_levels``: a block that many levels tall under the lanes and their axis, as wide
    as the time axis (`Frame.below`); ``after_levels``: per lane, a room that many levels
    tall under it (`Frame.rooms`); ``below_depth``: the depth of what stands in the block
    (`below_block`)."""
    res = params.resolution
    H = res[1]
    L = float(params.time_length)
    to_cam = view_direction(params.azimuth, params.elevation)
    x0, y0, x1, y1 = rect
    n_lanes = lane_levels.size
    px_w = L / max(x1 - x0, 1.0)  # world per pixel, refined below
    extra = 0.0 if after_levels is None else float(np.sum(after_levels))
    h = (y1 - y0) * px_w / (lane_levels.sum() + lane_gap_levels(n_lanes) * (n_lanes - 1) + 2.0 + below_levels + extra)
    for _ in range(FIT_ROUNDS):
        h = min(h, MAX_LEVEL_FRAC * H * px_w)
        geo = lane_geometry(lane_levels, h, params, after_levels)
        pts = content_points(geo, lane_ext, params, h, text_px * px_w, name_em, below_levels, below_depth)
        cam = fit_camera_rect(pts, to_cam, res, rect, params.orthographic, params.lens_mm)
        pr = project(cam, pts, res)
        bw, bh = np.ptp(pr[:, 0]), np.ptp(pr[:, 1])
        px_w = float(np.median(world_per_pixel(cam, geo["centres"], res)))
        ratio = ((y1 - y0) / max(bh, 1e-9)) / ((x1 - x0) / max(bw, 1e-9))
        h_new = min(h * ratio, MAX_LEVEL_FRAC * H * px_w)
        if abs(h_new / h - 1.0) < 0.005:
            break
        h = h_new
    geo = lane_geometry(lane_levels, h, params, after_levels)
    cam = fit_camera_rect(content_points(geo, lane_ext, params, h, text_px * px_w, name_em, below_levels,
                                         below_depth), to_cam, res, rect, params.orthographic, params.lens_mm)
    px = world_per_pixel(cam, geo["centres"], res)
    scale_t = L / (t1 - t0)
    right = np.cross(-to_cam, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    foreshorten = max(abs(float(right[0])), 1e-3)
    return Frame(h, geo["z_base"], geo["heights"], float(params.lane_depth) * h, cam, to_cam, px, scale_t,
                 px / foreshorten / scale_t, foreshorten,
                 below_block(geo, params, h, text_px * px_w, below_levels, below_depth),
                 rooms=geo["rooms"] if after_levels is not None else None)
