"""Details on demand: the call under the mouse, found through the ``call_index`` attribute.

The boxes are read back from the point clouds (``position`` = box centre, ``tv_scale`` =
box size, ``call_index``) and intersected with the view ray by a vectorised slab test
(ray–axis-aligned box), so picking needs neither the evaluated instances nor a BVH.
"""
from __future__ import annotations

import numpy as np

import bpy

from ..model import Trace
from .writer import is_layer_object


def _layer_arrays(ob):
    pc = ob.data
    A = pc.attributes
    if hasattr(A, "domain_size"):
        n = A.domain_size("POINT")
    else:
        n = len(pc.vertices) if ob.type == "MESH" else len(pc.points)
    pos = np.empty(n * 3, np.float32)
    A["position"].data.foreach_get("vector", pos)
    sc = np.empty(n * 3, np.float32)
    A["tv_scale"].data.foreach_get("vector", sc)
    ci = np.empty(n, np.int32)
    A["call_index"].data.foreach_get("value", ci)
    return pos.reshape(n, 3), sc.reshape(n, 3), ci


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


def pick_ray(origin, direction, collection_name: str = "TraceVis3D") -> int | None:
    """The call index of the nearest box hit by the world-space ray, or None."""
    coll = bpy.data.collections.get(collection_name)
    if coll is None:
        return None
    best_t, best = np.inf, None
    for ob in coll.objects:
        if not is_layer_object(ob) or "call_index" not in ob.data.attributes:
            continue
        if "tv_scale" not in ob.data.attributes:
            continue
        inv = ob.matrix_world.inverted()
        o = np.array(inv @ _vec(origin))
        d = np.array(inv.to_3x3() @ _vec(direction))
        pos, sc, ci = _layer_arrays(ob)
        if ci.size == 0:
            continue
        t = ray_box_hits(o, d, pos.astype(np.float64), sc.astype(np.float64))
        t[ci < 0] = np.inf  # legend swatches are no calls
        k = int(np.argmin(t))
        if t[k] < best_t:
            best_t, best = float(t[k]), int(ci[k])
    return best


def _vec(v):
    from mathutils import Vector

    return Vector(tuple(float(x) for x in v))


def pick_call(context, mouse_region_xy) -> int | None:
    """The call under the mouse in a 3D viewport region, or None."""
    from bpy_extras import view3d_utils

    region = context.region
    rv3d = context.region_data if getattr(context, "region_data", None) is not None else \
        getattr(context.space_data, "region_3d", None)
    if region is None or rv3d is None:
        return None
    xy = tuple(float(x) for x in mouse_region_xy)
    origin = view3d_utils.region_2d_to_origin_3d(region, rv3d, xy)
    direction = view3d_utils.region_2d_to_vector_3d(region, rv3d, xy)
    return pick_ray(origin, direction)


def describe_call(trace: Trace, i: int) -> dict:
    """Name, thread, start, duration, self time, depth and args of call ``i``."""
    i = int(i)
    if not 0 <= i < len(trace):
        raise IndexError(f"call index {i} outside 0..{len(trace) - 1}")
    t = int(trace.thread[i])
    p = int(trace.parent[i])
    dur = float(trace.end[i] - trace.start[i])
    child_sum = float((trace.end - trace.start)[i + 1: trace.end_index[i]][
        trace.parent[i + 1: trace.end_index[i]] == i].sum())
    return {
        "index": i,
        "name": trace.function_names[trace.func[i]],
        "thread": trace.thread_names[t] if t < len(trace.thread_names) else str(t),
        "start": float(trace.start[i]),
        "duration": dur,
        "self_time": dur - child_sum,
        "depth": int(trace.depth[i]),
        "parent": None if p < 0 else trace.function_names[trace.func[p]],
        "args": trace.args_of(i),
    }
