"""Details on demand: the call (or the match) under the mouse.

Boxes are read back from the point clouds (``position`` = box centre, ``tv_scale`` = box
size, ``call_index``, and in a comparison ``side``: 0 = A, 1 = B) and intersected with the
view ray by a vectorised slab test (ray–axis-aligned box).  The comparison's tubes are one
mesh whose faces carry their match's attributes (``match_index``, ``call_a``, ``call_b``,
``similarity``, ``dt``, ``ratio``, ...): a slab test against each tube's bounding box
finds the candidates, a ray–triangle test (Möller–Trumbore) on their faces the hit.  So
picking needs neither the evaluated instances nor a BVH.  `pick_ray_detail` says what was
hit; `describe_call`, `describe_box` and `describe_match` turn it into text fields.
"""
from __future__ import annotations

import numpy as np

import bpy

from ..model import Trace
from .compat import positions_and_scales
from .raycast import mesh_attribute, mesh_faces, vec, world_ray, ray_box_hits, ray_triangle_hits  # noqa: F401
from .writer import is_layer_object


#: the per-face attributes of a tube that a pick reports
TUBE_FIELDS = {"match_index": np.int32, "call_a": np.int32, "call_b": np.int32, "similarity": np.float32,
               "dt": np.float32, "ratio": np.float32, "group": np.int32, "merged_pairs": np.int32,
               "moved": np.int32, "src_element": np.int32, "dst_element": np.int32, "calls": np.int32}


def layer_arrays(ob):
    """(positions (n, 3), scales (n, 3), call indices (n,)) of an instance layer's points, read with foreach_get."""
    pc = ob.data
    A = pc.attributes
    if hasattr(A, "domain_size"):
        n = A.domain_size("POINT")
    else:
        n = len(pc.vertices) if ob.type == "MESH" else len(pc.points)
    pos, sc = positions_and_scales(ob, n)
    ci = np.empty(n, np.int32)
    A["call_index"].data.foreach_get("value", ci)
    return pos, sc, ci


def _pick_boxes(ob, origin, direction):
    """(distance, hit dict) of the nearest box of an instance layer hit by the ray."""
    o, d = world_ray(ob, origin, direction)
    pos, sc, ci = layer_arrays(ob)
    if ci.size == 0:
        return np.inf, None
    t = ray_box_hits(o, d, pos.astype(np.float64), sc.astype(np.float64))
    kind = mesh_attribute(ob.data, "tv3d_kind", ci.size, np.int32)  # counters, instants, async (side tracks)
    element = mesh_attribute(ob.data, "element_index", ci.size, np.int32)  # EXTRAVIS: hierarchy elements
    if kind is None:
        t[(ci < 0) & (element < 0 if element is not None else True)] = np.inf  # legend swatches are no calls
    k = int(np.argmin(t))
    if not np.isfinite(t[k]):
        return np.inf, None
    if kind is not None:  # a counter track's column, an instant (`layout.side_tracks`)
        return float(t[k]), side_hit(int(kind[k]), int(mesh_attribute(ob.data, "side_index", ci.size, np.int32)[k]),
                                     ob.name)
    side = mesh_attribute(ob.data, "side", ci.size, np.int32)
    hit = {"kind": "box", "call": int(ci[k]), "side": None if side is None else int(side[k]), "object": ob.name}
    if element is not None:
        hit["element_index"] = int(element[k])
    return float(t[k]), hit


def _pick_image(ob, origin, direction):
    """(distance, hit) of an image quad (the EXTRAVIS mural): the ray meets its plane inside
    the quad; the pixel line says the call (``row_calls``: a call per line, top first)."""
    o, d = world_ray(ob, origin, direction)
    verts, quads = mesh_faces(ob.data)
    if quads.shape[0] != 1 or "row_calls" not in ob:
        return np.inf, None
    bl, br, tr, tl = (verts[quads[0, j]].astype(np.float64) for j in range(4))
    u, v = br - bl, bl - tl  # along a row, down the image
    n = np.cross(u, v)
    den = float(np.dot(n, d))
    if abs(den) < 1e-12:
        return np.inf, None
    t = float(np.dot(n, tl - o)) / den
    p = o + t * d - tl
    a, b = float(np.dot(p, u) / np.dot(u, u)), float(np.dot(p, v) / np.dot(v, v))
    if t <= 0 or not (0.0 <= a <= 1.0 and 0.0 <= b <= 1.0):
        return np.inf, None
    rows = np.asarray(ob["row_calls"])
    line = min(int(b * rows.size), rows.size - 1)
    return t, {"kind": "box", "call": int(rows[line]), "side": None, "object": ob.name, "line": line}


