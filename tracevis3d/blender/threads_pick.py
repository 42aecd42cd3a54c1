"""Picking in the thread view: the ring's sectors and the correspondence curves are meshes
whose faces carry their element's attributes (`rings.write_mesh_layer_steps`); a ray–triangle
test (Möller–Trumbore, vectorised over the faces of the objects' bounding-box hits) finds
the face, its attributes say which call (``call_index``) or correspondence (``corr_index``,
``wait_call``, ``release_call``) it draws."""
from __future__ import annotations

import numpy as np

from .raycast import mesh_attribute, mesh_faces, world_ray, ray_box_hits, ray_triangle_hits

#: per-face attributes a pick of a thread-view mesh reports
FIELDS = ("call_index", "corr_index", "wait_call", "release_call", "n_corr", "n_calls", "object", "lane",
          "start_shading", "element_index")


def pick_mesh_layer(ob, origin, direction):
    """(distance, hit dict) of the nearest face of a sector/curve mesh hit by the world ray:
    {"kind": "sector" | "curve", "layer", "face", "object", "call" (the call it draws, or
    -1), and the FIELDS it carries}; (inf, None) when missed."""
    me = ob.data
    o, d = world_ray(ob, origin, direction)
    if len(me.vertices) == 0 or len(me.polygons) == 0:
        return np.inf, None
    co, quads = mesh_faces(me)
    co = co.astype(np.float64)
    lo, hi = co.min(0), co.max(0)
    if not np.isfinite(ray_box_hits(o, d, ((lo + hi) / 2)[None], (hi - lo + 1e-6)[None])[0]):
        return np.inf, None
    c = co[quads]
    t = np.minimum(ray_triangle_hits(o, d, c[:, 0], c[:, 1], c[:, 2]),
                   ray_triangle_hits(o, d, c[:, 0], c[:, 2], c[:, 3]))
    f = int(np.argmin(t))
    if not np.isfinite(t[f]):
        return np.inf, None
    kind = "sector" if ob.get("tv3d_kind") == "sectors" else "curve"
    hit = {"kind": kind, "layer": ob.get("tv3d_layer", ""), "face": f, "object": ob.name}
    nf = len(me.polygons)
    for name in FIELDS:
        a = mesh_attribute(me, name, nf, np.int32)
        if a is not None:
            hit[name] = int(a[f])
    hit["call"] = hit.get("call_index", hit.get("wait_call", -1))
    return float(t[f]), hit
