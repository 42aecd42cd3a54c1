"""Rays against the figure's geometry: boxes (slab test), triangles (Möller–Trumbore), a
ray in an object's space, and the attributes and faces of a mesh as numpy arrays.  Shared
by picking in the icicle (`blender.pick`) and in the thread view (`blender.threads_pick`)."""
from __future__ import annotations

import numpy as np


def vec(v):
    """``v`` as a mathutils Vector of floats."""
    from mathutils import Vector

    return Vector(tuple(float(x) for x in v))


def mesh_attribute(data, name, n, dtype):
    """A named int32/float32 attribute of ``n`` elements, or None."""
    a = data.attributes.get(name)
    if a is None:
        return None
    out = np.empty(n, dtype)
    a.data.foreach_get("value", out)
    return out


def ray_box_hits(origin, direction, centres, sizes) -> np.ndarray:
    """Entry distance t of the ray o + t·d into each axis-aligned box (inf when missed).

    Slab test: for each axis the ray is inside the slab for t in
    [(c - s/2 - o)/d, (c + s/2 - o)/d] (sorted); the box is hit when the latest entry
    is before the earliest exit and the exit is ahead of the origin.
    """
    o = np.asarray(origin, np.float64)
    d = np.asarray(direction, np.float64)
    d = np.where(np.abs(d) < 1e-12, 1e-12, d)
    lo = (centres - sizes / 2 - o) / d
    hi = (centres + sizes / 2 - o) / d
    t_in = np.minimum(lo, hi).max(axis=1)
    t_out = np.maximum(lo, hi).min(axis=1)
    hit = (t_in <= t_out) & (t_out >= 0)
    return np.where(hit, np.maximum(t_in, 0.0), np.inf)


def ray_triangle_hits(origin, direction, v0, v1, v2) -> np.ndarray:
    """Distance t of the ray o + t·d to each triangle (v0, v1, v2) (inf when missed, or
    behind the origin): Möller–Trumbore, vectorised over the triangles."""
    o = np.asarray(origin, np.float64)
    d = np.asarray(direction, np.float64)
    e1, e2 = v1 - v0, v2 - v0
    p = np.cross(d, e2)
    det = np.einsum("ij,ij->i", e1, p)
    ok = np.abs(det) > 1e-18
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    s = o - v0
    u = np.einsum("ij,ij->i", s, p) * inv
    q = np.cross(s, e1)
    v = (q @ d) * inv
    t = np.einsum("ij,ij->i", e2, q) * inv
    hit = ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t >= 0)
    return np.where(hit, t, np.inf)


def world_ray(ob, origin, direction):
    """The ray in the object's local space (numpy arrays)."""
    inv = ob.matrix_world.inverted()
    return np.array(inv @ vec(origin)), np.array(inv.to_3x3() @ vec(direction))


def mesh_faces(me):
    """Vertices (nv, 3) float32 and quads (nf, 4) of a mesh of quads."""
    nv, nf = len(me.vertices), len(me.polygons)
    co = np.empty(nv * 3, np.float32)
    me.vertices.foreach_get("co", co)
    loops = np.empty(len(me.loops), np.int32)
    corner_vert = me.attributes.get(".corner_vert")  # MeshLoop.vertex_index: per element, slow
    if corner_vert is not None:
        corner_vert.data.foreach_get("value", loops)
    else:
        me.loops.foreach_get("vertex_index", loops)
    return co.reshape(nv, 3), loops.reshape(nf, 4)