CHUNK_FACES = 50_000  # tube faces tested in one vectorised step
_TUBE_CACHE: dict = {}  # the last tube mesh's faces and per-tube bounds (reading them costs ~0.7 s at 1M faces)


def _tube_geometry(me):
    """(corners (nf, 4, 3) float32, first face of each tube, its end, bounds lo, hi, the
    tube's index) of a tube mesh (a tube is a run of faces with one ``tube_index``), or
    None; kept for the last mesh (by its address and size: a rebuilt scene has a new mesh)."""
    nf = len(me.polygons)
    key = (me.as_pointer(), len(me.vertices), nf)
    if key in _TUBE_CACHE:
        return _TUBE_CACHE[key]
    match = mesh_attribute(me, "tube_index", nf, np.int32)
    if nf == 0 or len(me.loops) != 4 * nf or match is None:
        return None
    verts, quads = mesh_faces(me)
    starts = np.r_[0, np.flatnonzero(match[1:] != match[:-1]) + 1]
    corners = verts[quads]
    lo = np.minimum.reduceat(corners.min(1), starts, axis=0).astype(np.float64)
    hi = np.maximum.reduceat(corners.max(1), starts, axis=0).astype(np.float64)
    _TUBE_CACHE.clear()
    _TUBE_CACHE[key] = (corners, starts, np.r_[starts[1:], nf], lo, hi, match[starts])
    return _TUBE_CACHE[key]


def _pick_tubes(ob, origin, direction):
    """(distance, hit dict) of the nearest tube face hit by the ray: the tubes' bounding
    boxes first, then the triangles of the candidate tubes, nearest box first, until no
    box is nearer than the best hit."""
    me = ob.data
    geo = _tube_geometry(me)
    if geo is None:
        return np.inf, None
    corners, starts, ends, lo, hi, run_tube = geo
    o, d = world_ray(ob, origin, direction)
    t_box = ray_box_hits(o, d, (lo + hi) / 2, hi - lo)
    order = np.argsort(t_box)
    order = order[np.isfinite(t_box[order])]
    best_t, best_face = np.inf, -1
    k = 0
    while k < order.size and t_box[order[k]] < best_t:  # nearest boxes first, a chunk at a time
        n_faces = np.cumsum(ends[order[k:]] - starts[order[k:]])
        chunk = order[k: k + max(1, int(np.searchsorted(n_faces, CHUNK_FACES)))]
        k += chunk.size
        chunk = chunk[t_box[chunk] < best_t]
        f = np.concatenate([np.arange(starts[j], ends[j]) for j in chunk])  # a few hundred tubes at most
        c = corners[f].astype(np.float64)
        t = np.minimum(ray_triangle_hits(o, d, c[:, 0], c[:, 1], c[:, 2]),
                       ray_triangle_hits(o, d, c[:, 0], c[:, 2], c[:, 3]))
        j = int(np.argmin(t))
        if t[j] < best_t:
            best_t, best_face = float(t[j]), int(f[j])
    if best_face < 0:
        return np.inf, None
    from .tubes import tube_values

    tube = int(run_tube[np.searchsorted(starts, best_face, side="right") - 1])
    calls = tube_values(me, "call_index")
    if calls is not None:  # a node of a cone tree: a call (its context's first call)
        if calls[tube] < 0:
            return np.inf, None
        return best_t, {"kind": "box", "call": int(calls[tube]), "side": None, "object": ob.name}
    kinds = tube_values(me, "tv3d_kind")
    if kinds is not None:  # an arc of flows (`layout.flow_arcs.flow_arcs`)
        hit = side_hit(int(kinds[tube]), int(tube_values(me, "side_index")[tube]), ob.name)
        flows = tube_values(me, "flows")
        if flows is not None:
            hit["flows"] = int(flows[tube])
        return best_t, hit
    match = tube_values(me, "match_index")
    if match is not None and match[tube] < 0:  # an edge or ring of a cone tree: not pickable
        return np.inf, None
    return best_t, tube_hit(ob, best_face, tube)


def side_hit(kind_code: int, index: int, object_name: str) -> dict:
    """{"kind": "counter" | "flow" | "instant" | "async", "index", "object"}: ``index`` is the
    counter series, the (first) flow, the instant."""
    from ..layout.side_tracks import SIDE_KINDS

    names = {v: k for k, v in SIDE_KINDS.items()}
    return {"kind": names.get(kind_code, "side"), "index": index, "call": -1, "side": None, "object": object_name}


