"""Sub-pixel clusters kept off the boxes around them (bpy-free).

A cluster is drawn at least ``cluster_px`` pixels wide and may then reach over a neighbouring
call or cluster whose height overlaps its own.  Their front faces (y = 0) and tops would be
coplanar there, and which one a render shows depends on the GPU's draw order, which changes
between renders: the same frame rendered twice (or in two ranges of an animation) differs.
`cluster_extents_apart` trims the widened clusters so that no two boxes overlap
(`kernels.box_trim.trim_overlapping_boxes`: calls keep their place; a cluster keeps its larger
part beside a call; of two clusters the earlier keeps its extent); a cluster left with less than half its width
is not drawn (width 0: `layout.geometry.cluster_layer` gives it no faces).
"""
from __future__ import annotations

import numpy as np

#: the gap left between trimmed faces, relative to the figure's length (float32 positions
#: round at about 1.2e-7 of it: 8 roundings)...
GAP = 1e-6
#: ...and at least this many of the depth buffer's steps at the figure (`depth_step`): the facing
#: sides of a trimmed cluster and its neighbour must lie farther apart along a view ray than the
#: depth buffer resolves, or the pixel on their common edge shows whichever side is drawn last.
#: A ray crosses the gap g over g / |x · ray| of depth, and |x · ray| < 0.25 in the icicle's
#: views (the lens's half angle and the camera's yaw): 0.5 step apart is 2 steps along any ray.
#: A gap in depth steps also survives the detail inset's uniform scaling (`layout.inset`),
#: where one relative to its own length shrank ~6x to 5e-6 of the scene's figure: 1-3 pixels of
#: the inset's clusters changed from render to render at 640x360.
GAP_STEPS = 0.5
#: a trimmed cluster narrower than this part of its drawn width is left out (no faces)
KEEP = 0.5


def depth_step(cam) -> float:
    """The depth buffer's resolution (world units) at the camera's target: d² · 2⁻²⁴ / clip_start
    for a perspective camera (a 24-bit or float depth of 1/z between the clip planes, d the
    distance to the target), (clip_end − clip_start) · 2⁻²⁴ for an orthographic one.  With the
    near clip at 1/8 of the nearest point's depth (`layout.camera.near_clip`, ~0.1 of the
    distance) it is ~6e-7 of the distance (at 1e-3 of the distance, before: ~6e-5)."""
    if getattr(cam, "orthographic", False):
        return (float(cam.clip_end) - float(cam.clip_start)) * 2.0 ** -24
    d = float(np.linalg.norm(np.asarray(cam.location, np.float64) - np.asarray(cam.target, np.float64)))
    return d * d * 2.0 ** -24 / max(float(cam.clip_start), 1e-9)


#: `cluster_extents_apart` looks for the calls near clusters this many drawn calls at a time
NEAR_CHUNK = 1 << 20


def cluster_extents_apart(d, cl, frame, t0: float, cx: np.ndarray, cw: np.ndarray, time_length: float,
                          box_fill: float) -> tuple:
    """(centre, width) of the clusters (``cx``, ``cw``: widened) with no overlap of the drawn
    calls that are boxes of their own nor of each other."""
    from ..kernels.box_trim import trim_boxes

    nc = len(cx)
    if nc == 0:
        return cx, cw
    s = cl.single
    lanes = np.unique(cl.lane)
    # only calls of lanes with clusters can meet one (found `NEAR_CHUNK` drawn calls at a time)
    near = np.concatenate([np.flatnonzero(s[a:a + NEAR_CHUNK] & np.isin(d.lane[a:a + NEAR_CHUNK], lanes)) + a
                           for a in range(0, s.size, NEAR_CHUNK)] or [np.zeros(0, np.int64)])
    xs = (d.start[near] - t0) * frame.scale_t
    xe = (d.end[near] - t0) * frame.scale_t
    lo = (1.0 - box_fill) / 2
    hi = (1.0 + box_fill) / 2
    zb, zh = d.bottom[near], d.height[near]
    cb, ch = d.bottom[cl.rep], d.height[cl.rep]
    lane = np.concatenate([d.lane[near], cl.lane])
    x0 = np.concatenate([xs, cx - cw / 2])
    x1 = np.concatenate([xe, cx + cw / 2])
    z0 = np.concatenate([zb + lo * zh, cb + lo * ch])
    z1 = np.concatenate([zb + hi * zh, cb + hi * ch])
    movable = np.zeros(len(lane), np.bool_)
    movable[len(xs):] = True
    gap = max(GAP * max(float(time_length), 1.0), GAP_STEPS * depth_step(frame.cam))
    a0, a1 = trim_boxes(lane, x0, x1, z0, z1, movable, gap)
    a0, a1 = a0[len(xs):], a1[len(xs):]
    width = a1 - a0
    # a sliver left between its neighbours goes: its two sides would lie closer than the depth
    # buffer resolves, and which side a pixel shows would again follow the draw order
    width[width < KEEP * cw] = 0.0
    return (a0 + a1) / 2, width


def call_ends_apart(lane, bottom, height, xs, xe, cam) -> np.ndarray:
    """The calls' right ends (``xe``; ``xs`` their left ends, world x), each moved back to at
    least the gap of `cluster_extents_apart` (`GAP` of the figure's length, `GAP_STEPS` depth
    steps of ``cam``) before the left end of the next call of its row (the same lane, bottom
    and height) that starts within that gap of it: by at most half the call's width.  Two calls
    that touch (a trace's times in whole µs: one ends where the next starts) put the side of the
    one in the plane of the other's, and a pixel along their common edge showed either by the
    GPU's draw order, from render to render (issue 72).  The move is ~1e-6 of the figure's length."""
    xs = np.asarray(xs, np.float64)
    xe = np.asarray(xe, np.float64).copy()
    n = xs.size
    if n < 2:
        return xe
    gap = max(GAP * max(float(xe.max()), 1.0), GAP_STEPS * depth_step(cam))
    order = np.lexsort((xs, np.asarray(height), np.asarray(bottom), np.asarray(lane)))
    a, b = order[:-1], order[1:]
    same = (np.asarray(lane)[a] == np.asarray(lane)[b]) & (np.asarray(bottom)[a] == np.asarray(bottom)[b]) \
        & (np.asarray(height)[a] == np.asarray(height)[b])
    apart = xs[b] - xe[a]
    close = same & (apart < gap) & (apart > -gap)
    i, j = a[close], b[close]
    xe[i] = np.maximum(np.minimum(xe[i], xs[j] - gap), xs[i] + 0.5 * (xe[i] - xs[i]))
    return xe

