"""The thread view's growth: the focused thread's icicle grows as the icicle's
growth does (`animate._growth`, its own time scale ``wall_world_per_us``), and the rings of
every thread grow along their arcs with the same clock.

Data, as every animation here: per face ``t_first`` (µs from the window's start: the start
of the face's sector) and per vertex ``t_vertex``, ``ring_r``, ``arc_a0``, ``arc_dadt``
(where the vertex stands on its lane's time → angle map), written once with
foreach_set; a ``TV3D_arc_growth`` Geometry Nodes modifier (`anim_nodes.arc_growth_group`)
deletes the sectors not yet started and moves every vertex later than "now" along its
circle to now's angle, so a sector's far end travels with the clock.  The hand-off
curves appear when their waits end (`anim_handoffs`), and a ring call's name once its call
has ended."""
from __future__ import annotations

import numpy as np

from .anim_nodes import arc_growth_group, set_inputs
from .meshobj import set_float_attribute

ARC_MODIFIER = "TraceVis3D arc growth"
GROWN_SECTORS = ("ring", "ring_clusters", "wait_markers")


def sector_times(verts, quads, sector, origin, lane_angles, span: float, stretch: float = 1.0) -> dict:
    """Where each vertex of a ring mesh stands in time (bpy-free).

    ``verts`` (nv, 3) world positions of a `SectorLayer` in the front plane (local
    (x, y, h) → (x, h, −y), widened ``stretch`` times along x, moved by ``origin``), ``quads``
    (nf, 4), ``sector`` (nf,) the
    sector of each face, ``lane_angles`` (lanes, 2) each lane's [a0, a1] (angle at the
    window's start and end), ``span`` the window's length (µs).  A vertex's angle is
    θ = atan2(−(z − oz), (x − ox) / stretch) (unwrapped next to the lanes' angles), its lane the one
    whose angles hold it (the nearest), its time t = (θ − a0) / (a1 − a0) · span clipped to
    [0, span]; a face's ``t_first`` is the least time of its sector's vertices.  Returns
    per vertex t_vertex, ring_r, arc_a0, arc_dadt and per face t_first (float32)."""
    v = np.asarray(verts, np.float64).reshape(-1, 3)
    ox, oz = float(origin[0]), float(origin[2])
    dx, dz = (v[:, 0] - ox) / float(stretch), -(v[:, 2] - oz)
    r = np.hypot(dx, dz)
    theta = np.arctan2(dz, dx)
    la = np.asarray(lane_angles, np.float64).reshape(-1, 2)
    lo, hi = la.min(axis=1), la.max(axis=1)
    mid = 0.5 * (lo.min() + hi.max())
    theta = theta + 2.0 * np.pi * np.round((mid - theta) / (2.0 * np.pi))
    order = np.argsort(lo, kind="stable")
    k = np.clip(np.searchsorted(lo[order], theta, side="right") - 1, 0, la.shape[0] - 1)
    k2 = np.minimum(k + 1, la.shape[0] - 1)  # in a gap: the nearer of the two neighbours

    def gap(j):
        lane = order[j]
        return np.maximum(lo[lane] - theta, 0.0) + np.maximum(theta - hi[lane], 0.0)

    lane = np.where(gap(k2) < gap(k), order[k2], order[k])
    a0, da = la[lane, 0], la[lane, 1] - la[lane, 0]
    span = max(float(span), 1e-9)
    safe = np.where(np.abs(da) > 1e-12, da, 1.0)
    t = np.clip((theta - a0) / safe * span, 0.0, span)
    q = np.asarray(quads, np.int64).reshape(-1, 4)
    sec = np.asarray(sector, np.int64).reshape(-1)
    first = np.full(int(sec.max()) + 1 if sec.size else 0, np.inf)
    np.minimum.at(first, np.repeat(sec, 4), t[q.ravel()])
    f32 = np.float32
    return {"t_vertex": t.astype(f32), "ring_r": r.astype(f32), "arc_a0": a0.astype(f32),
            "arc_dadt": (da / span).astype(f32), "t_first": first[sec].astype(f32)}


def _mesh_arrays(me) -> tuple:
    nv, nf = len(me.vertices), len(me.polygons)
    verts = np.empty(3 * nv, np.float32)
    me.attributes["position"].data.foreach_get("vector", verts)
    corner = np.empty(len(me.loops), np.int32)
    me.attributes[".corner_vert"].data.foreach_get("value", corner)
    sector = np.empty(nf, np.int32)
    me.attributes["sector_index"].data.foreach_get("value", sector)
    return verts.reshape(nv, 3), corner.reshape(nf, 4), sector


def grow_rings(coll, meta: dict, clock: dict) -> dict:
    """Set up the arc growth on the thread view's ring meshes in ``coll``."""
    obs = [ob for ob in coll.objects if ob.type == "MESH" and ob.get("tv3d_layer") in GROWN_SECTORS
           and len(ob.data.polygons) and "sector_index" in ob.data.attributes]
    if not obs:
        return {"arc_layers": [], "arc_faces": 0}
    origin = meta["ring_origin"]
    span = float(meta["t1"]) - float(meta["t0"])
    group = arc_growth_group()
    n_faces = 0
    for ob in obs:
        me = ob.data
        if any(len(p.vertices) != 4 for p in me.polygons[:1]):
            continue
        verts, quads, sector = _mesh_arrays(me)
        stretch = float(meta.get("ring_stretch", 1.0))
        at = sector_times(verts, quads, sector, origin, meta["lane_angles"], span, stretch)
        for name in ("t_vertex", "ring_r", "arc_a0", "arc_dadt"):
            set_float_attribute(me, name, "POINT", at[name])
        set_float_attribute(me, "t_first", "FACE", at["t_first"])
        mod = ob.modifiers.new(ARC_MODIFIER, "NODES")
        mod.node_group = group
        set_inputs(mod, dict(clock, **{"Centre X": float(origin[0]), "Centre Z": float(origin[2]),
                                       "Stretch X": stretch}))
        ob.modifiers.move(len(ob.modifiers) - 1, 0)
        n_faces += len(me.polygons)
    return {"arc_layers": sorted(ob["tv3d_layer"] for ob in obs), "arc_faces": n_faces}


def ring_label_times(labels, call_end, t0: float) -> np.ndarray:
    """When each ring call's name shows (µs from the window's start): when its call has
    ended (its sector is whole)."""
    end = np.asarray(call_end, np.float64)
    ci = np.array([int(ob["call_index"]) for ob in labels], np.int64)
    return end[np.clip(ci, 0, len(end) - 1)] - float(t0)


__all__ = ["ARC_MODIFIER", "grow_rings", "ring_label_times", "sector_times"]