def describe_side(trace: Trace, hit: dict) -> dict:
    """What a picked counter track, flow arc or instant is: its name and where it is."""
    k, i = hit["kind"], int(hit["index"])
    if k == "counter":
        from ..layout.side_tracks import series_bounds, series_label

        b = series_bounds(trace)
        v = trace.counter_value[b[i]:b[i + 1]]
        return {"kind": k, "name": series_label(trace, i), "unit": trace.series_units[i], "samples": int(v.size),
                "min": float(v.min()) if v.size else None, "max": float(v.max()) if v.size else None}
    if k == "flow":
        a, b = int(trace.flow_from[i]), int(trace.flow_to[i])
        cat = trace.flow_cat_names[int(trace.flow_cat[i])] if i < trace.flow_cat.shape[0] else ""
        return {"kind": k, "id": int(trace.flow_id[i]), "category": cat, "from": trace.name(a), "to": trace.name(b),
                "from_call": a, "to_call": b, "flows": int(hit.get("flows", 1))}
    if k == "instant":
        th = int(trace.instant_thread[i])
        return {"kind": k, "name": trace.instant_names[int(trace.instant_name[i])],
                "time_us": float(trace.instant_ts[i]), "thread": trace.thread_names[th] if th >= 0 else None,
                "scope": chr(int(trace.instant_scope[i])), "pid": int(trace.instant_pid[i])}
    if k == "async":
        tr = int(trace.async_track[i])
        return {"kind": k, "name": trace.async_names[int(trace.async_name[i])], "category": trace.async_track_cats[tr],
                "id": trace.async_track_ids[tr], "scope": trace.async_track_scopes[tr],
                "pid": int(trace.async_track_pid[tr]), "start_us": float(trace.async_start[i]),
                "end_us": float(trace.async_end[i]), "depth": int(trace.async_depth[i])}
    return {"kind": k, "index": i}


def tube_hit(ob, face: int, tube: int | None = None) -> dict:
    """The pick of face ``face`` of a tube mesh (``tube``: its tube, when the caller knows
    it): {"kind": "tube", "face", "object", "tube"} and the tube's `TUBE_FIELDS` (stored once
    per tube, `tubes.tube_values`)."""
    from .tubes import tube_values

    me = ob.data
    if tube is None:
        tube = int(mesh_attribute(me, "tube_index", len(me.polygons), np.int32)[face])
    hit = {"kind": "tube", "face": int(face), "object": ob.name, "tube": tube}
    for name in TUBE_FIELDS:
        v = tube_values(me, name)
        if v is not None:
            hit[name] = v[tube].item()
    return hit


def pick_ray_detail(origin, direction, collection_name: str = "TraceVis3D") -> dict | None:
    """What the world-space ray hits first: a box ({"kind": "box", "call", "side": None for
    an icicle, 0 = A / 1 = B in a comparison, "object"}; an EXTRAVIS icicle box adds
    "element_index", a mural row gives its call and "line"), a sector, or a tube ({"kind": "tube", "face",
    "match_index", "call_a", "call_b", "similarity", "dt", "ratio", "group", "merged_pairs",
    "object"}); None when nothing is hit."""
    coll = bpy.data.collections.get(collection_name)
    if coll is None:
        return None
    best_t, best = np.inf, None
    for ob in coll.objects:
        if ob.type == "MESH" and "tv3d_tubes" in ob:
            t, hit = _pick_tubes(ob, origin, direction)
        elif ob.type == "MESH" and ob.get("tv3d_kind") == "image":
            t, hit = _pick_image(ob, origin, direction)
        elif ob.type == "MESH" and ob.get("tv3d_kind") in ("sectors", "curves"):
            from .threads_pick import pick_mesh_layer

            t, hit = pick_mesh_layer(ob, origin, direction)
        elif is_layer_object(ob) and "call_index" in ob.data.attributes and "tv_scale" in ob.data.attributes:
            t, hit = _pick_boxes(ob, origin, direction)
        else:
            continue
        if t < best_t:
            best_t, best = t, hit
    if best is not None:
        best["distance"] = best_t
    band = _pick_memory_band(origin, direction, collection_name)
    if band is not None and band["distance"] < best_t:
        return band
    return best


def _pick_memory_band(origin, direction, collection_name: str) -> dict | None:
    """A band of the memory view the ray hits (`memory_tasks.pick_band`: {"kind": "band",
    "band", "name", "at_ms", "held_bytes", "age_ms", ...}), when the scene holds one."""
    from .memory_tasks import MEMORY_KEY, pick_band

    scene = bpy.context.scene
    if scene is None or not scene.get(MEMORY_KEY):
        return None
    return pick_band(origin, direction, scene=scene, collection_name=collection_name)


def pick_ray(origin, direction, collection_name: str = "TraceVis3D") -> int | None:
    """The call index of the nearest box hit by the world-space ray, or None (also when a
    tube of a comparison is in front: see `pick_ray_detail`)."""
    hit = pick_ray_detail(origin, direction, collection_name)
    return hit["call"] if hit is not None and hit["kind"] in ("box", "sector") and hit["call"] >= 0 else None


def mouse_ray(context, mouse_region_xy):
    """(origin, direction) of the view ray under the mouse in a 3D viewport, or None."""
    from bpy_extras import view3d_utils

    region = context.region
    rv3d = context.region_data if getattr(context, "region_data", None) is not None else \
        getattr(context.space_data, "region_3d", None)
    if region is None or rv3d is None:
        return None
    xy = tuple(float(x) for x in mouse_region_xy)
    return (view3d_utils.region_2d_to_origin_3d(region, rv3d, xy),
            view3d_utils.region_2d_to_vector_3d(region, rv3d, xy))


def pick_call(context, mouse_region_xy) -> int | None:
    """The call under the mouse in a 3D viewport region, or None."""
    ray = mouse_ray(context, mouse_region_xy)
    return None if ray is None else pick_ray(*ray)


def pick_detail(context, mouse_region_xy) -> dict | None:
    """What is under the mouse in a 3D viewport region (`pick_ray_detail`), or None."""
    ray = mouse_ray(context, mouse_region_xy)
    return None if ray is None else pick_ray_detail(*ray)


def describe_call(trace: Trace, i: int) -> dict:
    """Name, thread, start, duration, self time, depth and args of call ``i``; of a merged
    trace (`layout.annotate.XUnit`), its measure in words instead of times: where its call
    path starts on x ("from"), its inclusive and self measure ("12,345 samples")."""
    from ..layout.annotate import x_unit_of

    i = int(i)
    if not 0 <= i < len(trace):
        raise IndexError(f"call index {i} outside 0..{len(trace) - 1}")
    t = int(trace.thread[i])
    p = int(trace.parent[i])
    dur = float(trace.end[i] - trace.start[i])
    child_sum = float((trace.end - trace.start)[i + 1: trace.end_index[i]][
        trace.parent[i + 1: trace.end_index[i]] == i].sum())
    unit = x_unit_of(trace)
    when = {"start": float(trace.start[i]), "duration": dur, "self_time": dur - child_sum} if not unit.merged else \
        {"from": unit.fmt(float(trace.start[i])), "inclusive": unit.total_text(dur),
         "self": unit.total_text(dur - child_sum)}
    return {
        "index": i,
        "name": trace.function_names[trace.func[i]],
        "thread": trace.thread_names[t] if t < len(trace.thread_names) else str(t),
        **when,
        "depth": int(trace.depth[i]),
        "parent": None if p < 0 else trace.function_names[trace.func[p]],
        "args": trace.args_of(i),
    }


SIDE_NAMES = ("A", "B")


def describe_box(trace: Trace, i: int, side: int, run_name: str = "") -> dict:
    """`describe_call` of a box of a comparison, led by the run it belongs to."""
    d = {"side": f"{SIDE_NAMES[side]}{f' ({run_name})' if run_name else ''}"}
    d.update(describe_call(trace, i))
    return d


def _call_line(trace: Trace, i: int) -> tuple:
    """(name, thread, start µs, duration µs) of call ``i``."""
    t = int(trace.thread[i])
    return (trace.function_names[trace.func[i]], trace.thread_names[t] if t < len(trace.thread_names) else str(t),
            float(trace.start[i]), float(trace.end[i] - trace.start[i]))


def describe_match(a: Trace, b: Trace, hit: dict) -> dict:
    """The two boxes a tube joins (name, thread, start, duration of each) and, of the
    strongest match it carries, the similarity, the difference of the start times and the
    duration ratio B ÷ A."""
    out = {"tube": f"match {hit['match_index']}"}
    merged = int(hit.get("merged_pairs", 1) or 1)
    if merged > 1:
        out["tube"] += f" (carries {merged} matches between these two boxes; the strongest shown)"
    for tag, tr, key in (("A", a, "call_a"), ("B", b, "call_b")):
        i = int(hit[key])
        if not 0 <= i < len(tr):
            raise IndexError(f"call {i} of {tag} outside 0..{len(tr) - 1}: the scene does not belong to these traces")
        name, thread, start, dur = _call_line(tr, i)
        out[f"{tag}"] = f"{name} (call {i})"
        out[f"{tag} thread"] = thread
        out[f"{tag} start µs"] = start
        out[f"{tag} duration µs"] = dur
    out["similarity"] = float(hit["similarity"])
    out["Δt µs"] = float(hit["dt"])
    out["duration B ÷ A"] = float(hit["ratio"])
    if "group" in hit:
        out["group"] = int(hit["group"])
    return out
